// SPDX-License-Identifier: GPL-2.0
/*
 * Minor faults inside a mapping, told apart from a thread's other faults
 * by the address the kernel's software perf event records with each.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accmap_util.h"
#include "fault_count.h"
#include "tap.h"

/* Data pages of the sample buffer: 16-byte samples, a few dozen wanted. */
#define FAULT_RING_PAGES	4

static long thread_minflt(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_minflt;
}

static int open_fault_event(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_ADDR;
	attr.exclude_hv = 1;
	/* pid 0, cpu -1: the calling thread, wherever it runs. */
	return (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

bool fault_count_start(struct fault_count *fc)
{
	static bool said;
	size_t pg = page_size();

	fc->ring_len = (1 + FAULT_RING_PAGES) * pg;
	fc->fd = open_fault_event();
	if (fc->fd >= 0) {
		fc->ring = mmap(NULL, fc->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fc->fd, 0);
		if (fc->ring != MAP_FAILED)
			return true;
		close(fc->fd);
		fc->fd = -1;
	}
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		tap_diag("faults counted by getrusage(), every fault of the thread: perf: %s",
			 strerror(errno));
	/* Last, so that the faults of the lines above are not counted. */
	fc->minflt = thread_minflt();
	return CHECK(fc->minflt >= 0, "getrusage: %s", strerror(errno));
}

/* Copies @len bytes at @pos of the circular @data of @size bytes. */
static void ring_copy(void *to, const uint8_t *data, uint64_t size, uint64_t pos, size_t len)
{
	for (size_t i = 0; i < len; i++)
		((uint8_t *)to)[i] = data[(pos + i) % size];
}

long fault_count_stop(struct fault_count *fc, const void *addr, size_t len, long *others)
{
	struct perf_event_mmap_page *meta = fc->ring;
	uint64_t lo = (uintptr_t)addr, size, head, pos;
	long in = 0, out = 0, lost = 0;
	const uint8_t *data;

	if (fc->fd < 0) {
		if (others)
			*others = 0;
		return thread_minflt() - fc->minflt;
	}
	ioctl(fc->fd, PERF_EVENT_IOC_DISABLE, 0);
	size = meta->data_size ? meta->data_size : FAULT_RING_PAGES * page_size();
	data = (const uint8_t *)fc->ring + (meta->data_offset ? meta->data_offset : page_size());
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	for (pos = meta->data_tail; pos < head; ) {
		struct perf_event_header h;
		uint64_t at;

		ring_copy(&h, data, size, pos, sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(at)) {
			ring_copy(&at, data, size, pos + sizeof(h), sizeof(at));
			if (at - lo < len) {
				if (in < FAULT_COUNT_FIRST)
					fc->first[in] = (size_t)(at - lo);
				in++;
			} else {
				out++;
			}
		} else if (h.type == PERF_RECORD_LOST || h.type == PERF_RECORD_THROTTLE) {
			lost++;
		}
		pos += h.size;
	}
	munmap(fc->ring, fc->ring_len);
	close(fc->fd);
	fc->fd = -1;
	if (others)
		*others = out;
	if (!CHECK(!lost && pos == head, "fault samples lost (%ld records) or unreadable", lost))
		return -1;
	return in;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the accmap selftests; see accmap_util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

uint64_t total_ram_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

int raw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int am_open(void)
{
	int fd = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open(%s): %s", ACCMAP_DEV_PATH, strerror(errno));
	return fd < 0 ? -1 : fd;
}

int am_create(int dev, uint64_t size, uint32_t *id)
{
	struct accmap_create args = { .size = size, .flags = 0, .id = GARBAGE_U32 };
	int ret = raw_ioctl(dev, ACCMAP_IOC_CREATE, &args);

	if (!ret)
		*id = args.id;
	return ret;
}

int am_alloc(int dev, uint32_t id, uint32_t flags, uint16_t tag)
{
	struct accmap_alloc args = {
		.id = id,
		.heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
		.flags = flags,
		.align = 0,
		.tag = tag,
		.pad = 0,
		.heap = GARBAGE_U32,
	};

	return raw_ioctl(dev, ACCMAP_IOC_ALLOC, &args);
}

int am_free(int dev, uint32_t id)
{
	struct accmap_free args = { .id = id, .pad = 0 };

	return raw_ioctl(dev, ACCMAP_IOC_FREE, &args);
}

int am_get_fd(int dev, uint32_t id, uint32_t fd_flags)
{
	struct accmap_get_fd args = {
		.id = id,
		.fd_flags = fd_flags,
		.fd = (int32_t)GARBAGE_U32,
		.pad = 0,
	};
	int ret = raw_ioctl(dev, ACCMAP_IOC_GET_FD, &args);

	return ret ? ret : args.fd;
}

int am_info(int dev, uint32_t id, struct accmap_info *info)
{
	memset(info, GARBAGE_BYTE, sizeof(*info));
	info->id = id;
	info->pad = 0;
	return raw_ioctl(dev, ACCMAP_IOC_INFO, info);
}

bool check_info(int dev, uint32_t id, uint64_t size, uint32_t heap, uint32_t flags,
		uint32_t state, uint16_t tag, const char *when)
{
	struct accmap_info info;
	bool ok = true;
	int ret;

	ret = am_info(dev, id, &info);
	if (!CHECK(ret == 0, "%s: INFO(id %u): %s", when, id, strerror(-ret)))
		return false;
	ok &= CHECK(info.id == id, "%s: INFO changed id %u to %u", when, id, info.id);
	ok &= CHECK(info.pad == 0, "%s: INFO changed pad to %#x", when, info.pad);
	ok &= CHECK(info.size == size, "%s: INFO size %llu, expected %llu", when,
		    (unsigned long long)info.size, (unsigned long long)size);
	ok &= CHECK(info.heap == heap, "%s: INFO heap %#x, expected %#x", when, info.heap, heap);
	ok &= CHECK(info.flags == flags, "%s: INFO flags %#x, expected %#x", when,
		    info.flags, flags);
	ok &= CHECK(info.state == state, "%s: INFO state %#x, expected %#x", when,
		    info.state, state);
	ok &= CHECK(info.tag == tag, "%s: INFO tag %#x, expected %#x", when, info.tag, tag);
	ok &= CHECK(info.pad2 == 0, "%s: INFO pad2 %#x, expected 0", when, info.pad2);
	return ok;
}

bool check_counts(int dev, uint32_t id, uint32_t handle_refs, uint32_t exports, uint32_t maps,
		  uint32_t attachments, const char *when)
{
	struct accmap_info info;
	int ret;

	ret = am_info(dev, id, &info);
	if (!CHECK(ret == 0, "%s: INFO(id %u): %s", when, id, strerror(-ret)))
		return false;
	return CHECK(info.handle_refs == handle_refs && info.exports == exports &&
		     info.maps == maps && info.attachments == attachments,
		     "%s: INFO counts refs %u exports %u maps %u attachments %u, expected %u %u %u %u",
		     when, info.handle_refs, info.exports, info.maps, info.attachments,
		     handle_refs, exports, maps, attachments);
}

int am_buffer(int dev, uint64_t size, uint32_t flags, uint32_t *id, bool want_fd)
{
	int ret;

	ret = am_create(dev, size, id);
	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return -1;
	ret = am_alloc(dev, *id, flags, 0);
	if (!CHECK(ret == 0, "ALLOC(id %u, flags %#x): %s", *id, flags, strerror(-ret)))
		return -1;
	if (!want_fd)
		return 0;
	ret = am_get_fd(dev, *id, O_RDWR | O_CLOEXEC);
	if (!CHECK(ret >= 0, "GET_FD(id %u): %s", *id, strerror(-ret)))
		return -1;
	return ret;
}

void *map_shared(int fd, size_t len, int prot, size_t offset)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)offset);

	if (!CHECK(p != MAP_FAILED, "mmap(len %zu, offset %zu): %s", len, offset,
		   strerror(errno)))
		return NULL;
	return p;
}

static uint8_t pattern_byte(size_t pos, unsigned int seed)
{
	uint32_t x = (uint32_t)pos * 2654435761U + (uint32_t)(pos >> 12) * 40503U + seed * 97U;

	x ^= x >> 15;
	/* Never 0, so a zero page can never pass for a pattern. */
	return (uint8_t)(x | 1);
}

void fill_pattern(void *buf, size_t len, size_t start, unsigned int seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(start + i, seed);
}

size_t find_pattern_mismatch(const void *buf, size_t len, size_t start, unsigned int seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != pattern_byte(start + i, seed))
			return i;
	}
	return len;
}

size_t find_nonzero(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i])
			return i;
	}
	return len;
}

int next_fd(void)
{
	int fd = dup(STDERR_FILENO);

	if (fd >= 0)
		close(fd);
	return fd;
}

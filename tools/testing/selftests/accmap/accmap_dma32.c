// SPDX-License-Identifier: GPL-2.0
/*
 * Memory below 4 GiB (ACCMAP_ALLOC_DMA32): what QUERY_HEAP says each heap
 * has of it, and where the pages of such buffers lie, read from debugfs
 * allocations (above_4g: pages whose frames are at or above 4 GiB; user
 * space has no PFNs of its own, pagemap shows accmap's PFN mappings as
 * holes).  In a guest with RAM above 4 GiB, a buffer allocated without
 * the flag shows the count is not always 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

#define GIB		(1024ULL * 1024 * 1024)
#define MIB		(1024ULL * 1024)

/*
 * Bytes of System RAM at or above 4 GiB in /proc/iomem (root reads the
 * real addresses), or -1 if it cannot be read.
 */
static long long ram_above_4g(void)
{
	unsigned long long start, end;
	long long bytes = 0;
	char line[256], *name;
	FILE *f = fopen("/proc/iomem", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* Top-level ranges only: no leading space. */
		if (line[0] == ' ' || sscanf(line, "%llx-%llx", &start, &end) != 2)
			continue;
		name = strstr(line, " : ");
		if (!name || strncmp(name + 3, "System RAM", 10) || end < 4 * GIB)
			continue;
		bytes += end + 1 - (start > 4 * GIB ? start : 4 * GIB);
	}
	fclose(f);
	return bytes;
}

/* A buffer of @size from @heap_mask with @flags; 0 or -errno. */
static int dma32_buffer(int dev, uint64_t size, uint32_t heap_mask, uint32_t flags,
			uint32_t *id)
{
	struct accmap_alloc a;
	int ret = am_create(dev, size, id);

	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.id = *id;
	a.heap_mask = heap_mask;
	a.flags = flags;
	ret = ioctl(dev, ACCMAP_IOC_ALLOC, &a) ? -errno : 0;
	if (ret)
		am_free(dev, *id);
	return ret;
}

/* debugfs allocations' above_4g of this process's id; ~0ULL if not found. */
static unsigned long long above_4g(uint32_t id)
{
	unsigned long long n = ~0ULL;
	char pid[16], idstr[16];
	struct dbg_table t;
	long r;

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(idstr, sizeof(idstr), "%u", id);
	if (!dbg_read("allocations", &t))
		return n;
	r = dbg_find(&t, "pid", pid, "id", idstr);
	if (CHECK(r >= 0, "debugfs allocations: no row for id %u", id))
		n = dbg_num(&t, (size_t)r, "above_4g");
	dbg_free(&t);
	return n;
}

/*
 * QUERY_HEAP's dma32: the system heap has memory below 4 GiB in every
 * guest here (RAM starts at 0 on amd64, at 1 GiB on arm64), a carveout
 * all or none of its total, the user heap none; a version-2 caller gets
 * nothing written past contiguous.
 */
static void test_query(void)
{
	unsigned char buf[sizeof(struct accmap_heap_info) + 16];
	struct accmap_heap_info hi;
	int dev = am_open();

	if (dev < 0)
		return;
	for (uint32_t heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		int ret = am_query_heap(dev, heap, &hi);

		if (ret == -ENODEV)
			continue;
		if (!CHECK(ret == 0, "QUERY_HEAP %u: %s", heap, strerror(-ret)))
			continue;
		tap_diag("heap %u '%s': total %llu MiB, below 4 GiB %llu MiB", heap, hi.name,
			 (unsigned long long)(hi.total / MIB),
			 (unsigned long long)(hi.dma32 / MIB));
		if (heap == ACCMAP_HEAP_SYSTEM)
			CHECK(hi.dma32 && hi.dma32 <= hi.total,
			      "system heap: dma32 %llu of total %llu",
			      (unsigned long long)hi.dma32, (unsigned long long)hi.total);
		else if (heap == ACCMAP_HEAP_USER)
			CHECK(!hi.dma32, "user heap: dma32 %llu", (unsigned long long)hi.dma32);
		else if (heap != ACCMAP_HEAP_DEVICE)
			CHECK(hi.dma32 == 0 || hi.dma32 == hi.total,
			      "carveout %u: dma32 %llu of total %llu", heap,
			      (unsigned long long)hi.dma32, (unsigned long long)hi.total);
	}

	memset(buf, GARBAGE_BYTE, sizeof(buf));
	memset(&hi, 0, sizeof(hi));
	memcpy(buf, &hi, ACCMAP_HEAP_INFO_SIZE_VER2);
	if (CHECK_OK(ioctl(dev, am_resize_cmd(ACCMAP_IOC_QUERY_HEAP, ACCMAP_HEAP_INFO_SIZE_VER2),
			   buf)))
		for (size_t i = ACCMAP_HEAP_INFO_SIZE_VER2; i < sizeof(buf); i++)
			if (!CHECK(buf[i] == GARBAGE_BYTE, "QUERY_HEAP v2 wrote byte %zu", i))
				break;
	close(dev);
}

/*
 * System-heap buffers with the flag, with each attribute and contiguous:
 * INFO gives the flag back, debugfs finds no page at or above 4 GiB, and
 * the memory reads as zero at both ends.
 */
static void test_alloc_below_4g(void)
{
	static const struct {
		uint32_t flags;
		uint64_t size;
	} cases[] = {
		{ 0, 16 * MIB },
		{ ACCMAP_ALLOC_WRITECOMBINE, 4 * MIB },
		{ ACCMAP_ALLOC_UNCACHED, 4 * MIB },
		{ ACCMAP_ALLOC_CONTIGUOUS, 1 * MIB },
		{ ACCMAP_ALLOC_CONTIGUOUS | ACCMAP_ALLOC_WRITECOMBINE, 256 * 1024 },
	};
	uint64_t word;
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(cases); i++) {
		uint32_t flags = cases[i].flags | ACCMAP_ALLOC_DMA32, id;
		struct accmap_info info;
		unsigned long long n;
		int ret;

		ret = dma32_buffer(dev, cases[i].size, ACCMAP_HEAP_MASK_SYSTEM, flags, &id);
		if (!CHECK(ret == 0, "ALLOC %llu bytes, flags %#x: %s",
			   (unsigned long long)cases[i].size, flags, strerror(-ret)))
			continue;
		if (CHECK_OK(am_info(dev, id, &info)))
			CHECK(info.flags == flags, "INFO flags %#x, allocated with %#x",
			      info.flags, flags);
		n = above_4g(id);
		CHECK(n == 0, "flags %#x: %llu pages at or above 4 GiB", flags, n);
		CHECK(!am_read(dev, id, 0, &word, sizeof(word)) && !word,
		      "flags %#x: first word %#llx", flags, (unsigned long long)word);
		CHECK(!am_read(dev, id, cases[i].size - sizeof(word), &word, sizeof(word)) &&
		      !word, "flags %#x: last word %#llx", flags, (unsigned long long)word);
		am_free(dev, id);
	}
	close(dev);
}

/*
 * With RAM above 4 GiB (the runs that boot 5 GiB guests), a buffer
 * without the flag takes pages there (the page allocator serves the
 * highest zone first), and one with it, of the same size, none: the
 * debugfs count is not a constant.  Without such RAM (checked, not
 * assumed), every buffer's count is 0.  ACCMAP_VM_MEM_MIB, the guest's
 * RAM as the harness gave it, says which to expect: above 4096 MiB some
 * lies above 4 GiB on both architectures (amd64's RAM starts at 0 with a
 * hole below 4 GiB, arm64 virt's at 1 GiB).
 */
static void test_above_4g_counted(void)
{
	const char *mem = getenv("ACCMAP_VM_MEM_MIB");
	unsigned long long plain, low;
	long long high = ram_above_4g();
	uint32_t id, id32;
	int dev;

	if (!CHECK(high >= 0, "cannot read /proc/iomem"))
		return;
	if (mem && *mem)
		CHECK((strtoull(mem, NULL, 10) > 4096) == (high > 0),
		      "the guest has %s MiB of RAM, %lld MiB of it above 4 GiB", mem,
		      high / (long long)MIB);
	dev = am_open();
	if (dev < 0)
		return;
	tap_diag("System RAM at or above 4 GiB: %lld MiB", high / (long long)MIB);
	if (!CHECK_OK(dma32_buffer(dev, 64 * MIB, ACCMAP_HEAP_MASK_SYSTEM, 0, &id)))
		goto out;
	if (!CHECK_OK(dma32_buffer(dev, 64 * MIB, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_DMA32,
				   &id32)))
		goto out_free;
	plain = above_4g(id);
	low = above_4g(id32);
	tap_diag("64 MiB: %llu pages at or above 4 GiB without the flag, %llu with it", plain,
		 low);
	CHECK(low == 0, "with ACCMAP_ALLOC_DMA32: %llu pages at or above 4 GiB", low);
	if (high > 0)
		CHECK(plain > 0 && plain <= 64 * MIB / (unsigned long long)getpagesize(),
		      "without the flag: %llu pages at or above 4 GiB", plain);
	else
		CHECK(plain == 0, "no RAM above 4 GiB, yet %llu pages counted there", plain);
	am_free(dev, id32);
out_free:
	am_free(dev, id);
out:
	close(dev);
}

/*
 * A heap with no memory below 4 GiB (QUERY_HEAP's dma32 0, its total not):
 * the flag from it alone fails with ENXIO, while the same buffer without
 * the flag comes from it, and with the system heap beside it the buffer
 * comes from the system heap, wholly below 4 GiB.  The guests with more
 * than 4 GiB of RAM (ACCMAP_VM_MEM_MIB) have such a carveout above 4 GiB
 * (the harness's high_dt or high_memmap), the others none: every heap
 * with memory has some below 4 GiB.  Elsewhere (ACCMAP_VM_MEM_MIB unset,
 * as on a board) the heaps found are checked, their number is not.
 */
static void test_no_low_memory(void)
{
	const char *mem = getenv("ACCMAP_VM_MEM_MIB");
	const uint32_t wc = ACCMAP_ALLOC_WRITECOMBINE;
	unsigned int found = 0;
	struct accmap_heap_info hi;
	uint32_t id;
	int dev = am_open(), ret;

	if (dev < 0)
		return;
	for (uint32_t heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		/* The carveouts: the device heap's memory is the GPU's. */
		if (heap == ACCMAP_HEAP_SYSTEM || heap >= ACCMAP_HEAP_DEVICE ||
		    am_query_heap(dev, heap, &hi) || !hi.total || hi.dma32)
			continue;
		found++;
		tap_diag("heap %u '%s': %llu MiB, none below 4 GiB", heap, hi.name,
			 (unsigned long long)(hi.total / MIB));
		ret = dma32_buffer(dev, MIB, 1U << heap, wc | ACCMAP_ALLOC_DMA32, &id);
		CHECK(ret == -ENXIO, "heap %u alone: ALLOC with DMA32 gave %d, not -ENXIO", heap,
		      ret);
		if (!ret)
			am_free(dev, id);
		ret = dma32_buffer(dev, MIB, 1U << heap, wc, &id);
		if (CHECK(ret == 0, "heap %u: ALLOC without DMA32: %s", heap, strerror(-ret))) {
			CHECK(above_4g(id) == MIB / (unsigned long long)getpagesize(),
			      "heap %u: a buffer from it is not wholly above 4 GiB", heap);
			am_free(dev, id);
		}
		ret = dma32_buffer(dev, MIB, (1U << heap) | ACCMAP_HEAP_MASK_SYSTEM,
				   wc | ACCMAP_ALLOC_DMA32, &id);
		if (CHECK(ret == 0, "heap %u and the system heap: ALLOC with DMA32: %s", heap,
			  strerror(-ret))) {
			CHECK(above_4g(id) == 0, "heap %u and the system heap: pages above 4 GiB",
			      heap);
			am_free(dev, id);
		}
	}
	/* Outside the test guests (no ACCMAP_VM_MEM_MIB) no count is expected. */
	if (mem && *mem)
		CHECK((strtoull(mem, NULL, 10) > 4096) == (found > 0),
		      "%s MiB of RAM, %u heaps without memory below 4 GiB", mem, found);
	else
		tap_diag("%u heaps without memory below 4 GiB", found);
	close(dev);
}

/* Bad uses: the flag with an unknown one beside it, from the user heap alone. */
static void test_bad_args(void)
{
	uint32_t id;
	int dev = am_open();

	if (dev < 0)
		return;
	CHECK(dma32_buffer(dev, 64 * 1024, ACCMAP_HEAP_MASK_SYSTEM,
			   ACCMAP_ALLOC_DMA32 | (ACCMAP_ALLOC_DMA32 << 1), &id) == -EINVAL,
	      "ALLOC with DMA32 and an unknown flag did not fail with EINVAL");
	CHECK(dma32_buffer(dev, 64 * 1024, 1U << ACCMAP_HEAP_USER, ACCMAP_ALLOC_DMA32, &id) ==
	      -ENODEV, "ALLOC with DMA32 from the user heap alone did not fail with ENODEV");
	close(dev);
}

static const struct tap_test tests[] = {
	{ "query", test_query },
	{ "alloc_below_4g", test_alloc_below_4g },
	{ "above_4g_counted", test_above_4g_counted },
	{ "no_low_memory", test_no_low_memory },
	{ "bad_args", test_bad_args },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Contiguous buffers (ACCMAP_ALLOC_CONTIGUOUS) as user space sees them:
 * every size from 4 KiB to 64 MiB either is one physically contiguous
 * block (its page frames counted by debugfs allocations' runs column:
 * pagemap shows accmap's PFN mappings as holes), zeroed, or fails with
 * ENOMEM; the memory attributes combine;
 * exhaustion and fragmentation never give a buffer that is not one block;
 * INFO, QUERY_HEAP and debugfs account for them, and the older argument
 * sizes of INFO and QUERY_HEAP still work; they count against the
 * RLIMIT_MEMLOCK of the allocating task's user until freed, whoever
 * frees them: children that share the fd (fork, SCM_RIGHTS), allocate
 * and exit leave their buffers charged to their user, so a loop of them
 * stops at the limit, and closing the fd gives everything back.
 *
 * What the guest can give: with a CMA area (/proc/meminfo CmaTotal, Debian's
 * arm64 kernels), blocks up to the area's free size; without (Debian's amd64
 * kernels), blocks up to the page allocator's largest order
 * (/proc/buddyinfo), so larger sizes must fail with ENOMEM.  Each size's
 * outcome is printed as a diagnostic.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "accmap_util.h"
#include "tap.h"

#define KIB	1024ULL
#define MIB	(1024 * KIB)

static const uint64_t sizes[] = { 4 * KIB, 64 * KIB, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB };

/* A value of /proc/meminfo in bytes; -1 if the kernel has no such line. */
static long long meminfo_bytes(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%lld", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* The page allocator's largest block, from the order columns of /proc/buddyinfo. */
static uint64_t buddy_max_block(void)
{
	char line[512], *tok, *save;
	int fields = 0;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, "\n ", &save); tok; tok = strtok_r(NULL, "\n ", &save))
			fields++;
	fclose(f);
	/* "Node 0, zone Normal" and then one count per order. */
	if (fields <= 4)
		return 0;
	return (uint64_t)page_size() << (fields - 4 - 1);
}

/* Bytes the CMA area has free now; 0 without CMA. */
static uint64_t cma_free(void)
{
	long long v = meminfo_bytes("CmaFree");

	return v > 0 ? (uint64_t)v : 0;
}

static bool have_cma(void)
{
	return meminfo_bytes("CmaTotal") > 0;
}

/*
 * CREATE and ALLOC (system heap) of size with flags: 0 and *id, or -errno
 * of the ALLOC (the id is freed then).
 */
static int contig_buffer(int dev, uint64_t size, uint32_t flags, uint32_t *id)
{
	int ret = am_create(dev, size, id);

	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return ret;
	ret = am_alloc(dev, *id, flags, 0);
	if (ret)
		am_free(dev, *id);
	return ret;
}

/* The debugfs allocations row of this process's id, or -1. */
static long alloc_row(const struct dbg_table *t, uint32_t id)
{
	char idstr[16];

	snprintf(idstr, sizeof(idstr), "%u", id);
	for (size_t i = 0; i < t->nrows; i++)
		if (!strcmp(dbg_cell(t, i, "id"), idstr) &&
		    (pid_t)dbg_num(t, i, "pid") == getpid())
			return (long)i;
	return -1;
}

/*
 * Physically contiguous runs of a buffer's memory as debugfs allocations
 * counts them from its page frames; 0 if it cannot be read.  User space
 * has no PFNs of its own to look at: /proc/self/pagemap reports the PFN
 * mappings (VM_PFNMAP) of accmap buffers as holes, and /dev/mem does not
 * read RAM on Debian's kernels (STRICT_DEVMEM).
 */
static unsigned long long buffer_runs(uint32_t id)
{
	unsigned long long runs = 0;
	struct dbg_table t;
	long r;

	if (!dbg_read("allocations", &t))
		return 0;
	r = alloc_row(&t, id);
	if (CHECK(r >= 0, "debugfs allocations: no row for id %u", id))
		runs = dbg_num(&t, r, "runs");
	dbg_free(&t);
	return runs;
}

/*
 * Checks a contiguous buffer: INFO, zero contents through READ and the
 * mmap of its dma-buf, one block by its PFNs, a pattern written through
 * WRITE read back through the mapping.
 */
static void check_contig(int dev, uint32_t id, uint64_t size, uint32_t flags)
{
	struct accmap_info info;
	unsigned long long runs;
	unsigned char *map, *buf;
	size_t bad;
	int fd;

	check_info(dev, id, size, ACCMAP_HEAP_SYSTEM, flags,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_CONTIGUOUS, 0, "contiguous buffer");
	if (CHECK_OK(am_info(dev, id, &info)))
		CHECK(info.vmaps == 0 && info.pad3 == 0, "INFO: vmaps %u pad3 %u, expected 0 0",
		      info.vmaps, info.pad3);

	buf = malloc(size);
	if (!CHECK(buf, "malloc(%llu)", (unsigned long long)size))
		return;
	if (CHECK_OK(am_read(dev, id, 0, buf, size))) {
		bad = find_nonzero(buf, size);
		CHECK(bad == size, "READ: byte %zu of a new contiguous buffer is not zero", bad);
	}

	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
		goto out_free;
	map = map_shared(fd, size, PROT_READ | PROT_WRITE, 0);
	if (!map)
		goto out_close;
	bad = find_nonzero(map, size);
	CHECK(bad == size, "mmap: byte %zu of a new contiguous buffer is not zero", bad);
	runs = buffer_runs(id);
	CHECK(runs == 1, "the %llu bytes are %llu runs of consecutive PFNs, not one block",
	      (unsigned long long)size, runs);

	fill_pattern(buf, size, 0, (unsigned int)size);
	if (CHECK_OK(am_write(dev, id, 0, buf, size))) {
		bad = find_pattern_mismatch(map, size, 0, (unsigned int)size);
		CHECK(bad == size, "mmap: byte %zu differs from what WRITE wrote", bad);
	}
	munmap(map, size);
out_close:
	close(fd);
out_free:
	free(buf);
}

/* ==== sizes ==== */

static void test_sizes(void)
{
	uint64_t maxblock = buddy_max_block(), cma = cma_free();
	bool cma_on = have_cma();
	int dev = am_open();

	if (dev < 0)
		return;
	tap_diag("guest: CMA %s, %llu bytes free; largest page allocator block %llu",
		 cma_on ? "yes" : "no", (unsigned long long)cma, (unsigned long long)maxblock);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++) {
		/* 4 KiB is a 16 KiB buffer on a kernel with 16 KiB pages. */
		uint64_t size = (sizes[i] + page_size() - 1) & ~(uint64_t)(page_size() - 1);
		uint32_t id;
		int ret = contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &id);

		tap_diag("contiguous %llu bytes: %s", (unsigned long long)size,
			 ret ? err_name(ret) : "allocated");
		if (ret) {
			CHECK(ret == -ENOMEM, "ALLOC contiguous %llu: %s, expected ENOMEM or done",
			      (unsigned long long)size, err_name(ret));
			/* Room the guest has must be had. */
			CHECK(size > 1 * MIB && !(cma_on && size < cma / 2),
			      "ALLOC contiguous %llu failed although the guest has room",
			      (unsigned long long)size);
			continue;
		}
		/* Without CMA nothing larger than the allocator's largest block exists. */
		CHECK(cma_on || !maxblock || size <= maxblock,
		      "contiguous %llu allocated without CMA, larger than a %llu block",
		      (unsigned long long)size, (unsigned long long)maxblock);
		check_contig(dev, id, size, ACCMAP_ALLOC_CONTIGUOUS);
		CHECK_OK(am_free(dev, id));
	}
	close(dev);
}

/* ==== attributes ==== */

static void test_attributes(void)
{
	static const uint32_t attrs[] = { 0, ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	for (size_t a = 0; a < TAP_ARRAY_SIZE(attrs); a++) {
		for (uint64_t size = 64 * KIB; size <= 1 * MIB; size *= 16) {
			uint32_t flags = ACCMAP_ALLOC_CONTIGUOUS | attrs[a];
			int ret = contig_buffer(dev, size, flags, &id);

			if (!CHECK(ret == 0, "ALLOC %llu flags %#x: %s", (unsigned long long)size,
				   flags, err_name(ret)))
				continue;
			check_contig(dev, id, size, flags);
			CHECK_OK(am_free(dev, id));
		}
	}
	/* Both attributes are refused with the contiguous flag as without. */
	if (CHECK_OK(am_create(dev, page_size(), &id))) {
		int ret = am_alloc(dev, id, ACCMAP_ALLOC_CONTIGUOUS | ACCMAP_ALLOC_WRITECOMBINE |
				   ACCMAP_ALLOC_UNCACHED, 0);

		CHECK(ret == -EINVAL, "ALLOC contiguous|wc|uncached: %s, expected EINVAL",
		      err_name(ret));
		am_free(dev, id);
	}
	close(dev);
}

/* ==== accounting ==== */

static bool query_system(int dev, struct accmap_heap_info *hi)
{
	return CHECK_OK(am_query_heap(dev, ACCMAP_HEAP_SYSTEM, hi));
}

/* debugfs heaps' used and contiguous of the system heap; false if unreadable. */
static bool dbg_system(unsigned long long *used, unsigned long long *contig)
{
	struct dbg_table t;
	long r;

	if (!dbg_read("heaps", &t))
		return false;
	r = dbg_find(&t, "name", "system", NULL, NULL);
	if (CHECK(r >= 0, "debugfs heaps: no system row")) {
		*used = dbg_num(&t, r, "used");
		*contig = dbg_num(&t, r, "contiguous");
	}
	dbg_free(&t);
	return r >= 0;
}

static void test_accounting(void)
{
	struct accmap_heap_info before, during, after;
	unsigned long long dused, dcontig;
	uint64_t size = 64 * KIB;
	uint32_t id, plain;
	struct dbg_table t;
	int dev = am_open();

	if (dev < 0)
		return;
	if (!query_system(dev, &before))
		goto out;
	if (!CHECK(contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &id) == 0, "ALLOC contiguous"))
		goto out;
	if (am_buffer(dev, size, 0, &plain, false) < 0)
		goto out_free;

	if (query_system(dev, &during)) {
		CHECK(during.used == before.used + 2 * size, "QUERY_HEAP used %llu, expected %llu",
		      (unsigned long long)during.used,
		      (unsigned long long)(before.used + 2 * size));
		CHECK(during.contiguous == before.contiguous + size,
		      "QUERY_HEAP contiguous %llu, expected %llu",
		      (unsigned long long)during.contiguous,
		      (unsigned long long)(before.contiguous + size));
	}
	if (dbg_system(&dused, &dcontig))
		CHECK(dused == during.used && dcontig == during.contiguous,
		      "debugfs heaps: used %llu contiguous %llu, QUERY_HEAP %llu %llu", dused,
		      dcontig, (unsigned long long)during.used,
		      (unsigned long long)during.contiguous);
	/* The plain buffer is not marked contiguous. */
	check_info(dev, plain, size, ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
		   "plain buffer beside a contiguous one");

	if (dbg_read("allocations", &t)) {
		long r = alloc_row(&t, id);

		if (CHECK(r >= 0, "debugfs allocations: no row for id %u", id))
			CHECK(!strcmp(dbg_cell(&t, r, "contiguous"), "yes") &&
			      !strcmp(dbg_cell(&t, r, "vmaps"), "0") &&
			      !strcmp(dbg_cell(&t, r, "runs"), "1"),
			      "debugfs allocations: contiguous '%s' vmaps '%s' runs '%s', expected yes 0 1",
			      dbg_cell(&t, r, "contiguous"), dbg_cell(&t, r, "vmaps"),
			      dbg_cell(&t, r, "runs"));
		r = alloc_row(&t, plain);
		if (CHECK(r >= 0, "debugfs allocations: no row for id %u", plain))
			CHECK(!strcmp(dbg_cell(&t, r, "contiguous"), "no"),
			      "debugfs allocations: plain buffer contiguous '%s'",
			      dbg_cell(&t, r, "contiguous"));
		dbg_free(&t);
	}

	CHECK_OK(am_free(dev, plain));
out_free:
	CHECK_OK(am_free(dev, id));
	if (query_system(dev, &after))
		CHECK(after.used == before.used && after.contiguous == before.contiguous,
		      "after FREE: used %llu contiguous %llu, expected %llu %llu",
		      (unsigned long long)after.used, (unsigned long long)after.contiguous,
		      (unsigned long long)before.used, (unsigned long long)before.contiguous);
out:
	close(dev);
}

/* ==== older argument sizes ==== */

static void test_old_sizes(void)
{
	unsigned char buf[sizeof(struct accmap_heap_info) + 32];
	struct accmap_heap_info hi;
	struct accmap_info info;
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	/* QUERY_HEAP of the first version: up to largest_free, nothing after. */
	memset(buf, GARBAGE_BYTE, sizeof(buf));
	memset(&hi, 0, sizeof(hi));
	hi.heap = ACCMAP_HEAP_SYSTEM;
	memcpy(buf, &hi, ACCMAP_HEAP_INFO_SIZE_VER1);
	if (CHECK_OK(ioctl(dev, am_resize_cmd(ACCMAP_IOC_QUERY_HEAP, ACCMAP_HEAP_INFO_SIZE_VER1),
			   buf))) {
		memcpy(&hi, buf, ACCMAP_HEAP_INFO_SIZE_VER1);
		CHECK(!strcmp(hi.name, "system") && hi.total, "QUERY_HEAP v1: name '%.16s'",
		      hi.name);
		for (size_t i = ACCMAP_HEAP_INFO_SIZE_VER1; i < sizeof(buf); i++)
			if (!CHECK(buf[i] == GARBAGE_BYTE, "QUERY_HEAP v1 wrote byte %zu", i))
				break;
	}
	CHECK(ACCMAP_HEAP_INFO_SIZE_VER2 + 8 == sizeof(struct accmap_heap_info),
	      "struct accmap_heap_info is %zu bytes", sizeof(struct accmap_heap_info));

	/* INFO of the second version (up to attachments) on a contiguous buffer. */
	if (contig_buffer(dev, 64 * KIB, ACCMAP_ALLOC_CONTIGUOUS, &id) == 0) {
		unsigned char ibuf[sizeof(struct accmap_info) + 32];

		memset(ibuf, GARBAGE_BYTE, sizeof(ibuf));
		memset(&info, 0, sizeof(info));
		info.id = id;
		memcpy(ibuf, &info, ACCMAP_INFO_SIZE_VER2);
		if (CHECK_OK(ioctl(dev, am_resize_cmd(ACCMAP_IOC_INFO, ACCMAP_INFO_SIZE_VER2),
				   ibuf))) {
			memcpy(&info, ibuf, ACCMAP_INFO_SIZE_VER2);
			CHECK(info.state == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_CONTIGUOUS) &&
			      info.flags == ACCMAP_ALLOC_CONTIGUOUS,
			      "INFO v2: state %#x flags %#x", info.state, info.flags);
			for (size_t i = ACCMAP_INFO_SIZE_VER2; i < sizeof(ibuf); i++)
				if (!CHECK(ibuf[i] == GARBAGE_BYTE, "INFO v2 wrote byte %zu", i))
					break;
		}
		am_free(dev, id);
	} else {
		CHECK(0, "ALLOC contiguous 64 KiB");
	}
	CHECK(ACCMAP_INFO_SIZE_VER2 + 8 == sizeof(struct accmap_info),
	      "struct accmap_info is %zu bytes", sizeof(struct accmap_info));
	close(dev);
}

/* ==== exhaustion and fragmentation ==== */

/*
 * A size CMA alone can give: twice the page allocator's largest block, so
 * that the fallback cannot serve it, at least 4 MiB.
 */
static uint64_t exhaust_size(void)
{
	uint64_t s = buddy_max_block() * 2;

	return s < 4 * MIB ? 4 * MIB : s;
}

#define EXHAUST_MAX	64

static void test_exhaustion(void)
{
	struct accmap_heap_info before, after;
	uint64_t size = exhaust_size();
	unsigned long long dused, dcontig;
	uint32_t ids[EXHAUST_MAX];
	int dev = am_open(), n = 0, ret = 0;

	if (dev < 0)
		return;
	if (!query_system(dev, &before))
		goto out;
	while (n < EXHAUST_MAX) {
		ret = contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &ids[n]);
		if (ret)
			break;
		check_info(dev, ids[n], size, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_CONTIGUOUS,
			   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_CONTIGUOUS, 0, "exhaustion");
		n++;
	}
	tap_diag("%d contiguous buffers of %llu bytes before %s", n, (unsigned long long)size,
		 err_name(ret));
	CHECK(ret == -ENOMEM, "exhaustion ended with %s, expected ENOMEM", err_name(ret));
	if (!have_cma())
		CHECK(n == 0, "%d buffers of %llu bytes without CMA", n, (unsigned long long)size);
	/* The last one proves its block as the first did. */
	if (n)
		check_contig(dev, ids[n - 1], size, ACCMAP_ALLOC_CONTIGUOUS);
	while (n)
		CHECK_OK(am_free(dev, ids[--n]));
	if (query_system(dev, &after))
		CHECK(after.used == before.used && after.contiguous == before.contiguous,
		      "after freeing all: used %llu contiguous %llu, expected %llu %llu",
		      (unsigned long long)after.used, (unsigned long long)after.contiguous,
		      (unsigned long long)before.used, (unsigned long long)before.contiguous);
	if (dbg_system(&dused, &dcontig))
		CHECK(dused == after.used && dcontig == after.contiguous,
		      "debugfs heaps after freeing all: used %llu contiguous %llu", dused, dcontig);
out:
	close(dev);
}

#define FRAG_PAIRS	64

/*
 * Free blocks of exactly @order in every zone of /proc/buddyinfo; -1 if
 * it cannot be read.
 */
static long buddy_free_blocks(unsigned int order)
{
	char line[512], *tok, *save;
	long total = -1;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int field = 0;

		/* "Node 0, zone Normal" and then one count per order. */
		for (tok = strtok_r(line, "\n ", &save); tok; tok = strtok_r(NULL, "\n ", &save))
			if (field++ == 4 + order)
				total = (total < 0 ? 0 : total) + strtol(tok, NULL, 10);
	}
	fclose(f);
	return total;
}

/*
 * Small plain buffers interleaved with 64 KiB contiguous ones, whose
 * contiguous ones go again, leaving holes; then one large contiguous
 * buffer.  Every allocation must succeed: 64 KiB blocks are plentiful in
 * a fresh guest, and the large one is sized to what is free.  With CMA
 * it is half of what CMA has free (the holes went back to it, and plain
 * buffers never come from CMA); without CMA it is the page allocator's
 * largest block, which may only fail with ENOMEM when /proc/buddyinfo,
 * read right after the failure, shows no free block of that order.
 */
static void test_fragmentation(void)
{
	uint32_t small[FRAG_PAIRS], holes[FRAG_PAIRS], id;
	struct accmap_heap_info before, after;
	unsigned int order = 0;
	uint64_t size;
	int dev = am_open(), ns = 0, nh = 0, ret;

	if (dev < 0)
		return;
	if (!query_system(dev, &before))
		goto out;
	for (int i = 0; i < FRAG_PAIRS; i++) {
		ret = am_buffer(dev, 16 * KIB, 0, &small[ns], false);
		if (!CHECK(ret >= 0, "plain buffer %d of 16 KiB: %s", i, err_name(ret)))
			break;
		ns++;
		ret = contig_buffer(dev, 64 * KIB, ACCMAP_ALLOC_CONTIGUOUS, &holes[nh]);
		if (!CHECK(ret == 0, "contiguous buffer %d of 64 KiB: %s", i, err_name(ret)))
			break;
		check_contig(dev, holes[nh], 64 * KIB, ACCMAP_ALLOC_CONTIGUOUS);
		nh++;
	}
	tap_diag("%d plain buffers of 16 KiB and %d contiguous of 64 KiB between them", ns, nh);
	while (nh)
		CHECK_OK(am_free(dev, holes[--nh]));

	size = have_cma() ? cma_free() / 2 : buddy_max_block();
	if (size < 4 * MIB)
		size = 4 * MIB;
	size &= ~(uint64_t)(page_size() - 1);
	while (((uint64_t)page_size() << order) < size)
		order++;
	ret = contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &id);
	if (ret == -ENOMEM && !have_cma()) {
		long free_blocks = buddy_free_blocks(order);

		tap_diag("fragmented, contiguous %llu bytes: ENOMEM, %ld free blocks of order %u",
			 (unsigned long long)size, free_blocks, order);
		CHECK(free_blocks == 0,
		      "ALLOC of %llu contiguous bytes: ENOMEM while the page allocator has %ld free blocks of order %u",
		      (unsigned long long)size, free_blocks, order);
	} else if (CHECK(ret == 0, "ALLOC of %llu contiguous bytes after fragmentation (%s): %s",
			 (unsigned long long)size, have_cma() ? "half of CMA's free bytes" :
			 "the page allocator's largest block", err_name(ret))) {
		tap_diag("after fragmentation, contiguous %llu bytes: allocated",
			 (unsigned long long)size);
		check_contig(dev, id, size, ACCMAP_ALLOC_CONTIGUOUS);
		CHECK_OK(am_free(dev, id));
	}
	while (ns)
		CHECK_OK(am_free(dev, small[--ns]));
	if (query_system(dev, &after))
		CHECK(after.used == before.used && after.contiguous == before.contiguous,
		      "after fragmentation: used %llu contiguous %llu, expected %llu %llu",
		      (unsigned long long)after.used, (unsigned long long)after.contiguous,
		      (unsigned long long)before.used, (unsigned long long)before.contiguous);
out:
	close(dev);
}

/* ==== importer vmaps ==== */

static void test_vmaps_no_importer(void)
{
	struct accmap_info info;
	int dev = am_open(), fd;
	uint32_t id;
	void *map;

	if (dev < 0)
		return;
	/*
	 * No in-kernel importer that vmaps is reachable here without V4L2
	 * (vgem does not vmap what it imports): the V4L2 tier checks a
	 * held vmap with vivid.  Here: an export and a CPU mapping are not
	 * counted as vmaps.
	 */
	fd = am_buffer(dev, 64 * KIB, ACCMAP_ALLOC_CONTIGUOUS, &id, true);
	if (fd < 0)
		goto out;
	map = map_shared(fd, 64 * KIB, PROT_READ, 0);
	if (CHECK_OK(am_info(dev, id, &info)))
		CHECK(info.vmaps == 0 && info.maps == 1 && info.exports == 1,
		      "INFO: vmaps %u maps %u exports %u, expected 0 1 1", info.vmaps, info.maps,
		      info.exports);
	if (map)
		munmap(map, 64 * KIB);
	close(fd);
	am_free(dev, id);
out:
	close(dev);
}

/* VmPin of this process (its pinned_vm) in bytes, or -1. */
static long long vmpin_bytes(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/*
 * The child of test_memlock(): no CAP_IPC_LOCK, RLIMIT_MEMLOCK 1.5 MiB.
 * The charge is its user's, not its mm's: VmPin stays where it was.
 */
static void memlock_child(void)
{
	const uint64_t size = MIB, limit = 3 * MIB / 2;
	struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
	long long base, now;
	uint32_t a, b;
	int dev = am_open(), ret;

	if (dev < 0)
		return;
	/* nobody: no CAP_IPC_LOCK, so the limit holds; the open fd stays usable. */
	if (!CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0 && setgid(65534) == 0 &&
		   setuid(65534) == 0, "setrlimit/setgid/setuid: %s", strerror(errno)))
		goto out;
	base = vmpin_bytes();
	if (!CHECK(base >= 0 && contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &a) == 0,
		   "VmPin %lld, or a contiguous 1 MiB under a 1.5 MiB limit refused", base))
		goto out;
	now = vmpin_bytes();
	CHECK(now == base, "VmPin %lld after a contiguous 1 MiB, %lld before: charged to the mm",
	      now, base);
	ret = contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &b);
	CHECK(ret == -ENOMEM, "a second 1 MiB past RLIMIT_MEMLOCK: %s, expected ENOMEM",
	      ret ? strerror(-ret) : "allocated");
	if (!ret)
		am_free(dev, b);
	CHECK(vmpin_bytes() == now, "VmPin %lld after the refused ALLOC, %lld before",
	      vmpin_bytes(), now);
	/* Plain buffers are the memory cgroup's business, not the limit's. */
	ret = contig_buffer(dev, size, 0, &b);
	CHECK(ret == 0 && vmpin_bytes() == now, "a plain 1 MiB: %s, VmPin %lld",
	      ret ? strerror(-ret) : "allocated", vmpin_bytes());
	if (!ret)
		am_free(dev, b);
	CHECK_OK(am_free(dev, a));
	CHECK(vmpin_bytes() == base, "VmPin %lld after FREE, %lld before the ALLOC",
	      vmpin_bytes(), base);
	ret = contig_buffer(dev, size, ACCMAP_ALLOC_CONTIGUOUS, &a);
	CHECK(ret == 0, "1 MiB again after the FREE: %s", strerror(-ret));
	if (!ret)
		am_free(dev, a);
out:
	close(dev);
}

/*
 * Contiguous memory is not charged to a memory cgroup (CMA pages cannot
 * be): it counts against RLIMIT_MEMLOCK in its user's locked memory
 * instead, until it is freed.
 */
static void test_memlock(void)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		return;
	if (!pid) {
		memlock_child();
		fflush(stdout);
		_exit(tap_failed() ? 1 : 0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status),
	      "the unprivileged child failed (status %#x)", status);
}

/* ==== children sharing the fd ==== */

/*
 * The test (root) holds the fd; each of LOOP_ROUNDS children becomes
 * nobody (no CAP_IPC_LOCK, RLIMIT_MEMLOCK LOOP_LIMIT, in a 256 MiB memory
 * cgroup where the guest has one), gets the fd (by fork, or by SCM_RIGHTS
 * alone), allocates LOOP_SIZE contiguous and exits, its buffer left to
 * the fd.  The buffers stay charged to nobody: LOOP_LIMIT / LOOP_SIZE of
 * them succeed, then ENOMEM, never more than the limit in use.  Charged
 * to a process's mm instead, each child would start from zero.
 */
#define LOOP_SIZE	(256 * KIB)
#define LOOP_LIMIT	(1 * MIB)
#define LOOP_ROUNDS	10
#define LOOP_FAILED	255
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_LIMIT	"268435456"

static bool cg_write_file(const char *cg, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val);
}

/*
 * A memory cgroup of 256 MiB for the children (cgroup v2 at CG_ROOT), in
 * @cg; false, said as a diagnostic, where the guest has none: the bound
 * under test is RLIMIT_MEMLOCK, the cgroup only shows it holds there too.
 */
static bool cg_make(char *cg, size_t len)
{
	struct statfs st;

	if (statfs(CG_ROOT, &st) || (unsigned long)st.f_type != CGROUP2_SUPER_MAGIC ||
	    !cg_write_file(CG_ROOT, "cgroup.subtree_control", "+memory")) {
		tap_diag("no cgroup v2 memory controller at %s: children stay in the root cgroup",
			 CG_ROOT);
		return false;
	}
	snprintf(cg, len, "%s/accmap-contig-%d", CG_ROOT, getpid());
	rmdir(cg);
	if (!CHECK(mkdir(cg, 0755) == 0, "mkdir %s: %s", cg, strerror(errno)))
		return false;
	return CHECK(cg_write_file(cg, "memory.max", CG_LIMIT), "memory.max of %s", cg);
}

static void cg_unmake(const char *cg)
{
	for (int i = 0; i < 100 && rmdir(cg); i++)
		usleep(20000);
	CHECK(access(cg, F_OK), "rmdir %s: %s", cg, strerror(errno));
}

/*
 * A loop child: into @cg (if any), nobody, then, with the fd it
 * inherited or (@sock >= 0) only the one it receives over @sock, one
 * ALLOC, left to the fd.  Its exit status: 0, the ALLOC's errno, or
 * LOOP_FAILED.
 */
static int loop_child(const char *cg, int dev, int sock)
{
	struct rlimit rl = { .rlim_cur = LOOP_LIMIT, .rlim_max = LOOP_LIMIT };
	uint32_t id;
	int ret;

	if (cg && !CHECK(cg_write_file(cg, "cgroup.procs", "0"), "cannot enter %s", cg))
		return LOOP_FAILED;
	if (!CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0 && setgid(65534) == 0 &&
		   setuid(65534) == 0, "setrlimit/setgid/setuid: %s", strerror(errno)))
		return LOOP_FAILED;
	if (sock >= 0) {
		close(dev);
		dev = am_recv_fd(sock);
		if (!CHECK(dev >= 0, "no fd over SCM_RIGHTS: %s", strerror(errno)))
			return LOOP_FAILED;
	}
	ret = contig_buffer(dev, LOOP_SIZE, ACCMAP_ALLOC_CONTIGUOUS, &id);
	return ret < 0 ? -ret : 0;
}

/* System heap's contiguous bytes as debugfs heaps shows them; -1 if unreadable. */
static long long dbg_contig(void)
{
	unsigned long long used, contig;

	return dbg_system(&used, &contig) ? (long long)contig : -1;
}

static void loop_test(bool pass_fd)
{
	const unsigned long long bound = LOOP_LIMIT / LOOP_SIZE;
	long long contig0 = dbg_contig(), now = -1;
	unsigned long long ok = 0, refused = 0;
	int dev, sv[2] = { -1, -1 };
	char cg[128] = "";
	bool in_cg;

	if (!CHECK(contig0 >= 0, "debugfs heaps unreadable"))
		return;
	dev = am_open();
	if (dev < 0)
		return;
	in_cg = cg_make(cg, sizeof(cg));
	for (unsigned int i = 0; i < LOOP_ROUNDS; i++) {
		int status = 0, st;
		pid_t pid;

		if (pass_fd &&
		    !CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
			break;
		fflush(stdout);
		pid = fork();
		if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
			break;
		if (!pid) {
			if (pass_fd)
				close(sv[0]);
			st = loop_child(in_cg ? cg : NULL, dev, sv[1]);
			fflush(stdout);
			_exit(st);
		}
		if (pass_fd) {
			CHECK(am_send_fd(sv[0], dev) == 0, "SCM_RIGHTS: %s", strerror(errno));
			close_pair(sv);
		}
		if (!CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status),
			   "child %u: status %#x", i, status))
			break;
		st = WEXITSTATUS(status);
		if (st == LOOP_FAILED)
			break;
		if (st == 0) {
			ok++;
		} else {
			CHECK(st == ENOMEM, "child %u's ALLOC: %s, expected ENOMEM", i,
			      strerror(st));
			refused++;
		}
		now = dbg_contig();
		CHECK(now - contig0 == (long long)(ok * LOOP_SIZE),
		      "after child %u: %lld contiguous bytes in use, %llu allocated", i,
		      now - contig0, ok * LOOP_SIZE);
		CHECK(ok * LOOP_SIZE <= LOOP_LIMIT,
		      "after child %u: children that exited hold %llu KiB, RLIMIT_MEMLOCK %llu KiB",
		      i, ok * LOOP_SIZE / KIB, LOOP_LIMIT / KIB);
	}
	tap_diag("%llu of %u children allocated %llu KiB each, %llu refused", ok, LOOP_ROUNDS,
		 LOOP_SIZE / KIB, refused);
	/* nobody starts with nothing locked: exactly the limit's worth. */
	CHECK(ok == bound && refused == LOOP_ROUNDS - bound,
	      "%llu buffers allocated, %llu refused; expected %llu and %llu", ok, refused, bound,
	      LOOP_ROUNDS - bound);

	/* (c) The fd goes, and every child's buffer with it. */
	close(dev);
	for (int i = 0; i < 100; i++) {
		now = dbg_contig();
		if (now == contig0)
			break;
		usleep(20000);
	}
	CHECK(now == contig0, "%lld contiguous bytes in use after the fd closed, %lld before",
	      now, contig0);
	if (in_cg)
		cg_unmake(cg);
}

/* (a) children forked with the fd. */
static void test_fork_loop(void)
{
	loop_test(false);
}

/* (b) children that get the fd over a unix socket only. */
static void test_scm_rights_loop(void)
{
	loop_test(true);
}

static const struct tap_test tests[] = {
	{ "contig_sizes", test_sizes },
	{ "contig_attributes", test_attributes },
	{ "contig_accounting", test_accounting },
	{ "contig_old_sizes", test_old_sizes },
	{ "contig_exhaustion", test_exhaustion },
	{ "contig_fragmentation", test_fragmentation },
	{ "contig_vmaps_no_importer", test_vmaps_no_importer },
	{ "contig_memlock", test_memlock },
	{ "contig_fork_loop", test_fork_loop },
	{ "contig_scm_rights_loop", test_scm_rights_loop },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

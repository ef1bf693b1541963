// SPDX-License-Identifier: GPL-2.0
/*
 * The cache state and memory attributes of buffers, seen from outside the
 * driver: kprobe events on the kernel functions accmap calls record what
 * the guest's kernel really did.
 *
 * qemu models no CPU cache and no memory type, so reading the buffer back
 * proves nothing here.  What can be checked is the mechanism: the kernel
 * calls that make a block clean, or give pages their memory type, were
 * made, over every page user space gets, with the arguments the hardware
 * needs.  A regression that drops a clean, cleans part of a block, or
 * maps a buffer with two attributes fails these tests on any machine.
 *
 *  arm64 (non-coherent DMA: the DMA API cleans and invalidates):
 *   - handout_cleaned: every page of a cached buffer, from the pool or
 *     fresh from the page allocator, was cleaned to the point of coherency
 *     (arch_sync_dma_for_device(..., DMA_TO_DEVICE)) after its last owner
 *     freed it and before ALLOC returned (markers written into the trace
 *     before the FREE and as ALLOC returns order the events): the clean
 *     comes before the hand-out.  The zeroing before the clean cannot be
 *     seen here: arm64's clear_page() and memset() cannot be probed, and
 *     qemu shows no cache; KUnit's cache model (drivers/accmap/tests,
 *     cache_test.c) checks that order for pooled and fresh blocks.
 *   - one_attribute: the user mapping (vmf_insert_pfn_prot()) and the
 *     kernel's mapping (vmap()) of write-combined and uncached buffers
 *     have the same memory attribute index, Normal non-cacheable; and the
 *     cached linear-map alias of a write-combined buffer, from the system
 *     heap and from a carveout, holds no line when ALLOC returns: every
 *     page was cleaned and then invalidated (DMA_FROM_DEVICE) after ALLOC
 *     began.
 *   - contig_cleaned, carveout_cleaned: the same for a contiguous buffer
 *     and for a cached carveout buffer.
 *   - cache_op_directions: ACCMAP_IOC_CACHE WRITEBACK cleans every page
 *     and invalidates none, INVALIDATE invalidates every page with
 *     DMA_FROM_DEVICE (the direction in which arm64 discards lines) and
 *     cleans none, WRITEBACK_INVALIDATE cleans each page before it
 *     invalidates it.
 *   - importer_syncs: an importer's device (vgem's) gets every page synced
 *     at its mapping, for the CPU at DMA_BUF_IOCTL_SYNC START of a read,
 *     for the device at END, and not for the CPU at START of a write.
 *  x86 (coherent DMA; PAT memory types):
 *   - wc_uc_memtype: ALLOC of a write-combined or uncached buffer sets
 *     the memory type of every one of its pages (set_pages_array_wc/uc),
 *     and its release sets every page back (set_pages_array_wb) before
 *     the pages are reused.
 *
 * Needs root, tracefs and kprobe events (Debian's stock kernels have
 * them).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

#define GROUP	"accmap_cachestate"

static char tracefs[64];

/* Finds (or mounts) tracefs; false if there is none. */
static bool find_tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[96];

	for (size_t i = 0; i < TAP_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", dirs[i]);
		if (!access(path, W_OK)) {
			snprintf(tracefs, sizeof(tracefs), "%s", dirs[i]);
			return true;
		}
	}
	if (!mount("tracefs", dirs[0], "tracefs", 0, NULL)) {
		snprintf(tracefs, sizeof(tracefs), "%s", dirs[0]);
		return true;
	}
	return false;
}

static bool trace_write(const char *file, const char *text, bool append)
{
	char path[160];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return CHECK(false, "open %s: %s", path, strerror(errno));
	n = write(fd, text, strlen(text));
	close(fd);
	return CHECK(n == (ssize_t)strlen(text), "write '%s' to %s: %s", text, path,
		     n < 0 ? strerror(errno) : "short");
}

static void probes_off(void);

/* Adds and enables kprobe events; "name" is "GROUP/name" in the trace. */
static bool probes_on(const char *const *defs, size_t n)
{
	if (!CHECK(find_tracefs(), "no tracefs with kprobe_events"))
		return false;
	/* Leftovers of an earlier run that died. */
	probes_off();
	for (size_t i = 0; i < n; i++)
		if (!trace_write("kprobe_events", defs[i], true))
			return false;
	return trace_write("trace", "", false) &&
	       trace_write("events/" GROUP "/enable", "1", false);
}

static void probes_off(void)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/events/%s/enable", tracefs, GROUP);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "0", 1) != 1)
			tap_diag("could not disable the probes");
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
}

/**
 * struct event - one recorded probe hit, or a marker this test wrote
 * @name: the probe's name, or "mark:" and the marker's text
 * @pid: the task that hit it
 * @arg: its arguments, in the order of the probe's definition
 */
#define EVENT_ARGS	24

struct event {
	char name[32];
	long pid;
	uint64_t arg[EVENT_ARGS];
};

/* The pid of "comm-pid   [cpu] ...": the digits after the last '-' before " [". */
static long event_pid(const char *line)
{
	const char *cpu = strstr(line, " ["), *p;

	if (!cpu)
		return -1;
	while (cpu > line && cpu[-1] == ' ')
		cpu--;
	for (p = cpu; p > line && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	return p < cpu && p > line && p[-1] == '-' ? strtol(p, NULL, 10) : -1;
}

/*
 * Reads every recorded event, in order, into a malloc'ed array.  Lines
 * look like "comm-pid [cpu] flags ts: name: (fn+0x0/0x..) a=0x1 b=0x2",
 * and a marker's "comm-pid [cpu] flags ts: tracing_mark_write: text".
 */
static size_t read_events(struct event **out)
{
	char path[160], line[512];
	struct event *ev = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", tracefs);
	f = fopen(path, "r");
	if (!CHECK(f, "open %s: %s", path, strerror(errno))) {
		*out = NULL;
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ": ("), *mark = strstr(line, "tracing_mark_write: ");
		char *name, *colon, text[sizeof(ev->name)];
		size_t a = 0;

		if (line[0] == '#' || (!p && !mark))
			continue;
		if (mark) {
			mark[strcspn(mark, "\n")] = '\0';
			snprintf(text, sizeof(text), "mark:%.26s",
				 mark + strlen("tracing_mark_write: "));
		} else {
			*p = '\0';
			colon = strrchr(line, ' ');
			name = colon ? colon + 1 : line;
			snprintf(text, sizeof(text), "%.31s", name);
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				break;
		}
		memset(&ev[n], 0, sizeof(ev[n]));
		memcpy(ev[n].name, text, sizeof(text));
		ev[n].pid = event_pid(line);
		for (p = mark ? NULL : strchr(p + 1, '='); p && a < EVENT_ARGS;
		     p = strchr(p + 1, '='))
			/* A fetch that faulted reads "(fault)": never a value. */
			ev[n].arg[a++] = p[1] == '(' ? ~0ULL : strtoull(p + 1, NULL, 0);
		n++;
	}
	fclose(f);
	if (!CHECK(ev || !n, "out of memory reading the trace"))
		n = 0;
	*out = ev;
	return n;
}

/* A buffer of @len bytes mapped (and every page touched); its dma-buf fd. */
static void *map_buffer(int dev, size_t len, uint32_t flags, int prot, uint32_t *id,
			int *fd)
{
	uint8_t *p;

	*fd = am_buffer(dev, len, flags, id, true);
	if (*fd < 0)
		return NULL;
	p = map_shared(*fd, len, prot, 0);
	if (!p)
		return NULL;
	for (size_t off = 0; off < len; off += page_size())
		__atomic_load_n(p + off, __ATOMIC_RELAXED);
	return p;
}

#if defined(__aarch64__)

#define DMA_BIDIRECTIONAL	0
#define DMA_TO_DEVICE		1
#define DMA_FROM_DEVICE		2

/*
 * The probes of the clean and invalidate tests: every clean
 * (arch_sync_dma_for_device) and invalidate (arch_sync_dma_for_cpu) the
 * DMA API makes, with its direction; every PFN a user fault inserts.
 */
static const char *const sync_probes[] = {
	"p:" GROUP "/sync arch_sync_dma_for_device paddr=%x0:x64 size=%x1:x64 dir=%x2:s32",
	"p:" GROUP "/inval arch_sync_dma_for_cpu paddr=%x0:x64 size=%x1:x64 dir=%x2:s32",
	"p:" GROUP "/insert vmf_insert_pfn_prot addr=%x1:x64 pfn=%x2:x64",
};

/* Writes a marker into the trace: read_events() names it "mark:@text". */
static bool trace_mark(const char *text)
{
	return trace_write("trace_marker", text, true);
}

/* The index of the first marker @text, or @nev. */
static size_t find_mark(const struct event *ev, size_t nev, const char *text)
{
	char name[sizeof(ev->name)];

	snprintf(name, sizeof(name), "mark:%s", text);
	for (size_t e = 0; e < nev; e++)
		if (!strcmp(ev[e].name, name))
			return e;
	return nev;
}

/* Whether event @e is the probe @name over [pa, pa + ps) with direction @dir. */
static bool sync_covers(const struct event *e, const char *name, int dir, uint64_t pa)
{
	return !strcmp(e->name, name) && (int)e->arg[2] == dir && e->arg[0] <= pa &&
	       pa + page_size() <= e->arg[0] + e->arg[1];
}

/*
 * A buffer of @len bytes from the heaps in @heap_mask with @flags; then
 * the marker "handout" (ALLOC has returned: user space has the buffer);
 * then every page mapped read-only, a mapping of its own each (MAP_FIXED,
 * in order, into a reservation), so that every page takes a fault of its
 * own through vmf_insert_pfn_prot(); one munmap() of the result unmaps
 * them all.  NULL (reported) on failure.
 */
static void *handout_pagewise(int dev, size_t len, uint32_t heap_mask, uint32_t flags,
			      uint32_t *id, int *fd)
{
	struct accmap_alloc a = { .heap_mask = heap_mask, .flags = flags };
	const size_t ps = page_size();
	uint8_t *p;
	int ret;

	*fd = -1;
	ret = am_create(dev, len, id);
	if (!CHECK(ret == 0, "CREATE(%zu): %s", len, strerror(-ret)))
		return NULL;
	a.id = *id;
	ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
	if (!CHECK(ret == 0, "ALLOC(%zu, heaps %#x, flags %#x): %s", len, heap_mask, flags,
		   strerror(-ret)) || !trace_mark("handout"))
		return NULL;
	*fd = am_get_fd(dev, *id, O_RDWR | O_CLOEXEC);
	if (!CHECK(*fd >= 0, "GET_FD: %s", strerror(-*fd)))
		return NULL;
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!CHECK(p != MAP_FAILED, "reserving %zu bytes: %s", len, strerror(errno)))
		return NULL;
	for (size_t off = 0; off < len; off += ps) {
		if (!CHECK(mmap(p + off, ps, PROT_READ, MAP_SHARED | MAP_FIXED, *fd, (off_t)off) ==
			   p + off, "mmap of page %zu alone: %s", off / ps, strerror(errno))) {
			munmap(p, len);
			return NULL;
		}
		__atomic_load_n(p + off, __ATOMIC_RELAXED);
	}
	return p;
}

/* The physical address of each page of @p (@len bytes) from the faults recorded. */
static bool fault_pas(const struct event *ev, size_t nev, const uint8_t *p, size_t len,
		      uint64_t *pa)
{
	const size_t ps = page_size();

	memset(pa, 0, len / ps * sizeof(*pa));
	for (size_t e = 0; e < nev; e++) {
		uint64_t addr = ev[e].arg[0];

		if (!strcmp(ev[e].name, "insert") && addr >= (uintptr_t)p &&
		    addr < (uintptr_t)p + len)
			pa[(addr - (uintptr_t)p) / ps] = ev[e].arg[1] * ps;
	}
	for (size_t i = 0; i < len / ps; i++)
		if (!CHECK(pa[i], "no fault recorded for page %zu of the buffer", i))
			return false;
	return true;
}

/*
 * Whether every page at @pa (@np of them) was cleaned (a DMA_TO_DEVICE
 * sync covering it) between events @lo and @hi, or with @inval, cleaned
 * and then invalidated (a DMA_FROM_DEVICE sync for the CPU covering it,
 * after that clean).  Reports the first page that was not; returns how
 * many were not.
 */
static size_t check_cleaned(const struct event *ev, size_t lo, size_t hi, const uint64_t *pa,
			    size_t np, const char *what, bool inval)
{
	size_t bad = 0;

	for (size_t i = 0; i < np; i++) {
		size_t e = lo;
		bool c = false, v = !inval;

		for (; e < hi && !c; e++)
			c = sync_covers(&ev[e], "sync", DMA_TO_DEVICE, pa[i]);
		for (; e < hi && c && !v; e++)
			v = sync_covers(&ev[e], "inval", DMA_FROM_DEVICE, pa[i]);
		if ((!c || !v) && !bad++)
			tap_diag("%s: page %zu (pa %#llx) was not %s before it was handed out",
				 what, i, (unsigned long long)pa[i],
				 c ? "invalidated after its clean" : "cleaned");
	}
	return bad;
}

/*
 * Empties the pool through the kernel's shrinkers (drop_caches 2 runs
 * every shrinker, accmap's among them), so that the next buffer's blocks
 * come from buffers freed later or from the page allocator.
 */
static bool empty_pool(int dev)
{
	struct accmap_pool_info info = { 0 };

	for (int tries = 0; tries < 10; tries++) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

		if (!CHECK(fd >= 0, "open drop_caches: %s", strerror(errno)))
			return false;
		if (write(fd, "2", 1) != 1)
			tap_diag("write drop_caches: %s", strerror(errno));
		close(fd);
		if (!CHECK_OK(am_pool_wait_idle(dev, 10000)))
			return false;
		if (!CHECK_OK(am_query_pool(dev, &info)))
			return false;
		if (!info.pooled)
			return true;
	}
	return CHECK(false, "the pool still holds %llu bytes", (unsigned long long)info.pooled);
}

/*
 * Hands out a @len buffer (heaps @heap_mask, @flags) between the markers
 * "from" (written first) and "handout" (written as ALLOC returns), and
 * checks that every page of it was cleaned between the two.  @before
 * runs after the first marker (a FREE whose blocks the buffer may take).
 */
static void handout_checked(int dev, size_t len, uint32_t heap_mask, uint32_t flags,
			    const char *what, void (*before)(int dev, uint32_t id),
			    uint32_t before_id, bool inval)
{
	const size_t ps = page_size(), np = len / ps;
	uint64_t *pa = calloc(np, sizeof(*pa));
	struct event *ev = NULL;
	size_t nev, lo, hi, bad;
	uint32_t id = 0;
	uint8_t *p = NULL;
	int fd = -1;

	if (!CHECK(pa, "out of memory") || !probes_on(sync_probes, TAP_ARRAY_SIZE(sync_probes)) ||
	    !trace_mark("from"))
		goto out;
	if (before)
		before(dev, before_id);
	p = handout_pagewise(dev, len, heap_mask, flags, &id, &fd);
	if (!p)
		goto out;
	nev = read_events(&ev);
	lo = find_mark(ev, nev, "from");
	hi = find_mark(ev, nev, "handout");
	if (!CHECK(lo < hi && hi < nev, "%s: markers not found in the trace", what) ||
	    !fault_pas(ev, nev, p, len, pa))
		goto out;
	bad = check_cleaned(ev, lo, hi, pa, np, what, inval);
	CHECK(!bad, "%s: %zu of %zu pages reached user space without a %s after the marker",
	      what, bad, np, inval ? "clean and invalidate" : "clean");
	if (!bad)
		tap_diag("%s: %zu pages %s after the marker and before ALLOC returned", what,
			 np, inval ? "cleaned and invalidated" : "cleaned");
out:
	probes_off();
	if (p)
		munmap(p, len);
	if (fd >= 0)
		close(fd);
	if (id)
		CHECK_OK(am_free(dev, id));
	free(ev);
	free(pa);
}

static void free_and_scrub(int dev, uint32_t id)
{
	CHECK_OK(am_free(dev, id));
	CHECK_OK(am_pool_wait_idle(dev, 10000));
}

/*
 * With the pool empty, a freed 1 MiB buffer's blocks (64 KiB each) go to
 * the pool, whose worker zeroes and cleans them; a 5 MiB buffer then gets
 * two 2 MiB blocks fresh from the page allocator (zeroed by it, cleaned
 * during ALLOC) and takes the 1 MiB back from the pool.  Every page of
 * the new buffer must have been cleaned after the old buffer was freed
 * and before ALLOC returned.  A regression that skips the clean on either
 * path, cleans part of a block, or leaves it to after the hand-out fails
 * here although qemu models no cache.
 */
static void test_handout_cleaned(void)
{
	const size_t small = 1 << 20;
	int dev = am_open(), fd;
	uint32_t id;
	uint8_t *p;

	if (dev < 0)
		return;
	p = map_buffer(dev, small, 0, PROT_READ | PROT_WRITE, &id, &fd);
	if (!p)
		goto out;
	memset(p, 0x5c, small);
	munmap(p, small);
	close(fd);
	if (empty_pool(dev))
		handout_checked(dev, 5 << 20, ACCMAP_HEAP_MASK_SYSTEM, 0, "pool and fresh",
				free_and_scrub, id, false);
	else
		CHECK_OK(am_free(dev, id));
out:
	close(dev);
}

/*
 * A contiguous buffer (dma_alloc_pages() on accmap's device): accmap
 * zeroes every page itself and cleans the block before ALLOC returns.
 */
static void test_contig_cleaned(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	handout_checked(dev, 1 << 20, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_CONTIGUOUS,
			"contiguous", NULL, 0, false);
	close(dev);
}

/*
 * A cached buffer from a carveout (the guests have one, in the linear
 * map), zeroed through the block's kernel mapping and cleaned before
 * ALLOC returns.
 */
static uint32_t cached_carveout(int dev)
{
	struct accmap_heap_info hi;

	for (uint32_t h = 0; h < ACCMAP_HEAP_MAX; h++) {
		struct accmap_alloc a = { .heap_mask = 1U << h };
		uint32_t id;
		int ret;

		if (h == ACCMAP_HEAP_SYSTEM || h == ACCMAP_HEAP_USER || h == ACCMAP_HEAP_DEVICE ||
		    am_query_heap(dev, h, &hi) || !hi.total || am_create(dev, 1 << 16, &id))
			continue;
		a.id = id;
		ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
		am_free(dev, id);
		if (!ret)
			return h;
	}
	CHECK(0, "no carveout heap gives cached buffers (ACCMAP_CARVEOUTS=%s)",
	      getenv("ACCMAP_CARVEOUTS") ? getenv("ACCMAP_CARVEOUTS") : "");
	return ACCMAP_HEAP_MAX;
}

static void test_carveout_cleaned(void)
{
	int dev = am_open();
	uint32_t heap;

	if (dev < 0)
		return;
	heap = cached_carveout(dev);
	if (heap < ACCMAP_HEAP_MAX)
		handout_checked(dev, 1 << 20, 1U << heap, 0, "carveout", NULL, 0, false);
	close(dev);
}

/*
 * Counts the pages at @pa that a @name probe event of direction @dir
 * from this process covers between @lo and @hi, and the events of this
 * process of probe @other in that window.
 */
static size_t covered(const struct event *ev, size_t lo, size_t hi, const uint64_t *pa,
		      size_t np, const char *name, int dir, const char *other, size_t *others)
{
	size_t n = 0;

	*others = 0;
	for (size_t e = lo; e < hi; e++)
		*others += ev[e].pid == (long)getpid() && !strcmp(ev[e].name, other);
	for (size_t i = 0; i < np; i++) {
		bool c = false;

		for (size_t e = lo; e < hi && !c; e++)
			c = ev[e].pid == (long)getpid() && sync_covers(&ev[e], name, dir, pa[i]);
		n += c;
	}
	return n;
}

/*
 * ACCMAP_IOC_CACHE as production code runs it: WRITEBACK cleans every
 * page (a DMA_TO_DEVICE sync for the device) and invalidates none;
 * INVALIDATE invalidates every page (a DMA_FROM_DEVICE sync for the CPU,
 * the one direction in which arm64 discards lines) and cleans none;
 * WRITEBACK_INVALIDATE cleans every page before it invalidates it.  A
 * regression that swaps a direction, or invalidates with TO_DEVICE
 * (which arm64's sync for the CPU ignores), fails here.
 */
static void test_cache_op_directions(void)
{
	static const struct {
		uint32_t op;
		const char *name;
	} ops[] = {
		{ ACCMAP_CACHE_WRITEBACK, "WRITEBACK" },
		{ ACCMAP_CACHE_INVALIDATE, "INVALIDATE" },
		{ ACCMAP_CACHE_WRITEBACK_INVALIDATE, "WRITEBACK_INVALIDATE" },
	};
	const size_t len = 256 << 10, ps = page_size(), np = len / ps;
	uint64_t *pa = calloc(np, sizeof(*pa));
	struct event *ev = NULL;
	int dev = am_open(), fd = -1;
	uint32_t id = 0;
	uint8_t *p = NULL;
	size_t nev;

	if (dev < 0 || !CHECK(pa, "out of memory") ||
	    !probes_on(sync_probes, TAP_ARRAY_SIZE(sync_probes)))
		goto out;
	p = handout_pagewise(dev, len, ACCMAP_HEAP_MASK_SYSTEM, 0, &id, &fd);
	if (!p)
		goto out;
	nev = read_events(&ev);
	if (!fault_pas(ev, nev, p, len, pa))
		goto out;
	for (size_t o = 0; o < TAP_ARRAY_SIZE(ops); o++) {
		struct accmap_cache_op op = { .id = id, .op = ops[o].op, .length = len };
		size_t lo, hi, cleaned, inval, n_sync, n_inval;
		bool wb = ops[o].op & ACCMAP_CACHE_WRITEBACK;
		bool in = ops[o].op & ACCMAP_CACHE_INVALIDATE;

		free(ev);
		ev = NULL;
		if (!trace_write("trace", "", false) || !trace_mark("op") ||
		    !CHECK_OK(raw_ioctl(dev, ACCMAP_IOC_CACHE, &op)) || !trace_mark("op-end"))
			break;
		nev = read_events(&ev);
		lo = find_mark(ev, nev, "op");
		hi = find_mark(ev, nev, "op-end");
		if (!CHECK(lo < hi && hi < nev, "%s: markers not found", ops[o].name))
			break;
		cleaned = covered(ev, lo, hi, pa, np, "sync", DMA_TO_DEVICE, "inval", &n_inval);
		inval = covered(ev, lo, hi, pa, np, "inval", DMA_FROM_DEVICE, "sync", &n_sync);
		tap_diag("%s: %zu/%zu cleaned, %zu invalidated (%zu syncs to device, %zu to CPU)",
			 ops[o].name, cleaned, np, inval, n_sync, n_inval);
		CHECK(cleaned == (wb ? np : 0) && (wb || !n_sync),
		      "%s: %zu of %zu pages cleaned, %zu syncs for the device", ops[o].name,
		      cleaned, np, n_sync);
		CHECK(inval == (in ? np : 0) && (in || !n_inval),
		      "%s: %zu of %zu pages invalidated (DMA_FROM_DEVICE), %zu syncs for the CPU",
		      ops[o].name, inval, np, n_inval);
		if (wb && in) {
			/* Each page: its last clean comes before its first invalidate. */
			size_t late = 0;

			for (size_t i = 0; i < np; i++) {
				size_t c = lo, v = hi;

				for (size_t e = lo; e < hi; e++) {
					if (sync_covers(&ev[e], "sync", DMA_TO_DEVICE, pa[i]))
						c = e;
					if (v == hi &&
					    sync_covers(&ev[e], "inval", DMA_FROM_DEVICE, pa[i]))
						v = e;
				}
				late += c >= v;
			}
			CHECK(!late, "%s: %zu pages invalidated before they were cleaned",
			      ops[o].name, late);
		}
	}
out:
	probes_off();
	if (p)
		munmap(p, len);
	if (fd >= 0)
		close(fd);
	if (id)
		CHECK_OK(am_free(dev, id));
	if (dev >= 0)
		close(dev);
	free(ev);
	free(pa);
}

/*
 * The syncs accmap makes for an importer's device: vgem imports a cached
 * buffer and maps it for its device (DMA_BIDIRECTIONAL, which cleans
 * every page); DMA_BUF_IOCTL_SYNC START of a read then syncs every page
 * for the CPU in the attachment's direction (on arm64, an invalidate),
 * END syncs every page for the device again (a clean), and START of a
 * write only syncs nothing for the CPU (nothing to fetch).  A dropped
 * begin or end sync, or one over part of the buffer, fails here.
 */
static void test_importer_syncs(void)
{
	static const struct {
		uint64_t flags;
		const char *name, *probe;
		size_t want;	/* pages, in units of the buffer */
	} steps[] = {
		{ DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ, "START|READ", "inval", 1 },
		{ DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ, "END|READ", "sync", 1 },
		{ DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE, "START|WRITE", "inval", 0 },
		{ DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE, "END|WRITE", "sync", 1 },
	};
	const size_t len = 256 << 10, ps = page_size(), np = len / ps;
	uint64_t *pa = calloc(np, sizeof(*pa));
	struct event *ev = NULL;
	int dev = am_open(), fd = -1, vgem = -1, maps;
	uint32_t id = 0, handle = 0;
	size_t nev, lo, hi, others, n;
	uint8_t *p = NULL;

	if (dev < 0 || !CHECK(pa, "out of memory"))
		goto out;
	vgem = vgem_open();
	if (vgem < 0)
		goto out;
	maps = vgem_maps_at_import(vgem);
	if (!CHECK(maps == 1,
		   "vgem does not map a dma-buf at import here (%d): no importer syncs to see",
		   maps) || !probes_on(sync_probes, TAP_ARRAY_SIZE(sync_probes)))
		goto out;
	p = handout_pagewise(dev, len, ACCMAP_HEAP_MASK_SYSTEM, 0, &id, &fd);
	if (!p || !trace_mark("import") ||
	    !CHECK_OK(vgem_import(vgem, fd, &handle)) || !trace_mark("import-end"))
		goto out;
	nev = read_events(&ev);
	lo = find_mark(ev, nev, "import");
	hi = find_mark(ev, nev, "import-end");
	if (!fault_pas(ev, nev, p, len, pa) ||
	    !CHECK(lo < hi && hi < nev, "import: markers not found"))
		goto out;
	n = covered(ev, lo, hi, pa, np, "sync", DMA_BIDIRECTIONAL, "inval", &others);
	CHECK(n == np, "vgem's import: %zu of %zu pages synced for its device", n, np);
	for (size_t st = 0; st < TAP_ARRAY_SIZE(steps); st++) {
		struct dma_buf_sync sync = { .flags = steps[st].flags };
		const char *other = strcmp(steps[st].probe, "sync") ? "sync" : "inval";

		free(ev);
		ev = NULL;
		if (!trace_write("trace", "", false) || !trace_mark("step") ||
		    !CHECK_OK(ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) ? -errno : 0) ||
		    !trace_mark("step-end"))
			break;
		nev = read_events(&ev);
		lo = find_mark(ev, nev, "step");
		hi = find_mark(ev, nev, "step-end");
		if (!CHECK(lo < hi && hi < nev, "%s: markers not found", steps[st].name))
			break;
		n = covered(ev, lo, hi, pa, np, steps[st].probe, DMA_BIDIRECTIONAL, other,
			    &others);
		tap_diag("DMA_BUF_IOCTL_SYNC %s: %zu/%zu synced for the %s, %zu the other way",
			 steps[st].name, n, np, strcmp(steps[st].probe, "sync") ? "CPU" : "device",
			 others);
		CHECK(n == steps[st].want * np && !others,
		      "DMA_BUF_IOCTL_SYNC %s: %zu of %zu pages synced for the %s (expected %zu), %zu syncs the other way",
		      steps[st].name, n, np, strcmp(steps[st].probe, "sync") ? "CPU" : "device",
		      steps[st].want * np, others);
	}
out:
	probes_off();
	if (handle)
		vgem_close_handle(vgem, handle);
	if (vgem >= 0)
		close(vgem);
	if (p)
		munmap(p, len);
	if (fd >= 0)
		close(fd);
	if (id)
		CHECK_OK(am_free(dev, id));
	if (dev >= 0)
		close(dev);
	free(ev);
	free(pa);
}

/* The memory attribute index of an arm64 PTE (AttrIndx, bits 4:2). */
#define ATTRINDX(prot)		((unsigned int)((prot) >> 2) & 7)
#define MT_NORMAL_NC		2

/*
 * Write-combined and uncached buffers: the PTEs user faults insert and
 * the kernel's vmap (made by the first READ) carry one attribute, Normal
 * non-cacheable.  The mapping is read-only, so that faults go through
 * vmf_insert_pfn_prot() with the mapping's protection.  (The other pages
 * of a fault's block take that entry's protection: vma.c.)
 */
static void test_one_attribute(void)
{
	static const char *const probes[] = {
		"p:" GROUP "/user vmf_insert_pfn_prot prot=%x3:x64",
		"p:" GROUP "/kernel vmap count=%x1:x64 prot=%x3:x64",
	};
	static const uint32_t flags[] = { ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED };
	const size_t len = 8 * page_size();
	int dev = am_open();
	uint32_t heap;

	if (dev < 0 || !probes_on(probes, TAP_ARRAY_SIZE(probes)))
		goto out;
	for (size_t f = 0; f < TAP_ARRAY_SIZE(flags); f++) {
		uint64_t user = ~0ULL, kernel = ~0ULL;
		struct event *ev = NULL;
		uint32_t id;
		char buf[64];
		size_t nev;
		void *p;
		int fd;

		trace_write("trace", "", false);
		p = map_buffer(dev, len, flags[f], PROT_READ, &id, &fd);
		if (!p)
			break;
		CHECK_OK(am_read(dev, id, 0, buf, sizeof(buf)));
		nev = read_events(&ev);
		for (size_t e = 0; e < nev; e++) {
			if (!strcmp(ev[e].name, "user"))
				user = ev[e].arg[0];
			/* The buffer's own vmap: one page per entry, len pages. */
			if (!strcmp(ev[e].name, "kernel") && ev[e].arg[0] == len / page_size())
				kernel = ev[e].arg[1];
		}
		if (CHECK(user != ~0ULL, "flags %#x: no user fault recorded", flags[f]) &&
		    CHECK(kernel != ~0ULL, "flags %#x: no kernel vmap recorded", flags[f])) {
			CHECK(ATTRINDX(user) == ATTRINDX(kernel),
			      "flags %#x: user mapping AttrIndx %u, kernel's %u",
			      flags[f], ATTRINDX(user), ATTRINDX(kernel));
			CHECK(ATTRINDX(user) == MT_NORMAL_NC,
			      "flags %#x: AttrIndx %u, not Normal non-cacheable",
			      flags[f], ATTRINDX(user));
		}
		free(ev);
		munmap(p, len);
		close(fd);
		CHECK_OK(am_free(dev, id));
	}
	probes_off();
	/*
	 * The pages' cached alias in the linear map: a line of it written
	 * back later would land over the buffer, and arm64 forbids lines of
	 * two attributes for one page.  1 MiB: pool blocks of 64 KiB, so a
	 * flush of part of each block shows.
	 */
	handout_checked(dev, 1 << 20, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
			"write-combined", NULL, 0, true);
	heap = cached_carveout(dev);
	if (heap < ACCMAP_HEAP_MAX)
		handout_checked(dev, 1 << 20, 1U << heap, ACCMAP_ALLOC_WRITECOMBINE,
				"write-combined carveout", NULL, 0, true);
out:
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "handout_cleaned", test_handout_cleaned },
	{ "one_attribute", test_one_attribute },
	{ "contig_cleaned", test_contig_cleaned },
	{ "carveout_cleaned", test_carveout_cleaned },
	{ "cache_op_directions", test_cache_op_directions },
	{ "importer_syncs", test_importer_syncs },
};

#elif defined(__x86_64__)

/* Pages set_pages_array_* was called for, by probe name. */
static uint64_t pages_set(const struct event *ev, size_t nev, const char *name)
{
	uint64_t n = 0;

	for (size_t e = 0; e < nev; e++)
		if (!strcmp(ev[e].name, name))
			n += ev[e].arg[0];
	return n;
}

/*
 * A write-combined (uncached) buffer's pages get the WC (UC-) memory type
 * on ALLOC, every one of them, and write-back again when the buffer goes;
 * cached buffers are left alone.
 */
static void test_wc_uc_memtype(void)
{
	static const char *const probes[] = {
		"p:" GROUP "/wc set_pages_array_wc count=%si:s32",
		"p:" GROUP "/uc set_pages_array_uc count=%si:s32",
		"p:" GROUP "/wb set_pages_array_wb count=%si:s32",
	};
	static const struct {
		uint32_t flags;
		const char *set;
	} cases[] = {
		{ ACCMAP_ALLOC_WRITECOMBINE, "wc" },
		{ ACCMAP_ALLOC_UNCACHED, "uc" },
		{ 0, NULL },
	};
	const size_t len = (1 << 20) + 3 * page_size();
	const uint64_t npages = len / page_size();
	int dev = am_open();

	if (dev < 0 || !probes_on(probes, TAP_ARRAY_SIZE(probes)))
		goto out;
	for (size_t c = 0; c < TAP_ARRAY_SIZE(cases); c++) {
		struct event *ev = NULL;
		uint64_t want;
		uint32_t id;
		size_t nev;
		void *p;
		int fd;

		trace_write("trace", "", false);
		p = map_buffer(dev, len, cases[c].flags, PROT_READ | PROT_WRITE, &id, &fd);
		if (!p)
			break;
		nev = read_events(&ev);
		if (cases[c].set)
			CHECK(pages_set(ev, nev, cases[c].set) == npages,
			      "flags %#x: set_pages_array_%s for %llu of %llu pages",
			      cases[c].flags, cases[c].set,
			      (unsigned long long)pages_set(ev, nev, cases[c].set),
			      (unsigned long long)npages);
		else
			CHECK(nev == 0, "cached buffer: %zu memory type changes", nev);
		free(ev);

		trace_write("trace", "", false);
		munmap(p, len);
		close(fd);
		CHECK_OK(am_free(dev, id));
		nev = read_events(&ev);
		want = 0;
		if (cases[c].set)
			want = npages;
		CHECK(pages_set(ev, nev, "wb") == want,
		      "flags %#x: set_pages_array_wb for %llu pages at release, not %llu",
		      cases[c].flags, (unsigned long long)pages_set(ev, nev, "wb"),
		      (unsigned long long)want);
		free(ev);
	}
	probes_off();
out:
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "wc_uc_memtype", test_wc_uc_memtype },
};

#else
#error "accmap_cachestate knows the probes of arm64 and x86_64 only"
#endif

#if defined(__aarch64__)
/*
 * importer_syncs needs an importer that maps a dma-buf for its device
 * when it imports it.  vgem does on 6.12; on 7.3 the GEM shmem helpers
 * it uses import without mapping.  The harness reads which from the
 * kernel's vgem and says so in ACCMAP_VGEM_MAPS ("no": not a test of
 * this system); where it says "yes" or nothing, vgem must map.
 */
static const char *const mapping_importer_tests[] = { "importer_syncs", NULL };

int main(void)
{
	const char *maps = getenv("ACCMAP_VGEM_MAPS");
	const char *why = NULL;

	if (maps && !strcmp(maps, "no"))
		why = "this kernel's vgem does not map a dma-buf at import (ACCMAP_VGEM_MAPS=no)";
	return tap_run_except(tests, TAP_ARRAY_SIZE(tests), mapping_importer_tests, why);
}
#else
int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}
#endif

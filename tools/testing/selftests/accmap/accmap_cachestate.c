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
 *     freed it and before ALLOC returned.
 *   - one_attribute: the user mapping (vmf_insert_pfn_prot()) and the
 *     kernel's mapping (vmap()) of write-combined and uncached buffers
 *     have the same memory attribute index, Normal non-cacheable.
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

#include "accmap_util.h"
#include "tap.h"

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
 * struct event - one recorded probe hit
 * @name: the probe's name
 * @arg: its arguments, in the order of the probe's definition
 */
struct event {
	char name[32];
	uint64_t arg[4];
};

/*
 * Reads every recorded event, in order, into a malloc'ed array.  Lines
 * look like "comm-pid [cpu] flags ts: name: (fn+0x0/0x..) a=0x1 b=0x2".
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
		char *p = strstr(line, ": (");
		char *name, *colon;
		size_t a = 0, len;

		if (line[0] == '#' || !p)
			continue;
		*p = '\0';
		colon = strrchr(line, ' ');
		name = colon ? colon + 1 : line;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ev = realloc(ev, cap * sizeof(*ev));
			if (!ev)
				break;
		}
		memset(&ev[n], 0, sizeof(ev[n]));
		len = strlen(name);
		if (len >= sizeof(ev[n].name))
			len = sizeof(ev[n].name) - 1;
		memcpy(ev[n].name, name, len);
		for (p = strchr(p + 1, '='); p && a < 4; p = strchr(p + 1, '='))
			ev[n].arg[a++] = strtoull(p + 1, NULL, 0);
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

#define DMA_TO_DEVICE	1

/*
 * As map_buffer(), but every page a mapping of its own (MAP_FIXED, in
 * order, into a reservation), so that every page takes a fault of its
 * own; one munmap() of the result unmaps them all.
 */
static void *map_buffer_pagewise(int dev, size_t len, int prot, uint32_t *id, int *fd)
{
	const size_t ps = page_size();
	uint8_t *p;

	*fd = am_buffer(dev, len, 0, id, true);
	if (*fd < 0)
		return NULL;
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!CHECK(p != MAP_FAILED, "reserving %zu bytes: %s", len, strerror(errno)))
		return NULL;
	for (size_t off = 0; off < len; off += ps) {
		if (!CHECK(mmap(p + off, ps, prot, MAP_SHARED | MAP_FIXED, *fd, (off_t)off) ==
			   p + off, "mmap of page %zu alone: %s", off / ps, strerror(errno))) {
			munmap(p, len);
			return NULL;
		}
		__atomic_load_n(p + off, __ATOMIC_RELAXED);
	}
	return p;
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
 * With the pool empty, a freed 1 MiB buffer's blocks (64 KiB each) go to
 * the pool, whose worker zeroes and cleans them; a 5 MiB buffer then gets
 * two 2 MiB blocks fresh from the page allocator, cleaned during ALLOC,
 * and takes the 1 MiB back from the pool.  Every page of the new buffer
 * must lie in a DMA_TO_DEVICE sync recorded after the old buffer was
 * freed.
 */
static void test_handout_cleaned(void)
{
	static const char *const probes[] = {
		"p:" GROUP "/sync arch_sync_dma_for_device paddr=%x0:x64 size=%x1:x64 dir=%x2:s32",
		"p:" GROUP "/insert vmf_insert_pfn_prot addr=%x1:x64 pfn=%x2:x64",
	};
	const size_t small = 1 << 20, big = 5 << 20, ps = page_size();
	uint64_t *pfns = calloc(big / ps, sizeof(*pfns));
	int dev = am_open(), fd;
	struct event *ev = NULL;
	size_t nev, uncovered = 0;
	uint32_t id;
	uint8_t *p;

	if (dev < 0 || !CHECK(pfns, "out of memory"))
		goto out;
	p = map_buffer(dev, small, 0, PROT_READ | PROT_WRITE, &id, &fd);
	if (!p)
		goto out;
	memset(p, 0x5c, small);
	munmap(p, small);
	close(fd);
	if (!empty_pool(dev) || !probes_on(probes, TAP_ARRAY_SIZE(probes)))
		goto out;
	CHECK_OK(am_free(dev, id));
	CHECK_OK(am_pool_wait_idle(dev, 10000));

	/*
	 * Read-only, so that faults insert through vmf_insert_pfn_prot(),
	 * and one page per mapping: a fault fills the rest of its mapping's
	 * block by itself, unseen by the probe.
	 */
	p = map_buffer_pagewise(dev, big, PROT_READ, &id, &fd);
	if (!p)
		goto out_off;
	nev = read_events(&ev);
	/* The page frames, as the faults inserted them. */
	for (size_t e = 0; e < nev; e++) {
		uint64_t addr = ev[e].arg[0];

		if (!strcmp(ev[e].name, "insert") && addr >= (uintptr_t)p &&
		    addr < (uintptr_t)p + big)
			pfns[(addr - (uintptr_t)p) / ps] = ev[e].arg[1];
	}
	for (size_t i = 0; i < big / ps; i++) {
		uint64_t pa = pfns[i] * ps;
		bool covered = false;

		if (!CHECK(pfns[i], "no fault recorded for page %zu of the buffer", i))
			break;

		for (size_t e = 0; e < nev && !covered; e++)
			covered = !strcmp(ev[e].name, "sync") && ev[e].arg[2] == DMA_TO_DEVICE &&
				  ev[e].arg[0] <= pa && pa + ps <= ev[e].arg[0] + ev[e].arg[1];
		if (!covered && !uncovered++)
			tap_diag("page %zu (pa %#llx) was never cleaned", i,
				 (unsigned long long)pa);
	}
	CHECK(!uncovered, "%zu of %zu pages reached user space without a clean", uncovered,
	      big / ps);
	munmap(p, big);
	close(fd);
out_off:
	probes_off();
out:
	free(ev);
	free(pfns);
	if (dev >= 0)
		close(dev);
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
out:
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "handout_cleaned", test_handout_cleaned },
	{ "one_attribute", test_one_attribute },
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

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

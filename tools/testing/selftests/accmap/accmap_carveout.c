// SPDX-License-Identifier: GPL-2.0
/*
 * accmap carveout heaps, CACHE / CACHE_LIST and uncached buffers as user
 * space sees them.
 *
 * Carveout heaps are found with QUERY_HEAP (ids ACCMAP_HEAP_CARVEOUT_FIRST
 * up); the machine must have at least one, else every carveout test
 * fails.  The environment variable ACCMAP_CARVEOUTS, when set, pins what
 * the machine was configured with: "name:cached,name:nocached,..." lists
 * every carveout heap and whether it gives cached buffers (a carveout
 * whose memory has no struct pages, or lies outside the kernel's linear
 * map, does not).  Without it the tests learn that from the driver and
 * check it is applied consistently.
 *
 * The tests assume the carveouts are empty when each test starts (no
 * other user) and that each carveout's base is aligned to at least
 * 16 MiB, which the alignment test relies on: user space never sees a
 * physical address, so alignment shows only in how free space splits.
 *
 * Uncached mappings are Device memory on arm64, where an unaligned or
 * DC ZVA access faults: every access to a mapping here is one aligned
 * 64-bit load or store.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

#define WC			ACCMAP_ALLOC_WRITECOMBINE
#define UC			ACCMAP_ALLOC_UNCACHED

struct carveout {
	uint32_t id;
	char name[ACCMAP_HEAP_NAME_LEN];
	uint64_t total;
	bool cached;		/* gives cached buffers */
};

static struct carveout carveouts[ACCMAP_HEAP_CARVEOUT_MAX];
static size_t ncarveouts;

static const uint32_t kinds[] = { 0, WC, UC };

static const char *kind_name(uint32_t flags)
{
	if (flags & ACCMAP_ALLOC_WRITECOMBINE)
		return "wc";
	if (flags & ACCMAP_ALLOC_UNCACHED)
		return "uncached";
	return "cached";
}

/* ---- buffers ---- */

/*
 * CREATE of size, then ALLOC from mask with flags and align.  Returns 0
 * or the -errno of ALLOC (the id is freed again then); *heap gets the
 * heap the memory came from.
 */
static int co_alloc(int dev, uint64_t size, uint32_t mask, uint32_t flags, uint32_t align,
		    uint32_t *id, uint32_t *heap)
{
	struct accmap_alloc a = {
		.heap_mask = mask, .flags = flags, .align = align, .heap = GARBAGE_U32,
	};
	int ret = am_create(dev, size, &a.id);

	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return ret;
	ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
	if (ret) {
		/* A refused ALLOC leaves the handle without memory. */
		struct accmap_info info;

		if (CHECK(am_info(dev, a.id, &info) == 0, "INFO after a refused ALLOC"))
			CHECK(info.heap == ACCMAP_HEAP_NONE && info.state == 0,
			      "refused ALLOC left heap %#x state %#x", info.heap, info.state);
		am_free(dev, a.id);
		return ret;
	}
	*id = a.id;
	if (heap)
		*heap = a.heap;
	return 0;
}

/* A buffer that must be allocated, from the heap expected. */
static uint32_t co_must_alloc(int dev, uint64_t size, uint32_t mask, uint32_t flags,
			      uint32_t align, uint32_t want_heap)
{
	uint32_t id = 0, heap = GARBAGE_U32;
	int ret = co_alloc(dev, size, mask, flags, align, &id, &heap);

	if (!CHECK(ret == 0, "ALLOC(size %llu, mask %#x, %s, align %#x): %s",
		   (unsigned long long)size, mask, kind_name(flags), align, strerror(-ret)))
		return 0;
	CHECK(heap == want_heap, "ALLOC(size %llu, mask %#x) chose heap %u, expected %u",
	      (unsigned long long)size, mask, heap, want_heap);
	/* A carveout's buffers are one block whether asked or not. */
	check_info(dev, id, size, want_heap, flags,
		   ACCMAP_STATE_ALLOCATED |
		   (want_heap != ACCMAP_HEAP_SYSTEM || (flags & ACCMAP_ALLOC_CONTIGUOUS) ?
		    ACCMAP_STATE_CONTIGUOUS : 0), 0, "after ALLOC");
	return id;
}

/* ---- heap figures ---- */

static bool heap_figures(int dev, uint32_t heap, struct accmap_heap_info *info)
{
	int ret = am_query_heap(dev, heap, info);

	return CHECK(ret == 0, "QUERY_HEAP %u: %s", heap, strerror(-ret));
}

/* QUERY_HEAP of a carveout must report exactly these used/free/largest. */
static bool expect_figures(int dev, const struct carveout *c, uint64_t used, uint64_t largest,
			   const char *when)
{
	struct accmap_heap_info info;

	if (!heap_figures(dev, c->id, &info))
		return false;
	return CHECK(info.total == c->total && info.used == used && info.free == c->total - used &&
		     info.largest_free == largest,
		     "%s '%s' %s: total %llu used %llu free %llu largest %llu, expected %llu %llu %llu %llu",
		     "carveout", c->name, when, (unsigned long long)info.total,
		     (unsigned long long)info.used, (unsigned long long)info.free,
		     (unsigned long long)info.largest_free, (unsigned long long)c->total,
		     (unsigned long long)used, (unsigned long long)(c->total - used),
		     (unsigned long long)largest);
}

/* ---- finding the carveouts ---- */

/* The expectation ACCMAP_CARVEOUTS gives for a name: 1 cached, 0 not, -1 unlisted. */
static int expected_cached(const char *name)
{
	const char *env = getenv("ACCMAP_CARVEOUTS");
	size_t len = strlen(name);

	for (const char *p = env; p && *p;) {
		const char *colon = strchr(p, ':');
		const char *end = strchr(p, ',');

		if (!end)
			end = p + strlen(p);
		if (colon && colon < end && (size_t)(colon - p) == len && !strncmp(p, name, len))
			return !strncmp(colon + 1, "cached", 6) && end - colon - 1 == 6;
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* How many carveouts ACCMAP_CARVEOUTS lists. */
static size_t expected_count(void)
{
	const char *env = getenv("ACCMAP_CARVEOUTS");
	size_t n = 0;

	if (!env || !*env)
		return 0;
	for (n = 1; *env; env++)
		n += *env == ',';
	return n;
}

/*
 * Fills carveouts[]; fails the test if there is none.  Whether a carveout
 * gives cached buffers is probed with one ALLOC of one page.
 */
static bool find_carveouts(int dev)
{
	ncarveouts = 0;
	for (uint32_t id = ACCMAP_HEAP_CARVEOUT_FIRST;
	     id < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; id++) {
		struct carveout *c = &carveouts[ncarveouts];
		struct accmap_heap_info info;
		uint32_t bid;
		int ret = am_query_heap(dev, id, &info);

		if (ret == -ENODEV)
			continue;
		if (!CHECK(ret == 0, "QUERY_HEAP %u: %s", id, strerror(-ret)))
			continue;
		c->id = id;
		memcpy(c->name, info.name, sizeof(c->name));
		c->name[sizeof(c->name) - 1] = '\0';
		c->total = info.total;
		ret = co_alloc(dev, page_size(), 1U << id, 0, 0, &bid, NULL);
		CHECK(ret == 0 || ret == -EINVAL, "cached ALLOC from carveout %u: %s", id,
		      strerror(-ret));
		c->cached = ret == 0;
		if (!ret)
			am_free(dev, bid);
		ncarveouts++;
	}
	return CHECK(ncarveouts > 0,
		     "no carveout heap: load accmap with carveout=<size>@<base> or a device-tree carveout");
}

/* am_open() and find_carveouts(); -1 (test failed) if either fails. */
static int open_with_carveouts(void)
{
	int dev = am_open();

	if (dev < 0)
		return -1;
	if (!find_carveouts(dev)) {
		close(dev);
		return -1;
	}
	return dev;
}

/* The flags a carveout accepts, in kinds[] order. */
static bool kind_ok(const struct carveout *c, uint32_t flags)
{
	return c->cached || (flags & (WC | UC));
}

/*
 * ---- mapping access: aligned 64-bit words only ----
 * Relaxed atomics compile to single aligned loads and stores that the
 * compiler may neither merge, split nor turn into a library call.
 */

static void words_to(void *map, const void *src, size_t len)
{
	uint64_t *d = map;
	const uint64_t *s = src;

	for (size_t i = 0; i < len / 8; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

static void words_from(void *dst, const void *map, size_t len)
{
	const uint64_t *s = map;
	uint64_t *d = dst;

	for (size_t i = 0; i < len / 8; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* ==== tests ==== */

static void test_carveout_configured(void)
{
	size_t pg = page_size();
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		struct carveout *c = &carveouts[i];
		struct accmap_heap_info info;
		size_t len;
		int want;

		tap_diag("carveout heap %u '%s': %llu bytes, %s", c->id, c->name,
			 (unsigned long long)c->total,
			 c->cached ? "cached too" : "write-combined and uncached only");
		if (!heap_figures(dev, c->id, &info))
			continue;
		len = strnlen(info.name, sizeof(info.name));
		CHECK(len > 0 && len < sizeof(info.name), "heap %u name not NUL-terminated", c->id);
		for (size_t k = 0; k < len; k++)
			CHECK((info.name[k] >= 'a' && info.name[k] <= 'z') ||
			      (info.name[k] >= '0' && info.name[k] <= '9') ||
			      info.name[k] == '_' || info.name[k] == '-',
			      "heap %u name '%s': character %zu", c->id, c->name, k);
		for (size_t k = len; k < sizeof(info.name); k++)
			CHECK(info.name[k] == 0, "heap %u name: byte %zu after the NUL", c->id, k);
		CHECK(strcmp(c->name, "system") != 0, "a carveout named system");
		CHECK(info.total > 0 && info.total % pg == 0, "heap %u total %llu", c->id,
		      (unsigned long long)info.total);
		expect_figures(dev, c, 0, c->total, "at start");

		want = expected_cached(c->name);
		if (getenv("ACCMAP_CARVEOUTS"))
			CHECK(want >= 0, "carveout '%s' is not in ACCMAP_CARVEOUTS=%s", c->name,
			      getenv("ACCMAP_CARVEOUTS"));
		if (want >= 0)
			CHECK(c->cached == want, "carveout '%s' %s cached buffers, configured %s",
			      c->name, c->cached ? "gives" : "refuses",
			      want ? "cached" : "nocached");
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(carveouts[j].name, c->name), "two carveouts named '%s'",
			      c->name);
	}
	if (getenv("ACCMAP_CARVEOUTS"))
		CHECK(ncarveouts == expected_count(), "%zu carveout heaps, ACCMAP_CARVEOUTS=%s",
		      ncarveouts, getenv("ACCMAP_CARVEOUTS"));
	else
		tap_diag("ACCMAP_CARVEOUTS not set: cached or not is not pinned");
	close(dev);
}

/*
 * Fill a carveout with eighths until ALLOC fails with ENOMEM, then free
 * blocks in the middle and watch free and largest_free exactly.
 */
static void test_carveout_fill_and_free(void)
{
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		const struct carveout *c = &carveouts[i];
		uint64_t chunk = c->total / 8 / page_size() * page_size();
		uint32_t mask = 1U << c->id, ids[9] = { 0 }, extra = 0;
		uint64_t used = 0, rest;
		size_t n = 0;
		int ret;

		if (!CHECK(chunk > 0, "carveout '%s' too small to test", c->name))
			continue;
		while (n < 8) {
			ids[n] = co_must_alloc(dev, chunk, mask, WC, 0, c->id);
			if (!ids[n])
				break;
			used += chunk;
			n++;
			/* Blocks are taken from the start: one free extent, at the end. */
			expect_figures(dev, c, used, c->total - used, "while filling");
		}
		if (n < 8)
			goto out_free;
		rest = c->total - used;
		if (rest) {
			ids[8] = co_must_alloc(dev, rest, mask, WC, 0, c->id);
			used += rest;
		}
		expect_figures(dev, c, c->total, 0, "full");
		ret = co_alloc(dev, page_size(), mask, WC, 0, &extra, NULL);
		CHECK(ret == -ENOMEM, "ALLOC of a page from a full carveout: %s, expected ENOMEM",
		      strerror(-ret));
		ret = co_alloc(dev, page_size(), mask, UC, 0, &extra, NULL);
		CHECK(ret == -ENOMEM, "uncached ALLOC from a full carveout: %s", strerror(-ret));

		/* Holes: eighth 3 (one chunk), then 1 (still one chunk largest). */
		CHECK(am_free(dev, ids[3]) == 0, "FREE");
		ids[3] = 0;
		expect_figures(dev, c, c->total - chunk, chunk, "eighth 3 freed");
		CHECK(am_free(dev, ids[1]) == 0, "FREE");
		ids[1] = 0;
		expect_figures(dev, c, c->total - 2 * chunk, chunk, "eighths 1 and 3 freed");
		/* Two chunks free, but not together: no room for two. */
		ret = co_alloc(dev, 2 * chunk, mask, WC, 0, &extra, NULL);
		CHECK(ret == -ENOMEM, "ALLOC of 2 chunks with 2 separate chunks free: %s",
		      strerror(-ret));
		/* Freeing 2 joins 1, 2 and 3. */
		CHECK(am_free(dev, ids[2]) == 0, "FREE");
		ids[2] = 0;
		expect_figures(dev, c, c->total - 3 * chunk, 3 * chunk, "eighths 1 to 3 freed");
		extra = co_must_alloc(dev, 3 * chunk, mask, UC, 0, c->id);
		expect_figures(dev, c, c->total, 0, "the hole refilled");
		if (extra)
			am_free(dev, extra);
		/* Freeing 4 joins the hole to the right. */
		CHECK(am_free(dev, ids[4]) == 0, "FREE");
		ids[4] = 0;
		expect_figures(dev, c, c->total - 4 * chunk, 4 * chunk, "eighths 1 to 4 freed");
out_free:
		for (size_t k = 0; k < 9; k++)
			if (ids[k])
				CHECK(am_free(dev, ids[k]) == 0, "FREE");
		expect_figures(dev, c, 0, c->total, "all freed");
	}
	close(dev);
}

/*
 * A buffer aligned to A after a one-page buffer at the carveout's start
 * starts A bytes in: the pages between stay free, and the largest free
 * extent is what follows the aligned buffer.  (Assumes the carveout's base
 * is aligned to A.)
 */
static void test_carveout_alignment(void)
{
	static const uint32_t aligns[] = { 1U << 16, 1U << 20, 1U << 24 };
	uint64_t pg = page_size();
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		const struct carveout *c = &carveouts[i];
		uint32_t mask = 1U << c->id;

		for (size_t k = 0; k < TAP_ARRAY_SIZE(aligns); k++) {
			uint64_t a = aligns[k];
			uint32_t first, aligned, filler = 0;

			if (a < pg || 2 * a > c->total)
				continue;
			first = co_must_alloc(dev, pg, mask, WC, 0, c->id);
			aligned = co_must_alloc(dev, pg, mask, WC, (uint32_t)a, c->id);
			if (!first || !aligned)
				goto next;
			if (!expect_figures(dev, c, 2 * pg, c->total - a - pg, "aligned page"))
				tap_diag("align %#llx not honoured, or the base not aligned to it",
					 (unsigned long long)a);
			/* The gap before the aligned buffer fits exactly: best fit takes it. */
			if (a > 2 * pg) {
				filler = co_must_alloc(dev, a - pg, mask, WC, 0,
						       c->id);
				expect_figures(dev, c, a + pg, c->total - a - pg, "gap filled");
			}
next:
			if (filler)
				am_free(dev, filler);
			if (aligned)
				am_free(dev, aligned);
			if (first)
				am_free(dev, first);
			expect_figures(dev, c, 0, c->total, "after the alignment case");
		}
	}
	close(dev);
}

/* Mask {carveout, system}: the carveout until full, then the system heap. */
static void test_carveout_fallback_to_system(void)
{
	int dev = open_with_carveouts();
	uint32_t all = 0;

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		const struct carveout *c = &carveouts[i];
		uint32_t mask = (1U << c->id) | ACCMAP_HEAP_MASK_SYSTEM;
		uint64_t quarter = c->total / 4 / page_size() * page_size();
		uint32_t ids[5] = { 0 };

		all |= 1U << c->id;
		for (size_t k = 0; k < 4; k++)
			ids[k] = co_must_alloc(dev, quarter, mask, WC, 0, c->id);
		/* What is left (if the size is not a multiple of four pages). */
		if (c->total > 4 * quarter)
			ids[4] = co_must_alloc(dev, c->total - 4 * quarter, mask,
					       WC, 0, c->id);
		expect_figures(dev, c, c->total, 0, "filled through {carveout, system}");
		{
			uint32_t sys = co_must_alloc(dev, quarter, mask, WC, 0,
						     ACCMAP_HEAP_SYSTEM);
			if (sys)
				am_free(dev, sys);
		}
		for (size_t k = 0; k < 5; k++)
			if (ids[k])
				am_free(dev, ids[k]);
		/* With room again, the carveout comes first again. */
		ids[0] = co_must_alloc(dev, page_size(), mask, UC, 0, c->id);
		if (ids[0])
			am_free(dev, ids[0]);
	}

	/* Every carveout and the system heap: carveouts in id order, then system. */
	{
		uint32_t ids[ACCMAP_HEAP_CARVEOUT_MAX] = { 0 }, sys;

		for (size_t i = 0; i < ncarveouts; i++)
			ids[i] = co_must_alloc(dev, carveouts[i].total,
					       all | ACCMAP_HEAP_MASK_SYSTEM, WC, 0,
					       carveouts[i].id);
		sys = co_must_alloc(dev, page_size(), all | ACCMAP_HEAP_MASK_SYSTEM,
				    WC, 0, ACCMAP_HEAP_SYSTEM);
		if (sys)
			am_free(dev, sys);
		for (size_t i = 0; i < ncarveouts; i++)
			if (ids[i])
				am_free(dev, ids[i]);
	}
	close(dev);
}

/*
 * Cached buffers come only from carveouts that can keep caches coherent:
 * a cached ALLOC from the others alone fails with EINVAL, and with the
 * system heap in the mask it is served by the system heap.
 */
static void test_carveout_cached_rule(void)
{
	uint32_t nocached = 0;
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		const struct carveout *c = &carveouts[i];
		uint32_t mask = 1U << c->id, id = 0;
		int ret;

		ret = co_alloc(dev, page_size(), mask, 0, 0, &id, NULL);
		if (c->cached) {
			CHECK(ret == 0, "cached ALLOC from '%s': %s", c->name, strerror(-ret));
			if (!ret)
				check_info(dev, id, page_size(), c->id, 0,
					   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_CONTIGUOUS, 0,
					   "cached carveout buffer");
		} else {
			nocached |= mask;
			CHECK(ret == -EINVAL, "cached ALLOC from '%s' alone: %s, expected EINVAL",
			      c->name, strerror(-ret));
		}
		if (!ret)
			am_free(dev, id);

		id = co_must_alloc(dev, page_size(), mask | ACCMAP_HEAP_MASK_SYSTEM, 0, 0,
				   c->cached ? c->id : ACCMAP_HEAP_SYSTEM);
		if (id)
			am_free(dev, id);
		for (size_t k = 1; k < TAP_ARRAY_SIZE(kinds); k++) {
			id = co_must_alloc(dev, page_size(), mask, kinds[k], 0, c->id);
			if (id)
				am_free(dev, id);
		}
	}
	if (nocached) {
		uint32_t id = 0;
		int ret = co_alloc(dev, page_size(), nocached, 0, 0, &id, NULL);

		CHECK(ret == -EINVAL, "cached ALLOC from mask %#x of nocached carveouts: %s",
		      nocached, strerror(-ret));
		if (!ret)
			am_free(dev, id);
	}
	close(dev);
}

/*
 * A buffer through two mappings (one at an offset), through WRITE/READ,
 * and zero again when its block is handed out a second time.
 */
static void check_buffer_access(int dev, uint32_t mask, uint32_t flags, uint32_t want_heap,
				const char *what)
{
	size_t pg = page_size(), len = 5 * pg;
	uint8_t *want = malloc(len), *got = malloc(len);
	uint32_t id = 0;
	void *m1 = NULL, *m2 = NULL;
	uint64_t bytes = 0;
	int fd = -1;

	if (!CHECK(want && got, "malloc"))
		goto out;
	for (int round = 0; round < 2; round++) {
		id = co_must_alloc(dev, len, mask, flags, 0, want_heap);
		if (!id)
			goto out;
		fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
		if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
			goto out;
		m1 = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		m2 = map_shared(fd, 3 * pg, PROT_READ | PROT_WRITE, 2 * pg);
		if (!m1 || !m2)
			goto out;

		/* New memory reads as zero, also the second time round. */
		words_from(got, m1, len);
		CHECK(find_nonzero(got, len) == len,
		      "%s %s round %d: byte %zu of a new buffer not 0", what,
		      kind_name(flags), round, find_nonzero(got, len));
		CHECK(am_read(dev, id, 0, got, len) == 0 && find_nonzero(got, len) == len,
		      "%s %s: READ of a new buffer not all zero", what, kind_name(flags));

		/* Mapping 1 -> mapping 2 and READ. */
		fill_pattern(want, len, 0, 11 + round);
		words_to(m1, want, len);
		words_from(got, m2, 3 * pg);
		CHECK(find_pattern_mismatch(got, 3 * pg, 2 * pg, 11 + round) == 3 * pg,
		      "%s %s: mapping at offset 2 pages differs at byte %zu", what,
		      kind_name(flags), find_pattern_mismatch(got, 3 * pg, 2 * pg, 11 + round));
		memset(got, 0, len);
		CHECK(am_read(dev, id, 0, got, len) == 0 &&
		      find_pattern_mismatch(got, len, 0, 11 + round) == len,
		      "%s %s: READ differs from what the mapping wrote", what, kind_name(flags));

		/* WRITE -> mappings; a strided WRITE of 3-byte elements. */
		fill_pattern(want, len, 0, 21 + round);
		CHECK(am_write(dev, id, 0, want, len) == 0, "WRITE");
		words_from(got, m1, len);
		CHECK(find_pattern_mismatch(got, len, 0, 21 + round) == len,
		      "%s %s: mapping differs from what WRITE wrote, at byte %zu", what,
		      kind_name(flags), find_pattern_mismatch(got, len, 0, 21 + round));
		CHECK(am_rw(dev, true, id, want, pg + 1, 3, 7, 5, 100, &bytes) == 0 && bytes == 300,
		      "strided WRITE: %llu bytes", (unsigned long long)bytes);
		words_from(got, m1, len);
		for (size_t e = 0; e < 100; e++)
			CHECK(!memcmp(got + pg + 1 + 5 * e, want + 7 * e, 3),
			      "%s %s: strided element %zu", what, kind_name(flags), e);

		munmap(m1, len);
		munmap(m2, 3 * pg);
		m1 = NULL;
		m2 = NULL;
		close(fd);
		fd = -1;
		CHECK(am_free(dev, id) == 0, "FREE");
		id = 0;
	}
out:
	if (m1)
		munmap(m1, len);
	if (m2)
		munmap(m2, 3 * pg);
	if (fd >= 0)
		close(fd);
	if (id)
		am_free(dev, id);
	free(want);
	free(got);
}

static void test_carveout_map_and_rw(void)
{
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++)
		for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++)
			if (kind_ok(&carveouts[i], kinds[k]))
				check_buffer_access(dev, 1U << carveouts[i].id, kinds[k],
						    carveouts[i].id, carveouts[i].name);
	close(dev);
}

/* Uncached (and the other kinds of) system-heap buffers, the same way. */
static void test_system_map_and_rw(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++)
		check_buffer_access(dev, ACCMAP_HEAP_MASK_SYSTEM, kinds[k], ACCMAP_HEAP_SYSTEM,
				    "system");
	close(dev);
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* vgem imports carveout buffers: attaches and maps them for its device. */
static void test_carveout_vgem_import(void)
{
	size_t len = 16 * page_size();
	int vgem = vgem_open();
	int dev = open_with_carveouts();
	uint8_t *want = malloc(len), *got = malloc(len);

	if (!CHECK(vgem >= 0, "no vgem DRM device: %s", strerror(errno)) || dev < 0 ||
	    !CHECK(want && got, "malloc"))
		goto out;
	for (size_t i = 0; i < ncarveouts; i++) {
		for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++) {
			const struct carveout *c = &carveouts[i];
			uint32_t id, handle = 0;
			int fd, back, ret;
			void *p;

			if (!kind_ok(c, kinds[k]))
				continue;
			id = co_must_alloc(dev, len, 1U << c->id, kinds[k], 0, c->id);
			if (!id)
				continue;
			fill_pattern(want, len, 0, 33);
			CHECK(am_write(dev, id, 0, want, len) == 0, "WRITE");
			fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
			if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
				goto next;
			ret = vgem_import(vgem, fd, &handle);
			if (!CHECK(ret == 0, "vgem import of a '%s' %s buffer: %s", c->name,
				   kind_name(kinds[k]), strerror(-ret)))
				goto next;
			check_counts(dev, id, 1, 1, 0, 1, "imported by vgem");
			back = vgem_export(vgem, handle);
			if (CHECK(back >= 0, "vgem re-export: %s", strerror(-back))) {
				CHECK(same_file(fd, back), "vgem re-exported another dma-buf");
				p = map_shared(back, len, PROT_READ, 0);
				if (p) {
					words_from(got, p, len);
					CHECK(find_pattern_mismatch(got, len, 0, 33) == len,
					      "'%s' %s: the importer's view differs at byte %zu",
					      c->name, kind_name(kinds[k]),
					      find_pattern_mismatch(got, len, 0, 33));
					munmap(p, len);
				}
				close(back);
			}
			CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
			check_counts(dev, id, 1, 1, 0, 0, "after vgem let go");
next:
			if (fd >= 0)
				close(fd);
			am_free(dev, id);
		}
	}
out:
	free(want);
	free(got);
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

/* ---- CACHE and CACHE_LIST ---- */

static int cache_op(int dev, uint32_t id, uint32_t op, uint64_t offset, uint64_t length)
{
	struct accmap_cache_op c = { .id = id, .op = op, .offset = offset, .length = length };

	return raw_ioctl(dev, ACCMAP_IOC_CACHE, &c);
}

/* CACHE_LIST; *done gets the done field (pre-filled with garbage). */
static int cache_list(int dev, const struct accmap_cache_op *ops, uint32_t count, uint32_t *done)
{
	struct accmap_cache_list l = {
		.ops = (uint64_t)(uintptr_t)ops, .count = count, .done = GARBAGE_U32,
	};
	int ret = raw_ioctl(dev, ACCMAP_IOC_CACHE_LIST, &l);

	*done = l.done;
	return ret;
}

struct buf {
	uint32_t id;
	uint64_t size;
	const char *what;
};

/* Buffers of every kind from the system heap and every carveout. */
static size_t make_buffers(int dev, struct buf *bufs, size_t max, bool with_carveouts)
{
	size_t n = 0, len = 3 * page_size();

	for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds) && n < max; k++) {
		uint32_t id = co_must_alloc(dev, len, ACCMAP_HEAP_MASK_SYSTEM, kinds[k], 0,
					    ACCMAP_HEAP_SYSTEM);

		if (id)
			bufs[n++] = (struct buf){ id, len, kind_name(kinds[k]) };
	}
	for (size_t i = 0; with_carveouts && i < ncarveouts; i++) {
		for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds) && n < max; k++) {
			uint32_t id;

			if (!kind_ok(&carveouts[i], kinds[k]))
				continue;
			id = co_must_alloc(dev, len, 1U << carveouts[i].id, kinds[k], 0,
					   carveouts[i].id);
			if (id)
				bufs[n++] = (struct buf){ id, len, carveouts[i].name };
		}
	}
	return n;
}

static void test_cache_ops(void)
{
	static const uint32_t ops[] = { ACCMAP_CACHE_WRITEBACK, ACCMAP_CACHE_INVALIDATE,
					ACCMAP_CACHE_WRITEBACK_INVALIDATE };
	struct accmap_cache_op list[3 * 4 * (3 + 3 * ACCMAP_HEAP_CARVEOUT_MAX)];
	struct buf bufs[3 + 3 * ACCMAP_HEAP_CARVEOUT_MAX];
	uint32_t count = 0, done;
	size_t n;
	int dev = open_with_carveouts();
	int ret;

	if (dev < 0)
		return;
	n = make_buffers(dev, bufs, TAP_ARRAY_SIZE(bufs), true);
	for (size_t b = 0; b < n; b++) {
		uint64_t sz = bufs[b].size, pg = page_size();
		const uint64_t ranges[4][2] = {
			{ 0, sz }, { 1, 1 }, { sz - 1, 1 }, { pg - 3, pg + 7 },
		};

		for (size_t o = 0; o < TAP_ARRAY_SIZE(ops); o++) {
			for (size_t r = 0; r < 4; r++) {
				ret = cache_op(dev, bufs[b].id, ops[o], ranges[r][0], ranges[r][1]);
				CHECK(ret == 0, "CACHE %s op %u [%llu, +%llu): %s", bufs[b].what,
				      ops[o], (unsigned long long)ranges[r][0],
				      (unsigned long long)ranges[r][1], strerror(-ret));
				list[count++] = (struct accmap_cache_op){
					.id = bufs[b].id, .op = ops[o],
					.offset = ranges[r][0], .length = ranges[r][1],
				};
			}
		}
	}
	ret = cache_list(dev, list, count, &done);
	CHECK(ret == 0 && done == count, "CACHE_LIST of %u entries: %s, done %u", count,
	      strerror(-ret), done);
	ret = cache_list(dev, list, 1, &done);
	CHECK(ret == 0 && done == 1, "CACHE_LIST of 1 entry: %s, done %u", strerror(-ret), done);

	/* The most entries a list may have, all on one buffer. */
	{
		struct accmap_cache_op *big = calloc(ACCMAP_CACHE_LIST_MAX, sizeof(*big));

		if (CHECK(big, "calloc")) {
			for (uint32_t i = 0; i < ACCMAP_CACHE_LIST_MAX; i++)
				big[i] = (struct accmap_cache_op){
					.id = bufs[0].id, .op = ops[i % 3], .offset = i % 64,
					.length = 64,
				};
			ret = cache_list(dev, big, ACCMAP_CACHE_LIST_MAX, &done);
			CHECK(ret == 0 && done == ACCMAP_CACHE_LIST_MAX,
			      "CACHE_LIST of ACCMAP_CACHE_LIST_MAX entries: %s, done %u",
			      strerror(-ret), done);
			free(big);
		}
	}
	close(dev);
}

static void test_cache_errors(void)
{
	uint32_t id, unalloc, stale;
	uint64_t sz;
	int dev = am_open();

	if (dev < 0)
		return;
	sz = 2 * page_size();
	id = co_must_alloc(dev, sz, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, ACCMAP_HEAP_SYSTEM);
	if (!id || !CHECK(am_create(dev, sz, &unalloc) == 0, "CREATE") ||
	    !CHECK(am_create(dev, sz, &stale) == 0 && am_free(dev, stale) == 0, "CREATE/FREE"))
		goto out;

	/* EINVAL: the operation itself. */
	CHECK(cache_op(dev, id, 0, 0, 1) == -EINVAL, "op 0");
	CHECK(cache_op(dev, id, 4, 0, 1) == -EINVAL, "op 4");
	CHECK(cache_op(dev, id, ~0U, 0, 1) == -EINVAL, "op ~0");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_WRITEBACK, 0, 0) == -EINVAL, "length 0");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_WRITEBACK, ~0ULL, 2) == -EINVAL,
	      "offset + length overflows");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_WRITEBACK, 1, ~0ULL) == -EINVAL,
	      "length ~0 from offset 1 overflows");
	/* The argument is checked before the id is looked up. */
	CHECK(cache_op(dev, 0, 0, 0, 1) == -EINVAL, "op 0 on id 0");
	/* ERANGE: outside the buffer. */
	CHECK(cache_op(dev, id, ACCMAP_CACHE_INVALIDATE, sz, 1) == -ERANGE, "offset = size");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_INVALIDATE, 0, sz + 1) == -ERANGE, "size + 1");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_INVALIDATE, sz - 1, 2) == -ERANGE, "last byte + 1");
	CHECK(cache_op(dev, id, ACCMAP_CACHE_INVALIDATE, ~0ULL - 1, 1) == -ERANGE, "far offset");
	/* ENOENT, ENODATA. */
	CHECK(cache_op(dev, 0, ACCMAP_CACHE_WRITEBACK, 0, 1) == -ENOENT, "id 0");
	CHECK(cache_op(dev, stale, ACCMAP_CACHE_WRITEBACK, 0, 1) == -ENOENT, "freed id");
	CHECK(cache_op(dev, 0xffffffff, ACCMAP_CACHE_WRITEBACK, 0, 1) == -ENOENT, "id ~0");
	CHECK(cache_op(dev, unalloc, ACCMAP_CACHE_WRITEBACK, 0, 1) == -ENODATA,
	      "buffer without memory");
	/* ERANGE is checked against the size even before ALLOC. */
	CHECK(cache_op(dev, unalloc, ACCMAP_CACHE_WRITEBACK, sz, 1) == -ERANGE,
	      "outside a buffer without memory");
	/* Still fine afterwards. */
	CHECK(cache_op(dev, id, ACCMAP_CACHE_WRITEBACK_INVALIDATE, 0, sz) == 0, "good op");
out:
	close(dev);
}

static void test_cache_list_errors(void)
{
	struct accmap_cache_op ops[6];
	uint32_t id, unalloc, done;
	uint64_t sz = 2 * page_size();
	void *guard;
	int dev = am_open();

	if (dev < 0)
		return;
	id = co_must_alloc(dev, sz, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, ACCMAP_HEAP_SYSTEM);
	if (!id || !CHECK(am_create(dev, sz, &unalloc) == 0, "CREATE"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(ops); i++)
		ops[i] = (struct accmap_cache_op){ .id = id, .op = ACCMAP_CACHE_WRITEBACK,
						   .offset = i, .length = 1 };

	/* The list header: EINVAL, and done not written. */
	{
		struct accmap_cache_list l = { .ops = (uintptr_t)ops, .count = 1, .pad = 1,
					       .done = GARBAGE_U32 };

		CHECK(raw_ioctl(dev, ACCMAP_IOC_CACHE_LIST, &l) == -EINVAL && l.done == GARBAGE_U32,
		      "pad 1: EINVAL, done untouched");
		l.pad = 0;
		l.pad2 = 1;
		CHECK(raw_ioctl(dev, ACCMAP_IOC_CACHE_LIST, &l) == -EINVAL && l.done == GARBAGE_U32,
		      "pad2 1: EINVAL, done untouched");
	}
	CHECK(cache_list(dev, ops, 0, &done) == -EINVAL && done == GARBAGE_U32, "count 0");
	CHECK(cache_list(dev, ops, ACCMAP_CACHE_LIST_MAX + 1, &done) == -EINVAL &&
	      done == GARBAGE_U32, "count ACCMAP_CACHE_LIST_MAX + 1");
	CHECK(cache_list(dev, ops, ~0U, &done) == -EINVAL, "count ~0");

	/* EFAULT: the entries cannot be read. */
	CHECK(cache_list(dev, NULL, 1, &done) == -EFAULT && done == GARBAGE_U32, "ops NULL");
	CHECK(cache_list(dev, (void *)(uintptr_t)1, 1, &done) == -EFAULT, "ops 1");
	guard = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (CHECK(guard != MAP_FAILED, "mmap")) {
		struct accmap_cache_op *edge;

		munmap((char *)guard + page_size(), page_size());
		/* One good entry at the end of the page, the second beyond it. */
		edge = (struct accmap_cache_op *)((char *)guard + page_size()) - 1;
		*edge = ops[0];
		CHECK(cache_list(dev, edge, 2, &done) == -EFAULT, "entries past a mapping's end");
		CHECK(cache_list(dev, edge, 1, &done) == 0 && done == 1, "the one readable entry");
		munmap(guard, page_size());
	}

	/* A failing entry: its errno, and done is its index. */
	{
		struct {
			const char *what;
			struct accmap_cache_op op;
			int err;
		} bad[] = {
			{ "op 0", { id, 0, 0, 1 }, EINVAL },
			{ "op 4", { id, 4, 0, 1 }, EINVAL },
			{ "length 0", { id, ACCMAP_CACHE_WRITEBACK, 0, 0 }, EINVAL },
			{ "overflow", { id, ACCMAP_CACHE_WRITEBACK, ~0ULL, 2 }, EINVAL },
			{ "outside", { id, ACCMAP_CACHE_INVALIDATE, sz, 1 }, ERANGE },
			{ "id 0", { 0, ACCMAP_CACHE_INVALIDATE, 0, 1 }, ENOENT },
			{ "no memory", { unalloc, ACCMAP_CACHE_INVALIDATE, 0, 1 }, ENODATA },
		};

		for (size_t b = 0; b < TAP_ARRAY_SIZE(bad); b++) {
			for (uint32_t at = 0; at < 6; at += 5) {
				struct accmap_cache_op l[6];
				int ret;

				memcpy(l, ops, sizeof(l));
				l[at] = bad[b].op;
				ret = cache_list(dev, l, 6, &done);
				CHECK(ret == -bad[b].err && done == at,
				      "CACHE_LIST with %s at entry %u: %s, done %u; expected %s",
				      bad[b].what, at, strerror(-ret), done, strerror(bad[b].err));
			}
		}
	}
	CHECK(cache_list(dev, ops, 6, &done) == 0 && done == 6, "good list afterwards");
out:
	close(dev);
}

/* ACCMAP_CARVEOUTS is for these tests; the VM run sets it from its setup. */
/*
 * ACCMAP_ALLOC_CONTIGUOUS from a carveout: served by it, marked
 * contiguous, and counted in its QUERY_HEAP contiguous until freed; a
 * buffer allocated without the flag is marked but not counted.
 */
static void test_carveout_contiguous(void)
{
	uint32_t flags = ACCMAP_ALLOC_CONTIGUOUS | ACCMAP_ALLOC_WRITECOMBINE;
	int dev = open_with_carveouts();

	if (dev < 0)
		return;
	for (size_t i = 0; i < ncarveouts; i++) {
		const struct carveout *c = &carveouts[i];
		struct accmap_heap_info before, during, after;
		uint64_t size = 4 * page_size();
		uint32_t id, plain;

		if (!CHECK_OK(am_query_heap(dev, c->id, &before)))
			continue;
		id = co_must_alloc(dev, size, 1U << c->id, flags, 0, c->id);
		plain = co_must_alloc(dev, size, 1U << c->id, ACCMAP_ALLOC_WRITECOMBINE, 0, c->id);
		if (CHECK_OK(am_query_heap(dev, c->id, &during)))
			CHECK(during.contiguous == before.contiguous + (id ? size : 0) &&
			      during.used == before.used + (id ? size : 0) + (plain ? size : 0),
			      "'%s': contiguous %llu used %llu, before %llu %llu", c->name,
			      (unsigned long long)during.contiguous,
			      (unsigned long long)during.used,
			      (unsigned long long)before.contiguous,
			      (unsigned long long)before.used);
		if (id)
			CHECK_OK(am_free(dev, id));
		if (plain)
			CHECK_OK(am_free(dev, plain));
		if (CHECK_OK(am_query_heap(dev, c->id, &after)))
			CHECK(after.contiguous == before.contiguous && after.used == before.used,
			      "'%s' after FREE: contiguous %llu used %llu", c->name,
			      (unsigned long long)after.contiguous,
			      (unsigned long long)after.used);
	}
	close(dev);
}

static const struct tap_test tests[] = {
	{ "carveout_configured", test_carveout_configured },
	{ "carveout_fill_and_free", test_carveout_fill_and_free },
	{ "carveout_alignment", test_carveout_alignment },
	{ "carveout_fallback_to_system", test_carveout_fallback_to_system },
	{ "carveout_cached_rule", test_carveout_cached_rule },
	{ "carveout_contiguous", test_carveout_contiguous },
	{ "carveout_map_and_rw", test_carveout_map_and_rw },
	{ "system_map_and_rw", test_system_map_and_rw },
	{ "carveout_vgem_import", test_carveout_vgem_import },
	{ "cache_ops", test_cache_ops },
	{ "cache_errors", test_cache_errors },
	{ "cache_list_errors", test_cache_list_errors },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap heaps and the page pool as user space sees them: QUERY_HEAP
 * (names, sizes, and bytes used following allocations exactly) and
 * QUERY_POOL (shape of the answer, misses on an empty pool, hits on
 * reuse), errno by errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

static uint32_t new_buffer(int dev, uint64_t size, uint32_t flags)
{
	uint32_t id = 0;
	int ret = am_create(dev, size, &id);

	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return 0;
	ret = am_alloc(dev, id, flags, 0);
	if (!CHECK(ret == 0, "ALLOC(id %u): %s", id, strerror(-ret)))
		return 0;
	return id;
}

/* ==== QUERY_HEAP ==== */

/* A QUERY_HEAP that must fail with err and leave its argument as it was. */
static void heap_expect(int dev, uint32_t heap, uint32_t pad, int err)
{
	struct accmap_heap_info in, a;

	memset(&in, GARBAGE_BYTE, sizeof(in));
	in.heap = heap;
	in.pad = pad;
	a = in;
	if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_QUERY_HEAP, &a), err))
		tap_diag("QUERY_HEAP heap %u pad %#x", heap, pad);
	CHECK(!memcmp(&a, &in, sizeof(a)), "refused QUERY_HEAP (heap %u) wrote its argument",
	      heap);
}

static void test_heap_bad_args(void)
{
	static const uint32_t heaps[] = { ACCMAP_HEAP_MAX, ACCMAP_HEAP_MAX + 1, 64, 1000,
					  0x80000000, ACCMAP_HEAP_NONE };
	static const uint32_t pads[] = { 1, 0x80000000, 0xffffffff };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(heaps); i++)
		heap_expect(dev, heaps[i], 0, EINVAL);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++)
		heap_expect(dev, ACCMAP_HEAP_SYSTEM, pads[i], EINVAL);
	close(dev);
}

static void test_heap_no_such_heap(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	/* The test machine has the system and user heaps only. */
	heap_expect(dev, 5, 0, ENODEV);
	/*
	 * Any id: QUERY_HEAP and ALLOC agree on which heaps exist (ALLOC
	 * with that heap alone fails with ENODEV exactly when there is none),
	 * except the user heap, which exists and which only FROM_VA fills,
	 * and the device heap, which SVM migration alone fills and which
	 * exists where the guest has device memory (ACCMAP_DEVMEM).
	 */
	for (uint32_t id = 1; id < ACCMAP_HEAP_MAX; id++) {
		struct accmap_alloc a = { .heap_mask = 1U << id, .heap = GARBAGE_U32 };
		bool devmem = am_devmem_expected();
		struct accmap_heap_info info;
		int q, al;

		if (!CHECK(am_create(dev, page_size(), &a.id) == 0, "CREATE"))
			break;
		q = am_query_heap(dev, id, &info);
		al = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
		if (id == ACCMAP_HEAP_USER)
			CHECK(q == 0 && al == -ENODEV,
			      "user heap: QUERY_HEAP says %s, ALLOC says %s", strerror(-q),
			      strerror(-al));
		else if (id == ACCMAP_HEAP_DEVICE)
			CHECK(q == (devmem ? 0 : -ENODEV) && al == -ENODEV,
			      "device heap (ACCMAP_DEVMEM=%s): QUERY_HEAP says %s, ALLOC says %s",
			      devmem ? "yes" : "no", strerror(-q), strerror(-al));
		else
			CHECK((q == -ENODEV) == (al == -ENODEV),
			      "heap %u: QUERY_HEAP says %s, ALLOC says %s", id, strerror(-q),
			      strerror(-al));
		CHECK(q == 0 || q == -ENODEV, "QUERY_HEAP heap %u: %s", id, strerror(-q));
		if (q == -ENODEV)
			CHECK(info.heap == id && info.total == GARBAGE_U64,
			      "QUERY_HEAP heap %u refused with ENODEV wrote its argument", id);
		am_free(dev, a.id);
	}
	close(dev);
}

static void test_heap_system_info(void)
{
	uint64_t memtotal = meminfo_total_bytes();
	struct accmap_heap_info info;
	int dev = am_open();
	int ret;

	if (dev < 0)
		return;
	ret = am_query_heap(dev, ACCMAP_HEAP_SYSTEM, &info);
	if (!CHECK(ret == 0, "QUERY_HEAP system: %s", strerror(-ret)))
		goto out;
	tap_diag("system heap: total %llu used %llu free %llu largest_free %llu, MemTotal %llu",
		 (unsigned long long)info.total, (unsigned long long)info.used,
		 (unsigned long long)info.free, (unsigned long long)info.largest_free,
		 (unsigned long long)memtotal);
	CHECK(info.heap == ACCMAP_HEAP_SYSTEM && info.pad == 0, "heap %u pad %#x", info.heap,
	      info.pad);
	CHECK(!memcmp(info.name, "system\0\0\0\0\0\0\0\0\0\0", ACCMAP_HEAP_NAME_LEN),
	      "name '%.16s' (or bytes after the NUL not zero)", info.name);
	CHECK(memtotal > 0, "no MemTotal in /proc/meminfo");
	/* MemTotal is in kB, rounded down: total lies in the same kB. */
	CHECK(info.total >= memtotal && info.total < memtotal + 1024,
	      "total %llu bytes, /proc/meminfo MemTotal %llu bytes",
	      (unsigned long long)info.total, (unsigned long long)memtotal);
	CHECK(info.free <= info.total, "free %llu above total %llu", (unsigned long long)info.free,
	      (unsigned long long)info.total);
	CHECK(info.free > 0, "free is 0");
	CHECK(info.largest_free == info.free, "largest_free %llu, free %llu (system heap)",
	      (unsigned long long)info.largest_free, (unsigned long long)info.free);
	CHECK(info.used <= info.total, "used %llu above total %llu", (unsigned long long)info.used,
	      (unsigned long long)info.total);
	CHECK(info.used % page_size() == 0, "used %llu is not whole pages",
	      (unsigned long long)info.used);
out:
	close(dev);
}

static uint64_t used_now(int dev)
{
	struct accmap_heap_info info;
	int ret = am_query_heap(dev, ACCMAP_HEAP_SYSTEM, &info);

	if (!CHECK(ret == 0, "QUERY_HEAP: %s", strerror(-ret)))
		return GARBAGE_U64;
	return info.used;
}

static void test_heap_system_used(void)
{
	size_t pg = page_size();
	uint64_t big = (5 << 20) + 1, big_r = (5 << 20) + pg;
	uint64_t small = 3 * pg;
	int dev = am_open(), other = am_open();
	uint32_t empty = 0, a, b, c;
	uint64_t base, u;
	int fd;

	if (dev < 0 || other < 0)
		goto out;
	base = used_now(dev);
	if (!CHECK(am_create(dev, big, &empty) == 0, "CREATE"))
		goto out;
	u = used_now(dev);
	CHECK(u == base, "used %llu after CREATE without memory, %llu before",
	      (unsigned long long)u, (unsigned long long)base);

	a = new_buffer(dev, big, 0);
	u = used_now(dev);
	CHECK(u == base + big_r, "used %llu after ALLOC of %llu, expected %llu",
	      (unsigned long long)u, (unsigned long long)big_r,
	      (unsigned long long)(base + big_r));
	b = new_buffer(other, small, ACCMAP_ALLOC_WRITECOMBINE);
	u = used_now(dev);
	CHECK(u == base + big_r + small, "used %llu after a second ALLOC, expected %llu",
	      (unsigned long long)u, (unsigned long long)(base + big_r + small));

	/* An import is the same memory: no change. */
	fd = am_get_fd(dev, a, O_RDWR | O_CLOEXEC);
	if (CHECK(fd >= 0, "GET_FD") && CHECK(am_from_fd(other, fd, &c) == 0, "FROM_FD")) {
		u = used_now(dev);
		CHECK(u == base + big_r + small, "used %llu after FROM_FD, expected %llu",
		      (unsigned long long)u, (unsigned long long)(base + big_r + small));
		CHECK(am_free(other, c) == 0, "FREE of the import");
	}

	/* FREE with the dma-buf open keeps the memory until it is closed. */
	CHECK(am_free(dev, a) == 0, "FREE");
	u = used_now(dev);
	CHECK(u == base + big_r + small, "used %llu after FREE with a dma-buf open, expected %llu",
	      (unsigned long long)u, (unsigned long long)(base + big_r + small));
	if (fd >= 0)
		close(fd);
	u = used_now(dev);
	CHECK(u == base + small, "used %llu after the dma-buf closed, expected %llu",
	      (unsigned long long)u, (unsigned long long)(base + small));
	CHECK(am_free(other, b) == 0, "FREE");
	u = used_now(dev);
	CHECK(u == base, "used %llu after every FREE, expected %llu", (unsigned long long)u,
	      (unsigned long long)base);
	CHECK(am_free(dev, empty) == 0, "FREE");
	CHECK(used_now(dev) == base, "used changed with FREE of a handle without memory");
out:
	if (other >= 0)
		close(other);
	if (dev >= 0)
		close(dev);
}

/* Closing a client gives its memory back. */
static void test_heap_used_client_close(void)
{
	int dev = am_open(), other = am_open();
	uint64_t base;

	if (dev < 0 || other < 0)
		goto out;
	base = used_now(dev);
	for (int i = 1; i <= 8; i++)
		new_buffer(other, (uint64_t)i * 65536, i & 1 ? ACCMAP_ALLOC_WRITECOMBINE : 0);
	CHECK(used_now(dev) == base + 36 * 65536, "used %llu with 8 buffers, expected %llu",
	      (unsigned long long)used_now(dev), (unsigned long long)(base + 36 * 65536));
	close(other);
	other = -1;
	CHECK(used_now(dev) == base, "used %llu after the client closed, expected %llu",
	      (unsigned long long)used_now(dev), (unsigned long long)base);
out:
	if (other >= 0)
		close(other);
	if (dev >= 0)
		close(dev);
}

/* ==== QUERY_POOL ==== */

static void test_pool_bad_pad(void)
{
	static const uint32_t pads[] = { 1, 0x80000000, 0xffffffff };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++) {
		struct accmap_pool_info in, a;

		memset(&in, GARBAGE_BYTE, sizeof(in));
		in.pad = pads[i];
		a = in;
		if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_QUERY_POOL, &a), EINVAL))
			tap_diag("QUERY_POOL pad %#x", pads[i]);
		CHECK(!memcmp(&a, &in, sizeof(a)), "refused QUERY_POOL wrote its argument");
	}
	close(dev);
}

static uint64_t pool_blocks(const struct accmap_pool_info *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->norders && i < ACCMAP_POOL_MAX_ORDERS; i++)
		n += p->orders[i].zeroed + p->orders[i].dirty;
	return n;
}

/* Every rule the header states about one answer of QUERY_POOL. */
static bool check_pool_shape(const struct accmap_pool_info *p, const char *when)
{
	uint64_t sum = 0;
	bool ok = true;

	ok &= CHECK(p->norders >= 1 && p->norders <= ACCMAP_POOL_MAX_ORDERS,
		    "%s: norders %u", when, p->norders);
	ok &= CHECK(p->pad == 0, "%s: pad %#x", when, p->pad);
	ok &= CHECK(p->cap != GARBAGE_U64 && p->hits != GARBAGE_U64 &&
		    p->misses != GARBAGE_U64 && p->shrunk != GARBAGE_U64,
		    "%s: a counter was not written", when);
	ok &= CHECK(p->pooled <= p->cap, "%s: pooled %llu above cap %llu", when,
		    (unsigned long long)p->pooled, (unsigned long long)p->cap);
	ok &= CHECK(p->shrunk % page_size() == 0, "%s: shrunk %llu is not whole pages", when,
		    (unsigned long long)p->shrunk);
	if (!ok || p->norders > ACCMAP_POOL_MAX_ORDERS)
		return false;
	ok &= CHECK(p->orders[0].order == 0, "%s: the smallest order is %u, not 0 (one page)",
		    when, p->orders[0].order);
	for (uint32_t i = 0; i < p->norders; i++) {
		const struct accmap_pool_order *o = &p->orders[i];

		if (i)
			ok &= CHECK(o->order > p->orders[i - 1].order,
				    "%s: orders not ascending (%u after %u)", when, o->order,
				    p->orders[i - 1].order);
		ok &= CHECK(o->order < 32 && o->block_size == (uint64_t)page_size() << o->order,
			    "%s: order %u has block_size %llu", when, o->order,
			    (unsigned long long)o->block_size);
		ok &= CHECK(o->pad == 0, "%s: order %u pad %#x", when, o->order, o->pad);
		sum += o->block_size * (o->zeroed + o->dirty);
	}
	ok &= CHECK(p->pooled == sum, "%s: pooled %llu, sum of the free lists %llu", when,
		    (unsigned long long)p->pooled, (unsigned long long)sum);
	/* Entries past norders are not in use. */
	for (uint32_t i = p->norders; i < ACCMAP_POOL_MAX_ORDERS; i++) {
		const struct accmap_pool_order *o = &p->orders[i];

		ok &= CHECK(!o->order && !o->pad && !o->block_size && !o->zeroed && !o->dirty,
			    "%s: unused entry %u not zero", when, i);
	}
	return ok;
}

static bool query_pool(int dev, struct accmap_pool_info *p, const char *when)
{
	int ret = am_query_pool(dev, p);

	if (!CHECK(ret == 0, "%s: QUERY_POOL: %s", when, strerror(-ret)))
		return false;
	return check_pool_shape(p, when);
}

/*
 * The design's blocks are one page, 64 KiB and 2 MiB, the latter two only
 * where larger than a page: with 4 KiB pages orders 0, 4 and 9, with
 * 16 KiB pages 0, 2 and 7, with 64 KiB pages 0 and 5.
 */
static void check_pool_sizes(const struct accmap_pool_info *p)
{
	const uint64_t larger[] = { 64ULL << 10, 2ULL << 20 };
	uint64_t want[3] = { page_size() };
	uint32_t n = 1;

	for (size_t i = 0; i < TAP_ARRAY_SIZE(larger); i++)
		if (larger[i] > want[n - 1])
			want[n++] = larger[i];
	if (!CHECK(p->norders == n, "%u orders with %zu-byte pages, expected %u", p->norders,
		   page_size(), n))
		return;
	for (uint32_t i = 0; i < n; i++)
		CHECK(p->orders[i].block_size == want[i],
		      "order list %u: blocks of %llu bytes (order %u), expected %llu", i,
		      (unsigned long long)p->orders[i].block_size, p->orders[i].order,
		      (unsigned long long)want[i]);
}

static void test_pool_info(void)
{
	struct accmap_pool_info p;
	int dev = am_open();

	if (dev < 0)
		return;
	if (query_pool(dev, &p, "first query")) {
		tap_diag("pool: %u orders, cap %llu pooled %llu hits %llu misses %llu shrunk %llu",
			 p.norders, (unsigned long long)p.cap, (unsigned long long)p.pooled,
			 (unsigned long long)p.hits, (unsigned long long)p.misses,
			 (unsigned long long)p.shrunk);
		check_pool_sizes(&p);
		CHECK(p.cap > 0 && p.cap <= total_ram_bytes(), "cap %llu, RAM %llu",
		      (unsigned long long)p.cap, (unsigned long long)total_ram_bytes());
	}
	close(dev);
}

/* Empties the pool through the shrinker; false if it did not empty. */
static bool pool_drop(int dev, struct accmap_pool_info *after, uint64_t *dropped)
{
	struct accmap_pool_info before;
	int fd;

	if (!CHECK(am_pool_wait_idle(dev, 20000) == 0, "the pool did not finish zeroing"))
		return false;
	if (!query_pool(dev, &before, "before dropping"))
		return false;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "open drop_caches: %s", strerror(errno)))
		return false;
	CHECK(write(fd, "2\n", 2) == 2, "write drop_caches: %s", strerror(errno));
	close(fd);
	if (!query_pool(dev, after, "after dropping"))
		return false;
	*dropped = after->shrunk - before.shrunk;
	return CHECK(after->pooled == 0 && pool_blocks(after) == 0,
		     "pool holds %llu bytes after the shrinker ran",
		     (unsigned long long)after->pooled) &&
	       CHECK(*dropped == before.pooled, "shrunk grew by %llu, the pool held %llu",
		     (unsigned long long)*dropped, (unsigned long long)before.pooled);
}

static void test_pool_misses_then_hits(void)
{
	size_t pg = page_size();
	struct accmap_pool_info p0, p1, p2, p3;
	uint64_t dropped, sizes_total = 0;
	const uint64_t sizes[] = { pg, 64 * 1024, (2 << 20) + 64 * 1024 + pg };
	uint32_t ids[TAP_ARRAY_SIZE(sizes)];
	int dev = am_open();
	uint32_t one;

	if (dev < 0)
		return;
	if (!pool_drop(dev, &p0, &dropped))
		goto out;

	/* One page from an empty pool: one miss, no hit. */
	one = new_buffer(dev, pg, 0);
	if (!one || !query_pool(dev, &p1, "after one page"))
		goto out;
	CHECK(p1.misses == p0.misses + 1 && p1.hits == p0.hits,
	      "one page from an empty pool: misses +%llu, hits +%llu (expected +1, +0)",
	      (unsigned long long)(p1.misses - p0.misses), (unsigned long long)(p1.hits - p0.hits));

	/* Larger buffers: at least one miss each, still no hit. */
	for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++) {
		ids[i] = new_buffer(dev, sizes[i], i & 1 ? ACCMAP_ALLOC_WRITECOMBINE : 0);
		sizes_total += sizes[i];
	}
	if (!query_pool(dev, &p2, "after more buffers"))
		goto out;
	CHECK(p2.misses >= p1.misses + 1 + 1 + 3 && p2.hits == p1.hits,
	      "buffers from an empty pool: misses +%llu, hits +%llu (expected at least +5, +0)",
	      (unsigned long long)(p2.misses - p1.misses), (unsigned long long)(p2.hits - p1.hits));

	/* Freed, they go to the pool (far below its cap) and get zeroed. */
	CHECK(am_free(dev, one) == 0, "FREE");
	for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++)
		CHECK(am_free(dev, ids[i]) == 0, "FREE");
	if (!CHECK(am_pool_wait_idle(dev, 20000) == 0, "the pool did not finish zeroing") ||
	    !query_pool(dev, &p3, "after FREE"))
		goto out;
	CHECK(p3.pooled == sizes_total + pg, "pooled %llu after FREE, expected %llu",
	      (unsigned long long)p3.pooled, (unsigned long long)(sizes_total + pg));

	/* The same page again: a hit, no miss. */
	one = new_buffer(dev, pg, 0);
	if (!one || !query_pool(dev, &p1, "page again"))
		goto out;
	CHECK(p1.hits == p3.hits + 1 && p1.misses == p3.misses,
	      "one page from the pool: hits +%llu, misses +%llu (expected +1, +0)",
	      (unsigned long long)(p1.hits - p3.hits), (unsigned long long)(p1.misses - p3.misses));
	CHECK(p1.pooled == p3.pooled - pg, "pooled %llu after a hit, expected %llu",
	      (unsigned long long)p1.pooled, (unsigned long long)(p3.pooled - pg));

	/* The same sizes again: hits. */
	for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++)
		ids[i] = new_buffer(dev, sizes[i], i & 1 ? 0 : ACCMAP_ALLOC_WRITECOMBINE);
	if (query_pool(dev, &p2, "same sizes again"))
		CHECK(p2.hits >= p1.hits + TAP_ARRAY_SIZE(sizes),
		      "reallocating the freed sizes: hits +%llu, misses +%llu",
		      (unsigned long long)(p2.hits - p1.hits),
		      (unsigned long long)(p2.misses - p1.misses));
out:
	close(dev);
}

static const struct tap_test tests[] = {
	{ "heap_bad_args", test_heap_bad_args },
	{ "heap_no_such_heap", test_heap_no_such_heap },
	{ "heap_system_info", test_heap_system_info },
	{ "heap_system_used", test_heap_system_used },
	{ "heap_used_client_close", test_heap_used_client_close },
	{ "pool_bad_pad", test_pool_bad_pad },
	{ "pool_info", test_pool_info },
	{ "pool_misses_then_hits", test_pool_misses_then_hits },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

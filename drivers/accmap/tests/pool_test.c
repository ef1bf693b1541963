// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's page pool.
 *
 * Every test makes its own pool.  Blocks a test holds are on its fixture's
 * list, so that a failed assertion still gives everything back.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/highmem.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../accmap.h"
#include "cache_model.h"

/**
 * struct pool_fixture - a test's pool and the blocks the test holds
 * @pool: the pool, NULL once the test destroyed it itself
 * @model: the software cache the pool cleans blocks in
 * @held: blocks taken and not given back, linked through page->lru
 * @nheld: pages in @held
 */
struct pool_fixture {
	struct accmap_pool *pool;
	struct cache_model *model;
	struct list_head held;
	unsigned long nheld;
};

/* What fixture_init() is given. */
struct pool_fixture_args {
	u64 cap;
	struct cache_model *model;
};

static int fixture_init(struct kunit_resource *res, void *context)
{
	struct pool_fixture_args *args = context;
	struct pool_fixture *fx;

	fx = kzalloc(sizeof(*fx), GFP_KERNEL);
	if (!fx)
		return -ENOMEM;
	fx->model = args->model;
	fx->pool = accmap_pool_create(args->cap, &args->model->cache);
	if (IS_ERR(fx->pool)) {
		int ret = PTR_ERR(fx->pool);

		kfree(fx);
		return ret;
	}
	INIT_LIST_HEAD(&fx->held);
	res->data = fx;
	return 0;
}

static void fixture_free(struct kunit_resource *res)
{
	struct pool_fixture *fx = res->data;
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &fx->held, lru) {
		list_del(&page->lru);
		__free_pages(page, compound_order(page));
	}
	if (fx->pool)
		accmap_pool_destroy(fx->pool);
	kfree(fx);
}

static struct pool_fixture *new_fixture(struct kunit *test, u64 cap)
{
	struct pool_fixture_args args = {
		.cap = cap,
		.model = cache_model_create(test),
	};
	struct pool_fixture *fx;

	fx = kunit_alloc_resource(test, fixture_init, fixture_free, GFP_KERNEL,
				  &args);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fx);
	return fx;
}

/* Takes a block of at most @max_pages pages; the fixture holds it. */
static struct page *take(struct kunit *test, struct pool_fixture *fx,
			 unsigned long max_pages, unsigned int *order)
{
	unsigned long no_alloc = 0;
	struct page *page;

	page = accmap_pool_alloc(fx->pool, max_pages, &no_alloc, 0, order);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_LE(test, 1UL << *order, max_pages);
	KUNIT_ASSERT_EQ(test, compound_order(page), *order);
	list_add(&page->lru, &fx->held);
	fx->nheld += 1UL << *order;
	return page;
}

/* Takes a block of exactly @order. */
static struct page *take_order(struct kunit *test, struct pool_fixture *fx,
			       unsigned int order)
{
	unsigned int got;
	struct page *page;

	page = take(test, fx, 1UL << order, &got);
	KUNIT_ASSERT_EQ(test, got, order);
	return page;
}

static void give(struct pool_fixture *fx, struct page *page)
{
	list_del(&page->lru);
	fx->nheld -= 1UL << compound_order(page);
	accmap_pool_free(fx->pool, page, false);
}

static void give_all(struct pool_fixture *fx)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &fx->held, lru)
		give(fx, page);
}

static void get_info(struct kunit *test, struct pool_fixture *fx,
		     struct accmap_pool_info *info)
{
	unsigned int i;

	accmap_pool_get_info(fx->pool, info);
	KUNIT_ASSERT_GE(test, info->norders, 1U);
	KUNIT_ASSERT_LE(test, info->norders, (u32)ACCMAP_POOL_MAX_ORDERS);
	KUNIT_EXPECT_EQ(test, info->orders[0].order, 0U);
	for (i = 1; i < info->norders; i++)
		KUNIT_EXPECT_GT(test, info->orders[i].order,
				info->orders[i - 1].order);
	KUNIT_EXPECT_EQ(test, info->pad, 0U);
}

static void drain(struct kunit *test, struct pool_fixture *fx)
{
	KUNIT_ASSERT_EQ(test, accmap_pool_drain_dirty(fx->pool), 0);
}

/* Bytes in the pool by the per-order counts. */
static u64 counted_bytes(const struct accmap_pool_info *info)
{
	u64 bytes = 0;
	unsigned int i;

	for (i = 0; i < info->norders; i++)
		bytes += (info->orders[i].zeroed + info->orders[i].dirty) <<
			 info->orders[i].order << PAGE_SHIFT;
	return bytes;
}

static void fill_block(struct page *page, unsigned int order, u8 byte)
{
	unsigned long i;

	for (i = 0; i < (1UL << order); i++) {
		void *p = kmap_local_page(page + i);

		memset(p, byte, PAGE_SIZE);
		kunmap_local(p);
	}
}

/* Checks every byte of @npages pages of the block at @page. */
static void expect_zero(struct kunit *test, struct page *page,
			unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		void *p = kmap_local_page(page + i);
		u8 *bad = memchr_inv(p, 0, PAGE_SIZE);
		long off = bad ? bad - (u8 *)p : -1;

		kunmap_local(p);
		KUNIT_EXPECT_EQ_MSG(test, off, -1L,
				    "page %lu of the block: byte %ld is not 0",
				    i, off);
		if (off >= 0)
			return;
	}
}

static void pool_orders(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info info;
	unsigned int i, j, order;
	struct page *page, *again;

	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.cap, (u64)SZ_8M);
	if (PAGE_SIZE == SZ_4K)
		KUNIT_EXPECT_EQ(test, info.norders, 3U);

	for (i = 0; i < info.norders; i++) {
		struct accmap_pool_info now;

		order = info.orders[i].order;
		page = take_order(test, fx, order);
		give(fx, page);

		/* Dirty, or zeroed already: on its own order's list. */
		get_info(test, fx, &now);
		KUNIT_EXPECT_EQ(test, now.pooled, (u64)PAGE_SIZE << order);
		for (j = 0; j < now.norders; j++)
			KUNIT_EXPECT_EQ(test,
					now.orders[j].zeroed + now.orders[j].dirty,
					j == i ? 1ULL : 0ULL);

		drain(test, fx);
		get_info(test, fx, &now);
		KUNIT_EXPECT_EQ(test, now.orders[i].zeroed, 1ULL);
		KUNIT_EXPECT_EQ(test, now.orders[i].dirty, 0ULL);

		again = take_order(test, fx, order);
		KUNIT_EXPECT_PTR_EQ(test, again, page);
		get_info(test, fx, &now);
		KUNIT_EXPECT_EQ(test, now.hits, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, now.misses, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, now.orders[i].zeroed, 0ULL);
		KUNIT_EXPECT_EQ(test, now.pooled, 0ULL);
	}

	/*
	 * One zeroed block per order now.  A request just short of an order
	 * gets the next order down from the pool, never a larger block.
	 */
	give_all(fx);
	drain(test, fx);
	for (i = 1; i < info.norders; i++) {
		take(test, fx, (1UL << info.orders[i].order) - 1, &order);
		KUNIT_EXPECT_EQ(test, order, info.orders[i - 1].order);
	}
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.hits, (u64)2 * info.norders - 1);
	KUNIT_EXPECT_EQ(test, info.orders[info.norders - 1].zeroed, 1ULL);
}

static void pool_zeroing(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info info;
	struct page *page, *again;
	unsigned int i, order;

	get_info(test, fx, &info);
	for (i = 0; i < info.norders; i++) {
		order = info.orders[i].order;

		/* Straight from the page allocator. */
		page = take_order(test, fx, order);
		expect_zero(test, page, 1UL << order);

		/* Through the worker. */
		fill_block(page, order, 0xff);
		give(fx, page);
		drain(test, fx);
		again = take_order(test, fx, order);
		KUNIT_EXPECT_PTR_EQ(test, again, page);
		expect_zero(test, again, 1UL << order);

		/*
		 * Taken again at once: the block is either still dirty (so
		 * a fresh one comes) or zeroed by now, never handed out dirty.
		 */
		fill_block(again, order, 0xff);
		give(fx, again);
		page = take_order(test, fx, order);
		expect_zero(test, page, 1UL << order);
		give_all(fx);
		drain(test, fx);
	}
}

static void pool_misses(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info info;
	unsigned int i, k;

	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, info.misses, 0ULL);

	for (i = 0; i < info.norders; i++)
		for (k = 0; k < 3; k++)
			take_order(test, fx, info.orders[i].order);

	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.hits, 0ULL);
	KUNIT_EXPECT_EQ(test, info.misses, (u64)3 * info.norders);
	KUNIT_EXPECT_EQ(test, info.pooled, 0ULL);

	/* Given back and taken again: hits, and no new miss. */
	give_all(fx);
	drain(test, fx);
	for (i = 0; i < info.norders; i++)
		for (k = 0; k < 3; k++)
			take_order(test, fx, info.orders[i].order);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.hits, (u64)3 * info.norders);
	KUNIT_EXPECT_EQ(test, info.misses, (u64)3 * info.norders);
}

/* Gives everything back, checking the cap after each block. */
static void give_all_capped(struct kunit *test, struct pool_fixture *fx)
{
	struct accmap_pool_info info;
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &fx->held, lru) {
		give(fx, page);
		get_info(test, fx, &info);
		KUNIT_EXPECT_LE(test, info.pooled, info.cap);
		KUNIT_EXPECT_EQ(test, info.pooled, counted_bytes(&info));
	}
}

static void pool_cap(struct kunit *test)
{
	struct pool_fixture *fx;
	struct accmap_pool_info info;
	unsigned int mid, k;
	u64 block;

	/* The second smallest order: 64 KiB with 4 KiB pages. */
	fx = new_fixture(test, 0);
	get_info(test, fx, &info);
	KUNIT_ASSERT_GE(test, info.norders, 2U);
	mid = info.orders[1].order;
	block = (u64)PAGE_SIZE << mid;

	/* Nothing kept. */
	KUNIT_EXPECT_EQ(test, info.cap, 0ULL);
	take_order(test, fx, mid);
	take_order(test, fx, 0);
	give_all_capped(test, fx);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.pooled, 0ULL);

	/* Room for two blocks: the third and the pages go back. */
	fx = new_fixture(test, 2 * block);
	for (k = 0; k < 4; k++)
		take_order(test, fx, 0);
	for (k = 0; k < 3; k++)
		take_order(test, fx, mid);
	/* Held blocks are a stack: the blocks go back first, then pages. */
	give_all_capped(test, fx);
	drain(test, fx);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.cap, 2 * block);
	KUNIT_EXPECT_EQ(test, info.pooled, 2 * block);
	KUNIT_EXPECT_EQ(test, info.orders[1].zeroed, 2ULL);

	/*
	 * A cap that is not a multiple of the block: one block fits and
	 * four pages after it; the cap is reported rounded down to pages.
	 */
	fx = new_fixture(test, block + 4 * PAGE_SIZE + 100);
	for (k = 0; k < 5; k++)
		take_order(test, fx, 0);
	for (k = 0; k < 2; k++)
		take_order(test, fx, mid);
	give_all_capped(test, fx);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.cap, block + 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, info.pooled, block + 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, info.orders[1].zeroed + info.orders[1].dirty,
			1ULL);
	KUNIT_EXPECT_EQ(test, info.orders[0].zeroed + info.orders[0].dirty,
			4ULL);
}

static void pool_shrink(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info info;
	unsigned long freed, total;
	unsigned int i, top;

	get_info(test, fx, &info);
	top = info.orders[info.norders - 1].order;
	for (i = 0; i < info.norders; i++) {
		take_order(test, fx, info.orders[i].order);
		take_order(test, fx, info.orders[i].order);
	}
	total = fx->nheld;
	give_all(fx);
	drain(test, fx);
	get_info(test, fx, &info);
	KUNIT_ASSERT_EQ(test, info.pooled, (u64)total << PAGE_SHIFT);

	/* Large orders first: one page asked, one top block given back. */
	freed = accmap_pool_shrink(fx->pool, 1);
	KUNIT_EXPECT_EQ(test, freed, 1UL << top);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.shrunk, (u64)PAGE_SIZE << top);
	KUNIT_EXPECT_EQ(test, info.pooled, (u64)(total - freed) << PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, info.orders[info.norders - 1].zeroed, 1ULL);
	KUNIT_EXPECT_EQ(test, info.orders[0].zeroed, 2ULL);

	/* Everything else. */
	freed += accmap_pool_shrink(fx->pool, ULONG_MAX);
	KUNIT_EXPECT_EQ(test, freed, total);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.pooled, 0ULL);
	KUNIT_EXPECT_EQ(test, info.shrunk, (u64)total << PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, counted_bytes(&info), 0ULL);

	/* Nothing left to give. */
	KUNIT_EXPECT_EQ(test, accmap_pool_shrink(fx->pool, 16), 0UL);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.shrunk, (u64)total << PAGE_SHIFT);

	/* Dirty blocks go too, whatever the worker has got to. */
	take_order(test, fx, top);
	fill_block(list_first_entry(&fx->held, struct page, lru), top, 0xff);
	give_all(fx);
	accmap_pool_shrink(fx->pool, ULONG_MAX);
	get_info(test, fx, &info);
	KUNIT_EXPECT_LE(test, info.pooled, (u64)PAGE_SIZE << top);
	drain(test, fx);
	accmap_pool_shrink(fx->pool, ULONG_MAX);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.pooled, 0ULL);
}

static void pool_destroy_dirty(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_16M);
	struct accmap_pool_info info;
	unsigned long dirty = 0;
	unsigned int i, k;
	struct page *page;

	/* Destroy must unregister the shrinker before the pool goes. */
	KUNIT_ASSERT_EQ(test, accmap_pool_register_shrinker(fx->pool), 0);

	get_info(test, fx, &info);
	for (i = 0; i < info.norders; i++) {
		for (k = 0; k < (32U >> i) + 1; k++) {
			page = take_order(test, fx, info.orders[i].order);
			fill_block(page, info.orders[i].order, 0xa5);
		}
	}
	give_all(fx);
	get_info(test, fx, &info);
	for (i = 0; i < info.norders; i++)
		dirty += info.orders[i].dirty;
	kunit_info(test, "destroying with %lu dirty blocks, %llu bytes pooled\n",
		   dirty, info.pooled);

	KUNIT_EXPECT_EQ(test, accmap_pool_destroy(fx->pool),
			(unsigned long)(info.pooled >> PAGE_SHIFT));
	fx->pool = NULL;
}

#define RANDOM_STEPS		3000
#define RANDOM_MAX_HELD		(SZ_32M >> PAGE_SHIFT)

/* A random block the fixture holds, or NULL. */
static struct page *random_held(struct pool_fixture *fx, struct rnd_state *rnd)
{
	struct page *page;
	unsigned long n = 0, pick;

	list_for_each_entry(page, &fx->held, lru)
		n++;
	if (!n)
		return NULL;
	pick = prandom_u32_state(rnd) % n;
	list_for_each_entry(page, &fx->held, lru)
		if (!pick--)
			return page;
	return NULL;
}

static void pool_random(struct kunit *test)
{
	u64 seed = get_random_u64();
	struct pool_fixture *fx;
	struct accmap_pool_info info, before;
	unsigned long takes = 0, step;
	struct rnd_state rnd;
	unsigned int order, i;
	struct page *page;
	u64 cap;

	kunit_info(test, "seed %llu\n", seed);
	prandom_seed_state(&rnd, seed);
	cap = (u64)(prandom_u32_state(&rnd) % (SZ_8M >> PAGE_SHIFT)) << PAGE_SHIFT;
	fx = new_fixture(test, cap);
	kunit_info(test, "cap %llu bytes\n", cap);

	for (step = 0; step < RANDOM_STEPS; step++) {
		u32 what = prandom_u32_state(&rnd) % 100;

		if (what < 45 && fx->nheld < RANDOM_MAX_HELD) {
			unsigned long max = 1 + prandom_u32_state(&rnd) % 1100;

			get_info(test, fx, &before);
			page = take(test, fx, max, &order);
			takes++;
			get_info(test, fx, &info);
			/* From the pool: all of it was zeroed by the worker. */
			if (info.hits != before.hits)
				expect_zero(test, page, 1UL << order);
			else
				expect_zero(test, page, 1);
			fill_block(page, order, prandom_u32_state(&rnd) | 1);
		} else if (what < 85) {
			page = random_held(fx, &rnd);
			if (page)
				give(fx, page);
		} else if (what < 95) {
			accmap_pool_shrink(fx->pool,
					   prandom_u32_state(&rnd) % 600);
		} else {
			drain(test, fx);
		}

		get_info(test, fx, &info);
		KUNIT_ASSERT_LE(test, info.pooled, info.cap);
		KUNIT_ASSERT_EQ(test, info.pooled, counted_bytes(&info));
		KUNIT_ASSERT_EQ(test, info.hits + info.misses, (u64)takes);
	}

	give_all(fx);
	drain(test, fx);
	get_info(test, fx, &info);
	for (i = 0; i < info.norders; i++)
		KUNIT_EXPECT_EQ(test, info.orders[i].dirty, 0ULL);
	KUNIT_EXPECT_LE(test, info.pooled, info.cap);
	kunit_info(test, "hits %llu misses %llu shrunk %llu pooled %llu\n",
		   info.hits, info.misses, info.shrunk, info.pooled);
}

/*
 * Every block the pool hands out is zero in memory, not only in the CPU's
 * cache (the software cache model stands for the cache).  A fresh block
 * was zeroed by the page allocator through the cache; a reused one by
 * the worker, over its last owner's data.  Without a clean after the
 * zeroing, the model's memory still holds CACHE_MODEL_STALE (fresh) or
 * the last owner's 0x5c (reused), which an invalidate would uncover.
 */
static void pool_blocks_clean(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info info;
	unsigned int i, order;
	struct page *page, *again;

	get_info(test, fx, &info);
	for (i = 0; i < info.norders; i++) {
		unsigned long bytes;
		void *cpu;

		order = info.orders[i].order;
		bytes = PAGE_SIZE << order;
		page = take_order(test, fx, order);
		KUNIT_EXPECT_TRUE_MSG(test,
				      cache_model_memory_is(fx->model, page, bytes, 0),
				      "fresh order-%u block not clean", order);

		/* The owner's data reaches memory (its own write-back). */
		cpu = page_address(page);
		memset(cpu, 0x5c, bytes);
		KUNIT_ASSERT_EQ(test, 0, accmap_cache_clean(&fx->model->cache,
							    page, 0, bytes));
		KUNIT_ASSERT_TRUE(test, cache_model_memory_is(fx->model, page,
							      bytes, 0x5c));
		give(fx, page);
		drain(test, fx);

		again = take_order(test, fx, order);
		KUNIT_ASSERT_PTR_EQ(test, again, page);
		KUNIT_EXPECT_TRUE_MSG(test,
				      cache_model_memory_is(fx->model, page, bytes, 0),
				      "reused order-%u block not clean", order);
		/* And what the owner's CPU sees after invalidating. */
		KUNIT_ASSERT_EQ(test, 0, fx->model->cache.ops->inval(&fx->model->cache,
								     page, 0, bytes));
		expect_zero(test, page, 1UL << order);
		give(fx, again);
	}
}

/*
 * Charged blocks (a task in a memory cgroup) come from the page allocator
 * and go back to it: never from the pool, never into it, so no block
 * carries one cgroup's charge to another owner.  They are clean too.
 */
static void pool_charged_bypasses_pool(struct kunit *test)
{
	struct pool_fixture *fx = new_fixture(test, SZ_8M);
	struct accmap_pool_info before, info;
	unsigned long no_alloc = 0;
	unsigned int order;
	struct page *page;

	/* A zeroed order-0 block in the pool that a charged caller must not get. */
	page = take_order(test, fx, 0);
	give(fx, page);
	drain(test, fx);
	get_info(test, fx, &before);
	KUNIT_ASSERT_EQ(test, before.orders[0].zeroed, 1ULL);

	page = accmap_pool_alloc(fx->pool, 1, &no_alloc, ACCMAP_POOL_CHARGE, &order);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, order, 0U);
	KUNIT_EXPECT_TRUE(test, cache_model_memory_is(fx->model, page,
						      PAGE_SIZE, 0));
	expect_zero(test, page, 1);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.hits, before.hits);
	KUNIT_EXPECT_EQ(test, info.misses, before.misses + 1);
	KUNIT_EXPECT_EQ(test, info.orders[0].zeroed, 1ULL);

	accmap_pool_free(fx->pool, page, true);
	get_info(test, fx, &info);
	KUNIT_EXPECT_EQ(test, info.pooled, before.pooled);
	KUNIT_EXPECT_EQ(test, info.orders[0].dirty, 0ULL);
}

static struct kunit_case pool_cases[] = {
	KUNIT_CASE(pool_blocks_clean),
	KUNIT_CASE(pool_charged_bypasses_pool),
	KUNIT_CASE(pool_orders),
	KUNIT_CASE(pool_zeroing),
	KUNIT_CASE(pool_misses),
	KUNIT_CASE(pool_cap),
	KUNIT_CASE(pool_shrink),
	KUNIT_CASE(pool_destroy_dirty),
	KUNIT_CASE(pool_random),
	{}
};

static struct kunit_suite pool_suite = {
	.name = "accmap-pool",
	.test_cases = pool_cases,
};

kunit_test_suite(pool_suite);

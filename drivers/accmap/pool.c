// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the page pool behind the system heap.
 *
 * Buffers are built from blocks of a few orders (4 KiB, 64 KiB and 2 MiB
 * with 4 KiB pages).  A freed block is kept whole on a per-order "dirty"
 * list; a kernel thread zeroes dirty blocks in the background, cleans
 * the zeroes out of the CPU caches to the point of coherency, and moves
 * the blocks to the order's "zeroed" list, from which later buffers are
 * built.  So the allocation path never zeroes or cleans a pooled block.
 *
 * Every block the pool hands out, pooled or fresh from the page
 * allocator, is zero in memory, not only in the CPU's cache: zeroing
 * writes through the cached linear map, and on a non-coherent system an
 * invalidate of the still-dirty zero lines (CACHE INVALIDATE by the new
 * owner, or a device's view of memory) would show whatever memory held
 * before, another buffer's data or the kernel's.
 *
 * Blocks charged to a memory cgroup never enter the pool (see
 * accmap_pool_alloc()): a pooled block would stay charged to the cgroup
 * that freed it, and nothing exported to modules can move a charge.  Nor
 * do blocks taken below 4 GiB: they would fill the pool with memory that
 * 32-bit DMA masters need and other buffers do not.
 *
 * Blocks above order 0 are compound pages (__GFP_COMP): their order is
 * recorded in the page itself, so a block comes back to the pool at the
 * order it was allocated with, whatever the buffer did with its pages.
 *
 * The pool keeps at most its cap; blocks freed beyond it go straight back
 * to the page allocator.  A shrinker gives pooled blocks back under memory
 * pressure.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/freezer.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "accmap.h"
#include "compat.h"

/*
 * Block sizes the pool keeps, smallest first: the page, 64 KiB (a common
 * large-page and IOMMU granule) and 2 MiB (a PMD with 4 KiB pages).  Their
 * orders are clamped to what the page allocator can give and duplicates
 * dropped, so with 64 KiB pages the pool has two lists rather than three.
 */
static const unsigned long accmap_pool_block_sizes[] = {
	PAGE_SIZE, SZ_64K, SZ_2M,
};

enum accmap_pool_state {
	ACCMAP_POOL_DIRTY,
	ACCMAP_POOL_ZEROED,
	ACCMAP_POOL_STATES,
};

/**
 * struct accmap_pool_list - the blocks of one order
 * @order: page order of every block here
 * @blocks: blocks by state, linked through the head page's lru
 * @count: blocks by state; the dirty count also includes the block of this
 *         order the worker is zeroing, which is on no list meanwhile
 */
struct accmap_pool_list {
	unsigned int order;
	struct list_head blocks[ACCMAP_POOL_STATES];
	unsigned long count[ACCMAP_POOL_STATES];
};

/**
 * struct accmap_pool - a page pool
 * @lock: protects @lists (blocks and counts), @pooled_pages, @dirty_pages,
 *        @zeroing_pages, @hits, @misses, @shrunk_pages and
 *        @scrub_failed.  Never held
 *        while allocating, freeing to the page allocator or zeroing.
 * @lists: one per order, smallest order first
 * @norders: entries used in @lists
 * @cap_pages: most pages the pool keeps; set at creation
 * @pooled_pages: pages in the pool, dirty (including the block being
 *                zeroed) or zeroed; never above @cap_pages
 * @dirty_pages: pages not zeroed yet, including the block being zeroed;
 *               read without @lock by wait conditions
 * @zeroing_pages: pages of the block the worker is zeroing, 0 if none
 * @hits: blocks handed out from the pool
 * @misses: blocks handed out from the page allocator
 * @shrunk_pages: pages the shrinker gave back
 * @scrub_failed: blocks the worker could not clean, given back to the page
 *                allocator instead of being pooled
 * @cache: how the worker and the allocation path clean blocks; set at
 *         creation
 * @worker: the thread that zeroes dirty blocks
 * @work_wait: the worker sleeps here while there is nothing to zero
 * @idle_wait: accmap_pool_drain_dirty() sleeps here until nothing is dirty
 * @shrinker: gives pooled blocks back under memory pressure, or NULL
 *            before accmap_pool_register_shrinker()
 */
struct accmap_pool {
	spinlock_t lock;	/* lists, counts, statistics: see @lock */
	struct accmap_pool_list lists[ACCMAP_POOL_MAX_ORDERS];
	unsigned int norders;
	unsigned long cap_pages;
	unsigned long pooled_pages;
	unsigned long dirty_pages;
	unsigned long zeroing_pages;
	u64 hits;
	u64 misses;
	u64 shrunk_pages;
	u64 scrub_failed;
	const struct accmap_cache *cache;

	struct task_struct *worker;
	wait_queue_head_t work_wait;
	wait_queue_head_t idle_wait;

	struct shrinker *shrinker;
};

static struct accmap_pool_list *accmap_pool_list(struct accmap_pool *pool,
						 unsigned int order)
{
	unsigned int i;

	for (i = 0; i < pool->norders; i++)
		if (pool->lists[i].order == order)
			return &pool->lists[i];
	return NULL;
}

/* The low zone flag: below 4 GiB where the system heap offers it. */
#ifdef CONFIG_ZONE_DMA32
#define ACCMAP_GFP_DMA32	__GFP_DMA32
#else
#define ACCMAP_GFP_DMA32	0
#endif

/*
 * Buffer pages are zeroed by the allocator (__GFP_ZERO: clear_page() of
 * each page of the block through the kernel's linear map, in one pass, as
 * the dma-buf system heap's) because user space sees them, and charged to
 * the caller's memory cgroup when @how says so, and taken from the low
 * zones (below 4 GiB) when it says that.  Large orders are only
 * taken if the allocator has them free: as the dma-buf system heap asks
 * for its large orders, without direct reclaim, compaction or waking
 * kswapd (no __GFP_RECLAIM), so that a cold allocation never stalls on a
 * compaction pass that a smaller order makes needless.  Order 0 may
 * reclaim.  A failure is an expected outcome, not worth a warning, at any
 * order.  Neither a large order's lack of reclaim nor order 0's
 * __GFP_RETRY_MAYFAIL lets a charge over the cgroup's limit call its OOM
 * killer: the allocation fails instead (a large order then falls back to
 * smaller ones, and order 0 reclaims in the cgroup first).
 */
static gfp_t accmap_pool_gfp(unsigned int order, unsigned int how)
{
	gfp_t gfp = GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN;

	if (how & ACCMAP_POOL_CHARGE)
		gfp |= __GFP_ACCOUNT;
	if (how & ACCMAP_POOL_DMA32)
		gfp = (gfp & ~__GFP_HIGHMEM) | ACCMAP_GFP_DMA32;
	if (order)
		return (gfp & ~__GFP_RECLAIM) | __GFP_COMP | __GFP_NORETRY;
	return gfp | __GFP_RETRY_MAYFAIL;
}

/* Takes a zeroed block of @pl's order, or returns NULL if there is none. */
static struct page *accmap_pool_take_zeroed(struct accmap_pool *pool,
					    struct accmap_pool_list *pl)
{
	struct page *page;

	spin_lock(&pool->lock);
	page = list_first_entry_or_null(&pl->blocks[ACCMAP_POOL_ZEROED],
					struct page, lru);
	if (page) {
		list_del(&page->lru);
		pl->count[ACCMAP_POOL_ZEROED]--;
		pool->pooled_pages -= 1UL << pl->order;
		pool->hits++;
	}
	spin_unlock(&pool->lock);
	return page;
}

/*
 * A zeroed block fresh from the page allocator, cleaned to the point of
 * coherency; NULL if the allocator has none, if it could not be cleaned,
 * or if a block asked below 4 GiB is not (then it goes straight back).
 */
static struct page *accmap_pool_fresh(struct accmap_pool *pool,
				      unsigned int order, unsigned int how)
{
	struct page *page;

	page = alloc_pages(accmap_pool_gfp(order, how), order);
	if (!page)
		return NULL;
	/*
	 * The low zones lie below 4 GiB wherever the system heap offers
	 * the flag (system_heap_dma32_bytes()); checked all the same.
	 */
	if (((how & ACCMAP_POOL_DMA32) &&
	     page_to_phys(page) + (PAGE_SIZE << order) > SZ_4G) ||
	    accmap_cache_clean(pool->cache, page, 0, PAGE_SIZE << order)) {
		__free_pages(page, order);
		return NULL;
	}
	spin_lock(&pool->lock);
	pool->misses++;
	spin_unlock(&pool->lock);
	return page;
}

/**
 * accmap_pool_alloc() - take a zeroed, clean block for a buffer
 * @pool: the pool
 * @max_pages: most pages the caller wants, at least 1
 * @no_alloc: orders (bit n for order n) not to ask the page allocator for
 *            any more; the caller starts each buffer with 0 and passes the
 *            same variable to every call for that buffer, so that an order
 *            the allocator failed to give is not asked for again
 * @how: 0, or ACCMAP_POOL_* flags for a block that comes from the page
 *       allocator, never from the pool, and must go back with
 *       accmap_pool_free(..., true): ACCMAP_POOL_CHARGE charges it to the
 *       calling task's memory cgroup (__GFP_ACCOUNT), ACCMAP_POOL_DMA32
 *       takes it below 4 GiB (from the low zones)
 * @order: set to the order of the block returned
 *
 * The largest order that fits in @max_pages is tried first, from the pool's
 * zeroed blocks (unless @how) and then from the page allocator, before
 * smaller orders.  Large orders come from the allocator only if it has
 * them free (no reclaim, no compaction); order 0 may reclaim.  Neither pool nor
 * allocator warn on failure.  Every byte of the block is zero, in memory
 * as well as in the CPU caches: the block is clean to the point of
 * coherency.  May sleep.
 *
 * Return: the block (its head page; order > 0 blocks are compound pages),
 * or NULL if not even one page could be had (or the cgroup's limit is
 * reached).
 */
struct page *accmap_pool_alloc(struct accmap_pool *pool,
			       unsigned long max_pages,
			       unsigned long *no_alloc, unsigned int how,
			       unsigned int *order)
{
	unsigned int i;

	for (i = pool->norders; i-- > 0;) {
		struct accmap_pool_list *pl = &pool->lists[i];
		unsigned int o = pl->order;
		struct page *page;

		if (max_pages < (1UL << o))
			continue;

		page = how ? NULL : accmap_pool_take_zeroed(pool, pl);
		if (page) {
			*order = o;
			return page;
		}

		if (*no_alloc & BIT(o))
			continue;
		page = accmap_pool_fresh(pool, o, how);
		if (page) {
			*order = o;
			return page;
		}
		/* If this order is hard to get now, larger ones are too. */
		if (o)
			*no_alloc |= ~0UL << o;
	}
	return NULL;
}

/**
 * accmap_pool_free() - give a block back
 * @pool: the pool
 * @page: a block from accmap_pool_alloc() (its head page)
 * @unpooled: the block was allocated with a @how: it goes back to the page
 *            allocator (which uncharges it if it was charged)
 *
 * The block waits on its order's dirty list until the worker has zeroed
 * it.  If the pool is at its cap, or the block is not one the pool keeps,
 * it goes back to the page allocator instead.
 *
 * The caller guarantees that nothing can read or write the block through
 * accmap any more: the buffer's last reference is gone, and with it every
 * CPU mapping (their PTEs are special or PFN maps, which hold no page
 * reference and which GUP refuses), every importer's attachment and every
 * kernel mapping accmap made.  Another page reference taken meanwhile
 * (a speculative lookup by compaction or GUP-fast, which gives up on
 * seeing the page) reads no data, so the page's reference count says
 * nothing here and is not looked at.  Does not sleep.
 */
void accmap_pool_free(struct accmap_pool *pool, struct page *page,
		      bool unpooled)
{
	unsigned int order = compound_order(page);
	unsigned long n = 1UL << order;
	struct accmap_pool_list *pl;
	bool pooled = false;
	bool wake = false;

	pl = unpooled ? NULL : accmap_pool_list(pool, order);
	if (pl) {
		spin_lock(&pool->lock);
		if (pool->pooled_pages + n <= pool->cap_pages) {
			list_add_tail(&page->lru,
				      &pl->blocks[ACCMAP_POOL_DIRTY]);
			pl->count[ACCMAP_POOL_DIRTY]++;
			pool->pooled_pages += n;
			/* The worker sleeps only while nothing is dirty. */
			wake = !pool->dirty_pages;
			WRITE_ONCE(pool->dirty_pages, pool->dirty_pages + n);
			pooled = true;
		}
		spin_unlock(&pool->lock);
	}

	if (!pooled)
		__free_pages(page, order);
	else if (wake)
		wake_up(&pool->work_wait);
}

/*
 * Moves blocks to @victims until @nr_pages pages are there or the pool is
 * empty: dirty blocks before zeroed ones, since no work has gone into them
 * yet, and large orders before small ones, since those are what the rest
 * of the system finds hardest to get back.  The last block taken may
 * overshoot @nr_pages.  Blocks are taken from the cold end of each list.
 * Returns the pages moved.
 */
static unsigned long accmap_pool_take_victims(struct accmap_pool *pool,
					      unsigned long nr_pages,
					      struct list_head *victims)
{
	static const enum accmap_pool_state order_of_states[] = {
		ACCMAP_POOL_DIRTY, ACCMAP_POOL_ZEROED,
	};
	unsigned long taken = 0;
	unsigned long dirty_taken = 0;
	unsigned int s, i;

	lockdep_assert_held(&pool->lock);

	for (s = 0; s < ARRAY_SIZE(order_of_states); s++) {
		enum accmap_pool_state state = order_of_states[s];

		for (i = pool->norders; i-- > 0;) {
			struct accmap_pool_list *pl = &pool->lists[i];
			unsigned long n = 1UL << pl->order;
			struct list_head *list = &pl->blocks[state];

			while (taken < nr_pages && !list_empty(list)) {
				list_move(list->prev, victims);
				pl->count[state]--;
				taken += n;
				if (state == ACCMAP_POOL_DIRTY)
					dirty_taken += n;
			}
		}
	}
	pool->pooled_pages -= taken;
	WRITE_ONCE(pool->dirty_pages, pool->dirty_pages - dirty_taken);
	return taken;
}

static void accmap_pool_free_victims(struct list_head *victims)
{
	struct page *page, *next;

	list_for_each_entry_safe(page, next, victims, lru) {
		list_del(&page->lru);
		__free_pages(page, compound_order(page));
		cond_resched();
	}
}

/**
 * accmap_pool_shrink() - give pooled blocks back to the page allocator
 * @pool: the pool
 * @nr_pages: pages to give back
 *
 * Dirty blocks go first, then zeroed ones, larger orders before smaller
 * ones within each; the last block may take the count past @nr_pages.
 * The block the worker is zeroing stays.  This is the shrinker's scan.
 * May sleep.
 *
 * Return: the pages given back.
 */
unsigned long accmap_pool_shrink(struct accmap_pool *pool,
				 unsigned long nr_pages)
{
	LIST_HEAD(victims);
	unsigned long freed;
	bool idle;

	spin_lock(&pool->lock);
	freed = accmap_pool_take_victims(pool, nr_pages, &victims);
	pool->shrunk_pages += freed;
	idle = !pool->dirty_pages;
	spin_unlock(&pool->lock);

	if (idle)
		wake_up_all(&pool->idle_wait);
	accmap_pool_free_victims(&victims);
	return freed;
}

static unsigned long accmap_pool_shrinker_count(struct shrinker *shrinker,
						struct shrink_control *sc)
{
	struct accmap_pool *pool = accmap_shrinker_priv(shrinker);
	unsigned long count;

	spin_lock(&pool->lock);
	count = pool->pooled_pages - pool->zeroing_pages;
	spin_unlock(&pool->lock);
	return count ? count : SHRINK_EMPTY;
}

static unsigned long accmap_pool_shrinker_scan(struct shrinker *shrinker,
					       struct shrink_control *sc)
{
	struct accmap_pool *pool = accmap_shrinker_priv(shrinker);
	unsigned long freed;

	freed = accmap_pool_shrink(pool, sc->nr_to_scan);
	sc->nr_scanned = freed;
	return freed ? freed : SHRINK_STOP;
}

/* Takes the next dirty block off its list for the worker, or NULL. */
static struct page *accmap_pool_next_dirty(struct accmap_pool *pool)
{
	struct page *page = NULL;
	unsigned int i;

	spin_lock(&pool->lock);
	for (i = pool->norders; i-- > 0;) {
		struct accmap_pool_list *pl = &pool->lists[i];

		page = list_first_entry_or_null(&pl->blocks[ACCMAP_POOL_DIRTY],
						struct page, lru);
		if (page) {
			list_del(&page->lru);
			pool->zeroing_pages = 1UL << pl->order;
			break;
		}
	}
	spin_unlock(&pool->lock);
	return page;
}

/*
 * Zeroes a block through the kernel's cached mapping, then writes the
 * zeroes back to memory.  Returns 0, or the errno of the clean.
 */
static int accmap_pool_scrub_block(struct accmap_pool *pool, struct page *page,
				   unsigned int order)
{
	unsigned long i;

	for (i = 0; i < (1UL << order); i++) {
		clear_highpage(page + i);
		cond_resched();
	}
	return accmap_cache_clean(pool->cache, page, 0, PAGE_SIZE << order);
}

/*
 * The zeroing worker: a kernel thread of its own at nice 19, so that it
 * only uses CPU time nothing else wants (a workqueue's priority cannot be
 * lowered through an exported interface, and zeroing a large free can
 * take long).  It is freezable so that suspend does not wait for it.
 */
static int accmap_pool_worker(void *data)
{
	struct accmap_pool *pool = data;

	set_freezable();
	while (!kthread_should_stop()) {
		struct accmap_pool_list *pl;
		struct page *page;
		unsigned int order;
		bool scrubbed;
		bool idle;

		try_to_freeze();
		page = accmap_pool_next_dirty(pool);
		if (!page) {
			wait_event_freezable(pool->work_wait,
					     READ_ONCE(pool->dirty_pages) ||
					     kthread_should_stop());
			continue;
		}

		order = compound_order(page);
		scrubbed = !accmap_pool_scrub_block(pool, page, order);

		pl = accmap_pool_list(pool, order);
		spin_lock(&pool->lock);
		pl->count[ACCMAP_POOL_DIRTY]--;
		if (scrubbed) {
			/* Freshly zeroed is cache-hot: hand it out first. */
			list_add(&page->lru, &pl->blocks[ACCMAP_POOL_ZEROED]);
			pl->count[ACCMAP_POOL_ZEROED]++;
		} else {
			/* Not known clean: never handed out. */
			pool->pooled_pages -= 1UL << order;
			pool->scrub_failed++;
		}
		pool->zeroing_pages = 0;
		WRITE_ONCE(pool->dirty_pages, pool->dirty_pages - (1UL << order));
		idle = !pool->dirty_pages;
		spin_unlock(&pool->lock);

		if (!scrubbed) {
			pr_warn_ratelimited("could not clean a %lu KiB block; freed instead of pooled\n",
					    (PAGE_SIZE << order) >> 10);
			__free_pages(page, order);
		}
		if (idle)
			wake_up_all(&pool->idle_wait);
	}
	return 0;
}

/**
 * accmap_pool_drain_dirty() - wait until the worker has zeroed every block
 * @pool: the pool
 *
 * Blocks freed meanwhile are waited for too.  For tests and debugging.
 * May sleep.
 *
 * Return: 0, or -ERESTARTSYS if a fatal signal came first.
 */
int accmap_pool_drain_dirty(struct accmap_pool *pool)
{
	return wait_event_killable(pool->idle_wait,
				   !READ_ONCE(pool->dirty_pages));
}

/**
 * accmap_pool_get_info() - statistics of a pool
 * @pool: the pool
 * @info: filled in whole (unused entries and padding zeroed): the
 *        per-order block counts smallest order first, the cap, pooled
 *        bytes, hits, misses and bytes given back by the shrinker
 *
 * A consistent snapshot: all fields are read under the pool's lock.
 */
void accmap_pool_get_info(struct accmap_pool *pool,
			  struct accmap_pool_info *info)
{
	unsigned int i;

	memset(info, 0, sizeof(*info));
	spin_lock(&pool->lock);
	info->norders = pool->norders;
	for (i = 0; i < pool->norders; i++) {
		struct accmap_pool_list *pl = &pool->lists[i];

		info->orders[i].order = pl->order;
		info->orders[i].block_size = PAGE_SIZE << pl->order;
		info->orders[i].zeroed = pl->count[ACCMAP_POOL_ZEROED];
		info->orders[i].dirty = pl->count[ACCMAP_POOL_DIRTY];
	}
	info->cap = (u64)pool->cap_pages << PAGE_SHIFT;
	info->pooled = (u64)pool->pooled_pages << PAGE_SHIFT;
	info->hits = pool->hits;
	info->misses = pool->misses;
	info->shrunk = (u64)pool->shrunk_pages << PAGE_SHIFT;
	spin_unlock(&pool->lock);
}

/**
 * accmap_pool_create() - create a page pool and start its worker
 * @cap: most bytes the pool keeps (rounded down to whole pages); 0 keeps
 *       nothing, so every free goes back to the page allocator
 * @cache: how blocks are cleaned after zeroing; must outlive the pool
 *
 * The pool has no shrinker until accmap_pool_register_shrinker().
 *
 * Return: the pool, or an ERR_PTR: -ENOMEM, or the errno of starting the
 * worker thread.
 */
struct accmap_pool *accmap_pool_create(u64 cap,
				       const struct accmap_cache *cache)
{
	struct accmap_pool *pool;
	unsigned int i, s;
	int ret;

	BUILD_BUG_ON(ARRAY_SIZE(accmap_pool_block_sizes) >
		     ACCMAP_POOL_MAX_ORDERS);

	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);

	spin_lock_init(&pool->lock);
	init_waitqueue_head(&pool->work_wait);
	init_waitqueue_head(&pool->idle_wait);
	pool->cap_pages = min_t(u64, cap >> PAGE_SHIFT, ULONG_MAX);
	pool->cache = cache;

	for (i = 0; i < ARRAY_SIZE(accmap_pool_block_sizes); i++) {
		unsigned int order = min_t(unsigned int,
					   get_order(accmap_pool_block_sizes[i]),
					   ACCMAP_MAX_PAGE_ORDER);
		struct accmap_pool_list *pl;

		if (accmap_pool_list(pool, order))
			continue;
		pl = &pool->lists[pool->norders++];
		pl->order = order;
		for (s = 0; s < ACCMAP_POOL_STATES; s++)
			INIT_LIST_HEAD(&pl->blocks[s]);
	}

	pool->worker = kthread_create(accmap_pool_worker, pool, "accmap-pool");
	if (IS_ERR(pool->worker)) {
		ret = PTR_ERR(pool->worker);
		goto err_free_pool;
	}
	set_user_nice(pool->worker, MAX_NICE);
	wake_up_process(pool->worker);
	return pool;

err_free_pool:
	kfree(pool);
	return ERR_PTR(ret);
}

/**
 * accmap_pool_register_shrinker() - let memory pressure shrink a pool
 * @pool: the pool; accmap_pool_destroy() unregisters the shrinker
 *
 * The shrinker counts pooled pages, dirty and zeroed, and scans with
 * accmap_pool_shrink().
 *
 * Return: 0, or -ENOMEM or the errno of registering the shrinker.
 */
int accmap_pool_register_shrinker(struct accmap_pool *pool)
{
	struct shrinker *shrinker;

	shrinker = accmap_shrinker_create("accmap-pool",
					  accmap_pool_shrinker_count,
					  accmap_pool_shrinker_scan, pool);
	if (IS_ERR(shrinker))
		return PTR_ERR(shrinker);
	pool->shrinker = shrinker;
	return 0;
}

/**
 * accmap_pool_destroy() - stop a pool's worker and free all its blocks
 * @pool: the pool; no block it handed out may come back afterwards
 *
 * Dirty blocks still waiting for the worker are freed as they are.
 * May sleep.
 *
 * Return: the pages given back to the page allocator, so that tests can
 * check nothing stayed behind.
 */
unsigned long accmap_pool_destroy(struct accmap_pool *pool)
{
	LIST_HEAD(victims);
	unsigned long freed;

	if (pool->shrinker)
		accmap_shrinker_destroy(pool->shrinker);
	/* The worker finishes the block in hand and puts it on a list. */
	kthread_stop(pool->worker);

	spin_lock(&pool->lock);
	freed = accmap_pool_take_victims(pool, ULONG_MAX, &victims);
	WARN_ON(pool->pooled_pages || pool->dirty_pages ||
		pool->zeroing_pages);
	spin_unlock(&pool->lock);

	accmap_pool_free_victims(&victims);
	kfree(pool);
	return freed;
}

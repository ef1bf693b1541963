// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the cache state buffers reach their owners in, and of
 * the maintenance CACHE does, against the software model of a write-back
 * cache (cache_model.c): the system heap, its pool and cache.c run as in
 * the driver, with the model where the DMA API would clean and invalidate.
 */

#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../accmap.h"
#include "cache_model.h"

/**
 * struct cache_fixture - a device with a system heap over the cache model
 * @adev: the device, with only what heaps and handles use set up
 * @heap: its system heap (and, through it, @adev.pool)
 * @model: the cache model; @adev.cache is its cache
 */
struct cache_fixture {
	struct accmap_device adev;
	struct accmap_heap *heap;
	struct cache_model *model;
};

static int cache_fixture_init(struct kunit_resource *res, void *context)
{
	struct cache_model *model = context;
	struct cache_fixture *fx;

	fx = kzalloc(sizeof(*fx), GFP_KERNEL);
	if (!fx)
		return -ENOMEM;
	fx->model = model;
	fx->adev.cache = model->cache;
	mutex_init(&fx->adev.handles_lock);
	INIT_LIST_HEAD(&fx->adev.handles);
	fx->heap = accmap_system_heap_create(&fx->adev);
	if (!fx->heap) {
		kfree(fx);
		return -ENOMEM;
	}
	res->data = fx;
	return 0;
}

static void cache_fixture_free(struct kunit_resource *res)
{
	struct cache_fixture *fx = res->data;

	accmap_system_heap_destroy(fx->heap);
	kfree(fx);
}

static struct cache_fixture *new_cache_fixture(struct kunit *test)
{
	struct cache_model *model = cache_model_create(test);
	struct cache_fixture *fx;

	fx = kunit_alloc_resource(test, cache_fixture_init, cache_fixture_free,
				  GFP_KERNEL, model);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fx);
	return fx;
}

/* A handle of @size bytes with memory from the system heap. */
static struct accmap_handle *alloc_handle(struct kunit *test,
					  struct cache_fixture *fx, u64 size,
					  u32 flags)
{
	struct accmap_handle *handle;

	handle = accmap_handle_create(&fx->adev, size);
	KUNIT_ASSERT_NOT_NULL(test, handle);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_alloc(handle, fx->heap, flags,
						     0, 0));
	return handle;
}

/* The CPU's view of a buffer: memchr_inv() of every page against @value. */
static long first_byte_not(struct accmap_handle *handle, u8 value)
{
	unsigned long i;

	for (i = 0; i < handle->npages; i++) {
		u8 *p = kmap_local_page(handle->pages[i]);
		u8 *bad = memchr_inv(p, value, PAGE_SIZE);
		long off = bad ? (long)(i << PAGE_SHIFT) + (bad - p) : -1;

		kunmap_local(p);
		if (off >= 0)
			return off;
	}
	return -1;
}

static void fill(struct accmap_handle *handle, u8 value)
{
	unsigned long i;

	for (i = 0; i < handle->npages; i++) {
		u8 *p = kmap_local_page(handle->pages[i]);

		memset(p, value, PAGE_SIZE);
		kunmap_local(p);
	}
}

/*
 * The review's sequence: A writes a pattern into a cached 64 KiB buffer,
 * writes it back and frees it; B gets the same memory, invalidates it
 * (CACHE INVALIDATE, or a sync for reading) and reads.  B must read
 * zeroes.  If the block reached B zeroed only in the cache, the
 * invalidate drops the zero lines and B reads A's pattern.
 */
static void cache_reuse_then_invalidate(struct kunit *test)
{
	struct cache_fixture *fx = new_cache_fixture(test);
	struct accmap_handle *a, *b;
	unsigned long a_pfn;

	a = alloc_handle(test, fx, SZ_64K, 0);
	fill(a, 0x3c);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_cache_op(a, ACCMAP_CACHE_WRITEBACK,
							0, SZ_64K));
	a_pfn = page_to_pfn(a->pages[0]);
	accmap_handle_put(a);
	KUNIT_ASSERT_EQ(test, 0, accmap_pool_drain_dirty(fx->adev.pool));

	b = alloc_handle(test, fx, SZ_64K, 0);
	/* The same block, or the test proves nothing. */
	KUNIT_ASSERT_EQ(test, page_to_pfn(b->pages[0]), a_pfn);
	KUNIT_EXPECT_EQ(test, first_byte_not(b, 0), -1L);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_cache_op(b, ACCMAP_CACHE_INVALIDATE,
							0, SZ_64K));
	KUNIT_EXPECT_EQ_MSG(test, first_byte_not(b, 0), -1L,
			    "B reads A's data after invalidating");
	accmap_handle_put(b);
}

/*
 * The same for memory fresh from the page allocator (the pool empty, and
 * a 2 MiB buffer): the allocator zeroed it through the cache, and memory
 * still holds whatever it held before.
 */
static void cache_fresh_then_invalidate(struct kunit *test)
{
	struct cache_fixture *fx = new_cache_fixture(test);
	struct accmap_pool_info info;
	struct accmap_handle *b;

	b = alloc_handle(test, fx, SZ_2M, 0);
	accmap_pool_get_info(fx->adev.pool, &info);
	KUNIT_ASSERT_EQ(test, info.hits, 0ULL);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_cache_op(b, ACCMAP_CACHE_INVALIDATE,
							0, SZ_2M));
	KUNIT_EXPECT_EQ_MSG(test, first_byte_not(b, 0), -1L,
			    "fresh memory shows its old contents after invalidating");
	accmap_handle_put(b);
}

/*
 * CACHE on a range: only that range is maintained, down to the line; a
 * write-back makes the CPU's data memory's, an invalidate of a range
 * drops only the lines inside it.
 */
static void cache_range(struct kunit *test)
{
	struct cache_fixture *fx = new_cache_fixture(test);
	struct accmap_handle *h;
	u8 *p;

	h = alloc_handle(test, fx, 4 * PAGE_SIZE, 0);
	fill(h, 0x11);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_cache_op(h, ACCMAP_CACHE_WRITEBACK,
							0, 4 * PAGE_SIZE));
	fill(h, 0x22);
	cache_model_reset_counts(fx->model);
	KUNIT_ASSERT_EQ(test, 0, accmap_handle_cache_op(h, ACCMAP_CACHE_INVALIDATE,
							PAGE_SIZE + 128, 256));
	KUNIT_EXPECT_EQ(test, fx->model->inval_bytes, 256ULL);

	p = kmap_local_page(h->pages[1]);
	KUNIT_EXPECT_EQ(test, p[127], 0x22);
	KUNIT_EXPECT_EQ(test, p[128], 0x11);
	KUNIT_EXPECT_EQ(test, p[383], 0x11);
	KUNIT_EXPECT_EQ(test, p[384], 0x22);
	kunmap_local(p);
	accmap_handle_put(h);
}

/*
 * A write-combined or uncached buffer: no line of its cached alias may be
 * left (the whole buffer was flushed, not only cleaned), and memory is
 * zero; CACHE on it does nothing, the CPU does not cache it.
 */
static void cache_wc_alias_flushed(struct kunit *test)
{
	static const u32 flags[] = {
		ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED,
	};
	struct cache_fixture *fx = new_cache_fixture(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		struct accmap_handle *h;

		cache_model_reset_counts(fx->model);
		h = alloc_handle(test, fx, SZ_64K + PAGE_SIZE, flags[i]);
		KUNIT_EXPECT_GE(test, fx->model->inval_bytes,
				(u64)(SZ_64K + PAGE_SIZE));
		KUNIT_EXPECT_TRUE(test,
				  cache_model_memory_is(fx->model, h->pages[0],
							SZ_64K, 0));
		cache_model_reset_counts(fx->model);
		KUNIT_EXPECT_EQ(test, 0,
				accmap_handle_cache_op(h,
						       ACCMAP_CACHE_WRITEBACK_INVALIDATE,
						       0, SZ_64K));
		KUNIT_EXPECT_EQ(test, fx->model->inval_bytes, 0ULL);
		KUNIT_EXPECT_EQ(test, fx->model->clean_bytes, 0ULL);
		accmap_handle_put(h);
	}
}

/*
 * A read-only buffer (FROM_VA without write) is never invalidated: its
 * owner's newer CPU writes would be lost, and no device wrote it.
 */
static void cache_readonly_not_invalidated(struct kunit *test)
{
	struct cache_fixture *fx = new_cache_fixture(test);
	struct accmap_handle *h;

	h = alloc_handle(test, fx, SZ_16K, 0);
	h->readonly = true;
	fill(h, 0x77);
	cache_model_reset_counts(fx->model);
	KUNIT_ASSERT_EQ(test, 0,
			accmap_handle_cache_op(h, ACCMAP_CACHE_WRITEBACK_INVALIDATE,
					       0, SZ_16K));
	KUNIT_EXPECT_EQ(test, fx->model->inval_bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, fx->model->clean_bytes, (u64)SZ_16K);
	KUNIT_EXPECT_EQ(test, first_byte_not(h, 0x77), -1L);
	accmap_handle_put(h);
}

static struct kunit_case cache_cases[] = {
	KUNIT_CASE(cache_reuse_then_invalidate),
	KUNIT_CASE(cache_fresh_then_invalidate),
	KUNIT_CASE(cache_range),
	KUNIT_CASE(cache_wc_alias_flushed),
	KUNIT_CASE(cache_readonly_not_invalidated),
	{}
};

static struct kunit_suite cache_suite = {
	.name = "accmap-cache",
	.test_cases = cache_cases,
};

kunit_test_suite(cache_suite);

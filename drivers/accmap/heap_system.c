// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the system heap, buffers built from the page pool.
 *
 * A buffer is built from blocks of the largest orders that fit the
 * remaining size (2 MiB, 64 KiB, 4 KiB), taken from the page pool's zeroed
 * blocks or else from the page allocator (see pool.c), so that importers
 * see long physically contiguous runs.  The blocks stay whole: the handle
 * lists every 4 KiB page of them, and on free each block goes back to the
 * pool at its order.
 */

#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "accmap.h"

static unsigned int pool_cap_mb;
module_param(pool_cap_mb, uint, 0444);
MODULE_PARM_DESC(pool_cap_mb,
		 "Most memory the system heap's page pool keeps, in MiB (default 0: 1/16 of RAM)");

/* The pool's cap in bytes: pool_cap_mb, or 1/16 of RAM if it is 0. */
static u64 system_heap_pool_cap(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	if (!pool_cap_mb)
		return ram / 16;
	return min_t(u64, (u64)pool_cap_mb << 20, ram);
}

/* Gives back @n pages of @pages, which are whole blocks from the pool. */
static void system_heap_free_pages(struct accmap_pool *pool,
				   struct page **pages, unsigned long n)
{
	unsigned long i = 0;

	while (i < n) {
		struct page *page = pages[i];

		i += 1UL << compound_order(page);
		accmap_pool_free(pool, page);
	}
}

/*
 * A write-combined or uncached buffer must not leave dirty cache lines from
 * zeroing through the cached linear map: write them back and invalidate
 * them through the DMA API on accmap's device.
 */
static int system_heap_clean_caches(struct accmap_device *adev,
				    struct accmap_handle *handle)
{
	struct sg_table sgt;
	int ret;

	ret = sg_alloc_table_from_pages(&sgt, handle->pages, handle->npages, 0,
					handle->size, GFP_KERNEL);
	if (ret)
		return ret;
	ret = dma_map_sgtable(adev->dev, &sgt, DMA_BIDIRECTIONAL, 0);
	if (!ret)
		dma_unmap_sgtable(adev->dev, &sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&sgt);
	return ret;
}

static int system_heap_alloc(struct accmap_heap *heap,
			     struct accmap_handle *handle, u32 align)
{
	struct accmap_pool *pool = heap->adev->pool;
	unsigned long npages = handle->size >> PAGE_SHIFT;
	unsigned long no_alloc = 0;
	unsigned long filled = 0;
	struct page **pages;
	int ret;

	/* Page alignment is all the system heap offers or needs to offer. */
	(void)align;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -ENOMEM;

	while (filled < npages) {
		unsigned int order, i;
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free_pages;
		}
		page = accmap_pool_alloc(pool, npages - filled, &no_alloc,
					 &order);
		if (!page) {
			ret = -ENOMEM;
			goto err_free_pages;
		}
		for (i = 0; i < (1U << order); i++)
			pages[filled++] = page + i;
		cond_resched();
	}

	handle->pages = pages;
	handle->npages = npages;

	/* Pool blocks were zeroed through the cached map too. */
	if (!accmap_handle_cached(handle)) {
		ret = system_heap_clean_caches(heap->adev, handle);
		if (ret)
			goto err_unset;
	}
	return 0;

err_unset:
	handle->pages = NULL;
	handle->npages = 0;
err_free_pages:
	system_heap_free_pages(pool, pages, filled);
	kvfree(pages);
	return ret;
}

static void system_heap_free(struct accmap_heap *heap,
			     struct accmap_handle *handle)
{
	system_heap_free_pages(heap->adev->pool, handle->pages,
			       handle->npages);
	kvfree(handle->pages);
	handle->pages = NULL;
	handle->npages = 0;
}

/*
 * The system heap can hand out what the kernel counts as available plus
 * what its own pool holds, in pages that need not touch each other.
 */
static void system_heap_query(struct accmap_heap *heap,
			      struct accmap_heap_info *info)
{
	struct accmap_pool_info pool;
	u64 total = (u64)totalram_pages() << PAGE_SHIFT;
	u64 avail = (u64)si_mem_available() << PAGE_SHIFT;

	memset(&pool, 0, sizeof(pool));
	if (heap->adev->pool)
		accmap_pool_get_info(heap->adev->pool, &pool);
	info->total = total;
	info->free = min(total, avail + pool.pooled);
	info->largest_free = info->free;
}

static const struct accmap_heap_ops system_heap_ops = {
	.alloc = system_heap_alloc,
	.free = system_heap_free,
	.query = system_heap_query,
};

/**
 * accmap_system_heap_create() - create the system heap of a device
 * @adev: the device; its page pool (@adev->pool) is created with the heap,
 *        capped by the pool_cap_mb module parameter, with its shrinker
 *
 * Return: the heap, or NULL if out of memory.
 */
struct accmap_heap *accmap_system_heap_create(struct accmap_device *adev)
{
	struct accmap_pool *pool;
	struct accmap_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL);
	if (!heap)
		return NULL;

	pool = accmap_pool_create(system_heap_pool_cap());
	if (IS_ERR(pool))
		goto err_free_heap;
	if (accmap_pool_register_shrinker(pool))
		goto err_destroy_pool;

	heap->id = ACCMAP_HEAP_SYSTEM;
	heap->name = "system";
	heap->ops = &system_heap_ops;
	heap->adev = adev;
	atomic64_set(&heap->used, 0);
	adev->pool = pool;
	return heap;

err_destroy_pool:
	accmap_pool_destroy(pool);
err_free_heap:
	kfree(heap);
	return NULL;
}

/**
 * accmap_system_heap_destroy() - destroy a heap made by
 * accmap_system_heap_create()
 * @heap: the heap; no buffer may still use it
 *
 * The device's page pool goes with it, every pooled page freed.
 */
void accmap_system_heap_destroy(struct accmap_heap *heap)
{
	struct accmap_device *adev = heap->adev;

	WARN_ON(atomic64_read(&heap->used));
	accmap_pool_destroy(adev->pool);
	adev->pool = NULL;
	kfree(heap);
}

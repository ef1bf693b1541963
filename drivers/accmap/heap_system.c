// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the system heap, buffers built from the page allocator.
 *
 * A buffer is an array of order-0 pages.  They are taken from the largest
 * order that fits the remaining size and that the allocator can give
 * without effort (2 MiB, 64 KiB), then split, so that importers see long
 * physically contiguous runs while the handle frees page by page.
 */

#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "accmap.h"

static const unsigned int system_heap_orders[] = { 9, 4, 0 };

static struct page *system_heap_alloc_chunk(unsigned long remaining,
					    unsigned int *order)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(system_heap_orders); i++) {
		unsigned int o = system_heap_orders[i];
		gfp_t gfp = GFP_HIGHUSER | __GFP_ZERO | __GFP_ACCOUNT;
		struct page *page;

		if (remaining < (1UL << o))
			continue;
		/* Large orders only if they come cheaply. */
		if (o)
			gfp |= __GFP_NORETRY | __GFP_NOWARN;
		else
			gfp |= __GFP_RETRY_MAYFAIL;
		page = alloc_pages(gfp, o);
		if (page) {
			*order = o;
			return page;
		}
	}
	return NULL;
}

static void system_heap_free_pages(struct page **pages, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		__free_page(pages[i]);
}

/*
 * A write-combined buffer must not leave dirty cache lines behind from
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
	unsigned long npages = handle->size >> PAGE_SHIFT;
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
		page = system_heap_alloc_chunk(npages - filled, &order);
		if (!page) {
			ret = -ENOMEM;
			goto err_free_pages;
		}
		if (order)
			split_page(page, order);
		for (i = 0; i < (1U << order); i++)
			pages[filled++] = page + i;
		cond_resched();
	}

	handle->pages = pages;
	handle->npages = npages;

	if (handle->flags & ACCMAP_ALLOC_WRITECOMBINE) {
		ret = system_heap_clean_caches(heap->adev, handle);
		if (ret)
			goto err_unset;
	}
	return 0;

err_unset:
	handle->pages = NULL;
	handle->npages = 0;
err_free_pages:
	system_heap_free_pages(pages, filled);
	kvfree(pages);
	return ret;
}

static void system_heap_free(struct accmap_heap *heap,
			     struct accmap_handle *handle)
{
	system_heap_free_pages(handle->pages, handle->npages);
	kvfree(handle->pages);
	handle->pages = NULL;
	handle->npages = 0;
}

static const struct accmap_heap_ops system_heap_ops = {
	.alloc = system_heap_alloc,
	.free = system_heap_free,
};

/**
 * accmap_system_heap_create() - create the system heap of a device
 * @adev: the device
 *
 * Return: the heap, or NULL if out of memory.
 */
struct accmap_heap *accmap_system_heap_create(struct accmap_device *adev)
{
	struct accmap_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL);
	if (!heap)
		return NULL;
	heap->id = ACCMAP_HEAP_SYSTEM;
	heap->name = "system";
	heap->ops = &system_heap_ops;
	heap->adev = adev;
	atomic64_set(&heap->used, 0);
	return heap;
}

/**
 * accmap_system_heap_destroy() - destroy a heap made by
 * accmap_system_heap_create()
 * @heap: the heap; no buffer may still use it
 */
void accmap_system_heap_destroy(struct accmap_heap *heap)
{
	WARN_ON(atomic64_read(&heap->used));
	kfree(heap);
}

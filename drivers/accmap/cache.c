// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: CPU cache maintenance.
 *
 * Every clean and invalidate accmap does of its own goes through the two
 * operations of a struct accmap_cache, over physically contiguous runs of
 * memory.  On a device the operations are the DMA API's syncs on accmap's
 * own DMA device, which has no IOMMU and is not marked coherent: on a
 * non-coherent arm64 system they run the real clean and invalidate
 * instructions, on a coherent one (x86) they do nothing, which is right
 * there.  The KUnit tests put a software model of a write-back cache in
 * their place (tests/cache_model.c), so that the order of zeroing,
 * cleaning and invalidating can be checked where qemu models no cache.
 *
 * The rule the rest of accmap keeps (Documentation/userspace-api/
 * accmap.rst, "Cache state"): memory reaches a new owner zeroed and clean
 * to the point of coherency, so that no invalidate, by the owner or by a
 * device's DMA, can uncover what the memory held before; and accmap never
 * invalidates on its own initiative, only when a holder with write access
 * asks (ACCMAP_CACHE_INVALIDATE), so that it never discards a write.
 */

#include <linux/dma-mapping.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/pfn.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "accmap.h"

/*
 * Longest run one DMA API call maintains: keeps the time between two
 * cond_resched() calls bounded on a large buffer.
 */
#define ACCMAP_CACHE_CHUNK	SZ_2M

/*
 * Map the run for accmap's device without any CPU sync, then sync it in
 * the one direction asked: for the device, DMA_TO_DEVICE cleans; for the
 * CPU, DMA_FROM_DEVICE invalidates.  The mapping goes again at once: it
 * only lends the run a DMA address for the sync calls.
 */
static int accmap_cache_dma_sync(const struct accmap_cache *cache,
				 struct page *page, unsigned long offset,
				 size_t len, bool clean)
{
	struct device *dev = cache->dev;
	dma_addr_t addr;

	addr = dma_map_page_attrs(dev, page, offset, len, DMA_BIDIRECTIONAL,
				  DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(dev, addr))
		return -ENOMEM;
	if (clean)
		dma_sync_single_for_device(dev, addr, len, DMA_TO_DEVICE);
	else
		dma_sync_single_for_cpu(dev, addr, len, DMA_FROM_DEVICE);
	dma_unmap_page_attrs(dev, addr, len, DMA_BIDIRECTIONAL,
			     DMA_ATTR_SKIP_CPU_SYNC);
	return 0;
}

static int accmap_cache_dma_clean(const struct accmap_cache *cache,
				  struct page *page, unsigned long offset,
				  size_t len)
{
	return accmap_cache_dma_sync(cache, page, offset, len, true);
}

static int accmap_cache_dma_inval(const struct accmap_cache *cache,
				  struct page *page, unsigned long offset,
				  size_t len)
{
	return accmap_cache_dma_sync(cache, page, offset, len, false);
}

static const struct accmap_cache_ops accmap_cache_dma_ops = {
	.clean = accmap_cache_dma_clean,
	.inval = accmap_cache_dma_inval,
};

/**
 * accmap_cache_init_dma() - maintain caches through the DMA API
 * @cache: the cache to set up
 * @dev: a device with a DMA mask, no IOMMU and the platform's default
 *       coherence (not marked coherent on arm64)
 */
void accmap_cache_init_dma(struct accmap_cache *cache, struct device *dev)
{
	cache->ops = &accmap_cache_dma_ops;
	cache->dev = dev;
	cache->priv = NULL;
}

/* Runs @op over [page + offset, + len) a chunk at a time. */
static int accmap_cache_run(const struct accmap_cache *cache, bool clean,
			    struct page *page, unsigned long offset, size_t len)
{
	int (*op)(const struct accmap_cache *cache, struct page *page,
		  unsigned long offset, size_t len);
	int ret;

	op = clean ? cache->ops->clean : cache->ops->inval;
	page += offset >> PAGE_SHIFT;
	offset &= ~PAGE_MASK;
	while (len) {
		size_t n = min_t(size_t, len, ACCMAP_CACHE_CHUNK - offset);

		ret = op(cache, page, offset, n);
		if (ret)
			return ret;
		page += (offset + n) >> PAGE_SHIFT;
		offset = (offset + n) & ~PAGE_MASK;
		len -= n;
		if (len)
			cond_resched();
	}
	return 0;
}

/**
 * accmap_cache_clean() - write dirty lines back to the point of coherency
 * @cache: how to maintain caches
 * @page: first page of physically contiguous memory
 * @offset: first byte, from @page
 * @len: bytes
 *
 * The lines stay valid.  Nothing is lost.  May sleep.
 *
 * Return: 0, or -ENOMEM if the memory could not be mapped for maintenance
 * (then part of it may be clean, part not).
 */
int accmap_cache_clean(const struct accmap_cache *cache, struct page *page,
		       unsigned long offset, size_t len)
{
	return accmap_cache_run(cache, true, page, offset, len);
}

/**
 * accmap_cache_flush() - clean, then invalidate
 * @cache: how to maintain caches
 * @page: first page of physically contiguous memory
 * @offset: first byte, from @page
 * @len: bytes
 *
 * Leaves no line of the memory in the cache, dirty or clean, without
 * losing a write made before the call.  For memory nobody else can write
 * meanwhile (a block being handed out).  May sleep.
 *
 * Return: 0, or -ENOMEM as for accmap_cache_clean().
 */
int accmap_cache_flush(const struct accmap_cache *cache, struct page *page,
		       unsigned long offset, size_t len)
{
	int ret;

	ret = accmap_cache_run(cache, true, page, offset, len);
	if (!ret)
		ret = accmap_cache_run(cache, false, page, offset, len);
	return ret;
}

/**
 * accmap_handle_sg_table() - an sg_table over a buffer's struct pages
 * @handle: an allocated handle whose memory has struct pages
 * @sgt: the table to fill; the caller frees it with sg_free_table()
 *
 * Return: 0, -EINVAL if the memory has no struct pages, or -ENOMEM.
 */
int accmap_handle_sg_table(struct accmap_handle *handle, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	if (handle->pages)
		return sg_alloc_table_from_pages(sgt, handle->pages,
						 handle->npages, 0,
						 handle->size, GFP_KERNEL);
	if (!handle->phys_has_pages)
		return -EINVAL;

	/* One contiguous block: one entry per ACCMAP_CONTIG_SEG bytes. */
	ret = sg_alloc_table(sgt, accmap_contig_nents(handle->size), GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(sgt, sg, i) {
		u64 off = (u64)i * ACCMAP_CONTIG_SEG;

		sg_set_page(sg, pfn_to_page(PHYS_PFN(handle->phys + off)),
			    min_t(u64, handle->size - off, ACCMAP_CONTIG_SEG), 0);
	}
	return 0;
}

/*
 * The physically contiguous run of @handle's memory that holds byte @pos:
 * its first page, and its length from that page's start.  Page arrays
 * are cut where the next page does not follow in memory (pool blocks are
 * whole compound pages, so runs are at least a block long).
 */
static void accmap_handle_run(const struct accmap_handle *handle, u64 pos,
			      struct page **first, u64 *len)
{
	unsigned long i = pos >> PAGE_SHIFT, j;

	if (!handle->pages) {
		*first = pfn_to_page(PHYS_PFN(handle->phys) + i);
		*len = handle->size - ((u64)i << PAGE_SHIFT);
		return;
	}
	for (j = i + 1; j < handle->npages; j++)
		if (page_to_pfn(handle->pages[j]) !=
		    page_to_pfn(handle->pages[j - 1]) + 1)
			break;
	*first = handle->pages[i];
	*len = (u64)(j - i) << PAGE_SHIFT;
}

/**
 * accmap_handle_maintain() - clean or invalidate part of a buffer
 * @handle: an allocated handle
 * @offset: first byte
 * @length: bytes; @offset + @length is within the buffer
 * @clean: true to write back, false to invalidate
 *
 * Does nothing for buffers the CPU does not cache, and for memory without
 * struct pages (only ever write-combined or uncached).  May sleep.
 *
 * Return: 0, or -ENOMEM if the memory could not be mapped for maintenance.
 */
int accmap_handle_maintain(struct accmap_handle *handle, u64 offset,
			   u64 length, bool clean)
{
	const struct accmap_cache *cache = &handle->adev->cache;
	u64 pos = offset, end = offset + length;
	int ret;

	if (!accmap_handle_cached(handle))
		return 0;
	if (!handle->pages && !handle->phys_has_pages)
		return 0;

	while (pos < end) {
		struct page *first;
		u64 run, from, n;

		accmap_handle_run(handle, pos, &first, &run);
		from = pos & ~PAGE_MASK;
		n = min(run - from, end - pos);
		ret = accmap_cache_run(cache, clean, first, from, n);
		if (ret)
			return ret;
		pos += n;
	}
	return 0;
}

/**
 * accmap_check_cache_op() - validate one cache operation
 * @op: the operation
 * @size: size of the buffer, or U64_MAX to check only the operation
 *
 * Return: 0; -EINVAL for an unknown operation, a zero length or a range
 * that overflows; -ERANGE for a range outside the buffer.
 */
int accmap_check_cache_op(const struct accmap_cache_op *op, u64 size)
{
	u64 end;

	if (op->op < ACCMAP_CACHE_WRITEBACK ||
	    op->op > ACCMAP_CACHE_WRITEBACK_INVALIDATE)
		return -EINVAL;
	if (!op->length || check_add_overflow(op->offset, op->length, &end))
		return -EINVAL;
	if (end > size)
		return -ERANGE;
	return 0;
}

/**
 * accmap_handle_cache_op() - carry out a checked cache operation
 * @handle: an allocated handle
 * @op: ACCMAP_CACHE_*
 * @offset: first byte
 * @length: bytes, within the buffer
 *
 * The caller has checked that whoever asks may write the buffer if @op
 * invalidates.  A read-only buffer (FROM_VA without write) is never
 * invalidated: no device can have written it, and invalidating could drop
 * its owner's newer CPU writes.
 *
 * Return: 0, or -ENOMEM if the buffer could not be mapped for maintenance.
 */
int accmap_handle_cache_op(struct accmap_handle *handle, u32 op, u64 offset,
			   u64 length)
{
	int ret = 0;

	if (op & ACCMAP_CACHE_WRITEBACK)
		ret = accmap_handle_maintain(handle, offset, length, true);
	if (!ret && (op & ACCMAP_CACHE_INVALIDATE) && !handle->readonly)
		ret = accmap_handle_maintain(handle, offset, length, false);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: CPU cache maintenance of buffers.
 *
 * Maintenance goes through the DMA API on accmap's own device, which has
 * no IOMMU and is not marked coherent: on a non-coherent arm64 system the
 * DMA API runs the real clean and invalidate instructions, on a coherent
 * one it does nothing.  Each cached buffer is mapped once for that device
 * (without CPU sync) the first time it needs maintenance, and the
 * mapping's ranges are then synced as asked.
 */

#include <linux/dma-mapping.h>
#include <linux/overflow.h>
#include <linux/pfn.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "accmap.h"

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

/* The buffer mapped for accmap's device; caller holds handle->lock. */
static struct sg_table *accmap_handle_dev_sgt(struct accmap_handle *handle)
{
	struct device *dev = handle->adev->dev;
	struct sg_table *sgt;
	int ret;

	lockdep_assert_held(&handle->lock);
	if (handle->dev_sgt)
		return handle->dev_sgt;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = accmap_handle_sg_table(handle, sgt);
	if (ret)
		goto err_free_sgt;
	ret = dma_map_sgtable(dev, sgt, DMA_BIDIRECTIONAL, DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto err_free_table;
	handle->dev_sgt = sgt;
	return sgt;

err_free_table:
	sg_free_table(sgt);
err_free_sgt:
	kfree(sgt);
	return ERR_PTR(ret);
}

/**
 * accmap_handle_release_dev_sgt() - drop the mapping made for maintenance
 * @handle: a handle being released
 */
void accmap_handle_release_dev_sgt(struct accmap_handle *handle)
{
	struct sg_table *sgt = handle->dev_sgt;

	if (!sgt)
		return;
	dma_unmap_sgtable(handle->adev->dev, sgt, DMA_BIDIRECTIONAL,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
	handle->dev_sgt = NULL;
}

/**
 * accmap_handle_sync_range() - CPU cache maintenance over part of a buffer
 * @handle: an allocated handle
 * @offset: first byte
 * @length: bytes; @offset + @length is within the buffer
 * @for_cpu: true to make device writes visible to the CPU (invalidate),
 *           false to make CPU writes visible to devices (write back)
 * @dir: the DMA direction the maintenance is for
 *
 * Does nothing for buffers the CPU does not cache, and never invalidates
 * a read-only buffer: no device can have written it, and invalidating
 * could drop its owner's newer CPU writes.
 *
 * Return: 0, or -ENOMEM if the buffer could not be mapped for maintenance.
 */
int accmap_handle_sync_range(struct accmap_handle *handle, u64 offset,
			     u64 length, bool for_cpu,
			     enum dma_data_direction dir)
{
	struct device *dev = handle->adev->dev;
	struct scatterlist *sg;
	struct sg_table *sgt;
	u64 pos = 0, end = offset + length;
	unsigned int i;
	int ret = 0;

	if (!accmap_handle_cached(handle) || (for_cpu && handle->readonly))
		return 0;

	mutex_lock(&handle->lock);
	sgt = accmap_handle_dev_sgt(handle);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_unlock;
	}

	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 len = sg_dma_len(sg);
		u64 from = max(pos, offset), to = min(pos + len, end);

		if (from < to) {
			if (for_cpu)
				dma_sync_single_range_for_cpu(dev, sg_dma_address(sg),
							      from - pos, to - from, dir);
			else
				dma_sync_single_range_for_device(dev, sg_dma_address(sg),
								 from - pos, to - from, dir);
		}
		pos += len;
		if (pos >= end)
			break;
	}

out_unlock:
	mutex_unlock(&handle->lock);
	return ret;
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
 * Return: 0, or -ENOMEM if the buffer could not be mapped for maintenance.
 */
int accmap_handle_cache_op(struct accmap_handle *handle, u32 op, u64 offset,
			   u64 length)
{
	int ret = 0;

	if (op & ACCMAP_CACHE_WRITEBACK)
		ret = accmap_handle_sync_range(handle, offset, length, false,
					       DMA_TO_DEVICE);
	if (!ret && (op & ACCMAP_CACHE_INVALIDATE))
		ret = accmap_handle_sync_range(handle, offset, length, true,
					       DMA_FROM_DEVICE);
	return ret;
}

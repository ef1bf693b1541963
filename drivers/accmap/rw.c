// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: WRITE and READ, strided copies between user memory and a
 * buffer through the kernel's mapping of its pages.
 */

#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "accmap.h"

/**
 * accmap_check_rw() - validate an ACCMAP_IOC_WRITE/READ argument
 * @arg: the argument
 * @size: size of the buffer, or U64_MAX to check only the argument itself
 *
 * Return: 0; -EINVAL for flags, a zero element size or count, strides
 * shorter than an element when there is more than one, or arithmetic that
 * overflows; -ERANGE if an element would lie outside the buffer.
 */
int accmap_check_rw(const struct accmap_rw *arg, u64 size)
{
	u64 span, end;

	if (arg->flags & ~ACCMAP_RW_VALID_FLAGS)
		return -EINVAL;
	if (!arg->elem_size || !arg->count)
		return -EINVAL;
	if (arg->count > 1 && (arg->user_stride < arg->elem_size ||
			       arg->handle_stride < arg->elem_size))
		return -EINVAL;

	/* Last user byte: addr + (count - 1) * user_stride + elem_size. */
	if (check_mul_overflow(arg->count - 1, arg->user_stride, &span) ||
	    check_add_overflow(span, arg->elem_size, &span) ||
	    check_add_overflow(span, arg->addr, &end))
		return -EINVAL;

	if (check_mul_overflow(arg->count - 1, arg->handle_stride, &span) ||
	    check_add_overflow(span, arg->elem_size, &span) ||
	    check_add_overflow(span, arg->offset, &end))
		return -EINVAL;
	if (end > size)
		return -ERANGE;
	return 0;
}

/*
 * Write-combined and uncached buffers are read and written by user space and devices
 * around the CPU caches, but the kernel copies through the cached linear
 * map: invalidate before reading, write back after writing.
 */
static int accmap_rw_sync_page(struct accmap_handle *handle, struct page *page,
			       unsigned int off, unsigned int len,
			       enum dma_data_direction dir)
{
	struct device *dev = handle->adev->dev;
	dma_addr_t addr;

	addr = dma_map_page(dev, page, off, len, dir);
	if (dma_mapping_error(dev, addr))
		return -ENOMEM;
	dma_unmap_page_attrs(dev, addr, len, dir, DMA_ATTR_SKIP_CPU_SYNC);
	return 0;
}

/*
 * Contiguous (carveout) memory is reached through its own kernel mapping,
 * which already has the buffer's memory attribute.
 */
static int accmap_rw_contig(struct accmap_handle *handle, u64 pos,
			    void __user *uaddr, u64 len, bool write)
{
	while (len) {
		unsigned int n = min_t(u64, len, PAGE_SIZE);
		void *vaddr = handle->kaddr + pos;
		unsigned long left;

		if (write)
			left = copy_from_user(vaddr, uaddr, n);
		else
			left = copy_to_user(uaddr, vaddr, n);
		if (left)
			return -EFAULT;
		pos += n;
		uaddr += n;
		len -= n;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static int accmap_rw_chunk(struct accmap_handle *handle, u64 pos,
			   void __user *uaddr, u64 len, bool write)
{
	bool wc = !accmap_handle_cached(handle);

	if (!handle->pages)
		return accmap_rw_contig(handle, pos, uaddr, len, write);

	while (len) {
		struct page *page = handle->pages[pos >> PAGE_SHIFT];
		unsigned int off = offset_in_page(pos);
		unsigned int n = min_t(u64, len, PAGE_SIZE - off);
		unsigned long left;
		void *vaddr;
		int ret;

		if (wc && !write) {
			ret = accmap_rw_sync_page(handle, page, off, n,
						  DMA_FROM_DEVICE);
			if (ret)
				return ret;
		}

		vaddr = kmap_local_page(page);
		if (write)
			left = copy_from_user(vaddr + off, uaddr, n);
		else
			left = copy_to_user(uaddr, vaddr + off, n);
		kunmap_local(vaddr);
		if (left)
			return -EFAULT;

		if (wc && write) {
			ret = accmap_rw_sync_page(handle, page, off, n,
						  DMA_TO_DEVICE);
			if (ret)
				return ret;
		}

		pos += n;
		uaddr += n;
		len -= n;

		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/**
 * accmap_handle_rw() - copy between user memory and a buffer
 * @handle: the handle
 * @arg: the copy, already checked with accmap_check_rw() against the size
 * @write: true to copy into the buffer, false to copy out of it
 *
 * Return: 0; -ENODATA if the handle has no memory; -EFAULT if user memory
 * is not accessible; -EINTR if a fatal signal arrived.  Elements before
 * the failing one have been copied.
 */
int accmap_handle_rw(struct accmap_handle *handle, const struct accmap_rw *arg,
		     bool write)
{
	u64 elem = arg->elem_size, count = arg->count, i;
	int ret;

	if (!accmap_handle_allocated(handle))
		return -ENODATA;

	/* Dense on both sides: one long element. */
	if (count > 1 && arg->user_stride == elem && arg->handle_stride == elem) {
		elem *= count;
		count = 1;
	}

	for (i = 0; i < count; i++) {
		void __user *uaddr = u64_to_user_ptr(arg->addr + i * arg->user_stride);

		ret = accmap_rw_chunk(handle, arg->offset + i * arg->handle_stride,
				      uaddr, elem, write);
		if (ret)
			return ret;
	}
	return 0;
}

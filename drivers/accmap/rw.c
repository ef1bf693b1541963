// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: WRITE and READ, strided copies between user memory and a
 * buffer through the kernel's mapping of its pages.
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

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
 * Buffers the CPU does not cache are copied through a kernel mapping with
 * their own attribute: contiguous (carveout) memory has one already, page
 * arrays get a vmap with accmap_pgprot() on first use, kept until release.
 * Copying through the cached linear map instead would leave lines in the
 * cache that a later write-back could put over newer data written by user
 * space or a device.
 */
static void *accmap_rw_kaddr(struct accmap_handle *handle)
{
	void *vaddr;

	if (!handle->pages)
		return handle->kaddr;

	mutex_lock(&handle->lock);
	if (!handle->wc_vaddr)
		handle->wc_vaddr = vmap(handle->pages, handle->npages, VM_MAP,
					accmap_pgprot(handle, PAGE_KERNEL));
	vaddr = handle->wc_vaddr;
	mutex_unlock(&handle->lock);
	return vaddr;
}

static int accmap_rw_mapped(void *kaddr, u64 pos, void __user *uaddr, u64 len,
			    bool write)
{
	while (len) {
		unsigned int n = min_t(u64, len, PAGE_SIZE - offset_in_page(pos));
		unsigned long left;

		if (write)
			left = copy_from_user(kaddr + pos, uaddr, n);
		else
			left = copy_to_user(uaddr, kaddr + pos, n);
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

/* Cached page arrays: page by page through the kernel's linear map. */
static int accmap_rw_pages(struct accmap_handle *handle, u64 pos,
			   void __user *uaddr, u64 len, bool write)
{
	while (len) {
		struct page *page = handle->pages[pos >> PAGE_SHIFT];
		unsigned int off = offset_in_page(pos);
		unsigned int n = min_t(u64, len, PAGE_SIZE - off);
		unsigned long left;
		void *vaddr;

		vaddr = kmap_local_page(page);
		if (write)
			left = copy_from_user(vaddr + off, uaddr, n);
		else
			left = copy_to_user(uaddr, vaddr + off, n);
		kunmap_local(vaddr);
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

/**
 * accmap_handle_rw() - copy between user memory and a buffer
 * @handle: the handle
 * @arg: the copy, already checked with accmap_check_rw() against the size
 * @write: true to copy into the buffer, false to copy out of it
 *
 * Return: 0; -ENODATA if the handle has no memory; -EACCES to write a
 * read-only buffer; -EFAULT if user memory is not accessible; -EINTR if a
 * fatal signal arrived.  Elements before the failing one have been copied.
 */
int accmap_handle_rw(struct accmap_handle *handle, const struct accmap_rw *arg,
		     bool write)
{
	u64 elem = arg->elem_size, count = arg->count, i;
	void *kaddr = NULL;
	int ret;

	if (!accmap_handle_allocated(handle))
		return -ENODATA;
	if (write && handle->readonly)
		return -EACCES;
	if (!handle->pages || !accmap_handle_cached(handle)) {
		kaddr = accmap_rw_kaddr(handle);
		if (!kaddr)
			return -ENOMEM;
	}

	/* Dense on both sides: one long element. */
	if (count > 1 && arg->user_stride == elem && arg->handle_stride == elem) {
		elem *= count;
		count = 1;
	}

	for (i = 0; i < count; i++) {
		void __user *uaddr = u64_to_user_ptr(arg->addr + i * arg->user_stride);
		u64 pos = arg->offset + i * arg->handle_stride;

		if (kaddr)
			ret = accmap_rw_mapped(kaddr, pos, uaddr, elem, write);
		else
			ret = accmap_rw_pages(handle, pos, uaddr, elem, write);
		if (ret)
			return ret;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: user (CPU) mappings of buffers.
 *
 * A buffer is mapped through one of its dma-bufs, or through /dev/accmap
 * at the buffer's mmap() offset (mmap_offset.c).  Both kinds of vma behave
 * alike: shared only, the buffer's memory attribute, a handle reference
 * and a count in accmap_handle.maps each, one fault handler.  They differ
 * only in where the buffer starts in the vma's page offsets: at 0 for a
 * dma-buf, at the buffer's map_pgoff for /dev/accmap.
 *
 * User mappings are filled lazily: a fault inserts, as PFNs with the
 * mapping's memory attribute, the pages of the faulting address's 2 MiB
 * block of virtual addresses (one page table's worth on 4 KiB pages)
 * that the mapping covers.  Buffers are mostly written whole by the CPU,
 * so this takes one fault where page-at-a-time takes 512, as a
 * transparent huge page does for anonymous memory; a page already
 * present is left as it is.
 */

#include <linux/mm.h>
#include <linux/sizes.h>

#include "accmap.h"
#include "compat.h"

static void accmap_vm_open(struct vm_area_struct *vma)
{
	struct accmap_handle *handle = vma->vm_private_data;

	accmap_handle_get(handle);
	atomic_inc(&handle->maps);
}

/*
 * The mapping's reference may be the buffer's last (a /dev/accmap mapping
 * outlives the ids it was made through), dropped under munmap()'s
 * mmap_lock.
 */
static void accmap_vm_close(struct vm_area_struct *vma)
{
	struct accmap_handle *handle = vma->vm_private_data;

	atomic_dec(&handle->maps);
	accmap_handle_put_mm(handle);
}

/* Bytes of virtual address space one fault fills, at most. */
#define ACCMAP_FAULT_AROUND	SZ_2M

/*
 * Maps one page of the buffer at @addr.  In a writable mapping the entry
 * is made young and dirty up front, even for a read fault: nothing writes
 * these pages back, and CPUs that track dirtiness in software would
 * otherwise fault once more on the first write to every page.
 */
static vm_fault_t accmap_insert(struct vm_fault *vmf, unsigned long addr,
				unsigned long pfn)
{
	if (vmf->vma->vm_flags & VM_WRITE)
		return accmap_insert_pfn_dirty(vmf->vma, addr, pfn);
	return vmf_insert_pfn(vmf->vma, addr, pfn);
}

/*
 * The fault of both kinds of vma: @first is the vma page offset of the
 * buffer's first page, so page offset p is buffer page p - @first.
 */
static vm_fault_t accmap_fault(struct vm_fault *vmf, unsigned long first)
{
	struct vm_area_struct *vma = vmf->vma;
	struct accmap_handle *handle = vma->vm_private_data;
	unsigned long start, end, addr, pgoff;
	vm_fault_t ret;

	/* mmap checked the range; a page offset below @first wraps too. */
	if (vmf->pgoff - first >= handle->npages)
		return VM_FAULT_SIGBUS;

	/* The faulting page first: its result is the fault's result. */
	ret = accmap_insert(vmf, vmf->address & PAGE_MASK,
			    accmap_handle_pfn(handle, vmf->pgoff - first));
	if (ret != VM_FAULT_NOPAGE)
		return ret;

	/*
	 * Then the rest of the block around it.  A failure here (no memory
	 * for a page table) is not the fault's: the page will fault itself.
	 */
	start = max(vma->vm_start, ALIGN_DOWN(vmf->address, ACCMAP_FAULT_AROUND));
	end = min(vma->vm_end, ALIGN_DOWN(vmf->address, ACCMAP_FAULT_AROUND) +
		  ACCMAP_FAULT_AROUND);
	pgoff = vma->vm_pgoff - first + ((start - vma->vm_start) >> PAGE_SHIFT);
	for (addr = start; addr < end; addr += PAGE_SIZE, pgoff++) {
		if (addr == (vmf->address & PAGE_MASK))
			continue;
		if (accmap_insert(vmf, addr, accmap_handle_pfn(handle, pgoff)) !=
		    VM_FAULT_NOPAGE)
			break;
	}
	return VM_FAULT_NOPAGE;
}

/* A dma-buf's vma: page offsets are the buffer's own. */
static vm_fault_t accmap_dmabuf_vm_fault(struct vm_fault *vmf)
{
	return accmap_fault(vmf, 0);
}

/* A vma of /dev/accmap: page offsets start at the buffer's map_pgoff. */
static vm_fault_t accmap_dev_vm_fault(struct vm_fault *vmf)
{
	struct accmap_handle *handle = vmf->vma->vm_private_data;

	return accmap_fault(vmf, handle->map_pgoff);
}

static const struct vm_operations_struct accmap_dmabuf_vm_ops = {
	.open = accmap_vm_open,
	.close = accmap_vm_close,
	.fault = accmap_dmabuf_vm_fault,
};

static const struct vm_operations_struct accmap_dev_vm_ops = {
	.open = accmap_vm_open,
	.close = accmap_vm_close,
	.fault = accmap_dev_vm_fault,
};

/**
 * accmap_vma_map() - set up a user mapping of a buffer
 * @handle: an allocated handle; the mapping takes a reference of its own
 * @vma: the new vma
 * @first: the page offset (in @vma's file) of the buffer's first page:
 *         0 for a dma-buf, @handle->map_pgoff for /dev/accmap, whose
 *         mappings get their own vm_operations_struct so that the fault
 *         knows which
 * @readonly: the mapping may not write the buffer, now or later
 *
 * Return: 0; -EINVAL for a private mapping or a range that is not inside
 * the buffer; -EACCES for a writable mapping with @readonly.
 */
int accmap_vma_map(struct accmap_handle *handle, struct vm_area_struct *vma,
		   unsigned long first, bool readonly)
{
	unsigned long pages = vma_pages(vma);
	unsigned long start = vma->vm_pgoff - first;

	/*
	 * VM_MAYSHARE, not VM_SHARED: a shared mapping of a read-only file
	 * has VM_SHARED cleared by mmap, and is still not copy-on-write.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff < first || start >= handle->npages ||
	    pages > handle->npages - start)
		return -EINVAL;
	/* mprotect() may not add write access later either. */
	if (readonly) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}

	vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = accmap_pgprot(handle, vma->vm_page_prot);
	vma->vm_ops = first ? &accmap_dev_vm_ops : &accmap_dmabuf_vm_ops;
	vma->vm_private_data = handle;
	accmap_vm_open(vma);
	return 0;
}

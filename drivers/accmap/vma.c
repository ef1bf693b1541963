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
 * mapping's memory attribute, the pages of the faulting address's block
 * of virtual addresses that one page table maps (2 MiB on 4 KiB pages,
 * 32 MiB on 16 KiB pages) and that the mapping covers.  Buffers are
 * mostly written whole by the CPU, so this takes one fault where
 * page-at-a-time takes 512 (or 2048), as a transparent huge page does for
 * anonymous memory; a page already present is left as it is.  The block
 * is filled in one walk of its page table, under its lock once
 * (apply_to_page_range()), not one walk and one lock per page; but where
 * a module cannot call set_pte_at() (ACCMAP_NO_SET_PTE_AT: Kbuild says
 * which kernels), each page of the block goes through the kernel's
 * insert, as the faulting page does.
 *
 * The mappings are VM_PFNMAP, their entries special PFN entries, never
 * normal (refcounted, rmapped) ones as vm_insert_pages() or VM_MIXEDMAP
 * would make for page-backed buffers: get_user_pages() and its fast path
 * refuse special entries, so no O_DIRECT read, vmsplice() or FROM_VA of
 * such a mapping can pin a buffer's pages.  A pin may outlive the buffer,
 * and accmap's pages then go back to its page pool whatever their
 * reference count, and on to a new owner, whose data the pin would
 * expose or overwrite.  Carveout pages, which may have no struct page,
 * take the same path.
 */

#include <linux/mm.h>

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

/*
 * Bytes of virtual address space one fault fills, at most: what one page
 * table maps, so that a block is aligned to it and never crosses two.
 */
#define ACCMAP_FAULT_AROUND	PMD_SIZE

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

#ifndef ACCMAP_NO_SET_PTE_AT
/**
 * struct accmap_fill - a block being filled around a fault
 * @vma: the faulting vma
 * @handle: its buffer
 * @start: the first address of the block in @vma
 * @pgoff: the buffer page mapped at @start
 * @prot: the protection of the block's entries, once @have_prot
 * @mkdirty: @prot is the vma's, and the entries are made young and dirty
 *           as the faulting page's was
 * @have_prot: @prot and @mkdirty are set
 */
struct accmap_fill {
	struct vm_area_struct *vma;
	const struct accmap_handle *handle;
	unsigned long start;
	unsigned long pgoff;
	pgprot_t prot;
	bool mkdirty;
	bool have_prot;
};

/*
 * apply_to_page_range()'s callback, under the page table's lock.  Its
 * first call is for the faulting page, whose entry the kernel's own
 * insert has just written.  Where the architecture has its own
 * pte_pgprot(), that entry's protection, memory type included (x86 with
 * PAT may choose another cache mode than the vma's for the buffer's
 * memory type), is the one every other page of the block gets, so that
 * they all map as the kernel would map them.  Elsewhere (5.10's arm64)
 * the kernel's insert maps with the vma's protection as it is, made young
 * and dirty in a writable vma, and so does this.  Entries already present
 * (another thread's fault) are left alone.
 */
static int accmap_fill_pte(pte_t *ptep, unsigned long addr, void *data)
{
	struct accmap_fill *fill = data;
	pte_t pte = ptep_get(ptep);
	unsigned long pfn;

	if (!fill->have_prot) {
		/* Gone again already: let every page fault for itself. */
		if (!pte_present(pte))
			return -EAGAIN;
		if (accmap_have_pte_pgprot()) {
			fill->prot = accmap_pte_pgprot(pte);
		} else {
			fill->prot = fill->vma->vm_page_prot;
			fill->mkdirty = fill->vma->vm_flags & VM_WRITE;
		}
		fill->have_prot = true;
		return 0;
	}
	if (!pte_none(pte))
		return 0;
	pfn = accmap_handle_pfn(fill->handle,
				fill->pgoff + ((addr - fill->start) >> PAGE_SHIFT));
	pte = pte_mkspecial(pfn_pte(pfn, fill->prot));
	if (fill->mkdirty)
		pte = pte_mkyoung(pte_mkdirty(pte));
	set_pte_at(fill->vma->vm_mm, addr, ptep, pte);
	update_mmu_cache(fill->vma, addr, ptep);
	return 0;
}

/*
 * Maps the pages of [@start, @end) of the faulting vma but the faulting
 * page, which is mapped already; @pgoff is the buffer page at @start.
 * The range lies in one page table.  A failure here (no memory for a
 * page table) is not the fault's: the pages it left out fault themselves.
 */
static void accmap_fill(struct vm_fault *vmf, unsigned long start,
			unsigned long end, unsigned long pgoff)
{
	unsigned long fault = vmf->address & PAGE_MASK;
	struct accmap_fill fill = {
		.vma = vmf->vma,
		.handle = vmf->vma->vm_private_data,
		.start = start,
		.pgoff = pgoff,
	};

	/* From the faulting page on (its entry first), then the pages before. */
	if (apply_to_page_range(fill.vma->vm_mm, fault, end - fault,
				accmap_fill_pte, &fill) || start == fault)
		return;
	apply_to_page_range(fill.vma->vm_mm, start, fault - start,
			    accmap_fill_pte, &fill);
}
#else
/*
 * accmap_fill() where accmap cannot write entries itself: a page at a
 * time, each through the kernel's insert, which leaves an entry already
 * present alone.  It stops at the first failure (no memory for a page
 * table), leaving the rest to fault for themselves.
 */
static void accmap_fill(struct vm_fault *vmf, unsigned long start,
			unsigned long end, unsigned long pgoff)
{
	const struct accmap_handle *handle = vmf->vma->vm_private_data;
	unsigned long fault = vmf->address & PAGE_MASK, addr;

	for (addr = start; addr < end; addr += PAGE_SIZE, pgoff++) {
		if (addr != fault &&
		    accmap_insert(vmf, addr, accmap_handle_pfn(handle, pgoff)) !=
		    VM_FAULT_NOPAGE)
			return;
	}
}
#endif /* ACCMAP_NO_SET_PTE_AT */

/*
 * The fault of both kinds of vma: @first is the vma page offset of the
 * buffer's first page, so page offset p is buffer page p - @first.
 */
static vm_fault_t accmap_fault(struct vm_fault *vmf, unsigned long first)
{
	struct vm_area_struct *vma = vmf->vma;
	struct accmap_handle *handle = vma->vm_private_data;
	unsigned long block, start, end;
	vm_fault_t ret;

	/* mmap checked the range; a page offset below @first wraps too. */
	if (vmf->pgoff - first >= handle->npages)
		return VM_FAULT_SIGBUS;

	/* The faulting page first: its result is the fault's result. */
	ret = accmap_insert(vmf, vmf->address & PAGE_MASK,
			    accmap_handle_pfn(handle, vmf->pgoff - first));
	if (ret != VM_FAULT_NOPAGE)
		return ret;

	/* Then the rest of the block around it. */
	block = ALIGN_DOWN(vmf->address, ACCMAP_FAULT_AROUND);
	start = max(vma->vm_start, block);
	end = min(vma->vm_end, block + ACCMAP_FAULT_AROUND);
	accmap_fill(vmf, start, end, vma->vm_pgoff - first +
		    ((start - vma->vm_start) >> PAGE_SHIFT));
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

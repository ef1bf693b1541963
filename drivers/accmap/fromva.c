// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: buffers over the caller's own memory (ACCMAP_IOC_FROM_VA), and
 * the user pseudo-heap they belong to.
 *
 * The pages behind a range of the caller's address space are pinned for
 * the life of the buffer (FOLL_LONGTERM: they cannot move or be reclaimed)
 * and listed in the handle like the system heap's pages, so mapping,
 * export, import, WRITE/READ and cache maintenance work on them unchanged.
 * They stay pinned if the caller unmaps the range, forks or exits.
 *
 * Only anonymous memory and shmem qualify (see accmap_from_va_vma_ok()):
 * no filesystem writes their pages back behind the buffer's back.
 *
 * The pins are charged to the caller's locked memory, limited by
 * RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK.  The charge is refunded when
 * the buffer goes, possibly from another process that held it last, so
 * the buffer keeps the address space (the structure, not its mappings).
 *
 * The user heap has no alloc operation: ALLOC never takes memory from it.
 * It has no fixed size either; it reports the bytes pinned as used.
 */

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "accmap.h"
#include "devmem.h"
#include "replay.h"

/* Pages pinned per call into GUP: bounds the time between signal checks. */
#define ACCMAP_FROM_VA_BATCH	512

/**
 * struct accmap_user_buf - the user heap's state of one buffer
 * @mm: the address space the pages were pinned from and charged to, held
 *      with mmgrab()
 * @pinned: pages pinned, all of them charged to @mm's locked memory
 * @writable: pinned for writing (FOLL_WRITE): unpinning dirties the pages
 * @addr: the user address of the first page (checkpoint state)
 * @owner: the thread group whose memory it is, held with get_pid():
 *         what a checkpoint names as the buffer's origin
 */
struct accmap_user_buf {
	struct mm_struct *mm;
	struct pid *owner;
	unsigned long pinned;
	bool writable;
	u64 addr;
};

/**
 * accmap_check_from_va() - validate an ACCMAP_IOC_FROM_VA argument
 * @arg: the argument, its address already untagged
 * @task_size: the end of the caller's user address space
 * @max_size: the largest buffer allowed, in bytes
 *
 * Return: 0, or -EINVAL for flags outside ACCMAP_FROM_VA_VALID_FLAGS,
 * non-zero padding, an address or size that is not page aligned, a zero
 * size, a size above @max_size, or a range that wraps around or ends
 * above @task_size.
 */
int accmap_check_from_va(const struct accmap_from_va *arg, u64 task_size,
			 u64 max_size)
{
	u64 end;

	if (arg->flags & ~ACCMAP_FROM_VA_VALID_FLAGS)
		return -EINVAL;
	if (arg->pad || arg->pad2)
		return -EINVAL;
	if (!arg->size || arg->size > max_size)
		return -EINVAL;
	if (!IS_ALIGNED(arg->addr, PAGE_SIZE) || !IS_ALIGNED(arg->size, PAGE_SIZE))
		return -EINVAL;
	if (check_add_overflow(arg->addr, arg->size, &end) || end > task_size)
		return -EINVAL;
	return 0;
}

/*
 * Whether FROM_VA may pin the pages of @vma for as long as a buffer lives:
 * anonymous memory (private, or private /dev/zero), and shmem (tmpfs
 * files, memfd, shared anonymous memory, SysV shared memory), whose pages
 * no filesystem writes back.  Everything else is refused: a long-term
 * writable pin of a page cache page of a regular filesystem races with
 * its writeback (the filesystem cleans and write-protects the page while
 * a device still writes it), which Linux closed only in 6.5; hugetlbfs
 * and DAX files, driver and special mappings (vDSO, dma-bufs) are refused
 * too, so that one rule holds on every kernel.  vma_is_shmem() is not
 * exported by 6.1, so shmem is recognised by its superblock; devtmpfs is
 * a tmpfs too, hence the regular-file test (a device node is not one).
 * VM_SPECIAL leaves out driver mappings without vm_ops of their own.
 */
static bool accmap_from_va_vma_ok(struct vm_area_struct *vma)
{
	struct inode *inode;

	if (vma->vm_flags & VM_SPECIAL)
		return false;
	if (vma_is_anonymous(vma))
		return true;
	if (!vma->vm_file)
		return false;
	inode = file_inode(vma->vm_file);
	return S_ISREG(inode->i_mode) && inode->i_sb->s_magic == TMPFS_MAGIC;
}

/*
 * -EOPNOTSUPP if a mapping in [@start, @end) is of a kind FROM_VA refuses,
 * else 0; holes are left to the pinning, which fails them with -EFAULT.
 * The caller holds the mmap_lock of @mm, and pins under the same hold:
 * munmap() and mmap() need it for writing, so the mappings checked are
 * the ones the pages are pinned from.
 */
static int accmap_from_va_check(struct mm_struct *mm, unsigned long start,
				unsigned long end)
{
	struct vm_area_struct *vma;

	/* Not mmap_assert_locked(): on DEBUG_VM it calls dump_mm(), unexported. */
	lockdep_assert_held(&mm->mmap_lock);
	for (vma = find_vma(mm, start); vma && vma->vm_start < end;
	     vma = find_vma(mm, vma->vm_end))
		if (!accmap_from_va_vma_ok(vma))
			return -EOPNOTSUPP;
	return 0;
}

/*
 * pin_user_pages() and pin_user_pages_remote() lost their vmas argument
 * in 6.5.  A restore (checkpoint.c) pins another process's memory.
 */
static long accmap_pin_locked(struct mm_struct *mm, unsigned long addr,
			      unsigned long npages, unsigned int gup_flags,
			      struct page **pages)
{
#ifdef ACCMAP_HAVE_PIN_USER_PAGES_VMAS
	if (mm != current->mm)
		return pin_user_pages_remote(mm, addr, npages, gup_flags, pages,
					     NULL, NULL);
	return pin_user_pages(addr, npages, gup_flags, pages, NULL);
#else
	if (mm != current->mm)
		return pin_user_pages_remote(mm, addr, npages, gup_flags, pages,
					     NULL);
	return pin_user_pages(addr, npages, gup_flags, pages);
#endif
}

/*
 * A read-only pin of a private page that the process shares copy-on-write
 * (with a fork() child, or the zero page) goes stale on the process's next
 * write to it, which copies the page and leaves the pin with the old one;
 * GUP unshares such a page for a read-only pin from 5.19 on.  Before, the
 * pin itself breaks the sharing: a read-only pin takes a mapping that is
 * private and writable for writing, one mapping at a time (the other ones
 * stay read-only pins: a pin for writing fails there).  Memory made
 * writable by mprotect() after the pin is not covered.  Returns how many
 * of @npages from @start to pin with @gup_flags, which it may change.
 */
#ifdef ACCMAP_HAVE_GUP_UNSHARE
static unsigned long accmap_from_va_unshare(struct mm_struct *mm,
					    unsigned long start,
					    unsigned long npages,
					    unsigned int *gup_flags)
{
	return npages;
}
#else
static unsigned long accmap_from_va_unshare(struct mm_struct *mm,
					    unsigned long start,
					    unsigned long npages,
					    unsigned int *gup_flags)
{
	struct vm_area_struct *vma = find_vma(mm, start);

	lockdep_assert_held(&mm->mmap_lock);
	if (*gup_flags & FOLL_WRITE)
		return npages;
	/* A hole at @start: the pinning fails it. */
	if (!vma || vma->vm_start > start)
		return npages;
	npages = min(npages, (vma->vm_end - start) >> PAGE_SHIFT);
	if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == VM_WRITE)
		*gup_flags |= FOLL_WRITE;
	return npages;
}
#endif

/*
 * Brings back pages of [@start, @end) that are on any target's device
 * memory; @mm's mmap_lock held.  0 or -ENOMEM.
 */
static int accmap_from_va_to_system(struct accmap_device *adev,
				    struct mm_struct *mm, unsigned long start,
				    unsigned long end)
{
	/* Pairs with accmap_replay_add_target(): entries below nr are set. */
	u32 i, nr = smp_load_acquire(&adev->nr_targets);
	int ret;

	for (i = 0; i < nr; i++) {
		ret = accmap_devmem_range_to_system(adev->targets[i]->devmem,
						    mm, start, end);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Pins @npages pages from @addr into @pages, a batch at a time, after
 * bringing back any of them on a target's device memory; all of them, or
 * none on error.  Each batch is checked and pinned under one
 * hold of the mmap_lock, so a concurrent munmap() and mmap() of another
 * kind of memory at the same address cannot slip in between: a pinned
 * page is always one of a mapping accmap_from_va_check() accepted.  6.1's
 * GUP fails an unmapped or PROT_NONE page, and a page the mapping does
 * not let us write when @writable, with -EFAULT; memory without struct
 * pages with -EFAULT or, in a mixed map, -EEXIST, which we report as
 * -EFAULT as well.
 */
static int accmap_from_va_pin(struct accmap_device *adev, struct mm_struct *mm,
			      unsigned long addr, unsigned long npages,
			      bool writable, struct page **pages)
{
	unsigned int gup_flags = FOLL_LONGTERM | (writable ? FOLL_WRITE : 0);
	unsigned long pinned = 0;
	int ret = 0;

	while (pinned < npages) {
		unsigned long start = addr + (pinned << PAGE_SHIFT);
		unsigned long batch = min_t(unsigned long, npages - pinned,
					    ACCMAP_FROM_VA_BATCH);
		unsigned int flags = gup_flags;
		long got;

		if (fatal_signal_pending(current) ||
		    mmap_read_lock_killable(mm)) {
			ret = -EINTR;
			break;
		}
		batch = accmap_from_va_unshare(mm, start, batch, &flags);
		ret = accmap_from_va_check(mm, start,
					   start + (batch << PAGE_SHIFT));
		/* A pin holds system memory: device pages come back first. */
		if (!ret)
			ret = accmap_from_va_to_system(adev, mm, start,
						       start + (batch << PAGE_SHIFT));
		got = ret ? 0 : accmap_pin_locked(mm, start, batch, flags,
						  pages + pinned);
		mmap_read_unlock(mm);
		if (ret)
			break;
		if (got <= 0) {
			ret = (!got || got == -EEXIST) ? -EFAULT : got;
			break;
		}
		/* A short count: the next call reports why it stopped. */
		pinned += got;
		cond_resched();
	}

	if (ret)
		unpin_user_pages(pages, pinned);
	return ret;
}

/**
 * accmap_handle_pin_va() - give an empty handle pins of process memory
 * @handle: a handle without memory, of @addr's size; its readonly flag
 *          is set to !@writable here
 * @mm: the address space, current's or (restore) another live one's,
 *      held by the caller with mmget()
 * @owner: the thread group @mm belongs to (the buffer takes a reference)
 * @addr: first byte, page aligned and checked (accmap_check_from_va())
 * @writable: pin for writing
 * @tag: the handle's tag
 *
 * The handle gets heap ACCMAP_HEAP_USER, cached.
 *
 * Return: 0, -EEXIST if @handle has memory, or an errno as
 * accmap_handle_from_va()'s.  On error nothing stays pinned or charged.
 */
int accmap_handle_pin_va(struct accmap_handle *handle, struct mm_struct *mm,
			 struct pid *owner, u64 addr, bool writable, u16 tag)
{
	struct accmap_device *adev = handle->adev;
	struct accmap_heap *heap = adev->heaps[ACCMAP_HEAP_USER];
	unsigned long npages = handle->size >> PAGE_SHIFT;
	struct accmap_user_buf *buf;
	struct page **pages;
	int ret;

	if (WARN_ON_ONCE(!heap))
		return -ENODEV;
	if (accmap_handle_allocated(handle))
		return -EEXIST;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	/* Over the cgroup's limit: ENOMEM, not its OOM killer (heap_system.c). */
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT |
			       __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!pages) {
		ret = -ENOMEM;
		goto err_free_buf;
	}

	/*
	 * The kind of memory first, then the charge, so that neither a
	 * refused range nor a request over the limit pins anything.
	 */
	buf->mm = mm;
	if (mmap_read_lock_killable(buf->mm)) {
		ret = -EINTR;
		goto err_free_pages;
	}
	ret = accmap_from_va_check(buf->mm, addr, addr + handle->size);
	mmap_read_unlock(buf->mm);
	if (ret)
		goto err_free_pages;
	ret = account_locked_vm(buf->mm, npages, true);
	if (ret)
		goto err_free_pages;
	mmgrab(buf->mm);

	ret = accmap_from_va_pin(adev, mm, addr, npages, writable, pages);
	if (ret)
		goto err_refund;
	buf->pinned = npages;
	buf->writable = writable;
	buf->addr = addr;
	buf->owner = get_pid(owner);

	mutex_lock(&handle->lock);
	if (handle->heap) {
		mutex_unlock(&handle->lock);
		ret = -EEXIST;
		goto err_unpin;
	}
	handle->pages = pages;
	handle->npages = npages;
	handle->heap_priv = buf;
	handle->readonly = !writable;
	handle->tag = tag;
	handle->heap = heap;
	accmap_heap_account(heap, handle->size, 0, true);
	mutex_unlock(&handle->lock);
	return 0;

err_unpin:
	unpin_user_pages(pages, npages);
err_refund:
	account_locked_vm(buf->mm, npages, false);
	mmdrop(buf->mm);
err_free_pages:
	kvfree(pages);
err_free_buf:
	kfree(buf);
	return ret;
}

/**
 * accmap_handle_from_va() - make a buffer of the caller's own memory
 * @adev: the device
 * @arg: the ACCMAP_IOC_FROM_VA argument
 *
 * The new handle has its memory from the start: heap ACCMAP_HEAP_USER,
 * cached, tagged with @arg->tag, read-only unless ACCMAP_FROM_VA_WRITE.
 *
 * Return: the handle holding one reference, or an ERR_PTR: -EINVAL (see
 * accmap_check_from_va(); also a range access_ok() refuses), -ENOMEM (the
 * charge would exceed RLIMIT_MEMLOCK, or out of memory), -EFAULT (a page
 * is not mapped, not accessible, or not writable when writing was asked),
 * -EINTR (fatal signal), or another errno of the kernel's page pinning.
 * On error nothing stays pinned or charged.
 */
struct accmap_handle *accmap_handle_from_va(struct accmap_device *adev,
					    const struct accmap_from_va *arg)
{
	struct accmap_from_va req = *arg;
	struct accmap_handle *handle;
	int ret;

	/* A tagged pointer (arm64 top byte) names the same memory. */
	req.addr = untagged_addr(req.addr);
	ret = accmap_check_from_va(&req, TASK_SIZE,
				   (u64)totalram_pages() << PAGE_SHIFT);
	if (ret)
		return ERR_PTR(ret);
	if (!access_ok(u64_to_user_ptr(req.addr), req.size))
		return ERR_PTR(-EINVAL);
	if (!current->mm)
		return ERR_PTR(-EFAULT);

	handle = accmap_handle_create(adev, req.size);
	if (!handle)
		return ERR_PTR(-ENOMEM);
	ret = accmap_handle_pin_va(handle, current->mm, task_tgid(current), req.addr,
				   req.flags & ACCMAP_FROM_VA_WRITE, req.tag);
	if (ret) {
		accmap_handle_put(handle);
		return ERR_PTR(ret);
	}
	return handle;
}

/**
 * accmap_handle_va() - where a FROM_VA buffer's memory is
 * @handle: a handle
 * @addr: set to the user address of its first page
 * @writable: set to whether it was pinned for writing
 * @ns: the pid namespace to name its owner in
 * @owner: set to the owner's thread group id in @ns, 0 if it has none there
 *
 * Return: true if @handle holds pins of process memory (heap
 * ACCMAP_HEAP_USER), else false and nothing set.
 */
bool accmap_handle_va(struct accmap_handle *handle, u64 *addr, bool *writable,
		      struct pid_namespace *ns, u32 *owner)
{
	struct accmap_user_buf *buf;
	bool ret = false;

	mutex_lock(&handle->lock);
	if (handle->heap && handle->heap->id == ACCMAP_HEAP_USER) {
		buf = handle->heap_priv;
		*addr = buf->addr;
		*writable = buf->writable;
		*owner = pid_nr_ns(buf->owner, ns);
		ret = true;
	}
	mutex_unlock(&handle->lock);
	return ret;
}

static void user_heap_free(struct accmap_heap *heap,
			   struct accmap_handle *handle)
{
	struct accmap_user_buf *buf = handle->heap_priv;

	/* What devices or WRITE stored must not be lost to reclaim later. */
	unpin_user_pages_dirty_lock(handle->pages, handle->npages,
				    buf->writable);
	/*
	 * This takes the mmap_lock of the pinning process (free_locks_mm).
	 * No caller holds an mmap_lock here: a CPU mapping (and mmap()) hands
	 * the last reference to a worker (accmap_handle_put_mm()), and a
	 * dma-buf mapping's file, released after the mapping closes, holds
	 * one anyway.
	 */
	account_locked_vm(buf->mm, buf->pinned, false);
	mmdrop(buf->mm);
	put_pid(buf->owner);

	kvfree(handle->pages);
	kfree(buf);
	handle->pages = NULL;
	handle->npages = 0;
	handle->heap_priv = NULL;
}

static const struct accmap_heap_ops user_heap_ops = {
	.free = user_heap_free,
};

/**
 * accmap_user_heap_create() - create the user heap of a device
 * @adev: the device
 *
 * The heap of ACCMAP_IOC_FROM_VA buffers, id ACCMAP_HEAP_USER.  It has no
 * alloc operation, so accmap_device_add_heap() keeps it out of the heaps
 * ALLOC may use, and no query operation: its total, free and largest free
 * read 0 (no fixed size); its used bytes are the bytes pinned.
 *
 * Return: the heap, or NULL if out of memory.
 */
struct accmap_heap *accmap_user_heap_create(struct accmap_device *adev)
{
	struct accmap_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL);
	if (!heap)
		return NULL;
	heap->id = ACCMAP_HEAP_USER;
	heap->name = "user";
	heap->ops = &user_heap_ops;
	heap->free_locks_mm = true;
	heap->adev = adev;
	atomic64_set(&heap->used, 0);
	return heap;
}

/**
 * accmap_user_heap_destroy() - destroy a heap made by
 * accmap_user_heap_create()
 * @heap: the heap; no buffer may still use it
 */
void accmap_user_heap_destroy(struct accmap_heap *heap)
{
	WARN_ON(atomic64_read(&heap->used));
	kfree(heap);
}

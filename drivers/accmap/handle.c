// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: buffer objects (handles) and their lifetime.
 *
 * A handle is created empty with a size, gets its memory from a heap once,
 * and lives until the last of its client references, dma-buf exports and
 * CPU mappings is gone; only then does the memory go back to its heap.
 */

#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "accmap.h"

static void accmap_handle_put_work(struct work_struct *work);

/**
 * accmap_handle_create() - create a handle with no memory yet
 * @adev: the device
 * @size: size in bytes, already page aligned and bounded
 *
 * Return: the handle holding one reference, or NULL if out of memory.
 */
struct accmap_handle *accmap_handle_create(struct accmap_device *adev,
					   u64 size)
{
	struct accmap_handle *handle;

	handle = kzalloc(sizeof(*handle), GFP_KERNEL_ACCOUNT);
	if (!handle)
		return NULL;

	kref_init(&handle->ref);
	handle->adev = adev;
	handle->size = size;
	mutex_init(&handle->lock);
	INIT_LIST_HEAD(&handle->attachments);
	atomic_set(&handle->hrefs, 0);
	atomic_set(&handle->maps, 0);
	atomic_set(&handle->nattach, 0);
	atomic_set(&handle->nvmaps, 0);
	handle->serial = atomic64_inc_return(&adev->next_serial);
	INIT_WORK(&handle->put_work, accmap_handle_put_work);
	handle->creator_pid = task_tgid_nr(current);
	accmap_get_comm(handle->creator_comm);

	mutex_lock(&adev->handles_lock);
	list_add_tail(&handle->node, &adev->handles);
	mutex_unlock(&adev->handles_lock);
	return handle;
}

/**
 * accmap_handle_alloc() - give a handle its memory
 * @handle: the handle
 * @heap: the heap to allocate from
 * @flags: ACCMAP_ALLOC_* flags, already validated
 * @align: alignment in bytes (0: page), already validated
 * @tag: accounting tag
 *
 * Return: 0, -EEXIST if the handle already has memory, -ENXIO for
 * ACCMAP_ALLOC_DMA32 from a heap with no memory below 4 GiB, or the heap's
 * errno (-ENOMEM when it has no room).
 */
int accmap_handle_alloc(struct accmap_handle *handle, struct accmap_heap *heap,
			u32 flags, u32 align, u16 tag)
{
	int ret;

	mutex_lock(&handle->lock);
	if (handle->heap) {
		ret = -EEXIST;
		goto out_unlock;
	}

	if ((flags & ACCMAP_ALLOC_DMA32) && !heap->dma32) {
		ret = -ENXIO;
		goto out_unlock;
	}
	/* The heap reads these while it fills the buffer. */
	handle->flags = flags;
	handle->tag = tag;
	ret = heap->ops->alloc(heap, handle, align);
	if (ret) {
		handle->flags = 0;
		handle->tag = 0;
		goto out_unlock;
	}
	handle->heap = heap;
	accmap_heap_account(heap, handle->size, flags, true);

out_unlock:
	mutex_unlock(&handle->lock);
	return ret;
}

/**
 * accmap_handle_allocated() - whether a handle has its memory
 * @handle: the handle
 *
 * Return: true once ALLOC has succeeded; it stays true for the life of the
 * handle.
 */
bool accmap_handle_allocated(struct accmap_handle *handle)
{
	bool allocated;

	mutex_lock(&handle->lock);
	allocated = handle->heap;
	mutex_unlock(&handle->lock);
	return allocated;
}

/**
 * accmap_handle_get() - take a reference on a handle
 * @handle: the handle; the caller already holds a reference
 */
void accmap_handle_get(struct accmap_handle *handle)
{
	kref_get(&handle->ref);
}

static void accmap_handle_release(struct kref *ref)
{
	struct accmap_handle *handle = container_of(ref, struct accmap_handle, ref);
	struct accmap_device *adev = handle->adev;
	struct accmap_heap *heap = handle->heap;

	mutex_lock(&adev->handles_lock);
	list_del(&handle->node);
	mutex_unlock(&adev->handles_lock);
	accmap_handle_offset_remove(handle);

	/* Every export and every mapping held a reference: none is left. */
	WARN_ON(!list_empty(&handle->attachments));
	WARN_ON(atomic_read(&handle->maps));

	if (handle->wc_vaddr)
		vunmap(handle->wc_vaddr);
	if (heap) {
		heap->ops->free(heap, handle);
		accmap_heap_account(heap, handle->size, handle->flags, false);
	}
	mutex_destroy(&handle->lock);
	kfree(handle);
}

/**
 * accmap_handle_put() - drop a reference on a handle
 * @handle: the handle
 *
 * The memory goes back to its heap when the last reference goes.
 */
void accmap_handle_put(struct accmap_handle *handle)
{
	kref_put(&handle->ref, accmap_handle_release);
}

static void accmap_handle_put_work(struct work_struct *work)
{
	accmap_handle_put(container_of(work, struct accmap_handle, put_work));
}

/**
 * accmap_handle_put_mm() - drop a reference with an mmap_lock held
 * @handle: an allocated handle
 *
 * For a vma's close and for mmap(): the release of a buffer whose heap
 * takes an mmap_lock to free it (free_locks_mm: FROM_VA buffers give back
 * the locked_vm of the process that pinned them, maybe the caller's own)
 * cannot run here.  Such a buffer's last reference is handed to a worker,
 * which owns it from then on: nobody else holds one, so the work cannot
 * be queued again before it ran.  Other buffers are released at once, so
 * that their memory is back when munmap() returns.
 */
void accmap_handle_put_mm(struct accmap_handle *handle)
{
	/* Set once at allocation, before any mapping or mmap() offset. */
	if (!handle->heap->free_locks_mm) {
		accmap_handle_put(handle);
		return;
	}
	if (refcount_dec_not_one(&handle->ref.refcount))
		return;
	queue_work(handle->adev->put_wq, &handle->put_work);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: mmap() of /dev/accmap at a buffer's offset.
 *
 * A buffer can be mapped through /dev/accmap itself, with no dma-buf file,
 * as DRM maps GEM objects at fake offsets: ACCMAP_IOC_MAP_OFFSET gives the
 * buffer a range of page offsets on its first call, and mmap() of any open
 * file of /dev/accmap whose client holds an id for the buffer maps it
 * there.  Offsets are device-global, so one offset names one buffer in
 * every client (and in a checkpoint of it), and are never handed out
 * twice while the module is loaded: the cursor only grows, starting at
 * 1 GiB and leaving a page unused between two buffers, so that a stale
 * offset, or one run past its buffer's end, fails instead of reaching
 * another buffer.
 */

#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sizes.h>

#include "accmap.h"

/* The page offset of the first buffer: anything below names none. */
#define ACCMAP_OFFSETS_FIRST	(SZ_1G >> PAGE_SHIFT)

/*
 * One past the last page offset a range may reach: mmap() takes no range
 * whose end in bytes passes the file's limit (MAX_LFS_FILESIZE, LLONG_MAX
 * on 64-bit kernels, for a device file).
 */
#define ACCMAP_OFFSETS_END	((u64)MAX_LFS_FILESIZE >> PAGE_SHIFT)

/**
 * accmap_offsets_init() - set up a device's table of mmap() offsets
 * @adev: the device, before any handle exists
 */
void accmap_offsets_init(struct accmap_device *adev)
{
	mutex_init(&adev->offsets_lock);
	adev->offsets = RB_ROOT;
	adev->offsets_next = ACCMAP_OFFSETS_FIRST;
}

static void accmap_offsets_insert(struct accmap_device *adev,
				  struct accmap_handle *handle)
{
	struct rb_node **link = &adev->offsets.rb_node, *parent = NULL;

	lockdep_assert_held(&adev->offsets_lock);
	while (*link) {
		struct accmap_handle *h = rb_entry(*link, struct accmap_handle,
						   offset_node);

		parent = *link;
		if (handle->map_pgoff < h->map_pgoff)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&handle->offset_node, parent, link);
	rb_insert_color(&handle->offset_node, &adev->offsets);
}

/**
 * accmap_handle_map_offset() - a buffer's mmap() offset on /dev/accmap
 * @handle: the handle; the caller holds a reference
 * @offset: set to the offset in bytes of the buffer's first byte
 *
 * The first call gives the buffer its range of page offsets, which it
 * keeps until it is released; later calls return the same.
 *
 * Return: 0; -EINVAL if @handle has no memory; -ENOSPC if the offsets
 * are used up (ACCMAP_OFFSETS_END: 2^63 bytes of buffers on 64-bit).
 */
int accmap_handle_map_offset(struct accmap_handle *handle, u64 *offset)
{
	struct accmap_device *adev = handle->adev;
	u64 pgoff;
	int ret = 0;

	/* The size in pages is known, and fixed, once there is memory. */
	if (!accmap_handle_allocated(handle))
		return -EINVAL;

	mutex_lock(&adev->offsets_lock);
	if (!handle->map_pgoff) {
		pgoff = adev->offsets_next;
		if (pgoff > ACCMAP_OFFSETS_END ||
		    handle->npages > ACCMAP_OFFSETS_END - pgoff) {
			ret = -ENOSPC;
			goto out_unlock;
		}
		handle->map_pgoff = pgoff;
		/* A page between two buffers: running past one faults. */
		adev->offsets_next = pgoff + handle->npages + 1;
		accmap_offsets_insert(adev, handle);
	}
	*offset = handle->map_pgoff << PAGE_SHIFT;

out_unlock:
	mutex_unlock(&adev->offsets_lock);
	return ret;
}

/**
 * accmap_handle_offset_remove() - let a released buffer's offset go
 * @handle: a handle whose last reference went
 *
 * The range is not handed out again.
 */
void accmap_handle_offset_remove(struct accmap_handle *handle)
{
	struct accmap_device *adev = handle->adev;

	/* Set under the lock by a holder of a reference: none is left. */
	if (!handle->map_pgoff)
		return;
	mutex_lock(&adev->offsets_lock);
	rb_erase(&handle->offset_node, &adev->offsets);
	mutex_unlock(&adev->offsets_lock);
}

/*
 * The live buffer whose range holds page offset @pgoff, with a reference
 * for the caller, or NULL.  A buffer on its way out (no reference left)
 * is still in the tree until its release takes it out: it is passed over.
 */
static struct accmap_handle *accmap_offsets_get(struct accmap_device *adev,
						unsigned long pgoff)
{
	struct accmap_handle *found = NULL;
	struct rb_node *node;

	mutex_lock(&adev->offsets_lock);
	node = adev->offsets.rb_node;
	while (node) {
		struct accmap_handle *h = rb_entry(node, struct accmap_handle,
						   offset_node);

		if (pgoff < h->map_pgoff) {
			node = node->rb_left;
		} else if (pgoff - h->map_pgoff >= h->npages) {
			node = node->rb_right;
		} else {
			if (kref_get_unless_zero(&h->ref))
				found = h;
			break;
		}
	}
	mutex_unlock(&adev->offsets_lock);
	return found;
}

/**
 * accmap_mmap() - the mmap of /dev/accmap
 * @file: the client's file
 * @vma: the new mapping; vm_pgoff names a buffer (ACCMAP_IOC_MAP_OFFSET)
 *
 * The mapping behaves as one of the buffer's dma-buf (vma.c).
 *
 * Return: 0; -EINVAL if no buffer's range holds the offset, the mapping
 * runs past the buffer's end, or it is private; -EACCES if the client
 * holds no id for the buffer, or the mapping is writable and no id of
 * the client may write the buffer.
 */
int accmap_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct accmap_client *client = file->private_data;
	struct accmap_handle *handle;
	bool readonly, restore_ro;
	int ret;

	handle = accmap_offsets_get(client->adev, vma->vm_pgoff);
	if (!handle)
		return -EINVAL;

	ret = accmap_client_handle_access(client, handle, &readonly);
	/*
	 * A restore maps what it made where the ids do not let it (none, or
	 * only read-only ones and the dumped mapping wrote: its writable id
	 * went after the mmap), with no more right than the restore was
	 * given (checkpoint.c); whether the dumped mapping could have been
	 * made writable later is not known, so one made read-only stays so.
	 */
	if ((ret || (readonly && (vma->vm_flags & VM_WRITE))) &&
	    accmap_checkpoint_may_map(client, handle, &restore_ro)) {
		readonly = restore_ro || handle->readonly ||
			   !(vma->vm_flags & VM_WRITE);
		ret = 0;
	}
	if (!ret)
		ret = accmap_vma_map(handle, vma, handle->map_pgoff, readonly);
	/*
	 * The mapping took its own reference, if it was made.  Ours may be
	 * the last by now (the ids went meanwhile), under the mmap_lock.
	 */
	accmap_handle_put_mm(handle);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the heap registry of a device.
 */

#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "accmap.h"

/**
 * accmap_device_add_heap() - make a heap available under its id
 * @adev: the device, not yet registered
 * @heap: the heap
 *
 * Return: 0, or -EINVAL if the id is out of range or already taken.
 */
int accmap_device_add_heap(struct accmap_device *adev, struct accmap_heap *heap)
{
	if (heap->id >= ACCMAP_HEAP_MAX || adev->heaps[heap->id])
		return -EINVAL;
	adev->heaps[heap->id] = heap;
	adev->heap_mask |= BIT(heap->id);
	if (heap->ops->alloc)
		adev->alloc_mask |= BIT(heap->id);
	return 0;
}

/**
 * accmap_device_remove_heap() - take a heap out of the device's registry
 * @adev: the device, no longer (or not yet) registered
 * @heap: a heap added with accmap_device_add_heap()
 */
void accmap_device_remove_heap(struct accmap_device *adev,
			       struct accmap_heap *heap)
{
	if (WARN_ON(heap->id >= ACCMAP_HEAP_MAX || adev->heaps[heap->id] != heap))
		return;
	adev->heaps[heap->id] = NULL;
	adev->heap_mask &= ~BIT(heap->id);
	adev->alloc_mask &= ~BIT(heap->id);
}

/**
 * accmap_heap_query() - fill a heap's figures
 * @heap: the heap
 * @info: filled: name, total, used, free, largest_free, contiguous, dma32
 */
void accmap_heap_query(struct accmap_heap *heap, struct accmap_heap_info *info)
{
	strscpy(info->name, heap->name, sizeof(info->name));
	info->total = 0;
	info->free = 0;
	info->largest_free = 0;
	if (heap->ops->query)
		heap->ops->query(heap, info);
	info->used = atomic64_read(&heap->used);
	info->contiguous = atomic64_read(&heap->contiguous);
	info->dma32 = heap->dma32;
}

/**
 * accmap_heap_account() - count a buffer in or out of its heap's totals
 * @heap: the heap the buffer's memory came from
 * @size: the buffer's size in bytes
 * @flags: the ACCMAP_ALLOC_* flags it was allocated with
 * @add: true when the memory was handed out, false when it came back
 *
 * @used counts every buffer; @contiguous those allocated with
 * ACCMAP_ALLOC_CONTIGUOUS (a carveout buffer allocated without it is one
 * block too, but not counted there: QUERY_HEAP's field says what was
 * asked for).
 */
void accmap_heap_account(struct accmap_heap *heap, u64 size, u32 flags,
			 bool add)
{
	s64 delta = add ? (s64)size : -(s64)size;

	atomic64_add(delta, &heap->used);
	if (flags & ACCMAP_ALLOC_CONTIGUOUS)
		atomic64_add(delta, &heap->contiguous);
}

/**
 * accmap_get_comm() - the current task's name, safe for debugfs tables
 * @comm: TASK_COMM_LEN bytes
 *
 * A task may name itself with tabs or newlines; debugfs files are
 * tab-separated lines, so anything but printable ASCII becomes '?'.
 */
void accmap_get_comm(char *comm)
{
	char name[TASK_COMM_LEN];
	char *c;

	get_task_comm(name, current);
	memcpy(comm, name, TASK_COMM_LEN);
	for (c = comm; *c; c++)
		if (*c < 0x20 || *c > 0x7e || *c == ' ')
			*c = '?';
}

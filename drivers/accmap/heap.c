// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the heap registry of a device.
 */

#include <linux/bits.h>
#include <linux/errno.h>
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
	return 0;
}

/**
 * accmap_heap_query() - fill a heap's figures
 * @heap: the heap
 * @info: filled: name, total, used, free, largest_free
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
}

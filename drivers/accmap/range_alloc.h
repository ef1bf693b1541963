/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: allocator of aligned blocks from one physical range.
 */
#ifndef _ACCMAP_RANGE_ALLOC_H
#define _ACCMAP_RANGE_ALLOC_H

#include <linux/list.h>
#include <linux/types.h>

/**
 * struct accmap_range_block - a free extent, or a block handed out
 * @node: in accmap_range.free while free
 * @start: first address
 * @size: bytes
 */
struct accmap_range_block {
	struct list_head node;
	u64 start;
	u64 size;
};

/**
 * struct accmap_range - free space of one range
 * @free: free extents sorted by address, never touching each other
 * @base: start of the range
 * @size: bytes in the range
 * @granule: smallest unit handed out
 * @free_bytes: sum of the free extents
 * @nfree: number of free extents
 *
 * No lock of its own: the owner serialises every call.
 */
struct accmap_range {
	struct list_head free;
	u64 base;
	u64 size;
	u64 granule;
	u64 free_bytes;
	unsigned int nfree;
};

int accmap_range_init(struct accmap_range *r, u64 base, u64 size, u64 granule);
void accmap_range_destroy(struct accmap_range *r);
struct accmap_range_block *accmap_range_alloc(struct accmap_range *r, u64 size,
					      u64 align);
void accmap_range_free(struct accmap_range *r, struct accmap_range_block *blk);
u64 accmap_range_largest(struct accmap_range *r);

#endif /* _ACCMAP_RANGE_ALLOC_H */

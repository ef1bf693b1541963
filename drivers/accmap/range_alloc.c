// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: allocator of aligned blocks from one physical range, for
 * carveout heaps.
 *
 * Free space is a list of extents sorted by address, merged whenever two
 * touch.  A request takes the smallest free extent that holds it at the
 * requested alignment (best fit), which keeps large extents whole for
 * large requests.  A carveout has at most a few thousand extents, so a
 * linear walk is cheaper than anything cleverer and easy to audit.
 *
 * Freeing never allocates: every block owns a node that becomes a free
 * extent again if it cannot be merged into a neighbour.
 */

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "compat.h"
#include "range_alloc.h"

/**
 * accmap_range_init() - manage [@base, @base + @size) as one free extent
 * @r: the allocator
 * @base: start address, aligned to @granule
 * @size: bytes, a non-zero multiple of @granule
 * @granule: smallest unit handed out, a power of two
 *
 * Return: 0, -EINVAL for a misaligned or empty range, or -ENOMEM.
 */
int accmap_range_init(struct accmap_range *r, u64 base, u64 size, u64 granule)
{
	struct accmap_range_block *b;

	if (!is_power_of_2(granule) || !size || !IS_ALIGNED(base, granule) ||
	    !IS_ALIGNED(size, granule) || base + size < base)
		return -EINVAL;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;

	INIT_LIST_HEAD(&r->free);
	r->base = base;
	r->size = size;
	r->granule = granule;
	r->free_bytes = size;
	r->nfree = 1;
	b->start = base;
	b->size = size;
	list_add(&b->node, &r->free);
	return 0;
}

/**
 * accmap_range_destroy() - free the allocator's own memory
 * @r: the allocator; blocks still handed out are the caller's to free
 */
void accmap_range_destroy(struct accmap_range *r)
{
	struct accmap_range_block *b, *tmp;

	list_for_each_entry_safe(b, tmp, &r->free, node) {
		list_del(&b->node);
		kfree(b);
	}
	r->nfree = 0;
	r->free_bytes = 0;
}

/* Whether a block of @size at @align fits in @b, and where it would start. */
static bool range_fits(const struct accmap_range_block *b, u64 size, u64 align,
		       u64 *start)
{
	u64 s = ALIGN(b->start, align);

	if (s < b->start || s - b->start >= b->size)
		return false;
	if (b->size - (s - b->start) < size)
		return false;
	*start = s;
	return true;
}

/**
 * accmap_range_alloc() - take a block
 * @r: the allocator
 * @size: bytes wanted; rounded up to the granule
 * @align: alignment in bytes, 0 or a power of two (the granule at least)
 *
 * Return: the block, or an ERR_PTR: -EINVAL for a zero size or a bad
 * alignment, -ENOSPC if no free extent holds it, -ENOMEM.
 */
struct accmap_range_block *accmap_range_alloc(struct accmap_range *r, u64 size,
					      u64 align)
{
	struct accmap_range_block *b, *best = NULL, *blk, *tail;
	u64 start = 0, best_start = 0;

	if (!size || (align && !is_power_of_2(align)))
		return ERR_PTR(-EINVAL);
	if (size > r->size)
		return ERR_PTR(-ENOSPC);
	size = ALIGN(size, r->granule);
	align = max(align, r->granule);

	list_for_each_entry(b, &r->free, node) {
		if (!range_fits(b, size, align, &start))
			continue;
		if (!best || b->size < best->size) {
			best = b;
			best_start = start;
		}
	}
	if (!best)
		return ERR_PTR(-ENOSPC);

	/* Nodes for the block and for a tail that may be left after it. */
	blk = kzalloc(sizeof(*blk), GFP_KERNEL);
	tail = kzalloc(sizeof(*tail), GFP_KERNEL);
	if (!blk || !tail) {
		kfree(blk);
		kfree(tail);
		return ERR_PTR(-ENOMEM);
	}

	blk->start = best_start;
	blk->size = size;

	tail->start = best_start + size;
	tail->size = best->start + best->size - tail->start;
	/* What stays of best is the head before the block, if any. */
	best->size = best_start - best->start;

	if (tail->size) {
		list_add(&tail->node, &best->node);
		r->nfree++;
	} else {
		kfree(tail);
	}
	if (!best->size) {
		list_del(&best->node);
		kfree(best);
		r->nfree--;
	}
	r->free_bytes -= size;
	return blk;
}

/**
 * accmap_range_free() - give a block back
 * @r: the allocator
 * @blk: a block from accmap_range_alloc() on @r; its node is reused or
 *       freed here
 */
void accmap_range_free(struct accmap_range *r, struct accmap_range_block *blk)
{
	struct accmap_range_block *b, *prev = NULL, *next = NULL;

	/* The free extents around the block. */
	list_for_each_entry(b, &r->free, node) {
		if (b->start > blk->start) {
			next = b;
			break;
		}
		prev = b;
	}

	r->free_bytes += blk->size;

	if (prev && prev->start + prev->size == blk->start) {
		prev->size += blk->size;
		kfree(blk);
		blk = prev;
	} else {
		/* Goes after prev, or first. */
		list_add(&blk->node, prev ? &prev->node : &r->free);
		r->nfree++;
	}

	if (next && blk->start + blk->size == next->start) {
		blk->size += next->size;
		list_del(&next->node);
		kfree(next);
		r->nfree--;
	}
}

/**
 * accmap_range_largest() - the largest free extent
 * @r: the allocator
 *
 * Return: its size in bytes, 0 when nothing is free.
 */
u64 accmap_range_largest(struct accmap_range *r)
{
	struct accmap_range_block *b;
	u64 largest = 0;

	list_for_each_entry(b, &r->free, node)
		largest = max(largest, b->size);
	return largest;
}

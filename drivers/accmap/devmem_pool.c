// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the free pages of a device memory, and its eviction order.
 *
 * Slots stand for device pages by index.  A free slot waits on the free
 * list; a used one is on the LRU list, in the order pages were placed
 * (or touched again: a page the GPU faulted on moves to the end).  When
 * the device is full, the first used slots are the victims.  Nothing here
 * knows about pages or the mm (devmem.c does); KUnit tests it
 * (tests/devmem_test.c).
 *
 * The lock is taken with interrupts off, everywhere: a device page's last
 * reference can go in interrupt context (in the coherent mode, the pages
 * are mapped like any and can be pinned for direct I/O, whose completion
 * may release them from an interrupt), and the mm then calls
 * devmem_page_free(), which gives the slot back here; had the interrupt
 * come while a task on this CPU held the lock, that would deadlock.
 * Saving the flags rather than _irq: the callers' own context is not ours
 * to know (a fault path may already run with interrupts off).  Every
 * section is short; the longest walks at most @max slots of the LRU
 * (accmap_devmem_pool_victims()).
 */

#include <linux/errno.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "devmem.h"

/**
 * accmap_devmem_pool_init() - a pool of @nr free slots
 * @pool: the pool
 * @nr:   slots, at least 1
 *
 * Slots are handed out lowest index first.
 *
 * Return: 0, -EINVAL for 0 slots, or -ENOMEM.
 */
int accmap_devmem_pool_init(struct accmap_devmem_pool *pool, unsigned long nr)
{
	unsigned long i;

	if (!nr)
		return -EINVAL;
	pool->slots = kvcalloc(nr, sizeof(*pool->slots), GFP_KERNEL);
	if (!pool->slots)
		return -ENOMEM;
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->free);
	INIT_LIST_HEAD(&pool->lru);
	for (i = 0; i < nr; i++)
		list_add_tail(&pool->slots[i].node, &pool->free);
	pool->nr = nr;
	pool->nr_free = nr;
	return 0;
}

/**
 * accmap_devmem_pool_fini() - free a pool's slots
 * @pool: the pool, every slot free
 */
void accmap_devmem_pool_fini(struct accmap_devmem_pool *pool)
{
	WARN_ON(pool->nr_free != pool->nr);
	kvfree(pool->slots);
	pool->slots = NULL;
}

/**
 * accmap_devmem_pool_get() - take a free slot
 * @pool: the pool
 *
 * The slot goes to the end of the eviction order.
 *
 * Return: the slot's index, or -ENOSPC if none is free.
 */
long accmap_devmem_pool_get(struct accmap_devmem_pool *pool)
{
	struct accmap_devmem_slot *slot;
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	slot = list_first_entry_or_null(&pool->free, struct accmap_devmem_slot,
					node);
	if (!slot) {
		spin_unlock_irqrestore(&pool->lock, flags);
		return -ENOSPC;
	}
	list_move_tail(&slot->node, &pool->lru);
	slot->used = true;
	pool->nr_free--;
	spin_unlock_irqrestore(&pool->lock, flags);
	return slot - pool->slots;
}

/**
 * accmap_devmem_pool_put() - give a used slot back
 * @pool: the pool
 * @idx:  a used slot's index
 *
 * It is handed out again before the slots that were never used, so the
 * pages in use stay few and warm.  Any context, interrupts included
 * (a device page's last put_page(), see above).
 */
void accmap_devmem_pool_put(struct accmap_devmem_pool *pool, unsigned long idx)
{
	unsigned long flags;

	if (WARN_ON_ONCE(idx >= pool->nr))
		return;
	spin_lock_irqsave(&pool->lock, flags);
	if (!WARN_ON_ONCE(!pool->slots[idx].used)) {
		pool->slots[idx].used = false;
		list_move(&pool->slots[idx].node, &pool->free);
		pool->nr_free++;
	}
	spin_unlock_irqrestore(&pool->lock, flags);
}

/**
 * accmap_devmem_pool_touch() - a used slot was used again
 * @pool: the pool
 * @idx:  a used slot's index
 *
 * Moves it to the end of the eviction order.  A free slot is left alone.
 */
void accmap_devmem_pool_touch(struct accmap_devmem_pool *pool,
			      unsigned long idx)
{
	unsigned long flags;

	if (WARN_ON_ONCE(idx >= pool->nr))
		return;
	spin_lock_irqsave(&pool->lock, flags);
	if (pool->slots[idx].used)
		list_move_tail(&pool->slots[idx].node, &pool->lru);
	spin_unlock_irqrestore(&pool->lock, flags);
}

/**
 * accmap_devmem_pool_victims() - the slots to evict first
 * @pool: the pool
 * @out:  filled with up to @max indices, least recently placed first
 * @max:  room in @out
 *
 * The slots stay used: they come back through accmap_devmem_pool_put()
 * when their pages are freed.
 *
 * Return: indices written.
 */
unsigned long accmap_devmem_pool_victims(struct accmap_devmem_pool *pool,
					 unsigned long *out, unsigned long max)
{
	struct accmap_devmem_slot *slot;
	unsigned long flags;
	unsigned long n = 0;

	spin_lock_irqsave(&pool->lock, flags);
	list_for_each_entry(slot, &pool->lru, node) {
		if (n == max)
			break;
		out[n++] = slot - pool->slots;
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	return n;
}

/**
 * accmap_devmem_pool_free() - free slots now
 * @pool: the pool
 *
 * Return: the number of free slots.
 */
unsigned long accmap_devmem_pool_free(struct accmap_devmem_pool *pool)
{
	unsigned long flags;
	unsigned long n;

	spin_lock_irqsave(&pool->lock, flags);
	n = pool->nr_free;
	spin_unlock_irqrestore(&pool->lock, flags);
	return n;
}

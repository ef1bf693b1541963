// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: per-client table of handle references, keyed by u32 id.
 *
 * The table is an rbtree, in id order: ids are handed out in increasing
 * order and wrap only after 2^32 - 1 of them, so the set of live ids is
 * sparse and mostly increasing, and a stale id stays unused for as long as
 * possible.  Beside it a plain xarray maps each live id to its reference,
 * so that a lookup by id (every ioctl that names one), and the check of
 * the next id at an insert, take a few node reads however large the table
 * grows, where a walk down the tree reads one reference per level, each
 * in an allocation of its own.  The xarray hands out nothing (no
 * XA_FLAGS_ALLOC): which id comes next is still the table's rule.
 */

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/xarray.h>

#include "accmap.h"

/**
 * accmap_htable_init() - initialise an empty handle table
 * @table: the table
 * @lock: the lock its owner will hold around every other htable call
 */
void accmap_htable_init(struct accmap_htable *table, struct mutex *lock)
{
	table->lock = lock;
	table->root = RB_ROOT;
	xa_init(&table->index);
	table->next_id = 1;
	table->count = 0;
}

/*
 * Find the first id at or after @start that no reference uses, walking the
 * run of consecutive ids that starts there.  Returns 0 if the run reaches
 * the top of the id space.
 */
static u32 htable_free_id_from(struct accmap_htable *table, u32 start)
{
	u32 id = start;

	while (xa_load(&table->index, id)) {
		if (id == U32_MAX)
			return 0;
		id++;
	}
	return id;
}

/*
 * Add @ref at @id, which the caller found free, to both the index and the
 * tree.  The index may have to allocate: if that fails, neither changes.
 */
static int htable_link(struct accmap_htable *table, struct accmap_href *ref,
		       u32 id)
{
	struct rb_node **link = &table->root.rb_node;
	struct rb_node *parent = NULL;
	int ret;

	while (*link) {
		struct accmap_href *cur = rb_entry(*link, struct accmap_href, node);

		parent = *link;
		if (id < cur->id)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}

	/* The tree is not touched in between: @link stays the place. */
	ret = xa_insert(&table->index, id, ref, GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ref->id = id;
	rb_link_node(&ref->node, parent, link);
	rb_insert_color(&ref->node, &table->root);
	table->count++;
	return 0;
}

/**
 * accmap_htable_insert() - give @ref a fresh id and add it to @table
 * @table: the table
 * @ref: the reference; its @id is set here
 *
 * The id is the lowest unused id at or after the one following the last
 * id handed out, wrapping from U32_MAX to 1.
 *
 * Context: @table->lock held.
 * Return: 0, -ENOSPC if every id from 1 to U32_MAX is in use, or -ENOMEM
 * if the index could not grow.
 */
int accmap_htable_insert(struct accmap_htable *table, struct accmap_href *ref)
{
	u32 id;
	int ret;

	lockdep_assert_held(table->lock);

	if (table->count == U32_MAX)
		return -ENOSPC;

	id = htable_free_id_from(table, table->next_id);
	if (!id)
		id = htable_free_id_from(table, 1);
	/* count < U32_MAX guarantees a gap, so id is not 0 here. */

	ret = htable_link(table, ref, id);
	if (ret)
		return ret;
	table->next_id = id == U32_MAX ? 1 : id + 1;
	return 0;
}

/**
 * accmap_htable_lookup() - find the reference with id @id
 * @table: the table
 * @id: the id
 *
 * Context: @table->lock held.
 * Return: the reference, or NULL if no reference has that id.
 */
struct accmap_href *accmap_htable_lookup(struct accmap_htable *table, u32 id)
{
	lockdep_assert_held(table->lock);

	return xa_load(&table->index, id);
}

/**
 * accmap_htable_erase() - remove @ref from @table
 * @table: the table
 * @ref: a reference that is in @table
 *
 * The id of @ref is not handed out again before the id space wraps.
 *
 * Context: @table->lock held.
 */
void accmap_htable_erase(struct accmap_htable *table, struct accmap_href *ref)
{
	lockdep_assert_held(table->lock);

	xa_erase(&table->index, ref->id);
	rb_erase(&ref->node, &table->root);
	RB_CLEAR_NODE(&ref->node);
	table->count--;
}

/**
 * accmap_htable_insert_at() - add a reference at a given id
 * @table: the table
 * @ref: the reference; its id is set to @id
 * @id: the id, not 0
 *
 * The next id search does not move: a restore sets it itself.
 *
 * Context: @table->lock held.
 * Return: 0, -EINVAL for id 0, -ENOSPC if the table is full, -EEXIST if
 * @id is taken, or -ENOMEM if the index could not grow.
 */
int accmap_htable_insert_at(struct accmap_htable *table,
			    struct accmap_href *ref, u32 id)
{
	lockdep_assert_held(table->lock);

	if (!id)
		return -EINVAL;
	if (table->count == U32_MAX)
		return -ENOSPC;
	if (xa_load(&table->index, id))
		return -EEXIST;
	return htable_link(table, ref, id);
}

/**
 * accmap_htable_first() - the reference with the lowest id
 * @table: the table
 *
 * Context: @table->lock held.
 * Return: the reference, or NULL if @table is empty.
 */
struct accmap_href *accmap_htable_first(struct accmap_htable *table)
{
	struct rb_node *node;

	lockdep_assert_held(table->lock);
	node = rb_first(&table->root);
	return node ? rb_entry(node, struct accmap_href, node) : NULL;
}

/**
 * accmap_htable_destroy() - free what the table allocated for itself
 * @table: the table
 *
 * The references still in @table are not touched (their owner frees
 * them); the table is not usable afterwards.  The owner's lock need not
 * be held: nobody else can reach the table any more.
 */
void accmap_htable_destroy(struct accmap_htable *table)
{
	xa_destroy(&table->index);
	table->root = RB_ROOT;
	table->count = 0;
}

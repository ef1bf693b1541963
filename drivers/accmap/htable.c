// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: per-client table of handle references, keyed by u32 id.
 *
 * An rbtree rather than an idr or xarray: ids are handed out in increasing
 * order and wrap only after 2^32 - 1 of them, so the set of live ids is
 * sparse and mostly increasing, and a stale id stays unused for as long as
 * possible.
 */

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>

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
	table->next_id = 1;
	table->count = 0;
}

/* The first reference whose id is @id or larger, or NULL. */
static struct accmap_href *htable_lower_bound(struct accmap_htable *table,
					      u32 id)
{
	struct rb_node *node = table->root.rb_node;
	struct accmap_href *best = NULL;

	while (node) {
		struct accmap_href *ref = rb_entry(node, struct accmap_href, node);

		if (ref->id >= id) {
			best = ref;
			if (ref->id == id)
				break;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	return best;
}

/*
 * Find the first id at or after @start that no reference uses, walking the
 * run of consecutive ids that starts there.  Returns 0 if the run reaches
 * the top of the id space.
 */
static u32 htable_free_id_from(struct accmap_htable *table, u32 start)
{
	struct accmap_href *ref = htable_lower_bound(table, start);
	struct rb_node *node;
	u32 id = start;

	while (ref && ref->id == id) {
		if (id == U32_MAX)
			return 0;
		id++;
		node = rb_next(&ref->node);
		ref = node ? rb_entry(node, struct accmap_href, node) : NULL;
	}
	return id;
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
 * Return: 0, or -ENOSPC if every id from 1 to U32_MAX is in use.
 */
int accmap_htable_insert(struct accmap_htable *table, struct accmap_href *ref)
{
	struct rb_node **link = &table->root.rb_node;
	struct rb_node *parent = NULL;
	u32 id;

	lockdep_assert_held(table->lock);

	if (table->count == U32_MAX)
		return -ENOSPC;

	id = htable_free_id_from(table, table->next_id);
	if (!id)
		id = htable_free_id_from(table, 1);
	/* count < U32_MAX guarantees a gap, so id is not 0 here. */

	while (*link) {
		struct accmap_href *cur = rb_entry(*link, struct accmap_href, node);

		parent = *link;
		if (id < cur->id)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}

	ref->id = id;
	rb_link_node(&ref->node, parent, link);
	rb_insert_color(&ref->node, &table->root);
	table->count++;
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
	struct rb_node *node = table->root.rb_node;

	lockdep_assert_held(table->lock);

	while (node) {
		struct accmap_href *ref = rb_entry(node, struct accmap_href, node);

		if (id < ref->id)
			node = node->rb_left;
		else if (id > ref->id)
			node = node->rb_right;
		else
			return ref;
	}
	return NULL;
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
 * Return: 0, -EINVAL for id 0, -ENOSPC if the table is full, or -EEXIST
 * if @id is taken.
 */
int accmap_htable_insert_at(struct accmap_htable *table,
			    struct accmap_href *ref, u32 id)
{
	struct rb_node **link = &table->root.rb_node;
	struct rb_node *parent = NULL;

	lockdep_assert_held(table->lock);

	if (!id)
		return -EINVAL;
	if (table->count == U32_MAX)
		return -ENOSPC;
	while (*link) {
		struct accmap_href *cur = rb_entry(*link, struct accmap_href, node);

		parent = *link;
		if (id < cur->id)
			link = &parent->rb_left;
		else if (id > cur->id)
			link = &parent->rb_right;
		else
			return -EEXIST;
	}
	ref->id = id;
	rb_link_node(&ref->node, parent, link);
	rb_insert_color(&ref->node, &table->root);
	table->count++;
	return 0;
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

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's per-client handle table.
 */

#include <kunit/test.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "../accmap.h"

/* An array of references owned by the test, freed when it ends. */
static int refs_init(struct kunit_resource *res, void *context)
{
	unsigned int n = *(unsigned int *)context;

	res->data = kvcalloc(n, sizeof(struct accmap_href), GFP_KERNEL);
	return res->data ? 0 : -ENOMEM;
}

static void refs_free(struct kunit_resource *res)
{
	kvfree(res->data);
}

static struct accmap_href *new_refs(struct kunit *test, unsigned int n)
{
	struct accmap_href *refs;

	refs = kunit_alloc_resource(test, refs_init, refs_free, GFP_KERNEL, &n);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, refs);
	return refs;
}

/*
 * The table's rule: its owner's lock is held around every call (lockdep
 * checks it).  A case holds the lock from here to table_done(), as a
 * client holds its lock around each of its calls.
 */
static void table_init(struct accmap_htable *t, struct mutex *lock)
{
	mutex_init(lock);
	accmap_htable_init(t, lock);
	mutex_lock(lock);
}

static void table_done(struct accmap_htable *t, struct mutex *lock)
{
	accmap_htable_destroy(t);
	mutex_unlock(lock);
	mutex_destroy(lock);
}

static void htable_empty(struct kunit *test)
{
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	KUNIT_EXPECT_PTR_EQ(test, t.lock, &lock);
	KUNIT_EXPECT_EQ(test, t.count, 0U);
	KUNIT_EXPECT_NULL(test, accmap_htable_first(&t));
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 0));
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 1));
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, U32_MAX));
	table_done(&t, &lock);
}

static void htable_insert_lookup(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, 3);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */
	unsigned int i;

	table_init(&t, &lock);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[i]), 0);
		/* Ids start at 1 and go up in order. */
		KUNIT_EXPECT_EQ(test, refs[i].id, i + 1);
	}
	KUNIT_EXPECT_EQ(test, t.count, 3U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, i + 1), &refs[i]);
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 0));
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 4));
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_first(&t), &refs[0]);
	table_done(&t, &lock);
}

static void htable_erase_no_reuse(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, 4);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[0]), 0);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[1]), 0);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[2]), 0);

	accmap_htable_erase(&t, &refs[1]);
	KUNIT_EXPECT_EQ(test, t.count, 2U);
	/* The erased id is stale: nothing answers to it. */
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 2));
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, 1), &refs[0]);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, 3), &refs[2]);

	/* And it is not handed out again: the next id is 4. */
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[3]), 0);
	KUNIT_EXPECT_EQ(test, refs[3].id, 4U);
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 2));

	/* Erasing the first moves first() on. */
	accmap_htable_erase(&t, &refs[0]);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_first(&t), &refs[2]);
	table_done(&t, &lock);
}

static void htable_wrap_skips_zero(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, 3);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	t.next_id = U32_MAX - 1;
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[0]), 0);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[1]), 0);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[2]), 0);
	KUNIT_EXPECT_EQ(test, refs[0].id, U32_MAX - 1);
	KUNIT_EXPECT_EQ(test, refs[1].id, U32_MAX);
	/* After the top of the id space comes 1, never 0. */
	KUNIT_EXPECT_EQ(test, refs[2].id, 1U);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, U32_MAX), &refs[1]);
	table_done(&t, &lock);
}

static void htable_wrap_skips_live_ids(struct kunit *test)
{
	struct accmap_href *low = new_refs(test, 5);
	struct accmap_href *refs = new_refs(test, 3);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */
	unsigned int i;

	table_init(&t, &lock);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &low[i]), 0);
	/* Ids 1..5 are still live when the counter wraps. */
	t.next_id = U32_MAX;
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[i]), 0);
	KUNIT_EXPECT_EQ(test, refs[0].id, U32_MAX);
	KUNIT_EXPECT_EQ(test, refs[1].id, 6U);
	KUNIT_EXPECT_EQ(test, refs[2].id, 7U);

	/* A hole below the run is found after the run. */
	accmap_htable_erase(&t, &low[2]);	/* id 3 */
	t.next_id = 2;
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &low[2]), 0);
	KUNIT_EXPECT_EQ(test, low[2].id, 3U);
	table_done(&t, &lock);
}

static void htable_full(struct kunit *test)
{
	struct accmap_href ref = {};
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	/* Claim a full table without building 2^32 - 1 nodes. */
	t.count = U32_MAX;
	KUNIT_EXPECT_EQ(test, accmap_htable_insert(&t, &ref), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t.count, U32_MAX);
	table_done(&t, &lock);
}

static void htable_insert_at(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, 5);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	KUNIT_EXPECT_EQ(test, accmap_htable_insert_at(&t, &refs[0], 0), -EINVAL);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert_at(&t, &refs[0], 10), 0);
	KUNIT_EXPECT_EQ(test, refs[0].id, 10U);
	KUNIT_EXPECT_EQ(test, accmap_htable_insert_at(&t, &refs[1], 10), -EEXIST);
	KUNIT_EXPECT_EQ(test, t.count, 1U);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, 10), &refs[0]);

	/* The next id search did not move: a plain insert still gets 1. */
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[1]), 0);
	KUNIT_EXPECT_EQ(test, refs[1].id, 1U);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_first(&t), &refs[1]);

	/* A run up to the top of the id space: the search wraps to 2. */
	KUNIT_ASSERT_EQ(test, accmap_htable_insert_at(&t, &refs[2], U32_MAX - 1), 0);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert_at(&t, &refs[3], U32_MAX), 0);
	t.next_id = U32_MAX - 1;
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[4]), 0);
	KUNIT_EXPECT_EQ(test, refs[4].id, 2U);
	KUNIT_EXPECT_EQ(test, t.next_id, 3U);
	KUNIT_EXPECT_EQ(test, t.count, 5U);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, U32_MAX), &refs[3]);

	/* Erased, an id given with insert_at is gone from both views. */
	accmap_htable_erase(&t, &refs[0]);
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 10));
	KUNIT_EXPECT_PTR_EQ(test, rb_entry_safe(rb_next(&refs[4].node),
						struct accmap_href, node),
			    &refs[2]);
	table_done(&t, &lock);
}

/*
 * When the index cannot take the id (here a slot reserved behind the
 * table's back, which xa_insert() refuses as it would fail to allocate a
 * node), neither insert changes the table.
 */
static void htable_index_store_fails(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, 2);
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */

	table_init(&t, &lock);
	KUNIT_ASSERT_EQ(test, xa_reserve(&t.index, 1, GFP_KERNEL), 0);

	KUNIT_EXPECT_EQ(test, accmap_htable_insert_at(&t, &refs[0], 1), -EBUSY);
	KUNIT_EXPECT_EQ(test, accmap_htable_insert(&t, &refs[0]), -EBUSY);
	KUNIT_EXPECT_EQ(test, t.count, 0U);
	KUNIT_EXPECT_EQ(test, t.next_id, 1U);
	KUNIT_EXPECT_NULL(test, accmap_htable_first(&t));
	KUNIT_EXPECT_TRUE(test, RB_EMPTY_ROOT(&t.root));
	KUNIT_EXPECT_NULL(test, accmap_htable_lookup(&t, 1));

	/* Once the slot is free again, the same id goes in. */
	xa_release(&t.index, 1);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[0]), 0);
	KUNIT_EXPECT_EQ(test, refs[0].id, 1U);
	KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[1]), 0);
	KUNIT_EXPECT_EQ(test, refs[1].id, 2U);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_lookup(&t, 1), &refs[0]);
	KUNIT_EXPECT_PTR_EQ(test, accmap_htable_first(&t), &refs[0]);
	table_done(&t, &lock);
}

#define MANY_HANDLES 100000

static void htable_many(struct kunit *test)
{
	struct accmap_href *refs = new_refs(test, MANY_HANDLES);
	struct accmap_href *ref;
	struct accmap_htable t;
	struct mutex lock;	/* stands for the client's */
	unsigned int i, seen;
	u32 seed = get_random_u32();
	u32 prev;

	kunit_info(test, "seed %u\n", seed);
	table_init(&t, &lock);
	for (i = 0; i < MANY_HANDLES; i++)
		KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[i]), 0);
	KUNIT_EXPECT_EQ(test, t.count, (u32)MANY_HANDLES);

	/* Erase a pseudo-random half. */
	for (i = 0; i < MANY_HANDLES; i++) {
		seed = seed * 1664525 + 1013904223;
		if (seed & 0x100)
			accmap_htable_erase(&t, &refs[i]);
	}

	/* Survivors are found, the erased are not, ids are unique. */
	seen = 0;
	for (i = 0; i < MANY_HANDLES; i++) {
		ref = accmap_htable_lookup(&t, refs[i].id);
		if (RB_EMPTY_NODE(&refs[i].node)) {
			KUNIT_ASSERT_NULL(test, ref);
		} else {
			KUNIT_ASSERT_PTR_EQ(test, ref, &refs[i]);
			seen++;
		}
	}
	KUNIT_EXPECT_EQ(test, seen, t.count);

	/* In-order walk is strictly increasing and covers every survivor. */
	prev = 0;
	seen = 0;
	for (ref = accmap_htable_first(&t); ref;
	     ref = rb_entry_safe(rb_next(&ref->node), struct accmap_href, node)) {
		KUNIT_ASSERT_GT(test, ref->id, prev);
		prev = ref->id;
		seen++;
	}
	KUNIT_EXPECT_EQ(test, seen, t.count);

	/* New ids continue above the highest ever handed out. */
	for (i = 0; i < MANY_HANDLES; i++) {
		if (!RB_EMPTY_NODE(&refs[i].node))
			continue;
		KUNIT_ASSERT_EQ(test, accmap_htable_insert(&t, &refs[i]), 0);
		KUNIT_EXPECT_GT(test, refs[i].id, (u32)MANY_HANDLES);
		break;
	}
	table_done(&t, &lock);
}

static struct kunit_case htable_cases[] = {
	KUNIT_CASE(htable_empty),
	KUNIT_CASE(htable_insert_lookup),
	KUNIT_CASE(htable_erase_no_reuse),
	KUNIT_CASE(htable_wrap_skips_zero),
	KUNIT_CASE(htable_wrap_skips_live_ids),
	KUNIT_CASE(htable_full),
	KUNIT_CASE(htable_insert_at),
	KUNIT_CASE(htable_index_store_fails),
	KUNIT_CASE(htable_many),
	{}
};

static struct kunit_suite htable_suite = {
	.name = "accmap-htable",
	.test_cases = htable_cases,
};

kunit_test_suite(htable_suite);

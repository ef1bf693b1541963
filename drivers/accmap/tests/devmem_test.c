// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of device memory's bookkeeping: the free pages, the
 * eviction order (least recently placed or used first), and the
 * placement policy of GPU faults.  The migrations themselves need
 * ZONE_DEVICE and a real mm: the VM selftest accmap_devmem covers them.
 */

#include <kunit/test.h>
#include <linux/slab.h>

#include "../devmem.h"

static void pool_exit(struct kunit_resource *res)
{
	struct accmap_devmem_pool *pool = res->data;
	unsigned long i;

	/* Give back what a failed test kept, so fini finds them free. */
	for (i = 0; i < pool->nr; i++)
		if (pool->slots[i].used)
			accmap_devmem_pool_put(pool, i);
	accmap_devmem_pool_fini(pool);
}

static struct accmap_devmem_pool *new_pool(struct kunit *test,
					   unsigned long nr)
{
	struct accmap_devmem_pool *pool;

	pool = kunit_kzalloc(test, sizeof(*pool), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pool);
	KUNIT_ASSERT_EQ(test, accmap_devmem_pool_init(pool, nr), 0);
	kunit_alloc_resource(test, NULL, pool_exit, GFP_KERNEL, pool);
	return pool;
}

static void devmem_pool_empty_refused(struct kunit *test)
{
	struct accmap_devmem_pool pool;

	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_init(&pool, 0), -EINVAL);
}

/* Every slot once, lowest first, then -ENOSPC; a freed one comes back. */
static void devmem_pool_exhaustion(struct kunit *test)
{
	struct accmap_devmem_pool *pool = new_pool(test, 8);
	long i;

	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), i);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_free(pool), 0UL);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), (long)-ENOSPC);
	accmap_devmem_pool_put(pool, 5);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_free(pool), 1UL);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 5L);
}

/* A freed slot is handed out before slots never used. */
static void devmem_pool_reuses_warm(struct kunit *test)
{
	struct accmap_devmem_pool *pool = new_pool(test, 8);

	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 0L);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 1L);
	accmap_devmem_pool_put(pool, 0);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 0L);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 2L);
}

/* Victims: in placement order; a touched slot goes last. */
static void devmem_pool_eviction_order(struct kunit *test)
{
	struct accmap_devmem_pool *pool = new_pool(test, 6);
	unsigned long v[6];
	long i;

	for (i = 0; i < 6; i++)
		accmap_devmem_pool_get(pool);
	accmap_devmem_pool_touch(pool, 0);
	accmap_devmem_pool_touch(pool, 3);
	KUNIT_ASSERT_EQ(test, accmap_devmem_pool_victims(pool, v, 6), 6UL);
	KUNIT_EXPECT_EQ(test, v[0], 1UL);
	KUNIT_EXPECT_EQ(test, v[1], 2UL);
	KUNIT_EXPECT_EQ(test, v[2], 4UL);
	KUNIT_EXPECT_EQ(test, v[3], 5UL);
	KUNIT_EXPECT_EQ(test, v[4], 0UL);
	KUNIT_EXPECT_EQ(test, v[5], 3UL);
	/* Asking for fewer gives the oldest; naming them frees nothing. */
	KUNIT_ASSERT_EQ(test, accmap_devmem_pool_victims(pool, v, 2), 2UL);
	KUNIT_EXPECT_EQ(test, v[0], 1UL);
	KUNIT_EXPECT_EQ(test, v[1], 2UL);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_free(pool), 0UL);
}

/* A freed slot leaves the order; placed again, it is the newest. */
static void devmem_pool_freed_leaves_order(struct kunit *test)
{
	struct accmap_devmem_pool *pool = new_pool(test, 4);
	unsigned long v[4];
	long i;

	for (i = 0; i < 4; i++)
		accmap_devmem_pool_get(pool);
	accmap_devmem_pool_put(pool, 1);
	/* Touching a free slot does not make it used. */
	accmap_devmem_pool_touch(pool, 1);
	KUNIT_ASSERT_EQ(test, accmap_devmem_pool_victims(pool, v, 4), 3UL);
	KUNIT_EXPECT_EQ(test, v[0], 0UL);
	KUNIT_EXPECT_EQ(test, v[1], 2UL);
	KUNIT_EXPECT_EQ(test, v[2], 3UL);
	KUNIT_EXPECT_EQ(test, accmap_devmem_pool_get(pool), 1L);
	KUNIT_ASSERT_EQ(test, accmap_devmem_pool_victims(pool, v, 4), 4UL);
	KUNIT_EXPECT_EQ(test, v[3], 1UL);
}

/* GPU faults migrate only where the range prefers the device and it has some. */
static void devmem_placement_policy(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test,
			  accmap_devmem_fault_migrates(ACCMAP_SVM_LOC_DEVICE, true));
	KUNIT_EXPECT_FALSE(test,
			   accmap_devmem_fault_migrates(ACCMAP_SVM_LOC_DEVICE, false));
	KUNIT_EXPECT_FALSE(test,
			   accmap_devmem_fault_migrates(ACCMAP_SVM_LOC_SYSTEM, true));
	KUNIT_EXPECT_FALSE(test,
			   accmap_devmem_fault_migrates(ACCMAP_SVM_LOC_SYSTEM, false));
}

static struct kunit_case devmem_cases[] = {
	KUNIT_CASE(devmem_pool_empty_refused),
	KUNIT_CASE(devmem_pool_exhaustion),
	KUNIT_CASE(devmem_pool_reuses_warm),
	KUNIT_CASE(devmem_pool_eviction_order),
	KUNIT_CASE(devmem_pool_freed_leaves_order),
	KUNIT_CASE(devmem_placement_policy),
	{}
};

static struct kunit_suite devmem_suite = {
	.name = "accmap-devmem",
	.test_cases = devmem_cases,
};

kunit_test_suite(devmem_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's carveout range allocator.
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "../range_alloc.h"

#define BASE	0x80000000ULL
#define G	SZ_4K

static void range_exit(struct kunit_resource *res)
{
	accmap_range_destroy(res->data);
}

/* An allocator over @pages granules that is destroyed with the test. */
static struct accmap_range *new_range(struct kunit *test, u64 pages)
{
	struct accmap_range *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, accmap_range_init(r, BASE, pages * G, G), 0);
	kunit_alloc_resource(test, NULL, range_exit, GFP_KERNEL, r);
	return r;
}

static void range_init_errors(struct kunit *test)
{
	struct accmap_range r;

	KUNIT_EXPECT_EQ(test, accmap_range_init(&r, BASE, 0, G), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_range_init(&r, BASE + 1, G, G), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_range_init(&r, BASE, G + 1, G), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_range_init(&r, BASE, G, 3000), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_range_init(&r, U64_MAX - G + 1, 2 * G, G),
			-EINVAL);
}

static void range_whole_and_exhaustion(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 16);
	struct accmap_range_block *a, *b;

	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), 16ULL * G);
	a = accmap_range_alloc(r, 16 * G, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, a->start, BASE);
	KUNIT_EXPECT_EQ(test, r->free_bytes, 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), 0ULL);

	b = accmap_range_alloc(r, G, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(b), -ENOSPC);

	accmap_range_free(r, a);
	KUNIT_EXPECT_EQ(test, r->free_bytes, 16ULL * G);
	KUNIT_EXPECT_EQ(test, r->nfree, 1U);
	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), 16ULL * G);
}

static void range_bad_requests(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 4);

	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, 0, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, G, 3 * G)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, 5 * G, 0)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, U64_MAX, 0)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, r->free_bytes, 4ULL * G);
}

static void range_rounds_to_granule(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 4);
	struct accmap_range_block *a;

	a = accmap_range_alloc(r, 1, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, a->size, (u64)G);
	KUNIT_EXPECT_EQ(test, r->free_bytes, 3ULL * G);
	accmap_range_free(r, a);
}

static void range_alignment(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 64);
	struct accmap_range_block *a, *b;

	a = accmap_range_alloc(r, G, 0);		/* BASE */
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	b = accmap_range_alloc(r, G, SZ_64K);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED(b->start, SZ_64K));
	KUNIT_EXPECT_EQ(test, b->start, BASE + SZ_64K);
	/* The gap between them stays free and usable. */
	KUNIT_EXPECT_EQ(test, r->free_bytes, 62ULL * G);
	KUNIT_EXPECT_EQ(test, r->nfree, 2U);
	/* An alignment the range cannot satisfy. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, G, SZ_1G)), -ENOSPC);
	accmap_range_free(r, a);
	accmap_range_free(r, b);
	KUNIT_EXPECT_EQ(test, r->nfree, 1U);
}

static void range_best_fit(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 16);
	struct accmap_range_block *blk[8], *x;
	int i;

	/* Pages: [0-2] a, [3] b, [4-6] c, [7] d, [8..15] rest. */
	blk[0] = accmap_range_alloc(r, 3 * G, 0);
	blk[1] = accmap_range_alloc(r, G, 0);
	blk[2] = accmap_range_alloc(r, 3 * G, 0);
	blk[3] = accmap_range_alloc(r, G, 0);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_FALSE(test, IS_ERR(blk[i]));
	/* Holes of 3 pages at 0 and 1 page at 3, plus the 8-page tail. */
	accmap_range_free(r, blk[0]);
	accmap_range_free(r, blk[1]);
	KUNIT_EXPECT_EQ(test, r->nfree, 2U);	/* 0-3 merged, and the tail */
	accmap_range_free(r, blk[3]);
	KUNIT_EXPECT_EQ(test, r->nfree, 2U);	/* 7 merged with the tail */

	/* 4 pages at 0 and 9 at 7: a 4-page request takes the smaller. */
	x = accmap_range_alloc(r, 4 * G, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(x));
	KUNIT_EXPECT_EQ(test, x->start, BASE);
	accmap_range_free(r, x);
	accmap_range_free(r, blk[2]);
	KUNIT_EXPECT_EQ(test, r->nfree, 1U);
	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), 16ULL * G);
}

static void range_fragmentation(struct kunit *test)
{
	struct accmap_range *r = new_range(test, 32);
	struct accmap_range_block *blk[32];
	int i;

	for (i = 0; i < 32; i++) {
		blk[i] = accmap_range_alloc(r, G, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(blk[i]));
	}
	for (i = 0; i < 32; i += 2)
		accmap_range_free(r, blk[i]);
	/* Half is free, yet no two pages touch. */
	KUNIT_EXPECT_EQ(test, r->free_bytes, 16ULL * G);
	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), (u64)G);
	KUNIT_EXPECT_EQ(test, r->nfree, 16U);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_range_alloc(r, 2 * G, 0)), -ENOSPC);

	/* Freeing the rest grows the largest block back to the whole. */
	for (i = 1; i < 32; i += 2) {
		accmap_range_free(r, blk[i]);
		KUNIT_EXPECT_GE(test, accmap_range_largest(r), 3ULL * G);
	}
	KUNIT_EXPECT_EQ(test, r->nfree, 1U);
	KUNIT_EXPECT_EQ(test, accmap_range_largest(r), 32ULL * G);
}

#define RANDOM_PAGES	256
#define RANDOM_ROUNDS	4000

/* Largest run of clear bits in a shadow bitmap. */
static u64 shadow_largest(const unsigned long *map)
{
	unsigned int start = 0, end, best = 0;

	for (;;) {
		start = find_next_zero_bit(map, RANDOM_PAGES, start);
		if (start >= RANDOM_PAGES)
			break;
		end = find_next_bit(map, RANDOM_PAGES, start);
		best = max(best, end - start);
		start = end;
	}
	return (u64)best * G;
}

static void range_random(struct kunit *test)
{
	struct accmap_range *r = new_range(test, RANDOM_PAGES);
	struct accmap_range_block **live;
	unsigned long *map;
	unsigned int nlive = 0, round, i;
	u64 used = 0;
	u32 seed = get_random_u32();

	kunit_info(test, "seed %u\n", seed);
	live = kunit_kcalloc(test, RANDOM_PAGES, sizeof(*live), GFP_KERNEL);
	map = kunit_kcalloc(test, BITS_TO_LONGS(RANDOM_PAGES), sizeof(long),
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, live);
	KUNIT_ASSERT_NOT_NULL(test, map);

	for (round = 0; round < RANDOM_ROUNDS; round++) {
		seed = seed * 1664525 + 1013904223;
		if (nlive && (seed >> 28) < 7) {
			struct accmap_range_block *b;

			i = (seed >> 8) % nlive;
			b = live[i];
			bitmap_clear(map, (b->start - BASE) / G, b->size / G);
			used -= b->size;
			accmap_range_free(r, b);
			live[i] = live[--nlive];
		} else {
			u64 pages = 1 + ((seed >> 4) % 16);
			u64 align = G << ((seed >> 12) % 5);
			struct accmap_range_block *b;
			unsigned int first;

			b = accmap_range_alloc(r, pages * G, align);
			if (IS_ERR(b)) {
				KUNIT_ASSERT_EQ(test, PTR_ERR(b), -ENOSPC);
				continue;
			}
			KUNIT_ASSERT_TRUE(test, IS_ALIGNED(b->start, align));
			KUNIT_ASSERT_GE(test, b->start, BASE);
			KUNIT_ASSERT_LE(test, b->start + b->size,
					BASE + RANDOM_PAGES * G);
			first = (b->start - BASE) / G;
			/* Never overlaps a live block. */
			KUNIT_ASSERT_EQ(test, find_next_bit(map, first + pages, first),
					(unsigned long)(first + pages));
			bitmap_set(map, first, pages);
			used += b->size;
			live[nlive++] = b;
		}
		KUNIT_ASSERT_EQ(test, r->free_bytes, RANDOM_PAGES * G - used);
		KUNIT_ASSERT_EQ(test, accmap_range_largest(r), shadow_largest(map));
	}

	while (nlive)
		accmap_range_free(r, live[--nlive]);
	KUNIT_EXPECT_EQ(test, r->nfree, 1U);
	KUNIT_EXPECT_EQ(test, r->free_bytes, (u64)RANDOM_PAGES * G);
}

static struct kunit_case range_cases[] = {
	KUNIT_CASE(range_init_errors),
	KUNIT_CASE(range_whole_and_exhaustion),
	KUNIT_CASE(range_bad_requests),
	KUNIT_CASE(range_rounds_to_granule),
	KUNIT_CASE(range_alignment),
	KUNIT_CASE(range_best_fit),
	KUNIT_CASE(range_fragmentation),
	KUNIT_CASE(range_random),
	{}
};

static struct kunit_suite range_suite = {
	.name = "accmap-range-alloc",
	.test_cases = range_cases,
};

kunit_test_suite(range_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's replay page-table builder and walker.
 *
 * The builder (replay_pgtable.c) writes tables; the walker (replay_walk.c)
 * reads them as the GPU would.  Most tests map through the one and check
 * through the other, for both formats.  The walker is also checked alone
 * against tables written here by hand, including encodings the builder
 * never produces (1 GiB blocks, level-0 blocks, missing access flags).
 *
 * Table pages come from a fake device: each gets a made-up bus address
 * with bit 47 set (so the top output address bit is exercised), and a
 * second copy that stands for what the GPU sees.  The copy is updated
 * only by the sync callback, and the walker reads only the copy, so a
 * write the builder forgets to sync shows up as a wrong walk.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "../mali_regs.h"
#include "../replay.h"

#define FAKE_BUS_BASE	0x800000000000ULL	/* bit 47 */
#define SZ_4K_ULL	((u64)SZ_4K)
#define SZ_2M_ULL	((u64)SZ_2M)
#define SZ_1G_ULL	((u64)SZ_1G)
#define RW		(ACCMAP_PGT_PERM_READ | ACCMAP_PGT_PERM_WRITE)
#define RO		ACCMAP_PGT_PERM_READ
#define RWX		(RW | ACCMAP_PGT_PERM_EXEC)

/* Leaf and table bits, as the formats define them (not the driver's). */
#define A64_PAGE	0x3ULL
#define A64_AF		BIT_ULL(10)
#define A64_AP_RW	BIT_ULL(6)		/* AP = 1 */
#define A64_AP_RO	GENMASK_ULL(7, 6)	/* AP = 3 */
#define A64_XN		BIT_ULL(54)
#define LPAE_LEAF	0x1ULL
#define LPAE_R		BIT_ULL(6)
#define LPAE_W		BIT_ULL(7)
#define LPAE_XN		(BIT_ULL(53) | BIT_ULL(54))
#define TABLE		0x3ULL
#define BLOCK		0x1ULL

/**
 * struct env_page - one table page of the fake device
 * @cpu: the page the builder writes
 * @gpu: what the GPU sees: @cpu as of the last sync
 */
struct env_page {
	__le64 *cpu;
	__le64 *gpu;
};

/**
 * struct pgt_env - a test's fake device and the tree on it
 * @test:    the test
 * @format:  ACCMAP_PGT_* under test
 * @pgt:     the tree, NULL once the test destroyed it itself
 * @pages:   bus page number -> struct env_page
 * @next:    next bus page number to hand out
 * @live:    pages handed out and not freed
 * @limited: whether @budget applies
 * @budget:  allocations left before they fail
 * @syncs:   calls of the sync callback
 */
struct pgt_env {
	struct kunit *test;
	u32 format;
	struct accmap_pgt *pgt;
	struct xarray pages;
	unsigned long next;
	unsigned long live;
	bool limited;
	unsigned long budget;
	unsigned long syncs;
};

static void *env_alloc(void *priv, u64 *dma)
{
	struct pgt_env *env = priv;
	struct env_page *p;

	if (env->limited && !env->budget--)
		return NULL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	p->cpu = (__le64 *)get_zeroed_page(GFP_KERNEL);
	p->gpu = (__le64 *)get_zeroed_page(GFP_KERNEL);
	if (!p->cpu || !p->gpu)
		goto err_free;
	if (xa_err(xa_store(&env->pages, env->next, p, GFP_KERNEL)))
		goto err_free;
	*dma = FAKE_BUS_BASE + env->next * SZ_4K_ULL;
	env->next++;
	env->live++;
	return p->cpu;

err_free:
	free_page((unsigned long)p->gpu);
	free_page((unsigned long)p->cpu);
	kfree(p);
	return NULL;
}

static struct env_page *env_page(struct pgt_env *env, u64 dma)
{
	if (dma < FAKE_BUS_BASE)
		return NULL;
	return xa_load(&env->pages, (dma - FAKE_BUS_BASE) / SZ_4K);
}

static void env_page_free(struct env_page *p)
{
	free_page((unsigned long)p->gpu);
	free_page((unsigned long)p->cpu);
	kfree(p);
}

static void env_free(void *priv, void *va, u64 dma)
{
	struct pgt_env *env = priv;
	struct env_page *p = env_page(env, dma);

	KUNIT_EXPECT_NOT_NULL(env->test, p);
	if (!p)
		return;
	KUNIT_EXPECT_PTR_EQ(env->test, (void *)p->cpu, va);
	xa_erase(&env->pages, (dma - FAKE_BUS_BASE) / SZ_4K);
	env_page_free(p);
	env->live--;
}

static void env_sync(void *priv, void *va, u64 dma, size_t len)
{
	struct pgt_env *env = priv;
	struct env_page *p = env_page(env, dma & ~(SZ_4K_ULL - 1));
	size_t off = dma & (SZ_4K - 1);

	KUNIT_EXPECT_NOT_NULL(env->test, p);
	if (!p)
		return;
	KUNIT_EXPECT_PTR_EQ(env->test, va, (void *)p->cpu + off);
	KUNIT_EXPECT_GT(env->test, len, (size_t)0);
	KUNIT_EXPECT_LE(env->test, off + len, (size_t)SZ_4K);
	if (off + len > SZ_4K)
		return;
	memcpy((void *)p->gpu + off, va, len);
	env->syncs++;
}

static int env_read64(void *priv, u64 pa, u64 *val)
{
	struct env_page *p = env_page(priv, pa & ~(SZ_4K_ULL - 1));

	if (!p || (pa & 7))
		return -EFAULT;
	*val = le64_to_cpu(READ_ONCE(p->gpu[(pa & (SZ_4K - 1)) / 8]));
	return 0;
}

static const struct accmap_pgt_alloc_ops env_ops = {
	.alloc = env_alloc,
	.free = env_free,
	.sync = env_sync,
};

static int env_init(struct kunit_resource *res, void *context)
{
	struct pgt_env *env = kzalloc(sizeof(*env), GFP_KERNEL);

	if (!env)
		return -ENOMEM;
	xa_init(&env->pages);
	res->data = env;
	return 0;
}

static void env_exit(struct kunit_resource *res)
{
	struct pgt_env *env = res->data;
	struct env_page *p;
	unsigned long i;

	accmap_pgt_destroy(env->pgt);
	/* Only after a failed test: what the builder did not free. */
	xa_for_each(&env->pages, i, p)
		env_page_free(p);
	xa_destroy(&env->pages);
	kfree(env);
}

/* A fake device, torn down with the test, with no tree yet. */
static struct pgt_env *new_env(struct kunit *test, u32 format)
{
	struct pgt_env *env;

	env = kunit_alloc_resource(test, env_init, env_exit, GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	env->test = test;
	env->format = format;
	return env;
}

/* A fake device with an empty tree of @va_bits, in the test's format. */
static struct pgt_env *new_pgt(struct kunit *test, u32 va_bits)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);

	env->pgt = accmap_pgt_create(env->format, va_bits, &env_ops, env);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->pgt);
	KUNIT_ASSERT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	KUNIT_ASSERT_EQ(test, env->live, 1UL);
	return env;
}

static struct accmap_walk walk(struct pgt_env *env, u64 va)
{
	struct accmap_walk w;
	int ret;

	ret = accmap_walk(env->format, accmap_pgt_root(env->pgt), va,
			  env_read64, env, &w);
	KUNIT_EXPECT_EQ(env->test, ret, w.status == ACCMAP_WALK_OK ? 0 : -EFAULT);
	return w;
}

/* @va translates to @pa through a leaf at @level granting @perm. */
static void expect_maps(struct pgt_env *env, u64 va, u64 pa, u32 level,
			u32 perm, u32 attr)
{
	struct kunit *test = env->test;
	struct accmap_walk w = walk(env, va);

	KUNIT_EXPECT_EQ_MSG(test, w.status, ACCMAP_WALK_OK, "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(test, w.pa, pa, "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(test, w.level, level, "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(test, w.size, level == 3 ? SZ_4K_ULL : SZ_2M_ULL,
			    "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(test, w.perm, perm, "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(test, w.attr, attr, "va %#llx", va);
}

static void expect_unmapped(struct pgt_env *env, u64 va)
{
	struct accmap_walk w = walk(env, va);

	KUNIT_EXPECT_EQ_MSG(env->test, w.status, ACCMAP_WALK_TRANSLATION,
			    "va %#llx", va);
	KUNIT_EXPECT_EQ_MSG(env->test, w.pa, 0ULL, "va %#llx", va);
}

/* Destroys the tree now and checks every table page came back. */
static void destroy_pgt(struct pgt_env *env)
{
	accmap_pgt_destroy(env->pgt);
	env->pgt = NULL;
	KUNIT_EXPECT_EQ(env->test, env->live, 0UL);
}

static const u32 formats[] = {
	ACCMAP_PGT_MALI_AARCH64_4K,
	ACCMAP_PGT_MALI_LPAE,
};

static void format_desc(const u32 *format, char *desc)
{
	strscpy(desc, *format == ACCMAP_PGT_MALI_LPAE ? "mali_lpae" :
			"aarch64_4k", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(format, formats, format_desc);

/* ---- the builder, checked through the walker ---- */

static void pgt_empty(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	static const u64 vas[] = {
		0, SZ_4K, SZ_2M, SZ_1G, 0x123456789000ULL, 0xfffffffff000ULL,
	};
	struct accmap_walk w;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vas); i++) {
		w = walk(env, vas[i]);
		KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_TRANSLATION);
		KUNIT_EXPECT_EQ(test, w.level, 0U);
		KUNIT_EXPECT_EQ(test, w.pte, 0ULL);
	}
	destroy_pgt(env);
}

static void pgt_map_pages(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 va = 0x7f1234565000ULL, pa = 0x40003000ULL;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, 3 * SZ_4K, RW, 5),
			0);
	for (i = 0; i < 3; i++) {
		expect_maps(env, va + i * SZ_4K, pa + i * SZ_4K, 3, RW, 5);
		expect_maps(env, va + i * SZ_4K + 0xabc, pa + i * SZ_4K + 0xabc,
			    3, RW, 5);
	}
	expect_unmapped(env, va - SZ_4K);
	expect_unmapped(env, va + 3 * SZ_4K);
	/* One table per level: L0, L1, L2, L3. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 4UL);
	KUNIT_EXPECT_EQ(test, env->live, 4UL);
	KUNIT_EXPECT_GT(test, env->syncs, 0UL);
	destroy_pgt(env);
}

static void pgt_map_block(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 40);
	const u64 va = 0x80000000ULL + 3 * SZ_2M, pa = 0x1200000000ULL;
	const u64 size = 2 * SZ_2M + 2 * SZ_4K;
	struct accmap_walk w;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, size, RWX, 1), 0);
	expect_maps(env, va, pa, 2, RWX, 1);
	expect_maps(env, va + 0x1ff008, pa + 0x1ff008, 2, RWX, 1);
	expect_maps(env, va + SZ_2M + 0x123458, pa + SZ_2M + 0x123458, 2,
		    RWX, 1);
	/* The tail is shorter than a block: pages. */
	expect_maps(env, va + 2 * SZ_2M, pa + 2 * SZ_2M, 3, RWX, 1);
	expect_maps(env, va + 2 * SZ_2M + SZ_4K + 4, pa + 2 * SZ_2M + SZ_4K + 4,
		    3, RWX, 1);
	expect_unmapped(env, va + size);
	expect_unmapped(env, va - 8);

	w = walk(env, va);
	KUNIT_EXPECT_EQ(test, w.pte & 3, BLOCK);
	KUNIT_EXPECT_EQ(test, w.pte & GENMASK_ULL(47, 12), pa);
	/* L0, L1, L2 and one L3 for the tail. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 4UL);
	destroy_pgt(env);
}

static void pgt_map_block_unaligned_pa(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 40);
	const u64 va = 4 * SZ_2M_ULL, pa = 0x1200000000ULL + SZ_4K;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, SZ_2M, RO, 0), 0);
	for (i = 0; i < 512; i += 73)
		expect_maps(env, va + i * SZ_4K, pa + i * SZ_4K, 3, RO, 0);
	expect_maps(env, va + SZ_2M - SZ_4K, pa + SZ_2M - SZ_4K, 3, RO, 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 4UL);

	/* Unaligned VA with aligned PA: pages too. */
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, 8 * SZ_2M + SZ_4K,
					     0x1400000000ULL, SZ_2M, RO, 0), 0);
	expect_maps(env, 8 * SZ_2M + SZ_4K, 0x1400000000ULL, 3, RO, 0);
	expect_maps(env, 9 * SZ_2M, 0x1400000000ULL + SZ_2M - SZ_4K, 3, RO, 0);
	destroy_pgt(env);
}

static void pgt_overlap(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 va = 0x10000000ULL, pa = 0x20000000ULL;
	unsigned long tables, syncs;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, 4 * SZ_4K, RW, 2),
			0);
	tables = accmap_pgt_table_pages(env->pgt);
	syncs = env->syncs;

	/* Same range, a range inside, one that starts before, one across. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va, 0, 4 * SZ_4K, RO, 0),
			-EEXIST);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va + SZ_4K, 0, SZ_4K, RO,
					     0), -EEXIST);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va - 2 * SZ_4K, 0,
					     3 * SZ_4K, RO, 0), -EEXIST);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va - SZ_2M, 0,
					     2 * SZ_2M, RO, 0), -EEXIST);
	/* A block over pages is refused too. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va & ~(SZ_2M_ULL - 1),
					     0, SZ_2M, RO, 0), -EEXIST);

	/* Nothing changed: same tables, nothing written, old mapping intact. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), tables);
	KUNIT_EXPECT_EQ(test, env->syncs, syncs);
	expect_maps(env, va, pa, 3, RW, 2);
	expect_maps(env, va + 3 * SZ_4K, pa + 3 * SZ_4K, 3, RW, 2);
	expect_unmapped(env, va - 2 * SZ_4K);
	expect_unmapped(env, va - SZ_2M);

	/* Right next to it is fine; so is a page over a block's neighbour. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va + 4 * SZ_4K, 0,
					     SZ_4K, RO, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va + SZ_2M, 0, SZ_2M,
					     RO, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va + SZ_2M + SZ_4K, 0,
					     SZ_4K, RO, 0), -EEXIST);
	destroy_pgt(env);
}

static void pgt_unmap(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 va = 0x3fffffe00000ULL, pa = 0x600000ULL;
	const u64 size = SZ_2M + 3 * SZ_4K;

	/*
	 * A block in the last 2 MiB of L0 entry 127, then pages in L0 entry
	 * 128: root, L1 and L2 for the block, L1, L2 and L3 for the pages.
	 */
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, size, RW, 3), 0);
	expect_maps(env, va, pa, 2, RW, 3);
	expect_maps(env, va + SZ_2M, pa + SZ_2M, 3, RW, 3);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 6UL);

	/* A hole in the middle of the range is fine. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va + SZ_2M + SZ_4K,
					       SZ_4K), SZ_4K_ULL);
	expect_unmapped(env, va + SZ_2M + SZ_4K);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va, size),
			size - SZ_4K);
	expect_unmapped(env, va);
	expect_unmapped(env, va + SZ_2M);
	expect_unmapped(env, va + SZ_2M + 2 * SZ_4K);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	KUNIT_EXPECT_EQ(test, env->live, 1UL);

	/* Unmapping nothing; then remapping the same range works. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va, size), 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va, pa, size, RO, 0), 0);
	expect_maps(env, va + SZ_2M + 2 * SZ_4K, pa + SZ_2M + 2 * SZ_4K, 3,
		    RO, 0);
	destroy_pgt(env);
}

static void pgt_unmap_part_of_block(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 va = 16 * SZ_2M_ULL, pa = 32 * SZ_2M_ULL;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, SZ_2M, RW, 0), 0);
	/* Blocks are never split: a partial unmap leaves the block whole. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va, SZ_4K), 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va + SZ_4K,
					       SZ_2M - SZ_4K), 0ULL);
	expect_maps(env, va, pa, 2, RW, 0);
	expect_maps(env, va + SZ_2M - 8, pa + SZ_2M - 8, 2, RW, 0);
	/* A range covering it takes it. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, va - SZ_4K,
					       SZ_2M + 2 * SZ_4K), SZ_2M_ULL);
	expect_unmapped(env, va);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	destroy_pgt(env);
}

static void pgt_top_of_va_space(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 top = 0xfffffffff000ULL;

	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, top, 0xfffffffff000ULL,
					     SZ_4K, RW, 7), 0);
	expect_maps(env, top, 0xfffffffff000ULL, 3, RW, 7);
	expect_maps(env, top + 0xff8, 0xfffffffffff8ULL, 3, RW, 7);
	/* A block just below it; past 2^48 nothing. */
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, top + SZ_4K - 2 * SZ_2M,
					     SZ_2M, SZ_2M, RO, 1), 0);
	expect_maps(env, top + SZ_4K - 2 * SZ_2M, SZ_2M, 2, RO, 1);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, top + SZ_4K, 0, SZ_4K,
					     RO, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, walk(env, top + SZ_4K).status,
			ACCMAP_WALK_ADDRESS_SIZE);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, top, SZ_4K),
			SZ_4K_ULL);
	destroy_pgt(env);

	/* The top of a 32-bit space. */
	env = new_pgt(test, 32);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, 0xfffff000ULL, 0x5000,
					     SZ_4K, RO, 0), 0);
	expect_maps(env, 0xfffff000ULL, 0x5000, 3, RO, 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, 0xffffe000ULL, 0x5000,
					     2 * SZ_4K, RO, 0), -EEXIST);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, 0xfffff000ULL, 0x5000,
					     2 * SZ_4K, RO, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, 0x100000000ULL, 0x5000,
					     SZ_4K, RO, 0), -EINVAL);
	destroy_pgt(env);
}

static void pgt_root(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	u64 root = accmap_pgt_root(env->pgt);
	u64 table = root & GENMASK_ULL(47, 12);

	/* The root is the first page the tree allocated. */
	KUNIT_EXPECT_EQ(test, table, FAKE_BUS_BASE);
	if (env->format == ACCMAP_PGT_MALI_AARCH64_4K) {
		KUNIT_EXPECT_EQ(test, root, table);
	} else {
		KUNIT_EXPECT_EQ(test, root, table |
				MALI_LPAE_TRANSTAB_ADRMODE_TABLE |
				MALI_LPAE_TRANSTAB_READ_INNER |
				MALI_LPAE_TRANSTAB_SHARE_OUTER);
	}
	/* Mapping does not move the root. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, 0, 0, SZ_4K, RO, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_root(env->pgt), root);
	destroy_pgt(env);
}

struct perm_case {
	const char *name;
	u32 perm;
	u64 a64;	/* AArch64 4K permission bits */
	u64 lpae;	/* Mali LPAE permission bits */
};

static const struct perm_case perm_cases[] = {
	{ "ro", RO, A64_AP_RO | A64_XN, LPAE_R | LPAE_XN },
	{ "rw", RW, A64_AP_RW | A64_XN, LPAE_R | LPAE_W | LPAE_XN },
	{ "rx", RO | ACCMAP_PGT_PERM_EXEC, A64_AP_RO, LPAE_R },
	{ "rwx", RWX, A64_AP_RW, LPAE_R | LPAE_W },
};

static void pgt_perms(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	const u64 perm_bits = GENMASK_ULL(7, 6) | GENMASK_ULL(54, 53);
	unsigned int i, level;

	for (i = 0; i < ARRAY_SIZE(perm_cases); i++) {
		const struct perm_case *c = &perm_cases[i];

		for (level = 2; level <= 3; level++) {
			u64 va = (u64)(2 * i + level) * SZ_1G;
			u64 pa = level == 2 ? SZ_2M : SZ_4K;
			struct accmap_walk w;

			KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va, pa, pa,
							     c->perm, i), 0);
			w = walk(env, va);
			KUNIT_EXPECT_EQ_MSG(test, w.status, ACCMAP_WALK_OK,
					    "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, w.level, level, "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, w.perm, c->perm, "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, w.attr, i, "%s", c->name);
			KUNIT_EXPECT_EQ_MSG(test, (w.pte >> 2) & 7, (u64)i,
					    "%s", c->name);
			if (env->format == ACCMAP_PGT_MALI_AARCH64_4K) {
				KUNIT_EXPECT_EQ_MSG(test, w.pte & perm_bits,
						    c->a64, "%s", c->name);
				KUNIT_EXPECT_TRUE(test, w.pte & A64_AF);
				KUNIT_EXPECT_EQ(test, w.pte & 3,
						level == 3 ? A64_PAGE : BLOCK);
			} else {
				KUNIT_EXPECT_EQ_MSG(test, w.pte & perm_bits,
						    c->lpae, "%s", c->name);
				KUNIT_EXPECT_FALSE(test, w.pte & A64_AF);
				KUNIT_EXPECT_EQ(test, w.pte & 3, LPAE_LEAF);
			}
		}
	}
	destroy_pgt(env);
}

static void pgt_attrs(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 40);
	u32 attr;

	for (attr = 0; attr <= ACCMAP_REPLAY_ATTR_MAX; attr++) {
		KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, attr * SZ_4K,
						     attr * SZ_4K, SZ_4K, RW,
						     attr), 0);
		expect_maps(env, attr * SZ_4K, attr * SZ_4K, 3, RW, attr);
	}
	destroy_pgt(env);
}

static void pgt_accounting(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	static const u64 vas[] = {
		0, SZ_2M, SZ_1G - SZ_4K, 512 * SZ_1G_ULL, 0x7fffffe00000ULL,
		0xffffc0000000ULL,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vas); i++)
		KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, vas[i], 0,
						     2 * SZ_4K, RW, 0), 0);
	/*
	 * The root; an L1 table for L0 entries 0, 1, 255 and 511; an L2
	 * table for each GiB touched: 0, 1, 512, 0x7fff and 0xffff; an L3
	 * table for each 2 MiB touched: 0, 2M, 1G - 2M, 1G, 512G,
	 * 0x7fffffe00000 and 0xffffc0000000.  1 + 4 + 5 + 7.
	 */
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 17UL);
	KUNIT_EXPECT_EQ(test, env->live, 17UL);
	for (i = 0; i < ARRAY_SIZE(vas); i++)
		KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, vas[i],
						       2 * SZ_4K), 2 * SZ_4K_ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	KUNIT_EXPECT_EQ(test, env->live, 1UL);
	expect_unmapped(env, 0);

	/* One unmap of the whole space does the same. */
	for (i = 0; i < ARRAY_SIZE(vas); i++)
		KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, vas[i], 0,
						     2 * SZ_4K, RW, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, 0, BIT_ULL(48)),
			ARRAY_SIZE(vas) * 2 * SZ_4K_ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	destroy_pgt(env);
}

struct bad_map {
	const char *name;
	u64 va;
	u64 pa;
	u64 size;
	u32 perm;
	u32 attr;
};

#define PAGE_MASK_ULL	(~(SZ_4K_ULL - 1))

static const struct bad_map bad_maps[] = {
	{ "va_unaligned", SZ_4K + 1, 0, SZ_4K, RW, 0 },
	{ "pa_unaligned", SZ_4K, 0x800, SZ_4K, RW, 0 },
	{ "size_unaligned", SZ_4K, 0, SZ_4K + 0x800, RW, 0 },
	{ "size_zero", SZ_4K, 0, 0, RW, 0 },
	{ "va_beyond", BIT_ULL(40), 0, SZ_4K, RW, 0 },
	{ "end_beyond", BIT_ULL(40) - SZ_4K, 0, 2 * SZ_4K, RW, 0 },
	{ "va_wraps", PAGE_MASK_ULL, 0, 2 * SZ_4K, RW, 0 },
	{ "size_wraps", SZ_4K, 0, PAGE_MASK_ULL, RW, 0 },
	{ "pa_wraps", 0, PAGE_MASK_ULL, 2 * SZ_4K, RW, 0 },
	{ "pa_beyond_48", 0, BIT_ULL(48), SZ_4K, RW, 0 },
	{ "pa_end_beyond_48", 0, BIT_ULL(48) - SZ_4K, 2 * SZ_4K, RW, 0 },
	{ "no_perm", 0, 0, SZ_4K, 0, 0 },
	{ "write_only", 0, 0, SZ_4K, ACCMAP_PGT_PERM_WRITE, 0 },
	{ "exec_only", 0, 0, SZ_4K, ACCMAP_PGT_PERM_EXEC, 0 },
	{ "unknown_perm", 0, 0, SZ_4K, RW | BIT(3), 0 },
	{ "attr_8", 0, 0, SZ_4K, RW, ACCMAP_REPLAY_ATTR_MAX + 1 },
};

static void pgt_bad_args(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 40);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_maps); i++) {
		const struct bad_map *b = &bad_maps[i];

		KUNIT_EXPECT_EQ_MSG(test, accmap_pgt_map(env->pgt, b->va, b->pa,
							 b->size, b->perm,
							 b->attr),
				    -EINVAL, "%s", b->name);
	}
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	KUNIT_EXPECT_EQ(test, env->syncs, 0UL);

	/* Unmap takes nothing it cannot describe. */
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, 0, 0, 2 * SZ_4K, RW, 0),
			0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, 1, SZ_4K), 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, 0, SZ_4K + 1), 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, 0, PAGE_MASK_ULL), 0ULL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, 0, 0), 0ULL);
	expect_maps(env, SZ_4K, SZ_4K, 3, RW, 0);
	destroy_pgt(env);
}

static void pgt_create_errors(struct kunit *test)
{
	static const struct accmap_pgt_alloc_ops no_alloc = { .free = env_free };
	static const struct accmap_pgt_alloc_ops no_free = { .alloc = env_alloc };
	struct pgt_env *env = new_env(test, ACCMAP_PGT_MALI_LPAE);

	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(ACCMAP_PGT_COUNT, 48,
							&env_ops, env)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 31, &env_ops, env)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 49, &env_ops, env)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 48, NULL, env)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 48, &no_alloc, env)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 48, &no_free, env)),
			-EINVAL);
	env->limited = true;
	KUNIT_EXPECT_EQ(test, PTR_ERR(accmap_pgt_create(0, 48, &env_ops, env)),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, env->live, 0UL);
	/* Destroying nothing is fine. */
	accmap_pgt_destroy(NULL);
	accmap_pgt_destroy(ERR_PTR(-ENOMEM));
}

static void pgt_no_sync(struct kunit *test)
{
	static const struct accmap_pgt_alloc_ops ops = {
		.alloc = env_alloc,
		.free = env_free,
	};
	struct pgt_env *env = new_env(test, ACCMAP_PGT_MALI_AARCH64_4K);
	struct env_page *p;

	/* Without a sync callback the builder still works. */
	env->pgt = accmap_pgt_create(env->format, 48, &ops, env);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->pgt);
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, SZ_1G, 0, SZ_4K, RO, 0),
			0);
	p = env_page(env, FAKE_BUS_BASE);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_NE(test, le64_to_cpu(p->cpu[0]), 0ULL);
	KUNIT_EXPECT_EQ(test, env->syncs, 0UL);
	destroy_pgt(env);
}

static void pgt_enomem(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	/*
	 * Pages across two L1 entries.  Beside the neighbour's tables this
	 * needs three: an L3 table in the neighbour's L2 table, and an L2
	 * and an L3 table under the next L1 entry.
	 */
	const u64 va = 5 * SZ_1G_ULL - SZ_2M - SZ_4K, size = 2 * SZ_2M;
	const u64 pa = 0x100000000ULL + SZ_4K;
	unsigned long budget, tables;

	/* A neighbour sharing the L1 and L2 tables must survive. */
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(env->pgt, va - SZ_4K, 0, SZ_4K,
					     RW, 0), 0);
	tables = accmap_pgt_table_pages(env->pgt);
	KUNIT_ASSERT_EQ(test, tables, 4UL);

	for (budget = 0; budget < 3; budget++) {
		env->limited = true;
		env->budget = budget;
		KUNIT_EXPECT_EQ_MSG(test, accmap_pgt_map(env->pgt, va, pa, size,
							 RW, 0),
				    -ENOMEM, "budget %lu", budget);
		env->limited = false;
		KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), tables);
		KUNIT_EXPECT_EQ(test, env->live, tables);
		expect_unmapped(env, va);
		expect_unmapped(env, va + SZ_2M);
		expect_unmapped(env, va + size - SZ_4K);
		expect_maps(env, va - SZ_4K, 0, 3, RW, 0);
	}
	/* With enough memory the same call works. */
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(env->pgt, va, pa, size, RW, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 7UL);
	expect_maps(env, va + size - SZ_4K, pa + size - SZ_4K, 3, RW, 0);
	destroy_pgt(env);
}

/*
 * Random mappings in a 64 MiB window, checked page by page against a
 * reference, then unmapped one by one.
 */
#define RND_WINDOW	(64 * SZ_1M)
#define RND_BASE	(0x123ULL * SZ_1G)
#define RND_PAGES	(RND_WINDOW / SZ_4K)
#define RND_MAPS	64

struct rnd_map {
	u64 va;
	u64 size;
};

static void pgt_random(struct kunit *test)
{
	struct pgt_env *env = new_pgt(test, 48);
	struct rnd_map *maps;
	unsigned int n = 0, i;
	struct rnd_state rnd;
	u64 *ref, seed;
	u32 page;

	ref = kunit_kcalloc(test, RND_PAGES, sizeof(*ref), GFP_KERNEL);
	maps = kunit_kcalloc(test, RND_MAPS, sizeof(*maps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	KUNIT_ASSERT_NOT_NULL(test, maps);
	seed = get_random_u64();
	kunit_info(test, "seed %llu\n", seed);
	prandom_seed_state(&rnd, seed);

	for (i = 0; i < 4 * RND_MAPS && n < RND_MAPS; i++) {
		bool block = prandom_u32_state(&rnd) & 1;
		u64 va, pa, size, p;
		bool used = false;
		int ret;

		if (block) {
			va = prandom_u32_state(&rnd) % (RND_WINDOW / SZ_2M);
			va = RND_BASE + va * SZ_2M;
			pa = (u64)(prandom_u32_state(&rnd) % 4096) * SZ_2M;
			size = SZ_2M * (1 + prandom_u32_state(&rnd) % 3);
			size += SZ_4K * (prandom_u32_state(&rnd) % 4);
		} else {
			va = RND_BASE + (u64)(prandom_u32_state(&rnd) %
					      RND_PAGES) * SZ_4K;
			pa = (u64)prandom_u32_state(&rnd) * SZ_4K;
			size = SZ_4K * (1 + prandom_u32_state(&rnd) % 700);
		}
		if (va + size > RND_BASE + RND_WINDOW)
			size = RND_BASE + RND_WINDOW - va;
		for (p = 0; p < size; p += SZ_4K)
			used |= ref[(va + p - RND_BASE) / SZ_4K] != 0;

		ret = accmap_pgt_map(env->pgt, va, pa, size, RW, n & 7);
		KUNIT_ASSERT_EQ_MSG(test, ret, used ? -EEXIST : 0,
				    "va %#llx size %#llx", va, size);
		if (ret)
			continue;
		/* Reference: pa + 1, so that 0 means unmapped. */
		for (p = 0; p < size; p += SZ_4K)
			ref[(va + p - RND_BASE) / SZ_4K] = pa + p + 1;
		maps[n].va = va;
		maps[n].size = size;
		n++;
	}
	kunit_info(test, "%u mappings, %lu table pages\n", n,
		   accmap_pgt_table_pages(env->pgt));

	for (page = 0; page < RND_PAGES; page++) {
		u64 va = RND_BASE + (u64)page * SZ_4K + 8 * (page % 512);
		struct accmap_walk w = walk(env, va);

		if (!ref[page]) {
			KUNIT_ASSERT_EQ_MSG(test, w.status,
					    ACCMAP_WALK_TRANSLATION,
					    "va %#llx", va);
			continue;
		}
		KUNIT_ASSERT_EQ_MSG(test, w.status, ACCMAP_WALK_OK, "va %#llx",
				    va);
		KUNIT_ASSERT_EQ_MSG(test, w.pa, ref[page] - 1 + 8 * (page % 512),
				    "va %#llx", va);
		KUNIT_ASSERT_EQ(test, w.perm, RW);
	}

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(env->pgt, maps[i].va,
						       maps[i].size),
				maps[i].size);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(env->pgt), 1UL);
	for (page = 0; page < RND_PAGES; page += 97)
		expect_unmapped(env, RND_BASE + (u64)page * SZ_4K);
	destroy_pgt(env);
}

/* ---- the walker alone, on tables written by hand ---- */

/* A bare table page on the fake device; @dma gets its bus address. */
static u64 hand_table(struct pgt_env *env)
{
	u64 dma;

	KUNIT_ASSERT_NOT_NULL(env->test, env_alloc(env, &dma));
	return dma;
}

/* Writes entry @index of the table at @table, visible to the GPU. */
static void hand_set(struct pgt_env *env, u64 table, unsigned int index,
		     u64 val)
{
	struct env_page *p = env_page(env, table);

	KUNIT_ASSERT_NOT_NULL(env->test, p);
	p->cpu[index] = cpu_to_le64(val);
	p->gpu[index] = cpu_to_le64(val);
}

static u64 hand_root(struct pgt_env *env, u64 table)
{
	if (env->format == ACCMAP_PGT_MALI_LPAE)
		return table | MALI_LPAE_TRANSTAB_ADRMODE_TABLE;
	return table;
}

/* A readable, writable leaf of the format, of the given type bits. */
static u64 hand_leaf(struct pgt_env *env, u64 pa, u64 type)
{
	if (env->format == ACCMAP_PGT_MALI_LPAE)
		return pa | type | LPAE_R | LPAE_W;
	return pa | type | A64_AF | A64_AP_RW;
}

static struct accmap_walk hand_walk(struct pgt_env *env, u64 root, u64 va)
{
	struct accmap_walk w;
	int ret;

	ret = accmap_walk(env->format, root, va, env_read64, env, &w);
	KUNIT_EXPECT_EQ(env->test, ret, w.status == ACCMAP_WALK_OK ? 0 : -EFAULT);
	return w;
}

/* Tables for VA 0 down to level 3: l[0] is the root. */
static void hand_tree(struct pgt_env *env, u64 l[4])
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		l[i] = hand_table(env);
	for (i = 0; i < 3; i++)
		hand_set(env, l[i], 0, l[i + 1] | TABLE);
}

static void walk_block_1g(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	const u64 pa = 0x3c0000000ULL, va = 0xfe00000000ULL + 0x2345678;
	u64 l0 = hand_table(env), l1 = hand_table(env);
	struct accmap_walk w;

	hand_set(env, l0, va >> 39, l1 | TABLE);
	hand_set(env, l1, (va >> 30) & 511, hand_leaf(env, pa, BLOCK) | 0x10);
	w = hand_walk(env, hand_root(env, l0), va);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_OK);
	KUNIT_EXPECT_EQ(test, w.level, 1U);
	KUNIT_EXPECT_EQ(test, w.size, SZ_1G_ULL);
	KUNIT_EXPECT_EQ(test, w.pa, pa + 0x2345678);
	KUNIT_EXPECT_EQ(test, w.perm, RWX);
	KUNIT_EXPECT_EQ(test, w.attr, 4U);

	/* Address bits below the block size are ignored. */
	hand_set(env, l1, (va >> 30) & 511, hand_leaf(env, pa | 0x3ff000,
						      BLOCK));
	KUNIT_EXPECT_EQ(test, hand_walk(env, hand_root(env, l0), va).pa,
			pa + 0x2345678);
}

static void walk_block_0_invalid(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	u64 l0 = hand_table(env);
	struct accmap_walk w;

	hand_set(env, l0, 1, hand_leaf(env, 0, BLOCK));
	w = hand_walk(env, hand_root(env, l0), BIT_ULL(39) + SZ_4K);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_TRANSLATION);
	KUNIT_EXPECT_EQ(test, w.level, 0U);
	KUNIT_EXPECT_EQ(test, w.pte, hand_leaf(env, 0, BLOCK));
}

static void walk_level3_types(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	bool lpae = env->format == ACCMAP_PGT_MALI_LPAE;
	u64 l[4], root;
	struct accmap_walk w;

	hand_tree(env, l);
	root = hand_root(env, l[0]);
	hand_set(env, l[3], 1, hand_leaf(env, 0x11000, 0x3));
	hand_set(env, l[3], 2, hand_leaf(env, 0x12000, 0x1));
	hand_set(env, l[3], 3, hand_leaf(env, 0x13000, 0x2));
	hand_set(env, l[3], 4, hand_leaf(env, 0x14000, 0x0));

	/* Type 3 is a page in AArch64 4K mode, invalid in Mali LPAE. */
	w = hand_walk(env, root, 1 * SZ_4K);
	KUNIT_EXPECT_EQ(test, w.status, lpae ? ACCMAP_WALK_TRANSLATION :
					       ACCMAP_WALK_OK);
	KUNIT_EXPECT_EQ(test, w.level, 3U);
	/* Type 1 the other way round. */
	w = hand_walk(env, root, 2 * SZ_4K + 0x10);
	KUNIT_EXPECT_EQ(test, w.status, lpae ? ACCMAP_WALK_OK :
					       ACCMAP_WALK_TRANSLATION);
	if (lpae) {
		KUNIT_EXPECT_EQ(test, w.pa, 0x12010ULL);
		KUNIT_EXPECT_EQ(test, w.size, SZ_4K_ULL);
	}
	/* 2 (what kbase writes for invalid) and 0 are invalid in both. */
	KUNIT_EXPECT_EQ(test, hand_walk(env, root, 3 * SZ_4K).status,
			ACCMAP_WALK_TRANSLATION);
	KUNIT_EXPECT_EQ(test, hand_walk(env, root, 4 * SZ_4K).status,
			ACCMAP_WALK_TRANSLATION);
	/* A table entry of type 2 at level 1 stops the walk there. */
	hand_set(env, l[1], 0, l[2] | 0x2);
	w = hand_walk(env, root, 1 * SZ_4K);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_TRANSLATION);
	KUNIT_EXPECT_EQ(test, w.level, 1U);
	KUNIT_EXPECT_EQ(test, w.pte, l[2] | 0x2);
}

static void walk_access_flag(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	bool lpae = env->format == ACCMAP_PGT_MALI_LPAE;
	u64 l[4], root;
	struct accmap_walk w;

	hand_tree(env, l);
	root = hand_root(env, l[0]);
	hand_set(env, l[3], 0, hand_leaf(env, 0x5000, lpae ? 1 : 3) & ~A64_AF);
	hand_set(env, l[2], 1, hand_leaf(env, SZ_2M, 1) & ~A64_AF);

	/* Mali LPAE has no access flag; AArch64 4K faults without it. */
	w = hand_walk(env, root, 0);
	KUNIT_EXPECT_EQ(test, w.status, lpae ? ACCMAP_WALK_OK :
					       ACCMAP_WALK_ACCESS_FLAG);
	KUNIT_EXPECT_EQ(test, w.level, 3U);
	w = hand_walk(env, root, SZ_2M);
	KUNIT_EXPECT_EQ(test, w.status, lpae ? ACCMAP_WALK_OK :
					       ACCMAP_WALK_ACCESS_FLAG);
	KUNIT_EXPECT_EQ(test, w.level, 2U);
	if (!lpae)
		KUNIT_EXPECT_EQ(test, w.pa, 0ULL);
}

struct walk_perm_case {
	u64 bits;
	u32 perm;
};

static const struct walk_perm_case a64_perms[] = {
	{ 0ULL << 6, 0 },			/* privileged only: nothing */
	{ 0ULL << 6 | A64_XN, 0 },
	{ 2ULL << 6, 0 },
	{ A64_AP_RW, RWX },
	{ A64_AP_RW | A64_XN, RW },
	{ A64_AP_RO, RO | ACCMAP_PGT_PERM_EXEC },
	{ A64_AP_RO | A64_XN, RO },
	{ A64_AP_RW | BIT_ULL(53), RWX },	/* PXN: not the GPU's */
};

static const struct walk_perm_case lpae_perms[] = {
	{ 0, ACCMAP_PGT_PERM_EXEC },
	{ LPAE_XN, 0 },
	{ LPAE_R | LPAE_W, RWX },
	{ LPAE_R | BIT_ULL(53), RO },
	{ LPAE_R | BIT_ULL(54), RO },
	{ LPAE_W | LPAE_XN, ACCMAP_PGT_PERM_WRITE },
};

static void walk_perms(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	bool lpae = env->format == ACCMAP_PGT_MALI_LPAE;
	const struct walk_perm_case *c = lpae ? lpae_perms : a64_perms;
	unsigned int i, n = lpae ? ARRAY_SIZE(lpae_perms) :
				   ARRAY_SIZE(a64_perms);
	u64 l[4], root;

	hand_tree(env, l);
	root = hand_root(env, l[0]);
	for (i = 0; i < n; i++) {
		u64 pte = (i + 1) * SZ_4K_ULL | c[i].bits |
			  (lpae ? LPAE_LEAF : A64_PAGE | A64_AF);
		struct accmap_walk w;

		hand_set(env, l[3], i, pte);
		w = hand_walk(env, root, i * SZ_4K_ULL);
		KUNIT_EXPECT_EQ_MSG(test, w.status, ACCMAP_WALK_OK, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, w.perm, c[i].perm, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, w.pte, pte, "case %u", i);
	}
}

static void walk_bad_root(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	bool lpae = env->format == ACCMAP_PGT_MALI_LPAE;
	u64 l[4];
	struct accmap_walk w;
	int ret;

	hand_tree(env, l);
	hand_set(env, l[3], 0, hand_leaf(env, 0x7000, lpae ? 1 : 3));
	KUNIT_EXPECT_EQ(test, hand_walk(env, hand_root(env, l[0]), 0).status,
			ACCMAP_WALK_OK);

	if (lpae) {
		/* The cache hints are ignored, the mode bits are not. */
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | 0x1f, 0).status,
				ACCMAP_WALK_OK);
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0], 0).status,
				ACCMAP_WALK_BAD_ROOT);
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | 1, 0).status,
				ACCMAP_WALK_BAD_ROOT);
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | 2, 0).status,
				ACCMAP_WALK_BAD_ROOT);
	} else {
		/* An LPAE-style value is refused rather than masked. */
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | 3, 0).status,
				ACCMAP_WALK_BAD_ROOT);
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | 0x800, 0).status,
				ACCMAP_WALK_BAD_ROOT);
		KUNIT_EXPECT_EQ(test, hand_walk(env, l[0] | BIT_ULL(48),
						0).status,
				ACCMAP_WALK_BAD_ROOT);
	}

	ret = accmap_walk(ACCMAP_PGT_COUNT, l[0] | 3, 0, env_read64, env, &w);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_BAD_ROOT);
}

static void walk_bus_error(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	u64 l[4], root;
	struct accmap_walk w;

	hand_tree(env, l);
	root = hand_root(env, l[0]);
	/* Level 1 points at an address with nothing behind it. */
	hand_set(env, l[1], 0, 0x1000 | TABLE);
	w = hand_walk(env, root, 0);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_BUS);
	KUNIT_EXPECT_EQ(test, w.level, 2U);
	KUNIT_EXPECT_EQ(test, w.pa, 0ULL);

	/* A root with nothing behind it. */
	w = hand_walk(env, hand_root(env, 0x2000), 0);
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_BUS);
	KUNIT_EXPECT_EQ(test, w.level, 0U);
}

static void walk_address_size(struct kunit *test)
{
	struct pgt_env *env = new_env(test, *(const u32 *)test->param_value);
	u64 l[4], root;
	struct accmap_walk w;

	hand_tree(env, l);
	root = hand_root(env, l[0]);
	hand_set(env, l[3], 0, hand_leaf(env, 0x7000,
					 env->format == ACCMAP_PGT_MALI_LPAE ?
					 1 : 3));
	/* VA bits above 47 are not ignored: they fault. */
	w = hand_walk(env, root, BIT_ULL(48));
	KUNIT_EXPECT_EQ(test, w.status, ACCMAP_WALK_ADDRESS_SIZE);
	KUNIT_EXPECT_EQ(test, hand_walk(env, root, U64_MAX).status,
			ACCMAP_WALK_ADDRESS_SIZE);
	KUNIT_EXPECT_EQ(test, hand_walk(env, root, 0).status, ACCMAP_WALK_OK);
}

static struct kunit_case replay_pgtable_cases[] = {
	KUNIT_CASE_PARAM(pgt_empty, format_gen_params),
	KUNIT_CASE_PARAM(pgt_map_pages, format_gen_params),
	KUNIT_CASE_PARAM(pgt_map_block, format_gen_params),
	KUNIT_CASE_PARAM(pgt_map_block_unaligned_pa, format_gen_params),
	KUNIT_CASE_PARAM(pgt_overlap, format_gen_params),
	KUNIT_CASE_PARAM(pgt_unmap, format_gen_params),
	KUNIT_CASE_PARAM(pgt_unmap_part_of_block, format_gen_params),
	KUNIT_CASE_PARAM(pgt_top_of_va_space, format_gen_params),
	KUNIT_CASE_PARAM(pgt_root, format_gen_params),
	KUNIT_CASE_PARAM(pgt_perms, format_gen_params),
	KUNIT_CASE_PARAM(pgt_attrs, format_gen_params),
	KUNIT_CASE_PARAM(pgt_accounting, format_gen_params),
	KUNIT_CASE_PARAM(pgt_bad_args, format_gen_params),
	KUNIT_CASE(pgt_create_errors),
	KUNIT_CASE(pgt_no_sync),
	KUNIT_CASE_PARAM(pgt_enomem, format_gen_params),
	KUNIT_CASE_PARAM(pgt_random, format_gen_params),
	KUNIT_CASE_PARAM(walk_block_1g, format_gen_params),
	KUNIT_CASE_PARAM(walk_block_0_invalid, format_gen_params),
	KUNIT_CASE_PARAM(walk_level3_types, format_gen_params),
	KUNIT_CASE_PARAM(walk_access_flag, format_gen_params),
	KUNIT_CASE_PARAM(walk_perms, format_gen_params),
	KUNIT_CASE_PARAM(walk_bad_root, format_gen_params),
	KUNIT_CASE_PARAM(walk_bus_error, format_gen_params),
	KUNIT_CASE_PARAM(walk_address_size, format_gen_params),
	{}
};

static struct kunit_suite replay_pgtable_suite = {
	.name = "accmap_replay_pgtable",
	.test_cases = replay_pgtable_cases,
};

kunit_test_suite(replay_pgtable_suite);

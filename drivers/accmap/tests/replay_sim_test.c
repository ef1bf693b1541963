// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the software Mali model (replay_sim.c), driven through
 * its target operations on a hand-made session, as the executor drives
 * it.
 *
 * Each test opens its own model.  Page tables are built by hand here, in
 * the AArch64 4K format, from table pages the model's own pgt_alloc ops
 * hand out; GPU memory is pages the test allocates and hands over with
 * add_memory().  The fixture closes the model before freeing those pages,
 * so that a failed assertion still leaves nothing behind.
 */

#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../mali_regs.h"
#include "../replay.h"
#include "../svm.h"

#define FX_PAGES	64	/* buffer pages a test may allocate */
#define FX_TABLES	64	/* table pages of the hand-built tables */
#define FX_BUFS		16	/* mapped buffers a test may look up */
#define FX_GPU_PAGE	SZ_4K
#define FX_WAIT_US	5000000	/* jobs here take far less */

/* Hand-built AArch64 4K entries. */
#define FX_PTE_TABLE	0x3ULL
#define FX_PTE_PAGE	0x3ULL
#define FX_PTE_AF	BIT_ULL(10)
#define FX_PTE_RW	BIT_ULL(6)
#define FX_PTE_RO	(3ULL << 6)
#define FX_PTE_ADDR	GENMASK_ULL(47, 12)

#define FX_RO		ACCMAP_PGT_PERM_READ
#define FX_RW		(ACCMAP_PGT_PERM_READ | ACCMAP_PGT_PERM_WRITE)

/* Not in mali_regs.h: a table walk that hit no memory, at @level. */
#define FX_FAULT_TRANSTAB_BUS(level)	(0xd0 + (level))

/**
 * struct fx_buf - GPU memory a test mapped and reads and writes
 * @va:     first GPU virtual address
 * @npages: 4 KiB pages, each its own kernel page
 * @kva:    kernel address of each page
 */
struct fx_buf {
	u64 va;
	unsigned int npages;
	u8 *kva[FX_PAGES];
};

/**
 * struct sim_fixture - a model on a hand-made session
 * @target:  the target as accmap_sim_target_init() describes it
 * @s:       the session
 * @ops:     the target's operations
 * @open:    @s is open
 * @root:    device address of the level-0 table
 * @pgt:     if set, fx_map() maps with the page-table builder instead
 * @ntables: entries used in @tpa and @tva
 * @tpa:     device addresses of the table pages
 * @tva:     their kernel addresses
 * @npages:  entries used in @pages
 * @pages:   buffer pages, freed after close
 * @nbufs:   entries used in @bufs
 * @bufs:    mapped buffers
 */
struct sim_fixture {
	struct accmap_replay_target target;
	struct accmap_replay_session s;
	const struct accmap_replay_target_ops *ops;
	bool open;
	u64 root;
	struct accmap_pgt *pgt;
	unsigned int ntables;
	u64 tpa[FX_TABLES];
	__le64 *tva[FX_TABLES];
	unsigned int npages;
	struct page *pages[FX_PAGES];
	unsigned int nbufs;
	struct fx_buf bufs[FX_BUFS];
};

static void fx_close(struct sim_fixture *fx)
{
	if (fx->open) {
		fx->ops->close(&fx->s);
		fx->open = false;
	}
}

static int fx_init(struct kunit_resource *res, void *context)
{
	struct sim_fixture *fx;
	int ret;

	fx = kzalloc(sizeof(*fx), GFP_KERNEL);
	if (!fx)
		return -ENOMEM;
	ret = accmap_sim_target_init(&fx->target);
	if (ret)
		goto err_free;
	fx->ops = fx->target.ops;
	fx->s.target = &fx->target;
	fx->s.format = ACCMAP_PGT_MALI_AARCH64_4K;
	fx->s.va_bits = 48;
	ret = fx->ops->open(&fx->s);
	if (ret)
		goto err_free;
	fx->open = true;
	res->data = fx;
	return 0;

err_free:
	kfree(fx);
	return ret;
}

static void fx_free(struct kunit_resource *res)
{
	struct sim_fixture *fx = res->data;
	unsigned int i;

	/*
	 * Close first: it stops the model before its memory goes.  A builder
	 * left behind by a failed test can go after: its frees do nothing.
	 */
	fx_close(fx);
	accmap_pgt_destroy(fx->pgt);
	for (i = 0; i < fx->npages; i++)
		__free_page(fx->pages[i]);
	kfree(fx);
}

static u32 rd(struct sim_fixture *fx, u32 offset)
{
	return fx->ops->read32(&fx->s, offset);
}

static void wr(struct sim_fixture *fx, u32 offset, u32 value)
{
	fx->ops->write32(&fx->s, offset, value);
}

static u64 rd64(struct sim_fixture *fx, u32 offset)
{
	return rd(fx, offset) | (u64)rd(fx, offset + 4) << 32;
}

static void wr64(struct sim_fixture *fx, u32 offset, u64 value)
{
	wr(fx, offset, lower_32_bits(value));
	wr(fx, offset + 4, upper_32_bits(value));
}

static __le64 *fx_table(struct sim_fixture *fx, u64 pa)
{
	unsigned int i;

	for (i = 0; i < fx->ntables; i++)
		if (fx->tpa[i] == pa)
			return fx->tva[i];
	return NULL;
}

static u64 fx_new_table(struct kunit *test, struct sim_fixture *fx)
{
	void *va;
	u64 pa = 0;

	KUNIT_ASSERT_LT(test, fx->ntables, (unsigned int)FX_TABLES);
	va = fx->ops->pgt_alloc->alloc(&fx->s, &pa);
	KUNIT_ASSERT_NOT_NULL(test, va);
	KUNIT_ASSERT_TRUE(test, IS_ALIGNED(pa, SZ_4K));
	KUNIT_ASSERT_NULL(test, memchr_inv(va, 0, SZ_4K));
	fx->tpa[fx->ntables] = pa;
	fx->tva[fx->ntables] = va;
	fx->ntables++;
	return pa;
}

static struct sim_fixture *new_fixture(struct kunit *test)
{
	struct sim_fixture *fx;

	fx = kunit_alloc_resource(test, fx_init, fx_free, GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fx);
	fx->root = fx_new_table(test, fx);
	return fx;
}

/* Maps the GPU page at @va to device address @pa with @perm. */
static void fx_map(struct kunit *test, struct sim_fixture *fx, u64 va, u64 pa,
		   u32 perm)
{
	u64 table = fx->root, pte;
	unsigned int level;
	__le64 *t;

	if (fx->pgt) {
		KUNIT_ASSERT_EQ(test, accmap_pgt_map(fx->pgt, va, pa, FX_GPU_PAGE,
						     perm, 0), 0);
		return;
	}
	for (level = 0; level < 3; level++) {
		t = fx_table(fx, table);
		KUNIT_ASSERT_NOT_NULL(test, t);
		t += (va >> (39 - 9 * level)) & 0x1ff;
		pte = le64_to_cpu(*t);
		if ((pte & 0x3) != FX_PTE_TABLE) {
			u64 pa_next = fx_new_table(test, fx);

			pte = pa_next | FX_PTE_TABLE;
			*t = cpu_to_le64(pte);
		}
		table = pte & FX_PTE_ADDR;
	}
	t = fx_table(fx, table);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t += (va >> 12) & 0x1ff;
	pte = (pa & FX_PTE_ADDR) | FX_PTE_PAGE | FX_PTE_AF |
	      (perm & ACCMAP_PGT_PERM_WRITE ? FX_PTE_RW : FX_PTE_RO);
	*t = cpu_to_le64(pte);
}

/* A zeroed page, not handed to the model: *@pa is its device address. */
static void *fx_page(struct kunit *test, struct sim_fixture *fx, u64 *pa)
{
	struct page *page;

	KUNIT_ASSERT_LT(test, fx->npages, (unsigned int)FX_PAGES);
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_NOT_NULL(test, page);
	fx->pages[fx->npages++] = page;
	*pa = page_to_phys(page);
	return page_address(page);
}

/* A zeroed page handed to the model as buffer memory. */
static void *fx_mem_page(struct kunit *test, struct sim_fixture *fx, u64 *pa)
{
	void *kva = fx_page(test, fx, pa);

	KUNIT_ASSERT_EQ(test, fx->ops->add_memory(&fx->s, *pa, kva, PAGE_SIZE), 0);
	return kva;
}

/* @npages pages of buffer memory mapped at @va with @perm. */
static struct fx_buf *fx_buf(struct kunit *test, struct sim_fixture *fx,
			     u64 va, unsigned int npages, u32 perm)
{
	struct fx_buf *b;
	unsigned int i;
	u64 pa;

	KUNIT_ASSERT_LT(test, fx->nbufs, (unsigned int)FX_BUFS);
	KUNIT_ASSERT_LE(test, npages, (unsigned int)FX_PAGES);
	b = &fx->bufs[fx->nbufs++];
	b->va = va;
	b->npages = npages;
	for (i = 0; i < npages; i++) {
		b->kva[i] = fx_mem_page(test, fx, &pa);
		fx_map(test, fx, va + i * FX_GPU_PAGE, pa, perm);
	}
	return b;
}

/* The kernel address of mapped GPU address @va, @len bytes in one page. */
static void *fx_kva(struct kunit *test, struct sim_fixture *fx, u64 va,
		    size_t len)
{
	unsigned int i;

	for (i = 0; i < fx->nbufs; i++) {
		struct fx_buf *b = &fx->bufs[i];
		u64 off = va - b->va;

		if (va < b->va || off >= (u64)b->npages * FX_GPU_PAGE)
			continue;
		KUNIT_ASSERT_LE(test, (off & (FX_GPU_PAGE - 1)) + len,
				(u64)FX_GPU_PAGE);
		return b->kva[off / FX_GPU_PAGE] + (off & (FX_GPU_PAGE - 1));
	}
	KUNIT_ASSERT_TRUE_MSG(test, false, "GPU address %#llx is not mapped here",
			      va);
	return NULL;
}

static void put32(struct kunit *test, struct sim_fixture *fx, u64 va, u32 v)
{
	__le32 *p = fx_kva(test, fx, va, sizeof(*p));

	*p = cpu_to_le32(v);
}

static u32 get32(struct kunit *test, struct sim_fixture *fx, u64 va)
{
	__le32 *p = fx_kva(test, fx, va, sizeof(*p));

	return le32_to_cpu(*p);
}

static void put64(struct kunit *test, struct sim_fixture *fx, u64 va, u64 v)
{
	__le64 *p = fx_kva(test, fx, va, sizeof(*p));

	*p = cpu_to_le64(v);
}

/* A job descriptor header at @va. */
static void put_jd(struct kunit *test, struct sim_fixture *fx, u64 va,
		   u8 type, u64 next, bool next64)
{
	u8 *p = fx_kva(test, fx, va, MALI_JD_HEADER_SIZE);

	memset(p, 0, MALI_JD_HEADER_SIZE);
	p[MALI_JD_TYPE_BYTE] = type << 1 | (next64 ? 1 : 0);
	if (next64)
		put64(test, fx, va + MALI_JD_NEXT, next);
	else
		put32(test, fx, va + MALI_JD_NEXT, next);
}

/* An ACCMAP_SIM_JOB_TYPE job at @va. */
static void put_sim_job(struct kunit *test, struct sim_fixture *fx, u64 va,
			u64 next, const struct accmap_sim_job *job)
{
	u64 p = va + ACCMAP_SIM_JOB_OFFSET;

	put_jd(test, fx, va, ACCMAP_SIM_JOB_TYPE, next, true);
	put32(test, fx, p + offsetof(struct accmap_sim_job, op), job->op);
	put32(test, fx, p + offsetof(struct accmap_sim_job, flags), job->flags);
	put32(test, fx, p + offsetof(struct accmap_sim_job, m), job->m);
	put32(test, fx, p + offsetof(struct accmap_sim_job, n), job->n);
	put32(test, fx, p + offsetof(struct accmap_sim_job, k), job->k);
	put32(test, fx, p + offsetof(struct accmap_sim_job, pad), job->pad);
	put64(test, fx, p + offsetof(struct accmap_sim_job, a), job->a);
	put64(test, fx, p + offsetof(struct accmap_sim_job, b), job->b);
	put64(test, fx, p + offsetof(struct accmap_sim_job, c), job->c);
}

/* Points AS @as at the tables (AArch64 4K) and latches it. */
static void fx_setup_as(struct sim_fixture *fx, unsigned int as)
{
	u64 root = fx->pgt ? accmap_pgt_root(fx->pgt) : fx->root;

	wr64(fx, MALI_AS_BASE(as) + MALI_AS_TRANSTAB_LO, root);
	wr64(fx, MALI_AS_BASE(as) + MALI_AS_MEMATTR_LO, 0x4c8d888d8f88ULL);
	wr64(fx, MALI_AS_BASE(as) + MALI_AS_TRANSCFG_LO,
	     MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr(fx, MALI_AS_BASE(as) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
}

static void fx_unmask(struct sim_fixture *fx)
{
	wr(fx, MALI_GPU_IRQ_MASK, ~0U);
	wr(fx, MALI_JOB_IRQ_MASK, ~0U);
	wr(fx, MALI_MMU_IRQ_MASK, ~0U);
}

static void fx_start(struct sim_fixture *fx, unsigned int slot, u64 head,
		     unsigned int as)
{
	u32 js = MALI_JS_BASE(slot);

	wr64(fx, js + MALI_JS_HEAD_NEXT_LO, head);
	wr64(fx, js + MALI_JS_AFFINITY_NEXT_LO, 0xff);
	wr(fx, js + MALI_JS_CONFIG_NEXT, as);
	wr(fx, js + MALI_JS_COMMAND_NEXT, MALI_JS_COMMAND_START);
}

static int fx_wait(struct sim_fixture *fx, u32 irq, u32 mask, u32 timeout_us,
		   u32 *seen)
{
	return fx->ops->wait_irq(&fx->s, irq, mask, timeout_us, seen);
}

/* Waits for slot @slot to end, done or failed; returns JOB STATUS seen. */
static u32 fx_wait_job(struct kunit *test, struct sim_fixture *fx,
		       unsigned int slot)
{
	u32 seen = 0;

	KUNIT_ASSERT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB,
				      MALI_JOB_IRQ_DONE(slot) |
				      MALI_JOB_IRQ_FAILED(slot),
				      FX_WAIT_US, &seen), 0);
	return seen;
}

/* Waits for an MMU fault and returns it. */
static struct accmap_replay_fault fx_wait_fault(struct kunit *test,
						struct sim_fixture *fx)
{
	struct accmap_replay_fault f = { };
	u32 seen = 0;

	KUNIT_ASSERT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, ~0U,
				      FX_WAIT_US, &seen), -EIO);
	KUNIT_ASSERT_TRUE(test, fx->ops->mmu_fault(&fx->s, &f));
	return f;
}

static u32 fault_code(u32 type, u32 access)
{
	return type | access << MALI_FAULT_ACCESS_SHIFT;
}

static void sim_target(struct kunit *test)
{
	struct accmap_replay_target t;

	memset(&t, 0xa5, sizeof(t));
	KUNIT_ASSERT_EQ(test, accmap_sim_target_init(&t), 0);
	KUNIT_EXPECT_STREQ(test, t.name, "sim");
	KUNIT_EXPECT_EQ(test, t.flags,
			ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ |
			ACCMAP_REPLAY_TARGET_SVM);
	KUNIT_EXPECT_EQ(test, t.window_size, (u32)MALI_WINDOW_SIZE);
	KUNIT_EXPECT_EQ(test, t.formats,
			(u32)(BIT(ACCMAP_PGT_MALI_AARCH64_4K) |
			      BIT(ACCMAP_PGT_MALI_LPAE)));
	KUNIT_EXPECT_EQ(test, t.as_count, 8U);
	KUNIT_EXPECT_EQ(test, t.gpu_id, 0x60a00002U);
	KUNIT_EXPECT_PTR_EQ(test, t.ops, &accmap_sim_ops);
	KUNIT_EXPECT_EQ(test, atomic_read(&t.sessions), 0);
	KUNIT_EXPECT_NOT_NULL(test, t.ops->pgt_alloc);
	KUNIT_EXPECT_NULL(test, t.ops->dma_dev);
}

static void sim_id_registers(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	static const struct {
		u32 offset, value;
	} regs[] = {
		{ MALI_GPU_ID, 0x60a00002 },
		{ MALI_L2_FEATURES, 0x07130206 },
		{ MALI_TILER_FEATURES, 0x809 },
		{ MALI_MEM_FEATURES, 0x101 },
		{ MALI_MMU_FEATURES, 0x2830 },
		{ MALI_AS_PRESENT, 0xff },
		{ MALI_JS_PRESENT, 0x7 },
		{ MALI_THREAD_MAX_THREADS, 0x180 },
		{ MALI_THREAD_FEATURES, 0x0a046000 },
		{ MALI_TEXTURE_FEATURES(0), 0xffffffff },
		{ MALI_TEXTURE_FEATURES(2), 0xfe3fffff },
		{ MALI_JS_FEATURES(0), 0x20e },
		{ MALI_JS_FEATURES(1), 0x4fe },
		{ MALI_JS_FEATURES(2), 0x7e },
		{ MALI_JS_FEATURES(3), 0 },
		{ MALI_SHADER_PRESENT_LO, 0xff },
		{ MALI_SHADER_PRESENT_HI, 0 },
		{ MALI_TILER_PRESENT_LO, 1 },
		{ MALI_L2_PRESENT_LO, 1 },
		{ MALI_SHADER_READY_LO, 0 },
		{ MALI_L2_READY_LO, 0 },
		{ MALI_GPU_STATUS, 0 },
		{ MALI_LATEST_FLUSH, 0 },
		{ 0x0300, 0 },				/* not modelled */
		{ MALI_WINDOW_SIZE - 4, 0 },
		{ MALI_JS_BASE(3) + MALI_JS_STATUS, 0 },	/* no slot 3 */
		{ MALI_AS_BASE(8) + MALI_AS_TRANSTAB_LO, 0 },	/* no AS 8 */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(regs); i++)
		KUNIT_EXPECT_EQ_MSG(test, rd(fx, regs[i].offset), regs[i].value,
				    "register %#x", regs[i].offset);

	/* Read-only registers stay. */
	wr(fx, MALI_GPU_ID, 0);
	wr(fx, MALI_SHADER_PRESENT_LO, 0);
	wr(fx, MALI_JS_PRESENT, 0);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_ID), 0x60a00002U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_PRESENT_LO), 0xffU);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_PRESENT), 0x7U);
	/* Slots and address spaces that do not exist ignore writes. */
	wr(fx, MALI_AS_BASE(8) + MALI_AS_TRANSTAB_LO, 0x1000);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_AS_BASE(8) + MALI_AS_TRANSTAB_LO), 0U);
	wr(fx, MALI_JS_BASE(3) + MALI_JS_HEAD_NEXT_LO, 0x1000);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(3) + MALI_JS_HEAD_NEXT_LO), 0U);
}

static void sim_power(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u32 changed = MALI_GPU_IRQ_POWER_CHANGED |
			    MALI_GPU_IRQ_POWER_CHANGED_ALL;

	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT), 0U);

	/* Only present cores come up; the L2 comes with them. */
	wr(fx, MALI_SHADER_PWRON_LO, 0xffff);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_LO), 0xffU);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_HI), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_L2_READY_LO), 1U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_TILER_READY_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT), changed);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_PWRTRANS_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_L2_PWRTRANS_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_PWRON_LO), 0U);

	/* STATUS only through MASK. */
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_STATUS), 0U);
	wr(fx, MALI_GPU_IRQ_MASK, MALI_GPU_IRQ_POWER_CHANGED_ALL);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_STATUS),
			MALI_GPU_IRQ_POWER_CHANGED_ALL);
	wr(fx, MALI_GPU_IRQ_CLEAR, changed);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT), 0U);

	wr(fx, MALI_TILER_PWRON_LO, 0x3);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_TILER_READY_LO), 1U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT), changed);
	wr(fx, MALI_SHADER_PWRON_HI, ~0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_HI), 0U);

	wr(fx, MALI_SHADER_PWROFF_LO, 0x0f);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_LO), 0xf0U);
	wr(fx, MALI_TILER_PWROFF_LO, 1);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_TILER_READY_LO), 0U);
	wr(fx, MALI_L2_PWROFF_LO, 1);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_L2_READY_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_LO), 0xf0U);
	wr(fx, MALI_L2_PWRON_LO, 1);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_L2_READY_LO), 1U);
}

static const u32 irq_base[ACCMAP_REPLAY_IRQ_COUNT] = {
	[ACCMAP_REPLAY_IRQ_JOB] = MALI_JOB_IRQ_RAWSTAT,
	[ACCMAP_REPLAY_IRQ_MMU] = MALI_MMU_IRQ_RAWSTAT,
	[ACCMAP_REPLAY_IRQ_GPU] = MALI_GPU_IRQ_RAWSTAT,
};

static void sim_irq_registers(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	/* No MMU fault bits (0-7): those would make every wait fail. */
	const u32 bits = 0x00050100;
	unsigned int irq;
	u32 seen;

	for (irq = 0; irq < ACCMAP_REPLAY_IRQ_COUNT; irq++) {
		u32 base = irq_base[irq];

		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x0), 0U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x8), 0U);
		/* Writing RAWSTAT raises bits, as the hardware's test does. */
		wr(fx, base + 0x0, bits);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x0), bits);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0xc), 0U);
		wr(fx, base + 0x8, 0x00040100);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x8), 0x00040100U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0xc), 0x00040100U);
		/* CLEAR reads 0 and clears only the bits written. */
		wr(fx, base + 0x4, 0x00000100);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x4), 0U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x0), 0x00050000U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0xc), 0x00040000U);

		/* wait_irq acknowledges the raised bits of its mask only. */
		wr(fx, base + 0x0, 0x100);
		wr(fx, base + 0x8, ~0U);
		seen = 0;
		KUNIT_EXPECT_EQ(test, fx_wait(fx, irq, 0x00040000, 1000, &seen),
				0);
		KUNIT_EXPECT_EQ(test, seen, 0x00050100U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x0), 0x00010100U);
		/*
		 * Raised in RAWSTAT but masked: not seen.  Bit 16 of JOB is
		 * slot 0's FAILED bit, raised in RAWSTAT: a failed job the
		 * wait does not wait for ends it, masked or not.
		 */
		wr(fx, base + 0x8, 0);
		KUNIT_EXPECT_EQ(test, fx_wait(fx, irq, 0x100, 1000, &seen),
				irq == ACCMAP_REPLAY_IRQ_JOB ? -ECANCELED :
				-ETIMEDOUT);
		if (irq == ACCMAP_REPLAY_IRQ_JOB) {
			const u32 failed0 = MALI_JOB_IRQ_FAILED(0);
			struct accmap_replay_fault f = { };

			KUNIT_EXPECT_TRUE(test, fx->ops->job_failed(&fx->s, 0, &f));
			KUNIT_EXPECT_EQ(test, f.as, 0U);
			/* Waiting for that bit, or naming it expected: none. */
			KUNIT_EXPECT_FALSE(test, fx->ops->job_failed(&fx->s, failed0,
								     &f));
			KUNIT_EXPECT_EQ(test, fx_wait(fx, irq, 0x10100, 1000,
						      &seen), -ETIMEDOUT);
		}
		wr(fx, base + 0x4, ~0U);
		KUNIT_EXPECT_EQ(test, rd(fx, base + 0x0), 0U);
	}

	/* An MMU fault bit: every wait reports it, mmu_fault() names it. */
	wr(fx, MALI_MMU_IRQ_RAWSTAT, MALI_MMU_IRQ_FAULT(5) | MALI_MMU_IRQ_FAULT(2));
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, 1, 1000, &seen),
			-EIO);
	{
		struct accmap_replay_fault f = { .as = 99 };

		KUNIT_EXPECT_TRUE(test, fx->ops->mmu_fault(&fx->s, &f));
		KUNIT_EXPECT_EQ(test, f.as, 2U);
	}
	wr(fx, MALI_MMU_IRQ_MASK, MALI_MMU_IRQ_FAULT(2));
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_MMU,
				      MALI_MMU_IRQ_FAULT(2), 1000, &seen), 0);
	KUNIT_EXPECT_EQ(test, seen, (u32)MALI_MMU_IRQ_FAULT(2));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT),
			(u32)MALI_MMU_IRQ_FAULT(5));
	wr(fx, MALI_MMU_IRQ_CLEAR, ~0U);
	{
		struct accmap_replay_fault f;

		KUNIT_EXPECT_FALSE(test, fx->ops->mmu_fault(&fx->s, &f));
	}

	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_COUNT, 1, 1000,
				      &seen), -EINVAL);
}

static void sim_wait_timeout(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	unsigned long start = jiffies;
	u32 seen = 0xdead;

	fx_unmask(fx);
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, ~0U, 20000,
				      &seen), -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, jiffies_to_usecs(jiffies - start), 10000U);
	KUNIT_EXPECT_EQ(test, seen, 0xdeadU);
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_GPU, ~0U, 0, &seen),
			-ETIMEDOUT);
}

static void sim_gpu_commands(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	u32 seen;

	wr(fx, MALI_GPU_IRQ_MASK, MALI_GPU_IRQ_CLEAN_CACHES_DONE);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_CLEAN_CACHES);
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_GPU,
				      MALI_GPU_IRQ_CLEAN_CACHES_DONE, 1000,
				      &seen), 0);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_LATEST_FLUSH), 1U);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_CLEAN_INV_CACHES);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT),
			(u32)MALI_GPU_IRQ_CLEAN_CACHES_DONE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_LATEST_FLUSH), 2U);

	/* A reset puts every register back and says it is done. */
	wr(fx, MALI_SHADER_PWRON_LO, 0xff);
	fx_unmask(fx);
	fx_setup_as(fx, 3);
	wr(fx, MALI_JS_BASE(2) + MALI_JS_HEAD_NEXT_LO, 0x1000);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT),
			(u32)MALI_GPU_IRQ_RESET_COMPLETED);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_MASK), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_MASK), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_SHADER_READY_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_L2_READY_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_LATEST_FLUSH), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_AS_BASE(3) + MALI_AS_TRANSCFG_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(2) + MALI_JS_HEAD_NEXT_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_ID), 0x60a00002U);

	wr(fx, MALI_GPU_IRQ_MASK, MALI_GPU_IRQ_RESET_COMPLETED);
	wr(fx, MALI_GPU_IRQ_CLEAR, ~0U);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_HARD_RESET);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_RAWSTAT),
			(u32)MALI_GPU_IRQ_RESET_COMPLETED);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_IRQ_MASK), 0U);
}

/* Three NULL jobs, the second in another page, in AS 3 on slot 1. */
static void sim_null_chain(struct kunit *test)
{
	const u64 va = 0x7ffff0000000ULL;
	const u64 jd[3] = { va + 0x40, va + FX_GPU_PAGE + 0x80, va + 0xc0 };
	struct sim_fixture *fx = new_fixture(test);
	unsigned int i;
	u32 seen;

	fx_buf(test, fx, va, 2, FX_RW);
	put_jd(test, fx, jd[0], MALI_JOB_TYPE_NULL, jd[1], true);
	put_jd(test, fx, jd[1], MALI_JOB_TYPE_NULL, jd[2], true);
	put_jd(test, fx, jd[2], MALI_JOB_TYPE_NULL, 0, true);
	fx_unmask(fx);
	fx_setup_as(fx, 3);

	fx_start(fx, 1, jd[0], 3);
	seen = fx_wait_job(test, fx, 1);
	KUNIT_EXPECT_EQ(test, seen, (u32)MALI_JOB_IRQ_DONE(1));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ_MSG(test, get32(test, fx, jd[i]),
				    (u32)MALI_JS_STATUS_DONE, "job %u", i);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(1) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_DONE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_JS_STATE), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_RAWSTAT), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_JS_BASE(1) + MALI_JS_HEAD_LO), 0ULL);
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_JS_BASE(1) + MALI_JS_TAIL_LO), jd[2]);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(1) + MALI_JS_CONFIG), 3U);
}

/* 32-bit next pointers, and real job types the model only marks done. */
static void sim_chain_32bit_next(struct kunit *test)
{
	const u64 va = 0x10000;
	struct sim_fixture *fx = new_fixture(test);
	u8 type;

	fx_buf(test, fx, va, 1, FX_RW);
	for (type = MALI_JOB_TYPE_NULL; type <= MALI_JOB_TYPE_FRAGMENT; type++) {
		u64 jd = va + type * 0x100;

		/* Garbage above bit 31 of next must be ignored. */
		put_jd(test, fx, jd,
		       type, type < MALI_JOB_TYPE_FRAGMENT ? jd + 0x100 : 0,
		       false);
		put32(test, fx, jd + MALI_JD_NEXT + 4, 0xdeadbeef);
		put32(test, fx, jd + MALI_JD_HEADER_SIZE, 0x12345678);
	}
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	fx_start(fx, 0, va + 0x100, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0), (u32)MALI_JOB_IRQ_DONE(0));
	for (type = MALI_JOB_TYPE_NULL; type <= MALI_JOB_TYPE_FRAGMENT; type++) {
		u64 jd = va + type * 0x100;

		KUNIT_EXPECT_EQ_MSG(test, get32(test, fx, jd),
				    (u32)MALI_JS_STATUS_DONE, "type %u", type);
		/* The payload is left alone. */
		KUNIT_EXPECT_EQ(test, get32(test, fx, jd + MALI_JD_HEADER_SIZE),
				0x12345678U);
	}
}

/* Fills @n int32s at @va from @rnd, some of them extreme. */
static void fill_i32(struct kunit *test, struct sim_fixture *fx, u64 va,
		     u32 *shadow, u32 n, struct rnd_state *rnd)
{
	u32 i, v;

	for (i = 0; i < n; i++) {
		switch (prandom_u32_state(rnd) % 8) {
		case 0:
			v = 0x7fffffff;
			break;
		case 1:
			v = 0x80000000;
			break;
		default:
			v = prandom_u32_state(rnd);
			break;
		}
		shadow[i] = v;
		put32(test, fx, va + 4ULL * i, v);
	}
}

static void run_one(struct kunit *test, struct sim_fixture *fx, u64 jd)
{
	fx_start(fx, 2, jd, 0);
	KUNIT_ASSERT_EQ(test, fx_wait_job(test, fx, 2),
			(u32)MALI_JOB_IRQ_DONE(2));
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd), (u32)MALI_JS_STATUS_DONE);
}

static void check_matmul(struct kunit *test, u32 m, u32 n, u32 k)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x100000, data = 0x200000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_MATMUL_I32,
				      .m = m, .n = n, .k = k };
	u32 *a, *b, i, j, p;
	struct rnd_state rnd;
	u64 seed = get_random_u64();
	u64 abytes = 4ULL * m * k, bbytes = 4ULL * k * n, cbytes = 4ULL * m * n;
	unsigned int pages;

	kunit_info(test, "%ux%ux%u, seed %llu\n", m, n, k, seed);
	prandom_seed_state(&rnd, seed);
	a = kunit_kmalloc_array(test, (size_t)m * k, sizeof(u32), GFP_KERNEL);
	b = kunit_kmalloc_array(test, (size_t)k * n, sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);

	/* A starts 20 bytes before a page boundary, B and C follow. */
	job.a = data + FX_GPU_PAGE - 20;
	job.b = job.a + abytes;
	job.c = ALIGN(job.b + bbytes, 64) + 4;
	pages = DIV_ROUND_UP(job.c + cbytes + 4 - data, FX_GPU_PAGE);
	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, pages, FX_RW);
	put_sim_job(test, fx, jd, 0, &job);
	fill_i32(test, fx, job.a, a, m * k, &rnd);
	fill_i32(test, fx, job.b, b, k * n, &rnd);
	for (i = 0; i < m * n; i++)
		put32(test, fx, job.c + 4ULL * i, 0xcccccccc);
	put32(test, fx, job.c - 4, 0x5a5a5a5a);
	put32(test, fx, job.c + cbytes, 0xa5a5a5a5);

	fx_unmask(fx);
	fx_setup_as(fx, 0);
	run_one(test, fx, jd);

	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			u32 want = 0;

			for (p = 0; p < k; p++)
				want += a[i * k + p] * b[p * n + j];
			KUNIT_ASSERT_EQ_MSG(test,
					    get32(test, fx, job.c + 4ULL * (i * n + j)),
					    want, "C[%u][%u]", i, j);
		}
	}
	/* Nothing written around C, nothing written to A and B. */
	KUNIT_EXPECT_EQ(test, get32(test, fx, job.c - 4), 0x5a5a5a5aU);
	KUNIT_EXPECT_EQ(test, get32(test, fx, job.c + cbytes), 0xa5a5a5a5U);
	KUNIT_EXPECT_EQ(test, get32(test, fx, job.a), a[0]);
	KUNIT_EXPECT_EQ(test, get32(test, fx, job.b + bbytes - 4),
			b[k * n - 1]);
}

static void sim_matmul_small(struct kunit *test)
{
	check_matmul(test, 7, 5, 3);
	check_matmul(test, 1, 1, 1);
}

static void sim_matmul_pages(struct kunit *test)
{
	/* A 64 KiB, B 16 KiB: many pages, rows across page boundaries. */
	check_matmul(test, 64, 16, 256);
}

static void sim_vadd(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x100000, data = 0x200000;
	const u32 n = 3000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32,
				      .m = 1, .n = n, .k = 1 };
	struct rnd_state rnd;
	u64 seed = get_random_u64();
	u32 *a, *b, i;

	kunit_info(test, "seed %llu\n", seed);
	prandom_seed_state(&rnd, seed);
	a = kunit_kmalloc_array(test, n, sizeof(u32), GFP_KERNEL);
	b = kunit_kmalloc_array(test, n, sizeof(u32), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);

	job.a = data + 8;
	job.b = data + 4 * FX_GPU_PAGE - 4;
	job.c = data + 8 * FX_GPU_PAGE + 12;
	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, 4, FX_RO);		/* A */
	fx_buf(test, fx, data + 4 * FX_GPU_PAGE, 4, FX_RO);	/* B */
	fx_buf(test, fx, data + 8 * FX_GPU_PAGE, 3, FX_RW);	/* C */
	put_sim_job(test, fx, jd, 0, &job);
	fill_i32(test, fx, job.a, a, n, &rnd);
	fill_i32(test, fx, job.b, b, n, &rnd);

	fx_unmask(fx);
	fx_setup_as(fx, 0);
	run_one(test, fx, jd);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ_MSG(test, get32(test, fx, job.c + 4ULL * i),
				    a[i] + b[i], "C[%u]", i);
	KUNIT_EXPECT_EQ(test, get32(test, fx, job.c + 4ULL * n), 0U);
}

/* A chain mixing compute and NULL jobs: C of one is A of the next. */
static void sim_compute_chain(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 base = 0x400000;
	struct accmap_sim_job j1 = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				     .n = 4, .k = 1, .a = base + 0x800,
				     .b = base + 0x810, .c = base + 0x820 };
	struct accmap_sim_job j2 = { .op = ACCMAP_SIM_OP_MATMUL_I32, .m = 1,
				     .n = 1, .k = 4, .a = base + 0x820,
				     .b = base + 0x810, .c = base + 0x830 };
	u32 i;

	fx_buf(test, fx, base, 1, FX_RW);
	put_sim_job(test, fx, base + 0x000, base + 0x100, &j1);
	put_jd(test, fx, base + 0x100, MALI_JOB_TYPE_NULL, base + 0x200, true);
	put_sim_job(test, fx, base + 0x200, 0, &j2);
	for (i = 0; i < 4; i++) {
		put32(test, fx, j1.a + 4 * i, i + 1);		/* 1 2 3 4 */
		put32(test, fx, j1.b + 4 * i, 10 * (i + 1));	/* 10 20 30 40 */
	}
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	run_one(test, fx, base);
	/* C1 = 11 22 33 44; C2 = C1 . B = 110 + 440 + 990 + 1760 */
	KUNIT_EXPECT_EQ(test, get32(test, fx, j1.c + 12), 44U);
	KUNIT_EXPECT_EQ(test, get32(test, fx, j2.c), 3300U);
	KUNIT_EXPECT_EQ(test, get32(test, fx, base + 0x100),
			(u32)MALI_JS_STATUS_DONE);
}

/* The MMU uses what COMMAND UPDATE latched, not what was written since. */
static void sim_as_update_latch(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x10000;
	struct accmap_replay_fault f;
	u32 as = MALI_AS_BASE(0);

	fx_buf(test, fx, jd, 1, FX_RW);
	put_jd(test, fx, jd, MALI_JOB_TYPE_NULL, 0, true);
	fx_unmask(fx);

	/* Written, not latched: the AS has no tables yet. */
	wr64(fx, as + MALI_AS_TRANSTAB_LO, fx->root);
	wr64(fx, as + MALI_AS_TRANSCFG_LO, MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr64(fx, as + MALI_AS_MEMATTR_LO, 0x88);
	wr64(fx, as + MALI_AS_LOCKADDR_LO, 0xabc000000000000fULL);
	KUNIT_EXPECT_EQ(test, rd64(fx, as + MALI_AS_TRANSTAB_LO), fx->root);
	KUNIT_EXPECT_EQ(test, rd64(fx, as + MALI_AS_TRANSCFG_LO), 6ULL);
	KUNIT_EXPECT_EQ(test, rd64(fx, as + MALI_AS_MEMATTR_LO), 0x88ULL);
	KUNIT_EXPECT_EQ(test, rd64(fx, as + MALI_AS_LOCKADDR_LO),
			0xabc000000000000fULL);
	KUNIT_EXPECT_EQ(test, rd(fx, as + MALI_AS_STATUS), 0U);
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.as, 0U);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_TRANSLATION(0),
				   MALI_FAULT_ACCESS_READ));
	KUNIT_EXPECT_EQ(test, f.address, jd);
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd), 0U);

	/* Latched, then overwritten without UPDATE: the latched tables run. */
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	wr64(fx, as + MALI_AS_TRANSTAB_LO, 0x12345000);
	wr64(fx, as + MALI_AS_TRANSCFG_LO, MALI_TRANSCFG_ADRMODE_UNMAPPED);
	/* LOCK, FLUSH and UNLOCK latch nothing and are done at once. */
	wr(fx, as + MALI_AS_COMMAND, MALI_AS_CMD_LOCK);
	wr(fx, as + MALI_AS_COMMAND, MALI_AS_CMD_FLUSH_PT);
	wr(fx, as + MALI_AS_COMMAND, MALI_AS_CMD_FLUSH_MEM);
	wr(fx, as + MALI_AS_COMMAND, MALI_AS_CMD_UNLOCK);
	KUNIT_EXPECT_EQ(test, rd(fx, as + MALI_AS_STATUS), 0U);
	fx_start(fx, 0, jd, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0), (u32)MALI_JOB_IRQ_DONE(0));
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd), (u32)MALI_JS_STATUS_DONE);

	/* Now latch the unmapped mode: every access faults. */
	wr(fx, as + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	put32(test, fx, jd, 0);
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_TRANSLATION(0),
				   MALI_FAULT_ACCESS_READ));
}

static void sim_fault_unmapped(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 va = 0x10000, hole = 0x10000 + 5 * SZ_2M + 0x40;
	struct accmap_replay_fault f;
	u32 seen;

	fx_buf(test, fx, va, 1, FX_RW);
	put_jd(test, fx, va, MALI_JOB_TYPE_NULL, hole, true);
	fx_unmask(fx);
	fx_setup_as(fx, 4);
	fx_start(fx, 0, va, 4);

	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.as, 4U);
	/* The level-2 table has no entry for the hole's 2 MiB. */
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_TRANSLATION(2),
				   MALI_FAULT_ACCESS_READ));
	KUNIT_EXPECT_EQ(test, f.address, hole);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_AS_BASE(4) + MALI_AS_FAULTSTATUS),
			f.status);
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_AS_BASE(4) + MALI_AS_FAULTADDRESS_LO),
			hole);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT),
			(u32)MALI_MMU_IRQ_FAULT(4));
	/* The job before the fault is done; the chain stalls, ACTIVE. */
	KUNIT_EXPECT_EQ(test, get32(test, fx, va), (u32)MALI_JS_STATUS_DONE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_ACTIVE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_JS_STATE), 1U);
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_JS_BASE(0) + MALI_JS_HEAD_LO), hole);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_RAWSTAT), 0U);

	/* A START now waits behind the stalled chain; NOP takes it back. */
	fx_start(fx, 0, va, 4);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_COMMAND_NEXT),
			(u32)MALI_JS_COMMAND_START);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_JS_STATE), 1U | BIT(16));
	wr(fx, MALI_JS_BASE(0) + MALI_JS_COMMAND_NEXT, 0);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_JS_STATE), 1U);

	/* Clearing the interrupt does not resume the job. */
	wr(fx, MALI_MMU_IRQ_CLEAR, ~0U);
	KUNIT_EXPECT_FALSE(test, fx->ops->mmu_fault(&fx->s, &f));
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, ~0U, 20000,
				      &seen), -ETIMEDOUT);
	/* A reset ends it. */
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_IDLE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JOB_IRQ_JS_STATE), 0U);
}

/* A fault in the middle of an operand names the exact address. */
static void sim_fault_operand(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x10000, data = 0x20000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				      .n = 2048, .k = 1, .a = data,
				      .b = data + 0x100, .c = data };
	struct accmap_replay_fault f;

	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, 2, FX_RW);	/* B's third page is missing */
	put_sim_job(test, fx, jd, 0, &job);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_TRANSLATION(3),
				   MALI_FAULT_ACCESS_READ));
	KUNIT_EXPECT_EQ(test, f.address, data + 2 * FX_GPU_PAGE);
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd), 0U);
}

static void sim_fault_permission(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x10000, ro = 0x30000, data = 0x20000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				      .n = 4, .k = 1, .a = data,
				      .b = data + 0x100, .c = ro + 0x40 };
	struct accmap_replay_fault f;

	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, 1, FX_RW);
	fx_buf(test, fx, ro, 1, FX_RO);
	put_sim_job(test, fx, jd, 0, &job);
	put_jd(test, fx, ro, MALI_JOB_TYPE_NULL, 0, true);
	fx_unmask(fx);
	fx_setup_as(fx, 0);

	/* C in a read-only mapping. */
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_PERMISSION(3),
				   MALI_FAULT_ACCESS_WRITE));
	KUNIT_EXPECT_EQ(test, f.address, ro + 0x40);
	KUNIT_EXPECT_EQ(test, get32(test, fx, ro + 0x40), 0U);

	/* A descriptor in a read-only mapping: its status cannot be written. */
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	fx_unmask(fx);
	fx_setup_as(fx, 1);
	fx_start(fx, 2, ro, 1);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.as, 1U);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_PERMISSION(3),
				   MALI_FAULT_ACCESS_WRITE));
	KUNIT_EXPECT_EQ(test, f.address, ro);
	KUNIT_EXPECT_EQ(test, get32(test, fx, ro), 0U);
}

struct bad_job_case {
	const char *desc;
	u8 type;
	struct accmap_sim_job job;
};

#define VADD	ACCMAP_SIM_OP_VADD_I32
#define MM	ACCMAP_SIM_OP_MATMUL_I32
#define SIMJ	ACCMAP_SIM_JOB_TYPE
#define BADJOB(d, t, o, fl, mm, nn, kk, pd, aa, bb, cc)		\
	{ .desc = d, .type = t,						\
	  .job = { .op = o, .flags = fl, .m = mm, .n = nn, .k = kk,	\
		   .pad = pd, .a = aa, .b = bb, .c = cc } }
/* Good jobs but for one field. */
#define BADV(d, t, o, fl, mm, nn, kk, pd, aa, bb)	\
	BADJOB(d, t, o, fl, mm, nn, kk, pd, aa, bb, 0x20200)

static const struct bad_job_case bad_job_cases[] = {
	BADV("type_0", 0, VADD, 0, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("type_10", 10, VADD, 0, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("type_0x7f", 0x7f, VADD, 0, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("op_0", SIMJ, 0, 0, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("op_3", SIMJ, 3, 0, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("flags", SIMJ, VADD, 1, 1, 4, 1, 0, 0x20000, 0x20100),
	BADV("pad", SIMJ, MM, 0, 2, 2, 2, 0x80000000, 0x20000, 0x20100),
	BADV("m_0", SIMJ, MM, 0, 0, 2, 2, 0, 0x20000, 0x20100),
	BADV("n_0", SIMJ, VADD, 0, 1, 0, 1, 0, 0x20000, 0x20100),
	BADV("k_0", SIMJ, MM, 0, 2, 2, 0, 0, 0x20000, 0x20100),
	BADV("n_too_big", SIMJ, VADD, 0, 1, 4097, 1, 0, 0x20000, 0x20100),
	BADV("k_too_big", SIMJ, MM, 0, 1, 1, 4097, 0, 0x20000, 0x20100),
	BADV("vadd_m_2", SIMJ, VADD, 0, 2, 4, 1, 0, 0x20000, 0x20100),
	BADV("vadd_k_2", SIMJ, VADD, 0, 1, 4, 2, 0, 0x20000, 0x20100),
	/* 4096 x 4096 elements of C: above ACCMAP_SIM_ELEMS_MAX. */
	BADV("elems", SIMJ, MM, 0, 4096, 4096, 1, 0, 0x20000, 0x20100),
	/* Every matrix within ELEMS_MAX, but 2^28 multiply-adds. */
	BADV("macs", SIMJ, MM, 0, 1024, 1024, 256, 0, 0x20000, 0x20100),
	BADV("a_unaligned", SIMJ, VADD, 0, 1, 4, 1, 0, 0x20002, 0x20100),
	BADJOB("c_unaligned", SIMJ, MM, 0, 2, 2, 2, 0, 0x20000, 0x20100,
	       0x20201),
	BADV("b_wraps", SIMJ, VADD, 0, 1, 4, 1, 0, 0x20000,
	     0xfffffffffffffff8ULL),
};

static void bad_job_desc(const struct bad_job_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_job, bad_job_cases, bad_job_desc);

static void sim_malformed_job(struct kunit *test)
{
	const struct bad_job_case *c = test->param_value;
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x10000, first = 0x10100;

	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, 0x20000, 1, FX_RW);
	put_jd(test, fx, first, MALI_JOB_TYPE_NULL, jd, true);
	put_sim_job(test, fx, jd, 0, &c->job);
	put_jd(test, fx, jd, c->type, 0, true);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	fx_start(fx, 1, first, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 1),
			(u32)MALI_JOB_IRQ_FAILED(1));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(1) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, get32(test, fx, first), (u32)MALI_JS_STATUS_DONE);
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_JS_BASE(1) + MALI_JS_HEAD_LO), jd);
	KUNIT_EXPECT_EQ(test, get32(test, fx, 0x20200), 0U);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);
}

/* Loops in a chain end it; a descriptor off its 64-byte grid too. */
static void sim_chain_loop(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 va = 0x10000;

	fx_buf(test, fx, va, 1, FX_RW);
	fx_unmask(fx);
	fx_setup_as(fx, 0);

	/* A job that names itself. */
	put_jd(test, fx, va, MALI_JOB_TYPE_NULL, va, true);
	fx_start(fx, 0, va, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);

	/* Two jobs, then a loop of three back to the second. */
	put_jd(test, fx, va + 0x100, MALI_JOB_TYPE_NULL, va + 0x200, true);
	put_jd(test, fx, va + 0x200, MALI_JOB_TYPE_NULL, va + 0x300, true);
	put_jd(test, fx, va + 0x300, MALI_JOB_TYPE_NULL, va + 0x400, true);
	put_jd(test, fx, va + 0x400, MALI_JOB_TYPE_NULL, va + 0x500, true);
	put_jd(test, fx, va + 0x500, MALI_JOB_TYPE_NULL, va + 0x300, false);
	fx_start(fx, 0, va + 0x100, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);

	/* A misaligned descriptor: failed, and nothing written. */
	put_jd(test, fx, va + 0x600, MALI_JOB_TYPE_NULL, va + 0x720, true);
	fx_start(fx, 0, va + 0x600, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd64(fx, MALI_JS_BASE(0) + MALI_JS_HEAD_LO),
			va + 0x720);
	KUNIT_EXPECT_EQ(test, get32(test, fx, va + 0x720), 0U);

	/* A slot configured for an address space that does not exist. */
	fx_start(fx, 0, va + 0x100, 9);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_CONFIG_FAULT);
}

/* Device addresses outside the session's memory are never dereferenced. */
static void sim_foreign_memory(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x10000, data = 0x20000, far = 0x30000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				      .n = 4, .k = 1, .a = data,
				      .b = data + 0x100, .c = far };
	struct accmap_replay_fault f;
	struct rnd_state rnd;
	u64 seed = get_random_u64();
	u64 foreign_pa, buf_pa;
	u8 *foreign;
	unsigned int i;

	kunit_info(test, "seed %llu\n", seed);
	prandom_seed_state(&rnd, seed);
	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, 1, FX_RW);
	put_sim_job(test, fx, jd, 0, &job);
	fx_unmask(fx);

	/*
	 * A page the model was never given, full of 0xff: read as a table,
	 * each entry would name a next-level table, so a level-0 bus fault
	 * shows it was not read.
	 */
	foreign = fx_page(test, fx, &foreign_pa);
	memset(foreign, 0xff, PAGE_SIZE);
	wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSTAB_LO, foreign_pa);
	wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSCFG_LO,
	     MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr(fx, MALI_AS_BASE(0) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(FX_FAULT_TRANSTAB_BUS(0),
				   MALI_FAULT_ACCESS_READ));
	KUNIT_EXPECT_EQ(test, f.address, jd);

	/* Buffer memory is not table memory either. */
	fx_mem_page(test, fx, &buf_pa);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	fx_unmask(fx);
	wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSTAB_LO, buf_pa);
	wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSCFG_LO,
	     MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr(fx, MALI_AS_BASE(0) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	fx_start(fx, 0, jd, 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(FX_FAULT_TRANSTAB_BUS(0),
				   MALI_FAULT_ACCESS_READ));

	/* Random roots, both formats. */
	for (i = 0; i < 16; i++) {
		u64 root = ((u64)prandom_u32_state(&rnd) << 32 |
			    prandom_u32_state(&rnd)) & GENMASK_ULL(47, 12);
		bool lpae = i & 1;

		wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
		fx_unmask(fx);
		wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSTAB_LO,
		     lpae ? root | MALI_LPAE_TRANSTAB_ADRMODE_TABLE : root);
		wr64(fx, MALI_AS_BASE(0) + MALI_AS_TRANSCFG_LO,
		     lpae ? MALI_TRANSCFG_ADRMODE_LEGACY :
			    MALI_TRANSCFG_ADRMODE_AARCH64_4K);
		wr(fx, MALI_AS_BASE(0) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
		fx_start(fx, 0, jd, 0);
		f = fx_wait_fault(test, fx);
		KUNIT_EXPECT_EQ_MSG(test, f.status,
				    fault_code(FX_FAULT_TRANSTAB_BUS(0),
					       MALI_FAULT_ACCESS_READ),
				    "root %#llx", root);
	}

	/*
	 * Valid tables whose leaf names the foreign page: the job fails
	 * with a bus fault and the page is not written.
	 */
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	fx_map(test, fx, far, foreign_pa, FX_RW);
	fx_start(fx, 0, jd, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_BUS_FAULT);
	KUNIT_EXPECT_EQ(test, get32(test, fx, jd), (u32)MALI_JS_STATUS_BUS_FAULT);
	KUNIT_EXPECT_NULL(test, memchr_inv(foreign, 0xff, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);

	/* Memory handed over in pieces smaller than a frame is not reachable. */
	KUNIT_ASSERT_EQ(test, fx->ops->add_memory(&fx->s, foreign_pa + 8, foreign + 8,
						  SZ_4K - 8), 0);
	KUNIT_ASSERT_EQ(test, fx->ops->add_memory(&fx->s, foreign_pa, foreign + 4, SZ_4K), 0);
	put32(test, fx, jd, 0);
	fx_start(fx, 0, jd, 0);
	KUNIT_EXPECT_EQ(test, fx_wait_job(test, fx, 0),
			(u32)MALI_JOB_IRQ_FAILED(0));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_BUS_FAULT);
	KUNIT_EXPECT_NULL(test, memchr_inv(foreign, 0xff, PAGE_SIZE));
}

/*
 * Tables from the page-table builder, through the model's table
 * allocator, in both formats: the model walks what the builder wrote.
 */
static void check_builder(struct kunit *test, u32 format, bool destroy)
{
	struct sim_fixture *fx = new_fixture(test);
	const u64 jd = 0x7f0000000000ULL, data = 0x100200000ULL;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				      .n = 1500, .k = 1, .a = data + 4,
				      .b = data + 0x2000, .c = data + 0x4000 };
	struct accmap_pgt *pgt;
	u32 i;

	pgt = accmap_pgt_create(format, 48, fx->ops->pgt_alloc, &fx->s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pgt);
	fx->pgt = pgt;
	fx_buf(test, fx, jd, 1, FX_RW);
	fx_buf(test, fx, data, 4, FX_RO);
	fx_buf(test, fx, data + 0x4000, 2, FX_RW);
	put_sim_job(test, fx, jd, 0, &job);
	for (i = 0; i < job.n; i++) {
		put32(test, fx, job.a + 4 * i, i);
		put32(test, fx, job.b + 4 * i, 0xfffffff0 - i * i);
	}
	fx_unmask(fx);
	wr64(fx, MALI_AS_BASE(5) + MALI_AS_TRANSTAB_LO, accmap_pgt_root(pgt));
	wr64(fx, MALI_AS_BASE(5) + MALI_AS_TRANSCFG_LO,
	     format == ACCMAP_PGT_MALI_LPAE ? MALI_TRANSCFG_ADRMODE_LEGACY :
					      MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr(fx, MALI_AS_BASE(5) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	fx_start(fx, 0, jd, 5);
	KUNIT_ASSERT_EQ(test, fx_wait_job(test, fx, 0), (u32)MALI_JOB_IRQ_DONE(0));
	for (i = 0; i < job.n; i++)
		KUNIT_ASSERT_EQ(test, get32(test, fx, job.c + 4 * i),
				i + 0xfffffff0 - i * i);

	/* Read-only really is read-only in this format. */
	job.c = data;
	put_sim_job(test, fx, jd, 0, &job);
	fx_start(fx, 0, jd, 5);
	KUNIT_EXPECT_EQ(test, fx_wait_fault(test, fx).status,
			fault_code(MALI_FAULT_PERMISSION(3),
				   MALI_FAULT_ACCESS_WRITE));
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);

	/* Unmapped by the builder: a translation fault. */
	KUNIT_ASSERT_EQ(test, accmap_pgt_unmap(pgt, data + 0x4000, FX_GPU_PAGE),
			(u64)FX_GPU_PAGE);
	job.c = data + 0x4000;
	put_sim_job(test, fx, jd, 0, &job);
	fx_unmask(fx);
	wr64(fx, MALI_AS_BASE(5) + MALI_AS_TRANSTAB_LO, accmap_pgt_root(pgt));
	wr64(fx, MALI_AS_BASE(5) + MALI_AS_TRANSCFG_LO,
	     format == ACCMAP_PGT_MALI_LPAE ? MALI_TRANSCFG_ADRMODE_LEGACY :
					      MALI_TRANSCFG_ADRMODE_AARCH64_4K);
	wr(fx, MALI_AS_BASE(5) + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	fx_start(fx, 0, jd, 5);
	KUNIT_EXPECT_EQ(test, fx_wait_fault(test, fx).status,
			fault_code(MALI_FAULT_TRANSLATION(3),
				   MALI_FAULT_ACCESS_WRITE));

	/*
	 * Either order works: the builder gone first (its pages come back
	 * through the model's free op), or the model closed first (it frees
	 * the table pages itself and the builder's frees do nothing).
	 */
	fx->pgt = NULL;
	if (destroy) {
		accmap_pgt_destroy(pgt);
		fx_close(fx);
	} else {
		fx_close(fx);
		accmap_pgt_destroy(pgt);
	}
}

static void sim_builder_aarch64(struct kunit *test)
{
	check_builder(test, ACCMAP_PGT_MALI_AARCH64_4K, true);
}

static void sim_builder_lpae(struct kunit *test)
{
	check_builder(test, ACCMAP_PGT_MALI_LPAE, false);
}

/*
 * A long matmul: every VA page of A, B and C maps one physical page.
 * Returns the kernel address of C's page.
 */
static u8 *start_long_job(struct kunit *test, struct sim_fixture *fx,
			  unsigned int slot)
{
	const u64 jd = 0x10000, a = 0x1000000, b = 0x2000000, c = 0x3000000;
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_MATMUL_I32,
				      .m = 512, .n = 512, .k = 512,
				      .a = a, .b = b, .c = c };
	u64 pa_ab, pa_c, off;
	u8 *cpage;
	u32 *p;

	fx_buf(test, fx, jd, 1, FX_RW);
	p = fx_mem_page(test, fx, &pa_ab);
	memset(p, 0x11, PAGE_SIZE);
	cpage = fx_mem_page(test, fx, &pa_c);
	for (off = 0; off < SZ_1M; off += FX_GPU_PAGE) {
		fx_map(test, fx, a + off, pa_ab, FX_RO);
		fx_map(test, fx, b + off, pa_ab, FX_RO);
		fx_map(test, fx, c + off, pa_c, FX_RW);
	}
	put_sim_job(test, fx, jd, 0, &job);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	fx_start(fx, slot, jd, 0);
	return cpage;
}

static void sim_close_running(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);

	start_long_job(test, fx, 0);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(0) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_ACTIVE);
	/* Close stops the job and frees the table pages and the model. */
	fx_close(fx);
	KUNIT_EXPECT_NULL(test, fx->s.tpriv);
	/* A table page freed after close is not freed twice. */
	fx->ops->pgt_alloc->free(&fx->s, fx->tva[0], fx->tpa[0]);
}

/*
 * stop, then the tables and the buffers go, then close: the order replay.c
 * releases a session in.  Nothing may touch them after stop (KASAN sees
 * freed pages).
 */
static void sim_stop_running(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	struct accmap_pgt *pgt;
	unsigned int i;
	u8 *cpage;
	u32 seen;

	pgt = accmap_pgt_create(ACCMAP_PGT_MALI_AARCH64_4K, 48,
				fx->ops->pgt_alloc, &fx->s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pgt);
	fx->pgt = pgt;
	cpage = start_long_job(test, fx, 2);
	fx->ops->stop(&fx->s);

	/*
	 * The job never ends (it takes well under this wait unstopped), and
	 * a START runs nothing.  Registers still answer.
	 */
	fx_start(fx, 0, 0x10000, 0);
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, ~0U, 2000000,
				      &seen), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, get32(test, fx, 0x10000), 0U);
	KUNIT_EXPECT_NULL(test, memchr_inv(cpage, 0, FX_GPU_PAGE));
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_GPU_ID), 0x60a00002U);

	fx->pgt = NULL;
	accmap_pgt_destroy(pgt);
	for (i = 0; i < fx->npages; i++)
		__free_page(fx->pages[i]);
	fx->npages = 0;
	fx->nbufs = 0;
	fx_close(fx);
}

static void sim_reset_running(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	u32 seen;

	start_long_job(test, fx, 1);
	msleep(20);
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_HARD_RESET);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(1) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_IDLE);
	fx_unmask(fx);
	/* The chain started before the reset reports nothing. */
	KUNIT_EXPECT_EQ(test, fx_wait(fx, ACCMAP_REPLAY_IRQ_JOB, ~0U, 200000,
				      &seen), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(1) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_IDLE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);
}

/* Two sessions, two models: nothing one does shows in the other. */
static void sim_sessions_independent(struct kunit *test)
{
	struct sim_fixture *one = new_fixture(test);
	struct sim_fixture *two = new_fixture(test);
	u32 seen;

	KUNIT_EXPECT_PTR_NE(test, one->s.tpriv, two->s.tpriv);
	fx_unmask(one);
	fx_unmask(two);
	wr(one, MALI_SHADER_PWRON_LO, 0xff);
	wr64(one, MALI_AS_BASE(0) + MALI_AS_TRANSTAB_LO, one->root);
	KUNIT_EXPECT_EQ(test, rd(one, MALI_SHADER_READY_LO), 0xffU);
	KUNIT_EXPECT_EQ(test, rd(two, MALI_SHADER_READY_LO), 0U);
	KUNIT_EXPECT_EQ(test, rd(two, MALI_GPU_IRQ_RAWSTAT), 0U);
	KUNIT_EXPECT_EQ(test, rd64(two, MALI_AS_BASE(0) + MALI_AS_TRANSTAB_LO),
			0ULL);
	KUNIT_EXPECT_EQ(test, fx_wait(two, ACCMAP_REPLAY_IRQ_GPU, ~0U, 1000,
				      &seen), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, fx_wait(one, ACCMAP_REPLAY_IRQ_GPU, ~0U, 1000,
				      &seen), 0);

	/* The other session's memory is foreign memory. */
	fx_buf(test, one, 0x10000, 1, FX_RW);
	put_jd(test, one, 0x10000, MALI_JOB_TYPE_NULL, 0, true);
	two->root = one->root;	/* its tables are not two's */
	fx_setup_as(two, 0);
	fx_start(two, 0, 0x10000, 0);
	{
		struct accmap_replay_fault f = fx_wait_fault(test, two);

		KUNIT_EXPECT_EQ(test, f.status,
				fault_code(FX_FAULT_TRANSTAB_BUS(0),
					   MALI_FAULT_ACCESS_READ));
	}
	KUNIT_EXPECT_EQ(test, get32(test, one, 0x10000), 0U);
}

#define OP_W(off, v)	{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = (off), \
			  .value = (v) }
#define OP_R(off, v)	{ .op = ACCMAP_REPLAY_OP_READ, \
			  .flags = ACCMAP_REPLAY_OP_STRICT, .offset = (off), \
			  .value = (v), .mask = ~0U }
#define OP_POLL(off, v)	{ .op = ACCMAP_REPLAY_OP_POLL, .offset = (off), \
			  .value = (v), .mask = ~0U, .timeout_us = 100000 }
#define OP_IRQ(i, m)	{ .op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = (i), \
			  .mask = (m), .timeout_us = FX_WAIT_US }
#define OP_ROOT(off, f)	{ .op = ACCMAP_REPLAY_OP_WRITE_ROOT, .flags = (f), \
			  .offset = (off) }

#define EXEC_JD		0x10000ULL
#define EXEC_DATA	0x20000ULL
#define EXEC_JS		MALI_JS_BASE(1)
#define EXEC_AS		MALI_AS_BASE(0)

/* What a driver does for one job, as a recording replays it. */
static const struct accmap_replay_op exec_ops[] = {
	OP_R(MALI_GPU_ID, 0x60a00002),
	OP_W(MALI_GPU_IRQ_CLEAR, ~0U),
	OP_W(MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET),
	/* A reset clears the masks too: unmask after it, as kbase does. */
	OP_W(MALI_GPU_IRQ_MASK, MALI_GPU_IRQ_RESET_COMPLETED),
	OP_IRQ(ACCMAP_REPLAY_IRQ_GPU, MALI_GPU_IRQ_RESET_COMPLETED),
	OP_W(MALI_GPU_IRQ_MASK, 0x10581),
	OP_W(MALI_JOB_IRQ_MASK, ~0U),
	OP_W(MALI_MMU_IRQ_MASK, ~0U),
	OP_W(MALI_TILER_PWRON_LO, 1),
	OP_W(MALI_SHADER_PWRON_LO, 0xff),
	OP_POLL(MALI_SHADER_READY_LO, 0xff),
	OP_POLL(MALI_L2_READY_LO, 1),
	OP_IRQ(ACCMAP_REPLAY_IRQ_GPU, MALI_GPU_IRQ_POWER_CHANGED_ALL),
	OP_W(EXEC_AS + MALI_AS_TRANSCFG_LO, MALI_TRANSCFG_ADRMODE_AARCH64_4K),
	OP_W(EXEC_AS + MALI_AS_TRANSCFG_HI, 0),
	OP_ROOT(EXEC_AS + MALI_AS_TRANSTAB_LO, 0),
	OP_ROOT(EXEC_AS + MALI_AS_TRANSTAB_HI, ACCMAP_REPLAY_OP_HI),
	OP_W(EXEC_AS + MALI_AS_MEMATTR_LO, 0x888d8f88),
	OP_W(EXEC_AS + MALI_AS_MEMATTR_HI, 0x4c8d),
	OP_W(EXEC_AS + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE),
	OP_POLL(EXEC_AS + MALI_AS_STATUS, 0),
	OP_W(EXEC_JS + MALI_JS_HEAD_NEXT_LO, EXEC_JD),
	OP_W(EXEC_JS + MALI_JS_HEAD_NEXT_HI, 0),
	OP_W(EXEC_JS + MALI_JS_AFFINITY_NEXT_LO, 0xff),
	OP_W(EXEC_JS + MALI_JS_CONFIG_NEXT, 0x87b00),
	OP_W(EXEC_JS + MALI_JS_FLUSH_ID_NEXT, 0),
	OP_W(EXEC_JS + MALI_JS_COMMAND_NEXT, MALI_JS_COMMAND_START),
	OP_IRQ(ACCMAP_REPLAY_IRQ_JOB, MALI_JOB_IRQ_DONE(1) |
				      MALI_JOB_IRQ_FAILED(1)),
	OP_R(EXEC_JS + MALI_JS_STATUS, MALI_JS_STATUS_DONE),
	OP_R(MALI_JOB_IRQ_RAWSTAT, 0),
};

/* The executor drives the model as it drives a GPU. */
static void sim_exec(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);
	struct accmap_sim_job job = { .op = ACCMAP_SIM_OP_VADD_I32, .m = 1,
				      .n = 8, .k = 1, .a = EXEC_DATA,
				      .b = EXEC_DATA + 0x100,
				      .c = EXEC_DATA + 0x200 };
	struct accmap_replay_result res = { .failed_op = U32_MAX };
	const u32 n = ARRAY_SIZE(exec_ops);
	u32 i;

	fx->s.root = fx->root;
	fx_buf(test, fx, EXEC_JD, 1, FX_RW);
	fx_buf(test, fx, EXEC_DATA, 1, FX_RW);
	put_sim_job(test, fx, EXEC_JD, 0, &job);
	for (i = 0; i < job.n; i++) {
		put32(test, fx, job.a + 4 * i, 1000 * i);
		put32(test, fx, job.b + 4 * i, 7 - i);
	}

	KUNIT_ASSERT_EQ(test, accmap_replay_exec(&fx->s, exec_ops, n, 0, &res),
			0);
	KUNIT_EXPECT_EQ(test, res.reason, (u32)ACCMAP_REPLAY_OK);
	KUNIT_EXPECT_EQ(test, res.done, n);
	for (i = 0; i < job.n; i++)
		KUNIT_EXPECT_EQ(test, get32(test, fx, job.c + 4 * i),
				1000 * i + 7 - i);

	/* The same ops with C unmapped: the run stops at the fault. */
	job.c = 0x40000;
	put_sim_job(test, fx, EXEC_JD, 0, &job);
	memset(&res, 0, sizeof(res));
	KUNIT_EXPECT_EQ(test, accmap_replay_exec(&fx->s, exec_ops, n, 0, &res),
			-EIO);
	KUNIT_EXPECT_EQ(test, res.reason, (u32)ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, res.failed_op, n - 3);
	KUNIT_EXPECT_EQ(test, res.fault.as, 0U);
	KUNIT_EXPECT_EQ(test, res.fault.status,
			fault_code(MALI_FAULT_TRANSLATION(3),
				   MALI_FAULT_ACCESS_WRITE));
	KUNIT_EXPECT_EQ(test, res.fault.address, 0x40000ULL);
}

static struct kunit_case sim_cases[] = {
	KUNIT_CASE(sim_target),
	KUNIT_CASE(sim_id_registers),
	KUNIT_CASE(sim_power),
	KUNIT_CASE(sim_irq_registers),
	KUNIT_CASE(sim_wait_timeout),
	KUNIT_CASE(sim_gpu_commands),
	KUNIT_CASE(sim_null_chain),
	KUNIT_CASE(sim_chain_32bit_next),
	KUNIT_CASE(sim_matmul_small),
	KUNIT_CASE(sim_matmul_pages),
	KUNIT_CASE(sim_vadd),
	KUNIT_CASE(sim_compute_chain),
	KUNIT_CASE(sim_as_update_latch),
	KUNIT_CASE(sim_fault_unmapped),
	KUNIT_CASE(sim_fault_operand),
	KUNIT_CASE(sim_fault_permission),
	KUNIT_CASE_PARAM(sim_malformed_job, bad_job_gen_params),
	KUNIT_CASE(sim_chain_loop),
	KUNIT_CASE(sim_foreign_memory),
	KUNIT_CASE(sim_builder_aarch64),
	KUNIT_CASE(sim_builder_lpae),
	KUNIT_CASE(sim_close_running),
	KUNIT_CASE(sim_stop_running),
	KUNIT_CASE(sim_reset_running),
	KUNIT_CASE(sim_sessions_independent),
	KUNIT_CASE(sim_exec),
	{}
};

static struct kunit_suite sim_suite = {
	.name = "accmap-replay-sim",
	.test_cases = sim_cases,
};

kunit_test_suite(sim_suite);

/* ---- SVM: the fault service and invalidation against the model ------ */

/*
 * An SVM mirror on the model with a backend of the test's own: a fake
 * process whose "CPU page table" is @page[] (SVM_PAGES pages from
 * SVM_BASE) and one 2 MiB block at SVM_BLOCK.  The mirror's code (svm.c)
 * and the model are the real ones; only where pages come from is faked.
 */
#define SVM_BASE	0x10000000ULL
#define SVM_PAGES	16
#define SVM_BLOCK	0x10200000ULL
#define SVM_END		(SVM_BLOCK + SZ_2M)

struct fake_mm {
	struct accmap_svm *svm;
	struct page *page[SVM_PAGES];
	bool write[SVM_PAGES];
	struct page *block;
	bool fault_in;
	unsigned int backend_faults;
};

/* The fake CPU mapping of @va: its page, writable or not, its order. */
static struct page *fake_lookup(struct fake_mm *fm, u64 va, bool *write,
				u8 *order)
{
	*order = 0;
	*write = true;
	if (va >= SVM_BLOCK && va < SVM_END && fm->block) {
		*order = get_order(SZ_2M);
		return nth_page(fm->block, (va - SVM_BLOCK) >> PAGE_SHIFT);
	}
	if (va >= SVM_BASE && va < SVM_BASE + SVM_PAGES * PAGE_SIZE) {
		unsigned int i = (va - SVM_BASE) >> PAGE_SHIFT;

		*write = fm->write[i];
		return fm->page[i];
	}
	return NULL;
}

static int fake_fault(struct accmap_svm *svm, u64 addr, bool write, u64 start,
		      u64 end, bool to_device)
{
	struct fake_mm *fm = svm->bpriv;
	unsigned long n = (end - start) >> PAGE_SHIFT, i;
	struct accmap_svm_pfn *pfns;
	int ret;

	fm->backend_faults++;
	pfns = kcalloc(n, sizeof(*pfns), GFP_KERNEL);
	if (!pfns)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		u64 va = start + i * PAGE_SIZE;
		struct accmap_svm_pfn *p = &pfns[i];

		p->page = fake_lookup(fm, va, &p->write, &p->order);
		if (va != addr)
			continue;
		if (!p->page && fm->fault_in &&
		    va < SVM_BASE + SVM_PAGES * PAGE_SIZE) {
			unsigned int k = (va - SVM_BASE) >> PAGE_SHIFT;

			fm->page[k] = alloc_page(GFP_KERNEL | __GFP_ZERO);
			fm->write[k] = true;
			p->page = fm->page[k];
			p->write = true;
		}
		if (!p->page || (write && !p->write)) {
			kfree(pfns);
			return -EFAULT;
		}
	}
	ret = accmap_svm_install(svm, start, pfns, n, NULL, NULL);
	kfree(pfns);
	return ret;
}

static int fake_prefetch(struct accmap_svm *svm, u64 start, u64 end,
			 bool write, u32 location)
{
	return -EOPNOTSUPP;
}

static bool fake_same_mm(struct accmap_svm *svm)
{
	return true;
}

static void fake_destroy(struct accmap_svm *svm)
{
}

static const struct accmap_svm_backend fake_backend = {
	.fault = fake_fault,
	.populate = fake_prefetch,
	.same_mm = fake_same_mm,
	.destroy = fake_destroy,
};

static int fake_mm_init(struct kunit_resource *res, void *context)
{
	struct sim_fixture *fx = context;
	struct fake_mm *fm;
	unsigned int i;

	fm = kzalloc(sizeof(*fm), GFP_KERNEL);
	if (!fm)
		return -ENOMEM;
	for (i = 0; i < SVM_PAGES; i++) {
		fm->page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		fm->write[i] = true;
		if (!fm->page[i])
			goto err;
	}
	fm->svm = accmap_svm_create_with(&fx->s, SVM_BASE, SVM_END - SVM_BASE,
					 &fake_backend, fm, NULL);
	if (IS_ERR(fm->svm))
		goto err;
	fx->s.svm = fm->svm;
	fx->s.mmu_irq = accmap_svm_mmu_irq;
	res->data = fm;
	return 0;
err:
	for (i = 0; i < SVM_PAGES; i++)
		if (fm->page[i])
			__free_page(fm->page[i]);
	kfree(fm);
	return -ENOMEM;
}

/* Freed before the fixture: the mirror goes before the model closes. */
static void fake_mm_free(struct kunit_resource *res)
{
	struct fake_mm *fm = res->data;
	unsigned int i;

	fm->svm->s->svm = NULL;
	accmap_svm_destroy(fm->svm);
	for (i = 0; i < SVM_PAGES; i++)
		if (fm->page[i])
			__free_page(fm->page[i]);
	if (fm->block)
		__free_pages(fm->block, get_order(SZ_2M));
	kfree(fm);
}

/* A model whose session mirrors the fake process; AS 0 set up. */
static struct fake_mm *new_svm(struct kunit *test, struct sim_fixture **fxp)
{
	struct sim_fixture *fx = new_fixture(test);
	struct fake_mm *fm;

	fx->pgt = accmap_pgt_create(ACCMAP_PGT_MALI_AARCH64_4K, 48,
				    fx->ops->pgt_alloc, &fx->s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fx->pgt);
	fx->s.pgt = fx->pgt;
	fm = kunit_alloc_resource(test, fake_mm_init, fake_mm_free, GFP_KERNEL,
				  fx);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fm);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	*fxp = fx;
	return fm;
}

static u64 svm_va(unsigned int page)
{
	return SVM_BASE + (u64)page * PAGE_SIZE;
}

static __le32 *svm_word(struct fake_mm *fm, u64 va)
{
	bool w;
	u8 o;
	struct page *p = fake_lookup(fm, va, &w, &o);

	return p ? (__le32 *)page_address(p) + offset_in_page(va) / 4 : NULL;
}

/* Little-endian words into a descriptor the test fills in place. */
static void jd_le32(u8 *p, u32 v)
{
	*(__le32 *)p = cpu_to_le32(v);
}

static void jd_le64(u8 *p, u64 v)
{
	jd_le32(p, lower_32_bits(v));
	jd_le32(p + 4, upper_32_bits(v));
}

static void svm_put32(struct fake_mm *fm, u64 va, u32 v)
{
	*svm_word(fm, va) = cpu_to_le32(v);
}

static u32 svm_get32(struct fake_mm *fm, u64 va)
{
	return le32_to_cpu(*svm_word(fm, va));
}

/* A VADD job of @n words at page 0: C(@c) = A(@a) + B(@b). */
static void svm_put_vadd(struct fake_mm *fm, u64 a, u64 b, u64 c, u32 n)
{
	u8 *jd = page_address(fm->page[0]);
	u8 *p = jd + ACCMAP_SIM_JOB_OFFSET;

	memset(jd, 0, 128);
	jd[MALI_JD_TYPE_BYTE] = ACCMAP_SIM_JOB_TYPE << 1 | 1;
	jd_le32(p, ACCMAP_SIM_OP_VADD_I32);
	jd_le32(p + 8, 1);
	jd_le32(p + 12, n);
	jd_le32(p + 16, 1);
	jd_le64(p + 24, a);
	jd_le64(p + 32, b);
	jd_le64(p + 40, c);
}

static void svm_fill(struct fake_mm *fm, u64 va, u32 n, u32 base)
{
	u32 i;

	for (i = 0; i < n; i++)
		svm_put32(fm, va + 4 * i, base + i);
}

/* Runs the chain at page 0 of the fake process to its done interrupt. */
static void svm_run_done(struct kunit *test, struct sim_fixture *fx)
{
	fx_start(fx, 2, svm_va(0), 0);
	KUNIT_ASSERT_EQ(test, fx_wait_job(test, fx, 2),
			(u32)MALI_JOB_IRQ_DONE(2));
}

static void svm_set_granule(struct kunit *test, struct fake_mm *fm,
			    u64 start, u64 size, u32 attrs, u32 granule)
{
	struct accmap_svm_op op = {
		.op = ACCMAP_SVM_OP_SET_ATTR, .start = start, .size = size,
		.attrs = attrs, .granule = granule,
	};

	KUNIT_ASSERT_EQ(test, accmap_svm_ioctl(fm->svm, &op), 0);
}

/* Every page faults in on its own and the job completes, unaware. */
static void svm_fault_service(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	u32 i;

	svm_set_granule(test, fm, SVM_BASE, SVM_END - SVM_BASE, 0, 12);
	svm_put_vadd(fm, svm_va(1), svm_va(2), svm_va(3), 1024);
	svm_fill(fm, svm_va(1), 1024, 1000);
	svm_fill(fm, svm_va(2), 1024, 5);
	svm_run_done(test, fx);
	for (i = 0; i < 1024; i++)
		KUNIT_ASSERT_EQ(test, svm_get32(fm, svm_va(3) + 4 * i),
				1005 + 2 * i);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(0)),
			(u32)MALI_JS_STATUS_DONE);
	/* Descriptor, A, B, C: one fault each, in order, none left pending. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&fm->svm->faults), 4LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&fm->svm->fatal), 0LL);
	KUNIT_EXPECT_EQ(test, fm->svm->mapped, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_MMU_IRQ_RAWSTAT), 0U);
}

/* A page the process does not map ends the job as an ordinary fault. */
static void svm_fault_fatal(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	struct accmap_replay_fault f;

	svm_put_vadd(fm, svm_va(1), svm_va(2), svm_va(3), 16);
	__free_page(fm->page[2]);
	fm->page[2] = NULL;
	fx_start(fx, 2, svm_va(0), 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.as, 0U);
	KUNIT_EXPECT_EQ(test, f.address, svm_va(2));
	KUNIT_EXPECT_EQ(test, f.status,
			fault_code(MALI_FAULT_TRANSLATION(3),
				   MALI_FAULT_ACCESS_READ));
	KUNIT_EXPECT_EQ(test, atomic64_read(&fm->svm->fatal), 1LL);
	/* Stalled, not failed: the slot is still active. */
	KUNIT_EXPECT_EQ(test, rd(fx, MALI_JS_BASE(2) + MALI_JS_STATUS),
			(u32)MALI_JS_STATUS_ACTIVE);
}

/* A read-only page: the GPU reads it, cannot write it, then can. */
static void svm_write_readonly(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	struct accmap_replay_fault f;

	svm_put_vadd(fm, svm_va(1), svm_va(2), svm_va(3), 16);
	svm_fill(fm, svm_va(3), 16, 77);
	fm->write[3] = false;
	fx_start(fx, 2, svm_va(0), 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.address, svm_va(3));
	KUNIT_EXPECT_EQ(test, f.status & 0xf8, (u32)MALI_FAULT_PERMISSION(0));
	KUNIT_EXPECT_EQ(test, f.status >> MALI_FAULT_ACCESS_SHIFT,
			(u32)MALI_FAULT_ACCESS_WRITE);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 77U);

	/* "mprotect": writable now; after a reset the write goes through. */
	fm->write[3] = true;
	wr(fx, MALI_GPU_COMMAND, MALI_GPU_CMD_SOFT_RESET);
	fx_unmask(fx);
	fx_setup_as(fx, 0);
	svm_run_done(test, fx);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 0U);
}

/*
 * After an invalidation the GPU sees the new page: an implementation that
 * left the old entry (or did not wait for the model) would read the old.
 */
static void svm_invalidate_refault(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	struct page *old;

	svm_put_vadd(fm, svm_va(1), svm_va(2), svm_va(3), 16);
	svm_fill(fm, svm_va(1), 16, 100);
	svm_run_done(test, fx);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 100U);

	/* The CPU moves A to another page (migration, COW...). */
	old = fm->page[1];
	fm->page[1] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_NOT_NULL(test, fm->page[1]);
	svm_fill(fm, svm_va(1), 16, 500);
	mutex_lock(&fm->svm->lock);
	accmap_svm_invalidate_locked(fm->svm, svm_va(1), svm_va(2));
	mutex_unlock(&fm->svm->lock);
	__free_page(old);
	KUNIT_EXPECT_EQ(test, atomic64_read(&fm->svm->invalidations), 1LL);
	KUNIT_EXPECT_NULL(test, xa_load(&fm->svm->pages, svm_va(1) >> PAGE_SHIFT));

	svm_run_done(test, fx);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 500U);

	/* An exiting process invalidates everything, up to the top. */
	mutex_lock(&fm->svm->lock);
	accmap_svm_invalidate_locked(fm->svm, 0, U64_MAX);
	mutex_unlock(&fm->svm->lock);
	KUNIT_EXPECT_EQ(test, fm->svm->mapped, 0ULL);
	KUNIT_EXPECT_NULL(test, xa_load(&fm->svm->pages, svm_va(0) >> PAGE_SHIFT));
	KUNIT_EXPECT_EQ(test, atomic64_read(&fm->svm->invalidations), 2LL);
}

/* A huge CPU page becomes one 2 MiB GPU block, dropped whole. */
static void svm_huge_block(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);

	fm->block = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(SZ_2M));
	if (!fm->block || !IS_ALIGNED(page_to_phys(fm->block), SZ_2M))
		kunit_skip(test, "no 2 MiB aligned block of memory");
	svm_put_vadd(fm, SVM_BLOCK + SZ_1M, SVM_BLOCK + SZ_1M, svm_va(3), 16);
	svm_fill(fm, SVM_BLOCK + SZ_1M, 16, 21);
	svm_run_done(test, fx);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3) + 4), 44U);
	KUNIT_EXPECT_EQ(test, fm->svm->huge, (u64)SZ_2M);

	mutex_lock(&fm->svm->lock);
	accmap_svm_invalidate_locked(fm->svm, SVM_BLOCK + SZ_1M + PAGE_SIZE,
				     SVM_BLOCK + SZ_1M + 2 * PAGE_SIZE);
	mutex_unlock(&fm->svm->lock);
	KUNIT_EXPECT_EQ(test, fm->svm->huge, 0ULL);
	KUNIT_EXPECT_NULL(test, xa_load(&fm->svm->pages, SVM_BLOCK >> PAGE_SHIFT));
}

/* GPU read-only: the GPU may not write even a writable CPU page. */
static void svm_gpu_ro(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	struct accmap_replay_fault f;

	svm_set_granule(test, fm, svm_va(3), PAGE_SIZE, ACCMAP_SVM_ATTR_GPU_RO, 0);
	svm_put_vadd(fm, svm_va(1), svm_va(2), svm_va(3), 16);
	svm_fill(fm, svm_va(3), 16, 9);
	fx_start(fx, 2, svm_va(0), 0);
	f = fx_wait_fault(test, fx);
	KUNIT_EXPECT_EQ(test, f.address, svm_va(3));
	KUNIT_EXPECT_EQ(test, f.status >> MALI_FAULT_ACCESS_SHIFT,
			(u32)MALI_FAULT_ACCESS_WRITE);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 9U);
	KUNIT_EXPECT_EQ(test, fm->svm->nr_ranges, 3U);
}

/* Attribute ranges split, merge back, and are bounded. */
static void svm_attr_ranges(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	struct accmap_svm_op op = { .op = ACCMAP_SVM_OP_SET_ATTR };
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 300 && !ret; i++) {
		op.start = SVM_BLOCK + 2 * i * PAGE_SIZE;
		op.size = PAGE_SIZE;
		op.attrs = ACCMAP_SVM_ATTR_NO_EXEC;
		ret = accmap_svm_ioctl(fm->svm, &op);
	}
	KUNIT_EXPECT_EQ(test, ret, -ENOSPC);
	KUNIT_EXPECT_LE(test, fm->svm->nr_ranges,
			(unsigned int)ACCMAP_SVM_ATTR_RANGES_MAX);
	op.start = SVM_BASE;
	op.size = SVM_END - SVM_BASE;
	op.attrs = 0;
	KUNIT_EXPECT_EQ(test, accmap_svm_ioctl(fm->svm, &op), 0);
	KUNIT_EXPECT_EQ(test, fm->svm->nr_ranges, 1U);
	op.start = SVM_END;
	KUNIT_EXPECT_EQ(test, accmap_svm_ioctl(fm->svm, &op), -EINVAL);
	op.start = SVM_BASE + 1;
	op.size = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, accmap_svm_ioctl(fm->svm, &op), -EINVAL);
}

/*
 * Under a lock the builder only uses tables made ahead, and the tables
 * an unmap empties wait for the owner's TLB flush.
 */
static void svm_pgt_reserve(struct kunit *test)
{
	struct sim_fixture *fx = new_fixture(test);

	fx->pgt = accmap_pgt_create(ACCMAP_PGT_MALI_AARCH64_4K, 48,
				    fx->ops->pgt_alloc, &fx->s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fx->pgt);
	KUNIT_EXPECT_EQ(test, accmap_pgt_tables_needed(0, SZ_4K), 3UL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_tables_needed(SZ_2M - SZ_4K, SZ_8K),
			4UL);
	accmap_pgt_reserve_only(fx->pgt);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(fx->pgt, 0, 0x80000000ULL, SZ_4K,
					     FX_RO, 0), -ENOMEM);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(fx->pgt), 1UL);
	KUNIT_ASSERT_EQ(test, accmap_pgt_reserve(fx->pgt, 3), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(fx->pgt, 0, 0x80000000ULL, SZ_4K,
					     FX_RO, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(fx->pgt), 4UL);
	/*
	 * Emptied tables are retired: kept, out of use, as a GPU may still
	 * walk them, until reclaimed; then they are spares, and mapping
	 * again needs no reserve.
	 */
	KUNIT_EXPECT_EQ(test, accmap_pgt_unmap(fx->pgt, 0, SZ_4K), (u64)SZ_4K);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(fx->pgt), 4UL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(fx->pgt, SZ_1G, 0x80000000ULL,
					     SZ_4K, FX_RO, 0), -ENOMEM);
	accmap_pgt_reclaim(fx->pgt);
	KUNIT_EXPECT_EQ(test, accmap_pgt_table_pages(fx->pgt), 1UL);
	KUNIT_EXPECT_EQ(test, accmap_pgt_map(fx->pgt, SZ_1G, 0x80000000ULL,
					     SZ_4K, FX_RO, 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_pgt_reserve(fx->pgt,
						 ACCMAP_PGT_SPARE_MAX + 1),
			-EINVAL);
}

/* The list-sum job follows plain pointers through the tables. */
static void svm_list_sum(struct kunit *test)
{
	struct sim_fixture *fx;
	struct fake_mm *fm = new_svm(test, &fx);
	u8 *jd = page_address(fm->page[0]), *p = jd + ACCMAP_SIM_JOB_OFFSET;
	u32 i, sum = 0;

	/* 100 nodes 40 bytes apart in page 1: value at 0, next at 8. */
	for (i = 0; i < 100; i++) {
		u64 node = svm_va(1) + 40 * i;
		u64 next = i == 99 ? 0 : svm_va(1) + 40 * (i + 1);

		svm_put32(fm, node, i * 7);
		svm_put32(fm, node + 8, lower_32_bits(next));
		svm_put32(fm, node + 12, upper_32_bits(next));
		sum += i * 7;
	}
	memset(jd, 0, 128);
	jd[MALI_JD_TYPE_BYTE] = ACCMAP_SIM_JOB_TYPE << 1 | 1;
	jd_le32(p, ACCMAP_SIM_OP_LIST_SUM_I32);
	jd_le32(p + 8, 8);
	jd_le32(p + 12, 100);
	jd_le32(p + 16, 0);
	jd_le64(p + 24, svm_va(1));
	jd_le64(p + 40, svm_va(3));
	svm_run_done(test, fx);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), sum);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3) + 4), 100U);

	/* One node too many for n: the job fails, nothing written. */
	svm_put32(fm, svm_va(3), 0);
	jd_le32(p + 12, 99);
	fx_start(fx, 2, svm_va(0), 0);
	KUNIT_ASSERT_EQ(test, fx_wait_job(test, fx, 2),
			(u32)MALI_JOB_IRQ_FAILED(2));
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(0)),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, svm_get32(fm, svm_va(3)), 0U);
}

static struct kunit_case svm_cases[] = {
	KUNIT_CASE(svm_fault_service),
	KUNIT_CASE(svm_fault_fatal),
	KUNIT_CASE(svm_write_readonly),
	KUNIT_CASE(svm_invalidate_refault),
	KUNIT_CASE(svm_huge_block),
	KUNIT_CASE(svm_gpu_ro),
	KUNIT_CASE(svm_attr_ranges),
	KUNIT_CASE(svm_pgt_reserve),
	KUNIT_CASE(svm_list_sum),
	{}
};

static struct kunit_suite svm_suite = {
	.name = "accmap-svm",
	.test_cases = svm_cases,
};

kunit_test_suite(svm_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: GPU page tables for replay, built by the CPU.
 *
 * Both Mali formats share one shape: four levels of 512 little-endian
 * 64-bit entries over a 4 KiB granule, 48-bit input and output addresses,
 * and "next table | 0b11" for a table entry.  They differ only in how a
 * leaf is encoded and in the TRANSTAB value that names the root, which is
 * all struct pgt_format holds.
 *
 * Every table page has a CPU-side shadow (struct pgt_table) that knows its
 * kernel address, its device address, its children and how many of its
 * entries are in use.  The builder never reads a device address back into
 * a kernel pointer, so table pages can come from anywhere the owner's
 * allocator likes (DMA memory, a model's private pages).  The shadow is
 * also what the builder trusts: it writes only entries it can describe,
 * 0 for an empty one, and never decodes what it wrote.  Decoding is the
 * walker's job (replay_walk.c), written apart so that each checks the
 * other.
 *
 * Mappings use 2 MiB blocks at level 2 wherever the virtual and output
 * addresses are both 2 MiB aligned and a whole block remains, 4 KiB pages
 * elsewhere; never 1 GiB blocks.  A table page whose last entry goes is
 * freed, so the tree only ever holds what is mapped.
 *
 * An owner that maps under a lock its MMU notifier takes (SVM) may not
 * allocate there: reclaim could call the notifier.  It makes tables ahead
 * with accmap_pgt_reserve(), outside that lock, and switches the tree to
 * accmap_pgt_reserve_only(): then mapping draws table pages from the
 * spares only, and tables that empty go back to them.
 *
 * Such a tree changes while the GPU walks it: a table that empties there
 * is retired, out of the tree but kept as it is, since a walk that read
 * its parent entry before the unmap may still read it; the owner reclaims
 * the retired tables once the GPU's TLB is flushed (accmap_pgt_reclaim()).
 */

#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <asm/byteorder.h>

#include "compat.h"
#include "mali_regs.h"
#include "replay.h"

#define PGT_LAST_LEVEL		(ACCMAP_PGT_LEVELS - 1)
#define PGT_BLOCK_LEVEL		2
#define PGT_OA_BITS		48
#define PGT_ADDR_MASK		GENMASK_ULL(PGT_OA_BITS - 1, 12)

/* Entry bits common to both formats. */
#define PGT_DESC_TABLE		0x3ULL	/* levels 0 to 2 */
#define PGT_DESC_BLOCK		0x1ULL
#define PGT_DESC_PAGE_AARCH64	0x3ULL	/* level 3 in AArch64 4K mode */
#define PGT_ATTR_INDEX		GENMASK_ULL(4, 2)

/* AArch64 4K leaves: stage-1 access permissions and the access flag. */
#define PGT_AARCH64_AP		GENMASK_ULL(7, 6)
#define PGT_AARCH64_AP_RW	1
#define PGT_AARCH64_AP_RO	3
#define PGT_AARCH64_AF		BIT_ULL(10)
#define PGT_AARCH64_XN		BIT_ULL(54)

/* Mali LPAE leaves: stage-2 style read/write bits, two XN bits. */
#define PGT_LPAE_READ		BIT_ULL(6)
#define PGT_LPAE_WRITE		BIT_ULL(7)
#define PGT_LPAE_XN		GENMASK_ULL(54, 53)

/**
 * struct pgt_format - what differs between the formats
 * @leaf: the entry mapping @pa at @level (a page at level 3, else a block)
 * @root: the TRANSTAB value naming a root table at device address @dma
 */
struct pgt_format {
	u64 (*leaf)(unsigned int level, u64 pa, u32 perm, u32 attr);
	u64 (*root)(u64 dma);
};

/**
 * struct pgt_table - the CPU's view of one table page
 * @pte:  the entries, at their kernel address
 * @dma:  the page's device address
 * @next: levels 0 to 2: the child table behind each table entry, else NULL
 * @live: entries in use (tables, blocks and pages)
 * @retired_next: the next table on the tree's retired list
 */
struct pgt_table {
	__le64 *pte;
	u64 dma;
	struct pgt_table **next;
	unsigned int live;
	struct pgt_table *retired_next;
};

/**
 * struct accmap_pgt - one tree of page tables
 * @fmt:     its format's encoders
 * @va_bits: highest mappable address is 2^@va_bits - 1
 * @ops:     where table pages come from
 * @priv:    argument of @ops
 * @root:    the level-0 table
 * @tables:  table pages in the tree, the root included, and retired ones
 * @reserve_only: map takes table pages only from @spare, and tables that
 *           empty are retired
 * @retired: tables out of the tree that the GPU may still walk, until
 *           accmap_pgt_reclaim()
 * @spare_lock: protects @spare and @nr_spare, which accmap_pgt_reserve()
 *           fills without the owner's serialisation
 * @nr_spare: tables in @spare
 * @spare:   zeroed tables made ahead, not counted in @tables
 *
 * Besides @spare, no lock of its own: the owner serialises every other
 * call.
 */
struct accmap_pgt {
	const struct pgt_format *fmt;
	u32 va_bits;
	const struct accmap_pgt_alloc_ops *ops;
	void *priv;
	struct pgt_table *root;
	unsigned long tables;
	bool reserve_only;
	struct pgt_table *retired;
	spinlock_t spare_lock;	/* @spare, @nr_spare */
	unsigned int nr_spare;
	struct pgt_table *spare[ACCMAP_PGT_SPARE_MAX];
};

static u64 pgt_leaf_aarch64(unsigned int level, u64 pa, u32 perm, u32 attr)
{
	u64 pte = pa | PGT_AARCH64_AF | FIELD_PREP(PGT_ATTR_INDEX, attr);

	pte |= level == PGT_LAST_LEVEL ? PGT_DESC_PAGE_AARCH64 : PGT_DESC_BLOCK;
	pte |= FIELD_PREP(PGT_AARCH64_AP, (perm & ACCMAP_PGT_PERM_WRITE) ?
			  PGT_AARCH64_AP_RW : PGT_AARCH64_AP_RO);
	if (!(perm & ACCMAP_PGT_PERM_EXEC))
		pte |= PGT_AARCH64_XN;
	return pte;
}

static u64 pgt_root_aarch64(u64 dma)
{
	return dma;
}

/* Mali LPAE has no page type and no access flag: leaves are all blocks. */
static u64 pgt_leaf_lpae(unsigned int level, u64 pa, u32 perm, u32 attr)
{
	u64 pte = pa | PGT_DESC_BLOCK | FIELD_PREP(PGT_ATTR_INDEX, attr);

	if (perm & ACCMAP_PGT_PERM_READ)
		pte |= PGT_LPAE_READ;
	if (perm & ACCMAP_PGT_PERM_WRITE)
		pte |= PGT_LPAE_WRITE;
	if (!(perm & ACCMAP_PGT_PERM_EXEC))
		pte |= PGT_LPAE_XN;
	return pte;
}

static u64 pgt_root_lpae(u64 dma)
{
	return dma | MALI_LPAE_TRANSTAB_ADRMODE_TABLE |
	       MALI_LPAE_TRANSTAB_READ_INNER | MALI_LPAE_TRANSTAB_SHARE_OUTER;
}

static const struct pgt_format pgt_formats[ACCMAP_PGT_COUNT] = {
	[ACCMAP_PGT_MALI_AARCH64_4K] = {
		.leaf = pgt_leaf_aarch64,
		.root = pgt_root_aarch64,
	},
	[ACCMAP_PGT_MALI_LPAE] = {
		.leaf = pgt_leaf_lpae,
		.root = pgt_root_lpae,
	},
};

/* Bytes one entry at @level spans: 512 GiB, 1 GiB, 2 MiB, 4 KiB. */
static u64 pgt_span(unsigned int level)
{
	return 1ULL << (12 + 9 * (PGT_LAST_LEVEL - level));
}

static unsigned int pgt_index(u64 va, unsigned int level)
{
	return (va >> (12 + 9 * (PGT_LAST_LEVEL - level))) &
	       (ACCMAP_PGT_ENTRIES - 1);
}

/* Where the entry after the one holding @va starts, or @end if sooner. */
static u64 pgt_entry_end(u64 va, u64 end, unsigned int level)
{
	u64 next = (va | (pgt_span(level) - 1)) + 1;

	/* At the top of a 64-bit space next wraps to 0; not with 48 bits. */
	return min(next, end);
}

static void pgt_set(struct pgt_table *t, unsigned int i, u64 val)
{
	WRITE_ONCE(t->pte[i], cpu_to_le64(val));
}

static bool pgt_in_use(const struct pgt_table *t, unsigned int i)
{
	return t->pte[i] != 0;
}

/* Make entries @first to @last of @t visible to the GPU. */
static void pgt_sync(struct accmap_pgt *pgt, struct pgt_table *t,
		     unsigned int first, unsigned int last)
{
	size_t off = first * sizeof(*t->pte);

	if (pgt->ops->sync && first <= last)
		pgt->ops->sync(pgt->priv, &t->pte[first], t->dma + off,
			       (last - first + 1) * sizeof(*t->pte));
}

/*
 * A new table page with its shadow, not yet counted; with a child array
 * if @next (levels 0 to 2, and spares, which may serve at any level).
 */
static struct pgt_table *pgt_table_new(struct accmap_pgt *pgt, bool next)
{
	struct pgt_table *t;

	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return NULL;
	if (next) {
		t->next = kcalloc(ACCMAP_PGT_ENTRIES, sizeof(*t->next),
				  GFP_KERNEL_ACCOUNT);
		if (!t->next)
			goto err_free_shadow;
	}
	t->pte = pgt->ops->alloc(pgt->priv, &t->dma);
	if (!t->pte)
		goto err_free_next;
	/* The allocator's contract; entries could not name anything else. */
	if (WARN_ON_ONCE(!IS_ALIGNED(t->dma, SZ_4K) ||
			 t->dma > PGT_ADDR_MASK))
		goto err_free_page;
	return t;

err_free_page:
	pgt->ops->free(pgt->priv, t->pte, t->dma);
err_free_next:
	kfree(t->next);
err_free_shadow:
	kfree(t);
	return NULL;
}

static void pgt_table_delete(struct accmap_pgt *pgt, struct pgt_table *t)
{
	pgt->ops->free(pgt->priv, t->pte, t->dma);
	kfree(t->next);
	kfree(t);
}

static struct pgt_table *pgt_spare_take(struct accmap_pgt *pgt)
{
	struct pgt_table *t = NULL;

	spin_lock(&pgt->spare_lock);
	if (pgt->nr_spare)
		t = pgt->spare[--pgt->nr_spare];
	spin_unlock(&pgt->spare_lock);
	return t;
}

/* Keeps an empty table as a spare if there is room; false if not. */
static bool pgt_spare_put(struct accmap_pgt *pgt, struct pgt_table *t)
{
	bool kept = false;

	spin_lock(&pgt->spare_lock);
	if (pgt->nr_spare < ACCMAP_PGT_SPARE_MAX) {
		pgt->spare[pgt->nr_spare++] = t;
		kept = true;
	}
	spin_unlock(&pgt->spare_lock);
	return kept;
}

static struct pgt_table *pgt_table_alloc(struct accmap_pgt *pgt,
					 unsigned int level)
{
	struct pgt_table *t;

	t = pgt_spare_take(pgt);
	if (!t && !pgt->reserve_only)
		t = pgt_table_new(pgt, level < PGT_LAST_LEVEL);
	if (t)
		pgt->tables++;
	return t;
}

/* A table out of the tree, all its entries 0, goes: a spare if it may. */
static void pgt_table_release(struct accmap_pgt *pgt, struct pgt_table *t)
{
	pgt->tables--;
	if (pgt->reserve_only && t->next) {
		memset(t->next, 0, ACCMAP_PGT_ENTRIES * sizeof(*t->next));
		t->live = 0;
		if (pgt_spare_put(pgt, t))
			return;
	}
	pgt_table_delete(pgt, t);
}

/*
 * A table whose entries are all 0 (or never written) leaves the tree; in
 * a tree the GPU walks as it changes it is retired until reclaimed.
 */
static void pgt_table_free(struct accmap_pgt *pgt, struct pgt_table *t)
{
	if (pgt->reserve_only) {
		t->retired_next = pgt->retired;
		pgt->retired = t;
		return;
	}
	pgt_table_release(pgt, t);
}

/**
 * accmap_pgt_reclaim() - release the tables retired since the last call
 * @pgt: the tree
 *
 * The owner calls it once the GPU no longer uses what it read of the tree
 * before the unmaps that retired them (its TLB flushed): they become
 * spares, or are freed.
 */
void accmap_pgt_reclaim(struct accmap_pgt *pgt)
{
	while (pgt->retired) {
		struct pgt_table *t = pgt->retired;

		pgt->retired = t->retired_next;
		pgt_table_release(pgt, t);
	}
}

/* Free @t and everything below it, without touching any entry. */
static void pgt_free_tree(struct accmap_pgt *pgt, struct pgt_table *t)
{
	unsigned int i;

	if (t->next) {
		for (i = 0; i < ACCMAP_PGT_ENTRIES; i++)
			if (t->next[i])
				pgt_free_tree(pgt, t->next[i]);
	}
	pgt_table_free(pgt, t);
}

/**
 * accmap_pgt_create() - start an empty tree of page tables
 * @format:  ACCMAP_PGT_*
 * @va_bits: GPU virtual address bits, ACCMAP_REPLAY_VA_BITS_MIN to
 *           ACCMAP_REPLAY_VA_BITS_MAX; the tree always has four levels,
 *           @va_bits only bounds what may be mapped
 * @ops:     where table pages come from; @ops->alloc and @ops->free needed
 * @priv:    passed to every call of @ops
 *
 * Allocates the root table.  The caller serialises every call on the
 * tree it gets.
 *
 * Return: the tree, ERR_PTR(-EINVAL) for a bad argument, or
 * ERR_PTR(-ENOMEM).
 */
struct accmap_pgt *accmap_pgt_create(u32 format, u32 va_bits,
				     const struct accmap_pgt_alloc_ops *ops,
				     void *priv)
{
	struct accmap_pgt *pgt;

	if (format >= ACCMAP_PGT_COUNT || va_bits < ACCMAP_REPLAY_VA_BITS_MIN ||
	    va_bits > ACCMAP_REPLAY_VA_BITS_MAX || !ops || !ops->alloc ||
	    !ops->free)
		return ERR_PTR(-EINVAL);

	pgt = kzalloc(sizeof(*pgt), GFP_KERNEL_ACCOUNT);
	if (!pgt)
		return ERR_PTR(-ENOMEM);
	pgt->fmt = &pgt_formats[format];
	pgt->va_bits = va_bits;
	pgt->ops = ops;
	pgt->priv = priv;
	spin_lock_init(&pgt->spare_lock);

	pgt->root = pgt_table_alloc(pgt, 0);
	if (!pgt->root) {
		kfree(pgt);
		return ERR_PTR(-ENOMEM);
	}
	return pgt;
}

/**
 * accmap_pgt_destroy() - free every table page and the tree
 * @pgt: the tree; NULL or an error pointer is ignored
 *
 * The GPU must no longer use the tables.
 */
void accmap_pgt_destroy(struct accmap_pgt *pgt)
{
	if (IS_ERR_OR_NULL(pgt))
		return;
	pgt->reserve_only = false;
	accmap_pgt_reclaim(pgt);
	pgt_free_tree(pgt, pgt->root);
	while (pgt->nr_spare)
		pgt_table_delete(pgt, pgt->spare[--pgt->nr_spare]);
	kfree(pgt);
}

/**
 * accmap_pgt_reserve() - make tables ahead, for a map under a lock
 * @pgt: the tree
 * @n:   spare tables wanted, at most ACCMAP_PGT_SPARE_MAX
 *
 * Allocates (GFP_KERNEL) until @pgt holds @n spare tables.  Unlike every
 * other call, this one may run concurrently with the owner's map and
 * unmap calls: it is meant to be called outside the owner's lock.
 *
 * Return: 0, -EINVAL if @n is too large, or -ENOMEM.
 */
int accmap_pgt_reserve(struct accmap_pgt *pgt, unsigned int n)
{
	struct pgt_table *t;
	unsigned int have;

	if (n > ACCMAP_PGT_SPARE_MAX)
		return -EINVAL;
	for (;;) {
		spin_lock(&pgt->spare_lock);
		have = pgt->nr_spare;
		spin_unlock(&pgt->spare_lock);
		if (have >= n)
			return 0;
		t = pgt_table_new(pgt, true);
		if (!t)
			return -ENOMEM;
		if (!pgt_spare_put(pgt, t)) {
			pgt_table_delete(pgt, t);
			return 0;
		}
	}
}

/**
 * accmap_pgt_reserve_only() - map only with tables made ahead
 * @pgt: the tree
 *
 * From now on accmap_pgt_map() allocates nothing: it takes table pages
 * from the spares accmap_pgt_reserve() made and fails with -ENOMEM when
 * they run out; tables that empty become spares again (up to
 * ACCMAP_PGT_SPARE_MAX).
 */
void accmap_pgt_reserve_only(struct accmap_pgt *pgt)
{
	pgt->reserve_only = true;
}

/**
 * accmap_pgt_tables_needed() - most new tables a map of a range can take
 * @va:   GPU virtual address, 4 KiB aligned
 * @size: bytes, not 0
 *
 * Return: the number of level 1 to 3 tables the range spans, an upper
 * bound on what accmap_pgt_map() of it allocates.
 */
unsigned long accmap_pgt_tables_needed(u64 va, u64 size)
{
	u64 last = va + size - 1;
	unsigned long n = 0;
	unsigned int level;

	for (level = 0; level < PGT_LAST_LEVEL; level++) {
		unsigned int shift = 12 + 9 * (PGT_LAST_LEVEL - level);

		n += (last >> shift) - (va >> shift) + 1;
	}
	return n;
}

/**
 * accmap_pgt_root() - the TRANSTAB value naming the tree
 * @pgt: the tree
 *
 * Return: for AArch64 4K mode the root table's device address; for Mali
 * LPAE that address with the table address mode, inner read-allocate and
 * outer shareable bits.
 */
u64 accmap_pgt_root(const struct accmap_pgt *pgt)
{
	return pgt->fmt->root(pgt->root->dma);
}

/**
 * accmap_pgt_table_pages() - how many table pages the tree holds
 * @pgt: the tree
 *
 * Return: live table pages, the root included (so at least 1).
 */
unsigned long accmap_pgt_table_pages(const struct accmap_pgt *pgt)
{
	return pgt->tables;
}

/* Whether any entry maps a byte of [@va, @end) below table @t at @level. */
static bool pgt_range_used(const struct pgt_table *t, unsigned int level,
			   u64 va, u64 end)
{
	u64 next;

	for (; va < end; va = next) {
		unsigned int i = pgt_index(va, level);

		next = pgt_entry_end(va, end, level);
		if (!pgt_in_use(t, i))
			continue;
		/* A child table is never empty between calls. */
		if (!t->next || !t->next[i] ||
		    pgt_range_used(t->next[i], level + 1, va, next))
			return true;
	}
	return false;
}

/*
 * Map [@va, @end) to @pa onwards below table @t at @level.  The range is
 * known to be free, so the only failure is -ENOMEM, after which the caller
 * tears down whatever this left behind.
 */
static int pgt_map_range(struct accmap_pgt *pgt, struct pgt_table *t,
			 unsigned int level, u64 va, u64 end, u64 pa,
			 u32 perm, u32 attr)
{
	unsigned int first = ACCMAP_PGT_ENTRIES, last = 0;
	const u64 start = va;
	int ret = 0;
	u64 next;

	for (; va < end; va = next) {
		unsigned int i = pgt_index(va, level);
		u64 out = pa + (va - start);
		struct pgt_table *child;

		next = pgt_entry_end(va, end, level);
		if (level == PGT_LAST_LEVEL ||
		    (level == PGT_BLOCK_LEVEL && next - va == pgt_span(level) &&
		     IS_ALIGNED(out, pgt_span(level)))) {
			pgt_set(t, i, pgt->fmt->leaf(level, out, perm, attr));
			t->live++;
			first = min(first, i);
			last = i;
			continue;
		}

		child = t->next[i];
		if (!child) {
			child = pgt_table_alloc(pgt, level + 1);
			if (!child) {
				ret = -ENOMEM;
				break;
			}
			t->next[i] = child;
			/* Linked only after the child's entries are synced. */
		}
		ret = pgt_map_range(pgt, child, level + 1, va, next, out, perm,
				    attr);
		if (!pgt_in_use(t, i)) {
			/* Even on failure: the unwind finds it this way. */
			pgt_set(t, i, child->dma | PGT_DESC_TABLE);
			t->live++;
			first = min(first, i);
			last = i;
		}
		if (ret)
			break;
	}
	pgt_sync(pgt, t, first, last);
	return ret;
}

/*
 * Unmap what lies wholly inside [@va, @end) below table @t at @level, and
 * free the child tables that end up empty.  Returns the bytes unmapped.
 */
static u64 pgt_unmap_range(struct accmap_pgt *pgt, struct pgt_table *t,
			   unsigned int level, u64 va, u64 end)
{
	unsigned int first = ACCMAP_PGT_ENTRIES, last = 0;
	u64 next, done = 0;

	for (; va < end; va = next) {
		unsigned int i = pgt_index(va, level);
		struct pgt_table *child;

		next = pgt_entry_end(va, end, level);
		if (!pgt_in_use(t, i))
			continue;

		child = t->next ? t->next[i] : NULL;
		if (!child) {
			/* A block only partly inside the range stays. */
			if (next - va != pgt_span(level))
				continue;
			pgt_set(t, i, 0);
			t->live--;
			done += next - va;
			first = min(first, i);
			last = i;
			continue;
		}

		done += pgt_unmap_range(pgt, child, level + 1, va, next);
		if (child->live)
			continue;
		/* The GPU must see the entry gone before the page is reused. */
		pgt_set(t, i, 0);
		pgt_sync(pgt, t, i, i);
		t->next[i] = NULL;
		t->live--;
		pgt_table_free(pgt, child);
	}
	pgt_sync(pgt, t, first, last);
	return done;
}

/**
 * accmap_pgt_map() - map a range of device memory
 * @pgt:  the tree
 * @va:   GPU virtual address, 4 KiB aligned
 * @pa:   device address it maps to, 4 KiB aligned, below 2^48 to the end
 * @size: bytes, 4 KiB aligned, not 0; @va + @size at most 2^va_bits
 * @perm: ACCMAP_PGT_PERM_*, READ included
 * @attr: memory attribute index, 0 to ACCMAP_REPLAY_ATTR_MAX
 *
 * Uses 2 MiB blocks where @va and @pa allow, 4 KiB pages elsewhere.  On
 * failure nothing this call mapped remains and the tree holds the same
 * table pages as before.
 *
 * Return: 0; -EINVAL for a bad argument; -EEXIST if a page of the range is
 * already mapped; -ENOMEM.
 */
int accmap_pgt_map(struct accmap_pgt *pgt, u64 va, u64 pa, u64 size,
		   u32 perm, u32 attr)
{
	u64 end, pa_end;
	int ret;

	if (!size || !IS_ALIGNED(va | pa | size, ACCMAP_PGT_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) ||
	    end > BIT_ULL(pgt->va_bits) ||
	    check_add_overflow(pa, size, &pa_end) ||
	    pa_end > BIT_ULL(PGT_OA_BITS) ||
	    !(perm & ACCMAP_PGT_PERM_READ) ||
	    (perm & ~ACCMAP_REPLAY_MAP_VALID_FLAGS) ||
	    attr > ACCMAP_REPLAY_ATTR_MAX)
		return -EINVAL;

	if (pgt_range_used(pgt->root, 0, va, end))
		return -EEXIST;

	ret = pgt_map_range(pgt, pgt->root, 0, va, end, pa, perm, attr);
	if (ret)
		pgt_unmap_range(pgt, pgt->root, 0, va, end);
	return ret;
}

/**
 * accmap_pgt_unmap() - unmap a range
 * @pgt:  the tree
 * @va:   GPU virtual address, 4 KiB aligned
 * @size: bytes, 4 KiB aligned; @va + @size at most 2^va_bits
 *
 * Unmaps every page inside the range and every 2 MiB block the range
 * covers whole; a block the range covers only in part stays mapped whole
 * (blocks are never split) and is not counted.  Holes in the range are
 * fine.  Table pages left empty are freed.  The caller invalidates the
 * GPU's TLBs.
 *
 * Return: bytes unmapped; 0 if the arguments are bad.
 */
u64 accmap_pgt_unmap(struct accmap_pgt *pgt, u64 va, u64 size)
{
	u64 end;

	if (!IS_ALIGNED(va | size, ACCMAP_PGT_PAGE_SIZE) ||
	    check_add_overflow(va, size, &end) ||
	    end > BIT_ULL(pgt->va_bits))
		return 0;
	return pgt_unmap_range(pgt, pgt->root, 0, va, end);
}

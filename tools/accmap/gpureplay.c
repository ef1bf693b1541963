// SPDX-License-Identifier: GPL-2.0
/*
 * Importer of GPUReplay recordings into accmap recordings.  See gpureplay.h
 * and Documentation/userspace-api/accmap-gpureplay.rst.
 *
 * The input files, as GPUReplay's recorder writes them (little-endian):
 *
 *   gr_pgt           u64 size, u64 TRANSTAB, u64 MEMATTR, u64 TRANSCFG, then
 *                    per table page u64 (pa | level) and 512 u64 entries,
 *                    then u64 0xffffffffff
 *   gr_mem_contents  per region a 29-byte header (u64 vm_start, u64 vm_end,
 *                    u64 nr_pages, u32 kbase region flags, u8 is_valid) and,
 *                    if is_valid, nr_pages x {u64 gpu_va, u64 pa, 4096 bytes}
 *   gr_io_history    text, "delta_ns,R|W,0xoffset,value" a line
 *   gr_sync_as       u32 count, count x {u64 vm_start, u64 vm_end, u64 size}
 *
 * Every read from a buffer goes through gr_get*(), which check the bounds;
 * every count is checked against a limit before it sizes anything.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpureplay.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define GR_PAGE			4096ULL
#define GR_VA_END		0x1000000000000ULL	/* 1 << GPUREPLAY_VA_BITS */

/* gr_mem_contents */
#define GR_REGION_HDR		29
#define GR_PAGE_REC		(16 + GR_PAGE)

/* gr_pgt */
#define GR_PGT_HDR		32
#define GR_PGT_END		0xffffffffffULL
#define GR_PGT_ENTRIES		512
#define GR_PGT_REC		(8 + GR_PGT_ENTRIES * 8ULL)
#define GR_PGT_LEVELS		4

/* gr_sync_as */
#define GR_SYNC_REC		24

/* kbase region flags (struct kbase_va_region), the bits the import uses. */
#define KB_REG_GPU_WR		0x4U		/* bit 2 */
#define KB_REG_GPU_NX		0x8U		/* bit 3 */
#define KB_REG_MEMATTR_SHIFT	16
#define KB_REG_MEMATTR_MASK	0x7U

/* Mali AArch64 4K table entries. */
#define PTE_TYPE_MASK		0x3ULL
#define PTE_TYPE_BLOCK		0x1ULL		/* levels 1, 2 */
#define PTE_TYPE_TABLE		0x3ULL		/* levels 0 to 2 */
#define PTE_TYPE_PAGE		0x3ULL		/* level 3 */
#define PTE_ADDR_MASK		0x0000fffffffff000ULL
#define PTE_ATTR_SHIFT		2
#define PTE_ATTR_MASK		0x7ULL
#define PTE_AP_SHIFT		6
#define PTE_AP_MASK		0x3ULL
#define PTE_AP_RW		0x1ULL
#define PTE_NX			0x0040000000000000ULL	/* bit 54 */

/* The Mali register map (job manager GPUs), the registers the import uses. */
#define MALI_GPU_ID		0x0000
#define MALI_LATEST_FLUSH	0x0038
#define MALI_GPU_IRQ_RAWSTAT	0x0020
#define MALI_GPU_IRQ_STATUS	0x002c
/* The ends of commands a driver waits for: RESET_COMPLETED, CLEAN_CACHES. */
#define MALI_GPU_IRQ_WAITED	(0x100U | 0x20000U)
#define MALI_READY_FIRST	0x0140		/* SHADER, TILER, L2 READY lo/hi */
#define MALI_READY_END		0x0170
#define MALI_JOB_IRQ_STATUS	0x100c
#define MALI_JS_BASE		0x1800
#define MALI_JS_STRIDE		0x80
#define MALI_JS_COUNT		16
#define MALI_JS_HEAD_NEXT_LO	0x40
#define MALI_JS_HEAD_NEXT_HI	0x44
#define MALI_JS_COMMAND_NEXT	0x60
#define MALI_JS_FLUSH_ID_NEXT	0x70
#define MALI_JS_START		1
#define MALI_AS_BASE		0x2400
#define MALI_AS_STRIDE		0x40
#define MALI_AS_COUNT		16
#define MALI_AS_TRANSTAB_LO	0x00
#define MALI_AS_TRANSTAB_HI	0x04
#define MALI_AS_STATUS		0x28
#define MALI_AS_STATUS_ACTIVE	0x1
#define MALI_AS_TRANSCFG_LO	0x30
#define MALI_TRANSCFG_MODE	0xfULL
#define MALI_TRANSCFG_UNMAPPED	0x1ULL
#define MALI_TRANSCFG_AARCH64	0x6ULL

/**
 * struct gr_region - a region of gr_mem_contents
 * @start:  first GPU VA
 * @end:    GPU VA after the last byte
 * @pages:  pages recorded (is_valid) or to back with zeros
 * @flags:  kbase region flags
 * @valid:  the region has contents
 * @off:    offset of its header in the file
 * @live:   pages at which gr_pgt shows this region (see gr_resolve())
 * @kept:   pages it owns in the recording
 * @stale:  it has pages, none of them live
 */
struct gr_region {
	uint64_t start;
	uint64_t end;
	uint64_t pages;
	uint32_t flags;
	bool valid;
	size_t off;
	uint64_t live;
	uint64_t kept;
	bool stale;
};

/**
 * struct gr_leaf - a valid leaf of the recorded tables
 * @va:    first GPU VA it maps
 * @e:     the entry
 * @level: 1 or 2 (block) or 3 (page)
 */
struct gr_leaf {
	uint64_t va;
	uint64_t e;
	uint32_t level;
};

/**
 * struct gr_claim - a page a region holds
 * @va:  its GPU VA
 * @pa:  the recorded physical address (regions with contents)
 * @src: offset of its bytes in gr_mem_contents, 0 for a zero-filled page
 * @k:   the region, its index in file order (higher is later)
 */
struct gr_claim {
	uint64_t va;
	uint64_t pa;
	size_t src;
	uint32_t k;
};

/**
 * struct gr_map - a map made, in ascending VA order as in the recording
 * @va:  first GPU VA
 * @len: bytes
 * @k:   the region that owns its pages
 */
struct gr_map {
	uint64_t va;
	uint64_t len;
	uint32_t k;
};

/**
 * struct gr_chain - a job chain started in the log
 * @head: JS_HEAD_NEXT as written before the start
 * @slot: its job slot
 */
struct gr_chain {
	uint64_t head;
	uint32_t slot;
};

/**
 * struct gr_table - a table page of gr_pgt
 * @pa:      its physical address as recorded
 * @level:   0 to 3
 * @off:     offset of its (pa | level) word in the file
 * @visited: reached by the walk
 */
struct gr_table {
	uint64_t pa;
	uint32_t level;
	size_t off;
	bool visited;
};

/**
 * struct gr_ctx - one import
 * @in:        the input
 * @st:        what was found
 * @err:       where a refusal goes, or NULL
 * @regions:   the regions, sorted by @start once read
 * @nr_regions: entries in @regions
 * @tables:    gr_pgt's table pages, sorted by @pa once read
 * @nr_tables: entries in @tables
 * @transtab:  gr_pgt's TRANSTAB
 * @ops:       the operations made so far
 * @nr_ops:    entries in @ops
 * @ops_cap:   room in @ops
 * @as:        the address space whose TRANSTAB the log writes, or -1
 * @gpu_id:    GPU_ID as the log read it, or 0
 * @started:   job slots started and not yet waited for, a bit each
 * @flush:     the last LATEST_FLUSH value read
 * @have_flush: @flush holds a value
 * @leaves:    the valid leaves of gr_pgt, ascending VA
 * @nr_leaves: entries in @leaves
 * @leaves_cap: room in @leaves
 * @maps:      the maps made, ascending VA
 * @nr_maps:   entries in @maps
 * @chains:    the job chains started
 * @nr_chains: entries in @chains
 * @head:      per job slot, JS_HEAD_NEXT as last written
 * @root_state: GR_ROOT_*: what the last TRANSTAB_LO write did
 * @hi_op:     index of a WRITE_ROOT HI made before its LO, or -1
 */
struct gr_ctx {
	const struct gpureplay_input *in;
	struct gpureplay_stats *st;
	struct accmap_rec_error *err;
	struct gr_region *regions;
	uint32_t nr_regions;
	struct gr_table *tables;
	uint32_t nr_tables;
	uint64_t transtab;
	struct accmap_replay_op *ops;
	uint32_t nr_ops;
	uint32_t ops_cap;
	int as;
	uint32_t gpu_id;
	uint32_t started;
	uint32_t flush;
	bool have_flush;
	struct gr_leaf *leaves;
	uint64_t nr_leaves;
	uint64_t leaves_cap;
	struct gr_map *maps;
	uint32_t nr_maps;
	struct gr_chain *chains;
	uint32_t nr_chains;
	uint64_t head[MALI_JS_COUNT];
	int root_state;
	long hi_op;
};

/* What the last TRANSTAB_LO write was, for the HI write after it. */
#define GR_ROOT_NONE		0	/* HI comes first, or none pending */
#define GR_ROOT_INSTALL		1	/* LO non-zero: its HI is a WRITE_ROOT */
#define GR_ROOT_TEARDOWN	2	/* LO 0: its HI is dropped */

/* ---- messages and bounded reads ----------------------------------------- */

__printf(5, 6)
static int gr_fail(struct gr_ctx *c, const char *file, uint64_t off,
		   uint32_t line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err)
		return -EBADMSG;
	c->err->offset = off;
	if (line)
		n = snprintf(c->err->msg, sizeof(c->err->msg), "%s: line %u: ",
			     file, line);
	else
		n = snprintf(c->err->msg, sizeof(c->err->msg),
			     "%s: offset 0x%llx: ", file,
			     (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(c->err->msg))
		return -EBADMSG;
	va_start(ap, fmt);
	vsnprintf(c->err->msg + n, sizeof(c->err->msg) - n, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Whether @len bytes at @off lie inside @size bytes; cannot overflow. */
static bool gr_fits(size_t size, size_t off, size_t len)
{
	return off <= size && len <= size - off;
}

static uint64_t gr_get64(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return le64toh(v);
}

static uint32_t gr_get32(const uint8_t *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return le32toh(v);
}

/* ---- gr_pgt: header and table pages ------------------------------------- */

static int gr_table_cmp(const void *a, const void *b)
{
	const struct gr_table *x = a, *y = b;

	return x->pa < y->pa ? -1 : x->pa > y->pa;
}

static struct gr_table *gr_find_table(struct gr_ctx *c, uint64_t pa)
{
	struct gr_table key = { .pa = pa };

	if (!c->nr_tables)
		return NULL;
	return bsearch(&key, c->tables, c->nr_tables, sizeof(key),
		       gr_table_cmp);
}

static int gr_read_pgt(struct gr_ctx *c)
{
	const uint8_t *buf = c->in->pgt;
	size_t len = c->in->pgt_len, off, max;
	uint64_t size, transcfg, word;
	uint32_t i;

	if (!gr_fits(len, 0, GR_PGT_HDR))
		return gr_fail(c, GPUREPLAY_PGT, len, 0,
			       "truncated: %zu bytes, the header needs %u",
			       len, GR_PGT_HDR);
	size = gr_get64(buf, 0);
	if (size != len)
		return gr_fail(c, GPUREPLAY_PGT, 0, 0,
			       "size field %llu, but the file has %zu bytes",
			       (unsigned long long)size, len);
	c->transtab = gr_get64(buf, 8);
	transcfg = gr_get64(buf, 24);
	if ((transcfg & MALI_TRANSCFG_MODE) != MALI_TRANSCFG_AARCH64)
		return gr_fail(c, GPUREPLAY_PGT, 24, 0,
			       "TRANSCFG 0x%llx: only the AArch64 4K format (mode 6) is supported",
			       (unsigned long long)transcfg);

	max = (len - GR_PGT_HDR) / GR_PGT_REC;
	if (max > GPUREPLAY_PGT_PAGES_MAX)
		max = GPUREPLAY_PGT_PAGES_MAX;
	c->tables = calloc(max ? max : 1, sizeof(*c->tables));
	if (!c->tables)
		return -ENOMEM;

	off = GR_PGT_HDR;
	for (;;) {
		if (!gr_fits(len, off, 8))
			return gr_fail(c, GPUREPLAY_PGT, off, 0,
				       "truncated: no end marker 0x%llx",
				       GR_PGT_END);
		word = gr_get64(buf, off);
		if (word == GR_PGT_END)
			break;
		if (!gr_fits(len, off, GR_PGT_REC))
			return gr_fail(c, GPUREPLAY_PGT, off, 0,
				       "truncated table page: %zu bytes left of %llu",
				       len - off, GR_PGT_REC);
		if ((word & (GR_PAGE - 1)) >= GR_PGT_LEVELS)
			return gr_fail(c, GPUREPLAY_PGT, off, 0,
				       "table page 0x%llx: bad level %llu",
				       (unsigned long long)(word & ~(GR_PAGE - 1)),
				       (unsigned long long)(word & (GR_PAGE - 1)));
		if (c->nr_tables == max)
			return gr_fail(c, GPUREPLAY_PGT, off, 0,
				       "more than %u table pages",
				       GPUREPLAY_PGT_PAGES_MAX);
		c->tables[c->nr_tables].pa = word & ~(GR_PAGE - 1);
		c->tables[c->nr_tables].level = word & (GR_PAGE - 1);
		c->tables[c->nr_tables].off = off;
		c->nr_tables++;
		off += GR_PGT_REC;
	}
	if (off + 8 != len)
		return gr_fail(c, GPUREPLAY_PGT, off + 8, 0,
			       "%zu bytes after the end marker", len - off - 8);

	qsort(c->tables, c->nr_tables, sizeof(*c->tables), gr_table_cmp);
	for (i = 1; i < c->nr_tables; i++)
		if (c->tables[i].pa == c->tables[i - 1].pa)
			return gr_fail(c, GPUREPLAY_PGT, c->tables[i].off, 0,
				       "table page 0x%llx appears twice",
				       (unsigned long long)c->tables[i].pa);
	c->st->pgt_pages = c->nr_tables;
	return 0;
}

/* ---- gr_mem_contents ---------------------------------------------------- */

/* Checks one valid region's page records starting at @off. */
static int gr_check_pages(struct gr_ctx *c, const struct gr_region *r,
			  size_t off)
{
	const uint8_t *buf = c->in->mem;
	uint64_t i, va, prev = 0;

	for (i = 0; i < r->pages; i++, off += GR_PAGE_REC) {
		va = gr_get64(buf, off);
		if (va & (GR_PAGE - 1) || va < r->start || va >= r->end)
			return gr_fail(c, GPUREPLAY_MEM, off, 0,
				       "page 0x%llx is not a page of its region 0x%llx-0x%llx",
				       (unsigned long long)va,
				       (unsigned long long)r->start,
				       (unsigned long long)r->end);
		if (i && va <= prev)
			return gr_fail(c, GPUREPLAY_MEM, off, 0,
				       "page 0x%llx after page 0x%llx: pages must ascend",
				       (unsigned long long)va,
				       (unsigned long long)prev);
		prev = va;
	}
	return 0;
}

static int gr_read_regions(struct gr_ctx *c)
{
	const uint8_t *buf = c->in->mem;
	size_t len = c->in->mem_len, off = 0;
	uint64_t mapped = 0, span;
	struct gr_region *r;
	uint8_t valid;
	int ret;

	c->regions = calloc(GPUREPLAY_REGIONS_MAX, sizeof(*c->regions));
	if (!c->regions)
		return -ENOMEM;

	while (off < len) {
		if (c->nr_regions == GPUREPLAY_REGIONS_MAX)
			return gr_fail(c, GPUREPLAY_MEM, off, 0,
				       "more than %u regions",
				       GPUREPLAY_REGIONS_MAX);
		if (!gr_fits(len, off, GR_REGION_HDR))
			return gr_fail(c, GPUREPLAY_MEM, off, 0,
				       "truncated region header: %zu bytes of %u",
				       len - off, GR_REGION_HDR);
		r = &c->regions[c->nr_regions];
		r->off = off;
		r->start = gr_get64(buf, off);
		r->end = gr_get64(buf, off + 8);
		r->pages = gr_get64(buf, off + 16);
		r->flags = gr_get32(buf, off + 24);
		valid = buf[off + 28];
		if (r->start & (GR_PAGE - 1) || r->end & (GR_PAGE - 1) ||
		    r->start >= r->end || r->end > GR_VA_END)
			return gr_fail(c, GPUREPLAY_MEM, off, 0,
				       "region %u: bad range 0x%llx-0x%llx (page aligned, not empty, below 1 << %u)",
				       c->nr_regions,
				       (unsigned long long)r->start,
				       (unsigned long long)r->end,
				       GPUREPLAY_VA_BITS);
		if (valid > 1)
			return gr_fail(c, GPUREPLAY_MEM, off + 28, 0,
				       "region %u: is_valid is %u, not 0 or 1",
				       c->nr_regions, valid);
		r->valid = valid;
		span = (r->end - r->start) / GR_PAGE;
		if (r->pages > span)
			return gr_fail(c, GPUREPLAY_MEM, off + 16, 0,
				       "region %u: %llu pages in a range of %llu",
				       c->nr_regions,
				       (unsigned long long)r->pages,
				       (unsigned long long)span);
		if (r->pages > (GPUREPLAY_MAPPED_MAX - mapped) / GR_PAGE)
			return gr_fail(c, GPUREPLAY_MEM, off + 16, 0,
				       "region %u: more than %llu bytes in all regions",
				       c->nr_regions, GPUREPLAY_MAPPED_MAX);
		mapped += r->pages * GR_PAGE;
		off += GR_REGION_HDR;
		if (r->valid) {
			if (r->pages > (len - off) / GR_PAGE_REC)
				return gr_fail(c, GPUREPLAY_MEM, off, 0,
					       "truncated: region %u has %llu pages, %zu bytes left",
					       c->nr_regions,
					       (unsigned long long)r->pages,
					       len - off);
			ret = gr_check_pages(c, r, off);
			if (ret)
				return ret;
			off += r->pages * GR_PAGE_REC;
			c->st->valid_regions++;
			c->st->pages += r->pages;
		} else {
			c->st->zero_pages += r->pages;
		}
		c->nr_regions++;
	}
	if (!c->nr_regions)
		return gr_fail(c, GPUREPLAY_MEM, 0, 0, "no regions");
	c->st->regions = c->nr_regions;

	return 0;
}

static uint32_t gr_map_flags(uint32_t kflags)
{
	uint32_t f = ACCMAP_REPLAY_MAP_READ;

	if (kflags & KB_REG_GPU_WR)
		f |= ACCMAP_REPLAY_MAP_WRITE;
	if (!(kflags & KB_REG_GPU_NX))
		f |= ACCMAP_REPLAY_MAP_EXEC;
	return f;
}

static uint32_t gr_map_attr(uint32_t kflags)
{
	return (kflags >> KB_REG_MEMATTR_SHIFT) & KB_REG_MEMATTR_MASK;
}

/* ---- gr_pgt: the walk, collecting the valid leaves ---------------------- */

static uint64_t gr_leaf_size(uint32_t level)
{
	return 1ULL << (39 - 9 * level);
}

static int gr_add_leaf(struct gr_ctx *c, uint64_t va, uint64_t e, uint32_t level)
{
	struct gr_leaf *n;
	uint64_t cap;

	if (c->nr_leaves == c->leaves_cap) {
		cap = c->leaves_cap ? 2 * c->leaves_cap : 256;
		if (cap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(c->leaves, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->leaves = n;
		c->leaves_cap = cap;
	}
	c->leaves[c->nr_leaves].va = va;
	c->leaves[c->nr_leaves].e = e;
	c->leaves[c->nr_leaves].level = level;
	c->nr_leaves++;
	c->st->pgt_leaves++;
	return 0;
}

/* Walks in index order, so the leaves come in ascending VA. */
static int gr_walk(struct gr_ctx *c, struct gr_table *t, uint64_t va_base)
{
	const uint8_t *buf = c->in->pgt;
	unsigned int shift = 39 - 9 * t->level;
	struct gr_table *child;
	uint64_t e, type, va;
	uint32_t i;
	int ret;

	if (t->visited)
		return gr_fail(c, GPUREPLAY_PGT, t->off, 0,
			       "table page 0x%llx is reached twice",
			       (unsigned long long)t->pa);
	t->visited = true;
	for (i = 0; i < GR_PGT_ENTRIES; i++) {
		e = gr_get64(buf, t->off + 8 + i * 8);
		type = e & PTE_TYPE_MASK;
		va = va_base | ((uint64_t)i << shift);
		if (t->level == GR_PGT_LEVELS - 1) {
			if (type == PTE_TYPE_PAGE) {
				ret = gr_add_leaf(c, va, e, t->level);
				if (ret)
					return ret;
			}
			continue;
		}
		if (type == PTE_TYPE_BLOCK && t->level > 0) {
			ret = gr_add_leaf(c, va, e, t->level);
			if (ret)
				return ret;
			continue;
		}
		if (type != PTE_TYPE_TABLE)
			continue;
		child = gr_find_table(c, e & PTE_ADDR_MASK);
		if (!child) {
			c->st->tables_missing++;
			continue;
		}
		if (child->level != t->level + 1)
			return gr_fail(c, GPUREPLAY_PGT, child->off, 0,
				       "table page 0x%llx has level %u, but a level %u entry points to it",
				       (unsigned long long)child->pa,
				       child->level, t->level);
		ret = gr_walk(c, child, va);
		if (ret)
			return ret;
	}
	return 0;
}

static int gr_walk_pgt(struct gr_ctx *c)
{
	struct gr_table *root = gr_find_table(c, c->transtab & PTE_ADDR_MASK);

	if (!root || root->level)
		return gr_fail(c, GPUREPLAY_PGT, 8, 0,
			       "no level 0 table page at TRANSTAB 0x%llx",
			       (unsigned long long)c->transtab);
	return gr_walk(c, root, 0);
}

/* The first leaf ending after @va, or nr_leaves: O(log n). */
static uint64_t gr_leaf_after(const struct gr_ctx *c, uint64_t va)
{
	uint64_t lo = 0, hi = c->nr_leaves, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->leaves[mid].va + gr_leaf_size(c->leaves[mid].level) <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The recorded leaf mapping @va, or NULL. */
static const struct gr_leaf *gr_leaf_at(const struct gr_ctx *c, uint64_t va)
{
	uint64_t i = gr_leaf_after(c, va);

	if (i == c->nr_leaves || c->leaves[i].va > va)
		return NULL;
	return &c->leaves[i];
}

/* The output address of @l for @va. */
static uint64_t gr_leaf_pa(const struct gr_leaf *l, uint64_t va)
{
	uint64_t size = gr_leaf_size(l->level);

	return (l->e & PTE_ADDR_MASK & ~(size - 1)) + (va - l->va);
}

/* ---- regions to maps: who owns each page -------------------------------- */

static int gr_claim_cmp(const void *a, const void *b)
{
	const struct gr_claim *x = a, *y = b;

	if (x->va != y->va)
		return x->va < y->va ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* Every page of every region, sorted by VA and then file order. */
static int gr_claims(struct gr_ctx *c, struct gr_claim **out, uint64_t *nr)
{
	const uint8_t *buf = c->in->mem;
	uint64_t total = c->st->pages + c->st->zero_pages, i, n = 0;
	struct gr_claim *cl;
	uint32_t k;

	/* GPUREPLAY_MAPPED_MAX bounds @total to 4 Mi pages. */
	cl = calloc(total ? total : 1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	for (k = 0; k < c->nr_regions; k++) {
		const struct gr_region *r = &c->regions[k];
		size_t off = r->off + GR_REGION_HDR;

		for (i = 0; i < r->pages; i++, n++) {
			cl[n].k = k;
			if (r->valid) {
				cl[n].va = gr_get64(buf, off + i * GR_PAGE_REC);
				cl[n].pa = gr_get64(buf, off + i * GR_PAGE_REC + 8);
				cl[n].src = off + i * GR_PAGE_REC + 16;
			} else {
				cl[n].va = r->start + i * GR_PAGE;
			}
		}
	}
	qsort(cl, n, sizeof(*cl), gr_claim_cmp);
	*out = cl;
	*nr = n;
	return 0;
}

/*
 * Picks the owner of the page claimed by @cl[0..@n) (same VA, file order)
 * and counts the regions live there.  A region with contents is live when
 * the recorded leaf is valid and maps the page to the region's recorded
 * physical address; a zero-filled one when the leaf is valid, no region
 * with contents is live and it is the latest zero-filled one.  The latest
 * live region owns the page; with no valid leaf, the latest region.
 */
static int gr_resolve(struct gr_ctx *c, const struct gr_claim *cl, uint64_t n,
		      uint64_t *owner)
{
	const struct gr_leaf *l = gr_leaf_at(c, cl[0].va);
	const struct gr_region *a, *b;
	uint64_t i, pa, best = n, zero = n;

	if (n > 1)
		c->st->overlap_pages++;
	if (!l) {
		if (n > 1)
			c->st->overlap_unmapped++;
		*owner = n - 1;
		return 0;
	}
	pa = gr_leaf_pa(l, cl[0].va);
	for (i = 0; i < n; i++) {
		if (!c->regions[cl[i].k].valid) {
			zero = i;
		} else if (cl[i].pa == pa) {
			c->regions[cl[i].k].live++;
			best = i;
		}
	}
	if (best == n && zero < n) {
		c->regions[cl[zero].k].live++;
		best = zero;
	}
	if (best < n) {
		*owner = best;
		return 0;
	}
	if (n == 1) {
		/* One region, not live here: it keeps its page. */
		*owner = 0;
		return 0;
	}
	a = &c->regions[cl[n - 2].k];
	b = &c->regions[cl[n - 1].k];
	return gr_fail(c, GPUREPLAY_MEM, b->off, 0,
		       "regions 0x%llx-0x%llx (offset 0x%zx) and 0x%llx-0x%llx (offset 0x%zx) overlap at page 0x%llx, which gr_pgt maps to 0x%llx: neither region's page",
		       (unsigned long long)a->start, (unsigned long long)a->end,
		       a->off, (unsigned long long)b->start,
		       (unsigned long long)b->end, b->off,
		       (unsigned long long)cl[0].va, (unsigned long long)pa);
}

static int gr_add_map(struct gr_ctx *c, struct accmap_recording *rec,
		      uint32_t k, uint64_t va, uint64_t len, const void *data)
{
	const struct gr_region *r = &c->regions[k];
	int ret;

	ret = accmap_rec_add_map(rec, va, len, gr_map_flags(r->flags),
				 gr_map_attr(r->flags), data);
	if (ret == -E2BIG)
		return gr_fail(c, GPUREPLAY_MEM, r->off, 0,
			       "more than %u maps", ACCMAP_REPLAY_MAPS_MAX);
	if (ret == -EINVAL)
		return gr_fail(c, GPUREPLAY_MEM, r->off, 0,
			       "region 0x%llx-0x%llx cannot be mapped",
			       (unsigned long long)r->start,
			       (unsigned long long)r->end);
	if (ret)
		return ret;
	c->maps[c->nr_maps].va = va;
	c->maps[c->nr_maps].len = len;
	c->maps[c->nr_maps].k = k;
	c->nr_maps++;
	c->st->maps++;
	return 0;
}

/*
 * Gives every page one owner (gr_resolve()), marks the stale regions, and
 * makes one map per run of consecutive pages with the same owner: the maps
 * never overlap, and come in ascending VA.
 */
static int gr_make_maps(struct gr_ctx *c, struct accmap_recording *rec)
{
	const uint8_t *buf = c->in->mem;
	struct gr_claim *cl = NULL;
	uint64_t nr, i, j, n, owned = 0, own = 0;
	uint8_t *data = NULL;
	uint32_t k;
	int ret;

	ret = gr_claims(c, &cl, &nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i = j) {
		for (j = i + 1; j < nr && cl[j].va == cl[i].va; j++)
			;
		ret = gr_resolve(c, cl + i, j - i, &own);
		if (ret)
			goto out;
		cl[owned++] = cl[i + own];	/* owned <= i */
	}
	for (k = 0; k < c->nr_regions; k++) {
		struct gr_region *r = &c->regions[k];

		if (r->pages && !r->live) {
			r->stale = true;
			c->st->stale_regions++;
		}
	}

	c->maps = calloc(owned ? owned : 1, sizeof(*c->maps));
	ret = -ENOMEM;
	if (!c->maps)
		goto out;
	for (i = 0; i < owned; i += n) {
		k = cl[i].k;
		for (n = 1; i + n < owned; n++)
			if (cl[i + n].k != k ||
			    cl[i + n].va != cl[i].va + n * GR_PAGE)
				break;
		c->regions[k].kept += n;
		free(data);
		data = NULL;
		if (c->regions[k].valid) {
			ret = -ENOMEM;
			data = malloc(n * GR_PAGE);
			if (!data)
				goto out;
			for (j = 0; j < n; j++)
				memcpy(data + j * GR_PAGE, buf + cl[i + j].src,
				       GR_PAGE);
		}
		ret = gr_add_map(c, rec, k, cl[i].va, n * GR_PAGE, data);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	free(data);
	free(cl);
	return ret;
}

/* ---- cross-checks: leaves against maps, and maps against leaves -------- */

/* The index of the map holding [@va, @va + @len), or -1: O(log n). */
static long gr_map_of(const struct gr_ctx *c, uint64_t va, uint64_t len)
{
	uint32_t lo = 0, hi = c->nr_maps, mid;
	const struct gr_map *m;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->maps[mid].va + c->maps[mid].len <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nr_maps)
		return -1;
	m = &c->maps[lo];
	if (va < m->va || len > m->len || va - m->va > m->len - len)
		return -1;
	return lo;
}

static void gr_cross_check(struct gr_ctx *c, const struct accmap_recording *rec)
{
	const struct accmap_rec_map *m;
	uint64_t i, e;
	long idx;
	bool rw, x;

	for (i = 0; i < c->nr_leaves; i++) {
		e = c->leaves[i].e;
		idx = gr_map_of(c, c->leaves[i].va, 1);
		if (idx < 0) {
			c->st->leaves_unmapped++;
			continue;
		}
		m = &rec->maps[idx];
		rw = ((e >> PTE_AP_SHIFT) & PTE_AP_MASK) == PTE_AP_RW;
		x = !(e & PTE_NX);
		if (rw != !!(m->flags & ACCMAP_REPLAY_MAP_WRITE) ||
		    x != !!(m->flags & ACCMAP_REPLAY_MAP_EXEC) ||
		    ((e >> PTE_ATTR_SHIFT) & PTE_ATTR_MASK) != m->attr)
			c->st->leaves_stale++;
	}
	for (i = 0; i < c->nr_maps; i++) {
		uint64_t l = gr_leaf_after(c, c->maps[i].va);

		if (l == c->nr_leaves ||
		    c->leaves[l].va >= c->maps[i].va + c->maps[i].len)
			c->st->maps_no_leaf++;
	}
}

/* ---- job chains, walked as the model walks them ------------------------- */

/*
 * Follows chain @n through the recorded contents with the model's rules
 * (<linux/accmap.h>, ACCMAP_SIM_JD_*): returns 0 if it ends well, else
 * GPUREPLAY_CHAIN_* with the descriptor in *@at and the rest in *@b.
 * Brent's cycle finding spots a loop in a few times as many steps as the
 * chain has descriptors.
 */
static uint32_t gr_chain_fault(struct gr_ctx *c, const struct accmap_recording *rec,
			       uint64_t va, struct gpureplay_bad_chain *b)
{
	uint64_t saved = UINT64_MAX, next, count = 0, power = 1, steps = 0;
	const struct gr_region *r;
	const uint8_t *d;
	uint32_t type;
	uint8_t tb;
	long m;

	/* A head of 0 is an empty chain: the model reports it done at once. */
	while (va) {
		b->va = va;
		if (va & (ACCMAP_SIM_JD_ALIGN - 1))
			return GPUREPLAY_CHAIN_UNALIGNED;
		m = gr_map_of(c, va, ACCMAP_SIM_JD_SIZE);
		if (m < 0)
			return GPUREPLAY_CHAIN_UNMAPPED;
		r = &c->regions[c->maps[m].k];
		if (r->stale) {
			b->start = r->start;
			b->end = r->end;
			return GPUREPLAY_CHAIN_STALE;
		}
		d = rec->maps[m].data;
		if (!d) {
			b->start = c->maps[m].va;
			b->end = c->maps[m].va + c->maps[m].len;
			return GPUREPLAY_CHAIN_ZERO_FILLED;
		}
		d += va - c->maps[m].va;
		tb = d[ACCMAP_SIM_JD_TYPE];
		type = tb >> ACCMAP_SIM_JD_TYPE_SHIFT;
		if ((type < ACCMAP_SIM_JD_TYPE_MIN || type > ACCMAP_SIM_JD_TYPE_MAX) &&
		    type != ACCMAP_SIM_JOB_TYPE) {
			b->type = type;
			return GPUREPLAY_CHAIN_TYPE;
		}
		if (++count > ACCMAP_SIM_CHAIN_MAX)
			return GPUREPLAY_CHAIN_TOO_LONG;
		next = gr_get64(d, ACCMAP_SIM_JD_NEXT);
		if (!(tb & ACCMAP_SIM_JD_NEXT_64))
			next &= UINT32_MAX;
		if (next && next == saved) {
			b->va = next;
			return GPUREPLAY_CHAIN_LOOP;
		}
		if (++steps == power) {
			saved = va;
			power *= 2;
			steps = 0;
		}
		va = next;
	}
	return 0;
}

static void gr_walk_chains(struct gr_ctx *c, const struct accmap_recording *rec,
			   struct gpureplay_report *rep)
{
	struct gpureplay_bad_chain b;
	uint32_t n;

	for (n = 0; n < c->nr_chains; n++) {
		memset(&b, 0, sizeof(b));
		b.chain = n;
		b.slot = c->chains[n].slot;
		b.head = c->chains[n].head;
		b.why = gr_chain_fault(c, rec, b.head, &b);
		c->st->chains++;
		if (!b.why)
			continue;
		c->st->chains_bad++;
		if (rep)
			rep->bad_chains[rep->nr_bad_chains++] = b;
	}
}

/* ---- gr_io_history ------------------------------------------------------ */

static bool gr_hex(const char *s, size_t n, uint32_t *v)
{
	uint32_t x = 0;
	size_t i;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n || n > 8)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		uint32_t d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

static bool gr_dec(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!n || n > 20)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (x > (UINT64_MAX - (s[i] - '0')) / 10)
			return false;
		x = x * 10 + (s[i] - '0');
	}
	*v = x;
	return true;
}

/*
 * Appends @op, folding it into the op before it when it adds nothing: a
 * POLL or READ equal to the one before, or a READ whose recorded value
 * meets the condition of a POLL of the same register just before.  A
 * CAPTURE READ is never folded: a CAPTURED write needs its value.
 */
static void gr_emit(struct gr_ctx *c, const struct accmap_replay_op *op)
{
	struct accmap_replay_op *prev = c->nr_ops ? &c->ops[c->nr_ops - 1] : NULL;

	if (prev && prev->offset == op->offset &&
	    !(op->flags & ACCMAP_REPLAY_OP_CAPTURE) &&
	    (op->op == ACCMAP_REPLAY_OP_READ || op->op == ACCMAP_REPLAY_OP_POLL)) {
		if (!memcmp(prev, op, sizeof(*op)) ||
		    (prev->op == ACCMAP_REPLAY_OP_POLL &&
		     op->op == ACCMAP_REPLAY_OP_READ &&
		     (op->value & prev->mask) == prev->value)) {
			c->st->collapsed++;
			return;
		}
	}
	/* Room for every line was made before the first. */
	c->ops[c->nr_ops++] = *op;
	if (op->op == ACCMAP_REPLAY_OP_POLL)
		c->st->polls++;
	else if (op->op == ACCMAP_REPLAY_OP_WAIT_IRQ)
		c->st->wait_irqs++;
	else if (op->op == ACCMAP_REPLAY_OP_WRITE_ROOT)
		c->st->write_roots++;
	if (op->flags & ACCMAP_REPLAY_OP_CAPTURE)
		c->st->captures++;
	else if (op->flags & ACCMAP_REPLAY_OP_CAPTURED)
		c->st->captured++;
}

/* Takes op @i out again (a WRITE_ROOT HI whose LO turned out to be 0). */
static void gr_unemit(struct gr_ctx *c, uint32_t i)
{
	if (c->ops[i].op == ACCMAP_REPLAY_OP_WRITE_ROOT)
		c->st->write_roots--;
	memmove(&c->ops[i], &c->ops[i + 1],
		(c->nr_ops - i - 1) * sizeof(*c->ops));
	c->nr_ops--;
}

/* The register within an address space block, or -1; the AS in *@as. */
static int gr_as_reg(uint32_t offset, int *as)
{
	if (offset < MALI_AS_BASE ||
	    offset >= MALI_AS_BASE + MALI_AS_COUNT * MALI_AS_STRIDE)
		return -1;
	*as = (offset - MALI_AS_BASE) / MALI_AS_STRIDE;
	return (offset - MALI_AS_BASE) % MALI_AS_STRIDE;
}

/* The register within a job slot block, or -1; the slot in *@js. */
static int gr_js_reg(uint32_t offset, int *js)
{
	if (offset < MALI_JS_BASE ||
	    offset >= MALI_JS_BASE + MALI_JS_COUNT * MALI_JS_STRIDE)
		return -1;
	*js = (offset - MALI_JS_BASE) / MALI_JS_STRIDE;
	return (offset - MALI_JS_BASE) % MALI_JS_STRIDE;
}

static void gr_convert_read(struct gr_ctx *c, uint32_t offset, uint32_t value)
{
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_READ, .offset = offset, .value = value,
		.mask = UINT32_MAX,
	};
	/* Slot n's done bit n and failed bit 16 + n, of slots started. */
	uint32_t done = value & (c->started | c->started << 16);
	int as, reg;

	reg = gr_as_reg(offset, &as);
	if (reg == MALI_AS_TRANSTAB_LO || reg == MALI_AS_TRANSTAB_HI) {
		/* The root is the kernel's: no op reads it. */
		c->st->dropped++;
		return;
	}
	if (reg == MALI_AS_STATUS && (value & MALI_AS_STATUS_ACTIVE)) {
		op.op = ACCMAP_REPLAY_OP_POLL;
		op.mask = MALI_AS_STATUS_ACTIVE;
		op.value = 0;
		op.timeout_us = GPUREPLAY_TIMEOUT_US;
	} else if (offset >= MALI_READY_FIRST && offset < MALI_READY_END &&
		   !(offset & 0x8) && value) {
		/* Power READY: wait for the cores the driver saw come up. */
		op.op = ACCMAP_REPLAY_OP_POLL;
		op.mask = value;
		op.timeout_us = GPUREPLAY_TIMEOUT_US;
	} else if ((offset == MALI_GPU_IRQ_STATUS || offset == MALI_GPU_IRQ_RAWSTAT) &&
		   (value & MALI_GPU_IRQ_WAITED)) {
		/*
		 * The end of a soft reset or cache clean, which the recorded
		 * driver saw through its interrupt: wait for it, since a
		 * real GPU takes time (the model is done at once).
		 */
		op.op = ACCMAP_REPLAY_OP_POLL;
		op.mask = value & MALI_GPU_IRQ_WAITED;
		op.value = op.mask;
		op.timeout_us = GPUREPLAY_TIMEOUT_US;
	} else if (offset == MALI_JOB_IRQ_STATUS && done) {
		/*
		 * A job chain's end: wait for its slot's done interrupt, or
		 * its failed one if the recording saw the job fail.
		 */
		op.op = ACCMAP_REPLAY_OP_WAIT_IRQ;
		op.offset = 0;
		op.value = 0;
		op.mask = done;
		op.timeout_us = GPUREPLAY_TIMEOUT_US;
		op.irq = ACCMAP_REPLAY_IRQ_JOB;
		c->started &= ~(done | done >> 16);
		if (done >> 16)
			c->st->failed_waits++;
	} else if (offset == MALI_LATEST_FLUSH) {
		/* The GPU's flush ID at replay feeds FLUSH_ID_NEXT. */
		op.flags = ACCMAP_REPLAY_OP_CAPTURE;
		c->flush = value;
		c->have_flush = true;
	} else if (offset == MALI_GPU_ID && !c->gpu_id) {
		c->gpu_id = value;
	}
	gr_emit(c, &op);
}

/*
 * Whether a TRANSTAB write (@hi: of the upper half) installs a table and
 * so becomes a WRITE_ROOT.  A LO write of non-zero installs one, and the
 * HI write after it belongs to it, even if 0 (kbase writes LO, then HI).
 * A LO write of 0 is a teardown: it and its HI write are left out, since
 * a root of 0 would point the table walker at physical address 0 (the
 * TRANSCFG write of the unmapped mode that follows disables the AS).  A HI
 * write before its LO becomes a WRITE_ROOT at once and is taken out again
 * if the LO write after it is a teardown.
 */
static bool gr_root_write(struct gr_ctx *c, bool hi, uint32_t value)
{
	if (hi) {
		if (c->root_state == GR_ROOT_INSTALL) {
			c->root_state = GR_ROOT_NONE;
			return true;
		}
		if (c->root_state == GR_ROOT_TEARDOWN) {
			c->root_state = GR_ROOT_NONE;
			c->st->roots_dropped++;
			return false;
		}
		/* HI first: kept unless its LO is a teardown. */
		c->hi_op = c->nr_ops;
		return true;
	}
	if (value) {
		c->root_state = c->hi_op >= 0 ? GR_ROOT_NONE : GR_ROOT_INSTALL;
		c->hi_op = -1;
		return true;
	}
	c->st->roots_dropped++;
	if (c->hi_op >= 0) {
		if ((uint32_t)c->hi_op < c->nr_ops &&
		    c->ops[c->hi_op].op == ACCMAP_REPLAY_OP_WRITE_ROOT &&
		    (c->ops[c->hi_op].flags & ACCMAP_REPLAY_OP_HI)) {
			gr_unemit(c, c->hi_op);
			c->st->roots_dropped++;
		}
		c->hi_op = -1;
		c->root_state = GR_ROOT_NONE;
	} else {
		c->root_state = GR_ROOT_TEARDOWN;
	}
	return false;
}

static int gr_convert_write(struct gr_ctx *c, uint32_t offset, uint32_t value,
			    size_t loff, uint32_t line)
{
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_WRITE, .offset = offset, .value = value,
	};
	int as, js, reg;
	uint64_t half;

	reg = gr_as_reg(offset, &as);
	if (reg == MALI_AS_TRANSTAB_LO || reg == MALI_AS_TRANSTAB_HI) {
		if (c->as < 0)
			c->as = as;
		if (as != c->as)
			return gr_fail(c, GPUREPLAY_IO, loff, line,
				       "TRANSTAB of address space %d after that of %d: one address space per recording",
				       as, c->as);
		half = reg == MALI_AS_TRANSTAB_HI ? c->transtab >> 32 :
		       c->transtab & UINT32_MAX;
		if (value && value != half)
			c->st->roots_other++;
		if (!gr_root_write(c, reg == MALI_AS_TRANSTAB_HI, value))
			return 0;
		/* The kernel's own root goes where the recorded one went. */
		op.op = ACCMAP_REPLAY_OP_WRITE_ROOT;
		op.value = 0;
		if (reg == MALI_AS_TRANSTAB_HI)
			op.flags = ACCMAP_REPLAY_OP_HI;
	} else if (reg == MALI_AS_TRANSCFG_LO) {
		uint32_t mode = value & MALI_TRANSCFG_MODE;

		if (mode != MALI_TRANSCFG_AARCH64 && mode != MALI_TRANSCFG_UNMAPPED)
			return gr_fail(c, GPUREPLAY_IO, loff, line,
				       "TRANSCFG 0x%08x: address mode %u is neither AArch64 4K (6) nor unmapped (1)",
				       value, mode);
	}
	reg = gr_js_reg(offset, &js);
	if (reg == MALI_JS_HEAD_NEXT_LO) {
		c->head[js] = (c->head[js] & ~(uint64_t)UINT32_MAX) | value;
	} else if (reg == MALI_JS_HEAD_NEXT_HI) {
		c->head[js] = (c->head[js] & UINT32_MAX) | (uint64_t)value << 32;
	} else if (reg == MALI_JS_COMMAND_NEXT && value == MALI_JS_START) {
		c->started |= 1U << js;
		c->st->jobs++;
		/* One chain per line at most: room was made. */
		c->chains[c->nr_chains].head = c->head[js];
		c->chains[c->nr_chains].slot = js;
		c->nr_chains++;
	} else if (reg == MALI_JS_FLUSH_ID_NEXT && c->have_flush) {
		/* The flush ID the GPU gives the CAPTURE READ before, at replay. */
		if (op.value != c->flush)
			c->st->flush_ids++;
		op.flags = ACCMAP_REPLAY_OP_CAPTURED;
		op.value = 0;
	}
	gr_emit(c, &op);
	return 0;
}

/* Parses one line of @n bytes (no newline) at @loff. */
static int gr_convert_line(struct gr_ctx *c, const char *s, size_t n,
			   size_t loff, uint32_t line)
{
	const char *f[4];
	size_t fl[4];
	uint32_t offset, value;
	uint64_t delta;
	size_t i, k = 0, start = 0;

	for (i = 0; i <= n && k < 4; i++) {
		if (i == n || s[i] == ',') {
			f[k] = s + start;
			fl[k] = i - start;
			k++;
			start = i + 1;
		}
	}
	if (k != 4 || i <= n)
		return gr_fail(c, GPUREPLAY_IO, loff, line,
			       "expected 4 fields \"delta_ns,R|W,0xoffset,value\"");
	if (!gr_dec(f[0], fl[0], &delta))
		return gr_fail(c, GPUREPLAY_IO, loff, line,
			       "bad delay \"%.*s\"", (int)fl[0], f[0]);
	if (fl[1] != 1 || (f[1][0] != 'R' && f[1][0] != 'W'))
		return gr_fail(c, GPUREPLAY_IO, loff + (f[1] - s), line,
			       "access is not R or W");
	if (!gr_hex(f[2], fl[2], &offset))
		return gr_fail(c, GPUREPLAY_IO, loff + (f[2] - s), line,
			       "bad register offset");
	if (offset & 3 || offset >= GPUREPLAY_WINDOW_SIZE)
		return gr_fail(c, GPUREPLAY_IO, loff + (f[2] - s), line,
			       "register offset 0x%x is not 4-byte aligned inside the 0x%x byte window",
			       offset, GPUREPLAY_WINDOW_SIZE);
	if (!gr_hex(f[3], fl[3], &value))
		return gr_fail(c, GPUREPLAY_IO, loff + (f[3] - s), line,
			       "bad value");
	if (delta > UINT64_MAX - c->st->recorded_ns)
		c->st->recorded_ns = UINT64_MAX;
	else
		c->st->recorded_ns += delta;

	c->st->lines++;
	if (f[1][0] == 'R') {
		c->st->reads++;
		gr_convert_read(c, offset, value);
		return 0;
	}
	c->st->writes++;
	return gr_convert_write(c, offset, value, loff, line);
}

static int gr_read_io(struct gr_ctx *c)
{
	const char *buf = c->in->io;
	size_t len = c->in->io_len, off = 0, n, lines = 0;
	const char *nl;
	uint32_t line = 0;
	int ret;

	/* One op at most per line: count them, bounded, before anything. */
	for (off = 0; off < len; off = nl ? (size_t)(nl - buf) + 1 : len) {
		nl = memchr(buf + off, '\n', len - off);
		if (++lines > GPUREPLAY_LINES_MAX)
			return gr_fail(c, GPUREPLAY_IO, off, 0,
				       "more than %u lines", GPUREPLAY_LINES_MAX);
	}
	if (!lines)
		return gr_fail(c, GPUREPLAY_IO, 0, 0, "empty");
	c->ops = calloc(lines, sizeof(*c->ops));
	c->chains = calloc(lines, sizeof(*c->chains));
	if (!c->ops || !c->chains)
		return -ENOMEM;
	c->ops_cap = lines;

	for (off = 0; off < len; off += n + 1) {
		line++;
		nl = memchr(buf + off, '\n', len - off);
		n = nl ? (size_t)(nl - (buf + off)) : len - off;
		if (n > GPUREPLAY_LINE_MAX)
			return gr_fail(c, GPUREPLAY_IO, off, line,
				       "longer than %u bytes", GPUREPLAY_LINE_MAX);
		if (n && buf[off + n - 1] == '\r')
			n--;
		ret = gr_convert_line(c, buf + off, n, off, line);
		if (ret)
			return ret;
	}
	if (c->as < 0)
		return gr_fail(c, GPUREPLAY_IO, len, 0,
			       "no write of an address space's TRANSTAB: no GPU address space to replay");
	if (!c->nr_ops)
		return gr_fail(c, GPUREPLAY_IO, len, 0, "no register operations");
	c->st->ops = c->nr_ops;
	return 0;
}

/* ---- gr_sync_as --------------------------------------------------------- */

static int gr_add_symbol(struct gr_ctx *c, struct accmap_recording *rec,
			 uint32_t idx, const char *name, uint32_t flags)
{
	const uint8_t *buf = c->in->sync;
	size_t off = 4 + (size_t)idx * GR_SYNC_REC;
	uint64_t start = gr_get64(buf, off), end = gr_get64(buf, off + 8);
	uint64_t size = gr_get64(buf, off + 16);
	int ret;

	if (!size || start > UINT64_MAX - size || start + size != end)
		return gr_fail(c, GPUREPLAY_SYNC, off, 0,
			       "range %u (%s): 0x%llx-0x%llx does not have size 0x%llx",
			       idx, name, (unsigned long long)start,
			       (unsigned long long)end, (unsigned long long)size);
	if (accmap_rec_find_map(rec, start, size) < 0)
		return gr_fail(c, GPUREPLAY_SYNC, off, 0,
			       "range %u (%s): 0x%llx-0x%llx is not inside one mapped region",
			       idx, name, (unsigned long long)start,
			       (unsigned long long)end);
	ret = accmap_rec_add_symbol(rec, name, start, size, flags);
	if (ret == -EINVAL || ret == -EEXIST)
		return gr_fail(c, GPUREPLAY_SYNC, off, 0,
			       "range %u (%s) cannot be named", idx, name);
	return ret;
}

static int gr_read_sync(struct gr_ctx *c, struct accmap_recording *rec)
{
	size_t len = c->in->sync_len, want;
	uint32_t count;
	int ret;

	if (!gr_fits(len, 0, 4))
		return gr_fail(c, GPUREPLAY_SYNC, len, 0,
			       "truncated: %zu bytes, the count needs 4", len);
	count = gr_get32(c->in->sync, 0);
	if (count < 2 || count > GPUREPLAY_SYNC_MAX)
		return gr_fail(c, GPUREPLAY_SYNC, 0, 0,
			       "%u ranges: need 2 (input, output) to %u",
			       count, GPUREPLAY_SYNC_MAX);
	want = 4 + (size_t)count * GR_SYNC_REC;
	if (len != want)
		return gr_fail(c, GPUREPLAY_SYNC, len < want ? len : want, 0,
			       "%s: %zu bytes for %u ranges of %u bytes",
			       len < want ? "truncated" : "trailing bytes",
			       len - 4, count, GR_SYNC_REC);
	ret = gr_add_symbol(c, rec, count - 2, "input", ACCMAP_REC_SYM_INPUT);
	if (!ret)
		ret = gr_add_symbol(c, rec, count - 1, "output",
				    ACCMAP_REC_SYM_OUTPUT);
	return ret;
}

/* ---- the import --------------------------------------------------------- */

static int gr_set_note(struct accmap_recording *rec,
		       const struct gpureplay_stats *st)
{
	char note[512];

	snprintf(note, sizeof(note),
		 "Imported from a GPUReplay recording by accmapctl import-gpureplay.\n"
		 "%u regions (%u with contents), %llu pages of contents, %llu zero-filled.\n"
		 "%u register accesses (%u reads, %u writes), %u job chains.\n"
		 "%u stale regions; %u job chains not replayable.\n"
		 "%llu ns of recorded delays left out.\n",
		 st->regions, st->valid_regions, (unsigned long long)st->pages,
		 (unsigned long long)st->zero_pages, st->lines, st->reads,
		 st->writes, st->jobs, st->stale_regions, st->chains_bad,
		 (unsigned long long)st->recorded_ns);
	return accmap_rec_set_note(rec, note);
}

/* Which of the input and output ranges overlap each stale region. */
static void gr_stale_symbols(struct gr_ctx *c, struct gpureplay_report *rep)
{
	const uint8_t *buf = c->in->sync;
	uint32_t count = gr_get32(buf, 0), k, s;
	uint64_t start, end;

	for (k = 0; k < c->nr_regions; k++) {
		const struct gr_region *r = &c->regions[k];
		struct gpureplay_stale_region *o;

		if (!r->stale)
			continue;
		o = &rep->stale[rep->nr_stale++];
		o->start = r->start;
		o->end = r->end;
		o->pages = r->pages;
		o->kept = r->kept;
		o->off = r->off;
		for (s = 0; s < 2; s++) {
			start = gr_get64(buf, 4 + (size_t)(count - 2 + s) * GR_SYNC_REC);
			end = gr_get64(buf, 4 + (size_t)(count - 2 + s) * GR_SYNC_REC + 8);
			if (start < r->end && end > r->start)
				o->symbols |= s ? ACCMAP_REC_SYM_OUTPUT :
						  ACCMAP_REC_SYM_INPUT;
		}
	}
}

int gpureplay_import(const struct gpureplay_input *in,
		     struct accmap_recording **recp,
		     struct gpureplay_stats *stats,
		     struct accmap_rec_error *err)
{
	return gpureplay_import_report(in, recp, stats, NULL, err);
}

int gpureplay_import_report(const struct gpureplay_input *in,
			    struct accmap_recording **recp,
			    struct gpureplay_stats *stats,
			    struct gpureplay_report *rep,
			    struct accmap_rec_error *err)
{
	struct gpureplay_stats local;
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error cerr;
	struct gr_ctx c = {
		.in = in, .st = stats ? stats : &local, .err = err, .as = -1,
		.hi_op = -1,
	};
	int ret;

	if (err) {
		err->offset = ACCMAP_REC_NO_OFFSET;
		err->msg[0] = '\0';
	}
	if (rep)
		memset(rep, 0, sizeof(*rep));
	if (!in || !recp || (!in->pgt && in->pgt_len) ||
	    (!in->mem && in->mem_len) || (!in->io && in->io_len) ||
	    (!in->sync && in->sync_len))
		return -EINVAL;
	memset(c.st, 0, sizeof(*c.st));

	ret = gr_read_pgt(&c);
	if (!ret)
		ret = gr_read_regions(&c);
	if (!ret)
		ret = gr_walk_pgt(&c);
	if (!ret)
		ret = gr_read_io(&c);
	if (!ret)
		ret = accmap_rec_create(GPUREPLAY_TARGET, ACCMAP_PGT_MALI_AARCH64_4K,
					c.as, GPUREPLAY_VA_BITS, &rec);
	if (!ret) {
		rec->gpu_id = c.gpu_id;
		ret = gr_make_maps(&c, rec);
	}
	if (!ret) {
		gr_cross_check(&c, rec);
		ret = gr_read_sync(&c, rec);
	}
	if (!ret && rep) {
		rep->bad_chains = calloc(c.nr_chains ? c.nr_chains : 1,
					 sizeof(*rep->bad_chains));
		rep->stale = calloc(c.nr_regions, sizeof(*rep->stale));
		if (!rep->bad_chains || !rep->stale)
			ret = -ENOMEM;
		else
			gr_stale_symbols(&c, rep);
	}
	if (!ret) {
		gr_walk_chains(&c, rec, rep);
		ret = accmap_rec_set_ops(rec, c.ops, c.nr_ops);
	}
	if (!ret)
		ret = gr_set_note(rec, c.st);
	if (!ret && accmap_rec_check(rec, &cerr)) {
		/* Not expected: every rule was checked on the way. */
		if (err)
			*err = cerr;
		ret = -EBADMSG;
	}
	if (ret == -ENOMEM && err)
		snprintf(err->msg, sizeof(err->msg), "out of memory");

	free(c.regions);
	free(c.tables);
	free(c.ops);
	free(c.leaves);
	free(c.maps);
	free(c.chains);
	if (ret) {
		if (rep)
			gpureplay_report_free(rep);
		accmap_rec_free(rec);
		return ret;
	}
	*recp = rec;
	return 0;
}

void gpureplay_report_free(struct gpureplay_report *rep)
{
	free(rep->bad_chains);
	free(rep->stale);
	memset(rep, 0, sizeof(*rep));
}

int gpureplay_chain_describe(const struct gpureplay_bad_chain *b, char *buf,
			     size_t len)
{
	int n = snprintf(buf, len, "chain %u (slot %u, head 0x%llx): descriptor 0x%llx ",
			 b->chain, b->slot, (unsigned long long)b->head,
			 (unsigned long long)b->va);

	if (n < 0 || (size_t)n >= len)
		return n;
	buf += n;
	len -= n;
	switch (b->why) {
	case GPUREPLAY_CHAIN_UNALIGNED:
		return n + snprintf(buf, len, "is not %u-byte aligned",
				    ACCMAP_SIM_JD_ALIGN);
	case GPUREPLAY_CHAIN_UNMAPPED:
		return n + snprintf(buf, len, "lies outside every map");
	case GPUREPLAY_CHAIN_STALE:
		return n + snprintf(buf, len, "lies in stale region 0x%llx-0x%llx",
				    (unsigned long long)b->start,
				    (unsigned long long)b->end);
	case GPUREPLAY_CHAIN_ZERO_FILLED:
		return n + snprintf(buf, len, "lies in zero-filled map 0x%llx-0x%llx",
				    (unsigned long long)b->start,
				    (unsigned long long)b->end);
	case GPUREPLAY_CHAIN_TYPE:
		return n + snprintf(buf, len, "has job type %u, which the model does not run",
				    b->type);
	case GPUREPLAY_CHAIN_LOOP:
		return n + snprintf(buf, len, "comes back: the chain loops");
	case GPUREPLAY_CHAIN_TOO_LONG:
		return n + snprintf(buf, len, "is past %u descriptors",
				    ACCMAP_SIM_CHAIN_MAX);
	default:
		return n + snprintf(buf, len, "is bad (%u)", b->why);
	}
}

/* ---- reading the files -------------------------------------------------- */

static int gr_load_file(const char *dir, const char *name, uint64_t max,
			void **buf, size_t *len, struct accmap_rec_error *err)
{
	char path[PATH_MAX];
	struct stat sb;
	size_t done = 0;
	ssize_t n;
	int fd, ret;

	*buf = NULL;
	*len = 0;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		ret = -ENAMETOOLONG;
		goto fail;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(fd, &sb)) {
		ret = -errno;
		goto close_fd;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = -EINVAL;
		goto close_fd;
	}
	if ((uint64_t)sb.st_size > max) {
		ret = -EFBIG;
		goto close_fd;
	}
	*buf = malloc(sb.st_size ? sb.st_size : 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto close_fd;
	}
	while (done < (size_t)sb.st_size) {
		n = read(fd, (char *)*buf + done, sb.st_size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto free_buf;
		}
		done += n;
	}
	close(fd);
	*len = done;
	return 0;

free_buf:
	free(*buf);
	*buf = NULL;
close_fd:
	close(fd);
fail:
	if (err) {
		err->offset = ACCMAP_REC_NO_OFFSET;
		snprintf(err->msg, sizeof(err->msg), "%s/%s: %s%s", dir, name,
			 ret == -EFBIG ? "larger than the importer takes: " : "",
			 strerror(-ret));
	}
	return ret;
}

int gpureplay_load(const char *dir, struct gpureplay_input *in,
		   struct accmap_rec_error *err)
{
	void *b[4] = { NULL };
	int ret;

	memset(in, 0, sizeof(*in));
	ret = gr_load_file(dir, GPUREPLAY_PGT, GPUREPLAY_FILE_MAX, &b[0],
			   &in->pgt_len, err);
	in->pgt = b[0];
	if (!ret)
		ret = gr_load_file(dir, GPUREPLAY_MEM, GPUREPLAY_MEM_FILE_MAX,
				   &b[1], &in->mem_len, err);
	in->mem = ret ? NULL : b[1];
	if (!ret)
		ret = gr_load_file(dir, GPUREPLAY_IO, GPUREPLAY_FILE_MAX, &b[2],
				   &in->io_len, err);
	in->io = ret ? NULL : b[2];
	if (!ret)
		ret = gr_load_file(dir, GPUREPLAY_SYNC, GPUREPLAY_FILE_MAX, &b[3],
				   &in->sync_len, err);
	in->sync = ret ? NULL : b[3];
	if (ret)
		gpureplay_unload(in);
	return ret;
}

void gpureplay_unload(struct gpureplay_input *in)
{
	free((void *)in->pgt);
	free((void *)in->mem);
	free((void *)in->io);
	free((void *)in->sync);
	memset(in, 0, sizeof(*in));
}

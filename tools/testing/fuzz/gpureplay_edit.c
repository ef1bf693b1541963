// SPDX-License-Identifier: GPL-2.0
/*
 * Edits of a GPUReplay recording in memory, for tests: see
 * gpureplay_edit.h.  The formats are those gpureplay.c reads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpureplay_edit.h"

#define GRE_PAGE	4096ULL
#define GRE_HDR		29
#define GRE_PAGE_REC	(16 + GRE_PAGE)
#define GRE_PGT_HDR	32
#define GRE_PGT_REC	(8 + 512 * 8ULL)
#define GRE_PGT_END	0xffffffffffULL
#define GRE_ADDR_MASK	0x0000fffffffff000ULL

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void set64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static int dup_file(struct gre_file *f, const void *p, size_t n)
{
	f->p = malloc(n ? n : 1);
	if (!f->p)
		return -ENOMEM;
	if (n)
		memcpy(f->p, p, n);
	f->n = n;
	return 0;
}

int gre_copy(struct gre *e, const struct gpureplay_input *in)
{
	memset(e, 0, sizeof(*e));
	if (dup_file(&e->pgt, in->pgt, in->pgt_len) ||
	    dup_file(&e->mem, in->mem, in->mem_len) ||
	    dup_file(&e->io, in->io, in->io_len) ||
	    dup_file(&e->sync, in->sync, in->sync_len)) {
		gre_free(e);
		return -ENOMEM;
	}
	return 0;
}

int gre_dup(struct gre *e, const struct gre *src)
{
	struct gpureplay_input in = gre_input(src);

	return gre_copy(e, &in);
}

void gre_free(struct gre *e)
{
	free(e->pgt.p);
	free(e->mem.p);
	free(e->io.p);
	free(e->sync.p);
	memset(e, 0, sizeof(*e));
}

struct gpureplay_input gre_input(const struct gre *e)
{
	struct gpureplay_input in = {
		.pgt = e->pgt.p, .pgt_len = e->pgt.n,
		.mem = e->mem.p, .mem_len = e->mem.n,
		.io = e->io.p, .io_len = e->io.n,
		.sync = e->sync.p, .sync_len = e->sync.n,
	};

	return in;
}

int gre_region(const struct gre *e, uint32_t idx, struct gre_region *r)
{
	size_t off = 0;
	uint32_t i;

	for (i = 0;; i++) {
		if (off >= e->mem.n)
			return -ENOENT;
		if (e->mem.n - off < GRE_HDR)
			return -EBADMSG;
		r->start = get64(e->mem.p + off);
		r->end = get64(e->mem.p + off + 8);
		r->pages = get64(e->mem.p + off + 16);
		r->flags = get32(e->mem.p + off + 24);
		r->valid = e->mem.p[off + 28];
		r->off = off;
		if (i == idx)
			return 0;
		off += GRE_HDR;
		if (r->valid) {
			if (r->pages > (e->mem.n - off) / GRE_PAGE_REC)
				return -EBADMSG;
			off += r->pages * GRE_PAGE_REC;
		}
	}
}

void gre_page(const struct gre *e, const struct gre_region *r, uint64_t i,
	      uint64_t *va, uint64_t *pa, size_t *data_off)
{
	size_t off = r->off + GRE_HDR + i * GRE_PAGE_REC;

	*va = get64(e->mem.p + off);
	*pa = get64(e->mem.p + off + 8);
	*data_off = off + 16;
}

int gre_append_region(struct gre *e, uint64_t start, uint64_t pages,
		      uint32_t flags, const uint64_t *pa, uint8_t fill)
{
	size_t add = GRE_HDR + (pa ? pages * GRE_PAGE_REC : 0);
	uint8_t *p = realloc(e->mem.p, e->mem.n + add), *h;
	uint64_t i;

	if (!p)
		return -ENOMEM;
	e->mem.p = p;
	h = p + e->mem.n;
	set64(h, start);
	set64(h + 8, start + pages * GRE_PAGE);
	set64(h + 16, pages);
	h[24] = flags;
	h[25] = flags >> 8;
	h[26] = flags >> 16;
	h[27] = flags >> 24;
	h[28] = pa ? 1 : 0;
	h += GRE_HDR;
	for (i = 0; pa && i < pages; i++, h += GRE_PAGE_REC) {
		set64(h, start + i * GRE_PAGE);
		set64(h + 8, pa[i]);
		memset(h + 16, fill, GRE_PAGE);
	}
	e->mem.n += add;
	return 0;
}

/* The offset of the (pa | level) word of table page @pa, or 0. */
static size_t table_at(const struct gre *e, uint64_t pa)
{
	size_t off;

	for (off = GRE_PGT_HDR; off + GRE_PGT_REC <= e->pgt.n; off += GRE_PGT_REC) {
		uint64_t w = get64(e->pgt.p + off);

		if (w == GRE_PGT_END)
			break;
		if ((w & ~(GRE_PAGE - 1)) == pa)
			return off;
	}
	return 0;
}

int gre_leaf(const struct gre *e, uint64_t va, size_t *off)
{
	uint64_t pa, entry;
	size_t t;
	int level;

	if (e->pgt.n < GRE_PGT_HDR)
		return -ENOENT;
	pa = get64(e->pgt.p + 8) & GRE_ADDR_MASK;
	for (level = 0;; level++) {
		t = table_at(e, pa);
		if (!t)
			return -ENOENT;
		t += 8 + ((va >> (39 - 9 * level)) & 511) * 8;
		if (level == 3) {
			*off = t;
			return 0;
		}
		entry = get64(e->pgt.p + t);
		if ((entry & 3) != 3)
			return -ENOENT;
		pa = entry & GRE_ADDR_MASK;
	}
}

int gre_get_leaf(const struct gre *e, uint64_t va, uint64_t *entry)
{
	size_t off;
	int ret = gre_leaf(e, va, &off);

	if (!ret)
		*entry = get64(e->pgt.p + off);
	return ret;
}

int gre_set_leaf(struct gre *e, uint64_t va, uint64_t entry)
{
	size_t off;
	int ret = gre_leaf(e, va, &off);

	if (!ret)
		set64(e->pgt.p + off, entry);
	return ret;
}

long gre_edit_io(struct gre *e, size_t at, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), i;
	uint8_t *p;

	if (!fl || at > e->io.n)
		return -1;
	for (i = at; i + fl <= e->io.n; i++)
		if (!memcmp(e->io.p + i, from, fl))
			break;
	if (i + fl > e->io.n)
		return -1;
	p = malloc(e->io.n - fl + tl + 1);
	if (!p)
		return -2;
	memcpy(p, e->io.p, i);
	memcpy(p + i, to, tl);
	memcpy(p + i + tl, e->io.p + i + fl, e->io.n - i - fl);
	free(e->io.p);
	e->io.p = p;
	e->io.n = e->io.n - fl + tl;
	return (long)(i + tl);
}

/* ---- the edits the tests make of MNIST ---------------------------------- */

uint64_t gre_free_va(const struct gre *e)
{
	struct gre_region r;
	uint64_t top = 0;
	uint32_t k;

	for (k = 0; !gre_region(e, k, &r); k++)
		if (r.end > top)
			top = r.end;
	return top;
}

int gre_stale_overlap(const struct gre *orig, struct gre *e, struct gre_region *live,
		      uint64_t *start)
{
	bool found = false;
	uint64_t pa[4];
	uint32_t k, i;

	memset(e, 0, sizeof(*e));
	for (k = 0; !found && !gre_region(orig, k, live); k++)
		found = live->valid && live->pages > 2;
	if (!found)
		return -ENOENT;
	if (gre_dup(e, orig))
		return -ENOMEM;
	*start = live->end - 2 * GRE_PAGE;
	for (i = 0; i < 4; i++)
		pa[i] = 0x1234000000ULL + i * GRE_PAGE;
	if (gre_append_region(e, *start, 4, live->flags, pa, 0xa5)) {
		gre_free(e);
		return -ENOMEM;
	}
	return 0;
}

int gre_stale_chain0(const struct gre *orig, struct gre *e, uint8_t fill, uint64_t *va)
{
	uint64_t pa = 0x1234000000ULL;
	char from[40], to[40];
	long at;

	memset(e, 0, sizeof(*e));
	*va = gre_free_va(orig);
	if ((*va >> 32) != 0xffff)
		return -EINVAL;
	if (gre_dup(e, orig))
		return -ENOMEM;
	if (gre_append_region(e, *va, 1, 0x606e, &pa, fill))
		goto fail;
	/* Chain 0's head: the first JS_HEAD_NEXT_LO write, of slot 1. */
	at = gre_edit_io(e, 0, ",W,0x000018c0,", ",W,0x000018c0,");
	if (at < 0 || (size_t)at + 8 > e->io.n)
		goto fail;
	memcpy(from, e->io.p + at, 8);
	from[8] = '\0';
	snprintf(to, sizeof(to), "%08llx", (unsigned long long)((*va + 0x40) & 0xffffffff));
	if (gre_edit_io(e, at, from, to) < 0 ||
	    gre_edit_io(e, at, ",W,0x000018c4,0000ffff", ",W,0x000018c4,0000ffff") < 0)
		goto fail;
	return 0;
fail:
	gre_free(e);
	return -EINVAL;
}

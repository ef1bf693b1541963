/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Edits of a GPUReplay recording in memory, for tests: copy the four
 * files, append a region, rewrite a page-table leaf, rewrite a line of
 * the register log.  Plain C99 and libc, so that the host tests
 * (gpureplay_test.c) and a VM selftest can both link it.  Never write an
 * edited copy of a real recording into git.
 */
#ifndef ACCMAP_GPUREPLAY_EDIT_H
#define ACCMAP_GPUREPLAY_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include "gpureplay.h"

/**
 * struct gre_file - one file's bytes, owned
 * @p: the bytes (malloc()ed)
 * @n: how many
 */
struct gre_file {
	uint8_t *p;
	size_t n;
};

/**
 * struct gre - an editable copy of a recording
 * @pgt:  gr_pgt
 * @mem:  gr_mem_contents
 * @io:   gr_io_history
 * @sync: gr_sync_as
 */
struct gre {
	struct gre_file pgt, mem, io, sync;
};

/**
 * struct gre_region - a region of gr_mem_contents, as read back
 * @start: first GPU VA
 * @end:   GPU VA after it
 * @pages: nr_pages
 * @flags: kbase region flags
 * @valid: is_valid
 * @off:   offset of its header
 */
struct gre_region {
	uint64_t start;
	uint64_t end;
	uint64_t pages;
	uint32_t flags;
	uint8_t valid;
	size_t off;
};

/* Copies @in into @e; 0 or -ENOMEM.  gre_free() frees it. */
int gre_copy(struct gre *e, const struct gpureplay_input *in);
void gre_free(struct gre *e);

/* Copies @src into @e; 0 or -ENOMEM. */
int gre_dup(struct gre *e, const struct gre *src);

/* The input gpureplay_import() takes, pointing into @e. */
struct gpureplay_input gre_input(const struct gre *e);

/*
 * Region @idx in file order into *@r; -ENOENT past the last, -EBADMSG if
 * the file is malformed on the way.
 */
int gre_region(const struct gre *e, uint32_t idx, struct gre_region *r);

/*
 * Page @i of region @r (which has contents): its VA, recorded PA and the
 * offset of its 4096 bytes in @e->mem.
 */
void gre_page(const struct gre *e, const struct gre_region *r, uint64_t i,
	      uint64_t *va, uint64_t *pa, size_t *data_off);

/*
 * Appends a region of @pages pages from @start (its end @start + @pages
 * pages).  With @pa, it has contents: page i at @start + i * 4096 with
 * recorded PA @pa[i] and every byte @fill; without, it is zero-filled
 * (is_valid 0).  0 or -ENOMEM.
 */
int gre_append_region(struct gre *e, uint64_t start, uint64_t pages,
		      uint32_t flags, const uint64_t *pa, uint8_t fill);

/*
 * The level 3 entry of gr_pgt for @va: its offset in @e->pgt in *@off.
 * -ENOENT if no table page down to level 3 is there.
 */
int gre_leaf(const struct gre *e, uint64_t va, size_t *off);

/* Reads / rewrites the level 3 entry for @va; -ENOENT as gre_leaf(). */
int gre_get_leaf(const struct gre *e, uint64_t va, uint64_t *entry);
int gre_set_leaf(struct gre *e, uint64_t va, uint64_t entry);

/*
 * Replaces the first occurrence of @from in gr_io_history at or after
 * byte @at by @to; returns the offset just past @to, or -1 if @from is
 * not there (or -ENOMEM as -2).
 */
long gre_edit_io(struct gre *e, size_t at, const char *from, const char *to);

/* The first page after every region of @e (no region holds it). */
uint64_t gre_free_va(const struct gre *e);

/*
 * The stale-overlap edit of MNIST: into @e, a copy of @orig with a region
 * of 4 pages appended last (recorded PAs no leaf has, every byte 0xa5)
 * over the last two pages of the first region with contents and more
 * than two pages (*@live), and two pages past it (no leaves); *@start is
 * its first VA.  The live pages must win.  0, -ENOENT if there is no such
 * region, -ENOMEM.
 */
int gre_stale_overlap(const struct gre *orig, struct gre *e, struct gre_region *live,
		      uint64_t *start);

/*
 * The stale-chain edit of MNIST: into @e, a copy of @orig with a one-page
 * region appended at gre_free_va() (*@va; every byte @fill, a PA no leaf
 * has) and chain 0's JS_HEAD_NEXT (slot 1) rewritten to *@va + 0x40.
 * 0, -EINVAL if @orig is not laid out as MNIST is, -ENOMEM.
 */
int gre_stale_chain0(const struct gre *orig, struct gre *e, uint8_t fill, uint64_t *va);

#endif /* ACCMAP_GPUREPLAY_EDIT_H */

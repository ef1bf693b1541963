// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test of the GPUReplay importer (tools/accmap/gpureplay.c),
 * run on the build host by tools/testing/fuzz/run.sh check.
 *
 *   gpureplay_test [--emit DIR] [CORPUS_DIR...]
 *
 * 1. A small valid recording made here imports, with the ops and maps
 *    expected; then hostile variants of it (truncated headers, huge
 *    counts, bad levels, loops, overlapping regions, malformed lines, ...)
 *    are each refused with a message naming the file and the offset or
 *    line at fault.
 * 2. Every file of each CORPUS_DIR (fuzz inputs, see gpureplay_fuzz.c) is
 *    imported: none may crash; files named valid-* must be accepted.
 * 3. If $ACCMAP_GPUREPLAY_DIR names GPUReplay's MNIST recording, it is
 *    imported and checked.
 *
 * --emit DIR writes the cases of step 1 into DIR as fuzz inputs (the seed
 * corpus kept in tools/testing/fuzz/corpus/gpureplay).
 *
 * Last line: "N passed, N failed".
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpureplay.h"
#include "gpureplay_fuzz.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static unsigned int passed, failed;

static void report(bool ok, const char *name, const char *why)
{
	if (ok) {
		passed++;
		printf("ok %u %s\n", passed + failed, name);
	} else {
		failed++;
		printf("not ok %u %s: %s\n", passed + failed, name, why);
	}
}

/* ---- building inputs ---------------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t n;
};

static void put(struct buf *b, const void *src, size_t n)
{
	b->p = realloc(b->p, b->n + n);
	if (!b->p) {
		perror("realloc");
		exit(1);
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < 8; i++)
		x[i] = v >> (8 * i);
	put(b, x, 8);
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t x[4];
	int i;

	for (i = 0; i < 4; i++)
		x[i] = v >> (8 * i);
	put(b, x, 4);
}

static void set64(struct buf *b, size_t off, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		b->p[off + i] = v >> (8 * i);
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/**
 * struct files - the four files of a test recording
 * @pgt: gr_pgt
 * @mem: gr_mem_contents
 * @io: gr_io_history
 * @sync: gr_sync_as
 */
struct files {
	struct buf pgt, mem, io, sync;
};

#define VA_A		0x100000ULL	/* valid region, 2 pages */
#define VA_B		0x200000ULL	/* invalid region, 4 pages */
#define PA_ROOT		0x1000ULL
#define REG_RW		0x600cU		/* GPU_RD | CPU_RD | GPU_WR | GPU_NX */
#define REG_RO		0x6008U		/* GPU_RD | CPU_RD | GPU_NX */

/* One table page: (pa | level) and 512 entries, @n of them set. */
static void pgt_page(struct buf *b, uint64_t pa, unsigned int level,
		     const unsigned int *idx, const uint64_t *e, unsigned int n)
{
	uint64_t entries[512] = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++)
		entries[idx[i]] = e[i];
	put64(b, pa | level);
	for (i = 0; i < 512; i++)
		put64(b, entries[i]);
}

static void region(struct buf *b, uint64_t start, uint64_t end, uint64_t pages,
		   uint32_t flags, uint8_t valid)
{
	put64(b, start);
	put64(b, end);
	put64(b, pages);
	put32(b, flags);
	put(b, &valid, 1);
}

static void page(struct buf *b, uint64_t va, uint8_t fill)
{
	uint8_t p[4096];

	memset(p, fill, sizeof(p));
	put64(b, va);
	put64(b, 0x80000000ULL + va);
	put(b, p, sizeof(p));
}

static const char *const valid_io =
	"0,R,0x00000000,60a00002\n"
	"521,W,0x00002430,00000006\n"
	"0,W,0x00002400,00001000\n"
	"0,W,0x00002404,00000000\n"
	"0,W,0x00002418,00000001\n"
	"0,R,0x00002428,00000001\n"
	"0,R,0x00002428,00000001\n"
	"0,R,0x00002428,00000000\n"
	"0,R,0x00000140,000000ff\n"
	"0,R,0x00000038,00000005\n"
	"0,W,0x000018c0,00100000\n"
	"0,W,0x000018c4,00000000\n"
	"0,W,0x000018f0,00000003\n"
	"0,W,0x000018e0,00000001\n"
	"7,R,0x0000100c,00000002\n"
	"0,R,0x00002400,00001000\n"
	"0,W,0x00001004,00000002\n";

static void make_valid(struct files *f)
{
	/* L0 -> L1 -> L2 -> L3 at 0x4000: VA_A's two pages, read-write, NX. */
	static const unsigned int i0[] = { 0 }, i3[] = { 256, 257 };
	const uint64_t leaf = (1ULL << 54) | (1ULL << 10) | (1ULL << 6) | 3;
	const uint64_t e0[] = { 0x2000 | 3 }, e1[] = { 0x3000 | 3 },
		       e2[] = { 0x4000 | 3 },
		       e3[] = { 0x90000000ULL | leaf, 0x90001000ULL | leaf };

	memset(f, 0, sizeof(*f));
	put64(&f->pgt, 0);
	put64(&f->pgt, PA_ROOT);
	put64(&f->pgt, 0x4c8d888d8f88ULL);
	put64(&f->pgt, 6);
	pgt_page(&f->pgt, PA_ROOT, 0, i0, e0, 1);
	pgt_page(&f->pgt, 0x2000, 1, i0, e1, 1);
	pgt_page(&f->pgt, 0x3000, 2, i0, e2, 1);
	pgt_page(&f->pgt, 0x4000, 3, i3, e3, 2);
	put64(&f->pgt, 0xffffffffffULL);
	set64(&f->pgt, 0, f->pgt.n);

	region(&f->mem, VA_A, VA_A + 0x2000, 2, REG_RW, 1);
	page(&f->mem, VA_A, 0x11);
	page(&f->mem, VA_A + 0x1000, 0x22);
	region(&f->mem, VA_B, VA_B + 0x8000, 4, REG_RO, 0);

	puts_(&f->io, valid_io);

	put32(&f->sync, 2);
	put64(&f->sync, VA_B);
	put64(&f->sync, VA_B + 0x100);
	put64(&f->sync, 0x100);
	put64(&f->sync, VA_A + 0x40);
	put64(&f->sync, VA_A + 0x80);
	put64(&f->sync, 0x40);
}

static void free_files(struct files *f)
{
	free(f->pgt.p);
	free(f->mem.p);
	free(f->io.p);
	free(f->sync.p);
}

static struct gpureplay_input input_of(const struct files *f)
{
	struct gpureplay_input in = {
		.pgt = f->pgt.p, .pgt_len = f->pgt.n,
		.mem = f->mem.p, .mem_len = f->mem.n,
		.io = f->io.p, .io_len = f->io.n,
		.sync = f->sync.p, .sync_len = f->sync.n,
	};

	return in;
}

/* The four files as one fuzz input. */
static struct buf fuzz_input(const struct files *f)
{
	struct buf b = { 0 };

	put32(&b, f->pgt.n);
	put32(&b, f->mem.n);
	put32(&b, f->io.n);
	put(&b, f->pgt.p, f->pgt.n);
	put(&b, f->mem.p, f->mem.n);
	put(&b, f->io.p, f->io.n);
	put(&b, f->sync.p, f->sync.n);
	return b;
}

/* ---- the cases ---------------------------------------------------------- */

static void replace_io(struct files *f, const char *io)
{
	f->io.n = 0;
	puts_(&f->io, io);
}

/* Replaces the first occurrence of @from in gr_io_history by @to. */
static void edit_io(struct files *f, const char *from, const char *to)
{
	char *s = calloc(1, f->io.n + 1), *at;
	struct buf b = { 0 };

	memcpy(s, f->io.p, f->io.n);
	at = strstr(s, from);
	if (!at) {
		fprintf(stderr, "%s: no '%s'\n", __func__, from);
		exit(1);
	}
	put(&b, s, at - s);
	puts_(&b, to);
	puts_(&b, at + strlen(from));
	free(s);
	free(f->io.p);
	f->io = b;
}

static void c_pgt_short(struct files *f) { f->pgt.n = 10; }
static void c_pgt_size(struct files *f) { set64(&f->pgt, 0, 12345); }
static void c_pgt_level(struct files *f) { set64(&f->pgt, 32, PA_ROOT | 5); }
static void c_pgt_transcfg(struct files *f) { set64(&f->pgt, 24, 2); }
static void c_pgt_no_end(struct files *f)
{
	f->pgt.n -= 8;
	set64(&f->pgt, 0, f->pgt.n);
}

static void c_pgt_trailing(struct files *f)
{
	put64(&f->pgt, 0);
	set64(&f->pgt, 0, f->pgt.n);
}

static void c_pgt_cut_page(struct files *f)
{
	f->pgt.n = 32 + 4104 + 100;
	set64(&f->pgt, 0, f->pgt.n);
}

/* The L1 page claims level 2: the L0 entry's child has the wrong level. */
static void c_pgt_bad_child(struct files *f) { set64(&f->pgt, 32 + 4104, 0x2000 | 2); }
/* The L2 entry points back to the L1 page: a loop. */
static void c_pgt_loop(struct files *f) { set64(&f->pgt, 32 + 2 * 4104 + 8, 0x2000 | 3); }
/* Two L1 entries reach the same L2 page. */
static void c_pgt_twice(struct files *f) { set64(&f->pgt, 32 + 4104 + 16, 0x3000 | 3); }
static void c_pgt_dup(struct files *f) { set64(&f->pgt, 32 + 4104, PA_ROOT | 1); }
static void c_pgt_no_root(struct files *f) { set64(&f->pgt, 8, 0x7000); }

static void c_mem_short_hdr(struct files *f) { f->mem.n = 20; }
static void c_mem_short_page(struct files *f) { f->mem.n = 29 + 4112 + 100; }
static void c_mem_huge_pages(struct files *f) { set64(&f->mem, 16, 1ULL << 60); }
static void c_mem_valid_flag(struct files *f) { f->mem.p[28] = 7; }
static void c_mem_unaligned(struct files *f) { set64(&f->mem, 0, VA_A + 12); }
static void c_mem_page_outside(struct files *f) { set64(&f->mem, 29, VA_B); }
static void c_mem_page_order(struct files *f) { set64(&f->mem, 29 + 4112, VA_A); }
static void c_mem_empty(struct files *f)
{
	f->mem.n = 0;
}

static void c_mem_overlap(struct files *f)
{
	region(&f->mem, VA_A + 0x1000, VA_A + 0x3000, 1, REG_RW, 0);
}

static void c_mem_too_big(struct files *f)
{
	region(&f->mem, 1ULL << 40, 1ULL << 47, 1ULL << 34, REG_RW, 0);
}

static void c_mem_many(struct files *f)
{
	uint64_t i;

	for (i = 0; i < GPUREPLAY_REGIONS_MAX; i++)
		region(&f->mem, (1ULL << 32) + i * 0x1000, (1ULL << 32) + (i + 1) * 0x1000,
		       0, REG_RW, 0);
}

static void c_io_fields(struct files *f) { edit_io(f, "0,W,0x00002404,00000000", "abc"); }
static void c_io_access(struct files *f) { edit_io(f, "0,W,0x00002418", "0,X,0x00002418"); }
static void c_io_window(struct files *f) { edit_io(f, "0x00002418", "0x00004000"); }
static void c_io_align(struct files *f) { edit_io(f, "0x00002418", "0x00002419"); }
static void c_io_hex(struct files *f) { edit_io(f, "00000001\n0,R", "0000000g\n0,R"); }
static void c_io_value_long(struct files *f) { edit_io(f, "60a00002", "160a00002"); }
static void c_io_delay(struct files *f) { edit_io(f, "521,W", "99999999999999999999999,W"); }
static void c_io_transcfg(struct files *f)
{
	edit_io(f, "0x00002430,00000006", "0x00002430,00000002");
}

static void c_io_two_as(struct files *f) { edit_io(f, "0,W,0x00002404", "0,W,0x00002444"); }
static void c_io_empty(struct files *f)
{
	f->io.n = 0;
}

static void c_io_blank(struct files *f) { edit_io(f, "0,W,0x00002418,00000001\n", "\n"); }
static void c_io_nul(struct files *f) { f->io.p[18] = '\0'; }
static void c_io_extra(struct files *f) { edit_io(f, "60a00002", "60a00002,1"); }

static void c_io_long(struct files *f)
{
	char line[300];

	memset(line, '0', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	edit_io(f, "0,R,0x00000038", line);
}

static void c_io_no_root(struct files *f)
{
	replace_io(f, "0,R,0x00000000,60a00002\n0,W,0x00001004,00000002\n");
}

static void c_sync_short(struct files *f) { f->sync.n = 2; }
static void c_sync_huge(struct files *f) { f->sync.p[3] = 0xff; }
static void c_sync_one(struct files *f) { f->sync.p[0] = 1; }
static void c_sync_count(struct files *f) { f->sync.p[0] = 3; }
static void c_sync_trailing(struct files *f) { put32(&f->sync, 0); }
static void c_sync_size(struct files *f) { set64(&f->sync, 4 + 16, 0x200); }
static void c_sync_outside(struct files *f)
{
	set64(&f->sync, 4 + 24, 0x900000);
	set64(&f->sync, 4 + 24 + 8, 0x900040);
}

static void c_sync_straddle(struct files *f)
{
	set64(&f->sync, 4 + 24, VA_A + 0x1fc0);
	set64(&f->sync, 4 + 24 + 8, VA_A + 0x2040);
	set64(&f->sync, 4 + 24 + 16, 0x80);
}

/**
 * struct bad_case - a hostile variant of the valid recording
 * @name: its name (and its corpus file's)
 * @mutate: makes it from the valid files
 * @expect: what the message must contain: the file and the place
 */
struct bad_case {
	const char *name;
	void (*mutate)(struct files *f);
	const char *expect;
};

static const struct bad_case bad_cases[] = {
	{ "pgt-short-header", c_pgt_short, "gr_pgt: offset 0xa: truncated" },
	{ "pgt-size-field", c_pgt_size, "gr_pgt: offset 0x0: size field 12345" },
	{ "pgt-bad-level", c_pgt_level, "gr_pgt: offset 0x20: table page 0x1000: bad level 5" },
	{ "pgt-transcfg", c_pgt_transcfg, "gr_pgt: offset 0x18: TRANSCFG 0x2" },
	{ "pgt-no-end", c_pgt_no_end, "gr_pgt: offset 0x4040: truncated: no end marker" },
	{ "pgt-trailing", c_pgt_trailing, "gr_pgt: offset 0x4048: 8 bytes after the end marker" },
	{ "pgt-cut-page", c_pgt_cut_page, "gr_pgt: offset 0x1028: truncated table page" },
	{ "pgt-child-level", c_pgt_bad_child,
	  "gr_pgt: offset 0x1028: table page 0x2000 has level 2" },
	{ "pgt-loop", c_pgt_loop, "gr_pgt: offset 0x1028: table page 0x2000 has level 1" },
	{ "pgt-twice", c_pgt_twice, "gr_pgt: offset 0x2030: table page 0x3000 is reached twice" },
	{ "pgt-duplicate", c_pgt_dup, "gr_pgt: offset 0x1028: table page 0x1000 appears twice" },
	{ "pgt-no-root", c_pgt_no_root,
	  "gr_pgt: offset 0x8: no level 0 table page at TRANSTAB 0x7000" },
	{ "mem-short-header", c_mem_short_hdr,
	  "gr_mem_contents: offset 0x0: truncated region header" },
	{ "mem-short-pages", c_mem_short_page,
	  "gr_mem_contents: offset 0x1d: truncated: region 0 has 2 pages" },
	{ "mem-huge-pages", c_mem_huge_pages,
	  "gr_mem_contents: offset 0x10: region 0: 1152921504606846976 pages" },
	{ "mem-is-valid", c_mem_valid_flag,
	  "gr_mem_contents: offset 0x1c: region 0: is_valid is 7" },
	{ "mem-unaligned", c_mem_unaligned, "gr_mem_contents: offset 0x0: region 0: bad range" },
	{ "mem-page-outside", c_mem_page_outside,
	  "gr_mem_contents: offset 0x1d: page 0x200000 is not a page" },
	{ "mem-page-order", c_mem_page_order,
	  "gr_mem_contents: offset 0x102d: page 0x100000 after page 0x100000" },
	{ "mem-empty", c_mem_empty, "gr_mem_contents: offset 0x0: no regions" },
	{ "mem-overlap", c_mem_overlap,
	  "gr_mem_contents: offset 0x205a: regions 0x100000-0x102000 and 0x101000-0x103000" },
	{ "mem-too-big", c_mem_too_big,
	  "gr_mem_contents: offset 0x206a: region 2: more than 17179869184 bytes" },
	{ "mem-many-regions", c_mem_many, "more than 4096 regions" },
	{ "io-fields", c_io_fields, "gr_io_history: line 4: expected 4 fields" },
	{ "io-access", c_io_access, "gr_io_history: line 5: access is not R or W" },
	{ "io-window", c_io_window,
	  "gr_io_history: line 5: register offset 0x4000 is not 4-byte aligned inside" },
	{ "io-align", c_io_align, "gr_io_history: line 5: register offset 0x2419" },
	{ "io-hex", c_io_hex, "gr_io_history: line 5: bad value" },
	{ "io-value-long", c_io_value_long, "gr_io_history: line 1: bad value" },
	{ "io-delay", c_io_delay, "gr_io_history: line 2: bad delay" },
	{ "io-transcfg", c_io_transcfg,
	  "gr_io_history: line 2: TRANSCFG 0x00000002: address mode 2" },
	{ "io-two-as", c_io_two_as,
	  "gr_io_history: line 4: TRANSTAB of address space 1 after that of 0" },
	{ "io-empty", c_io_empty, "gr_io_history: offset 0x0: empty" },
	{ "io-blank-line", c_io_blank, "gr_io_history: line 5: expected 4 fields" },
	{ "io-nul", c_io_nul, "gr_io_history: line 1: bad value" },
	{ "io-extra-field", c_io_extra, "gr_io_history: line 1: expected 4 fields" },
	{ "io-long-line", c_io_long, "gr_io_history: line 10: longer than 128 bytes" },
	{ "io-no-transtab", c_io_no_root, "no write of an address space's TRANSTAB" },
	{ "sync-short", c_sync_short, "gr_sync_as: offset 0x2: truncated" },
	{ "sync-huge-count", c_sync_huge, "gr_sync_as: offset 0x0: 4278190082 ranges" },
	{ "sync-one-range", c_sync_one, "gr_sync_as: offset 0x0: 1 ranges" },
	{ "sync-count", c_sync_count, "gr_sync_as: offset 0x34: truncated: 48 bytes for 3 ranges" },
	{ "sync-trailing", c_sync_trailing, "gr_sync_as: offset 0x34: trailing bytes" },
	{ "sync-size", c_sync_size,
	  "gr_sync_as: offset 0x4: range 0 (input): 0x200000-0x200100 does not have size 0x200" },
	{ "sync-outside", c_sync_outside,
	  "gr_sync_as: offset 0x1c: range 1 (output): 0x900000-0x900040 is not inside" },
	{ "sync-straddle", c_sync_straddle, "gr_sync_as: offset 0x1c: range 1 (output)" },
};

static int write_file(const char *dir, const char *name, const struct buf *b)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp || fwrite(b->p, 1, b->n, fp) != b->n || fclose(fp)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* The valid recording imports as designed. */
static void check_valid(const char *emit)
{
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	struct gpureplay_input in;
	struct files f;
	struct buf b;
	char why[512];
	int ret;

	make_valid(&f);
	in = input_of(&f);
	ret = gpureplay_import(&in, &rec, &st, &err);
	if (ret) {
		report(false, "valid", err.msg);
		free_files(&f);
		return;
	}
	/*
	 * 17 lines: TRANSTAB lo/hi become WRITE_ROOT, the busy AS STATUS
	 * reads one POLL (the idle read folds into it), READY a POLL, the
	 * JOB_IRQ_STATUS read a WAIT_IRQ, the TRANSTAB read goes: 14 ops.
	 * Op 10 writes FLUSH_ID_NEXT with the LATEST_FLUSH value read, 5.
	 */
	snprintf(why, sizeof(why),
		 "%u ops (%u POLL, %u WAIT_IRQ, %u WRITE_ROOT, %u folded, %u dropped), %u maps, %llu leaves (%llu stale, %llu unmapped), AS %u, gpu_id %#x, flush %#x",
		 rec->nr_ops, st.polls, st.wait_irqs, st.write_roots, st.collapsed, st.dropped,
		 rec->nr_maps, (unsigned long long)st.pgt_leaves,
		 (unsigned long long)st.leaves_stale, (unsigned long long)st.leaves_unmapped,
		 rec->as, rec->gpu_id, rec->ops[10].value);
	report(rec->nr_ops == 14 && st.polls == 2 && st.wait_irqs == 1 && st.write_roots == 2 &&
	       st.collapsed == 2 && st.dropped == 1 && rec->nr_maps == 2 && st.pgt_leaves == 2 &&
	       !st.leaves_stale && !st.leaves_unmapped && rec->as == 0 &&
	       rec->gpu_id == 0x60a00002 && rec->ops[10].value == 5 &&
	       rec->ops[12].op == ACCMAP_REPLAY_OP_WAIT_IRQ && rec->ops[12].mask == 2 &&
	       rec->maps[0].flags == 3 && rec->maps[1].flags == 1 && !rec->maps[1].data &&
	       rec->maps[0].data && ((uint8_t *)rec->maps[0].data)[4096] == 0x22 &&
	       accmap_rec_find_symbol(rec, "input") && accmap_rec_find_symbol(rec, "output"),
	       "valid", why);
	accmap_rec_free(rec);
	if (emit) {
		b = fuzz_input(&f);
		write_file(emit, "valid-small", &b);
		free(b.p);
	}
	free_files(&f);
}

static void check_bad(const struct bad_case *c, const char *emit)
{
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	struct gpureplay_input in;
	struct files f;
	char why[600];
	struct buf b;
	int ret;

	make_valid(&f);
	c->mutate(&f);
	in = input_of(&f);
	ret = gpureplay_import(&in, &rec, NULL, &err);
	snprintf(why, sizeof(why), "returned %d, message \"%s\", expected \"%s\"", ret,
		 ret ? err.msg : "", c->expect);
	report(ret == -EBADMSG && strstr(err.msg, c->expect), c->name, why);
	accmap_rec_free(rec);
	if (emit) {
		b = fuzz_input(&f);
		write_file(emit, c->name, &b);
		free(b.p);
	}
	free_files(&f);
}

static void check_corpus(const char *dir)
{
	struct accmap_rec_error err;
	unsigned int files = 0, accepted = 0, bad = 0;
	char path[4096], why[256];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		report(false, dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		struct buf b = { 0 };
		uint8_t chunk[65536];
		size_t n;
		FILE *fp;
		int ret;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fp = fopen(path, "rb");
		if (!fp)
			continue;
		while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
			put(&b, chunk, n);
		fclose(fp);
		files++;
		/* Must not crash; aborts if an accepted input does not read back. */
		ret = gpureplay_fuzz_one(b.p ? b.p : chunk, b.n, &err);
		if (!ret) {
			accepted++;
		} else if (!strncmp(de->d_name, "valid-", 6)) {
			bad++;
			printf("# %s: %s\n", de->d_name, err.msg);
		}
		free(b.p);
	}
	closedir(d);
	snprintf(why, sizeof(why), "%u files, %u accepted, %u valid-* refused", files,
		 accepted, bad);
	printf("# corpus %s: %s\n", dir, why);
	report(files > 0 && !bad, "corpus", why);
}

/* GPUReplay's MNIST recording, if there is one. */
static void check_mnist(const char *dir)
{
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	struct gpureplay_input in;
	char why[512];
	int ret;

	ret = gpureplay_load(dir, &in, &err);
	if (ret) {
		report(false, "mnist", err.msg);
		return;
	}
	ret = gpureplay_import(&in, &rec, &st, &err);
	gpureplay_unload(&in);
	if (ret) {
		report(false, "mnist", err.msg);
		return;
	}
	snprintf(why, sizeof(why),
		 "%u regions, %llu pages, %u lines, %u jobs, %u WAIT_IRQ, %u ops, %llu leaves unmapped",
		 st.regions, (unsigned long long)st.pages, st.lines, st.jobs, st.wait_irqs,
		 st.ops, (unsigned long long)st.leaves_unmapped);
	printf("# mnist: %s\n", why);
	report(st.regions == 26 && st.pages == 539 && st.lines == 2977 && st.jobs == 23 &&
	       st.wait_irqs == 23 && !st.leaves_unmapped && rec->nr_symbols == 2, "mnist", why);
	accmap_rec_free(rec);
}

int main(int argc, char **argv)
{
	const char *emit = NULL, *mnist = getenv("ACCMAP_GPUREPLAY_DIR");
	size_t i;
	int a = 1;

	if (argc > 2 && !strcmp(argv[1], "--emit")) {
		emit = argv[2];
		a = 3;
	}
	check_valid(emit);
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++)
		check_bad(&bad_cases[i], emit);
	for (; a < argc; a++)
		check_corpus(argv[a]);
	if (mnist && *mnist)
		check_mnist(mnist);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

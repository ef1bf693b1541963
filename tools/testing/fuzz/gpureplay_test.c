// SPDX-License-Identifier: GPL-2.0
/*
 * Regression test of the GPUReplay importer (tools/accmap/gpureplay.c),
 * run on the build host by tools/testing/fuzz/run.sh check.
 *
 *   gpureplay_test [--emit DIR] [--write-mnist-b DIR] [CORPUS_DIR...]
 *
 * 1. A small valid recording made here imports, with the ops and maps
 *    expected; then hostile variants of it (truncated headers, huge
 *    counts, bad levels, loops, overlapping regions, malformed lines, ...)
 *    are each refused with a message naming the file and the offset or
 *    line at fault.
 * 2. Every file of each CORPUS_DIR (fuzz inputs, see gpureplay_fuzz.c) is
 *    imported: none may crash; files named valid-* must be accepted.
 *    Then accepted variants (overlaps the table resolves, stale regions,
 *    bad chains, teardown and hi-first roots, a failed job, two flush
 *    reads) import with what they should give.
 * 3. If $ACCMAP_GPUREPLAY_DIR names GPUReplay's MNIST recording, it is
 *    imported and checked, as it is and edited in memory with
 *    gpureplay_edit.h (never written into git).
 *
 * --emit DIR writes the cases of step 1 into DIR as fuzz inputs (the seed
 * corpus kept in tools/testing/fuzz/corpus/gpureplay).  --write-mnist-b
 * DIR writes the four files of MNIST with chain 0's head moved into a
 * stale region into DIR, for trying accmapctl import-gpureplay on it.
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
#include "gpureplay_edit.h"
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

/* The recorded physical address of page @va, which the leaves match. */
#define PA_OF(va)	(0x80000000ULL + (va))

static void page(struct buf *b, uint64_t va, uint8_t fill)
{
	uint8_t p[4096];

	memset(p, fill, sizeof(p));
	put64(b, va);
	put64(b, PA_OF(va));
	put(b, p, sizeof(p));
}

/* Offset in gr_mem_contents of the bytes of VA_A's page @i. */
#define A_DATA(i)	(29 + 16 + (i) * 4112)
/* Offset in gr_pgt of the level 3 entry of VA_A's page @i. */
#define A_LEAF(i)	(32 + 3 * 4104 + 8 + (256 + (i)) * 8)

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
		       e3[] = { (PA_OF(VA_A)) | leaf, PA_OF(VA_A + 0x1000) | leaf };

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
	/* The job chain at VA_A: one NULL job (type 1), 64-bit next 0. */
	f->mem.p[A_DATA(0) + 16] = 1 << 1 | 1;
	set64(&f->mem, A_DATA(0) + 24, 0);

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

/*
 * A region with contents over VA_A's second page, whose leaf maps it to
 * neither region's recorded page: the table cannot explain the overlap.
 */
static void c_mem_overlap(struct files *f)
{
	region(&f->mem, VA_A + 0x1000, VA_A + 0x2000, 1, REG_RW, 1);
	page(&f->mem, VA_A + 0x1000, 0x44);
	set64(&f->mem, f->mem.n - 4096 - 8, 0x70000000);
	set64(&f->pgt, A_LEAF(1), (f->pgt.p[A_LEAF(1)] & 0xfff) | 0x90001000ULL |
	      (1ULL << 54));
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
	  "gr_mem_contents: offset 0x205a: regions 0x100000-0x102000 (offset 0x0) and 0x101000" },
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
	 * Op 7 is the LATEST_FLUSH read, a CAPTURE READ; op 10 writes
	 * FLUSH_ID_NEXT with what it captures (CAPTURED, value 0).  The one
	 * chain (head VA_A) is a NULL job: replayable.  Region B has no leaf
	 * in gr_pgt: stale, and the input range lies in it.
	 */
	snprintf(why, sizeof(why),
		 "%u ops (%u POLL, %u WAIT_IRQ, %u WRITE_ROOT, %u folded, %u dropped), %u maps, %llu leaves (%llu stale, %llu unmapped), AS %u, gpu_id %#x, ops 7/10 flags %#x/%#x value %#x, %u chains %u bad, %u stale regions, %u maps without leaf",
		 rec->nr_ops, st.polls, st.wait_irqs, st.write_roots, st.collapsed, st.dropped,
		 rec->nr_maps, (unsigned long long)st.pgt_leaves,
		 (unsigned long long)st.leaves_stale, (unsigned long long)st.leaves_unmapped,
		 rec->as, rec->gpu_id, rec->ops[7].flags, rec->ops[10].flags, rec->ops[10].value,
		 st.chains, st.chains_bad, st.stale_regions, st.maps_no_leaf);
	report(rec->nr_ops == 14 && st.polls == 2 && st.wait_irqs == 1 && st.write_roots == 2 &&
	       st.collapsed == 2 && st.dropped == 1 && rec->nr_maps == 2 && st.pgt_leaves == 2 &&
	       !st.leaves_stale && !st.leaves_unmapped && rec->as == 0 &&
	       rec->gpu_id == 0x60a00002 && rec->ops[10].value == 0 &&
	       rec->ops[7].op == ACCMAP_REPLAY_OP_READ && rec->ops[7].offset == 0x38 &&
	       rec->ops[7].flags == ACCMAP_REPLAY_OP_CAPTURE &&
	       rec->ops[10].op == ACCMAP_REPLAY_OP_WRITE &&
	       rec->ops[10].flags == ACCMAP_REPLAY_OP_CAPTURED && st.captures == 1 &&
	       st.captured == 1 && st.chains == 1 && !st.chains_bad && st.stale_regions == 1 &&
	       st.maps_no_leaf == 1 && !st.overlap_pages && !st.roots_dropped &&
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

/* ---- accepted variants: overlaps, stale regions, chains, roots ---------- */

/* A second region over VA_A's second page and one more, with other PAs. */
static void g_overlap_live(struct files *f)
{
	region(&f->mem, VA_A + 0x1000, VA_A + 0x3000, 2, REG_RW, 1);
	page(&f->mem, VA_A + 0x1000, 0x33);
	set64(&f->mem, f->mem.n - 4096 - 8, 0x70000000);
	page(&f->mem, VA_A + 0x2000, 0x33);
	set64(&f->mem, f->mem.n - 4096 - 8, 0x70001000);
}

/* VA_A's second leaf maps elsewhere; a zero-filled region over it. */
static void g_overlap_zero(struct files *f)
{
	set64(&f->pgt, A_LEAF(1), 0x90001000ULL | (1ULL << 54) | (1ULL << 10) |
	      (1ULL << 6) | 3);
	region(&f->mem, VA_A + 0x1000, VA_A + 0x2000, 1, REG_RW, 0);
}

/* A region with contents over stale zero-filled B: no leaves there. */
static void g_overlap_unmapped(struct files *f)
{
	region(&f->mem, VA_B + 0x1000, VA_B + 0x2000, 1, REG_RW, 1);
	page(&f->mem, VA_B + 0x1000, 0x55);
}

/* The chain's head in a stale region with contents at 0x300000. */
static void g_chain_stale(struct files *f)
{
	region(&f->mem, 0x300000, 0x301000, 1, REG_RW, 1);
	page(&f->mem, 0x300000, 0x03);
	edit_io(f, "0,W,0x000018c0,00100000", "0,W,0x000018c0,00300040");
}

static void g_chain_loop(struct files *f) { set64(&f->mem, A_DATA(0) + 24, VA_A); }
static void g_chain_type(struct files *f) { f->mem.p[A_DATA(0) + 16] = 0x7e; }
static void g_chain_unaligned(struct files *f)
{
	edit_io(f, "0,W,0x000018c0,00100000", "0,W,0x000018c0,00100020");
}

static void g_chain_unmapped(struct files *f)
{
	edit_io(f, "0,W,0x000018c0,00100000", "0,W,0x000018c0,00900000");
}

/* Two descriptors, the second in the zero-filled region of g_overlap_zero. */
static void g_chain_zero(struct files *f)
{
	g_overlap_zero(f);
	set64(&f->mem, A_DATA(0) + 24, VA_A + 0x1000);
}

static void g_teardown(struct files *f)
{
	edit_io(f, "0,W,0x00001004,00000002\n",
		"0,W,0x00001004,00000002\n0,W,0x00002400,00000000\n0,W,0x00002404,00000000\n"
		"0,W,0x00002430,00000001\n");
}

static void g_hi_first(struct files *f)
{
	edit_io(f, "0,W,0x00002400,00001000\n0,W,0x00002404,00000000\n",
		"0,W,0x00002404,00000000\n0,W,0x00002400,00001000\n");
}

static void g_hi_first_teardown(struct files *f)
{
	g_hi_first(f);
	edit_io(f, "0,W,0x00001004,00000002\n",
		"0,W,0x00001004,00000002\n0,W,0x00002404,00000000\n0,W,0x00002400,00000000\n");
}

static void g_failed_job(struct files *f)
{
	edit_io(f, "7,R,0x0000100c,00000002", "7,R,0x0000100c,00020000");
}

static void g_flush_twice(struct files *f)
{
	edit_io(f, "0,R,0x00000038,00000005\n",
		"0,R,0x00000038,00000005\n0,R,0x00000038,00000005\n");
}

/* The op of @rec that is the @n-th (from 0) of kind @op, or NULL. */
static const struct accmap_replay_op *nth_op(const struct accmap_recording *rec, uint32_t op,
					     uint32_t n)
{
	uint32_t i;

	for (i = 0; i < rec->nr_ops; i++)
		if (rec->ops[i].op == op && !n--)
			return &rec->ops[i];
	return NULL;
}

/* The recording's byte at @va, or -1 if unmapped; 0 in a zero-filled map. */
static int byte_at(const struct accmap_recording *rec, uint64_t va)
{
	int i = accmap_rec_find_map(rec, va, 1);
	const uint8_t *d;

	if (i < 0)
		return -1;
	d = rec->maps[i].data;
	return d ? d[va - rec->maps[i].gpu_va] : 0;
}

static bool bad_is(const struct gpureplay_report *rep, uint32_t why, uint64_t va)
{
	return rep->nr_bad_chains == 1 && rep->bad_chains[0].why == why &&
	       rep->bad_chains[0].va == va && rep->bad_chains[0].chain == 0 &&
	       rep->bad_chains[0].slot == 1 && rep->bad_chains[0].head == 0x100000;
}

static bool k_overlap_live(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			   const struct gpureplay_report *rep)
{
	/* VA_A keeps its live page 0x101000; the stale region keeps 0x102000. */
	return st->overlap_pages == 1 && !st->overlap_unmapped && st->stale_regions == 2 &&
	       rep->nr_stale == 2 && rep->stale[1].start == VA_A + 0x1000 &&
	       rep->stale[1].kept == 1 && rep->stale[1].off == 0x205a &&
	       byte_at(rec, VA_A + 0x1000) == 0x22 && byte_at(rec, VA_A + 0x2000) == 0x33 &&
	       rec->nr_maps == 3 && !st->chains_bad;
}

static bool k_overlap_zero(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			   const struct gpureplay_report *rep)
{
	return st->overlap_pages == 1 && st->stale_regions == 1 && rep->nr_stale == 1 &&
	       byte_at(rec, VA_A) == 0x11 && byte_at(rec, VA_A + 0x1000) == 0 &&
	       rec->nr_maps == 3 && !st->chains_bad;
}

static bool k_overlap_unmapped(const struct accmap_recording *rec,
			       const struct gpureplay_stats *st,
			       const struct gpureplay_report *rep)
{
	/* No leaf: the latest region keeps the page; both are stale. */
	return st->overlap_pages == 1 && st->overlap_unmapped == 1 && st->stale_regions == 2 &&
	       rep->nr_stale == 2 && rep->stale[0].symbols == ACCMAP_REC_SYM_INPUT &&
	       rep->stale[0].kept == 3 && byte_at(rec, VA_B + 0x1000) == 0x55 &&
	       byte_at(rec, VA_B) == 0 && rec->nr_maps == 4;
}

static bool k_chain_stale(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			  const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains == 1 && st->chains_bad == 1 && rep->nr_bad_chains == 1 &&
	       rep->bad_chains[0].why == GPUREPLAY_CHAIN_STALE &&
	       rep->bad_chains[0].head == 0x300040 && rep->bad_chains[0].va == 0x300040 &&
	       rep->bad_chains[0].start == 0x300000 && rep->bad_chains[0].end == 0x301000;
}

static bool k_chain_loop(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			 const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains_bad == 1 && bad_is(rep, GPUREPLAY_CHAIN_LOOP, VA_A);
}

static bool k_chain_type(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			 const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains_bad == 1 && bad_is(rep, GPUREPLAY_CHAIN_TYPE, VA_A) &&
	       rep->bad_chains[0].type == 0x3f;
}

static bool k_chain_unaligned(const struct accmap_recording *rec,
			      const struct gpureplay_stats *st,
			      const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains_bad == 1 && rep->nr_bad_chains == 1 &&
	       rep->bad_chains[0].why == GPUREPLAY_CHAIN_UNALIGNED &&
	       rep->bad_chains[0].va == 0x100020;
}

static bool k_chain_unmapped(const struct accmap_recording *rec,
			     const struct gpureplay_stats *st,
			     const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains_bad == 1 && rep->nr_bad_chains == 1 &&
	       rep->bad_chains[0].why == GPUREPLAY_CHAIN_UNMAPPED &&
	       rep->bad_chains[0].va == 0x900000;
}

static bool k_chain_zero(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			 const struct gpureplay_report *rep)
{
	(void)rec;
	return st->chains_bad == 1 && bad_is(rep, GPUREPLAY_CHAIN_ZERO_FILLED, VA_A + 0x1000) &&
	       rep->bad_chains[0].start == VA_A + 0x1000 &&
	       rep->bad_chains[0].end == VA_A + 0x2000;
}

static bool k_teardown(const struct accmap_recording *rec, const struct gpureplay_stats *st,
		       const struct gpureplay_report *rep)
{
	(void)rep;
	return st->write_roots == 2 && st->roots_dropped == 2 &&
	       !nth_op(rec, ACCMAP_REPLAY_OP_WRITE_ROOT, 2) &&
	       rec->ops[rec->nr_ops - 1].op == ACCMAP_REPLAY_OP_WRITE &&
	       rec->ops[rec->nr_ops - 1].offset == 0x2430;
}

static bool k_hi_first(const struct accmap_recording *rec, const struct gpureplay_stats *st,
		       const struct gpureplay_report *rep)
{
	const struct accmap_replay_op *a = nth_op(rec, ACCMAP_REPLAY_OP_WRITE_ROOT, 0),
				      *b = nth_op(rec, ACCMAP_REPLAY_OP_WRITE_ROOT, 1);

	(void)rep;
	return st->write_roots == 2 && !st->roots_dropped && a && b &&
	       a->flags == ACCMAP_REPLAY_OP_HI && !b->flags;
}

static bool k_hi_first_teardown(const struct accmap_recording *rec,
				const struct gpureplay_stats *st,
				const struct gpureplay_report *rep)
{
	(void)rep;
	return st->write_roots == 2 && st->roots_dropped == 2 &&
	       !nth_op(rec, ACCMAP_REPLAY_OP_WRITE_ROOT, 2);
}

static bool k_failed_job(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			 const struct gpureplay_report *rep)
{
	const struct accmap_replay_op *w = nth_op(rec, ACCMAP_REPLAY_OP_WAIT_IRQ, 0);

	(void)rep;
	return st->failed_waits == 1 && st->wait_irqs == 1 && w && w->mask == 0x20000;
}

static bool k_flush_twice(const struct accmap_recording *rec, const struct gpureplay_stats *st,
			  const struct gpureplay_report *rep)
{
	(void)rep;
	return st->captures == 2 && st->captured == 1 && rec->nr_ops == 15 &&
	       rec->ops[8].flags == ACCMAP_REPLAY_OP_CAPTURE;
}

/**
 * struct good_case - an accepted variant of the valid recording
 * @name: its name (its corpus file is valid-@name)
 * @mutate: makes it from the valid files
 * @check: whether the import made what it should
 */
struct good_case {
	const char *name;
	void (*mutate)(struct files *f);
	bool (*check)(const struct accmap_recording *rec, const struct gpureplay_stats *st,
		      const struct gpureplay_report *rep);
};

static const struct good_case good_cases[] = {
	{ "overlap-live", g_overlap_live, k_overlap_live },
	{ "overlap-zero", g_overlap_zero, k_overlap_zero },
	{ "overlap-unmapped", g_overlap_unmapped, k_overlap_unmapped },
	{ "chain-stale", g_chain_stale, k_chain_stale },
	{ "chain-loop", g_chain_loop, k_chain_loop },
	{ "chain-type", g_chain_type, k_chain_type },
	{ "chain-unaligned", g_chain_unaligned, k_chain_unaligned },
	{ "chain-unmapped", g_chain_unmapped, k_chain_unmapped },
	{ "chain-zero", g_chain_zero, k_chain_zero },
	{ "root-teardown", g_teardown, k_teardown },
	{ "root-hi-first", g_hi_first, k_hi_first },
	{ "root-hi-first-teardown", g_hi_first_teardown, k_hi_first_teardown },
	{ "failed-job", g_failed_job, k_failed_job },
	{ "flush-twice", g_flush_twice, k_flush_twice },
};

static void check_good(const struct good_case *c, const char *emit)
{
	struct accmap_recording *rec = NULL;
	struct gpureplay_report rep;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	struct gpureplay_input in;
	char why[700], line[256], name[64];
	struct files f;
	struct buf b;
	int ret;

	make_valid(&f);
	c->mutate(&f);
	in = input_of(&f);
	snprintf(name, sizeof(name), "valid-%s", c->name);
	ret = gpureplay_import_report(&in, &rec, &st, &rep, &err);
	if (ret) {
		report(false, name, err.msg);
	} else {
		line[0] = '\0';
		if (rep.nr_bad_chains)
			gpureplay_chain_describe(&rep.bad_chains[0], line, sizeof(line));
		snprintf(why, sizeof(why),
			 "%u maps, %u ops, %u WRITE_ROOT (%u dropped), %llu overlap pages (%llu unmapped), %u stale, %u/%u chains bad%s%s",
			 rec->nr_maps, rec->nr_ops, st.write_roots, st.roots_dropped,
			 (unsigned long long)st.overlap_pages,
			 (unsigned long long)st.overlap_unmapped, st.stale_regions, st.chains_bad,
			 st.chains, line[0] ? ": " : "", line);
		printf("# %s: %s\n", name, why);
		report(c->check(rec, &st, &rep) && rep.nr_bad_chains == st.chains_bad &&
		       rep.nr_stale == st.stale_regions && !accmap_rec_check(rec, &err),
		       name, why);
		gpureplay_report_free(&rep);
		accmap_rec_free(rec);
	}
	if (emit) {
		b = fuzz_input(&f);
		write_file(emit, name, &b);
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

/* ---- GPUReplay's MNIST recording, and copies of it edited in memory ----- */

#define MNIST_FLUSH_ID_NEXT(js)	(0x1800 + (js) * 0x80 + 0x70)

/* Whether every page of contents of @e's regions reads back from @rec. */
static bool pages_kept(const struct gre *e, const struct accmap_recording *rec,
		       uint32_t skip_from)
{
	struct gre_region r;
	uint64_t i, va, pa;
	size_t data;
	uint32_t k;
	int m;

	for (k = 0; k < skip_from && !gre_region(e, k, &r); k++) {
		for (i = 0; r.valid && i < r.pages; i++) {
			gre_page(e, &r, i, &va, &pa, &data);
			m = accmap_rec_find_map(rec, va, 4096);
			if (m < 0 || !rec->maps[m].data ||
			    memcmp((const uint8_t *)rec->maps[m].data + (va - rec->maps[m].gpu_va),
				   e->mem.p + data, 4096))
				return false;
		}
	}
	return true;
}

static int import_edit(const struct gre *e, struct accmap_recording **rec,
		       struct gpureplay_stats *st, struct gpureplay_report *rep,
		       struct accmap_rec_error *err)
{
	struct gpureplay_input in = gre_input(e);

	*rec = NULL;
	return gpureplay_import_report(&in, rec, st, rep, err);
}

/* (f) MNIST itself: as before in substance; (d), (e) on its own log. */
static void check_mnist_self(const struct gre *e)
{
	struct accmap_recording *rec;
	struct gpureplay_report rep;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	const struct accmap_replay_op *op;
	uint64_t mapped = 0;
	uint32_t i, first_wait = UINT32_MAX, roots_late = 0, flush_ok = 0, flush_bad = 0;
	bool captured = false;
	char why[600];

	if (import_edit(e, &rec, &st, &rep, &err)) {
		report(false, "mnist-unchanged", err.msg);
		report(false, "mnist-teardown", err.msg);
		report(false, "mnist-flush", err.msg);
		return;
	}
	for (i = 0; i < rec->nr_maps; i++)
		mapped += rec->maps[i].length;
	snprintf(why, sizeof(why),
		 "%u maps (%llu bytes), %u/%u chains bad, %u stale, %llu overlap pages, %u maps without leaf, %llu leaves unmapped, %u WAIT_IRQ",
		 rec->nr_maps, (unsigned long long)mapped, st.chains_bad, st.chains,
		 st.stale_regions, (unsigned long long)st.overlap_pages, st.maps_no_leaf,
		 (unsigned long long)st.leaves_unmapped, st.wait_irqs);
	report(rec->nr_maps == 26 && mapped == (539 + 646) * 4096ULL && st.chains == 23 &&
	       !st.chains_bad && !st.stale_regions && !st.overlap_pages && !st.maps_no_leaf &&
	       !st.leaves_unmapped && st.wait_irqs == 23 && rec->nr_symbols == 2 &&
	       pages_kept(e, rec, UINT32_MAX) && !accmap_rec_check(rec, &err),
	       "mnist-unchanged", why);

	/* (d) The teardown's TRANSTAB writes of 0 make no WRITE_ROOT. */
	for (i = 0; i < rec->nr_ops; i++) {
		op = &rec->ops[i];
		if (op->op == ACCMAP_REPLAY_OP_WAIT_IRQ && first_wait == UINT32_MAX)
			first_wait = i;
		if (op->op == ACCMAP_REPLAY_OP_WRITE_ROOT && first_wait != UINT32_MAX)
			roots_late++;
		if (op->op == ACCMAP_REPLAY_OP_READ && op->offset == 0x38 &&
		    op->flags == ACCMAP_REPLAY_OP_CAPTURE)
			captured = true;
		if (op->op == ACCMAP_REPLAY_OP_WRITE && op->offset >= 0x1800 &&
		    op->offset < 0x2000 && (op->offset & 0x7f) == 0x70) {
			if (captured && op->flags == ACCMAP_REPLAY_OP_CAPTURED && !op->value)
				flush_ok++;
			else
				flush_bad++;
		}
	}
	snprintf(why, sizeof(why), "%u WRITE_ROOT, %u after the first WAIT_IRQ, %u dropped",
		 st.write_roots, roots_late, st.roots_dropped);
	report(st.write_roots == 2 && !roots_late && st.roots_dropped == 2, "mnist-teardown", why);

	/* (e) Each FLUSH_ID_NEXT write takes what a LATEST_FLUSH CAPTURE read. */
	snprintf(why, sizeof(why), "%u CAPTURE reads, %u CAPTURED writes, %u right, %u wrong",
		 st.captures, st.captured, flush_ok, flush_bad);
	report(st.captures >= 23 && st.captured == 23 && flush_ok == 23 && !flush_bad,
	       "mnist-flush", why);
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
}

/* A contents region of @e with more than two pages (MNIST's 513-page one). */
/*
 * (a) A stale region appended last, over the last two pages of a live one
 * (other PAs) and two pages past it (no leaves): the live pages win.
 */
static void check_mnist_stale(const struct gre *orig)
{
	struct accmap_recording *rec;
	struct gpureplay_report rep;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	struct gre_region r;
	struct gre e;
	uint64_t va, rpa, start;
	size_t data;
	uint32_t i;
	bool live_won = true;
	char why[600];

	if (gre_stale_overlap(orig, &e, &r, &start)) {
		report(false, "mnist-stale-overlap", "no region of more than 2 pages");
		return;
	}
	if (import_edit(&e, &rec, &st, &rep, &err)) {
		report(false, "mnist-stale-overlap", err.msg);
		gre_free(&e);
		return;
	}
	for (i = r.pages - 2; i < r.pages; i++) {
		int m;

		gre_page(&e, &r, i, &va, &rpa, &data);
		m = accmap_rec_find_map(rec, va, 4096);
		if (va < start || m < 0 || !rec->maps[m].data ||
		    memcmp((const uint8_t *)rec->maps[m].data + (va - rec->maps[m].gpu_va),
			   e.mem.p + data, 4096))
			live_won = false;
	}
	snprintf(why, sizeof(why),
		 "%llu overlap pages, %u stale (0x%llx-0x%llx, %llu kept), live pages %s, %u/%u chains bad",
		 (unsigned long long)st.overlap_pages, st.stale_regions,
		 rep.nr_stale ? (unsigned long long)rep.stale[0].start : 0,
		 rep.nr_stale ? (unsigned long long)rep.stale[0].end : 0,
		 rep.nr_stale ? (unsigned long long)rep.stale[0].kept : 0,
		 live_won ? "won" : "LOST", st.chains_bad, st.chains);
	report(st.overlap_pages == 2 && st.stale_regions == 1 && rep.nr_stale == 1 &&
	       rep.stale[0].start == start && rep.stale[0].kept == 2 &&
	       rep.stale[0].off == orig->mem.n && live_won &&
	       byte_at(rec, r.end) == 0xa5 && st.chains == 23 && !st.chains_bad &&
	       pages_kept(&e, rec, 26), "mnist-stale-overlap", why);
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
	gre_free(&e);
}

/*
 * (b) Chain 0's JS_HEAD_NEXT rewritten into a stale region appended at a
 * free VA: the import names chain 0 and says not replayable.
 */
static int mnist_edit_b(const struct gre *orig, struct gre *e)
{
	uint64_t va;

	return gre_stale_chain0(orig, e, 0x03, &va);
}

static void check_mnist_chain(const struct gre *orig)
{
	struct accmap_recording *rec;
	struct gpureplay_report rep;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	struct gre e;
	uint64_t va = gre_free_va(orig);
	char why[600], line[256] = "";

	if (mnist_edit_b(orig, &e)) {
		report(false, "mnist-chain-stale", "cannot edit the copy");
		gre_free(&e);
		return;
	}
	if (import_edit(&e, &rec, &st, &rep, &err)) {
		report(false, "mnist-chain-stale", err.msg);
		gre_free(&e);
		return;
	}
	if (rep.nr_bad_chains)
		gpureplay_chain_describe(&rep.bad_chains[0], line, sizeof(line));
	snprintf(why, sizeof(why), "%u/%u chains bad: %s", st.chains_bad, st.chains, line);
	printf("# mnist-chain-stale: %s\n", why);
	report(st.chains == 23 && st.chains_bad == 1 && rep.nr_bad_chains == 1 &&
	       rep.bad_chains[0].chain == 0 && rep.bad_chains[0].slot == 1 &&
	       rep.bad_chains[0].why == GPUREPLAY_CHAIN_STALE &&
	       rep.bad_chains[0].head == va + 0x40 && rep.bad_chains[0].va == va + 0x40 &&
	       rep.bad_chains[0].start == va && rep.bad_chains[0].end == va + 4096 &&
	       st.stale_regions == 1 && !accmap_rec_check(rec, &err),
	       "mnist-chain-stale", why);
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
	gre_free(&e);
}

/*
 * (c) A region with contents over a one-page live region, and that page's
 * leaf rewritten to a PA neither recorded: refused, naming both offsets.
 */
static void check_mnist_unexplained(const struct gre *orig)
{
	struct accmap_recording *rec;
	struct accmap_rec_error err;
	struct gre_region r;
	uint64_t leaf, pa = 0x1234000000ULL;
	char want[200], why[700];
	struct gre e;
	uint32_t k;
	int ret;

	for (k = 0; !gre_region(orig, k, &r); k++)
		if (r.valid && r.pages == 1)
			break;
	if (gre_dup(&e, orig) ||
	    gre_get_leaf(&e, r.start, &leaf)) {
		report(false, "mnist-overlap-unexplained", "no one-page region with a leaf");
		gre_free(&e);
		return;
	}
	gre_append_region(&e, r.start, 1, r.flags, &pa, 0x5a);
	gre_set_leaf(&e, r.start, (leaf & ~0x0000fffffffff000ULL) | 0x1235000000ULL);
	ret = import_edit(&e, &rec, NULL, NULL, &err);
	snprintf(want, sizeof(want),
		 "gr_mem_contents: offset 0x%zx: regions 0x%llx-0x%llx (offset 0x%zx) and 0x%llx-0x%llx (offset 0x%zx) overlap at page 0x%llx",
		 orig->mem.n, (unsigned long long)r.start, (unsigned long long)r.end, r.off,
		 (unsigned long long)r.start, (unsigned long long)r.end, orig->mem.n,
		 (unsigned long long)r.start);
	snprintf(why, sizeof(why), "returned %d, \"%s\", expected \"%s\"", ret,
		 ret ? err.msg : "", want);
	report(ret == -EBADMSG && strstr(err.msg, want), "mnist-overlap-unexplained", why);
	if (!ret)
		accmap_rec_free(rec);
	gre_free(&e);
}

/* Writes the four files of @e into @dir (for accmapctl; never into git). */
static int write_gre(const char *dir, const struct gre *e)
{
	struct buf b;

	b.p = e->pgt.p;
	b.n = e->pgt.n;
	if (write_file(dir, "gr_pgt", &b))
		return -1;
	b.p = e->mem.p;
	b.n = e->mem.n;
	if (write_file(dir, "gr_mem_contents", &b))
		return -1;
	b.p = e->io.p;
	b.n = e->io.n;
	if (write_file(dir, "gr_io_history", &b))
		return -1;
	b.p = e->sync.p;
	b.n = e->sync.n;
	return write_file(dir, "gr_sync_as", &b);
}

static void check_mnist_edits(const char *dir, const char *write_b)
{
	struct gpureplay_input in;
	struct accmap_rec_error err;
	struct gre e;

	if (gpureplay_load(dir, &in, &err)) {
		report(false, "mnist-edits", err.msg);
		return;
	}
	if (gre_copy(&e, &in)) {
		gpureplay_unload(&in);
		report(false, "mnist-edits", "out of memory");
		return;
	}
	gpureplay_unload(&in);
	check_mnist_self(&e);
	check_mnist_stale(&e);
	check_mnist_chain(&e);
	check_mnist_unexplained(&e);
	if (write_b) {
		struct gre b;

		if (mnist_edit_b(&e, &b) || write_gre(write_b, &b))
			report(false, "mnist-write-b", write_b);
		gre_free(&b);
	}
	gre_free(&e);
}

int main(int argc, char **argv)
{
	const char *emit = NULL, *write_b = NULL, *mnist = getenv("ACCMAP_GPUREPLAY_DIR");
	size_t i;
	int a = 1;

	if (argc > a + 1 && !strcmp(argv[a], "--emit")) {
		emit = argv[a + 1];
		a += 2;
	}
	if (argc > a + 1 && !strcmp(argv[a], "--write-mnist-b")) {
		write_b = argv[a + 1];
		a += 2;
	}
	check_valid(emit);
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++)
		check_bad(&bad_cases[i], emit);
	for (i = 0; i < ARRAY_SIZE(good_cases); i++)
		check_good(&good_cases[i], emit);
	for (; a < argc; a++)
		check_corpus(argv[a]);
	if (mnist && *mnist) {
		check_mnist(mnist);
		check_mnist_edits(mnist, write_b);
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

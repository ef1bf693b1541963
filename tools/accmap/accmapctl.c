// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl: look at and exercise /dev/accmap from the command line.
 *
 *   accmapctl [-d DEVICE] heaps | pool | list | svm | alloc | info | label ...
 *   accmapctl [-d DEVICE] targets | record | replay | show ...
 *   accmapctl import-gpureplay DIR OUT
 *
 * Exit status: 0 on success, 1 when a call fails (the message names the
 * call and gives strerror), 2 on a usage error.  Everything that talks to
 * the device goes through libaccmap.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "accmap.h"
#include "gpureplay.h"
#include "json.h"
#include "recording.h"
#include "simdrv.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define EXIT_USAGE		2

/* The Makefile passes the package version, dkms.conf's PACKAGE_VERSION. */
#ifndef ACCMAP_VERSION
#define ACCMAP_VERSION		"unknown"
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEBUGFS_MOUNT		"/sys/kernel/debug"
#define DEBUGFS_ACCMAP		DEBUGFS_MOUNT "/accmap"

static const char *prog = "accmapctl";
/* "accmapctl CMD" while a subcommand runs, for messages and getopt. */
static char cmd_name[64] = "accmapctl";
static const char *device = ACCMAP_DEVICE_PATH;
/* -j/--json: the commands that print data print one JSON document. */
static bool json_out;

/* ------------------------------------------------------------------ */
/* Messages */

__printf(2, 3) static int fail(int err, const char *fmt, ...);
__printf(1, 2) static int usage_error(const char *fmt, ...);
__printf(1, 2) static void note(const char *fmt, ...);

/* "accmapctl CMD: <what>: <strerror>" on stderr; returns exit status 1. */
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
	return EXIT_FAILURE;
}

/* A usage error and where to find help; returns exit status 2. */
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", cmd_name);
	return EXIT_USAGE;
}

/* After getopt's own message about a bad option; returns exit status 2. */
static int bad_option(void)
{
	fprintf(stderr, "Try '%s --help'.\n", cmd_name);
	return EXIT_USAGE;
}

/* A further line of explanation after an error. */
static void note(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", cmd_name);
	exit(EXIT_FAILURE);
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (size && n > SIZE_MAX / size)
		out_of_memory();
	bytes = n * size;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		out_of_memory();
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

/* ------------------------------------------------------------------ */
/* Numbers */

/* An unsigned number in C syntax (decimal, 0x hex, 0 octal), up to @max. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() would take leading blanks and negate a leading '-'. */
	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (!parse_u64(s, max, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A size in bytes with an optional K, M, G or T suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return false;

	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return false;
	}
	if (shift) {
		end++;
		/* "KiB" and "KB" mean the same here. */
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end)
		return false;
	if (v > (UINT64_MAX >> shift))
		return false;
	*out = (unsigned long long)v << shift;
	return true;
}

/*
 * Bytes for people: "512 B", "4 KiB", "1.5 MiB"; with @exact, the plain
 * number of bytes.  Returns @buf.
 */
static const char *fmt_bytes(char *buf, size_t len, uint64_t bytes, bool exact)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	unsigned int u = 0;
	double v;

	if (exact || bytes < 1024) {
		snprintf(buf, len, exact ? "%llu" : "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (u + 1 < ARRAY_SIZE(units) &&
	       bytes >= (1ULL << (10 * (u + 1))))
		u++;
	if (!(bytes & ((1ULL << (10 * u)) - 1))) {
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes >> (10 * u)),
			 units[u]);
		return buf;
	}
	v = (double)bytes / (double)(1ULL << (10 * u));
	/* 1023.96 KiB would print as 1024.0 KiB: show 1.0 MiB instead. */
	if (v >= 1023.95 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* @a * @b, or UINT64_MAX if that does not fit. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

static const char *fmt_alloc_flags(char *buf, size_t len, uint32_t flags)
{
	const uint32_t attrs = ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED;
	uint32_t unknown = flags & ~ACCMAP_ALLOC_VALID_FLAGS;
	const char *contig = flags & ACCMAP_ALLOC_CONTIGUOUS ? ", contiguous" : "";
	const char *type = "cached";

	if ((flags & attrs) == attrs)
		type = "writecombine and uncached";
	else if (flags & ACCMAP_ALLOC_WRITECOMBINE)
		type = "writecombine";
	else if (flags & ACCMAP_ALLOC_UNCACHED)
		type = "uncached";

	if (unknown)
		snprintf(buf, len, "0x%x (%s%s, unknown 0x%x)", flags, type, contig, unknown);
	else
		snprintf(buf, len, "0x%x (%s%s)", flags, type, contig);
	return buf;
}

static const char *fmt_state(char *buf, size_t len, uint32_t state)
{
	uint32_t known = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
			 ACCMAP_STATE_READONLY | ACCMAP_STATE_CONTIGUOUS;

	snprintf(buf, len, "0x%x (%s%s%s%s%s)", state,
		 state & ACCMAP_STATE_ALLOCATED ? "allocated" : "no memory",
		 state & ACCMAP_STATE_EXPORTED ? ", exported" : "",
		 state & ACCMAP_STATE_READONLY ? ", read-only" : "",
		 state & ACCMAP_STATE_CONTIGUOUS ? ", contiguous" : "",
		 state & ~known ? ", unknown bits" : "");
	return buf;
}

/* ------------------------------------------------------------------ */
/* Aligned tables */

/**
 * struct table - cells of a text table, printed with aligned columns
 * @ncols: number of columns
 * @ncells: cells added so far; row r, column c is @cells[r * @ncols + c]
 * @cells: the cells, row 0 is the header
 * @right: per column, true to align to the right (numbers)
 */
struct table {
	size_t ncols;
	size_t ncells;
	char **cells;
	bool *right;
};

static void table_init(struct table *t, size_t ncols)
{
	t->ncols = ncols;
	t->ncells = 0;
	t->cells = NULL;
	t->right = xrealloc(NULL, ncols, sizeof(*t->right));
	memset(t->right, 0, ncols * sizeof(*t->right));
}

/* Appends one cell; rows fill left to right, top to bottom. */
static void table_add(struct table *t, const char *cell)
{
	t->cells = xrealloc(t->cells, t->ncells + 1, sizeof(*t->cells));
	t->cells[t->ncells++] = xstrdup(cell && *cell ? cell : "-");
}

__printf(2, 3) static void table_addf(struct table *t, const char *fmt, ...);

static void table_addf(struct table *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	table_add(t, buf);
}

static void table_print(const struct table *t, FILE *f)
{
	size_t rows = (t->ncells + t->ncols - 1) / t->ncols;
	size_t *width = xrealloc(NULL, t->ncols, sizeof(*width));
	size_t r, c;

	memset(width, 0, t->ncols * sizeof(*width));
	for (r = 0; r < rows; r++)
		for (c = 0; c < t->ncols && r * t->ncols + c < t->ncells; c++) {
			size_t n = strlen(t->cells[r * t->ncols + c]);

			if (n > width[c])
				width[c] = n;
		}

	for (r = 0; r < rows; r++) {
		for (c = 0; c < t->ncols && r * t->ncols + c < t->ncells; c++) {
			const char *s = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (c)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s", (int)width[c], s);
			else if (last)
				fputs(s, f);	/* no trailing blanks */
			else
				fprintf(f, "%-*s", (int)width[c], s);
		}
		fputc('\n', f);
	}
	free(width);
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
}

/* ------------------------------------------------------------------ */
/* Common pieces of the subcommands */

/*
 * getopt_long() over a subcommand's arguments.  argv[0] becomes
 * "accmapctl CMD" so that getopt's own messages name the subcommand.
 */
static void begin_options(char **argv)
{
	snprintf(cmd_name, sizeof(cmd_name), "%s %s", prog, argv[0]);
	argv[0] = cmd_name;
	optind = 0;	/* glibc and musl: start afresh */
	opterr = 1;
}

/* next_option() results besides a subcommand's own option characters. */
enum { OPT_END = -1, OPT_EXIT = -2 };

/*
 * The next option of a subcommand, after begin_options(): getopt_long()
 * over @optstring and @opts, with what every subcommand does alike done
 * here: -d/--device (where @optstring has it) sets the device, -h/--help
 * prints @usage, and an unknown option or a missing argument gets getopt's
 * message and a pointer to --help.  Returns the subcommand's own option,
 * OPT_END after the last one, or OPT_EXIT with *@status set to the exit
 * status the subcommand returns now.
 */
static int next_option(int argc, char **argv, const char *optstring,
		       const struct option *opts, void (*usage)(FILE *), int *status)
{
	int c;

	for (;;) {
		c = getopt_long(argc, argv, optstring, opts, NULL);
		switch (c) {
		case 'd':
			device = optarg;
			continue;
		case 'h':
			usage(stdout);
			*status = EXIT_SUCCESS;
			return OPT_EXIT;
		case '?':
		case ':':
			*status = bad_option();
			return OPT_EXIT;
		default:
			return c;
		}
	}
}

static int open_device(int *fd)
{
	int ret = accmap_open_path(device, fd);

	if (!ret)
		return 0;
	fail(ret, "accmap_open_path(%s)", device);
	if (ret == -ENOENT && !strcmp(device, ACCMAP_DEVICE_PATH))
		note("is the accmap module loaded? (modprobe accmap)");
	return EXIT_FAILURE;
}

/* The heap's name into @buf ("" if the heap cannot be queried). */
static const char *heap_name(int fd, uint32_t heap, char *buf, size_t len)
{
	struct accmap_heap_info hi;

	buf[0] = '\0';
	if (heap != ACCMAP_HEAP_NONE && !accmap_query_heap(fd, heap, &hi)) {
		hi.name[sizeof(hi.name) - 1] = '\0';
		snprintf(buf, len, "%s", hi.name);
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* accmapctl heaps */

static void heaps_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] heaps [-b]\n"
		"\n"
		"Lists the heaps of the device (ACCMAP_IOC_QUERY_HEAP over heap ids\n"
		"0..%d): id, name, bytes managed, used, free, and the largest buffer\n"
		"that could be allocated now (less than free when fragmented), and the\n"
		"bytes of USED in buffers allocated contiguous (alloc --contiguous).  The\n"
		"system heap is id 0, carveouts (when configured) ids %d..%d, the\n"
		"device memory SVM migrates pages to, when there is some, id %d (no\n"
		"buffer is allocated from it: USED is the SVM pages there now), and the\n"
		"user heap, id %d, holds the user memory pinned by FROM_VA buffers: it\n"
		"has no fixed size, so only USED is shown for it.\n"
		"\n"
		"  -b, --bytes   exact byte counts instead of KiB/MiB/GiB\n"
		"  -h, --help    this text\n",
		prog, ACCMAP_HEAP_MAX - 1, ACCMAP_HEAP_CARVEOUT_FIRST,
		ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX - 1,
		ACCMAP_HEAP_DEVICE, ACCMAP_HEAP_USER);
}

/* accmapctl --json heaps: {"heaps": [{"id", "name", "total", ...}]}. */
static int heaps_json(int fd)
{
	struct json j;
	uint32_t heap;
	int ret;

	json_init(&j);
	json_begin_object(&j, NULL);
	json_begin_array(&j, "heaps");
	for (heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		struct accmap_heap_info hi;
		bool user = heap == ACCMAP_HEAP_USER;

		ret = accmap_query_heap(fd, heap, &hi);
		if (ret == -ENODEV)
			continue;
		if (ret) {
			json_discard(&j);
			accmap_close(fd);
			return fail(ret, "accmap_query_heap(heap %u)", heap);
		}
		hi.name[sizeof(hi.name) - 1] = '\0';
		json_begin_object(&j, NULL);
		json_u64(&j, "id", heap);
		json_string(&j, "name", hi.name);
		/* The user heap has no size: null where the table shows "-". */
		if (user)
			json_null(&j, "total");
		else
			json_u64(&j, "total", hi.total);
		json_u64(&j, "used", hi.used);
		if (user) {
			json_null(&j, "free");
			json_null(&j, "largest_free");
		} else {
			json_u64(&j, "free", hi.free);
			json_u64(&j, "largest_free", hi.largest_free);
		}
		json_u64(&j, "contiguous", hi.contiguous);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j, stdout);
	accmap_close(fd);
	return EXIT_SUCCESS;
}

static int cmd_heaps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool exact = false, user;
	struct table t;
	uint32_t heap;
	int fd, ret, c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:h", opts, heaps_usage, &status)) != OPT_END) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	ret = open_device(&fd);
	if (ret)
		return ret;
	if (json_out)
		return heaps_json(fd);

	table_init(&t, 7);
	t.right[0] = true;
	for (c = 2; c < 7; c++)
		t.right[c] = true;
	table_add(&t, "ID");
	table_add(&t, "NAME");
	table_add(&t, "TOTAL");
	table_add(&t, "USED");
	table_add(&t, "FREE");
	table_add(&t, "LARGEST FREE");
	table_add(&t, "CONTIGUOUS");

	for (heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		struct accmap_heap_info hi;
		char b[32];

		ret = accmap_query_heap(fd, heap, &hi);
		if (ret == -ENODEV)
			continue;
		if (ret) {
			fail(ret, "accmap_query_heap(heap %u)", heap);
			table_free(&t);
			accmap_close(fd);
			return EXIT_FAILURE;
		}
		hi.name[sizeof(hi.name) - 1] = '\0';
		table_addf(&t, "%u", heap);
		table_add(&t, hi.name);
		/* The user heap reports 0 for what it does not have: a size. */
		user = heap == ACCMAP_HEAP_USER;
		table_add(&t, user ? "-" : fmt_bytes(b, sizeof(b), hi.total, exact));
		table_add(&t, fmt_bytes(b, sizeof(b), hi.used, exact));
		table_add(&t, user ? "-" : fmt_bytes(b, sizeof(b), hi.free, exact));
		table_add(&t, user ? "-" : fmt_bytes(b, sizeof(b), hi.largest_free, exact));
		table_add(&t, fmt_bytes(b, sizeof(b), hi.contiguous, exact));
	}
	table_print(&t, stdout);
	table_free(&t);
	accmap_close(fd);
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* accmapctl pool */

static void pool_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] pool [-b]\n"
		"\n"
		"Shows the page pool (ACCMAP_IOC_QUERY_POOL): per free list, the block\n"
		"size and the blocks and bytes that are zeroed (ready) or dirty (waiting\n"
		"to be zeroed); then the cap, the bytes pooled now, hits and misses of\n"
		"allocations, and the bytes given back under memory pressure.\n"
		"\n"
		"  -b, --bytes   exact byte counts instead of KiB/MiB/GiB\n"
		"  -h, --help    this text\n",
		prog);
}

/* accmapctl --json pool: {"orders": [...], "cap", "pooled", ...}. */
static int pool_json(const struct accmap_pool_info *pi, uint32_t n, uint64_t page)
{
	struct json j;
	uint32_t i;

	json_init(&j);
	json_begin_object(&j, NULL);
	json_u64(&j, "page_size", page);
	json_begin_array(&j, "orders");
	for (i = 0; i < n; i++) {
		const struct accmap_pool_order *o = &pi->orders[i];
		uint64_t block = o->order < 64 ? mul_sat(page, 1ULL << o->order) :
						 UINT64_MAX;

		json_begin_object(&j, NULL);
		json_u64(&j, "order", o->order);
		json_u64(&j, "block", block);
		json_u64(&j, "zeroed", o->zeroed);
		json_u64(&j, "zeroed_bytes", mul_sat(o->zeroed, block));
		json_u64(&j, "dirty", o->dirty);
		json_u64(&j, "dirty_bytes", mul_sat(o->dirty, block));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_u64(&j, "cap", pi->cap);
	json_u64(&j, "pooled", pi->pooled);
	json_u64(&j, "hits", pi->hits);
	json_u64(&j, "misses", pi->misses);
	json_u64(&j, "shrunk", pi->shrunk);
	json_end_object(&j);
	json_finish(&j, stdout);
	return EXIT_SUCCESS;
}

static int cmd_pool(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t page = (unsigned long long)sysconf(_SC_PAGESIZE);
	struct accmap_pool_info pi;
	bool exact = false;
	struct table t;
	uint32_t i, n;
	int fd, ret, c, status;
	char b[32];

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:h", opts, pool_usage, &status)) != OPT_END) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	ret = open_device(&fd);
	if (ret)
		return ret;
	ret = accmap_query_pool(fd, &pi);
	accmap_close(fd);
	if (ret)
		return fail(ret, "accmap_query_pool");

	n = pi.norders;
	if (n > ACCMAP_POOL_MAX_ORDERS) {
		note("kernel reports %u free lists, showing the first %d",
		     n, ACCMAP_POOL_MAX_ORDERS);
		n = ACCMAP_POOL_MAX_ORDERS;
	}
	if (json_out)
		return pool_json(&pi, n, page);

	table_init(&t, 6);
	for (i = 0; i < 6; i++)
		t.right[i] = true;
	table_add(&t, "ORDER");
	table_add(&t, "BLOCK");
	table_add(&t, "ZEROED");
	table_add(&t, "ZEROED BYTES");
	table_add(&t, "DIRTY");
	table_add(&t, "DIRTY BYTES");
	for (i = 0; i < n; i++) {
		const struct accmap_pool_order *o = &pi.orders[i];
		uint64_t block = o->order < 64 ? mul_sat(page, 1ULL << o->order) :
						 UINT64_MAX;

		table_addf(&t, "%u", o->order);
		table_add(&t, fmt_bytes(b, sizeof(b), block, exact));
		table_addf(&t, "%llu", (unsigned long long)o->zeroed);
		table_add(&t, fmt_bytes(b, sizeof(b), mul_sat(o->zeroed, block), exact));
		table_addf(&t, "%llu", (unsigned long long)o->dirty);
		table_add(&t, fmt_bytes(b, sizeof(b), mul_sat(o->dirty, block), exact));
	}
	table_print(&t, stdout);
	table_free(&t);

	printf("\n");
	printf("cap:     %s\n", fmt_bytes(b, sizeof(b), pi.cap, exact));
	printf("pooled:  %s\n", fmt_bytes(b, sizeof(b), pi.pooled, exact));
	if (pi.hits + pi.misses && pi.hits + pi.misses >= pi.hits)
		printf("hits:    %llu blocks (%.1f%%)\n", (unsigned long long)pi.hits,
		       100.0 * (double)pi.hits / (double)(pi.hits + pi.misses));
	else
		printf("hits:    %llu blocks\n", (unsigned long long)pi.hits);
	printf("misses:  %llu blocks\n", (unsigned long long)pi.misses);
	printf("shrunk:  %s\n", fmt_bytes(b, sizeof(b), pi.shrunk, exact));
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* accmapctl list */

/**
 * struct list_file - a debugfs file accmapctl list can show
 * @name: its name in the accmap debugfs directory
 * @by_default: shown when no file is named
 * @optional: by default, skipped if missing (modules without it)
 */
struct list_file {
	const char *name;
	bool by_default;
	bool optional;
};

static const struct list_file list_files[] = {
	{ "clients", true, false },
	{ "allocations", true, false },
	{ "orphans", true, true },
	{ "tags", true, true },
	{ "heaps", false, false },
	{ "replay", false, true },
	{ "svm", false, true },
	{ "devmem", false, true },
};

#define LIST_NFILES	ARRAY_SIZE(list_files)

static void list_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s list [-b] [--raw] [--debugfs DIR] [FILE]...\n"
		"\n"
		"Prints accmap debugfs files as aligned tables.  FILE is one of:\n"
		"  clients      handles and bytes per heap of each open /dev/accmap\n"
		"  allocations  every buffer a client holds: size, heap, tag, label,\n"
		"               mappings, attachments, exports, device-mapped attachments\n"
		"  orphans      buffers no client holds, kept alive by a dma-buf or a\n"
		"               mapping, with the process that created them\n"
		"  tags         buffers and bytes per tag, with the tag's label\n"
		"  heaps        the heaps' bytes (as 'accmapctl heaps')\n"
		"  replay       replay sessions: process, target, format, address space,\n"
		"               maps, bytes mapped, page-table pages; totals; sessions\n"
		"               per target\n"
		"  svm          SVM sessions: mirrored range, GPU-mapped bytes, faults,\n"
		"               invalidations, bytes on the device (as 'accmapctl svm',\n"
		"               without totals)\n"
		"  devmem       device memory: kind, size, use, evictions; per session\n"
		"               bytes on the device and pages migrated each way (only\n"
		"               where the module has device memory)\n"
		"Without FILE: clients, allocations, orphans and tags.  Reading debugfs\n"
		"needs root and a mounted debugfs:\n"
		"  mount -t debugfs none %s\n"
		"\n"
		"  -b, --bytes       exact byte counts instead of KiB/MiB/GiB\n"
		"  -r, --raw         print the files as they are (tab-separated)\n"
		"      --debugfs DIR the accmap debugfs directory (default %s)\n"
		"  -h, --help        this text\n",
		prog, DEBUGFS_MOUNT, DEBUGFS_ACCMAP);
}

/* Reads all of @path into a NUL-terminated buffer; 0 or -errno. */
static int read_file(const char *path, char **data, size_t *len)
{
	size_t size = 0, cap = 4096;
	char *buf = xrealloc(NULL, cap, 1);
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	for (;;) {
		ssize_t n;

		if (cap - size < 2) {
			cap *= 2;
			buf = xrealloc(buf, cap, 1);
		}
		n = read(fd, buf + size, cap - size - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		size += (size_t)n;
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[size] = '\0';
	*data = buf;
	*len = size;
	return 0;
}

/* Why the accmap debugfs directory cannot be read, said to the operator. */
static void explain_debugfs(int err, const char *dir)
{
	struct statfs sfs;

	if (err == -EACCES || err == -EPERM) {
		note("reading debugfs needs root");
		return;
	}
	if (err != -ENOENT || strcmp(dir, DEBUGFS_ACCMAP))
		return;
	if (statfs(DEBUGFS_MOUNT, &sfs) || sfs.f_type != DEBUGFS_MAGIC) {
		note("debugfs is not mounted; mount it with:");
		note("  mount -t debugfs none %s", DEBUGFS_MOUNT);
	} else if (access(dir, F_OK)) {
		note("debugfs has no accmap directory: is the accmap module loaded?");
	}
}

/* A decimal number, the only cells -b/human formatting touches. */
static bool is_decimal(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Decimal or 0x hex: such columns are aligned to the right. */
static bool is_number(const char *s)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
		for (s += 2; *s; s++)
			if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
			      (*s >= 'A' && *s <= 'F')))
				return false;
		return true;
	}
	return is_decimal(s);
}

/* Splits @line at tabs, in place; returns the number of fields. */
static size_t split_tabs(char *line, char ***fields)
{
	size_t n = 0;
	char *p = line;

	*fields = NULL;
	for (;;) {
		char *tab = strchr(p, '\t');

		*fields = xrealloc(*fields, n + 1, sizeof(**fields));
		(*fields)[n++] = p;
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	return n;
}

/*
 * Whether column @c of debugfs file @file holds bytes: columns named like
 * a byte count, svm's "device", devmem's "on_device", and in clients every
 * per-heap column after "handles".
 */
static bool is_bytes_column(const char *file, char **header, size_t nheader,
			    size_t c)
{
	static const char *const names[] = {
		"size", "bytes", "total", "used", "free", "largest_free", "mapped", "huge",
	};
	size_t i;

	if (c >= nheader)
		return false;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(header[c], names[i]))
			return true;
	if (!strcmp(file, "svm") && !strcmp(header[c], "device"))
		return true;
	if (!strcmp(file, "devmem") && !strcmp(header[c], "on_device"))
		return true;
	if (strcmp(file, "clients"))
		return false;
	for (i = 0; i < c; i++)
		if (!strcmp(header[i], "handles"))
			return true;
	return false;
}

/* Prints one tab-separated debugfs file (header line first) as a table. */
static void print_tsv_table(const char *file, char *data, bool exact)
{
	char **lines = NULL, ***rows = NULL, **header;
	size_t nlines = 0, *nfields = NULL, ncols = 0, nheader;
	char *p = data;
	struct table t;
	size_t r, c;

	/* Lines, without the final newline's empty line. */
	while (*p) {
		char *nl = strchr(p, '\n');

		lines = xrealloc(lines, nlines + 1, sizeof(*lines));
		lines[nlines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	if (!nlines) {
		printf("(empty)\n");
		return;
	}

	rows = xrealloc(NULL, nlines, sizeof(*rows));
	nfields = xrealloc(NULL, nlines, sizeof(*nfields));
	for (r = 0; r < nlines; r++) {
		nfields[r] = split_tabs(lines[r], &rows[r]);
		if (nfields[r] > ncols)
			ncols = nfields[r];
	}
	header = rows[0];
	nheader = nfields[0];

	table_init(&t, ncols);
	for (c = 0; c < ncols; c++) {
		bool numeric = nlines > 1;

		for (r = 1; r < nlines; r++)
			if (c < nfields[r] && *rows[r][c] && !is_number(rows[r][c]))
				numeric = false;
		t.right[c] = numeric;
	}
	for (r = 0; r < nlines; r++) {
		for (c = 0; c < ncols; c++) {
			const char *cell = c < nfields[r] ? rows[r][c] : "";
			char b[32];

			if (r == 0) {
				char up[64];
				size_t i;

				/* Header in capitals, like the other tables. */
				for (i = 0; cell[i] && i + 1 < sizeof(up); i++)
					up[i] = (cell[i] >= 'a' && cell[i] <= 'z') ?
						cell[i] - 'a' + 'A' : cell[i];
				up[i] = '\0';
				table_add(&t, up);
			} else if (!exact && is_decimal(cell) &&
				   is_bytes_column(file, header, nheader, c)) {
				table_add(&t, fmt_bytes(b, sizeof(b),
							strtoull(cell, NULL, 10), false));
			} else {
				table_add(&t, cell);
			}
		}
	}
	table_print(&t, stdout);
	if (nlines == 1)
		printf("(none)\n");

	table_free(&t);
	for (r = 0; r < nlines; r++)
		free(rows[r]);
	free(rows);
	free(nfields);
	free(lines);
}

/*
 * Prints @text, "name<TAB>value" lines, as a two-column table: @row adds
 * the two cells of a line's @n fields @f, bytes humanised unless @exact.
 * Splits @text in place.
 */
static void print_name_values(char *text, bool exact,
			      void (*row)(struct table *t, char **f, size_t n, bool exact))
{
	char *line = text;
	struct table t;

	table_init(&t, 2);
	while (*line) {
		char *nl = strchr(line, '\n'), **f;
		size_t n;

		if (nl)
			*nl = '\0';
		n = split_tabs(line, &f);
		row(&t, f, n, exact);
		free(f);
		if (!nl)
			break;
		line = nl + 1;
	}
	table_print(&t, stdout);
	table_free(&t);
}

/* A line of the replay file's totals: "target NAME<TAB>N" or "name<TAB>value". */
static void replay_total_row(struct table *t, char **f, size_t n, bool exact)
{
	bool bytes;
	char b[32];

	if (n == 3 && !strcmp(f[0], "target")) {
		table_addf(t, "target %s:", f[1]);
		table_addf(t, "%s session%s", f[2], strcmp(f[2], "1") ? "s" : "");
		return;
	}
	bytes = n == 2 && !strcmp(f[0], "mapped") && !exact && is_decimal(f[1]);
	table_addf(t, "%s:", f[0]);
	if (bytes)
		fmt_bytes(b, sizeof(b), strtoull(f[1], NULL, 10), false);
	table_add(t, bytes ? b : n > 1 ? f[1] : "");
}

/* A line of the devmem file before its table: kind, total, used, evictions. */
static void devmem_head_row(struct table *t, char **f, size_t n, bool exact)
{
	char b[32];

	table_addf(t, "%s:", f[0]);
	if (n < 2)
		table_add(t, "");
	else if (!exact && is_decimal(f[1]) && (!strcmp(f[0], "total") || !strcmp(f[0], "used")))
		table_add(t, fmt_bytes(b, sizeof(b), strtoull(f[1], NULL, 10), false));
	else if (!strcmp(f[0], "evictions"))
		table_addf(t, "%s pages", f[1]);
	else
		table_add(t, f[1]);
}

/*
 * The replay file: a table of sessions, then "name<TAB>total" lines, then
 * "target<TAB>name<TAB>sessions" lines.  The table is printed as the other
 * files are, the rest under it.
 */
static void print_replay_file(char *data, bool exact)
{
	static const char *const totals[] = { "sessions", "mapped", "table_pages" };
	char *line, *rest = NULL, *head;
	size_t i;

	/* The table ends before the first line that is a total. */
	for (line = strchr(data, '\n'); line && line[1] && !rest; line = strchr(line + 1, '\n'))
		for (i = 0; i < ARRAY_SIZE(totals); i++)
			if (!strncmp(line + 1, totals[i], strlen(totals[i])) &&
			    line[1 + strlen(totals[i])] == '\t')
				rest = line + 1;

	head = xrealloc(NULL, rest ? (size_t)(rest - data) + 1 : strlen(data) + 1, 1);
	memcpy(head, data, rest ? (size_t)(rest - data) : strlen(data));
	head[rest ? rest - data : (ptrdiff_t)strlen(data)] = '\0';
	print_tsv_table("replay", head, exact);
	free(head);
	if (!rest)
		return;

	printf("\n");
	print_name_values(rest, exact, replay_total_row);
}

/*
 * The devmem file: "name<TAB>value" lines (kind, total, used, evictions),
 * then a table whose header line starts with "pid".  Returns the start of
 * that header line, or NULL if there is none.
 */
static char *devmem_table(char *data)
{
	char *line = data;

	while (line && *line) {
		if (!strncmp(line, "pid\t", 4))
			return line;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

/*
 * Prints the lines of the devmem file before its table, @head up to
 * @end, as "name: value" lines, bytes humanised unless @exact.
 */
static void print_devmem_head(const char *head, const char *end, bool exact)
{
	size_t len = end ? (size_t)(end - head) : strlen(head);
	char *copy = xrealloc(NULL, len + 1, 1);

	memcpy(copy, head, len);
	copy[len] = '\0';
	print_name_values(copy, exact, devmem_head_row);
	free(copy);
}

/* The devmem file as 'accmapctl list devmem' shows it. */
static void print_devmem_file(char *data, bool exact)
{
	char *table = devmem_table(data);

	print_devmem_head(data, table, exact);
	if (!table)
		return;
	printf("\n");
	print_tsv_table("devmem", table, exact);
}

static int cmd_list(int argc, char **argv)
{
	enum { OPT_DEBUGFS = 256 };
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "raw", no_argument, NULL, 'r' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = DEBUGFS_ACCMAP;
	bool want[LIST_NFILES] = { false };
	bool exact = false, raw = false, named = false, first = true;
	size_t i, nwanted = 0;
	int c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:hr", opts, list_usage, &status)) != OPT_END) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case 'r':
			raw = true;
			break;
		case OPT_DEBUGFS:
			dir = optarg;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	for (; optind < argc; optind++) {
		for (i = 0; i < LIST_NFILES; i++)
			if (!strcmp(argv[optind], list_files[i].name))
				break;
		if (i == LIST_NFILES)
			return usage_error("unknown debugfs file '%s'", argv[optind]);
		want[i] = true;
		named = true;
	}
	for (i = 0; i < LIST_NFILES; i++) {
		if (!named)
			want[i] = list_files[i].by_default;
		nwanted += want[i];
	}

	for (i = 0; i < LIST_NFILES; i++) {
		char path[4096];
		char *data = NULL;
		size_t len = 0;
		int ret;

		if (!want[i])
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, list_files[i].name) >=
		    (int)sizeof(path))
			return usage_error("debugfs path too long");
		ret = read_file(path, &data, &len);
		/* Older modules lack some files: fine unless asked for. */
		if (ret == -ENOENT && !named && list_files[i].optional &&
		    !access(dir, F_OK))
			continue;
		if (ret) {
			fail(ret, "read %s", path);
			explain_debugfs(ret, dir);
			return EXIT_FAILURE;
		}

		if (raw) {
			/* One file: exactly its bytes; more: a "# name" line each. */
			if (nwanted > 1)
				printf("# %s\n", list_files[i].name);
			fwrite(data, 1, len, stdout);
		} else {
			if (!first)
				printf("\n");
			printf("%s:\n", list_files[i].name);
			if (!strcmp(list_files[i].name, "replay"))
				print_replay_file(data, exact);
			else if (!strcmp(list_files[i].name, "devmem"))
				print_devmem_file(data, exact);
			else
				print_tsv_table(list_files[i].name, data, exact);
		}
		first = false;
		free(data);
	}
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* accmapctl svm */

static void svm_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s svm [-b] [-p PID] [--raw] [--debugfs DIR]\n"
		"\n"
		"Shows the SVM sessions from debugfs (file svm): per session of each\n"
		"client, whose GPU address space mirrors the process, the process, the\n"
		"session id, the mirrored range (start, size), the bytes the GPU has\n"
		"entries for now (mapped) and of those the bytes in 2 MiB blocks\n"
		"(huge), GPU faults serviced, fatal faults (accesses the process's\n"
		"mappings did not allow), invalidations (CPU mapping changes that hit\n"
		"the range), pages given GPU entries ever and, where the module has\n"
		"device memory, the bytes of the session's GPU entries that point into\n"
		"it (device); then the totals.  Then the device memory (file devmem):\n"
		"its kind (private: the CPU cannot map it, a CPU access brings a page\n"
		"back; coherent: the CPU reads it in place), size, use and evictions,\n"
		"and per session the bytes on the device and the pages migrated each\n"
		"way, of those back the ones CPU faults and evictions brought; or that\n"
		"there is none.  Migrating is the program's own call (ACCMAP_IOC_SVM\n"
		"works only from the process a session mirrors): see accmap_svm_migrate().\n"
		"Reading debugfs needs root and a mounted debugfs.\n"
		"\n"
		"  -b, --bytes       exact byte counts instead of KiB/MiB/GiB\n"
		"  -p, --pid PID     only the sessions of process PID\n"
		"  -r, --raw         print the svm file as it is (tab-separated)\n"
		"      --debugfs DIR the accmap debugfs directory (default %s)\n"
		"  -h, --help        this text\n",
		prog, DEBUGFS_ACCMAP);
}

/* The most columns filter_rows() sums. */
#define SUM_COLS_MAX	8

/**
 * struct row_sums - sums over the rows of a debugfs table
 * @rows: rows kept
 * @found: per column asked for, whether the header line has it
 * @sum: per column asked for, the sum of its cells in the rows kept
 */
struct row_sums {
	uint64_t rows;
	bool found[SUM_COLS_MAX];
	uint64_t sum[SUM_COLS_MAX];
};

/*
 * Keeps the header line of the tab-separated table @data and the rows of
 * process @pid (first column; all rows if @pid is 0), in place, and sums
 * the kept rows' cells of the @ncols columns named in @cols.
 */
static void filter_rows(char *data, uint32_t pid, const char *const *cols, size_t ncols,
			struct row_sums *sums)
{
	int col[SUM_COLS_MAX];
	char *in = data, *out = data;
	bool header = true;
	size_t i;

	memset(sums, 0, sizeof(*sums));
	for (i = 0; i < ncols; i++)
		col[i] = -1;
	while (*in) {
		char *nl = strchr(in, '\n'), *line, **f;
		size_t len = nl ? (size_t)(nl - in) + 1 : strlen(in), n;
		bool keep = header;

		line = xrealloc(NULL, len + 1, 1);
		memcpy(line, in, len);
		line[len] = '\0';
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		n = split_tabs(line, &f);
		for (i = 0; header && i < ncols; i++)
			for (size_t c = 0; c < n; c++)
				if (!strcmp(f[c], cols[i])) {
					col[i] = (int)c;
					sums->found[i] = true;
				}
		if (!header && *f[0]) {
			keep = !pid || strtoul(f[0], NULL, 10) == pid;
			if (keep) {
				sums->rows++;
				for (i = 0; i < ncols; i++)
					if (col[i] >= 0 && (size_t)col[i] < n &&
					    is_decimal(f[col[i]]))
						sums->sum[i] += strtoull(f[col[i]], NULL, 10);
			}
		}
		free(f);
		free(line);
		if (keep) {
			memmove(out, in, len);
			out += len;
		}
		header = false;
		in += len;
	}
	*out = '\0';
}

/* The columns of the svm file accmapctl svm adds up, in this order. */
enum { SV_MAPPED, SV_HUGE, SV_FAULTS, SV_FATAL, SV_INVAL, SV_PAGES, SV_DEVICE, SV_NCOLS };

static const char *const svm_total_cols[SV_NCOLS] = {
	[SV_MAPPED] = "mapped", [SV_HUGE] = "huge", [SV_FAULTS] = "faults",
	[SV_FATAL] = "fatal", [SV_INVAL] = "invalidations", [SV_PAGES] = "pages_mapped",
	[SV_DEVICE] = "device",
};

/* The columns of the devmem file's table accmapctl svm adds up. */
enum { DM_TO_DEVICE, DM_TO_SYSTEM, DM_CPU_FAULTS, DM_EVICTIONS, DM_NCOLS };

static const char *const devmem_total_cols[DM_NCOLS] = {
	[DM_TO_DEVICE] = "to_device", [DM_TO_SYSTEM] = "to_system",
	[DM_CPU_FAULTS] = "cpu_faults", [DM_EVICTIONS] = "evictions",
};

static void svm_print_totals(const struct row_sums *tot, bool exact)
{
	struct table t;
	char b[32], h[32];

	table_init(&t, 2);
	table_add(&t, "sessions:");
	table_addf(&t, "%llu", (unsigned long long)tot->rows);
	table_add(&t, "mapped:");
	table_addf(&t, "%s (huge %s)", fmt_bytes(b, sizeof(b), tot->sum[SV_MAPPED], exact),
		   fmt_bytes(h, sizeof(h), tot->sum[SV_HUGE], exact));
	/* Modules without device memory have no such column. */
	if (tot->found[SV_DEVICE]) {
		table_add(&t, "on device:");
		table_add(&t, fmt_bytes(b, sizeof(b), tot->sum[SV_DEVICE], exact));
	}
	table_add(&t, "faults:");
	table_addf(&t, "%llu (fatal %llu)", (unsigned long long)tot->sum[SV_FAULTS],
		   (unsigned long long)tot->sum[SV_FATAL]);
	table_add(&t, "invalidations:");
	table_addf(&t, "%llu", (unsigned long long)tot->sum[SV_INVAL]);
	table_add(&t, "pages mapped:");
	table_addf(&t, "%llu", (unsigned long long)tot->sum[SV_PAGES]);
	table_print(&t, stdout);
	table_free(&t);
}

/*
 * The device memory part of accmapctl svm, from the devmem file in @dir:
 * kind and use, the sessions of @pid (all if 0) with their migrations,
 * and the sums of those.  0, or 1 after a message if the file exists but
 * cannot be read.
 */
static int svm_print_devmem(const char *dir, uint32_t pid, bool exact)
{
	char path[4096], *data, *table;
	struct row_sums tot;
	struct table t;
	size_t len;
	int ret;

	if (snprintf(path, sizeof(path), "%s/devmem", dir) >= (int)sizeof(path))
		return usage_error("debugfs path too long");
	ret = read_file(path, &data, &len);
	if (ret == -ENOENT) {
		/* The module makes the file only when it has device memory. */
		printf("device memory: none\n");
		return EXIT_SUCCESS;
	}
	if (ret) {
		fail(ret, "read %s", path);
		return EXIT_FAILURE;
	}
	printf("device memory:\n");
	table = devmem_table(data);
	print_devmem_head(data, table, exact);
	if (table) {
		filter_rows(table, pid, devmem_total_cols, DM_NCOLS, &tot);
		printf("\n");
		print_tsv_table("devmem", table, exact);
		printf("\n");
		table_init(&t, 2);
		table_add(&t, "migrated:");
		table_addf(&t, "%llu pages to the device, %llu back",
			   (unsigned long long)tot.sum[DM_TO_DEVICE],
			   (unsigned long long)tot.sum[DM_TO_SYSTEM]);
		table_add(&t, "of those back:");
		table_addf(&t, "%llu by CPU faults, %llu evicted",
			   (unsigned long long)tot.sum[DM_CPU_FAULTS],
			   (unsigned long long)tot.sum[DM_EVICTIONS]);
		table_print(&t, stdout);
		table_free(&t);
	}
	free(data);
	return EXIT_SUCCESS;
}

static int cmd_svm(int argc, char **argv)
{
	enum { OPT_DEBUGFS = 256 };
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "raw", no_argument, NULL, 'r' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = DEBUGFS_ACCMAP;
	bool exact = false, raw = false;
	struct row_sums tot;
	char path[4096], *data;
	uint32_t pid = 0;
	int ret, c, status;
	size_t len;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:hp:r", opts, svm_usage, &status)) != OPT_END) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case 'p':
			if (!parse_u32(optarg, INT32_MAX, &pid) || !pid)
				return usage_error("bad pid '%s'", optarg);
			break;
		case 'r':
			raw = true;
			break;
		case OPT_DEBUGFS:
			dir = optarg;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	if (snprintf(path, sizeof(path), "%s/svm", dir) >= (int)sizeof(path))
		return usage_error("debugfs path too long");
	ret = read_file(path, &data, &len);
	if (ret) {
		fail(ret, "read %s", path);
		if (ret == -ENOENT && !access(dir, F_OK))
			note("the accmap module has no svm file: it predates SVM");
		else
			explain_debugfs(ret, dir);
		return EXIT_FAILURE;
	}
	filter_rows(data, pid, svm_total_cols, SV_NCOLS, &tot);
	if (raw) {
		fputs(data, stdout);
		free(data);
		return EXIT_SUCCESS;
	}
	print_tsv_table("svm", data, exact);
	printf("\n");
	svm_print_totals(&tot, exact);
	free(data);
	printf("\n");
	return svm_print_devmem(dir, pid, exact);
}

/* ------------------------------------------------------------------ */
/* accmapctl alloc */

static void alloc_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] alloc SIZE [--heap-mask M] [--wc | --uncached]\n"
		"                          [--contiguous] [--tag T] [--export] [--hold]\n"
		"\n"
		"Creates a buffer of SIZE bytes (suffixes K, M, G, T: powers of 1024)\n"
		"and allocates its memory, then prints its id, size, heap, flags and\n"
		"tag.  The buffer is freed when accmapctl exits.\n"
		"\n"
		"  -m, --heap-mask M  heaps to allocate from, one bit per heap id\n"
		"                     (default 0x%x: the system heap)\n"
		"  -w, --wc           write-combined instead of cached\n"
		"  -u, --uncached     uncached instead of cached\n"
		"  -c, --contiguous   one physically contiguous block (CMA where the\n"
		"                     kernel has it; fails with ENOMEM when there is none)\n"
		"  -t, --tag T        accounting tag, 0..65535 (default 0)\n"
		"  -e, --export       also export it as a dma-buf and print the fd\n"
		"  -H, --hold         keep the buffer until SIGINT or SIGTERM\n"
		"  -h, --help         this text\n",
		prog, ACCMAP_HEAP_MASK_SYSTEM);
}

static void on_signal(int sig)
{
	(void)sig;
}

/* Blocks until SIGINT or SIGTERM; they must be blocked already. */
static void wait_for_stop(const sigset_t *set)
{
	int sig;

	while (sigwait(set, &sig))
		;
}

static int cmd_alloc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "heap-mask", required_argument, NULL, 'm' },
		{ "wc", no_argument, NULL, 'w' },
		{ "uncached", no_argument, NULL, 'u' },
		{ "contiguous", no_argument, NULL, 'c' },
		{ "tag", required_argument, NULL, 't' },
		{ "export", no_argument, NULL, 'e' },
		{ "hold", no_argument, NULL, 'H' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t heap_mask = ACCMAP_HEAP_MASK_SYSTEM, flags = 0, tag = 0, id;
	bool export = false, hold = false;
	struct accmap_info info;
	int fd, dmabuf_fd = -1;
	int ret, status, c;
	char b[96], name[ACCMAP_HEAP_NAME_LEN + 1];
	struct sigaction sa;
	sigset_t stop;
	uint64_t size;

	begin_options(argv);
	while ((c = next_option(argc, argv, "m:wuct:eHd:h", opts, alloc_usage,
				&status)) != OPT_END) {
		switch (c) {
		case 'm':
			if (!parse_u32(optarg, UINT32_MAX, &heap_mask))
				return usage_error("bad heap mask '%s'", optarg);
			break;
		case 'w':
			flags |= ACCMAP_ALLOC_WRITECOMBINE;
			break;
		case 'u':
			flags |= ACCMAP_ALLOC_UNCACHED;
			break;
		case 'c':
			flags |= ACCMAP_ALLOC_CONTIGUOUS;
			break;
		case 't':
			if (!parse_u32(optarg, UINT16_MAX, &tag))
				return usage_error("bad tag '%s' (0..65535)", optarg);
			break;
		case 'e':
			export = true;
			break;
		case 'H':
			hold = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if ((flags & ACCMAP_ALLOC_WRITECOMBINE) && (flags & ACCMAP_ALLOC_UNCACHED))
		return usage_error("--wc and --uncached exclude each other");
	if (optind >= argc)
		return usage_error("missing SIZE");
	if (!parse_size(argv[optind], &size))
		return usage_error("bad SIZE '%s' (bytes, or with K, M, G or T)",
				   argv[optind]);
	if (optind + 1 != argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);

	if (hold) {
		/*
		 * Caught (not ignored, as a background job's SIGINT would be)
		 * and blocked from here on, so that sigwait() takes them.
		 */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigemptyset(&stop);
		sigaddset(&stop, SIGINT);
		sigaddset(&stop, SIGTERM);
		sigprocmask(SIG_BLOCK, &stop, NULL);
	}

	ret = open_device(&fd);
	if (ret)
		return ret;

	status = EXIT_FAILURE;
	ret = accmap_alloc_buffer(fd, size, heap_mask, flags, (uint16_t)tag, &id);
	if (ret) {
		fail(ret, "accmap_alloc_buffer(size %llu, heap mask 0x%x, flags 0x%x, tag %u)",
		     (unsigned long long)size, heap_mask, flags, tag);
		goto out_close;
	}
	ret = accmap_info(fd, id, &info);
	if (ret) {
		fail(ret, "accmap_info(id %u)", id);
		goto out_free;
	}
	if (export) {
		ret = accmap_get_fd(fd, id, O_RDWR | O_CLOEXEC, &dmabuf_fd);
		if (ret) {
			fail(ret, "accmap_get_fd(id %u, O_RDWR | O_CLOEXEC)", id);
			goto out_free;
		}
	}

	printf("id:     %u\n", id);
	printf("size:   %llu (%s)\n", (unsigned long long)info.size,
	       fmt_bytes(b, sizeof(b), info.size, false));
	heap_name(fd, info.heap, name, sizeof(name));
	printf("heap:   %u%s%s%s\n", info.heap, *name ? " (" : "", name, *name ? ")" : "");
	printf("flags:  %s\n", fmt_alloc_flags(b, sizeof(b), info.flags));
	printf("tag:    %u (0x%04x)\n", info.tag, info.tag);
	if (export)
		printf("dmabuf: fd %d (pid %d)\n", dmabuf_fd, (int)getpid());
	status = EXIT_SUCCESS;

	if (hold) {
		printf("holding, press Ctrl-C\n");
		fflush(stdout);
		wait_for_stop(&stop);
	}

	if (dmabuf_fd >= 0)
		close(dmabuf_fd);
out_free:
	ret = accmap_free(fd, id);
	if (ret && status == EXIT_SUCCESS)
		status = fail(ret, "accmap_free(id %u)", id);
out_close:
	accmap_close(fd);
	return status;
}

/* ------------------------------------------------------------------ */
/* accmapctl info */

static void info_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] info --fd N [--pid P]\n"
		"\n"
		"Imports dma-buf file descriptor N (ACCMAP_IOC_FROM_FD) and prints what\n"
		"ACCMAP_IOC_INFO says about the buffer.  N is inherited from the parent,\n"
		"as in 'prog-that-passes-fd-5 accmapctl info --fd 5', or, with --pid,\n"
		"taken from the running process P (pidfd_getfd(2): needs the right to\n"
		"ptrace P), for instance one started with 'accmapctl alloc --export\n"
		"--hold'.  The import adds one handle reference while accmapctl runs.\n"
		"\n"
		"  -f, --fd N    the dma-buf file descriptor\n"
		"  -p, --pid P   take fd N from process P instead of from this one\n"
		"  -h, --help    this text\n",
		prog);
}

/*
 * A copy of file descriptor @target_fd of process @pid in @fd; 0, or -1
 * after saying which call failed.
 */
static int fd_from_process(uint32_t pid, int target_fd, int *fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	long pidfd, ret;
	int err;

	pidfd = syscall(SYS_pidfd_open, (long)pid, 0L);
	if (pidfd < 0) {
		fail(-errno, "pidfd_open(pid %u)", pid);
		return -1;
	}
	ret = syscall(SYS_pidfd_getfd, pidfd, (long)target_fd, 0L);
	err = errno;
	close((int)pidfd);
	if (ret < 0) {
		fail(-err, "pidfd_getfd(pid %u, fd %d)", pid, target_fd);
		return -1;
	}
	*fd = (int)ret;
	return 0;
#else
	(void)target_fd;
	(void)fd;
	fail(-EOPNOTSUPP, "pidfd_getfd(pid %u)", pid);
	return -1;
#endif
}

/* accmapctl --json info: the buffer's ACCMAP_IOC_INFO, as one object. */
static void info_json(int fd, const struct accmap_info *info)
{
	static const struct { uint32_t bit; const char *name; } states[] = {
		{ ACCMAP_STATE_ALLOCATED, "allocated" },
		{ ACCMAP_STATE_EXPORTED, "exported" },
		{ ACCMAP_STATE_READONLY, "read-only" },
		{ ACCMAP_STATE_CONTIGUOUS, "contiguous" },
	};
	char name[ACCMAP_HEAP_NAME_LEN + 1];
	struct json j;
	size_t k;

	json_init(&j);
	json_begin_object(&j, NULL);
	json_u64(&j, "id", info->id);
	json_u64(&j, "size", info->size);
	if (info->heap == ACCMAP_HEAP_NONE) {
		json_null(&j, "heap");
		json_null(&j, "heap_name");
	} else {
		json_u64(&j, "heap", info->heap);
		heap_name(fd, info->heap, name, sizeof(name));
		json_string(&j, "heap_name", name);
	}
	json_string(&j, "cache", info->flags & ACCMAP_ALLOC_UNCACHED ? "uncached" :
		    info->flags & ACCMAP_ALLOC_WRITECOMBINE ? "writecombine" : "cached");
	json_u64(&j, "flags", info->flags);
	json_begin_array(&j, "state");
	for (k = 0; k < ARRAY_SIZE(states); k++)
		if (info->state & states[k].bit)
			json_string(&j, NULL, states[k].name);
	json_end_array(&j);
	json_u64(&j, "tag", info->tag);
	json_u64(&j, "handle_refs", info->handle_refs);
	json_u64(&j, "exports", info->exports);
	json_u64(&j, "maps", info->maps);
	json_u64(&j, "attachments", info->attachments);
	json_u64(&j, "vmaps", info->vmaps);
	json_end_object(&j);
	json_finish(&j, stdout);
}

static int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t target_fd = UINT32_MAX, pid = 0, id;
	char b[96], name[ACCMAP_HEAP_NAME_LEN + 1];
	struct accmap_info info;
	int fd, dmabuf_fd, ret, c, status;
	bool have_pid = false;

	begin_options(argv);
	while ((c = next_option(argc, argv, "f:p:d:h", opts, info_usage, &status)) != OPT_END) {
		switch (c) {
		case 'f':
			if (!parse_u32(optarg, INT32_MAX, &target_fd))
				return usage_error("bad fd '%s'", optarg);
			break;
		case 'p':
			if (!parse_u32(optarg, INT32_MAX, &pid) || !pid)
				return usage_error("bad pid '%s'", optarg);
			have_pid = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (target_fd == UINT32_MAX)
		return usage_error("missing --fd N");

	dmabuf_fd = (int)target_fd;
	if (have_pid && fd_from_process(pid, (int)target_fd, &dmabuf_fd))
		return EXIT_FAILURE;

	ret = open_device(&fd);
	if (ret)
		goto out_dmabuf;

	status = EXIT_FAILURE;
	ret = accmap_from_fd(fd, dmabuf_fd, &id);
	if (ret) {
		fail(ret, "accmap_from_fd(fd %d)", dmabuf_fd);
		if (ret == -EBADF && !have_pid)
			note("fd %d is not open in this process", dmabuf_fd);
		else if (ret == -EINVAL)
			note("fd %d is not a dma-buf", dmabuf_fd);
		else if (ret == -EXDEV)
			note("fd %d is a dma-buf of another exporter", dmabuf_fd);
		goto out_close;
	}
	ret = accmap_info(fd, id, &info);
	if (ret) {
		fail(ret, "accmap_info(id %u)", id);
		goto out_free;
	}

	if (json_out) {
		info_json(fd, &info);
		status = EXIT_SUCCESS;
		goto out_free;
	}

	printf("id:           %u\n", info.id);
	printf("size:         %llu (%s)\n", (unsigned long long)info.size,
	       fmt_bytes(b, sizeof(b), info.size, false));
	if (info.heap == ACCMAP_HEAP_NONE) {
		printf("heap:         none\n");
	} else {
		heap_name(fd, info.heap, name, sizeof(name));
		printf("heap:         %u%s%s%s\n", info.heap, *name ? " (" : "", name,
		       *name ? ")" : "");
	}
	printf("flags:        %s\n", fmt_alloc_flags(b, sizeof(b), info.flags));
	printf("state:        %s\n", fmt_state(b, sizeof(b), info.state));
	printf("tag:          %u (0x%04x)\n", info.tag, info.tag);
	printf("handle refs:  %u (this import included)\n", info.handle_refs);
	printf("exports:      %u\n", info.exports);
	printf("maps:         %u\n", info.maps);
	printf("attachments:  %u\n", info.attachments);
	printf("vmaps:        %u (dma-bufs an importer holds a kernel mapping of)\n",
	       info.vmaps);
	printf("contiguous:   %s\n",
	       info.state & ACCMAP_STATE_CONTIGUOUS ? "yes (one block)" : "no");
	status = EXIT_SUCCESS;

out_free:
	ret = accmap_free(fd, id);
	if (ret && status == EXIT_SUCCESS)
		status = fail(ret, "accmap_free(id %u)", id);
out_close:
	accmap_close(fd);
	ret = status;
out_dmabuf:
	if (have_pid)
		close(dmabuf_fd);
	return ret;
}

/* ------------------------------------------------------------------ */
/* accmapctl checkpoint */

static void checkpoint_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s checkpoint --pid PID\n"
		"\n"
		"Says what a checkpoint of process PID with CRIU and the accmap plugin\n"
		"(tools/criu) would save, or why it would fail, without changing the\n"
		"process: for every /dev/accmap file it holds, the ids, buffers and\n"
		"replay sessions (ACCMAP_CKPT_OP_STATE); for every accmap dma-buf, its\n"
		"buffer; and the mappings that CRIU cannot restore.  Needs the right to\n"
		"take the process's files (pidfd_getfd) and CAP_CHECKPOINT_RESTORE.\n"
		"\n"
		"  -p, --pid PID  the process\n"
		"  -h, --help     this text\n",
		prog);
}

static const char *ckpt_kind(uint32_t kind)
{
	switch (kind) {
	case ACCMAP_CKPT_KIND_EMPTY:
		return "empty";
	case ACCMAP_CKPT_KIND_ALLOC:
		return "alloc";
	case ACCMAP_CKPT_KIND_FROM_VA:
		return "from-va";
	default:
		return "?";
	}
}

/* One /dev/accmap file of the process: its state, or why it refuses. */
static bool checkpoint_client(int fd, int target_fd, uint64_t *bytes)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_STATE };
	const struct accmap_ckpt_handle *h;
	struct accmap_ckpt_client *st;
	char b[64], f[80];
	const char *p;
	uint32_t i;
	int ret;

	ret = ioctl(fd, ACCMAP_IOC_CHECKPOINT, &arg) ? -errno : 0;
	if (ret == -ENOSPC) {
		st = malloc(arg.size);
		if (!st)
			return fail(-ENOMEM, "state of fd %d", target_fd), false;
		arg.data = (uintptr_t)st;
		ret = ioctl(fd, ACCMAP_IOC_CHECKPOINT, &arg) ? -errno : 0;
	} else {
		st = NULL;
	}
	if (ret) {
		free(st);
		fail(ret, "fd %d: a dump would fail", target_fd);
		if (arg.bad_kind == ACCMAP_CKPT_BAD_SESSION_BUSY)
			note("replay session %u is running, or maps a buffer with no id",
			     arg.bad_id);
		else if (arg.bad_kind == ACCMAP_CKPT_BAD_SESSION_MMIO)
			note("replay session %u drives a register window", arg.bad_id);
		else if (ret == -EPERM)
			note("CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) is needed");
		return false;
	}
	printf("fd %d: /dev/accmap, opened by pid %u: %u ids, %u replay sessions, next id %u\n",
	       target_fd, st->pid, st->nr_handles, st->nr_sessions, st->next_id);
	printf("  %-6s %-6s %-8s %-10s %-10s %-12s %-5s %s\n", "id", "serial", "kind",
	       "size", "heap", "flags", "tag", "state");
	h = (const void *)(st + 1);
	for (i = 0; i < st->nr_handles; i++) {
		printf("  %-6u %-6llu %-8s %-10s %-10s %-12s %-5u %s%s%s%s%s%s\n", h[i].id,
		       (unsigned long long)h[i].serial, ckpt_kind(h[i].kind),
		       fmt_bytes(b, sizeof(b), h[i].size, false),
		       h[i].heap_name[0] ? h[i].heap_name : "-",
		       h[i].kind == ACCMAP_CKPT_KIND_ALLOC ?
		       fmt_alloc_flags(f, sizeof(f), h[i].flags) : "-", h[i].tag,
		       h[i].state & ACCMAP_CKPT_H_ID_RDONLY ? "ro-id " : "",
		       h[i].state & ACCMAP_CKPT_H_EXPORT_RDONLY ? "export-ro " : "",
		       h[i].state & ACCMAP_CKPT_H_EXPORT_RDWR ? "export-rw " : "",
		       h[i].map_offset ? "mappable " : "",
		       h[i].label[0] ? "label:" : "", h[i].label);
		if (h[i].kind == ACCMAP_CKPT_KIND_ALLOC)
			*bytes += h[i].size;
	}
	p = (const char *)(h + st->nr_handles);
	for (i = 0; i < st->nr_sessions; i++) {
		const struct accmap_ckpt_session *r = (const void *)p;

		printf("  session %u: %u maps%s", r->id, r->nr_maps,
		       r->flags & ACCMAP_REPLAY_SETUP_SVM ? ", SVM" : "");
		if (r->flags & ACCMAP_REPLAY_SETUP_SVM)
			printf(" [%#llx, %#llx), %u attribute ranges",
			       (unsigned long long)r->svm_start,
			       (unsigned long long)(r->svm_start + r->svm_size), r->nr_attrs);
		printf("\n");
		p += sizeof(*r) + r->nr_maps * sizeof(struct accmap_replay_map) +
		     r->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
	}
	free(st);
	return true;
}

/* The process's mappings CRIU cannot restore: accmap dma-buf files. */
static bool checkpoint_maps(uint32_t pid)
{
	char path[64], line[512];
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return fail(-errno, "open %s", path), false;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dmabuf:"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		printf("mapping of a dma-buf file: %s\n", line);
		ok = false;
	}
	fclose(f);
	if (!ok) {
		note("CRIU cannot restore mappings of dma-buf files");
		note("map accmap buffers through /dev/accmap (ACCMAP_IOC_MAP_OFFSET)");
	}
	return ok;
}

static int cmd_checkpoint(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[64], link[PATH_MAX], b[64];
	uint64_t bytes = 0;
	uint32_t pid = 0;
	bool ok = true;
	int dev, c, status, n = 0;
	struct dirent *de;
	DIR *dir;

	begin_options(argv);
	while ((c = next_option(argc, argv, "p:h", opts, checkpoint_usage, &status)) != OPT_END) {
		switch (c) {
		case 'p':
			if (!parse_u32(optarg, INT32_MAX, &pid) || !pid)
				return usage_error("bad pid '%s'", optarg);
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!pid)
		return usage_error("missing --pid PID");
	if (open_device(&dev))
		return EXIT_FAILURE;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	dir = opendir(path);
	if (!dir) {
		accmap_close(dev);
		return fail(-errno, "open %s", path), EXIT_FAILURE;
	}
	while ((de = readdir(dir))) {
		struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_DMABUF };
		char full[PATH_MAX];
		uint32_t tfd;
		ssize_t len;
		int fd;

		if (!parse_u32(de->d_name, INT32_MAX, &tfd))
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		len = readlink(full, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strcmp(link, "/dev/accmap") && strncmp(link, "/dmabuf:", 8))
			continue;
		if (fd_from_process(pid, (int)tfd, &fd)) {
			ok = false;
			continue;
		}
		n++;
		if (!strcmp(link, "/dev/accmap")) {
			ok &= checkpoint_client(fd, (int)tfd, &bytes);
		} else {
			arg.fd = fd;
			if (ioctl(dev, ACCMAP_IOC_CHECKPOINT, &arg)) {
				printf("fd %u: a dma-buf of another exporter: a dump would fail\n",
				       tfd);
				ok = false;
			} else {
				printf("fd %u: dma-buf (%s) of buffer serial %llu, %s\n", tfd,
				       arg.dmabuf_mode == O_RDWR ? "read-write" : "read-only",
				       (unsigned long long)arg.serial,
				       fmt_bytes(b, sizeof(b), arg.dmabuf_size, false));
			}
		}
		close(fd);
	}
	closedir(dir);
	accmap_close(dev);
	ok &= checkpoint_maps(pid);
	if (!n)
		printf("pid %u holds no accmap file\n", pid);
	printf("%s; buffer contents to save: at most %s (shared buffers once)\n",
	       ok ? "a dump would succeed" : "a dump would fail",
	       fmt_bytes(b, sizeof(b), bytes, false));
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ------------------------------------------------------------------ */
/* accmapctl label */

static void label_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] label TAG NAME\n"
		"\n"
		"Names accounting tag TAG (0..65535) for debugfs and accmapctl list\n"
		"(ACCMAP_IOC_SET_TAG_LABEL).  NAME is printable ASCII, at most %d\n"
		"characters; NAME \"\" removes the name.  Names are shared by all users\n"
		"of the device.\n"
		"\n"
		"  -h, --help    this text\n",
		prog, ACCMAP_LABEL_LEN - 1);
}

static int cmd_label(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int fd, ret, c, status;
	uint32_t tag;

	begin_options(argv);
	while ((c = next_option(argc, argv, "d:h", opts, label_usage, &status)) != OPT_END) {
		switch (c) {
		case OPT_EXIT:
			return status;
		}
	}
	if (argc - optind != 2)
		return usage_error("need TAG and NAME");
	if (!parse_u32(argv[optind], UINT16_MAX, &tag))
		return usage_error("bad tag '%s' (0..65535)", argv[optind]);

	ret = open_device(&fd);
	if (ret)
		return ret;
	ret = accmap_set_tag_label(fd, (uint16_t)tag, argv[optind + 1]);
	accmap_close(fd);
	if (ret) {
		fail(ret, "accmap_set_tag_label(tag %u, \"%s\")", tag, argv[optind + 1]);
		if (ret == -ENAMETOOLONG)
			note("a label has at most %d characters", ACCMAP_LABEL_LEN - 1);
		return EXIT_FAILURE;
	}
	if (*argv[optind + 1])
		printf("tag %u (0x%04x): %s\n", tag, tag, argv[optind + 1]);
	else
		printf("tag %u (0x%04x): label removed\n", tag, tag);
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Replay: names of things */

static const char *const pgt_names[ACCMAP_PGT_COUNT] = {
	[ACCMAP_PGT_MALI_AARCH64_4K] = "aarch64-4k",
	[ACCMAP_PGT_MALI_LPAE] = "lpae",
};

static const char *pgt_name(uint32_t format)
{
	return format < ACCMAP_PGT_COUNT ? pgt_names[format] : "unknown";
}

/* "aarch64-4k,lpae" for a mask of formats. */
static const char *fmt_formats(char *buf, size_t len, uint32_t formats)
{
	size_t used = 0;
	uint32_t f;

	buf[0] = '\0';
	for (f = 0; f < 32; f++) {
		if (!(formats & (1U << f)))
			continue;
		if (f < ACCMAP_PGT_COUNT)
			used += snprintf(buf + used, len - used, "%s%s", used ? "," : "",
					 pgt_names[f]);
		else
			used += snprintf(buf + used, len - used, "%s%u", used ? "," : "", f);
		if (used >= len)
			break;
	}
	return buf;
}

static const char *const reason_names[] = {
	[ACCMAP_REPLAY_OK] = "OK",
	[ACCMAP_REPLAY_INVALID] = "INVALID",
	[ACCMAP_REPLAY_MISMATCH] = "MISMATCH",
	[ACCMAP_REPLAY_TIMEOUT] = "TIMEOUT",
	[ACCMAP_REPLAY_MMU_FAULT] = "MMU_FAULT",
	[ACCMAP_REPLAY_SIGNAL] = "SIGNAL",
	[ACCMAP_REPLAY_JOB_FAILED] = "JOB_FAILED",
};

/* Mali job exception codes (JS_STATUS), the ones a replay may see. */
static const char *js_status_name(uint32_t status)
{
	static const struct {
		uint32_t code;
		const char *name;
	} codes[] = {
		{ 0x01, "DONE" }, { 0x02, "INTERRUPTED" }, { 0x03, "STOPPED" },
		{ 0x04, "TERMINATED" }, { 0x08, "ACTIVE" }, { 0x40, "JOB_CONFIG_FAULT" },
		{ 0x41, "JOB_POWER_FAULT" }, { 0x42, "JOB_READ_FAULT" },
		{ 0x43, "JOB_WRITE_FAULT" }, { 0x44, "JOB_AFFINITY_FAULT" },
		{ 0x48, "JOB_BUS_FAULT" }, { 0x50, "INSTR_INVALID_PC" },
		{ 0x51, "INSTR_INVALID_ENC" }, { 0x58, "DATA_INVALID_FAULT" },
		{ 0x59, "TILE_RANGE_FAULT" }, { 0x5a, "ADDR_RANGE_FAULT" },
		{ 0x60, "OUT_OF_MEMORY" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(codes); i++)
		if (codes[i].code == status)
			return codes[i].name;
	return "?";
}

static const char *reason_name(uint32_t reason)
{
	return reason < ARRAY_SIZE(reason_names) ? reason_names[reason] : "?";
}

/* Nanoseconds for people: "850 ns", "12.3 us", "4.56 ms", "1.234 s". */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* Where and why a run stopped, on stderr; @op is the failing op or NULL. */
static void explain_run(const struct accmap_replay_run *r, const struct accmap_replay_op *op)
{
	if (op && r->failed_op < r->nr_ops)
		note("stopped at op %u of %u (%s offset 0x%x mask 0x%x value 0x%x): %s, read 0x%x",
		     r->failed_op, r->nr_ops, accmap_rec_op_name(op->op), op->offset, op->mask,
		     op->value, reason_name(r->reason), r->value);
	else
		note("stopped after %u of %u ops: %s", r->done, r->nr_ops,
		     reason_name(r->reason));
	if (r->reason == ACCMAP_REPLAY_MMU_FAULT)
		note("MMU fault in address space %u at GPU VA 0x%llx, FAULTSTATUS 0x%x",
		     r->fault_as, (unsigned long long)r->fault_addr, r->fault_status);
	if (r->reason == ACCMAP_REPLAY_JOB_FAILED)
		note("job slot %u failed: JS_STATUS 0x%02x (%s) at descriptor 0x%llx", r->fault_as,
		     r->fault_status, js_status_name(r->fault_status),
		     (unsigned long long)r->fault_addr);
}

/* One line per job chain of the player's last run, and a total line. */
static void print_chains(const struct accmap_player *player, bool each)
{
	static const char *const states[] = {
		[ACCMAP_PLAYER_CHAIN_NOT_RUN] = "not run",
		[ACCMAP_PLAYER_CHAIN_STARTED] = "started",
		[ACCMAP_PLAYER_CHAIN_DONE] = "done",
		[ACCMAP_PLAYER_CHAIN_FAILED] = "failed",
	};
	const struct accmap_player_chain *c = NULL;
	uint32_t n, i, count[ARRAY_SIZE(states)] = { 0 };
	char t[32];

	c = accmap_player_chains(player, &n);
	for (i = 0; i < n; i++) {
		uint32_t st = c[i].state < ARRAY_SIZE(states) ? c[i].state : 0;

		count[st]++;
		if (!each)
			continue;
		printf("chain %3u: slot %u, head 0x%llx, %s", i, c[i].chain.slot,
		       (unsigned long long)c[i].chain.head, states[st]);
		if (st == ACCMAP_PLAYER_CHAIN_FAILED)
			printf(": JS_STATUS 0x%02x (%s) at descriptor 0x%llx", c[i].status,
			       js_status_name(c[i].status), (unsigned long long)c[i].descriptor);
		else if (st == ACCMAP_PLAYER_CHAIN_STARTED)
			printf(c[i].chain.end_op == UINT32_MAX ? " (no op waits for it)" :
								 " (the run stopped before its end)");
		if (st != ACCMAP_PLAYER_CHAIN_NOT_RUN)
			printf(", %s", fmt_ns(t, sizeof(t), c[i].ns));
		printf("\n");
	}
	printf("chains:   %u: %u done, %u failed, %u started and not ended, %u not run\n", n,
	       count[ACCMAP_PLAYER_CHAIN_DONE], count[ACCMAP_PLAYER_CHAIN_FAILED],
	       count[ACCMAP_PLAYER_CHAIN_STARTED], count[ACCMAP_PLAYER_CHAIN_NOT_RUN]);
}

static void explain_replay_errno(int ret)
{
	if (ret == -EPERM)
		note("replay needs CAP_SYS_RAWIO (run as root)");
	else if (ret == -ENOTTY)
		note("this accmap module has no replay ioctls");
}

/* ------------------------------------------------------------------ */
/* accmapctl targets */

static void targets_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] targets\n"
		"\n"
		"Lists the replay targets (ACCMAP_IOC_REPLAY_QUERY): index, name, kind\n"
		"(sim: the software Mali model; irq: WAIT_IRQ is backed by interrupts),\n"
		"register window size, the page-table formats its MMU walks, address\n"
		"spaces, GPU_ID, and live sessions of all users.  Needs CAP_SYS_RAWIO.\n"
		"\n"
		"  -h, --help    this text\n",
		prog);
}

/* accmapctl --json targets: {"targets": [{"index", "name", ...}]}. */
static int targets_json(int fd)
{
	struct json j;
	uint32_t i, k;
	int ret;

	json_init(&j);
	json_begin_object(&j, NULL);
	json_begin_array(&j, "targets");
	for (i = 0; i < ACCMAP_REPLAY_TARGETS_MAX; i++) {
		struct accmap_replay_target_info ti;

		ret = accmap_replay_query(fd, i, &ti);
		if (ret == -ENOENT)
			break;
		if (ret) {
			json_discard(&j);
			accmap_close(fd);
			fail(ret, "accmap_replay_query(index %u)", i);
			explain_replay_errno(ret);
			return EXIT_FAILURE;
		}
		ti.name[sizeof(ti.name) - 1] = '\0';
		json_begin_object(&j, NULL);
		json_u64(&j, "index", i);
		json_string(&j, "name", ti.name);
		json_string(&j, "kind", ti.flags & ACCMAP_REPLAY_TARGET_SIM ? "sim" : "mmio");
		json_bool(&j, "irq", ti.flags & ACCMAP_REPLAY_TARGET_IRQ);
		json_u64(&j, "window_size", ti.window_size);
		json_begin_array(&j, "formats");
		for (k = 0; k < 32; k++)
			if (ti.formats & (1U << k))
				json_string(&j, NULL, pgt_name(k));
		json_end_array(&j);
		json_u64(&j, "address_spaces", ti.as_count);
		json_u64(&j, "gpu_id", ti.gpu_id);
		json_u64(&j, "sessions", ti.sessions);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j, stdout);
	accmap_close(fd);
	return EXIT_SUCCESS;
}

static int cmd_targets(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct table t;
	uint32_t i;
	int fd, ret, c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "d:h", opts, targets_usage, &status)) != OPT_END) {
		switch (c) {
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	ret = open_device(&fd);
	if (ret)
		return ret;
	if (json_out)
		return targets_json(fd);

	table_init(&t, 8);
	for (i = 0; i < 8; i++)
		t.right[i] = i == 0 || i == 3 || i == 5 || i == 7;
	table_add(&t, "INDEX");
	table_add(&t, "NAME");
	table_add(&t, "KIND");
	table_add(&t, "WINDOW");
	table_add(&t, "FORMATS");
	table_add(&t, "AS");
	table_add(&t, "GPU_ID");
	table_add(&t, "SESSIONS");
	for (i = 0; i < ACCMAP_REPLAY_TARGETS_MAX; i++) {
		struct accmap_replay_target_info ti;
		char b[64];

		ret = accmap_replay_query(fd, i, &ti);
		if (ret == -ENOENT)
			break;
		if (ret) {
			fail(ret, "accmap_replay_query(index %u)", i);
			explain_replay_errno(ret);
			table_free(&t);
			accmap_close(fd);
			return EXIT_FAILURE;
		}
		ti.name[sizeof(ti.name) - 1] = '\0';
		table_addf(&t, "%u", i);
		table_add(&t, ti.name);
		table_addf(&t, "%s%s%s", ti.flags & ACCMAP_REPLAY_TARGET_SIM ? "sim" : "mmio",
			   ti.flags & ACCMAP_REPLAY_TARGET_IRQ ? ",irq" : "",
			   ti.flags & ~(ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ) ?
			   ",unknown" : "");
		table_add(&t, fmt_bytes(b, sizeof(b), ti.window_size, false));
		table_add(&t, fmt_formats(b, sizeof(b), ti.formats));
		table_addf(&t, "%u", ti.as_count);
		table_addf(&t, "0x%08x", ti.gpu_id);
		table_addf(&t, "%u", ti.sessions);
	}
	table_print(&t, stdout);
	if (i == 0)
		printf("(none)\n");
	table_free(&t);
	accmap_close(fd);
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* accmapctl record */

#define RECORD_SIZE_DEFAULT	64U

static void record_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] record [--workload matmul|vadd] [--size N]\n"
		"                           [--format aarch64|lpae] [--seed S] OUT\n"
		"\n"
		"Runs a compute job on the software Mali model (replay target \"%s\")\n"
		"through a tiny driver of its own, checks the result against the CPU, and\n"
		"writes the recording to OUT: the GPU address space (job descriptor, A,\n"
		"B and C), the register operations that ran the job, and symbols a, b\n"
		"(inputs), c (output), input (= a) and output (= c).  Replay it with\n"
		"'accmapctl replay'.  Needs CAP_SYS_RAWIO.\n"
		"\n"
		"  -w, --workload W  matmul: C = A x B, N x N int32 matrices (default);\n"
		"                    vadd: C = A + B, N int32 elements\n"
		"  -n, --size N      matmul 1..512, vadd 1..%u (default %u)\n"
		"  -f, --format F    GPU page-table format: aarch64 (AArch64 4K, default)\n"
		"                    or lpae\n"
		"  -s, --seed S      seed of the random inputs (default 1)\n"
		"  -h, --help        this text\n",
		prog, SIMDRV_TARGET, ACCMAP_SIM_DIM_MAX, RECORD_SIZE_DEFAULT);
}

/* Inputs: a small xorshift, so that a seed gives the same matrices. */
static uint32_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return (uint32_t)(x >> 32);
}

static void fill_random(int32_t *v, uint32_t n, uint64_t *state)
{
	uint32_t i;

	/* Small values keep a dump of the matrices readable. */
	for (i = 0; i < n; i++)
		v[i] = (int32_t)(rng_next(state) % 2001) - 1000;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct simdrv_workload w = { .op = ACCMAP_SIM_OP_MATMUL_I32 };
	uint32_t size = RECORD_SIZE_DEFAULT, ea, eb, ec, i;
	int32_t *a = NULL, *b = NULL, *c = NULL, *want = NULL;
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	struct simdrv_result res;
	uint64_t seed = 1, state;
	int fd, ret, c_opt, status = EXIT_FAILURE;
	const char *out;
	char note_buf[160], b1[32], b2[32];
	struct stat st;

	begin_options(argv);
	while ((c_opt = next_option(argc, argv, "w:n:f:s:d:h", opts, record_usage,
				    &status)) != OPT_END) {
		switch (c_opt) {
		case 'w':
			if (!strcmp(optarg, "matmul"))
				w.op = ACCMAP_SIM_OP_MATMUL_I32;
			else if (!strcmp(optarg, "vadd"))
				w.op = ACCMAP_SIM_OP_VADD_I32;
			else
				return usage_error("unknown workload '%s' (matmul or vadd)",
						   optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, UINT32_MAX, &size) || !size)
				return usage_error("bad size '%s'", optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "aarch64") || !strcmp(optarg, "aarch64-4k"))
				w.format = ACCMAP_PGT_MALI_AARCH64_4K;
			else if (!strcmp(optarg, "lpae"))
				w.format = ACCMAP_PGT_MALI_LPAE;
			else
				return usage_error("unknown format '%s' (aarch64 or lpae)", optarg);
			break;
		case 's':
			if (!parse_u64(optarg, UINT64_MAX, &seed))
				return usage_error("bad seed '%s'", optarg);
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind >= argc)
		return usage_error("missing OUT");
	if (optind + 1 != argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	out = argv[optind];

	if (w.op == ACCMAP_SIM_OP_VADD_I32) {
		w.m = 1;
		w.k = 1;
		w.n = size;
	} else {
		w.m = size;
		w.n = size;
		w.k = size;
	}
	if (simdrv_elems(&w, &ea, &eb, &ec))
		return usage_error("size %u is beyond the model's limits (matmul 512, vadd %u)",
				   size, ACCMAP_SIM_DIM_MAX);

	a = xrealloc(NULL, ea, sizeof(*a));
	b = xrealloc(NULL, eb, sizeof(*b));
	c = xrealloc(NULL, ec, sizeof(*c));
	want = xrealloc(NULL, ec, sizeof(*want));
	/* xorshift must not start at 0. */
	state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!state)
		state = 1;
	fill_random(a, ea, &state);
	fill_random(b, eb, &state);
	simdrv_reference(&w, a, b, want);

	ret = open_device(&fd);
	if (ret)
		goto out_free;
	ret = simdrv_record(fd, &w, a, b, c, &rec, &res);
	accmap_close(fd);
	if (ret == -ENODEV) {
		fail(ret, "no replay target named \"%s\"", SIMDRV_TARGET);
		goto out_free;
	}
	if (ret == -EOPNOTSUPP) {
		fail(ret, "the \"%s\" target cannot run format %s", SIMDRV_TARGET,
		     pgt_name(w.format));
		goto out_free;
	}
	if (ret == -EIO && res.run.reason == ACCMAP_REPLAY_OK) {
		fail(ret, "the job ended with status 0x%x, not DONE", res.job_status);
		goto out_free;
	}
	if (ret) {
		fail(ret, "running the job on \"%s\"", SIMDRV_TARGET);
		explain_replay_errno(ret);
		if (res.map_failed != UINT32_MAX)
			note("setting up map %u failed", res.map_failed);
		if (res.run.nr_ops)
			explain_run(&res.run, &res.failed);
		goto out_free;
	}

	for (i = 0; i < ec; i++)
		if (c[i] != want[i])
			break;
	if (i < ec) {
		fprintf(stderr, "%s: c[%u] is %d, the CPU says %d: not saved\n", cmd_name, i,
			c[i], want[i]);
		goto out_free;
	}

	snprintf(note_buf, sizeof(note_buf),
		 "accmapctl record --workload %s --size %u --format %s --seed %llu\n",
		 w.op == ACCMAP_SIM_OP_VADD_I32 ? "vadd" : "matmul", size,
		 w.format == ACCMAP_PGT_MALI_LPAE ? "lpae" : "aarch64", (unsigned long long)seed);
	ret = accmap_rec_set_note(rec, note_buf);
	if (!ret)
		ret = accmap_rec_save(rec, out, &err);
	if (ret) {
		fprintf(stderr, "%s: %s\n", cmd_name, err.msg[0] ? err.msg : strerror(-ret));
		goto out_free;
	}

	printf("target:   %s (index %u), GPU_ID 0x%08x, format %s, AS %u\n", SIMDRV_TARGET,
	       res.target, res.gpu.gpu_id, pgt_name(w.format), w.as);
	if (w.op == ACCMAP_SIM_OP_VADD_I32)
		printf("workload: vadd of %u int32, seed %llu\n", w.n, (unsigned long long)seed);
	else
		printf("workload: matmul %ux%u by %ux%u int32, seed %llu\n", w.m, w.k, w.k, w.n,
		       (unsigned long long)seed);
	printf("maps:     %u (descriptor, a, b, c)\n", rec->nr_maps);
	printf("ops:      %u, ran in %s\n", rec->nr_ops,
	       fmt_ns(b1, sizeof(b1), res.run.elapsed_ns));
	printf("check:    c matches the CPU (%u elements)\n", ec);
	printf("wrote:    %s (%s)\n", out,
	       stat(out, &st) ? "?" : fmt_bytes(b2, sizeof(b2), (uint64_t)st.st_size, false));
	status = EXIT_SUCCESS;

out_free:
	accmap_rec_free(rec);
	free(want);
	free(c);
	free(b);
	free(a);
	return status;
}

/* ------------------------------------------------------------------ */
/* accmapctl replay */

static void replay_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] replay FILE [--input SYM=FILE]... [--output SYM=FILE]...\n"
		"                           [--repeat N] [--target NAME] [--batch N] [-q]\n"
		"\n"
		"Replays a recording (made by 'accmapctl record' or another recorder):\n"
		"fresh buffers with the recorded memory, a replay session with the\n"
		"recorded page-table format, and the recorded register operations, run\n"
		"in batches.  Inputs are written into symbols before every run, outputs\n"
		"read from symbols after the last.  Prints, for the last run, each job\n"
		"chain the ops start (on the Mali register map): its slot, head, whether\n"
		"it was done, failed (with JS_STATUS and the descriptor it stopped at),\n"
		"started only or not run, and its time; then the ops run, the run time\n"
		"the kernel measured and the faults.  Needs CAP_SYS_RAWIO.\n"
		"\n"
		"  -i, --input SYM=FILE   write FILE into symbol SYM (the file must be as\n"
		"                         long as the symbol)\n"
		"  -o, --output SYM=FILE  write symbol SYM into FILE after the last run\n"
		"  -r, --repeat N         run N times (default 1); memory the GPU may write\n"
		"                         is put back as recorded before every run\n"
		"  -t, --target NAME      replay on this target, not the recorded one\n"
		"  -b, --batch N          ops per replay ioctl (default %u)\n"
		"  -q, --quiet            no progress line, no line per chain (the total\n"
		"                         stays)\n"
		"  -h, --help             this text\n",
		prog, ACCMAP_PLAYER_BATCH_DEFAULT);
}

/**
 * struct sym_file - an --input or --output
 * @sym:  the symbol name
 * @path: the file
 * @data: the input's bytes (inputs)
 * @len:  bytes in @data, the symbol's length
 */
struct sym_file {
	const char *sym;
	const char *path;
	void *data;
	size_t len;
};

/* Splits "SYM=FILE" in place; false if it is not of that form. */
static bool split_sym_file(char *arg, struct sym_file *sf)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return false;
	*eq = '\0';
	sf->sym = arg;
	sf->path = eq + 1;
	sf->data = NULL;
	sf->len = 0;
	return true;
}

/**
 * struct progress - the progress line of a replay
 * @enabled: print it at all
 * @tty:     stderr is a terminal: rewrite one line in place
 * @shown:   something was printed (a newline is owed on a terminal)
 * @start:   when the replay started
 * @last:    when the line was last printed
 * @run:     the run in progress, from 1
 * @runs:    runs in all
 */
struct progress {
	bool enabled;
	bool tty;
	bool shown;
	struct timespec start;
	struct timespec last;
	uint32_t run;
	uint32_t runs;
};

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

/*
 * The progress line: for replays that last, after a second, then at most
 * twice a second; @force prints the state at the end if a line was shown.
 */
static void print_progress(struct progress *p, uint32_t done, uint32_t total, bool force)
{
	if (!p->enabled || (force && !p->shown))
		return;
	if (!force && (seconds_since(&p->start) < 1.0 ||
		       (p->shown && seconds_since(&p->last) < 0.5)))
		return;
	fprintf(stderr, "%s%s: run %u/%u: %u/%u ops%s", p->tty ? "\r" : "", cmd_name, p->run,
		p->runs, done, total, p->tty ? "" : "\n");
	fflush(stderr);
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	p->shown = true;
}

static int show_progress(void *arg, uint32_t done, uint32_t total)
{
	print_progress(arg, done, total, false);
	return 0;
}

/* The last state, if a line was shown, and the end of the line. */
static void end_progress(struct progress *p, uint32_t done, uint32_t total)
{
	print_progress(p, done, total, true);
	if (p->shown && p->tty)
		fputc('\n', stderr);
	p->shown = false;
}

/* Reads all of @path, which must be @len bytes; 0 or -1 after a message. */
static int read_input(struct sym_file *sf, size_t len)
{
	char *data = NULL;
	size_t got = 0;
	int ret;

	ret = read_file(sf->path, &data, &got);
	if (ret) {
		fail(ret, "read %s", sf->path);
		return -1;
	}
	if (got != len) {
		fprintf(stderr, "%s: %s has %zu bytes, symbol %s has %zu\n", cmd_name, sf->path,
			got, sf->sym, len);
		free(data);
		return -1;
	}
	sf->data = data;
	sf->len = len;
	return 0;
}

static int write_output(const char *path, const void *data, size_t len)
{
	const uint8_t *p = data;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) && !ret && errno != EINTR)
		ret = -errno;
	return ret;
}

static int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "target", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct accmap_player_options popts = { .target = NULL };
	struct sym_file *inputs = NULL, *outputs = NULL;
	size_t ninputs = 0, noutputs = 0, i;
	struct accmap_replay_target_info ti;
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	struct accmap_replay_run r;
	struct accmap_rec_error err;
	struct progress prog_line;
	uint32_t repeat = 1, run, failed_map;
	uint64_t elapsed = 0, ops_done = 0;
	int fd = -1, ret, c, status = EXIT_FAILURE;
	bool quiet = false;
	const char *path;
	char b1[32], b2[32];

	begin_options(argv);
	while ((c = next_option(argc, argv, "i:o:r:t:b:qd:h", opts, replay_usage,
				&status)) != OPT_END) {
		switch (c) {
		case 'i':
			inputs = xrealloc(inputs, ninputs + 1, sizeof(*inputs));
			if (!split_sym_file(optarg, &inputs[ninputs]))
				return usage_error("bad --input '%s' (SYM=FILE)", optarg);
			ninputs++;
			break;
		case 'o':
			outputs = xrealloc(outputs, noutputs + 1, sizeof(*outputs));
			if (!split_sym_file(optarg, &outputs[noutputs]))
				return usage_error("bad --output '%s' (SYM=FILE)", optarg);
			noutputs++;
			break;
		case 'r':
			if (!parse_u32(optarg, UINT32_MAX, &repeat) || !repeat)
				return usage_error("bad repeat count '%s'", optarg);
			break;
		case 't':
			popts.target = optarg;
			break;
		case 'b':
			if (!parse_u32(optarg, ACCMAP_REPLAY_OPS_MAX, &popts.batch) || !popts.batch)
				return usage_error("bad batch '%s' (1..%u)", optarg,
						   ACCMAP_REPLAY_OPS_MAX);
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind >= argc)
		return usage_error("missing FILE");
	if (optind + 1 != argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	path = argv[optind];

	ret = accmap_rec_load(path, &rec, &err);
	if (ret) {
		fprintf(stderr, "%s: %s\n", cmd_name, err.msg);
		goto out;
	}
	for (i = 0; i < ninputs + noutputs; i++) {
		struct sym_file *sf = i < ninputs ? &inputs[i] : &outputs[i - ninputs];
		const struct accmap_rec_symbol *sym = accmap_rec_find_symbol(rec, sf->sym);

		if (!sym) {
			fprintf(stderr, "%s: %s has no symbol '%s'\n", cmd_name, path, sf->sym);
			goto out;
		}
		if (sym->length > SIZE_MAX / 2) {
			fprintf(stderr, "%s: symbol %s is too large\n", cmd_name, sf->sym);
			goto out;
		}
		if (i < ninputs && read_input(sf, (size_t)sym->length))
			goto out;
		sf->len = (size_t)sym->length;
	}

	ret = open_device(&fd);
	if (ret)
		goto out;
	ret = accmap_player_open(fd, rec, &popts, &player, &failed_map);
	if (ret) {
		if (ret == -ENODEV)
			fail(ret, "no replay target named \"%s\"",
			     popts.target ? popts.target : rec->target);
		else if (failed_map != UINT32_MAX)
			fail(ret, "setting up map %u (GPU VA 0x%llx, %llu bytes)", failed_map,
			     (unsigned long long)rec->maps[failed_map].gpu_va,
			     (unsigned long long)rec->maps[failed_map].length);
		else
			fail(ret, "setting up the replay session");
		explain_replay_errno(ret);
		goto out;
	}
	accmap_player_target(player, &ti);
	ti.name[sizeof(ti.name) - 1] = '\0';

	memset(&prog_line, 0, sizeof(prog_line));
	prog_line.enabled = !quiet;
	prog_line.tty = isatty(STDERR_FILENO);
	prog_line.runs = repeat;
	clock_gettime(CLOCK_MONOTONIC, &prog_line.start);
	for (run = 0; run < repeat; run++) {
		prog_line.run = run + 1;
		ret = run ? accmap_player_restore(player) : 0;
		for (i = 0; !ret && i < ninputs; i++) {
			ret = accmap_player_write_symbol(player, inputs[i].sym, inputs[i].data,
							 inputs[i].len);
			if (ret)
				fail(ret, "writing %s into symbol %s", inputs[i].path,
				     inputs[i].sym);
		}
		if (ret) {
			end_progress(&prog_line, 0, rec->nr_ops);
			if (i == ninputs)
				fail(ret, "restoring the recorded memory");
			goto out;
		}
		ret = accmap_player_run(player, show_progress, &prog_line, &r);
		elapsed += r.elapsed_ns;
		ops_done += r.done;
		if (ret) {
			end_progress(&prog_line, r.done, rec->nr_ops);
			fail(ret, "run %u of %u", run + 1, repeat);
			explain_replay_errno(ret);
			explain_run(&r, r.failed_op < rec->nr_ops ? &rec->ops[r.failed_op] : NULL);
			print_chains(player, !quiet);
			printf("replayed: %s on %s (index %u): %llu ops in %u runs, last failed\n",
			       path, ti.name, accmap_player_target(player, NULL),
			       (unsigned long long)ops_done, run + 1);
			printf("run time: %s\n", fmt_ns(b1, sizeof(b1), elapsed));
			printf("faults:   %u\n", r.reason == ACCMAP_REPLAY_MMU_FAULT ? 1 : 0);
			goto out;
		}
	}
	end_progress(&prog_line, rec->nr_ops, rec->nr_ops);

	for (i = 0; i < noutputs; i++) {
		void *data = xrealloc(NULL, outputs[i].len, 1);

		ret = accmap_player_read_symbol(player, outputs[i].sym, data, outputs[i].len);
		if (ret) {
			fail(ret, "reading symbol %s", outputs[i].sym);
			free(data);
			goto out;
		}
		ret = write_output(outputs[i].path, data, outputs[i].len);
		free(data);
		if (ret) {
			fail(ret, "write %s", outputs[i].path);
			goto out;
		}
	}

	print_chains(player, !quiet);
	printf("replayed: %s on %s (index %u), format %s, AS %u\n", path, ti.name,
	       accmap_player_target(player, NULL), pgt_name(rec->format), rec->as);
	printf("ops:      %u x %u run%s = %llu\n", rec->nr_ops, repeat, repeat == 1 ? "" : "s",
	       (unsigned long long)ops_done);
	printf("run time: %s (%s per run)\n", fmt_ns(b1, sizeof(b1), elapsed),
	       fmt_ns(b2, sizeof(b2), elapsed / repeat));
	printf("faults:   0\n");
	for (i = 0; i < ninputs; i++)
		printf("input:    %s <- %s (%zu bytes)\n", inputs[i].sym, inputs[i].path,
		       inputs[i].len);
	for (i = 0; i < noutputs; i++)
		printf("output:   %s -> %s (%zu bytes)\n", outputs[i].sym, outputs[i].path,
		       outputs[i].len);
	status = EXIT_SUCCESS;

out:
	if (player) {
		ret = accmap_player_close(player);
		if (ret && status == EXIT_SUCCESS)
			status = fail(ret, "tearing down the replay session");
	}
	if (fd >= 0)
		accmap_close(fd);
	for (i = 0; i < ninputs; i++)
		free(inputs[i].data);
	free(inputs);
	free(outputs);
	accmap_rec_free(rec);
	return status;
}

/* ------------------------------------------------------------------ */
/* accmapctl show */

static void show_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s show [--ops] FILE\n"
		"\n"
		"Checks a recording as 'replay' would read it and describes it: header,\n"
		"maps, symbols, a count of ops by kind and the note.  Needs no device.\n"
		"\n"
		"  -o, --ops     also list every op\n"
		"  -h, --help    this text\n",
		prog);
}

static void show_op(uint32_t i, const struct accmap_replay_op *op)
{
	printf("  %6u  %-10s", i, accmap_rec_op_name(op->op));
	switch (op->op) {
	case ACCMAP_REPLAY_OP_WRITE:
		if (op->flags & ACCMAP_REPLAY_OP_CAPTURED)
			printf("  [0x%04x] = captured value\n", op->offset);
		else
			printf("  [0x%04x] = 0x%08x\n", op->offset, op->value);
		break;
	case ACCMAP_REPLAY_OP_READ:
		printf("  [0x%04x] & 0x%08x == 0x%08x%s%s\n", op->offset, op->mask, op->value,
		       op->flags & ACCMAP_REPLAY_OP_STRICT ? " (strict)" : "",
		       op->flags & ACCMAP_REPLAY_OP_CAPTURE ? " (captured)" : "");
		break;
	case ACCMAP_REPLAY_OP_POLL:
		printf("  [0x%04x] & 0x%08x == 0x%08x, %u us\n", op->offset, op->mask,
		       op->value, op->timeout_us);
		break;
	case ACCMAP_REPLAY_OP_WAIT_IRQ:
		printf("  irq %u & 0x%08x, %u us\n", op->irq, op->mask, op->timeout_us);
		break;
	case ACCMAP_REPLAY_OP_DELAY:
		printf("  %u us\n", op->timeout_us);
		break;
	case ACCMAP_REPLAY_OP_WRITE_ROOT:
		printf("  [0x%04x] = root %s\n", op->offset,
		       op->flags & ACCMAP_REPLAY_OP_HI ? "bits 63:32" : "bits 31:0");
		break;
	default:
		printf("\n");
	}
}

/* The job chains the ops start, a row each; non-zero if out of memory. */
static int show_chains(const struct accmap_recording *rec)
{
	struct accmap_rec_chain *c;
	struct table t;
	uint32_t n, i;
	int ret;

	ret = accmap_rec_chains(rec, &c, &n);
	if (ret)
		return fail(ret, "finding the job chains");
	printf("chains:   %u\n", n);
	if (!n)
		return 0;
	table_init(&t, 5);
	t.right[0] = true;
	t.right[3] = true;
	t.right[4] = true;
	table_add(&t, "  CHAIN");
	table_add(&t, "SLOT");
	table_add(&t, "HEAD");
	table_add(&t, "START OP");
	table_add(&t, "WAIT OP");
	for (i = 0; i < n; i++) {
		table_addf(&t, "  %u", i);
		table_addf(&t, "%u", c[i].slot);
		table_addf(&t, "0x%012llx", (unsigned long long)c[i].head);
		table_addf(&t, "%u", c[i].start_op);
		if (c[i].end_op == UINT32_MAX)
			table_add(&t, "none");
		else
			table_addf(&t, "%u", c[i].end_op);
	}
	table_print(&t, stdout);
	table_free(&t);
	free(c);
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ops", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t kinds[ACCMAP_REPLAY_OP_WRITE_ROOT + 1] = { 0 };
	uint64_t mapped = 0, contents = 0;
	struct accmap_recording *rec;
	struct accmap_rec_error err;
	bool all_ops = false, first;
	struct table t;
	uint32_t i;
	char b[64];
	int ret, c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "oh", opts, show_usage, &status)) != OPT_END) {
		switch (c) {
		case 'o':
			all_ops = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (argc - optind != 1)
		return usage_error("need one FILE");

	ret = accmap_rec_load(argv[optind], &rec, &err);
	if (ret) {
		fprintf(stderr, "%s: %s\n", cmd_name, err.msg);
		return EXIT_FAILURE;
	}
	for (i = 0; i < rec->nr_maps; i++) {
		mapped += rec->maps[i].length;
		if (rec->maps[i].data)
			contents += rec->maps[i].length;
	}
	printf("file:     %s, version %d\n", argv[optind], ACCMAP_REC_VERSION);
	printf("target:   %s, GPU_ID 0x%08x, format %s, AS %u, %u-bit VA\n", rec->target,
	       rec->gpu_id, pgt_name(rec->format), rec->as, rec->va_bits);
	printf("maps:     %u, %s mapped", rec->nr_maps, fmt_bytes(b, sizeof(b), mapped, false));
	printf(", %s of contents\n", fmt_bytes(b, sizeof(b), contents, false));

	table_init(&t, 5);
	t.right[1] = true;
	t.right[3] = true;
	table_add(&t, "  GPU VA");
	table_add(&t, "LENGTH");
	table_add(&t, "FLAGS");
	table_add(&t, "ATTR");
	table_add(&t, "CONTENTS");
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];

		table_addf(&t, "  0x%012llx", (unsigned long long)m->gpu_va);
		table_add(&t, fmt_bytes(b, sizeof(b), m->length, false));
		table_addf(&t, "%c%c%c", m->flags & ACCMAP_REPLAY_MAP_READ ? 'r' : '-',
			   m->flags & ACCMAP_REPLAY_MAP_WRITE ? 'w' : '-',
			   m->flags & ACCMAP_REPLAY_MAP_EXEC ? 'x' : '-');
		table_addf(&t, "%u", m->attr);
		table_add(&t, m->data ? "recorded" : "zero-filled");
	}
	table_print(&t, stdout);
	table_free(&t);

	printf("symbols:  %u\n", rec->nr_symbols);
	if (rec->nr_symbols) {
		table_init(&t, 4);
		t.right[2] = true;
		table_add(&t, "  NAME");
		table_add(&t, "GPU VA");
		table_add(&t, "LENGTH");
		table_add(&t, "KIND");
		for (i = 0; i < rec->nr_symbols; i++) {
			const struct accmap_rec_symbol *s = &rec->symbols[i];

			table_addf(&t, "  %s", s->name);
			table_addf(&t, "0x%012llx", (unsigned long long)s->gpu_va);
			table_addf(&t, "%llu", (unsigned long long)s->length);
			table_addf(&t, "%s%s%s", s->flags & ACCMAP_REC_SYM_INPUT ? "input" : "",
				   (s->flags & ACCMAP_REC_SYM_INPUT) &&
				   (s->flags & ACCMAP_REC_SYM_OUTPUT) ? "," : "",
				   s->flags & ACCMAP_REC_SYM_OUTPUT ? "output" : "");
		}
		table_print(&t, stdout);
		table_free(&t);
	}

	for (i = 0; i < rec->nr_ops; i++)
		if (rec->ops[i].op < ARRAY_SIZE(kinds))
			kinds[rec->ops[i].op]++;
	printf("ops:      %u (", rec->nr_ops);
	first = true;
	for (i = 1; i < ARRAY_SIZE(kinds); i++) {
		if (!kinds[i])
			continue;
		printf("%s%s %u", first ? "" : ", ", accmap_rec_op_name(i), kinds[i]);
		first = false;
	}
	printf(")\n");
	if (all_ops)
		for (i = 0; i < rec->nr_ops; i++)
			show_op(i, &rec->ops[i]);
	if (show_chains(rec)) {
		accmap_rec_free(rec);
		return EXIT_FAILURE;
	}
	if (rec->note) {
		const char *p = rec->note;

		printf("note:\n");
		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("  %.*s\n", (int)n, p);
			p += n;
			if (*p)
				p++;
		}
	}
	accmap_rec_free(rec);
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* import-gpureplay */

static void import_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s import-gpureplay [-q] DIR OUT\n"
		"\n"
		"Converts a GPUReplay recording of a Mali GPU (the files gr_pgt,\n"
		"gr_mem_contents, gr_io_history and gr_sync_as in DIR) into the\n"
		"accmap recording OUT, for 'replay' on the software Mali model:\n"
		"the regions become maps (permissions from the kbase region flags),\n"
		"the register log becomes ops (TRANSTAB writes become WRITE_ROOT,\n"
		"busy reads become POLL, job ends WAIT_IRQ, delays are left out),\n"
		"and the last two synced ranges become the symbols 'input' and\n"
		"'output'.  Overlapping regions are resolved page by page from\n"
		"the recorded page table; regions freed before the dump are\n"
		"reported as stale; every job chain is walked through the\n"
		"recorded contents, and 'replayable: no' names each chain that\n"
		"will not run (OUT is still written).  Needs no device.\n"
		"\n"
		"  -q, --quiet   print nothing on success\n"
		"  -h, --help    this text\n",
		prog);
}

static int cmd_import_gpureplay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct accmap_recording *rec = NULL;
	struct gpureplay_input in;
	struct gpureplay_stats st;
	struct gpureplay_report rep;
	struct accmap_rec_error err;
	bool quiet = false;
	char line[256];
	int ret, c, status;
	uint32_t i;

	begin_options(argv);
	while ((c = next_option(argc, argv, "qh", opts, import_usage, &status)) != OPT_END) {
		switch (c) {
		case 'q':
			quiet = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (argc - optind < 2)
		return usage_error("need DIR and OUT");
	if (argc - optind > 2)
		return usage_error("unexpected argument '%s'", argv[optind + 2]);

	ret = gpureplay_load(argv[optind], &in, &err);
	if (ret) {
		fprintf(stderr, "%s: %s\n", cmd_name, err.msg);
		return EXIT_FAILURE;
	}
	ret = gpureplay_import_report(&in, &rec, &st, &rep, &err);
	gpureplay_unload(&in);
	if (ret) {
		fprintf(stderr, "%s: %s/%s\n", cmd_name, argv[optind],
			err.msg[0] ? err.msg : strerror(-ret));
		return EXIT_FAILURE;
	}
	ret = accmap_rec_save(rec, argv[optind + 1], &err);
	if (ret) {
		fprintf(stderr, "%s: %s\n", cmd_name,
			err.msg[0] ? err.msg : strerror(-ret));
		gpureplay_report_free(&rep);
		accmap_rec_free(rec);
		return EXIT_FAILURE;
	}
	if (!quiet) {
		printf("%s: AS %u, GPU_ID 0x%08x, target %s\n", argv[optind + 1],
		       rec->as, rec->gpu_id, rec->target);
		printf("regions:  %u (%u with contents): ", st.regions, st.valid_regions);
		printf("%llu pages of contents, %llu zero-filled, %u maps\n",
		       (unsigned long long)st.pages, (unsigned long long)st.zero_pages,
		       st.maps);
		printf("accesses: %u (%u reads, %u writes), %u job chains\n",
		       st.lines, st.reads, st.writes, st.jobs);
		printf("ops:      %u (%u POLL, %u WAIT_IRQ, %u WRITE_ROOT); ", st.ops,
		       st.polls, st.wait_irqs, st.write_roots);
		printf("%u reads folded, %u TRANSTAB reads dropped, ", st.collapsed, st.dropped);
		printf("%u recorded flush IDs not the one read\n", st.flush_ids);
		printf("gr_pgt:   %u table pages, %llu leaves: ", st.pgt_pages,
		       (unsigned long long)st.pgt_leaves);
		printf("%llu outside the maps, %llu stale, %llu tables missing\n",
		       (unsigned long long)st.leaves_unmapped,
		       (unsigned long long)st.leaves_stale,
		       (unsigned long long)st.tables_missing);
		printf("roots:    %u teardown TRANSTAB writes dropped; ", st.roots_dropped);
		printf("flush: %u CAPTURE reads, %u CAPTURED writes; ", st.captures, st.captured);
		printf("%u waits on failed jobs\n", st.failed_waits);
		printf("overlaps: %llu pages held by more than one region ",
		       (unsigned long long)st.overlap_pages);
		printf("(%llu with no valid leaf), %u maps with no valid leaf\n",
		       (unsigned long long)st.overlap_unmapped, st.maps_no_leaf);
		printf("delays:   %llu ns recorded, left out\n",
		       (unsigned long long)st.recorded_ns);
		printf("stale:    %u regions (freed before the dump; ", st.stale_regions);
		printf("their pages kept where no live region is)\n");
		for (i = 0; i < rep.nr_stale; i++) {
			const struct gpureplay_stale_region *s = &rep.stale[i];

			printf("  stale region 0x%llx-0x%llx (gr_mem_contents offset 0x%llx): ",
			       (unsigned long long)s->start, (unsigned long long)s->end,
			       (unsigned long long)s->off);
			printf("%llu pages, %llu kept%s%s\n",
			       (unsigned long long)s->pages, (unsigned long long)s->kept,
			       s->symbols & ACCMAP_REC_SYM_INPUT ? ", holds input" : "",
			       s->symbols & ACCMAP_REC_SYM_OUTPUT ? ", holds output" : "");
		}
		printf("chains:   %u walked, %u not replayable\n", st.chains, st.chains_bad);
		for (i = 0; i < rep.nr_bad_chains; i++) {
			gpureplay_chain_describe(&rep.bad_chains[i], line, sizeof(line));
			printf("  %s\n", line);
		}
		printf("replayable: %s\n", st.chains_bad ? "no" : "yes");
	}
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Top level */

/**
 * struct command - one subcommand
 * @name: its name on the command line
 * @run: runs it on its own argv (argv[0] is @name); returns the exit status
 * @usage: prints its help
 * @summary: one line for the overview
 */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
	const char *summary;
	bool json;	/* prints JSON under -j/--json */
};

static const struct command commands[] = {
	{ "heaps", cmd_heaps, heaps_usage, "heaps: size, use, free bytes, largest free block", true },
	{ "pool", cmd_pool, pool_usage, "page pool: free lists, cap, hits and misses", true },
	{ "list", cmd_list, list_usage, "clients, allocations, orphans, tags from debugfs", false },
	{ "svm", cmd_svm, svm_usage, "SVM sessions: mirrored ranges, GPU-mapped bytes, faults", false },
	{ "alloc", cmd_alloc, alloc_usage, "allocate a buffer (and export it, hold it)", false },
	{ "info", cmd_info, info_usage, "describe the buffer behind a dma-buf fd", true },
	{ "label", cmd_label, label_usage, "name an accounting tag", false },
	{ "checkpoint", cmd_checkpoint, checkpoint_usage,
	  "what a CRIU checkpoint of a process would save, or why not", false },
	{ "targets", cmd_targets, targets_usage, "replay targets: GPU register windows, models", true },
	{ "record", cmd_record, record_usage, "record a compute job on the software Mali model", false },
	{ "replay", cmd_replay, replay_usage, "replay a recording with new inputs", false },
	{ "show", cmd_show, show_usage, "check and describe a recording file", false },
	{ "import-gpureplay", cmd_import_gpureplay, import_usage,
	  "convert a GPUReplay recording of a Mali GPU", false },
};

#define NCOMMANDS	ARRAY_SIZE(commands)

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: %s [-d DEVICE] COMMAND [ARGS]\n"
		"       %s COMMAND --help\n"
		"\n"
		"Commands:\n", prog, prog);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"  -d, --device DEVICE  the accmap device (default %s)\n"
		"  -h, --help           this text\n"
		"  -j, --json           JSON instead of text (heaps, pool, info, targets;\n"
		"                       the schema is in accmapctl(8))\n"
		"  -V, --version        the version of accmapctl\n"
		"\n"
		"Exit status: 0 success, 1 a call failed, 2 usage error.\n",
		ACCMAP_DEVICE_PATH);
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd;
	int c, status;

	argv[0] = (char *)prog;	/* for getopt's messages */
	/* '+': stop at the subcommand, its options are its own. */
	while ((c = next_option(argc, argv, "+d:hjV", opts, print_usage, &status)) != OPT_END) {
		switch (c) {
		case OPT_EXIT:
			return status;
		case 'j':
			json_out = true;
			break;
		case 'V':
			printf("%s %s\n", prog, ACCMAP_VERSION);
			return EXIT_SUCCESS;
		}
	}
	if (optind >= argc)
		return usage_error("missing command");

	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 >= argc) {
			print_usage(stdout);
			return EXIT_SUCCESS;
		}
		cmd = find_command(argv[optind + 1]);
		if (!cmd)
			return usage_error("unknown command '%s'", argv[optind + 1]);
		cmd->usage(stdout);
		return EXIT_SUCCESS;
	}

	cmd = find_command(argv[optind]);
	if (!cmd)
		return usage_error("unknown command '%s'", argv[optind]);
	if (json_out && !cmd->json)
		return usage_error("'%s' has no JSON output", cmd->name);
	return cmd->run(argc - optind, argv + optind);
}

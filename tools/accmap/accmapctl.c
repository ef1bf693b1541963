// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl: look at and exercise /dev/accmap from the command line.
 *
 *   accmapctl [-d DEVICE] heaps | pool | list | alloc | info | label ...
 *
 * Exit status: 0 on success, 1 when a call fails (the message names the
 * call and gives strerror), 2 on a usage error.  Everything that talks to
 * the device goes through libaccmap.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/magic.h>

#include "accmap.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define EXIT_USAGE		2

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEBUGFS_MOUNT		"/sys/kernel/debug"
#define DEBUGFS_ACCMAP		DEBUGFS_MOUNT "/accmap"

static const char *prog = "accmapctl";
/* "accmapctl CMD" while a subcommand runs, for messages and getopt. */
static char cmd_name[64] = "accmapctl";
static const char *device = ACCMAP_DEVICE_PATH;

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
	uint32_t unknown = flags & ~ACCMAP_ALLOC_VALID_FLAGS;
	const char *type = "cached";

	if ((flags & ACCMAP_ALLOC_VALID_FLAGS) == ACCMAP_ALLOC_VALID_FLAGS)
		type = "writecombine and uncached";
	else if (flags & ACCMAP_ALLOC_WRITECOMBINE)
		type = "writecombine";
	else if (flags & ACCMAP_ALLOC_UNCACHED)
		type = "uncached";

	if (unknown)
		snprintf(buf, len, "0x%x (%s, unknown 0x%x)", flags, type, unknown);
	else
		snprintf(buf, len, "0x%x (%s)", flags, type);
	return buf;
}

static const char *fmt_state(char *buf, size_t len, uint32_t state)
{
	uint32_t known = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
			 ACCMAP_STATE_READONLY;

	snprintf(buf, len, "0x%x (%s%s%s%s)", state,
		 state & ACCMAP_STATE_ALLOCATED ? "allocated" : "no memory",
		 state & ACCMAP_STATE_EXPORTED ? ", exported" : "",
		 state & ACCMAP_STATE_READONLY ? ", read-only" : "",
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
		"that could be allocated now (less than free when fragmented).  The\n"
		"system heap is id 0, carveouts (when configured) ids %d..%d, and the\n"
		"user heap, id %d, holds the user memory pinned by FROM_VA buffers: it\n"
		"has no fixed size, so only USED is shown for it.\n"
		"\n"
		"  -b, --bytes   exact byte counts instead of KiB/MiB/GiB\n"
		"  -h, --help    this text\n",
		prog, ACCMAP_HEAP_MAX - 1, ACCMAP_HEAP_CARVEOUT_FIRST,
		ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX - 1,
		ACCMAP_HEAP_USER);
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
	int fd, ret, c;

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "bd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'h':
			heaps_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);

	ret = open_device(&fd);
	if (ret)
		return ret;

	table_init(&t, 6);
	t.right[0] = true;
	for (c = 2; c < 6; c++)
		t.right[c] = true;
	table_add(&t, "ID");
	table_add(&t, "NAME");
	table_add(&t, "TOTAL");
	table_add(&t, "USED");
	table_add(&t, "FREE");
	table_add(&t, "LARGEST FREE");

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
	int fd, ret, c;
	char b[32];

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "bd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case 'd':
			device = optarg;
			break;
		case 'h':
			pool_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
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
		"               mappings, attachments, exports\n"
		"  orphans      buffers no client holds, kept alive by a dma-buf or a\n"
		"               mapping, with the process that created them\n"
		"  tags         buffers and bytes per tag, with the tag's label\n"
		"  heaps        the heaps' bytes (as 'accmapctl heaps')\n"
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
 * a byte count, and in clients every per-heap column after "handles".
 */
static bool is_bytes_column(const char *file, char **header, size_t nheader,
			    size_t c)
{
	static const char *const names[] = {
		"size", "bytes", "total", "used", "free", "largest_free",
	};
	size_t i;

	if (c >= nheader)
		return false;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(header[c], names[i]))
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
	int c;

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "bd:hr", opts, NULL)) != -1) {
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
		case 'd':
			device = optarg;	/* accepted; debugfs is per module */
			break;
		case 'h':
			list_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
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
			print_tsv_table(list_files[i].name, data, exact);
		}
		first = false;
		free(data);
	}
	return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* accmapctl alloc */

static void alloc_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] alloc SIZE [--heap-mask M] [--wc | --uncached]\n"
		"                          [--tag T] [--export] [--hold]\n"
		"\n"
		"Creates a buffer of SIZE bytes (suffixes K, M, G, T: powers of 1024)\n"
		"and allocates its memory, then prints its id, size, heap, flags and\n"
		"tag.  The buffer is freed when accmapctl exits.\n"
		"\n"
		"  -m, --heap-mask M  heaps to allocate from, one bit per heap id\n"
		"                     (default 0x%x: the system heap)\n"
		"  -w, --wc           write-combined instead of cached\n"
		"  -u, --uncached     uncached instead of cached\n"
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
	char b[64], name[ACCMAP_HEAP_NAME_LEN + 1];
	struct sigaction sa;
	sigset_t stop;
	uint64_t size;

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "m:wut:eHd:h", opts, NULL)) != -1) {
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
		case 'd':
			device = optarg;
			break;
		case 'h':
			alloc_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
		}
	}
	if ((flags & ACCMAP_ALLOC_VALID_FLAGS) == ACCMAP_ALLOC_VALID_FLAGS)
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
	char b[64], name[ACCMAP_HEAP_NAME_LEN + 1];
	struct accmap_info info;
	int fd, dmabuf_fd, ret, c, status;
	bool have_pid = false;

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "f:p:d:h", opts, NULL)) != -1) {
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
		case 'd':
			device = optarg;
			break;
		case 'h':
			info_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
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
	int fd, ret, c;
	uint32_t tag;

	begin_options(argv);
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			device = optarg;
			break;
		case 'h':
			label_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
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
};

static const struct command commands[] = {
	{ "heaps", cmd_heaps, heaps_usage, "heaps: size, use, free bytes, largest free block" },
	{ "pool", cmd_pool, pool_usage, "page pool: free lists, cap, hits and misses" },
	{ "list", cmd_list, list_usage, "clients, allocations, orphans, tags from debugfs" },
	{ "alloc", cmd_alloc, alloc_usage, "allocate a buffer (and export it, hold it)" },
	{ "info", cmd_info, info_usage, "describe the buffer behind a dma-buf fd" },
	{ "label", cmd_label, label_usage, "name an accounting tag" },
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
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd;
	int c;

	argv[0] = (char *)prog;	/* for getopt's messages */
	/* '+': stop at the subcommand, its options are its own. */
	while ((c = getopt_long(argc, argv, "+d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			device = optarg;
			break;
		case 'h':
			print_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return bad_option();
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
	return cmd->run(argc - optind, argv + optind);
}

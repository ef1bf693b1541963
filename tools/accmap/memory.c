// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl heaps, pool, list, alloc, info, label: memory, who holds it,
 * and the debugfs tables.
 */
#include "accmapctl.h"

/* ------------------------------------------------------------------ */
/* accmapctl heaps */

void heaps_usage(FILE *f)
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

int cmd_heaps(int argc, char **argv)
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

void pool_usage(FILE *f)
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

int cmd_pool(int argc, char **argv)
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

void list_usage(FILE *f)
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
int read_file(const char *path, char **data, size_t *len)
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
void explain_debugfs(int err, const char *dir)
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
bool is_decimal(const char *s)
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
size_t split_tabs(char *line, char ***fields)
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
void print_tsv_table(const char *file, char *data, bool exact)
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
char *devmem_table(char *data)
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
void print_devmem_head(const char *head, const char *end, bool exact)
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

int cmd_list(int argc, char **argv)
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
/* accmapctl alloc */

void alloc_usage(FILE *f)
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

int cmd_alloc(int argc, char **argv)
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

void info_usage(FILE *f)
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
int fd_from_process(uint32_t pid, int target_fd, int *fd)
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

int cmd_info(int argc, char **argv)
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
/* accmapctl label */

void label_usage(FILE *f)
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

int cmd_label(int argc, char **argv)
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

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
		"bytes of USED in buffers allocated contiguous (alloc --contiguous), and\n"
		"the bytes below 4 GiB it can give buffers for 32-bit DMA masters\n"
		"(alloc --dma32; \"-\" where it has none).  The\n"
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

int cmd_heaps(int argc, char **argv)
{
	static const char *const heads[] = {
		"ID", "NAME", "TOTAL", "USED", "FREE", "LARGEST FREE", "CONTIGUOUS", "DMA32",
	};
	struct out o;
	uint32_t heap;
	int fd, ret;

	ret = device_command(argc, argv, "bd:h", bytes_device_options, heaps_usage, &fd);
	if (ret >= 0)
		return ret;

	out_init(&o, json_out, exact_bytes);
	out_list_begin(&o, "heaps", heads, ARRAY_SIZE(heads), ~0x2UL);
	for (heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		struct accmap_heap_info hi;
		/* The user heap reports 0 for what it does not have: a size. */
		bool user = heap == ACCMAP_HEAP_USER;

		ret = accmap_query_heap(fd, heap, &hi);
		if (ret == -ENODEV)
			continue;
		if (ret) {
			out_discard(&o);
			accmap_close(fd);
			return fail(ret, "accmap_query_heap(heap %u)", heap);
		}
		hi.name[sizeof(hi.name) - 1] = '\0';
		out_row_begin(&o);
		out_u64(&o, "id", heap);
		out_str(&o, "name", hi.name);
		if (user)
			out_null(&o, "total", NULL);
		else
			out_bytes(&o, "total", hi.total);
		out_bytes(&o, "used", hi.used);
		if (user) {
			out_null(&o, "free", NULL);
			out_null(&o, "largest_free", NULL);
		} else {
			out_bytes(&o, "free", hi.free);
			out_bytes(&o, "largest_free", hi.largest_free);
		}
		out_bytes(&o, "contiguous", hi.contiguous);
		out_bytes(&o, "dma32", hi.dma32);
		out_row_end(&o);
	}
	out_list_end(&o, NULL);
	accmap_close(fd);
	return out_finish(&o);
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

int cmd_pool(int argc, char **argv)
{
	static const char *const heads[] = {
		"ORDER", "BLOCK", "ZEROED", "ZEROED BYTES", "DIRTY", "DIRTY BYTES",
	};
	uint64_t page = (unsigned long long)sysconf(_SC_PAGESIZE);
	uint64_t lookups;
	struct accmap_pool_info pi;
	struct out o;
	uint32_t i, n;
	int fd, ret;

	ret = device_command(argc, argv, "bd:h", bytes_device_options, pool_usage, &fd);
	if (ret >= 0)
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

	out_init(&o, json_out, exact_bytes);
	if (out_json(&o))
		json_u64(out_json(&o), "page_size", page);
	out_list_begin(&o, "orders", heads, ARRAY_SIZE(heads), ~0UL);
	for (i = 0; i < n; i++) {
		const struct accmap_pool_order *po = &pi.orders[i];
		uint64_t block = po->order < 64 ? mul_sat(page, 1ULL << po->order) :
						  UINT64_MAX;

		out_row_begin(&o);
		out_u64(&o, "order", po->order);
		out_bytes(&o, "block", block);
		out_u64(&o, "zeroed", po->zeroed);
		out_bytes(&o, "zeroed_bytes", mul_sat(po->zeroed, block));
		out_u64(&o, "dirty", po->dirty);
		out_bytes(&o, "dirty_bytes", mul_sat(po->dirty, block));
		out_row_end(&o);
	}
	out_list_end(&o, NULL);

	out_group_begin(&o, NULL, 9);
	out_textf(&o, NULL, "%s", "");
	out_bytes(&o, "cap", pi.cap);
	out_bytes(&o, "pooled", pi.pooled);
	lookups = pi.hits + pi.misses;
	if (lookups && lookups >= pi.hits)
		out_u64f(&o, "hits", pi.hits, "%llu blocks (%.1f%%)",
			 (unsigned long long)pi.hits,
			 100.0 * (double)pi.hits / (double)lookups);
	else
		out_u64f(&o, "hits", pi.hits, "%llu blocks", (unsigned long long)pi.hits);
	out_u64f(&o, "misses", pi.misses, "%llu blocks", (unsigned long long)pi.misses);
	out_bytes(&o, "shrunk", pi.shrunk);
	out_group_end(&o);
	return out_finish(&o);
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

/*
 * One cell of a debugfs table: numbers (decimal, or 0x hexadecimal) are
 * JSON integers, and in text as they are unless @bytes says humanise;
 * "-" is null; anything else a string.
 */
static void out_cell(struct out *o, const char *key, const char *cell, bool bytes)
{
	uint64_t v;

	if (!strcmp(cell, "-") || !*cell)
		out_null(o, key, cell);
	else if (is_number(cell) && parse_u64(cell, UINT64_MAX, &v))
		if (bytes && is_decimal(cell))
			out_bytes(o, key, v);
		else
			out_u64f(o, key, v, "%s", cell);
	else
		out_str(o, key, cell);
}

/*
 * One tab-separated debugfs file (header line first): text, a table with
 * the header in capitals (and "(none)" under it without rows); JSON,
 * member @key, an array of one object per row whose members are named
 * after the file's columns.  @file names the file (which columns hold
 * bytes).
 */
void print_tsv_table(struct out *o, const char *file, const char *key, char *data)
{
	char **lines = NULL, ***rows = NULL, **header, **heads;
	size_t nlines = 0, *nfields = NULL, ncols = 0, nheader;
	unsigned long right = 0;
	char *p = data;
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
		if (out_json(o)) {
			json_begin_array(out_json(o), key);
			json_end_array(out_json(o));
		}
		out_line(o, "(empty)");
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

	heads = xrealloc(NULL, ncols, sizeof(*heads));
	for (c = 0; c < ncols; c++) {
		const char *cell = c < nheader ? header[c] : "";
		bool numeric = nlines > 1;
		size_t i;

		for (r = 1; r < nlines; r++)
			if (c < nfields[r] && *rows[r][c] && !is_number(rows[r][c]))
				numeric = false;
		if (numeric && c < 8 * sizeof(right))
			right |= 1UL << c;
		/* Header in capitals, like the other tables. */
		heads[c] = xstrdup(cell);
		for (i = 0; heads[c][i]; i++)
			if (heads[c][i] >= 'a' && heads[c][i] <= 'z')
				heads[c][i] += 'A' - 'a';
	}
	out_list_begin(o, key, (const char *const *)heads, ncols, right);
	for (r = 1; r < nlines; r++) {
		out_row_begin(o);
		for (c = 0; c < ncols; c++) {
			const char *cell = c < nfields[r] ? rows[r][c] : "";

			if (c < nheader)
				out_cell(o, header[c], cell,
					 is_bytes_column(file, header, nheader, c));
			else
				out_textf(o, NULL, "%s", cell);
		}
		out_row_end(o);
	}
	out_list_end(o, "(none)");

	for (c = 0; c < ncols; c++)
		free(heads[c]);
	free(heads);
	for (r = 0; r < nlines; r++)
		free(rows[r]);
	free(rows);
	free(nfields);
	free(lines);
}

/*
 * @text, "name<TAB>value" lines, as a group of values (text: two columns),
 * splitting @text in place: @row gives one line's @n fields @f.  With
 * @key, a JSON object of that name, else members of the enclosing one.
 */
static void print_name_values(struct out *o, const char *key, char *text,
			      void (*row)(struct out *o, char **f, size_t n))
{
	char *line = text;

	out_group_begin(o, key, 0);
	while (*line) {
		char *nl = strchr(line, '\n'), **f;
		size_t n;

		if (nl)
			*nl = '\0';
		n = split_tabs(line, &f);
		row(o, f, n);
		free(f);
		if (!nl)
			break;
		line = nl + 1;
	}
	out_group_end(o);
}

/* A name and a number (bytes if @bytes), or a string, of a name/value line. */
static void name_value(struct out *o, char **f, size_t n, bool bytes)
{
	out_label(o, f[0]);
	out_cell(o, f[0], n > 1 ? f[1] : "", bytes);
}

/*
 * A line of the replay file's totals: "name<TAB>value", or
 * "target<TAB>NAME<TAB>N": in text a line of the totals, in JSON an
 * element of "targets" (replay_targets_json()).
 */
static void replay_total_row(struct out *o, char **f, size_t n)
{
	char label[80];

	if (n == 3 && !strcmp(f[0], "target")) {
		snprintf(label, sizeof(label), "target %s:", f[1]);
		out_textf(o, label, "%s session%s", f[2], strcmp(f[2], "1") ? "s" : "");
		return;
	}
	name_value(o, f, n, !strcmp(f[0], "mapped"));
}

/* JSON: the replay file's "target<TAB>NAME<TAB>N" lines in @text. */
static void replay_targets_json(struct out *o, char *text)
{
	struct json *j = out_json(o);
	char *line;

	if (!j)
		return;
	json_begin_array(j, "targets");
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char **f;
		uint64_t v;

		if (split_tabs(line, &f) == 3 && !strcmp(f[0], "target") &&
		    parse_u64(f[2], UINT64_MAX, &v)) {
			json_begin_object(j, NULL);
			json_string(j, "name", f[1]);
			json_u64(j, "sessions", v);
			json_end_object(j);
		}
		free(f);
	}
	json_end_array(j);
}

/* A line of the devmem file before its table: kind, total, used, evictions. */
static void devmem_head_row(struct out *o, char **f, size_t n)
{
	uint64_t v;

	if (n >= 2 && !strcmp(f[0], "evictions") && parse_u64(f[1], UINT64_MAX, &v))
		out_u64f(o, "evictions", v, "%s pages", f[1]);
	else
		name_value(o, f, n, !strcmp(f[0], "total") || !strcmp(f[0], "used"));
}

/*
 * The replay file: a table of sessions, then "name<TAB>total" lines, then
 * "target<TAB>name<TAB>sessions" lines.  Text: the table as the other
 * files are, the rest under it; JSON: {"sessions": [...], "totals": {...},
 * "targets": [{"name", "sessions"}]}.
 */
static void print_replay_file(struct out *o, char *data)
{
	static const char *const totals[] = { "sessions", "mapped", "table_pages" };
	char *line, *rest = NULL, *copy;
	size_t i;

	/* The table ends before the first line that is a total. */
	for (line = strchr(data, '\n'); line && line[1] && !rest; line = strchr(line + 1, '\n'))
		for (i = 0; i < ARRAY_SIZE(totals); i++)
			if (!strncmp(line + 1, totals[i], strlen(totals[i])) &&
			    line[1 + strlen(totals[i])] == '\t')
				rest = line + 1;
	if (rest)
		rest[-1] = '\0';	/* the table's last newline */

	out_object_begin(o, "replay");
	print_tsv_table(o, "replay", "sessions", data);
	if (rest) {
		copy = xstrdup(rest);
		out_line(o, "%s", "");
		print_name_values(o, "totals", rest, replay_total_row);
		replay_targets_json(o, copy);
		free(copy);
	}
	out_object_end(o);
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
 * The lines of the devmem file before its table, @head up to @end: text,
 * "name: value" lines, bytes humanised unless -b; JSON, members "kind",
 * "total", "used", "evictions" of the enclosing object.
 */
void print_devmem_head(struct out *o, const char *head, const char *end)
{
	size_t len = end ? (size_t)(end - head) : strlen(head);
	char *copy = xrealloc(NULL, len + 1, 1);

	memcpy(copy, head, len);
	copy[len] = '\0';
	print_name_values(o, NULL, copy, devmem_head_row);
	free(copy);
}

/* The devmem file as 'accmapctl list devmem' shows it. */
static void print_devmem_file(struct out *o, char *data)
{
	char *table = devmem_table(data);

	out_object_begin(o, "devmem");
	print_devmem_head(o, data, table);
	if (table) {
		out_line(o, "%s", "");
		print_tsv_table(o, "devmem", "sessions", table);
	}
	out_object_end(o);
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "raw", no_argument, NULL, 'r' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir;
	bool want[LIST_NFILES] = { false };
	bool raw = false, named = false, first = true;
	size_t i, nwanted = 0;
	struct out o;
	int c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:hr", opts, list_usage, &status)) != OPT_END) {
		if (c == OPT_EXIT)
			return status;
		if (c == 'r')
			raw = true;
	}
	dir = debugfs_dir;
	if (raw && json_out)
		return usage_error("--raw and --json exclude each other");
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

	out_init(&o, json_out, exact_bytes);
	for (i = 0; i < LIST_NFILES; i++) {
		const char *name = list_files[i].name;
		char path[4096];
		char *data = NULL;
		size_t len = 0;
		int ret;

		if (!want[i])
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
			out_discard(&o);
			return usage_error("debugfs path too long");
		}
		ret = read_file(path, &data, &len);
		/* Older modules lack some files: fine unless asked for. */
		if (ret == -ENOENT && !named && list_files[i].optional &&
		    !access(dir, F_OK))
			continue;
		if (ret) {
			out_discard(&o);
			fail(ret, "read %s", path);
			explain_debugfs(ret, dir);
			return EXIT_FAILURE;
		}

		if (raw) {
			/* One file: exactly its bytes; more: a "# name" line each. */
			if (nwanted > 1)
				printf("# %s\n", name);
			fwrite(data, 1, len, stdout);
		} else {
			if (!first)
				out_line(&o, "%s", "");
			out_line(&o, "%s:", name);
			if (!strcmp(name, "replay"))
				print_replay_file(&o, data);
			else if (!strcmp(name, "devmem"))
				print_devmem_file(&o, data);
			else
				print_tsv_table(&o, name, name, data);
		}
		first = false;
		free(data);
	}
	return out_finish(&o);
}

/* ------------------------------------------------------------------ */
/* accmapctl alloc */

void alloc_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-d DEVICE] alloc SIZE [--heap-mask M] [--wc | --uncached]\n"
		"                          [--contiguous] [--dma32] [--tag T] [--export] [--hold]\n"
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
		"  -D, --dma32        every page below 4 GiB, for 32-bit DMA masters\n"
		"                     (heaps says how much each heap has)\n"
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

/*
 * What alloc and info say alike about a buffer: size, heap and flags
 * (JSON: "size", "heap", "heap_name", "cache", "flags"); then its tag.
 */
static void print_buffer(struct out *o, int fd, const struct accmap_info *info)
{
	char b[96], name[ACCMAP_HEAP_NAME_LEN + 1];
	struct json *j = out_json(o);

	out_u64f(o, "size", info->size, "%llu (%s)", (unsigned long long)info->size,
		 fmt_bytes(b, sizeof(b), info->size, false));
	if (info->heap == ACCMAP_HEAP_NONE) {
		out_null(o, "heap", "none");
		if (j)
			json_null(j, "heap_name");
	} else {
		heap_name(fd, info->heap, name, sizeof(name));
		out_u64f(o, "heap", info->heap, "%u%s%s%s", info->heap, *name ? " (" : "",
			 name, *name ? ")" : "");
		if (j)
			json_string(j, "heap_name", name);
	}
	if (j)
		json_string(j, "cache", info->flags & ACCMAP_ALLOC_UNCACHED ? "uncached" :
			    info->flags & ACCMAP_ALLOC_WRITECOMBINE ? "writecombine" : "cached");
	out_u64f(o, "flags", info->flags, "%s", fmt_alloc_flags(b, sizeof(b), info->flags));
}

static void print_tag(struct out *o, uint16_t tag)
{
	out_u64f(o, "tag", tag, "%u (0x%04x)", tag, tag);
}

int cmd_alloc(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "heap-mask", required_argument, NULL, 'm' },
		{ "wc", no_argument, NULL, 'w' },
		{ "uncached", no_argument, NULL, 'u' },
		{ "contiguous", no_argument, NULL, 'c' },
		{ "dma32", no_argument, NULL, 'D' },
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
	struct sigaction sa;
	struct out o;
	sigset_t stop;
	uint64_t size;

	begin_options(argv);
	while ((c = next_option(argc, argv, "m:wucDt:eHd:h", opts, alloc_usage,
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
		case 'D':
			flags |= ACCMAP_ALLOC_DMA32;
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

	out_init(&o, json_out, false);
	out_group_begin(&o, NULL, 8);
	out_u64(&o, "id", id);
	print_buffer(&o, fd, &info);
	print_tag(&o, info.tag);
	if (export) {
		out_label(&o, "dmabuf");
		out_u64f(&o, "dmabuf_fd", (uint64_t)dmabuf_fd, "fd %d (pid %d)", dmabuf_fd,
			 (int)getpid());
	} else if (out_json(&o)) {
		json_null(out_json(&o), "dmabuf_fd");
	}
	if (out_json(&o))
		json_u64(out_json(&o), "pid", (uint64_t)getpid());
	out_group_end(&o);
	status = out_finish(&o);

	if (hold) {
		/* JSON is all of standard output: the word goes to stderr. */
		fputs("holding, press Ctrl-C\n", json_out ? stderr : stdout);
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

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct { uint32_t bit; const char *name; } states[] = {
		{ ACCMAP_STATE_ALLOCATED, "allocated" },
		{ ACCMAP_STATE_EXPORTED, "exported" },
		{ ACCMAP_STATE_READONLY, "read-only" },
		{ ACCMAP_STATE_CONTIGUOUS, "contiguous" },
	};
	uint32_t target_fd = UINT32_MAX, pid = 0, id;
	struct accmap_info info;
	struct out o;
	char b[96];
	size_t k;
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
			if (pid_option(optarg, &pid))
				return EXIT_USAGE;
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

	out_init(&o, json_out, false);
	out_group_begin(&o, NULL, 14);
	out_u64(&o, "id", info.id);
	print_buffer(&o, fd, &info);
	out_textf(&o, "state:", "%s", fmt_state(b, sizeof(b), info.state));
	if (out_json(&o)) {
		json_begin_array(out_json(&o), "state");
		for (k = 0; k < ARRAY_SIZE(states); k++)
			if (info.state & states[k].bit)
				json_string(out_json(&o), NULL, states[k].name);
		json_end_array(out_json(&o));
	}
	print_tag(&o, info.tag);
	out_u64f(&o, "handle_refs", info.handle_refs, "%u (this import included)",
		 info.handle_refs);
	out_u64(&o, "exports", info.exports);
	out_u64(&o, "maps", info.maps);
	out_u64(&o, "attachments", info.attachments);
	out_u64f(&o, "vmaps", info.vmaps,
		 "%u (dma-bufs an importer holds a kernel mapping of)", info.vmaps);
	out_boolf(&o, "contiguous", info.state & ACCMAP_STATE_CONTIGUOUS, "%s",
		  info.state & ACCMAP_STATE_CONTIGUOUS ? "yes (one block)" : "no");
	out_group_end(&o);
	status = out_finish(&o);

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
	int fd, ret, c, status;
	struct out o;
	uint32_t tag;

	begin_options(argv);
	while ((c = next_option(argc, argv, "d:h", device_options, label_usage,
				&status)) != OPT_END)
		if (c == OPT_EXIT)
			return status;
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
	out_init(&o, json_out, false);
	if (*argv[optind + 1])
		out_line(&o, "tag %u (0x%04x): %s", tag, tag, argv[optind + 1]);
	else
		out_line(&o, "tag %u (0x%04x): label removed", tag, tag);
	if (out_json(&o)) {
		json_u64(out_json(&o), "tag", tag);
		if (*argv[optind + 1])
			json_string(out_json(&o), "label", argv[optind + 1]);
		else
			json_null(out_json(&o), "label");
	}
	return out_finish(&o);
}

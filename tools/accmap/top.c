// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl top: a live view of who holds how much accmap memory, per
 * process, heap and tag, from the debugfs files allocations and orphans,
 * redrawn every interval.
 */
#include "accmapctl.h"

void top_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s top [-b] [-i SECONDS] [-n COUNT] [--debugfs DIR]\n"
		"\n"
		"Shows, every interval, who holds how much accmap memory: per process\n"
		"(pid, name, ids, bytes, and bytes per heap), per tag (with its label),\n"
		"and the orphans (buffers no process holds an id for, kept by a dma-buf\n"
		"or a mapping), each sorted by bytes, from the debugfs files\n"
		"allocations and orphans.  A buffer a process holds under two ids\n"
		"counts twice, as in debugfs clients.  On a terminal each view replaces\n"
		"the last; otherwise views follow each other, a blank line apart.\n"
		"Reading debugfs needs root and a mounted debugfs.\n"
		"\n"
		"  -b, --bytes          exact byte counts instead of KiB/MiB/GiB\n"
		"  -i, --interval S     seconds between views, 1..3600 (default 1)\n"
		"  -n, --count N        stop after N views (default: until interrupted)\n"
		"      --debugfs DIR    the accmap debugfs directory (default %s)\n"
		"  -h, --help           this text\n",
		prog, DEBUGFS_ACCMAP);
}

/**
 * struct top_sum - what one process or one tag holds
 * @pid: the process (per-process sums), or 0
 * @tag: the tag (per-tag sums)
 * @name: the process's comm, or the tag's label
 * @ids: ids (rows of allocations) counted
 * @bytes: their sizes added up
 * @heap_bytes: per heap of struct top_view's @heaps, the part of @bytes
 */
struct top_sum {
	uint32_t pid;
	uint32_t tag;
	char name[32];
	uint64_t ids;
	uint64_t bytes;
	uint64_t *heap_bytes;
};

/**
 * struct top_view - one view: the sums of one reading of debugfs
 * @heaps: the heap names seen, in the order first seen
 * @nheaps: entries of @heaps
 * @procs: per process
 * @nprocs: entries of @procs
 * @tags: per tag
 * @ntags: entries of @tags
 * @orphans: orphan buffers
 * @orphan_bytes: their sizes added up
 * @have_orphans: whether the orphans file was there
 */
struct top_view {
	char **heaps;
	size_t nheaps;
	struct top_sum *procs;
	size_t nprocs;
	struct top_sum *tags;
	size_t ntags;
	uint64_t orphans;
	uint64_t orphan_bytes;
	bool have_orphans;
};

static void top_view_free(struct top_view *v)
{
	size_t i;

	for (i = 0; i < v->nheaps; i++)
		free(v->heaps[i]);
	for (i = 0; i < v->nprocs; i++)
		free(v->procs[i].heap_bytes);
	for (i = 0; i < v->ntags; i++)
		free(v->tags[i].heap_bytes);
	free(v->heaps);
	free(v->procs);
	free(v->tags);
	memset(v, 0, sizeof(*v));
}

/* The index of heap @name in @v, added if new; every sum grows a column. */
static size_t top_heap(struct top_view *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nheaps; i++)
		if (!strcmp(v->heaps[i], name))
			return i;
	v->heaps = xrealloc(v->heaps, v->nheaps + 1, sizeof(*v->heaps));
	v->heaps[v->nheaps] = xstrdup(name);
	for (i = 0; i < v->nprocs; i++) {
		v->procs[i].heap_bytes = xrealloc(v->procs[i].heap_bytes, v->nheaps + 1,
						  sizeof(uint64_t));
		v->procs[i].heap_bytes[v->nheaps] = 0;
	}
	for (i = 0; i < v->ntags; i++) {
		v->tags[i].heap_bytes = xrealloc(v->tags[i].heap_bytes, v->nheaps + 1,
						 sizeof(uint64_t));
		v->tags[i].heap_bytes[v->nheaps] = 0;
	}
	return v->nheaps++;
}

/* The sum for (@pid, @tag) in @sums, added (named @name) if new. */
static struct top_sum *top_find(struct top_sum **sums, size_t *n, size_t nheaps,
				uint32_t pid, uint32_t tag, const char *name)
{
	struct top_sum *s;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*sums)[i].pid == pid && (*sums)[i].tag == tag &&
		    !strcmp((*sums)[i].name, name))
			return &(*sums)[i];
	*sums = xrealloc(*sums, *n + 1, sizeof(**sums));
	s = &(*sums)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tag = tag;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->heap_bytes = xrealloc(NULL, nheaps ? nheaps : 1, sizeof(uint64_t));
	memset(s->heap_bytes, 0, (nheaps ? nheaps : 1) * sizeof(uint64_t));
	return s;
}

/* The index of column @name in @header, or -1. */
static int top_column(char **header, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(header[i], name))
			return (int)i;
	return -1;
}

/*
 * Adds up one debugfs table (@data, modified): the allocations file into
 * processes and tags, or (@orphans) the orphans file into @v's orphan
 * counts.  Returns 0, or -EPROTO when a column it needs is missing.
 */
static int top_add_file(struct top_view *v, char *data, bool orphans)
{
	char **header = NULL, **f = NULL, *line, *next;
	int cpid, ccomm, csize, cheap, ctag, clabel;
	size_t nheader;
	int ret = 0;

	next = strchr(data, '\n');
	if (!next)
		return -EPROTO;
	*next++ = '\0';
	nheader = split_tabs(data, &header);
	cpid = top_column(header, nheader, "pid");
	ccomm = top_column(header, nheader, "comm");
	csize = top_column(header, nheader, "size");
	cheap = top_column(header, nheader, "heap");
	ctag = top_column(header, nheader, "tag");
	clabel = top_column(header, nheader, "label");
	if (csize < 0 || (!orphans && (cpid < 0 || ccomm < 0 || cheap < 0 || ctag < 0 ||
				       clabel < 0))) {
		ret = -EPROTO;
		goto out;
	}

	for (line = next; line && *line; line = next) {
		struct top_sum *p, *t;
		uint64_t size, pid, tag;
		size_t n, h;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		free(f);
		n = split_tabs(line, &f);
		if (n != nheader || !parse_u64(f[csize], UINT64_MAX, &size)) {
			ret = -EPROTO;
			goto out;
		}
		if (orphans) {
			v->orphans++;
			v->orphan_bytes += size;
			continue;
		}
		if (!parse_u64(f[cpid], UINT32_MAX, &pid) ||
		    !parse_u64(f[ctag], UINT16_MAX, &tag)) {
			ret = -EPROTO;
			goto out;
		}
		h = strcmp(f[cheap], "-") ? top_heap(v, f[cheap]) : SIZE_MAX;
		p = top_find(&v->procs, &v->nprocs, v->nheaps, (uint32_t)pid, 0, f[ccomm]);
		t = top_find(&v->tags, &v->ntags, v->nheaps, 0, (uint32_t)tag, f[clabel]);
		p->ids++;
		t->ids++;
		if (h == SIZE_MAX)
			continue;	/* no memory yet: counts as an id, not as bytes */
		p->bytes += size;
		t->bytes += size;
		p->heap_bytes[h] += size;
		t->heap_bytes[h] += size;
	}
out:
	free(f);
	free(header);
	return ret;
}

static int top_by_bytes(const void *a, const void *b)
{
	const struct top_sum *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Reads debugfs into @v; 0, or an exit status after a message. */
static int top_read(const char *dir, struct top_view *v)
{
	static const char *const files[] = { "allocations", "orphans" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char path[4096], *data = NULL;
		size_t len;
		int ret;

		if (snprintf(path, sizeof(path), "%s/%s", dir, files[i]) >= (int)sizeof(path))
			return usage_error("debugfs path too long");
		ret = read_file(path, &data, &len);
		if (ret == -ENOENT && i == 1 && !access(dir, F_OK))
			continue;	/* a module without orphans */
		if (ret) {
			fail(ret, "read %s", path);
			explain_debugfs(ret, dir);
			return EXIT_FAILURE;
		}
		if (i == 1)
			v->have_orphans = true;
		ret = top_add_file(v, data, i == 1);
		free(data);
		if (ret)
			return fail(ret, "%s: not the table accmapctl knows", path);
	}
	qsort(v->procs, v->nprocs, sizeof(*v->procs), top_by_bytes);
	qsort(v->tags, v->ntags, sizeof(*v->tags), top_by_bytes);
	return 0;
}

/* One table of sums: KEY NAME IDS BYTES and a column per heap. */
static void top_print_sums(const struct top_view *v, const struct top_sum *sums, size_t n,
			   bool procs, bool exact)
{
	struct table t;
	size_t i, h, ncols = 4 + v->nheaps;
	char b[32];

	table_init(&t, ncols);
	for (i = 0; i < ncols; i++)
		t.right[i] = i != 1;
	table_add(&t, procs ? "PID" : "TAG");
	table_add(&t, procs ? "COMM" : "LABEL");
	table_add(&t, "IDS");
	table_add(&t, "BYTES");
	for (h = 0; h < v->nheaps; h++)
		table_add(&t, v->heaps[h]);
	for (i = 0; i < n; i++) {
		table_addf(&t, "%u", procs ? sums[i].pid : sums[i].tag);
		table_add(&t, sums[i].name);
		table_addf(&t, "%llu", (unsigned long long)sums[i].ids);
		table_add(&t, fmt_bytes(b, sizeof(b), sums[i].bytes, exact));
		for (h = 0; h < v->nheaps; h++)
			table_add(&t, fmt_bytes(b, sizeof(b), sums[i].heap_bytes[h], exact));
	}
	table_print(&t, stdout);
	table_free(&t);
}

static void top_print(const struct top_view *v, bool exact)
{
	uint64_t ids = 0, bytes = 0;
	char b[32], when[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	for (i = 0; i < v->nprocs; i++) {
		ids += v->procs[i].ids;
		bytes += v->procs[i].bytes;
	}
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	printf("accmap at %s: %zu processes hold %llu ids, %s", when, v->nprocs,
	       (unsigned long long)ids, fmt_bytes(b, sizeof(b), bytes, exact));
	if (v->have_orphans)
		printf("; %llu orphans, %s", (unsigned long long)v->orphans,
		       fmt_bytes(b, sizeof(b), v->orphan_bytes, exact));
	printf("\n\n");
	if (v->nprocs)
		top_print_sums(v, v->procs, v->nprocs, true, exact);
	else
		printf("(no process holds an id)\n");
	if (v->ntags) {
		printf("\n");
		top_print_sums(v, v->tags, v->ntags, false, exact);
	}
}

int cmd_top(int argc, char **argv)
{
	enum { OPT_DEBUGFS = 256 };
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = DEBUGFS_ACCMAP;
	uint32_t interval = 1, count = 0, shown;
	bool exact = false, tty = isatty(STDOUT_FILENO);
	int c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bi:n:h", opts, top_usage, &status)) != OPT_END) {
		switch (c) {
		case 'b':
			exact = true;
			break;
		case 'i':
			if (!parse_u32(optarg, 3600, &interval) || !interval)
				return usage_error("bad interval '%s'", optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, UINT32_MAX, &count) || !count)
				return usage_error("bad count '%s'", optarg);
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

	for (shown = 0; !count || shown < count; shown++) {
		struct top_view v = { 0 };

		status = top_read(dir, &v);
		if (status) {
			top_view_free(&v);
			return status;
		}
		if (tty)
			fputs("\033[H\033[J", stdout);	/* home, clear: redraw in place */
		else if (shown)
			fputc('\n', stdout);
		top_print(&v, exact);
		top_view_free(&v);
		fflush(stdout);
		if (count && shown + 1 == count)
			break;
		sleep(interval);
	}
	return EXIT_SUCCESS;
}

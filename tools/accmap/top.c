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
		"With --json (accmapctl --json top), one view as one JSON document.\n"
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

/*
 * One list of sums: text, a table KEY NAME IDS BYTES and a column per
 * heap; JSON, @key: [{"pid" or "tag", "comm" or "label", "ids", "bytes",
 * "heaps": {heap name: bytes}}].
 */
static void top_print_sums(struct out *o, const struct top_view *v, const char *key,
			   const struct top_sum *sums, size_t n, bool procs)
{
	const char *heads[4 + ACCMAP_HEAP_MAX];
	size_t i, h, ncols = 4 + v->nheaps;

	/* More heap names than the device has heaps is not the table it knows. */
	if (ncols > ARRAY_SIZE(heads))
		ncols = ARRAY_SIZE(heads);
	heads[0] = procs ? "PID" : "TAG";
	heads[1] = procs ? "COMM" : "LABEL";
	heads[2] = "IDS";
	heads[3] = "BYTES";
	for (h = 0; h + 4 < ncols; h++)
		heads[4 + h] = v->heaps[h];
	out_list_begin(o, key, heads, ncols, ~0x2UL);
	for (i = 0; i < n; i++) {
		out_row_begin(o);
		if (procs)
			out_u64(o, "pid", sums[i].pid);
		else
			out_u64(o, "tag", sums[i].tag);
		/* debugfs writes "-" for a tag without a label. */
		if (!strcmp(sums[i].name, "-"))
			out_null(o, procs ? "comm" : "label", NULL);
		else
			out_str(o, procs ? "comm" : "label", sums[i].name);
		out_u64(o, "ids", sums[i].ids);
		out_bytes(o, "bytes", sums[i].bytes);
		out_object_begin(o, "heaps");
		for (h = 0; h + 4 < ncols; h++)
			out_bytes(o, v->heaps[h], sums[i].heap_bytes[h]);
		out_object_end(o);
		out_row_end(o);
	}
	out_list_end(o, NULL);
}

/* One view; JSON: the whole document. */
static void top_print(struct out *o, const struct top_view *v)
{
	struct json *j = out_json(o);
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
	if (j) {
		json_u64(j, "time", (uint64_t)now);
		json_begin_object(j, "totals");
		json_u64(j, "processes", v->nprocs);
		json_u64(j, "ids", ids);
		json_u64(j, "bytes", bytes);
		json_end_object(j);
		if (v->have_orphans) {
			json_begin_object(j, "orphans");
			json_u64(j, "buffers", v->orphans);
			json_u64(j, "bytes", v->orphan_bytes);
			json_end_object(j);
		} else {
			json_null(j, "orphans");
		}
	} else {
		printf("accmap at %s: %zu processes hold %llu ids, %s", when, v->nprocs,
		       (unsigned long long)ids, fmt_bytes(b, sizeof(b), bytes, o->exact));
		if (v->have_orphans)
			printf("; %llu orphans, %s", (unsigned long long)v->orphans,
			       fmt_bytes(b, sizeof(b), v->orphan_bytes, o->exact));
		printf("\n\n");
	}
	if (v->nprocs || j)
		top_print_sums(o, v, "processes", v->procs, v->nprocs, true);
	else
		out_line(o, "(no process holds an id)");
	if (v->ntags || j) {
		out_line(o, "%s", "");
		top_print_sums(o, v, "tags", v->tags, v->ntags, false);
	}
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t interval = 1, count = 0, shown;
	bool tty = isatty(STDOUT_FILENO);
	int c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bi:n:h", opts, top_usage, &status)) != OPT_END) {
		switch (c) {
		case 'i':
			if (!parse_u32(optarg, 3600, &interval) || !interval)
				return usage_error("bad interval '%s'", optarg);
			break;
		case 'n':
			if (!parse_u32(optarg, UINT32_MAX, &count) || !count)
				return usage_error("bad count '%s'", optarg);
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	/* One JSON document per invocation: one view. */
	if (json_out && count > 1)
		return usage_error("--json prints one view: -n %u is more", count);
	if (json_out)
		count = 1;

	for (shown = 0; !count || shown < count; shown++) {
		struct top_view v = { 0 };
		struct out o;

		status = top_read(debugfs_dir, &v);
		if (status) {
			top_view_free(&v);
			return status;
		}
		if (!json_out && tty)
			fputs("\033[H\033[J", stdout);	/* home, clear: redraw in place */
		else if (!json_out && shown)
			fputc('\n', stdout);
		out_init(&o, json_out, exact_bytes);
		top_print(&o, &v);
		out_finish(&o);
		top_view_free(&v);
		fflush(stdout);
		if (count && shown + 1 == count)
			break;
		sleep(interval);
	}
	return EXIT_SUCCESS;
}

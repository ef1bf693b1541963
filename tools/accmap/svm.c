// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl svm: shared virtual memory sessions and device memory, from
 * debugfs.
 */
#include "accmapctl.h"

/* ------------------------------------------------------------------ */
/* accmapctl svm */

void svm_usage(FILE *f)
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

/* The totals of the sessions shown. */
static void svm_print_totals(struct out *o, const struct row_sums *tot)
{
	struct json *j = out_json(o);
	char b[32], h[32];

	out_group_begin(o, "totals", 0);
	out_u64(o, "sessions", tot->rows);
	out_u64f(o, "mapped", tot->sum[SV_MAPPED], "%s (huge %s)",
		 fmt_bytes(b, sizeof(b), tot->sum[SV_MAPPED], o->exact),
		 fmt_bytes(h, sizeof(h), tot->sum[SV_HUGE], o->exact));
	if (j)
		json_u64(j, "huge", tot->sum[SV_HUGE]);
	/* Modules without device memory have no such column. */
	if (tot->found[SV_DEVICE]) {
		out_label(o, "on device");
		out_bytes(o, "device", tot->sum[SV_DEVICE]);
	}
	out_u64_pair(o, "faults", tot->sum[SV_FAULTS], "fatal", tot->sum[SV_FATAL],
		     "%llu (fatal %llu)");
	out_u64(o, "invalidations", tot->sum[SV_INVAL]);
	out_u64(o, "pages_mapped", tot->sum[SV_PAGES]);
	out_group_end(o);
}

/*
 * The device memory part of accmapctl svm, from the devmem file in @dir:
 * kind and use, the sessions of @pid (all if 0) with their migrations,
 * and the sums of those; JSON: "devmem", an object, or null if there is
 * no device memory.  0, or 1 after a message if the file exists but
 * cannot be read.
 */
static int svm_print_devmem(struct out *o, const char *dir, uint32_t pid)
{
	struct json *j = out_json(o);
	char path[4096], *data, *table;
	struct row_sums tot;
	size_t len;
	int ret;

	if (snprintf(path, sizeof(path), "%s/devmem", dir) >= (int)sizeof(path))
		return usage_error("debugfs path too long");
	ret = read_file(path, &data, &len);
	if (ret == -ENOENT) {
		/* The module makes the file only when it has device memory. */
		out_line(o, "device memory: none");
		if (j)
			json_null(j, "devmem");
		return EXIT_SUCCESS;
	}
	if (ret) {
		fail(ret, "read %s", path);
		return EXIT_FAILURE;
	}
	out_line(o, "device memory:");
	out_object_begin(o, "devmem");
	table = devmem_table(data);
	print_devmem_head(o, data, table);
	if (table) {
		filter_rows(table, pid, devmem_total_cols, DM_NCOLS, &tot);
		out_line(o, "%s", "");
		print_tsv_table(o, "devmem", "sessions", table);
		out_line(o, "%s", "");
		out_group_begin(o, "totals", 0);
		out_label(o, "migrated");
		out_u64_pair(o, "to_device", tot.sum[DM_TO_DEVICE], "to_system",
			     tot.sum[DM_TO_SYSTEM], "%llu pages to the device, %llu back");
		out_label(o, "of those back");
		out_u64_pair(o, "cpu_faults", tot.sum[DM_CPU_FAULTS], "evictions",
			     tot.sum[DM_EVICTIONS], "%llu by CPU faults, %llu evicted");
		out_group_end(o);
	}
	out_object_end(o);
	free(data);
	return EXIT_SUCCESS;
}

int cmd_svm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "raw", no_argument, NULL, 'r' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool raw = false;
	struct row_sums tot;
	char path[4096], *data;
	uint32_t pid = 0;
	struct out o;
	int ret, c, status;
	size_t len;

	begin_options(argv);
	while ((c = next_option(argc, argv, "bd:hp:r", opts, svm_usage, &status)) != OPT_END) {
		switch (c) {
		case 'p':
			if (pid_option(optarg, &pid))
				return EXIT_USAGE;
			break;
		case 'r':
			raw = true;
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (raw && json_out)
		return usage_error("--raw and --json exclude each other");

	if (snprintf(path, sizeof(path), "%s/svm", debugfs_dir) >= (int)sizeof(path))
		return usage_error("debugfs path too long");
	ret = read_file(path, &data, &len);
	if (ret) {
		fail(ret, "read %s", path);
		if (ret == -ENOENT && !access(debugfs_dir, F_OK))
			note("the accmap module has no svm file: it predates SVM");
		else
			explain_debugfs(ret, debugfs_dir);
		return EXIT_FAILURE;
	}
	filter_rows(data, pid, svm_total_cols, SV_NCOLS, &tot);
	if (raw) {
		fputs(data, stdout);
		free(data);
		return EXIT_SUCCESS;
	}
	out_init(&o, json_out, exact_bytes);
	print_tsv_table(&o, "svm", "sessions", data);
	free(data);
	out_line(&o, "%s", "");
	svm_print_totals(&o, &tot);
	out_line(&o, "%s", "");
	status = svm_print_devmem(&o, debugfs_dir, pid);
	if (status) {
		out_discard(&o);
		return status;
	}
	return out_finish(&o);
}

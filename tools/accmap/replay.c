// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl targets, record, replay, show, import-gpureplay: GPU replay.
 */
#include "accmapctl.h"

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

/*
 * The job chains of the player's last run: text, a line each (if @each)
 * and a total line; JSON, "chains": [{"index", "slot", "head", "state",
 * and "ns" if it ran, "js_status" and "descriptor" if it failed}].  Opens
 * the group of "name: value" lines that follow (the total is its first).
 */
static void print_chains(struct out *o, const struct accmap_player *player, bool each)
{
	static const char *const states[] = {
		[ACCMAP_PLAYER_CHAIN_NOT_RUN] = "not run",
		[ACCMAP_PLAYER_CHAIN_STARTED] = "started",
		[ACCMAP_PLAYER_CHAIN_DONE] = "done",
		[ACCMAP_PLAYER_CHAIN_FAILED] = "failed",
	};
	static const char *const state_keys[] = {
		[ACCMAP_PLAYER_CHAIN_NOT_RUN] = "not_run",
		[ACCMAP_PLAYER_CHAIN_STARTED] = "started",
		[ACCMAP_PLAYER_CHAIN_DONE] = "done",
		[ACCMAP_PLAYER_CHAIN_FAILED] = "failed",
	};
	const struct accmap_player_chain *c = NULL;
	uint32_t n, i, count[ARRAY_SIZE(states)] = { 0 };
	struct json *j = out_json(o);
	char t[32];

	c = accmap_player_chains(player, &n);
	if (j)
		json_begin_array(j, "chains");
	for (i = 0; i < n; i++) {
		uint32_t st = c[i].state < ARRAY_SIZE(states) ? c[i].state : 0;
		bool failed = st == ACCMAP_PLAYER_CHAIN_FAILED;
		bool ran = st != ACCMAP_PLAYER_CHAIN_NOT_RUN;

		count[st]++;
		if (j) {
			json_begin_object(j, NULL);
			json_u64(j, "index", i);
			json_u64(j, "slot", c[i].chain.slot);
			json_u64(j, "head", c[i].chain.head);
			json_string(j, "state", state_keys[st]);
			if (ran)
				json_u64(j, "ns", c[i].ns);
			if (failed) {
				json_u64(j, "js_status", c[i].status);
				json_u64(j, "descriptor", c[i].descriptor);
			}
			json_end_object(j);
		}
		if (j || !each)
			continue;
		printf("chain %3u: slot %u, head 0x%llx, %s", i, c[i].chain.slot,
		       (unsigned long long)c[i].chain.head, states[st]);
		if (failed)
			printf(": JS_STATUS 0x%02x (%s) at descriptor 0x%llx", c[i].status,
			       js_status_name(c[i].status), (unsigned long long)c[i].descriptor);
		else if (st == ACCMAP_PLAYER_CHAIN_STARTED)
			printf(c[i].chain.end_op == UINT32_MAX ? " (no op waits for it)" :
								 " (the run stopped before its end)");
		if (ran)
			printf(", %s", fmt_ns(t, sizeof(t), c[i].ns));
		printf("\n");
	}
	if (j)
		json_end_array(j);
	out_group_begin(o, NULL, 10);
	out_textf(o, "chains:", "%u: %u done, %u failed, %u started and not ended, %u not run",
		  n, count[ACCMAP_PLAYER_CHAIN_DONE], count[ACCMAP_PLAYER_CHAIN_FAILED],
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

void targets_usage(FILE *f)
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

int cmd_targets(int argc, char **argv)
{
	static const char *const heads[] = {
		"INDEX", "NAME", "KIND", "WINDOW", "FORMATS", "AS", "GPU_ID", "SESSIONS",
	};
	const uint32_t known = ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ |
			       ACCMAP_REPLAY_TARGET_SVM;
	struct out o;
	uint32_t i, k;
	int fd, ret;

	ret = device_command(argc, argv, "d:h", device_options, targets_usage, &fd);
	if (ret >= 0)
		return ret;

	out_init(&o, json_out, false);
	out_list_begin(&o, "targets", heads, ARRAY_SIZE(heads), 0xa9);
	for (i = 0; i < ACCMAP_REPLAY_TARGETS_MAX; i++) {
		struct accmap_replay_target_info ti;
		bool sim, irq, svm;
		char b[64];

		ret = accmap_replay_query(fd, i, &ti);
		if (ret == -ENOENT)
			break;
		if (ret) {
			out_discard(&o);
			fail(ret, "accmap_replay_query(index %u)", i);
			explain_replay_errno(ret);
			accmap_close(fd);
			return EXIT_FAILURE;
		}
		ti.name[sizeof(ti.name) - 1] = '\0';
		sim = ti.flags & ACCMAP_REPLAY_TARGET_SIM;
		irq = ti.flags & ACCMAP_REPLAY_TARGET_IRQ;
		svm = ti.flags & ACCMAP_REPLAY_TARGET_SVM;
		out_row_begin(&o);
		out_u64(&o, "index", i);
		out_str(&o, "name", ti.name);
		out_strf(&o, "kind", sim ? "sim" : "mmio", "%s%s%s%s", sim ? "sim" : "mmio",
			 irq ? ",irq" : "", svm ? ",svm" : "", ti.flags & ~known ? ",unknown" : "");
		if (out_json(&o)) {
			json_bool(out_json(&o), "irq", irq);
			json_bool(out_json(&o), "svm", svm);
		}
		out_u64f(&o, "window_size", ti.window_size, "%s",
			 fmt_bytes(b, sizeof(b), ti.window_size, false));
		out_textf(&o, NULL, "%s", fmt_formats(b, sizeof(b), ti.formats));
		if (out_json(&o)) {
			json_begin_array(out_json(&o), "formats");
			for (k = 0; k < 32; k++)
				if (ti.formats & (1U << k))
					json_string(out_json(&o), NULL, pgt_name(k));
			json_end_array(out_json(&o));
		}
		out_u64(&o, "address_spaces", ti.as_count);
		out_u64f(&o, "gpu_id", ti.gpu_id, "0x%08x", ti.gpu_id);
		out_u64(&o, "sessions", ti.sessions);
		out_row_end(&o);
	}
	out_list_end(&o, "(none)");
	accmap_close(fd);
	return out_finish(&o);
}

/* ------------------------------------------------------------------ */
/* accmapctl record */

#define RECORD_SIZE_DEFAULT	64U

void record_usage(FILE *f)
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

int cmd_record(int argc, char **argv)
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
	struct json *j;
	struct stat st;
	struct out o;

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

	out_init(&o, json_out, false);
	out_group_begin(&o, NULL, 10);
	out_strf(&o, "target", SIMDRV_TARGET, "%s (index %u), GPU_ID 0x%08x, format %s, AS %u",
		 SIMDRV_TARGET, res.target, res.gpu.gpu_id, pgt_name(w.format), w.as);
	j = out_json(&o);
	if (j) {
		json_u64(j, "target_index", res.target);
		json_u64(j, "gpu_id", res.gpu.gpu_id);
		json_string(j, "format", pgt_name(w.format));
		json_u64(j, "as", w.as);
		json_u64(j, "m", w.m);
		json_u64(j, "k", w.k);
		json_u64(j, "n", w.n);
		json_u64(j, "seed", seed);
	}
	if (w.op == ACCMAP_SIM_OP_VADD_I32)
		out_strf(&o, "workload", "vadd", "vadd of %u int32, seed %llu", w.n,
			 (unsigned long long)seed);
	else
		out_strf(&o, "workload", "matmul", "matmul %ux%u by %ux%u int32, seed %llu",
			 w.m, w.k, w.k, w.n, (unsigned long long)seed);
	out_u64f(&o, "maps", rec->nr_maps, "%u (descriptor, a, b, c)", rec->nr_maps);
	out_u64f(&o, "ops", rec->nr_ops, "%u, ran in %s", rec->nr_ops,
		 fmt_ns(b1, sizeof(b1), res.run.elapsed_ns));
	if (j)
		json_u64(j, "elapsed_ns", res.run.elapsed_ns);
	out_label(&o, "check");
	out_u64f(&o, "checked", ec, "c matches the CPU (%u elements)", ec);
	out_label(&o, "wrote");
	out_strf(&o, "output", out, "%s (%s)", out,
		 stat(out, &st) ? "?" : fmt_bytes(b2, sizeof(b2), (uint64_t)st.st_size, false));
	if (j && !stat(out, &st))
		json_u64(j, "output_bytes", (uint64_t)st.st_size);
	out_group_end(&o);
	out_finish(&o);
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

void replay_usage(FILE *f)
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

/* JSON: @key, [{"symbol", "path", "bytes"}] of @n --input or --output. */
static void sym_files_json(struct out *o, const char *key, const struct sym_file *sf,
			   size_t n)
{
	struct json *j = out_json(o);
	size_t i;

	if (!j)
		return;
	json_begin_array(j, key);
	for (i = 0; i < n; i++) {
		json_begin_object(j, NULL);
		json_string(j, "symbol", sf[i].sym);
		json_string(j, "path", sf[i].path);
		json_u64(j, "bytes", sf[i].len);
		json_end_object(j);
	}
	json_end_array(j);
}

/*
 * After print_chains(), in its group: the recording, the target, the ops
 * and runs, the time and the faults; @r is the failed run, NULL if every
 * run succeeded.
 */
static void replay_summary(struct out *o, const char *path, const struct accmap_recording *rec,
			   const struct accmap_player *player, uint32_t runs,
			   uint64_t ops_done, uint64_t elapsed, const struct accmap_replay_run *r)
{
	struct accmap_replay_target_info ti;
	struct json *j = out_json(o);
	uint32_t index = accmap_player_target(player, &ti);
	char b1[32], b2[32];

	ti.name[sizeof(ti.name) - 1] = '\0';
	if (r)
		out_textf(o, "replayed:", "%s on %s (index %u): %llu ops in %u runs, last failed",
			  path, ti.name, index, (unsigned long long)ops_done, runs);
	else
		out_textf(o, "replayed:", "%s on %s (index %u), format %s, AS %u", path, ti.name,
			  index, pgt_name(rec->format), rec->as);
	if (j) {
		json_string(j, "recording", path);
		json_string(j, "target", ti.name);
		json_u64(j, "target_index", index);
		json_string(j, "format", pgt_name(rec->format));
		json_u64(j, "as", rec->as);
		json_u64(j, "runs", runs);
		json_u64(j, "ops_done", ops_done);
		json_bool(j, "ok", !r);
		if (r)
			json_string(j, "reason", reason_name(r->reason));
	}
	if (!r)
		out_u64f(o, "ops", rec->nr_ops, "%u x %u run%s = %llu", rec->nr_ops, runs,
			 runs == 1 ? "" : "s", (unsigned long long)ops_done);
	else if (j)
		json_u64(j, "ops", rec->nr_ops);
	out_label(o, "run time");
	if (!r)
		out_u64f(o, "elapsed_ns", elapsed, "%s (%s per run)",
			 fmt_ns(b1, sizeof(b1), elapsed), fmt_ns(b2, sizeof(b2), elapsed / runs));
	else
		out_u64f(o, "elapsed_ns", elapsed, "%s", fmt_ns(b1, sizeof(b1), elapsed));
	out_u64(o, "faults", r && r->reason == ACCMAP_REPLAY_MMU_FAULT);
}

int cmd_replay(int argc, char **argv)
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
	struct out o;

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
			/* What ran is the answer too: printed, exit status 1. */
			out_init(&o, json_out, false);
			print_chains(&o, player, !quiet);
			replay_summary(&o, path, rec, player, run + 1, ops_done, elapsed, &r);
			out_group_end(&o);
			out_finish(&o);
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

	out_init(&o, json_out, false);
	print_chains(&o, player, !quiet);
	replay_summary(&o, path, rec, player, repeat, ops_done, elapsed, NULL);
	for (i = 0; i < ninputs; i++)
		out_textf(&o, "input:", "%s <- %s (%zu bytes)", inputs[i].sym, inputs[i].path,
			  inputs[i].len);
	for (i = 0; i < noutputs; i++)
		out_textf(&o, "output:", "%s -> %s (%zu bytes)", outputs[i].sym,
			  outputs[i].path, outputs[i].len);
	out_group_end(&o);
	sym_files_json(&o, "inputs", inputs, ninputs);
	sym_files_json(&o, "outputs", outputs, noutputs);
	out_finish(&o);
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

void show_usage(FILE *f)
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

/* JSON: one op of "op_list", its fields as the recording has them. */
static void show_op_json(struct json *j, uint32_t i, const struct accmap_replay_op *op)
{
	json_begin_object(j, NULL);
	json_u64(j, "index", i);
	json_string(j, "op", accmap_rec_op_name(op->op));
	json_u64(j, "offset", op->offset);
	json_u64(j, "mask", op->mask);
	json_u64(j, "value", op->value);
	json_u64(j, "flags", op->flags);
	json_u64(j, "irq", op->irq);
	json_u64(j, "timeout_us", op->timeout_us);
	json_end_object(j);
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

/* The ops: a count by kind, and with @all each op. */
static void show_ops(struct out *o, const struct accmap_recording *rec, bool all)
{
	uint32_t kinds[ACCMAP_REPLAY_OP_WRITE_ROOT + 1] = { 0 };
	struct json *j = out_json(o);
	char line[256];
	size_t used;
	uint32_t i;

	for (i = 0; i < rec->nr_ops; i++)
		if (rec->ops[i].op < ARRAY_SIZE(kinds))
			kinds[rec->ops[i].op]++;
	used = (size_t)snprintf(line, sizeof(line), "ops:      %u (", rec->nr_ops);
	if (j) {
		json_u64(j, "ops", rec->nr_ops);
		json_begin_object(j, "op_kinds");
	}
	for (i = 1; i < ARRAY_SIZE(kinds); i++) {
		if (!kinds[i])
			continue;
		if (j)
			json_u64(j, accmap_rec_op_name(i), kinds[i]);
		if (used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s %u",
						 line[used - 1] == '(' ? "" : ", ",
						 accmap_rec_op_name(i), kinds[i]);
	}
	if (j)
		json_end_object(j);
	out_line(o, "%s)", line);
	if (!all)
		return;
	if (j)
		json_begin_array(j, "op_list");
	for (i = 0; i < rec->nr_ops; i++)
		if (j)
			show_op_json(j, i, &rec->ops[i]);
		else
			show_op(i, &rec->ops[i]);
	if (j)
		json_end_array(j);
}

/* The job chains the ops start, a row each; non-zero if out of memory. */
static int show_chains(struct out *o, const struct accmap_recording *rec)
{
	static const char *const heads[] = { "  CHAIN", "SLOT", "HEAD", "START OP", "WAIT OP" };
	struct accmap_rec_chain *c;
	uint32_t n, i;
	int ret;

	ret = accmap_rec_chains(rec, &c, &n);
	if (ret)
		return fail(ret, "finding the job chains");
	out_line(o, "chains:   %u", n);
	if (!n && !o->json)
		return 0;
	out_list_begin(o, "chains", heads, ARRAY_SIZE(heads), 0x19);
	for (i = 0; i < n; i++) {
		out_row_begin(o);
		out_u64f(o, "index", i, "  %u", i);
		out_u64(o, "slot", c[i].slot);
		out_u64f(o, "head", c[i].head, "0x%012llx", (unsigned long long)c[i].head);
		out_u64(o, "start_op", c[i].start_op);
		if (c[i].end_op == UINT32_MAX)
			out_null(o, "wait_op", "none");
		else
			out_u64(o, "wait_op", c[i].end_op);
		out_row_end(o);
	}
	out_list_end(o, NULL);
	free(c);
	return 0;
}

/* The maps of a recording, a row each. */
static void show_maps(struct out *o, const struct accmap_recording *rec)
{
	static const char *const heads[] = { "  GPU VA", "LENGTH", "FLAGS", "ATTR", "CONTENTS" };
	char b[64], perm[4];
	uint32_t i;

	out_list_begin(o, "maps", heads, ARRAY_SIZE(heads), 0xa);
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];

		snprintf(perm, sizeof(perm), "%c%c%c",
			 m->flags & ACCMAP_REPLAY_MAP_READ ? 'r' : '-',
			 m->flags & ACCMAP_REPLAY_MAP_WRITE ? 'w' : '-',
			 m->flags & ACCMAP_REPLAY_MAP_EXEC ? 'x' : '-');
		out_row_begin(o);
		out_u64f(o, "gpu_va", m->gpu_va, "  0x%012llx", (unsigned long long)m->gpu_va);
		out_u64f(o, "length", m->length, "%s", fmt_bytes(b, sizeof(b), m->length, false));
		out_str(o, "flags", perm);
		out_u64(o, "attr", m->attr);
		out_str(o, "contents", m->data ? "recorded" : "zero-filled");
		out_row_end(o);
	}
	out_list_end(o, NULL);
}

/* The symbols of a recording, a row each. */
static void show_symbols(struct out *o, const struct accmap_recording *rec)
{
	static const char *const heads[] = { "  NAME", "GPU VA", "LENGTH", "KIND" };
	uint32_t i;

	out_line(o, "symbols:  %u", rec->nr_symbols);
	if (!rec->nr_symbols && !o->json)
		return;
	out_list_begin(o, "symbols", heads, ARRAY_SIZE(heads), 0x4);
	for (i = 0; i < rec->nr_symbols; i++) {
		const struct accmap_rec_symbol *s = &rec->symbols[i];
		bool in = s->flags & ACCMAP_REC_SYM_INPUT, out = s->flags & ACCMAP_REC_SYM_OUTPUT;

		out_row_begin(o);
		out_strf(o, "name", s->name, "  %s", s->name);
		out_u64f(o, "gpu_va", s->gpu_va, "0x%012llx", (unsigned long long)s->gpu_va);
		out_u64(o, "length", s->length);
		out_textf(o, NULL, "%s%s%s", in ? "input" : "", in && out ? "," : "",
			  out ? "output" : "");
		if (out_json(o)) {
			json_bool(out_json(o), "input", in);
			json_bool(out_json(o), "output", out);
		}
		out_row_end(o);
	}
	out_list_end(o, NULL);
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ops", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t mapped = 0, contents = 0;
	struct accmap_recording *rec;
	struct accmap_rec_error err;
	bool all_ops = false;
	struct json *j;
	struct out o;
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
	out_init(&o, json_out, false);
	j = out_json(&o);
	out_line(&o, "file:     %s, version %d", argv[optind], ACCMAP_REC_VERSION);
	out_line(&o, "target:   %s, GPU_ID 0x%08x, format %s, AS %u, %u-bit VA", rec->target,
		 rec->gpu_id, pgt_name(rec->format), rec->as, rec->va_bits);
	out_line(&o, "maps:     %u, %s mapped, %s of contents", rec->nr_maps,
		 fmt_bytes(b, sizeof(b), mapped, false),
		 fmt_bytes(b + 32, sizeof(b) - 32, contents, false));
	if (j) {
		json_string(j, "file", argv[optind]);
		json_u64(j, "version", ACCMAP_REC_VERSION);
		json_string(j, "target", rec->target);
		json_u64(j, "gpu_id", rec->gpu_id);
		json_string(j, "format", pgt_name(rec->format));
		json_u64(j, "as", rec->as);
		json_u64(j, "va_bits", rec->va_bits);
		json_u64(j, "mapped", mapped);
		json_u64(j, "contents", contents);
	}
	show_maps(&o, rec);
	show_symbols(&o, rec);
	show_ops(&o, rec, all_ops);
	if (show_chains(&o, rec)) {
		out_discard(&o);
		accmap_rec_free(rec);
		return EXIT_FAILURE;
	}
	if (j && rec->note)
		json_string(j, "note", rec->note);
	else if (j)
		json_null(j, "note");
	if (!j && rec->note) {
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
	return out_finish(&o);
}

/* ------------------------------------------------------------------ */
/* import-gpureplay */

void import_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s import-gpureplay [-q] DIR OUT\n"
		"\n"
		"Converts a GPUReplay recording of a Mali GPU (the files gr_pgt,\n"
		"gr_mem_contents, gr_io_history and gr_sync_as in DIR) into the\n"
		"accmap recording OUT, for 'replay' on the software Mali model:\n"
		"the regions become maps (permissions from the kbase region flags),\n"
		"the register log becomes ops (TRANSTAB writes become WRITE_ROOT,\n"
		"busy reads and the end of a reset or cache clean become POLL,\n"
		"job ends WAIT_IRQ, delays are left out), and the last two\n"
		"synced ranges become the symbols 'input' and\n"
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

/* JSON: an import's counts, stale regions and chains that will not run. */
static void import_json(struct json *j, const char *out, const struct accmap_recording *rec,
			const struct gpureplay_stats *st, const struct gpureplay_report *rep)
{
	const struct { const char *key; uint64_t v; } stats[] = {
		{ "regions", st->regions }, { "valid_regions", st->valid_regions },
		{ "pages", st->pages }, { "zero_pages", st->zero_pages }, { "maps", st->maps },
		{ "lines", st->lines }, { "reads", st->reads }, { "writes", st->writes },
		{ "jobs", st->jobs }, { "ops", st->ops }, { "polls", st->polls },
		{ "wait_irqs", st->wait_irqs }, { "write_roots", st->write_roots },
		{ "collapsed", st->collapsed }, { "dropped", st->dropped },
		{ "flush_ids", st->flush_ids }, { "pgt_pages", st->pgt_pages },
		{ "pgt_leaves", st->pgt_leaves }, { "leaves_unmapped", st->leaves_unmapped },
		{ "leaves_stale", st->leaves_stale }, { "tables_missing", st->tables_missing },
		{ "roots_dropped", st->roots_dropped }, { "captures", st->captures },
		{ "captured", st->captured }, { "failed_waits", st->failed_waits },
		{ "overlap_pages", st->overlap_pages },
		{ "overlap_unmapped", st->overlap_unmapped }, { "maps_no_leaf", st->maps_no_leaf },
		{ "recorded_ns", st->recorded_ns }, { "stale_regions", st->stale_regions },
		{ "chains", st->chains }, { "chains_bad", st->chains_bad },
	};
	char line[256];
	uint32_t i;

	json_string(j, "output", out);
	json_u64(j, "as", rec->as);
	json_u64(j, "gpu_id", rec->gpu_id);
	json_string(j, "target", rec->target);
	json_begin_object(j, "stats");
	for (i = 0; i < ARRAY_SIZE(stats); i++)
		json_u64(j, stats[i].key, stats[i].v);
	json_end_object(j);
	json_begin_array(j, "stale");
	for (i = 0; i < rep->nr_stale; i++) {
		const struct gpureplay_stale_region *sr = &rep->stale[i];

		json_begin_object(j, NULL);
		json_u64(j, "start", sr->start);
		json_u64(j, "end", sr->end);
		json_u64(j, "offset", sr->off);
		json_u64(j, "pages", sr->pages);
		json_u64(j, "kept", sr->kept);
		json_bool(j, "input", sr->symbols & ACCMAP_REC_SYM_INPUT);
		json_bool(j, "output", sr->symbols & ACCMAP_REC_SYM_OUTPUT);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_array(j, "bad_chains");
	for (i = 0; i < rep->nr_bad_chains; i++) {
		gpureplay_chain_describe(&rep->bad_chains[i], line, sizeof(line));
		json_string(j, NULL, line);
	}
	json_end_array(j);
	json_bool(j, "replayable", !st->chains_bad);
}

int cmd_import_gpureplay(int argc, char **argv)
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
	if (json_out) {
		struct out o;

		out_init(&o, true, false);
		import_json(out_json(&o), argv[optind + 1], rec, &st, &rep);
		out_finish(&o);
	} else if (!quiet) {
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

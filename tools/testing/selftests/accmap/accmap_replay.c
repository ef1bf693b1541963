// SPDX-License-Identifier: GPL-2.0
/*
 * accmap replay on the software Mali model, the "sim" target: the four
 * replay ioctls errno by errno, a matrix multiply recorded through
 * libaccmap's recording code and replayed with new inputs in both GPU
 * page-table formats, MMU faults and timeouts as runs report them,
 * CAP_SYS_RAWIO, and teardown when a process is killed mid-run or closes
 * the device.  The recording reader's checks run here too (no device
 * needed for those).
 *
 * The job descriptors and register ops come from tools/accmap/simdrv.c,
 * the tiny driver accmapctl record uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "recording.h"
#include "simdrv.h"
#include "tap.h"

/* Where the tests map their one-page buffers. */
#define TEST_VA			0x100000ULL
#define NOBODY			65534

/* Sessions a client may have at once. */
#define SESSIONS_MAX		64

static const uint32_t formats[] = { ACCMAP_PGT_MALI_AARCH64_4K, ACCMAP_PGT_MALI_LPAE };
static const char *const format_names[] = { "aarch64-4k", "lpae" };

/* Index and description of the sim target; fails the test if none. */
static bool find_sim(int dev, uint32_t *index, struct accmap_replay_target_info *info)
{
	int ret = accmap_replay_find_target(dev, simdrv_target(), index, info);

	return CHECK(ret == 0, "no replay target \"%s\": %s", simdrv_target(), err_name(ret));
}

/* ---- raw ioctls with garbage in every output ---- */

static void setup_init(struct accmap_replay_setup *s, const struct accmap_replay_map *maps,
		       uint32_t nr_maps, uint32_t target, uint32_t format)
{
	memset(s, 0, sizeof(*s));
	s->maps = (uintptr_t)maps;
	s->nr_maps = nr_maps;
	s->target = target;
	s->format = format;
	s->as = 0;
	s->va_bits = 48;
}

static int setup_raw(int dev, struct accmap_replay_setup *s)
{
	s->session = GARBAGE_U32;
	s->failed_map = GARBAGE_U32;
	s->table_pages = GARBAGE_U32;
	return raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, s);
}

static int run_raw(int dev, uint32_t session, const struct accmap_replay_op *ops, uint32_t n,
		   struct accmap_replay_run *r)
{
	memset(r, GARBAGE_BYTE, sizeof(*r));
	r->ops = (uintptr_t)ops;
	r->nr_ops = n;
	r->session = session;
	r->flags = 0;
	r->pad = 0;
	return raw_ioctl(dev, ACCMAP_IOC_REPLAY_RUN, r);
}

static int destroy_raw(int dev, uint32_t session)
{
	struct accmap_replay_destroy d = { .session = session, .pad = 0 };

	return raw_ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d);
}

static void map_init(struct accmap_replay_map *m, uint64_t va, uint64_t len, uint32_t id,
		     uint32_t flags)
{
	memset(m, 0, sizeof(*m));
	m->gpu_va = va;
	m->offset = 0;
	m->length = len;
	m->id = id;
	m->flags = flags;
	m->attr = 0;
}

/*
 * SETUP must fail with @err, blaming map @failed_map (0xffffffff: none),
 * with session and table_pages 0; a session made by mistake is destroyed.
 */
static void setup_expect(int dev, struct accmap_replay_setup *s, int err, uint32_t failed_map,
			 const char *what)
{
	int ret = setup_raw(dev, s);

	if (!CHECK(ret == -err, "SETUP with %s: %s, expected %s", what, err_name(ret),
		   err_name(err))) {
		if (!ret)
			destroy_raw(dev, s->session);
		return;
	}
	CHECK(s->failed_map == failed_map, "SETUP with %s: failed_map %#x, expected %#x", what,
	      s->failed_map, failed_map);
	CHECK(s->session == 0 && s->table_pages == 0,
	      "SETUP with %s: session %#x, table_pages %#x on failure", what, s->session,
	      s->table_pages);
}

/**
 * struct fix - a session over one read-write page at TEST_VA
 * @dev:     the device
 * @target:  the sim's index
 * @info:    the sim
 * @id:      the buffer
 * @session: the session
 */
struct fix {
	int dev;
	uint32_t target;
	struct accmap_replay_target_info info;
	uint32_t id;
	uint32_t session;
};

static bool fix_open(struct fix *f, uint32_t format)
{
	struct accmap_replay_setup s;
	struct accmap_replay_map m;
	int ret;

	memset(f, 0, sizeof(*f));
	f->dev = am_open();
	if (f->dev < 0 || !find_sim(f->dev, &f->target, &f->info) ||
	    am_buffer(f->dev, page_size(), 0, &f->id, false) < 0)
		return false;
	map_init(&m, TEST_VA, page_size(), f->id, ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);
	setup_init(&s, &m, 1, f->target, format);
	ret = setup_raw(f->dev, &s);
	if (!CHECK(ret == 0, "SETUP of one page: %s", err_name(ret)))
		return false;
	f->session = s.session;
	return true;
}

static void fix_close(struct fix *f)
{
	if (f->dev >= 0)
		close(f->dev);
	f->dev = -1;
}

/* ---- debugfs: the replay file's totals and the other tables' rows ---- */

/**
 * struct counts - what the device holds, as debugfs says
 * @sessions:    "sessions" total of the replay file
 * @table_pages: "table_pages" total of the replay file
 * @clients:     rows of clients
 * @allocations: rows of allocations
 * @orphans:     rows of orphans
 */
struct counts {
	unsigned long long sessions;
	unsigned long long table_pages;
	size_t clients;
	size_t allocations;
	size_t orphans;
};

/* The value of the last "name<TAB>N" line of @text, or ~0ULL. */
static unsigned long long total_line(const char *text, const char *name)
{
	unsigned long long v = ~0ULL;
	size_t len = strlen(name);
	const char *p = text;

	while (*p) {
		if (!strncmp(p, name, len) && p[len] == '\t') {
			char *end;

			v = strtoull(p + len + 1, &end, 10);
			if (*end != '\n')
				v = ~0ULL;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	return v;
}

static bool read_counts(struct counts *c)
{
	static const char *const tables[] = { "clients", "allocations", "orphans" };
	size_t *rows[] = { &c->clients, &c->allocations, &c->orphans };
	char *text = read_text(ACCMAP_DEBUGFS_DIR "/replay", NULL);
	bool ok;

	if (!CHECK(text, "read %s/replay: %s", ACCMAP_DEBUGFS_DIR, strerror(errno)))
		return false;
	c->sessions = total_line(text, "sessions");
	c->table_pages = total_line(text, "table_pages");
	ok = CHECK(c->sessions != ~0ULL && c->table_pages != ~0ULL,
		   "debugfs replay has no sessions and table_pages totals:\n%s", text);
	free(text);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(tables); i++) {
		struct dbg_table t;

		if (!dbg_read(tables[i], &t))
			return false;
		*rows[i] = t.nrows;
		dbg_free(&t);
	}
	return ok;
}

/* Polls debugfs for up to @ms until it shows @want; false if it never does. */
static bool counts_settle(const struct counts *want, unsigned int ms, struct counts *got)
{
	for (unsigned int waited = 0;; waited += 20) {
		if (!read_counts(got))
			return false;
		if (got->sessions == want->sessions && got->table_pages == want->table_pages &&
		    got->clients == want->clients && got->allocations == want->allocations &&
		    got->orphans == want->orphans)
			return true;
		if (waited >= ms)
			return false;
		usleep(20 * 1000);
	}
}

static bool check_counts_back(const struct counts *before, const char *when)
{
	struct counts now = { 0 };

	if (counts_settle(before, 1000, &now))
		return true;
	return CHECK(false,
		     "%s: debugfs sessions %llu table_pages %llu clients %zu allocations %zu orphans %zu, before %llu %llu %zu %zu %zu",
		     when, now.sessions, now.table_pages, now.clients, now.allocations,
		     now.orphans, before->sessions, before->table_pages, before->clients,
		     before->allocations, before->orphans);
}

/* The live sessions of the sim, as REPLAY_QUERY counts them. */
static uint32_t sim_sessions(int dev)
{
	struct accmap_replay_target_info info;
	uint32_t index;

	if (accmap_replay_find_target(dev, simdrv_target(), &index, &info))
		return UINT32_MAX;
	return info.sessions;
}

/* ==== REPLAY_QUERY ==== */

static void test_query_sim(void)
{
	struct accmap_replay_target_info info;
	int dev = am_open(), ret;
	uint32_t i, sims = 0;

	if (dev < 0)
		return;
	for (i = 0; i < ACCMAP_REPLAY_TARGETS_MAX; i++) {
		memset(&info, GARBAGE_BYTE, sizeof(info));
		info.index = i;
		ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info);
		if (ret == -ENOENT)
			break;
		if (!CHECK(ret == 0, "QUERY(%u): %s", i, err_name(ret)))
			break;
		CHECK(info.index == i, "QUERY(%u) changed index to %u", i, info.index);
		CHECK(memchr(info.name, '\0', sizeof(info.name)) && info.name[0],
		      "QUERY(%u): name is empty or not NUL-terminated", i);
		CHECK(info.window_size && info.window_size != GARBAGE_U64 && info.as_count &&
		      info.as_count <= 16 && info.sessions != GARBAGE_U32,
		      "QUERY(%u): window %#llx, %u address spaces, %u sessions", i,
		      (unsigned long long)info.window_size, info.as_count, info.sessions);
		CHECK(info.formats && !(info.formats & ~((1U << ACCMAP_PGT_COUNT) - 1)),
		      "QUERY(%u): formats %#x", i, info.formats);
		if (strcmp(info.name, SIMDRV_TARGET))
			continue;
		sims++;
		CHECK(info.flags & ACCMAP_REPLAY_TARGET_SIM, "sim flags %#x lack TARGET_SIM",
		      info.flags);
		CHECK(info.formats == ((1U << ACCMAP_PGT_MALI_AARCH64_4K) |
				       (1U << ACCMAP_PGT_MALI_LPAE)),
		      "sim formats %#x, expected both", info.formats);
		CHECK(info.window_size >= SIMDRV_AS(info.as_count - 1) + 0x40,
		      "sim window of %#llx bytes ends before its address spaces",
		      (unsigned long long)info.window_size);
	}
	CHECK(sims == 1, "%u targets named \"%s\"", sims, SIMDRV_TARGET);

	/* Past the end, and far past it. */
	for (uint32_t past = i; past < i + 3; past++) {
		memset(&info, GARBAGE_BYTE, sizeof(info));
		info.index = past;
		CHECK(raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info) == -ENOENT,
		      "QUERY(%u) past the last target", past);
	}
	info.index = UINT32_MAX;
	CHECK(raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info) == -ENOENT, "QUERY(0xffffffff)");
	CHECK(raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, NULL) == -EFAULT, "QUERY(NULL)");
	close(dev);
}

/* ==== recording, replay with new inputs ==== */

static void fill_random(int32_t *v, uint32_t n, unsigned int *seed)
{
	for (uint32_t i = 0; i < n; i++)
		v[i] = (int32_t)((uint32_t)rand_r(seed) << 16 ^ (uint32_t)rand_r(seed));
}

/* Index of the first element that differs, or n. */
static uint32_t first_diff(const int32_t *x, const int32_t *y, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && x[i] == y[i]; i++)
		;
	return i;
}

static void explain_result(const char *what, int ret, const struct simdrv_result *res)
{
	tap_diag("%s: %s; run done %u of %u, failed_op %u, reason %u, value %#x", what,
		 err_name(ret), res->run.done, res->run.nr_ops, res->run.failed_op,
		 res->run.reason, res->run.value);
	tap_diag("fault in AS %u at %#llx, status %#x; job status %#x", res->run.fault_as,
		 (unsigned long long)res->run.fault_addr, res->run.fault_status,
		 res->job_status);
}

/*
 * Records @w with random inputs, checks the recorded run against the CPU,
 * passes the recording through the file format (in memory, or through
 * @path), and replays it @runs times with new inputs written through the
 * symbols, each output checked against the CPU.
 */
static void record_and_replay(const struct simdrv_workload *w, unsigned int runs,
			      const char *path)
{
	struct accmap_recording *rec = NULL, *back = NULL;
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	int32_t *a = NULL, *b = NULL, *c = NULL, *want = NULL;
	struct accmap_player *player = NULL;
	struct accmap_rec_error err;
	struct simdrv_result res;
	struct accmap_replay_run r;
	uint32_t ea, eb, ec, i, failed;
	void *buf = NULL;
	size_t len;
	int dev, ret;

	tap_diag("%s, format %s, seed %u", w->op == ACCMAP_SIM_OP_MATMUL_I32 ? "matmul" : "vadd",
		 format_names[w->format], seed);
	dev = am_open();
	if (dev < 0 || !CHECK(simdrv_elems(w, &ea, &eb, &ec) == 0, "workload beyond limits"))
		goto out;
	a = malloc(ea * sizeof(*a));
	b = malloc(eb * sizeof(*b));
	c = malloc(ec * sizeof(*c));
	want = malloc(ec * sizeof(*want));
	if (!CHECK(a && b && c && want, "malloc"))
		goto out;

	fill_random(a, ea, &seed);
	fill_random(b, eb, &seed);
	memset(c, 0, ec * sizeof(*c));
	ret = simdrv_record(dev, w, a, b, c, &rec, &res);
	if (!CHECK(ret == 0, "simdrv_record: %s", err_name(ret))) {
		explain_result("record", ret, &res);
		goto out;
	}
	simdrv_reference(w, a, b, want);
	i = first_diff(c, want, ec);
	if (!CHECK(i == ec, "recorded run: c[%u] = %d, the CPU says %d", i, c[i], want[i]))
		goto out;

	/* Through the file format and back. */
	if (path) {
		ret = accmap_rec_save(rec, path, &err);
		if (!CHECK(ret == 0, "accmap_rec_save: %s", err.msg))
			goto out;
		ret = accmap_rec_load(path, &back, &err);
		unlink(path);
		if (!CHECK(ret == 0, "accmap_rec_load: %s", err.msg))
			goto out;
	} else {
		ret = accmap_rec_encode(rec, &buf, &len, &err);
		if (!CHECK(ret == 0, "accmap_rec_encode: %s", err.msg))
			goto out;
		ret = accmap_rec_parse(buf, len, "in memory", &back, &err);
		if (!CHECK(ret == 0, "accmap_rec_parse: %s", err.msg))
			goto out;
	}
	CHECK(back->nr_maps == rec->nr_maps && back->nr_ops == rec->nr_ops &&
	      back->nr_symbols == 5 && back->format == w->format &&
	      !memcmp(back->ops, rec->ops, rec->nr_ops * sizeof(*rec->ops)),
	      "the recording read back differs from the one written");

	ret = accmap_player_open(dev, back, NULL, &player, &failed);
	if (!CHECK(ret == 0, "accmap_player_open: %s (map %u)", err_name(ret), failed))
		goto out;
	for (unsigned int run = 0; run < runs; run++) {
		ret = accmap_player_restore(player);
		if (!CHECK(ret == 0, "run %u: restore: %s", run, err_name(ret)))
			break;
		fill_random(a, ea, &seed);
		fill_random(b, eb, &seed);
		ret = accmap_player_write_symbol(player, "a", a, ea * sizeof(*a));
		if (!ret)
			ret = accmap_player_write_symbol(player, "b", b, eb * sizeof(*b));
		if (!CHECK(ret == 0, "run %u: writing a and b: %s", run, err_name(ret)))
			break;
		ret = accmap_player_run(player, NULL, NULL, &r);
		if (!CHECK(ret == 0, "run %u: %s, failed_op %u reason %u value %#x", run,
			   err_name(ret), r.failed_op, r.reason, r.value))
			break;
		CHECK(r.done == back->nr_ops && r.elapsed_ns > 0,
		      "run %u: done %u of %u, elapsed %llu ns", run, r.done, back->nr_ops,
		      (unsigned long long)r.elapsed_ns);
		memset(c, 0, ec * sizeof(*c));
		ret = accmap_player_read_symbol(player, run & 1 ? "output" : "c", c,
						ec * sizeof(*c));
		if (!CHECK(ret == 0, "run %u: reading c: %s", run, err_name(ret)))
			break;
		simdrv_reference(w, a, b, want);
		i = first_diff(c, want, ec);
		if (!CHECK(i == ec, "run %u: c[%u] = %d, the CPU says %d", run, i, c[i], want[i]))
			break;
	}
	CHECK(accmap_player_close(player) == 0, "accmap_player_close");
out:
	accmap_rec_free(back);
	accmap_rec_free(rec);
	free(buf);
	free(want);
	free(c);
	free(b);
	free(a);
	if (dev >= 0)
		close(dev);
}

static void matmul_100(uint32_t format)
{
	struct simdrv_workload w = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = 100, .n = 100, .k = 100, .format = format,
	};

	record_and_replay(&w, 10, NULL);
}

static void test_matmul_aarch64(void)
{
	matmul_100(ACCMAP_PGT_MALI_AARCH64_4K);
}

static void test_matmul_lpae(void)
{
	matmul_100(ACCMAP_PGT_MALI_LPAE);
}

/* Another shape, another AS and slot, through a file. */
static void test_vadd_file(void)
{
	char path[] = "/tmp/accmap_replay.XXXXXX";
	int fd = mkstemp(path);

	if (!CHECK(fd >= 0, "mkstemp: %s", strerror(errno)))
		return;
	close(fd);
	for (size_t f = 0; f < TAP_ARRAY_SIZE(formats); f++) {
		struct simdrv_workload w = {
			.op = ACCMAP_SIM_OP_VADD_I32, .m = 1, .n = 3000, .k = 1,
			.format = formats[f], .as = 2, .slot = 1, .va_bits = 40,
		};

		record_and_replay(&w, 3, path);
	}
	unlink(path);
}

#define MAX_BATCHES	256

/**
 * struct batches - the progress calls of a player's run
 * @done: what each call said was done
 * @n:    calls so far
 * @stop: stop after that many calls (0: never)
 */
struct batches {
	uint32_t done[MAX_BATCHES];
	uint32_t n;
	uint32_t stop;
};

static int count_progress(void *arg, uint32_t done, uint32_t total)
{
	struct batches *b = arg;

	(void)total;
	if (b->n < MAX_BATCHES)
		b->done[b->n] = done;
	b->n++;
	return b->stop && b->n == b->stop;
}

/*
 * Where the player's batches must end: every @batch ops, and also right
 * before each chain's start op and right after its wait, never across.
 * Fills @ends; returns how many batches, or 0 on error (reported).
 */
static uint32_t expected_batches(const struct accmap_recording *rec, uint32_t batch,
				 uint32_t *ends, uint32_t max)
{
	struct accmap_rec_chain *c;
	uint32_t nc, n = 0, from = 0, end, i;

	if (!CHECK(accmap_rec_chains(rec, &c, &nc) == 0, "accmap_rec_chains"))
		return 0;
	while (from < rec->nr_ops && n < max) {
		end = rec->nr_ops - from > batch ? from + batch : rec->nr_ops;
		for (i = 0; i < nc; i++) {
			if (c[i].start_op > from && c[i].start_op < end)
				end = c[i].start_op;
			if (c[i].end_op != UINT32_MAX && c[i].end_op + 1 > from &&
			    c[i].end_op + 1 < end)
				end = c[i].end_op + 1;
		}
		ends[n++] = end;
		from = end;
	}
	free(c);
	return n;
}

/* The player's batches: every batch reported, cut at chains, a stop honoured. */
static void test_player_batches(void)
{
	struct simdrv_workload w = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = 8, .n = 8, .k = 8,
	};
	int32_t a[64], b[64], c[64], want[64];
	struct accmap_player_options opts = { .batch = 5 };
	const struct accmap_player_chain *chains;
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	uint32_t ends[MAX_BATCHES], nends, nchains = 0;
	unsigned int seed = 7;
	struct simdrv_result res;
	struct accmap_replay_run r;
	struct batches calls;
	int dev = am_open(), ret;

	if (dev < 0)
		return;
	fill_random(a, 64, &seed);
	fill_random(b, 64, &seed);
	ret = simdrv_record(dev, &w, a, b, c, &rec, &res);
	if (!CHECK(ret == 0, "simdrv_record: %s", err_name(ret)))
		goto out;
	ret = accmap_player_open(dev, rec, &opts, &player, NULL);
	if (!CHECK(ret == 0, "accmap_player_open: %s", err_name(ret)))
		goto out;
	nends = expected_batches(rec, 5, ends, MAX_BATCHES);
	if (!CHECK(nends > 2 && nends < MAX_BATCHES, "%u batches for %u ops", nends, rec->nr_ops))
		goto out;

	memset(&calls, 0, sizeof(calls));
	ret = accmap_player_run(player, count_progress, &calls, &r);
	CHECK(ret == 0 && r.done == rec->nr_ops, "batched run: %s, done %u of %u",
	      err_name(ret), r.done, rec->nr_ops);
	CHECK(calls.n == nends && !memcmp(calls.done, ends, nends * sizeof(ends[0])),
	      "%u progress calls for %u ops in 5s cut at the chain, expected %u (first at %u, expected %u)",
	      calls.n, rec->nr_ops, nends, calls.done[0], ends[0]);
	chains = accmap_player_chains(player, &nchains);
	CHECK(nchains == 1 && chains[0].state == ACCMAP_PLAYER_CHAIN_DONE && chains[0].ns,
	      "%u chains, the first %s", nchains,
	      nchains && chains[0].state == ACCMAP_PLAYER_CHAIN_DONE ? "done" : "not done");
	CHECK(accmap_player_read_symbol(player, "c", c, sizeof(c)) == 0, "read c");
	simdrv_reference(&w, a, b, want);
	CHECK(!memcmp(c, want, sizeof(c)), "batched run computed another c");

	/* Stopped after two batches: the ops of those ran. */
	CHECK(accmap_player_restore(player) == 0, "restore");
	memset(&calls, 0, sizeof(calls));
	calls.stop = 2;
	ret = accmap_player_run(player, count_progress, &calls, &r);
	CHECK(ret == -ECANCELED && r.done == ends[1] && r.failed_op == UINT32_MAX,
	      "stopped run: %s, done %u (expected %u), failed_op %#x", err_name(ret), r.done,
	      ends[1], r.failed_op);
out:
	accmap_player_close(player);
	accmap_rec_free(rec);
	close(dev);
}

/* ==== faults and timeouts ==== */

/* The maps of a one-job recording: the descriptor page, A, B and C. */
#define ONE_VA_DESC	0x40000000ULL
#define ONE_VA_A	0x40100000ULL
#define ONE_VA_B	0x40200000ULL
#define ONE_VA_C	0x40300000ULL

/*
 * A recording of one job for @sub (format, address space): the descriptor
 * page @page at ONE_VA_DESC, A, B and C one page each, opened in a player
 * on the model (@gpu_id from its target info), and the ops simdrv composes
 * for @sub in @ops (*@nops).  False (reported) on failure; the caller
 * frees *@rec and closes *@player either way.
 */
static bool one_job(int dev, uint32_t gpu_id, const uint8_t *page,
		    const struct simdrv_submit *sub, struct accmap_recording **rec,
		    struct accmap_player **player, struct accmap_replay_op *ops, uint32_t *nops,
		    const char *what)
{
	struct simdrv_gpu gpu;
	int ret;

	ret = accmap_rec_create(simdrv_target(), sub->format, sub->as, 40, rec);
	if (!ret)
		ret = accmap_rec_add_map(*rec, ONE_VA_DESC, 4096, 3, 0, page);
	if (!ret)
		ret = accmap_rec_add_map(*rec, ONE_VA_A, 4096, 1, 0, NULL);
	if (!ret)
		ret = accmap_rec_add_map(*rec, ONE_VA_B, 4096, 1, 0, NULL);
	if (!ret)
		ret = accmap_rec_add_map(*rec, ONE_VA_C, 4096, 3, 0, NULL);
	if (!CHECK(ret == 0, "%s: building the recording: %s", what, err_name(ret)))
		return false;
	ret = accmap_player_open(dev, *rec, NULL, player, NULL);
	if (!CHECK(ret == 0, "%s: accmap_player_open: %s", what, err_name(ret)))
		return false;
	ret = simdrv_probe(dev, accmap_player_session(*player), gpu_id, &gpu);
	if (!CHECK(ret == 0, "%s: simdrv_probe: %s", what, err_name(ret)))
		return false;
	*nops = simdrv_build_ops(&gpu, sub, ops);
	return true;
}

/*
 * A 1x1x1 matmul whose job chain starts at @head, and whose A is at
 * @a_va; the maps are the descriptor, A, B and C, one page each.  Runs it
 * and checks that the run reports an MMU fault at @fault_va in @as.
 */
static void fault_case(uint32_t format, uint32_t as, bool bad_head, const char *what)
{
	const uint64_t hole = 0x40800000;
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct accmap_replay_target_info info;
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = 1, .n = 1, .k = 1,
		.a = bad_head ? ONE_VA_A : hole, .b = ONE_VA_B, .c = ONE_VA_C,
	};
	/* The model reads the header, or A, from its first byte on. */
	const uint64_t fault_va = hole;
	struct simdrv_submit sub = {
		.format = format, .as = as, .slot = 0, .timeout_us = 2000000,
		.head = bad_head ? hole : ONE_VA_DESC,
	};
	struct accmap_replay_run r;
	uint8_t page[4096] = { 0 };
	uint32_t target, nops, cmd_next;
	int dev = am_open(), ret;

	if (dev < 0 || !find_sim(dev, &target, &info))
		goto out;
	if (as >= info.as_count)
		as = info.as_count - 1;
	sub.as = as;
	simdrv_encode_job(page, &job, 0);
	if (!one_job(dev, info.gpu_id, page, &sub, &rec, &player, ops, &nops, what))
		goto out;
	for (cmd_next = 0; cmd_next < nops; cmd_next++)
		if (ops[cmd_next].op == ACCMAP_REPLAY_OP_WRITE &&
		    ops[cmd_next].offset == SIMDRV_JS(0) + SIMDRV_JS_COMMAND_NEXT)
			break;
	if (!CHECK(accmap_rec_set_ops(rec, ops, nops) == 0, "accmap_rec_set_ops"))
		goto out;

	ret = accmap_player_run(player, NULL, NULL, &r);
	CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT,
	      "%s (%s, AS %u): run %s, reason %u, expected EIO and MMU_FAULT", what,
	      format_names[format], as, err_name(ret), r.reason);
	CHECK(r.fault_addr == fault_va && r.fault_as == as,
	      "%s (%s): fault at %#llx in AS %u, expected %#llx in AS %u", what,
	      format_names[format], (unsigned long long)r.fault_addr, r.fault_as,
	      (unsigned long long)fault_va, as);
	/* A translation fault (0xc0 + level), on a read. */
	CHECK((r.fault_status & 0xf8) == 0xc0 && (r.fault_status >> 8 & 3) == 2,
	      "%s: FAULTSTATUS %#x is not a translation fault on a read", what,
	      r.fault_status);
	CHECK(r.failed_op > cmd_next && r.failed_op < nops && r.done == r.failed_op,
	      "%s: failed_op %u, done %u: the job starts at op %u of %u", what, r.failed_op,
	      r.done, cmd_next, nops);
out:
	accmap_player_close(player);
	accmap_rec_free(rec);
	if (dev >= 0)
		close(dev);
}

static void test_fault_unmapped_head(void)
{
	for (size_t f = 0; f < TAP_ARRAY_SIZE(formats); f++)
		fault_case(formats[f], 1, true, "job chain at an unmapped VA");
}

static void test_fault_unmapped_operand(void)
{
	for (size_t f = 0; f < TAP_ARRAY_SIZE(formats); f++)
		fault_case(formats[f], 3, false, "matrix A at an unmapped VA");
}

/*
 * A chain whose head is a 1x1x1 matmul and whose second descriptor has a
 * job type the model does not know: the model fails it with
 * DATA_INVALID_FAULT (0x58) and raises the slot's FAILED bit.  The
 * recorded WAIT_IRQ waits 5 s for DONE only; the run must end on the
 * failure in well under a second, naming the second descriptor.
 */
static void job_failed_case(uint32_t format)
{
	const uint64_t va_bad = ONE_VA_DESC + ACCMAP_SIM_JD_ALIGN * 4;
	const uint32_t timeout_us = 5000000;
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct accmap_replay_target_info info;
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = 1, .n = 1, .k = 1,
		.a = ONE_VA_A, .b = ONE_VA_B, .c = ONE_VA_C,
	};
	struct simdrv_submit sub = {
		.format = format, .as = 1, .slot = 0, .timeout_us = timeout_us,
		.head = ONE_VA_DESC,
	};
	struct accmap_replay_run r;
	uint8_t page[4096] = { 0 };
	uint8_t *bad = page + (va_bad - ONE_VA_DESC);
	uint32_t target, nops, wait;
	uint64_t t0, wall;
	int dev = am_open();
	int ret;

	if (dev < 0 || !find_sim(dev, &target, &info))
		goto out;
	simdrv_encode_job(page, &job, va_bad);
	/* Type 0x30: neither a Mali job type nor the model's own. */
	bad[ACCMAP_SIM_JD_TYPE] = 0x30 << ACCMAP_SIM_JD_TYPE_SHIFT | ACCMAP_SIM_JD_NEXT_64;
	if (!one_job(dev, info.gpu_id, page, &sub, &rec, &player, ops, &nops,
		     format_names[format]))
		goto out;
	for (wait = 0; wait < nops; wait++)
		if (ops[wait].op == ACCMAP_REPLAY_OP_WAIT_IRQ &&
		    ops[wait].irq == ACCMAP_REPLAY_IRQ_JOB)
			break;
	if (!CHECK(wait < nops && ops[wait].mask == SIMDRV_JOB_IRQ_DONE(0) &&
		   ops[wait].timeout_us == timeout_us,
		   "simdrv's ops have no 5 s WAIT_IRQ of DONE alone"))
		goto out;

	t0 = now_ns();
	ret = run_raw(dev, accmap_player_session(player), ops, nops, &r);
	wall = now_ns() - t0;
	CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_JOB_FAILED,
	      "%s: run %s, reason %u; expected EIO and JOB_FAILED", format_names[format],
	      err_name(ret), r.reason);
	CHECK(r.failed_op == wait && r.done == wait,
	      "%s: failed_op %u, done %u; expected the WAIT_IRQ, op %u", format_names[format],
	      r.failed_op, r.done, wait);
	CHECK(r.fault_status == 0x58 && r.fault_as == 0 && r.fault_addr == va_bad,
	      "%s: JS_STATUS %#x, slot %u, descriptor %#llx; expected 0x58, 0, %#llx",
	      format_names[format], r.fault_status, r.fault_as,
	      (unsigned long long)r.fault_addr, (unsigned long long)va_bad);
	CHECK(wall < 1000000000ULL && r.elapsed_ns < 1000000000ULL,
	      "%s: the failure took %llu us (elapsed_ns %llu) with a 5 s WAIT_IRQ",
	      format_names[format], (unsigned long long)(wall / 1000),
	      (unsigned long long)r.elapsed_ns);
out:
	accmap_player_close(player);
	accmap_rec_free(rec);
	if (dev >= 0)
		close(dev);
}

static void test_job_failed(void)
{
	for (size_t f = 0; f < TAP_ARRAY_SIZE(formats); f++)
		job_failed_case(formats[f]);
}

/*
 * LATEST_FLUSH, read with CAPTURE, written to JS0's FLUSH_ID_NEXT with
 * CAPTURED: the value the model has now, not one from the recording.  The
 * session keeps it from one run to the next.  A CAPTURED WRITE in a
 * session that has captured nothing yet stops the run there (EINVAL); a
 * strict CAPTURE, or a CAPTURED WRITE with a value, is malformed: EINVAL
 * before anything runs.
 */
static void test_capture(void)
{
	const uint32_t flush_next = SIMDRV_JS(0) + 0x70, latest_flush = 0x38;
	const struct accmap_replay_op clean = {
		.op = ACCMAP_REPLAY_OP_WRITE, .offset = SIMDRV_GPU_COMMAND, .value = 0x8,
	};
	const struct accmap_replay_op capture = {
		.op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_CAPTURE,
		.offset = latest_flush,
	};
	const struct accmap_replay_op put = {
		.op = ACCMAP_REPLAY_OP_WRITE, .flags = ACCMAP_REPLAY_OP_CAPTURED,
		.offset = flush_next,
	};
	struct accmap_replay_op ops[] = {
		/* Two cache cleans: LATEST_FLUSH moves on from 0. */
		clean, clean,
		{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = flush_next, .value = 0x77 },
		capture, put,
		{ .op = ACCMAP_REPLAY_OP_READ, .offset = flush_next },
	};
	struct accmap_replay_op bad[2];
	uint32_t latest = GARBAGE_U32, next = GARBAGE_U32;
	struct accmap_replay_run r;
	struct fix f;
	int ret;

	if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		goto out;
	/* Nothing captured yet in this session: the write stops the run. */
	bad[0] = clean;
	bad[1] = put;
	ret = run_raw(f.dev, f.session, bad, 2, &r);
	CHECK(ret == -EINVAL && r.reason == ACCMAP_REPLAY_INVALID && r.failed_op == 1 &&
	      r.done == 1, "CAPTURED before any CAPTURE: %s, reason %u, failed_op %u, done %u",
	      err_name(ret), r.reason, r.failed_op, r.done);

	ret = run_raw(f.dev, f.session, ops, TAP_ARRAY_SIZE(ops), &r);
	if (!CHECK(ret == 0 && r.done == TAP_ARRAY_SIZE(ops), "run: %s, done %u, reason %u",
		   err_name(ret), r.done, r.reason))
		goto out;
	if (!CHECK(simdrv_read_reg(f.dev, f.session, latest_flush, &latest) == 0 &&
		   simdrv_read_reg(f.dev, f.session, flush_next, &next) == 0, "read back"))
		goto out;
	CHECK(latest == 3 && next == latest && r.value == latest,
	      "LATEST_FLUSH %#x, FLUSH_ID_NEXT %#x, run value %#x; expected 3 in all", latest,
	      next, r.value);

	/* Kept from one run to the next: capture now, write in a later run. */
	bad[0] = clean;
	bad[1] = capture;
	ret = run_raw(f.dev, f.session, bad, 2, &r);
	if (CHECK(ret == 0, "clean and capture: %s", err_name(ret)))
		ret = run_raw(f.dev, f.session, &put, 1, &r);
	CHECK(ret == 0 && simdrv_read_reg(f.dev, f.session, flush_next, &next) == 0 &&
	      next == latest + 1, "CAPTURED in the next run: %s, FLUSH_ID_NEXT %#x, expected %#x",
	      err_name(ret), next, latest + 1);
	latest = next;

	/* A strict CAPTURE, and a CAPTURED write with a value. */
	bad[0] = capture;
	bad[0].flags |= ACCMAP_REPLAY_OP_STRICT;
	ret = run_raw(f.dev, f.session, bad, 1, &r);
	CHECK(ret == -EINVAL && r.failed_op == 0, "strict CAPTURE: %s, failed_op %u",
	      err_name(ret), r.failed_op);
	bad[0] = clean;
	bad[1] = put;
	bad[1].value = 1;
	ret = run_raw(f.dev, f.session, bad, 2, &r);
	CHECK(ret == -EINVAL && r.failed_op == 1 && r.done == 0,
	      "CAPTURED with a value: %s, failed_op %u, done %u", err_name(ret), r.failed_op,
	      r.done);
	/* Nothing of those ran: FLUSH_ID_NEXT is as the last good run left it. */
	CHECK(simdrv_read_reg(f.dev, f.session, flush_next, &next) == 0 && next == latest,
	      "FLUSH_ID_NEXT %#x after the refused runs, expected %#x", next, latest);
out:
	fix_close(&f);
}

static void timeout_case(struct fix *f, const struct accmap_replay_op *wait, const char *what)
{
	struct accmap_replay_op ops[3] = {
		{ .op = ACCMAP_REPLAY_OP_READ, .offset = SIMDRV_GPU_ID },
		{ .op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1000 },
		*wait,
	};
	struct accmap_replay_run r;
	uint64_t t0, wall, timeout_ns = wait->timeout_us * 1000ULL;
	int ret;

	t0 = now_ns();
	ret = run_raw(f->dev, f->session, ops, 3, &r);
	wall = now_ns() - t0;
	CHECK(ret == -ETIMEDOUT && r.reason == ACCMAP_REPLAY_TIMEOUT && r.failed_op == 2 &&
	      r.done == 2, "%s: %s, reason %u, failed_op %u, done %u; expected ETIMEDOUT at op 2",
	      what, err_name(ret), r.reason, r.failed_op, r.done);
	CHECK(wall >= timeout_ns && wall < timeout_ns + 1000000000ULL,
	      "%s: a %u us timeout took %llu us", what, wait->timeout_us,
	      (unsigned long long)(wall / 1000));
	CHECK(r.elapsed_ns >= timeout_ns && r.elapsed_ns <= wall,
	      "%s: elapsed_ns %llu for a %u us timeout (%llu ns measured outside)", what,
	      (unsigned long long)r.elapsed_ns, wait->timeout_us, (unsigned long long)wall);
	CHECK(r.fault_as == UINT32_MAX && r.fault_addr == 0 && r.fault_status == 0,
	      "%s: fault fields %u %#llx %#x without a fault", what, r.fault_as,
	      (unsigned long long)r.fault_addr, r.fault_status);
}

static void test_poll_timeout(void)
{
	struct accmap_replay_op poll = {
		.op = ACCMAP_REPLAY_OP_POLL, .offset = SIMDRV_JOB_IRQ_RAWSTAT, .mask = 1,
		.value = 1, .timeout_us = 500000,
	};
	struct accmap_replay_op wait = {
		.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = ACCMAP_REPLAY_IRQ_JOB,
		.mask = SIMDRV_JOB_IRQ_DONE(0), .timeout_us = 300000,
	};
	struct accmap_replay_run r;
	uint32_t v = GARBAGE_U32;
	struct fix f;

	if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		goto out;
	/* Nothing ran on the fresh model: no job interrupt is raised. */
	if (!CHECK(simdrv_read_reg(f.dev, f.session, SIMDRV_JOB_IRQ_RAWSTAT, &v) == 0 && v == 0,
		   "JOB_IRQ_RAWSTAT reads %#x on a fresh session", v))
		goto out;
	timeout_case(&f, &poll, "POLL of a bit that stays 0");
	timeout_case(&f, &wait, "WAIT_IRQ for a job that never ran");
	/* POLL reports the value it last read. */
	poll.timeout_us = 1000;
	poll.mask = UINT32_MAX;
	poll.value = 0x12345678;
	run_raw(f.dev, f.session, &poll, 1, &r);
	CHECK(r.reason == ACCMAP_REPLAY_TIMEOUT && r.value == 0,
	      "POLL timeout: reason %u, value %#x (reads 0)", r.reason, r.value);
out:
	fix_close(&f);
}

/* ==== the model's registers ==== */

/* Offsets of mali_regs.h that simdrv.h does not name. */
#define REG_GPU_IRQ_RAWSTAT	0x0020
#define REG_SHADER_PWRON_HI	0x0184
#define REG_SHADER_PWROFF_LO	0x01c0
#define REG_SHADER_PWROFF_HI	0x01c4
#define REG_GPU_IRQ_POWER	0x600	/* POWER_CHANGED | POWER_CHANGED_ALL */
#define REG_JOB_IRQ_JS_STATE	0x1010
#define REG_JS_HEAD_LO		0x00
#define REG_JS_HEAD_HI		0x04
#define REG_JS_TAIL_LO		0x08
#define REG_JS_TAIL_HI		0x0c
#define REG_JS_AFFINITY_LO	0x10
#define REG_JS_AFFINITY_HI	0x14
#define REG_JS_STATUS		0x24
#define REG_JS_FLUSH_ID_NEXT	0x70
#define REG_JS_STATUS_ACTIVE	0x08
#define REG_MMU_IRQ_RAWSTAT	0x2000
#define REG_AS_LOCKADDR_LO	0x10
#define REG_AS_LOCKADDR_HI	0x14
#define REG_AS_FAULTADDRESS_LO	0x20
#define REG_AS_FAULTADDRESS_HI	0x24
/* AARCH64_4K, 48 input address bits, table walks write-back. */
#define REG_TRANSCFG_A64	(SIMDRV_TRANSCFG_AARCH64_4K | (55 - 48) << 6 | 1U << 25)

/**
 * struct reg_step - one step of a register script
 * @what: what it shows
 * @op:   ops run first (a zero @op ends the list); may be empty
 * @read: then this register is read ...
 * @mask: ... and under this mask ...
 * @want: ... must hold this
 */
struct reg_step {
	const char *what;
	struct accmap_replay_op op[2];
	uint32_t read;
	uint32_t mask;
	uint32_t want;
};

#define REG_W(off, val)		{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = (off), .value = (val) }
#define REG_STEP(what_, w, rd, want_)						\
	{ .what = (what_), .op = { w }, .read = (rd), .mask = UINT32_MAX, .want = (want_) }

/*
 * Runs the steps in order in @f's session (address space 0), each its ops
 * and a strict READ in one run: the run must succeed.  @reg (or "")
 * prefixes the steps' names.
 */
static void reg_script(struct fix *f, const char *reg, const struct reg_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct accmap_replay_op ops[3];
		struct accmap_replay_run r;
		uint32_t nops = 0;
		int ret;

		while (nops < TAP_ARRAY_SIZE(steps[i].op) && steps[i].op[nops].op) {
			ops[nops] = steps[i].op[nops];
			nops++;
		}
		memset(&ops[nops], 0, sizeof(ops[nops]));
		ops[nops].op = ACCMAP_REPLAY_OP_READ;
		ops[nops].flags = ACCMAP_REPLAY_OP_STRICT;
		ops[nops].offset = steps[i].read;
		ops[nops].mask = steps[i].mask;
		ops[nops].value = steps[i].want;
		ret = run_raw(f->dev, f->session, ops, nops + 1, &r);
		CHECK(ret == 0 && r.done == nops + 1,
		      "%s%s: %s, reason %u, failed_op %u; %#x reads %#x under %#x, expected %#x",
		      reg, steps[i].what, err_name(ret), r.reason, r.failed_op, steps[i].read,
		      r.value, steps[i].mask, steps[i].want);
	}
}

/**
 * struct reg64 - a 64-bit register and the values for its halves
 * @what: its name
 * @lo:   offset of its low half
 * @vlo:  low half
 * @vhi:  high half
 */
struct reg64 {
	const char *what;
	uint32_t lo;
	uint32_t vlo;
	uint32_t vhi;
};

/*
 * The session's address space and the job slots' _NEXT registers: each
 * half of a 64-bit register is its own: the low half written reads back,
 * the high half written leaves the low half alone and reads back itself.
 */
static void test_sim_reg_halves(void)
{
	static const struct reg64 regs[] = {
		{ "AS0 MEMATTR", SIMDRV_AS(0) + SIMDRV_AS_MEMATTR_LO, 0x8d8f8888, 0x00004c8d },
		{ "AS0 LOCKADDR", SIMDRV_AS(0) + REG_AS_LOCKADDR_LO, 0xabcde00f, 0x7f },
		/* TRANSCFG_HI may only be written with 0. */
		{ "AS0 TRANSCFG", SIMDRV_AS(0) + SIMDRV_AS_TRANSCFG_LO, REG_TRANSCFG_A64, 0 },
		{ "JS0 HEAD_NEXT", SIMDRV_JS(0) + SIMDRV_JS_HEAD_NEXT_LO, 0xdead1040, 0x12 },
		{ "JS1 AFFINITY_NEXT", SIMDRV_JS(1) + SIMDRV_JS_AFFINITY_NEXT_LO, 0xf0, 0xa5a5 },
		{ "JS2 AFFINITY_NEXT", SIMDRV_JS(2) + SIMDRV_JS_AFFINITY_NEXT_LO, 0x0f,
		  0x5a5a0000 },
	};
	static const struct reg_step more[] = {
		REG_STEP("JS2 FLUSH_ID_NEXT", REG_W(SIMDRV_JS(2) + REG_JS_FLUSH_ID_NEXT, 0x1234),
			 SIMDRV_JS(2) + REG_JS_FLUSH_ID_NEXT, 0x1234),
		REG_STEP("JS1 CONFIG_NEXT", REG_W(SIMDRV_JS(1) + SIMDRV_JS_CONFIG_NEXT, 0x300),
			 SIMDRV_JS(1) + SIMDRV_JS_CONFIG_NEXT, 0x300),
		/* The first writes are still there. */
		REG_STEP("AS0 MEMATTR LO again", {}, SIMDRV_AS(0) + SIMDRV_AS_MEMATTR_LO,
			 0x8d8f8888),
		REG_STEP("JS0 HEAD_NEXT HI again", {}, SIMDRV_JS(0) + SIMDRV_JS_HEAD_NEXT_HI, 0x12),
	};
	struct fix f;

	if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(regs); i++) {
		const struct reg64 *g = &regs[i];
		const struct reg_step steps[] = {
			REG_STEP(" low half", REG_W(g->lo, g->vlo), g->lo, g->vlo),
			REG_STEP(" high half written", REG_W(g->lo + 4, g->vhi), g->lo, g->vlo),
			REG_STEP(" high half", {}, g->lo + 4, g->vhi),
		};

		reg_script(&f, g->what, steps, TAP_ARRAY_SIZE(steps));
	}
	reg_script(&f, "", more, TAP_ARRAY_SIZE(more));
out:
	fix_close(&f);
}

/*
 * Power control on a fresh model (everything off): PWRON and PWROFF act
 * on the cores of their half that are present, and the words between the
 * groups' registers (PRESENT, READY, PWRON, PWROFF + 8) are no registers.
 */
static void test_sim_power_regs(void)
{
	static const struct reg_step steps[] = {
		REG_STEP("GPU_IRQ cleared", REG_W(SIMDRV_GPU_IRQ_CLEAR, UINT32_MAX),
			 REG_GPU_IRQ_RAWSTAT, 0),
		/* The shader cores are 0xff: none in the high half. */
		REG_STEP("SHADER_PWRON_HI raises POWER_CHANGED",
			 REG_W(REG_SHADER_PWRON_HI, 0xff), REG_GPU_IRQ_RAWSTAT, REG_GPU_IRQ_POWER),
		REG_STEP("SHADER_PWRON_HI: no core of the low half", {},
			 SIMDRV_SHADER_READY_LO, 0),
		REG_STEP("SHADER_PWRON_HI: no core, no L2", {}, SIMDRV_L2_READY_LO, 0),
		REG_STEP("PWRON + 8 is no register", REG_W(SIMDRV_SHADER_PWRON_LO + 8, 0xff),
			 SIMDRV_SHADER_READY_LO, 0),
		REG_STEP("PRESENT + 8 reads 0", {}, SIMDRV_SHADER_PRESENT_LO + 8, 0),
		REG_STEP("SHADER_PWRON_LO", REG_W(SIMDRV_SHADER_PWRON_LO, 0xff),
			 SIMDRV_SHADER_READY_LO, 0xff),
		REG_STEP("shader cores bring the L2", {}, SIMDRV_L2_READY_LO, 1),
		REG_STEP("READY + 8 reads 0", {}, SIMDRV_SHADER_READY_LO + 8, 0),
		REG_STEP("PWROFF + 8 is no register", REG_W(REG_SHADER_PWROFF_LO + 8, 0xff),
			 SIMDRV_SHADER_READY_LO, 0xff),
		REG_STEP("SHADER_PWROFF_HI: no core of the low half",
			 REG_W(REG_SHADER_PWROFF_HI, 0xff), SIMDRV_SHADER_READY_LO, 0xff),
		REG_STEP("SHADER_PWROFF_LO of four", REG_W(REG_SHADER_PWROFF_LO, 0x0f),
			 SIMDRV_SHADER_READY_LO, 0xf0),
	};
	struct fix f;

	if (fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		reg_script(&f, "", steps, TAP_ARRAY_SIZE(steps));
	fix_close(&f);
}

/*
 * A chain on slot 1 of a fresh model, whose address space was never
 * updated (no tables): it faults on its first descriptor and stalls, the
 * slot ACTIVE with the current registers as the _NEXT ones were.  A START
 * on the busy slot waits in COMMAND_NEXT; a command other than START or
 * NOP leaves it; NOP takes it back.
 */
static void test_sim_slot_regs(void)
{
	const uint64_t head = 0x700001040ULL;
	const uint32_t js = SIMDRV_JS(1), as = SIMDRV_AS(0);
	const struct reg_step steps[] = {
		REG_STEP("MMU_IRQ_MASK", REG_W(SIMDRV_MMU_IRQ_MASK, SIMDRV_MMU_IRQ_FAULT(0)),
			 SIMDRV_MMU_IRQ_MASK, SIMDRV_MMU_IRQ_FAULT(0)),
		REG_STEP("HEAD_NEXT", REG_W(js + SIMDRV_JS_HEAD_NEXT_LO, (uint32_t)head),
			 js + SIMDRV_JS_HEAD_NEXT_LO, (uint32_t)head),
		REG_STEP("HEAD_NEXT_HI", REG_W(js + SIMDRV_JS_HEAD_NEXT_HI, head >> 32),
			 js + SIMDRV_JS_HEAD_NEXT_HI, head >> 32),
		REG_STEP("AFFINITY_NEXT", REG_W(js + SIMDRV_JS_AFFINITY_NEXT_LO, 0x3c),
			 js + SIMDRV_JS_AFFINITY_NEXT_LO, 0x3c),
		REG_STEP("AFFINITY_NEXT_HI", REG_W(js + SIMDRV_JS_AFFINITY_NEXT_HI, 0x2),
			 js + SIMDRV_JS_AFFINITY_NEXT_HI, 0x2),
		REG_STEP("CONFIG_NEXT", REG_W(js + SIMDRV_JS_CONFIG_NEXT, 0),
			 js + SIMDRV_JS_CONFIG_NEXT, 0),
		/* The wait takes the fault's interrupt: nothing stays pending. */
		{ "START, and the fault", {
			REG_W(js + SIMDRV_JS_COMMAND_NEXT, SIMDRV_JS_COMMAND_START),
			{ .op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = ACCMAP_REPLAY_IRQ_MMU,
			  .mask = SIMDRV_MMU_IRQ_FAULT(0), .timeout_us = 2000000 } },
		  REG_MMU_IRQ_RAWSTAT, SIMDRV_MMU_IRQ_FAULT(0), 0 },
		REG_STEP("JS_STATUS stalled", {}, js + REG_JS_STATUS, REG_JS_STATUS_ACTIVE),
		REG_STEP("HEAD_LO", {}, js + REG_JS_HEAD_LO, (uint32_t)head),
		REG_STEP("HEAD_HI", {}, js + REG_JS_HEAD_HI, head >> 32),
		REG_STEP("TAIL_LO", {}, js + REG_JS_TAIL_LO, (uint32_t)head),
		REG_STEP("TAIL_HI", {}, js + REG_JS_TAIL_HI, head >> 32),
		REG_STEP("AFFINITY_LO", {}, js + REG_JS_AFFINITY_LO, 0x3c),
		REG_STEP("AFFINITY_HI", {}, js + REG_JS_AFFINITY_HI, 0x2),
		/* Translation fault at level 0 on a read. */
		REG_STEP("FAULTSTATUS", {}, as + SIMDRV_AS_FAULTSTATUS, 0x2c0),
		REG_STEP("FAULTADDRESS_LO", {}, as + REG_AS_FAULTADDRESS_LO, (uint32_t)head),
		REG_STEP("FAULTADDRESS_HI", {}, as + REG_AS_FAULTADDRESS_HI, head >> 32),
		REG_STEP("JS_STATE: slot 1 active", {}, REG_JOB_IRQ_JS_STATE, 1U << 1),
		REG_STEP("START on the busy slot waits",
			 REG_W(js + SIMDRV_JS_COMMAND_NEXT, SIMDRV_JS_COMMAND_START),
			 js + SIMDRV_JS_COMMAND_NEXT, SIMDRV_JS_COMMAND_START),
		REG_STEP("JS_STATE: slot 1 active, one waiting", {}, REG_JOB_IRQ_JS_STATE,
			 1U << 1 | 1U << 17),
		REG_STEP("another command leaves it", REG_W(js + SIMDRV_JS_COMMAND_NEXT, 2),
			 js + SIMDRV_JS_COMMAND_NEXT, SIMDRV_JS_COMMAND_START),
		REG_STEP("NOP takes it back", REG_W(js + SIMDRV_JS_COMMAND_NEXT, 0),
			 js + SIMDRV_JS_COMMAND_NEXT, 0),
		REG_STEP("JS_STATE: nothing waiting", {}, REG_JOB_IRQ_JS_STATE, 1U << 1),
		REG_STEP("the chain stays put", {}, js + REG_JS_HEAD_LO, (uint32_t)head),
	};
	struct fix f;

	if (fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		reg_script(&f, "", steps, TAP_ARRAY_SIZE(steps));
	fix_close(&f);
}

/*
 * A FAILED bit of JOB_IRQ_RAWSTAT raised by a write, for a slot the model
 * has and for one it has not: the run stops on it, naming the slot; the
 * slot's JS_STATUS and JS_HEAD if it exists (an idle one: 0), else 0.
 */
static void test_sim_failed_bit(void)
{
	static const uint32_t slots[] = { 0, 5, 15 };
	struct accmap_replay_run r;
	struct fix f;
	int ret;

	if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(slots); i++) {
		const struct accmap_replay_op ops[] = {
			REG_W(SIMDRV_JOB_IRQ_CLEAR, UINT32_MAX),
			REG_W(SIMDRV_JOB_IRQ_RAWSTAT, SIMDRV_JOB_IRQ_FAILED(slots[i])),
			{ .op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1 },
			{ .op = ACCMAP_REPLAY_OP_READ, .offset = SIMDRV_GPU_ID },
		};

		ret = run_raw(f.dev, f.session, ops, TAP_ARRAY_SIZE(ops), &r);
		CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_JOB_FAILED && r.failed_op == 2 &&
		      r.done == 2 && r.fault_as == slots[i] && r.fault_status == 0 &&
		      r.fault_addr == 0,
		      "FAILED bit of slot %u: %s, reason %u, failed_op %u, done %u, slot %u, status %#x, head %#llx",
		      slots[i], err_name(ret), r.reason, r.failed_op, r.done, r.fault_as,
		      r.fault_status, (unsigned long long)r.fault_addr);
	}
out:
	fix_close(&f);
}

/* ==== the model's checks of a job ==== */

/* Where the job tests map their one-page buffers. */
#define JV_DESC			0x40000000ULL
#define JV_A			0x40200000ULL
#define JV_B			0x40400000ULL
#define JV_C			0x40600000ULL
#define JV_FAR			0xfffffffffffffff8ULL	/* 8 bytes below 2^64 */
#define JV_SENTINEL		0xa5a5a5a5U
#define JV_DATA_INVALID		0x58

/* A's page: a list of two nodes {next at 0, value at 8}, 5 and 7. */
#define JV_NODE1		(JV_A + 0x40)
/* B's page: B[0] = 2, B[1] = 3. */

enum jv_base { JV_MATMUL, JV_VADD, JV_LIST };

/* The fields of struct accmap_sim_job. */
enum jv_field { JF_NONE, JF_OP, JF_FLAGS, JF_M, JF_N, JF_K, JF_PAD, JF_A, JF_B, JF_C };

/* One field of struct accmap_sim_job set to a value. */
struct jv_set {
	enum jv_field field;
	uint64_t value;
};

#define JV_OK(what_, base_, c0, c1)						\
	{ .what = (what_), .base = (base_), .done = true, .c = { (c0), (c1) } }
#define JV_BAD(what_, base_, ...)						\
	{ .what = (what_), .base = (base_), .set = { __VA_ARGS__ } }
/**
 * struct jv_case - a job and what the model makes of it
 * @what:  what it shows
 * @base:  1x1x1 MATMUL, VADD of 2, or LIST_SUM of A's list (n 2, value at 8)
 * @set:   fields changed from the base (size 0: none)
 * @done:  the job is valid: DONE, C[0] and C[1] as @c; else it fails
 *         with DATA_INVALID_FAULT and C is untouched
 * @c:     C[0] and C[1] of a valid job
 */
struct jv_case {
	const char *what;
	enum jv_base base;
	struct jv_set set[3];
	bool done;
	uint32_t c[2];
};

/**
 * struct jv - a session over four one-page buffers: descriptor, A, B, C
 * @f:    the device, target, session (of the descriptor buffer)
 * @buf:  the other buffers: A, B, C
 * @gpu:  the model as probed
 */
struct jv {
	struct fix f;
	uint32_t buf[3];
	struct simdrv_gpu gpu;
};

static bool jv_open(struct jv *j)
{
	static const uint64_t vas[] = { JV_A, JV_B, JV_C };
	uint8_t a[128] = { 0 }, b[8] = { 2, 0, 0, 0, 3 };
	struct accmap_replay_map maps[4];
	struct accmap_replay_setup s;
	int ret;

	memset(j, 0, sizeof(*j));
	j->f.dev = am_open();
	if (j->f.dev < 0 || !find_sim(j->f.dev, &j->f.target, &j->f.info) ||
	    am_buffer(j->f.dev, page_size(), 0, &j->f.id, false) < 0)
		return false;
	map_init(&maps[0], JV_DESC, page_size(), j->f.id,
		 ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(vas); i++) {
		if (am_buffer(j->f.dev, page_size(), 0, &j->buf[i], false) < 0)
			return false;
		map_init(&maps[i + 1], vas[i], page_size(), j->buf[i],
			 ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);
	}
	/* Node 0 at A: next node 1, value 5; node 1: the end, value 7. */
	for (int i = 0; i < 8; i++)
		a[i] = (uint8_t)(JV_NODE1 >> (8 * i));
	a[8] = 5;
	a[0x48] = 7;
	if (!CHECK_OK(am_write(j->f.dev, j->buf[0], 0, a, sizeof(a))) ||
	    !CHECK_OK(am_write(j->f.dev, j->buf[1], 0, b, sizeof(b))))
		return false;
	setup_init(&s, maps, 4, j->f.target, ACCMAP_PGT_MALI_AARCH64_4K);
	ret = setup_raw(j->f.dev, &s);
	if (!CHECK(ret == 0, "SETUP of the job buffers: %s", err_name(ret)))
		return false;
	j->f.session = s.session;
	ret = simdrv_probe(j->f.dev, j->f.session, j->f.info.gpu_id, &j->gpu);
	return CHECK(ret == 0, "simdrv_probe: %s", err_name(ret));
}

static void jv_job(const struct jv_case *c, struct accmap_sim_job *job)
{
	memset(job, 0, sizeof(*job));
	job->m = 1;
	job->n = 1;
	job->k = 1;
	job->a = JV_A;
	job->b = JV_B;
	job->c = JV_C;
	switch (c->base) {
	case JV_MATMUL:
		job->op = ACCMAP_SIM_OP_MATMUL_I32;
		break;
	case JV_VADD:
		job->op = ACCMAP_SIM_OP_VADD_I32;
		job->n = 2;
		break;
	case JV_LIST:
		simdrv_list_sum_job(job, JV_A, 0, 8, 2, JV_C);
		break;
	}
	for (size_t i = 0; i < TAP_ARRAY_SIZE(c->set); i++) {
		uint32_t *w[] = {
			[JF_OP] = &job->op, [JF_FLAGS] = &job->flags, [JF_M] = &job->m,
			[JF_N] = &job->n, [JF_K] = &job->k, [JF_PAD] = &job->pad,
		};
		uint64_t v = c->set[i].value;

		switch (c->set[i].field) {
		case JF_NONE:
			break;
		case JF_A:
			job->a = v;
			break;
		case JF_B:
			job->b = v;
			break;
		case JF_C:
			job->c = v;
			break;
		default:
			*w[c->set[i].field] = (uint32_t)v;
			break;
		}
	}
}

/* Runs @c's job from a reset model and checks how it ended. */
static void jv_case_run(struct jv *j, const struct jv_case *c)
{
	struct simdrv_submit sub = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 0, .slot = 0,
		.timeout_us = 2000000, .head = JV_DESC, .reset = 1,
	};
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	uint8_t desc[SIMDRV_JD_SIZE];
	uint32_t out[4], status = GARBAGE_U32;
	struct accmap_sim_job job;
	struct accmap_replay_run r;
	int ret;

	jv_job(c, &job);
	simdrv_encode_job(desc, &job, 0);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(out); i++)
		out[i] = JV_SENTINEL;
	if (!CHECK_OK(am_write(j->f.dev, j->f.id, 0, desc, sizeof(desc))) ||
	    !CHECK_OK(am_write(j->f.dev, j->buf[2], 0, out, sizeof(out))))
		return;
	ret = run_raw(j->f.dev, j->f.session, ops, simdrv_build_ops(&j->gpu, &sub, ops), &r);
	if (!CHECK_OK(am_read(j->f.dev, j->f.id, SIMDRV_JD_EXCEPTION_STATUS, &status,
			      sizeof(status))) ||
	    !CHECK_OK(am_read(j->f.dev, j->buf[2], 0, out, sizeof(out))))
		return;
	if (c->done) {
		CHECK(ret == 0 && status == SIMDRV_JOB_STATUS_DONE && out[0] == c->c[0] &&
		      out[1] == c->c[1] && out[2] == JV_SENTINEL,
		      "%s: %s, reason %u, job status %#x, C %#x %#x %#x; expected DONE, %#x %#x",
		      c->what, err_name(ret), r.reason, status, out[0], out[1], out[2],
		      c->c[0], c->c[1]);
		return;
	}
	CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_JOB_FAILED &&
	      r.fault_status == JV_DATA_INVALID && r.fault_as == 0 && r.fault_addr == JV_DESC &&
	      status == JV_DATA_INVALID,
	      "%s: %s, reason %u, JS_STATUS %#x slot %u head %#llx, job status %#x; expected JOB_FAILED, %#x at %#llx",
	      c->what, err_name(ret), r.reason, r.fault_status, r.fault_as,
	      (unsigned long long)r.fault_addr, status, JV_DATA_INVALID,
	      (unsigned long long)JV_DESC);
	CHECK(out[0] == JV_SENTINEL && out[1] == JV_SENTINEL,
	      "%s: the refused job wrote C: %#x %#x", c->what, out[0], out[1]);
}

/*
 * Each check of a job's payload, for MATMUL, VADD and LIST_SUM: a job
 * that breaks one fails with DATA_INVALID_FAULT in JS_STATUS and in its
 * descriptor, and writes nothing.  The valid jobs around them compute.
 */
static void test_sim_job_checks(void)
{
	const uint64_t big = ACCMAP_SIM_DIM_MAX, elems = ACCMAP_SIM_ELEMS_MAX;
	const uint64_t far4 = JV_FAR + 4;	/* 4 bytes below 2^64 */
	const struct jv_case cases[] = {
		JV_OK("valid matmul", JV_MATMUL, (uint32_t)JV_NODE1 * 2, JV_SENTINEL),
		JV_OK("valid vadd", JV_VADD, (uint32_t)JV_NODE1 + 2, 3),
		JV_OK("valid list sum", JV_LIST, 12, 2),
		JV_BAD("flags 1", JV_MATMUL, { JF_FLAGS, 1 }),
		JV_BAD("pad 1", JV_MATMUL, { JF_PAD, 1 }),
		JV_BAD("op 0", JV_MATMUL, { JF_OP, 0 }),
		JV_BAD("op 4", JV_MATMUL, { JF_OP, 4 }),
		JV_BAD("m 0", JV_MATMUL, { JF_M, 0 }),
		JV_BAD("n 0", JV_MATMUL, { JF_N, 0 }),
		JV_BAD("k 0", JV_MATMUL, { JF_K, 0 }),
		JV_BAD("m past DIM_MAX", JV_MATMUL, { JF_M, big + 1 }),
		JV_BAD("n past DIM_MAX", JV_MATMUL, { JF_N, big + 1 }),
		JV_BAD("k past DIM_MAX", JV_MATMUL, { JF_K, big + 1 }),
		JV_BAD("m x n x k past MACS_MAX", JV_MATMUL, { JF_M, big }, { JF_N, big },
		       { JF_K, 9 }),
		JV_BAD("A past ELEMS_MAX", JV_MATMUL, { JF_M, big }, { JF_K, elems / big + 1 }),
		JV_BAD("B past ELEMS_MAX", JV_MATMUL, { JF_K, big }, { JF_N, elems / big + 1 }),
		JV_BAD("C past ELEMS_MAX", JV_MATMUL, { JF_M, big }, { JF_N, elems / big + 1 }),
		JV_BAD("A unaligned", JV_MATMUL, { JF_A, JV_A + 2 }),
		JV_BAD("B unaligned", JV_MATMUL, { JF_B, JV_B + 1 }),
		JV_BAD("C unaligned", JV_MATMUL, { JF_C, JV_C + 2 }),
		JV_BAD("A wrapping past 2^64", JV_MATMUL, { JF_A, far4 }),
		JV_BAD("B wrapping past 2^64", JV_MATMUL, { JF_B, far4 }),
		JV_BAD("C wrapping past 2^64", JV_MATMUL, { JF_C, far4 }),
		JV_BAD("vadd m 2", JV_VADD, { JF_M, 2 }),
		JV_BAD("vadd k 2", JV_VADD, { JF_K, 2 }),
		JV_BAD("list next offset DIM_MAX", JV_LIST, { JF_M, big }),
		JV_BAD("list value offset DIM_MAX", JV_LIST, { JF_K, big }),
		JV_BAD("list next offset 4", JV_LIST, { JF_M, 4 }),
		JV_BAD("list value offset 2", JV_LIST, { JF_K, 2 }),
		JV_BAD("list of at most 0 nodes", JV_LIST, { JF_N, 0 }),
		JV_BAD("list past ELEMS_MAX nodes", JV_LIST, { JF_N, elems + 1 }),
		JV_BAD("list with a B", JV_LIST, { JF_B, JV_B }),
		JV_BAD("list C unaligned", JV_LIST, { JF_C, JV_C + 2 }),
		JV_BAD("list C wrapping past 2^64", JV_LIST, { JF_C, JV_FAR }),
		JV_BAD("list longer than n", JV_LIST, { JF_N, 1 }),
		JV_BAD("list node's next wrapping", JV_LIST, { JF_A, JV_FAR }, { JF_M, 8 }),
		JV_BAD("list node's value wrapping", JV_LIST, { JF_A, JV_FAR }, { JF_K, 8 }),
		JV_BAD("list node unaligned", JV_LIST, { JF_A, JV_A + 4 }),
	};
	struct jv j;

	if (jv_open(&j))
		for (size_t i = 0; i < TAP_ARRAY_SIZE(cases); i++)
			jv_case_run(&j, &cases[i]);
	fix_close(&j.f);
}

/* ==== GPU pages inside CPU pages ==== */

/*
 * GPU page tables have a 4 KiB granule whatever the CPU's page size: with
 * 16 KiB (or 64 KiB) CPU pages each CPU page of a buffer takes several
 * GPU PTEs, and a mapping may start and end inside a CPU page.  The
 * model's MMU reads what the kernel built, so a job that reads or writes
 * every GPU page of such a mapping shows whether each one reaches the
 * right 4 KiB of the right CPU page, and a job one GPU page outside it
 * shows that nothing more is mapped.
 */
#define GPU_PAGE		4096ULL
#define CP_VA_DESC		0x40000000ULL
#define CP_VA_A			0x40200000ULL
#define CP_VA_B			0x40400000ULL
#define CP_VA_C			0x40600000ULL
#define CP_DESC_STRIDE		128	/* bytes per job descriptor */

/**
 * struct cpu_pages - the buffers of the test
 * @dev:  the device
 * @ps:   CPU page size
 * @len:  bytes of each of the A, B and C mappings: two CPU pages
 * @a_off: where A's mapping starts in its buffer: one GPU page in
 * @c_off: where C's mapping starts in its buffer: one GPU page before
 *        the end of the first CPU page
 * @desc: job descriptors, one CPU page
 * @a:    A's buffer, four CPU pages of distinct words
 * @b:    B's buffer, zeros
 * @c:    C's buffer, four CPU pages
 * @info: the sim
 * @target: its index
 */
struct cpu_pages {
	int dev;
	size_t ps;
	uint64_t len, a_off, c_off;
	uint32_t desc, a, b, c;
	struct accmap_replay_target_info info;
	uint32_t target;
};

/* The word at byte @off of A's buffer. */
static uint32_t cp_word(uint64_t off)
{
	return 0x5a000000U ^ (uint32_t)(off / 4) ^ (uint32_t)(off >> 12) << 20;
}

/* Sets up a session over the four maps, or returns false. */
static bool cp_setup(struct cpu_pages *cp, uint32_t format, uint32_t *session,
		     uint32_t *table_pages)
{
	struct accmap_replay_map maps[4];
	struct accmap_replay_setup s;
	int ret;

	map_init(&maps[0], CP_VA_DESC, GPU_PAGE, cp->desc,
		 ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);
	map_init(&maps[1], CP_VA_A, cp->len, cp->a, ACCMAP_REPLAY_MAP_READ);
	maps[1].offset = cp->a_off;
	map_init(&maps[2], CP_VA_B, cp->len, cp->b, ACCMAP_REPLAY_MAP_READ);
	map_init(&maps[3], CP_VA_C, cp->len, cp->c,
		 ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);
	maps[3].offset = cp->c_off;
	setup_init(&s, maps, 4, cp->target, format);
	ret = setup_raw(cp->dev, &s);
	if (!CHECK(ret == 0, "%s: SETUP of A at offset %#llx and C at %#llx, %#llx bytes each: %s",
		   format_names[format], (unsigned long long)cp->a_off,
		   (unsigned long long)cp->c_off, (unsigned long long)cp->len, err_name(ret)))
		return false;
	*session = s.session;
	*table_pages = s.table_pages;
	return true;
}

/* Runs the chain at CP_VA_DESC in @session; the run's errno. */
static int cp_run(struct cpu_pages *cp, uint32_t format, uint32_t session,
		  struct accmap_replay_run *r)
{
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct simdrv_submit sub = {
		.format = format, .as = 0, .slot = 0, .timeout_us = 5000000,
		.head = CP_VA_DESC,
	};
	struct simdrv_gpu gpu;
	int ret;

	ret = simdrv_probe(cp->dev, session, cp->info.gpu_id, &gpu);
	if (!CHECK(ret == 0, "simdrv_probe: %s", err_name(ret)))
		return ret;
	return run_raw(cp->dev, session, ops, simdrv_build_ops(&gpu, &sub, ops), r);
}

/* C[i] = A[i] + B[i] over GPU page @j of the mappings; the @j-th job. */
static void cp_job(uint8_t *desc, uint64_t a, uint64_t b, uint64_t c, uint64_t next)
{
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_VADD_I32, .m = 1, .k = 1, .n = GPU_PAGE / 4,
		.a = a, .b = b, .c = c,
	};

	simdrv_encode_job(desc, &job, next);
}

/* Every GPU page of A copied to C by one job each, in @format. */
static void cp_copy(struct cpu_pages *cp, uint32_t format)
{
	uint64_t jobs = cp->len / GPU_PAGE, size = 4 * cp->ps;
	uint32_t session = 0, table_pages = 0;
	uint8_t *desc = calloc(1, cp->ps);
	uint32_t *c = malloc(size);
	struct accmap_replay_run r;
	uint64_t bad = size;
	int ret;

	if (!CHECK(desc && c, "malloc"))
		goto out;
	for (uint64_t j = 0; j < jobs; j++)
		cp_job(desc + j * CP_DESC_STRIDE, CP_VA_A + j * GPU_PAGE, CP_VA_B + j * GPU_PAGE,
		       CP_VA_C + j * GPU_PAGE,
		       j + 1 < jobs ? CP_VA_DESC + (j + 1) * CP_DESC_STRIDE : 0);
	memset(c, 0xff, size);
	if (!CHECK_OK(am_write(cp->dev, cp->desc, 0, desc, cp->ps)) ||
	    !CHECK_OK(am_write(cp->dev, cp->c, 0, c, size)) ||
	    !cp_setup(cp, format, &session, &table_pages))
		goto out;
	/*
	 * Root, level 1, level 2, and one level-3 table per 2 MiB region:
	 * 4 KiB tables, as many with any CPU page size.
	 */
	CHECK(table_pages == 7, "%s: %u table pages, expected 7", format_names[format],
	      table_pages);

	ret = cp_run(cp, format, session, &r);
	if (!CHECK(ret == 0, "%s: run of %llu jobs: %s, reason %u, fault at %#llx",
		   format_names[format], (unsigned long long)jobs, err_name(ret), r.reason,
		   (unsigned long long)r.fault_addr))
		goto out;
	if (!CHECK_OK(am_read(cp->dev, cp->desc, 0, desc, cp->ps)))
		goto out;
	for (uint64_t j = 0; j < jobs; j++) {
		uint32_t st = desc[j * CP_DESC_STRIDE + SIMDRV_JD_EXCEPTION_STATUS];

		if (!CHECK(st == SIMDRV_JOB_STATUS_DONE, "%s: job %llu status %#x",
			   format_names[format], (unsigned long long)j, st))
			goto out;
	}

	/* C's buffer: A's words inside C's mapping, untouched 0xff outside. */
	if (!CHECK_OK(am_read(cp->dev, cp->c, 0, c, size)))
		goto out;
	for (uint64_t off = 0; off < size && bad == size; off += 4) {
		uint32_t want = 0xffffffffU;

		if (off >= cp->c_off && off < cp->c_off + cp->len)
			want = cp_word(cp->a_off + off - cp->c_off);
		if (c[off / 4] != want)
			bad = off;
	}
	CHECK(bad == size,
	      "%s: C's buffer at %#llx (CPU page %llu, GPU page %llu of it) holds %#x, expected %#x",
	      format_names[format], (unsigned long long)bad, (unsigned long long)(bad / cp->ps),
	      (unsigned long long)(bad % cp->ps / GPU_PAGE), bad < size ? c[bad / 4] : 0,
	      bad >= cp->c_off && bad < cp->c_off + cp->len ?
	      cp_word(cp->a_off + bad - cp->c_off) : 0xffffffffU);
	tap_diag("%s: %llu GPU pages in %llu-byte CPU pages, A at offset %#llx, C at %#llx: %s",
		 format_names[format], (unsigned long long)jobs, (unsigned long long)cp->ps,
		 (unsigned long long)cp->a_off, (unsigned long long)cp->c_off,
		 bad == size ? "all copied" : "wrong");
out:
	if (session)
		destroy_raw(cp->dev, session);
	free(c);
	free(desc);
}

/* One job reading A's GPU page at @va, which lies outside the mapping. */
static void cp_outside(struct cpu_pages *cp, uint32_t format, uint64_t va, const char *what)
{
	uint32_t session = 0, table_pages;
	uint8_t *desc = calloc(1, cp->ps);
	struct accmap_replay_run r;
	int ret;

	if (!CHECK(desc, "malloc"))
		return;
	cp_job(desc, va, CP_VA_B, CP_VA_C, 0);
	if (!CHECK_OK(am_write(cp->dev, cp->desc, 0, desc, cp->ps)) ||
	    !cp_setup(cp, format, &session, &table_pages))
		goto out;
	ret = cp_run(cp, format, session, &r);
	CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT && r.fault_addr == va,
	      "%s: reading %s (%#llx): %s, reason %u, fault at %#llx; expected an MMU fault there",
	      format_names[format], what, (unsigned long long)va, err_name(ret), r.reason,
	      (unsigned long long)r.fault_addr);
out:
	if (session)
		destroy_raw(cp->dev, session);
	free(desc);
}

static void test_cpu_pages(void)
{
	struct cpu_pages cp = { .dev = am_open(), .ps = page_size() };
	uint64_t size = 4 * cp.ps;
	uint32_t *a = malloc(size);

	cp.len = 2 * cp.ps;
	cp.a_off = GPU_PAGE;
	cp.c_off = cp.ps - GPU_PAGE;
	tap_diag("CPU page %zu bytes: %zu GPU pages each", cp.ps, cp.ps / (size_t)GPU_PAGE);
	if (cp.dev < 0 || !CHECK(a, "malloc") || !find_sim(cp.dev, &cp.target, &cp.info) ||
	    am_buffer(cp.dev, cp.ps, 0, &cp.desc, false) < 0 ||
	    am_buffer(cp.dev, size, 0, &cp.a, false) < 0 ||
	    am_buffer(cp.dev, cp.len, 0, &cp.b, false) < 0 ||
	    am_buffer(cp.dev, size, ACCMAP_ALLOC_WRITECOMBINE, &cp.c, false) < 0)
		goto out;
	for (uint64_t off = 0; off < size; off += 4)
		a[off / 4] = cp_word(off);
	if (!CHECK_OK(am_write(cp.dev, cp.a, 0, a, size)))
		goto out;
	memset(a, 0, cp.len);
	if (!CHECK_OK(am_write(cp.dev, cp.b, 0, a, cp.len)))
		goto out;

	for (size_t f = 0; f < TAP_ARRAY_SIZE(formats); f++) {
		cp_copy(&cp, formats[f]);
		cp_outside(&cp, formats[f], CP_VA_A - GPU_PAGE, "the GPU page before A");
		cp_outside(&cp, formats[f], CP_VA_A + cp.len, "the GPU page after A");
	}
out:
	free(a);
	if (cp.dev >= 0)
		close(cp.dev);
}

/* ==== errnos ==== */

static void test_setup_errors(void)
{
	const uint64_t pg = page_size();
	struct accmap_replay_map maps[3];
	struct accmap_replay_setup s;
	struct accmap_replay_target_info info;
	uint32_t target, id, id2, unalloc, ro_id = 0, ro_ref, count, sessions;
	void *ro = MAP_FAILED;
	int dev = am_open(), fd;
	bool svm;

	if (dev < 0 || !find_sim(dev, &target, &info) ||
	    am_buffer(dev, 2 * pg, 0, &id, false) < 0 || am_buffer(dev, pg, 0, &id2, false) < 0 ||
	    !CHECK(am_create(dev, pg, &unalloc) == 0, "CREATE"))
		goto out;
	/*
	 * The model and a window with an MMU interrupt mirror; a window
	 * without one refuses SVM (EOPNOTSUPP).
	 */
	svm = info.flags & ACCMAP_REPLAY_TARGET_SVM;
	CHECK(!(info.flags & ACCMAP_REPLAY_TARGET_SIM) || svm, "the model without SVM: flags %#x",
	      info.flags);
	for (count = 0; accmap_replay_query(dev, count, &info) == 0; count++)
		;
	find_sim(dev, &target, &info);
	sessions = info.sessions;

#define RESET()	do {								\
		map_init(&maps[0], TEST_VA, pg, id, ACCMAP_REPLAY_MAP_READ);	\
		map_init(&maps[1], TEST_VA + 16 * pg, pg, id2,			\
			 ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE);	\
		setup_init(&s, maps, 2, target, ACCMAP_PGT_MALI_AARCH64_4K);	\
	} while (0)

	/* The reference: this one works. */
	RESET();
	if (CHECK(setup_raw(dev, &s) == 0, "SETUP of two maps")) {
		CHECK(s.session && s.session != GARBAGE_U32 && s.failed_map == UINT32_MAX &&
		      s.table_pages && s.table_pages != GARBAGE_U32,
		      "SETUP: session %#x failed_map %#x table_pages %#x", s.session,
		      s.failed_map, s.table_pages);
		destroy_raw(dev, s.session);
	}

	for (unsigned int bit = 0; bit < 32; bit++) {
		RESET();
		s.flags = 1U << bit;
		setup_expect(dev, &s, EINVAL, UINT32_MAX, "a flag");
	}
	RESET();
	s.pad = 1;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "pad 1");
	RESET();
	s.svm_start = 64 * pg;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "svm_start without SETUP_SVM");
	RESET();
	s.svm_size = pg;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "svm_size without SETUP_SVM");

	RESET();
	s.target = count;
	setup_expect(dev, &s, ENOENT, UINT32_MAX, "target past the last");
	RESET();
	s.target = UINT32_MAX;
	setup_expect(dev, &s, ENOENT, UINT32_MAX, "target 0xffffffff");
	RESET();
	s.format = ACCMAP_PGT_COUNT;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "an unknown format");
	RESET();
	s.format = UINT32_MAX;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "format 0xffffffff");
	RESET();
	s.as = info.as_count;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "AS as_count");
	RESET();
	s.as = UINT32_MAX;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "AS 0xffffffff");
	RESET();
	s.va_bits = ACCMAP_REPLAY_VA_BITS_MIN - 1;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "va_bits 31");
	RESET();
	s.va_bits = ACCMAP_REPLAY_VA_BITS_MAX + 1;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "va_bits 49");
	RESET();
	s.va_bits = 0;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "va_bits 0");
	RESET();
	s.nr_maps = 0;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "no maps");
	RESET();
	s.nr_maps = ACCMAP_REPLAY_MAPS_MAX + 1;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "too many maps");
	RESET();
	s.nr_maps = UINT32_MAX;
	setup_expect(dev, &s, EINVAL, UINT32_MAX, "nr_maps 0xffffffff");
	RESET();
	s.maps = 0;
	setup_expect(dev, &s, EFAULT, UINT32_MAX, "maps NULL");

	/* Each field of map 1 in turn. */
	RESET();
	maps[1].gpu_va += 1;
	setup_expect(dev, &s, EINVAL, 1, "gpu_va not page aligned");
	RESET();
	maps[1].offset = 1;
	setup_expect(dev, &s, EINVAL, 1, "offset not page aligned");
	RESET();
	maps[1].length = 0;
	setup_expect(dev, &s, EINVAL, 1, "length 0");
	RESET();
	maps[1].length = pg + 1;
	setup_expect(dev, &s, EINVAL, 1, "length not page aligned");
	RESET();
	maps[1].gpu_va = -pg;
	maps[1].length = 2 * pg;
	setup_expect(dev, &s, EINVAL, 1, "gpu_va + length wrapping around");
	RESET();
	maps[1].gpu_va = (1ULL << 48) - pg;
	maps[1].length = 2 * pg;
	setup_expect(dev, &s, EINVAL, 1, "a map crossing 1 << va_bits");
	RESET();
	s.va_bits = 32;
	maps[1].gpu_va = 1ULL << 32;
	setup_expect(dev, &s, EINVAL, 1, "a map above 1 << 32 with va_bits 32");
	RESET();
	maps[1].offset = -pg;
	setup_expect(dev, &s, EINVAL, 1, "offset + length wrapping around");
	RESET();
	maps[1].offset = pg;
	setup_expect(dev, &s, EINVAL, 1, "a range past the buffer's end");
	RESET();
	maps[0].length = 3 * pg;
	setup_expect(dev, &s, EINVAL, 0, "a length past the buffer's end");
	RESET();
	maps[1].flags = 0;
	setup_expect(dev, &s, EINVAL, 1, "no permission");
	RESET();
	maps[1].flags = ACCMAP_REPLAY_MAP_WRITE;
	setup_expect(dev, &s, EINVAL, 1, "WRITE without READ");
	for (unsigned int bit = 3; bit < 32; bit++) {
		RESET();
		maps[1].flags |= 1U << bit;
		setup_expect(dev, &s, EINVAL, 1, "an unknown map flag");
	}
	RESET();
	maps[1].attr = ACCMAP_REPLAY_ATTR_MAX + 1;
	setup_expect(dev, &s, EINVAL, 1, "attr 8");
	RESET();
	maps[1].pad = 1;
	setup_expect(dev, &s, EINVAL, 1, "map pad 1");

	/* Overlaps: the later of the two maps is blamed. */
	RESET();
	maps[1].gpu_va = TEST_VA;
	setup_expect(dev, &s, EEXIST, 1, "two maps at one VA");
	RESET();
	maps[0].length = 2 * pg;
	maps[1].gpu_va = TEST_VA + pg;
	setup_expect(dev, &s, EEXIST, 1, "map 1 inside map 0");
	RESET();
	maps[1].gpu_va = TEST_VA - pg;
	maps[1].length = 2 * pg;
	maps[1].id = id;
	setup_expect(dev, &s, EEXIST, 1, "map 1 over the start of map 0");
	RESET();
	map_init(&maps[2], maps[1].gpu_va, pg, id2, ACCMAP_REPLAY_MAP_READ);
	s.nr_maps = 3;
	setup_expect(dev, &s, EEXIST, 2, "map 2 on map 1");
	/* An SVM session's maps stay out of its mirrored range. */
	RESET();
	s.flags = ACCMAP_REPLAY_SETUP_SVM;
	s.svm_start = maps[1].gpu_va - pg;
	s.svm_size = 2 * pg;
	setup_expect(dev, &s, svm ? EINVAL : EOPNOTSUPP, svm ? 1 : UINT32_MAX,
		     "map 1 over the end of the SVM range");
	RESET();
	s.flags = ACCMAP_REPLAY_SETUP_SVM;
	s.svm_start = maps[1].gpu_va - 8 * pg;
	s.svm_size = 16 * pg;
	setup_expect(dev, &s, svm ? EINVAL : EOPNOTSUPP, svm ? 1 : UINT32_MAX,
		     "map 1 inside the SVM range");
	RESET();
	s.flags = ACCMAP_REPLAY_SETUP_SVM;
	s.svm_start = maps[1].gpu_va + pg;
	s.svm_size = pg;
	if (!svm)
		setup_expect(dev, &s, EOPNOTSUPP, UINT32_MAX, "SVM on a target without it");
	else if (CHECK(setup_raw(dev, &s) == 0, "SETUP of an SVM range right after map 1"))
		destroy_raw(dev, s.session);
	/* Several maps of one buffer, apart: fine. */
	RESET();
	maps[1].id = id;
	maps[1].offset = pg;
	if (CHECK(setup_raw(dev, &s) == 0, "SETUP of two maps of one buffer"))
		destroy_raw(dev, s.session);

	/* Handles. */
	RESET();
	maps[1].id = id2 + 1000;
	setup_expect(dev, &s, ENOENT, 1, "an unknown id");
	RESET();
	maps[1].id = 0;
	setup_expect(dev, &s, ENOENT, 1, "id 0");
	RESET();
	maps[1].id = unalloc;
	setup_expect(dev, &s, ENODATA, 1, "a handle without memory");

	/* A read-only buffer: mapped for reading, never for writing. */
	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (CHECK(ro != MAP_FAILED, "mmap") &&
	    CHECK(accmap_from_va(dev, ro, pg, 0, 0, &ro_id) == 0, "FROM_VA read-only")) {
		RESET();
		maps[1].id = ro_id;
		setup_expect(dev, &s, EACCES, 1, "WRITE of a read-only buffer");
		RESET();
		maps[1].id = ro_id;
		maps[1].flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_EXEC;
		if (CHECK(setup_raw(dev, &s) == 0, "SETUP of a read-only buffer, READ | EXEC"))
			destroy_raw(dev, s.session);
	}
	/* A writable buffer through a read-only id (FROM_FD of an O_RDONLY export). */
	fd = am_get_fd(dev, id2, O_RDONLY | O_CLOEXEC);
	if (CHECK(fd >= 0, "GET_FD O_RDONLY: %s", strerror(-fd)) &&
	    CHECK(am_from_fd(dev, fd, &ro_ref) == 0, "FROM_FD of the O_RDONLY export")) {
		RESET();
		maps[1].id = ro_ref;
		setup_expect(dev, &s, EACCES, 1, "WRITE through a read-only id");
		CHECK_OK(am_free(dev, ro_ref));
	}
	if (fd >= 0)
		close(fd);

	/* The 65th session of a client. */
	{
		uint32_t ids[SESSIONS_MAX + 1] = { 0 }, n, reused;

		for (n = 0; n < SESSIONS_MAX; n++) {
			RESET();
			if (!CHECK(setup_raw(dev, &s) == 0, "SETUP of session %u", n + 1))
				break;
			ids[n] = s.session;
			CHECK(s.session >= 1 && s.session <= SESSIONS_MAX,
			      "session id %u outside 1..%d", s.session, SESSIONS_MAX);
		}
		if (n == SESSIONS_MAX) {
			RESET();
			setup_expect(dev, &s, ENOSPC, UINT32_MAX, "64 sessions already");
			/* One goes: the only free id is handed out again. */
			reused = ids[0];
			CHECK(destroy_raw(dev, reused) == 0, "DESTROY");
			ids[0] = 0;
			RESET();
			if (CHECK(setup_raw(dev, &s) == 0, "SETUP after a DESTROY")) {
				ids[0] = s.session;
				CHECK(s.session == reused, "session id %u, the free one is %u",
				      s.session, reused);
			}
		}
		for (n = 0; n < SESSIONS_MAX; n++)
			if (ids[n])
				destroy_raw(dev, ids[n]);
	}

	/* No refusal left a session behind. */
	CHECK(sim_sessions(dev) == sessions, "QUERY counts %u sessions, %u before",
	      sim_sessions(dev), sessions);
#undef RESET
out:
	if (ro != MAP_FAILED)
		munmap(ro, pg);
	if (dev >= 0)
		close(dev);
}

static void run_expect_invalid(struct fix *f, const struct accmap_replay_op *bad, const char *what)
{
	struct accmap_replay_op ops[4] = {
		{ .op = ACCMAP_REPLAY_OP_READ, .offset = SIMDRV_GPU_ID },
		{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = SIMDRV_JOB_IRQ_CLEAR, .value = 0 },
		{ .op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1 },
		*bad,
	};
	struct accmap_replay_run r;
	int ret = run_raw(f->dev, f->session, ops, 4, &r);

	if (!CHECK(ret == -EINVAL, "RUN with %s: %s, expected EINVAL", what, err_name(ret)))
		return;
	CHECK(r.reason == ACCMAP_REPLAY_INVALID && r.failed_op == 3 && r.done == 0,
	      "RUN with %s: reason %u, failed_op %u, done %u; expected INVALID, 3, 0", what,
	      r.reason, r.failed_op, r.done);
}

static void test_run_errors(void)
{
	const struct accmap_replay_op ok = { .op = ACCMAP_REPLAY_OP_READ, .offset = 0 };
	struct accmap_replay_op op;
	struct accmap_replay_run r;
	uint32_t gpu_id = 0, window;
	struct fix f;
	int ret;

	if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
		goto out;
	window = (uint32_t)f.info.window_size;

	/* The argument itself. */
	for (unsigned int bit = 0; bit < 32; bit++) {
		memset(&r, 0, sizeof(r));
		r.ops = (uintptr_t)&ok;
		r.nr_ops = 1;
		r.session = f.session;
		r.flags = 1U << bit;
		CHECK(raw_ioctl(f.dev, ACCMAP_IOC_REPLAY_RUN, &r) == -EINVAL, "RUN flags %#x",
		      1U << bit);
	}
	memset(&r, 0, sizeof(r));
	r.ops = (uintptr_t)&ok;
	r.nr_ops = 1;
	r.session = f.session;
	r.pad = 1;
	CHECK(raw_ioctl(f.dev, ACCMAP_IOC_REPLAY_RUN, &r) == -EINVAL, "RUN pad 1");
	CHECK(run_raw(f.dev, f.session, &ok, 0, &r) == -EINVAL, "RUN of 0 ops");
	CHECK(run_raw(f.dev, f.session, &ok, ACCMAP_REPLAY_OPS_MAX + 1, &r) == -EINVAL,
	      "RUN of ACCMAP_REPLAY_OPS_MAX + 1 ops");
	CHECK(run_raw(f.dev, f.session, NULL, 1, &r) == -EFAULT, "RUN of ops at NULL");
	CHECK(run_raw(f.dev, f.session + 1000, &ok, 1, &r) == -ENOENT, "RUN of an unknown session");
	CHECK(run_raw(f.dev, 0, &ok, 1, &r) == -ENOENT, "RUN of session 0");

	/* Every field of an op, each op kind. */
#define BAD(...)	do {							\
		op = (struct accmap_replay_op){ __VA_ARGS__ };			\
		run_expect_invalid(&f, &op, #__VA_ARGS__);			\
	} while (0)
	BAD(.op = 0);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT + 1);
	BAD(.op = UINT32_MAX);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .pad = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .flags = ACCMAP_REPLAY_OP_STRICT);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .flags = 1U << 2);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .offset = 2);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .offset = window);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .offset = 0xfffffffc);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .mask = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .timeout_us = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE, .irq = 1);
	BAD(.op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_HI);
	BAD(.op = ACCMAP_REPLAY_OP_READ, .offset = window);
	BAD(.op = ACCMAP_REPLAY_OP_READ, .offset = 1);
	BAD(.op = ACCMAP_REPLAY_OP_READ, .timeout_us = 10);
	BAD(.op = ACCMAP_REPLAY_OP_POLL, .mask = 1, .timeout_us = 0);
	BAD(.op = ACCMAP_REPLAY_OP_POLL, .mask = 1,
	    .timeout_us = ACCMAP_REPLAY_TIMEOUT_MAX_US + 1);
	BAD(.op = ACCMAP_REPLAY_OP_POLL, .mask = 1, .timeout_us = 1,
	    .flags = ACCMAP_REPLAY_OP_STRICT);
	BAD(.op = ACCMAP_REPLAY_OP_POLL, .mask = 1, .timeout_us = 1, .offset = window);
	BAD(.op = ACCMAP_REPLAY_OP_POLL, .mask = 1, .timeout_us = 1, .irq = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 0, .timeout_us = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 0);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1,
	    .timeout_us = ACCMAP_REPLAY_TIMEOUT_MAX_US + 1);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 1,
	    .irq = ACCMAP_REPLAY_IRQ_COUNT);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 1, .offset = 4);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 1, .value = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 1,
	    .flags = ACCMAP_REPLAY_OP_HI);
	BAD(.op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = ACCMAP_REPLAY_DELAY_MAX_US + 1);
	BAD(.op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1, .offset = 4);
	BAD(.op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1, .value = 1);
	BAD(.op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1, .mask = 1);
	BAD(.op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 1, .irq = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = SIMDRV_AS(0), .value = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = SIMDRV_AS(0), .mask = 1);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = SIMDRV_AS(0),
	    .flags = ACCMAP_REPLAY_OP_STRICT);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = window);
	BAD(.op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = SIMDRV_AS(0), .timeout_us = 1);
#undef BAD

	/* A strict READ that sees another value: EIO, and the value. */
	if (!CHECK(simdrv_read_reg(f.dev, f.session, SIMDRV_GPU_ID, &gpu_id) == 0, "GPU_ID"))
		goto out;
	CHECK(gpu_id == f.info.gpu_id, "GPU_ID reads %#x, QUERY says %#x", gpu_id,
	      f.info.gpu_id);
	{
		struct accmap_replay_op ops[3] = {
			{ .op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_STRICT,
			  .offset = SIMDRV_GPU_ID, .mask = UINT32_MAX, .value = gpu_id },
			{ .op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_STRICT,
			  .offset = SIMDRV_GPU_ID, .mask = 0xffff, .value = gpu_id ^ 0x10000 },
			{ .op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_STRICT,
			  .offset = SIMDRV_GPU_ID, .mask = 0xff, .value = gpu_id ^ 1 },
		};

		/* Bits outside the mask do not count: ops 0 and 1 match. */
		ret = run_raw(f.dev, f.session, ops, 3, &r);
		CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MISMATCH && r.failed_op == 2 &&
		      r.done == 2 && r.value == gpu_id,
		      "strict READ mismatch: %s, reason %u, failed_op %u, done %u, value %#x (GPU_ID %#x)",
		      err_name(ret), r.reason, r.failed_op, r.done, r.value, gpu_id);
		/* Not strict: a mismatch is no failure. */
		ops[2].flags = 0;
		ret = run_raw(f.dev, f.session, ops, 3, &r);
		CHECK(ret == 0 && r.done == 3 && r.failed_op == UINT32_MAX &&
		      r.reason == ACCMAP_REPLAY_OK && r.fault_as == UINT32_MAX &&
		      r.fault_addr == 0 && r.fault_status == 0 && r.elapsed_ns != GARBAGE_U64,
		      "READ run: %s, done %u, failed_op %#x, reason %u, fault %u %#llx %#x",
		      err_name(ret), r.done, r.failed_op, r.reason, r.fault_as,
		      (unsigned long long)r.fault_addr, r.fault_status);
		CHECK(r.ops == (uintptr_t)ops && r.nr_ops == 3 && r.session == f.session &&
		      r.flags == 0, "RUN changed its input fields");
	}
out:
	fix_close(&f);
}

static void test_destroy_errors(void)
{
	struct accmap_replay_destroy d;
	struct accmap_replay_run r;
	struct accmap_replay_op op = { .op = ACCMAP_REPLAY_OP_READ };
	struct fix f;
	int other;

	if (!fix_open(&f, ACCMAP_PGT_MALI_LPAE))
		goto out;
	d.session = f.session;
	d.pad = 1;
	CHECK(raw_ioctl(f.dev, ACCMAP_IOC_REPLAY_DESTROY, &d) == -EINVAL, "DESTROY pad 1");
	CHECK(destroy_raw(f.dev, f.session + 1000) == -ENOENT, "DESTROY of an unknown session");
	CHECK(destroy_raw(f.dev, 0) == -ENOENT, "DESTROY of session 0");

	/* Session ids belong to their client. */
	other = am_open();
	if (other >= 0) {
		CHECK(run_raw(other, f.session, &op, 1, &r) == -ENOENT,
		      "RUN of another client's session");
		CHECK(destroy_raw(other, f.session) == -ENOENT,
		      "DESTROY of another client's session");
		close(other);
	}

	CHECK(run_raw(f.dev, f.session, &op, 1, &r) == 0, "RUN before DESTROY");
	CHECK(destroy_raw(f.dev, f.session) == 0, "DESTROY");
	CHECK(run_raw(f.dev, f.session, &op, 1, &r) == -ENOENT, "RUN after DESTROY");
	CHECK(r.done == 0 && r.failed_op == UINT32_MAX && r.fault_as == UINT32_MAX,
	      "RUN of a destroyed session: done %u, failed_op %#x, fault_as %#x", r.done,
	      r.failed_op, r.fault_as);
	CHECK(destroy_raw(f.dev, f.session) == -ENOENT, "second DESTROY");

	/* Ids are handed out in turn: the destroyed one is not next. */
	{
		struct accmap_replay_setup s;
		struct accmap_replay_map m;

		map_init(&m, TEST_VA, page_size(), f.id, ACCMAP_REPLAY_MAP_READ);
		setup_init(&s, &m, 1, f.target, ACCMAP_PGT_MALI_LPAE);
		if (CHECK(setup_raw(f.dev, &s) == 0, "SETUP after DESTROY"))
			CHECK(s.session != f.session, "the destroyed session's id %u came back",
			      f.session);
	}
out:
	fix_close(&f);
}

/* ==== who may replay ==== */

static void test_nonroot_eperm(void)
{
	pid_t pid;
	int status;

	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		return;
	if (pid == 0) {
		struct accmap_replay_target_info info = { .index = 0 };
		struct accmap_replay_op op = { .op = ACCMAP_REPLAY_OP_READ };
		struct accmap_replay_setup s;
		struct accmap_replay_map m;
		struct accmap_replay_run r;
		char data[64] = "replay", back[64];
		uint32_t id;
		int dev;

		if (!CHECK(setgroups(0, NULL) == 0 && setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
			   setresuid(NOBODY, NOBODY, NOBODY) == 0, "dropping root: %s",
			   strerror(errno)))
			_exit(1);
		dev = am_open();
		if (dev < 0)
			_exit(1);
		CHECK(raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info) == -EPERM, "QUERY as nobody");
		if (CHECK(am_buffer(dev, page_size(), 0, &id, false) == 0, "buffer as nobody")) {
			CHECK(am_write(dev, id, 0, data, sizeof(data)) == 0 &&
			      am_read(dev, id, 0, back, sizeof(back)) == 0 &&
			      !memcmp(data, back, sizeof(data)), "WRITE and READ as nobody");
			map_init(&m, TEST_VA, page_size(), id, ACCMAP_REPLAY_MAP_READ);
			setup_init(&s, &m, 1, 0, ACCMAP_PGT_MALI_AARCH64_4K);
			CHECK(setup_raw(dev, &s) == -EPERM, "SETUP as nobody");
			CHECK(am_free(dev, id) == 0, "FREE as nobody");
		}
		CHECK(run_raw(dev, 1, &op, 1, &r) == -EPERM, "RUN as nobody");
		/* The outputs are written on EPERM too. */
		CHECK(r.done == 0 && r.failed_op == UINT32_MAX && r.fault_as == UINT32_MAX &&
		      r.fault_addr == 0 && r.fault_status == 0,
		      "RUN as nobody: done %u, failed_op %#x, fault_as %#x", r.done, r.failed_op,
		      r.fault_as);
		CHECK(destroy_raw(dev, 1) == -EPERM, "DESTROY as nobody");
		close(dev);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited with %#x", status);
}

/* ==== teardown ==== */

static void test_kill_mid_run(void)
{
	struct counts before, during;
	struct pollfd pfd;
	int pipefd[2], status = 0, dev = am_open();
	uint64_t t0, reap_ns = 0;
	bool in_ioctl = false;
	pid_t pid, got = 0;
	char byte = 0;

	if (dev < 0 || !read_counts(&before) || !CHECK(pipe(pipefd) == 0, "pipe"))
		goto out;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		/* 64 polls of 10 s each that never succeed: over ten minutes. */
		static struct accmap_replay_op ops[64];
		struct accmap_replay_run r;
		struct fix f;

		close(pipefd[0]);
		if (!fix_open(&f, ACCMAP_PGT_MALI_AARCH64_4K))
			_exit(1);
		for (size_t i = 0; i < TAP_ARRAY_SIZE(ops); i++) {
			ops[i].op = ACCMAP_REPLAY_OP_POLL;
			ops[i].offset = SIMDRV_GPU_ID;
			ops[i].mask = 1;
			ops[i].value = ~f.info.gpu_id & 1;
			ops[i].timeout_us = ACCMAP_REPLAY_TIMEOUT_MAX_US;
		}
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		run_raw(f.dev, f.session, ops, TAP_ARRAY_SIZE(ops), &r);
		CHECK(false, "the long run returned (reason %u) instead of being killed", r.reason);
		_exit(1);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	if (!CHECK(poll(&pfd, 1, 10000) == 1 && read(pipefd[0], &byte, 1) == 1 && byte == 'r',
		   "the child never set up its session")) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		goto out_pipe;
	}
	/* Wait until it sleeps in the ioctl, then a little longer. */
	for (int i = 0; i < 200 && !in_ioctl; i++) {
		in_ioctl = in_syscall(pid) == SYS_ioctl;
		if (!in_ioctl)
			usleep(10 * 1000);
	}
	if (!in_ioctl)
		tap_diag("could not see the child in ioctl(2) (/proc/%d/syscall)", (int)pid);
	usleep(200 * 1000);
	if (read_counts(&during))
		CHECK(during.sessions == before.sessions + 1 &&
		      during.table_pages > before.table_pages,
		      "during the run: %llu sessions, %llu table pages; before %llu, %llu",
		      during.sessions, during.table_pages, before.sessions, before.table_pages);
	CHECK(sim_sessions(dev) == (uint32_t)before.sessions + 1,
	      "QUERY counts %u sessions during the run", sim_sessions(dev));

	t0 = now_ns();
	CHECK(kill(pid, SIGKILL) == 0, "kill: %s", strerror(errno));
	while (now_ns() - t0 < 5000000000ULL) {
		got = waitpid(pid, &status, WNOHANG);
		if (got)
			break;
		usleep(5 * 1000);
	}
	reap_ns = now_ns() - t0;
	if (!got)
		waitpid(pid, &status, 0);
	CHECK(got == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "the child was not reaped as killed (status %#x)", status);
	CHECK(reap_ns < 2000000000ULL, "the killed child took %llu ms to die",
	      (unsigned long long)(reap_ns / 1000000));
	tap_diag("killed mid-run, reaped after %llu ms", (unsigned long long)(reap_ns / 1000000));
	check_counts_back(&before, "after the kill");
	CHECK(sim_sessions(dev) == (uint32_t)before.sessions,
	      "QUERY counts %u sessions after the kill, %llu before", sim_sessions(dev),
	      before.sessions);
out_pipe:
	close(pipefd[0]);
out:
	if (dev >= 0)
		close(dev);
}

static void test_close_destroys(void)
{
	struct counts before, during;
	struct accmap_replay_setup s;
	struct accmap_replay_map m;
	uint32_t target, id, pages = 0;
	struct accmap_replay_target_info info;
	int dev, watcher = am_open();

	if (watcher < 0 || !read_counts(&before))
		goto out;
	dev = am_open();
	if (dev < 0 || !find_sim(dev, &target, &info) ||
	    am_buffer(dev, 4 * page_size(), 0, &id, false) < 0)
		goto out_dev;
	for (uint32_t i = 0; i < 3; i++) {
		map_init(&m, TEST_VA << i, 4 * page_size(), id, ACCMAP_REPLAY_MAP_READ);
		setup_init(&s, &m, 1, target, formats[i % 2]);
		if (!CHECK(setup_raw(dev, &s) == 0, "SETUP %u", i))
			goto out_dev;
		pages += s.table_pages;
	}
	/* The sessions hold the buffer: freeing its id takes nothing away. */
	CHECK(am_free(dev, id) == 0, "FREE of the mapped buffer");
	if (read_counts(&during))
		CHECK(during.sessions == before.sessions + 3 &&
		      during.table_pages == before.table_pages + pages,
		      "with 3 sessions of %u table pages: debugfs %llu sessions, %llu table pages; before %llu, %llu",
		      pages, during.sessions, during.table_pages, before.sessions,
		      before.table_pages);
	CHECK(sim_sessions(watcher) == (uint32_t)before.sessions + 3,
	      "QUERY counts %u sessions with 3 open", sim_sessions(watcher));
out_dev:
	if (dev >= 0)
		close(dev);
	check_counts_back(&before, "after closing the device");
	CHECK(sim_sessions(watcher) == (uint32_t)before.sessions,
	      "QUERY counts %u sessions after the close", sim_sessions(watcher));
out:
	if (watcher >= 0)
		close(watcher);
}

/* ==== the recording reader (no device) ==== */

static struct accmap_recording *sample_recording(void)
{
	static uint8_t desc[4096], a[8192];
	const struct accmap_replay_op ops[] = {
		{ .op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = SIMDRV_AS(0) },
		{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = SIMDRV_JS(0) + SIMDRV_JS_COMMAND_NEXT,
		  .value = 1 },
		{ .op = ACCMAP_REPLAY_OP_WAIT_IRQ, .mask = 1, .timeout_us = 1000 },
	};
	struct accmap_recording *rec = NULL;
	int ret;

	fill_pattern(desc, sizeof(desc), 0, 1);
	fill_pattern(a, sizeof(a), 0, 2);
	ret = accmap_rec_create("sim", ACCMAP_PGT_MALI_LPAE, 1, 40, &rec);
	if (!ret)
		ret = accmap_rec_add_map(rec, 0x10000, 4096, 3, 0, desc);
	if (!ret)
		ret = accmap_rec_add_map(rec, 0x20000, 8192, 1, 2, a);
	if (!ret)
		ret = accmap_rec_add_map(rec, 0x40000, 4096 * 3, 7, 7, NULL);
	if (!ret)
		ret = accmap_rec_set_ops(rec, ops, TAP_ARRAY_SIZE(ops));
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "a", 0x20000, 8000, ACCMAP_REC_SYM_INPUT);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "out.put-1", 0x40010, 100, ACCMAP_REC_SYM_OUTPUT);
	if (!ret)
		ret = accmap_rec_set_note(rec, "sample\trecording\n");
	if (!CHECK(ret == 0, "building the sample recording: %s", err_name(ret))) {
		accmap_rec_free(rec);
		return NULL;
	}
	return rec;
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* File offset of the section of @type in an encoded recording, or 0. */
static uint32_t section_at(const uint8_t *buf, uint32_t type)
{
	uint32_t n = le32_at(buf + 28), table = le32_at(buf + 32);

	for (uint32_t i = 0; i < n; i++)
		if (le32_at(buf + table + i * ACCMAP_REC_SECTION_SIZE) == type)
			return le32_at(buf + table + i * ACCMAP_REC_SECTION_SIZE + 8);
	return 0;
}

/* Entry of the section table for @type. */
static uint32_t section_entry(const uint8_t *buf, uint32_t type)
{
	uint32_t n = le32_at(buf + 28), table = le32_at(buf + 32);

	for (uint32_t i = 0; i < n; i++)
		if (le32_at(buf + table + i * ACCMAP_REC_SECTION_SIZE) == type)
			return table + i * ACCMAP_REC_SECTION_SIZE;
	return 0;
}

static void test_recording_roundtrip(void)
{
	struct accmap_recording *rec = sample_recording(), *back = NULL;
	struct accmap_rec_error err;
	void *buf = NULL, *buf2 = NULL;
	size_t len, len2;

	if (!rec)
		return;
	if (!CHECK(accmap_rec_encode(rec, &buf, &len, &err) == 0, "encode: %s", err.msg) ||
	    !CHECK(accmap_rec_parse(buf, len, "sample", &back, &err) == 0, "parse: %s", err.msg))
		goto out;
	CHECK(!strcmp(back->target, "sim") && back->format == ACCMAP_PGT_MALI_LPAE &&
	      back->as == 1 && back->va_bits == 40 && back->nr_maps == 3 && back->nr_ops == 3 &&
	      back->nr_symbols == 2 && back->note && !strcmp(back->note, "sample\trecording\n"),
	      "header, counts or note changed on the way");
	for (uint32_t i = 0; i < 3; i++) {
		const struct accmap_rec_map *x = &rec->maps[i], *y = &back->maps[i];

		CHECK(x->gpu_va == y->gpu_va && x->length == y->length && x->flags == y->flags &&
		      x->attr == y->attr && !x->data == !y->data &&
		      (!x->data || !memcmp(x->data, y->data, x->length)),
		      "map %u changed on the way", i);
	}
	CHECK(!memcmp(rec->ops, back->ops, 3 * sizeof(*rec->ops)), "ops changed on the way");
	CHECK(!memcmp(rec->symbols, back->symbols, 2 * sizeof(*rec->symbols)),
	      "symbols changed on the way");
	CHECK(accmap_rec_find_symbol(back, "out.put-1") == &back->symbols[1] &&
	      !accmap_rec_find_symbol(back, "out") &&
	      accmap_rec_find_map(back, 0x40010, 100) == 2 &&
	      accmap_rec_find_map(back, 0x21000, 0x1001) == -ERANGE,
	      "symbol or map lookup");
	if (CHECK(accmap_rec_encode(back, &buf2, &len2, &err) == 0, "encode again: %s", err.msg))
		CHECK(len2 == len && !memcmp(buf, buf2, len), "encoding is not deterministic");
out:
	free(buf2);
	free(buf);
	accmap_rec_free(back);
	accmap_rec_free(rec);
}

/* Parsing @bad must fail with @want_err, blaming offset @want_off. */
static void check_reject(const uint8_t *bad, size_t len, const char *what, int want_err,
			 uint64_t want_off)
{
	struct accmap_recording *back;
	struct accmap_rec_error err;
	int ret;

	ret = accmap_rec_parse(bad, len, "bad", &back, &err);
	if (!ret)
		accmap_rec_free(back);
	CHECK(ret == -want_err && err.offset == want_off,
	      "%s: %s at offset %#llx (%s), expected %s at %#llx", what, err_name(ret),
	      (unsigned long long)err.offset, err.msg, err_name(want_err),
	      (unsigned long long)want_off);
}

/*
 * The reader refuses damaged files: each case changes a copy of a good
 * encoding, and names the errno and the file offset it must report.
 */
static void test_recording_rejects(void)
{
	struct accmap_recording *rec = sample_recording(), *back;
	struct accmap_rec_error err;
	uint32_t maps, ops, syms, data_entry, maps_entry;
	uint8_t *good = NULL, *bad = NULL;
	size_t len;
	int ret;

	if (!rec || !CHECK(accmap_rec_encode(rec, (void **)&good, &len, &err) == 0, "encode"))
		goto out;
	bad = malloc(len);
	if (!CHECK(bad, "malloc"))
		goto out;
	maps = section_at(good, ACCMAP_REC_SECT_MAPS);
	ops = section_at(good, ACCMAP_REC_SECT_OPS);
	syms = section_at(good, ACCMAP_REC_SECT_SYMBOLS);
	maps_entry = section_entry(good, ACCMAP_REC_SECT_MAPS);
	data_entry = section_entry(good, ACCMAP_REC_SECT_DATA);
	if (!CHECK(maps && ops && syms && maps_entry && data_entry, "sections not found"))
		goto out;

	/* Every truncation, and nothing: not a valid file. */
	for (size_t l = 0; l < len; l++) {
		ret = accmap_rec_parse(good, l, "cut", &back, &err);
		if (!CHECK(ret == -EBADMSG, "a file cut to %zu of %zu bytes: %s", l, len,
			   err_name(ret))) {
			if (!ret)
				accmap_rec_free(back);
			break;
		}
	}

#define CASE(what, want_err, want_off, change)	do {				\
		memcpy(bad, good, len);						\
		change;								\
		check_reject(bad, len, what, want_err, want_off);		\
	} while (0)

	CASE("bad magic", EBADMSG, 0, bad[0] = 'X');
	CASE("version 2", EOPNOTSUPP, 8, le32_put(bad + 8, 2));
	CASE("version 0", EBADMSG, 8, le32_put(bad + 8, 0));
	CASE("header size 64", EBADMSG, 12, le32_put(bad + 12, 64));
	CASE("file size too large", EBADMSG, len, le32_put(bad + 16, (uint32_t)len + 1));
	CASE("file size too small", EBADMSG, len - 8, le32_put(bad + 16, (uint32_t)len - 8));
	CASE("header flags", EBADMSG, 24, bad[24] = 1);
	CASE("no sections", EBADMSG, 28, le32_put(bad + 28, 0));
	CASE("2^32 - 1 sections", EBADMSG, 28, le32_put(bad + 28, UINT32_MAX));
	CASE("section table past the end", EBADMSG, 32, le32_put(bad + 32, (uint32_t)len));
	CASE("unknown format", EOPNOTSUPP, 44, le32_put(bad + 44, ACCMAP_PGT_COUNT));
	CASE("AS 16", EBADMSG, 48, le32_put(bad + 48, 16));
	CASE("va_bits 49", EBADMSG, 52, le32_put(bad + 52, 49));
	CASE("target not terminated", EBADMSG, 64, memset(bad + 64, 'x', 32));
	CASE("reserved header byte", EBADMSG, 96, bad[127] = 1);
	CASE("MAPS count 2^32 - 1", EBADMSG, maps_entry + 24,
	     le32_put(bad + maps_entry + 24, UINT32_MAX));
	CASE("MAPS past the end", EBADMSG, maps_entry + 8,
	     le32_put(bad + maps_entry + 8, (uint32_t)len));
	CASE("MAPS on the section table", EBADMSG, maps_entry + 8,
	     le32_put(bad + maps_entry + 8, ACCMAP_REC_HEADER_SIZE));
	CASE("unknown required section", EOPNOTSUPP, data_entry, le32_put(bad + data_entry, 99));
	CASE("map 0 gpu_va unaligned", EBADMSG, maps + 0, bad[maps] |= 1);
	CASE("map 1 length 0", EBADMSG, maps + 40 + 8, memset(bad + maps + 40 + 8, 0, 8));
	CASE("map 1 without READ", EBADMSG, maps + 40 + 16, bad[maps + 40 + 16] = 2);
	CASE("map 2 attr 8", EBADMSG, maps + 80 + 20, bad[maps + 80 + 20] = 8);
	CASE("map 2 unknown content", EBADMSG, maps + 80 + 24, bad[maps + 80 + 24] = 2);
	CASE("map 1 contents past DATA", EBADMSG, maps + 40 + 32,
	     le32_put(bad + maps + 40 + 32, 4096 * 2));
	CASE("map 1 contents on map 0's", EBADMSG, maps + 40 + 32,
	     le32_put(bad + maps + 40 + 32, 0));
	CASE("map 1 on map 0", EBADMSG, maps + 40, le32_put(bad + maps + 40, 0x10000));
	CASE("map 2 above va_bits", EBADMSG, maps + 80 + 8, bad[maps + 80 + 5] = 0x01);
	CASE("op 1 unknown", EBADMSG, ops + 32, le32_put(bad + ops + 32, 9));
	CASE("op 2 pad", EBADMSG, ops + 64 + 28, bad[ops + 64 + 28] = 1);
	CASE("op 2 timeout 0", EBADMSG, ops + 64 + 20, le32_put(bad + ops + 64 + 20, 0));
	CASE("op 1 CAPTURED without a CAPTURE READ", EBADMSG, ops + 32 + 4,
	     (le32_put(bad + ops + 32 + 4, ACCMAP_REPLAY_OP_CAPTURED),
	      le32_put(bad + ops + 32 + 12, 0)));
	CASE("symbol 0 name with a space", EBADMSG, syms, bad[syms] = ' ');
	CASE("symbol 1 named as symbol 0", EBADMSG, syms + 56,
	     memcpy(bad + syms + 56, bad + syms, 32));
	CASE("symbol 0 outside its map", EBADMSG, syms + 32,
	     le32_put(bad + syms + 32, 0x21000));
	CASE("symbol 0 flags", EBADMSG, syms + 48, bad[syms + 48] = 4);
	/* An unknown section that may be skipped is. */
	memcpy(bad, good, len);
	le32_put(bad + data_entry, 99);
	le32_put(bad + data_entry + 4, ACCMAP_REC_SECT_OPTIONAL);
	ret = accmap_rec_parse(bad, len, "bad", &back, &err);
	/* ... but then the maps' contents have no DATA section. */
	CHECK(ret == -EBADMSG, "contents without a DATA section: %s", err_name(ret));
	if (!ret)
		accmap_rec_free(back);
#undef CASE
out:
	free(bad);
	free(good);
	accmap_rec_free(rec);
}

static const struct tap_test tests[] = {
	{ "recording_roundtrip", test_recording_roundtrip },
	{ "recording_rejects", test_recording_rejects },
	{ "query_sim", test_query_sim },
	{ "setup_errors", test_setup_errors },
	{ "run_errors", test_run_errors },
	{ "destroy_errors", test_destroy_errors },
	{ "nonroot_eperm", test_nonroot_eperm },
	{ "matmul_aarch64", test_matmul_aarch64 },
	{ "matmul_lpae", test_matmul_lpae },
	{ "vadd_file", test_vadd_file },
	{ "player_batches", test_player_batches },
	{ "fault_unmapped_head", test_fault_unmapped_head },
	{ "fault_unmapped_operand", test_fault_unmapped_operand },
	{ "cpu_pages", test_cpu_pages },
	{ "poll_timeout", test_poll_timeout },
	{ "job_failed", test_job_failed },
	{ "sim_reg_halves", test_sim_reg_halves },
	{ "sim_power_regs", test_sim_power_regs },
	{ "sim_slot_regs", test_sim_slot_regs },
	{ "sim_failed_bit", test_sim_failed_bit },
	{ "sim_job_checks", test_sim_job_checks },
	{ "capture", test_capture },
	{ "kill_mid_run", test_kill_mid_run },
	{ "close_destroys", test_close_destroys },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

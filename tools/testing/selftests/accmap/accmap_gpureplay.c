// SPDX-License-Identifier: GPL-2.0
/*
 * accmap selftest: a real GPU recording replayed on the software Mali
 * model.  GPUReplay's recording of an MNIST inference on a Mali-G71
 * (gr_pgt, gr_mem_contents, gr_io_history, gr_sync_as) is imported with
 * accmapctl's importer (tools/accmap/gpureplay.c) and replayed on the
 * "sim" target three times in a row.
 *
 * The model walks Mali job chains without running their shaders: a real
 * job only gets DONE written into its descriptor, and the output range
 * is never written.  So the replay's output proves nothing, and these
 * tests check what the model can know instead:
 *  - every descriptor of every job chain (found by following the chains
 *    through the recorded memory, by the GPU addresses the recording
 *    gives) reads back DONE after each run, having been cleared before
 *    it: the model reached each one through the page tables the kernel
 *    built (it reads the header and writes the status through them), at
 *    the recorded address, since the test reads the status from the
 *    buffer the recording puts at that address;
 *  - every buffer of the recording (all a job can reference: the recorded
 *    tables map nothing else) is mapped in those tables at its recorded
 *    GPU address, whole, with its recorded permissions and memory
 *    attribute, as the model's MMU finds it (debugfs replay_leaves), and
 *    every descriptor lies in a buffer the model may read and write;
 *  - no MMU fault, every chain reported done, input written and output
 *    read by symbol.
 *
 * Two edited copies of the recording (made in memory by the fuzz tier's
 * gpureplay_edit.c, never written anywhere) are imported and replayed too:
 *  - stale_overlap: a region appended last over the last two pages of a
 *    live one, with physical addresses no recorded leaf has and bytes
 *    0xa5: the importer gives those pages to the live region (the bytes
 *    the player loads there are the live region's), and the replay runs
 *    every chain to done with every buffer mapped as recorded;
 *  - stale_chain: chain 0's head rewritten into a stale region of bytes
 *    0xff (job type 127, which the model refuses): the importer names
 *    chain 0 as not replayable, and the replay stops at once with
 *    JOB_FAILED (EIO), JS_STATUS DATA_INVALID_FAULT at that head, chain 0
 *    reported failed well within the WAIT_IRQ timeout, and no other chain
 *    run.
 *
 * The recording's directory: $ACCMAP_GPUREPLAY_DIR, else
 * /data/gpureplay-mnist (where tools/testing/vm/run.sh packs it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "gpureplay.h"
#include "gpureplay_edit.h"
#include "recording.h"
#include "simdrv.h"
#include "tap.h"

#define GR_DIR_DEFAULT		"/data/gpureplay-mnist"
#define GR_JOBS			23	/* job chains of the MNIST recording */
#define GR_ROUNDS		3

/* Mali job descriptors, as the recorded driver wrote them. */
#define JD_SIZE			32
#define JD_STATUS		0	/* u32 exception_status */
#define JD_TYPE			16	/* bit 0: 64-bit next; 7:1: job type */
#define JD_NEXT			24
#define JD_ALIGN		64
#define JD_STATUS_DONE		1
#define JD_TYPE_MIN		1	/* NULL */
#define JD_TYPE_MAX		9	/* FRAGMENT */
#define CHAIN_MAX		4096	/* descriptors a chain may have here */
#define DESC_MAX		(GR_JOBS * CHAIN_MAX)

/* The recording's target, or the one ACCMAP_REPLAY_TARGET names. */
static const struct accmap_player_options *player_options(void)
{
	static struct accmap_player_options opts;

	opts.target = simdrv_target();
	return &opts;
}

static const char *gr_dir(void)
{
	const char *d = getenv("ACCMAP_GPUREPLAY_DIR");

	return d && *d ? d : GR_DIR_DEFAULT;
}

static uint64_t get_le(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/* Imports the recording; NULL (with the reason reported) on failure. */
static struct accmap_recording *import(struct gpureplay_stats *st)
{
	struct accmap_recording *rec = NULL;
	struct gpureplay_input in;
	struct accmap_rec_error err;
	int ret;

	ret = gpureplay_load(gr_dir(), &in, &err);
	if (!CHECK(ret == 0, "gpureplay_load(%s): %s", gr_dir(), err.msg))
		return NULL;
	ret = gpureplay_import(&in, &rec, st, &err);
	gpureplay_unload(&in);
	if (!CHECK(ret == 0, "gpureplay_import: %s (%s)", err.msg, err_name(ret)))
		return NULL;
	return rec;
}

/* The head of every job chain the ops start, in order; returns the count. */
static unsigned int chain_heads(const struct accmap_recording *rec, uint64_t *heads,
				unsigned int max)
{
	struct accmap_rec_chain *c;
	uint32_t n, i;
	int ret;

	ret = accmap_rec_chains(rec, &c, &n);
	if (!CHECK(ret == 0, "accmap_rec_chains: %s", err_name(ret)))
		return 0;
	for (i = 0; i < n && i < max; i++)
		heads[i] = c[i].head;
	free(c);
	return n;
}

/*
 * Follows every chain through the recorded memory (by GPU VA, through the
 * player's buffers) and lists its descriptors in @jd.  Returns the count,
 * or 0 after reporting a chain that leaves the maps, is misaligned, has a
 * job type the hardware lacks or does not end.
 */
static unsigned int list_descriptors(struct accmap_player *player, const uint64_t *heads,
				     unsigned int nheads, uint64_t *jd)
{
	unsigned int n = 0, c, len, type;
	uint8_t hdr[JD_SIZE];
	uint64_t va;
	int ret;

	for (c = 0; c < nheads; c++) {
		for (va = heads[c], len = 0; va; len++) {
			if (!CHECK(len < CHAIN_MAX && n < DESC_MAX,
				   "chain %u: more than %u descriptors", c, CHAIN_MAX))
				return 0;
			if (!CHECK(va % JD_ALIGN == 0, "chain %u: descriptor %#llx misaligned", c,
				   (unsigned long long)va))
				return 0;
			ret = accmap_player_read(player, va, hdr, sizeof(hdr));
			if (!CHECK(ret == 0, "chain %u: descriptor %#llx: %s", c,
				   (unsigned long long)va, err_name(ret)))
				return 0;
			type = hdr[JD_TYPE] >> 1;
			if (!CHECK(type >= JD_TYPE_MIN && type <= JD_TYPE_MAX,
				   "chain %u: descriptor %#llx: job type %u", c,
				   (unsigned long long)va, type))
				return 0;
			jd[n++] = va;
			va = get_le(hdr + JD_NEXT, hdr[JD_TYPE] & 1 ? 8 : 4);
		}
	}
	return n;
}

static void test_import(void)
{
	struct accmap_recording *rec, *back = NULL;
	struct accmap_rec_error err;
	struct gpureplay_stats st;
	uint64_t heads[GR_JOBS + 1];
	size_t len = 0;
	void *buf = NULL;
	int ret;

	rec = import(&st);
	if (!rec)
		return;
	CHECK(!strcmp(rec->target, "sim") && rec->format == ACCMAP_PGT_MALI_AARCH64_4K &&
	      rec->as == 0 && rec->va_bits == 48,
	      "target %s, format %u, AS %u, %u-bit VA: expected sim, AArch64 4K, 0, 48",
	      rec->target, rec->format, rec->as, rec->va_bits);
	CHECK(st.regions == 26 && st.valid_regions == 14 && st.pages == 539,
	      "%u regions, %u with contents, %llu pages: expected 26, 14, 539", st.regions,
	      st.valid_regions, (unsigned long long)st.pages);
	CHECK(st.lines == 2977 && st.jobs == GR_JOBS && st.wait_irqs == GR_JOBS,
	      "%u accesses, %u job starts, %u WAIT_IRQ: expected 2977, %u, %u", st.lines,
	      st.jobs, st.wait_irqs, GR_JOBS, GR_JOBS);
	CHECK(st.leaves_unmapped == 0 && st.tables_missing == 0,
	      "the recorded tables map %llu pages outside the maps, miss %llu tables",
	      (unsigned long long)st.leaves_unmapped, (unsigned long long)st.tables_missing);
	CHECK(chain_heads(rec, heads, GR_JOBS + 1) == GR_JOBS, "not %u job chains", GR_JOBS);
	CHECK(accmap_rec_find_symbol(rec, "input") && accmap_rec_find_symbol(rec, "output"),
	      "no input or output symbol");

	/* What the importer makes reads back as the same recording. */
	ret = accmap_rec_encode(rec, &buf, &len, &err);
	if (CHECK(ret == 0, "accmap_rec_encode: %s", err.msg))
		ret = accmap_rec_parse(buf, len, "mnist", &back, &err);
	if (CHECK(ret == 0, "accmap_rec_parse: %s", err.msg))
		CHECK(back->nr_maps == rec->nr_maps && back->nr_ops == rec->nr_ops &&
		      !memcmp(back->ops, rec->ops, rec->nr_ops * sizeof(*rec->ops)),
		      "the recording does not read back the same");
	free(buf);
	accmap_rec_free(back);
	accmap_rec_free(rec);
}

/* "rwx" as debugfs replay_leaves prints ACCMAP_REPLAY_MAP_* @flags. */
static void perm_text(uint32_t flags, char *out)
{
	out[0] = flags & ACCMAP_REPLAY_MAP_READ ? 'r' : '-';
	out[1] = flags & ACCMAP_REPLAY_MAP_WRITE ? 'w' : '-';
	out[2] = flags & ACCMAP_REPLAY_MAP_EXEC ? 'x' : '-';
	out[3] = '\0';
}

/*
 * The session this process has open (the only one: callers hold one
 * player at a time), as the model's MMU walks its tables: each map of
 * @rec must be one run of pages at its recorded address and length with
 * its recorded permissions and attribute, and each of the @ndesc
 * descriptors at @jd must lie in a map the model may read and write.
 */
static void check_leaves(const struct accmap_recording *rec, const uint64_t *jd,
			 unsigned int ndesc, const char *what)
{
	unsigned int *runs = calloc(rec->nr_maps, sizeof(*runs)), bad = 0;
	char pid[16], want[4];
	struct dbg_table t;
	long session = -1;

	/*
	 * Only the model's MMU can be asked what it finds; a GPU elsewhere
	 * (the board's) showed it reached every descriptor by writing DONE.
	 */
	if (strcmp(simdrv_target(), SIMDRV_TARGET)) {
		tap_diag("%s: replay_leaves walks the model's tables only, not %s's", what,
			 simdrv_target());
		goto out;
	}
	if (!CHECK(runs, "out of memory") || !dbg_read("replay_leaves", &t))
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (size_t r = 0; r < t.nrows; r++) {
		const struct accmap_rec_map *m;
		unsigned long long i;

		if (strcmp(dbg_cell(&t, r, "pid"), pid))
			continue;
		if (session < 0)
			session = (long)dbg_num(&t, r, "session");
		i = dbg_num(&t, r, "map");
		if (!CHECK((long)dbg_num(&t, r, "session") == session && i < rec->nr_maps,
			   "%s: replay_leaves row %zu: session %s, map %llu of %u", what, r,
			   dbg_cell(&t, r, "session"), i, rec->nr_maps))
			break;
		m = &rec->maps[i];
		perm_text(m->flags, want);
		runs[i]++;
		if (!CHECK(strtoull(dbg_cell(&t, r, "va"), NULL, 16) == m->gpu_va &&
			   dbg_num(&t, r, "bytes") == m->length &&
			   !strcmp(dbg_cell(&t, r, "perm"), want) &&
			   strcmp(dbg_cell(&t, r, "attr"), "-") &&
			   dbg_num(&t, r, "attr") == m->attr,
			   "%s: map %llu (%#llx, %llu bytes, %s, attribute %u) walks as %s bytes at %s: %s, attribute %s",
			   what, i, (unsigned long long)m->gpu_va,
			   (unsigned long long)m->length, want, m->attr,
			   dbg_cell(&t, r, "bytes"), dbg_cell(&t, r, "va"),
			   dbg_cell(&t, r, "perm"), dbg_cell(&t, r, "attr")))
			bad++;
	}
	for (uint32_t i = 0; i < rec->nr_maps; i++)
		bad += !CHECK(runs[i] == 1, "%s: map %u walks as %u runs, expected one", what, i,
			      runs[i]);
	for (unsigned int d = 0; d < ndesc; d++) {
		int k = accmap_rec_find_map(rec, jd[d], JD_SIZE);
		uint32_t rw = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE;

		if (!CHECK(k >= 0 && (rec->maps[k].flags & rw) == rw,
			   "%s: descriptor %#llx lies in %s", what, (unsigned long long)jd[d],
			   k >= 0 ? "a map the model may not write" : "no map")) {
			bad++;
			break;
		}
	}
	if (!bad)
		tap_diag("%s: %u maps walked at recorded address and perms, %u descs in RW maps",
			 what, rec->nr_maps, ndesc);
	dbg_free(&t);
out:
	free(runs);
}

/* The player's report of the last run: every chain started and done. */
static void check_chains_done(struct accmap_player *player, unsigned int round)
{
	const struct accmap_player_chain *c = NULL;
	uint32_t n = 0, i, done = 0;

	c = accmap_player_chains(player, &n);
	for (i = 0; i < n; i++) {
		if (c[i].state == ACCMAP_PLAYER_CHAIN_DONE && c[i].ns)
			done++;
		else if (i - done < 3)
			tap_diag("round %u: chain %u: state %u, %llu ns", round, i, c[i].state,
				 (unsigned long long)c[i].ns);
	}
	CHECK(n == GR_JOBS && done == n, "round %u: %u of %u chains reported done, %u expected",
	      round, done, n, GR_JOBS);
}

static void test_replay_mnist(void)
{
	const struct accmap_rec_symbol *in_sym, *out_sym;
	const struct accmap_replay_op *op;
	uint8_t *input = NULL, *output = NULL;
	struct accmap_player *player = NULL;
	unsigned int nheads, ndesc = 0, round, i, done;
	uint64_t heads[GR_JOBS + 1], *jd = NULL;
	struct accmap_recording *rec;
	struct accmap_replay_run run;
	struct gpureplay_stats st;
	uint32_t failed_map, status;
	uint8_t zero[4] = { 0 }, word[4];
	int dev = -1, ret;

	rec = import(&st);
	if (!rec)
		return;
	in_sym = accmap_rec_find_symbol(rec, "input");
	out_sym = accmap_rec_find_symbol(rec, "output");
	nheads = chain_heads(rec, heads, GR_JOBS + 1);
	jd = calloc(DESC_MAX, sizeof(*jd));
	if (!CHECK(in_sym && out_sym && nheads == GR_JOBS && jd,
		   "symbols, %u job chains or memory missing", nheads))
		goto out;
	input = malloc(in_sym->length);
	output = malloc(out_sym->length);
	if (!CHECK(input && output, "out of memory"))
		goto out;
	for (i = 0; i < in_sym->length; i++)
		input[i] = (uint8_t)(i * 7 + 3);

	ret = accmap_open(&dev);
	if (!CHECK(ret == 0, "accmap_open: %s", err_name(ret)))
		goto out;
	ret = accmap_player_open(dev, rec, player_options(), &player, &failed_map);
	if (!CHECK(ret == 0, "accmap_player_open: %s (map %u)", err_name(ret), failed_map))
		goto out;
	ndesc = list_descriptors(player, heads, nheads, jd);
	if (!ndesc)
		goto out;
	tap_diag("%u job chains, %u descriptors, %u ops", nheads, ndesc, rec->nr_ops);

	for (round = 0; round < GR_ROUNDS; round++) {
		if (round) {
			ret = accmap_player_restore(player);
			if (!CHECK(ret == 0, "round %u: restore: %s", round, err_name(ret)))
				break;
		}
		/* The recording holds the statuses of the recorded run: clear them. */
		for (i = 0; i < ndesc; i++) {
			ret = accmap_player_write(player, jd[i] + JD_STATUS, zero, sizeof(zero));
			if (!CHECK(ret == 0, "round %u: clearing descriptor %#llx: %s", round,
				   (unsigned long long)jd[i], err_name(ret)))
				goto out;
		}
		ret = accmap_player_write_symbol(player, "input", input, in_sym->length);
		if (!CHECK(ret == 0, "round %u: writing input: %s", round, err_name(ret)))
			break;

		ret = accmap_player_run(player, NULL, NULL, &run);
		if (!CHECK(ret == 0 && run.reason == ACCMAP_REPLAY_OK && run.done == rec->nr_ops,
			   "round %u: run %s, reason %u, done %u of %u, failed_op %u, value %#x",
			   round, err_name(ret), run.reason, run.done, rec->nr_ops,
			   run.failed_op, run.value)) {
			if (run.failed_op < rec->nr_ops) {
				op = &rec->ops[run.failed_op];
				tap_diag("failed op: op %u offset %#x value %#x mask %#x",
					 op->op, op->offset, op->value, op->mask);
			}
			break;
		}
		CHECK(run.fault_as == UINT32_MAX && !run.fault_status,
		      "round %u: MMU fault in AS %u at %#llx, status %#x", round, run.fault_as,
		      (unsigned long long)run.fault_addr, run.fault_status);

		for (i = 0, done = 0; i < ndesc; i++) {
			ret = accmap_player_read(player, jd[i] + JD_STATUS, word, sizeof(word));
			status = ret ? UINT32_MAX : (uint32_t)get_le(word, 4);
			if (status == JD_STATUS_DONE)
				done++;
			else if (i - done < 3)	/* the first few */
				tap_diag("round %u: descriptor %#llx: status %#x", round,
					 (unsigned long long)jd[i], status);
		}
		CHECK(done == ndesc, "round %u: %u of %u descriptors DONE", round, done, ndesc);
		check_chains_done(player, round);

		/* Read by symbol; its bytes are the recording's (no shader ran). */
		ret = accmap_player_read_symbol(player, "output", output, out_sym->length);
		if (!CHECK(ret == 0, "round %u: reading output: %s", round, err_name(ret)))
			break;
		if (!round)
			check_leaves(rec, jd, ndesc, "replay_mnist");
		tap_diag("round %u: %u ops in %llu us, %u descriptors DONE, no fault", round,
			 run.done, (unsigned long long)(run.elapsed_ns / 1000), done);
	}
out:
	accmap_player_close(player);
	if (dev >= 0)
		close(dev);
	free(jd);
	free(input);
	free(output);
	accmap_rec_free(rec);
}

/* Imports an edited copy; NULL (with the reason reported) on failure. */
static struct accmap_recording *import_edit(const struct gre *e, struct gpureplay_stats *st,
					    struct gpureplay_report *rep)
{
	struct gpureplay_input in = gre_input(e);
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	int ret;

	ret = gpureplay_import_report(&in, &rec, st, rep, &err);
	if (!CHECK(ret == 0, "gpureplay_import_report: %s (%s)", err.msg, err_name(ret)))
		return NULL;
	return rec;
}

/* The unedited recording, loaded into @e; false (reported) on failure. */
static bool load_copy(struct gre *e)
{
	struct gpureplay_input in;
	struct accmap_rec_error err;
	int ret;

	memset(e, 0, sizeof(*e));
	ret = gpureplay_load(gr_dir(), &in, &err);
	if (!CHECK(ret == 0, "gpureplay_load(%s): %s", gr_dir(), err.msg))
		return false;
	ret = gre_copy(e, &in);
	gpureplay_unload(&in);
	return CHECK(ret == 0, "gre_copy: %s", err_name(ret));
}

/*
 * One replay of @rec with MNIST's test input: the output symbol into
 * @output (its length), the run into @run; the player stays open in
 * *@player for the caller to look at (close it).  Returns the run's errno.
 */
static int replay_input(int dev, const struct accmap_recording *rec, uint8_t *output,
			struct accmap_replay_run *run, struct accmap_player **player)
{
	const struct accmap_rec_symbol *in_sym = accmap_rec_find_symbol(rec, "input");
	const struct accmap_rec_symbol *out_sym = accmap_rec_find_symbol(rec, "output");
	uint32_t failed_map;
	uint8_t *input;
	size_t i;
	int ret;

	*player = NULL;
	if (!CHECK(in_sym && out_sym, "no input or output symbol"))
		return -ENOENT;
	input = malloc(in_sym->length);
	if (!CHECK(input, "out of memory"))
		return -ENOMEM;
	for (i = 0; i < in_sym->length; i++)
		input[i] = (uint8_t)(i * 7 + 3);
	ret = accmap_player_open(dev, rec, player_options(), player, &failed_map);
	if (CHECK(ret == 0, "accmap_player_open: %s (map %u)", err_name(ret), failed_map))
		ret = accmap_player_write_symbol(*player, "input", input, in_sym->length);
	free(input);
	if (ret)
		return ret;
	ret = accmap_player_run(*player, NULL, NULL, run);
	if (!ret)
		ret = accmap_player_read_symbol(*player, "output", output, out_sym->length);
	return ret;
}

static void test_stale_overlap(void)
{
	struct accmap_recording *rec = NULL, *ref = NULL;
	struct accmap_player *player = NULL, *ref_player = NULL;
	uint8_t *output = NULL, *expect = NULL;
	const struct accmap_rec_symbol *out_sym;
	struct gpureplay_report rep = { 0 };
	struct accmap_replay_run run;
	struct gpureplay_stats st;
	struct gre orig, e = { 0 };
	struct gre_region live;
	uint64_t start, va, pa;
	int dev = -1, ret;
	size_t data;
	uint64_t i;

	if (!load_copy(&orig))
		return;
	ret = gre_stale_overlap(&orig, &e, &live, &start);
	if (!CHECK(ret == 0, "gre_stale_overlap: %s", err_name(ret)))
		goto out;
	ref = import_edit(&orig, &st, NULL);
	rec = import_edit(&e, &st, &rep);
	if (!rec || !ref)
		goto out;
	CHECK(st.stale_regions == 1 && rep.nr_stale == 1 && rep.stale[0].start == start &&
	      st.overlap_pages == 2 && st.chains == GR_JOBS && !st.chains_bad,
	      "import: %u stale regions (first at %#llx, expected %#llx), %llu overlap pages, %u of %u chains bad",
	      st.stale_regions, rep.nr_stale ? (unsigned long long)rep.stale[0].start : 0ULL,
	      (unsigned long long)start, (unsigned long long)st.overlap_pages, st.chains_bad,
	      st.chains);
	out_sym = accmap_rec_find_symbol(rec, "output");
	if (!CHECK(out_sym, "no output symbol"))
		goto out;
	output = malloc(out_sym->length);
	expect = malloc(out_sym->length);
	if (!CHECK(output && expect, "out of memory"))
		goto out;
	ret = accmap_open(&dev);
	if (!CHECK(ret == 0, "accmap_open: %s", err_name(ret)))
		goto out;

	ret = replay_input(dev, ref, expect, &run, &ref_player);
	if (!CHECK(ret == 0, "the unedited replay: %s, reason %u at op %u", err_name(ret),
		   run.reason, run.failed_op))
		goto out;
	ret = replay_input(dev, rec, output, &run, &player);
	if (!CHECK(ret == 0, "the edited replay: %s, reason %u at op %u", err_name(ret),
		   run.reason, run.failed_op))
		goto out;
	check_chains_done(player, 0);
	/* Only this player open now: its tables are the edited recording's. */
	accmap_player_close(ref_player);
	ref_player = NULL;
	check_leaves(rec, NULL, 0, "stale_overlap");

	/* The player loaded the live region's bytes there, not 0xa5. */
	for (i = live.pages - 2; i < live.pages; i++) {
		const struct accmap_rec_map *m;
		int k;

		gre_page(&e, &live, i, &va, &pa, &data);
		k = accmap_rec_find_map(rec, va, 4096);
		m = k >= 0 ? &rec->maps[k] : NULL;
		CHECK(m && m->data &&
		      !memcmp((const uint8_t *)m->data + (va - m->gpu_va), e.mem.p + data, 4096),
		      "page %#llx: no map with contents, or not the live region's bytes",
		      (unsigned long long)va);
	}
	tap_diag("stale region %#llx-%#llx over live %#llx-%#llx: live pages kept, %u chains done",
		 (unsigned long long)start, (unsigned long long)(start + 4 * 4096),
		 (unsigned long long)live.start, (unsigned long long)live.end, GR_JOBS);
out:
	accmap_player_close(player);
	accmap_player_close(ref_player);
	if (dev >= 0)
		close(dev);
	free(output);
	free(expect);
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
	accmap_rec_free(ref);
	gre_free(&e);
	gre_free(&orig);
}

static void test_stale_chain(void)
{
	const struct accmap_player_chain *c = NULL;
	const struct accmap_rec_symbol *out_sym;
	struct gpureplay_report rep = { 0 };
	struct accmap_player *player = NULL;
	struct accmap_recording *rec = NULL;
	struct accmap_replay_run run;
	struct gpureplay_stats st;
	struct gre orig, e = { 0 };
	uint8_t *output = NULL;
	uint32_t n = 0, i, not_run = 0;
	int dev = -1, ret;
	uint64_t va = 0;

	if (!load_copy(&orig))
		return;
	ret = gre_stale_chain0(&orig, &e, 0xff, &va);
	if (!CHECK(ret == 0, "gre_stale_chain0: %s", err_name(ret)))
		goto out;
	rec = import_edit(&e, &st, &rep);
	if (!rec)
		goto out;
	if (!CHECK(st.chains == GR_JOBS && st.chains_bad == 1 && rep.nr_bad_chains == 1 &&
		   rep.bad_chains[0].chain == 0 && rep.bad_chains[0].va == va + 0x40,
		   "import: %u of %u chains bad (first: chain %u at %#llx), expected chain 0 at %#llx",
		   st.chains_bad, st.chains, rep.nr_bad_chains ? rep.bad_chains[0].chain : 0,
		   rep.nr_bad_chains ? (unsigned long long)rep.bad_chains[0].va : 0ULL,
		   (unsigned long long)(va + 0x40)))
		goto out;
	out_sym = accmap_rec_find_symbol(rec, "output");
	output = out_sym ? malloc(out_sym->length) : NULL;
	if (!CHECK(output, "no output symbol, or out of memory"))
		goto out;
	ret = accmap_open(&dev);
	if (!CHECK(ret == 0, "accmap_open: %s", err_name(ret)))
		goto out;

	ret = replay_input(dev, rec, output, &run, &player);
	CHECK(ret == -EIO && run.reason == ACCMAP_REPLAY_JOB_FAILED && run.fault_as == 1 &&
	      run.fault_status == 0x58 && run.fault_addr == va + 0x40,
	      "run: %s, reason %u, slot %u, JS_STATUS %#x at %#llx: expected EIO, JOB_FAILED, slot 1, 0x58 at %#llx",
	      err_name(ret), run.reason, run.fault_as, run.fault_status,
	      (unsigned long long)run.fault_addr, (unsigned long long)(va + 0x40));
	/* The WAIT_IRQ's timeout is GPUREPLAY_TIMEOUT_US: far from it. */
	CHECK(run.elapsed_ns < GPUREPLAY_TIMEOUT_US * 1000ULL / 4,
	      "the run took %llu us: the failure waited for the %u us timeout",
	      (unsigned long long)(run.elapsed_ns / 1000), GPUREPLAY_TIMEOUT_US);
	if (player)
		c = accmap_player_chains(player, &n);
	if (!CHECK(c && n == GR_JOBS, "%u chains reported, expected %u", n, GR_JOBS))
		goto out;
	for (i = 1; i < n; i++)
		not_run += c[i].state == ACCMAP_PLAYER_CHAIN_NOT_RUN;
	CHECK(c[0].state == ACCMAP_PLAYER_CHAIN_FAILED && c[0].status == 0x58 &&
	      c[0].descriptor == va + 0x40 && c[0].ns < GPUREPLAY_TIMEOUT_US * 1000ULL / 4 &&
	      not_run == n - 1,
	      "chain 0: state %u, JS_STATUS %#x at %#llx, %llu ns; %u of %u others not run",
	      c[0].state, c[0].status, (unsigned long long)c[0].descriptor,
	      (unsigned long long)c[0].ns, not_run, n - 1);
	tap_diag("chain 0 failed in %llu us (timeout %u us), JS_STATUS %#x at %#llx",
		 (unsigned long long)(c[0].ns / 1000), GPUREPLAY_TIMEOUT_US, c[0].status,
		 (unsigned long long)c[0].descriptor);
out:
	accmap_player_close(player);
	if (dev >= 0)
		close(dev);
	free(output);
	gpureplay_report_free(&rep);
	accmap_rec_free(rec);
	gre_free(&e);
	gre_free(&orig);
}

static const struct tap_test tests[] = {
	{ "import", test_import },
	{ "replay_mnist", test_replay_mnist },
	{ "stale_overlap", test_stale_overlap },
	{ "stale_chain", test_stale_chain },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

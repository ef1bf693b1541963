// SPDX-License-Identifier: GPL-2.0
/*
 * accmap selftest: a real GPU recording replayed on the software Mali
 * model.  GPUReplay's recording of an MNIST inference on a Mali-G71
 * (gr_pgt, gr_mem_contents, gr_io_history, gr_sync_as) is imported with
 * accmapctl's importer (tools/accmap/gpureplay.c) and replayed on the
 * "sim" target three times in a row: every job chain must run through the
 * page tables the kernel rebuilt, every descriptor of every chain must be
 * reached (the model writes DONE into its exception_status, which the test
 * clears before each run and reads back after), no MMU fault may happen,
 * and the input and output ranges are written and read by symbol.
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
#include "gpureplay.h"
#include "recording.h"
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

static const char *gr_dir(void)
{
	const char *d = getenv("ACCMAP_GPUREPLAY_DIR");

	return d && *d ? d : GR_DIR_DEFAULT;
}

static const char *err_name(int err)
{
	return err ? strerror(err < 0 ? -err : err) : "success";
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
	uint8_t *input = NULL, *output = NULL, *first = NULL;
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
	first = malloc(out_sym->length);
	if (!CHECK(input && output && first, "out of memory"))
		goto out;
	for (i = 0; i < in_sym->length; i++)
		input[i] = (uint8_t)(i * 7 + 3);

	ret = accmap_open(&dev);
	if (!CHECK(ret == 0, "accmap_open: %s", err_name(ret)))
		goto out;
	ret = accmap_player_open(dev, rec, NULL, &player, &failed_map);
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

		ret = accmap_player_read_symbol(player, "output", output, out_sym->length);
		if (!CHECK(ret == 0, "round %u: reading output: %s", round, err_name(ret)))
			break;
		if (!round)
			memcpy(first, output, out_sym->length);
		else
			CHECK(!memcmp(first, output, out_sym->length),
			      "round %u: the output differs from round 0's", round);
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
	free(first);
	accmap_rec_free(rec);
}

static const struct tap_test tests[] = {
	{ "import", test_import },
	{ "replay_mnist", test_replay_mnist },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

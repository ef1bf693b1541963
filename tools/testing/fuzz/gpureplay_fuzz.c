// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness of the GPUReplay importer (tools/accmap/gpureplay.c).
 *
 * One input holds the four files: a 12-byte header of three little-endian
 * u32 lengths (gr_pgt, gr_mem_contents, gr_io_history), then those files'
 * bytes in that order, then gr_sync_as (the rest).  Lengths larger than
 * what is left are cut to it, so every input means something.
 *
 * Whatever the input, the import must not crash, read outside the
 * buffers or leak; a recording it accepts must encode and read back, as
 * accmapctl writes it to a file; and its report (bad chains, stale
 * regions) must agree with its counts.  The seeds in corpus/gpureplay
 * include overlapping and stale regions and broken chains (valid-*), so
 * that mutations start from inputs that reach those paths.  tools/testing/fuzz/run.sh builds and
 * runs it; gpureplay_test.c runs the same function over the corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpureplay.h"
#include "gpureplay_fuzz.h"

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

void gpureplay_fuzz_split(const uint8_t *data, size_t size,
			  struct gpureplay_input *in)
{
	size_t len[3], off = GPUREPLAY_FUZZ_HDR, i;
	const uint8_t *part[3];

	memset(in, 0, sizeof(*in));
	if (size < GPUREPLAY_FUZZ_HDR)
		return;
	for (i = 0; i < 3; i++) {
		len[i] = get32(data + 4 * i);
		if (len[i] > size - off)
			len[i] = size - off;
		part[i] = data + off;
		off += len[i];
	}
	in->pgt = part[0];
	in->pgt_len = len[0];
	in->mem = part[1];
	in->mem_len = len[1];
	in->io = part[2];
	in->io_len = len[2];
	in->sync = data + off;
	in->sync_len = size - off;
}

int gpureplay_fuzz_one(const uint8_t *data, size_t size,
		       struct accmap_rec_error *err)
{
	struct accmap_recording *rec = NULL, *back = NULL;
	struct gpureplay_report rep;
	struct accmap_rec_error perr;
	struct gpureplay_stats st;
	struct gpureplay_input in;
	size_t len = 0;
	void *buf = NULL;
	char line[256];
	uint32_t i;
	int ret;

	gpureplay_fuzz_split(data, size, &in);
	ret = gpureplay_import_report(&in, &rec, &st, &rep, err);
	if (ret)
		return ret;
	/* The report agrees with the counts, and every line can be said. */
	if (rep.nr_bad_chains != st.chains_bad || st.chains_bad > st.chains ||
	    st.chains != st.jobs || rep.nr_stale != st.stale_regions ||
	    st.overlap_unmapped > st.overlap_pages)
		abort();
	for (i = 0; i < rep.nr_bad_chains; i++)
		if (gpureplay_chain_describe(&rep.bad_chains[i], line, sizeof(line)) <= 0 ||
		    rep.bad_chains[i].chain >= st.chains ||
		    (i && rep.bad_chains[i].chain <= rep.bad_chains[i - 1].chain))
			abort();
	for (i = 0; i < rep.nr_stale; i++)
		if (rep.stale[i].kept > rep.stale[i].pages || !rep.stale[i].pages)
			abort();
	gpureplay_report_free(&rep);
	/* An accepted recording always reads back. */
	if (accmap_rec_encode(rec, &buf, &len, &perr) ||
	    accmap_rec_parse(buf, len, "fuzz", &back, &perr))
		abort();
	if (back->nr_maps != rec->nr_maps || back->nr_ops != rec->nr_ops)
		abort();
	accmap_rec_free(back);
	free(buf);
	accmap_rec_free(rec);
	return 0;
}

/*
 * libFuzzer's entry point; run.sh gives its name, which kernel style would
 * not spell, as -DGPUREPLAY_FUZZ_ENTRY=...
 */
#ifdef GPUREPLAY_FUZZ_ENTRY
int GPUREPLAY_FUZZ_ENTRY(const uint8_t *data, size_t size);

int GPUREPLAY_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct accmap_rec_error err;

	gpureplay_fuzz_one(data, size, &err);
	return 0;
}
#endif

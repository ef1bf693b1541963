/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Importer of GPUReplay recordings (github.com/bakhi/GPUReplay): turns the
 * four files its recorder writes on a Mali job-manager GPU (gr_pgt,
 * gr_mem_contents, gr_io_history, gr_sync_as) into an accmap recording
 * (libaccmap's recording.h) that replays on the software Mali model.
 *
 * The importer works on the files' bytes in memory and trusts none of
 * them: every count is bounded before use, every offset checked against
 * the buffer, and a refused input gets a message naming the file and the
 * byte offset (or, for the text file gr_io_history, the line) at fault.
 * Documentation/userspace-api/accmap-gpureplay.rst describes what is kept
 * and what is rebuilt.
 */
#ifndef ACCMAP_GPUREPLAY_H
#define ACCMAP_GPUREPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "recording.h"

/* The file names in a GPUReplay recording directory. */
#define GPUREPLAY_PGT		"gr_pgt"
#define GPUREPLAY_MEM		"gr_mem_contents"
#define GPUREPLAY_IO		"gr_io_history"
#define GPUREPLAY_SYNC		"gr_sync_as"

/* Limits of the importer. */
#define GPUREPLAY_REGIONS_MAX	4096		/* regions in gr_mem_contents */
#define GPUREPLAY_MAPPED_MAX	0x400000000ULL	/* bytes over all regions: 16 GiB */
#define GPUREPLAY_PGT_PAGES_MAX	65536		/* table pages in gr_pgt */
#define GPUREPLAY_SYNC_MAX	4096		/* ranges in gr_sync_as */
#define GPUREPLAY_LINE_MAX	128		/* bytes in a gr_io_history line */
#define GPUREPLAY_LINES_MAX	ACCMAP_REPLAY_OPS_MAX
#define GPUREPLAY_MEM_FILE_MAX	0x40000000ULL	/* gpureplay_load(): gr_mem_contents, 1 GiB */
#define GPUREPLAY_FILE_MAX	0x4000000ULL	/* gpureplay_load(): the others, 64 MiB */

/* What the imported recording asks of the replay target. */
#define GPUREPLAY_WINDOW_SIZE	0x4000		/* Mali register window */
#define GPUREPLAY_TIMEOUT_US	1000000U	/* every POLL and WAIT_IRQ */
#define GPUREPLAY_VA_BITS	48
#define GPUREPLAY_TARGET	"sim"

/**
 * struct gpureplay_input - the four files of a GPUReplay recording
 * @pgt:      gr_pgt's bytes
 * @pgt_len:  bytes in @pgt
 * @mem:      gr_mem_contents's bytes
 * @mem_len:  bytes in @mem
 * @io:       gr_io_history's bytes
 * @io_len:   bytes in @io
 * @sync:     gr_sync_as's bytes
 * @sync_len: bytes in @sync
 */
struct gpureplay_input {
	const void *pgt;
	size_t pgt_len;
	const void *mem;
	size_t mem_len;
	const void *io;
	size_t io_len;
	const void *sync;
	size_t sync_len;
};

/**
 * struct gpureplay_stats - what an import found and made
 * @regions:         regions in gr_mem_contents
 * @valid_regions:   of them, regions with contents
 * @pages:           pages of contents
 * @zero_pages:      pages of regions without contents, backed by zeros
 * @maps:            maps of the recording
 * @lines:           register accesses in gr_io_history
 * @reads:           of them, reads
 * @writes:          of them, writes
 * @ops:             operations of the recording
 * @polls:           POLL operations
 * @wait_irqs:       WAIT_IRQ operations
 * @write_roots:     WRITE_ROOT operations
 * @jobs:            job chains started (COMMAND_NEXT START writes)
 * @collapsed:       reads folded into the operation before them
 * @dropped:         reads of TRANSTAB left out
 * @flush_ids:       FLUSH_ID_NEXT writes whose recorded value differs from
 *                   the LATEST_FLUSH read before them
 * @captures:        CAPTURE READs made (LATEST_FLUSH reads)
 * @captured:        CAPTURED WRITEs made (FLUSH_ID_NEXT writes after a
 *                   LATEST_FLUSH read)
 * @failed_waits:    WAIT_IRQs that also wait for a slot's FAILED bit (the
 *                   recorded JOB_IRQ_STATUS showed the failure)
 * @roots_other:     TRANSTAB writes of a non-zero value other than gr_pgt's
 *                   TRANSTAB
 * @roots_dropped:   TRANSTAB writes of a teardown (LO 0 and its HI) left
 *                   out: they install no table
 * @overlap_pages:   pages that more than one region holds
 * @overlap_unmapped: of them, pages with no valid recorded leaf (the latest
 *                   region keeps them)
 * @stale_regions:   regions none of whose pages is live in gr_pgt
 * @maps_no_leaf:    maps with no valid recorded leaf in their range
 * @chains:          job chains walked (one per COMMAND_NEXT START write)
 * @chains_bad:      of them, not replayable
 * @pgt_pages:       table pages in gr_pgt
 * @pgt_leaves:      pages and blocks the recorded tables map
 * @leaves_unmapped: of them, outside every map of the recording
 * @leaves_stale:    of them, with permissions or memory attribute other
 *                   than the region flags give (the rebuilt tables use
 *                   the region flags)
 * @tables_missing:  table entries pointing to a page gr_pgt lacks
 * @recorded_ns:     time the recorded accesses took (the delays left out)
 */
struct gpureplay_stats {
	uint32_t regions;
	uint32_t valid_regions;
	uint64_t pages;
	uint64_t zero_pages;
	uint32_t maps;
	uint32_t lines;
	uint32_t reads;
	uint32_t writes;
	uint32_t ops;
	uint32_t polls;
	uint32_t wait_irqs;
	uint32_t write_roots;
	uint32_t jobs;
	uint32_t collapsed;
	uint32_t dropped;
	uint32_t flush_ids;
	uint32_t captures;
	uint32_t captured;
	uint32_t failed_waits;
	uint32_t roots_other;
	uint32_t roots_dropped;
	uint64_t overlap_pages;
	uint64_t overlap_unmapped;
	uint32_t stale_regions;
	uint32_t maps_no_leaf;
	uint32_t chains;
	uint32_t chains_bad;
	uint32_t pgt_pages;
	uint64_t pgt_leaves;
	uint64_t leaves_unmapped;
	uint64_t leaves_stale;
	uint64_t tables_missing;
	uint64_t recorded_ns;
};

/* Why a job chain is not replayable (struct gpureplay_bad_chain.why). */
#define GPUREPLAY_CHAIN_UNALIGNED	1	/* not at a multiple of ACCMAP_SIM_JD_ALIGN */
#define GPUREPLAY_CHAIN_UNMAPPED	2	/* header not inside one map */
#define GPUREPLAY_CHAIN_STALE		3	/* in a stale region */
#define GPUREPLAY_CHAIN_ZERO_FILLED	4	/* in a map without recorded contents */
#define GPUREPLAY_CHAIN_TYPE		5	/* job type the model does not take */
#define GPUREPLAY_CHAIN_LOOP		6	/* a descriptor comes back */
#define GPUREPLAY_CHAIN_TOO_LONG	7	/* more than ACCMAP_SIM_CHAIN_MAX */

/**
 * struct gpureplay_bad_chain - a job chain that will not replay
 * @chain: its number, from 0 in the order of the COMMAND_NEXT START writes
 * @slot:  its job slot
 * @why:   GPUREPLAY_CHAIN_*
 * @type:  GPUREPLAY_CHAIN_TYPE: the job type found
 * @head:  its first descriptor (JS_HEAD_NEXT as written before the start)
 * @va:    the descriptor at fault
 * @start: GPUREPLAY_CHAIN_STALE, _ZERO_FILLED: the region or map holding
 *         @va, first byte
 * @end:   and the byte after it
 */
struct gpureplay_bad_chain {
	uint32_t chain;
	uint32_t slot;
	uint32_t why;
	uint32_t type;
	uint64_t head;
	uint64_t va;
	uint64_t start;
	uint64_t end;
};

/**
 * struct gpureplay_stale_region - a region freed before the dump
 * @start:   first GPU VA
 * @end:     GPU VA after the last byte
 * @pages:   its pages, recorded or zero-filled
 * @kept:    of them, still mapped (no live region holds them)
 * @off:     offset of its header in gr_mem_contents
 * @symbols: ACCMAP_REC_SYM_INPUT / _OUTPUT if that gr_sync_as range
 *           overlaps it
 */
struct gpureplay_stale_region {
	uint64_t start;
	uint64_t end;
	uint64_t pages;
	uint64_t kept;
	uint64_t off;
	uint32_t symbols;
};

/**
 * struct gpureplay_report - details of an import, beyond the counts
 * @bad_chains:    the chains that will not replay, in chain order
 * @nr_bad_chains: entries in @bad_chains (stats.chains_bad)
 * @stale:         the stale regions, in file order
 * @nr_stale:      entries in @stale (stats.stale_regions)
 *
 * Filled by gpureplay_import_report(); free with gpureplay_report_free().
 * The recording is "replayable" when @nr_bad_chains is 0.
 */
struct gpureplay_report {
	struct gpureplay_bad_chain *bad_chains;
	uint32_t nr_bad_chains;
	struct gpureplay_stale_region *stale;
	uint32_t nr_stale;
};

/**
 * gpureplay_import() - make an accmap recording from a GPUReplay one
 * @in: the four files' bytes
 * @rec: set to the new recording on success; free it with
 *       accmap_rec_free()
 * @stats: if not NULL, filled with what was found and made
 * @err: if not NULL, says what is wrong on failure: @err->msg is
 *       "FILE: offset N: what" or "gr_io_history: line N: what",
 *       @err->offset the byte offset in that file
 *
 * Safe on any input: nothing outside the buffers is read, and what is
 * allocated is bounded by the buffers' sizes and the GPUREPLAY_*_MAX
 * limits.  The recording passes accmap_rec_check().
 *
 * Return: 0, -EINVAL for a NULL argument, -EBADMSG for a malformed,
 * truncated or unsupported input, -E2BIG past a limit, -ENOMEM.
 */
int gpureplay_import(const struct gpureplay_input *in,
		     struct accmap_recording **rec,
		     struct gpureplay_stats *stats,
		     struct accmap_rec_error *err);

/**
 * gpureplay_import_report() - gpureplay_import(), with the details
 * @in: as for gpureplay_import()
 * @rec: as for gpureplay_import()
 * @stats: as for gpureplay_import()
 * @report: if not NULL, filled on success (bad chains, stale regions);
 *          zeroed on failure
 * @err: as for gpureplay_import()
 *
 * Bad chains do not fail the import: the recording is still made.
 *
 * Return: as gpureplay_import().
 */
int gpureplay_import_report(const struct gpureplay_input *in,
			    struct accmap_recording **rec,
			    struct gpureplay_stats *stats,
			    struct gpureplay_report *report,
			    struct accmap_rec_error *err);

/**
 * gpureplay_report_free() - free what gpureplay_import_report() filled
 * @report: the report; its fields are cleared
 */
void gpureplay_report_free(struct gpureplay_report *report);

/**
 * gpureplay_chain_describe() - one line about a bad chain
 * @b: the chain
 * @buf: where the line goes, without a newline, e.g. "chain 5 (slot 0,
 *       head 0x...): descriptor 0x... lies in stale region 0x...-0x..."
 * @len: room in @buf
 *
 * Return: what snprintf() returned.
 */
int gpureplay_chain_describe(const struct gpureplay_bad_chain *b, char *buf,
			     size_t len);

/**
 * gpureplay_load() - read the four files of a recording directory
 * @dir: the directory
 * @in: filled with malloc()ed copies of the files; free them with
 *      gpureplay_unload()
 * @err: if not NULL, names the file that could not be read
 *
 * gr_mem_contents may hold GPUREPLAY_MEM_FILE_MAX bytes, the others
 * GPUREPLAY_FILE_MAX.
 *
 * Return: 0, -EFBIG for a file too large, -ENOMEM, or the negative errno
 * of open(2), fstat(2) or read(2).
 */
int gpureplay_load(const char *dir, struct gpureplay_input *in,
		   struct accmap_rec_error *err);

/**
 * gpureplay_unload() - free what gpureplay_load() read
 * @in: the input; its fields are cleared
 */
void gpureplay_unload(struct gpureplay_input *in);

#endif /* ACCMAP_GPUREPLAY_H */

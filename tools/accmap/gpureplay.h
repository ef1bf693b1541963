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
 * @flush_ids:       FLUSH_ID_NEXT writes whose value was replaced by the
 *                   LATEST_FLUSH read before them
 * @roots_other:     TRANSTAB writes of a non-zero value other than gr_pgt's
 *                   TRANSTAB
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
	uint32_t roots_other;
	uint32_t pgt_pages;
	uint64_t pgt_leaves;
	uint64_t leaves_unmapped;
	uint64_t leaves_stale;
	uint64_t tables_missing;
	uint64_t recorded_ns;
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

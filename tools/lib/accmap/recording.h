/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libaccmap recordings: accmap's own file format for a recorded GPU
 * workload (what replay needs: the GPU address space, the memory, the
 * register operations and named ranges of memory), its reader and writer,
 * and a player that replays a recording through /dev/accmap.
 *
 * The format is described byte by byte in
 * Documentation/userspace-api/accmap-recording.rst.  In short: a header
 * (magic, version, target name, page-table format, address space, VA
 * bits), a table of sections, and the sections: mappings, memory contents,
 * operations (struct accmap_replay_op records), symbols and a note.  All
 * numbers are little-endian.
 *
 * The reader trusts nothing in a file: every count, size and offset is
 * bounded and checked for overflow, allocations are bounded by the
 * ACCMAP_REC_*_MAX limits and by the size of the file, and a rejected file
 * gets a message naming it and the byte offset of the problem.
 *
 * As in accmap.h, functions return 0 or a negative errno value.
 */
#ifndef LIBACCMAP_RECORDING_H
#define LIBACCMAP_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "accmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from libaccmap.so, as accmap.h explains. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- the file format ------------------------------------------------- */

#define ACCMAP_REC_MAGIC		"ACCMAPRC"	/* 8 bytes, no NUL */
#define ACCMAP_REC_MAGIC_LEN		8
#define ACCMAP_REC_VERSION		1

/* Sizes of the version 1 records; later versions may only grow them. */
#define ACCMAP_REC_HEADER_SIZE		128
#define ACCMAP_REC_SECTION_SIZE		40
#define ACCMAP_REC_MAP_SIZE		40
#define ACCMAP_REC_OP_SIZE		32
#define ACCMAP_REC_SYMBOL_SIZE		56

/* Section types. */
#define ACCMAP_REC_SECT_MAPS		1	/* required */
#define ACCMAP_REC_SECT_DATA		2	/* required if a map has contents */
#define ACCMAP_REC_SECT_OPS		3	/* required */
#define ACCMAP_REC_SECT_SYMBOLS		4
#define ACCMAP_REC_SECT_NOTE		5

/* Section flags: a reader that does not know the type may skip it. */
#define ACCMAP_REC_SECT_OPTIONAL	0x1U

/* How a map's memory starts out (map record field "content"). */
#define ACCMAP_REC_CONTENT_ZERO		0	/* zero-filled */
#define ACCMAP_REC_CONTENT_DATA		1	/* length bytes in DATA */

/* The GPU page: map addresses and lengths are multiples of it. */
#define ACCMAP_REC_PAGE_SIZE		4096ULL

/* Limits of the reader (and the writer). */
#define ACCMAP_REC_SECTIONS_MAX		16
#define ACCMAP_REC_SYMBOLS_MAX		4096
#define ACCMAP_REC_NOTE_MAX		65536
#define ACCMAP_REC_AS_MAX		16
#define ACCMAP_REC_MAPPED_MAX		(64ULL << 30)	/* bytes over all maps */
#define ACCMAP_REC_FILE_MAX		(4ULL << 30)	/* accmap_rec_load() */

/* Symbol names: 1 to 31 characters of [A-Za-z0-9_.-], NUL-padded. */
#define ACCMAP_REC_NAME_LEN		32

/* Symbol flags: hints for tools, not used by the player. */
#define ACCMAP_REC_SYM_INPUT		0x1U
#define ACCMAP_REC_SYM_OUTPUT		0x2U
#define ACCMAP_REC_SYM_VALID_FLAGS	(ACCMAP_REC_SYM_INPUT | ACCMAP_REC_SYM_OUTPUT)

/* ---- a recording in memory --------------------------------------------- */

/**
 * struct accmap_rec_map - one mapping of the recorded GPU address space
 * @gpu_va: GPU virtual address, a multiple of ACCMAP_REC_PAGE_SIZE
 * @length: bytes, a non-zero multiple of ACCMAP_REC_PAGE_SIZE
 * @flags:  ACCMAP_REPLAY_MAP_* permissions, READ at least
 * @attr:   memory attribute index, 0 to ACCMAP_REPLAY_ATTR_MAX
 * @data:   @length bytes the memory holds before the first op, or NULL
 *          for memory that starts zero-filled
 */
struct accmap_rec_map {
	uint64_t gpu_va;
	uint64_t length;
	uint32_t flags;
	uint32_t attr;
	void *data;
};

/**
 * struct accmap_rec_symbol - a named range of GPU memory
 * @name:   NUL-terminated, 1 to ACCMAP_REC_NAME_LEN - 1 characters of
 *          [A-Za-z0-9_.-], unique in the recording
 * @gpu_va: first byte
 * @length: bytes, at least 1; the range lies inside one mapping
 * @flags:  ACCMAP_REC_SYM_* hints
 */
struct accmap_rec_symbol {
	char name[ACCMAP_REC_NAME_LEN];
	uint64_t gpu_va;
	uint64_t length;
	uint32_t flags;
};

/**
 * struct accmap_recording - a recording, as the reader returns it and the
 *                           writer takes it
 * @target:     name of the replay target it was recorded on
 * @gpu_id:     GPU_ID of that target (0 if unknown); informational
 * @format:     ACCMAP_PGT_* page-table format
 * @as:         GPU address space, below ACCMAP_REC_AS_MAX
 * @va_bits:    GPU VA bits, ACCMAP_REPLAY_VA_BITS_MIN to _MAX
 * @nr_maps:    entries in @maps, 1 to ACCMAP_REPLAY_MAPS_MAX in a file
 * @maps:       the mappings, in the order they were added or stored
 * @nr_ops:     entries in @ops, 1 to ACCMAP_REPLAY_OPS_MAX in a file
 * @ops:        the register operations, in order
 * @nr_symbols: entries in @symbols, at most ACCMAP_REC_SYMBOLS_MAX
 * @symbols:    the symbols
 * @note:       free text (printable ASCII, tabs, newlines), or NULL
 * @map_cap:    private: room in @maps
 * @sym_cap:    private: room in @symbols
 *
 * Read the fields freely; change them only through the functions below.
 * All memory belongs to the recording and goes with accmap_rec_free().
 */
struct accmap_recording {
	char target[ACCMAP_REPLAY_NAME_LEN];
	uint32_t gpu_id;
	uint32_t format;
	uint32_t as;
	uint32_t va_bits;
	uint32_t nr_maps;
	struct accmap_rec_map *maps;
	uint32_t nr_ops;
	struct accmap_replay_op *ops;
	uint32_t nr_symbols;
	struct accmap_rec_symbol *symbols;
	char *note;
	uint32_t map_cap;
	uint32_t sym_cap;
};

/* accmap_rec_error.offset when the problem is not at a place in a file. */
#define ACCMAP_REC_NO_OFFSET		UINT64_MAX
#define ACCMAP_REC_ERR_LEN		256

/**
 * struct accmap_rec_error - why a recording was refused
 * @offset: byte offset in the file of the field at fault, or
 *          ACCMAP_REC_NO_OFFSET
 * @msg:    one line for people: "FILE: offset N: what is wrong"
 */
struct accmap_rec_error {
	uint64_t offset;
	char msg[ACCMAP_REC_ERR_LEN];
};

/**
 * accmap_rec_create() - start an empty recording
 * @target: replay target name, 1 to ACCMAP_REPLAY_NAME_LEN - 1 printable
 *          ASCII characters
 * @format: ACCMAP_PGT_*
 * @as: address space, below ACCMAP_REC_AS_MAX
 * @va_bits: ACCMAP_REPLAY_VA_BITS_MIN to ACCMAP_REPLAY_VA_BITS_MAX
 * @rec: set to the new recording on success
 *
 * Return: 0, -EINVAL for a bad argument, -ENOMEM.
 */
int accmap_rec_create(const char *target, uint32_t format, uint32_t as,
		      uint32_t va_bits, struct accmap_recording **rec);

/**
 * accmap_rec_free() - free a recording and everything it holds
 * @rec: the recording, or NULL
 */
void accmap_rec_free(struct accmap_recording *rec);

/**
 * accmap_rec_add_map() - add a mapping
 * @rec: the recording
 * @gpu_va: GPU virtual address, a multiple of ACCMAP_REC_PAGE_SIZE
 * @length: bytes, a non-zero multiple of ACCMAP_REC_PAGE_SIZE; the map
 *          ends at or below 1 << @rec->va_bits
 * @flags: ACCMAP_REPLAY_MAP_* with READ
 * @attr: memory attribute index, at most ACCMAP_REPLAY_ATTR_MAX
 * @data: @length bytes of contents, copied; NULL for zero-filled memory
 *
 * Overlaps with other maps are found by accmap_rec_check().
 *
 * Return: 0, -EINVAL for a bad argument, -E2BIG past
 * ACCMAP_REPLAY_MAPS_MAX maps or ACCMAP_REC_MAPPED_MAX bytes, -ENOMEM.
 */
int accmap_rec_add_map(struct accmap_recording *rec, uint64_t gpu_va,
		       uint64_t length, uint32_t flags, uint32_t attr,
		       const void *data);

/**
 * accmap_rec_set_ops() - set the register operations
 * @rec: the recording
 * @ops: @count operations, copied; each is checked against the rules of
 *       <linux/accmap.h> that do not depend on the target
 * @count: 1 to ACCMAP_REPLAY_OPS_MAX
 *
 * Replaces the operations the recording had.
 *
 * Return: 0, -EINVAL for a bad argument or a malformed op, -ENOMEM.
 */
int accmap_rec_set_ops(struct accmap_recording *rec,
		       const struct accmap_replay_op *ops, uint32_t count);

/**
 * accmap_rec_add_symbol() - name a range of GPU memory
 * @rec: the recording
 * @name: 1 to ACCMAP_REC_NAME_LEN - 1 characters of [A-Za-z0-9_.-], not
 *        yet used in @rec
 * @gpu_va: first byte
 * @length: bytes, at least 1; the range must lie inside one map
 *          (checked by accmap_rec_check(), as maps may come later)
 * @flags: ACCMAP_REC_SYM_* hints
 *
 * Return: 0, -EINVAL for a bad argument, -EEXIST for a name in use,
 * -E2BIG past ACCMAP_REC_SYMBOLS_MAX, -ENOMEM.
 */
int accmap_rec_add_symbol(struct accmap_recording *rec, const char *name,
			  uint64_t gpu_va, uint64_t length, uint32_t flags);

/**
 * accmap_rec_set_note() - set the free-text note
 * @rec: the recording
 * @note: printable ASCII, tabs and newlines, at most ACCMAP_REC_NOTE_MAX
 *        bytes; NULL or "" removes the note
 *
 * Return: 0, -EINVAL for a bad character or length, -ENOMEM.
 */
int accmap_rec_set_note(struct accmap_recording *rec, const char *note);

/**
 * accmap_rec_find_symbol() - look a symbol up by name
 * @rec: the recording
 * @name: the name
 *
 * Return: the symbol, or NULL if @rec has none of that name.
 */
const struct accmap_rec_symbol *
accmap_rec_find_symbol(const struct accmap_recording *rec, const char *name);

/**
 * accmap_rec_op_name() - the name of a replay operation
 * @op: ACCMAP_REPLAY_OP_*
 *
 * Return: "WRITE", "READ", ... or "unknown" for a value no op has.
 */
const char *accmap_rec_op_name(uint32_t op);

/**
 * accmap_rec_find_map() - the map a range of GPU memory lies in
 * @rec: the recording
 * @gpu_va: first byte of the range
 * @length: bytes, at least 1
 *
 * Return: the index of the map holding all of the range, or -ERANGE if no
 * single map does.
 */
int accmap_rec_find_map(const struct accmap_recording *rec, uint64_t gpu_va,
			uint64_t length);

/**
 * accmap_rec_check() - check a recording as the reader would
 * @rec: the recording
 * @err: if not NULL, says what is wrong on failure
 *
 * Every rule of the file format that is about the contents: counts,
 * limits, maps inside the VA space and not overlapping, symbols inside a
 * map, operations well formed.  The writer refuses what fails this.
 *
 * Return: 0, or -EBADMSG (with @err filled in).
 */
int accmap_rec_check(const struct accmap_recording *rec,
		     struct accmap_rec_error *err);

/**
 * accmap_rec_parse() - read a recording from memory
 * @buf: the file's bytes
 * @len: bytes in @buf
 * @name: the file's name for messages, or NULL ("recording")
 * @rec: set to a new recording on success
 * @err: if not NULL, says what is wrong on failure
 *
 * Safe on any input: nothing outside @buf is read, and the memory
 * allocated is bounded by @len and the ACCMAP_REC_*_MAX limits.  The new
 * recording owns copies of everything; @buf may go afterwards.
 *
 * Return: 0, -EINVAL if @buf, @rec is NULL, -EBADMSG for a malformed or
 * truncated file, -EOPNOTSUPP for a newer version or a required section
 * this reader does not know, -ENOMEM.
 */
int accmap_rec_parse(const void *buf, size_t len, const char *name,
		     struct accmap_recording **rec, struct accmap_rec_error *err);

/**
 * accmap_rec_load() - read a recording from a file
 * @path: the file
 * @rec: set to a new recording on success
 * @err: if not NULL, says what is wrong on failure
 *
 * Reads the file (at most ACCMAP_REC_FILE_MAX bytes) and parses it with
 * accmap_rec_parse().
 *
 * Return: 0, the errors of accmap_rec_parse(), -EFBIG for a file too
 * large, or the negative errno of open(2) or read(2).
 */
int accmap_rec_load(const char *path, struct accmap_recording **rec,
		    struct accmap_rec_error *err);

/**
 * accmap_rec_encode() - write a recording into memory
 * @rec: the recording; it must pass accmap_rec_check()
 * @buf: set to a malloc()ed buffer with the file's bytes on success; the
 *       caller frees it
 * @len: set to the bytes in @buf
 * @err: if not NULL, says what is wrong on failure
 *
 * Return: 0, -EINVAL if an argument is NULL, -EBADMSG if @rec fails
 * accmap_rec_check(), -ENOMEM.
 */
int accmap_rec_encode(const struct accmap_recording *rec, void **buf,
		      size_t *len, struct accmap_rec_error *err);

/**
 * accmap_rec_save() - write a recording into a file
 * @rec: the recording; it must pass accmap_rec_check()
 * @path: the file; written under a temporary name beside it and renamed
 *        over @path once complete, so that @path is never half written
 * @err: if not NULL, says what is wrong on failure
 *
 * Return: 0, the errors of accmap_rec_encode(), or the negative errno of
 * the system call that failed.
 */
int accmap_rec_save(const struct accmap_recording *rec, const char *path,
		    struct accmap_rec_error *err);

/* ---- the job chains of a recording -------------------------------------- */

/**
 * struct accmap_rec_chain - a job chain the ops of a recording start
 * @slot:     the Mali job slot
 * @start_op: index of the op that starts it (START to JS_COMMAND_NEXT)
 * @end_op:   index of the first WAIT_IRQ of ACCMAP_REPLAY_IRQ_JOB after
 *            @start_op whose mask has the slot's DONE or FAILED bit, or
 *            UINT32_MAX if no op waits for it
 * @head:     the slot's JS_HEAD_NEXT as the ops wrote it before @start_op
 *            (0 if they did not): the GPU VA of the first descriptor
 */
struct accmap_rec_chain {
	uint32_t slot;
	uint32_t start_op;
	uint32_t end_op;
	uint64_t head;
};

/**
 * accmap_rec_chains() - find the job chains a recording's ops start
 * @rec: the recording (its ops are read on the Mali register map)
 * @chains: set to a malloc()ed array, in start order (free() it), or
 *          NULL if there is none
 * @nr: set to the number of chains
 *
 * Return: 0, -EINVAL for a NULL argument, -ENOMEM.
 */
int accmap_rec_chains(const struct accmap_recording *rec, struct accmap_rec_chain **chains,
		      uint32_t *nr);

/* ---- replaying a recording ---------------------------------------------- */

/* Operations per ACCMAP_IOC_REPLAY_RUN when the caller does not say. */
#define ACCMAP_PLAYER_BATCH_DEFAULT	4096U

/**
 * struct accmap_player_options - how accmap_player_open() sets up
 * @target:      replay target name; NULL for the recording's
 * @heap_mask:   heaps of the buffers; 0 for ACCMAP_HEAP_MASK_SYSTEM
 * @alloc_flags: ACCMAP_ALLOC_* flags of the buffers
 * @tag:         accounting tag of the buffers
 * @batch:       operations per run ioctl; 0 for ACCMAP_PLAYER_BATCH_DEFAULT
 */
struct accmap_player_options {
	const char *target;
	uint32_t heap_mask;
	uint32_t alloc_flags;
	uint16_t tag;
	uint32_t batch;
};

struct accmap_player;

/**
 * typedef accmap_player_progress_fn - told after every batch of a run
 * @arg: the caller's pointer
 * @done: operations completed so far
 * @total: operations in the recording
 *
 * Return: 0 to go on, anything else to stop the run (-ECANCELED).
 */
typedef int (*accmap_player_progress_fn)(void *arg, uint32_t done, uint32_t total);

/**
 * accmap_player_open() - load a recording into fresh buffers and a session
 * @fd: accmap device file descriptor
 * @rec: the recording; it must outlive the player.  It needs no ops yet
 *       (a recorder may open a player to probe the target first)
 * @opts: options, or NULL for the defaults
 * @player: set to the new player on success
 * @failed_map: if not NULL, set to the index of the map whose buffer
 *              could not be made or filled, or that the kernel refused;
 *              else to UINT32_MAX
 *
 * Finds the target by name, creates and allocates one buffer per map,
 * writes the recorded contents into it (zero-filled maps are left as the
 * fresh buffer is, zeroed) and sets up a replay session with the
 * recording's format, address space and VA bits.
 *
 * Return: 0, -EINVAL for a NULL argument, -ENODEV if no target has the
 * name, -ENOMEM, or the negative errno of the ioctl that failed.
 */
int accmap_player_open(int fd, const struct accmap_recording *rec,
		       const struct accmap_player_options *opts,
		       struct accmap_player **player, uint32_t *failed_map);

/**
 * accmap_player_close() - destroy the session and free the buffers
 * @player: the player, or NULL
 *
 * Return: 0, or the first negative errno of REPLAY_DESTROY or FREE; the
 * player is gone either way.
 */
int accmap_player_close(struct accmap_player *player);

/**
 * accmap_player_session() - the player's session id
 * @player: the player
 *
 * Return: the id, for ACCMAP_IOC_REPLAY_RUN calls of the caller's own.
 */
uint32_t accmap_player_session(const struct accmap_player *player);

/**
 * accmap_player_target() - the index of the player's target
 * @player: the player
 * @info: if not NULL, filled with the target's description as found
 *
 * Return: the target index.
 */
uint32_t accmap_player_target(const struct accmap_player *player,
			      struct accmap_replay_target_info *info);

/**
 * accmap_player_restore() - put the recorded contents back
 * @player: the player
 *
 * Writes the recorded contents (or zeros) again into the buffer of every
 * map the GPU may write (ACCMAP_REPLAY_MAP_WRITE): after a run, the memory
 * is as before the first.  Maps the GPU cannot write are left alone, so
 * inputs written into them stay.
 *
 * Return: 0, or the negative errno of the WRITE that failed.
 */
int accmap_player_restore(struct accmap_player *player);

/**
 * accmap_player_write() - write GPU memory by address
 * @player: the player
 * @gpu_va: first byte
 * @src: the bytes
 * @len: bytes, at least 1
 *
 * Return: 0, -EINVAL for @len 0 or a NULL @src, -ERANGE if no single map
 * holds the range, or the negative errno of the WRITE.
 */
int accmap_player_write(struct accmap_player *player, uint64_t gpu_va,
			const void *src, size_t len);

/**
 * accmap_player_read() - read GPU memory by address
 * @player: the player
 * @gpu_va: first byte
 * @dst: where the bytes go
 * @len: bytes, at least 1
 *
 * Return: 0, -EINVAL for @len 0 or a NULL @dst, -ERANGE if no single map
 * holds the range, or the negative errno of the READ.
 */
int accmap_player_read(struct accmap_player *player, uint64_t gpu_va,
		       void *dst, size_t len);

/**
 * accmap_player_write_symbol() - write the start of a symbol's range
 * @player: the player
 * @name: the symbol
 * @src: the bytes
 * @len: bytes, 1 to the symbol's length
 *
 * Return: 0, -ENOENT for an unknown symbol, -ERANGE if @len is larger
 * than the symbol, or the errors of accmap_player_write().
 */
int accmap_player_write_symbol(struct accmap_player *player, const char *name,
			       const void *src, size_t len);

/**
 * accmap_player_read_symbol() - read the start of a symbol's range
 * @player: the player
 * @name: the symbol
 * @dst: where the bytes go
 * @len: bytes, 1 to the symbol's length
 *
 * Return: 0, -ENOENT for an unknown symbol, -ERANGE if @len is larger
 * than the symbol, or the errors of accmap_player_read().
 */
int accmap_player_read_symbol(struct accmap_player *player, const char *name,
			      void *dst, size_t len);

/* How a chain fared in the last run (struct accmap_player_chain.state). */
#define ACCMAP_PLAYER_CHAIN_NOT_RUN	0	/* the run stopped before its start */
#define ACCMAP_PLAYER_CHAIN_STARTED	1	/* started; the run stopped before its end */
#define ACCMAP_PLAYER_CHAIN_DONE	2	/* started, and its wait ended */
#define ACCMAP_PLAYER_CHAIN_FAILED	3	/* the target said it failed */

/**
 * struct accmap_player_chain - a job chain in the last run of a player
 * @chain:      where the ops start and wait for it
 * @state:      ACCMAP_PLAYER_CHAIN_*
 * @status:     FAILED: the slot's JS_STATUS (the job's exception code)
 * @descriptor: FAILED: the slot's JS_HEAD, the GPU VA of the descriptor
 *              the chain stopped at
 * @ns:         time of the runs from its start op to its end op (to where
 *              the run stopped, if it did not end): the player splits its
 *              batches at chain starts and ends to measure it
 */
struct accmap_player_chain {
	struct accmap_rec_chain chain;
	uint32_t state;
	uint32_t status;
	uint64_t descriptor;
	uint64_t ns;
};

/**
 * accmap_player_chains() - the job chains of the player's last run
 * @player: the player
 * @nr: set to the number of chains
 *
 * Return: the chains, in start order, as the last accmap_player_run()
 * left them (NULL before the first run, or if the ops start none); valid
 * until the next run or accmap_player_close().
 */
const struct accmap_player_chain *
accmap_player_chains(const struct accmap_player *player, uint32_t *nr);

/**
 * accmap_player_run() - run the recording's operations
 * @player: the player
 * @progress: if not NULL, called after every batch
 * @arg: passed to @progress
 * @result: the outcome, as one ACCMAP_IOC_REPLAY_RUN over all the ops
 *          would give it: @result->done, @result->failed_op count from the
 *          first op of the recording, @result->elapsed_ns adds up the
 *          batches, and @result->ops / @result->nr_ops are the
 *          recording's; filled in on failure too
 *
 * Runs the ops in batches of at most the player's batch size, in order,
 * stopping at the first batch that fails.  A batch also ends right before
 * every chain's start op and right after its end op, so that each chain
 * is timed on its own; accmap_player_chains() then says how each fared.
 * A run stopped by ACCMAP_REPLAY_JOB_FAILED marks the chain running on
 * the failed slot FAILED, with the status and descriptor the kernel gave.
 * Memory is not restored first: see accmap_player_restore().
 *
 * Return: 0, -EINVAL if the recording has no ops or @result is NULL,
 * -ECANCELED if @progress asked to stop, -ENOMEM, or the negative errno
 * of the run that failed.
 */
int accmap_player_run(struct accmap_player *player,
		      accmap_player_progress_fn progress, void *arg,
		      struct accmap_replay_run *result);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIBACCMAP_RECORDING_H */

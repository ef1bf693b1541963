/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: replay of recorded GPU jobs, internal interfaces.
 *
 * A session (replay.c) owns fresh GPU page tables (replay_pgtable.c) built
 * from handle-backed mappings, on one target: a real register window
 * (replay_mmio.c) or the software Mali model (replay_sim.c).  The executor
 * (replay_exec.c) runs bounded lists of register operations on it.  The
 * model's MMU reads the tables with a walker (replay_walk.c) written
 * apart from the builder, so each checks the other.
 */
#ifndef _ACCMAP_REPLAY_H
#define _ACCMAP_REPLAY_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/types.h>

#include <uapi/linux/accmap.h>

#include "replay_walk.h"

struct accmap_device;
struct accmap_handle;
struct accmap_devmem;
struct accmap_svm;
struct device;

/* ---- page-table formats (replay_pgtable.c) -------------------------- */

#define ACCMAP_PGT_LEVELS	4
#define ACCMAP_PGT_PAGE_SIZE	SZ_4K
#define ACCMAP_PGT_BLOCK_SIZE	SZ_2M
/* Spare tables a tree keeps for maps that may not allocate. */
#define ACCMAP_PGT_SPARE_MAX	64

/**
 * struct accmap_pgt_alloc_ops - where table pages come from
 * @alloc: return the kernel address of a zeroed, 4 KiB aligned table page
 *         and set *@dma to the address the GPU reads it at; NULL if none
 * @free:  give back a page @alloc returned
 * @sync:  optional: make the CPU's writes of @len bytes at @va (in a page
 *         @alloc returned, at device address @dma) visible to the GPU
 */
struct accmap_pgt_alloc_ops {
	void *(*alloc)(void *priv, u64 *dma);
	void (*free)(void *priv, void *va, u64 dma);
	void (*sync)(void *priv, void *va, u64 dma, size_t len);
};

struct accmap_pgt;

struct accmap_pgt *accmap_pgt_create(u32 format, u32 va_bits,
				     const struct accmap_pgt_alloc_ops *ops,
				     void *priv);
void accmap_pgt_destroy(struct accmap_pgt *pgt);
int accmap_pgt_map(struct accmap_pgt *pgt, u64 va, u64 pa, u64 size,
		   u32 perm, u32 attr);
u64 accmap_pgt_unmap(struct accmap_pgt *pgt, u64 va, u64 size);
u64 accmap_pgt_root(const struct accmap_pgt *pgt);
unsigned long accmap_pgt_table_pages(const struct accmap_pgt *pgt);
int accmap_pgt_reserve(struct accmap_pgt *pgt, unsigned int n);
void accmap_pgt_reserve_only(struct accmap_pgt *pgt);
void accmap_pgt_reclaim(struct accmap_pgt *pgt);
unsigned long accmap_pgt_tables_needed(u64 va, u64 size);

/* ---- targets ---------------------------------------------------------- */

struct accmap_replay_session;

/**
 * struct accmap_replay_fault - an MMU fault a target reported
 * @as:      address space
 * @status:  its FAULTSTATUS
 * @address: its FAULTADDRESS
 */
struct accmap_replay_fault {
	u32 as;
	u32 status;
	u64 address;
};

/**
 * struct accmap_replay_target_ops - what a replay target provides
 * @open:      set up per-session state in @s->tpriv; 0 or -errno
 * @stop:      optional: stop everything the session started on the target
 *             (running jobs) and wait for it; called when the session goes,
 *             before its tables and memory are freed.  Returns 0 if the
 *             target no longer touches the session's memory,
 *             ACCMAP_REPLAY_STOP_RESET if moreover the whole target was
 *             reset (so memory kept back from earlier sessions is out of
 *             use too), or -ETIMEDOUT if the target may still touch it:
 *             the memory is then kept back, never freed (see replay.c)
 * @close:     free @s->tpriv; called after the tables are freed
 * @pgt_alloc: where the session's table pages come from (priv: @s)
 * @add_memory: optional: @len bytes of buffer memory at device address
 *             @dma are reachable by the CPU at @kva (the model reads and
 *             writes GPU memory only through what it was given here and
 *             through its table pages).  0, or -ENOMEM: the setup fails
 * @dma_dev:   optional: the device buffers are DMA-mapped for; if NULL,
 *             device addresses are CPU physical addresses
 * @run_begin: optional: called before a run (e.g. take the window)
 * @run_end:   optional: called after a run
 * @read32:    read the register at @offset (checked, aligned)
 * @write32:   write it
 * @wait_irq:  wait up to @timeout_us for interrupt source @irq to raise a
 *             bit of @mask, killable; on success acknowledge the raised
 *             bits of @mask, set *@seen to the status then and return 0;
 *             -ETIMEDOUT, -EINTR (fatal signal), -EIO if an MMU fault
 *             is pending (reported by @mmu_fault), or -ECANCELED if a job
 *             failed that the wait does not wait for (reported by
 *             @job_failed with @mask as expected if @irq is
 *             ACCMAP_REPLAY_IRQ_JOB, else with 0); an MMU fault wins
 * @mmu_fault: if an MMU fault is pending, fill @f and return true
 * @job_failed: optional: if a job slot's FAILED bit (bit 16 + slot of
 *             JOB_IRQ_RAWSTAT) is raised and not in @expected, fill @f
 *             with the lowest such slot (@f->as), its JS_STATUS
 *             (@f->status) and JS_HEAD (@f->address) and return true
 * @svm_enable: optional, for SVM sessions (svm.c), on targets with
 *             ACCMAP_REPLAY_TARGET_SVM: from now on, faults on the
 *             session's address space are recoverable: the target stalls
 *             the job, raises the MMU interrupt and calls @s->mmu_irq, in
 *             a context that may sleep, which may resume it (MMU_IRQ_CLEAR
 *             of the bit, then AS_COMMAND UNLOCK); while the handler runs,
 *             the fault is not pending for @wait_irq and @mmu_fault.  On a
 *             model (no @dma_dev), memory the session's entries name that
 *             add_memory did not give is reached through
 *             accmap_svm_copy(); with @dma_dev, entries hold addresses
 *             svm.c DMA-mapped for that device.  0 or -errno
 * @svm_flush: with @svm_enable: wait until the target uses no translation
 *             of a page-table entry cleared before the call; 0, or
 *             -ETIMEDOUT if the GPU did not confirm it (it may still
 *             reach the pages those entries named)
 * @walk:      optional: translate @va through the session's tables as the
 *             target's MMU reads them (for the debugfs file
 *             "replay_leaves"); the outcome in @w
 */
struct accmap_replay_target_ops {
	int (*open)(struct accmap_replay_session *s);
	int (*stop)(struct accmap_replay_session *s);
	void (*close)(struct accmap_replay_session *s);
	const struct accmap_pgt_alloc_ops *pgt_alloc;
	int (*add_memory)(struct accmap_replay_session *s, u64 dma,
			  void *kva, u64 len);
	struct device *(*dma_dev)(struct accmap_replay_session *s);
	int (*run_begin)(struct accmap_replay_session *s);
	void (*run_end)(struct accmap_replay_session *s);
	u32 (*read32)(struct accmap_replay_session *s, u32 offset);
	void (*write32)(struct accmap_replay_session *s, u32 offset, u32 value);
	int (*wait_irq)(struct accmap_replay_session *s, u32 irq, u32 mask,
			u32 timeout_us, u32 *seen);
	bool (*mmu_fault)(struct accmap_replay_session *s,
			  struct accmap_replay_fault *f);
	bool (*job_failed)(struct accmap_replay_session *s, u32 expected,
			   struct accmap_replay_fault *f);
	int (*svm_enable)(struct accmap_replay_session *s);
	int (*svm_flush)(struct accmap_replay_session *s);
	void (*walk)(struct accmap_replay_session *s, u64 va,
		     struct accmap_walk *w);
};

/**
 * struct accmap_replay_target - a register window replay can drive
 * @name:        shown by REPLAY_QUERY and debugfs
 * @flags:       ACCMAP_REPLAY_TARGET_*
 * @window_size: bytes of registers; every offset is checked against it
 * @formats:     bit (1 << ACCMAP_PGT_*) per format its MMU walks
 * @as_count:    address spaces
 * @gpu_id:      GPU_ID as read at probe
 * @ops:         the target's operations
 * @priv:        the target's own state
 * @sessions:    live sessions on this target
 * @kept:        sessions whose GPU did not stop when they went, with their
 *               tables, buffer references and DMA mappings, kept back
 *               until the target is known to have reset (their node);
 *               protected by the device's replay_lock
 * @kept_ever:   sessions ever kept back; protected by replay_lock
 * @devmem:      the target's own memory, where SVM migrates pages
 *               (devmem.h), or NULL; set at load, freed at unload
 */
struct accmap_replay_target {
	const char *name;
	u32 flags;
	u32 window_size;
	u32 formats;
	u32 as_count;
	u32 gpu_id;
	const struct accmap_replay_target_ops *ops;
	void *priv;
	atomic_t sessions;
	struct list_head kept;
	unsigned long kept_ever;
	struct accmap_devmem *devmem;
};

/* What a target's @stop returns when it reset the whole target. */
#define ACCMAP_REPLAY_STOP_RESET	1

/**
 * struct accmap_replay_session - page tables and a target, ready to run
 * @ref:       one per user (the owning client's table, a run in progress)
 * @adev:      the device
 * @node:      in the device's list of sessions (debugfs)
 * @id:        the id the owning client knows it by
 * @target:    where it runs
 * @tpriv:     the target's per-session state
 * @opened:    the target's @open succeeded (so @stop and @close are due)
 * @ran:       a run has started: the target may hold the session's root
 * @format:    ACCMAP_PGT_*
 * @as:        the session's address space: the index REPLAY_SETUP named,
 *             below the target's as_count; the only one its ops may touch
 * @va_bits:   GPU VA bits
 * @pgt:       the page tables
 * @root:      TRANSTAB value for the tables, in the format's form
 * @run_lock:  serialises runs of this session
 * @nr_maps:   entries in @maps
 * @maps:      the mappings, each holding a reference on its handle
 * @mapped:    bytes mapped
 * @svm:       for an SVM session, the mirror of the creator (svm.h)
 * @mmu_irq:   for an SVM session, its MMU interrupt handler, called by
 *             the target on a recoverable fault (see @svm_enable); true
 *             if it serviced the fault and resumed the address space
 * @pid:       thread group id of the creator
 * @comm:      its command name
 * @captured:  a READ with ACCMAP_REPLAY_OP_CAPTURE has run in this
 *             session (under @run_lock)
 * @capture:   what the last such READ read, for a later
 *             ACCMAP_REPLAY_OP_CAPTURED WRITE of this run or a later one
 *             (under @run_lock)
 */
struct accmap_replay_session {
	struct kref ref;
	struct accmap_device *adev;
	struct list_head node;
	u32 id;
	struct accmap_replay_target *target;
	void *tpriv;
	bool opened;
	bool ran;
	u32 format;
	u32 as;
	u32 va_bits;
	struct accmap_pgt *pgt;
	u64 root;
	struct mutex run_lock;	/* serialises runs of this session */
	u32 nr_maps;
	struct accmap_replay_mapping *maps;
	u64 mapped;
	struct accmap_svm *svm;
	bool (*mmu_irq)(struct accmap_replay_session *s);
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool captured;
	u32 capture;
};

/* Sessions one client may hold at once. */
#define ACCMAP_REPLAY_SESSIONS_MAX	64
/* Targets one device may have: the model and real windows. */
#define ACCMAP_REPLAY_TARGETS_MAX	8

struct accmap_client;
struct seq_file;

int accmap_replay_init(struct accmap_device *adev);
void accmap_replay_fini(struct accmap_device *adev);
int accmap_replay_add_target(struct accmap_device *adev,
			     struct accmap_replay_target *target);
void accmap_replay_client_init(struct accmap_client *client);
void accmap_replay_client_fini(struct accmap_client *client);
int accmap_replay_query(struct accmap_device *adev,
			struct accmap_replay_target_info *info);
int accmap_replay_setup(struct accmap_client *client,
			struct accmap_replay_setup *arg,
			struct accmap_replay_session **news);
void accmap_replay_setup_done(struct accmap_client *client,
			      struct accmap_replay_session *s, bool told);
void accmap_replay_session_put(struct accmap_replay_session *s);
struct accmap_handle *accmap_replay_map_record(struct accmap_replay_session *s,
					       u32 i, struct accmap_replay_map *out);
int accmap_replay_check_restore(struct accmap_device *adev,
				const struct accmap_ckpt_session *rec);
int accmap_replay_restore(struct accmap_client *client,
			  const struct accmap_ckpt_session *rec,
			  const struct accmap_replay_map *maps,
			  const struct accmap_ckpt_svm_attr *attrs,
			  struct mm_struct *mm);
int accmap_replay_run(struct accmap_client *client,
		      struct accmap_replay_run *arg);
int accmap_replay_destroy(struct accmap_client *client,
			  const struct accmap_replay_destroy *arg);
int accmap_replay_svm(struct accmap_client *client, struct accmap_svm_op *arg);
int accmap_replay_debugfs_show(struct seq_file *m, void *unused);
int accmap_replay_svm_debugfs_show(struct seq_file *m, void *unused);
int accmap_replay_leaves_debugfs_show(struct seq_file *m, void *unused);

/* ---- the executor (replay_exec.c) ------------------------------------ */

/**
 * struct accmap_replay_result - how a run went
 * @done:      ops completed
 * @failed_op: index of the op that stopped the run, or U32_MAX
 * @reason:    ACCMAP_REPLAY_*
 * @value:     on failure, what the failing op read (0 if nothing); else
 *             what the last READ, POLL or WAIT_IRQ read (0 if none did)
 * @fault:     the MMU fault, when @reason is ACCMAP_REPLAY_MMU_FAULT; the
 *             failed job (slot, JS_STATUS, JS_HEAD), when it is
 *             ACCMAP_REPLAY_JOB_FAILED
 */
struct accmap_replay_result {
	u32 done;
	u32 failed_op;
	u32 reason;
	u32 value;
	struct accmap_replay_fault fault;
};

int accmap_replay_check_op(const struct accmap_replay_op *op,
			   u32 window_size);
int accmap_replay_check_session_op(const struct accmap_replay_session *s,
				   const struct accmap_replay_op *op);
int accmap_replay_release_as(struct accmap_replay_session *s);
int accmap_replay_exec(struct accmap_replay_session *s,
		       const struct accmap_replay_op *ops, u32 n, u32 first,
		       struct accmap_replay_result *res);

/* ---- the software Mali model (replay_sim.c) -------------------------- */

extern const struct accmap_replay_target_ops accmap_sim_ops;
int accmap_sim_target_init(struct accmap_replay_target *target);

#endif /* _ACCMAP_REPLAY_H */

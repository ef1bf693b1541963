/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: what a Mali job-manager GPU does with a job chain, as accmap's
 * GPU models run it.  The software model in accmap.ko (replay_sim.c)
 * calls it; it is kept apart from the model's MMU, locking and registers
 * so that a GPU device model outside the kernel can build the same file
 * and the two cannot drift apart.
 *
 * This part owns the job descriptors: their header, the job types, the
 * compute jobs' payload and arithmetic, the status written back, and the
 * chain's bounds (alignment, length, loops).  It calls nothing but the
 * ops it is given: memory is reached only through @access (the caller's
 * MMU: translation, permissions, faults), scratch memory through
 * @alloc/@free.  It takes no lock and never sleeps on its own; @yield is
 * where a long job lets others run.
 */
#ifndef _ACCMAP_MALI_JOBS_H
#define _ACCMAP_MALI_JOBS_H

#include <linux/types.h>

/**
 * struct mali_jobs_ops - how a model gives the job code its memory
 * @access:  reads (@write false) or writes @len bytes at GPU virtual
 *           address @va through the job's address space.  Returns 0,
 *           -EFAULT after an MMU fault the model latched (the chain stops
 *           there, the job not done), -EIO for a bus fault (the job
 *           fails with BUS_FAULT) or -EINTR when the model was reset or
 *           stopped (the chain ends, nothing published).
 * @alloc:   @bytes of scratch memory (zeroed if @zero), or NULL
 * @free:    gives back what @alloc returned (NULL allowed)
 * @aborted: true once the model was reset or stopped: long loops check it
 * @yield:   called between the rows of a long computation; may be NULL
 */
struct mali_jobs_ops {
	int (*access)(void *priv, u64 va, void *buf, size_t len, bool write);
	void *(*alloc)(void *priv, size_t bytes, bool zero);
	void (*free)(void *priv, void *p);
	bool (*aborted)(void *priv);
	void (*yield)(void *priv);
};

/**
 * enum mali_jobs_end - how a job or a chain ended
 * @MALI_JOBS_DONE:    done, its status written; the chain goes on
 * @MALI_JOBS_FAILED:  failed with a JS_STATUS code (@code), written to
 *                     its descriptor where the descriptor was reachable
 * @MALI_JOBS_FAULT:   stopped by an MMU fault the model latched: the job
 *                     is neither done nor failed (the slot stalls)
 * @MALI_JOBS_ABORTED: the model was reset or stopped
 */
enum mali_jobs_end {
	MALI_JOBS_DONE,
	MALI_JOBS_FAILED,
	MALI_JOBS_FAULT,
	MALI_JOBS_ABORTED,
};

/**
 * struct mali_jobs_chain - a chain being followed, job by job
 * @jd:    the job the chain is at (after a fault or failure: that job)
 * @end:   how the last job ended
 * @code:  JS_STATUS code when @end is MALI_JOBS_FAILED
 * @steps: jobs done so far
 * @mark:  the loop check's checkpoint (Brent's method)
 */
struct mali_jobs_chain {
	u64 jd;
	enum mali_jobs_end end;
	u32 code;
	u32 steps;
	u64 mark;
};

void mali_jobs_chain_init(struct mali_jobs_chain *ch, u64 head);
bool mali_jobs_chain_step(struct mali_jobs_chain *ch,
			  const struct mali_jobs_ops *ops, void *priv);

#endif /* _ACCMAP_MALI_JOBS_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: a software model of an Arm Mali job-manager GPU, the replay
 * target "sim".
 *
 * It answers the registers a Mali-G71 driver touches (identification,
 * power, interrupts, GPU commands, job slots, address spaces) well enough
 * that a recorded register sequence runs on it unchanged, and it runs job
 * chains from GPU memory through the session's page tables.  The
 * registers are mali_regfile.c's and what a job does is mali_jobs.c's,
 * both kept apart for the test boards' qemu device to share: real
 * Mali job types are only marked done, and the model's own compute job
 * (ACCMAP_SIM_JOB_TYPE, struct accmap_sim_job) really computes.  Each
 * replay session gets its own instance; nothing is shared between them.
 * Documentation/userspace-api/accmap-sim.rst describes the model from the
 * outside.
 *
 * Memory.  The model reaches GPU memory through two maps from 4 KiB
 * device frames to kernel addresses, and nothing else: @tables holds the
 * table pages it allocated for the session's page-table builder, @mem the
 * buffer memory the session handed over with add_memory().  Page-table
 * walks read only @tables, job data accesses only @mem; a device address
 * in neither is a fault, never a dereference.  So whatever user space
 * writes to the registers or to its buffers, the model touches no memory
 * but the session's.
 *
 * Recoverable faults.  For an SVM session (svm_enable), a translation or
 * permission fault on the session's address space is Mali's recoverable
 * page fault: the chain latches it, raises the MMU interrupt, marks the
 * address space stalled and calls the session's handler (@s->mmu_irq,
 * svm.c) from its own worker, as a threaded interrupt handler would run.
 * If the handler cleared the interrupt and sent AS_COMMAND UNLOCK, the
 * access is retried; otherwise the job stays stalled, as for any fault.
 * Memory the handler mapped is reached through accmap_svm_copy(), under
 * @mmu_lock, which the driver's svm_flush takes to wait for accesses in
 * flight.
 *
 * Concurrency.  Registers live under @lock, a spinlock so that the
 * condition of wait_irq() may take it.  START queues the slot's work item
 * on system_unbound_wq; the work snapshots what it needs under @lock,
 * walks and computes without it (it sleeps: kvmalloc, cond_resched), and
 * publishes the outcome under @lock.  A reset, stop or close bumps @gen: a
 * chain started before checks it between memory accesses and in its
 * compute loops, stops, and publishes nothing; stop and close also wait
 * for the slots' work to end.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "mali_jobs.h"
#include "mali_regfile.h"
#include "mali_regs.h"
#include "replay.h"
#include "svm.h"

/* A code the hardware has and mali_regs.h does not. */
#define SIM_FAULT_TRANSTAB_BUS(level)	(0xd0 + (level))

/* GPU memory frames: the GPU's 4 KiB page, whatever the CPU's is. */
#define SIM_FRAME_SHIFT		12
#define SIM_FRAME_SIZE		BIT(SIM_FRAME_SHIFT)

/* No page-table format: every access through the AS faults. */
#define SIM_FORMAT_NONE		MALI_REGFILE_FORMAT_NONE

/* Recoverable faults one access may take before it stays faulted. */
#define SIM_FAULT_RETRIES	8

struct sim;

/**
 * struct sim_slot - the work that runs one job slot's chains
 * @sim:   the model
 * @index: slot number
 * @work:  runs the slot's chain (its registers: @sim->rf.js[@index])
 */
struct sim_slot {
	struct sim *sim;
	unsigned int index;
	struct work_struct work;
};

/**
 * struct sim - the model of one session
 * @s:          the session
 * @lock:       protects @rf and @dying, and the writes of @gen.  Never
 *              held while reading or writing GPU memory or allocating.
 * @gen:        bumped by every reset and by stop; a chain runs only while
 *              it is the generation it started in (read without @lock)
 * @dying:      stop has begun: START queues nothing
 * @rf:         the registers (mali_regfile.c, the model's GPU)
 * @js:         the work of each job slot
 * @irq_wait:   woken whenever a RAWSTAT bit is raised
 * @tables:     device frame -> kernel address of the table pages the
 *              session's builder allocated through sim_pgt_ops; its xa_lock
 *              is held across every read of a table page, so a page freed
 *              by sim_pgt_free() is never read
 * @mem:        device frame -> kernel address of memory from add_memory();
 *              entries stay until close; the memory may go once stop has
 *              returned
 * @mmu_lock:   held by a chain across each translation and the access it
 *              makes, and by svm_flush: after svm_flush no access uses an
 *              entry cleared before it.  Nested inside nothing but the
 *              caller's svm->lock; never held while calling the handler
 * @recoverable: address spaces whose faults are recoverable (under @lock)
 * @in_service: address spaces whose fault the handler is servicing: not
 *              pending for wait_irq() and mmu_fault() (under @lock)
 */
struct sim {
	struct accmap_replay_session *s;
	spinlock_t lock;	/* the registers, see above */
	u32 gen;
	bool dying;
	struct mali_regfile rf;
	struct sim_slot js[MALI_REGFILE_JS_COUNT];
	wait_queue_head_t irq_wait;
	struct xarray tables;
	struct xarray mem;
	spinlock_t mmu_lock;	/* translations in use, see above */
	u32 recoverable;
	u32 in_service;
};

static struct sim *sim_of(struct accmap_replay_session *s)
{
	return s->tpriv;
}

/* ---- registers --------------------------------------------------------- */

static void sim_slot_work(struct work_struct *work);

/* The register file's START: the slot's work runs the chain. */
static void sim_rf_start(void *priv, unsigned int slot)
{
	struct sim *sim = priv;

	lockdep_assert_held(&sim->lock);
	if (!sim->dying)
		queue_work(system_unbound_wq, &sim->js[slot].work);
}

/* A reset: chains still running see the new generation and stop; done. */
static void sim_rf_reset(void *priv)
{
	struct sim *sim = priv;

	lockdep_assert_held(&sim->lock);
	WRITE_ONCE(sim->gen, sim->gen + 1);
	mali_regfile_reset_done(&sim->rf);
}

/* The model's GPU resets and takes address-space commands at once. */
static const struct mali_regfile_ops sim_rf_ops = {
	.start = sim_rf_start,
	.reset = sim_rf_reset,
};

/**
 * sim_read32() - read a register of the model
 * @s:      the session
 * @offset: register offset, 4-byte aligned, inside MALI_WINDOW_SIZE
 *
 * Registers the model does not have read 0.
 *
 * Return: the register's value.
 */
static u32 sim_read32(struct accmap_replay_session *s, u32 offset)
{
	struct sim *sim = sim_of(s);
	u32 value;

	spin_lock(&sim->lock);
	value = mali_regfile_read(&sim->rf, offset);
	spin_unlock(&sim->lock);
	return value;
}

/**
 * sim_write32() - write a register of the model
 * @s:      the session
 * @offset: register offset, 4-byte aligned, inside MALI_WINDOW_SIZE
 * @value:  the value
 *
 * Writes to read-only registers and to registers the model does not have
 * are ignored.  Never sleeps: a START only queues the slot's work.
 */
static void sim_write32(struct accmap_replay_session *s, u32 offset,
			u32 value)
{
	struct sim *sim = sim_of(s);
	bool raised;

	spin_lock(&sim->lock);
	raised = mali_regfile_write(&sim->rf, offset, value);
	spin_unlock(&sim->lock);

	if (raised)
		wake_up_all(&sim->irq_wait);
}

/* ---- memory ------------------------------------------------------------- */

/* The 4 KiB frame of @addr as an xarray index, or false if it has none. */
static bool sim_frame(u64 addr, unsigned long *frame)
{
	u64 f = addr >> SIM_FRAME_SHIFT;

	if (f > ULONG_MAX)
		return false;
	*frame = f;
	return true;
}

/* The walker's read64: table pages only. */
static int sim_read_table(void *priv, u64 pa, u64 *val)
{
	struct sim *sim = priv;
	unsigned long frame;
	const __le64 *p;
	int ret = -EFAULT;

	if (!IS_ALIGNED(pa, sizeof(u64)) || !sim_frame(pa, &frame))
		return -EFAULT;

	xa_lock(&sim->tables);
	p = xa_load(&sim->tables, frame);
	if (p) {
		p += (pa & (SIM_FRAME_SIZE - 1)) / sizeof(*p);
		*val = le64_to_cpu(READ_ONCE(*p));
		ret = 0;
	}
	xa_unlock(&sim->tables);
	return ret;
}

/*
 * Copies @len bytes between @buf and buffer memory at device address @pa;
 * -EFAULT if any of it is not memory the session handed over.
 *
 * In aligned 32-bit words: every access of the model is (headers,
 * payloads, int32 operands), and the kernel mapping of a buffer may be
 * uncached, which on arm64 is Device memory where an unaligned access -
 * as memcpy() may make - faults.
 */
static int sim_mem_copy(struct sim *sim, u64 va, u64 pa, void *buf,
			size_t len, bool write)
{
	u32 *b = buf;

	lockdep_assert_held(&sim->mmu_lock);
	if (!IS_ALIGNED(pa | len, sizeof(u32)))
		return -EFAULT;
	while (len) {
		size_t off = pa & (SIM_FRAME_SIZE - 1);
		size_t n = min_t(size_t, len, SIM_FRAME_SIZE - off);
		unsigned long frame;
		size_t i;
		u8 *kva;
		u32 *k;

		if (!sim_frame(pa, &frame))
			return -EFAULT;
		kva = xa_load(&sim->mem, frame);
		if (!kva) {
			/* Else only a page the session's mirror mapped there. */
			if (!sim->s->svm ||
			    accmap_svm_copy(sim->s->svm, va, pa, b, n, write))
				return -EFAULT;
			goto next;
		}
		k = (u32 *)(kva + off);
		for (i = 0; i < n / sizeof(u32); i++) {
			if (write)
				WRITE_ONCE(k[i], b[i]);
			else
				b[i] = READ_ONCE(k[i]);
		}
next:
		va += n;
		pa += n;
		b += n / sizeof(u32);
		len -= n;
	}
	return 0;
}

static void *sim_pgt_alloc(void *priv, u64 *dma)
{
	struct accmap_replay_session *s = priv;
	struct sim *sim = sim_of(s);
	unsigned long frame;
	struct page *page;
	void *va;
	u64 pa;

	if (!sim)
		return NULL;
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page)
		return NULL;
	va = page_address(page);
	pa = page_to_phys(page);
	if (!sim_frame(pa, &frame) ||
	    xa_insert(&sim->tables, frame, va, GFP_KERNEL_ACCOUNT)) {
		__free_page(page);
		return NULL;
	}
	*dma = pa;
	return va;
}

static void sim_pgt_free(void *priv, void *va, u64 dma)
{
	struct accmap_replay_session *s = priv;
	struct sim *sim = sim_of(s);
	unsigned long frame;
	void *old;

	/* After close every table page is gone already. */
	if (!sim || !sim_frame(dma, &frame))
		return;

	/* Under the lock no walk is reading the page. */
	xa_lock(&sim->tables);
	old = __xa_cmpxchg(&sim->tables, frame, va, NULL, 0);
	xa_unlock(&sim->tables);
	if (WARN_ON_ONCE(old != va))
		return;
	free_page((unsigned long)va);
}

static const struct accmap_pgt_alloc_ops sim_pgt_ops = {
	.alloc = sim_pgt_alloc,
	.free = sim_pgt_free,
};

/**
 * sim_add_memory() - let the model reach buffer memory
 * @s:   the session
 * @dma: device address of the memory
 * @kva: where the CPU reaches it
 * @len: bytes
 *
 * Only whole 4 KiB frames inside [@dma, @dma + @len) become reachable, and
 * only if @dma and @kva have the same offset in a frame; a frame already
 * known keeps its first address.  The memory must stay valid until stop
 * (or close) has returned.
 *
 * Return: 0, or -ENOMEM if the index of frames could not grow (frames
 * indexed before stay so until close).
 */
static int sim_add_memory(struct accmap_replay_session *s, u64 dma,
			  void *kva, u64 len)
{
	struct sim *sim = sim_of(s);
	u64 first, end, a;
	unsigned long frame;
	int ret;

	if ((dma ^ (unsigned long)kva) & (SIM_FRAME_SIZE - 1) ||
	    check_add_overflow(dma, len, &end))
		return 0;
	first = round_up(dma, SIM_FRAME_SIZE);
	end = round_down(end, SIM_FRAME_SIZE);
	for (a = first; a < end; a += SIM_FRAME_SIZE) {
		if (!sim_frame(a, &frame))
			return 0;
		ret = xa_insert(&sim->mem, frame, kva + (a - dma), GFP_KERNEL_ACCOUNT);
		if (ret == -ENOMEM)
			return ret;
		cond_resched();
	}
	return 0;
}

/* ---- job chains ------------------------------------------------------- */

/**
 * struct sim_chain - a chain being run by a slot's work
 * @sim:       the model
 * @gen:       the generation it started in
 * @as:        the address space (JS_CONFIG bits 3:0)
 * @format:    ACCMAP_PGT_* of the address space, or SIM_FORMAT_NONE
 * @transtab:  its latched TRANSTAB
 * @jobs:      the chain as mali_jobs.c follows it: the descriptor being
 *             run, how the chain ended, the JS_STATUS code of a failure
 * @fault_status:  after an MMU fault (MALI_JOBS_FAULT): FAULTSTATUS
 * @fault_address: after an MMU fault: FAULTADDRESS
 */
struct sim_chain {
	struct sim *sim;
	u32 gen;
	u32 as;
	u32 format;
	u64 transtab;
	struct mali_jobs_chain jobs;
	u32 fault_status;
	u64 fault_address;
};

static bool sim_aborted(struct sim_chain *ch)
{
	return READ_ONCE(ch->sim->gen) != ch->gen;
}

/* Reads the address space's latched configuration, for the next job. */
static void sim_chain_load_as(struct sim_chain *ch)
{
	struct sim *sim = ch->sim;
	struct mali_regfile_as *as = &sim->rf.as[ch->as];

	spin_lock(&sim->lock);
	ch->transtab = as->cur_transtab;
	ch->format = mali_regfile_as_format(as);
	spin_unlock(&sim->lock);
}

static int sim_mmu_fault(struct sim_chain *ch, u64 va, u32 code, u32 access)
{
	ch->fault_status = code | access << MALI_FAULT_ACCESS_SHIFT;
	ch->fault_address = va;
	return -EFAULT;
}

/*
 * Translates @va for an access of kind @access (MALI_FAULT_ACCESS_READ or
 * _WRITE): *@pa and the bytes left in the leaf.  A fault ends the chain.
 */
static int sim_translate(struct sim_chain *ch, u64 va, u32 access, u64 *pa,
			 u64 *span)
{
	u32 need = access == MALI_FAULT_ACCESS_WRITE ? ACCMAP_PGT_PERM_WRITE :
						       ACCMAP_PGT_PERM_READ;
	struct accmap_walk w;

	if (ch->format == SIM_FORMAT_NONE)
		return sim_mmu_fault(ch, va, MALI_FAULT_TRANSLATION(0), access);

	accmap_walk(ch->format, ch->transtab, va, sim_read_table, ch->sim, &w);
	switch (w.status) {
	case ACCMAP_WALK_OK:
		break;
	case ACCMAP_WALK_ACCESS_FLAG:
		return sim_mmu_fault(ch, va, MALI_FAULT_ACCESS_FLAG(w.level),
				     access);
	case ACCMAP_WALK_ADDRESS_SIZE:
		return sim_mmu_fault(ch, va,
				     MALI_FAULT_ADDRESS_SIZE_IN + min(w.level, 3U),
				     access);
	case ACCMAP_WALK_BUS:
		return sim_mmu_fault(ch, va, SIM_FAULT_TRANSTAB_BUS(w.level),
				     access);
	case ACCMAP_WALK_TRANSLATION:
		return sim_mmu_fault(ch, va, MALI_FAULT_TRANSLATION(w.level),
				     access);
	default:	/* BAD_ROOT: TRANSTAB names no tables */
		return sim_mmu_fault(ch, va, MALI_FAULT_TRANSLATION(0), access);
	}
	if (!(w.perm & need))
		return sim_mmu_fault(ch, va, MALI_FAULT_PERMISSION(w.level),
				     access);
	*pa = w.pa;
	*span = w.size - (va & (w.size - 1));
	return 0;
}

/* Whether the fault @ch just took is one a handler may service. */
static bool sim_fault_recoverable(struct sim_chain *ch)
{
	u32 type = ch->fault_status & 0xff;

	return ch->format != SIM_FORMAT_NONE &&
	       ((type & ~7U) == MALI_FAULT_TRANSLATION(0) ||
		(type & ~7U) == MALI_FAULT_PERMISSION(0));
}

/*
 * Mali's recoverable page fault: latch the fault, raise the interrupt,
 * stall the address space and run the session's handler.  Returns true
 * if the handler resumed the address space (the access is retried), false
 * if the fault stays (the chain ends stalled, as for any fault).
 */
static bool sim_recover(struct sim_chain *ch)
{
	struct sim *sim = ch->sim;
	struct mali_regfile_as *as = &sim->rf.as[ch->as];
	bool resumed;

	if (!sim->s->mmu_irq || !sim_fault_recoverable(ch))
		return false;
	spin_lock(&sim->lock);
	if (sim->gen != ch->gen || !(sim->recoverable & BIT(ch->as))) {
		spin_unlock(&sim->lock);
		return false;
	}
	mali_regfile_latch_fault(&sim->rf, ch->as, ch->fault_status,
				 ch->fault_address);
	as->stalled = true;
	sim->in_service |= BIT(ch->as);
	spin_unlock(&sim->lock);

	sim->s->mmu_irq(sim->s);

	spin_lock(&sim->lock);
	sim->in_service &= ~BIT(ch->as);
	resumed = sim->gen == ch->gen && !as->stalled;
	spin_unlock(&sim->lock);
	if (!resumed) {
		/* Waiters skipped the fault while it was in service. */
		wake_up_all(&sim->irq_wait);
		return false;
	}
	return true;
}

/*
 * Reads or writes @len bytes at GPU virtual address @va through the
 * address space, leaf by leaf.  Returns 0, or an error that ended the
 * chain: -EFAULT (MMU fault), -EIO (bus fault) or -EINTR (aborted).
 */
static int sim_access(struct sim_chain *ch, u64 va, void *buf, size_t len,
		      bool write)
{
	u32 access = write ? MALI_FAULT_ACCESS_WRITE : MALI_FAULT_ACCESS_READ;
	struct sim *sim = ch->sim;
	unsigned int retries = 0;

	while (len) {
		u64 pa, span;
		size_t n = 0;
		int ret;

		if (sim_aborted(ch))
			return -EINTR;
		spin_lock(&sim->mmu_lock);
		ret = sim_translate(ch, va, access, &pa, &span);
		if (!ret) {
			/* A frame at a time: a flush waits for one copy at most. */
			n = min_t(u64, len, min_t(u64, span, SIM_FRAME_SIZE -
						  (va & (SIM_FRAME_SIZE - 1))));
			if (sim_mem_copy(sim, va, pa, buf, n, write))
				ret = -EIO;
		}
		spin_unlock(&sim->mmu_lock);
		if (ret == -EIO)
			return ret;
		if (ret) {
			if (retries++ < SIM_FAULT_RETRIES && sim_recover(ch))
				continue;
			return ret;
		}
		retries = 0;
		va += n;
		buf += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

/* mali_jobs.c's view of the model: memory through the address space. */
static int sim_jobs_access(void *priv, u64 va, void *buf, size_t len,
			   bool write)
{
	return sim_access(priv, va, buf, len, write);
}

/* Sized by the job in user memory: a failed job, not a warning. */
static void *sim_jobs_alloc(void *priv, size_t bytes, bool zero)
{
	gfp_t gfp = GFP_KERNEL | __GFP_NOWARN;

	return zero ? kvzalloc(bytes, gfp) : kvmalloc(bytes, gfp);
}

static void sim_jobs_free(void *priv, void *p)
{
	kvfree(p);
}

static bool sim_jobs_aborted(void *priv)
{
	return sim_aborted(priv);
}

static void sim_jobs_yield(void *priv)
{
	cond_resched();
}

static const struct mali_jobs_ops sim_jobs_ops = {
	.access = sim_jobs_access,
	.alloc = sim_jobs_alloc,
	.free = sim_jobs_free,
	.aborted = sim_jobs_aborted,
	.yield = sim_jobs_yield,
};

/*
 * Follows the chain from @head, job by job (mali_jobs.c), each job with
 * the address space's configuration as the last UPDATE latched it.
 */
static void sim_chain_run(struct sim_chain *ch, u64 head)
{
	mali_jobs_chain_init(&ch->jobs, head);
	do {
		sim_chain_load_as(ch);
	} while (mali_jobs_chain_step(&ch->jobs, &sim_jobs_ops, ch));
}

/* Publishes how the chain ended; under the lock, same generation. */
static void sim_chain_finish(struct sim *sim, unsigned int slot,
			     struct sim_chain *ch)
{
	lockdep_assert_held(&sim->lock);
	/* A fault stalls the job: the slot stays ACTIVE, no job interrupt. */
	if (ch->jobs.end == MALI_JOBS_FAULT)
		mali_regfile_latch_fault(&sim->rf, ch->as, ch->fault_status,
					 ch->fault_address);
	mali_regfile_chain_end(&sim->rf, slot, ch->jobs.end, ch->jobs.code,
			       ch->jobs.jd);
}

static void sim_slot_work(struct work_struct *work)
{
	struct sim_slot *slot = container_of(work, struct sim_slot, work);
	struct sim *sim = slot->sim;
	struct mali_regfile_slot *js = &sim->rf.js[slot->index];
	struct sim_chain ch;
	u64 head;

	for (;;) {
		memset(&ch, 0, sizeof(ch));
		ch.sim = sim;

		spin_lock(&sim->lock);
		if (!js->queued || sim->dying) {
			spin_unlock(&sim->lock);
			return;
		}
		js->queued = false;
		ch.gen = sim->gen;
		ch.as = js->config & MALI_JS_CONFIG_AS_MASK;
		head = js->head;
		if (ch.as >= MALI_REGFILE_AS_COUNT) {
			ch.jobs.end = MALI_JOBS_FAILED;
			ch.jobs.code = MALI_JS_STATUS_CONFIG_FAULT;
			ch.jobs.jd = head;
			sim_chain_finish(sim, slot->index, &ch);
			spin_unlock(&sim->lock);
			wake_up_all(&sim->irq_wait);
			continue;
		}
		spin_unlock(&sim->lock);

		sim_chain_run(&ch, head);

		spin_lock(&sim->lock);
		if (sim->gen == ch.gen)
			sim_chain_finish(sim, slot->index, &ch);
		spin_unlock(&sim->lock);
		wake_up_all(&sim->irq_wait);
	}
}

/* ---- interrupts --------------------------------------------------------- */

/* MMU faults pending, but for those the handler is servicing. */
static u32 sim_mmu_pending(struct sim *sim)
{
	return sim->rf.irq_raw[ACCMAP_REPLAY_IRQ_MMU] &
	       GENMASK(MALI_REGFILE_AS_COUNT - 1, 0) &
	       ~sim->in_service;
}

/* FAILED bits raised in JOB_IRQ_RAWSTAT but those in @expected. */
static u32 sim_job_failures(struct sim *sim, u32 expected)
{
	lockdep_assert_held(&sim->lock);
	return sim->rf.irq_raw[ACCMAP_REPLAY_IRQ_JOB] &
	       (MALI_JOB_IRQ_FAILED_ALL & ~expected);
}

/* The FAILED bits a wait on @irq for @mask waits for. */
static u32 sim_expected(u32 irq, u32 mask)
{
	return irq == ACCMAP_REPLAY_IRQ_JOB ? mask : 0;
}

/* Whether wait_irq() has something to return; may take the lock. */
static bool sim_irq_ready(struct sim *sim, u32 irq, u32 mask)
{
	bool ready;

	spin_lock(&sim->lock);
	ready = (sim->rf.irq_raw[irq] & sim->rf.irq_mask[irq] & mask) ||
		sim_mmu_pending(sim) ||
		sim_job_failures(sim, sim_expected(irq, mask));
	spin_unlock(&sim->lock);
	return ready;
}

/*
 * 0: raised bits acknowledged; -EIO: MMU fault; -ECANCELED: a job failed
 * that the wait does not wait for; -EAGAIN: nothing yet.
 */
static int sim_irq_take(struct sim *sim, u32 irq, u32 mask, u32 *seen)
{
	u32 status;
	int ret;

	spin_lock(&sim->lock);
	status = sim->rf.irq_raw[irq] & sim->rf.irq_mask[irq];
	if (status & mask) {
		sim->rf.irq_raw[irq] &= ~(status & mask);
		*seen = status;
		ret = 0;
	} else if (sim_mmu_pending(sim)) {
		ret = -EIO;
	} else if (sim_job_failures(sim, sim_expected(irq, mask))) {
		ret = -ECANCELED;
	} else {
		ret = -EAGAIN;
	}
	spin_unlock(&sim->lock);
	return ret;
}

/**
 * sim_wait_irq() - wait for the model to raise an interrupt
 * @s:          the session
 * @irq:        ACCMAP_REPLAY_IRQ_*
 * @mask:       the bits of the source's STATUS (RAWSTAT & MASK) waited for
 * @timeout_us: how long at most
 * @seen:       on success, STATUS before the raised bits were cleared
 *
 * On success the raised bits of @mask are cleared in RAWSTAT.
 *
 * Return: 0; -ETIMEDOUT; -EINTR if a fatal signal came; -EIO if an MMU
 * fault is pending (and @mask of @irq is not raised); -ECANCELED if a
 * job failed (a FAILED bit of JOB_IRQ_RAWSTAT is raised) that the wait
 * does not wait for (its bit is not in @mask of ACCMAP_REPLAY_IRQ_JOB),
 * no MMU fault is pending and @mask of @irq is not raised; -EINVAL for an
 * unknown @irq.
 */
static int sim_wait_irq(struct accmap_replay_session *s, u32 irq, u32 mask,
			u32 timeout_us, u32 *seen)
{
	struct sim *sim = sim_of(s);
	long left = usecs_to_jiffies(timeout_us);
	int ret;

	if (irq >= ACCMAP_REPLAY_IRQ_COUNT)
		return -EINVAL;

	for (;;) {
		ret = sim_irq_take(sim, irq, mask, seen);
		if (ret != -EAGAIN)
			return ret;
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_killable_timeout(sim->irq_wait,
						   sim_irq_ready(sim, irq, mask),
						   left);
		if (left < 0)
			return -EINTR;
	}
}

/**
 * sim_mmu_fault_pending() - the MMU fault the model has pending, if any
 * @s: the session
 * @f: filled with the lowest address space whose fault bit is set in
 *     MMU_IRQ_RAWSTAT, its FAULTSTATUS and FAULTADDRESS
 *
 * Return: true if a fault is pending.
 */
static bool sim_mmu_fault_pending(struct accmap_replay_session *s,
				  struct accmap_replay_fault *f)
{
	struct sim *sim = sim_of(s);
	u32 pending;
	bool ret = false;

	spin_lock(&sim->lock);
	pending = sim_mmu_pending(sim);
	if (pending) {
		f->as = __ffs(pending);
		f->status = sim->rf.as[f->as].faultstatus;
		f->address = sim->rf.as[f->as].faultaddress;
		ret = true;
	}
	spin_unlock(&sim->lock);
	return ret;
}

/**
 * sim_job_failed() - a failed job the model reports, if any
 * @s:        the session
 * @expected: FAILED bits (JOB_IRQ bits 16 + slot) not to report
 * @f:        filled with the lowest slot whose FAILED bit is raised in
 *            JOB_IRQ_RAWSTAT and not in @expected (@f->as), its JS_STATUS
 *            (@f->status) and JS_HEAD (@f->address: the descriptor the
 *            chain stopped at)
 *
 * Return: true if there is one.
 */
static bool sim_job_failed(struct accmap_replay_session *s, u32 expected,
			   struct accmap_replay_fault *f)
{
	struct sim *sim = sim_of(s);
	struct mali_regfile_slot *js;
	u32 failed;
	bool ret = false;

	spin_lock(&sim->lock);
	failed = sim_job_failures(sim, expected);
	if (failed) {
		f->as = __ffs(failed) - 16;
		if (f->as < MALI_REGFILE_JS_COUNT) {
			js = &sim->rf.js[f->as];
			f->status = js->status;
			f->address = js->head;
		} else {
			/* Raised by a RAWSTAT write: no slot behind it. */
			f->status = 0;
			f->address = 0;
		}
		ret = true;
	}
	spin_unlock(&sim->lock);
	return ret;
}

/* ---- sessions ----------------------------------------------------------- */

/**
 * sim_open() - give a session its own model
 * @s: the session; its tpriv is set
 *
 * The model starts as after power-up: everything powered off, interrupts
 * clear and masked, address spaces unconfigured, slots idle.
 *
 * Return: 0 or -ENOMEM.
 */
static int sim_open(struct accmap_replay_session *s)
{
	struct sim *sim;
	unsigned int i;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL_ACCOUNT);
	if (!sim)
		return -ENOMEM;
	sim->s = s;
	spin_lock_init(&sim->lock);
	spin_lock_init(&sim->mmu_lock);
	init_waitqueue_head(&sim->irq_wait);
	xa_init(&sim->tables);
	xa_init(&sim->mem);
	for (i = 0; i < MALI_REGFILE_JS_COUNT; i++) {
		sim->js[i].sim = sim;
		sim->js[i].index = i;
		INIT_WORK(&sim->js[i].work, sim_slot_work);
	}
	mali_regfile_init(&sim->rf, &sim_rf_ops, sim);
	s->tpriv = sim;
	return 0;
}

/**
 * sim_stop() - stop a session's chains and wait for them
 * @s: the session
 *
 * A running chain stops at its next memory access or compute row and
 * publishes nothing; a START afterwards runs nothing.  When this returns
 * the model no longer touches the session's tables or buffers, so they
 * may go.  Registers stay readable.
 *
 * Return: 0: the model never fails to stop.
 */
static int sim_stop(struct accmap_replay_session *s)
{
	struct sim *sim = sim_of(s);
	unsigned int i;

	if (!sim)
		return 0;
	spin_lock(&sim->lock);
	sim->dying = true;
	WRITE_ONCE(sim->gen, sim->gen + 1);
	spin_unlock(&sim->lock);
	for (i = 0; i < MALI_REGFILE_JS_COUNT; i++)
		cancel_work_sync(&sim->js[i].work);
	return 0;
}

/**
 * sim_close() - free a session's model
 * @s: the session; its tpriv is cleared
 *
 * Stops the chains first if sim_stop() did not, then frees the table
 * pages the page-table builder has not given back (so the builder may be
 * destroyed before or after; its frees after this do nothing), and the
 * model.
 */
static void sim_close(struct accmap_replay_session *s)
{
	struct sim *sim = sim_of(s);
	unsigned long frame;
	void *va;

	if (!sim)
		return;
	sim_stop(s);
	xa_for_each(&sim->tables, frame, va)
		free_page((unsigned long)va);
	xa_destroy(&sim->tables);
	xa_destroy(&sim->mem);
	s->tpriv = NULL;
	kfree(sim);
}

/**
 * sim_svm_enable() - make the session's faults recoverable
 * @s: an SVM session, its mmu_irq set
 *
 * Return: 0.
 */
static int sim_svm_enable(struct accmap_replay_session *s)
{
	struct sim *sim = sim_of(s);

	spin_lock(&sim->lock);
	sim->recoverable |= BIT(s->as);
	spin_unlock(&sim->lock);
	return 0;
}

/**
 * sim_svm_flush() - wait for accesses that may use cleared entries
 * @s: the session
 *
 * The model caches no translation: an access translates and copies under
 * @mmu_lock, so once the lock has been had, every later access walks the
 * tables as they are now.
 *
 * Return: 0.
 */
static int sim_svm_flush(struct accmap_replay_session *s)
{
	struct sim *sim = sim_of(s);

	spin_lock(&sim->mmu_lock);
	spin_unlock(&sim->mmu_lock);
	return 0;
}

/*
 * Translates @va through the session's tables with the walk every access
 * of the model makes (sim_translate()), from the root the session's
 * WRITE_ROOT ops install.
 */
static void sim_walk(struct accmap_replay_session *s, u64 va,
		     struct accmap_walk *w)
{
	accmap_walk(s->format, s->root, va, sim_read_table, sim_of(s), w);
}

/*
 * The model's target operations.  Device addresses are CPU physical
 * addresses (no dma_dev); table pages come from sim_pgt_ops.
 */
const struct accmap_replay_target_ops accmap_sim_ops = {
	.open = sim_open,
	.stop = sim_stop,
	.close = sim_close,
	.pgt_alloc = &sim_pgt_ops,
	.add_memory = sim_add_memory,
	.read32 = sim_read32,
	.write32 = sim_write32,
	.wait_irq = sim_wait_irq,
	.mmu_fault = sim_mmu_fault_pending,
	.job_failed = sim_job_failed,
	.svm_enable = sim_svm_enable,
	.svm_flush = sim_svm_flush,
	.walk = sim_walk,
};

/**
 * accmap_sim_target_init() - describe the software Mali model as a target
 * @target: filled in: name "sim", flags SIM|IRQ|SVM, the Mali register window,
 *          both page-table formats, 8 address spaces, the Mali-G71 GPU_ID
 *          and &accmap_sim_ops
 *
 * The model keeps no state of its own outside sessions.
 *
 * Return: 0.
 */
int accmap_sim_target_init(struct accmap_replay_target *target)
{
	target->name = "sim";
	target->flags = ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ |
			ACCMAP_REPLAY_TARGET_SVM;
	target->window_size = MALI_WINDOW_SIZE;
	target->formats = BIT(ACCMAP_PGT_MALI_AARCH64_4K) |
			  BIT(ACCMAP_PGT_MALI_LPAE);
	target->as_count = MALI_REGFILE_AS_COUNT;
	target->gpu_id = MALI_REGFILE_GPU_ID;
	target->ops = &accmap_sim_ops;
	target->priv = NULL;
	atomic_set(&target->sessions, 0);
	return 0;
}

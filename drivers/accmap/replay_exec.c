// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the replay executor, which runs register operations on a target.
 *
 * The caller (replay.c) holds the session's run lock, has begun the run on
 * the target, and hands over the operations, copied from user space and
 * checked before the run began, in chunks.  Each is checked again here,
 * its form and the session's isolation rules, right before it runs: the
 * executor is the last place an op passes before it reaches the GPU.
 *
 * Every wait is bounded: POLL and WAIT_IRQ by the op's timeout (at most
 * ACCMAP_REPLAY_TIMEOUT_MAX_US), DELAY by ACCMAP_REPLAY_DELAY_MAX_US.
 * Sleeps are short (at most REPLAY_SLEEP_MAX_US), so a fatal signal ends a
 * run within about that long; between operations the executor yields the
 * CPU, since a run can hold a million register writes.
 *
 * Faults: the GPU's MMU may fault at any time after a job starts.  The
 * target is asked after every POLL, WAIT_IRQ and DELAY (the ops during
 * which a job runs) and at the end of every chunk; a fault stops the run
 * and is charged to the op after which it was seen.
 *
 * Failed jobs: a job chain that fails raises its slot's FAILED bit in
 * JOB_IRQ_RAWSTAT.  A POLL or WAIT_IRQ ends on one at once, and the
 * target is asked after every POLL, WAIT_IRQ and DELAY; a failure stops
 * the run (ACCMAP_REPLAY_JOB_FAILED) unless the op waited for that very
 * bit.  A pending MMU fault wins: it is why the job failed.
 *
 * Captured values: a READ with ACCMAP_REPLAY_OP_CAPTURE keeps what it
 * read in the session (until the next one, across runs), and a later
 * WRITE with ACCMAP_REPLAY_OP_CAPTURED writes it, checked against the
 * session's rules right before; with nothing kept yet, that WRITE is
 * malformed.
 */

#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "mali_regs.h"
#include "replay.h"

/* Longest single sleep: how late a POLL sees its register or a signal. */
#define REPLAY_SLEEP_MAX_US	1000U
/* First sleep of a POLL; each next one is twice as long. */
#define REPLAY_SLEEP_MIN_US	10

/* Fields of struct accmap_replay_op that an op uses. */
#define REPLAY_F_OFFSET		BIT(0)
#define REPLAY_F_VALUE		BIT(1)
#define REPLAY_F_MASK		BIT(2)
#define REPLAY_F_TIMEOUT	BIT(3)
#define REPLAY_F_IRQ		BIT(4)

/**
 * struct replay_op_shape - what one kind of op takes
 * @fields:      REPLAY_F_*; every other field must be 0
 * @flags:       the ACCMAP_REPLAY_OP_* flags it takes
 * @timeout_min: least @timeout_us, if it takes one
 * @timeout_max: most @timeout_us, if it takes one
 */
struct replay_op_shape {
	u8 fields;
	u8 flags;
	u32 timeout_min;
	u32 timeout_max;
};

static const struct replay_op_shape replay_op_shapes[] = {
	[ACCMAP_REPLAY_OP_WRITE] = {
		.fields = REPLAY_F_OFFSET | REPLAY_F_VALUE,
		.flags = ACCMAP_REPLAY_OP_CAPTURED,
	},
	[ACCMAP_REPLAY_OP_READ] = {
		.fields = REPLAY_F_OFFSET | REPLAY_F_VALUE | REPLAY_F_MASK,
		.flags = ACCMAP_REPLAY_OP_STRICT | ACCMAP_REPLAY_OP_CAPTURE,
	},
	[ACCMAP_REPLAY_OP_POLL] = {
		.fields = REPLAY_F_OFFSET | REPLAY_F_VALUE | REPLAY_F_MASK |
			  REPLAY_F_TIMEOUT,
		.timeout_min = 1,
		.timeout_max = ACCMAP_REPLAY_TIMEOUT_MAX_US,
	},
	[ACCMAP_REPLAY_OP_WAIT_IRQ] = {
		.fields = REPLAY_F_MASK | REPLAY_F_TIMEOUT | REPLAY_F_IRQ,
		.timeout_min = 1,
		.timeout_max = ACCMAP_REPLAY_TIMEOUT_MAX_US,
	},
	[ACCMAP_REPLAY_OP_DELAY] = {
		.fields = REPLAY_F_TIMEOUT,
		.timeout_max = ACCMAP_REPLAY_DELAY_MAX_US,
	},
	[ACCMAP_REPLAY_OP_WRITE_ROOT] = {
		.fields = REPLAY_F_OFFSET,
		.flags = ACCMAP_REPLAY_OP_HI,
	},
};

static bool replay_offset_ok(u32 offset, u32 window_size)
{
	return IS_ALIGNED(offset, 4) && window_size >= 4 &&
	       offset <= window_size - 4;
}

/**
 * accmap_replay_check_op() - check one operation against its uAPI contract
 * @op:          the operation, in kernel memory
 * @window_size: bytes in the target's register window
 *
 * Every field is checked as struct accmap_replay_op describes it: a known
 * @op->op; only the flags that op takes; for WRITE, READ, POLL and
 * WRITE_ROOT a 4-byte aligned offset with the whole register inside the
 * window; WAIT_IRQ a known interrupt source and a non-zero mask; POLL and
 * WAIT_IRQ a timeout of 1 to ACCMAP_REPLAY_TIMEOUT_MAX_US, DELAY one of 0
 * to ACCMAP_REPLAY_DELAY_MAX_US; ACCMAP_REPLAY_OP_CAPTURE only on a READ
 * without ACCMAP_REPLAY_OP_STRICT, ACCMAP_REPLAY_OP_CAPTURED only on a
 * WRITE whose @value is 0; and 0 in every field the op does not use, pad
 * included.  That a CAPTURED WRITE has a value to write (a CAPTURE READ
 * ran in the session before it) is checked by the executor when it runs.
 *
 * Return: 0, or -EINVAL.
 */
int accmap_replay_check_op(const struct accmap_replay_op *op, u32 window_size)
{
	const struct replay_op_shape *shape;
	u32 f;

	if (!op->op || op->op >= ARRAY_SIZE(replay_op_shapes) || op->pad)
		return -EINVAL;
	shape = &replay_op_shapes[array_index_nospec(op->op,
						     ARRAY_SIZE(replay_op_shapes))];
	f = shape->fields;

	if (op->flags & ~shape->flags)
		return -EINVAL;
	if ((!(f & REPLAY_F_OFFSET) && op->offset) ||
	    (!(f & REPLAY_F_VALUE) && op->value) ||
	    (!(f & REPLAY_F_MASK) && op->mask) ||
	    (!(f & REPLAY_F_TIMEOUT) && op->timeout_us) ||
	    (!(f & REPLAY_F_IRQ) && op->irq))
		return -EINVAL;

	if ((f & REPLAY_F_OFFSET) && !replay_offset_ok(op->offset, window_size))
		return -EINVAL;
	if ((f & REPLAY_F_TIMEOUT) && (op->timeout_us < shape->timeout_min ||
				       op->timeout_us > shape->timeout_max))
		return -EINVAL;
	/* A wait for no interrupt bit could only time out. */
	if ((f & REPLAY_F_IRQ) &&
	    (op->irq >= ACCMAP_REPLAY_IRQ_COUNT || !op->mask))
		return -EINVAL;
	/* A strict READ checks a value; a capturing one takes whatever comes. */
	if ((op->flags & ACCMAP_REPLAY_OP_CAPTURE) &&
	    (op->flags & ACCMAP_REPLAY_OP_STRICT))
		return -EINVAL;
	/* The value written is the captured one: @value says nothing. */
	if ((op->flags & ACCMAP_REPLAY_OP_CAPTURED) && op->value)
		return -EINVAL;
	return 0;
}

/* Bytes between address space blocks, and between job slots. */
#define REPLAY_AS_STRIDE	(MALI_AS_BASE(1) - MALI_AS_BASE(0))
#define REPLAY_JS_STRIDE	(MALI_JS_BASE(1) - MALI_JS_BASE(0))

/*
 * Input address bits of the tables the kernel builds: always four levels
 * from a level-0 root (replay_pgtable.c), whatever the session's va_bits.
 */
#define REPLAY_TABLE_IA_BITS	48

/* TRANSCFG_LO bits a session chooses: how its table walks use caches. */
#define REPLAY_TRANSCFG_POLICY	(MALI_TRANSCFG_PTW_MEMATTR_MASK |	\
				 MALI_TRANSCFG_PTW_SH_MASK |		\
				 MALI_TRANSCFG_PTW_RA)

/* PRFCNT_CONFIG: mode in bits 1:0, 0 for off. */
#define REPLAY_PRFCNT_MODE_MASK	GENMASK(1, 0)

/* How long an address space may stay busy when the kernel releases it. */
#define REPLAY_AS_IDLE_TIMEOUT_US	100000

/*
 * A TRANSCFG_LO value the session may write: its own format's mode or
 * unmapped; an input address size that walks the four levels the kernel
 * built (a smaller one starts the walk lower down, where the GPU would
 * take the kernel's tables for leaves and buffer memory for tables); no
 * output size, no concatenated first level, a defined walk attribute, and
 * nothing in reserved bits.
 */
static bool replay_transcfg_ok(const struct accmap_replay_session *s, u32 v)
{
	u32 mode = v & MALI_TRANSCFG_ADRMODE_MASK;
	u32 ina = v & MALI_TRANSCFG_INA_BITS_MASK;
	u32 own = s->format == ACCMAP_PGT_MALI_AARCH64_4K ?
		  MALI_TRANSCFG_ADRMODE_AARCH64_4K : MALI_TRANSCFG_ADRMODE_LEGACY;

	if (mode != own && mode != MALI_TRANSCFG_ADRMODE_UNMAPPED)
		return false;
	if (ina && ina != MALI_TRANSCFG_INA_BITS(REPLAY_TABLE_IA_BITS))
		return false;
	if ((v & MALI_TRANSCFG_PTW_MEMATTR_MASK) == MALI_TRANSCFG_PTW_MEMATTR_MASK)
		return false;
	return !(v & ~(MALI_TRANSCFG_ADRMODE_MASK | MALI_TRANSCFG_INA_BITS_MASK |
		       REPLAY_TRANSCFG_POLICY));
}

/*
 * The rules for a register of an address space block: @as, @reg in it;
 * @known: @op->value is the value written.
 */
static int replay_check_as_op(const struct accmap_replay_session *s,
			      const struct accmap_replay_op *op, u32 as, u32 reg,
			      bool known)
{
	if (as != s->as)
		return -EINVAL;
	switch (reg) {
	case MALI_AS_TRANSTAB_LO:
		return op->op == ACCMAP_REPLAY_OP_WRITE_ROOT &&
		       !(op->flags & ACCMAP_REPLAY_OP_HI) ? 0 : -EINVAL;
	case MALI_AS_TRANSTAB_HI:
		return op->op == ACCMAP_REPLAY_OP_WRITE_ROOT &&
		       (op->flags & ACCMAP_REPLAY_OP_HI) ? 0 : -EINVAL;
	case MALI_AS_TRANSCFG_LO:
		if (op->op == ACCMAP_REPLAY_OP_WRITE && known &&
		    !replay_transcfg_ok(s, op->value))
			return -EINVAL;
		break;
	case MALI_AS_TRANSCFG_HI:
		/* Permission-model switches: the kernel's tables assume none. */
		if (op->op == ACCMAP_REPLAY_OP_WRITE && known && op->value)
			return -EINVAL;
		break;
	}
	return op->op == ACCMAP_REPLAY_OP_WRITE_ROOT ? -EINVAL : 0;
}

/**
 * accmap_replay_check_session_op() - check an op against the session's
 * isolation rules
 * @s:  the session; its @as and @format are used
 * @op: an operation that passed accmap_replay_check_op()
 *
 * A session may program only its own address space, on the Mali register
 * map, whatever the target:
 *
 * - no op touches the registers of another address space;
 * - WRITE_ROOT goes only to the session's TRANSTAB_LO (TRANSTAB_HI with
 *   ACCMAP_REPLAY_OP_HI), and no other op reads or writes TRANSTAB, so
 *   the root never reaches user space and no op list points the GPU at
 *   tables the kernel did not build;
 * - a WRITE of TRANSCFG_LO selects the session's format or unmapped mode,
 *   the input address size of the kernel's four-level tables (or 0, the
 *   reset value) and nothing else but the table walk's cache policy
 *   (PTW_MEMATTR, PTW_SH, PTW_RA); TRANSCFG_HI is written only with 0;
 * - a WRITE of a job slot's CONFIG or CONFIG_NEXT selects the session's
 *   address space, and so does one of PRFCNT_CONFIG that turns the
 *   performance counters on (they dump into an address space).
 *
 * MEMATTR and the other registers of the session's own address space are
 * free.  The executor checks every op again with this before it runs it.
 *
 * A WRITE with ACCMAP_REPLAY_OP_CAPTURED has no value yet: the rules on
 * values are left out for it, and the executor checks it again right
 * before the write, with the captured value in @value and the flag clear.
 *
 * Return: 0, or -EINVAL.
 */
int accmap_replay_check_session_op(const struct accmap_replay_session *s,
				   const struct accmap_replay_op *op)
{
	bool known = !(op->flags & ACCMAP_REPLAY_OP_CAPTURED);
	u32 off = op->offset;
	u32 reg;

	switch (op->op) {
	case ACCMAP_REPLAY_OP_WRITE:
	case ACCMAP_REPLAY_OP_READ:
	case ACCMAP_REPLAY_OP_POLL:
	case ACCMAP_REPLAY_OP_WRITE_ROOT:
		break;
	default:
		return 0;	/* no register */
	}

	if (off >= MALI_AS_BASE(0) && off < MALI_AS_BASE(MALI_AS_COUNT))
		return replay_check_as_op(s, op,
					  (off - MALI_AS_BASE(0)) / REPLAY_AS_STRIDE,
					  (off - MALI_AS_BASE(0)) % REPLAY_AS_STRIDE,
					  known);
	if (op->op == ACCMAP_REPLAY_OP_WRITE_ROOT)
		return -EINVAL;
	if (op->op != ACCMAP_REPLAY_OP_WRITE || !known)
		return 0;

	if (off >= MALI_JS_BASE(0) && off < MALI_JS_BASE(MALI_JOB_SLOTS)) {
		reg = (off - MALI_JS_BASE(0)) % REPLAY_JS_STRIDE;
		if ((reg == MALI_JS_CONFIG || reg == MALI_JS_CONFIG_NEXT) &&
		    (op->value & MALI_JS_CONFIG_AS_MASK) != s->as)
			return -EINVAL;
	}
	if (off == MALI_PRFCNT_CONFIG &&
	    (op->value & REPLAY_PRFCNT_MODE_MASK) &&
	    FIELD_GET(MALI_PRFCNT_CONFIG_AS_MASK, op->value) != s->as)
		return -EINVAL;
	return 0;
}

/* Waits until the address space has no command in progress. */
static int replay_as_idle(struct accmap_replay_session *s, u32 base)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	ktime_t deadline = ktime_add_us(ktime_get(), REPLAY_AS_IDLE_TIMEOUT_US);

	for (;;) {
		bool late = ktime_after(ktime_get(), deadline);

		if (!(t->read32(s, base + MALI_AS_STATUS) & MALI_AS_STATUS_ACTIVE))
			return 0;
		if (late)
			return -ETIMEDOUT;
		usleep_range(10, 100);
	}
}

/**
 * accmap_replay_release_as() - point the session's address space at nothing
 * @s: the session; the caller holds its run lock and has begun a run
 *
 * Clears TRANSTAB, sets TRANSCFG to unmapped and makes the MMU take them
 * (AS_COMMAND UPDATE once the address space is idle), so that nothing
 * after this, another session on the same registers included, inherits a
 * pointer to the session's tables.  Jobs of the session still running
 * fault from here on.
 *
 * Return: 0, or -ETIMEDOUT if the address space stayed busy (the UPDATE
 * is written anyway; the GPU may not have taken it).
 */
int accmap_replay_release_as(struct accmap_replay_session *s)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	u32 base = MALI_AS_BASE(s->as);
	int ret, idle;

	t->write32(s, base + MALI_AS_TRANSTAB_LO, 0);
	t->write32(s, base + MALI_AS_TRANSTAB_HI, 0);
	t->write32(s, base + MALI_AS_TRANSCFG_LO, MALI_TRANSCFG_ADRMODE_UNMAPPED);
	t->write32(s, base + MALI_AS_TRANSCFG_HI, 0);
	ret = replay_as_idle(s, base);
	t->write32(s, base + MALI_AS_COMMAND, MALI_AS_CMD_UPDATE);
	idle = replay_as_idle(s, base);
	return ret ?: idle;
}

/* The value of a READ or POLL matches under its mask. */
static bool replay_match(const struct accmap_replay_op *op, u32 v)
{
	return (v & op->mask) == (op->value & op->mask);
}

/* Sleeps about @us, but not past @deadline. */
static void replay_sleep(ktime_t deadline, u32 us)
{
	s64 left = ktime_us_delta(deadline, ktime_get());

	if (left <= 0)
		return;
	us = clamp_t(s64, left, 1, us);
	usleep_range(us, us + us / 4 + 1);
}

/* If the target reports an MMU fault, records it in @res. */
static bool replay_faulted(struct accmap_replay_session *s,
			   struct accmap_replay_result *res)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	struct accmap_replay_fault f = { .as = U32_MAX };

	if (!t->mmu_fault || !t->mmu_fault(s, &f))
		return false;
	res->fault = f;
	return true;
}

/*
 * The FAILED bits of JOB_IRQ @op waits for: those of its mask if it is a
 * WAIT_IRQ of the job interrupt or a POLL of its RAWSTAT or STATUS.
 */
static u32 replay_failed_expected(const struct accmap_replay_op *op)
{
	bool job;

	if (op->op == ACCMAP_REPLAY_OP_WAIT_IRQ)
		job = op->irq == ACCMAP_REPLAY_IRQ_JOB;
	else if (op->op == ACCMAP_REPLAY_OP_POLL)
		job = op->offset == MALI_JOB_IRQ_RAWSTAT ||
		      op->offset == MALI_JOB_IRQ_STATUS;
	else
		job = false;
	return job ? op->mask & MALI_JOB_IRQ_FAILED_ALL : 0;
}

/* If the target reports a job failure @op did not wait for, fills @f. */
static bool replay_job_failed(struct accmap_replay_session *s,
			      const struct accmap_replay_op *op,
			      struct accmap_replay_fault *f)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	struct accmap_replay_fault jf = { .as = U32_MAX };

	if (!t->job_failed ||
	    !t->job_failed(s, replay_failed_expected(op), &jf))
		return false;
	*f = jf;
	return true;
}

static u32 replay_poll(struct accmap_replay_session *s,
		       const struct accmap_replay_op *op, u32 *value,
		       struct accmap_replay_fault *failed)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	ktime_t deadline = ktime_add_us(ktime_get(), op->timeout_us);
	u32 us = REPLAY_SLEEP_MIN_US;

	for (;;) {
		/* The last read is always after the deadline: no early miss. */
		bool late = ktime_after(ktime_get(), deadline);

		*value = t->read32(s, op->offset);
		if (replay_match(op, *value))
			return ACCMAP_REPLAY_OK;
		/* A failed job will not bring what the POLL waits for. */
		if (replay_job_failed(s, op, failed))
			return ACCMAP_REPLAY_JOB_FAILED;
		if (late)
			return ACCMAP_REPLAY_TIMEOUT;
		if (fatal_signal_pending(current))
			return ACCMAP_REPLAY_SIGNAL;
		replay_sleep(deadline, us);
		us = min(2 * us, REPLAY_SLEEP_MAX_US);
	}
}

static u32 replay_delay(u32 timeout_us)
{
	ktime_t deadline = ktime_add_us(ktime_get(), timeout_us);

	while (ktime_before(ktime_get(), deadline)) {
		if (fatal_signal_pending(current))
			return ACCMAP_REPLAY_SIGNAL;
		replay_sleep(deadline, REPLAY_SLEEP_MAX_US);
	}
	return ACCMAP_REPLAY_OK;
}

static u32 replay_wait_irq(struct accmap_replay_session *s,
			   const struct accmap_replay_op *op, u32 *value)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	int ret;

	ret = t->wait_irq(s, op->irq, op->mask, op->timeout_us, value);
	switch (ret) {
	case 0:
		return ACCMAP_REPLAY_OK;
	case -ETIMEDOUT:
		return ACCMAP_REPLAY_TIMEOUT;
	case -EINTR:
		return ACCMAP_REPLAY_SIGNAL;
	case -EIO:
		/* The fault itself is fetched by the check after the op. */
		return ACCMAP_REPLAY_MMU_FAULT;
	case -ECANCELED:
		/* So is the failed job. */
		return ACCMAP_REPLAY_JOB_FAILED;
	}
	/* Not in the target contract: say the op could not run. */
	return ACCMAP_REPLAY_INVALID;
}

/*
 * A CAPTURED WRITE with the session's captured value in place: checked
 * again against the session's rules now that its value is known.
 */
static u32 replay_captured_write(struct accmap_replay_session *s,
				 const struct accmap_replay_op *op)
{
	struct accmap_replay_op w = *op;

	if (!s->captured)
		return ACCMAP_REPLAY_INVALID;
	w.value = s->capture;
	w.flags &= ~ACCMAP_REPLAY_OP_CAPTURED;
	if (accmap_replay_check_session_op(s, &w))
		return ACCMAP_REPLAY_INVALID;
	s->target->ops->write32(s, w.offset, w.value);
	return ACCMAP_REPLAY_OK;
}

/*
 * Runs one checked op and sets *@value to what it read, if anything, and
 * *@failed to a failed job a POLL saw.  Returns ACCMAP_REPLAY_OK or why it
 * failed.
 */
static u32 replay_one(struct accmap_replay_session *s,
		      const struct accmap_replay_op *op, u32 *value,
		      struct accmap_replay_fault *failed)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	u32 v;

	switch (op->op) {
	case ACCMAP_REPLAY_OP_WRITE:
		if (op->flags & ACCMAP_REPLAY_OP_CAPTURED)
			return replay_captured_write(s, op);
		t->write32(s, op->offset, op->value);
		return ACCMAP_REPLAY_OK;
	case ACCMAP_REPLAY_OP_READ:
		*value = t->read32(s, op->offset);
		if (op->flags & ACCMAP_REPLAY_OP_CAPTURE) {
			s->capture = *value;
			s->captured = true;
		}
		if ((op->flags & ACCMAP_REPLAY_OP_STRICT) &&
		    !replay_match(op, *value))
			return ACCMAP_REPLAY_MISMATCH;
		return ACCMAP_REPLAY_OK;
	case ACCMAP_REPLAY_OP_POLL:
		return replay_poll(s, op, value, failed);
	case ACCMAP_REPLAY_OP_WAIT_IRQ:
		return replay_wait_irq(s, op, value);
	case ACCMAP_REPLAY_OP_DELAY:
		return replay_delay(op->timeout_us);
	case ACCMAP_REPLAY_OP_WRITE_ROOT:
		v = (op->flags & ACCMAP_REPLAY_OP_HI) ? upper_32_bits(s->root) :
							lower_32_bits(s->root);
		t->write32(s, op->offset, v);
		return ACCMAP_REPLAY_OK;
	}
	return ACCMAP_REPLAY_INVALID;
}

/* Whether the MMU and the job slots are asked right after @op. */
static bool replay_check_fault_after(const struct accmap_replay_op *op)
{
	return op->op == ACCMAP_REPLAY_OP_POLL ||
	       op->op == ACCMAP_REPLAY_OP_WAIT_IRQ ||
	       op->op == ACCMAP_REPLAY_OP_DELAY;
}

/*
 * The checks after @op, which ended with @reason: a pending MMU fault,
 * then (after a POLL, WAIT_IRQ or DELAY) a failed job, replace an OK, a
 * timeout or each other; @failed is a failure the op itself saw.
 */
static u32 replay_after(struct accmap_replay_session *s,
			const struct accmap_replay_op *op, u32 reason,
			const struct accmap_replay_fault *failed,
			struct accmap_replay_result *res)
{
	struct accmap_replay_fault jf = *failed;

	if (reason != ACCMAP_REPLAY_OK && reason != ACCMAP_REPLAY_TIMEOUT &&
	    reason != ACCMAP_REPLAY_MMU_FAULT &&
	    reason != ACCMAP_REPLAY_JOB_FAILED)
		return reason;
	/* A job that faulted explains a timeout or a failure better. */
	if (replay_faulted(s, res))
		return ACCMAP_REPLAY_MMU_FAULT;
	if (replay_check_fault_after(op) &&
	    ((reason == ACCMAP_REPLAY_JOB_FAILED && jf.as != U32_MAX) ||
	     replay_job_failed(s, op, &jf))) {
		res->fault = jf;
		return ACCMAP_REPLAY_JOB_FAILED;
	}
	/* The target said fault or failure but names none. */
	if (reason == ACCMAP_REPLAY_MMU_FAULT ||
	    reason == ACCMAP_REPLAY_JOB_FAILED)
		res->fault = (struct accmap_replay_fault) { .as = U32_MAX };
	return reason;
}

static int replay_errno(u32 reason)
{
	switch (reason) {
	case ACCMAP_REPLAY_MISMATCH:
	case ACCMAP_REPLAY_MMU_FAULT:
	case ACCMAP_REPLAY_JOB_FAILED:
		return -EIO;
	case ACCMAP_REPLAY_TIMEOUT:
		return -ETIMEDOUT;
	case ACCMAP_REPLAY_SIGNAL:
		return -EINTR;
	}
	return -EINVAL;
}

/**
 * accmap_replay_exec() - run a chunk of register operations
 * @s:     the session; the caller holds @s->run_lock and has begun the run
 * @ops:   @n operations, in kernel memory
 * @n:     how many
 * @first: index of @ops[0] in the whole run, for @res->failed_op
 * @res:   the run's result so far: @res->done grows by the ops completed,
 *         @res->value holds what the last READ, POLL or WAIT_IRQ read
 *         (so on success, what the run's last one read); on failure
 *         @res->failed_op, @res->reason, @res->value (what the failed op
 *         read, 0 if it read nothing) and, for an MMU fault or a failed
 *         job, @res->fault are set
 *
 * Runs the ops in order, each checked again first (its form and the
 * session's rules; a CAPTURED WRITE once more with the value the session
 * keeps, right before it is written; with none kept, it is invalid).
 * READ and POLL compare under the op's mask on both sides (bits of
 * @value outside @mask do not matter); a READ that does not match fails
 * the run only with ACCMAP_REPLAY_OP_STRICT.  After
 * every POLL, WAIT_IRQ and DELAY, and after the chunk's last op, a
 * pending MMU fault stops the run; the op after which it is seen is the
 * failed op and does not count as done.  A POLL or WAIT_IRQ ends at once
 * on a failed job it does not wait for (a FAILED bit of JOB_IRQ outside
 * the mask of a WAIT_IRQ of the job interrupt or of a POLL of its RAWSTAT
 * or STATUS), and one is looked for after every POLL, WAIT_IRQ and DELAY:
 * it stops the run with ACCMAP_REPLAY_JOB_FAILED, @res->fault holding the
 * slot, its JS_STATUS and JS_HEAD.  A POLL or WAIT_IRQ that times out
 * with a fault or failure pending reports that: it is why the wait
 * failed; an MMU fault wins over a failed job.
 * A fatal signal stops the run between ops and during waits.
 *
 * Return: 0 if every op ran; -EINVAL (ACCMAP_REPLAY_INVALID, also for a
 * target error outside its contract), -EIO (ACCMAP_REPLAY_MISMATCH,
 * ACCMAP_REPLAY_MMU_FAULT or ACCMAP_REPLAY_JOB_FAILED), -ETIMEDOUT
 * (ACCMAP_REPLAY_TIMEOUT) or -EINTR (ACCMAP_REPLAY_SIGNAL).
 */
int accmap_replay_exec(struct accmap_replay_session *s,
		       const struct accmap_replay_op *ops, u32 n, u32 first,
		       struct accmap_replay_result *res)
{
	u32 reason = ACCMAP_REPLAY_OK;
	u32 value = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		const struct accmap_replay_op *op = &ops[i];
		struct accmap_replay_fault failed = { .as = U32_MAX };

		value = 0;
		cond_resched();
		if (fatal_signal_pending(current)) {
			reason = ACCMAP_REPLAY_SIGNAL;
			break;
		}
		if (accmap_replay_check_op(op, s->target->window_size) ||
		    accmap_replay_check_session_op(s, op)) {
			reason = ACCMAP_REPLAY_INVALID;
			break;
		}
		reason = replay_one(s, op, &value, &failed);
		if (op->op == ACCMAP_REPLAY_OP_READ ||
		    op->op == ACCMAP_REPLAY_OP_POLL ||
		    op->op == ACCMAP_REPLAY_OP_WAIT_IRQ)
			res->value = value;
		if (reason == ACCMAP_REPLAY_OK &&
		    !replay_check_fault_after(op) && i != n - 1) {
			res->done++;
			continue;
		}
		reason = replay_after(s, op, reason, &failed, res);
		if (reason != ACCMAP_REPLAY_OK)
			break;
		res->done++;
	}
	if (reason == ACCMAP_REPLAY_OK)
		return 0;

	res->failed_op = first + i;
	res->reason = reason;
	res->value = value;
	return replay_errno(reason);
}

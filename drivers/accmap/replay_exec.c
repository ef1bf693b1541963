// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the replay executor, which runs register operations on a target.
 *
 * The caller (replay.c) holds the session's run lock, has begun the run on
 * the target, and hands over the operations in chunks copied from user
 * space.  Every operation was checked when it was copied; it is checked
 * again here because user memory may have changed between the caller's
 * check and its copy of the chunk.
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
 */

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

#include "replay.h"

/* Longest single sleep: how late a POLL sees its register or a signal. */
#define REPLAY_SLEEP_MAX_US	1000
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
	},
	[ACCMAP_REPLAY_OP_READ] = {
		.fields = REPLAY_F_OFFSET | REPLAY_F_VALUE | REPLAY_F_MASK,
		.flags = ACCMAP_REPLAY_OP_STRICT,
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
 * to ACCMAP_REPLAY_DELAY_MAX_US; and 0 in every field the op does not use,
 * pad included.
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
	return 0;
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

static u32 replay_poll(struct accmap_replay_session *s,
		       const struct accmap_replay_op *op, u32 *value)
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
	}
	/* Not in the target contract: say the op could not run. */
	return ACCMAP_REPLAY_INVALID;
}

/*
 * Runs one checked op and sets *@value to what it read, if anything.
 * Returns ACCMAP_REPLAY_OK or why it failed.
 */
static u32 replay_one(struct accmap_replay_session *s,
		      const struct accmap_replay_op *op, u32 *value)
{
	const struct accmap_replay_target_ops *t = s->target->ops;
	u32 v;

	switch (op->op) {
	case ACCMAP_REPLAY_OP_WRITE:
		t->write32(s, op->offset, op->value);
		return ACCMAP_REPLAY_OK;
	case ACCMAP_REPLAY_OP_READ:
		*value = t->read32(s, op->offset);
		if ((op->flags & ACCMAP_REPLAY_OP_STRICT) &&
		    !replay_match(op, *value))
			return ACCMAP_REPLAY_MISMATCH;
		return ACCMAP_REPLAY_OK;
	case ACCMAP_REPLAY_OP_POLL:
		return replay_poll(s, op, value);
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

/* Whether the MMU is asked right after @op. */
static bool replay_check_fault_after(const struct accmap_replay_op *op)
{
	return op->op == ACCMAP_REPLAY_OP_POLL ||
	       op->op == ACCMAP_REPLAY_OP_WAIT_IRQ ||
	       op->op == ACCMAP_REPLAY_OP_DELAY;
}

static int replay_errno(u32 reason)
{
	switch (reason) {
	case ACCMAP_REPLAY_MISMATCH:
	case ACCMAP_REPLAY_MMU_FAULT:
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
 * @res:   the run's result so far: @res->done grows by the ops completed
 *         and @res->value holds what the last READ, POLL or WAIT_IRQ
 *         read; on failure @res->failed_op, @res->reason, @res->value
 *         (what the failed op read, 0 if it read nothing) and, for an
 *         MMU fault, @res->fault are set
 *
 * Runs the ops in order, each checked again first.  READ and POLL compare
 * under the op's mask on both sides (bits of @value outside @mask do not
 * matter); a READ that does not match fails the run only with
 * ACCMAP_REPLAY_OP_STRICT.  After every POLL, WAIT_IRQ and DELAY, and
 * after the chunk's last op, a pending MMU fault stops the run; the op
 * after which it is seen is the failed op and does not count as done.
 * A POLL or WAIT_IRQ that times out with a fault pending reports the
 * fault: a job that faulted is why the wait failed.
 * A fatal signal stops the run between ops and during waits.
 *
 * Return: 0 if every op ran; -EINVAL (ACCMAP_REPLAY_INVALID, also for a
 * target error outside its contract), -EIO (ACCMAP_REPLAY_MISMATCH or
 * ACCMAP_REPLAY_MMU_FAULT), -ETIMEDOUT (ACCMAP_REPLAY_TIMEOUT) or -EINTR
 * (ACCMAP_REPLAY_SIGNAL).
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

		value = 0;
		cond_resched();
		if (fatal_signal_pending(current)) {
			reason = ACCMAP_REPLAY_SIGNAL;
			break;
		}
		if (accmap_replay_check_op(op, s->target->window_size)) {
			reason = ACCMAP_REPLAY_INVALID;
			break;
		}
		reason = replay_one(s, op, &value);
		if (op->op == ACCMAP_REPLAY_OP_READ ||
		    op->op == ACCMAP_REPLAY_OP_POLL ||
		    op->op == ACCMAP_REPLAY_OP_WAIT_IRQ)
			res->value = value;
		if (reason == ACCMAP_REPLAY_OK &&
		    !replay_check_fault_after(op) && i != n - 1) {
			res->done++;
			continue;
		}
		/* A job that faulted explains a timeout better than it does. */
		if (reason == ACCMAP_REPLAY_OK || reason == ACCMAP_REPLAY_TIMEOUT ||
		    reason == ACCMAP_REPLAY_MMU_FAULT) {
			if (replay_faulted(s, res))
				reason = ACCMAP_REPLAY_MMU_FAULT;
			else if (reason == ACCMAP_REPLAY_MMU_FAULT)
				res->fault = (struct accmap_replay_fault) {
					.as = U32_MAX,
				};
		}
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

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's replay executor.
 *
 * accmap_replay_check_op() is tested field by field from a table.  The
 * executor runs first against a small fake target defined here, whose
 * registers, interrupts and MMU faults each test sets up as it needs, then
 * against the software Mali model (replay_sim.c) on a session made by hand
 * with tables from the page-table builder, in both formats: what a replay
 * of a recorded job does, from GPU_ID to a finished job or an MMU fault.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../mali_regs.h"
#include "../replay.h"

/* ---- accmap_replay_check_op() ---- */

#define WIN	0x4000U

struct check_case {
	const char *name;
	struct accmap_replay_op op;
	int ret;
};

#define OP(...)	{ __VA_ARGS__ }
#define W	ACCMAP_REPLAY_OP_WRITE
#define R	ACCMAP_REPLAY_OP_READ
#define P	ACCMAP_REPLAY_OP_POLL
#define I	ACCMAP_REPLAY_OP_WAIT_IRQ
#define D	ACCMAP_REPLAY_OP_DELAY
#define WR	ACCMAP_REPLAY_OP_WRITE_ROOT
#define TMAX	ACCMAP_REPLAY_TIMEOUT_MAX_US
#define DMAX	ACCMAP_REPLAY_DELAY_MAX_US
#define STRICT	ACCMAP_REPLAY_OP_STRICT
#define HI	ACCMAP_REPLAY_OP_HI
#define CAP	ACCMAP_REPLAY_OP_CAPTURE
#define CAPD	ACCMAP_REPLAY_OP_CAPTURED

static const struct check_case check_cases[] = {
	/* Each op in a valid form. */
	{ "write", OP(.op = W, .offset = 0x30, .value = 1), 0 },
	{ "write_zero", OP(.op = W), 0 },
	{ "write_last_reg", OP(.op = W, .offset = WIN - 4, .value = ~0U), 0 },
	{ "read", OP(.op = R, .offset = 4, .value = 7, .mask = 0xf), 0 },
	{ "read_no_mask", OP(.op = R, .offset = 4), 0 },
	{ "read_strict", OP(.op = R, .flags = STRICT, .offset = 4, .mask = 1), 0 },
	{ "poll", OP(.op = P, .offset = 0x160, .value = 1, .mask = 1,
		     .timeout_us = 1), 0 },
	{ "poll_max", OP(.op = P, .offset = 0x160, .timeout_us = TMAX), 0 },
	{ "wait_job", OP(.op = I, .mask = 1, .timeout_us = 100,
			 .irq = ACCMAP_REPLAY_IRQ_JOB), 0 },
	{ "wait_mmu", OP(.op = I, .mask = 1, .timeout_us = 100,
			 .irq = ACCMAP_REPLAY_IRQ_MMU), 0 },
	{ "wait_gpu_max", OP(.op = I, .mask = ~0U, .timeout_us = TMAX,
			     .irq = ACCMAP_REPLAY_IRQ_GPU), 0 },
	{ "delay_zero", OP(.op = D), 0 },
	{ "delay_max", OP(.op = D, .timeout_us = DMAX), 0 },
	{ "write_root", OP(.op = WR, .offset = 0x2400), 0 },
	{ "write_root_hi", OP(.op = WR, .flags = HI, .offset = 0x2404), 0 },
	{ "read_capture", OP(.op = R, .flags = CAP, .offset = 0x30), 0 },
	{ "read_capture_mask", OP(.op = R, .flags = CAP, .offset = 0x30,
				  .value = 3, .mask = 0xf), 0 },
	{ "write_captured", OP(.op = W, .flags = CAPD, .offset = 0x34), 0 },

	/* The op itself and pad. */
	{ "op_zero", OP(.op = 0), -EINVAL },
	{ "op_past_last", OP(.op = WR + 1), -EINVAL },
	{ "op_huge", OP(.op = ~0U), -EINVAL },
	{ "pad", OP(.op = W, .pad = 1), -EINVAL },
	{ "pad_delay", OP(.op = D, .pad = 1U << 31), -EINVAL },

	/* Flags only where they apply. */
	{ "write_strict", OP(.op = W, .flags = STRICT), -EINVAL },
	{ "write_hi", OP(.op = W, .flags = HI), -EINVAL },
	{ "read_hi", OP(.op = R, .flags = HI), -EINVAL },
	{ "read_unknown_flag", OP(.op = R, .flags = 1U << 4), -EINVAL },
	{ "poll_strict", OP(.op = P, .flags = STRICT, .timeout_us = 1), -EINVAL },
	{ "wait_strict", OP(.op = I, .flags = STRICT, .mask = 1,
			    .timeout_us = 1), -EINVAL },
	{ "delay_hi", OP(.op = D, .flags = HI), -EINVAL },
	{ "write_root_strict", OP(.op = WR, .flags = STRICT), -EINVAL },
	{ "write_root_both", OP(.op = WR, .flags = STRICT | HI), -EINVAL },

	/* CAPTURE on a plain READ only, CAPTURED on a WRITE of 0 only. */
	{ "read_capture_strict", OP(.op = R, .flags = CAP | STRICT, .offset = 4,
				    .mask = 1), -EINVAL },
	{ "read_captured", OP(.op = R, .flags = CAPD, .offset = 4), -EINVAL },
	{ "read_both", OP(.op = R, .flags = CAP | CAPD, .offset = 4), -EINVAL },
	{ "write_capture", OP(.op = W, .flags = CAP, .offset = 4), -EINVAL },
	{ "write_captured_value", OP(.op = W, .flags = CAPD, .offset = 4,
				     .value = 1), -EINVAL },
	{ "write_both", OP(.op = W, .flags = CAP | CAPD, .offset = 4), -EINVAL },
	{ "poll_capture", OP(.op = P, .flags = CAP, .timeout_us = 1), -EINVAL },
	{ "poll_captured", OP(.op = P, .flags = CAPD, .timeout_us = 1), -EINVAL },
	{ "wait_capture", OP(.op = I, .flags = CAP, .mask = 1,
			     .timeout_us = 1), -EINVAL },
	{ "delay_captured", OP(.op = D, .flags = CAPD), -EINVAL },
	{ "root_capture", OP(.op = WR, .flags = CAP, .offset = 0x2400), -EINVAL },
	{ "root_captured", OP(.op = WR, .flags = CAPD, .offset = 0x2400),
	  -EINVAL },

	/* Offsets: aligned, the whole register inside the window. */
	{ "offset_unaligned", OP(.op = W, .offset = 2), -EINVAL },
	{ "offset_window", OP(.op = R, .offset = WIN), -EINVAL },
	{ "offset_straddles", OP(.op = R, .offset = WIN - 2), -EINVAL },
	{ "offset_wraps", OP(.op = P, .offset = ~3U, .timeout_us = 1), -EINVAL },
	{ "offset_root_out", OP(.op = WR, .offset = WIN + 4), -EINVAL },
	{ "offset_wait", OP(.op = I, .offset = 4, .mask = 1, .timeout_us = 1),
	  -EINVAL },
	{ "offset_delay", OP(.op = D, .offset = 4), -EINVAL },

	/* Fields an op does not use are 0. */
	{ "write_mask", OP(.op = W, .mask = 1), -EINVAL },
	{ "write_timeout", OP(.op = W, .timeout_us = 1), -EINVAL },
	{ "write_irq", OP(.op = W, .irq = 1), -EINVAL },
	{ "read_timeout", OP(.op = R, .timeout_us = 1), -EINVAL },
	{ "read_irq", OP(.op = R, .irq = 2), -EINVAL },
	{ "poll_irq", OP(.op = P, .timeout_us = 1, .irq = 1), -EINVAL },
	{ "wait_value", OP(.op = I, .value = 1, .mask = 1, .timeout_us = 1),
	  -EINVAL },
	{ "delay_value", OP(.op = D, .value = 1), -EINVAL },
	{ "delay_mask", OP(.op = D, .mask = 1), -EINVAL },
	{ "delay_irq", OP(.op = D, .irq = 1), -EINVAL },
	{ "root_value", OP(.op = WR, .value = 1), -EINVAL },
	{ "root_mask", OP(.op = WR, .mask = 1), -EINVAL },
	{ "root_timeout", OP(.op = WR, .timeout_us = 1), -EINVAL },

	/* Bounds of waits and interrupts. */
	{ "poll_timeout_zero", OP(.op = P), -EINVAL },
	{ "poll_timeout_over", OP(.op = P, .timeout_us = TMAX + 1), -EINVAL },
	{ "wait_timeout_zero", OP(.op = I, .mask = 1), -EINVAL },
	{ "wait_timeout_over", OP(.op = I, .mask = 1, .timeout_us = TMAX + 1),
	  -EINVAL },
	{ "wait_mask_zero", OP(.op = I, .timeout_us = 1), -EINVAL },
	{ "wait_irq_count", OP(.op = I, .mask = 1, .timeout_us = 1,
			       .irq = ACCMAP_REPLAY_IRQ_COUNT), -EINVAL },
	{ "wait_irq_huge", OP(.op = I, .mask = 1, .timeout_us = 1, .irq = ~0U),
	  -EINVAL },
	{ "delay_over", OP(.op = D, .timeout_us = DMAX + 1), -EINVAL },
};

static void check_desc(const struct check_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(check, check_cases, check_desc);

static void exec_check_op(struct kunit *test)
{
	const struct check_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&c->op, WIN), c->ret);
}

static void exec_check_op_tiny_window(struct kunit *test)
{
	struct accmap_replay_op op = OP(.op = W);

	/* A window smaller than one register has no valid offset. */
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, 4), 0);
	op.offset = 4;
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, 7), -EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, U32_MAX), 0);
	/* Ops without an offset do not care. */
	op = (struct accmap_replay_op){ .op = D, .timeout_us = 1 };
	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&op, 0), 0);
}

/* ---- the executor against a fake target ---- */

/* The Mali map: the session rules are checked on every target. */
#define FAKE_WINDOW	MALI_WINDOW_SIZE
#define FAKE_REG	0x40	/* plain storage */
#define FAKE_REG2	0x44
#define FAKE_READY	0x10	/* 0 for ready_after reads, then 0xff */
#define FAKE_DOORBELL	0x20	/* a write raises an MMU fault */
#define FAKE_AS		3	/* the fake session's address space */
#define FAKE_AS_REG(r)	(MALI_AS_BASE(FAKE_AS) + MALI_AS_##r)
#define FAKE_ROOT_LO	FAKE_AS_REG(TRANSTAB_LO)
#define FAKE_ROOT_HI	FAKE_AS_REG(TRANSTAB_HI)
#define FAKE_FAULT_ADDR	0xdead1000ULL
#define FAKE_FAULT_AS	2

/**
 * struct fake_gpu - the fake target's state
 * @regs:        register contents
 * @ready_after: reads of FAKE_READY that return 0 before it reads 0xff
 * @ready_reads: reads of FAKE_READY so far
 * @irq_raw:     raised interrupt bits per source
 * @irq_ret:     if not 0, what wait_irq returns
 * @fault:       an MMU fault is pending
 * @fault_quiet: wait_irq says -EIO but mmu_fault reports nothing
 * @fault_checks: calls of mmu_fault
 * @as_busy:     the address space's STATUS reads ACTIVE, always
 * @writes:      writes so far
 * @failed_checks: calls of job_failed
 */
struct fake_gpu {
	u32 regs[FAKE_WINDOW / 4];
	unsigned int ready_after;
	unsigned int ready_reads;
	u32 irq_raw[ACCMAP_REPLAY_IRQ_COUNT];
	int irq_ret;
	bool fault;
	bool fault_quiet;
	unsigned int fault_checks;
	bool as_busy;
	unsigned int writes;
	unsigned int failed_checks;
};

/* FAILED bits raised in the fake's JOB_IRQ but those in @expected. */
static u32 fake_failures(const struct fake_gpu *g, u32 expected)
{
	return g->irq_raw[ACCMAP_REPLAY_IRQ_JOB] & MALI_JOB_IRQ_FAILED_ALL &
	       ~expected;
}

static u32 fake_read32(struct accmap_replay_session *s, u32 offset)
{
	struct fake_gpu *g = s->tpriv;

	if (offset == FAKE_READY)
		return ++g->ready_reads > g->ready_after ? 0xff : 0;
	if (offset == FAKE_AS_REG(STATUS) && g->as_busy)
		return MALI_AS_STATUS_ACTIVE;
	return g->regs[offset / 4];
}

static void fake_write32(struct accmap_replay_session *s, u32 offset, u32 v)
{
	struct fake_gpu *g = s->tpriv;

	g->regs[offset / 4] = v;
	g->writes++;
	if (offset == FAKE_DOORBELL)
		g->fault = true;
}

static int fake_wait_irq(struct accmap_replay_session *s, u32 irq, u32 mask,
			 u32 timeout_us, u32 *seen)
{
	struct fake_gpu *g = s->tpriv;

	if (g->irq_ret)
		return g->irq_ret;
	if (g->fault || g->fault_quiet)
		return -EIO;
	if (g->irq_raw[irq] & mask) {
		*seen = g->irq_raw[irq];
		g->irq_raw[irq] &= ~mask;
		return 0;
	}
	if (fake_failures(g, irq == ACCMAP_REPLAY_IRQ_JOB ? mask : 0))
		return -ECANCELED;
	fsleep(timeout_us);
	return -ETIMEDOUT;
}

/* Reports a raised FAILED bit with the slot's STATUS and HEAD registers. */
static bool fake_job_failed(struct accmap_replay_session *s, u32 expected,
			    struct accmap_replay_fault *f)
{
	struct fake_gpu *g = s->tpriv;
	u32 bits = fake_failures(g, expected);
	u32 js;

	g->failed_checks++;
	if (!bits)
		return false;
	f->as = __ffs(bits) - 16;
	js = MALI_JS_BASE(f->as);
	f->status = g->regs[(js + MALI_JS_STATUS) / 4];
	f->address = (u64)g->regs[(js + MALI_JS_HEAD_HI) / 4] << 32 |
		     g->regs[(js + MALI_JS_HEAD_LO) / 4];
	return true;
}

static bool fake_mmu_fault(struct accmap_replay_session *s,
			   struct accmap_replay_fault *f)
{
	struct fake_gpu *g = s->tpriv;

	g->fault_checks++;
	if (!g->fault)
		return false;
	f->as = FAKE_FAULT_AS;
	f->status = MALI_FAULT_TRANSLATION(3) |
		    MALI_FAULT_ACCESS_READ << MALI_FAULT_ACCESS_SHIFT;
	f->address = FAKE_FAULT_ADDR;
	return true;
}

static const struct accmap_replay_target_ops fake_ops = {
	.read32 = fake_read32,
	.write32 = fake_write32,
	.wait_irq = fake_wait_irq,
	.mmu_fault = fake_mmu_fault,
	.job_failed = fake_job_failed,
};

/**
 * struct fake_env - a session on the fake target, and a run's result
 * @target: the target
 * @s:      the session
 * @gpu:    the target's state
 * @res:    the result, as the caller of the executor starts it
 */
struct fake_env {
	struct accmap_replay_target target;
	struct accmap_replay_session s;
	struct fake_gpu gpu;
	struct accmap_replay_result res;
};

static struct fake_env *new_fake(struct kunit *test)
{
	struct fake_env *e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	e->target.name = "fake";
	e->target.window_size = FAKE_WINDOW;
	e->target.ops = &fake_ops;
	e->s.target = &e->target;
	e->s.tpriv = &e->gpu;
	e->s.as = FAKE_AS;
	e->s.root = 0x0000123456789003ULL;
	e->res.failed_op = U32_MAX;
	return e;
}

static int run(struct fake_env *e, const struct accmap_replay_op *ops, u32 n,
	       u32 first)
{
	return accmap_replay_exec(&e->s, ops, n, first, &e->res);
}

static void expect_ok(struct kunit *test, struct fake_env *e, u32 done)
{
	KUNIT_EXPECT_EQ(test, e->res.done, done);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, U32_MAX);
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_OK);
}

static void expect_failed(struct kunit *test, struct fake_env *e, u32 done,
			  u32 failed_op, u32 reason)
{
	KUNIT_EXPECT_EQ(test, e->res.done, done);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, failed_op);
	KUNIT_EXPECT_EQ(test, e->res.reason, reason);
}

static void exec_write_read(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 0x1234),
		OP(.op = R, .flags = STRICT, .offset = FAKE_REG, .value = 0x1234,
		   .mask = ~0U),
		/* Not strict: a different value is only reported. */
		OP(.op = R, .offset = FAKE_REG, .value = 5, .mask = ~0U),
	};

	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	expect_ok(test, e, 3);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG / 4], 0x1234U);
	KUNIT_EXPECT_EQ(test, e->res.value, 0x1234U);
	/* The end of the chunk asks the MMU once. */
	KUNIT_EXPECT_EQ(test, e->gpu.fault_checks, 1U);
}

static void exec_strict_mismatch(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		/* Equal under the mask: bits outside it do not matter. */
		OP(.op = R, .flags = STRICT, .offset = FAKE_REG, .value = 0xab12,
		   .mask = 0xff00),
		OP(.op = R, .flags = STRICT, .offset = FAKE_REG, .value = 0xab12,
		   .mask = 0xffff),
		OP(.op = W, .offset = FAKE_REG2, .value = 1),
	};

	e->gpu.regs[FAKE_REG / 4] = 0xab00;
	e->res.done = 5;	/* from earlier chunks */
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 100), -EIO);
	expect_failed(test, e, 6, 101, ACCMAP_REPLAY_MISMATCH);
	KUNIT_EXPECT_EQ(test, e->res.value, 0xab00U);
	/* Nothing after the failed op ran. */
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG2 / 4], 0U);
}

static void exec_poll(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op op = OP(.op = P, .offset = FAKE_READY,
					      .value = 0x0f, .mask = 0x0f,
					      .timeout_us = TMAX);

	e->gpu.ready_after = 5;
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 0), 0);
	expect_ok(test, e, 1);
	KUNIT_EXPECT_EQ(test, e->gpu.ready_reads, 6U);
	KUNIT_EXPECT_EQ(test, e->res.value, 0xffU);
	KUNIT_EXPECT_GE(test, e->gpu.fault_checks, 1U);
}

static void exec_poll_timeout(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const u32 timeout_us = 20000;
	const struct accmap_replay_op op = OP(.op = P, .offset = FAKE_READY,
					      .value = 0xff, .mask = 0xff,
					      .timeout_us = timeout_us);
	ktime_t start;
	s64 us;

	e->gpu.ready_after = UINT_MAX;
	start = ktime_get();
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 7), -ETIMEDOUT);
	us = ktime_us_delta(ktime_get(), start);
	expect_failed(test, e, 0, 7, ACCMAP_REPLAY_TIMEOUT);
	KUNIT_EXPECT_EQ(test, e->res.value, 0U);
	/* Never early; late by at most a sleep (generous for UML). */
	KUNIT_EXPECT_GE(test, us, (s64)timeout_us);
	KUNIT_EXPECT_LT(test, us, (s64)timeout_us + USEC_PER_SEC);
	/* It slept between reads rather than spinning. */
	KUNIT_EXPECT_GE(test, e->gpu.ready_reads, 2U);
	KUNIT_EXPECT_LE(test, e->gpu.ready_reads, timeout_us / 10 + 1);
	kunit_info(test, "%u reads in %lld us\n", e->gpu.ready_reads, us);
}

static void exec_wait_irq(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op op = OP(.op = I, .mask = BIT(0),
					      .timeout_us = 1000,
					      .irq = ACCMAP_REPLAY_IRQ_JOB);

	e->gpu.irq_raw[ACCMAP_REPLAY_IRQ_JOB] = BIT(0) | BIT(5);
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 0), 0);
	expect_ok(test, e, 1);
	KUNIT_EXPECT_EQ(test, e->res.value, (u32)(BIT(0) | BIT(5)));
	/* Only the bits waited for are acknowledged. */
	KUNIT_EXPECT_EQ(test, e->gpu.irq_raw[ACCMAP_REPLAY_IRQ_JOB], (u32)BIT(5));
}

static void exec_wait_irq_errors(struct kunit *test)
{
	const struct accmap_replay_op op = OP(.op = I, .mask = BIT(3),
					      .timeout_us = 2000,
					      .irq = ACCMAP_REPLAY_IRQ_GPU);
	struct fake_env *e = new_fake(test);

	e->gpu.irq_raw[ACCMAP_REPLAY_IRQ_GPU] = BIT(2);
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 3), -ETIMEDOUT);
	expect_failed(test, e, 0, 3, ACCMAP_REPLAY_TIMEOUT);

	e = new_fake(test);
	e->gpu.irq_ret = -EINTR;
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 0), -EINTR);
	expect_failed(test, e, 0, 0, ACCMAP_REPLAY_SIGNAL);

	/* An error outside the target contract. */
	e = new_fake(test);
	e->gpu.irq_ret = -ENODEV;
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 0), -EINVAL);
	expect_failed(test, e, 0, 0, ACCMAP_REPLAY_INVALID);
}

static void exec_wait_irq_fault(struct kunit *test)
{
	const struct accmap_replay_op op = OP(.op = I, .mask = BIT(0),
					      .timeout_us = 1000,
					      .irq = ACCMAP_REPLAY_IRQ_JOB);
	struct fake_env *e = new_fake(test);

	e->gpu.fault = true;
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 9), -EIO);
	expect_failed(test, e, 0, 9, ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)FAKE_FAULT_AS);
	KUNIT_EXPECT_EQ(test, e->res.fault.address, FAKE_FAULT_ADDR);
	KUNIT_EXPECT_EQ(test, e->res.fault.status & 0xff,
			(u32)MALI_FAULT_TRANSLATION(3));

	/* The target says fault but cannot say which: no address space. */
	e = new_fake(test);
	e->gpu.fault_quiet = true;
	KUNIT_EXPECT_EQ(test, run(e, &op, 1, 0), -EIO);
	expect_failed(test, e, 0, 0, ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, U32_MAX);
}

static void exec_fault_end_of_chunk(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_DOORBELL, .value = 1),
		OP(.op = W, .offset = FAKE_REG, .value = 2),
	};

	/* No wait in the chunk: the check at its end sees the fault. */
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 40), -EIO);
	expect_failed(test, e, 1, 41, ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG / 4], 2U);
	KUNIT_EXPECT_EQ(test, e->res.fault.address, FAKE_FAULT_ADDR);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)FAKE_FAULT_AS);
	KUNIT_EXPECT_EQ(test, e->res.value, 0U);
}

static void exec_fault_after_wait(struct kunit *test)
{
	static const struct accmap_replay_op waits[] = {
		OP(.op = D, .timeout_us = 100),
		OP(.op = P, .offset = FAKE_REG, .timeout_us = 100),
		/* Timed out, but the fault is the better explanation. */
		OP(.op = P, .offset = FAKE_REG, .value = 1, .mask = 1,
		   .timeout_us = 1000),
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(waits); i++) {
		struct fake_env *e = new_fake(test);
		const struct accmap_replay_op ops[] = {
			OP(.op = W, .offset = FAKE_DOORBELL, .value = 1),
			waits[i],
			OP(.op = W, .offset = FAKE_REG2, .value = 3),
		};

		KUNIT_EXPECT_EQ_MSG(test, run(e, ops, ARRAY_SIZE(ops), 0), -EIO,
				    "wait %u", i);
		expect_failed(test, e, 1, 1, ACCMAP_REPLAY_MMU_FAULT);
		KUNIT_EXPECT_EQ(test, e->res.fault.address, FAKE_FAULT_ADDR);
		/* The run stopped at the wait. */
		KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG2 / 4], 0U);
	}
}

/* Slot 2 of the fake failed on a descriptor; its registers say so. */
#define FAKE_FAILED_SLOT	2
#define FAKE_FAILED_JD		0x12345678c0ULL
#define FAKE_FAILED_JS(r)	(MALI_JS_BASE(FAKE_FAILED_SLOT) + MALI_JS_##r)

static void fake_fail_job(struct fake_env *e)
{
	e->gpu.regs[FAKE_FAILED_JS(STATUS) / 4] =
		MALI_JS_STATUS_DATA_INVALID_FAULT;
	e->gpu.regs[FAKE_FAILED_JS(HEAD_LO) / 4] = lower_32_bits(FAKE_FAILED_JD);
	e->gpu.regs[FAKE_FAILED_JS(HEAD_HI) / 4] = upper_32_bits(FAKE_FAILED_JD);
	e->gpu.irq_raw[ACCMAP_REPLAY_IRQ_JOB] |=
		MALI_JOB_IRQ_FAILED(FAKE_FAILED_SLOT);
}

static void expect_job_failed(struct kunit *test, struct fake_env *e)
{
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)FAKE_FAILED_SLOT);
	KUNIT_EXPECT_EQ(test, e->res.fault.status,
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, e->res.fault.address, FAKE_FAILED_JD);
}

/* A failed job stops the run after each kind of wait, not after others. */
static void exec_job_failed(struct kunit *test)
{
	static const struct accmap_replay_op waits[] = {
		OP(.op = D, .timeout_us = 100),
		/* Matches at once: the failure is seen after it. */
		OP(.op = P, .offset = FAKE_REG, .timeout_us = 100),
		/* Would time out: the failure ends it first. */
		OP(.op = P, .offset = FAKE_REG, .value = 1, .mask = 1,
		   .timeout_us = TMAX),
		OP(.op = I, .mask = MALI_JOB_IRQ_DONE(FAKE_FAILED_SLOT),
		   .timeout_us = TMAX, .irq = ACCMAP_REPLAY_IRQ_JOB),
		OP(.op = I, .mask = 1, .timeout_us = TMAX,
		   .irq = ACCMAP_REPLAY_IRQ_GPU),
		/* Waits for another slot's failure, not this one. */
		OP(.op = P, .offset = MALI_JOB_IRQ_RAWSTAT,
		   .value = MALI_JOB_IRQ_FAILED(0), .mask = MALI_JOB_IRQ_FAILED(0),
		   .timeout_us = TMAX),
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(waits); i++) {
		struct fake_env *e = new_fake(test);
		const struct accmap_replay_op ops[] = {
			OP(.op = W, .offset = FAKE_REG, .value = 0),
			waits[i],
			OP(.op = W, .offset = FAKE_REG2, .value = 3),
		};
		ktime_t start = ktime_get();

		fake_fail_job(e);
		KUNIT_EXPECT_EQ_MSG(test, run(e, ops, ARRAY_SIZE(ops), 0), -EIO,
				    "wait %u", i);
		/* Far less than the TMAX the waits would take. */
		KUNIT_EXPECT_LT_MSG(test, ktime_us_delta(ktime_get(), start),
				    (s64)USEC_PER_SEC, "wait %u", i);
		expect_failed(test, e, 1, 1, ACCMAP_REPLAY_JOB_FAILED);
		expect_job_failed(test, e);
		KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG2 / 4], 0U);
	}
}

/* No wait, no question: writes and reads run past a failed job. */
static void exec_job_failed_not_waited(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 7),
		OP(.op = R, .offset = FAKE_REG),
	};

	fake_fail_job(e);
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	expect_ok(test, e, 2);
	KUNIT_EXPECT_EQ(test, e->gpu.failed_checks, 0U);
	KUNIT_EXPECT_EQ(test, e->res.value, 7U);
}

/* A wait for the very FAILED bit is what the recording expects. */
static void exec_job_failed_expected(struct kunit *test)
{
	const u32 bit = MALI_JOB_IRQ_FAILED(FAKE_FAILED_SLOT);
	const struct accmap_replay_op wait = OP(.op = I,
		.mask = MALI_JOB_IRQ_DONE(FAKE_FAILED_SLOT) | bit,
		.timeout_us = TMAX, .irq = ACCMAP_REPLAY_IRQ_JOB);
	const struct accmap_replay_op poll[] = {
		OP(.op = P, .offset = MALI_JOB_IRQ_RAWSTAT, .value = bit,
		   .mask = bit, .timeout_us = TMAX),
		OP(.op = P, .offset = MALI_JOB_IRQ_STATUS, .value = bit,
		   .mask = bit, .timeout_us = TMAX),
	};
	struct fake_env *e = new_fake(test);
	unsigned int i;

	fake_fail_job(e);
	KUNIT_EXPECT_EQ(test, run(e, &wait, 1, 0), 0);
	expect_ok(test, e, 1);
	KUNIT_EXPECT_EQ(test, e->res.value, bit);
	/* It took the bit: nothing is left to fail later ops. */
	KUNIT_EXPECT_EQ(test, e->gpu.irq_raw[ACCMAP_REPLAY_IRQ_JOB], 0U);

	for (i = 0; i < ARRAY_SIZE(poll); i++) {
		e = new_fake(test);
		fake_fail_job(e);
		/* The fake's STATUS is plain storage: give it the bit too. */
		e->gpu.regs[MALI_JOB_IRQ_RAWSTAT / 4] = bit;
		e->gpu.regs[MALI_JOB_IRQ_STATUS / 4] = bit;
		KUNIT_EXPECT_EQ_MSG(test, run(e, &poll[i], 1, 0), 0, "poll %u", i);
		expect_ok(test, e, 1);
	}
}

/* An MMU fault is why a job failed: it wins. */
static void exec_job_failed_fault_wins(struct kunit *test)
{
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_DOORBELL, .value = 1),
		OP(.op = D, .timeout_us = 10),
	};
	struct fake_env *e = new_fake(test);

	fake_fail_job(e);
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), -EIO);
	expect_failed(test, e, 1, 1, ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)FAKE_FAULT_AS);
	KUNIT_EXPECT_EQ(test, e->res.fault.address, FAKE_FAULT_ADDR);
}

/* CAPTURE keeps a value in the session, across chunks and runs; CAPTURED writes it. */
static void exec_capture(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op a[] = {
		OP(.op = R, .flags = CAP, .offset = FAKE_REG),
		OP(.op = W, .offset = FAKE_REG, .value = 5),
	};
	const struct accmap_replay_op b[] = {
		OP(.op = W, .flags = CAPD, .offset = FAKE_REG2),
		OP(.op = R, .offset = FAKE_REG),
	};

	e->gpu.regs[FAKE_REG / 4] = 0xcafe;
	KUNIT_EXPECT_EQ(test, run(e, a, ARRAY_SIZE(a), 0), 0);
	KUNIT_EXPECT_EQ(test, e->res.value, 0xcafeU);
	KUNIT_EXPECT_EQ(test, run(e, b, ARRAY_SIZE(b), ARRAY_SIZE(a)), 0);
	expect_ok(test, e, 4);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG2 / 4], 0xcafeU);
	/* The run's value: what its last READ read. */
	KUNIT_EXPECT_EQ(test, e->res.value, 5U);

	/* The last CAPTURE before the write counts. */
	e = new_fake(test);
	{
		const struct accmap_replay_op c[] = {
			OP(.op = R, .flags = CAP, .offset = FAKE_REG),
			OP(.op = R, .flags = CAP, .offset = FAKE_REG2),
			OP(.op = W, .flags = CAPD, .offset = FAKE_REG),
		};

		e->gpu.regs[FAKE_REG / 4] = 1;
		e->gpu.regs[FAKE_REG2 / 4] = 2;
		KUNIT_EXPECT_EQ(test, run(e, c, ARRAY_SIZE(c), 0), 0);
		KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG / 4], 2U);
	}
}

/* A CAPTURED WRITE in a session that has captured nothing yet. */
static void exec_captured_none(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 1),
		OP(.op = W, .flags = CAPD, .offset = FAKE_REG2),
		OP(.op = R, .flags = CAP, .offset = FAKE_REG),
	};

	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 20), -EINVAL);
	expect_failed(test, e, 1, 21, ACCMAP_REPLAY_INVALID);
	KUNIT_EXPECT_EQ(test, e->gpu.writes, 1U);
}

/* The captured value meets the session's rules, checked at the write. */
static void exec_captured_rules(struct kunit *test)
{
	const u32 cfg = MALI_JS_BASE(0) + MALI_JS_CONFIG_NEXT;
	const struct accmap_replay_op ops[] = {
		OP(.op = R, .flags = CAP, .offset = FAKE_REG),
		OP(.op = W, .flags = CAPD, .offset = cfg),
		OP(.op = W, .offset = FAKE_REG2, .value = 9),
	};
	struct fake_env *e = new_fake(test);

	/* Unknown until the write: the session check lets it through. */
	KUNIT_EXPECT_EQ(test, accmap_replay_check_session_op(&e->s, &ops[1]), 0);

	/* Another address space: the run stops at the write. */
	e->gpu.regs[FAKE_REG / 4] = FAKE_AS + 1;
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), -EINVAL);
	expect_failed(test, e, 1, 1, ACCMAP_REPLAY_INVALID);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[cfg / 4], 0U);
	KUNIT_EXPECT_EQ(test, e->gpu.writes, 0U);

	/* Its own: written. */
	e = new_fake(test);
	e->gpu.regs[FAKE_REG / 4] = FAKE_AS;
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	expect_ok(test, e, 3);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[cfg / 4], (u32)FAKE_AS);

	/* A TRANSCFG_HI of the session's own AS takes only 0. */
	e = new_fake(test);
	{
		const struct accmap_replay_op t[] = {
			OP(.op = R, .flags = CAP, .offset = FAKE_REG),
			OP(.op = W, .flags = CAPD,
			   .offset = FAKE_AS_REG(TRANSCFG_HI)),
		};

		e->gpu.regs[FAKE_REG / 4] = 1;
		KUNIT_EXPECT_EQ(test, run(e, t, ARRAY_SIZE(t), 0), -EINVAL);
		expect_failed(test, e, 1, 1, ACCMAP_REPLAY_INVALID);
	}
}

static void exec_write_root(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = WR, .offset = FAKE_ROOT_LO),
		OP(.op = WR, .flags = HI, .offset = FAKE_ROOT_HI),
	};

	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	expect_ok(test, e, 2);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_ROOT_LO / 4], 0x56789003U);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_ROOT_HI / 4], 0x1234U);
}

static void exec_recheck(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 1),
		OP(.op = W, .offset = FAKE_REG2, .value = 2),
		/* Inside the uAPI's window, outside this target's. */
		OP(.op = W, .offset = FAKE_WINDOW, .value = 3),
		OP(.op = W, .offset = FAKE_ROOT_LO, .value = 4),
	};

	KUNIT_EXPECT_EQ(test, accmap_replay_check_op(&ops[2], FAKE_WINDOW),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 1000), -EINVAL);
	expect_failed(test, e, 2, 1002, ACCMAP_REPLAY_INVALID);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG / 4], 1U);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_REG2 / 4], 2U);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_ROOT_LO / 4], 0U);
}

static void exec_delay(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = D),
		OP(.op = D, .timeout_us = 5000),
	};
	ktime_t start = ktime_get();
	s64 us;

	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	us = ktime_us_delta(ktime_get(), start);
	expect_ok(test, e, 2);
	KUNIT_EXPECT_GE(test, us, 5000LL);
	KUNIT_EXPECT_LT(test, us, 5000LL + USEC_PER_SEC);
	/* After each DELAY the MMU is asked; the chunk's end is the last. */
	KUNIT_EXPECT_EQ(test, e->gpu.fault_checks, 2U);
}

static void exec_chunks(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op a[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 1),
		OP(.op = R, .offset = FAKE_REG, .value = 1, .mask = ~0U),
		OP(.op = W, .offset = FAKE_REG, .value = 2),
	};
	const struct accmap_replay_op b[] = {
		OP(.op = R, .flags = STRICT, .offset = FAKE_REG, .value = 2,
		   .mask = ~0U),
		OP(.op = R, .flags = STRICT, .offset = FAKE_REG, .value = 1,
		   .mask = ~0U),
	};

	/* The caller runs a long list as chunks; done adds up. */
	KUNIT_EXPECT_EQ(test, run(e, a, ARRAY_SIZE(a), 0), 0);
	expect_ok(test, e, 3);
	KUNIT_EXPECT_EQ(test, run(e, b, ARRAY_SIZE(b), ARRAY_SIZE(a)), -EIO);
	expect_failed(test, e, 4, 4, ACCMAP_REPLAY_MISMATCH);
	KUNIT_EXPECT_EQ(test, e->res.value, 2U);

	/* An empty chunk does nothing, not even ask the MMU. */
	e = new_fake(test);
	e->gpu.fault = true;
	KUNIT_EXPECT_EQ(test, run(e, a, 0, 0), 0);
	expect_ok(test, e, 0);
	KUNIT_EXPECT_EQ(test, e->gpu.fault_checks, 0U);
}

/* ---- the executor driving the software Mali model ---- */

#define SIM_PAGES	16
#define SIM_WAIT_US	5000000		/* jobs here take far less */
#define SIM_CHUNK	5		/* ops per call, as the caller chunks */
#define SIM_OPS_MAX	64
#define SIM_AS		0
#define SIM_SLOT	0
#define SIM_BUF_VA	0x12340000ULL	/* the test's buffer, page by page */
#define SIM_UNMAPPED_VA	0x7654321000ULL
#define SIM_VADD_N	700		/* elements: B crosses a page */

#define RO		ACCMAP_PGT_PERM_READ
#define RW		(ACCMAP_PGT_PERM_READ | ACCMAP_PGT_PERM_WRITE)

#define AS(reg)		(MALI_AS_BASE(SIM_AS) + MALI_AS_##reg)
#define JS(reg)		(MALI_JS_BASE(SIM_SLOT) + MALI_JS_##reg)

static const u32 sim_formats[] = {
	ACCMAP_PGT_MALI_AARCH64_4K,
	ACCMAP_PGT_MALI_LPAE,
};

static void sim_format_desc(const u32 *format, char *desc)
{
	strscpy(desc, *format == ACCMAP_PGT_MALI_LPAE ? "mali_lpae" :
			"aarch64_4k", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sim_format, sim_formats, sim_format_desc);

/**
 * struct sim_env - a session on the software Mali model, made by hand as
 * replay.c would make it
 * @target: the target, as accmap_sim_target_init() describes it
 * @s:      the session
 * @open:   the target has opened @s
 * @npages: entries used in @pages and @kva
 * @pages:  buffer pages, each mapped at SIM_BUF_VA + its index pages
 * @res:    a run's result
 * @ops:    the run being built
 * @nops:   entries used in @ops
 */
struct sim_env {
	struct accmap_replay_target target;
	struct accmap_replay_session s;
	bool open;
	unsigned int npages;
	struct page *pages[SIM_PAGES];
	struct accmap_replay_result res;
	struct accmap_replay_op ops[SIM_OPS_MAX];
	u32 nops;
};

static int sim_env_init(struct kunit_resource *res, void *context)
{
	struct sim_env *e = kzalloc(sizeof(*e), GFP_KERNEL);
	u32 format = *(const u32 *)context;
	int ret;

	if (!e)
		return -ENOMEM;
	ret = accmap_sim_target_init(&e->target);
	if (ret)
		goto err_free;
	e->s.target = &e->target;
	e->s.format = format;
	e->s.as = SIM_AS;
	e->s.va_bits = 48;
	ret = e->target.ops->open(&e->s);
	if (ret)
		goto err_free;
	e->open = true;

	e->s.pgt = accmap_pgt_create(format, e->s.va_bits,
				     e->target.ops->pgt_alloc, &e->s);
	if (IS_ERR(e->s.pgt)) {
		ret = PTR_ERR(e->s.pgt);
		goto err_close;
	}
	e->s.root = accmap_pgt_root(e->s.pgt);
	e->res.failed_op = U32_MAX;
	res->data = e;
	return 0;

err_close:
	e->target.ops->close(&e->s);
err_free:
	kfree(e);
	return ret;
}

static void sim_env_exit(struct kunit_resource *res)
{
	struct sim_env *e = res->data;
	unsigned int i;

	/* The tables go before the model that holds their pages. */
	accmap_pgt_destroy(e->s.pgt);
	/* The model stops its jobs before their memory goes. */
	if (e->open)
		e->target.ops->close(&e->s);
	for (i = 0; i < e->npages; i++)
		__free_page(e->pages[i]);
	kfree(e);
}

static struct sim_env *new_sim(struct kunit *test)
{
	struct sim_env *e;

	e = kunit_alloc_resource(test, sim_env_init, sim_env_exit, GFP_KERNEL,
				 (void *)test->param_value);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, e);
	return e;
}

/* Maps the next buffer page with @perm; returns its GPU address. */
static u64 sim_page(struct kunit *test, struct sim_env *e, u32 perm)
{
	u64 va = SIM_BUF_VA + (u64)e->npages * SZ_4K;
	struct page *page;

	KUNIT_ASSERT_LT(test, e->npages, (unsigned int)SIM_PAGES);
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_NOT_NULL(test, page);
	e->pages[e->npages++] = page;
	KUNIT_ASSERT_EQ(test, e->target.ops->add_memory(&e->s, page_to_phys(page),
							page_address(page), PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, accmap_pgt_map(e->s.pgt, va, page_to_phys(page),
					     SZ_4K, perm, 0), 0);
	return va;
}

/* The kernel address of @len bytes at GPU address @va, in one page. */
static void *sim_kva(struct kunit *test, struct sim_env *e, u64 va, size_t len)
{
	u64 off = va - SIM_BUF_VA;

	KUNIT_ASSERT_GE(test, va, SIM_BUF_VA);
	KUNIT_ASSERT_LT(test, off / SZ_4K, (u64)e->npages);
	KUNIT_ASSERT_LE(test, off % SZ_4K + len, (u64)SZ_4K);
	return page_address(e->pages[off / SZ_4K]) + off % SZ_4K;
}

static void sim_put32(struct kunit *test, struct sim_env *e, u64 va, u32 v)
{
	*(__le32 *)sim_kva(test, e, va, 4) = cpu_to_le32(v);
}

static u32 sim_get32(struct kunit *test, struct sim_env *e, u64 va)
{
	return le32_to_cpu(*(__le32 *)sim_kva(test, e, va, 4));
}

static void sim_put64(struct kunit *test, struct sim_env *e, u64 va, u64 v)
{
	*(__le64 *)sim_kva(test, e, va, 8) = cpu_to_le64(v);
}

static void add(struct kunit *test, struct sim_env *e,
		const struct accmap_replay_op *op)
{
	KUNIT_ASSERT_LT(test, e->nops, (u32)SIM_OPS_MAX);
	KUNIT_ASSERT_EQ(test, accmap_replay_check_op(op, MALI_WINDOW_SIZE), 0);
	e->ops[e->nops++] = *op;
}

static void add_write(struct kunit *test, struct sim_env *e, u32 offset,
		      u32 value)
{
	const struct accmap_replay_op op = {
		.op = W, .offset = offset, .value = value,
	};

	add(test, e, &op);
}

static void add_poll(struct kunit *test, struct sim_env *e, u32 offset,
		     u32 value, u32 mask)
{
	const struct accmap_replay_op op = {
		.op = P, .offset = offset, .value = value, .mask = mask,
		.timeout_us = SIM_WAIT_US,
	};

	add(test, e, &op);
}

/* A READ; strict unless @value is 0 and @mask 0. */
static void add_read(struct kunit *test, struct sim_env *e, u32 offset,
		     u32 value, u32 mask)
{
	const struct accmap_replay_op op = {
		.op = R, .flags = value || mask ? STRICT : 0, .offset = offset,
		.value = value, .mask = mask,
	};

	add(test, e, &op);
}

static void add_wait(struct kunit *test, struct sim_env *e, u32 irq,
		     u32 mask)
{
	const struct accmap_replay_op op = {
		.op = I, .mask = mask, .timeout_us = SIM_WAIT_US, .irq = irq,
	};

	add(test, e, &op);
}

static void add_write_root(struct kunit *test, struct sim_env *e, u32 offset,
			   bool hi)
{
	const struct accmap_replay_op op = {
		.op = WR, .flags = hi ? HI : 0, .offset = offset,
	};

	add(test, e, &op);
}

/* Runs the ops built so far in chunks, as replay.c does; 0 or -errno. */
static int sim_run(struct sim_env *e)
{
	u32 i;
	int ret;

	for (i = 0; i < e->nops; i += SIM_CHUNK) {
		ret = accmap_replay_exec(&e->s, e->ops + i,
					 min_t(u32, SIM_CHUNK, e->nops - i), i,
					 &e->res);
		if (ret)
			return ret;
	}
	return 0;
}

/* Power the cores up, as a driver does at probe. */
static void add_power_on(struct kunit *test, struct sim_env *e)
{
	add_write(test, e, MALI_GPU_IRQ_MASK, MALI_GPU_IRQ_POWER_CHANGED_ALL);
	add_write(test, e, MALI_L2_PWRON_LO, 1);
	add_poll(test, e, MALI_L2_READY_LO, 1, 1);
	add_write(test, e, MALI_SHADER_PWRON_LO, 0xff);
	add_write(test, e, MALI_TILER_PWRON_LO, 1);
	add_poll(test, e, MALI_SHADER_READY_LO, 0xff, 0xff);
	add_poll(test, e, MALI_TILER_READY_LO, 1, 1);
	add_wait(test, e, ACCMAP_REPLAY_IRQ_GPU, MALI_GPU_IRQ_POWER_CHANGED_ALL);
}

/* Point the address space at the session's tables. */
static void add_as_setup(struct kunit *test, struct sim_env *e)
{
	u32 transcfg = e->s.format == ACCMAP_PGT_MALI_AARCH64_4K ?
		       MALI_TRANSCFG_ADRMODE_AARCH64_4K :
		       MALI_TRANSCFG_ADRMODE_LEGACY;

	add_write_root(test, e, AS(TRANSTAB_LO), false);
	add_write_root(test, e, AS(TRANSTAB_HI), true);
	add_write(test, e, AS(MEMATTR_LO), 0x888d888d);
	add_write(test, e, AS(MEMATTR_HI), 0x4c8d);
	add_write(test, e, AS(TRANSCFG_LO), transcfg);
	add_write(test, e, AS(TRANSCFG_HI), 0);
	add_write(test, e, AS(COMMAND), MALI_AS_CMD_UPDATE);
	add_poll(test, e, AS(STATUS), 0, MALI_AS_STATUS_ACTIVE);
	add_write(test, e, MALI_MMU_IRQ_MASK, ~0U);
	add_write(test, e, MALI_JOB_IRQ_MASK, ~0U);
}

/* Start the chain at @head on the slot and wait for it to end. */
static void add_job(struct kunit *test, struct sim_env *e, u64 head)
{
	add_write(test, e, JS(HEAD_NEXT_LO), lower_32_bits(head));
	add_write(test, e, JS(HEAD_NEXT_HI), upper_32_bits(head));
	add_write(test, e, JS(AFFINITY_NEXT_LO), 0xff);
	add_write(test, e, JS(CONFIG_NEXT), SIM_AS);
	add_write(test, e, JS(COMMAND_NEXT), MALI_JS_COMMAND_START);
	add_wait(test, e, ACCMAP_REPLAY_IRQ_JOB,
		 MALI_JOB_IRQ_DONE(SIM_SLOT) | MALI_JOB_IRQ_FAILED(SIM_SLOT));
}

/*
 * A VADD job: descriptor and payload at @jd, A at @a, B at @b, C at @c,
 * A[i] = i, B[i] = 1000 * i.
 */
static void put_vadd(struct kunit *test, struct sim_env *e, u64 jd, u64 a,
		     u64 b, u64 c)
{
	u8 *hdr = sim_kva(test, e, jd, MALI_JD_HEADER_SIZE);
	u64 p = jd + ACCMAP_SIM_JOB_OFFSET;
	u32 i;

	memset(hdr, 0, MALI_JD_HEADER_SIZE);
	hdr[MALI_JD_TYPE_BYTE] = ACCMAP_SIM_JOB_TYPE << 1 | 1;	/* 64-bit next */
	sim_put64(test, e, jd + MALI_JD_NEXT, 0);
	sim_put32(test, e, p + offsetof(struct accmap_sim_job, op),
		  ACCMAP_SIM_OP_VADD_I32);
	sim_put32(test, e, p + offsetof(struct accmap_sim_job, m), 1);
	sim_put32(test, e, p + offsetof(struct accmap_sim_job, n), SIM_VADD_N);
	sim_put32(test, e, p + offsetof(struct accmap_sim_job, k), 1);
	sim_put64(test, e, p + offsetof(struct accmap_sim_job, a), a);
	sim_put64(test, e, p + offsetof(struct accmap_sim_job, b), b);
	sim_put64(test, e, p + offsetof(struct accmap_sim_job, c), c);
	for (i = 0; i < SIM_VADD_N; i++) {
		sim_put32(test, e, a + 4 * i, i);
		sim_put32(test, e, b + 4 * i, 1000 * i);
	}
}

/*
 * Pages for a VADD job: the descriptor (read-write), A and B (read-only,
 * B crossing into a second page), and C with @c_perm.
 */
static void sim_vadd_pages(struct kunit *test, struct sim_env *e, u32 c_perm,
			   u64 *jd, u64 *a, u64 *c)
{
	*jd = sim_page(test, e, RW);
	*a = sim_page(test, e, RO);
	sim_page(test, e, RO);
	*c = sim_page(test, e, c_perm);
	put_vadd(test, e, *jd, *a, *a + 4 * SIM_VADD_N, *c);
}

/*
 * The job started by the ops from @job on faulted.  The chain runs in the
 * background, so the fault shows either at the end of the chunk holding
 * the start or at the WAIT_IRQ after it.
 */
static void expect_job_fault(struct kunit *test, struct sim_env *e, u32 job,
			     u64 address)
{
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_MMU_FAULT);
	KUNIT_EXPECT_GE(test, e->res.failed_op, job + 4);	/* COMMAND_NEXT */
	KUNIT_EXPECT_LE(test, e->res.failed_op, job + 5);	/* WAIT_IRQ */
	KUNIT_EXPECT_EQ(test, e->res.done, e->res.failed_op);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)SIM_AS);
	KUNIT_EXPECT_EQ(test, e->res.fault.address, address);
	kunit_info(test, "fault status %#x seen after op %u\n",
		   e->res.fault.status, e->res.failed_op);
}

static void sim_gpu_id(struct kunit *test)
{
	struct sim_env *e = new_sim(test);

	add_read(test, e, MALI_GPU_ID, e->target.gpu_id, ~0U);
	add_read(test, e, MALI_AS_PRESENT, 0xff, 0xff);
	add_read(test, e, MALI_GPU_ID, 0, 0);
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, 3U);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, U32_MAX);
	KUNIT_EXPECT_EQ(test, e->res.value, 0x60a00002U);
	KUNIT_EXPECT_EQ(test, e->target.gpu_id, 0x60a00002U);
}

static void sim_power_on(struct kunit *test)
{
	struct sim_env *e = new_sim(test);

	add_read(test, e, MALI_SHADER_READY_LO, 0, ~0U);
	add_power_on(test, e);
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_OK);
	/* WAIT_IRQ's value is the status it saw. */
	KUNIT_EXPECT_TRUE(test, e->res.value & MALI_GPU_IRQ_POWER_CHANGED_ALL);
	/* ...and it acknowledged the bit. */
	KUNIT_EXPECT_FALSE(test, e->target.ops->read32(&e->s,
						       MALI_GPU_IRQ_RAWSTAT) &
			   MALI_GPU_IRQ_POWER_CHANGED_ALL);
}

static void sim_as_setup(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_target_ops *t = e->target.ops;

	add_as_setup(test, e);
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
	/* TRANSTAB holds the session's root, in the format's form. */
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSTAB_LO)),
			lower_32_bits(e->s.root));
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSTAB_HI)),
			upper_32_bits(e->s.root));
	if (e->s.format == ACCMAP_PGT_MALI_LPAE)
		KUNIT_EXPECT_EQ(test, e->s.root & MALI_LPAE_TRANSTAB_ADRMODE_MASK,
				(u64)MALI_LPAE_TRANSTAB_ADRMODE_TABLE);
	else
		KUNIT_EXPECT_EQ(test, e->s.root & (SZ_4K - 1), 0ULL);
}

static void sim_job(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u64 jd, a, c;
	u32 i;

	sim_vadd_pages(test, e, RW, &jd, &a, &c);
	add_power_on(test, e);
	add_as_setup(test, e);
	add_job(test, e, jd);
	add_read(test, e, JS(STATUS), MALI_JS_STATUS_DONE, 0xff);
	add_read(test, e, MALI_MMU_IRQ_RAWSTAT, 0, ~0U);
	KUNIT_ASSERT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, U32_MAX);

	KUNIT_EXPECT_EQ(test, sim_get32(test, e, jd + MALI_JD_EXCEPTION_STATUS),
			(u32)MALI_JS_STATUS_DONE);
	for (i = 0; i < SIM_VADD_N; i++)
		KUNIT_EXPECT_EQ_MSG(test, sim_get32(test, e, c + 4 * i),
				    1001 * i, "C[%u]", i);
}

static void sim_job_unmapped(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u32 job;

	sim_page(test, e, RW);		/* tables exist, just not there */
	add_as_setup(test, e);
	job = e->nops;
	add_job(test, e, SIM_UNMAPPED_VA);
	add_write(test, e, MALI_GPU_IRQ_MASK, 0);	/* never reached */

	KUNIT_EXPECT_EQ(test, sim_run(e), -EIO);
	expect_job_fault(test, e, job, SIM_UNMAPPED_VA);
	/* Level 0 has the buffer's entry; level 1 has nothing there. */
	KUNIT_EXPECT_EQ(test, e->res.fault.status & 0xff,
			(u32)MALI_FAULT_TRANSLATION(1));
	KUNIT_EXPECT_EQ(test, e->res.fault.status >> MALI_FAULT_ACCESS_SHIFT & 3,
			(u32)MALI_FAULT_ACCESS_READ);
}

static void sim_job_read_only_output(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u64 jd, a, c;
	u32 job;

	/* C is mapped read-only: the job may not write it. */
	sim_vadd_pages(test, e, RO, &jd, &a, &c);
	add_as_setup(test, e);
	job = e->nops;
	add_job(test, e, jd);

	KUNIT_EXPECT_EQ(test, sim_run(e), -EIO);
	expect_job_fault(test, e, job, c);
	KUNIT_EXPECT_EQ(test, e->res.fault.status & 0xff,
			(u32)MALI_FAULT_PERMISSION(3));
	KUNIT_EXPECT_EQ(test, e->res.fault.status >> MALI_FAULT_ACCESS_SHIFT & 3,
			(u32)MALI_FAULT_ACCESS_WRITE);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, c), 0U);
}

/* The recorded TRANSTAB written as is, instead of WRITE_ROOT: refused. */
static void sim_plain_transtab(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_target_ops *t = e->target.ops;

	add_as_setup(test, e);
	e->ops[0].op = W;
	e->ops[0].value = 0x1000;
	KUNIT_EXPECT_EQ(test, sim_run(e), -EINVAL);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, 0U);
	KUNIT_EXPECT_EQ(test, e->res.done, 0U);
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_INVALID);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSTAB_LO)), 0U);
}

/*
 * A root someone else left in the registers (planted here behind the
 * executor's back) names tables that are not the session's: a job that
 * uses it without WRITE_ROOT faults, and reaches none of the memory.
 */
static void sim_stale_root(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_target_ops *t = e->target.ops;
	u64 jd, a, c;
	u32 job;

	sim_vadd_pages(test, e, RW, &jd, &a, &c);
	t->write32(&e->s, AS(TRANSTAB_LO),
		   e->s.format == ACCMAP_PGT_MALI_LPAE ? 0x1000 | 3 : 0x1000);
	t->write32(&e->s, AS(TRANSTAB_HI), 0);
	add_as_setup(test, e);
	/* Drop the two WRITE_ROOTs: the setup keeps the planted root. */
	memmove(e->ops, e->ops + 2, (e->nops - 2) * sizeof(*e->ops));
	e->nops -= 2;
	job = e->nops;
	add_job(test, e, jd);

	KUNIT_EXPECT_EQ(test, sim_run(e), -EIO);
	expect_job_fault(test, e, job, jd);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, c), 0U);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, jd + MALI_JD_EXCEPTION_STATUS),
			0U);
}

/* Ops on another address space or job slots naming it never reach the model. */
static void sim_foreign_as(struct kunit *test)
{
	static const u32 other = SIM_AS + 1;
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_target_ops *t = e->target.ops;
	const struct accmap_replay_op bad[] = {
		OP(.op = WR, .offset = MALI_AS_BASE(other) + MALI_AS_TRANSTAB_LO),
		OP(.op = W, .offset = MALI_AS_BASE(other) + MALI_AS_TRANSCFG_LO,
		   .value = MALI_TRANSCFG_ADRMODE_AARCH64_4K),
		OP(.op = W, .offset = MALI_AS_BASE(other) + MALI_AS_MEMATTR_LO,
		   .value = 0x88),
		OP(.op = W, .offset = JS(CONFIG_NEXT), .value = other),
	};
	u64 jd, a, c;
	unsigned int i;
	u32 job;

	sim_vadd_pages(test, e, RW, &jd, &a, &c);
	add_as_setup(test, e);
	job = e->nops;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		/* After a valid setup, or in place of the job's CONFIG_NEXT. */
		e->nops = job;
		if (i < 3) {
			add(test, e, &bad[i]);
		} else {
			add_job(test, e, jd);
			e->ops[job + 3] = bad[i];
		}
		memset(&e->res, 0, sizeof(e->res));
		e->res.failed_op = U32_MAX;
		KUNIT_EXPECT_EQ_MSG(test, sim_run(e), -EINVAL, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->res.failed_op, i < 3 ? job : job + 3,
				    "case %u", i);
		KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_INVALID);
	}
	/* The other address space was never written; no job ran. */
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, MALI_AS_BASE(other) +
					       MALI_AS_TRANSTAB_LO), 0U);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, MALI_AS_BASE(other) +
					       MALI_AS_TRANSCFG_LO), 0U);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, MALI_AS_BASE(other) +
					       MALI_AS_MEMATTR_LO), 0U);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, jd + MALI_JD_EXCEPTION_STATUS),
			0U);
}

/*
 * Roots cleared after a run: once the kernel has released the address
 * space, its TRANSTAB names nothing and a job started without setting
 * it up again faults, touching none of the session's memory.
 */
/*
 * A chain of two descriptors in a fresh page: a Mali NULL job, then one of
 * a type the model does not know, which fails with DATA_INVALID_FAULT.
 * Returns the head; *@bad is the second descriptor.
 */
static u64 put_failing_chain(struct kunit *test, struct sim_env *e, u64 *bad)
{
	u64 jd = sim_page(test, e, RW);
	u8 *hdr;

	*bad = jd + ACCMAP_SIM_JD_ALIGN;
	hdr = sim_kva(test, e, jd, ACCMAP_SIM_JD_SIZE);
	hdr[ACCMAP_SIM_JD_TYPE] = ACCMAP_SIM_JD_TYPE_MIN << 1 |
				  ACCMAP_SIM_JD_NEXT_64;
	sim_put64(test, e, jd + ACCMAP_SIM_JD_NEXT, *bad);
	hdr = sim_kva(test, e, *bad, ACCMAP_SIM_JD_SIZE);
	hdr[ACCMAP_SIM_JD_TYPE] = 0x30 << 1 | ACCMAP_SIM_JD_NEXT_64;
	return jd;
}

/* Starts the chain at @head on the slot, without waiting. */
static void add_start(struct kunit *test, struct sim_env *e, u64 head)
{
	add_write(test, e, JS(HEAD_NEXT_LO), lower_32_bits(head));
	add_write(test, e, JS(HEAD_NEXT_HI), upper_32_bits(head));
	add_write(test, e, JS(AFFINITY_NEXT_LO), 0xff);
	add_write(test, e, JS(CONFIG_NEXT), SIM_AS);
	add_write(test, e, JS(COMMAND_NEXT), MALI_JS_COMMAND_START);
}

static void expect_sim_job_failed(struct kunit *test, struct sim_env *e,
				  int ret, u32 op, u64 bad, s64 us)
{
	KUNIT_EXPECT_EQ(test, ret, -EIO);
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, e->res.failed_op, op);
	KUNIT_EXPECT_EQ(test, e->res.done, op);
	KUNIT_EXPECT_EQ(test, e->res.fault.as, (u32)SIM_SLOT);
	KUNIT_EXPECT_EQ(test, e->res.fault.status,
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	/* The descriptor the chain stopped at, not its head. */
	KUNIT_EXPECT_EQ(test, e->res.fault.address, bad);
	/* Ended by the failure: far less than the 5 s it could wait. */
	KUNIT_EXPECT_LT(test, us, (s64)SIM_WAIT_US / 10);
	kunit_info(test, "job failure seen after %lld us\n", us);
}

/* A WAIT_IRQ for the DONE bit ends at once when the chain fails. */
static void sim_job_failed_wait(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u64 head, bad;
	ktime_t start;
	u32 wait;
	int ret;

	head = put_failing_chain(test, e, &bad);
	add_as_setup(test, e);
	add_start(test, e, head);
	wait = e->nops;
	add_wait(test, e, ACCMAP_REPLAY_IRQ_JOB, MALI_JOB_IRQ_DONE(SIM_SLOT));
	add_write(test, e, MALI_GPU_IRQ_MASK, 0);	/* never reached */
	start = ktime_get();
	ret = sim_run(e);
	expect_sim_job_failed(test, e, ret, wait, bad,
			      ktime_us_delta(ktime_get(), start));
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, bad + ACCMAP_SIM_JD_STATUS),
			(u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, head + ACCMAP_SIM_JD_STATUS),
			(u32)MALI_JS_STATUS_DONE);
}

/* A POLL for the slot's DONE status ends at once when the chain fails. */
static void sim_job_failed_poll(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u64 head, bad;
	ktime_t start;
	u32 poll;
	int ret;

	head = put_failing_chain(test, e, &bad);
	add_as_setup(test, e);
	add_start(test, e, head);
	poll = e->nops;
	add_poll(test, e, JS(STATUS), MALI_JS_STATUS_DONE, 0xff);
	start = ktime_get();
	ret = sim_run(e);
	expect_sim_job_failed(test, e, ret, poll, bad,
			      ktime_us_delta(ktime_get(), start));
	/* The POLL's value: the status it read last. */
	KUNIT_EXPECT_EQ(test, e->res.value, (u32)MALI_JS_STATUS_DATA_INVALID_FAULT);
}

/* Waiting for the FAILED bit itself: the failure is what was expected. */
static void sim_job_failed_expected(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	u64 head, bad;

	head = put_failing_chain(test, e, &bad);
	add_as_setup(test, e);
	add_job(test, e, head);		/* WAIT_IRQ of DONE | FAILED */
	add_read(test, e, JS(STATUS), MALI_JS_STATUS_DATA_INVALID_FAULT, 0xff);
	add_read(test, e, JS(HEAD_LO), lower_32_bits(bad), ~0U);
	add_read(test, e, JS(HEAD_HI), upper_32_bits(bad), ~0U);
	add_write(test, e, JS(HEAD_NEXT_LO), 0);	/* then more ops */
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
	KUNIT_EXPECT_EQ(test, e->res.reason, (u32)ACCMAP_REPLAY_OK);
	/* On success, what the last READ read. */
	KUNIT_EXPECT_EQ(test, e->res.value, upper_32_bits(bad));

	/* A POLL of JOB_IRQ_RAWSTAT for the bit: the same. */
	e = new_sim(test);
	head = put_failing_chain(test, e, &bad);
	add_as_setup(test, e);
	add_start(test, e, head);
	add_poll(test, e, MALI_JOB_IRQ_RAWSTAT, MALI_JOB_IRQ_FAILED(SIM_SLOT),
		 MALI_JOB_IRQ_FAILED(SIM_SLOT));
	add_read(test, e, JS(STATUS), MALI_JS_STATUS_DATA_INVALID_FAULT, 0xff);
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
}

/* LATEST_FLUSH captured into the slot's FLUSH_ID_NEXT. */
static void sim_capture_flush_id(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_op cap = {
		.op = R, .flags = CAP, .offset = MALI_LATEST_FLUSH,
	};
	const struct accmap_replay_op put = {
		.op = W, .flags = CAPD, .offset = JS(FLUSH_ID_NEXT),
	};
	u32 flush;

	/* A cache clean moves LATEST_FLUSH on. */
	add_write(test, e, MALI_GPU_COMMAND, MALI_GPU_CMD_CLEAN_INV_CACHES);
	add(test, e, &cap);
	add(test, e, &put);
	add_read(test, e, JS(FLUSH_ID_NEXT), 0, 0);
	KUNIT_EXPECT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, e->res.done, e->nops);
	flush = e->target.ops->read32(&e->s, MALI_LATEST_FLUSH);
	KUNIT_EXPECT_NE(test, flush, 0U);	/* not FLUSH_ID_NEXT's reset value */
	KUNIT_EXPECT_EQ(test, e->s.capture, flush);
	KUNIT_EXPECT_EQ(test, e->res.value, flush);
	KUNIT_EXPECT_EQ(test, e->target.ops->read32(&e->s, JS(FLUSH_ID_NEXT)),
			flush);
	kunit_info(test, "LATEST_FLUSH %#x\n", flush);
}

static void sim_release_as(struct kunit *test)
{
	struct sim_env *e = new_sim(test);
	const struct accmap_replay_target_ops *t = e->target.ops;
	u64 jd, a, c;

	sim_vadd_pages(test, e, RW, &jd, &a, &c);
	add_power_on(test, e);
	add_as_setup(test, e);
	add_job(test, e, jd);
	KUNIT_ASSERT_EQ(test, sim_run(e), 0);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, c + 4), 1001U);

	KUNIT_EXPECT_EQ(test, accmap_replay_release_as(&e->s), 0);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSTAB_LO)), 0U);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSTAB_HI)), 0U);
	KUNIT_EXPECT_EQ(test, t->read32(&e->s, AS(TRANSCFG_LO)),
			(u32)MALI_TRANSCFG_ADRMODE_UNMAPPED);

	/* The next run starts the same job and nothing else. */
	put_vadd(test, e, jd, a, a + 4 * SIM_VADD_N, c);
	memset(sim_kva(test, e, c, SZ_4K), 0, SZ_4K);
	e->nops = 0;
	memset(&e->res, 0, sizeof(e->res));
	e->res.failed_op = U32_MAX;
	add_job(test, e, jd);
	KUNIT_EXPECT_EQ(test, sim_run(e), -EIO);
	expect_job_fault(test, e, 0, jd);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, c + 4), 0U);
	KUNIT_EXPECT_EQ(test, sim_get32(test, e, jd + MALI_JD_EXCEPTION_STATUS),
			0U);
}

/* ---- the session's isolation rules ---- */

#define SAS		2		/* the session's address space */
#define OAS		5		/* another one */
#define ASR(as, r)	(MALI_AS_BASE(as) + MALI_AS_##r)
#define JSR(n, r)	(MALI_JS_BASE(n) + MALI_JS_##r)
#define A64		ACCMAP_PGT_MALI_AARCH64_4K
#define LPAE		ACCMAP_PGT_MALI_LPAE
#define M_A64		MALI_TRANSCFG_ADRMODE_AARCH64_4K
#define M_LEG		MALI_TRANSCFG_ADRMODE_LEGACY
#define M_UNM		MALI_TRANSCFG_ADRMODE_UNMAPPED
#define INA48		MALI_TRANSCFG_INA_BITS(48)
#define KBASE_CFG	(MALI_TRANSCFG_PTW_MEMATTR_WB | MALI_TRANSCFG_PTW_RA)

struct rule_case {
	const char *name;
	u32 format;
	struct accmap_replay_op op;
	int ret;
};

static const struct rule_case rule_cases[] = {
	/* The root: only WRITE_ROOT, only into the session's TRANSTAB. */
	{ "root_lo", A64, OP(.op = WR, .offset = ASR(SAS, TRANSTAB_LO)), 0 },
	{ "root_hi", A64, OP(.op = WR, .flags = HI,
			     .offset = ASR(SAS, TRANSTAB_HI)), 0 },
	{ "root_other_as", A64, OP(.op = WR, .offset = ASR(OAS, TRANSTAB_LO)),
	  -EINVAL },
	{ "root_other_as_hi", LPAE, OP(.op = WR, .flags = HI,
				       .offset = ASR(0, TRANSTAB_HI)), -EINVAL },
	{ "root_halves_swapped", A64, OP(.op = WR, .offset = ASR(SAS, TRANSTAB_HI)),
	  -EINVAL },
	{ "root_into_memattr", A64, OP(.op = WR, .offset = ASR(SAS, MEMATTR_LO)),
	  -EINVAL },
	{ "root_into_job_slot", A64, OP(.op = WR, .offset = JSR(0, HEAD_NEXT_LO)),
	  -EINVAL },
	{ "write_transtab", A64, OP(.op = W, .offset = ASR(SAS, TRANSTAB_LO)),
	  -EINVAL },
	{ "read_transtab", A64, OP(.op = R, .offset = ASR(SAS, TRANSTAB_HI)),
	  -EINVAL },
	{ "poll_transtab", A64, OP(.op = P, .offset = ASR(SAS, TRANSTAB_LO),
				   .timeout_us = 1), -EINVAL },

	/* Another address space: nothing at all. */
	{ "other_memattr", A64, OP(.op = W, .offset = ASR(OAS, MEMATTR_LO)),
	  -EINVAL },
	{ "other_command", A64, OP(.op = W, .offset = ASR(OAS, COMMAND),
				   .value = MALI_AS_CMD_UPDATE), -EINVAL },
	{ "other_transcfg", A64, OP(.op = W, .offset = ASR(OAS, TRANSCFG_LO),
				    .value = M_UNM), -EINVAL },
	{ "other_faultaddress", A64, OP(.op = R,
					.offset = ASR(OAS, FAULTADDRESS_LO)),
	  -EINVAL },
	{ "other_status_poll", A64, OP(.op = P, .offset = ASR(15, STATUS),
				       .timeout_us = 1), -EINVAL },
	{ "other_last_reg", A64, OP(.op = R, .offset = MALI_AS_BASE(16) - 4),
	  -EINVAL },
	{ "own_memattr", A64, OP(.op = W, .offset = ASR(SAS, MEMATTR_HI),
				 .value = ~0U), 0 },
	{ "own_command", A64, OP(.op = W, .offset = ASR(SAS, COMMAND),
				 .value = MALI_AS_CMD_FLUSH_MEM), 0 },
	{ "own_faultstatus", A64, OP(.op = R, .offset = ASR(SAS, FAULTSTATUS)), 0 },
	{ "own_status_poll", A64, OP(.op = P, .offset = ASR(SAS, STATUS),
				     .timeout_us = 1), 0 },
	{ "own_transcfg_read", A64, OP(.op = R, .offset = ASR(SAS, TRANSCFG_LO)),
	  0 },
	{ "past_the_as_blocks", A64, OP(.op = W, .offset = MALI_AS_BASE(16)), 0 },

	/* TRANSCFG_LO: every field. */
	{ "cfg_own_mode", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				  .value = M_A64), 0 },
	{ "cfg_kbase", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
			       .value = M_A64 | KBASE_CFG |
					MALI_TRANSCFG_PTW_SH_MASK), 0 },
	{ "cfg_panfrost", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				  .value = M_A64 | KBASE_CFG | INA48 |
					   (2U << 28)), 0 },
	{ "cfg_lpae_mode", LPAE, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				    .value = M_LEG | MALI_TRANSCFG_PTW_MEMATTR_NC),
	  0 },
	{ "cfg_unmapped", LPAE, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				   .value = M_UNM | KBASE_CFG), 0 },
	{ "cfg_other_format", LPAE, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				       .value = M_A64), -EINVAL },
	{ "cfg_legacy_on_a64", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				       .value = M_LEG), -EINVAL },
	{ "cfg_identity", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				  .value = MALI_TRANSCFG_ADRMODE_IDENTITY), -EINVAL },
	{ "cfg_64k", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
			     .value = 8), -EINVAL },
	{ "cfg_input_39_bits", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				       .value = M_A64 | MALI_TRANSCFG_INA_BITS(39)),
	  -EINVAL },
	{ "cfg_input_47_bits", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				       .value = M_A64 | MALI_TRANSCFG_INA_BITS(47)),
	  -EINVAL },
	{ "cfg_input_lpae", LPAE, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				     .value = M_LEG | (31U << 6)), -EINVAL },
	{ "cfg_output_bits", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				     .value = M_A64 | (40U << 14)), -EINVAL },
	{ "cfg_sl_concat", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
				   .value = M_A64 | MALI_TRANSCFG_SL_CONCAT), -EINVAL },
	{ "cfg_walk_attr_reserved", A64, OP(.op = W,
					    .offset = ASR(SAS, TRANSCFG_LO),
					    .value = M_A64 |
						     MALI_TRANSCFG_PTW_MEMATTR_MASK),
	  -EINVAL },
	{ "cfg_bit4", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
			      .value = M_A64 | BIT(4)), -EINVAL },
	{ "cfg_bit23", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
			       .value = M_A64 | BIT(23)), -EINVAL },
	{ "cfg_bit31", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_LO),
			       .value = M_UNM | BIT(31)), -EINVAL },

	/* TRANSCFG_HI: 0 only. */
	{ "cfg_hi_zero", A64, OP(.op = W, .offset = ASR(SAS, TRANSCFG_HI)), 0 },
	{ "cfg_hi_disable_af_fault", A64, OP(.op = W,
					     .offset = ASR(SAS, TRANSCFG_HI),
					     .value = BIT(34 - 32)), -EINVAL },
	{ "cfg_hi_top", LPAE, OP(.op = W, .offset = ASR(SAS, TRANSCFG_HI),
				 .value = BIT(31)), -EINVAL },
	{ "cfg_hi_read", A64, OP(.op = R, .offset = ASR(SAS, TRANSCFG_HI)), 0 },

	/* Job slots and performance counters select the session's AS only. */
	{ "js_config_next_own", A64, OP(.op = W, .offset = JSR(0, CONFIG_NEXT),
					.value = 0x87b00 | SAS), 0 },
	{ "js_config_next_other", A64, OP(.op = W, .offset = JSR(1, CONFIG_NEXT),
					  .value = 0x87b00 | OAS), -EINVAL },
	{ "js_config_next_as0", LPAE, OP(.op = W, .offset = JSR(15, CONFIG_NEXT)),
	  -EINVAL },
	{ "js_config_other", A64, OP(.op = W, .offset = JSR(2, CONFIG),
				     .value = 0xf), -EINVAL },
	{ "js_config_own", A64, OP(.op = W, .offset = JSR(2, CONFIG),
				   .value = SAS), 0 },
	{ "js_config_read", A64, OP(.op = R, .offset = JSR(0, CONFIG_NEXT)), 0 },
	{ "js_head_next", A64, OP(.op = W, .offset = JSR(0, HEAD_NEXT_LO),
				  .value = 0xf), 0 },
	{ "prfcnt_off", A64, OP(.op = W, .offset = MALI_PRFCNT_CONFIG), 0 },
	{ "prfcnt_own", A64, OP(.op = W, .offset = MALI_PRFCNT_CONFIG,
				.value = SAS << 4 | 1), 0 },
	{ "prfcnt_other", A64, OP(.op = W, .offset = MALI_PRFCNT_CONFIG,
				  .value = OAS << 4 | 2), -EINVAL },

	/* Ops without a register. */
	{ "delay", A64, OP(.op = D, .timeout_us = 1), 0 },
	{ "wait_irq", A64, OP(.op = I, .mask = 1, .timeout_us = 1), 0 },
};

static void rule_desc(const struct rule_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rule, rule_cases, rule_desc);

static void exec_session_rules(struct kunit *test)
{
	const struct rule_case *c = test->param_value;
	struct accmap_replay_session s = { .as = SAS, .format = c->format };

	/* Each case is well formed: only the session's rules judge it. */
	KUNIT_ASSERT_EQ(test, accmap_replay_check_op(&c->op, MALI_WINDOW_SIZE), 0);
	KUNIT_EXPECT_EQ(test, accmap_replay_check_session_op(&s, &c->op), c->ret);
}

/* The executor applies the rules too, before the op reaches the target. */
static void exec_session_rules_run(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = W, .offset = FAKE_REG, .value = 1),
		OP(.op = W, .offset = MALI_AS_BASE(FAKE_AS + 1) + MALI_AS_MEMATTR_LO,
		   .value = 2),
	};

	KUNIT_EXPECT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 10), -EINVAL);
	expect_failed(test, e, 1, 11, ACCMAP_REPLAY_INVALID);
	KUNIT_EXPECT_EQ(test, e->gpu.writes, 1U);
}

/* Releasing the AS: the root and mode cleared, then UPDATE. */
static void exec_release_as(struct kunit *test)
{
	struct fake_env *e = new_fake(test);
	const struct accmap_replay_op ops[] = {
		OP(.op = WR, .offset = FAKE_ROOT_LO),
		OP(.op = WR, .flags = HI, .offset = FAKE_ROOT_HI),
		OP(.op = W, .offset = FAKE_AS_REG(TRANSCFG_LO),
		   .value = MALI_TRANSCFG_ADRMODE_AARCH64_4K),
		OP(.op = W, .offset = FAKE_AS_REG(MEMATTR_LO), .value = 0x88),
	};

	KUNIT_ASSERT_EQ(test, run(e, ops, ARRAY_SIZE(ops), 0), 0);
	KUNIT_EXPECT_EQ(test, accmap_replay_release_as(&e->s), 0);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_ROOT_LO / 4], 0U);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_ROOT_HI / 4], 0U);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_AS_REG(TRANSCFG_LO) / 4],
			(u32)MALI_TRANSCFG_ADRMODE_UNMAPPED);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_AS_REG(COMMAND) / 4],
			(u32)MALI_AS_CMD_UPDATE);
	/* Only the session's own address space. */
	KUNIT_EXPECT_EQ(test, e->gpu.writes, 4U + 5U);

	/* An address space that stays busy: reported, UPDATE written anyway. */
	e = new_fake(test);
	e->gpu.as_busy = true;
	KUNIT_EXPECT_EQ(test, accmap_replay_release_as(&e->s), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, e->gpu.regs[FAKE_AS_REG(COMMAND) / 4],
			(u32)MALI_AS_CMD_UPDATE);
}

static struct kunit_case replay_exec_cases[] = {
	KUNIT_CASE_PARAM(exec_check_op, check_gen_params),
	KUNIT_CASE(exec_check_op_tiny_window),
	KUNIT_CASE(exec_write_read),
	KUNIT_CASE(exec_strict_mismatch),
	KUNIT_CASE(exec_poll),
	KUNIT_CASE(exec_poll_timeout),
	KUNIT_CASE(exec_wait_irq),
	KUNIT_CASE(exec_wait_irq_errors),
	KUNIT_CASE(exec_wait_irq_fault),
	KUNIT_CASE(exec_fault_end_of_chunk),
	KUNIT_CASE(exec_fault_after_wait),
	KUNIT_CASE(exec_job_failed),
	KUNIT_CASE(exec_job_failed_not_waited),
	KUNIT_CASE(exec_job_failed_expected),
	KUNIT_CASE(exec_job_failed_fault_wins),
	KUNIT_CASE(exec_capture),
	KUNIT_CASE(exec_captured_none),
	KUNIT_CASE(exec_captured_rules),
	KUNIT_CASE(exec_write_root),
	KUNIT_CASE(exec_recheck),
	KUNIT_CASE(exec_delay),
	KUNIT_CASE(exec_chunks),
	KUNIT_CASE_PARAM(sim_gpu_id, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_power_on, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_as_setup, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job_unmapped, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job_read_only_output, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_plain_transtab, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_stale_root, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_foreign_as, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job_failed_wait, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job_failed_poll, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_job_failed_expected, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_capture_flush_id, sim_format_gen_params),
	KUNIT_CASE_PARAM(sim_release_as, sim_format_gen_params),
	KUNIT_CASE_PARAM(exec_session_rules, rule_gen_params),
	KUNIT_CASE(exec_session_rules_run),
	KUNIT_CASE(exec_release_as),
	{}
};

static struct kunit_suite replay_exec_suite = {
	.name = "accmap_replay_exec",
	.test_cases = replay_exec_cases,
};

kunit_test_suite(replay_exec_suite);

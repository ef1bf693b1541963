// SPDX-License-Identifier: GPL-2.0
/*
 * accmap replay on a register-window target (replay_mmio.c).
 *
 * The test guests give accmap one window over RAM the kernel does not
 * use, so its "registers" read back what was written and nothing else
 * changes them: that makes every effect of the executor visible.  The
 * environment variable ACCMAP_REPLAY_MMIO names the window and how it
 * signals ("mmio0:irq": an interrupt line that never fires, so WAIT_IRQ
 * can only time out; "mmio0:poll": no line, WAIT_IRQ polls IRQ_STATUS and
 * acknowledges through IRQ_CLEAR).  Without the variable every test fails:
 * the guests are meant to have the window.
 *
 * Register offsets are those of a Mali job-manager GPU, as the executor's
 * fault check and the interrupt handling assume.
 *
 * Nothing in RAM completes a soft reset either: GPU_IRQ_RAWSTAT reads
 * RESET_COMPLETED only if a run wrote it there.  So a session that ran
 * without it times out the reset at its release, honestly: that is how
 * the keep-back test makes the GPU "not stop".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

#define GPU_IRQ_RAWSTAT		0x0020
#define GPU_COMMAND		0x0030
#define RESET_COMPLETED		0x100
#define HI			ACCMAP_REPLAY_OP_HI
#define JOB_IRQ_RAWSTAT		0x1000
#define JOB_IRQ_CLEAR		0x1004
#define JOB_IRQ_STATUS		0x100c
#define JS0_HEAD_NEXT_LO	0x1840
#define JS_HEAD_LO(n)		(0x1800 + (n) * 0x80)
#define JS_HEAD_HI(n)		(0x1804 + (n) * 0x80)
#define JS_STATUS(n)		(0x1824 + (n) * 0x80)
#define MMU_IRQ_RAWSTAT		0x2000
#define PRFCNT_CONFIG		0x0068
#define JS_CONFIG(n)		(0x1818 + (n) * 0x80)
#define JS_CONFIG_NEXT(n)	(0x1858 + (n) * 0x80)
#define AS0_TRANSTAB_LO		0x2400
#define AS0_TRANSTAB_HI		0x2404
#define AS0_FAULTSTATUS		0x241c
#define AS0_TRANSCFG_LO		0x2430
#define AS0_FAULTADDRESS_LO	0x2420
#define AS0_FAULTADDRESS_HI	0x2424
#define AS(n, reg)		((reg) + (n) * 0x40)
#define AS0_MEMATTR_LO		0x2408
#define AS0_COMMAND		0x2418
#define AS0_TRANSCFG_HI		0x2434
#define CFG_A64			0x6
#define CFG_UNMAPPED		0x1
#define CFG_WB_RA		(2u << 24 | 1u << 30)
#define CFG_INA(bits)		((55u - (bits)) << 6)
#define CFG2			AS(2, AS0_TRANSCFG_LO)

static struct accmap_replay_target_info target;
static bool have_irq;

/* Find the window ACCMAP_REPLAY_MMIO names; false (and a failed check) if absent. */
static bool find_window(int dev)
{
	const char *env = getenv("ACCMAP_REPLAY_MMIO");
	char name[ACCMAP_REPLAY_NAME_LEN];
	const char *colon = env ? strchr(env, ':') : NULL;
	uint32_t i;

	if (!CHECK(colon, "ACCMAP_REPLAY_MMIO=name:irq|poll not set"))
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)(colon - env), env);
	have_irq = !strcmp(colon + 1, "irq");

	for (i = 0; i < 16; i++) {
		memset(&target, 0xa5, sizeof(target));
		target.index = i;
		if (ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &target))
			break;
		if (!strcmp(target.name, name))
			return true;
	}
	return CHECK(false, "no replay target named %s", name);
}

static int run(int dev, uint32_t session, struct accmap_replay_op *ops, uint32_t n,
	       struct accmap_replay_run *r);

/* A session on address space @as mapping one 64 KiB buffer at GPU VA 16 MiB; nothing run. */
static uint32_t setup_session_as(int dev, uint32_t format, uint32_t as, uint32_t *buf)
{
	struct accmap_replay_map map = {
		.gpu_va = 16 << 20,
		.length = 64 << 10,
		.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE,
	};
	struct accmap_replay_setup setup = {
		.maps = (uintptr_t)&map,
		.nr_maps = 1,
		.target = target.index,
		.format = format,
		.as = as,
		.va_bits = 48,
	};

	if (!CHECK_OK(am_buffer(dev, 64 << 10, 0, buf, false)))
		return 0;
	map.id = *buf;
	if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &setup)))
		return 0;
	CHECK(setup.table_pages >= 4, "%u table pages for one mapping", setup.table_pages);
	return setup.session;
}

static uint32_t setup_session(int dev, uint32_t format, uint32_t *buf)
{
	return setup_session_as(dev, format, 0, buf);
}

/* setup_session_as(), then a run that makes releasing the session quick. */
static uint32_t make_session_as(int dev, uint32_t format, uint32_t as, uint32_t *buf)
{
	struct accmap_replay_op reset_done = {
		.op = ACCMAP_REPLAY_OP_WRITE, .offset = GPU_IRQ_RAWSTAT, .value = RESET_COMPLETED,
	};
	struct accmap_replay_run r;
	uint32_t s = setup_session_as(dev, format, as, buf);

	if (!s)
		return 0;
	/*
	 * Nothing in RAM completes the soft reset a session that ran does
	 * when it goes: show it as done, so that release does not wait.
	 */
	CHECK_OK(run(dev, s, &reset_done, 1, &r));
	return s;
}

static uint32_t make_session(int dev, uint32_t format, uint32_t *buf)
{
	return make_session_as(dev, format, 0, buf);
}

/* Open the device and make a session on the window; 0 if that failed. */
static uint32_t open_session(int *dev, uint32_t format, uint32_t *buf)
{
	*dev = am_open();
	if (!find_window(*dev))
		return 0;
	return make_session(*dev, format, buf);
}

static int run(int dev, uint32_t session, struct accmap_replay_op *ops, uint32_t n,
	       struct accmap_replay_run *r)
{
	memset(r, 0xa5, sizeof(*r));
	r->ops = (uintptr_t)ops;
	r->nr_ops = n;
	r->session = session;
	r->flags = 0;
	r->pad = 0;
	return ioctl(dev, ACCMAP_IOC_REPLAY_RUN, r);
}

#define WR(off, val)	{ .op = ACCMAP_REPLAY_OP_WRITE, .offset = (off), .value = (val) }
#define RD(off, val)	{ .op = ACCMAP_REPLAY_OP_READ, .flags = ACCMAP_REPLAY_OP_STRICT, \
			  .offset = (off), .value = (val), .mask = ~0u }

static void test_query(void)
{
	int dev = am_open();

	if (!find_window(dev))
		return;
	CHECK(target.window_size == 0x4000, "window of %llu bytes",
	      (unsigned long long)target.window_size);
	CHECK(!(target.flags & ACCMAP_REPLAY_TARGET_SIM), "flags %#x", target.flags);
	CHECK(!!(target.flags & ACCMAP_REPLAY_TARGET_IRQ) == have_irq, "flags %#x, want irq %d",
	      target.flags, have_irq);
	CHECK(target.formats == (1u << ACCMAP_PGT_MALI_AARCH64_4K | 1u << ACCMAP_PGT_MALI_LPAE),
	      "formats %#x", target.formats);
	CHECK(target.as_count == 16, "as_count %u", target.as_count);
	CHECK(target.sessions == 0, "%u sessions", target.sessions);
	close(dev);
}

/* Writes reach the window and read back; a strict mismatch stops the run. */
static void test_write_read(void)
{
	struct accmap_replay_op ops[] = {
		WR(JS0_HEAD_NEXT_LO, 0x12345678),
		RD(JS0_HEAD_NEXT_LO, 0x12345678),
		RD(JS0_HEAD_NEXT_LO, 0x12345679),
		WR(JS0_HEAD_NEXT_LO, 0),
	};
	struct accmap_replay_run r;
	uint32_t buf, s;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	CHECK_ERR(run(dev, s, ops, 4, &r), EIO);
	CHECK(r.done == 2 && r.failed_op == 2 && r.reason == ACCMAP_REPLAY_MISMATCH &&
	      r.value == 0x12345678, "done %u failed_op %u reason %u value %#x", r.done,
	      r.failed_op, r.reason, r.value);
	CHECK(r.fault_as == 0xffffffffu && r.fault_status == 0 && r.fault_addr == 0,
	      "fault fields %u %#x %#llx", r.fault_as, r.fault_status,
	      (unsigned long long)r.fault_addr);

	/* A non-strict read does not stop the run. */
	ops[2].flags = 0;
	CHECK_OK(run(dev, s, ops, 4, &r));
	CHECK(r.done == 4 && r.failed_op == 0xffffffffu && r.reason == ACCMAP_REPLAY_OK,
	      "done %u failed_op %u reason %u", r.done, r.failed_op, r.reason);
	close(dev);
}

/*
 * A session programs only its own address space (the one REPLAY_SETUP
 * named, 2 here).  The root is a device address: it reaches TRANSTAB
 * only through WRITE_ROOT, and nothing reads TRANSTAB back.  TRANSCFG is
 * checked field by field, TRANSCFG_HI must stay 0, job slots and the
 * performance counters may name no other address space.  Every refusal
 * is EINVAL with reason INVALID at the op, before anything ran.
 */
static void test_op_policy(void)
{
	static const struct {
		uint32_t format, op, flags, offset, value, timeout_us;
		bool ok;
	} cases[] = {
		/* WRITE_ROOT */
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, 0, AS(2, AS0_TRANSTAB_LO), 0, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, HI, AS(2, AS0_TRANSTAB_HI), 0, 0, true },
		{ 1, ACCMAP_REPLAY_OP_WRITE_ROOT, 0, AS(2, AS0_TRANSTAB_LO), 0, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, 0, AS(0, AS0_TRANSTAB_LO), 0, 0, false },
		{ 1, ACCMAP_REPLAY_OP_WRITE_ROOT, HI, AS(7, AS0_TRANSTAB_HI), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, 0, AS(2, AS0_TRANSTAB_HI), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, HI, AS(2, AS0_TRANSTAB_LO), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE_ROOT, 0, JS0_HEAD_NEXT_LO, 0, 0, false },
		/* TRANSTAB through other ops */
		{ 0, ACCMAP_REPLAY_OP_READ, 0, AS(2, AS0_TRANSTAB_LO), 0, 0, false },
		{ 1, ACCMAP_REPLAY_OP_POLL, 0, AS(2, AS0_TRANSTAB_HI), 0, 1000, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(2, AS0_TRANSTAB_LO), 0, 0, false },
		/* another address space, any register */
		{ 0, ACCMAP_REPLAY_OP_READ, 0, AS(0, AS0_FAULTSTATUS), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_READ, 0, AS(15, AS0_FAULTADDRESS_HI), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(3, AS0_MEMATTR_LO), 0x88, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(1, AS0_COMMAND), 1, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(3, AS0_TRANSCFG_LO), CFG_UNMAPPED, 0, false },
		{ 1, ACCMAP_REPLAY_OP_POLL, 0, AS(0, AS0_FAULTSTATUS), 0, 1000, false },
		/* the session's own address space */
		{ 0, ACCMAP_REPLAY_OP_READ, 0, AS(2, AS0_FAULTSTATUS), 0, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(2, AS0_MEMATTR_LO), 0x4c8d888d, 0, true },
		{ 0, ACCMAP_REPLAY_OP_READ, 0, AS(2, AS0_TRANSCFG_LO), 0, 0, true },
		/* TRANSCFG_LO, field by field */
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | CFG_WB_RA, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2,
		  CFG_A64 | CFG_WB_RA | 2u << 28 | CFG_INA(48), 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_UNMAPPED, 0, true },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, 0, 0, true },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, 2, 0, false },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, 8, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | CFG_INA(39), 0,
		  false },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_INA(32), 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | 40u << 14, 0,
		  false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | 1u << 22, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | 3u << 24, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | 1u << 4, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, CFG2, CFG_A64 | 1u << 31, 0, false },
		/* TRANSCFG_HI */
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(2, AS0_TRANSCFG_HI), 0, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, AS(2, AS0_TRANSCFG_HI), 1u << 2, 0, false },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, AS(2, AS0_TRANSCFG_HI), 1u << 1, 0, false },
		/* job slots and performance counters */
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, JS_CONFIG_NEXT(0), 0x87b00 | 2, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, JS_CONFIG_NEXT(0), 0x87b00 | 5, 0, false },
		{ 1, ACCMAP_REPLAY_OP_WRITE, 0, JS_CONFIG_NEXT(2), 0, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, JS_CONFIG(1), 0xf, 0, false },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, PRFCNT_CONFIG, 0, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, PRFCNT_CONFIG, 2u << 4 | 1, 0, true },
		{ 0, ACCMAP_REPLAY_OP_WRITE, 0, PRFCNT_CONFIG, 5u << 4 | 1, 0, false },
	};
	struct accmap_replay_op ops[2] = { WR(JS0_HEAD_NEXT_LO, 1) };
	struct accmap_replay_run r;
	uint32_t buf, s[2], i;
	int dev = am_open();

	if (!find_window(dev))
		return;
	s[0] = make_session_as(dev, ACCMAP_PGT_MALI_AARCH64_4K, 2, &buf);
	s[1] = make_session_as(dev, ACCMAP_PGT_MALI_LPAE, 2, &buf);
	if (!s[0] || !s[1])
		return;
	for (i = 0; i < TAP_ARRAY_SIZE(cases); i++) {
		ops[1] = (struct accmap_replay_op){ .op = cases[i].op, .flags = cases[i].flags,
						    .offset = cases[i].offset,
						    .value = cases[i].value,
						    .timeout_us = cases[i].timeout_us };
		if (cases[i].op == ACCMAP_REPLAY_OP_POLL)
			ops[1].mask = 0;	/* matches at once */
		if (cases[i].ok) {
			CHECK(!run(dev, s[cases[i].format], ops, 2, &r),
			      "case %u: %s (reason %u)", i, strerror(errno), r.reason);
			continue;
		}
		CHECK_ERR(run(dev, s[cases[i].format], ops, 2, &r), EINVAL);
		CHECK(r.done == 0 && r.failed_op == 1 && r.reason == ACCMAP_REPLAY_INVALID,
		      "case %u: done %u failed_op %u reason %u", i, r.done, r.failed_op,
		      r.reason);
	}
	close(dev);
}

/*
 * A session's address space keeps what its run wrote for its next run (a
 * recording replayed in batches sets it up in one run and starts jobs in
 * another); the run of another session on the same address space finds
 * it pointing at nothing: TRANSTAB cleared (not readable, so not checked
 * here), TRANSCFG unmapped, and an UPDATE for the MMU to take it.
 * MEMATTR is left as it was.  A failed run is no different.
 */
static void test_roots_cleared(void)
{
	struct accmap_replay_op setup_ops[] = {
		{ .op = ACCMAP_REPLAY_OP_WRITE_ROOT, .offset = AS(2, AS0_TRANSTAB_LO) },
		{ .op = ACCMAP_REPLAY_OP_WRITE_ROOT, .flags = HI,
		  .offset = AS(2, AS0_TRANSTAB_HI) },
		WR(AS(2, AS0_TRANSCFG_LO), CFG_A64 | CFG_WB_RA),
		WR(AS(2, AS0_MEMATTR_LO), 0x888d),
		WR(AS(2, AS0_COMMAND), 2),	/* LOCK: anything but UPDATE */
		RD(AS(2, AS0_TRANSCFG_LO), CFG_A64 | CFG_WB_RA),
	};
	struct accmap_replay_op kept[] = {
		RD(AS(2, AS0_TRANSCFG_LO), CFG_A64 | CFG_WB_RA),
		RD(AS(2, AS0_COMMAND), 2),
	};
	struct accmap_replay_op check[] = {
		RD(AS(2, AS0_TRANSCFG_LO), CFG_UNMAPPED),
		RD(AS(2, AS0_TRANSCFG_HI), 0),
		RD(AS(2, AS0_COMMAND), 1),
		RD(AS(2, AS0_MEMATTR_LO), 0x888d),
	};
	struct accmap_replay_run r;
	uint32_t buf, s, t;
	int dev = am_open(), ret;

	if (!find_window(dev))
		return;
	s = make_session_as(dev, ACCMAP_PGT_MALI_AARCH64_4K, 2, &buf);
	t = make_session_as(dev, ACCMAP_PGT_MALI_LPAE, 2, &buf);
	if (!s || !t)
		return;
	CHECK_OK(run(dev, s, setup_ops, TAP_ARRAY_SIZE(setup_ops), &r));
	/* The session's next run finds its configuration... */
	ret = run(dev, s, kept, TAP_ARRAY_SIZE(kept), &r);
	CHECK(!ret, "the session's next run: op %u read %#x (%s)", r.failed_op, r.value,
	      strerror(errno));
	/* ... another session's does not, nor does the first one's after it. */
	ret = run(dev, t, check, TAP_ARRAY_SIZE(check), &r);
	CHECK(!ret, "another session's run: op %u read %#x (%s)", r.failed_op, r.value,
	      strerror(errno));
	ret = run(dev, s, check, TAP_ARRAY_SIZE(check), &r);
	CHECK(!ret, "the first session's run after it: op %u read %#x (%s)", r.failed_op,
	      r.value, strerror(errno));
	/* A failed run's configuration goes the same way. */
	setup_ops[5].value = 0;
	CHECK_ERR(run(dev, s, setup_ops, TAP_ARRAY_SIZE(setup_ops), &r), EIO);
	ret = run(dev, t, check, TAP_ARRAY_SIZE(check), &r);
	CHECK(!ret, "after a failed run: op %u read %#x", r.failed_op, r.value);
	close(dev);
}

/* A "name<TAB>value" total of the debugfs file "replay", or -1. */
static long long replay_total(const char *name)
{
	return dbg_total("replay", name);
}

/* Bytes the heap of buffer @id holds. */
static long long heap_used(int dev, uint32_t id)
{
	struct accmap_heap_info hi;
	struct accmap_info info;

	if (am_info(dev, id, &info) || am_query_heap(dev, info.heap, &hi))
		return -1;
	return (long long)hi.used;
}

/*
 * A GPU that does not reset when a session goes may still use its tables
 * and buffers: they are kept back, counted in debugfs, and the buffer
 * stays allocated after its id is freed; the next reset that completes
 * on the window gives them back.
 */
static void test_keep_back(void)
{
	struct accmap_replay_op no_reset = WR(GPU_IRQ_RAWSTAT, 0);
	struct accmap_replay_destroy d = { 0 };
	struct accmap_replay_run r;
	long long ever, used, used_kept, pages;
	uint32_t buf, buf2, s, t;
	int dev = am_open();

	if (!find_window(dev))
		return;
	/* Checked, not bailed out on: without the lines the heap check still runs. */
	CHECK(replay_total("kept_sessions") == 0, "kept_sessions %lld before",
	      replay_total("kept_sessions"));
	ever = replay_total("kept_ever");

	s = setup_session(dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	/* It ran, and RAWSTAT will not say RESET_COMPLETED. */
	CHECK_OK(run(dev, s, &no_reset, 1, &r));
	used = heap_used(dev, buf);
	CHECK_OK(am_free(dev, buf));
	d.session = s;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));

	CHECK(replay_total("kept_sessions") == 1, "kept_sessions %lld",
	      replay_total("kept_sessions"));
	CHECK(replay_total("kept_mapped") == 64 << 10, "kept_mapped %lld",
	      replay_total("kept_mapped"));
	pages = replay_total("kept_table_pages");
	CHECK(pages >= 4, "kept_table_pages %lld", pages);
	CHECK(replay_total("kept_ever") == ever + 1, "kept_ever %lld, was %lld",
	      replay_total("kept_ever"), ever);
	CHECK(replay_total("sessions") == 0, "%lld live sessions", replay_total("sessions"));

	/* The buffer is not freed with its id: the session's reference stays. */
	t = make_session(dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf2);
	if (!t)
		return;
	used_kept = heap_used(dev, buf2);
	CHECK(used >= 0 && used_kept == used + (64 << 10),
	      "heap used %lld with the kept buffer, %lld before its id went", used_kept, used);

	/* A reset that completes: nothing kept back is in use any more. */
	d.session = t;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));
	CHECK(replay_total("kept_sessions") == 0 && replay_total("kept_mapped") == 0 &&
	      replay_total("kept_table_pages") == 0,
	      "after a reset: kept %lld sessions, %lld bytes, %lld table pages",
	      replay_total("kept_sessions"), replay_total("kept_mapped"),
	      replay_total("kept_table_pages"));
	CHECK(replay_total("kept_ever") == ever + 1, "kept_ever %lld", replay_total("kept_ever"));
	CHECK(heap_used(dev, buf2) == used, "heap used %lld after the reset, want %lld",
	      heap_used(dev, buf2), used);
	close(dev);
}

/*
 * A session that ran soft-resets the GPU when it goes (its tables go with
 * it); one that never ran leaves the window alone.
 */
static void test_release_resets(void)
{
	struct accmap_replay_op ops[] = { WR(GPU_COMMAND, 0) };
	struct accmap_replay_op check = RD(GPU_COMMAND, 0);
	struct accmap_replay_destroy d = { 0 };
	struct accmap_replay_run r;
	uint32_t buf, s;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	CHECK_OK(run(dev, s, ops, 1, &r));
	d.session = s;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));

	s = make_session(dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	check.value = 1;	/* SOFT_RESET */
	CHECK_OK(run(dev, s, &check, 1, &r));
	CHECK_OK(run(dev, s, ops, 1, &r));
	d.session = setup_session(dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));
	check.value = 0;
	CHECK_OK(run(dev, s, &check, 1, &r));
	close(dev);
}

/* Offsets outside the window and malformed ops are refused before anything runs. */
static void test_bad_ops(void)
{
	struct accmap_replay_op ops[] = {
		WR(JS0_HEAD_NEXT_LO, 0x1111),
		WR(0x4000, 0),
	};
	struct accmap_replay_op check = RD(JS0_HEAD_NEXT_LO, 0);
	struct accmap_replay_op zero = WR(JS0_HEAD_NEXT_LO, 0);
	struct accmap_replay_run r;
	uint32_t buf, s;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	CHECK_ERR(run(dev, s, &check, 0, &r), EINVAL);
	CHECK_OK(run(dev, s, &zero, 1, &r));
	CHECK_ERR(run(dev, s, ops, 2, &r), EINVAL);
	CHECK(r.done == 0 && r.failed_op == 1 && r.reason == ACCMAP_REPLAY_INVALID,
	      "done %u failed_op %u reason %u", r.done, r.failed_op, r.reason);
	ops[1].offset = 0x3ffe;
	CHECK_ERR(run(dev, s, ops, 2, &r), EINVAL);
	ops[1].offset = 0x3ffc + 4 * 0x4000000;
	CHECK_ERR(run(dev, s, ops, 2, &r), EINVAL);
	/* The first op never ran. */
	CHECK_OK(run(dev, s, &check, 1, &r));
	ops[1].offset = 0x3ffc;
	CHECK_OK(run(dev, s, ops, 2, &r));
	close(dev);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* run(), and in *@secs how long the call took. */
static int timed_run(int dev, uint32_t session, struct accmap_replay_op *ops, uint32_t n,
		     struct accmap_replay_run *r, double *secs)
{
	double t = now();
	int ret = run(dev, session, ops, n, r);

	*secs = now() - t;
	return ret;
}

/* A poll that never succeeds ends with ETIMEDOUT after its timeout. */
static void test_poll_timeout(void)
{
	struct accmap_replay_op ops[] = {
		WR(JS0_HEAD_NEXT_LO, 0),
		{ .op = ACCMAP_REPLAY_OP_POLL, .offset = JS0_HEAD_NEXT_LO, .mask = 1,
		  .value = 1, .timeout_us = 300000 },
	};
	struct accmap_replay_run r;
	uint32_t buf, s;
	double t;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	CHECK_ERR(timed_run(dev, s, ops, 2, &r, &t), ETIMEDOUT);
	CHECK(r.done == 1 && r.failed_op == 1 && r.reason == ACCMAP_REPLAY_TIMEOUT &&
	      r.value == 0, "done %u failed_op %u reason %u value %#x", r.done, r.failed_op,
	      r.reason, r.value);
	CHECK(t >= 0.3 && t < 1.3, "poll of 300 ms took %.3f s", t);
	CHECK(r.elapsed_ns >= 300000000ull, "elapsed_ns %llu", (unsigned long long)r.elapsed_ns);

	/* Once the value is there, the poll succeeds at once. */
	ops[0].value = 1;
	CHECK_OK(run(dev, s, ops, 2, &r));
	close(dev);
}

/*
 * WAIT_IRQ: with an interrupt line that never fires it times out even if
 * IRQ_STATUS reads set; polling, it sees IRQ_STATUS and acknowledges the
 * bits it waited for through IRQ_CLEAR.
 */
static void test_wait_irq(void)
{
	struct accmap_replay_op ops[] = {
		WR(JOB_IRQ_CLEAR, 0),
		WR(JOB_IRQ_STATUS, 0x3),
		{ .op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = ACCMAP_REPLAY_IRQ_JOB, .mask = 0x1,
		  .timeout_us = 200000 },
		RD(JOB_IRQ_CLEAR, 0x1),
		WR(JOB_IRQ_STATUS, 0),
	};
	struct accmap_replay_run r;
	uint32_t buf, s;
	double t;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	if (have_irq) {
		CHECK_ERR(timed_run(dev, s, ops, 5, &r, &t), ETIMEDOUT);
		CHECK(r.done == 2 && r.failed_op == 2 && r.reason == ACCMAP_REPLAY_TIMEOUT,
		      "done %u failed_op %u reason %u", r.done, r.failed_op, r.reason);
		CHECK(t >= 0.2 && t < 1.2, "wait of 200 ms took %.3f s", t);
		ops[0] = (struct accmap_replay_op)WR(JOB_IRQ_STATUS, 0);
		CHECK_OK(run(dev, s, ops, 1, &r));
	} else {
		CHECK_OK(run(dev, s, ops, 5, &r));
		CHECK(r.done == 5 && r.value == 0x1, "done %u, IRQ_CLEAR read %#x", r.done,
		      r.value);
		/* Nothing raised: a timeout. */
		CHECK_ERR(run(dev, s, &ops[2], 1, &r), ETIMEDOUT);
		CHECK(r.reason == ACCMAP_REPLAY_TIMEOUT, "reason %u", r.reason);
	}
	close(dev);
}

/* A raised MMU interrupt stops the run after the next wait, with its details. */
static void test_mmu_fault(void)
{
	struct accmap_replay_op ops[] = {
		WR(AS0_FAULTSTATUS, 0x2c1),
		WR(AS0_FAULTADDRESS_LO, 0x00badd00),
		WR(AS0_FAULTADDRESS_HI, 0x12),
		WR(MMU_IRQ_RAWSTAT, 0x1),
		{ .op = ACCMAP_REPLAY_OP_DELAY, .timeout_us = 10 },
		WR(JS0_HEAD_NEXT_LO, 0x5555),
	};
	struct accmap_replay_op clear = WR(MMU_IRQ_RAWSTAT, 0);
	struct accmap_replay_run r;
	uint32_t buf, s;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_LPAE, &buf);
	if (!s)
		return;
	CHECK_ERR(run(dev, s, ops, 6, &r), EIO);
	CHECK(r.done == 4 && r.failed_op == 4 && r.reason == ACCMAP_REPLAY_MMU_FAULT,
	      "done %u failed_op %u reason %u", r.done, r.failed_op, r.reason);
	CHECK(r.fault_as == 0 && r.fault_status == 0x2c1 && r.fault_addr == 0x1200badd00ull,
	      "fault as %u status %#x addr %#llx", r.fault_as, r.fault_status,
	      (unsigned long long)r.fault_addr);
	CHECK_OK(run(dev, s, &clear, 1, &r));
	close(dev);
}

/*
 * A raised FAILED bit of a job slot (JOB_IRQ_RAWSTAT bit 16 + slot) ends a
 * 5 s WAIT_IRQ for something else at once, with the slot's JS_STATUS and
 * JS_HEAD; a POLL for that very bit is what the recording expects.
 */
static void test_job_failed(void)
{
	struct accmap_replay_op ops[] = {
		WR(JS_STATUS(1), 0x58),
		WR(JS_HEAD_LO(1), 0x4000c0),
		WR(JS_HEAD_HI(1), 0x12),
		WR(JOB_IRQ_RAWSTAT, 1u << 17),
		{ .op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = ACCMAP_REPLAY_IRQ_GPU, .mask = 0x1,
		  .timeout_us = 5000000 },
		WR(JS0_HEAD_NEXT_LO, 0x5555),
	};
	struct accmap_replay_op expected[] = {
		{ .op = ACCMAP_REPLAY_OP_POLL, .offset = JOB_IRQ_RAWSTAT, .mask = 1u << 17,
		  .value = 1u << 17, .timeout_us = 5000000 },
		WR(JOB_IRQ_RAWSTAT, 0),
	};
	struct accmap_replay_run r;
	uint32_t buf, s;
	double t;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	CHECK_ERR(timed_run(dev, s, ops, 6, &r, &t), EIO);
	CHECK(r.done == 4 && r.failed_op == 4 && r.reason == ACCMAP_REPLAY_JOB_FAILED,
	      "done %u failed_op %u reason %u", r.done, r.failed_op, r.reason);
	CHECK(r.fault_as == 1 && r.fault_status == 0x58 && r.fault_addr == 0x12004000c0ull,
	      "failed slot %u status %#x head %#llx", r.fault_as, r.fault_status,
	      (unsigned long long)r.fault_addr);
	CHECK(t < 1.0, "a 5 s WAIT_IRQ ended on the failure after %.3f s", t);
	/* The failed bit is still raised in RAWSTAT: a POLL for it succeeds. */
	CHECK_OK(run(dev, s, expected, 2, &r));
	close(dev);
}

/* Sessions are per client and counted per target. */
static void test_sessions(void)
{
	struct accmap_replay_target_info info;
	struct accmap_replay_destroy d = { 0 };
	uint32_t buf, s;
	int dev;

	s = open_session(&dev, ACCMAP_PGT_MALI_AARCH64_4K, &buf);
	if (!s)
		return;
	info = target;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info));
	CHECK(info.sessions == 1, "%u sessions", info.sessions);
	/* The session keeps its buffer when the id goes. */
	CHECK_OK(am_free(dev, buf));
	d.session = s;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d), ENOENT);
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info));
	CHECK(info.sessions == 0, "%u sessions", info.sessions);
	close(dev);
}

/* A window cannot service GPU faults yet: it refuses SVM sessions. */
static void test_svm_refused(void)
{
	struct accmap_replay_setup setup = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K,
		.va_bits = 48,
		.flags = ACCMAP_REPLAY_SETUP_SVM,
		.svm_start = 1 << 20,
		.svm_size = 1 << 20,
	};
	struct accmap_replay_target_info info;
	int dev = am_open();

	if (!find_window(dev))
		goto out;
	setup.target = target.index;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &setup), EOPNOTSUPP);
	CHECK(setup.session == 0, "session %u", setup.session);
	info = target;
	CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info));
	CHECK(info.sessions == 0, "%u sessions", info.sessions);
out:
	close(dev);
}

static const struct tap_test tests[] = {
	{ "query", test_query },
	{ "write_read", test_write_read },
	{ "op_policy", test_op_policy },
	{ "roots_cleared", test_roots_cleared },
	{ "keep_back", test_keep_back },
	{ "release_resets", test_release_resets },
	{ "bad_ops", test_bad_ops },
	{ "poll_timeout", test_poll_timeout },
	{ "wait_irq", test_wait_irq },
	{ "mmu_fault", test_mmu_fault },
	{ "job_failed", test_job_failed },
	{ "sessions", test_sessions },
	{ "svm_refused", test_svm_refused },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

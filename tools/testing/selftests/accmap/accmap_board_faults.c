// SPDX-License-Identifier: GPL-2.0
/*
 * accmap on a board GPU that misbehaves: the qemu device of the test
 * boards (tools/testing/vm/qemu/accmap-mali.c) booted with one of its
 * fault knobs set, named by ACCMAP_BOARD_FAULTS (run.sh passes it on):
 *
 *   hang    job-hang: no chain ever finishes.  A run's wait ends at its
 *           timeout with ETIMEDOUT, the next run's soft reset completes,
 *           and the session goes with nothing kept back.
 *   wedged  job-hang and reset-hang: the soft reset never completes
 *           either.  Its wait times out; when the session goes, its
 *           tables and pages are kept back (debugfs says so) and the
 *           module stays held, so the guest's rmmod must fail.
 *   late    irq-delay-ns, shared-irq, spurious-irq: a chain's end
 *           interrupts late, on one line the three blocks share (the
 *           device tree gives it three times), which START also pulses
 *           with nothing pending.  A wait shorter than the delay times
 *           out and a longer one sees the job done; SVM faults are
 *           serviced through the shared line; the pulses reach the
 *           kernel unclaimed, and it keeps the line.
 *
 * The jobs are the model's compute jobs in this process's memory, run
 * through an SVM session on the board's GPU (ACCMAP_BOARD_GPU).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "svm_util.h"
#include "tap.h"

#define ELEMS		1024
/*
 * Shorter than any job on the device; the late interrupt comes 50 ms on.
 * An interrupt-driven wait sleeps in jiffies (4 ms at HZ=250), and a
 * guest under TCG may be held up for a few more: the margin covers both.
 */
#define SHORT_US	1000
#define LONG_US		2000000
/* Ops of simdrv_reset_ops(): its WAIT_IRQ for RESET_COMPLETED is the last. */
#define RESET_WAIT_OP	3

/* A "name<TAB>value" total of the debugfs file "replay", or -1. */
static long long replay_total(const char *name)
{
	return dbg_total("replay", name);
}

/* The module's reference count, or -1. */
static long module_refs(void)
{
	FILE *f = fopen("/sys/module/accmap/refcnt", "re");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* An SVM session on the board's GPU and three vectors for a VADD. */
struct fixture {
	struct svm t;
	uint32_t *a, *b, *c;
};

static bool fixture_open(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->t.dev = -1;
	fx->a = map_anon(3 * ELEMS * sizeof(uint32_t), PROT_READ | PROT_WRITE);
	if (!fx->a)
		return false;
	fx->b = fx->a + ELEMS;
	fx->c = fx->b + ELEMS;
	fill_words(fx->a, ELEMS, 1);
	fill_words(fx->b, ELEMS, 2);
	return svm_open(&fx->t);
}

static void fixture_close(struct fixture *fx)
{
	svm_close(&fx->t);
	if (fx->a)
		munmap(fx->a, 3 * ELEMS * sizeof(uint32_t));
}

/* Runs the VADD, waiting @timeout_us for its end. */
static int run_vadd(struct fixture *fx, uint32_t timeout_us, struct accmap_replay_run *r)
{
	struct accmap_sim_job job = vadd(fx->a, fx->b, fx->c, ELEMS);

	simdrv_encode_job(fx->t.desc, &job, 0);
	fx->t.jobs = 1;
	memset(r, 0, sizeof(*r));
	return simdrv_svm_run(&fx->t.sim, fx->t.desc, timeout_us, r);
}

/* A run that must end at its wait for the job: ETIMEDOUT, nothing done. */
static void expect_hung(struct fixture *fx, const char *what)
{
	struct accmap_replay_run r;
	int ret = run_vadd(fx, 20000, &r);

	CHECK(ret == -ETIMEDOUT && r.reason == ACCMAP_REPLAY_TIMEOUT,
	      "%s: run %s, reason %u at op %u", what, err_name(ret), r.reason, r.failed_op);
	CHECK(job_status(&fx->t) != SIMDRV_JOB_STATUS_DONE &&
	      check_value(fx->c, ELEMS, 0) == ELEMS,
	      "%s: the hung job has status %#x, C written", what, job_status(&fx->t));
}

/* job-hang: a wait that ends, then a reset that works. */
static void test_hang(void)
{
	long long ever = replay_total("kept_ever");
	struct accmap_replay_run r;
	struct fixture fx;
	int ret;

	if (!fixture_open(&fx))
		goto out;
	expect_hung(&fx, "a job on a hung GPU");
	/* The next run begins with a soft reset: it completes, the job hangs again. */
	ret = run_vadd(&fx, 20000, &r);
	CHECK(ret == -ETIMEDOUT && r.failed_op > RESET_WAIT_OP,
	      "after a reset: run %s at op %u, reason %u (the reset's wait is op %u)",
	      err_name(ret), r.failed_op, r.reason, RESET_WAIT_OP);
	svm_close(&fx.t);
	CHECK(replay_total("kept_sessions") == 0 && replay_total("kept_ever") == ever &&
	      replay_total("sessions") == 0,
	      "after the session: %lld kept (%lld ever, was %lld), %lld live",
	      replay_total("kept_sessions"), replay_total("kept_ever"), ever,
	      replay_total("sessions"));
out:
	fixture_close(&fx);
}

/* job-hang and reset-hang: the reset's wait ends too; the memory stays. */
static void test_wedged(void)
{
	long long ever = replay_total("kept_ever");
	long refs = module_refs();
	struct accmap_replay_run r;
	struct fixture fx;
	int ret;

	if (!CHECK(refs >= 0, "no /sys/module/accmap/refcnt") || !fixture_open(&fx))
		goto out;
	expect_hung(&fx, "a job on a wedged GPU");
	ret = run_vadd(&fx, 20000, &r);
	CHECK(ret == -ETIMEDOUT && r.failed_op == RESET_WAIT_OP,
	      "a reset that never completes: run %s at op %u, reason %u", err_name(ret),
	      r.failed_op, r.reason);
	svm_close(&fx.t);
	CHECK(replay_total("kept_sessions") == 1 && replay_total("kept_ever") == ever + 1 &&
	      replay_total("kept_table_pages") > 0 && replay_total("sessions") == 0,
	      "after the session: %lld kept (%lld ever, was %lld), %lld table pages, %lld live",
	      replay_total("kept_sessions"), replay_total("kept_ever"), ever,
	      replay_total("kept_table_pages"), replay_total("sessions"));
	/* Closed, the device holds no reference; the kept session does. */
	CHECK(module_refs() == refs + 1, "module references %ld, %ld before", module_refs(),
	      refs);
out:
	fixture_close(&fx);
}

/* irq-delay-ns: a short wait ends before the interrupt, a long one sees it. */
static void test_late(void)
{
	struct accmap_replay_op wait = {
		.op = ACCMAP_REPLAY_OP_WAIT_IRQ, .irq = ACCMAP_REPLAY_IRQ_JOB,
		.mask = SIMDRV_JOB_IRQ_DONE(0), .timeout_us = LONG_US,
	};
	struct accmap_replay_run r;
	unsigned long long first_us;
	struct fixture fx;
	int ret;

	if (!fixture_open(&fx))
		goto out;
	ret = run_vadd(&fx, SHORT_US, &r);
	first_us = r.elapsed_ns / 1000;
	CHECK(ret == -ETIMEDOUT && r.reason == ACCMAP_REPLAY_TIMEOUT,
	      "a %u us wait for a late interrupt: run %s after %llu us, reason %u", SHORT_US,
	      err_name(ret), first_us, r.reason);
	ret = accmap_replay_run(fx.t.dev, fx.t.sim.session, &wait, 1, &r);
	if (CHECK(ret == 0, "a %u us wait for the same interrupt: %s, reason %u", LONG_US,
		  err_name(ret), r.reason))
		tap_diag("a %u us wait timed out (its run: %llu us); the next saw it %llu us in",
			 SHORT_US, first_us, (unsigned long long)r.elapsed_ns / 1000);
	CHECK(job_status(&fx.t) == SIMDRV_JOB_STATUS_DONE, "the late job: status %#x",
	      job_status(&fx.t));
	words_are(fx.c, ELEMS, 1, 2, "C of the late job");
out:
	fixture_close(&fx);
}

/* shared-irq: GPU faults serviced through the one line. */
static void test_shared_svm(void)
{
	struct accmap_sim_job job;
	struct accmap_svm_op q;
	struct fixture fx;

	if (!fixture_open(&fx))
		goto out;
	/* A new session maps nothing: every page is a GPU fault, serviced from the line. */
	job = vadd(fx.a, fx.b, fx.c, ELEMS);
	if (job_ok(&fx.t, &job, "a VADD in a new session")) {
		words_are(fx.c, ELEMS, 1, 2, "C of the VADD");
		if (svm_query(&fx.t, &q) &&
		    CHECK(q.faults > 0, "%llu GPU faults serviced", (unsigned long long)q.faults))
			tap_diag("%llu GPU faults serviced through the shared line",
				 (unsigned long long)q.faults);
	}
out:
	fixture_close(&fx);
}

/*
 * When the kernel last saw an interrupt no handler claimed on the line of
 * the board's GPU (/proc/irq/N/spurious's last_unhandled, in ms of
 * jiffies), and the count of such interrupts in @count, or -1.  The count
 * alone is no witness: the kernel starts it again at 1 when 100 ms passed
 * since the last one.
 */
static long long unclaimed(long long *count)
{
	char line[512], path[64];
	long long v = -1;
	unsigned int irq;
	bool found = false;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, ".gpu") && sscanf(line, " %u:", &irq) == 1;
	fclose(f);
	if (!found)
		return -1;
	snprintf(path, sizeof(path), "/proc/irq/%u/spurious", irq);
	f = fopen(path, "re");
	if (!f)
		return -1;
	*count = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "unhandled %lld", count) == 1)
			continue;
		if (sscanf(line, "last_unhandled %lld ms", &v) == 1)
			break;
	}
	fclose(f);
	return *count < 0 ? -1 : v;
}

/* spurious-irq: the pulses of every START, unclaimed, and the line kept. */
static void test_spurious(void)
{
	long long n_before, n_after, before = unclaimed(&n_before), after;
	struct fixture fx;

	if (!CHECK(before >= 0, "no spurious count for the GPU's line") || !fixture_open(&fx))
		return;
	for (int i = 0; i < 4; i++) {
		struct accmap_sim_job job = vadd(fx.a, fx.b, fx.c, ELEMS);

		if (!job_ok(&fx.t, &job, "a VADD with spurious interrupts"))
			break;
	}
	fixture_close(&fx);
	/*
	 * Each job runs 50 ms or more: a pulse in them is in a later jiffy.
	 * The times are 32-bit and wrap 5 minutes after boot; with a count
	 * of 0 there was none before.
	 */
	after = unclaimed(&n_after);
	if (CHECK(after >= 0 && n_after > 0 &&
		  (n_before == 0 || (int32_t)(uint32_t)(after - before) > 0),
		  "last unclaimed interrupt at %lld ms, %lld ms before the jobs",
		  after, before))
		tap_diag("last unclaimed interrupt at %lld ms (%lld in a row), before %lld (%lld)",
			 after, n_after, before, n_before);
}

static const struct tap_test hang_tests[] = {
	{ "hang", test_hang },
};

static const struct tap_test wedged_tests[] = {
	{ "wedged", test_wedged },
};

static const struct tap_test late_tests[] = {
	{ "late", test_late },
	{ "shared_svm", test_shared_svm },
	{ "spurious", test_spurious },
};

int main(void)
{
	const char *gpu = getenv("ACCMAP_BOARD_GPU");
	const char *faults = getenv("ACCMAP_BOARD_FAULTS");

	if (!faults || !gpu || !*gpu) {
		fprintf(stderr,
			"accmap_board_faults: needs ACCMAP_BOARD_GPU and ACCMAP_BOARD_FAULTS\n");
		return 2;
	}
	setenv("ACCMAP_REPLAY_TARGET", gpu, 1);
	if (!strcmp(faults, "hang"))
		return tap_run(hang_tests, TAP_ARRAY_SIZE(hang_tests));
	if (!strcmp(faults, "wedged"))
		return tap_run(wedged_tests, TAP_ARRAY_SIZE(wedged_tests));
	if (!strcmp(faults, "late"))
		return tap_run(late_tests, TAP_ARRAY_SIZE(late_tests));
	fprintf(stderr, "accmap_board_faults: ACCMAP_BOARD_FAULTS=%s: hang, wedged or late\n",
		faults);
	return 2;
}

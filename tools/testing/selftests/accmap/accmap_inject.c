// SPDX-License-Identifier: GPL-2.0
/*
 * Every failure point of a call, failed in turn (fault injection's
 * fail-nth, Documentation/fault-injection/fault-injection.rst).
 *
 * For each case, the N-th fault-injection point this thread reaches (a
 * slab allocation, a page allocation, a user copy) is failed, for N = 1,
 * 2, ... until the call gets through without reaching an N-th point.  Each
 * time the call must succeed (a failure it recovers from, such as a pool
 * falling back to smaller blocks) or fail with ENOMEM or EFAULT and
 * nothing else; once its client is closed, debugfs's totals (clients,
 * allocations, orphans, heap bytes in use, replay sessions) must be back
 * where they were, and a KASAN, kmemleak or lockdep report of any of it
 * fails the run.  Where a case has a check of its result (WRITE's bytes,
 * a restored client's state, a replay session's job), every success is
 * checked so, the recovered-from ones included.  This walks every
 * unwinding path of those calls on purpose, where the fuzzer's random
 * injection reaches them by chance.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION and the failslab,
 * fail_page_alloc and fail_usercopy attributes in debugfs (accmap's debug
 * kernels); the guest's /init leaves it out elsewhere, with a line saying
 * so.  Root (REPLAY_* need CAP_SYS_RAWIO, CHECKPOINT
 * CAP_CHECKPOINT_RESTORE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "tap.h"

/* No call here reaches that many points: more means the sweep never ends. */
#define MAX_POINTS	20000
#define BUF_PAGES	4
#define GPU_VA		0x100000ULL
#define VA_BITS		32

static size_t ps;
static int nth_fd = -1;

/* ---- fail-nth ---- */

static bool knob(const char *dir, const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", dir, name);
	return write_text(path, val);
}

static const char *const fail_dirs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };

/*
 * fail-nth counts every point that asks: the sleeping allocations the
 * driver makes are left alone by default (ignore-gfp-wait), and so are
 * single pages and highmem ones (fail_page_alloc's min-order 1,
 * ignore-gfp-highmem).  Quiet: each failure would print a stack trace.
 */
static bool nth_setup(void)
{
	for (size_t i = 0; i < TAP_ARRAY_SIZE(fail_dirs); i++)
		if (!knob(fail_dirs[i], "verbose", "0"))
			return false;
	return knob("failslab", "ignore-gfp-wait", "N") &&
	       knob("fail_page_alloc", "ignore-gfp-wait", "N") &&
	       knob("fail_page_alloc", "ignore-gfp-highmem", "N") &&
	       knob("fail_page_alloc", "min-order", "0");
}

/* The defaults again. */
static void nth_restore(void)
{
	for (size_t i = 0; i < TAP_ARRAY_SIZE(fail_dirs); i++)
		knob(fail_dirs[i], "verbose", "2");
	knob("failslab", "ignore-gfp-wait", "Y");
	knob("fail_page_alloc", "ignore-gfp-wait", "Y");
	knob("fail_page_alloc", "ignore-gfp-highmem", "Y");
	knob("fail_page_alloc", "min-order", "1");
}

static bool nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(nth_fd, buf, len, 0) == len;
}

/*
 * Whether the armed point was reached (and failed), and the counter off
 * again.  The read is a point itself while the counter runs: with one
 * point left it fails its own copy (EFAULT), which says the call reached
 * fewer.  The write of 0 may fail the same way, and the counter is 0
 * after it either way.
 */
static bool nth_fired(void)
{
	char buf[16] = "";
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	bool fired = n > 0 && strtoul(buf, NULL, 10) == 0;

	if (pwrite(nth_fd, "0", 1, 0) != 1 && errno != EFAULT)
		CHECK(false, "fail-nth 0: %s", strerror(errno));
	return fired;
}

/* ---- what must be back after each try ---- */

struct totals {
	unsigned long long clients, allocations, orphans, used, replay;
};

static bool totals_read(struct totals *s)
{
	unsigned long long heaps;
	char *text;
	size_t len;

	memset(s, 0, sizeof(*s));
	if (!dbg_rows("clients", &s->clients, NULL, NULL) ||
	    !dbg_rows("allocations", &s->allocations, NULL, NULL) ||
	    !dbg_rows("orphans", &s->orphans, NULL, NULL) ||
	    !dbg_rows("heaps", &heaps, "used", &s->used))
		return false;
	/* Session rows of the replay file start with a number. */
	text = read_text(ACCMAP_DEBUGFS_DIR "/replay", &len);
	if (!CHECK(text, "read debugfs replay"))
		return false;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		s->replay += l[0] >= '0' && l[0] <= '9';
	free(text);
	return true;
}

static bool totals_same(const struct totals *a, const struct totals *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- the cases ---- */

/*
 * One try: a fresh client (and what the case needs, made before the
 * counter is armed), the call, then everything closed.
 */
struct ctx {
	int dev, dev2, fd;
	uint32_t id, session, heap, target, gpu_id;
	void *mem;
	uint8_t data[2 * 4096];
	/* A dumped client: its state, and its one written buffer's bytes. */
	uint64_t state[512];
	uint8_t contents[BUF_PAGES * 16384];
};

struct inj_case {
	const char *name;
	bool (*prep)(struct ctx *c);
	int (*call)(struct ctx *c);
	/* After a success: the result holds (false fails the test). */
	bool (*after)(struct ctx *c);
};

static bool prep_buffer(struct ctx *c)
{
	return CHECK(am_buffer(c->dev, BUF_PAGES * ps, 0, &c->id, false) == 0, "buffer");
}

static bool prep_empty(struct ctx *c)
{
	return CHECK(am_create(c->dev, BUF_PAGES * ps, &c->id) == 0, "CREATE");
}

static bool prep_export(struct ctx *c)
{
	if (!prep_buffer(c))
		return false;
	c->fd = am_get_fd(c->dev, c->id, O_RDWR | O_CLOEXEC);
	c->dev2 = am_open();
	return CHECK(c->fd >= 0 && c->dev2 >= 0, "GET_FD, second client");
}

static bool prep_anon(struct ctx *c)
{
	c->mem = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(c->mem != MAP_FAILED, "mmap: %s", strerror(errno))) {
		c->mem = NULL;
		return false;
	}
	memset(c->mem, 0x5a, BUF_PAGES * ps);
	return true;
}

static bool prep_session(struct ctx *c)
{
	struct accmap_replay_map m = {
		.gpu_va = GPU_VA, .length = BUF_PAGES * ps,
		.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE,
	};
	struct accmap_replay_setup s = { .maps = (uintptr_t)&m, .nr_maps = 1,
					 .format = ACCMAP_PGT_MALI_AARCH64_4K,
					 .va_bits = VA_BITS };

	if (!prep_buffer(c) ||
	    !CHECK(accmap_replay_find_target(c->dev, SIMDRV_TARGET, &s.target, NULL) == 0,
		   "no target %s", SIMDRV_TARGET))
		return false;
	m.id = c->id;
	if (!CHECK(accmap_replay_setup(c->dev, &s) == 0, "REPLAY_SETUP"))
		return false;
	c->session = s.session;
	return true;
}

static int call_create(struct ctx *c)
{
	struct accmap_create a = { .size = BUF_PAGES * ps };

	return raw_ioctl(c->dev, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC,
				      _IOC_NR(ACCMAP_IOC_CREATE), ACCMAP_CREATE_SIZE_VER1), &a);
}

static int create_alloc(struct ctx *c, uint32_t heap_mask, uint32_t flags, uint64_t size)
{
	struct accmap_create a = { .size = size, .flags = ACCMAP_CREATE_ALLOC,
				   .heap_mask = heap_mask, .alloc_flags = flags, .tag = 7 };
	int ret = raw_ioctl(c->dev, ACCMAP_IOC_CREATE, &a);

	c->id = a.id;
	return ret;
}

static int call_create_alloc(struct ctx *c)
{
	return create_alloc(c, ACCMAP_HEAP_MASK_SYSTEM, 0, BUF_PAGES * ps);
}

static int call_create_alloc_wc(struct ctx *c)
{
	return create_alloc(c, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
			    BUF_PAGES * ps);
}

static int call_create_alloc_contig(struct ctx *c)
{
	return create_alloc(c, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_CONTIGUOUS, 16 * ps);
}

/* The first carveout heap: one exists in every guest that runs this test. */
static uint32_t carveout_heap(int dev)
{
	struct accmap_heap_info hi;

	for (uint32_t h = 0; h < ACCMAP_HEAP_MAX; h++) {
		if (h == ACCMAP_HEAP_SYSTEM || h == ACCMAP_HEAP_USER || h == ACCMAP_HEAP_DEVICE)
			continue;
		if (am_query_heap(dev, h, &hi) == 0 && hi.total)
			return h;
	}
	return ACCMAP_HEAP_MAX;
}

static bool prep_carveout(struct ctx *c)
{
	c->heap = carveout_heap(c->dev);
	return CHECK(c->heap < ACCMAP_HEAP_MAX, "no carveout heap");
}

static int call_create_alloc_carveout(struct ctx *c)
{
	return create_alloc(c, 1U << c->heap, ACCMAP_ALLOC_WRITECOMBINE, BUF_PAGES * ps);
}

static int call_alloc(struct ctx *c)
{
	return am_alloc(c->dev, c->id, 0, 3);
}

static int call_get_fd(struct ctx *c)
{
	int fd = am_get_fd(c->dev, c->id, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return fd;
	c->fd = fd;
	return 0;
}

static int call_from_fd(struct ctx *c)
{
	uint32_t id;

	return am_from_fd(c->dev2, c->fd, &id);
}

static int call_from_va(struct ctx *c)
{
	struct accmap_from_va a = { .addr = (uintptr_t)c->mem, .size = BUF_PAGES * ps,
				    .flags = ACCMAP_FROM_VA_WRITE, .tag = 5 };
	int ret = raw_ioctl(c->dev, ACCMAP_IOC_FROM_VA, &a);

	c->id = a.id;
	return ret;
}

static int call_write(struct ctx *c)
{
	for (size_t i = 0; i < sizeof(c->data); i++)
		c->data[i] = (uint8_t)(i * 7 + 1);
	return am_write(c->dev, c->id, ps / 2, c->data, sizeof(c->data));
}

static bool after_write(struct ctx *c)
{
	uint8_t back[sizeof(c->data)];

	return CHECK(am_read(c->dev, c->id, ps / 2, back, sizeof(back)) == 0 &&
		     !memcmp(back, c->data, sizeof(back)), "WRITE's bytes read back");
}

static int call_read(struct ctx *c)
{
	return am_read(c->dev, c->id, 0, c->data, sizeof(c->data));
}

static int call_cache_list(struct ctx *c)
{
	struct accmap_cache_op ops[2] = {
		{ .id = c->id, .op = ACCMAP_CACHE_WRITEBACK, .offset = 0, .length = ps },
		{ .id = c->id, .op = ACCMAP_CACHE_WRITEBACK_INVALIDATE, .offset = ps,
		  .length = 2 * ps },
	};
	struct accmap_cache_list a = { .ops = (uintptr_t)ops, .count = 2 };

	return raw_ioctl(c->dev, ACCMAP_IOC_CACHE_LIST, &a);
}

static int call_map_offset(struct ctx *c)
{
	struct accmap_map_offset a = { .id = c->id };

	return raw_ioctl(c->dev, ACCMAP_IOC_MAP_OFFSET, &a);
}

static int call_label(struct ctx *c)
{
	return am_set_label(c->dev, 9, "inject-label");
}

static bool prep_target(struct ctx *c)
{
	struct accmap_replay_target_info info;

	if (!prep_buffer(c) ||
	    !CHECK(accmap_replay_find_target(c->dev, SIMDRV_TARGET, &c->target, &info) == 0,
		   "no target %s", SIMDRV_TARGET))
		return false;
	c->gpu_id = info.gpu_id;
	return true;
}

static int call_replay_setup(struct ctx *c)
{
	struct accmap_replay_map m = {
		.gpu_va = GPU_VA, .length = BUF_PAGES * ps, .id = c->id,
		.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE,
	};
	struct accmap_replay_setup s = { .maps = (uintptr_t)&m, .nr_maps = 1,
					 .target = c->target,
					 .format = ACCMAP_PGT_MALI_AARCH64_4K,
					 .va_bits = VA_BITS };
	int ret = raw_ioctl(c->dev, ACCMAP_IOC_REPLAY_SETUP, &s);

	c->session = s.session;
	return ret;
}

/* Where the job of after_replay_setup() keeps its parts in each page. */
#define WALK_OUT	512	/* page 0: the sum and the count */
#define WALK_NODE	1024	/* every page: the next node's address, a value */

/*
 * A session that REPLAY_SETUP returned, an injected failure recovered
 * from or not, lets the GPU reach every page it maps: a job sums a list
 * with one node on each page of the buffer and must end DONE with the
 * sum.  A recovery that left part of the buffer out of the session fails
 * here.  (The model's index of frames once did so when it could not
 * grow; that took two failed allocations in a row, which one fail-nth
 * point does not make, and the fuzzer's random injection found it.)
 */
static bool after_replay_setup(struct ctx *c)
{
	struct simdrv_submit sub = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .head = GPU_VA,
		.timeout_us = 2000000, .reset = 1,
	};
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	uint8_t desc[SIMDRV_JD_SIZE];
	uint32_t out[2], status = GARBAGE_U32;
	struct accmap_replay_run r = { 0 };
	struct accmap_sim_job job;
	struct simdrv_gpu gpu;
	int ret;

	for (uint32_t i = 0; i < BUF_PAGES; i++) {
		struct { uint64_t next; int32_t value; } node = {
			.next = i + 1 < BUF_PAGES ? GPU_VA + (i + 1) * ps + WALK_NODE : 0,
			.value = (int32_t)(i + 1) * 7,
		};

		if (!CHECK_OK(am_write(c->dev, c->id, i * ps + WALK_NODE, &node, sizeof(node))))
			return false;
	}
	simdrv_list_sum_job(&job, GPU_VA + WALK_NODE, 0, 8, BUF_PAGES, GPU_VA + WALK_OUT);
	simdrv_encode_job(desc, &job, 0);
	ret = simdrv_probe(c->dev, c->session, c->gpu_id, &gpu);
	if (!CHECK(ret == 0, "simdrv_probe: %s", err_name(ret)) ||
	    !CHECK_OK(am_write(c->dev, c->id, 0, desc, sizeof(desc))))
		return false;
	ret = accmap_replay_run(c->dev, c->session, ops, simdrv_build_ops(&gpu, &sub, ops), &r);
	if (!CHECK_OK(am_read(c->dev, c->id, SIMDRV_JD_EXCEPTION_STATUS, &status,
			      sizeof(status))) ||
	    !CHECK_OK(am_read(c->dev, c->id, WALK_OUT, out, sizeof(out))))
		return false;
	return CHECK(ret == 0 && status == SIMDRV_JOB_STATUS_DONE &&
		     out[0] == 7 * BUF_PAGES * (BUF_PAGES + 1) / 2 && out[1] == BUF_PAGES,
		     "job over %u pages: %s, reason %u, %#x at %#llx, job %#x, sum %u, %u nodes",
		     BUF_PAGES, err_name(ret), r.reason, r.fault_status,
		     (unsigned long long)r.fault_addr, status, out[0], out[1]);
}

static int call_replay_run(struct ctx *c)
{
	struct accmap_replay_op ops[8];
	uint32_t n = simdrv_reset_ops(ops);
	struct accmap_replay_run r = { .ops = (uintptr_t)ops, .nr_ops = n,
				       .session = c->session };

	return raw_ioctl(c->dev, ACCMAP_IOC_REPLAY_RUN, &r);
}

static int call_state(struct ctx *c)
{
	struct accmap_ckpt a = { .op = ACCMAP_CKPT_OP_STATE, .data = (uintptr_t)c->data,
				 .size = sizeof(c->data) };

	return raw_ioctl(c->dev, ACCMAP_IOC_CHECKPOINT, &a);
}

/* A second client with a written buffer and an empty id, dumped (STATE). */
static bool prep_dump(struct ctx *c)
{
	struct accmap_ckpt a = { .op = ACCMAP_CKPT_OP_STATE, .data = (uintptr_t)c->state,
				 .size = sizeof(c->state) };
	uint32_t id2;

	c->dev2 = am_open();
	if (!CHECK(c->dev2 >= 0, "open") ||
	    !CHECK(am_buffer(c->dev2, BUF_PAGES * ps, 0, &c->id, false) == 0, "buffer"))
		return false;
	for (size_t i = 0; i < BUF_PAGES * ps; i++)
		c->contents[i] = (uint8_t)(i * 13 + 5);
	return CHECK(am_write(c->dev2, c->id, 0, c->contents, BUF_PAGES * ps) == 0, "WRITE") &&
	       CHECK(am_create(c->dev2, ps, &id2) == 0, "CREATE") &&
	       CHECK(raw_ioctl(c->dev2, ACCMAP_IOC_CHECKPOINT, &a) == 0, "STATE");
}

static int ckpt_op(int dev, uint32_t op, uint64_t token, const void *data, uint64_t size,
		   const void *contents)
{
	struct accmap_ckpt a = { .op = op, .token = token, .data = (uintptr_t)data,
				 .size = size, .contents = (uintptr_t)contents };

	if (op == ACCMAP_CKPT_OP_RESTORE_BUFFER)
		a.flags = ACCMAP_CKPT_ADD_ID;
	if (op == ACCMAP_CKPT_OP_RESTORE_FINISH)
		a.pid = (uint32_t)getpid();
	return raw_ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a);
}

/*
 * The whole restore of that dump into the fresh client, the dumped one's
 * file running it (BEGIN, FINISH), as CRIU's plugin does with a file of
 * its own: the first error ends it.
 */
static int call_restore(struct ctx *c)
{
	const struct accmap_ckpt_client *head = (const void *)c->state;
	const struct accmap_ckpt_handle *recs = (const void *)(head + 1);
	struct accmap_ckpt a = { .op = ACCMAP_CKPT_OP_RESTORE_BEGIN };
	int ret = raw_ioctl(c->dev2, ACCMAP_IOC_CHECKPOINT, &a);

	if (!ret)
		ret = ckpt_op(c->dev, ACCMAP_CKPT_OP_RESTORE_CLIENT, a.token, head, sizeof(*head),
			      NULL);
	for (uint32_t i = 0; !ret && i < head->nr_handles; i++)
		ret = ckpt_op(c->dev, ACCMAP_CKPT_OP_RESTORE_BUFFER, a.token, &recs[i],
			      sizeof(recs[i]),
			      recs[i].kind == ACCMAP_CKPT_KIND_ALLOC ? c->contents : NULL);
	if (!ret)
		ret = ckpt_op(c->dev2, ACCMAP_CKPT_OP_RESTORE_FINISH, a.token, NULL, 0, NULL);
	return ret;
}

static bool after_restore(struct ctx *c)
{
	uint8_t back[BUF_PAGES * 16384];

	return CHECK(am_read(c->dev, c->id, 0, back, BUF_PAGES * ps) == 0 &&
		     !memcmp(back, c->contents, BUF_PAGES * ps), "restored bytes read back");
}

/* 16 pages of this process for an SVM session to mirror. */
static bool prep_svm(struct ctx *c)
{
	c->mem = mmap(NULL, 16 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(c->mem != MAP_FAILED, "mmap: %s", strerror(errno))) {
		c->mem = NULL;
		return false;
	}
	memset(c->mem, 0x3c, 16 * ps);
	return CHECK(accmap_replay_find_target(c->dev, SIMDRV_TARGET, &c->target, NULL) == 0,
		     "no target %s", SIMDRV_TARGET);
}

/* An SVM session over those pages, and a PREFETCH of them to @location. */
static int svm_prefetch(struct ctx *c, uint32_t location)
{
	struct accmap_svm_op op = { .op = ACCMAP_SVM_OP_PREFETCH, .start = (uintptr_t)c->mem,
				    .size = 16 * ps, .location = location };
	struct accmap_replay_setup s;
	int ret;

	simdrv_svm_setup(&s, c->target, ACCMAP_PGT_MALI_AARCH64_4K, SIMDRV_VA_BITS,
			 (uintptr_t)c->mem, 16 * ps);
	ret = raw_ioctl(c->dev, ACCMAP_IOC_REPLAY_SETUP, &s);
	if (ret)
		return ret;
	op.session = s.session;
	return raw_ioctl(c->dev, ACCMAP_IOC_SVM, &op);
}

static int call_svm_system(struct ctx *c)
{
	return svm_prefetch(c, ACCMAP_SVM_LOC_SYSTEM);
}

static int call_svm_device(struct ctx *c)
{
	return svm_prefetch(c, ACCMAP_SVM_LOC_DEVICE);
}

static const struct inj_case cases[] = {
	{ "CREATE", NULL, call_create, NULL },
	{ "CREATE_ALLOC system", NULL, call_create_alloc, NULL },
	{ "CREATE_ALLOC write-combined", NULL, call_create_alloc_wc, NULL },
	{ "CREATE_ALLOC contiguous", NULL, call_create_alloc_contig, NULL },
	{ "CREATE_ALLOC carveout", prep_carveout, call_create_alloc_carveout, NULL },
	{ "ALLOC", prep_empty, call_alloc, NULL },
	{ "GET_FD", prep_buffer, call_get_fd, NULL },
	{ "FROM_FD", prep_export, call_from_fd, NULL },
	{ "FROM_VA", prep_anon, call_from_va, NULL },
	{ "WRITE", prep_buffer, call_write, after_write },
	{ "READ", prep_buffer, call_read, NULL },
	{ "CACHE_LIST", prep_buffer, call_cache_list, NULL },
	{ "MAP_OFFSET", prep_buffer, call_map_offset, NULL },
	{ "SET_TAG_LABEL", NULL, call_label, NULL },
	{ "REPLAY_SETUP", prep_target, call_replay_setup, after_replay_setup },
	{ "REPLAY_RUN", prep_session, call_replay_run, NULL },
	{ "CHECKPOINT STATE", prep_buffer, call_state, NULL },
	{ "CHECKPOINT restore", prep_dump, call_restore, after_restore },
	{ "SVM session, PREFETCH", prep_svm, call_svm_system, NULL },
	/* Last: only where the guest has device memory. */
	{ "SVM session, PREFETCH to device memory", prep_svm, call_svm_device, NULL },
};

static void ctx_close(struct ctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->dev2 >= 0)
		close(c->dev2);
	if (c->dev >= 0)
		close(c->dev);
	if (c->mem)
		munmap(c->mem, 16 * ps);
}

/* Each test runs in a process of its own: fail-nth is that thread's. */
static void sweep(const struct inj_case *cur)
{
	unsigned int n, failed[2] = { 0, 0 }, absorbed = 0;
	struct totals before, after;
	struct ctx c;
	int mon;

	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	mon = am_open();
	if (!CHECK(nth_fd >= 0 && mon >= 0, "fail-nth, /dev/accmap: %s", strerror(errno)) ||
	    !CHECK(nth_setup(), "fault injection knobs: %s", strerror(errno)))
		goto out;
	/* Blocks freed back to the pool are zeroed in the background. */
	am_pool_wait_idle(mon, 5000);
	if (!totals_read(&before))
		goto out;
	for (n = 1; n <= MAX_POINTS; n++) {
		bool fired;
		int ret;

		memset(&c, 0, sizeof(c));
		c.fd = -1;
		c.dev2 = -1;
		c.dev = am_open();
		if (!CHECK(c.dev >= 0, "open") || (cur->prep && !cur->prep(&c))) {
			ctx_close(&c);
			break;
		}
		if (!CHECK(nth_arm(n), "fail-nth %u: %s", n, strerror(errno))) {
			ctx_close(&c);
			break;
		}
		ret = cur->call(&c);
		fired = nth_fired();
		if (!CHECK(!ret || ((ret == -ENOMEM || ret == -EFAULT) && fired),
			   "%s with point %u failed: %s", cur->name, n, err_name(ret))) {
			ctx_close(&c);
			break;
		}
		if (ret)
			failed[ret == -EFAULT]++;
		else if (fired)
			absorbed++;
		if (!ret && cur->after && !cur->after(&c)) {
			ctx_close(&c);
			break;
		}
		ctx_close(&c);
		am_pool_wait_idle(mon, 5000);
		if (!totals_read(&after))
			break;
		if (!CHECK(totals_same(&before, &after),
			   "%s with point %u failed (%s): debugfs totals not back", cur->name, n,
			   err_name(ret))) {
			tap_diag("clients allocations orphans used sessions: %llu %llu %llu",
				 after.clients, after.allocations, after.orphans);
			tap_diag("  %llu %llu; before: %llu %llu %llu %llu %llu", after.used,
				 after.replay, before.clients, before.allocations, before.orphans,
				 before.used, before.replay);
			break;
		}
		if (!fired)
			break;
	}
	nth_restore();
	CHECK(n <= MAX_POINTS, "%s: still failing at point %u", cur->name, MAX_POINTS);
	tap_diag("%s: %u points, failed in turn: %u ENOMEM, %u EFAULT, %u recovered from",
		 cur->name, n - 1, failed[0], failed[1], absorbed);
	/*
	 * A sweep whose first armed point was never reached injected
	 * nothing: the knobs, or the call's path, would then be untested.
	 */
	CHECK(failed[0] + failed[1] + absorbed > 0,
	      "%s: no failure was injected (the first point was never reached)", cur->name);
out:
	if (mon >= 0)
		close(mon);
	if (nth_fd >= 0)
		close(nth_fd);
}

#define SWEEP(i)	static void sweep_##i(void) { sweep(&cases[i]); }
SWEEP(0) SWEEP(1) SWEEP(2) SWEEP(3) SWEEP(4) SWEEP(5) SWEEP(6) SWEEP(7) SWEEP(8)
SWEEP(9) SWEEP(10) SWEEP(11) SWEEP(12) SWEEP(13) SWEEP(14) SWEEP(15) SWEEP(16) SWEEP(17)
SWEEP(18) SWEEP(19)

int main(void)
{
	static void (*const fns[])(void) = {
		sweep_0, sweep_1, sweep_2, sweep_3, sweep_4, sweep_5, sweep_6, sweep_7, sweep_8,
		sweep_9, sweep_10, sweep_11, sweep_12, sweep_13, sweep_14, sweep_15, sweep_16,
		sweep_17, sweep_18, sweep_19,
	};
	struct tap_test tests[TAP_ARRAY_SIZE(cases)];
	size_t n = TAP_ARRAY_SIZE(cases);

	ps = page_size();
	if (TAP_ARRAY_SIZE(fns) != TAP_ARRAY_SIZE(cases) ||
	    ps * BUF_PAGES > sizeof(((struct ctx *)0)->contents))
		return 1;
	if (!am_devmem_expected()) {
		printf("# no device memory in this guest: \"%s\" not run\n", cases[n - 1].name);
		n--;
	}
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct tap_test){ cases[i].name, fns[i] };
	return tap_run(tests, n);
}

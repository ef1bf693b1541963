// SPDX-License-Identifier: GPL-2.0
/*
 * accmap-demo: what a board engineer does with accmap, step by step, with
 * the figures, all through libaccmap.
 *
 * A 1 MiB write-combined frame is allocated under a labelled tag, exported
 * as a dma-buf and imported into vgem (a real DRM importer); a pattern
 * written through accmap's mapping is read back through vgem's export of
 * its import; a 2-D sub-rectangle goes in and out with strided copies; a
 * buffer of the demo's own memory is pinned with FROM_VA; a cached buffer
 * gets a cache write-back; the heaps and the page pool are queried.
 * Then a small matrix multiply is recorded on the software Mali model
 * (replay target "sim") and replayed with new inputs.  Last, shared
 * virtual memory: a session that mirrors the demo's own address space
 * sums a linked list of malloc()'ed nodes and multiplies malloc()'ed
 * matrices, the GPU following plain CPU pointers, nothing copied; on the
 * model, then again on every other target that takes SVM (a board's GPU,
 * faults serviced from its MMU interrupt).  Then
 * device memory: a list in one malloc()'ed block migrates to the
 * target's own memory, the GPU sums it there, the CPU walks it with the
 * same pointers, and the counters say what moved each way.  A kernel
 * without device memory gets a line saying so, and the step passes.
 * Then V4L2: the kernel's vivid test driver captures a frame into accmap
 * buffers (V4L2_MEMORY_DMABUF), and its checksum through accmap's READ
 * equals the same frame's in vivid's own buffers (without vivid, a line
 * says so and the step passes).  Last, a checkpoint: a child holding a
 * buffer written and mapped through /dev/accmap is dumped with criu and
 * restored, and describes its buffer before and after (where ACCMAP_CRIU
 * is empty, a line says so and the step passes).
 *
 * One line per step.  Exits 0 only if every step worked; otherwise 1, after
 * a line naming the failing step.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "accmap.h"
#include "recording.h"
#include "simdrv.h"
#include "vgem_util.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The frame: 512 x 512 pixels of 4 bytes, 1 MiB, rows 2 KiB apart. */
#define FRAME_W		512U
#define FRAME_H		512U
#define FRAME_BPP	4U
#define FRAME_PITCH	(FRAME_W * FRAME_BPP)
#define FRAME_SIZE	(FRAME_PITCH * FRAME_H)
#define FRAME_TAG	0xde30
#define FRAME_LABEL	"demo-frames"

/* The sub-rectangle of the frame the strided copies move. */
#define RECT_X		100U
#define RECT_Y		60U
#define RECT_W		64U
#define RECT_H		48U
/* The READ lands in a buffer with padded rows, as a real consumer's. */
#define RECT_OUT_PITCH	(RECT_W * FRAME_BPP + 64U)

#define USER_SIZE	(16U * 1024U)
#define CACHED_SIZE	(64U * 1024U)

/* The recorded job: C = A x B, MAT_N x MAT_N int32. */
#define MAT_N		32U
#define MAT_ELEMS	(MAT_N * MAT_N)

/* The SVM step: a list of malloc()'ed nodes, and a matmul of this size. */
#define LIST_NODES	10000U
#define SVM_N		100U
/* The GPU's address bits: it reaches the whole user range of these CPUs. */
#define SVM_VA_BITS	48U

/* The device memory step: a list of this many nodes in one block. */
#define DEVMEM_NODES	32768U
/* Node i is the (i * DEVMEM_STRIDE % DEVMEM_NODES)-th of the list: odd, so all are. */
#define DEVMEM_STRIDE	12345U
#define DEVMEM_FILE	"/sys/kernel/debug/accmap/devmem"

static int step;
static const char *step_name = "start";

__printf(2, 3) static void say(const char *name, const char *fmt, ...);
__printf(2, 3) static int fail(int err, const char *fmt, ...);

/* "[ n] name  figures": one step done. */
static void say(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("[%2d] %-9s ", step, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The next step begins; fail() names it if it goes wrong. */
static void begin(const char *name)
{
	step++;
	step_name = name;
}

/* "accmap-demo: step n (name) failed: what: strerror"; exit status 1. */
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "accmap-demo: step %d (%s) failed: ", step, step_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return EXIT_FAILURE;
}

static const char *heap_name(int dev, uint32_t heap, char *buf, size_t len)
{
	struct accmap_heap_info hi;

	if (heap == ACCMAP_HEAP_NONE || accmap_query_heap(dev, heap, &hi)) {
		snprintf(buf, len, "?");
		return buf;
	}
	hi.name[sizeof(hi.name) - 1] = '\0';
	snprintf(buf, len, "%s", hi.name);
	return buf;
}

/* Bytes as "512 B", "16 KiB", "3.5 MiB", "1.9 GiB". */
static const char *human(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (u + 1 < ARRAY_SIZE(units) && bytes >= (1ULL << (10 * (u + 1))))
		u++;
	if (!u || !(bytes & ((1ULL << (10 * u)) - 1)))
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes >> (10 * u)),
			 units[u]);
	else
		snprintf(buf, len, "%.1f %s", (double)bytes / (double)(1ULL << (10 * u)),
			 units[u]);
	return buf;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)((i * 31) ^ (i >> 12)) | 1;
}

/* Pixel (x, y) of the rectangle: unlike any byte of pattern(). */
static uint32_t rect_pixel(uint32_t x, uint32_t y)
{
	return 0xc0000000U | (y << 12) | x;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * First byte of the frame that does not hold what the steps put there:
 * the rectangle's pixels if @with_rect, pattern() everywhere else.
 * FRAME_SIZE if all do.
 */
static size_t frame_mismatch(const uint8_t *frame, bool with_rect)
{
	for (size_t i = 0; i < FRAME_SIZE; i++) {
		uint32_t x = (uint32_t)(i % FRAME_PITCH) / FRAME_BPP;
		uint32_t y = (uint32_t)(i / FRAME_PITCH);
		uint8_t want = pattern(i);

		if (with_rect && x - RECT_X < RECT_W && y - RECT_Y < RECT_H) {
			uint32_t px = rect_pixel(x - RECT_X, y - RECT_Y);

			memcpy(&want, (const uint8_t *)&px + i % FRAME_BPP, 1);
		}
		if (frame[i] != want)
			return i;
	}
	return FRAME_SIZE;
}

/* Matrix entries from a seed, small enough to read in a dump. */
static void fill_matrix(int32_t *m, uint32_t seed)
{
	for (uint32_t i = 0; i < MAT_ELEMS; i++)
		m[i] = (int32_t)((i * 2654435761U + seed * 40503U) >> 20) % 201 - 100;
}

/* The first element of @c that differs from the CPU's A x B, or MAT_ELEMS. */
static uint32_t matmul_mismatch(const struct simdrv_workload *w, const int32_t *a,
				const int32_t *b, const int32_t *c)
{
	int32_t want[MAT_ELEMS];
	uint32_t i;

	simdrv_reference(w, a, b, want);
	for (i = 0; i < MAT_ELEMS && c[i] == want[i]; i++)
		;
	return i;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * The last two steps: record a matrix multiply on the sim, then replay the
 * recording, passed through the file format, with new inputs.
 */
static int record_and_replay(void)
{
	struct simdrv_workload w = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = MAT_N, .n = MAT_N, .k = MAT_N,
		.format = ACCMAP_PGT_MALI_AARCH64_4K,
	};
	int32_t a[MAT_ELEMS], b[MAT_ELEMS], c[MAT_ELEMS];
	struct accmap_recording *rec = NULL, *back = NULL;
	struct accmap_player *player = NULL;
	struct accmap_rec_error err;
	struct accmap_replay_run run;
	struct simdrv_result res;
	int dev = -1, ret, status = EXIT_FAILURE;
	void *file = NULL;
	size_t file_len;
	uint32_t bad;

	begin("record");
	ret = accmap_open(&dev);
	if (ret)
		return fail(ret, "accmap_open(%s)", ACCMAP_DEVICE_PATH);
	fill_matrix(a, 1);
	fill_matrix(b, 2);
	ret = simdrv_record(dev, &w, a, b, c, &rec, &res);
	if (ret == -ENODEV) {
		fail(ret, "no replay target \"%s\"", SIMDRV_TARGET);
		goto out;
	}
	if (ret) {
		fail(ret, "%ux%u matmul on \"%s\": run stopped at op %u, reason %u, job status %#x",
		     MAT_N, MAT_N, SIMDRV_TARGET, res.run.failed_op, res.run.reason,
		     res.job_status);
		goto out;
	}
	bad = matmul_mismatch(&w, a, b, c);
	if (bad != MAT_ELEMS) {
		fail(0, "recorded run: c[%u] is %d, not what the CPU computes", bad, c[bad]);
		goto out;
	}
	ret = accmap_rec_encode(rec, &file, &file_len, &err);
	if (ret) {
		fail(ret, "%s", err.msg);
		goto out;
	}
	say("record", "%ux%u int32 matmul on \"%s\" (GPU_ID %#x): %u maps, %u ops, %.2f ms",
	    MAT_N, MAT_N, SIMDRV_TARGET, res.gpu.gpu_id, rec->nr_maps, rec->nr_ops,
	    ms(res.run.elapsed_ns));
	say("record", "C matches the CPU; the recording takes %zu bytes", file_len);

	begin("replay");
	ret = accmap_rec_parse(file, file_len, "the recording", &back, &err);
	if (ret) {
		fail(ret, "%s", err.msg);
		goto out;
	}
	ret = accmap_player_open(dev, back, NULL, &player, NULL);
	if (ret) {
		fail(ret, "accmap_player_open");
		goto out;
	}
	fill_matrix(a, 3);
	fill_matrix(b, 4);
	ret = accmap_player_write_symbol(player, "a", a, sizeof(a));
	if (!ret)
		ret = accmap_player_write_symbol(player, "b", b, sizeof(b));
	if (ret) {
		fail(ret, "writing new a and b through their symbols");
		goto out;
	}
	ret = accmap_player_run(player, NULL, NULL, &run);
	if (ret) {
		fail(ret, "replay stopped at op %u of %u, reason %u", run.failed_op, run.nr_ops,
		     run.reason);
		goto out;
	}
	memset(c, 0, sizeof(c));
	ret = accmap_player_read_symbol(player, "output", c, sizeof(c));
	if (ret) {
		fail(ret, "reading symbol output");
		goto out;
	}
	bad = matmul_mismatch(&w, a, b, c);
	if (bad != MAT_ELEMS) {
		fail(0, "replay: c[%u] is %d, not what the CPU computes", bad, c[bad]);
		goto out;
	}
	say("replay", "new a, b written through their symbols; %u ops in session %u, %.2f ms",
	    run.done, accmap_player_session(player), ms(run.elapsed_ns));
	say("replay", "symbol output matches the CPU's A x B");
	status = EXIT_SUCCESS;
out:
	ret = accmap_player_close(player);
	if (ret && status == EXIT_SUCCESS)
		status = fail(ret, "accmap_player_close");
	accmap_rec_free(back);
	accmap_rec_free(rec);
	free(file);
	accmap_close(dev);
	return status;
}

/* A node of the list the GPU sums: a plain C struct, CPU pointers. */
struct demo_node {
	int32_t value;
	struct demo_node *next;
};

/* Runs the job whose descriptor is at @desc in SVM session @session. */
static int svm_run(int dev, uint32_t session, const struct simdrv_gpu *gpu,
		   const uint8_t *desc, struct accmap_replay_run *run)
{
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct simdrv_submit sub = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 1, .slot = 0,
		.head = (uintptr_t)desc, .timeout_us = 10000000,
	};
	uint32_t n = simdrv_build_ops(gpu, &sub, ops);

	return accmap_replay_run(dev, session, ops, n, run);
}

/*
 * The GPU sums the @n nodes of the list at @head, following their
 * pointers, with the job descriptor in @desc: @result gets the sum and
 * the count, which must be @sum and @n.  Says what failed.
 */
static int list_sum(int dev, uint32_t session, const struct simdrv_gpu *gpu, uint8_t *desc,
		    struct demo_node *head, uint32_t n, int32_t sum, int32_t *result,
		    struct accmap_replay_run *run)
{
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_LIST_SUM_I32, .n = n,
		.m = offsetof(struct demo_node, next),
		.k = offsetof(struct demo_node, value),
		.a = (uintptr_t)head, .c = (uintptr_t)result,
	};
	int ret;

	simdrv_encode_job(desc, &job, 0);
	ret = svm_run(dev, session, gpu, desc, run);
	if (!ret && result[0] == sum && result[1] == (int32_t)n)
		return 0;
	return fail(ret, "list sum: reason %u, fault at %#llx; GPU says %d over %d nodes, CPU %d",
		    run->reason, (unsigned long long)run->fault_addr, result[0], result[1], sum);
}

/*
 * An SVM session on @target mirroring this process, and the GPU probed in
 * it: *@ap is the aperture, *@session the session (0 if none).  Says what
 * failed; the caller ends the step with svm_close().
 */
static int svm_open(int dev, const char *target, struct accmap_svm_aperture *ap,
		    uint32_t *session, struct simdrv_gpu *gpu)
{
	struct accmap_replay_setup setup = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 1, .va_bits = SVM_VA_BITS,
	};
	struct accmap_replay_target_info info;
	int ret;

	*session = 0;
	/* The GPU reaches the whole user range: no reservation, malloc() will do. */
	ret = accmap_svm_aperture_init(SVM_VA_BITS);
	if (!ret)
		ret = accmap_svm_aperture_info(ap);
	if (ret)
		return fail(ret, "the SVM aperture for a %u-bit GPU", SVM_VA_BITS);
	setup.svm_start = ap->start;
	setup.svm_size = ap->size;
	ret = accmap_replay_find_target(dev, target, &setup.target, &info);
	if (!ret)
		ret = accmap_svm_session_create(dev, &setup);
	if (ret)
		return fail(ret, "an SVM session on \"%s\" over [%#llx, %#llx)", target,
			    (unsigned long long)ap->start,
			    (unsigned long long)(ap->start + ap->size));
	*session = setup.session;
	ret = simdrv_probe(dev, *session, info.gpu_id, gpu);
	if (ret)
		return fail(ret, "probing the GPU of \"%s\"", target);
	return 0;
}

/* Undoes svm_open(), whatever part of it worked, and closes @dev. */
static void svm_close(int dev, uint32_t session)
{
	if (session)
		accmap_replay_destroy(dev, session);
	accmap_svm_aperture_fini();
	accmap_close(dev);
}

/* Shared virtual memory on @target: the GPU on malloc()'ed memory. */
static int shared_memory(const char *target)
{
	struct accmap_svm_aperture ap;
	struct accmap_svm_op q;
	struct demo_node *head = NULL, *node;
	int32_t *a = NULL, *b = NULL, *c = NULL, *want = NULL, *result = NULL;
	struct accmap_replay_run run;
	uint32_t session = 0;
	struct simdrv_gpu gpu;
	struct accmap_sim_job job;
	uint8_t *desc = NULL;
	int dev = -1, ret, status = EXIT_FAILURE;
	int32_t sum = 0;
	uint32_t i, j, k;

	begin("svm");
	ret = accmap_open(&dev);
	if (ret)
		return fail(ret, "accmap_open(%s)", ACCMAP_DEVICE_PATH);
	ret = svm_open(dev, target, &ap, &session, &gpu);
	if (ret)
		goto out;

	/* A linked list, built the way any C program builds one. */
	for (i = 0; i < LIST_NODES; i++) {
		node = malloc(sizeof(*node));
		if (!node) {
			fail(-ENOMEM, "malloc");
			goto out;
		}
		node->value = (int32_t)(i * 7 % 1000) - 500;
		node->next = head;
		head = node;
		sum += node->value;
	}
	desc = aligned_alloc(64, 4096);
	result = calloc(2, sizeof(*result));
	if (!desc || !result) {
		fail(-ENOMEM, "aligned_alloc");
		goto out;
	}
	if (list_sum(dev, session, &gpu, desc, head, LIST_NODES, sum, result, &run))
		goto out;
	say("svm", "session %u on %s mirrors all this process's user range, [%#llx, %#llx)",
	    session, target, (unsigned long long)ap.start,
	    (unsigned long long)(ap.start + ap.size));
	say("svm", "GPU summed a list of %u malloc()'ed nodes through their own pointers: %d",
	    LIST_NODES, sum);

	a = malloc(SVM_N * SVM_N * sizeof(*a));
	b = malloc(SVM_N * SVM_N * sizeof(*b));
	c = malloc(SVM_N * SVM_N * sizeof(*c));
	want = calloc(SVM_N * SVM_N, sizeof(*want));
	if (!a || !b || !c || !want) {
		fail(-ENOMEM, "malloc");
		goto out;
	}
	for (i = 0; i < SVM_N * SVM_N; i++) {
		a[i] = (int32_t)(i % 17) - 8;
		b[i] = (int32_t)(i % 13) - 6;
	}
	for (i = 0; i < SVM_N; i++)
		for (k = 0; k < SVM_N; k++)
			for (j = 0; j < SVM_N; j++)
				want[i * SVM_N + j] += a[i * SVM_N + k] * b[k * SVM_N + j];
	job = (struct accmap_sim_job) {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = SVM_N, .n = SVM_N, .k = SVM_N,
		.a = (uintptr_t)a, .b = (uintptr_t)b, .c = (uintptr_t)c,
	};
	simdrv_encode_job(desc, &job, 0);
	ret = svm_run(dev, session, &gpu, desc, &run);
	if (ret || memcmp(c, want, SVM_N * SVM_N * sizeof(*c))) {
		fail(ret, "%ux%u matmul on malloc()'ed arrays: reason %u, or C differs",
		     SVM_N, SVM_N, run.reason);
		goto out;
	}
	ret = accmap_svm_query(dev, session, &q);
	if (ret) {
		fail(ret, "ACCMAP_IOC_SVM query");
		goto out;
	}
	say("svm", "%ux%u int32 matmul on three malloc()'ed arrays matches the CPU, %.2f ms",
	    SVM_N, SVM_N, ms(run.elapsed_ns));
	say("svm", "%llu GPU faults serviced, %llu KiB GPU-mapped, no copy, nothing pinned",
	    (unsigned long long)q.faults, (unsigned long long)q.mapped_bytes >> 10);
	status = EXIT_SUCCESS;
out:
	while (head) {
		node = head->next;
		free(head);
		head = node;
	}
	free(desc);
	free(result);
	free(a);
	free(b);
	free(c);
	free(want);
	svm_close(dev, session);
	return status;
}

/*
 * The SVM step again on every other target that takes SVM sessions: a
 * board's GPU, through the mmio target.
 */
static int svm_elsewhere(void)
{
	struct accmap_replay_target_info info;
	uint32_t i;
	int dev, ret = 0;

	if (accmap_open(&dev))
		return 0;
	for (i = 0; !ret && !accmap_replay_query(dev, i, &info); i++) {
		info.name[sizeof(info.name) - 1] = '\0';
		if ((info.flags & ACCMAP_REPLAY_TARGET_SVM) && strcmp(info.name, SIMDRV_TARGET))
			ret = shared_memory(info.name);
	}
	accmap_close(dev);
	return ret;
}

/* The device memory's kind from debugfs ("private", "coherent"), or "". */
static const char *devmem_kind(char *buf, size_t len)
{
	FILE *f = fopen(DEVMEM_FILE, "r");
	char line[64];

	buf[0] = '\0';
	if (!f)
		return buf;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "kind\t", 5)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 5);
	}
	fclose(f);
	return buf;
}

/*
 * The device memory step: a list in one malloc()'ed block is migrated to
 * the target's memory, summed by the GPU there, then walked by the CPU.
 */
static int device_memory(void)
{
	struct accmap_svm_op q0, q1, q2, q3;
	struct demo_node *nodes = NULL, *head, *node;
	struct accmap_svm_aperture ap;
	struct accmap_heap_info dm;
	struct accmap_replay_run run;
	struct simdrv_gpu gpu;
	int dev = -1, ret, status = EXIT_FAILURE;
	char kind[64], b1[32], b2[32], b3[32];
	int32_t sum = 0, cpu_sum = 0, *result = NULL;
	const size_t bytes = DEVMEM_NODES * sizeof(*nodes);
	uint8_t *desc = NULL;
	uint32_t i, walked, session = 0;

	begin("devmem");
	ret = accmap_open(&dev);
	if (ret)
		return fail(ret, "accmap_open(%s)", ACCMAP_DEVICE_PATH);
	ret = accmap_device_memory(dev, &dm);
	if (ret == -ENODEV) {
		say("devmem", "no device memory: QUERY_HEAP of heap %d (device) says ENODEV",
		    ACCMAP_HEAP_DEVICE);
		say("devmem", "(no devmem= range, or no ZONE_DEVICE kind for it): nothing to move");
		accmap_close(dev);
		return EXIT_SUCCESS;
	}
	if (ret) {
		fail(ret, "accmap_device_memory");
		goto out;
	}
	devmem_kind(kind, sizeof(kind));
	say("devmem", "device memory (heap %d): %s, %s total, %s used, %s free", ACCMAP_HEAP_DEVICE,
	    *kind ? kind : "kind not in debugfs", human(b1, sizeof(b1), dm.total),
	    human(b2, sizeof(b2), dm.used), human(b3, sizeof(b3), dm.free));

	ret = svm_open(dev, SIMDRV_TARGET, &ap, &session, &gpu);
	if (ret)
		goto out;

	/* One block of nodes, linked in a scattered order: pointers everywhere. */
	nodes = malloc(bytes);
	desc = aligned_alloc(64, 4096);
	result = calloc(2, sizeof(*result));
	if (!nodes || !desc || !result) {
		fail(-ENOMEM, "malloc");
		goto out;
	}
	for (i = 0; i < DEVMEM_NODES; i++) {
		node = &nodes[i * DEVMEM_STRIDE % DEVMEM_NODES];
		node->value = (int32_t)(i * 31 % 2001) - 1000;
		node->next = i + 1 < DEVMEM_NODES ?
			     &nodes[(i + 1) * DEVMEM_STRIDE % DEVMEM_NODES] : NULL;
		sum += node->value;
	}
	head = &nodes[0];

	/* To the device: the pages of the block, whatever its alignment. */
	ret = accmap_svm_query(dev, session, &q0);
	if (!ret)
		ret = accmap_svm_migrate(dev, session, nodes, bytes, ACCMAP_SVM_LOC_DEVICE, &q1);
	if (ret) {
		fail(ret, "accmap_svm_migrate(%p, %zu bytes, DEVICE)", (void *)nodes, bytes);
		goto out;
	}
	if (q1.to_device == q0.to_device || !q1.device_bytes) {
		fail(0, "nothing moved: to_device %llu, device_bytes %llu, not migrated %llu",
		     (unsigned long long)q1.to_device, (unsigned long long)q1.device_bytes,
		     (unsigned long long)(q1.not_migrated - q0.not_migrated));
		goto out;
	}
	say("devmem", "a list of %u nodes in one malloc()'ed block of %s at %p, scattered links",
	    DEVMEM_NODES, human(b1, sizeof(b1), bytes), (void *)nodes);
	say("devmem", "migrated: %llu pages to the device, %s there now, %llu not migrated",
	    (unsigned long long)(q1.to_device - q0.to_device),
	    human(b1, sizeof(b1), q1.device_bytes),
	    (unsigned long long)(q1.not_migrated - q0.not_migrated));

	/* The GPU follows the pointers, in device memory now. */
	if (list_sum(dev, session, &gpu, desc, head, DEVMEM_NODES, sum, result, &run))
		goto out;
	ret = accmap_svm_query(dev, session, &q2);
	if (ret) {
		fail(ret, "ACCMAP_IOC_SVM query");
		goto out;
	}
	say("devmem", "GPU summed the list from device memory: %d, %.2f ms; %s still there",
	    result[0], ms(run.elapsed_ns), human(b1, sizeof(b1), q2.device_bytes));

	/* The CPU walks the same pointers: nothing to do for it but read. */
	for (node = head, walked = 0; node && walked <= DEVMEM_NODES; node = node->next) {
		cpu_sum += node->value;
		walked++;
	}
	ret = accmap_svm_query(dev, session, &q3);
	if (ret) {
		fail(ret, "ACCMAP_IOC_SVM query");
		goto out;
	}
	if (cpu_sum != sum || walked != DEVMEM_NODES) {
		fail(0, "the CPU read %d over %u nodes after the GPU, %d before", cpu_sum, walked,
		     sum);
		goto out;
	}
	say("devmem", "CPU walked it: %d; %llu pages came back on CPU faults, %s left there (%s)",
	    cpu_sum, (unsigned long long)(q3.cpu_faults - q2.cpu_faults),
	    human(b1, sizeof(b1), q3.device_bytes),
	    !strcmp(kind, "private") ? "private: each CPU access faults its page back" :
	    !strcmp(kind, "coherent") ? "coherent: the CPU reads device memory in place" :
	    "kind unknown");

	/* Whatever is still there comes back on request. */
	ret = accmap_svm_migrate(dev, session, nodes, bytes, ACCMAP_SVM_LOC_SYSTEM, &q3);
	if (ret) {
		fail(ret, "accmap_svm_migrate(%p, %zu bytes, SYSTEM)", (void *)nodes, bytes);
		goto out;
	}
	if (q3.device_bytes) {
		fail(0, "%llu bytes still on the device after migrating back",
		     (unsigned long long)q3.device_bytes);
		goto out;
	}
	say("devmem", "to device %llu pages, to system %llu (%llu on CPU faults, %llu evicted)",
	    (unsigned long long)(q3.to_device - q0.to_device),
	    (unsigned long long)(q3.to_system - q0.to_system),
	    (unsigned long long)(q3.cpu_faults - q0.cpu_faults),
	    (unsigned long long)(q3.evictions - q0.evictions));
	status = EXIT_SUCCESS;
out:
	free(nodes);
	free(desc);
	free(result);
	svm_close(dev, session);
	return status;
}

/*
 * The checkpoint step: a child holding a buffer written and mapped through
 * /dev/accmap is dumped with criu (which ends it) and restored; the child,
 * told so with SIGUSR1, describes its buffer again.  The child is this
 * program run again as "accmap-demo --criu-child DIR".
 */
#define CR_ARG		"--criu-child"
#define CR_SIZE		(256U * 1024U)
#define CR_TIMEOUT_MS	60000U

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* FNV-1a of @len bytes at @p. */
static uint64_t cr_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * The V4L2 step: the kernel's vivid test driver (a capture device, found
 * by its node's name in sysfs) captures one frame into accmap buffers
 * queued as V4L2_MEMORY_DMABUF; the frame read back through accmap's READ
 * must have the checksum of the same frame captured into vivid's own
 * buffers.  vivid-000 is preferred (the harness loads it with
 * videobuf2-vmalloc, which takes any accmap buffer); without vivid a line
 * says so and the step passes.
 */
#define V4L2_W		320U	/* vivid's smallest webcam size */
#define V4L2_H		180U
#define V4L2_NBUFS	2U	/* vivid sets up two buffers at least */
#define VIVID_CID_BASE	(0x00f00000 | 0xf000)

static int v4l2_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* The first vivid capture node (/dev/videoN) into path; false if none. */
static bool vivid_node(char *path, size_t len)
{
	char name[64], best[64] = "";
	struct dirent *e;
	DIR *d = opendir("/sys/class/video4linux");

	if (!d)
		return false;
	while ((e = readdir(d))) {
		char file[300];
		FILE *f;

		if (strncmp(e->d_name, "video", 5))
			continue;
		snprintf(file, sizeof(file), "/sys/class/video4linux/%s/name", e->d_name);
		f = fopen(file, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strncmp(name, "vivid-", 6) &&
		    strstr(name, "-vid-cap") &&
		    (!*best || strcmp(name, best) < 0)) {
			snprintf(best, sizeof(best), "%s", name);
			snprintf(path, len, "/dev/%s", e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return *best;
}

/* Waits for one frame and dequeues it; its index, or -errno. */
static int v4l2_dq(int vfd, uint32_t memory)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory };
	struct pollfd p = { .fd = vfd, .events = POLLIN };
	int ret = poll(&p, 1, 20000);

	if (ret != 1)
		return ret < 0 ? -errno : -ETIMEDOUT;
	ret = v4l2_ioctl(vfd, VIDIOC_DQBUF, &b);
	return ret ? ret : (int)b.index;
}

static int v4l2_setup(int vfd, size_t *size)
{
	static const struct { uint32_t id; int32_t value; } ctrls[] = {
		{ VIVID_CID_BASE + 0, 0 },	/* test pattern: 75% colour bars */
		{ VIVID_CID_BASE + 1, 2 },	/* OSD text: none */
		{ VIVID_CID_BASE + 2, 3 },	/* no horizontal movement */
		{ VIVID_CID_BASE + 3, 3 },	/* no vertical movement */
	};
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int input = 0, ret;

	ret = v4l2_ioctl(vfd, VIDIOC_S_INPUT, &input);
	if (ret)
		return fail(ret, "VIDIOC_S_INPUT 0");
	f.fmt.pix.width = V4L2_W;
	f.fmt.pix.height = V4L2_H;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_GREY;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	ret = v4l2_ioctl(vfd, VIDIOC_S_FMT, &f);
	if (ret || f.fmt.pix.width != V4L2_W || f.fmt.pix.height != V4L2_H)
		return fail(ret, "VIDIOC_S_FMT %ux%u GREY (got %ux%u)", V4L2_W, V4L2_H,
			    f.fmt.pix.width, f.fmt.pix.height);
	for (size_t i = 0; i < ARRAY_SIZE(ctrls); i++) {
		struct v4l2_control c = { .id = ctrls[i].id, .value = ctrls[i].value };

		ret = v4l2_ioctl(vfd, VIDIOC_S_CTRL, &c);
		if (ret)
			return fail(ret, "VIDIOC_S_CTRL %#x", ctrls[i].id);
	}
	*size = f.fmt.pix.sizeimage;
	return 0;
}

/* VIDIOC_REQBUFS of count buffers; 0 or fail()'s status. */
static int v4l2_reqbufs(int vfd, uint32_t memory, uint32_t count)
{
	struct v4l2_requestbuffers rb = {
		.count = count, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory,
	};
	int ret = v4l2_ioctl(vfd, VIDIOC_REQBUFS, &rb);

	if (ret || rb.count != count)
		return fail(ret, "VIDIOC_REQBUFS %u (got %u)", count, rb.count);
	return 0;
}

/*
 * The V4L2_NBUFS buffers REQBUFS set up queued (MMAP, or DMABUF of the
 * fds), streamed until the second frame; its index, or fail()'s status
 * (negative).
 */
static int v4l2_capture(int vfd, uint32_t memory, const int *fds, size_t len)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE, idx = -1, ret;

	for (uint32_t i = 0; i < V4L2_NBUFS; i++) {
		struct v4l2_buffer b = {
			.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory,
			.length = (uint32_t)len,
		};

		if (fds)
			b.m.fd = fds[i];
		ret = v4l2_ioctl(vfd, VIDIOC_QBUF, &b);
		if (ret)
			return -fail(ret, "VIDIOC_QBUF %u", i);
	}
	ret = v4l2_ioctl(vfd, VIDIOC_STREAMON, &type);
	if (ret)
		return -fail(ret, "VIDIOC_STREAMON");
	/* The second frame: the first may have begun before the controls took. */
	for (int n = 0; n < 2; n++) {
		idx = v4l2_dq(vfd, memory);
		if (idx < 0)
			return -fail(idx, "VIDIOC_DQBUF");
	}
	ret = v4l2_ioctl(vfd, VIDIOC_STREAMOFF, &type);
	if (ret)
		return -fail(ret, "VIDIOC_STREAMOFF");
	return idx;
}

static int v4l2_step(void)
{
	uint32_t ids[V4L2_NBUFS] = { 0 };
	int fds[V4L2_NBUFS] = { -1, -1 };
	int dev = -1, vfd = -1, idx, ret, status = EXIT_FAILURE;
	uint64_t ref_sum = 0, our_sum = 0;
	struct accmap_info info;
	uint8_t *frame = NULL;
	size_t size = 0, len;
	char node[300];
	void *map[V4L2_NBUFS] = { MAP_FAILED, MAP_FAILED };
	uint32_t maplen[V4L2_NBUFS] = { 0 };

	begin("v4l2");
	if (!vivid_node(node, sizeof(node))) {
		say("v4l2", "no vivid capture node in /sys/class/video4linux: nothing captured");
		say("v4l2", "(the kernel has no vivid, or it is not loaded)");
		return EXIT_SUCCESS;
	}
	vfd = open(node, O_RDWR | O_CLOEXEC);
	if (vfd < 0)
		return fail(-errno, "open(%s)", node);
	if (v4l2_setup(vfd, &size))
		goto out;
	len = (size + 4095) & ~(size_t)4095;

	/*
	 * The reference: the frame in vivid's own buffers, mapped after
	 * REQBUFS (another REQBUFS would orphan them).
	 */
	if (v4l2_reqbufs(vfd, V4L2_MEMORY_MMAP, V4L2_NBUFS))
		goto out;
	for (uint32_t i = 0; i < V4L2_NBUFS; i++) {
		struct v4l2_buffer b = {
			.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
		};

		ret = v4l2_ioctl(vfd, VIDIOC_QUERYBUF, &b);
		if (ret) {
			fail(ret, "vivid's MMAP buffer %u", i);
			goto out;
		}
		maplen[i] = b.length;
		map[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, vfd, b.m.offset);
		if (map[i] == MAP_FAILED) {
			fail(-errno, "mmap of vivid's buffer %u", i);
			goto out;
		}
	}
	idx = v4l2_capture(vfd, V4L2_MEMORY_MMAP, NULL, 0);
	if (idx < 0)
		goto out;
	ref_sum = cr_hash(map[idx], size);
	for (uint32_t i = 0; i < V4L2_NBUFS; i++) {
		munmap(map[i], maplen[i]);
		map[i] = MAP_FAILED;
	}
	if (v4l2_reqbufs(vfd, V4L2_MEMORY_MMAP, 0))
		goto out;

	/* The same frame into accmap buffers, read back through accmap. */
	ret = accmap_open(&dev);
	if (ret) {
		fail(ret, "accmap_open(%s)", ACCMAP_DEVICE_PATH);
		goto out;
	}
	for (uint32_t i = 0; i < V4L2_NBUFS; i++) {
		ret = accmap_alloc_buffer(dev, len, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &ids[i]);
		if (!ret)
			ret = accmap_get_fd(dev, ids[i], O_RDWR | O_CLOEXEC, &fds[i]);
		if (ret) {
			fail(ret, "accmap buffer %u of %zu bytes", i, len);
			goto out;
		}
	}
	if (v4l2_reqbufs(vfd, V4L2_MEMORY_DMABUF, V4L2_NBUFS))
		goto out;
	idx = v4l2_capture(vfd, V4L2_MEMORY_DMABUF, fds, len);
	if (idx < 0)
		goto out;
	/* vivid still holds the buffers (until REQBUFS 0): its vmaps show. */
	ret = accmap_info(dev, ids[idx], &info);
	if (ret) {
		fail(ret, "accmap_info(id %u)", ids[idx]);
		goto out;
	}
	frame = malloc(size);
	if (!frame) {
		fail(-ENOMEM, "malloc");
		goto out;
	}
	ret = accmap_read(dev, ids[idx], 0, frame, size);
	if (ret) {
		fail(ret, "accmap_read(id %u)", ids[idx]);
		goto out;
	}
	our_sum = cr_hash(frame, size);
	if (v4l2_reqbufs(vfd, V4L2_MEMORY_DMABUF, 0))
		goto out;
	say("v4l2", "%s (vivid, 75%% colour bars): %ux%u GREY, %zu bytes", node, V4L2_W, V4L2_H,
	    size);
	say("v4l2", "captured into accmap id %u (dma-buf, %u vmap(s) by vivid while it held it)",
	    ids[idx], info.vmaps);
	if (our_sum != ref_sum) {
		fail(0, "READ of id %u: checksum %016llx, vivid's own buffer %016llx", ids[idx],
		     (unsigned long long)our_sum, (unsigned long long)ref_sum);
		goto out;
	}
	say("v4l2", "READ checksum %016llx = the frame in vivid's own buffer",
	    (unsigned long long)our_sum);
	status = EXIT_SUCCESS;
out:
	free(frame);
	for (uint32_t i = 0; i < V4L2_NBUFS; i++) {
		if (map[i] != MAP_FAILED)
			munmap(map[i], maplen[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	if (vfd >= 0)
		close(vfd);
	if (dev >= 0) {
		for (uint32_t i = 0; i < V4L2_NBUFS; i++)
			if (ids[i])
				accmap_free(dev, ids[i]);
		accmap_close(dev);
	}
	return status;
}

/* "id N, SIZE, hash H, at ADDR": what the child holds, as the kernel and its memory say. */
static void cr_describe(int dev, uint32_t id, const uint8_t *p, const char *dir,
			const char *name)
{
	struct accmap_info info;
	char path[160];
	size_t bad = 0;
	FILE *f;
	int ret;

	for (size_t i = 0; i < CR_SIZE; i++)
		bad += p[i] != pattern(i);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return;
	ret = accmap_info(dev, id, &info);
	if (ret)
		fprintf(f, "id %u: INFO failed: %s\n", id, strerror(-ret));
	else
		fprintf(f, "id %u, %llu bytes, hash %016llx (%zu bytes off the pattern), %s %p\n",
			id, (unsigned long long)info.size,
			(unsigned long long)cr_hash(p, CR_SIZE), bad, "mapped at", (const void *)p);
	fclose(f);
}

static int criu_child(const char *dir)
{
	uint8_t *p = NULL;
	uint32_t id = 0;
	int dev = -1, ret, sig;
	sigset_t set;

	/* Blocked, and taken with sigwait(): it waits across the dump and restore. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ret = accmap_open(&dev);
	if (!ret)
		ret = accmap_alloc_buffer(dev, CR_SIZE, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id);
	if (!ret)
		ret = accmap_map_id(dev, id, CR_SIZE, PROT_READ | PROT_WRITE, (void **)&p);
	if (ret) {
		fprintf(stderr, "accmap-demo child: %s\n", strerror(-ret));
		return 1;
	}
	for (size_t i = 0; i < CR_SIZE; i++)
		p[i] = pattern(i);
	cr_describe(dev, id, p, dir, "before");
	while (sigwait(&set, &sig) || sig != SIGUSR1)
		;
	cr_describe(dev, id, p, dir, "after");
	return 0;
}

/* Waits for DIR/@name and reads its line into @buf. */
static bool cr_read(const char *dir, const char *name, char *buf, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (unsigned int t = 0; t < CR_TIMEOUT_MS; t += 10) {
		f = fopen(path, "r");
		if (f) {
			bool ok = fgets(buf, (int)len, f) && strchr(buf, '\n');

			fclose(f);
			if (ok) {
				buf[strcspn(buf, "\n")] = '\0';
				return true;
			}
		}
		usleep(10000);
	}
	return false;
}

/* The address range of @pid's mapping of /dev/accmap, as /proc says. */
static void cr_maps(pid_t pid, char *buf, size_t len)
{
	char path[64], line[256];
	FILE *f;

	snprintf(buf, len, "no mapping of %s", ACCMAP_DEVICE_PATH);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ACCMAP_DEVICE_PATH)) {
			snprintf(buf, len, "%.*s", (int)strcspn(line, " "), line);
			break;
		}
	fclose(f);
}

/* Runs "criu ARGS" quietly; its exit status, -1 if it did not run or died. */
__printf(1, 2) static int cr_run(const char *fmt, ...);

static int cr_run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int checkpoint_step(void)
{
	char dir[64] = "/tmp/accmap-demo-criu-XXXXXX", before[256], after[256];
	char map0[64], map1[64];
	const char *criu = getenv("ACCMAP_CRIU");
	int status = EXIT_FAILURE, fd;
	uint64_t t0, t1, t2;
	pid_t pid;

	begin("checkpoint");
	if (!criu || !*criu) {
		say("checkpoint", "ACCMAP_CRIU is not set: %s",
		    "no criu that works on this kernel here, nothing to checkpoint");
		return EXIT_SUCCESS;
	}
	if (!mkdtemp(dir))
		return fail(-errno, "mkdtemp");
	/* The restored child is reparented to us, so that we can reap it. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fail(-errno, "fork");
		goto out;
	}
	if (!pid) {
		/* Its own session, nothing of ours open: criu dumps only what it has. */
		setsid();
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		execl("/proc/self/exe", "accmap-demo", CR_ARG, dir, (char *)NULL);
		_exit(127);
	}
	if (!cr_read(dir, "before", before, sizeof(before))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail(0, "the child did not describe its buffer");
		goto out;
	}
	cr_maps(pid, map0, sizeof(map0));
	say("checkpoint", "child %d: %s", pid, before);
	say("checkpoint", "child %d: /proc maps %s at %s", pid, ACCMAP_DEVICE_PATH, map0);
	t0 = now_ns();
	if (cr_run("%s dump -t %d -D %s -o dump.log >/dev/null 2>&1", criu, pid, dir)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail(0, "criu dump failed; %s/dump.log:", dir);
		cr_run("grep -E 'Error|accmap' %s/dump.log | tail -n 10 >&2", dir);
		goto out;
	}
	t1 = now_ns();
	waitpid(pid, NULL, 0);
	if (kill(pid, 0) == 0) {
		fail(0, "child %d is still there after the dump", pid);
		goto out;
	}
	if (cr_run("%s restore -d -D %s -o restore.log >/dev/null 2>&1", criu, dir)) {
		fail(0, "criu restore failed; %s/restore.log:", dir);
		cr_run("grep -E 'Error|accmap' %s/restore.log | tail -n 10 >&2", dir);
		goto out;
	}
	t2 = now_ns();
	cr_maps(pid, map1, sizeof(map1));
	kill(pid, SIGUSR1);
	if (!cr_read(dir, "after", after, sizeof(after))) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail(0, "the restored child did not describe its buffer");
		goto out;
	}
	waitpid(pid, NULL, 0);
	say("checkpoint", "dumped by criu in %.0f ms (the child ended), restored in %.0f ms",
	    ms(t1 - t0), ms(t2 - t1));
	say("checkpoint", "child %d: %s", pid, after);
	say("checkpoint", "child %d: /proc maps %s at %s", pid, ACCMAP_DEVICE_PATH, map1);
	if (strcmp(before, after) || strcmp(map0, map1) || !strstr(after, "(0 bytes off")) {
		fail(0, "the restored buffer differs from the dumped one");
		goto out;
	}
	say("checkpoint", "id, size, bytes and mapping address match");
	status = EXIT_SUCCESS;
out:
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	cr_run("rm -rf %s", dir);
	return status;
}

int main(int argc, char **argv)
{
	uint32_t rect[RECT_W * RECT_H], rect_out[RECT_OUT_PITCH / 4 * RECT_H];
	uint32_t frame, user_id = 0, cached_id = 0, handle = 0, heap;
	int dev = -1, buf = -1, vgem = -1, view_fd = -1, cached_fd = -1;
	uint8_t *mine = NULL, *theirs = NULL, *user = NULL, *cmap = NULL;
	struct accmap_pool_info pool;
	struct accmap_info info;
	struct accmap_rw rw;
	uint8_t back[CACHED_SIZE];
	char name[32], b1[32], b2[32], b3[32], b4[32];
	uint64_t offset;
	size_t bad;
	int ret;

	/* The child the checkpoint step dumps and restores. */
	if (argc == 3 && !strcmp(argv[1], CR_ARG))
		return criu_child(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: accmap-demo\n");
		return 2;
	}

	/* ---- the device and a labelled, write-combined frame ---- */
	begin("open");
	ret = accmap_open(&dev);
	if (ret)
		return fail(ret, "accmap_open(%s)", ACCMAP_DEVICE_PATH);
	say("open", "%s: fd %d", ACCMAP_DEVICE_PATH, dev);

	begin("alloc");
	ret = accmap_alloc_buffer(dev, FRAME_SIZE, ACCMAP_HEAP_MASK_SYSTEM,
				  ACCMAP_ALLOC_WRITECOMBINE, FRAME_TAG, &frame);
	if (ret)
		return fail(ret, "accmap_alloc_buffer(%u, write-combined, tag %#x)", FRAME_SIZE,
			    FRAME_TAG);
	say("alloc", "%s write-combined, tag %#x: id %u", human(b1, sizeof(b1), FRAME_SIZE),
	    FRAME_TAG, frame);

	begin("label");
	ret = accmap_set_tag_label(dev, FRAME_TAG, FRAME_LABEL);
	if (ret)
		return fail(ret, "accmap_set_tag_label(%#x, \"%s\")", FRAME_TAG, FRAME_LABEL);
	say("label", "tag %#x is \"%s\" in debugfs and accmapctl list", FRAME_TAG, FRAME_LABEL);

	begin("info");
	ret = accmap_info(dev, frame, &info);
	if (ret)
		return fail(ret, "accmap_info(id %u)", frame);
	if (info.size != FRAME_SIZE || info.flags != ACCMAP_ALLOC_WRITECOMBINE ||
	    info.tag != FRAME_TAG || !(info.state & ACCMAP_STATE_ALLOCATED))
		return fail(0, "INFO says size %llu, flags %#x, tag %#x, state %#x",
			    (unsigned long long)info.size, info.flags, info.tag, info.state);
	say("info", "size %llu, heap %u (%s), flags %#x, state %#x, tag %#x, refs %u",
	    (unsigned long long)info.size, info.heap,
	    heap_name(dev, info.heap, name, sizeof(name)), info.flags, info.state, info.tag,
	    info.handle_refs);

	/* ---- sharing: a dma-buf, imported into vgem ---- */
	begin("export");
	ret = accmap_get_fd(dev, frame, O_RDWR | O_CLOEXEC, &buf);
	if (ret)
		return fail(ret, "accmap_get_fd(id %u, O_RDWR)", frame);
	say("export", "dma-buf fd %d, %lld bytes", buf, (long long)lseek(buf, 0, SEEK_END));

	begin("vgem");
	vgem = vgem_open();
	if (vgem < 0)
		return fail(errno, "no vgem in /dev/dri (modprobe vgem)");
	ret = vgem_import(vgem, buf, &handle);
	if (ret)
		return fail(ret, "vgem PRIME_FD_TO_HANDLE(fd %d)", buf);
	ret = accmap_info(dev, frame, &info);
	if (ret)
		return fail(ret, "accmap_info(id %u)", frame);
	say("vgem", "imported fd %d as GEM handle %u: INFO has %u export, %u attachment", buf,
	    handle, info.exports, info.attachments);

	begin("write");
	ret = accmap_map(buf, FRAME_SIZE, PROT_READ | PROT_WRITE, (void **)&mine);
	if (ret)
		return fail(ret, "accmap_map(fd %d)", buf);
	ret = accmap_sync(buf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	if (ret)
		return fail(ret, "accmap_sync(START | WRITE)");
	for (size_t i = 0; i < FRAME_SIZE; i++)
		mine[i] = pattern(i);
	ret = accmap_sync(buf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	if (ret)
		return fail(ret, "accmap_sync(END | WRITE)");
	say("write", "%s pattern through accmap's mapping at %p",
	    human(b1, sizeof(b1), FRAME_SIZE), (void *)mine);

	begin("read");
	view_fd = vgem_export(vgem, handle);
	if (view_fd < 0)
		return fail(view_fd, "vgem PRIME_HANDLE_TO_FD(handle %u)", handle);
	ret = accmap_map(view_fd, FRAME_SIZE, PROT_READ, (void **)&theirs);
	if (ret)
		return fail(ret, "mmap of vgem's export fd %d", view_fd);
	ret = accmap_sync(view_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	if (ret)
		return fail(ret, "DMA_BUF_IOCTL_SYNC(START | READ) on fd %d", view_fd);
	bad = frame_mismatch(theirs, false);
	ret = accmap_sync(view_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	if (bad != FRAME_SIZE)
		return fail(0, "byte %zu reads %#x through vgem, wrote %#x", bad, theirs[bad],
			    pattern(bad));
	if (ret)
		return fail(ret, "DMA_BUF_IOCTL_SYNC(END | READ) on fd %d", view_fd);
	say("read", "vgem exported handle %u as fd %d (%s): all %u bytes match", handle,
	    view_fd, same_file(view_fd, buf) ? "the same dma-buf" : "a new dma-buf",
	    FRAME_SIZE);

	/* ---- a 2-D sub-rectangle in and out, no mapping needed ---- */
	begin("2d-write");
	for (uint32_t y = 0; y < RECT_H; y++)
		for (uint32_t x = 0; x < RECT_W; x++)
			rect[y * RECT_W + x] = rect_pixel(x, y);
	offset = (uint64_t)RECT_Y * FRAME_PITCH + RECT_X * FRAME_BPP;
	memset(&rw, 0, sizeof(rw));
	rw.addr = (uintptr_t)rect;
	rw.offset = offset;
	rw.elem_size = RECT_W * FRAME_BPP;
	rw.user_stride = RECT_W * FRAME_BPP;
	rw.handle_stride = FRAME_PITCH;
	rw.count = RECT_H;
	rw.id = frame;
	ret = accmap_write_strided(dev, &rw);
	if (ret)
		return fail(ret, "accmap_write_strided(%ux%u at %u,%u)", RECT_W, RECT_H, RECT_X,
			    RECT_Y);
	if (rw.bytes != sizeof(rect))
		return fail(0, "WRITE copied %llu bytes, not %zu", (unsigned long long)rw.bytes,
			    sizeof(rect));
	say("2d-write", "%ux%u px at (%u,%u): %u rows of %u B, %u B apart: %llu bytes",
	    RECT_W, RECT_H, RECT_X, RECT_Y, RECT_H, RECT_W * FRAME_BPP, FRAME_PITCH,
	    (unsigned long long)rw.bytes);

	begin("2d-read");
	memset(rect_out, 0, sizeof(rect_out));
	rw.addr = (uintptr_t)rect_out;
	rw.user_stride = RECT_OUT_PITCH;
	rw.bytes = 0;
	ret = accmap_read_strided(dev, &rw);
	if (ret)
		return fail(ret, "accmap_read_strided(%ux%u at %u,%u)", RECT_W, RECT_H, RECT_X,
			    RECT_Y);
	for (uint32_t y = 0; y < RECT_H; y++)
		for (uint32_t x = 0; x < RECT_W; x++)
			if (rect_out[y * (RECT_OUT_PITCH / 4) + x] != rect_pixel(x, y))
				return fail(0, "rectangle pixel (%u,%u) reads %#x, wrote %#x", x,
					    y, rect_out[y * (RECT_OUT_PITCH / 4) + x],
					    rect_pixel(x, y));
	/* The rest of the frame, seen through vgem, must be untouched. */
	ret = accmap_sync(view_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	if (ret)
		return fail(ret, "DMA_BUF_IOCTL_SYNC(START | READ) on fd %d", view_fd);
	bad = frame_mismatch(theirs, true);
	ret = accmap_sync(view_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
	if (bad != FRAME_SIZE)
		return fail(0, "frame byte %zu (x %zu, y %zu) reads %#x through vgem", bad,
			    bad % FRAME_PITCH / FRAME_BPP, bad / FRAME_PITCH, theirs[bad]);
	if (ret)
		return fail(ret, "DMA_BUF_IOCTL_SYNC(END | READ) on fd %d", view_fd);
	say("2d-read", "back into rows %u B apart: match; vgem sees it, rest of frame unchanged",
	    RECT_OUT_PITCH);

	/* ---- the demo's own memory as a buffer ---- */
	begin("from-va");
	user = mmap(NULL, USER_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (user == MAP_FAILED)
		return fail(errno, "mmap of %u bytes", USER_SIZE);
	for (size_t i = 0; i < USER_SIZE; i++)
		user[i] = pattern(i * 7);
	ret = accmap_from_va(dev, user, USER_SIZE, ACCMAP_FROM_VA_WRITE, FRAME_TAG, &user_id);
	if (ret)
		return fail(ret, "accmap_from_va(%p, %u, WRITE)", (void *)user, USER_SIZE);
	ret = accmap_info(dev, user_id, &info);
	if (ret)
		return fail(ret, "accmap_info(id %u)", user_id);
	memset(back, 0, sizeof(back));
	ret = accmap_read(dev, user_id, 0, back, USER_SIZE);
	if (ret)
		return fail(ret, "accmap_read(id %u, %u bytes)", user_id, USER_SIZE);
	if (memcmp(back, user, USER_SIZE))
		return fail(0, "READ through id %u differs from the memory at %p", user_id,
			    (void *)user);
	say("from-va", "%s at %p pinned: id %u, heap %u (%s); READ matches the memory",
	    human(b1, sizeof(b1), USER_SIZE), (void *)user, user_id, info.heap,
	    heap_name(dev, info.heap, name, sizeof(name)));

	/* ---- a cached buffer: CPU writes, then write-back for devices ---- */
	begin("cache");
	ret = accmap_alloc_buffer(dev, CACHED_SIZE, ACCMAP_HEAP_MASK_SYSTEM, 0, FRAME_TAG,
				  &cached_id);
	if (ret)
		return fail(ret, "accmap_alloc_buffer(%u, cached)", CACHED_SIZE);
	ret = accmap_get_fd(dev, cached_id, O_RDWR | O_CLOEXEC, &cached_fd);
	if (ret)
		return fail(ret, "accmap_get_fd(id %u)", cached_id);
	ret = accmap_map(cached_fd, CACHED_SIZE, PROT_READ | PROT_WRITE, (void **)&cmap);
	if (ret)
		return fail(ret, "accmap_map(fd %d)", cached_fd);
	for (size_t i = 0; i < CACHED_SIZE; i++)
		cmap[i] = pattern(i + 5);
	ret = accmap_cache(dev, cached_id, ACCMAP_CACHE_WRITEBACK, 0, CACHED_SIZE);
	if (ret)
		return fail(ret, "accmap_cache(id %u, WRITEBACK, 0, %u)", cached_id, CACHED_SIZE);
	ret = accmap_read(dev, cached_id, 0, back, sizeof(back));
	if (ret)
		return fail(ret, "accmap_read(id %u)", cached_id);
	if (memcmp(back, cmap, sizeof(back)))
		return fail(0, "READ of id %u after the write-back differs from the mapping",
			    cached_id);
	say("cache", "cached %s id %u written through its mapping, written back: READ matches",
	    human(b1, sizeof(b1), CACHED_SIZE), cached_id);

	/* ---- where the memory is ---- */
	begin("heaps");
	for (heap = 0; heap < ACCMAP_HEAP_MAX; heap++) {
		struct accmap_heap_info hi;

		ret = accmap_query_heap(dev, heap, &hi);
		if (ret == -ENODEV)
			continue;
		if (ret)
			return fail(ret, "accmap_query_heap(%u)", heap);
		hi.name[sizeof(hi.name) - 1] = '\0';
		if (heap == ACCMAP_HEAP_USER)
			say("heaps", "%2u %-10s used %s (pinned user memory)", heap, hi.name,
			    human(b1, sizeof(b1), hi.used));
		else
			say("heaps", "%2u %-10s total %s, used %s, free %s, largest free %s", heap,
			    hi.name, human(b1, sizeof(b1), hi.total),
			    human(b2, sizeof(b2), hi.used), human(b3, sizeof(b3), hi.free),
			    human(b4, sizeof(b4), hi.largest_free));
	}

	begin("pool");
	ret = accmap_query_pool(dev, &pool);
	if (ret)
		return fail(ret, "accmap_query_pool");
	say("pool", "cap %s, pooled %s, %llu hits, %llu misses, shrunk %s",
	    human(b1, sizeof(b1), pool.cap), human(b2, sizeof(b2), pool.pooled),
	    (unsigned long long)pool.hits, (unsigned long long)pool.misses,
	    human(b3, sizeof(b3), pool.shrunk));

	/* ---- letting go: vgem's reference keeps the frame alive ---- */
	begin("release");
	accmap_unmap(cmap, CACHED_SIZE);
	close(cached_fd);
	accmap_unmap(theirs, FRAME_SIZE);
	accmap_unmap(mine, FRAME_SIZE);
	close(view_fd);
	close(buf);
	ret = accmap_info(dev, frame, &info);
	if (ret)
		return fail(ret, "accmap_info(id %u)", frame);
	if (!info.exports || !info.attachments)
		return fail(0, "vgem holds the frame, yet INFO has %u exports, %u attachments",
			    info.exports, info.attachments);
	ret = vgem_close_handle(vgem, handle);
	if (ret)
		return fail(ret, "vgem GEM_CLOSE(handle %u)", handle);
	ret = accmap_info(dev, frame, &info);
	if (ret)
		return fail(ret, "accmap_info(id %u)", frame);
	if (info.exports || info.attachments || info.maps)
		return fail(0, "vgem let go, yet INFO has %u exports, %u attachments, %u maps",
			    info.exports, info.attachments, info.maps);
	say("release", "fds closed, vgem closed handle %u: %u exports, %u attachments, %u maps",
	    handle, info.exports, info.attachments, info.maps);

	begin("free");
	ret = accmap_free(dev, frame);
	if (!ret)
		ret = accmap_free(dev, user_id);
	if (!ret)
		ret = accmap_free(dev, cached_id);
	if (ret)
		return fail(ret, "accmap_free");
	munmap(user, USER_SIZE);
	close(vgem);
	ret = accmap_close(dev);
	if (ret)
		return fail(ret, "accmap_close");
	say("free", "ids %u, %u and %u freed, device closed", frame, user_id, cached_id);

	/* ---- a GPU job, recorded and replayed with new inputs ---- */
	if (record_and_replay())
		return EXIT_FAILURE;

	/* ---- shared virtual memory: the GPU on the demo's own pointers ---- */
	if (shared_memory(SIMDRV_TARGET) || svm_elsewhere())
		return EXIT_FAILURE;

	/* ---- device memory: the same pointers, the pages on the device ---- */
	if (device_memory())
		return EXIT_FAILURE;

	/* ---- V4L2: vivid captures a frame into accmap buffers ---- */
	if (v4l2_step())
		return EXIT_FAILURE;

	/* ---- checkpoint: criu dumps a process using accmap, and restores it ---- */
	if (checkpoint_step())
		return EXIT_FAILURE;

	printf("accmap-demo: all %d steps passed\n", step);
	return EXIT_SUCCESS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap device memory: an SVM session on the software Mali model moves
 * pages of this process into the sim target's own memory (ZONE_DEVICE
 * pages over the devmem= carveout) and back, and the program keeps its
 * pointers.  The cases: PREFETCH to the device and a GPU job there, then
 * the CPU reads it all (private memory: every page faults back, counted;
 * coherent memory: nothing faults); a preferred location of DEVICE that a
 * GPU fault honours; ten round trips; munmap of part of a migrated range;
 * fork (COW of device pages); memory the kernel does not migrate (shared
 * anonymous, file); FROM_VA of a range on the device; a working set
 * larger than device memory (eviction); exit with pages on the device;
 * the errnos; and, with coherent memory and a block device that completes
 * in hard interrupt context, the last reference of device pages dropped
 * there (io_free_in_irq).
 *
 * The session is on the target ACCMAP_REPLAY_TARGET names (simdrv; the
 * model if unset).  A register window's device memory is the one its GPU
 * node names; its figures come from its debugfs file, devmem-NAME (the
 * model's is devmem, and QUERY_HEAP's device heap).
 *
 * What the guest has is in the environment: ACCMAP_DEVMEM=private,
 * coherent or none (unset: none).  With none, only the checks that there
 * is no device memory run (EOPNOTSUPP, ENODEV, no debugfs file); the plan
 * names just the cases that apply, since a SKIP fails the run.
 * ACCMAP_NULLB names a null_blk device whose requests complete from an
 * hrtimer well after they are queued (run.sh boots the debug kernels so),
 * or is "none".
 *
 * Sizes are multiples of 2 MiB or of sysconf(_SC_PAGESIZE): the tests run
 * with 4 and 16 KiB CPU pages.  Page counts are in CPU pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "svm_util.h"
#include "tap.h"

#define SZ_1M			(1024UL * 1024)
#define SZ_2M			(2UL << 20)
/* How long accounting may take to settle after a free or an exit. */
#define SETTLE_MS		5000

enum devmem_kind { DEVMEM_NONE, DEVMEM_PRIVATE, DEVMEM_COHERENT };

static size_t ps;
static enum devmem_kind kind;
/* The target's debugfs file, its path, and whether it is a window's. */
static char devmem_name[64] = "devmem";
static char devmem_path[128] = ACCMAP_DEBUGFS_DIR "/devmem";
static bool on_window;

static const char *const kind_names[] = {
	[DEVMEM_NONE] = "none", [DEVMEM_PRIVATE] = "private", [DEVMEM_COHERENT] = "coherent",
};

/* For printing: uint64_t is not unsigned long long everywhere. */
static unsigned long long ull(uint64_t v)
{
	return v;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- the SVM session (svm_util.c) ---- */

/* ACCMAP_IOC_SVM on @t's session with a location; 0 or -errno. */
static int svm_op(const struct svm *t, uint32_t op, const void *start, size_t size,
		  uint32_t location, struct accmap_svm_op *out)
{
	return svm_ioctl(t->dev, t->sim.session, op, (uintptr_t)start, size, 0, location, out);
}

/* PREFETCH of [p, p + len) to @loc that must succeed. */
static bool prefetch(const struct svm *t, const void *p, size_t len, uint32_t loc,
		     struct accmap_svm_op *out)
{
	int ret = svm_op(t, ACCMAP_SVM_OP_PREFETCH, p, len, loc, out);

	return CHECK(ret == 0, "PREFETCH of %zu bytes to %s: %s", len,
		     loc == ACCMAP_SVM_LOC_DEVICE ? "DEVICE" : "SYSTEM", err_name(ret));
}

/*
 * PREFETCH DEVICE of [p, p + len) that must succeed and leave all of it,
 * and nothing else, on the device (device_bytes @len); @out gets the result.
 */
static bool all_to_device(const struct svm *t, const void *p, size_t len,
			  struct accmap_svm_op *out, const char *what)
{
	if (!prefetch(t, p, len, ACCMAP_SVM_LOC_DEVICE, out))
		return false;
	return CHECK(out->device_bytes == len,
		     "%s: device_bytes %llu after PREFETCH DEVICE of %zu bytes", what,
		     ull(out->device_bytes), len);
}

static void print_q(const char *when, const struct accmap_svm_op *q)
{
	tap_diag("%s: device_bytes %llu to_device %llu to_system %llu faults %llu", when,
		 ull(q->device_bytes), ull(q->to_device), ull(q->to_system), ull(q->faults));
	tap_diag("%s: cpu_faults %llu evictions %llu not_migrated %llu", when,
		 ull(q->cpu_faults), ull(q->evictions), ull(q->not_migrated));
}

/* C = A + B over @n int32 (at most RUN_ELEMS) as one chain that must complete. */
static bool vadd_run(struct svm *t, const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n,
		     const char *what)
{
	struct accmap_sim_job job = vadd(a, b, c, (uint32_t)n);

	return job_ok(t, &job, what);
}

/* C = A + B over any number of int32, RUN_ELEMS per run. */
static bool vadd_all(struct svm *t, const uint32_t *a, const uint32_t *b, uint32_t *c, size_t n,
		     const char *what)
{
	for (size_t off = 0; off < n; off += RUN_ELEMS) {
		size_t cnt = n - off < RUN_ELEMS ? n - off : RUN_ELEMS;

		if (!vadd_run(t, a + off, b + off, c + off, cnt, what))
			return false;
	}
	return true;
}

/* ---- debugfs ---- */

/**
 * struct devmem - /sys/kernel/debug/accmap/devmem, parsed
 * @tb:        the file: its key lines, then the owner table
 * @kind:      the first line's value
 * @total:     bytes of device memory
 * @used:      bytes of it in use
 * @evictions: pages evicted, ever
 */
struct devmem {
	struct dbg_table tb;
	const char *kind;
	uint64_t total, used, evictions;
};

/* The key lines that come first, in this order. */
static const char *const devmem_keys[] = { "kind", "total", "used", "evictions" };

/*
 * Reads and checks the devmem file: kind, total, used, evictions, in
 * that order, then a header starting with "pid", then rows with as many
 * fields.  Fails the test (and returns false) if it is not so.
 */
static bool devmem_read(struct devmem *d)
{
	uint64_t *nums[] = { NULL, &d->total, &d->used, &d->evictions };

	memset(d, 0, sizeof(*d));
	if (!dbg_read_keyed(devmem_name, TAP_ARRAY_SIZE(devmem_keys), &d->tb))
		return false;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(devmem_keys); i++) {
		if (!CHECK(!strcmp(dbg_key(&d->tb, i), devmem_keys[i]),
			   "devmem line %zu is not %s", i + 1, devmem_keys[i]))
			return false;
		if (!nums[i])
			continue;
		*nums[i] = dbg_value_num(&d->tb, devmem_keys[i]);
		if (!CHECK(*nums[i] != ~0ULL, "devmem line %zu is not %s<TAB>number", i + 1,
			   devmem_keys[i]))
			return false;
	}
	d->kind = dbg_value(&d->tb, "kind");
	return CHECK(!strcmp(d->tb.cells[0], "pid"),
		     "devmem line 5 is not a header starting with pid");
}

static void devmem_free(struct devmem *d)
{
	dbg_free(&d->tb);
}

/* Column @name of the owner table, or -1 (a failed check). */
static int devmem_col(const struct devmem *d, const char *name)
{
	int c = dbg_col(&d->tb, name);

	CHECK(c >= 0, "devmem has no column %s", name);
	return c;
}

/* The row (0-based) of owner @pid, session @session; -1 if none. */
static long devmem_row(const struct devmem *d, pid_t pid, uint32_t session)
{
	char p[16], s[16];

	if (devmem_col(d, "pid") < 0 || devmem_col(d, "session") < 0)
		return -1;
	snprintf(p, sizeof(p), "%d", (int)pid);
	snprintf(s, sizeof(s), "%u", session);
	return dbg_find(&d->tb, "pid", p, "session", s);
}

/* Every owner row, as diagnostics. */
static void devmem_dump(const struct devmem *d)
{
	char line[256];

	for (size_t r = 0; r <= d->tb.nrows; r++) {
		line[0] = '\0';
		for (size_t c = 0; c < d->tb.ncols; c++) {
			if (c)
				strncat(line, " ", sizeof(line) - strlen(line) - 1);
			strncat(line, d->tb.cells[r * d->tb.ncols + c],
				sizeof(line) - strlen(line) - 1);
		}
		tap_diag("devmem: %s", line);
	}
}

/* Any row of owner @pid. */
static bool devmem_has_pid(const struct devmem *d, pid_t pid)
{
	char p[16];

	if (devmem_col(d, "pid") < 0)
		return false;
	snprintf(p, sizeof(p), "%d", (int)pid);
	return dbg_find(&d->tb, "pid", p, NULL, NULL) >= 0;
}

/* Field @col of row @r as a number; ~0 if there is none. */
static uint64_t devmem_num(const struct devmem *d, long r, const char *col)
{
	if (devmem_col(d, col) < 0 || r < 0)
		return ~0ULL;
	return dbg_num(&d->tb, (size_t)r, col);
}

/* debugfs devmem's used; ~0 after a failed check. */
static uint64_t devmem_used(void)
{
	struct devmem d;
	uint64_t used = ~0ULL;

	if (devmem_read(&d))
		used = d.used;
	devmem_free(&d);
	return used;
}

/* Polls used until it is @want, up to SETTLE_MS; the last value read. */
static uint64_t devmem_wait_used(uint64_t want)
{
	uint64_t used = ~0ULL;

	for (unsigned int waited = 0; waited <= SETTLE_MS; waited += 20) {
		used = devmem_used();
		if (used == want || used == ~0ULL)
			break;
		sleep_ms(20);
	}
	return used;
}

/* The device column of this process's debugfs svm row for the session; ~0 if none. */
static uint64_t svm_device_column(const struct svm *t)
{
	char pid[16], session[16];
	struct dbg_table tb;
	uint64_t v = ~0ULL;
	long row;

	if (!dbg_read("svm", &tb))
		return v;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(session, sizeof(session), "%u", t->sim.session);
	row = dbg_find(&tb, "pid", pid, "session", session);
	if (CHECK(row >= 0, "no debugfs svm row for pid %s session %s", pid, session) &&
	    CHECK(dbg_col(&tb, "device") >= 0, "debugfs svm has no device column"))
		v = dbg_num(&tb, (size_t)row, "device");
	dbg_free(&tb);
	return v;
}

/*
 * The target's device memory as QUERY_HEAP tells it: the model's through
 * QUERY_HEAP; a window's (which QUERY_HEAP does not name) from its debugfs
 * file.  0, or -errno (-ENODEV: there is none).
 */
static int device_heap(struct accmap_heap_info *h)
{
	struct devmem d;
	int dev, ret;

	if (on_window) {
		if (access(devmem_path, F_OK))
			return errno == ENOENT ? -ENODEV : -errno;
		memset(h, 0, sizeof(*h));
		if (!devmem_read(&d)) {
			devmem_free(&d);
			return -EIO;
		}
		strncpy(h->name, "device", sizeof(h->name));
		h->total = d.total;
		h->used = d.used;
		h->free = d.total - d.used;
		h->largest_free = h->free;
		devmem_free(&d);
		return 0;
	}
	dev = am_open();
	if (dev < 0)
		return -EBADF;
	ret = am_query_heap(dev, ACCMAP_HEAP_DEVICE, h);
	close(dev);
	return ret;
}

/* ==== 1. PREFETCH to the device, a GPU job there, the CPU reads it all ==== */

static void test_prefetch_job_cpu(void)
{
	size_t part = SZ_2M, len = 3 * part, n = part / 4, pages = len / ps;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *a = (uint32_t *)region, *b = (uint32_t *)(region + part);
	uint32_t *c = (uint32_t *)(region + 2 * part);
	struct accmap_svm_op q0, p, q1, q2;
	struct devmem d0, d1;
	struct svm t = { .dev = -1 };
	uint64_t col;
	long r;

	memset(&d0, 0, sizeof(d0));
	memset(&d1, 0, sizeof(d1));
	if (!region || !svm_open(&t))
		goto out;
	fill_words(a, n, 1);
	fill_words(b, n, 2);
	memset(c, GARBAGE_BYTE, part);
	if (!devmem_read(&d0) || !svm_query(&t, &q0))
		goto out;
	if (!prefetch(&t, region, len, ACCMAP_SVM_LOC_DEVICE, &p))
		goto out;
	print_q("after PREFETCH DEVICE", &p);
	CHECK(p.device_bytes == len, "device_bytes %llu after PREFETCH DEVICE of %zu bytes",
	      ull(p.device_bytes), len);
	CHECK(p.to_device - q0.to_device == pages, "to_device went up by %llu, %zu pages moved",
	      ull(p.to_device - q0.to_device), pages);
	CHECK(p.not_migrated == q0.not_migrated, "not_migrated %llu -> %llu for anonymous memory",
	      ull(q0.not_migrated), ull(p.not_migrated));
	CHECK(p.mapped_bytes >= len, "mapped_bytes %llu after PREFETCH of %zu bytes",
	      ull(p.mapped_bytes), len);
	if (devmem_read(&d1)) {
		CHECK(d1.used >= d0.used + len, "devmem used %llu -> %llu, %zu bytes moved there",
		      ull(d0.used), ull(d1.used), len);
		r = devmem_row(&d1, getpid(), t.sim.session);
		if (!CHECK(r >= 0, "no devmem row for pid %d session %u", (int)getpid(),
			   t.sim.session))
			devmem_dump(&d1);
		else
			CHECK(devmem_num(&d1, r, "on_device") == len,
			      "devmem on_device %llu, %zu moved",
			      ull(devmem_num(&d1, r, "on_device")), len);
	}
	col = svm_device_column(&t);
	CHECK(col > 0 && col != ~0ULL, "debugfs svm device column %llu after PREFETCH DEVICE",
	      ull(col));

	/* The GPU reads A and B and writes C on the device. */
	if (!vadd_run(&t, a, b, c, n, "C = A + B in device memory") || !svm_query(&t, &q1))
		goto out;
	print_q("after the job", &q1);
	CHECK(q1.device_bytes == len, "device_bytes %llu after the job, expected %zu",
	      ull(q1.device_bytes), len);
	CHECK(q1.cpu_faults == q0.cpu_faults && q1.to_system == q0.to_system,
	      "the job moved pages back: cpu_faults %llu -> %llu, to_system %llu -> %llu",
	      ull(q0.cpu_faults), ull(q1.cpu_faults), ull(q0.to_system), ull(q1.to_system));
	col = svm_device_column(&t);
	CHECK(col > 0 && col != ~0ULL, "debugfs svm device column %llu after the job", ull(col));

	/* Now the CPU: every page, every byte. */
	words_are(a, n, 1, 0, "A read by the CPU");
	words_are(b, n, 2, 0, "B read by the CPU");
	words_are(c, n, 1, 2, "C (the GPU's A + B) read by the CPU");
	if (!svm_query(&t, &q2))
		goto out;
	print_q("after the CPU read", &q2);
	if (kind == DEVMEM_PRIVATE) {
		CHECK(q2.cpu_faults - q1.cpu_faults == pages,
		      "private: cpu_faults went up by %llu, the CPU touched %zu pages",
		      ull(q2.cpu_faults - q1.cpu_faults), pages);
		CHECK(q2.to_system - q1.to_system == pages,
		      "private: to_system went up by %llu, %zu pages came back",
		      ull(q2.to_system - q1.to_system), pages);
		CHECK(q2.device_bytes == 0, "private: device_bytes %llu after the CPU read all",
		      ull(q2.device_bytes));
	} else {
		CHECK(q2.cpu_faults == 0, "coherent: cpu_faults %llu", ull(q2.cpu_faults));
		CHECK(q2.device_bytes == len && q2.to_system == q1.to_system,
		      "coherent: device_bytes %llu (expected %zu), to_system %llu -> %llu after CPU reads",
		      ull(q2.device_bytes), len, ull(q1.to_system), ull(q2.to_system));
	}
out:
	devmem_free(&d0);
	devmem_free(&d1);
	svm_close(&t);
}

/* ==== 2. preferred location DEVICE: a GPU fault migrates first ==== */

static void test_preferred_device(void)
{
	size_t part = SZ_2M, len = 3 * part, n = part / 4;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *a = (uint32_t *)region, *b = (uint32_t *)(region + part);
	uint32_t *c = (uint32_t *)(region + 2 * part);
	struct accmap_svm_op q0, q1;
	struct svm t = { .dev = -1 };
	int ret;

	if (!region || !svm_open(&t))
		goto out;
	fill_words(a, n, 3);
	fill_words(b, n, 4);
	ret = svm_op(&t, ACCMAP_SVM_OP_SET_ATTR, region, len, ACCMAP_SVM_LOC_DEVICE, NULL);
	if (!CHECK(ret == 0, "SET_ATTR location DEVICE: %s", err_name(ret)) ||
	    !svm_query(&t, &q0))
		goto out;
	CHECK(q0.device_bytes == 0 && q0.to_device == 0,
	      "SET_ATTR alone moved pages: device_bytes %llu, to_device %llu",
	      ull(q0.device_bytes), ull(q0.to_device));
	if (!vadd_run(&t, a, b, c, n, "C = A + B, preferred location DEVICE") ||
	    !svm_query(&t, &q1))
		goto out;
	print_q("after the job", &q1);
	CHECK(q1.faults > q0.faults, "the job took no GPU fault (%llu)", ull(q1.faults));
	CHECK(q1.device_bytes > 0 && q1.to_device > 0,
	      "GPU faults in a range preferring DEVICE: device_bytes %llu, to_device %llu",
	      ull(q1.device_bytes), ull(q1.to_device));
	CHECK(q1.device_bytes <= len, "device_bytes %llu > the %zu bytes of the range",
	      ull(q1.device_bytes), len);
	CHECK(svm_device_column(&t) > 0, "debugfs svm device column 0 after migrating faults");
	words_are(c, n, 3, 4, "C (A + B on the device) read by the CPU");
	words_are(a, n, 3, 0, "A read by the CPU");
	words_are(b, n, 4, 0, "B read by the CPU");
out:
	svm_close(&t);
}

/* ==== 3. back and forth ten times ==== */

static void test_round_trips(void)
{
	size_t half = SZ_1M, len = 2 * half, n = half / 4, pages = len / ps;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *b = map_anon(half, PROT_READ | PROT_WRITE);
	uint32_t *a = (uint32_t *)region, *c = (uint32_t *)(region + half);
	struct accmap_svm_op q0, p, q;
	struct svm t = { .dev = -1 };
	char what[64];

	if (!region || !b || !svm_open(&t))
		goto out;
	fill_words(b, n, 99);
	if (!svm_query(&t, &q0))
		goto out;
	for (uint32_t i = 1; i <= 10; i++) {
		fill_words(a, n, 100 + i);
		memset(c, GARBAGE_BYTE, half);
		snprintf(what, sizeof(what), "trip %u", i);
		if (!all_to_device(&t, region, len, &p, what))
			goto out;
		snprintf(what, sizeof(what), "trip %u: C = A + B on the device", i);
		if (!vadd_run(&t, a, b, c, n, what))
			goto out;
		if (!prefetch(&t, region, len, ACCMAP_SVM_LOC_SYSTEM, &p) ||
		    !CHECK(p.device_bytes == 0, "trip %u: device_bytes %llu after PREFETCH SYSTEM",
			   i, ull(p.device_bytes)))
			goto out;
		snprintf(what, sizeof(what), "trip %u: A back in system memory", i);
		if (!words_are(a, n, 100 + i, 0, what))
			goto out;
		snprintf(what, sizeof(what), "trip %u: C back in system memory", i);
		if (!words_are(c, n, 100 + i, 99, what))
			goto out;
	}
	if (!svm_query(&t, &q))
		goto out;
	print_q("after 10 round trips", &q);
	CHECK(q.to_device - q0.to_device == 10 * pages && q.to_system - q0.to_system == 10 * pages,
	      "10 trips of %zu pages: to_device +%llu, to_system +%llu", pages,
	      ull(q.to_device - q0.to_device), ull(q.to_system - q0.to_system));
	CHECK(q.cpu_faults == q0.cpu_faults,
	      "CPU faults (%llu) on pages PREFETCH SYSTEM had brought back",
	      ull(q.cpu_faults - q0.cpu_faults));
out:
	svm_close(&t);
}

/* ==== 4. munmap of part of a migrated range ==== */

static void test_munmap_part(void)
{
	size_t len = 4 * SZ_1M, hole = SZ_1M, n = len / 4, pages = len / ps;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *w = (uint32_t *)region;
	struct accmap_svm_op p, q;
	uint64_t used0, used1;
	struct svm t = { .dev = -1 };
	size_t h0 = hole / 4, h1 = 2 * hole / 4, bad;

	if (!region || !svm_open(&t))
		goto out;
	fill_words(w, n, 40);
	if (!all_to_device(&t, region, len, &p, "before the munmap"))
		goto out;
	used0 = devmem_used();
	/* The second MiB goes. */
	if (!CHECK_OK(munmap(region + hole, hole)))
		goto out;
	used1 = devmem_wait_used(used0 - hole);
	CHECK(used1 == used0 - hole, "devmem used %llu -> %llu after unmapping %zu device bytes",
	      ull(used0), ull(used1), hole);
	if (svm_query(&t, &q))
		CHECK(q.device_bytes == len - hole,
		      "device_bytes %llu after the munmap, expected %zu", ull(q.device_bytes),
		      len - hole);
	/* The rest, by the CPU: before the hole, then after it. */
	for (bad = 0; bad < n; bad = bad + 1 == h0 ? h1 : bad + 1)
		if (w[bad] != word(40, bad))
			break;
	CHECK(bad == n, "word %zu is %#x, expected %#x", bad, bad < n ? w[bad] : 0,
	      word(40, bad));
	if (svm_query(&t, &q)) {
		print_q("after the CPU read the rest", &q);
		if (kind == DEVMEM_PRIVATE)
			CHECK(q.cpu_faults == pages - hole / ps && q.device_bytes == 0,
			      "private: cpu_faults %llu (expected %zu), device_bytes %llu",
			      ull(q.cpu_faults), pages - hole / ps, ull(q.device_bytes));
		else
			CHECK(q.cpu_faults == 0, "coherent: cpu_faults %llu", ull(q.cpu_faults));
	}
	munmap(region, hole);
	munmap(region + 2 * hole, len - 2 * hole);
out:
	svm_close(&t);
}

/* ==== 5. fork with pages on the device: COW in both ==== */

static void test_fork_cow(void)
{
	size_t len = SZ_2M, n = len / 4;
	uint32_t *w = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	int to_child[2] = { -1, -1 }, to_parent[2] = { -1, -1 };
	struct accmap_svm_op p;
	struct svm t = { .dev = -1 };
	char byte;
	pid_t pid;

	if (!w || !zero || !c || !svm_open(&t) || !CHECK_OK(pipe(to_child)) ||
	    !CHECK_OK(pipe(to_parent)))
		goto out;
	fill_words(w, n, 50);
	if (!all_to_device(&t, w, len, &p, "before the fork"))
		goto out;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		/* The child sees the data of the fork, writes its own, sees it. */
		words_are(w, n, 50, 0, "the child's first read");
		fill_words(w, n, 51);
		words_are(w, n, 51, 0, "the child after its write");
		if (write(to_parent[1], "c", 1) != 1 || read(to_child[0], &byte, 1) != 1)
			_exit(1);
		/* The parent's writes did not reach the child. */
		words_are(w, n, 51, 0, "the child after the parent's write");
		_exit(0);
	}
	if (!CHECK(read(to_parent[0], &byte, 1) == 1, "the child did not report"))
		goto reap;
	/* The child's write did not reach the parent: not its GPU, not its CPU. */
	if (vadd_run(&t, w, zero, c, n, "the parent's GPU reads after the child's write"))
		words_are(c, n, 50, 0, "the parent's GPU view after the child's write");
	words_are(w, n, 50, 0, "the parent's CPU view after the child's write");
	fill_words(w, n, 52);
	words_are(w, n, 52, 0, "the parent after its write");
	if (vadd_run(&t, w, zero, c, n, "the parent's GPU reads after its write"))
		words_are(c, n, 52, 0, "the parent's GPU view after its write");
reap:
	child_go_reap(pid, to_child[1]);
out:
	close_pair(to_child);
	close_pair(to_parent);
	svm_close(&t);
}

/* ==== 6. memory the kernel does not migrate ==== */

/*
 * PREFETCH DEVICE of @m (@len bytes of pattern @seed, every page
 * present): 0, nothing moves, every page counted in not_migrated, and the
 * GPU reads the data where it is.
 */
static void check_not_migrated(struct svm *t, uint32_t *m, size_t len, uint32_t seed,
			       uint32_t *zero, uint32_t *c, const char *what)
{
	struct accmap_svm_op q0, p;
	char msg[96];

	if (!svm_query(t, &q0) || !prefetch(t, m, len, ACCMAP_SVM_LOC_DEVICE, &p))
		return;
	print_q(what, &p);
	CHECK(p.device_bytes == q0.device_bytes && p.to_device == q0.to_device,
	      "%s: device_bytes %llu -> %llu, to_device %llu -> %llu", what,
	      ull(q0.device_bytes), ull(p.device_bytes), ull(q0.to_device), ull(p.to_device));
	CHECK(p.not_migrated - q0.not_migrated == len / ps,
	      "%s: not_migrated went up by %llu, expected %zu pages", what,
	      ull(p.not_migrated - q0.not_migrated), len / ps);
	CHECK(p.mapped_bytes >= len, "%s: mapped_bytes %llu after PREFETCH", what,
	      ull(p.mapped_bytes));
	snprintf(msg, sizeof(msg), "the GPU reads %s", what);
	if (vadd_run(t, m, zero, c, len / 4, msg))
		words_are(c, len / 4, seed, 0, msg);
}

static void test_shared_and_file(void)
{
	size_t len = SZ_1M, n = len / 4;
	uint32_t *sh = map_anon_shared(len), *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE), *f = NULL;
	char path[] = "/tmp/accmap_devmem.XXXXXX";
	int fd = -1;
	struct svm t = { .dev = -1 };

	if (!sh || !zero || !c || !svm_open(&t))
		goto out;
	fill_words(sh, n, 60);
	check_not_migrated(&t, sh, len, 60, zero, c, "MAP_SHARED anonymous memory");

	fd = mkstemp(path);
	if (!CHECK(fd >= 0, "mkstemp %s: %s", path, strerror(errno)))
		goto out;
	unlink(path);
	if (!CHECK_OK(ftruncate(fd, (off_t)len)))
		goto out;
	f = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(f != MAP_FAILED, "mmap of a file in /tmp: %s", strerror(errno))) {
		f = NULL;
		goto out;
	}
	fill_words(f, n, 61);
	check_not_migrated(&t, f, len, 61, zero, c, "a MAP_SHARED file in /tmp");
out:
	if (f)
		munmap(f, len);
	if (fd >= 0)
		close(fd);
	svm_close(&t);
}

/* ==== 7. FROM_VA of a range on the device ==== */

static void test_from_va(void)
{
	size_t len = SZ_2M, n = len / 4, pages = len / ps;
	uint32_t *w = map_anon(len, PROT_READ | PROT_WRITE), *buf = malloc(len);
	struct accmap_svm_op p, q;
	struct accmap_from_va fv;
	struct svm t = { .dev = -1 };
	int ret;

	if (!w || !CHECK(buf, "malloc") || !svm_open(&t))
		goto out;
	fill_words(w, n, 70);
	if (!all_to_device(&t, w, len, &p, "before FROM_VA"))
		goto out;
	memset(&fv, 0, sizeof(fv));
	fv.addr = (uintptr_t)w;
	fv.size = len;
	fv.flags = ACCMAP_FROM_VA_WRITE;
	fv.id = GARBAGE_U32;
	ret = raw_ioctl(t.dev, ACCMAP_IOC_FROM_VA, &fv);
	if (!CHECK(ret == 0, "FROM_VA of %zu bytes on the device: %s", len, err_name(ret)))
		goto out;
	if (svm_query(&t, &q)) {
		print_q("after FROM_VA", &q);
		CHECK(q.to_system - p.to_system == pages,
		      "FROM_VA: to_system went up by %llu, %zu pages were on the device",
		      ull(q.to_system - p.to_system), pages);
		CHECK(q.device_bytes == 0, "device_bytes %llu after FROM_VA", ull(q.device_bytes));
		if (q.cpu_faults != p.cpu_faults)
			tap_diag("FROM_VA counted %llu CPU faults",
				 ull(q.cpu_faults - p.cpu_faults));
	}
	memset(buf, GARBAGE_BYTE, len);
	ret = am_read(t.dev, fv.id, 0, buf, len);
	if (CHECK(ret == 0, "READ of the FROM_VA buffer: %s", err_name(ret)))
		words_are(buf, n, 70, 0, "the FROM_VA buffer through READ");
	/* The pinned pages are the process's: a CPU write shows in the buffer. */
	w[7] = 0x12345678;
	ret = am_read(t.dev, fv.id, 7 * 4, buf, 4);
	if (CHECK(ret == 0, "READ of word 7: %s", err_name(ret)))
		CHECK(buf[0] == 0x12345678, "word 7 of the buffer is %#x after the CPU wrote it",
		      buf[0]);
	CHECK(am_free(t.dev, fv.id) == 0, "FREE of the FROM_VA buffer");
out:
	free(buf);
	svm_close(&t);
}

/* ==== 8. a working set larger than device memory ==== */

static void test_eviction(void)
{
	struct accmap_heap_info h;
	struct accmap_svm_op q0, q;
	size_t len, half, n;
	uint8_t *region = NULL;
	struct devmem d0, d1;
	struct svm t = { .dev = -1 };
	int ret;

	memset(&d0, 0, sizeof(d0));
	memset(&d1, 0, sizeof(d1));
	ret = device_heap(&h);
	if (!CHECK(ret == 0 && h.total > 0, "QUERY_HEAP DEVICE: %s, total %llu", err_name(ret),
		   ull(h.total)))
		return;
	/* Device memory + 8 MiB, A and C halves of 2 MiB multiples. */
	len = (h.total + 8 * SZ_1M + 2 * SZ_2M - 1) / (2 * SZ_2M) * (2 * SZ_2M);
	half = len / 2;
	n = half / 4;
	tap_diag("device memory %llu bytes, working set %zu bytes", ull(h.total), len);
	region = map_anon(len, PROT_READ | PROT_WRITE);
	if (!region || !svm_open(&t))
		goto out;
	fill_words((uint32_t *)region, n, 80);
	memset(region + half, GARBAGE_BYTE, half);
	ret = svm_op(&t, ACCMAP_SVM_OP_SET_ATTR, region, len, ACCMAP_SVM_LOC_DEVICE, NULL);
	if (!CHECK(ret == 0, "SET_ATTR location DEVICE: %s", err_name(ret)) ||
	    !devmem_read(&d0) || !svm_query(&t, &q0))
		goto out;
	/* C = A + A: the GPU reads and writes all of it. */
	if (!vadd_all(&t, (uint32_t *)region, (uint32_t *)region, (uint32_t *)(region + half), n,
		      "C = A + A over more than device memory"))
		goto out;
	if (svm_query(&t, &q)) {
		print_q("after the job", &q);
		CHECK(q.evictions > q0.evictions,
		      "no eviction with %zu bytes preferring %llu bytes", len, ull(h.total));
		CHECK(q.to_system >= q.evictions, "to_system %llu < evictions %llu",
		      ull(q.to_system), ull(q.evictions));
		CHECK(q.device_bytes > 0 && q.device_bytes <= h.total,
		      "device_bytes %llu, device memory %llu", ull(q.device_bytes), ull(h.total));
	}
	if (devmem_read(&d1)) {
		CHECK(d1.evictions > d0.evictions, "devmem evictions %llu -> %llu",
		      ull(d0.evictions), ull(d1.evictions));
		CHECK(d1.used <= d1.total, "devmem used %llu > total %llu", ull(d1.used),
		      ull(d1.total));
	}
	words_are((uint32_t *)(region + half), n, 80, 80, "C = A + A after evictions");
	words_are((uint32_t *)region, n, 80, 0, "A after evictions");
out:
	devmem_free(&d0);
	devmem_free(&d1);
	svm_close(&t);
	if (region)
		munmap(region, len);
}

/* ==== 9. exit with pages on the device ==== */

/*
 * A child that moves @len bytes to the device, reports "r" and the
 * address of those bytes, then waits to die.
 */
static pid_t child_on_device(size_t len, int *ready)
{
	int fds[2];
	pid_t pid;

	if (!CHECK_OK(pipe(fds)))
		return -1;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno))) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		uint32_t *w = map_anon(len, PROT_READ | PROT_WRITE);
		struct accmap_svm_op p;
		struct svm t = { .dev = -1 };

		close(fds[0]);
		if (!w || !svm_open(&t))
			_exit(1);
		fill_words(w, len / 4, 90);
		if (!all_to_device(&t, w, len, &p, "child"))
			_exit(1);
		/* "r" and where the pages are, in one write (a pipe keeps it whole). */
		{
			char msg[1 + sizeof(uintptr_t)] = "r";
			uintptr_t at = (uintptr_t)w;

			memcpy(msg + 1, &at, sizeof(at));
			if (write(fds[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
				_exit(1);
		}
		pause();
		_exit(0);
	}
	close(fds[1]);
	*ready = fds[0];
	return pid;
}

static void test_exit(void)
{
	size_t len = 4 * SZ_1M;
	uint64_t used0 = devmem_used(), used;
	struct devmem d;
	int ready, status;
	char byte;
	pid_t pid;

	if (used0 == ~0ULL)
		return;
	for (int sig = SIGTERM; sig; sig = sig == SIGTERM ? SIGKILL : 0) {
		pid = child_on_device(len, &ready);
		if (pid < 0)
			return;
		if (CHECK(read(ready, &byte, 1) == 1, "the child did not get its pages moved")) {
			used = devmem_used();
			CHECK(used >= used0 + len, "devmem used %llu with the child's %zu bytes",
			      ull(used), len);
		}
		close(ready);
		kill(pid, sig);
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig, "child status %#x", status);
		used = devmem_wait_used(used0);
		CHECK(used == used0,
		      "devmem used %llu after the child died by signal %d, %llu before", ull(used),
		      sig, ull(used0));
		if (devmem_read(&d))
			CHECK(!devmem_has_pid(&d, pid), "devmem still has a row for dead pid %d",
			      (int)pid);
		devmem_free(&d);
	}
}

/*
 * The device page frames behind @npages pages at @addr in process @pid,
 * from /proc/PID/pagemap (root only): a page of coherent device memory is
 * mapped like any (its frame in bits 54:0), one of private device memory
 * is a device-private swap entry whose offset (bits 54:5) is its frame.
 * Returns how many of the pages had a frame; 0 for the others.
 */
static size_t device_pfns(pid_t pid, uintptr_t addr, size_t npages, uint64_t *pfn)
{
	const uint64_t frame_mask = (1ULL << 55) - 1;
	size_t found = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "open %s: %s", path, strerror(errno)))
		return 0;
	for (size_t i = 0; i < npages; i++) {
		uint64_t e = 0;

		pfn[i] = 0;
		if (pread(fd, &e, sizeof(e), (off_t)((addr / ps + i) * sizeof(e))) != sizeof(e))
			continue;
		if (e >> 63)
			pfn[i] = e & frame_mask;
		else if (e >> 62 & 1)
			pfn[i] = (e & frame_mask) >> 5;
		found += pfn[i] != 0;
	}
	close(fd);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Device pages a process left are cleared before another gets them: a
 * child puts a pattern on the device and is killed, then pages this
 * process never touched are placed there and must read as zero, by the
 * GPU and by the CPU.  The pool hands out the slots freed last first, so
 * the new pages must be exactly the child's (their page frames, read
 * from both processes' pagemap, show it): otherwise zeros would prove
 * nothing about clearing.
 */
static void test_fresh_cleared(void)
{
	size_t len = 4 * SZ_1M, n = len / 4, np = len / ps, bad, had = 0, got = 0, reused = 0;
	uint64_t used0 = devmem_used();
	uint64_t *child_pfn = calloc(np, sizeof(uint64_t)), *new_pfn = calloc(np, sizeof(uint64_t));
	uint32_t *fresh = NULL, *c = NULL;
	char msg[1 + sizeof(uintptr_t)];
	struct accmap_svm_op q;
	struct svm t = { .dev = -1 };
	uintptr_t child_at = 0;
	int ready, status;
	pid_t pid;

	if (used0 == ~0ULL || !CHECK(child_pfn && new_pfn, "calloc"))
		goto out_free;
	pid = child_on_device(len, &ready);
	if (pid < 0)
		goto out_free;
	if (CHECK(read(ready, msg, sizeof(msg)) == (ssize_t)sizeof(msg) && msg[0] == 'r',
		  "the child did not get its pages moved")) {
		memcpy(&child_at, msg + 1, sizeof(child_at));
		had = device_pfns(pid, child_at, np, child_pfn);
	}
	close(ready);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!CHECK(had == np, "the child's pagemap shows %zu of its %zu device pages", had, np) ||
	    !CHECK(devmem_wait_used(used0) == used0, "the child's device pages were not freed"))
		goto out_free;

	fresh = map_anon(len, PROT_READ | PROT_WRITE);
	c = map_anon(len, PROT_READ | PROT_WRITE);
	if (!fresh || !c || !svm_open(&t))
		goto out;
	memset(c, 0xa5, len);
	if (!all_to_device(&t, fresh, len, &q, "never-touched pages"))
		goto out;
	CHECK(q.to_device == len / ps, "to_device %llu for %zu never-touched pages",
	      ull(q.to_device), len / ps);
	got = device_pfns(getpid(), (uintptr_t)fresh, np, new_pfn);
	qsort(child_pfn, np, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < np; i++)
		reused += new_pfn[i] &&
			  bsearch(&new_pfn[i], child_pfn, np, sizeof(uint64_t), cmp_u64);
	tap_diag("%zu of %zu new device pages are frames the killed child had (%zu seen)",
		 reused, np, got);
	CHECK(reused == np,
	      "only %zu of %zu new device pages took the killed child's frames: the test would not show clearing",
	      reused, np);
	if (vadd_all(&t, fresh, fresh, c, n, "the GPU reads never-touched device pages")) {
		bad = check_value(c, n, 0);
		CHECK(bad == n, "GPU: word %zu of the new pages is %#x, not 0", bad,
		      bad < n ? c[bad] : 0);
	}
	bad = check_value(fresh, n, 0);
	CHECK(bad == n, "CPU: word %zu of the new pages is %#x, not 0", bad,
	      bad < n ? fresh[bad] : 0);
out:
	svm_close(&t);
	if (fresh)
		munmap(fresh, len);
	if (c)
		munmap(c, len);
out_free:
	free(child_pfn);
	free(new_pfn);
}

/* ==== 10. the last reference dropped in hard interrupt context ==== */

#define TRACEFS			"/sys/kernel/tracing"
#define IRQ_PROBE_GROUP		"accmap_devmem"
#define IRQ_PROBE		IRQ_PROBE_GROUP "/page_free"

/*
 * Counts the recorded hits of the page_free probe, and those in hard
 * interrupt context: the third character of a line's irq-info field
 * ("d.h1." and the like) is 'h' (hardirq) or 'H' (hardirq inside a
 * softirq) there.
 */
static bool count_frees(size_t *all, size_t *hard)
{
	char *text = read_text(TRACEFS "/trace", NULL), *line, *save = NULL;

	*all = 0;
	*hard = 0;
	if (!CHECK(text, "read %s/trace: %s", TRACEFS, strerror(errno)))
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *flags = strstr(line, "] ");

		if (line[0] == '#' || !flags || !strstr(line, "devmem_page_free"))
			continue;
		(*all)++;
		flags += 2;
		if (strlen(flags) > 2 && (flags[2] == 'h' || flags[2] == 'H'))
			(*hard)++;
	}
	free(text);
	return true;
}

/*
 * Coherent device pages are ordinary to GUP: an O_DIRECT write takes its
 * own references on them.  The process writes 2 MiB of device pages to
 * a null_blk device that completes 300 ms later from an hrtimer, unmaps
 * them at once, and so leaves the block layer's references the last
 * ones: they drop in hard interrupt context, where the pages go back to
 * the device pool through devmem_page_free().  A kprobe on it shows the
 * context of every free; lockdep (debug kernels) reports a pool lock
 * taken there that is also taken with interrupts on, and the run fails
 * on it.  Every page must be freed there, and the pool must get every
 * page back.
 */
static void test_io_free_in_irq(void)
{
	const char *nullb = getenv("ACCMAP_NULLB");
	size_t len = SZ_2M, pages = len / ps, all = 0, hard = 0;
	uint64_t used0 = devmem_used(), used;
	struct io_event ev = { 0 };
	struct timespec wait = { .tv_sec = 10 };
	struct iocb cb = { 0 }, *cbs[1] = { &cb };
	aio_context_t ctx = 0;
	struct accmap_svm_op q;
	struct svm t = { .dev = -1 };
	bool probed = false;
	uint32_t *w = NULL;
	long ret;
	int fd;

	fd = open(nullb, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (!CHECK(fd >= 0, "open %s: %s", nullb, strerror(errno)) ||
	    !CHECK(used0 != ~0ULL, "no debugfs devmem"))
		goto out;
	if (access(TRACEFS "/kprobe_events", W_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	probed = CHECK(write_text(TRACEFS "/kprobe_events", "p:" IRQ_PROBE " devmem_page_free"),
		       "kprobe on devmem_page_free: %s", strerror(errno)) &&
		 CHECK(write_text(TRACEFS "/events/" IRQ_PROBE "/enable", "1"),
		       "enable the probe: %s", strerror(errno));
	if (!probed)
		goto out;
	w = map_anon(len, PROT_READ | PROT_WRITE);
	if (!w || !svm_open(&t))
		goto out;
	fill_words(w, len / 4, 81);
	if (!all_to_device(&t, w, len, &q, "before the O_DIRECT write") ||
	    !CHECK(syscall(__NR_io_setup, 1, &ctx) == 0, "io_setup: %s", strerror(errno)))
		goto out;
	cb.aio_fildes = fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (uintptr_t)w;
	cb.aio_nbytes = len;
	ret = syscall(__NR_io_submit, ctx, 1, cbs);
	if (!CHECK(ret == 1, "io_submit of %zu bytes from device pages: %ld (%s)", len, ret,
		   strerror(errno)))
		goto out;
	CHECK(munmap(w, len) == 0, "munmap under the write: %s", strerror(errno));
	w = NULL;
	ret = syscall(__NR_io_getevents, ctx, 1, 1, &ev, &wait);
	if (CHECK(ret == 1, "io_getevents: %ld (%s)", ret, strerror(errno)))
		CHECK(ev.res == (long long)len, "the write completed with %lld", (long long)ev.res);
	used = devmem_wait_used(used0);
	CHECK(used == used0, "device memory used %llu after the write completed, %llu before",
	      ull(used), ull(used0));
	if (count_frees(&all, &hard)) {
		tap_diag("%zu device pages freed, %zu of them in hard interrupt context",
			 all, hard);
		CHECK(all == pages && hard == pages,
		      "%zu of %zu device pages freed, %zu in hard interrupt context",
		      all, pages, hard);
	}
out:
	if (ctx)
		syscall(__NR_io_destroy, ctx);
	if (probed) {
		write_text(TRACEFS "/events/" IRQ_PROBE "/enable", "0");
		write_text(TRACEFS "/kprobe_events", "-:" IRQ_PROBE);
	}
	if (w)
		munmap(w, len);
	if (fd >= 0)
		close(fd);
	svm_close(&t);
}

/* ==== 11. errnos and QUERY_HEAP ==== */

static void test_errnos(void)
{
	struct accmap_heap_info h;
	struct devmem d;
	struct svm t = { .dev = -1 };
	uint8_t *region = map_anon(4 * ps, PROT_READ | PROT_WRITE);
	int ret;

	memset(&d, 0, sizeof(d));
	tap_diag("ACCMAP_DEVMEM=%s: device memory expected: %s",
		 getenv("ACCMAP_DEVMEM") ? getenv("ACCMAP_DEVMEM") : "(unset)", kind_names[kind]);
	if (!region || !svm_open(&t))
		goto out;
	ret = svm_op(&t, ACCMAP_SVM_OP_SET_ATTR, region, ps, 2, NULL);
	CHECK(ret == -EINVAL, "SET_ATTR location 2: %s, expected EINVAL", err_name(ret));
	ret = svm_op(&t, ACCMAP_SVM_OP_PREFETCH, region, ps, 2, NULL);
	CHECK(ret == -EINVAL, "PREFETCH location 2: %s, expected EINVAL", err_name(ret));
	ret = svm_op(&t, ACCMAP_SVM_OP_PREFETCH, region, ps, ~0U, NULL);
	CHECK(ret == -EINVAL, "PREFETCH location ~0: %s, expected EINVAL", err_name(ret));
	if (kind == DEVMEM_NONE) {
		ret = svm_op(&t, ACCMAP_SVM_OP_SET_ATTR, region, ps, ACCMAP_SVM_LOC_DEVICE, NULL);
		CHECK(ret == -EOPNOTSUPP, "SET_ATTR location DEVICE without device memory: %s",
		      err_name(ret));
		ret = svm_op(&t, ACCMAP_SVM_OP_PREFETCH, region, ps, ACCMAP_SVM_LOC_DEVICE, NULL);
		CHECK(ret == -EOPNOTSUPP, "PREFETCH location DEVICE without device memory: %s",
		      err_name(ret));
		ret = device_heap(&h);
		CHECK(ret == -ENODEV, "QUERY_HEAP DEVICE without device memory: %s",
		      err_name(ret));
		CHECK(access(ACCMAP_DEBUGFS_DIR "/svm", F_OK) == 0, "no %s/svm: is debugfs there?",
		      ACCMAP_DEBUGFS_DIR);
		errno = 0;
		CHECK(access(devmem_path, F_OK) && errno == ENOENT,
		      "%s without device memory: %s", devmem_path,
		      errno ? strerror(errno) : "it is there");
		goto out;
	}
	ret = device_heap(&h);
	if (CHECK(ret == 0, "QUERY_HEAP DEVICE: %s", err_name(ret))) {
		tap_diag("device heap \"%.16s\": total %llu used %llu free %llu largest_free %llu",
			 h.name, ull(h.total), ull(h.used), ull(h.free), ull(h.largest_free));
		CHECK(!strncmp(h.name, "device", sizeof(h.name)), "heap name \"%.16s\"", h.name);
		CHECK(h.total > 0 && h.total % ps == 0, "total %llu", ull(h.total));
		CHECK(h.used + h.free == h.total, "used %llu + free %llu != total %llu",
		      ull(h.used), ull(h.free), ull(h.total));
		CHECK(h.largest_free <= h.free, "largest_free %llu > free %llu",
		      ull(h.largest_free), ull(h.free));
		if (devmem_read(&d)) {
			/* A window's heap figures are the file's. */
			CHECK(on_window || d.total == h.total, "devmem total %llu, QUERY_HEAP %llu",
			      ull(d.total), ull(h.total));
			CHECK(!strcmp(d.kind, kind_names[kind]),
			      "devmem kind %s, the guest expects %s", d.kind, kind_names[kind]);
		}
	}
	/* A valid PREFETCH to DEVICE moves the page; used + free still add up. */
	memset(region, 1, 4 * ps);
	if (prefetch(&t, region, 4 * ps, ACCMAP_SVM_LOC_DEVICE, NULL) && device_heap(&h) == 0)
		CHECK(h.used >= 4 * ps && h.used + h.free == h.total,
		      "with 4 pages on the device: used %llu free %llu total %llu",
		      ull(h.used), ull(h.free), ull(h.total));
out:
	devmem_free(&d);
	svm_close(&t);
}

/* An ACCMAP_IOC_SVM of the first size (up to pages_mapped) still works. */
static void test_old_struct(void)
{
	size_t old = offsetof(struct accmap_svm_op, device_bytes);
	unsigned long cmd = _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC,
				 _IOC_NR(ACCMAP_IOC_SVM), old);
	struct accmap_svm_op a;
	struct svm t = { .dev = -1 };
	int ret;

	CHECK(old == ACCMAP_SVM_OP_SIZE_VER1, "ACCMAP_SVM_OP_SIZE_VER1 %u, the old struct %zu",
	      (unsigned int)ACCMAP_SVM_OP_SIZE_VER1, old);
	if (!svm_open(&t))
		goto out;
	/* Shorter than the first version: refused. */
	memset(&a, 0, sizeof(a));
	a.session = t.sim.session;
	a.op = ACCMAP_SVM_OP_QUERY;
	ret = raw_ioctl(t.dev, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC,
				    _IOC_NR(ACCMAP_IOC_SVM), old - 8), &a);
	CHECK(ret == -EINVAL, "QUERY with %zu bytes: %s, expected EINVAL", old - 8, err_name(ret));
	memset(&a, GARBAGE_BYTE, sizeof(a));
	memset(&a, 0, old);
	a.session = t.sim.session;
	a.op = ACCMAP_SVM_OP_QUERY;
	ret = raw_ioctl(t.dev, cmd, &a);
	CHECK(ret == 0, "QUERY with the old struct size (%zu): %s", old, err_name(ret));
	CHECK(a.device_bytes == GARBAGE_U64 && a.not_migrated == GARBAGE_U64,
	      "QUERY of the old size wrote past it");
out:
	svm_close(&t);
}

static const struct tap_test devmem_tests[] = {
	{ "prefetch_job_cpu", test_prefetch_job_cpu },
	{ "preferred_device", test_preferred_device },
	{ "round_trips", test_round_trips },
	{ "munmap_part", test_munmap_part },
	{ "fork_cow", test_fork_cow },
	{ "shared_and_file", test_shared_and_file },
	{ "from_va", test_from_va },
	{ "eviction", test_eviction },
	{ "exit", test_exit },
	{ "fresh_cleared", test_fresh_cleared },
	{ "errnos", test_errnos },
	{ "old_struct", test_old_struct },
	/* Last: only with coherent memory and ACCMAP_NULLB (main()). */
	{ "io_free_in_irq", test_io_free_in_irq },
};

/* Without device memory: what must fail, and that the old ABI still works. */
static const struct tap_test none_tests[] = {
	{ "errnos", test_errnos },
	{ "old_struct", test_old_struct },
};

/* ==== pages on the device across rmmod (run by the VM's init) ==== */

#define HOLD_LEN		SZ_1M
#define HOLD_UNLOAD_WAIT_MS	120000

static bool module_loaded(void)
{
	return access("/sys/module/accmap", F_OK) == 0;
}

/*
 * Places HOLD_LEN bytes on the device, closes /dev/accmap (so the module
 * can go), creates @ready, waits for the module to be unloaded, and checks
 * every byte: the unload must have brought the pages back to system memory
 * with their data.  Prints its own TAP plan and result.
 */
static int hold_across_unload(const char *ready)
{
	uint32_t *w = map_anon(HOLD_LEN, PROT_READ | PROT_WRITE);
	struct accmap_svm_op p;
	struct svm t = { .dev = -1 };
	unsigned int waited = 0;
	bool ok;
	int fd;

	printf("1..1\n");
	ok = w && svm_open(&t);
	if (ok) {
		fill_words(w, HOLD_LEN / 4, 77);
		ok = all_to_device(&t, w, HOLD_LEN, &p, "before rmmod");
	}
	svm_close(&t);
	fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	while (ok && module_loaded() && waited < HOLD_UNLOAD_WAIT_MS) {
		sleep_ms(100);
		waited += 100;
	}
	if (ok)
		ok = CHECK(!module_loaded(), "accmap still loaded after %u ms", waited) &&
		     words_are(w, HOLD_LEN / 4, 77, 0, "pages placed before rmmod");
	printf("%sok 1 pages on the device survive rmmod\n", ok ? "" : "not ");
	fflush(stdout);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("ACCMAP_DEVMEM"), *nullb;

	const char *target = getenv("ACCMAP_REPLAY_TARGET");

	ps = page_size();
	if (target && *target && strcmp(target, "sim")) {
		on_window = true;
		snprintf(devmem_name, sizeof(devmem_name), "devmem-%s", target);
		snprintf(devmem_path, sizeof(devmem_path), "%s/%s", ACCMAP_DEBUGFS_DIR,
			 devmem_name);
	}
	kind = DEVMEM_NONE;
	if (env && !strcmp(env, "private"))
		kind = DEVMEM_PRIVATE;
	else if (env && !strcmp(env, "coherent"))
		kind = DEVMEM_COHERENT;
	if (argc == 3 && !strcmp(argv[1], "--hold-across-unload"))
		return hold_across_unload(argv[2]);
	if (kind == DEVMEM_NONE)
		return tap_run(none_tests, TAP_ARRAY_SIZE(none_tests));
	nullb = getenv("ACCMAP_NULLB");
	if (kind == DEVMEM_COHERENT && nullb && strcmp(nullb, "none"))
		return tap_run(devmem_tests, TAP_ARRAY_SIZE(devmem_tests));
	return tap_run(devmem_tests, TAP_ARRAY_SIZE(devmem_tests) - 1);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * bench: accmap against the memory a user would otherwise pick, measured
 * side by side in one run.  Documentation/admin-guide/bench.rst says what
 * is measured and how to read the result.
 *
 *   1. alloc-to-usable: allocate, map, write every page, unmap, free; accmap
 *      with a warm and a cold page pool, the system dma-buf heap, udmabuf
 *      over a sealed memfd, a vgem dumb buffer exported with PRIME, a memfd,
 *      and anonymous memory (the floor);
 *   2. WRITE and READ ioctl bandwidth against memcpy() of the same bytes;
 *   3. first-touch faults of an accmap mapping against anonymous memory;
 *   4. handle operations per second with 1k, 100k and 1M live handles;
 *   5. GPUReplay's MNIST recording: import, setup and replay on the "sim"
 *      target against memcpy() of the bytes of its maps;
 *   6. shared virtual memory: a job on the "sim" target over 4 MiB of the
 *      process's own memory, its GPU entries made by GPU faults (4 KiB
 *      pages, THP), by a prefetch, or present, against the same job on a
 *      pre-mapped accmap buffer and the kernel's HMM test driver
 *      (test_hmm) reading the same bytes through hmm_range_fault();
 *   7. device memory: 4 MiB of the process's memory migrated to the "sim"
 *      target's device memory and back with PREFETCH, 4 KiB and 2 MiB per
 *      call, against test_hmm's migration ioctls on the same granules and
 *      memcpy() of the same bytes; and CPU reads of the pages there;
 *   8. checkpoint and restore: criu dump and criu restore of a process
 *      holding 1 MiB and 256 MiB in an accmap buffer, and of one holding
 *      the same bytes of anonymous memory (CRIU's own cost), against
 *      memcpy() of the bytes; skipped where ACCMAP_CRIU is empty;
 *   9. the board's GPU (ACCMAP_BOARD_GPU, a register window with
 *      interrupts: the test boards' qemu device) against the model: the
 *      MNIST replay and section 6's SVM job, cold (every page a GPU fault)
 *      and warm, on each target in turn; skipped without a board.
 *
 * Every figure is the median of repeated samples timed with
 * CLOCK_MONOTONIC; every case is run once untimed first, and the cases of
 * one size take turns, starting with another case each round, so that
 * drift hits them all alike.  A peer the kernel lacks is reported "n/a"
 * with the reason.
 *
 * All output is on stdout.  Progress lines are plain text; the report is
 * Markdown on lines starting with "@md ", and the data of the plots
 * (gnuplot format) on lines starting with "@dat ".
 * tools/accmap/bench-report.sh turns them into bench.md, bench.dat and
 * bench.png.  Exit status: 0 if every measurement that was attempted
 * worked (missed targets and absent peers included), 1 if one failed,
 * 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "accmap.h"
#include "gpureplay.h"
#include "recording.h"
#include "simdrv.h"
#include "vgem_util.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define KIB			1024UL
#define MIB			(1024UL * 1024UL)

#define REPS_MAX		201
/* The prefixes of the lines for tools/accmap/bench-report.sh. */
#define MD_PREFIX		"@md "
#define DAT_PREFIX		"@dat "
#define DMA_HEAP_PATH		"/dev/dma_heap/system"
#define UDMABUF_PATH		"/dev/udmabuf"
#define THP_PATH		"/sys/kernel/mm/transparent_hugepage/enabled"
#define CLOCKSOURCE_PATH	"/sys/devices/system/clocksource/clocksource0/current_clocksource"

/*
 * The coarsest clock the figures are worth anything with: a 4 KiB
 * allocation takes some tens of microseconds under TCG.  A guest whose
 * TSC failed calibration runs on jiffies (4 ms at HZ=250).
 */
#define CLOCK_GRANULARITY_MAX_NS	10000ULL
#define CLOCK_PROBES		20
#define MNIST_DIR_DEFAULT	"/data/gpureplay-mnist"

/* How long to wait for the pool's worker to zero what was freed. */
#define POOL_IDLE_TIMEOUT_NS	(10ULL * 1000000000ULL)
#define POOL_IDLE_POLL_US	200
/* The sleep before every timed alloc-to-usable sample (see settle()). */
#define SETTLE_SLEEP_US		1000

/* Handle operations: live handles of the three clients, ops per sample. */
#define HANDLES_SMALL		1000U
#define HANDLES_LARGE		100000U
#define HANDLES_HUGE		1000000U
#define INFO_PER_SAMPLE		2000U
#define PAIRS_PER_SAMPLE	1000U
/* FREEs of live ids per sample: a fifth of the smallest table. */
#define FREES_PER_SAMPLE	200U
#define HANDLE_SIZE		4096U
#define RNG_SEED		0x2545f4914f6cdd1dULL

static const size_t sizes[] = { 4 * KIB, 64 * KIB, 1 * MIB, 8 * MIB, 32 * MIB };
#define NSIZES			ARRAY_SIZE(sizes)
static const size_t touch_sizes[] = { 1 * MIB, 8 * MIB, 32 * MIB };
#define NTOUCH			ARRAY_SIZE(touch_sizes)

/* Repetitions per section: the whole run stays near 10 min under TCG. */
struct reps {
	unsigned int alloc_small;	/* alloc-to-usable up to 1 MiB */
	unsigned int alloc_large;	/* alloc-to-usable 8 and 32 MiB */
	unsigned int rw;
	unsigned int touch;
	unsigned int handles;
	unsigned int mnist;
	unsigned int svm;
	unsigned int devmem;
	unsigned int criu;
	unsigned int board;
};

static struct reps reps = {
	.alloc_small = 101, .alloc_large = 51, .rw = 51, .touch = 51,
	.handles = 51, .mnist = 21, .svm = 21, .devmem = 21, .criu = 5, .board = 7,
};

/* The samples of one case; err is the first error, which voids them. */
struct series {
	unsigned int n;
	int err;
	double v[REPS_MAX];
};

static bool failed;	/* some measurement failed: exit 1 */
static long page_size;

/* ---- output --------------------------------------------------------- */

__printf(1, 2) static void md(const char *fmt, ...);
__printf(1, 2) static void dat(const char *fmt, ...);
__printf(1, 2) static void progress(const char *fmt, ...);

static void md(const char *fmt, ...)
{
	va_list ap;

	fputs(MD_PREFIX, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void dat(const char *fmt, ...)
{
	va_list ap;

	fputs(DAT_PREFIX, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t start_ns;

static void progress(const char *fmt, ...)
{
	va_list ap;

	printf("bench: [%4.0f s] ", (double)(now_ns() - start_ns) / 1e9);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The smallest step CLOCK_MONOTONIC was seen to take. */
static uint64_t clock_granularity(void)
{
	uint64_t best = UINT64_MAX, t0, t1;
	unsigned int i;

	for (i = 0; i < CLOCK_PROBES; i++) {
		t0 = now_ns();
		do
			t1 = now_ns();
		while (t1 == t0);
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return best;
}

static const char *size_name(size_t size)
{
	static char buf[4][32];
	static unsigned int next;
	char *s = buf[next++ % ARRAY_SIZE(buf)];

	if (size >= MIB && size % MIB == 0)
		snprintf(s, sizeof(buf[0]), "%zu MiB", size / MIB);
	else
		snprintf(s, sizeof(buf[0]), "%zu KiB", size / KIB);
	return s;
}

/* Three significant digits or so, for a table cell. */
static const char *num(double v)
{
	static char buf[16][24];
	static unsigned int next;
	char *s = buf[next++ % ARRAY_SIZE(buf)];

	if (isnan(v))
		snprintf(s, sizeof(buf[0]), "n/a");
	else if (v >= 100 || v == 0)
		snprintf(s, sizeof(buf[0]), "%.0f", v);
	else if (v >= 10)
		snprintf(s, sizeof(buf[0]), "%.1f", v);
	else if (v >= 1)
		snprintf(s, sizeof(buf[0]), "%.2f", v);
	else
		snprintf(s, sizeof(buf[0]), "%.3f", v);
	return s;
}

static const char *ratio(double v)
{
	static char buf[16][24];
	static unsigned int next;
	char *s = buf[next++ % ARRAY_SIZE(buf)];

	if (isnan(v))
		snprintf(s, sizeof(buf[0]), "n/a");
	else
		snprintf(s, sizeof(buf[0]), "%.2fx", v);
	return s;
}

/* A number for the plot data; gnuplot skips "NaN". */
static const char *datnum(double v)
{
	static char buf[8][32];
	static unsigned int next;
	char *s = buf[next++ % ARRAY_SIZE(buf)];

	if (isnan(v))
		snprintf(s, sizeof(buf[0]), "NaN");
	else
		snprintf(s, sizeof(buf[0]), "%.4f", v);
	return s;
}

/* ---- samples ------------------------------------------------------------ */

static void series_add(struct series *s, int err, double v)
{
	if (err) {
		if (!s->err)
			s->err = err;
		failed = true;
		return;
	}
	if (s->n < REPS_MAX)
		s->v[s->n++] = v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median, or NaN if the series failed or is empty. */
static double median(const struct series *s)
{
	double v[REPS_MAX];

	if (s->err || !s->n)
		return NAN;
	memcpy(v, s->v, s->n * sizeof(v[0]));
	qsort(v, s->n, sizeof(v[0]), cmp_double);
	if (s->n % 2)
		return v[s->n / 2];
	return (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
}

static double div_or_nan(double a, double b)
{
	if (isnan(a) || isnan(b) || b == 0)
		return NAN;
	return a / b;
}

/* A table cell for a series: its median, or why there is none. */
static const char *cell(const struct series *s, double scale)
{
	static char buf[8][64];
	static unsigned int next;
	char *c = buf[next++ % ARRAY_SIZE(buf)];

	if (s->err)
		snprintf(c, sizeof(buf[0]), "failed: %s", strerror(-s->err));
	else if (!s->n)
		snprintf(c, sizeof(buf[0]), "n/a");
	else
		snprintf(c, sizeof(buf[0]), "%s", num(median(s) * scale));
	return c;
}

/* Keeps the compiler from dropping stores nobody reads. */
static void clobber(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Writes one 8-byte word in every page: the memory is usable. */
static void touch(void *p, size_t size)
{
	size_t off;

	for (off = 0; off < size; off += (size_t)page_size)
		*(uint64_t *)((char *)p + off) = off | 1;
	clobber(p);
}

static void *anon_buffer(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, size);
	return p;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* ---- the peers of alloc-to-usable ------------------------------------ */

enum peer {
	P_WARM,
	P_COLD,
	P_DEV,
	P_HEAP,
	P_UDMABUF,
	P_VGEM,
	P_MEMFD,
	P_ANON,
	P_ANON4K,
	NPEERS
};

static const char *const peer_names[NPEERS] = {
	[P_WARM] = "accmap warm",
	[P_COLD] = "accmap cold",
	[P_DEV] = "accmap warm, no dma-buf",
	[P_HEAP] = "dma-buf heap",
	[P_UDMABUF] = "udmabuf",
	[P_VGEM] = "vgem",
	[P_MEMFD] = "memfd",
	[P_ANON] = "anon (floor)",
	[P_ANON4K] = "anon, no THP",
};

/* Short names for the data file's columns. */
static const char *const peer_keys[NPEERS] = {
	[P_WARM] = "accmap_warm",
	[P_COLD] = "accmap_cold",
	[P_DEV] = "accmap_dev",
	[P_HEAP] = "dma_heap",
	[P_UDMABUF] = "udmabuf",
	[P_VGEM] = "vgem",
	[P_MEMFD] = "memfd",
	[P_ANON] = "anon",
	[P_ANON4K] = "anon_nothp",
};

/**
 * struct pool_tally - what the pool gave the timed allocations of one case
 * @hits: blocks from the pool
 * @misses: blocks from the page allocator
 * @not_ready: samples that did not start in the wanted pool state (warm:
 *             the worker had not zeroed everything in time; cold: bytes
 *             were still pooled after draining)
 */
struct pool_tally {
	uint64_t hits;
	uint64_t misses;
	unsigned int not_ready;
};

/* The steps of an accmap alloc-to-usable cycle, timed one by one. */
enum phase {
	PH_CREATE,
	PH_ALLOC,
	PH_GET_FD,
	PH_MMAP,
	PH_TOUCH,
	PH_MUNMAP,
	PH_CLOSE,
	PH_FREE,
	NPHASES
};

static const char *const phase_names[NPHASES] = {
	[PH_CREATE] = "CREATE",
	[PH_ALLOC] = "ALLOC",
	[PH_GET_FD] = "GET_FD",
	[PH_MMAP] = "mmap",
	[PH_TOUCH] = "write pages",
	[PH_MUNMAP] = "munmap",
	[PH_CLOSE] = "close dma-buf",
	[PH_FREE] = "FREE",
};

/*
 * The cases timed step by step: the accmap cases, and the dma-buf heap
 * for comparison (its ALLOC step is DMA_HEAP_IOCTL_ALLOC, which exports
 * too; it has no CREATE, GET_FD or FREE).  The accmap case without a
 * dma-buf has no CREATE, GET_FD or close either: its ALLOC step is CREATE
 * with ACCMAP_CREATE_ALLOC, and it maps /dev/accmap at the offset that
 * call returns.
 */
enum { A_WARM, A_COLD, A_DEV, A_HEAP, A_PHASED };

static const enum peer phased_peer[A_PHASED] = {
	[A_WARM] = P_WARM, [A_COLD] = P_COLD, [A_DEV] = P_DEV, [A_HEAP] = P_HEAP,
};

/*
 * Hog buffers hold the pool's blocks while a cold sample runs: at most
 * this many, each small enough that the pool hands it blocks of the one
 * order wanted (see pool_drain()).
 */
#define HOGS_MAX		65536U

struct bench {
	int accmap;
	int heap;
	int udmabuf;
	int vgem;
	bool avail[NPEERS];
	char why[NPEERS][128];
	struct series alloc[NSIZES][NPEERS];
	struct series phase[NSIZES][A_PHASED][NPHASES];
	struct pool_tally tally[NSIZES][A_HEAP];	/* the accmap cases */
	struct accmap_pool_info pool0;
	uint32_t hogs[HOGS_MAX];
	unsigned int nhogs;
};

static int map_touch_unmap(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	touch(p, size);
	return munmap(p, size) ? -errno : 0;
}

/*
 * The timed middle of every mapping case: mmap() of @fd at @off, a write
 * to every page, munmap(); @t gets the time after each of the three.
 */
static int timed_map_touch_unmap(int fd, off_t off, size_t size, uint64_t t[3])
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	int ret = 0;

	if (p == MAP_FAILED)
		ret = -errno;
	t[0] = now_ns();
	if (!ret)
		touch(p, size);
	t[1] = now_ns();
	if (p != MAP_FAILED && munmap(p, size) && !ret)
		ret = -errno;
	t[2] = now_ns();
	return ret;
}

/*
 * The timed part of both accmap cases, step by step: @ph (if not NULL)
 * gets the microseconds of each step.
 */
static int accmap_usable(struct bench *b, size_t size, struct series *ph, uint64_t *ns)
{
	uint64_t t[NPHASES + 1];
	int fd = -1, ret, ret2;
	uint32_t id = 0;
	unsigned int i;

	t[0] = now_ns();
	ret = accmap_create(b->accmap, size, &id);
	if (ret)
		return ret;
	t[PH_ALLOC] = now_ns();
	ret = accmap_alloc(b->accmap, id, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, NULL);
	t[PH_GET_FD] = now_ns();
	if (!ret)
		ret = accmap_get_fd(b->accmap, id, O_RDWR | O_CLOEXEC, &fd);
	t[PH_MMAP] = now_ns();
	/* The steps' times are only read if every step worked. */
	if (!ret)
		ret = timed_map_touch_unmap(fd, 0, size, &t[PH_TOUCH]);
	if (fd >= 0)
		close(fd);
	t[PH_FREE] = now_ns();
	ret2 = accmap_free(b->accmap, id);
	t[NPHASES] = now_ns();
	*ns = t[NPHASES] - t[0];
	if (ret || ret2)
		return ret ? ret : ret2;
	for (i = 0; ph && i < NPHASES; i++)
		series_add(&ph[i], 0, (double)(t[i + 1] - t[i]) / 1e3);
	return 0;
}

/*
 * The same without a dma-buf: one CREATE that allocates and gives the
 * offset, mmap() of /dev/accmap there, FREE (steps as accmap_usable()'s,
 * CREATE and GET_FD and close left empty).
 */
static int accmap_usable_dev(struct bench *b, size_t size, struct series *ph, uint64_t *ns)
{
	static const enum phase steps[] = { PH_ALLOC, PH_MMAP, PH_TOUCH, PH_MUNMAP, PH_FREE };
	uint64_t t[ARRAY_SIZE(steps) + 1];
	uint64_t offset = 0;
	uint32_t id = 0;
	unsigned int i;
	int ret, ret2;

	t[0] = now_ns();
	ret = accmap_create_alloc(b->accmap, size, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, &id, NULL,
				  &offset);
	if (ret)
		return ret;
	t[1] = now_ns();
	ret = timed_map_touch_unmap(b->accmap, (off_t)offset, size, &t[2]);
	ret2 = accmap_free(b->accmap, id);
	t[5] = now_ns();
	*ns = t[5] - t[0];
	if (ret || ret2)
		return ret ? ret : ret2;
	for (i = 0; ph && i < ARRAY_SIZE(steps); i++)
		series_add(&ph[steps[i]], 0, (double)(t[i + 1] - t[i]) / 1e3);
	return 0;
}

static int pool_info(struct bench *b, struct accmap_pool_info *pi)
{
	return accmap_query_pool(b->accmap, pi);
}

static uint64_t pool_dirty(const struct accmap_pool_info *pi)
{
	uint64_t dirty = 0;
	uint32_t i;

	for (i = 0; i < pi->norders && i < ACCMAP_POOL_MAX_ORDERS; i++)
		dirty += pi->orders[i].dirty;
	return dirty;
}

/* Waits until the pool's worker has zeroed every freed block. */
static int pool_wait_idle(struct bench *b)
{
	uint64_t t0 = now_ns();
	struct accmap_pool_info pi;
	int ret;

	for (;;) {
		ret = pool_info(b, &pi);
		if (ret)
			return ret;
		if (!pool_dirty(&pi))
			return 0;
		if (now_ns() - t0 > POOL_IDLE_TIMEOUT_NS)
			return -ETIMEDOUT;
		usleep(POOL_IDLE_POLL_US);
	}
}

static int pool_unhog(struct bench *b)
{
	int ret = 0, r;

	while (b->nhogs) {
		r = accmap_free(b->accmap, b->hogs[--b->nhogs]);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

/*
 * Empties the pool through the uAPI alone, by allocating every block it
 * holds into "hog" buffers that stay allocated until pool_unhog().  A
 * buffer takes pooled blocks of the largest order that fits its
 * remaining size before it asks the page allocator for that order, so
 * the blocks of order n go to buffers a little smaller than one block of
 * the next larger order: all of them come from the pool's order-n list.
 * The caller waits for the worker first (dirty blocks are not handed
 * out) and checks QUERY_POOL afterwards: *@left is what stayed pooled.
 *
 * (Writing 2 to /proc/sys/vm/drop_caches empties the pool too, through
 * its shrinker, but drops the dentry and inode caches of the whole
 * system with it, and the sample after it pays for refilling them.)
 */
static int pool_drain(struct bench *b, uint64_t *left)
{
	struct accmap_pool_info pi;
	int ret;
	uint32_t i;

	ret = pool_info(b, &pi);
	if (ret)
		return ret;
	for (i = pi.norders; i-- > 0;) {
		uint64_t bs = pi.orders[i].block_size, blocks = pi.orders[i].zeroed;
		/* Blocks per hog: as many as stay below the next order's block. */
		uint64_t per = i + 1 < pi.norders ? pi.orders[i + 1].block_size / bs - 1 : blocks;

		if (!per)
			per = 1;
		while (blocks) {
			uint64_t n = blocks < per ? blocks : per;

			if (b->nhogs == HOGS_MAX)
				return -E2BIG;
			ret = accmap_alloc_buffer(b->accmap, n * bs, ACCMAP_HEAP_MASK_SYSTEM, 0, 0,
						  &b->hogs[b->nhogs]);
			if (ret)
				return ret;
			b->nhogs++;
			blocks -= n;
		}
	}
	ret = pool_info(b, &pi);
	if (ret)
		return ret;
	*left = pi.pooled;
	return 0;
}

static void tally(struct pool_tally *t, const struct accmap_pool_info *before,
		  const struct accmap_pool_info *after)
{
	t->hits += after->hits - before->hits;
	t->misses += after->misses - before->misses;
}

/*
 * Every timed alloc-to-usable sample starts the same way: a short sleep,
 * then one untimed map, write and unmap of a page of anonymous memory.
 * The warm case has to sleep while the pool's worker zeroes what was
 * freed, and the first system calls after a pause, asleep or not, pay
 * for what the kernel put off meanwhile: measured under TCG, a 4 KiB
 * anonymous cycle takes about 70 us back to back, 190 us right after a
 * 1 ms sleep, 90 us after the sleep and one cycle.  So every case gets
 * the same past, and the clock starts after the slow first calls.  The
 * sleep also leaves the pool's worker time for blocks freed before.
 */
static void settle(void)
{
	void *p;

	usleep(SETTLE_SLEEP_US);
	p = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		touch(p, (size_t)page_size);
		munmap(p, (size_t)page_size);
	}
}

/*
 * One accmap sample: warm after an allocation of the same size was freed
 * and zeroed by the pool's worker, cold with the pool emptied.  @t and
 * @ph are NULL for the untimed warm-up.
 */
static int cycle_accmap(struct bench *b, bool cold, bool dev, size_t size, struct pool_tally *t,
			struct series *ph, uint64_t *ns)
{
	struct accmap_pool_info before, after;
	uint64_t left = 0;
	uint32_t id;
	int ret, ret2;

	if (!cold) {
		ret = accmap_alloc_buffer(b->accmap, size, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id);
		if (!ret)
			ret = accmap_free(b->accmap, id);
		if (ret)
			return ret;
	}
	ret = pool_wait_idle(b);
	if (ret == -ETIMEDOUT && t)
		t->not_ready++;
	else if (ret)
		return ret;
	if (cold) {
		ret = pool_drain(b, &left);
		if (ret)
			goto out;
		if (left && t)
			t->not_ready++;
	}

	if (t)
		settle();
	ret = pool_info(b, &before);
	if (!ret)
		ret = dev ? accmap_usable_dev(b, size, ph, ns) : accmap_usable(b, size, ph, ns);
	if (!ret)
		ret = pool_info(b, &after);
	if (!ret && t)
		tally(t, &before, &after);
out:
	ret2 = pool_unhog(b);
	return ret ? ret : ret2;
}

static int cycle_heap(struct bench *b, size_t size, struct series *ph, uint64_t *ns)
{
	struct dma_heap_allocation_data d = {
		.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	static const enum phase steps[] = { PH_ALLOC, PH_MMAP, PH_TOUCH, PH_MUNMAP, PH_CLOSE };
	uint64_t t[ARRAY_SIZE(steps) + 1];
	unsigned int i;
	int ret = 0;

	t[0] = now_ns();
	if (ioctl(b->heap, DMA_HEAP_IOCTL_ALLOC, &d))
		return -errno;
	t[1] = now_ns();
	ret = timed_map_touch_unmap((int)d.fd, 0, size, &t[2]);
	close((int)d.fd);
	t[5] = now_ns();
	*ns = t[5] - t[0];
	for (i = 0; ph && !ret && i < ARRAY_SIZE(steps); i++)
		series_add(&ph[steps[i]], 0, (double)(t[i + 1] - t[i]) / 1e3);
	return ret;
}

static int cycle_udmabuf(struct bench *b, size_t size, uint64_t *ns)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	uint64_t t0 = now_ns();
	int memfd, fd, ret = 0;

	memfd = memfd_create("bench-udmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, (off_t)size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)) {
		ret = -errno;
		goto out;
	}
	c.memfd = (uint32_t)memfd;
	fd = ioctl(b->udmabuf, UDMABUF_CREATE, &c);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = map_touch_unmap(fd, size);
	close(fd);
out:
	close(memfd);
	*ns = now_ns() - t0;
	return ret;
}

static int cycle_vgem(struct bench *b, size_t size, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	uint32_t handle;
	int fd, ret;

	/* CREATE_DUMB (rows of 4 KiB) and PRIME_HANDLE_TO_FD. */
	fd = vgem_foreign_dmabuf(b->vgem, size, &handle);
	if (fd < 0)
		return fd;
	/* The dma-buf keeps the object; the GEM handle is not needed. */
	ret = vgem_close_handle(b->vgem, handle);
	if (!ret)
		ret = map_touch_unmap(fd, size);
	close(fd);
	*ns = now_ns() - t0;
	return ret;
}

static int cycle_memfd(struct bench *b, size_t size, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	int fd, ret;

	(void)b;
	fd = memfd_create("bench-memfd", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = ftruncate(fd, (off_t)size) ? -errno : map_touch_unmap(fd, size);
	close(fd);
	*ns = now_ns() - t0;
	return ret;
}

/*
 * Anonymous memory as the system gives it (with transparent huge pages if
 * they are on), or in 4 KiB pages only (MADV_NOHUGEPAGE; a kernel without
 * THP refuses the advice, and gives 4 KiB pages anyway).
 */
static int cycle_anon(struct bench *b, size_t size, bool small_pages, uint64_t *ns)
{
	uint64_t t0 = now_ns();
	void *p;
	int ret;

	(void)b;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (small_pages)
		madvise(p, size, MADV_NOHUGEPAGE);
	touch(p, size);
	ret = munmap(p, size) ? -errno : 0;
	*ns = now_ns() - t0;
	return ret;
}

static int run_cycle(struct bench *b, enum peer p, unsigned int si, bool timed, uint64_t *ns)
{
	size_t size = sizes[si];

	/* The accmap cases prepare the pool first, then settle. */
	if (timed && p != P_WARM && p != P_COLD && p != P_DEV)
		settle();
	switch (p) {
	case P_WARM:
		return cycle_accmap(b, false, false, size, timed ? &b->tally[si][A_WARM] : NULL,
				    timed ? b->phase[si][A_WARM] : NULL, ns);
	case P_COLD:
		return cycle_accmap(b, true, false, size, timed ? &b->tally[si][A_COLD] : NULL,
				    timed ? b->phase[si][A_COLD] : NULL, ns);
	case P_DEV:
		return cycle_accmap(b, false, true, size, timed ? &b->tally[si][A_DEV] : NULL,
				    timed ? b->phase[si][A_DEV] : NULL, ns);
	case P_HEAP:
		return cycle_heap(b, size, timed ? b->phase[si][A_HEAP] : NULL, ns);
	case P_UDMABUF:
		return cycle_udmabuf(b, size, ns);
	case P_VGEM:
		return cycle_vgem(b, size, ns);
	case P_MEMFD:
		return cycle_memfd(b, size, ns);
	case P_ANON:
		return cycle_anon(b, size, false, ns);
	case P_ANON4K:
		return cycle_anon(b, size, true, ns);
	default:
		return -EINVAL;
	}
}

static void set_why(struct bench *b, enum peer p, const char *fmt, const char *what, int err)
{
	b->avail[p] = false;
	snprintf(b->why[p], sizeof(b->why[p]), fmt, what, strerror(err));
}

/* Opens every peer's device; a peer that cannot be had gets its reason. */
static void open_peers(struct bench *b)
{
	int p;

	for (p = 0; p < NPEERS; p++)
		b->avail[p] = true;

	b->heap = open(DMA_HEAP_PATH, O_RDONLY | O_CLOEXEC);
	if (b->heap < 0)
		set_why(b, P_HEAP, "%s: %s", DMA_HEAP_PATH, errno);
	b->udmabuf = open(UDMABUF_PATH, O_RDWR | O_CLOEXEC);
	if (b->udmabuf < 0)
		set_why(b, P_UDMABUF, "%s: %s", UDMABUF_PATH, errno);
	b->vgem = vgem_open();
	if (b->vgem < 0)
		set_why(b, P_VGEM, "%s: %s", "no vgem card in /dev/dri", errno);
}

static void alloc_section(struct bench *b)
{
	unsigned int si, r, k;
	uint64_t ns;
	int ret;

	for (si = 0; si < NSIZES; si++) {
		unsigned int n = sizes[si] > MIB ? reps.alloc_large : reps.alloc_small;

		progress("alloc-to-usable %s: %u rounds", size_name(sizes[si]), n);
		/* Warm-up: every case once, untimed. */
		for (k = 0; k < NPEERS; k++) {
			if (!b->avail[k])
				continue;
			ret = run_cycle(b, k, si, false, &ns);
			if (ret)
				series_add(&b->alloc[si][k], ret, 0);
		}
		for (r = 0; r < n; r++) {
			for (k = 0; k < NPEERS; k++) {
				enum peer p = (k + r) % NPEERS;

				if (!b->avail[p] || b->alloc[si][p].err)
					continue;
				ret = run_cycle(b, p, si, true, &ns);
				series_add(&b->alloc[si][p], ret, (double)ns / 1e3);
			}
		}
	}
}

/* ---- 2: WRITE and READ against memcpy -------------------------------- */

enum { RW_WRITE, RW_READ, RW_MEMCPY, RW_KINDS };

struct rw_result {
	struct series s[NSIZES][RW_KINDS];
};

static int rw_one(int dev, size_t size, struct series *s, unsigned int n)
{
	uint8_t *src = NULL, *dst = NULL;
	uint32_t id = 0;
	unsigned int r, k;
	int ret;

	src = anon_buffer(size);
	dst = anon_buffer(size);
	if (!src || !dst) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < size; i += 8)
		src[i] = (uint8_t)(i * 13 + 7);
	ret = accmap_alloc_buffer(dev, size, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id);
	if (ret)
		goto out;

	/* Warm-up, and a check that the bytes make the round trip. */
	ret = accmap_write(dev, id, 0, src, size);
	if (!ret)
		ret = accmap_read(dev, id, 0, dst, size);
	if (ret)
		goto out;
	if (memcmp(src, dst, size)) {
		fprintf(stderr, "bench: READ of %zu bytes differs from the WRITE\n", size);
		ret = -EIO;
		goto out;
	}
	memcpy(dst, src, size);
	clobber(dst);

	for (r = 0; r < n; r++) {
		for (k = 0; k < RW_KINDS; k++) {
			unsigned int kind = (k + r) % RW_KINDS;
			uint64_t t0 = now_ns();

			if (kind == RW_WRITE) {
				ret = accmap_write(dev, id, 0, src, size);
			} else if (kind == RW_READ) {
				ret = accmap_read(dev, id, 0, dst, size);
			} else {
				memcpy(dst, src, size);
				clobber(dst);
			}
			series_add(&s[kind], ret, (double)(now_ns() - t0) / 1e3);
			if (ret)
				goto out;
		}
	}
out:
	if (id)
		accmap_free(dev, id);
	if (src)
		munmap(src, size);
	if (dst)
		munmap(dst, size);
	return ret;
}

static void rw_section(int dev, struct rw_result *res)
{
	unsigned int si, k;
	int ret;

	for (si = 0; si < NSIZES; si++) {
		progress("WRITE/READ %s: %u rounds", size_name(sizes[si]), reps.rw);
		ret = rw_one(dev, sizes[si], res->s[si], reps.rw);
		if (ret)
			for (k = 0; k < RW_KINDS; k++)
				series_add(&res->s[si][k], ret, 0);
	}
}

/* ---- 3: first-touch faults --------------------------------------------- */

enum { FT_ACCMAP, FT_ANON, FT_ANON4K, FT_KINDS };

static const char *const ft_names[FT_KINDS] = {
	[FT_ACCMAP] = "accmap dma-buf",
	[FT_ANON] = "anon",
	[FT_ANON4K] = "anon, no THP",
};

struct touch_result {
	struct series us[NTOUCH][FT_KINDS];
	struct series faults[NTOUCH][FT_KINDS];
	struct series rate[NTOUCH][FT_KINDS];	/* faults per second */
	struct series bps[NTOUCH][FT_KINDS];	/* bytes per second */
};

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Maps (untimed) and touches every page (timed) of one mapping. */
static int touch_one(int dev, unsigned int kind, size_t size, double *us, double *faults)
{
	uint32_t id = 0;
	int fd = -1, ret = 0;
	uint64_t t0, t1;
	long f0, f1;
	void *p;

	if (kind == FT_ACCMAP) {
		ret = accmap_alloc_buffer(dev, size, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id);
		if (ret)
			return ret;
		ret = accmap_get_fd(dev, id, O_RDWR | O_CLOEXEC, &fd);
		if (ret)
			goto out;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && kind == FT_ANON4K)
			madvise(p, size, MADV_NOHUGEPAGE);
	}
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}

	f0 = minflt();
	t0 = now_ns();
	touch(p, size);
	t1 = now_ns();
	f1 = minflt();
	munmap(p, size);
	*us = (double)(t1 - t0) / 1e3;
	*faults = (double)(f1 - f0);
out:
	if (fd >= 0)
		close(fd);
	if (id)
		accmap_free(dev, id);
	return ret;
}

static void touch_section(int dev, struct touch_result *res)
{
	unsigned int si, r, k;
	double us, faults;
	int ret;

	for (si = 0; si < NTOUCH; si++) {
		progress("first touch %s: %u rounds", size_name(touch_sizes[si]), reps.touch);
		for (k = 0; k < FT_KINDS; k++)
			touch_one(dev, k, touch_sizes[si], &us, &faults);
		for (r = 0; r < reps.touch; r++) {
			for (k = 0; k < FT_KINDS; k++) {
				unsigned int kind = (k + r) % FT_KINDS;

				if (res->us[si][kind].err)
					continue;
				ret = touch_one(dev, kind, touch_sizes[si], &us, &faults);
				series_add(&res->us[si][kind], ret, us);
				series_add(&res->faults[si][kind], ret, faults);
				series_add(&res->rate[si][kind], ret, faults / us * 1e6);
				series_add(&res->bps[si][kind], ret,
					   (double)touch_sizes[si] / us * 1e6);
			}
		}
	}
}

/* ---- 4: handle operations ------------------------------------------------ */

enum { H_SMALL, H_LARGE, H_HUGE, H_CLIENTS };
/*
 * H_INFO_HOT: INFO on the client's first HANDLES_SMALL ids only, a working
 * set as small as the 1k client's in a table of the client's size: what
 * the table's size costs a lookup, apart from what touching that many
 * different handles costs.
 */
enum { H_INFO, H_PAIRS, H_FREE, H_INFO_HOT, H_KINDS };

static const uint32_t handle_counts[H_CLIENTS] = {
	HANDLES_SMALL, HANDLES_LARGE, HANDLES_HUGE,
};

struct handle_client {
	int fd;
	uint32_t *ids;
	uint32_t n;
};

struct handle_result {
	struct series rate[H_CLIENTS][H_KINDS];
	double create_us[H_CLIENTS];	/* filling the table, per CREATE */
	int err;
};

static uint64_t rng = RNG_SEED;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int handle_fill(struct handle_client *c, uint32_t n, double *us_per_create)
{
	uint64_t t0;
	int ret;

	c->ids = calloc(n, sizeof(*c->ids));
	if (!c->ids)
		return -ENOMEM;
	ret = accmap_open(&c->fd);
	if (ret)
		return ret;
	t0 = now_ns();
	for (c->n = 0; c->n < n; c->n++) {
		ret = accmap_create(c->fd, HANDLE_SIZE, &c->ids[c->n]);
		if (ret)
			return ret;
	}
	*us_per_create = (double)(now_ns() - t0) / 1e3 / n;
	return 0;
}

/*
 * FREE of FREES_PER_SAMPLE random live ids (distinct: drawn without
 * replacement), timed; then as many CREATEs, untimed, so that the table
 * keeps its size.  The new ids take the freed ids' places in @c->ids.
 */
static int handle_free_sample(struct handle_client *c, double *rate)
{
	unsigned int i;
	uint64_t t0;
	uint32_t tmp;
	int ret = 0;

	for (i = 0; i < FREES_PER_SAMPLE; i++) {
		uint32_t j = i + (uint32_t)(xorshift() % (c->n - i));

		tmp = c->ids[i];
		c->ids[i] = c->ids[j];
		c->ids[j] = tmp;
	}
	t0 = now_ns();
	for (i = 0; i < FREES_PER_SAMPLE && !ret; i++)
		ret = accmap_free(c->fd, c->ids[i]);
	*rate = FREES_PER_SAMPLE / ((double)(now_ns() - t0) / 1e9);
	for (i = 0; i < FREES_PER_SAMPLE && !ret; i++)
		ret = accmap_create(c->fd, HANDLE_SIZE, &c->ids[i]);
	return ret;
}

static int handle_sample(struct handle_client *c, unsigned int kind, double *rate)
{
	static uint32_t pick[INFO_PER_SAMPLE];
	struct accmap_info info;
	unsigned int i, ops;
	uint64_t t0;
	uint32_t id, from;
	int ret = 0;

	if (kind == H_FREE)
		return handle_free_sample(c, rate);
	/* The ids are drawn first: the timed loop reads the same small array. */
	from = kind == H_INFO_HOT && c->n > HANDLES_SMALL ? HANDLES_SMALL : c->n;
	for (i = 0; i < INFO_PER_SAMPLE; i++)
		pick[i] = c->ids[xorshift() % from];
	t0 = now_ns();
	if (kind == H_INFO || kind == H_INFO_HOT) {
		ops = INFO_PER_SAMPLE;
		for (i = 0; i < ops && !ret; i++)
			ret = accmap_info(c->fd, pick[i], &info);
	} else {
		ops = PAIRS_PER_SAMPLE;
		for (i = 0; i < ops && !ret; i++) {
			ret = accmap_create(c->fd, HANDLE_SIZE, &id);
			if (!ret)
				ret = accmap_free(c->fd, id);
		}
	}
	*rate = ops / ((double)(now_ns() - t0) / 1e9);
	return ret;
}

static void handle_section(struct handle_result *res)
{
	struct handle_client c[H_CLIENTS] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };
	unsigned int i, r, k;
	double rate;
	int ret = 0;

	progress("handles: creating %u, %u and %u handles in three clients", HANDLES_SMALL,
		 HANDLES_LARGE, HANDLES_HUGE);
	for (i = 0; i < H_CLIENTS && !ret; i++)
		ret = handle_fill(&c[i], handle_counts[i], &res->create_us[i]);
	if (ret) {
		res->err = ret;
		failed = true;
		goto out;
	}
	progress("handles: %u rounds of %u INFO, %u CREATE+FREE and %u FREE per client",
		 reps.handles, INFO_PER_SAMPLE, PAIRS_PER_SAMPLE, FREES_PER_SAMPLE);
	for (i = 0; i < H_CLIENTS; i++)
		for (k = 0; k < H_KINDS; k++)
			handle_sample(&c[i], k, &rate);
	for (r = 0; r < reps.handles; r++) {
		for (k = 0; k < H_CLIENTS * H_KINDS; k++) {
			unsigned int j = (k + r) % (H_CLIENTS * H_KINDS);
			unsigned int ci = j / H_KINDS, kind = j % H_KINDS;

			ret = handle_sample(&c[ci], kind, &rate);
			series_add(&res->rate[ci][kind], ret, rate);
		}
	}
out:
	for (i = 0; i < H_CLIENTS; i++) {
		if (c[i].fd >= 0)
			accmap_close(c[i].fd);
		free(c[i].ids);
	}
}

/* ---- 5: MNIST --------------------------------------------------------------- */

enum { M_IMPORT, M_OPEN, M_RUN, M_MEMCPY, M_KINDS };

struct mnist_result {
	bool absent;
	char why[1100];
	struct series ms[M_KINDS];
	struct series kernel_ms;	/* REPLAY_RUN's own elapsed_ns */
	uint64_t map_bytes;
	uint32_t maps;
	uint32_t ops;
};

static int mnist_round(int dev, const char *dir, struct mnist_result *res, void *src, void *dst,
		       bool timed)
{
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	struct accmap_replay_run run;
	struct accmap_rec_error err;
	struct gpureplay_input in;
	uint64_t t0, t1, t2, t3;
	uint32_t failed_map;
	int ret, ret2;

	t0 = now_ns();
	ret = gpureplay_load(dir, &in, &err);
	if (ret) {
		fprintf(stderr, "bench: gpureplay_load(%s): %s\n", dir, err.msg);
		return ret;
	}
	ret = gpureplay_import(&in, &rec, NULL, &err);
	gpureplay_unload(&in);
	if (ret) {
		fprintf(stderr, "bench: gpureplay_import: %s\n", err.msg);
		return ret;
	}
	t1 = now_ns();
	ret = accmap_player_open(dev, rec, NULL, &player, &failed_map);
	if (ret) {
		fprintf(stderr, "bench: accmap_player_open: %s (map %u)\n", strerror(-ret),
			failed_map);
		goto out;
	}
	t2 = now_ns();
	ret = accmap_player_run(player, NULL, NULL, &run);
	t3 = now_ns();
	if (!ret && (run.reason != ACCMAP_REPLAY_OK || run.done != rec->nr_ops))
		ret = -EIO;
	if (ret) {
		fprintf(stderr, "bench: replay: %s, reason %u, %u of %u ops\n", strerror(-ret),
			run.reason, run.done, rec->nr_ops);
		goto out;
	}
	if (!res->map_bytes) {
		for (uint32_t i = 0; i < rec->nr_maps; i++)
			res->map_bytes += rec->maps[i].length;
		res->maps = rec->nr_maps;
		res->ops = rec->nr_ops;
	}
	if (timed) {
		series_add(&res->ms[M_IMPORT], 0, (double)(t1 - t0) / 1e6);
		series_add(&res->ms[M_OPEN], 0, (double)(t2 - t1) / 1e6);
		series_add(&res->ms[M_RUN], 0, (double)(t3 - t2) / 1e6);
		series_add(&res->kernel_ms, 0, (double)run.elapsed_ns / 1e6);
	}
	if (src && dst) {
		t0 = now_ns();
		memcpy(dst, src, res->map_bytes);
		clobber(dst);
		if (timed)
			series_add(&res->ms[M_MEMCPY], 0, (double)(now_ns() - t0) / 1e6);
	}
out:
	ret2 = accmap_player_close(player);
	accmap_rec_free(rec);
	return ret ? ret : ret2;
}

static void mnist_section(int dev, const char *dir, struct mnist_result *res)
{
	static const char *const files[] = {
		GPUREPLAY_PGT, GPUREPLAY_MEM, GPUREPLAY_IO, GPUREPLAY_SYNC,
	};
	void *src = NULL, *dst = NULL;
	char path[1024];
	struct stat st;
	unsigned int i, r;
	int ret;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (stat(path, &st)) {
			res->absent = true;
			snprintf(res->why, sizeof(res->why), "%s: %s", path, strerror(errno));
			progress("MNIST skipped: %s", res->why);
			return;
		}
	}
	progress("MNIST: %u rounds of import, setup and replay", reps.mnist);
	/* The first round learns the size of the maps and warms up. */
	ret = mnist_round(dev, dir, res, NULL, NULL, false);
	if (!ret) {
		src = anon_buffer(res->map_bytes);
		dst = anon_buffer(res->map_bytes);
		if (!src || !dst)
			ret = -ENOMEM;
	}
	for (r = 0; r < reps.mnist && !ret; r++)
		ret = mnist_round(dev, dir, res, src, dst, true);
	if (ret)
		for (i = 0; i < M_KINDS; i++)
			series_add(&res->ms[i], ret, 0);
	if (src)
		munmap(src, res->map_bytes);
	if (dst)
		munmap(dst, res->map_bytes);
}

/* ---- the report ---------------------------------------------------------- */

static void md_blank(void)
{
	fputs(MD_PREFIX "\n", stdout);
}

/* A table header: the first column left-aligned, the others right. */
static void md_table(const char *const *cols, unsigned int ncols)
{
	unsigned int i;

	fputs(MD_PREFIX "|", stdout);
	for (i = 0; i < ncols; i++)
		printf(" %s |", cols[i]);
	fputs("\n" MD_PREFIX "|---|", stdout);
	for (i = 1; i < ncols; i++)
		fputs("---:|", stdout);
	putchar('\n');
}

static void md_row_begin(const char *first)
{
	printf(MD_PREFIX "| %s |", first);
}

static void md_cell(const char *text)
{
	printf(" %s |", text);
}

static void md_row_end(void)
{
	putchar('\n');
}

__printf(4, 5) static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...);

/* snprintf() at the end of @buf; stops quietly when it is full. */
static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size - 1 ? *len + (size_t)n : size - 1;
}

static void report_header(struct bench *b, uint64_t granularity)
{
	char thp[128] = "n/a", clocksource[64] = "unknown", line[256];
	struct utsname u;
	long mem_kb = 0;
	FILE *f;
	int p;

	uname(&u);
	read_line(THP_PATH, thp, sizeof(thp));
	read_line(CLOCKSOURCE_PATH, clocksource, sizeof(clocksource));
	f = fopen("/proc/meminfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %ld kB", &mem_kb) == 1)
				break;
		fclose(f);
	}

	md("# accmap benchmark");
	md_blank();
	md("Kernel %s %s, %ld CPUs, %ld MiB RAM, %ld-byte pages,", u.release, u.machine,
	   sysconf(_SC_NPROCESSORS_ONLN), mem_kb / 1024, page_size);
	md("transparent huge pages: %s.", thp);
	md("accmap page pool: cap %llu MiB, %u orders.",
	   (unsigned long long)(b->pool0.cap >> 20), b->pool0.norders);
	md("Clock: CLOCK_MONOTONIC on clocksource %s, steps of %llu ns.", clocksource,
	   (unsigned long long)granularity);
	if (granularity > CLOCK_GRANULARITY_MAX_NS) {
		md_blank();
		md("**No figures: the clock is too coarse** (steps above %llu ns).",
		   CLOCK_GRANULARITY_MAX_NS);
		md("On x86 guests this means that the TSC failed calibration and the kernel fell");
		md("back to jiffies; a kernel with ACPI (HPET, PM timer) has a reference for it.");
		return;
	}
	md_blank();
	md("Every figure is the median of repeated samples, each case run once untimed first,");
	md("the cases of a row taking turns (every alloc-to-usable sample after a %u us sleep",
	   SETTLE_SLEEP_US);
	md("and an untimed map, write and unmap of one anonymous page).");
	md("Repetitions: alloc-to-usable %u up to 1 MiB and", reps.alloc_small);
	md("%u above, WRITE/READ %u, first touch %u, handle operations %u, MNIST %u.",
	   reps.alloc_large, reps.rw, reps.touch, reps.handles, reps.mnist);
	md_blank();
	for (p = 0; p < NPEERS; p++)
		if (!b->avail[p])
			md("- %s: n/a (%s)", peer_names[p], b->why[p]);
	md_blank();
}

static void report_alloc(struct bench *b)
{
	const char *cols[1 + NPEERS];
	unsigned int si, j, ph;
	int p;

	md("## 1. Alloc-to-usable");
	md_blank();
	md("Allocate, map, write one word in every page, unmap, free; median microseconds.");
	md("accmap: CREATE, ALLOC (system heap, cached), GET_FD, mmap of the dma-buf; without a");
	md("dma-buf: CREATE with ACCMAP_CREATE_ALLOC, mmap of /dev/accmap at the offset it gave.");
	md("Warm: an allocation of the same size was freed just before, and the pool's worker");
	md("has zeroed it.  Cold: every block the pool held was allocated to other buffers");
	md("first, so the pool was empty.  Anon: private anonymous memory as the kernel gives");
	md("it (THP as configured), and with MADV_NOHUGEPAGE.");
	md_blank();
	cols[0] = "size";
	for (p = 0; p < NPEERS; p++)
		cols[1 + p] = peer_names[p];
	md_table(cols, 1 + NPEERS);
	for (si = 0; si < NSIZES; si++) {
		md_row_begin(size_name(sizes[si]));
		for (p = 0; p < NPEERS; p++)
			md_cell(b->avail[p] ? cell(&b->alloc[si][p], 1) : "n/a");
		md_row_end();
	}
	md_blank();

	for (j = 0; j < 3; j++) {
		static const enum peer accmap_cases[] = { P_WARM, P_COLD, P_DEV };
		enum peer a = accmap_cases[j];
		char names[NPEERS][48];

		md("Ratio of times, %s / peer (below 1: accmap is faster):", peer_names[a]);
		md_blank();
		for (p = P_HEAP; p < NPEERS; p++) {
			snprintf(names[p], sizeof(names[p]), "/ %s", peer_names[p]);
			cols[1 + p - P_HEAP] = names[p];
		}
		md_table(cols, 1 + NPEERS - P_HEAP);
		for (si = 0; si < NSIZES; si++) {
			md_row_begin(size_name(sizes[si]));
			for (p = P_HEAP; p < NPEERS; p++)
				md_cell(ratio(div_or_nan(median(&b->alloc[si][a]),
							 median(&b->alloc[si][p]))));
			md_row_end();
		}
		md_blank();
	}

	md("Page-pool blocks behind the timed accmap allocations (hits: from the pool,");
	md("misses: from the page allocator), and samples that did not start in the wanted");
	md("pool state:");
	md_blank();
	{
		static const char *const tcols[] = {
			"size", "warm hits", "warm misses", "cold hits", "cold misses",
			"no dma-buf hits", "no dma-buf misses", "not ready",
		};

		md_table(tcols, ARRAY_SIZE(tcols));
	}
	for (si = 0; si < NSIZES; si++) {
		struct pool_tally *w = &b->tally[si][A_WARM], *c = &b->tally[si][A_COLD];
		struct pool_tally *d = &b->tally[si][A_DEV];

		md("| %s | %llu | %llu | %llu | %llu | %llu | %llu | %u |", size_name(sizes[si]),
		   (unsigned long long)w->hits, (unsigned long long)w->misses,
		   (unsigned long long)c->hits, (unsigned long long)c->misses,
		   (unsigned long long)d->hits, (unsigned long long)d->misses,
		   w->not_ready + c->not_ready + d->not_ready);
	}
	md_blank();

	cols[0] = "size";
	for (ph = 0; ph < NPHASES; ph++)
		cols[1 + ph] = phase_names[ph];
	for (j = 0; j < A_PHASED; j++) {
		if (!b->avail[phased_peer[j]])
			continue;
		md("Where the time of %s goes: median microseconds per step (medians of each",
		   peer_names[phased_peer[j]]);
		md("step on its own: they need not add up to the whole's)%s", j == A_HEAP ?
		   "; its ALLOC is DMA_HEAP_IOCTL_ALLOC, which exports the dma-buf too:" :
		   j == A_DEV ? "; its ALLOC is CREATE with ACCMAP_CREATE_ALLOC:" : ":");
		md_blank();
		md_table(cols, 1 + NPHASES);
		for (si = 0; si < NSIZES; si++) {
			md_row_begin(size_name(sizes[si]));
			for (ph = 0; ph < NPHASES; ph++) {
				struct series *s = &b->phase[si][j][ph];

				md_cell(s->n || s->err ? cell(s, 1) : "-");
			}
			md_row_end();
		}
		md_blank();
	}

	dat("# alloc-to-usable: median microseconds per size (bytes)");
	printf(DAT_PREFIX "# size");
	for (p = 0; p < NPEERS; p++)
		printf(" %s", peer_keys[p]);
	putchar('\n');
	for (si = 0; si < NSIZES; si++) {
		printf(DAT_PREFIX "%zu", sizes[si]);
		for (p = 0; p < NPEERS; p++)
			printf(" %s", datnum(median(&b->alloc[si][p])));
		putchar('\n');
	}
	dat("%s", "");
	dat("%s", "");
}

static double gbps(size_t size, double us)
{
	return (double)size / us / 1e3;
}

static void report_rw(struct rw_result *res)
{
	static const char *const cols[] = {
		"size", "WRITE us", "READ us", "memcpy us", "WRITE GB/s", "READ GB/s",
		"memcpy GB/s", "WRITE / memcpy", "READ / memcpy",
	};
	unsigned int si;

	md("## 2. WRITE / READ against memcpy");
	md_blank();
	md("One ACCMAP_IOC_WRITE (READ) of the whole cached system-heap buffer from (to)");
	md("anonymous memory faulted in before, against memcpy() between two such buffers.");
	md("Ratios are of bandwidths (above 1: accmap is faster).");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	dat("# bandwidth: GB/s per size (bytes)");
	dat("# size write read memcpy");
	for (si = 0; si < NSIZES; si++) {
		double w = median(&res->s[si][RW_WRITE]), r = median(&res->s[si][RW_READ]);
		double m = median(&res->s[si][RW_MEMCPY]);

		md_row_begin(size_name(sizes[si]));
		md_cell(cell(&res->s[si][RW_WRITE], 1));
		md_cell(cell(&res->s[si][RW_READ], 1));
		md_cell(cell(&res->s[si][RW_MEMCPY], 1));
		md_cell(num(gbps(sizes[si], w)));
		md_cell(num(gbps(sizes[si], r)));
		md_cell(num(gbps(sizes[si], m)));
		md_cell(ratio(div_or_nan(m, w)));
		md_cell(ratio(div_or_nan(m, r)));
		md_row_end();
		dat("%zu %s %s %s", sizes[si], datnum(gbps(sizes[si], w)),
		    datnum(gbps(sizes[si], r)), datnum(gbps(sizes[si], m)));
	}
	md_blank();
	dat("%s", "");
	dat("%s", "");
}

static void report_touch(struct touch_result *res)
{
	static const char *const cols[] = {
		"size", "mapping", "faults", "us", "faults/s", "MB/s",
		"accmap / this, faults/s", "accmap / this, MB/s",
	};
	unsigned int si, k;

	md("## 3. First touch");
	md_blank();
	md("One word written in every page of a fresh mapping (made untimed) of existing");
	md("memory: an accmap dma-buf against private anonymous memory, as the kernel gives it");
	md("(THP as configured) and with MADV_NOHUGEPAGE.  Faults counted with getrusage()");
	md("ru_minflt.  Ratios are accmap's rate over the row's (above 1: accmap is faster).");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (si = 0; si < NTOUCH; si++) {
		double ra = median(&res->rate[si][FT_ACCMAP]);
		double ba = median(&res->bps[si][FT_ACCMAP]);

		for (k = 0; k < FT_KINDS; k++) {
			double r = median(&res->rate[si][k]), bps = median(&res->bps[si][k]);

			md_row_begin(size_name(touch_sizes[si]));
			md_cell(ft_names[k]);
			md_cell(cell(&res->faults[si][k], 1));
			md_cell(cell(&res->us[si][k], 1));
			md_cell(num(r));
			md_cell(num(bps / 1e6));
			md_cell(k ? ratio(div_or_nan(ra, r)) : "");
			md_cell(k ? ratio(div_or_nan(ba, bps)) : "");
			md_row_end();
		}
	}
	md_blank();
}

static void report_handles(struct handle_result *res)
{
	static const char *const cols[] = {
		"live handles", "INFO/s", "CREATE+FREE pairs/s", "FREE/s",
		"INFO/s, 1k hot ids",
	};
	unsigned int i, k;
	char name[32];

	md("## 4. Handle operations");
	md_blank();
	if (res->err) {
		md("Failed: %s.", strerror(-res->err));
		md_blank();
		return;
	}
	md("Three clients of the device, with %u, %u and %u live handles (CREATE of",
	   HANDLES_SMALL, HANDLES_LARGE, HANDLES_HUGE);
	md("%u bytes, no memory), measured in turns: INFO on random live ids (%u per sample),",
	   HANDLE_SIZE, INFO_PER_SAMPLE);
	md("CREATE+FREE pairs (%u per sample), and FREE of random live ids (%u per sample,",
	   PAIRS_PER_SAMPLE, FREES_PER_SAMPLE);
	md("created again untimed), operations per second; and INFO on the client's first");
	md("%u ids only (as many as the small client has: the table's size without the",
	   HANDLES_SMALL);
	md("larger working set of handles; not a target).");
	md("Filling the tables took %s us, %s us and %s us per CREATE.",
	   num(res->create_us[H_SMALL]), num(res->create_us[H_LARGE]),
	   num(res->create_us[H_HUGE]));
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (i = 0; i < H_CLIENTS; i++)
		md("| %u | %s | %s | %s | %s |", handle_counts[i], cell(&res->rate[i][H_INFO], 1),
		   cell(&res->rate[i][H_PAIRS], 1), cell(&res->rate[i][H_FREE], 1),
		   cell(&res->rate[i][H_INFO_HOT], 1));
	for (i = H_LARGE; i < H_CLIENTS; i++) {
		snprintf(name, sizeof(name), "ratio %uk / %uk", handle_counts[i] / 1000,
			 HANDLES_SMALL / 1000);
		md_row_begin(name);
		for (k = 0; k < H_KINDS; k++)
			md_cell(ratio(div_or_nan(median(&res->rate[i][k]),
						 median(&res->rate[H_SMALL][k]))));
		md_row_end();
	}
	md_blank();
}

static void report_mnist(struct mnist_result *res)
{
	static const char *const cols[] = { "step", "ms", "/ memcpy" };
	double mc = median(&res->ms[M_MEMCPY]);
	double setup = median(&res->ms[M_IMPORT]) + median(&res->ms[M_OPEN]);

	md("## 5. MNIST replay");
	md_blank();
	if (res->absent) {
		md("Skipped: the recording is absent (%s).", res->why);
		md_blank();
		return;
	}
	md("GPUReplay's MNIST recording (%u maps, %llu bytes mapped, %u ops) imported with",
	   res->maps, (unsigned long long)res->map_bytes, res->ops);
	md("gpureplay.c, loaded into fresh buffers with a replay session by");
	md("accmap_player_open() (CREATE, ALLOC, WRITE of the contents, REPLAY_SETUP) and");
	md("replayed on the sim target (REPLAY_RUN), against memcpy() of the mapped bytes.");
	md("Median milliseconds.");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	md("| import (user space) | %s | %s |", cell(&res->ms[M_IMPORT], 1),
	   ratio(div_or_nan(median(&res->ms[M_IMPORT]), mc)));
	md("| buffers + REPLAY_SETUP | %s | %s |", cell(&res->ms[M_OPEN], 1),
	   ratio(div_or_nan(median(&res->ms[M_OPEN]), mc)));
	md("| setup total | %s | %s |", num(setup), ratio(div_or_nan(setup, mc)));
	md("| REPLAY_RUN (wall) | %s | %s |", cell(&res->ms[M_RUN], 1),
	   ratio(div_or_nan(median(&res->ms[M_RUN]), mc)));
	md("| REPLAY_RUN (elapsed_ns) | %s | %s |", cell(&res->kernel_ms, 1),
	   ratio(div_or_nan(median(&res->kernel_ms), mc)));
	md("| memcpy of the mapped bytes | %s | 1.00x |", cell(&res->ms[M_MEMCPY], 1));
	md_blank();
}

/* ---- 6. shared virtual memory ------------------------------------------ */

/*
 * The job: C (1 x 1024) = A (1 x 1024) x B (1024 x 1024) int32, so that the
 * GPU reads B's 4 MiB once with little arithmetic: the time goes to the
 * translations and the reads, which is what differs between the cases.
 */
#define SVM_K			1024U
#define SVM_N			1024U
#define SVM_B_BYTES		((size_t)SVM_K * SVM_N * 4)
#define SVM_SMALL		(3 * 4096UL)	/* descriptor, A, C */
#define SVM_GPU_VA		0x100000ULL	/* of the pre-mapped buffer */
#define SVM_VA_BITS		48U
#define SVM_TIMEOUT_US		10000000U
#define HMM_DMIRROR_PATH	"/dev/hmm_dmirror0"

/* The kernel's lib/test_hmm_uapi.h: its READ faults in and copies pages. */
struct hmm_dmirror_cmd {
	uint64_t addr;
	uint64_t ptr;
	uint64_t npages;
	uint64_t cpages;
	uint64_t faults;
};

#define HMM_DMIRROR_READ	_IOWR('H', 0x00, struct hmm_dmirror_cmd)

enum svm_case {
	SV_PREMAPPED, SV_WARM, SV_COLD_4K, SV_WARM_THP, SV_COLD_THP, SV_PREFETCH,
	SV_AFTER_PREFETCH, SV_HMM, SV_MEMCPY, SV_KINDS
};

static const char *const svm_case_names[SV_KINDS] = {
	[SV_PREMAPPED] = "job on a pre-mapped accmap buffer",
	[SV_WARM] = "job, SVM, 4 KiB GPU entries present",
	[SV_COLD_4K] = "job, SVM, 4 KiB pages fault in",
	[SV_WARM_THP] = "job, SVM, 2 MiB GPU blocks present",
	[SV_COLD_THP] = "job, SVM, THP faults in (2 MiB blocks)",
	[SV_PREFETCH] = "SVM prefetch of the 4 MiB (4 KiB pages)",
	[SV_AFTER_PREFETCH] = "job, SVM, after that prefetch",
	[SV_HMM] = "test_hmm READ of the 4 MiB (fault in + copy)",
	[SV_MEMCPY] = "memcpy() of the 4 MiB",
};

/* Why a section was not measured, or its test_hmm rows. */
struct absence {
	bool absent;
	char why[256];
	bool hmm_absent;
	char hmm_why[256];
};

__printf(3, 4) static void set_absent(struct absence *ab, bool failure, const char *fmt, ...);

/* The section is void, for the reason @fmt says; a @failure makes the exit status 1. */
static void set_absent(struct absence *ab, bool failure, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ab->why, sizeof(ab->why), fmt, ap);
	va_end(ap);
	ab->absent = true;
	if (failure)
		failed = true;
}

/* No test_hmm: its rows say so; @prefix starts the progress line. */
static void set_hmm_absent(struct absence *ab, const char *prefix)
{
	ab->hmm_absent = true;
	snprintf(ab->hmm_why, sizeof(ab->hmm_why), "no %s: the kernel has no test_hmm",
		 HMM_DMIRROR_PATH);
	progress("%stest_hmm: n/a (%s)", prefix, ab->hmm_why);
}

/* A section's "Skipped" paragraph if it was not measured; whether it was not. */
static bool report_absent(const struct absence *ab)
{
	if (!ab->absent)
		return false;
	md("Skipped: %s.", ab->why);
	md_blank();
	return true;
}

/* Adds each of the @n samples of @v that was taken (not NaN) to its series in @s. */
static void series_add_taken(struct series *s, const double *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (!isnan(v[i]))
			series_add(&s[i], 0, v[i]);
}

/*
 * @bytes of anonymous memory, 2 MiB aligned, in huge pages or not; the
 * caller fills it.
 */
static uint8_t *aligned_region(size_t bytes, bool huge)
{
	uint8_t *p = mmap(NULL, bytes + 2 * MIB, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + 2 * MIB - 1) & ~(uintptr_t)(2 * MIB - 1);
	madvise((void *)a, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return (uint8_t *)a;
}

/*
 * An SVM session on replay target @target over as much of the address
 * space as the kernel takes: a 48-bit GPU reaches all of the user range,
 * so malloc() memory will do.  Its id in *@session.  Undone by
 * svm_session_close(), whether it worked or not.
 */
static int svm_session_open(int dev, uint32_t target, uint32_t *session)
{
	struct accmap_replay_setup setup = {
		.target = target, .format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 1,
		.va_bits = SVM_VA_BITS,
	};
	struct accmap_svm_aperture ap;
	int ret;

	/* EBUSY: another session of the bench set it up (section 9's two). */
	ret = accmap_svm_aperture_init(SVM_VA_BITS);
	if (!ret || ret == -EBUSY)
		ret = accmap_svm_aperture_info(&ap);
	if (ret)
		return ret;
	setup.svm_start = ap.start;
	setup.svm_size = ap.size;
	ret = accmap_svm_session_create(dev, &setup);
	if (!ret)
		*session = setup.session;
	return ret;
}

static void svm_session_close(int dev, uint32_t session)
{
	if (session)
		accmap_replay_destroy(dev, session);
	accmap_svm_aperture_fini();
}

struct svm_result {
	struct absence ab;
	struct series ms[SV_KINDS];
	struct series faults_4k;
	struct series faults_thp;
	bool thp;
};

/* The state of the section: two sessions, the process's memory. */
struct svm_bench {
	int dev;
	uint32_t svm_session;
	uint32_t map_session;
	uint32_t buf;
	struct simdrv_gpu gpu;
	uint8_t *desc_svm;
	int32_t *a, *c, *b4k, *bthp;
	uint8_t small[SVM_SMALL];
};

static int svm_query(struct svm_bench *sb, struct accmap_svm_op *q)
{
	return accmap_svm_query(sb->dev, sb->svm_session, q);
}

/* New attributes for @len bytes at @p: drops their GPU entries. */
static int svm_drop(struct svm_bench *sb, void *p, size_t len, uint32_t granule)
{
	return accmap_svm_set_attr(sb->dev, sb->svm_session, p, len, 0, granule,
				   ACCMAP_SVM_LOC_SYSTEM, NULL);
}

static int svm_prefetch(struct svm_bench *sb, void *p, size_t len)
{
	return accmap_svm_prefetch(sb->dev, sb->svm_session, p, len, ACCMAP_SVM_LOC_SYSTEM,
				   NULL);
}

/* Runs the chain at GPU VA @head in @session; its wall time in *@ms. */
static int svm_job(struct svm_bench *sb, uint32_t session, uint64_t head, double *ms)
{
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct simdrv_submit sub = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 1, .slot = 0, .head = head,
		.timeout_us = SVM_TIMEOUT_US,
	};
	struct accmap_replay_run run;
	uint32_t n = simdrv_build_ops(&sb->gpu, &sub, ops);
	uint64_t t0 = now_ns();
	int ret;

	ret = accmap_replay_run(sb->dev, session, ops, n, &run);
	*ms = (double)(now_ns() - t0) / 1e6;
	if (!ret && run.reason != ACCMAP_REPLAY_OK)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "bench: svm job: %s, reason %u, fault %#x at %#llx\n",
			strerror(-ret), run.reason, run.fault_status,
			(unsigned long long)run.fault_addr);
	return ret;
}

/* B: 4 MiB of anonymous memory, 2 MiB aligned, in huge pages or not. */
static int32_t *svm_region(bool huge)
{
	int32_t *b = (int32_t *)aligned_region(SVM_B_BYTES, huge);

	for (size_t i = 0; b && i < SVM_B_BYTES / 4; i++)
		b[i] = (int32_t)(i % 7) - 3;
	return b;
}

/*
 * The SVM session and a session with the buffer mapped, on the target
 * @name.  A failure voids the section: -EOPNOTSUPP is a kernel without SVM.
 */
static int svm_bench_setup(struct svm_bench *sb, const char *name, struct svm_result *res)
{
	struct accmap_replay_target_info info;
	struct accmap_replay_map map = {
		.gpu_va = SVM_GPU_VA, .length = SVM_SMALL + SVM_B_BYTES,
		.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE,
	};
	struct accmap_replay_setup msetup = {
		.nr_maps = 1, .format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 1, .va_bits = 48,
	};
	uint32_t target;
	int ret;

	ret = accmap_replay_find_target(sb->dev, name, &target, &info);
	if (ret) {
		set_absent(&res->ab, ret != -EOPNOTSUPP, "no replay target \"%s\": %s", name,
			   strerror(-ret));
		return ret;
	}
	ret = svm_session_open(sb->dev, target, &sb->svm_session);
	if (ret) {
		set_absent(&res->ab, ret != -EOPNOTSUPP, "no SVM session: %s", strerror(-ret));
		return ret;
	}
	ret = simdrv_probe(sb->dev, sb->svm_session, info.gpu_id, &sb->gpu);
	if (ret)
		goto err;

	/* The same job on accmap memory mapped at setup, the usual way. */
	ret = accmap_alloc_buffer(sb->dev, SVM_SMALL + SVM_B_BYTES, ACCMAP_HEAP_MASK_SYSTEM, 0,
				  0, &sb->buf);
	if (ret)
		goto err;
	map.id = sb->buf;
	msetup.target = target;
	msetup.maps = (uintptr_t)&map;
	ret = accmap_replay_setup(sb->dev, &msetup);
	if (ret)
		goto err;
	sb->map_session = msetup.session;
	return 0;
err:
	set_absent(&res->ab, ret != -EOPNOTSUPP, "setup: %s", strerror(-ret));
	return ret;
}

/* Writes the descriptors: one in the process's memory, one in the buffer. */
static int svm_bench_jobs(struct svm_bench *sb, const int32_t *b)
{
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = 1, .n = SVM_N, .k = SVM_K,
		.a = (uintptr_t)sb->a, .b = (uintptr_t)b, .c = (uintptr_t)sb->c,
	};
	int ret;

	simdrv_encode_job(sb->desc_svm, &job, 0);
	memset(sb->small, 0, sizeof(sb->small));
	job.a = SVM_GPU_VA + 4096;
	job.c = SVM_GPU_VA + 2 * 4096;
	job.b = SVM_GPU_VA + SVM_SMALL;
	simdrv_encode_job(sb->small, &job, 0);
	memcpy(sb->small + 4096, sb->a, SVM_K * 4);
	ret = accmap_write(sb->dev, sb->buf, 0, sb->small, sizeof(sb->small));
	if (!ret)
		ret = accmap_write(sb->dev, sb->buf, SVM_SMALL, b, SVM_B_BYTES);
	return ret;
}

/*
 * The job on @b with its GPU entries dropped first (SET_ATTR with
 * @granule): its time in *@ms, the GPU faults it took added to @faults.
 */
static int svm_cold(struct svm_bench *sb, int32_t *b, uint32_t granule, bool timed,
		    double *ms, struct series *faults)
{
	struct accmap_svm_op q0, q1;
	int ret;

	ret = svm_bench_jobs(sb, b);
	if (!ret)
		ret = svm_drop(sb, b, SVM_B_BYTES, granule);
	if (!ret)
		ret = svm_query(sb, &q0);
	if (!ret)
		ret = svm_job(sb, sb->svm_session, (uintptr_t)sb->desc_svm, ms);
	if (!ret)
		ret = svm_query(sb, &q1);
	if (!ret && timed)
		series_add(faults, 0, (double)(q1.faults - q0.faults));
	return ret;
}

/* One round of every case, in an order that starts elsewhere each time. */
static int svm_round(struct svm_bench *sb, struct svm_result *res, unsigned int r,
		     bool timed, void *dst)
{
	double ms[SV_KINDS];
	uint64_t t0;
	int ret = 0, fd;

	for (unsigned int k = 0; k < 4 && !ret; k++) {
		switch ((k + r) % 4) {
		case 0:
			ret = svm_job(sb, sb->map_session, SVM_GPU_VA, &ms[SV_PREMAPPED]);
			break;
		case 1:
			ret = svm_cold(sb, sb->b4k, 12, timed, &ms[SV_COLD_4K], &res->faults_4k);
			if (!ret)
				ret = svm_job(sb, sb->svm_session, (uintptr_t)sb->desc_svm,
					      &ms[SV_WARM]);
			break;
		case 2:
			ret = svm_cold(sb, sb->bthp, 21, timed, &ms[SV_COLD_THP],
				       &res->faults_thp);
			if (!ret)
				ret = svm_job(sb, sb->svm_session, (uintptr_t)sb->desc_svm,
					      &ms[SV_WARM_THP]);
			break;
		case 3:
			ret = svm_bench_jobs(sb, sb->b4k);
			if (!ret)
				ret = svm_drop(sb, sb->b4k, SVM_B_BYTES, 12);
			t0 = now_ns();
			if (!ret)
				ret = svm_prefetch(sb, sb->b4k, SVM_B_BYTES);
			ms[SV_PREFETCH] = (double)(now_ns() - t0) / 1e6;
			if (!ret)
				ret = svm_job(sb, sb->svm_session, (uintptr_t)sb->desc_svm,
					      &ms[SV_AFTER_PREFETCH]);
			break;
		}
	}
	if (ret)
		return ret;

	/* A fresh mirror each time: test_hmm's entries made from nothing. */
	ms[SV_HMM] = NAN;
	fd = open(HMM_DMIRROR_PATH, O_RDWR);
	if (fd >= 0) {
		struct hmm_dmirror_cmd cmd = {
			.addr = (uintptr_t)sb->b4k, .ptr = (uintptr_t)dst,
			.npages = SVM_B_BYTES / (size_t)page_size,
		};

		t0 = now_ns();
		ret = ioctl(fd, HMM_DMIRROR_READ, &cmd) ? -errno : 0;
		ms[SV_HMM] = (double)(now_ns() - t0) / 1e6;
		close(fd);
		if (ret) {
			fprintf(stderr, "bench: test_hmm READ: %s\n", strerror(-ret));
			return ret;
		}
	}
	t0 = now_ns();
	memcpy(dst, sb->b4k, SVM_B_BYTES);
	clobber(dst);
	ms[SV_MEMCPY] = (double)(now_ns() - t0) / 1e6;

	if (timed)
		series_add_taken(res->ms, ms, SV_KINDS);
	return 0;
}

/* Whether @p's region got huge pages, from /proc/self/smaps. */
static bool svm_has_thp(const void *p)
{
	char line[256];
	bool in = false, huge = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 && kb)
			huge = true;
	}
	fclose(f);
	return huge;
}

static void svm_section(int dev, struct svm_result *res)
{
	struct svm_bench sb = { .dev = dev };
	void *dst = NULL;
	int ret;

	progress("svm: setting up");
	sb.desc_svm = aligned_alloc(4096, 4096);
	sb.a = aligned_alloc(4096, SVM_K * 4);
	sb.c = aligned_alloc(4096, SVM_N * 4);
	sb.b4k = svm_region(false);
	sb.bthp = svm_region(true);
	dst = anon_buffer(SVM_B_BYTES);
	if (!sb.desc_svm || !sb.a || !sb.c || !sb.b4k || !sb.bthp || !dst) {
		set_absent(&res->ab, true, "out of memory");
		goto out;
	}
	for (unsigned int i = 0; i < SVM_K; i++)
		sb.a[i] = (int32_t)(i % 5) - 2;
	res->thp = svm_has_thp(sb.bthp);
	if (access(HMM_DMIRROR_PATH, R_OK | W_OK))
		set_hmm_absent(&res->ab, "");
	ret = svm_bench_setup(&sb, SIMDRV_TARGET, res);
	if (ret)
		goto out;
	ret = svm_bench_jobs(&sb, sb.b4k);
	if (!ret)
		ret = svm_round(&sb, res, 0, false, dst);
	for (unsigned int r = 0; !ret && r < reps.svm; r++) {
		progress("svm: round %u of %u", r + 1, reps.svm);
		ret = svm_round(&sb, res, r, true, dst);
	}
	if (ret)
		set_absent(&res->ab, true, "a round failed: %s", strerror(-ret));
out:
	if (sb.map_session)
		accmap_replay_destroy(dev, sb.map_session);
	if (sb.buf)
		accmap_free(dev, sb.buf);
	svm_session_close(dev, sb.svm_session);
	free(sb.desc_svm);
	free(sb.a);
	free(sb.c);
	if (dst)
		munmap(dst, SVM_B_BYTES);
}

static void report_svm(struct svm_result *res)
{
	static const char *const cols[] = { "case", "ms", "/ pre-mapped" };
	double pre = median(&res->ms[SV_PREMAPPED]), warm = median(&res->ms[SV_WARM]);
	double warmthp = median(&res->ms[SV_WARM_THP]);
	double pages = (double)SVM_B_BYTES / (double)page_size;
	double cold4k = median(&res->ms[SV_COLD_4K]), coldthp = median(&res->ms[SV_COLD_THP]);
	double hmm = median(&res->ms[SV_HMM]), mc = median(&res->ms[SV_MEMCPY]);

	md("## 6. Shared virtual memory");
	md_blank();
	if (report_absent(&res->ab))
		return;
	md("One job on the sim target, C (1 x %u) = A (1 x %u) x B (%u x %u) int32: the GPU reads",
	   SVM_N, SVM_K, SVM_K, SVM_N);
	md("B's 4 MiB once.  In an SVM session B is the process's own anonymous memory (written");
	md("by the CPU first); its GPU entries are dropped before each cold run (SET_ATTR), so");
	md("the run takes the GPU faults.  THP: %s.  Median milliseconds of the whole",
	   res->thp ? "B's region is in huge pages (smaps AnonHugePages)" :
		      "the kernel gave B's region no huge page: that row is 4 KiB pages too");
	md("REPLAY_RUN (setup ops included, the same in every job row).");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (unsigned int i = 0; i < SV_KINDS; i++) {
		if (i == SV_HMM && res->ab.hmm_absent) {
			md("| %s | n/a (%s) | |", svm_case_names[i], res->ab.hmm_why);
			continue;
		}
		md("| %s | %s | %s |", svm_case_names[i], cell(&res->ms[i], 1),
		   ratio(div_or_nan(median(&res->ms[i]), pre)));
	}
	md_blank();
	md("GPU faults per cold run: %s (4 KiB granule), %s (THP, 2 MiB granule).",
	   num(median(&res->faults_4k)), num(median(&res->faults_thp)));
	md("Fault service rate, the %s pages of B over the cold run's extra time against",
	   num(pages));
	md("the same run with the entries present: **%s pages/s** with 4 KiB pages, **%s pages/s**",
	   num(pages / ((cold4k - warm) / 1e3)), num(pages / ((coldthp - warmthp) / 1e3)));
	md("with THP;");
	md("prefetch: **%s pages/s**.", num(pages / (median(&res->ms[SV_PREFETCH]) / 1e3)));
	if (!res->ab.hmm_absent)
		md("test_hmm fills its mirror of the same pages and copies them at %s pages/s",
		   num(pages / (hmm / 1e3)));
	if (!res->ab.hmm_absent)
		md("(its copy alone is memcpy's %s ms): cold 4 KiB SVM / test_hmm = %s.", num(mc),
		   ratio(div_or_nan(cold4k - warm, hmm)));
	md_blank();
}

/* ---- 7. device memory: migration each way ------------------------------- */

#define DM_BYTES		(4 * MIB)
#define DEVMEM_DEBUGFS		"/sys/kernel/debug/accmap/devmem"

/* lib/test_hmm_uapi.h: migrate npages at addr; TO_DEV copies them to ptr too. */
#define HMM_DMIRROR_MIGRATE_TO_DEV	_IOWR('H', 0x02, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_MIGRATE_TO_SYS	_IOWR('H', 0x03, struct hmm_dmirror_cmd)

/* The migration cases, each timed with a small and a 2 MiB granule. */
enum dm_case { DM_ACC_DEV, DM_ACC_SYS, DM_HMM_DEV, DM_HMM_SYS, DM_CASES };
enum { DG_SMALL, DG_2M, DG_KINDS };

static const char *const dm_case_names[DM_CASES] = {
	[DM_ACC_DEV] = "accmap PREFETCH to DEVICE",
	[DM_ACC_SYS] = "accmap PREFETCH to SYSTEM",
	[DM_HMM_DEV] = "test_hmm MIGRATE_TO_DEV",
	[DM_HMM_SYS] = "test_hmm MIGRATE_TO_SYS",
};

struct dm_result {
	struct absence ab;
	char kind[64];
	uint64_t total;
	size_t granule[DG_KINDS];
	struct series ms[DG_KINDS][DM_CASES];
	struct series memcpy_ms;
	struct series acc_cpu_ms;	/* CPU reads of the accmap region on the device */
	struct series hmm_cpu_ms;	/* the same on test_hmm's device memory */
	struct accmap_svm_op q0, q1;	/* the session's counters before and after */
};

/* The state of the section: a session, two regions, test_hmm's mirror. */
struct dm_bench {
	int dev;
	int hmm;
	uint32_t session;
	uint8_t *acc;	/* accmap's region */
	uint8_t *hb;	/* test_hmm's region */
	uint8_t *ref;	/* what both hold */
	uint8_t *dst;	/* memcpy()'s and test_hmm's copies */
};

/* 4 MiB of anonymous memory in 4 KiB pages, 2 MiB aligned, holding @ref. */
static uint8_t *dm_region(const uint8_t *ref)
{
	uint8_t *p = aligned_region(DM_BYTES, false);

	if (p)
		memcpy(p, ref, DM_BYTES);
	return p;
}

/*
 * accmap: the region to @location, @granule bytes per call; the time in
 * *@ms.  Every page must have moved (-EIO otherwise).
 */
static int dm_accmap(struct dm_bench *db, uint32_t location, size_t granule, double *ms)
{
	uint64_t pages = DM_BYTES / (uint64_t)page_size, moved, t0;
	struct accmap_svm_op q0, q1;
	int ret;

	ret = accmap_svm_query(db->dev, db->session, &q0);
	if (ret)
		return ret;
	t0 = now_ns();
	for (size_t off = 0; off < DM_BYTES && !ret; off += granule)
		ret = accmap_svm_prefetch(db->dev, db->session, db->acc + off, granule, location,
					  NULL);
	*ms = (double)(now_ns() - t0) / 1e6;
	if (!ret)
		ret = accmap_svm_query(db->dev, db->session, &q1);
	if (ret)
		return ret;
	moved = location == ACCMAP_SVM_LOC_DEVICE ? q1.to_device - q0.to_device :
						    q1.to_system - q0.to_system;
	if (moved != pages) {
		fprintf(stderr, "bench: devmem: %llu of %llu pages to %s (%llu not migrated)\n",
			(unsigned long long)moved, (unsigned long long)pages,
			location == ACCMAP_SVM_LOC_DEVICE ? "DEVICE" : "SYSTEM",
			(unsigned long long)(q1.not_migrated - q0.not_migrated));
		return -EIO;
	}
	return 0;
}

/* test_hmm: its region to device memory or back, @granule bytes per call. */
static int dm_hmm(struct dm_bench *db, bool to_dev, size_t granule, double *ms)
{
	uint64_t pages = DM_BYTES / (uint64_t)page_size, moved = 0, t0;
	int ret = 0;

	t0 = now_ns();
	for (size_t off = 0; off < DM_BYTES && !ret; off += granule) {
		struct hmm_dmirror_cmd cmd = {
			.addr = (uintptr_t)(db->hb + off), .ptr = (uintptr_t)(db->dst + off),
			.npages = granule / (size_t)page_size,
		};

		ret = ioctl(db->hmm, to_dev ? HMM_DMIRROR_MIGRATE_TO_DEV :
					      HMM_DMIRROR_MIGRATE_TO_SYS, &cmd) ? -errno : 0;
		moved += cmd.cpages;
	}
	*ms = (double)(now_ns() - t0) / 1e6;
	if (ret) {
		fprintf(stderr, "bench: devmem: test_hmm MIGRATE_TO_%s: %s\n",
			to_dev ? "DEV" : "SYS", strerror(-ret));
		return ret;
	}
	if (moved != pages) {
		fprintf(stderr, "bench: devmem: test_hmm moved %llu of %llu pages to %s\n",
			(unsigned long long)moved, (unsigned long long)pages,
			to_dev ? "the device" : "the system");
		return -EIO;
	}
	return 0;
}

/* Reads one word of every page of @p: CPU access to all of it. */
static double dm_cpu_read(const uint8_t *p)
{
	uint64_t sum = 0, t0 = now_ns();

	/* The reads stay: clobber() makes the sum, and so each word, needed. */
	for (size_t off = 0; off < DM_BYTES; off += (size_t)page_size)
		sum += *(const uint64_t *)(p + off);
	clobber(&sum);
	return (double)(now_ns() - t0) / 1e6;
}

/* One round: every case, starting with another one each time. */
static int dm_round(struct dm_bench *db, struct dm_result *res, unsigned int r, bool timed)
{
	double t[DG_KINDS][DM_CASES], mc = NAN, acc_cpu = NAN, hmm_cpu = NAN, dummy;
	struct accmap_svm_op q;
	int ret = 0;
	uint64_t t0;

	for (unsigned int g = 0; g < DG_KINDS; g++)
		for (unsigned int c = 0; c < DM_CASES; c++)
			t[g][c] = NAN;
	for (unsigned int k = 0; k < 7 && !ret; k++) {
		unsigned int g = (k + r) % 7 % 2;

		switch ((k + r) % 7) {
		case 0:
		case 1:
			ret = dm_accmap(db, ACCMAP_SVM_LOC_DEVICE, res->granule[g],
					&t[g][DM_ACC_DEV]);
			if (!ret)
				ret = dm_accmap(db, ACCMAP_SVM_LOC_SYSTEM, res->granule[g],
						&t[g][DM_ACC_SYS]);
			break;
		case 2:
		case 3:
			if (db->hmm < 0)
				break;
			ret = dm_hmm(db, true, res->granule[g], &t[g][DM_HMM_DEV]);
			if (!ret)
				ret = dm_hmm(db, false, res->granule[g], &t[g][DM_HMM_SYS]);
			break;
		case 4:
			t0 = now_ns();
			memcpy(db->dst, db->acc, DM_BYTES);
			clobber(db->dst);
			mc = (double)(now_ns() - t0) / 1e6;
			break;
		case 5:
			/* Private: each page faults back; coherent: read in place. */
			ret = dm_accmap(db, ACCMAP_SVM_LOC_DEVICE, 2 * MIB, &dummy);
			if (!ret)
				acc_cpu = dm_cpu_read(db->acc);
			if (!ret)
				ret = accmap_svm_prefetch(db->dev, db->session, db->acc, DM_BYTES,
							  ACCMAP_SVM_LOC_SYSTEM, &q);
			if (!ret && q.device_bytes)
				ret = -EIO;
			break;
		case 6:
			if (db->hmm < 0)
				break;
			ret = dm_hmm(db, true, 2 * MIB, &dummy);
			if (!ret)
				hmm_cpu = dm_cpu_read(db->hb);
			break;
		}
	}
	if (ret)
		return ret;
	/* Every byte where it was, after all that moving. */
	if (memcmp(db->acc, db->ref, DM_BYTES) || (db->hmm >= 0 && memcmp(db->hb, db->ref,
									  DM_BYTES))) {
		fprintf(stderr, "bench: devmem: the data changed on the way\n");
		return -EIO;
	}
	if (!timed)
		return 0;
	for (unsigned int g = 0; g < DG_KINDS; g++)
		series_add_taken(res->ms[g], t[g], DM_CASES);
	series_add(&res->memcpy_ms, 0, mc);
	series_add(&res->acc_cpu_ms, 0, acc_cpu);
	if (!isnan(hmm_cpu))
		series_add(&res->hmm_cpu_ms, 0, hmm_cpu);
	return 0;
}

static void dm_section(int dev, struct dm_result *res)
{
	struct dm_bench db = { .dev = dev, .hmm = -1 };
	struct accmap_replay_target_info info;
	struct accmap_heap_info dm;
	uint32_t target;
	char line[64];
	int ret;

	progress("devmem: setting up");
	res->granule[DG_SMALL] = (size_t)page_size;
	res->granule[DG_2M] = 2 * MIB;
	ret = accmap_device_memory(dev, &dm);
	if (ret) {
		set_absent(&res->ab, ret != -ENODEV, "no device memory (QUERY_HEAP of heap %d: %s)",
			   ACCMAP_HEAP_DEVICE, strerror(-ret));
		progress("devmem: skipped: %s", res->ab.why);
		return;
	}
	res->total = dm.total;
	snprintf(res->kind, sizeof(res->kind), "kind not in debugfs");
	if (!read_line(DEVMEM_DEBUGFS, line, sizeof(line)) && !strncmp(line, "kind\t", 5))
		snprintf(res->kind, sizeof(res->kind), "%s", line + 5);

	db.ref = malloc(DM_BYTES);
	if (db.ref)
		for (size_t i = 0; i < DM_BYTES / 4; i++)
			((uint32_t *)db.ref)[i] = (uint32_t)(i * 2654435761U);
	db.acc = db.ref ? dm_region(db.ref) : NULL;
	db.hb = db.ref ? dm_region(db.ref) : NULL;
	db.dst = anon_buffer(DM_BYTES);
	if (!db.ref || !db.acc || !db.hb || !db.dst) {
		set_absent(&res->ab, true, "out of memory");
		goto out;
	}
	db.hmm = open(HMM_DMIRROR_PATH, O_RDWR | O_CLOEXEC);
	if (db.hmm < 0)
		set_hmm_absent(&res->ab, "devmem: ");
	ret = accmap_replay_find_target(dev, SIMDRV_TARGET, &target, &info);
	if (!ret)
		ret = svm_session_open(dev, target, &db.session);
	if (!ret)
		ret = accmap_svm_query(dev, db.session, &res->q0);
	if (ret) {
		set_absent(&res->ab, true, "no SVM session: %s", strerror(-ret));
		goto out;
	}
	ret = dm_round(&db, res, 0, false);
	for (unsigned int r = 0; !ret && r < reps.devmem; r++) {
		progress("devmem: round %u of %u", r + 1, reps.devmem);
		ret = dm_round(&db, res, r, true);
	}
	if (!ret)
		ret = accmap_svm_query(dev, db.session, &res->q1);
	if (ret)
		set_absent(&res->ab, true, "a round failed: %s", strerror(-ret));
out:
	svm_session_close(dev, db.session);
	if (db.hmm >= 0)
		close(db.hmm);
	if (db.acc)
		munmap(db.acc, DM_BYTES);
	if (db.hb)
		munmap(db.hb, DM_BYTES);
	if (db.dst)
		munmap(db.dst, DM_BYTES);
	free(db.ref);
}

/* MB/s of DM_BYTES in @ms milliseconds. */
static double dm_mbps(double ms)
{
	return div_or_nan((double)DM_BYTES / 1e6, ms / 1e3);
}

static void report_devmem(struct dm_result *res)
{
	static const char *const cols[] = {
		"case", "ms", "MB/s", "/ memcpy", "ms (2 MiB)", "MB/s (2 MiB)", "/ memcpy (2 MiB)",
	};
	double mc = median(&res->memcpy_ms);
	const struct accmap_svm_op *q0 = &res->q0, *q1 = &res->q1;

	md("## 7. Device memory: migration");
	md_blank();
	if (report_absent(&res->ab))
		return;
	md("4 MiB of the process's anonymous memory (4 KiB pages, MADV_NOHUGEPAGE, written by the");
	md("CPU first) migrated to the sim target's device memory (%s, %llu MiB) and back, one",
	   res->kind, (unsigned long long)(res->total >> 20));
	md("granule per call (%s, then 2 MiB): ACCMAP_IOC_SVM PREFETCH of each granule to",
	   size_name(res->granule[DG_SMALL]));
	md("DEVICE, then to SYSTEM (each also maps the granule for the GPU), against the kernel's");
	md("test_hmm HMM_DMIRROR_MIGRATE_TO_DEV / _TO_SYS of the same granules of another such");
	md("region (%s, device-private memory; its TO_DEV also copies the pages out to check",
	   HMM_DMIRROR_PATH);
	md("them), and memcpy() of the 4 MiB.  Median milliseconds for the whole 4 MiB;");
	md("\"/ memcpy\" is time over memcpy's.  Every page must move each time, and every byte");
	md("is compared after each round.");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (unsigned int c = 0; c < DM_CASES; c++) {
		md_row_begin(dm_case_names[c]);
		for (unsigned int g = 0; g < DG_KINDS; g++) {
			double v = median(&res->ms[g][c]);

			if ((c == DM_HMM_DEV || c == DM_HMM_SYS) && res->ab.hmm_absent) {
				md_cell("n/a");
				md_cell("");
				md_cell("");
				continue;
			}
			md_cell(cell(&res->ms[g][c], 1));
			md_cell(num(dm_mbps(v)));
			md_cell(ratio(div_or_nan(v, mc)));
		}
		md_row_end();
	}
	md("| memcpy() of the 4 MiB | %s | %s | 1.00x | | | |", cell(&res->memcpy_ms, 1),
	   num(dm_mbps(mc)));
	md("| CPU reads a word per page on the device, accmap | %s | %s | %s | | | |",
	   cell(&res->acc_cpu_ms, 1), num(dm_mbps(median(&res->acc_cpu_ms))),
	   ratio(div_or_nan(median(&res->acc_cpu_ms), mc)));
	if (res->ab.hmm_absent)
		md("| CPU reads a word per page on the device, test_hmm | n/a | | | | | |");
	else
		md("| CPU reads a word per page on the device, test_hmm | %s | %s | %s | | | |",
		   cell(&res->hmm_cpu_ms, 1), num(dm_mbps(median(&res->hmm_cpu_ms))),
		   ratio(div_or_nan(median(&res->hmm_cpu_ms), mc)));
	md_blank();
	if (!res->ab.hmm_absent) {
		for (unsigned int g = 0; g < DG_KINDS; g++)
			md("accmap / test_hmm time, %s granule: to the device %s, back %s.",
			   size_name(res->granule[g]),
			   ratio(div_or_nan(median(&res->ms[g][DM_ACC_DEV]),
					    median(&res->ms[g][DM_HMM_DEV]))),
			   ratio(div_or_nan(median(&res->ms[g][DM_ACC_SYS]),
					    median(&res->ms[g][DM_HMM_SYS]))));
	}
	md("A CPU read of a page on %s device memory %s.", res->kind,
	   !strcmp(res->kind, "coherent") ? "reads it in place (nothing migrates)" :
	   "faults it back to system memory (test_hmm's: the same, through its migrate_to_ram)");
	md("The session's counters over the section: %llu pages to the device, %llu back (%llu on",
	   (unsigned long long)(q1->to_device - q0->to_device),
	   (unsigned long long)(q1->to_system - q0->to_system),
	   (unsigned long long)(q1->cpu_faults - q0->cpu_faults));
	md("CPU faults, %llu evicted), %llu not migrated.",
	   (unsigned long long)(q1->evictions - q0->evictions),
	   (unsigned long long)(q1->not_migrated - q0->not_migrated));
	md_blank();
}

/* ---- 8. checkpoint and restore with CRIU --------------------------------- */

/*
 * A process holding CR_SIZES[i] bytes, in accmap buffers of the system heap
 * mapped through /dev/accmap or in anonymous memory, written with a
 * pattern, dumped with "criu dump" (which ends it) and restored with
 * "criu restore -d".  The process is this program run again as
 * "bench --criu-app DIR KIND BYTES" (see criu_app()); its images go to
 * DIR on the guest's /tmp (tmpfs: they take as much memory again).
 */
#define CR_APP_ARG		"--criu-app"
#define CR_TIMEOUT_MS		120000
#define CR_SEED			0x9e3779b97f4a7c15ULL

enum cr_kind { CR_ACCMAP, CR_ANON, CR_KINDS };

static const char *const cr_kind_args[CR_KINDS] = { "accmap", "anon" };
static const char *const cr_kind_names[CR_KINDS] = {
	[CR_ACCMAP] = "accmap buffer (system heap, mapped through /dev/accmap)",
	[CR_ANON] = "anonymous memory (CRIU's own baseline)",
};

static const size_t cr_sizes[] = { 1 * MIB, 256 * MIB };

#define CR_NSIZES		ARRAY_SIZE(cr_sizes)

struct criu_result {
	struct absence ab;
	const char *criu;
	struct series dump_ms[CR_NSIZES][CR_KINDS];
	struct series restore_ms[CR_NSIZES][CR_KINDS];
	struct series memcpy_ms[CR_NSIZES];
	char checked[CR_NSIZES][CR_KINDS][160];	/* what the restored process said */
};

/* The pattern of word @i. */
static uint64_t cr_word(size_t i)
{
	return (i + 1) * CR_SEED;
}

static void cr_touch(const char *dir, const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * The checkpointed process: fills its memory, says "ready", waits for
 * SIGUSR1 (the restored process gets it; the dumped one never does), then
 * checks every word and writes what it found to DIR/result.
 */
static int criu_app(int argc, char **argv)
{
	const char *dir;
	uint64_t *p = NULL, *want;
	size_t size, words, bad = 0, first = 0;
	uint32_t id = 0;
	char line[160];
	sigset_t set;
	int dev = -1, ret, sig;
	bool accmap;

	if (argc != 5)
		return 2;
	dir = argv[2];
	accmap = !strcmp(argv[3], cr_kind_args[CR_ACCMAP]);
	size = strtoull(argv[4], NULL, 10);
	words = size / sizeof(uint64_t);
	/* Blocked, and taken with sigwait(): it waits across the dump and restore. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (accmap) {
		ret = accmap_open(&dev);
		if (!ret)
			ret = accmap_alloc_buffer(dev, size, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id);
		if (!ret)
			ret = accmap_map_id(dev, id, size, PROT_READ | PROT_WRITE, (void **)&p);
		if (ret) {
			fprintf(stderr, "criu app: accmap buffer: %s\n", strerror(-ret));
			return 1;
		}
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("criu app: mmap");
			return 1;
		}
	}
	for (size_t i = 0; i < words; i++)
		p[i] = cr_word(i);
	want = p;
	snprintf(line, sizeof(line), "id %u at %p\n", id, (void *)p);
	cr_touch(dir, "ready", line);
	while (sigwait(&set, &sig) || sig != SIGUSR1)
		;
	/* After the restore: the same address (kept in our memory), the same words. */
	for (size_t i = 0; i < words; i++)
		if (want[i] != cr_word(i) && !bad++)
			first = i * sizeof(uint64_t);
	/* And the buffer is still this client's id, of its size. */
	if (accmap) {
		struct accmap_info info;

		ret = accmap_info(dev, id, &info);
		if (ret || info.size != size) {
			snprintf(line, sizeof(line), "bad: id %u after the restore: %s, %llu B\n",
				 id, ret ? strerror(-ret) : "there",
				 ret ? 0ULL : (unsigned long long)info.size);
			cr_touch(dir, "result", line);
			return 1;
		}
	}
	if (bad)
		snprintf(line, sizeof(line),
			 "bad: %zu of %zu words differ, the first at byte %zu\n",
			 bad, words, first);
	else
		snprintf(line, sizeof(line), "ok: every byte of %s at %p%s\n", size_name(size),
			 (void *)want, accmap ? ", id and size kept" : "");
	cr_touch(dir, "result", line);
	return bad ? 1 : 0;
}

/* Runs a shell command line; its exit status, -1 if it was not run or died. */
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

/* Waits for DIR/@name; reads its first line into @buf. */
static bool cr_wait_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (unsigned int ms = 0; ms < CR_TIMEOUT_MS; ms += 10) {
		if (!read_line(path, buf, len))
			return true;
		usleep(10000);
	}
	return false;
}

/* Reaps every child that is gone (restored processes are ours: subreaper). */
static void cr_reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Starts the app in @dir; its pid, or -errno. */
static pid_t cr_start(const char *dir, enum cr_kind k, size_t size)
{
	char arg[32], line[160];
	pid_t pid;

	snprintf(arg, sizeof(arg), "%zu", size);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		char log[160];
		int fd;

		/* Its own session, no terminal, nothing of ours open. */
		setsid();
		snprintf(log, sizeof(log), "%s/app.log", dir);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		execl("/proc/self/exe", "bench", CR_APP_ARG, dir, cr_kind_args[k], arg,
		      (char *)NULL);
		_exit(127);
	}
	if (!cr_wait_file(dir, "ready", line, sizeof(line))) {
		fprintf(stderr, "bench: criu: the %s process did not get ready; its log:\n",
			cr_kind_args[k]);
		cr_run("cat %s/app.log >&2", dir);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -ETIMEDOUT;
	}
	return pid;
}

/*
 * One dump and restore of a @k process of @size bytes; the times in
 * *@dump and *@restore.  With @check, the restored process checks its
 * bytes and what it said goes to @checked; else it is killed.
 */
static int cr_once(struct criu_result *res, enum cr_kind k, size_t size, double *dump,
		   double *restore, char *checked, size_t len)
{
	char dir[64] = "/tmp/accmap-bench-criu-XXXXXX", line[160];
	pid_t pid, restored;
	int ret = 0, rc;
	uint64_t t0;

	if (!mkdtemp(dir))
		return -errno;
	pid = cr_start(dir, k, size);
	if (pid < 0) {
		ret = pid;
		goto out;
	}
	t0 = now_ns();
	rc = cr_run("%s dump -t %d -D %s -o dump.log >/dev/null 2>&1", res->criu, pid, dir);
	*dump = (double)(now_ns() - t0) / 1e6;
	if (rc) {
		fprintf(stderr, "bench: criu: dump of the %s process exited %d; its log ends:\n",
			cr_kind_args[k], rc);
		cr_run("grep -E 'Error|accmap' %s/dump.log | tail -n 15 >&2", dir);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ret = -EIO;
		goto out;
	}
	waitpid(pid, NULL, 0);
	cr_reap();
	if (kill(pid, 0) == 0) {
		fprintf(stderr, "bench: criu: the dumped process is still there\n");
		ret = -EIO;
		goto out;
	}
	t0 = now_ns();
	rc = cr_run("%s restore -d -D %s -o restore.log >/dev/null 2>&1", res->criu, dir);
	*restore = (double)(now_ns() - t0) / 1e6;
	if (rc) {
		fprintf(stderr, "bench: criu: restore of the %s process exited %d; its log ends:\n",
			cr_kind_args[k], rc);
		cr_run("grep -E 'Error|accmap' %s/restore.log | tail -n 15 >&2", dir);
		ret = -EIO;
		goto out;
	}
	/* criu restore -d leaves it to us, its subreaper, with its old pid. */
	restored = pid;
	if (kill(restored, 0)) {
		fprintf(stderr, "bench: criu: no process %d after the restore\n", restored);
		ret = -EIO;
		goto out;
	}
	if (checked) {
		kill(restored, SIGUSR1);
		if (!cr_wait_file(dir, "result", line, sizeof(line))) {
			snprintf(line, sizeof(line), "no result from the restored process");
			kill(restored, SIGKILL);
		}
		snprintf(checked, len, "%s", line);
		if (strncmp(line, "ok:", 3)) {
			fprintf(stderr, "bench: criu: restored %s process: %s\n",
				cr_kind_args[k], line);
			ret = -EIO;
		}
	} else {
		kill(restored, SIGKILL);
	}
	waitpid(restored, NULL, 0);
out:
	cr_reap();
	cr_run("rm -rf %s", dir);
	return ret;
}

/* memcpy() of @size bytes, @n times (and once untimed). */
static int cr_memcpy(struct series *s, size_t size, unsigned int n)
{
	uint8_t *src = anon_buffer(size), *dst = anon_buffer(size);
	uint64_t t0;

	if (!src || !dst) {
		if (src)
			munmap(src, size);
		if (dst)
			munmap(dst, size);
		return -ENOMEM;
	}
	memset(src, 0x5a, size);
	memset(dst, 0, size);
	for (unsigned int r = 0; r <= n; r++) {
		t0 = now_ns();
		memcpy(dst, src, size);
		clobber(dst);
		if (r)
			series_add(s, 0, (double)(now_ns() - t0) / 1e6);
	}
	munmap(src, size);
	munmap(dst, size);
	return 0;
}

static void criu_section(struct criu_result *res)
{
	const char *c = getenv("ACCMAP_CRIU");
	int ret = 0;

	progress("criu: setting up");
	if (!c || !*c) {
		set_absent(&res->ab, false,
			   "ACCMAP_CRIU is not set: %s",
			   "no criu that works on this kernel (the VM harness says why)");
		progress("criu: skipped: %s", res->ab.why);
		return;
	}
	res->criu = c;
	/* Restored processes are reparented to us, so that we can reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (unsigned int si = 0; si < CR_NSIZES && !ret; si++) {
		size_t size = cr_sizes[si];

		ret = cr_memcpy(&res->memcpy_ms[si], size, reps.criu);
		/* Round 0 is untimed and checks the restored bytes of each kind. */
		for (unsigned int r = 0; r <= reps.criu && !ret; r++) {
			progress("criu: %s, round %u of %u%s", size_name(size), r, reps.criu,
				 r ? "" : " (untimed, checks the bytes)");
			for (unsigned int j = 0; j < CR_KINDS && !ret; j++) {
				enum cr_kind k = (j + r) % CR_KINDS;
				double d = NAN, rs = NAN;

				ret = cr_once(res, k, size, &d, &rs, r ? NULL : res->checked[si][k],
					      sizeof(res->checked[si][k]));
				if (!ret && r) {
					series_add(&res->dump_ms[si][k], 0, d);
					series_add(&res->restore_ms[si][k], 0, rs);
				}
			}
		}
	}
	if (ret)
		set_absent(&res->ab, true, "a round failed: %s", strerror(-ret));
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* "min-max" of a series, for the spread column. */
static const char *spread(const struct series *s)
{
	static char buf[8][64];
	static unsigned int next;
	char *c = buf[next++ % ARRAY_SIZE(buf)];
	double lo = INFINITY, hi = -INFINITY;

	if (s->err || !s->n)
		return "";
	for (unsigned int i = 0; i < s->n; i++) {
		lo = s->v[i] < lo ? s->v[i] : lo;
		hi = s->v[i] > hi ? s->v[i] : hi;
	}
	snprintf(c, sizeof(buf[0]), "%s", num(lo));
	snprintf(c + strlen(c), sizeof(buf[0]) - strlen(c), "-%s", num(hi));
	return c;
}

static void report_criu(struct criu_result *res)
{
	static const char *const cols[] = {
		"process holds", "dump ms", "spread", "/ memcpy", "restore ms", "spread",
		"/ memcpy",
	};

	md("## 8. Checkpoint and restore (CRIU)");
	md_blank();
	if (report_absent(&res->ab))
		return;
	md("A process holding the bytes in one accmap buffer of the system heap (written with a");
	md("pattern, mapped through /dev/accmap), or the same bytes of anonymous memory (CRIU's");
	md("own cost, the baseline), dumped with `%s dump -t PID -D DIR` (which ends it) and",
	   res->criu);
	md("restored with `criu restore -d -D DIR`, images on tmpfs; each time is the whole criu");
	md("command as an operator runs it (its start-up included), median of %u rounds, the",
	   reps.criu);
	md("spread min-max; \"/ memcpy\" is time over a memcpy() of the same bytes in this boot.");
	md("An untimed round first had each restored process check every word at its address.");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (unsigned int si = 0; si < CR_NSIZES; si++) {
		double mc = median(&res->memcpy_ms[si]);

		for (unsigned int k = 0; k < CR_KINDS; k++) {
			char first[96];

			snprintf(first, sizeof(first), "%s, %s", size_name(cr_sizes[si]),
				 cr_kind_names[k]);
			md_row_begin(first);
			md_cell(cell(&res->dump_ms[si][k], 1));
			md_cell(spread(&res->dump_ms[si][k]));
			md_cell(ratio(div_or_nan(median(&res->dump_ms[si][k]), mc)));
			md_cell(cell(&res->restore_ms[si][k], 1));
			md_cell(spread(&res->restore_ms[si][k]));
			md_cell(ratio(div_or_nan(median(&res->restore_ms[si][k]), mc)));
			md_row_end();
		}
		md("| %s, memcpy() | %s | %s | 1.00x | | | |", size_name(cr_sizes[si]),
		   cell(&res->memcpy_ms[si], 1), spread(&res->memcpy_ms[si]));
	}
	md_blank();
	for (unsigned int si = 0; si < CR_NSIZES; si++)
		md("%s: accmap / anonymous: dump %s, restore %s; %s: dump %+.0f, restore %+.0f.",
		   size_name(cr_sizes[si]),
		   ratio(div_or_nan(median(&res->dump_ms[si][CR_ACCMAP]),
				    median(&res->dump_ms[si][CR_ANON]))),
		   ratio(div_or_nan(median(&res->restore_ms[si][CR_ACCMAP]),
				    median(&res->restore_ms[si][CR_ANON]))),
		   "ms the accmap buffer adds",
		   median(&res->dump_ms[si][CR_ACCMAP]) - median(&res->dump_ms[si][CR_ANON]),
		   median(&res->restore_ms[si][CR_ACCMAP]) - median(&res->restore_ms[si][CR_ANON]));
	md_blank();
	for (unsigned int si = 0; si < CR_NSIZES; si++)
		for (unsigned int k = 0; k < CR_KINDS; k++)
			md("Restored %s, %s: %s", size_name(cr_sizes[si]), cr_kind_args[k],
			   res->checked[si][k]);
	md_blank();
}

/* ---- targets ------------------------------------------------------------- */

enum verdict { V_MET, V_MISSED, V_UNMEASURED };

static const char *const verdict_names[] = { "MET", "MISSED", "NOT MEASURED" };

/* Folds one comparison into a verdict; NaN makes it unmeasured. */
static void judge(enum verdict *v, double value, double limit, bool at_most)
{
	if (isnan(value)) {
		*v = V_UNMEASURED;
		return;
	}
	if (*v == V_MET && (at_most ? value > limit : value < limit))
		*v = V_MISSED;
}

static void target_line(enum verdict v, const char *what, const char *figures)
{
	md("- **%s** %s: %s", verdict_names[v], what, figures);
	printf("bench: target %s: %s\n", verdict_names[v], what);
}

static void report_targets(struct bench *b, struct rw_result *rw, struct touch_result *ft,
			   struct handle_result *h)
{
	char fig[1024];
	enum verdict v;
	size_t len;
	unsigned int si;

	md("## Targets (issues 7 and 19)");
	md_blank();

	/*
	 * alloc-to-usable against the dma-buf heap and anonymous memory,
	 * for both ways of mapping a buffer, warm; and cold against the
	 * heap.
	 */
	for (unsigned int k = 0; k < 2; k++) {
		static const enum peer warm_cases[] = { P_DEV, P_WARM };
		static const char *const how[] = { "mmap of /dev/accmap", "mmap of a dma-buf" };
		enum peer a = warm_cases[k];
		char what[160];

		v = V_MET;
		len = 0;
		for (si = 0; si < NSIZES; si++) {
			double r = div_or_nan(median(&b->alloc[si][a]),
					      median(&b->alloc[si][P_HEAP]));

			judge(&v, r, sizes[si] >= MIB ? 0.5 : 1.0, true);
			appendf(fig, sizeof(fig), &len, "%s%s %s", si ? ", " : "",
				size_name(sizes[si]), ratio(r));
		}
		if (!b->avail[P_HEAP])
			appendf(fig, sizeof(fig), &len, " (%s)", b->why[P_HEAP]);
		snprintf(what, sizeof(what), "%s, %s: %s", "alloc-to-usable, warm", how[k],
			 "<= 1.0x the dma-buf heap at 4 and 64 KiB, <= 0.5x from 1 MiB");
		target_line(v, what, fig);

		v = V_MET;
		len = 0;
		for (si = 0; si < NSIZES; si++) {
			double r = div_or_nan(median(&b->alloc[si][a]),
					      median(&b->alloc[si][P_ANON]));

			judge(&v, r, sizes[si] == 4 * KIB ? 2.0 : 1.3, true);
			appendf(fig, sizeof(fig), &len, "%s%s %s", si ? ", " : "",
				size_name(sizes[si]), ratio(r));
		}
		snprintf(what, sizeof(what), "%s, %s: %s", "alloc-to-usable, warm", how[k],
			 "<= 2.0x anonymous memory at 4 KiB, <= 1.3x from 64 KiB");
		target_line(v, what, fig);
	}

	v = V_MET;
	len = 0;
	for (si = 0; si < NSIZES; si++) {
		double r = div_or_nan(median(&b->alloc[si][P_COLD]), median(&b->alloc[si][P_HEAP]));

		if (sizes[si] < MIB)
			continue;
		judge(&v, r, 1.0, true);
		appendf(fig, sizeof(fig), &len, "%s%s %s", len ? ", " : "", size_name(sizes[si]),
			ratio(r));
	}
	target_line(v, "alloc-to-usable, cold pool (dma-buf): <= 1.0x the dma-buf heap from 1 MiB",
		    fig);

	v = V_MET;
	len = 0;
	for (si = 0; si < NSIZES; si++) {
		double m = median(&rw->s[si][RW_MEMCPY]);
		double w = div_or_nan(m, median(&rw->s[si][RW_WRITE]));
		double r = div_or_nan(m, median(&rw->s[si][RW_READ]));

		if (sizes[si] < MIB)
			continue;
		judge(&v, w, 0.7, false);
		judge(&v, r, 0.7, false);
		appendf(fig, sizeof(fig), &len, "%s%s WRITE %s READ %s", len ? ", " : "",
			size_name(sizes[si]), ratio(w), ratio(r));
	}
	target_line(v, "WRITE/READ bandwidth >= 0.7x memcpy from 1 MiB up", fig);

	/*
	 * The target is the rate at which first touches make memory usable,
	 * reached by "fewer faults: larger mappings per fault": it is judged
	 * on bytes made usable per second, against anonymous memory in 4 KiB
	 * pages and as the kernel gives it (THP).  Faults per second are
	 * shown beside it; a mapping that takes fewer, larger faults has a
	 * lower one by design.
	 */
	v = V_MET;
	len = 0;
	for (si = 0; si < NTOUCH; si++) {
		double ra = median(&ft->rate[si][FT_ACCMAP]), ba = median(&ft->bps[si][FT_ACCMAP]);
		double b4 = div_or_nan(ba, median(&ft->bps[si][FT_ANON4K]));
		double bt = div_or_nan(ba, median(&ft->bps[si][FT_ANON]));

		judge(&v, b4, 1.0, false);
		judge(&v, bt, 1.0, false);
		appendf(fig, sizeof(fig), &len, "%s%s bytes/s %s (no THP) %s (THP), ",
			si ? "; " : "", size_name(touch_sizes[si]), ratio(b4), ratio(bt));
		appendf(fig, sizeof(fig), &len, "faults/s %s (no THP) %s (THP)",
			ratio(div_or_nan(ra, median(&ft->rate[si][FT_ANON4K]))),
			ratio(div_or_nan(ra, median(&ft->rate[si][FT_ANON]))));
	}
	target_line(v, "first touch makes memory usable at >= anonymous memory's rate (bytes/s)",
		    fig);

	v = V_MET;
	{
		double ri = div_or_nan(median(&h->rate[H_LARGE][H_INFO]),
				       median(&h->rate[H_SMALL][H_INFO]));
		double rp = div_or_nan(median(&h->rate[H_LARGE][H_PAIRS]),
				       median(&h->rate[H_SMALL][H_PAIRS]));
		double rf = div_or_nan(median(&h->rate[H_LARGE][H_FREE]),
				       median(&h->rate[H_SMALL][H_FREE]));

		judge(&v, ri, 0.7, false);
		judge(&v, rp, 0.7, false);
		judge(&v, rf, 0.7, false);
		snprintf(fig, sizeof(fig), "INFO %s, CREATE+FREE %s, FREE %s", ratio(ri),
			 ratio(rp), ratio(rf));
	}
	target_line(v, "handle operations at 100k live handles >= 0.7x the rate at 1k", fig);
	md_blank();
}

/* ---- 9. the board's GPU against the model ------------------------------ */

enum { BT_SIM, BT_BOARD, BT_TARGETS };
enum { BD_MNIST, BD_COLD, BD_WARM, BD_KINDS };

static const char *const board_case_names[BD_KINDS] = {
	[BD_MNIST] = "MNIST replay, 23 chains (REPLAY_RUN wall)",
	[BD_COLD] = "SVM job, 4 KiB pages fault in",
	[BD_WARM] = "SVM job, 4 KiB GPU entries present",
};

struct board_result {
	struct absence ab;
	char gpu[ACCMAP_REPLAY_NAME_LEN];
	bool mnist;
	struct series ms[BT_TARGETS][BD_KINDS];
	struct series faults[BT_TARGETS];
};

/* The target of each column: the model, the board's GPU. */
struct board_side {
	const char *name;
	struct svm_bench sb;
	struct svm_result sr;
};

/* One REPLAY_RUN of the imported recording @rec on @target, its wall time. */
static int board_mnist(int dev, struct accmap_recording *rec, const char *target, double *ms)
{
	struct accmap_player *player = NULL;
	struct accmap_replay_run run;
	uint32_t failed_map;
	uint64_t t0;
	int ret, ret2;

	snprintf(rec->target, sizeof(rec->target), "%s", target);
	ret = accmap_player_open(dev, rec, NULL, &player, &failed_map);
	if (ret) {
		fprintf(stderr, "bench: MNIST on %s: accmap_player_open: %s (map %u)\n", target,
			strerror(-ret), failed_map);
		return ret;
	}
	t0 = now_ns();
	ret = accmap_player_run(player, NULL, NULL, &run);
	*ms = (double)(now_ns() - t0) / 1e6;
	if (!ret && (run.reason != ACCMAP_REPLAY_OK || run.done != rec->nr_ops))
		ret = -EIO;
	if (ret)
		fprintf(stderr, "bench: MNIST on %s: %s, reason %u, %u of %u ops\n", target,
			strerror(-ret), run.reason, run.done, rec->nr_ops);
	ret2 = accmap_player_close(player);
	return ret ? ret : ret2;
}

/* One round on one target: MNIST (if loaded), a cold and a warm SVM job. */
static int board_round(int dev, struct accmap_recording *rec, struct board_side *side,
		       unsigned int t, struct board_result *res, bool timed)
{
	struct svm_bench *sb = &side->sb;
	double ms[BD_KINDS] = { NAN, NAN, NAN };
	struct series faults = { 0 };
	int ret = 0;

	if (rec)
		ret = board_mnist(dev, rec, side->name, &ms[BD_MNIST]);
	if (!ret)
		ret = svm_cold(sb, sb->b4k, 12, true, &ms[BD_COLD], &faults);
	if (!ret)
		ret = svm_job(sb, sb->svm_session, (uintptr_t)sb->desc_svm, &ms[BD_WARM]);
	if (ret || !timed)
		return ret;
	series_add_taken(res->ms[t], ms, BD_KINDS);
	if (faults.n)
		series_add(&res->faults[t], 0, faults.v[0]);
	return 0;
}

/* Section 6's SVM set-up for the side's target: A, C, B of 4 KiB pages. */
static int board_side_open(int dev, struct board_side *side)
{
	struct svm_bench *sb = &side->sb;

	sb->dev = dev;
	sb->desc_svm = aligned_alloc(4096, 4096);
	sb->a = aligned_alloc(4096, SVM_K * 4);
	sb->c = aligned_alloc(4096, SVM_N * 4);
	sb->b4k = svm_region(false);
	if (!sb->desc_svm || !sb->a || !sb->c || !sb->b4k)
		return -ENOMEM;
	for (unsigned int i = 0; i < SVM_K; i++)
		sb->a[i] = (int32_t)(i % 5) - 2;
	return svm_bench_setup(sb, side->name, &side->sr);
}

static void board_side_close(int dev, struct board_side *side)
{
	struct svm_bench *sb = &side->sb;

	if (sb->map_session)
		accmap_replay_destroy(dev, sb->map_session);
	if (sb->buf)
		accmap_free(dev, sb->buf);
	if (sb->svm_session)
		accmap_replay_destroy(dev, sb->svm_session);
	free(sb->desc_svm);
	free(sb->a);
	free(sb->c);
	if (sb->b4k)
		munmap(sb->b4k, SVM_B_BYTES);
}

static void board_section(int dev, const char *mnist_dir, struct board_result *res)
{
	const char *gpu = getenv("ACCMAP_BOARD_GPU");
	struct board_side side[BT_TARGETS] = {
		[BT_SIM] = { .name = SIMDRV_TARGET }, [BT_BOARD] = { .name = gpu },
	};
	struct accmap_recording *rec = NULL;
	struct accmap_rec_error err;
	struct gpureplay_input in;
	int ret = 0;

	if (!gpu || !*gpu) {
		set_absent(&res->ab, false, "no board GPU (ACCMAP_BOARD_GPU is empty)");
		return;
	}
	snprintf(res->gpu, sizeof(res->gpu), "%s", gpu);
	progress("board: %s against %s, %u rounds", gpu, SIMDRV_TARGET, reps.board);
	if (!gpureplay_load(mnist_dir, &in, &err)) {
		ret = gpureplay_import(&in, &rec, NULL, &err);
		gpureplay_unload(&in);
		if (ret) {
			set_absent(&res->ab, true, "MNIST import: %s", err.msg);
			return;
		}
		res->mnist = true;
	}
	/* Both SVM sessions live at once: one mirror each, the same aperture. */
	for (unsigned int t = 0; !ret && t < BT_TARGETS; t++) {
		ret = board_side_open(dev, &side[t]);
		if (ret && !side[t].sr.ab.absent)
			set_absent(&res->ab, true, "%s: %s", side[t].name, strerror(-ret));
		else if (ret)
			set_absent(&res->ab, true, "%s: %s", side[t].name, side[t].sr.ab.why);
	}
	for (unsigned int r = 0; !ret && r <= reps.board; r++) {
		progress("board: round %u of %u", r, reps.board);
		/* Round 0 warms up; the targets take turns going first. */
		for (unsigned int k = 0; !ret && k < BT_TARGETS; k++) {
			unsigned int t = (k + r) % BT_TARGETS;

			ret = board_round(dev, rec, &side[t], t, res, r > 0);
		}
		if (ret)
			set_absent(&res->ab, true, "a round failed: %s", strerror(-ret));
	}
	for (unsigned int t = 0; t < BT_TARGETS; t++)
		board_side_close(dev, &side[t]);
	accmap_svm_aperture_fini();
	accmap_rec_free(rec);
}

static void report_board(struct board_result *res)
{
	static const char *const cols[] = { "case", "sim ms", "board ms", "board / sim" };
	double pages = (double)SVM_B_BYTES / (double)page_size;

	md("## 9. The board's GPU against the model");
	md_blank();
	if (report_absent(&res->ab))
		return;
	md("The same work on the software model (sim) and on the board's GPU (%s, a register",
	   res->gpu);
	md("window with interrupts), taking turns in one boot: MNIST's REPLAY_RUN%s, and",
	   res->mnist ? "" : " (absent: no recording)");
	md("section 6's job over B's 4 MiB in an SVM session, with B's GPU entries dropped");
	md("first (every page a GPU fault, serviced from the MMU interrupt on the board) and");
	md("present.  Median milliseconds.");
	md_blank();
	md_table(cols, ARRAY_SIZE(cols));
	for (unsigned int i = 0; i < BD_KINDS; i++) {
		if (i == BD_MNIST && !res->mnist)
			continue;
		md("| %s | %s | %s | %s |", board_case_names[i], cell(&res->ms[BT_SIM][i], 1),
		   cell(&res->ms[BT_BOARD][i], 1),
		   ratio(div_or_nan(median(&res->ms[BT_BOARD][i]), median(&res->ms[BT_SIM][i]))));
	}
	md_blank();
	for (unsigned int t = 0; t < BT_TARGETS; t++)
		md("%s: %s GPU faults per cold job, **%s pages/s** of fault service%s",
		   t == BT_SIM ? "sim" : res->gpu, num(median(&res->faults[t])),
		   num(pages / ((median(&res->ms[t][BD_COLD]) - median(&res->ms[t][BD_WARM])) /
				1e3)), t == BT_SIM ? ";" : ".");
	md_blank();
}

/* ---- main -------------------------------------------------------------------- */

enum {
	S_ALLOC = 1, S_RW = 2, S_TOUCH = 4, S_HANDLES = 8, S_MNIST = 16, S_SVM = 32,
	S_DEVMEM = 64, S_CRIU = 128, S_BOARD = 256, S_ALL = 511
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: bench [--mnist DIR] [--reps N] [--only LIST]\n"
		"  --mnist DIR  GPUReplay MNIST recording (default %s; skipped if absent)\n"
		"  --reps N     N repetitions in every section instead of the defaults\n"
		"               (alloc-to-usable %u/%u, WRITE/READ %u, first touch %u,\n"
		"               handles %u, MNIST %u, SVM %u, device memory %u, criu %u,\n"
		"               board %u); 1 to %u\n"
		"  --only LIST  sections to run, comma separated: alloc,rw,touch,handles,mnist,\n"
		"               svm,devmem,criu,board\n"
		"Prints progress, the report as Markdown on \"@md \" lines and plot data on\n"
		"\"@dat \" lines; tools/accmap/bench-report.sh makes bench.md and bench.png.\n",
		MNIST_DIR_DEFAULT, reps.alloc_small, reps.alloc_large, reps.rw, reps.touch,
		reps.handles, reps.mnist, reps.svm, reps.devmem, reps.criu, reps.board,
		REPS_MAX);
}

static int parse_only(char *list)
{
	static const char *const names[] = {
		"alloc", "rw", "touch", "handles", "mnist", "svm", "devmem", "criu", "board",
	};
	int mask = 0;
	char *tok, *save = NULL;
	unsigned int i;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == ARRAY_SIZE(names))
			return -1;
		mask |= 1 << i;
	}
	return mask;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mnist", required_argument, NULL, 'm' },
		{ "reps", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bench b;
	static struct rw_result rw;
	static struct touch_result ft;
	static struct handle_result hr;
	static struct mnist_result mr;
	static struct svm_result sr;
	static struct dm_result dr;
	static struct criu_result cr;
	static struct board_result br;
	const char *mnist_dir = MNIST_DIR_DEFAULT;
	int sections = S_ALL, c, ret;
	uint64_t granularity;
	char *end;
	long n;

	/* The process the criu section checkpoints. */
	if (argc > 1 && !strcmp(argv[1], CR_APP_ARG)) {
		page_size = sysconf(_SC_PAGESIZE);
		return criu_app(argc, argv);
	}

	while ((c = getopt_long(argc, argv, "m:r:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mnist_dir = optarg;
			break;
		case 'r':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > REPS_MAX) {
				print_usage(stderr);
				return 2;
			}
			reps = (struct reps){ n, n, n, n, n, n, n, n, n, n };
			break;
		case 'o':
			sections = parse_only(optarg);
			if (sections <= 0) {
				print_usage(stderr);
				return 2;
			}
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		print_usage(stderr);
		return 2;
	}

	start_ns = now_ns();
	page_size = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ret = accmap_open(&b.accmap);
	if (ret) {
		fprintf(stderr, "bench: %s: %s\n", ACCMAP_DEVICE_PATH, strerror(-ret));
		return 1;
	}
	ret = pool_info(&b, &b.pool0);
	if (ret) {
		fprintf(stderr, "bench: QUERY_POOL: %s\n", strerror(-ret));
		return 1;
	}
	granularity = clock_granularity();
	if (granularity > CLOCK_GRANULARITY_MAX_NS) {
		progress("CLOCK_MONOTONIC moves in steps of %llu ns: too coarse to measure",
			 (unsigned long long)granularity);
		report_header(&b, granularity);
		return 1;
	}
	open_peers(&b);
	for (c = 0; c < NPEERS; c++)
		if (!b.avail[c])
			progress("%s: n/a (%s)", peer_names[c], b.why[c]);

	if (sections & S_ALLOC)
		alloc_section(&b);
	if (sections & S_RW)
		rw_section(b.accmap, &rw);
	if (sections & S_TOUCH)
		touch_section(b.accmap, &ft);
	if (sections & S_HANDLES)
		handle_section(&hr);
	if (sections & S_MNIST)
		mnist_section(b.accmap, mnist_dir, &mr);
	if (sections & S_SVM)
		svm_section(b.accmap, &sr);
	if (sections & S_DEVMEM)
		dm_section(b.accmap, &dr);
	if (sections & S_CRIU)
		criu_section(&cr);
	if (sections & S_BOARD)
		board_section(b.accmap, mnist_dir, &br);
	progress("done");

	report_header(&b, granularity);
	if (sections & S_ALLOC)
		report_alloc(&b);
	if (sections & S_RW)
		report_rw(&rw);
	if (sections & S_TOUCH)
		report_touch(&ft);
	if (sections & S_HANDLES)
		report_handles(&hr);
	if (sections & S_MNIST)
		report_mnist(&mr);
	if (sections & S_SVM)
		report_svm(&sr);
	if (sections & S_DEVMEM)
		report_devmem(&dr);
	if (sections & S_CRIU)
		report_criu(&cr);
	if (sections & S_BOARD)
		report_board(&br);
	report_targets(&b, &rw, &ft, &hr);

	accmap_close(b.accmap);
	return failed ? 1 : 0;
}

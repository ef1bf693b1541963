// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer memory and memory cgroups.
 *
 * The rule (Documentation/userspace-api/accmap.rst, ACCMAP_IOC_ALLOC):
 * every byte of buffer memory ALLOC takes from the system heap is charged
 * to the memory cgroup of the task that called ALLOC, and uncharged when
 * the buffer's memory is freed; an ALLOC over the cgroup's limit fails
 * with ENOMEM, leaks nothing, and kills nobody.
 *
 * A child process is moved into a cgroup of its own with memory.max at
 * 256 MiB and allocates 16 MiB buffers:
 *  - the cgroup's memory.current rises by the bytes allocated plus their
 *    page arrays, within the per-CPU charge stocks' slack either way;
 *  - allocating on towards 512 MiB fails with ENOMEM before 512 MiB, only
 *    once the next buffer cannot fit (memory.current plus the buffer
 *    passes the limit by more than that slack), with memory.current
 *    within the limit, the
 *    failed ALLOC leaving no charge and no heap bytes behind, and no OOM
 *    kill in the cgroup (memory.events oom_kill stays 0, the child exits
 *    normally);
 *  - at the brim (the rest of the limit filled with 64 KiB buffers until
 *    one fails), an ALLOC of 64 MiB still fails with ENOMEM and no OOM
 *    kill: its page array (128 KiB, past what kmalloc gives without
 *    retrying, so vmalloc'ed) is charged too and must not invoke the
 *    cgroup's OOM killer either.  Every id used there is created before
 *    the brim: CREATE's own small charge is not what this checks;
 *  - FREE gives the charge back: memory.current falls by at least the
 *    buffer, less what the kernel's per-CPU charge stocks may hold back
 *    (MEMCG_STOCK_PAGES pages a CPU, so more with larger pages), and the
 *    next ALLOC succeeds again.
 * The child then hands one buffer's dma-buf to the parent (in the root
 * cgroup) over a unix socket and exits.  The charge stays where ALLOC put
 * it, in the child's cgroup, while the parent holds and maps the buffer
 * (no charge moves with the descriptor or to the task that faults the
 * pages in), and goes when the parent closes the last descriptor: the
 * cgroup's usage then falls back near zero (a few MiB of kernel objects
 * may stay charged to a dying cgroup), and the system heap's used bytes
 * in debugfs come back to where they were before the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "accmap_util.h"
#include "tap.h"

#define MIB		(1024ULL * 1024)
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_LIMIT	(256 * MIB)
#define CG_TARGET	(512 * MIB)
#define CHUNK		(16 * MIB)
#define MAX_BUFS	(CG_TARGET / CHUNK)
/* The brim: small buffers that fill what CHUNKs left, then one big ALLOC. */
#define SMALL		(64 * 1024ULL)
#define MAX_SMALL	((CHUNK + 16 * MIB) / SMALL)
#define BIG		(64 * MIB)
/* What may stay charged to the cgroup once its buffers and tasks are gone. */
#define CG_SLACK	(8 * MIB)
/*
 * Pages a CPU keeps charged ahead in its memcg stock (MEMCG_CHARGE_BATCH
 * in include/linux/memcontrol.h): an uncharge refills the freeing CPU's
 * stock and gives it back to the counter only above this many pages, so
 * memory.current may stay up to that many pages per CPU above what is in
 * use.  In pages, not bytes: 256 KiB a CPU with 4 KiB pages, 1 MiB with
 * 16 KiB pages.
 */
#define MEMCG_STOCK_PAGES	64

/* Bytes memory.current may lag behind an uncharge. */
static long long stock_slack(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	return (long long)MEMCG_STOCK_PAGES * (long long)page_size() * (cpus > 0 ? cpus : 1);
}

/*
 * Bytes of the page array of a @size buffer (one pointer a page), charged
 * with it.
 */
static unsigned long long array_bytes(unsigned long long size)
{
	return size / page_size() * sizeof(void *);
}

/* ---- cgroup v2 files ---- */

static bool cg_write(const char *cg, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "open %s: %s", path, strerror(errno)))
		return false;
	n = write(fd, val, strlen(val));
	close(fd);
	return CHECK(n == (ssize_t)strlen(val), "write '%s' to %s: %s", val, path,
		     strerror(errno));
}

/* A number from a cgroup file: the whole file, or the value of key in it. */
static long long cg_read(const char *cg, const char *file, const char *key)
{
	char path[256], name[64];
	long long v = -1, x;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "re");
	if (!CHECK(f, "open %s: %s", path, strerror(errno)))
		return -1;
	if (!key) {
		if (fscanf(f, "%lld", &x) == 1)
			v = x;
	} else {
		while (fscanf(f, "%63s %lld", name, &x) == 2)
			if (!strcmp(name, key)) {
				v = x;
				break;
			}
	}
	fclose(f);
	CHECK(v >= 0, "no %s in %s", key ? key : "number", path);
	return v;
}

static long long cg_current(const char *cg)
{
	return cg_read(cg, "memory.current", NULL);
}

/*
 * cgroup v2 mounted at /sys/fs/cgroup (the guest's init mounts it) with
 * the memory controller enabled for the root's children.
 */
static bool cg_setup(void)
{
	char line[256] = "";
	struct statfs st;
	FILE *f;

	if (!CHECK(statfs(CG_ROOT, &st) == 0 && (unsigned long)st.f_type == CGROUP2_SUPER_MAGIC,
		   "%s is not a cgroup2 mount", CG_ROOT))
		return false;
	f = fopen(CG_ROOT "/cgroup.controllers", "re");
	if (!CHECK(f, "no cgroup.controllers: %s", strerror(errno)))
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	if (!CHECK(strstr(line, "memory"), "no memory controller (cgroup.controllers: %s)", line))
		return false;
	return cg_write(CG_ROOT, "cgroup.subtree_control", "+memory");
}

/* A fresh child cgroup of the root with memory.max = CG_LIMIT. */
static bool cg_create(char *cg, size_t len)
{
	char max[32];

	snprintf(cg, len, "%s/accmap-memcg-%d", CG_ROOT, getpid());
	rmdir(cg);
	if (!CHECK(mkdir(cg, 0755) == 0, "mkdir %s: %s", cg, strerror(errno)))
		return false;
	snprintf(max, sizeof(max), "%llu", CG_LIMIT);
	return cg_write(cg, "memory.max", max) &&
	       CHECK(cg_read(cg, "memory.max", NULL) == (long long)CG_LIMIT, "memory.max");
}

/* rmdir, retried while the cgroup's last task is still going away. */
static void cg_remove(const char *cg)
{
	for (int i = 0; i < 100 && rmdir(cg); i++)
		usleep(20000);
	CHECK(access(cg, F_OK), "rmdir %s: %s", cg, strerror(errno));
}

/* Waits up to 2 s for memory.current to be at most max; the last value. */
static long long cg_wait_below(const char *cg, long long max)
{
	long long cur = cg_current(cg);

	for (int i = 0; i < 100 && cur > max; i++) {
		usleep(20000);
		cur = cg_current(cg);
	}
	return cur;
}

/* ---- accmap ---- */

/* Used bytes of the system heap as debugfs shows them; ~0 on failure. */
static unsigned long long system_used(void)
{
	unsigned long long used = ~0ULL;
	struct dbg_table t;
	long r;

	if (!dbg_read("heaps", &t))
		return used;
	r = dbg_find(&t, "name", "system", NULL, NULL);
	if (CHECK(r >= 0, "debugfs heaps: no system heap"))
		used = dbg_num(&t, (size_t)r, "used");
	dbg_free(&t);
	return used;
}

/* CREATE + ALLOC of CHUNK bytes, cached, system heap: 0 or -errno of ALLOC. */
static int alloc_chunk(int dev, uint32_t *id)
{
	int ret = am_create(dev, CHUNK, id);

	if (!CHECK(ret == 0, "CREATE: %s", strerror(-ret)))
		return ret;
	ret = am_alloc(dev, *id, 0, 0);
	if (ret)
		am_free(dev, *id);
	return ret;
}

/* ---- the child, inside the cgroup ---- */

/*
 * Fills the cgroup to its limit with SMALL buffers, then ALLOCs BIG: it
 * must fail with ENOMEM without an OOM kill.  @small holds MAX_SMALL ids
 * and @big one id, all created beforehand; every one is freed again.
 *
 * Nothing but the ALLOCs runs while the cgroup is full: reading a cgroup
 * file (seq_read's buffer) or writing TAP lines (pipe pages) is charged
 * too, and at the brim such a charge may rightly end in the cgroup's OOM
 * killer (with 16 KiB pages seq_read's order-1 buffer is 32 KiB, more
 * than the room a failed 64 KiB ALLOC leaves).  So everything is freed
 * first and reported after; memory.events still counts any OOM kill.
 */
static void fill_to_limit(const char *cg, int dev, const uint32_t *small, uint32_t big)
{
	long long base = cg_current(cg), room;
	int ret = 0, ret_big = 0;
	size_t k;

	for (k = 0; k < MAX_SMALL; k++) {
		ret = am_alloc(dev, small[k], 0, 0);
		if (ret)
			break;
	}
	if (k < MAX_SMALL && ret == -ENOMEM)
		ret_big = am_alloc(dev, big, 0, 0);
	for (size_t i = 0; i < MAX_SMALL; i++)
		CHECK_OK(am_free(dev, small[i]));
	CHECK_OK(am_free(dev, big));

	if (!CHECK(k < MAX_SMALL && ret == -ENOMEM,
		   "%zu ALLOCs of 64 KiB at the brim ended with %s, expected ENOMEM", k,
		   k < MAX_SMALL ? strerror(-ret) : "no failure"))
		return;
	tap_diag("brim: %zu KiB more in 64 KiB buffers, then a 64 MiB ALLOC: %s",
		 k * (size_t)(SMALL >> 10), ret_big ? strerror(-ret_big) : "allocated");
	/* The 64 KiB ALLOCs stopped only when the next one did not fit. */
	room = (long long)CG_LIMIT - base;
	CHECK(room < (long long)((k + 1) * (SMALL + array_bytes(SMALL))) + stock_slack(),
	      "the brim: ENOMEM after %zu KiB in 64 KiB buffers with %lld KiB free below the limit (slack %lld KiB)",
	      k * (size_t)(SMALL >> 10), room >> 10, stock_slack() >> 10);
	CHECK(ret_big == -ENOMEM, "ALLOC of 64 MiB at the brim: %s, expected ENOMEM",
	      ret_big ? strerror(-ret_big) : "allocated");
	CHECK(cg_read(cg, "memory.events", "oom_kill") == 0,
	      "OOM kill in the cgroup for an ALLOC at the brim");
}

static void child(const char *cg, int sock)
{
	long long c0, c1, before = 0, after;
	uint32_t ids[MAX_BUFS], small[MAX_SMALL], big, id;
	unsigned long long used = 0;
	size_t n = 0, i;
	int dev, ret = 0, fd;

	if (!cg_write(cg, "cgroup.procs", "0"))
		return;
	dev = am_open();
	if (dev < 0)
		return;

	/* (a) Four buffers: memory.current rises by at least their bytes. */
	c0 = cg_current(cg);
	for (; n < 4; n++) {
		ret = alloc_chunk(dev, &ids[n]);
		if (!CHECK(ret == 0, "ALLOC %zu of 16 MiB in a 256 MiB cgroup: %s", n,
			   strerror(-ret)))
			return;
	}
	c1 = cg_current(cg);
	tap_diag("4 x 16 MiB: memory.current +%lld KiB (buffers %llu, arrays %llu, slack %lld)",
		 (c1 - c0) >> 10, (4 * CHUNK) >> 10, (4 * array_bytes(CHUNK)) >> 10,
		 stock_slack() >> 10);
	CHECK(c1 - c0 >= (long long)(4 * CHUNK) - stock_slack() &&
	      c1 - c0 <= (long long)(4 * (CHUNK + array_bytes(CHUNK))) + stock_slack(),
	      "memory.current rose by %lld KiB for 65536 KiB of buffers and %llu KiB of page arrays (slack %lld KiB)",
	      (c1 - c0) >> 10, (4 * array_bytes(CHUNK)) >> 10, stock_slack() >> 10);

	/* The brim's ids, while there is room for their own charge. */
	for (i = 0; i < MAX_SMALL; i++) {
		ret = am_create(dev, SMALL, &small[i]);
		if (!CHECK(ret == 0, "CREATE of 64 KiB: %s", strerror(-ret)))
			return;
	}
	ret = am_create(dev, BIG, &big);
	if (!CHECK(ret == 0, "CREATE of 64 MiB: %s", strerror(-ret)))
		return;

	/* (b) On towards 512 MiB: ENOMEM first, without an OOM kill. */
	for (; n < MAX_BUFS; n++) {
		before = cg_current(cg);
		used = system_used();
		ret = alloc_chunk(dev, &ids[n]);
		if (ret)
			break;
	}
	tap_diag("%zu MiB allocated, then %s; memory.current %lld KiB, limit %llu KiB",
		 n * (size_t)(CHUNK / MIB), ret ? strerror(-ret) : "no failure",
		 cg_current(cg) >> 10, CG_LIMIT >> 10);
	CHECK(n < MAX_BUFS, "512 MiB of buffers allocated in a 256 MiB cgroup");
	if (n < MAX_BUFS) {
		CHECK(ret == -ENOMEM, "ALLOC over the cgroup's limit: %s, expected ENOMEM",
		      strerror(-ret));
		/*
		 * ENOMEM only when the buffer and its page array did not fit:
		 * what was charged before it, plus what it needed, passes the
		 * limit by more than the stocks could hold back.
		 */
		CHECK(before + (long long)(CHUNK + array_bytes(CHUNK)) + stock_slack() >
		      (long long)CG_LIMIT,
		      "ENOMEM for 16 MiB with memory.current %lld KiB of a %llu KiB limit: %lld KiB were free (slack %lld KiB)",
		      before >> 10, CG_LIMIT >> 10, ((long long)CG_LIMIT - before) >> 10,
		      stock_slack() >> 10);
		/* The failed ALLOC took nothing. */
		after = cg_current(cg);
		CHECK(after <= before + (long long)MIB,
		      "memory.current %lld KiB after a failed ALLOC, %lld KiB before",
		      after >> 10, before >> 10);
		CHECK(system_used() == used, "system heap used %llu after a failed ALLOC, was %llu",
		      system_used(), used);
	}
	CHECK(cg_current(cg) <= (long long)CG_LIMIT, "memory.current %lld over memory.max",
	      cg_current(cg));
	CHECK(cg_read(cg, "memory.events", "oom_kill") == 0, "OOM kill in the cgroup");
	if (n < MAX_BUFS && ret == -ENOMEM)
		fill_to_limit(cg, dev, small, big);

	/* FREE gives the charge back, and the next ALLOC fits again. */
	if (n) {
		before = cg_current(cg);
		CHECK_OK(am_free(dev, ids[--n]));
		after = cg_wait_below(cg, before - (long long)CHUNK + stock_slack());
		CHECK(before - after >= (long long)CHUNK - stock_slack(),
		      "FREE of 16 MiB: memory.current %lld KiB -> %lld KiB (per-CPU stock slack %lld KiB)",
		      before >> 10, after >> 10, stock_slack() >> 10);
		ret = alloc_chunk(dev, &ids[n]);
		if (CHECK(ret == 0, "ALLOC after a FREE under the limit: %s", strerror(-ret)))
			n++;
	}

	/* Hand one buffer to the parent, then exit: the client's others go. */
	id = n ? ids[n - 1] : 0;
	fd = n ? am_get_fd(dev, id, O_RDWR | O_CLOEXEC) : -1;
	if (CHECK(fd >= 0, "GET_FD: %s", strerror(-fd))) {
		void *map = map_shared(fd, CHUNK, PROT_READ | PROT_WRITE, 0);

		if (map) {
			fill_pattern(map, CHUNK, 0, 7);
			munmap(map, CHUNK);
		}
		CHECK(am_send_fd(sock, fd) == 0, "sending the dma-buf");
		close(fd);
	}
	for (i = 0; i < n; i++)
		am_free(dev, ids[i]);
	close(dev);
}

/* ---- the parent, in the root cgroup ---- */

static void test_memcg_alloc(void)
{
	long long held, last;
	unsigned long long used0;
	int sv[2], status, fd;
	char cg[128];
	char *map;
	pid_t pid;

	if (!cg_setup() || !cg_create(cg, sizeof(cg)))
		return;
	used0 = system_used();
	if (!CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
		goto out;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		close(sv[0]);
		child(cg, sv[1]);
		_exit(tap_failed() ? 1 : 0);
	}
	close(sv[1]);
	fd = am_recv_fd(sv[0]);
	close(sv[0]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(!WIFSIGNALED(status), "the child was killed by signal %d (the OOM killer?)",
	      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "the child failed");
	CHECK(cg_read(cg, "memory.events", "oom_kill") == 0, "OOM kill in the cgroup");
	if (!CHECK(fd >= 0, "no dma-buf from the child"))
		goto out;

	/*
	 * The child is gone and its client closed; the buffer it handed over
	 * is still charged to its cgroup, mapped and read by the parent or
	 * not, and is all that is charged there but for a few kernel objects.
	 */
	held = cg_wait_below(cg, (long long)(CHUNK + CG_SLACK));
	CHECK(held >= (long long)CHUNK && held <= (long long)(CHUNK + CG_SLACK),
	      "memory.current %lld KiB with only the handed-over 16 MiB buffer alive", held >> 10);
	CHECK(system_used() == used0 + CHUNK, "system heap used %llu, expected %llu",
	      system_used(), used0 + CHUNK);
	map = map_shared(fd, CHUNK, PROT_READ, 0);
	if (map) {
		size_t bad = find_pattern_mismatch(map, CHUNK, 0, 7);

		CHECK(bad == CHUNK, "byte %zu of the handed-over buffer is not the child's", bad);
		munmap(map, CHUNK);
	}
	CHECK(cg_current(cg) >= (long long)CHUNK,
	      "memory.current %lld KiB: the parent's use moved the charge", cg_current(cg) >> 10);

	/* The last descriptor goes: so does the charge. */
	close(fd);
	last = cg_wait_below(cg, (long long)CG_SLACK);
	CHECK(last <= (long long)CG_SLACK, "memory.current %lld KiB after every buffer went",
	      last >> 10);
	CHECK(system_used() == used0, "system heap used %llu at the end, %llu before",
	      system_used(), used0);
out:
	cg_remove(cg);
}

static const struct tap_test tests[] = {
	{ "memcg_alloc", test_memcg_alloc },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

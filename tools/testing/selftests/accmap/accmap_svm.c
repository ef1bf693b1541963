// SPDX-License-Identifier: GPL-2.0
/*
 * accmap shared virtual memory on the software Mali model: a replay
 * session made with ACCMAP_REPLAY_SETUP_SVM mirrors this process, so the
 * GPU reads and writes plain malloc() and mmap() memory at the CPU's
 * addresses, faulting pages in as it goes, and follows every change the
 * CPU makes to its page tables.  The cases are those of the kernel's
 * hmm-tests (anonymous, zero page, protections, shared and private files,
 * fork, munmap and mremap, THP, MADV_DONTNEED, exit), then what only SVM
 * does (a matmul on malloc'ed arrays, a linked list summed by the GPU),
 * proof that nothing is pinned (page-out, migration), the ACCMAP_IOC_SVM
 * attributes, prefetch and counters, ranges registered with a userfaultfd
 * (and its close() racing PREFETCH and GPU faults), every errno, and the
 * debugfs row.
 *
 * Job descriptors live in this process's memory too: the GPU reads them
 * at their CPU address and writes their status there.  The register ops
 * come from tools/accmap/simdrv.c.
 *
 * Everything is aligned to sysconf(_SC_PAGESIZE): the tests run with 4
 * and 16 KiB CPU pages (the GPU's granule stays 4 KiB).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/userfaultfd.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "svm_util.h"
#include "tap.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif

#define NOBODY			65534
#define SZ_2M			(2UL << 20)
/* A run's fault_status: access in bits 9:8, the fault kind in 7:0. */
#define ACCESS_READ		2
#define ACCESS_WRITE		3
#define FAULT_TRANSLATION	0xc0
#define FAULT_PERMISSION	0xc8

static size_t ps;

/* For printing: uint64_t is not unsigned long long everywhere. */
static unsigned long long ull(uint64_t v)
{
	return v;
}

static uintptr_t align_up(uintptr_t v, uintptr_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * A job that must stop with an MMU fault at @addr, an @access (ACCESS_*)
 * fault of either kind (translation, or permission where the GPU had a
 * read-only entry), unless @kind says which.
 */
static bool job_faults(struct svm *t, const struct accmap_sim_job *job, uint64_t addr,
		       unsigned int access, unsigned int kind, const char *what)
{
	struct accmap_replay_run r;
	int ret = svm_job(t, job, &r);
	unsigned int st = r.fault_status;
	bool ok;

	if (!CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT,
		   "%s: run %s, reason %u; expected EIO and an MMU fault at %#llx", what,
		   err_name(ret), r.reason, ull(addr)))
		return false;
	ok = CHECK(r.fault_addr == addr, "%s: fault at %#llx, expected %#llx", what,
		   ull(r.fault_addr), ull(addr));
	ok &= CHECK((st >> 8 & 3) == access, "%s: FAULTSTATUS %#x: access %u, expected %u", what,
		    st, st >> 8 & 3, access);
	ok &= CHECK((st & 0xf0) == 0xc0 && (st & 7) <= 3 && (!kind || (st & 0xf8) == kind),
		    "%s: FAULTSTATUS %#x is not a %s fault", what, st,
		    kind == FAULT_TRANSLATION ? "translation" :
		    kind == FAULT_PERMISSION ? "permission" : "translation or permission");
	return ok;
}

/* ==== anonymous memory ==== */

/* A and B filled by the CPU, C = A + B by the GPU, every word checked. */
static void test_anon_read_write(void)
{
	size_t len = 64 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *b = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q;
	struct svm t = { .dev = -1 };
	size_t bad;

	if (!a || !b || !c || !svm_open(&t))
		goto out;
	fill_words(a, n, 1);
	for (size_t i = 0; i < n; i++)
		b[i] = 7;
	/* C is never touched by the CPU: the GPU's writes fault it in. */
	job = vadd(a, b, c, (uint32_t)n);
	if (!job_ok(&t, &job, "C = A + B over anonymous memory"))
		goto out;
	bad = check_words(c, n, 1, 7);
	CHECK(bad == n, "C[%zu] = %#x, expected %#x", bad, bad < n ? c[bad] : 0,
	      word(1, bad) + 7);
	CHECK(check_words(a, n, 1, 0) == n && check_value(b, n, 7) == n,
	      "A or B changed by a job that only reads them");
	if (svm_query(&t, &q)) {
		tap_diag("%zu bytes each: %llu faults, %llu pages mapped, %llu bytes mapped",
			 len, ull(q.faults), ull(q.pages_mapped), ull(q.mapped_bytes));
		CHECK(q.faults > 0 && q.pages_mapped >= 3 * len / ps && q.fatal_faults == 0,
		      "QUERY after the job: faults %llu, pages_mapped %llu, fatal %llu",
		      ull(q.faults), ull(q.pages_mapped),
		      ull(q.fatal_faults));
		CHECK(q.mapped_bytes >= 3 * len, "mapped_bytes %llu < %zu",
		      ull(q.mapped_bytes), 3 * len);
	}
	/* Again, with new data in A: the GPU's entries see the CPU's writes. */
	fill_words(a, n, 2);
	if (job_ok(&t, &job, "the same job after the CPU rewrote A")) {
		bad = check_words(c, n, 2, 7);
		CHECK(bad == n, "second run: C[%zu] = %#x, expected %#x", bad,
		      bad < n ? c[bad] : 0, word(2, bad) + 7);
	}
out:
	svm_close(&t);
}

/* Memory the CPU never touched reads as zeros, and stays so. */
static void test_zero_page(void)
{
	size_t len = 32 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *b = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	size_t bad;

	if (!a || !b || !c || !svm_open(&t))
		goto out;
	memset(c, 0xff, len);
	job = vadd(a, b, c, (uint32_t)n);
	if (!job_ok(&t, &job, "C = A + B with A and B never touched"))
		goto out;
	bad = check_value(c, n, 0);
	CHECK(bad == n, "C[%zu] = %#x: untouched memory did not read 0", bad,
	      bad < n ? c[bad] : 0);
	CHECK(check_value(a, n, 0) == n && check_value(b, n, 0) == n,
	      "the CPU reads non-zero in A or B after the GPU read them");
	/* The CPU's first write after the GPU read the zero page. */
	a[5] = 42;
	if (job_ok(&t, &job, "the job after the CPU wrote A[5]"))
		CHECK(c[5] == 42 && c[4] == 0 && c[6] == 0,
		      "C[4..6] = %#x %#x %#x, expected 0 42 0", c[4], c[5], c[6]);
out:
	svm_close(&t);
}

/* ==== protections ==== */

static void test_prot_none(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_NONE);
	uint32_t *b = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q0, q;
	struct svm t = { .dev = -1 };

	if (!a || !b || !c || !svm_open(&t) || !svm_query(&t, &q0))
		goto out;
	job = vadd(a, b, c, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)a, ACCESS_READ, FAULT_TRANSLATION, "reading PROT_NONE");
	/* The GPU writes to PROT_NONE fault too. */
	job = vadd(b, b, a + n / 2, (uint32_t)(n / 2));
	job_faults(&t, &job, (uintptr_t)(a + n / 2), ACCESS_WRITE, 0, "writing PROT_NONE");
	if (svm_query(&t, &q))
		CHECK(q.fatal_faults >= q0.fatal_faults + 2,
		      "fatal_faults %llu after two fatal faults, %llu before",
		      ull(q.fatal_faults), ull(q0.fatal_faults));
	/* A soft reset, and the session works: mprotect, then the read is fine. */
	if (CHECK_OK(mprotect(a, len, PROT_READ | PROT_WRITE))) {
		fill_words(a, n, 3);
		job = vadd(a, b, c, (uint32_t)n);
		if (job_ok(&t, &job, "reading A after mprotect(PROT_READ | PROT_WRITE)"))
			CHECK(check_words(c, n, 3, 0) == n, "C is not A after mprotect");
	}
out:
	svm_close(&t);
}

static void test_unmapped(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *a = map_anon(2 * len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	uint32_t *hole;
	struct svm t = { .dev = -1 };

	if (!a || !c || !svm_open(&t))
		goto out;
	hole = a + n;
	if (!CHECK_OK(munmap(hole, len)))
		goto out;
	fill_words(a, n, 4);
	job = vadd(hole, a, c, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)hole, ACCESS_READ, FAULT_TRANSLATION,
		   "reading an unmapped page");
	/* A read that runs from mapped memory into the hole faults at its first byte. */
	job = vadd(a + n / 2, a, c, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)hole, ACCESS_READ, FAULT_TRANSLATION,
		   "reading across the end of a mapping");
	job = vadd(a, a, hole + 3, 1);
	job_faults(&t, &job, (uintptr_t)(hole + 3), ACCESS_WRITE, FAULT_TRANSLATION,
		   "writing inside an unmapped page");
	job = vadd(a, a, c, (uint32_t)n);
	if (job_ok(&t, &job, "a good job after the faults")) {
		size_t i;

		for (i = 0; i < n && c[i] == 2 * word(4, i); i++)
			;
		CHECK(i == n, "C[%zu] = %#x after the faults, expected %#x", i, i < n ? c[i] : 0,
		      i < n ? 2 * word(4, i) : 0);
	}
out:
	svm_close(&t);
}

/* A read-only VMA: the GPU reads it, its writes fault, then mprotect. */
static void test_read_only(void)
{
	size_t len = 8 * ps, n = len / 4;
	uint32_t *ro = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *b = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	size_t bad;

	if (!ro || !b || !c || !svm_open(&t))
		goto out;
	fill_words(ro, n, 5);
	fill_words(b, n, 6);
	if (!CHECK_OK(mprotect(ro, len, PROT_READ)))
		goto out;
	job = vadd(ro, ro, c, (uint32_t)n);
	if (job_ok(&t, &job, "reading a read-only VMA")) {
		for (bad = 0; bad < n && c[bad] == 2 * word(5, bad); bad++)
			;
		CHECK(bad == n, "C[%zu] = %#x from the read-only A", bad, bad < n ? c[bad] : 0);
	}
	/* The GPU has read-only entries there now: a write is a permission fault. */
	job = vadd(b, b, ro, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)ro, ACCESS_WRITE, 0, "writing a read-only VMA");
	bad = check_words(ro, n, 5, 0);
	CHECK(bad == n, "the read-only VMA changed at word %zu: %#x", bad, bad < n ? ro[bad] : 0);

	if (!CHECK_OK(mprotect(ro, len, PROT_READ | PROT_WRITE)))
		goto out;
	/*
	 * The job whose write faulted stays stopped: the TLB flush that
	 * mprotect's invalidation sends the GPU must not resume it behind the
	 * run that reported its fault.  Given time, a resumed job would fault
	 * again, be serviced (the VMA is writable now) and write the VMA.
	 */
	usleep(50000);
	bad = check_words(ro, n, 5, 0);
	CHECK(bad == n, "after mprotect RW, before a run: word %zu = %#x, the failed job wrote it",
	      bad, bad < n ? ro[bad] : 0);
	if (job_ok(&t, &job, "writing it after mprotect(PROT_READ | PROT_WRITE)")) {
		for (bad = 0; bad < n && ro[bad] == 2 * word(6, bad); bad++)
			;
		CHECK(bad == n, "after mprotect RW: word %zu = %#x, expected %#x", bad,
		      bad < n ? ro[bad] : 0, bad < n ? 2 * word(6, bad) : 0);
	}
out:
	svm_close(&t);
}

/* ==== files ==== */

static int memfd_with(size_t len, uint32_t seed)
{
	uint32_t *buf = malloc(len);
	int fd = memfd_create("accmap_svm", MFD_CLOEXEC);
	bool ok;

	if (!CHECK(fd >= 0 && buf, "memfd_create: %s", strerror(errno))) {
		free(buf);
		return -1;
	}
	fill_words(buf, len / 4, seed);
	ok = CHECK(pwrite(fd, buf, len, 0) == (ssize_t)len, "pwrite to the memfd: %s",
		   strerror(errno));
	free(buf);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* pread of the file against seed's words + @add; true if all match. */
static bool file_is(int fd, size_t len, uint32_t seed, uint32_t add, const char *what)
{
	uint32_t *buf = malloc(len);
	size_t bad = len / 4;
	bool ok;

	if (!CHECK(buf, "malloc"))
		return false;
	ok = CHECK(pread(fd, buf, len, 0) == (ssize_t)len, "pread: %s", strerror(errno));
	if (ok) {
		bad = check_words(buf, len / 4, seed, add);
		ok = CHECK(bad == len / 4, "%s: pread word %zu = %#x, expected %#x", what, bad,
			   bad < len / 4 ? buf[bad] : 0, word(seed, bad) + add);
	}
	free(buf);
	return ok;
}

/* @len bytes of memfd @fd mapped read-write with @flags; NULL (a failed check) if not. */
static uint32_t *map_memfd(int fd, size_t len, int flags)
{
	void *f = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	if (!CHECK(f != MAP_FAILED, "mmap of the memfd (flags %#x): %s", flags, strerror(errno)))
		return NULL;
	return f;
}

/* MAP_SHARED tmpfs (memfd): the GPU reads the file's data and writes it. */
static void test_shared_file(void)
{
	size_t len = 16 * ps, n = len / 4;
	uint32_t *ones = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *f = NULL;
	struct accmap_sim_job job;
	int fd = memfd_with(len, 7);
	struct svm t = { .dev = -1 };

	if (fd < 0 || !ones || !c || !CHECK_OK(ftruncate(fd, (off_t)len)))
		goto out;
	f = map_memfd(fd, len, MAP_SHARED);
	if (!f || !svm_open(&t))
		goto out;
	for (size_t i = 0; i < n; i++)
		ones[i] = 1;
	job = vadd(f, ones, c, (uint32_t)n);
	if (job_ok(&t, &job, "reading a MAP_SHARED memfd the CPU never touched"))
		CHECK(check_words(c, n, 7, 1) == n, "C is not the file's data + 1");
	/* The GPU writes the file through the mapping: pread() sees it. */
	job = vadd(f, ones, f, (uint32_t)n);
	if (job_ok(&t, &job, "file += 1 through the MAP_SHARED mapping"))
		file_is(fd, len, 7, 1, "after the GPU's write");
	/* And the CPU's pwrite() is what the GPU reads next. */
	{
		uint32_t *buf = malloc(len);

		if (CHECK(buf, "malloc")) {
			fill_words(buf, n, 8);
			if (CHECK(pwrite(fd, buf, len, 0) == (ssize_t)len, "pwrite"))  {
				job = vadd(f, ones, c, (uint32_t)n);
				if (job_ok(&t, &job, "reading the file after pwrite()"))
					CHECK(check_words(c, n, 8, 1) == n,
					      "the GPU did not see the pwrite()");
			}
			free(buf);
		}
	}
	svm_close(&t);
out:
	if (f)
		munmap(f, len);
	if (fd >= 0)
		close(fd);
}

/* MAP_PRIVATE file: the GPU's write COWs, the file stays as it was. */
static void test_private_file_cow(void)
{
	size_t len = 8 * ps, n = len / 4;
	uint32_t *ones = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *f = NULL;
	struct accmap_sim_job job;
	int fd = memfd_with(len, 9);
	struct svm t = { .dev = -1 };

	if (fd < 0 || !ones || !c)
		goto out;
	f = map_memfd(fd, len, MAP_PRIVATE);
	if (!f || !svm_open(&t))
		goto out;
	for (size_t i = 0; i < n; i++)
		ones[i] = 1;
	/* First a read: the GPU maps the file's pages, read-only. */
	job = vadd(f, ones, c, (uint32_t)n);
	if (job_ok(&t, &job, "reading a MAP_PRIVATE file mapping"))
		CHECK(check_words(c, n, 9, 1) == n, "C is not the file's data + 1");
	/* Then a write: COW, the process's copy changes, the file does not. */
	job = vadd(f, ones, f, (uint32_t)n);
	if (job_ok(&t, &job, "private mapping += 1 by the GPU")) {
		size_t bad = check_words(f, n, 9, 1);

		CHECK(bad == n, "the private mapping's word %zu = %#x, expected %#x", bad,
		      bad < n ? f[bad] : 0, word(9, bad) + 1);
		file_is(fd, len, 9, 0, "the file after the GPU wrote its private mapping");
	}
	svm_close(&t);
out:
	if (f)
		munmap(f, len);
	if (fd >= 0)
		close(fd);
}

/* ==== fork ==== */

static void test_fork_cow(void)
{
	size_t len = 8 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q0, q;
	int go[2] = { -1, -1 }, done[2] = { -1, -1 };
	struct svm t = { .dev = -1 };
	char byte;
	pid_t pid;

	if (!a || !zero || !c || !svm_open(&t) || !CHECK_OK(pipe(go)) || !CHECK_OK(pipe(done)))
		goto out;
	fill_words(a, n, 10);
	job = vadd(a, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading A before the fork") ||
	    !CHECK(check_words(c, n, 10, 0) == n, "C is not A before the fork") ||
	    !svm_query(&t, &q0))
		goto out;

	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		struct accmap_replay_run r;
		struct accmap_svm_op cq;
		int ret;

		/* The parent's session, through the inherited fd: not ours. */
		ret = svm_job(&t, &job, &r);
		CHECK(ret == -EPERM, "a run of the parent's SVM session from the child: %s",
		      err_name(ret));
		ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, &cq);
		CHECK(ret == -EPERM, "SVM QUERY of the parent's session from the child: %s",
		      err_name(ret));
		if (write(done[1], "c", 1) != 1 || read(go[0], &byte, 1) != 1)
			_exit(1);
		/* The child's A is still the one before the parent's write. */
		CHECK(check_words(a, n, 10, 0) == n, "the child's A changed");
		_exit(0);
	}
	if (!CHECK(read(done[0], &byte, 1) == 1, "the child did not report"))
		goto reap;
	/* The parent writes: its page is copied; the child keeps the old one. */
	fill_words(a, n, 11);
	if (job_ok(&t, &job, "reading A after the parent's COW write")) {
		size_t bad = check_words(c, n, 11, 0);

		CHECK(bad == n, "the GPU read %#x at word %zu of A, expected the parent's new %#x",
		      bad < n ? c[bad] : 0, bad, word(11, bad));
	}
	if (svm_query(&t, &q))
		CHECK(q.invalidations > q0.invalidations,
		      "invalidations %llu after fork and COW, %llu before",
		      ull(q.invalidations), ull(q0.invalidations));
reap:
	child_go_reap(pid, go[1]);
out:
	close_pair(go);
	close_pair(done);
	svm_close(&t);
}

/* MAP_SHARED anonymous memory: the child's CPU write is what the parent's GPU reads. */
static void test_fork_shared(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	int status;
	pid_t pid;

	if (!CHECK(sh != MAP_FAILED, "mmap MAP_SHARED | MAP_ANONYMOUS: %s", strerror(errno)) ||
	    !zero || !c || !svm_open(&t))
		goto out;
	fill_words(sh, n, 30);
	job = vadd(sh, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading shared memory before the fork") ||
	    !CHECK(check_words(c, n, 30, 0) == n, "C is not the shared memory"))
		goto out;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		fill_words(sh, n, 31);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	if (job_ok(&t, &job, "reading shared memory the child rewrote")) {
		size_t bad = check_words(c, n, 31, 0);

		CHECK(bad == n, "the GPU read %#x at word %zu, the child wrote %#x",
		      bad < n ? c[bad] : 0, bad, word(31, bad));
	}
out:
	svm_close(&t);
}

/* ==== changes while a job runs ==== */

/* Waits until thread @tid sleeps in ioctl(2), up to 5 s. */
static bool wait_in_ioctl(pid_t tid)
{
	for (int i = 0; i < 500; i++) {
		if (in_syscall(tid) == SYS_ioctl)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* The long job: at most a 512x512x512 matmul (ACCMAP_SIM_MACS_MAX MACs). */
#define LONG_DIM		512
#define LONG_MS			1000

/*
 * The side of the long matmul: one that takes about LONG_MS here (a
 * 128-cube one is timed first; the time grows with the cube of the
 * side), at most LONG_DIM, so that a chain of two stays well within a
 * run's timeout on slow (debug) kernels too.  0 if the timing job failed.
 */
static uint32_t long_dim(struct svm *t)
{
	const uint64_t d0 = 128;
	int32_t *a = calloc(d0 * d0, 4), *c = malloc(d0 * d0 * 4);
	struct accmap_sim_job job;
	uint32_t dim = 0;
	uint64_t t0, us;

	if (!CHECK(a && c, "malloc"))
		goto out;
	job = matmul(a, a, c, (uint32_t)d0, (uint32_t)d0, (uint32_t)d0);
	t0 = now_ns();
	if (!job_ok(t, &job, "a 128-cube matmul"))
		goto out;
	us = (now_ns() - t0) / 1000 + 1;
	for (dim = (uint32_t)d0; dim < LONG_DIM; dim += 16) {
		uint64_t next = dim + 16;

		if (us * next * next * next / (d0 * d0 * d0) > LONG_MS * 1000ULL)
			break;
	}
out:
	free(a);
	free(c);
	return dim;
}

struct unmap_arg {
	pid_t tid;
	void *addr;
	size_t len;
	unsigned int delay_us;
	int ret;
	uint64_t at_ns, done_ns;
	bool watch;
};

/* Kernel stacks of the tasks whose stack mentions accmap: what a hung job waits for. */
static void dump_accmap_stacks(void)
{
	char path[600], buf[4096];
	struct dirent *p, *t;
	DIR *procs = opendir("/proc"), *tasks;

	while (procs && (p = readdir(procs))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		while (tasks && (t = readdir(tasks))) {
			ssize_t n;
			int fd;

			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stack", p->d_name,
				 t->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			if (strstr(buf, "accmap") || strstr(buf, "sim_") || strstr(buf, "svm"))
				tap_diag("task %s/%s:\n%s", p->d_name, t->d_name, buf);
		}
		if (tasks)
			closedir(tasks);
	}
	if (procs)
		closedir(procs);
}

static void *unmap_thread(void *p)
{
	struct unmap_arg *u = p;

	if (!wait_in_ioctl(u->tid))
		tap_diag("could not see the job's thread in ioctl(2)");
	usleep(u->delay_us ? u->delay_us : 20 * 1000);
	u->at_ns = now_ns();
	u->ret = munmap(u->addr, u->len) ? -errno : 0;
	u->done_ns = now_ns();
	/* A job still running 3 s on: say where the kernel is. */
	if (u->watch) {
		for (int i = 0; i < 300 && in_syscall(u->tid) == SYS_ioctl; i++)
			usleep(10 * 1000);
		if (in_syscall(u->tid) == SYS_ioctl) {
			tap_diag("the job still runs 3 s after the munmap; kernel stacks:");
			dump_accmap_stacks();
		}
	}
	return NULL;
}

/*
 * B is unmapped while a chain of three jobs runs: job 0 (C0 = A x A) does
 * not touch B, job 1 (C = A x B) reads B whole before it computes, job 2
 * (D = B + 0, its first ACCMAP_SIM_DIM_MAX words) reads it again.  Each
 * matmul takes hundreds of milliseconds (timed here first), so a munmap
 * timed into job 0 must make job 1 fault on B with C untouched ("before"),
 * and one timed into job 1's compute must leave job 1 done with the old
 * data and job 2 faulting at B ("between"): the two sides of the race,
 * each forced by where the munmap lands.  Rounds alternate between the
 * two aims, and a round that missed its aim (the guest ran slower or
 * faster than timed) moves that aim's delay by a quarter of a matmul for
 * the next; every outcome is counted and both must occur, in at least
 * JOB_ROUNDS_MIN rounds and at most JOB_ROUNDS_MAX.  A chain that
 * completes whole ("after", the munmap later than planned) is allowed but
 * proves nothing; anything else fails: a job reading B after the munmap,
 * or C or D written with other data.
 */
#define JOB_ROUNDS_MIN		4
#define JOB_ROUNDS_MAX		12
#define GARBAGE_WORD		0xa5a5a5a5U

enum { OUT_BEFORE, OUT_BETWEEN, OUT_AFTER, OUT_KINDS };

/* Whether @r is a read fault inside [@p, @p + @len). */
static bool read_fault_in(const struct accmap_replay_run *r, const void *p, size_t len)
{
	return r->reason == ACCMAP_REPLAY_MMU_FAULT && r->fault_addr >= (uintptr_t)p &&
	       r->fault_addr < (uintptr_t)p + len && (r->fault_status >> 8 & 3) == ACCESS_READ;
}

static void test_munmap_during_job(void)
{
	const size_t elems = LONG_DIM * LONG_DIM, mlen = align_up(elems * 4, ps);
	const size_t dn = ACCMAP_SIM_DIM_MAX, dlen = align_up(dn * 4, ps);
	uint8_t *ab = map_anon(2 * mlen, PROT_READ | PROT_WRITE);
	int32_t *c = map_anon(mlen, PROT_READ | PROT_WRITE), *want = malloc(elems * 4);
	int32_t *c0 = map_anon(mlen, PROT_READ | PROT_WRITE);
	uint32_t *d = map_anon(dlen, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(dlen, PROT_READ | PROT_WRITE);
	struct simdrv_workload w = { .op = ACCMAP_SIM_OP_MATMUL_I32 };
	static const char *const names[OUT_KINDS] = { "before", "between", "after" };
	unsigned int count[OUT_KINDS] = { 0 }, round;
	struct accmap_sim_job job, chain[3];
	uint64_t delay_us[2];
	struct accmap_replay_run r;
	uint64_t t0, job_us;
	int32_t *a, *b;
	struct svm t = { .dev = -1 };
	bool b_mapped = true;
	size_t ce;
	uint32_t dim;
	int ret;

	if (!ab || !c || !c0 || !d || !zero || !CHECK(want, "malloc") || !svm_open(&t))
		goto out;
	dim = long_dim(&t);
	if (!dim)
		goto out;
	ce = (size_t)dim * dim;
	w.m = dim;
	w.n = dim;
	w.k = dim;
	a = (int32_t *)ab;
	b = (int32_t *)(ab + mlen);
	fill_words((uint32_t *)a, elems, 12);
	fill_words((uint32_t *)b, elems, 13);
	simdrv_reference(&w, a, b, want);
	job = matmul(a, b, c, dim, dim, dim);
	/* Once, whole: how long a matmul takes here. */
	t0 = now_ns();
	if (!job_ok(&t, &job, "the long matmul"))
		goto out;
	job_us = (now_ns() - t0) / 1000;
	tap_diag("%ux%ux%u matmul: %llu ms", dim, dim, dim, ull(job_us / 1000));
	CHECK(!memcmp(c, want, ce * 4), "the matmul differs from the CPU's");
	chain[0] = matmul(a, a, c0, dim, dim, dim);
	chain[1] = job;
	chain[2] = vadd(b, zero, d, (uint32_t)dn);

	/* Half into job 0, or half into job 1's compute. */
	delay_us[0] = job_us / 2;
	delay_us[1] = job_us * 3 / 2;
	for (round = 0; round < JOB_ROUNDS_MAX &&
	     (round < JOB_ROUNDS_MIN || !count[OUT_BEFORE] || !count[OUT_BETWEEN]); round++) {
		struct unmap_arg u = { .tid = (pid_t)syscall(SYS_gettid) };
		unsigned int aim = round & 1, kind = OUT_KINDS;
		pthread_t th;
		uint64_t t1;

		if (!b_mapped) {
			if (!CHECK(mmap(b, mlen, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b,
				   "mapping B again: %s", strerror(errno)))
				break;
			fill_words((uint32_t *)b, elems, 13);
			b_mapped = true;
		}
		for (size_t i = 0; i < ce; i++)
			c[i] = (int32_t)GARBAGE_WORD;
		for (size_t i = 0; i < dn; i++)
			d[i] = GARBAGE_WORD;
		u.addr = b;
		u.len = mlen;
		u.delay_us = (unsigned int)delay_us[aim];
		if (!CHECK(pthread_create(&th, NULL, unmap_thread, &u) == 0, "pthread_create"))
			break;
		t0 = now_ns();
		ret = svm_chain(&t, chain, 3, &r);
		t1 = now_ns();
		pthread_join(th, NULL);
		b_mapped = false;
		if (!CHECK(u.ret == 0, "munmap from the other thread: %s", err_name(u.ret)))
			break;
		if (ret == -EIO && read_fault_in(&r, b, mlen) &&
		    job_status_at(&t, 0) == SIMDRV_JOB_STATUS_DONE &&
		    job_status_at(&t, 1) != SIMDRV_JOB_STATUS_DONE &&
		    check_value((uint32_t *)c, ce, GARBAGE_WORD) == ce)
			kind = OUT_BEFORE;
		else if (ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT &&
			 r.fault_addr == (uintptr_t)b &&
			 job_status_at(&t, 1) == SIMDRV_JOB_STATUS_DONE &&
			 job_status_at(&t, 2) != SIMDRV_JOB_STATUS_DONE &&
			 !memcmp(c, want, ce * 4) && check_value(d, dn, GARBAGE_WORD) == dn)
			kind = OUT_BETWEEN;
		else if (ret == 0 && job_status(&t) == SIMDRV_JOB_STATUS_DONE &&
			 !memcmp(c, want, ce * 4) && check_words(d, dn, 13, 0) == dn)
			kind = OUT_AFTER;
		if (!CHECK(kind < OUT_KINDS,
			   "round %u (munmap %u ms in, the chain ran %llu ms): run %s, reason %u, fault at %#llx status %#x, job statuses %#x %#x %#x, C[0] %#x (old %#x), D[0] %#x",
			   round, u.delay_us / 1000, ull((t1 - t0) / 1000000), err_name(ret),
			   r.reason, ull(r.fault_addr), r.fault_status, job_status_at(&t, 0),
			   job_status_at(&t, 1), job_status_at(&t, 2), (uint32_t)c[0],
			   (uint32_t)want[0], d[0]))
			break;
		count[kind]++;
		tap_diag("round %u: munmap %u ms in (aimed %s), the chain ran %llu ms: %s", round,
			 u.delay_us / 1000, names[aim], ull((t1 - t0) / 1000000), names[kind]);
		if (kind < aim && delay_us[aim] + job_us / 4 < 3 * job_us)
			delay_us[aim] += job_us / 4;
		else if (kind > aim && delay_us[aim] > job_us / 4)
			delay_us[aim] -= job_us / 4;
	}
	tap_diag("%u rounds: %u before job 1 read B, %u between jobs 1 and 2, %u after the chain",
		 round, count[OUT_BEFORE], count[OUT_BETWEEN], count[OUT_AFTER]);
	CHECK(count[OUT_BEFORE] && count[OUT_BETWEEN],
	      "the munmap never landed %s: each side of the race must be seen",
	      count[OUT_BEFORE] ? "between job 1 and job 2" : "before job 1 read B");
	if (b_mapped && !CHECK_OK(munmap(b, mlen)))
		goto out;
	/* No GPU entry is left for B: reading it now faults at its first byte. */
	job = vadd(b, a, c, 16);
	job_faults(&t, &job, (uintptr_t)b, ACCESS_READ, FAULT_TRANSLATION,
		   "reading the unmapped half after the job");
	/* And the first half still works. */
	job = vadd(a, a, c, (uint32_t)(mlen / 4));
	if (job_ok(&t, &job, "reading the mapped half after the job")) {
		size_t i;

		for (i = 0; i < mlen / 4 && c[i] == (int32_t)(2 * word(12, i)); i++)
			;
		CHECK(i == mlen / 4, "C[%zu] = %#x, expected %#x", i, i < mlen / 4 ? c[i] : 0,
		      i < mlen / 4 ? 2 * word(12, i) : 0);
	}
	ab = NULL;	/* half of it is gone; the rest goes at exit */
out:
	free(want);
	svm_close(&t);
}

static void test_mremap(void)
{
	size_t len = 8 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	uint8_t *dst = map_anon(len, PROT_NONE);
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	void *moved;

	if (!a || !zero || !c || !dst || !svm_open(&t))
		goto out;
	fill_words(a, n, 14);
	job = vadd(a, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading A before mremap"))
		goto out;
	moved = mremap(a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (!CHECK(moved == dst, "mremap to %p: %s", (void *)dst, strerror(errno)))
		goto out;
	memset(c, 0, len);
	job = vadd(moved, zero, c, (uint32_t)n);
	if (job_ok(&t, &job, "reading A at its new address"))
		CHECK(check_words(c, n, 14, 0) == n, "the GPU read other data at the new address");
	job = vadd(a, zero, c, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)a, ACCESS_READ, FAULT_TRANSLATION,
		   "reading A's old address after mremap");
out:
	svm_close(&t);
}

/*
 * A session over part of the address space: the descriptor and C inside,
 * A mapped but outside the range.  The GPU cannot see it: a fault there.
 */
static void test_outside_range(void)
{
	size_t len = 8 * ps, n = ps / 4;
	uint8_t *r = map_anon(len + 2 * ps, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	uint32_t *in, *below, *above;

	if (!r)
		goto out;
	below = (uint32_t *)r;
	in = (uint32_t *)(r + ps);
	above = (uint32_t *)(r + ps + len);
	fill_words(below, n, 32);
	fill_words(in, n, 33);
	fill_words(above, n, 34);
	if (!svm_open_range(&t, (uintptr_t)in, len))
		goto out;
	/* The descriptor too must lie in the range. */
	free(t.desc);
	t.desc = (uint8_t *)in + len - ps;
	job = vadd(in, in, in + n, (uint32_t)n);
	if (job_ok(&t, &job, "a job inside the range")) {
		size_t i;

		for (i = 0; i < n && in[n + i] == 2 * word(33, i); i++)
			;
		CHECK(i == n, "C[%zu] wrong inside the range", i);
	}
	job = vadd(below, in, in + n, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)below, ACCESS_READ, FAULT_TRANSLATION,
		   "reading the page below the range");
	job = vadd(in, in, above, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)above, ACCESS_WRITE, FAULT_TRANSLATION,
		   "writing the page above the range");
	CHECK(check_words(above, n, 34, 0) == n, "the page above the range changed");
	t.desc = NULL;
out:
	svm_close(&t);
}

/* ==== THP (a test only where the kernel has them: main()) ==== */

static unsigned long thp_size(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* AnonHugePages of the mapping that contains @addr, in kB; -1 if not found. */
static long anon_huge_kb(const void *addr)
{
	unsigned long lo, hi, a = (uintptr_t)addr;
	bool in = false;
	char line[512];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line: "lo-hi perms ...". */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void test_thp(void)
{
	unsigned long huge = thp_size();
	size_t len, n = SZ_2M / 4;
	uint8_t *raw = NULL, *h;
	uint32_t *zero = map_anon(SZ_2M, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(SZ_2M, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q;
	struct svm t = { .dev = -1 };
	long kb;

	if (!huge) {
		tap_skip("no THP: /sys/kernel/mm/transparent_hugepage/hpage_pmd_size unreadable");
		goto out;
	}
	len = 2 * huge;
	raw = map_anon(len, PROT_READ | PROT_WRITE);
	if (!raw || !zero || !c)
		goto out;
	h = (uint8_t *)align_up((uintptr_t)raw, huge);
	if (!CHECK_OK(madvise(h, huge, MADV_HUGEPAGE)))
		goto out;
	fill_words((uint32_t *)h, huge / 4, 15);
	kb = anon_huge_kb(h);
	tap_diag("THP size %lu KiB; AnonHugePages of the region: %ld kB", huge >> 10, kb);
	if (kb < (long)(huge >> 10)) {
		tap_skip("the kernel gave no %lu KiB huge page (AnonHugePages %ld kB): not tested",
			 huge >> 10, kb);
		goto out;
	}
	if (!svm_open(&t))
		goto out;
	/* The first 2 MiB of the huge page: one 2 MiB GPU block. */
	job = vadd(h, zero, c, (uint32_t)n);
	if (job_ok(&t, &job, "reading 2 MiB of a THP"))
		CHECK(check_words(c, n, 15, 0) == n, "the GPU read other data from the THP");
	if (svm_query(&t, &q)) {
		tap_diag("huge_bytes %llu, mapped_bytes %llu, faults %llu",
			 ull(q.huge_bytes), ull(q.mapped_bytes), ull(q.faults));
		CHECK(q.huge_bytes >= SZ_2M && q.huge_bytes % SZ_2M == 0,
		      "huge_bytes %llu after the GPU read a THP", ull(q.huge_bytes));
	}
	/* The GPU writes it too, and the CPU sees every word. */
	job = vadd(h, h, h, (uint32_t)n);
	if (job_ok(&t, &job, "THP += THP by the GPU")) {
		size_t i;
		uint32_t *w = (uint32_t *)h;

		for (i = 0; i < n && w[i] == 2 * word(15, i); i++)
			;
		CHECK(i == n, "THP word %zu = %#x after the GPU's write, expected %#x", i,
		      i < n ? w[i] : 0, i < n ? 2 * word(15, i) : 0);
	}
out:
	svm_close(&t);
	if (raw)
		munmap(raw, len);
}

/* ==== MADV_DONTNEED ==== */

static void test_dontneed(void)
{
	size_t len = 16 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q0, q;
	struct svm t = { .dev = -1 };
	size_t bad;

	if (!a || !zero || !c || !svm_open(&t))
		goto out;
	fill_words(a, n, 16);
	job = vadd(a, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading A") || !CHECK(check_words(c, n, 16, 0) == n, "C != A") ||
	    !svm_query(&t, &q0))
		goto out;
	if (!CHECK_OK(madvise(a, len, MADV_DONTNEED)))
		goto out;
	memset(c, 0xff, len);
	if (job_ok(&t, &job, "reading A after MADV_DONTNEED")) {
		bad = check_value(c, n, 0);
		CHECK(bad == n, "word %zu = %#x after MADV_DONTNEED: the GPU kept the old page",
		      bad, bad < n ? c[bad] : 0);
	}
	if (svm_query(&t, &q))
		CHECK(q.invalidations > q0.invalidations && q.faults > q0.faults,
		      "invalidations %llu->%llu, faults %llu->%llu across MADV_DONTNEED",
		      ull(q0.invalidations),
		      ull(q.invalidations), ull(q0.faults), ull(q.faults));
out:
	svm_close(&t);
}

/* ==== exit with a job running ==== */

struct long_job {
	struct svm *t;
	struct accmap_sim_job job;
	pid_t tid;
	int ret;
};

static void *long_job_thread(void *p)
{
	struct long_job *lj = p;
	struct accmap_replay_run r;

	__atomic_store_n(&lj->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	lj->ret = svm_job(lj->t, &lj->job, &r);
	return NULL;
}

/* A row of debugfs svm for @pid, or false. */
static bool svm_row_of(pid_t pid, uint32_t session, char *row, size_t len);

/*
 * A child runs a matmul whose C lies in memory it shares with this
 * process (MAP_SHARED, filled with garbage first), and exits partway
 * through it: half the time of one whole matmul it timed first, which
 * faulted its pages in, then a quarter, an eighth... in later rounds (a
 * GPU whose jobs run faster once the pages are mapped, the board's, ends
 * the second job sooner).  The exit must end the job: C, which the job
 * writes only at its end, must still be garbage well after the job's
 * whole time has passed; that is also what shows the exit came mid-job.
 * A round whose C was written (the exit came late) is counted and tried
 * again, up to EXIT_ROUNDS; one mid-job exit is required.
 */
#define EXIT_ROUNDS		6

/* One child's run: 1 the exit came mid-job, 0 the job completed first, -1 failed. */
static int exit_mid_job_round(unsigned int round, int32_t *shared, size_t elems,
			      pid_t *child)
{
	int status = 0, ready[2] = { -1, -1 }, kind = -1;
	char msg[1 + sizeof(uint64_t)] = "";
	uint64_t t0, reap_ns, job_us = 0;
	struct svm t = { .dev = -1 };
	pid_t pid, got = 0;
	size_t garbage;

	for (size_t i = 0; i < elems; i++)
		shared[i] = (int32_t)GARBAGE_WORD;
	if (!CHECK_OK(pipe(ready)))
		return -1;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	*child = pid;
	if (pid == 0) {
		int32_t *a = malloc(elems * 4), *b = malloc(elems * 4), *c = malloc(elems * 4);
		struct accmap_sim_job job;
		struct long_job lj;
		pthread_t th;

		uint32_t dim;

		if (!a || !b || !c || !svm_open(&t))
			_exit(1);
		dim = long_dim(&t);
		if (!dim)
			_exit(1);
		fill_words((uint32_t *)a, elems, 17);
		fill_words((uint32_t *)b, elems, 18);
		job = matmul(a, b, c, dim, dim, dim);
		t0 = now_ns();
		if (!job_ok(&t, &job, "child: a whole matmul"))
			_exit(1);
		job_us = (now_ns() - t0) / 1000;
		lj.t = &t;
		lj.job = matmul(a, b, shared, dim, dim, dim);
		lj.tid = 0;
		if (pthread_create(&th, NULL, long_job_thread, &lj))
			_exit(1);
		while (!__atomic_load_n(&lj.tid, __ATOMIC_SEQ_CST))
			usleep(1000);
		/* Once the job's thread is in the run, halfway through, the process exits. */
		if (!wait_in_ioctl(lj.tid))
			tap_diag("child: could not see the job's thread in ioctl(2)");
		usleep((useconds_t)(job_us >> (round + 1)));
		memcpy(msg + 1, &job_us, sizeof(job_us));
		if (write(ready[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	ready[1] = -1;
	if (CHECK(read(ready[0], msg, sizeof(msg)) == (ssize_t)sizeof(msg),
		  "the child did not start its job"))
		memcpy(&job_us, msg + 1, sizeof(job_us));
	t0 = now_ns();
	while (now_ns() - t0 < 20000000000ULL) {
		got = waitpid(pid, &status, WNOHANG);
		if (got)
			break;
		usleep(5 * 1000);
	}
	reap_ns = now_ns() - t0;
	if (!got) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (!CHECK(got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "the child exiting mid-job: status %#x, reaped %s", status, got ? "yes" : "no"))
		goto out;
	/* Twice the job's time from here: a job still going would have written C. */
	usleep((useconds_t)(2 * job_us));
	garbage = check_value((uint32_t *)shared, elems, GARBAGE_WORD);
	kind = garbage == elems;
	tap_diag("round %u: matmul %llu ms; child exited %llu ms into it, reaped at %llu ms; C %s",
		 round, ull(job_us / 1000), ull((job_us >> (round + 1)) / 1000),
		 ull(reap_ns / 1000000),
		 kind ? "never written: the job ended with the process" :
		 "written: the job completed before the exit");
	if (!kind)
		CHECK(garbage == 0,
		      "C half written (word %zu first not garbage) by a job whose process exited",
		      garbage);
out:
	for (int i = 0; i < 2; i++)
		if (ready[i] >= 0)
			close(ready[i]);
	return kind;
}

static void test_exit_mid_job(void)
{
	const size_t elems = LONG_DIM * LONG_DIM;
	int32_t *shared = map_anon_shared(align_up(elems * 4, ps));
	unsigned int mid = 0, late = 0, round;
	struct svm t = { .dev = -1 };
	pid_t pid = 0;
	char row[512];
	int kind = -1;

	if (!shared)
		return;
	for (round = 0; round < EXIT_ROUNDS && !mid; round++) {
		kind = exit_mid_job_round(round, shared, elems, &pid);
		if (kind < 0)
			break;
		mid += kind == 1;
		late += kind == 0;
	}
	tap_diag("outcomes: %u exits mid-job, %u after the job completed", mid, late);
	if (kind >= 0)
		CHECK(mid > 0, "in %u rounds the child never exited mid-job", round);
	/* The device works, and the child's session is gone. */
	if (svm_open(&t)) {
		uint32_t *a = map_anon(ps, PROT_READ | PROT_WRITE);
		uint32_t *c = map_anon(ps, PROT_READ | PROT_WRITE);

		if (a && c) {
			struct accmap_sim_job job = vadd(a, a, c, (uint32_t)(ps / 4));

			fill_words(a, ps / 4, 19);
			if (job_ok(&t, &job, "a job after the child's exit"))
				CHECK(c[1] == 2 * word(19, 1), "C[1] = %#x", c[1]);
		}
		CHECK(!svm_row_of(pid, 0, row, sizeof(row)),
		      "debugfs svm still has the exited child's session: %s", row);
	}
	svm_close(&t);
	munmap(shared, align_up(elems * 4, ps));
}

/* ==== what only SVM does ==== */

static void test_matmul_malloc(void)
{
	struct simdrv_workload w = { .op = ACCMAP_SIM_OP_MATMUL_I32, .m = 100, .n = 100, .k = 100 };
	int32_t *a = malloc(100 * 100 * 4), *b = malloc(100 * 100 * 4);
	int32_t *c = malloc(100 * 100 * 4), *want = malloc(100 * 100 * 4);
	struct accmap_sim_job job;
	unsigned int seed = 20;
	struct svm t = { .dev = -1 };
	size_t i;

	if (!CHECK(a && b && c && want, "malloc") || !svm_open(&t))
		goto out;
	for (i = 0; i < 100 * 100; i++) {
		a[i] = (int32_t)(rand_r(&seed) % 2001) - 1000;
		b[i] = (int32_t)(rand_r(&seed) % 2001) - 1000;
		c[i] = -1;
	}
	simdrv_reference(&w, a, b, want);
	job = matmul(a, b, c, 100, 100, 100);
	if (!job_ok(&t, &job, "100x100 matmul on malloc'ed arrays"))
		goto out;
	for (i = 0; i < 100 * 100 && c[i] == want[i]; i++)
		;
	CHECK(i == 100 * 100, "C[%zu][%zu] = %d, the CPU says %d", i / 100, i % 100,
	      i < 10000 ? c[i] : 0, i < 10000 ? want[i] : 0);
	tap_diag("A %p, B %p, C %p: no copies, no buffers", (void *)a, (void *)b, (void *)c);
out:
	free(a);
	free(b);
	free(c);
	free(want);
	svm_close(&t);
}

struct node {
	struct node *next;
	int32_t value;
	int32_t pad;
};

/* A list of @count malloc'ed nodes, linked in a shuffled order. */
static struct node *make_list(size_t count, unsigned int seed, int32_t *sum, struct node ***all)
{
	struct node **v = calloc(count, sizeof(*v));
	uint32_t s = 0;

	*all = v;
	if (!CHECK(v, "calloc"))
		return NULL;
	for (size_t i = 0; i < count; i++) {
		v[i] = malloc(sizeof(struct node));
		if (!CHECK(v[i], "malloc of node %zu", i))
			return NULL;
		v[i]->value = (int32_t)rand_r(&seed) - RAND_MAX / 2;
		v[i]->pad = 0;
		s += (uint32_t)v[i]->value;
	}
	for (size_t i = count - 1; i > 0; i--) {
		size_t j = (size_t)rand_r(&seed) % (i + 1);
		struct node *x = v[i];

		v[i] = v[j];
		v[j] = x;
	}
	for (size_t i = 0; i < count; i++)
		v[i]->next = i + 1 < count ? v[i + 1] : NULL;
	*sum = (int32_t)s;
	return v[0];
}

static void free_list(struct node **all, size_t count)
{
	if (!all)
		return;
	for (size_t i = 0; i < count; i++)
		free(all[i]);
	free(all);
}

static void test_list_sum(void)
{
	const size_t count = 10000;
	struct node **all = NULL, *head;
	struct accmap_sim_job job;
	int32_t sum = 0, cpu = 0;
	uint32_t *out = malloc(8);
	struct svm t = { .dev = -1 };

	head = make_list(count, 21, &sum, &all);
	if (!head || !CHECK(out, "malloc") || !svm_open(&t))
		goto out;
	/* The CPU walks it too: the list is what make_list() summed. */
	for (struct node *p = head; p; p = p->next)
		cpu = (int32_t)((uint32_t)cpu + (uint32_t)p->value);
	CHECK(cpu == sum, "the CPU's walk sums %d, the nodes %d", cpu, sum);
	out[0] = 0xdeadbeef;
	out[1] = 0xdeadbeef;
	simdrv_list_sum_job(&job, (uintptr_t)head, offsetof(struct node, next),
			    offsetof(struct node, value), ACCMAP_SIM_ELEMS_MAX, (uintptr_t)out);
	if (job_ok(&t, &job, "LIST_SUM over 10,000 malloc'ed nodes"))
		CHECK((int32_t)out[0] == cpu && out[1] == count,
		      "the GPU's sum %d over %u nodes; the CPU's %d over %zu", (int32_t)out[0],
		      out[1], cpu, count);
	/* A list longer than the limit the job gives fails the job, not the run. */
	simdrv_list_sum_job(&job, (uintptr_t)head, offsetof(struct node, next),
			    offsetof(struct node, value), 16, (uintptr_t)out);
	{
		struct accmap_replay_run r;
		int ret;

		/* No DONE interrupt comes: the failed job ends the run's wait. */
		simdrv_encode_job(t.desc, &job, 0);
		t.jobs = 1;
		ret = simdrv_svm_run(&t.sim, t.desc, 1000000, &r);
		CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_JOB_FAILED &&
		      r.fault_status == 0x58 && r.fault_addr == (uintptr_t)t.desc &&
		      job_status(&t) == 0x58,
		      "a list longer than n: run %s, reason %u, JS_STATUS %#x at %#llx, job status %#x; expected EIO, JOB_FAILED and 0x58 at the descriptor",
		      err_name(ret), r.reason, r.fault_status, (unsigned long long)r.fault_addr,
		      job_status(&t));
	}
	/*
	 * A list whose second node sits in a page that is then unmapped: the
	 * walk faults inside that node (at its next pointer or its value,
	 * whichever the model reads first).
	 */
	{
		uint8_t *page = map_anon(ps, PROT_READ | PROT_WRITE);
		struct node *first = malloc(sizeof(*first)), *gone;

		if (page && CHECK(first, "malloc")) {
			gone = (struct node *)(page + 64);
			gone->next = NULL;
			gone->value = 2;
			first->next = gone;
			first->value = 1;
			if (CHECK_OK(munmap(page, ps))) {
				struct accmap_replay_run r;
				int ret;

				simdrv_list_sum_job(&job, (uintptr_t)first,
						    offsetof(struct node, next),
						    offsetof(struct node, value), 4,
						    (uintptr_t)out);
				ret = svm_job(&t, &job, &r);
				CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT &&
				      (r.fault_addr == (uintptr_t)&gone->next ||
				       r.fault_addr == (uintptr_t)&gone->value) &&
				      (r.fault_status >> 8 & 3) == ACCESS_READ,
				      "walking into an unmapped node at %p: %s, reason %u, fault at %#llx status %#x",
				      (void *)gone, err_name(ret), r.reason,
				      ull(r.fault_addr), r.fault_status);
			}
		}
		free(first);
	}
out:
	free(out);
	free_list(all, count);
	svm_close(&t);
}

/*
 * The list walk reads memory from its first node to its last, one node
 * at a time, taking about half a second (timed here first).  The second
 * quarter of the list (M, whole pages) is unmapped while it runs, a round
 * at a time with M mapped and filled again in between.  Where the walk
 * was when the munmap landed shows in how the run ends:
 *  - "before": a fault at M's first node (the walk had not reached M);
 *  - "inside": a fault at a later node of M, every node before it read
 *    from M while it was still mapped: the munmap landed mid-walk, and
 *    the walk saw it at the next node it read;
 *  - "after": the walk completes with the whole list's sum, the munmap
 *    having started before the run returned (it passed M first).
 * The munmap's delay is aimed at each in turn (1/8, 3/8 and 3/4 of the
 * walk's time), and a round that missed its aim (the guest ran slower or
 * faster than timed) moves that aim by 1/16 of the walk for the next,
 * while each whole walk updates the time the aims are fractions of;
 * each outcome is counted and all three must occur, in at least
 * WALK_ROUNDS_MIN rounds and at most WALK_ROUNDS_MAX.  A walk that
 * completes with the munmap later than the run ("late") is allowed and
 * counted but proves nothing; anything else (a fault outside M, a wrong
 * sum) fails.
 */
#define WALK_PROBE		4096U
#define WALK_MS			600U
#define WALK_ROUNDS_MIN		6
#define WALK_ROUNDS_MAX		30

enum { WALK_BEFORE, WALK_INSIDE, WALK_AFTER, WALK_LATE, WALK_KINDS };

/* Links and fills nodes [@from, @to) of @v as the walk expects them. */
static void walk_fill(struct node *v, size_t from, size_t to, size_t count)
{
	for (size_t i = from; i < to; i++) {
		v[i].next = i + 1 < count ? &v[i + 1] : NULL;
		v[i].value = (int32_t)word(40, i);
		v[i].pad = 0;
	}
}

static void test_munmap_during_walk(void)
{
	static const char *const names[WALK_KINDS] = { "before", "inside", "after", "late" };
	const size_t len = align_up((size_t)ACCMAP_SIM_ELEMS_MAX * sizeof(struct node), ps);
	struct node *v = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *out = malloc(8), count, sum = 0;
	unsigned int seen[WALK_KINDS] = { 0 }, rounds = 0, aim16[3] = { 2, 6, 12 };
	size_t m_first, m_end;
	struct accmap_replay_run r;
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	uint64_t t0, probe_ms, walk_us;
	uint8_t *m_lo, *m_hi;
	int ret;

	if (!v || !CHECK(out, "malloc") || !svm_open(&t))
		goto out;
	walk_fill(v, 0, ACCMAP_SIM_ELEMS_MAX, ACCMAP_SIM_ELEMS_MAX);
	/* How fast the model walks here: a walk of about WALK_MS follows. */
	v[WALK_PROBE - 1].next = NULL;
	simdrv_list_sum_job(&job, (uintptr_t)v, offsetof(struct node, next),
			    offsetof(struct node, value), ACCMAP_SIM_ELEMS_MAX, (uintptr_t)out);
	t0 = now_ns();
	if (!job_ok(&t, &job, "walking the first WALK_PROBE nodes"))
		goto out;
	probe_ms = (now_ns() - t0) / 1000000 + 1;
	count = probe_ms >= WALK_MS / (ACCMAP_SIM_ELEMS_MAX / WALK_PROBE) ?
		(uint32_t)(WALK_PROBE * WALK_MS / probe_ms) : ACCMAP_SIM_ELEMS_MAX;
	if (count < 3 * WALK_PROBE)
		count = 3 * WALK_PROBE;
	walk_fill(v, 0, count, count);
	for (uint32_t i = 0; i < count; i++)
		sum += (uint32_t)v[i].value;
	/* M: the whole pages of the second quarter; its first node starts a page. */
	m_lo = (uint8_t *)v + align_up(count / 4 * sizeof(struct node), ps);
	m_hi = (uint8_t *)v + (count / 2 * sizeof(struct node)) / ps * ps;
	m_first = (size_t)(m_lo - (uint8_t *)v) / sizeof(struct node);
	m_end = (size_t)(m_hi - (uint8_t *)v) / sizeof(struct node);
	if (!CHECK(m_hi > m_lo + ps, "the second quarter of %u nodes is not two pages", count))
		goto out;
	/* Timed with M freshly mapped, as in every round. */
	walk_us = 0;
	for (int i = 0; i < 2; i++) {
		if (!CHECK(mmap(m_lo, (size_t)(m_hi - m_lo), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m_lo,
			   "mapping M: %s", strerror(errno)))
			goto out;
		walk_fill(v, m_first, m_end, count);
		t0 = now_ns();
		if (!job_ok(&t, &job, "the whole walk") ||
		    !CHECK(out[0] == sum && out[1] == count,
			   "walk: sum %#x over %u nodes, expected %#x over %u", out[0], out[1],
			   sum, count))
			goto out;
		walk_us = (now_ns() - t0) / 1000;
	}
	tap_diag("%u nodes walked in %llu ms (%u in %llu ms); M is nodes %zu to %zu",
		 count, ull(walk_us / 1000), WALK_PROBE, ull(probe_ms), m_first, m_end - 1);

	while (rounds < WALK_ROUNDS_MAX &&
	       (rounds < WALK_ROUNDS_MIN || !seen[WALK_BEFORE] || !seen[WALK_INSIDE] ||
		!seen[WALK_AFTER])) {
		struct unmap_arg u = { .tid = (pid_t)syscall(SYS_gettid) };
		unsigned int aim = rounds % 3, kind = WALK_KINDS;
		size_t node = 0;
		uint64_t t1;
		pthread_t th;

		rounds++;
		if (!CHECK(mmap(m_lo, (size_t)(m_hi - m_lo), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m_lo,
			   "mapping M again: %s", strerror(errno)))
			break;
		walk_fill(v, m_first, m_end, count);
		u.addr = m_lo;
		u.len = (size_t)(m_hi - m_lo);
		u.delay_us = (unsigned int)(walk_us * aim16[aim] / 16);
		out[0] = 0;
		out[1] = 0;
		if (!CHECK(pthread_create(&th, NULL, unmap_thread, &u) == 0, "pthread_create"))
			break;
		t0 = now_ns();
		ret = svm_job(&t, &job, &r);
		t1 = now_ns();
		pthread_join(th, NULL);
		if (!CHECK(u.ret == 0, "munmap from the other thread: %s", err_name(u.ret)))
			break;
		if (ret == -EIO && read_fault_in(&r, m_lo, u.len)) {
			node = (size_t)(r.fault_addr - (uintptr_t)v) / sizeof(struct node);
			kind = node == m_first ? WALK_BEFORE : WALK_INSIDE;
		} else if (ret == 0 && job_status(&t) == SIMDRV_JOB_STATUS_DONE &&
			   out[0] == sum && out[1] == count) {
			kind = u.at_ns < t1 ? WALK_AFTER : WALK_LATE;
		}
		if (!CHECK(kind < WALK_KINDS,
			   "round %u, munmap at %u ms: %s, reason %u, fault at %#llx (status %#x), job status %#x, out {%#x, %u} (expected {%#x, %u}), after %llu ms",
			   rounds, u.delay_us / 1000, err_name(ret), r.reason, ull(r.fault_addr),
			   r.fault_status, job_status(&t), out[0], out[1], sum, count,
			   ull((t1 - t0) / 1000000)))
			break;
		seen[kind]++;
		tap_diag("round %u: munmap at %u ms (aimed %s), run %llu ms: %s%s", rounds,
			 u.delay_us / 1000, names[aim], ull((t1 - t0) / 1000000), names[kind],
			 kind == WALK_INSIDE ? " M" : "");
		if (kind < aim && aim16[aim] < 15)
			aim16[aim]++;
		else if (kind > aim && aim16[aim] > 1)
			aim16[aim]--;
		/* A whole walk: how long one takes now, for the next aims. */
		if (kind == WALK_AFTER || kind == WALK_LATE)
			walk_us = (walk_us + (t1 - t0) / 1000) / 2;
		if (kind == WALK_INSIDE)
			tap_diag("  the walk faulted at node %zu, %zu nodes into M", node,
				 node - m_first);
	}
	tap_diag("outcomes of %u rounds: %u before M, %u inside M, %u after M, %u late",
		 rounds, seen[WALK_BEFORE], seen[WALK_INSIDE], seen[WALK_AFTER], seen[WALK_LATE]);
	CHECK(seen[WALK_BEFORE] && seen[WALK_INSIDE] && seen[WALK_AFTER],
	      "in %u rounds the munmap did not land at each point of the walk (before %u, inside %u, after %u)",
	      rounds, seen[WALK_BEFORE], seen[WALK_INSIDE], seen[WALK_AFTER]);
	/* From the start again, M unmapped: M's first node faults. */
	ret = svm_job(&t, &job, &r);
	CHECK(ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT &&
	      (r.fault_addr == (uintptr_t)&v[m_first].next ||
	       r.fault_addr == (uintptr_t)&v[m_first].value),
	      "walking again: %s, reason %u, fault at %#llx; expected one at the node at %p",
	      err_name(ret), r.reason, ull(r.fault_addr), (void *)&v[m_first]);
out:
	free(out);
	svm_close(&t);
}

/* ==== nothing pinned ==== */

/* Bit 63 of /proc/self/pagemap for @addr: the page is in the CPU's table. */
static int page_present(const void *addr)
{
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / ps * sizeof(e)));
	close(fd);
	return n == sizeof(e) ? (int)(e >> 63) : -1;
}

/*
 * Drains every CPU's LRU batches: writing /proc/sys/vm/compact_memory
 * does that before it compacts (best effort: without compaction or root
 * it does nothing, and the caller's retries are all there is).
 */
static void drain_lru_batches(void)
{
	int fd = open("/proc/sys/vm/compact_memory", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		tap_diag("compact_memory: %s", strerror(errno));
	close(fd);
}

static void test_pageout_shared(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *f = NULL, *buf = malloc(len);
	struct accmap_sim_job job;
	struct accmap_svm_op q0, q;
	int fd = memfd_with(len, 22), ret;
	struct svm t = { .dev = -1 };
	char in_list[64] = "";
	size_t out_pages;

	if (fd < 0 || !zero || !c || !CHECK(buf, "malloc"))
		goto out;
	f = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(f != MAP_FAILED, "mmap: %s", strerror(errno))) {
		f = NULL;
		goto out;
	}
	if (!svm_open(&t))
		goto out;
	job = vadd(f, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading the memfd") ||
	    !CHECK(check_words(c, n, 22, 0) == n, "C is not the file") || !svm_query(&t, &q0))
		goto out;
	CHECK(q0.mapped_bytes >= len, "mapped_bytes %llu with the file mirrored",
	      ull(q0.mapped_bytes));
	/*
	 * Reclaim is best effort: a page still in a per-CPU LRU batch is
	 * skipped, and MADV_PAGEOUT drains only the calling CPU's batch, so
	 * a page added on the other CPU (by the process before it moved, or
	 * by a GPU fault's worker) can stay out of reach.  Ask again until
	 * every page is out, a few times at most, and from the second try on
	 * have every CPU's batch drained first (compacting memory does that).
	 */
	out_pages = 0;
	for (int tries = 0; tries < 20 && out_pages < len / ps; tries++) {
		if (tries) {
			drain_lru_batches();
			usleep(10 * 1000);
		}
		ret = madvise(f, len, MADV_PAGEOUT);
		if (ret && errno == EINVAL) {
			tap_skip("MADV_PAGEOUT: EINVAL (kernel without it)");
			goto out;
		}
		if (!CHECK_OK(ret))
			goto out;
		out_pages = 0;
		in_list[0] = '\0';
		for (size_t i = 0; i < len / ps; i++) {
			int present = page_present((uint8_t *)f + i * ps);

			out_pages += present == 0;
			if (present) {
				size_t used = strlen(in_list);

				snprintf(in_list + used, sizeof(in_list) - used, " %zu", i);
			}
		}
	}
	/*
	 * Every page must go: nothing else maps the file, so only a pin (or
	 * a reference the mirror kept) could hold a page back after the LRU
	 * batches were drained twenty times.
	 */
	if (!CHECK(out_pages == len / ps,
		   "MADV_PAGEOUT took %zu of the %zu mirrored file pages after 20 tries; still in:%s",
		   out_pages, len / ps, in_list))
		goto out;
	if (!svm_query(&t, &q))
		goto out;
	tap_diag("MADV_PAGEOUT: %zu of %zu out; invalidations %llu -> %llu, mapped %llu -> %llu",
		 out_pages, len / ps, ull(q0.invalidations), ull(q.invalidations),
		 ull(q0.mapped_bytes), ull(q.mapped_bytes));
	CHECK(q.invalidations > q0.invalidations, "no invalidation for MADV_PAGEOUT");
	CHECK(q.mapped_bytes + out_pages * ps <= q0.mapped_bytes,
	      "mapped_bytes %llu after %zu pages went out, %llu before: the GPU kept them",
	      ull(q.mapped_bytes), out_pages, ull(q0.mapped_bytes));
	/* New file contents; the GPU re-faults and reads them. */
	fill_words(buf, n, 23);
	if (CHECK(pwrite(fd, buf, len, 0) == (ssize_t)len, "pwrite: %s", strerror(errno))) {
		q0 = q;
		if (job_ok(&t, &job, "reading the file after the page-out"))
			CHECK(check_words(c, n, 23, 0) == n, "the GPU read stale data");
		if (svm_query(&t, &q))
			CHECK(q.faults > q0.faults, "faults %llu -> %llu: the GPU did not re-fault",
			      ull(q0.faults), ull(q.faults));
	}
out:
	svm_close(&t);
	if (f)
		munmap(f, len);
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* The page frame number of @addr from /proc/self/pagemap (root only); 0 if none. */
static uint64_t page_pfn(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / ps * sizeof(e))) != sizeof(e))
		e = 0;
	close(fd);
	return e >> 63 ? e & ((1ULL << 55) - 1) : 0;
}

/*
 * Migration on one NUMA node: MADV_SOFT_OFFLINE migrates a page to a new
 * frame (and retires the old one), which it cannot do to a pinned page.
 */
static void test_migrate_soft_offline(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *zero = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op q0, q;
	struct svm t = { .dev = -1 };
	uint64_t pfn0, pfn1;
	int ret;

	if (!a || !zero || !c || !svm_open(&t))
		goto out;
	fill_words(a, n, 41);
	job = vadd(a, zero, c, (uint32_t)n);
	if (!job_ok(&t, &job, "reading A") || !CHECK(check_words(c, n, 41, 0) == n, "C != A") ||
	    !svm_query(&t, &q0))
		goto out;
	pfn0 = page_pfn(a);
	ret = madvise(a, ps, MADV_SOFT_OFFLINE);
	if (ret && (errno == EINVAL || errno == EPERM)) {
		tap_skip("MADV_SOFT_OFFLINE: %s (kernel without CONFIG_MEMORY_FAILURE?)",
			 strerror(errno));
		goto out;
	}
	if (!CHECK(ret == 0, "MADV_SOFT_OFFLINE of A's first page, mirrored by the GPU: %s",
		   strerror(errno)))
		goto out;
	pfn1 = page_pfn(a);
	CHECK(pfn0 && pfn1 && pfn1 != pfn0, "A's first page: pfn %#llx before, %#llx after",
	      ull(pfn0), ull(pfn1));
	CHECK(check_words(a, n, 41, 0) == n, "A changed on the CPU by the migration");
	tap_diag("soft offline moved pfn %#llx to %#llx", ull(pfn0), ull(pfn1));
	if (!svm_query(&t, &q))
		goto out;
	CHECK(q.invalidations > q0.invalidations, "invalidations %llu -> %llu across the migration",
	      ull(q0.invalidations), ull(q.invalidations));
	/* The CPU writes the new page; the GPU must read it, not the old frame. */
	fill_words(a, n, 42);
	memset(c, 0, len);
	q0 = q;
	if (job_ok(&t, &job, "reading A after its first page migrated"))
		CHECK(check_words(c, n, 42, 0) == n, "the GPU read other than the migrated page");
	if (svm_query(&t, &q))
		CHECK(q.faults > q0.faults, "faults %llu -> %llu: the GPU did not re-fault",
		      ull(q0.faults), ull(q.faults));
out:
	svm_close(&t);
}

/* ==== ACCMAP_IOC_SVM ==== */

static void test_attr_gpu_ro(void)
{
	size_t len = 4 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_sim_job job;
	struct accmap_svm_op s;
	struct svm t = { .dev = -1 };
	int ret;

	if (!a || !c || !svm_open(&t))
		goto out;
	fill_words(a, n, 25);
	fill_words(c, n, 26);
	/* The GPU maps C writable first: SET_ATTR must drop that entry. */
	job = vadd(a, c, c, (uint32_t)n);
	if (!job_ok(&t, &job, "C += A"))
		goto out;
	ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)c, len,
			ACCMAP_SVM_ATTR_GPU_RO, 0, &s);
	if (!CHECK(ret == 0, "SET_ATTR GPU_RO over C: %s", err_name(ret)))
		goto out;
	fill_words(c, n, 26);
	job_faults(&t, &job, (uintptr_t)c, ACCESS_WRITE, 0, "a GPU write to a GPU_RO range");
	CHECK(check_words(c, n, 26, 0) == n, "C changed under GPU_RO");
	/* Reading it is fine. */
	job = vadd(c, a, a, (uint32_t)n);
	if (job_ok(&t, &job, "A = C + A with C GPU_RO")) {
		size_t i;

		for (i = 0; i < n && a[i] == word(25, i) + word(26, i); i++)
			;
		CHECK(i == n, "A[%zu] wrong after reading the GPU_RO range", i);
	}
	ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)c, len, 0, 0,
			&s);
	if (CHECK(ret == 0, "SET_ATTR 0 over C: %s", err_name(ret))) {
		fill_words(a, n, 25);
		job = vadd(a, c, c, (uint32_t)n);
		if (job_ok(&t, &job, "C += A once GPU_RO is gone")) {
			size_t i;

			for (i = 0; i < n && c[i] == word(25, i) + word(26, i); i++)
				;
			CHECK(i == n, "C[%zu] wrong after GPU_RO was cleared", i);
		}
	}
out:
	svm_close(&t);
}

static void test_prefetch(void)
{
	size_t len = 16 * ps, n = 4 * ps / 4;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_svm_op q0, q, p;
	struct accmap_sim_job job;
	uint32_t *a, *b, *c;
	struct svm t = { .dev = -1 };
	int ret;

	if (!region || !svm_open(&t))
		goto out;
	/* Descriptor, A, B and C all in the prefetched region. */
	free(t.desc);
	t.desc = region;
	a = (uint32_t *)(region + ps);
	b = (uint32_t *)(region + 5 * ps);
	c = (uint32_t *)(region + 9 * ps);
	fill_words(a, n, 27);
	fill_words(b, n, 28);
	if (!svm_query(&t, &q0))
		goto out_desc;
	ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_PREFETCH, (uintptr_t)region, len, 0,
			0, &p);
	if (!CHECK(ret == 0, "PREFETCH of %zu bytes: %s", len, err_name(ret)))
		goto out_desc;
	CHECK(p.mapped_bytes >= q0.mapped_bytes + len &&
	      p.pages_mapped >= q0.pages_mapped + len / ps,
	      "PREFETCH: mapped_bytes %llu -> %llu, pages_mapped %llu -> %llu",
	      ull(q0.mapped_bytes), ull(p.mapped_bytes),
	      ull(q0.pages_mapped), ull(p.pages_mapped));
	job = vadd(a, b, c, (uint32_t)n);
	if (!job_ok(&t, &job, "a job on prefetched memory"))
		goto out_desc;
	{
		size_t i;

		for (i = 0; i < n && c[i] == word(27, i) + word(28, i); i++)
			;
		CHECK(i == n, "C[%zu] wrong on prefetched memory", i);
	}
	if (svm_query(&t, &q))
		CHECK(q.faults == p.faults, "the job took %llu faults after PREFETCH",
		      (unsigned long long)(q.faults - p.faults));
	/* PREFETCH over holes and PROT_NONE: skipped, not errors. */
	if (CHECK_OK(mprotect(region + 12 * ps, ps, PROT_NONE)) &&
	    CHECK_OK(munmap(region + 14 * ps, ps))) {
		ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_PREFETCH, (uintptr_t)region,
				len, 0, 0, &p);
		CHECK(ret == 0, "PREFETCH over a PROT_NONE page and a hole: %s", err_name(ret));
	}
out_desc:
	t.desc = NULL;
out:
	svm_close(&t);
}

/*
 * PREFETCH over one 2 MiB step that holds a page no one can fault in (a
 * MAP_SHARED file page past the end of the file: SIGBUS for the CPU)
 * among anonymous and file pages that can be: PREFETCH returns 0 and maps
 * every page but that one, so that a job on them takes no fault.
 */
static void test_prefetch_past_eof(void)
{
	size_t pages = 64, len = pages * ps, fpages = 8, flen = fpages * ps;
	size_t dpages = (CHAIN_MAX * JD_STRIDE + ps - 1) / ps;
	/* In pages: descriptors, A, the file (its last page past EOF), C. */
	size_t a_at = dpages, f_at = 24, c_at = 32, n = (f_at + fpages - 1 - a_at) * ps / 4;
	uint8_t *area = map_anon(len + SZ_2M, PROT_READ | PROT_WRITE), *region = NULL;
	int fd = memfd_with(flen - ps, 9);
	struct accmap_svm_op q0, p, q;
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	uint32_t *a, *c;
	void *f;
	size_t i;
	int ret;

	if (!area || fd < 0 || !CHECK(a_at < f_at, "%zu pages of descriptors", dpages))
		goto out;
	region = (uint8_t *)align_up((uintptr_t)area, SZ_2M);
	f = mmap(region + f_at * ps, flen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (!CHECK(f != MAP_FAILED, "mmap of the memfd: %s", strerror(errno)) || !svm_open(&t))
		goto out;
	free(t.desc);
	t.desc = region;
	a = (uint32_t *)(region + a_at * ps);
	c = (uint32_t *)(region + c_at * ps);
	fill_words(a, (f_at - a_at) * ps / 4, 31);
	if (!svm_query(&t, &q0))
		goto out_desc;
	ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_PREFETCH, (uintptr_t)region, len, 0,
			0, &p);
	if (!CHECK(ret == 0, "PREFETCH over a file page past EOF: %s", err_name(ret)))
		goto out_desc;
	CHECK(p.mapped_bytes == q0.mapped_bytes + len - ps,
	      "PREFETCH of %zu pages, one past EOF: mapped_bytes %llu -> %llu, expected +%zu",
	      pages, ull(q0.mapped_bytes), ull(p.mapped_bytes), len - ps);
	/* C = A + A over A and the file's pages below EOF, descriptors in the range. */
	job = vadd(a, a, c, (uint32_t)n);
	if (!job_ok(&t, &job, "a job on the pages PREFETCH mapped around one past EOF"))
		goto out_desc;
	for (i = 0; i < n; i++) {
		size_t k = i - (f_at - a_at) * ps / 4;
		uint32_t v = i < (f_at - a_at) * ps / 4 ? word(31, i) : word(9, k);

		if (c[i] != 2 * v)
			break;
	}
	CHECK(i == n, "C[%zu] = %#x after the job", i, i < n ? c[i] : 0);
	if (svm_query(&t, &q))
		CHECK(q.faults == p.faults && q.fatal_faults == p.fatal_faults,
		      "the job took %llu faults (%llu fatal) after PREFETCH",
		      ull(q.faults - p.faults), ull(q.fatal_faults - p.fatal_faults));
out_desc:
	t.desc = NULL;
out:
	svm_close(&t);
	if (area)
		munmap(area, len + SZ_2M);
	if (fd >= 0)
		close(fd);
}

/* ==== userfaultfd ==== */

/*
 * A userfaultfd that registers [@p, @p + @len) for missing pages, or
 * -errno.  Not UFFD_USER_MODE_ONLY: the kernel's own faults must reach
 * it (they do for root), else it answers them with SIGBUS before it ever
 * looks whether it is being closed.
 */
static int uffd_register_missing(void *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = (int)syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Whether userfaultfd works here; a skip on a kernel without it (its
 * sysctl comes with CONFIG_USERFAULTFD), a failed check if it fails.
 */
static bool uffd_usable(void)
{
	uint8_t *p;
	int fd;

	if (access("/proc/sys/vm/unprivileged_userfaultfd", F_OK)) {
		tap_skip("no vm.unprivileged_userfaultfd: kernel without CONFIG_USERFAULTFD");
		return false;
	}
	p = map_anon(ps, PROT_READ | PROT_WRITE);
	if (!p)
		return false;
	fd = uffd_register_missing(p, ps);
	munmap(p, ps);
	if (!CHECK(fd >= 0, "userfaultfd and UFFDIO_REGISTER: %s", err_name(fd)))
		return false;
	close(fd);
	return true;
}

/*
 * PREFETCH over a range whose last page a live userfaultfd registers and
 * no one ever populated: the kernel does not fault that page in (the
 * userfaultfd would have to), maps every other page and returns 0, and
 * the userfaultfd sees no fault.  A GPU access to that page is a fatal
 * fault while the registration lasts, and faults it in once it is gone.
 */
static void test_uffd_prefetch(void)
{
	size_t pages = 16, len = pages * ps, n = len / 4;
	uint8_t *region = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE);
	uint8_t *last = region ? region + len - ps : NULL;
	struct uffdio_range unreg = { .start = (uintptr_t)last, .len = ps };
	struct accmap_svm_op q0, p;
	struct accmap_sim_job job;
	struct svm t = { .dev = -1 };
	struct uffd_msg msg;
	int fd = -1, ret;

	if (!region || !c || !uffd_usable() || !svm_open(&t))
		goto out;
	fd = uffd_register_missing(last, ps);
	if (!CHECK(fd >= 0, "userfaultfd over the last page: %s", err_name(fd)))
		goto out;
	/* Half the other pages present, half never touched. */
	memset(region, 0x5a, len / 2);
	if (!svm_query(&t, &q0))
		goto out;
	ret = svm_ioctl(t.dev, t.sim.session, ACCMAP_SVM_OP_PREFETCH, (uintptr_t)region, len, 0,
			0, &p);
	if (!CHECK(ret == 0, "PREFETCH over a userfaultfd-registered page: %s", err_name(ret)))
		goto out;
	CHECK(p.mapped_bytes == q0.mapped_bytes + len - ps,
	      "PREFETCH of %zu pages, the last one registered: mapped_bytes %llu -> %llu, expected +%zu",
	      pages, ull(q0.mapped_bytes), ull(p.mapped_bytes), len - ps);
	CHECK(read(fd, &msg, sizeof(msg)) < 0 && errno == EAGAIN,
	      "the userfaultfd got a message (or read said %s): PREFETCH faulted its page",
	      strerror(errno));
	/* The GPU reads the whole region: the registered page is a fatal fault. */
	job = vadd(region, region, c, (uint32_t)n);
	job_faults(&t, &job, (uintptr_t)last, ACCESS_READ, FAULT_TRANSLATION,
		   "a GPU read of the registered, never populated page");
	CHECK(read(fd, &msg, sizeof(msg)) < 0 && errno == EAGAIN,
	      "the userfaultfd got a message (or read said %s): the GPU fault reached it",
	      strerror(errno));
	/* Unregistered, the page is the kernel's to fault in again. */
	if (CHECK_OK(ioctl(fd, UFFDIO_UNREGISTER, &unreg)) &&
	    job_ok(&t, &job, "the same job after UFFDIO_UNREGISTER"))
		CHECK(check_value(c + (len - ps) / 4, ps / 4, 0) == ps / 4,
		      "C over the once registered page is not 0 + 0");
out:
	if (fd >= 0)
		close(fd);
	svm_close(&t);
}

/* Seconds a round of a race may take before the test calls it a hang. */
#define UFFD_RACE_ROUNDS	50
#define UFFD_RACE_HANG_S	10

/*
 * The state of a race, in memory shared with the watching parent: the
 * racing task can hang where no signal reaches it, so it is watched from
 * another process rather than by alarm().  Counters are read and written
 * with __atomic builtins only.
 */
struct uffd_race {
	int round;		/* rounds done, written by the racer */
	int stop;		/* the closer closed: the caller may stop */
	int calls;		/* calls made this round */
	bool gpu;		/* GPU faults, else PREFETCH */
	struct svm *t;
	uint8_t *map;		/* the mapping that holds the region */
	uint8_t *region;	/* 2 MiB aligned, its last page registered */
	uint32_t *c;		/* one page for the jobs' results */
};

/*
 * PREFETCH of the region, or a job reading its last page, until the
 * userfaultfd is closed.  Either walks the 2 MiB of the region up to the
 * last page under the mmap_lock (a GPU fault maps its whole granule, 2
 * MiB by default): a close() that begins meanwhile waits for that lock.
 */
static void *uffd_race_caller(void *arg)
{
	struct uffd_race *r = arg;
	uint8_t *last = r->region + SZ_2M - ps;
	struct accmap_replay_run run;
	struct accmap_sim_job job;
	int ret;

	job = vadd(last, last, r->c, (uint32_t)(ps / 4));
	do {
		if (r->gpu) {
			ret = svm_job(r->t, &job, &run);
			/* Done, or a fatal fault at the page while it is registered. */
			CHECK(ret == 0 || (ret == -EIO && run.reason == ACCMAP_REPLAY_MMU_FAULT &&
					   run.fault_addr == (uintptr_t)last),
			      "a job racing close() of a userfaultfd: %s, reason %u, fault at %#llx",
			      err_name(ret), run.reason, ull(run.fault_addr));
		} else {
			ret = svm_ioctl(r->t->dev, r->t->sim.session, ACCMAP_SVM_OP_PREFETCH,
					(uintptr_t)r->region, SZ_2M, 0, 0, NULL);
			CHECK(ret == 0, "PREFETCH racing close() of a userfaultfd: %s",
			      err_name(ret));
		}
		__atomic_add_fetch(&r->calls, 1, __ATOMIC_SEQ_CST);
	} while (!__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST));
	return NULL;
}

/* The racing process: UFFD_RACE_ROUNDS rounds, each one counted in r->round. */
static void uffd_race_rounds(struct uffd_race *r)
{
	struct svm t = { .dev = -1 };
	pthread_t th;
	int round, fd;

	r->t = &t;
	r->c = map_anon(ps, PROT_READ | PROT_WRITE);
	if (!r->c || !svm_open(&t))
		goto out;
	for (round = 0; round < UFFD_RACE_ROUNDS && !tap_failed(); round++) {
		r->map = map_anon(2 * SZ_2M, PROT_READ | PROT_WRITE);
		if (!r->map)
			break;
		r->region = (uint8_t *)align_up((uintptr_t)r->map, SZ_2M);
		fd = uffd_register_missing(r->region + SZ_2M - ps, ps);
		if (!CHECK(fd >= 0, "round %d: userfaultfd: %s", round, err_name(fd)))
			break;
		/* Every page present but the last, the registered one. */
		memset(r->region, 0x3c, SZ_2M - ps);
		__atomic_store_n(&r->stop, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&r->calls, 0, __ATOMIC_SEQ_CST);
		if (!CHECK(pthread_create(&th, NULL, uffd_race_caller, r) == 0, "pthread_create")) {
			close(fd);
			break;
		}
		/* Close while a call walks the range: after the first, at a varying time. */
		while (!__atomic_load_n(&r->calls, __ATOMIC_SEQ_CST))
			sched_yield();
		usleep((useconds_t)(round % 10) * 100);
		close(fd);
		__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(th, NULL);
		munmap(r->map, 2 * SZ_2M);
		__atomic_store_n(&r->round, round + 1, __ATOMIC_SEQ_CST);
	}
out:
	svm_close(&t);
}

/*
 * PREFETCH (@gpu false) or GPU faults (@gpu true) over a range whose last
 * page a userfaultfd registers, racing close() of that userfaultfd.  Once
 * the close has begun, the userfaultfd answers a fault with "retry"; a
 * kernel that faulted the page there would retry for ever under the
 * mmap_lock the closer waits for: two tasks stuck, neither killable.
 */
static void uffd_race(bool gpu)
{
	struct uffd_race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int seen = 0, status, waited = 0;
	pid_t pid;

	if (!CHECK(r != MAP_FAILED, "mmap: %s", strerror(errno)) || !uffd_usable())
		return;
	memset(r, 0, sizeof(*r));
	r->gpu = gpu;
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		return;
	if (pid == 0) {
		uffd_race_rounds(r);
		_exit(0);
	}
	/* Every round must end within UFFD_RACE_HANG_S seconds. */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		int done = __atomic_load_n(&r->round, __ATOMIC_SEQ_CST);

		if (done != seen) {
			seen = done;
			waited = 0;
		} else if (++waited > UFFD_RACE_HANG_S * 100) {
			CHECK(0, "%s racing close() of a userfaultfd: round %d hung %ds (%d calls)",
			      gpu ? "GPU faults" : "PREFETCH", done, UFFD_RACE_HANG_S,
			      __atomic_load_n(&r->calls, __ATOMIC_SEQ_CST));
			/* In vain if they are stuck in the kernel; then the run shows it. */
			kill(pid, SIGKILL);
			return;
		}
		usleep(10000);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->round == UFFD_RACE_ROUNDS,
	      "the racing process: status %#x after %d of %d rounds", status, r->round,
	      UFFD_RACE_ROUNDS);
	tap_diag("%d rounds of %s racing close() of a userfaultfd", r->round,
		 gpu ? "GPU faults" : "PREFETCH");
	munmap(r, sizeof(*r));
}

static void test_uffd_close_prefetch(void)
{
	uffd_race(false);
}

static void test_uffd_close_gpu_fault(void)
{
	uffd_race(true);
}

/* ==== errnos ==== */

/* The index of a replay target without SVM (a RAM window), or false. */
static bool find_other_target(int dev, uint32_t *index)
{
	struct accmap_replay_target_info info;

	for (uint32_t i = 0; i < 16; i++) {
		memset(&info, 0, sizeof(info));
		info.index = i;
		if (raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &info))
			return false;
		if (!(info.flags & ACCMAP_REPLAY_TARGET_SVM)) {
			*index = i;
			return true;
		}
	}
	return false;
}

static void setup_expect(int dev, struct accmap_replay_setup *s, int err, const char *what)
{
	int ret;

	s->session = GARBAGE_U32;
	s->table_pages = GARBAGE_U32;
	ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, s);
	if (!CHECK(ret == -err, "SETUP(SVM) with %s: %s, expected %s", what, err_name(ret),
		   err_name(err))) {
		if (!ret) {
			struct accmap_replay_destroy d = { .session = s->session };

			raw_ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d);
		}
		return;
	}
	CHECK(s->session == 0, "SETUP(SVM) with %s: session %#x on failure", what, s->session);
}

static void test_setup_errors(void)
{
	struct accmap_replay_target_info info;
	struct accmap_replay_setup s;
	struct accmap_replay_map m;
	uint32_t target, other = 0, id;
	int dev = am_open(), ret;

	if (dev < 0 || !CHECK(accmap_replay_find_target(dev, simdrv_target(), &target, &info) == 0,
			      "no target %s", simdrv_target()))
		goto out;
	CHECK(info.flags & ACCMAP_REPLAY_TARGET_SVM, "target %s: flags %#x without SVM",
	      simdrv_target(), info.flags);
#define SVM_SETUP(start, size) simdrv_svm_setup(&s, target, SVM_PGT_FORMAT, 48, (start), (size))
	SVM_SETUP(SVM_LOW + 1, ps);
	setup_expect(dev, &s, EINVAL, "an unaligned start");
	SVM_SETUP(SVM_LOW, ps + 4096 * (ps > 4096));
	if (ps > 4096)
		setup_expect(dev, &s, EINVAL, "a size of a CPU page + 4 KiB");
	SVM_SETUP(SVM_LOW, ps / 2);
	setup_expect(dev, &s, EINVAL, "a size of half a CPU page");
	SVM_SETUP(SVM_LOW, 0);
	setup_expect(dev, &s, EINVAL, "size 0");
	SVM_SETUP(-(uint64_t)ps, 2 * ps);
	setup_expect(dev, &s, EINVAL, "a range that wraps");
	simdrv_svm_setup(&s, target, SVM_PGT_FORMAT, 32, 1ULL << 32, ps);
	setup_expect(dev, &s, EINVAL, "a range above 1 << va_bits (32)");
	simdrv_svm_setup(&s, target, SVM_PGT_FORMAT, 32, (1ULL << 32) - ps, 2 * ps);
	setup_expect(dev, &s, EINVAL, "a range across 1 << va_bits (32)");
	/* x86-64 user space ends below 1 << 47; arm64's at 1 << 48 = 1 << va_bits. */
	SVM_SETUP((1ULL << 47) - ps, 2 * ps);
#if defined(__x86_64__)
	setup_expect(dev, &s, EINVAL, "a range beyond the end of user space (1 << 47)");
#endif
	SVM_SETUP((1ULL << 48) - ps, 2 * ps);
	setup_expect(dev, &s, EINVAL, "a range across 1 << 48");
	SVM_SETUP(SVM_LOW, ps);
	s.flags = ACCMAP_REPLAY_SETUP_SVM | 2;
	setup_expect(dev, &s, EINVAL, "an unknown flag");
	SVM_SETUP(SVM_LOW, ps);
	s.flags = 0;
	setup_expect(dev, &s, EINVAL, "svm_start and svm_size without the SVM flag");
	SVM_SETUP(SVM_LOW, ps);
	s.pad = 1;
	setup_expect(dev, &s, EINVAL, "pad 1");

	/* A handle map: overlapping the range fails, outside it works. */
	if (!CHECK(am_buffer(dev, ps, 0, &id, false) == 0, "a buffer"))
		goto out;
	memset(&m, 0, sizeof(m));
	m.gpu_va = 0x40000000;
	m.length = ps;
	m.id = id;
	m.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE;
	SVM_SETUP(0x40000000 - 4 * ps, 8 * ps);
	s.maps = (uintptr_t)&m;
	s.nr_maps = 1;
	s.failed_map = GARBAGE_U32;
	setup_expect(dev, &s, EINVAL, "a map inside the SVM range");
	CHECK(s.failed_map == 0, "SETUP(SVM) with an overlapping map: failed_map %#x",
	      s.failed_map);
	SVM_SETUP(0x40000000 + ps, 8 * ps);
	s.maps = (uintptr_t)&m;
	s.nr_maps = 1;
	ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &s);
	if (CHECK(ret == 0, "SETUP(SVM) with a map just below the SVM range: %s",
		  err_name(ret))) {
		struct accmap_replay_destroy d = { .session = s.session };

		CHECK_OK(ioctl(dev, ACCMAP_IOC_REPLAY_DESTROY, &d));
	}

	/*
	 * A register window without an MMU interrupt has no SVM (nor does a
	 * kernel without HMM_MIRROR).
	 */
	if (CHECK(find_other_target(dev, &other), "no replay target without SVM")) {
		simdrv_svm_setup(&s, other, SVM_PGT_FORMAT, 48, SVM_LOW, 16 * ps);
		setup_expect(dev, &s, EOPNOTSUPP, "a target without SVM");
	}
	SVM_SETUP(SVM_LOW, 16 * ps);
	ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &s);
	if (ret == -EOPNOTSUPP)
		tap_diag("%s refuses SVM sessions: a kernel without CONFIG_HMM_MIRROR?",
			 simdrv_target());
	CHECK(ret == 0, "a good SVM SETUP: %s", err_name(ret));
#undef SVM_SETUP
out:
	if (dev >= 0)
		close(dev);
}

static void svm_expect(int dev, struct accmap_svm_op *a, int err, const char *what)
{
	int ret = raw_ioctl(dev, ACCMAP_IOC_SVM, a);

	CHECK(ret == -err, "SVM %s: %s, expected %s", what, err_name(ret), err_name(err));
}

/*
 * Fields an op does not take, one at a time on an otherwise good call:
 * QUERY takes no range, attributes, granule or location, PREFETCH no
 * attributes or granule.
 */
static void svm_extra_fields(struct svm *t, uint64_t start)
{
	static const struct {
		uint32_t op;
		size_t off;	/* of a __u32 field, or of __u64 size */
		const char *what;
	} cases[] = {
		{ ACCMAP_SVM_OP_QUERY, offsetof(struct accmap_svm_op, size), "QUERY with a size" },
		{ ACCMAP_SVM_OP_QUERY, offsetof(struct accmap_svm_op, attrs),
		  "QUERY with attributes" },
		{ ACCMAP_SVM_OP_QUERY, offsetof(struct accmap_svm_op, granule),
		  "QUERY with a granule" },
		{ ACCMAP_SVM_OP_QUERY, offsetof(struct accmap_svm_op, location),
		  "QUERY with a location" },
		{ ACCMAP_SVM_OP_PREFETCH, offsetof(struct accmap_svm_op, attrs),
		  "PREFETCH with attributes" },
		{ ACCMAP_SVM_OP_PREFETCH, offsetof(struct accmap_svm_op, granule),
		  "PREFETCH with a granule" },
	};
	struct accmap_svm_op a;
	size_t i;

	for (i = 0; i < TAP_ARRAY_SIZE(cases); i++) {
		/* A granule that would be good for SET_ATTR. */
		uint32_t one = ACCMAP_SVM_GRANULE_MIN;

		memset(&a, 0, sizeof(a));
		a.session = t->sim.session;
		a.op = cases[i].op;
		if (a.op == ACCMAP_SVM_OP_PREFETCH) {
			a.start = start;
			a.size = ps;
		}
		if (cases[i].off == offsetof(struct accmap_svm_op, size))
			a.size = ps;
		else
			memcpy((char *)&a + cases[i].off, &one, sizeof(one));
		svm_expect(t->dev, &a, EINVAL, cases[i].what);
	}
	/* The same calls without the extra field go through. */
	memset(&a, 0, sizeof(a));
	a.session = t->sim.session;
	a.op = ACCMAP_SVM_OP_PREFETCH;
	a.start = start;
	a.size = ps;
	svm_expect(t->dev, &a, 0, "PREFETCH of one page");
}

static void test_svm_ioctl_errors(void)
{
	size_t len = 16 * ps;
	uint8_t *r = map_anon(len, PROT_READ | PROT_WRITE);
	struct accmap_replay_setup s;
	struct accmap_replay_map m;
	struct accmap_svm_op a;
	struct svm t = { .dev = -1 };
	uint32_t id;
	int ret;

	if (!r || !svm_open_range(&t, (uintptr_t)r, len))
		goto out;
#define BASE(o, st, sz) do {							\
		memset(&a, 0, sizeof(a));					\
		a.session = t.sim.session;					\
		a.op = (o);							\
		a.start = (st);							\
		a.size = (sz);							\
	} while (0)
	BASE(ACCMAP_SVM_OP_QUERY, 0, 0);
	svm_expect(t.dev, &a, 0, "QUERY");
	BASE(ACCMAP_SVM_OP_QUERY, 0, 0);
	a.session = t.sim.session + 100;
	svm_expect(t.dev, &a, ENOENT, "QUERY of no session");
	BASE(0, 0, 0);
	svm_expect(t.dev, &a, EINVAL, "op 0");
	BASE(4, 0, 0);
	svm_expect(t.dev, &a, EINVAL, "op 4");
	BASE(ACCMAP_SVM_OP_QUERY, (uintptr_t)r, ps);
	svm_expect(t.dev, &a, EINVAL, "QUERY with a range");
	BASE(ACCMAP_SVM_OP_QUERY, 0, 0);
	a.flags = 1;
	svm_expect(t.dev, &a, EINVAL, "flags 1");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r + 1, ps);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR of an unaligned start");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps - 1);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR of an unaligned size");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, 0);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR of size 0");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r - ps, 2 * ps);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR from before the range");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r + len - ps, 2 * ps);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR past the range");
	BASE(ACCMAP_SVM_OP_PREFETCH, (uintptr_t)r + len, ps);
	svm_expect(t.dev, &a, EINVAL, "PREFETCH after the range");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps);
	a.attrs = 1U << 2;
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR with an unknown attribute");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps);
	a.granule = ACCMAP_SVM_GRANULE_MIN - 1;
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR with granule 11");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps);
	a.granule = ACCMAP_SVM_GRANULE_MAX + 1;
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR with granule 22");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps);
	a.location = ACCMAP_SVM_LOC_DEVICE + 1;
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR with location 2");
	BASE(ACCMAP_SVM_OP_PREFETCH, (uintptr_t)r, ps);
	a.location = ACCMAP_SVM_LOC_DEVICE + 1;
	svm_expect(t.dev, &a, EINVAL, "PREFETCH to location 2");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, -(uint64_t)ps);
	svm_expect(t.dev, &a, EINVAL, "SET_ATTR of a range that wraps");
	svm_extra_fields(&t, (uintptr_t)r);
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, ps);
	a.granule = ACCMAP_SVM_GRANULE_MIN;
	a.attrs = ACCMAP_SVM_ATTR_VALID;
	svm_expect(t.dev, &a, 0, "SET_ATTR GPU_RO | NO_EXEC, granule 12");
	BASE(ACCMAP_SVM_OP_SET_ATTR, (uintptr_t)r, len);
	svm_expect(t.dev, &a, 0, "SET_ATTR 0 over the whole range");

	/* Attribute ranges: alternate attributes page by page until ENOSPC. */
	{
		size_t big = (2 * ACCMAP_SVM_ATTR_RANGES_MAX + 8) * ps;
		uint8_t *br = map_anon(big, PROT_NONE);
		struct svm t2;
		int last = 0;
		size_t i;

		if (br && svm_open_range(&t2, (uintptr_t)br, big)) {
			for (i = 0; i < big / ps; i += 2) {
				last = svm_ioctl(t2.dev, t2.sim.session, ACCMAP_SVM_OP_SET_ATTR,
						 (uintptr_t)br + i * ps, ps,
						 ACCMAP_SVM_ATTR_GPU_RO, 0, NULL);
				if (last)
					break;
			}
			CHECK(last == -ENOSPC,
			      "SET_ATTR of every other page of %zu: %s after %zu calls, expected ENOSPC",
			      big / ps, err_name(last), i / 2);
			tap_diag("ENOSPC after %zu alternating SET_ATTR calls (ranges max %u)",
				 i / 2, ACCMAP_SVM_ATTR_RANGES_MAX);
			svm_close(&t2);
		}
		if (br)
			munmap(br, big);
	}

	/* A session without SVM. */
	if (CHECK(am_buffer(t.dev, ps, 0, &id, false) == 0, "a buffer")) {
		memset(&m, 0, sizeof(m));
		m.gpu_va = 0x100000;
		m.length = ps;
		m.id = id;
		m.flags = ACCMAP_REPLAY_MAP_READ;
		memset(&s, 0, sizeof(s));
		s.maps = (uintptr_t)&m;
		s.nr_maps = 1;
		s.target = t.sim.target;
		s.format = SVM_PGT_FORMAT;
		s.va_bits = 48;
		if (CHECK(raw_ioctl(t.dev, ACCMAP_IOC_REPLAY_SETUP, &s) == 0, "a plain session")) {
			BASE(ACCMAP_SVM_OP_QUERY, 0, 0);
			a.session = s.session;
			svm_expect(t.dev, &a, EOPNOTSUPP, "QUERY of a session without SVM");
		}
	}

	/* As nobody, without CAP_SYS_RAWIO. */
	{
		pid_t pid = fork();
		int status;

		if (!CHECK(pid >= 0, "fork"))
			goto out;
		if (pid == 0) {
			struct accmap_replay_setup ns;
			int dev;

			if (!CHECK(setgroups(0, NULL) == 0 &&
				   setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
				   setresuid(NOBODY, NOBODY, NOBODY) == 0, "dropping root: %s",
				   strerror(errno)))
				_exit(1);
			dev = am_open();
			if (dev < 0)
				_exit(1);
			simdrv_svm_setup(&ns, t.sim.target, SVM_PGT_FORMAT, 48, (uintptr_t)r, len);
			ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &ns);
			CHECK(ret == -EPERM, "SETUP(SVM) as nobody: %s", err_name(ret));
			memset(&a, 0, sizeof(a));
			a.session = 1;
			a.op = ACCMAP_SVM_OP_QUERY;
			ret = raw_ioctl(dev, ACCMAP_IOC_SVM, &a);
			CHECK(ret == -EPERM, "SVM QUERY as nobody: %s", err_name(ret));
			close(dev);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	}

	/*
	 * ESRCH: the mirrored address space is gone.  A child makes the
	 * session and hands its fd over, then exits; from here the session
	 * is another process's (EPERM) whose mm is gone (ESRCH).
	 */
	{
		int sv[2], fd = -1, status;
		uint32_t session = 0;
		pid_t pid;

		if (!CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv)))
			goto out;
		pid = fork();
		if (!CHECK(pid >= 0, "fork"))
			goto out;
		if (pid == 0) {
			struct svm c;

			close(sv[0]);
			if (!svm_open(&c) || am_send_fd(sv[1], c.dev) ||
			    write(sv[1], &c.sim.session, sizeof(c.sim.session)) !=
			    sizeof(c.sim.session))
				_exit(1);
			_exit(0);
		}
		close(sv[1]);
		fd = am_recv_fd(sv[0]);
		if (read(sv[0], &session, sizeof(session)) != sizeof(session))
			session = 0;
		waitpid(pid, &status, 0);
		if (CHECK(fd >= 0 && session, "the child's session and fd")) {
			ret = svm_ioctl(fd, session, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, &a);
			CHECK(ret == -ESRCH || ret == -EPERM,
			      "SVM QUERY of a session whose process exited: %s, expected ESRCH (or EPERM)",
			      err_name(ret));
			tap_diag("SVM QUERY after the mirrored process exited: %s", err_name(ret));
		}
		if (fd >= 0)
			close(fd);
		close(sv[0]);
	}
#undef BASE
out:
	svm_close(&t);
}

/* ==== debugfs ==== */

#define SVM_DEBUGFS	"/sys/kernel/debug/accmap/svm"
#define SVM_HEADER	"pid\tcomm\tsession\tstart\tsize\tmapped\thuge\tfaults\tfatal\t" \
			"invalidations\tpages_mapped\tdevice"
#define SVM_ROW_FMT	"%u\t%63[^\t]\t%u\t0x%llx\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu"

static bool svm_row_of(pid_t pid, uint32_t session, char *row, size_t len)
{
	char *text = read_text(SVM_DEBUGFS, NULL), *line, *save = NULL;
	bool found = false;

	if (!text)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int p, s;

		if (sscanf(line, "%u\t%*s\t%u", &p, &s) == 2 && p == (unsigned int)pid &&
		    (!session || s == session)) {
			snprintf(row, len, "%s", line);
			found = true;
			break;
		}
	}
	free(text);
	return found;
}

static void test_debugfs(void)
{
	size_t len = 8 * ps, n = len / 4;
	uint32_t *a = map_anon(len, PROT_READ | PROT_WRITE);
	uint32_t *c = map_anon(len, PROT_READ | PROT_WRITE), *none = map_anon(ps, PROT_NONE);
	unsigned long long start, size, mapped, huge, faults, fatal, inval, pages, device;
	unsigned int pid, session;
	char row[512], comm[64], *text = NULL;
	struct accmap_sim_job job;
	struct accmap_svm_op q;
	struct svm t = { .dev = -1 };

	if (!a || !c || !none || !svm_open(&t))
		goto out;
	job = vadd(a, a, c, (uint32_t)n);
	job_ok(&t, &job, "a job before reading debugfs");
	job = vadd(a, a, none, 1);
	job_faults(&t, &job, (uintptr_t)none, ACCESS_WRITE, 0, "writing PROT_NONE");
	text = read_text(SVM_DEBUGFS, NULL);
	if (!CHECK(text, "%s: %s", SVM_DEBUGFS, strerror(errno)))
		goto out;
	CHECK(!strncmp(text, SVM_HEADER "\n", strlen(SVM_HEADER) + 1),
	      "the header of %s is \"%.*s\"", SVM_DEBUGFS, (int)strcspn(text, "\n"), text);
	if (!svm_query(&t, &q) ||
	    !CHECK(svm_row_of(getpid(), t.sim.session, row, sizeof(row)),
		   "no row for pid %d session %u in:\n%s", (int)getpid(), t.sim.session, text))
		goto out;
	tap_diag("%s", row);
	if (!CHECK(sscanf(row, SVM_ROW_FMT,
			  &pid, comm, &session, &start, &size, &mapped, &huge, &faults, &fatal,
			  &inval, &pages, &device) == 12, "the row does not parse: %s", row))
		goto out;
	/* Nothing here prefers device memory: no entry points into it. */
	CHECK(device == 0, "device column %llu, expected 0", device);
	CHECK(!strncmp(comm, "accmap_svm", 10), "comm \"%s\"", comm);
	CHECK(start == t.start && size == t.size, "range %#llx+%#llx, the session's %#llx+%#llx",
	      start, size, ull(t.start), ull(t.size));
	CHECK(mapped == q.mapped_bytes && huge == q.huge_bytes && faults == q.faults &&
	      fatal == q.fatal_faults && inval == q.invalidations && pages == q.pages_mapped,
	      "row %s; QUERY mapped %llu huge %llu faults %llu fatal %llu invalidations %llu pages %llu",
	      row, ull(q.mapped_bytes), ull(q.huge_bytes), ull(q.faults), ull(q.fatal_faults),
	      ull(q.invalidations), ull(q.pages_mapped));
	CHECK(faults > 0 && fatal >= 1, "faults %llu, fatal %llu after a job and a fatal fault",
	      faults, fatal);
	/* Gone with the session. */
	simdrv_svm_close(&t.sim);
	CHECK(!svm_row_of(getpid(), session, row, sizeof(row)),
	      "the row is still there after REPLAY_DESTROY: %s", row);
out:
	free(text);
	svm_close(&t);
}

static const struct tap_test tests[] = {
	{ "setup_errors", test_setup_errors },
	{ "svm_ioctl_errors", test_svm_ioctl_errors },
	{ "anon_read_write", test_anon_read_write },
	{ "zero_page", test_zero_page },
	{ "prot_none", test_prot_none },
	{ "unmapped", test_unmapped },
	{ "read_only", test_read_only },
	{ "shared_file", test_shared_file },
	{ "private_file_cow", test_private_file_cow },
	{ "fork_cow", test_fork_cow },
	{ "fork_shared", test_fork_shared },
	{ "munmap_during_job", test_munmap_during_job },
	{ "mremap", test_mremap },
	{ "outside_range", test_outside_range },
	{ "thp", test_thp },
	{ "dontneed", test_dontneed },
	{ "exit_mid_job", test_exit_mid_job },
	{ "matmul_malloc", test_matmul_malloc },
	{ "list_sum", test_list_sum },
	{ "munmap_during_walk", test_munmap_during_walk },
	{ "pageout_shared", test_pageout_shared },
	{ "migrate_soft_offline", test_migrate_soft_offline },
	{ "attr_gpu_ro", test_attr_gpu_ro },
	{ "prefetch", test_prefetch },
	{ "prefetch_past_eof", test_prefetch_past_eof },
	{ "uffd_prefetch", test_uffd_prefetch },
	{ "uffd_close_prefetch", test_uffd_close_prefetch },
	{ "uffd_close_gpu_fault", test_uffd_close_gpu_fault },
	{ "debugfs", test_debugfs },
};

int main(void)
{
	static const char *const thp_tests[] = { "thp", NULL };

	ps = page_size();
	return tap_run_except(tests, TAP_ARRAY_SIZE(tests), thp_tests, am_lacks_thp());
}

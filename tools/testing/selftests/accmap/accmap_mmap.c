// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of /dev/accmap at a buffer's offset (ACCMAP_IOC_MAP_OFFSET): the
 * offset itself and every errno of the ioctl, contents against READ and
 * WRITE, faults filling a page table's worth around them (bounds,
 * contents, access, racing threads), sharing between clients and across
 * fork(), mremap(), access (no id, read-only id), ranges, lifetime after
 * FREE and close, heap usage, and the memory kinds (write-combined,
 * uncached, carveout).
 *
 * Uncached memory is touched only with aligned 64-bit loads and stores
 * (see accmap_carveout.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

#define WC	ACCMAP_ALLOC_WRITECOMBINE
#define UC	ACCMAP_ALLOC_UNCACHED

/* MAP_OFFSET with the output pre-filled with garbage; 0 or -errno. */
static int map_offset(int dev, uint32_t id, uint64_t *offset)
{
	struct accmap_map_offset a = { .id = id, .flags = 0, .offset = GARBAGE_U64 };
	int ret = raw_ioctl(dev, ACCMAP_IOC_MAP_OFFSET, &a);

	if (!ret)
		*offset = a.offset;
	return ret;
}

/* MAP_OFFSET that must succeed; 0 (and a failed test) if it does not. */
static uint64_t must_offset(int dev, uint32_t id)
{
	uint64_t off = 0;
	int ret = map_offset(dev, id, &off);

	CHECK(ret == 0, "MAP_OFFSET(id %u): %s", id, strerror(-ret));
	return ret ? 0 : off;
}

/* A buffer (CREATE, ALLOC) and its offset; false (a failed test) if not. */
static bool new_offset(int dev, uint64_t size, uint32_t flags, uint32_t *id, uint64_t *off)
{
	if (am_buffer(dev, size, flags, id, false) < 0)
		return false;
	*off = must_offset(dev, *id);
	return *off != 0;
}

/*
 * A cached buffer of @len bytes with a dma-buf of it and its offset: the
 * dma-buf's fd, or a negative errno (a failed test).
 */
static int new_exported(int dev, size_t len, uint32_t *id, uint64_t *off)
{
	int fd = am_buffer(dev, len, 0, id, true);

	if (fd < 0)
		return fd;
	*off = must_offset(dev, *id);
	if (!*off) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * A cached buffer of @len bytes (CREATE, ALLOC), its offset, and a shared
 * read-write mapping of all of it; NULL (a failed test) if not.
 */
static uint8_t *new_mapping(int dev, size_t len, uint32_t *id, uint64_t *off)
{
	if (!new_offset(dev, len, 0, id, off))
		return NULL;
	return map_shared(dev, len, PROT_READ | PROT_WRITE, *off);
}

/* mmap(MAP_SHARED) of /dev/accmap; the result or MAP_FAILED, errno kept. */
static void *dev_mmap(int dev, uint64_t offset, size_t len, int prot, int flags)
{
	return mmap(NULL, len, prot, flags, dev, (off_t)offset);
}

/* The errno of a refused mmap(), 0 if it succeeded (and is undone). */
static int mmap_err(int dev, uint64_t offset, size_t len, int prot, int flags)
{
	void *p = dev_mmap(dev, offset, len, prot, flags);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* Aligned 64-bit stores and loads only: safe on uncached memory. */
static void fill64(void *dst, size_t len, uint64_t seed)
{
	uint64_t *p = dst;

	for (size_t i = 0; i < len / 8; i++)
		__atomic_store_n(&p[i], seed * 0x9e3779b97f4a7c15ULL + i, __ATOMIC_RELAXED);
}

static size_t check64(const void *src, size_t len, uint64_t seed)
{
	const uint64_t *p = src;

	for (size_t i = 0; i < len / 8; i++)
		if (__atomic_load_n(&p[i], __ATOMIC_RELAXED) != seed * 0x9e3779b97f4a7c15ULL + i)
			return i * 8;
	return len;
}

static bool check_pattern(const void *p, size_t len, size_t start, unsigned int seed,
			  const char *what)
{
	size_t bad = find_pattern_mismatch(p, len, start, seed);

	return CHECK(bad == len, "%s: byte %zu of %zu differs", what, bad, len);
}

/* READ of the whole buffer compared with the pattern (start 0). */
static bool check_read(int dev, uint32_t id, size_t len, unsigned int seed, const char *what)
{
	uint8_t *buf = malloc(len);
	bool ok;
	int ret;

	if (!CHECK(buf, "malloc(%zu)", len))
		return false;
	ret = am_read(dev, id, 0, buf, len);
	ok = CHECK(ret == 0, "%s: READ: %s", what, strerror(-ret)) &&
	     check_pattern(buf, len, 0, seed, what);
	free(buf);
	return ok;
}

/* ---- the offset ---- */

static void test_offset_stable_and_apart(void)
{
	size_t pg = page_size();
	uint32_t a, b;
	uint64_t oa, ob;
	int dev = am_open();

	if (dev < 0)
		return;
	if (am_buffer(dev, 3 * pg, 0, &a, false) < 0 || am_buffer(dev, pg, 0, &b, false) < 0)
		goto out;
	oa = must_offset(dev, a);
	ob = must_offset(dev, b);
	CHECK(oa && oa % pg == 0 && oa >= (1ULL << 30), "offset %#llx: page aligned, >= 1 GiB",
	      (unsigned long long)oa);
	CHECK(must_offset(dev, a) == oa, "a second MAP_OFFSET gives the same offset");
	/* Handed out in order, one unused page between two buffers. */
	CHECK(ob >= oa + 4 * pg, "offsets %#llx (3 pages) and %#llx overlap or touch",
	      (unsigned long long)oa, (unsigned long long)ob);
	/* The page after a buffer names nothing. */
	CHECK(mmap_err(dev, oa + 3 * pg, pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "mmap of the gap page after a buffer");
out:
	close(dev);
}

static void test_errnos(void)
{
	size_t pg = page_size();
	struct accmap_map_offset a;
	uint32_t id, empty;
	uint64_t off;
	int dev = am_open();

	if (dev < 0)
		return;
	if (am_buffer(dev, pg, 0, &id, false) < 0)
		goto out;

	CHECK(map_offset(dev, 0, &off) == -ENOENT, "id 0: ENOENT");
	CHECK(map_offset(dev, id + 1000, &off) == -ENOENT, "id never issued: ENOENT");
	for (unsigned int bit = 0; bit < 32; bit++) {
		a = (struct accmap_map_offset){
			.id = id, .flags = 1U << bit, .offset = GARBAGE_U64,
		};
		CHECK(raw_ioctl(dev, ACCMAP_IOC_MAP_OFFSET, &a) == -EINVAL, "flags bit %u: EINVAL",
		      bit);
		CHECK(a.offset == GARBAGE_U64, "a failed call wrote offset");
	}
	if (CHECK(am_create(dev, pg, &empty) == 0, "CREATE")) {
		CHECK(map_offset(dev, empty, &off) == -EINVAL, "id without memory: EINVAL");
		/* Its memory came later: now it has an offset. */
		if (CHECK(am_alloc(dev, empty, 0, 0) == 0, "ALLOC"))
			CHECK(map_offset(dev, empty, &off) == 0, "after ALLOC: MAP_OFFSET works");
	}

	/* The envelope (ABI rules): direction, sizes, pointers. */
	a = (struct accmap_map_offset){ .id = id };
	CHECK(raw_ioctl(dev, _IOW(ACCMAP_IOCTL_MAGIC, 0x13, struct accmap_map_offset), &a) ==
	      -ENOTTY, "_IOW: ENOTTY");
	CHECK(raw_ioctl(dev, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC, 0x13, 8), &a) ==
	      -EINVAL, "8 bytes (below the first version): EINVAL");
	{
		uint64_t big[4] = { 0 };

		memcpy(big, &a, sizeof(a));
		CHECK(raw_ioctl(dev, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC, 0x13,
					  sizeof(big)), big) == 0, "larger, zero tail: works");
		CHECK(big[1] == must_offset(dev, id), "larger: the offset is written");
		big[3] = 1;
		CHECK(raw_ioctl(dev, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC, 0x13,
					  sizeof(big)), big) == -E2BIG, "non-zero tail: E2BIG");
	}
	CHECK(raw_ioctl(dev, ACCMAP_IOC_MAP_OFFSET, NULL) == -EFAULT, "NULL: EFAULT");

	/* A freed id is stale. */
	CHECK(am_free(dev, id) == 0, "FREE");
	CHECK(map_offset(dev, id, &off) == -ENOENT, "freed id: ENOENT");
out:
	close(dev);
}

/* ---- contents ---- */

static void test_contents_match_read(void)
{
	size_t pg = page_size(), len = 8 * pg;
	uint8_t *p, *buf = malloc(len);
	uint32_t id;
	uint64_t off;
	int dev = am_open();

	if (dev < 0 || !CHECK(buf, "malloc"))
		goto out;
	p = new_mapping(dev, len, &id, &off);
	if (!p)
		goto out;

	/* Fresh memory reads as zero. */
	CHECK(find_nonzero(p, len) == len, "a fresh buffer maps as zero");
	/* The mapping's writes, seen by READ. */
	fill_pattern(p, len, 0, 11);
	check_read(dev, id, len, 11, "mapping -> READ");
	/* WRITE's, seen by the mapping. */
	fill_pattern(buf, len, 0, 12);
	CHECK(am_write(dev, id, 0, buf, len) == 0, "WRITE");
	check_pattern(p, len, 0, 12, "WRITE -> mapping");
	CHECK(check_counts(dev, id, 1, 0, 1, 0, "mapped once"), "counts");
	munmap(p, len);
	CHECK(check_counts(dev, id, 1, 0, 0, 0, "unmapped"), "counts");
out:
	free(buf);
	if (dev >= 0)
		close(dev);
}

/*
 * A mapping that starts inside the buffer, over 2 MiB (one fault fills
 * up to a page table's worth around the address, 2 MiB on 4 KiB pages):
 * every page lands where it belongs.
 */
static void test_partial_range_fault_around(void)
{
	size_t pg = page_size(), len = 4 << 20, skip = 5 * pg, mlen = len - skip - 3 * pg;
	uint8_t *p, *buf = malloc(len);
	uint32_t id;
	uint64_t off;
	int dev = am_open();

	if (dev < 0 || !CHECK(buf, "malloc"))
		goto out;
	if (!new_offset(dev, len, 0, &id, &off))
		goto out;
	fill_pattern(buf, len, 0, 21);
	if (!CHECK(am_write(dev, id, 0, buf, len) == 0, "WRITE"))
		goto out;
	p = map_shared(dev, mlen, PROT_READ | PROT_WRITE, off + skip);
	if (!p)
		goto out;
	/* First touch in the middle, then everything. */
	CHECK(p[mlen / 2 + 7] == buf[skip + mlen / 2 + 7], "the first page touched");
	check_pattern(p, mlen, skip, 21, "a mapping from page 5");
	fill_pattern(p, mlen, skip, 22);
	memcpy(buf + skip, p, mlen);
	munmap(p, mlen);
	/* READ sees the new bytes at the same places, the rest unchanged. */
	{
		uint8_t *got = malloc(len);

		if (CHECK(got, "malloc") && CHECK(am_read(dev, id, 0, got, len) == 0, "READ"))
			CHECK(!memcmp(got, buf, len), "READ after writes through a part");
		free(got);
	}
out:
	free(buf);
	if (dev >= 0)
		close(dev);
}

/* ---- fault-around ---- */

/* Minor faults taken so far by this process, or by this thread. */
static long minor_faults(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return -1;
	return ru.ru_minflt;
}

/*
 * Bytes one last-level page table maps (8-byte entries, the kernel's on
 * every architecture tested, armhf user space on arm64 included): one
 * fault fills at most the pages of the mapping in the aligned block of
 * that size around it.
 */
static size_t fault_block(void)
{
	size_t pg = page_size();

	return pg / 8 * pg;
}

static sigjmp_buf segv_jmp;

static void segv_handler(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

/* Whether a write to the byte at @addr raises SIGSEGV. */
static bool write_segv(uint8_t *addr)
{
	struct sigaction sa, old;
	bool segv = true;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = segv_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(segv_jmp, 1)) {
		__atomic_store_n(addr, 0x5a, __ATOMIC_RELAXED);
		segv = false;
	}
	sigaction(SIGSEGV, &old, NULL);
	return segv;
}

/*
 * Maps @npages of the buffer at /dev/accmap offset @off from its page
 * @first, @skew pages past a fault-around block boundary (MAP_FIXED into
 * a reservation, so that the blocks it touches are known); the mapping,
 * or NULL (a failed test).  *@resv and *@resv_len: what to munmap().
 */
static uint8_t *map_skewed(int dev, uint64_t off, size_t first, size_t npages,
			   size_t skew, int prot, void **resv, size_t *resv_len)
{
	size_t pg = page_size(), blk = fault_block();
	uintptr_t at;
	void *p;

	*resv_len = npages * pg + 2 * blk;
	*resv = mmap(NULL, *resv_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		     -1, 0);
	if (!CHECK(*resv != MAP_FAILED, "reserving %zu bytes: %s", *resv_len, strerror(errno)))
		return NULL;
	at = ((uintptr_t)*resv + blk - 1) / blk * blk + skew * pg;
	p = mmap((void *)at, npages * pg, prot, MAP_SHARED | MAP_FIXED, dev,
		 (off_t)(off + first * pg));
	if (!CHECK(p == (void *)at, "mmap of %zu pages from buffer page %zu at %#lx: %s",
		   npages, first, (unsigned long)at, strerror(errno))) {
		munmap(*resv, *resv_len);
		return NULL;
	}
	return p;
}

/* One mapping of test_fault_around_bounds. */
struct fault_case {
	const char *what;
	size_t first;	/* buffer page the mapping starts at */
	size_t npages;
	size_t skew;	/* pages from a block boundary to its start */
	bool readonly;	/* through the O_RDONLY /dev/accmap */
};

/*
 * Reads one byte of every page of @c's mapping (the faults counted must
 * be the blocks it touches), compares every byte with @ref (the buffer's
 * contents), then: writable, writes one byte per page (no fault more: the
 * filled entries are young and dirty like the faulting page's) and
 * updates @ref; read-only, every page refuses a write, and mprotect()
 * cannot add write access.
 */
static void fault_case(int dev, int dev_ro, uint64_t off, uint8_t *ref,
		       const struct fault_case *c)
{
	size_t pg = page_size(), blk = fault_block(), len = c->npages * pg, bad;
	long before, faults, want;
	unsigned int sum = 0;
	size_t resv_len;
	uintptr_t a;
	uint8_t *p;
	void *resv;

	p = map_skewed(c->readonly ? dev_ro : dev, off, c->first, c->npages, c->skew,
		       c->readonly ? PROT_READ : PROT_READ | PROT_WRITE, &resv, &resv_len);
	if (!p)
		return;
	a = (uintptr_t)p;
	want = (long)((a + len - 1) / blk - a / blk + 1);
	before = minor_faults(RUSAGE_SELF);
	for (size_t i = 0; i < c->npages; i++)
		sum += __atomic_load_n(&p[i * pg + i % pg], __ATOMIC_RELAXED);
	faults = minor_faults(RUSAGE_SELF) - before;
	CHECK(faults == want, "%s: %zu pages read with %ld faults, want %ld (%zu KiB blocks)",
	      c->what, c->npages, faults, want, blk >> 10);
	tap_diag("%s: %zu pages, %ld faults (checksum %u)", c->what, c->npages, faults, sum);
	for (bad = 0; bad < len && p[bad] == ref[c->first * pg + bad]; bad++)
		;
	CHECK(bad == len, "%s: byte %zu (page %zu of the mapping) is not what WRITE put there",
	      c->what, bad, bad / pg);

	if (!c->readonly) {
		before = minor_faults(RUSAGE_SELF);
		for (size_t i = 0; i < c->npages; i++) {
			size_t at = i * pg + (i * 7) % pg;

			p[at] = (uint8_t)~p[at];
		}
		faults = minor_faults(RUSAGE_SELF) - before;
		CHECK(faults == 0, "%s: writes after the filling reads took %ld faults", c->what,
		      faults);
		for (size_t i = 0; i < c->npages; i++) {
			size_t at = i * pg + (i * 7) % pg;

			ref[c->first * pg + at] = (uint8_t)~ref[c->first * pg + at];
		}
	} else {
		size_t writable = 0;

		for (size_t i = 0; i < c->npages; i++)
			writable += !write_segv(&p[i * pg + 3]);
		CHECK(writable == 0, "%s: %zu of %zu pages of a read-only mapping took a write",
		      c->what, writable, c->npages);
		CHECK_ERR(mprotect(p, len, PROT_READ | PROT_WRITE), EACCES);
	}
	munmap(resv, resv_len);
}

/*
 * Mappings of /dev/accmap that are not block aligned, start inside the
 * buffer or end with it: each fault fills its block's pages of the
 * mapping, no more (the buffer pages around are not the mapping's), at
 * the right buffer pages, with the mapping's access.  The buffer is two
 * blocks and 4 pages (W pages a block).
 */
static void test_fault_around_bounds(void)
{
	size_t pg = page_size(), w = fault_block() / pg, n = 2 * w + 4, len = n * pg;
	const struct fault_case cases[] = {
		{ "whole buffer, 3 pages past a boundary", 0, n, 3, false },
		{ "from buffer page 5, from the last page of a block", 5, w + 2, w - 1, false },
		{ "buffer's last 3 pages, across a boundary", n - 3, 3, w - 2, true },
		{ "buffer's last page, at a block's end", n - 1, 1, w - 1, false },
		{ "from buffer page 1 to the next-to-last, aligned", 1, n - 2, 0, true },
	};
	uint8_t *ref = malloc(len), *got = malloc(len);
	int dev = am_open(), dev_ro = -1, fd = -1;
	uint32_t id, id_ro;
	uint64_t off;

	if (dev < 0 || !CHECK(ref && got, "malloc"))
		goto out;
	fd = new_exported(dev, len, &id, &off);
	if (fd < 0)
		goto out;
	fill_pattern(ref, len, 0, 91);
	if (!CHECK(am_write(dev, id, 0, ref, len) == 0, "WRITE"))
		goto out;
	dev_ro = open(ACCMAP_DEV_PATH, O_RDONLY | O_CLOEXEC);
	if (!CHECK(dev_ro >= 0, "open O_RDONLY: %s", strerror(errno)) ||
	    !CHECK(am_from_fd(dev_ro, fd, &id_ro) == 0, "FROM_FD into the O_RDONLY client"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(cases); i++)
		fault_case(dev, dev_ro, off, ref, &cases[i]);
	/* The writes went to the buffer pages they belong to. */
	if (CHECK(am_read(dev, id, 0, got, len) == 0, "READ"))
		CHECK(!memcmp(got, ref, len), "READ after writes through the mappings");
out:
	free(ref);
	free(got);
	if (fd >= 0)
		close(fd);
	if (dev_ro >= 0)
		close(dev_ro);
	if (dev >= 0)
		close(dev);
}

/* Two threads fault one block at once, from either end. */
struct fault_race {
	uint8_t *p;
	size_t npages;
	const uint8_t *ref;	/* the buffer's contents */
	pthread_barrier_t *start;
	unsigned int side;	/* 0: from the first page up, 1: from the last down */
	uint8_t mark;
	long faults;
	size_t bad;		/* pages of the other side that read wrong */
};

/* Pages in the largest fault block (a 64 KiB-page kernel's 512 MiB). */
#define FAULT_RACE_MAX_PAGES 8192

/* Rounds of the race in test_fault_around_threads(). */
#define FAULT_RACE_ROUNDS 200

/*
 * The count of minor faults is the thread's, so between its two readings
 * the thread touches nothing but the mapping and memory it touched before
 * the first: the bytes it compares against are copied onto its own stack,
 * and getrusage() runs once beforehand, so that the page its result is
 * written to is in (a fresh thread stack's first getrusage() can fault
 * after the kernel has read the count, and the second reading counts it).
 */
static void *fault_race_thread(void *arg)
{
	struct fault_race *r = arg;
	uint8_t want[FAULT_RACE_MAX_PAGES];
	size_t pg = page_size(), bad = 0;
	long before;

	for (size_t i = 0; i < r->npages; i++)
		want[i] = r->ref[i * pg];
	minor_faults(RUSAGE_THREAD);
	pthread_barrier_wait(r->start);
	before = minor_faults(RUSAGE_THREAD);
	for (size_t k = 0; k < r->npages; k++) {
		size_t i = r->side ? r->npages - 1 - k : k;

		/* Own pages: a mark at byte 1; the other's: byte 0 intact. */
		if (i % 2 == r->side)
			__atomic_store_n(&r->p[i * pg + 1], r->mark, __ATOMIC_RELAXED);
		else if (__atomic_load_n(&r->p[i * pg], __ATOMIC_RELAXED) != want[i])
			bad++;
	}
	r->bad = bad;
	r->faults = minor_faults(RUSAGE_THREAD) - before;
	return NULL;
}

/*
 * Both fills find entries the other put there and leave them: every page
 * reads and keeps the right bytes, and each thread takes one fault at
 * most: the first fault done, its block is all there.  A fill that takes
 * the page table's lock once per page lets the thread behind it catch up
 * and fault again, as often as it catches up (2, 4 and 46 faults were
 * seen so on arm64 with 5.10, in about one round of a hundred).  Rounds
 * with a fresh mapping each.  Where accmap.ko fills a page at a time
 * (ACCMAP_FILL=page from the harness: a kernel whose set_pte_at() a
 * module cannot call), the fault bound is not a property of the build:
 * the faults are counted and printed, the bytes still checked.
 */
static void test_fault_around_threads(void)
{
	size_t pg = page_size(), n = fault_block() / pg, len = n * pg;
	const char *fill = getenv("ACCMAP_FILL");
	bool pagewise = fill && !strcmp(fill, "page");
	uint8_t *ref = malloc(len), *got = malloc(len);
	int dev = am_open();
	long extra = 0;
	uint32_t id;
	uint64_t off;

	if (dev < 0 || !CHECK(ref && got, "malloc"))
		goto out;
	if (!CHECK(n <= FAULT_RACE_MAX_PAGES, "%zu pages in a fault block", n) ||
	    !new_offset(dev, len, 0, &id, &off))
		goto out;
	fill_pattern(ref, len, 0, 93);
	if (!CHECK(am_write(dev, id, 0, ref, len) == 0, "WRITE"))
		goto out;
	for (unsigned int round = 0; round < FAULT_RACE_ROUNDS; round++) {
		struct fault_race r[2];
		pthread_barrier_t start;
		pthread_t thr[2];
		size_t resv_len;
		unsigned int t;
		void *resv;
		uint8_t *p;

		p = map_skewed(dev, off, 0, n, 0, PROT_READ | PROT_WRITE, &resv, &resv_len);
		if (!p)
			break;
		pthread_barrier_init(&start, NULL, 2);
		for (t = 0; t < 2; t++) {
			r[t] = (struct fault_race){
				.p = p, .npages = n, .ref = ref, .start = &start, .side = t,
				.mark = (uint8_t)(round * 2 + t + 1),
			};
			if (!CHECK(pthread_create(&thr[t], NULL, fault_race_thread, &r[t]) == 0,
				   "pthread_create"))
				break;
		}
		if (t < 2) {
			/* The one thread started waits for a second: be it this one. */
			if (t == 1) {
				pthread_barrier_wait(&start);
				pthread_join(thr[0], NULL);
			}
			pthread_barrier_destroy(&start);
			munmap(resv, resv_len);
			break;
		}
		for (t = 0; t < 2; t++)
			pthread_join(thr[t], NULL);
		pthread_barrier_destroy(&start);
		for (t = 0; t < 2; t++) {
			CHECK(r[t].bad == 0, "round %u, thread %u: %zu pages read wrong", round, t,
			      r[t].bad);
			if (pagewise)
				extra += r[t].faults > 1 ? r[t].faults - 1 : 0;
			else
				CHECK(r[t].faults <= 1,
				      "round %u, thread %u: %ld faults, want 1 at most",
				      round, t, r[t].faults);
		}
		for (size_t i = 0; i < n; i++)
			ref[i * pg + 1] = r[i % 2].mark;
		CHECK(!memcmp(p, ref, len), "round %u: the mapping after both threads", round);
		munmap(resv, resv_len);
		if (CHECK(am_read(dev, id, 0, got, len) == 0, "READ"))
			CHECK(!memcmp(got, ref, len), "round %u: READ after both threads", round);
	}
	if (pagewise)
		tap_diag("accmap.ko fills a page at a time here: %ld faults %s in %u rounds",
			 extra, "beyond the first of each thread", FAULT_RACE_ROUNDS);
out:
	free(ref);
	free(got);
	if (dev >= 0)
		close(dev);
}

/* ---- sharing and access ---- */

static void test_two_clients(void)
{
	size_t pg = page_size(), len = 4 * pg;
	uint8_t *p1 = NULL, *p2 = NULL;
	uint32_t id1, id2;
	uint64_t off;
	int dev1 = am_open(), dev2 = am_open(), fd = -1;

	if (dev1 < 0 || dev2 < 0)
		goto out;
	fd = new_exported(dev1, len, &id1, &off);
	if (fd < 0)
		goto out;
	if (!CHECK(am_from_fd(dev2, fd, &id2) == 0, "FROM_FD"))
		goto out;
	CHECK(must_offset(dev2, id2) == off, "the offset is the same in both clients");
	p1 = map_shared(dev1, len, PROT_READ | PROT_WRITE, off);
	p2 = map_shared(dev2, len, PROT_READ | PROT_WRITE, off);
	if (!p1 || !p2)
		goto out;
	fill_pattern(p1, len, 0, 31);
	check_pattern(p2, len, 0, 31, "client 1 writes, client 2 reads");
	fill_pattern(p2, len, 0, 32);
	check_pattern(p1, len, 0, 32, "client 2 writes, client 1 reads");
	CHECK(check_counts(dev1, id1, 2, 1, 2, 0, "two mappings"), "counts");
out:
	if (p1)
		munmap(p1, len);
	if (p2)
		munmap(p2, len);
	if (fd >= 0)
		close(fd);
	if (dev1 >= 0)
		close(dev1);
	if (dev2 >= 0)
		close(dev2);
}

static void test_no_id_eacces(void)
{
	size_t pg = page_size();
	uint32_t id, other, id2;
	uint64_t off;
	int dev1 = am_open(), dev2 = am_open(), fd = -1;

	if (dev1 < 0 || dev2 < 0)
		goto out;
	fd = am_buffer(dev1, pg, 0, &id, true);
	if (fd < 0)
		goto out;
	off = must_offset(dev1, id);
	if (!off)
		goto out;
	CHECK(mmap_err(dev2, off, pg, PROT_READ, MAP_SHARED) == EACCES,
	      "a client without an id: EACCES");
	/* An id for another buffer does not help. */
	if (am_buffer(dev2, pg, 0, &other, false) < 0)
		goto out;
	CHECK(mmap_err(dev2, off, pg, PROT_READ, MAP_SHARED) == EACCES,
	      "a client with an id for another buffer only: EACCES");
	/* With an id it maps; once the id is freed, no more. */
	if (!CHECK(am_from_fd(dev2, fd, &id2) == 0, "FROM_FD"))
		goto out;
	CHECK(mmap_err(dev2, off, pg, PROT_READ, MAP_SHARED) == 0, "with an id: works");
	CHECK(am_free(dev2, id2) == 0, "FREE");
	CHECK(mmap_err(dev2, off, pg, PROT_READ, MAP_SHARED) == EACCES,
	      "after its id was freed: EACCES");
out:
	if (fd >= 0)
		close(fd);
	if (dev1 >= 0)
		close(dev1);
	if (dev2 >= 0)
		close(dev2);
}

static void test_readonly_id(void)
{
	size_t pg = page_size(), len = 2 * pg;
	uint32_t id, ro, rw;
	uint64_t off;
	uint8_t *p;
	int dev1 = am_open(), dev2 = am_open(), fd_ro = -1, fd_rw = -1;

	if (dev1 < 0 || dev2 < 0)
		goto out;
	fd_rw = new_exported(dev1, len, &id, &off);
	if (fd_rw < 0)
		goto out;
	fd_ro = am_get_fd(dev1, id, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd_ro >= 0, "GET_FD O_RDONLY") ||
	    !CHECK(am_from_fd(dev2, fd_ro, &ro) == 0, "FROM_FD of the O_RDONLY dma-buf"))
		goto out;
	p = map_shared(dev1, len, PROT_READ | PROT_WRITE, off);
	if (!p)
		goto out;
	fill_pattern(p, len, 0, 41);
	munmap(p, len);

	CHECK(must_offset(dev2, ro) == off, "MAP_OFFSET through a read-only id");
	CHECK(mmap_err(dev2, off, len, PROT_READ | PROT_WRITE, MAP_SHARED) == EACCES,
	      "PROT_WRITE through a read-only id: EACCES");
	p = map_shared(dev2, len, PROT_READ, off);
	if (p) {
		check_pattern(p, len, 0, 41, "a read-only mapping");
		CHECK_ERR(mprotect(p, len, PROT_READ | PROT_WRITE), EACCES);
		munmap(p, len);
	}
	/* A writable id of the same client for the same buffer allows writing. */
	if (!CHECK(am_from_fd(dev2, fd_rw, &rw) == 0, "FROM_FD of the O_RDWR dma-buf"))
		goto out;
	p = map_shared(dev2, len, PROT_READ | PROT_WRITE, off);
	if (p) {
		fill_pattern(p, len, 0, 42);
		munmap(p, len);
		check_read(dev1, id, len, 42, "written through the client's writable id");
	}
	/* The writable id gone, the read-only one is what is left. */
	CHECK(am_free(dev2, rw) == 0, "FREE of the writable id");
	CHECK(mmap_err(dev2, off, len, PROT_READ | PROT_WRITE, MAP_SHARED) == EACCES,
	      "PROT_WRITE after the writable id went: EACCES");
out:
	if (fd_ro >= 0)
		close(fd_ro);
	if (fd_rw >= 0)
		close(fd_rw);
	if (dev1 >= 0)
		close(dev1);
	if (dev2 >= 0)
		close(dev2);
}

/* /dev/accmap opened O_RDONLY cannot map for writing (the file's mode). */
static void test_readonly_device_file(void)
{
	size_t pg = page_size();
	uint32_t id;
	uint64_t off;
	int dev = open(ACCMAP_DEV_PATH, O_RDONLY | O_CLOEXEC);

	if (!CHECK(dev >= 0, "open O_RDONLY: %s", strerror(errno)))
		return;
	if (!new_offset(dev, pg, 0, &id, &off))
		goto out;
	CHECK(mmap_err(dev, off, pg, PROT_READ | PROT_WRITE, MAP_SHARED) == EACCES,
	      "PROT_WRITE on an O_RDONLY /dev/accmap: EACCES");
	CHECK(mmap_err(dev, off, pg, PROT_READ, MAP_SHARED) == 0, "PROT_READ works");
out:
	close(dev);
}

/* ---- ranges ---- */

static void test_bad_ranges(void)
{
	size_t pg = page_size(), len = 4 * pg;
	uint32_t id, gone;
	uint64_t off, off_gone;
	int dev = am_open();

	if (dev < 0)
		return;
	if (!new_offset(dev, len, 0, &id, &off))
		goto out;
	CHECK(mmap_err(dev, off, len, PROT_READ, MAP_PRIVATE) == EINVAL, "MAP_PRIVATE: EINVAL");
	CHECK(mmap_err(dev, off, len + pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "one page past the end: EINVAL");
	CHECK(mmap_err(dev, off + 3 * pg, 2 * pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "from the last page, two pages: EINVAL");
	CHECK(mmap_err(dev, off + 3 * pg, pg, PROT_READ, MAP_SHARED) == 0,
	      "the last page alone works");
	CHECK(mmap_err(dev, 0, pg, PROT_READ, MAP_SHARED) == EINVAL, "offset 0: EINVAL");
	CHECK(mmap_err(dev, (1ULL << 30) - pg, pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "below the first offset: EINVAL");
	CHECK(mmap_err(dev, 1ULL << 46, pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "an offset never handed out: EINVAL");

	/* A released buffer's offset names nothing, and is not reused. */
	if (!new_offset(dev, pg, 0, &gone, &off_gone))
		goto out;
	CHECK(am_free(dev, gone) == 0, "FREE");
	CHECK(mmap_err(dev, off_gone, pg, PROT_READ, MAP_SHARED) == EINVAL,
	      "the offset of a released buffer: EINVAL");
	if (am_buffer(dev, pg, 0, &gone, false) < 0)
		goto out;
	CHECK(must_offset(dev, gone) > off_gone, "a new buffer gets a new offset");
out:
	close(dev);
}

/* ---- lifetime ---- */

static void test_outlives_id_and_file(void)
{
	size_t pg = page_size(), len = 4 * pg;
	uint8_t *p, *q;
	uint32_t id;
	uint64_t off;
	int dev = am_open();

	if (dev < 0)
		return;
	p = new_mapping(dev, len, &id, &off);
	q = p ? map_shared(dev, 2 * pg, PROT_READ, off + 2 * pg) : NULL;
	if (!p || !q)
		goto out;
	CHECK(check_counts(dev, id, 1, 0, 2, 0, "two mappings"), "counts");
	fill_pattern(p, 2 * pg, 0, 51);	/* the rest not touched yet */
	CHECK(am_free(dev, id) == 0, "FREE");
	close(dev);
	dev = -1;
	/* Pages touched before, and never touched, both still there. */
	check_pattern(p, 2 * pg, 0, 51, "after FREE and close");
	fill_pattern(p + 2 * pg, 2 * pg, 2 * pg, 52);
	check_pattern(q, 2 * pg, 2 * pg, 52, "the second mapping sees the first's writes");
	munmap(p, len);
	check_pattern(q, 2 * pg, 2 * pg, 52, "the last mapping alone");
	munmap(q, 2 * pg);
out:
	if (dev >= 0)
		close(dev);
}

static void test_fork_shares(void)
{
	size_t pg = page_size(), len = 4 * pg;
	uint32_t id;
	uint64_t off;
	uint8_t *p;
	pid_t pid;
	int status, dev = am_open();

	if (dev < 0)
		return;
	p = new_mapping(dev, len, &id, &off);
	if (!p)
		goto out;
	fill_pattern(p, len, 0, 61);
	pid = fork();
	if (pid == 0) {
		bool ok = find_pattern_mismatch(p, len, 0, 61) == len;

		fill_pattern(p, len, 0, 62);
		_exit(ok ? 0 : 1);
	}
	if (CHECK(pid > 0, "fork: %s", strerror(errno))) {
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "the child saw the parent's bytes");
		check_pattern(p, len, 0, 62, "the parent sees the child's bytes");
	}
	CHECK(check_counts(dev, id, 1, 0, 1, 0, "after the child exited"), "counts");
	munmap(p, len);
out:
	close(dev);
}

/*
 * mremap() of a mapping: it may move and shrink, counted once in INFO's
 * maps and holding the buffer, but never grow past what mmap() checked
 * (VM_DONTEXPAND) nor be duplicated (old size 0).
 */
static void test_mremap(void)
{
	size_t pg = page_size(), len = 4 * pg;
	uint8_t *p, *moved, *dup, *dst;
	uint32_t id;
	uint64_t off;
	int dev = am_open();

	if (dev < 0)
		return;
	p = new_mapping(dev, len, &id, &off);
	if (!p)
		goto out;
	fill_pattern(p, len, 0, 71);

	/* Growing, in place or by moving, is refused. */
	CHECK(mremap(p, len, 2 * len, 0) == MAP_FAILED, "growing in place is refused");
	CHECK(mremap(p, len, 2 * len, MREMAP_MAYMOVE) == MAP_FAILED,
	      "growing by moving is refused");

	/* A move to a chosen address keeps the pages and the count. */
	dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(dst != MAP_FAILED, "reserving a destination: %s", strerror(errno)))
		goto out_unmap;
	moved = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (!CHECK(moved == dst, "mremap to %p: %s", (void *)dst, strerror(errno))) {
		munmap(dst, len);
		goto out_unmap;
	}
	p = moved;
	check_pattern(p, len, 0, 71, "after the move");
	CHECK(check_counts(dev, id, 1, 0, 1, 0, "after the move"), "counts");

	/* Shrinking drops the tail only. */
	CHECK(mremap(p, len, 2 * pg, 0) == p, "shrinking to two pages: %s", strerror(errno));
	len = 2 * pg;
	check_pattern(p, len, 0, 71, "after shrinking");
	CHECK(check_counts(dev, id, 1, 0, 1, 0, "after shrinking"), "counts");

	/*
	 * Old size 0 would make a second mapping of the same pages: the
	 * kernel refuses it for a PFN mapping (EFAULT), as it refuses growth.
	 */
	dup = mremap(p, 0, len, MREMAP_MAYMOVE);
	CHECK(dup == MAP_FAILED && errno == EFAULT, "duplicating with old size 0: %s",
	      dup == MAP_FAILED ? strerror(errno) : "allowed");
	if (dup != MAP_FAILED)
		munmap(dup, len);
	CHECK(check_counts(dev, id, 1, 0, 1, 0, "after the refused duplicate"), "counts");

	/* The moved mapping keeps the buffer after FREE. */
	CHECK(am_free(dev, id) == 0, "FREE");
	fill_pattern(p, len, 0, 72);
	check_pattern(p, len, 0, 72, "the moved mapping, after FREE");
out_unmap:
	if (p)
		munmap(p, len);
out:
	close(dev);
}

static bool heap_used(int dev, uint32_t heap, uint64_t *used)
{
	struct accmap_heap_info info;
	int ret = am_query_heap(dev, heap, &info);

	if (!CHECK(ret == 0, "QUERY_HEAP %u: %s", heap, strerror(-ret)))
		return false;
	*used = info.used;
	return true;
}

static void test_unmap_frees_memory(void)
{
	size_t len = 1 << 20;
	uint64_t before, now, off;
	uint32_t id;
	uint8_t *p;
	int dev = am_open();

	if (dev < 0)
		return;
	if (!heap_used(dev, ACCMAP_HEAP_SYSTEM, &before))
		goto out;
	p = new_mapping(dev, len, &id, &off);
	if (!p)
		goto out;
	memset(p, 0x5a, len);
	CHECK(am_free(dev, id) == 0, "FREE");
	if (heap_used(dev, ACCMAP_HEAP_SYSTEM, &now))
		CHECK(now == before + len, "mapped, no id: used %llu, expected %llu",
		      (unsigned long long)now, (unsigned long long)(before + len));
	munmap(p, len);
	if (heap_used(dev, ACCMAP_HEAP_SYSTEM, &now))
		CHECK(now == before, "after munmap: used %llu, expected %llu",
		      (unsigned long long)now, (unsigned long long)before);
	CHECK(mmap_err(dev, off, len, PROT_READ, MAP_SHARED) == EINVAL,
	      "the freed buffer's offset: EINVAL");
out:
	close(dev);
}

/*
 * A FROM_VA buffer's release gives back the pinning process's locked_vm,
 * which takes that process's mmap_lock: when munmap() of a /dev/accmap
 * mapping drops the last reference, the release must not run under
 * munmap()'s own mmap_lock (the call would never return).  The pins go
 * soon after, in a worker.
 */
static void test_fromva_last_unmap(void)
{
	size_t pg = page_size(), len = 4 * pg;
	struct accmap_from_va a = { .flags = ACCMAP_FROM_VA_WRITE, .id = GARBAGE_U32 };
	uint64_t before = 0, now = 0, off;
	uint8_t *mem, *p;
	int dev = am_open(), ret, i;

	if (dev < 0)
		return;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(mem != MAP_FAILED, "mmap of anonymous memory") ||
	    !heap_used(dev, ACCMAP_HEAP_USER, &before))
		goto out;
	memset(mem, 0, len);
	a.addr = (uintptr_t)mem;
	a.size = len;
	ret = raw_ioctl(dev, ACCMAP_IOC_FROM_VA, &a);
	if (!CHECK(ret == 0, "FROM_VA: %s", strerror(-ret)))
		goto out_unmap;
	off = must_offset(dev, a.id);
	if (!off)
		goto out_unmap;
	p = map_shared(dev, len, PROT_READ | PROT_WRITE, off);
	if (!p)
		goto out_unmap;
	fill_pattern(p, len, 0, 81);
	check_pattern(mem, len, 0, 81, "the process's memory, written through /dev/accmap");
	CHECK(am_free(dev, a.id) == 0, "FREE");
	CHECK(munmap(p, len) == 0, "munmap of the last mapping of a FROM_VA buffer");
	/* Released by a worker: wait for it, 2 s at most. */
	for (i = 0; i < 200; i++) {
		if (!heap_used(dev, ACCMAP_HEAP_USER, &now) || now == before)
			break;
		usleep(10000);
	}
	CHECK(now == before, "user heap: used %llu, %llu before the buffer",
	      (unsigned long long)now, (unsigned long long)before);
out_unmap:
	munmap(mem, len);
out:
	close(dev);
}

/* ---- memory kinds ---- */

/* Maps @id of @len bytes, writes and reads 64-bit words both ways. */
static void map_roundtrip(int dev, uint32_t id, size_t len, const char *what)
{
	uint64_t off = must_offset(dev, id), *buf = malloc(len);
	void *p;

	if (!off || !CHECK(buf, "malloc"))
		goto out;
	p = map_shared(dev, len, PROT_READ | PROT_WRITE, off);
	if (!p)
		goto out;
	fill64(p, len, 71);
	if (CHECK(am_read(dev, id, 0, buf, len) == 0, "%s: READ", what))
		CHECK(check64(buf, len, 71) == len, "%s: mapping -> READ", what);
	fill64(buf, len, 72);
	if (CHECK(am_write(dev, id, 0, buf, len) == 0, "%s: WRITE", what))
		CHECK(check64(p, len, 72) == len, "%s: WRITE -> mapping", what);
	munmap(p, len);
out:
	free(buf);
}

static void test_wc_uncached(void)
{
	static const uint32_t kinds[] = { WC, UC };
	size_t len = 4 * page_size();
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(kinds); i++) {
		uint32_t id;

		if (am_buffer(dev, len, kinds[i], &id, false) < 0)
			continue;
		map_roundtrip(dev, id, len, kinds[i] == WC ? "write-combined" : "uncached");
	}
	close(dev);
}

static void test_carveout(void)
{
	size_t len = 4 * page_size();
	const char *env = getenv("ACCMAP_CARVEOUTS");
	unsigned int found = 0;
	int dev = am_open();

	if (dev < 0)
		return;
	for (uint32_t heap = ACCMAP_HEAP_CARVEOUT_FIRST;
	     heap < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; heap++) {
		struct accmap_heap_info info;
		struct accmap_alloc a = {
			.heap_mask = 1U << heap, .flags = WC, .heap = GARBAGE_U32,
		};
		char what[64];
		int ret;

		if (am_query_heap(dev, heap, &info) == -ENODEV)
			continue;
		found++;
		if (!CHECK(am_create(dev, len, &a.id) == 0, "CREATE"))
			continue;
		ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
		if (!CHECK(ret == 0 && a.heap == heap, "write-combined ALLOC from carveout %u: %s",
			   heap, strerror(-ret)))
			continue;
		snprintf(what, sizeof(what), "carveout '%.31s'", info.name);
		map_roundtrip(dev, a.id, len, what);
		am_free(dev, a.id);
	}
	if (!found) {
		/* The VM run always configures carveouts and says so. */
		if (env && *env)
			CHECK(false, "no carveout heap, ACCMAP_CARVEOUTS=%s", env);
		else
			tap_skip("no carveout heap on this machine");
	}
	close(dev);
}

static const struct tap_test tests[] = {
	{ "offset_stable_and_apart", test_offset_stable_and_apart },
	{ "errnos", test_errnos },
	{ "contents_match_read", test_contents_match_read },
	{ "partial_range_fault_around", test_partial_range_fault_around },
	{ "fault_around_bounds", test_fault_around_bounds },
	{ "fault_around_threads", test_fault_around_threads },
	{ "two_clients", test_two_clients },
	{ "no_id_eacces", test_no_id_eacces },
	{ "readonly_id", test_readonly_id },
	{ "readonly_device_file", test_readonly_device_file },
	{ "bad_ranges", test_bad_ranges },
	{ "outlives_id_and_file", test_outlives_id_and_file },
	{ "fork_shares", test_fork_shares },
	{ "mremap", test_mremap },
	{ "unmap_frees_memory", test_unmap_frees_memory },
	{ "fromva_last_unmap", test_fromva_last_unmap },
	{ "wc_uncached", test_wc_uncached },
	{ "carveout", test_carveout },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

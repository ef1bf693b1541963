// SPDX-License-Identifier: GPL-2.0
/*
 * ACCMAP_IOC_FROM_VA: buffers over the caller's own memory.
 *
 * Every kind of memory a process has (heap, private and shared anonymous
 * memory, transparent huge pages, a memfd mapped shared or private) is
 * pinned and then read and written from both sides: through the user
 * address, and through the buffer (READ/WRITE, a dma-buf mapping, vgem).
 * Then what must survive does: munmap of the range, fork, the exit of
 * the pinning process; and what must be refused is: inaccessible or
 * read-only memory, writes to read-only buffers, bad arguments, pins over
 * RLIMIT_MEMLOCK.  Every pin is checked to be undone and refunded: the
 * user heap's used bytes, the process's VmLck and the kernel's count of
 * pinned pages (/proc/vmstat) come back to where they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/magic.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

#define W	ACCMAP_FROM_VA_WRITE

/* ==== helpers ==== */

/* FROM_VA with every field given; 0 and *id, or -errno. */
static int from_va(int dev, uint64_t addr, uint64_t size, uint32_t flags, uint16_t tag,
		   uint32_t *id)
{
	struct accmap_from_va a = {
		.addr = addr, .size = size, .flags = flags, .tag = tag,
		.pad = 0, .id = GARBAGE_U32, .pad2 = 0,
	};
	int ret = raw_ioctl(dev, ACCMAP_IOC_FROM_VA, &a);

	if (!ret && id)
		*id = a.id;
	return ret;
}

static uint64_t va(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* FROM_VA that must succeed; the id, or 0 after a failure. */
static uint32_t pin(int dev, const void *addr, size_t size, uint32_t flags, uint16_t tag)
{
	uint32_t id = 0;
	int ret = from_va(dev, va(addr), size, flags, tag, &id);

	if (!CHECK(ret == 0, "FROM_VA(%p, %zu, flags %#x): %s", addr, size, flags,
		   strerror(-ret)))
		return 0;
	CHECK(id != 0 && id != GARBAGE_U32, "FROM_VA gave id %#x", id);
	return id;
}

/*
 * FROM_VA that must fail with err and leave its argument as it was (no
 * id written back).
 */
static bool from_va_refused(int dev, const struct accmap_from_va *arg, int err,
			    const char *what)
{
	struct accmap_from_va a = *arg;
	bool ok;

	ok = CHECK_ERR(ioctl(dev, ACCMAP_IOC_FROM_VA, &a), err);
	if (!ok)
		tap_diag("%s: addr %#llx size %#llx flags %#x pad %#x pad2 %#x", what,
			 (unsigned long long)arg->addr, (unsigned long long)arg->size,
			 arg->flags, arg->pad, arg->pad2);
	ok &= CHECK(!memcmp(&a, arg, sizeof(a)), "%s: refused FROM_VA wrote its argument", what);
	return ok;
}

static bool refused(int dev, uint64_t addr, uint64_t size, uint32_t flags, int err,
		    const char *what)
{
	struct accmap_from_va a = {
		.addr = addr, .size = size, .flags = flags, .id = GARBAGE_U32,
	};

	return from_va_refused(dev, &a, err, what);
}

static void *map_anon(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (!CHECK(p != MAP_FAILED, "mmap(anonymous, %zu, prot %#x, flags %#x): %s", len, prot,
		   flags, strerror(errno)))
		return NULL;
	return p;
}

/* A memfd of len bytes, filled with the pattern of seed; -1 on failure. */
static int new_memfd(size_t len, unsigned int seed)
{
	int fd = memfd_create("accmap-fromva", MFD_CLOEXEC);
	char *p;

	if (!CHECK(fd >= 0, "memfd_create: %s", strerror(errno)))
		return -1;
	if (!CHECK_OK(ftruncate(fd, (off_t)len)))
		goto err;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(p != MAP_FAILED, "mmap(memfd): %s", strerror(errno)))
		goto err;
	fill_pattern(p, len, 0, seed);
	munmap(p, len);
	return fd;
err:
	close(fd);
	return -1;
}

/* READ of the whole buffer must equal the pattern of seed. */
static bool buffer_is(int dev, uint32_t id, size_t len, unsigned int seed, const char *when)
{
	char *buf = malloc(len);
	size_t bad;
	int ret;

	if (!CHECK(buf, "malloc(%zu)", len))
		return false;
	memset(buf, 0, len);
	ret = am_read(dev, id, 0, buf, len);
	if (!CHECK(ret == 0, "%s: READ(id %u, %zu): %s", when, id, len, strerror(-ret))) {
		free(buf);
		return false;
	}
	bad = find_pattern_mismatch(buf, len, 0, seed);
	free(buf);
	return CHECK(bad == len, "%s: READ byte %zu is not the pattern of seed %u", when, bad,
		     seed);
}

static bool memory_is(const void *p, size_t len, unsigned int seed, const char *when)
{
	size_t bad = find_pattern_mismatch(p, len, 0, seed);

	return CHECK(bad == len, "%s: byte %zu is not the pattern of seed %u", when, bad, seed);
}

/* WRITE of the whole buffer with the pattern of seed. */
static bool write_buffer(int dev, uint32_t id, size_t len, unsigned int seed, const char *when)
{
	char *buf = malloc(len);
	int ret;

	if (!CHECK(buf, "malloc(%zu)", len))
		return false;
	fill_pattern(buf, len, 0, seed);
	ret = am_write(dev, id, 0, buf, len);
	free(buf);
	return CHECK(ret == 0, "%s: WRITE(id %u, %zu): %s", when, id, len, strerror(-ret));
}

/* ---- what a pin costs: heap bytes, locked memory, pinned pages ---- */

struct cost {
	uint64_t heap_used;	/* QUERY_HEAP(ACCMAP_HEAP_USER).used */
	long long vmlck_kb;	/* VmLck of /proc/self/status */
	long long pins;		/* pages pinned in the kernel, or -1 if unknown */
};

static long long vmlck_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	long long kb = -1;
	char line[128];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * nr_foll_pin_acquired - nr_foll_pin_released, after folding the per-CPU
 * counters into the global ones (stat_refresh, root only); -1 if either
 * is not available.
 */
static long long pins_now(void)
{
	long long acquired = -1, released = -1, v;
	char name[64];
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return -1;
	}
	close(fd);

	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	return acquired < 0 || released < 0 ? -1 : acquired - released;
}

static void cost_now(int dev, struct cost *c)
{
	struct accmap_heap_info info;

	c->heap_used = 0;
	if (CHECK(am_query_heap(dev, ACCMAP_HEAP_USER, &info) == 0, "QUERY_HEAP(user)"))
		c->heap_used = info.used;
	c->vmlck_kb = vmlck_kb();
	CHECK(c->vmlck_kb >= 0, "no VmLck in /proc/self/status");
	c->pins = pins_now();
}

/* The cost now must be base plus bytes pinned by this process. */
static bool cost_is(int dev, const struct cost *base, size_t bytes, const char *when)
{
	struct cost now;
	bool ok = true;

	cost_now(dev, &now);
	ok &= CHECK(now.heap_used == base->heap_used + bytes,
		    "%s: user heap used %llu, expected %llu", when,
		    (unsigned long long)now.heap_used,
		    (unsigned long long)(base->heap_used + bytes));
	ok &= CHECK(now.vmlck_kb == base->vmlck_kb + (long long)(bytes / 1024),
		    "%s: VmLck %lld kB, expected %lld kB", when, now.vmlck_kb,
		    base->vmlck_kb + (long long)(bytes / 1024));
	if (base->pins >= 0 && now.pins >= 0)
		ok &= CHECK(now.pins == base->pins + (long long)(bytes / page_size()),
			    "%s: %lld pages pinned in the kernel, expected %lld", when, now.pins,
			    base->pins + (long long)(bytes / page_size()));
	return ok;
}

/* ==== every kind of memory, both ways ==== */

/*
 * mem: len bytes of this process's memory, readable and writable.  Pins
 * it for writing and moves bytes every way there is between the user
 * address and the buffer; then frees it and checks nothing is left.
 */
static void round_trip(int dev, char *mem, size_t len, const char *kind)
{
	char when[96];
	struct cost base;
	char *map = NULL;
	uint32_t id;
	int fd = -1;

	cost_now(dev, &base);
	fill_pattern(mem, len, 0, 1);
	id = pin(dev, mem, len, W, 77);
	if (!id)
		return;
	snprintf(when, sizeof(when), "%s, pinned", kind);
	cost_is(dev, &base, len, when);
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0, ACCMAP_STATE_ALLOCATED, 77, when);

	snprintf(when, sizeof(when), "%s, bytes there before the pin", kind);
	buffer_is(dev, id, len, 1, when);

	fill_pattern(mem, len, 0, 2);
	snprintf(when, sizeof(when), "%s, user wrote after the pin", kind);
	buffer_is(dev, id, len, 2, when);

	snprintf(when, sizeof(when), "%s, WRITE", kind);
	if (write_buffer(dev, id, len, 3, when))
		memory_is(mem, len, 3, when);

	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "%s: GET_FD O_RDWR: %s", kind, strerror(-fd)))
		goto out;
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 77, kind);
	map = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (!map)
		goto out;
	snprintf(when, sizeof(when), "%s, dma-buf mapping", kind);
	memory_is(map, len, 3, when);
	fill_pattern(map, len, 0, 4);
	snprintf(when, sizeof(when), "%s, written through the dma-buf", kind);
	memory_is(mem, len, 4, when);
	buffer_is(dev, id, len, 4, when);
	fill_pattern(mem, len, 0, 5);
	snprintf(when, sizeof(when), "%s, user wrote, dma-buf reads", kind);
	memory_is(map, len, 5, when);

out:
	if (map)
		munmap(map, len);
	if (fd >= 0)
		close(fd);
	CHECK_OK(am_free(dev, id));
	snprintf(when, sizeof(when), "%s, after FREE", kind);
	cost_is(dev, &base, 0, when);
	/* The memory is the process's own again. */
	fill_pattern(mem, len, 0, 6);
	memory_is(mem, len, 6, when);
}

static void test_anon_private(void)
{
	size_t len = 16 * page_size();
	int dev = am_open();
	char *mem;

	if (dev < 0)
		return;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (mem)
		round_trip(dev, mem, len, "MAP_PRIVATE|MAP_ANONYMOUS");
	close(dev);
}

static void test_anon_shared(void)
{
	size_t len = 16 * page_size();
	int dev = am_open();
	char *mem;

	if (dev < 0)
		return;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_SHARED);
	if (mem)
		round_trip(dev, mem, len, "MAP_SHARED|MAP_ANONYMOUS");
	close(dev);
}

static void test_heap_memory(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();
	void *mem = NULL;

	if (dev < 0)
		return;
	if (CHECK(posix_memalign(&mem, page_size(), len) == 0, "posix_memalign"))
		round_trip(dev, mem, len, "malloc heap");
	free(mem);
	close(dev);
}

static void test_memfd_shared(void)
{
	size_t len = 16 * page_size();
	int dev = am_open();
	int mfd = new_memfd(len, 9);
	char *mem, *other;

	if (dev < 0 || mfd < 0)
		goto out;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (!CHECK(mem != MAP_FAILED, "mmap(memfd): %s", strerror(errno)))
		goto out;
	memory_is(mem, len, 9, "memfd contents");
	round_trip(dev, mem, len, "memfd MAP_SHARED");

	/* A second mapping of the file sees what the buffer wrote. */
	{
		uint32_t id = pin(dev, mem, len, W, 0);

		other = mmap(NULL, len, PROT_READ, MAP_SHARED, mfd, 0);
		if (id && CHECK(other != MAP_FAILED, "second mmap: %s", strerror(errno))) {
			if (write_buffer(dev, id, len, 10, "memfd, WRITE"))
				memory_is(other, len, 10, "memfd, another mapping after WRITE");
			munmap(other, len);
		}
		if (id)
			am_free(dev, id);
	}
	munmap(mem, len);
out:
	if (mfd >= 0)
		close(mfd);
	if (dev >= 0)
		close(dev);
}

static void test_memfd_private(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();
	int mfd = new_memfd(len, 11);
	char *mem, *file;

	if (dev < 0 || mfd < 0)
		goto out;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, mfd, 0);
	if (!CHECK(mem != MAP_FAILED, "mmap(memfd, MAP_PRIVATE): %s", strerror(errno)))
		goto out;
	round_trip(dev, mem, len, "memfd MAP_PRIVATE");
	/* The copy-on-write copies took every write: the file is untouched. */
	file = mmap(NULL, len, PROT_READ, MAP_SHARED, mfd, 0);
	if (CHECK(file != MAP_FAILED, "mmap(memfd): %s", strerror(errno))) {
		memory_is(file, len, 11, "memfd behind a private mapping");
		munmap(file, len);
	}
	munmap(mem, len);
out:
	if (mfd >= 0)
		close(mfd);
	if (dev >= 0)
		close(dev);
}

/*
 * 4 MiB of anonymous memory asked to be backed by huge pages (a test
 * only where the kernel has transparent huge pages: main()).
 */
static void test_anon_thp(void)
{
	size_t huge = 2UL << 20, len = 2 * huge;
	int dev = am_open();
	char *raw, *mem;

	if (dev < 0)
		return;
	raw = map_anon(len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!raw)
		goto out;
	mem = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	CHECK_OK(madvise(mem, len, MADV_HUGEPAGE));
	round_trip(dev, mem, len, "anonymous, MADV_HUGEPAGE");
	munmap(raw, len + huge);
out:
	close(dev);
}

/* More pages than one pinning batch holds, not a multiple of it. */
static void test_many_pages(void)
{
	size_t len = 1300 * page_size();
	int dev = am_open();
	char *mem;

	if (dev < 0)
		return;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (mem)
		round_trip(dev, mem, len, "1300 pages");
	/* As root the kernel's pin count is readable, so it was checked. */
	CHECK(geteuid() != 0 || pins_now() >= 0,
	      "nr_foll_pin_* of /proc/vmstat not readable after stat_refresh");
	close(dev);
}

/* ==== read-only buffers ==== */

static void test_readonly_buffer(void)
{
	size_t len = 8 * page_size();
	int dev = am_open(), dev2 = am_open();
	uint32_t id = 0, id2 = 0;
	char *mem, *map, buf[64];
	int fd = -1, rw, before;
	struct cost base;

	if (dev < 0 || dev2 < 0)
		goto out;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	cost_now(dev, &base);
	fill_pattern(mem, len, 0, 20);
	id = pin(dev, mem, len, 0, 5);
	if (!id)
		goto out;
	cost_is(dev, &base, len, "read-only, pinned");
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_READONLY, 5, "read-only");
	buffer_is(dev, id, len, 20, "read-only, READ");
	/* Memory the process wrote before the pin stays coherent. */
	fill_pattern(mem, len, 0, 21);
	buffer_is(dev, id, len, 21, "read-only, user wrote after the pin");

	memset(buf, 0x5a, sizeof(buf));
	CHECK(am_write(dev, id, 0, buf, sizeof(buf)) == -EACCES,
	      "WRITE to a read-only buffer was not refused with EACCES");
	CHECK(am_write(dev, id, len - 1, buf, 1) == -EACCES, "WRITE of its last byte");
	/* Argument errors come first. */
	CHECK(am_write(dev, id, len, buf, 1) == -ERANGE, "WRITE past its end");
	memory_is(mem, len, 21, "read-only, after refused WRITEs");

	before = next_fd();
	rw = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	CHECK(rw == -EACCES, "GET_FD O_RDWR of a read-only buffer: %d", rw);
	CHECK(next_fd() == before, "refused GET_FD left a descriptor");
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_READONLY, 5,
		   "after refused GET_FD");

	fd = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD O_RDONLY: %s", strerror(-fd)))
		goto out;
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "dma-buf not read-only");
	CHECK(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED &&
	      errno == EACCES, "writable mapping of the read-only dma-buf not refused");
	map = map_shared(fd, len, PROT_READ, 0);
	if (map) {
		struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };

		CHECK_OK(ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
		memory_is(map, len, 21, "read-only dma-buf mapping");
		s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
		CHECK_OK(ioctl(fd, DMA_BUF_IOCTL_SYNC, &s));
		CHECK_ERR(mprotect(map, len, PROT_READ | PROT_WRITE), EACCES);
		fill_pattern(mem, len, 0, 22);
		memory_is(map, len, 22, "read-only dma-buf mapping, user wrote");
		munmap(map, len);
	}

	/* Imported elsewhere, it is just as read-only. */
	if (CHECK(am_from_fd(dev2, fd, &id2) == 0, "FROM_FD of the read-only dma-buf")) {
		check_info(dev2, id2, len, ACCMAP_HEAP_USER, 0,
			   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
			   ACCMAP_STATE_READONLY, 5, "imported");
		CHECK(am_write(dev2, id2, 0, buf, 1) == -EACCES, "WRITE through an imported id");
		rw = am_get_fd(dev2, id2, O_RDWR);
		CHECK(rw == -EACCES, "GET_FD O_RDWR through an imported id: %d", rw);
		buffer_is(dev2, id2, len, 22, "READ through an imported id");
	}

	/* Write-back is allowed; an invalidate could discard what the owner wrote. */
	{
		struct accmap_cache_op op = { .id = id, .length = len };

		op.op = ACCMAP_CACHE_WRITEBACK;
		CHECK_OK(ioctl(dev, ACCMAP_IOC_CACHE, &op));
		op.op = ACCMAP_CACHE_INVALIDATE;
		CHECK_ERR(ioctl(dev, ACCMAP_IOC_CACHE, &op), EACCES);
		op.op = ACCMAP_CACHE_WRITEBACK_INVALIDATE;
		CHECK_ERR(ioctl(dev, ACCMAP_IOC_CACHE, &op), EACCES);
		memory_is(mem, len, 22, "after CACHE on a read-only buffer");
	}
out:
	if (fd >= 0)
		close(fd);
	if (dev2 >= 0)
		close(dev2);
	if (dev >= 0) {
		if (id)
			CHECK_OK(am_free(dev, id));
		cost_is(dev, &base, 0, "read-only, all dropped");
		close(dev);
	}
}

/* A PROT_READ mapping can back a read-only buffer and not a writable one. */
static void test_readonly_mapping(void)
{
	size_t len = 4 * page_size();
	int dev = am_open();
	int mfd = new_memfd(len, 30);
	char *ro, *priv;
	struct cost base;
	uint32_t id;

	if (dev < 0 || mfd < 0)
		goto out;
	cost_now(dev, &base);
	ro = mmap(NULL, len, PROT_READ, MAP_SHARED, mfd, 0);
	if (!CHECK(ro != MAP_FAILED, "mmap(memfd, PROT_READ): %s", strerror(errno)))
		goto out;
	refused(dev, va(ro), len, W, EFAULT, "writable pin of a PROT_READ shared mapping");
	refused(dev, va(ro) + len - page_size(), page_size(), W, EFAULT,
		"writable pin of one PROT_READ page");
	cost_is(dev, &base, 0, "after refused writable pins");
	id = pin(dev, ro, len, 0, 0);
	if (id) {
		buffer_is(dev, id, len, 30, "read-only pin of a PROT_READ mapping");
		CHECK_OK(am_free(dev, id));
	}
	munmap(ro, len);

	/* Private and never written: still no write permission. */
	priv = mmap(NULL, len, PROT_READ, MAP_PRIVATE, mfd, 0);
	if (CHECK(priv != MAP_FAILED, "mmap(memfd, MAP_PRIVATE, PROT_READ)")) {
		refused(dev, va(priv), len, W, EFAULT, "writable pin, PROT_READ private mapping");
		munmap(priv, len);
	}
	priv = map_anon(len, PROT_READ, MAP_PRIVATE);
	if (priv) {
		refused(dev, va(priv), len, W, EFAULT, "writable pin, PROT_READ anonymous");
		munmap(priv, len);
	}
	/* One writable page then one read-only page: nothing stays pinned. */
	priv = map_anon(2 * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (priv) {
		memset(priv, 1, 2 * page_size());
		CHECK_OK(mprotect(priv + page_size(), page_size(), PROT_READ));
		refused(dev, va(priv), 2 * page_size(), W, EFAULT, "writable, 2nd page read-only");
		munmap(priv, 2 * page_size());
	}
	cost_is(dev, &base, 0, "after read-only mappings");
out:
	if (mfd >= 0)
		close(mfd);
	if (dev >= 0)
		close(dev);
}

/* ==== memory that cannot be pinned ==== */

static void test_efault(void)
{
	size_t ps = page_size(), len = 8 * ps;
	int dev = am_open();
	struct cost base;
	char *p, *gap;
	uint32_t id;
	int mfd;

	if (dev < 0)
		return;
	cost_now(dev, &base);

	p = map_anon(len, PROT_NONE, MAP_PRIVATE);
	if (p) {
		refused(dev, va(p), len, 0, EFAULT, "PROT_NONE");
		refused(dev, va(p), len, W, EFAULT, "PROT_NONE, writable");
		munmap(p, len);
	}

	/* A hole: mapped, then unmapped again. */
	gap = map_anon(3 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (gap) {
		memset(gap, 1, 3 * len);
		munmap(gap + len, len);
		refused(dev, va(gap + len), len, 0, EFAULT, "unmapped");
		refused(dev, va(gap + len), len, W, EFAULT, "unmapped, writable");
		refused(dev, va(gap + len) + len - ps, ps, W, EFAULT, "one unmapped page");
		/* Partly mapped, on either side. */
		refused(dev, va(gap), 2 * len, W, EFAULT, "mapped, then a hole");
		refused(dev, va(gap + len - ps), 2 * ps, W, EFAULT, "one mapped page, then a hole");
		refused(dev, va(gap + len), 2 * len, 0, EFAULT, "a hole, then mapped");
		refused(dev, va(gap), 3 * len, W, EFAULT, "a hole in the middle");
		munmap(gap, 3 * len);
	}
	refused(dev, 0, ps, 0, EFAULT, "address 0");

	/* A hole after two full batches and a bit: the pins so far are undone. */
	p = map_anon(1100 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (p) {
		memset(p, 2, 1100 * ps);
		CHECK_OK(mprotect(p + 1099 * ps, ps, PROT_NONE));
		refused(dev, va(p), 1100 * ps, W, EFAULT, "PROT_NONE page 1099 of 1100");
		cost_is(dev, &base, 0, "after a failure in the third batch");
		munmap(p, 1100 * ps);
	}

	/* Beyond the end of a mapped file: no page to pin. */
	mfd = new_memfd(ps, 40);
	if (mfd >= 0) {
		p = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		if (CHECK(p != MAP_FAILED, "mmap of a memfd past its end")) {
			refused(dev, va(p), 4 * ps, 0, EFAULT, "past the end of a file");
			id = pin(dev, p, ps, W, 0);
			if (id)
				CHECK_OK(am_free(dev, id));
			munmap(p, 4 * ps);
		}
		close(mfd);
	}

	cost_is(dev, &base, 0, "after every EFAULT");
	close(dev);
}

/* ==== only anonymous memory and shmem ==== */

/*
 * A directory with a filesystem of type fstype ("ramfs", "tmpfs") mounted
 * on it, mounted once per boot; NULL on failure.  ramfs is a filesystem
 * whose files are page cache and not shmem: the only one every guest
 * kernel has without a block device (the initramfs root may be either).
 */
static const char *fs_dir(const char *fstype, unsigned long magic)
{
	static char dirs[2][64];
	char *dir = dirs[magic == TMPFS_MAGIC];
	struct statfs st;

	snprintf(dir, sizeof(dirs[0]), "/tmp/accmap-fromva-%s", fstype);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		CHECK(false, "mkdir %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (!CHECK_OK(statfs(dir, &st)))
		return NULL;
	if ((unsigned long)st.f_type != magic &&
	    !CHECK(!mount(fstype, dir, fstype, 0, NULL), "mount -t %s %s: %s", fstype, dir,
		   strerror(errno)))
		return NULL;
	if (!CHECK_OK(statfs(dir, &st)) ||
	    !CHECK((unsigned long)st.f_type == magic, "%s is of type %#lx, not %s", dir,
		   (unsigned long)st.f_type, fstype))
		return NULL;
	return dir;
}

/*
 * A file of len bytes, the pattern of seed, on a filesystem of fstype,
 * mapped with prot and flags (at addr if MAP_FIXED); NULL on failure.
 */
static char *map_fs_file(const char *fstype, unsigned long magic, size_t len, unsigned int seed,
			 void *addr, int prot, int flags)
{
	const char *dir = fs_dir(fstype, magic);
	char path[96];
	char *p;
	int fd;

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/f-%d-%u", dir, getpid(), seed);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!CHECK(fd >= 0, "open %s: %s", path, strerror(errno)))
		return NULL;
	unlink(path);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!CHECK(ftruncate(fd, (off_t)len) == 0 && p != MAP_FAILED, "%s file of %zu bytes",
		   fstype, len)) {
		close(fd);
		return NULL;
	}
	fill_pattern(p, len, 0, seed);
	munmap(p, len);
	p = mmap(addr, len, prot, flags, fd, 0);
	close(fd);
	if (!CHECK(p != MAP_FAILED, "mmap of a %s file: %s", fstype, strerror(errno)))
		return NULL;
	return p;
}

static char *map_ramfs(size_t len, unsigned int seed, void *addr, int flags)
{
	return map_fs_file("ramfs", RAMFS_MAGIC, len, seed, addr, PROT_READ | PROT_WRITE, flags);
}

/* A tmpfs file is shmem: it round-trips like a memfd. */
static void test_tmpfs_file(void)
{
	size_t len = 16 * page_size();
	int dev = am_open();
	char *mem;

	if (dev < 0)
		return;
	mem = map_fs_file("tmpfs", TMPFS_MAGIC, len, 110, NULL, PROT_READ | PROT_WRITE,
			  MAP_SHARED);
	if (mem) {
		memory_is(mem, len, 110, "tmpfs file contents");
		round_trip(dev, mem, len, "tmpfs file MAP_SHARED");
		munmap(mem, len);
	}
	mem = map_fs_file("tmpfs", TMPFS_MAGIC, len, 111, NULL, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE);
	if (mem) {
		round_trip(dev, mem, len, "tmpfs file MAP_PRIVATE");
		munmap(mem, len);
	}
	/* Private /dev/zero is anonymous memory, shared /dev/zero is shmem. */
	for (int shared = 0; shared < 2; shared++) {
		int zfd = open("/dev/zero", O_RDWR | O_CLOEXEC);

		if (!CHECK(zfd >= 0, "open /dev/zero: %s", strerror(errno)))
			break;
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE,
			   zfd, 0);
		close(zfd);
		if (CHECK(mem != MAP_FAILED, "mmap /dev/zero: %s", strerror(errno))) {
			round_trip(dev, mem, len, shared ? "/dev/zero MAP_SHARED" :
							   "/dev/zero MAP_PRIVATE");
			munmap(mem, len);
		}
	}
	close(dev);
}

/* Places a ramfs file mapping of n pages at p + at pages (MAP_FIXED). */
static bool ramfs_at(char *p, size_t at, size_t n, unsigned int seed)
{
	size_t ps = page_size();

	return map_ramfs(n * ps, seed, p + at * ps, MAP_SHARED | MAP_FIXED) == p + at * ps;
}

/*
 * Memory other than anonymous memory and shmem is refused with EOPNOTSUPP,
 * whole ranges and any part of one, before anything is pinned or
 * charged, and before EFAULT for what else is wrong in the range.
 */
static void test_eopnotsupp(void)
{
	size_t ps = page_size(), len = 8 * ps;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	int dev = am_open(), fd, mfd;
	struct cost base;
	uint32_t id;
	char *p;

	if (dev < 0)
		return;
	cost_now(dev, &base);

	/* A regular file of a filesystem that is not shmem: ramfs. */
	p = map_ramfs(len, 120, NULL, MAP_SHARED);
	if (p) {
		memory_is(p, len, 120, "ramfs file contents");
		refused(dev, va(p), len, W, EOPNOTSUPP, "ramfs file MAP_SHARED, writable");
		refused(dev, va(p), len, 0, EOPNOTSUPP, "ramfs file MAP_SHARED, read-only");
		refused(dev, va(p) + len - ps, ps, W, EOPNOTSUPP, "its last page");
		memory_is(p, len, 120, "ramfs file after the refusals");
		munmap(p, len);
	}
	p = map_ramfs(len, 121, NULL, MAP_PRIVATE);
	if (p) {
		/* Written: every page is a private copy, still refused. */
		fill_pattern(p, len, 0, 122);
		refused(dev, va(p), len, W, EOPNOTSUPP, "ramfs file MAP_PRIVATE, written");
		refused(dev, va(p), len, 0, EOPNOTSUPP, "ramfs file MAP_PRIVATE, read-only");
		munmap(p, len);
	}
	p = map_fs_file("ramfs", RAMFS_MAGIC, len, 123, NULL, PROT_READ, MAP_SHARED);
	if (p) {
		refused(dev, va(p), len, 0, EOPNOTSUPP, "ramfs file, PROT_READ");
		/* Not EFAULT: the kind of memory is checked first. */
		refused(dev, va(p), len, W, EOPNOTSUPP, "ramfs file, PROT_READ, writable");
		munmap(p, len);
	}

	/* Driver and special mappings: accmap's own dma-buf, the vDSO. */
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd >= 0) {
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (p) {
			memset(p, 3, len);
			refused(dev, va(p), len, W, EOPNOTSUPP, "accmap's own dma-buf mapping");
			refused(dev, va(p), len, 0, EOPNOTSUPP,
				"accmap's own dma-buf mapping, R/O");
			munmap(p, len);
		}
		close(fd);
		am_free(dev, id);
	}
	if (CHECK(vdso, "no AT_SYSINFO_EHDR"))
		refused(dev, vdso, ps, 0, EOPNOTSUPP, "the vDSO");

	/*
	 * Mixed ranges: anonymous memory or a memfd with a ramfs file before,
	 * between or after; the ramfs pages in the third pinning batch too.
	 */
	p = map_anon(1100 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (p) {
		memset(p, 4, 1100 * ps);
		if (ramfs_at(p, 1096, 4, 124)) {
			refused(dev, va(p), 1100 * ps, W, EOPNOTSUPP, "anon, ramfs in batch 3");
			refused(dev, va(p) + 1095 * ps, 2 * ps, 0, EOPNOTSUPP,
				"one anon page, one ramfs page");
			id = pin(dev, p + 1000 * ps, 96 * ps, W, 0);
			if (id)
				CHECK_OK(am_free(dev, id));
		}
		if (ramfs_at(p, 0, 1, 125)) {
			refused(dev, va(p), 4 * ps, W, EOPNOTSUPP, "ramfs page, then anon");
			refused(dev, va(p), 1100 * ps, 0, EOPNOTSUPP, "ramfs at both ends");
		}
		/* Before EFAULT: a hole or PROT_NONE anywhere in the range. */
		CHECK_OK(munmap(p + 10 * ps, ps));
		CHECK_OK(mprotect(p + 20 * ps, ps, PROT_NONE));
		refused(dev, va(p) + ps, 1099 * ps, W, EOPNOTSUPP, "a hole, then ramfs");
		refused(dev, va(p) + 15 * ps, 1085 * ps, W, EOPNOTSUPP,
			"PROT_NONE, then ramfs");
		refused(dev, va(p), 12 * ps, W, EOPNOTSUPP, "ramfs, then a hole");
		refused(dev, va(p) + ps, 12 * ps, W, EFAULT, "anon with a hole: EFAULT");
		munmap(p, 1100 * ps);
	}
	mfd = new_memfd(len, 126);
	if (mfd >= 0) {
		p = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		if (CHECK(p != MAP_FAILED, "mmap(memfd): %s", strerror(errno))) {
			if (ramfs_at(p, 8, 8, 127)) {
				refused(dev, va(p), 2 * len, W, EOPNOTSUPP, "memfd, then ramfs");
				memory_is(p, len, 126, "memfd after the refusal");
				memory_is(p + len, len, 127, "ramfs file after the refusal");
			}
			munmap(p, 2 * len);
		}
		close(mfd);
	}
	cost_is(dev, &base, 0, "after every EOPNOTSUPP");
	close(dev);
}

/* Huge pages of hugetlbfs are refused too (one rule for every file). */
static void test_hugetlb(void)
{
	static const char nr_path[] = "/proc/sys/vm/nr_hugepages";
	size_t huge = 2UL << 20;
	char old[32] = "0\n";
	int dev = am_open(), fd;
	ssize_t n = 0;
	char *p;

	if (dev < 0)
		return;
	fd = open(nr_path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		/*
		 * accmap's debug kernel has no hugetlbfs: then no huge page can
		 * be mapped for FROM_VA to be given, which is what is checked.
		 */
		tap_diag("no %s (%s): kernel without hugetlbfs", nr_path, strerror(errno));
		p = mmap(NULL, huge, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		CHECK(p == MAP_FAILED, "MAP_HUGETLB worked without nr_hugepages");
		if (p != MAP_FAILED)
			munmap(p, huge);
		close(dev);
		return;
	}
	n = read(fd, old, sizeof(old) - 1);
	CHECK(n > 0 && pwrite(fd, "2\n", 2, 0) == 2, "reserving huge pages: %s",
	      strerror(errno));
	p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
		 -1, 0);
	if (CHECK(p != MAP_FAILED, "mmap(MAP_HUGETLB): %s", strerror(errno))) {
		memset(p, 5, huge);
		refused(dev, va(p), huge, W, EOPNOTSUPP, "MAP_HUGETLB anonymous memory");
		refused(dev, va(p), page_size(), 0, EOPNOTSUPP, "a page of a huge page");
		munmap(p, huge);
	}
	if (n > 0)
		CHECK(pwrite(fd, old, (size_t)n, 0) == n, "restoring nr_hugepages");
	close(fd);
	close(dev);
}

struct flipper {
	char *addr;
	size_t len;
	bool stop;		/* __atomic: set by the pinning thread */
	unsigned long flips;
};

/* Swaps the range between anonymous memory and a ramfs file, MAP_FIXED. */
static void *flip(void *arg)
{
	struct flipper *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		void *p = f->flips & 1 ? map_ramfs(f->len, 131, f->addr, MAP_SHARED | MAP_FIXED) :
			  mmap(f->addr, f->len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

		if (!CHECK(p == f->addr, "swap %lu: %p", f->flips, p))
			break;
		f->flips++;
	}
	return NULL;
}

/*
 * munmap() and mmap() of a file in place of the memory being pinned, in
 * a loop on another thread: a pin either fails with EOPNOTSUPP or holds
 * anonymous pages only (zeros: never a page of the file's pattern).  The
 * kind is checked under the mmap_lock the pages are pinned under; a
 * check made before pinning without that lock would let file pages
 * through now and then.  Up to KIND_RACE_TRIES pins, fewer once
 * KIND_RACE_NS have passed with both outcomes seen (a debug kernel on a
 * loaded host is many times slower).
 */
#define KIND_RACE_TRIES	4000UL
#define KIND_RACE_NS	(60ULL * 1000000000ULL)

static void test_kind_race(void)
{
	size_t ps = page_size(), n = 16, len = n * ps;
	struct flipper f = { .len = len };
	unsigned long ok = 0, refusals = 0, tries;
	char *buf = malloc(len);
	int dev = am_open();
	struct cost base;
	uint64_t start;
	pthread_t thr;

	if (dev < 0 || !CHECK(buf, "malloc"))
		goto out;
	if (!fs_dir("ramfs", RAMFS_MAGIC))
		goto out;
	cost_now(dev, &base);
	f.addr = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!f.addr || !CHECK_OK(pthread_create(&thr, NULL, flip, &f)))
		goto out;
	start = now_ns();
	for (tries = 0; tries < KIND_RACE_TRIES && !tap_failed(); tries++) {
		uint32_t id = 0;
		int ret;

		/* Enough once both outcomes were seen and the time is up. */
		if (ok && refusals && now_ns() - start > KIND_RACE_NS)
			break;
		ret = from_va(dev, va(f.addr), len, W, 0, &id);

		if (ret == -EOPNOTSUPP) {
			refusals++;
			continue;
		}
		if (!CHECK(ret == 0, "FROM_VA during flips: %s", strerror(-ret)))
			break;
		ok++;
		if (CHECK(am_read(dev, id, 0, buf, len) == 0, "READ")) {
			for (size_t i = 0; i < n; i++)
				CHECK(find_nonzero(buf + i * ps, ps) == ps,
				      "try %lu: pinned page %zu is not fresh anonymous memory",
				      tries, i);
		}
		CHECK_OK(am_free(dev, id));
	}
	__atomic_store_n(&f.stop, true, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	tap_diag("%lu tries: %lu pinned, %lu refused, %lu flips", tries, ok, refusals, f.flips);
	CHECK(ok && refusals, "the race was not exercised (%lu pinned, %lu refused)", ok,
	      refusals);
	cost_is(dev, &base, 0, "after the race");
	munmap(f.addr, len);
out:
	free(buf);
	if (dev >= 0)
		close(dev);
}

/* ==== argument checks ==== */

static bool has_ipc_lock(void);

/*
 * Whether the page at @addr lies inside the user address space: a fixed
 * mapping there works on a free page, fails with EEXIST on one in use,
 * and with ENOMEM beyond the end (TASK_SIZE, which FROM_VA checks).
 */
static bool user_page(uint64_t addr, size_t ps)
{
	void *want = (void *)(uintptr_t)addr;
	void *p = mmap(want, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		return errno == EEXIST;
	munmap(p, ps);
	/* A kernel that ignored the flag took @addr as a hint only. */
	return p == want;
}

/*
 * The end of the user address space, found by bisection between a page in
 * use (the stack) and 2^63: it depends on the kernel's configuration and
 * the CPU (2^47 - 4 KiB on x86-64 with 4-level paging; on arm64 2^39 to
 * 2^52, by page size, VA_BITS and whether the CPU has 52-bit VAs).
 * Returns 0 if the probe makes no sense.
 */
static uint64_t user_top(void)
{
	size_t ps = page_size();
	uint64_t lo = (uint64_t)(uintptr_t)&ps & ~(uint64_t)(ps - 1);
	uint64_t hi = 1ULL << 63;

	if (!user_page(lo, ps) || user_page(hi, ps))
		return 0;
	while (hi - lo > ps) {
		uint64_t mid = lo + ((hi - lo) / 2 & ~(uint64_t)(ps - 1));

		if (user_page(mid, ps))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static void test_einval(void)
{
	size_t ps = page_size();
	uint64_t ram = total_ram_bytes();
	uint64_t top = user_top();
	int dev = am_open();
	struct accmap_from_va a;
	struct cost base;
	uint32_t id;
	char *mem;
	int ret;

	if (dev < 0)
		return;
	cost_now(dev, &base);
	mem = map_anon(4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	memset(mem, 1, 4 * ps);

	/* Valid memory, bad arguments. */
	for (uint32_t bit = 1; bit < 32; bit++)
		refused(dev, va(mem), ps, 1U << bit, EINVAL, "unknown flag");
	refused(dev, va(mem), ps, W | 1U << 31, EINVAL, "write and bit 31");
	a = (struct accmap_from_va){ .addr = va(mem), .size = ps, .pad = 1, .id = GARBAGE_U32 };
	from_va_refused(dev, &a, EINVAL, "pad 1");
	a.pad = 0x8000;
	from_va_refused(dev, &a, EINVAL, "pad 0x8000");
	a.pad = 0;
	a.pad2 = 1;
	from_va_refused(dev, &a, EINVAL, "pad2 1");
	a.pad2 = 0x80000000;
	from_va_refused(dev, &a, EINVAL, "pad2 bit 31");

	refused(dev, va(mem), 0, 0, EINVAL, "size 0");
	refused(dev, va(mem), 1, 0, EINVAL, "size 1");
	refused(dev, va(mem), ps - 1, 0, EINVAL, "size page - 1");
	refused(dev, va(mem), ps + 1, W, EINVAL, "size page + 1");
	refused(dev, va(mem), ps / 2, W, EINVAL, "size half a page");
	refused(dev, va(mem) + 1, ps, 0, EINVAL, "address + 1");
	refused(dev, va(mem) + ps / 2, ps, W, EINVAL, "address + half a page");
	refused(dev, va(mem) + ps - 1, ps, W, EINVAL, "address + page - 1");

	/* Sizes beyond RAM, however the rest looks. */
	if (CHECK(ram > 0, "total RAM unknown")) {
		uint64_t above = (ram + ps) & ~(uint64_t)(ps - 1);

		refused(dev, va(mem), above, 0, EINVAL, "size above total RAM");
		refused(dev, 1ULL << 32, above, 0, EINVAL, "size above total RAM, unmapped");
		/*
		 * Exactly RAM is not an argument error: without CAP_IPC_LOCK it
		 * is over RLIMIT_MEMLOCK, with it the range is found unmapped.
		 */
		ret = from_va(dev, 1ULL << 32, ram & ~(uint64_t)(ps - 1), 0, 0, NULL);
		CHECK(ret == (has_ipc_lock() ? -EFAULT : -ENOMEM),
		      "FROM_VA of total RAM, unmapped: %s", strerror(-ret));
	}
	refused(dev, va(mem), 1ULL << 62, 0, EINVAL, "size 2^62");
	refused(dev, va(mem), UINT64_MAX & ~(uint64_t)(ps - 1), 0, EINVAL, "size ~0 in pages");

	/* Ranges that wrap or leave the user address space. */
	refused(dev, UINT64_MAX & ~(uint64_t)(ps - 1), ps, 0, EINVAL, "last page of 2^64");
	refused(dev, UINT64_MAX & ~(uint64_t)(ps - 1), 2 * ps, 0, EINVAL, "wraps past 0");
	refused(dev, 0xffffffff80000000ULL, ps, 0, EINVAL, "kernel address");
	refused(dev, 0xffff800000000000ULL, 16 * ps, W, EINVAL, "kernel half");
	CHECK(top, "could not find the end of the user address space");
	if (top) {
		tap_diag("user address space ends at %#llx", (unsigned long long)top);
		refused(dev, top, ps, 0, EINVAL, "first page above user space");
		refused(dev, top - ps, 2 * ps, 0, EINVAL, "straddles the top of user space");
		refused(dev, top - 16 * ps, 32 * ps, W, EINVAL, "ends above user space");
		/* The last user page is a valid address, if likely not mapped. */
		ret = from_va(dev, top - ps, ps, 0, 0, &id);
		CHECK(ret == -EFAULT || ret == 0, "FROM_VA of the last user page: %s",
		      strerror(-ret));
		if (!ret)
			am_free(dev, id);
	}
	cost_is(dev, &base, 0, "after every EINVAL");
	munmap(mem, 4 * ps);
out:
	close(dev);
}

/* The extensible-ABI rules for FROM_VA's argument. */
static void test_abi_sizes(void)
{
	size_t ps = page_size();
	size_t size0 = sizeof(struct accmap_from_va);
	int dev = am_open();
	char buf[128], copy[128];
	struct accmap_from_va a;
	struct cost base;
	char *mem;

	if (dev < 0)
		return;
	cost_now(dev, &base);
	CHECK(size0 == 32 && _IOC_SIZE(ACCMAP_IOC_FROM_VA) == 32, "accmap_from_va is %zu bytes",
	      size0);
	mem = map_anon(ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	memset(mem, 1, ps);
	a = (struct accmap_from_va){ .addr = va(mem), .size = ps, .flags = W, .id = GARBAGE_U32 };

	/* Shorter than the first version: refused. */
	for (size_t size = 8; size < size0; size += 8) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &a, size0);
		if (!CHECK_ERR(ioctl(dev, am_resize_cmd(ACCMAP_IOC_FROM_VA, size), buf), EINVAL))
			tap_diag("FROM_VA with size %zu", size);
	}
	/* Longer with a zero tail: works, the tail is left alone. */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &a, size0);
	if (CHECK_OK(ioctl(dev, am_resize_cmd(ACCMAP_IOC_FROM_VA, sizeof(buf)), buf))) {
		struct accmap_from_va out;

		memcpy(&out, buf, size0);
		CHECK(out.id != 0 && out.id != GARBAGE_U32, "id %#x", out.id);
		CHECK(find_nonzero(buf + size0, sizeof(buf) - size0) == sizeof(buf) - size0,
		      "FROM_VA wrote past its structure");
		CHECK_OK(am_free(dev, out.id));
	}
	/* Longer with a byte set in the tail: E2BIG, nothing pinned. */
	for (size_t bad = size0; bad < sizeof(buf); bad += 13) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &a, size0);
		buf[bad] = 1;
		memcpy(copy, buf, sizeof(buf));
		if (!CHECK_ERR(ioctl(dev, am_resize_cmd(ACCMAP_IOC_FROM_VA, sizeof(buf)), buf),
			       E2BIG))
			tap_diag("byte %zu of the tail set", bad);
		CHECK(!memcmp(copy, buf, sizeof(buf)), "refused FROM_VA wrote its argument");
	}
	cost_is(dev, &base, 0, "after the size checks");
	munmap(mem, ps);
out:
	close(dev);
}

/* A tagged pointer names the same memory on arm64 (top-byte ignore). */
static void test_tagged_address(void)
{
	size_t len = 2 * page_size();
	int dev = am_open();
	uint64_t tagged;
	char *mem;

	if (dev < 0)
		return;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	fill_pattern(mem, len, 0, 50);
	tagged = va(mem) | 0x2aULL << 56;
#if defined(__aarch64__)
	{
		uint32_t id = 0;
		int ret = from_va(dev, tagged, len, W, 0, &id);

		if (CHECK(ret == 0, "FROM_VA of a tagged pointer: %s", strerror(-ret))) {
			buffer_is(dev, id, len, 50, "tagged pointer");
			CHECK_OK(am_free(dev, id));
		}
	}
#else
	/* No tags here: the address lies outside user space. */
	refused(dev, tagged, len, W, EINVAL, "tagged pointer");
#endif
	munmap(mem, len);
out:
	close(dev);
}

/* ==== what a pinned buffer survives ==== */

static void test_munmap_keeps_pages(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();
	struct cost base;
	char *mem, *map = NULL, *again;
	uint32_t id = 0;
	int fd = -1;

	if (dev < 0)
		return;
	cost_now(dev, &base);
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	fill_pattern(mem, len, 0, 60);
	id = pin(dev, mem, len, W, 0);
	if (!id)
		goto out;
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
		goto out;
	map = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (!map)
		goto out;
	/* Touch half of it now, leave half to fault in after the munmap. */
	memory_is(map, len / 2, 60, "dma-buf mapping before munmap");

	CHECK_OK(munmap(mem, len));
	buffer_is(dev, id, len, 60, "READ after munmap of the range");
	memory_is(map, len, 60, "dma-buf mapping after munmap of the range");

	/* New memory at the same address is not the buffer. */
	again = mmap(mem, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
	if (CHECK(again == mem, "mmap at the old address: %s", strerror(errno))) {
		fill_pattern(again, len, 0, 61);
		buffer_is(dev, id, len, 60, "READ after new memory took the address");
		munmap(again, len);
	}
	fill_pattern(map, len, 0, 62);
	buffer_is(dev, id, len, 62, "READ after a write through the dma-buf");
	cost_is(dev, &base, len, "unmapped but pinned");
out:
	if (map)
		munmap(map, len);
	if (fd >= 0)
		close(fd);
	if (id)
		CHECK_OK(am_free(dev, id));
	cost_is(dev, &base, 0, "after FREE");
	close(dev);
}

/*
 * fork() after the pin: the parent keeps the pinned pages (its writes
 * reach the buffer), the child of private memory gets copies (its writes
 * do not), and the child of shared memory shares them (its writes do).
 */
static void fork_case(int dev, bool shared)
{
	const char *kind = shared ? "MAP_SHARED" : "MAP_PRIVATE";
	size_t len = 4 * page_size();
	char when[80];
	uint32_t id;
	char *mem;
	pid_t pid;
	int status;

	mem = map_anon(len, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE);
	if (!mem)
		return;
	fill_pattern(mem, len, 0, 70);
	id = pin(dev, mem, len, W, 0);
	if (!id)
		goto out;

	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out_free;
	if (pid == 0) {
		memory_is(mem, len, 70, "child, inherited memory");
		fill_pattern(mem, len, 0, 71);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status),
	      "%s child failed", kind);

	snprintf(when, sizeof(when), "%s, after the child wrote", kind);
	buffer_is(dev, id, len, shared ? 71 : 70, when);
	memory_is(mem, len, shared ? 71 : 70, when);

	fill_pattern(mem, len, 0, 72);
	snprintf(when, sizeof(when), "%s, parent wrote after fork", kind);
	buffer_is(dev, id, len, 72, when);
	if (write_buffer(dev, id, len, 73, kind)) {
		snprintf(when, sizeof(when), "%s, WRITE after fork", kind);
		memory_is(mem, len, 73, when);
	}
out_free:
	CHECK_OK(am_free(dev, id));
out:
	munmap(mem, len);
}

static void test_fork(void)
{
	int dev = am_open();
	struct cost base;

	if (dev < 0)
		return;
	cost_now(dev, &base);
	fork_case(dev, false);
	fork_case(dev, true);
	cost_is(dev, &base, 0, "after the fork cases");
	close(dev);
}

/* Two buffers over one range share its pages; each holds them. */
static void test_same_range_twice(void)
{
	size_t len = 4 * page_size();
	int dev = am_open();
	uint32_t a, b;
	struct cost base;
	char *mem;

	if (dev < 0)
		return;
	cost_now(dev, &base);
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	fill_pattern(mem, len, 0, 80);
	a = pin(dev, mem, len, W, 0);
	b = pin(dev, mem, len, 0, 0);
	if (a && b) {
		cost_is(dev, &base, 2 * len, "one range pinned twice");
		write_buffer(dev, a, len, 81, "WRITE through the first");
		buffer_is(dev, b, len, 81, "READ through the second");
		CHECK_OK(am_free(dev, a));
		a = 0;
		munmap(mem, len);
		mem = NULL;
		buffer_is(dev, b, len, 81, "the second, after the first and the range went");
		cost_is(dev, &base, len, "one of two freed");
	}
	if (a)
		am_free(dev, a);
	if (b)
		CHECK_OK(am_free(dev, b));
	if (mem)
		munmap(mem, len);
	cost_is(dev, &base, 0, "both freed");
out:
	close(dev);
}

/* ==== accounting ==== */

/* Clears CAP_IPC_LOCK from every capability set of this process. */
static bool drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	unsigned int word = CAP_IPC_LOCK / 32, bit = 1U << (CAP_IPC_LOCK % 32);

	if (!CHECK_OK(syscall(SYS_capget, &hdr, data)))
		return false;
	data[word].effective &= ~bit;
	data[word].permitted &= ~bit;
	data[word].inheritable &= ~bit;
	return CHECK_OK(syscall(SYS_capset, &hdr, data));
}

static bool has_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32));
}

static bool set_memlock_pages(size_t pages)
{
	struct rlimit rl = { .rlim_cur = pages * page_size(), .rlim_max = pages * page_size() };

	return CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
}

#define LIMIT_PAGES	16

/*
 * Without CAP_IPC_LOCK (this test runs in a child process of its own),
 * pins are limited by RLIMIT_MEMLOCK, and every way a buffer goes gives
 * its pages back to the limit.
 */
static void test_memlock_limit(void)
{
	size_t ps = page_size(), n = LIMIT_PAGES;
	int dev = -1, fd;
	uint32_t id, id2;
	struct cost base;
	char *mem;

	if (!drop_ipc_lock() || !CHECK(!has_ipc_lock(), "CAP_IPC_LOCK still effective"))
		return;
	if (!set_memlock_pages(n))
		return;
	dev = am_open();
	if (dev < 0)
		return;
	mem = map_anon(2 * n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	memset(mem, 1, 2 * n * ps);
	cost_now(dev, &base);
	CHECK(base.vmlck_kb == 0, "VmLck %lld kB before any pin", base.vmlck_kb);

	refused(dev, va(mem), (n + 1) * ps, W, ENOMEM, "limit + 1 pages at once");
	cost_is(dev, &base, 0, "after a pin over the limit");

	/* Up to the limit, one pin at a time; one more page is too many. */
	for (size_t i = 0; i < n; i++)
		if (!pin(dev, mem + i * ps, ps, i & 1 ? W : 0, 0))
			goto out;
	cost_is(dev, &base, n * ps, "limit reached");
	refused(dev, va(mem + n * ps), ps, 0, ENOMEM, "one page over the limit");
	refused(dev, va(mem + n * ps), ps, W, ENOMEM, "one writable page over the limit");

	/* Closing the client gives all of it back. */
	close(dev);
	dev = am_open();
	if (dev < 0)
		goto out;
	cost_is(dev, &base, 0, "after closing the client");

	/* The whole limit in one pin; FREE gives it back. */
	id = pin(dev, mem, n * ps, W, 0);
	if (!id)
		goto out;
	refused(dev, va(mem + n * ps), ps, W, ENOMEM, "one page over, after one big pin");
	CHECK_OK(am_free(dev, id));
	cost_is(dev, &base, 0, "after FREE");
	id = pin(dev, mem + n * ps, n * ps, W, 0);
	if (!id)
		goto out;

	/* An export keeps the charge until its last descriptor goes. */
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (CHECK(fd >= 0, "GET_FD: %s", strerror(-fd))) {
		CHECK_OK(am_free(dev, id));
		cost_is(dev, &base, n * ps, "freed, dma-buf open");
		refused(dev, va(mem), ps, W, ENOMEM, "over the limit while a dma-buf holds it");
		close(fd);
		cost_is(dev, &base, 0, "dma-buf closed");
	} else {
		am_free(dev, id);
	}
	id2 = pin(dev, mem, n * ps, 0, 0);
	if (id2)
		CHECK_OK(am_free(dev, id2));
	cost_is(dev, &base, 0, "at the end");
out:
	if (dev >= 0)
		close(dev);
}

/* With CAP_IPC_LOCK, the limit does not apply; the pages still count. */
static void test_memlock_capable(void)
{
	size_t ps = page_size(), n = LIMIT_PAGES + 8;
	struct cost base;
	uint32_t id;
	char *mem;
	int dev;

	if (!has_ipc_lock()) {
		tap_diag("no CAP_IPC_LOCK: nothing to test (run as root)");
		return;
	}
	if (!set_memlock_pages(LIMIT_PAGES))
		return;
	dev = am_open();
	if (dev < 0)
		return;
	mem = map_anon(n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (mem) {
		memset(mem, 1, n * ps);
		cost_now(dev, &base);
		id = pin(dev, mem, n * ps, W, 0);
		if (id) {
			cost_is(dev, &base, n * ps, "over RLIMIT_MEMLOCK with CAP_IPC_LOCK");
			CHECK_OK(am_free(dev, id));
		}
		cost_is(dev, &base, 0, "after FREE");
		munmap(mem, n * ps);
	}
	close(dev);
}

/*
 * The charge belongs to the pinning process, wherever the buffer ends:
 * a child holding the last dma-buf descriptor gives it back when it
 * closes it, to the parent, which is still under its limit after.
 */
static void test_refund_from_other_process(void)
{
	size_t ps = page_size(), n = LIMIT_PAGES;
	int dev, fd, to_child[2] = { -1, -1 }, status;
	struct cost base;
	uint32_t id;
	char *mem, c;
	pid_t pid;

	if (!drop_ipc_lock() || !set_memlock_pages(n))
		return;
	dev = am_open();
	if (dev < 0)
		return;
	mem = map_anon(n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	fill_pattern(mem, n * ps, 0, 90);
	cost_now(dev, &base);
	id = pin(dev, mem, n * ps, W, 0);
	if (!id)
		goto out;
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)) || !CHECK_OK(pipe(to_child)))
		goto out;

	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		goto out;
	if (pid == 0) {
		char *map;

		close(to_child[1]);
		close(dev);
		/* Wait until the parent has let go of everything but this. */
		if (read(to_child[0], &c, 1) != 1)
			_exit(1);
		map = map_shared(fd, n * ps, PROT_READ, 0);
		if (map) {
			memory_is(map, n * ps, 90, "child's mapping of the buffer");
			munmap(map, n * ps);
		}
		close(fd);
		_exit(tap_failed() ? 1 : 0);
	}
	close(to_child[0]);
	close(fd);
	CHECK_OK(am_free(dev, id));
	munmap(mem, n * ps);
	mem = NULL;
	cost_is(dev, &base, n * ps, "the child holds the only descriptor");
	CHECK(write(to_child[1], "x", 1) == 1, "pipe");
	close(to_child[1]);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status),
	      "child failed");
	cost_is(dev, &base, 0, "after the child closed the last descriptor");
	mem = map_anon(n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (mem) {
		memset(mem, 1, n * ps);
		id = pin(dev, mem, n * ps, W, 0);
		if (id)
			CHECK_OK(am_free(dev, id));
	}
out:
	close(dev);
}

/* ==== how the buffer presents itself ==== */

static void test_info_and_heap(void)
{
	size_t len = 32 * page_size();
	struct accmap_heap_info info;
	struct accmap_alloc alloc;
	int dev = am_open();
	uint64_t used0;
	uint32_t id, empty;
	struct dbg_table t;
	char *mem;
	long r;

	if (dev < 0)
		return;
	if (!CHECK(am_query_heap(dev, ACCMAP_HEAP_USER, &info) == 0, "QUERY_HEAP(user)"))
		goto out;
	CHECK(!memcmp(info.name, "user\0\0\0\0\0\0\0\0\0\0\0\0", ACCMAP_HEAP_NAME_LEN),
	      "user heap named '%.16s' (or bytes after the NUL not zero)", info.name);
	CHECK(info.heap == ACCMAP_HEAP_USER && info.pad == 0, "heap %u pad %u", info.heap,
	      info.pad);
	CHECK(info.total == 0 && info.free == 0 && info.largest_free == 0,
	      "user heap total %llu free %llu largest_free %llu, expected 0 0 0",
	      (unsigned long long)info.total, (unsigned long long)info.free,
	      (unsigned long long)info.largest_free);
	used0 = info.used;

	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	memset(mem, 1, len);
	id = pin(dev, mem, len, W, 0xbeef);
	if (!id)
		goto out;
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0, ACCMAP_STATE_ALLOCATED, 0xbeef, "FROM_VA");
	check_counts(dev, id, 1, 0, 0, 0, "FROM_VA");
	if (CHECK(am_query_heap(dev, ACCMAP_HEAP_USER, &info) == 0, "QUERY_HEAP(user)"))
		CHECK(info.used == used0 + len && info.total == 0 && info.free == 0,
		      "user heap used %llu total %llu free %llu after pinning %zu bytes",
		      (unsigned long long)info.used, (unsigned long long)info.total,
		      (unsigned long long)info.free, len);
	if (dbg_read("heaps", &t)) {
		r = dbg_find(&t, "id", "31", NULL, NULL);
		if (CHECK(r >= 0, "debugfs heaps: no row for heap 31")) {
			size_t row = (size_t)r;

			CHECK(!strcmp(dbg_cell(&t, row, "name"), "user"), "heap 31 named '%s'",
			      dbg_cell(&t, row, "name"));
			CHECK(dbg_num(&t, row, "used") == used0 + len &&
			      dbg_num(&t, row, "total") == 0 && dbg_num(&t, row, "free") == 0 &&
			      dbg_num(&t, row, "largest_free") == 0,
			      "debugfs user heap: used %llu total %llu free %llu largest %llu",
			      dbg_num(&t, row, "used"), dbg_num(&t, row, "total"),
			      dbg_num(&t, row, "free"), dbg_num(&t, row, "largest_free"));
		}
		dbg_free(&t);
	}

	/* It has its memory already; ALLOC cannot give it more. */
	alloc = (struct accmap_alloc){ .id = id, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
				       .heap = GARBAGE_U32 };
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_ALLOC, &alloc), EEXIST);
	check_info(dev, id, len, ACCMAP_HEAP_USER, 0, ACCMAP_STATE_ALLOCATED, 0xbeef,
		   "after a refused ALLOC");
	/* ALLOC never takes memory from the user heap. */
	if (CHECK(am_create(dev, page_size(), &empty) == 0, "CREATE")) {
		alloc = (struct accmap_alloc){ .id = empty, .heap_mask = 1U << ACCMAP_HEAP_USER,
					       .heap = GARBAGE_U32 };
		CHECK_ERR(ioctl(dev, ACCMAP_IOC_ALLOC, &alloc), ENODEV);
		alloc.heap_mask = ~0U;
		if (CHECK_OK(ioctl(dev, ACCMAP_IOC_ALLOC, &alloc)))
			CHECK(alloc.heap != ACCMAP_HEAP_USER, "ALLOC with every heap gave heap %u",
			      alloc.heap);
		am_free(dev, empty);
	}

	CHECK_OK(am_free(dev, id));
	if (CHECK(am_query_heap(dev, ACCMAP_HEAP_USER, &info) == 0, "QUERY_HEAP(user)"))
		CHECK(info.used == used0, "user heap used %llu after FREE, expected %llu",
		      (unsigned long long)info.used, (unsigned long long)used0);
	if (dbg_read("heaps", &t)) {
		r = dbg_find(&t, "id", "31", NULL, NULL);
		CHECK(r >= 0 && dbg_num(&t, (size_t)r, "used") == used0,
		      "debugfs user heap used %llu after FREE, expected %llu",
		      r >= 0 ? dbg_num(&t, (size_t)r, "used") : 0, (unsigned long long)used0);
		dbg_free(&t);
	}
	munmap(mem, len);
out:
	close(dev);
}

/* ==== a real importer ==== */

static void test_vgem_import(void)
{
	size_t len = 8 * page_size();
	int dev = am_open(), vgem = vgem_open();
	uint32_t id = 0, ro = 0, handle = 0;
	int fd = -1, rofd = -1, ret, maps;
	char *mem;

	if (!CHECK(vgem >= 0, "no vgem DRM device: %s", strerror(errno)) || dev < 0)
		goto out;
	mem = map_anon(len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (!mem)
		goto out;
	fill_pattern(mem, len, 0, 100);

	/* Writable: vgem attaches and maps it for both directions. */
	id = pin(dev, mem, len, W, 0);
	if (!id)
		goto out;
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
		goto out;
	ret = vgem_import(vgem, fd, &handle);
	if (CHECK(ret == 0, "vgem import of a writable buffer: %s", strerror(-ret))) {
		check_counts(dev, id, 1, 1, 0, 1, "imported by vgem");
		/* vgem hands the same dma-buf back, and it is still this memory. */
		ret = vgem_export(vgem, handle);
		if (CHECK(ret >= 0, "vgem re-export: %s", strerror(-ret))) {
			char *map = map_shared(ret, len, PROT_READ | PROT_WRITE, 0);

			if (map) {
				memory_is(map, len, 100, "vgem's re-export");
				fill_pattern(map, len, 0, 101);
				memory_is(mem, len, 101, "user memory after vgem's export");
				munmap(map, len);
			}
			close(ret);
		}
		vgem_close_handle(vgem, handle);
		check_counts(dev, id, 1, 1, 0, 0, "vgem let go");
	}

	/*
	 * Read-only: where vgem maps each import for both directions as it
	 * imports, refused; where it only attaches, the import stands and
	 * its mappings are refused (accmap_vgem shows that part).
	 */
	ro = pin(dev, mem, len, 0, 0);
	if (!ro)
		goto out;
	rofd = am_get_fd(dev, ro, O_RDONLY | O_CLOEXEC);
	if (!CHECK(rofd >= 0, "GET_FD O_RDONLY: %s", strerror(-rofd)))
		goto out;
	maps = vgem_maps_at_import(vgem);
	if (maps < 0)
		goto out;
	ret = vgem_import(vgem, rofd, &handle);
	if (maps)
		CHECK(ret == -EACCES, "vgem import (DMA_BIDIRECTIONAL) of a read-only buffer: %s",
		      ret ? strerror(-ret) : "succeeded");
	else
		CHECK(ret == 0, "vgem import (attach only) of a read-only buffer: %s",
		      strerror(-ret));
	if (!ret)
		vgem_close_handle(vgem, handle);
	check_counts(dev, ro, 1, 1, 0, 0, "after the read-only import");
	memory_is(mem, len, 101, "user memory after the read-only import");
out:
	if (rofd >= 0)
		close(rofd);
	if (fd >= 0)
		close(fd);
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "fromva_anon_private", test_anon_private },
	{ "fromva_anon_shared", test_anon_shared },
	{ "fromva_heap_memory", test_heap_memory },
	{ "fromva_memfd_shared", test_memfd_shared },
	{ "fromva_memfd_private", test_memfd_private },
	{ "fromva_anon_thp", test_anon_thp },
	{ "fromva_many_pages", test_many_pages },
	{ "fromva_readonly_buffer", test_readonly_buffer },
	{ "fromva_readonly_mapping", test_readonly_mapping },
	{ "fromva_tmpfs_file", test_tmpfs_file },
	{ "fromva_eopnotsupp", test_eopnotsupp },
	{ "fromva_hugetlb", test_hugetlb },
	{ "fromva_kind_race", test_kind_race },
	{ "fromva_efault", test_efault },
	{ "fromva_einval", test_einval },
	{ "fromva_abi_sizes", test_abi_sizes },
	{ "fromva_tagged_address", test_tagged_address },
	{ "fromva_munmap_keeps_pages", test_munmap_keeps_pages },
	{ "fromva_fork", test_fork },
	{ "fromva_same_range_twice", test_same_range_twice },
	{ "fromva_memlock_limit", test_memlock_limit },
	{ "fromva_memlock_capable", test_memlock_capable },
	{ "fromva_refund_from_other_process", test_refund_from_other_process },
	{ "fromva_info_and_heap", test_info_and_heap },
	{ "fromva_vgem_import", test_vgem_import },
};

int main(void)
{
	static const char *const thp_tests[] = { "fromva_anon_thp", NULL };

	return tap_run_except(tests, TAP_ARRAY_SIZE(tests), thp_tests, am_lacks_thp());
}

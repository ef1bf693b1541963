// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap against the real driver: every function of
 * tools/lib/accmap/accmap.h, its return value (0 or the exact negative
 * errno), its outputs, and that it writes no output on failure.
 *
 * The library's own argument checks (NULL outputs, a label too long) must
 * not reach the kernel: they run under a seccomp filter that makes every
 * ioctl and openat of the test fail with EHWPOISON, so an answer other than
 * the library's own shows that a system call was made.
 *
 * Restarting on EINTR (and, for DMA_BUF_IOCTL_SYNC, on EAGAIN) cannot be
 * provoked through the driver, whose ioctls do not sleep interruptibly;
 * a seccomp user-notification supervisor thread answers chosen calls with
 * EINTR, EAGAIN or EIO before letting the real call through, and counts
 * how often the library asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "tap.h"
#include "vgem_util.h"

#if defined(__x86_64__)
#define LIB_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define LIB_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#else
#error "accmap_lib: no seccomp architecture for this target"
#endif

#define NOBODY		65534

#define TAG_A		0x4c31
#define TAG_B		0x4c32

/* An errno value no path of the library or the driver returns. */
#define FILTER_ERRNO	EHWPOISON

static bool lib_is(int ret, int want, const char *what, const char *file, int line)
{
	return tap_check(ret == want, file, line, "%s returned %d (%s), expected %d (%s)", what,
			 ret, err_name(ret), want, err_name(want));
}

/* A libaccmap call that must return exactly @want (0 or -Exxx). */
#define LIB_IS(call, want)	lib_is((call), (want), #call, __FILE__, __LINE__)

static size_t pages(size_t n)
{
	return n * page_size();
}

/* A 0x1 (system) heap allocation of @size through the library; 0 on failure. */
static uint32_t new_buffer(int dev, uint64_t size, uint32_t flags, uint16_t tag)
{
	uint32_t id = GARBAGE_U32;

	if (!LIB_IS(accmap_alloc_buffer(dev, size, ACCMAP_HEAP_MASK_SYSTEM, flags, tag, &id), 0))
		return 0;
	CHECK(id != 0 && id != GARBAGE_U32, "accmap_alloc_buffer gave id %#x", id);
	return id;
}

/* The first heap id above the system heap that has no heap, or 0. */
static uint32_t missing_heap(int dev)
{
	struct accmap_heap_info hi;

	for (uint32_t heap = ACCMAP_HEAP_CARVEOUT_FIRST; heap < ACCMAP_HEAP_USER; heap++)
		if (accmap_query_heap(dev, heap, &hi) == -ENODEV)
			return heap;
	CHECK(false, "every heap id 1..30 has a heap");
	return 0;
}

/* Handles debugfs "clients" counts for this process's only client. */
static unsigned long long client_handles(void)
{
	unsigned long long n = ~0ULL;
	struct dbg_table t;
	char pid[16];
	long row;

	if (!dbg_read("clients", &t))
		return n;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	row = dbg_find(&t, "pid", pid, NULL, NULL);
	if (CHECK(row >= 0, "no debugfs clients row for pid %s", pid))
		n = dbg_num(&t, (size_t)row, "handles");
	CHECK(dbg_count(&t, "pid", pid, NULL, NULL) == 1, "pid %s has several clients", pid);
	dbg_free(&t);
	return n;
}

/* The label debugfs "tags" shows for @tag: "-" for none, "" if no row. */
static void tag_label(uint16_t tag, char *buf, size_t len)
{
	struct dbg_table t;
	char num[8];
	long row;

	buf[0] = '\0';
	if (!dbg_read("tags", &t))
		return;
	snprintf(num, sizeof(num), "%u", tag);
	row = dbg_find(&t, "tag", num, NULL, NULL);
	if (row >= 0)
		snprintf(buf, len, "%s", dbg_cell(&t, (size_t)row, "label"));
	dbg_free(&t);
}

/* ==== the device ==== */

static void test_open_close(void)
{
	int fd = -2, fd2 = -2;

	if (!LIB_IS(accmap_open(&fd), 0))
		return;
	CHECK(fd >= 0, "accmap_open gave fd %d", fd);
	CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0, "accmap_open: no O_CLOEXEC");
	CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR, "accmap_open: not O_RDWR");
	LIB_IS(accmap_open_path(ACCMAP_DEVICE_PATH, &fd2), 0);
	CHECK(fd2 >= 0 && fd2 != fd, "accmap_open_path gave fd %d (first %d)", fd2, fd);
	LIB_IS(accmap_close(fd2), 0);
	LIB_IS(accmap_close(fd), 0);
	/* Closed: both are gone. */
	LIB_IS(accmap_close(fd), -EBADF);
	LIB_IS(accmap_close(-1), -EBADF);

	fd = -2;
	LIB_IS(accmap_open(NULL), -EINVAL);
	LIB_IS(accmap_open_path(NULL, &fd), -EINVAL);
	LIB_IS(accmap_open_path("/dev/accmap-none", &fd), -ENOENT);
	LIB_IS(accmap_open_path("/proc/self/status/x", &fd), -ENOTDIR);
	CHECK(fd == -2, "failed opens wrote fd %d", fd);

	/* Another device opens; its ioctls' errors come back as they are. */
	if (LIB_IS(accmap_open_path("/dev/null", &fd), 0)) {
		uint32_t id = GARBAGE_U32;

		LIB_IS(accmap_create(fd, 4096, &id), -ENOTTY);
		CHECK(id == GARBAGE_U32, "failed accmap_create wrote id %#x", id);
		LIB_IS(accmap_close(fd), 0);
	}
}

/* ==== buffers ==== */

static void test_create_alloc_free(void)
{
	uint32_t id = GARBAGE_U32, id2, heap = GARBAGE_U32;
	struct accmap_info info;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;

	LIB_IS(accmap_create(dev, 0, &id), -EINVAL);
	LIB_IS(accmap_create(dev, UINT64_MAX, &id), -EINVAL);
	CHECK(id == GARBAGE_U32, "failed accmap_create wrote id %#x", id);
	if (!LIB_IS(accmap_create(dev, page_size() + 1, &id), 0))
		goto out;
	CHECK(id != 0 && id != GARBAGE_U32, "accmap_create gave id %#x", id);
	check_info(dev, id, pages(2), ACCMAP_HEAP_NONE, 0, 0, 0, "after accmap_create");

	/* Bad ALLOCs leave the handle without memory and heap untouched. */
	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 1U << 7, 0, 0, &heap), -EINVAL);
	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, ACCMAP_ALLOC_VALID_FLAGS, 0, 0,
			    &heap), -EINVAL);
	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, 3 * 4096, 0, &heap), -EINVAL);
	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, ACCMAP_ALLOC_MAX_ALIGN * 2U, 0,
			    &heap), -EINVAL);
	LIB_IS(accmap_alloc(dev, id, 0, 0, 0, 0, &heap), -EINVAL);
	LIB_IS(accmap_alloc(dev, id, 1U << missing_heap(dev), 0, 0, 0, &heap), -ENODEV);
	LIB_IS(accmap_alloc(dev, id, 1U << ACCMAP_HEAP_USER, 0, 0, 0, &heap), -ENODEV);
	LIB_IS(accmap_alloc(dev, 0, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, &heap), -ENOENT);
	LIB_IS(accmap_alloc(dev, id + 1000, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, &heap), -ENOENT);
	CHECK(heap == GARBAGE_U32, "failed accmap_alloc wrote heap %#x", heap);
	check_info(dev, id, pages(2), ACCMAP_HEAP_NONE, 0, 0, 0, "after refused ALLOCs");

	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, (uint32_t)pages(2), TAG_A,
			    &heap), 0);
	CHECK(heap == ACCMAP_HEAP_SYSTEM, "accmap_alloc: heap %u", heap);
	check_info(dev, id, pages(2), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, TAG_A,
		   "after accmap_alloc");
	heap = GARBAGE_U32;
	LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, &heap), -EEXIST);
	CHECK(heap == GARBAGE_U32, "refused accmap_alloc wrote heap %#x", heap);

	/* heap may be NULL. */
	if (LIB_IS(accmap_create(dev, 1, &id2), 0)) {
		LIB_IS(accmap_alloc(dev, id2, ~0U, ACCMAP_ALLOC_UNCACHED, 0, 0, NULL), 0);
		if (LIB_IS(accmap_info(dev, id2, &info), 0))
			CHECK(info.flags == ACCMAP_ALLOC_UNCACHED && info.size == pages(1),
			      "uncached buffer: flags %#x size %llu", info.flags,
			      (unsigned long long)info.size);
		LIB_IS(accmap_free(dev, id2), 0);
	}

	LIB_IS(accmap_free(dev, id), 0);
	LIB_IS(accmap_free(dev, id), -ENOENT);
	LIB_IS(accmap_free(dev, 0), -ENOENT);
	LIB_IS(accmap_info(dev, id, &info), -ENOENT);
out:
	LIB_IS(accmap_close(dev), 0);
}

static void test_alloc_buffer(void)
{
	static const uint32_t kinds[] = {
		0, ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED,
	};
	uint32_t id;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++) {
		id = new_buffer(dev, pages(3) - 7, kinds[k], TAG_B);
		if (!id)
			continue;
		check_info(dev, id, pages(3), ACCMAP_HEAP_SYSTEM, kinds[k],
			   ACCMAP_STATE_ALLOCATED, TAG_B, "after accmap_alloc_buffer");
		LIB_IS(accmap_free(dev, id), 0);
	}
	CHECK(client_handles() == 0, "ids left after freeing");

	/* A failed allocation frees the handle it made, and says why. */
	id = GARBAGE_U32;
	LIB_IS(accmap_alloc_buffer(dev, pages(1), 0, 0, 0, &id), -EINVAL);
	LIB_IS(accmap_alloc_buffer(dev, pages(1), ACCMAP_HEAP_MASK_SYSTEM,
				   ACCMAP_ALLOC_VALID_FLAGS, 0, &id), -EINVAL);
	LIB_IS(accmap_alloc_buffer(dev, pages(1), 1U << missing_heap(dev), 0, 0, &id), -ENODEV);
	LIB_IS(accmap_alloc_buffer(dev, 0, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, &id), -EINVAL);
	CHECK(id == GARBAGE_U32, "failed accmap_alloc_buffer wrote id %#x", id);
	CHECK(client_handles() == 0, "failed accmap_alloc_buffer left a handle behind");
	LIB_IS(accmap_close(dev), 0);
}

static void test_info(void)
{
	struct accmap_info info;
	uint32_t id;
	int dev = -1, buf = -1;
	void *p;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	id = new_buffer(dev, pages(4), ACCMAP_ALLOC_WRITECOMBINE, TAG_A);
	if (!id)
		goto out;

	/* Stale bytes in the caller's structure cannot reach the kernel. */
	memset(&info, GARBAGE_BYTE, sizeof(info));
	if (LIB_IS(accmap_info(dev, id, &info), 0)) {
		CHECK(info.id == id && info.pad == 0 && info.pad2 == 0,
		      "INFO id %u pad %#x pad2 %#x", info.id, info.pad, info.pad2);
		CHECK(info.size == pages(4) && info.heap == ACCMAP_HEAP_SYSTEM &&
		      info.flags == ACCMAP_ALLOC_WRITECOMBINE &&
		      info.state == ACCMAP_STATE_ALLOCATED && info.tag == TAG_A,
		      "INFO size %llu heap %u flags %#x state %#x tag %#x",
		      (unsigned long long)info.size, info.heap, info.flags, info.state, info.tag);
		CHECK(info.handle_refs == 1 && info.exports == 0 && info.maps == 0 &&
		      info.attachments == 0, "INFO counts %u %u %u %u", info.handle_refs,
		      info.exports, info.maps, info.attachments);
	}
	if (LIB_IS(accmap_get_fd(dev, id, O_RDWR | O_CLOEXEC, &buf), 0) &&
	    LIB_IS(accmap_map(buf, pages(4), PROT_READ, &p), 0)) {
		if (LIB_IS(accmap_info(dev, id, &info), 0))
			CHECK(info.state == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED) &&
			      info.exports == 1 && info.maps == 1,
			      "INFO after export and map: state %#x exports %u maps %u",
			      info.state, info.exports, info.maps);
		LIB_IS(accmap_unmap(p, pages(4)), 0);
	}
	if (buf >= 0)
		close(buf);
	memset(&info, GARBAGE_BYTE, sizeof(info));
	LIB_IS(accmap_info(dev, id + 1000, &info), -ENOENT);
	LIB_IS(accmap_info(dev, 0, &info), -ENOENT);
	LIB_IS(accmap_info(-1, id, &info), -EBADF);
	LIB_IS(accmap_info(dev, id, NULL), -EINVAL);
	LIB_IS(accmap_free(dev, id), 0);
out:
	LIB_IS(accmap_close(dev), 0);
}

/* ==== sharing ==== */

static void test_get_fd_from_fd(void)
{
	uint32_t id, unalloc, imported = GARBAGE_U32, vh = 0;
	int dev = -1, dev2 = -1, rw = -1, ro = -1, fd = -2, vgem, foreign;
	struct accmap_info info;
	char buf[64];

	if (!LIB_IS(accmap_open(&dev), 0) || !LIB_IS(accmap_open(&dev2), 0))
		goto out;
	id = new_buffer(dev, pages(2), 0, TAG_A);
	if (!id || !LIB_IS(accmap_create(dev, pages(1), &unalloc), 0))
		goto out;

	if (LIB_IS(accmap_get_fd(dev, id, O_RDWR | O_CLOEXEC, &rw), 0)) {
		CHECK(rw >= 0, "accmap_get_fd gave fd %d", rw);
		CHECK((fcntl(rw, F_GETFD) & FD_CLOEXEC) &&
		      (fcntl(rw, F_GETFL) & O_ACCMODE) == O_RDWR,
		      "O_RDWR | O_CLOEXEC export: fd flags %#x, file flags %#x",
		      fcntl(rw, F_GETFD), fcntl(rw, F_GETFL));
		CHECK(lseek(rw, 0, SEEK_END) == (off_t)pages(2), "dma-buf size %lld",
		      (long long)lseek(rw, 0, SEEK_END));
	}
	if (LIB_IS(accmap_get_fd(dev, id, O_RDONLY, &ro), 0))
		CHECK(!(fcntl(ro, F_GETFD) & FD_CLOEXEC) &&
		      (fcntl(ro, F_GETFL) & O_ACCMODE) == O_RDONLY, "O_RDONLY export: flags");

	LIB_IS(accmap_get_fd(dev, id, O_WRONLY, &fd), -EINVAL);
	LIB_IS(accmap_get_fd(dev, id, O_RDWR | O_NONBLOCK, &fd), -EINVAL);
	LIB_IS(accmap_get_fd(dev, unalloc, O_RDWR, &fd), -ENODATA);
	LIB_IS(accmap_get_fd(dev, id + 1000, O_RDWR, &fd), -ENOENT);
	LIB_IS(accmap_get_fd(dev, id, O_RDWR, NULL), -EINVAL);
	CHECK(fd == -2, "failed accmap_get_fd wrote fd %d", fd);

	/* Another client imports; the O_RDONLY one is read-only. */
	if (rw >= 0 && LIB_IS(accmap_from_fd(dev2, rw, &imported), 0)) {
		CHECK(imported != 0 && imported != GARBAGE_U32, "accmap_from_fd id %#x", imported);
		if (LIB_IS(accmap_info(dev2, imported, &info), 0))
			CHECK(info.size == pages(2) && info.tag == TAG_A && info.handle_refs == 2,
			      "imported: size %llu tag %#x refs %u", (unsigned long long)info.size,
			      info.tag, info.handle_refs);
		LIB_IS(accmap_write(dev2, imported, 0, "shared", 6), 0);
		if (LIB_IS(accmap_read(dev, id, 0, buf, 6), 0))
			CHECK(!memcmp(buf, "shared", 6), "write through the import not seen");
		LIB_IS(accmap_free(dev2, imported), 0);
	}
	if (ro >= 0 && LIB_IS(accmap_from_fd(dev2, ro, &imported), 0)) {
		if (LIB_IS(accmap_info(dev2, imported, &info), 0))
			CHECK(info.state & ACCMAP_STATE_READONLY, "O_RDONLY import state %#x",
			      info.state);
		LIB_IS(accmap_write(dev2, imported, 0, "x", 1), -EACCES);
		LIB_IS(accmap_get_fd(dev2, imported, O_RDWR, &fd), -EACCES);
		LIB_IS(accmap_free(dev2, imported), 0);
	}

	imported = GARBAGE_U32;
	LIB_IS(accmap_from_fd(dev2, -1, &imported), -EBADF);
	LIB_IS(accmap_from_fd(dev2, dev, &imported), -EINVAL);
	LIB_IS(accmap_from_fd(dev2, rw, NULL), -EINVAL);
	vgem = vgem_open();
	if (CHECK(vgem >= 0, "no vgem: %s", strerror(errno))) {
		foreign = vgem_foreign_dmabuf(vgem, pages(1), &vh);
		if (CHECK(foreign >= 0, "vgem dma-buf: %s", strerror(-foreign))) {
			LIB_IS(accmap_from_fd(dev2, foreign, &imported), -EXDEV);
			close(foreign);
			vgem_close_handle(vgem, vh);
		}
		close(vgem);
	}
	CHECK(imported == GARBAGE_U32, "failed accmap_from_fd wrote id %#x", imported);
out:
	if (rw >= 0)
		close(rw);
	if (ro >= 0)
		close(ro);
	if (dev2 >= 0)
		LIB_IS(accmap_close(dev2), 0);
	if (dev >= 0)
		LIB_IS(accmap_close(dev), 0);
}

/* ==== copies without mapping ==== */

static void test_write_read(void)
{
	size_t len = pages(3);
	uint8_t *src = malloc(len), *dst = malloc(len);
	uint32_t id, unalloc;
	int dev = -1;

	if (!CHECK(src && dst, "out of memory") || !LIB_IS(accmap_open(&dev), 0))
		goto out;
	id = new_buffer(dev, pages(4), ACCMAP_ALLOC_WRITECOMBINE, 0);
	if (!id || !LIB_IS(accmap_create(dev, pages(1), &unalloc), 0))
		goto out;

	fill_pattern(src, len, 0, 11);
	memset(dst, 0, len);
	LIB_IS(accmap_write(dev, id, 100, src, len), 0);
	LIB_IS(accmap_read(dev, id, 100, dst, len), 0);
	CHECK(find_pattern_mismatch(dst, len, 0, 11) == len, "read back differs");
	/* The bytes around the range stay as they were: zero. */
	LIB_IS(accmap_read(dev, id, 0, dst, 100), 0);
	CHECK(find_nonzero(dst, 100) == 100, "bytes before the range changed");
	LIB_IS(accmap_read(dev, id, pages(4) - 1, dst, 1), 0);
	LIB_IS(accmap_write(dev, id, pages(4) - 1, src, 1), 0);

	LIB_IS(accmap_write(dev, id, 0, src, 0), -EINVAL);
	LIB_IS(accmap_read(dev, id, 0, dst, 0), -EINVAL);
	LIB_IS(accmap_write(dev, id, pages(4) - 1, src, 2), -ERANGE);
	LIB_IS(accmap_read(dev, id, pages(4), dst, 1), -ERANGE);
	LIB_IS(accmap_read(dev, id, UINT64_MAX, dst, 2), -EINVAL);
	LIB_IS(accmap_write(dev, unalloc, 0, src, 1), -ENODATA);
	LIB_IS(accmap_read(dev, unalloc, 0, dst, 1), -ENODATA);
	LIB_IS(accmap_write(dev, id + 1000, 0, src, 1), -ENOENT);
	LIB_IS(accmap_read(dev, 0, 0, dst, 1), -ENOENT);
	LIB_IS(accmap_write(dev, id, 0, NULL, 1), -EFAULT);
	LIB_IS(accmap_read(dev, id, 0, (void *)page_size(), 1), -EFAULT);
out:
	if (dev >= 0)
		LIB_IS(accmap_close(dev), 0);
	free(src);
	free(dst);
}

static void test_strided(void)
{
	/* A 40 x 16 block of 4-byte pixels in a 256-pixel-wide image. */
	enum { W = 40, H = 16, PITCH = 256 * 4, SRC_PITCH = W * 4 + 12 };
	static uint8_t src[SRC_PITCH * H], dst[W * 4 * H], row[PITCH], spare[PITCH * 34];
	struct accmap_rw rw;
	uint32_t id;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	id = new_buffer(dev, PITCH * 32, 0, 0);
	if (!id)
		goto out;

	fill_pattern(src, sizeof(src), 0, 5);
	memset(&rw, 0, sizeof(rw));
	rw.addr = (uintptr_t)src;
	rw.offset = 3 * PITCH + 8 * 4;
	rw.elem_size = W * 4;
	rw.user_stride = SRC_PITCH;
	rw.handle_stride = PITCH;
	rw.count = H;
	rw.id = id;
	rw.bytes = GARBAGE_U64;
	if (LIB_IS(accmap_write_strided(dev, &rw), 0))
		CHECK(rw.bytes == W * 4 * H, "WRITE bytes %llu", (unsigned long long)rw.bytes);

	/* Back out packed: element i of row r is at src + r * SRC_PITCH + i. */
	rw.addr = (uintptr_t)dst;
	rw.user_stride = W * 4;
	rw.bytes = GARBAGE_U64;
	if (LIB_IS(accmap_read_strided(dev, &rw), 0)) {
		CHECK(rw.bytes == W * 4 * H, "READ bytes %llu", (unsigned long long)rw.bytes);
		for (int r = 0; r < H; r++)
			CHECK(!memcmp(dst + r * W * 4, src + r * SRC_PITCH, W * 4),
			      "row %d of the block differs", r);
	}
	/* A whole image row: only the block's pixels were written. */
	if (LIB_IS(accmap_read(dev, id, 3 * PITCH, row, PITCH), 0)) {
		CHECK(find_nonzero(row, 8 * 4) == 8 * 4, "pixels left of the block changed");
		CHECK(find_nonzero(row + (8 + W) * 4, PITCH - (8 + W) * 4) ==
		      PITCH - (8 + W) * 4, "pixels right of the block changed");
	}

	rw.flags = 1;
	LIB_IS(accmap_read_strided(dev, &rw), -EINVAL);
	rw.flags = 0;
	rw.handle_stride = W * 4 - 1;
	LIB_IS(accmap_write_strided(dev, &rw), -EINVAL);
	rw.handle_stride = PITCH;
	rw.addr = (uintptr_t)spare;
	rw.count = 32;
	LIB_IS(accmap_read_strided(dev, &rw), -ERANGE);
	rw.count = 0;
	LIB_IS(accmap_write_strided(dev, &rw), -EINVAL);
	LIB_IS(accmap_write_strided(dev, NULL), -EINVAL);
	LIB_IS(accmap_read_strided(dev, NULL), -EINVAL);
out:
	LIB_IS(accmap_close(dev), 0);
}

/* ==== accounting and heaps ==== */

static void test_tag_label(void)
{
	char longest[ACCMAP_LABEL_LEN], too_long[ACCMAP_LABEL_LEN + 1], seen[64];
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (LIB_IS(accmap_set_tag_label(dev, TAG_A, "camera"), 0)) {
		tag_label(TAG_A, seen, sizeof(seen));
		CHECK(!strcmp(seen, "camera"), "debugfs tags: label \"%s\"", seen);
	}
	memset(longest, 'L', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	LIB_IS(accmap_set_tag_label(dev, TAG_A, longest), 0);

	/* Refused by the library: the kernel keeps the label it had. */
	memset(too_long, 'T', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	LIB_IS(accmap_set_tag_label(dev, TAG_A, too_long), -ENAMETOOLONG);
	LIB_IS(accmap_set_tag_label(dev, TAG_A, NULL), -EINVAL);
	/* Refused by the kernel. */
	LIB_IS(accmap_set_tag_label(dev, TAG_A, "tab\there"), -EINVAL);
	LIB_IS(accmap_set_tag_label(dev, TAG_A, "caf\xc3\xa9"), -EINVAL);
	tag_label(TAG_A, seen, sizeof(seen));
	CHECK(!strcmp(seen, longest), "debugfs tags: label \"%s\" after refused calls", seen);

	LIB_IS(accmap_set_tag_label(dev, TAG_A, ""), 0);
	tag_label(TAG_A, seen, sizeof(seen));
	CHECK(!strcmp(seen, "") || !strcmp(seen, "-"), "label \"%s\" after removing it", seen);
	LIB_IS(accmap_set_tag_label(-1, TAG_A, "x"), -EBADF);
	LIB_IS(accmap_close(dev), 0);
}

static void test_query_heap(void)
{
	struct accmap_heap_info hi, before;
	uint32_t id;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	memset(&hi, GARBAGE_BYTE, sizeof(hi));
	if (LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_SYSTEM, &hi), 0)) {
		CHECK(hi.heap == ACCMAP_HEAP_SYSTEM && hi.pad == 0, "heap %u pad %#x", hi.heap,
		      hi.pad);
		CHECK(!strcmp(hi.name, "system"), "heap 0 is \"%.16s\"", hi.name);
		CHECK(hi.total > 0 && hi.free <= hi.total && hi.largest_free == hi.free,
		      "system heap total %llu free %llu largest %llu",
		      (unsigned long long)hi.total, (unsigned long long)hi.free,
		      (unsigned long long)hi.largest_free);
	}
	if (LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_USER, &before), 0))
		CHECK(!strcmp(before.name, "user") && before.total == 0,
		      "heap 31 is \"%.16s\", total %llu", before.name,
		      (unsigned long long)before.total);
	/* used follows the buffers exactly. */
	if (LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_SYSTEM, &before), 0)) {
		id = new_buffer(dev, pages(16), 0, 0);
		if (id && LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_SYSTEM, &hi), 0))
			CHECK(hi.used - before.used == pages(16), "used grew by %lld",
			      (long long)(hi.used - before.used));
		if (id)
			LIB_IS(accmap_free(dev, id), 0);
	}

	memset(&hi, GARBAGE_BYTE, sizeof(hi));
	LIB_IS(accmap_query_heap(dev, missing_heap(dev), &hi), -ENODEV);
	LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_MAX, &hi), -EINVAL);
	LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_NONE, &hi), -EINVAL);
	LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_SYSTEM, NULL), -EINVAL);
	LIB_IS(accmap_close(dev), 0);
}

/*
 * What the guest's init says about device memory (ACCMAP_DEVMEM): 0 for
 * "none", 1 for a kind ("private", "coherent"), -1 when it says nothing.
 */
static int devmem_expected(void)
{
	const char *env = getenv("ACCMAP_DEVMEM");

	if (!env || !*env)
		return -1;
	return strcmp(env, "none") ? 1 : 0;
}

static void test_device_memory(void)
{
	struct accmap_heap_info hi, q;
	int dev = -1, ret, want = devmem_expected();

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	memset(&hi, GARBAGE_BYTE, sizeof(hi));
	ret = accmap_device_memory(dev, &hi);
	tap_diag("ACCMAP_DEVMEM=%s: accmap_device_memory returned %d (%s)",
		 getenv("ACCMAP_DEVMEM") ? getenv("ACCMAP_DEVMEM") : "(unset)", ret,
		 err_name(ret));
	if (want >= 0)
		CHECK(ret == (want ? 0 : -ENODEV),
		      "accmap_device_memory returned %d (%s) with ACCMAP_DEVMEM=%s", ret,
		      err_name(ret), getenv("ACCMAP_DEVMEM"));
	else
		CHECK(ret == 0 || ret == -ENODEV, "accmap_device_memory returned %d (%s)", ret,
		      err_name(ret));
	/* As accmap_query_heap(): @info cleared, heap set, before the call. */
	if (ret == -ENODEV) {
		CHECK(hi.heap == ACCMAP_HEAP_DEVICE && hi.total == 0 && !hi.name[0],
		      "a failed accmap_device_memory left heap %#x total %#llx", hi.heap,
		      (unsigned long long)hi.total);
	} else if (ret == 0) {
		CHECK(hi.heap == ACCMAP_HEAP_DEVICE && hi.pad == 0 && !strcmp(hi.name, "device"),
		      "device memory: heap %u pad %#x name \"%.16s\"", hi.heap, hi.pad, hi.name);
		CHECK(hi.total > 0 && hi.used + hi.free == hi.total && hi.largest_free <= hi.free &&
		      hi.total % page_size() == 0,
		      "device memory: total %llu used %llu free %llu largest free %llu",
		      (unsigned long long)hi.total, (unsigned long long)hi.used,
		      (unsigned long long)hi.free, (unsigned long long)hi.largest_free);
		tap_diag("device memory: total %llu, used %llu, free %llu, largest free %llu",
			 (unsigned long long)hi.total, (unsigned long long)hi.used,
			 (unsigned long long)hi.free, (unsigned long long)hi.largest_free);
	}
	/* The same answer as QUERY_HEAP of the heap id. */
	memset(&q, GARBAGE_BYTE, sizeof(q));
	LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_DEVICE, &q), ret);
	if (!ret)
		CHECK(q.total == hi.total && !strcmp(q.name, hi.name),
		      "QUERY_HEAP(%d): \"%.16s\" total %llu; accmap_device_memory: total %llu",
		      ACCMAP_HEAP_DEVICE, q.name, (unsigned long long)q.total,
		      (unsigned long long)hi.total);
	LIB_IS(accmap_close(dev), 0);
}

static void test_query_pool(void)
{
	struct accmap_pool_info pi;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	memset(&pi, GARBAGE_BYTE, sizeof(pi));
	if (LIB_IS(accmap_query_pool(dev, &pi), 0)) {
		CHECK(pi.norders >= 1 && pi.norders <= ACCMAP_POOL_MAX_ORDERS && pi.pad == 0,
		      "norders %u pad %#x", pi.norders, pi.pad);
		for (uint32_t i = 0; i < pi.norders && i < ACCMAP_POOL_MAX_ORDERS; i++) {
			CHECK(pi.orders[i].block_size == page_size() << pi.orders[i].order &&
			      pi.orders[i].pad == 0, "order %u: block %llu", pi.orders[i].order,
			      (unsigned long long)pi.orders[i].block_size);
			CHECK(!i || pi.orders[i].order > pi.orders[i - 1].order,
			      "orders not ascending at %u", i);
		}
		/* The library cleared what the kernel does not fill. */
		for (uint32_t i = pi.norders; i < ACCMAP_POOL_MAX_ORDERS; i++)
			CHECK(pi.orders[i].block_size == 0, "unused order %u not cleared", i);
	}
	LIB_IS(accmap_query_pool(dev, NULL), -EINVAL);
	LIB_IS(accmap_query_pool(-1, &pi), -EBADF);
	LIB_IS(accmap_close(dev), 0);
}

/* ==== CPU access through a dma-buf ==== */

static void test_map_sync(void)
{
	uint8_t *p = NULL, *q = NULL, out[16];
	int dev = -1, rw = -1, ro = -1, null = -1;
	uint32_t id;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	id = new_buffer(dev, pages(2), 0, 0);
	if (!id || !LIB_IS(accmap_get_fd(dev, id, O_RDWR | O_CLOEXEC, &rw), 0) ||
	    !LIB_IS(accmap_get_fd(dev, id, O_RDONLY | O_CLOEXEC, &ro), 0))
		goto out;

	if (LIB_IS(accmap_map(rw, pages(2), PROT_READ | PROT_WRITE, (void **)&p), 0)) {
		LIB_IS(accmap_sync(rw, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE), 0);
		memcpy(p + pages(1), "through the map", 16);
		LIB_IS(accmap_sync(rw, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE), 0);
		if (LIB_IS(accmap_read(dev, id, pages(1), out, 16), 0))
			CHECK(!memcmp(out, "through the map", 16),
			      "READ misses the mapping's write");
	}
	if (LIB_IS(accmap_map(ro, pages(2), PROT_READ, (void **)&q), 0)) {
		LIB_IS(accmap_sync(ro, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ), 0);
		CHECK(!memcmp(q + pages(1), "through the map", 16), "read-only map differs");
		LIB_IS(accmap_sync(ro, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ), 0);
		LIB_IS(accmap_unmap(q, pages(2)), 0);
	}
	q = (uint8_t *)1;
	LIB_IS(accmap_map(ro, pages(2), PROT_READ | PROT_WRITE, (void **)&q), -EACCES);
	LIB_IS(accmap_map(rw, pages(3), PROT_READ, (void **)&q), -EINVAL);
	LIB_IS(accmap_map(rw, 0, PROT_READ, (void **)&q), -EINVAL);
	LIB_IS(accmap_map(-1, pages(1), PROT_READ, (void **)&q), -EBADF);
	LIB_IS(accmap_map(rw, pages(1), PROT_READ, NULL), -EINVAL);
	CHECK(q == (uint8_t *)1, "failed accmap_map wrote the address");
	if (p) {
		LIB_IS(accmap_unmap(p + 1, pages(1)), -EINVAL);
		LIB_IS(accmap_unmap(p, pages(2)), 0);
	}

	LIB_IS(accmap_sync(rw, DMA_BUF_SYNC_START), -EINVAL);
	LIB_IS(accmap_sync(rw, DMA_BUF_SYNC_RW | 0x100), -EINVAL);
	LIB_IS(accmap_sync(-1, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), -EBADF);
	if (LIB_IS(accmap_open_path("/dev/null", &null), 0)) {
		LIB_IS(accmap_sync(null, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), -ENOTTY);
		close(null);
	}
out:
	if (rw >= 0)
		close(rw);
	if (ro >= 0)
		close(ro);
	LIB_IS(accmap_close(dev), 0);
}

/* ==== user memory ==== */

static void test_from_va(void)
{
	size_t len = pages(4);
	struct accmap_heap_info before, after;
	uint32_t id = 0, ro_id = 0, bad = GARBAGE_U32;
	uint8_t *mem, *rdonly, out[64];
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rdonly = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(mem != MAP_FAILED && rdonly != MAP_FAILED, "mmap: %s", strerror(errno)))
		goto out;
	fill_pattern(mem, len, 0, 21);
	fill_pattern(rdonly, len, 0, 22);
	CHECK(mprotect(rdonly, len, PROT_READ) == 0, "mprotect: %s", strerror(errno));

	LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_USER, &before), 0);
	if (LIB_IS(accmap_from_va(dev, mem, len, ACCMAP_FROM_VA_WRITE, TAG_B, &id), 0)) {
		check_info(dev, id, len, ACCMAP_HEAP_USER, 0, ACCMAP_STATE_ALLOCATED, TAG_B,
			   "after accmap_from_va");
		if (LIB_IS(accmap_read(dev, id, pages(3), out, sizeof(out)), 0))
			CHECK(find_pattern_mismatch(out, sizeof(out), pages(3), 21) == sizeof(out),
			      "READ through the handle differs from the memory");
		LIB_IS(accmap_write(dev, id, 8, "pinned", 6), 0);
		CHECK(!memcmp(mem + 8, "pinned", 6), "WRITE through the handle not at addr");
		if (LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_USER, &after), 0))
			CHECK(after.used - before.used == len, "user heap used grew by %lld",
			      (long long)(after.used - before.used));
		LIB_IS(accmap_alloc(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, 0, NULL), -EEXIST);
	}
	if (LIB_IS(accmap_from_va(dev, rdonly, len, 0, 0, &ro_id), 0)) {
		check_info(dev, ro_id, len, ACCMAP_HEAP_USER, 0,
			   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_READONLY, 0, "read-only FROM_VA");
		LIB_IS(accmap_write(dev, ro_id, 0, "x", 1), -EACCES);
		LIB_IS(accmap_free(dev, ro_id), 0);
	}

	LIB_IS(accmap_from_va(dev, rdonly, len, ACCMAP_FROM_VA_WRITE, 0, &bad), -EFAULT);
	LIB_IS(accmap_from_va(dev, mem + 1, pages(1), 0, 0, &bad), -EINVAL);
	LIB_IS(accmap_from_va(dev, mem, pages(1) + 1, 0, 0, &bad), -EINVAL);
	LIB_IS(accmap_from_va(dev, mem, 0, 0, 0, &bad), -EINVAL);
	LIB_IS(accmap_from_va(dev, mem, pages(1), 1U << 5, 0, &bad), -EINVAL);
	LIB_IS(accmap_from_va(dev, mem, pages(1), 0, 0, NULL), -EINVAL);
	CHECK(munmap(rdonly, len) == 0, "munmap: %s", strerror(errno));
	LIB_IS(accmap_from_va(dev, rdonly, len, 0, 0, &bad), -EFAULT);
	CHECK(bad == GARBAGE_U32, "failed accmap_from_va wrote id %#x", bad);
	rdonly = MAP_FAILED;

	if (id)
		LIB_IS(accmap_free(dev, id), 0);
	if (LIB_IS(accmap_query_heap(dev, ACCMAP_HEAP_USER, &after), 0))
		CHECK(after.used == before.used, "user heap used %llu after freeing, was %llu",
		      (unsigned long long)after.used, (unsigned long long)before.used);
out:
	if (mem != MAP_FAILED)
		munmap(mem, len);
	if (rdonly != MAP_FAILED)
		munmap(rdonly, len);
	LIB_IS(accmap_close(dev), 0);
}

/* ==== cache maintenance ==== */

static void test_cache(void)
{
	static const uint32_t kinds[] = {
		0, ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED,
	};
	uint8_t in[256], out[256];
	uint32_t id = 0, unalloc;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	fill_pattern(in, sizeof(in), 0, 31);
	for (size_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++) {
		id = new_buffer(dev, pages(4), kinds[k], 0);
		if (!id)
			continue;
		LIB_IS(accmap_write(dev, id, pages(1) - 100, in, sizeof(in)), 0);
		for (uint32_t op = ACCMAP_CACHE_WRITEBACK;
		     op <= ACCMAP_CACHE_WRITEBACK_INVALIDATE; op++) {
			LIB_IS(accmap_cache(dev, id, op, 0, pages(4)), 0);
			LIB_IS(accmap_cache(dev, id, op, pages(1) - 100, sizeof(in)), 0);
			LIB_IS(accmap_cache(dev, id, op, pages(4) - 1, 1), 0);
		}
		/* Maintenance never changes what the CPU reads. */
		if (LIB_IS(accmap_read(dev, id, pages(1) - 100, out, sizeof(out)), 0))
			CHECK(!memcmp(in, out, sizeof(in)),
			      "contents changed by cache ops (flags %#x)", kinds[k]);
		if (k + 1 < TAP_ARRAY_SIZE(kinds))
			LIB_IS(accmap_free(dev, id), 0);
	}
	if (!id || !LIB_IS(accmap_create(dev, pages(1), &unalloc), 0))
		goto out;

	LIB_IS(accmap_cache(dev, id, 0, 0, 1), -EINVAL);
	LIB_IS(accmap_cache(dev, id, ACCMAP_CACHE_WRITEBACK_INVALIDATE + 1, 0, 1), -EINVAL);
	LIB_IS(accmap_cache(dev, id, ACCMAP_CACHE_WRITEBACK, 0, 0), -EINVAL);
	LIB_IS(accmap_cache(dev, id, ACCMAP_CACHE_WRITEBACK, UINT64_MAX, 2), -EINVAL);
	LIB_IS(accmap_cache(dev, id, ACCMAP_CACHE_WRITEBACK, 0, pages(4) + 1), -ERANGE);
	LIB_IS(accmap_cache(dev, id, ACCMAP_CACHE_INVALIDATE, pages(4), 1), -ERANGE);
	LIB_IS(accmap_cache(dev, id + 1000, ACCMAP_CACHE_WRITEBACK, 0, 1), -ENOENT);
	LIB_IS(accmap_cache(dev, unalloc, ACCMAP_CACHE_WRITEBACK, 0, 1), -ENODATA);
	LIB_IS(accmap_cache(-1, id, ACCMAP_CACHE_WRITEBACK, 0, 1), -EBADF);
out:
	LIB_IS(accmap_close(dev), 0);
}

static void test_cache_list(void)
{
	struct accmap_cache_op *ops, bad[3];
	uint32_t a, b, unalloc, done;
	int dev = -1;

	ops = calloc(ACCMAP_CACHE_LIST_MAX + 1, sizeof(*ops));
	if (!CHECK(ops, "out of memory") || !LIB_IS(accmap_open(&dev), 0))
		goto out;
	a = new_buffer(dev, pages(2), 0, 0);
	b = new_buffer(dev, pages(8), ACCMAP_ALLOC_WRITECOMBINE, 0);
	if (!a || !b || !LIB_IS(accmap_create(dev, pages(1), &unalloc), 0))
		goto out;

	for (uint32_t i = 0; i <= ACCMAP_CACHE_LIST_MAX; i++) {
		ops[i].id = i % 2 ? b : a;
		ops[i].op = ACCMAP_CACHE_WRITEBACK + i % 3;
		ops[i].offset = (i % 7) * 64;
		ops[i].length = page_size();
	}
	done = GARBAGE_U32;
	LIB_IS(accmap_cache_list(dev, ops, 3, &done), 0);
	CHECK(done == 3, "done %u after 3 entries", done);
	done = GARBAGE_U32;
	LIB_IS(accmap_cache_list(dev, ops, ACCMAP_CACHE_LIST_MAX, &done), 0);
	CHECK(done == ACCMAP_CACHE_LIST_MAX, "done %u after the longest list", done);
	LIB_IS(accmap_cache_list(dev, ops, 1, NULL), 0);

	/* The failing entry is named; the list as a whole is refused. */
	memcpy(bad, ops, sizeof(bad));
	bad[2].length = pages(2) + 1;		/* entry 2 is buffer a */
	LIB_IS(accmap_cache_list(dev, bad, 3, &done), -ERANGE);
	CHECK(done == 2, "ERANGE: done %u, expected 2", done);
	memcpy(bad, ops, sizeof(bad));
	bad[1].id = unalloc;
	bad[1].offset = 0;			/* inside its one page */
	LIB_IS(accmap_cache_list(dev, bad, 3, &done), -ENODATA);
	CHECK(done == 1, "ENODATA: done %u, expected 1", done);
	bad[1].id = b + 1000;
	LIB_IS(accmap_cache_list(dev, bad, 3, &done), -ENOENT);
	CHECK(done == 1, "ENOENT: done %u, expected 1", done);
	memcpy(bad, ops, sizeof(bad));
	bad[0].op = 0;
	LIB_IS(accmap_cache_list(dev, bad, 3, &done), -EINVAL);
	CHECK(done == 0, "EINVAL entry: done %u, expected 0", done);
	LIB_IS(accmap_cache_list(dev, bad, 3, NULL), -EINVAL);

	LIB_IS(accmap_cache_list(dev, ops, 0, &done), -EINVAL);
	CHECK(done == ACCMAP_CACHE_LIST_NO_ENTRY, "count 0: done %u", done);
	done = 0;
	LIB_IS(accmap_cache_list(dev, ops, ACCMAP_CACHE_LIST_MAX + 1, &done), -EINVAL);
	CHECK(done == ACCMAP_CACHE_LIST_NO_ENTRY, "count above the maximum: done %u", done);
	done = 0;
	LIB_IS(accmap_cache_list(dev, (void *)page_size(), 2, &done), -EFAULT);
	CHECK(done == ACCMAP_CACHE_LIST_NO_ENTRY, "unreadable ops: done %u", done);
	done = 0;
	LIB_IS(accmap_cache_list(dev, NULL, 1, &done), -EINVAL);
	CHECK(done == 0, "NULL ops: done written (%u)", done);
out:
	if (dev >= 0)
		LIB_IS(accmap_close(dev), 0);
	free(ops);
}

/* ==== the SVM aperture ==== */

#define MIB		(1024ULL * 1024)
#define GIB		(1024 * MIB)

static uint64_t align_up_u64(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static sigjmp_buf touch_jmp;

static void touch_segv(int sig)
{
	(void)sig;
	siglongjmp(touch_jmp, 1);
}

/* Whether a CPU read (or write) of the byte at @addr raises SIGSEGV. */
static bool cpu_faults(void *addr, bool write)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = touch_segv;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(touch_jmp, 1)) {
		sigaction(SIGSEGV, &old, NULL);
		return true;
	}
	/* Atomic accesses: the compiler may not drop them. */
	if (write)
		__atomic_store_n((uint8_t *)addr, 0x5a, __ATOMIC_RELAXED);
	else
		(void)__atomic_load_n((uint8_t *)addr, __ATOMIC_RELAXED);
	sigaction(SIGSEGV, &old, NULL);
	return false;
}

/* The /proc/self/maps permissions ("rw-p", "---p") of the mapping holding @addr. */
static bool maps_perms(uint64_t addr, char perms[5], unsigned long long *start,
		       unsigned long long *end)
{
	unsigned long long lo, hi;
	char line[512], p[8];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!CHECK(f, "/proc/self/maps: %s", strerror(errno)))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, p) == 3 && addr >= lo && addr < hi) {
			memcpy(perms, p, 5);
			*start = lo;
			*end = hi;
			found = true;
		}
	fclose(f);
	return found;
}

/* An allocation that must succeed and lie in the aperture; NULL on failure. */
static uint8_t *svm_alloc_ok(size_t size, const struct accmap_svm_aperture *ap)
{
	void *p = (void *)GARBAGE_U64;
	uint64_t a;

	if (!LIB_IS(accmap_svm_alloc(size, &p), 0))
		return NULL;
	a = (uintptr_t)p;
	CHECK(a % page_size() == 0, "accmap_svm_alloc(%zu) gave %#llx: not page-aligned", size,
	      (unsigned long long)a);
	CHECK(a >= ap->start && a + size <= ap->start + ap->size,
	      "accmap_svm_alloc(%zu) gave %#llx, outside the aperture [%#llx, %#llx)", size,
	      (unsigned long long)a, (unsigned long long)ap->start,
	      (unsigned long long)(ap->start + ap->size));
	LIB_IS(accmap_svm_aperture_check(p, size), 0);
	return p;
}

/* @len bytes at @p are zero, take a pattern, and read it back. */
static void check_fresh_rw(uint8_t *p, size_t len, unsigned int seed, const char *what)
{
	CHECK(find_nonzero(p, len) == len, "%s: new memory not zero", what);
	fill_pattern(p, len, 0, seed);
	CHECK(find_pattern_mismatch(p, len, 0, seed) == len, "%s: pattern not read back", what);
}

static void test_svm_aperture_reserved(void)
{
	struct accmap_svm_aperture ap, ap2;
	unsigned long long lo, hi;
	uint64_t ps = page_size();
	uint8_t *a, *b, *c, *d, *e, *half1, *half2;
	uint32_t cpu_bits = 0;
	int stack_var = 0;
	char perms[5];
	void *p;

	if (!LIB_IS(accmap_svm_cpu_va_bits(&cpu_bits), 0) ||
	    !CHECK(cpu_bits > 32 && cpu_bits <= 57, "CPU user VA bits %u", cpu_bits))
		return;

	/* Nothing before init. */
	LIB_IS(accmap_svm_aperture_info(&ap), -ENXIO);
	LIB_IS(accmap_svm_alloc(ps, &p), -ENXIO);
	LIB_IS(accmap_svm_free(&stack_var), -ENXIO);
	LIB_IS(accmap_svm_aperture_check(&stack_var, 1), -ENXIO);
	LIB_IS(accmap_svm_aperture_fini(), -ENXIO);
	LIB_IS(accmap_svm_aperture_init(ACCMAP_REPLAY_VA_BITS_MIN - 1), -EINVAL);
	LIB_IS(accmap_svm_aperture_init(ACCMAP_REPLAY_VA_BITS_MAX + 1), -EINVAL);
	LIB_IS(accmap_svm_aperture_info(&ap), -ENXIO);

	/* A 32-bit GPU: a reservation below 4 GiB. */
	if (!LIB_IS(accmap_svm_aperture_init(32), 0))
		return;
	LIB_IS(accmap_svm_aperture_init(32), -EBUSY);
	LIB_IS(accmap_svm_aperture_init(48), -EBUSY);
	LIB_IS(accmap_svm_aperture_info(NULL), -EINVAL);
	if (!LIB_IS(accmap_svm_aperture_info(&ap), 0))
		return;
	tap_diag("va_bits 32 on a %u-bit CPU: reserved [%#llx, %#llx)", cpu_bits,
		 (unsigned long long)ap.start, (unsigned long long)(ap.start + ap.size));
	CHECK(ap.reserved == 1 && ap.va_bits == 32 && ap.cpu_va_bits == cpu_bits &&
	      ap.allocations == 0 && ap.allocated == 0,
	      "aperture: reserved %u va_bits %u cpu_va_bits %u allocations %u allocated %llu",
	      ap.reserved, ap.va_bits, ap.cpu_va_bits, ap.allocations,
	      (unsigned long long)ap.allocated);
	if (!CHECK(ap.start >= ACCMAP_SVM_APERTURE_MIN && ap.start + ap.size <= 4 * GIB &&
		   ap.start + ap.size > ap.start, "reservation [%#llx, +%#llx) not below 4 GiB",
		   (unsigned long long)ap.start, (unsigned long long)ap.size))
		return;
	CHECK(ap.size >= ACCMAP_SVM_APERTURE_MIN && !(ap.size & (ap.size - 1)) &&
	      ap.start % ACCMAP_SVM_APERTURE_MIN == 0,
	      "reservation [%#llx, +%#llx): not a power of two aligned to 2 MiB",
	      (unsigned long long)ap.start, (unsigned long long)ap.size);
	/* Little lives below 4 GiB in this static program: most of it is had. */
	CHECK(ap.size >= GIB, "only %llu MiB reserved", (unsigned long long)(ap.size / MIB));
	if (maps_perms(ap.start, perms, &lo, &hi))
		CHECK(!strcmp(perms, "---p") && lo <= ap.start && hi >= ap.start + ap.size,
		      "reservation mapped %s [%#llx, %#llx)", perms, lo, hi);
	else
		CHECK(false, "reservation start %#llx not in /proc/self/maps",
		      (unsigned long long)ap.start);
	CHECK(cpu_faults((void *)(uintptr_t)ap.start, false) &&
	      cpu_faults((void *)(uintptr_t)(ap.start + ap.size - 1), true),
	      "the empty reservation does not fault on CPU access");

	LIB_IS(accmap_svm_aperture_check((void *)(uintptr_t)ap.start, ap.size), 0);
	LIB_IS(accmap_svm_aperture_check((void *)(uintptr_t)ap.start, ap.size + 1), -ERANGE);
	LIB_IS(accmap_svm_aperture_check((void *)(uintptr_t)(ap.start - 1), 1), -ERANGE);
	LIB_IS(accmap_svm_aperture_check(&stack_var, sizeof(stack_var)), -ERANGE);
	LIB_IS(accmap_svm_aperture_check(&stack_var, 0), -EINVAL);
	LIB_IS(accmap_svm_aperture_check((void *)(uintptr_t)-4096, 8192), -EINVAL);

	/* First fit from the bottom; 2 MiB blocks aligned to 2 MiB. */
	a = svm_alloc_ok(1, &ap);
	b = svm_alloc_ok(3 * ps + 1, &ap);
	c = svm_alloc_ok(2 * MIB, &ap);
	if (!a || !b || !c)
		return;
	CHECK((uintptr_t)a == ap.start && (uintptr_t)b == ap.start + ps &&
	      (uintptr_t)c == ap.start + 2 * MIB,
	      "first fit: a %p b %p c %p in a reservation at %#llx", a, b, c,
	      (unsigned long long)ap.start);
	check_fresh_rw(a, ps, 1, "a");
	check_fresh_rw(b, 4 * ps, 2, "b");
	check_fresh_rw(c, 2 * MIB, 3, "c");
	if (maps_perms((uintptr_t)c, perms, &lo, &hi))
		CHECK(!strcmp(perms, "rw-p"), "an allocation is mapped %s", perms);
	if (LIB_IS(accmap_svm_aperture_info(&ap2), 0))
		CHECK(ap2.allocations == 3 && ap2.allocated == 5 * ps + 2 * MIB,
		      "info: %u allocations, %llu bytes", ap2.allocations,
		      (unsigned long long)ap2.allocated);

	/* The PROT_NONE gaps: past b, past c; the blocks themselves do not fault. */
	CHECK(cpu_faults(b + 4 * ps, false), "read of the gap after b does not fault");
	CHECK(cpu_faults(b + 4 * ps, true), "write of the gap after b does not fault");
	CHECK(cpu_faults(c + 2 * MIB, false), "read after c does not fault");
	CHECK(cpu_faults(c - 1, true), "write before c does not fault");
	CHECK(!cpu_faults(a + ps - 1, true) && !cpu_faults(c + 2 * MIB - 1, false),
	      "allocated memory faults");

	/* Free b: its range faults again, and goes to the next fitting block. */
	LIB_IS(accmap_svm_free(b), 0);
	CHECK(cpu_faults(b, false), "a freed block is still readable");
	LIB_IS(accmap_svm_free(b), -EINVAL);
	LIB_IS(accmap_svm_free(a + ps), -EINVAL);
	LIB_IS(accmap_svm_free(c + ps), -EINVAL);
	LIB_IS(accmap_svm_free(&stack_var), -EINVAL);
	LIB_IS(accmap_svm_free(NULL), -EINVAL);
	d = svm_alloc_ok(2 * ps, &ap);
	e = svm_alloc_ok(2 * ps, &ap);
	if (d && e) {
		CHECK(d == b && e == b + 2 * ps, "freed range not reused: b %p, then %p and %p",
		      b, d, e);
		/* Fresh pages: b's pattern is gone. */
		check_fresh_rw(d, 2 * ps, 4, "reused d");
		check_fresh_rw(e, 2 * ps, 5, "reused e");
	}

	/* Exhaustion: what does not fit is -ENOMEM, and nothing changes. */
	LIB_IS(accmap_svm_alloc(ap.size, &p), -ENOMEM);
	LIB_IS(accmap_svm_alloc(ap.size - 2 * MIB, &p), -ENOMEM);
	LIB_IS(accmap_svm_alloc(SIZE_MAX, &p), -ENOMEM);
	LIB_IS(accmap_svm_alloc(0, &p), -EINVAL);
	LIB_IS(accmap_svm_alloc(ps, NULL), -EINVAL);
	LIB_IS(accmap_svm_aperture_fini(), -EBUSY);
	LIB_IS(accmap_svm_free(a), 0);
	LIB_IS(accmap_svm_free(c), 0);
	if (d)
		LIB_IS(accmap_svm_free(d), 0);
	if (e)
		LIB_IS(accmap_svm_free(e), 0);
	if (LIB_IS(accmap_svm_aperture_info(&ap2), 0))
		CHECK(ap2.allocations == 0 && ap2.allocated == 0,
		      "info after freeing all: %u allocations, %llu bytes", ap2.allocations,
		      (unsigned long long)ap2.allocated);

	/* Two halves fill it (address space only: nothing is touched). */
	half1 = svm_alloc_ok(ap.size / 2, &ap);
	half2 = svm_alloc_ok(ap.size / 2, &ap);
	if (half1 && half2) {
		CHECK((uintptr_t)half1 == ap.start && (uintptr_t)half2 == ap.start + ap.size / 2,
		      "halves at %p and %p", half1, half2);
		LIB_IS(accmap_svm_alloc(1, &p), -ENOMEM);
		LIB_IS(accmap_svm_free(half2), 0);
		a = svm_alloc_ok(1, &ap);
		CHECK(a == half2, "after freeing the upper half, one page went to %p", a);
		if (a)
			LIB_IS(accmap_svm_free(a), 0);
	}
	if (half1)
		LIB_IS(accmap_svm_free(half1), 0);

	/* Gone: unmapped, and the next init starts afresh. */
	LIB_IS(accmap_svm_aperture_fini(), 0);
	LIB_IS(accmap_svm_aperture_fini(), -ENXIO);
	LIB_IS(accmap_svm_aperture_info(&ap2), -ENXIO);
	LIB_IS(accmap_svm_alloc(ps, &p), -ENXIO);
	CHECK(!maps_perms(ap.start, perms, &lo, &hi), "the reservation outlived fini: %s",
	      perms);

	/* A 40-bit GPU: a reservation below 1 TiB, when the CPU has more bits. */
	if (cpu_bits > 40 && LIB_IS(accmap_svm_aperture_init(40), 0) &&
	    LIB_IS(accmap_svm_aperture_info(&ap2), 0)) {
		CHECK(ap2.reserved && ap2.start + ap2.size <= 1ULL << 40 &&
		      ap2.size >= 64 * GIB, "va_bits 40: reserved %u [%#llx, +%#llx)",
		      ap2.reserved, (unsigned long long)ap2.start,
		      (unsigned long long)ap2.size);
		LIB_IS(accmap_svm_aperture_fini(), 0);
	}
}

static void test_svm_aperture_whole(void)
{
	struct accmap_svm_aperture ap;
	unsigned long long lo, hi;
	uint64_t ps = page_size();
	uint32_t cpu_bits = 0;
	uint8_t *heap, *big;
	int stack_var = 0;
	char perms[5];
	void *p;

	if (!LIB_IS(accmap_svm_cpu_va_bits(&cpu_bits), 0))
		return;
	LIB_IS(accmap_svm_cpu_va_bits(NULL), -EINVAL);
	/* x86-64: 47; arm64: 48 (47 with 16 KiB pages and 47-bit VA). */
	if (!CHECK(cpu_bits == 47 || cpu_bits == 48, "CPU user VA bits %u, expected 47 or 48",
		   cpu_bits))
		return;
	CHECK((uintptr_t)&stack_var < 1ULL << cpu_bits &&
	      (uintptr_t)&stack_var >= 1ULL << (cpu_bits - 1),
	      "stack at %p is not in the top half of a %u-bit range", (void *)&stack_var,
	      cpu_bits);

	/* A 48-bit GPU reaches it all: nothing is reserved. */
	if (!LIB_IS(accmap_svm_aperture_init(48), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		return;
	tap_diag("va_bits 48 on a %u-bit CPU: the whole range [%#llx, %#llx)", cpu_bits,
		 (unsigned long long)ap.start, (unsigned long long)(ap.start + ap.size));
	CHECK(ap.reserved == 0 && ap.va_bits == 48 && ap.cpu_va_bits == cpu_bits,
	      "aperture: reserved %u va_bits %u cpu_va_bits %u", ap.reserved, ap.va_bits,
	      ap.cpu_va_bits);
	CHECK(ap.start == ps && ap.start + ap.size <= 1ULL << cpu_bits &&
	      ap.start + ap.size >= (1ULL << cpu_bits) - ps,
	      "whole range [%#llx, %#llx) on a %u-bit CPU", (unsigned long long)ap.start,
	      (unsigned long long)(ap.start + ap.size), cpu_bits);
#if defined(__x86_64__)
	CHECK(ap.start + ap.size == (1ULL << 47) - ps, "x86-64 user space ends at %#llx",
	      (unsigned long long)(ap.start + ap.size));
#endif

	/* Memory from anywhere is reachable: malloc(), the stack, the program. */
	heap = malloc(3 * MIB);
	if (CHECK(heap, "malloc failed")) {
		LIB_IS(accmap_svm_aperture_check(heap, 3 * MIB), 0);
		free(heap);
	}
	heap = malloc(100);
	if (CHECK(heap, "malloc failed")) {
		LIB_IS(accmap_svm_aperture_check(heap, 100), 0);
		free(heap);
	}
	LIB_IS(accmap_svm_aperture_check(&stack_var, sizeof(stack_var)), 0);
	LIB_IS(accmap_svm_aperture_check((void *)test_svm_aperture_whole, 1), 0);
	LIB_IS(accmap_svm_aperture_check(NULL, 1), -ERANGE);

	/* Allocations still work: anonymous memory, big ones 2 MiB aligned. */
	big = svm_alloc_ok(5 * MIB, &ap);
	if (big) {
		CHECK((uintptr_t)big % (2 * MIB) == 0, "5 MiB block at %p", big);
		check_fresh_rw(big, 5 * MIB, 6, "big");
		LIB_IS(accmap_svm_aperture_fini(), -EBUSY);
		LIB_IS(accmap_svm_free(big + ps), -EINVAL);
		LIB_IS(accmap_svm_free(big), 0);
		CHECK(!maps_perms((uintptr_t)big, perms, &lo, &hi) || lo > (uintptr_t)big,
		      "a freed block is still mapped (%s)", perms);
	}
	LIB_IS(accmap_svm_free(big), -EINVAL);
	if (LIB_IS(accmap_svm_alloc(1, &p), 0)) {
		check_fresh_rw(p, ps, 7, "small");
		LIB_IS(accmap_svm_free(p), 0);
	}
	LIB_IS(accmap_svm_aperture_fini(), 0);

	/* va_bits equal to the CPU's: still the whole range. */
	if (LIB_IS(accmap_svm_aperture_init(cpu_bits), 0) &&
	    LIB_IS(accmap_svm_aperture_info(&ap), 0)) {
		CHECK(!ap.reserved, "va_bits %u on a %u-bit CPU: reserved", cpu_bits, cpu_bits);
		LIB_IS(accmap_svm_aperture_fini(), 0);
	}
	/* One bit fewer: a reservation in the lower half. */
	if (LIB_IS(accmap_svm_aperture_init(cpu_bits - 1), 0) &&
	    LIB_IS(accmap_svm_aperture_info(&ap), 0)) {
		CHECK(ap.reserved && ap.start + ap.size <= 1ULL << (cpu_bits - 1),
		      "va_bits %u on a %u-bit CPU: reserved %u [%#llx, +%#llx)", cpu_bits - 1,
		      cpu_bits, ap.reserved, (unsigned long long)ap.start,
		      (unsigned long long)ap.size);
		LIB_IS(accmap_svm_aperture_fini(), 0);
	}
}

/* The process's address space in bytes (VmSize), 0 if unknown. */
static unsigned long long vm_size_bytes(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

/* A PROT_NONE page at exactly @addr that must be had; MAP_FAILED otherwise. */
static void *occupy(uint64_t addr)
{
	void *p = mmap((void *)(uintptr_t)addr, page_size(), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (!CHECK(p == (void *)(uintptr_t)addr, "mmap at %#llx: %p (%s)",
		   (unsigned long long)addr, p, strerror(errno))) {
		if (p != MAP_FAILED)
			munmap(p, page_size());
		return MAP_FAILED;
	}
	return p;
}

/*
 * Pages already mapped where the largest reservation would go: the library
 * tries lower, then halves the size.  An address-space limit that leaves no
 * room for 2 MiB: -ENOMEM.
 */
static void test_svm_aperture_crowded(void)
{
	uint64_t at1 = 3 * GIB / 2, at2 = 7 * GIB / 2;
	struct accmap_svm_aperture ap;
	struct rlimit old, lim;
	void *p1, *p2;

	/* 3.5 GiB: not [2, 4) GiB but [1, 3) GiB, still 2 GiB. */
	p2 = occupy(at2);
	if (p2 == MAP_FAILED)
		return;
	if (LIB_IS(accmap_svm_aperture_init(32), 0) && LIB_IS(accmap_svm_aperture_info(&ap), 0)) {
		tap_diag("page at 3.5 GiB: reserved [%#llx, %#llx)", (unsigned long long)ap.start,
			 (unsigned long long)(ap.start + ap.size));
		CHECK(ap.start == GIB && ap.size == 2 * GIB,
		      "page at 3.5 GiB: reserved [%#llx, +%#llx), expected [1 GiB, 3 GiB)",
		      (unsigned long long)ap.start, (unsigned long long)ap.size);
		LIB_IS(accmap_svm_aperture_fini(), 0);
	}

	/* And 1.5 GiB: no 2 GiB fits, the first 1 GiB from the top is [2.5, 3.5). */
	p1 = occupy(at1);
	if (p1 != MAP_FAILED) {
		if (LIB_IS(accmap_svm_aperture_init(32), 0) &&
		    LIB_IS(accmap_svm_aperture_info(&ap), 0)) {
			tap_diag("pages at 1.5 and 3.5 GiB: reserved [%#llx, %#llx)",
				 (unsigned long long)ap.start,
				 (unsigned long long)(ap.start + ap.size));
			CHECK(ap.start == 5 * GIB / 2 && ap.size == GIB,
			      "pages at 1.5, 3.5 GiB: reserved [%#llx, +%#llx), expected [2.5, 3.5) GiB",
			      (unsigned long long)ap.start, (unsigned long long)ap.size);
			LIB_IS(accmap_svm_aperture_fini(), 0);
		}
		munmap(p1, page_size());
	}
	munmap(p2, page_size());

	/* No address space left for even 2 MiB: -ENOMEM, and no aperture. */
	if (!CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit: %s", strerror(errno)))
		return;
	lim = old;
	lim.rlim_cur = vm_size_bytes() + MIB;
	if (!CHECK(lim.rlim_cur > MIB, "no VmSize in /proc/self/status") ||
	    !CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit: %s", strerror(errno)))
		return;
	LIB_IS(accmap_svm_aperture_init(32), -ENOMEM);
	LIB_IS(accmap_svm_aperture_info(&ap), -ENXIO);
	/* Nothing to reserve for a GPU that reaches it all. */
	LIB_IS(accmap_svm_aperture_init(48), 0);
	LIB_IS(accmap_svm_aperture_fini(), 0);
	CHECK(setrlimit(RLIMIT_AS, &old) == 0, "setrlimit back: %s", strerror(errno));
}

/* A forked child has the aperture and the blocks as they were; its frees are its own. */
static void test_svm_aperture_fork(void)
{
	struct accmap_svm_aperture ap, ap2;
	uint8_t *blk;
	int status = -1;
	pid_t pid;

	if (!LIB_IS(accmap_svm_aperture_init(32), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		return;
	blk = svm_alloc_ok(3 * page_size(), &ap);
	if (!blk)
		return;
	memset(blk, 0x42, 3 * page_size());
	pid = fork();
	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		return;
	if (pid == 0) {
		if (LIB_IS(accmap_svm_aperture_info(&ap2), 0))
			CHECK(ap2.start == ap.start && ap2.size == ap.size && ap2.allocations == 1,
			      "child: aperture [%#llx, +%#llx) with %u blocks",
			      (unsigned long long)ap2.start, (unsigned long long)ap2.size,
			      ap2.allocations);
		CHECK(blk[0] == 0x42 && blk[3 * page_size() - 1] == 0x42, "child: block contents");
		blk[0] = 0x24;
		LIB_IS(accmap_svm_aperture_init(32), -EBUSY);
		LIB_IS(accmap_svm_free(blk), 0);
		CHECK(cpu_faults(blk, false), "child: a freed block is readable");
		LIB_IS(accmap_svm_aperture_fini(), 0);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	/* The parent's block is untouched by the child's write and free. */
	CHECK(blk[0] == 0x42 && !cpu_faults(blk, true), "parent: block changed by the child");
	if (LIB_IS(accmap_svm_aperture_info(&ap2), 0))
		CHECK(ap2.allocations == 1, "parent: %u blocks", ap2.allocations);
	LIB_IS(accmap_svm_free(blk), 0);
	LIB_IS(accmap_svm_aperture_fini(), 0);
}

#define SVM_THREADS	4
#define SVM_ROUNDS	300
#define SVM_LIVE	8

/* Allocates and frees at random, checking each block keeps its own bytes. */
static void *svm_alloc_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg, id = seed;
	size_t ps = page_size(), sizes[SVM_LIVE] = { 0 };
	uint8_t *live[SVM_LIVE] = { NULL };

	for (int r = 0; r < SVM_ROUNDS; r++) {
		int i = rand_r(&seed) % SVM_LIVE;

		if (live[i]) {
			CHECK(find_pattern_mismatch(live[i], sizes[i], 0, id * 64 + i) == sizes[i],
			      "thread %u: block %p was written by someone else", id, live[i]);
			LIB_IS(accmap_svm_free(live[i]), 0);
			live[i] = NULL;
			continue;
		}
		sizes[i] = ps * (1 + rand_r(&seed) % 5);
		if (rand_r(&seed) % 8 == 0)
			sizes[i] = 2 * MIB;
		if (!LIB_IS(accmap_svm_alloc(sizes[i], (void **)&live[i]), 0)) {
			live[i] = NULL;
			break;
		}
		fill_pattern(live[i], sizes[i], 0, id * 64 + i);
	}
	for (int i = 0; i < SVM_LIVE; i++)
		if (live[i]) {
			CHECK(find_pattern_mismatch(live[i], sizes[i], 0, id * 64 + i) == sizes[i],
			      "thread %u: block %p was written by someone else", id, live[i]);
			LIB_IS(accmap_svm_free(live[i]), 0);
		}
	return NULL;
}

static void test_svm_aperture_threads(void)
{
	struct accmap_svm_aperture ap;
	pthread_t threads[SVM_THREADS];
	int n = 0;

	if (!LIB_IS(accmap_svm_aperture_init(32), 0))
		return;
	for (; n < SVM_THREADS; n++)
		if (!CHECK(pthread_create(&threads[n], NULL, svm_alloc_thread,
					  (void *)(uintptr_t)(n + 1)) == 0, "pthread_create"))
			break;
	while (n--)
		pthread_join(threads[n], NULL);
	if (LIB_IS(accmap_svm_aperture_info(&ap), 0))
		CHECK(ap.allocations == 0 && ap.allocated == 0,
		      "after the threads: %u allocations, %llu bytes", ap.allocations,
		      (unsigned long long)ap.allocated);
	LIB_IS(accmap_svm_aperture_fini(), 0);
}

/* ==== SVM sessions through the library, against the driver ==== */

/* A zeroed setup for an SVM session of the sim target, garbage outputs. */
static void svm_setup(struct accmap_replay_setup *s, uint32_t target, uint32_t va_bits,
		      uint64_t start, uint64_t size)
{
	memset(s, 0, sizeof(*s));
	s->target = target;
	s->format = ACCMAP_PGT_MALI_AARCH64_4K;
	s->va_bits = va_bits;
	s->svm_start = start;
	s->svm_size = size;
	/* The library adds the SVM flag; padding never reaches the kernel. */
	s->pad = GARBAGE_U32;
	s->session = GARBAGE_U32;
	s->failed_map = GARBAGE_U32;
}

/* An SVM session over [@start, +@size) that must be made; 0 on failure. */
static uint32_t svm_session(int dev, uint32_t target, uint32_t va_bits, uint64_t start,
			    uint64_t size)
{
	struct accmap_replay_setup s;

	svm_setup(&s, target, va_bits, start, size);
	if (!LIB_IS(accmap_svm_session_create(dev, &s), 0))
		return 0;
	CHECK(s.session && s.session != GARBAGE_U32 && s.failed_map == UINT32_MAX,
	      "SVM session: id %#x failed_map %#x", s.session, s.failed_map);
	return s.session;
}

/* accmap_svm_session_create() must fail with @want, and write no session id. */
static void svm_session_fails(int dev, struct accmap_replay_setup *s, int want, const char *what)
{
	int ret = accmap_svm_session_create(dev, s);

	CHECK(ret == want, "%s: accmap_svm_session_create returned %d (%s), expected %d (%s)",
	      what, ret, err_name(ret), want, err_name(want));
	CHECK(s->session == GARBAGE_U32, "%s: failed create wrote session %#x", what,
	      s->session);
}

/* The session's counters; all ones if the query fails. */
static struct accmap_svm_op svm_counters(int dev, uint32_t session)
{
	struct accmap_svm_op o;

	memset(&o, 0xff, sizeof(o));
	if (LIB_IS(accmap_svm_query(dev, session, &o), 0))
		CHECK(o.session == session && o.op == ACCMAP_SVM_OP_QUERY && !o.start &&
		      !o.size && !o.attrs && !o.granule && !o.location && !o.flags,
		      "QUERY gave back session %u op %u start %#llx size %#llx attrs %#x",
		      o.session, o.op, (unsigned long long)o.start, (unsigned long long)o.size,
		      o.attrs);
	return o;
}

/* The debugfs svm row of this process's session @id has these numbers. */
static void svm_debugfs_row(uint32_t id, uint64_t start, uint64_t size, uint64_t mapped)
{
	char pid[16], sid[16], hex[32];
	struct dbg_table t;
	long row;

	if (!CHECK(dbg_read("svm", &t), "no debugfs file svm"))
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(sid, sizeof(sid), "%u", id);
	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)start);
	row = dbg_find(&t, "pid", pid, "session", sid);
	if (CHECK(row >= 0, "no debugfs svm row for pid %s session %s", pid, sid))
		CHECK(!strcmp(dbg_cell(&t, (size_t)row, "start"), hex) &&
		      dbg_num(&t, (size_t)row, "size") == size &&
		      dbg_num(&t, (size_t)row, "mapped") == mapped,
		      "debugfs svm: start %s size %llu mapped %llu, expected %s %llu %llu",
		      dbg_cell(&t, (size_t)row, "start"), dbg_num(&t, (size_t)row, "size"),
		      dbg_num(&t, (size_t)row, "mapped"), hex, (unsigned long long)size,
		      (unsigned long long)mapped);
	dbg_free(&t);
}

/* In a child: the SVM calls on @session fail with EPERM. */
static void svm_child_eperm(int dev, uint32_t session, void *addr, bool nobody)
{
	struct accmap_replay_setup s;
	struct accmap_svm_op o;
	int status = -1;
	pid_t pid = fork();

	if (!CHECK(pid >= 0, "fork: %s", strerror(errno)))
		return;
	if (pid == 0) {
		if (nobody && !CHECK(setgroups(0, NULL) == 0 &&
				     setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
				     setresuid(NOBODY, NOBODY, NOBODY) == 0,
				     "dropping root: %s", strerror(errno)))
			_exit(1);
		LIB_IS(accmap_svm_query(dev, session, &o), -EPERM);
		LIB_IS(accmap_svm_prefetch(dev, session, addr, page_size(), ACCMAP_SVM_LOC_SYSTEM,
					   &o), -EPERM);
		LIB_IS(accmap_svm_set_attr(dev, session, addr, page_size(), 0, 0,
					   ACCMAP_SVM_LOC_SYSTEM, &o), -EPERM);
		if (nobody) {
			svm_setup(&s, 0, 48, page_size(), page_size());
			svm_session_fails(dev, &s, -EPERM, "as nobody");
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
}

static void test_svm_session_whole(void)
{
	struct accmap_svm_op o, before;
	struct accmap_svm_aperture ap;
	struct accmap_replay_setup s;
	uint64_t ps = page_size(), base;
	uint32_t target, id = 0;
	uint8_t *buf = NULL;
	int dev = -1, ret, i;
	void *none;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (!LIB_IS(accmap_replay_find_target(dev, simdrv_target(), &target, NULL), 0) ||
	    !LIB_IS(accmap_svm_aperture_init(48), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		goto out;
	CHECK(!ap.reserved, "va_bits 48: a reservation");

	/* Refused setups. */
	svm_setup(&s, target, 48, ap.start, 0);
	svm_session_fails(dev, &s, -EINVAL, "size 0");
	svm_setup(&s, target, 48, ap.start + 1, ps);
	svm_session_fails(dev, &s, -EINVAL, "start not page-aligned");
	svm_setup(&s, target, 48, ap.start, ps + 1);
	svm_session_fails(dev, &s, -EINVAL, "size not page-aligned");
	svm_setup(&s, target, 48, (1ULL << 48) - ps, 2 * ps);
	svm_session_fails(dev, &s, -EINVAL, "beyond 1 << 48");
#if defined(__x86_64__)
	/* 1 << 47 is below 1 << va_bits, but beyond x86-64's user space. */
	svm_setup(&s, target, 48, ap.start, ap.size + ps);
	svm_session_fails(dev, &s, -EINVAL, "beyond the end of user space");
#endif
	svm_setup(&s, target, 32, ap.start, ap.size);
	svm_session_fails(dev, &s, -EINVAL, "beyond 1 << va_bits");
	svm_setup(&s, target + 1000, 48, ap.start, ap.size);
	svm_session_fails(dev, &s, -ENOENT, "no such target");
	svm_setup(&s, target, 48, ap.start, ap.size);
	s.flags = ACCMAP_REPLAY_SETUP_VALID_FLAGS + 1;
	svm_session_fails(dev, &s, -EINVAL, "an unknown flag");
	LIB_IS(accmap_svm_session_create(dev, NULL), -EINVAL);

	/* The whole user range, malloc()ed memory in it. */
	id = svm_session(dev, target, 48, ap.start, ap.size);
	if (!id)
		goto out;
	o = svm_counters(dev, id);
	CHECK(!o.faults && !o.fatal_faults && !o.mapped_bytes && !o.huge_bytes && !o.pages_mapped,
	      "new session: faults %llu fatal %llu mapped %llu huge %llu pages %llu",
	      (unsigned long long)o.faults, (unsigned long long)o.fatal_faults,
	      (unsigned long long)o.mapped_bytes, (unsigned long long)o.huge_bytes,
	      (unsigned long long)o.pages_mapped);
	buf = aligned_alloc(ps, 16 * ps);
	if (!CHECK(buf, "aligned_alloc failed"))
		goto out;
	memset(buf, 0x3c, 16 * ps);
	memset(&o, 0xff, sizeof(o));
	if (LIB_IS(accmap_svm_prefetch(dev, id, buf, 16 * ps, ACCMAP_SVM_LOC_SYSTEM, &o), 0)) {
		CHECK(o.session == id && o.op == ACCMAP_SVM_OP_PREFETCH &&
		      o.start == (uintptr_t)buf && o.size == 16 * ps,
		      "PREFETCH gave back session %u op %u start %#llx size %#llx", o.session,
		      o.op, (unsigned long long)o.start, (unsigned long long)o.size);
		CHECK(o.mapped_bytes >= 16 * ps && o.pages_mapped >= 16 && !o.faults,
		      "after prefetching 16 malloc()ed pages: mapped %llu pages %llu faults %llu",
		      (unsigned long long)o.mapped_bytes, (unsigned long long)o.pages_mapped,
		      (unsigned long long)o.faults);
	}
	before = svm_counters(dev, id);
	tap_diag("session %u [%#llx, %#llx): 16 malloc pages at %p: mapped %llu, pages %llu", id,
		 (unsigned long long)ap.start, (unsigned long long)(ap.start + ap.size), buf,
		 (unsigned long long)before.mapped_bytes,
		 (unsigned long long)before.pages_mapped);
	svm_debugfs_row(id, ap.start, ap.size, before.mapped_bytes);

	/* Attributes: the range's entries go (they fault back later). */
	memset(&o, 0xff, sizeof(o));
	if (LIB_IS(accmap_svm_set_attr(dev, id, buf, 16 * ps, ACCMAP_SVM_ATTR_GPU_RO, 0,
				       ACCMAP_SVM_LOC_SYSTEM, &o), 0))
		CHECK(o.op == ACCMAP_SVM_OP_SET_ATTR && o.attrs == ACCMAP_SVM_ATTR_GPU_RO &&
		      o.mapped_bytes + 16 * ps <= before.mapped_bytes,
		      "SET_ATTR: op %u attrs %#x mapped %llu, was %llu", o.op, o.attrs,
		      (unsigned long long)o.mapped_bytes,
		      (unsigned long long)before.mapped_bytes);
	LIB_IS(accmap_svm_set_attr(dev, id, buf, 16 * ps, ACCMAP_SVM_ATTR_VALID,
				   ACCMAP_SVM_GRANULE_MIN, ACCMAP_SVM_LOC_SYSTEM, NULL), 0);
	LIB_IS(accmap_svm_set_attr(dev, id, buf, 16 * ps, 0, ACCMAP_SVM_GRANULE_MAX,
				   ACCMAP_SVM_LOC_SYSTEM, NULL), 0);
	LIB_IS(accmap_svm_prefetch(dev, id, buf, 16 * ps, ACCMAP_SVM_LOC_SYSTEM, NULL), 0);

	memset(&o, GARBAGE_BYTE, sizeof(o));
	LIB_IS(accmap_svm_set_attr(dev, id, buf, ps, ACCMAP_SVM_ATTR_VALID + 1, 0,
				   ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_set_attr(dev, id, buf, ps, 0, ACCMAP_SVM_GRANULE_MIN - 1,
				   ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_set_attr(dev, id, buf, ps, 0, ACCMAP_SVM_GRANULE_MAX + 1,
				   ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_set_attr(dev, id, buf, ps, 0, 0, ACCMAP_SVM_LOC_DEVICE + 1, &o),
	       -EINVAL);
	LIB_IS(accmap_svm_prefetch(dev, id, buf, ps, ACCMAP_SVM_LOC_DEVICE + 1, &o), -EINVAL);
	LIB_IS(accmap_svm_migrate(dev, id, buf, ps, ACCMAP_SVM_LOC_DEVICE + 1, &o), -EINVAL);
	/* Ranges: aligned, not empty, inside the mirror. */
	LIB_IS(accmap_svm_prefetch(dev, id, buf + 1, ps, ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_prefetch(dev, id, buf, 0, ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_prefetch(dev, id, buf, ps + 1, ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_set_attr(dev, id, NULL, ps, 0, 0, ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	LIB_IS(accmap_svm_prefetch(dev, id, (void *)(uintptr_t)(ap.start + ap.size - ps), 2 * ps,
				   ACCMAP_SVM_LOC_SYSTEM, &o), -EINVAL);
	CHECK(o.session == GARBAGE_U32, "a failed SVM call wrote its output");

	/* Holes and PROT_NONE are skipped by a prefetch, not errors. */
	none = mmap(NULL, 4 * ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (CHECK(none != MAP_FAILED, "mmap: %s", strerror(errno))) {
		before = svm_counters(dev, id);
		LIB_IS(accmap_svm_prefetch(dev, id, none, 4 * ps, ACCMAP_SVM_LOC_SYSTEM, &o), 0);
		munmap(none, 4 * ps);
		LIB_IS(accmap_svm_prefetch(dev, id, none, 4 * ps, ACCMAP_SVM_LOC_SYSTEM, &o), 0);
		CHECK(o.mapped_bytes == before.mapped_bytes && o.fatal_faults == 0,
		      "prefetching PROT_NONE and a hole: mapped %llu, was %llu; fatal %llu",
		      (unsigned long long)o.mapped_bytes,
		      (unsigned long long)before.mapped_bytes,
		      (unsigned long long)o.fatal_faults);
	}

	/* Only the creator, only with CAP_SYS_RAWIO. */
	svm_child_eperm(dev, id, buf, false);
	svm_child_eperm(dev, id, buf, true);

	/* Unknown sessions; a NULL output refused by the library. */
	LIB_IS(accmap_svm_query(dev, id + 1000, &o), -ENOENT);
	LIB_IS(accmap_svm_query(dev, 0, &o), -ENOENT);
	LIB_IS(accmap_svm_prefetch(dev, id + 1000, buf, ps, ACCMAP_SVM_LOC_SYSTEM, &o), -ENOENT);
	LIB_IS(accmap_svm_set_attr(dev, id + 1000, buf, ps, 0, 0, ACCMAP_SVM_LOC_SYSTEM, &o),
	       -ENOENT);
	LIB_IS(accmap_svm_query(dev, id, NULL), -EINVAL);
	LIB_IS(accmap_svm_query(-1, id, &o), -EBADF);

	/* Attribute ranges are bounded: every other page read-only splits. */
	base = align_up_u64(ap.start + 64 * MIB, 2 * MIB);
	for (i = 0, ret = 0; i <= ACCMAP_SVM_ATTR_RANGES_MAX && !ret; i++)
		ret = accmap_svm_set_attr(dev, id, (void *)(uintptr_t)(base + 2 * i * ps), ps,
					  ACCMAP_SVM_ATTR_GPU_RO, 0, ACCMAP_SVM_LOC_SYSTEM, NULL);
	CHECK(ret == -ENOSPC, "%d split attribute ranges: %d (%s), expected ENOSPC", i, ret,
	      err_name(ret));
	tap_diag("SET_ATTR on every other page: ENOSPC at call %d", i);

	LIB_IS(accmap_replay_destroy(dev, id), 0);
	LIB_IS(accmap_svm_query(dev, id, &o), -ENOENT);
	id = 0;
out:
	if (id)
		accmap_replay_destroy(dev, id);
	free(buf);
	accmap_svm_aperture_fini();
	LIB_IS(accmap_close(dev), 0);
}

static void test_svm_session_reserved(void)
{
	struct accmap_replay_map map;
	struct accmap_svm_aperture ap;
	struct accmap_replay_setup s;
	struct accmap_svm_op o, before;
	uint32_t target, id = 0, buf_id = 0;
	uint64_t ps = page_size();
	uint8_t *blk = NULL, *high;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (!LIB_IS(accmap_replay_find_target(dev, simdrv_target(), &target, NULL), 0) ||
	    !LIB_IS(accmap_svm_aperture_init(32), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		goto out;
	if (!CHECK(ap.reserved && ap.start >= 4 * MIB, "va_bits 32: reserved %u start %#llx",
		   ap.reserved, (unsigned long long)ap.start))
		goto out;
	buf_id = new_buffer(dev, ps, 0, 0);
	if (!buf_id)
		goto out;

	/* A handle mapping inside the SVM range is refused, outside it is fine. */
	memset(&map, 0, sizeof(map));
	map.gpu_va = ap.start + ap.size / 2;
	map.length = ps;
	map.id = buf_id;
	map.flags = ACCMAP_REPLAY_MAP_READ;
	svm_setup(&s, target, 32, ap.start, ap.size);
	s.maps = (uintptr_t)&map;
	s.nr_maps = 1;
	svm_session_fails(dev, &s, -EINVAL, "a map inside the SVM range");
	CHECK(s.failed_map == 0, "map inside the SVM range: failed_map %#x", s.failed_map);
	map.gpu_va = ap.start - 2 * MIB;
	svm_setup(&s, target, 32, ap.start, ap.size);
	s.maps = (uintptr_t)&map;
	s.nr_maps = 1;
	if (LIB_IS(accmap_svm_session_create(dev, &s), 0))
		LIB_IS(accmap_replay_destroy(dev, s.session), 0);

	/* A session without SVM has no mirror to work on. */
	memset(&s, 0, sizeof(s));
	s.maps = (uintptr_t)&map;
	s.nr_maps = 1;
	s.target = target;
	s.format = ACCMAP_PGT_MALI_AARCH64_4K;
	s.va_bits = 32;
	if (LIB_IS(accmap_replay_setup(dev, &s), 0)) {
		LIB_IS(accmap_svm_query(dev, s.session, &o), -EOPNOTSUPP);
		LIB_IS(accmap_svm_prefetch(dev, s.session, (void *)(uintptr_t)ap.start, ps,
					   ACCMAP_SVM_LOC_SYSTEM, &o), -EOPNOTSUPP);
		LIB_IS(accmap_replay_destroy(dev, s.session), 0);
	}

	/* The whole reservation mirrored by a 32-bit GPU. */
	id = svm_session(dev, target, 32, ap.start, ap.size);
	if (!id)
		goto out;
	blk = svm_alloc_ok(4 * ps, &ap);
	if (!blk)
		goto out;
	memset(blk, 0x11, 4 * ps);
	/* All of it: only the block is mapped, the PROT_NONE rest skipped. */
	if (LIB_IS(accmap_svm_prefetch(dev, id, (void *)(uintptr_t)ap.start, ap.size,
				       ACCMAP_SVM_LOC_SYSTEM, &o), 0))
		CHECK(o.mapped_bytes == 4 * ps && o.pages_mapped == 4 && !o.fatal_faults,
		      "prefetch of the reservation: mapped %llu pages %llu fatal %llu",
		      (unsigned long long)o.mapped_bytes, (unsigned long long)o.pages_mapped,
		      (unsigned long long)o.fatal_faults);
	svm_debugfs_row(id, ap.start, ap.size, 4 * ps);

	/* Freeing the block invalidates its GPU entries. */
	before = svm_counters(dev, id);
	LIB_IS(accmap_svm_free(blk), 0);
	blk = NULL;
	o = svm_counters(dev, id);
	tap_diag("va_bits 32 session %u: block freed: mapped %llu, invalidations %llu -> %llu", id,
		 (unsigned long long)o.mapped_bytes, (unsigned long long)before.invalidations,
		 (unsigned long long)o.invalidations);
	CHECK(o.mapped_bytes == 0 && o.invalidations > before.invalidations,
	      "after accmap_svm_free: mapped %llu, invalidations %llu (were %llu)",
	      (unsigned long long)o.mapped_bytes, (unsigned long long)o.invalidations,
	      (unsigned long long)before.invalidations);

	/* Memory above 4 GiB is outside the mirror. */
	high = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (CHECK(high != MAP_FAILED, "mmap: %s", strerror(errno))) {
		if (CHECK((uintptr_t)high >= 4 * GIB, "mmap gave %p, below 4 GiB", high)) {
			LIB_IS(accmap_svm_aperture_check(high, 4 * ps), -ERANGE);
			LIB_IS(accmap_svm_prefetch(dev, id, high, 4 * ps, ACCMAP_SVM_LOC_SYSTEM,
						   &o), -EINVAL);
		}
		munmap(high, 4 * ps);
	}
	LIB_IS(accmap_replay_destroy(dev, id), 0);
	id = 0;
out:
	if (id)
		accmap_replay_destroy(dev, id);
	if (blk)
		accmap_svm_free(blk);
	if (buf_id)
		accmap_free(dev, buf_id);
	accmap_svm_aperture_fini();
	LIB_IS(accmap_close(dev), 0);
}

/* AnonHugePages of the mapping that holds @addr, in bytes; -1 if not found. */
static long long anon_huge_bytes(uint64_t addr)
{
	unsigned long long lo, hi, kb;
	long long bytes = -1;
	bool inside = false;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!CHECK(f, "/proc/self/smaps: %s", strerror(errno)))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line: "lo-hi perms ..."; field lines have no '-' first. */
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			inside = addr >= lo && addr < hi;
		else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			bytes = (long long)kb * 1024;
	}
	fclose(f);
	return bytes;
}

/*
 * Blocks of 2 MiB and more are 2 MiB-aligned so that the CPU can back them
 * with transparent huge pages, and the GPU then map them as 2 MiB blocks.
 * A test only where the kernel has transparent huge pages (main()).
 */
static void test_svm_session_huge(void)
{
	struct accmap_svm_aperture ap;
	uint32_t target, id = 0;
	struct accmap_svm_op o;
	uint8_t *blk = NULL;
	long long cpu_huge;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (!LIB_IS(accmap_replay_find_target(dev, simdrv_target(), &target, NULL), 0) ||
	    !LIB_IS(accmap_svm_aperture_init(32), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		goto out;
	blk = svm_alloc_ok(4 * MIB, &ap);
	if (!blk || !CHECK((uintptr_t)blk % (2 * MIB) == 0, "4 MiB block at %p", blk))
		goto out;
	if (!CHECK_OK(madvise(blk, 4 * MIB, MADV_HUGEPAGE)))
		goto out;
	memset(blk, 0x77, 4 * MIB);
	cpu_huge = anon_huge_bytes((uintptr_t)blk);
	id = svm_session(dev, target, 32, ap.start, ap.size);
	if (!id)
		goto out;
	if (!LIB_IS(accmap_svm_prefetch(dev, id, blk, 4 * MIB, ACCMAP_SVM_LOC_SYSTEM, &o), 0))
		goto out;
	tap_diag("4 MiB block at %p: CPU AnonHugePages %lld, GPU mapped %llu, huge %llu", blk,
		 cpu_huge, (unsigned long long)o.mapped_bytes, (unsigned long long)o.huge_bytes);
	CHECK(o.mapped_bytes == 4 * MIB, "prefetch of a 4 MiB block mapped %llu bytes",
	      (unsigned long long)o.mapped_bytes);
	/* The GPU has 2 MiB blocks exactly where the CPU has huge pages. */
	CHECK(cpu_huge >= 0 && o.huge_bytes == (unsigned long long)cpu_huge,
	      "CPU huge bytes %lld, GPU huge bytes %llu", cpu_huge,
	      (unsigned long long)o.huge_bytes);
	if (page_size() == 4096)
		CHECK(cpu_huge == (long long)(4 * MIB),
		      "4 KiB pages, MADV_HUGEPAGE: only %lld bytes of the aligned block are huge",
		      cpu_huge);
out:
	if (id)
		accmap_replay_destroy(dev, id);
	if (blk)
		LIB_IS(accmap_svm_free(blk), 0);
	accmap_svm_aperture_fini();
	LIB_IS(accmap_close(dev), 0);
}

/* A node of the list the GPU sums: a plain C struct, CPU pointers. */
struct svm_node {
	int32_t value;
	struct svm_node *next;
};

#define SVM_NODES	1000

/* Runs the job at @desc on slot 0 of the session's address space 0. */
static int svm_job(int dev, uint32_t session, const struct simdrv_gpu *gpu, const uint8_t *desc,
		   struct accmap_replay_run *run)
{
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct simdrv_submit sub = {
		.format = ACCMAP_PGT_MALI_AARCH64_4K, .as = 0, .slot = 0,
		.head = (uintptr_t)desc, .timeout_us = 10000000,
	};

	return accmap_replay_run(dev, session, ops, simdrv_build_ops(gpu, &sub, ops), run);
}

/*
 * A 32-bit GPU follows a list whose every node, the job descriptor and the
 * result come from accmap_svm_alloc(); a node in a gap of the reservation
 * is an MMU fault at its address.
 */
static void test_svm_session_job(void)
{
	struct svm_node *nodes[SVM_NODES] = { NULL }, *gap = NULL;
	struct accmap_replay_target_info info;
	struct accmap_svm_aperture ap;
	struct accmap_replay_run run;
	struct accmap_sim_job job;
	uint32_t target, id = 0;
	struct accmap_svm_op o;
	struct simdrv_gpu gpu;
	int32_t *result = NULL, sum = 0;
	uint8_t *desc = NULL;
	int dev = -1, ret;
	uint64_t fa;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (!LIB_IS(accmap_replay_find_target(dev, simdrv_target(), &target, &info), 0) ||
	    !LIB_IS(accmap_svm_aperture_init(32), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		goto out;
	id = svm_session(dev, target, 32, ap.start, ap.size);
	if (!id || !LIB_IS(simdrv_probe(dev, id, info.gpu_id, &gpu), 0))
		goto out;

	/* Every node its own allocation, linked back to front. */
	for (int i = 0; i < SVM_NODES; i++) {
		if (!LIB_IS(accmap_svm_alloc(sizeof(*nodes[i]), (void **)&nodes[i]), 0))
			goto out;
		nodes[i]->value = i * 37 % 1001 - 500;
		nodes[i]->next = i ? nodes[i - 1] : NULL;
		sum += nodes[i]->value;
	}
	if (!LIB_IS(accmap_svm_alloc(page_size(), (void **)&desc), 0) ||
	    !LIB_IS(accmap_svm_alloc(page_size(), (void **)&result), 0))
		goto out;
	memset(&job, 0, sizeof(job));
	job.op = ACCMAP_SIM_OP_LIST_SUM_I32;
	job.n = SVM_NODES;
	job.m = offsetof(struct svm_node, next);
	job.k = offsetof(struct svm_node, value);
	job.a = (uintptr_t)nodes[SVM_NODES - 1];
	job.c = (uintptr_t)result;
	simdrv_encode_job(desc, &job, 0);
	ret = svm_job(dev, id, &gpu, desc, &run);
	if (!CHECK(ret == 0, "list sum in the aperture: %s, reason %u, fault at %#llx status %#x",
		   err_name(ret), run.reason, (unsigned long long)run.fault_addr,
		   run.fault_status))
		goto out;
	CHECK(result[0] == sum && result[1] == SVM_NODES,
	      "the GPU summed %d over %d nodes, the CPU %d over %d", result[0], result[1], sum,
	      SVM_NODES);
	o = svm_counters(dev, id);
	tap_diag("va_bits 32: %d aperture nodes, GPU sum %d; %llu GPU faults, %llu bytes mapped",
		 SVM_NODES, result[0], (unsigned long long)o.faults,
		 (unsigned long long)o.mapped_bytes);
	CHECK(o.faults > 0 && o.fatal_faults == 0, "after the job: faults %llu fatal %llu",
	      (unsigned long long)o.faults, (unsigned long long)o.fatal_faults);

	/* The first node now points into a freed block: PROT_NONE, GPU too. */
	if (!LIB_IS(accmap_svm_alloc(page_size(), (void **)&gap), 0))
		goto out;
	LIB_IS(accmap_svm_free(gap), 0);
	nodes[0]->next = gap;
	/* Room for one node more: else the model stops at the limit, unread. */
	job.n = SVM_NODES + 1;
	simdrv_encode_job(desc, &job, 0);
	memset(result, 0, 8);
	ret = svm_job(dev, id, &gpu, desc, &run);
	fa = run.fault_addr;
	CHECK(ret == -EIO && run.reason == ACCMAP_REPLAY_MMU_FAULT,
	      "a node in a gap: run %s, reason %u; expected EIO, MMU_FAULT", err_name(ret),
	      run.reason);
	CHECK(fa >= (uintptr_t)gap && fa < (uintptr_t)gap + sizeof(*gap) &&
	      (run.fault_status >> 8 & 3) == 2,
	      "a node in a gap at %p: fault at %#llx, status %#x (expected a read there)", gap,
	      (unsigned long long)fa, run.fault_status);
	o = svm_counters(dev, id);
	tap_diag("a node in a gap at %p: MMU fault at %#llx, status %#x; fatal faults %llu", gap,
		 (unsigned long long)fa, run.fault_status, (unsigned long long)o.fatal_faults);
	CHECK(o.fatal_faults == 1, "fatal faults %llu after a read of a gap",
	      (unsigned long long)o.fatal_faults);
out:
	/* The slot may be stalled on the fault: the session goes first. */
	if (id)
		LIB_IS(accmap_replay_destroy(dev, id), 0);
	for (int i = 0; i < SVM_NODES; i++)
		if (nodes[i])
			accmap_svm_free(nodes[i]);
	if (desc)
		accmap_svm_free(desc);
	if (result)
		accmap_svm_free(result);
	LIB_IS(accmap_svm_aperture_fini(), 0);
	LIB_IS(accmap_close(dev), 0);
}

/* The first byte of @p that is not pattern byte i * 13 + @seed, or @len. */
static size_t devmem_mismatch(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len && p[i] == (uint8_t)(i * 13 + seed); i++)
		;
	return i;
}

#define DEVMEM_PAGES	16

/*
 * accmap_svm_migrate() of an unaligned buffer moves whole pages both ways;
 * SET_ATTR and PREFETCH take ACCMAP_SVM_LOC_DEVICE; the counters the calls
 * return follow.  Without device memory every DEVICE call is -EOPNOTSUPP
 * and SYSTEM still works.  The model has the device memory QUERY_HEAP
 * reports; a board's GPU has its own where the kernel has any
 * (ACCMAP_DEVMEM not none: run.sh's boards name some in the GPU's node),
 * which QUERY_HEAP does not report.
 */
static void test_svm_devmem(void)
{
	const uint64_t ps = page_size(), span = DEVMEM_PAGES * ps;
	struct accmap_svm_op o, before, after;
	struct accmap_heap_info dm0, dm1 = { 0 };
	struct accmap_svm_aperture ap;
	const char *kind = getenv("ACCMAP_DEVMEM");
	uint32_t target, id = 0;
	uint8_t *buf = NULL, *pages;
	int dev = -1, ret, have;
	size_t bad, total = (DEVMEM_PAGES + 2) * ps;
	bool window;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	if (!LIB_IS(accmap_replay_find_target(dev, simdrv_target(), &target, NULL), 0) ||
	    !LIB_IS(accmap_svm_aperture_init(48), 0) || !LIB_IS(accmap_svm_aperture_info(&ap), 0))
		goto out;
	ret = accmap_device_memory(dev, &dm0);
	if (!CHECK(ret == 0 || ret == -ENODEV, "accmap_device_memory: %d (%s)", ret,
		   err_name(ret)))
		goto out;
	window = strcmp(simdrv_target(), SIMDRV_TARGET) != 0;
	have = window ? kind && strcmp(kind, "none") : ret == 0;
	id = svm_session(dev, target, 48, ap.start, ap.size);
	buf = aligned_alloc(ps, total);
	if (!id || !CHECK(buf, "aligned_alloc failed"))
		goto out;
	for (size_t i = 0; i < total; i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	/* Pages 1 to DEVMEM_PAGES of buf: a buffer inside them, by a few bytes. */
	pages = buf + ps;

	before = svm_counters(dev, id);
	memset(&o, GARBAGE_BYTE, sizeof(o));
	ret = accmap_svm_migrate(dev, id, pages + 100, span - 200, ACCMAP_SVM_LOC_DEVICE, &o);
	if (!have) {
		CHECK(ret == -EOPNOTSUPP && o.session == GARBAGE_U32,
		      "no device memory: migrate to DEVICE returned %d (%s), session %#x", ret,
		      err_name(ret), o.session);
		LIB_IS(accmap_svm_prefetch(dev, id, pages, span, ACCMAP_SVM_LOC_DEVICE, NULL),
		       -EOPNOTSUPP);
		LIB_IS(accmap_svm_set_attr(dev, id, pages, span, 0, 0, ACCMAP_SVM_LOC_DEVICE, NULL),
		       -EOPNOTSUPP);
		if (LIB_IS(accmap_svm_migrate(dev, id, pages + 100, span - 200,
					      ACCMAP_SVM_LOC_SYSTEM, &o), 0))
			CHECK(o.start == (uintptr_t)pages && o.size == span && !o.device_bytes &&
			      !o.to_device && !o.to_system,
			      "to SYSTEM: %#llx+%#llx (not %p+%#llx), device %llu, moved %llu/%llu",
			      (unsigned long long)o.start, (unsigned long long)o.size,
			      (void *)pages, (unsigned long long)span,
			      (unsigned long long)o.device_bytes, (unsigned long long)o.to_device,
			      (unsigned long long)o.to_system);
		tap_diag("no device memory: DEVICE calls EOPNOTSUPP, SYSTEM works");
		goto out;
	}

	/* To the device: the pages the buffer touches, no more. */
	if (!LIB_IS(ret, 0))
		goto out;
	CHECK(o.op == ACCMAP_SVM_OP_PREFETCH && o.location == ACCMAP_SVM_LOC_DEVICE &&
	      o.start == (uintptr_t)pages && o.size == span,
	      "migrate: op %u location %u start %#llx size %#llx, expected %p, %#llx", o.op,
	      o.location, (unsigned long long)o.start, (unsigned long long)o.size,
	      (void *)pages, (unsigned long long)span);
	CHECK(o.to_device - before.to_device == DEVMEM_PAGES &&
	      o.device_bytes - before.device_bytes == span && o.not_migrated == before.not_migrated,
	      "migrate %d pages to DEVICE: to_device +%llu, device_bytes +%llu, not_migrated +%llu",
	      DEVMEM_PAGES, (unsigned long long)(o.to_device - before.to_device),
	      (unsigned long long)(o.device_bytes - before.device_bytes),
	      (unsigned long long)(o.not_migrated - before.not_migrated));
	if (!window && LIB_IS(accmap_device_memory(dev, &dm1), 0))
		CHECK(dm1.used >= dm0.used + span && dm1.used + dm1.free == dm1.total,
		      "device memory used %llu, was %llu, after %llu bytes moved there",
		      (unsigned long long)dm1.used, (unsigned long long)dm0.used,
		      (unsigned long long)span);
	tap_diag("%d pages to the device: to_device %llu, device_bytes %llu, heap used %llu",
		 DEVMEM_PAGES, (unsigned long long)o.to_device,
		 (unsigned long long)o.device_bytes, (unsigned long long)dm1.used);

	/* And back, every byte where it was (the neighbours too). */
	before = o;
	if (LIB_IS(accmap_svm_migrate(dev, id, pages + 100, span - 200, ACCMAP_SVM_LOC_SYSTEM,
				      &o), 0))
		CHECK(o.to_system - before.to_system == DEVMEM_PAGES &&
		      before.device_bytes - o.device_bytes == span &&
		      o.cpu_faults == before.cpu_faults,
		      "migrate back: to_system +%llu, device_bytes %llu (was %llu), cpu_faults +%llu",
		      (unsigned long long)(o.to_system - before.to_system),
		      (unsigned long long)o.device_bytes, (unsigned long long)before.device_bytes,
		      (unsigned long long)(o.cpu_faults - before.cpu_faults));
	bad = devmem_mismatch(buf, total, 1);
	CHECK(bad == total, "after DEVICE and back: byte %zu reads %#x", bad,
	      bad < total ? buf[bad] : 0);

	/* Preferred location and plain PREFETCH take DEVICE too. */
	memset(&o, GARBAGE_BYTE, sizeof(o));
	if (LIB_IS(accmap_svm_set_attr(dev, id, pages, span, 0, ACCMAP_SVM_GRANULE_MIN,
				       ACCMAP_SVM_LOC_DEVICE, &o), 0))
		CHECK(o.location == ACCMAP_SVM_LOC_DEVICE && o.granule == ACCMAP_SVM_GRANULE_MIN,
		      "SET_ATTR DEVICE gave back location %u granule %u", o.location, o.granule);
	before = svm_counters(dev, id);
	if (!LIB_IS(accmap_svm_prefetch(dev, id, pages, span, ACCMAP_SVM_LOC_DEVICE, &o), 0))
		goto out;
	CHECK(o.to_device - before.to_device == DEVMEM_PAGES && o.device_bytes >= span,
	      "PREFETCH DEVICE: to_device +%llu, device_bytes %llu",
	      (unsigned long long)(o.to_device - before.to_device),
	      (unsigned long long)o.device_bytes);
	/* The CPU reads them where they are; private memory faults each back. */
	before = o;
	bad = devmem_mismatch(buf, total, 1);
	CHECK(bad == total, "reading pages on the device: byte %zu reads %#x", bad,
	      bad < total ? buf[bad] : 0);
	after = svm_counters(dev, id);
	tap_diag("CPU read of %d device pages (%s): cpu_faults +%llu, to_system +%llu, device %llu",
		 DEVMEM_PAGES, kind ? kind : "kind unknown",
		 (unsigned long long)(after.cpu_faults - before.cpu_faults),
		 (unsigned long long)(after.to_system - before.to_system),
		 (unsigned long long)after.device_bytes);
	if (kind && !strcmp(kind, "private"))
		CHECK(after.cpu_faults - before.cpu_faults == DEVMEM_PAGES &&
		      after.to_system - before.to_system == DEVMEM_PAGES &&
		      before.device_bytes - after.device_bytes == span,
		      "private: CPU read of %d device pages: cpu_faults +%llu, to_system +%llu",
		      DEVMEM_PAGES, (unsigned long long)(after.cpu_faults - before.cpu_faults),
		      (unsigned long long)(after.to_system - before.to_system));
	else if (kind && !strcmp(kind, "coherent"))
		CHECK(after.cpu_faults == before.cpu_faults &&
		      after.device_bytes == before.device_bytes,
		      "coherent: CPU read faulted %llu pages back, device_bytes %llu (was %llu)",
		      (unsigned long long)(after.cpu_faults - before.cpu_faults),
		      (unsigned long long)after.device_bytes,
		      (unsigned long long)before.device_bytes);
	LIB_IS(accmap_svm_migrate(dev, id, pages, span, ACCMAP_SVM_LOC_SYSTEM, &o), 0);
	CHECK(o.device_bytes == 0, "after PREFETCH SYSTEM: device_bytes %llu",
	      (unsigned long long)o.device_bytes);
out:
	if (id)
		LIB_IS(accmap_replay_destroy(dev, id), 0);
	free(buf);
	accmap_svm_aperture_fini();
	LIB_IS(accmap_close(dev), 0);
}

/* ==== what the library decides without the kernel ==== */

/*
 * Filters this thread's system calls from now on: ioctl(2) on @fd_a or
 * @fd_b, and every openat(2), get @action; the rest is allowed.  Returns
 * what seccomp(2) returns (a listener fd for SECCOMP_RET_USER_NOTIF), or
 * -1 after failing the test.
 */
static int filter_calls(int fd_a, int fd_b, uint32_t action)
{
	/* args[0] at its offset is the low half: both targets are little-endian. */
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, LIB_AUDIT_ARCH, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)fd_a, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)fd_b, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = TAP_ARRAY_SIZE(insns), .filter = insns };
	unsigned long flags = 0;
	long ret;

	if (!CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "PR_SET_NO_NEW_PRIVS: %s",
		   strerror(errno)))
		return -1;
	if ((action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF)
		flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	/* No TSYNC: threads that exist already stay unfiltered. */
	ret = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (!CHECK(ret >= 0, "seccomp: %s", strerror(errno)))
		return -1;
	return (int)ret;
}

static void test_map_id(void)
{
	uint64_t off = GARBAGE_U64, off2 = 0;
	uint8_t *p = NULL, out[16];
	uint32_t id, empty;
	int dev = -1;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	id = new_buffer(dev, pages(2), 0, 0);
	if (!id || !LIB_IS(accmap_map_offset(dev, id, &off), 0))
		goto out;
	CHECK(off != GARBAGE_U64 && off % pages(1) == 0, "offset %#llx",
	      (unsigned long long)off);
	LIB_IS(accmap_map_offset(dev, id, &off2), 0);
	CHECK(off2 == off, "a second accmap_map_offset() gives %#llx, not %#llx",
	      (unsigned long long)off2, (unsigned long long)off);
	if (LIB_IS(accmap_map_id(dev, id, pages(2), PROT_READ | PROT_WRITE, (void **)&p), 0)) {
		memcpy(p + pages(1), "through the dev", 16);
		if (LIB_IS(accmap_read(dev, id, pages(1), out, 16), 0))
			CHECK(!memcmp(out, "through the dev", 16), "READ misses the write");
		LIB_IS(accmap_unmap(p, pages(2)), 0);
	}
	p = (uint8_t *)1;
	LIB_IS(accmap_map_id(dev, id, pages(3), PROT_READ, (void **)&p), -EINVAL);
	LIB_IS(accmap_map_id(dev, id + 1000, pages(1), PROT_READ, (void **)&p), -ENOENT);
	LIB_IS(accmap_map_id(dev, id, pages(1), PROT_READ, NULL), -EINVAL);
	CHECK(p == (uint8_t *)1, "failed accmap_map_id wrote the address");
	LIB_IS(accmap_map_offset(dev, id, NULL), -EINVAL);
	LIB_IS(accmap_map_offset(dev, id + 1000, &off2), -ENOENT);
	if (LIB_IS(accmap_create(dev, pages(1), &empty), 0))
		LIB_IS(accmap_map_offset(dev, empty, &off2), -EINVAL);
out:
	accmap_close(dev);
}

static void test_checks_without_syscall(void)
{
	char too_long[ACCMAP_LABEL_LEN + 8];
	struct accmap_cache_op op = { 0 };
	uint32_t id = GARBAGE_U32;
	int dev = -1, fd = -2;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	memset(too_long, 'x', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	if (filter_calls(dev, dev, SECCOMP_RET_ERRNO | FILTER_ERRNO) < 0)
		return;

	/* The filter works: whatever reaches the kernel fails with it. */
	LIB_IS(accmap_create(dev, 4096, &id), -FILTER_ERRNO);
	LIB_IS(accmap_open(&fd), -FILTER_ERRNO);
	too_long[ACCMAP_LABEL_LEN - 1] = '\0';		/* 31 characters: passed on */
	LIB_IS(accmap_set_tag_label(dev, TAG_A, too_long), -FILTER_ERRNO);

	too_long[ACCMAP_LABEL_LEN - 1] = 'x';		/* 32 characters */
	LIB_IS(accmap_set_tag_label(dev, TAG_A, too_long), -ENAMETOOLONG);
	too_long[ACCMAP_LABEL_LEN - 1] = '\0';
	memset(too_long, 'x', sizeof(too_long) - 1);	/* 39 characters */
	LIB_IS(accmap_set_tag_label(dev, TAG_A, too_long), -ENAMETOOLONG);
	LIB_IS(accmap_set_tag_label(dev, TAG_A, NULL), -EINVAL);
	LIB_IS(accmap_open(NULL), -EINVAL);
	LIB_IS(accmap_open_path(NULL, &fd), -EINVAL);
	LIB_IS(accmap_open_path(ACCMAP_DEVICE_PATH, NULL), -EINVAL);
	LIB_IS(accmap_create(dev, 4096, NULL), -EINVAL);
	LIB_IS(accmap_alloc_buffer(dev, 4096, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, NULL), -EINVAL);
	LIB_IS(accmap_get_fd(dev, 1, O_RDWR, NULL), -EINVAL);
	LIB_IS(accmap_from_fd(dev, 0, NULL), -EINVAL);
	LIB_IS(accmap_info(dev, 1, NULL), -EINVAL);
	LIB_IS(accmap_write_strided(dev, NULL), -EINVAL);
	LIB_IS(accmap_read_strided(dev, NULL), -EINVAL);
	LIB_IS(accmap_query_heap(dev, 0, NULL), -EINVAL);
	LIB_IS(accmap_query_pool(dev, NULL), -EINVAL);
	LIB_IS(accmap_from_va(dev, &op, 4096, 0, 0, NULL), -EINVAL);
	LIB_IS(accmap_cache_list(dev, NULL, 1, NULL), -EINVAL);
	LIB_IS(accmap_device_memory(dev, NULL), -EINVAL);
	LIB_IS(accmap_svm_migrate(dev, 1, &op, 0, ACCMAP_SVM_LOC_DEVICE, NULL), -EINVAL);
	LIB_IS(accmap_svm_migrate(dev, 1, (void *)(uintptr_t)-4096, 8192, ACCMAP_SVM_LOC_DEVICE,
				  NULL), -EINVAL);
	/* mmap(2) of fd -1 would have said EBADF. */
	LIB_IS(accmap_map(-1, 4096, PROT_READ, NULL), -EINVAL);
	CHECK(id == GARBAGE_U32 && fd == -2, "refused calls wrote outputs");

	/* Calls without a library check reach the kernel (and the filter). */
	LIB_IS(accmap_cache_list(dev, &op, 1, NULL), -FILTER_ERRNO);
	LIB_IS(accmap_cache(dev, 1, ACCMAP_CACHE_WRITEBACK, 0, 1), -FILTER_ERRNO);
	LIB_IS(accmap_write(dev, 1, 0, &op, 0), -FILTER_ERRNO);
	LIB_IS(accmap_free(dev, 1), -FILTER_ERRNO);
	LIB_IS(accmap_svm_migrate(dev, 1, &op, 1, ACCMAP_SVM_LOC_DEVICE, NULL), -FILTER_ERRNO);
}

/* ==== restarting interrupted calls ==== */

#define SCRIPT_MAX	16

/*
 * The supervisor answers the filtered calls of the test thread, in order,
 * with script[]: a negative errno, or 0 to let the real call run.  Calls
 * beyond the script run.  Counts every call it sees.
 */
static struct {
	int listener;
	int pipe[2];
	int script[SCRIPT_MAX];
	int nscript;
	int seen;		/* calls seen, under __atomic */
	int nr[SCRIPT_MAX];	/* system call numbers of the first ones */
} sup;

static void *supervisor(void *unused)
{
	struct seccomp_notif_resp resp;
	struct seccomp_notif req;
	int n;

	(void)unused;
	if (read(sup.pipe[0], &sup.listener, sizeof(sup.listener)) != sizeof(sup.listener))
		return NULL;
	for (;;) {
		memset(&req, 0, sizeof(req));
		if (ioctl(sup.listener, SECCOMP_IOCTL_NOTIF_RECV, &req))
			return NULL;
		n = __atomic_load_n(&sup.seen, __ATOMIC_SEQ_CST);
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		if (n < sup.nscript && sup.script[n])
			resp.error = sup.script[n];
		else
			resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (n < SCRIPT_MAX)
			sup.nr[n] = req.data.nr;
		__atomic_store_n(&sup.seen, n + 1, __ATOMIC_SEQ_CST);
		if (ioctl(sup.listener, SECCOMP_IOCTL_NOTIF_SEND, &resp))
			return NULL;
	}
}

/* The next calls of the test thread get these answers; 0 runs the call. */
static void script(int n, ...)
{
	va_list ap;

	va_start(ap, n);
	sup.nscript = 0;
	for (int i = 0; i < n && i < SCRIPT_MAX; i++)
		sup.script[sup.nscript++] = va_arg(ap, int);
	va_end(ap);
	/* Published by the store; the supervisor reads after its load. */
	__atomic_store_n(&sup.seen, 0, __ATOMIC_SEQ_CST);
}

static bool seen_calls(int want, long nr, const char *what)
{
	int n = __atomic_load_n(&sup.seen, __ATOMIC_SEQ_CST);
	bool ok = CHECK(n == want, "%s: the library made %d call(s), expected %d", what, n, want);

	for (int i = 0; i < n && i < SCRIPT_MAX; i++)
		ok &= CHECK(sup.nr[i] == nr, "%s: call %d was system call %d, expected %ld", what,
			    i, sup.nr[i], nr);
	return ok;
}

static void test_restart(void)
{
	uint32_t id = GARBAGE_U32, buf_id = 0;
	struct accmap_info info;
	int dev = -1, buf = -1, fd = -1;
	pthread_t thread;

	if (!LIB_IS(accmap_open(&dev), 0))
		return;
	buf_id = new_buffer(dev, pages(1), 0, 0);
	if (!buf_id || !LIB_IS(accmap_get_fd(dev, buf_id, O_RDWR | O_CLOEXEC, &buf), 0))
		return;
	if (!CHECK(pipe(sup.pipe) == 0, "pipe: %s", strerror(errno)) ||
	    !CHECK(pthread_create(&thread, NULL, supervisor, NULL) == 0, "pthread_create"))
		return;
	pthread_detach(thread);
	/* After the supervisor exists, so that only this thread is filtered. */
	sup.listener = filter_calls(dev, buf, SECCOMP_RET_USER_NOTIF);
	if (sup.listener < 0)
		return;
	if (!CHECK(write(sup.pipe[1], &sup.listener, sizeof(sup.listener)) ==
		   sizeof(sup.listener), "pipe write: %s", strerror(errno)))
		return;

	/* An accmap ioctl: EINTR twice, then the real call. */
	script(3, -EINTR, -EINTR, 0);
	LIB_IS(accmap_create(dev, pages(2), &id), 0);
	seen_calls(3, __NR_ioctl, "accmap_create after EINTR, EINTR");
	if (CHECK(id != 0 && id != GARBAGE_U32, "accmap_create gave id %#x", id) &&
	    LIB_IS(accmap_info(dev, id, &info), 0))
		CHECK(info.size == pages(2), "the restarted CREATE made %llu bytes",
		      (unsigned long long)info.size);

	/* Other errors are not restarted; EAGAIN is not for accmap ioctls. */
	script(1, -EAGAIN);
	LIB_IS(accmap_free(dev, id), -EAGAIN);
	seen_calls(1, __NR_ioctl, "accmap_free after EAGAIN");
	script(1, -EIO);
	LIB_IS(accmap_free(dev, id), -EIO);
	seen_calls(1, __NR_ioctl, "accmap_free after EIO");
	script(2, -EINTR, 0);
	LIB_IS(accmap_free(dev, id), 0);
	seen_calls(2, __NR_ioctl, "accmap_free after EINTR");

	/* DMA_BUF_IOCTL_SYNC: restarted on EINTR and on EAGAIN. */
	script(4, -EAGAIN, -EINTR, -EAGAIN, 0);
	LIB_IS(accmap_sync(buf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW), 0);
	seen_calls(4, __NR_ioctl, "accmap_sync after EAGAIN, EINTR, EAGAIN");
	script(1, -EIO);
	LIB_IS(accmap_sync(buf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW), -EIO);
	seen_calls(1, __NR_ioctl, "accmap_sync after EIO");

	/* open(2) of the device: restarted on EINTR. */
	script(2, -EINTR, 0);
	if (LIB_IS(accmap_open(&fd), 0))
		close(fd);
	seen_calls(2, __NR_openat, "accmap_open after EINTR");
	script(1, -EACCES);
	LIB_IS(accmap_open(&fd), -EACCES);
	seen_calls(1, __NR_openat, "accmap_open after EACCES");
}

/*
 * The SVM aperture tests place pages below 4 GiB and expect the rest of
 * that range free, but arm64 starts the brk heap anywhere up to 1 GiB past
 * the program, from where it can grow into that range.  So the program
 * runs without address randomization: re-executed once with
 * ADDR_NO_RANDOMIZE, the heap follows the program.  If that cannot be
 * done it goes on as it is, and says so.
 */
static void no_randomization(char **argv)
{
	int pers = personality(0xffffffff);

	if (pers == -1 || (pers & ADDR_NO_RANDOMIZE))
		return;
	if (personality((unsigned long)pers | ADDR_NO_RANDOMIZE) != -1)
		execv("/proc/self/exe", argv);
	printf("# running with address randomization: %s\n", strerror(errno));
}

int main(int argc, char **argv)
{
	static const struct tap_test tests[] = {
		{ "lib_open_close", test_open_close },
		{ "lib_create_alloc_free", test_create_alloc_free },
		{ "lib_alloc_buffer", test_alloc_buffer },
		{ "lib_info", test_info },
		{ "lib_get_fd_from_fd", test_get_fd_from_fd },
		{ "lib_write_read", test_write_read },
		{ "lib_strided", test_strided },
		{ "lib_tag_label", test_tag_label },
		{ "lib_query_heap", test_query_heap },
		{ "lib_device_memory", test_device_memory },
		{ "lib_query_pool", test_query_pool },
		{ "lib_map_sync", test_map_sync },
		{ "lib_map_id", test_map_id },
		{ "lib_from_va", test_from_va },
		{ "lib_cache", test_cache },
		{ "lib_cache_list", test_cache_list },
		{ "lib_svm_aperture_reserved", test_svm_aperture_reserved },
		{ "lib_svm_aperture_whole", test_svm_aperture_whole },
		{ "lib_svm_aperture_crowded", test_svm_aperture_crowded },
		{ "lib_svm_aperture_fork", test_svm_aperture_fork },
		{ "lib_svm_aperture_threads", test_svm_aperture_threads },
		{ "lib_svm_session_whole", test_svm_session_whole },
		{ "lib_svm_session_reserved", test_svm_session_reserved },
		{ "lib_svm_session_huge", test_svm_session_huge },
		{ "lib_svm_session_job", test_svm_session_job },
		{ "lib_svm_devmem", test_svm_devmem },
		{ "lib_checks_without_syscall", test_checks_without_syscall },
		{ "lib_restart", test_restart },
	};
	static const char *const thp_tests[] = { "lib_svm_session_huge", NULL };

	(void)argc;
	no_randomization(argv);
	return tap_run_except(tests, TAP_ARRAY_SIZE(tests), thp_tests, am_lacks_thp());
}

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap buffers through the ioctls added after the first five: FROM_FD
 * (import of an accmap dma-buf, in the same client, another client and
 * another process), WRITE and READ (strided copies, errno by errno), the
 * zeroing of reused memory, stale ids, and the extensible-ABI rules for
 * FROM_FD, WRITE, READ, SET_TAG_LABEL, QUERY_HEAP and QUERY_POOL (the
 * first five ioctls are covered by accmap_ioctl).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

static const uint32_t both_kinds[] = { 0, ACCMAP_ALLOC_WRITECOMBINE };

static const char *kind_name(uint32_t flags)
{
	return flags & ACCMAP_ALLOC_WRITECOMBINE ? "write-combined" : "cached";
}

/* CREATE + ALLOC (system heap) with a tag; the id, or 0 after a failure. */
static uint32_t new_buffer(int dev, uint64_t size, uint32_t flags, uint16_t tag)
{
	uint32_t id = 0;
	int ret = am_create(dev, size, &id);

	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return 0;
	ret = am_alloc(dev, id, flags, tag);
	if (!CHECK(ret == 0, "ALLOC(id %u): %s", id, strerror(-ret)))
		return 0;
	return id;
}

static uint32_t new_empty(int dev, uint64_t size)
{
	uint32_t id = 0;
	int ret = am_create(dev, size, &id);

	CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret));
	return ret ? 0 : id;
}

static int export(int dev, uint32_t id, uint32_t mode)
{
	int fd = am_get_fd(dev, id, mode | O_CLOEXEC);

	CHECK(fd >= 0, "GET_FD(id %u, %#x): %s", id, mode, strerror(-fd));
	return fd;
}

static uint32_t refs_of(int dev, uint32_t id)
{
	struct accmap_info info;
	int ret = am_info(dev, id, &info);

	if (!CHECK(ret == 0, "INFO(id %u): %s", id, strerror(-ret)))
		return ~0U;
	return info.handle_refs;
}

static bool check_bytes(const void *got, const void *want, size_t len, const char *what)
{
	const uint8_t *g = got, *w = want;

	for (size_t i = 0; i < len; i++) {
		if (g[i] != w[i])
			return CHECK(false, "%s: byte %zu of %zu is %#x, expected %#x", what,
				     i, len, g[i], w[i]);
	}
	return true;
}

static bool check_pattern(const void *p, size_t len, size_t start, unsigned int seed,
			  const char *what)
{
	size_t bad = find_pattern_mismatch(p, len, start, seed);

	return CHECK(bad == len, "%s: byte %zu of %zu differs from the pattern", what, bad, len);
}

static bool check_all(const void *p, size_t len, uint8_t val, const char *what)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		if (b[i] != val)
			return CHECK(false, "%s: byte %zu of %zu is %#x, expected %#x", what,
				     i, len, b[i], val);
	}
	return true;
}

/* ==== FROM_FD ==== */

/* A FROM_FD that must fail with err and leave its argument as it was. */
static void from_fd_expect(int dev, int fd, uint32_t flags, uint32_t pad, int err,
			   const char *what)
{
	struct accmap_from_fd a = { .fd = fd, .flags = flags, .id = GARBAGE_U32, .pad = pad };

	if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_FROM_FD, &a), err))
		tap_diag("FROM_FD of %s (fd %d, flags %#x, pad %#x)", what, fd, flags, pad);
	CHECK(a.fd == fd && a.flags == flags && a.pad == pad && a.id == GARBAGE_U32,
	      "refused FROM_FD of %s wrote its argument (id %#x)", what, a.id);
}

static void test_from_fd_bad_flags_pad(void)
{
	static const uint32_t pads[] = { 1, 0x80000000, 0xffffffff };
	int dev = am_open();
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	id = new_buffer(dev, page_size(), 0, 0);
	fd = id ? export(dev, id, O_RDWR) : -1;
	if (fd < 0)
		goto out;
	for (unsigned int bit = 0; bit < 32; bit++)
		from_fd_expect(dev, fd, 1U << bit, 0, EINVAL, "a dma-buf with a flag");
	from_fd_expect(dev, fd, ~0U, 0, EINVAL, "a dma-buf with every flag");
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++)
		from_fd_expect(dev, fd, 0, pads[i], EINVAL, "a dma-buf with pad set");
	/* Nothing was imported. */
	check_counts(dev, id, 1, 1, 0, 0, "after refused FROM_FDs");
	close(fd);
out:
	close(dev);
}

static void test_from_fd_bad_fd(void)
{
	int dev = am_open();
	int closed, never;

	if (dev < 0)
		return;
	closed = dup(dev);
	if (CHECK(closed >= 0, "dup"))
		close(closed);
	never = next_fd() + 100;
	from_fd_expect(dev, 9999, 0, 0, EBADF, "fd 9999");
	from_fd_expect(dev, -1, 0, 0, EBADF, "fd -1");
	from_fd_expect(dev, INT_MIN, 0, 0, EBADF, "fd INT_MIN");
	from_fd_expect(dev, INT_MAX, 0, 0, EBADF, "fd INT_MAX");
	from_fd_expect(dev, closed, 0, 0, EBADF, "a closed fd");
	from_fd_expect(dev, never, 0, 0, EBADF, "an fd never opened");
	close(dev);
}

static void test_from_fd_not_dmabuf(void)
{
	int dev = am_open();
	int other = am_open();
	int pipefd[2] = { -1, -1 }, sv[2] = { -1, -1 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int memfd = memfd_create("accmap-not-a-dmabuf", MFD_CLOEXEC);

	if (dev < 0 || other < 0)
		goto out;
	if (CHECK_OK(pipe2(pipefd, O_CLOEXEC))) {
		from_fd_expect(dev, pipefd[0], 0, 0, EINVAL, "a pipe's read end");
		from_fd_expect(dev, pipefd[1], 0, 0, EINVAL, "a pipe's write end");
	}
	if (CHECK(null >= 0, "open /dev/null: %s", strerror(errno)))
		from_fd_expect(dev, null, 0, 0, EINVAL, "/dev/null");
	from_fd_expect(dev, dev, 0, 0, EINVAL, "the /dev/accmap fd itself");
	from_fd_expect(dev, other, 0, 0, EINVAL, "another /dev/accmap fd");
	if (CHECK(memfd >= 0, "memfd_create: %s", strerror(errno)))
		from_fd_expect(dev, memfd, 0, 0, EINVAL, "a memfd");
	if (CHECK(dir >= 0, "open /: %s", strerror(errno)))
		from_fd_expect(dev, dir, 0, 0, EINVAL, "a directory");
	if (CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
		from_fd_expect(dev, sv[0], 0, 0, EINVAL, "a unix socket");
out:
	close_pair(pipefd);
	close_pair(sv);
	if (null >= 0)
		close(null);
	if (dir >= 0)
		close(dir);
	if (memfd >= 0)
		close(memfd);
	if (other >= 0)
		close(other);
	if (dev >= 0)
		close(dev);
}

static void test_from_fd_foreign(void)
{
	size_t len = 4 * page_size();
	int vgem = vgem_open();
	int dev = am_open();
	uint32_t vhandle, ihandle, id, got;
	int foreign, fd = -1, back;

	if (!CHECK(vgem >= 0, "no vgem DRM device: %s", strerror(errno)) || dev < 0)
		goto out;
	foreign = vgem_foreign_dmabuf(vgem, len, &vhandle);
	if (CHECK(foreign >= 0, "vgem dumb buffer export: %s", strerror(-foreign))) {
		from_fd_expect(dev, foreign, 0, 0, EXDEV, "a vgem dma-buf");
		CHECK(vgem_close_handle(vgem, vhandle) == 0, "GEM_CLOSE");
		close(foreign);
	}

	/* vgem hands accmap's own dma-buf back: that one is accmap's. */
	id = new_buffer(dev, len, 0, 0x5eed);
	fd = id ? export(dev, id, O_RDWR) : -1;
	if (fd < 0 || !CHECK(vgem_import(vgem, fd, &ihandle) == 0, "vgem import"))
		goto out;
	back = vgem_export(vgem, ihandle);
	if (CHECK(back >= 0, "vgem re-export: %s", strerror(-back))) {
		if (CHECK(am_from_fd(dev, back, &got) == 0, "FROM_FD of vgem's re-export")) {
			CHECK(got != id, "FROM_FD returned the existing id %u", id);
			check_info(dev, got, len, ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED |
				   ACCMAP_STATE_EXPORTED, 0x5eed, "imported from vgem's re-export");
			check_counts(dev, got, 2, 1, 0, 1, "imported from vgem's re-export");
		}
		close(back);
	}
	CHECK(vgem_close_handle(vgem, ihandle) == 0, "GEM_CLOSE");
out:
	if (fd >= 0)
		close(fd);
	if (dev >= 0)
		close(dev);
	if (vgem >= 0)
		close(vgem);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void test_from_fd_same_client(void)
{
	enum { IMPORTS = 6, OTHERS = 4 };
	size_t len = 3 * page_size();
	uint32_t ids[1 + OTHERS + IMPORTS];
	uint8_t data[64], back[64];
	int dev = am_open();
	int rw = -1, ro = -1;
	uint32_t id;
	size_t n = 0;

	if (dev < 0)
		return;
	id = new_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, 0x0f0f);
	if (!id)
		goto out;
	ids[n++] = id;
	for (int i = 0; i < OTHERS; i++) {
		ids[n] = i & 1 ? new_empty(dev, page_size()) : new_buffer(dev, page_size(), 0, 0);
		if (!ids[n])
			goto out;
		n++;
	}
	rw = export(dev, id, O_RDWR);
	ro = export(dev, id, O_RDONLY);
	if (rw < 0 || ro < 0)
		goto out;

	for (int i = 0; i < IMPORTS; i++) {
		struct accmap_from_fd a = {
			.fd = i & 1 ? ro : rw, .flags = 0, .id = GARBAGE_U32, .pad = 0,
		};

		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_FROM_FD, &a)))
			goto out;
		CHECK(a.fd == (i & 1 ? ro : rw) && a.flags == 0 && a.pad == 0,
		      "FROM_FD changed its input fields");
		CHECK(a.id != 0 && a.id != GARBAGE_U32, "FROM_FD returned id %#x", a.id);
		ids[n++] = a.id;
		/* An id from a read-only dma-buf is read-only itself. */
		check_info(dev, a.id, len, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
			   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
			   (i & 1 ? ACCMAP_STATE_READONLY : 0), 0x0f0f, "imported id");
		/* Every id of the buffer sees every reference. */
		check_counts(dev, id, 2 + i, 2, 0, 0, "original after an import");
		check_counts(dev, a.id, 2 + i, 2, 0, 0, "import");
	}
	qsort(ids, n, sizeof(ids[0]), cmp_u32);
	for (size_t i = 1; i < n; i++)
		CHECK(ids[i] != ids[i - 1], "id %u issued twice in one client", ids[i]);

	/* Through any id, the same bytes. */
	fill_pattern(data, sizeof(data), 0, 3);
	CHECK(am_write(dev, id, 100, data, sizeof(data)) == 0, "WRITE through the original");
	for (size_t i = 0; i < n; i++) {
		struct accmap_info info;

		if (ids[i] == id || am_info(dev, ids[i], &info) || info.size != len)
			continue;
		memset(back, 0, sizeof(back));
		CHECK(am_read(dev, ids[i], 100, back, sizeof(back)) == 0, "READ through an import");
		check_bytes(back, data, sizeof(back), "READ through an import");
	}

	/* FREE of each import drops one reference; the original stays. */
	{
		uint32_t left = 1 + IMPORTS;

		for (size_t i = 0; i < n; i++) {
			struct accmap_info info;

			if (ids[i] == id || am_info(dev, ids[i], &info) || info.size != len)
				continue;
			CHECK(am_free(dev, ids[i]) == 0, "FREE of import %u", ids[i]);
			left--;
			CHECK(refs_of(dev, id) == left,
			      "references after FREE of an import: %u, expected %u",
			      refs_of(dev, id), left);
		}
	}
	check_info(dev, id, len, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0x0f0f,
		   "original after FREE of every import");
	memset(back, 0, sizeof(back));
	CHECK(am_read(dev, id, 100, back, sizeof(back)) == 0, "READ through the original");
	check_bytes(back, data, sizeof(back), "original after FREE of every import");
out:
	if (rw >= 0)
		close(rw);
	if (ro >= 0)
		close(ro);
	close(dev);
}

static void test_from_fd_two_clients(void)
{
	size_t len = 5 * page_size();
	int a = am_open(), b = am_open();
	uint8_t data[300], back[300];
	uint32_t id, imp = 0, imp2 = 0;
	int fd = -1;

	if (a < 0 || b < 0)
		goto out;
	id = new_buffer(a, len, 0, 0xc0de);
	fd = id ? export(a, id, O_RDWR) : -1;
	if (fd < 0)
		goto out;
	check_counts(a, id, 1, 1, 0, 0, "before any import");
	if (!CHECK(am_from_fd(b, fd, &imp) == 0, "FROM_FD in a second client"))
		goto out;
	check_info(b, imp, len, ACCMAP_HEAP_SYSTEM, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0xc0de, "imported by client b");
	check_counts(a, id, 2, 1, 0, 0, "original, imported by another client");
	check_counts(b, imp, 2, 1, 0, 0, "import in the other client");

	/* Bytes written through one client are read through the other. */
	fill_pattern(data, sizeof(data), 0, 21);
	CHECK(am_write(a, id, 4000, data, sizeof(data)) == 0, "WRITE in client a");
	memset(back, 0, sizeof(back));
	CHECK(am_read(b, imp, 4000, back, sizeof(back)) == 0, "READ in client b");
	check_bytes(back, data, sizeof(back), "written in a, read in b");
	fill_pattern(data, sizeof(data), 0, 22);
	CHECK(am_write(b, imp, 9000, data, sizeof(data)) == 0, "WRITE in client b");
	memset(back, 0, sizeof(back));
	CHECK(am_read(a, id, 9000, back, sizeof(back)) == 0, "READ in client a");
	check_bytes(back, data, sizeof(back), "written in b, read in a");

	/* FREE of the import: back to one reference, original intact. */
	CHECK(am_free(b, imp) == 0, "FREE of the import");
	check_counts(a, id, 1, 1, 0, 0, "after FREE of the import");
	memset(back, 0, sizeof(back));
	CHECK(am_read(a, id, 9000, back, sizeof(back)) == 0, "READ after FREE of the import");
	check_bytes(back, data, sizeof(back), "original after FREE of the import");

	/* The other way round: FREE of the original leaves the import. */
	if (!CHECK(am_from_fd(b, fd, &imp2) == 0, "second FROM_FD"))
		goto out;
	CHECK(imp2 != imp, "id %u reused after FREE", imp);
	check_counts(b, imp2, 2, 1, 0, 0, "imported again");
	CHECK(am_free(a, id) == 0, "FREE of the original");
	close(fd);
	fd = -1;
	check_info(b, imp2, len, ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0xc0de,
		   "import after the original and its dma-buf went");
	check_counts(b, imp2, 1, 0, 0, 0, "import after the original and its dma-buf went");
	memset(back, 0, sizeof(back));
	CHECK(am_read(b, imp2, 9000, back, sizeof(back)) == 0, "READ of the last reference");
	check_bytes(back, data, sizeof(back), "import after the original went");
	close(a);
	a = -1;
	check_counts(b, imp2, 1, 0, 0, 0, "after client a closed");
out:
	if (fd >= 0)
		close(fd);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/*
 * Child of the cross-process test: creates and writes a buffer, sends its
 * dma-buf, then checks and writes in turn with the parent.
 */
static void cross_child(int sock, size_t len, uint32_t kind)
{
	size_t half = len / 2;
	uint8_t *buf = malloc(len);
	int dev = am_open();
	uint32_t id;
	char step;
	uint8_t *p;
	int fd;

	if (dev < 0 || !CHECK(buf, "malloc"))
		_exit(2);
	id = new_buffer(dev, len, kind, 0xc41d);
	fd = id ? export(dev, id, O_RDWR) : -1;
	if (fd < 0)
		_exit(3);
	fill_pattern(buf, len, 0, 100);
	CHECK(am_write(dev, id, 0, buf, len) == 0, "child: WRITE");
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (!p)
		_exit(4);
	if (!CHECK(am_send_fd(sock, fd) == 0, "child: send the dma-buf"))
		_exit(5);
	if (!CHECK(am_recv_byte(sock, &step) == 0 && step == 'A', "child: step A"))
		_exit(6);

	/* The parent wrote the first half with WRITE, the second through mmap. */
	memset(buf, 0, len);
	CHECK(am_read(dev, id, 0, buf, len) == 0, "child: READ");
	check_pattern(buf, half, 0, 101, "child: READ of what the parent wrote with WRITE");
	check_pattern(buf + half, len - half, half, 102,
		      "child: READ of what the parent wrote through mmap");
	check_pattern(p, half, 0, 101, "child: mmap of what the parent wrote with WRITE");
	check_pattern(p + half, len - half, half, 102,
		      "child: mmap of what the parent wrote through mmap");

	/* Now the other way round. */
	fill_pattern(buf, len, 0, 103);
	CHECK(am_write(dev, id, half, buf + half, len - half) == 0, "child: WRITE");
	fill_pattern(p, half, 0, 104);
	if (!CHECK(am_send_byte(sock, 'B') == 0, "child: step B"))
		_exit(7);
	CHECK(am_recv_byte(sock, &step) == 0 && step == 'C', "child: step C");
	munmap(p, len);
	_exit(0);
}

static void test_from_fd_cross_process(void)
{
	size_t len = 17 * page_size();
	size_t half = len / 2;

	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint8_t *buf = malloc(len);
		int dev = am_open();
		int sv[2], status = -1, fd = -1;
		uint32_t id = 0;
		uint8_t *p = NULL;
		char step;
		pid_t pid;

		if (dev < 0 || !CHECK(buf, "malloc") ||
		    !CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))) {
			free(buf);
			return;
		}
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			close(dev);
			cross_child(sv[1], len, both_kinds[k]);
		}
		close(sv[1]);
		if (!CHECK(pid > 0, "fork: %s", strerror(errno)))
			goto next;
		fd = am_recv_fd(sv[0]);
		if (!CHECK(fd >= 0, "receive the child's dma-buf"))
			goto reap;
		if (!CHECK(am_from_fd(dev, fd, &id) == 0, "FROM_FD of the child's dma-buf"))
			goto reap;
		check_info(dev, id, len, ACCMAP_HEAP_SYSTEM, both_kinds[k],
			   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0xc41d,
			   "buffer of another process");
		check_counts(dev, id, 2, 1, 1, 0, "buffer of another process, mapped there");
		memset(buf, 0, len);
		CHECK(am_read(dev, id, 0, buf, len) == 0, "READ of the child's buffer");
		check_pattern(buf, len, 0, 100, "parent: READ of what the child wrote");

		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (!p)
			goto reap;
		check_pattern(p, len, 0, 100, "parent: mmap of what the child wrote");
		fill_pattern(buf, len, 0, 101);
		CHECK(am_write(dev, id, 0, buf, half) == 0, "parent: WRITE");
		fill_pattern(p + half, len - half, half, 102);
		if (!CHECK(am_send_byte(sv[0], 'A') == 0, "step A") ||
		    !CHECK(am_recv_byte(sv[0], &step) == 0 && step == 'B', "step B"))
			goto reap;

		memset(buf, 0, len);
		CHECK(am_read(dev, id, 0, buf, len) == 0, "parent: READ");
		check_pattern(buf, half, 0, 104,
			      "parent: READ of what the child wrote through mmap");
		check_pattern(buf + half, len - half, half, 103,
			      "parent: READ of what the child wrote with WRITE");
		check_pattern(p, half, 0, 104, "parent: mmap of what the child wrote through mmap");
		check_pattern(p + half, len - half, half, 103,
			      "parent: mmap of what the child wrote with WRITE");
		am_send_byte(sv[0], 'C');
reap:
		/* A child still waiting for a step gets end-of-file. */
		shutdown(sv[0], SHUT_RDWR);
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited with %#x",
		      status);
		if (id) {
			/* The child's reference went with it; ours keeps the bytes. */
			check_counts(dev, id, 1, 1, p ? 1 : 0, 0, "after the child exited");
			memset(buf, 0, len);
			CHECK(am_read(dev, id, 0, buf, len) == 0, "READ after the child exited");
			check_pattern(buf, half, 0, 104, "after the child exited");
		}
next:
		if (p)
			munmap(p, len);
		if (fd >= 0)
			close(fd);
		close(sv[0]);
		close(dev);
		free(buf);
	}
}

/* ==== WRITE / READ ==== */

#define RW_PAGES	4

/*
 * An argument for WRITE and READ on id: a copy that would succeed, but
 * for the fault the caller puts in.
 */
static struct accmap_rw rw_arg(uint32_t id, const void *addr, uint64_t offset, uint64_t elem,
			       uint64_t ustride, uint64_t hstride, uint64_t count)
{
	return (struct accmap_rw){
		.addr = (uint64_t)(uintptr_t)addr, .offset = offset, .elem_size = elem,
		.user_stride = ustride, .handle_stride = hstride, .count = count,
		.id = id, .flags = 0, .bytes = GARBAGE_U64,
	};
}

/* WRITE and READ with in must both fail with err and write nothing back. */
static void rw_expect(int dev, const struct accmap_rw *in, int err, const char *what)
{
	for (int w = 0; w < 2; w++) {
		struct accmap_rw a = *in;

		a.bytes = GARBAGE_U64;
		if (!CHECK_ERR(ioctl(dev, w ? ACCMAP_IOC_WRITE : ACCMAP_IOC_READ, &a), err))
			tap_diag("%s: %s (addr %#llx off %#llx elem %#llx strides %#llx %#llx)",
				 w ? "WRITE" : "READ", what, (unsigned long long)in->addr,
				 (unsigned long long)in->offset, (unsigned long long)in->elem_size,
				 (unsigned long long)in->user_stride,
				 (unsigned long long)in->handle_stride);
		CHECK(!memcmp(&a, in, offsetof(struct accmap_rw, bytes)) && a.bytes == GARBAGE_U64,
		      "%s refused (%s) changed its argument", w ? "WRITE" : "READ", what);
	}
}

/*
 * A buffer of RW_PAGES pages holding pattern 1, a user buffer of the same
 * size holding pattern 2: after calls that must fail before copying,
 * check_untouched() verifies that neither changed.
 */
struct rw_fixture {
	int dev;
	uint32_t id;
	size_t size;
	uint8_t *user;
};

static bool rw_setup(struct rw_fixture *f)
{
	f->size = RW_PAGES * page_size();
	f->user = malloc(f->size);
	f->dev = am_open();
	f->id = 0;
	if (f->dev < 0 || !CHECK(f->user, "malloc"))
		return false;
	f->id = new_buffer(f->dev, f->size, 0, 0);
	if (!f->id)
		return false;
	fill_pattern(f->user, f->size, 0, 1);
	if (!CHECK(am_write(f->dev, f->id, 0, f->user, f->size) == 0, "WRITE of the background"))
		return false;
	fill_pattern(f->user, f->size, 0, 2);
	return true;
}

static void rw_check_untouched(struct rw_fixture *f, const char *when)
{
	uint8_t *back = malloc(f->size);

	check_pattern(f->user, f->size, 0, 2, when);
	if (!CHECK(back, "malloc"))
		return;
	if (CHECK(am_read(f->dev, f->id, 0, back, f->size) == 0, "READ"))
		check_pattern(back, f->size, 0, 1, when);
	free(back);
}

static void rw_teardown(struct rw_fixture *f)
{
	free(f->user);
	if (f->dev >= 0)
		close(f->dev);
}

static void test_rw_unknown_id(void)
{
	struct rw_fixture f;
	uint32_t freed;

	if (!rw_setup(&f))
		goto out;
	freed = new_buffer(f.dev, f.size, 0, 0);
	CHECK(am_free(f.dev, freed) == 0, "FREE");
	{
		const uint32_t ids[] = { 0, freed, f.id + 1000, 0x7fffffff, 0xffffffff };

		for (size_t i = 0; i < TAP_ARRAY_SIZE(ids); i++) {
			struct accmap_rw a = rw_arg(ids[i], f.user, 0, 64, 64, 64, 1);

			rw_expect(f.dev, &a, ENOENT, "unknown id");
		}
	}
	rw_check_untouched(&f, "after calls on unknown ids");
out:
	rw_teardown(&f);
}

static void test_rw_bad_args(void)
{
	struct rw_fixture f;
	struct accmap_rw a;

	if (!rw_setup(&f))
		goto out;
	for (unsigned int bit = 0; bit < 32; bit++) {
		a = rw_arg(f.id, f.user, 0, 64, 64, 64, 1);
		a.flags = 1U << bit;
		rw_expect(f.dev, &a, EINVAL, "a flag set");
	}
	a = rw_arg(f.id, f.user, 0, 0, 64, 64, 1);
	rw_expect(f.dev, &a, EINVAL, "elem_size 0");
	a = rw_arg(f.id, f.user, 0, 0, 0, 0, 4);
	rw_expect(f.dev, &a, EINVAL, "elem_size 0 with a count");
	a = rw_arg(f.id, f.user, 0, 64, 64, 64, 0);
	rw_expect(f.dev, &a, EINVAL, "count 0");
	a = rw_arg(f.id, f.user, 0, 64, 0, 64, 2);
	rw_expect(f.dev, &a, EINVAL, "user_stride 0");
	a = rw_arg(f.id, f.user, 0, 64, 63, 64, 2);
	rw_expect(f.dev, &a, EINVAL, "user_stride below elem_size");
	a = rw_arg(f.id, f.user, 0, 64, 63, 64, 9);
	rw_expect(f.dev, &a, EINVAL, "user_stride below elem_size, count 9");
	a = rw_arg(f.id, f.user, 0, 64, 64, 0, 2);
	rw_expect(f.dev, &a, EINVAL, "handle_stride 0");
	a = rw_arg(f.id, f.user, 0, 64, 64, 63, 2);
	rw_expect(f.dev, &a, EINVAL, "handle_stride below elem_size");
	a = rw_arg(f.id, f.user, 0, 64, 128, 1, 3);
	rw_expect(f.dev, &a, EINVAL, "handle_stride 1, elem_size 64");
	rw_check_untouched(&f, "after refused calls");
out:
	rw_teardown(&f);
}

static void test_rw_overflow(void)
{
	const uint64_t max = ~0ULL, half = 1ULL << 63;
	struct rw_fixture f;
	struct accmap_rw a;

	if (!rw_setup(&f))
		goto out;
	/* addr + (count - 1) * user_stride + elem_size does not fit 64 bits. */
	a = rw_arg(f.id, (void *)(uintptr_t)(max - 15), 0, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EINVAL, "addr + elem_size is 2^64");
	a = rw_arg(f.id, (void *)(uintptr_t)max, 0, 1, 1, 1, 1);
	rw_expect(f.dev, &a, EINVAL, "addr 2^64 - 1, one byte");
	a = rw_arg(f.id, f.user, 0, 1, half, 1, 3);
	rw_expect(f.dev, &a, EINVAL, "(count - 1) * user_stride is 2^64");
	a = rw_arg(f.id, f.user, 0, 8, max - 4, 8, 2);
	rw_expect(f.dev, &a, EINVAL, "user_stride + elem_size overflows");
	a = rw_arg(f.id, (void *)(uintptr_t)half, 0, 8, half, 8, 2);
	rw_expect(f.dev, &a, EINVAL, "addr + user_stride overflows");

	/* offset + (count - 1) * handle_stride + elem_size does not fit. */
	a = rw_arg(f.id, f.user, max - 15, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EINVAL, "offset + elem_size is 2^64");
	a = rw_arg(f.id, f.user, max, 1, 1, 1, 1);
	rw_expect(f.dev, &a, EINVAL, "offset 2^64 - 1, one byte");
	a = rw_arg(f.id, f.user, 0, 1, 1, half, 3);
	rw_expect(f.dev, &a, EINVAL, "(count - 1) * handle_stride is 2^64");
	a = rw_arg(f.id, f.user, 0, 8, 8, max - 4, 2);
	rw_expect(f.dev, &a, EINVAL, "handle_stride + elem_size overflows");
	a = rw_arg(f.id, f.user, half, 8, 8, half, 2);
	rw_expect(f.dev, &a, EINVAL, "offset + handle_stride overflows");
	a = rw_arg(f.id, f.user, 0, 1, 1, 1ULL << 32, 1ULL << 33);
	rw_expect(f.dev, &a, EINVAL, "count 2^33, handle_stride 2^32");
	a = rw_arg(f.id, f.user, 0, max, max, max, 2);
	rw_expect(f.dev, &a, EINVAL, "elem_size and strides 2^64 - 1, count 2");

	/* One below the overflow is not an overflow: the next check decides. */
	a = rw_arg(f.id, f.user, max - 16, 16, 16, 16, 1);
	rw_expect(f.dev, &a, ERANGE, "offset + elem_size is 2^64 - 1");
	rw_check_untouched(&f, "after refused calls");
	a = rw_arg(f.id, (void *)(uintptr_t)(max - 16), 0, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EFAULT, "addr + elem_size is 2^64 - 1");
out:
	rw_teardown(&f);
}

static void test_rw_out_of_range(void)
{
	struct rw_fixture f;
	struct accmap_rw a;
	uint64_t s, h, bytes = 0;

	if (!rw_setup(&f))
		goto out;
	s = f.size;
	a = rw_arg(f.id, f.user, s, 1, 1, 1, 1);
	rw_expect(f.dev, &a, ERANGE, "offset at the end");
	a = rw_arg(f.id, f.user, s - 1, 2, 2, 2, 1);
	rw_expect(f.dev, &a, ERANGE, "last element one byte past the end");
	a = rw_arg(f.id, f.user, 0, s + 1, s + 1, s + 1, 1);
	rw_expect(f.dev, &a, ERANGE, "element one byte larger than the buffer");
	a = rw_arg(f.id, f.user, 1ULL << 62, 1, 1, 1, 1);
	rw_expect(f.dev, &a, ERANGE, "offset 2^62");
	a = rw_arg(f.id, f.user, s + page_size(), 16, 16, 16, 1);
	rw_expect(f.dev, &a, ERANGE, "offset a page past the end");
	/* Four elements of 16 whose strides take the last one 1 byte out. */
	h = (s - 16) / 3 + 1;
	a = rw_arg(f.id, f.user, 0, 16, 16, h, 4);
	rw_expect(f.dev, &a, ERANGE, "strided, last element past the end");
	a = rw_arg(f.id, f.user, s - 16 - 3 * ((s - 16) / 3) + 1, 16, 16, (s - 16) / 3, 4);
	rw_expect(f.dev, &a, ERANGE, "strided with an offset, last element past the end");
	a = rw_arg(f.id, f.user, 0, 16, 16, s, 2);
	rw_expect(f.dev, &a, ERANGE, "second element at the end");
	rw_check_untouched(&f, "after refused calls");

	/* Exactly up to the last byte is fine. */
	CHECK(am_rw(f.dev, true, f.id, f.user, s - 16, 16, 16, 16, 1, &bytes) == 0 && bytes == 16,
	      "WRITE of the last 16 bytes");
	h = (s - 16) / 3;
	CHECK(am_rw(f.dev, false, f.id, f.user, s - 16 - 3 * h, 16, 16, h, 4, &bytes) == 0 &&
	      bytes == 64, "strided READ ending at the last byte");
out:
	rw_teardown(&f);
}

static void test_rw_no_memory(void)
{
	int dev = am_open();
	uint8_t buf[256];
	uint32_t id;

	if (dev < 0)
		return;
	id = new_empty(dev, RW_PAGES * page_size());
	memset(buf, GARBAGE_BYTE, sizeof(buf));
	if (id) {
		struct accmap_rw a = rw_arg(id, buf, 0, 64, 64, 64, 1);

		rw_expect(dev, &a, ENODATA, "handle without memory");
		a = rw_arg(id, buf, 100, 16, 32, 64, 8);
		rw_expect(dev, &a, ENODATA, "strided, handle without memory");
		check_all(buf, sizeof(buf), GARBAGE_BYTE, "READ of a handle without memory");
		check_info(dev, id, RW_PAGES * page_size(), ACCMAP_HEAP_NONE, 0, 0, 0,
			   "after WRITE/READ without memory");
	}
	close(dev);
}

static void test_rw_bad_user_memory(void)
{
	size_t pg = page_size();
	struct rw_fixture f;
	struct accmap_rw a;
	uint8_t *area = MAP_FAILED, *gone = MAP_FAILED;
	uint64_t bytes = 0;

	if (!rw_setup(&f))
		goto out;
	/* [read-write][no access][read-only] */
	area = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(area != MAP_FAILED && gone != MAP_FAILED, "mmap: %s", strerror(errno)))
		goto out;
	fill_pattern(area, 3 * pg, 0, 5);
	CHECK_OK(mprotect(area + pg, pg, PROT_NONE));
	CHECK_OK(mprotect(area + 2 * pg, pg, PROT_READ));
	CHECK_OK(munmap(gone, pg));

	a = rw_arg(f.id, NULL, 0, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EFAULT, "NULL");
	a = rw_arg(f.id, area + pg, 0, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EFAULT, "a page without access");
	a = rw_arg(f.id, gone, 0, 16, 16, 16, 1);
	rw_expect(f.dev, &a, EFAULT, "an unmapped page");
	a = rw_arg(f.id, area + pg - 16, 0, 32, 32, 32, 1);
	rw_expect(f.dev, &a, EFAULT, "an element straddling into a page without access");
	a = rw_arg(f.id, area, 0, 16, pg, 16, 2);
	rw_expect(f.dev, &a, EFAULT, "second element in a page without access");

	/* A read-only page can be written from but not read into. */
	a = rw_arg(f.id, area + 2 * pg, 0, 64, 64, 64, 1);
	CHECK_ERR(ioctl(f.dev, ACCMAP_IOC_READ, &a), EFAULT);
	check_pattern(area + 2 * pg, pg, 2 * pg, 5, "read-only page after a refused READ");
	CHECK(am_rw(f.dev, true, f.id, area + 2 * pg, 8, pg, pg, pg, 1, &bytes) == 0 &&
	      bytes == pg, "WRITE from a read-only page");
	{
		uint8_t *back = malloc(pg);

		if (CHECK(back, "malloc") && CHECK(am_read(f.dev, f.id, 8, back, pg) == 0, "READ"))
			check_pattern(back, pg, 2 * pg, 5, "written from a read-only page");
		free(back);
	}
out:
	if (area != MAP_FAILED)
		munmap(area, 3 * pg);
	rw_teardown(&f);
}

/* Both kinds: a mapping of a fresh buffer, kept for the whole check. */
struct rw_mapped {
	int dev, fd;
	uint32_t id;
	size_t size;
	uint8_t *map;
};

static bool rw_mapped_open(struct rw_mapped *m, int dev, size_t size, uint32_t kind)
{
	m->dev = dev;
	m->size = size;
	m->map = NULL;
	m->id = new_buffer(dev, size, kind, 0);
	m->fd = m->id ? export(dev, m->id, O_RDWR) : -1;
	if (m->fd < 0)
		return false;
	m->map = map_shared(m->fd, size, PROT_READ | PROT_WRITE, 0);
	return m->map;
}

static void rw_mapped_close(struct rw_mapped *m)
{
	if (m->map)
		munmap(m->map, m->size);
	if (m->fd >= 0)
		close(m->fd);
	if (m->id)
		am_free(m->dev, m->id);
}

static void test_rw_contiguous_page_crossing(void)
{
	size_t pg = page_size();
	size_t size = 8 * pg;
	const size_t offs[] = { 0, 1, pg - 1, pg - 3, pg, 2 * pg - 7, 3 * pg + 5, 5 * pg - 1 };
	const size_t lens[] = { 1, 2, 7, 64, pg - 1, pg, pg + 1, 2 * pg + 3, 3 * pg };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint8_t *shadow = calloc(1, size), *src = malloc(size), *back = malloc(size);
		struct rw_mapped m = { .fd = -1 };
		unsigned int seed = 10;

		if (!CHECK(shadow && src && back, "malloc") ||
		    !rw_mapped_open(&m, dev, size, both_kinds[k]))
			goto next;
		for (size_t o = 0; o < TAP_ARRAY_SIZE(offs); o++) {
			for (size_t l = 0; l < TAP_ARRAY_SIZE(lens); l++) {
				size_t off = offs[o], len = lens[l];
				char when[96];
				uint64_t bytes = GARBAGE_U64;

				snprintf(when, sizeof(when), "%s, offset %zu, %zu bytes",
					 kind_name(both_kinds[k]), off, len);
				seed++;
				fill_pattern(src, len, off, seed);
				memcpy(shadow + off, src, len);
				if (seed & 1) {
					/* WRITE, seen through the mapping. */
					if (!CHECK(am_rw(dev, true, m.id, src, off, len, len,
							 len, 1, &bytes) == 0, "WRITE: %s", when))
						goto next;
					CHECK(bytes == len, "WRITE bytes %llu: %s",
					      (unsigned long long)bytes, when);
					check_bytes(m.map, shadow, size, when);
				} else {
					/* Written through the mapping, seen by READ. */
					memcpy(m.map + off, src, len);
				}
				memset(back, GARBAGE_BYTE, len + 1);
				bytes = GARBAGE_U64;
				if (!CHECK(am_rw(dev, false, m.id, back, off, len, len, len, 1,
						 &bytes) == 0, "READ: %s", when))
					goto next;
				CHECK(bytes == len, "READ bytes %llu: %s",
				      (unsigned long long)bytes, when);
				check_bytes(back, src, len, when);
				CHECK(back[len] == GARBAGE_BYTE, "READ wrote past its end: %s",
				      when);
			}
		}
		/* The whole buffer, both ways. */
		CHECK(am_read(dev, m.id, 0, back, size) == 0, "READ of the whole buffer");
		check_bytes(back, shadow, size, "READ of the whole buffer");
		check_bytes(m.map, shadow, size, "mapping of the whole buffer");
next:
		rw_mapped_close(&m);
		free(shadow);
		free(src);
		free(back);
	}
	close(dev);
}

/*
 * A 2-D sub-rectangle: rows of elem bytes, user_stride apart in user memory
 * and pitch apart in the buffer, written then read back with another
 * user layout; the buffer is checked byte by byte through its mapping.
 */
static void test_rw_strided_rect(void)
{
	size_t pg = page_size();
	const size_t pitch = pg + 192, rows = 40;
	const size_t x = pg - 96, y = 3, w = 300, h = 30;
	const size_t ustride = 512, ustride2 = w + 7;
	size_t size = (pitch * rows + pg - 1) / pg * pg;
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		size_t ulen = ustride * (h - 1) + w, ulen2 = ustride2 * (h - 1) + w;
		uint8_t *img = malloc(ulen), *dst = malloc(ulen2 + 64), *want = malloc(size);
		struct rw_mapped m = { .fd = -1 };
		struct accmap_rw a;

		if (!CHECK(img && dst && want, "malloc") ||
		    !rw_mapped_open(&m, dev, size, both_kinds[k]))
			goto next;
		fill_pattern(m.map, size, 0, 7);
		fill_pattern(want, size, 0, 7);
		fill_pattern(img, ulen, 0, 8);
		for (size_t r = 0; r < h; r++)
			memcpy(want + (y + r) * pitch + x, img + r * ustride, w);

		a = rw_arg(m.id, img, y * pitch + x, w, ustride, pitch, h);
		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_WRITE, &a)))
			goto next;
		CHECK(a.bytes == w * h, "%s: WRITE bytes %llu, expected %zu",
		      kind_name(both_kinds[k]), (unsigned long long)a.bytes, w * h);
		CHECK(a.addr == (uintptr_t)img && a.offset == y * pitch + x && a.elem_size == w &&
		      a.user_stride == ustride && a.handle_stride == pitch && a.count == h &&
		      a.id == m.id && a.flags == 0, "WRITE changed its input fields");
		check_bytes(m.map, want, size, "buffer after a strided WRITE");

		/* Read it back packed differently; gaps must stay untouched. */
		memset(dst, 0xcc, ulen2 + 64);
		a = rw_arg(m.id, dst, y * pitch + x, w, ustride2, pitch, h);
		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_READ, &a)))
			goto next;
		CHECK(a.bytes == w * h, "READ bytes %llu, expected %zu",
		      (unsigned long long)a.bytes, w * h);
		for (size_t r = 0; r < h; r++) {
			if (!check_bytes(dst + r * ustride2, img + r * ustride, w, "row read back"))
				break;
			if (r + 1 < h && !check_all(dst + r * ustride2 + w, ustride2 - w, 0xcc,
						    "gap after a row"))
				break;
		}
		check_all(dst + ulen2, 64, 0xcc, "past the last row");

		/* The same rectangle, read densely packed. */
		memset(dst, 0xcc, ulen2 + 64);
		a = rw_arg(m.id, dst, y * pitch + x, w, w, pitch, h);
		if (CHECK_OK(ioctl(dev, ACCMAP_IOC_READ, &a))) {
			for (size_t r = 0; r < h; r++) {
				if (!check_bytes(dst + r * w, img + r * ustride, w, "dense row"))
					break;
			}
			check_all(dst + w * h, 64, 0xcc, "past a dense read");
		}
next:
		rw_mapped_close(&m);
		free(img);
		free(dst);
		free(want);
	}
	close(dev);
}

/* Scatter and gather: one side dense, the other strided, or both strided. */
static void test_rw_scatter_gather(void)
{
	size_t pg = page_size();
	const struct {
		uint64_t offset, elem, ustride, hstride, count;
	} cases[] = {
		{ 0, 3, 3, 7, 1000 },			/* scatter small elements */
		{ 5, 3, 9, 3, 1000 },			/* gather into a dense run */
		{ 11, pg + 5, pg + 5, 2 * pg + 1, 4 },	/* page-sized elements */
		{ pg - 1, 2, 5, pg, 8 },		/* every element crosses a page */
		{ 1, 100, 100, 100, 300 },		/* dense on both sides */
		{ 2, 1, 1, 1, 30000 },			/* dense bytes */
		{ 7, 17, 33, 65, 500 },
	};
	size_t size = 16 * pg;
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		struct rw_mapped m = { .fd = -1 };
		uint8_t *want = malloc(size);

		if (!CHECK(want, "malloc") || !rw_mapped_open(&m, dev, size, both_kinds[k]))
			goto next;
		for (size_t i = 0; i < TAP_ARRAY_SIZE(cases); i++) {
			uint64_t e = cases[i].elem, n = cases[i].count;
			uint64_t us = cases[i].ustride, hs = cases[i].hstride;
			uint64_t off = cases[i].offset;
			size_t ulen = (size_t)(us * (n - 1) + e);
			uint8_t *src = malloc(ulen), *dst = malloc(ulen);
			uint64_t bytes = GARBAGE_U64;
			char when[80];

			snprintf(when, sizeof(when), "%s, case %zu", kind_name(both_kinds[k]), i);
			if (!CHECK(src && dst, "malloc")) {
				free(src);
				free(dst);
				break;
			}
			fill_pattern(m.map, size, 0, 40 + (unsigned int)i);
			fill_pattern(want, size, 0, 40 + (unsigned int)i);
			fill_pattern(src, ulen, 0, 60 + (unsigned int)i);
			for (uint64_t j = 0; j < n; j++)
				memcpy(want + off + j * hs, src + j * us, e);
			if (CHECK(am_rw(dev, true, m.id, src, off, e, us, hs, n, &bytes) == 0,
				  "strided WRITE: %s", when)) {
				CHECK(bytes == e * n, "WRITE bytes %llu: %s",
				      (unsigned long long)bytes, when);
				check_bytes(m.map, want, size, when);
			}
			/* Read back into the same layout; gaps keep their marker. */
			memset(dst, 0xee, ulen);
			bytes = GARBAGE_U64;
			if (CHECK(am_rw(dev, false, m.id, dst, off, e, us, hs, n, &bytes) == 0,
				  "strided READ: %s", when)) {
				CHECK(bytes == e * n, "READ bytes %llu: %s",
				      (unsigned long long)bytes, when);
				for (uint64_t j = 0; j < n; j++) {
					if (!check_bytes(dst + j * us, src + j * us, e, when))
						break;
					if (j + 1 < n &&
					    !check_all(dst + j * us + e, us - e, 0xee, when))
						break;
				}
			}
			free(src);
			free(dst);
		}
next:
		rw_mapped_close(&m);
		free(want);
	}
	close(dev);
}

/* With one element, the strides mean nothing, whatever their value. */
static void test_rw_count1_strides_ignored(void)
{
	const uint64_t strides[] = { 0, 1, 15, ~0ULL };
	uint8_t src[16], back[16];
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_buffer(dev, page_size(), 0, 0);
	for (size_t i = 0; id && i < TAP_ARRAY_SIZE(strides); i++) {
		uint64_t bytes = GARBAGE_U64;

		fill_pattern(src, sizeof(src), 0, 70 + (unsigned int)i);
		CHECK(am_rw(dev, true, id, src, 32, 16, strides[i], strides[i], 1, &bytes) == 0 &&
		      bytes == 16, "WRITE with count 1 and strides %#llx",
		      (unsigned long long)strides[i]);
		memset(back, 0, sizeof(back));
		bytes = GARBAGE_U64;
		CHECK(am_rw(dev, false, id, back, 32, 16, strides[i], strides[i], 1, &bytes) == 0 &&
		      bytes == 16, "READ with count 1 and strides %#llx",
		      (unsigned long long)strides[i]);
		check_bytes(back, src, sizeof(back), "count 1, any stride");
	}
	close(dev);
}

static void test_rw_1mib(void)
{
	const size_t len = 1 << 20;
	size_t pg = page_size();
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		const size_t offs[] = { 0, pg + 17 };

		for (size_t o = 0; o < TAP_ARRAY_SIZE(offs); o++) {
			size_t size = offs[o] ? len + 2 * pg : len;
			uint8_t *src = malloc(len), *back = malloc(len);
			struct rw_mapped m = { .fd = -1 };
			uint64_t bytes = GARBAGE_U64;
			unsigned int seed = 90 + (unsigned int)(2 * k + o);

			if (!CHECK(src && back, "malloc") ||
			    !rw_mapped_open(&m, dev, size, both_kinds[k]))
				goto next;
			fill_pattern(src, len, 0, seed);
			if (CHECK(am_rw(dev, true, m.id, src, offs[o], len, len, len, 1,
					&bytes) == 0, "1 MiB WRITE")) {
				CHECK(bytes == len, "1 MiB WRITE bytes %llu",
				      (unsigned long long)bytes);
				check_pattern(m.map + offs[o], len, 0, seed,
					      "mapping after a 1 MiB WRITE");
				CHECK(find_nonzero(m.map, offs[o]) == offs[o] &&
				      find_nonzero(m.map + offs[o] + len, size - len - offs[o]) ==
				      size - len - offs[o], "1 MiB WRITE touched bytes around it");
			}
			memset(back, 0, len);
			bytes = GARBAGE_U64;
			if (CHECK(am_rw(dev, false, m.id, back, offs[o], len, len, len, 1,
					&bytes) == 0, "1 MiB READ")) {
				CHECK(bytes == len, "1 MiB READ bytes %llu",
				      (unsigned long long)bytes);
				check_pattern(back, len, 0, seed, "1 MiB READ");
			}
next:
			rw_mapped_close(&m);
			free(src);
			free(back);
		}
	}
	close(dev);
}

/* ==== zeroing of reused memory ==== */

/* Index of the first non-zero byte, or len; fast on all-zero memory. */
static size_t first_nonzero(const void *buf, size_t len)
{
	static const uint8_t zero[4096];
	const uint8_t *p = buf;

	for (size_t done = 0; done < len; done += sizeof(zero)) {
		size_t n = len - done < sizeof(zero) ? len - done : sizeof(zero);

		if (memcmp(p + done, zero, n))
			return done + find_nonzero(p + done, n);
	}
	return len;
}

/*
 * As the dma-buf heaps selftest does: fill 32 buffers with 0xff through
 * mmap, free them, allocate 32 again: every byte must be zero, in the
 * mapping and through READ.  Reuse right away (cached after cached,
 * write-combined after write-combined) and after the pool had time to
 * zero what was freed (each kind after the other).
 */
static void zero_reuse(size_t size)
{
	enum { N = 32 };
	static const struct {
		uint32_t fill, reuse;
		bool pause;
	} rounds[] = {
		{ 0, 0, false },
		{ ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_WRITECOMBINE, false },
		{ 0, ACCMAP_ALLOC_WRITECOMBINE, true },
		{ ACCMAP_ALLOC_WRITECOMBINE, 0, true },
	};
	int dev = am_open();
	uint8_t *back = malloc(size);

	if (dev < 0 || !CHECK(back, "malloc"))
		goto out;
	for (size_t r = 0; r < TAP_ARRAY_SIZE(rounds); r++) {
		uint32_t ids[N];
		char when[96];

		snprintf(when, sizeof(when), "%zu bytes, filled %s, reused %s%s", size,
			 kind_name(rounds[r].fill), kind_name(rounds[r].reuse),
			 rounds[r].pause ? " after a pause" : "");
		for (int i = 0; i < N; i++) {
			int fd;
			uint8_t *p;

			ids[i] = new_buffer(dev, size, rounds[r].fill, 0);
			fd = ids[i] ? export(dev, ids[i], O_RDWR) : -1;
			if (fd < 0)
				goto out;
			p = map_shared(fd, size, PROT_READ | PROT_WRITE, 0);
			close(fd);
			if (!p)
				goto out;
			memset(p, 0xff, size);
			munmap(p, size);
		}
		for (int i = 0; i < N; i++)
			CHECK(am_free(dev, ids[i]) == 0, "FREE");
		/* Without QUERY_POOL, a pause does the same. */
		if (rounds[r].pause && am_pool_wait_idle(dev, 10000))
			usleep(500 * 1000);
		for (int i = 0; i < N; i++) {
			size_t bad;
			int fd;
			uint8_t *p;

			ids[i] = new_buffer(dev, size, rounds[r].reuse, 0);
			fd = ids[i] ? export(dev, ids[i], O_RDWR) : -1;
			if (fd < 0)
				goto out;
			p = map_shared(fd, size, PROT_READ, 0);
			close(fd);
			if (!p)
				goto out;
			bad = first_nonzero(p, size);
			munmap(p, size);
			if (!CHECK(bad == size, "%s: buffer %d mapped, byte %zu is not zero",
				   when, i, bad))
				goto out;
			memset(back, 0x5a, size);
			if (!CHECK(am_read(dev, ids[i], 0, back, size) == 0, "READ"))
				goto out;
			bad = first_nonzero(back, size);
			if (!CHECK(bad == size, "%s: buffer %d READ, byte %zu is not zero", when, i,
				   bad))
				goto out;
		}
		for (int i = 0; i < N; i++)
			CHECK(am_free(dev, ids[i]) == 0, "FREE");
	}
out:
	free(back);
	if (dev >= 0)
		close(dev);
}

static void test_zero_reuse_page(void)
{
	zero_reuse(page_size());
}

static void test_zero_reuse_1m(void)
{
	zero_reuse(1 << 20);
}

/* ==== stale ids ==== */

static void stale_checks(int dev, uint32_t id, const char *what)
{
	uint8_t buf[64];
	struct accmap_info info;
	struct accmap_rw a;
	int fd_before = next_fd();

	CHECK(am_alloc(dev, id, 0, 0) == -ENOENT, "%s: ALLOC of a freed id", what);
	CHECK(am_get_fd(dev, id, O_RDWR) == -ENOENT, "%s: GET_FD of a freed id", what);
	CHECK(am_info(dev, id, &info) == -ENOENT, "%s: INFO of a freed id", what);
	CHECK(next_fd() == fd_before, "%s: GET_FD of a freed id left an fd", what);
	memset(buf, 0x77, sizeof(buf));
	a = rw_arg(id, buf, 0, sizeof(buf), sizeof(buf), sizeof(buf), 1);
	rw_expect(dev, &a, ENOENT, what);
	a = rw_arg(id, buf, 0, 8, 8, 16, 4);
	rw_expect(dev, &a, ENOENT, what);
	check_all(buf, sizeof(buf), 0x77, "READ of a freed id");
	CHECK(am_free(dev, id) == -ENOENT, "%s: FREE of a freed id", what);
}

static void test_stale_ids(void)
{
	size_t len = 2 * page_size();
	int dev = am_open(), other = am_open();
	uint32_t empty, written, read, own_imp, theirs, their_imp, fresh[4];
	uint8_t data[64], back[64];
	int fd = -1, fd2 = -1;

	if (dev < 0 || other < 0)
		goto out;
	empty = new_empty(dev, len);
	written = new_buffer(dev, len, 0, 1);
	read = new_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, 2);
	theirs = new_buffer(other, len, 0, 3);
	if (!empty || !written || !read || !theirs)
		goto out;
	fill_pattern(data, sizeof(data), 0, 31);
	CHECK(am_write(dev, written, 0, data, sizeof(data)) == 0, "WRITE");
	CHECK(am_read(dev, read, 0, back, sizeof(back)) == 0, "READ");
	fd = export(dev, written, O_RDWR);
	fd2 = export(other, theirs, O_RDWR);
	if (fd < 0 || fd2 < 0)
		goto out;
	if (!CHECK(am_from_fd(dev, fd, &own_imp) == 0, "FROM_FD of an own buffer") ||
	    !CHECK(am_from_fd(dev, fd2, &their_imp) == 0, "FROM_FD of another client's buffer"))
		goto out;

	CHECK(am_free(dev, empty) == 0, "FREE of a handle without memory");
	stale_checks(dev, empty, "freed before ALLOC");
	CHECK(am_free(dev, read) == 0, "FREE of a READ buffer");
	stale_checks(dev, read, "freed after READ");
	CHECK(am_free(dev, own_imp) == 0, "FREE of an import of an own buffer");
	stale_checks(dev, own_imp, "freed import of an own buffer");
	CHECK(am_free(dev, their_imp) == 0, "FREE of an import of another client's buffer");
	stale_checks(dev, their_imp, "freed import of another client's buffer");
	CHECK(am_free(dev, written) == 0, "FREE of a WRITE buffer");
	stale_checks(dev, written, "freed after WRITE");

	/* What the stale ids named is still there through what holds it. */
	check_counts(other, theirs, 1, 1, 0, 0, "the other client's buffer");
	if (CHECK(am_from_fd(dev, fd, &own_imp) == 0, "FROM_FD after FREE of every id")) {
		memset(back, 0, sizeof(back));
		CHECK(am_read(dev, own_imp, 0, back, sizeof(back)) == 0, "READ");
		check_bytes(back, data, sizeof(back), "buffer held by its dma-buf");
		CHECK(own_imp != written, "FROM_FD reused the freed id %u", written);
	}
	/* Ids are not handed out again. */
	for (size_t i = 0; i < TAP_ARRAY_SIZE(fresh); i++) {
		fresh[i] = new_empty(dev, len);
		CHECK(fresh[i] != empty && fresh[i] != written && fresh[i] != read &&
		      fresh[i] != their_imp, "CREATE reused a freed id (%u)", fresh[i]);
	}
out:
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	if (other >= 0)
		close(other);
	if (dev >= 0)
		close(dev);
}

/* ==== extensible ABI of the newer ioctls ==== */

#define ARG_BUF_SIZE	4096
#define ABI_TAG		0x0ab1
#define ABI_RW_OFFSET	100
#define ABI_RW_LEN	64

static const unsigned long new_cmds[] = {
	ACCMAP_IOC_FROM_FD,
	ACCMAP_IOC_WRITE,
	ACCMAP_IOC_READ,
	ACCMAP_IOC_SET_TAG_LABEL,
	ACCMAP_IOC_QUERY_HEAP,
	ACCMAP_IOC_QUERY_POOL,
};

static const char *new_cmd_name(unsigned long cmd)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_FROM_FD):
		return "FROM_FD";
	case _IOC_NR(ACCMAP_IOC_WRITE):
		return "WRITE";
	case _IOC_NR(ACCMAP_IOC_READ):
		return "READ";
	case _IOC_NR(ACCMAP_IOC_SET_TAG_LABEL):
		return "SET_TAG_LABEL";
	case _IOC_NR(ACCMAP_IOC_QUERY_HEAP):
		return "QUERY_HEAP";
	case _IOC_NR(ACCMAP_IOC_QUERY_POOL):
		return "QUERY_POOL";
	}
	return "?";
}

/* Size of the first published version of each of new_cmds' arguments. */
static size_t new_first_size(unsigned long cmd)
{
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_QUERY_HEAP))
		return ACCMAP_HEAP_INFO_SIZE_VER1;
	return _IOC_SIZE(cmd);
}

/*
 * What valid_args() prepared and check_done() checks: the buffer it made
 * (if any), the dma-buf fd (FROM_FD), the user memory of WRITE/READ, and
 * the label SET_TAG_LABEL sets.
 */
struct abi_ctx {
	int dev;
	uint32_t id;
	int fd;
	uint8_t src[ABI_RW_LEN];
	uint8_t dst[ABI_RW_LEN];
	char label[ACCMAP_LABEL_LEN];
	unsigned int serial;
};

static void abi_release(struct abi_ctx *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->id)
		am_free(c->dev, c->id);
	c->id = 0;
}

static const char *tag_label_now(uint16_t tag, char *buf, size_t len)
{
	struct dbg_table t;
	char tagstr[8];
	long row;

	snprintf(buf, len, "(no row)");
	if (!dbg_read("tags", &t))
		return buf;
	snprintf(tagstr, sizeof(tagstr), "%u", tag);
	row = dbg_find(&t, "tag", tagstr, NULL, NULL);
	if (row >= 0)
		snprintf(buf, len, "%s", dbg_cell(&t, (size_t)row, "label"));
	dbg_free(&t);
	return buf;
}

/* Writes into buf a valid argument for cmd, on fresh objects. */
static void valid_args(struct abi_ctx *c, unsigned long cmd, void *buf)
{
	abi_release(c);
	c->serial++;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_FROM_FD): {
		struct accmap_from_fd a = { .fd = -1, .id = GARBAGE_U32 };

		c->id = new_buffer(c->dev, page_size(), 0, 0);
		c->fd = c->id ? export(c->dev, c->id, O_RDWR) : -1;
		a.fd = c->fd;
		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_WRITE):
	case _IOC_NR(ACCMAP_IOC_READ): {
		struct accmap_rw a;
		bool write = _IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_WRITE);

		c->id = new_buffer(c->dev, page_size(), 0, 0);
		fill_pattern(c->src, ABI_RW_LEN, 0, c->serial);
		memset(c->dst, GARBAGE_BYTE, ABI_RW_LEN);
		if (!write)
			CHECK(am_write(c->dev, c->id, ABI_RW_OFFSET, c->src, ABI_RW_LEN) == 0,
			      "WRITE");
		a = rw_arg(c->id, write ? c->src : c->dst, ABI_RW_OFFSET, ABI_RW_LEN / 4,
			   ABI_RW_LEN / 4, ABI_RW_LEN / 4, 4);
		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_SET_TAG_LABEL): {
		struct accmap_tag_label a = { .tag = ABI_TAG };

		/* The label before the call, then the one the call sets. */
		CHECK(am_set_label(c->dev, ABI_TAG, "abi-before") == 0, "SET_TAG_LABEL");
		snprintf(c->label, sizeof(c->label), "abi-%u", c->serial);
		memcpy(a.label, c->label, sizeof(a.label));
		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_QUERY_HEAP): {
		struct accmap_heap_info a;

		memset(&a, GARBAGE_BYTE, sizeof(a));
		a.heap = ACCMAP_HEAP_SYSTEM;
		a.pad = 0;
		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_QUERY_POOL): {
		struct accmap_pool_info a;

		memset(&a, GARBAGE_BYTE, sizeof(a));
		a.pad = 0;
		memcpy(buf, &a, sizeof(a));
		break;
	}
	}
}

/* After a successful call with valid_args(): did it do its job? */
static void check_done(struct abi_ctx *c, unsigned long cmd, const void *buf, const char *when)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_FROM_FD): {
		struct accmap_from_fd a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.fd == c->fd && a.flags == 0 && a.pad == 0, "%s: input fields changed",
		      when);
		if (CHECK(a.id != 0 && a.id != GARBAGE_U32 && a.id != c->id,
			  "%s: FROM_FD returned id %#x", when, a.id)) {
			check_info(c->dev, a.id, page_size(), ACCMAP_HEAP_SYSTEM, 0,
				   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0, when);
			check_counts(c->dev, c->id, 2, 1, 0, 0, when);
			am_free(c->dev, a.id);
		}
		break;
	}
	case _IOC_NR(ACCMAP_IOC_WRITE):
	case _IOC_NR(ACCMAP_IOC_READ): {
		bool write = _IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_WRITE);
		uint8_t back[ABI_RW_LEN];
		struct accmap_rw a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.bytes == ABI_RW_LEN, "%s: bytes %llu", when, (unsigned long long)a.bytes);
		CHECK(a.id == c->id && a.offset == ABI_RW_OFFSET && a.elem_size == ABI_RW_LEN / 4 &&
		      a.count == 4 && a.flags == 0, "%s: input fields changed", when);
		if (write) {
			memset(back, 0, sizeof(back));
			CHECK(am_read(c->dev, c->id, ABI_RW_OFFSET, back, sizeof(back)) == 0,
			      "READ");
			check_bytes(back, c->src, sizeof(back), when);
		} else {
			check_bytes(c->dst, c->src, sizeof(back), when);
		}
		break;
	}
	case _IOC_NR(ACCMAP_IOC_SET_TAG_LABEL): {
		char now[64];

		CHECK(!strcmp(tag_label_now(ABI_TAG, now, sizeof(now)), c->label),
		      "%s: tag %u is labelled '%s' in debugfs, expected '%s'", when, ABI_TAG, now,
		      c->label);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_QUERY_HEAP): {
		struct accmap_heap_info a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.heap == ACCMAP_HEAP_SYSTEM && a.pad == 0, "%s: heap %u pad %#x", when,
		      a.heap, a.pad);
		CHECK(!memcmp(a.name, "system\0\0\0\0\0\0\0\0\0\0", ACCMAP_HEAP_NAME_LEN),
		      "%s: name '%.16s'", when, a.name);
		/* The values themselves are checked by accmap_heaps. */
		CHECK(a.total != GARBAGE_U64 && a.used != GARBAGE_U64 && a.free != GARBAGE_U64 &&
		      a.largest_free != GARBAGE_U64 && a.contiguous != GARBAGE_U64,
		      "%s: total %llu used %llu free %llu largest_free %llu", when,
		      (unsigned long long)a.total, (unsigned long long)a.used,
		      (unsigned long long)a.free, (unsigned long long)a.largest_free);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_QUERY_POOL): {
		struct accmap_pool_info a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.norders >= 1 && a.norders <= ACCMAP_POOL_MAX_ORDERS && a.pad == 0 &&
		      a.pooled <= a.cap && a.hits != GARBAGE_U64 && a.misses != GARBAGE_U64 &&
		      a.shrunk != GARBAGE_U64,
		      "%s: norders %u pad %#x cap %llu pooled %llu", when, a.norders, a.pad,
		      (unsigned long long)a.cap, (unsigned long long)a.pooled);
		for (uint32_t i = 0; i < a.norders && i < ACCMAP_POOL_MAX_ORDERS; i++)
			CHECK(a.orders[i].block_size ==
			      (uint64_t)page_size() << a.orders[i].order && a.orders[i].pad == 0,
			      "%s: order %u block_size %llu", when, a.orders[i].order,
			      (unsigned long long)a.orders[i].block_size);
		break;
	}
	}
}

/* After a refused call with valid_args(): did it leave everything alone? */
static void check_not_done(struct abi_ctx *c, unsigned long cmd, const char *when)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_FROM_FD):
		if (c->id)
			check_counts(c->dev, c->id, 1, 1, 0, 0, when);
		break;
	case _IOC_NR(ACCMAP_IOC_WRITE): {
		uint8_t back[ABI_RW_LEN];

		if (CHECK(am_read(c->dev, c->id, ABI_RW_OFFSET, back, sizeof(back)) == 0, "READ"))
			CHECK(find_nonzero(back, sizeof(back)) == sizeof(back),
			      "%s: the refused WRITE wrote", when);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_READ):
		check_all(c->dst, ABI_RW_LEN, GARBAGE_BYTE, when);
		break;
	case _IOC_NR(ACCMAP_IOC_SET_TAG_LABEL): {
		char now[64];

		CHECK(!strcmp(tag_label_now(ABI_TAG, now, sizeof(now)), "abi-before"),
		      "%s: tag %u is labelled '%s' after a refused SET_TAG_LABEL", when,
		      ABI_TAG, now);
		break;
	}
	}
}

static void abi_init(struct abi_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->dev = am_open();
}

static void abi_fini(struct abi_ctx *c)
{
	if (c->dev < 0)
		return;
	abi_release(c);
	am_set_label(c->dev, ABI_TAG, "");
	close(c->dev);
}

static void test_abi_cmd_decoding(void)
{
	static const unsigned int types[] = { 0x00, 'd', 0xD9, 0xDB, 0xFF };
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	char buf[ARG_BUF_SIZE] = { 0 };
	struct abi_ctx c;

	abi_init(&c);
	if (c.dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(new_cmds); i++) {
		unsigned long cmd = new_cmds[i];

		for (size_t t = 0; t < TAP_ARRAY_SIZE(types); t++) {
			unsigned long bad = _IOC(_IOC_DIR(cmd), types[t], _IOC_NR(cmd),
						 _IOC_SIZE(cmd));

			valid_args(&c, cmd, buf);
			if (!CHECK_ERR(ioctl(c.dev, bad, buf), ENOTTY))
				tap_diag("%s with type %#x", new_cmd_name(cmd), types[t]);
		}
		for (size_t d = 0; d < TAP_ARRAY_SIZE(dirs); d++) {
			unsigned long bad = _IOC(dirs[d], ACCMAP_IOCTL_MAGIC, _IOC_NR(cmd),
						 _IOC_SIZE(cmd));

			if (dirs[d] == _IOC_DIR(cmd))
				continue;
			valid_args(&c, cmd, buf);
			if (!CHECK_ERR(ioctl(c.dev, bad, buf), ENOTTY))
				tap_diag("%s with direction %u", new_cmd_name(cmd), dirs[d]);
		}
	}
	abi_fini(&c);
}

static void test_abi_size_too_small(void)
{
	char buf[ARG_BUF_SIZE];
	struct abi_ctx c;

	abi_init(&c);
	if (c.dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(new_cmds); i++) {
		unsigned long cmd = new_cmds[i];
		size_t first = new_first_size(cmd);
		size_t sizes[] = { 0, 1, 4, first / 2, first - 8, first - 1 };

		for (size_t s = 0; s < TAP_ARRAY_SIZE(sizes); s++) {
			memset(buf, 0, sizeof(buf));
			valid_args(&c, cmd, buf);
			if (!CHECK_ERR(ioctl(c.dev, am_resize_cmd(cmd, sizes[s]), buf), EINVAL))
				tap_diag("%s with size %zu", new_cmd_name(cmd), sizes[s]);
			check_not_done(&c, cmd, "refused for its size");
		}
	}
	abi_fini(&c);
}

static void test_abi_zero_tail(void)
{
	/* 0: exactly the first (and current) version. */
	static const size_t extra[] = { 0, 8, 64, 240, ARG_BUF_SIZE - 512 };
	char *buf = calloc(1, ARG_BUF_SIZE);
	struct abi_ctx c;

	abi_init(&c);
	if (c.dev < 0 || !CHECK(buf, "calloc"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(new_cmds); i++) {
		unsigned long cmd = new_cmds[i];
		size_t size0 = _IOC_SIZE(cmd);

		for (size_t e = 0; e < TAP_ARRAY_SIZE(extra); e++) {
			size_t size = size0 + extra[e];
			char when[64];

			snprintf(when, sizeof(when), "%s with size %zu", new_cmd_name(cmd), size);
			memset(buf, 0, ARG_BUF_SIZE);
			valid_args(&c, cmd, buf);
			if (!CHECK_OK(ioctl(c.dev, am_resize_cmd(cmd, size), buf))) {
				tap_diag("%s", when);
				continue;
			}
			check_done(&c, cmd, buf, when);
			CHECK(find_nonzero(buf + size0, ARG_BUF_SIZE - size0) ==
			      ARG_BUF_SIZE - size0, "%s: bytes past the structure changed", when);
		}
	}
out:
	free(buf);
	abi_fini(&c);
}

static void test_abi_nonzero_tail(void)
{
	static const size_t extra[] = { 8, 64, ARG_BUF_SIZE - 512 };
	char *buf = calloc(1, ARG_BUF_SIZE);
	struct abi_ctx c;

	abi_init(&c);
	if (c.dev < 0 || !CHECK(buf, "calloc"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(new_cmds); i++) {
		unsigned long cmd = new_cmds[i];
		size_t size0 = _IOC_SIZE(cmd);

		for (size_t e = 0; e < TAP_ARRAY_SIZE(extra); e++) {
			size_t size = size0 + extra[e];
			size_t bad[] = { size0, size0 + 3, size - 1 };

			for (size_t b = 0; b < TAP_ARRAY_SIZE(bad); b++) {
				char when[80];
				char *copy = malloc(size);

				snprintf(when, sizeof(when), "%s with size %zu, byte %zu set",
					 new_cmd_name(cmd), size, bad[b]);
				memset(buf, 0, ARG_BUF_SIZE);
				valid_args(&c, cmd, buf);
				buf[bad[b]] = (char)0x80;
				if (copy)
					memcpy(copy, buf, size);
				if (!CHECK_ERR(ioctl(c.dev, am_resize_cmd(cmd, size), buf), E2BIG))
					tap_diag("%s", when);
				CHECK(!copy || !memcmp(copy, buf, size),
				      "%s: refused call wrote its argument", when);
				check_not_done(&c, cmd, when);
				free(copy);
			}
		}
	}
out:
	free(buf);
	abi_fini(&c);
}

static void test_abi_bad_pointer(void)
{
	size_t pg = page_size();
	struct abi_ctx c;
	char *area;

	abi_init(&c);
	if (c.dev < 0)
		return;
	/* [read-write page][inaccessible page][read-only page] */
	area = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(area != MAP_FAILED, "mmap: %s", strerror(errno)))
		goto out;
	CHECK_OK(mprotect(area + pg, pg, PROT_NONE));
	for (size_t i = 0; i < TAP_ARRAY_SIZE(new_cmds); i++) {
		unsigned long cmd = new_cmds[i];
		size_t size = _IOC_SIZE(cmd);
		const char *name = new_cmd_name(cmd);

		valid_args(&c, cmd, area);
		if (!CHECK_ERR(ioctl(c.dev, cmd, NULL), EFAULT))
			tap_diag("%s with NULL", name);
		if (!CHECK_ERR(ioctl(c.dev, cmd, area + pg), EFAULT))
			tap_diag("%s in an inaccessible page", name);
		if (!CHECK_ERR(ioctl(c.dev, cmd, area + pg - size / 2), EFAULT))
			tap_diag("%s straddling into an inaccessible page", name);
		check_not_done(&c, cmd, "refused with EFAULT on the argument");

		/* The known part readable, the tail not: the tail is read. */
		memset(area, 0, pg);
		valid_args(&c, cmd, area + pg - size);
		if (!CHECK_ERR(ioctl(c.dev, am_resize_cmd(cmd, size + 64), area + pg - size),
			       EFAULT))
			tap_diag("%s with its tail in an inaccessible page", name);
		check_not_done(&c, cmd, "refused with EFAULT on the tail");

		/*
		 * In a read-only page: an ioctl that writes its result back
		 * fails; SET_TAG_LABEL (_IOW) writes nothing and works.
		 */
		CHECK_OK(mprotect(area + 2 * pg, pg, PROT_READ | PROT_WRITE));
		valid_args(&c, cmd, area + 2 * pg);
		CHECK_OK(mprotect(area + 2 * pg, pg, PROT_READ));
		if (_IOC_DIR(cmd) & _IOC_READ) {
			if (!CHECK_ERR(ioctl(c.dev, cmd, area + 2 * pg), EFAULT))
				tap_diag("%s in a read-only page", name);
		} else {
			if (CHECK_OK(ioctl(c.dev, cmd, area + 2 * pg)))
				check_done(&c, cmd, area + 2 * pg, "in a read-only page");
			else
				tap_diag("%s in a read-only page", name);
		}
	}
	munmap(area, 3 * pg);
out:
	abi_fini(&c);
}

/* INFO: every size from the first version to this one is an older caller. */
static void test_abi_info_sizes(void)
{
	const size_t full = sizeof(struct accmap_info);
	unsigned char buf[sizeof(struct accmap_info) + 32];
	int dev = am_open();
	uint32_t id;
	int fd = -1;

	if (dev < 0)
		return;
	id = new_buffer(dev, 2 * page_size(), ACCMAP_ALLOC_WRITECOMBINE, 0x4242);
	fd = id ? export(dev, id, O_RDWR) : -1;
	if (fd < 0)
		goto out;
	for (size_t size = ACCMAP_INFO_SIZE_VER1; size <= full; size++) {
		struct accmap_info want = {
			.id = id, .pad = 0, .size = 2 * page_size(), .heap = ACCMAP_HEAP_SYSTEM,
			.flags = ACCMAP_ALLOC_WRITECOMBINE,
			.state = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, .tag = 0x4242,
			.pad2 = 0, .handle_refs = 1, .exports = 1, .maps = 0, .attachments = 0,
		};
		struct accmap_info in;

		memset(&in, GARBAGE_BYTE, sizeof(in));
		in.id = id;
		in.pad = 0;
		memset(buf, GARBAGE_BYTE, sizeof(buf));
		memcpy(buf, &in, size);
		if (!CHECK_OK(ioctl(dev, am_resize_cmd(ACCMAP_IOC_INFO, size), buf))) {
			tap_diag("INFO with size %zu", size);
			continue;
		}
		if (!CHECK(!memcmp(buf, &want, size), "INFO with size %zu: wrong output", size))
			continue;
		for (size_t i = size; i < sizeof(buf); i++) {
			if (!CHECK(buf[i] == GARBAGE_BYTE, "INFO with size %zu wrote byte %zu",
				   size, i))
				break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	close(dev);
}

/*
 * A reference made from a read-only dma-buf may read the buffer but not
 * write it, nor hand out a writable dma-buf: read-only export means it.
 */
static void test_from_fd_readonly_ref(void)
{
	const size_t len = 2 * page_size();
	uint32_t id = 0, ro_id = 0, rw_id = 0;
	char in[64], out[64];
	int dev = am_open(), dev2 = am_open();
	int ro = -1, rw = -1, fd;

	if (dev < 0 || dev2 < 0)
		goto out;
	if (!CHECK(am_create(dev, len, &id) == 0 && am_alloc(dev, id, 0, 0) == 0,
		   "create and alloc"))
		goto out;
	ro = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	rw = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(ro >= 0 && rw >= 0, "exports %d %d", ro, rw))
		goto out;
	memset(in, 0x3c, sizeof(in));
	CHECK(am_write(dev, id, 100, in, sizeof(in)) == 0, "owner WRITE");

	if (!CHECK(am_from_fd(dev2, ro, &ro_id) == 0, "FROM_FD of the O_RDONLY fd") ||
	    !CHECK(am_from_fd(dev2, rw, &rw_id) == 0, "FROM_FD of the O_RDWR fd"))
		goto out;
	check_info(dev2, ro_id, len, ACCMAP_HEAP_SYSTEM, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED | ACCMAP_STATE_READONLY,
		   0, "read-only import");
	check_info(dev2, rw_id, len, ACCMAP_HEAP_SYSTEM, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0, "read-write import");
	check_info(dev, id, len, ACCMAP_HEAP_SYSTEM, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0, "owner");

	memset(out, 0, sizeof(out));
	CHECK(am_read(dev2, ro_id, 100, out, sizeof(out)) == 0 &&
	      !memcmp(in, out, sizeof(in)), "READ through the read-only id");
	memset(out, 0x77, sizeof(out));
	CHECK(am_write(dev2, ro_id, 100, out, sizeof(out)) == -EACCES,
	      "WRITE through the read-only id not refused with EACCES");
	/* Range errors still come first. */
	CHECK(am_write(dev2, ro_id, len, out, 1) == -ERANGE, "WRITE past the end");
	fd = am_get_fd(dev2, ro_id, O_RDWR | O_CLOEXEC);
	CHECK(fd == -EACCES, "GET_FD O_RDWR through the read-only id: %d", fd);
	if (fd >= 0)
		close(fd);
	fd = am_get_fd(dev2, ro_id, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "GET_FD O_RDONLY through the read-only id: %d", fd);
	if (fd >= 0)
		close(fd);

	/* The same buffer through a writable id, and the owner, may write. */
	CHECK(am_write(dev2, rw_id, 100, out, sizeof(out)) == 0, "WRITE through the read-write id");
	memset(in, 0, sizeof(in));
	CHECK(am_read(dev, id, 100, in, sizeof(in)) == 0 && !memcmp(in, out, sizeof(out)),
	      "owner sees the read-write id's WRITE");
out:
	if (ro >= 0)
		close(ro);
	if (rw >= 0)
		close(rw);
	if (dev2 >= 0)
		close(dev2);
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "from_fd_bad_flags_pad", test_from_fd_bad_flags_pad },
	{ "from_fd_bad_fd", test_from_fd_bad_fd },
	{ "from_fd_not_dmabuf", test_from_fd_not_dmabuf },
	{ "from_fd_foreign", test_from_fd_foreign },
	{ "from_fd_same_client", test_from_fd_same_client },
	{ "from_fd_two_clients", test_from_fd_two_clients },
	{ "from_fd_cross_process", test_from_fd_cross_process },
	{ "from_fd_readonly_ref", test_from_fd_readonly_ref },
	{ "rw_unknown_id", test_rw_unknown_id },
	{ "rw_bad_args", test_rw_bad_args },
	{ "rw_overflow", test_rw_overflow },
	{ "rw_out_of_range", test_rw_out_of_range },
	{ "rw_no_memory", test_rw_no_memory },
	{ "rw_bad_user_memory", test_rw_bad_user_memory },
	{ "rw_contiguous_page_crossing", test_rw_contiguous_page_crossing },
	{ "rw_strided_rect", test_rw_strided_rect },
	{ "rw_scatter_gather", test_rw_scatter_gather },
	{ "rw_count1_strides_ignored", test_rw_count1_strides_ignored },
	{ "rw_1mib", test_rw_1mib },
	{ "zero_reuse_page", test_zero_reuse_page },
	{ "zero_reuse_1m", test_zero_reuse_1m },
	{ "stale_ids", test_stale_ids },
	{ "abi_cmd_decoding", test_abi_cmd_decoding },
	{ "abi_size_too_small", test_abi_size_too_small },
	{ "abi_zero_tail", test_abi_zero_tail },
	{ "abi_nonzero_tail", test_abi_nonzero_tail },
	{ "abi_bad_pointer", test_abi_bad_pointer },
	{ "abi_info_sizes", test_abi_info_sizes },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

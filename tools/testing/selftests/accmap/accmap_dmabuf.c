// SPDX-License-Identifier: GPL-2.0
/*
 * accmap dma-buf behaviour: mmap and lazy fault-in, CPU access sync, and
 * the lifetime of memory across FREE, close and process exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "accmap_util.h"
#include "tap.h"

static const uint32_t both_kinds[] = { 0, ACCMAP_ALLOC_WRITECOMBINE };

static int dma_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

static bool check_pattern(const void *p, size_t len, size_t start, unsigned int seed,
			  const char *what)
{
	size_t bad = find_pattern_mismatch(p, len, start, seed);

	return CHECK(bad == len, "%s: byte %zu of %zu differs from what was written", what,
		     bad, len);
}

static bool check_zero(const void *p, size_t len, const char *what)
{
	size_t bad = find_nonzero(p, len);

	return CHECK(bad == len, "%s: byte %zu of %zu is not zero", what, bad, len);
}

static uint32_t state_of(int dev, uint32_t id)
{
	struct accmap_info info;

	if (!CHECK(am_info(dev, id, &info) == 0, "INFO of id %u", id))
		return ~0U;
	return info.state;
}

/* ---- mmap ---- */

static void test_mmap_fresh_zero(void)
{
	size_t pg = page_size();
	const uint64_t sizes[] = { 1, pg, 5 * pg, 3 * pg + 1, 1 << 20 };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++) {
			size_t len = (sizes[i] + pg - 1) / pg * pg;
			uint32_t id;
			int fd = am_buffer(dev, sizes[i], both_kinds[k], &id, true);
			char *p;

			if (fd < 0)
				continue;
			p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
			if (p) {
				check_zero(p, len, "fresh buffer");
				munmap(p, len);
			}
			close(fd);
		}
	}
	close(dev);
}

static void test_mmap_reused_memory_zero(void)
{
	/* Dirty buffers, free them, and allocate again: memory comes back zeroed. */
	size_t len = 256 * 1024;
	int dev = am_open();

	if (dev < 0)
		return;
	for (int round = 0; round < 16; round++) {
		uint32_t id;
		int fd = am_buffer(dev, len, both_kinds[round & 1], &id, true);
		char *p;

		if (fd < 0)
			break;
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (p) {
			check_zero(p, len, "recycled buffer");
			memset(p, 0xff, len);
			munmap(p, len);
		}
		close(fd);
		CHECK(am_free(dev, id) == 0, "FREE");
	}
	close(dev);
}

static void test_mmap_two_mappings(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint32_t id;
		int fd = am_buffer(dev, len, both_kinds[k], &id, true);
		char *a, *b;

		if (fd < 0)
			continue;
		a = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		b = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (a && b) {
			fill_pattern(a, len, 0, 1);
			check_pattern(b, len, 0, 1, "second mapping after a write to the first");
			fill_pattern(b, len, 0, 2);
			check_pattern(a, len, 0, 2, "first mapping after a write to the second");
		}
		if (a)
			munmap(a, len);
		if (b)
			munmap(b, len);
		close(fd);
	}
	close(dev);
}

static void test_mmap_second_fd(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint32_t id;
		int fd1 = am_buffer(dev, len, both_kinds[k], &id, true);
		int fd2;
		char *a, *b;

		if (fd1 < 0)
			continue;
		fd2 = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
		if (!CHECK(fd2 >= 0, "second GET_FD: %s", strerror(-fd2))) {
			close(fd1);
			continue;
		}
		a = map_shared(fd1, len, PROT_READ | PROT_WRITE, 0);
		b = map_shared(fd2, len, PROT_READ | PROT_WRITE, 0);
		if (a && b) {
			fill_pattern(a, len, 0, 3);
			check_pattern(b, len, 0, 3, "second fd, after a write through the first");
			fill_pattern(b, len, 0, 4);
			check_pattern(a, len, 0, 4, "first fd, after a write through the second");
		}
		if (a)
			munmap(a, len);
		if (b)
			munmap(b, len);
		close(fd1);
		close(fd2);
	}
	close(dev);
}

static void test_mmap_offset(void)
{
	size_t pg = page_size();
	size_t len = 16 * pg;
	int dev = am_open();
	uint32_t id;
	char *whole, *part, *last;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	whole = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (!whole)
		goto out_fd;
	fill_pattern(whole, len, 0, 5);

	/* Pages 5..8 through a mapping at offset 5 pages. */
	part = map_shared(fd, 4 * pg, PROT_READ | PROT_WRITE, 5 * pg);
	if (part) {
		check_pattern(part, 4 * pg, 5 * pg, 5, "mapping at an offset");
		fill_pattern(part, 4 * pg, 5 * pg, 6);
		check_pattern(whole + 5 * pg, 4 * pg, 5 * pg, 6, "whole mapping, offset pages");
		check_pattern(whole, 5 * pg, 0, 5, "whole mapping, pages before the offset");
		check_pattern(whole + 9 * pg, 7 * pg, 9 * pg, 5, "whole mapping, pages after");
		munmap(part, 4 * pg);
	}
	/* The last page alone, mapped before the whole mapping faulted it. */
	last = map_shared(fd, pg, PROT_READ, len - pg);
	if (last) {
		check_pattern(last, pg, len - pg, 5, "mapping of the last page");
		munmap(last, pg);
	}
	munmap(whole, len);
out_fd:
	close(fd);
out:
	close(dev);
}

static void test_mmap_fault_order(void)
{
	/* Fault pages in backwards, then write them in a scattered order. */
	size_t pg = page_size();
	size_t len = 16 << 20, pages = len / pg;
	int dev = am_open();
	uint8_t *p;
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		size_t bad = pages;

		for (size_t i = pages; i > 0 && bad == pages; i--) {
			if (p[i * pg - 1])
				bad = i - 1;
		}
		CHECK(bad == pages, "page %zu not zero at first touch", bad);
		/* 7 is odd and pages a power of two: this visits every page once. */
		for (size_t i = 0; i < pages; i++) {
			size_t n = i * 7 % pages;

			p[n * pg + 17] = (uint8_t)n | 1;
		}
		for (size_t i = 0; i < pages && bad == pages; i++) {
			if (p[i * pg + 17] != ((uint8_t)i | 1))
				bad = i;
		}
		CHECK(bad == pages, "page %zu lost the byte written to it", bad);
		munmap(p, len);
	}
	close(fd);
out:
	close(dev);
}

static void test_mmap_beyond_size(void)
{
	size_t pg = page_size();
	size_t len = 4 * pg;
	int dev = am_open();
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	CHECK_ERR(mmap(NULL, len + pg, PROT_READ, MAP_SHARED, fd, 0), EINVAL);
	CHECK_ERR(mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)len), EINVAL);
	CHECK_ERR(mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)pg), EINVAL);
	CHECK_ERR(mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(3 * pg)),
		  EINVAL);
	CHECK_ERR(mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)1 << 40), EINVAL);
	close(fd);
out:
	close(dev);
}

static void test_mmap_private_refused(void)
{
	size_t len = 2 * page_size();
	int dev = am_open();
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	CHECK_ERR(mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0), EINVAL);
	CHECK_ERR(mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0), EINVAL);
	close(fd);
out:
	close(dev);
}

static void test_mmap_split_and_fork(void)
{
	/*
	 * Splitting a mapping and inheriting it across fork() create VMAs
	 * the driver did not map itself; each must keep the buffer alive.
	 */
	size_t pg = page_size();
	size_t len = 8 * pg;
	int dev = am_open();
	int status = -1;
	uint32_t id;
	pid_t pid;
	char *p;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	close(fd);
	if (!p)
		goto out;
	fill_pattern(p, len, 0, 7);
	CHECK_OK(munmap(p + 2 * pg, 2 * pg));
	CHECK_OK(munmap(p + 6 * pg, pg));
	/* Left: [0,2) [4,6) [7,8). */

	pid = fork();
	if (pid == 0) {
		fill_pattern(p + 4 * pg, 2 * pg, 4 * pg, 8);
		_exit(0);
	}
	if (CHECK(pid > 0, "fork: %s", strerror(errno))) {
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	}
	check_pattern(p, 2 * pg, 0, 7, "first piece");
	check_pattern(p + 4 * pg, 2 * pg, 4 * pg, 8, "piece written by the child");
	check_pattern(p + 7 * pg, pg, 7 * pg, 7, "last piece");

	CHECK(state_of(dev, id) & ACCMAP_STATE_EXPORTED, "not exported while mapped");
	CHECK_OK(munmap(p, 2 * pg));
	CHECK(state_of(dev, id) & ACCMAP_STATE_EXPORTED, "not exported while two pieces remain");
	CHECK_OK(munmap(p + 4 * pg, 2 * pg));
	CHECK(state_of(dev, id) & ACCMAP_STATE_EXPORTED, "not exported while one piece remains");
	CHECK_OK(munmap(p + 7 * pg, pg));
	CHECK(state_of(dev, id) == ACCMAP_STATE_ALLOCATED,
	      "state %#x after the last piece was unmapped", state_of(dev, id));
out:
	close(dev);
}

/* ---- DMA_BUF_IOCTL_SYNC ---- */

static void test_sync_valid(void)
{
	static const uint64_t dirs[] = {
		DMA_BUF_SYNC_READ, DMA_BUF_SYNC_WRITE, DMA_BUF_SYNC_RW,
	};
	size_t len = 4 * page_size();
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint32_t id;
		int fd = am_buffer(dev, len, both_kinds[k], &id, true);
		char *p;

		if (fd < 0)
			continue;
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		for (size_t d = 0; p && d < TAP_ARRAY_SIZE(dirs); d++) {
			unsigned int seed = 20 + d;

			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | dirs[d]));
			fill_pattern(p, len, 0, seed);
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | dirs[d]));
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
			check_pattern(p, len, 0, seed, "after sync");
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
		}
		/* Sync needs no mapping. */
		if (p)
			munmap(p, len);
		CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW));
		CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW));
		close(fd);
	}
	close(dev);
}

static void test_sync_invalid(void)
{
	static const uint64_t bad[] = {
		0,					/* no direction */
		DMA_BUF_SYNC_END,			/* no direction */
		DMA_BUF_SYNC_RW | (1ULL << 3),
		DMA_BUF_SYNC_READ | (1ULL << 63),
		~0ULL,
	};
	int dev = am_open();
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, page_size(), 0, &id, true);
	if (fd < 0)
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(bad); i++) {
		if (!CHECK_ERR(dma_sync(fd, bad[i]), EINVAL))
			tap_diag("sync flags %#llx", (unsigned long long)bad[i]);
	}
	close(fd);
out:
	close(dev);
}

/* ---- lifetime ---- */

static void test_free_while_mapped(void)
{
	size_t pg = page_size();
	size_t len = 8 * pg;
	struct accmap_info info;
	int dev = am_open();
	uint32_t id;
	char *p;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	close(fd);
	if (!p)
		goto out;
	/* Fault in half of it now, the rest only after everything is gone. */
	fill_pattern(p, len / 2, 0, 9);
	CHECK(am_free(dev, id) == 0, "FREE while mapped");
	CHECK(am_info(dev, id, &info) == -ENOENT, "id alive after FREE");
	close(dev);
	dev = -1;

	check_pattern(p, len / 2, 0, 9, "mapping after FREE and close");
	check_zero(p + len / 2, len / 2, "untouched pages after FREE and close");
	fill_pattern(p + len / 2, len / 2, len / 2, 9);
	check_pattern(p, len, 0, 9, "mapping written after FREE and close");
	munmap(p, len);
out:
	if (dev >= 0)
		close(dev);
}

static void test_free_while_fd_open(void)
{
	size_t len = 8 * page_size();
	int dev = am_open();
	uint32_t id;
	char *p;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		fill_pattern(p, len, 0, 10);
		munmap(p, len);
	}
	CHECK(am_free(dev, id) == 0, "FREE with a dma-buf open");

	CHECK(lseek(fd, 0, SEEK_END) == (off_t)len, "dma-buf size changed after FREE");
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW));
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		check_pattern(p, len, 0, 10, "new mapping after FREE");
		fill_pattern(p, len, 0, 11);
		check_pattern(p, len, 0, 11, "rewritten after FREE");
		munmap(p, len);
	}
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW));
	close(fd);
out:
	close(dev);
}

static void test_fd_outlives_device(void)
{
	size_t len = 16 * page_size();
	int dev = am_open();
	uint32_t id;
	char *p;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	close(dev);
	if (fd < 0)
		return;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		check_zero(p, len, "mapped after the device was closed");
		fill_pattern(p, len, 0, 12);
		munmap(p, len);
	}
	p = map_shared(fd, len, PROT_READ, 0);
	if (p) {
		check_pattern(p, len, 0, 12, "second mapping after the device was closed");
		munmap(p, len);
	}
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
	close(fd);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * Child: open the device, allocate and map several buffers, send one
 * dma-buf to the parent, and exit without freeing anything.
 */
static void client_child(int sock, size_t len)
{
	int dev = am_open();

	if (dev < 0)
		_exit(2);
	for (int i = 0; i < 8; i++) {
		uint32_t id;
		int fd = am_buffer(dev, len, both_kinds[i & 1], &id, true);
		char *p;

		if (fd < 0)
			_exit(3);
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (!p)
			_exit(4);
		fill_pattern(p, len, 0, 30 + i);
		/* Half the mappings stay for exit() to tear down. */
		if (i & 1)
			munmap(p, len);
		if (i == 5 && send_fd(sock, fd))
			_exit(5);
		if (i & 2)
			close(fd);
	}
	_exit(0);
}

static void test_client_exit_releases(void)
{
	size_t len = 64 * 1024;
	int dev = am_open();
	int status = -1, sv[2], fd, got;
	uint32_t id, id2;
	pid_t pid;
	char *p;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0 || !CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p)
		fill_pattern(p, len, 0, 40);

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		client_child(sv[1], len);
	}
	close(sv[1]);
	if (!CHECK(pid > 0, "fork: %s", strerror(errno)))
		goto out_sock;
	got = recv_fd(sv[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);

	/* The dma-buf the child sent outlives the child and its client. */
	if (CHECK(got >= 0, "no dma-buf received from the child")) {
		char *q = map_shared(got, len, PROT_READ, 0);

		if (q) {
			check_pattern(q, len, 0, 35, "dma-buf of an exited client");
			munmap(q, len);
		}
		close(got);
	}
	/* This client is untouched and keeps working. */
	if (p) {
		check_pattern(p, len, 0, 40, "own buffer after another client exited");
		munmap(p, len);
	}
	check_info(dev, id, len, ACCMAP_HEAP_SYSTEM, 0,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0, "after a client exited");
	if (am_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, &id2, false) == 0)
		CHECK(am_free(dev, id2) == 0, "FREE of a new buffer");
out_sock:
	close(sv[0]);
out:
	if (fd >= 0)
		close(fd);
	close(dev);
}

static void test_device_close_frees_handles(void)
{
	/*
	 * Many clients each leave a large buffer behind at close(); if close
	 * leaked them, the total would exceed RAM and ALLOC would fail.
	 */
	uint64_t ram = total_ram_bytes();
	size_t len = 32 << 20;
	int rounds;

	if (!CHECK(ram > 0, "sysinfo"))
		return;
	rounds = (int)(ram * 5 / 4 / len) + 2;
	for (int i = 0; i < rounds; i++) {
		int dev = am_open();
		uint32_t id;
		int fd;
		char *p;

		if (dev < 0)
			return;
		fd = am_buffer(dev, len, 0, &id, true);
		if (fd < 0) {
			tap_diag("round %d of %d", i, rounds);
			close(dev);
			return;
		}
		/* Touch every page so that the memory really exists. */
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (p) {
			for (size_t off = 0; off < len; off += page_size())
				p[off] = 1;
			munmap(p, len);
		}
		close(fd);
		close(dev);
	}
}

static void test_state_exported_tracks_dmabuf(void)
{
	size_t len = 2 * page_size();
	int dev = am_open();
	int fd1, fd2;
	uint32_t id;
	char *p;

	if (dev < 0)
		return;
	fd1 = am_buffer(dev, len, 0, &id, true);
	if (fd1 < 0)
		goto out;
	fd2 = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	CHECK(fd2 >= 0, "second GET_FD: %s", strerror(-fd2));
	CHECK(state_of(dev, id) == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED),
	      "state %#x with two dma-bufs", state_of(dev, id));
	close(fd1);
	CHECK(state_of(dev, id) == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED),
	      "state %#x with one dma-buf left", state_of(dev, id));
	p = fd2 >= 0 ? map_shared(fd2, len, PROT_READ, 0) : NULL;
	if (fd2 >= 0)
		close(fd2);
	if (p) {
		CHECK(state_of(dev, id) == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED),
		      "state %#x with only a mapping left", state_of(dev, id));
		munmap(p, len);
	}
	CHECK(state_of(dev, id) == ACCMAP_STATE_ALLOCATED,
	      "state %#x after the last dma-buf reference went", state_of(dev, id));
	/* And it can be exported again. */
	fd1 = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (CHECK(fd1 >= 0, "GET_FD again: %s", strerror(-fd1))) {
		CHECK(state_of(dev, id) == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED),
		      "state %#x after exporting again", state_of(dev, id));
		close(fd1);
	}
out:
	close(dev);
}

static void test_info_counters(void)
{
	size_t pg = page_size();
	size_t len = 4 * pg;
	int dev = am_open();
	int fd_a, fd_b, fd_c;
	char *p1, *p2;
	uint32_t id;

	if (dev < 0)
		return;
	fd_a = am_buffer(dev, len, 0, &id, true);
	if (fd_a < 0)
		goto out;
	check_counts(dev, id, 1, 1, 0, 0, "one read-write dma-buf");
	/* Same access mode: another descriptor of the same dma-buf. */
	fd_b = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	CHECK(fd_b >= 0, "GET_FD: %s", strerror(-fd_b));
	check_counts(dev, id, 1, 1, 0, 0, "two read-write descriptors");
	fd_c = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	CHECK(fd_c >= 0, "GET_FD: %s", strerror(-fd_c));
	check_counts(dev, id, 1, 2, 0, 0, "read-write and read-only dma-bufs");

	p1 = map_shared(fd_a, len, PROT_READ | PROT_WRITE, 0);
	p2 = fd_b >= 0 ? map_shared(fd_b, len, PROT_READ, 0) : NULL;
	if (!p1 || !p2)
		goto out_close;
	check_counts(dev, id, 1, 2, 2, 0, "two mappings");
	CHECK_OK(munmap(p1 + pg, pg));
	check_counts(dev, id, 1, 2, 3, 0, "one mapping split in two");

	close(fd_c);
	check_counts(dev, id, 1, 1, 3, 0, "read-only dma-buf closed");
	close(fd_a);
	close(fd_b);
	fd_a = -1;
	fd_b = -1;
	fd_c = -1;
	check_counts(dev, id, 1, 1, 3, 0, "descriptors closed, mappings left");
	CHECK_OK(munmap(p1, pg));
	CHECK_OK(munmap(p1 + 2 * pg, 2 * pg));
	check_counts(dev, id, 1, 1, 1, 0, "one mapping left");
	CHECK_OK(munmap(p2, len));
	p2 = NULL;
	check_counts(dev, id, 1, 0, 0, 0, "everything released");
out_close:
	if (p2)
		munmap(p2, len);
	if (fd_a >= 0)
		close(fd_a);
	if (fd_b >= 0)
		close(fd_b);
	if (fd_c >= 0)
		close(fd_c);
out:
	close(dev);
}

/* Minor faults this process has taken so far. */
static long minor_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt;
}

/*
 * A fault maps the 2 MiB-aligned block of addresses around it that the
 * mapping covers, not one page: writing every page of an 8 MiB mapping
 * takes at most one fault per block (5 when the mapping is not 2 MiB
 * aligned), where page-at-a-time takes 2048.  A mapping that covers part
 * of a block (here: 3 pages at an offset) gets only its own pages, and
 * every page still reads zero first and keeps what is written to it.
 */
static void test_mmap_fault_around(void)
{
	size_t pg = page_size();
	size_t len = 8 << 20, pages = len / pg;
	size_t blocks = len / (2 << 20) + 1;
	int dev = am_open();
	uint8_t *p, *part;
	long before, faults;
	uint32_t id;
	int fd;

	if (dev < 0)
		return;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (!p)
		goto out_fd;
	before = minor_faults();
	for (size_t i = 0; i < pages; i++) {
		if (p[i * pg + 9]) {
			CHECK(false, "page %zu not zero at first touch", i);
			break;
		}
		p[i * pg + 9] = (uint8_t)i | 1;
	}
	faults = minor_faults() - before;
	CHECK(faults >= 1 && (size_t)faults <= blocks,
	      "writing %zu pages took %ld faults, want 1..%zu", pages, faults, blocks);
	tap_diag("%zu pages made usable by %ld faults", pages, faults);

	/*
	 * 3 pages at offset 100: the neighbouring pages are not this vma's.
	 * One fault fills one page table, so a vma that mmap() happened to
	 * place across a page-table boundary takes two.
	 */
	part = map_shared(fd, 3 * pg, PROT_READ, 100 * pg);
	if (part) {
		size_t table = pg / 8 * pg;	/* bytes one last-level table maps */
		uintptr_t first = (uintptr_t)part, last = first + 3 * pg - 1;
		long want = first / table == last / table ? 1 : 2;

		before = minor_faults();
		for (size_t i = 0; i < 3; i++)
			CHECK(part[i * pg + 9] == ((uint8_t)(100 + i) | 1),
			      "page %zu of the partial mapping lost its byte", i);
		faults = minor_faults() - before;
		CHECK(faults == want, "3 pages of a partial mapping at %p: %ld faults, want %ld",
		      (void *)part, faults, want);
		munmap(part, 3 * pg);
	}
	for (size_t i = 0; i < pages; i++) {
		if (p[i * pg + 9] != ((uint8_t)i | 1)) {
			CHECK(false, "page %zu lost the byte written to it", i);
			break;
		}
	}
	munmap(p, len);
out_fd:
	close(fd);
out:
	close(dev);
}

static const struct tap_test tests[] = {
	{ "mmap_fresh_zero", test_mmap_fresh_zero },
	{ "mmap_reused_memory_zero", test_mmap_reused_memory_zero },
	{ "mmap_two_mappings", test_mmap_two_mappings },
	{ "mmap_second_fd", test_mmap_second_fd },
	{ "mmap_offset", test_mmap_offset },
	{ "mmap_fault_order", test_mmap_fault_order },
	{ "mmap_fault_around", test_mmap_fault_around },
	{ "mmap_beyond_size", test_mmap_beyond_size },
	{ "mmap_private_refused", test_mmap_private_refused },
	{ "mmap_split_and_fork", test_mmap_split_and_fork },
	{ "sync_valid", test_sync_valid },
	{ "sync_invalid", test_sync_invalid },
	{ "free_while_mapped", test_free_while_mapped },
	{ "free_while_fd_open", test_free_while_fd_open },
	{ "fd_outlives_device", test_fd_outlives_device },
	{ "client_exit_releases", test_client_exit_releases },
	{ "device_close_frees_handles", test_device_close_frees_handles },
	{ "state_exported_tracks_dmabuf", test_state_exported_tracks_dmabuf },
	{ "info_counters", test_info_counters },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

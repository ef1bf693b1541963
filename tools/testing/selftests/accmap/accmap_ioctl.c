// SPDX-License-Identifier: GPL-2.0
/*
 * accmap ioctl ABI and errno contract: command decoding, structure sizes,
 * user pointers, and each ioctl's fields, flags and errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

/* Larger than any accmap structure; the tail tests use up to this much. */
#define ARG_BUF_SIZE	4096

static const unsigned long all_cmds[] = {
	ACCMAP_IOC_CREATE,
	ACCMAP_IOC_ALLOC,
	ACCMAP_IOC_FREE,
	ACCMAP_IOC_GET_FD,
	ACCMAP_IOC_INFO,
};

/* Size of the first published version of each ioctl's argument. */
static size_t first_size(unsigned long cmd)
{
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_INFO))
		return ACCMAP_INFO_SIZE_VER1;
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_CREATE))
		return ACCMAP_CREATE_SIZE_VER1;
	return _IOC_SIZE(cmd);
}

static const char *cmd_name(unsigned long cmd)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_CREATE):
		return "CREATE";
	case _IOC_NR(ACCMAP_IOC_ALLOC):
		return "ALLOC";
	case _IOC_NR(ACCMAP_IOC_FREE):
		return "FREE";
	case _IOC_NR(ACCMAP_IOC_GET_FD):
		return "GET_FD";
	case _IOC_NR(ACCMAP_IOC_INFO):
		return "INFO";
	}
	return "?";
}

/* A one-page cached buffer with memory. */
static uint32_t new_allocated(int dev)
{
	uint32_t id = 0;

	if (am_buffer(dev, page_size(), 0, &id, false) < 0)
		return 0;
	return id;
}

static uint32_t new_unallocated(int dev)
{
	uint32_t id = 0;
	int ret = am_create(dev, page_size(), &id);

	CHECK(ret == 0, "CREATE: %s", strerror(-ret));
	return ret ? 0 : id;
}

/*
 * Writes into buf a valid argument for cmd, built on fresh handles, so
 * that a call with it can only fail for the reason a test introduces.
 */
static void valid_args(int dev, unsigned long cmd, void *buf)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_CREATE): {
		struct accmap_create a = { .size = page_size(), .id = GARBAGE_U32 };

		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_ALLOC): {
		struct accmap_alloc a = {
			.id = new_unallocated(dev),
			.heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
			.heap = GARBAGE_U32,
		};

		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_FREE): {
		struct accmap_free a = { .id = new_unallocated(dev) };

		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_GET_FD): {
		struct accmap_get_fd a = {
			.id = new_allocated(dev),
			.fd_flags = O_RDWR | O_CLOEXEC,
			.fd = (int32_t)GARBAGE_U32,
		};

		memcpy(buf, &a, sizeof(a));
		break;
	}
	case _IOC_NR(ACCMAP_IOC_INFO): {
		struct accmap_info a;

		memset(&a, GARBAGE_BYTE, sizeof(a));
		a.id = new_unallocated(dev);
		a.pad = 0;
		memcpy(buf, &a, sizeof(a));
		break;
	}
	}
}

/*
 * After a successful call with the argument from valid_args(), checks
 * that the call did what it should, and releases what it returned.
 */
static void check_done(int dev, unsigned long cmd, const void *buf, const char *when)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_CREATE): {
		struct accmap_create a;

		memcpy(&a, buf, sizeof(a));
		if (CHECK(a.id != 0 && a.id != GARBAGE_U32, "%s: CREATE returned id %#x",
			  when, a.id))
			check_info(dev, a.id, page_size(), ACCMAP_HEAP_NONE, 0, 0, 0, when);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_ALLOC): {
		struct accmap_alloc a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.heap == ACCMAP_HEAP_SYSTEM, "%s: ALLOC heap %#x", when, a.heap);
		check_info(dev, a.id, page_size(), ACCMAP_HEAP_SYSTEM, 0,
			   ACCMAP_STATE_ALLOCATED, 0, when);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_FREE): {
		struct accmap_free a;
		struct accmap_info info;

		memcpy(&a, buf, sizeof(a));
		CHECK(am_info(dev, a.id, &info) == -ENOENT, "%s: id %u lives after FREE",
		      when, a.id);
		break;
	}
	case _IOC_NR(ACCMAP_IOC_GET_FD): {
		struct accmap_get_fd a;

		memcpy(&a, buf, sizeof(a));
		if (CHECK(a.fd >= 0, "%s: GET_FD returned fd %d", when, a.fd)) {
			CHECK(lseek(a.fd, 0, SEEK_END) == (off_t)page_size(),
			      "%s: dma-buf size is not the buffer's", when);
			close(a.fd);
		}
		break;
	}
	case _IOC_NR(ACCMAP_IOC_INFO): {
		struct accmap_info a;

		memcpy(&a, buf, sizeof(a));
		CHECK(a.size == page_size() && a.heap == ACCMAP_HEAP_NONE && a.flags == 0 &&
		      a.state == 0 && a.tag == 0 && a.pad2 == 0,
		      "%s: INFO returned size %llu heap %#x flags %#x state %#x tag %#x pad2 %#x",
		      when, (unsigned long long)a.size, a.heap, a.flags, a.state, a.tag, a.pad2);
		break;
	}
	}
}

/* ---- command decoding ---- */

static void test_cmd_unknown_type(void)
{
	static const unsigned int types[] = { 0x00, 'd', 0xD9, 0xDB, 0xFF };
	int dev = am_open();
	char buf[ARG_BUF_SIZE] = { 0 };

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];

		for (size_t t = 0; t < TAP_ARRAY_SIZE(types); t++) {
			unsigned long cmd = _IOC(_IOC_DIR(c), types[t], _IOC_NR(c), _IOC_SIZE(c));

			valid_args(dev, c, buf);
			CHECK_ERR(ioctl(dev, cmd, buf), ENOTTY);
		}
	}
	close(dev);
}

static void test_cmd_unknown_nr(void)
{
	static const unsigned int nrs[] = { 0x7f, 0x80, 0xfe, 0xff };
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	int dev = am_open();
	char buf[ARG_BUF_SIZE] = { 0 };

	if (dev < 0)
		return;
	for (size_t n = 0; n < TAP_ARRAY_SIZE(nrs); n++) {
		for (size_t d = 0; d < TAP_ARRAY_SIZE(dirs); d++) {
			unsigned long cmd = _IOC(dirs[d], ACCMAP_IOCTL_MAGIC, nrs[n], 16);

			CHECK_ERR(ioctl(dev, cmd, buf), ENOTTY);
		}
	}
	close(dev);
}

static void test_cmd_wrong_direction(void)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	int dev = am_open();
	char buf[ARG_BUF_SIZE] = { 0 };

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];

		for (size_t d = 0; d < TAP_ARRAY_SIZE(dirs); d++) {
			unsigned long cmd;

			if (dirs[d] == _IOC_DIR(c))
				continue;
			cmd = _IOC(dirs[d], ACCMAP_IOCTL_MAGIC, _IOC_NR(c), _IOC_SIZE(c));
			valid_args(dev, c, buf);
			if (!CHECK_ERR(ioctl(dev, cmd, buf), ENOTTY))
				tap_diag("%s with direction %u", cmd_name(c), dirs[d]);
		}
	}
	close(dev);
}

/* ---- structure size ---- */

static void test_size_too_small(void)
{
	int dev = am_open();
	char buf[ARG_BUF_SIZE];

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];
		size_t first = first_size(c);
		size_t sizes[] = { 0, 1, first / 2, first - 1 };

		for (size_t s = 0; s < TAP_ARRAY_SIZE(sizes); s++) {
			memset(buf, 0, sizeof(buf));
			valid_args(dev, c, buf);
			if (!CHECK_ERR(ioctl(dev, am_resize_cmd(c, sizes[s]), buf), EINVAL))
				tap_diag("%s with size %zu", cmd_name(c), sizes[s]);
		}
	}
	close(dev);
}

static void test_size_larger_zero_tail(void)
{
	static const size_t extra[] = { 8, 64, 240, ARG_BUF_SIZE - 64 };
	int dev = am_open();
	char *buf = calloc(1, ARG_BUF_SIZE);

	if (dev < 0 || !CHECK(buf, "calloc"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];
		size_t size0 = _IOC_SIZE(c);

		for (size_t e = 0; e < TAP_ARRAY_SIZE(extra); e++) {
			size_t size = size0 + extra[e];
			char when[64];

			snprintf(when, sizeof(when), "%s with size %zu", cmd_name(c), size);
			memset(buf, 0, ARG_BUF_SIZE);
			valid_args(dev, c, buf);
			if (!CHECK_OK(ioctl(dev, am_resize_cmd(c, size), buf))) {
				tap_diag("%s", when);
				continue;
			}
			check_done(dev, c, buf, when);
			CHECK(find_nonzero(buf + size0, ARG_BUF_SIZE - size0) ==
			      ARG_BUF_SIZE - size0, "%s: bytes past the structure changed", when);
		}
	}
out:
	free(buf);
	if (dev >= 0)
		close(dev);
}

static void test_size_larger_nonzero_tail(void)
{
	static const size_t extra[] = { 8, 64, ARG_BUF_SIZE - 64 };
	int dev = am_open();
	char *buf = calloc(1, ARG_BUF_SIZE);

	if (dev < 0 || !CHECK(buf, "calloc"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];
		size_t size0 = _IOC_SIZE(c);

		for (size_t e = 0; e < TAP_ARRAY_SIZE(extra); e++) {
			size_t size = size0 + extra[e];
			/* The first and the last unknown byte. */
			size_t bad[] = { size0, size - 1 };

			for (size_t b = 0; b < TAP_ARRAY_SIZE(bad); b++) {
				struct accmap_info info;
				int fd_before = next_fd();
				uint32_t id;

				memset(buf, 0, ARG_BUF_SIZE);
				valid_args(dev, c, buf);
				memcpy(&id, buf, sizeof(id));
				buf[bad[b]] = 1;
				if (!CHECK_ERR(ioctl(dev, am_resize_cmd(c, size), buf), E2BIG)) {
					tap_diag("%s with size %zu, byte %zu set", cmd_name(c),
						 size, bad[b]);
					continue;
				}
				/* The refused call must not have done anything. */
				CHECK(next_fd() == fd_before, "%s: refused call leaked an fd",
				      cmd_name(c));
				if (c == ACCMAP_IOC_ALLOC)
					check_info(dev, id, page_size(), ACCMAP_HEAP_NONE, 0, 0, 0,
						   "ALLOC refused with E2BIG");
				if (c == ACCMAP_IOC_FREE)
					CHECK(am_info(dev, id, &info) == 0,
					      "FREE refused with E2BIG freed the handle");
			}
		}
	}
out:
	free(buf);
	if (dev >= 0)
		close(dev);
}

/* ---- user pointers ---- */

static void test_bad_pointer(void)
{
	size_t pg = page_size();
	int dev = am_open();
	char *area;

	if (dev < 0)
		return;
	/* [read-write page][inaccessible page][read-only page] */
	area = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK(area != MAP_FAILED, "mmap: %s", strerror(errno)))
		goto out;
	CHECK_OK(mprotect(area + pg, pg, PROT_NONE));

	for (size_t i = 0; i < TAP_ARRAY_SIZE(all_cmds); i++) {
		unsigned long c = all_cmds[i];
		size_t size = _IOC_SIZE(c);
		char *straddle = area + pg - size / 2;
		int fd_before = next_fd();

		if (!CHECK_ERR(ioctl(dev, c, NULL), EFAULT))
			tap_diag("%s with NULL", cmd_name(c));
		if (!CHECK_ERR(ioctl(dev, c, area + pg), EFAULT))
			tap_diag("%s in an inaccessible page", cmd_name(c));
		if (!CHECK_ERR(ioctl(dev, c, straddle), EFAULT))
			tap_diag("%s straddling into an inaccessible page", cmd_name(c));

		/* Known part readable, unknown tail not: the tail must be read. */
		memset(area, 0, pg);
		valid_args(dev, c, area + pg - size);
		if (!CHECK_ERR(ioctl(dev, am_resize_cmd(c, size + 64), area + pg - size), EFAULT))
			tap_diag("%s with its tail in an inaccessible page", cmd_name(c));

		/*
		 * Read-only memory: an ioctl that writes its result back must
		 * fail; FREE (_IOW) writes nothing and must succeed.
		 */
		CHECK_OK(mprotect(area + 2 * pg, pg, PROT_READ | PROT_WRITE));
		valid_args(dev, c, area + 2 * pg);
		CHECK_OK(mprotect(area + 2 * pg, pg, PROT_READ));
		if (_IOC_DIR(c) & _IOC_READ) {
			if (!CHECK_ERR(ioctl(dev, c, area + 2 * pg), EFAULT))
				tap_diag("%s in a read-only page", cmd_name(c));
		} else {
			if (!CHECK_OK(ioctl(dev, c, area + 2 * pg)))
				tap_diag("%s in a read-only page", cmd_name(c));
		}
		CHECK(next_fd() == fd_before, "%s: a call that faulted leaked an fd",
		      cmd_name(c));
	}
	munmap(area, 3 * pg);
out:
	close(dev);
}

/* ---- CREATE ---- */

static void test_create_bad_flags(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	for (unsigned int bit = 0; bit < 32; bit++) {
		struct accmap_create a = {
			.size = page_size(), .flags = 1U << bit, .id = GARBAGE_U32,
		};

		if (a.flags & ACCMAP_CREATE_VALID_FLAGS)
			continue;
		if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_CREATE, &a), EINVAL))
			tap_diag("CREATE flags %#x", 1U << bit);
	}
	close(dev);
}

static void test_create_size_zero(void)
{
	struct accmap_create a = { .size = 0, .flags = 0, .id = GARBAGE_U32 };
	int dev = am_open();

	if (dev < 0)
		return;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CREATE, &a), EINVAL);
	close(dev);
}

static void test_create_size_too_large(void)
{
	uint64_t ram = total_ram_bytes();
	uint64_t pg = page_size();
	const uint64_t sizes[] = {
		ram + 1,			/* just above all RAM */
		ram + pg,
		1ULL << 62,
		1ULL << 63,
		~0ULL - pg + 2,			/* wraps to 0 when page-rounded */
		~0ULL,
	};
	int dev = am_open();

	if (dev < 0 || !CHECK(ram > 0, "sysinfo: %s", strerror(errno)))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(sizes); i++) {
		struct accmap_create a = { .size = sizes[i], .flags = 0, .id = GARBAGE_U32 };

		if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_CREATE, &a), EINVAL))
			tap_diag("CREATE size %#llx (RAM %#llx)", (unsigned long long)sizes[i],
				 (unsigned long long)ram);
	}
out:
	if (dev >= 0)
		close(dev);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void test_create_distinct_ids(void)
{
	enum { COUNT = 128 };
	uint32_t ids[COUNT];
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < COUNT; i++) {
		struct accmap_create a = {
			.size = (i + 1) * 100, .flags = 0, .id = GARBAGE_U32,
		};

		ids[i] = 0;
		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_CREATE, &a)))
			goto out;
		CHECK(a.size == (i + 1) * 100 && a.flags == 0, "CREATE changed its input fields");
		CHECK(a.id != 0, "CREATE returned id 0");
		CHECK(a.id != GARBAGE_U32, "CREATE left id unset");
		ids[i] = a.id;
	}
	qsort(ids, COUNT, sizeof(ids[0]), cmp_u32);
	for (size_t i = 1; i < COUNT; i++)
		CHECK(ids[i] != ids[i - 1], "CREATE returned id %u twice", ids[i]);
out:
	close(dev);
}

static void test_create_size_rounding(void)
{
	uint64_t pg = page_size();
	const uint64_t in[] = { 1, pg - 1, pg, pg + 1, 3 * pg + 5, 1 << 20, (1 << 20) + 1 };
	const uint64_t out[] = { pg, pg, pg, 2 * pg, 4 * pg, 1 << 20, (1 << 20) + pg };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(in); i++) {
		uint32_t id = 0;
		int ret = am_create(dev, in[i], &id);

		if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)in[i],
			   strerror(-ret)))
			continue;
		check_info(dev, id, out[i], ACCMAP_HEAP_NONE, 0, 0, 0, "after CREATE");
		/* The rounded size is the size of the memory and of the dma-buf. */
		if (CHECK(am_alloc(dev, id, 0, 0) == 0, "ALLOC of %u", id)) {
			int fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);

			if (CHECK(fd >= 0, "GET_FD: %s", strerror(-fd))) {
				off_t end = lseek(fd, 0, SEEK_END);

				CHECK(end == (off_t)out[i], "dma-buf of %llu bytes is %lld bytes",
				      (unsigned long long)out[i], (long long)end);
				close(fd);
			}
		}
	}
	close(dev);
}

/* A caller built with the first, 16-byte accmap_create still works. */
static void test_create_version1(void)
{
	const unsigned long cmd_v1 = am_resize_cmd(ACCMAP_IOC_CREATE, ACCMAP_CREATE_SIZE_VER1);
	unsigned char buf[sizeof(struct accmap_create) + 16];
	struct accmap_create v1 = { .size = 3 * page_size() };
	int dev = am_open();

	if (dev < 0)
		return;
	memset(buf, GARBAGE_BYTE, sizeof(buf));
	memcpy(buf, &v1, ACCMAP_CREATE_SIZE_VER1);
	if (CHECK_OK(ioctl(dev, cmd_v1, buf))) {
		memcpy(&v1, buf, ACCMAP_CREATE_SIZE_VER1);
		if (CHECK(v1.id != 0, "version 1 CREATE gave id 0"))
			check_info(dev, v1.id, 3 * page_size(), ACCMAP_HEAP_NONE, 0, 0, 0,
				   "after a version 1 CREATE");
		for (size_t i = ACCMAP_CREATE_SIZE_VER1; i < sizeof(buf); i++) {
			if (!CHECK(buf[i] == GARBAGE_BYTE,
				   "byte %zu past a version 1 CREATE was written", i))
				break;
		}
	}
	close(dev);
}

/* CREATE with ACCMAP_CREATE_ALLOC: the id, its memory and its offset at once. */
static void test_create_alloc(void)
{
	struct accmap_create a = {
		.size = 2 * page_size() + 1, .flags = ACCMAP_CREATE_ALLOC,
		.id = GARBAGE_U32, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
		.alloc_flags = ACCMAP_ALLOC_WRITECOMBINE, .tag = 0x2c,
		.heap = GARBAGE_U32, .offset = ~0ULL,
	};
	struct accmap_map_offset mo = { 0 };
	size_t len = 3 * page_size();
	uint32_t word = 0x5eed1e55, got = 0;
	int dev = am_open();
	uint8_t *p;

	if (dev < 0)
		return;
	if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_CREATE, &a)))
		goto out;
	CHECK(a.id != 0 && a.id != GARBAGE_U32, "CREATE_ALLOC returned id %#x", a.id);
	CHECK(a.heap == ACCMAP_HEAP_SYSTEM, "CREATE_ALLOC heap %#x", a.heap);
	check_info(dev, a.id, len, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED, 0x2c, "after CREATE_ALLOC");
	/* The offset is the one MAP_OFFSET gives, and maps the buffer. */
	mo.id = a.id;
	if (CHECK_OK(ioctl(dev, ACCMAP_IOC_MAP_OFFSET, &mo)))
		CHECK(mo.offset == a.offset, "CREATE_ALLOC offset %#llx, MAP_OFFSET %#llx",
		      (unsigned long long)a.offset, (unsigned long long)mo.offset);
	CHECK(am_write(dev, a.id, len - sizeof(word), &word, sizeof(word)) == 0, "WRITE");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dev, (off_t)a.offset);
	if (CHECK(p != MAP_FAILED, "mmap at the CREATE_ALLOC offset: %s", strerror(errno))) {
		memcpy(&got, p + len - sizeof(word), sizeof(got));
		CHECK(got == word, "mapping reads %#x where WRITE put %#x", got, word);
		check_counts(dev, a.id, 1, 0, 1, 0, "mapped after CREATE_ALLOC");
		munmap(p, len);
	}
	CHECK(am_free(dev, a.id) == 0, "FREE after CREATE_ALLOC");
out:
	close(dev);
}

/*
 * Every refused CREATE_ALLOC names the errno of the field at fault and
 * leaves no id behind: the next CREATE gets the id right after the last
 * one that was handed out.
 */
static void test_create_alloc_errnos(void)
{
	static const struct {
		const char *name;
		struct accmap_create a;
		int err;
	} cases[] = {
		{ "heap_mask without ALLOC", { .heap_mask = ACCMAP_HEAP_MASK_SYSTEM }, EINVAL },
		{ "alloc_flags without ALLOC", { .alloc_flags = ACCMAP_ALLOC_UNCACHED }, EINVAL },
		{ "align without ALLOC", { .align = 4096 }, EINVAL },
		{ "tag without ALLOC", { .tag = 1 }, EINVAL },
		{ "pad", { .flags = ACCMAP_CREATE_ALLOC, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
			   .pad = 1 }, EINVAL },
		{ "pad2", { .flags = ACCMAP_CREATE_ALLOC, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
			    .pad2 = 1 }, EINVAL },
		{ "empty heap_mask", { .flags = ACCMAP_CREATE_ALLOC }, EINVAL },
		{ "no heap with that id", { .flags = ACCMAP_CREATE_ALLOC,
					    .heap_mask = 1U << ACCMAP_HEAP_USER }, ENODEV },
		/* Device memory is placed by SVM migration, never allocated. */
		{ "the device-memory heap", { .flags = ACCMAP_CREATE_ALLOC,
					      .heap_mask = 1U << ACCMAP_HEAP_DEVICE }, ENODEV },
		{ "unknown alloc flag", { .flags = ACCMAP_CREATE_ALLOC,
					  .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
					  .alloc_flags = 1U << 31 }, EINVAL },
		{ "write-combined and uncached", { .flags = ACCMAP_CREATE_ALLOC,
						  .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
						  .alloc_flags = ACCMAP_ALLOC_WRITECOMBINE |
								 ACCMAP_ALLOC_UNCACHED }, EINVAL },
		{ "align not a power of two", { .flags = ACCMAP_CREATE_ALLOC,
					       .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
					       .align = 3 * 4096 }, EINVAL },
		{ "align above the maximum", { .flags = ACCMAP_CREATE_ALLOC,
					      .heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
					      .align = ACCMAP_ALLOC_MAX_ALIGN * 2U }, EINVAL },
	};
	uint32_t last = 0, next = 0;
	int dev = am_open();

	if (dev < 0)
		return;
	if (!CHECK(am_create(dev, page_size(), &last) == 0, "CREATE"))
		goto out;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(cases); i++) {
		struct accmap_create a = cases[i].a;

		a.size = page_size();
		a.id = GARBAGE_U32;
		if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_CREATE, &a), cases[i].err))
			tap_diag("CREATE: %s", cases[i].name);
		CHECK(a.id == GARBAGE_U32, "CREATE (%s) refused but wrote id %#x",
		      cases[i].name, a.id);
	}
	/* An allocation too large for RAM fails in CREATE's own check. */
	{
		struct accmap_create a = {
			.size = total_ram_bytes() + page_size(), .flags = ACCMAP_CREATE_ALLOC,
			.heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
		};

		CHECK_ERR(ioctl(dev, ACCMAP_IOC_CREATE, &a), EINVAL);
	}
	if (CHECK(am_create(dev, page_size(), &next) == 0, "CREATE"))
		CHECK(next == last + 1, "refused CREATE_ALLOCs used ids: %u follows %u", next,
		      last);
out:
	close(dev);
}

/* ---- ALLOC ---- */

static void test_alloc_unknown_id(void)
{
	int dev = am_open();
	uint32_t live, freed;
	uint32_t bad[5];

	if (dev < 0)
		return;
	live = new_unallocated(dev);
	freed = new_unallocated(dev);
	CHECK(am_free(dev, freed) == 0, "FREE");
	bad[0] = 0;
	bad[1] = freed;
	bad[2] = live + 1000;
	bad[3] = 0x7fffffff;
	bad[4] = 0xffffffff;

	for (size_t i = 0; i < TAP_ARRAY_SIZE(bad); i++) {
		struct accmap_alloc a;

		if (bad[i] == live)
			continue;
		a = (struct accmap_alloc){
			.id = bad[i], .heap_mask = ACCMAP_HEAP_MASK_SYSTEM, .heap = GARBAGE_U32,
		};
		if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_ALLOC, &a), ENOENT))
			tap_diag("ALLOC id %#x", bad[i]);
	}
	close(dev);
}

static void alloc_expect(int dev, uint32_t id, uint32_t heap_mask, uint32_t flags,
			 uint32_t align, uint16_t pad, int err)
{
	struct accmap_alloc a = {
		.id = id, .heap_mask = heap_mask, .flags = flags, .align = align,
		.tag = 0, .pad = pad, .heap = GARBAGE_U32,
	};

	if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_ALLOC, &a), err))
		tap_diag("ALLOC heap_mask %#x flags %#x align %#x pad %#x", heap_mask, flags,
			 align, pad);
	/* Refused: the handle must still be without memory. */
	check_info(dev, id, page_size(), ACCMAP_HEAP_NONE, 0, 0, 0, "after a refused ALLOC");
}

static void test_alloc_bad_flags(void)
{
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	for (unsigned int bit = 0; bit < 32; bit++) {
		if ((1U << bit) & ACCMAP_ALLOC_VALID_FLAGS)
			continue;
		alloc_expect(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 1U << bit, 0, 0, EINVAL);
	}
	alloc_expect(dev, id, ACCMAP_HEAP_MASK_SYSTEM, ~0U, 0, 0, EINVAL);
	/* The handle is unharmed by the refusals. */
	CHECK(am_alloc(dev, id, 0, 0) == 0, "ALLOC after refused ALLOCs");
	close(dev);
}

static void test_alloc_bad_pad(void)
{
	static const uint16_t pads[] = { 1, 0x100, 0x8000, 0xffff };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++)
		alloc_expect(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, 0, pads[i], EINVAL);
	CHECK(am_alloc(dev, id, 0, 0) == 0, "ALLOC after refused ALLOCs");
	close(dev);
}

static void test_alloc_bad_align(void)
{
	const uint32_t aligns[] = {
		3, 5, 6, 0x30000, (uint32_t)page_size() + 1, (uint32_t)page_size() * 3,
		ACCMAP_ALLOC_MAX_ALIGN + 1, ACCMAP_ALLOC_MAX_ALIGN * 2U, 0xffffffff,
	};
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(aligns); i++)
		alloc_expect(dev, id, ACCMAP_HEAP_MASK_SYSTEM, 0, aligns[i], 0, EINVAL);
	CHECK(am_alloc(dev, id, 0, 0) == 0, "ALLOC after refused ALLOCs");
	close(dev);
}

static void test_alloc_good_align(void)
{
	const uint32_t aligns[] = {
		0, 1, 2, 64, (uint32_t)page_size(), 1U << 16, 1U << 21, ACCMAP_ALLOC_MAX_ALIGN,
	};
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(aligns); i++) {
		uint32_t id = new_unallocated(dev);
		struct accmap_alloc a = {
			.id = id, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM, .align = aligns[i],
			.heap = GARBAGE_U32,
		};

		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_ALLOC, &a))) {
			tap_diag("ALLOC align %#x", aligns[i]);
			continue;
		}
		CHECK(a.heap == ACCMAP_HEAP_SYSTEM, "ALLOC align %#x: heap %#x", aligns[i], a.heap);
		check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
			   "after an aligned ALLOC");
	}
	close(dev);
}

static void test_alloc_heap_mask_zero(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	alloc_expect(dev, new_unallocated(dev), 0, 0, 0, 0, EINVAL);
	close(dev);
}

static void test_alloc_heap_mask_no_heap(void)
{
	const uint32_t masks[] = { 1U << 5, 1U << 31, 1U << (ACCMAP_HEAP_MAX - 1), 0x7fff0000 };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(masks); i++)
		alloc_expect(dev, id, masks[i], 0, 0, 0, ENODEV);
	close(dev);
}

/*
 * The heap a cached ALLOC with every bit set must choose: the first
 * carveout, in id order, that gives cached buffers (ALLOC of it alone
 * succeeds), else the system heap.  accmap_carveout tests the order itself.
 */
static uint32_t first_cached_heap(int dev)
{
	for (uint32_t id = ACCMAP_HEAP_CARVEOUT_FIRST;
	     id < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; id++) {
		struct accmap_alloc a = { .id = new_unallocated(dev), .heap_mask = 1U << id };
		int ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);

		am_free(dev, a.id);
		if (!ret)
			return id;
	}
	return ACCMAP_HEAP_SYSTEM;
}

static void test_alloc_heap_mask_any(void)
{
	int dev = am_open();
	struct accmap_alloc a = {
		.heap_mask = ~0U, .flags = 0, .tag = 7, .heap = GARBAGE_U32,
	};
	uint32_t want;

	if (dev < 0)
		return;
	want = first_cached_heap(dev);
	a.id = new_unallocated(dev);
	if (CHECK_OK(ioctl(dev, ACCMAP_IOC_ALLOC, &a)))
		CHECK(a.heap == want, "heap_mask ~0 chose heap %#x, not %#x", a.heap, want);
	close(dev);
}

static void test_alloc_twice(void)
{
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	if (!CHECK(am_alloc(dev, id, ACCMAP_ALLOC_WRITECOMBINE, 0x1234) == 0, "first ALLOC"))
		goto out;
	CHECK(am_alloc(dev, id, ACCMAP_ALLOC_WRITECOMBINE, 0x1234) == -EEXIST,
	      "second identical ALLOC was not refused with EEXIST");
	CHECK(am_alloc(dev, id, 0, 0x4321) == -EEXIST,
	      "second ALLOC with other flags was not refused with EEXIST");
	/* The first allocation stands. */
	check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED, 0x1234, "after a refused second ALLOC");
out:
	close(dev);
}

static void alloc_success(uint32_t flags, uint16_t tag)
{
	uint64_t size = 5 * page_size() + 3;
	struct accmap_alloc a;
	int dev = am_open();
	uint32_t id = 0;

	if (dev < 0)
		return;
	if (!CHECK(am_create(dev, size, &id) == 0, "CREATE"))
		goto out;
	a = (struct accmap_alloc){
		.id = id, .heap_mask = ACCMAP_HEAP_MASK_SYSTEM, .flags = flags, .align = 0,
		.tag = tag, .pad = 0, .heap = GARBAGE_U32,
	};
	if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_ALLOC, &a)))
		goto out;
	CHECK(a.heap == ACCMAP_HEAP_SYSTEM, "ALLOC heap %#x", a.heap);
	CHECK(a.id == id && a.heap_mask == ACCMAP_HEAP_MASK_SYSTEM && a.flags == flags &&
	      a.align == 0 && a.tag == tag && a.pad == 0, "ALLOC changed its input fields");
	check_info(dev, id, 6 * page_size(), ACCMAP_HEAP_SYSTEM, flags, ACCMAP_STATE_ALLOCATED,
		   tag, "after ALLOC");
out:
	close(dev);
}

static void test_alloc_cached(void)
{
	alloc_success(0, 0xbeef);
}

static void test_alloc_writecombine(void)
{
	alloc_success(ACCMAP_ALLOC_WRITECOMBINE, 0xffff);
}

/* ---- FREE ---- */

static void test_free_unknown_id(void)
{
	int dev = am_open();
	uint32_t live = 0, freed = 0;

	if (dev < 0)
		return;
	if (am_create(dev, page_size(), &live) || am_create(dev, page_size(), &freed))
		goto out;
	CHECK(am_free(dev, freed) == 0, "first FREE");
	CHECK(am_free(dev, freed) == -ENOENT, "second FREE of id %u not ENOENT", freed);
	CHECK(am_free(dev, 0) == -ENOENT, "FREE of id 0 not ENOENT");
	CHECK(am_free(dev, live + 1000) == -ENOENT, "FREE of never-issued id not ENOENT");
	CHECK(am_free(dev, 0xffffffff) == -ENOENT, "FREE of id 0xffffffff not ENOENT");
	check_info(dev, live, page_size(), ACCMAP_HEAP_NONE, 0, 0, 0, "after bad FREEs");
out:
	close(dev);
}

static void test_free_bad_pad(void)
{
	static const uint32_t pads[] = { 1, 0x80000000, 0xffffffff };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_allocated(dev);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++) {
		struct accmap_free f = { .id = id, .pad = pads[i] };

		CHECK_ERR(ioctl(dev, ACCMAP_IOC_FREE, &f), EINVAL);
	}
	check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
		   "after FREE refused for its pad");
	CHECK(am_free(dev, id) == 0, "FREE after refused FREEs");
	close(dev);
}

static void stale_id_checks(int dev, uint32_t id, const char *what)
{
	struct accmap_info info;
	int fd_before = next_fd();

	CHECK(am_alloc(dev, id, 0, 0) == -ENOENT, "%s: ALLOC of a freed id", what);
	CHECK(am_get_fd(dev, id, O_RDWR) == -ENOENT, "%s: GET_FD of a freed id", what);
	CHECK(am_info(dev, id, &info) == -ENOENT, "%s: INFO of a freed id", what);
	CHECK(am_free(dev, id) == -ENOENT, "%s: FREE of a freed id", what);
	CHECK(next_fd() == fd_before, "%s: GET_FD of a freed id leaked an fd", what);
}

static void test_free_then_stale(void)
{
	int dev = am_open();
	uint32_t a, b, c;
	int fd;

	if (dev < 0)
		return;
	a = new_unallocated(dev);
	b = new_allocated(dev);
	c = new_allocated(dev);
	fd = am_get_fd(dev, c, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "GET_FD: %s", strerror(-fd));

	CHECK(am_free(dev, a) == 0, "FREE of an unallocated handle");
	stale_id_checks(dev, a, "unallocated");
	CHECK(am_free(dev, b) == 0, "FREE of an allocated handle");
	stale_id_checks(dev, b, "allocated");
	CHECK(am_free(dev, c) == 0, "FREE of an exported handle");
	stale_id_checks(dev, c, "exported");
	if (fd >= 0)
		close(fd);
	close(dev);
}

/* ---- GET_FD ---- */

static void get_fd_expect(int dev, uint32_t id, uint32_t fd_flags, uint32_t pad, int err)
{
	struct accmap_get_fd g = {
		.id = id, .fd_flags = fd_flags, .fd = (int32_t)GARBAGE_U32, .pad = pad,
	};
	int fd_before = next_fd();

	if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_GET_FD, &g), err))
		tap_diag("GET_FD id %u fd_flags %#x pad %#x", id, fd_flags, pad);
	CHECK(next_fd() == fd_before, "refused GET_FD leaked an fd");
}

static void test_get_fd_unknown_id(void)
{
	int dev = am_open();
	uint32_t live, freed;

	if (dev < 0)
		return;
	live = new_allocated(dev);
	freed = new_allocated(dev);
	CHECK(am_free(dev, freed) == 0, "FREE");
	get_fd_expect(dev, 0, O_RDWR, 0, ENOENT);
	get_fd_expect(dev, freed, O_RDWR, 0, ENOENT);
	get_fd_expect(dev, live + 1000, O_RDWR, 0, ENOENT);
	get_fd_expect(dev, 0xffffffff, O_RDWR | O_CLOEXEC, 0, ENOENT);
	close(dev);
}

static void test_get_fd_bad_pad(void)
{
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_allocated(dev);
	get_fd_expect(dev, id, O_RDWR, 1, EINVAL);
	get_fd_expect(dev, id, O_RDWR | O_CLOEXEC, 0x80000000, EINVAL);
	check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
		   "after refused GET_FD");
	close(dev);
}

static void test_get_fd_bad_flags(void)
{
	const uint32_t allowed = O_CLOEXEC | O_ACCMODE;
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_allocated(dev);
	for (unsigned int bit = 0; bit < 32; bit++) {
		if ((1U << bit) & allowed)
			continue;
		get_fd_expect(dev, id, O_RDWR | (1U << bit), 0, EINVAL);
	}
	/* Write-only and the invalid access mode 3 are not O_RDONLY/O_RDWR. */
	get_fd_expect(dev, id, O_WRONLY, 0, EINVAL);
	get_fd_expect(dev, id, O_WRONLY | O_CLOEXEC, 0, EINVAL);
	get_fd_expect(dev, id, O_ACCMODE, 0, EINVAL);
	get_fd_expect(dev, id, O_RDWR | O_NONBLOCK, 0, EINVAL);
	get_fd_expect(dev, id, O_RDWR | O_APPEND, 0, EINVAL);
	get_fd_expect(dev, id, ~0U, 0, EINVAL);
	check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
		   "after refused GET_FD");
	close(dev);
}

static void test_get_fd_before_alloc(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	get_fd_expect(dev, new_unallocated(dev), O_RDWR | O_CLOEXEC, 0, ENODATA);
	get_fd_expect(dev, new_unallocated(dev), O_RDONLY, 0, ENODATA);
	close(dev);
}

static int get_fd_checked(int dev, uint32_t id, uint32_t fd_flags)
{
	struct accmap_get_fd g = {
		.id = id, .fd_flags = fd_flags, .fd = (int32_t)GARBAGE_U32, .pad = 0,
	};

	if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_GET_FD, &g)))
		return -1;
	CHECK(g.id == id && g.fd_flags == fd_flags && g.pad == 0,
	      "GET_FD changed its input fields");
	if (!CHECK(g.fd >= 0 && g.fd != (int32_t)GARBAGE_U32, "GET_FD returned fd %d", g.fd))
		return -1;
	CHECK(fcntl(g.fd, F_GETFD) >= 0, "GET_FD returned fd %d that is not open", g.fd);
	return g.fd;
}

static void test_get_fd_cloexec(void)
{
	static const uint32_t modes[] = { O_RDONLY, O_RDWR };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_allocated(dev);
	for (size_t m = 0; m < TAP_ARRAY_SIZE(modes); m++) {
		int with = get_fd_checked(dev, id, modes[m] | O_CLOEXEC);
		int without = get_fd_checked(dev, id, modes[m]);

		if (with >= 0) {
			CHECK(fcntl(with, F_GETFD) == FD_CLOEXEC,
			      "fd from O_CLOEXEC has fd flags %#x", fcntl(with, F_GETFD));
			close(with);
		}
		if (without >= 0) {
			CHECK(fcntl(without, F_GETFD) == 0,
			      "fd from no O_CLOEXEC has fd flags %#x", fcntl(without, F_GETFD));
			close(without);
		}
	}
	close(dev);
}

static void check_access(int fd, int mode)
{
	size_t pg = page_size();
	int fl = fcntl(fd, F_GETFL);
	void *p;

	CHECK(fl >= 0 && (fl & O_ACCMODE) == mode, "dma-buf has file flags %#x, expected mode %d",
	      fl, mode);
	CHECK(lseek(fd, 0, SEEK_END) == (off_t)pg, "dma-buf size is not the buffer's");

	p = map_shared(fd, pg, PROT_READ, 0);
	if (p) {
		CHECK(find_nonzero(p, pg) == pg, "fresh buffer is not zero");
		if (mode == O_RDONLY)
			CHECK_ERR(mprotect(p, pg, PROT_READ | PROT_WRITE), EACCES);
		munmap(p, pg);
	}
	if (mode == O_RDONLY) {
		CHECK_ERR(mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
		CHECK_ERR(mmap(NULL, pg, PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
		return;
	}
	p = map_shared(fd, pg, PROT_READ | PROT_WRITE, 0);
	if (p) {
		fill_pattern(p, pg, 0, 11);
		CHECK(find_pattern_mismatch(p, pg, 0, 11) == pg, "O_RDWR mapping lost a write");
		/* Leave it zero for the next check_access(). */
		memset(p, 0, pg);
		munmap(p, pg);
	}
}

static void test_get_fd_access_mode(void)
{
	/* Both orders: one handle must give each fd its own access mode. */
	static const int modes[] = { O_RDONLY, O_RDWR, O_RDONLY, O_RDWR };
	int fds[TAP_ARRAY_SIZE(modes)];
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_allocated(dev);
	for (size_t m = 0; m < TAP_ARRAY_SIZE(modes); m++)
		fds[m] = get_fd_checked(dev, id, (uint32_t)modes[m] | O_CLOEXEC);
	for (size_t m = 0; m < TAP_ARRAY_SIZE(modes); m++) {
		if (fds[m] < 0)
			continue;
		check_access(fds[m], modes[m]);
		close(fds[m]);
	}
	close(dev);
}

/* ---- INFO ---- */

static void test_info_unknown_id(void)
{
	int dev = am_open();
	struct accmap_info info;
	uint32_t live, freed;

	if (dev < 0)
		return;
	live = new_unallocated(dev);
	freed = new_unallocated(dev);
	CHECK(am_free(dev, freed) == 0, "FREE");
	CHECK(am_info(dev, 0, &info) == -ENOENT, "INFO of id 0");
	CHECK(am_info(dev, freed, &info) == -ENOENT, "INFO of a freed id");
	CHECK(am_info(dev, live + 1000, &info) == -ENOENT, "INFO of a never-issued id");
	CHECK(am_info(dev, 0xffffffff, &info) == -ENOENT, "INFO of id 0xffffffff");
	close(dev);
}

static void test_info_bad_pad(void)
{
	static const uint32_t pads[] = { 1, 0x80000000, 0xffffffff };
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++) {
		struct accmap_info info;

		memset(&info, GARBAGE_BYTE, sizeof(info));
		info.id = id;
		info.pad = pads[i];
		CHECK_ERR(ioctl(dev, ACCMAP_IOC_INFO, &info), EINVAL);
	}
	close(dev);
}

static void test_info_version1(void)
{
	/* A caller built with the first, 32-byte accmap_info still works. */
	const unsigned long cmd_v1 = am_resize_cmd(ACCMAP_IOC_INFO, ACCMAP_INFO_SIZE_VER1);
	unsigned char buf[sizeof(struct accmap_info) + 16];
	struct accmap_info v1;
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	id = new_unallocated(dev);
	if (!CHECK(am_alloc(dev, id, ACCMAP_ALLOC_WRITECOMBINE, 0x1b1) == 0, "ALLOC"))
		goto out;
	memset(buf, GARBAGE_BYTE, sizeof(buf));
	memset(&v1, GARBAGE_BYTE, sizeof(v1));
	v1.id = id;
	v1.pad = 0;
	memcpy(buf, &v1, ACCMAP_INFO_SIZE_VER1);
	if (!CHECK_OK(ioctl(dev, cmd_v1, buf)))
		goto out;
	memcpy(&v1, buf, ACCMAP_INFO_SIZE_VER1);
	CHECK(v1.id == id && v1.pad == 0 && v1.size == page_size() &&
	      v1.heap == ACCMAP_HEAP_SYSTEM && v1.flags == ACCMAP_ALLOC_WRITECOMBINE &&
	      v1.state == ACCMAP_STATE_ALLOCATED && v1.tag == 0x1b1 && v1.pad2 == 0,
	      "version 1 INFO: id %u size %llu heap %#x flags %#x state %#x tag %#x pad2 %#x",
	      v1.id, (unsigned long long)v1.size, v1.heap, v1.flags, v1.state, v1.tag, v1.pad2);
	/* Nothing may be written past the caller's structure. */
	for (size_t i = ACCMAP_INFO_SIZE_VER1; i < sizeof(buf); i++) {
		if (!CHECK(buf[i] == GARBAGE_BYTE, "byte %zu past a version 1 INFO was written",
			   i))
			break;
	}
out:
	close(dev);
}

static void test_info_lifecycle(void)
{
	uint64_t size = 3 * page_size();
	int dev = am_open();
	uint32_t id = 0;
	int fd;

	if (dev < 0)
		return;
	if (!CHECK(am_create(dev, size, &id) == 0, "CREATE"))
		goto out;
	check_info(dev, id, size, ACCMAP_HEAP_NONE, 0, 0, 0, "after CREATE");
	if (!CHECK(am_alloc(dev, id, ACCMAP_ALLOC_WRITECOMBINE, 0xa11c) == 0, "ALLOC"))
		goto out;
	check_info(dev, id, size, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED, 0xa11c, "after ALLOC");
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
		goto out;
	check_info(dev, id, size, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED, 0xa11c, "with a dma-buf");
	close(fd);
	check_info(dev, id, size, ACCMAP_HEAP_SYSTEM, ACCMAP_ALLOC_WRITECOMBINE,
		   ACCMAP_STATE_ALLOCATED, 0xa11c, "after closing the dma-buf");
out:
	close(dev);
}

static void test_info_tags(void)
{
	static const uint16_t tags[] = { 0, 1, 0x7fff, 0x8000, 0xffff };
	int dev = am_open();

	if (dev < 0)
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(tags); i++) {
		uint32_t id = new_unallocated(dev);

		if (!CHECK(am_alloc(dev, id, 0, tags[i]) == 0, "ALLOC tag %#x", tags[i]))
			continue;
		check_info(dev, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED,
			   tags[i], "tagged");
	}
	close(dev);
}

/* ---- clients ---- */

static void test_client_ids_private(void)
{
	struct accmap_info info;
	int a = am_open();
	int b = am_open();
	uint32_t id;

	if (a < 0 || b < 0)
		goto out;
	id = new_allocated(a);
	/* b has created nothing: no id can be valid in it. */
	CHECK(am_info(b, id, &info) == -ENOENT, "id %u of one client is valid in another", id);
	CHECK(am_get_fd(b, id, O_RDWR) == -ENOENT, "GET_FD through another client");
	CHECK(am_free(b, id) == -ENOENT, "FREE through another client");
	check_info(a, id, page_size(), ACCMAP_HEAP_SYSTEM, 0, ACCMAP_STATE_ALLOCATED, 0,
		   "after another client's attempts");
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/* ---- CACHE and CACHE_LIST through read-only ids ---- */

static int cache_op(int dev, uint32_t id, uint32_t op, uint64_t offset, uint64_t length)
{
	struct accmap_cache_op c = { .id = id, .op = op, .offset = offset, .length = length };

	return raw_ioctl(dev, ACCMAP_IOC_CACHE, &c);
}

/* A read-only id: FROM_FD of an O_RDONLY export of a writable buffer. */
static uint32_t readonly_id_of(int dev, uint32_t id)
{
	uint32_t ro = 0;
	int fd = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);

	if (!CHECK(fd >= 0, "GET_FD O_RDONLY: %s", strerror(-fd)))
		return 0;
	CHECK(am_from_fd(dev, fd, &ro) == 0, "FROM_FD of the O_RDONLY export");
	close(fd);
	return ro;
}

/* A new allocated buffer's id, and a read-only id of it; false if not. */
static bool allocated_with_readonly_id(int dev, uint32_t *id, uint32_t *ro)
{
	*id = new_allocated(dev);
	*ro = *id ? readonly_id_of(dev, *id) : 0;
	return *ro;
}

static void test_cache_readonly_id(void)
{
	/*
	 * An invalidate discards what the owner wrote and did not write back:
	 * a read-only id may write back, never invalidate.
	 */
	size_t pg = page_size();
	int dev = am_open();
	uint32_t id, ro;

	if (dev < 0)
		return;
	if (!allocated_with_readonly_id(dev, &id, &ro))
		goto out;
	CHECK(cache_op(dev, ro, ACCMAP_CACHE_WRITEBACK, 0, pg) == 0, "write-back, read-only id");
	CHECK(cache_op(dev, ro, ACCMAP_CACHE_INVALIDATE, 0, pg) == -EACCES,
	      "invalidate, read-only id");
	CHECK(cache_op(dev, ro, ACCMAP_CACHE_WRITEBACK_INVALIDATE, 1, 1) == -EACCES,
	      "write-back-invalidate, read-only id");
	/* The range is checked first, the access after. */
	CHECK(cache_op(dev, ro, ACCMAP_CACHE_INVALIDATE, 0, pg + 1) == -ERANGE,
	      "invalidate beyond the buffer, read-only id");
	CHECK(cache_op(dev, ro, 4, 0, pg) == -EINVAL, "unknown op, read-only id");
	/* The writable id of the same buffer may do everything. */
	for (uint32_t op = ACCMAP_CACHE_WRITEBACK; op <= ACCMAP_CACHE_WRITEBACK_INVALIDATE; op++)
		CHECK(cache_op(dev, id, op, 0, pg) == 0, "op %u, writable id", op);
	CHECK_OK(am_free(dev, ro));
out:
	close(dev);
}

static void test_cache_list_readonly_id(void)
{
	/* Checked entry by entry before any runs; done names the refused one. */
	size_t pg = page_size();
	struct accmap_cache_op ops[3];
	struct accmap_cache_list l;
	int dev = am_open();
	uint32_t id, ro;
	int ret;

	if (dev < 0)
		return;
	if (!allocated_with_readonly_id(dev, &id, &ro))
		goto out;
	ops[0] = (struct accmap_cache_op){ .id = id, .op = ACCMAP_CACHE_INVALIDATE, .length = pg };
	ops[1] = (struct accmap_cache_op){ .id = ro, .op = ACCMAP_CACHE_WRITEBACK, .length = pg };
	ops[2] = (struct accmap_cache_op){ .id = ro, .op = ACCMAP_CACHE_INVALIDATE, .length = pg };
	for (uint32_t n = 2; n <= 3; n++) {
		l = (struct accmap_cache_list){ .ops = (uintptr_t)ops, .count = n,
						.done = GARBAGE_U32 };
		ret = raw_ioctl(dev, ACCMAP_IOC_CACHE_LIST, &l);
		if (n == 2)
			CHECK(ret == 0 && l.done == 2, "write-back, read-only id: %s, done %u",
			      strerror(-ret), l.done);
		else
			CHECK(ret == -EACCES && l.done == 2,
			      "invalidate, read-only id: %s, done %u", strerror(-ret), l.done);
	}
	ops[2].op = ACCMAP_CACHE_WRITEBACK_INVALIDATE;
	l = (struct accmap_cache_list){ .ops = (uintptr_t)ops, .count = 3, .done = GARBAGE_U32 };
	ret = raw_ioctl(dev, ACCMAP_IOC_CACHE_LIST, &l);
	CHECK(ret == -EACCES && l.done == 2, "write-back-invalidate, read-only id: %s, done %u",
	      strerror(-ret), l.done);
	CHECK_OK(am_free(dev, ro));
out:
	close(dev);
}

static const struct tap_test tests[] = {
	{ "cmd_unknown_type", test_cmd_unknown_type },
	{ "cmd_unknown_nr", test_cmd_unknown_nr },
	{ "cmd_wrong_direction", test_cmd_wrong_direction },
	{ "size_too_small", test_size_too_small },
	{ "size_larger_zero_tail", test_size_larger_zero_tail },
	{ "size_larger_nonzero_tail", test_size_larger_nonzero_tail },
	{ "bad_pointer", test_bad_pointer },
	{ "create_bad_flags", test_create_bad_flags },
	{ "create_size_zero", test_create_size_zero },
	{ "create_size_too_large", test_create_size_too_large },
	{ "create_distinct_ids", test_create_distinct_ids },
	{ "create_size_rounding", test_create_size_rounding },
	{ "create_version1", test_create_version1 },
	{ "create_alloc", test_create_alloc },
	{ "create_alloc_errnos", test_create_alloc_errnos },
	{ "alloc_unknown_id", test_alloc_unknown_id },
	{ "alloc_bad_flags", test_alloc_bad_flags },
	{ "alloc_bad_pad", test_alloc_bad_pad },
	{ "alloc_bad_align", test_alloc_bad_align },
	{ "alloc_good_align", test_alloc_good_align },
	{ "alloc_heap_mask_zero", test_alloc_heap_mask_zero },
	{ "alloc_heap_mask_no_heap", test_alloc_heap_mask_no_heap },
	{ "alloc_heap_mask_any", test_alloc_heap_mask_any },
	{ "alloc_twice", test_alloc_twice },
	{ "alloc_cached", test_alloc_cached },
	{ "alloc_writecombine", test_alloc_writecombine },
	{ "free_unknown_id", test_free_unknown_id },
	{ "free_bad_pad", test_free_bad_pad },
	{ "free_then_stale", test_free_then_stale },
	{ "get_fd_unknown_id", test_get_fd_unknown_id },
	{ "get_fd_bad_pad", test_get_fd_bad_pad },
	{ "get_fd_bad_flags", test_get_fd_bad_flags },
	{ "get_fd_before_alloc", test_get_fd_before_alloc },
	{ "get_fd_cloexec", test_get_fd_cloexec },
	{ "get_fd_access_mode", test_get_fd_access_mode },
	{ "info_unknown_id", test_info_unknown_id },
	{ "info_bad_pad", test_info_bad_pad },
	{ "info_version1", test_info_version1 },
	{ "info_lifecycle", test_info_lifecycle },
	{ "info_tags", test_info_tags },
	{ "client_ids_private", test_client_ids_private },
	{ "cache_readonly_id", test_cache_readonly_id },
	{ "cache_list_readonly_id", test_cache_list_readonly_id },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

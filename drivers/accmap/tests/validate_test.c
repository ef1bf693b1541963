// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's ioctl argument validation.
 */

#include <kunit/test.h>
#include <linux/fcntl.h>
#include <linux/ioctl.h>
#include <linux/mm.h>

#include "../accmap.h"

/* ---- ioctl command and size ---- */

struct ioctl_size_case {
	const char *name;
	unsigned int cmd;
	int ret;
};

#define KCMD ACCMAP_IOC_ALLOC
#define KSIZE ((unsigned int)sizeof(struct accmap_alloc))
/* Pretend the first published version ended 8 bytes before today's. */
#define MINSIZE (KSIZE - 8)

static const struct ioctl_size_case ioctl_size_cases[] = {
	{ "exact", KCMD, 0 },
	{ "older_shorter", _IOWR(ACCMAP_IOCTL_MAGIC, 0x01, char[MINSIZE]), 0 },
	{ "newer_longer", _IOWR(ACCMAP_IOCTL_MAGIC, 0x01, char[KSIZE + 64]), 0 },
	{ "below_first_version",
	  _IOWR(ACCMAP_IOCTL_MAGIC, 0x01, char[MINSIZE - 1]), -EINVAL },
	{ "zero_size", _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC, 0x01, 0),
	  -EINVAL },
	{ "wrong_type", _IOWR('x', 0x01, struct accmap_alloc), -ENOTTY },
	{ "wrong_nr", _IOWR(ACCMAP_IOCTL_MAGIC, 0x02, struct accmap_alloc), -ENOTTY },
	{ "write_only", _IOW(ACCMAP_IOCTL_MAGIC, 0x01, struct accmap_alloc), -ENOTTY },
	{ "read_only", _IOR(ACCMAP_IOCTL_MAGIC, 0x01, struct accmap_alloc), -ENOTTY },
	{ "no_direction", _IO(ACCMAP_IOCTL_MAGIC, 0x01), -ENOTTY },
};

static void ioctl_size_desc(const struct ioctl_size_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ioctl_size, ioctl_size_cases, ioctl_size_desc);

static void validate_ioctl_size(struct kunit *test)
{
	const struct ioctl_size_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_ioctl_size(c->cmd, KCMD, MINSIZE), c->ret);
}

/* ---- CREATE ---- */

struct create_case {
	const char *name;
	u64 size;
	u32 flags;
	int ret;
	u64 rounded;
};

#define MAX_SIZE BIT_ULL(30)

static const struct create_case create_cases[] = {
	{ "one_byte", 1, 0, 0, PAGE_SIZE },
	{ "one_page", PAGE_SIZE, 0, 0, PAGE_SIZE },
	{ "page_plus_one", PAGE_SIZE + 1, 0, 0, 2 * PAGE_SIZE },
	{ "max", MAX_SIZE, 0, 0, MAX_SIZE },
	{ "zero", 0, 0, -EINVAL },
	{ "max_plus_one", MAX_SIZE + 1, 0, -EINVAL },
	{ "huge", 1ULL << 62, 0, -EINVAL },
	{ "u64_max", U64_MAX, 0, -EINVAL },
	{ "u64_max_page_round", U64_MAX - PAGE_SIZE + 2, 0, -EINVAL },
	{ "flag_alloc", PAGE_SIZE, ACCMAP_CREATE_ALLOC, 0, PAGE_SIZE },
	{ "flag_bit1", PAGE_SIZE, 1U << 1, -EINVAL },
	{ "flag_bit31", PAGE_SIZE, 1U << 31, -EINVAL },
};

static void create_desc(const struct create_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(create, create_cases, create_desc);

static void validate_create(struct kunit *test)
{
	const struct create_case *c = test->param_value;
	struct accmap_create arg = { .size = c->size, .flags = c->flags };
	u64 size = 0xdeadbeef;

	KUNIT_ASSERT_EQ(test, accmap_check_create(&arg, MAX_SIZE, &size), c->ret);
	if (!c->ret)
		KUNIT_EXPECT_EQ(test, size, c->rounded);
	else
		KUNIT_EXPECT_EQ(test, size, 0xdeadbeefULL);
}

/* The limit applies after rounding, even with no limit below U64_MAX. */
static void validate_create_unbounded(struct kunit *test)
{
	struct accmap_create arg = { .size = U64_MAX - 1 };
	u64 size;

	KUNIT_EXPECT_EQ(test, accmap_check_create(&arg, U64_MAX, &size), -EINVAL);
	arg.size = U64_MAX - PAGE_SIZE + 1;
	KUNIT_EXPECT_EQ(test, accmap_check_create(&arg, U64_MAX, &size), 0);
	KUNIT_EXPECT_EQ(test, size, U64_MAX - PAGE_SIZE + 1);
}

/*
 * The version 2 fields: padding is refused always, the allocation fields
 * without ACCMAP_CREATE_ALLOC; the out fields are not looked at.
 */
static void validate_create_v2(struct kunit *test)
{
	static const struct {
		const char *name;
		struct accmap_create arg;
		int ret;
	} cases[] = {
		{ "heap_mask", { .heap_mask = 1 }, -EINVAL },
		{ "alloc_flags", { .alloc_flags = ACCMAP_ALLOC_WRITECOMBINE }, -EINVAL },
		{ "align", { .align = PAGE_SIZE }, -EINVAL },
		{ "tag", { .tag = 1 }, -EINVAL },
		{ "pad", { .pad = 1 }, -EINVAL },
		{ "pad2", { .pad2 = 1 }, -EINVAL },
		{ "alloc_pad", { .flags = ACCMAP_CREATE_ALLOC, .pad = 1 }, -EINVAL },
		{ "alloc_pad2", { .flags = ACCMAP_CREATE_ALLOC, .pad2 = 1 }, -EINVAL },
		{ "alloc_fields", { .flags = ACCMAP_CREATE_ALLOC, .heap_mask = 3,
				    .alloc_flags = ACCMAP_ALLOC_UNCACHED,
				    .align = PAGE_SIZE, .tag = 7 }, 0 },
		{ "out_fields", { .heap = 5, .offset = 1ULL << 40 }, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct accmap_create arg = cases[i].arg;
		u64 size = 0;

		arg.size = PAGE_SIZE;
		KUNIT_EXPECT_EQ_MSG(test, accmap_check_create(&arg, MAX_SIZE, &size),
				    cases[i].ret, "case %s", cases[i].name);
		if (!cases[i].ret)
			KUNIT_EXPECT_EQ_MSG(test, size, (u64)PAGE_SIZE, "case %s",
					    cases[i].name);
	}
}

/* ---- ALLOC ---- */

struct alloc_case {
	const char *name;
	struct accmap_alloc arg;
	u32 present;
	int ret;
	u32 usable;
};

#define SYS ACCMAP_HEAP_MASK_SYSTEM
#define WC ACCMAP_ALLOC_WRITECOMBINE
#define UC ACCMAP_ALLOC_UNCACHED

static const struct alloc_case alloc_cases[] = {
	{ "cached", { .heap_mask = SYS }, SYS, 0, SYS },
	{ "wc", { .heap_mask = SYS, .flags = WC }, SYS, 0, SYS },
	{ "uncached", { .heap_mask = SYS, .flags = UC }, SYS, 0, SYS },
	{ "tagged", { .heap_mask = SYS, .tag = 0xffff }, SYS, 0, SYS },
	{ "align_page", { .heap_mask = SYS, .align = 4096 }, SYS, 0, SYS },
	{ "align_max", { .heap_mask = SYS, .align = ACCMAP_ALLOC_MAX_ALIGN }, SYS, 0, SYS },
	{ "align_one", { .heap_mask = SYS, .align = 1 }, SYS, 0, SYS },
	{ "mask_any", { .heap_mask = ~0U }, SYS, 0, SYS },
	{ "mask_keeps_present", { .heap_mask = 0x6 }, 0x5, 0, 0x4 },
	{ "wc_and_uncached", { .heap_mask = SYS, .flags = WC | UC }, SYS, -EINVAL },
	{ "contiguous", { .heap_mask = SYS, .flags = ACCMAP_ALLOC_CONTIGUOUS }, SYS, 0, SYS },
	{ "contiguous_wc", { .heap_mask = SYS, .flags = ACCMAP_ALLOC_CONTIGUOUS | WC }, SYS, 0,
	  SYS },
	{ "contiguous_uncached", { .heap_mask = SYS, .flags = ACCMAP_ALLOC_CONTIGUOUS | UC },
	  SYS, 0, SYS },
	{ "contiguous_wc_and_uncached",
	  { .heap_mask = SYS, .flags = ACCMAP_ALLOC_CONTIGUOUS | WC | UC }, SYS, -EINVAL },
	/* The valid flags are the low bits: the next one up is unknown. */
	{ "unknown_flag", { .heap_mask = SYS, .flags = ACCMAP_ALLOC_VALID_FLAGS + 1 },
	  SYS, -EINVAL },
	{ "flag_bit31", { .heap_mask = SYS, .flags = 1U << 31 }, SYS, -EINVAL },
	{ "pad", { .heap_mask = SYS, .pad = 1 }, SYS, -EINVAL },
	{ "align_not_pow2", { .heap_mask = SYS, .align = 12288 }, SYS, -EINVAL },
	{ "align_too_big", { .heap_mask = SYS, .align = 1U << 31 }, SYS, -EINVAL },
	{ "mask_empty", { .heap_mask = 0 }, SYS, -EINVAL },
	{ "mask_absent_heap", { .heap_mask = 1U << 5 }, SYS, -ENODEV },
	{ "mask_absent_top", { .heap_mask = 1U << 31 }, SYS, -ENODEV },
};

static void alloc_desc(const struct alloc_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(alloc, alloc_cases, alloc_desc);

static void validate_alloc(struct kunit *test)
{
	const struct alloc_case *c = test->param_value;
	u32 usable = 0xdead;

	KUNIT_ASSERT_EQ(test, accmap_check_alloc(&c->arg, c->present, &usable), c->ret);
	if (!c->ret)
		KUNIT_EXPECT_EQ(test, usable, c->usable);
}

/* Carveouts in id order first, the system heap last, each once. */
static void validate_heap_order(struct kunit *test)
{
	u32 usable = BIT(0) | BIT(1) | BIT(3) | BIT(16);
	int expect[] = { 1, 3, 16, 0, -1 };
	int id = -1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(expect); i++) {
		id = accmap_heap_next(usable, id);
		KUNIT_EXPECT_EQ(test, id, expect[i]);
	}
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(0), -1), 0);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(0), 0), -1);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(2), -1), 2);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(2), 2), -1);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(31), 30), 31);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(BIT(31), 31), -1);
	KUNIT_EXPECT_EQ(test, accmap_heap_next(0, -1), -1);
}

/* ---- GET_FD ---- */

struct get_fd_case {
	const char *name;
	struct accmap_get_fd arg;
	int ret;
};

static const struct get_fd_case get_fd_cases[] = {
	{ "rdwr", { .fd_flags = O_RDWR }, 0 },
	{ "rdonly", { .fd_flags = O_RDONLY }, 0 },
	{ "rdwr_cloexec", { .fd_flags = O_RDWR | O_CLOEXEC }, 0 },
	{ "rdonly_cloexec", { .fd_flags = O_RDONLY | O_CLOEXEC }, 0 },
	{ "wronly", { .fd_flags = O_WRONLY }, -EINVAL },
	{ "accmode_3", { .fd_flags = O_ACCMODE }, -EINVAL },
	{ "nonblock", { .fd_flags = O_RDWR | O_NONBLOCK }, -EINVAL },
	{ "high_bit", { .fd_flags = O_RDWR | (1U << 31) }, -EINVAL },
	{ "pad", { .fd_flags = O_RDWR, .pad = 1 }, -EINVAL },
};

static void get_fd_desc(const struct get_fd_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(get_fd, get_fd_cases, get_fd_desc);

static void validate_get_fd(struct kunit *test)
{
	const struct get_fd_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_get_fd(&c->arg), c->ret);
}

/* ---- WRITE / READ ---- */

struct rw_case {
	const char *name;
	struct accmap_rw arg;
	u64 size;
	int ret;
};

#define RW(...) { .addr = 0x10000, .elem_size = 1, .count = 1, __VA_ARGS__ }

static const struct rw_case rw_cases[] = {
	{ "one_byte", RW(), 4096, 0 },
	{ "whole_buffer", RW(.elem_size = 4096), 4096, 0 },
	{ "last_byte", RW(.offset = 4095), 4096, 0 },
	{ "strided_fits", RW(.elem_size = 4, .count = 3, .user_stride = 4,
			     .handle_stride = 2046), 4096, 0 },
	{ "strided_last_exact", RW(.elem_size = 4, .count = 2, .user_stride = 4,
				   .handle_stride = 4092), 4096, 0 },
	{ "single_zero_strides", RW(.elem_size = 8), 4096, 0 },
	{ "past_end", RW(.offset = 4096), 4096, -ERANGE },
	{ "elem_past_end", RW(.elem_size = 2, .offset = 4095), 4096, -ERANGE },
	{ "strided_past_end", RW(.elem_size = 4, .count = 2, .user_stride = 4,
				 .handle_stride = 4093), 4096, -ERANGE },
	{ "zero_elem", RW(.elem_size = 0), 4096, -EINVAL },
	{ "zero_count", RW(.count = 0), 4096, -EINVAL },
	{ "flags", RW(.flags = 1), 4096, -EINVAL },
	{ "user_stride_short", RW(.elem_size = 4, .count = 2, .user_stride = 3,
				  .handle_stride = 4), 4096, -EINVAL },
	{ "handle_stride_short", RW(.elem_size = 4, .count = 2, .user_stride = 4,
				    .handle_stride = 3), 4096, -EINVAL },
	{ "count_overflow", RW(.elem_size = 1, .count = U64_MAX, .user_stride = 1,
			       .handle_stride = 1), U64_MAX, -EINVAL },
	{ "stride_overflow", RW(.elem_size = 1, .count = 3, .user_stride = 1,
				.handle_stride = U64_MAX / 2 + 1), U64_MAX, -EINVAL },
	{ "offset_overflow", RW(.elem_size = 2, .offset = U64_MAX), U64_MAX, -EINVAL },
	{ "addr_overflow", RW(.elem_size = 2, .addr = U64_MAX), 4096, -EINVAL },
};

static void rw_desc(const struct rw_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rw, rw_cases, rw_desc);

static void validate_rw(struct kunit *test)
{
	const struct rw_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_rw(&c->arg, c->size), c->ret);
}

/* ---- SET_TAG_LABEL ---- */

struct label_case {
	const char *name;
	struct accmap_tag_label arg;
	int ret;
};

static const struct label_case label_cases[] = {
	{ "simple", { .tag = 7, .label = "camera" }, 0 },
	{ "empty_clears", { .tag = 7, .label = "" }, 0 },
	{ "longest", { .label = "0123456789012345678901234567890" }, 0 },
	{ "spaces_punct", { .label = "npu weights #2 (fp16)" }, 0 },
	{ "no_nul", { .label = "01234567890123456789012345678901" }, -EINVAL },
	{ "control_char", { .label = "bad\tlabel" }, -EINVAL },
	{ "high_byte", { .label = "caf\xe9" }, -EINVAL },
	{ "garbage_after_nul", { .label = "ok\0x" }, -EINVAL },
	{ "pad", { .pad = 1, .label = "x" }, -EINVAL },
	{ "flags", { .flags = 1, .label = "x" }, -EINVAL },
};

static void label_desc(const struct label_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(label, label_cases, label_desc);

static void validate_tag_label(struct kunit *test)
{
	const struct label_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_tag_label(&c->arg), c->ret);
}

/* ---- CACHE ---- */

struct cache_case {
	const char *name;
	struct accmap_cache_op op;
	u64 size;
	int ret;
};

static const struct cache_case cache_cases[] = {
	{ "writeback", { .op = ACCMAP_CACHE_WRITEBACK, .length = 4096 }, 4096, 0 },
	{ "invalidate", { .op = ACCMAP_CACHE_INVALIDATE, .length = 1 }, 4096, 0 },
	{ "wb_inv", { .op = ACCMAP_CACHE_WRITEBACK_INVALIDATE, .offset = 4095,
		      .length = 1 }, 4096, 0 },
	{ "op_zero", { .op = 0, .length = 1 }, 4096, -EINVAL },
	{ "op_four", { .op = 4, .length = 1 }, 4096, -EINVAL },
	{ "op_high", { .op = 1U << 31, .length = 1 }, 4096, -EINVAL },
	{ "length_zero", { .op = ACCMAP_CACHE_WRITEBACK }, 4096, -EINVAL },
	{ "past_end", { .op = ACCMAP_CACHE_WRITEBACK, .offset = 1,
			.length = 4096 }, 4096, -ERANGE },
	{ "offset_at_end", { .op = ACCMAP_CACHE_WRITEBACK, .offset = 4096,
			     .length = 1 }, 4096, -ERANGE },
	{ "overflow", { .op = ACCMAP_CACHE_WRITEBACK, .offset = U64_MAX,
			.length = 2 }, U64_MAX, -EINVAL },
};

static void cache_desc(const struct cache_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cache, cache_cases, cache_desc);

static void validate_cache_op(struct kunit *test)
{
	const struct cache_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_cache_op(&c->op, c->size), c->ret);
}

/* ---- FROM_VA ---- */

struct from_va_case {
	const char *name;
	struct accmap_from_va arg;
	int ret;
};

/* A user address space of 128 TiB, buffers up to MAX_SIZE. */
#define TOP BIT_ULL(47)
#define PG ((u64)PAGE_SIZE)
#define VA(...) { .addr = 0x10000, .size = PG, __VA_ARGS__ }
#define W ACCMAP_FROM_VA_WRITE

static const struct from_va_case from_va_cases[] = {
	{ "one_page", VA(), 0 },
	{ "writable", VA(.flags = W), 0 },
	{ "tagged", VA(.tag = 0xffff), 0 },
	{ "id_is_output", VA(.id = 0xa5a5a5a5), 0 },
	{ "max_size", VA(.size = MAX_SIZE), 0 },
	{ "addr_zero", VA(.addr = 0), 0 },
	{ "last_page", VA(.addr = TOP - PG), 0 },
	{ "ends_at_top", VA(.addr = TOP - MAX_SIZE, .size = MAX_SIZE), 0 },
	{ "flag_bit1", VA(.flags = 1U << 1), -EINVAL },
	{ "flag_bit31", VA(.flags = W | 1U << 31), -EINVAL },
	{ "pad", VA(.pad = 1), -EINVAL },
	{ "pad2", VA(.pad2 = 1), -EINVAL },
	{ "size_zero", VA(.size = 0), -EINVAL },
	{ "size_one", VA(.size = 1), -EINVAL },
	{ "size_page_plus_one", VA(.size = PG + 1), -EINVAL },
	{ "size_half_page", VA(.size = PG / 2), -EINVAL },
	{ "addr_plus_one", VA(.addr = 0x10001), -EINVAL },
	{ "addr_half_page", VA(.addr = 0x10000 + PG / 2), -EINVAL },
	{ "size_above_max", VA(.size = MAX_SIZE + PG), -EINVAL },
	{ "size_huge", VA(.size = 1ULL << 62), -EINVAL },
	{ "size_u64_max_pages", VA(.size = U64_MAX & ~(PG - 1)), -EINVAL },
	{ "crosses_top", VA(.addr = TOP - PG, .size = 2 * PG), -EINVAL },
	{ "starts_at_top", VA(.addr = TOP), -EINVAL },
	{ "kernel_half", VA(.addr = 0xffff800000000000ULL), -EINVAL },
	{ "wraps_to_zero", VA(.addr = U64_MAX & ~(PG - 1)), -EINVAL },
	{ "wraps_past_zero", VA(.addr = U64_MAX & ~(PG - 1), .size = 2 * PG), -EINVAL },
};

static void from_va_desc(const struct from_va_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(from_va, from_va_cases, from_va_desc);

static void validate_from_va(struct kunit *test)
{
	const struct from_va_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&c->arg, TOP, MAX_SIZE), c->ret);
}

/* With neither bound in the way, only the arithmetic is left to refuse. */
static void validate_from_va_unbounded(struct kunit *test)
{
	struct accmap_from_va arg = { .addr = 0, .size = U64_MAX & ~(PG - 1) };

	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&arg, U64_MAX, U64_MAX), 0);
	arg.addr = PG;
	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&arg, U64_MAX, U64_MAX), -EINVAL);
	arg.size -= PG;
	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&arg, U64_MAX, U64_MAX), 0);
	/* The address-space bound is inclusive of its end, exclusive after. */
	arg.addr = 0;
	arg.size = TOP;
	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&arg, TOP, U64_MAX), 0);
	arg.size = TOP + PG;
	KUNIT_EXPECT_EQ(test, accmap_check_from_va(&arg, TOP, U64_MAX), -EINVAL);
}

/* ---- contiguous ALLOC size ---- */

static void validate_contig_size(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, accmap_check_contig_size(PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, accmap_check_contig_size(SZ_64M), 0);
	KUNIT_EXPECT_EQ(test, accmap_check_contig_size(ACCMAP_CONTIG_MAX_SIZE), 0);
	KUNIT_EXPECT_EQ(test, accmap_check_contig_size(ACCMAP_CONTIG_MAX_SIZE + PAGE_SIZE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, accmap_check_contig_size(U64_MAX & PAGE_MASK), -EINVAL);
}

/* ---- heap accounting ---- */

static void validate_heap_account(struct kunit *test)
{
	struct accmap_heap heap = { .name = "test" };
	u32 contig = ACCMAP_ALLOC_CONTIGUOUS;

	atomic64_set(&heap.used, 0);
	atomic64_set(&heap.contiguous, 0);
	accmap_heap_account(&heap, SZ_1M, contig, true);
	accmap_heap_account(&heap, SZ_64K, 0, true);
	accmap_heap_account(&heap, SZ_4M, contig | ACCMAP_ALLOC_WRITECOMBINE, true);
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.used), (s64)(SZ_1M + SZ_64K + SZ_4M));
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.contiguous), (s64)(SZ_1M + SZ_4M));

	accmap_heap_account(&heap, SZ_1M, contig, false);
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.used), (s64)(SZ_64K + SZ_4M));
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.contiguous), (s64)SZ_4M);
	accmap_heap_account(&heap, SZ_64K, 0, false);
	accmap_heap_account(&heap, SZ_4M, contig | ACCMAP_ALLOC_WRITECOMBINE, false);
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.used), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&heap.contiguous), 0);
}

static struct kunit_case validate_cases[] = {
	KUNIT_CASE_PARAM(validate_ioctl_size, ioctl_size_gen_params),
	KUNIT_CASE_PARAM(validate_create, create_gen_params),
	KUNIT_CASE(validate_create_unbounded),
	KUNIT_CASE(validate_create_v2),
	KUNIT_CASE_PARAM(validate_alloc, alloc_gen_params),
	KUNIT_CASE(validate_heap_order),
	KUNIT_CASE_PARAM(validate_get_fd, get_fd_gen_params),
	KUNIT_CASE_PARAM(validate_rw, rw_gen_params),
	KUNIT_CASE_PARAM(validate_tag_label, label_gen_params),
	KUNIT_CASE_PARAM(validate_cache_op, cache_gen_params),
	KUNIT_CASE_PARAM(validate_from_va, from_va_gen_params),
	KUNIT_CASE(validate_from_va_unbounded),
	KUNIT_CASE(validate_contig_size),
	KUNIT_CASE(validate_heap_account),
	{}
};

static struct kunit_suite validate_suite = {
	.name = "accmap-validate",
	.test_cases = validate_cases,
};

kunit_test_suite(validate_suite);

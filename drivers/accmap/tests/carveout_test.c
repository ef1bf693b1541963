// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's carveout module parameter parser and of the
 * rules every carveout list follows (carveout_parse.c).
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "../accmap.h"

#define MAXC	ACCMAP_HEAP_CARVEOUT_MAX

/* 16 and 17 distinct, non-overlapping 2 MiB carveouts. */
#define E2(i)	"2M@" #i "M"
#define SIXTEEN	E2(0) "," E2(2) "," E2(4) "," E2(6) "," E2(8) "," E2(10) "," \
		E2(12) "," E2(14) "," E2(16) "," E2(18) "," E2(20) "," E2(22) "," \
		E2(24) "," E2(26) "," E2(28) "," E2(30)

struct parse_case {
	const char *desc;
	const char *s;
	int ret;			/* count, or -EINVAL */
	enum accmap_carveout_err err;	/* when -EINVAL */
	int entry;			/* when -EINVAL */
	int other;			/* OVERLAP, DUP_NAME: clashes with */
	/* The first two carveouts when ret > 0. */
	struct accmap_carveout_spec spec[2];
};

#define GOOD1(d, str, b, sz, nm) \
	{ .desc = d, .s = str, .ret = 1, .spec = { { b, sz, nm } } }
#define BAD(d, str, e, idx) \
	{ .desc = d, .s = str, .ret = -EINVAL, .err = ACCMAP_CARVEOUT_##e, .entry = idx, \
	  .other = -1 }
#define CLASH(d, str, e, idx, with) \
	{ .desc = d, .s = str, .ret = -EINVAL, .err = ACCMAP_CARVEOUT_##e, .entry = idx, \
	  .other = with }

static const struct parse_case parse_cases[] = {
	{ .desc = "null", .s = NULL, .ret = 0 },
	{ .desc = "empty", .s = "", .ret = 0 },
	GOOD1("mega_hex_named", "64M@0x70000000:cam", 0x70000000, SZ_64M, "cam"),
	GOOD1("default_name", "64M@0x70000000", 0x70000000, SZ_64M, "carveout0"),
	GOOD1("plain_numbers", "4096@8192", 8192, 4096, "carveout0"),
	GOOD1("lower_suffixes", "2m@1g:a", SZ_1G, SZ_2M, "a"),
	GOOD1("kilo", "64K@128K:k", 128 * 1024, 64 * 1024, "k"),
	GOOD1("tera", "1G@1T:t", 1ULL << 40, SZ_1G, "t"),
	GOOD1("octal", "0200000@0:oct", 0, 0x10000, "oct"),
	GOOD1("upper_hex_prefix", "0X100000@0XA00000:h", 0xa00000, 0x100000, "h"),
	GOOD1("base_zero", "4K@0:zero", 0, SZ_4K, "zero"),
	GOOD1("name_15_chars", "4K@0:abcdefghijklmno", 0, SZ_4K, "abcdefghijklmno"),
	GOOD1("name_charset", "4K@0:a-z_0-9", 0, SZ_4K, "a-z_0-9"),
	GOOD1("high_base", "1M@0xffffffffffe00000:top", 0xffffffffffe00000ULL, SZ_1M, "top"),
	{ .desc = "two_adjacent", .s = "1M@0:a,1M@1M", .ret = 2,
	  .spec = { { 0, SZ_1M, "a" }, { SZ_1M, SZ_1M, "carveout1" } } },
	{ .desc = "sixteen", .s = SIXTEEN, .ret = MAXC,
	  .spec = { { 0, SZ_2M, "carveout0" }, { SZ_2M, SZ_2M, "carveout1" } } },

	BAD("no_at", "64M", SYNTAX, 0),
	BAD("no_size", "@0x1000", SYNTAX, 0),
	BAD("no_base", "64M@", SYNTAX, 0),
	BAD("bad_suffix", "64X@0", SYNTAX, 0),
	BAD("junk_after_base", "64M@0x70000000junk", SYNTAX, 0),
	BAD("suffix_twice", "1M@1Mk", SYNTAX, 0),
	BAD("negative", "-4K@0", SYNTAX, 0),
	BAD("space", " 4K@0", SYNTAX, 0),
	BAD("octal_digit_9", "09@0", SYNTAX, 0),
	BAD("leading_comma", ",64M@0", SYNTAX, 0),
	BAD("trailing_comma", "64M@0x70000000,", SYNTAX, 1),
	BAD("double_comma", "1M@0,,1M@1M", SYNTAX, 1),
	BAD("second_bad", "1M@0:a,1M", SYNTAX, 1),
	BAD("empty_name", "64M@0x70000000:", NAME, 0),
	BAD("upper_name", "64M@0x70000000:Cam", NAME, 0),
	BAD("name_with_space", "64M@0x70000000:a b", NAME, 0),
	BAD("name_with_dot", "4K@0:a.b", NAME, 0),
	BAD("name_16_chars", "4K@0:abcdefghijklmnop", NAME, 0),
	BAD("zero", "0@0x1000", ZERO, 0),
	BAD("zero_mega", "0M@0", ZERO, 0),
	BAD("size_not_page", "4097@0", ALIGN, 0),
	BAD("base_not_page", "4K@0x1001", ALIGN, 0),
	BAD("second_not_page", "4K@0,4K@0x10800", ALIGN, 1),
	BAD("suffix_overflow", "16E@0", OVERFLOW, 0),
	BAD("digits_overflow", "18446744073709551616@0", OVERFLOW, 0),
	BAD("hex_overflow", "0x10000000000000000@0", OVERFLOW, 0),
	BAD("too_many_digits", "000000000000000000000000000000001@0", OVERFLOW, 0),
	BAD("end_wraps", "2M@0xfffffffffff00000", OVERFLOW, 0),
	BAD("end_at_2_64", "1M@0xfffffffffff00000", OVERFLOW, 0),
	CLASH("overlap", "64M@0x70000000,32M@0x72000000", OVERLAP, 1, 0),
	CLASH("contained", "1M@0x100000:a,4K@0x180000:b", OVERLAP, 1, 0),
	CLASH("same_range", "1M@0:a,1M@0:b", OVERLAP, 1, 0),
	CLASH("overlap_third", "1M@0:a,1M@4M:b,2M@3M:c", OVERLAP, 2, 1),
	CLASH("dup_name", "1M@0:a,1M@1M:a", DUP_NAME, 1, 0),
	CLASH("dup_default_name", "1M@0,1M@1M:carveout0", DUP_NAME, 1, 0),
	CLASH("dup_name_third", "1M@0:a,1M@1M:b,1M@2M:a", DUP_NAME, 2, 0),
	BAD("seventeen", SIXTEEN "," E2(32), TOO_MANY, MAXC),
};

static void parse_desc(const struct parse_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(parse, parse_cases, parse_desc);

static void carveout_parse(struct kunit *test)
{
	const struct parse_case *c = test->param_value;
	struct accmap_carveout_spec *out;
	struct accmap_carveout_error err;
	int ret, i;

	out = kunit_kcalloc(test, MAXC, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memset(&err, 0xa5, sizeof(err));

	ret = accmap_parse_carveouts(c->s, out, MAXC, &err);
	KUNIT_ASSERT_EQ_MSG(test, ret, c->ret, "\"%s\": %s", c->s ?: "(null)",
			    accmap_carveout_strerror(err.code));
	if (ret < 0) {
		KUNIT_EXPECT_EQ(test, err.code, c->err);
		KUNIT_EXPECT_EQ(test, err.entry, c->entry);
		KUNIT_EXPECT_EQ(test, err.other, c->other);
		return;
	}
	KUNIT_EXPECT_EQ(test, err.code, ACCMAP_CARVEOUT_OK);
	for (i = 0; i < min(ret, 2); i++) {
		KUNIT_EXPECT_EQ(test, out[i].base, c->spec[i].base);
		KUNIT_EXPECT_EQ(test, out[i].size, c->spec[i].size);
		KUNIT_EXPECT_STREQ(test, out[i].name, c->spec[i].name);
	}
	/* Every entry valid on its own, named, and NUL-terminated. */
	for (i = 0; i < ret; i++) {
		KUNIT_EXPECT_EQ(test, accmap_check_carveout(&out[i]),
				ACCMAP_CARVEOUT_OK);
		KUNIT_EXPECT_TRUE(test, accmap_carveout_name_valid(out[i].name));
	}
}

/* A smaller room than entries: TOO_MANY at the first that does not fit. */
static void carveout_parse_small_room(struct kunit *test)
{
	struct accmap_carveout_spec out[2];
	struct accmap_carveout_error err;

	KUNIT_EXPECT_EQ(test, accmap_parse_carveouts("1M@0,1M@1M", out, 2, &err), 2);
	KUNIT_EXPECT_EQ(test, accmap_parse_carveouts("1M@0,1M@1M,1M@2M", out, 2, &err),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, err.code, ACCMAP_CARVEOUT_TOO_MANY);
	KUNIT_EXPECT_EQ(test, err.entry, 2);
}

/*
 * The checks the device-tree carveouts go through: one carveout on its
 * own, then the merged list (parameter first, device tree after).
 */
static void carveout_check_one(struct kunit *test)
{
	struct accmap_carveout_spec s = { .base = SZ_1M, .size = SZ_1M };

	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_OK);
	strscpy(s.name, "dt_cam", sizeof(s.name));
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_OK);
	strscpy(s.name, "Camera buffers", sizeof(s.name));
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_NAME);
	s.name[0] = '\0';
	s.size = 0;
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_ZERO);
	s.size = SZ_1M + 512;
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_ALIGN);
	s.size = SZ_1M;
	s.base = SZ_1M + 512;
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_ALIGN);
	s.base = round_down(U64_MAX, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, accmap_check_carveout(&s), ACCMAP_CARVEOUT_OVERFLOW);
}

static void carveout_check_merged(struct kunit *test)
{
	struct accmap_carveout_spec s[3] = {};
	struct accmap_carveout_error err;
	int i;

	s[0] = (struct accmap_carveout_spec){ .base = 0, .size = SZ_2M };
	s[1] = (struct accmap_carveout_spec){ .base = SZ_4M, .size = SZ_2M };
	s[2] = (struct accmap_carveout_spec){ .base = SZ_8M, .size = SZ_2M };
	for (i = 0; i < 3; i++)
		accmap_carveout_default_name(&s[i], i);
	KUNIT_EXPECT_STREQ(test, s[2].name, "carveout2");
	KUNIT_EXPECT_EQ(test, accmap_check_carveouts(s, 3, &err), 0);

	/* A device-tree label may clash with a parameter's default name. */
	strscpy(s[2].name, "carveout0", sizeof(s[2].name));
	KUNIT_EXPECT_EQ(test, accmap_check_carveouts(s, 3, &err), -EINVAL);
	KUNIT_EXPECT_EQ(test, err.code, ACCMAP_CARVEOUT_DUP_NAME);
	KUNIT_EXPECT_EQ(test, err.entry, 2);
	KUNIT_EXPECT_EQ(test, err.other, 0);

	/* A device-tree range may overlap a parameter's by one page. */
	strscpy(s[2].name, "dt", sizeof(s[2].name));
	s[2].base = SZ_2M - PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, accmap_check_carveouts(s, 3, &err), -EINVAL);
	KUNIT_EXPECT_EQ(test, err.code, ACCMAP_CARVEOUT_OVERLAP);
	KUNIT_EXPECT_EQ(test, err.entry, 2);
	KUNIT_EXPECT_EQ(test, err.other, 0);

	/* Touching is not overlapping. */
	s[2].base = SZ_2M;
	KUNIT_EXPECT_EQ(test, accmap_check_carveouts(s, 3, &err), 0);

	/* A name given is kept. */
	accmap_carveout_default_name(&s[2], 2);
	KUNIT_EXPECT_STREQ(test, s[2].name, "dt");
}

static void carveout_strerror(struct kunit *test)
{
	enum accmap_carveout_err e;

	for (e = ACCMAP_CARVEOUT_OK; e <= ACCMAP_CARVEOUT_TOO_MANY; e++) {
		KUNIT_EXPECT_NOT_NULL(test, accmap_carveout_strerror(e));
		KUNIT_EXPECT_STRNEQ(test, accmap_carveout_strerror(e), "unknown error");
	}
	KUNIT_EXPECT_STREQ(test, accmap_carveout_strerror(ACCMAP_CARVEOUT_TOO_MANY + 1),
			   "unknown error");
}

static struct kunit_case carveout_test_cases[] = {
	KUNIT_CASE_PARAM(carveout_parse, parse_gen_params),
	KUNIT_CASE(carveout_parse_small_room),
	KUNIT_CASE(carveout_check_one),
	KUNIT_CASE(carveout_check_merged),
	KUNIT_CASE(carveout_strerror),
	{}
};

static struct kunit_suite carveout_suite = {
	.name = "accmap_carveout",
	.test_cases = carveout_test_cases,
};

kunit_test_suite(carveout_suite);

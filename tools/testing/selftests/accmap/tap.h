/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP 13 runner for the accmap selftests.
 *
 * Every test runs in a child process of its own so that a crash, a hang
 * or a leaked object in one test cannot hide the result of the next one.
 * Checks record failures in memory shared with the runner, so a failure
 * seen in a thread or in a grandchild process still fails the test.
 */
#ifndef ACCMAP_SELFTEST_TAP_H
#define ACCMAP_SELFTEST_TAP_H

#include <stdbool.h>
#include <stddef.h>

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

struct tap_test {
	const char *name;
	void (*fn)(void);
};

#define TAP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Seconds a single test may run before it is killed and reported. */
#define TAP_TEST_TIMEOUT	300

__printf(4, 5)
bool tap_check(bool cond, const char *file, int line, const char *fmt, ...);
bool tap_check_err(long ret, int expected, const char *what, const char *file, int line);
bool tap_check_ok(long ret, const char *what, const char *file, int line);
__printf(1, 2) void tap_diag(const char *fmt, ...);
/*
 * The test could not check what it names, for the reason given: it is
 * reported "ok ... # SKIP reason" unless a check failed too.
 */
__printf(1, 2) void tap_skip(const char *fmt, ...);
bool tap_failed(void);
int tap_run(const struct tap_test *tests, size_t count);
/*
 * tap_run() without the tests named in @except (NULL-terminated) when
 * @why is not NULL: those are no tests of this system, for the reason
 * @why gives (one comment line each), and the plan does not count them.
 * A name that is not one of @tests bails out.
 */
int tap_run_except(const struct tap_test *tests, size_t count, const char *const *except,
		   const char *why);

/* Any condition; the message explains what was expected. */
#define CHECK(cond, ...)	tap_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/* A call that must fail with -1 and exactly this errno. */
#define CHECK_ERR(call, err)	tap_check_err((long)(call), (err), #call, __FILE__, __LINE__)
/* A call (ioctl, sys call) that must return exactly 0. */
#define CHECK_OK(call)		tap_check_ok((long)(call), #call, __FILE__, __LINE__)

#endif /* ACCMAP_SELFTEST_TAP_H */

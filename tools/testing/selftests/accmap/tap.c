// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal TAP 13 runner for the accmap selftests; see tap.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

#define TAP_REASON_LEN	480

/*
 * Lives in a MAP_SHARED anonymous page so that the test's process, its
 * threads and its children all report into the runner.
 */
struct tap_shared {
	int failures;
	int reason_taken;
	char reason[TAP_REASON_LEN];
	int skipped;
	char skip_reason[TAP_REASON_LEN];
};

static struct tap_shared *tap_state;

static void tap_vrecord(const char *file, int line, const char *fmt, va_list ap)
{
	const char *slash = strrchr(file, '/');
	char msg[TAP_REASON_LEN];
	int len;

	if (slash)
		file = slash + 1;
	len = snprintf(msg, sizeof(msg), "%s:%d: ", file, line);
	if (len < 0 || (size_t)len >= sizeof(msg))
		len = 0;
	vsnprintf(msg + len, sizeof(msg) - len, fmt, ap);

	/* A '#' would start a TAP directive in the result line. */
	for (char *c = msg; *c; c++) {
		if (*c == '#' || *c == '\n')
			*c = ' ';
	}

	printf("# FAIL %s\n", msg);
	fflush(stdout);

	if (!tap_state)
		return;
	__atomic_add_fetch(&tap_state->failures, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&tap_state->reason_taken, 1, __ATOMIC_SEQ_CST) == 0)
		memcpy(tap_state->reason, msg, sizeof(msg));
}

bool tap_check(bool cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return true;
	va_start(ap, fmt);
	tap_vrecord(file, line, fmt, ap);
	va_end(ap);
	return false;
}

static bool tap_record(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vrecord(file, line, fmt, ap);
	va_end(ap);
	return false;
}

static const char *err_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown errno";
}

bool tap_check_err(long ret, int expected, const char *what, const char *file, int line)
{
	/* Read errno first: nothing below may run before it is saved. */
	int err = errno;

	if (ret == -1 && err == expected)
		return true;
	if (ret != -1)
		return tap_record(file, line, "%s returned %ld, expected error %s",
				  what, ret, err_name(expected));
	return tap_record(file, line, "%s failed with %s, expected %s", what,
			  err_name(err), err_name(expected));
}

bool tap_check_ok(long ret, const char *what, const char *file, int line)
{
	int err = errno;

	if (ret == 0)
		return true;
	if (ret == -1)
		return tap_record(file, line, "%s failed with %s", what, err_name(err));
	return tap_record(file, line, "%s returned %ld, expected 0", what, ret);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void tap_skip(const char *fmt, ...)
{
	char msg[TAP_REASON_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *c = msg; *c; c++) {
		if (*c == '#' || *c == '\n')
			*c = ' ';
	}
	printf("# SKIP %s\n", msg);
	fflush(stdout);
	if (tap_state &&
	    __atomic_exchange_n(&tap_state->skipped, 1, __ATOMIC_SEQ_CST) == 0)
		memcpy(tap_state->skip_reason, msg, sizeof(msg));
}

bool tap_failed(void)
{
	return tap_state && __atomic_load_n(&tap_state->failures, __ATOMIC_SEQ_CST) != 0;
}

static bool tap_run_one(const struct tap_test *test, char *why, size_t why_len, bool *skipped)
{
	int status;
	pid_t pid;

	memset(tap_state, 0, sizeof(*tap_state));
	fflush(stdout);

	pid = fork();
	if (pid < 0) {
		snprintf(why, why_len, "fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0) {
		alarm(TAP_TEST_TIMEOUT);
		test->fn();
		fflush(stdout);
		_exit(tap_failed() ? 1 : 0);
	}

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(why, why_len, "waitpid: %s", strerror(errno));
			return false;
		}
	}

	if (tap_state->reason_taken) {
		snprintf(why, why_len, "%s", tap_state->reason);
		return false;
	}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			snprintf(why, why_len, "timed out after %d s", TAP_TEST_TIMEOUT);
		else
			snprintf(why, why_len, "killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, why_len, "exited with status %d", WEXITSTATUS(status));
		return false;
	}
	if (tap_state->skipped) {
		snprintf(why, why_len, "%s", tap_state->skip_reason);
		*skipped = true;
	}
	return true;
}

/* Whether @name is one of the NULL-terminated @names. */
static bool tap_named(const char *name, const char *const *names)
{
	for (; names && *names; names++)
		if (!strcmp(name, *names))
			return true;
	return false;
}

int tap_run_except(const struct tap_test *tests, size_t count, const char *const *except,
		   const char *why)
{
	char reason[TAP_REASON_LEN + 64];
	size_t passed = 0, n = 0;
	bool *run;

	/* Results must come out in order even through a pipe. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* A name that matches no test would leave that test in silently. */
	for (const char *const *e = except; e && *e; e++) {
		size_t i;

		for (i = 0; i < count && strcmp(tests[i].name, *e); i++)
			;
		if (i == count) {
			printf("Bail out! \"%s\" is not a test of this program\n", *e);
			return 1;
		}
	}
	run = calloc(count ? count : 1, sizeof(*run));
	if (!run) {
		printf("Bail out! out of memory\n");
		return 1;
	}
	tap_state = mmap(NULL, sizeof(*tap_state), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tap_state == MAP_FAILED) {
		printf("Bail out! cannot map the result page: %s\n", strerror(errno));
		free(run);
		return 1;
	}
	for (size_t i = 0; i < count; i++) {
		run[i] = !why || !tap_named(tests[i].name, except);
		n += run[i];
	}

	printf("TAP version 13\n");
	printf("1..%zu\n", n);
	for (size_t i = 0; i < count; i++)
		if (!run[i])
			printf("# %s: not a test here: %s\n", tests[i].name, why);
	for (size_t i = 0, num = 0; i < count; i++) {
		bool skipped = false;

		if (!run[i])
			continue;
		num++;
		if (tap_run_one(&tests[i], reason, sizeof(reason), &skipped)) {
			if (skipped)
				printf("ok %zu %s # SKIP %s\n", num, tests[i].name, reason);
			else
				printf("ok %zu %s\n", num, tests[i].name);
			passed++;
		} else {
			printf("not ok %zu %s # %s\n", num, tests[i].name, reason);
		}
	}
	printf("# passed %zu of %zu\n", passed, n);
	free(run);
	return passed == n ? 0 : 1;
}

int tap_run(const struct tap_test *tests, size_t count)
{
	return tap_run_except(tests, count, NULL, NULL);
}

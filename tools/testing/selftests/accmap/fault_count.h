/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page faults a thread takes inside one mapping.  getrusage() counts
 * every minor fault of a thread, its stack's and those that compaction or
 * reclaim cause by moving its pages included, so a test that counts the
 * faults a mapping takes through it fails now and then for reasons that
 * are not the mapping's.  The kernel's software perf event for minor
 * faults records each fault's address: the faults inside the mapping can
 * be told from the rest.  Where perf events cannot be opened (no
 * CONFIG_PERF_EVENTS, or a user that perf_event_paranoid refuses) the
 * count falls back to getrusage(), which can only count more.
 */
#ifndef ACCMAP_SELFTEST_FAULT_COUNT_H
#define ACCMAP_SELFTEST_FAULT_COUNT_H

#include <stdbool.h>
#include <stddef.h>

/* Faults whose address fault_count_stop() keeps. */
#define FAULT_COUNT_FIRST	4

/**
 * struct fault_count - one thread's minor faults being recorded
 * @fd: the perf event counting them, or -1 for the getrusage() fallback
 * @ring: its sample buffer, mapped
 * @ring_len: bytes of @ring
 * @minflt: the thread's minor faults by getrusage() at the start
 * @first: after fault_count_stop(), the offsets into the range of its
 *         first faults there, for failure messages (not in the fallback)
 */
struct fault_count {
	int fd;
	void *ring;
	size_t ring_len;
	long minflt;
	size_t first[FAULT_COUNT_FIRST];
};

/*
 * Starts recording the calling thread's minor faults.  Fails the test and
 * returns false only when not even getrusage() works.
 */
bool fault_count_start(struct fault_count *fc);

/*
 * Stops recording and returns the faults taken at addresses in
 * [@addr, @addr + @len) since fault_count_start(), the thread's every
 * fault in the fallback.  When @others is not NULL it gets the faults
 * elsewhere (0 in the fallback).  Returns -1, the test failed, when
 * samples were lost.
 */
long fault_count_stop(struct fault_count *fc, const void *addr, size_t len, long *others);

#endif

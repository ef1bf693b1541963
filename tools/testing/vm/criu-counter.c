// SPDX-License-Identifier: GPL-2.0
/*
 * accmap_criu_counter FILE: the process the criu_basic guest test dumps
 * and restores.  Counts up every 10 ms and writes "COUNT PID\n" (fixed
 * width, so FILE keeps its size: criu checks it at restore) at offset 0
 * of FILE.  Its state lives in memory: the count, and a 256 KiB buffer
 * whose every word follows from the count; before each step it checks
 * the buffer, so a restore that lost or mixed up memory is seen.  On a
 * bad buffer it writes "corrupt COUNT" and exits 2.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORDS (256 * 1024 / sizeof(uint64_t))

static uint64_t word(uint64_t count, size_t i)
{
	return (count * 0x9e3779b97f4a7c15ull) ^ (i * 0xff51afd7ed558ccdull);
}

int main(int argc, char **argv)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	uint64_t count = 0, *buf;
	char line[64];
	size_t i;
	int fd, n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 1;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	buf = malloc(WORDS * sizeof(*buf));
	if (fd < 0 || !buf) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < WORDS; i++)
		buf[i] = word(count, i);
	for (;;) {
		for (i = 0; i < WORDS; i++) {
			if (buf[i] != word(count, i)) {
				n = snprintf(line, sizeof(line), "corrupt %llu\n",
					     (unsigned long long)count);
				if (pwrite(fd, line, n, 0) != n)
					return 3;
				return 2;
			}
			buf[i] = word(count + 1, i);
		}
		count++;
		n = snprintf(line, sizeof(line), "%020llu %10d\n",
			     (unsigned long long)count, (int)getpid());
		if (pwrite(fd, line, n, 0) != n)
			return 3;
		nanosleep(&tick, NULL);
	}
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the accmap selftests: device and ioctl wrappers that
 * return -errno, byte patterns, and fd-leak probes.
 */
#ifndef ACCMAP_SELFTEST_UTIL_H
#define ACCMAP_SELFTEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/accmap.h>

#define ACCMAP_DEV_PATH		"/dev/accmap"

/* Fills output fields before a call, so that stale bytes cannot pass. */
#define GARBAGE_BYTE		0xa5
#define GARBAGE_U16		0xa5a5U
#define GARBAGE_U32		0xa5a5a5a5U
#define GARBAGE_U64		0xa5a5a5a5a5a5a5a5ULL

size_t page_size(void);
uint64_t total_ram_bytes(void);

/* open("/dev/accmap"); fails the test and returns -1 if it cannot. */
int am_open(void);

/* Each returns 0 (or a new fd for am_get_fd) on success, else -errno. */
int am_create(int dev, uint64_t size, uint32_t *id);
int am_alloc(int dev, uint32_t id, uint32_t flags, uint16_t tag);
int am_free(int dev, uint32_t id);
int am_get_fd(int dev, uint32_t id, uint32_t fd_flags);
int am_info(int dev, uint32_t id, struct accmap_info *info);

/*
 * CREATE then ALLOC (system heap) and, if want_fd, GET_FD O_RDWR|O_CLOEXEC.
 * Fails the test and returns -1 on any error; else returns the dma-buf fd,
 * or 0 when no fd was asked for.
 */
int am_buffer(int dev, uint64_t size, uint32_t flags, uint32_t *id, bool want_fd);

/*
 * INFO on id; checks every field against the expectation, the input
 * fields included.  "when" names the situation in a failure message.
 */
bool check_info(int dev, uint32_t id, uint64_t size, uint32_t heap, uint32_t flags,
		uint32_t state, uint16_t tag, const char *when);

/*
 * INFO on id; checks the counters of version 2 of accmap_info: client
 * references, live dma-bufs, CPU mappings and importer attachments.
 */
bool check_counts(int dev, uint32_t id, uint32_t handle_refs, uint32_t exports, uint32_t maps,
		  uint32_t attachments, const char *when);

/* mmap(MAP_SHARED) of a whole dma-buf; fails the test and returns NULL. */
void *map_shared(int fd, size_t len, int prot, size_t offset);

/* A pattern that differs from page to page and from seed to seed. */
void fill_pattern(void *buf, size_t len, size_t start, unsigned int seed);
/* Index of the first byte not matching, or len if all match. */
size_t find_pattern_mismatch(const void *buf, size_t len, size_t start, unsigned int seed);
/* Index of the first non-zero byte, or len if all are zero. */
size_t find_nonzero(const void *buf, size_t len);

/* The number the next new fd would get; a change reveals a leaked fd. */
int next_fd(void);

/* Result of a raw ioctl: 0 or -errno. */
int raw_ioctl(int fd, unsigned long cmd, void *arg);

#endif /* ACCMAP_SELFTEST_UTIL_H */

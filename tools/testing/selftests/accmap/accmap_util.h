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
/* Closes both fds of a pipe or socketpair, those that are open (>= 0); sets them to -1. */
void close_pair(int fds[2]);
/*
 * Lets a forked child that waits for a byte on the other end of @go_fd go
 * (kills it if the byte cannot be written), reaps it, and checks that it
 * exited with 0; the check's result.
 */
bool child_go_reap(pid_t pid, int go_fd);

/* Result of a raw ioctl: 0 or -errno. */
int raw_ioctl(int fd, unsigned long cmd, void *arg);

/* ---- helpers for the ioctls after the first five ---- */

/* FROM_FD: 0 and *id, or -errno. */
int am_from_fd(int dev, int fd, uint32_t *id);
/*
 * WRITE (write true) or READ of count elements; every field given, flags 0.
 * Returns 0 or -errno; on success *bytes (if not NULL) is the bytes field.
 */
int am_rw(int dev, bool write, uint32_t id, const void *addr, uint64_t offset,
	  uint64_t elem_size, uint64_t user_stride, uint64_t handle_stride, uint64_t count,
	  uint64_t *bytes);
/* One contiguous WRITE or READ of len bytes at offset. */
int am_write(int dev, uint32_t id, uint64_t offset, const void *buf, uint64_t len);
int am_read(int dev, uint32_t id, uint64_t offset, void *buf, uint64_t len);
/* SET_TAG_LABEL with a NUL-padded copy of label (at most 31 characters). */
int am_set_label(int dev, uint16_t tag, const char *label);
/* QUERY_HEAP / QUERY_POOL with every output field pre-filled with garbage. */
int am_query_heap(int dev, uint32_t heap, struct accmap_heap_info *info);
/* @cmd with its argument size changed to @size (an older or newer struct version). */
unsigned long am_resize_cmd(unsigned long cmd, size_t size);
int am_query_pool(int dev, struct accmap_pool_info *info);
/*
 * Polls QUERY_POOL until no block waits to be zeroed (at most timeout_ms);
 * returns 0, -ETIMEDOUT, or the errno of QUERY_POOL.
 */
int am_pool_wait_idle(int dev, unsigned int timeout_ms);

/* One fd over a unix socket (SCM_RIGHTS); 0 / the fd, or -1. */
int am_send_fd(int sock, int fd);
int am_recv_fd(int sock);
/* One byte over a socket, to step two processes in turn; 0 or -1. */
int am_send_byte(int sock, char c);
int am_recv_byte(int sock, char *c);

/*
 * The whole of the file at @path, NUL-terminated, in malloc'ed memory;
 * *@len (if not NULL) gets its length.  NULL with errno set if it cannot
 * be read.
 */
char *read_text(const char *path, size_t *len);
/*
 * Writes @text to the file at @path in one write() (a debugfs or procfs
 * knob); false, errno set, if it cannot be opened or takes less.
 */
bool write_text(const char *path, const char *text);

/* MemTotal of /proc/meminfo in bytes, 0 if it cannot be read. */
uint64_t meminfo_total_bytes(void);
/* /proc/self/comm without the newline, into a buffer of 16 bytes. */
void self_comm(char *comm);
/*
 * The value of "key:\t..." in /proc/self/fdinfo/fd, copied without the
 * newline into val; 0, or -ENOENT if there is no such line.
 */
int fdinfo_value(int fd, const char *key, char *val, size_t len);

/*
 * A debugfs table of accmap (/sys/kernel/debug/accmap/NAME): a header
 * line, then rows, fields separated by tabs, every line ending in '\n'.
 * dbg_read() fails the test (and returns false) if the file cannot be
 * read or is not such a table (a row with another number of fields).
 */
#define ACCMAP_DEBUGFS_DIR	"/sys/kernel/debug/accmap"

struct dbg_table {
	char *text;	/* the file, tabs and newlines turned into NULs */
	size_t nkeys;	/* "key<TAB>value" lines before the header */
	char **keys;	/* nkeys pairs: key, value */
	size_t ncols;	/* fields of the header */
	size_t nrows;	/* data rows, header not counted */
	char **cells;	/* (nrows + 1) * ncols; row 0 is the header */
};

bool dbg_read(const char *name, struct dbg_table *t);
/*
 * The same for a file that starts with @nkeys lines "key<TAB>value" (the
 * totals of debugfs devmem, say) before the header; fails the test unless
 * each of those lines has exactly two fields.
 */
bool dbg_read_keyed(const char *name, size_t nkeys, struct dbg_table *t);
void dbg_free(struct dbg_table *t);
/*
 * The number of data rows of debugfs table @name in *@rows and, if @sum is
 * not NULL, the sum of column @col over them in *@sum; false (a failed
 * check) if the table cannot be read.
 */
bool dbg_rows(const char *name, unsigned long long *rows, const char *col,
	      unsigned long long *sum);
/* The key of key line @i (0-based, in file order); "" if there is none. */
const char *dbg_key(const struct dbg_table *t, size_t i);
/* The value of the first key line with that key, or NULL. */
const char *dbg_value(const struct dbg_table *t, const char *key);
/* That value as an unsigned number; ~0ULL if missing or not a decimal number. */
unsigned long long dbg_value_num(const struct dbg_table *t, const char *key);
/*
 * The number on the last line "key<TAB>number" of debugfs file @name (the
 * totals under a table, such as replay's kept_sessions), or -1 if the
 * file cannot be read or has no such line.
 */
long long dbg_total(const char *name, const char *key);
/* Index of the column with that header, or -1. */
int dbg_col(const struct dbg_table *t, const char *name);
/* Field of data row (0-based) in the named column; "" if no such column. */
const char *dbg_cell(const struct dbg_table *t, size_t row, const char *col);
/* Field as an unsigned number; ~0ULL if it is not a decimal number. */
unsigned long long dbg_num(const struct dbg_table *t, size_t row, const char *col);
/*
 * Index of the first data row whose fields in columns col1 (and col2, if
 * not NULL) equal val1 (and val2), or -1.
 */
long dbg_find(const struct dbg_table *t, const char *col1, const char *val1, const char *col2,
	      const char *val2);
/* Number of data rows matching like dbg_find(). */
size_t dbg_count(const struct dbg_table *t, const char *col1, const char *val1, const char *col2,
		 const char *val2);

/* The errno's name ("ENOENT") for @err or -@err; "0" for 0. */
const char *err_name(int err);

/* Whether the VM's init says the guest has device memory (ACCMAP_DEVMEM). */
bool am_devmem_expected(void);

/*
 * NULL where the kernel has transparent huge pages; else why not, for
 * tap_run_except() (PREEMPT_RT kernels up to 6.12 cannot have them).
 */
const char *am_lacks_thp(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* The system call thread (or process) @tid is in, from /proc; -1 if unknown. */
long in_syscall(pid_t tid);

#endif /* ACCMAP_SELFTEST_UTIL_H */

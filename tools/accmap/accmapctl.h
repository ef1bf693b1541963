/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmapctl: what its files share.  main.c holds the command table, the
 * options every command has and the helpers below; printer.c the tables
 * and the JSON writer; memory.c, svm.c, checkpoint.c, replay.c and top.c
 * one family of commands each.
 */
#ifndef ACCMAPCTL_H
#define ACCMAPCTL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "accmap.h"
#include "gpureplay.h"
#include "printer.h"
#include "recording.h"
#include "simdrv.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define EXIT_USAGE		2

/* The Makefile passes the package version, dkms.conf's PACKAGE_VERSION. */
#ifndef ACCMAP_VERSION
#define ACCMAP_VERSION		"unknown"
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEBUGFS_MOUNT		"/sys/kernel/debug"
#define DEBUGFS_ACCMAP		DEBUGFS_MOUNT "/accmap"

extern const char *prog;
/* "accmapctl CMD" while a subcommand runs, for messages and getopt. */
extern char cmd_name[64];
/* -d/--device: the device node the commands open. */
extern const char *device;
/* -j/--json: the commands that print data print one JSON document. */
extern bool json_out;
/* -b/--bytes: exact byte counts instead of KiB/MiB/GiB. */
extern bool exact_bytes;
/* --debugfs DIR: where the commands that read debugfs read it. */
extern const char *debugfs_dir;
/* The long options of commands with -d and -h, and with -b, -d and -h. */
extern const struct option device_options[];
extern const struct option bytes_device_options[];

/* main.c: messages; fail() returns exit status 1, usage_error() 2. */
__printf(2, 3) int fail(int err, const char *fmt, ...);
__printf(1, 2) int usage_error(const char *fmt, ...);
__printf(1, 2) void note(const char *fmt, ...);
void *xrealloc(void *p, size_t n, size_t size);
char *xstrdup(const char *s);

/* main.c: numbers */
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
bool parse_u32(const char *s, uint32_t max, uint32_t *out);
bool parse_size(const char *s, uint64_t *out);
const char *fmt_bytes(char *buf, size_t len, uint64_t bytes, bool exact);
uint64_t mul_sat(uint64_t a, uint64_t b);
const char *fmt_alloc_flags(char *buf, size_t len, uint32_t flags);
const char *fmt_state(char *buf, size_t len, uint32_t state);

/* main.c: what every command does alike */
void begin_options(char **argv);
/* next_option() results besides a command's own option characters. */
enum { OPT_END = -1, OPT_EXIT = -2 };
/* The value of --debugfs in a command's long options. */
#define OPT_DEBUGFS		256
int next_option(int argc, char **argv, const char *optstring,
		const struct option *opts, void (*usage)(FILE *), int *status);
int common_options(int argc, char **argv, const char *optstring,
		   const struct option *opts, void (*usage)(FILE *));
int device_command(int argc, char **argv, const char *optstring,
		   const struct option *opts, void (*usage)(FILE *), int *fd);
int pid_option(const char *arg, uint32_t *pid);
int open_device(int *fd);
const char *heap_name(int fd, uint32_t heap, char *buf, size_t len);

/* memory.c: the debugfs files, which svm.c reads too */
int read_file(const char *path, char **data, size_t *len);
void explain_debugfs(int err, const char *dir);
bool is_decimal(const char *s);
size_t split_tabs(char *line, char ***fields);
void print_tsv_table(struct out *o, const char *file, const char *key, char *data);
char *devmem_table(char *data);
void print_devmem_head(struct out *o, const char *head, const char *end);
int fd_from_process(uint32_t pid, int target_fd, int *fd);

/* The commands, and their usage texts (main.c's command table). */
void heaps_usage(FILE *f);
int cmd_heaps(int argc, char **argv);
void pool_usage(FILE *f);
int cmd_pool(int argc, char **argv);
void list_usage(FILE *f);
int cmd_list(int argc, char **argv);
void alloc_usage(FILE *f);
int cmd_alloc(int argc, char **argv);
void info_usage(FILE *f);
int cmd_info(int argc, char **argv);
void label_usage(FILE *f);
int cmd_label(int argc, char **argv);
void svm_usage(FILE *f);
int cmd_svm(int argc, char **argv);
void checkpoint_usage(FILE *f);
int cmd_checkpoint(int argc, char **argv);
void targets_usage(FILE *f);
int cmd_targets(int argc, char **argv);
void record_usage(FILE *f);
int cmd_record(int argc, char **argv);
void replay_usage(FILE *f);
int cmd_replay(int argc, char **argv);
void show_usage(FILE *f);
int cmd_show(int argc, char **argv);
void import_usage(FILE *f);
int cmd_import_gpureplay(int argc, char **argv);
void top_usage(FILE *f);
int cmd_top(int argc, char **argv);

#endif

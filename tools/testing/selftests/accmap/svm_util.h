/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SVM session of the selftests that run jobs in their own memory
 * (accmap_svm, accmap_devmem): a replay session on the software Mali
 * model that mirrors this process, the ACCMAP_IOC_SVM call, job chains
 * whose descriptors live in malloc'ed memory, and the int32 patterns the
 * jobs are checked with.  The register side is tools/accmap/simdrv.c.
 */
#ifndef ACCMAP_SELFTEST_SVM_UTIL_H
#define ACCMAP_SELFTEST_SVM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/accmap.h>

#include "simdrv.h"

/* The GPU page-table format of every session here. */
#define SVM_PGT_FORMAT		ACCMAP_PGT_MALI_AARCH64_4K
#define SVM_JOB_TIMEOUT_US	ACCMAP_REPLAY_TIMEOUT_MAX_US

/* Lowest address mirrored: far below the program, a 64 KiB multiple. */
#define SVM_LOW			0x10000UL

/*
 * The model's VADD adds at most ACCMAP_SIM_DIM_MAX elements: longer ones
 * run as a chain of jobs, JD_STRIDE bytes apart, at most CHAIN_MAX (2 MiB
 * of int32, RUN_ELEMS elements).
 */
#define JD_STRIDE		128
#define CHAIN_MAX		128
#define RUN_ELEMS		((size_t)CHAIN_MAX * ACCMAP_SIM_DIM_MAX)

/**
 * struct svm - a test's SVM session
 * @dev:   the device
 * @sim:   simdrv's session
 * @desc:  room for CHAIN_MAX job descriptors in malloc'ed memory
 *         (SIMDRV_JD_ALIGN aligned)
 * @jobs:  descriptors of the last chain run
 * @start: first mirrored byte
 * @size:  bytes mirrored
 *
 * Initialise with { .dev = -1 } so that svm_close() is safe before
 * svm_open().
 */
struct svm {
	int dev;
	struct simdrv_svm sim;
	uint8_t *desc;
	uint32_t jobs;
	uint64_t start, size;
};

/* The end of the [stack] mapping (the top of what this process uses), or 0. */
uintptr_t stack_top(void);

/*
 * Opens /dev/accmap and a session mirroring [@start, @start + @size);
 * fails the test and returns false if it cannot.  svm_close() either way.
 */
bool svm_open_range(struct svm *t, uint64_t start, uint64_t size);
/* The same over all this process uses, from SVM_LOW to the stack's end. */
bool svm_open(struct svm *t);
/* Destroys the session (checking that it goes) and closes the device. */
void svm_close(struct svm *t);

/*
 * ACCMAP_IOC_SVM on @dev with every other input field 0; 0 or -errno.
 * @out (if not NULL) gets the struct as the kernel left it.
 */
int svm_ioctl(int dev, uint32_t session, uint32_t op, uint64_t start, uint64_t size,
	      uint32_t attrs, uint32_t location, struct accmap_svm_op *out);
/* SVM QUERY of @t's session that must succeed. */
bool svm_query(const struct svm *t, struct accmap_svm_op *q);

/* The jobs of the model: C = A + B over @n int32, C = A * B (m x k, k x n). */
struct accmap_sim_job vadd(const void *a, const void *b, void *c, uint32_t n);
struct accmap_sim_job matmul(const void *a, const void *b, void *c, uint32_t m, uint32_t n,
			     uint32_t k);
/*
 * Runs @job from t->desc, a VADD longer than the model takes (up to
 * RUN_ELEMS) as a chain of jobs over consecutive parts; the run's errno.
 */
int svm_job(struct svm *t, const struct accmap_sim_job *job, struct accmap_replay_run *r);
/*
 * Runs the @n jobs at @jobs (each at most what the model takes) as one
 * chain from t->desc, in order; the run's errno.
 */
int svm_chain(struct svm *t, const struct accmap_sim_job *jobs, uint32_t n,
	      struct accmap_replay_run *r);
/* The status job @i of the last chain left in its descriptor. */
uint32_t job_status_at(const struct svm *t, uint32_t i);
/* The status of the first job of the last chain that is not DONE, else DONE. */
uint32_t job_status(const struct svm *t);
/* A job that must complete: the run succeeds and the status is DONE. */
bool job_ok(struct svm *t, const struct accmap_sim_job *job, const char *what);

/* mmap of @len private (or shared) anonymous bytes; fails the test and returns NULL. */
void *map_anon(size_t len, int prot);
void *map_anon_shared(size_t len);

/* Word i of pattern @seed. */
uint32_t word(uint32_t seed, size_t i);
void fill_words(uint32_t *p, size_t n, uint32_t seed);
/* Index of the first word that is not @seed's + @add, or n. */
size_t check_words(const uint32_t *p, size_t n, uint32_t seed, uint32_t add);
/* Index of the first word that is not @v, or n. */
size_t check_value(const uint32_t *p, size_t n, uint32_t v);
/*
 * Checks that word i of @p is word(@sa, i) + word(@sb, i) (@sb 0: plain
 * word(@sa, i)); the check's result, "what" naming it in a failure.
 */
bool words_are(const uint32_t *p, size_t n, uint32_t sa, uint32_t sb, const char *what);

#endif /* ACCMAP_SELFTEST_SVM_UTIL_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * The SVM session, jobs and patterns shared by accmap_svm and
 * accmap_devmem; see svm_util.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap_util.h"
#include "svm_util.h"
#include "tap.h"

/* For printing: uint64_t is not unsigned long long everywhere. */
static unsigned long long ull(uint64_t v)
{
	return v;
}

uintptr_t stack_top(void)
{
	unsigned long lo, hi, top = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			top = hi;
	fclose(f);
	return top;
}

bool svm_open_range(struct svm *t, uint64_t start, uint64_t size)
{
	int ret;

	memset(t, 0, sizeof(t[0]));
	t->dev = am_open();
	if (t->dev < 0)
		return false;
	t->desc = aligned_alloc(SIMDRV_JD_ALIGN, CHAIN_MAX * JD_STRIDE);
	if (!CHECK(t->desc, "aligned_alloc"))
		return false;
	memset(t->desc, 0, CHAIN_MAX * JD_STRIDE);
	t->start = start;
	t->size = size;
	ret = simdrv_svm_open(t->dev, SVM_PGT_FORMAT, 0, start, size, &t->sim);
	return CHECK(ret == 0, "SVM session over %#llx+%#llx: %s",
		     ull(start), ull(size), err_name(ret));
}

bool svm_open(struct svm *t)
{
	uintptr_t top = stack_top();

	memset(t, 0, sizeof(t[0]));
	t->dev = -1;
	if (!CHECK(top > SVM_LOW && top % page_size() == 0, "no [stack] in /proc/self/maps"))
		return false;
	return svm_open_range(t, SVM_LOW, top - SVM_LOW);
}

void svm_close(struct svm *t)
{
	if (t->sim.session)
		CHECK(simdrv_svm_close(&t->sim) == 0, "REPLAY_DESTROY of the SVM session");
	free(t->desc);
	t->desc = NULL;
	if (t->dev >= 0)
		close(t->dev);
	t->dev = -1;
}

int svm_ioctl(int dev, uint32_t session, uint32_t op, uint64_t start, uint64_t size,
	      uint32_t attrs, uint32_t location, struct accmap_svm_op *out)
{
	struct accmap_svm_op a = {
		.session = session, .op = op, .start = start, .size = size,
		.attrs = attrs, .location = location,
	};
	int ret = raw_ioctl(dev, ACCMAP_IOC_SVM, &a);

	if (out)
		*out = a;
	return ret;
}

bool svm_query(const struct svm *t, struct accmap_svm_op *q)
{
	int ret = svm_ioctl(t->dev, t->sim.session, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, q);

	return CHECK(ret == 0, "SVM QUERY: %s", err_name(ret));
}

struct accmap_sim_job vadd(const void *a, const void *b, void *c, uint32_t n)
{
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_VADD_I32, .m = 1, .k = 1, .n = n,
		.a = (uintptr_t)a, .b = (uintptr_t)b, .c = (uintptr_t)c,
	};

	return job;
}

struct accmap_sim_job matmul(const void *a, const void *b, void *c, uint32_t m, uint32_t n,
			     uint32_t k)
{
	struct accmap_sim_job job = {
		.op = ACCMAP_SIM_OP_MATMUL_I32, .m = m, .n = n, .k = k,
		.a = (uintptr_t)a, .b = (uintptr_t)b, .c = (uintptr_t)c,
	};

	return job;
}

int svm_job(struct svm *t, const struct accmap_sim_job *job, struct accmap_replay_run *r)
{
	uint32_t parts = 1, i;

	if (job->op == ACCMAP_SIM_OP_VADD_I32 && job->n > ACCMAP_SIM_DIM_MAX)
		parts = (job->n + ACCMAP_SIM_DIM_MAX - 1) / ACCMAP_SIM_DIM_MAX;
	if (!CHECK(parts <= CHAIN_MAX, "a VADD of %u elements is too long", job->n))
		parts = CHAIN_MAX;
	for (i = 0; i < parts; i++) {
		struct accmap_sim_job part = *job;
		uint64_t off = (uint64_t)i * ACCMAP_SIM_DIM_MAX * 4;
		uint8_t *next = i + 1 < parts ? t->desc + (i + 1) * JD_STRIDE : NULL;

		if (parts > 1) {
			part.n = job->n - i * ACCMAP_SIM_DIM_MAX;
			if (part.n > ACCMAP_SIM_DIM_MAX)
				part.n = ACCMAP_SIM_DIM_MAX;
			part.a += off;
			part.b += off;
			part.c += off;
		}
		simdrv_encode_job(t->desc + i * JD_STRIDE, &part, (uintptr_t)next);
	}
	t->jobs = parts;
	return simdrv_svm_run(&t->sim, t->desc, SVM_JOB_TIMEOUT_US, r);
}

int svm_chain(struct svm *t, const struct accmap_sim_job *jobs, uint32_t n,
	      struct accmap_replay_run *r)
{
	if (!CHECK(n && n <= CHAIN_MAX, "a chain of %u jobs", n))
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		simdrv_encode_job(t->desc + i * JD_STRIDE, &jobs[i],
				  i + 1 < n ? (uintptr_t)(t->desc + (i + 1) * JD_STRIDE) : 0);
	t->jobs = n;
	return simdrv_svm_run(&t->sim, t->desc, SVM_JOB_TIMEOUT_US, r);
}

uint32_t job_status_at(const struct svm *t, uint32_t i)
{
	const uint8_t *p = t->desc + i * JD_STRIDE + SIMDRV_JD_EXCEPTION_STATUS;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint32_t job_status(const struct svm *t)
{
	for (uint32_t i = 0; i < t->jobs; i++) {
		uint32_t st = job_status_at(t, i);

		if (st != SIMDRV_JOB_STATUS_DONE)
			return st;
	}
	return SIMDRV_JOB_STATUS_DONE;
}

bool job_ok(struct svm *t, const struct accmap_sim_job *job, const char *what)
{
	struct accmap_replay_run r;
	int ret = svm_job(t, job, &r);

	if (!CHECK(ret == 0, "%s: run %s, reason %u, fault at %#llx status %#x", what,
		   err_name(ret), r.reason, ull(r.fault_addr), r.fault_status))
		return false;
	return CHECK(job_status(t) == SIMDRV_JOB_STATUS_DONE, "%s: job status %#x", what,
		     job_status(t));
}

static void *map_anon_flags(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (!CHECK(p != MAP_FAILED, "mmap of %zu anonymous bytes: %s", len, strerror(errno)))
		return NULL;
	return p;
}

void *map_anon(size_t len, int prot)
{
	return map_anon_flags(len, prot, MAP_PRIVATE);
}

void *map_anon_shared(size_t len)
{
	return map_anon_flags(len, PROT_READ | PROT_WRITE, MAP_SHARED);
}

uint32_t word(uint32_t seed, size_t i)
{
	uint32_t x = seed * 0x9e3779b9U ^ (uint32_t)i * 0x85ebca6bU ^ (uint32_t)(i >> 10);

	return x ^ x >> 15;
}

void fill_words(uint32_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = word(seed, i);
}

size_t check_words(const uint32_t *p, size_t n, uint32_t seed, uint32_t add)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != word(seed, i) + add)
			return i;
	return n;
}

size_t check_value(const uint32_t *p, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return i;
	return n;
}

/* Word i of @sa plus word i of @sb (none if @sb is 0). */
static uint32_t word_sum(uint32_t sa, uint32_t sb, size_t i)
{
	return word(sa, i) + (sb ? word(sb, i) : 0);
}

bool words_are(const uint32_t *p, size_t n, uint32_t sa, uint32_t sb, const char *what)
{
	size_t bad = n;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != word_sum(sa, sb, i)) {
			bad = i;
			break;
		}
	}
	return CHECK(bad == n, "%s: word %zu of %zu is %#x, expected %#x", what, bad, n,
		     bad < n ? p[bad] : 0, bad < n ? word_sum(sa, sb, bad) : 0);
}

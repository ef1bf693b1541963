// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: Mali job chains as accmap's GPU models run them (mali_jobs.h
 * says what this part owns and what it may call).
 *
 * A job is a descriptor (the Mali job header: status, type, next) at a
 * multiple of ACCMAP_SIM_JD_ALIGN.  Real Mali job types, NULL to FRAGMENT,
 * are done without running their shaders: their payload is left alone
 * and DONE is written to their status.  ACCMAP_SIM_JOB_TYPE carries
 * struct accmap_sim_job and really computes (MATMUL, VADD, LIST_SUM),
 * reading and writing its operands through the job's address space.  Any
 * other type fails the job with DATA_INVALID_FAULT, as does a chain
 * longer than ACCMAP_SIM_CHAIN_MAX or one that loops.
 *
 * It includes only a few plain linux/ headers (types, errno, overflow,
 * log2), which a build outside the kernel can provide by a shim of its
 * own.
 */

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/types.h>
#include <uapi/linux/accmap.h>

#include "mali_jobs.h"
#include "mali_regs.h"

/* A JS_STATUS code the hardware has and mali_regs.h does not. */
#define MALI_JOBS_STATUS_OUT_OF_MEMORY	0x60

/**
 * struct mali_jobs_jd_le - a job descriptor header as it lies in GPU memory
 * @exception_status: written when the job ends
 * @first_incomplete_task: not used
 * @fault_pointer: not used
 * @type: bit 0: 64-bit @next; bits 7:1: the job type
 * @barrier: not used
 * @index: not used
 * @dep: not used (the chain runs in order)
 * @next: the next descriptor, 64 bits or (if @type bit 0 is clear) the
 *        low 32
 */
struct mali_jobs_jd_le {
	__le32 exception_status;
	__le32 first_incomplete_task;
	__le64 fault_pointer;
	u8 type;
	u8 barrier;
	__le16 index;
	__le16 dep[2];
	__le64 next;
};

/**
 * struct mali_jobs_job_le - struct accmap_sim_job as it lies in GPU memory
 * @op: ACCMAP_SIM_OP_*
 * @flags: 0
 * @m: rows of A and C
 * @n: columns of B and C
 * @k: columns of A, rows of B
 * @pad: 0
 * @a: GPU VA of A
 * @b: GPU VA of B
 * @c: GPU VA of C
 */
struct mali_jobs_job_le {
	__le32 op;
	__le32 flags;
	__le32 m;
	__le32 n;
	__le32 k;
	__le32 pad;
	__le64 a;
	__le64 b;
	__le64 c;
};

static_assert(sizeof(struct mali_jobs_jd_le) == MALI_JD_HEADER_SIZE);
static_assert(offsetof(struct mali_jobs_jd_le, type) == MALI_JD_TYPE_BYTE);
static_assert(offsetof(struct mali_jobs_jd_le, next) == MALI_JD_NEXT);
static_assert(ACCMAP_SIM_JD_SIZE == MALI_JD_HEADER_SIZE);
static_assert(ACCMAP_SIM_JD_STATUS == MALI_JD_EXCEPTION_STATUS);
static_assert(ACCMAP_SIM_JD_TYPE == MALI_JD_TYPE_BYTE);
static_assert(ACCMAP_SIM_JD_NEXT == MALI_JD_NEXT);
static_assert(ACCMAP_SIM_JD_TYPE_MIN == MALI_JOB_TYPE_NULL);
static_assert(ACCMAP_SIM_JD_TYPE_MAX == MALI_JOB_TYPE_FRAGMENT);
static_assert(sizeof(struct mali_jobs_job_le) == sizeof(struct accmap_sim_job));
static_assert(offsetof(struct mali_jobs_job_le, c) ==
	      offsetof(struct accmap_sim_job, c));

/**
 * struct mali_jobs_job - a decoded struct accmap_sim_job
 * @op:      ACCMAP_SIM_OP_*
 * @m:       rows of A and C
 * @n:       columns of B and C
 * @k:       columns of A, rows of B
 * @a:       GPU VA of A
 * @b:       GPU VA of B
 * @c:       GPU VA of C
 * @a_bytes: bytes of A
 * @b_bytes: bytes of B
 * @c_bytes: bytes of C
 */
struct mali_jobs_job {
	u32 op, m, n, k;
	u64 a, b, c;
	u64 a_bytes, b_bytes, c_bytes;
};

/* One job being run: the chain, the model's ops and their argument. */
struct mali_jobs_run {
	struct mali_jobs_chain *ch;
	const struct mali_jobs_ops *ops;
	void *priv;
};

/* Ends the job as failed with JS_STATUS @code; returns -EIO. */
static int mali_jobs_fail(struct mali_jobs_run *r, u32 code)
{
	r->ch->end = MALI_JOBS_FAILED;
	r->ch->code = code;
	return -EIO;
}

/*
 * Reads or writes through the job's address space; an error ends the
 * job: -EIO as a bus fault, -EFAULT (MMU fault) and -EINTR as they are.
 */
static int mali_jobs_access(struct mali_jobs_run *r, u64 va, void *buf,
			    size_t len, bool write)
{
	int ret = r->ops->access(r->priv, va, buf, len, write);

	switch (ret) {
	case 0:
		return 0;
	case -EFAULT:
		r->ch->end = MALI_JOBS_FAULT;
		return ret;
	case -EINTR:
		r->ch->end = MALI_JOBS_ABORTED;
		return ret;
	default:
		return mali_jobs_fail(r, MALI_JS_STATUS_BUS_FAULT);
	}
}

static bool mali_jobs_aborted(struct mali_jobs_run *r)
{
	if (!r->ops->aborted(r->priv))
		return false;
	r->ch->end = MALI_JOBS_ABORTED;
	return true;
}

/* An operand's byte size from its element count; false if out of range. */
static bool mali_jobs_operand(u64 va, u64 elems, u64 *bytes)
{
	u64 end;

	*bytes = elems * sizeof(u32);
	return elems <= ACCMAP_SIM_ELEMS_MAX && IS_ALIGNED(va, sizeof(u32)) &&
	       !check_add_overflow(va, *bytes, &end);
}

/* Decodes and checks the payload of an ACCMAP_SIM_JOB_TYPE job. */
static bool mali_jobs_decode(const struct mali_jobs_job_le *raw,
			     struct mali_jobs_job *job)
{
	u64 ea, eb, ec;

	job->op = le32_to_cpu(raw->op);
	job->m = le32_to_cpu(raw->m);
	job->n = le32_to_cpu(raw->n);
	job->k = le32_to_cpu(raw->k);
	job->a = le64_to_cpu(raw->a);
	job->b = le64_to_cpu(raw->b);
	job->c = le64_to_cpu(raw->c);

	if (raw->flags || raw->pad)
		return false;
	if (job->op == ACCMAP_SIM_OP_LIST_SUM_I32) {
		u64 end;

		/* m: offset of the next pointer, k: of the value, n: nodes. */
		job->c_bytes = 2 * sizeof(u32);
		return job->m < ACCMAP_SIM_DIM_MAX && job->k < ACCMAP_SIM_DIM_MAX &&
		       IS_ALIGNED(job->m, sizeof(u64)) &&
		       IS_ALIGNED(job->k, sizeof(u32)) && job->n &&
		       job->n <= ACCMAP_SIM_ELEMS_MAX && !job->b &&
		       IS_ALIGNED(job->c, sizeof(u32)) &&
		       !check_add_overflow(job->c, job->c_bytes, &end);
	}
	if (!job->m || !job->n || !job->k || job->m > ACCMAP_SIM_DIM_MAX ||
	    job->n > ACCMAP_SIM_DIM_MAX || job->k > ACCMAP_SIM_DIM_MAX)
		return false;

	switch (job->op) {
	case ACCMAP_SIM_OP_MATMUL_I32:
		/* Each dimension is at most 4096: these products fit. */
		if ((u64)job->m * job->n * job->k > ACCMAP_SIM_MACS_MAX)
			return false;
		ea = (u64)job->m * job->k;
		eb = (u64)job->k * job->n;
		ec = (u64)job->m * job->n;
		break;
	case ACCMAP_SIM_OP_VADD_I32:
		if (job->m != 1 || job->k != 1)
			return false;
		ea = job->n;
		eb = job->n;
		ec = job->n;
		break;
	default:
		return false;
	}
	return mali_jobs_operand(job->a, ea, &job->a_bytes) &&
	       mali_jobs_operand(job->b, eb, &job->b_bytes) &&
	       mali_jobs_operand(job->c, ec, &job->c_bytes);
}

/* C = A x B in wrapping 32-bit arithmetic; C starts zeroed. */
static int mali_jobs_matmul(struct mali_jobs_run *r,
			    const struct mali_jobs_job *job,
			    const u32 *a, const u32 *b, u32 *c)
{
	u32 i, p, j;

	for (i = 0; i < job->m; i++) {
		u32 *crow = c + (size_t)i * job->n;

		for (p = 0; p < job->k; p++) {
			const u32 *brow = b + (size_t)p * job->n;
			u32 aip = a[(size_t)i * job->k + p];

			for (j = 0; j < job->n; j++)
				crow[j] += aip * brow[j];
		}
		/* A row is at most ELEMS_MAX multiply-adds. */
		if (mali_jobs_aborted(r))
			return -EINTR;
		if (r->ops->yield)
			r->ops->yield(r->priv);
	}
	return 0;
}

static void mali_jobs_le32_to_cpu(u32 *v, u64 bytes)
{
	size_t i;

	for (i = 0; i < bytes / sizeof(u32); i++)
		le32_to_cpus(&v[i]);
}

/*
 * LIST_SUM_I32: follows the list from A, each node's next pointer and
 * value read through the address space, and writes {sum, nodes} to C.
 * A node whose fields are misaligned, or more than n nodes, fail the job.
 */
static int mali_jobs_list_sum(struct mali_jobs_run *r,
			      const struct mali_jobs_job *job)
{
	u64 node = job->a, next_va, val_va;
	u32 sum = 0, count = 0;
	__le32 out[2], v;
	__le64 next;
	int ret;

	while (node) {
		if (count == job->n ||
		    check_add_overflow(node, (u64)job->m, &next_va) ||
		    check_add_overflow(node, (u64)job->k, &val_va) ||
		    !IS_ALIGNED(next_va, sizeof(u64)) ||
		    !IS_ALIGNED(val_va, sizeof(u32)))
			return mali_jobs_fail(r, MALI_JS_STATUS_DATA_INVALID_FAULT);
		ret = mali_jobs_access(r, val_va, &v, sizeof(v), false);
		if (ret)
			return ret;
		ret = mali_jobs_access(r, next_va, &next, sizeof(next), false);
		if (ret)
			return ret;
		sum += le32_to_cpu(v);
		count++;
		node = le64_to_cpu(next);
	}
	out[0] = cpu_to_le32(sum);
	out[1] = cpu_to_le32(count);
	return mali_jobs_access(r, job->c, out, sizeof(out), true);
}

/*
 * Runs an ACCMAP_SIM_JOB_TYPE job: reads A and B into scratch memory,
 * computes, writes C.  Returns 0 or an error that ended the job.
 */
static int mali_jobs_compute(struct mali_jobs_run *r, u64 jd)
{
	struct mali_jobs_job_le raw;
	struct mali_jobs_job job;
	u32 *a, *b, *c;
	u32 i;
	int ret;

	ret = mali_jobs_access(r, jd + ACCMAP_SIM_JOB_OFFSET, &raw,
			       sizeof(raw), false);
	if (ret)
		return ret;
	if (!mali_jobs_decode(&raw, &job))
		return mali_jobs_fail(r, MALI_JS_STATUS_DATA_INVALID_FAULT);
	if (job.op == ACCMAP_SIM_OP_LIST_SUM_I32)
		return mali_jobs_list_sum(r, &job);

	/* Sized by the job in user memory: a failed job, not a warning. */
	a = r->ops->alloc(r->priv, job.a_bytes, false);
	b = r->ops->alloc(r->priv, job.b_bytes, false);
	c = r->ops->alloc(r->priv, job.c_bytes, true);
	if (!a || !b || !c) {
		ret = mali_jobs_fail(r, MALI_JOBS_STATUS_OUT_OF_MEMORY);
		goto out_free;
	}

	ret = mali_jobs_access(r, job.a, a, job.a_bytes, false);
	if (ret)
		goto out_free;
	ret = mali_jobs_access(r, job.b, b, job.b_bytes, false);
	if (ret)
		goto out_free;
	mali_jobs_le32_to_cpu(a, job.a_bytes);
	mali_jobs_le32_to_cpu(b, job.b_bytes);

	if (job.op == ACCMAP_SIM_OP_MATMUL_I32) {
		ret = mali_jobs_matmul(r, &job, a, b, c);
		if (ret)
			goto out_free;
	} else {
		for (i = 0; i < job.n; i++)
			c[i] = a[i] + b[i];
	}

	for (i = 0; i < job.c_bytes / sizeof(u32); i++)
		cpu_to_le32s(&c[i]);
	ret = mali_jobs_access(r, job.c, c, job.c_bytes, true);

out_free:
	r->ops->free(r->priv, c);
	r->ops->free(r->priv, b);
	r->ops->free(r->priv, a);
	return ret;
}

/*
 * Runs the job at @jd; *@next is the next descriptor (0: end of chain).
 * Returns 0 if it is done, else an error that ended it.
 */
static int mali_jobs_job(struct mali_jobs_run *r, u64 jd, u64 *next)
{
	struct mali_jobs_jd_le hdr;
	int ret, wret;
	__le32 status;
	u8 type;

	if (!IS_ALIGNED(jd, ACCMAP_SIM_JD_ALIGN))
		return mali_jobs_fail(r, MALI_JS_STATUS_DATA_INVALID_FAULT);

	ret = mali_jobs_access(r, jd, &hdr, sizeof(hdr), false);
	if (ret)
		return ret;

	type = hdr.type >> ACCMAP_SIM_JD_TYPE_SHIFT;
	*next = le64_to_cpu(hdr.next);
	if (!(hdr.type & ACCMAP_SIM_JD_NEXT_64))
		*next = lower_32_bits(*next);

	if (type == ACCMAP_SIM_JOB_TYPE)
		ret = mali_jobs_compute(r, jd);
	else if (type < ACCMAP_SIM_JD_TYPE_MIN || type > ACCMAP_SIM_JD_TYPE_MAX)
		ret = mali_jobs_fail(r, MALI_JS_STATUS_DATA_INVALID_FAULT);
	else
		ret = 0;	/* real Mali jobs: the payload is left alone */
	/* An MMU fault stops the job; a reset or stop ends it. */
	if (ret && ret != -EIO)
		return ret;

	/* Done or failed, the job's status goes to its descriptor. */
	status = cpu_to_le32(ret ? r->ch->code : MALI_JS_STATUS_DONE);
	wret = mali_jobs_access(r, jd + MALI_JD_EXCEPTION_STATUS, &status,
				sizeof(status), true);
	return wret ? wret : ret;
}

/**
 * mali_jobs_chain_init() - starts following a chain
 * @ch: the chain
 * @head: the first descriptor's GPU address (0: an empty chain)
 */
void mali_jobs_chain_init(struct mali_jobs_chain *ch, u64 head)
{
	ch->jd = head;
	ch->end = MALI_JOBS_DONE;
	ch->code = 0;
	ch->steps = 0;
	ch->mark = 0;
}

/**
 * mali_jobs_chain_step() - runs the job the chain is at
 * @ch: the chain, from mali_jobs_chain_init() or an earlier step
 * @ops: the model's memory and control
 * @priv: passed to @ops
 *
 * A chain longer than ACCMAP_SIM_CHAIN_MAX jobs fails, and so does one
 * that loops: Brent's method keeps a checkpoint at every power of two of
 * jobs done, so a job on a loop may run a second time before the loop is
 * seen.  A recoverable fault is the model's business: its @access
 * callback waits for the fault to be serviced and retries the access, as
 * the GPU replays the faulting transaction.  An MMU fault that reaches
 * this code (@ch->end MALI_JOBS_FAULT) stops the chain at that job for
 * good: the slot stays active until a reset or a stop.
 *
 * Return: true if the job was done and the chain goes on (@ch->jd is the
 * next job); false if the chain ended, @ch->end saying how and @ch->jd
 * naming the last job (0 for an empty chain).
 */
bool mali_jobs_chain_step(struct mali_jobs_chain *ch,
			  const struct mali_jobs_ops *ops, void *priv)
{
	struct mali_jobs_run r = { .ch = ch, .ops = ops, .priv = priv };
	u64 next;

	ch->end = MALI_JOBS_DONE;
	if (!ch->jd)
		return false;
	if (ch->jd == ch->mark || ch->steps == ACCMAP_SIM_CHAIN_MAX) {
		mali_jobs_fail(&r, MALI_JS_STATUS_DATA_INVALID_FAULT);
		return false;
	}
	if (mali_jobs_job(&r, ch->jd, &next))
		return false;
	ch->steps++;
	if (is_power_of_2(ch->steps))
		ch->mark = ch->jd;
	if (!next)
		return false;
	ch->jd = next;
	return true;
}

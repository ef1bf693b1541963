// SPDX-License-Identifier: GPL-2.0
/*
 * simdrv: a tiny user-space driver for accmap's software Mali model; see
 * simdrv.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simdrv.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Polls of READY and AS STATUS: the model answers at once. */
#define SIMDRV_POLL_US		1000000U

const char *simdrv_target(void)
{
	const char *name = getenv("ACCMAP_REPLAY_TARGET");

	return name && *name ? name : SIMDRV_TARGET;
}

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int simdrv_read_reg(int fd, uint32_t session, uint32_t offset, uint32_t *value)
{
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_READ,
		.offset = offset,
	};
	struct accmap_replay_run r;
	int ret;

	/* On success, the run's value is what its last READ read. */
	ret = accmap_replay_run(fd, session, &op, 1, &r);
	if (ret)
		return ret;
	*value = r.value;
	return 0;
}

int simdrv_probe(int fd, uint32_t session, uint32_t gpu_id, struct simdrv_gpu *gpu)
{
	static const struct {
		uint32_t offset;
		size_t field;
	} regs[] = {
		{ SIMDRV_L2_PRESENT_LO, offsetof(struct simdrv_gpu, l2_present) },
		{ SIMDRV_SHADER_PRESENT_LO, offsetof(struct simdrv_gpu, shader_present) },
		{ SIMDRV_TILER_PRESENT_LO, offsetof(struct simdrv_gpu, tiler_present) },
		{ SIMDRV_JS_PRESENT, offsetof(struct simdrv_gpu, js_present) },
		{ SIMDRV_AS_PRESENT, offsetof(struct simdrv_gpu, as_present) },
	};
	size_t i;
	int ret;

	memset(gpu, 0, sizeof(*gpu));
	gpu->gpu_id = gpu_id;
	for (i = 0; i < ARRAY_SIZE(regs); i++) {
		ret = simdrv_read_reg(fd, session, regs[i].offset,
				      (uint32_t *)((uint8_t *)gpu + regs[i].field));
		if (ret)
			return ret;
	}
	return 0;
}

static struct accmap_replay_op *op_write(struct accmap_replay_op *op, uint32_t offset,
					 uint32_t value)
{
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WRITE;
	op->offset = offset;
	op->value = value;
	return op + 1;
}

static struct accmap_replay_op *op_poll(struct accmap_replay_op *op, uint32_t offset,
					uint32_t mask, uint32_t value)
{
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_POLL;
	op->offset = offset;
	op->mask = mask;
	op->value = value;
	op->timeout_us = SIMDRV_POLL_US;
	return op + 1;
}

/* PWRON of the cores present, then wait until they are all READY. */
static struct accmap_replay_op *op_power(struct accmap_replay_op *op, uint32_t pwron,
					 uint32_t ready, uint32_t present)
{
	if (!present)
		return op;
	op = op_write(op, pwron, present);
	return op_poll(op, ready, present, present);
}

uint32_t simdrv_build_ops(const struct simdrv_gpu *gpu, const struct simdrv_submit *s,
			  struct accmap_replay_op *ops)
{
	uint32_t as = SIMDRV_AS(s->as), js = SIMDRV_JS(s->slot);
	struct accmap_replay_op *op = ops;

	if (s->reset)
		op += simdrv_reset_ops(op);

	/* A replay on another GPU stops here rather than misbehaving. */
	if (gpu->gpu_id) {
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_READ;
		op->flags = ACCMAP_REPLAY_OP_STRICT;
		op->offset = SIMDRV_GPU_ID;
		op->mask = UINT32_MAX;
		op->value = gpu->gpu_id;
		op++;
	}

	op = op_power(op, SIMDRV_L2_PWRON_LO, SIMDRV_L2_READY_LO, gpu->l2_present);
	op = op_power(op, SIMDRV_SHADER_PWRON_LO, SIMDRV_SHADER_READY_LO, gpu->shader_present);
	op = op_power(op, SIMDRV_TILER_PWRON_LO, SIMDRV_TILER_READY_LO, gpu->tiler_present);

	op = op_write(op, SIMDRV_MMU_IRQ_CLEAR, UINT32_MAX);
	op = op_write(op, SIMDRV_MMU_IRQ_MASK,
		      SIMDRV_MMU_IRQ_FAULT(s->as) | SIMDRV_MMU_IRQ_BUS_ERROR(s->as));

	/* The kernel writes the root of the tables it built. */
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WRITE_ROOT;
	op->offset = as + SIMDRV_AS_TRANSTAB_LO;
	op++;
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WRITE_ROOT;
	op->flags = ACCMAP_REPLAY_OP_HI;
	op->offset = as + SIMDRV_AS_TRANSTAB_HI;
	op++;
	op = op_write(op, as + SIMDRV_AS_MEMATTR_LO, (uint32_t)SIMDRV_MEMATTR);
	op = op_write(op, as + SIMDRV_AS_MEMATTR_HI, (uint32_t)(SIMDRV_MEMATTR >> 32));
	/* LPAE tables say their mode in TRANSTAB's low bits; TRANSCFG is 0. */
	op = op_write(op, as + SIMDRV_AS_TRANSCFG_LO,
		      s->format == ACCMAP_PGT_MALI_AARCH64_4K ? SIMDRV_TRANSCFG_AARCH64_4K :
								SIMDRV_TRANSCFG_LEGACY);
	op = op_write(op, as + SIMDRV_AS_TRANSCFG_HI, 0);
	op = op_write(op, as + SIMDRV_AS_COMMAND, SIMDRV_AS_CMD_UPDATE);
	op = op_poll(op, as + SIMDRV_AS_STATUS, SIMDRV_AS_STATUS_ACTIVE, 0);

	op = op_write(op, SIMDRV_JOB_IRQ_CLEAR, UINT32_MAX);
	op = op_write(op, SIMDRV_JOB_IRQ_MASK,
		      SIMDRV_JOB_IRQ_DONE(s->slot) | SIMDRV_JOB_IRQ_FAILED(s->slot));

	op = op_write(op, js + SIMDRV_JS_HEAD_NEXT_LO, (uint32_t)s->head);
	op = op_write(op, js + SIMDRV_JS_HEAD_NEXT_HI, (uint32_t)(s->head >> 32));
	op = op_write(op, js + SIMDRV_JS_AFFINITY_NEXT_LO,
		      gpu->shader_present ? gpu->shader_present : 1);
	op = op_write(op, js + SIMDRV_JS_AFFINITY_NEXT_HI, 0);
	op = op_write(op, js + SIMDRV_JS_CONFIG_NEXT, s->as);
	op = op_write(op, js + SIMDRV_JS_COMMAND_NEXT, SIMDRV_JS_COMMAND_START);

	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WAIT_IRQ;
	op->irq = ACCMAP_REPLAY_IRQ_JOB;
	op->mask = SIMDRV_JOB_IRQ_DONE(s->slot);
	op->timeout_us = s->timeout_us;
	op++;
	op = op_write(op, SIMDRV_JOB_IRQ_CLEAR, SIMDRV_JOB_IRQ_DONE(s->slot));

	return (uint32_t)(op - ops);
}

uint32_t simdrv_reset_ops(struct accmap_replay_op *ops)
{
	struct accmap_replay_op *op = ops;

	op = op_write(op, SIMDRV_GPU_IRQ_CLEAR, UINT32_MAX);
	op = op_write(op, SIMDRV_GPU_COMMAND, SIMDRV_GPU_CMD_SOFT_RESET);
	/* The reset cleared the mask: WAIT_IRQ waits for RAWSTAT & MASK. */
	op = op_write(op, SIMDRV_GPU_IRQ_MASK, SIMDRV_GPU_IRQ_RESET_COMPLETED);
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WAIT_IRQ;
	op->irq = ACCMAP_REPLAY_IRQ_GPU;
	op->mask = SIMDRV_GPU_IRQ_RESET_COMPLETED;
	op->timeout_us = SIMDRV_POLL_US;
	op++;
	return (uint32_t)(op - ops);
}

void simdrv_encode_job(uint8_t *desc, const struct accmap_sim_job *job, uint64_t next)
{
	uint8_t *p = desc + ACCMAP_SIM_JOB_OFFSET;

	memset(desc, 0, SIMDRV_JD_SIZE);
	/* Job type in bits 7:1, bit 0: the next pointer is 64-bit. */
	desc[SIMDRV_JD_TYPE_BYTE] = (uint8_t)(ACCMAP_SIM_JOB_TYPE << 1 | 1);
	put_le16(desc + SIMDRV_JD_INDEX, 1);
	put_le64(desc + SIMDRV_JD_NEXT, next);

	put_le32(p + 0, job->op);
	put_le32(p + 4, job->flags);
	put_le32(p + 8, job->m);
	put_le32(p + 12, job->n);
	put_le32(p + 16, job->k);
	put_le32(p + 20, job->pad);
	put_le64(p + 24, job->a);
	put_le64(p + 32, job->b);
	put_le64(p + 40, job->c);
}

int simdrv_elems(const struct simdrv_workload *w, uint32_t *a, uint32_t *b, uint32_t *c)
{
	uint64_t ea, eb, ec;

	if (!w->m || !w->n || !w->k || w->m > ACCMAP_SIM_DIM_MAX || w->n > ACCMAP_SIM_DIM_MAX ||
	    w->k > ACCMAP_SIM_DIM_MAX)
		return -EINVAL;
	if (w->op == ACCMAP_SIM_OP_VADD_I32) {
		if (w->m != 1 || w->k != 1)
			return -EINVAL;
		ea = w->n;
		eb = w->n;
		ec = w->n;
	} else if (w->op == ACCMAP_SIM_OP_MATMUL_I32) {
		ea = (uint64_t)w->m * w->k;
		eb = (uint64_t)w->k * w->n;
		ec = (uint64_t)w->m * w->n;
		if ((uint64_t)w->m * w->n * w->k > ACCMAP_SIM_MACS_MAX)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (ea > ACCMAP_SIM_ELEMS_MAX || eb > ACCMAP_SIM_ELEMS_MAX || ec > ACCMAP_SIM_ELEMS_MAX)
		return -EINVAL;
	if (a)
		*a = (uint32_t)ea;
	if (b)
		*b = (uint32_t)eb;
	if (c)
		*c = (uint32_t)ec;
	return 0;
}

void simdrv_reference(const struct simdrv_workload *w, const int32_t *a, const int32_t *b,
		      int32_t *c)
{
	uint32_t i, j, l;

	if (w->op == ACCMAP_SIM_OP_VADD_I32) {
		for (i = 0; i < w->n; i++)
			c[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
		return;
	}
	/* The model's arithmetic wraps: do it unsigned. */
	for (i = 0; i < w->m; i++)
		for (j = 0; j < w->n; j++) {
			uint32_t sum = 0;

			for (l = 0; l < w->k; l++)
				sum += (uint32_t)a[(size_t)i * w->k + l] *
				       (uint32_t)b[(size_t)l * w->n + j];
			c[(size_t)i * w->n + j] = (int32_t)sum;
		}
}

static uint64_t page_up(uint64_t bytes)
{
	return (bytes + ACCMAP_REC_PAGE_SIZE - 1) & ~(ACCMAP_REC_PAGE_SIZE - 1);
}

/* The next free VA after a range, with an unmapped gap before it. */
static uint64_t next_va(uint64_t va, uint64_t len)
{
	return (va + len + ACCMAP_REC_PAGE_SIZE + SIMDRV_VA_ALIGN - 1) & ~(SIMDRV_VA_ALIGN - 1);
}

/* Contents of the first @len bytes of a map of @map_len, zero-padded. */
static int add_map(struct accmap_recording *rec, uint64_t va, const void *src, size_t len,
		   uint64_t map_len, uint32_t flags)
{
	uint8_t *buf;
	int ret;

	if (!src)
		return accmap_rec_add_map(rec, va, map_len, flags, 0, NULL);
	buf = calloc(1, (size_t)map_len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, src, len);
	ret = accmap_rec_add_map(rec, va, map_len, flags, 0, buf);
	free(buf);
	return ret;
}

/* How long the job may take: a second, plus a second per 20 M MACs. */
static uint32_t job_timeout_us(const struct simdrv_workload *w)
{
	uint64_t macs = (uint64_t)w->m * w->n * w->k;
	uint64_t us = 1000000 + macs / 20;

	return us > ACCMAP_REPLAY_TIMEOUT_MAX_US ? ACCMAP_REPLAY_TIMEOUT_MAX_US : (uint32_t)us;
}

int simdrv_record(int fd, const struct simdrv_workload *w, const int32_t *a, const int32_t *b,
		  int32_t *c, struct accmap_recording **out, struct simdrv_result *res)
{
	const uint32_t rd = ACCMAP_REPLAY_MAP_READ, rw = rd | ACCMAP_REPLAY_MAP_WRITE;
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct accmap_replay_target_info info;
	struct accmap_recording *rec = NULL;
	struct accmap_player *player = NULL;
	struct accmap_sim_job job;
	struct simdrv_submit sub;
	uint8_t desc[SIMDRV_JD_SIZE];
	uint64_t va_desc, va_a, va_b, va_c, sa, sb, sc;
	uint32_t ea, eb, ec, nops, va_bits;
	int ret;

	memset(res, 0, sizeof(*res));
	res->map_failed = UINT32_MAX;
	res->run.failed_op = UINT32_MAX;
	res->run.fault_as = UINT32_MAX;
	ret = simdrv_elems(w, &ea, &eb, &ec);
	if (ret || w->as >= ACCMAP_REC_AS_MAX || w->slot >= SIMDRV_JS_SLOTS)
		return -EINVAL;
	va_bits = w->va_bits ? w->va_bits : SIMDRV_VA_BITS;

	ret = accmap_replay_find_target(fd, simdrv_target(), &res->target, &info);
	if (ret)
		return ret;
	if (!(info.formats & (1U << w->format)) || w->as >= info.as_count)
		return -EOPNOTSUPP;

	sa = page_up((uint64_t)ea * 4);
	sb = page_up((uint64_t)eb * 4);
	sc = page_up((uint64_t)ec * 4);
	va_desc = SIMDRV_VA_BASE;
	va_a = next_va(va_desc, ACCMAP_REC_PAGE_SIZE);
	va_b = next_va(va_a, sa);
	va_c = next_va(va_b, sb);

	memset(&job, 0, sizeof(job));
	job.op = w->op;
	job.m = w->m;
	job.n = w->n;
	job.k = w->k;
	job.a = va_a;
	job.b = va_b;
	job.c = va_c;
	simdrv_encode_job(desc, &job, 0);

	ret = accmap_rec_create(simdrv_target(), w->format, w->as, va_bits, &rec);
	if (ret)
		return ret;
	rec->gpu_id = info.gpu_id;
	/* The GPU writes the descriptor's status and C; it only reads A, B. */
	ret = add_map(rec, va_desc, desc, sizeof(desc), ACCMAP_REC_PAGE_SIZE, rw);
	if (!ret)
		ret = add_map(rec, va_a, a, (size_t)ea * 4, sa, rd);
	if (!ret)
		ret = add_map(rec, va_b, b, (size_t)eb * 4, sb, rd);
	if (!ret)
		ret = add_map(rec, va_c, NULL, 0, sc, rw);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "a", va_a, (uint64_t)ea * 4, ACCMAP_REC_SYM_INPUT);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "b", va_b, (uint64_t)eb * 4, ACCMAP_REC_SYM_INPUT);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "c", va_c, (uint64_t)ec * 4,
					    ACCMAP_REC_SYM_OUTPUT);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "input", va_a, (uint64_t)ea * 4,
					    ACCMAP_REC_SYM_INPUT);
	if (!ret)
		ret = accmap_rec_add_symbol(rec, "output", va_c, (uint64_t)ec * 4,
					    ACCMAP_REC_SYM_OUTPUT);
	if (ret)
		goto err_free_rec;

	/* Buffers and a session first: the op list needs the probed GPU. */
	ret = accmap_player_open(fd, rec, NULL, &player, &res->map_failed);
	if (ret)
		goto err_free_rec;
	ret = simdrv_probe(fd, accmap_player_session(player), info.gpu_id, &res->gpu);
	if (ret)
		goto err_close;
	if ((res->gpu.js_present && !(res->gpu.js_present & (1U << w->slot))) ||
	    (res->gpu.as_present && !(res->gpu.as_present & (1U << w->as)))) {
		ret = -EOPNOTSUPP;
		goto err_close;
	}

	memset(&sub, 0, sizeof(sub));
	sub.format = w->format;
	sub.as = w->as;
	sub.slot = w->slot;
	sub.head = va_desc;
	sub.timeout_us = job_timeout_us(w);
	nops = simdrv_build_ops(&res->gpu, &sub, ops);
	ret = accmap_rec_set_ops(rec, ops, nops);
	if (ret)
		goto err_close;

	ret = accmap_player_run(player, NULL, NULL, &res->run);
	if (ret) {
		if (res->run.failed_op < nops)
			res->failed = ops[res->run.failed_op];
		goto err_close;
	}
	ret = accmap_player_read(player, va_desc, desc, sizeof(desc));
	if (!ret)
		ret = accmap_player_read_symbol(player, "c", c, (size_t)ec * 4);
	if (ret)
		goto err_close;
	res->job_status = get_le32(desc + SIMDRV_JD_EXCEPTION_STATUS);
	if (res->job_status != SIMDRV_JOB_STATUS_DONE) {
		ret = -EIO;
		goto err_close;
	}

	ret = accmap_player_close(player);
	if (ret)
		goto err_free_rec;
	*out = rec;
	return 0;

err_close:
	accmap_player_close(player);
err_free_rec:
	accmap_rec_free(rec);
	return ret;
}

void simdrv_list_sum_job(struct accmap_sim_job *job, uint64_t head, uint32_t next_off,
			 uint32_t value_off, uint32_t max_nodes, uint64_t out)
{
	memset(job, 0, sizeof(*job));
	job->op = ACCMAP_SIM_OP_LIST_SUM_I32;
	job->a = head;
	job->m = next_off;
	job->k = value_off;
	job->n = max_nodes;
	job->b = 0;
	job->c = out;
}

void simdrv_svm_setup(struct accmap_replay_setup *s, uint32_t target, uint32_t format,
		      uint32_t va_bits, uint64_t start, uint64_t size)
{
	memset(s, 0, sizeof(*s));
	s->maps = 0;
	s->nr_maps = 0;
	s->target = target;
	s->format = format;
	s->as = 0;
	s->va_bits = va_bits;
	s->flags = ACCMAP_REPLAY_SETUP_SVM;
	s->svm_start = start;
	s->svm_size = size;
}

int simdrv_svm_open(int fd, uint32_t format, uint32_t va_bits, uint64_t start, uint64_t size,
		    struct simdrv_svm *svm)
{
	struct accmap_replay_setup s;
	int ret;

	memset(svm, 0, sizeof(*svm));
	svm->fd = fd;
	svm->format = format;
	ret = accmap_replay_find_target(fd, simdrv_target(), &svm->target, &svm->info);
	if (ret)
		return ret;
	simdrv_svm_setup(&s, svm->target, format, va_bits ? va_bits : SIMDRV_VA_BITS, start,
			 size);
	ret = accmap_replay_setup(fd, &s);
	if (ret)
		return ret;
	svm->session = s.session;
	ret = simdrv_probe(fd, svm->session, svm->info.gpu_id, &svm->gpu);
	if (ret) {
		simdrv_svm_close(svm);
		return ret;
	}
	return 0;
}

int simdrv_svm_close(struct simdrv_svm *svm)
{
	int ret;

	if (!svm->session)
		return 0;
	ret = accmap_replay_destroy(svm->fd, svm->session);
	svm->session = 0;
	return ret;
}

int simdrv_svm_run(struct simdrv_svm *svm, const void *head, uint32_t timeout_us,
		   struct accmap_replay_run *run)
{
	struct accmap_replay_op ops[SIMDRV_OPS_MAX];
	struct simdrv_submit sub;
	uint32_t nops;
	int ret;

	memset(&sub, 0, sizeof(sub));
	sub.format = svm->format;
	sub.as = svm->as;
	sub.slot = svm->slot;
	sub.head = (uint64_t)(uintptr_t)head;
	sub.timeout_us = timeout_us;
	sub.reset = !!svm->need_reset;
	nops = simdrv_build_ops(&svm->gpu, &sub, ops);
	ret = accmap_replay_run(svm->fd, svm->session, ops, nops, run);
	svm->need_reset = ret != 0;
	return ret;
}

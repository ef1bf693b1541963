/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simdrv: a tiny user-space driver for accmap's software Mali model (the
 * "sim" replay target), enough to record a compute job: it lays out the
 * GPU address space, writes a job descriptor of the model's own job type
 * (struct accmap_sim_job), and composes the register operations a Mali
 * job-manager driver would do to run it: power up, set up the address
 * space, unmask interrupts, submit, wait for the done interrupt.
 *
 * Used by accmapctl record, accmap-demo and the accmap_replay selftest.
 * Functions return 0 or a negative errno value, as libaccmap's do.
 *
 * For a shared-virtual-memory session (ACCMAP_REPLAY_SETUP_SVM, the
 * accmap_svm selftest) there is no recording: struct simdrv_svm holds
 * the session, and jobs whose descriptors, operands and pointers are
 * plain memory of the caller run through simdrv_svm_run().
 */
#ifndef ACCMAP_SIMDRV_H
#define ACCMAP_SIMDRV_H

#include <stdint.h>

#include "recording.h"

#define SIMDRV_TARGET			"sim"

/**
 * simdrv_target() - the replay target simdrv's jobs run on
 *
 * The environment variable ACCMAP_REPLAY_TARGET names another target with
 * the model's register map and job types (the qemu board's GPU, an mmio
 * target); without it, the model itself (SIMDRV_TARGET).
 *
 * Return: the target's name.
 */
const char *simdrv_target(void);

/*
 * Mali job-manager registers, as far as simdrv needs them (the offsets
 * kbase and panfrost use; drivers/accmap/mali_regs.h has the full map).
 */
#define SIMDRV_GPU_ID			0x0000
#define SIMDRV_GPU_IRQ_CLEAR		0x0024
#define SIMDRV_GPU_IRQ_MASK		0x0028
#define SIMDRV_GPU_COMMAND		0x0030
#define SIMDRV_GPU_CMD_SOFT_RESET	0x01
#define SIMDRV_GPU_IRQ_RESET_COMPLETED	0x100U
#define SIMDRV_AS_PRESENT		0x0018
#define SIMDRV_JS_PRESENT		0x001c
#define SIMDRV_SHADER_PRESENT_LO	0x0100
#define SIMDRV_TILER_PRESENT_LO		0x0110
#define SIMDRV_L2_PRESENT_LO		0x0120
#define SIMDRV_SHADER_READY_LO		0x0140
#define SIMDRV_TILER_READY_LO		0x0150
#define SIMDRV_L2_READY_LO		0x0160
#define SIMDRV_SHADER_PWRON_LO		0x0180
#define SIMDRV_TILER_PWRON_LO		0x0190
#define SIMDRV_L2_PWRON_LO		0x01a0

#define SIMDRV_JOB_IRQ_RAWSTAT		0x1000
#define SIMDRV_JOB_IRQ_CLEAR		0x1004
#define SIMDRV_JOB_IRQ_MASK		0x1008
#define SIMDRV_JOB_IRQ_DONE(n)		(1U << (n))
#define SIMDRV_JOB_IRQ_FAILED(n)	(1U << (16 + (n)))
#define SIMDRV_JS(n)			(0x1800 + (n) * 0x80)
#define SIMDRV_JS_HEAD_NEXT_LO		0x40
#define SIMDRV_JS_HEAD_NEXT_HI		0x44
#define SIMDRV_JS_AFFINITY_NEXT_LO	0x50
#define SIMDRV_JS_AFFINITY_NEXT_HI	0x54
#define SIMDRV_JS_CONFIG_NEXT		0x58
#define SIMDRV_JS_COMMAND_NEXT		0x60
#define SIMDRV_JS_COMMAND_START		0x01
#define SIMDRV_JS_SLOTS			16

#define SIMDRV_MMU_IRQ_CLEAR		0x2004
#define SIMDRV_MMU_IRQ_MASK		0x2008
#define SIMDRV_MMU_IRQ_FAULT(n)		(1U << (n))
#define SIMDRV_MMU_IRQ_BUS_ERROR(n)	(1U << (16 + (n)))
#define SIMDRV_AS(n)			(0x2400 + (n) * 0x40)
#define SIMDRV_AS_TRANSTAB_LO		0x00
#define SIMDRV_AS_TRANSTAB_HI		0x04
#define SIMDRV_AS_MEMATTR_LO		0x08
#define SIMDRV_AS_MEMATTR_HI		0x0c
#define SIMDRV_AS_COMMAND		0x18
#define SIMDRV_AS_FAULTSTATUS		0x1c
#define SIMDRV_AS_STATUS		0x28
#define SIMDRV_AS_TRANSCFG_LO		0x30
#define SIMDRV_AS_TRANSCFG_HI		0x34
#define SIMDRV_AS_CMD_UPDATE		0x01
#define SIMDRV_AS_STATUS_ACTIVE		0x01
#define SIMDRV_TRANSCFG_AARCH64_4K	0x6
#define SIMDRV_TRANSCFG_LEGACY		0x0

/* Job descriptor (64-bit format): header fields, then the model's job. */
#define SIMDRV_JD_EXCEPTION_STATUS	0x00
#define SIMDRV_JD_TYPE_BYTE		0x10
#define SIMDRV_JD_INDEX			0x12
#define SIMDRV_JD_NEXT			0x18
#define SIMDRV_JD_SIZE			(ACCMAP_SIM_JOB_OFFSET + sizeof(struct accmap_sim_job))
#define SIMDRV_JOB_STATUS_DONE		0x01

/* Memory attributes for the MEMATTR register (index 0 is used). */
#define SIMDRV_MEMATTR			0x00004c8d888d8f88ULL

/* Where simdrv_record() puts things in the GPU address space. */
#define SIMDRV_VA_BASE			0x100000000ULL
#define SIMDRV_VA_ALIGN			0x200000ULL
#define SIMDRV_VA_BITS			48

/* Descriptor alignment the model needs (job chains in caller memory). */
#define SIMDRV_JD_ALIGN			64

/* Most ops simdrv_build_ops() writes. */
#define SIMDRV_OPS_MAX			48

/**
 * struct simdrv_gpu - what the op list needs to know of the GPU
 * @gpu_id:         GPU_ID (from REPLAY_QUERY)
 * @l2_present:     L2_PRESENT_LO
 * @shader_present: SHADER_PRESENT_LO
 * @tiler_present:  TILER_PRESENT_LO
 * @js_present:     JS_PRESENT
 * @as_present:     AS_PRESENT
 */
struct simdrv_gpu {
	uint32_t gpu_id;
	uint32_t l2_present;
	uint32_t shader_present;
	uint32_t tiler_present;
	uint32_t js_present;
	uint32_t as_present;
};

/**
 * struct simdrv_submit - one job chain to run
 * @format:     ACCMAP_PGT_* of the session (sets TRANSCFG)
 * @as:         address space
 * @slot:       job slot
 * @head:       GPU VA of the first job descriptor
 * @timeout_us: how long to wait for the done interrupt
 * @reset:      begin with a GPU soft reset (after an MMU fault the
 *              faulting slot stays ACTIVE until one)
 */
struct simdrv_submit {
	uint32_t format;
	uint32_t as;
	uint32_t slot;
	uint64_t head;
	uint32_t timeout_us;
	uint32_t reset;
};

/**
 * struct simdrv_workload - a job simdrv_record() records
 * @op:      ACCMAP_SIM_OP_MATMUL_I32 or ACCMAP_SIM_OP_VADD_I32
 * @m:       rows of A and C (1 for VADD)
 * @n:       columns of B and C (the vector length for VADD)
 * @k:       columns of A, rows of B (1 for VADD)
 * @format:  ACCMAP_PGT_*
 * @as:      address space
 * @slot:    job slot
 * @va_bits: GPU VA bits; 0 for SIMDRV_VA_BITS
 */
struct simdrv_workload {
	uint32_t op;
	uint32_t m;
	uint32_t n;
	uint32_t k;
	uint32_t format;
	uint32_t as;
	uint32_t slot;
	uint32_t va_bits;
};

/**
 * struct simdrv_result - how a recording run went
 * @run:        the run, as accmap_player_run() reports it (its @ops
 *              pointer is stale once simdrv_record() returns)
 * @failed:     a copy of the op that stopped the run, if one did
 * @job_status: exception_status of the descriptor after the run
 * @gpu:        the GPU as probed
 * @target:     index of the sim target
 * @map_failed: the map that could not be set up, or UINT32_MAX
 */
struct simdrv_result {
	struct accmap_replay_run run;
	struct accmap_replay_op failed;
	uint32_t job_status;
	struct simdrv_gpu gpu;
	uint32_t target;
	uint32_t map_failed;
};

/**
 * simdrv_read_reg() - read one register of a session's target
 * @fd: accmap device file descriptor
 * @session: a replay session
 * @offset: register offset
 * @value: set to the register's value
 *
 * A run of one plain READ; the value is the run's @value, which on success
 * is what the run's last READ read.
 *
 * Return: 0, or the negative errno of the run.
 */
int simdrv_read_reg(int fd, uint32_t session, uint32_t offset, uint32_t *value);

/**
 * simdrv_probe() - read the registers simdrv_build_ops() needs
 * @fd: accmap device file descriptor
 * @session: a replay session on the target
 * @gpu_id: GPU_ID as REPLAY_QUERY reported it
 * @gpu: filled in
 *
 * Return: 0, or the negative errno of a register read.
 */
int simdrv_probe(int fd, uint32_t session, uint32_t gpu_id, struct simdrv_gpu *gpu);

/**
 * simdrv_build_ops() - the register operations that run one job chain
 * @gpu: the GPU, from simdrv_probe()
 * @s: the job chain
 * @ops: room for SIMDRV_OPS_MAX ops
 *
 * With @s->reset, first resets the GPU (simdrv_reset_ops()).  Then checks
 * GPU_ID (a strict READ, if known), powers up the L2, shader and
 * tiler cores and polls their READY bits, sets up the address space
 * (page-table root, MEMATTR, TRANSCFG, UPDATE, poll until not ACTIVE),
 * clears and unmasks the job and MMU interrupts of the slot and the
 * address space, submits the chain (HEAD_NEXT, AFFINITY_NEXT,
 * CONFIG_NEXT, COMMAND_NEXT), waits for the slot's done interrupt and
 * clears it.
 *
 * Return: the number of ops written.
 */
uint32_t simdrv_build_ops(const struct simdrv_gpu *gpu, const struct simdrv_submit *s,
			  struct accmap_replay_op *ops);

/**
 * simdrv_reset_ops() - the register operations of a GPU soft reset
 * @ops: room for SIMDRV_RESET_OPS ops
 *
 * Clears GPU_IRQ, writes SOFT_RESET to GPU_COMMAND, unmasks
 * RESET_COMPLETED (the reset cleared the mask) and waits for it.  The
 * reset also clears pending job and MMU interrupts, powers the cores
 * down and forgets the address spaces: what follows must program them
 * again, as simdrv_build_ops() does.
 *
 * Return: the number of ops written, SIMDRV_RESET_OPS.
 */
#define SIMDRV_RESET_OPS		4
uint32_t simdrv_reset_ops(struct accmap_replay_op *ops);

/**
 * simdrv_encode_job() - write a job descriptor of the model's job type
 * @desc: SIMDRV_JD_SIZE bytes
 * @job: the payload
 * @next: GPU VA of the next descriptor, 0 for the last
 */
void simdrv_encode_job(uint8_t *desc, const struct accmap_sim_job *job, uint64_t next);

/**
 * simdrv_elems() - elements of the matrices of a workload
 * @w: the workload
 * @a: if not NULL, set to the elements of A
 * @b: if not NULL, set to the elements of B
 * @c: if not NULL, set to the elements of C
 *
 * Return: 0, or -EINVAL if the dimensions are beyond the model's limits
 * (ACCMAP_SIM_DIM_MAX, ACCMAP_SIM_ELEMS_MAX, ACCMAP_SIM_MACS_MAX).
 */
int simdrv_elems(const struct simdrv_workload *w, uint32_t *a, uint32_t *b, uint32_t *c);

/**
 * simdrv_reference() - the workload computed by the CPU
 * @w: the workload
 * @a: A
 * @b: B
 * @c: set to C
 */
void simdrv_reference(const struct simdrv_workload *w, const int32_t *a, const int32_t *b,
		      int32_t *c);

/**
 * simdrv_record() - run a workload on the sim and make its recording
 * @fd: accmap device file descriptor
 * @w: the workload
 * @a: A (simdrv_elems() elements)
 * @b: B
 * @c: set to C as the model computed it
 * @rec: set to the recording on success: maps for the descriptor, A, B
 *       and C (its contents as before the run), the ops, and symbols
 *       "a", "b", "c", "input" (A) and "output" (C)
 * @res: filled in with how the run went, on failure too
 *
 * Return: 0 if the run worked and the job reported DONE; -EIO if it ran
 * but the job did not complete (@res->job_status); or the negative errno
 * of the call that failed (@res->run says more about a failed run).
 */
int simdrv_record(int fd, const struct simdrv_workload *w, const int32_t *a, const int32_t *b,
		  int32_t *c, struct accmap_recording **rec, struct simdrv_result *res);

/**
 * simdrv_list_sum_job() - an ACCMAP_SIM_OP_LIST_SUM_I32 payload
 * @job: filled in
 * @head: GPU VA of the first node (0: an empty list)
 * @next_off: byte offset of the 64-bit next pointer in a node
 * @value_off: byte offset of the int32 value in a node
 * @max_nodes: the most nodes the model may walk (1 to ACCMAP_SIM_ELEMS_MAX)
 * @out: GPU VA of two 32-bit words: the wrapping sum, the node count
 */
void simdrv_list_sum_job(struct accmap_sim_job *job, uint64_t head, uint32_t next_off,
			 uint32_t value_off, uint32_t max_nodes, uint64_t out);

/**
 * struct simdrv_svm - an SVM session on the sim target
 * @fd:        accmap device file descriptor (not owned)
 * @target:    index of the sim target
 * @info:      the target, as REPLAY_QUERY described it
 * @session:   the session, 0 if none
 * @format:    ACCMAP_PGT_* of the session
 * @as:        its address space
 * @slot:      the job slot simdrv_svm_run() uses
 * @gpu:       the GPU as probed
 * @need_reset: the last run did not end cleanly: reset the GPU before the
 *             next job
 */
struct simdrv_svm {
	int fd;
	uint32_t target;
	struct accmap_replay_target_info info;
	uint32_t session;
	uint32_t format;
	uint32_t as;
	uint32_t slot;
	struct simdrv_gpu gpu;
	int need_reset;
};

/**
 * simdrv_svm_setup() - fill a REPLAY_SETUP argument for an SVM session
 * @s: filled in: no maps, ACCMAP_REPLAY_SETUP_SVM
 * @target: target index
 * @format: ACCMAP_PGT_*
 * @va_bits: GPU VA bits
 * @start: first mirrored byte (CPU page aligned)
 * @size: bytes mirrored
 *
 * For callers that issue the ioctl themselves (errno tests); address
 * space 0.
 */
void simdrv_svm_setup(struct accmap_replay_setup *s, uint32_t target, uint32_t format,
		      uint32_t va_bits, uint64_t start, uint64_t size);

/**
 * simdrv_svm_open() - make an SVM session on the sim and probe the GPU
 * @fd: accmap device file descriptor
 * @format: ACCMAP_PGT_*
 * @va_bits: GPU VA bits (0: SIMDRV_VA_BITS)
 * @start: first mirrored byte (CPU page aligned)
 * @size: bytes mirrored
 * @svm: filled in; address space 0, job slot 0
 *
 * Return: 0, or the negative errno of REPLAY_SETUP, of finding the
 * target or of the probe (the session is destroyed then).
 */
int simdrv_svm_open(int fd, uint32_t format, uint32_t va_bits, uint64_t start, uint64_t size,
		    struct simdrv_svm *svm);

/**
 * simdrv_svm_close() - destroy the session of simdrv_svm_open()
 * @svm: the session; its fd stays open
 *
 * Return: 0 or the negative errno of REPLAY_DESTROY.
 */
int simdrv_svm_close(struct simdrv_svm *svm);

/**
 * simdrv_svm_run() - run the job chain at @head in an SVM session
 * @svm: the session
 * @head: the first descriptor, in the caller's memory (SIMDRV_JD_ALIGN
 *        aligned; the GPU writes its status there): GPU VA == CPU VA
 * @timeout_us: how long to wait for the done interrupt
 * @run: the run's result
 *
 * Resets the GPU first if the previous run did not end cleanly (an MMU
 * fault leaves the slot stalled), then runs simdrv_build_ops().
 *
 * Return: 0, or the negative errno of the run (@run says more).
 */
int simdrv_svm_run(struct simdrv_svm *svm, const void *head, uint32_t timeout_us,
		   struct accmap_replay_run *run);

#endif /* ACCMAP_SIMDRV_H */

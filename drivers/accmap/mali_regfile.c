// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the registers of a Mali job-manager GPU, as accmap's GPU models
 * keep them (mali_regfile.h says what this part owns).
 *
 * Registers the GPU does not have read 0 and ignore writes.  A soft or
 * hard reset puts every register back to its power-up value at the
 * command; RESET_COMPLETED rises when the model says the reset ended,
 * and a START before then is ignored, as the GPU is not there yet.  A
 * stalled address space resumes on UNLOCK, FLUSH_PT or FLUSH_MEM once its
 * fault bit is clear.
 */

#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/accmap.h>

#include "mali_jobs.h"
#include "mali_regfile.h"
#include "mali_regs.h"

/* The GPU: a Mali-G71 MP8 as the HiKey960's driver read it. */
#define RF_L2_FEATURES		0x07130206
#define RF_CORE_FEATURES	0x00000000
#define RF_TILER_FEATURES	0x00000809
#define RF_MEM_FEATURES		0x00000101
#define RF_MMU_FEATURES		0x00002830	/* 48-bit VA, 40-bit PA */
#define RF_THREAD_MAX_THREADS	0x180
#define RF_THREAD_MAX_WG_SIZE	0x180
#define RF_THREAD_MAX_BARRIER	0x180
#define RF_THREAD_FEATURES	0x0a046000
#define RF_AS_PRESENT		GENMASK(MALI_REGFILE_AS_COUNT - 1, 0)
#define RF_JS_PRESENT		GENMASK(MALI_REGFILE_JS_COUNT - 1, 0)

static const u32 rf_texture_features[4] = {
	0xffffffff, 0x00ff0fff, 0xfe3fffff, 0x00000000,
};

static const u32 rf_js_features[MALI_REGFILE_JS_COUNT] = {
	0x0000020e, 0x000004fe, 0x0000007e,
};

static const u64 rf_present[MALI_REGFILE_DOMAINS] = {
	[MALI_REGFILE_SHADER] = 0xffULL,
	[MALI_REGFILE_TILER] = 0x1ULL,
	[MALI_REGFILE_L2] = 0x1ULL,
};

/* Register blocks (offsets of mali_regs.h). */
#define RF_GPU_END		0x1000
#define RF_JS_END		MALI_JS_BASE(MALI_JOB_SLOTS)
#define RF_AS_END		MALI_AS_BASE(MALI_AS_COUNT)
#define RF_JS_STRIDE		0x80
#define RF_AS_STRIDE		0x40
#define RF_PWR_STRIDE		0x10
#define RF_JS_STATE_NEXT(n)	BIT(16 + (n))

/**
 * mali_regfile_init() - a register file at power-up
 * @rf:   the register file
 * @ops:  the model's operations
 * @priv: passed to @ops
 */
void mali_regfile_init(struct mali_regfile *rf,
		       const struct mali_regfile_ops *ops, void *priv)
{
	memset(rf, 0, sizeof(*rf));
	rf->ops = ops;
	rf->priv = priv;
	mali_regfile_power_up(rf);
}

/**
 * mali_regfile_power_up() - every register back to its power-up value
 * @rf: the register file
 */
void mali_regfile_power_up(struct mali_regfile *rf)
{
	unsigned int i;

	memset(rf->irq_raw, 0, sizeof(rf->irq_raw));
	memset(rf->irq_mask, 0, sizeof(rf->irq_mask));
	memset(rf->ready, 0, sizeof(rf->ready));
	memset(rf->as, 0, sizeof(rf->as));
	memset(rf->js, 0, sizeof(rf->js));
	for (i = 0; i < MALI_REGFILE_JS_COUNT; i++)
		rf->js[i].status = MALI_JS_STATUS_IDLE;
	rf->latest_flush = 0;
	rf->resetting = false;
}

/**
 * mali_regfile_raise() - raise interrupt bits
 * @rf:   the register file
 * @irq:  ACCMAP_REPLAY_IRQ_*
 * @bits: the RAWSTAT bits
 */
void mali_regfile_raise(struct mali_regfile *rf, u32 irq, u32 bits)
{
	rf->irq_raw[irq] |= bits;
}

static u32 rf_half(u64 v, u32 offset)
{
	return offset & 4 ? upper_32_bits(v) : lower_32_bits(v);
}

static void rf_set_half(u64 *reg, u32 offset, u32 value)
{
	if (offset & 4)
		*reg = (*reg & GENMASK_ULL(31, 0)) | (u64)value << 32;
	else
		*reg = (*reg & GENMASK_ULL(63, 32)) | value;
}

/* Which interrupt block @offset is in, or -1; the register in *@reg. */
static int rf_irq_block(u32 offset, u32 *reg)
{
	static const u32 base[ACCMAP_REPLAY_IRQ_COUNT] = {
		[ACCMAP_REPLAY_IRQ_JOB] = MALI_JOB_IRQ_RAWSTAT,
		[ACCMAP_REPLAY_IRQ_MMU] = MALI_MMU_IRQ_RAWSTAT,
		[ACCMAP_REPLAY_IRQ_GPU] = MALI_GPU_IRQ_RAWSTAT,
	};
	int irq;

	for (irq = 0; irq < ACCMAP_REPLAY_IRQ_COUNT; irq++) {
		if (offset >= base[irq] && offset <= base[irq] + 0xc) {
			*reg = offset - base[irq];
			return irq;
		}
	}
	return -1;
}

static u32 rf_irq_read(const struct mali_regfile *rf, int irq, u32 reg)
{
	switch (reg) {
	case 0x0:	/* RAWSTAT */
		return rf->irq_raw[irq];
	case 0x8:	/* MASK */
		return rf->irq_mask[irq];
	case 0xc:	/* STATUS */
		return rf->irq_raw[irq] & rf->irq_mask[irq];
	}
	return 0;	/* CLEAR is write-only */
}

static void rf_irq_write(struct mali_regfile *rf, int irq, u32 reg, u32 value)
{
	switch (reg) {
	case 0x0:	/* RAWSTAT: writing 1s raises them (interrupt test) */
		mali_regfile_raise(rf, irq, value);
		break;
	case 0x4:	/* CLEAR */
		rf->irq_raw[irq] &= ~value;
		break;
	case 0x8:	/* MASK */
		rf->irq_mask[irq] = value;
		break;
	}
}

/*
 * The power domain of the register at @offset in the group of PRESENT,
 * READY, PWRON, PWROFF or PWRTRANS registers starting at @first, or -1.
 */
static int rf_domain(u32 offset, u32 first)
{
	if (offset < first ||
	    offset >= first + MALI_REGFILE_DOMAINS * RF_PWR_STRIDE ||
	    (offset & 0x8))
		return -1;
	return (offset - first) / RF_PWR_STRIDE;
}

static u32 rf_gpu_read(const struct mali_regfile *rf, u32 offset)
{
	int d;

	switch (offset) {
	case MALI_GPU_ID:
		return MALI_REGFILE_GPU_ID;
	case MALI_L2_FEATURES:
		return RF_L2_FEATURES;
	case MALI_CORE_FEATURES:
		return RF_CORE_FEATURES;
	case MALI_TILER_FEATURES:
		return RF_TILER_FEATURES;
	case MALI_MEM_FEATURES:
		return RF_MEM_FEATURES;
	case MALI_MMU_FEATURES:
		return RF_MMU_FEATURES;
	case MALI_AS_PRESENT:
		return RF_AS_PRESENT;
	case MALI_JS_PRESENT:
		return RF_JS_PRESENT;
	case MALI_GPU_STATUS:
		return rf->resetting ? 1 : 0;	/* GPU_ACTIVE while resetting */
	case MALI_LATEST_FLUSH:
		return rf->latest_flush;
	case MALI_THREAD_MAX_THREADS:
		return RF_THREAD_MAX_THREADS;
	case MALI_THREAD_MAX_WORKGROUP_SIZE:
		return RF_THREAD_MAX_WG_SIZE;
	case MALI_THREAD_MAX_BARRIER_SIZE:
		return RF_THREAD_MAX_BARRIER;
	case MALI_THREAD_FEATURES:
		return RF_THREAD_FEATURES;
	}

	if (offset >= MALI_TEXTURE_FEATURES(0) &&
	    offset < MALI_TEXTURE_FEATURES(ARRAY_SIZE(rf_texture_features)))
		return rf_texture_features[(offset -
					    MALI_TEXTURE_FEATURES(0)) / 4];
	if (offset >= MALI_JS_FEATURES(0) &&
	    offset < MALI_JS_FEATURES(MALI_REGFILE_JS_COUNT))
		return rf_js_features[(offset - MALI_JS_FEATURES(0)) / 4];

	/* PRESENT, READY; PWRON, PWROFF (write-only) and PWRTRANS read 0. */
	d = rf_domain(offset, MALI_SHADER_PRESENT_LO);
	if (d >= 0)
		return rf_half(rf_present[d], offset);
	d = rf_domain(offset, MALI_SHADER_READY_LO);
	if (d >= 0)
		return rf_half(rf->ready[d], offset);
	return 0;
}

/*
 * PWRON/PWROFF of one domain.  Powering shader cores or the tiler brings
 * the L2 up as well, as the hardware does.  Transitions are instant.
 */
static void rf_power(struct mali_regfile *rf, int d, u32 offset, u32 value,
		     bool on)
{
	u64 bits = offset & 4 ? (u64)value << 32 : value;

	bits &= rf_present[d];
	if (on) {
		rf->ready[d] |= bits;
		if (bits && d != MALI_REGFILE_L2)
			rf->ready[MALI_REGFILE_L2] = rf_present[MALI_REGFILE_L2];
	} else {
		rf->ready[d] &= ~bits;
	}
	mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_GPU,
			   MALI_GPU_IRQ_POWER_CHANGED |
			   MALI_GPU_IRQ_POWER_CHANGED_ALL);
}

static void rf_gpu_command(struct mali_regfile *rf, u32 cmd)
{
	switch (cmd) {
	case MALI_GPU_CMD_SOFT_RESET:
	case MALI_GPU_CMD_HARD_RESET:
		mali_regfile_power_up(rf);
		rf->resetting = true;
		rf->ops->reset(rf->priv);
		break;
	case MALI_GPU_CMD_CLEAN_CACHES:
	case MALI_GPU_CMD_CLEAN_INV_CACHES:
		/* No caches: every write already reached memory. */
		rf->latest_flush++;
		mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_GPU,
				   MALI_GPU_IRQ_CLEAN_CACHES_DONE);
		break;
	}
}

static void rf_gpu_write(struct mali_regfile *rf, u32 offset, u32 value)
{
	int d;

	if (offset == MALI_GPU_COMMAND) {
		rf_gpu_command(rf, value);
		return;
	}
	d = rf_domain(offset, MALI_SHADER_PWRON_LO);
	if (d >= 0) {
		rf_power(rf, d, offset, value, true);
		return;
	}
	d = rf_domain(offset, MALI_SHADER_PWROFF_LO);
	if (d >= 0)
		rf_power(rf, d, offset, value, false);
}

/* COMMAND_NEXT START on an idle slot: the _NEXT registers become current. */
static void rf_slot_start(struct mali_regfile *rf, unsigned int n)
{
	struct mali_regfile_slot *js = &rf->js[n];

	js->head = js->head_next;
	js->tail = js->head_next;
	js->affinity = js->affinity_next;
	js->config = js->config_next;
	js->flush_id = js->flush_id_next;
	js->status = MALI_JS_STATUS_ACTIVE;
	js->next_pending = false;
	js->queued = true;
	rf->ops->start(rf->priv, n);
}

/* The slot whose block holds @offset, or NULL; the register in *@reg. */
static const struct mali_regfile_slot *rf_slot(const struct mali_regfile *rf,
					       u32 offset, u32 *reg,
					       unsigned int *n)
{
	if (offset < MALI_JS_BASE(0))
		return NULL;
	*n = (offset - MALI_JS_BASE(0)) / RF_JS_STRIDE;
	if (*n >= MALI_REGFILE_JS_COUNT)
		return NULL;
	*reg = offset - MALI_JS_BASE(*n);
	return &rf->js[*n];
}

static u32 rf_js_read(const struct mali_regfile *rf, u32 offset)
{
	const struct mali_regfile_slot *js;
	unsigned int n;
	u32 state = 0, reg;

	if (offset == MALI_JOB_IRQ_JS_STATE) {
		for (n = 0; n < MALI_REGFILE_JS_COUNT; n++) {
			if (rf->js[n].status == MALI_JS_STATUS_ACTIVE)
				state |= BIT(n);
			if (rf->js[n].next_pending)
				state |= RF_JS_STATE_NEXT(n);
		}
		return state;
	}
	js = rf_slot(rf, offset, &reg, &n);
	if (!js)
		return 0;

	switch (reg) {
	case MALI_JS_HEAD_LO:
	case MALI_JS_HEAD_HI:
		return rf_half(js->head, offset);
	case MALI_JS_TAIL_LO:
	case MALI_JS_TAIL_HI:
		return rf_half(js->tail, offset);
	case MALI_JS_AFFINITY_LO:
	case MALI_JS_AFFINITY_HI:
		return rf_half(js->affinity, offset);
	case MALI_JS_CONFIG:
		return js->config;
	case MALI_JS_STATUS:
		return js->status;
	case MALI_JS_HEAD_NEXT_LO:
	case MALI_JS_HEAD_NEXT_HI:
		return rf_half(js->head_next, offset);
	case MALI_JS_AFFINITY_NEXT_LO:
	case MALI_JS_AFFINITY_NEXT_HI:
		return rf_half(js->affinity_next, offset);
	case MALI_JS_CONFIG_NEXT:
		return js->config_next;
	case MALI_JS_COMMAND_NEXT:
		return js->next_pending ? MALI_JS_COMMAND_START : 0;
	case MALI_JS_FLUSH_ID_NEXT:
		return js->flush_id_next;
	}
	return 0;
}

static void rf_js_write(struct mali_regfile *rf, u32 offset, u32 value)
{
	struct mali_regfile_slot *js;
	unsigned int n;
	u32 reg;

	if (!rf_slot(rf, offset, &reg, &n))
		return;
	js = &rf->js[n];

	switch (reg) {
	case MALI_JS_HEAD_NEXT_LO:
	case MALI_JS_HEAD_NEXT_HI:
		rf_set_half(&js->head_next, offset, value);
		break;
	case MALI_JS_AFFINITY_NEXT_LO:
	case MALI_JS_AFFINITY_NEXT_HI:
		rf_set_half(&js->affinity_next, offset, value);
		break;
	case MALI_JS_CONFIG_NEXT:
		js->config_next = value;
		break;
	case MALI_JS_FLUSH_ID_NEXT:
		js->flush_id_next = value;
		break;
	case MALI_JS_COMMAND_NEXT:
		if (value == MALI_JS_COMMAND_START) {
			if (rf->resetting)
				break;	/* the GPU is not there yet */
			if (js->status == MALI_JS_STATUS_ACTIVE)
				js->next_pending = true;
			else
				rf_slot_start(rf, n);
		} else if (value == 0) {
			/* NOP takes back a START still waiting. */
			js->next_pending = false;
		}
		break;
	}
}

static u32 rf_as_read(const struct mali_regfile *rf, u32 offset)
{
	unsigned int n = (offset - MALI_AS_BASE(0)) / RF_AS_STRIDE;
	const struct mali_regfile_as *as;

	if (n >= MALI_REGFILE_AS_COUNT)
		return 0;
	as = &rf->as[n];

	switch (offset - MALI_AS_BASE(n)) {
	case MALI_AS_TRANSTAB_LO:
	case MALI_AS_TRANSTAB_HI:
		return rf_half(as->transtab, offset);
	case MALI_AS_MEMATTR_LO:
	case MALI_AS_MEMATTR_HI:
		return rf_half(as->memattr, offset);
	case MALI_AS_LOCKADDR_LO:
	case MALI_AS_LOCKADDR_HI:
		return rf_half(as->lockaddr, offset);
	case MALI_AS_FAULTSTATUS:
		return as->faultstatus;
	case MALI_AS_FAULTADDRESS_LO:
	case MALI_AS_FAULTADDRESS_HI:
		return rf_half(as->faultaddress, offset);
	case MALI_AS_STATUS:
		return as->busy ? MALI_AS_STATUS_ACTIVE : 0;
	case MALI_AS_TRANSCFG_LO:
	case MALI_AS_TRANSCFG_HI:
		return rf_half(as->transcfg, offset);
	}
	return 0;	/* COMMAND, FAULTEXTRA */
}

static void rf_as_write(struct mali_regfile *rf, u32 offset, u32 value)
{
	unsigned int n = (offset - MALI_AS_BASE(0)) / RF_AS_STRIDE;
	struct mali_regfile_as *as;

	if (n >= MALI_REGFILE_AS_COUNT)
		return;
	as = &rf->as[n];

	switch (offset - MALI_AS_BASE(n)) {
	case MALI_AS_TRANSTAB_LO:
	case MALI_AS_TRANSTAB_HI:
		rf_set_half(&as->transtab, offset, value);
		break;
	case MALI_AS_MEMATTR_LO:
	case MALI_AS_MEMATTR_HI:
		rf_set_half(&as->memattr, offset, value);
		break;
	case MALI_AS_LOCKADDR_LO:
	case MALI_AS_LOCKADDR_HI:
		rf_set_half(&as->lockaddr, offset, value);
		break;
	case MALI_AS_TRANSCFG_LO:
	case MALI_AS_TRANSCFG_HI:
		rf_set_half(&as->transcfg, offset, value);
		break;
	case MALI_AS_COMMAND:
		if (value == MALI_AS_CMD_NOP)
			break;
		/* The walkers cache nothing: LOCK and the flushes just end. */
		if (value == MALI_AS_CMD_UPDATE) {
			as->cur_transtab = as->transtab;
			as->cur_memattr = as->memattr;
			as->cur_transcfg = as->transcfg;
		}
		/* A stalled address space resumes once its fault is cleared. */
		if ((value == MALI_AS_CMD_UNLOCK ||
		     value == MALI_AS_CMD_FLUSH_PT ||
		     value == MALI_AS_CMD_FLUSH_MEM) &&
		    !(rf->irq_raw[ACCMAP_REPLAY_IRQ_MMU] & MALI_MMU_IRQ_FAULT(n)))
			as->stalled = false;
		if (rf->ops->as_command && rf->ops->as_command(rf->priv, n, value))
			as->busy = true;
		break;
	}
}

/**
 * mali_regfile_read() - read a register
 * @rf:     the register file
 * @offset: register offset, 4-byte aligned, inside MALI_WINDOW_SIZE
 *
 * Return: the register's value; 0 for a register the GPU does not have.
 */
u32 mali_regfile_read(const struct mali_regfile *rf, u32 offset)
{
	u32 reg;
	int irq;

	if (offset >= MALI_WINDOW_SIZE || offset & 3)
		return 0;
	irq = rf_irq_block(offset, &reg);
	if (irq >= 0)
		return rf_irq_read(rf, irq, reg);
	if (offset < RF_GPU_END)
		return rf_gpu_read(rf, offset);
	if (offset < RF_JS_END)
		return rf_js_read(rf, offset);
	if (offset >= MALI_AS_BASE(0) && offset < RF_AS_END)
		return rf_as_read(rf, offset);
	return 0;
}

/**
 * mali_regfile_write() - write a register
 * @rf:     the register file
 * @offset: register offset, 4-byte aligned, inside MALI_WINDOW_SIZE
 * @value:  the value
 *
 * Writes to read-only registers and to registers the GPU does not have
 * are ignored.  A START calls the model's start, a reset command its
 * reset, an address-space command its as_command.
 *
 * Return: whether a RAWSTAT bit was raised (the model's waiters may wake).
 */
bool mali_regfile_write(struct mali_regfile *rf, u32 offset, u32 value)
{
	u32 before[ACCMAP_REPLAY_IRQ_COUNT], reg;
	int irq;

	if (offset >= MALI_WINDOW_SIZE || offset & 3)
		return false;
	memcpy(before, rf->irq_raw, sizeof(before));
	irq = rf_irq_block(offset, &reg);
	if (irq >= 0)
		rf_irq_write(rf, irq, reg, value);
	else if (offset < RF_GPU_END)
		rf_gpu_write(rf, offset, value);
	else if (offset < RF_JS_END)
		rf_js_write(rf, offset, value);
	else if (offset >= MALI_AS_BASE(0) && offset < RF_AS_END)
		rf_as_write(rf, offset, value);
	for (irq = 0; irq < ACCMAP_REPLAY_IRQ_COUNT; irq++)
		if (rf->irq_raw[irq] & ~before[irq])
			return true;
	return false;
}

/**
 * mali_regfile_reset_done() - a reset ended: RESET_COMPLETED rises
 * @rf: the register file
 */
void mali_regfile_reset_done(struct mali_regfile *rf)
{
	rf->resetting = false;
	mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_GPU,
			   MALI_GPU_IRQ_RESET_COMPLETED);
}

/**
 * mali_regfile_as_idle() - the address-space commands in progress ended
 * @rf: the register file
 */
void mali_regfile_as_idle(struct mali_regfile *rf)
{
	unsigned int n;

	for (n = 0; n < MALI_REGFILE_AS_COUNT; n++)
		rf->as[n].busy = false;
}

/**
 * mali_regfile_latch_fault() - an MMU fault on an address space
 * @rf:      the register file
 * @as:      the address space
 * @status:  its FAULTSTATUS (exception type, access type)
 * @address: the GPU address that faulted
 *
 * FAULTSTATUS and FAULTADDRESS take the fault unless one is already
 * pending there (its interrupt bit raised); the MMU interrupt rises.
 */
void mali_regfile_latch_fault(struct mali_regfile *rf, unsigned int as,
			      u32 status, u64 address)
{
	u32 bit = MALI_MMU_IRQ_FAULT(as);

	if (!(rf->irq_raw[ACCMAP_REPLAY_IRQ_MMU] & bit)) {
		rf->as[as].faultstatus = status;
		rf->as[as].faultaddress = address;
	}
	mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_MMU, bit);
}

/**
 * mali_regfile_as_format() - the table format the MMU walks for an AS
 * @as: the address space
 *
 * From the configuration the last UPDATE latched: AArch64 4K tables, or
 * LPAE ones (legacy mode, the table mode in TRANSTAB's low bits).
 *
 * Return: ACCMAP_PGT_*, or MALI_REGFILE_FORMAT_NONE (unmapped, identity or
 * a mode without tables): every access through the AS then faults.
 */
u32 mali_regfile_as_format(const struct mali_regfile_as *as)
{
	switch (as->cur_transcfg & MALI_TRANSCFG_ADRMODE_MASK) {
	case MALI_TRANSCFG_ADRMODE_AARCH64_4K:
		return ACCMAP_PGT_MALI_AARCH64_4K;
	case MALI_TRANSCFG_ADRMODE_LEGACY:
		if ((as->cur_transtab & MALI_LPAE_TRANSTAB_ADRMODE_MASK) ==
		    MALI_LPAE_TRANSTAB_ADRMODE_TABLE)
			return ACCMAP_PGT_MALI_LPAE;
		return MALI_REGFILE_FORMAT_NONE;
	}
	return MALI_REGFILE_FORMAT_NONE;
}

/**
 * mali_regfile_chain_end() - publish how a slot's chain ended
 * @rf:   the register file
 * @slot: the slot
 * @end:  how (mali_jobs.h)
 * @code: JS_STATUS of a failed chain
 * @jd:   the last descriptor the chain reached (the failed or faulted one)
 *
 * Done: HEAD 0, JS_STATUS DONE and the slot's DONE bit; failed: HEAD and
 * JS_STATUS name the job and the slot's FAILED bit rises; either way a
 * START that waited in _NEXT starts now.  A chain stopped by an MMU fault
 * stays active with HEAD at the job (the caller latched the fault); an
 * aborted one leaves the registers as the reset made them.
 */
void mali_regfile_chain_end(struct mali_regfile *rf, unsigned int slot,
			    enum mali_jobs_end end, u32 code, u64 jd)
{
	struct mali_regfile_slot *js = &rf->js[slot];

	switch (end) {
	case MALI_JOBS_DONE:
		js->head = 0;
		js->status = MALI_JS_STATUS_DONE;
		mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_JOB,
				   MALI_JOB_IRQ_DONE(slot));
		break;
	case MALI_JOBS_FAILED:
		js->head = jd;
		js->status = code;
		mali_regfile_raise(rf, ACCMAP_REPLAY_IRQ_JOB,
				   MALI_JOB_IRQ_FAILED(slot));
		break;
	case MALI_JOBS_FAULT:
		js->head = jd;
		return;
	default:
		return;
	}
	js->tail = jd;
	if (js->next_pending)
		rf_slot_start(rf, slot);
}

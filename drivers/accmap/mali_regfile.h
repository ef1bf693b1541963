/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: the registers of a Mali job-manager GPU, as accmap's GPU models
 * keep them.  The software model in accmap.ko (replay_sim.c) and the
 * qemu device of the test boards (tools/testing/vm/qemu/accmap-mali.c)
 * both hold one, so the two answer every register alike.
 *
 * This part owns the register file: what each register reads, what a
 * write does to it (interrupt blocks, GPU control with its power domains
 * and commands, job slots, address spaces), which GPU it describes (the
 * Mali-G71 as the HiKey960's driver read it: 3 job slots, 8 address
 * spaces), and how a chain's end is published in it.  It calls nothing
 * but the ops it is given, takes no lock (its caller holds its model's
 * register lock around every call) and never sleeps.  Timing is the
 * model's: a reset or an address-space command may end at once or later.
 */
#ifndef _ACCMAP_MALI_REGFILE_H
#define _ACCMAP_MALI_REGFILE_H

#include <linux/types.h>
#include <uapi/linux/accmap.h>

#include "mali_jobs.h"

#define MALI_REGFILE_GPU_ID	0x60a00002	/* Mali-G71 r0p0, as the HiKey960's */
#define MALI_REGFILE_AS_COUNT	8
#define MALI_REGFILE_JS_COUNT	3
/* mali_regfile_as_format(): no table format, every access faults. */
#define MALI_REGFILE_FORMAT_NONE	0xffffffffU

/* Power domains: PRESENT, READY, PWRON, PWROFF, PWRTRANS each 0x10 apart. */
enum mali_regfile_domain {
	MALI_REGFILE_SHADER,
	MALI_REGFILE_TILER,
	MALI_REGFILE_L2,
	MALI_REGFILE_DOMAINS,
};

/**
 * struct mali_regfile_as - one address space
 * @transtab:      TRANSTAB as written
 * @memattr:       MEMATTR as written
 * @transcfg:      TRANSCFG as written
 * @lockaddr:      LOCKADDR as written
 * @cur_transtab:  TRANSTAB the MMU uses, latched by COMMAND UPDATE
 * @cur_memattr:   MEMATTR latched by UPDATE (kept, not interpreted)
 * @cur_transcfg:  TRANSCFG latched by UPDATE
 * @faultstatus:   FAULTSTATUS of the last fault
 * @faultaddress:  FAULTADDRESS of the last fault
 * @stalled:       a fault stalls the address space until UNLOCK (or a
 *                 flush) with its interrupt bit clear
 * @busy:          AS_STATUS shows a command in progress
 */
struct mali_regfile_as {
	u64 transtab;
	u64 memattr;
	u64 transcfg;
	u64 lockaddr;
	u64 cur_transtab;
	u64 cur_memattr;
	u64 cur_transcfg;
	u32 faultstatus;
	u64 faultaddress;
	bool stalled;
	bool busy;
};

/**
 * struct mali_regfile_slot - one job slot
 * @head_next:     HEAD_NEXT
 * @affinity_next: AFFINITY_NEXT
 * @config_next:   CONFIG_NEXT
 * @flush_id_next: FLUSH_ID_NEXT
 * @next_pending:  a START came while the slot was busy: the _NEXT
 *                 registers start when the current chain ends
 * @head:          HEAD: the chain's first descriptor, then the one that
 *                 failed or faulted; 0 once the chain is done
 * @tail:          TAIL: the last descriptor the chain reached
 * @affinity:      AFFINITY
 * @config:        CONFIG
 * @flush_id:      FLUSH_ID of the current chain
 * @status:        JS_STATUS (MALI_JS_STATUS_*)
 * @queued:        the current chain waits for the model to pick it up
 */
struct mali_regfile_slot {
	u64 head_next;
	u64 affinity_next;
	u32 config_next;
	u32 flush_id_next;
	bool next_pending;
	u64 head;
	u64 tail;
	u64 affinity;
	u32 config;
	u32 flush_id;
	u32 status;
	bool queued;
};

/**
 * struct mali_regfile_ops - what the model does when the registers say so
 * @start:      a chain became current on @slot (its @queued is set): run
 *              it, now or later
 * @reset:      a soft or hard reset command: the registers already hold
 *              their power-up values and GPU_STATUS reads active; stop
 *              the chains, then call mali_regfile_reset_done() when the
 *              reset ends (at once, or later)
 * @as_command: optional: AS_COMMAND @cmd was written to address space
 *              @as (after the register file took it: an UPDATE latched,
 *              a stall perhaps resumed); return true if the command takes
 *              time (AS_STATUS then reads active until
 *              mali_regfile_as_idle())
 */
struct mali_regfile_ops {
	void (*start)(void *priv, unsigned int slot);
	void (*reset)(void *priv);
	bool (*as_command)(void *priv, unsigned int as, u32 cmd);
};

/**
 * struct mali_regfile - the registers of one GPU
 * @irq_raw:      RAWSTAT by ACCMAP_REPLAY_IRQ_*
 * @irq_mask:     MASK by ACCMAP_REPLAY_IRQ_*
 * @ready:        READY bits by power domain
 * @latest_flush: LATEST_FLUSH
 * @resetting:    a reset runs: GPU_STATUS active, START ignored
 * @as:           the address spaces
 * @js:           the job slots
 * @ops:          the model's
 * @priv:         passed to @ops
 */
struct mali_regfile {
	u32 irq_raw[ACCMAP_REPLAY_IRQ_COUNT];
	u32 irq_mask[ACCMAP_REPLAY_IRQ_COUNT];
	u64 ready[MALI_REGFILE_DOMAINS];
	u32 latest_flush;
	bool resetting;
	struct mali_regfile_as as[MALI_REGFILE_AS_COUNT];
	struct mali_regfile_slot js[MALI_REGFILE_JS_COUNT];
	const struct mali_regfile_ops *ops;
	void *priv;
};

void mali_regfile_init(struct mali_regfile *rf,
		       const struct mali_regfile_ops *ops, void *priv);
void mali_regfile_power_up(struct mali_regfile *rf);
u32 mali_regfile_read(const struct mali_regfile *rf, u32 offset);
bool mali_regfile_write(struct mali_regfile *rf, u32 offset, u32 value);
void mali_regfile_raise(struct mali_regfile *rf, u32 irq, u32 bits);
void mali_regfile_reset_done(struct mali_regfile *rf);
void mali_regfile_as_idle(struct mali_regfile *rf);
void mali_regfile_latch_fault(struct mali_regfile *rf, unsigned int as,
			      u32 status, u64 address);
u32 mali_regfile_as_format(const struct mali_regfile_as *as);
void mali_regfile_chain_end(struct mali_regfile *rf, unsigned int slot,
			    enum mali_jobs_end end, u32 code, u64 jd);

#endif /* _ACCMAP_MALI_REGFILE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: the register map of Arm Mali job-manager GPUs, as far as replay
 * needs it (the offsets kbase and panfrost use).  Shared by the software
 * model, the executor's fault check and the MMIO target's interrupt
 * handler.
 */
#ifndef _ACCMAP_MALI_REGS_H
#define _ACCMAP_MALI_REGS_H

#include <linux/bits.h>

#define MALI_WINDOW_SIZE		0x4000

/* GPU control */
#define MALI_GPU_ID			0x0000
#define MALI_L2_FEATURES		0x0004
#define MALI_CORE_FEATURES		0x0008
#define MALI_TILER_FEATURES		0x000c
#define MALI_MEM_FEATURES		0x0010
#define MALI_MMU_FEATURES		0x0014
#define MALI_AS_PRESENT			0x0018
#define MALI_JS_PRESENT			0x001c
#define MALI_GPU_IRQ_RAWSTAT		0x0020
#define MALI_GPU_IRQ_CLEAR		0x0024
#define MALI_GPU_IRQ_MASK		0x0028
#define MALI_GPU_IRQ_STATUS		0x002c
#define MALI_GPU_COMMAND		0x0030
#define MALI_GPU_STATUS			0x0034
#define MALI_LATEST_FLUSH		0x0038
#define MALI_GPU_FAULTSTATUS		0x003c
#define MALI_GPU_FAULTADDRESS_LO	0x0040
#define MALI_GPU_FAULTADDRESS_HI	0x0044
#define MALI_PRFCNT_BASE_LO		0x0060
#define MALI_PRFCNT_BASE_HI		0x0064
#define MALI_PRFCNT_CONFIG		0x0068
#define MALI_PRFCNT_CONFIG_AS_MASK	GENMASK(7, 4)	/* AS it dumps into */
#define MALI_THREAD_MAX_THREADS		0x00a0
#define MALI_THREAD_MAX_WORKGROUP_SIZE	0x00a4
#define MALI_THREAD_MAX_BARRIER_SIZE	0x00a8
#define MALI_THREAD_FEATURES		0x00ac
#define MALI_TEXTURE_FEATURES(n)	(0x00b0 + (n) * 4)
#define MALI_JS_FEATURES(n)		(0x00c0 + (n) * 4)
#define MALI_SHADER_PRESENT_LO		0x0100
#define MALI_SHADER_PRESENT_HI		0x0104
#define MALI_TILER_PRESENT_LO		0x0110
#define MALI_TILER_PRESENT_HI		0x0114
#define MALI_L2_PRESENT_LO		0x0120
#define MALI_L2_PRESENT_HI		0x0124
#define MALI_SHADER_READY_LO		0x0140
#define MALI_SHADER_READY_HI		0x0144
#define MALI_TILER_READY_LO		0x0150
#define MALI_TILER_READY_HI		0x0154
#define MALI_L2_READY_LO		0x0160
#define MALI_L2_READY_HI		0x0164
#define MALI_SHADER_PWRON_LO		0x0180
#define MALI_SHADER_PWRON_HI		0x0184
#define MALI_TILER_PWRON_LO		0x0190
#define MALI_TILER_PWRON_HI		0x0194
#define MALI_L2_PWRON_LO		0x01a0
#define MALI_L2_PWRON_HI		0x01a4
#define MALI_SHADER_PWROFF_LO		0x01c0
#define MALI_SHADER_PWROFF_HI		0x01c4
#define MALI_TILER_PWROFF_LO		0x01d0
#define MALI_TILER_PWROFF_HI		0x01d4
#define MALI_L2_PWROFF_LO		0x01e0
#define MALI_L2_PWROFF_HI		0x01e4
#define MALI_SHADER_PWRTRANS_LO		0x0200
#define MALI_SHADER_PWRTRANS_HI		0x0204
#define MALI_TILER_PWRTRANS_LO		0x0210
#define MALI_TILER_PWRTRANS_HI		0x0214
#define MALI_L2_PWRTRANS_LO		0x0220
#define MALI_L2_PWRTRANS_HI		0x0224

/* GPU_IRQ bits */
#define MALI_GPU_IRQ_FAULT		BIT(0)
#define MALI_GPU_IRQ_RESET_COMPLETED	BIT(8)
#define MALI_GPU_IRQ_POWER_CHANGED	BIT(9)
#define MALI_GPU_IRQ_POWER_CHANGED_ALL	BIT(10)
#define MALI_GPU_IRQ_CLEAN_CACHES_DONE	BIT(17)

/* GPU_COMMAND values */
#define MALI_GPU_CMD_SOFT_RESET		0x01
#define MALI_GPU_CMD_HARD_RESET		0x02
#define MALI_GPU_CMD_CLEAN_CACHES	0x07
#define MALI_GPU_CMD_CLEAN_INV_CACHES	0x08

/* Job control */
#define MALI_JOB_IRQ_RAWSTAT		0x1000
#define MALI_JOB_IRQ_CLEAR		0x1004
#define MALI_JOB_IRQ_MASK		0x1008
#define MALI_JOB_IRQ_STATUS		0x100c
#define MALI_JOB_IRQ_JS_STATE		0x1010
#define MALI_JOB_SLOTS			16
#define MALI_JOB_IRQ_DONE(n)		BIT(n)
#define MALI_JOB_IRQ_FAILED(n)		BIT(16 + (n))

#define MALI_JS_BASE(n)			(0x1800 + (n) * 0x80)
#define MALI_JS_HEAD_LO			0x00
#define MALI_JS_HEAD_HI			0x04
#define MALI_JS_TAIL_LO			0x08
#define MALI_JS_TAIL_HI			0x0c
#define MALI_JS_AFFINITY_LO		0x10
#define MALI_JS_AFFINITY_HI		0x14
#define MALI_JS_CONFIG			0x18
#define MALI_JS_COMMAND			0x20
#define MALI_JS_STATUS			0x24
#define MALI_JS_HEAD_NEXT_LO		0x40
#define MALI_JS_HEAD_NEXT_HI		0x44
#define MALI_JS_AFFINITY_NEXT_LO	0x50
#define MALI_JS_AFFINITY_NEXT_HI	0x54
#define MALI_JS_CONFIG_NEXT		0x58
#define MALI_JS_COMMAND_NEXT		0x60
#define MALI_JS_FLUSH_ID_NEXT		0x70
#define MALI_JS_CONFIG_AS_MASK		0xf	/* address space of the job */
#define MALI_JS_COMMAND_START		0x01

/* MMU */
#define MALI_MMU_IRQ_RAWSTAT		0x2000
#define MALI_MMU_IRQ_CLEAR		0x2004
#define MALI_MMU_IRQ_MASK		0x2008
#define MALI_MMU_IRQ_STATUS		0x200c
#define MALI_MMU_IRQ_FAULT(n)		BIT(n)
#define MALI_MMU_IRQ_BUS_ERROR(n)	BIT(16 + (n))
#define MALI_AS_COUNT			16

#define MALI_AS_BASE(n)			(0x2400 + (n) * 0x40)
#define MALI_AS_TRANSTAB_LO		0x00
#define MALI_AS_TRANSTAB_HI		0x04
#define MALI_AS_MEMATTR_LO		0x08
#define MALI_AS_MEMATTR_HI		0x0c
#define MALI_AS_LOCKADDR_LO		0x10
#define MALI_AS_LOCKADDR_HI		0x14
#define MALI_AS_COMMAND			0x18
#define MALI_AS_FAULTSTATUS		0x1c
#define MALI_AS_FAULTADDRESS_LO		0x20
#define MALI_AS_FAULTADDRESS_HI		0x24
#define MALI_AS_STATUS			0x28
#define MALI_AS_TRANSCFG_LO		0x30
#define MALI_AS_TRANSCFG_HI		0x34
#define MALI_AS_FAULTEXTRA_LO		0x38
#define MALI_AS_FAULTEXTRA_HI		0x3c

#define MALI_AS_CMD_NOP			0x00
#define MALI_AS_CMD_UPDATE		0x01
#define MALI_AS_CMD_LOCK		0x02
#define MALI_AS_CMD_UNLOCK		0x03
#define MALI_AS_CMD_FLUSH_PT		0x04
#define MALI_AS_CMD_FLUSH_MEM		0x05
#define MALI_AS_STATUS_ACTIVE		BIT(0)

/*
 * AS TRANSCFG_LO: address mode in bits 3:0, input address size in 10:6
 * (55 minus the bits; 0, the reset value, is what kbase leaves there),
 * output address size in 21:14, then how the table walk accesses memory.
 * TRANSCFG_HI holds permission-model switches.
 */
#define MALI_TRANSCFG_ADRMODE_MASK	0xf
#define MALI_TRANSCFG_ADRMODE_LEGACY	0x0	/* LPAE tables, mode in TRANSTAB */
#define MALI_TRANSCFG_ADRMODE_UNMAPPED	0x1
#define MALI_TRANSCFG_ADRMODE_IDENTITY	0x2
#define MALI_TRANSCFG_ADRMODE_AARCH64_4K 0x6
#define MALI_TRANSCFG_INA_BITS_MASK	GENMASK(10, 6)
#define MALI_TRANSCFG_INA_BITS(bits)	((55 - (bits)) << 6)
#define MALI_TRANSCFG_OUTA_BITS_MASK	GENMASK(21, 14)
#define MALI_TRANSCFG_SL_CONCAT		BIT(22)
#define MALI_TRANSCFG_PTW_MEMATTR_MASK	GENMASK(25, 24)
#define MALI_TRANSCFG_PTW_MEMATTR_NC	BIT(24)
#define MALI_TRANSCFG_PTW_MEMATTR_WB	BIT(25)
#define MALI_TRANSCFG_PTW_SH_MASK	GENMASK(29, 28)
#define MALI_TRANSCFG_PTW_RA		BIT(30)

/* Legacy (LPAE) TRANSTAB: mode and cacheability in the low bits. */
#define MALI_LPAE_TRANSTAB_ADRMODE_MASK	0x3
#define MALI_LPAE_TRANSTAB_ADRMODE_TABLE 0x3
#define MALI_LPAE_TRANSTAB_READ_INNER	BIT(2)
#define MALI_LPAE_TRANSTAB_SHARE_OUTER	BIT(4)

/* AS FAULTSTATUS: exception type in bits 7:0, access type in bits 9:8. */
#define MALI_FAULT_TRANSLATION(level)	(0xc0 + (level))
#define MALI_FAULT_PERMISSION(level)	(0xc8 + (level))
#define MALI_FAULT_ACCESS_FLAG(level)	(0xd8 + (level))
#define MALI_FAULT_ADDRESS_SIZE_IN	0xe0
#define MALI_FAULT_ACCESS_SHIFT		8
#define MALI_FAULT_ACCESS_ATOMIC	0
#define MALI_FAULT_ACCESS_EXECUTE	1
#define MALI_FAULT_ACCESS_READ		2
#define MALI_FAULT_ACCESS_WRITE		3

/* Job status codes (JS_STATUS, and exception_status of a descriptor). */
#define MALI_JS_STATUS_IDLE		0x00
#define MALI_JS_STATUS_DONE		0x01
#define MALI_JS_STATUS_ACTIVE		0x08
#define MALI_JS_STATUS_CONFIG_FAULT	0x40
#define MALI_JS_STATUS_BUS_FAULT	0x48
#define MALI_JS_STATUS_INSTR_INVALID_ENC 0x51
#define MALI_JS_STATUS_DATA_INVALID_FAULT 0x58
#define MALI_JS_STATUS_TRANSLATION_FAULT 0xc0

/*
 * Job descriptor header (64-bit descriptors), as the hardware reads it
 * from GPU memory; every field little-endian.
 */
#define MALI_JD_EXCEPTION_STATUS	0x00	/* u32, written on completion */
#define MALI_JD_FIRST_INCOMPLETE_TASK	0x04	/* u32 */
#define MALI_JD_FAULT_POINTER		0x08	/* u64 */
#define MALI_JD_TYPE_BYTE		0x10	/* bit 0: 64-bit next; 7:1 type */
#define MALI_JD_BARRIER_BYTE		0x11
#define MALI_JD_INDEX			0x12	/* u16 */
#define MALI_JD_DEP1			0x14	/* u16 */
#define MALI_JD_DEP2			0x16	/* u16 */
#define MALI_JD_NEXT			0x18	/* u64, or u32 if bit 0 clear */
#define MALI_JD_HEADER_SIZE		0x20

#define MALI_JOB_TYPE_NOT_STARTED	0
#define MALI_JOB_TYPE_NULL		1
#define MALI_JOB_TYPE_WRITE_VALUE	2
#define MALI_JOB_TYPE_CACHE_FLUSH	3
#define MALI_JOB_TYPE_COMPUTE		4
#define MALI_JOB_TYPE_VERTEX		5
#define MALI_JOB_TYPE_GEOMETRY		6
#define MALI_JOB_TYPE_TILER		7
#define MALI_JOB_TYPE_FUSED		8
#define MALI_JOB_TYPE_FRAGMENT		9

#endif /* _ACCMAP_MALI_REGS_H */

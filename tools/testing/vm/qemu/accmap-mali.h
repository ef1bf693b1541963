/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap-mali: the device's state (accmap-mali.c says what it is) and
 * what the virt machine needs to create and wire it.
 */
#ifndef HW_MISC_ACCMAP_MALI_H
#define HW_MISC_ACCMAP_MALI_H

#include "qom/object.h"
#include "hw/sysbus.h"
#include "qemu/thread.h"

#define TYPE_ACCMAP_MALI "accmap-mali"
OBJECT_DECLARE_SIMPLE_TYPE(AccmapMaliState, ACCMAP_MALI)

/* The interrupt outputs, in the order of the binding's interrupt-names. */
enum {
    AM_IRQ_JOB,
    AM_IRQ_MMU,
    AM_IRQ_GPU,
    AM_IRQ_COUNT,
};

/* Power domains: PRESENT, READY, PWRON, PWROFF, PWRTRANS 0x10 apart. */
enum {
    AM_SHADER,
    AM_TILER,
    AM_L2,
    AM_DOMAINS,
};

typedef struct AccmapMaliAS {
    uint64_t transtab, memattr, transcfg, lockaddr;
    uint64_t cur_transtab, cur_memattr, cur_transcfg;       /* from UPDATE */
    uint32_t faultstatus;
    uint64_t faultaddress;
    bool stalled;   /* a fault waits for UNLOCK with its bit clear */
    bool busy;      /* a command in progress: AS_STATUS active */
} AccmapMaliAS;

typedef struct AccmapMaliSlot {
    uint64_t head_next, affinity_next;
    uint32_t config_next, flush_id_next;
    bool next_pending;      /* START while busy: runs when the chain ends */
    uint64_t head, tail, affinity;
    uint32_t config, flush_id, status;
    bool queued;            /* waits for the worker */
} AccmapMaliSlot;

struct AccmapMaliState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    qemu_irq irq[AM_IRQ_COUNT];
    MemoryRegion *dma_mr;   /* the GPU's bus: system memory or an IOMMU */
    AddressSpace dma_as;

    /*
     * @lock protects every register field below, @gen, @quit and
     * @lines_held.  The MMIO handlers take it under the BQL; the worker
     * never takes the BQL while holding it.
     */
    QemuMutex lock;
    QemuCond wake;          /* a slot queued, a fault serviced, a reset */
    QemuThread worker;
    bool quit;
    uint32_t gen;           /* bumped by resets: older chains stop */
    bool resetting;         /* a reset command has not completed */
    uint32_t irq_raw[AM_IRQ_COUNT];
    uint32_t irq_mask[AM_IRQ_COUNT];
    uint32_t lines_held;    /* lines forced high (spurious-irq) */
    uint64_t ready[AM_DOMAINS];
    uint32_t latest_flush;
    AccmapMaliAS as[8];
    AccmapMaliSlot js[3];

    QEMUBH *irq_bh;
    QEMUTimer *irq_timer;
    QEMUTimer *reset_timer;
    QEMUTimer *as_timer;
    QEMUTimer *spurious_timer;

    /* Properties: timing and the fault knobs. */
    uint32_t job_ns, reset_ns, as_cmd_ns, irq_delay_ns;
    bool job_hang, reset_hang, shared_irq, spurious_irq;
};

#endif /* HW_MISC_ACCMAP_MALI_H */

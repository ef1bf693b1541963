/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap-mali: a Mali job-manager GPU for qemu's virt machine, the GPU
 * accmap's board guests drive through the mmio replay target.
 *
 * What it owns: the register window (the Mali-G71's map, GPU_ID as the
 * HiKey960's; 3 job slots, 8 address spaces), three interrupt lines (job,
 * mmu, gpu), a worker thread that runs job chains while the vCPUs go on,
 * and the GPU MMU: it walks the page tables accmap builds, in guest
 * memory, from the address AS_TRANSTAB holds, and reads and writes
 * through its DMA address space (the "memory" link; behind an SMMU that
 * space translates, so tables and buffers must hold bus addresses).
 *
 * What it may call: mali_jobs.c for what a job does (the same code the
 * in-kernel model runs: drivers/accmap/mali_jobs.c) and replay_walk.c for
 * the table walk, both built from accmap's tree; qemu's memory, timer,
 * thread and interrupt APIs.  Nothing here is a copy of another device.
 *
 * Strict as hardware is: a table entry, attribute or address the walker
 * refuses is an MMU fault (the address space stalls, FAULTSTATUS and
 * FAULTADDRESS latch, the MMU interrupt rises) and the access waits until
 * the driver clears the interrupt and sends UNLOCK (or a flush) to retry
 * it, or resets the GPU.  A soft reset takes reset-ns of virtual time and
 * raises RESET_COMPLETED; AS commands keep AS_STATUS active for as-cmd-ns.
 *
 * Fault knobs (properties), for the tests of the driver's error paths:
 *   job-hang      chains never finish (until a reset)
 *   reset-hang    a soft or hard reset never completes
 *   irq-delay-ns  a chain's end reaches the interrupt line this late
 *   shared-irq    all three blocks drive the job line (the DT gives one
 *                 interrupt three times)
 *   spurious-irq  each START also pulses the gpu line with nothing pending
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "hw/sysbus.h"
#include "sysemu/dma.h"
#include "exec/address-spaces.h"

#include "hw/misc/accmap-mali.h"

/* accmap's own GPU code and register map (hw/misc/accmap/). */
#include "mali_jobs.h"
#include "mali_regs.h"
#include "replay_walk.h"

/* What the device is: a Mali-G71 MP8 as the HiKey960's driver read it. */
#define AM_GPU_ID               0x60a00002
#define AM_L2_FEATURES          0x07130206
#define AM_TILER_FEATURES       0x00000809
#define AM_MEM_FEATURES         0x00000101
#define AM_MMU_FEATURES         0x00002830      /* 48-bit VA, 40-bit PA */
#define AM_THREAD_MAX           0x180
#define AM_THREAD_FEATURES      0x0a046000
#define AM_SHADER_PRESENT       0xffULL
#define AM_TILER_PRESENT        0x1ULL
#define AM_L2_PRESENT           0x1ULL
#define AM_AS_COUNT             8
#define AM_JS_COUNT             3
#define AM_JS_STRIDE            0x80
#define AM_AS_STRIDE            0x40
#define AM_PWR_STRIDE           0x10
#define AM_GPU_END              0x1000
#define AM_FAULT_RETRIES        8
#define AM_FRAME_SIZE           0x1000ULL
#define AM_JS_STATE_NEXT(n)     (1u << (16 + (n)))
#define AM_FAULT_TRANSTAB_BUS(l) (0xd0 + (l))
#define AM_FORMAT_NONE          UINT32_MAX

static const uint32_t am_texture_features[4] = {
    0xffffffff, 0x00ff0fff, 0xfe3fffff, 0x00000000,
};

static const uint32_t am_js_features[AM_JS_COUNT] = {
    0x0000020e, 0x000004fe, 0x0000007e,
};

static const uint64_t am_present[AM_DOMAINS] = {
    [AM_SHADER] = AM_SHADER_PRESENT,
    [AM_TILER] = AM_TILER_PRESENT,
    [AM_L2] = AM_L2_PRESENT,
};

/* ---- interrupt lines ---------------------------------------------------- */

/* The level each output should have now; under s->lock. */
static void am_levels(AccmapMaliState *s, int level[AM_IRQ_COUNT])
{
    int i;

    for (i = 0; i < AM_IRQ_COUNT; i++) {
        level[i] = !!(s->irq_raw[i] & s->irq_mask[i]);
    }
    if (s->shared_irq) {
        level[AM_IRQ_JOB] |= level[AM_IRQ_MMU] | level[AM_IRQ_GPU];
        level[AM_IRQ_MMU] = level[AM_IRQ_GPU] = 0;
    }
    level[AM_IRQ_JOB] |= s->lines_held & (1u << AM_IRQ_JOB) ? 1 : 0;
    level[AM_IRQ_GPU] |= s->lines_held & (1u << AM_IRQ_GPU) ? 1 : 0;
}

/* Drives the lines from the registers; with the BQL, without s->lock. */
static void am_update_irqs(AccmapMaliState *s)
{
    int level[AM_IRQ_COUNT], i;

    qemu_mutex_lock(&s->lock);
    am_levels(s, level);
    qemu_mutex_unlock(&s->lock);
    for (i = 0; i < AM_IRQ_COUNT; i++) {
        qemu_set_irq(s->irq[i], level[i]);
    }
}

/* The worker's way to the lines: a bottom half runs with the BQL. */
static void am_irq_bh(void *opaque)
{
    am_update_irqs(opaque);
}

static void am_irq_timer(void *opaque)
{
    am_update_irqs(opaque);
}

/* A spurious interrupt: the gpu line high with nothing pending, briefly. */
static void am_spurious_end(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    s->lines_held &= ~(1u << AM_IRQ_GPU);
    qemu_mutex_unlock(&s->lock);
    am_update_irqs(s);
}

/* Raises RAWSTAT bits; under s->lock.  The caller updates the lines. */
static void am_raise(AccmapMaliState *s, int irq, uint32_t bits)
{
    s->irq_raw[irq] |= bits;
}

/* ---- registers ----------------------------------------------------------- */

static uint32_t am_half(uint64_t v, hwaddr offset)
{
    return offset & 4 ? v >> 32 : (uint32_t)v;
}

static void am_set_half(uint64_t *reg, hwaddr offset, uint32_t value)
{
    if (offset & 4) {
        *reg = (*reg & 0xffffffffULL) | (uint64_t)value << 32;
    } else {
        *reg = (*reg & ~0xffffffffULL) | value;
    }
}

/* The registers as after power-up; under s->lock. */
static void am_regs_reset(AccmapMaliState *s)
{
    memset(s->irq_raw, 0, sizeof(s->irq_raw));
    memset(s->irq_mask, 0, sizeof(s->irq_mask));
    memset(s->ready, 0, sizeof(s->ready));
    memset(s->as, 0, sizeof(s->as));
    memset(s->js, 0, sizeof(s->js));
    s->latest_flush = 0;
    s->resetting = false;
}

static int am_irq_block(hwaddr offset, hwaddr *reg)
{
    static const hwaddr base[AM_IRQ_COUNT] = {
        [AM_IRQ_JOB] = MALI_JOB_IRQ_RAWSTAT,
        [AM_IRQ_MMU] = MALI_MMU_IRQ_RAWSTAT,
        [AM_IRQ_GPU] = MALI_GPU_IRQ_RAWSTAT,
    };
    int i;

    for (i = 0; i < AM_IRQ_COUNT; i++) {
        if (offset >= base[i] && offset <= base[i] + 0xc) {
            *reg = offset - base[i];
            return i;
        }
    }
    return -1;
}

static int am_domain(hwaddr offset, hwaddr first)
{
    if (offset < first || offset >= first + AM_DOMAINS * AM_PWR_STRIDE ||
        (offset & 0x8)) {
        return -1;
    }
    return (offset - first) / AM_PWR_STRIDE;
}

static uint32_t am_gpu_read(AccmapMaliState *s, hwaddr offset)
{
    int d;

    switch (offset) {
    case MALI_GPU_ID:
        return AM_GPU_ID;
    case MALI_L2_FEATURES:
        return AM_L2_FEATURES;
    case MALI_TILER_FEATURES:
        return AM_TILER_FEATURES;
    case MALI_MEM_FEATURES:
        return AM_MEM_FEATURES;
    case MALI_MMU_FEATURES:
        return AM_MMU_FEATURES;
    case MALI_AS_PRESENT:
        return (1u << AM_AS_COUNT) - 1;
    case MALI_JS_PRESENT:
        return (1u << AM_JS_COUNT) - 1;
    case MALI_GPU_STATUS:
        return s->resetting ? 1 : 0;    /* GPU_ACTIVE while resetting */
    case MALI_LATEST_FLUSH:
        return s->latest_flush;
    case MALI_THREAD_MAX_THREADS:
    case MALI_THREAD_MAX_WORKGROUP_SIZE:
    case MALI_THREAD_MAX_BARRIER_SIZE:
        return AM_THREAD_MAX;
    case MALI_THREAD_FEATURES:
        return AM_THREAD_FEATURES;
    }
    if (offset >= MALI_TEXTURE_FEATURES(0) &&
        offset < MALI_TEXTURE_FEATURES(ARRAY_SIZE(am_texture_features))) {
        return am_texture_features[(offset - MALI_TEXTURE_FEATURES(0)) / 4];
    }
    if (offset >= MALI_JS_FEATURES(0) &&
        offset < MALI_JS_FEATURES(AM_JS_COUNT)) {
        return am_js_features[(offset - MALI_JS_FEATURES(0)) / 4];
    }
    d = am_domain(offset, MALI_SHADER_PRESENT_LO);
    if (d >= 0) {
        return am_half(am_present[d], offset);
    }
    d = am_domain(offset, MALI_SHADER_READY_LO);
    if (d >= 0) {
        return am_half(s->ready[d], offset);
    }
    return 0;
}

static void am_power(AccmapMaliState *s, int d, hwaddr offset, uint32_t value,
             bool on)
{
    uint64_t bits = offset & 4 ? (uint64_t)value << 32 : value;

    bits &= am_present[d];
    if (on) {
        s->ready[d] |= bits;
        if (bits && d != AM_L2) {
            s->ready[AM_L2] = am_present[AM_L2];
        }
    } else {
        s->ready[d] &= ~bits;
    }
    am_raise(s, AM_IRQ_GPU,
         MALI_GPU_IRQ_POWER_CHANGED | MALI_GPU_IRQ_POWER_CHANGED_ALL);
}

/* A reset's end, reset-ns after the command; with the BQL. */
static void am_reset_done(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    s->resetting = false;
    am_raise(s, AM_IRQ_GPU, MALI_GPU_IRQ_RESET_COMPLETED);
    qemu_mutex_unlock(&s->lock);
    am_update_irqs(s);
}

static void am_gpu_command(AccmapMaliState *s, uint32_t cmd)
{
    switch (cmd) {
    case MALI_GPU_CMD_SOFT_RESET:
    case MALI_GPU_CMD_HARD_RESET:
        /*
         * The registers take their power-up values at the command, as
         * the model's do; what the driver writes while the reset runs
         * (the mask for RESET_COMPLETED, say) stays.  Chains see the
         * new generation at their next access and stop.
         */
        s->gen++;
        am_regs_reset(s);
        s->resetting = true;
        qemu_cond_broadcast(&s->wake);
        if (!s->reset_hang) {
            timer_mod(s->reset_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->reset_ns);
        }
        break;
    case MALI_GPU_CMD_CLEAN_CACHES:
    case MALI_GPU_CMD_CLEAN_INV_CACHES:
        /* No caches to clean: every write already reached memory. */
        s->latest_flush++;
        am_raise(s, AM_IRQ_GPU, MALI_GPU_IRQ_CLEAN_CACHES_DONE);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "accmap-mali: GPU_COMMAND 0x%x\n", cmd);
        break;
    }
}

static void am_gpu_write(AccmapMaliState *s, hwaddr offset, uint32_t value)
{
    int d;

    if (offset == MALI_GPU_COMMAND) {
        am_gpu_command(s, value);
        return;
    }
    d = am_domain(offset, MALI_SHADER_PWRON_LO);
    if (d >= 0) {
        am_power(s, d, offset, value, true);
        return;
    }
    d = am_domain(offset, MALI_SHADER_PWROFF_LO);
    if (d >= 0) {
        am_power(s, d, offset, value, false);
    }
}

/* START on an idle slot: the _NEXT registers become current. */
static void am_slot_start(AccmapMaliState *s, AccmapMaliSlot *js)
{
    js->head = js->head_next;
    js->tail = js->head_next;
    js->affinity = js->affinity_next;
    js->config = js->config_next;
    js->flush_id = js->flush_id_next;
    js->status = MALI_JS_STATUS_ACTIVE;
    js->next_pending = false;
    js->queued = true;
    qemu_cond_broadcast(&s->wake);
    if (s->spurious_irq) {
        s->lines_held |= 1u << AM_IRQ_GPU;
        timer_mod(s->spurious_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 100 * SCALE_US);
    }
}

static uint32_t am_js_read(AccmapMaliState *s, hwaddr offset)
{
    AccmapMaliSlot *js;
    uint32_t state = 0;
    unsigned int n;

    if (offset == MALI_JOB_IRQ_JS_STATE) {
        for (n = 0; n < AM_JS_COUNT; n++) {
            if (s->js[n].status == MALI_JS_STATUS_ACTIVE) {
                state |= 1u << n;
            }
            if (s->js[n].next_pending) {
                state |= AM_JS_STATE_NEXT(n);
            }
        }
        return state;
    }
    if (offset < MALI_JS_BASE(0)) {
        return 0;
    }
    n = (offset - MALI_JS_BASE(0)) / AM_JS_STRIDE;
    if (n >= AM_JS_COUNT) {
        return 0;
    }
    js = &s->js[n];
    switch (offset - MALI_JS_BASE(n)) {
    case MALI_JS_HEAD_LO:
    case MALI_JS_HEAD_HI:
        return am_half(js->head, offset);
    case MALI_JS_TAIL_LO:
    case MALI_JS_TAIL_HI:
        return am_half(js->tail, offset);
    case MALI_JS_AFFINITY_LO:
    case MALI_JS_AFFINITY_HI:
        return am_half(js->affinity, offset);
    case MALI_JS_CONFIG:
        return js->config;
    case MALI_JS_STATUS:
        return js->status;
    case MALI_JS_HEAD_NEXT_LO:
    case MALI_JS_HEAD_NEXT_HI:
        return am_half(js->head_next, offset);
    case MALI_JS_AFFINITY_NEXT_LO:
    case MALI_JS_AFFINITY_NEXT_HI:
        return am_half(js->affinity_next, offset);
    case MALI_JS_CONFIG_NEXT:
        return js->config_next;
    case MALI_JS_COMMAND_NEXT:
        return js->next_pending ? MALI_JS_COMMAND_START : 0;
    case MALI_JS_FLUSH_ID_NEXT:
        return js->flush_id_next;
    }
    return 0;
}

static void am_js_write(AccmapMaliState *s, hwaddr offset, uint32_t value)
{
    AccmapMaliSlot *js;
    unsigned int n;

    if (offset < MALI_JS_BASE(0)) {
        return;
    }
    n = (offset - MALI_JS_BASE(0)) / AM_JS_STRIDE;
    if (n >= AM_JS_COUNT) {
        return;
    }
    js = &s->js[n];
    switch (offset - MALI_JS_BASE(n)) {
    case MALI_JS_HEAD_NEXT_LO:
    case MALI_JS_HEAD_NEXT_HI:
        am_set_half(&js->head_next, offset, value);
        break;
    case MALI_JS_AFFINITY_NEXT_LO:
    case MALI_JS_AFFINITY_NEXT_HI:
        am_set_half(&js->affinity_next, offset, value);
        break;
    case MALI_JS_CONFIG_NEXT:
        js->config_next = value;
        break;
    case MALI_JS_FLUSH_ID_NEXT:
        js->flush_id_next = value;
        break;
    case MALI_JS_COMMAND_NEXT:
        if (value == MALI_JS_COMMAND_START) {
            if (s->resetting) {
                break;  /* the GPU is not there yet */
            }
            if (js->status == MALI_JS_STATUS_ACTIVE) {
                js->next_pending = true;
            } else {
                am_slot_start(s, js);
            }
        } else if (value == 0) {
            js->next_pending = false;
        }
        break;
    }
}

/* An AS command's end, as-cmd-ns after it: AS_STATUS goes idle. */
static void am_as_done(void *opaque)
{
    AccmapMaliState *s = opaque;
    unsigned int n;

    qemu_mutex_lock(&s->lock);
    for (n = 0; n < AM_AS_COUNT; n++) {
        s->as[n].busy = false;
    }
    qemu_mutex_unlock(&s->lock);
}

static uint32_t am_as_read(AccmapMaliState *s, hwaddr offset)
{
    unsigned int n = (offset - MALI_AS_BASE(0)) / AM_AS_STRIDE;
    AccmapMaliAS *as;

    if (n >= AM_AS_COUNT) {
        return 0;
    }
    as = &s->as[n];
    switch (offset - MALI_AS_BASE(n)) {
    case MALI_AS_TRANSTAB_LO:
    case MALI_AS_TRANSTAB_HI:
        return am_half(as->transtab, offset);
    case MALI_AS_MEMATTR_LO:
    case MALI_AS_MEMATTR_HI:
        return am_half(as->memattr, offset);
    case MALI_AS_LOCKADDR_LO:
    case MALI_AS_LOCKADDR_HI:
        return am_half(as->lockaddr, offset);
    case MALI_AS_FAULTSTATUS:
        return as->faultstatus;
    case MALI_AS_FAULTADDRESS_LO:
    case MALI_AS_FAULTADDRESS_HI:
        return am_half(as->faultaddress, offset);
    case MALI_AS_STATUS:
        return as->busy ? MALI_AS_STATUS_ACTIVE : 0;
    case MALI_AS_TRANSCFG_LO:
    case MALI_AS_TRANSCFG_HI:
        return am_half(as->transcfg, offset);
    }
    return 0;
}

static void am_as_write(AccmapMaliState *s, hwaddr offset, uint32_t value)
{
    unsigned int n = (offset - MALI_AS_BASE(0)) / AM_AS_STRIDE;
    AccmapMaliAS *as;

    if (n >= AM_AS_COUNT) {
        return;
    }
    as = &s->as[n];
    switch (offset - MALI_AS_BASE(n)) {
    case MALI_AS_TRANSTAB_LO:
    case MALI_AS_TRANSTAB_HI:
        am_set_half(&as->transtab, offset, value);
        break;
    case MALI_AS_MEMATTR_LO:
    case MALI_AS_MEMATTR_HI:
        am_set_half(&as->memattr, offset, value);
        break;
    case MALI_AS_LOCKADDR_LO:
    case MALI_AS_LOCKADDR_HI:
        am_set_half(&as->lockaddr, offset, value);
        break;
    case MALI_AS_TRANSCFG_LO:
    case MALI_AS_TRANSCFG_HI:
        am_set_half(&as->transcfg, offset, value);
        break;
    case MALI_AS_COMMAND:
        if (value == MALI_AS_CMD_NOP) {
            break;
        }
        if (value == MALI_AS_CMD_UPDATE) {
            as->cur_transtab = as->transtab;
            as->cur_memattr = as->memattr;
            as->cur_transcfg = as->transcfg;
        }
        /*
         * The walker caches nothing, so every command is a flush;
         * it still takes time, which AS_STATUS shows.  A stalled
         * address space resumes once its fault bit is clear.
         */
        as->busy = true;
        timer_mod(s->as_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->as_cmd_ns);
        if (value != MALI_AS_CMD_LOCK &&
            !(s->irq_raw[AM_IRQ_MMU] & MALI_MMU_IRQ_FAULT(n))) {
            as->stalled = false;
            qemu_cond_broadcast(&s->wake);
        }
        break;
    }
}

static uint64_t am_read(void *opaque, hwaddr offset, unsigned size)
{
    AccmapMaliState *s = opaque;
    uint32_t value;
    hwaddr reg;
    int irq;

    qemu_mutex_lock(&s->lock);
    irq = am_irq_block(offset, &reg);
    if (irq >= 0) {
        switch (reg) {
        case 0x0:
            value = s->irq_raw[irq];
            break;
        case 0x8:
            value = s->irq_mask[irq];
            break;
        case 0xc:
            value = s->irq_raw[irq] & s->irq_mask[irq];
            break;
        default:
            value = 0;      /* CLEAR is write-only */
            break;
        }
    } else if (offset < AM_GPU_END) {
        value = am_gpu_read(s, offset);
    } else if (offset < MALI_MMU_IRQ_RAWSTAT) {
        value = am_js_read(s, offset);
    } else if (offset >= MALI_AS_BASE(0)) {
        value = am_as_read(s, offset);
    } else {
        value = 0;
    }
    qemu_mutex_unlock(&s->lock);
    return value;
}

static void am_write(void *opaque, hwaddr offset, uint64_t value64,
             unsigned size)
{
    AccmapMaliState *s = opaque;
    uint32_t value = value64;
    hwaddr reg;
    int irq;

    qemu_mutex_lock(&s->lock);
    irq = am_irq_block(offset, &reg);
    if (irq >= 0) {
        switch (reg) {
        case 0x0:       /* RAWSTAT: writing 1s raises them (a test) */
            am_raise(s, irq, value);
            break;
        case 0x4:       /* CLEAR */
            s->irq_raw[irq] &= ~value;
            if (irq == AM_IRQ_MMU) {
                qemu_cond_broadcast(&s->wake);
            }
            break;
        case 0x8:       /* MASK */
            s->irq_mask[irq] = value;
            break;
        }
    } else if (offset < AM_GPU_END) {
        am_gpu_write(s, offset, value);
    } else if (offset < MALI_MMU_IRQ_RAWSTAT) {
        am_js_write(s, offset, value);
    } else if (offset >= MALI_AS_BASE(0)) {
        am_as_write(s, offset, value);
    }
    qemu_mutex_unlock(&s->lock);
    am_update_irqs(s);
}

static const MemoryRegionOps am_ops = {
    .read = am_read,
    .write = am_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
        .unaligned = false,
    },
};

/* ---- the GPU MMU and the job chains (the worker thread) ------------------ */

/* A chain the worker runs: its slot, address space and configuration. */
typedef struct AmChain {
    AccmapMaliState *s;
    unsigned int slot;
    unsigned int as;
    uint32_t gen;
    uint32_t format;
    uint64_t transtab;
    struct mali_jobs_chain jobs;
} AmChain;

static bool am_aborted(AmChain *c)
{
    bool aborted;

    qemu_mutex_lock(&c->s->lock);
    aborted = c->gen != c->s->gen || c->s->quit;
    qemu_mutex_unlock(&c->s->lock);
    return aborted;
}

/* The configuration the last AS UPDATE latched, for the next job. */
static void am_load_as(AmChain *c)
{
    AccmapMaliAS *as = &c->s->as[c->as];
    uint64_t cfg, tab;

    qemu_mutex_lock(&c->s->lock);
    cfg = as->cur_transcfg;
    tab = as->cur_transtab;
    qemu_mutex_unlock(&c->s->lock);

    c->transtab = tab;
    switch (cfg & MALI_TRANSCFG_ADRMODE_MASK) {
    case MALI_TRANSCFG_ADRMODE_AARCH64_4K:
        c->format = ACCMAP_PGT_MALI_AARCH64_4K;
        break;
    case MALI_TRANSCFG_ADRMODE_LEGACY:
        c->format = (tab & MALI_LPAE_TRANSTAB_ADRMODE_MASK) ==
                MALI_LPAE_TRANSTAB_ADRMODE_TABLE ?
                ACCMAP_PGT_MALI_LPAE : AM_FORMAT_NONE;
        break;
    default:
        c->format = AM_FORMAT_NONE;
        break;
    }
}

/* DMA through the device's address space (an IOMMU may be in it), BQL held. */
static int am_dma(AccmapMaliState *s, uint64_t addr, void *buf, uint64_t len,
          bool write)
{
    MemTxResult r;

    qemu_mutex_lock_iothread();
    r = dma_memory_rw(&s->dma_as, addr, buf, len,
              write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE,
              MEMTXATTRS_UNSPECIFIED);
    qemu_mutex_unlock_iothread();
    return r == MEMTX_OK ? 0 : -EIO;
}

static int am_read_table(void *priv, u64 pa, u64 *val)
{
    AmChain *c = priv;
    uint64_t le;

    if (am_dma(c->s, pa, &le, sizeof(le), false)) {
        return -EIO;
    }
    *val = le64_to_cpu(le);
    return 0;
}

/*
 * Translates @va: 0 and the output address and the bytes left in the
 * leaf, or the fault's FAULTSTATUS code in *@fault.
 */
static int am_translate(AmChain *c, uint64_t va, uint32_t access,
            uint64_t *pa, uint64_t *span, uint32_t *fault)
{
    uint32_t need = access == MALI_FAULT_ACCESS_WRITE ? ACCMAP_PGT_PERM_WRITE :
                                 ACCMAP_PGT_PERM_READ;
    struct accmap_walk w;

    if (c->format == AM_FORMAT_NONE) {
        *fault = MALI_FAULT_TRANSLATION(0);
        return -EFAULT;
    }
    accmap_walk(c->format, c->transtab, va, am_read_table, c, &w);
    switch (w.status) {
    case ACCMAP_WALK_OK:
        break;
    case ACCMAP_WALK_ACCESS_FLAG:
        *fault = MALI_FAULT_ACCESS_FLAG(w.level);
        return -EFAULT;
    case ACCMAP_WALK_ADDRESS_SIZE:
        *fault = MALI_FAULT_ADDRESS_SIZE_IN + MIN(w.level, 3u);
        return -EFAULT;
    case ACCMAP_WALK_BUS:
        *fault = AM_FAULT_TRANSTAB_BUS(w.level);
        return -EFAULT;
    case ACCMAP_WALK_TRANSLATION:
        *fault = MALI_FAULT_TRANSLATION(w.level);
        return -EFAULT;
    default:
        *fault = MALI_FAULT_TRANSLATION(0);
        return -EFAULT;
    }
    if (!(w.perm & need)) {
        *fault = MALI_FAULT_PERMISSION(w.level);
        return -EFAULT;
    }
    *pa = w.pa;
    *span = w.size - (va & (w.size - 1));
    return 0;
}

/*
 * An MMU fault, as the hardware takes it: latch FAULTSTATUS and
 * FAULTADDRESS (unless a fault is already pending there), raise the MMU
 * interrupt, stall the address space, and wait until the driver resumes
 * it (clears the bit and sends UNLOCK or a flush) or resets the GPU.
 * Returns true if resumed: the access is retried.
 */
static bool am_fault(AmChain *c, uint64_t va, uint32_t code, uint32_t access)
{
    AccmapMaliState *s = c->s;
    AccmapMaliAS *as = &s->as[c->as];
    uint32_t bit = MALI_MMU_IRQ_FAULT(c->as);
    bool resumed;

    qemu_mutex_lock(&s->lock);
    if (c->gen != s->gen || s->quit) {
        qemu_mutex_unlock(&s->lock);
        return false;
    }
    if (!(s->irq_raw[AM_IRQ_MMU] & bit)) {
        as->faultstatus = code | access << MALI_FAULT_ACCESS_SHIFT;
        as->faultaddress = va;
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "accmap-mali: AS%u fault 0x%x at 0x%" PRIx64
                  " (format %d, table 0x%" PRIx64 ")\n",
                  c->as, code | access << MALI_FAULT_ACCESS_SHIFT, va,
                  c->format, c->transtab);
    am_raise(s, AM_IRQ_MMU, bit);
    as->stalled = true;
    qemu_bh_schedule(s->irq_bh);
    while (as->stalled && c->gen == s->gen && !s->quit) {
        qemu_cond_wait(&s->wake, &s->lock);
    }
    resumed = c->gen == s->gen && !s->quit;
    qemu_mutex_unlock(&s->lock);
    return resumed;
}

/* mali_jobs.c's access: translate, fault, copy, a 4 KiB frame at a time. */
static int am_access(void *priv, u64 va, void *buf, size_t len, bool write)
{
    AmChain *c = priv;
    uint32_t access = write ? MALI_FAULT_ACCESS_WRITE : MALI_FAULT_ACCESS_READ;
    unsigned int retries = 0;
    uint8_t *p = buf;

    while (len) {
        uint64_t pa, span, n;
        uint32_t fault;

        if (am_aborted(c)) {
            return -EINTR;
        }
        if (am_translate(c, va, access, &pa, &span, &fault)) {
            if (retries++ < AM_FAULT_RETRIES &&
                am_fault(c, va, fault, access)) {
                am_load_as(c);
                continue;
            }
            return am_aborted(c) ? -EINTR : -EFAULT;
        }
        retries = 0;
        n = MIN(MIN((uint64_t)len, span),
                AM_FRAME_SIZE - (va & (AM_FRAME_SIZE - 1)));
        if (am_dma(c->s, pa, p, n, write)) {
            return -EIO;
        }
        va += n;
        p += n;
        len -= n;
    }
    return 0;
}

static void *am_alloc(void *priv, size_t bytes, bool zero)
{
    return zero ? g_try_malloc0(bytes) : g_try_malloc(bytes);
}

static void am_free(void *priv, void *p)
{
    g_free(p);
}

static bool am_jobs_aborted(void *priv)
{
    return am_aborted(priv);
}

static const struct mali_jobs_ops am_jobs_ops = {
    .access = am_access,
    .alloc = am_alloc,
    .free = am_free,
    .aborted = am_jobs_aborted,
};

/* Waits @ns of virtual time, or less if the GPU is reset; s->lock held. */
static void am_wait(AccmapMaliState *s, uint32_t gen, int64_t ns)
{
    int64_t end = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns;

    while (gen == s->gen && !s->quit) {
        int64_t left = end - qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

        if (left <= 0) {
            break;
        }
        qemu_cond_timedwait(&s->wake, &s->lock, MAX(1, left / SCALE_MS));
    }
}

/* Publishes how a chain ended; s->lock held, same generation. */
static void am_finish(AccmapMaliState *s, AccmapMaliSlot *js, unsigned int n,
              AmChain *c)
{
    switch (c->jobs.end) {
    case MALI_JOBS_DONE:
        js->head = 0;
        js->status = MALI_JS_STATUS_DONE;
        am_raise(s, AM_IRQ_JOB, MALI_JOB_IRQ_DONE(n));
        break;
    case MALI_JOBS_FAILED:
        js->head = c->jobs.jd;
        js->status = c->jobs.code;
        am_raise(s, AM_IRQ_JOB, MALI_JOB_IRQ_FAILED(n));
        break;
    case MALI_JOBS_FAULT:
        /* Stalled for good (too many faults): the slot stays active. */
        js->head = c->jobs.jd;
        return;
    case MALI_JOBS_ABORTED:
        return;
    }
    js->tail = c->jobs.jd;
    if (js->next_pending) {
        am_slot_start(s, js);
    }
}

static void *am_worker(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    while (!s->quit) {
        AccmapMaliSlot *js = NULL;
        AmChain c = { .s = s };
        unsigned int n;

        for (n = 0; n < AM_JS_COUNT; n++) {
            if (s->js[n].queued) {
                js = &s->js[n];
                break;
            }
        }
        if (!js) {
            qemu_cond_wait(&s->wake, &s->lock);
            continue;
        }
        js->queued = false;
        c.slot = n;
        c.gen = s->gen;
        c.as = js->config & MALI_JS_CONFIG_AS_MASK;
        if (c.as >= AM_AS_COUNT) {
            c.jobs.end = MALI_JOBS_FAILED;
            c.jobs.code = MALI_JS_STATUS_CONFIG_FAULT;
            c.jobs.jd = js->head;
            am_finish(s, js, n, &c);
            qemu_bh_schedule(s->irq_bh);
            continue;
        }
        mali_jobs_chain_init(&c.jobs, js->head);
        qemu_mutex_unlock(&s->lock);

        do {
            am_load_as(&c);
            qemu_mutex_lock(&s->lock);
            /* A job takes time; a hung GPU takes it forever. */
            while (s->job_hang && c.gen == s->gen && !s->quit) {
                qemu_cond_wait(&s->wake, &s->lock);
            }
            am_wait(s, c.gen, s->job_ns);
            qemu_mutex_unlock(&s->lock);
        } while (mali_jobs_chain_step(&c.jobs, &am_jobs_ops, &c));

        qemu_mutex_lock(&s->lock);
        if (c.gen == s->gen && !s->quit) {
            am_finish(s, js, n, &c);
            if (s->irq_delay_ns) {
                timer_mod(s->irq_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      s->irq_delay_ns);
            } else {
                qemu_bh_schedule(s->irq_bh);
            }
        }
    }
    qemu_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the device ---------------------------------------------------------- */

static void am_realize(DeviceState *dev, Error **errp)
{
    AccmapMaliState *s = ACCMAP_MALI(dev);
    SysBusDevice *sbd = SYS_BUS_DEVICE(dev);
    int i;

    if (!s->dma_mr) {
        error_setg(errp, "accmap-mali: the 'memory' link is not set");
        return;
    }
    address_space_init(&s->dma_as, s->dma_mr, "accmap-mali-dma");
    memory_region_init_io(&s->iomem, OBJECT(s), &am_ops, s, "accmap-mali",
                  MALI_WINDOW_SIZE);
    sysbus_init_mmio(sbd, &s->iomem);
    for (i = 0; i < AM_IRQ_COUNT; i++) {
        sysbus_init_irq(sbd, &s->irq[i]);
    }
    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->wake);
    s->irq_bh = qemu_bh_new_guarded(am_irq_bh, s, &dev->mem_reentrancy_guard);
    s->irq_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, am_irq_timer, s);
    s->reset_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, am_reset_done, s);
    s->as_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, am_as_done, s);
    s->spurious_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, am_spurious_end, s);
    qemu_thread_create(&s->worker, "accmap-mali", am_worker, s,
               QEMU_THREAD_JOINABLE);
}

static void am_unrealize(DeviceState *dev)
{
    AccmapMaliState *s = ACCMAP_MALI(dev);

    qemu_mutex_lock(&s->lock);
    s->quit = true;
    qemu_cond_broadcast(&s->wake);
    qemu_mutex_unlock(&s->lock);
    qemu_thread_join(&s->worker);
    timer_free(s->irq_timer);
    timer_free(s->reset_timer);
    timer_free(s->as_timer);
    timer_free(s->spurious_timer);
    qemu_bh_delete(s->irq_bh);
    qemu_cond_destroy(&s->wake);
    qemu_mutex_destroy(&s->lock);
    address_space_destroy(&s->dma_as);
}

/* A system reset: a GPU at power-up, chains dropped. */
static void am_reset(DeviceState *dev)
{
    AccmapMaliState *s = ACCMAP_MALI(dev);

    qemu_mutex_lock(&s->lock);
    s->gen++;
    am_regs_reset(s);
    s->lines_held = 0;
    qemu_cond_broadcast(&s->wake);
    qemu_mutex_unlock(&s->lock);
    am_update_irqs(s);
}

static Property am_properties[] = {
    DEFINE_PROP_LINK("memory", AccmapMaliState, dma_mr, TYPE_MEMORY_REGION,
             MemoryRegion *),
    DEFINE_PROP_UINT32("job-ns", AccmapMaliState, job_ns, 200 * 1000),
    DEFINE_PROP_UINT32("reset-ns", AccmapMaliState, reset_ns, 500 * 1000),
    DEFINE_PROP_UINT32("as-cmd-ns", AccmapMaliState, as_cmd_ns, 20 * 1000),
    DEFINE_PROP_UINT32("irq-delay-ns", AccmapMaliState, irq_delay_ns, 0),
    DEFINE_PROP_BOOL("job-hang", AccmapMaliState, job_hang, false),
    DEFINE_PROP_BOOL("reset-hang", AccmapMaliState, reset_hang, false),
    DEFINE_PROP_BOOL("shared-irq", AccmapMaliState, shared_irq, false),
    DEFINE_PROP_BOOL("spurious-irq", AccmapMaliState, spurious_irq, false),
    DEFINE_PROP_END_OF_LIST(),
};

static void am_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = am_realize;
    dc->unrealize = am_unrealize;
    dc->reset = am_reset;
    dc->user_creatable = false;
    device_class_set_props(dc, am_properties);
}

static const TypeInfo am_info = {
    .name = TYPE_ACCMAP_MALI,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(AccmapMaliState),
    .class_init = am_class_init,
};

static void am_register_types(void)
{
    type_register_static(&am_info);
}

type_init(am_register_types)

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap-mali: a Mali job-manager GPU for qemu's virt machine, the GPU
 * accmap's board guests drive through the mmio replay target.
 *
 * What it owns: the register window (16 KiB), three interrupt lines (job,
 * mmu, gpu), a worker thread that runs job chains while the vCPUs go on,
 * the timing of resets and address-space commands, and the GPU MMU: it
 * walks the page tables accmap builds, in guest memory, from the address
 * AS_TRANSTAB holds, and reads and writes through its DMA address space
 * (the "memory" link; behind an SMMU that space translates, so tables and
 * buffers must hold bus addresses).
 *
 * What it may call: mali_regfile.c for the registers (the Mali-G71's map,
 * GPU_ID as the HiKey960's; 3 job slots, 8 address spaces), mali_jobs.c
 * for what a job does and replay_walk.c for the table walk, the code the
 * in-kernel model runs, built from accmap's tree (drivers/accmap/); qemu's
 * memory, timer, thread and interrupt APIs.  Nothing here is a copy of
 * another device.
 *
 * Strict as hardware is: a table entry, attribute or address the walker
 * refuses is an MMU fault (the address space stalls, FAULTSTATUS and
 * FAULTADDRESS latch, the MMU interrupt rises) and the access waits until
 * the driver clears the interrupt and sends UNLOCK (or a flush) to retry
 * it, or resets the GPU.  A soft reset takes reset-ns of virtual time and
 * raises RESET_COMPLETED; AS commands keep AS_STATUS active for as-cmd-ns,
 * and longer while an access that translated before the command is still
 * copying: once AS_STATUS drops, no access uses an older translation.
 *
 * Fault knobs (properties), for the tests of the driver's error paths:
 *   job-hang      chains never finish (until a reset)
 *   reset-hang    a soft or hard reset never completes
 *   irq-delay-ns  a chain's end reaches the interrupt line this late
 *   shared-irq    all three blocks drive the job line (the DT gives one
 *                 interrupt three times)
 *   spurious-irq  each START also pulses the gpu line (the shared line with
 *                 shared-irq) with nothing pending
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
#include "mali_regfile.h"
#include "mali_regs.h"
#include "replay_walk.h"

#define AM_FAULT_RETRIES        8
#define AM_FRAME_SIZE           0x1000ULL
#define AM_FAULT_TRANSTAB_BUS(l) (0xd0 + (l))
#define AM_FORMAT_NONE          MALI_REGFILE_FORMAT_NONE

struct AccmapMaliState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    qemu_irq irq[AM_IRQ_COUNT];
    MemoryRegion *dma_mr;   /* the GPU's bus: system memory or an IOMMU */
    AddressSpace dma_as;

    /*
     * @lock protects @rf (the registers, mali_regfile.c), @gen, @quit and
     * @lines_held.  The MMIO handlers take it under the BQL; the worker
     * never takes the BQL while holding it.
     */
    QemuMutex lock;
    QemuCond wake;          /* a slot queued, a fault serviced, a reset */
    /*
     * Translations in use, under @lock: @epoch counts AS commands,
     * @access_epoch is one more than @epoch was when the worker's access
     * in flight translated (0: none), @cmd_epoch the count at the last
     * command; an access with @access_epoch <= @cmd_epoch began before it.
     */
    uint64_t epoch, access_epoch, cmd_epoch;
    QemuThread worker;
    bool quit;
    uint32_t gen;           /* bumped by resets: older chains stop */
    struct mali_regfile rf;
    uint32_t lines_held;    /* lines forced high (spurious-irq) */

    QEMUBH *irq_bh;
    QEMUTimer *irq_timer;
    QEMUTimer *reset_timer;
    QEMUTimer *as_timer;
    QEMUTimer *spurious_timer;

    /* Properties: timing and the fault knobs. */
    uint32_t job_ns, reset_ns, as_cmd_ns, irq_delay_ns;
    bool job_hang, reset_hang, shared_irq, spurious_irq;
};

/* ---- interrupt lines ---------------------------------------------------- */

/* The level each output should have now; under s->lock. */
static void am_levels(AccmapMaliState *s, int level[AM_IRQ_COUNT])
{
    int i;

    for (i = 0; i < AM_IRQ_COUNT; i++) {
        level[i] = !!(s->rf.irq_raw[i] & s->rf.irq_mask[i]);
    }
    if (s->shared_irq) {
        level[AM_IRQ_JOB] |= level[AM_IRQ_MMU] | level[AM_IRQ_GPU];
        level[AM_IRQ_MMU] = level[AM_IRQ_GPU] = 0;
    }
    level[AM_IRQ_JOB] |= s->lines_held & (1u << AM_IRQ_JOB) ? 1 : 0;
    /* A spurious pulse is on the gpu line, or on the one shared line. */
    if (s->lines_held & (1u << AM_IRQ_GPU)) {
        level[s->shared_irq ? AM_IRQ_JOB : AM_IRQ_GPU] = 1;
    }
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

/* ---- registers ----------------------------------------------------------- */

/* The register file's START: the worker picks the slot up; s->lock held. */
static void am_rf_start(void *opaque, unsigned int slot)
{
    AccmapMaliState *s = opaque;

    qemu_cond_broadcast(&s->wake);
    if (s->spurious_irq) {
        s->lines_held |= 1u << AM_IRQ_GPU;
        timer_mod(s->spurious_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + 100 * SCALE_US);
    }
}

/*
 * A reset command (the registers already at their power-up values): the
 * chains see the new generation at their next access and stop; the reset
 * ends reset-ns later, or never with reset-hang.  s->lock held.
 */
static void am_rf_reset(void *opaque)
{
    AccmapMaliState *s = opaque;

    s->gen++;
    qemu_cond_broadcast(&s->wake);
    if (!s->reset_hang) {
        timer_mod(s->reset_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->reset_ns);
    }
}

/*
 * An AS command keeps AS_STATUS active for as-cmd-ns (the walker caches
 * nothing, so every command is a flush that takes time); a stall it
 * ended wakes its chain.  s->lock held.
 */
static bool am_rf_as_command(void *opaque, unsigned int as, uint32_t cmd)
{
    AccmapMaliState *s = opaque;

    s->cmd_epoch = ++s->epoch;
    qemu_cond_broadcast(&s->wake);
    timer_mod(s->as_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->as_cmd_ns);
    return true;
}

static const struct mali_regfile_ops am_rf_ops = {
    .start = am_rf_start,
    .reset = am_rf_reset,
    .as_command = am_rf_as_command,
};

/* A reset's end, reset-ns after the command; with the BQL. */
static void am_reset_done(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    mali_regfile_reset_done(&s->rf);
    qemu_mutex_unlock(&s->lock);
    am_update_irqs(s);
}

/*
 * An AS command's end, as-cmd-ns after it: AS_STATUS goes idle, unless an
 * access that translated before the command still copies (then a
 * microsecond later).
 */
static void am_as_done(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    if (s->access_epoch && s->access_epoch <= s->cmd_epoch) {
        timer_mod(s->as_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + SCALE_US);
    } else {
        mali_regfile_as_idle(&s->rf);
    }
    qemu_mutex_unlock(&s->lock);
}

static uint64_t am_read(void *opaque, hwaddr offset, unsigned size)
{
    AccmapMaliState *s = opaque;
    uint32_t value;

    qemu_mutex_lock(&s->lock);
    value = mali_regfile_read(&s->rf, offset);
    qemu_mutex_unlock(&s->lock);
    return value;
}

static void am_write(void *opaque, hwaddr offset, uint64_t value64,
                     unsigned size)
{
    AccmapMaliState *s = opaque;
    uint32_t value = value64;

    if (offset == MALI_GPU_COMMAND && value != MALI_GPU_CMD_SOFT_RESET &&
        value != MALI_GPU_CMD_HARD_RESET &&
        value != MALI_GPU_CMD_CLEAN_CACHES &&
        value != MALI_GPU_CMD_CLEAN_INV_CACHES) {
        qemu_log_mask(LOG_GUEST_ERROR, "accmap-mali: GPU_COMMAND 0x%x\n",
                      value);
    }
    qemu_mutex_lock(&s->lock);
    mali_regfile_write(&s->rf, offset, value);
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

/*
 * An access begins (false if the chain was aborted): from its
 * translation to the end of its copy, AS commands issued meanwhile stay
 * active.
 */
static bool am_access_begin(AmChain *c)
{
    bool aborted;

    qemu_mutex_lock(&c->s->lock);
    aborted = c->gen != c->s->gen || c->s->quit;
    if (!aborted) {
        c->s->access_epoch = c->s->epoch + 1;
    }
    qemu_mutex_unlock(&c->s->lock);
    return !aborted;
}

static void am_access_end(AmChain *c)
{
    qemu_mutex_lock(&c->s->lock);
    c->s->access_epoch = 0;
    qemu_mutex_unlock(&c->s->lock);
}

/* The configuration the last AS UPDATE latched, for the next job. */
static void am_load_as(AmChain *c)
{
    struct mali_regfile_as *as = &c->s->rf.as[c->as];

    qemu_mutex_lock(&c->s->lock);
    c->transtab = as->cur_transtab;
    c->format = mali_regfile_as_format(as);
    qemu_mutex_unlock(&c->s->lock);
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
    struct mali_regfile_as *as = &s->rf.as[c->as];
    bool resumed;

    qemu_mutex_lock(&s->lock);
    if (c->gen != s->gen || s->quit) {
        qemu_mutex_unlock(&s->lock);
        return false;
    }
    mali_regfile_latch_fault(&s->rf, c->as,
                             code | access << MALI_FAULT_ACCESS_SHIFT, va);
    qemu_log_mask(LOG_GUEST_ERROR,
                  "accmap-mali: AS%u fault 0x%x at 0x%" PRIx64
                  " (format %d, table 0x%" PRIx64 ")\n",
                  c->as, code | access << MALI_FAULT_ACCESS_SHIFT, va,
                  c->format, c->transtab);
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

        int r;

        if (!am_access_begin(c)) {
            return -EINTR;
        }
        if (am_translate(c, va, access, &pa, &span, &fault)) {
            am_access_end(c);
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
        r = am_dma(c->s, pa, p, n, write);
        am_access_end(c);
        if (r) {
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

/*
 * Publishes how a chain ended (a START waiting in _NEXT starts); s->lock
 * held, same generation.  A chain stopped by a fault stays active: the
 * fault was latched when it was taken.
 */
static void am_finish(AccmapMaliState *s, unsigned int n, AmChain *c)
{
    mali_regfile_chain_end(&s->rf, n, c->jobs.end, c->jobs.code, c->jobs.jd);
}

static void *am_worker(void *opaque)
{
    AccmapMaliState *s = opaque;

    qemu_mutex_lock(&s->lock);
    while (!s->quit) {
        struct mali_regfile_slot *js = NULL;
        AmChain c = { .s = s };
        unsigned int n;

        for (n = 0; n < MALI_REGFILE_JS_COUNT; n++) {
            if (s->rf.js[n].queued) {
                js = &s->rf.js[n];
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
        if (c.as >= MALI_REGFILE_AS_COUNT) {
            c.jobs.end = MALI_JOBS_FAILED;
            c.jobs.code = MALI_JS_STATUS_CONFIG_FAULT;
            c.jobs.jd = js->head;
            am_finish(s, n, &c);
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
            am_finish(s, n, &c);
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
    mali_regfile_init(&s->rf, &am_rf_ops, s);
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
    mali_regfile_power_up(&s->rf);
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

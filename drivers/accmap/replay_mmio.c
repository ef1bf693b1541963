// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: replay targets on real register windows.
 *
 * A window is the register block of a Mali job-manager GPU, described by a
 * device-tree node (compatible "accmap,replay-mmio", binding in
 * Documentation/devicetree/bindings/misc/accmap,replay-mmio.yaml) or by the
 * module parameter replay_mmio=<base>,<size>.  The window is ioremap()ed;
 * user space reaches it only through REPLAY_RUN, with every offset checked
 * against its size (CAP_SYS_RAWIO).
 *
 * Interrupts: with interrupt lines (device tree only), the handler reads
 * the source's IRQ_STATUS, acknowledges it through IRQ_CLEAR and latches
 * what it saw for WAIT_IRQ.  Without them, WAIT_IRQ polls IRQ_STATUS.
 * Either way, a WAIT_IRQ that succeeds has acknowledged what it waited for.
 *
 * Address spaces outlive a run: every session uses the GPU's registers.
 * A session's address space keeps its configuration between its runs;
 * before another session's run on it, and when the session goes, it is
 * pointed at nothing (accmap_mmio_take_as(), accmap_mmio_stop()).
 *
 * GPU page tables live in coherent DMA memory of the window's device, and
 * buffers are DMA-mapped for it, so their caches are cleaned before a run
 * and invalidated after it.
 *
 * SVM.  A window with an MMU interrupt line, on an I/O-coherent GPU, takes
 * SVM sessions.  While such a session holds its address space, a fault
 * there is the session's to service: the hard handler masks the address
 * space's bit and wakes the threaded one, which calls the session's
 * handler (svm.c), then unmasks the bit; a fault that handler leaves
 * raised is latched as any other, for the run to report.  svm_flush has
 * the GPU flush the address space (LOCKADDR over all of it, AS_COMMAND
 * FLUSH_MEM) and waits for AS_STATUS, bounded; @as_lock keeps it from
 * interleaving with a run's writes to the address-space registers.
 *
 * Device memory.  A node whose memory-region names an accmap,device-memory
 * node gives its SVM sessions somewhere to migrate to: devmem.c makes it
 * and DMA-maps it for the GPU; it goes at unbind, after every session.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/clk.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iopoll.h>
#include <linux/ioport.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mod_devicetable.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "accmap.h"
#include "devmem.h"
#include "mali_regs.h"
#include "replay.h"

/* Longest window accepted: Mali job-manager GPUs use 16 KiB. */
#define ACCMAP_MMIO_WINDOW_MAX	SZ_1M

static char *replay_mmio;
module_param(replay_mmio, charp, 0444);
MODULE_PARM_DESC(replay_mmio,
		 "A Mali register window for replay: <base>,<size> as for memparse (no interrupts)");

/* IRQ_RAWSTAT of each interrupt source; CLEAR, MASK, STATUS follow. */
static const u32 accmap_mmio_irq_base[ACCMAP_REPLAY_IRQ_COUNT] = {
	[ACCMAP_REPLAY_IRQ_JOB] = MALI_JOB_IRQ_RAWSTAT,
	[ACCMAP_REPLAY_IRQ_MMU] = MALI_MMU_IRQ_RAWSTAT,
	[ACCMAP_REPLAY_IRQ_GPU] = MALI_GPU_IRQ_RAWSTAT,
};

static const char *const accmap_mmio_irq_names[ACCMAP_REPLAY_IRQ_COUNT] = {
	[ACCMAP_REPLAY_IRQ_JOB] = "job",
	[ACCMAP_REPLAY_IRQ_MMU] = "mmu",
	[ACCMAP_REPLAY_IRQ_GPU] = "gpu",
};

#define ACCMAP_MMIO_IRQ_CLEAR	0x4
#define ACCMAP_MMIO_IRQ_MASK	0x8
#define ACCMAP_MMIO_IRQ_STATUS	0xc

/* MMU_IRQ bits that mean a fault or bus error on some address space. */
#define ACCMAP_MMIO_MMU_FAULTS	GENMASK(31, 0)

/**
 * struct accmap_mmio - one register window
 * @target:      the replay target
 * @dev:         the device buffers and tables are DMA-mapped for
 * @regs:        the window, ioremap()ed
 * @base:        its physical address
 * @size:        its size in bytes
 * @irq:         Linux interrupt per source, or 0 for none
 * @irq_lock:    protects @latched, @svm_as, @svm_session, @in_service,
 *               @to_service, @parked, and MMU_IRQ_MASK's
 *               read-modify-writes
 * @latched:     per source, IRQ_STATUS bits the handler acknowledged and
 *               no WAIT_IRQ or fault report consumed yet
 * @svm_as:      MMU_IRQ fault bits of the address spaces an SVM session
 *               holds: their faults are that session's to service
 * @svm_session: per address space, that session, or NULL
 * @in_service:  fault bits masked while the threaded handler services them
 * @to_service:  of those, the ones it has not taken up yet
 * @parked:      fault bits an SVM session's handler left raised (their
 *               jobs stay stalled): no other run's to see in RAWSTAT
 * @wq:          woken by the handler
 * @window_lock: one run at a time on the window, whichever session
 * @as_lock:     serialises writes to the address-space registers (a run's
 *               and an SVM flush's); nested inside @window_lock
 * @as_root:     per address space, the session whose run last programmed
 *               it (its root may still be there), or NULL; protected by
 *               @window_lock
 * @name:        the target's name
 * @res:         the region requested for a module-parameter window
 * @clks:        the clocks enabled while bound (device tree), @nclks of
 *               them
 * @nclks:       number of @clks
 * @coherent:    the GPU's DMA is I/O coherent (device tree: dma-coherent)
 */
struct accmap_mmio {
	struct accmap_replay_target target;
	struct device *dev;
	void __iomem *regs;
	phys_addr_t base;
	resource_size_t size;
	int irq[ACCMAP_REPLAY_IRQ_COUNT];

	spinlock_t irq_lock;	/* see above */
	u32 latched[ACCMAP_REPLAY_IRQ_COUNT];
	u32 svm_as;
	struct accmap_replay_session *svm_session[MALI_AS_COUNT];
	u32 in_service;
	u32 to_service;
	u32 parked;
	wait_queue_head_t wq;

	struct mutex window_lock;	/* one run at a time; as_root */
	struct mutex as_lock;	/* address-space register writes */
	struct accmap_replay_session *as_root[MALI_AS_COUNT];
	char name[ACCMAP_REPLAY_NAME_LEN];
	struct resource *res;
	struct clk_bulk_data *clks;
	int nclks;
	bool coherent;
};

static void accmap_mmio_clks_off(void *data)
{
	struct accmap_mmio *mmio = data;

	clk_bulk_disable_unprepare(mmio->nclks, mmio->clks);
}

static struct accmap_mmio *accmap_mmio_of(struct accmap_replay_session *s)
{
	return s->target->priv;
}

/*
 * The interrupt source with a line whose RAWSTAT, CLEAR, MASK, STATUS
 * block holds @offset, or -1; the register's place in the block in *@reg.
 */
static int accmap_mmio_irq_reg(struct accmap_mmio *mmio, u32 offset, u32 *reg)
{
	unsigned int src;

	for (src = 0; src < ACCMAP_REPLAY_IRQ_COUNT; src++) {
		u32 base = accmap_mmio_irq_base[src];

		if (mmio->irq[src] && offset >= base &&
		    offset <= base + ACCMAP_MMIO_IRQ_STATUS) {
			*reg = offset - base;
			return src;
		}
	}
	return -1;
}

/*
 * A session sees the interrupt registers as if no handler ran: RAWSTAT
 * and STATUS also show what the handler acknowledged and no op consumed
 * yet (a POLL of a reset's end, say), and its write to CLEAR consumes it.
 */
static u32 accmap_mmio_read32(struct accmap_replay_session *s, u32 offset)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 value = readl(mmio->regs + offset), reg, latched;
	int src = accmap_mmio_irq_reg(mmio, offset, &reg);

	if (src < 0 || (reg != 0 && reg != ACCMAP_MMIO_IRQ_STATUS))
		return value;
	latched = READ_ONCE(mmio->latched[src]);
	if (reg == ACCMAP_MMIO_IRQ_STATUS)
		latched &= readl(mmio->regs + accmap_mmio_irq_base[src] +
				 ACCMAP_MMIO_IRQ_MASK);
	return value | latched;
}

static void accmap_mmio_write32(struct accmap_replay_session *s, u32 offset,
				u32 value)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 reg, back;
	int src = accmap_mmio_irq_reg(mmio, offset, &reg);

	if (offset >= MALI_AS_BASE(0) && offset < MALI_AS_BASE(MALI_AS_COUNT)) {
		mutex_lock(&mmio->as_lock);
		writel(value, mmio->regs + offset);
		mutex_unlock(&mmio->as_lock);
		return;
	}
	writel(value, mmio->regs + offset);
	if (src >= 0 && reg == ACCMAP_MMIO_IRQ_CLEAR) {
		spin_lock_irq(&mmio->irq_lock);
		mmio->latched[src] &= ~value;
		/* An SVM fault left raised is gone: the next one interrupts. */
		back = 0;
		if (src == ACCMAP_REPLAY_IRQ_MMU) {
			mmio->parked &= ~value;
			back = value & mmio->svm_as & ~mmio->in_service;
		}
		if (back)
			writel(readl(mmio->regs + MALI_MMU_IRQ_MASK) | back,
			       mmio->regs + MALI_MMU_IRQ_MASK);
		spin_unlock_irq(&mmio->irq_lock);
	}
}

/*
 * Faults of @status for an SVM session's handler: masked (MMU_IRQ_RAWSTAT
 * keeps them, for the handler to read) and queued for the thread.  What
 * is left is latched as usual.  Returns the bits taken.
 */
static u32 accmap_mmio_irq_svm(struct accmap_mmio *mmio, u32 status)
{
	void __iomem *mask = mmio->regs + MALI_MMU_IRQ_MASK;
	u32 svc;

	spin_lock(&mmio->irq_lock);
	svc = status & mmio->svm_as;
	if (svc) {
		writel(readl(mask) & ~svc, mask);
		/* One unmasked again while in service is not queued twice. */
		mmio->to_service |= svc & ~mmio->in_service;
		mmio->in_service |= svc;
	}
	spin_unlock(&mmio->irq_lock);
	return svc;
}

static irqreturn_t accmap_mmio_irq(int irq, void *data)
{
	struct accmap_mmio *mmio = data;
	irqreturn_t ret = IRQ_NONE;
	bool latched = false, thread = false;
	unsigned int src;

	for (src = 0; src < ACCMAP_REPLAY_IRQ_COUNT; src++) {
		u32 base = accmap_mmio_irq_base[src];
		u32 status, svc;

		if (mmio->irq[src] != irq)
			continue;
		status = readl(mmio->regs + base + ACCMAP_MMIO_IRQ_STATUS);
		if (!status)
			continue;
		ret = IRQ_HANDLED;
		if (src == ACCMAP_REPLAY_IRQ_MMU) {
			svc = accmap_mmio_irq_svm(mmio, status);
			thread |= svc != 0;
			status &= ~svc;
			if (!status)
				continue;
		}
		writel(status, mmio->regs + base + ACCMAP_MMIO_IRQ_CLEAR);
		spin_lock(&mmio->irq_lock);
		mmio->latched[src] |= status;
		spin_unlock(&mmio->irq_lock);
		latched = true;
	}
	if (latched)
		wake_up_all(&mmio->wq);
	return thread ? IRQ_WAKE_THREAD : ret;
}

/*
 * The threaded handler: each fault the hard handler queued goes to the
 * handler of the SVM session holding the address space, which may sleep
 * (it faults pages in); a fault it serviced is over, and the address
 * space's bit is unmasked again.  A fault it does not service (or whose
 * session let go of the address space) is latched for the run to report
 * and left raised and masked: the job stays stalled, as a flush does not
 * resume an address space whose fault is raised, until a reset or the
 * session's own write to MMU_IRQ_CLEAR.  A fault no longer raised when
 * the handler gives up (a reset took it) is not latched: it is no run's
 * to report.  accmap_mmio_stop() waits for this with synchronize_irq()
 * before its session may go.
 */
static irqreturn_t accmap_mmio_irq_thread(int irq, void *data)
{
	struct accmap_mmio *mmio = data;
	void __iomem *mask = mmio->regs + MALI_MMU_IRQ_MASK;

	for (;;) {
		struct accmap_replay_session *s;
		bool serviced, stays;
		u32 bit;

		spin_lock_irq(&mmio->irq_lock);
		if (!mmio->to_service) {
			spin_unlock_irq(&mmio->irq_lock);
			return IRQ_HANDLED;
		}
		bit = BIT(__ffs(mmio->to_service));
		mmio->to_service &= ~bit;
		s = mmio->svm_session[__ffs(bit)];
		spin_unlock_irq(&mmio->irq_lock);

		serviced = s && s->mmu_irq(s);

		spin_lock_irq(&mmio->irq_lock);
		mmio->in_service &= ~bit;
		stays = !serviced &&
			(readl(mmio->regs + MALI_MMU_IRQ_RAWSTAT) & bit);
		if (stays) {
			mmio->latched[ACCMAP_REPLAY_IRQ_MMU] |= bit;
			mmio->parked |= bit;
		} else {
			writel(readl(mask) | bit, mask);
		}
		spin_unlock_irq(&mmio->irq_lock);
		if (stays)
			wake_up_all(&mmio->wq);
	}
}

/*
 * Bits of @mask the source has raised: latched by the handler or, without
 * an interrupt line, read from IRQ_STATUS.  They are acknowledged here.
 */
static u32 accmap_mmio_take(struct accmap_mmio *mmio, u32 src, u32 mask,
			    u32 *seen)
{
	u32 base = accmap_mmio_irq_base[src];
	unsigned long flags;
	u32 status;

	if (!mmio->irq[src]) {
		status = readl(mmio->regs + base + ACCMAP_MMIO_IRQ_STATUS);
		if (status & mask)
			writel(status & mask,
			       mmio->regs + base + ACCMAP_MMIO_IRQ_CLEAR);
		*seen = status;
		return status & mask;
	}

	spin_lock_irqsave(&mmio->irq_lock, flags);
	status = mmio->latched[src];
	mmio->latched[src] &= ~mask;
	spin_unlock_irqrestore(&mmio->irq_lock, flags);
	*seen = status;
	return status & mask;
}

/*
 * MMU faults pending for a run: latched by the handlers, or raised and
 * not yet seen by them, but for those an SVM session's handler takes or
 * left raised (a fault it leaves is latched once, for its own run).
 * Under irq_lock.
 */
static u32 accmap_mmio_faults_locked(struct accmap_mmio *mmio)
{
	u32 raw = readl(mmio->regs + MALI_MMU_IRQ_RAWSTAT) &
		  ~(mmio->svm_as | mmio->parked);

	lockdep_assert_held(&mmio->irq_lock);
	return (mmio->latched[ACCMAP_REPLAY_IRQ_MMU] | raw) &
	       ACCMAP_MMIO_MMU_FAULTS;
}

static bool accmap_mmio_fault_pending(struct accmap_mmio *mmio)
{
	u32 faults;

	spin_lock_irq(&mmio->irq_lock);
	faults = accmap_mmio_faults_locked(mmio);
	spin_unlock_irq(&mmio->irq_lock);
	return faults;
}

static bool accmap_mmio_mmu_fault(struct accmap_replay_session *s,
				  struct accmap_replay_fault *f)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 bits, as, lo, hi;

	spin_lock_irq(&mmio->irq_lock);
	bits = accmap_mmio_faults_locked(mmio);
	/* Reported once: the handler acknowledged it already. */
	mmio->latched[ACCMAP_REPLAY_IRQ_MMU] = 0;
	spin_unlock_irq(&mmio->irq_lock);
	if (!bits)
		return false;

	/*
	 * Fault bits 15:0, bus errors 31:16, both per address space.  The
	 * session's own is reported first; of another, only its number: its
	 * fault address is not this session's to see.
	 */
	if (bits & (BIT(s->as) | BIT(16 + s->as)))
		as = s->as;
	else
		as = __ffs(bits) % 16;
	f->as = as;
	if (as != s->as) {
		f->status = 0;
		f->address = 0;
		return true;
	}
	f->status = readl(mmio->regs + MALI_AS_BASE(as) + MALI_AS_FAULTSTATUS);
	lo = readl(mmio->regs + MALI_AS_BASE(as) + MALI_AS_FAULTADDRESS_LO);
	hi = readl(mmio->regs + MALI_AS_BASE(as) + MALI_AS_FAULTADDRESS_HI);
	f->address = ((u64)hi << 32) | lo;
	return true;
}

/*
 * FAILED bits of JOB_IRQ raised but those in @expected: latched by the
 * handler (which acknowledged them) or still in JOB_IRQ_RAWSTAT.
 */
static u32 accmap_mmio_failures(struct accmap_mmio *mmio, u32 expected)
{
	u32 bits = READ_ONCE(mmio->latched[ACCMAP_REPLAY_IRQ_JOB]);

	bits |= readl(mmio->regs + MALI_JOB_IRQ_RAWSTAT);
	return bits & MALI_JOB_IRQ_FAILED_ALL & ~expected;
}

static bool accmap_mmio_job_failed(struct accmap_replay_session *s,
				   u32 expected, struct accmap_replay_fault *f)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 bits, slot, base, lo, hi;

	bits = accmap_mmio_failures(mmio, expected);
	if (!bits)
		return false;
	slot = __ffs(bits) - 16;
	/* Reported once: the handler acknowledged it already. */
	spin_lock_irq(&mmio->irq_lock);
	mmio->latched[ACCMAP_REPLAY_IRQ_JOB] &= ~MALI_JOB_IRQ_FAILED(slot);
	spin_unlock_irq(&mmio->irq_lock);

	/* Every slot's registers are in the window (at least the Mali map). */
	f->as = slot;
	base = MALI_JS_BASE(slot);
	f->status = readl(mmio->regs + base + MALI_JS_STATUS);
	lo = readl(mmio->regs + base + MALI_JS_HEAD_LO);
	hi = readl(mmio->regs + base + MALI_JS_HEAD_HI);
	f->address = ((u64)hi << 32) | lo;
	return true;
}

/* What WAIT_IRQ sleeps for: its bits, or any MMU fault. */
static bool accmap_mmio_woken(struct accmap_mmio *mmio, u32 irq, u32 mask)
{
	return (READ_ONCE(mmio->latched[irq]) & mask) ||
	       READ_ONCE(mmio->latched[ACCMAP_REPLAY_IRQ_MMU]);
}

/*
 * Longest sleep of an interrupt-driven WAIT_IRQ: a job that fails with
 * its FAILED bit masked raises no interrupt, and is seen this late.
 */
#define ACCMAP_MMIO_WAIT_SLICE_US	1000

static int accmap_mmio_wait_irq(struct accmap_replay_session *s, u32 irq,
				u32 mask, u32 timeout_us, u32 *seen)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	ktime_t end = ktime_add_us(ktime_get(), timeout_us);
	unsigned int sleep_us = 1;

	for (;;) {
		long left;

		if (accmap_mmio_take(mmio, irq, mask, seen))
			return 0;
		if (irq != ACCMAP_REPLAY_IRQ_MMU && accmap_mmio_fault_pending(mmio))
			return -EIO;
		/* A failed job the wait does not wait for ends it. */
		if (accmap_mmio_failures(mmio, irq == ACCMAP_REPLAY_IRQ_JOB ?
					 mask : 0))
			return -ECANCELED;
		if (fatal_signal_pending(current))
			return -EINTR;
		left = ktime_us_delta(end, ktime_get());
		if (left <= 0)
			return -ETIMEDOUT;

		if (mmio->irq[irq]) {
			left = min_t(long, left, ACCMAP_MMIO_WAIT_SLICE_US);
			left = wait_event_killable_timeout(mmio->wq,
							   accmap_mmio_woken(mmio, irq, mask),
							   usecs_to_jiffies(left));
			if (left < 0)
				return -EINTR;
			continue;
		}
		/* No interrupt line: poll, backing off up to 100 us. */
		usleep_range(sleep_us, sleep_us * 2);
		sleep_us = min(sleep_us * 2, 100U);
	}
}

/*
 * Faults on @s->as go to @s's handler if it is an SVM session (its bit
 * unmasked, so they interrupt), else to the run as any fault.
 */
static void accmap_mmio_route_faults(struct accmap_mmio *mmio,
				     struct accmap_replay_session *s)
{
	void __iomem *mask = mmio->regs + MALI_MMU_IRQ_MASK;
	u32 bit = MALI_MMU_IRQ_FAULT(s->as);

	spin_lock_irq(&mmio->irq_lock);
	if (s->mmu_irq) {
		mmio->svm_session[s->as] = s;
		mmio->svm_as |= bit;
		if (!(mmio->in_service & bit))
			writel(readl(mask) | bit, mask);
	} else {
		mmio->svm_session[s->as] = NULL;
		mmio->svm_as &= ~bit;
	}
	spin_unlock_irq(&mmio->irq_lock);
}

/*
 * Points address space @s->as at nothing if another session's run
 * programmed it last, so that @s never runs on that session's root; the
 * address space is @s's from here until another session's run or @s's
 * end.  A session's own configuration stays from one of its runs to the
 * next: a recording replayed in batches sets the address space up in one
 * run and starts its jobs in another.
 */
static void accmap_mmio_take_as(struct accmap_mmio *mmio,
				struct accmap_replay_session *s)
{
	lockdep_assert_held(&mmio->window_lock);
	if (mmio->as_root[s->as] == s)
		return;
	if (mmio->as_root[s->as] && accmap_replay_release_as(s))
		pr_warn_ratelimited("%s: address space %u stayed busy as %s[%d] took it\n",
				    mmio->name, s->as, s->comm, s->pid);
	mmio->as_root[s->as] = s;
	accmap_mmio_route_faults(mmio, s);
}

static int accmap_mmio_run_begin(struct accmap_replay_session *s)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	int ret;

	ret = mutex_lock_killable(&mmio->window_lock);
	if (ret)
		return ret;
	accmap_mmio_take_as(mmio, s);
	return 0;
}

static void accmap_mmio_run_end(struct accmap_replay_session *s)
{
	mutex_unlock(&accmap_mmio_of(s)->window_lock);
}

static struct device *accmap_mmio_dma_dev(struct accmap_replay_session *s)
{
	return accmap_mmio_of(s)->dev;
}

/* How long a soft reset may take before the window is left as it is. */
#define ACCMAP_MMIO_RESET_TIMEOUT_US	100000

/*
 * A session that ran may have left jobs running, or the GPU's caches and
 * MMU holding what they read of its tables; all go with it, so reset the
 * GPU first.  Only a reset that completes says the GPU no longer touches
 * the session's memory (nor that of any session before it); if it does
 * not, replay.c keeps that memory back.
 */
static int accmap_mmio_stop(struct accmap_replay_session *s)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 raw;
	int ret;

	if (!s->ran)
		return 0;
	/* Its fault handler first: nothing may call it once this returns. */
	spin_lock_irq(&mmio->irq_lock);
	if (mmio->svm_session[s->as] == s) {
		mmio->svm_session[s->as] = NULL;
		mmio->svm_as &= ~MALI_MMU_IRQ_FAULT(s->as);
	}
	spin_unlock_irq(&mmio->irq_lock);
	if (s->mmu_irq && mmio->irq[ACCMAP_REPLAY_IRQ_MMU])
		synchronize_irq(mmio->irq[ACCMAP_REPLAY_IRQ_MMU]);

	mutex_lock(&mmio->window_lock);
	/* Its root goes first, whether or not the reset completes. */
	if (mmio->as_root[s->as] == s) {
		if (accmap_replay_release_as(s))
			pr_warn_ratelimited("%s: address space %u of %s[%d] stayed busy at its end\n",
					    mmio->name, s->as, s->comm, s->pid);
		mmio->as_root[s->as] = NULL;
	}
	writel(MALI_GPU_IRQ_RESET_COMPLETED, mmio->regs + MALI_GPU_IRQ_CLEAR);
	writel(MALI_GPU_CMD_SOFT_RESET, mmio->regs + MALI_GPU_COMMAND);
	ret = readl_poll_timeout(mmio->regs + MALI_GPU_IRQ_RAWSTAT, raw,
				 raw & MALI_GPU_IRQ_RESET_COMPLETED, 100,
				 ACCMAP_MMIO_RESET_TIMEOUT_US);
	writel(MALI_GPU_IRQ_RESET_COMPLETED, mmio->regs + MALI_GPU_IRQ_CLEAR);
	/*
	 * A reset that completed took every address space's root with it,
	 * and every fault and job it had raised: what the handler latched
	 * before it is stale, not the next run's to see.
	 */
	if (!ret) {
		memset(mmio->as_root, 0, sizeof(mmio->as_root));
		spin_lock_irq(&mmio->irq_lock);
		memset(mmio->latched, 0, sizeof(mmio->latched));
		memset(mmio->svm_session, 0, sizeof(mmio->svm_session));
		mmio->svm_as = 0;
		mmio->parked = 0;
		spin_unlock_irq(&mmio->irq_lock);
	}
	mutex_unlock(&mmio->window_lock);
	return ret ? -ETIMEDOUT : ACCMAP_REPLAY_STOP_RESET;
}

static int accmap_mmio_open(struct accmap_replay_session *s)
{
	return 0;
}

static void accmap_mmio_close(struct accmap_replay_session *s)
{
}

static void *accmap_mmio_table_alloc(void *priv, u64 *dma)
{
	struct accmap_mmio *mmio = accmap_mmio_of(priv);
	dma_addr_t addr;
	void *va;

	va = dma_alloc_coherent(mmio->dev, ACCMAP_PGT_PAGE_SIZE, &addr,
				GFP_KERNEL_ACCOUNT);
	if (va)
		*dma = addr;
	return va;
}

static void accmap_mmio_table_free(void *priv, void *va, u64 dma)
{
	struct accmap_mmio *mmio = accmap_mmio_of(priv);

	dma_free_coherent(mmio->dev, ACCMAP_PGT_PAGE_SIZE, va, dma);
}

/*
 * An SVM session's faults are serviced from the MMU interrupt, and its
 * pages are shared with the CPU as they are, without cache maintenance:
 * the window needs both an MMU line and an I/O-coherent GPU (the flag).
 */
static int accmap_mmio_svm_enable(struct accmap_replay_session *s)
{
	return s->target->flags & ACCMAP_REPLAY_TARGET_SVM ? 0 : -EOPNOTSUPP;
}

/* How long an SVM flush may keep the address space active. */
#define ACCMAP_MMIO_FLUSH_TIMEOUT_US	10000
/* LOCKADDR's region: 2^(width + 1) bytes from 0, all of a 48-bit space. */
#define ACCMAP_MMIO_LOCK_ALL		47

static int accmap_mmio_as_wait(struct accmap_mmio *mmio, u32 base)
{
	u32 status;

	return readl_poll_timeout(mmio->regs + base + MALI_AS_STATUS, status,
				  !(status & MALI_AS_STATUS_ACTIVE), 10,
				  ACCMAP_MMIO_FLUSH_TIMEOUT_US);
}

/*
 * Has the GPU drop what it cached of the session's address space (TLB
 * and data: FLUSH_MEM over the whole space) and waits until it says the
 * command is done, when no access uses an old translation any more.  The
 * run's LOCKADDR is put back.
 */
static int accmap_mmio_svm_flush(struct accmap_replay_session *s)
{
	struct accmap_mmio *mmio = accmap_mmio_of(s);
	u32 base = MALI_AS_BASE(s->as), lo, hi;
	int ret;

	mutex_lock(&mmio->as_lock);
	lo = readl(mmio->regs + base + MALI_AS_LOCKADDR_LO);
	hi = readl(mmio->regs + base + MALI_AS_LOCKADDR_HI);
	/* A command in progress first: the register takes one at a time. */
	ret = accmap_mmio_as_wait(mmio, base);
	writel(ACCMAP_MMIO_LOCK_ALL, mmio->regs + base + MALI_AS_LOCKADDR_LO);
	writel(0, mmio->regs + base + MALI_AS_LOCKADDR_HI);
	writel(MALI_AS_CMD_FLUSH_MEM, mmio->regs + base + MALI_AS_COMMAND);
	ret = accmap_mmio_as_wait(mmio, base) ?: ret;
	writel(lo, mmio->regs + base + MALI_AS_LOCKADDR_LO);
	writel(hi, mmio->regs + base + MALI_AS_LOCKADDR_HI);
	mutex_unlock(&mmio->as_lock);
	if (ret)
		pr_warn_ratelimited("%s: address space %u of %s[%d] stayed busy in a TLB flush\n",
				    mmio->name, s->as, s->comm, s->pid);
	return ret;
}

static const struct accmap_pgt_alloc_ops accmap_mmio_pgt_alloc = {
	.alloc = accmap_mmio_table_alloc,
	.free = accmap_mmio_table_free,
};

static const struct accmap_replay_target_ops accmap_mmio_ops = {
	.open = accmap_mmio_open,
	.stop = accmap_mmio_stop,
	.close = accmap_mmio_close,
	.pgt_alloc = &accmap_mmio_pgt_alloc,
	.dma_dev = accmap_mmio_dma_dev,
	.run_begin = accmap_mmio_run_begin,
	.run_end = accmap_mmio_run_end,
	.read32 = accmap_mmio_read32,
	.write32 = accmap_mmio_write32,
	.wait_irq = accmap_mmio_wait_irq,
	.mmu_fault = accmap_mmio_mmu_fault,
	.job_failed = accmap_mmio_job_failed,
	.svm_enable = accmap_mmio_svm_enable,
	.svm_flush = accmap_mmio_svm_flush,
};

static void accmap_mmio_init_target(struct accmap_mmio *mmio, int index)
{
	struct accmap_replay_target *t = &mmio->target;
	unsigned int src;
	u32 as_present;

	spin_lock_init(&mmio->irq_lock);
	init_waitqueue_head(&mmio->wq);
	mutex_init(&mmio->window_lock);
	mutex_init(&mmio->as_lock);
	snprintf(mmio->name, sizeof(mmio->name), "mmio%d", index);

	t->name = mmio->name;
	t->flags = 0;
	for (src = 0; src < ACCMAP_REPLAY_IRQ_COUNT; src++)
		if (mmio->irq[src])
			t->flags |= ACCMAP_REPLAY_TARGET_IRQ;
	t->window_size = mmio->size;
	if (mmio->irq[ACCMAP_REPLAY_IRQ_MMU] && mmio->coherent)
		t->flags |= ACCMAP_REPLAY_TARGET_SVM;
	t->formats = BIT(ACCMAP_PGT_MALI_AARCH64_4K) | BIT(ACCMAP_PGT_MALI_LPAE);
	/* The address spaces the GPU has; all 16 blocks if it does not say. */
	as_present = readl(mmio->regs + MALI_AS_PRESENT);
	t->as_count = as_present ? min_t(u32, fls(as_present), MALI_AS_COUNT) :
		      MALI_AS_COUNT;
	t->gpu_id = readl(mmio->regs + MALI_GPU_ID);
	t->ops = &accmap_mmio_ops;
	t->priv = mmio;
}

/* At unbind (unload): pages processes still map go back to RAM first. */
static void accmap_mmio_devmem_destroy(void *data)
{
	struct accmap_mmio *mmio = data;

	accmap_devmem_destroy(mmio->target.devmem);
	mmio->target.devmem = NULL;
}

static int accmap_mmio_check_window(u64 base, u64 size)
{
	/* The executor and the interrupt handler use the whole Mali map. */
	if (size < MALI_WINDOW_SIZE || size > ACCMAP_MMIO_WINDOW_MAX ||
	    !PAGE_ALIGNED(base) || !PAGE_ALIGNED(size) || base + size < base)
		return -EINVAL;
	return 0;
}

static struct accmap_device *accmap_mmio_adev;
static int accmap_mmio_count;

static int accmap_mmio_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct accmap_mmio *mmio;
	struct resource *res;
	struct clk_bulk_data *clks;
	unsigned int src;
	int ret, nclks;

	mmio = devm_kzalloc(dev, sizeof(*mmio), GFP_KERNEL);
	if (!mmio)
		return -ENOMEM;
	mmio->dev = dev;

	mmio->regs = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(mmio->regs))
		return PTR_ERR(mmio->regs);
	mmio->base = res->start;
	mmio->size = resource_size(res);
	ret = accmap_mmio_check_window(mmio->base, mmio->size);
	if (ret)
		return dev_err_probe(dev, ret, "window %pR not usable\n", res);

	/* The GPU's clocks, if the node names any, run while bound. */
	nclks = devm_clk_bulk_get_all(dev, &clks);
	if (nclks < 0)
		return dev_err_probe(dev, nclks, "clocks\n");
	if (nclks) {
		ret = clk_bulk_prepare_enable(nclks, clks);
		if (ret)
			return dev_err_probe(dev, ret, "enabling clocks\n");
		/* Running while bound: replay owns the GPU. */
		mmio->clks = clks;
		mmio->nclks = nclks;
		ret = devm_add_action_or_reset(dev, accmap_mmio_clks_off, mmio);
		if (ret)
			return ret;
	}

	ret = dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(40));
	if (ret)
		return ret;
	mmio->coherent = device_get_dma_attr(dev) == DEV_DMA_COHERENT;

	for (src = 0; src < ACCMAP_REPLAY_IRQ_COUNT; src++) {
		ret = platform_get_irq_byname_optional(pdev,
						       accmap_mmio_irq_names[src]);
		if (ret == -ENXIO)
			continue;
		if (ret < 0)
			return ret;
		mmio->irq[src] = ret;
	}

	accmap_mmio_init_target(mmio, accmap_mmio_count);
	for (src = 0; src < ACCMAP_REPLAY_IRQ_COUNT; src++) {
		unsigned int prev;

		if (!mmio->irq[src])
			continue;
		/* Sources may share a line: request each line once. */
		for (prev = 0; prev < src; prev++)
			if (mmio->irq[prev] == mmio->irq[src])
				break;
		if (prev < src)
			continue;
		ret = devm_request_threaded_irq(dev, mmio->irq[src],
						accmap_mmio_irq,
						accmap_mmio_irq_thread,
						IRQF_SHARED, dev_name(dev),
						mmio);
		if (ret)
			return ret;
	}

	/*
	 * Device memory, where the node names some: SVM migrates there.  A
	 * GPU without it (or whose memory is refused, logged) still runs.
	 */
	if (mmio->target.flags & ACCMAP_REPLAY_TARGET_SVM &&
	    !accmap_devmem_create_gpu(accmap_mmio_adev, dev, mmio->name,
				      &mmio->target.devmem) &&
	    mmio->target.devmem) {
		ret = devm_add_action_or_reset(dev, accmap_mmio_devmem_destroy,
					       mmio);
		if (ret)
			return ret;
	}

	ret = accmap_replay_add_target(accmap_mmio_adev, &mmio->target);
	if (ret)
		return ret;
	accmap_mmio_count++;
	dev_info(dev, "replay target %s: %pR, GPU_ID %#x, %u address spaces%s%s%s\n",
		 mmio->name, res, mmio->target.gpu_id, mmio->target.as_count,
		 mmio->target.flags & ACCMAP_REPLAY_TARGET_IRQ ?
		 ", interrupts" : "",
		 mmio->target.flags & ACCMAP_REPLAY_TARGET_SVM ? ", SVM" : "",
		 mmio->target.devmem ? ", device memory" : "");
	return 0;
}

static const struct of_device_id accmap_mmio_of_match[] = {
	{ .compatible = "accmap,replay-mmio" },
	{ }
};
MODULE_DEVICE_TABLE(of, accmap_mmio_of_match);

static struct platform_driver accmap_mmio_driver = {
	.probe = accmap_mmio_probe,
	.driver = {
		.name = "accmap-replay-mmio",
		.of_match_table = accmap_mmio_of_match,
		/* Targets stay until unload: sessions point at them. */
		.suppress_bind_attrs = true,
	},
};

static struct accmap_mmio *accmap_mmio_param;

static int accmap_mmio_from_param(struct accmap_device *adev)
{
	struct accmap_mmio *mmio;
	u64 base, size;
	char *p;
	int ret;

	if (!replay_mmio || !*replay_mmio)
		return 0;
	/* Numbers as for memparse(): 0x for hex, K/M suffixes. */
	base = memparse(replay_mmio, &p);
	if (p == replay_mmio || *p != ',')
		goto bad;
	size = memparse(p + 1, &p);
	if (*p || accmap_mmio_check_window(base, size))
		goto bad;

	mmio = kzalloc(sizeof(*mmio), GFP_KERNEL);
	if (!mmio)
		return -ENOMEM;
	mmio->base = base;
	mmio->size = size;
	mmio->dev = adev->dev;

	mmio->res = request_mem_region(base, size, "accmap-replay");
	if (!mmio->res) {
		pr_err("replay_mmio: %#llx+%#llx is in use\n", base, size);
		ret = -EBUSY;
		goto err_free;
	}
	mmio->regs = ioremap(base, size);
	if (!mmio->regs) {
		ret = -ENOMEM;
		goto err_release;
	}
	accmap_mmio_init_target(mmio, accmap_mmio_count);
	ret = accmap_replay_add_target(adev, &mmio->target);
	if (ret)
		goto err_unmap;
	accmap_mmio_count++;
	accmap_mmio_param = mmio;
	pr_info("replay target %s: %#llx+%#llx, GPU_ID %#x, no interrupts\n",
		mmio->name, base, size, mmio->target.gpu_id);
	return 0;

err_unmap:
	iounmap(mmio->regs);
err_release:
	release_mem_region(base, size);
err_free:
	kfree(mmio);
	return ret;
bad:
	pr_err("replay_mmio=%s: want <base>,<size>, page aligned, 16 KiB to 1 MiB\n",
	       replay_mmio);
	return -EINVAL;
}

static void accmap_mmio_param_destroy(void)
{
	struct accmap_mmio *mmio = accmap_mmio_param;

	if (!mmio)
		return;
	iounmap(mmio->regs);
	release_mem_region(mmio->base, mmio->size);
	mutex_destroy(&mmio->as_lock);
	mutex_destroy(&mmio->window_lock);
	kfree(mmio);
	accmap_mmio_param = NULL;
}

/**
 * accmap_mmio_targets_create() - add the register windows as targets
 * @adev: the device; its DMA device must be set up
 *
 * The module parameter's window first, then device-tree nodes as they
 * bind (at once for nodes present at load).
 *
 * Return: 0 or a negative errno.
 */
int accmap_mmio_targets_create(struct accmap_device *adev)
{
	int ret;

	accmap_mmio_adev = adev;
	accmap_mmio_count = 0;
	ret = accmap_mmio_from_param(adev);
	if (ret)
		return ret;
	ret = platform_driver_register(&accmap_mmio_driver);
	if (ret)
		accmap_mmio_param_destroy();
	return ret;
}

/**
 * accmap_mmio_targets_destroy() - remove the register windows
 * @adev: the device; no session is left
 */
void accmap_mmio_targets_destroy(struct accmap_device *adev)
{
	platform_driver_unregister(&accmap_mmio_driver);
	accmap_mmio_param_destroy();
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: shared virtual memory for replay sessions, internal interfaces.
 *
 * An SVM session's GPU address space mirrors a range of its creator's:
 * GPU VA == CPU VA.  The parts:
 *
 *   svm.c       the mirror: GPU entries made from CPU pages a backend
 *               found, dropped on invalidation; the MMU interrupt handler
 *               that services recoverable GPU faults; the SVM ioctl.  It
 *               calls the page-table builder, the target's ops and the
 *               backend, nothing of the mm.
 *   svm_attr.c  the per-range attributes (GPU read-only, no-exec,
 *               granule, preferred location), a sorted list of ranges.
 *   svm_hmm.c   the backend of real processes: an mmu_interval_notifier
 *               over the range and hmm_range_fault(); it asks devmem.c
 *               to migrate pages to the target's device memory and back
 *               first.  Built only where the kernel has HMM_MIRROR; KUnit
 *               uses a backend of its own.
 *
 * Locking, outermost first: the mm's mmap_lock (taken by the backend to
 * fault, and held by the mm around most invalidations) > svm->lock (a
 * mutex: the GPU entries of the range, @pages, the attribute ranges) >
 * the target's MMU lock (taken by the target's svm_flush, and by a model
 * around each access it makes).  Nothing is allocated with reclaim under
 * svm->lock: reclaim can call the notifier, which takes it.  Page-table
 * pages are made ahead (accmap_pgt_reserve()) and @pages entries stored
 * with GFP_NOWAIT, falling back to a reservation made outside the lock.
 * Migrations to and from device memory (devmem.c) run under the mmap_lock
 * and never under svm->lock: they call the notifier too.
 */
#ifndef _ACCMAP_SVM_H
#define _ACCMAP_SVM_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <uapi/linux/accmap.h>

struct accmap_devmem;
struct accmap_devmem_owner;
struct accmap_replay_session;
struct accmap_svm;
struct device;
struct page;
struct seq_file;

/**
 * struct accmap_svm_pfn - a CPU page a backend found for a GPU address
 * @page:  the page, or NULL if the address has none the GPU may use
 * @write: the CPU mapping allows writing
 * @order: the CPU maps the page inside a block of PAGE_SIZE << @order
 */
struct accmap_svm_pfn {
	struct page *page;
	bool write;
	u8 order;
};

/**
 * struct accmap_svm_backend - where the pages of a mirror come from
 * @fault:    find the pages of [@start, @end) (CPU page aligned) and
 *            install them with accmap_svm_install(); fault in the page
 *            holding @addr first, for writing if @write (other pages are
 *            taken as they are, if present); with @to_device, migrate
 *            the range to device memory first, as far as it goes.
 *            Pages of userfaultfd-armed VMAs are never faulted in.
 *            Returns 0, -EFAULT if the process's mappings do not allow
 *            the access (or the page is absent, or read-only for a
 *            write, in a userfaultfd-armed VMA), -ESRCH if its address
 *            space is gone, -EBUSY if it kept changing, -ENOMEM
 * @populate: fault in every page of [@start, @end) that a readable VMA
 *            holds (for writing where it is writable and @write) and
 *            install them; holes, pages that cannot be faulted in and
 *            absent pages of userfaultfd-armed VMAs are skipped, the
 *            other pages still installed.  First migrate the range
 *            to @location (ACCMAP_SVM_LOC_*), as far as it goes.  0,
 *            -ESRCH, -EINTR, -ENOMEM
 * @same_mm:  whether current is the process mirrored
 * @destroy:  stop calling back into the mirror and free the backend;
 *            may sleep until an invalidation in progress is done
 */
struct accmap_svm_backend {
	int (*fault)(struct accmap_svm *svm, u64 addr, bool write, u64 start,
		     u64 end, bool to_device);
	int (*populate)(struct accmap_svm *svm, u64 start, u64 end,
			bool write, u32 location);
	bool (*same_mm)(struct accmap_svm *svm);
	void (*destroy)(struct accmap_svm *svm);
};

/**
 * struct accmap_svm_range - attributes of a part of the SVM range
 * @start:    first byte
 * @end:      byte after the last
 * @attrs:    ACCMAP_SVM_ATTR_*
 * @granule:  log2 of the bytes a GPU fault may map
 * @location: preferred location, ACCMAP_SVM_LOC_*
 */
struct accmap_svm_range {
	u64 start;
	u64 end;
	u32 attrs;
	u32 granule;
	u32 location;
};

/**
 * struct accmap_svm - the mirror of one SVM session
 * @s:          the session
 * @start:      first mirrored byte (CPU and GPU address)
 * @end:        byte after the last
 * @lock:       protects the session's GPU entries inside [@start, @end),
 *              @pages, @ranges, @nr_ranges, @mapped, @huge and @device
 * @pages:      CPU page index (address >> PAGE_SHIFT) -> the struct page
 *              the GPU has entries for; mark 0 on pages mapped by a 2 MiB
 *              GPU block.  Readers (the model's accesses) use RCU and the
 *              target's MMU lock, see accmap_svm_copy()
 * @ranges:     attribute ranges, sorted, covering [@start, @end) exactly
 * @nr_ranges:  entries in @ranges
 * @mapped:     bytes with GPU entries
 * @huge:       of which in 2 MiB blocks
 * @device:     of which pointing into device memory
 * @faults:     GPU faults serviced
 * @fatal:      GPU faults the process's mappings did not allow
 * @invalidations: invalidations that dropped GPU entries
 * @pages_mapped: CPU pages given GPU entries, ever
 * @dma_dev:    the device entries are DMA-mapped for (a register window's),
 *              or NULL: the GPU reaches pages at their physical addresses
 * @dma:        with @dma_dev: the first CPU page index of each entry -> its
 *              DMA address, with bit 0 set if the GPU may write
 *              (xa_mk_value()); under @lock
 * @backend:    where pages come from
 * @bpriv:      the backend's state
 * @dm:         the target's device memory, or NULL
 * @owner:      with @dm, the session's device-memory counters
 */
struct accmap_svm {
	struct accmap_replay_session *s;
	u64 start;
	u64 end;
	struct mutex lock;	/* see above */
	struct xarray pages;
	struct accmap_svm_range *ranges;
	unsigned int nr_ranges;
	u64 mapped;
	u64 huge;
	u64 device;
	atomic64_t faults;
	atomic64_t fatal;
	atomic64_t invalidations;
	atomic64_t pages_mapped;
	struct device *dma_dev;
	struct xarray dma;
	const struct accmap_svm_backend *backend;
	void *bpriv;
	struct accmap_devmem *dm;
	struct accmap_devmem_owner *owner;
};

/* svm.c */
int accmap_svm_check_range(u64 start, u64 size, u32 va_bits);
struct accmap_svm *accmap_svm_create(struct accmap_replay_session *s,
				     u64 start, u64 size, struct mm_struct *mm);
struct accmap_svm *accmap_svm_create_with(struct accmap_replay_session *s,
					  u64 start, u64 size,
					  const struct accmap_svm_backend *be,
					  void *bpriv, struct mm_struct *mm);
int accmap_svm_restore_attr(struct accmap_svm *svm, u64 start, u64 size,
			    u32 attrs, u32 granule, u32 location);
void accmap_svm_destroy(struct accmap_svm *svm);
void accmap_svm_set_session(struct accmap_svm *svm, u32 id);
int accmap_svm_install(struct accmap_svm *svm, u64 start,
		       const struct accmap_svm_pfn *pfns, unsigned long npages,
		       bool (*stale)(void *arg), void *arg);
void accmap_svm_invalidate_locked(struct accmap_svm *svm, u64 start, u64 end);
bool accmap_svm_mmu_irq(struct accmap_replay_session *s);
int accmap_svm_service(struct accmap_svm *svm, u64 addr, bool write);
int accmap_svm_copy(struct accmap_svm *svm, u64 va, u64 pa, void *buf,
		    size_t len, bool write);
int accmap_svm_ioctl(struct accmap_svm *svm, struct accmap_svm_op *arg);
void accmap_svm_debugfs_row(struct seq_file *m, struct accmap_svm *svm);

/* svm_attr.c */
int accmap_svm_attr_init(struct accmap_svm *svm);
void accmap_svm_attr_fini(struct accmap_svm *svm);
const struct accmap_svm_range *accmap_svm_attr_find(struct accmap_svm *svm,
						    u64 addr);
struct accmap_svm_range *accmap_svm_attr_scratch(void);
int accmap_svm_attr_set(struct accmap_svm *svm, struct accmap_svm_range *out,
			u64 start, u64 end, u32 attrs, u32 granule,
			u32 location);

/* svm_hmm.c, or -EOPNOTSUPP without HMM_MIRROR */
#if IS_ENABLED(CONFIG_HMM_MIRROR) && IS_ENABLED(CONFIG_MMU_NOTIFIER)
int accmap_svm_hmm_attach(struct accmap_svm *svm, struct mm_struct *mm);
#else
static inline int accmap_svm_hmm_attach(struct accmap_svm *svm,
					struct mm_struct *mm)
{
	return -EOPNOTSUPP;
}
#endif

#endif /* _ACCMAP_SVM_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the HMM backend of an SVM mirror.
 *
 * The mirror follows its creator's address space through an
 * mmu_interval_notifier over the mirrored range, and finds pages with
 * hmm_range_fault(), the pattern of Documentation/mm/hmm.rst: read the
 * notifier's sequence, fault under the mmap_lock, then install under
 * svm->lock only if no invalidation came in between.  No page reference
 * is kept: the notifier is what keeps the GPU off a page that goes.
 *
 * Where the target has device memory, it first asks devmem.c to migrate
 * the range there or back, and has hmm_range_fault() report the device's
 * private pages as they are (dev_private_owner) instead of faulting them
 * back.
 *
 * It calls svm.c (accmap_svm_install(), accmap_svm_invalidate_locked()),
 * devmem.c and the mm; nothing else.
 */

#include <linux/errno.h>
#include <linux/hmm.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/userfaultfd_k.h>

#include "compat.h"
#include "devmem.h"
#include "replay.h"
#include "svm.h"

/* How long a fault keeps trying while the range keeps changing. */
#define SVM_HMM_TIMEOUT_MS	1000

/**
 * struct svm_hmm - the backend's state
 * @notifier: the interval notifier over the mirror
 * @svm:      the mirror
 * @mm:       the mirrored address space (the notifier holds it grabbed)
 */
struct svm_hmm {
	struct mmu_interval_notifier notifier;
	struct accmap_svm *svm;
	struct mm_struct *mm;
};

static struct svm_hmm *svm_hmm_of(struct accmap_svm *svm)
{
	return svm->bpriv;
}

static bool svm_hmm_invalidate(struct mmu_interval_notifier *mni,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	struct svm_hmm *h = container_of(mni, struct svm_hmm, notifier);
	struct accmap_svm *svm = h->svm;

	if (mmu_notifier_range_blockable(range))
		mutex_lock(&svm->lock);
	else if (!mutex_trylock(&svm->lock))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	accmap_svm_invalidate_locked(svm, range->start, range->end);
	mutex_unlock(&svm->lock);
	return true;
}

static const struct mmu_interval_notifier_ops svm_hmm_notifier_ops = {
	.invalidate = svm_hmm_invalidate,
};

struct svm_hmm_seq {
	struct svm_hmm *h;
	unsigned long seq;
};

/* Under svm->lock: whether the range changed since hmm_range_fault(). */
static bool svm_hmm_stale(void *arg)
{
	struct svm_hmm_seq *q = arg;

	return mmu_interval_read_retry(&q->h->notifier, q->seq);
}

/*
 * Under the mmap_lock: takes back the fault requests in @hmm_pfns of the
 * pages of [@start, @end) that a userfaultfd-armed VMA maps, so that they
 * are taken as they are: mapped if present, left out if not.  A fault
 * there is the userfaultfd's to resolve, and hmm_range_fault() cannot
 * wait for it: it gets SIGBUS while the userfaultfd is open, and once its
 * close() has begun, VM_FAULT_NOPAGE, which it retries without end while
 * the closer waits for the mmap_lock held here (6.1).  The flags cannot
 * change before hmm_range_fault() runs: registering and closing take the
 * mmap_lock for writing.
 */
static void svm_hmm_skip_uffd(struct mm_struct *mm, u64 start, u64 end,
			      unsigned long *hmm_pfns)
{
	struct vm_area_struct *vma;
	u64 a = start, vend, i;

	/* Not mmap_assert_locked(): on DEBUG_VM it calls dump_mm(), unexported. */
	lockdep_assert_held(&mm->mmap_lock);
	while (a < end) {
		vma = find_vma(mm, a);
		if (!vma || vma->vm_start >= end)
			break;
		a = max_t(u64, a, vma->vm_start);
		vend = min_t(u64, vma->vm_end, end);
		if (userfaultfd_armed(vma))
			for (i = a; i < vend; i += PAGE_SIZE)
				hmm_pfns[(i - start) >> PAGE_SHIFT] &=
					~(HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE);
		a = vend;
	}
}

/* Whether a page hmm_range_fault() found answers its request flags @req. */
static bool svm_hmm_meets(unsigned long req, unsigned long f)
{
	if (!(req & HMM_PFN_REQ_FAULT))
		return true;
	if (!(f & HMM_PFN_VALID) || f & HMM_PFN_ERROR)
		return false;
	return !(req & HMM_PFN_REQ_WRITE) || f & HMM_PFN_WRITE;
}

/*
 * Finds the pages of [@start, @end), faulting in those whose flags in
 * @req ask for it, and installs them.  Pages of userfaultfd-armed VMAs
 * are never faulted in (svm_hmm_skip_uffd()); with @strict, a page whose
 * request that leaves unanswered fails the run with -EFAULT, as a page
 * hmm_range_fault() cannot fault in does.
 */
static int svm_hmm_run(struct accmap_svm *svm, u64 start, u64 end,
		       unsigned long *hmm_pfns, unsigned long *req,
		       struct accmap_svm_pfn *pfns, bool to_device,
		       bool strict)
{
	unsigned long npages = (end - start) >> PAGE_SHIFT, i;
	unsigned long timeout = jiffies + msecs_to_jiffies(SVM_HMM_TIMEOUT_MS);
	struct svm_hmm *h = svm_hmm_of(svm);
	struct hmm_range range = {
		.notifier = &h->notifier,
		.start = start,
		.end = end,
		.hmm_pfns = hmm_pfns,
		.pfn_flags_mask = HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE,
		.dev_private_owner = accmap_devmem_pgmap_owner(svm->dm),
	};
	unsigned long stayed;
	struct svm_hmm_seq q = { .h = h };
	int ret;

	if (!mmget_not_zero(h->mm))
		return -ESRCH;
	for (;;) {
		if (time_after(jiffies, timeout)) {
			ret = -EBUSY;
			break;
		}
		memcpy(hmm_pfns, req, npages * sizeof(*hmm_pfns));
		range.notifier_seq = mmu_interval_read_begin(&h->notifier);
		mmap_read_lock(h->mm);
		svm_hmm_skip_uffd(h->mm, start, end, hmm_pfns);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(h->mm);
		if (ret == -EBUSY)
			continue;
		if (ret)
			break;

		stayed = 0;
		for (i = 0; i < npages; i++) {
			unsigned long f = hmm_pfns[i];

			if (strict && !svm_hmm_meets(req[i], f)) {
				ret = -EFAULT;
				break;
			}
			pfns[i].page = NULL;
			if (!(f & HMM_PFN_VALID) || f & HMM_PFN_ERROR)
				continue;
			pfns[i].page = hmm_pfn_to_page(f);
			pfns[i].write = f & HMM_PFN_WRITE;
			pfns[i].order = hmm_pfn_to_map_order(f);
			if (!accmap_devmem_owns(svm->dm, pfns[i].page))
				stayed++;
		}
		if (ret)
			break;
		q.seq = range.notifier_seq;
		ret = accmap_svm_install(svm, start, pfns, npages, svm_hmm_stale,
					 &q);
		if (ret != -EAGAIN)
			break;
	}
	/* What a migration to the device left in system memory. */
	if (!ret && to_device && svm->owner)
		atomic64_add(stayed, &svm->owner->not_migrated);
	mmput(h->mm);
	/* hmm_range_fault() says -EPERM for a write to a read-only VMA. */
	return ret == -EPERM ? -EFAULT : ret;
}

/* The arrays of one run over @npages pages. */
struct svm_hmm_arrays {
	unsigned long *hmm_pfns;
	unsigned long *req;
	struct accmap_svm_pfn *pfns;
};

static int svm_hmm_arrays_alloc(struct svm_hmm_arrays *a, unsigned long npages)
{
	a->hmm_pfns = kvcalloc(npages, sizeof(*a->hmm_pfns),
			       GFP_KERNEL | __GFP_NOWARN);
	a->req = kvcalloc(npages, sizeof(*a->req), GFP_KERNEL | __GFP_NOWARN);
	a->pfns = kvcalloc(npages, sizeof(*a->pfns), GFP_KERNEL | __GFP_NOWARN);
	if (a->hmm_pfns && a->req && a->pfns)
		return 0;
	kvfree(a->hmm_pfns);
	kvfree(a->req);
	kvfree(a->pfns);
	return -ENOMEM;
}

static void svm_hmm_arrays_free(struct svm_hmm_arrays *a)
{
	kvfree(a->hmm_pfns);
	kvfree(a->req);
	kvfree(a->pfns);
}

/*
 * Whether [@start, @end) has pages on the device now, by a snapshot of
 * the CPU's page tables (nothing faulted).  The migration walk splits huge
 * pages and invalidates the whole range, so it is only made when there is
 * something to bring back.  A page placed after the look is left where it
 * is, as if placed after the migration.
 */
static bool svm_hmm_on_device(struct svm_hmm *h, u64 start, u64 end,
			      unsigned long *hmm_pfns)
{
	struct accmap_svm *svm = h->svm;
	unsigned long npages = (end - start) >> PAGE_SHIFT, i;
	struct hmm_range range = {
		.notifier = &h->notifier,
		.start = start,
		.end = end,
		.hmm_pfns = hmm_pfns,
		.dev_private_owner = accmap_devmem_pgmap_owner(svm->dm),
	};
	int ret, tries = 0;

	do {
		memset(hmm_pfns, 0, npages * sizeof(*hmm_pfns));
		range.notifier_seq = mmu_interval_read_begin(&h->notifier);
		mmap_read_lock(h->mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(h->mm);
	} while (ret == -EBUSY && ++tries < 8);
	/* Could not look: walk, as before. */
	if (ret)
		return true;
	for (i = 0; i < npages; i++)
		if (hmm_pfns[i] & HMM_PFN_VALID &&
		    accmap_devmem_owns(svm->dm, hmm_pfn_to_page(hmm_pfns[i])))
			return true;
	return false;
}

/*
 * Migrates what it can of [@start, @end) to the device (@to_device) or
 * back, VMA by VMA.  Best effort: a page that does not move is still
 * right where it is, so errors only end the walk.
 */
static void svm_hmm_migrate(struct accmap_svm *svm, u64 start, u64 end,
			    bool to_device, unsigned long *hmm_pfns)
{
	struct svm_hmm *h = svm_hmm_of(svm);
	struct vm_area_struct *vma;
	u64 a = start;
	int ret = 0;

	if (!svm->dm || !mmget_not_zero(h->mm))
		return;
	if (!to_device && !svm_hmm_on_device(h, start, end, hmm_pfns)) {
		mmput(h->mm);
		return;
	}
	mmap_read_lock(h->mm);
	while (a < end && !ret) {
		u64 vend;

		vma = find_vma(h->mm, a);
		if (!vma || vma->vm_start >= end)
			break;
		a = max_t(u64, a, vma->vm_start);
		vend = min_t(u64, vma->vm_end, end);
		if (to_device && vma_is_anonymous(vma))
			ret = accmap_devmem_to_device(svm->dm, svm->owner, vma,
						      a, vend);
		else if (!to_device)
			ret = accmap_devmem_to_system(svm->dm, vma, a, vend);
		a = vend;
	}
	mmap_read_unlock(h->mm);
	mmput(h->mm);
}

static int svm_hmm_fault(struct accmap_svm *svm, u64 addr, bool write,
			 u64 start, u64 end, bool to_device)
{
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	struct svm_hmm_arrays a;
	int ret;

	ret = svm_hmm_arrays_alloc(&a, npages);
	if (ret)
		return ret;
	if (to_device)
		svm_hmm_migrate(svm, start, end, true, a.hmm_pfns);
	/* Only the faulting page is faulted in; the rest as they are. */
	a.req[(addr - start) >> PAGE_SHIFT] = HMM_PFN_REQ_FAULT |
					      (write ? HMM_PFN_REQ_WRITE : 0);
	ret = svm_hmm_run(svm, start, end, a.hmm_pfns, a.req, a.pfns,
			  to_device, true);
	svm_hmm_arrays_free(&a);
	return ret;
}

/*
 * Sets the request flags of the pages of [@start, @end) by VMA: fault in
 * what a readable VMA holds, for writing where it is writable and @write.
 */
static int svm_hmm_populate_req(struct svm_hmm *h, u64 start, u64 end,
				bool write, unsigned long *req)
{
	struct vm_area_struct *vma;
	u64 a = start;

	mmap_read_lock(h->mm);
	while (a < end) {
		u64 vend, i;
		unsigned long f;

		vma = find_vma(h->mm, a);
		if (!vma || vma->vm_start >= end)
			break;
		a = max_t(u64, a, vma->vm_start);
		vend = min_t(u64, vma->vm_end, end);
		f = 0;
		if ((vma->vm_flags & VM_READ) &&
		    !(vma->vm_flags & (VM_IO | VM_PFNMAP)))
			f = HMM_PFN_REQ_FAULT;
		if (f && write && (vma->vm_flags & VM_WRITE))
			f |= HMM_PFN_REQ_WRITE;
		for (i = a; i < vend; i += PAGE_SIZE)
			req[(i - start) >> PAGE_SHIFT] = f;
		a = vend;
	}
	mmap_read_unlock(h->mm);
	return 0;
}

/*
 * Runs [@start, @end) with the request flags @a->req, in pieces.
 * hmm_range_fault() fails a whole run with -EFAULT for one page it cannot
 * fault in (a file page past the end of the file, a VMA gone since the
 * flags were set) and maps none of the others.  So a piece that fails is
 * halved until the page alone fails and is left out; a piece that works
 * lets the next one grow again, so a bad page costs about twice
 * log2(pages) runs.
 */
static int svm_hmm_run_pieces(struct accmap_svm *svm, u64 start, u64 end,
			      struct svm_hmm_arrays *a, bool to_device)
{
	u64 at = start, len = end - start, n, i;
	int ret;

	while (at < end) {
		n = min(len, end - at);
		i = (at - start) >> PAGE_SHIFT;
		ret = svm_hmm_run(svm, at, at + n, a->hmm_pfns + i, a->req + i,
				  a->pfns + i, to_device, false);
		if (ret == -EFAULT && n > PAGE_SIZE) {
			len = max_t(u64, (n >> 1) & PAGE_MASK, PAGE_SIZE);
			continue;
		}
		/* One page, not to be had: the others still are. */
		if (ret && ret != -EFAULT)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		at += n;
		len = n << 1;
	}
	return 0;
}

static int svm_hmm_populate(struct accmap_svm *svm, u64 start, u64 end,
			    bool write, u32 location)
{
	bool to_device = location == ACCMAP_SVM_LOC_DEVICE;
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	struct svm_hmm *h = svm_hmm_of(svm);
	struct svm_hmm_arrays a;
	int ret;

	ret = svm_hmm_arrays_alloc(&a, npages);
	if (ret)
		return ret;
	if (!mmget_not_zero(h->mm)) {
		ret = -ESRCH;
		goto out;
	}
	ret = svm_hmm_populate_req(h, start, end, write, a.req);
	mmput(h->mm);
	if (!ret)
		svm_hmm_migrate(svm, start, end, to_device, a.hmm_pfns);
	if (!ret)
		ret = svm_hmm_run_pieces(svm, start, end, &a, to_device);
out:
	svm_hmm_arrays_free(&a);
	return ret;
}

static bool svm_hmm_same_mm(struct accmap_svm *svm)
{
	return current->mm == svm_hmm_of(svm)->mm;
}

static void svm_hmm_destroy(struct accmap_svm *svm)
{
	struct svm_hmm *h = svm_hmm_of(svm);

	mmu_interval_notifier_remove(&h->notifier);
	kfree(h);
	svm->bpriv = NULL;
}

static const struct accmap_svm_backend svm_hmm_backend = {
	.fault = svm_hmm_fault,
	.populate = svm_hmm_populate,
	.same_mm = svm_hmm_same_mm,
	.destroy = svm_hmm_destroy,
};

/**
 * accmap_svm_hmm_attach() - mirror a process through HMM
 * @svm: the mirror, its range set
 * @mm: the address space: the caller's, or a restored process's (the
 *      notifier keeps its own hold on it)
 *
 * Return: 0 with @svm's backend set, -ESRCH without an address space (a
 * kernel thread), or -ENOMEM.
 */
int accmap_svm_hmm_attach(struct accmap_svm *svm, struct mm_struct *mm)
{
	struct svm_hmm *h;
	int ret;

	if (!mm)
		return -ESRCH;
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->svm = svm;
	h->mm = mm;
	ret = mmu_interval_notifier_insert(&h->notifier, h->mm, svm->start,
					   svm->end - svm->start,
					   &svm_hmm_notifier_ops);
	if (ret) {
		kfree(h);
		return ret;
	}
	svm->backend = &svm_hmm_backend;
	svm->bpriv = h;
	return 0;
}

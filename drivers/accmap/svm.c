// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the mirror of an SVM session, and its GPU fault service.
 *
 * A session made with ACCMAP_REPLAY_SETUP_SVM gets a struct accmap_svm
 * over [start, end) of its creator's address space.  The GPU entries of
 * that range are made only here: when the target reports a recoverable
 * MMU fault in it (accmap_svm_mmu_irq(), the MMU interrupt handler), or on
 * a prefetch; always from CPU pages a backend found, never pinned; and
 * they are dropped whenever the backend reports that the CPU's mapping of
 * them changed (accmap_svm_invalidate_locked()), the target's TLB flushed
 * before the pages may go.  svm.h has the locking rules.
 *
 * Addresses.  A model reaches pages at their physical addresses.  A real
 * GPU (a target with a DMA device) gets each entry's pages DMA-mapped for
 * its device, read-only where the entry is (so an IOMMU refuses writes
 * too); the mapping goes after the flush that follows the entry's drop.
 * If the GPU never confirms that flush, the pages it may still reach are
 * kept (a reference taken, never given back) and stay mapped: no page a
 * GPU may touch returns to the allocator.
 *
 * The fault protocol is Mali's: the MMU latches the fault's status and
 * address, raises the address space's bit in MMU_IRQ_RAWSTAT and stalls
 * the job; the handler reads them, services the fault, clears the bit and
 * resumes the address space with AS_COMMAND UNLOCK.  A fault it cannot
 * service is left raised: the job stays stalled and the run reports the
 * MMU fault, as for any session.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "compat.h"
#include "devmem.h"
#include "mali_regs.h"
#include "replay.h"
#include "svm.h"

/* CPU pages in a 2 MiB GPU block. */
#define SVM_BLOCK_PAGES		(SZ_2M >> PAGE_SHIFT)

/**
 * accmap_svm_check_range() - whether a range can be mirrored
 * @start:   first byte
 * @size:    bytes
 * @va_bits: the session's GPU address bits
 *
 * Return: 0, or -EINVAL if the range is empty, not aligned to the CPU's
 * page size, wraps, or ends above 2^@va_bits or the caller's user space.
 */
int accmap_svm_check_range(u64 start, u64 size, u32 va_bits)
{
	u64 end;

	if (!size || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(size) ||
	    check_add_overflow(start, size, &end))
		return -EINVAL;
	if (end > BIT_ULL(va_bits) || end > TASK_SIZE)
		return -EINVAL;
	return 0;
}

/* An entry's DMA mapping (@entry, from @dma) goes; @block: 2 MiB. */
static void svm_dma_unmap(struct accmap_svm *svm, void *entry, bool block)
{
	unsigned long v = xa_to_value(entry);

	dma_unmap_page_attrs(svm->dma_dev, v & ~1UL, block ? SZ_2M : PAGE_SIZE,
			     v & 1 ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE,
			     DMA_ATTR_SKIP_CPU_SYNC);
}

/**
 * accmap_svm_create_with() - a mirror with a backend of the caller's
 * @s:     the session; its tables exist, and are switched to tables made
 *         ahead (accmap_pgt_reserve_only())
 * @start: first byte, checked with accmap_svm_check_range()
 * @size:  bytes
 * @be:    the backend, or NULL to attach the HMM backend of @mm
 * @bpriv: the backend's state (with @be)
 * @mm:    without @be: the address space to mirror (current's, or a
 *         restored process's), or NULL: none, -ESRCH
 *
 * The target must offer svm_enable.  The caller sets @s->svm and
 * @s->mmu_irq.
 *
 * Return: the mirror, ERR_PTR(-EOPNOTSUPP) if the target or the kernel
 * cannot mirror, or ERR_PTR(-ENOMEM).
 */
struct accmap_svm *accmap_svm_create_with(struct accmap_replay_session *s,
					  u64 start, u64 size,
					  const struct accmap_svm_backend *be,
					  void *bpriv, struct mm_struct *mm)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;
	struct accmap_svm *svm;
	int ret;

	if (!ops->svm_enable || !ops->svm_flush)
		return ERR_PTR(-EOPNOTSUPP);
	svm = kzalloc(sizeof(*svm), GFP_KERNEL_ACCOUNT);
	if (!svm)
		return ERR_PTR(-ENOMEM);
	svm->s = s;
	svm->start = start;
	svm->end = start + size;
	svm->dma_dev = ops->dma_dev ? ops->dma_dev(s) : NULL;
	mutex_init(&svm->lock);
	xa_init_flags(&svm->pages, XA_FLAGS_ACCOUNT);
	xa_init_flags(&svm->dma, XA_FLAGS_ACCOUNT);
	atomic64_set(&svm->faults, 0);
	atomic64_set(&svm->fatal, 0);
	atomic64_set(&svm->invalidations, 0);
	atomic64_set(&svm->pages_mapped, 0);
	ret = accmap_svm_attr_init(svm);
	if (ret)
		goto err_free;
	svm->dm = s->target->devmem;
	svm->owner = accmap_devmem_owner_new(svm->dm, 0);
	if (IS_ERR(svm->owner)) {
		ret = PTR_ERR(svm->owner);
		goto err_attr;
	}

	accmap_pgt_reserve_only(s->pgt);
	if (be) {
		svm->backend = be;
		svm->bpriv = bpriv;
	} else {
		ret = accmap_svm_hmm_attach(svm, mm);
		if (ret)
			goto err_attr;
	}
	ret = ops->svm_enable(s);
	if (ret)
		goto err_backend;
	return svm;

err_backend:
	svm->backend->destroy(svm);
err_attr:
	accmap_devmem_owner_put(IS_ERR(svm->owner) ? NULL : svm->owner);
	accmap_svm_attr_fini(svm);
err_free:
	xa_destroy(&svm->dma);
	xa_destroy(&svm->pages);
	mutex_destroy(&svm->lock);
	kfree(svm);
	return ERR_PTR(ret);
}

/**
 * accmap_svm_create() - mirror a process over a range through HMM
 * @s:     the session
 * @start: first byte, checked with accmap_svm_check_range()
 * @size:  bytes
 * @mm:    the address space: the caller's, or a restored process's
 *
 * Return: as accmap_svm_create_with().
 */
struct accmap_svm *accmap_svm_create(struct accmap_replay_session *s,
				     u64 start, u64 size, struct mm_struct *mm)
{
	return accmap_svm_create_with(s, start, size, NULL, NULL, mm);
}

/**
 * accmap_svm_destroy() - end a mirror
 * @svm: the mirror, or NULL
 *
 * Called when the session goes, after its target stopped and before its
 * tables are freed: the backend calls back no more once this returns.
 */
void accmap_svm_destroy(struct accmap_svm *svm)
{
	unsigned long idx;
	void *entry;

	if (!svm)
		return;
	svm->backend->destroy(svm);
	/* The target stopped: the GPU reaches none of the pages now. */
	xa_for_each(&svm->dma, idx, entry)
		svm_dma_unmap(svm, entry,
			      xa_get_mark(&svm->pages, idx, XA_MARK_0));
	xa_destroy(&svm->dma);
	xa_destroy(&svm->pages);
	/* Pages it placed keep their counters while the process maps them. */
	accmap_devmem_owner_put(svm->owner);
	accmap_svm_attr_fini(svm);
	mutex_destroy(&svm->lock);
	kfree(svm);
}

/**
 * accmap_svm_set_session() - the session's id, once it has one
 * @svm: the mirror
 * @id:  the id just published
 *
 * The mirror is made before the id is allocated; its device-memory
 * counters show the id in debugfs.
 */
void accmap_svm_set_session(struct accmap_svm *svm, u32 id)
{
	if (svm->owner)
		WRITE_ONCE(svm->owner->session, id);
}

/* The GPU permissions of a page the CPU maps with @write. */
static u32 svm_perm(const struct accmap_svm_range *r, bool write)
{
	u32 perm = ACCMAP_PGT_PERM_READ;

	if (write && !(r->attrs & ACCMAP_SVM_ATTR_GPU_RO))
		perm |= ACCMAP_PGT_PERM_WRITE;
	if (!(r->attrs & ACCMAP_SVM_ATTR_NO_EXEC))
		perm |= ACCMAP_PGT_PERM_EXEC;
	return perm;
}

/*
 * Wait until the target no longer uses translations of dropped entries:
 * after this the pages may be freed.  0, or -ETIMEDOUT: they may not.
 */
static int svm_flush(struct accmap_svm *svm)
{
	return svm->s->target->ops->svm_flush(svm->s);
}

/*
 * Drops the GPU entries of [@start, @end) (CPU page aligned, inside the
 * mirror), and of the whole of any 2 MiB block they cut into, and waits
 * for the target.  The pages leave the index only after that wait: an
 * access that translated through an old entry just before it went still
 * finds its page (accmap_svm_copy()).  Returns whether any entry went.
 */
static bool svm_drop(struct accmap_svm *svm, u64 start, u64 end)
{
	unsigned long idx, last, kept = 0;
	struct page *page;
	bool flushed;
	u64 bytes;

	lockdep_assert_held(&svm->lock);
	if (xa_get_mark(&svm->pages, start >> PAGE_SHIFT, XA_MARK_0))
		start = max(round_down(start, SZ_2M), svm->start);
	if (xa_get_mark(&svm->pages, (end - 1) >> PAGE_SHIFT, XA_MARK_0))
		end = min(round_up(end, SZ_2M), svm->end);

	idx = start >> PAGE_SHIFT;
	last = (end - 1) >> PAGE_SHIFT;
	if (!xa_find(&svm->pages, &idx, last, XA_PRESENT))
		return false;

	bytes = accmap_pgt_unmap(svm->s->pgt, start, end - start);
	svm->mapped -= min(bytes, svm->mapped);
	flushed = !svm_flush(svm);
	/* Tables the unmap emptied go too, unless the GPU may still walk them. */
	if (flushed)
		accmap_pgt_reclaim(svm->s->pgt);
	idx = start >> PAGE_SHIFT;
	xa_for_each_range(&svm->pages, idx, page, start >> PAGE_SHIFT, last) {
		bool block = xa_get_mark(&svm->pages, idx, XA_MARK_0);
		void *entry = xa_erase(&svm->dma, idx);

		if (block)
			svm->huge -= min_t(u64, PAGE_SIZE, svm->huge);
		if (accmap_devmem_owns(svm->dm, page))
			svm->device -= min_t(u64, PAGE_SIZE, svm->device);
		if (entry && flushed)
			svm_dma_unmap(svm, entry, block);
		if (!flushed) {
			/* The CPU still maps it: it has a reference to add to. */
			get_page(page);
			kept++;
		}
		xa_erase(&svm->pages, idx);
	}
	if (kept)
		pr_warn_ratelimited("%s: the GPU did not confirm a TLB flush: keeping %lu pages of %s[%d] it may still reach\n",
				    svm->s->target->name, kept, svm->s->comm,
				    svm->s->pid);
	return true;
}

/**
 * accmap_svm_invalidate_locked() - the CPU mapping of a range changed
 * @svm:   the mirror; svm->lock held
 * @start: first byte (any, clipped to the mirror)
 * @end:   byte after the last (any, up to U64_MAX, clipped to the mirror)
 *
 * Drops the GPU entries of the range (and whole 2 MiB blocks it cuts
 * into) and flushes the target, waiting for it: when this returns the GPU
 * reaches none of the range's old pages.
 */
void accmap_svm_invalidate_locked(struct accmap_svm *svm, u64 start, u64 end)
{
	lockdep_assert_held(&svm->lock);
	/* Clip first: an exiting mm invalidates up to ULONG_MAX. */
	start = max(round_down(start, PAGE_SIZE), svm->start);
	end = round_up(min(end, svm->end), PAGE_SIZE);
	if (start >= end)
		return;
	if (svm_drop(svm, start, end))
		atomic64_inc(&svm->invalidations);
}

/*
 * Where the GPU finds a page's data without a mapping of its own: device
 * memory says where it is for the GPU; a model reads system pages at their
 * physical address.
 */
static u64 svm_page_addr(struct accmap_svm *svm, struct page *page)
{
	if (accmap_devmem_owns(svm->dm, page))
		return accmap_devmem_addr(svm->dm, page);
	return page_to_phys(page);
}

/*
 * How many of the pages from @i on one GPU entry can map: a whole 2 MiB
 * block where the CPU maps them as one physically contiguous huge page
 * with the same rights and attributes, else one page.
 */
static unsigned long svm_run(const struct accmap_svm_range *r, u64 va,
			     const struct accmap_svm_pfn *pfns,
			     unsigned long i, unsigned long npages)
{
	unsigned long pfn, j;

	if (SVM_BLOCK_PAGES < 2 || !IS_ALIGNED(va, SZ_2M) ||
	    npages - i < SVM_BLOCK_PAGES || va + SZ_2M > r->end ||
	    (PAGE_SIZE << pfns[i].order) < SZ_2M)
		return 1;
	pfn = page_to_pfn(pfns[i].page);
	if (!IS_ALIGNED(pfn, SVM_BLOCK_PAGES))
		return 1;
	for (j = 1; j < SVM_BLOCK_PAGES; j++) {
		const struct accmap_svm_pfn *p = &pfns[i + j];

		if (!p->page || page_to_pfn(p->page) != pfn + j ||
		    p->write != pfns[i].write)
			return 1;
	}
	return SVM_BLOCK_PAGES;
}

/*
 * Where a store under svm->lock found no memory: the caller reserves the
 * slot outside the lock and tries again.  @xa NULL: nothing to reserve.
 */
struct svm_room {
	struct xarray *xa;
	unsigned long idx;
};

/*
 * Records the pages of one entry in @pages, without allocating (under
 * svm->lock).  On -ENOMEM the slot at fault is in *@room.
 */
static int svm_index(struct accmap_svm *svm, u64 va,
		     const struct accmap_svm_pfn *pfns, unsigned long n,
		     struct svm_room *room)
{
	unsigned long j, idx = va >> PAGE_SHIFT;
	int ret;

	for (j = 0; j < n; j++) {
		ret = xa_err(xa_store(&svm->pages, idx + j, pfns[j].page,
				      GFP_NOWAIT | __GFP_NOWARN));
		if (ret) {
			room->xa = &svm->pages;
			room->idx = idx + j;
			while (j--)
				xa_erase(&svm->pages, idx + j);
			return ret;
		}
		if (n > 1)
			xa_set_mark(&svm->pages, idx + j, XA_MARK_0);
	}
	return 0;
}

/*
 * The device address of an entry of @size bytes from @page at @va: for a
 * device page, where its device memory is for the GPU (mapped whole,
 * once); else the physical address for a model, or a DMA mapping for the
 * target's device, recorded in @dma at the entry's first page.
 */
static int svm_dma_map(struct accmap_svm *svm, u64 va, struct page *page,
		       u64 size, u32 perm, u64 *addr, struct svm_room *room)
{
	bool write = perm & ACCMAP_PGT_PERM_WRITE;
	unsigned long idx = va >> PAGE_SHIFT;
	enum dma_data_direction dir;
	dma_addr_t dma;
	int ret;

	if (!svm->dma_dev || accmap_devmem_owns(svm->dm, page)) {
		*addr = svm_page_addr(svm, page);
		return 0;
	}
	dir = write ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	dma = dma_map_page_attrs(svm->dma_dev, page, 0, size, dir,
				 DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(svm->dma_dev, dma))
		return -ENOMEM;
	/* Page aligned: bit 0 says whether the mapping lets the GPU write. */
	ret = xa_err(xa_store(&svm->dma, idx, xa_mk_value(dma | write),
			      GFP_NOWAIT | __GFP_NOWARN));
	if (ret) {
		dma_unmap_page_attrs(svm->dma_dev, dma, size, dir,
				     DMA_ATTR_SKIP_CPU_SYNC);
		room->xa = &svm->dma;
		room->idx = idx;
		return ret;
	}
	*addr = dma;
	return 0;
}

/* Maps one entry of @n pages at @va: the old entries there go first. */
static int svm_map(struct accmap_svm *svm, u64 va,
		   const struct accmap_svm_pfn *pfns, unsigned long n,
		   u32 perm, struct svm_room *room)
{
	u64 size = (u64)n << PAGE_SHIFT, addr;
	unsigned long j;
	void *entry;
	int ret;

	svm_drop(svm, va, va + size);
	ret = svm_index(svm, va, pfns, n, room);
	if (ret)
		return ret;
	ret = svm_dma_map(svm, va, pfns[0].page, size, perm, &addr, room);
	if (ret)
		goto err_index;
	ret = accmap_pgt_map(svm->s->pgt, va, addr, size, perm, 0);
	if (ret) {
		/* Nothing is mapped: the GPU never had the address. */
		entry = xa_erase(&svm->dma, va >> PAGE_SHIFT);
		if (entry)
			svm_dma_unmap(svm, entry, n > 1);
		room->xa = NULL;
		goto err_index;
	}
	svm->mapped += size;
	if (n > 1)
		svm->huge += size;
	if (accmap_devmem_owns(svm->dm, pfns[0].page)) {
		svm->device += size;
		accmap_devmem_touch(svm->dm, pfns[0].page);
	}
	atomic64_add(n, &svm->pages_mapped);
	return 0;

err_index:
	for (j = 0; j < n; j++)
		xa_erase(&svm->pages, (va >> PAGE_SHIFT) + j);
	return ret;
}

/**
 * accmap_svm_install() - give CPU pages GPU entries at their addresses
 * @svm:    the mirror
 * @start:  address of @pfns[0], CPU page aligned, inside the mirror
 * @pfns:   what the backend found, one per CPU page
 * @npages: entries in @pfns; [@start, + @npages pages) inside the mirror
 * @stale:  optional: called under svm->lock, true if the CPU mapping may
 *          have changed since the backend looked (then nothing is done)
 * @arg:    @stale's argument
 *
 * Pages without a struct page are skipped.  Every entry made replaces
 * what was there.  Table pages are made ahead, outside svm->lock.
 *
 * Return: 0; -EAGAIN if @stale said so (look again); -ENOMEM.
 */
int accmap_svm_install(struct accmap_svm *svm, u64 start,
		       const struct accmap_svm_pfn *pfns, unsigned long npages,
		       bool (*stale)(void *arg), void *arg)
{
	struct accmap_pgt *pgt = svm->s->pgt;
	struct svm_room room = { };
	unsigned long i = 0, n, tables;
	int ret, tries = 0;

	tables = min_t(unsigned long, ACCMAP_PGT_SPARE_MAX,
		       accmap_pgt_tables_needed(start, (u64)npages << PAGE_SHIFT));
again:
	ret = accmap_pgt_reserve(pgt, tables);
	if (ret)
		return ret;
	mutex_lock(&svm->lock);
	if (stale && stale(arg)) {
		ret = -EAGAIN;
		goto out;
	}
	for (; i < npages; i += n) {
		u64 va = start + ((u64)i << PAGE_SHIFT);
		const struct accmap_svm_range *r;

		n = 1;
		if (!pfns[i].page)
			continue;
		r = accmap_svm_attr_find(svm, va);
		if (!r)
			continue;
		n = svm_run(r, va, pfns, i, npages);
		ret = svm_map(svm, va, pfns + i, n,
			      svm_perm(r, pfns[i].write), &room);
		if (ret)
			break;
	}
out:
	mutex_unlock(&svm->lock);
	if (ret != -ENOMEM || tries++ >= 2)
		return ret;
	/* Make the room outside the lock, then go on where it stopped. */
	if (room.xa && xa_reserve(room.xa, room.idx, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	room.xa = NULL;
	goto again;
}

/**
 * accmap_svm_service() - service a GPU fault at @addr
 * @svm:   the mirror
 * @addr:  the faulting GPU (= CPU) address
 * @write: the access was a write
 *
 * Maps the granule around @addr (clipped to its attribute range): the
 * faulting page faulted in, the others as the CPU has them.  Where the
 * range prefers device memory, the granule migrates there first.
 *
 * Return: 0 if the access may be retried; -EFAULT if @addr is outside the
 * mirror, -EACCES for a write the attributes forbid, or the backend's
 * error (the fault is then fatal).
 */
int accmap_svm_service(struct accmap_svm *svm, u64 addr, bool write)
{
	const struct accmap_svm_range *r;
	u64 start, end, gsize;
	bool to_device;

	if (addr < svm->start || addr >= svm->end)
		return -EFAULT;
	mutex_lock(&svm->lock);
	r = accmap_svm_attr_find(svm, addr);
	if (!r || (write && r->attrs & ACCMAP_SVM_ATTR_GPU_RO)) {
		mutex_unlock(&svm->lock);
		return -EACCES;
	}
	gsize = BIT_ULL(max_t(u32, r->granule, PAGE_SHIFT));
	start = max(round_down(addr, gsize), r->start);
	end = min(round_down(addr, gsize) + gsize, r->end);
	to_device = accmap_devmem_fault_migrates(r->location, svm->dm);
	mutex_unlock(&svm->lock);

	return svm->backend->fault(svm, addr & PAGE_MASK, write, start, end,
				   to_device);
}

/**
 * accmap_svm_mmu_irq() - the MMU interrupt handler of an SVM session
 * @s: the session
 *
 * Called by a target when it raised a recoverable MMU fault on the
 * session's address space, in a context that may sleep, with none of the
 * target's locks held.  Reads the fault from the registers; a translation
 * or permission fault inside the mirror that the process's mappings allow
 * is serviced, the interrupt cleared and the address space unlocked, so
 * the job resumes.  Any other fault is left pending for the run to report.
 *
 * Return: true if the fault was serviced and the address space resumed.
 */
bool accmap_svm_mmu_irq(struct accmap_replay_session *s)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;
	u32 bit = MALI_MMU_IRQ_FAULT(s->as), status, type, access;
	u32 base = MALI_AS_BASE(s->as);
	struct accmap_svm *svm = s->svm;
	u64 addr;
	int ret;

	if (!svm || !(ops->read32(s, MALI_MMU_IRQ_RAWSTAT) & bit))
		return false;
	status = ops->read32(s, base + MALI_AS_FAULTSTATUS);
	addr = ops->read32(s, base + MALI_AS_FAULTADDRESS_LO) |
	       (u64)ops->read32(s, base + MALI_AS_FAULTADDRESS_HI) << 32;
	type = status & 0xff;
	access = (status >> MALI_FAULT_ACCESS_SHIFT) & 3;

	if ((type & ~7U) != MALI_FAULT_TRANSLATION(0) &&
	    (type & ~7U) != MALI_FAULT_PERMISSION(0)) {
		atomic64_inc(&svm->fatal);
		return false;
	}
	ret = accmap_svm_service(svm, addr, access == MALI_FAULT_ACCESS_WRITE);
	if (ret) {
		atomic64_inc(&svm->fatal);
		return false;
	}
	atomic64_inc(&svm->faults);
	ops->write32(s, MALI_MMU_IRQ_CLEAR, bit);
	ops->write32(s, base + MALI_AS_COMMAND, MALI_AS_CMD_UNLOCK);
	return true;
}

/**
 * accmap_svm_copy() - a model's access to mirrored memory
 * @svm:   the mirror
 * @va:    the GPU address accessed
 * @pa:    the device address its entry translated to
 * @buf:   the model's buffer
 * @len:   bytes, a multiple of 4, not crossing a CPU page
 * @write: copy @buf to memory (else memory to @buf)
 *
 * Called by the model with its MMU lock held, the lock the target's
 * svm_flush waits for: so the page cannot go while it is copied.  The
 * page must be the one the mirror mapped at @va, at @pa: a device page
 * is reached through the device memory's kernel mapping.
 *
 * Return: 0, or -EFAULT if @va has no mirrored page there (the model
 * then reports a bus fault).
 */
int accmap_svm_copy(struct accmap_svm *svm, u64 va, u64 pa, void *buf,
		    size_t len, bool write)
{
	size_t off = offset_in_page(va), i;
	struct page *page;
	u32 *b = buf, *k;
	void *kva;
	bool dev;

	if (va < svm->start || va >= svm->end || off + len > PAGE_SIZE ||
	    !IS_ALIGNED(off | len, sizeof(u32)))
		return -EFAULT;
	page = xa_load(&svm->pages, va >> PAGE_SHIFT);
	if (!page || svm_page_addr(svm, page) + off != pa)
		return -EFAULT;
	dev = accmap_devmem_owns(svm->dm, page);
	kva = dev ? accmap_devmem_kmap(svm->dm, page) : kmap_local_page(page);
	k = kva + off;
	for (i = 0; i < len / sizeof(u32); i++) {
		if (write)
			WRITE_ONCE(k[i], b[i]);
		else
			b[i] = READ_ONCE(k[i]);
	}
	if (dev)
		accmap_devmem_kunmap(svm->dm, kva);
	else
		kunmap_local(kva);
	return 0;
}

/* Checks a range of the mirror given to ACCMAP_IOC_SVM. */
static int svm_check_subrange(struct accmap_svm *svm, u64 start, u64 size)
{
	u64 end;

	if (!size || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(size) ||
	    check_add_overflow(start, size, &end) || start < svm->start ||
	    end > svm->end)
		return -EINVAL;
	return 0;
}

/* A location: -EINVAL if unknown, -EOPNOTSUPP if the target has none. */
static int svm_check_location(struct accmap_svm *svm, u32 location)
{
	if (location == ACCMAP_SVM_LOC_SYSTEM)
		return 0;
	if (location != ACCMAP_SVM_LOC_DEVICE)
		return -EINVAL;
	return svm->dm ? 0 : -EOPNOTSUPP;
}

static int svm_set_attr(struct accmap_svm *svm, struct accmap_svm_op *arg)
{
	struct accmap_svm_range *scratch;
	u32 granule = arg->granule;
	int ret;

	if (arg->attrs & ~ACCMAP_SVM_ATTR_VALID)
		return -EINVAL;
	ret = svm_check_location(svm, arg->location);
	if (ret)
		return ret;
	if (!granule)
		granule = ACCMAP_SVM_GRANULE_DEFAULT;
	if (granule < ACCMAP_SVM_GRANULE_MIN || granule > ACCMAP_SVM_GRANULE_MAX)
		return -EINVAL;
	scratch = accmap_svm_attr_scratch();
	if (!scratch)
		return -ENOMEM;
	mutex_lock(&svm->lock);
	ret = accmap_svm_attr_set(svm, scratch, arg->start,
				  arg->start + arg->size, arg->attrs, granule,
				  arg->location);
	/* Entries made under the old attributes go: they refault. */
	if (!ret)
		svm_drop(svm, arg->start, arg->start + arg->size);
	mutex_unlock(&svm->lock);
	kfree(scratch);
	return ret;
}

/* Prefetch in steps this large: one step's tables fit the spares. */
#define SVM_PREFETCH_STEP	SZ_2M

static int svm_prefetch(struct accmap_svm *svm, struct accmap_svm_op *arg)
{
	u64 a = arg->start, end = arg->start + arg->size;
	int ret;

	if (arg->attrs || arg->granule)
		return -EINVAL;
	ret = svm_check_location(svm, arg->location);
	if (ret)
		return ret;
	while (a < end) {
		u64 next = min(round_down(a, SVM_PREFETCH_STEP) +
			       SVM_PREFETCH_STEP, end);

		ret = svm->backend->populate(svm, a, next, true, arg->location);
		if (ret)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		a = next;
	}
	return 0;
}

/**
 * accmap_svm_restore_attr() - set a checkpointed attribute range again
 * @svm: the mirror of a session being restored
 * @start: as SET_ATTR's
 * @size: as SET_ATTR's
 * @attrs: as SET_ATTR's
 * @granule: as SET_ATTR's
 * @location: as SET_ATTR's
 *
 * SET_ATTR without its same-process check: the restore runs in CRIU.
 *
 * Return: 0 or an errno as SET_ATTR's.
 */
int accmap_svm_restore_attr(struct accmap_svm *svm, u64 start, u64 size,
			    u32 attrs, u32 granule, u32 location)
{
	struct accmap_svm_op op = {
		.op = ACCMAP_SVM_OP_SET_ATTR,
		.start = start,
		.size = size,
		.attrs = attrs,
		.granule = granule,
		.location = location,
	};
	int ret;

	ret = svm_check_subrange(svm, start, size);
	return ret ? ret : svm_set_attr(svm, &op);
}

/**
 * accmap_svm_ioctl() - ACCMAP_IOC_SVM on a session's mirror
 * @svm: the mirror
 * @arg: the argument, in kernel memory; the counters are filled in
 *
 * Return: 0 or a negative errno as documented for ACCMAP_IOC_SVM.
 */
int accmap_svm_ioctl(struct accmap_svm *svm, struct accmap_svm_op *arg)
{
	int ret;

	if (arg->flags)
		return -EINVAL;
	if (!svm->backend->same_mm(svm))
		return -EPERM;
	switch (arg->op) {
	case ACCMAP_SVM_OP_SET_ATTR:
		ret = svm_check_subrange(svm, arg->start, arg->size);
		if (!ret)
			ret = svm_set_attr(svm, arg);
		break;
	case ACCMAP_SVM_OP_PREFETCH:
		ret = svm_check_subrange(svm, arg->start, arg->size);
		if (!ret)
			ret = svm_prefetch(svm, arg);
		break;
	case ACCMAP_SVM_OP_QUERY:
		ret = arg->start || arg->size || arg->attrs || arg->granule ||
		      arg->location ? -EINVAL : 0;
		break;
	default:
		ret = -EINVAL;
		break;
	}

	arg->faults = atomic64_read(&svm->faults);
	arg->fatal_faults = atomic64_read(&svm->fatal);
	arg->invalidations = atomic64_read(&svm->invalidations);
	arg->pages_mapped = atomic64_read(&svm->pages_mapped);
	if (svm->owner) {
		struct accmap_devmem_owner *o = svm->owner;

		arg->device_bytes = (u64)atomic64_read(&o->on_device) << PAGE_SHIFT;
		arg->to_device = atomic64_read(&o->to_device);
		arg->to_system = atomic64_read(&o->to_system);
		arg->cpu_faults = atomic64_read(&o->cpu_faults);
		arg->evictions = atomic64_read(&o->evictions);
		arg->not_migrated = atomic64_read(&o->not_migrated);
	}
	mutex_lock(&svm->lock);
	arg->mapped_bytes = svm->mapped;
	arg->huge_bytes = svm->huge;
	mutex_unlock(&svm->lock);
	return ret;
}

/**
 * accmap_svm_debugfs_row() - a session's row of the debugfs file "svm"
 * @m:   the file
 * @svm: the session's mirror
 *
 * Columns after pid, comm and session: start (hex), size, mapped, huge,
 * faults, fatal, invalidations, pages_mapped, device (bytes of GPU
 * entries that point into device memory).
 */
void accmap_svm_debugfs_row(struct seq_file *m, struct accmap_svm *svm)
{
	u64 mapped, huge, device;

	mutex_lock(&svm->lock);
	mapped = svm->mapped;
	huge = svm->huge;
	device = svm->device;
	mutex_unlock(&svm->lock);
	seq_printf(m, "\t0x%llx\t%llu\t%llu\t%llu\t%lld\t%lld\t%lld\t%lld\t%llu\n",
		   svm->start, svm->end - svm->start, mapped, huge,
		   (long long)atomic64_read(&svm->faults),
		   (long long)atomic64_read(&svm->fatal),
		   (long long)atomic64_read(&svm->invalidations),
		   (long long)atomic64_read(&svm->pages_mapped), device);
}

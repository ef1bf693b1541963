// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the system heap, buffers built from the page pool.
 *
 * A buffer is built from blocks of the largest orders that fit the
 * remaining size (2 MiB, 64 KiB, 4 KiB), taken from the page pool's zeroed
 * blocks or else from the page allocator (see pool.c), so that importers
 * see long physically contiguous runs.  The blocks stay whole: the handle
 * lists every 4 KiB page of them, and on free each block goes back to the
 * pool at its order.
 *
 * Charging: a buffer allocated by a task in a memory cgroup other than the
 * root is charged to that cgroup, page by page, through the page
 * allocator's __GFP_ACCOUNT, and uncharged when its memory is freed, even
 * if another process holds it last.  Such a buffer is built from fresh
 * blocks only, zeroed and cleaned on the allocation path, and its blocks
 * go back to the page allocator rather than the pool: the kernel exports
 * nothing that could charge a pooled block to its next owner.  Tasks of
 * the root cgroup (which is never charged) use the pool.
 *
 * Contiguous buffers (ACCMAP_ALLOC_CONTIGUOUS) are one block from
 * dma_alloc_pages() on accmap's own device, which has no IOMMU: the DMA
 * API takes it from the kernel's CMA area where it has one (Debian's
 * arm64 kernels: 64 MiB unless cma= says otherwise), else, and when CMA
 * has no such block, from the page allocator at the order that covers the
 * size (so no larger than its largest order, 4 MiB with 4 KiB pages).
 * The handle lists every page of the block, as for other buffers, so
 * mapping, export and CPU access need nothing of their own.  They are
 * not charged to a memory cgroup: CMA pages cannot be (the kernel exports
 * no way to charge pages it did not allocate with __GFP_ACCOUNT), and
 * charging only the blocks that happened to come from the page allocator
 * would make the charge depend on where they came from.  Instead they
 * count against RLIMIT_MEMLOCK in the locked_vm of the allocating task's
 * user (its real uid's struct user_struct, as io_uring's and BPF's
 * buffers do), which the buffer holds a reference to (compat.h), until
 * they are freed, whoever frees them; the page array is charged to the
 * cgroup.  Not the process's pinned_vm: ids belong to the open file, so a
 * child sharing the fd (fork, SCM_RIGHTS) could allocate, exit, and leave
 * the buffer charged to an mm nobody counts any more, then start again; a
 * user's count stays as long as its buffers do, across its processes.
 * The limit checked is the allocating task's own, against what the user
 * has locked in all (io_uring's buffers included); CAP_IPC_LOCK lifts it
 * (the pages still count).  Where the kernel has no user_struct.locked_vm
 * (a configuration without networking and io_uring, see compat.h), there
 * is no count that outlives a process, so only a task with CAP_IPC_LOCK
 * may allocate contiguous buffers (EPERM for others), uncharged.
 *
 * Below 4 GiB (ACCMAP_ALLOC_DMA32): blocks fresh from the kernel's low
 * zones (ZONE_DMA32 and ZONE_DMA, whatever lies below 4 GiB of them),
 * never from the pool, and back to the page allocator when freed; a
 * contiguous one from dma_alloc_pages() on a second device of accmap's
 * whose DMA mask is 32 bits (so from CMA when the CMA area lies below
 * 4 GiB, as on arm64).  The heap offers the flag only if the low zones
 * hold memory wholly below 4 GiB (system_heap_dma32_bytes()).
 *
 * Memory attributes (Documentation/userspace-api/accmap.rst): a cached
 * buffer is mapped write-back everywhere.  On arm64 a write-combined or
 * uncached buffer is Normal non-cacheable in every mapping, and its
 * cached linear-map alias is cleaned and invalidated before it is handed
 * out.  On x86 the pages' own memory type is set (PAT, as TTM does) to
 * write-combining or uncached-minus, which also flushes their lines and
 * is what PFN mappings of them take; it is set back to write-back before
 * they go back to the pool.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#ifdef CONFIG_X86
#include <asm/set_memory.h>
#endif

#include "accmap.h"
#include "compat.h"

static unsigned int pool_cap_mb;
module_param(pool_cap_mb, uint, 0444);
MODULE_PARM_DESC(pool_cap_mb,
		 "Most memory the system heap's page pool keeps, in MiB (default 0: 1/16 of RAM)");

/* The pool's cap in bytes: pool_cap_mb, or 1/16 of RAM if it is 0. */
static u64 system_heap_pool_cap(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	if (!pool_cap_mb)
		return ram / 16;
	return min_t(u64, (u64)pool_cap_mb << 20, ram);
}

/*
 * Whether memory the current task allocates with __GFP_ACCOUNT is charged
 * to a memory cgroup: kernel memory accounting is on and the task is not
 * in the root cgroup, which the kernel never charges.
 */
static bool system_heap_charges_current(void)
{
#ifdef CONFIG_MEMCG
	struct mem_cgroup *memcg;
	bool charged;

	if (!accmap_memcg_kmem_on())
		return false;
	memcg = get_mem_cgroup_from_mm(current->mm);
	charged = memcg && memcg->css.parent;
	mem_cgroup_put(memcg);
	return charged;
#else
	return false;
#endif
}

/*
 * Bytes of memory the kernel's low zones hold below 4 GiB: what
 * ACCMAP_ALLOC_DMA32 can have from the page allocator.  A zone counts
 * only if it lies wholly below 4 GiB: arm64 makes ZONE_DMA32 all of
 * memory when memory starts above 4 GiB, and a block from it is then no
 * use to a 32-bit master.  A kernel with 32-bit physical addresses has all
 * its memory below 4 GiB; one with neither has none to offer.
 */
static u64 system_heap_dma32_bytes(void)
{
	u64 bytes = 0;
#ifdef CONFIG_ZONE_DMA32
	int nid, z;
#endif

	if (!IS_ENABLED(CONFIG_PHYS_ADDR_T_64BIT))
		return (u64)totalram_pages() << PAGE_SHIFT;
#ifdef CONFIG_ZONE_DMA32
	for_each_online_node(nid) {
		for (z = 0; z <= ZONE_DMA32; z++) {
			struct zone *zone = &NODE_DATA(nid)->node_zones[z];

			if (zone_managed_pages(zone) &&
			    zone_end_pfn(zone) <= PHYS_PFN(SZ_4G))
				bytes += (u64)zone_managed_pages(zone) <<
					 PAGE_SHIFT;
		}
	}
#endif
	return bytes;
}

/*
 * Gives back @n pages of @pages, which are whole blocks from
 * accmap_pool_alloc(); @unpooled: allocated with a @how.
 */
static void system_heap_free_pages(struct accmap_pool *pool,
				   struct page **pages, unsigned long n,
				   bool unpooled)
{
	unsigned long i = 0;

	while (i < n) {
		struct page *page = pages[i];

		i += 1UL << compound_order(page);
		accmap_pool_free(pool, page, unpooled);
	}
}

/* The device a contiguous buffer's block comes from and goes back to. */
static struct device *system_heap_contig_dev(struct accmap_device *adev,
					     struct accmap_handle *handle)
{
	return handle->flags & ACCMAP_ALLOC_DMA32 ? adev->dev32 : adev->dev;
}

/*
 * Pages whose memory type could not be set back to write-back would give
 * their next owner a mismatched alias: they are kept out of use for good.
 */
static void system_heap_keep_pages(unsigned long npages)
{
	pr_warn_ratelimited("%lu pages kept: their memory type could not be set back to write-back\n",
			    npages);
}

/*
 * Drops the cached linear-map alias of a write-combined or uncached
 * buffer from the CPU caches: the blocks are clean already, and
 * invalidating leaves no line of the alias to disagree with the buffer's
 * own mappings (arm64 forbids mismatched attributes on aliases that both
 * hold lines).  A no-op where DMA is coherent (x86).
 */
static int system_heap_flush_alias(struct accmap_device *adev,
				   struct accmap_handle *handle)
{
	unsigned long i = 0;
	int ret;

	while (i < handle->npages) {
		struct page *page = handle->pages[i];
		unsigned int order = compound_order(page);

		ret = accmap_cache_flush(&adev->cache, page, 0,
					 PAGE_SIZE << order);
		if (ret)
			return ret;
		i += 1UL << order;
	}
	return 0;
}

#ifdef CONFIG_X86
/* set_pages_array_*() take an int count. */
#define SYSTEM_HEAP_MEMTYPE_BATCH	(SZ_1M + 0UL)

/*
 * Gives @n pages from @pages the memory type of @handle's flags (@wb:
 * write-back again), a batch at a time.  On failure those before the
 * failing batch have the new type, and the failing batch may have it in
 * part (x86 undoes its reservations, not the page attributes it changed).
 *
 * Returns 0 or -ENOMEM.  set_pages_array_*() say -EINVAL for every
 * failure, but for pages this heap owns, whose type nobody else has
 * reserved, the only way to fail is the memory that splitting the
 * linear map's large pages takes: an allocation failure, told as one.
 */
static int system_heap_set_memtype(struct accmap_handle *handle,
				   unsigned long first, unsigned long n, bool wb)
{
	unsigned long i;
	int ret;

	for (i = first; i < first + n; i += SYSTEM_HEAP_MEMTYPE_BATCH) {
		struct page **pages = handle->pages + i;
		int count = min(first + n - i, SYSTEM_HEAP_MEMTYPE_BATCH);

		if (wb)
			ret = set_pages_array_wb(pages, count);
		else if (handle->flags & ACCMAP_ALLOC_WRITECOMBINE)
			ret = set_pages_array_wc(pages, count);
		else
			ret = set_pages_array_uc(pages, count);
		if (ret)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Sets the buffer's memory type.  On failure every page is made
 * write-back again; if even that fails, *@stuck is set and the pages
 * must never be reused (system_heap_keep_pages()).
 */
static int system_heap_memtype_on(struct accmap_handle *handle, bool *stuck)
{
	unsigned long i;
	int ret;

	for (i = 0; i < handle->npages; i += SYSTEM_HEAP_MEMTYPE_BATCH) {
		unsigned long n = min(handle->npages - i,
				      SYSTEM_HEAP_MEMTYPE_BATCH);

		ret = system_heap_set_memtype(handle, i, n, false);
		if (ret) {
			/* The failing batch may be part-way changed too. */
			if (system_heap_set_memtype(handle, 0, i + n, true))
				*stuck = true;
			return ret;
		}
	}
	return 0;
}

/*
 * Back to write-back before the pages go back.  Returns false if that
 * failed: the pages must then never be reused.
 */
static bool system_heap_memtype_off(struct accmap_handle *handle)
{
	return !system_heap_set_memtype(handle, 0, handle->npages, true);
}
#else
static int system_heap_memtype_on(struct accmap_handle *handle, bool *stuck)
{
	return 0;
}

static bool system_heap_memtype_off(struct accmap_handle *handle)
{
	return true;
}
#endif

#ifdef ACCMAP_USER_LOCKED_VM
/*
 * Charges @npages to @user's locked_vm against the current task's
 * RLIMIT_MEMLOCK (no limit with CAP_IPC_LOCK; the pages count anyway).
 * Lock-free.  The count moves by compare-and-exchange, never past the
 * limit, so that two ALLOCs racing near it cannot make a third one, or
 * another user of the count (io_uring), fail for a moment.  CAP_IPC_LOCK
 * is asked only when the limit would be crossed: asking is audited.
 * Returns 0 or -ENOMEM.
 */
static int system_heap_charge_user(struct user_struct *user,
				   unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	long cur = atomic_long_read(&user->locked_vm);
	bool unlimited = false;

	do {
		if ((unsigned long)cur + npages > limit && !unlimited) {
			if (!capable(CAP_IPC_LOCK))
				return -ENOMEM;
			unlimited = true;
		}
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur,
					  cur + (long)npages));
	return 0;
}

/* Takes back a charge of system_heap_charge_user(); any context. */
static void system_heap_uncharge_user(struct user_struct *user,
				      unsigned long npages)
{
	atomic_long_sub(npages, &user->locked_vm);
}
#else
/*
 * No per-user count in this kernel (compat.h): a process's own count
 * (pinned_vm) would go with it while the buffer stays, which is no bound
 * at all.  So only a task that RLIMIT_MEMLOCK does not bound anyway
 * (CAP_IPC_LOCK) may allocate, and nothing is charged.  Returns 0 or
 * -EPERM.
 */
static int system_heap_charge_user(struct user_struct *user,
				   unsigned long npages)
{
	return capable(CAP_IPC_LOCK) ? 0 : -EPERM;
}

static void system_heap_uncharge_user(struct user_struct *user,
				      unsigned long npages)
{
}
#endif

/*
 * A contiguous buffer (ACCMAP_ALLOC_CONTIGUOUS): one block, zeroed, its
 * cache lines cleaned, or for a write-combined or uncached buffer
 * cleaned and invalidated before its memory type is set.  Returns 0,
 * -ENOMEM when no block of the size can be had or the caller's user is at
 * its RLIMIT_MEMLOCK, -EPERM without CAP_IPC_LOCK on a kernel with no
 * per-user count, -EOPNOTSUPP on a confidential-computing guest, or
 * -EINTR.
 */
static int system_heap_alloc_contig(struct accmap_heap *heap,
				    struct accmap_handle *handle)
{
	struct accmap_device *adev = heap->adev;
	unsigned long npages = handle->size >> PAGE_SHIFT;
	struct page **pages, *page;
	struct accmap_user_ref user;
	bool stuck = false;
	dma_addr_t dma;
	unsigned long i;
	int ret;

	/*
	 * On a confidential-computing guest dma_alloc_pages() gives memory
	 * shared with the host, which could read and write the buffer.
	 */
	if (accmap_cc_guest())
		return -EOPNOTSUPP;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT |
			       __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!pages)
		return -ENOMEM;

	/*
	 * Memory no cgroup is charged for: RLIMIT_MEMLOCK bounds it, per
	 * user, for as long as the buffer lives (see the top of the file).
	 */
	accmap_user_ref_get(&user);
	ret = system_heap_charge_user(user.user, npages);
	if (ret)
		goto err_put_user;

	/* Quiet: user space asks for sizes the allocator may not have. */
	page = dma_alloc_pages(system_heap_contig_dev(adev, handle),
			       handle->size, &dma, DMA_BIDIRECTIONAL,
			       GFP_KERNEL | __GFP_NOWARN);
	if (!page) {
		ret = -ENOMEM;
		goto err_refund;
	}

	/*
	 * The DMA API zeroes what it hands out today, but does not say
	 * so: stale data must never reach the new owner.  Pages by PFN:
	 * the memmap of a block need not be contiguous (SPARSEMEM).
	 */
	for (i = 0; i < npages; i++) {
		pages[i] = pfn_to_page(page_to_pfn(page) + i);
		clear_highpage(pages[i]);
		if (!(i % 256) && fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free_block;
		}
		if (!(i % 256))
			cond_resched();
	}

	handle->pages = pages;
	handle->npages = npages;
	handle->memcg_charged = false;
	handle->contiguous = true;
	handle->contig_dma = dma;
	handle->contig_user = user;

	if (accmap_handle_cached(handle)) {
		ret = accmap_cache_clean(&adev->cache, page, 0, handle->size);
	} else {
		ret = accmap_cache_flush(&adev->cache, page, 0, handle->size);
		if (!ret)
			ret = system_heap_memtype_on(handle, &stuck);
	}
	if (ret)
		goto err_unset;
	return 0;

err_unset:
	handle->pages = NULL;
	handle->npages = 0;
	handle->contiguous = false;
	handle->contig_dma = 0;
	handle->contig_user.user = NULL;
	if (stuck) {
		system_heap_keep_pages(npages);
		goto err_refund;
	}
err_free_block:
	dma_free_pages(system_heap_contig_dev(adev, handle),
		       npages << PAGE_SHIFT, page, dma, DMA_BIDIRECTIONAL);
err_refund:
	system_heap_uncharge_user(user.user, npages);
err_put_user:
	accmap_user_ref_put(&user);
	kvfree(pages);
	return ret;
}

static int system_heap_alloc(struct accmap_heap *heap,
			     struct accmap_handle *handle, u32 align)
{
	struct accmap_pool *pool = heap->adev->pool;
	unsigned long npages = handle->size >> PAGE_SHIFT;
	bool charge = system_heap_charges_current();
	unsigned int how = (charge ? ACCMAP_POOL_CHARGE : 0) |
			   (handle->flags & ACCMAP_ALLOC_DMA32 ?
			    ACCMAP_POOL_DMA32 : 0);
	unsigned long no_alloc = 0;
	unsigned long filled = 0;
	struct page **pages;
	bool stuck = false;
	int ret;

	/*
	 * Page alignment is all the system heap offers or needs to offer
	 * (a contiguous block is aligned to its order, or CMA's alignment).
	 */
	(void)align;
	if (handle->flags & ACCMAP_ALLOC_CONTIGUOUS)
		return system_heap_alloc_contig(heap, handle);

	/*
	 * The array is charged too; past a few pages kvmalloc() falls back
	 * to vmalloc(), whose charge would invoke the cgroup's OOM killer
	 * without __GFP_RETRY_MAYFAIL, and warn without __GFP_NOWARN.  An
	 * ALLOC over the limit fails with ENOMEM, quietly, and kills nobody,
	 * as the pages themselves (pool.c).
	 */
	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT |
			       __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!pages)
		return -ENOMEM;

	while (filled < npages) {
		unsigned int order, i;
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free_pages;
		}
		page = accmap_pool_alloc(pool, npages - filled, &no_alloc,
					 how, &order);
		if (!page) {
			ret = -ENOMEM;
			goto err_free_pages;
		}
		for (i = 0; i < (1U << order); i++)
			pages[filled++] = page + i;
		cond_resched();
	}

	handle->pages = pages;
	handle->npages = npages;
	handle->memcg_charged = charge;

	if (!accmap_handle_cached(handle)) {
		ret = system_heap_flush_alias(heap->adev, handle);
		if (!ret)
			ret = system_heap_memtype_on(handle, &stuck);
		if (ret)
			goto err_unset;
	}
	return 0;

err_unset:
	handle->pages = NULL;
	handle->npages = 0;
	handle->memcg_charged = false;
	if (stuck) {
		system_heap_keep_pages(npages);
		goto err_free_array;
	}
err_free_pages:
	system_heap_free_pages(pool, pages, filled, how != 0);
err_free_array:
	kvfree(pages);
	return ret;
}

static void system_heap_free(struct accmap_heap *heap,
			     struct accmap_handle *handle)
{
	if (!accmap_handle_cached(handle) && !system_heap_memtype_off(handle))
		system_heap_keep_pages(handle->npages);
	else if (handle->contiguous)
		dma_free_pages(system_heap_contig_dev(heap->adev, handle),
			       handle->size, handle->pages[0],
			       handle->contig_dma, DMA_BIDIRECTIONAL);
	else
		system_heap_free_pages(heap->adev->pool, handle->pages,
				       handle->npages,
				       handle->memcg_charged ||
				       handle->flags & ACCMAP_ALLOC_DMA32);
	/* The charge goes back even for pages kept out of use. */
	if (handle->contig_user.user) {
		system_heap_uncharge_user(handle->contig_user.user,
					  handle->npages);
		accmap_user_ref_put(&handle->contig_user);
	}
	kvfree(handle->pages);
	handle->pages = NULL;
	handle->npages = 0;
	handle->memcg_charged = false;
	handle->contiguous = false;
	handle->contig_dma = 0;
}

/*
 * The system heap can hand out what the kernel counts as available plus
 * what its own pool holds, in pages that need not touch each other.
 */
static void system_heap_query(struct accmap_heap *heap,
			      struct accmap_heap_info *info)
{
	struct accmap_pool_info pool;
	u64 total = (u64)totalram_pages() << PAGE_SHIFT;
	u64 avail = (u64)si_mem_available() << PAGE_SHIFT;

	memset(&pool, 0, sizeof(pool));
	if (heap->adev->pool)
		accmap_pool_get_info(heap->adev->pool, &pool);
	info->total = total;
	info->free = min(total, avail + pool.pooled);
	info->largest_free = info->free;
}

static const struct accmap_heap_ops system_heap_ops = {
	.alloc = system_heap_alloc,
	.free = system_heap_free,
	.query = system_heap_query,
};

/**
 * accmap_system_heap_create() - create the system heap of a device
 * @adev: the device; its page pool (@adev->pool) is created with the heap,
 *        capped by the pool_cap_mb module parameter, with its shrinker
 *
 * Return: the heap, or NULL if out of memory.
 */
struct accmap_heap *accmap_system_heap_create(struct accmap_device *adev)
{
	struct accmap_pool *pool;
	struct accmap_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL);
	if (!heap)
		return NULL;

	pool = accmap_pool_create(system_heap_pool_cap(), &adev->cache);
	if (IS_ERR(pool))
		goto err_free_heap;
	if (accmap_pool_register_shrinker(pool))
		goto err_destroy_pool;

	heap->id = ACCMAP_HEAP_SYSTEM;
	heap->name = "system";
	heap->ops = &system_heap_ops;
	heap->dma32 = system_heap_dma32_bytes();
	heap->adev = adev;
	atomic64_set(&heap->used, 0);
	atomic64_set(&heap->contiguous, 0);
	adev->pool = pool;
	return heap;

err_destroy_pool:
	accmap_pool_destroy(pool);
err_free_heap:
	kfree(heap);
	return NULL;
}

/**
 * accmap_system_heap_destroy() - destroy a heap made by
 * accmap_system_heap_create()
 * @heap: the heap; no buffer may still use it
 *
 * The device's page pool goes with it, every pooled page freed.
 */
void accmap_system_heap_destroy(struct accmap_heap *heap)
{
	struct accmap_device *adev = heap->adev;

	WARN_ON(atomic64_read(&heap->used));
	accmap_pool_destroy(adev->pool);
	adev->pool = NULL;
	kfree(heap);
}

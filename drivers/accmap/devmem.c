// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: device memory of a replay target, and migration to and from it.
 *
 *   devmem=<size>@<base>
 *
 * or a /reserved-memory child compatible with "accmap,device-memory" that
 * no GPU node names gives the software model a carveout of its own:
 * memory the kernel does not use (e820-reserved with memmap=, or above
 * mem=), 2 MiB aligned.  A GPU node of a register window that names such
 * a child in its memory-region gives it to that window instead
 * (accmap_devmem_create_gpu()); it is DMA-mapped for the GPU once, whole
 * (devmem_dma_map() says how), and the GPU's entries hold those DMA
 * addresses.
 * It is handed to the memory manager as ZONE_DEVICE pages:
 *
 *  - MEMORY_DEVICE_PRIVATE where the kernel has CONFIG_DEVICE_PRIVATE.
 *    The pages are struct pages over a free physical range the CPU cannot
 *    map; the data lives in the carveout, page N of the range at byte
 *    N * PAGE_SIZE of it, reached through a cached kernel mapping.  A CPU
 *    access to such a page faults and devmem_migrate_to_ram() brings it
 *    back.
 *  - MEMORY_DEVICE_COHERENT where it has only ZONE_DEVICE: the carveout
 *    itself becomes the pages, and the CPU maps them where they lie.  They
 *    come back only by prefetch, eviction or a long-term pin.
 *
 * Pages move with migrate_vma_setup()/pages()/finalize() (both ways, under
 * the caller's mmap_lock) and, to evict, migrate_device_range() (no mm
 * needed).  Pages the mm never backed, and zero pages, are cleared on the
 * device rather than copied.  The CPU copies, through the kernel
 * mappings, which the model reads too; a window gets device memory only
 * where its GPU is dma-coherent (SVM needs that already), so the GPU sees
 * what the CPU wrote without cache maintenance.  A target with a DMA
 * engine would copy with it.
 *
 * Every device page placed by a session holds a reference on the
 * session's counters (struct accmap_devmem_owner, in zone_device_data), so
 * a page that outlives its session (the process still maps it) is still
 * counted, and freed into the pool by devmem_page_free().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/memremap.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/of.h>
#include <linux/of_reserved_mem.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "accmap.h"
#include "compat.h"
#include "devmem.h"

static char *devmem;
module_param(devmem, charp, 0444);
MODULE_PARM_DESC(devmem,
		 "Device memory of the sim target: <size>@<base>, 2 MiB aligned, memory the kernel does not use");

/*
 * The accmap,device-memory node a GPU's memory-region names (the first),
 * with a reference, or NULL.
 */
static struct device_node *devmem_gpu_node(struct device *dev)
{
	struct device_node *np;
	int i;

	for (i = 0; dev->of_node; i++) {
		np = of_parse_phandle(dev->of_node, "memory-region", i);
		if (!np || of_device_is_compatible(np, "accmap,device-memory"))
			return np;
		of_node_put(np);
	}
	return NULL;
}

#ifndef ACCMAP_HAVE_DEVMEM
/**
 * accmap_devmem_create() - the sim target's device memory, if configured
 * @adev: the device
 * @out:  set to NULL: this kernel cannot have any
 *
 * Return: 0, or -EOPNOTSUPP if devmem= asks for some anyway.
 */
int accmap_devmem_create(struct accmap_device *adev,
			 struct accmap_devmem **out)
{
	struct device_node *np;

	*out = NULL;
	if (devmem && *devmem) {
		pr_err("devmem=%s: this kernel has no ZONE_DEVICE device migration (6.1 or later with CONFIG_ZONE_DEVICE)\n",
		       devmem);
		return -EOPNOTSUPP;
	}
	/* The device tree describes the board, not this kernel: go on. */
	np = of_find_compatible_node(NULL, NULL, "accmap,device-memory");
	if (np) {
		pr_info("%pOF: not used, this kernel has no ZONE_DEVICE device migration\n",
			np);
		of_node_put(np);
	}
	return 0;
}

/**
 * accmap_devmem_create_gpu() - a window's device memory: none here
 * @adev: the device
 * @dev:  the window's GPU
 * @name: the target's name
 * @out:  set to NULL: this kernel cannot have any
 *
 * Return: 0; a memory-region naming device memory is only logged.
 */
int accmap_devmem_create_gpu(struct accmap_device *adev, struct device *dev,
			     const char *name, struct accmap_devmem **out)
{
	struct device_node *np = devmem_gpu_node(dev);

	*out = NULL;
	if (np)
		pr_info("%s: %pOF: not used, this kernel has no ZONE_DEVICE device migration\n",
			name, np);
	of_node_put(np);
	return 0;
}

/**
 * accmap_devmem_destroy() - nothing to undo without device memory
 * @dm: NULL
 */
void accmap_devmem_destroy(struct accmap_devmem *dm)
{
}
#else

/* Pages moved per migrate_vma_setup(): the largest SVM granule. */
#define DEVMEM_STEP_PAGES	(SZ_2M >> PAGE_SHIFT)
/* Rounds of eviction at unload, and the pause between them. */
#define DEVMEM_UNLOAD_TRIES	50
#define DEVMEM_UNLOAD_WAIT_MS	20

/**
 * struct accmap_devmem - a target's device memory
 * @pgmap:     the ZONE_DEVICE pages
 * @pool:      which pages are free, and the eviction order
 * @base:      the carveout's physical address
 * @addr:      where the target's GPU finds it: @base for the model, the
 *             DMA address of the whole carveout for a window
 * @dma_dev:   the window's device it is DMA-mapped for, or NULL
 * @resource:  mapped with dma_map_resource() (no struct pages)
 * @name:      the target's name, for the log
 * @size:      its bytes
 * @nr:        its pages
 * @pfn_first: pfn of the first ZONE_DEVICE page
 * @kva:       private: the carveout's cached kernel mapping
 * @res:       the carveout, claimed
 * @free_res:  private: the free physical range the pages stand on
 * @private:   MEMORY_DEVICE_PRIVATE (else COHERENT)
 * @lock:      protects @owners; taken with interrupts off (a device
 *             page's last reference can drop an owner's in interrupt
 *             context: devmem_page_free())
 * @owners:    the counters of sessions with pages here, or live
 * @evictions: pages evicted, ever
 */
struct accmap_devmem {
	struct dev_pagemap pgmap;
	struct accmap_devmem_pool pool;
	phys_addr_t base;
	dma_addr_t addr;
	struct device *dma_dev;
	bool resource;
	const char *name;
	u64 size;
	unsigned long nr;
	unsigned long pfn_first;
	void *kva;
	struct resource *res;
	struct resource *free_res;
	bool private;
	spinlock_t lock;	/* see above */
	struct list_head owners;
	atomic64_t evictions;
};

static unsigned long devmem_idx(struct accmap_devmem *dm, struct page *page)
{
	return page_to_pfn(page) - dm->pfn_first;
}

/**
 * accmap_devmem_owns() - whether a page is this device memory's
 * @dm:   the device memory, or NULL
 * @page: any page
 *
 * Return: true for one of @dm's ZONE_DEVICE pages.
 */
bool accmap_devmem_owns(struct accmap_devmem *dm, struct page *page)
{
	unsigned long pfn;

	if (!dm || !page)
		return false;
	pfn = page_to_pfn(page);
	return pfn >= dm->pfn_first && pfn - dm->pfn_first < dm->nr;
}

/**
 * accmap_devmem_addr() - where the target's GPU finds a device page's data
 * @dm:   the device memory
 * @page: one of its pages
 *
 * Return: the address the GPU's entries hold: the physical address in the
 * carveout for the model, its DMA address for a window.  Pages are laid
 * out in order, so a 2 MiB aligned run of pages is a 2 MiB aligned block.
 */
u64 accmap_devmem_addr(struct accmap_devmem *dm, struct page *page)
{
	return dm->addr + ((u64)devmem_idx(dm, page) << PAGE_SHIFT);
}

/**
 * accmap_devmem_kmap() - the kernel's view of a device page's data
 * @dm:   the device memory
 * @page: one of its pages
 *
 * Return: its address; undo with accmap_devmem_kunmap(), in the reverse
 * order of mapping (as kmap_local_page()).
 */
void *accmap_devmem_kmap(struct accmap_devmem *dm, struct page *page)
{
	if (dm->private)
		return dm->kva + ((size_t)devmem_idx(dm, page) << PAGE_SHIFT);
	return kmap_local_page(page);
}

/**
 * accmap_devmem_kunmap() - undo accmap_devmem_kmap()
 * @dm:  the device memory
 * @kva: what accmap_devmem_kmap() returned
 */
void accmap_devmem_kunmap(struct accmap_devmem *dm, void *kva)
{
	if (!dm->private)
		kunmap_local(kva);
}

/**
 * accmap_devmem_touch() - the GPU used a device page again
 * @dm:   the device memory
 * @page: one of its pages
 *
 * It goes to the end of the eviction order.
 */
void accmap_devmem_touch(struct accmap_devmem *dm, struct page *page)
{
	accmap_devmem_pool_touch(&dm->pool, devmem_idx(dm, page));
}

/**
 * accmap_devmem_pgmap_owner() - the owner token of the device's pages
 * @dm: the device memory, or NULL
 *
 * hmm_range_fault() returns private pages of this owner as they are, and
 * migrate_vma_setup() selects them, rather than faulting them back.
 *
 * Return: the token, or NULL.
 */
void *accmap_devmem_pgmap_owner(struct accmap_devmem *dm)
{
	return dm;
}

static void devmem_owner_release(struct kref *ref)
{
	struct accmap_devmem_owner *owner =
		container_of(ref, struct accmap_devmem_owner, ref);
	unsigned long flags;

	spin_lock_irqsave(&owner->dm->lock, flags);
	list_del(&owner->node);
	spin_unlock_irqrestore(&owner->dm->lock, flags);
	kfree(owner);
}

/**
 * accmap_devmem_owner_new() - counters for a session that may place pages
 * @dm:      the device memory of the session's target, or NULL
 * @session: the session's id
 *
 * Return: the counters (put with accmap_devmem_owner_put()), NULL if @dm
 * is NULL, or ERR_PTR(-ENOMEM).
 */
struct accmap_devmem_owner *accmap_devmem_owner_new(struct accmap_devmem *dm,
						    u32 session)
{
	struct accmap_devmem_owner *owner;
	unsigned long flags;

	if (!dm)
		return NULL;
	owner = kzalloc(sizeof(*owner), GFP_KERNEL_ACCOUNT);
	if (!owner)
		return ERR_PTR(-ENOMEM);
	kref_init(&owner->ref);
	owner->dm = dm;
	owner->pid = task_tgid_nr(current);
	get_task_comm(owner->comm, current);
	owner->session = session;
	spin_lock_irqsave(&dm->lock, flags);
	list_add_tail(&owner->node, &dm->owners);
	spin_unlock_irqrestore(&dm->lock, flags);
	return owner;
}

/**
 * accmap_devmem_owner_put() - drop a reference on a session's counters
 * @owner: the counters, or NULL
 */
void accmap_devmem_owner_put(struct accmap_devmem_owner *owner)
{
	if (owner)
		kref_put(&owner->ref, devmem_owner_release);
}

/*
 * Called by the mm when a device page's last reference goes.  Every page
 * handed out has an owner (devmem_alloc()), which knows the device memory.
 * Any context: in the coherent mode the last put_page() can be an I/O
 * completion's, in interrupt context.  So every lock taken from here is
 * taken with interrupts off everywhere: the pool's (devmem_pool.c) and,
 * when the owner's last reference goes with the page, @dm->lock
 * (devmem_owner_release()); kfree() is fine there too.
 */
static void devmem_page_free(struct page *page)
{
	struct accmap_devmem_owner *owner = page->zone_device_data;
	struct accmap_devmem *dm;

	if (WARN_ON_ONCE(!owner))
		return;
	dm = owner->dm;
	page->zone_device_data = NULL;
	atomic64_dec(&owner->on_device);
	accmap_devmem_owner_put(owner);
	accmap_devmem_pool_put(&dm->pool, devmem_idx(dm, page));
}

#ifdef ACCMAP_HAVE_PGMAP_FOLIO_FREE
static void devmem_folio_free(struct folio *folio)
{
	devmem_page_free(&folio->page);
}
#endif

/*
 * A free device page for @owner, locked, with one reference; NULL if none
 * is free.
 */
static struct page *devmem_alloc(struct accmap_devmem *dm,
				 struct accmap_devmem_owner *owner)
{
	struct page *page;
	long idx;

	idx = accmap_devmem_pool_get(&dm->pool);
	if (idx < 0)
		return NULL;
	page = pfn_to_page(dm->pfn_first + idx);
	kref_get(&owner->ref);
	/* Counted until devmem_page_free(), whether it takes or not. */
	atomic64_inc(&owner->on_device);
	/* Init first: from 6.18 it rewrites the fields around this one. */
	zone_device_page_init_compat(page, &dm->pgmap);
	page->zone_device_data = owner;
	return page;
}

/* Copies a page, or clears @dst when @src is NULL. */
static void devmem_copy(struct accmap_devmem *dm, struct page *dst,
			struct page *src)
{
	bool dst_dev = accmap_devmem_owns(dm, dst);
	bool src_dev = src && accmap_devmem_owns(dm, src);
	void *d, *s = NULL;

	d = dst_dev ? accmap_devmem_kmap(dm, dst) : kmap_local_page(dst);
	if (src)
		s = src_dev ? accmap_devmem_kmap(dm, src) : kmap_local_page(src);
	if (s)
		memcpy(d, s, PAGE_SIZE);
	else
		memset(d, 0, PAGE_SIZE);
	if (s) {
		if (src_dev)
			accmap_devmem_kunmap(dm, s);
		else
			kunmap_local(s);
	}
	if (dst_dev)
		accmap_devmem_kunmap(dm, d);
	else
		kunmap_local(d);
}

/*
 * For each device page selected in @src, a system page with its data in
 * @dst.  Returns how many could not be had: those stay (dst 0).
 */
static unsigned long devmem_copy_out(struct accmap_devmem *dm,
				     unsigned long *src, unsigned long *dst,
				     unsigned long n, gfp_t gfp)
{
	unsigned long i, failed = 0;

	for (i = 0; i < n; i++) {
		struct page *spage = migrate_pfn_to_page(src[i]);
		struct page *dpage;

		dst[i] = 0;
		if (!spage || !(src[i] & MIGRATE_PFN_MIGRATE) ||
		    !accmap_devmem_owns(dm, spage))
			continue;
		dpage = alloc_page(gfp);
		if (!dpage) {
			failed++;
			continue;
		}
		lock_page(dpage);
		devmem_copy(dm, dpage, spage);
		dst[i] = migrate_pfn(page_to_pfn(dpage));
		if (src[i] & MIGRATE_PFN_WRITE)
			dst[i] |= MIGRATE_PFN_WRITE;
	}
	return failed;
}

/*
 * After migrate_*_pages(): counts the device pages that did leave, in
 * their owners' counters.
 */
static void devmem_count_out(struct accmap_devmem *dm, unsigned long *src,
			     unsigned long *dst, unsigned long n, bool cpu,
			     bool evict)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct page *spage = migrate_pfn_to_page(src[i]);
		struct accmap_devmem_owner *owner;

		if (!spage || !dst[i] || !(src[i] & MIGRATE_PFN_MIGRATE) ||
		    !accmap_devmem_owns(dm, spage))
			continue;
		owner = spage->zone_device_data;
		if (evict)
			atomic64_inc(&dm->evictions);
		if (!owner)
			continue;
		atomic64_inc(&owner->to_system);
		if (cpu)
			atomic64_inc(&owner->cpu_faults);
		if (evict)
			atomic64_inc(&owner->evictions);
	}
}

static vm_fault_t devmem_migrate_to_ram(struct vm_fault *vmf)
{
	struct accmap_devmem_owner *owner = vmf->page->zone_device_data;
	struct accmap_devmem *dm = owner->dm;
	unsigned long src = 0, dst = 0;
	struct migrate_vma args = {
		.vma = vmf->vma,
		.start = vmf->address & PAGE_MASK,
		.end = (vmf->address & PAGE_MASK) + PAGE_SIZE,
		.src = &src,
		.dst = &dst,
		.pgmap_owner = dm,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE,
		.fault_page = vmf->page,
	};

	if (migrate_vma_setup(&args))
		return VM_FAULT_SIGBUS;
	if (args.cpages &&
	    devmem_copy_out(dm, &src, &dst, 1, GFP_HIGHUSER_MOVABLE)) {
		migrate_vma_finalize(&args);
		return VM_FAULT_OOM;
	}
	migrate_vma_pages(&args);
	devmem_count_out(dm, &src, &dst, 1, true, false);
	migrate_vma_finalize(&args);
	return 0;
}

static const struct dev_pagemap_ops devmem_pgmap_ops = {
#ifdef ACCMAP_HAVE_PGMAP_FOLIO_FREE
	.folio_free = devmem_folio_free,
#else
	.page_free = devmem_page_free,
#endif
	.migrate_to_ram = devmem_migrate_to_ram,
};

/*
 * Migrates the used pages of slots [@first, @first + @n) back to system
 * memory.  Pages busy now (locked, being freed) are skipped.
 */
static void devmem_evict_run(struct accmap_devmem *dm, unsigned long first,
			     unsigned long n, unsigned long *src,
			     unsigned long *dst)
{
	memset(src, 0, n * sizeof(*src));
	migrate_device_range(src, dm->pfn_first + first, n);
	devmem_copy_out(dm, src, dst, n, GFP_HIGHUSER_MOVABLE);
	migrate_device_pages(src, dst, n);
	devmem_count_out(dm, src, dst, n, false, true);
	migrate_device_finalize(src, dst, n);
}

/*
 * Evicts up to @want pages, least recently placed first; runs of
 * consecutive slots go together.  Returns 0 or -ENOMEM.
 */
static int devmem_evict(struct accmap_devmem *dm, unsigned long want)
{
	unsigned long *victims, *src, *dst, n, i, run;
	int ret = -ENOMEM;

	want = min_t(unsigned long, want, DEVMEM_STEP_PAGES);
	victims = kcalloc(want, sizeof(*victims), GFP_KERNEL);
	src = kcalloc(want, sizeof(*src), GFP_KERNEL);
	dst = kcalloc(want, sizeof(*dst), GFP_KERNEL);
	if (!victims || !src || !dst)
		goto out;
	n = accmap_devmem_pool_victims(&dm->pool, victims, want);
	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n; run++)
			if (victims[i + run] != victims[i] + run)
				break;
		devmem_evict_run(dm, victims[i], run, src, dst);
	}
	ret = 0;
out:
	kfree(victims);
	kfree(src);
	kfree(dst);
	return ret;
}

/* Makes @want pages free if it can, evicting. */
static void devmem_make_room(struct accmap_devmem *dm, unsigned long want)
{
	unsigned long free = accmap_devmem_pool_free(&dm->pool);

	if (free < want)
		devmem_evict(dm, want - free);
}

/* One step of accmap_devmem_to_device(): at most DEVMEM_STEP_PAGES. */
static int devmem_to_device_step(struct accmap_devmem *dm,
				 struct accmap_devmem_owner *owner,
				 struct vm_area_struct *vma,
				 unsigned long start, unsigned long end,
				 unsigned long *src, unsigned long *dst)
{
	unsigned long n = (end - start) >> PAGE_SHIFT, i, moved = 0;
	struct migrate_vma args = {
		.vma = vma,
		.start = start,
		.end = end,
		.src = src,
		.dst = dst,
		.pgmap_owner = dm,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	int ret;

	devmem_make_room(dm, n);
	ret = migrate_vma_setup(&args);
	if (ret)
		return ret;
	for (i = 0; i < n && args.cpages; i++) {
		struct page *spage = migrate_pfn_to_page(src[i]);
		struct page *dpage;

		if (!(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = devmem_alloc(dm, owner);
		if (!dpage)
			break;
		devmem_copy(dm, dpage, spage);
		dst[i] = migrate_pfn(page_to_pfn(dpage));
		/* Else a CPU or GPU write would fault the page straight back. */
		if (src[i] & MIGRATE_PFN_WRITE ||
		    (!spage && vma->vm_flags & VM_WRITE))
			dst[i] |= MIGRATE_PFN_WRITE;
	}
	migrate_vma_pages(&args);
	for (i = 0; i < n; i++)
		if (dst[i] && src[i] & MIGRATE_PFN_MIGRATE)
			moved++;
	atomic64_add(moved, &owner->to_device);
	/* Device pages that did not take are freed here, into the pool. */
	migrate_vma_finalize(&args);
	return 0;
}

/* One step of a walk: at most DEVMEM_STEP_PAGES, arrays that large. */
typedef int (*devmem_step_t)(struct accmap_devmem *dm,
			     struct accmap_devmem_owner *owner,
			     struct vm_area_struct *vma, unsigned long start,
			     unsigned long end, unsigned long *src,
			     unsigned long *dst);

/*
 * Runs @step over [@start, @end) of @vma in steps of DEVMEM_STEP_PAGES.
 * A step that fails does not stop the walk: the pages it left are still
 * right where they are.  Returns the last error.
 */
static int devmem_walk(struct accmap_devmem *dm,
		       struct accmap_devmem_owner *owner,
		       struct vm_area_struct *vma, unsigned long start,
		       unsigned long end, devmem_step_t step)
{
	unsigned long *src, *dst, a, next;
	int ret = 0, err;

	lockdep_assert_held(&vma->vm_mm->mmap_lock);
	src = kcalloc(DEVMEM_STEP_PAGES, sizeof(*src), GFP_KERNEL);
	dst = kcalloc(DEVMEM_STEP_PAGES, sizeof(*dst), GFP_KERNEL);
	if (!src || !dst) {
		ret = -ENOMEM;
		goto out;
	}
	for (a = start; a < end; a = next) {
		next = min(end, a + (DEVMEM_STEP_PAGES << PAGE_SHIFT));
		memset(src, 0, DEVMEM_STEP_PAGES * sizeof(*src));
		memset(dst, 0, DEVMEM_STEP_PAGES * sizeof(*dst));
		err = step(dm, owner, vma, a, next, src, dst);
		if (err)
			ret = err;
	}
out:
	kfree(src);
	kfree(dst);
	return ret;
}

/**
 * accmap_devmem_to_device() - move a process's pages to device memory
 * @dm:    the device memory
 * @owner: the counters of the session asking
 * @vma:   the VMA holding [@start, @end); its mm's mmap_lock held
 * @start: first byte, page aligned
 * @end:   byte after the last
 *
 * Private anonymous pages move, and never-touched ones are made on the
 * device, cleared; pages the kernel does not move (shared, file, pinned,
 * busy) stay where they are.  Full device memory is made room in by
 * eviction; what still does not fit stays too.
 *
 * Return: 0, -ENOMEM, or migrate_vma_setup()'s -EINVAL for a VMA it does
 * not handle (the pages then all stay).
 */
int accmap_devmem_to_device(struct accmap_devmem *dm,
			    struct accmap_devmem_owner *owner,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end)
{
	return devmem_walk(dm, owner, vma, start, end, devmem_to_device_step);
}

/* One step of accmap_devmem_to_system(). */
static int devmem_to_system_step(struct accmap_devmem *dm,
				 struct accmap_devmem_owner *owner,
				 struct vm_area_struct *vma,
				 unsigned long start, unsigned long end,
				 unsigned long *src, unsigned long *dst)
{
	unsigned long n = (end - start) >> PAGE_SHIFT;
	struct migrate_vma args = {
		.vma = vma,
		.start = start,
		.end = end,
		.src = src,
		.dst = dst,
		.pgmap_owner = dm,
		.flags = dm->private ? MIGRATE_VMA_SELECT_DEVICE_PRIVATE :
				       MIGRATE_VMA_SELECT_DEVICE_COHERENT,
	};
	int ret = 0;

	if (migrate_vma_setup(&args))
		return 0;
	/* cpages counts holes too: copy_out looks at every entry. */
	if (args.cpages &&
	    devmem_copy_out(dm, src, dst, n, GFP_HIGHUSER_MOVABLE))
		ret = -ENOMEM;
	migrate_vma_pages(&args);
	devmem_count_out(dm, src, dst, n, false, false);
	migrate_vma_finalize(&args);
	return ret;
}

/**
 * accmap_devmem_to_system() - bring a VMA's device pages back
 * @dm:    the device memory
 * @vma:   the VMA holding [@start, @end); its mm's mmap_lock held
 * @start: first byte, page aligned
 * @end:   byte after the last
 *
 * Return: 0, or -ENOMEM if some page could not be brought back (it stays
 * on the device, still correct).
 */
int accmap_devmem_to_system(struct accmap_devmem *dm,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end)
{
	return devmem_walk(dm, NULL, vma, start, end, devmem_to_system_step);
}

/**
 * accmap_devmem_range_to_system() - bring a range's device pages back
 * @dm:    the device memory, or NULL (nothing to do)
 * @mm:    the address space; its mmap_lock held
 * @start: first byte, page aligned
 * @end:   byte after the last, page aligned
 *
 * For FROM_VA, before it pins: a pin must hold system memory.
 *
 * Return: 0 or -ENOMEM.
 */
int accmap_devmem_range_to_system(struct accmap_devmem *dm,
				  struct mm_struct *mm, unsigned long start,
				  unsigned long end)
{
	struct vm_area_struct *vma;
	unsigned long a = start;
	int ret = 0;

	/* Nothing placed: no migration walk (it would invalidate the range). */
	if (!dm || accmap_devmem_pool_free(&dm->pool) == dm->nr)
		return 0;
	lockdep_assert_held(&mm->mmap_lock);
	while (a < end) {
		vma = find_vma(mm, a);
		if (!vma || vma->vm_start >= end)
			break;
		a = max(a, vma->vm_start);
		if (vma_is_anonymous(vma)) {
			int err = accmap_devmem_to_system(dm, vma, a,
							  min(end, vma->vm_end));

			if (err)
				ret = err;
		}
		a = min(end, vma->vm_end);
	}
	return ret;
}

/**
 * accmap_devmem_query_heap() - QUERY_HEAP of ACCMAP_HEAP_DEVICE
 * @dm:   the device memory, or NULL
 * @info: filled in (heap and pad left as they are)
 *
 * Return: 0, or -ENODEV without device memory.
 */
int accmap_devmem_query_heap(struct accmap_devmem *dm,
			     struct accmap_heap_info *info)
{
	u64 free;

	if (!dm)
		return -ENODEV;
	free = (u64)accmap_devmem_pool_free(&dm->pool) << PAGE_SHIFT;
	strscpy(info->name, "device", sizeof(info->name));
	info->total = dm->size;
	info->free = free;
	info->used = dm->size - free;
	/* Pages are placed one by one: any free page can be had. */
	info->largest_free = free;
	return 0;
}

/**
 * accmap_devmem_debugfs_show() - a target's debugfs file "devmem"
 * @m:      the file; its private data is the device memory
 * @unused: unused
 *
 * Its kind, size, use and evictions, then one row per session that has
 * or had pages there and whose counters live: pid, comm, session, bytes
 * on the device, pages migrated to it, back, brought back by CPU faults,
 * evicted.
 *
 * Return: 0.
 */
int accmap_devmem_debugfs_show(struct seq_file *m, void *unused)
{
	struct accmap_devmem *dm = m->private;
	struct accmap_devmem_owner *o;
	unsigned long flags;
	u64 free;

	if (!dm)
		return 0;
	free = (u64)accmap_devmem_pool_free(&dm->pool) << PAGE_SHIFT;
	seq_printf(m, "kind\t%s\n", dm->private ? "private" : "coherent");
	seq_printf(m, "total\t%llu\n", dm->size);
	seq_printf(m, "used\t%llu\n", dm->size - free);
	seq_printf(m, "evictions\t%lld\n",
		   (long long)atomic64_read(&dm->evictions));
	seq_puts(m, "pid\tcomm\tsession\ton_device\tto_device\tto_system\tcpu_faults\tevictions\n");
	spin_lock_irqsave(&dm->lock, flags);
	list_for_each_entry(o, &dm->owners, node)
		seq_printf(m, "%d\t%s\t%u\t%lld\t%lld\t%lld\t%lld\t%lld\n",
			   o->pid, o->comm, READ_ONCE(o->session),
			   (long long)atomic64_read(&o->on_device) << PAGE_SHIFT,
			   (long long)atomic64_read(&o->to_device),
			   (long long)atomic64_read(&o->to_system),
			   (long long)atomic64_read(&o->cpu_faults),
			   (long long)atomic64_read(&o->evictions));
	spin_unlock_irqrestore(&dm->lock, flags);
	return 0;
}

/*
 * Parses devmem=<size>@<base> with the carveout parameter's parser (no
 * silently wrapped number, no range past the address space), then asks
 * for 2 MiB alignment.
 */
static int devmem_parse(const char *s, phys_addr_t *base, u64 *size)
{
	struct accmap_carveout_spec spec;
	struct accmap_carveout_error err;

	if (strchr(s, ',') || strchr(s, ':') ||
	    accmap_parse_carveouts(s, &spec, 1, &err) != 1 ||
	    !IS_ALIGNED(spec.base | spec.size, SZ_2M))
		return -EINVAL;
	*base = spec.base;
	*size = spec.size;
	return 0;
}

/*
 * Whether a GPU node names @np in its memory-region: then it is that
 * window's device memory, not the model's.
 */
static bool devmem_node_is_gpus(struct device_node *np)
{
	struct device_node *gpu, *mem;
	bool found = false;
	int i;

	for_each_compatible_node(gpu, NULL, "accmap,replay-mmio") {
		for (i = 0; !found; i++) {
			mem = of_parse_phandle(gpu, "memory-region", i);
			if (!mem)
				break;
			found = mem == np;
			of_node_put(mem);
		}
		if (found) {
			of_node_put(gpu);
			break;
		}
	}
	return found;
}

/*
 * The range of an accmap,device-memory node: a /reserved-memory child,
 * not reusable, that the kernel reserved at boot, 2 MiB aligned.  0, or
 * -EINVAL (logged).
 */
static int devmem_of_range(struct device_node *np, phys_addr_t *base,
			   u64 *size)
{
	struct reserved_mem *rmem;

	if (!np->parent || !of_node_name_eq(np->parent, "reserved-memory")) {
		pr_err("%pOF: not a child of /reserved-memory\n", np);
		return -EINVAL;
	}
	if (of_property_read_bool(np, "reusable")) {
		pr_err("%pOF: reusable memory is lent to the page allocator; it cannot be device memory\n",
		       np);
		return -EINVAL;
	}
	rmem = of_reserved_mem_lookup(np);
	if (!rmem) {
		pr_err("%pOF: the kernel reserved no memory for this node at boot\n",
		       np);
		return -EINVAL;
	}
	if (!rmem->size || !IS_ALIGNED(rmem->base | rmem->size, SZ_2M)) {
		pr_err("%pOF: base and size must be 2 MiB multiples\n", np);
		return -EINVAL;
	}
	*base = rmem->base;
	*size = rmem->size;
	return 0;
}

/*
 * The model's device memory in the device tree: one available
 * /reserved-memory child compatible with "accmap,device-memory" that no
 * GPU node names.  0 with *@size 0 if there is none; -EINVAL (logged) for
 * a bad node or more than one.
 */
static int devmem_find_of(phys_addr_t *base, u64 *size)
{
	struct device_node *np, *found = NULL;
	int ret = -EINVAL;

	*size = 0;
	for_each_compatible_node(np, NULL, "accmap,device-memory") {
		if (!of_device_is_available(np) || devmem_node_is_gpus(np))
			continue;
		if (found) {
			pr_err("%pOF: a second accmap,device-memory node (%pOF is the first)\n",
			       np, found);
			of_node_put(np);
			goto out;
		}
		found = of_node_get(np);
	}
	if (!found)
		return 0;
	ret = devmem_of_range(found, base, size);
out:
	of_node_put(found);
	return ret;
}

/*
 * Where the model's device memory is: devmem=, else the device tree.  0
 * with *@size 0 if neither says; -EINVAL (logged) if both do or either is
 * bad.
 */
static int devmem_find(phys_addr_t *base, u64 *size)
{
	phys_addr_t of_base;
	u64 of_size;
	int ret;

	ret = devmem_find_of(&of_base, &of_size);
	if (ret)
		return ret;
	if (!devmem || !*devmem) {
		*base = of_base;
		*size = of_size;
		return 0;
	}
	if (of_size) {
		pr_err("devmem=%s: the device tree gives device memory too; use one\n",
		       devmem);
		return -EINVAL;
	}
	if (devmem_parse(devmem, base, size)) {
		pr_err("devmem=%s: not <size>@<base>, both 2 MiB aligned\n",
		       devmem);
		return -EINVAL;
	}
	return 0;
}

/* Refuses memory the kernel uses: System RAM, or pages it allocates. */
static int devmem_check_unused(phys_addr_t base, u64 size)
{
	unsigned long pfn, first = PHYS_PFN(base), n = size >> PAGE_SHIFT;

	if (region_intersects(base, size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT)
		return -EINVAL;
	for (pfn = first; pfn < first + n; pfn++) {
		if (pfn_valid(pfn) && !PageReserved(pfn_to_page(pfn)))
			return -EINVAL;
		if (!((pfn - first) % 4096))
			cond_resched();
	}
	return 0;
}

/* Hands the pages to the memory manager, private or coherent. */
static int devmem_map_pages(struct accmap_devmem *dm)
{
	void *addr;

	dm->private = IS_ENABLED(CONFIG_DEVICE_PRIVATE);
	if (dm->private) {
		dm->free_res = request_free_mem_region(&iomem_resource, dm->size,
						       "accmap-devmem-pages");
		if (IS_ERR(dm->free_res))
			return PTR_ERR(dm->free_res);
		dm->kva = memremap(dm->base, dm->size, MEMREMAP_WB);
		if (!dm->kva) {
			release_mem_region(dm->free_res->start,
					   resource_size(dm->free_res));
			return -ENOMEM;
		}
		dm->pgmap.type = MEMORY_DEVICE_PRIVATE;
		dm->pgmap.range.start = dm->free_res->start;
		dm->pgmap.range.end = dm->free_res->end;
	} else {
		dm->pgmap.type = MEMORY_DEVICE_COHERENT;
		dm->pgmap.range.start = dm->base;
		dm->pgmap.range.end = dm->base + dm->size - 1;
	}
	dm->pgmap.nr_range = 1;
	dm->pgmap.ops = &devmem_pgmap_ops;
	dm->pgmap.owner = dm;
	addr = memremap_pages(&dm->pgmap, numa_node_id());
	if (IS_ERR(addr)) {
		if (dm->private) {
			memunmap(dm->kva);
			release_mem_region(dm->free_res->start,
					   resource_size(dm->free_res));
		}
		return PTR_ERR(addr);
	}
	dm->pfn_first = PHYS_PFN(dm->pgmap.range.start);
	return 0;
}

static void devmem_unmap_pages(struct accmap_devmem *dm)
{
	memunmap_pages(&dm->pgmap);
	if (dm->private) {
		memunmap(dm->kva);
		release_mem_region(dm->free_res->start,
				   resource_size(dm->free_res));
	}
}

static void devmem_dma_unmap(struct accmap_devmem *dm)
{
	if (!dm->dma_dev)
		return;
	if (dm->resource)
		dma_unmap_resource(dm->dma_dev, dm->addr, dm->size,
				   DMA_BIDIRECTIONAL, 0);
	else
		dma_unmap_page_attrs(dm->dma_dev, dm->addr, dm->size,
				     DMA_BIDIRECTIONAL, DMA_ATTR_SKIP_CPU_SYNC);
	dm->addr = dm->base;
}

/*
 * A window's whole carveout, DMA-mapped for its GPU once its pages exist.
 * Where it has struct pages (coherent pages are the carveout's; a no-map
 * carveout inside a RAM bank has its own), through them, as normal
 * memory.  Without (private pages over memory outside the kernel's map),
 * as a physical resource, and only where no IOMMU translates: an IOMMU
 * would map a resource as MMIO, which a GPU must not cache while the CPU
 * does.  Read-only GPU entries of device pages are read-only in the GPU's
 * tables only.
 */
static int devmem_dma_map(struct accmap_devmem *dm)
{
	unsigned long first = PHYS_PFN(dm->base), last = first + dm->nr - 1;
	struct device *dev = dm->dma_dev;
	dma_addr_t dma;

	if (pfn_valid(first) != pfn_valid(last))
		return -EINVAL;
	dm->resource = !pfn_valid(first);
	if (dm->resource) {
		if (device_iommu_mapped(dev))
			return -EOPNOTSUPP;
		dma = dma_map_resource(dev, dm->base, dm->size,
				       DMA_BIDIRECTIONAL, 0);
	} else {
		dma = dma_map_page_attrs(dev, pfn_to_page(first), 0, dm->size,
					 DMA_BIDIRECTIONAL,
					 DMA_ATTR_SKIP_CPU_SYNC);
	}
	if (dma_mapping_error(dev, dma))
		return -ENOMEM;
	dm->addr = dma;
	/* A 2 MiB run of pages must be a 2 MiB block for the GPU too. */
	if (!IS_ALIGNED(dma, SZ_2M)) {
		devmem_dma_unmap(dm);
		return -EINVAL;
	}
	return 0;
}

/*
 * Makes the device memory of target @name over [@base, + @size): for the
 * model (@dma_dev NULL) or for a window's GPU.  Errors are logged.
 */
static int devmem_new(struct accmap_device *adev, const char *name,
		      struct device *dma_dev, phys_addr_t base, u64 size,
		      struct accmap_devmem **out)
{
	struct accmap_devmem *dm;
	int ret;

	if (devmem_check_unused(base, size)) {
		pr_err("%s: device memory %pa+%#llx: memory the kernel uses; reserve it first (memmap=, no-map, or above mem=)\n",
		       name, &base, size);
		return -EINVAL;
	}
	if (accmap_carveout_overlaps(adev, base, size)) {
		pr_err("%s: device memory %pa+%#llx: overlaps carveout '%s'\n",
		       name, &base, size,
		       accmap_carveout_overlaps(adev, base, size));
		return -EINVAL;
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return -ENOMEM;
	dm->base = base;
	dm->addr = base;
	dm->dma_dev = dma_dev;
	dm->name = name;
	dm->size = size;
	dm->nr = size >> PAGE_SHIFT;
	spin_lock_init(&dm->lock);
	INIT_LIST_HEAD(&dm->owners);
	atomic64_set(&dm->evictions, 0);
	ret = accmap_devmem_pool_init(&dm->pool, dm->nr);
	if (ret)
		goto err_free;
	dm->res = request_mem_region(base, size, "accmap-devmem");
	if (!dm->res) {
		pr_err("%s: device memory %pa+%#llx: the range is taken\n",
		       name, &base, size);
		ret = -EBUSY;
		goto err_pool;
	}
	ret = devmem_map_pages(dm);
	if (ret) {
		pr_err("%s: device memory %pa+%#llx: the kernel refused the pages (%d)\n",
		       name, &base, size, ret);
		goto err_res;
	}
	if (dma_dev) {
		ret = devmem_dma_map(dm);
		if (ret) {
			pr_err("%s: device memory %pa+%#llx: no 2 MiB aligned DMA mapping for the GPU%s (%d)\n",
			       name, &base, size,
			       ret == -EOPNOTSUPP ? " behind its IOMMU without struct pages" : "",
			       ret);
			goto err_pages;
		}
	}
	pr_info("%s: device memory: %llu MiB, %s\n", name, size >> 20,
		dm->private ? "private" : "coherent");
	*out = dm;
	return 0;

err_pages:
	devmem_unmap_pages(dm);
err_res:
	release_mem_region(base, size);
err_pool:
	accmap_devmem_pool_fini(&dm->pool);
err_free:
	kfree(dm);
	return ret;
}

/**
 * accmap_devmem_create() - the sim target's device memory, if configured
 * @adev: the device
 * @out:  the device memory, or NULL when neither devmem= nor the device
 *        tree gives any
 *
 * Return: 0, or -EINVAL for a bad devmem= or device-tree node, or both
 * (logged), -EBUSY if the range is taken, -ENOMEM, or memremap_pages()'s
 * error.
 */
int accmap_devmem_create(struct accmap_device *adev,
			 struct accmap_devmem **out)
{
	phys_addr_t base;
	u64 size;
	int ret;

	*out = NULL;
	ret = devmem_find(&base, &size);
	if (ret || !size)
		return ret;
	return devmem_new(adev, "sim", NULL, base, size, out);
}

/**
 * accmap_devmem_create_gpu() - a window's device memory, if its node has any
 * @adev: the device
 * @dev:  the window's GPU; dma-coherent
 * @name: the target's name, kept for the log
 * @out:  the device memory, or NULL when the node's memory-region names
 *        no accmap,device-memory node
 *
 * Return: 0, or as accmap_devmem_create() (logged).
 */
int accmap_devmem_create_gpu(struct accmap_device *adev, struct device *dev,
			     const char *name, struct accmap_devmem **out)
{
	struct device_node *np = devmem_gpu_node(dev);
	phys_addr_t base;
	u64 size;
	int ret;

	*out = NULL;
	if (!np)
		return 0;
	ret = devmem_of_range(np, &base, &size);
	of_node_put(np);
	if (ret)
		return ret;
	return devmem_new(adev, name, dev, base, size, out);
}

/**
 * accmap_devmem_destroy() - bring every page back and give the memory up
 * @dm: the device memory, or NULL
 *
 * At unload: no session is left, but processes may still map device
 * pages; they are evicted to system memory first.
 */
void accmap_devmem_destroy(struct accmap_devmem *dm)
{
	int tries;

	if (!dm)
		return;
	for (tries = 0; tries < DEVMEM_UNLOAD_TRIES; tries++) {
		unsigned long used = dm->nr - accmap_devmem_pool_free(&dm->pool);

		if (!used)
			break;
		/* A page busy now (locked by a fault) is tried again later. */
		if (tries)
			msleep(DEVMEM_UNLOAD_WAIT_MS);
		while (used) {
			unsigned long n = min_t(unsigned long, used,
						DEVMEM_STEP_PAGES);

			devmem_evict(dm, n);
			used -= n;
			cond_resched();
		}
	}
	if (accmap_devmem_pool_free(&dm->pool) != dm->nr)
		pr_warn("%s: unload: %lu device pages still in use, waiting for their processes to let them go\n",
			dm->name, dm->nr - accmap_devmem_pool_free(&dm->pool));
	/* No session is left: the GPU reaches none of it. */
	devmem_dma_unmap(dm);
	/* Waits for every page to be freed. */
	devmem_unmap_pages(dm);
	release_mem_region(dm->base, dm->size);
	accmap_devmem_pool_fini(&dm->pool);
	WARN_ON(!list_empty(&dm->owners));
	kfree(dm);
}
#endif /* ACCMAP_HAVE_DEVMEM */

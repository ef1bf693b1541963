// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: carveout heaps.  A carveout is a reserved physical range, handed
 * out in physically contiguous blocks by the range allocator
 * (range_alloc.c).
 *
 * Carveouts come from the carveout module parameter (see
 * carveout_parse.c), then from the device tree: every available
 * /reserved-memory child compatible with "accmap,carveout".  They take
 * heap ids from ACCMAP_HEAP_CARVEOUT_FIRST up in that order.  Any error in
 * either source fails the module load: a carveout silently missing would
 * move device buffers into the system heap.
 *
 * Nothing touches a carveout's memory when its heap is created: no
 * zeroing, no cache maintenance.  A block is zeroed through a kernel
 * mapping with the buffer's memory attribute when it is handed out.  A
 * carveout of System RAM gives each block its own mapping (the linear
 * map for a cached one, a write-combined vmap() otherwise), which goes
 * when the block comes back.  A no_cached carveout, whose buffers are all
 * write-combined or uncached, is mapped write-combined once, whole, when
 * its heap is created, and its blocks are parts of that mapping: an
 * ioremap() per allocation would reserve a memory type and a vmalloc area
 * every time, work that can fail (and, in vmalloc, warn) for no reason
 * the caller could do anything about.
 *
 * What the kernel knows about the memory decides what a carveout offers:
 *
 *  - System RAM that the kernel maps and keeps reserved (a reserved-memory
 *    node without no-map): struct pages and a cached alias in the linear
 *    map.  Every memory attribute; devices map it through its pages.
 *  - Memory with struct pages outside the linear map (no-map inside a
 *    memory section on arm64, memmap=nn$ss on x86): devices map it
 *    through its pages, but the DMA API maintains CPU caches through the
 *    linear map, which does not cover it.
 *  - Memory without struct pages (in a memory section of its own, beyond
 *    mem=): devices map it with dma_map_resource().
 *
 * In the last two cases the heap is no_cached: it gives write-combined
 * and uncached buffers only, since nothing could keep the caches of a
 * cached one coherent with devices.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/of.h>
#include <linux/of_reserved_mem.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "accmap.h"
#include "range_alloc.h"

static char *carveout;
module_param(carveout, charp, 0444);
MODULE_PARM_DESC(carveout,
		 "Carveout heaps: <size>@<base>[:<name>][,...], sizes as for memparse (e.g. 64M@0x70000000:cam)");

/**
 * struct carveout_heap - one carveout
 * @heap: the heap as the core sees it
 * @name: storage for @heap.name
 * @base: first byte of the carveout
 * @size: bytes in the carveout
 * @has_pages: the memory has struct pages
 * @kva: a no_cached heap's whole carveout, mapped write-combined for the
 *       heap's life; NULL for other heaps
 * @lock: protects @range, the free space, against concurrent ALLOC, the
 *        release of buffers and QUERY_HEAP
 * @range: free space of the carveout
 */
struct carveout_heap {
	struct accmap_heap heap;
	char name[ACCMAP_HEAP_NAME_LEN];
	phys_addr_t base;
	u64 size;
	bool has_pages;
	void *kva;
	struct mutex lock;	/* protects @range */
	struct accmap_range range;
};

static struct carveout_heap *to_carveout(struct accmap_heap *heap)
{
	return container_of(heap, struct carveout_heap, heap);
}

/* The first struct page of a block of memory the linear map covers. */
static struct page *carveout_first_page(struct accmap_handle *handle)
{
	return pfn_to_page(PHYS_PFN(handle->phys));
}

/*
 * memremap() refuses a write-combined alias of System RAM (some CPUs do
 * not allow two attributes for one page); the pages themselves can still
 * be mapped write-combined, as the system heap does.
 */
static void *carveout_vmap_wc(struct accmap_handle *handle)
{
	unsigned long pfn = PHYS_PFN(handle->phys);
	struct page **pages;
	unsigned long i;
	void *vaddr;

	pages = kvmalloc_array(handle->npages, sizeof(*pages),
			       GFP_KERNEL | __GFP_NOWARN);
	if (!pages)
		return NULL;
	for (i = 0; i < handle->npages; i++)
		pages[i] = pfn_to_page(pfn + i);
	vaddr = vmap(pages, handle->npages, VM_MAP,
		     accmap_pgprot(handle, PAGE_KERNEL));
	kvfree(pages);
	return vaddr;
}

/* The kernel mapping of a block, with the buffer's memory attribute. */
static void *carveout_map(struct carveout_heap *co,
			  struct accmap_handle *handle)
{
	if (co->kva)
		return co->kva + (handle->phys - co->base);
	if (accmap_handle_cached(handle))
		return memremap(handle->phys, handle->size, MEMREMAP_WB);
	return carveout_vmap_wc(handle);
}

static void carveout_unmap(struct carveout_heap *co,
			   struct accmap_handle *handle)
{
	/* A no_cached heap's block is part of the heap's mapping. */
	if (!co->kva && accmap_handle_cached(handle))
		memunmap(handle->kaddr);
	else if (!co->kva)
		vunmap(handle->kaddr);
	handle->kaddr = NULL;
}

static void carveout_zero(void *kaddr, u64 size)
{
	u64 off, n;

	for (off = 0; off < size; off += n) {
		n = min_t(u64, size - off, SZ_1M);
		memset(kaddr + off, 0, n);
		cond_resched();
	}
}

/* Gives the block of @handle back to the allocator. */
static void carveout_put_block(struct carveout_heap *co,
			       struct accmap_handle *handle)
{
	mutex_lock(&co->lock);
	accmap_range_free(&co->range, handle->heap_priv);
	mutex_unlock(&co->lock);
	handle->heap_priv = NULL;
	handle->phys = 0;
	handle->npages = 0;
	handle->phys_has_pages = false;
	handle->contiguous = false;
}

/*
 * Return: 0; -EINVAL for a cached buffer from a no_cached heap (ALLOC
 * never asks); -ENOSPC if no free extent holds the block at @align;
 * -ENOMEM if the block could not be mapped.
 */
static int carveout_alloc(struct accmap_heap *heap,
			  struct accmap_handle *handle, u32 align)
{
	struct carveout_heap *co = to_carveout(heap);
	struct accmap_range_block *blk;
	int ret;

	if (heap->no_cached && accmap_handle_cached(handle))
		return -EINVAL;

	mutex_lock(&co->lock);
	blk = accmap_range_alloc(&co->range, handle->size, align);
	mutex_unlock(&co->lock);
	if (IS_ERR(blk))
		return PTR_ERR(blk);

	handle->phys = blk->start;
	handle->npages = handle->size >> PAGE_SHIFT;
	handle->pages = NULL;
	handle->phys_has_pages = co->has_pages;
	handle->heap_priv = blk;
	handle->contiguous = true;

	/*
	 * A write-combined or uncached block of memory the linear map
	 * covers must not keep lines of that cached alias, left by an
	 * earlier cached buffer, to be written back over it later: clean
	 * and invalidate them before the zeroing, which a late write-back
	 * would otherwise undo.
	 */
	if (!heap->no_cached && !accmap_handle_cached(handle)) {
		ret = accmap_cache_flush(&heap->adev->cache,
					 carveout_first_page(handle), 0,
					 handle->size);
		if (ret)
			goto err_put_block;
	}

	handle->kaddr = carveout_map(co, handle);
	if (!handle->kaddr) {
		ret = -ENOMEM;
		goto err_put_block;
	}
	carveout_zero(handle->kaddr, handle->size);

	/*
	 * A cached block was zeroed through the cache: write the zeroes
	 * back, so that no invalidate can uncover the earlier contents.
	 */
	if (accmap_handle_cached(handle)) {
		ret = accmap_cache_clean(&heap->adev->cache,
					 carveout_first_page(handle), 0,
					 handle->size);
		if (ret)
			goto err_unmap;
	}
	return 0;

err_unmap:
	carveout_unmap(co, handle);
err_put_block:
	carveout_put_block(co, handle);
	return ret;
}

static void carveout_free(struct accmap_heap *heap,
			  struct accmap_handle *handle)
{
	struct carveout_heap *co = to_carveout(heap);

	carveout_unmap(co, handle);
	carveout_put_block(co, handle);
}

static void carveout_query(struct accmap_heap *heap,
			   struct accmap_heap_info *info)
{
	struct carveout_heap *co = to_carveout(heap);

	mutex_lock(&co->lock);
	info->total = co->range.size;
	info->free = co->range.free_bytes;
	info->largest_free = accmap_range_largest(&co->range);
	mutex_unlock(&co->lock);
}

static const struct accmap_heap_ops carveout_heap_ops = {
	.alloc = carveout_alloc,
	.free = carveout_free,
	.query = carveout_query,
};

/*
 * Whether [base, base + size) lies in one region of /reserved-memory
 * that is not lent to the page allocator.  Reserved System RAM is
 * PageReserved, but so are the kernel image, its page tables and every
 * other boot-time reservation: only the device tree says which reserved
 * RAM is set aside for devices.
 */
static bool carveout_in_reserved_memory(phys_addr_t base, u64 size)
{
	struct device_node *parent, *np;
	bool found = false;

	parent = of_find_node_by_path("/reserved-memory");
	if (!parent)
		return false;
	for_each_available_child_of_node(parent, np) {
		struct reserved_mem *rmem = of_reserved_mem_lookup(np);

		if (rmem && !of_property_read_bool(np, "reusable") &&
		    base >= rmem->base &&
		    base + size <= (u64)rmem->base + rmem->size) {
			found = true;
			of_node_put(np);
			break;
		}
	}
	of_node_put(parent);
	return found;
}

/*
 * Finds out what the kernel knows about the carveout's memory (see the
 * top of this file) and refuses memory the kernel may use: pages the page
 * allocator owns, and System RAM outside the device tree's reserved
 * regions.
 */
static int carveout_probe_memory(struct carveout_heap *co)
{
	unsigned long first = PHYS_PFN(co->base);
	unsigned long n = co->size >> PAGE_SHIFT;
	unsigned long i, valid = 0;
	int ram;

	for (i = 0; i < n; i++) {
		if (!pfn_valid(first + i))
			continue;
		valid++;
		/* Boot-time reservations and holes are PageReserved. */
		if (!PageReserved(pfn_to_page(first + i))) {
			pr_err("carveout '%s': memory the kernel allocates from; reserve it first (reserved-memory node, memmap=)\n",
			       co->name);
			return -EINVAL;
		}
		if (!(i % 4096))
			cond_resched();
	}
	if (valid && valid != n) {
		pr_err("carveout '%s': part of it has struct pages and part has not; split it where that changes\n",
		       co->name);
		return -EINVAL;
	}

	ram = region_intersects(co->base, co->size, IORESOURCE_SYSTEM_RAM,
				IORES_DESC_NONE);
	if (ram == REGION_MIXED || (ram == REGION_INTERSECTS && !valid)) {
		pr_err("carveout '%s': part of it is System RAM and part is not; split it where that changes\n",
		       co->name);
		return -EINVAL;
	}

	if (ram == REGION_INTERSECTS &&
	    !carveout_in_reserved_memory(co->base, co->size)) {
		pr_err("carveout '%s': System RAM outside every /reserved-memory region; the kernel may use it\n",
		       co->name);
		return -EINVAL;
	}

	co->has_pages = valid;
	co->heap.no_cached = ram != REGION_INTERSECTS;
	return 0;
}

static void carveout_heap_destroy(struct carveout_heap *co)
{
	WARN_ON(atomic64_read(&co->heap.used));
	if (co->kva)
		memunmap(co->kva);
	accmap_range_destroy(&co->range);
	mutex_destroy(&co->lock);
	kfree(co);
}

static int carveout_heap_add(struct accmap_device *adev,
			     const struct accmap_carveout_spec *spec, u32 id)
{
	struct carveout_heap *co;
	const char *what;
	u32 other;
	int ret;

	for (other = 0; other < ACCMAP_HEAP_MAX; other++) {
		if (adev->heaps[other] &&
		    !strcmp(adev->heaps[other]->name, spec->name)) {
			pr_err("carveout '%s': heap %u has that name already\n",
			       spec->name, other);
			return -EINVAL;
		}
	}

	co = kzalloc(sizeof(*co), GFP_KERNEL);
	if (!co)
		return -ENOMEM;
	strscpy(co->name, spec->name, sizeof(co->name));
	co->base = spec->base;
	co->size = spec->size;
	mutex_init(&co->lock);
	co->heap.id = id;
	co->heap.name = co->name;
	co->heap.ops = &carveout_heap_ops;
	/* All of it, or none: ALLOC takes any part of the range. */
	co->heap.dma32 = co->base + co->size <= SZ_4G ? co->size : 0;
	co->heap.adev = adev;
	atomic64_set(&co->heap.used, 0);

	ret = carveout_probe_memory(co);
	if (ret)
		goto err_free_heap;
	if (co->heap.no_cached) {
		co->kva = memremap(co->base, co->size, MEMREMAP_WC);
		if (!co->kva) {
			pr_err("carveout '%s': cannot map it write-combined\n",
			       co->name);
			ret = -ENOMEM;
			goto err_free_heap;
		}
	}
	ret = accmap_range_init(&co->range, co->base, co->size, PAGE_SIZE);
	if (ret)
		goto err_unmap;
	ret = accmap_device_add_heap(adev, &co->heap);
	if (ret)
		goto err_destroy_range;

	if (!co->heap.no_cached)
		what = "cached, write-combined and uncached buffers";
	else if (co->has_pages)
		what = "write-combined and uncached only (outside the linear map)";
	else
		what = "write-combined and uncached only (no struct pages)";
	pr_info("heap %u '%s': %llu KiB carveout, %s\n", id, co->name,
		co->size >> 10, what);
	return 0;

err_destroy_range:
	accmap_range_destroy(&co->range);
err_unmap:
	if (co->kva)
		memunmap(co->kva);
err_free_heap:
	mutex_destroy(&co->lock);
	kfree(co);
	return ret;
}

/*
 * Appends the device tree's carveouts to @specs, which holds @n already.
 *
 * Return: the new number of carveouts, or -EINVAL.
 */
static int carveout_collect_of(struct accmap_carveout_spec *specs, int n)
{
	struct device_node *np;

	for_each_compatible_node(np, NULL, "accmap,carveout") {
		struct accmap_carveout_spec *spec = &specs[n];
		enum accmap_carveout_err code;
		struct reserved_mem *rmem;
		const char *label;

		if (!of_device_is_available(np))
			continue;
		if (n == ACCMAP_HEAP_CARVEOUT_MAX) {
			pr_err("%pOF: more than %d carveouts\n", np,
			       ACCMAP_HEAP_CARVEOUT_MAX);
			goto err_put_node;
		}
		if (!np->parent || !of_node_name_eq(np->parent, "reserved-memory")) {
			pr_err("%pOF: not a child of /reserved-memory\n", np);
			goto err_put_node;
		}
		if (of_property_read_bool(np, "reusable")) {
			pr_err("%pOF: reusable memory is lent to the page allocator; a carveout cannot be\n",
			       np);
			goto err_put_node;
		}
		rmem = of_reserved_mem_lookup(np);
		if (!rmem) {
			pr_err("%pOF: the kernel reserved no memory for this node at boot\n",
			       np);
			goto err_put_node;
		}

		memset(spec, 0, sizeof(*spec));
		spec->base = rmem->base;
		spec->size = rmem->size;
		if (!of_property_read_string(np, "label", &label)) {
			if (!accmap_carveout_name_valid(label)) {
				pr_err("%pOF: label \"%s\": %s\n", np, label,
				       accmap_carveout_strerror(ACCMAP_CARVEOUT_NAME));
				goto err_put_node;
			}
			strscpy(spec->name, label, sizeof(spec->name));
		}
		code = accmap_check_carveout(spec);
		if (code) {
			pr_err("%pOF: %s\n", np, accmap_carveout_strerror(code));
			goto err_put_node;
		}
		accmap_carveout_default_name(spec, n);
		n++;
	}
	return n;

err_put_node:
	of_node_put(np);
	return -EINVAL;
}

/**
 * accmap_carveout_heaps_create() - add the configured carveout heaps
 * @adev: the device, not yet registered, with its system heap
 *
 * Reads the carveout module parameter and the device tree, checks every
 * carveout and adds one heap per carveout.  On failure none is left.
 *
 * Return: 0 (also when there is no carveout); -EINVAL for a carveout that
 * is malformed, overlaps another, reuses a name, or is memory the kernel
 * uses or cannot tell apart (the reason is logged); -ENOMEM.
 */
int accmap_carveout_heaps_create(struct accmap_device *adev)
{
	struct accmap_carveout_spec *specs;
	struct accmap_carveout_error err;
	int n, i, ret;

	specs = kcalloc(ACCMAP_HEAP_CARVEOUT_MAX, sizeof(*specs), GFP_KERNEL);
	if (!specs)
		return -ENOMEM;

	n = accmap_parse_carveouts(carveout, specs, ACCMAP_HEAP_CARVEOUT_MAX,
				   &err);
	if (n < 0) {
		if (err.other >= 0)
			pr_err("carveout=%s: entry %d: %s: entry %d\n", carveout,
			       err.entry + 1, accmap_carveout_strerror(err.code),
			       err.other + 1);
		else
			pr_err("carveout=%s: entry %d: %s\n", carveout,
			       err.entry + 1, accmap_carveout_strerror(err.code));
		ret = -EINVAL;
		goto out_free_specs;
	}
	ret = carveout_collect_of(specs, n);
	if (ret < 0)
		goto out_free_specs;
	n = ret;
	ret = accmap_check_carveouts(specs, n, &err);
	if (ret) {
		pr_err("carveout '%s': %s: '%s'\n", specs[err.entry].name,
		       accmap_carveout_strerror(err.code),
		       specs[err.other].name);
		goto out_free_specs;
	}

	for (i = 0; i < n; i++) {
		ret = carveout_heap_add(adev, &specs[i],
					ACCMAP_HEAP_CARVEOUT_FIRST + i);
		if (ret) {
			accmap_carveout_heaps_destroy(adev);
			break;
		}
	}

out_free_specs:
	kfree(specs);
	return ret;
}

/**
 * accmap_carveout_overlaps() - whether a range overlaps a carveout heap
 * @adev: the device, its carveout heaps made
 * @base: first byte
 * @size: bytes, not 0, @base + @size not wrapping
 *
 * For other users of reserved memory (device memory) at load.
 *
 * Return: the name of the first carveout it overlaps, or NULL.
 */
const char *accmap_carveout_overlaps(struct accmap_device *adev,
				     phys_addr_t base, u64 size)
{
	u32 id;

	for (id = ACCMAP_HEAP_CARVEOUT_FIRST;
	     id < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; id++) {
		struct accmap_heap *heap = adev->heaps[id];
		struct carveout_heap *co;

		if (!heap || heap->ops != &carveout_heap_ops)
			continue;
		co = to_carveout(heap);
		if (base < co->base + co->size && co->base < base + size)
			return co->name;
	}
	return NULL;
}

/**
 * accmap_carveout_heaps_destroy() - remove and free every carveout heap
 * @adev: the device, no longer registered; no buffer may still use a
 *        carveout
 */
void accmap_carveout_heaps_destroy(struct accmap_device *adev)
{
	u32 id;

	for (id = ACCMAP_HEAP_CARVEOUT_FIRST;
	     id < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; id++) {
		struct accmap_heap *heap = adev->heaps[id];

		if (!heap || heap->ops != &carveout_heap_ops)
			continue;
		accmap_device_remove_heap(adev, heap);
		carveout_heap_destroy(to_carveout(heap));
	}
}

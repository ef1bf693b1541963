/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: the few kernel interfaces that changed between the kernels
 * accmap builds against, behind one spelling each.
 *
 * Which interfaces the kernel has is found by Kbuild in its headers
 * (ACCMAP_HAVE_* in drivers/accmap/Kbuild), not from version numbers,
 * so that distribution kernels with backports build too.
 */
#ifndef _ACCMAP_COMPAT_H
#define _ACCMAP_COMPAT_H

#include <linux/cred.h>
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/sched/user.h>
#ifdef ACCMAP_HAVE_PFN_T
#include <linux/pfn_t.h>
#endif
#include <linux/shrinker.h>
#include <linux/slab.h>

/* ALIGN() and DIV_ROUND_UP() and friends were in linux/kernel.h. */
#ifdef ACCMAP_HAVE_ALIGN_H
#include <linux/align.h>
#endif
#ifdef ACCMAP_HAVE_MATH_H
#include <linux/math.h>
#endif
#if !defined(ACCMAP_HAVE_ALIGN_H) || !defined(ACCMAP_HAVE_MATH_H)
#include <linux/kernel.h>
#endif

/*
 * struct user_struct has locked_vm, the per-user count of pinned pages
 * that io_uring and BPF charge against RLIMIT_MEMLOCK, when Kbuild found
 * its guard naming CONFIG_NET and CONFIG_IO_URING and the kernel has one
 * of them (every Debian kernel: they all have networking).
 */
#if defined(ACCMAP_HAVE_USER_LOCKED_VM) && \
	(defined(CONFIG_NET) || defined(CONFIG_IO_URING))
#define ACCMAP_USER_LOCKED_VM
#endif

/**
 * struct accmap_user_ref - a counted reference to the user of a task
 * @user: the user (its real uid's struct user_struct), which outlives
 *        every process of it as long as the reference is held
 * @cred: where modules cannot drop a reference to a user (free_uid() not
 *        exported, 5.10), the task's credentials, held instead: they
 *        hold their user
 */
struct accmap_user_ref {
	struct user_struct *user;
#ifndef ACCMAP_HAVE_FREE_UID
	const struct cred *cred;
#endif
};

/**
 * accmap_user_ref_get() - take a reference to the current task's user
 * @ref: filled; dropped with accmap_user_ref_put()
 */
static inline void accmap_user_ref_get(struct accmap_user_ref *ref)
{
#ifdef ACCMAP_HAVE_FREE_UID
	ref->user = get_uid(current_user());
#else
	ref->cred = get_current_cred();
	ref->user = ref->cred->user;
#endif
}

/**
 * accmap_user_ref_put() - drop a reference of accmap_user_ref_get()
 * @ref: the reference; its @user is NULL after
 *
 * Does not sleep: a last put of the credentials goes through RCU
 * (get_cred() saw to that).
 */
static inline void accmap_user_ref_put(struct accmap_user_ref *ref)
{
#ifdef ACCMAP_HAVE_FREE_UID
	free_uid(ref->user);
#else
	put_cred(ref->cred);
	ref->cred = NULL;
#endif
	ref->user = NULL;
}

/*
 * Whether this is a confidential-computing guest (AMD SEV, Intel TDX, an
 * Arm realm): its memory is encrypted against the host, and the DMA API
 * hands out memory shared with the host (decrypted) for devices.  A host
 * that only encrypts its own memory (AMD SME) is not one.
 */
#ifdef ACCMAP_HAVE_CC_PLATFORM
#include <linux/cc_platform.h>
static inline bool accmap_cc_guest(void)
{
	return cc_platform_has(CC_ATTR_MEM_ENCRYPT) &&
	       !cc_platform_has(CC_ATTR_HOST_MEM_ENCRYPT);
}
#else
static inline bool accmap_cc_guest(void)
{
	return false;
}
#endif

/*
 * What dma_buf_ops.vmap fills in, from 5.11 on: a struct dma_buf_map, a
 * struct iosys_map from 5.18 (the same, renamed).  Up to 5.10 the
 * callback returns the address instead (ACCMAP_VMAP_ADDR).  Kbuild
 * reads which from the callback's declaration.
 */
#if defined(ACCMAP_VMAP_IOSYS_MAP)
#include <linux/iosys-map.h>
#define accmap_vmap_map			iosys_map
#define accmap_vmap_map_set_vaddr	iosys_map_set_vaddr
#define accmap_vmap_map_clear		iosys_map_clear
#elif defined(ACCMAP_VMAP_DMA_BUF_MAP)
#include <linux/dma-buf-map.h>
#define accmap_vmap_map			dma_buf_map
#define accmap_vmap_map_set_vaddr	dma_buf_map_set_vaddr
#define accmap_vmap_map_clear		dma_buf_map_clear
#elif !defined(ACCMAP_VMAP_ADDR)
#error "accmap: Kbuild did not say what dma_buf_ops.vmap takes"
#endif

/* The namespace of the dma-buf core's symbols; a string from 6.13 on. */
#ifdef ACCMAP_HAVE_IMPORT_NS_TOKEN
#define ACCMAP_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#else
#define ACCMAP_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#endif

/*
 * The largest order the page allocator hands out, inclusive.  MAX_ORDER
 * was exclusive before 6.4 and inclusive until its rename to
 * MAX_PAGE_ORDER in 6.8; MAX_ORDER - 1 is right or one too cautious.
 */
#if defined(MAX_PAGE_ORDER)
#define ACCMAP_MAX_PAGE_ORDER	MAX_PAGE_ORDER
#else
#define ACCMAP_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

/* vm_flags became read-only behind helpers in 6.3. */
#ifndef ACCMAP_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * kmap_local_page() came after 5.10.  Before, a page of a kernel without
 * highmem (every 64-bit one) is always in the linear map, which is what
 * kmap() returned there; local mappings of highmem pages are not
 * emulated (Kbuild refuses such a kernel).
 */
#ifndef ACCMAP_HAVE_KMAP_LOCAL
static inline void *kmap_local_page(struct page *page)
{
	return page_address(page);
}

static inline void kunmap_local(const void *vaddr)
{
}
#endif

/*
 * Whether the page allocator charges __GFP_ACCOUNT memory to memory
 * cgroups at all (not with cgroup.memory=nokmem); the helper was renamed
 * in 6.3.
 */
static inline bool accmap_memcg_kmem_on(void)
{
#ifdef ACCMAP_HAVE_MEMCG_KMEM_ONLINE
	return memcg_kmem_online();
#else
	return memcg_kmem_enabled();
#endif
}

#ifdef ACCMAP_HAVE_ARCH_PTE_PGPROT
/* @vma's protection for an entry of @pfn that is young and dirty already. */
static inline pgprot_t accmap_prot_dirty(struct vm_area_struct *vma,
					 unsigned long pfn)
{
	pte_t pte = pfn_pte(pfn, vma->vm_page_prot);

	return pte_pgprot(pte_mkyoung(pte_mkdirty(pte)));
}
#endif

/*
 * The protection bits of a present entry, memory type included, where
 * the architecture has its own pte_pgprot(); accmap_have_pte_pgprot()
 * says whether it has.
 */
static inline bool accmap_have_pte_pgprot(void)
{
#ifdef ACCMAP_HAVE_ARCH_PTE_PGPROT
	return true;
#else
	return false;
#endif
}

static inline pgprot_t accmap_pte_pgprot(pte_t pte)
{
#ifdef ACCMAP_HAVE_ARCH_PTE_PGPROT
	return pte_pgprot(pte);
#else
	return __pgprot(0);
#endif
}

/**
 * accmap_insert_pfn_dirty() - map a PFN young and dirty in a writable vma
 * @vma: the VM_PFNMAP, VM_WRITE mapping
 * @addr: the user address to map, page aligned
 * @pfn: the page frame to map there
 *
 * CPUs that track dirtiness in software (arm64 without hardware DBM, such
 * as the Cortex-A57) fault once more on the first write to a clean
 * writable entry.  Kernels up to 6.1 export vmf_insert_mixed_mkwrite(),
 * which with a special PFN makes the entry young and dirty; later ones
 * keep it to themselves, and the same entry comes from the vma's
 * protection made young and dirty by the architecture's own pte helpers.
 * Without either (no special PTEs, or no pte_pgprot() of the
 * architecture's) the entry is mapped clean.
 *
 * Return: as vmf_insert_pfn(), VM_FAULT_NOPAGE when the entry is in place.
 */
static inline vm_fault_t accmap_insert_pfn_dirty(struct vm_area_struct *vma,
						 unsigned long addr,
						 unsigned long pfn)
{
#if defined(ACCMAP_HAVE_INSERT_MKWRITE) && defined(ACCMAP_HAVE_PFN_T)
	if (IS_ENABLED(CONFIG_ARCH_HAS_PTE_SPECIAL))
		return vmf_insert_mixed_mkwrite(vma, addr,
						__pfn_to_pfn_t(pfn, PFN_SPECIAL));
#endif
#ifdef ACCMAP_HAVE_ARCH_PTE_PGPROT
	return vmf_insert_pfn_prot(vma, addr, pfn, accmap_prot_dirty(vma, pfn));
#else
	return vmf_insert_pfn(vma, addr, pfn);
#endif
}

/* Shrinkers are allocated by the core from 6.7 on. */
#ifdef ACCMAP_HAVE_SHRINKER_ALLOC
static inline struct shrinker *
accmap_shrinker_create(const char *name,
		       unsigned long (*count)(struct shrinker *,
					      struct shrink_control *),
		       unsigned long (*scan)(struct shrinker *,
					     struct shrink_control *),
		       void *priv)
{
	struct shrinker *s = shrinker_alloc(0, "%s", name);

	if (!s)
		return ERR_PTR(-ENOMEM);
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = DEFAULT_SEEKS;
	s->private_data = priv;
	shrinker_register(s);
	return s;
}

static inline void accmap_shrinker_destroy(struct shrinker *s)
{
	shrinker_free(s);
}

static inline void *accmap_shrinker_priv(struct shrinker *s)
{
	return s->private_data;
}
#else
struct accmap_shrinker {
	struct shrinker shrinker;
	void *priv;
};

static inline struct shrinker *
accmap_shrinker_create(const char *name,
		       unsigned long (*count)(struct shrinker *,
					      struct shrink_control *),
		       unsigned long (*scan)(struct shrinker *,
					     struct shrink_control *),
		       void *priv)
{
	struct accmap_shrinker *as = kzalloc(sizeof(*as), GFP_KERNEL);
	int ret;

	if (!as)
		return ERR_PTR(-ENOMEM);
	as->shrinker.count_objects = count;
	as->shrinker.scan_objects = scan;
	as->shrinker.seeks = DEFAULT_SEEKS;
	as->priv = priv;
#ifdef ACCMAP_HAVE_SHRINKER_NAME
	ret = register_shrinker(&as->shrinker, "%s", name);
#else
	ret = register_shrinker(&as->shrinker);
#endif
	if (ret) {
		kfree(as);
		return ERR_PTR(ret);
	}
	return &as->shrinker;
}

static inline void accmap_shrinker_destroy(struct shrinker *s)
{
	unregister_shrinker(s);
	kfree(container_of(s, struct accmap_shrinker, shrinker));
}

static inline void *accmap_shrinker_priv(struct shrinker *s)
{
	return container_of(s, struct accmap_shrinker, shrinker)->priv;
}
#endif

#ifdef ACCMAP_HAVE_DEVMEM
#include <linux/memremap.h>

/* zone_device_page_init() takes the page's pgmap and an order from 6.18. */
static inline void zone_device_page_init_compat(struct page *page,
						struct dev_pagemap *pgmap)
{
#ifdef ACCMAP_HAVE_ZONE_DEVICE_FOLIO_INIT
	zone_device_page_init(page, pgmap, 0);
#else
	zone_device_page_init(page);
#endif
}
#endif

#endif /* _ACCMAP_COMPAT_H */

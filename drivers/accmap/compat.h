/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: the few kernel interfaces that changed between the kernels
 * accmap builds against (6.1 to 6.12), behind one spelling each.
 *
 * Which interfaces the kernel has is found by Kbuild in its headers
 * (ACCMAP_HAVE_* in drivers/accmap/Kbuild), not from version numbers,
 * so that distribution kernels with backports build too.
 */
#ifndef _ACCMAP_COMPAT_H
#define _ACCMAP_COMPAT_H

#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

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
	ret = register_shrinker(&as->shrinker, "%s", name);
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

#endif /* _ACCMAP_COMPAT_H */

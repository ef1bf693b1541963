/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: the few kernel interfaces that changed between the kernels
 * accmap builds against (6.1 to 6.12), behind one spelling each.
 */
#ifndef _ACCMAP_COMPAT_H
#define _ACCMAP_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/rcupdate.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/version.h>

/* The largest order the page allocator hands out, inclusive. */
#if defined(MAX_PAGE_ORDER)
#define ACCMAP_MAX_PAGE_ORDER	MAX_PAGE_ORDER
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define ACCMAP_MAX_PAGE_ORDER	MAX_ORDER
#else
#define ACCMAP_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

/* vm_flags became read-only behind helpers in 6.3. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Take a reference on @file unless its last reference is already gone
 * (it is being released).  The caller guarantees the memory of @file
 * stays valid while it asks.
 */
static inline bool accmap_get_file_live(struct file *file)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct file *f = file;
	bool live;

	rcu_read_lock();
	live = get_file_active(&f);
	rcu_read_unlock();
	return live;
#else
	return get_file_rcu(file);
#endif
}

/* Shrinkers are allocated by the core from 6.7 on. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
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

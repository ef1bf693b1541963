// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: replay sessions and the replay ioctls.
 *
 * A session maps handle-backed memory into fresh GPU page tables on one
 * target and is then run, any number of times, with lists of register
 * operations.  User space never sees a physical or device address: it
 * names buffers by id, and the page-table root reaches the target's
 * registers only through the WRITE_ROOT operation.
 *
 * A session holds a reference on every buffer it maps, so freeing an id
 * does not pull memory from under the GPU.  Sessions belong to the client
 * that made them and go when it destroys them or closes its file; a run in
 * progress holds its own reference.
 *
 * Isolation.  A session programs only its own address space (the index
 * REPLAY_SETUP named): accmap_replay_check_session_op() holds the rules,
 * checked on every op before a run and again as it runs.  On a target
 * whose address spaces outlive a run (a real GPU), the session's
 * address space keeps what it wrote from one run to the next (a recording
 * replayed in batches configures it in one run and starts jobs in
 * another); the target points it at nothing before a run of another
 * session on the same address space, and when the session goes, so no
 * other session inherits its root (replay_mmio.c).  When a session goes,
 * the target stops what it started (a soft reset on a register window); if that
 * does not complete, the GPU may still read the session's tables and
 * read or write its buffers, so they are kept back on purpose: never
 * freed, counted in the debugfs file "replay", and the module is held.
 * They are freed once a later soft reset of the same target completes.
 *
 * SVM.  A session made with ACCMAP_REPLAY_SETUP_SVM also mirrors a range
 * of its creator's address space (svm.c); only that process may run it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "accmap.h"
#include "devmem.h"
#include "mali_regs.h"
#include "replay.h"
#include "svm.h"

/* Operations the executor runs between two MMU fault checks. */
#define ACCMAP_REPLAY_OPS_CHUNK		128

/**
 * struct accmap_replay_mapping - one mapping of a session
 * @handle:     the buffer, with a reference held by the session
 * @gpu_va:     where it is mapped
 * @offset:     first byte of the buffer mapped
 * @length:     bytes mapped
 * @flags:      ACCMAP_REPLAY_MAP_*
 * @attr:       memory attribute index
 * @dir:        DMA direction the GPU may use
 * @vaddr:      for a modelled target: a kernel mapping of the pages, with
 *              the buffer's memory attribute, through which the model
 *              reaches them; else NULL
 * @sgt:        for a target with a DMA device: the buffer mapped for it
 * @sgt_mapped: @sgt is DMA-mapped
 * @res_dma:    for memory without struct pages on such a target: the
 *              resource mapping of the range
 * @res_mapped: @res_dma is mapped
 */
struct accmap_replay_mapping {
	struct accmap_handle *handle;
	u64 gpu_va;
	u64 offset;
	u64 length;
	u32 flags;
	u32 attr;
	enum dma_data_direction dir;
	void *vaddr;
	struct sg_table sgt;
	bool sgt_mapped;
	dma_addr_t res_dma;
	bool res_mapped;
};

static bool accmap_replay_capable(void)
{
	return capable(CAP_SYS_RAWIO);
}

static struct accmap_replay_target *
accmap_replay_target_get(struct accmap_device *adev, u32 index)
{
	u32 nr;

	/* Pairs with accmap_replay_add_target(): entries below nr are set. */
	nr = smp_load_acquire(&adev->nr_targets);
	if (index >= nr)
		return NULL;
	return adev->targets[array_index_nospec(index, nr)];
}

static struct device *accmap_replay_dma_dev(struct accmap_replay_session *s)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;

	return ops->dma_dev ? ops->dma_dev(s) : NULL;
}

/* Undo accmap_replay_map_memory() for one mapping. */
static void accmap_replay_unmap_memory(struct accmap_replay_session *s,
				       struct accmap_replay_mapping *m)
{
	struct device *dma_dev = accmap_replay_dma_dev(s);

	if (m->sgt_mapped)
		dma_unmap_sgtable(dma_dev, &m->sgt, m->dir,
				  accmap_handle_cached(m->handle) ? 0 :
				  DMA_ATTR_SKIP_CPU_SYNC);
	if (m->sgt.sgl)
		sg_free_table(&m->sgt);
	if (m->res_mapped)
		dma_unmap_resource(dma_dev, m->res_dma, m->length, m->dir, 0);
	if (m->vaddr)
		vunmap(m->vaddr);
	m->sgt_mapped = false;
	m->res_mapped = false;
	m->vaddr = NULL;
}

/* Map [@va, @va + @len) to device address @dma in the session's tables. */
static int accmap_replay_map_range(struct accmap_replay_session *s,
				   struct accmap_replay_mapping *m, u64 va,
				   u64 dma, u64 len)
{
	return accmap_pgt_map(s->pgt, va, dma, len, m->flags, m->attr);
}

/*
 * A target with a DMA device (real hardware): map the buffer for it and
 * put the device addresses in the tables.
 */
static int accmap_replay_map_dma(struct accmap_replay_session *s,
				 struct accmap_replay_mapping *m,
				 struct device *dma_dev)
{
	struct accmap_handle *handle = m->handle;
	u64 end = m->offset + m->length;
	struct scatterlist *sg;
	u64 pos = 0;
	unsigned int i;
	int ret;

	if (!handle->pages && !handle->phys_has_pages) {
		m->res_dma = dma_map_resource(dma_dev, handle->phys + m->offset,
					      m->length, m->dir, 0);
		if (dma_mapping_error(dma_dev, m->res_dma))
			return -ENOMEM;
		m->res_mapped = true;
		return accmap_replay_map_range(s, m, m->gpu_va, m->res_dma,
					       m->length);
	}

	ret = accmap_handle_sg_table(handle, &m->sgt);
	if (ret)
		return ret;
	/* The CPU does not cache WC/UC buffers: nothing to clean. */
	ret = dma_map_sgtable(dma_dev, &m->sgt, m->dir,
			      accmap_handle_cached(handle) ? 0 :
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		return ret;
	m->sgt_mapped = true;

	for_each_sgtable_dma_sg(&m->sgt, sg, i) {
		u64 seg_len = sg_dma_len(sg);
		u64 from = max(pos, m->offset);
		u64 to = min(pos + seg_len, end);

		if (from < to) {
			ret = accmap_replay_map_range(s, m,
						      m->gpu_va + from - m->offset,
						      sg_dma_address(sg) + from - pos,
						      to - from);
			if (ret)
				return ret;
		}
		pos += seg_len;
		if (pos >= end)
			break;
	}
	return 0;
}

/*
 * A modelled target: device addresses are CPU physical addresses, and the
 * model is told where the kernel reaches each of them.
 */
static int accmap_replay_map_model(struct accmap_replay_session *s,
				   struct accmap_replay_mapping *m)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;
	struct accmap_handle *handle = m->handle;
	unsigned long first, npages, i, run;
	u64 head;

	if (!handle->pages) {
		if (ops->add_memory) {
			int ret = ops->add_memory(s, handle->phys + m->offset,
						  handle->kaddr + m->offset,
						  m->length);

			if (ret)
				return ret;
		}
		return accmap_replay_map_range(s, m, m->gpu_va,
					       handle->phys + m->offset,
					       m->length);
	}

	first = m->offset >> PAGE_SHIFT;
	head = m->offset & ~PAGE_MASK;
	npages = DIV_ROUND_UP(head + m->length, PAGE_SIZE);
	/*
	 * Like accmap's other kernel mappings of uncached buffers: Normal
	 * non-cacheable, not Device memory, which faults on unaligned access.
	 */
	m->vaddr = vmap(&handle->pages[first], npages, VM_MAP,
			accmap_handle_cached(handle) ? PAGE_KERNEL :
			pgprot_writecombine(PAGE_KERNEL));
	if (!m->vaddr)
		return -ENOMEM;

	/* Physically contiguous runs of pages, so blocks can be used. */
	for (i = 0; i < npages; i += run) {
		phys_addr_t pa = page_to_phys(handle->pages[first + i]);
		u64 from, to;
		int ret;

		for (run = 1; i + run < npages; run++)
			if (page_to_phys(handle->pages[first + i + run]) !=
			    pa + run * PAGE_SIZE)
				break;

		/* The part of the run inside the mapping, in mapping bytes. */
		from = i ? (u64)i * PAGE_SIZE - head : 0;
		to = min_t(u64, (u64)(i + run) * PAGE_SIZE - head, m->length);
		pa += i ? 0 : head;

		ret = ops->add_memory ?
		      ops->add_memory(s, pa, m->vaddr + head + from, to - from) : 0;
		if (!ret)
			ret = accmap_replay_map_range(s, m, m->gpu_va + from, pa,
						      to - from);
		if (ret)
			return ret;
	}
	return 0;
}

static int accmap_replay_map_memory(struct accmap_replay_session *s,
				    struct accmap_replay_mapping *m)
{
	struct device *dma_dev = accmap_replay_dma_dev(s);

	if (dma_dev)
		return accmap_replay_map_dma(s, m, dma_dev);
	return accmap_replay_map_model(s, m);
}

/* Frees a session the target no longer touches, and what it holds. */
static void accmap_replay_session_free(struct accmap_replay_session *s)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;
	u32 i;

	/* No invalidation may touch the tables or the target after this. */
	accmap_svm_destroy(s->svm);
	if (s->pgt)
		accmap_pgt_destroy(s->pgt);
	for (i = 0; i < s->nr_maps; i++) {
		struct accmap_replay_mapping *m = &s->maps[i];

		if (!m->handle)
			continue;
		accmap_replay_unmap_memory(s, m);
		accmap_handle_put(m->handle);
	}
	kvfree(s->maps);
	if (s->opened)
		ops->close(s);
	mutex_destroy(&s->run_lock);
	kfree(s);
}

static void accmap_replay_session_release(struct kref *ref)
{
	struct accmap_replay_session *s =
		container_of(ref, struct accmap_replay_session, ref);
	struct accmap_replay_target *target = s->target;
	struct accmap_replay_session *k, *tmp;
	struct accmap_device *adev = s->adev;
	LIST_HEAD(reclaim);
	int stopped = 0;

	/* Nothing may run on the target while its memory goes. */
	if (s->opened && target->ops->stop)
		stopped = target->ops->stop(s);

	/* Kept back or not, it is no live session of the target any more. */
	atomic_dec(&target->sessions);
	mutex_lock(&adev->replay_lock);
	if (stopped < 0) {
		list_move_tail(&s->node, &target->kept);
		target->kept_ever++;
	} else {
		list_del(&s->node);
		/* A completed reset: nothing kept back is in use any more. */
		if (stopped == ACCMAP_REPLAY_STOP_RESET)
			list_splice_init(&target->kept, &reclaim);
	}
	mutex_unlock(&adev->replay_lock);

	if (stopped < 0) {
		/* The module's code is what may free this memory one day. */
		__module_get(THIS_MODULE);
		pr_warn_ratelimited("%s: the GPU did not stop: keeping back %lu table pages and %llu bytes of buffers of %s[%d] until it resets\n",
				    target->name,
				    s->pgt ? accmap_pgt_table_pages(s->pgt) : 0,
				    s->mapped, s->comm, s->pid);
		return;
	}
	list_for_each_entry_safe(k, tmp, &reclaim, node) {
		list_del(&k->node);
		accmap_replay_session_free(k);
		module_put(THIS_MODULE);
	}
	accmap_replay_session_free(s);
}

/**
 * accmap_replay_session_put() - drop a reference on a session
 * @s: the session
 */
void accmap_replay_session_put(struct accmap_replay_session *s)
{
	kref_put(&s->ref, accmap_replay_session_release);
}

/* Check what can be checked of a mapping without looking up its buffer. */
static int accmap_replay_check_map(const struct accmap_replay_map *map,
				   u32 va_bits)
{
	u64 end;

	if (map->pad || (map->flags & ~ACCMAP_REPLAY_MAP_VALID_FLAGS) ||
	    !(map->flags & ACCMAP_REPLAY_MAP_READ) ||
	    map->attr > ACCMAP_REPLAY_ATTR_MAX)
		return -EINVAL;
	if (!map->length ||
	    !IS_ALIGNED(map->gpu_va | map->offset | map->length,
			ACCMAP_PGT_PAGE_SIZE))
		return -EINVAL;
	if (check_add_overflow(map->gpu_va, map->length, &end) ||
	    end > BIT_ULL(va_bits))
		return -EINVAL;
	return 0;
}

/* Take the buffer of @map for the session; @m gets the reference. */
static int accmap_replay_get_buffer(struct accmap_client *client,
				    const struct accmap_replay_map *map,
				    struct accmap_replay_mapping *m)
{
	struct accmap_handle *handle;
	bool readonly;
	u64 end;
	int ret;

	handle = accmap_client_get_handle_ro(client, map->id, &readonly);
	if (!handle)
		return -ENOENT;
	if (!accmap_handle_allocated(handle))
		ret = -ENODATA;
	else if (check_add_overflow(map->offset, map->length, &end) ||
		 end > handle->size)
		ret = -EINVAL;
	else if (readonly && (map->flags & ACCMAP_REPLAY_MAP_WRITE))
		ret = -EACCES;
	else
		ret = 0;
	if (ret) {
		accmap_handle_put(handle);
		return ret;
	}

	m->handle = handle;
	m->gpu_va = map->gpu_va;
	m->offset = map->offset;
	m->length = map->length;
	m->flags = map->flags;
	m->attr = map->attr;
	m->dir = (map->flags & ACCMAP_REPLAY_MAP_WRITE) ? DMA_BIDIRECTIONAL :
							  DMA_TO_DEVICE;
	return 0;
}

static int accmap_replay_check_setup(struct accmap_device *adev,
				     const struct accmap_replay_setup *arg,
				     struct accmap_replay_target **target)
{
	bool svm = arg->flags & ACCMAP_REPLAY_SETUP_SVM;

	if (arg->flags & ~ACCMAP_REPLAY_SETUP_VALID_FLAGS || arg->pad)
		return -EINVAL;
	if ((!arg->nr_maps && !svm) || arg->nr_maps > ACCMAP_REPLAY_MAPS_MAX)
		return -EINVAL;
	if (arg->va_bits < ACCMAP_REPLAY_VA_BITS_MIN ||
	    arg->va_bits > ACCMAP_REPLAY_VA_BITS_MAX)
		return -EINVAL;
	if (svm ? accmap_svm_check_range(arg->svm_start, arg->svm_size,
					 arg->va_bits) :
		  arg->svm_start || arg->svm_size)
		return -EINVAL;
	if (arg->format >= ACCMAP_PGT_COUNT)
		return -EINVAL;
	*target = accmap_replay_target_get(adev, arg->target);
	if (!*target)
		return -ENOENT;
	if (!((*target)->formats & BIT(arg->format)))
		return -EOPNOTSUPP;
	if (arg->as >= (*target)->as_count)
		return -EINVAL;
	if (svm && !((*target)->flags & ACCMAP_REPLAY_TARGET_SVM))
		return -EOPNOTSUPP;
	return 0;
}

/* Whether a mapping overlaps the SVM range of the setup. */
static bool accmap_replay_map_in_svm(const struct accmap_replay_map *map,
				     const struct accmap_replay_setup *arg)
{
	if (!(arg->flags & ACCMAP_REPLAY_SETUP_SVM))
		return false;
	return map->gpu_va < arg->svm_start + arg->svm_size &&
	       arg->svm_start < map->gpu_va + map->length;
}

/*
 * The body of REPLAY_SETUP and of a restored session: @maps are in kernel
 * memory, @mm is the address space an SVM session mirrors, and @at is the
 * id to give the session (a restore), or 0 for the next free one.
 */
static int accmap_replay_setup_core(struct accmap_client *client,
				    struct accmap_replay_setup *arg,
				    struct accmap_replay_target *target,
				    const struct accmap_replay_map *maps,
				    struct mm_struct *mm, u32 at,
				    struct accmap_replay_session **news)
{
	struct accmap_device *adev = client->adev;
	struct accmap_replay_session *s;
	unsigned long pages;
	u32 i;
	int ret;

	for (i = 0; i < arg->nr_maps; i++) {
		ret = accmap_replay_check_map(&maps[i], arg->va_bits);
		if (!ret && accmap_replay_map_in_svm(&maps[i], arg))
			ret = -EINVAL;
		if (ret) {
			arg->failed_map = i;
			return ret;
		}
	}

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	kref_init(&s->ref);
	s->adev = adev;
	INIT_LIST_HEAD(&s->node);
	s->target = target;
	s->format = arg->format;
	s->as = arg->as;
	s->va_bits = arg->va_bits;
	mutex_init(&s->run_lock);
	if (at) {
		s->pid = client->pid;
		memcpy(s->comm, client->comm, sizeof(s->comm));
	} else {
		s->pid = task_tgid_nr(current);
		accmap_get_comm(s->comm);
	}
	atomic_inc(&target->sessions);
	/* From here on the release function undoes whatever was done. */

	s->maps = kvcalloc(max(arg->nr_maps, 1U), sizeof(*s->maps),
			   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!s->maps) {
		ret = -ENOMEM;
		goto err_put_session;
	}
	s->nr_maps = arg->nr_maps;

	ret = target->ops->open(s);
	if (ret)
		goto err_put_session;
	s->opened = true;

	s->pgt = accmap_pgt_create(s->format, s->va_bits,
				   target->ops->pgt_alloc, s);
	if (IS_ERR(s->pgt)) {
		ret = PTR_ERR(s->pgt);
		s->pgt = NULL;
		goto err_put_session;
	}

	for (i = 0; i < arg->nr_maps; i++) {
		ret = accmap_replay_get_buffer(client, &maps[i], &s->maps[i]);
		if (!ret)
			ret = accmap_replay_map_memory(s, &s->maps[i]);
		if (ret) {
			arg->failed_map = i;
			goto err_put_session;
		}
		s->mapped += maps[i].length;
	}
	if (arg->flags & ACCMAP_REPLAY_SETUP_SVM) {
		struct accmap_svm *svm;

		svm = accmap_svm_create(s, arg->svm_start, arg->svm_size, mm);
		if (IS_ERR(svm)) {
			ret = PTR_ERR(svm);
			goto err_put_session;
		}
		s->svm = svm;
		s->mmu_irq = accmap_svm_mmu_irq;
	}
	s->root = accmap_pgt_root(s->pgt);
	pages = accmap_pgt_table_pages(s->pgt);

	/*
	 * Everything is done before the id is published: from then on
	 * another thread may destroy the session by guessing it.  The
	 * caller's reference keeps the session until it has told user space.
	 */
	mutex_lock(&adev->replay_lock);
	list_add_tail(&s->node, &adev->replay_sessions);
	mutex_unlock(&adev->replay_lock);
	kref_get(&s->ref);
	if (at) {
		s->id = at;
		ret = xa_insert(&client->sessions, at, s, GFP_KERNEL_ACCOUNT);
		ret = ret == -EBUSY ? -EEXIST : ret;
	} else {
		ret = xa_alloc_cyclic(&client->sessions, &s->id, s,
				      XA_LIMIT(1, ACCMAP_REPLAY_SESSIONS_MAX),
				      &client->next_session, GFP_KERNEL_ACCOUNT);
		ret = ret == -EBUSY ? -ENOSPC : ret;
	}
	if (ret < 0) {
		accmap_replay_session_put(s);
		goto err_put_session;
	}
	arg->session = s->id;
	if (s->svm)
		accmap_svm_set_session(s->svm, s->id);
	arg->table_pages = pages;
	*news = s;
	return 0;

err_put_session:
	accmap_replay_session_put(s);
	return ret;
}

/**
 * accmap_replay_setup() - REPLAY_SETUP: build a session
 * @client: the calling client
 * @arg: the argument, in kernel memory
 * @news: on success, the new session, with a reference for the caller
 *        that accmap_replay_setup_done() drops; else NULL
 *
 * The session's address space is @arg->as, fixed for its life.
 *
 * Return: 0 with @arg->session set, or a negative errno as documented for
 * ACCMAP_IOC_REPLAY_SETUP; @arg->failed_map names the mapping at fault.
 */
int accmap_replay_setup(struct accmap_client *client,
			struct accmap_replay_setup *arg,
			struct accmap_replay_session **news)
{
	struct accmap_replay_target *target;
	struct accmap_replay_map *maps;
	int ret;

	*news = NULL;
	arg->failed_map = U32_MAX;
	arg->session = 0;
	arg->table_pages = 0;
	if (!accmap_replay_capable())
		return -EPERM;
	ret = accmap_replay_check_setup(client->adev, arg, &target);
	if (ret)
		return ret;

	/* Sized by user space: its ENOMEM, not a vmalloc warning. */
	maps = kvmalloc_array(max(arg->nr_maps, 1U), sizeof(*maps),
			      GFP_KERNEL | __GFP_NOWARN);
	if (!maps)
		return -ENOMEM;
	if (copy_from_user(maps, u64_to_user_ptr(arg->maps),
			   array_size(arg->nr_maps, sizeof(*maps))))
		ret = -EFAULT;
	else
		ret = accmap_replay_setup_core(client, arg, target, maps,
					       current->mm, 0, news);
	kvfree(maps);
	return ret;
}

/**
 * accmap_replay_map_record() - describe one mapping of a session
 * @s: the session, held still by its run_lock
 * @i: the mapping's index, below @s->nr_maps
 * @out: set to the mapping as REPLAY_SETUP took it, id 0
 *
 * Return: the mapped buffer (the session's reference stays the session's).
 */
struct accmap_handle *accmap_replay_map_record(struct accmap_replay_session *s,
					       u32 i, struct accmap_replay_map *out)
{
	const struct accmap_replay_mapping *m = &s->maps[i];

	lockdep_assert_held(&s->run_lock);
	*out = (struct accmap_replay_map) {
		.gpu_va = m->gpu_va,
		.offset = m->offset,
		.length = m->length,
		.flags = m->flags,
		.attr = m->attr,
	};
	return m->handle;
}

/*
 * What REPLAY_SETUP would refuse in a checkpointed session's record alone,
 * without its maps' buffers; fills in the setup argument it was made
 * with, and its target.
 */
static int accmap_replay_restore_check(struct accmap_device *adev,
				       const struct accmap_ckpt_session *rec,
				       struct accmap_replay_setup *arg,
				       struct accmap_replay_target **target)
{
	if (!accmap_replay_capable())
		return -EPERM;
	if (!rec->id || rec->id > ACCMAP_REPLAY_SESSIONS_MAX)
		return -EINVAL;
	if (rec->nr_attrs && !(rec->flags & ACCMAP_REPLAY_SETUP_SVM))
		return -EINVAL;
	*arg = (struct accmap_replay_setup) {
		.nr_maps = rec->nr_maps,
		.target = rec->target,
		.format = rec->format,
		.as = rec->as,
		.va_bits = rec->va_bits,
		.flags = rec->flags,
		.svm_start = rec->svm_start,
		.svm_size = rec->svm_size,
	};
	return accmap_replay_check_setup(adev, arg, target);
}

/**
 * accmap_replay_check_restore() - check a checkpointed session's record
 * @adev: the device
 * @rec: the record
 *
 * RESTORE_SESSION checks a record when it is queued, so that
 * RESTORE_FINISH, which makes every queued session in turn and cannot be
 * called again, fails only for what only it can see: the maps' buffers,
 * the restored address space, memory.
 *
 * Return: 0, or the negative errno accmap_replay_restore() would give for
 * the record itself (-EPERM without CAP_SYS_RAWIO, -EINVAL, -ENOENT for no
 * such target, -EOPNOTSUPP for what the target lacks).
 */
int accmap_replay_check_restore(struct accmap_device *adev,
				const struct accmap_ckpt_session *rec)
{
	struct accmap_replay_target *target;
	struct accmap_replay_setup arg;

	return accmap_replay_restore_check(adev, rec, &arg, &target);
}

/**
 * accmap_replay_restore() - make a checkpointed session again
 * @client: the client being restored
 * @rec: the session's record; its id must be free in @client
 * @maps: its @rec->nr_maps mappings, ids of @client, in kernel memory
 * @attrs: its @rec->nr_attrs SVM attribute ranges, in kernel memory
 * @mm: the address space of the restored process (an SVM session
 *      mirrors it), held by the caller
 *
 * Return: 0, or a negative errno as REPLAY_SETUP's and SVM SET_ATTR's;
 * -EEXIST if the id is taken, -EINVAL for an id outside the session ids.
 */
int accmap_replay_restore(struct accmap_client *client,
			  const struct accmap_ckpt_session *rec,
			  const struct accmap_replay_map *maps,
			  const struct accmap_ckpt_svm_attr *attrs,
			  struct mm_struct *mm)
{
	struct accmap_replay_target *target;
	struct accmap_replay_setup arg;
	struct accmap_replay_session *s;
	u32 i;
	int ret;

	ret = accmap_replay_restore_check(client->adev, rec, &arg, &target);
	if (ret)
		return ret;
	ret = accmap_replay_setup_core(client, &arg, target, maps, mm, rec->id,
				       &s);
	if (ret)
		return ret;
	for (i = 0; i < rec->nr_attrs && !ret; i++)
		ret = accmap_svm_restore_attr(s->svm, attrs[i].start,
					      attrs[i].size, attrs[i].attrs,
					      attrs[i].granule,
					      attrs[i].location);
	accmap_replay_setup_done(client, s, !ret);
	return ret;
}

/**
 * accmap_replay_setup_done() - end REPLAY_SETUP's hold on a new session
 * @client: the client that made it
 * @s: what accmap_replay_setup() returned in *news
 * @told: whether user space learnt the session's id
 *
 * If it did not, the session is withdrawn, but only if its id still names
 * it: another thread may have destroyed it by guessing the id, and the id
 * may name a newer session by now, which stays.
 */
void accmap_replay_setup_done(struct accmap_client *client,
			      struct accmap_replay_session *s, bool told)
{
	if (!told && xa_cmpxchg(&client->sessions, s->id, s, NULL, 0) == s)
		accmap_replay_session_put(s);
	accmap_replay_session_put(s);
}

static struct accmap_replay_session *
accmap_replay_session_get(struct accmap_client *client, u32 id)
{
	struct accmap_replay_session *s;

	xa_lock(&client->sessions);
	s = xa_load(&client->sessions, id);
	if (s)
		kref_get(&s->ref);
	xa_unlock(&client->sessions);
	return s;
}

/*
 * Check every op before any runs; the executor checks each again.  That a
 * CAPTURED WRITE has a value to write is known only when it runs (the
 * session keeps captured values from one run to the next).
 */
static int accmap_replay_check_ops(const struct accmap_replay_session *s,
				   const struct accmap_replay_op *ops, u32 n,
				   struct accmap_replay_result *res)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (accmap_replay_check_op(&ops[i], s->target->window_size) ||
		    accmap_replay_check_session_op(s, &ops[i])) {
			res->failed_op = i;
			res->reason = ACCMAP_REPLAY_INVALID;
			return -EINVAL;
		}
		if (!(i % ACCMAP_REPLAY_OPS_CHUNK))
			cond_resched();
	}
	return 0;
}

/* Make CPU writes visible to a real GPU before a run, and back after. */
static void accmap_replay_sync(struct accmap_replay_session *s, bool for_device)
{
	struct device *dma_dev = accmap_replay_dma_dev(s);
	u32 i;

	if (!dma_dev)
		return;
	for (i = 0; i < s->nr_maps; i++) {
		struct accmap_replay_mapping *m = &s->maps[i];

		if (!m->sgt_mapped || !accmap_handle_cached(m->handle))
			continue;
		if (for_device)
			dma_sync_sgtable_for_device(dma_dev, &m->sgt, m->dir);
		else
			dma_sync_sgtable_for_cpu(dma_dev, &m->sgt, m->dir);
	}
}

/*
 * Runs checked ops, all in kernel memory: nothing here waits for user
 * space while the target (for a register window, the whole GPU) is held.
 */
static int accmap_replay_run_ops(struct accmap_replay_session *s,
				 const struct accmap_replay_op *kops, u32 nr_ops,
				 struct accmap_replay_result *res)
{
	const struct accmap_replay_target_ops *ops = s->target->ops;
	u32 base, n;
	int ret;

	lockdep_assert_held(&s->run_lock);
	if (ops->run_begin) {
		ret = ops->run_begin(s);
		if (ret) {
			if (ret == -EINTR)
				res->reason = ACCMAP_REPLAY_SIGNAL;
			return ret;
		}
	}
	accmap_replay_sync(s, true);
	s->ran = true;

	ret = 0;
	for (base = 0; base < nr_ops; base += n) {
		n = min_t(u32, nr_ops - base, ACCMAP_REPLAY_OPS_CHUNK);
		ret = accmap_replay_exec(s, kops + base, n, base, res);
		if (ret)
			break;
	}

	accmap_replay_sync(s, false);
	if (ops->run_end)
		ops->run_end(s);
	return ret;
}

/**
 * accmap_replay_run() - REPLAY_RUN: run operations on a session
 * @client: the calling client
 * @arg: the argument, in kernel memory; its results are filled in on
 *       failure too.  On success @arg->value is what the run's last READ,
 *       POLL or WAIT_IRQ read (0 if none ran); on failure, what the
 *       failed op read
 *
 * Return: 0 or a negative errno as documented for ACCMAP_IOC_REPLAY_RUN.
 */
int accmap_replay_run(struct accmap_client *client,
		      struct accmap_replay_run *arg)
{
	const struct accmap_replay_op __user *uops = u64_to_user_ptr(arg->ops);
	struct accmap_replay_result res = {
		.failed_op = U32_MAX,
		.fault.as = U32_MAX,
	};
	struct accmap_replay_session *s = NULL;
	struct accmap_replay_op *kops = NULL;
	ktime_t start = ktime_get();
	int ret;

	if (!accmap_replay_capable()) {
		ret = -EPERM;
		goto out;
	}
	if (arg->flags & ~ACCMAP_REPLAY_RUN_VALID_FLAGS || arg->pad ||
	    !arg->nr_ops || arg->nr_ops > ACCMAP_REPLAY_OPS_MAX) {
		ret = -EINVAL;
		goto out;
	}
	s = accmap_replay_session_get(client, arg->session);
	if (!s) {
		ret = -ENOENT;
		goto out;
	}
	/* The GPU reaches the creator's memory: only the creator runs it. */
	if (s->svm && !s->svm->backend->same_mm(s->svm)) {
		ret = -EPERM;
		goto out;
	}
	/*
	 * The whole list comes in before any lock is taken: a copy that
	 * stalls (userfaultfd, FUSE) holds up this caller only.
	 */
	kops = kvmalloc_array(arg->nr_ops, sizeof(*kops),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!kops) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(kops, uops, array_size(arg->nr_ops, sizeof(*kops)))) {
		ret = -EFAULT;
		goto out;
	}
	ret = accmap_replay_check_ops(s, kops, arg->nr_ops, &res);
	if (ret)
		goto out;

	ret = mutex_lock_killable(&s->run_lock);
	if (ret) {
		res.reason = ACCMAP_REPLAY_SIGNAL;
		goto out;
	}
	ret = accmap_replay_run_ops(s, kops, arg->nr_ops, &res);
	mutex_unlock(&s->run_lock);

out:
	kvfree(kops);
	if (s)
		accmap_replay_session_put(s);
	arg->done = res.done;
	arg->failed_op = res.failed_op;
	arg->reason = res.reason;
	arg->value = res.value;
	arg->fault_as = res.fault.as;
	arg->fault_status = res.fault.status;
	arg->fault_addr = res.fault.address;
	arg->elapsed_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	return ret;
}

/**
 * accmap_replay_destroy() - REPLAY_DESTROY: drop a session
 * @client: the calling client
 * @arg: the argument, in kernel memory
 *
 * A run in progress on another thread keeps the session until it ends.
 *
 * Return: 0, -EPERM, -EINVAL or -ENOENT.
 */
int accmap_replay_destroy(struct accmap_client *client,
			  const struct accmap_replay_destroy *arg)
{
	struct accmap_replay_session *s;

	if (!accmap_replay_capable())
		return -EPERM;
	if (arg->pad)
		return -EINVAL;
	s = xa_erase(&client->sessions, arg->session);
	if (!s)
		return -ENOENT;
	accmap_replay_session_put(s);
	return 0;
}

/**
 * accmap_replay_svm() - ACCMAP_IOC_SVM: work on a session's mirror
 * @client: the calling client
 * @arg: the argument, in kernel memory
 *
 * Return: 0 or a negative errno as documented for ACCMAP_IOC_SVM.
 */
int accmap_replay_svm(struct accmap_client *client, struct accmap_svm_op *arg)
{
	struct accmap_replay_session *s;
	int ret;

	if (!accmap_replay_capable())
		return -EPERM;
	s = accmap_replay_session_get(client, arg->session);
	if (!s)
		return -ENOENT;
	ret = s->svm ? accmap_svm_ioctl(s->svm, arg) : -EOPNOTSUPP;
	accmap_replay_session_put(s);
	return ret;
}

/**
 * accmap_replay_query() - REPLAY_QUERY: describe a target
 * @adev: the device
 * @info: the argument, in kernel memory
 *
 * Output fields need not be zero on input: they are overwritten.
 *
 * Return: 0, -EPERM, or -ENOENT past the last target.
 */
int accmap_replay_query(struct accmap_device *adev,
			struct accmap_replay_target_info *info)
{
	struct accmap_replay_target *target;
	u32 index = info->index;

	if (!accmap_replay_capable())
		return -EPERM;
	target = accmap_replay_target_get(adev, index);
	if (!target)
		return -ENOENT;

	memset(info, 0, sizeof(*info));
	info->index = index;
	info->flags = target->flags;
	strscpy(info->name, target->name, sizeof(info->name));
	info->window_size = target->window_size;
	info->formats = target->formats;
	info->as_count = target->as_count;
	info->gpu_id = target->gpu_id;
	info->sessions = atomic_read(&target->sessions);
	return 0;
}

/**
 * accmap_replay_client_init() - prepare a new client's session table
 * @client: the client
 */
void accmap_replay_client_init(struct accmap_client *client)
{
	xa_init_flags(&client->sessions, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
}

/**
 * accmap_replay_client_fini() - destroy every session a client still has
 * @client: the client of a file being released
 */
void accmap_replay_client_fini(struct accmap_client *client)
{
	struct accmap_replay_session *s;
	unsigned long id;

	xa_for_each(&client->sessions, id, s) {
		xa_erase(&client->sessions, id);
		accmap_replay_session_put(s);
		cond_resched();
	}
	xa_destroy(&client->sessions);
}

/**
 * accmap_replay_add_target() - make a target available to REPLAY_SETUP
 * @adev: the device
 * @target: the target, set up by its driver; it stays until
 *          accmap_replay_remove_targets()
 *
 * Targets are added at load and as device-tree windows bind, possibly
 * while /dev/accmap is in use; they are never removed before unload.
 *
 * Return: 0, or -ENOSPC if the device has ACCMAP_REPLAY_TARGETS_MAX
 * targets already.
 */
int accmap_replay_add_target(struct accmap_device *adev,
			     struct accmap_replay_target *target)
{
	int ret = 0;

	mutex_lock(&adev->replay_lock);
	if (adev->nr_targets >= ACCMAP_REPLAY_TARGETS_MAX) {
		ret = -ENOSPC;
	} else {
		atomic_set(&target->sessions, 0);
		INIT_LIST_HEAD(&target->kept);
		target->kept_ever = 0;
		adev->targets[adev->nr_targets] = target;
		/* Readers see the entry before the count that covers it. */
		smp_store_release(&adev->nr_targets, adev->nr_targets + 1);
	}
	mutex_unlock(&adev->replay_lock);
	return ret;
}

/**
 * accmap_replay_init() - set up replay at load: the software model target
 * @adev: the device
 *
 * Return: 0 or a negative errno.
 */
int accmap_replay_init(struct accmap_device *adev)
{
	int ret;

	mutex_init(&adev->replay_lock);
	INIT_LIST_HEAD(&adev->replay_sessions);
	ret = accmap_sim_target_init(&adev->sim_target);
	if (ret)
		return ret;
	ret = accmap_devmem_create(adev, &adev->sim_target.devmem);
	if (ret)
		return ret;
	ret = accmap_replay_add_target(adev, &adev->sim_target);
	if (ret) {
		accmap_devmem_destroy(adev->sim_target.devmem);
		adev->sim_target.devmem = NULL;
	}
	return ret;
}

/**
 * accmap_replay_fini() - forget the targets at unload
 * @adev: the device; no client is left, so no session is
 */
void accmap_replay_fini(struct accmap_device *adev)
{
	WARN_ON(!list_empty(&adev->replay_sessions));
	adev->nr_targets = 0;
	/* Pages processes still map go back to system memory. */
	accmap_devmem_destroy(adev->sim_target.devmem);
	adev->sim_target.devmem = NULL;
	mutex_destroy(&adev->replay_lock);
}

static const char *const accmap_pgt_names[ACCMAP_PGT_COUNT] = {
	[ACCMAP_PGT_MALI_AARCH64_4K] = "aarch64-4k",
	[ACCMAP_PGT_MALI_LPAE] = "lpae",
};

/**
 * accmap_replay_debugfs_show() - the debugfs file "replay"
 * @m: the file
 * @unused: unused
 *
 * One line per session, then totals as "name<TAB>value" lines (the
 * kept_* ones count memory kept back from GPUs that did not stop), then
 * one "target<TAB>name<TAB>sessions" line per target.
 *
 * Return: 0.
 */
int accmap_replay_debugfs_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	unsigned long kept = 0, kept_tables = 0, kept_ever = 0;
	unsigned long sessions = 0, tables = 0;
	struct accmap_replay_session *s;
	u64 mapped = 0, kept_mapped = 0;
	u32 i, nr;

	seq_puts(m, "pid\tcomm\ttarget\tformat\tas\tmaps\tmapped\ttable_pages\n");
	mutex_lock(&adev->replay_lock);
	list_for_each_entry(s, &adev->replay_sessions, node) {
		unsigned long pages = accmap_pgt_table_pages(s->pgt);

		seq_printf(m, "%d\t%s\t%s\t%s\t%u\t%u\t%llu\t%lu\n", s->pid,
			   s->comm, s->target->name, accmap_pgt_names[s->format],
			   s->as, s->nr_maps, s->mapped, pages);
		sessions++;
		tables += pages;
		mapped += s->mapped;
	}
	/* Pairs with the release in accmap_replay_add_target(). */
	nr = smp_load_acquire(&adev->nr_targets);
	for (i = 0; i < nr; i++) {
		list_for_each_entry(s, &adev->targets[i]->kept, node) {
			kept++;
			kept_tables += s->pgt ? accmap_pgt_table_pages(s->pgt) : 0;
			kept_mapped += s->mapped;
		}
		kept_ever += adev->targets[i]->kept_ever;
	}
	mutex_unlock(&adev->replay_lock);

	seq_printf(m, "sessions\t%lu\nmapped\t%llu\ntable_pages\t%lu\n",
		   sessions, mapped, tables);
	/* Memory of sessions whose GPU did not stop: never freed until it resets. */
	seq_printf(m, "kept_sessions\t%lu\nkept_mapped\t%llu\nkept_table_pages\t%lu\nkept_ever\t%lu\n",
		   kept, kept_mapped, kept_tables, kept_ever);
	for (i = 0; i < nr; i++)
		seq_printf(m, "target\t%s\t%d\n", adev->targets[i]->name,
			   atomic_read(&adev->targets[i]->sessions));
	return 0;
}

/* A run of pages of one map that walked to the same outcome. */
struct replay_leaf_run {
	u64 va;
	u64 bytes;
	bool ok;
	u32 perm;
	u32 attr;
};

static void replay_leaf_run_show(struct seq_file *m,
				 const struct accmap_replay_session *s, u32 i,
				 const struct replay_leaf_run *r)
{
	if (!r->bytes)
		return;
	seq_printf(m, "%d\t%u\t%u\t%#llx\t%llu\t", s->pid, s->id, i, r->va,
		   r->bytes);
	if (r->ok)
		seq_printf(m, "%c%c%c\t%u\n",
			   r->perm & ACCMAP_PGT_PERM_READ ? 'r' : '-',
			   r->perm & ACCMAP_PGT_PERM_WRITE ? 'w' : '-',
			   r->perm & ACCMAP_PGT_PERM_EXEC ? 'x' : '-', r->attr);
	else
		seq_puts(m, "fault\t-\n");
}

/* Walks map @i of @s page by page (block by block) and prints its runs. */
static void replay_leaves_of_map(struct seq_file *m,
				 struct accmap_replay_session *s, u32 i)
{
	const struct accmap_replay_mapping *map = &s->maps[i];
	u64 va = map->gpu_va, end = map->gpu_va + map->length;
	struct replay_leaf_run run = { .va = va };
	struct accmap_walk w;

	while (va < end) {
		bool ok;
		u64 step;

		s->target->ops->walk(s, va, &w);
		ok = w.status == ACCMAP_WALK_OK;
		step = ok ? w.size - (va & (w.size - 1)) : ACCMAP_PGT_PAGE_SIZE;
		step = min(step, end - va);
		if (run.bytes && (ok != run.ok ||
				  (ok && (w.perm != run.perm ||
					  w.attr != run.attr)))) {
			replay_leaf_run_show(m, s, i, &run);
			run.va = va;
			run.bytes = 0;
		}
		run.ok = ok;
		run.perm = ok ? w.perm : 0;
		run.attr = ok ? w.attr : 0;
		run.bytes += step;
		va += step;
		cond_resched();
	}
	replay_leaf_run_show(m, s, i, &run);
}

/**
 * accmap_replay_leaves_debugfs_show() - the debugfs file "replay_leaves"
 * @m: the file
 * @unused: unused
 *
 * What a target's MMU finds in a session's page tables, for tests to
 * compare with what the session was asked to map: for each live replay
 * session that is not SVM, on a target that can walk its tables (the
 * model), each of its maps walked page by page (a block at a time)
 * through the tables as the target's MMU reads them.  One line per run of
 * pages with the same outcome: creator's pid, session id, map index, GPU
 * address, bytes, then the permissions the leaf grants (r, w, x or -) and
 * its memory attribute index, or "fault" and "-" where the walk found no
 * leaf.  No physical address is shown.  Root only (mode 0400).
 *
 * Return: 0.
 */
int accmap_replay_leaves_debugfs_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_replay_session *s;
	u32 i;

	seq_puts(m, "pid\tsession\tmap\tva\tbytes\tperm\tattr\n");
	mutex_lock(&adev->replay_lock);
	list_for_each_entry(s, &adev->replay_sessions, node) {
		if (s->svm || !s->pgt || !s->target->ops->walk)
			continue;
		for (i = 0; i < s->nr_maps; i++)
			replay_leaves_of_map(m, s, i);
	}
	mutex_unlock(&adev->replay_lock);
	return 0;
}

/**
 * accmap_replay_svm_debugfs_show() - the debugfs file "svm"
 * @m: the file
 * @unused: unused
 *
 * One line per live SVM session: its creator, id, range, bytes the GPU
 * has entries for (and of those in 2 MiB blocks), and its counters.
 *
 * Return: 0.
 */
int accmap_replay_svm_debugfs_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_replay_session *s;

	seq_puts(m, "pid\tcomm\tsession\tstart\tsize\tmapped\thuge\tfaults\tfatal\tinvalidations\tpages_mapped\tdevice\n");
	mutex_lock(&adev->replay_lock);
	list_for_each_entry(s, &adev->replay_sessions, node) {
		if (!s->svm)
			continue;
		seq_printf(m, "%d\t%s\t%u", s->pid, s->comm, s->id);
		accmap_svm_debugfs_row(m, s->svm);
	}
	mutex_unlock(&adev->replay_lock);
	return 0;
}

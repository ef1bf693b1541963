/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: device memory of a replay target, internal interfaces.
 *
 * A target may own memory of its own (the devmem= parameter gives the sim
 * target a carveout; a GPU node's memory-region gives its window one).
 * SVM migrates the pages of a process there and back without the
 * process's addresses changing.  The parts:
 *
 *   devmem_pool.c  which device pages are free, and the order in which
 *                  used ones are evicted (least recently placed first).
 *                  Pure bookkeeping: no mm, tested in KUnit.
 *   devmem.c       the carveout handed to the kernel as ZONE_DEVICE pages
 *                  (memremap_pages()), the migrations (migrate_vma_*(),
 *                  migrate_device_range() for eviction), the CPU fault
 *                  handler of private pages, the counters, debugfs and
 *                  QUERY_HEAP.  All but the devmem= parameter is built
 *                  where the kernel has ZONE_DEVICE and device migration
 *                  (ACCMAP_HAVE_DEVMEM); elsewhere the stubs below say
 *                  there is none, and devmem= fails the load.  It calls
 *                  the pool, the mm and the DMA API (a window's memory is
 *                  mapped for its GPU); the SVM backend (svm_hmm.c),
 *                  FROM_VA and the targets (replay.c, replay_mmio.c)
 *                  call it.
 *
 * Locking: the pool's spinlock protects the free list and the eviction
 * order; it and the device memory's lock (its owner list) are taken with
 * interrupts off, since a device page's last reference, and so
 * devmem_page_free(), can come in interrupt context.  Migrations run
 * under the mm's mmap_lock (read), taken by the caller; they take no
 * accmap lock while the mm holds pages isolated, except the pool's.
 * Eviction runs with no lock held.
 */
#ifndef _ACCMAP_DEVMEM_H
#define _ACCMAP_DEVMEM_H

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <uapi/linux/accmap.h>

struct accmap_device;
struct accmap_devmem;
struct accmap_heap_info;
struct device;
struct mm_struct;
struct page;
struct seq_file;
struct vm_area_struct;

/**
 * struct accmap_devmem_slot - one device page in the pool
 * @node: on the pool's free or LRU list
 * @used: on the LRU list
 */
struct accmap_devmem_slot {
	struct list_head node;
	bool used;
};

/**
 * struct accmap_devmem_pool - free device pages and eviction order
 * @lock:    protects everything below but @nr; taken with interrupts off
 *           (devmem_pool.c says why)
 * @nr:      pages managed
 * @nr_free: pages on @free
 * @free:    free slots, the next one to hand out first
 * @lru:     used slots, least recently placed first
 * @slots:   one per page; a slot is on @free or on @lru, never both
 */
struct accmap_devmem_pool {
	spinlock_t lock;	/* see above */
	unsigned long nr;
	unsigned long nr_free;
	struct list_head free;
	struct list_head lru;
	struct accmap_devmem_slot *slots;
};

int accmap_devmem_pool_init(struct accmap_devmem_pool *pool, unsigned long nr);
void accmap_devmem_pool_fini(struct accmap_devmem_pool *pool);
long accmap_devmem_pool_get(struct accmap_devmem_pool *pool);
void accmap_devmem_pool_put(struct accmap_devmem_pool *pool, unsigned long idx);
void accmap_devmem_pool_touch(struct accmap_devmem_pool *pool,
			      unsigned long idx);
unsigned long accmap_devmem_pool_victims(struct accmap_devmem_pool *pool,
					 unsigned long *out, unsigned long max);
unsigned long accmap_devmem_pool_free(struct accmap_devmem_pool *pool);

/**
 * struct accmap_devmem_owner - the device-memory counters of one session
 * @ref:          held by the session and by every device page it placed
 *                (a page outlives its session while the process maps it)
 * @dm:           the device memory
 * @node:         in the device memory's owner list
 * @pid:          the session's creator (thread group id)
 * @comm:         its name
 * @session:      the session id
 * @on_device:    pages placed by the session that are on the device now
 * @to_device:    pages migrated to the device, ever
 * @to_system:    pages migrated back, ever, for any reason
 * @cpu_faults:   of those, pages a CPU access brought back
 * @evictions:    of those, pages evicted to make room
 * @not_migrated: pages a migration to the device left in system memory
 */
struct accmap_devmem_owner {
	struct kref ref;
	struct accmap_devmem *dm;
	struct list_head node;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u32 session;
	atomic64_t on_device;
	atomic64_t to_device;
	atomic64_t to_system;
	atomic64_t cpu_faults;
	atomic64_t evictions;
	atomic64_t not_migrated;
};

/**
 * accmap_devmem_fault_migrates() - the placement policy of GPU faults
 * @location:    the preferred location of the faulting range
 * @have_devmem: the session's target has device memory
 *
 * Return: whether the fault's pages move to the device before they are
 * mapped (else they are mapped where they are).
 */
static inline bool accmap_devmem_fault_migrates(u32 location, bool have_devmem)
{
	return have_devmem && location == ACCMAP_SVM_LOC_DEVICE;
}

int accmap_devmem_create(struct accmap_device *adev,
			 struct accmap_devmem **out);
int accmap_devmem_create_gpu(struct accmap_device *adev, struct device *dev,
			     const char *name, struct accmap_devmem **out);
void accmap_devmem_destroy(struct accmap_devmem *dm);

#ifdef ACCMAP_HAVE_DEVMEM
struct accmap_devmem_owner *accmap_devmem_owner_new(struct accmap_devmem *dm,
						    u32 session);
void accmap_devmem_owner_put(struct accmap_devmem_owner *owner);
void *accmap_devmem_pgmap_owner(struct accmap_devmem *dm);
bool accmap_devmem_owns(struct accmap_devmem *dm, struct page *page);
u64 accmap_devmem_addr(struct accmap_devmem *dm, struct page *page);
void *accmap_devmem_kmap(struct accmap_devmem *dm, struct page *page);
void accmap_devmem_kunmap(struct accmap_devmem *dm, void *kva);
void accmap_devmem_touch(struct accmap_devmem *dm, struct page *page);
int accmap_devmem_to_device(struct accmap_devmem *dm,
			    struct accmap_devmem_owner *owner,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end);
int accmap_devmem_to_system(struct accmap_devmem *dm,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end);
int accmap_devmem_range_to_system(struct accmap_devmem *dm,
				  struct mm_struct *mm, unsigned long start,
				  unsigned long end);
int accmap_devmem_query_heap(struct accmap_devmem *dm,
			     struct accmap_heap_info *info);
int accmap_devmem_debugfs_show(struct seq_file *m, void *unused);
#else
static inline struct accmap_devmem_owner *
accmap_devmem_owner_new(struct accmap_devmem *dm, u32 session)
{
	return NULL;
}

static inline void accmap_devmem_owner_put(struct accmap_devmem_owner *owner)
{
}

static inline void *accmap_devmem_pgmap_owner(struct accmap_devmem *dm)
{
	return NULL;
}

static inline bool accmap_devmem_owns(struct accmap_devmem *dm,
				      struct page *page)
{
	return false;
}

static inline u64 accmap_devmem_addr(struct accmap_devmem *dm,
				     struct page *page)
{
	return 0;
}

static inline void *accmap_devmem_kmap(struct accmap_devmem *dm,
				       struct page *page)
{
	return NULL;
}

static inline void accmap_devmem_kunmap(struct accmap_devmem *dm, void *kva)
{
}

static inline void accmap_devmem_touch(struct accmap_devmem *dm,
				       struct page *page)
{
}

static inline int accmap_devmem_to_device(struct accmap_devmem *dm,
					  struct accmap_devmem_owner *owner,
					  struct vm_area_struct *vma,
					  unsigned long start,
					  unsigned long end)
{
	return -EOPNOTSUPP;
}

static inline int accmap_devmem_to_system(struct accmap_devmem *dm,
					  struct vm_area_struct *vma,
					  unsigned long start,
					  unsigned long end)
{
	return 0;
}

static inline int accmap_devmem_range_to_system(struct accmap_devmem *dm,
						struct mm_struct *mm,
						unsigned long start,
						unsigned long end)
{
	return 0;
}

static inline int accmap_devmem_query_heap(struct accmap_devmem *dm,
					   struct accmap_heap_info *info)
{
	return -ENODEV;
}
#endif

#endif /* _ACCMAP_DEVMEM_H */

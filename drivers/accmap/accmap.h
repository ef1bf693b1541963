/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmap: accelerator memory manager, internal interfaces.
 */
#ifndef _ACCMAP_H
#define _ACCMAP_H

#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/pgtable.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

/*
 * The uAPI header of this tree, by its path: <uapi/linux/accmap.h> would
 * find the kernel's include/uapi first, and a kernel source tree that
 * KUnit grafted accmap into holds another checkout's copy there.
 */
#include "../../include/uapi/linux/accmap.h"

#include "compat.h"
#include "replay.h"

struct accmap_cache;
struct accmap_heap;
struct accmap_handle;
struct accmap_pool;
struct device;
struct dma_buf;
struct file;
struct page;
struct seq_file;
struct sg_table;

/**
 * struct accmap_cache_ops - CPU cache maintenance over contiguous memory
 * @clean: write the dirty lines of [@page + @offset, + @len) back to the
 *         point of coherency; the lines stay valid
 * @inval: discard every line of the range, dirty or not
 *
 * The range is physically contiguous, starting @offset bytes after the
 * start of @page; both return 0 or -ENOMEM.  May sleep.
 */
struct accmap_cache_ops {
	int (*clean)(const struct accmap_cache *cache, struct page *page,
		     unsigned long offset, size_t len);
	int (*inval)(const struct accmap_cache *cache, struct page *page,
		     unsigned long offset, size_t len);
};

/**
 * struct accmap_cache - where accmap's CPU cache maintenance goes
 * @ops: the operations (the DMA API's, or a KUnit test's cache model)
 * @dev: for the DMA API's operations, the device they sync for
 * @priv: the operations' own state
 *
 * Set once, before any memory is handed out; read-only afterwards.
 */
struct accmap_cache {
	const struct accmap_cache_ops *ops;
	struct device *dev;
	void *priv;
};

/**
 * struct accmap_device - the accmap misc device and what hangs off it
 * @misc: the misc device, /dev/accmap
 * @dev: the device used for DMA mapping and cache maintenance: accmap's
 *       own root device (/sys/devices/accmap), made and given its DMA mask
 *       before any heap, so that no buffer exists without it
 * @dev32: a second root device (/sys/devices/accmap-dma32) with a 32-bit
 *         DMA mask, from which contiguous ACCMAP_ALLOC_DMA32 buffers come
 * @cache: CPU cache maintenance, through the DMA API on @dev
 * @heaps: heaps by heap id; NULL where no heap has that id; set at load
 * @heap_mask: bit (1 << id) set for every heap in @heaps
 * @alloc_mask: the heaps of @heap_mask that ALLOC may allocate from
 * @pool: the system heap's page pool, created and destroyed with that
 *        heap (accmap_system_heap_create()); NULL without a system heap
 * @clients_lock: protects @clients
 * @clients: every open client (struct accmap_client.node)
 * @handles_lock: protects @handles
 * @handles: every live handle (struct accmap_handle.node), for accounting
 *           and for finding buffers no client holds any more
 * @tags_lock: protects @tag_labels
 * @tag_labels: tag -> label (kmalloc'ed string), for tags given a name
 * @debugfs: the debugfs directory, or an error pointer
 * @targets: replay targets by index, set at load; @nr_targets of them
 * @nr_targets: entries of @targets in use
 * @sim_target: the software Mali model, always target 0
 * @replay_lock: protects @replay_sessions, and serialises additions to
 *               @targets
 * @replay_sessions: every complete replay session (its node), for debugfs
 * @next_serial: the serial the next handle gets (checkpoint records)
 * @restores_lock: protects @restores
 * @restores: restores in progress (struct accmap_ckpt_restore.node)
 * @offsets_lock: protects @offsets and @offsets_next
 * @offsets: the buffers that have a /dev/accmap mmap() offset
 *           (struct accmap_handle.offset_node), keyed by their first page
 *           offset; the ranges never overlap
 * @offsets_next: the page offset the next buffer given an mmap() offset
 *                starts at; it only grows (see mmap_offset.c)
 * @put_wq: where the last reference of a buffer whose heap has
 *          free_locks_mm goes when a CPU mapping (or mmap()) drops it, so
 *          that the release runs without that mmap_lock
 *          (accmap_handle_put_mm()); drained at unload before the heaps go
 */
struct accmap_device {
	struct miscdevice misc;
	struct device *dev;
	struct device *dev32;
	struct accmap_cache cache;
	struct accmap_heap *heaps[ACCMAP_HEAP_MAX];
	u32 heap_mask;
	u32 alloc_mask;
	struct accmap_pool *pool;

	struct mutex clients_lock;	/* protects clients */
	struct list_head clients;

	struct mutex handles_lock;	/* protects handles */
	struct list_head handles;

	struct mutex tags_lock;		/* protects tag_labels */
	struct xarray tag_labels;

	struct dentry *debugfs;

	struct accmap_replay_target *targets[ACCMAP_REPLAY_TARGETS_MAX];
	u32 nr_targets;
	struct accmap_replay_target sim_target;

	struct mutex replay_lock;	/* protects replay_sessions, adding targets */
	struct list_head replay_sessions;

	atomic64_t next_serial;
	struct mutex restores_lock;	/* protects restores */
	struct list_head restores;
	struct mutex offsets_lock;	/* protects offsets, offsets_next */
	struct rb_root offsets;
	u64 offsets_next;

	struct workqueue_struct *put_wq;
};

/**
 * struct accmap_heap_ops - what a heap backend provides
 * @alloc: give @handle @handle->size bytes of memory: fill @handle->pages
 *         and @handle->npages, or for contiguous memory @handle->phys,
 *         @handle->npages, @handle->kaddr and @handle->phys_has_pages; return
 *         0, -ENOMEM or -ENOSPC when the heap has no room (ALLOC then tries
 *         the next heap), or another negative errno (optional: ALLOC never
 *         uses a heap without it, such as the user heap)
 * @free: give back what @alloc (or the heap's own constructor) gave @handle
 * @query: fill @info's total, free and largest_free (optional; the core
 *         fills name and used)
 */
struct accmap_heap_ops {
	int (*alloc)(struct accmap_heap *heap, struct accmap_handle *handle,
		     u32 align);
	void (*free)(struct accmap_heap *heap, struct accmap_handle *handle);
	void (*query)(struct accmap_heap *heap, struct accmap_heap_info *info);
};

/**
 * struct accmap_heap - one source of buffer memory
 * @id: heap id as seen by user space (ACCMAP_HEAP_*)
 * @name: short name for logs and debugfs
 * @ops: the backend
 * @no_cached: the heap cannot give cached buffers (its memory has no
 *             struct pages, so CPU caches cannot be maintained for it)
 * @free_locks_mm: @ops->free takes an mmap_lock (the user heap gives back
 *                 the pinning process's locked_vm): a release with one
 *                 held is left to a worker (accmap_handle_put_mm())
 * @dma32: bytes of the heap's memory below 4 GiB that ACCMAP_ALLOC_DMA32
 *         buffers may come from; 0 if it has none (the flag is then
 *         refused); set when the heap is made
 * @adev: the device the heap belongs to
 * @used: bytes handed out and not yet given back
 * @contiguous: bytes of @used in buffers allocated with
 *              ACCMAP_ALLOC_CONTIGUOUS (accmap_heap_account())
 */
struct accmap_heap {
	u32 id;
	const char *name;
	const struct accmap_heap_ops *ops;
	bool no_cached;
	bool free_locks_mm;
	u64 dma32;
	struct accmap_device *adev;
	atomic64_t used;
	atomic64_t contiguous;
};

/* Indices of accmap_handle.dmabuf: one export per file access mode. */
enum accmap_export_mode {
	ACCMAP_EXPORT_RDONLY,
	ACCMAP_EXPORT_RDWR,
	ACCMAP_EXPORT_MODES,
};

/**
 * struct accmap_handle - a buffer object
 * @ref: references: one per client handle reference, one per dma-buf
 *       exported from it, one per CPU mapping (vma) of it
 * @adev: the owning device
 * @size: size in bytes, page aligned, fixed at creation
 * @lock: protects @heap, @flags, @tag, @pages, @npages, @wc_vaddr,
 *        @dmabuf and @attachments
 * @heap: the heap the memory came from, NULL until allocated
 * @flags: ACCMAP_ALLOC_* flags given at allocation
 * @tag: accounting tag given at allocation
 * @pages: the memory, @npages order-0 pages; set once under @lock at
 *         allocation and unchanged until the handle is released, so paths
 *         that hold a reference and saw the handle allocated may read it
 *         without @lock
 * @npages: number of entries in @pages, or of pages in @phys
 * @phys: for memory outside the page allocator (carveouts): the start of
 *        one physically contiguous block; @pages is NULL then
 * @kaddr: for @phys memory: its kernel mapping, with the buffer's memory
 *         attribute; the kernel reads and writes @phys memory only here
 * @phys_has_pages: @phys memory has struct pages (pfn_valid), so devices
 *                  map it through them, with CPU cache maintenance
 * @wc_vaddr: for page arrays the CPU does not cache: a write-combined
 *            kernel mapping made on first WRITE/READ under @lock, unmapped
 *            at release
 * @heap_priv: the heap's own state of the buffer (a carveout's range
 *             block, a user buffer's pins), set with @pages or @phys
 * @memcg_charged: the memory is charged to the memory cgroup of the task
 *                 that allocated it (system heap); set with @pages
 * @contiguous: the memory is one physically contiguous block (a
 *              contiguous system heap buffer, a carveout's); set with
 *              @pages or @phys
 * @contig_dma: for a contiguous system heap buffer, the DMA address
 *              dma_alloc_pages() gave for it, which freeing it needs
 * @contig_user: for a contiguous system heap buffer, a reference to the
 *               user (real uid) of the task that allocated it: its
 *               locked_vm carries the buffer's pages (RLIMIT_MEMLOCK)
 *               until the buffer is freed, whoever frees it (an atomic
 *               count: no lock); @contig_user.user is NULL for other
 *               buffers; set with @pages
 * @readonly: the memory may not be written through accmap: no writable
 *            export, no WRITE, no device mapping other than DMA_TO_DEVICE
 *            (FROM_VA without ACCMAP_FROM_VA_WRITE); set at creation
 * @dmabuf: the dma-buf the handle keeps for each access mode, NULL where
 *          none: what GET_FD of that mode hands out again.  A slot holds a
 *          reference on its dma-buf (so on its file), taken when it is set
 *          and dropped when it is cleared; it is set (GET_FD, FROM_FD) only
 *          while @hrefs is not zero, and cleared, under @lock, when @hrefs
 *          drops to zero (accmap_handle_put_id()).  Every dma-buf holds a
 *          reference on the handle, so without the second rule the two would
 *          keep each other alive; with it, a slot that is set always names a
 *          live dma-buf, and its file may be used under @lock
 * @attachments: importers' attachments (struct accmap_attachment)
 * @node: in accmap_device.handles
 * @serial: the buffer's number in checkpoint records: unique while the
 *          module is loaded, fixed at creation
 * @ckpt_token: the token of the restore that made the buffer, else 0;
 *              fixed before the buffer is reachable
 * @ckpt_rdwr: that restore was given a writable id or a read-write dma-buf
 *             of it: its mappings through the restore may write (set once,
 *             read with READ_ONCE())
 * @creator_pid: thread group id of the process that created the handle
 * @creator_comm: its command name then
 * @hrefs: number of client handle references (struct accmap_href); it
 *         drops to zero only under @lock (see @dmabuf)
 * @nexports: number of live dma-bufs of the handle, kept in @dmabuf or not
 * @maps: number of CPU mappings (vmas) of the buffer
 * @nattach: number of importer attachments
 * @nvmaps: number of kernel mappings (vmap) importers hold of the
 *          buffer's dma-bufs: one per dma-buf that is vmapped, as the
 *          dma-buf core shares one mapping among all of a dma-buf's users
 * @map_pgoff: the page offset of the buffer's first page in mmap() of
 *             /dev/accmap, 0 until the first ACCMAP_IOC_MAP_OFFSET; set
 *             once, under accmap_device.offsets_lock, and unchanged until
 *             the handle is released, so whoever found the handle in
 *             accmap_device.offsets, or holds a vma of it, reads it freely
 * @offset_node: in accmap_device.offsets while @map_pgoff is set; under
 *               accmap_device.offsets_lock
 * @put_work: drops the last reference on accmap_device.put_wq; queued only
 *            by the holder of the last reference, so never twice at once
 */
struct accmap_handle {
	struct kref ref;
	struct accmap_device *adev;
	u64 size;

	struct mutex lock;	/* protects what @lock lists above */
	struct accmap_heap *heap;
	u32 flags;
	u16 tag;
	struct page **pages;
	unsigned long npages;
	phys_addr_t phys;
	void *kaddr;
	bool phys_has_pages;
	void *wc_vaddr;
	void *heap_priv;
	bool memcg_charged;
	bool contiguous;
	dma_addr_t contig_dma;
	struct accmap_user_ref contig_user;
	bool readonly;
	struct dma_buf *dmabuf[ACCMAP_EXPORT_MODES];
	struct list_head attachments;

	struct list_head node;
	u64 serial;
	u64 ckpt_token;
	bool ckpt_rdwr;
	pid_t creator_pid;
	char creator_comm[TASK_COMM_LEN];

	atomic_t hrefs;
	atomic_t nexports;
	atomic_t maps;
	atomic_t nattach;
	atomic_t nvmaps;

	u64 map_pgoff;
	struct rb_node offset_node;

	struct work_struct put_work;
};

/**
 * struct accmap_href - a client's reference to a handle
 * @node: in the client's handle table, keyed by @id
 * @id: the id user space knows the handle by in this client
 * @handle: the referenced handle (holds one reference)
 * @readonly: this reference may not write the buffer: it came from a
 *            dma-buf opened read-only
 */
struct accmap_href {
	struct rb_node node;
	u32 id;
	struct accmap_handle *handle;
	bool readonly;
};

/**
 * struct accmap_htable - a client's handle references, keyed by id
 * @root: rbtree of struct accmap_href, in id order
 * @index: the same references by id (a plain xarray: id -> href), for
 *         lookups that do not depend on the table's size
 * @next_id: where the search for the next free id starts
 * @count: number of references in the table
 * @lock: the owner's lock, held around every call (and every walk of
 *        @root) from accmap_htable_init() on; checked by lockdep
 *
 * Ids are never 0 and are handed out in increasing order; an id is not
 * used again until the u32 space wraps, so a stale id fails with -ENOENT
 * rather than reaching a newer buffer.  The table has no lock of its own:
 * its owner serialises every call with @lock, which protects @root,
 * @next_id, @count and which references @index holds: the two always
 * hold the same references, both changed under @lock.  The xarray's own
 * spinlock only guards its nodes, which it allocates and frees itself.
 */
struct accmap_htable {
	struct rb_root root;
	struct xarray index;
	u32 next_id;
	u32 count;
	struct mutex *lock;	/* not ours: the owner's, serialises all the above */
};

/**
 * struct accmap_client - state of one open file of /dev/accmap
 * @adev: the device
 * @node: in accmap_device.clients
 * @pid: thread group id of the process that opened the file
 * @comm: its command name then
 * @lock: protects @handles
 * @handles: this client's handle references
 * @sessions: replay sessions by id (the xarray's own lock protects it)
 * @next_session: where the search for the next session id starts
 * @ckpt_owned: the restore this client began (RESTORE_BEGIN), or NULL;
 *              set once, ended when the client goes
 * @ckpt_restore: while this client is being restored (RESTORE_CLIENT
 *                until RESTORE_FINISH), the restore, with a reference;
 *                else NULL.  Protected by @lock
 * @ckpt_node: in its restore's clients while @ckpt_restore is set and no
 *             RESTORE_FINISH has taken it (empty otherwise); protected by
 *             that restore's lock
 * @ckpt_sessions: sessions RESTORE_SESSION queued for RESTORE_FINISH
 *                 (struct accmap_ckpt_pending.node); protected by @lock
 */
struct accmap_client {
	struct accmap_device *adev;
	struct list_head node;
	pid_t pid;
	char comm[TASK_COMM_LEN];

	struct mutex lock;	/* protects handles */
	struct accmap_htable handles;

	struct xarray sessions;
	u32 next_session;

	struct accmap_ckpt_restore *ckpt_owned;
	struct accmap_ckpt_restore *ckpt_restore;
	struct list_head ckpt_node;
	struct list_head ckpt_sessions;
};

/**
 * accmap_handle_cached() - whether the CPU caches a buffer's memory
 * @handle: an allocated handle
 *
 * Return: false for write-combined and uncached buffers, which need no
 * CPU cache maintenance.
 */
static inline bool accmap_handle_cached(const struct accmap_handle *handle)
{
	return !(handle->flags & (ACCMAP_ALLOC_WRITECOMBINE |
				  ACCMAP_ALLOC_UNCACHED));
}

/**
 * accmap_pgprot() - the page protection for any mapping of a buffer
 * @handle: an allocated handle
 * @prot: the protection of a cached mapping (PAGE_KERNEL for the kernel's,
 *        the vma's for a user mapping)
 *
 * Every mapping of a buffer, user space's and the kernel's, has the same
 * memory attribute, since some CPUs (arm64) do not allow two attributes
 * for one page.  Cached buffers are write-back; write-combined ones get
 * pgprot_writecombine().  Uncached ones get pgprot_noncached(), except on
 * arm and arm64, where that is Device memory: it faults on the unaligned
 * accesses of the kernel's copies and is meant for registers, so there
 * uncached buffers are Normal non-cacheable, as write-combined ones are.
 *
 * Return: @prot with the buffer's memory attribute.
 */
static inline pgprot_t accmap_pgprot(const struct accmap_handle *handle,
				     pgprot_t prot)
{
	if (handle->flags & ACCMAP_ALLOC_WRITECOMBINE)
		return pgprot_writecombine(prot);
	if (handle->flags & ACCMAP_ALLOC_UNCACHED) {
		if (IS_ENABLED(CONFIG_ARM64) || IS_ENABLED(CONFIG_ARM))
			return pgprot_writecombine(prot);
		return pgprot_noncached(prot);
	}
	return prot;
}

/*
 * Longest scatterlist entry made for contiguous (carveout) memory: entry
 * lengths are unsigned int, and a carveout block may be larger.
 */
#define ACCMAP_CONTIG_SEG	SZ_1G

/*
 * Largest buffer ALLOC with ACCMAP_ALLOC_CONTIGUOUS accepts, from any heap:
 * larger ones fail with EINVAL (Documentation/userspace-api/accmap.rst).
 */
#define ACCMAP_CONTIG_MAX_SIZE	SZ_1G

/**
 * accmap_contig_nents() - scatterlist entries for contiguous memory
 * @size: bytes
 *
 * Return: the number of ACCMAP_CONTIG_SEG entries that cover @size.
 */
static inline unsigned int accmap_contig_nents(u64 size)
{
	return DIV_ROUND_UP_ULL(size, ACCMAP_CONTIG_SEG);
}

/**
 * accmap_handle_pfn() - the page frame of one page of a buffer
 * @handle: an allocated handle
 * @pgoff: page index in the buffer, below @handle->npages
 *
 * Return: the PFN.
 */
static inline unsigned long accmap_handle_pfn(const struct accmap_handle *handle,
					      unsigned long pgoff)
{
	if (handle->pages)
		return page_to_pfn(handle->pages[pgoff]);
	return PHYS_PFN(handle->phys) + pgoff;
}

/**
 * struct accmap_carveout_spec - one carveout as configured
 * @base: physical start, page aligned
 * @size: bytes, page aligned, not 0
 * @name: heap name, NUL-terminated; empty until a default is given
 */
struct accmap_carveout_spec {
	u64 base;
	u64 size;
	char name[ACCMAP_HEAP_NAME_LEN];
};

/* What is wrong with a carveout list; see accmap_carveout_strerror(). */
enum accmap_carveout_err {
	ACCMAP_CARVEOUT_OK,
	ACCMAP_CARVEOUT_SYNTAX,
	ACCMAP_CARVEOUT_ZERO,
	ACCMAP_CARVEOUT_ALIGN,
	ACCMAP_CARVEOUT_OVERFLOW,
	ACCMAP_CARVEOUT_NAME,
	ACCMAP_CARVEOUT_DUP_NAME,
	ACCMAP_CARVEOUT_OVERLAP,
	ACCMAP_CARVEOUT_TOO_MANY,
};

/**
 * struct accmap_carveout_error - where a carveout list went wrong
 * @code: what is wrong
 * @entry: index of the entry at fault
 * @other: for an overlap or a shared name, index of the earlier entry it
 *         clashes with; else -1
 */
struct accmap_carveout_error {
	enum accmap_carveout_err code;
	int entry;
	int other;
};

/* htable.c */
void accmap_htable_init(struct accmap_htable *table, struct mutex *lock);
int accmap_htable_insert(struct accmap_htable *table, struct accmap_href *ref);
struct accmap_href *accmap_htable_lookup(struct accmap_htable *table, u32 id);
void accmap_htable_erase(struct accmap_htable *table, struct accmap_href *ref);
struct accmap_href *accmap_htable_first(struct accmap_htable *table);
int accmap_htable_insert_at(struct accmap_htable *table,
			    struct accmap_href *ref, u32 id);
void accmap_htable_destroy(struct accmap_htable *table);

/* validate.c */
int accmap_check_ioctl_size(unsigned int cmd, unsigned int kernel_cmd,
			    unsigned int min_size);
int accmap_check_create(const struct accmap_create *arg, u64 max_size,
			u64 *size);
int accmap_check_alloc(const struct accmap_alloc *arg, u32 heap_mask,
		       u32 *usable);
int accmap_heap_next(u32 usable, int prev);
int accmap_check_contig_size(u64 size);
int accmap_check_get_fd(const struct accmap_get_fd *arg);

/* handle.c */
struct accmap_handle *accmap_handle_create(struct accmap_device *adev,
					   u64 size);
int accmap_handle_alloc(struct accmap_handle *handle, struct accmap_heap *heap,
			u32 flags, u32 align, u16 tag);
bool accmap_handle_allocated(struct accmap_handle *handle);
void accmap_handle_get(struct accmap_handle *handle);
void accmap_handle_put(struct accmap_handle *handle);
void accmap_handle_put_mm(struct accmap_handle *handle);

/* heap.c */
int accmap_device_add_heap(struct accmap_device *adev, struct accmap_heap *heap);
void accmap_device_remove_heap(struct accmap_device *adev,
			       struct accmap_heap *heap);
void accmap_heap_query(struct accmap_heap *heap, struct accmap_heap_info *info);
void accmap_heap_account(struct accmap_heap *heap, u64 size, u32 flags,
			 bool add);
void accmap_get_comm(char *comm);

/* client.c */
struct accmap_client *accmap_client_create(struct accmap_device *adev);
void accmap_client_destroy(struct accmap_client *client);
struct accmap_handle *accmap_client_get_handle(struct accmap_client *client,
					       u32 id);
struct accmap_handle *accmap_client_get_handle_ro(struct accmap_client *client,
						  u32 id, bool *readonly);
int accmap_client_handle_access(struct accmap_client *client,
				struct accmap_handle *handle, bool *readonly);
int accmap_client_add_handle(struct accmap_client *client,
			     struct accmap_handle *handle, bool readonly,
			     u32 *id);
int accmap_client_add_dmabuf(struct accmap_client *client,
			     struct accmap_handle *handle,
			     struct dma_buf *dmabuf, u32 *id);
int accmap_client_remove_handle(struct accmap_client *client, u32 id);
int accmap_client_add_handle_at(struct accmap_client *client,
				struct accmap_handle *handle, bool readonly,
				u32 id);

/* rw.c */
int accmap_check_rw(const struct accmap_rw *arg, u64 size);
int accmap_handle_rw(struct accmap_handle *handle, const struct accmap_rw *arg,
		     bool write);

/* tags.c */
int accmap_check_tag_label(const struct accmap_tag_label *arg);
int accmap_tag_set_label(struct accmap_device *adev, u16 tag,
			 const char *label);
void accmap_tag_get_label(struct accmap_device *adev, u16 tag, char *buf);
void accmap_tags_destroy(struct accmap_device *adev);

/* debugfs.c */
void accmap_debugfs_init(struct accmap_device *adev);
void accmap_debugfs_fini(struct accmap_device *adev);
void accmap_client_show_fdinfo(struct seq_file *m, struct file *file);

/* cache.c */
int accmap_check_cache_op(const struct accmap_cache_op *op, u64 size);
int accmap_handle_cache_op(struct accmap_handle *handle, u32 op, u64 offset,
			   u64 length);
int accmap_handle_maintain(struct accmap_handle *handle, u64 offset,
			   u64 length, bool clean);
void accmap_cache_init_dma(struct accmap_cache *cache, struct device *dev);
int accmap_cache_clean(const struct accmap_cache *cache, struct page *page,
		       unsigned long offset, size_t len);
int accmap_cache_flush(const struct accmap_cache *cache, struct page *page,
		       unsigned long offset, size_t len);
int accmap_handle_sg_table(struct accmap_handle *handle, struct sg_table *sgt);

/* dmabuf.c */
struct accmap_handle *accmap_dmabuf_handle(struct dma_buf *dmabuf);
struct file *accmap_dmabuf_get_file(struct accmap_handle *handle,
				    enum accmap_export_mode mode);
void accmap_dmabuf_adopt(struct accmap_handle *handle, struct dma_buf *dmabuf);
void accmap_handle_put_id(struct accmap_handle *handle);
unsigned int accmap_handle_exports(struct accmap_handle *handle);
unsigned int accmap_handle_mapped_attachments(struct accmap_handle *handle);

/* vma.c */
int accmap_vma_map(struct accmap_handle *handle, struct vm_area_struct *vma,
		   unsigned long first, bool readonly);

/* mmap_offset.c */
void accmap_offsets_init(struct accmap_device *adev);
int accmap_handle_map_offset(struct accmap_handle *handle, u64 *offset);
void accmap_handle_offset_remove(struct accmap_handle *handle);
int accmap_mmap(struct file *file, struct vm_area_struct *vma);

/* pool.c */
struct accmap_pool *accmap_pool_create(u64 cap,
				       const struct accmap_cache *cache);
int accmap_pool_register_shrinker(struct accmap_pool *pool);
unsigned long accmap_pool_destroy(struct accmap_pool *pool);
/* How accmap_pool_alloc() takes a block: fresh from the page allocator. */
#define ACCMAP_POOL_CHARGE	BIT(0)	/* charged to the caller's memory cgroup */
#define ACCMAP_POOL_DMA32	BIT(1)	/* below 4 GiB */

struct page *accmap_pool_alloc(struct accmap_pool *pool,
			       unsigned long max_pages,
			       unsigned long *no_alloc, unsigned int how,
			       unsigned int *order);
void accmap_pool_free(struct accmap_pool *pool, struct page *page,
		      bool unpooled);
unsigned long accmap_pool_shrink(struct accmap_pool *pool,
				 unsigned long nr_pages);
int accmap_pool_drain_dirty(struct accmap_pool *pool);
void accmap_pool_get_info(struct accmap_pool *pool,
			  struct accmap_pool_info *info);

/* fromva.c */
int accmap_check_from_va(const struct accmap_from_va *arg, u64 task_size,
			 u64 max_size);
struct accmap_handle *accmap_handle_from_va(struct accmap_device *adev,
					    const struct accmap_from_va *arg);
int accmap_handle_pin_va(struct accmap_handle *handle, struct mm_struct *mm,
			 struct pid *owner, u64 addr, bool writable, u16 tag);
bool accmap_handle_va(struct accmap_handle *handle, u64 *addr, bool *writable,
		      struct pid_namespace *ns, u32 *owner);

/* checkpoint.c */
struct accmap_ckpt_restore;
int accmap_checkpoint(struct accmap_client *client, struct accmap_ckpt *arg,
		      struct file **install_file, int *install_fd);
void accmap_checkpoint_client_fini(struct accmap_client *client);
bool accmap_checkpoint_may_map(struct accmap_client *client,
			       struct accmap_handle *handle, bool *readonly);
struct accmap_heap *accmap_user_heap_create(struct accmap_device *adev);
void accmap_user_heap_destroy(struct accmap_heap *heap);

/* heap_system.c */
struct accmap_heap *accmap_system_heap_create(struct accmap_device *adev);
void accmap_system_heap_destroy(struct accmap_heap *heap);

/* carveout_parse.c */
const char *accmap_carveout_strerror(enum accmap_carveout_err code);
bool accmap_carveout_name_valid(const char *name);
enum accmap_carveout_err
accmap_check_carveout(const struct accmap_carveout_spec *spec);
void accmap_carveout_default_name(struct accmap_carveout_spec *spec, int index);
int accmap_check_carveouts(const struct accmap_carveout_spec *specs, int n,
			   struct accmap_carveout_error *err);
int accmap_parse_carveouts(const char *s, struct accmap_carveout_spec *out,
			   int max, struct accmap_carveout_error *err);

/*
 * heap_carveout.c.  Carveouts are reached through memremap(), which needs
 * iomem; UML, where the KUnit tests run, has none, and so no carveouts.
 */
#if IS_ENABLED(CONFIG_HAS_IOMEM)
int accmap_carveout_heaps_create(struct accmap_device *adev);
void accmap_carveout_heaps_destroy(struct accmap_device *adev);
const char *accmap_carveout_overlaps(struct accmap_device *adev,
				     phys_addr_t base, u64 size);
#else
static inline int accmap_carveout_heaps_create(struct accmap_device *adev)
{
	return 0;
}

static inline void accmap_carveout_heaps_destroy(struct accmap_device *adev)
{
}

static inline const char *accmap_carveout_overlaps(struct accmap_device *adev,
						   phys_addr_t base, u64 size)
{
	return NULL;
}
#endif

/* replay_mmio.c: register windows need ioremap(), so iomem (not UML). */
#if IS_ENABLED(CONFIG_HAS_IOMEM)
int accmap_mmio_targets_create(struct accmap_device *adev);
void accmap_mmio_targets_destroy(struct accmap_device *adev);
#else
static inline int accmap_mmio_targets_create(struct accmap_device *adev)
{
	return 0;
}

static inline void accmap_mmio_targets_destroy(struct accmap_device *adev)
{
}
#endif

/* ioctl.c */
long accmap_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* _ACCMAP_H */

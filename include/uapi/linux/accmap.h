/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * accmap: accelerator memory manager, user-space API.
 *
 * All structures use fixed-width fields, are naturally aligned and carry
 * explicit padding that must be zero.  Pointers travel as __u64.
 *
 * Structures may grow at their end in later versions.  The kernel takes
 * the size encoded in the ioctl number: a shorter (older) structure is
 * zero-extended, a longer one is accepted only if every byte the kernel
 * does not know is zero (otherwise -E2BIG).  A structure shorter than the
 * first published version of that ioctl fails with -EINVAL.
 *
 * The full contract, errno by errno, is in
 * Documentation/userspace-api/accmap.rst.
 */
#ifndef _UAPI_LINUX_ACCMAP_H
#define _UAPI_LINUX_ACCMAP_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define ACCMAP_IOCTL_MAGIC		0xDA

/*
 * Heap identifiers; a heap mask has bit (1 << id) set for each heap.
 * Carveout heaps, when configured, take ids from ACCMAP_HEAP_CARVEOUT_FIRST
 * up in the order they were found.  Buffers made by FROM_VA belong to the
 * user heap, which ALLOC never allocates from.  The device heap is the
 * replay target's own memory, where SVM migrates pages (ACCMAP_IOC_SVM,
 * ACCMAP_SVM_LOC_DEVICE): QUERY_HEAP reports it, ALLOC never uses it.
 */
#define ACCMAP_HEAP_SYSTEM		0
#define ACCMAP_HEAP_CARVEOUT_FIRST	1
#define ACCMAP_HEAP_CARVEOUT_MAX	16
#define ACCMAP_HEAP_DEVICE		30
#define ACCMAP_HEAP_USER		31
#define ACCMAP_HEAP_MAX			32
/* Reported in accmap_info.heap while a handle has no memory yet. */
#define ACCMAP_HEAP_NONE		0xffffffffU

#define ACCMAP_HEAP_MASK_SYSTEM		(1U << ACCMAP_HEAP_SYSTEM)

/**
 * struct accmap_create - ACCMAP_IOC_CREATE argument
 * @size:        in: size in bytes, rounded up to a whole number of pages
 * @flags:       in: ACCMAP_CREATE_* flags
 * @id:          out: the new handle's id in this client, never 0
 *
 * Version 2 (ACCMAP_CREATE_SIZE_VER2 bytes) adds, for ACCMAP_CREATE_ALLOC
 * only (without it they must be 0):
 * @heap_mask:   in: as struct accmap_alloc's
 * @alloc_flags: in: ACCMAP_ALLOC_* flags, as struct accmap_alloc's @flags
 * @align:       in: as struct accmap_alloc's
 * @tag:         in: as struct accmap_alloc's
 * @pad:         must be 0
 * @heap:        out: the heap id the memory came from
 * @pad2:        must be 0
 * @offset:      out: the buffer's mmap() offset on /dev/accmap, as
 *               ACCMAP_IOC_MAP_OFFSET gives it
 */
struct accmap_create {
	__u64 size;
	__u32 flags;
	__u32 id;
	__u32 heap_mask;
	__u32 alloc_flags;
	__u32 align;
	__u16 tag;
	__u16 pad;
	__u32 heap;
	__u32 pad2;
	__u64 offset;
};

/* The size of the first struct accmap_create, before ACCMAP_CREATE_ALLOC. */
#define ACCMAP_CREATE_SIZE_VER1		16
#define ACCMAP_CREATE_SIZE_VER2		48

/*
 * Allocate the memory too, as ACCMAP_IOC_ALLOC would with the version 2
 * fields, and give the mmap() offset: the handle, its memory and a
 * mapping's offset in one call.  Fails as CREATE or ALLOC would, and then
 * leaves no id behind.
 */
#define ACCMAP_CREATE_ALLOC		(1U << 0)
#define ACCMAP_CREATE_VALID_FLAGS	ACCMAP_CREATE_ALLOC

/*
 * CPU memory attribute of a buffer, in accmap_alloc.flags; at most one of
 * them.  Cached is the default; write-combined and uncached buffers are
 * mapped that way in user space and in the kernel, and need no CPU cache
 * maintenance.
 */
#define ACCMAP_ALLOC_WRITECOMBINE	(1U << 0)
#define ACCMAP_ALLOC_UNCACHED		(1U << 1)
/*
 * One physically contiguous block, for importers whose DMA needs one (a
 * device without an IOMMU behind videobuf2-dma-contig, say): from the
 * kernel's CMA area where it has one, else from the page allocator, one
 * block of the order that covers the size (so no larger than its largest
 * block); ENOMEM when there is no such block, EINVAL above 1 GiB.  Such
 * memory counts in the locked memory of the allocating task's user, not
 * its memory cgroup, until it is freed, whoever frees it: ENOMEM past the
 * task's RLIMIT_MEMLOCK too (EPERM without CAP_IPC_LOCK on a kernel with
 * no per-user count, see Documentation/userspace-api/accmap.rst).
 * Combines with one of the attributes above.  A carveout's buffers are
 * contiguous whether asked or not (ACCMAP_STATE_CONTIGUOUS says so).
 */
#define ACCMAP_ALLOC_CONTIGUOUS		(1U << 2)
/*
 * Every page below 4 GiB, for DMA masters that address 32 bits and sit
 * behind no IOMMU.  Only heaps with such memory give it (struct
 * accmap_heap_info's @dma32): the system heap from the kernel's low zones
 * (ZONE_DMA32 and ZONE_DMA), never from its page pool; a carveout only if
 * it lies wholly below 4 GiB.  ENXIO when no heap of the mask has memory
 * below 4 GiB at all, ENOMEM when those that have are out of it.
 * Combines with the flags above.
 */
#define ACCMAP_ALLOC_DMA32		(1U << 3)
#define ACCMAP_ALLOC_VALID_FLAGS	(ACCMAP_ALLOC_WRITECOMBINE | \
					 ACCMAP_ALLOC_UNCACHED |	\
					 ACCMAP_ALLOC_CONTIGUOUS |	\
					 ACCMAP_ALLOC_DMA32)

/**
 * struct accmap_alloc - ACCMAP_IOC_ALLOC argument
 * @id:        in: handle id from ACCMAP_IOC_CREATE
 * @heap_mask: in: heaps the memory may come from, one bit per heap id;
 *             carveout heaps are tried first, in id order, then the
 *             system heap; the first that has room is used
 * @flags:     in: ACCMAP_ALLOC_* flags
 * @align:     in: alignment in bytes, 0 (page) or a power of two up to
 *             ACCMAP_ALLOC_MAX_ALIGN
 * @tag:       in: accounting tag chosen by the caller (0: untagged)
 * @pad:       must be 0
 * @heap:      out: the heap id the memory came from
 */
struct accmap_alloc {
	__u32 id;
	__u32 heap_mask;
	__u32 flags;
	__u32 align;
	__u16 tag;
	__u16 pad;
	__u32 heap;
};

#define ACCMAP_ALLOC_MAX_ALIGN		(1U << 30)

/**
 * struct accmap_free - ACCMAP_IOC_FREE argument
 * @id:  in: handle id; the client's reference to it is dropped
 * @pad: must be 0
 */
struct accmap_free {
	__u32 id;
	__u32 pad;
};

/**
 * struct accmap_get_fd - ACCMAP_IOC_GET_FD argument
 * @id:       in: handle id of a handle that has memory
 * @fd_flags: in: O_CLOEXEC and one of O_RDONLY or O_RDWR
 * @fd:       out: a dma-buf file descriptor for the buffer
 * @pad:      must be 0
 */
struct accmap_get_fd {
	__u32 id;
	__u32 fd_flags;
	__s32 fd;
	__u32 pad;
};

/* Bits of accmap_info.state. */
#define ACCMAP_STATE_ALLOCATED		(1U << 0)
#define ACCMAP_STATE_EXPORTED		(1U << 1)
/*
 * This id may not write the buffer (FROM_FD of an O_RDONLY dma-buf, or a
 * read-only FROM_VA buffer): WRITE and O_RDWR exports fail with EACCES.
 */
#define ACCMAP_STATE_READONLY		(1U << 2)
/* The memory is one physically contiguous block. */
#define ACCMAP_STATE_CONTIGUOUS		(1U << 3)

/**
 * struct accmap_info - ACCMAP_IOC_INFO argument
 * @id:          in: handle id
 * @pad:         must be 0
 * @size:        out: size in bytes (page aligned)
 * @heap:        out: heap id, or ACCMAP_HEAP_NONE before ALLOC
 * @flags:       out: the ACCMAP_ALLOC_* flags the memory was allocated with
 * @state:       out: ACCMAP_STATE_* bits
 * @tag:         out: accounting tag given at ALLOC
 * @pad2:        out: always 0
 *
 * Fields added in version 2 (the first version ended at @pad2):
 * @handle_refs: out: handle references held by clients, all clients
 * @exports:     out: live dma-bufs of the buffer held outside it (one per
 *               access mode while it keeps ids; each may have many file
 *               descriptors)
 * @maps:        out: CPU mappings (vmas) of the buffer
 * @attachments: out: device attachments of importers
 *
 * Fields added in version 3 (the second version ended at @attachments):
 * @vmaps:       out: kernel mappings of the buffer importers hold
 *               (dma_buf_vmap(), e.g. videobuf2-vmalloc's); the dma-buf
 *               core shares one among all users of a dma-buf, so this
 *               counts the buffer's dma-bufs that are vmapped
 * @pad3:        out: always 0
 */
struct accmap_info {
	__u32 id;
	__u32 pad;
	__u64 size;
	__u32 heap;
	__u32 flags;
	__u32 state;
	__u16 tag;
	__u16 pad2;
	/* version 2 */
	__u32 handle_refs;
	__u32 exports;
	__u32 maps;
	__u32 attachments;
	/* version 3 */
	__u32 vmaps;
	__u32 pad3;
};

#define ACCMAP_INFO_SIZE_VER1	32
#define ACCMAP_INFO_SIZE_VER2	48

/**
 * struct accmap_from_fd - ACCMAP_IOC_FROM_FD argument
 * @fd:    in: a dma-buf file descriptor exported by accmap, possibly by
 *         another process
 * @flags: in: no flags are defined yet, must be 0
 * @id:    out: a new handle id in this client for the same buffer
 * @pad:   must be 0
 */
struct accmap_from_fd {
	__s32 fd;
	__u32 flags;
	__u32 id;
	__u32 pad;
};

#define ACCMAP_FROM_FD_VALID_FLAGS	0U

/**
 * struct accmap_rw - ACCMAP_IOC_WRITE and ACCMAP_IOC_READ argument
 * @addr:          in: user address of the first element
 * @offset:        in: byte offset in the buffer of the first element
 * @elem_size:     in: bytes per element, at least 1
 * @user_stride:   in: bytes from one element to the next in user memory;
 *                 at least @elem_size when @count is above 1
 * @handle_stride: in: bytes from one element to the next in the buffer;
 *                 at least @elem_size when @count is above 1
 * @count:         in: number of elements, at least 1
 * @id:            in: handle id of a handle that has memory
 * @flags:         in: no flags are defined yet, must be 0
 * @bytes:         out: bytes copied (@elem_size * @count on success)
 *
 * WRITE copies from user memory into the buffer, READ the other way.
 * Every element must lie inside the buffer.
 */
struct accmap_rw {
	__u64 addr;
	__u64 offset;
	__u64 elem_size;
	__u64 user_stride;
	__u64 handle_stride;
	__u64 count;
	__u32 id;
	__u32 flags;
	__u64 bytes;
};

#define ACCMAP_RW_VALID_FLAGS	0U

#define ACCMAP_LABEL_LEN	32

/**
 * struct accmap_tag_label - ACCMAP_IOC_SET_TAG_LABEL argument
 * @tag:   in: the tag to name
 * @pad:   must be 0
 * @flags: in: no flags are defined yet, must be 0
 * @label: in: printable ASCII, NUL-terminated, at most 31 characters;
 *         every byte after the NUL must be 0; an empty label removes the
 *         tag's name
 *
 * Tag names are shared by all clients of the device.
 */
struct accmap_tag_label {
	__u16 tag;
	__u16 pad;
	__u32 flags;
	char label[ACCMAP_LABEL_LEN];
};

#define ACCMAP_TAG_LABEL_VALID_FLAGS	0U

#define ACCMAP_HEAP_NAME_LEN	16

/**
 * struct accmap_heap_info - ACCMAP_IOC_QUERY_HEAP argument
 * @heap:         in: heap id
 * @pad:          must be 0
 * @name:         out: the heap's name, NUL-terminated
 * @total:        out: bytes the heap manages
 * @used:         out: bytes of it held by accmap buffers
 * @free:         out: bytes it could still hand out
 * @largest_free: out: the largest buffer it could hand out now, in bytes
 *                (a system heap builds buffers from scattered pages, so
 *                for it this equals @free)
 *
 * Field added in version 2 (the first version ended at @largest_free):
 * @contiguous:   out: bytes of @used in buffers allocated with
 *                ACCMAP_ALLOC_CONTIGUOUS
 *
 * Field added in version 3 (the second version ended at @contiguous):
 * @dma32:        out: bytes of @total below 4 GiB that ACCMAP_ALLOC_DMA32
 *                buffers can come from; 0: the heap refuses the flag
 */
struct accmap_heap_info {
	__u32 heap;
	__u32 pad;
	char name[ACCMAP_HEAP_NAME_LEN];
	__u64 total;
	__u64 used;
	__u64 free;
	__u64 largest_free;
	/* version 2 */
	__u64 contiguous;
	/* version 3 */
	__u64 dma32;
};

#define ACCMAP_HEAP_INFO_SIZE_VER1	56
#define ACCMAP_HEAP_INFO_SIZE_VER2	64

#define ACCMAP_POOL_MAX_ORDERS	4

/**
 * struct accmap_pool_order - one free list of the page pool
 * @order:      page order of the list (0: one page; with 4 KiB pages 4 is
 *              64 KiB and 9 is 2 MiB, with 16 KiB pages 2 and 7)
 * @pad:        always 0
 * @block_size: bytes per block of this list
 * @zeroed:     blocks zeroed and ready to hand out
 * @dirty:      blocks freed and waiting to be zeroed
 */
struct accmap_pool_order {
	__u32 order;
	__u32 pad;
	__u64 block_size;
	__u64 zeroed;
	__u64 dirty;
};

/**
 * struct accmap_pool_info - ACCMAP_IOC_QUERY_POOL argument
 * @norders: out: entries used in @orders
 * @pad:     must be 0
 * @cap:     out: most bytes the pool keeps
 * @pooled:  out: bytes in the pool now, zeroed or dirty
 * @hits:    out: blocks handed out from the pool
 * @misses:  out: blocks that had to come from the page allocator
 * @shrunk:  out: bytes given back to the system under memory pressure
 * @orders:  out: the free lists, smallest order first
 */
struct accmap_pool_info {
	__u32 norders;
	__u32 pad;
	__u64 cap;
	__u64 pooled;
	__u64 hits;
	__u64 misses;
	__u64 shrunk;
	struct accmap_pool_order orders[ACCMAP_POOL_MAX_ORDERS];
};

/* Operations of struct accmap_cache_op. */
#define ACCMAP_CACHE_WRITEBACK		1
#define ACCMAP_CACHE_INVALIDATE		2
#define ACCMAP_CACHE_WRITEBACK_INVALIDATE 3

/**
 * struct accmap_cache_op - ACCMAP_IOC_CACHE argument, and one entry of
 * ACCMAP_IOC_CACHE_LIST
 * @id:     in: handle id of a handle that has memory
 * @op:     in: ACCMAP_CACHE_*
 * @offset: in: first byte of the range in the buffer
 * @length: in: bytes in the range, at least 1
 *
 * Write-back makes CPU writes visible to devices, invalidate makes device
 * writes visible to the CPU.  On write-combined and uncached buffers, and
 * on machines whose devices are cache-coherent, the operation succeeds
 * and does nothing.
 */
struct accmap_cache_op {
	__u32 id;
	__u32 op;
	__u64 offset;
	__u64 length;
};

#define ACCMAP_CACHE_LIST_MAX	1024

/**
 * struct accmap_cache_list - ACCMAP_IOC_CACHE_LIST argument
 * @ops:   in: user pointer to @count struct accmap_cache_op
 * @count: in: entries, 1 to ACCMAP_CACHE_LIST_MAX
 * @pad:   must be 0
 * @done:  out: entries carried out; on error, the index of the failing
 *         entry
 * @pad2:  must be 0
 *
 * Every entry is checked before any is carried out.
 */
struct accmap_cache_list {
	__u64 ops;
	__u32 count;
	__u32 pad;
	__u32 done;
	__u32 pad2;
};

#define ACCMAP_FROM_VA_WRITE		(1U << 0)
#define ACCMAP_FROM_VA_VALID_FLAGS	(ACCMAP_FROM_VA_WRITE)

/**
 * struct accmap_from_va - ACCMAP_IOC_FROM_VA argument
 * @addr:  in: page-aligned start of the caller's memory
 * @size:  in: bytes, a non-zero multiple of the page size
 * @flags: in: ACCMAP_FROM_VA_WRITE if the buffer may be written (by the
 *         CPU through accmap or by devices); the memory must then be
 *         writable
 * @tag:   in: accounting tag
 * @pad:   must be 0
 * @id:    out: handle id of the new buffer, in heap ACCMAP_HEAP_USER
 * @pad2:  must be 0
 *
 * The pages are pinned for the life of the buffer and charged to the
 * caller's RLIMIT_MEMLOCK unless it has CAP_IPC_LOCK.
 */
struct accmap_from_va {
	__u64 addr;
	__u64 size;
	__u32 flags;
	__u16 tag;
	__u16 pad;
	__u32 id;
	__u32 pad2;
};

/*
 * Replay.  A replay session holds fresh GPU page tables built by the kernel
 * from handle-backed mappings, on one replay target (a GPU register window,
 * real or modelled).  Runs execute bounded lists of register operations on
 * the target.  Every replay ioctl needs CAP_SYS_RAWIO.
 */
#define ACCMAP_REPLAY_NAME_LEN		32

/* Flags of struct accmap_replay_target_info. */
#define ACCMAP_REPLAY_TARGET_SIM	(1U << 0)	/* a software model */
#define ACCMAP_REPLAY_TARGET_IRQ	(1U << 1)	/* some WAIT_IRQ sources have interrupts */
#define ACCMAP_REPLAY_TARGET_SVM	(1U << 2)	/* takes ACCMAP_REPLAY_SETUP_SVM sessions */

/* Page-table formats, and their bits in accmap_replay_target_info.formats. */
#define ACCMAP_PGT_MALI_AARCH64_4K	0
#define ACCMAP_PGT_MALI_LPAE		1
#define ACCMAP_PGT_COUNT		2

/**
 * struct accmap_replay_target_info - ACCMAP_IOC_REPLAY_QUERY argument
 * @index:       in: target index, from 0; -ENOENT past the last target
 * @flags:       out: ACCMAP_REPLAY_TARGET_*
 * @name:        out: the target's name, NUL-terminated
 * @window_size: out: bytes in the target's register window
 * @formats:     out: bit (1 << ACCMAP_PGT_*) for every page-table format
 *               the target's MMU walks
 * @as_count:    out: number of GPU address spaces
 * @gpu_id:      out: the GPU_ID register as read at probe (0 if unknown)
 * @sessions:    out: live replay sessions on this target, all clients
 */
struct accmap_replay_target_info {
	__u32 index;
	__u32 flags;
	char name[ACCMAP_REPLAY_NAME_LEN];
	__u64 window_size;
	__u32 formats;
	__u32 as_count;
	__u32 gpu_id;
	__u32 sessions;
};

/* Permissions of struct accmap_replay_map. */
#define ACCMAP_REPLAY_MAP_READ		(1U << 0)
#define ACCMAP_REPLAY_MAP_WRITE		(1U << 1)
#define ACCMAP_REPLAY_MAP_EXEC		(1U << 2)
#define ACCMAP_REPLAY_MAP_VALID_FLAGS	(ACCMAP_REPLAY_MAP_READ |	\
					 ACCMAP_REPLAY_MAP_WRITE |	\
					 ACCMAP_REPLAY_MAP_EXEC)
/* Memory attribute indices select one byte of the AS MEMATTR register. */
#define ACCMAP_REPLAY_ATTR_MAX		7

/**
 * struct accmap_replay_map - one mapping of a replay session
 * @gpu_va: in: GPU virtual address, 4 KiB aligned (the GPU page, whatever
 *          the CPU's page size)
 * @offset: in: byte offset in the buffer, 4 KiB aligned
 * @length: in: bytes, 4 KiB aligned, not 0; the range must lie inside the
 *          buffer and below 1 << va_bits of the session
 * @id:     in: handle id of an allocated buffer of the caller
 * @flags:  in: ACCMAP_REPLAY_MAP_*, READ at least; WRITE needs a buffer
 *          the caller may write
 * @attr:   in: memory attribute index, 0 to ACCMAP_REPLAY_ATTR_MAX
 * @pad:    must be 0
 */
struct accmap_replay_map {
	__u64 gpu_va;
	__u64 offset;
	__u64 length;
	__u32 id;
	__u32 flags;
	__u32 attr;
	__u32 pad;
};

#define ACCMAP_REPLAY_MAPS_MAX		4096
#define ACCMAP_REPLAY_VA_BITS_MIN	32
#define ACCMAP_REPLAY_VA_BITS_MAX	48
/* Flags of struct accmap_replay_setup. */
#define ACCMAP_REPLAY_SETUP_SVM		(1U << 0)	/* mirror the caller: GPU VA == CPU VA */
#define ACCMAP_REPLAY_SETUP_VALID_FLAGS	ACCMAP_REPLAY_SETUP_SVM

/**
 * struct accmap_replay_setup - ACCMAP_IOC_REPLAY_SETUP argument
 * @maps:       in: user pointer to @nr_maps struct accmap_replay_map
 * @nr_maps:    in: 1 to ACCMAP_REPLAY_MAPS_MAX (0 allowed with
 *              ACCMAP_REPLAY_SETUP_SVM); mappings may not overlap each
 *              other or the SVM range
 * @target:     in: target index (see ACCMAP_IOC_REPLAY_QUERY)
 * @format:     in: ACCMAP_PGT_*, one the target supports
 * @as:         in: address space index, below the target's as_count: the
 *              session's address space, the only one its ops may program
 * @va_bits:    in: GPU virtual address bits, ACCMAP_REPLAY_VA_BITS_MIN to
 *              ACCMAP_REPLAY_VA_BITS_MAX
 * @flags:      in: ACCMAP_REPLAY_SETUP_*
 * @session:    out: the new session's id in this client, never 0
 * @failed_map: out: on failure caused by one mapping, its index; else
 *              0xffffffff
 * @table_pages: out: page-table pages the kernel allocated
 * @pad:        must be 0
 * @svm_start:  in: with ACCMAP_REPLAY_SETUP_SVM, the first byte of the
 *              caller's address space the GPU mirrors, aligned to the CPU
 *              page size; else 0
 * @svm_size:   in: with ACCMAP_REPLAY_SETUP_SVM, bytes mirrored, not 0,
 *              aligned to the CPU page size; the range lies below both
 *              1 << va_bits and the end of the caller's user address
 *              space; else 0
 *
 * The session holds a reference on every mapped buffer: freeing an id
 * does not take memory away from a session.  An SVM session holds no
 * reference on the caller's pages: GPU entries in the SVM range are made
 * by GPU page faults (or ACCMAP_IOC_SVM prefetch) from the caller's CPU
 * page tables and dropped whenever those change.
 */
struct accmap_replay_setup {
	__u64 maps;
	__u32 nr_maps;
	__u32 target;
	__u32 format;
	__u32 as;
	__u32 va_bits;
	__u32 flags;
	__u32 session;
	__u32 failed_map;
	__u32 table_pages;
	__u32 pad;
	__u64 svm_start;
	__u64 svm_size;
};

/* The size of the first struct accmap_replay_setup, before the SVM range. */
#define ACCMAP_REPLAY_SETUP_SIZE_VER1	48

/* Operations of struct accmap_replay_op. */
#define ACCMAP_REPLAY_OP_WRITE		1	/* write value at offset */
#define ACCMAP_REPLAY_OP_READ		2	/* read offset; compare under mask */
#define ACCMAP_REPLAY_OP_POLL		3	/* until (read & mask) == value */
#define ACCMAP_REPLAY_OP_WAIT_IRQ	4	/* until the irq source raised mask */
#define ACCMAP_REPLAY_OP_DELAY		5	/* wait timeout_us microseconds */
#define ACCMAP_REPLAY_OP_WRITE_ROOT	6	/* write the page-table root */

/* Flags of struct accmap_replay_op. */
#define ACCMAP_REPLAY_OP_STRICT		(1U << 0)	/* READ: a mismatch fails the run */
#define ACCMAP_REPLAY_OP_HI		(1U << 1)	/* WRITE_ROOT: the upper 32 bits */
#define ACCMAP_REPLAY_OP_CAPTURE	(1U << 2)	/* READ: keep the value read */
#define ACCMAP_REPLAY_OP_CAPTURED	(1U << 3)	/* WRITE: write the kept value */
#define ACCMAP_REPLAY_OP_VALID_FLAGS	(ACCMAP_REPLAY_OP_STRICT |	\
					 ACCMAP_REPLAY_OP_HI |		\
					 ACCMAP_REPLAY_OP_CAPTURE |	\
					 ACCMAP_REPLAY_OP_CAPTURED)

/* Interrupt sources of ACCMAP_REPLAY_OP_WAIT_IRQ. */
#define ACCMAP_REPLAY_IRQ_JOB		0
#define ACCMAP_REPLAY_IRQ_MMU		1
#define ACCMAP_REPLAY_IRQ_GPU		2
#define ACCMAP_REPLAY_IRQ_COUNT		3

#define ACCMAP_REPLAY_TIMEOUT_MAX_US	10000000U	/* POLL, WAIT_IRQ */
#define ACCMAP_REPLAY_DELAY_MAX_US	1000000U	/* DELAY */

/**
 * struct accmap_replay_op - one register operation
 * @op:         ACCMAP_REPLAY_OP_*
 * @flags:      ACCMAP_REPLAY_OP_* flags that apply to @op, else 0
 * @offset:     register offset, 4-byte aligned, inside the target's window
 *              (WRITE, READ, POLL, WRITE_ROOT; else 0).  On the Mali
 *              register map: no op touches another address space than the
 *              session's; WRITE_ROOT goes to its TRANSTAB_LO (TRANSTAB_HI
 *              with ACCMAP_REPLAY_OP_HI), no other op touches TRANSTAB; a
 *              WRITE of TRANSCFG is checked field by field (the session's
 *              format or unmapped mode, the tables' input size, only cache
 *              policy besides; TRANSCFG_HI 0); job slot CONFIG(_NEXT) and
 *              PRFCNT_CONFIG name only the session's address space
 * @value:      WRITE: the value; READ: the expected value; POLL: the value
 *              to wait for (else 0)
 * @mask:       READ, POLL: the bits compared; WAIT_IRQ: the interrupt
 *              bits waited for, not 0 (else 0)
 * @timeout_us: POLL, WAIT_IRQ: at most ACCMAP_REPLAY_TIMEOUT_MAX_US, not 0;
 *              DELAY: at most ACCMAP_REPLAY_DELAY_MAX_US (else 0)
 * @irq:        WAIT_IRQ: ACCMAP_REPLAY_IRQ_* (else 0)
 * @pad:        must be 0
 *
 * Captured values: a READ with ACCMAP_REPLAY_OP_CAPTURE (not with
 * ACCMAP_REPLAY_OP_STRICT) keeps the value it read in the session, and a
 * WRITE with ACCMAP_REPLAY_OP_CAPTURED writes the value the session keeps
 * instead of @value (which must then be 0).  The value stays until the
 * next CAPTURE READ, from one run to the next: a recorded driver may read
 * LATEST_FLUSH long before the job that uses it, and a player may split
 * the ops into several runs in between.  A CAPTURED WRITE in a session
 * that has kept no value yet stops the run with ACCMAP_REPLAY_INVALID at
 * that op.  The value written is checked against the session's rules like
 * any other, when it is known (right before the write).  This is how a
 * recorded driver's "read LATEST_FLUSH, write it to FLUSH_ID_NEXT" runs
 * with the flush ID the GPU has at replay time.
 */
struct accmap_replay_op {
	__u32 op;
	__u32 flags;
	__u32 offset;
	__u32 value;
	__u32 mask;
	__u32 timeout_us;
	__u32 irq;
	__u32 pad;
};

#define ACCMAP_REPLAY_OPS_MAX		(1U << 20)

/* Why a run stopped early, in accmap_replay_run.reason. */
#define ACCMAP_REPLAY_OK		0	/* every op ran */
#define ACCMAP_REPLAY_INVALID		1	/* op failed_op is malformed: -EINVAL */
#define ACCMAP_REPLAY_MISMATCH		2	/* strict READ saw another value: -EIO */
#define ACCMAP_REPLAY_TIMEOUT		3	/* POLL or WAIT_IRQ timed out: -ETIMEDOUT */
#define ACCMAP_REPLAY_MMU_FAULT		4	/* the GPU MMU faulted: -EIO */
#define ACCMAP_REPLAY_SIGNAL		5	/* a fatal signal: -EINTR */
#define ACCMAP_REPLAY_JOB_FAILED	6	/* a job chain failed on the target: -EIO */

#define ACCMAP_REPLAY_RUN_VALID_FLAGS	0U

/**
 * struct accmap_replay_run - ACCMAP_IOC_REPLAY_RUN argument
 * @ops:          in: user pointer to @nr_ops struct accmap_replay_op
 * @nr_ops:       in: 1 to ACCMAP_REPLAY_OPS_MAX
 * @session:      in: session id
 * @flags:        in: none defined yet, must be 0
 * @done:         out: operations completed
 * @failed_op:    out: index of the op that stopped the run, or 0xffffffff
 * @reason:       out: ACCMAP_REPLAY_*
 * @value:        out: on failure, what @failed_op read (READ, POLL: the
 *                last value read; WAIT_IRQ: the interrupt status then),
 *                0 if it read nothing; on success, what the last READ,
 *                POLL or WAIT_IRQ of the run read (0 if none did)
 * @fault_status: out: after an MMU fault, the faulting address space's
 *                FAULTSTATUS; after a failed job (ACCMAP_REPLAY_JOB_FAILED),
 *                the slot's JS_STATUS; else 0
 * @fault_as:     out: that address space; after a failed job, the job
 *                slot; else 0xffffffff
 * @pad:          must be 0
 * @fault_addr:   out: its FAULTADDRESS, a GPU virtual address; after a
 *                failed job, the slot's JS_HEAD: the GPU virtual address of
 *                the descriptor the chain stopped at
 * @elapsed_ns:   out: time spent in the call, checks and waiting for the
 *                session included
 *
 * Every op is checked before any runs.  After every POLL, WAIT_IRQ and
 * DELAY, and after the last op, the target's MMU interrupt status is
 * checked; a fault stops the run.  A job chain that fails (its slot's
 * FAILED bit in JOB_IRQ_RAWSTAT) stops the run too, at once, during a
 * POLL or WAIT_IRQ and after every POLL, WAIT_IRQ and DELAY, with
 * ACCMAP_REPLAY_JOB_FAILED; unless the op waits for that very bit (a
 * WAIT_IRQ of ACCMAP_REPLAY_IRQ_JOB, or a POLL of JOB_IRQ_RAWSTAT or
 * JOB_IRQ_STATUS, whose mask has it): then the failure is what the
 * recording expects.  The argument is copied back on failure too.
 */
struct accmap_replay_run {
	__u64 ops;
	__u32 nr_ops;
	__u32 session;
	__u32 flags;
	__u32 done;
	__u32 failed_op;
	__u32 reason;
	__u32 value;
	__u32 fault_status;
	__u32 fault_as;
	__u32 pad;
	__u64 fault_addr;
	__u64 elapsed_ns;
};

/**
 * struct accmap_replay_destroy - ACCMAP_IOC_REPLAY_DESTROY argument
 * @session: in: session id
 * @pad:     must be 0
 */
struct accmap_replay_destroy {
	__u32 session;
	__u32 pad;
};

/*
 * Shared virtual memory.  ACCMAP_IOC_SVM works on the SVM range of a
 * session made with ACCMAP_REPLAY_SETUP_SVM; like every replay ioctl it
 * needs CAP_SYS_RAWIO, and it must come from the process whose memory the
 * session mirrors.
 */
#define ACCMAP_SVM_OP_SET_ATTR		1	/* set attributes of a range */
#define ACCMAP_SVM_OP_PREFETCH		2	/* make a range's GPU entries now */
#define ACCMAP_SVM_OP_QUERY		3	/* the session's counters */

/* Attributes of a range (struct accmap_svm_op.attrs). */
#define ACCMAP_SVM_ATTR_GPU_RO		(1U << 0)	/* the GPU may not write */
#define ACCMAP_SVM_ATTR_NO_EXEC		(1U << 1)	/* GPU entries not executable */
#define ACCMAP_SVM_ATTR_VALID		(ACCMAP_SVM_ATTR_GPU_RO |	\
					 ACCMAP_SVM_ATTR_NO_EXEC)

/* Preferred locations (struct accmap_svm_op.location). */
#define ACCMAP_SVM_LOC_SYSTEM		0	/* system memory, where the CPU put it */
#define ACCMAP_SVM_LOC_DEVICE		1	/* the target's device memory */

/* Fault granularity: log2 of the bytes one GPU fault may map. */
#define ACCMAP_SVM_GRANULE_MIN		12
#define ACCMAP_SVM_GRANULE_MAX		21
#define ACCMAP_SVM_GRANULE_DEFAULT	21

/* Attribute ranges one session may hold (SET_ATTR splits ranges). */
#define ACCMAP_SVM_ATTR_RANGES_MAX	256

/**
 * struct accmap_svm_op - ACCMAP_IOC_SVM argument
 * @session:       in: an SVM session of the caller
 * @op:            in: ACCMAP_SVM_OP_*
 * @start:         in: SET_ATTR, PREFETCH: first byte, aligned to the CPU
 *                 page size, inside the session's SVM range (QUERY: 0)
 * @size:          in: SET_ATTR, PREFETCH: bytes, aligned, not 0, inside
 *                 the range (QUERY: 0)
 * @attrs:         in: SET_ATTR: ACCMAP_SVM_ATTR_* for the whole range,
 *                 replacing what it had (else 0)
 * @granule:       in: SET_ATTR: ACCMAP_SVM_GRANULE_MIN to _MAX, or 0 for
 *                 ACCMAP_SVM_GRANULE_DEFAULT (else 0)
 * @location:      in: SET_ATTR: preferred location (GPU faults in a
 *                 range preferring DEVICE migrate its pages there first);
 *                 PREFETCH: where to bring the pages; ACCMAP_SVM_LOC_*,
 *                 DEVICE only where the target has device memory
 * @flags:         in: none defined yet, must be 0
 * @faults:        out (every op): GPU faults serviced
 * @fatal_faults:  out: GPU faults the caller's mappings did not allow
 * @invalidations: out: CPU page-table changes that hit the range
 * @mapped_bytes:  out: bytes of the range the GPU has entries for now
 * @huge_bytes:    out: of those, bytes mapped by 2 MiB GPU blocks
 * @pages_mapped:  out: CPU pages given GPU entries, ever (faults and
 *                 prefetches; a page mapped again counts again)
 * @device_bytes:  out: bytes of the caller's memory the session moved to
 *                 device memory that are there now
 * @to_device:     out: pages migrated to device memory, ever (never-touched
 *                 and zero pages included: they are cleared there)
 * @to_system:     out: pages migrated back to system memory, ever, for any
 *                 reason (the three below, PREFETCH to SYSTEM, FROM_VA)
 * @cpu_faults:    out: of those, pages a CPU access brought back
 * @evictions:     out: of those, pages evicted to make room on the device
 * @not_migrated:  out: pages a migration to the device skipped because the
 *                 kernel does not move them (shared or file-backed, pinned,
 *                 busy): they stay in system memory, and the GPU maps them
 *                 there
 */
struct accmap_svm_op {
	__u32 session;
	__u32 op;
	__u64 start;
	__u64 size;
	__u32 attrs;
	__u32 granule;
	__u32 location;
	__u32 flags;
	__u64 faults;
	__u64 fatal_faults;
	__u64 invalidations;
	__u64 mapped_bytes;
	__u64 huge_bytes;
	__u64 pages_mapped;
	__u64 device_bytes;
	__u64 to_device;
	__u64 to_system;
	__u64 cpu_faults;
	__u64 evictions;
	__u64 not_migrated;
};

/* The size of the first struct accmap_svm_op, before device memory. */
#define ACCMAP_SVM_OP_SIZE_VER1		88

/**
 * struct accmap_map_offset - ACCMAP_IOC_MAP_OFFSET argument
 * @id:     in: handle id of an allocated buffer of the caller
 * @flags:  in: no flags are defined yet, must be 0
 * @offset: out: the mmap() offset of the buffer's first byte on
 *          /dev/accmap.  The offset is the buffer's for as long as it
 *          lives and is the same in every client; mmap() of it succeeds on
 *          any open file of /dev/accmap whose client holds an id for the
 *          buffer, writable only through an id that may write it.
 *
 * A mapping of /dev/accmap behaves as one of the buffer's dma-buf: shared
 * only, the buffer's memory attribute, counted in INFO's @maps, and it
 * keeps the buffer alive after its ids are freed and the file is closed.
 */
struct accmap_map_offset {
	__u32 id;
	__u32 flags;
	__u64 offset;
};

#define ACCMAP_MAP_OFFSET_VALID_FLAGS	0U

/*
 * Checkpoint and restore (CRIU; see Documentation/userspace-api/accmap.rst,
 * "Checkpoint and restore", and tools/criu).  Every op needs
 * CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN.
 */
#define ACCMAP_CKPT_OP_STATE		1	/* describe the calling file's client */
#define ACCMAP_CKPT_OP_DMABUF		2	/* identify the accmap dma-buf @fd */
#define ACCMAP_CKPT_OP_RESTORE_BEGIN	3	/* start a restore; @token out */
#define ACCMAP_CKPT_OP_RESTORE_CLIENT	4	/* make this fresh client the dumped one */
#define ACCMAP_CKPT_OP_RESTORE_BUFFER	5	/* a dumped buffer: id and/or dma-buf fd */
#define ACCMAP_CKPT_OP_RESTORE_SESSION	6	/* a dumped replay session, made at FINISH */
#define ACCMAP_CKPT_OP_RESTORE_FINISH	7	/* @pid's address space is final */
#define ACCMAP_CKPT_OP_RESTORE_OFFSET	8	/* a restored buffer's mmap() offset */
#define ACCMAP_CKPT_OP_RESTORE_LEFT	9	/* what no FINISH to come will make */

/* Flags of struct accmap_ckpt, RESTORE_BUFFER. */
#define ACCMAP_CKPT_ADD_ID		(1U << 0)	/* at the record's id */
#define ACCMAP_CKPT_FD_RDONLY		(1U << 1)	/* a read-only dma-buf fd in @fd */
#define ACCMAP_CKPT_FD_RDWR		(1U << 2)	/* a read-write dma-buf fd in @fd */
#define ACCMAP_CKPT_FD_CLOEXEC		(1U << 3)	/* the fd is close-on-exec */
#define ACCMAP_CKPT_VALID_FLAGS		(ACCMAP_CKPT_ADD_ID |		\
					 ACCMAP_CKPT_FD_RDONLY |	\
					 ACCMAP_CKPT_FD_RDWR |		\
					 ACCMAP_CKPT_FD_CLOEXEC)

/* What a dump refused, in struct accmap_ckpt.bad_kind. */
#define ACCMAP_CKPT_BAD_NONE		0
#define ACCMAP_CKPT_BAD_SESSION_BUSY	1	/* session @bad_id is running ops */
#define ACCMAP_CKPT_BAD_SESSION_MMIO	2	/* session @bad_id drives a register window */
#define ACCMAP_CKPT_BAD_RESTORING	3	/* the client is being restored */
/* RESTORE_LEFT: the first of what no FINISH to come will make. */
#define ACCMAP_CKPT_BAD_NO_PINNER	4	/* FROM_VA @serial: no process @bad_id */
#define ACCMAP_CKPT_BAD_NO_MAKER	5	/* session @bad_id: no process to make it */

/* Most records one STATE or RESTORE call moves. */
#define ACCMAP_CKPT_HANDLES_MAX		(1U << 20)
#define ACCMAP_CKPT_SESSIONS_MAX	4096

/**
 * struct accmap_ckpt - ACCMAP_IOC_CHECKPOINT argument
 * @op:       in: ACCMAP_CKPT_OP_*
 * @flags:    in: RESTORE_BUFFER: ACCMAP_CKPT_* flags; else 0
 * @token:    RESTORE_BEGIN: out; RESTORE_CLIENT, _BUFFER, _SESSION,
 *            _FINISH, _OFFSET, _LEFT: in, the restore's token; else 0
 * @data:     in: user pointer: STATE: room for the state; RESTORE_CLIENT:
 *            a struct accmap_ckpt_client; RESTORE_BUFFER: a struct
 *            accmap_ckpt_handle; RESTORE_SESSION: a struct
 *            accmap_ckpt_session followed by its maps and attribute ranges
 * @size:     STATE: in: bytes at @data; out: bytes the state takes (the
 *            call fails with -ENOSPC if that is more than given);
 *            RESTORE_*: in: bytes at @data
 * @contents: in: RESTORE_BUFFER: user pointer to the buffer's bytes, used
 *            only if this call creates the buffer (size bytes of the
 *            record); 0 for a buffer that has no memory or aliases user
 *            memory (FROM_VA)
 * @fd:       DMABUF: in: a dma-buf file descriptor; RESTORE_BUFFER: out,
 *            with a FD flag: the new descriptor; else 0
 * @pid:      in: RESTORE_FINISH: the restored process; else 0
 * @serial:   out: DMABUF: the buffer's serial (as in STATE's records);
 *            in: RESTORE_OFFSET: a dumped serial; out: RESTORE_LEFT with
 *            @bad_kind ACCMAP_CKPT_BAD_NO_PINNER: the buffer's dumped
 *            serial; else 0
 * @dmabuf_size: out: DMABUF: the buffer's size
 * @dmabuf_mode: out: DMABUF: O_RDONLY or O_RDWR, the dma-buf's access mode
 * @bad_kind: out: STATE: on failure, ACCMAP_CKPT_BAD_*, what refused;
 *            RESTORE_LEFT: what the first thing left is (NO_PINNER,
 *            NO_MAKER), if any
 * @bad_id:   out: STATE: the id of that object; RESTORE_LEFT: NO_PINNER:
 *            the FROM_VA record's origin_pid; NO_MAKER: the session's id
 * @done:     out: RESTORE_FINISH: buffers pinned and sessions made;
 *            RESTORE_LEFT: FROM_VA buffers and sessions of the restore
 *            that no RESTORE_FINISH still to come will make
 * @map_offset: out: RESTORE_OFFSET: the /dev/accmap mmap() offset of the
 *            buffer the restore made for dumped serial @serial (in); the
 *            calling client, one being restored by that restore, may map
 *            it until RESTORE_FINISH even without an id for it
 * @pad:      must be 0
 */
struct accmap_ckpt {
	__u32 op;
	__u32 flags;
	__u64 token;
	__u64 data;
	__u64 size;
	__u64 contents;
	__s32 fd;
	__u32 pid;
	__u64 serial;
	__u64 dmabuf_size;
	__u32 dmabuf_mode;
	__u32 bad_kind;
	__u32 bad_id;
	__u32 done;
	__u64 map_offset;
	__u64 pad;
};

#define ACCMAP_CKPT_MAGIC		0x41434b50	/* "ACKP" */
#define ACCMAP_CKPT_VERSION		1

/**
 * struct accmap_ckpt_client - the head of a client's state
 * @magic:        ACCMAP_CKPT_MAGIC
 * @version:      ACCMAP_CKPT_VERSION
 * @size:         bytes of the whole state, this head included
 * @nr_handles:   struct accmap_ckpt_handle records after this head
 * @nr_sessions:  struct accmap_ckpt_session records after those, each
 *                followed by its maps and attribute ranges
 * @next_id:      where the client's next id search starts
 * @next_session: where its next session id search starts
 * @pid:          the process that opened the file
 * @pad:          0
 */
struct accmap_ckpt_client {
	__u32 magic;
	__u32 version;
	__u64 size;
	__u32 nr_handles;
	__u32 nr_sessions;
	__u32 next_id;
	__u32 next_session;
	__u32 pid;
	__u32 pad;
};

/* Kinds of struct accmap_ckpt_handle. */
#define ACCMAP_CKPT_KIND_EMPTY		0	/* created, no memory yet */
#define ACCMAP_CKPT_KIND_ALLOC		1	/* memory from a heap */
#define ACCMAP_CKPT_KIND_FROM_VA	2	/* pins of process memory */

/* State bits of struct accmap_ckpt_handle. */
#define ACCMAP_CKPT_H_ID_RDONLY		(1U << 0)	/* this id may not write */
#define ACCMAP_CKPT_H_FROM_VA_WRITE	(1U << 1)	/* FROM_VA with write access */
#define ACCMAP_CKPT_H_EXPORT_RDONLY	(1U << 2)	/* keeps a read-only dma-buf */
#define ACCMAP_CKPT_H_EXPORT_RDWR	(1U << 3)	/* keeps a read-write dma-buf */
#define ACCMAP_CKPT_H_VALID		(ACCMAP_CKPT_H_ID_RDONLY |	\
					 ACCMAP_CKPT_H_FROM_VA_WRITE |	\
					 ACCMAP_CKPT_H_EXPORT_RDONLY |	\
					 ACCMAP_CKPT_H_EXPORT_RDWR)

/**
 * struct accmap_ckpt_handle - one id of a client
 * @serial:      the buffer: the same in every record, of any client, that
 *               names the same buffer; never reused while the module is
 *               loaded
 * @size:        bytes
 * @map_offset:  the buffer's /dev/accmap mmap() offset, 0 if it has none
 * @va:          FROM_VA: the first byte of the process memory; else 0
 * @id:          the id
 * @kind:        ACCMAP_CKPT_KIND_*
 * @heap:        ALLOC: the heap id; else ACCMAP_HEAP_NONE
 * @flags:       ALLOC: the ACCMAP_ALLOC_* flags; else 0
 * @tag:         the tag
 * @pad:         0
 * @state:       ACCMAP_CKPT_H_* bits
 * @origin_pid:  FROM_VA: the process whose memory it pins; else 0
 * @pad2:        0
 * @heap_name:   ALLOC: the heap's name (a carveout comes back in the
 *               carveout of that name); else empty
 * @label:       the tag's label, empty if it has none
 */
struct accmap_ckpt_handle {
	__u64 serial;
	__u64 size;
	__u64 map_offset;
	__u64 va;
	__u32 id;
	__u32 kind;
	__u32 heap;
	__u32 flags;
	__u16 tag;
	__u16 pad;
	__u32 state;
	__u32 origin_pid;
	__u32 pad2;
	char heap_name[ACCMAP_HEAP_NAME_LEN];
	char label[ACCMAP_LABEL_LEN];
};

/**
 * struct accmap_ckpt_svm_attr - one attribute range of an SVM session
 * @start:    first byte
 * @size:     bytes
 * @attrs:    ACCMAP_SVM_ATTR_*
 * @granule:  log2 of the fault granule
 * @location: ACCMAP_SVM_LOC_*
 * @pad:      0
 */
struct accmap_ckpt_svm_attr {
	__u64 start;
	__u64 size;
	__u32 attrs;
	__u32 granule;
	__u32 location;
	__u32 pad;
};

/**
 * struct accmap_ckpt_session - one replay session of a client
 * @id:        the session id
 * @target:    as REPLAY_SETUP's
 * @format:    as REPLAY_SETUP's
 * @as:        as REPLAY_SETUP's
 * @va_bits:   as REPLAY_SETUP's
 * @flags:     as REPLAY_SETUP's
 * @nr_maps:   struct accmap_replay_map records right after this one
 * @nr_attrs:  struct accmap_ckpt_svm_attr records after the maps
 * @svm_start: as REPLAY_SETUP's
 * @svm_size:  as REPLAY_SETUP's
 */
struct accmap_ckpt_session {
	__u32 id;
	__u32 target;
	__u32 format;
	__u32 as;
	__u32 va_bits;
	__u32 flags;
	__u32 nr_maps;
	__u32 nr_attrs;
	__u64 svm_start;
	__u64 svm_size;
};

/*
 * The software Mali model's own compute job.  A Mali job descriptor whose
 * header (32 bytes, 64-bit descriptor format) has job type
 * ACCMAP_SIM_JOB_TYPE carries struct accmap_sim_job right after the
 * header.  Matrices are dense, row-major, int32; arithmetic wraps.  The
 * model runs it through the session's page tables: A and B need read
 * permission, C write permission.
 */
#define ACCMAP_SIM_JOB_TYPE		0x40
#define ACCMAP_SIM_JOB_OFFSET		32	/* after the job header */

/*
 * How the model walks a job chain: the rules a descriptor must meet, here
 * so that tools checking a recording (accmapctl import-gpureplay) apply the
 * same ones.  A descriptor lies at a multiple of ACCMAP_SIM_JD_ALIGN; its
 * header is ACCMAP_SIM_JD_SIZE bytes (the Mali job header): a le32
 * exception status at ACCMAP_SIM_JD_STATUS (the model writes the job's
 * JS_STATUS code there when it ends), a type byte at ACCMAP_SIM_JD_TYPE
 * (bit 0: the next pointer is 64 bits, else only its low 32 bits count;
 * bits 7:1: the job type, ACCMAP_SIM_JD_TYPE_MIN to ACCMAP_SIM_JD_TYPE_MAX
 * for a Mali job, whose payload the model leaves alone, or
 * ACCMAP_SIM_JOB_TYPE), and the le64 next descriptor at ACCMAP_SIM_JD_NEXT
 * (0 ends the chain).  A chain of more than ACCMAP_SIM_CHAIN_MAX
 * descriptors, a loop, a misaligned or unknown descriptor fails with
 * DATA_INVALID_FAULT (0x58); one the MMU cannot reach faults.
 */
#define ACCMAP_SIM_JD_ALIGN		64
#define ACCMAP_SIM_JD_SIZE		32
#define ACCMAP_SIM_JD_STATUS		0
#define ACCMAP_SIM_JD_TYPE		16
#define ACCMAP_SIM_JD_NEXT_64		0x01
#define ACCMAP_SIM_JD_TYPE_SHIFT	1
#define ACCMAP_SIM_JD_NEXT		24
#define ACCMAP_SIM_JD_TYPE_MIN		1	/* Mali NULL job */
#define ACCMAP_SIM_JD_TYPE_MAX		9	/* Mali FRAGMENT job */
#define ACCMAP_SIM_CHAIN_MAX		65536

#define ACCMAP_SIM_OP_MATMUL_I32	1	/* C[m][n] = A[m][k] x B[k][n] */
#define ACCMAP_SIM_OP_VADD_I32		2	/* C[i] = A[i] + B[i], i < n; m = k = 1 */
#define ACCMAP_SIM_OP_LIST_SUM_I32	3	/* walk a list from A: C = {sum, nodes} */

#define ACCMAP_SIM_DIM_MAX		4096
#define ACCMAP_SIM_ELEMS_MAX		(1U << 20)	/* per matrix */
#define ACCMAP_SIM_MACS_MAX		(1ULL << 27)	/* m * n * k */

/**
 * struct accmap_sim_job - payload of an ACCMAP_SIM_JOB_TYPE job
 * @op:    ACCMAP_SIM_OP_*
 * @flags: none defined yet, 0
 * @m:     rows of A and C, 1 to ACCMAP_SIM_DIM_MAX
 * @n:     columns of B and C, 1 to ACCMAP_SIM_DIM_MAX
 * @k:     columns of A, rows of B, 1 to ACCMAP_SIM_DIM_MAX
 * @pad:   0
 * @a:     GPU virtual address of A
 * @b:     GPU virtual address of B
 * @c:     GPU virtual address of C
 *
 * ACCMAP_SIM_OP_LIST_SUM_I32 reads the fields otherwise: @a is the first
 * node of a singly linked list (0: empty), each node holding a 64-bit
 * little-endian pointer to the next (0 ends the list) at byte offset @m
 * and an int32 value at byte offset @k (both below ACCMAP_SIM_DIM_MAX,
 * @m a multiple of 8, @k of 4); @n (1 to ACCMAP_SIM_ELEMS_MAX) is the
 * most nodes the list may have; @b is 0; @c receives two le32 words, the
 * wrapping sum of the values and the number of nodes.  Pointers are GPU
 * virtual addresses, so in an SVM session plain CPU pointers.
 *
 * A malformed payload fails the job with status DATA_INVALID_FAULT (0x58),
 * and so does a list longer than @n nodes or a node whose fields are not
 * aligned.
 */
struct accmap_sim_job {
	__u32 op;
	__u32 flags;
	__u32 m;
	__u32 n;
	__u32 k;
	__u32 pad;
	__u64 a;
	__u64 b;
	__u64 c;
};

#define ACCMAP_IOC_CREATE	_IOWR(ACCMAP_IOCTL_MAGIC, 0x00, struct accmap_create)
#define ACCMAP_IOC_ALLOC	_IOWR(ACCMAP_IOCTL_MAGIC, 0x01, struct accmap_alloc)
#define ACCMAP_IOC_FREE		_IOW(ACCMAP_IOCTL_MAGIC, 0x02, struct accmap_free)
#define ACCMAP_IOC_GET_FD	_IOWR(ACCMAP_IOCTL_MAGIC, 0x03, struct accmap_get_fd)
#define ACCMAP_IOC_INFO		_IOWR(ACCMAP_IOCTL_MAGIC, 0x04, struct accmap_info)
#define ACCMAP_IOC_FROM_FD	_IOWR(ACCMAP_IOCTL_MAGIC, 0x05, struct accmap_from_fd)
#define ACCMAP_IOC_WRITE	_IOWR(ACCMAP_IOCTL_MAGIC, 0x06, struct accmap_rw)
#define ACCMAP_IOC_READ		_IOWR(ACCMAP_IOCTL_MAGIC, 0x07, struct accmap_rw)
#define ACCMAP_IOC_SET_TAG_LABEL _IOW(ACCMAP_IOCTL_MAGIC, 0x08, struct accmap_tag_label)
#define ACCMAP_IOC_QUERY_HEAP	_IOWR(ACCMAP_IOCTL_MAGIC, 0x09, struct accmap_heap_info)
#define ACCMAP_IOC_QUERY_POOL	_IOWR(ACCMAP_IOCTL_MAGIC, 0x0a, struct accmap_pool_info)
#define ACCMAP_IOC_CACHE	_IOW(ACCMAP_IOCTL_MAGIC, 0x0b, struct accmap_cache_op)
#define ACCMAP_IOC_CACHE_LIST	_IOWR(ACCMAP_IOCTL_MAGIC, 0x0c, struct accmap_cache_list)
#define ACCMAP_IOC_FROM_VA	_IOWR(ACCMAP_IOCTL_MAGIC, 0x0d, struct accmap_from_va)
#define ACCMAP_IOC_REPLAY_QUERY	_IOWR(ACCMAP_IOCTL_MAGIC, 0x0e, struct accmap_replay_target_info)
#define ACCMAP_IOC_REPLAY_SETUP	_IOWR(ACCMAP_IOCTL_MAGIC, 0x0f, struct accmap_replay_setup)
#define ACCMAP_IOC_REPLAY_RUN	_IOWR(ACCMAP_IOCTL_MAGIC, 0x10, struct accmap_replay_run)
#define ACCMAP_IOC_REPLAY_DESTROY _IOW(ACCMAP_IOCTL_MAGIC, 0x11, struct accmap_replay_destroy)
#define ACCMAP_IOC_SVM		_IOWR(ACCMAP_IOCTL_MAGIC, 0x12, struct accmap_svm_op)
#define ACCMAP_IOC_MAP_OFFSET	_IOWR(ACCMAP_IOCTL_MAGIC, 0x13, struct accmap_map_offset)
#define ACCMAP_IOC_CHECKPOINT	_IOWR(ACCMAP_IOCTL_MAGIC, 0x14, struct accmap_ckpt)

#endif /* _UAPI_LINUX_ACCMAP_H */

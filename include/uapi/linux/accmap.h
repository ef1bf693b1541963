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
 * user heap, which ALLOC never allocates from.
 */
#define ACCMAP_HEAP_SYSTEM		0
#define ACCMAP_HEAP_CARVEOUT_FIRST	1
#define ACCMAP_HEAP_CARVEOUT_MAX	16
#define ACCMAP_HEAP_USER		31
#define ACCMAP_HEAP_MAX			32
/* Reported in accmap_info.heap while a handle has no memory yet. */
#define ACCMAP_HEAP_NONE		0xffffffffU

#define ACCMAP_HEAP_MASK_SYSTEM		(1U << ACCMAP_HEAP_SYSTEM)

/**
 * struct accmap_create - ACCMAP_IOC_CREATE argument
 * @size:  in: size in bytes, rounded up to a whole number of pages
 * @flags: in: no flags are defined yet, must be 0
 * @id:    out: the new handle's id in this client, never 0
 */
struct accmap_create {
	__u64 size;
	__u32 flags;
	__u32 id;
};

#define ACCMAP_CREATE_VALID_FLAGS	0U

/*
 * CPU memory attribute of a buffer, in accmap_alloc.flags; at most one of
 * them.  Cached is the default; write-combined and uncached buffers are
 * mapped that way in user space and in the kernel, and need no CPU cache
 * maintenance.
 */
#define ACCMAP_ALLOC_WRITECOMBINE	(1U << 0)
#define ACCMAP_ALLOC_UNCACHED		(1U << 1)
#define ACCMAP_ALLOC_VALID_FLAGS	(ACCMAP_ALLOC_WRITECOMBINE | \
					 ACCMAP_ALLOC_UNCACHED)

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
 * @exports:     out: live dma-bufs of the buffer (at most one per access
 *               mode; each may have many file descriptors)
 * @maps:        out: CPU mappings (vmas) of the buffer
 * @attachments: out: device attachments of importers
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
};

#define ACCMAP_INFO_SIZE_VER1	32

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
 */
struct accmap_heap_info {
	__u32 heap;
	__u32 pad;
	char name[ACCMAP_HEAP_NAME_LEN];
	__u64 total;
	__u64 used;
	__u64 free;
	__u64 largest_free;
};

#define ACCMAP_POOL_MAX_ORDERS	4

/**
 * struct accmap_pool_order - one free list of the page pool
 * @order:      page order of the list (0: 4 KiB, 4: 64 KiB, 9: 2 MiB with
 *              4 KiB pages)
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

#endif /* _UAPI_LINUX_ACCMAP_H */

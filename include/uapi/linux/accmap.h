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

/* Heap identifiers; a heap mask has bit (1 << id) set for each heap. */
#define ACCMAP_HEAP_SYSTEM		0
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
 * CPU memory attribute of a buffer, in accmap_alloc.flags.  Cached is the
 * default; write-combined buffers are mapped write-combined in user space
 * and skip CPU cache maintenance on device mapping.
 */
#define ACCMAP_ALLOC_WRITECOMBINE	(1U << 0)
#define ACCMAP_ALLOC_VALID_FLAGS	(ACCMAP_ALLOC_WRITECOMBINE)

/**
 * struct accmap_alloc - ACCMAP_IOC_ALLOC argument
 * @id:        in: handle id from ACCMAP_IOC_CREATE
 * @heap_mask: in: heaps the memory may come from, one bit per heap id;
 *             the lowest-numbered heap that has the memory is used
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

/**
 * struct accmap_info - ACCMAP_IOC_INFO argument
 * @id:    in: handle id
 * @pad:   must be 0
 * @size:  out: size in bytes (page aligned)
 * @heap:  out: heap id, or ACCMAP_HEAP_NONE before ALLOC
 * @flags: out: the ACCMAP_ALLOC_* flags the memory was allocated with
 * @state: out: ACCMAP_STATE_* bits
 * @tag:   out: accounting tag given at ALLOC
 * @pad2:  out: always 0
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
};

#define ACCMAP_IOC_CREATE	_IOWR(ACCMAP_IOCTL_MAGIC, 0x00, struct accmap_create)
#define ACCMAP_IOC_ALLOC	_IOWR(ACCMAP_IOCTL_MAGIC, 0x01, struct accmap_alloc)
#define ACCMAP_IOC_FREE		_IOW(ACCMAP_IOCTL_MAGIC, 0x02, struct accmap_free)
#define ACCMAP_IOC_GET_FD	_IOWR(ACCMAP_IOCTL_MAGIC, 0x03, struct accmap_get_fd)
#define ACCMAP_IOC_INFO		_IOWR(ACCMAP_IOCTL_MAGIC, 0x04, struct accmap_info)

#endif /* _UAPI_LINUX_ACCMAP_H */

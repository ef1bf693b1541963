/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libaccmap: a small C library over the ioctls of /dev/accmap.
 *
 * Every function returns 0 on success or a negative errno value on failure;
 * errno is not part of the interface (it may be changed by any call).
 * Interrupted ioctls (EINTR) are retried inside the library.  The library
 * keeps no state, the SVM aperture aside: every call takes the file
 * descriptor of an open /dev/accmap, and any number of threads may call
 * it at once.
 *
 * The ioctl argument structures and the ACCMAP_* constants come from the
 * kernel's uapi header <linux/accmap.h>; the errno values each ioctl can
 * return are listed in Documentation/userspace-api/accmap.rst.
 */
#ifndef LIBACCMAP_ACCMAP_H
#define LIBACCMAP_ACCMAP_H

#include <stddef.h>
#include <stdint.h>

#include <linux/accmap.h>
#include <linux/dma-buf.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library is built with -fvisibility=hidden: what this header declares
 * is its interface, and the only thing it exports.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* The device node accmap_open() opens. */
#define ACCMAP_DEVICE_PATH	"/dev/accmap"

/**
 * accmap_open() - open the accmap device
 * @fd: set to the new file descriptor on success
 *
 * Opens ACCMAP_DEVICE_PATH read-write with O_CLOEXEC.  Each open file is one
 * accmap client with its own handle ids; closing it drops every handle
 * reference the client still holds.
 *
 * Return: 0, or the negative errno of open(2) (-ENOENT when the module is
 * not loaded, -EACCES without permission on the node).
 */
int accmap_open(int *fd);

/**
 * accmap_open_path() - open an accmap device node by path
 * @path: the device node, for instance ACCMAP_DEVICE_PATH
 * @fd: set to the new file descriptor on success
 *
 * As accmap_open(), for a device node that is not at the default path.
 *
 * Return: 0, -EINVAL if @path or @fd is NULL, or the negative errno of
 * open(2).
 */
int accmap_open_path(const char *path, int *fd);

/**
 * accmap_close() - close an accmap device file descriptor
 * @fd: the file descriptor from accmap_open()
 *
 * Dropping the client releases every handle reference it held; buffers
 * that are still exported or mapped live on until those go too.  EINTR
 * from close(2) counts as success: Linux has closed the descriptor then.
 *
 * Return: 0, or the negative errno of close(2).
 */
int accmap_close(int fd);

/**
 * accmap_create() - create a handle without memory (ACCMAP_IOC_CREATE)
 * @fd: accmap device file descriptor
 * @size: size in bytes; the kernel rounds it up to whole pages
 * @id: set to the new handle id (never 0) on success
 *
 * Return: 0, -EINVAL if @id is NULL, or the ioctl's negative errno.
 */
int accmap_create(int fd, uint64_t size, uint32_t *id);

/**
 * accmap_alloc() - give a handle its memory (ACCMAP_IOC_ALLOC)
 * @fd: accmap device file descriptor
 * @id: handle id from accmap_create()
 * @heap_mask: heaps the memory may come from, bit (1 << heap id) for each;
 *             the lowest-numbered heap that has the memory is used
 * @flags: ACCMAP_ALLOC_* flags: 0 (cached), ACCMAP_ALLOC_WRITECOMBINE or
 *         ACCMAP_ALLOC_UNCACHED
 * @align: alignment in bytes: 0 (page) or a power of two up to
 *         ACCMAP_ALLOC_MAX_ALIGN
 * @tag: accounting tag (0: untagged)
 * @heap: if not NULL, set to the heap id the memory came from on success
 *
 * Return: 0, or the ioctl's negative errno.
 */
int accmap_alloc(int fd, uint32_t id, uint32_t heap_mask, uint32_t flags,
		 uint32_t align, uint16_t tag, uint32_t *heap);

/**
 * accmap_create_alloc() - create a handle with its memory in one call
 *                         (ACCMAP_IOC_CREATE with ACCMAP_CREATE_ALLOC)
 * @fd: accmap device file descriptor
 * @size: size in bytes, rounded up to whole pages
 * @heap_mask: heaps the memory may come from, as for accmap_alloc()
 * @flags: ACCMAP_ALLOC_* flags, as for accmap_alloc()
 * @align: alignment, as for accmap_alloc()
 * @tag: accounting tag (0: untagged)
 * @id: set to the new handle id on success
 * @heap: if not NULL, set to the heap id the memory came from on success
 * @offset: if not NULL, set to the buffer's mmap() offset on the device
 *          (as accmap_map_offset() gives it) on success
 *
 * On failure no id is left behind and @id is untouched.  A kernel older
 * than ACCMAP_CREATE_ALLOC refuses the call with -E2BIG (its CREATE does
 * not know the allocation fields); accmap_alloc_buffer() falls back to
 * two calls then.
 *
 * Return: 0, -EINVAL if @id is NULL, or the ioctl's negative errno.
 */
int accmap_create_alloc(int fd, uint64_t size, uint32_t heap_mask, uint32_t flags,
			uint32_t align, uint16_t tag, uint32_t *id, uint32_t *heap,
			uint64_t *offset);

/**
 * accmap_alloc_buffer() - create a handle and allocate its memory
 * @fd: accmap device file descriptor
 * @size: size in bytes, rounded up to whole pages
 * @heap_mask: heaps the memory may come from, as for accmap_alloc()
 * @flags: ACCMAP_ALLOC_* flags
 * @tag: accounting tag (0: untagged)
 * @id: set to the new handle id on success
 *
 * accmap_create_alloc() with page alignment; on a kernel without it,
 * accmap_create() followed by accmap_alloc().  If the allocation fails,
 * no handle is left behind and @id is untouched.  accmap_info() tells
 * which heap was used.
 *
 * Return: 0, -EINVAL if @id is NULL, or the negative errno of the ioctl
 * that failed.
 */
int accmap_alloc_buffer(int fd, uint64_t size, uint32_t heap_mask,
			uint32_t flags, uint16_t tag, uint32_t *id);

/**
 * accmap_free() - drop this client's reference to a handle (ACCMAP_IOC_FREE)
 * @fd: accmap device file descriptor
 * @id: handle id
 *
 * The id is invalid afterwards.  The memory goes when the last handle
 * reference, dma-buf and CPU mapping of the buffer are gone.
 *
 * Return: 0, or the ioctl's negative errno (-ENOENT for an unknown id).
 */
int accmap_free(int fd, uint32_t id);

/**
 * accmap_get_fd() - export a buffer as a dma-buf (ACCMAP_IOC_GET_FD)
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @fd_flags: O_RDWR or O_RDONLY, optionally with O_CLOEXEC
 * @dmabuf_fd: set to the new dma-buf file descriptor on success
 *
 * The dma-buf fd can be mapped with accmap_map(), passed to other drivers
 * and processes, and imported again with accmap_from_fd().  The caller
 * closes it with close(2).
 *
 * Return: 0, -EINVAL if @dmabuf_fd is NULL, or the ioctl's negative errno.
 */
int accmap_get_fd(int fd, uint32_t id, uint32_t fd_flags, int *dmabuf_fd);

/**
 * accmap_from_fd() - import an accmap dma-buf (ACCMAP_IOC_FROM_FD)
 * @fd: accmap device file descriptor
 * @dmabuf_fd: a dma-buf file descriptor exported by accmap, possibly by
 *             another process
 * @id: set to a new handle id in this client for the same buffer
 *
 * The new id holds its own handle reference: drop it with accmap_free().
 * @dmabuf_fd stays open and owned by the caller.
 *
 * Return: 0, -EINVAL if @id is NULL, or the ioctl's negative errno
 * (-EBADF for a closed fd, -EINVAL for a file that is not a dma-buf,
 * -EXDEV for a dma-buf of another exporter or another accmap device).
 */
int accmap_from_fd(int fd, int dmabuf_fd, uint32_t *id);

/**
 * accmap_info() - describe a handle (ACCMAP_IOC_INFO)
 * @fd: accmap device file descriptor
 * @id: handle id
 * @info: filled in on success
 *
 * @info is cleared and its @id set before the call.  The structure is the
 * one of the <linux/accmap.h> this library was built with; a kernel that
 * knows an older, shorter version leaves the fields it does not know at 0.
 *
 * Return: 0, -EINVAL if @info is NULL, or the ioctl's negative errno.
 */
int accmap_info(int fd, uint32_t id, struct accmap_info *info);

/**
 * accmap_write() - copy bytes into a buffer (ACCMAP_IOC_WRITE)
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @offset: byte offset in the buffer
 * @src: the bytes to copy
 * @len: number of bytes, at least 1
 *
 * One contiguous copy, without mapping the buffer.  The kernel does the
 * cache maintenance the buffer's memory type needs.
 *
 * Return: 0 once all @len bytes are copied, or the ioctl's negative errno
 * (-EINVAL when @len is 0, -ERANGE when the range is not inside the
 * buffer, -ENODATA when the handle has no memory yet).
 */
int accmap_write(int fd, uint32_t id, uint64_t offset, const void *src,
		 size_t len);

/**
 * accmap_read() - copy bytes out of a buffer (ACCMAP_IOC_READ)
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @offset: byte offset in the buffer
 * @dst: where to put the bytes
 * @len: number of bytes, at least 1
 *
 * Return: 0 once all @len bytes are copied, or the ioctl's negative errno
 * (-EINVAL when @len is 0, -ERANGE when the range is not inside the
 * buffer, -ENODATA when the handle has no memory yet).
 */
int accmap_read(int fd, uint32_t id, uint64_t offset, void *dst, size_t len);

/**
 * accmap_write_strided() - strided copy into a buffer (ACCMAP_IOC_WRITE)
 * @fd: accmap device file descriptor
 * @rw: the full request; its @bytes is set to the bytes copied
 *
 * Copies @rw->count elements of @rw->elem_size bytes from user memory at
 * @rw->addr (stepping @rw->user_stride) into the buffer at @rw->offset
 * (stepping @rw->handle_stride).  @rw is passed to the kernel as it is.
 *
 * Return: 0, -EINVAL if @rw is NULL, or the ioctl's negative errno.
 */
int accmap_write_strided(int fd, struct accmap_rw *rw);

/**
 * accmap_read_strided() - strided copy out of a buffer (ACCMAP_IOC_READ)
 * @fd: accmap device file descriptor
 * @rw: the full request; its @bytes is set to the bytes copied
 *
 * As accmap_write_strided(), from the buffer into user memory at
 * @rw->addr.
 *
 * Return: 0, -EINVAL if @rw is NULL, or the ioctl's negative errno.
 */
int accmap_read_strided(int fd, struct accmap_rw *rw);

/**
 * accmap_from_va() - make a buffer of the caller's memory (ACCMAP_IOC_FROM_VA)
 * @fd: accmap device file descriptor
 * @addr: page-aligned start of the memory
 * @size: bytes, a non-zero multiple of the page size
 * @flags: 0 for a read-only buffer, or ACCMAP_FROM_VA_WRITE
 * @tag: accounting tag (0: untagged)
 * @id: set to the new handle id on success
 *
 * The pages behind [@addr, @addr + @size) are pinned and become the memory
 * of a new handle in heap ACCMAP_HEAP_USER; they stay pinned, and charged
 * to this process's RLIMIT_MEMLOCK, until the buffer's memory goes.
 *
 * Return: 0, -EINVAL if @id is NULL, or the ioctl's negative errno
 * (-EINVAL for a misaligned or empty range, -EFAULT for memory that cannot
 * be pinned, -ENOMEM over RLIMIT_MEMLOCK).
 */
int accmap_from_va(int fd, void *addr, uint64_t size, uint32_t flags,
		   uint16_t tag, uint32_t *id);

/**
 * accmap_cache() - CPU cache maintenance on a range (ACCMAP_IOC_CACHE)
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @op: ACCMAP_CACHE_WRITEBACK, ACCMAP_CACHE_INVALIDATE or
 *      ACCMAP_CACHE_WRITEBACK_INVALIDATE
 * @offset: first byte of the range in the buffer
 * @length: bytes in the range, at least 1
 *
 * Write-back makes CPU writes visible to devices, invalidate makes device
 * writes visible to the CPU.  Write-combined and uncached buffers need
 * none: the call succeeds and does nothing.
 *
 * Return: 0, or the ioctl's negative errno (-EINVAL for an unknown @op or
 * a zero @length, -ERANGE when the range is not inside the buffer,
 * -ENOENT for an unknown id, -ENODATA when the handle has no memory).
 */
int accmap_cache(int fd, uint32_t id, uint32_t op, uint64_t offset,
		 uint64_t length);

/* accmap_cache_list() sets *done to this when no entry is to blame. */
#define ACCMAP_CACHE_LIST_NO_ENTRY	UINT32_MAX

/**
 * accmap_cache_list() - several cache operations (ACCMAP_IOC_CACHE_LIST)
 * @fd: accmap device file descriptor
 * @ops: @count operations, each as for accmap_cache()
 * @count: entries in @ops, 1 to ACCMAP_CACHE_LIST_MAX
 * @done: if not NULL, set to @count on success; on failure, to the index
 *        of the entry that failed, or to ACCMAP_CACHE_LIST_NO_ENTRY when
 *        the list was refused as a whole (bad @count, unreadable @ops)
 *
 * The kernel checks every entry before it carries out any, so a failure
 * while checking (-EINVAL, -ERANGE, -ENOENT, -ENODATA) means that no
 * entry was carried out; -ENOMEM while carrying them out means that the
 * entries before *@done were.
 *
 * Return: 0, -EINVAL if @ops is NULL (@done is then left alone), or the
 * ioctl's negative errno (-EINVAL for @count 0 or above
 * ACCMAP_CACHE_LIST_MAX, -EFAULT when @ops cannot be read).
 */
int accmap_cache_list(int fd, const struct accmap_cache_op *ops,
		      uint32_t count, uint32_t *done);

/**
 * accmap_set_tag_label() - name an accounting tag (ACCMAP_IOC_SET_TAG_LABEL)
 * @fd: accmap device file descriptor
 * @tag: the tag
 * @label: printable ASCII, at most ACCMAP_LABEL_LEN - 1 characters; ""
 *         removes the tag's name
 *
 * Tag names are shared by all clients of the device and show in debugfs.
 *
 * Return: 0, -EINVAL if @label is NULL, -ENAMETOOLONG (without calling the
 * kernel) if @label has ACCMAP_LABEL_LEN characters or more, or the ioctl's
 * negative errno (-EINVAL for characters that are not printable ASCII).
 */
int accmap_set_tag_label(int fd, uint16_t tag, const char *label);

/**
 * accmap_query_heap() - usage of one heap (ACCMAP_IOC_QUERY_HEAP)
 * @fd: accmap device file descriptor
 * @heap: heap id, below ACCMAP_HEAP_MAX
 * @info: filled in on success
 *
 * @info is cleared and its @heap set before the call.
 *
 * Return: 0, -EINVAL if @info is NULL, or the ioctl's negative errno
 * (-ENODEV when there is no heap with that id).
 */
int accmap_query_heap(int fd, uint32_t heap, struct accmap_heap_info *info);

/**
 * accmap_query_pool() - state of the page pool (ACCMAP_IOC_QUERY_POOL)
 * @fd: accmap device file descriptor
 * @info: filled in on success; @info->norders entries of @info->orders
 *        are valid
 *
 * @info is cleared before the call.  A block of order n is
 * (page size << n) bytes.
 *
 * Return: 0, -EINVAL if @info is NULL, or the ioctl's negative errno.
 */
int accmap_query_pool(int fd, struct accmap_pool_info *info);

/**
 * accmap_map() - map a dma-buf into this process
 * @dmabuf_fd: dma-buf file descriptor, for instance from accmap_get_fd()
 * @size: bytes to map from the start of the buffer
 * @prot: PROT_READ, optionally with PROT_WRITE (needs an O_RDWR dma-buf)
 * @addr: set to the address of the shared mapping on success
 *
 * CPU access through the mapping is bracketed with accmap_sync().
 *
 * Return: 0, -EINVAL if @addr is NULL, or the negative errno of mmap(2).
 */
int accmap_map(int dmabuf_fd, size_t size, int prot, void **addr);

/**
 * accmap_map_offset() - a buffer's mmap() offset on the device
 *                       (ACCMAP_IOC_MAP_OFFSET)
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @offset: set to the offset on success
 *
 * The offset is the buffer's for as long as it lives, the same in every
 * client; mmap(2) of it on any accmap device file whose client holds an
 * id for the buffer maps the buffer with no dma-buf file (see
 * accmap_map_id()).
 *
 * Return: 0, -EINVAL if @offset is NULL, or the ioctl's negative errno
 * (-ENOENT for an unknown id, -EINVAL for a handle without memory).
 */
int accmap_map_offset(int fd, uint32_t id, uint64_t *offset);

/**
 * accmap_map_id() - map a buffer through the device file
 * @fd: accmap device file descriptor
 * @id: handle id of a handle that has memory
 * @size: bytes to map from the start of the buffer
 * @prot: PROT_READ, optionally with PROT_WRITE (needs an id that may
 *        write the buffer)
 * @addr: set to the address of the shared mapping on success
 *
 * accmap_map_offset() then a shared mmap(2) of @fd at that offset.  The
 * mapping behaves as one of a dma-buf of the buffer; undo it with
 * accmap_unmap().
 *
 * Return: 0, -EINVAL if @addr is NULL, or the negative errno of the ioctl
 * or of mmap(2).
 */
int accmap_map_id(int fd, uint32_t id, size_t size, int prot, void **addr);

/**
 * accmap_unmap() - undo accmap_map()
 * @addr: the address accmap_map() returned
 * @size: the size given to accmap_map()
 *
 * Return: 0, or the negative errno of munmap(2).
 */
int accmap_unmap(void *addr, size_t size);

/**
 * accmap_sync() - begin or end CPU access to a mapped dma-buf
 * @dmabuf_fd: dma-buf file descriptor
 * @flags: DMA_BUF_SYNC_START or DMA_BUF_SYNC_END, with DMA_BUF_SYNC_READ,
 *         DMA_BUF_SYNC_WRITE or DMA_BUF_SYNC_RW
 *
 * Issues DMA_BUF_IOCTL_SYNC, which does the cache maintenance for CPU
 * access.  The dma-buf documentation says the ioctl must be restarted on
 * EINTR and EAGAIN; this function does so.
 *
 * Return: 0, or the ioctl's negative errno.
 */
int accmap_sync(int dmabuf_fd, uint64_t flags);

/*
 * Replay.  Every replay ioctl needs CAP_SYS_RAWIO (-EPERM otherwise); the
 * contract of each is in <linux/accmap.h> and Documentation/userspace-api/.
 * recording.h builds on these to load and run whole recordings.
 */

/* How many target indices accmap_replay_find_target() tries at most. */
#define ACCMAP_REPLAY_TARGETS_MAX	256

/**
 * accmap_replay_query() - describe a replay target (ACCMAP_IOC_REPLAY_QUERY)
 * @fd: accmap device file descriptor
 * @index: target index, from 0
 * @info: filled in on success
 *
 * @info is cleared and its @index set before the call.  Walking indices
 * from 0 until -ENOENT lists every target.
 *
 * Return: 0, -EINVAL if @info is NULL, or the ioctl's negative errno
 * (-ENOENT past the last target, -EPERM without CAP_SYS_RAWIO).
 */
int accmap_replay_query(int fd, uint32_t index,
			struct accmap_replay_target_info *info);

/**
 * accmap_replay_find_target() - find a replay target by name
 * @fd: accmap device file descriptor
 * @name: the target's name, as accmap_replay_query() reports it
 * @index: set to the target's index on success
 * @info: if not NULL, filled in with the target's description on success
 *
 * Queries indices from 0 until a target has that name.
 *
 * Return: 0, -EINVAL if @name or @index is NULL, -ENODEV if no target has
 * that name, or the negative errno of a query that failed otherwise.
 */
int accmap_replay_find_target(int fd, const char *name, uint32_t *index,
			      struct accmap_replay_target_info *info);

/**
 * accmap_replay_setup() - build page tables for a session (ACCMAP_IOC_REPLAY_SETUP)
 * @fd: accmap device file descriptor
 * @setup: in: @maps, @nr_maps, @target, @format, @as, @va_bits, @flags,
 *         @svm_start, @svm_size (padding is not passed on: the library
 *         sends 0); out: @session and @table_pages on success,
 *         @failed_map always
 *
 * The input fields are copied into a zeroed argument.  @failed_map is the
 * index of the mapping a failure was caused by, or 0xffffffff.
 *
 * Return: 0, -EINVAL if @setup is NULL, or the ioctl's negative errno.
 */
int accmap_replay_setup(int fd, struct accmap_replay_setup *setup);

/**
 * accmap_replay_run() - run register operations (ACCMAP_IOC_REPLAY_RUN)
 * @fd: accmap device file descriptor
 * @session: session id from accmap_replay_setup()
 * @ops: @nr_ops operations
 * @nr_ops: 1 to ACCMAP_REPLAY_OPS_MAX
 * @result: cleared, its inputs set from the other arguments, and filled
 *          in by the kernel, on failure too: @result->done,
 *          @result->failed_op, @result->reason and the fault fields say
 *          where and why a run stopped
 *
 * Unlike every other call of the library, an interrupted run is not
 * issued again: the kernel fails a run with -EINTR only for a fatal
 * signal, and the operations it already carried out would run twice.
 *
 * Return: 0, -EINVAL if @ops or @result is NULL, or the ioctl's negative
 * errno (-EIO for a strict READ mismatch, an MMU fault or a failed job,
 * -ETIMEDOUT, -EINVAL for a malformed op, -ENOENT for an unknown session).
 */
int accmap_replay_run(int fd, uint32_t session, const struct accmap_replay_op *ops,
		      uint32_t nr_ops, struct accmap_replay_run *result);

/**
 * accmap_replay_destroy() - end a session (ACCMAP_IOC_REPLAY_DESTROY)
 * @fd: accmap device file descriptor
 * @session: session id
 *
 * The session's page tables go and its references on the mapped buffers
 * are dropped.  Closing @fd destroys every session of the client.
 *
 * Return: 0, or the ioctl's negative errno (-ENOENT for an unknown
 * session).
 */
int accmap_replay_destroy(int fd, uint32_t session);

/*
 * Shared virtual memory (SVM).  An SVM session's GPU address space mirrors
 * the calling process over a range of its addresses: a GPU address inside
 * the range is the same byte as the same CPU address, so plain pointers
 * (into malloc()ed memory, stacks, file mappings) work on the GPU as they
 * are, and nothing is pinned.  The contract (what is mirrored, which GPU
 * faults are recoverable, every errno) is in
 * Documentation/userspace-api/accmap.rst.  Like every replay ioctl these
 * need CAP_SYS_RAWIO, and only the process that made a session may use it
 * (-EPERM from any other, a forked child included).
 */

/**
 * accmap_svm_session_create() - make an SVM session (ACCMAP_IOC_REPLAY_SETUP)
 * @fd: accmap device file descriptor
 * @setup: in: @target, @format, @as, @va_bits, @svm_start and @svm_size
 *         (the mirrored range: page-aligned, @svm_size not 0, below
 *         1 << @va_bits and below the end of user space; an aperture's
 *         accmap_svm_aperture_info() gives one), and @maps / @nr_maps for
 *         handle mappings outside that range (@nr_maps may be 0), @flags
 *         (0, or flags besides ACCMAP_REPLAY_SETUP_SVM); out: @session and
 *         @table_pages on success, @failed_map always
 *
 * accmap_replay_setup() with ACCMAP_REPLAY_SETUP_SVM added to @flags.  The
 * session is run with accmap_replay_run() and ended with
 * accmap_replay_destroy() like any other.
 *
 * Return: 0, -EINVAL if @setup is NULL, or the ioctl's negative errno
 * (-EINVAL for a bad range or one that overlaps a mapping, -EOPNOTSUPP for
 * a target without SVM or a kernel without CONFIG_HMM_MIRROR, -EPERM
 * without CAP_SYS_RAWIO, -ENOMEM).
 */
int accmap_svm_session_create(int fd, struct accmap_replay_setup *setup);

/**
 * accmap_svm_set_attr() - set the attributes of part of an SVM range (ACCMAP_IOC_SVM)
 * @fd: accmap device file descriptor
 * @session: an SVM session of this process
 * @addr: first byte, page-aligned, inside the session's range
 * @size: bytes, a non-zero multiple of the page size, inside the range
 * @attrs: ACCMAP_SVM_ATTR_* for the whole subrange, replacing what it had
 * @granule: log2 of the most one GPU fault maps, ACCMAP_SVM_GRANULE_MIN to
 *           ACCMAP_SVM_GRANULE_MAX, or 0 for ACCMAP_SVM_GRANULE_DEFAULT
 * @location: preferred location: ACCMAP_SVM_LOC_SYSTEM, or
 *            ACCMAP_SVM_LOC_DEVICE (a GPU fault in the subrange migrates
 *            the fault's granule to the target's device memory first, then
 *            maps it from there)
 * @out: if not NULL, set on success to the argument as the kernel
 *       returned it: its counters (faults, fatal_faults, invalidations,
 *       mapped_bytes, huge_bytes, pages_mapped, and the migration
 *       counters device_bytes, to_device, to_system, cpu_faults,
 *       evictions, not_migrated) after the call
 *
 * The GPU entries the subrange had are dropped; later GPU accesses fault
 * them in again with the new attributes.  Pages already on the device stay
 * there when the location becomes SYSTEM: accmap_svm_prefetch() to SYSTEM
 * brings them back.
 *
 * Return: 0, or the ioctl's negative errno (-EINVAL for a bad range,
 * attribute, granule or location, -ENOENT for no such session,
 * -EOPNOTSUPP for a session that is not an SVM session, or for
 * ACCMAP_SVM_LOC_DEVICE where the target has no device memory, -ENOSPC
 * beyond ACCMAP_SVM_ATTR_RANGES_MAX attribute ranges, -EPERM from another
 * process, -ENOMEM).
 */
int accmap_svm_set_attr(int fd, uint32_t session, const void *addr, uint64_t size,
			uint32_t attrs, uint32_t granule, uint32_t location,
			struct accmap_svm_op *out);

/**
 * accmap_svm_prefetch() - map part of an SVM range for the GPU now (ACCMAP_IOC_SVM)
 * @fd: accmap device file descriptor
 * @session: an SVM session of this process
 * @addr: first byte, page-aligned, inside the session's range
 * @size: bytes, a non-zero multiple of the page size, inside the range
 * @location: where to bring the pages: ACCMAP_SVM_LOC_SYSTEM (device
 *            pages of the subrange come back to system memory first) or
 *            ACCMAP_SVM_LOC_DEVICE (the pages migrate to the target's
 *            device memory; never-touched pages are allocated there)
 * @out: if not NULL, set on success to the argument with the session's
 *       counters, as for accmap_svm_set_attr()
 *
 * Faults the subrange's pages in (for write where the VMA is writable and
 * the range not ACCMAP_SVM_ATTR_GPU_RO), migrates them where @location
 * says, and gives them GPU entries, so that a job takes no GPU faults
 * there.  Holes and PROT_NONE pages are skipped, not errors.  Nothing is
 * pinned: a later CPU change still drops entries.  Pages the kernel does
 * not migrate (shared or file-backed, pinned, busy) stay in system memory
 * and are counted in not_migrated; the call still succeeds.
 *
 * Return: 0, or the ioctl's negative errno, as for accmap_svm_set_attr()
 * (-EOPNOTSUPP for ACCMAP_SVM_LOC_DEVICE where the target has no device
 * memory; -EINTR when a signal interrupted the faulting; the call is then
 * issued again, as every interrupted call of the library).
 */
int accmap_svm_prefetch(int fd, uint32_t session, const void *addr, uint64_t size,
			uint32_t location, struct accmap_svm_op *out);

/**
 * accmap_svm_query() - an SVM session's counters (ACCMAP_IOC_SVM)
 * @fd: accmap device file descriptor
 * @session: an SVM session of this process
 * @out: set on success to the argument as the kernel returned it; its
 *       counters are the fields after @flags
 *
 * Return: 0, -EINVAL if @out is NULL, or the ioctl's negative errno
 * (-ENOENT, -EOPNOTSUPP, -EPERM as for accmap_svm_set_attr()).
 */
int accmap_svm_query(int fd, uint32_t session, struct accmap_svm_op *out);

/**
 * accmap_svm_migrate() - move a buffer's pages to a location (ACCMAP_IOC_SVM)
 * @fd: accmap device file descriptor
 * @session: an SVM session of this process
 * @ptr: first byte of the buffer, any alignment (a malloc() pointer will
 *       do), inside the session's range
 * @len: bytes, at least 1
 * @location: ACCMAP_SVM_LOC_DEVICE to migrate the pages to the target's
 *            device memory, ACCMAP_SVM_LOC_SYSTEM to bring them back
 * @out: if not NULL, set on success to the argument with the session's
 *       counters, as for accmap_svm_set_attr()
 *
 * accmap_svm_prefetch() of [@ptr, @ptr + @len) rounded out to whole CPU
 * pages: what shares the buffer's first and last page moves with it,
 * which changes nothing for the program (the addresses stay, and a CPU
 * access to a page on the device brings it back).  The pages get GPU
 * entries where they land.  The counters tell what moved: to_device or
 * to_system grew by the pages migrated, device_bytes is what the session
 * has on the device now, not_migrated grew by the pages the kernel kept
 * in system memory.
 *
 * Return: 0, -EINVAL without calling the kernel for @len 0 or a buffer
 * that wraps around the address space, or the ioctl's negative errno as
 * for accmap_svm_prefetch() (-EOPNOTSUPP for ACCMAP_SVM_LOC_DEVICE where
 * the target has no device memory).
 */
int accmap_svm_migrate(int fd, uint32_t session, const void *ptr, size_t len,
		       uint32_t location, struct accmap_svm_op *out);

/**
 * accmap_device_memory() - usage of the device memory (ACCMAP_IOC_QUERY_HEAP)
 * @fd: accmap device file descriptor
 * @info: filled in on success: @info->name is "device", @info->total the
 *        bytes of device memory, @info->used the bytes SVM pages of all
 *        processes occupy there now, @info->free and @info->largest_free
 *        what is left
 *
 * accmap_query_heap() of ACCMAP_HEAP_DEVICE: the replay target's own
 * memory, where SVM migrates pages (ACCMAP_SVM_LOC_DEVICE).  Buffers are
 * never allocated from it.  The kernel has it only when the module was
 * given device memory (parameter devmem=) and supports ZONE_DEVICE pages
 * of some kind; Documentation/userspace-api/accmap.rst says which.
 *
 * Return: 0, -EINVAL if @info is NULL, -ENODEV when there is no device
 * memory, or the ioctl's negative errno.
 */
int accmap_device_memory(int fd, struct accmap_heap_info *info);

/*
 * The SVM aperture: where GPU-reachable memory comes from.  A GPU with
 * fewer virtual address bits than the CPU's user address space cannot see
 * every pointer the process has; as ROCm's thunk does, the library then
 * reserves a range below 1 << va_bits (PROT_NONE, MAP_NORESERVE: address
 * space only, no memory) and hands out allocations inside it.  A GPU that
 * reaches the whole user range needs no reservation: any memory, malloc()
 * memory included, is reachable as it is.
 *
 * Unlike the rest of the library this is state: one aperture per process,
 * shared by all its threads, which may call these functions at once.  A
 * child made by fork() inherits the aperture and its allocations as they
 * were (but not the SVM sessions: those mirror their creator only).
 */

/* The smallest reservation accmap_svm_aperture_init() accepts, and its alignment. */
#define ACCMAP_SVM_APERTURE_MIN		(2ULL << 20)

/**
 * struct accmap_svm_aperture - what accmap_svm_aperture_info() reports
 * @start:       first byte the GPU can reach through the aperture: the
 *               @svm_start for accmap_svm_session_create()
 * @size:        bytes from @start: the @svm_size
 * @va_bits:     the GPU's virtual address bits given to
 *               accmap_svm_aperture_init()
 * @cpu_va_bits: the CPU's user address bits (accmap_svm_cpu_va_bits())
 * @reserved:    1 if [@start, @start + @size) is a reservation that
 *               accmap_svm_alloc() allocates inside (va_bits < cpu_va_bits);
 *               0 if it is the whole user range and any memory will do
 * @allocations: accmap_svm_alloc() blocks not freed yet
 * @allocated:   their bytes
 */
struct accmap_svm_aperture {
	uint64_t start;
	uint64_t size;
	uint32_t va_bits;
	uint32_t cpu_va_bits;
	uint32_t reserved;
	uint32_t allocations;
	uint64_t allocated;
};

/**
 * accmap_svm_cpu_va_bits() - the CPU's user virtual address bits
 * @bits: set on success: user addresses the kernel hands out without an
 *        address hint lie below 1 << @bits (47 on x86-64, 48 on arm64
 *        with 48-bit VA, 39 with 39-bit VA; 32 for 32-bit processes)
 *
 * Taken from where the kernel put this process's initial stack, at the
 * top of the default user range.  Addresses above it (x86-64's 5-level
 * paging, arm64's 52-bit VA) are only handed out to callers that ask
 * for them, which the aperture does not.
 *
 * Return: 0, or -EINVAL if @bits is NULL.
 */
int accmap_svm_cpu_va_bits(uint32_t *bits);

/**
 * accmap_svm_aperture_init() - set up the process's SVM aperture
 * @va_bits: the GPU's virtual address bits, ACCMAP_REPLAY_VA_BITS_MIN to
 *           ACCMAP_REPLAY_VA_BITS_MAX (the @va_bits of the SVM sessions)
 *
 * If @va_bits is at least the CPU's user address bits, the aperture is
 * the whole default user range (from the second page up to 1 <<
 * cpu_va_bits, less the top pages the kernel keeps out of user space) and
 * nothing is reserved.  Otherwise the largest range that can be had
 * below 1 << @va_bits is reserved: a power-of-two size, halved until a
 * reservation fits, aligned to ACCMAP_SVM_APERTURE_MIN, placed as high as
 * possible below the limit (the low addresses stay free for the program
 * and its brk heap).  accmap_svm_aperture_info() tells what was had.
 *
 * Return: 0, -EINVAL for @va_bits out of range, -EBUSY if the process has
 * an aperture already, -ENOMEM if no reservation of
 * ACCMAP_SVM_APERTURE_MIN bytes fits below the limit (or the library is
 * out of memory).
 */
int accmap_svm_aperture_init(uint32_t va_bits);

/**
 * accmap_svm_aperture_fini() - release the process's SVM aperture
 *
 * Context: any thread of the process.  The reservation is unmapped.
 * Sessions made over it stay valid (their range is simply unmapped memory
 * now) but should be destroyed first.
 *
 * Return: 0, -ENXIO without an aperture, -EBUSY while accmap_svm_alloc()
 * blocks are not freed.
 */
int accmap_svm_aperture_fini(void);

/**
 * accmap_svm_aperture_info() - describe the process's SVM aperture
 * @info: filled in on success
 *
 * Return: 0, -EINVAL if @info is NULL, -ENXIO without an aperture.
 */
int accmap_svm_aperture_info(struct accmap_svm_aperture *info);

/**
 * accmap_svm_aperture_check() - whether memory is reachable by the GPU
 * @addr: first byte
 * @size: bytes, at least 1
 *
 * Return: 0 if all of [@addr, @addr + @size) lies inside the aperture
 * (always, for memory the process has, when the aperture is the whole user
 * range), -ERANGE if not, -EINVAL for @size 0 or a range that wraps,
 * -ENXIO without an aperture.
 */
int accmap_svm_aperture_check(const void *addr, uint64_t size);

/**
 * accmap_svm_alloc() - allocate GPU-reachable memory
 * @size: bytes, at least 1; rounded up to whole pages
 * @ptr: set on success to the page-aligned start of the memory
 *
 * The memory is private anonymous memory, readable and writable, zeroed,
 * and lies inside the aperture; blocks of ACCMAP_SVM_APERTURE_MIN (2 MiB)
 * or more are aligned to 2 MiB, so that transparent huge pages (and 2 MiB
 * GPU blocks) can back them.  In a reservation, the first free range that
 * fits is used, and the rest of the reservation stays PROT_NONE: a CPU or
 * GPU access between blocks faults.  Release with accmap_svm_free(), not
 * free(3).
 *
 * Return: 0, -EINVAL if @size is 0 or @ptr is NULL, -ENXIO without an
 * aperture, -ENOMEM if no free range of the aperture fits (or the kernel
 * or library has no memory for it).
 */
int accmap_svm_alloc(size_t size, void **ptr);

/**
 * accmap_svm_free() - release memory from accmap_svm_alloc()
 * @ptr: the pointer accmap_svm_alloc() gave
 *
 * The block's pages go; in a reservation the range becomes PROT_NONE
 * again (a fresh MAP_NORESERVE mapping over it) and can be handed out
 * anew; otherwise it is unmapped.  GPU entries of live SVM sessions that
 * covered it are dropped by the kernel as for any CPU mapping change.
 * Should the kernel fail to replace the mapping, the block stays out of
 * use (never handed out again) and the error is returned.
 *
 * Return: 0, -EINVAL if @ptr is NULL or not the start of a block,
 * -ENXIO without an aperture, or the negative errno of mmap(2) or
 * munmap(2).
 */
int accmap_svm_free(void *ptr);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIBACCMAP_ACCMAP_H */

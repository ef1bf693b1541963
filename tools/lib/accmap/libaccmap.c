// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap: thin wrappers over the /dev/accmap ioctls.
 *
 * Each wrapper fills a zeroed argument structure (so padding and reserved
 * fields are 0, as the kernel requires), issues the ioctl, retries it on
 * EINTR, and turns failure into a negative errno.  See accmap.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "accmap.h"

/* errno as a negative return value; never 0, even if errno was not set. */
static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* ioctl(2), restarted while it fails with EINTR; 0 or -errno. */
static int accmap_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret == -1 && errno == EINTR);

	return ret == -1 ? neg_errno() : 0;
}

int accmap_open_path(const char *path, int *fd)
{
	int ret;

	if (!path || !fd)
		return -EINVAL;

	do {
		ret = open(path, O_RDWR | O_CLOEXEC);
	} while (ret == -1 && errno == EINTR);
	if (ret == -1)
		return neg_errno();

	*fd = ret;
	return 0;
}

int accmap_open(int *fd)
{
	return accmap_open_path(ACCMAP_DEVICE_PATH, fd);
}

int accmap_close(int fd)
{
	if (close(fd) == -1 && errno != EINTR)
		return neg_errno();
	return 0;
}

int accmap_create(int fd, uint64_t size, uint32_t *id)
{
	struct accmap_create arg;
	int ret;

	if (!id)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.size = size;
	ret = accmap_ioctl(fd, ACCMAP_IOC_CREATE, &arg);
	if (ret)
		return ret;

	*id = arg.id;
	return 0;
}

int accmap_alloc(int fd, uint32_t id, uint32_t heap_mask, uint32_t flags,
		 uint32_t align, uint16_t tag, uint32_t *heap)
{
	struct accmap_alloc arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.id = id;
	arg.heap_mask = heap_mask;
	arg.flags = flags;
	arg.align = align;
	arg.tag = tag;
	ret = accmap_ioctl(fd, ACCMAP_IOC_ALLOC, &arg);
	if (ret)
		return ret;

	if (heap)
		*heap = arg.heap;
	return 0;
}

int accmap_create_alloc(int fd, uint64_t size, uint32_t heap_mask, uint32_t flags,
			uint32_t align, uint16_t tag, uint32_t *id, uint32_t *heap,
			uint64_t *offset)
{
	struct accmap_create arg;
	int ret;

	if (!id)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.size = size;
	arg.flags = ACCMAP_CREATE_ALLOC;
	arg.heap_mask = heap_mask;
	arg.alloc_flags = flags;
	arg.align = align;
	arg.tag = tag;
	ret = accmap_ioctl(fd, ACCMAP_IOC_CREATE, &arg);
	if (ret)
		return ret;

	*id = arg.id;
	if (heap)
		*heap = arg.heap;
	if (offset)
		*offset = arg.offset;
	return 0;
}

int accmap_alloc_buffer(int fd, uint64_t size, uint32_t heap_mask,
			uint32_t flags, uint16_t tag, uint32_t *id)
{
	uint32_t new_id;
	int ret;

	if (!id)
		return -EINVAL;

	ret = accmap_create_alloc(fd, size, heap_mask, flags, 0, tag, id, NULL, NULL);
	if (ret != -E2BIG)
		return ret;

	/* A kernel before ACCMAP_CREATE_ALLOC: two calls. */
	ret = accmap_create(fd, size, &new_id);
	if (ret)
		return ret;

	ret = accmap_alloc(fd, new_id, heap_mask, flags, 0, tag, NULL);
	if (ret) {
		/* The allocation's error is the one that matters. */
		accmap_free(fd, new_id);
		return ret;
	}

	*id = new_id;
	return 0;
}

int accmap_free(int fd, uint32_t id)
{
	struct accmap_free arg;

	memset(&arg, 0, sizeof(arg));
	arg.id = id;
	return accmap_ioctl(fd, ACCMAP_IOC_FREE, &arg);
}

int accmap_get_fd(int fd, uint32_t id, uint32_t fd_flags, int *dmabuf_fd)
{
	struct accmap_get_fd arg;
	int ret;

	if (!dmabuf_fd)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.id = id;
	arg.fd_flags = fd_flags;
	ret = accmap_ioctl(fd, ACCMAP_IOC_GET_FD, &arg);
	if (ret)
		return ret;

	*dmabuf_fd = arg.fd;
	return 0;
}

int accmap_from_fd(int fd, int dmabuf_fd, uint32_t *id)
{
	struct accmap_from_fd arg;
	int ret;

	if (!id)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.fd = dmabuf_fd;
	ret = accmap_ioctl(fd, ACCMAP_IOC_FROM_FD, &arg);
	if (ret)
		return ret;

	*id = arg.id;
	return 0;
}

int accmap_info(int fd, uint32_t id, struct accmap_info *info)
{
	if (!info)
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	info->id = id;
	return accmap_ioctl(fd, ACCMAP_IOC_INFO, info);
}

/* One element of @len bytes: both strides equal @len, which is valid. */
static void accmap_rw_contiguous(struct accmap_rw *rw, uint32_t id,
				 uint64_t offset, uintptr_t addr, size_t len)
{
	memset(rw, 0, sizeof(*rw));
	rw->addr = addr;
	rw->offset = offset;
	rw->elem_size = len;
	rw->user_stride = len;
	rw->handle_stride = len;
	rw->count = 1;
	rw->id = id;
}

int accmap_write(int fd, uint32_t id, uint64_t offset, const void *src,
		 size_t len)
{
	struct accmap_rw rw;

	accmap_rw_contiguous(&rw, id, offset, (uintptr_t)src, len);
	return accmap_ioctl(fd, ACCMAP_IOC_WRITE, &rw);
}

int accmap_read(int fd, uint32_t id, uint64_t offset, void *dst, size_t len)
{
	struct accmap_rw rw;

	accmap_rw_contiguous(&rw, id, offset, (uintptr_t)dst, len);
	return accmap_ioctl(fd, ACCMAP_IOC_READ, &rw);
}

int accmap_write_strided(int fd, struct accmap_rw *rw)
{
	if (!rw)
		return -EINVAL;
	return accmap_ioctl(fd, ACCMAP_IOC_WRITE, rw);
}

int accmap_read_strided(int fd, struct accmap_rw *rw)
{
	if (!rw)
		return -EINVAL;
	return accmap_ioctl(fd, ACCMAP_IOC_READ, rw);
}

int accmap_from_va(int fd, void *addr, uint64_t size, uint32_t flags,
		   uint16_t tag, uint32_t *id)
{
	struct accmap_from_va arg;
	int ret;

	if (!id)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.addr = (uintptr_t)addr;
	arg.size = size;
	arg.flags = flags;
	arg.tag = tag;
	ret = accmap_ioctl(fd, ACCMAP_IOC_FROM_VA, &arg);
	if (ret)
		return ret;

	*id = arg.id;
	return 0;
}

int accmap_cache(int fd, uint32_t id, uint32_t op, uint64_t offset,
		 uint64_t length)
{
	struct accmap_cache_op arg;

	memset(&arg, 0, sizeof(arg));
	arg.id = id;
	arg.op = op;
	arg.offset = offset;
	arg.length = length;
	return accmap_ioctl(fd, ACCMAP_IOC_CACHE, &arg);
}

int accmap_cache_list(int fd, const struct accmap_cache_op *ops,
		      uint32_t count, uint32_t *done)
{
	struct accmap_cache_list arg;
	int ret;

	if (!ops)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.ops = (uintptr_t)ops;
	arg.count = count;
	/*
	 * The kernel writes done back when it fails on an entry, and leaves
	 * it alone when it refuses the whole list: no entry has this index.
	 */
	arg.done = ACCMAP_CACHE_LIST_NO_ENTRY;
	ret = accmap_ioctl(fd, ACCMAP_IOC_CACHE_LIST, &arg);
	if (done)
		*done = arg.done;
	return ret;
}

int accmap_set_tag_label(int fd, uint16_t tag, const char *label)
{
	struct accmap_tag_label arg;
	size_t len;

	if (!label)
		return -EINVAL;

	len = strnlen(label, ACCMAP_LABEL_LEN);
	if (len >= ACCMAP_LABEL_LEN)
		return -ENAMETOOLONG;

	/* Zeroed first: the kernel wants every byte after the NUL to be 0. */
	memset(&arg, 0, sizeof(arg));
	arg.tag = tag;
	memcpy(arg.label, label, len);
	return accmap_ioctl(fd, ACCMAP_IOC_SET_TAG_LABEL, &arg);
}

/*
 * QUERY_HEAP into the first @size bytes of @info: an older caller's
 * struct is shorter, and nothing may be written past it.
 */
static int query_heap_sized(int fd, uint32_t heap, struct accmap_heap_info *info, size_t size)
{
	if (!info)
		return -EINVAL;

	memset(info, 0, size);
	info->heap = heap;
	return accmap_ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC,
				     _IOC_NR(ACCMAP_IOC_QUERY_HEAP), size), info);
}

/*
 * Two versions of each call that fills a struct accmap_heap_info: the
 * default one (LIBACCMAP_1.1) for programs built with the struct that has
 * @dma32, and LIBACCMAP_1's for programs built before, whose struct ends
 * at @contiguous.  The dynamic linker binds each program to the version
 * it was linked with; a static link takes the default.
 */
__attribute__((visibility("default")))
int accmap_query_heap_v1_1(int fd, uint32_t heap, struct accmap_heap_info *info)
{
	return query_heap_sized(fd, heap, info, sizeof(*info));
}

__asm__(".symver accmap_query_heap_v1_1, accmap_query_heap@@LIBACCMAP_1.1");

__attribute__((visibility("default")))
int accmap_query_heap_v1(int fd, uint32_t heap, struct accmap_heap_info *info)
{
	return query_heap_sized(fd, heap, info, ACCMAP_HEAP_INFO_SIZE_VER2);
}

__asm__(".symver accmap_query_heap_v1, accmap_query_heap@LIBACCMAP_1");

int accmap_query_pool(int fd, struct accmap_pool_info *info)
{
	if (!info)
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	return accmap_ioctl(fd, ACCMAP_IOC_QUERY_POOL, info);
}

int accmap_map(int dmabuf_fd, size_t size, int prot, void **addr)
{
	void *p;

	if (!addr)
		return -EINVAL;

	p = mmap(NULL, size, prot, MAP_SHARED, dmabuf_fd, 0);
	if (p == MAP_FAILED)
		return neg_errno();

	*addr = p;
	return 0;
}

int accmap_map_offset(int fd, uint32_t id, uint64_t *offset)
{
	struct accmap_map_offset arg;
	int ret;

	if (!offset)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.id = id;
	ret = accmap_ioctl(fd, ACCMAP_IOC_MAP_OFFSET, &arg);
	if (ret)
		return ret;

	*offset = arg.offset;
	return 0;
}

int accmap_map_id(int fd, uint32_t id, size_t size, int prot, void **addr)
{
	uint64_t offset;
	void *p;
	int ret;

	if (!addr)
		return -EINVAL;

	ret = accmap_map_offset(fd, id, &offset);
	if (ret)
		return ret;
	/* A 32-bit off_t (no _FILE_OFFSET_BITS=64) cannot reach every offset. */
	if ((uint64_t)(off_t)offset != offset)
		return -EOVERFLOW;
	p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);
	if (p == MAP_FAILED)
		return neg_errno();

	*addr = p;
	return 0;
}

int accmap_unmap(void *addr, size_t size)
{
	if (munmap(addr, size) == -1)
		return neg_errno();
	return 0;
}

int accmap_sync(int dmabuf_fd, uint64_t flags)
{
	struct dma_buf_sync arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	arg.flags = flags;
	do {
		ret = ioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));

	return ret == -1 ? neg_errno() : 0;
}

int accmap_replay_query(int fd, uint32_t index,
			struct accmap_replay_target_info *info)
{
	if (!info)
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	info->index = index;
	return accmap_ioctl(fd, ACCMAP_IOC_REPLAY_QUERY, info);
}

int accmap_replay_find_target(int fd, const char *name, uint32_t *index,
			      struct accmap_replay_target_info *info)
{
	struct accmap_replay_target_info ti;
	uint32_t i;
	int ret;

	if (!name || !index)
		return -EINVAL;

	for (i = 0; i < ACCMAP_REPLAY_TARGETS_MAX; i++) {
		ret = accmap_replay_query(fd, i, &ti);
		if (ret == -ENOENT)
			break;
		if (ret)
			return ret;
		ti.name[sizeof(ti.name) - 1] = '\0';
		if (strcmp(ti.name, name))
			continue;
		*index = i;
		if (info)
			*info = ti;
		return 0;
	}
	return -ENODEV;
}

/*
 * REPLAY_SETUP from the caller's inputs only; @svm adds the SVM flag.
 * Outputs as accmap.h says for accmap_replay_setup().
 */
static int replay_setup(int fd, struct accmap_replay_setup *setup, bool svm)
{
	struct accmap_replay_setup arg;
	int ret;

	if (!setup)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.maps = setup->maps;
	arg.nr_maps = setup->nr_maps;
	arg.target = setup->target;
	arg.format = setup->format;
	arg.as = setup->as;
	arg.va_bits = setup->va_bits;
	arg.flags = setup->flags;
	if (svm)
		arg.flags |= ACCMAP_REPLAY_SETUP_SVM;
	arg.svm_start = setup->svm_start;
	arg.svm_size = setup->svm_size;
	/* Written by the kernel on failure; this is "no mapping to blame". */
	arg.failed_map = UINT32_MAX;
	ret = accmap_ioctl(fd, ACCMAP_IOC_REPLAY_SETUP, &arg);
	setup->failed_map = arg.failed_map;
	if (ret)
		return ret;

	setup->session = arg.session;
	setup->table_pages = arg.table_pages;
	return 0;
}

int accmap_replay_setup(int fd, struct accmap_replay_setup *setup)
{
	return replay_setup(fd, setup, false);
}

int accmap_replay_run(int fd, uint32_t session, const struct accmap_replay_op *ops,
		      uint32_t nr_ops, struct accmap_replay_run *result)
{
	if (!ops || !result)
		return -EINVAL;

	memset(result, 0, sizeof(*result));
	result->ops = (uintptr_t)ops;
	result->nr_ops = nr_ops;
	result->session = session;
	result->failed_op = UINT32_MAX;
	result->fault_as = UINT32_MAX;
	/* Not restarted: see accmap.h. */
	if (ioctl(fd, ACCMAP_IOC_REPLAY_RUN, result) == -1)
		return neg_errno();
	return 0;
}

int accmap_replay_destroy(int fd, uint32_t session)
{
	struct accmap_replay_destroy arg;

	memset(&arg, 0, sizeof(arg));
	arg.session = session;
	return accmap_ioctl(fd, ACCMAP_IOC_REPLAY_DESTROY, &arg);
}

int accmap_svm_session_create(int fd, struct accmap_replay_setup *setup)
{
	return replay_setup(fd, setup, true);
}

/*
 * One ACCMAP_IOC_SVM call on a zeroed argument; the kernel's answer goes
 * to @out (if not NULL) on success only.
 */
static int svm_op(int fd, struct accmap_svm_op *arg, struct accmap_svm_op *out)
{
	int ret = accmap_ioctl(fd, ACCMAP_IOC_SVM, arg);

	if (!ret && out)
		*out = *arg;
	return ret;
}

int accmap_svm_set_attr(int fd, uint32_t session, const void *addr, uint64_t size,
			uint32_t attrs, uint32_t granule, uint32_t location,
			struct accmap_svm_op *out)
{
	struct accmap_svm_op arg;

	memset(&arg, 0, sizeof(arg));
	arg.session = session;
	arg.op = ACCMAP_SVM_OP_SET_ATTR;
	arg.start = (uintptr_t)addr;
	arg.size = size;
	arg.attrs = attrs;
	arg.granule = granule;
	arg.location = location;
	return svm_op(fd, &arg, out);
}

int accmap_svm_prefetch(int fd, uint32_t session, const void *addr, uint64_t size,
			uint32_t location, struct accmap_svm_op *out)
{
	struct accmap_svm_op arg;

	memset(&arg, 0, sizeof(arg));
	arg.session = session;
	arg.op = ACCMAP_SVM_OP_PREFETCH;
	arg.start = (uintptr_t)addr;
	arg.size = size;
	arg.location = location;
	return svm_op(fd, &arg, out);
}

int accmap_svm_query(int fd, uint32_t session, struct accmap_svm_op *out)
{
	struct accmap_svm_op arg;

	if (!out)
		return -EINVAL;

	memset(&arg, 0, sizeof(arg));
	arg.session = session;
	arg.op = ACCMAP_SVM_OP_QUERY;
	return svm_op(fd, &arg, out);
}

int accmap_svm_migrate(int fd, uint32_t session, const void *ptr, size_t len,
		       uint32_t location, struct accmap_svm_op *out)
{
	uintptr_t first = (uintptr_t)ptr, last, page;
	long ps = sysconf(_SC_PAGESIZE);

	if (!len || first + (len - 1) < first || ps <= 0)
		return -EINVAL;
	page = (uintptr_t)ps;
	last = first + (len - 1);
	first &= ~(page - 1);
	last |= page - 1;
	/* In 64 bits: a range up to the top page does not wrap to size 0. */
	return accmap_svm_prefetch(fd, session, (const void *)first, (uint64_t)(last - first) + 1,
				   location, out);
}

__attribute__((visibility("default")))
int accmap_device_memory_v1_1(int fd, struct accmap_heap_info *info)
{
	return query_heap_sized(fd, ACCMAP_HEAP_DEVICE, info, sizeof(*info));
}

__asm__(".symver accmap_device_memory_v1_1, accmap_device_memory@@LIBACCMAP_1.1");

__attribute__((visibility("default")))
int accmap_device_memory_v1(int fd, struct accmap_heap_info *info)
{
	return query_heap_sized(fd, ACCMAP_HEAP_DEVICE, info, ACCMAP_HEAP_INFO_SIZE_VER2);
}

__asm__(".symver accmap_device_memory_v1, accmap_device_memory@LIBACCMAP_1");

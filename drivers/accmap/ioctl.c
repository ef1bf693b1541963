// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: ioctl dispatch and handlers.
 *
 * Dispatch is by ioctl number through one table.  The argument size comes
 * from the command: older (shorter) arguments are zero-extended, newer
 * (longer) ones are accepted only if the tail this kernel does not know is
 * zero.  Handlers only ever see a kernel copy of the argument.
 */

#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "accmap.h"
#include "devmem.h"

/**
 * struct accmap_ioctl_ctx - what a handler may leave for the dispatcher
 * @client: the calling client
 * @install_file: a file to install as @install_fd once the result has
 *                reached user space, or NULL
 * @install_fd: the reserved descriptor for @install_file
 * @copy_on_error: copy the argument back to user space even when the
 *                 handler fails (it reports where it failed)
 * @new_id: an id the handler added, or 0; dropped again if user space
 *          cannot be told about it
 * @new_session: a replay session the handler added, with a reference of
 *               the handler's, or NULL; withdrawn again (that session,
 *               not whatever its id names by then) if user space cannot
 *               be told about it
 */
struct accmap_ioctl_ctx {
	struct accmap_client *client;
	struct file *install_file;
	int install_fd;
	bool copy_on_error;
	u32 new_id;
	struct accmap_replay_session *new_session;
};

/* Room for the largest argument of any ioctl this kernel knows. */
#define ACCMAP_IOCTL_MAX_ARG	256

union accmap_ioctl_arg {
	struct accmap_create create;
	struct accmap_alloc alloc;
	struct accmap_free free;
	struct accmap_get_fd get_fd;
	struct accmap_info info;
	struct accmap_from_fd from_fd;
	struct accmap_rw rw;
	struct accmap_tag_label tag_label;
	struct accmap_heap_info heap_info;
	struct accmap_pool_info pool_info;
	struct accmap_cache_op cache_op;
	struct accmap_cache_list cache_list;
	struct accmap_from_va from_va;
	struct accmap_replay_target_info replay_target;
	struct accmap_replay_setup replay_setup;
	struct accmap_replay_run replay_run;
	struct accmap_replay_destroy replay_destroy;
	struct accmap_svm_op svm;
	struct accmap_map_offset map_offset;
	struct accmap_ckpt ckpt;
	u8 bytes[ACCMAP_IOCTL_MAX_ARG];
};

/*
 * Gives @handle memory as @arg asks (ALLOC, or CREATE with
 * ACCMAP_CREATE_ALLOC), falling back from heap to heap while they are
 * full.  A heap that cannot give cached memory (no_cached) is passed over
 * for a cached request; if every heap of the mask is passed over, -EINVAL.
 * One with no memory below 4 GiB is passed over for ACCMAP_ALLOC_DMA32:
 * -ENXIO if no heap of the mask has any, -ENOMEM if those that have are
 * full.  @usable are the heaps of @arg's mask that exist
 * (accmap_check_alloc()).  Sets @arg->heap on success.
 */
static int accmap_alloc_from_heaps(struct accmap_device *adev,
				   struct accmap_handle *handle,
				   struct accmap_alloc *arg, u32 usable)
{
	bool full = false;
	int heap_id = -1;
	int ret;

	if (arg->flags & ACCMAP_ALLOC_CONTIGUOUS) {
		ret = accmap_check_contig_size(handle->size);
		if (ret)
			return ret;
	}

	ret = -EINVAL;
	while ((heap_id = accmap_heap_next(usable, heap_id)) >= 0) {
		struct accmap_heap *heap = adev->heaps[heap_id];

		if (heap->no_cached &&
		    !(arg->flags & (ACCMAP_ALLOC_WRITECOMBINE |
				    ACCMAP_ALLOC_UNCACHED)))
			continue;
		ret = accmap_handle_alloc(handle, heap, arg->flags, arg->align,
					  arg->tag);
		if (ret == -ENOMEM || ret == -ENOSPC)
			full = true;
		else if (ret != -ENXIO)
			break;
	}
	if (!ret)
		arg->heap = heap_id;
	else if (ret == -ENOSPC || (ret == -ENXIO && full))
		ret = -ENOMEM;
	return ret;
}

/*
 * With ACCMAP_CREATE_ALLOC the buffer gets its memory and its mmap()
 * offset before its id exists, so no other thread of the client ever sees
 * the id without memory, and a failure leaves nothing to undo but the
 * handle itself.
 */
static int accmap_ioctl_create(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_device *adev = ctx->client->adev;
	struct accmap_create *arg = data;
	struct accmap_alloc alloc = {
		.heap_mask = arg->heap_mask,
		.flags = arg->alloc_flags,
		.align = arg->align,
		.tag = arg->tag,
	};
	struct accmap_handle *handle;
	u32 usable = 0;
	u64 size;
	int ret;

	ret = accmap_check_create(arg, (u64)totalram_pages() << PAGE_SHIFT,
				  &size);
	if (!ret && (arg->flags & ACCMAP_CREATE_ALLOC))
		ret = accmap_check_alloc(&alloc, adev->alloc_mask, &usable);
	if (ret)
		return ret;

	handle = accmap_handle_create(adev, size);
	if (!handle)
		return -ENOMEM;
	if (arg->flags & ACCMAP_CREATE_ALLOC) {
		ret = accmap_alloc_from_heaps(adev, handle, &alloc, usable);
		if (ret)
			goto out_put_handle;
		arg->heap = alloc.heap;
		ret = accmap_handle_map_offset(handle, &arg->offset);
		if (ret)
			goto out_put_handle;
	}
	ret = accmap_client_add_handle(ctx->client, handle, false, &arg->id);
	if (!ret)
		ctx->new_id = arg->id;
out_put_handle:
	/* The client's reference keeps the handle, if it was added. */
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_alloc(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_device *adev = ctx->client->adev;
	struct accmap_alloc *arg = data;
	struct accmap_handle *handle;
	u32 usable;
	int ret;

	ret = accmap_check_alloc(arg, adev->alloc_mask, &usable);
	if (ret)
		return ret;
	handle = accmap_client_get_handle(ctx->client, arg->id);
	if (!handle)
		return -ENOENT;
	ret = accmap_alloc_from_heaps(adev, handle, arg, usable);
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_free(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_free *arg = data;

	if (arg->pad)
		return -EINVAL;
	return accmap_client_remove_handle(ctx->client, arg->id);
}

static int accmap_ioctl_get_fd(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_get_fd *arg = data;
	enum accmap_export_mode mode;
	struct accmap_handle *handle;
	struct file *file;
	bool readonly;
	int fd, ret;

	ret = accmap_check_get_fd(arg);
	if (ret)
		return ret;
	mode = (arg->fd_flags & O_ACCMODE) == O_RDWR ? ACCMAP_EXPORT_RDWR :
						       ACCMAP_EXPORT_RDONLY;

	handle = accmap_client_get_handle_ro(ctx->client, arg->id, &readonly);
	if (!handle)
		return -ENOENT;
	if (readonly && mode == ACCMAP_EXPORT_RDWR) {
		ret = -EACCES;
		goto out_put_handle;
	}

	fd = get_unused_fd_flags(arg->fd_flags & O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_put_handle;
	}

	file = accmap_dmabuf_get_file(handle, mode);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		put_unused_fd(fd);
		goto out_put_handle;
	}

	/* Installed by the dispatcher once user space has the number. */
	ctx->install_file = file;
	ctx->install_fd = fd;
	arg->fd = fd;
	ret = 0;

out_put_handle:
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_info(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_info *arg = data;
	struct accmap_handle *handle;
	bool readonly;

	if (arg->pad)
		return -EINVAL;

	handle = accmap_client_get_handle_ro(ctx->client, arg->id, &readonly);
	if (!handle)
		return -ENOENT;

	mutex_lock(&handle->lock);
	arg->size = handle->size;
	arg->heap = handle->heap ? handle->heap->id : ACCMAP_HEAP_NONE;
	arg->flags = handle->flags;
	arg->tag = handle->tag;
	arg->state = handle->heap ? ACCMAP_STATE_ALLOCATED : 0;
	arg->exports = accmap_handle_exports(handle);
	if (arg->exports)
		arg->state |= ACCMAP_STATE_EXPORTED;
	if (readonly)
		arg->state |= ACCMAP_STATE_READONLY;
	if (handle->contiguous)
		arg->state |= ACCMAP_STATE_CONTIGUOUS;
	arg->pad2 = 0;
	mutex_unlock(&handle->lock);

	/* Our own lookup holds no client reference, only a handle one. */
	arg->handle_refs = atomic_read(&handle->hrefs);
	arg->maps = atomic_read(&handle->maps);
	arg->attachments = atomic_read(&handle->nattach);
	arg->vmaps = atomic_read(&handle->nvmaps);
	arg->pad3 = 0;

	accmap_handle_put(handle);
	return 0;
}

static int accmap_ioctl_from_fd(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_from_fd *arg = data;
	struct accmap_handle *handle;
	struct dma_buf *dmabuf;
	int ret;

	if (arg->pad || arg->flags & ~ACCMAP_FROM_FD_VALID_FLAGS)
		return -EINVAL;

	dmabuf = dma_buf_get(arg->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	handle = accmap_dmabuf_handle(dmabuf);
	if (!handle || handle->adev != ctx->client->adev) {
		ret = -EXDEV;
		goto out_put_dmabuf;
	}
	/*
	 * The dma-buf holds the handle while we add our own reference, which
	 * can write the buffer only if the dma-buf was opened for writing.
	 */
	ret = accmap_client_add_dmabuf(ctx->client, handle, dmabuf, &arg->id);
	if (!ret)
		ctx->new_id = arg->id;

out_put_dmabuf:
	dma_buf_put(dmabuf);
	return ret;
}

static int accmap_ioctl_rw(struct accmap_ioctl_ctx *ctx, void *data, bool write)
{
	struct accmap_rw *arg = data;
	struct accmap_handle *handle;
	bool readonly;
	int ret;

	ret = accmap_check_rw(arg, U64_MAX);
	if (ret)
		return ret;

	handle = accmap_client_get_handle_ro(ctx->client, arg->id, &readonly);
	if (!handle)
		return -ENOENT;

	ret = accmap_check_rw(arg, handle->size);
	/* Only allocated buffers can be read-only: ENODATA comes first. */
	if (!ret && write && readonly)
		ret = -EACCES;
	if (!ret)
		ret = accmap_handle_rw(handle, arg, write);
	if (!ret)
		arg->bytes = arg->elem_size * arg->count;
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_write(struct accmap_ioctl_ctx *ctx, void *data)
{
	return accmap_ioctl_rw(ctx, data, true);
}

static int accmap_ioctl_read(struct accmap_ioctl_ctx *ctx, void *data)
{
	return accmap_ioctl_rw(ctx, data, false);
}

static int accmap_ioctl_set_tag_label(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_tag_label *arg = data;
	int ret;

	ret = accmap_check_tag_label(arg);
	if (ret)
		return ret;
	return accmap_tag_set_label(ctx->client->adev, arg->tag, arg->label);
}

static int accmap_ioctl_query_heap(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_device *adev = ctx->client->adev;
	struct accmap_heap_info *arg = data;
	u32 id = arg->heap;

	if (arg->pad || id >= ACCMAP_HEAP_MAX)
		return -EINVAL;
	if (id == ACCMAP_HEAP_DEVICE) {
		if (!adev->sim_target.devmem)
			return -ENODEV;
		memset(arg, 0, sizeof(*arg));
		arg->heap = id;
		return accmap_devmem_query_heap(adev->sim_target.devmem, arg);
	}
	id = array_index_nospec(id, ACCMAP_HEAP_MAX);
	if (!adev->heaps[id])
		return -ENODEV;

	memset(arg, 0, sizeof(*arg));
	arg->heap = id;
	accmap_heap_query(adev->heaps[id], arg);
	return 0;
}

static int accmap_ioctl_query_pool(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_device *adev = ctx->client->adev;
	struct accmap_pool_info *arg = data;

	if (arg->pad)
		return -EINVAL;
	/* Fills every field; the dispatcher copies out what the caller has. */
	accmap_pool_get_info(adev->pool, arg);
	return 0;
}

/*
 * The checks of one cache operation that need its buffer: range, memory,
 * and access.  An invalidate discards what the CPU wrote and did not
 * write back yet, so it takes an id that may write the buffer; a
 * write-back loses nothing and any id may ask for it.
 */
static int accmap_check_cache_handle(const struct accmap_cache_op *op,
				     struct accmap_handle *handle,
				     bool readonly)
{
	int ret;

	ret = accmap_check_cache_op(op, handle->size);
	if (ret)
		return ret;
	if (!accmap_handle_allocated(handle))
		return -ENODATA;
	if (readonly && (op->op & ACCMAP_CACHE_INVALIDATE))
		return -EACCES;
	return 0;
}

static int accmap_ioctl_cache(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_cache_op *arg = data;
	struct accmap_handle *handle;
	bool readonly;
	int ret;

	ret = accmap_check_cache_op(arg, U64_MAX);
	if (ret)
		return ret;
	handle = accmap_client_get_handle_ro(ctx->client, arg->id, &readonly);
	if (!handle)
		return -ENOENT;

	ret = accmap_check_cache_handle(arg, handle, readonly);
	if (!ret)
		ret = accmap_handle_cache_op(handle, arg->op, arg->offset,
					     arg->length);
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_cache_list(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_cache_list *arg = data;
	struct accmap_handle **handles;
	struct accmap_cache_op *ops;
	bool readonly;
	int ret = 0;
	u32 i;

	if (arg->pad || arg->pad2 || !arg->count ||
	    arg->count > ACCMAP_CACHE_LIST_MAX)
		return -EINVAL;

	ops = memdup_user(u64_to_user_ptr(arg->ops),
			  array_size(arg->count, sizeof(*ops)));
	if (IS_ERR(ops))
		return PTR_ERR(ops);
	handles = kcalloc(arg->count, sizeof(*handles), GFP_KERNEL);
	if (!handles) {
		ret = -ENOMEM;
		goto out_free_ops;
	}

	/* Check every entry before doing any; done names a failing one. */
	ctx->copy_on_error = true;
	for (i = 0; i < arg->count; i++) {
		ret = accmap_check_cache_op(&ops[i], U64_MAX);
		if (ret)
			break;
		handles[i] = accmap_client_get_handle_ro(ctx->client, ops[i].id,
							 &readonly);
		if (!handles[i]) {
			ret = -ENOENT;
			break;
		}
		ret = accmap_check_cache_handle(&ops[i], handles[i], readonly);
		if (ret)
			break;
	}

	if (!ret) {
		for (i = 0; i < arg->count; i++) {
			ret = accmap_handle_cache_op(handles[i], ops[i].op,
						     ops[i].offset, ops[i].length);
			if (ret)
				break;
		}
	}
	arg->done = i;

	for (i = 0; i < arg->count; i++)
		if (handles[i])
			accmap_handle_put(handles[i]);
	kfree(handles);
out_free_ops:
	kfree(ops);
	return ret;
}

static int accmap_ioctl_from_va(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_from_va *arg = data;
	struct accmap_handle *handle;
	int ret;

	handle = accmap_handle_from_va(ctx->client->adev, arg);
	if (IS_ERR(handle))
		return PTR_ERR(handle);
	ret = accmap_client_add_handle(ctx->client, handle, false, &arg->id);
	if (!ret)
		ctx->new_id = arg->id;
	/* The client's reference keeps the pages pinned, if it was added. */
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_replay_query(struct accmap_ioctl_ctx *ctx, void *data)
{
	return accmap_replay_query(ctx->client->adev, data);
}

static int accmap_ioctl_replay_setup(struct accmap_ioctl_ctx *ctx, void *data)
{
	/* failed_map tells user space which mapping was at fault. */
	ctx->copy_on_error = true;
	return accmap_replay_setup(ctx->client, data, &ctx->new_session);
}

static int accmap_ioctl_replay_run(struct accmap_ioctl_ctx *ctx, void *data)
{
	/* How far the run got, and why it stopped. */
	ctx->copy_on_error = true;
	return accmap_replay_run(ctx->client, data);
}

static int accmap_ioctl_replay_destroy(struct accmap_ioctl_ctx *ctx, void *data)
{
	return accmap_replay_destroy(ctx->client, data);
}

static int accmap_ioctl_svm(struct accmap_ioctl_ctx *ctx, void *data)
{
	return accmap_replay_svm(ctx->client, data);
}

static int accmap_ioctl_map_offset(struct accmap_ioctl_ctx *ctx, void *data)
{
	struct accmap_map_offset *arg = data;
	struct accmap_handle *handle;
	int ret;

	if (arg->flags & ~ACCMAP_MAP_OFFSET_VALID_FLAGS)
		return -EINVAL;
	handle = accmap_client_get_handle(ctx->client, arg->id);
	if (!handle)
		return -ENOENT;
	ret = accmap_handle_map_offset(handle, &arg->offset);
	accmap_handle_put(handle);
	return ret;
}

static int accmap_ioctl_checkpoint(struct accmap_ioctl_ctx *ctx, void *data)
{
	/* STATE says how much room it needs, and what refused the dump. */
	ctx->copy_on_error = true;
	return accmap_checkpoint(ctx->client, data, &ctx->install_file,
				 &ctx->install_fd);
}

/**
 * struct accmap_ioctl_desc - one ioctl of the table
 * @cmd: the command with this kernel's argument size
 * @min_size: the argument size of the first published version
 * @fn: the handler
 */
struct accmap_ioctl_desc {
	unsigned int cmd;
	unsigned int min_size;
	int (*fn)(struct accmap_ioctl_ctx *ctx, void *arg);
};

/*
 * Entries sit at their ioctl number; accmap_check_ioctl_size() compares
 * the number again, so an entry at the wrong index fails safe (-ENOTTY).
 */
#define ACCMAP_IOCTL_DEF(_nr, _cmd, _fn, _type, _last)			\
	[_nr] = {							\
		.cmd = _cmd,						\
		.min_size = offsetofend(_type, _last),			\
		.fn = _fn,						\
	}

static const struct accmap_ioctl_desc accmap_ioctls[] = {
	ACCMAP_IOCTL_DEF(0x00, ACCMAP_IOC_CREATE, accmap_ioctl_create,
			 struct accmap_create, id),
	ACCMAP_IOCTL_DEF(0x01, ACCMAP_IOC_ALLOC, accmap_ioctl_alloc,
			 struct accmap_alloc, heap),
	ACCMAP_IOCTL_DEF(0x02, ACCMAP_IOC_FREE, accmap_ioctl_free,
			 struct accmap_free, pad),
	ACCMAP_IOCTL_DEF(0x03, ACCMAP_IOC_GET_FD, accmap_ioctl_get_fd,
			 struct accmap_get_fd, pad),
	ACCMAP_IOCTL_DEF(0x04, ACCMAP_IOC_INFO, accmap_ioctl_info,
			 struct accmap_info, pad2),
	ACCMAP_IOCTL_DEF(0x05, ACCMAP_IOC_FROM_FD, accmap_ioctl_from_fd,
			 struct accmap_from_fd, pad),
	ACCMAP_IOCTL_DEF(0x06, ACCMAP_IOC_WRITE, accmap_ioctl_write,
			 struct accmap_rw, bytes),
	ACCMAP_IOCTL_DEF(0x07, ACCMAP_IOC_READ, accmap_ioctl_read,
			 struct accmap_rw, bytes),
	ACCMAP_IOCTL_DEF(0x08, ACCMAP_IOC_SET_TAG_LABEL, accmap_ioctl_set_tag_label,
			 struct accmap_tag_label, label),
	ACCMAP_IOCTL_DEF(0x09, ACCMAP_IOC_QUERY_HEAP, accmap_ioctl_query_heap,
			 struct accmap_heap_info, largest_free),
	ACCMAP_IOCTL_DEF(0x0a, ACCMAP_IOC_QUERY_POOL, accmap_ioctl_query_pool,
			 struct accmap_pool_info, orders),
	ACCMAP_IOCTL_DEF(0x0b, ACCMAP_IOC_CACHE, accmap_ioctl_cache,
			 struct accmap_cache_op, length),
	ACCMAP_IOCTL_DEF(0x0c, ACCMAP_IOC_CACHE_LIST, accmap_ioctl_cache_list,
			 struct accmap_cache_list, pad2),
	ACCMAP_IOCTL_DEF(0x0d, ACCMAP_IOC_FROM_VA, accmap_ioctl_from_va,
			 struct accmap_from_va, pad2),
	ACCMAP_IOCTL_DEF(0x0e, ACCMAP_IOC_REPLAY_QUERY, accmap_ioctl_replay_query,
			 struct accmap_replay_target_info, sessions),
	ACCMAP_IOCTL_DEF(0x0f, ACCMAP_IOC_REPLAY_SETUP, accmap_ioctl_replay_setup,
			 struct accmap_replay_setup, pad),
	ACCMAP_IOCTL_DEF(0x10, ACCMAP_IOC_REPLAY_RUN, accmap_ioctl_replay_run,
			 struct accmap_replay_run, elapsed_ns),
	ACCMAP_IOCTL_DEF(0x11, ACCMAP_IOC_REPLAY_DESTROY,
			 accmap_ioctl_replay_destroy,
			 struct accmap_replay_destroy, pad),
	ACCMAP_IOCTL_DEF(0x12, ACCMAP_IOC_SVM, accmap_ioctl_svm,
			 struct accmap_svm_op, pages_mapped),
	ACCMAP_IOCTL_DEF(0x13, ACCMAP_IOC_MAP_OFFSET, accmap_ioctl_map_offset,
			 struct accmap_map_offset, offset),
	ACCMAP_IOCTL_DEF(0x14, ACCMAP_IOC_CHECKPOINT, accmap_ioctl_checkpoint,
			 struct accmap_ckpt, pad),
};

/**
 * accmap_ioctl() - the unlocked_ioctl of /dev/accmap
 * @file: the client's file
 * @cmd: the command
 * @arg: user pointer to the argument
 *
 * Return: 0 or a negative errno, as documented per ioctl in
 * Documentation/userspace-api/accmap.rst.
 */
long accmap_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct accmap_ioctl_ctx ctx = { .client = file->private_data };
	void __user *uarg = (void __user *)arg;
	const struct accmap_ioctl_desc *desc;
	union accmap_ioctl_arg karg;
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize, ksize;
	int ret;

	BUILD_BUG_ON(sizeof(karg) != ACCMAP_IOCTL_MAX_ARG);
	BUILD_BUG_ON(offsetofend(struct accmap_create, id) !=
		     ACCMAP_CREATE_SIZE_VER1);
	BUILD_BUG_ON(sizeof(struct accmap_create) != ACCMAP_CREATE_SIZE_VER2);
	BUILD_BUG_ON(offsetofend(struct accmap_info, pad2) !=
		     ACCMAP_INFO_SIZE_VER1);
	BUILD_BUG_ON(offsetofend(struct accmap_info, attachments) !=
		     ACCMAP_INFO_SIZE_VER2);
	BUILD_BUG_ON(offsetofend(struct accmap_heap_info, largest_free) !=
		     ACCMAP_HEAP_INFO_SIZE_VER1);
	BUILD_BUG_ON(offsetofend(struct accmap_replay_setup, pad) !=
		     ACCMAP_REPLAY_SETUP_SIZE_VER1);
	BUILD_BUG_ON(offsetofend(struct accmap_svm_op, pages_mapped) !=
		     ACCMAP_SVM_OP_SIZE_VER1);

	if (_IOC_TYPE(cmd) != ACCMAP_IOCTL_MAGIC || nr >= ARRAY_SIZE(accmap_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(accmap_ioctls));
	desc = &accmap_ioctls[nr];
	if (!desc->fn)
		return -ENOTTY;

	ret = accmap_check_ioctl_size(cmd, desc->cmd, desc->min_size);
	if (ret)
		return ret;

	usize = _IOC_SIZE(cmd);
	ksize = _IOC_SIZE(desc->cmd);
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(&karg, ksize, uarg, usize);
		if (ret)
			return ret;
	} else {
		memset(&karg, 0, ksize);
	}

	ret = desc->fn(&ctx, &karg);
	if (ret && !ctx.copy_on_error)
		return ret;

	if ((_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, &karg, min(usize, ksize)))
		ret = -EFAULT;

	/* An id user space never learnt would stay until close: drop it. */
	if (ret && ctx.new_id)
		accmap_client_remove_handle(ctx.client, ctx.new_id);
	if (ctx.new_session)
		accmap_replay_setup_done(ctx.client, ctx.new_session, !ret);

	if (ctx.install_file) {
		if (ret) {
			put_unused_fd(ctx.install_fd);
			fput(ctx.install_file);
		} else {
			fd_install(ctx.install_fd, ctx.install_file);
		}
	}
	return ret;
}

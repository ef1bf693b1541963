// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: dma-buf export of handles.
 *
 * While a handle has an id, it keeps the dma-buf it exported for each
 * file access mode (accmap_handle.dmabuf), holding a reference on it, and
 * every GET_FD of that mode hands out a new file descriptor for the same
 * dma-buf, so that importers which compare dma-bufs see one buffer.  Each
 * dma-buf holds a reference on the handle, and so does each vma of it
 * (vma.c, which maps dma-bufs and /dev/accmap alike).
 *
 * A dma-buf opened read-only stays read-only wherever it goes: importers
 * may map it only for DMA_TO_DEVICE, no mapping of it (ours or an
 * importer's through dma_buf_mmap()) can be writable, and CPU access
 * through it never invalidates.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "accmap.h"
#include "compat.h"

/**
 * struct accmap_attachment - an importer's attachment to a buffer
 * @node: in accmap_handle.attachments
 * @dev: the importer's device
 * @sgt: the buffer's memory, mapped for @dev while @mapped
 * @dir: the direction @sgt is mapped for, while @mapped
 * @mapped: whether @sgt is currently DMA-mapped for @dev
 * @resource: the memory has no struct pages: @sgt has one entry whose
 *            DMA address comes from dma_map_resource()
 */
struct accmap_attachment {
	struct list_head node;
	struct device *dev;
	struct sg_table sgt;
	enum dma_data_direction dir;
	bool mapped;
	bool resource;
};

/*
 * Whether @dmabuf may not write its buffer: it was exported O_RDONLY, or
 * its handle is read-only.  The caller holds a reference on @dmabuf, so
 * its file is there to look at; a file's access mode never changes.
 */
static bool accmap_dmabuf_readonly(struct dma_buf *dmabuf)
{
	struct accmap_handle *handle = dmabuf->priv;

	return handle->readonly || !(dmabuf->file->f_mode & FMODE_WRITE);
}

static int accmap_dmabuf_attach(struct dma_buf *dmabuf,
				struct dma_buf_attachment *attach)
{
	struct accmap_handle *handle = dmabuf->priv;
	struct accmap_attachment *a;
	int ret;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;

	if (handle->pages || handle->phys_has_pages) {
		ret = accmap_handle_sg_table(handle, &a->sgt);
	} else {
		ret = sg_alloc_table(&a->sgt, accmap_contig_nents(handle->size),
				     GFP_KERNEL);
		a->resource = true;
	}
	if (ret)
		goto err_free_attachment;

	a->dev = attach->dev;
	attach->priv = a;

	mutex_lock(&handle->lock);
	list_add(&a->node, &handle->attachments);
	mutex_unlock(&handle->lock);
	atomic_inc(&handle->nattach);
	return 0;

err_free_attachment:
	kfree(a);
	return ret;
}

static void accmap_dmabuf_detach(struct dma_buf *dmabuf,
				 struct dma_buf_attachment *attach)
{
	struct accmap_handle *handle = dmabuf->priv;
	struct accmap_attachment *a = attach->priv;

	mutex_lock(&handle->lock);
	list_del(&a->node);
	mutex_unlock(&handle->lock);
	atomic_dec(&handle->nattach);

	sg_free_table(&a->sgt);
	kfree(a);
}

static struct sg_table *accmap_dmabuf_map(struct dma_buf_attachment *attach,
					  enum dma_data_direction dir)
{
	struct accmap_handle *handle = attach->dmabuf->priv;
	struct accmap_attachment *a = attach->priv;
	unsigned long attrs = 0;
	int ret;

	/*
	 * A device may only read through a read-only dma-buf: DMA_TO_DEVICE.
	 * Importers that map every buffer both ways (DRM) cannot import it.
	 */
	if (accmap_dmabuf_readonly(attach->dmabuf) && dir != DMA_TO_DEVICE)
		return ERR_PTR(-EACCES);

	/* Write-combined and uncached memory have no cache lines to maintain. */
	if (!accmap_handle_cached(handle))
		attrs |= DMA_ATTR_SKIP_CPU_SYNC;

	if (a->resource) {
		struct scatterlist *sg;
		dma_addr_t addr;
		unsigned int i;

		addr = dma_map_resource(attach->dev, handle->phys, handle->size,
					dir, attrs);
		if (dma_mapping_error(attach->dev, addr))
			return ERR_PTR(-ENOMEM);
		/* One mapping, cut into the entries made at attach. */
		for_each_sgtable_sg(&a->sgt, sg, i) {
			u64 off = (u64)i * ACCMAP_CONTIG_SEG;

			sg_dma_address(sg) = addr + off;
			sg_dma_len(sg) = min_t(u64, handle->size - off,
					       ACCMAP_CONTIG_SEG);
		}
	} else {
		ret = dma_map_sgtable(attach->dev, &a->sgt, dir, attrs);
		if (ret)
			return ERR_PTR(ret);
	}

	mutex_lock(&handle->lock);
	a->dir = dir;
	a->mapped = true;
	mutex_unlock(&handle->lock);
	return &a->sgt;
}

static void accmap_dmabuf_unmap(struct dma_buf_attachment *attach,
				struct sg_table *sgt,
				enum dma_data_direction dir)
{
	struct accmap_handle *handle = attach->dmabuf->priv;
	struct accmap_attachment *a = attach->priv;
	unsigned long attrs = 0;

	if (!accmap_handle_cached(handle))
		attrs |= DMA_ATTR_SKIP_CPU_SYNC;

	mutex_lock(&handle->lock);
	a->mapped = false;
	mutex_unlock(&handle->lock);
	if (a->resource)
		dma_unmap_resource(attach->dev, sg_dma_address(sgt->sgl),
				   handle->size, dir, attrs);
	else
		dma_unmap_sgtable(attach->dev, sgt, dir, attrs);
}

/*
 * CPU access brackets sync the caches for the devices that have the
 * buffer mapped (mapped attachments, each for its own device and in the
 * direction it mapped), as the dma-buf heaps do, and nothing else: accmap
 * never does maintenance through its own device here.  An invalidate
 * there would cover the whole buffer whoever asked, and would discard
 * lines that an importer dirtied through a cached kernel mapping (vmap)
 * and never ended with end_cpu_access(): videobuf2-vmalloc does exactly
 * that.  accmap's own device does no DMA, so no device but an attached
 * one can have written the buffer; user space that shares a buffer with
 * a device accmap does not know of asks for maintenance itself
 * (ACCMAP_IOC_CACHE).
 */
static int accmap_dmabuf_begin_cpu_access(struct dma_buf *dmabuf,
					  enum dma_data_direction dir)
{
	struct accmap_handle *handle = dmabuf->priv;
	struct accmap_attachment *a;

	/*
	 * The CPU only writes (nothing to fetch), or the caller may not
	 * write the buffer and so may not discard what its owner wrote.
	 */
	if (!accmap_handle_cached(handle) || dir == DMA_TO_DEVICE ||
	    accmap_dmabuf_readonly(dmabuf))
		return 0;

	mutex_lock(&handle->lock);
	list_for_each_entry(a, &handle->attachments, node)
		/* A device that maps to read has written nothing. */
		if (a->mapped && !a->resource && a->dir != DMA_TO_DEVICE)
			dma_sync_sgtable_for_cpu(a->dev, &a->sgt, a->dir);
	mutex_unlock(&handle->lock);
	return 0;
}

static int accmap_dmabuf_end_cpu_access(struct dma_buf *dmabuf,
					enum dma_data_direction dir)
{
	struct accmap_handle *handle = dmabuf->priv;
	struct accmap_attachment *a;

	if (!accmap_handle_cached(handle))
		return 0;

	/* A clean never loses data: read-only holders may ask for it too. */
	mutex_lock(&handle->lock);
	list_for_each_entry(a, &handle->attachments, node)
		if (a->mapped && !a->resource)
			dma_sync_sgtable_for_device(a->dev, &a->sgt, a->dir);
	mutex_unlock(&handle->lock);
	return 0;
}

/*
 * Sets up a user mapping of @dmabuf's buffer (vma.c); vm_pgoff is the page
 * offset into the buffer.  Returns 0, -EINVAL for a private mapping or a
 * range outside the buffer, or -EACCES for a writable mapping of a
 * read-only dma-buf.
 */
static int accmap_dmabuf_mmap_op(struct dma_buf *dmabuf,
				 struct vm_area_struct *vma)
{
	/*
	 * mmap() of our own read-only file already refuses to write; an
	 * importer's file (dma_buf_mmap()) may be open for writing, so the
	 * dma-buf's own access mode decides.
	 */
	return accmap_vma_map(dmabuf->priv, vma, 0,
			      accmap_dmabuf_readonly(dmabuf));
}

/*
 * A kernel mapping of the whole buffer, or NULL without memory for one.
 * The dma-buf core calls this for a dma-buf's first dma_buf_vmap() only,
 * and shares the mapping among the later ones until the last
 * dma_buf_vunmap(): accmap_handle.nvmaps counts dma-bufs mapped, not
 * their users.  The importer holds its dma-buf, and so the handle, for as
 * long as it keeps the mapping.
 */
static void *accmap_dmabuf_vmap_addr(struct dma_buf *dmabuf)
{
	struct accmap_handle *handle = dmabuf->priv;
	pgprot_t prot = accmap_pgprot(handle, PAGE_KERNEL);
	void *vaddr;

	/* Contiguous memory has its kernel mapping already. */
	if (!handle->pages)
		vaddr = handle->kaddr;
	else
		vaddr = vmap(handle->pages, handle->npages, VM_MAP, prot);
	if (vaddr)
		atomic_inc(&handle->nvmaps);
	return vaddr;
}

static void accmap_dmabuf_vunmap_addr(struct dma_buf *dmabuf, void *vaddr)
{
	struct accmap_handle *handle = dmabuf->priv;

	if (handle->pages)
		vunmap(vaddr);
	atomic_dec(&handle->nvmaps);
}

#ifndef ACCMAP_VMAP_ADDR
static int accmap_dmabuf_vmap(struct dma_buf *dmabuf,
			      struct accmap_vmap_map *map)
{
	void *vaddr = accmap_dmabuf_vmap_addr(dmabuf);

	if (!vaddr)
		return -ENOMEM;
	accmap_vmap_map_set_vaddr(map, vaddr);
	return 0;
}

static void accmap_dmabuf_vunmap(struct dma_buf *dmabuf,
				 struct accmap_vmap_map *map)
{
	accmap_dmabuf_vunmap_addr(dmabuf, map->vaddr);
	accmap_vmap_map_clear(map);
}
#else
/* Up to 5.10 the importer gets the address itself, NULL on failure. */
#define accmap_dmabuf_vmap	accmap_dmabuf_vmap_addr
#define accmap_dmabuf_vunmap	accmap_dmabuf_vunmap_addr
#endif

static void accmap_dmabuf_release(struct dma_buf *dmabuf)
{
	struct accmap_handle *handle = dmabuf->priv;
	int mode;

	/* A slot holds a reference: no slot can name a dma-buf going away. */
	mutex_lock(&handle->lock);
	for (mode = 0; mode < ACCMAP_EXPORT_MODES; mode++)
		WARN_ON_ONCE(handle->dmabuf[mode] == dmabuf);
	mutex_unlock(&handle->lock);
	atomic_dec(&handle->nexports);
	accmap_handle_put(handle);
}

static const struct dma_buf_ops accmap_dmabuf_ops = {
	.attach = accmap_dmabuf_attach,
	.detach = accmap_dmabuf_detach,
	.map_dma_buf = accmap_dmabuf_map,
	.unmap_dma_buf = accmap_dmabuf_unmap,
	.begin_cpu_access = accmap_dmabuf_begin_cpu_access,
	.end_cpu_access = accmap_dmabuf_end_cpu_access,
	.mmap = accmap_dmabuf_mmap_op,
	.vmap = accmap_dmabuf_vmap,
	.vunmap = accmap_dmabuf_vunmap,
	.release = accmap_dmabuf_release,
};

static enum accmap_export_mode accmap_dmabuf_mode(struct dma_buf *dmabuf)
{
	return dmabuf->file->f_mode & FMODE_WRITE ? ACCMAP_EXPORT_RDWR :
						    ACCMAP_EXPORT_RDONLY;
}

/**
 * accmap_dmabuf_get_file() - the dma-buf file of a handle for one mode
 * @handle: an allocated handle
 * @mode: the file access mode of the export
 *
 * Reuses the handle's dma-buf of that mode if it keeps one, else exports
 * a new one, which takes a reference on @handle, and keeps it.
 *
 * Return: the dma-buf's file with a reference for the caller, or an
 * ERR_PTR: -ENODATA if @handle has no memory, -EACCES for a read-write
 * export of a read-only buffer, -ENOENT if @handle has no id left (the
 * caller's was freed meanwhile), or the export's errno.
 */
struct file *accmap_dmabuf_get_file(struct accmap_handle *handle,
				    enum accmap_export_mode mode)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct dma_buf *dmabuf;
	struct file *file;

	mutex_lock(&handle->lock);
	if (!handle->heap) {
		file = ERR_PTR(-ENODATA);
		goto out_unlock;
	}
	if (handle->readonly && mode == ACCMAP_EXPORT_RDWR) {
		file = ERR_PTR(-EACCES);
		goto out_unlock;
	}
	/*
	 * The last id went after the caller looked its id up, and with it
	 * the kept dma-bufs: a dma-buf exported now could not be kept.
	 */
	if (!atomic_read(&handle->hrefs)) {
		file = ERR_PTR(-ENOENT);
		goto out_unlock;
	}

	/* The slot's own reference keeps the dma-buf and its file alive. */
	dmabuf = handle->dmabuf[mode];
	if (dmabuf) {
		get_dma_buf(dmabuf);
		file = dmabuf->file;
		goto out_unlock;
	}

	exp_info.ops = &accmap_dmabuf_ops;
	exp_info.size = handle->size;
	exp_info.flags = mode == ACCMAP_EXPORT_RDWR ? O_RDWR : O_RDONLY;
	exp_info.priv = handle;
	dmabuf = dma_buf_export(&exp_info);
	if (IS_ERR(dmabuf)) {
		file = ERR_CAST(dmabuf);
		goto out_unlock;
	}
	/* The export's reference, dropped in accmap_dmabuf_release(). */
	accmap_handle_get(handle);
	atomic_inc(&handle->nexports);
	/* The export's file reference is the caller's; the slot takes one. */
	get_dma_buf(dmabuf);
	handle->dmabuf[mode] = dmabuf;
	file = dmabuf->file;

out_unlock:
	mutex_unlock(&handle->lock);
	return file;
}

/**
 * accmap_dmabuf_adopt() - keep a dma-buf a new id was made from
 * @handle: the handle behind @dmabuf, which just got an id from it
 * @dmabuf: an accmap dma-buf of @handle; the caller holds a reference
 *
 * After its last id went, a handle keeps no dma-buf; when an id comes
 * back through FROM_FD, the dma-buf it came through is kept for its mode
 * (unless one is kept already), so that GET_FD hands out that same
 * dma-buf again, as DRM does for a re-imported PRIME buffer.
 */
void accmap_dmabuf_adopt(struct accmap_handle *handle, struct dma_buf *dmabuf)
{
	enum accmap_export_mode mode = accmap_dmabuf_mode(dmabuf);

	mutex_lock(&handle->lock);
	if (!handle->dmabuf[mode] && atomic_read(&handle->hrefs)) {
		get_dma_buf(dmabuf);
		handle->dmabuf[mode] = dmabuf;
	}
	mutex_unlock(&handle->lock);
}

/**
 * accmap_handle_put_id() - drop a client id's claim on a handle
 * @handle: the handle; the id's handle reference is the caller's to drop
 *          afterwards
 *
 * The dma-bufs a handle keeps hold references on the handle, so they are
 * let go when its last id goes, or the two would keep each other forever.
 * The count drops to zero under the handle's lock, so that GET_FD, which
 * reads it under that lock, never keeps a dma-buf after that.
 */
void accmap_handle_put_id(struct accmap_handle *handle)
{
	struct dma_buf *kept[ACCMAP_EXPORT_MODES];
	int mode;

	if (!atomic_dec_and_mutex_lock(&handle->hrefs, &handle->lock))
		return;
	/* FROM_FD gave it an id again meanwhile: that id's drop lets go. */
	if (atomic_read(&handle->hrefs)) {
		mutex_unlock(&handle->lock);
		return;
	}
	for (mode = 0; mode < ACCMAP_EXPORT_MODES; mode++) {
		kept[mode] = handle->dmabuf[mode];
		handle->dmabuf[mode] = NULL;
	}
	mutex_unlock(&handle->lock);

	/* Outside the lock: the last put releases, which takes it. */
	for (mode = 0; mode < ACCMAP_EXPORT_MODES; mode++)
		if (kept[mode])
			dma_buf_put(kept[mode]);
}

/**
 * accmap_handle_exports() - dma-bufs of a handle held outside accmap
 * @handle: the handle; the caller holds its lock
 *
 * Return: the handle's live dma-bufs, less those that only the handle
 * itself keeps (no file descriptor, importer or mapping holds them): a
 * snapshot.
 */
unsigned int accmap_handle_exports(struct accmap_handle *handle)
{
	unsigned int n = atomic_read(&handle->nexports);
	int mode;

	lockdep_assert_held(&handle->lock);
	for (mode = 0; mode < ACCMAP_EXPORT_MODES; mode++)
		if (handle->dmabuf[mode] &&
		    file_count(handle->dmabuf[mode]->file) == 1)
			n--;
	return n;
}

/**
 * accmap_handle_mapped_attachments() - device mappings of a handle
 * @handle: the handle; the caller holds its lock
 *
 * Importers attach to a dma-buf and map it (map_dma_buf) when their device
 * needs the memory; some map at import, others (DRM's shmem helpers from
 * 6.15 on) only when they use it.
 *
 * Return: how many of @handle's attachments are mapped for a device now.
 */
unsigned int accmap_handle_mapped_attachments(struct accmap_handle *handle)
{
	struct accmap_attachment *a;
	unsigned int n = 0;

	lockdep_assert_held(&handle->lock);
	list_for_each_entry(a, &handle->attachments, node)
		n += a->mapped;
	return n;
}

/**
 * accmap_dmabuf_handle() - the handle behind a dma-buf, if accmap made it
 * @dmabuf: any dma-buf
 *
 * Return: the handle (no reference taken: it lives as long as @dmabuf),
 * or NULL if another exporter made @dmabuf.
 */
struct accmap_handle *accmap_dmabuf_handle(struct dma_buf *dmabuf)
{
	return dmabuf->ops == &accmap_dmabuf_ops ? dmabuf->priv : NULL;
}

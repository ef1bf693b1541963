// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of accmap's dma-buf exporter: the cache maintenance its CPU
 * access hooks do, and what importers may do with a read-only dma-buf.
 *
 * The buffer is a handle of a small fake heap, exported for real
 * (dma_buf_export()), with a root device that has a DMA mask standing in
 * for an importer's device.  UML has no caches to observe, so the tests
 * look at the mechanism: every clean or invalidate accmap does on its own
 * goes through the device's struct accmap_cache, here the software cache
 * model (cache_model.c), which counts the bytes; a hook that leaves the
 * counts at 0 did none.
 */

#include <kunit/test.h>
#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "../accmap.h"
#include "cache_model.h"

#define TEST_PAGES	4

static int fake_alloc(struct accmap_heap *heap, struct accmap_handle *handle,
		      u32 align)
{
	unsigned long i, n = handle->size >> PAGE_SHIFT;

	handle->pages = kcalloc(n, sizeof(*handle->pages), GFP_KERNEL);
	if (!handle->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		handle->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!handle->pages[i])
			goto err_free_pages;
	}
	handle->npages = n;
	return 0;

err_free_pages:
	while (i--)
		__free_page(handle->pages[i]);
	kfree(handle->pages);
	handle->pages = NULL;
	return -ENOMEM;
}

static void fake_free(struct accmap_heap *heap, struct accmap_handle *handle)
{
	unsigned long i;

	for (i = 0; i < handle->npages; i++)
		__free_page(handle->pages[i]);
	kfree(handle->pages);
}

static const struct accmap_heap_ops fake_heap_ops = {
	.alloc = fake_alloc,
	.free = fake_free,
};

/**
 * struct dmabuf_fixture - a cached buffer with one id's worth of claim
 * @adev: a device with just what handles need
 * @heap: the fake heap
 * @handle: the buffer; its creation reference is the fixture's
 * @model: the cache model behind @adev.cache
 */
struct dmabuf_fixture {
	struct accmap_device adev;
	struct accmap_heap heap;
	struct accmap_handle *handle;
	struct cache_model *model;
};

static int dmabuf_test_init(struct kunit *test)
{
	struct dmabuf_fixture *fx;
	struct device *dev;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	test->priv = fx;
	dev = root_device_register("accmap-dmabuf-test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	fx->adev.dev = dev;
	KUNIT_ASSERT_EQ(test, dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64)), 0);
	fx->model = cache_model_create(test);
	fx->adev.cache = fx->model->cache;
	mutex_init(&fx->adev.handles_lock);
	INIT_LIST_HEAD(&fx->adev.handles);
	fx->heap.name = "fake";
	fx->heap.ops = &fake_heap_ops;
	fx->heap.adev = &fx->adev;

	fx->handle = accmap_handle_create(&fx->adev, TEST_PAGES * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, fx->handle);
	/* Stands for a client id: exports are kept only while there is one. */
	atomic_inc(&fx->handle->hrefs);
	KUNIT_ASSERT_EQ(test, accmap_handle_alloc(fx->handle, &fx->heap, 0, 0, 0), 0);
	return 0;
}

static void dmabuf_test_exit(struct kunit *test)
{
	struct dmabuf_fixture *fx = test->priv;

	if (!fx)
		return;
	if (fx->handle) {
		/* The id goes, with it the kept dma-bufs, then the handle. */
		accmap_handle_put_id(fx->handle);
		flush_delayed_fput();
		accmap_handle_put(fx->handle);
	}
	if (fx->adev.dev)
		root_device_unregister(fx->adev.dev);
}

static struct dma_buf *export(struct kunit *test, enum accmap_export_mode mode,
			      struct file **file)
{
	struct dmabuf_fixture *fx = test->priv;

	*file = accmap_dmabuf_get_file(fx->handle, mode);
	KUNIT_ASSERT_FALSE(test, IS_ERR(*file));
	return (*file)->private_data;
}

/* Whether accmap cleaned or invalidated anything through its own cache. */
static bool own_maintenance(struct dmabuf_fixture *fx)
{
	bool any;

	mutex_lock(&fx->model->lock);
	any = fx->model->clean_bytes || fx->model->inval_bytes;
	mutex_unlock(&fx->model->lock);
	return any;
}

/*
 * DMA_BUF_IOCTL_SYNC with no importer: nothing to maintain, and above all
 * no invalidate through accmap's own device, which could discard lines an
 * importer dirtied through a cached vmap.  Before the fix, every START
 * and END synced the whole buffer through that device (mapping it first).
 */
static void sync_without_attachment(struct kunit *test)
{
	static const enum dma_data_direction dirs[] = {
		DMA_FROM_DEVICE, DMA_BIDIRECTIONAL, DMA_TO_DEVICE,
	};
	struct dmabuf_fixture *fx = test->priv;
	struct dma_buf *dmabuf;
	struct file *file;
	int i;

	dmabuf = export(test, ACCMAP_EXPORT_RDWR, &file);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		KUNIT_EXPECT_EQ(test, dma_buf_begin_cpu_access(dmabuf, dirs[i]), 0);
		KUNIT_EXPECT_EQ(test, dma_buf_end_cpu_access(dmabuf, dirs[i]), 0);
	}
	KUNIT_EXPECT_FALSE_MSG(test, own_maintenance(fx),
			       "CPU access hooks did maintenance of their own");
	fput(file);
}

/* An importer's mapping is synced, still never accmap's own device. */
static void sync_with_mapped_attachment(struct kunit *test)
{
	struct dmabuf_fixture *fx = test->priv;
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	struct file *file;

	dmabuf = export(test, ACCMAP_EXPORT_RDWR, &file);
	attach = dma_buf_attach(dmabuf, fx->adev.dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(attach));
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_FALSE(test, IS_ERR(sgt));
	KUNIT_EXPECT_EQ(test, dma_buf_begin_cpu_access(dmabuf, DMA_FROM_DEVICE), 0);
	KUNIT_EXPECT_EQ(test, dma_buf_end_cpu_access(dmabuf, DMA_TO_DEVICE), 0);
	KUNIT_EXPECT_FALSE(test, own_maintenance(fx));
	if (!IS_ERR(sgt))
		dma_buf_unmap_attachment(attach, sgt, DMA_BIDIRECTIONAL);
	dma_buf_detach(dmabuf, attach);
	fput(file);
}

/* A read-only dma-buf maps for devices to read only, whatever the buffer. */
static void readonly_import_directions(struct kunit *test)
{
	static const enum dma_data_direction refused[] = {
		DMA_FROM_DEVICE, DMA_BIDIRECTIONAL,
	};
	struct dmabuf_fixture *fx = test->priv;
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	struct file *file;
	int i;

	dmabuf = export(test, ACCMAP_EXPORT_RDONLY, &file);
	attach = dma_buf_attach(dmabuf, fx->adev.dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(attach));
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		sgt = dma_buf_map_attachment(attach, refused[i]);
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(sgt), -EACCES);
		if (!IS_ERR(sgt))
			dma_buf_unmap_attachment(attach, sgt, refused[i]);
	}
	sgt = dma_buf_map_attachment(attach, DMA_TO_DEVICE);
	KUNIT_EXPECT_FALSE(test, IS_ERR(sgt));
	if (!IS_ERR(sgt))
		dma_buf_unmap_attachment(attach, sgt, DMA_TO_DEVICE);
	dma_buf_detach(dmabuf, attach);
	fput(file);
}

/* While the id lives, both modes hand out their one kept dma-buf. */
static void export_kept_per_mode(struct kunit *test)
{
	struct dmabuf_fixture *fx = test->priv;
	struct dma_buf *ro, *ro2, *rw;
	struct file *f1, *f2, *f3;

	ro = export(test, ACCMAP_EXPORT_RDONLY, &f1);
	rw = export(test, ACCMAP_EXPORT_RDWR, &f2);
	fput(f1);
	flush_delayed_fput();
	ro2 = export(test, ACCMAP_EXPORT_RDONLY, &f3);
	KUNIT_EXPECT_PTR_EQ(test, ro, ro2);
	KUNIT_EXPECT_PTR_NE(test, ro, rw);
	mutex_lock(&fx->handle->lock);
	KUNIT_EXPECT_EQ(test, accmap_handle_exports(fx->handle), 2U);
	mutex_unlock(&fx->handle->lock);
	fput(f2);
	fput(f3);
	flush_delayed_fput();
	/* Kept, but no longer held by anything outside: not exported. */
	mutex_lock(&fx->handle->lock);
	KUNIT_EXPECT_EQ(test, accmap_handle_exports(fx->handle), 0U);
	mutex_unlock(&fx->handle->lock);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->handle->nexports), 2);
}

/*
 * ACCMAP_ALLOC_DMA32 from a heap with no memory below 4 GiB fails with
 * ENXIO before the heap is asked, and leaves the handle without memory;
 * once the heap has some, the same handle gets its memory.
 */
static void alloc_dma32_needs_low_memory(struct kunit *test)
{
	struct dmabuf_fixture *fx = test->priv;
	struct accmap_handle *h;

	h = accmap_handle_create(&fx->adev, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, h);
	fx->heap.dma32 = 0;
	KUNIT_EXPECT_EQ(test, accmap_handle_alloc(h, &fx->heap, ACCMAP_ALLOC_DMA32, 0, 0),
			-ENXIO);
	KUNIT_EXPECT_FALSE(test, accmap_handle_allocated(h));
	KUNIT_EXPECT_EQ(test, accmap_handle_alloc(h, &fx->heap, 0, 0, 0), 0);
	accmap_handle_put(h);

	h = accmap_handle_create(&fx->adev, PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, h);
	fx->heap.dma32 = SZ_1G;
	KUNIT_EXPECT_EQ(test, accmap_handle_alloc(h, &fx->heap, ACCMAP_ALLOC_DMA32, 0, 0), 0);
	KUNIT_EXPECT_TRUE(test, accmap_handle_allocated(h));
	accmap_handle_put(h);
}

static struct kunit_case dmabuf_cases[] = {
	KUNIT_CASE(sync_without_attachment),
	KUNIT_CASE(sync_with_mapped_attachment),
	KUNIT_CASE(readonly_import_directions),
	KUNIT_CASE(export_kept_per_mode),
	KUNIT_CASE(alloc_dma32_needs_low_memory),
	{}
};

static struct kunit_suite dmabuf_suite = {
	.name = "accmap-dmabuf",
	.init = dmabuf_test_init,
	.exit = dmabuf_test_exit,
	.test_cases = dmabuf_cases,
};

kunit_test_suite(dmabuf_suite);

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: accelerator memory manager.
 *
 * The misc device /dev/accmap: one client per open file, each with its own
 * table of handle references.  Closing the file drops every reference the
 * client still held; buffers that are still exported or mapped live on
 * until their last user goes.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "accmap.h"
#include "compat.h"

static struct accmap_device accmap_dev;

static int accmap_open(struct inode *inode, struct file *file)
{
	struct accmap_client *client;

	client = accmap_client_create(&accmap_dev);
	if (!client)
		return -ENOMEM;
	file->private_data = client;
	return 0;
}

static int accmap_release(struct inode *inode, struct file *file)
{
	accmap_client_destroy(file->private_data);
	return 0;
}

static const struct file_operations accmap_fops = {
	.owner = THIS_MODULE,
	.open = accmap_open,
	.release = accmap_release,
	.mmap = accmap_mmap,
	.unlocked_ioctl = accmap_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
	.show_fdinfo = accmap_client_show_fdinfo,
};

/*
 * accmap's own device for DMA mapping and cache maintenance: like the
 * dma-buf heaps' devices it gets a mask and no IOMMU, so the DMA API does
 * the CPU cache work the architecture needs.  It exists before any heap,
 * so that every path that maintains caches has it.  A second one, whose
 * mask is 32 bits, gives contiguous buffers below 4 GiB.
 */
static int accmap_dma_device_create(struct accmap_device *adev)
{
	struct device *dev;
	int ret;

	dev = root_device_register("accmap");
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ret = dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_unregister;
	/* Contiguous buffers below 4 GiB: the DMA API keeps them there. */
	adev->dev32 = root_device_register("accmap-dma32");
	if (IS_ERR(adev->dev32)) {
		ret = PTR_ERR(adev->dev32);
		goto err_unregister;
	}
	ret = dma_coerce_mask_and_coherent(adev->dev32, DMA_BIT_MASK(32));
	if (ret)
		goto err_unregister32;
	adev->dev = dev;
	accmap_cache_init_dma(&adev->cache, dev);
	return 0;

err_unregister32:
	root_device_unregister(adev->dev32);
err_unregister:
	adev->dev32 = NULL;
	root_device_unregister(dev);
	return ret;
}

static void accmap_dma_device_destroy(struct accmap_device *adev)
{
	root_device_unregister(adev->dev32);
	root_device_unregister(adev->dev);
	adev->dev32 = NULL;
	adev->dev = NULL;
}

/*
 * Everything is set up before the misc device is registered, the last
 * step: from then on user space can open it, and nothing may fail after.
 * The exit path undoes the steps in the reverse order.
 */
static int __init accmap_init(void)
{
	struct accmap_device *adev = &accmap_dev;
	struct accmap_heap *heap, *user_heap;
	int ret;

	adev->misc.minor = MISC_DYNAMIC_MINOR;
	adev->misc.name = "accmap";
	adev->misc.fops = &accmap_fops;
	adev->misc.mode = 0666;
	mutex_init(&adev->clients_lock);
	INIT_LIST_HEAD(&adev->clients);
	mutex_init(&adev->handles_lock);
	INIT_LIST_HEAD(&adev->handles);
	mutex_init(&adev->tags_lock);
	xa_init(&adev->tag_labels);
	atomic64_set(&adev->next_serial, 1);
	mutex_init(&adev->restores_lock);
	INIT_LIST_HEAD(&adev->restores);
	accmap_offsets_init(adev);
	/*
	 * Not reclaim's: a release may sleep on an mmap_lock.  Unbound: no
	 * CPU of its own matters (and 7.x warns on a workqueue that says
	 * neither per-CPU nor unbound).
	 */
	adev->put_wq = alloc_workqueue("accmap_put", WQ_UNBOUND, 0);
	if (!adev->put_wq)
		return -ENOMEM;

	ret = accmap_dma_device_create(adev);
	if (ret)
		goto err_destroy_wq;

	heap = accmap_system_heap_create(adev);
	if (!heap) {
		ret = -ENOMEM;
		goto err_dma_device;
	}
	ret = accmap_device_add_heap(adev, heap);
	if (ret)
		goto err_destroy_heap;

	user_heap = accmap_user_heap_create(adev);
	if (!user_heap) {
		ret = -ENOMEM;
		goto err_destroy_heap;
	}
	ret = accmap_device_add_heap(adev, user_heap);
	if (ret)
		goto err_destroy_user_heap;
	ret = accmap_carveout_heaps_create(adev);
	if (ret)
		goto err_destroy_user_heap;
	ret = accmap_replay_init(adev);
	if (ret)
		goto err_destroy_carveouts;

	/* Register windows DMA-map for accmap's device when they have none. */
	ret = accmap_mmio_targets_create(adev);
	if (ret)
		goto err_replay_fini;

	accmap_debugfs_init(adev);

	ret = misc_register(&adev->misc);
	if (ret)
		goto err_debugfs_fini;

	pr_info("ready, %u heaps\n", hweight32(adev->heap_mask));
	return 0;

err_debugfs_fini:
	accmap_debugfs_fini(adev);
	accmap_mmio_targets_destroy(adev);
err_replay_fini:
	accmap_replay_fini(adev);
err_destroy_carveouts:
	accmap_carveout_heaps_destroy(adev);
err_destroy_user_heap:
	adev->heaps[ACCMAP_HEAP_USER] = NULL;
	accmap_user_heap_destroy(user_heap);
err_destroy_heap:
	adev->heaps[ACCMAP_HEAP_SYSTEM] = NULL;
	adev->heap_mask = 0;
	adev->alloc_mask = 0;
	accmap_system_heap_destroy(heap);
err_dma_device:
	accmap_dma_device_destroy(adev);
err_destroy_wq:
	destroy_workqueue(adev->put_wq);
	accmap_tags_destroy(adev);
	return ret;
}

static void __exit accmap_exit(void)
{
	struct accmap_device *adev = &accmap_dev;

	/* Open files, exports and mappings all hold the module. */
	misc_deregister(&adev->misc);
	/* Releases a mapping handed to the worker, before the heaps go. */
	destroy_workqueue(adev->put_wq);
	accmap_debugfs_fini(adev);
	accmap_mmio_targets_destroy(adev);
	accmap_replay_fini(adev);
	accmap_carveout_heaps_destroy(adev);
	accmap_user_heap_destroy(adev->heaps[ACCMAP_HEAP_USER]);
	accmap_system_heap_destroy(adev->heaps[ACCMAP_HEAP_SYSTEM]);
	accmap_dma_device_destroy(adev);
	accmap_tags_destroy(adev);
}

module_init(accmap_init);
module_exit(accmap_exit);

MODULE_DESCRIPTION("accmap: accelerator memory manager");
MODULE_LICENSE("GPL");
ACCMAP_IMPORT_NS_DMA_BUF;

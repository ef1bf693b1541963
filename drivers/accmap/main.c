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
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "accmap.h"

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
	.unlocked_ioctl = accmap_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
	.show_fdinfo = accmap_client_show_fdinfo,
};

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

	heap = accmap_system_heap_create(adev);
	if (!heap)
		return -ENOMEM;
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

	ret = misc_register(&adev->misc);
	if (ret)
		goto err_replay_fini;

	/*
	 * Buffers are DMA-mapped on the misc device for cache maintenance;
	 * like the dma-buf heaps' devices it gets a mask and no IOMMU, so
	 * the DMA API does the CPU cache work the architecture needs.
	 */
	adev->dev = adev->misc.this_device;
	ret = dma_coerce_mask_and_coherent(adev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_deregister;

	/* Register windows DMA-map for accmap's device when they have none. */
	ret = accmap_mmio_targets_create(adev);
	if (ret)
		goto err_deregister;

	accmap_debugfs_init(adev);
	pr_info("ready, %u heaps\n", hweight32(adev->heap_mask));
	return 0;

err_deregister:
	misc_deregister(&adev->misc);
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
	return ret;
}

static void __exit accmap_exit(void)
{
	struct accmap_device *adev = &accmap_dev;

	/* Open files, exports and mappings all hold the module. */
	misc_deregister(&adev->misc);
	accmap_debugfs_fini(adev);
	accmap_mmio_targets_destroy(adev);
	accmap_replay_fini(adev);
	accmap_carveout_heaps_destroy(adev);
	accmap_user_heap_destroy(adev->heaps[ACCMAP_HEAP_USER]);
	accmap_system_heap_destroy(adev->heaps[ACCMAP_HEAP_SYSTEM]);
	accmap_tags_destroy(adev);
}

module_init(accmap_init);
module_exit(accmap_exit);

MODULE_DESCRIPTION("accmap: accelerator memory manager");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: debugfs files and fdinfo.
 *
 * Every file is a tab-separated table with a header line, easy to read
 * and easy to parse:
 *   clients      pid, comm, handles, then bytes per heap
 *   allocations  one line per client handle reference: what reaches the
 *                buffer (CPU mappings, attachments, exports, device
 *                mappings, importers' kernel mappings) and whether it is
 *                one contiguous block
 *   orphans      buffers no client holds, kept alive by a dma-buf or a
 *                mapping, with the process that created them
 *   heaps        per heap: total, used, free, largest free block, bytes
 *                of used in buffers allocated contiguous
 *   tags         per tag in use or named: label, buffers, bytes
 *   pool         the system heap's page pool: blocks per order, then
 *                one "name<TAB>value" line per counter
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "accmap.h"
#include "devmem.h"
#include "replay.h"

static void accmap_show_heap_header(struct seq_file *m,
				    struct accmap_device *adev)
{
	unsigned int id;

	for (id = 0; id < ACCMAP_HEAP_MAX; id++)
		if (adev->heaps[id])
			seq_printf(m, "\t%s", adev->heaps[id]->name);
	seq_putc(m, '\n');
}

/* Sum a client's bytes per heap; caller holds client->lock. */
static void accmap_client_bytes(struct accmap_client *client, u64 *bytes)
{
	struct rb_node *node;

	lockdep_assert_held(&client->lock);

	for (node = rb_first(&client->handles.root); node; node = rb_next(node)) {
		struct accmap_href *ref = rb_entry(node, struct accmap_href, node);
		struct accmap_handle *handle = ref->handle;

		mutex_lock(&handle->lock);
		if (handle->heap)
			bytes[handle->heap->id] += handle->size;
		mutex_unlock(&handle->lock);
	}
}

static int clients_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_client *client;
	unsigned int id;
	u64 *bytes;

	bytes = kcalloc(ACCMAP_HEAP_MAX, sizeof(*bytes), GFP_KERNEL);
	if (!bytes)
		return -ENOMEM;

	seq_puts(m, "pid\tcomm\thandles");
	accmap_show_heap_header(m, adev);

	mutex_lock(&adev->clients_lock);
	list_for_each_entry(client, &adev->clients, node) {
		memset(bytes, 0, ACCMAP_HEAP_MAX * sizeof(*bytes));
		mutex_lock(&client->lock);
		accmap_client_bytes(client, bytes);
		seq_printf(m, "%d\t%s\t%u", client->pid, client->comm,
			   client->handles.count);
		mutex_unlock(&client->lock);
		for (id = 0; id < ACCMAP_HEAP_MAX; id++)
			if (adev->heaps[id])
				seq_printf(m, "\t%llu", bytes[id]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&adev->clients_lock);

	kfree(bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(clients);

static const char *accmap_flags_name(u32 flags)
{
	if (flags & ACCMAP_ALLOC_WRITECOMBINE)
		return "wc";
	if (flags & ACCMAP_ALLOC_UNCACHED)
		return "uncached";
	return "cached";
}

/*
 * Physically contiguous runs of a buffer's memory, counted from its PFNs
 * whatever the buffer says of itself: 1 for one block, 0 without memory.
 * User space has no other way to see them: pagemap reports the PFN
 * mappings of accmap buffers as holes.  The caller holds @h->lock.
 */
static unsigned long accmap_handle_runs(struct accmap_handle *h)
{
	unsigned long i, runs;

	lockdep_assert_held(&h->lock);
	if (!h->heap || !h->npages)
		return 0;
	if (!h->pages)
		return 1;
	runs = 1;
	for (i = 1; i < h->npages; i++)
		if (page_to_pfn(h->pages[i]) != page_to_pfn(h->pages[i - 1]) + 1)
			runs++;
	return runs;
}

/*
 * Pages of a buffer's memory at or above 4 GiB, counted from its PFNs (or
 * a carveout buffer's physical range): 0 for every ACCMAP_ALLOC_DMA32
 * buffer.  No address leaves the kernel, only the count.  The caller
 * holds @h->lock.
 */
static unsigned long accmap_handle_above_4g(struct accmap_handle *h)
{
	unsigned long i, n = 0;
	u64 end;

	lockdep_assert_held(&h->lock);
	if (!h->heap || !h->npages)
		return 0;
	if (!h->pages) {
		end = h->phys + h->size;
		if (end <= SZ_4G)
			return 0;
		return (end - max_t(u64, h->phys, SZ_4G)) >> PAGE_SHIFT;
	}
	for (i = 0; i < h->npages; i++)
		if (page_to_pfn(h->pages[i]) >= PHYS_PFN(SZ_4G))
			n++;
	return n;
}

static int allocations_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_client *client;
	char label[ACCMAP_LABEL_LEN];
	struct rb_node *node;

	seq_puts(m, "pid\tcomm\tid\tsize\theap\tflags\ttag\tlabel\tmaps\tattachments\texports\tmapped\tvmaps\tcontiguous\truns\tabove_4g\n");

	mutex_lock(&adev->clients_lock);
	list_for_each_entry(client, &adev->clients, node) {
		mutex_lock(&client->lock);
		for (node = rb_first(&client->handles.root); node;
		     node = rb_next(node)) {
			struct accmap_href *ref = rb_entry(node, struct accmap_href, node);
			struct accmap_handle *h = ref->handle;

			mutex_lock(&h->lock);
			accmap_tag_get_label(adev, h->tag, label);
			seq_printf(m, "%d\t%s\t%u\t%llu\t%s\t%s\t%u\t%s\t%d\t%d\t%u\t%u\t%d\t%s\t%lu\t%lu\n",
				   client->pid, client->comm, ref->id, h->size,
				   h->heap ? h->heap->name : "-",
				   h->heap ? accmap_flags_name(h->flags) : "-",
				   h->tag, label[0] ? label : "-",
				   atomic_read(&h->maps), atomic_read(&h->nattach),
				   accmap_handle_exports(h),
				   accmap_handle_mapped_attachments(h),
				   atomic_read(&h->nvmaps),
				   h->contiguous ? "yes" : "no",
				   accmap_handle_runs(h),
				   accmap_handle_above_4g(h));
			mutex_unlock(&h->lock);
		}
		mutex_unlock(&client->lock);
	}
	mutex_unlock(&adev->clients_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(allocations);

static int orphans_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	char label[ACCMAP_LABEL_LEN];
	struct accmap_handle *h;

	seq_puts(m, "size\theap\ttag\tlabel\texports\tmaps\tattachments\tcreator_pid\tcreator_comm\n");

	/*
	 * A handle whose last reference is going away is still listed
	 * until its release takes handles_lock, which we hold: its memory
	 * stays valid while we look.
	 */
	mutex_lock(&adev->handles_lock);
	list_for_each_entry(h, &adev->handles, node) {
		if (atomic_read(&h->hrefs) || !kref_read(&h->ref))
			continue;
		mutex_lock(&h->lock);
		/* Held by neither: being created or being released. */
		if (!accmap_handle_exports(h) && !atomic_read(&h->maps)) {
			mutex_unlock(&h->lock);
			continue;
		}
		accmap_tag_get_label(adev, h->tag, label);
		seq_printf(m, "%llu\t%s\t%u\t%s\t%u\t%d\t%d\t%d\t%s\n",
			   h->size, h->heap ? h->heap->name : "-", h->tag,
			   label[0] ? label : "-", accmap_handle_exports(h),
			   atomic_read(&h->maps), atomic_read(&h->nattach),
			   h->creator_pid, h->creator_comm);
		mutex_unlock(&h->lock);
	}
	mutex_unlock(&adev->handles_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(orphans);

static int heaps_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_heap_info info;
	unsigned int id;

	seq_puts(m, "id\tname\ttotal\tused\tfree\tlargest_free\tcontiguous\n");
	for (id = 0; id < ACCMAP_HEAP_MAX; id++) {
		if (!adev->heaps[id])
			continue;
		memset(&info, 0, sizeof(info));
		accmap_heap_query(adev->heaps[id], &info);
		seq_printf(m, "%u\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\n", id,
			   info.name, info.total, info.used, info.free,
			   info.largest_free, info.contiguous);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(heaps);

static int pool_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	struct accmap_pool_info *info;
	unsigned int i;

	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	accmap_pool_get_info(adev->pool, info);

	seq_puts(m, "order\tblock_size\tzeroed\tdirty\n");
	for (i = 0; i < info->norders; i++)
		seq_printf(m, "%u\t%llu\t%llu\t%llu\n", info->orders[i].order,
			   info->orders[i].block_size, info->orders[i].zeroed,
			   info->orders[i].dirty);
	seq_printf(m, "cap\t%llu\npooled\t%llu\nhits\t%llu\nmisses\t%llu\nshrunk\t%llu\n",
		   info->cap, info->pooled, info->hits, info->misses,
		   info->shrunk);
	kfree(info);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pool);

struct accmap_tag_use {
	u64 buffers;
	u64 bytes;
};

static int tags_show(struct seq_file *m, void *unused)
{
	struct accmap_device *adev = m->private;
	char label[ACCMAP_LABEL_LEN];
	struct accmap_tag_use *use;
	struct accmap_handle *h;
	unsigned int tag;

	use = kvcalloc(U16_MAX + 1, sizeof(*use), GFP_KERNEL);
	if (!use)
		return -ENOMEM;

	mutex_lock(&adev->handles_lock);
	list_for_each_entry(h, &adev->handles, node) {
		mutex_lock(&h->lock);
		if (h->heap) {
			use[h->tag].buffers++;
			use[h->tag].bytes += h->size;
		}
		mutex_unlock(&h->lock);
	}
	mutex_unlock(&adev->handles_lock);

	seq_puts(m, "tag\tlabel\tbuffers\tbytes\n");
	for (tag = 0; tag <= U16_MAX; tag++) {
		accmap_tag_get_label(adev, tag, label);
		if (!use[tag].buffers && !label[0])
			continue;
		seq_printf(m, "%u\t%s\t%llu\t%llu\n", tag, label[0] ? label : "-",
			   use[tag].buffers, use[tag].bytes);
	}
	kvfree(use);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tags);

static int replay_show(struct seq_file *m, void *unused)
{
	return accmap_replay_debugfs_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(replay);

static int svm_show(struct seq_file *m, void *unused)
{
	return accmap_replay_svm_debugfs_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(svm);

static int replay_leaves_show(struct seq_file *m, void *unused)
{
	return accmap_replay_leaves_debugfs_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(replay_leaves);

#ifdef ACCMAP_HAVE_DEVMEM
static int devmem_show(struct seq_file *m, void *unused)
{
	return accmap_devmem_debugfs_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(devmem);

/*
 * One file per target with device memory: "devmem" for the model's,
 * "devmem-NAME" for a window's (those bound at load).
 */
static void accmap_debugfs_devmem(struct accmap_device *adev)
{
	struct accmap_replay_target *t;
	char name[32];
	u32 i;

	for (i = 0; i < adev->nr_targets; i++) {
		t = adev->targets[i];
		if (!t->devmem)
			continue;
		if (t == &adev->sim_target)
			strscpy(name, "devmem", sizeof(name));
		else
			snprintf(name, sizeof(name), "devmem-%s", t->name);
		debugfs_create_file(name, 0444, adev->debugfs, t->devmem,
				    &devmem_fops);
	}
}
#endif

/**
 * accmap_debugfs_init() - create accmap's debugfs directory and files
 * @adev: the device
 *
 * Failure to create them is not an error: the driver works without.
 */
void accmap_debugfs_init(struct accmap_device *adev)
{
	adev->debugfs = debugfs_create_dir("accmap", NULL);
	debugfs_create_file("clients", 0444, adev->debugfs, adev, &clients_fops);
	debugfs_create_file("allocations", 0444, adev->debugfs, adev,
			    &allocations_fops);
	debugfs_create_file("orphans", 0444, adev->debugfs, adev, &orphans_fops);
	debugfs_create_file("heaps", 0444, adev->debugfs, adev, &heaps_fops);
	debugfs_create_file("tags", 0444, adev->debugfs, adev, &tags_fops);
	debugfs_create_file("pool", 0444, adev->debugfs, adev, &pool_fops);
	debugfs_create_file("replay", 0444, adev->debugfs, adev, &replay_fops);
	debugfs_create_file("svm", 0444, adev->debugfs, adev, &svm_fops);
	/* GPU address-space layout of every process's sessions: root only. */
	debugfs_create_file("replay_leaves", 0400, adev->debugfs, adev,
			    &replay_leaves_fops);
#ifdef ACCMAP_HAVE_DEVMEM
	accmap_debugfs_devmem(adev);
#endif
}

/**
 * accmap_debugfs_fini() - remove accmap's debugfs directory
 * @adev: the device
 */
void accmap_debugfs_fini(struct accmap_device *adev)
{
	debugfs_remove_recursive(adev->debugfs);
}

/**
 * accmap_client_show_fdinfo() - the fdinfo of an open /dev/accmap
 * @m: the fdinfo file
 * @file: the client's file
 *
 * Shows the client's handle count and its bytes per heap, counting every
 * handle reference (a buffer imported twice counts twice).
 */
void accmap_client_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct accmap_client *client = file->private_data;
	struct accmap_device *adev = client->adev;
	u64 bytes[ACCMAP_HEAP_MAX] = {};
	unsigned int id;
	u32 count;

	mutex_lock(&client->lock);
	accmap_client_bytes(client, bytes);
	count = client->handles.count;
	mutex_unlock(&client->lock);

	seq_printf(m, "accmap-handles:\t%u\n", count);
	for (id = 0; id < ACCMAP_HEAP_MAX; id++)
		if (adev->heaps[id])
			seq_printf(m, "accmap-heap-%s:\t%llu bytes\n",
				   adev->heaps[id]->name, bytes[id]);
}

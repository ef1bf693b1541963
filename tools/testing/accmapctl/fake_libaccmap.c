// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for the libaccmap calls accmapctl's device commands make,
 * for accmapctl-test.sh: preloaded (LD_PRELOAD) into a dynamically linked
 * accmapctl, it answers with the fixed values below instead of a device,
 * so that the JSON can be checked, value by value, on a machine without
 * the module.  expected.json holds the same values as accmapctl must
 * print them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "accmap.h"

/* The last buffer allocated, for accmap_info() to describe. */
static struct accmap_info last_alloc;

int accmap_open_path(const char *path, int *fd)
{
	(void)path;
	*fd = 1000;
	return 0;
}

int accmap_close(int fd)
{
	(void)fd;
	return 0;
}

/*
 * Heaps 0 (system), 1 (a carveout whose name needs escaping), 31 (user).
 * Under the version a program built now binds to (libaccmap.map's
 * LIBACCMAP_1.1), as the real library's.
 */
int fake_query_heap(int fd, uint32_t heap, struct accmap_heap_info *info);
__asm__(".symver fake_query_heap, accmap_query_heap@@LIBACCMAP_1.1");
int fake_query_heap(int fd, uint32_t heap, struct accmap_heap_info *info)
{
	(void)fd;
	memset(info, 0, sizeof(*info));
	switch (heap) {
	case 0:
		strcpy(info->name, "system");
		info->total = 1ULL << 30;
		info->used = 12288;
		info->free = (1ULL << 30) - 12288;
		info->largest_free = (1ULL << 30) - 12288;
		info->contiguous = 4096;
		info->dma32 = 3ULL << 28;
		return 0;
	case 1:
		strcpy(info->name, "c\"a\\m\t1");
		info->total = 64ULL << 20;
		info->used = 0;
		info->free = 64ULL << 20;
		info->largest_free = 32ULL << 20;
		info->dma32 = 64ULL << 20;
		return 0;
	case ACCMAP_HEAP_USER:
		strcpy(info->name, "user");
		info->used = 8192;
		return 0;
	default:
		return -ENODEV;
	}
}

int accmap_query_pool(int fd, struct accmap_pool_info *info)
{
	(void)fd;
	memset(info, 0, sizeof(*info));
	info->norders = 2;
	info->orders[0].order = 0;
	info->orders[0].zeroed = 3;
	info->orders[0].dirty = 1;
	info->orders[1].order = 4;
	info->orders[1].zeroed = 2;
	info->cap = 64ULL << 20;
	info->pooled = 4 * 4096 + 2 * 65536;
	info->hits = 18446744073709551615ULL;	/* the top of the range, exactly */
	info->misses = 7;
	info->shrunk = 0;
	return 0;
}

int accmap_replay_query(int fd, uint32_t index, struct accmap_replay_target_info *info)
{
	(void)fd;
	if (index > 0)
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	strcpy(info->name, "sim");
	info->flags = ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ |
		      ACCMAP_REPLAY_TARGET_SVM;
	info->window_size = 0x4000;
	info->formats = (1U << ACCMAP_PGT_MALI_AARCH64_4K) | (1U << ACCMAP_PGT_MALI_LPAE);
	info->as_count = 8;
	info->gpu_id = 0x72120000;
	info->sessions = 2;
	return 0;
}

int accmap_from_fd(int fd, int dmabuf_fd, uint32_t *id)
{
	(void)fd;
	(void)dmabuf_fd;
	*id = 5;
	return 0;
}

int accmap_info(int fd, uint32_t id, struct accmap_info *info)
{
	(void)fd;
	if (id == last_alloc.id) {
		*info = last_alloc;
		return 0;
	}
	memset(info, 0, sizeof(*info));
	info->id = id;
	info->size = 1ULL << 20;
	info->heap = 0;
	info->flags = ACCMAP_ALLOC_WRITECOMBINE;
	info->state = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED;
	info->tag = 7;
	info->handle_refs = 2;
	info->exports = 1;
	info->maps = 3;
	info->attachments = 1;
	info->vmaps = 0;
	return 0;
}

int accmap_free(int fd, uint32_t id)
{
	(void)fd;
	(void)id;
	return 0;
}

/* Always buffer 9, with the size, flags and tag asked for. */
int accmap_alloc_buffer(int fd, uint64_t size, uint32_t heap_mask, uint32_t flags,
			uint16_t tag, uint32_t *id)
{
	(void)fd;
	(void)heap_mask;
	memset(&last_alloc, 0, sizeof(last_alloc));
	last_alloc.id = 9;
	last_alloc.size = size;
	last_alloc.heap = 1;
	last_alloc.flags = flags;
	last_alloc.state = ACCMAP_STATE_ALLOCATED;
	last_alloc.tag = tag;
	last_alloc.handle_refs = 1;
	*id = 9;
	return 0;
}

/* A real file descriptor (of /dev/null), which accmapctl closes. */
int accmap_get_fd(int fd, uint32_t id, uint32_t fd_flags, int *dmabuf_fd)
{
	(void)fd;
	(void)id;
	(void)fd_flags;
	*dmabuf_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	return *dmabuf_fd < 0 ? -errno : 0;
}

/* Refuses the label "toolong" as the kernel refuses long ones. */
int accmap_set_tag_label(int fd, uint16_t tag, const char *label)
{
	(void)fd;
	(void)tag;
	return strcmp(label, "toolong") ? 0 : -ENAMETOOLONG;
}

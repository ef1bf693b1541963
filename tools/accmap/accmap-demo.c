// SPDX-License-Identifier: GPL-2.0
/*
 * accmap-demo: one buffer's life, step by step, with the figures.
 *
 * Allocates a 1 MiB write-combined buffer from /dev/accmap, exports it as
 * a dma-buf, imports that into vgem (a real DRM importer), writes a
 * pattern through accmap's mapping and reads it back through vgem's view.
 * Exits 0 only if every step worked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/accmap.h>
#include <linux/dma-buf.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define DEMO_SIZE	(1024U * 1024U)
#define DEMO_TAG	0xde30

/*
 * DRM uapi layouts (drm.h, drm_mode.h) for the four calls used here; the
 * amd64 toolchain has no <drm/drm.h> unless libdrm-dev is installed.
 */
struct demo_drm_version {
	int version_major;
	int version_minor;
	int version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct demo_drm_prime_handle {
	__u32 handle;
	__u32 flags;
	__s32 fd;
};

struct demo_drm_gem_close {
	__u32 handle;
	__u32 pad;
};

struct demo_drm_map_dumb {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

#define DEMO_DRM_IOCTL_VERSION		_IOWR('d', 0x00, struct demo_drm_version)
#define DEMO_DRM_IOCTL_GEM_CLOSE	_IOW('d', 0x09, struct demo_drm_gem_close)
#define DEMO_DRM_IOCTL_HANDLE_TO_FD	_IOWR('d', 0x2d, struct demo_drm_prime_handle)
#define DEMO_DRM_IOCTL_FD_TO_HANDLE	_IOWR('d', 0x2e, struct demo_drm_prime_handle)
#define DEMO_DRM_IOCTL_MAP_DUMB		_IOWR('d', 0xb3, struct demo_drm_map_dumb)

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

static int step;

__printf(1, 2) static void say(const char *fmt, ...);

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("[%2d] ", ++step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int fail(const char *what)
{
	fprintf(stderr, "accmap-demo: %s: %s\n", what, strerror(errno));
	return 1;
}

static const char *heap_name(__u32 heap)
{
	if (heap == ACCMAP_HEAP_SYSTEM)
		return "system";
	if (heap == ACCMAP_HEAP_NONE)
		return "none";
	return "carveout";
}

static int open_vgem(char *path, size_t path_len)
{
	for (int minor = 0; minor < 64; minor++) {
		struct demo_drm_version v = { 0 };
		char name[16] = { 0 };
		int fd;

		snprintf(path, path_len, "/dev/dri/card%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DEMO_DRM_IOCTL_VERSION, &v) && v.name_len == 4 &&
		    !memcmp(name, "vgem", 4))
			return fd;
		close(fd);
	}
	errno = ENODEV;
	return -1;
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)((i * 31) ^ (i >> 12)) | 1;
}

/*
 * vgem's CPU view of the import: its own mmap offset if it gives one;
 * Linux 6.1 refuses that for imported objects, and then its PRIME export
 * of the same object.
 */
static uint8_t *vgem_view(int vgem, __u32 handle, int *view_fd)
{
	struct demo_drm_map_dumb map = { .handle = handle };
	struct demo_drm_prime_handle back = { .handle = handle, .flags = O_CLOEXEC | O_RDWR };
	void *p;

	*view_fd = -1;
	if (!ioctl(vgem, DEMO_DRM_IOCTL_MAP_DUMB, &map)) {
		p = mmap(NULL, DEMO_SIZE, PROT_READ, MAP_SHARED, vgem, (off_t)map.offset);
		if (p != MAP_FAILED) {
			say("vgem maps the import at fake offset %#llx",
			    (unsigned long long)map.offset);
			return p;
		}
	} else {
		say("vgem will not mmap an imported object (%s): using its PRIME export",
		    strerror(errno));
	}
	if (ioctl(vgem, DEMO_DRM_IOCTL_HANDLE_TO_FD, &back))
		return NULL;
	*view_fd = back.fd;
	p = mmap(NULL, DEMO_SIZE, PROT_READ, MAP_SHARED, back.fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	say("vgem handle %u exported back as fd %d, mapped %u KiB", handle, back.fd,
	    DEMO_SIZE >> 10);
	return p;
}

int main(void)
{
	struct accmap_create create = { .size = DEMO_SIZE };
	struct accmap_alloc alloc = {
		.heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
		.flags = ACCMAP_ALLOC_WRITECOMBINE,
		.tag = DEMO_TAG,
	};
	struct accmap_info info = { 0 };
	struct accmap_get_fd get_fd = { .fd_flags = O_RDWR | O_CLOEXEC };
	struct demo_drm_prime_handle import = { 0 };
	struct demo_drm_gem_close gem_close = { 0 };
	struct accmap_free free_args = { 0 };
	struct dma_buf_sync sync = { 0 };
	uint8_t *mine, *theirs;
	char vgem_path[32];
	int dev, vgem, view_fd;
	size_t i;

	dev = open("/dev/accmap", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return fail("open /dev/accmap");
	say("opened /dev/accmap as fd %d", dev);

	if (ioctl(dev, ACCMAP_IOC_CREATE, &create))
		return fail("ACCMAP_IOC_CREATE");
	say("CREATE   %llu bytes -> handle id %u", (unsigned long long)create.size, create.id);

	alloc.id = create.id;
	if (ioctl(dev, ACCMAP_IOC_ALLOC, &alloc))
		return fail("ACCMAP_IOC_ALLOC");
	say("ALLOC    write-combined, tag %#x -> heap %u (%s)", alloc.tag, alloc.heap,
	    heap_name(alloc.heap));

	info.id = create.id;
	if (ioctl(dev, ACCMAP_IOC_INFO, &info))
		return fail("ACCMAP_IOC_INFO");
	say("INFO     size %llu, heap %s, flags %#x, state %#x%s%s, tag %#x",
	    (unsigned long long)info.size, heap_name(info.heap), info.flags, info.state,
	    info.state & ACCMAP_STATE_ALLOCATED ? " allocated" : "",
	    info.state & ACCMAP_STATE_EXPORTED ? " exported" : "", info.tag);

	get_fd.id = create.id;
	if (ioctl(dev, ACCMAP_IOC_GET_FD, &get_fd))
		return fail("ACCMAP_IOC_GET_FD");
	say("GET_FD   dma-buf fd %d, %lld bytes", get_fd.fd,
	    (long long)lseek(get_fd.fd, 0, SEEK_END));

	vgem = open_vgem(vgem_path, sizeof(vgem_path));
	if (vgem < 0)
		return fail("find vgem in /dev/dri (modprobe vgem)");
	say("opened %s (vgem)", vgem_path);

	import.fd = get_fd.fd;
	if (ioctl(vgem, DEMO_DRM_IOCTL_FD_TO_HANDLE, &import))
		return fail("DRM_IOCTL_PRIME_FD_TO_HANDLE");
	say("vgem imported dma-buf fd %d as GEM handle %u", get_fd.fd, import.handle);

	mine = mmap(NULL, DEMO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, get_fd.fd, 0);
	if (mine == MAP_FAILED)
		return fail("mmap of the dma-buf");
	say("mapped the dma-buf at %p", (void *)mine);

	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE;
	if (ioctl(get_fd.fd, DMA_BUF_IOCTL_SYNC, &sync))
		return fail("DMA_BUF_IOCTL_SYNC start");
	for (i = 0; i < DEMO_SIZE; i++)
		mine[i] = pattern(i);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	if (ioctl(get_fd.fd, DMA_BUF_IOCTL_SYNC, &sync))
		return fail("DMA_BUF_IOCTL_SYNC end");
	say("wrote a %u KiB pattern through accmap's mapping", DEMO_SIZE >> 10);

	theirs = vgem_view(vgem, import.handle, &view_fd);
	if (!theirs)
		return fail("map the buffer through vgem");
	for (i = 0; i < DEMO_SIZE; i++) {
		if (theirs[i] != pattern(i)) {
			fprintf(stderr, "accmap-demo: byte %zu reads %#x through vgem, wrote %#x\n",
				i, theirs[i], pattern(i));
			return 1;
		}
	}
	say("read back all %u bytes through vgem: match", DEMO_SIZE);

	munmap(theirs, DEMO_SIZE);
	munmap(mine, DEMO_SIZE);
	if (view_fd >= 0)
		close(view_fd);
	close(get_fd.fd);
	info.id = create.id;
	if (ioctl(dev, ACCMAP_IOC_INFO, &info))
		return fail("ACCMAP_IOC_INFO");
	say("INFO     state %#x while vgem still holds the dma-buf", info.state);

	gem_close.handle = import.handle;
	if (ioctl(vgem, DEMO_DRM_IOCTL_GEM_CLOSE, &gem_close))
		return fail("DRM_IOCTL_GEM_CLOSE");
	if (ioctl(dev, ACCMAP_IOC_INFO, &info))
		return fail("ACCMAP_IOC_INFO");
	say("vgem closed handle %u; INFO state %#x", import.handle, info.state);

	free_args.id = create.id;
	if (ioctl(dev, ACCMAP_IOC_FREE, &free_args))
		return fail("ACCMAP_IOC_FREE");
	say("FREE     handle id %u", create.id);
	close(vgem);
	close(dev);
	say("done: all steps passed");
	return 0;
}

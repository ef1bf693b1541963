// SPDX-License-Identifier: GPL-2.0
/*
 * vgem helpers for the accmap selftests; see vgem_util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

/* Enough for devtmpfs's numbering of a machine with a few GPUs. */
#define VGEM_MAX_MINOR	64

static int is_vgem(int fd)
{
	struct vg_drm_version v;
	char name[16];

	memset(&v, 0, sizeof(v));
	memset(name, 0, sizeof(name));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (ioctl(fd, VG_DRM_IOCTL_VERSION, &v))
		return 0;
	return v.name_len == 4 && !memcmp(name, "vgem", 4);
}

int vgem_open(void)
{
	for (int minor = 0; minor < VGEM_MAX_MINOR; minor++) {
		char path[32];
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_vgem(fd))
			return fd;
		close(fd);
	}
	errno = ENODEV;
	return -1;
}

int vgem_import(int vgem, int dmabuf, uint32_t *handle)
{
	struct vg_drm_prime_handle args = { .handle = 0xa5a5a5a5, .flags = 0, .fd = dmabuf };

	if (ioctl(vgem, VG_DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		return -errno;
	*handle = args.handle;
	return 0;
}

int vgem_export(int vgem, uint32_t handle)
{
	struct vg_drm_prime_handle args = {
		.handle = handle, .flags = VG_DRM_CLOEXEC | VG_DRM_RDWR, .fd = -1,
	};

	if (ioctl(vgem, VG_DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		return -errno;
	return args.fd;
}

int vgem_close_handle(int vgem, uint32_t handle)
{
	struct vg_drm_gem_close args = { .handle = handle, .pad = 0 };

	return ioctl(vgem, VG_DRM_IOCTL_GEM_CLOSE, &args) ? -errno : 0;
}

int vgem_map_offset(int vgem, uint32_t handle, uint64_t *offset)
{
	struct vg_drm_mode_map_dumb args = { .handle = handle, .pad = 0, .offset = 0 };

	if (ioctl(vgem, VG_DRM_IOCTL_MODE_MAP_DUMB, &args))
		return -errno;
	*offset = args.offset;
	return 0;
}

int vgem_foreign_dmabuf(int vgem, size_t size, uint32_t *handle)
{
	/* 32 bpp rows of 1024 pixels: 4 KiB per row. */
	struct vg_drm_mode_create_dumb args = {
		.width = 1024, .bpp = 32, .flags = 0,
		.height = (uint32_t)((size + 4095) / 4096),
	};
	int fd;

	if (ioctl(vgem, VG_DRM_IOCTL_MODE_CREATE_DUMB, &args))
		return -errno;
	fd = vgem_export(vgem, args.handle);
	if (fd < 0) {
		vgem_close_handle(vgem, args.handle);
		return fd;
	}
	*handle = args.handle;
	return fd;
}

/* The probe's buffer carries this tag: its row in debugfs is the only one. */
#define VGEM_PROBE_TAG	0x7e6d

int vgem_maps_at_import(int vgem)
{
	int dev = am_open(), fd = -1, ret;
	struct dbg_table t = { 0 };
	uint32_t id = 0, handle = 0;
	char pid[16], tag[16];
	long row;

	if (dev < 0)
		return dev;
	ret = am_create(dev, page_size(), &id);
	if (!CHECK(ret == 0, "CREATE: %s", strerror(-ret)))
		goto out;
	ret = am_alloc(dev, id, 0, VGEM_PROBE_TAG);
	if (!CHECK(ret == 0, "ALLOC: %s", strerror(-ret)))
		goto out;
	fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd))) {
		ret = fd;
		goto out;
	}
	ret = vgem_import(vgem, fd, &handle);
	if (!CHECK(ret == 0, "vgem import of a writable accmap dma-buf: %s", strerror(-ret)))
		goto out;
	ret = -EIO;
	if (dbg_read("allocations", &t)) {
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		snprintf(tag, sizeof(tag), "%u", VGEM_PROBE_TAG);
		row = dbg_find(&t, "pid", pid, "tag", tag);
		if (CHECK(row >= 0, "no debugfs allocations row for pid %s tag %s", pid, tag)) {
			unsigned long long n = dbg_num(&t, (size_t)row, "mapped");

			if (CHECK(n != ~0ULL, "debugfs allocations: no number in \"mapped\""))
				ret = n != 0;
		}
		dbg_free(&t);
	}
	vgem_close_handle(vgem, handle);
out:
	if (fd >= 0)
		close(fd);
	close(dev);
	return ret;
}

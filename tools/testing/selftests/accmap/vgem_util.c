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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few DRM ioctls the accmap selftests use with vgem, a real dma-buf
 * importer and exporter.  The amd64 toolchain here has no <drm/drm.h>
 * (Debian ships it with libdrm-dev), so the layouts are declared below;
 * they are the DRM uapi's, and the asserts pin their sizes.
 */
#ifndef ACCMAP_SELFTEST_VGEM_UTIL_H
#define ACCMAP_SELFTEST_VGEM_UTIL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/ioctl.h>
#include <linux/types.h>

struct vg_drm_version {
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

struct vg_drm_gem_close {
	__u32 handle;
	__u32 pad;
};

struct vg_drm_prime_handle {
	__u32 handle;
	__u32 flags;
	__s32 fd;
};

struct vg_drm_mode_create_dumb {
	__u32 height;
	__u32 width;
	__u32 bpp;
	__u32 flags;
	__u32 handle;
	__u32 pitch;
	__u64 size;
};

struct vg_drm_mode_map_dumb {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

static_assert(sizeof(struct vg_drm_version) == 64, "LP64 drm_version layout");
static_assert(sizeof(struct vg_drm_gem_close) == 8, "drm_gem_close layout");
static_assert(sizeof(struct vg_drm_prime_handle) == 12, "drm_prime_handle layout");
static_assert(sizeof(struct vg_drm_mode_create_dumb) == 32, "drm_mode_create_dumb layout");
static_assert(sizeof(struct vg_drm_mode_map_dumb) == 16, "drm_mode_map_dumb layout");

#define VG_DRM_IOCTL_BASE		'd'
#define VG_DRM_IOCTL_VERSION		_IOWR(VG_DRM_IOCTL_BASE, 0x00, struct vg_drm_version)
#define VG_DRM_IOCTL_GEM_CLOSE		_IOW(VG_DRM_IOCTL_BASE, 0x09, struct vg_drm_gem_close)
#define VG_DRM_IOCTL_PRIME_HANDLE_TO_FD	_IOWR(VG_DRM_IOCTL_BASE, 0x2d, struct vg_drm_prime_handle)
#define VG_DRM_IOCTL_PRIME_FD_TO_HANDLE	_IOWR(VG_DRM_IOCTL_BASE, 0x2e, struct vg_drm_prime_handle)
#define VG_DRM_IOCTL_MODE_CREATE_DUMB	\
	_IOWR(VG_DRM_IOCTL_BASE, 0xb2, struct vg_drm_mode_create_dumb)
#define VG_DRM_IOCTL_MODE_MAP_DUMB	_IOWR(VG_DRM_IOCTL_BASE, 0xb3, struct vg_drm_mode_map_dumb)

/* DRM's prime flags are the open(2) ones. */
#define VG_DRM_CLOEXEC			O_CLOEXEC
#define VG_DRM_RDWR			O_RDWR

/* Opens the vgem DRM device (found by driver name); -1 with errno if none. */
int vgem_open(void);

/* Each returns 0 (or an fd for the export calls) on success, else -errno. */
int vgem_import(int vgem, int dmabuf, uint32_t *handle);
int vgem_export(int vgem, uint32_t handle);
int vgem_close_handle(int vgem, uint32_t handle);
int vgem_map_offset(int vgem, uint32_t handle, uint64_t *offset);

/*
 * Whether this kernel's vgem maps a dma-buf for its device as it imports
 * it (DMA_BIDIRECTIONAL; kernels before 6.15) or only attaches then and
 * maps when the device uses the memory (DRM's shmem helpers from 6.15 on,
 * where nothing in vgem ever maps it).  Found by importing a writable
 * accmap buffer and reading accmap's debugfs "mapped" column for it.
 * Returns 1 or 0, or -errno (a failed CHECK says why).  In vgem_probe.c:
 * selftests only (it reports through TAP).
 */
int vgem_maps_at_import(int vgem);

/*
 * A dma-buf exported by vgem, not by accmap, of at least size bytes: the
 * "foreign" buffer accmap must tell apart from its own.  Returns the fd or
 * -errno; *handle is vgem's handle for it (close it with vgem_close_handle).
 */
int vgem_foreign_dmabuf(int vgem, size_t size, uint32_t *handle);

#endif /* ACCMAP_SELFTEST_VGEM_UTIL_H */

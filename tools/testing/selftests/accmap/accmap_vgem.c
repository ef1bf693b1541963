// SPDX-License-Identifier: GPL-2.0
/*
 * accmap dma-bufs in a real importer: vgem attaches and maps them for its
 * device when it imports them, holds them while it has a handle, and
 * hands them back out through PRIME.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

static const uint32_t both_kinds[] = { 0, ACCMAP_ALLOC_WRITECOMBINE };

static int open_vgem_checked(void)
{
	int fd = vgem_open();

	CHECK(fd >= 0, "no vgem DRM device in /dev/dri: %s", strerror(errno));
	return fd;
}

static uint32_t state_of(int dev, uint32_t id)
{
	struct accmap_info info;

	if (!CHECK(am_info(dev, id, &info) == 0, "INFO of id %u", id))
		return ~0U;
	return info.state;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb))
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void test_vgem_device_found(void)
{
	int vgem = open_vgem_checked();

	if (vgem >= 0)
		close(vgem);
}

static void test_vgem_import(void)
{
	int vgem = open_vgem_checked();
	int dev = am_open();

	if (vgem < 0 || dev < 0)
		goto out;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		size_t len = 16 * page_size();
		uint32_t id, handle = 0, again = 0;
		int fd = am_buffer(dev, len, both_kinds[k], &id, true);
		int ret;

		if (fd < 0)
			continue;
		ret = vgem_import(vgem, fd, &handle);
		if (CHECK(ret == 0, "PRIME_FD_TO_HANDLE: %s", strerror(-ret))) {
			CHECK(handle != 0 && handle != 0xa5a5a5a5, "vgem handle %#x", handle);
			/* One dma-buf is one object to its importer. */
			ret = vgem_import(vgem, fd, &again);
			CHECK(ret == 0 && again == handle,
			      "second import gave handle %u (%d), first %u", again, ret, handle);
			CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
		}
		close(fd);
	}
out:
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_reexport_same_buffer(void)
{
	size_t len = 8 * page_size();
	int vgem = open_vgem_checked();
	int dev = am_open();
	uint32_t id, handle;
	int fd = -1, back;

	if (vgem < 0 || dev < 0)
		goto out;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0 || !CHECK(vgem_import(vgem, fd, &handle) == 0, "import"))
		goto out;
	back = vgem_export(vgem, handle);
	if (CHECK(back >= 0, "PRIME_HANDLE_TO_FD of an import: %s", strerror(-back))) {
		CHECK(same_file(fd, back), "vgem re-exported another file than accmap's dma-buf");
		CHECK(lseek(back, 0, SEEK_END) == (off_t)len, "re-exported dma-buf size");
		close(back);
	}
	CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
out:
	if (fd >= 0)
		close(fd);
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

/*
 * The importer's CPU view of an imported buffer.  DRM_IOCTL_MODE_MAP_DUMB
 * is tried first; Linux 6.1 refuses it for imported objects (EINVAL), and
 * then the view is vgem's re-export of the object, mapped.
 */
static void *importer_view(int vgem, uint32_t handle, size_t len, int *view_fd)
{
	uint64_t offset = 0;
	int ret = vgem_map_offset(vgem, handle, &offset);
	void *p;

	*view_fd = -1;
	if (ret == 0) {
		tap_diag("vgem maps the import itself, at offset %#llx",
			 (unsigned long long)offset);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, vgem, (off_t)offset);
		CHECK(p != MAP_FAILED, "mmap of vgem at %#llx: %s", (unsigned long long)offset,
		      strerror(errno));
		return p == MAP_FAILED ? NULL : p;
	}
	if (!CHECK(ret == -EINVAL, "MODE_MAP_DUMB of an import: %s", strerror(-ret)))
		return NULL;
	*view_fd = vgem_export(vgem, handle);
	if (!CHECK(*view_fd >= 0, "PRIME_HANDLE_TO_FD: %s", strerror(-*view_fd)))
		return NULL;
	return map_shared(*view_fd, len, PROT_READ | PROT_WRITE, 0);
}

static int dma_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

static void test_vgem_data_roundtrip(void)
{
	size_t len = 64 * page_size();
	int vgem = open_vgem_checked();
	int dev = am_open();

	if (vgem < 0 || dev < 0)
		goto out;
	for (size_t k = 0; k < TAP_ARRAY_SIZE(both_kinds); k++) {
		uint32_t id, handle;
		int fd = am_buffer(dev, len, both_kinds[k], &id, true);
		uint8_t *mine, *theirs;
		int view_fd;
		size_t bad;

		if (fd < 0)
			continue;
		mine = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		if (!mine) {
			close(fd);
			continue;
		}
		if (!CHECK(vgem_import(vgem, fd, &handle) == 0, "import")) {
			munmap(mine, len);
			close(fd);
			continue;
		}
		theirs = importer_view(vgem, handle, len, &view_fd);
		if (theirs) {
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE));
			fill_pattern(mine, len, 0, 50 + k);
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
			bad = find_pattern_mismatch(theirs, len, 0, 50 + k);
			CHECK(bad == len, "byte %zu written by accmap's mapping differs in vgem's",
			      bad);

			fill_pattern(theirs, len, 0, 60 + k);
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
			bad = find_pattern_mismatch(mine, len, 0, 60 + k);
			CHECK(bad == len, "byte %zu written by vgem's mapping differs in accmap's",
			      bad);
			CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
			munmap(theirs, len);
		}
		if (view_fd >= 0)
			close(view_fd);
		munmap(mine, len);
		CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
		close(fd);
	}
out:
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_import_sets_exported(void)
{
	size_t len = 4 * page_size();
	int vgem = open_vgem_checked();
	int dev = am_open();
	uint32_t id, handle;
	int fd;

	if (vgem < 0 || dev < 0)
		goto out;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	if (!CHECK(vgem_import(vgem, fd, &handle) == 0, "import")) {
		close(fd);
		goto out;
	}
	close(fd);
	/* vgem's object holds the dma-buf now. */
	CHECK(state_of(dev, id) == (ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED),
	      "state %#x while only vgem holds the dma-buf", state_of(dev, id));
	check_counts(dev, id, 1, 1, 0, 1, "only vgem holds the dma-buf");
	CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
	CHECK(state_of(dev, id) == ACCMAP_STATE_ALLOCATED,
	      "state %#x after vgem let the dma-buf go", state_of(dev, id));
	check_counts(dev, id, 1, 0, 0, 0, "vgem let the dma-buf go");
out:
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_import_keeps_memory(void)
{
	/* After FREE and close of everything accmap-side, vgem's reference remains. */
	size_t len = 32 * page_size();
	int vgem = open_vgem_checked();
	int dev = am_open();
	uint32_t id, handle;
	int fd, back;
	uint8_t *p;

	if (vgem < 0 || dev < 0)
		goto out;
	fd = am_buffer(dev, len, ACCMAP_ALLOC_WRITECOMBINE, &id, true);
	if (fd < 0)
		goto out;
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		fill_pattern(p, len, 0, 70);
		munmap(p, len);
	}
	if (!CHECK(vgem_import(vgem, fd, &handle) == 0, "import")) {
		close(fd);
		goto out;
	}
	close(fd);
	CHECK(am_free(dev, id) == 0, "FREE");
	close(dev);
	dev = -1;

	back = vgem_export(vgem, handle);
	if (CHECK(back >= 0, "PRIME_HANDLE_TO_FD: %s", strerror(-back))) {
		CHECK(lseek(back, 0, SEEK_END) == (off_t)len, "size after FREE");
		p = map_shared(back, len, PROT_READ | PROT_WRITE, 0);
		if (p) {
			size_t bad = find_pattern_mismatch(p, len, 0, 70);

			CHECK(bad == len, "byte %zu changed while only vgem held the buffer", bad);
			munmap(p, len);
		}
		close(back);
	}
	CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
out:
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_two_importers(void)
{
	/* Two DRM files import one dma-buf: two attachments at once. */
	size_t len = 8 * page_size();
	int v1 = open_vgem_checked();
	int v2 = open_vgem_checked();
	int dev = am_open();
	uint32_t id, h1 = 0, h2 = 0;
	int fd = -1;

	if (v1 < 0 || v2 < 0 || dev < 0)
		goto out;
	fd = am_buffer(dev, len, 0, &id, true);
	if (fd < 0)
		goto out;
	CHECK(vgem_import(v1, fd, &h1) == 0, "import in the first file");
	check_counts(dev, id, 1, 1, 0, 1, "one importer");
	CHECK(vgem_import(v2, fd, &h2) == 0, "import in the second file");
	check_counts(dev, id, 1, 1, 0, 2, "two importers");
	if (h1)
		CHECK(vgem_close_handle(v1, h1) == 0, "GEM_CLOSE in the first file");
	check_counts(dev, id, 1, 1, 0, 1, "one importer left");
	/* The second attachment still works after the first went. */
	if (h2) {
		int back = vgem_export(v2, h2);

		if (CHECK(back >= 0, "re-export from the second file: %s", strerror(-back))) {
			CHECK(same_file(back, fd), "re-export is another buffer");
			close(back);
		}
		CHECK(vgem_close_handle(v2, h2) == 0, "GEM_CLOSE in the second file");
	}
	check_counts(dev, id, 1, 1, 0, 0, "importers gone");
out:
	if (fd >= 0)
		close(fd);
	if (v1 >= 0)
		close(v1);
	if (v2 >= 0)
		close(v2);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_import_churn(void)
{
	/* Many attach/map/unmap/detach cycles over buffers of varied size. */
	int vgem = open_vgem_checked();
	int dev = am_open();

	if (vgem < 0 || dev < 0)
		goto out;
	for (unsigned int i = 0; i < 64 && !tap_failed(); i++) {
		size_t len = (1 + (i * 5) % 64) * page_size();
		uint32_t id, handle;
		int fd = am_buffer(dev, len, both_kinds[i & 1], &id, true);

		if (fd < 0)
			break;
		if (CHECK(vgem_import(vgem, fd, &handle) == 0, "import %u", i))
			CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE %u", i);
		close(fd);
		CHECK(am_free(dev, id) == 0, "FREE %u", i);
	}
out:
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static void test_vgem_foreign_dmabuf(void)
{
	/*
	 * The helper that later tests use for a dma-buf accmap did not
	 * export: it must give a working dma-buf of the size asked for.
	 */
	size_t len = 16 * page_size();
	int vgem = open_vgem_checked();
	uint32_t handle;
	uint8_t *p;
	int fd;

	if (vgem < 0)
		return;
	fd = vgem_foreign_dmabuf(vgem, len, &handle);
	if (!CHECK(fd >= 0, "vgem dumb buffer export: %s", strerror(-fd)))
		goto out;
	CHECK(lseek(fd, 0, SEEK_END) >= (off_t)len, "foreign dma-buf smaller than asked");
	p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
	if (p) {
		fill_pattern(p, len, 0, 80);
		CHECK(find_pattern_mismatch(p, len, 0, 80) == len, "foreign dma-buf lost a write");
		munmap(p, len);
	}
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW));
	CHECK_OK(dma_sync(fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW));
	CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
	close(fd);
out:
	close(vgem);
}

/*
 * A CPU mapping of a read-only accmap dma-buf that some importer hands
 * out (@what): writable is refused (EACCES), read-only shows the pattern.
 */
static void readonly_cpu_maps(int fd, off_t off, size_t len, const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	CHECK(p == MAP_FAILED && errno == EACCES, "writable mmap of %s: %s, expected EACCES",
	      what, p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, len);
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	if (CHECK(p != MAP_FAILED, "read-only mmap of %s: %s", what, strerror(errno))) {
		CHECK(find_pattern_mismatch(p, len, 0, 90) == len,
		      "read-only mmap of %s does not show the buffer", what);
		munmap(p, len);
	}
}

/*
 * vgem's import of a read-only dma-buf where vgem only attaches (6.15 and
 * later): it holds the attachment, but nothing in vgem maps it for the
 * device.  What vgem hands on is read-only: its CPU mapping of the import
 * (if it offers one; 7.x refuses MAP_DUMB of imports with EINVAL) and its
 * re-export, which is accmap's read-only dma-buf again.
 */
static void readonly_import_unmapped(int vgem, int dev, uint32_t id, int ro, int rw, size_t len)
{
	uint32_t handle = 0;
	uint64_t off = 0;
	void *p;
	int ret;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	if (!CHECK(p != MAP_FAILED, "mmap of the O_RDWR export: %s", strerror(errno)))
		return;
	fill_pattern(p, len, 0, 90);
	munmap(p, len);
	ret = vgem_import(vgem, ro, &handle);
	if (!CHECK(ret == 0, "vgem import (attach only) of an O_RDONLY export: %s",
		   strerror(-ret)))
		return;
	check_counts(dev, id, 1, 2, 0, 1, "read-only import, attached");
	ret = vgem_map_offset(vgem, handle, &off);
	if (!ret)
		readonly_cpu_maps(vgem, (off_t)off, len, "the import through vgem");
	else
		CHECK(ret == -EINVAL, "MAP_DUMB of the import: %s, expected an offset or EINVAL",
		      strerror(-ret));
	ret = vgem_export(vgem, handle);
	if (CHECK(ret >= 0, "vgem re-export of the read-only import: %s", strerror(-ret))) {
		readonly_cpu_maps(ret, 0, len, "vgem's re-export");
		close(ret);
	}
	CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
	check_counts(dev, id, 1, 2, 0, 0, "read-only import let go");
}

static void test_vgem_import_readonly_refused(void)
{
	/*
	 * A device may only read a read-only dma-buf.  Where vgem maps each
	 * import DMA_BIDIRECTIONAL as it imports (before 6.15), a read-only
	 * dma-buf of a writable buffer refuses the import (EACCES) and keeps
	 * nothing attached; where vgem only attaches, the refusal comes at
	 * the writable mapping instead.  Either way the same buffer's O_RDWR
	 * dma-buf imports as before.
	 */
	size_t len = 8 * page_size();
	int vgem = open_vgem_checked();
	int dev = am_open();
	uint32_t id, handle = 0;
	int ro = -1, rw = -1, ret, maps;

	if (vgem < 0 || dev < 0)
		goto out;
	maps = vgem_maps_at_import(vgem);
	if (maps < 0)
		goto out;
	tap_diag("vgem %s", maps ? "maps at import" : "attaches at import, maps on use");
	rw = am_buffer(dev, len, 0, &id, true);
	if (rw < 0)
		goto out;
	ro = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	if (!CHECK(ro >= 0, "GET_FD O_RDONLY: %s", strerror(-ro)))
		goto out;
	if (maps) {
		ret = vgem_import(vgem, ro, &handle);
		CHECK(ret == -EACCES, "vgem import of an O_RDONLY export: %s, expected EACCES",
		      strerror(-ret));
		if (!ret)
			vgem_close_handle(vgem, handle);
		check_counts(dev, id, 1, 2, 0, 0, "refused read-only import");
	} else {
		readonly_import_unmapped(vgem, dev, id, ro, rw, len);
	}
	ret = vgem_import(vgem, rw, &handle);
	if (CHECK(ret == 0, "vgem import of the O_RDWR export: %s", strerror(-ret))) {
		check_counts(dev, id, 1, 2, 0, 1, "read-write import");
		CHECK(vgem_close_handle(vgem, handle) == 0, "GEM_CLOSE");
	}
out:
	if (ro >= 0)
		close(ro);
	if (rw >= 0)
		close(rw);
	if (vgem >= 0)
		close(vgem);
	if (dev >= 0)
		close(dev);
}

static const struct tap_test tests[] = {
	{ "vgem_device_found", test_vgem_device_found },
	{ "vgem_import", test_vgem_import },
	{ "vgem_reexport_same_buffer", test_vgem_reexport_same_buffer },
	{ "vgem_data_roundtrip", test_vgem_data_roundtrip },
	{ "vgem_import_sets_exported", test_vgem_import_sets_exported },
	{ "vgem_import_keeps_memory", test_vgem_import_keeps_memory },
	{ "vgem_two_importers", test_vgem_two_importers },
	{ "vgem_import_churn", test_vgem_import_churn },
	{ "vgem_foreign_dmabuf", test_vgem_foreign_dmabuf },
	{ "vgem_import_readonly_refused", test_vgem_import_readonly_refused },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

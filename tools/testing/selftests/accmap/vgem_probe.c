// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel's vgem does with an import, found through accmap's
 * debugfs: a selftest helper (it reports through TAP), kept apart from
 * vgem_util.c, which the tools link too.  See vgem_util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

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

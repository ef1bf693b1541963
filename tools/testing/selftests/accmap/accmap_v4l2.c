// SPDX-License-Identifier: GPL-2.0
/*
 * accmap buffers as V4L2 capture buffers (issue 18): the kernel's vivid
 * test driver, loaded by the VM harness with two instances, captures into
 * accmap dma-bufs queued as V4L2_MEMORY_DMABUF.
 *
 *   vivid-000  videobuf2-vmalloc: vmaps the dma-buf and writes through it
 *   vivid-001  videobuf2-dma-contig: maps the dma-buf for its device and
 *              needs it to be one contiguous DMA block (the guests have no
 *              IOMMU, so one physically contiguous block)
 *
 * The frames are made deterministic (75% colour bars, no OSD text, no
 * movement, 320x180 GREY); a reference frame is captured into vivid's own
 * MMAP buffers, and every frame captured into an accmap buffer must equal
 * it byte for byte through ACCMAP_IOC_READ, an mmap of the dma-buf and an
 * mmap of /dev/accmap at ACCMAP_IOC_MAP_OFFSET.  Before every QBUF the
 * buffer is filled with garbage that differs from the reference in every
 * byte, so every frame, not only the first into a zeroed buffer, proves
 * that the device wrote all of it.  The dma-contig instance
 * refuses a scattered system-heap buffer at VIDIOC_QBUF with EFAULT
 * (videobuf2-dma-contig's "contiguous chunk is too small") and takes a
 * contiguous (ACCMAP_ALLOC_CONTIGUOUS) or carveout one.
 *
 * The harness names the capture nodes in ACCMAP_VIVID_VMALLOC and
 * ACCMAP_VIVID_CONTIG (init.sh); it does not run this test on a kernel
 * without vivid, so every check here is required.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/videodev2.h>

#include "accmap_util.h"
#include "tap.h"

/* vivid's private controls (drivers/media/test-drivers/vivid/vivid-ctrls.c). */
#define VIVID_CID_VIVID_BASE		(0x00f00000 | 0xf000)
#define VIVID_CID_TEST_PATTERN		(VIVID_CID_VIVID_BASE + 0)
#define VIVID_CID_OSD_TEXT_MODE		(VIVID_CID_VIVID_BASE + 1)
#define VIVID_CID_HOR_MOVEMENT		(VIVID_CID_VIVID_BASE + 2)
#define VIVID_CID_VERT_MOVEMENT		(VIVID_CID_VIVID_BASE + 3)
#define VIVID_OSD_NONE			2	/* "None" */
#define VIVID_NO_MOVEMENT		3	/* "No Movement" */
#define VIVID_PATTERN_75_BARS		0	/* "75% Colorbar" */

#define FRAME_W		320	/* vivid's smallest webcam size */
#define FRAME_H		180
#define NBUFS		3	/* buffers queued per kind */
#define NFRAMES		6	/* frames checked per kind */
#define DQ_TIMEOUT_MS	20000
#define FRAME_RATE	30	/* frames a second (vivid's webcam allows it at this size) */

#define WC	ACCMAP_ALLOC_WRITECOMBINE
#define UC	ACCMAP_ALLOC_UNCACHED
#define CONTIG	ACCMAP_ALLOC_CONTIGUOUS

enum vv_inst { VV_VMALLOC, VV_CONTIG };

/* An open vivid capture node, set up for the fixed frame; ref: its reference frame. */
struct vv {
	int fd;
	const char *path;
	size_t size;		/* sizeimage */
	unsigned char *ref;
};

static const char *const vv_bus[] = { "platform:vivid-000", "platform:vivid-001" };
static const char *const vv_env[] = { "ACCMAP_VIVID_VMALLOC", "ACCMAP_VIVID_CONTIG" };

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static bool vv_ctrl(int fd, uint32_t id, int32_t value, const char *name)
{
	struct v4l2_control c = { .id = id, .value = value };
	int ret = xioctl(fd, VIDIOC_S_CTRL, &c);

	return CHECK(ret == 0, "VIDIOC_S_CTRL %s=%d: %s", name, value, strerror(-ret));
}

/* Waits for and dequeues one filled buffer; its index, or -1 (test failed). */
static int vv_dqbuf(int fd, uint32_t memory, uint32_t *bytesused)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret = poll(&p, 1, DQ_TIMEOUT_MS);

	if (!CHECK(ret == 1, "no frame within %d ms (poll %d)", DQ_TIMEOUT_MS, ret))
		return -1;
	ret = xioctl(fd, VIDIOC_DQBUF, &b);
	if (!CHECK(ret == 0, "VIDIOC_DQBUF: %s", strerror(-ret)))
		return -1;
	CHECK(!(b.flags & V4L2_BUF_FLAG_ERROR), "buffer %u dequeued with V4L2_BUF_FLAG_ERROR",
	      b.index);
	*bytesused = b.bytesused;
	return (int)b.index;
}

static int vv_reqbufs(int fd, uint32_t memory, uint32_t count)
{
	struct v4l2_requestbuffers rb = {
		.count = count, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = memory,
	};
	int ret = xioctl(fd, VIDIOC_REQBUFS, &rb);

	if (!ret && count && rb.count != count)
		return -ENOBUFS;
	return ret;
}

static int vv_stream(int fd, bool on)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	return xioctl(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}

/* One frame into vivid's own MMAP buffers, into out (v->size bytes). */
static bool vv_capture_mmap(struct vv *v, unsigned char *out)
{
	void *map[2] = { MAP_FAILED, MAP_FAILED };
	size_t len[2] = { 0, 0 };
	uint32_t used = 0;
	bool ok = false;
	int idx, ret;

	ret = vv_reqbufs(v->fd, V4L2_MEMORY_MMAP, 2);
	if (!CHECK(ret == 0, "REQBUFS 2 MMAP: %s", strerror(-ret)))
		return false;
	for (uint32_t i = 0; i < 2; i++) {
		struct v4l2_buffer b = {
			.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
		};

		if (!CHECK_OK(xioctl(v->fd, VIDIOC_QUERYBUF, &b)))
			goto out;
		len[i] = b.length;
		map[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, v->fd, b.m.offset);
		if (!CHECK(map[i] != MAP_FAILED, "mmap of vivid buffer %u: %s", i, strerror(errno)))
			goto out;
		if (!CHECK_OK(xioctl(v->fd, VIDIOC_QBUF, &b)))
			goto out;
	}
	if (!CHECK_OK(vv_stream(v->fd, true)))
		goto out;
	/* The second frame: the first may have started before the controls took. */
	for (int n = 0; n < 2; n++) {
		idx = vv_dqbuf(v->fd, V4L2_MEMORY_MMAP, &used);
		if (idx < 0 || !CHECK(idx < 2 && used == v->size, "buffer %d, %u bytes of %zu",
				      idx, used, v->size))
			goto off;
		memcpy(out, map[idx], v->size);
		if (n == 0) {
			struct v4l2_buffer b = {
				.index = (uint32_t)idx, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				.memory = V4L2_MEMORY_MMAP,
			};

			if (!CHECK_OK(xioctl(v->fd, VIDIOC_QBUF, &b)))
				goto off;
		}
	}
	ok = true;
off:
	CHECK_OK(vv_stream(v->fd, false));
out:
	for (int i = 0; i < 2; i++)
		if (map[i] != MAP_FAILED)
			munmap(map[i], len[i]);
	CHECK_OK(vv_reqbufs(v->fd, V4L2_MEMORY_MMAP, 0));
	return ok;
}

/* The first byte where a and b differ, or len. */
static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t len)
{
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	return i;
}

/*
 * The set-up every test shares: finds the capture node of instance @inst
 * (the harness's variable, checked against VIDIOC_QUERYCAP), selects the
 * webcam input, the fixed format and the deterministic pattern, and
 * captures the reference frame into vivid's own buffers.
 */
static bool vv_setup(enum vv_inst inst, struct vv *v)
{
	struct v4l2_capability cap;
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	int input = 0, ret;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	v->path = getenv(vv_env[inst]);
	if (!CHECK(v->path && *v->path, "%s is not set (init.sh names vivid's nodes)",
		   vv_env[inst]))
		return false;
	v->fd = open(v->path, O_RDWR | O_CLOEXEC);
	if (!CHECK(v->fd >= 0, "open(%s): %s", v->path, strerror(errno)))
		return false;
	memset(&cap, 0, sizeof(cap));
	if (!CHECK_OK(xioctl(v->fd, VIDIOC_QUERYCAP, &cap)))
		return false;
	if (!CHECK(!strcmp((char *)cap.driver, "vivid") &&
		   !strcmp((char *)cap.bus_info, vv_bus[inst]),
		   "%s is %s at %s, not vivid at %s", v->path, cap.driver, cap.bus_info,
		   vv_bus[inst]))
		return false;
	if (!CHECK((cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) &&
		   (cap.device_caps & V4L2_CAP_STREAMING),
		   "%s: device caps %#x lack capture and streaming", v->path, cap.device_caps))
		return false;
	if (!CHECK_OK(xioctl(v->fd, VIDIOC_S_INPUT, &input)))
		return false;
	f.fmt.pix.width = FRAME_W;
	f.fmt.pix.height = FRAME_H;
	f.fmt.pix.pixelformat = V4L2_PIX_FMT_GREY;
	f.fmt.pix.field = V4L2_FIELD_NONE;
	ret = xioctl(v->fd, VIDIOC_S_FMT, &f);
	if (!CHECK(ret == 0, "VIDIOC_S_FMT %ux%u GREY: %s", FRAME_W, FRAME_H, strerror(-ret)))
		return false;
	if (!CHECK(f.fmt.pix.width == FRAME_W && f.fmt.pix.height == FRAME_H &&
		   f.fmt.pix.pixelformat == V4L2_PIX_FMT_GREY &&
		   f.fmt.pix.sizeimage >= FRAME_W * FRAME_H,
		   "format became %ux%u %.4s, %u bytes", f.fmt.pix.width, f.fmt.pix.height,
		   (char *)&f.fmt.pix.pixelformat, f.fmt.pix.sizeimage))
		return false;
	v->size = f.fmt.pix.sizeimage;
	/*
	 * 30 frames a second rather than vivid's default 5: the frames are the
	 * same static pattern, only the waits between them get shorter.
	 */
	parm.parm.capture.timeperframe.numerator = 1;
	parm.parm.capture.timeperframe.denominator = FRAME_RATE;
	ret = xioctl(v->fd, VIDIOC_S_PARM, &parm);
	if (!CHECK(ret == 0, "VIDIOC_S_PARM 1/%u s: %s", FRAME_RATE, strerror(-ret)))
		return false;
	if (!CHECK(parm.parm.capture.timeperframe.numerator == 1 &&
		   parm.parm.capture.timeperframe.denominator == FRAME_RATE,
		   "VIDIOC_S_PARM 1/%u s gave %u/%u s", FRAME_RATE,
		   parm.parm.capture.timeperframe.numerator,
		   parm.parm.capture.timeperframe.denominator))
		return false;
	if (!vv_ctrl(v->fd, VIVID_CID_TEST_PATTERN, VIVID_PATTERN_75_BARS, "test pattern") ||
	    !vv_ctrl(v->fd, VIVID_CID_OSD_TEXT_MODE, VIVID_OSD_NONE, "OSD text mode") ||
	    !vv_ctrl(v->fd, VIVID_CID_HOR_MOVEMENT, VIVID_NO_MOVEMENT, "horizontal movement") ||
	    !vv_ctrl(v->fd, VIVID_CID_VERT_MOVEMENT, VIVID_NO_MOVEMENT, "vertical movement"))
		return false;
	v->ref = malloc(v->size);
	if (!CHECK(v->ref, "malloc"))
		return false;
	return vv_capture_mmap(v, v->ref);
}

static void vv_teardown(struct vv *v)
{
	if (v->fd >= 0)
		close(v->fd);
	free(v->ref);
	v->fd = -1;
	v->ref = NULL;
}

/* The dma-buf size for a frame: sizeimage in whole pages. */
static size_t buf_size(const struct vv *v)
{
	return (v->size + page_size() - 1) & ~(page_size() - 1);
}

/* One accmap buffer: its id, dma-buf fd, and how it was allocated. */
struct abuf {
	uint32_t id;
	int fd;
	uint32_t heap;
};

/* CREATE + ALLOC from the heaps in @mask with @flags, then GET_FD; 0 or -errno. */
static int abuf_alloc(int dev, size_t size, uint32_t mask, uint32_t flags, struct abuf *b)
{
	struct accmap_alloc a = { .heap_mask = mask, .flags = flags, .heap = GARBAGE_U32 };
	int ret;

	b->fd = -1;
	ret = am_create(dev, size, &b->id);
	if (ret)
		return ret;
	a.id = b->id;
	ret = raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a);
	if (ret) {
		am_free(dev, b->id);
		return ret;
	}
	b->heap = a.heap;
	b->fd = am_get_fd(dev, b->id, O_RDWR | O_CLOEXEC);
	if (b->fd < 0) {
		ret = b->fd;
		am_free(dev, b->id);
		return ret;
	}
	return 0;
}

/* INFO's importer counters of a buffer: attachments and kernel mappings. */
static bool importers_of(int dev, uint32_t id, long *attachments, long *vmaps)
{
	struct accmap_info info = { .id = id };
	int ret = raw_ioctl(dev, ACCMAP_IOC_INFO, &info);

	*attachments = -1;
	*vmaps = -1;
	if (!CHECK(ret == 0, "INFO on %u: %s", id, strerror(-ret)))
		return false;
	*attachments = info.attachments;
	*vmaps = info.vmaps;
	return true;
}

/*
 * The frame in buffer b equals the reference through READ, an mmap of its
 * dma-buf and an mmap of /dev/accmap at its MAP_OFFSET.  dev < 0: the
 * dma-buf's mmap only (the client is gone).
 */
static bool frame_matches(int dev, const struct abuf *b, const struct vv *v, const char *what)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
	size_t len = buf_size(v), at;
	unsigned char *copy;
	bool ok = true;
	void *p;

	if (dev >= 0) {
		struct accmap_map_offset mo = { .id = b->id, .offset = GARBAGE_U64 };
		int ret;

		copy = malloc(v->size);
		if (!CHECK(copy, "malloc"))
			return false;
		ret = am_read(dev, b->id, 0, copy, v->size);
		at = first_diff(copy, v->ref, v->size);
		ok &= CHECK(ret == 0 && at == v->size,
			    "%s: READ %s; frame differs from the reference at byte %zu of %zu",
			    what, strerror(-ret), at, v->size);
		free(copy);
		ret = raw_ioctl(dev, ACCMAP_IOC_MAP_OFFSET, &mo);
		if (CHECK(ret == 0, "%s: MAP_OFFSET: %s", what, strerror(-ret))) {
			p = mmap(NULL, len, PROT_READ, MAP_SHARED, dev, (off_t)mo.offset);
			if (CHECK(p != MAP_FAILED, "%s: mmap of /dev/accmap: %s", what,
				  strerror(errno))) {
				at = first_diff(p, v->ref, v->size);
				ok &= CHECK(at == v->size,
					    "%s: /dev/accmap mapping differs at byte %zu of %zu",
					    what, at, v->size);
				munmap(p, len);
			} else {
				ok = false;
			}
		} else {
			ok = false;
		}
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, b->fd, 0);
	if (!CHECK(p != MAP_FAILED, "%s: mmap of the dma-buf: %s", what, strerror(errno)))
		return false;
	ok &= CHECK_OK(xioctl(b->fd, DMA_BUF_IOCTL_SYNC, &sync));
	at = first_diff(p, v->ref, v->size);
	ok &= CHECK(at == v->size, "%s: dma-buf mapping differs at byte %zu of %zu", what, at,
		    v->size);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	ok &= CHECK_OK(xioctl(b->fd, DMA_BUF_IOCTL_SYNC, &sync));
	munmap(p, len);
	return ok;
}

/*
 * Fills buffer b with garbage through its dma-buf mapping (within CPU
 * access, so that the device sees it): every byte differs from the
 * reference's, by a pattern that changes with @round.  A frame that then
 * equals the reference was written whole by the device, this time.
 */
static bool prefill(const struct abuf *b, const struct vv *v, unsigned int round,
		    const char *what)
{
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE };
	size_t len = buf_size(v);
	unsigned char *p;
	bool ok;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (!CHECK(p != MAP_FAILED, "%s: mmap of the dma-buf to pre-fill it: %s", what,
		   strerror(errno)))
		return false;
	ok = CHECK_OK(xioctl(b->fd, DMA_BUF_IOCTL_SYNC, &sync));
	for (size_t i = 0; i < v->size; i++)
		p[i] = v->ref[i] ^ (unsigned char)(0x80 | ((round + i) & 0x7f));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	ok &= CHECK_OK(xioctl(b->fd, DMA_BUF_IOCTL_SYNC, &sync));
	munmap(p, len);
	return ok;
}

static int qbuf_dmabuf(int vfd, uint32_t index, int fd, size_t len)
{
	struct v4l2_buffer b = {
		.index = index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_DMABUF, .length = (uint32_t)len,
	};

	b.m.fd = fd;
	return xioctl(vfd, VIDIOC_QBUF, &b);
}

/*
 * Streams NFRAMES frames through NBUFS accmap buffers (already allocated
 * in bufs) on v, each checked against the reference.  While vivid holds
 * the buffers INFO shows how: videobuf2-vmalloc vmaps a dma-buf when it is
 * queued (vmaps), videobuf2-dma-contig maps its attachment for the device
 * (attachments; it vmaps only while it fills the buffer).  Both counters
 * are 0 after REQBUFS 0.
 */
static void stream_and_check(int dev, enum vv_inst inst, struct vv *v, struct abuf *bufs,
			     const char *what)
{
	long att, vm;
	char name[96];
	int ret;

	ret = vv_reqbufs(v->fd, V4L2_MEMORY_DMABUF, NBUFS);
	if (!CHECK(ret == 0, "%s: REQBUFS %d DMABUF: %s", what, NBUFS, strerror(-ret)))
		return;
	for (uint32_t i = 0; i < NBUFS; i++) {
		if (!prefill(&bufs[i], v, i, what))
			goto out;
		ret = qbuf_dmabuf(v->fd, i, bufs[i].fd, buf_size(v));
		if (!CHECK(ret == 0, "%s: QBUF of accmap buffer %u: %s", what, i, strerror(-ret)))
			goto out;
	}
	if (!CHECK_OK(vv_stream(v->fd, true)))
		goto out;
	for (int n = 0; n < NFRAMES; n++) {
		uint32_t used = 0;
		int idx = vv_dqbuf(v->fd, V4L2_MEMORY_DMABUF, &used);

		if (idx < 0 || !CHECK(idx < NBUFS && used == v->size, "%s: buffer %d, %u bytes",
				      what, idx, used))
			break;
		snprintf(name, sizeof(name), "%s, frame %d (buffer %d)", what, n, idx);
		frame_matches(dev, &bufs[idx], v, name);
		/* vivid still holds the others. */
		for (int i = 0; i < NBUFS; i++) {
			if (i == idx || !importers_of(dev, bufs[i].id, &att, &vm))
				continue;
			if (inst == VV_VMALLOC)
				CHECK(vm >= 1, "%s: INFO vmaps %ld on buffer %d queued to vivid",
				      what, vm, i);
			else
				CHECK(att >= 1,
				      "%s: INFO attachments %ld on buffer %d queued to vivid",
				      what, att, i);
		}
		if (!prefill(&bufs[idx], v, NBUFS + (unsigned int)n, what))
			break;
		ret = qbuf_dmabuf(v->fd, (uint32_t)idx, bufs[idx].fd, buf_size(v));
		if (!CHECK(ret == 0, "%s: QBUF again: %s", what, strerror(-ret)))
			break;
	}
	CHECK_OK(vv_stream(v->fd, false));
out:
	CHECK_OK(vv_reqbufs(v->fd, V4L2_MEMORY_DMABUF, 0));
	for (int i = 0; i < NBUFS; i++) {
		if (importers_of(dev, bufs[i].id, &att, &vm))
			CHECK(att == 0 && vm == 0,
			      "%s: INFO attachments %ld, vmaps %ld on buffer %d after REQBUFS 0",
			      what, att, vm, i);
	}
}

/* NBUFS buffers of one kind on instance inst, streamed and checked. */
static void run_kind(enum vv_inst inst, uint32_t mask, uint32_t flags, const char *what)
{
	struct abuf bufs[NBUFS];
	int n = 0, dev, ret = 0;
	struct vv v;

	if (!vv_setup(inst, &v))
		goto out;
	dev = am_open();
	if (dev < 0)
		goto out;
	for (n = 0; n < NBUFS; n++) {
		ret = abuf_alloc(dev, buf_size(&v), mask, flags, &bufs[n]);
		if (!CHECK(ret == 0, "%s: allocation of %zu bytes: %s", what, buf_size(&v),
			   strerror(-ret)))
			break;
	}
	if (n == NBUFS)
		stream_and_check(dev, inst, &v, bufs, what);
	while (n-- > 0) {
		close(bufs[n].fd);
		CHECK_OK(am_free(dev, bufs[n].id));
	}
	close(dev);
out:
	vv_teardown(&v);
}

static void test_reference_deterministic(void)
{
	for (int inst = VV_VMALLOC; inst <= VV_CONTIG; inst++) {
		unsigned char *again;
		struct vv v;
		size_t at;

		if (!vv_setup(inst, &v)) {
			vv_teardown(&v);
			continue;
		}
		again = malloc(v.size);
		if (CHECK(again, "malloc") && vv_capture_mmap(&v, again)) {
			at = first_diff(again, v.ref, v.size);
			CHECK(at == v.size, "%s: two captures differ at byte %zu of %zu",
			      v.path, at, v.size);
			/* Colour bars: not one value everywhere. */
			CHECK(memchr(v.ref, v.ref[0] ^ 0xff, v.size) ||
			      first_diff(v.ref, v.ref + 1, v.size - 1) < v.size - 1,
			      "%s: the reference frame is one flat value", v.path);
		}
		free(again);
		vv_teardown(&v);
	}
}

static void test_vmalloc_cached(void)
{
	run_kind(VV_VMALLOC, ACCMAP_HEAP_MASK_SYSTEM, 0, "vmalloc, system cached");
}

static void test_vmalloc_wc(void)
{
	run_kind(VV_VMALLOC, ACCMAP_HEAP_MASK_SYSTEM, WC, "vmalloc, system write-combined");
}

static void test_vmalloc_uncached(void)
{
	run_kind(VV_VMALLOC, ACCMAP_HEAP_MASK_SYSTEM, UC, "vmalloc, system uncached");
}

static void test_vmalloc_contiguous(void)
{
	run_kind(VV_VMALLOC, ACCMAP_HEAP_MASK_SYSTEM, CONTIG, "vmalloc, contiguous");
}

/*
 * Each carveout the guest has (QUERY_HEAP), on instance inst: allocated
 * cached if the carveout allows it, else write-combined.
 */
static void carveouts_on(enum vv_inst inst)
{
	const char *env = getenv("ACCMAP_CARVEOUTS");
	unsigned int found = 0;
	int dev = am_open();

	if (dev < 0)
		return;
	for (uint32_t heap = ACCMAP_HEAP_CARVEOUT_FIRST;
	     heap < ACCMAP_HEAP_CARVEOUT_FIRST + ACCMAP_HEAP_CARVEOUT_MAX; heap++) {
		struct accmap_heap_info info;
		struct abuf probe;
		uint32_t flags = 0;
		char what[96];

		if (am_query_heap(dev, heap, &info) == -ENODEV)
			continue;
		found++;
		/* Which attribute the carveout takes: a probe of one page. */
		if (abuf_alloc(dev, page_size(), 1U << heap, 0, &probe)) {
			flags = WC;
		} else {
			close(probe.fd);
			am_free(dev, probe.id);
		}
		snprintf(what, sizeof(what), "%s, carveout '%.31s'%s",
			 inst == VV_VMALLOC ? "vmalloc" : "dma-contig", info.name,
			 flags ? " write-combined" : "");
		run_kind(inst, 1U << heap, flags, what);
	}
	/* The VM run always configures carveouts and says so (ACCMAP_CARVEOUTS). */
	CHECK(found > 0, "no carveout heap (ACCMAP_CARVEOUTS=%s)", env ? env : "(unset)");
	close(dev);
}

static void test_vmalloc_carveouts(void)
{
	carveouts_on(VV_VMALLOC);
}

/*
 * Physically contiguous runs of a buffer of this process, as debugfs
 * allocations counts them from its page frames (user space sees no PFN of
 * an accmap mapping: pagemap shows PFN mappings as holes); 0 if unknown.
 */
static unsigned long long buffer_runs(uint32_t id)
{
	unsigned long long runs = 0;
	struct dbg_table t;
	char idstr[16];
	long r = -1;

	if (!dbg_read("allocations", &t))
		return 0;
	snprintf(idstr, sizeof(idstr), "%u", id);
	for (size_t i = 0; i < t.nrows && r < 0; i++)
		if (!strcmp(dbg_cell(&t, i, "id"), idstr) &&
		    (pid_t)dbg_num(&t, i, "pid") == getpid())
			r = (long)i;
	if (CHECK(r >= 0, "debugfs allocations: no row for id %u", id))
		runs = dbg_num(&t, (size_t)r, "runs");
	dbg_free(&t);
	return runs;
}

/*
 * The dma-contig instance refuses a system-heap buffer that is not one
 * block: VIDIOC_QBUF fails with EFAULT (vb2_dc_map_dmabuf: "contiguous
 * chunk is too small").  The system heap builds a buffer from blocks of a
 * few orders, so one may be a single run by chance: debugfs allocations'
 * runs column tells.  The size is the frame rounded up to 64 KiB, plus
 * 64 KiB, plus one page: 64 KiB blocks alone come from splitting one
 * larger free block and often lie side by side (a 16 KiB-page kernel's
 * frame is a multiple of 64 KiB, and every try there was one run), while
 * the last page comes from another free list.  Of up to MAX_SCATTER_TRIES
 * such buffers, one in several runs must be refused with EFAULT; one that
 * is a single run by chance must be taken, and capture right.
 */
#define MAX_SCATTER_TRIES	8
#define SCATTER_BLOCK		(64UL << 10)

static void test_contig_refuses_scattered(void)
{
	struct abuf bufs[MAX_SCATTER_TRIES];
	int n = 0, dev, ret = 0, refused = 0, lucky = 0;
	unsigned long long runs;
	size_t len;
	struct vv v;

	if (!vv_setup(VV_CONTIG, &v))
		goto out;
	len = (buf_size(&v) + SCATTER_BLOCK - 1) / SCATTER_BLOCK * SCATTER_BLOCK +
	      SCATTER_BLOCK + page_size();
	dev = am_open();
	if (dev < 0)
		goto out;
	for (n = 0; n < MAX_SCATTER_TRIES && !refused; n++) {
		ret = abuf_alloc(dev, len, ACCMAP_HEAP_MASK_SYSTEM, 0, &bufs[n]);
		if (!CHECK(ret == 0, "system buffer of %zu bytes: %s", len, strerror(-ret)))
			break;
		runs = buffer_runs(bufs[n].id);
		if (!CHECK(runs >= 1, "debugfs allocations: runs of id %u unknown",
			   bufs[n].id)) {
			n++;
			break;
		}
		/* vivid sets up 2 buffers at least; the first is queued. */
		ret = vv_reqbufs(v.fd, V4L2_MEMORY_DMABUF, 2);
		if (!CHECK(ret == 0, "REQBUFS 2 DMABUF: %s", strerror(-ret))) {
			n++;
			break;
		}
		ret = qbuf_dmabuf(v.fd, 0, bufs[n].fd, len);
		if (runs > 1) {
			long att, vm;

			refused++;
			CHECK(ret == -EFAULT,
			      "QBUF of a system buffer in %llu runs on dma-contig: %s, not EFAULT",
			      runs, ret ? strerror(-ret) : "accepted");
			if (importers_of(dev, bufs[n].id, &att, &vm))
				CHECK(att == 0 && vm == 0,
				      "after the refusal: attachments %ld, vmaps %ld", att, vm);
		} else if (CHECK(ret == 0, "QBUF of a system buffer in one run on dma-contig: %s",
				 strerror(-ret))) {
			uint32_t used = 0;
			int idx;

			lucky++;
			if (CHECK_OK(vv_stream(v.fd, true))) {
				idx = vv_dqbuf(v.fd, V4L2_MEMORY_DMABUF, &used);
				if (idx == 0 && CHECK(used == v.size, "%u bytes", used))
					frame_matches(dev, &bufs[n], &v, "one-run buffer");
				CHECK_OK(vv_stream(v.fd, false));
			}
		}
		CHECK_OK(vv_reqbufs(v.fd, V4L2_MEMORY_DMABUF, 0));
	}
	if (lucky)
		tap_diag("%d system buffer(s) of %zu bytes were one run by chance and taken",
			 lucky, len);
	CHECK(refused == 1, "%d system buffers of %zu bytes, none in several runs", n, len);
	while (n-- > 0) {
		close(bufs[n].fd);
		am_free(dev, bufs[n].id);
	}
	close(dev);
out:
	vv_teardown(&v);
}

static void test_contig_contiguous(void)
{
	run_kind(VV_CONTIG, ACCMAP_HEAP_MASK_SYSTEM, CONTIG, "dma-contig, contiguous");
}

static void test_contig_carveouts(void)
{
	carveouts_on(VV_CONTIG);
}

/* Heap 0's used bytes; ~0 if QUERY_HEAP fails (checked). */
static uint64_t system_used(void)
{
	struct accmap_heap_info info;
	int dev = am_open(), ret;

	if (dev < 0)
		return ~0ULL;
	ret = am_query_heap(dev, ACCMAP_HEAP_SYSTEM, &info);
	close(dev);
	if (!CHECK(ret == 0, "QUERY_HEAP system: %s", strerror(-ret)))
		return ~0ULL;
	return info.used;
}

/*
 * Lifetime: the ids freed and the accmap client closed while vivid
 * streams: frames keep arriving intact (seen through the dma-buf's
 * mapping), the memory stays while vivid holds the buffers, even once
 * this process has closed its dma-buf fds, and the system heap's used
 * bytes are back to their start once vivid lets go (STREAMOFF, REQBUFS 0,
 * close).
 */
static void test_lifetime_client_closed(void)
{
	uint64_t start, now;
	struct abuf bufs[NBUFS];
	int n = 0, dev, ret;
	bool streaming = false;
	struct vv v;

	if (!vv_setup(VV_VMALLOC, &v))
		goto out;
	start = system_used();
	if (start == ~0ULL)
		goto out;
	dev = am_open();
	if (dev < 0)
		goto out;
	for (n = 0; n < NBUFS; n++) {
		ret = abuf_alloc(dev, buf_size(&v), ACCMAP_HEAP_MASK_SYSTEM, 0, &bufs[n]);
		if (!CHECK(ret == 0, "system buffer: %s", strerror(-ret)))
			break;
	}
	if (n < NBUFS || !CHECK_OK(vv_reqbufs(v.fd, V4L2_MEMORY_DMABUF, NBUFS)))
		goto free_ids;
	for (int i = 0; i < NBUFS; i++)
		if (!prefill(&bufs[i], &v, (unsigned int)i, "client closed") ||
		    !CHECK_OK(qbuf_dmabuf(v.fd, (uint32_t)i, bufs[i].fd, buf_size(&v))))
			goto free_ids;
	streaming = CHECK_OK(vv_stream(v.fd, true));
free_ids:
	while (n-- > 0)
		CHECK_OK(am_free(dev, bufs[n].id));
	close(dev);
	if (!streaming)
		goto release;
	now = system_used();
	CHECK(now != ~0ULL && now >= start + NBUFS * buf_size(&v),
	      "system heap used %llu with the client closed, %llu at the start: vivid's buffers gone",
	      (unsigned long long)now, (unsigned long long)start);
	for (int f = 0; f < NFRAMES; f++) {
		uint32_t used = 0;
		int idx = vv_dqbuf(v.fd, V4L2_MEMORY_DMABUF, &used);
		char name[64];

		if (idx < 0 || !CHECK(idx < NBUFS && used == v.size, "buffer %d, %u bytes", idx,
				      used))
			break;
		snprintf(name, sizeof(name), "client closed, frame %d (buffer %d)", f, idx);
		frame_matches(-1, &bufs[idx], &v, name);
		if (!prefill(&bufs[idx], &v, NBUFS + (unsigned int)f, name) ||
		    !CHECK_OK(qbuf_dmabuf(v.fd, (uint32_t)idx, bufs[idx].fd, buf_size(&v))))
			break;
	}
	/* vivid alone holds them now. */
	for (int i = 0; i < NBUFS; i++) {
		close(bufs[i].fd);
		bufs[i].fd = -1;
	}
	now = system_used();
	CHECK(now != ~0ULL && now >= start + NBUFS * buf_size(&v),
	      "system heap used %llu with only vivid holding the buffers, %llu at the start",
	      (unsigned long long)now, (unsigned long long)start);
release:
	CHECK_OK(vv_stream(v.fd, false));
	CHECK_OK(vv_reqbufs(v.fd, V4L2_MEMORY_DMABUF, 0));
	for (int i = 0; i < NBUFS && !streaming; i++)
		if (bufs[i].fd >= 0)
			close(bufs[i].fd);
	close(v.fd);
	v.fd = -1;
	/* The last reference goes with the file: give deferred work a moment. */
	for (int t = 0; t < 200; t++) {
		now = system_used();
		if (now == start || now == ~0ULL)
			break;
		usleep(10000);
	}
	CHECK(now == start, "system heap used %llu after vivid let go, %llu at the start",
	      (unsigned long long)now, (unsigned long long)start);
out:
	vv_teardown(&v);
}

static const struct tap_test tests[] = {
	{ "reference_deterministic", test_reference_deterministic },
	{ "vmalloc_system_cached", test_vmalloc_cached },
	{ "vmalloc_system_wc", test_vmalloc_wc },
	{ "vmalloc_system_uncached", test_vmalloc_uncached },
	{ "vmalloc_contiguous", test_vmalloc_contiguous },
	{ "vmalloc_carveouts", test_vmalloc_carveouts },
	{ "dma_contig_refuses_scattered_efault", test_contig_refuses_scattered },
	{ "dma_contig_contiguous", test_contig_contiguous },
	{ "dma_contig_carveouts", test_contig_carveouts },
	{ "lifetime_client_closed", test_lifetime_client_closed },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

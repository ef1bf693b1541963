// SPDX-License-Identifier: GPL-2.0
/*
 * accmap_criu: a process tree that uses accmap, checkpointed and restored
 * with CRIU and the accmap plugin (tools/criu).
 *
 * The tree is this program run again as "--app DIR": a parent and a child
 * that share a dma-buf over a socket, with buffers in the system heap, a
 * carveout (where the guest has one), FROM_VA memory, a read-only import,
 * a tag with a label, mappings of /dev/accmap, an SVM session whose GPU
 * job reads the parent's malloc'ed memory, and a counter loop writing into
 * a mapped buffer.  The tests dump it (criu dump), check it is gone,
 * restore it (criu restore, also after reloading the module), and have it
 * check itself: it kept what it had before the dump in its own memory,
 * which CRIU brings back, and writes one result line per check to a file.
 * The parent opens one more /dev/accmap file before it forks, which both
 * processes use (a fork-shared client): a buffer of the parent's and a
 * FROM_VA buffer of the child's memory are in it.  One test runs the tree
 * as the init of its own pid namespace and restores it into a new one,
 * twice (the restored tree dumped again); another dumps it twice into one
 * directory (--leave-running first).
 * Other tests check that what cannot be checkpointed fails the dump and
 * leaves the tree running, and that a damaged image (also a FROM_VA record
 * naming a process that is not in the tree) fails the restore and leaks
 * nothing.
 *
 * Needs ACCMAP_CRIU (the criu binary; the VM harness sets it where criu
 * works on the guest's kernel) and the plugin in criu's plugin directory.
 */

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <linux/accmap.h>

#include "accmap_util.h"
#include "svm_util.h"
#include "tap.h"
#include "vgem_util.h"

#define LABEL		"criu-test"
#define TAG		7
#define APP_TIMEOUT_MS	30000
#define VADD_N		1024

/* What the app makes; the unsupported variants add one thing each. */
enum app_extra {
	EXTRA_NONE,
	EXTRA_VGEM,		/* holds a dma-buf of vgem */
	EXTRA_DMABUF_MAP,	/* maps an accmap dma-buf file */
	EXTRA_MMIO,		/* a replay session on a register window */
};

/* ---------------------------------------------------------------- app */

/* Says in the app's log which step failed; returns the exit status. */
static int app_fail(int line, const char *what)
{
	fprintf(stderr, "accmap_criu app: line %d: %s failed (errno %d: %s)\n",
		line, what, errno, strerror(errno));
	return 1;
}

static sig_atomic_t app_go;

/* The handler sets it, the loops read it: atomics, not volatile. */
static bool app_going(void)
{
	return __atomic_load_n(&app_go, __ATOMIC_RELAXED);
}

static FILE *app_out;
static unsigned int app_bad;

static void app_on_usr1(int sig)
{
	(void)sig;
	__atomic_store_n(&app_go, 1, __ATOMIC_RELAXED);
}

__printf(2, 3)
static void app_result(bool ok, const char *fmt, ...)
{
	va_list ap;

	fprintf(app_out, "%s ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vfprintf(app_out, fmt, ap);
	va_end(ap);
	fputc('\n', app_out);
	fflush(app_out);
	if (!ok)
		app_bad++;
}

/* One buffer of the app, and what it knew about it before the dump. */
struct app_buf {
	const char *name;
	uint32_t id;
	uint64_t size;
	unsigned int seed;	/* its bytes are fill_pattern(seed); 0: none */
	uint8_t *map;		/* its /dev/accmap mapping, or NULL */
	struct accmap_info info;
};

static int app_map_offset(int dev, uint32_t id, uint64_t *off)
{
	struct accmap_map_offset arg = { .id = id };
	int ret = raw_ioctl(dev, ACCMAP_IOC_MAP_OFFSET, &arg);

	*off = arg.offset;
	return ret;
}

static void *app_map(int dev, uint32_t id, uint64_t size, int prot)
{
	uint64_t off;
	void *p;

	if (app_map_offset(dev, id, &off))
		return NULL;
	p = mmap(NULL, size, prot, MAP_SHARED, dev, off);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * A buffer of @size from the heaps of @mask, its bytes a pattern (carveouts
 * without struct pages give only write-combined or uncached memory).
 */
static bool app_alloc(int dev, struct app_buf *b, uint32_t mask,
		      uint32_t flags, unsigned int seed)
{
	struct accmap_alloc a = { .heap_mask = mask, .flags = flags, .tag = TAG };
	uint8_t *tmp;
	int ret;

	if (am_create(dev, b->size, &b->id))
		return false;
	a.id = b->id;
	if (raw_ioctl(dev, ACCMAP_IOC_ALLOC, &a))
		return false;
	b->seed = seed;
	tmp = malloc(b->size);
	if (!tmp)
		return false;
	fill_pattern(tmp, b->size, 0, seed);
	ret = am_write(dev, b->id, 0, tmp, b->size);
	free(tmp);
	return !ret;
}

/*
 * A FROM_VA buffer of @b->size bytes of new anonymous memory holding
 * pattern @seed, writable, with tag @tag: the memory, or NULL.
 */
static uint8_t *app_from_va(int dev, struct app_buf *b, unsigned int seed, uint16_t tag)
{
	struct accmap_from_va fv = { .flags = ACCMAP_FROM_VA_WRITE, .tag = tag };
	uint8_t *mem = map_anon(b->size, PROT_READ | PROT_WRITE);

	if (!mem)
		return NULL;
	fill_pattern(mem, b->size, 0, seed);
	b->seed = seed;
	fv.addr = (uintptr_t)mem;
	fv.size = b->size;
	if (raw_ioctl(dev, ACCMAP_IOC_FROM_VA, &fv)) {
		munmap(mem, b->size);
		return NULL;
	}
	b->id = fv.id;
	return mem;
}

/* The buffer's bytes (READ) and its mapping still hold its pattern. */
static bool app_bytes_ok(int dev, const struct app_buf *b)
{
	uint8_t *tmp = malloc(b->size);
	bool ok;

	if (!tmp)
		return false;
	ok = !am_read(dev, b->id, 0, tmp, b->size) &&
	     find_pattern_mismatch(tmp, b->size, 0, b->seed) == b->size;
	if (ok && b->map)
		ok = find_pattern_mismatch(b->map, b->size, 0, b->seed) == b->size;
	free(tmp);
	return ok;
}

static bool app_info_same(int dev, const struct app_buf *b)
{
	struct accmap_info now;

	if (am_info(dev, b->id, &now))
		return false;
	return now.size == b->info.size && now.heap == b->info.heap &&
	       now.flags == b->info.flags && now.tag == b->info.tag &&
	       now.state == b->info.state &&
	       now.handle_refs == b->info.handle_refs &&
	       now.exports == b->info.exports && now.maps == b->info.maps;
}

static bool app_label_ok(void)
{
	char *text = read_text("/sys/kernel/debug/accmap/tags", NULL);
	char want[64];
	bool ok;

	snprintf(want, sizeof(want), "\n%u\t%s\t", TAG, LABEL);
	ok = text && strstr(text, want);
	free(text);
	return ok;
}

static bool app_wait_file(const char *path, unsigned int ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (unsigned int i = 0; i < ms / 10; i++) {
		if (!access(path, F_OK))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static void app_touch(const char *dir, const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/*
 * The child: its own client, with the parent's shared buffer (read-write)
 * and its system buffer (read-only) by dma-bufs sent over a socket, both
 * mapped; and in the client it shares with the parent (@shdev, opened
 * before the fork), a FROM_VA buffer of its own memory.
 */
static int app_child(const char *dir, int sock, int shdev, uint32_t fs_id)
{
	struct app_buf b = { .name = "shared" };
	struct app_buf ro = { .name = "read-only import" };
	struct app_buf fva = { .name = "child's FROM_VA", .size = 16 << 10 };
	struct app_buf fs = { .name = "fork-shared", .id = fs_id, .seed = 18 };
	int dev, dmabuf, ro_fd;
	char path[256], r;
	uint8_t *tmp, *vamem;
	pid_t ns_pid = getpid();
	FILE *f;

	dev = open("/dev/accmap", O_RDWR | O_CLOEXEC);
	dmabuf = am_recv_fd(sock);
	ro_fd = am_recv_fd(sock);
	if (dev < 0 || dmabuf < 0 || ro_fd < 0)
		return app_fail(__LINE__, "receiving the dma-bufs");
	if (am_from_fd(dev, dmabuf, &b.id) || am_info(dev, b.id, &b.info) ||
	    am_from_fd(dev, ro_fd, &ro.id) || am_info(dev, ro.id, &ro.info))
		return app_fail(__LINE__, "FROM_FD");
	b.size = b.info.size;
	ro.size = ro.info.size;
	ro.seed = 11;
	/* Its own memory, pinned through the client it shares. */
	vamem = app_from_va(shdev, &fva, 19, 0);
	if (!vamem)
		return app_fail(__LINE__, "FROM_VA in the fork-shared client");
	b.map = app_map(dev, b.id, b.size, PROT_READ | PROT_WRITE);
	ro.map = app_map(dev, ro.id, ro.size, PROT_READ);
	if (!b.map || !ro.map)
		return app_fail(__LINE__, "mapping through /dev/accmap");
	/* The child writes the shared buffer through its mapping. */
	fill_pattern(b.map, b.size, 0, 41);
	b.seed = 41;
	/* Mapped, then told the parent is done too: the counts are final. */
	if (am_send_byte(sock, 'r') || am_recv_byte(sock, &r) ||
	    am_info(dev, b.id, &b.info) || am_info(dev, ro.id, &ro.info) ||
	    am_info(shdev, fva.id, &fva.info) || am_info(shdev, fs.id, &fs.info) ||
	    am_send_byte(sock, 's'))
		return app_fail(__LINE__, "the set-up handshake");
	fs.size = fs.info.size;

	while (!app_going())
		pause();

	snprintf(path, sizeof(path), "%s/child.result", dir);
	app_out = fopen(path, "w");
	if (!app_out)
		return 1;
	app_result(app_info_same(dev, &b),
		   "child: shared id %u has its size, heap, flags, tag, state and counts",
		   b.id);
	app_result(app_bytes_ok(dev, &b),
		   "child: the shared buffer's bytes, READ and mapped, are the dumped ones");
	app_result(app_info_same(dev, &ro) && app_bytes_ok(dev, &ro),
		   "child: read-only import (id %u): same state and bytes", ro.id);
	app_result(am_write(dev, ro.id, 0, "x", 1) == -EACCES,
		   "child: read-only import: WRITE still refused");
	app_result(mprotect(ro.map, ro.size, PROT_READ | PROT_WRITE) == -1 &&
		   errno == EACCES,
		   "child: read-only mapping: mprotect to write still refused");
	/* A new pattern, for the parent to read: the buffer is still one. */
	fill_pattern(b.map, b.size, 0, 42);
	tmp = malloc(b.size);
	app_result(tmp && !am_read(dev, b.id, 0, tmp, b.size) &&
		   find_pattern_mismatch(tmp, b.size, 0, 42) == b.size,
		   "child: a write through the mapping is what READ sees");
	free(tmp);
	app_result(fcntl(dmabuf, F_GETFD) >= 0 && fcntl(ro_fd, F_GETFD) >= 0,
		   "child: its dma-buf fds are back");
	app_result(getpid() == ns_pid, "child: its pid is still %d (now %d)",
		   (int)ns_pid, (int)getpid());
	app_result(app_info_same(shdev, &fs) && app_bytes_ok(shdev, &fs),
		   "child: fork-shared buffer (id %u): same state and bytes", fs.id);
	app_result(app_info_same(shdev, &fva) && app_bytes_ok(shdev, &fva),
		   "child: its FROM_VA (id %u) in the fork-shared client: same state, its bytes the memory's",
		   fva.id);
	vamem[200] ^= 0xff;
	tmp = malloc(fva.size);
	app_result(tmp && !am_read(shdev, fva.id, 0, tmp, fva.size) &&
		   tmp[200] == vamem[200],
		   "child: a CPU write to its FROM_VA memory is what READ sees (pinned again)");
	free(tmp);
	/* The id the parent made after the restore: the client is one. */
	snprintf(path, sizeof(path), "%s/shared-id", dir);
	f = fopen(path, "r");
	{
		unsigned int id = 0;
		struct accmap_info info;

		app_result(f && fscanf(f, "%u", &id) == 1 && !am_info(shdev, id, &info),
			   "child: the id %u the parent made in the fork-shared client is there",
			   id);
	}
	if (f)
		fclose(f);
	fclose(app_out);
	app_touch(dir, "child.done");
	return app_bad ? 1 : 0;
}

/* Carveout heap to use, or -1: the first one with room for @size. */
static int app_carveout(int dev, uint64_t size)
{
	for (uint32_t h = ACCMAP_HEAP_CARVEOUT_FIRST; h < ACCMAP_HEAP_CARVEOUT_MAX; h++) {
		struct accmap_heap_info info;

		if (!am_query_heap(dev, h, &info) && info.largest_free >= size)
			return h;
	}
	return -1;
}

static int app_main(const char *dir, enum app_extra extra)
{
	struct app_buf bufs[] = {
		{ .name = "system", .size = 1 << 20 },
		{ .name = "writecombine", .size = 64 << 10 },
		{ .name = "carveout", .size = 256 << 10 },
		{ .name = "shared", .size = 128 << 10 },
		{ .name = "counter", .size = 4096 },
	};
	enum { B_SYS, B_WC, B_CO, B_SHARED, B_CNT, NR_BUFS };
	struct app_buf ro = { .name = "read-only import" };
	struct app_buf va = { .name = "FROM_VA", .size = 64 << 10 };
	struct app_buf empty = { .name = "empty", .size = 8192 };
	struct app_buf fs = { .name = "fork-shared", .size = 64 << 10 };
	struct svm t = { .dev = -1 };
	int32_t *a, *b, *c, expect_sum = 0;
	struct accmap_sim_job job;
	uint64_t *counter;
	uint64_t local = 0, at_go;
	bool counter_ok = true;
	int dev, sv[2], ro_fd, shared_fd, co, shdev;
	pid_t child, ns_pid = getpid();
	char path[256];
	uint8_t *vamem, *tmp;
	FILE *f;

	signal(SIGUSR1, app_on_usr1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return app_fail(__LINE__, "socketpair");
	/* The fork-shared client, with a buffer of the parent's. */
	shdev = open("/dev/accmap", O_RDWR | O_CLOEXEC);
	if (shdev < 0 || !app_alloc(shdev, &fs, ACCMAP_HEAP_MASK_SYSTEM, 0, 18))
		return app_fail(__LINE__, "the fork-shared client");
	child = fork();
	if (child < 0)
		return app_fail(__LINE__, "fork");
	if (!child) {
		close(sv[0]);
		_exit(app_child(dir, sv[1], shdev, fs.id));
	}
	close(sv[1]);

	dev = open("/dev/accmap", O_RDWR | O_CLOEXEC);
	if (dev < 0 || am_set_label(dev, TAG, LABEL))
		return app_fail(__LINE__, "opening /dev/accmap and naming the tag");
	if (!app_alloc(dev, &bufs[B_SYS], ACCMAP_HEAP_MASK_SYSTEM, 0, 11) ||
	    !app_alloc(dev, &bufs[B_WC], ACCMAP_HEAP_MASK_SYSTEM,
		       ACCMAP_ALLOC_WRITECOMBINE, 12) ||
	    !app_alloc(dev, &bufs[B_SHARED], ACCMAP_HEAP_MASK_SYSTEM, 0, 14) ||
	    !app_alloc(dev, &bufs[B_CNT], ACCMAP_HEAP_MASK_SYSTEM, 0, 15))
		return app_fail(__LINE__, "allocating the system buffers");
	/* Every guest that runs criu has a carveout: none is a failure. */
	co = app_carveout(dev, bufs[B_CO].size);
	if (co < 0 ||
	    !app_alloc(dev, &bufs[B_CO], 1u << co, ACCMAP_ALLOC_WRITECOMBINE, 13))
		return app_fail(__LINE__, "allocating the carveout buffer");
	if (am_create(dev, empty.size, &empty.id))
		return app_fail(__LINE__, "CREATE");

	/* FROM_VA: the process's own memory, written by both sides. */
	vamem = app_from_va(dev, &va, 16, TAG);
	if (!vamem)
		return app_fail(__LINE__, "FROM_VA");

	/* A read-only import of the system buffer, its dma-buf kept open. */
	ro_fd = am_get_fd(dev, bufs[B_SYS].id, O_RDONLY | O_CLOEXEC);
	if (ro_fd < 0 || am_from_fd(dev, ro_fd, &ro.id))
		return app_fail(__LINE__, "the read-only import");
	ro.size = bufs[B_SYS].size;
	ro.seed = bufs[B_SYS].seed;

	/*
	 * The shared buffer goes to the child, which maps it and writes it,
	 * and the system buffer, read-only.
	 */
	shared_fd = am_get_fd(dev, bufs[B_SHARED].id, O_RDWR | O_CLOEXEC);
	if (shared_fd < 0 || am_send_fd(sv[0], shared_fd) || am_send_fd(sv[0], ro_fd))
		return app_fail(__LINE__, "sending the dma-bufs");
	close(shared_fd);
	{
		char r;

		if (am_recv_byte(sv[0], &r))
			return app_fail(__LINE__, "the child's handshake");
	}
	bufs[B_SHARED].seed = 41;

	for (int i = 0; i < NR_BUFS; i++) {
		if (!bufs[i].size)
			continue;
		bufs[i].map = app_map(dev, bufs[i].id, bufs[i].size,
				      PROT_READ | PROT_WRITE);
		if (!bufs[i].map)
			return app_fail(__LINE__, "mapping a buffer");
	}
	ro.map = app_map(dev, ro.id, ro.size, PROT_READ);
	if (!ro.map)
		return app_fail(__LINE__, "mapping the read-only import");
	counter = (uint64_t *)bufs[B_CNT].map;
	__atomic_store_n(counter, 0, __ATOMIC_RELAXED);
	bufs[B_CNT].seed = 0;

	/* The GPU job on malloc'ed memory, through the SVM session. */
	if (!svm_open(&t))
		return app_fail(__LINE__, "the SVM session");
	a = malloc(VADD_N * 4);
	b = malloc(VADD_N * 4);
	c = calloc(VADD_N, 4);
	if (!a || !b || !c)
		return app_fail(__LINE__, "malloc");
	for (int i = 0; i < VADD_N; i++) {
		a[i] = i * 3;
		b[i] = 1000 - i;
		expect_sum += a[i] + b[i];
	}
	job = vadd(a, b, c, VADD_N);
	if (!job_ok(&t, &job, "VADD before the dump"))
		return app_fail(__LINE__, "the GPU job before the dump");

	switch (extra) {
	case EXTRA_VGEM: {
		/* Only the dma-buf stays: vgem's device file is CRIU's own matter. */
		int vg = vgem_open();
		uint32_t h;

		if (vg < 0 || vgem_foreign_dmabuf(vg, 4096, &h) < 0)
			return app_fail(__LINE__, "a dma-buf of vgem");
		close(vg);
		break;
	}
	case EXTRA_DMABUF_MAP: {
		int fd = am_get_fd(dev, bufs[B_SYS].id, O_RDWR | O_CLOEXEC);
		void *p = fd < 0 ? NULL : map_shared(fd, 4096, PROT_READ, 0);
		FILE *f;

		if (!p)
			return app_fail(__LINE__, "a mapping of an accmap dma-buf");
		/* The test looks for it in CRIU's log. */
		snprintf(path, sizeof(path), "%s/dmabuf-map", dir);
		f = fopen(path, "w");
		if (!f)
			return app_fail(__LINE__, "writing the mapping's address");
		fprintf(f, "%lx\n", (unsigned long)p);
		fclose(f);
		break;
	}
	case EXTRA_MMIO: {
		struct accmap_replay_map m = {
			.length = 4096, .id = bufs[B_CNT].id,
			.flags = ACCMAP_REPLAY_MAP_READ,
		};
		struct accmap_replay_setup s = {
			.maps = (uintptr_t)&m, .nr_maps = 1, .va_bits = 48,
		};
		struct accmap_replay_target_info ti = { 0 };

		/* The first register window: every target after the model. */
		ti.index = 1;
		if (raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &ti) || !ti.formats)
			return app_fail(__LINE__, "finding a register window");
		s.target = ti.index;
		s.format = __builtin_ctz(ti.formats);
		if (raw_ioctl(dev, ACCMAP_IOC_REPLAY_SETUP, &s))
			return app_fail(__LINE__, "a session on the register window");
		break;
	}
	default:
		break;
	}

	/* What the restore must bring back, kept in this process's memory. */
	{
		char r;

		if (am_send_byte(sv[0], 'g') || am_recv_byte(sv[0], &r))
			return app_fail(__LINE__, "the set-up handshake");
	}
	for (int i = 0; i < NR_BUFS; i++)
		if (bufs[i].size && am_info(dev, bufs[i].id, &bufs[i].info))
			return app_fail(__LINE__, "INFO of a buffer");
	if (am_info(dev, ro.id, &ro.info) || am_info(dev, va.id, &va.info) ||
	    am_info(dev, empty.id, &empty.info) || am_info(shdev, fs.id, &fs.info))
		return app_fail(__LINE__, "INFO of the imports");
	/* Our pids as we see them, for the test to compare after a restore. */
	snprintf(path, sizeof(path), "%s/pids", dir);
	f = fopen(path, "w");
	if (!f)
		return app_fail(__LINE__, "writing the pids");
	fprintf(f, "%d %d\n", (int)ns_pid, (int)child);
	fclose(f);
	app_touch(dir, "ready");

	/* The counter loop: the buffer and the register stay in step. */
	while (!app_going()) {
		uint64_t v = __atomic_load_n(counter, __ATOMIC_RELAXED);

		if (v != local)
			counter_ok = false;
		__atomic_store_n(counter, v + 1, __ATOMIC_RELAXED);
		local++;
	}
	at_go = local;

	snprintf(path, sizeof(path), "%s/parent.result", dir);
	app_out = fopen(path, "w");
	if (!app_out)
		return app_fail(__LINE__, "opening the result file");
	app_result(counter_ok && at_go > 0 &&
		   __atomic_load_n(counter, __ATOMIC_RELAXED) == local,
		   "the counter loop went on in step with its mapped buffer (%llu)",
		   (unsigned long long)local);
	for (int i = 0; i < NR_BUFS; i++) {
		if (!bufs[i].size)
			continue;
		app_result(app_info_same(dev, &bufs[i]),
			   "%s (id %u): same size, heap, flags, tag, state and counts",
			   bufs[i].name, bufs[i].id);
		if (bufs[i].seed && i != B_SHARED)
			app_result(app_bytes_ok(dev, &bufs[i]),
				   "%s: every byte, READ and at its mapping %p, as dumped",
				   bufs[i].name, (void *)bufs[i].map);
	}
	app_result(app_info_same(dev, &ro) && app_bytes_ok(dev, &ro),
		   "read-only import (id %u): same state and bytes", ro.id);
	app_result(am_write(dev, ro.id, 0, "x", 1) == -EACCES,
		   "read-only import: WRITE still refused");
	app_result(app_info_same(dev, &empty), "empty id %u: still without memory", empty.id);
	app_result(app_info_same(dev, &va) && app_bytes_ok(dev, &va),
		   "FROM_VA (id %u): same state, its bytes the memory's", va.id);
	vamem[100] ^= 0xff;
	tmp = malloc(va.size);
	app_result(tmp && !am_read(dev, va.id, 0, tmp, va.size) &&
		   tmp[100] == vamem[100],
		   "FROM_VA: a CPU write to the memory is what READ sees (pinned again)");
	free(tmp);
	app_result(app_label_ok(), "tag %u keeps its label \"%s\"", TAG, LABEL);
	app_result(fcntl(ro_fd, F_GETFD) >= 0, "the read-only dma-buf fd is back");
	app_result(getpid() == ns_pid, "its pid is still %d (now %d)", (int)ns_pid,
		   (int)getpid());
	app_result(app_info_same(shdev, &fs) && app_bytes_ok(shdev, &fs),
		   "fork-shared buffer (id %u): same state and bytes", fs.id);
	{
		uint32_t id = 0;

		/* For the child: an id it must see in the client it shares. */
		snprintf(path, sizeof(path), "%s/shared-id", dir);
		f = am_create(shdev, 4096, &id) ? NULL : fopen(path, "w");
		app_result(f, "an id made in the fork-shared client after the restore");
		if (f) {
			fprintf(f, "%u\n", id);
			fclose(f);
		}
	}

	memset(c, 0, VADD_N * 4);
	job = vadd(a, b, c, VADD_N);
	{
		int32_t sum = 0;
		bool ok = job_ok(&t, &job, "VADD after the restore");

		for (int i = 0; i < VADD_N; i++)
			sum += c[i];
		app_result(ok && sum == expect_sum,
			   "the GPU job on the SVM range gives the same result (%d)", sum);
	}

	/* The child's checks last: it exits after them, dropping its ids. */
	kill(child, SIGUSR1);
	snprintf(path, sizeof(path), "%s/child.done", dir);
	app_result(app_wait_file(path, APP_TIMEOUT_MS), "the child checked itself");
	{
		struct app_buf sh = bufs[B_SHARED];

		sh.seed = 42;
		app_result(app_bytes_ok(dev, &sh),
			   "shared buffer: the child's write after the restore is what the parent sees");
	}
	fclose(app_out);
	waitpid(child, NULL, 0);
	app_touch(dir, "parent.done");
	return app_bad ? 1 : 0;
}

/* --------------------------------------------------------- orchestrator */

static const char *criu_bin(void)
{
	const char *c = getenv("ACCMAP_CRIU");

	return c && *c ? c : NULL;
}

/* Runs a shell command line; returns its exit status (-1: not run). */
__printf(1, 2)
static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * @pid: the tree's root, in our pid namespace
 * @pidns: the root is the init of a pid namespace of its own
 */
struct tree {
	char dir[64];
	pid_t pid;
	bool pidns;
};

/* Zombies of trees that failed to restore would keep their pids. */
static void reap_all(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static bool tree_start(struct tree *tr, enum app_extra extra)
{
	char ready[128], arg[16];
	pid_t pid;

	/* Restored trees are reparented to us, so that we can reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	strcpy(tr->dir, "/tmp/accmap-criu-XXXXXX");
	if (!CHECK(mkdtemp(tr->dir), "mkdtemp: %s", strerror(errno)))
		return false;
	snprintf(arg, sizeof(arg), "%d", extra);
	/* clone() as fork() does it, the child the init of a new namespace. */
	pid = tr->pidns ? syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0) :
	      fork();
	if (!CHECK(pid >= 0, "%s: %s", tr->pidns ? "clone(CLONE_NEWPID)" : "fork",
		   strerror(errno)))
		return false;
	if (!pid) {
		char log[128];
		int fd;

		/* Its own session, no terminal, nothing of ours open. */
		setsid();
		snprintf(log, sizeof(log), "%s/app.log", tr->dir);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		fd = open("/dev/null", O_RDONLY);
		dup2(fd, 0);
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		execl("/proc/self/exe", "accmap_criu", "--app", tr->dir, arg,
		      (char *)NULL);
		_exit(127);
	}
	tr->pid = pid;
	snprintf(ready, sizeof(ready), "%s/ready", tr->dir);
	if (!app_wait_file(ready, APP_TIMEOUT_MS)) {
		int st = 0;
		pid_t done = waitpid(pid, &st, WNOHANG);

		CHECK(false, "the tree did not get ready (%s, status %#x); its log:",
		      done == pid ? "it exited" : "still running", st);
		if (done == pid)
			tr->pid = -1;
		run("sed 's/^/# /' %s/app.log", tr->dir);
		return false;
	}
	return true;
}

static void tree_stop(struct tree *tr)
{
	if (tr->pid > 0) {
		kill(-tr->pid, SIGKILL);
		kill(tr->pid, SIGKILL);
		waitpid(tr->pid, NULL, 0);
	}
	run("rm -rf %s", tr->dir);
}

/*
 * What debugfs says is in use: bytes used per heap (not its free bytes,
 * which move with the rest of the system) and the number of buffers.
 */
static bool totals(char *out, size_t len)
{
	char *allocs = read_text("/sys/kernel/debug/accmap/allocations", NULL);
	struct dbg_table heaps;
	size_t lines = 0, n = 0;

	if (!allocs || !dbg_read("heaps", &heaps)) {
		free(allocs);
		return false;
	}
	for (char *p = allocs; *p; p++)
		lines += *p == '\n';
	free(allocs);
	for (size_t i = 0; i < heaps.nrows && n < len; i++)
		n += snprintf(out + n, len - n, "%s used %s; ",
			      dbg_cell(&heaps, i, "name"), dbg_cell(&heaps, i, "used"));
	if (n < len)
		snprintf(out + n, len - n, "allocation lines %zu", lines);
	dbg_free(&heaps);
	return true;
}

/* criu dump of @tr, with criu's options @opts. */
static bool criu_dump_opts(struct tree *tr, bool expect_ok, const char *opts)
{
	int rc = run("%s dump -t %d -D %s -o dump.log -v4 %s >/dev/null 2>&1",
		     criu_bin(), tr->pid, tr->dir, opts);

	if (expect_ok && rc != 0) {
		CHECK(false, "criu dump exited %d", rc);
		run("tail -n 30 %s/dump.log", tr->dir);
	}
	return rc == 0;
}

static bool criu_dump(struct tree *tr, bool expect_ok)
{
	return criu_dump_opts(tr, expect_ok, "");
}

static bool criu_restore(const char *dir, bool expect_ok)
{
	int rc = run("%s restore -d -D %s -o restore.log -v4 --pidfile %s/pid >/dev/null 2>&1",
		     criu_bin(), dir, dir);

	if (expect_ok && rc != 0) {
		CHECK(false, "criu restore exited %d", rc);
		run("tail -n 30 %s/restore.log", dir);
	}
	return rc == 0;
}

/* Checks the restored tree: it checks itself and reports line by line. */
static void tree_verify(struct tree *tr)
{
	char path[160], line[256];
	FILE *f;

	kill(tr->pid, SIGUSR1);
	snprintf(path, sizeof(path), "%s/parent.done", tr->dir);
	CHECK(app_wait_file(path, APP_TIMEOUT_MS), "the restored tree did not finish its checks");
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s.result", tr->dir,
			 i ? "child" : "parent");
		f = fopen(path, "r");
		if (!CHECK(f, "no %s", path))
			continue;
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!strncmp(line, "not ok ", 7))
				CHECK(false, "%s", line + 7);
			else
				tap_diag("%s", line);
		}
		fclose(f);
	}
	waitpid(tr->pid, NULL, 0);
	tr->pid = -1;
}

static bool reload_module(void)
{
	char *args = read_text("/etc/accmap-insmod-args", NULL);
	int rc;

	if (args)
		args[strcspn(args, "\n")] = '\0';
	rc = run("rmmod accmap && insmod /accmap.ko %s", args ? args : "");
	free(args);
	return CHECK(rc == 0, "rmmod/insmod of accmap failed (%d)", rc);
}

/*
 * The restored tree's root: the pid criu wrote (--pidfile), in our
 * namespace, or -1.
 */
static pid_t restored_pid(const char *dir)
{
	char path[160], *text;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/pid", dir);
	text = read_text(path, NULL);
	pid = text ? atoi(text) : -1;
	free(text);
	return pid > 0 ? pid : -1;
}

static void check_and_restore(bool reload, bool twice)
{
	char before[4096], gone[4096], after[4096], base[4096];
	struct tree tr = { .pid = -1 };
	pid_t pid;

	if (!CHECK(totals(base, sizeof(base)), "no debugfs totals"))
		return;
	if (!tree_start(&tr, EXTRA_NONE))
		goto out;
	/*
	 * Twice into one directory: the first dump leaves the tree running
	 * (and its counter buffer changing), the second one's images must be
	 * what the restore reads.
	 */
	if (twice && !criu_dump_opts(&tr, true, "--leave-running"))
		goto out;
	if (twice && !CHECK(kill(tr.pid, 0) == 0, "the tree is gone after --leave-running"))
		goto out;
	CHECK(totals(before, sizeof(before)), "no debugfs totals");
	if (!criu_dump(&tr, true))
		goto out;
	pid = tr.pid;
	CHECK(waitpid(pid, NULL, 0) == pid, "the dumped tree did not exit");
	tr.pid = -1;
	/*
	 * Its child came to us (we are the subreaper) and must be reaped:
	 * a zombie in the tree's session keeps the session's pid, the
	 * root's, which the restore needs.
	 */
	while (waitpid(-1, NULL, 0) > 0)
		;
	CHECK(kill(pid, 0) == -1 && errno == ESRCH, "the dumped process is still there");
	CHECK(totals(gone, sizeof(gone)) && !strcmp(gone, base),
	      "with the tree gone, the debugfs totals are back to the start:\n%s\n%s", base, gone);
	if (reload && !reload_module())
		goto out;
	if (!criu_restore(tr.dir, true))
		goto out;
	tr.pid = pid;
	CHECK(kill(pid, 0) == 0, "the restored process is not there");
	CHECK(totals(after, sizeof(after)) && !strcmp(after, before),
	      "debugfs totals after the restore differ from before the dump:\n%s\n%s",
	      before, after);
	tree_verify(&tr);
out:
	tree_stop(&tr);
}

static void test_restore(void)
{
	check_and_restore(false, false);
}

static void test_restore_after_reload(void)
{
	check_and_restore(true, false);
}

static void test_restore_dumped_twice(void)
{
	check_and_restore(false, true);
}

/*
 * The pids /proc/@pid/status's NSpid line gives: @outer in our namespace,
 * @inner in the process's own (the last number).
 */
static bool ns_pids(pid_t pid, pid_t *outer, pid_t *inner)
{
	char path[64], *text, *line, *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_text(path, NULL);
	line = text ? strstr(text, "\nNSpid:") : NULL;
	*outer = *inner = -1;
	if (line) {
		p = line + 7;
		*outer = strtol(p, &end, 10);
		for (p = end; *p && *p != '\n'; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			*inner = v;
		}
		if (*inner < 0)
			*inner = *outer;
	}
	free(text);
	return *outer > 0;
}

/* The tree's child: the first of the root's children, or -1. */
static pid_t tree_child(pid_t root)
{
	char path[80], *text;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", root, root);
	text = read_text(path, NULL);
	pid = text && *text ? atoi(text) : -1;
	free(text);
	return pid;
}

/*
 * Checks that the tree rooted at @root (in our namespace) has the pids
 * @want (as the app saw them, in its namespace) inside its own pid
 * namespace, and new ones out here (@old, the pids before; may be
 * updated to the new ones).
 */
static bool check_pids(pid_t root, const pid_t want[2], pid_t old[2], const char *when)
{
	pid_t pid[2] = { root, tree_child(root) }, outer = -1, inner = -1;
	bool ok = true;

	for (int i = 0; i < 2; i++) {
		const char *who = i ? "child" : "root";

		if (!CHECK(pid[i] > 0 && ns_pids(pid[i], &outer, &inner),
			   "%s: no %s of the tree in /proc", when, who)) {
			ok = false;
			continue;
		}
		ok &= CHECK(inner == want[i] && outer != inner,
			    "%s: %s %d is %d in its pid namespace, expected %d (and not ours)",
			    when, who, outer, inner, want[i]);
		if (old[i] > 0)
			ok &= CHECK(outer != old[i], "%s: %s kept its global pid %d",
				    when, who, outer);
		old[i] = outer;
	}
	return ok;
}

/*
 * A tree in a pid namespace of its own: dumped, restored into a new one
 * (new pids out here, the same inside), dumped again and restored again,
 * then it checks itself (FROM_VA pinned at its memory, the SVM job, ids
 * and bytes, the fork-shared client).
 */
static void test_restore_pidns(void)
{
	char base[4096], before[4096], after[4096], path[160], *text;
	struct tree tr = { .pid = -1, .pidns = true };
	pid_t want[2] = { -1, -1 }, old[2] = { -1, -1 };

	if (!CHECK(totals(base, sizeof(base)), "no debugfs totals"))
		return;
	if (!tree_start(&tr, EXTRA_NONE))
		goto out;
	snprintf(path, sizeof(path), "%s/pids", tr.dir);
	text = read_text(path, NULL);
	if (!CHECK(text && sscanf(text, "%d %d", &want[0], &want[1]) == 2,
		   "no pids written by the tree")) {
		free(text);
		goto out;
	}
	free(text);
	tap_diag("the tree's pids in its namespace: %d, %d", want[0], want[1]);
	if (!CHECK(want[0] == 1, "the root is pid %d in its namespace, not its init", want[0]) ||
	    !check_pids(tr.pid, want, old, "before the dump"))
		goto out;
	CHECK(totals(before, sizeof(before)), "no debugfs totals");

	for (int gen = 1; gen <= 2; gen++) {
		char when[64];
		pid_t pid = tr.pid;

		if (!criu_dump(&tr, true))
			goto out;
		/* Its init gone, the namespace is gone: reap the root. */
		CHECK(waitpid(pid, NULL, 0) == pid, "the dumped tree did not exit");
		tr.pid = -1;
		reap_all();
		CHECK(totals(after, sizeof(after)) && !strcmp(after, base),
		      "generation %d: with the tree gone, the debugfs totals are not back:\n%s\n%s",
		      gen, base, after);
		/* criu writes its pid file only if there is none. */
		snprintf(path, sizeof(path), "%s/pid", tr.dir);
		unlink(path);
		if (!criu_restore(tr.dir, true))
			goto out;
		tr.pid = restored_pid(tr.dir);
		if (!CHECK(tr.pid > 0 && kill(tr.pid, 0) == 0,
			   "generation %d: no restored process (pid file says %d)", gen, tr.pid))
			goto out;
		snprintf(when, sizeof(when), "restore %d", gen);
		check_pids(tr.pid, want, old, when);
		tap_diag("%s: root %d, child %d out here", when, old[0], old[1]);
		CHECK(totals(after, sizeof(after)) && !strcmp(after, before),
		      "%s: debugfs totals differ from before the first dump:\n%s\n%s",
		      when, before, after);
	}
	tree_verify(&tr);
out:
	tree_stop(&tr);
}

/*
 * A dump that must fail, with @msg in criu's log (NULL: "mapfile link"
 * and the address the tree wrote to dmabuf-map); the tree keeps running.
 */
static void check_refused(enum app_extra extra, const char *msg)
{
	struct tree tr = { .pid = -1 };
	char want[128];

	if (!tree_start(&tr, extra))
		goto out;
	if (!msg) {
		char path[160], *addr;

		snprintf(path, sizeof(path), "%s/dmabuf-map", tr.dir);
		addr = read_text(path, NULL);
		if (!CHECK(addr, "no %s", path))
			goto out;
		addr[strcspn(addr, "\n")] = '\0';
		snprintf(want, sizeof(want), "mapfile link %s", addr);
		free(addr);
		msg = want;
	}
	CHECK(!criu_dump(&tr, false), "criu dump succeeded");
	if (!CHECK(run("grep -q '%s' %s/dump.log", msg, tr.dir) == 0,
		   "criu's log does not say \"%s\"; its errors:", msg))
		run("grep -E 'Error|accmap_criu' %s/dump.log | tail -n 15 | sed 's/^/# /'",
		    tr.dir);
	CHECK(kill(tr.pid, 0) == 0, "the tree is gone after a refused dump");
	/* It still runs and checks itself: nothing was restored. */
	tree_verify(&tr);
out:
	tree_stop(&tr);
}

static void test_refuse_vgem(void)
{
	/* DRM exports say "drm" for the exporter's name. */
	check_refused(EXTRA_VGEM, "a dma-buf exported by drm, not by accmap");
}

/*
 * CRIU 3.17 fails a dma-buf mapping itself, before any plugin is asked:
 * it cannot open the mapping's /proc/PID/map_files link.  Its message
 * names the mapping's address.
 */
static void test_refuse_dmabuf_map(void)
{
	check_refused(EXTRA_DMABUF_MAP, NULL);
}

static void test_refuse_mmio(void)
{
	const char *mmio = getenv("ACCMAP_REPLAY_MMIO");

	if (!CHECK(mmio && *mmio, "no register window in this guest (ACCMAP_REPLAY_MMIO)"))
		return;
	check_refused(EXTRA_MMIO, "drives a register window");
}

/*
 * The image to damage in @dir: the largest accmap-file image (the
 * parent's client) or, with @buf, the first accmap-buf image.
 */
static bool damage_target(const char *dir, bool buf, char *path, size_t len)
{
	char pattern[200];
	struct stat st;
	off_t best = -1;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/accmap-%s-*.img", dir, buf ? "buf" : "file");
	if (glob(pattern, 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (stat(g.gl_pathv[i], &st) || st.st_size <= best)
			continue;
		best = st.st_size;
		snprintf(path, len, "%s", g.gl_pathv[i]);
		if (buf)
			break;
	}
	globfree(&g);
	return best >= 0;
}

/* Writes @len bytes of @bytes at @off of the image damage_target() picks. */
static bool damage_write(const char *dir, off_t off, const void *bytes, size_t len)
{
	char path[256];
	bool ok;
	int fd;

	if (!damage_target(dir, false, path, sizeof(path)))
		return false;
	fd = open(path, O_WRONLY);
	ok = fd >= 0 && pwrite(fd, bytes, len, off) == (ssize_t)len;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The parent's client image: its first handle record follows the file
 * head (24 bytes) and the client head (40); its size is at +8, its id at
 * +32.
 */
#define FIRST_RECORD	(24 + 40)

static bool damage_truncate(const char *dir)
{
	char path[256];

	return damage_target(dir, true, path, sizeof(path)) && !truncate(path, 4096);
}

static bool damage_size(const char *dir)
{
	static const uint8_t one = 1;

	/* The size's third byte: 64 KiB more than the saved bytes. */
	return damage_write(dir, FIRST_RECORD + 8 + 2, &one, 1);
}

static bool damage_id(const char *dir)
{
	static const uint32_t zero;

	return damage_write(dir, FIRST_RECORD + 32, &zero, sizeof(zero));
}

/* A pid no process can have: above PID_MAX_LIMIT. */
#define NO_SUCH_PID	4194305
#define STR_(x)		#x
#define STR(x)		STR_(x)

/*
 * The parent's FROM_VA record names a process that is not in the tree:
 * nothing would pin it, and the restore must say so.
 */
static bool damage_origin(const char *dir)
{
	struct accmap_ckpt_client head;
	struct accmap_ckpt_handle rec;
	char path[256];
	bool ok = false;
	int fd;

	if (!damage_target(dir, false, path, sizeof(path)))
		return false;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return false;
	if (pread(fd, &head, sizeof(head), 24) == sizeof(head)) {
		for (uint32_t i = 0; i < head.nr_handles && !ok; i++) {
			off_t at = FIRST_RECORD + (off_t)i * sizeof(rec);

			if (pread(fd, &rec, sizeof(rec), at) != sizeof(rec))
				break;
			if (rec.kind != ACCMAP_CKPT_KIND_FROM_VA)
				continue;
			rec.origin_pid = NO_SUCH_PID;
			ok = pwrite(fd, &rec, sizeof(rec), at) == sizeof(rec);
		}
	}
	close(fd);
	return ok;
}

/* A damaged copy of a good dump must fail the restore and leak nothing. */
static void test_damaged_images(void)
{
	static const struct {
		const char *what;
		bool (*damage)(const char *dir);
		const char *says;	/* what the plugin must say, if not only something */
	} damage[] = {
		{ "a truncated buffer image", damage_truncate, NULL },
		{ "a buffer record with a wrong size", damage_size, NULL },
		{ "an id of 0", damage_id, NULL },
		{ "a FROM_VA record naming a process not in the tree", damage_origin,
		  "pins memory of process " STR(NO_SUCH_PID)
		  ", which is not in the restored tree" },
	};
	char base[4096], now[4096], copy[128];
	struct tree tr = { .pid = -1 };
	pid_t pid;

	if (!CHECK(totals(base, sizeof(base)), "no debugfs totals"))
		return;
	if (!tree_start(&tr, EXTRA_NONE) || !criu_dump(&tr, true))
		goto out;
	pid = tr.pid;
	while (waitpid(-1, NULL, 0) > 0)
		;
	tr.pid = -1;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(damage); i++) {
		snprintf(copy, sizeof(copy), "%s/damaged", tr.dir);
		run("rm -rf %s && mkdir %s && cp -a %s/*.img %s/", copy, copy, tr.dir, copy);
		CHECK(damage[i].damage(copy), "could not damage the image (%s)", damage[i].what);
		CHECK(!criu_restore(copy, false), "a restore from %s succeeded", damage[i].what);
		CHECK(run("grep -q accmap_criu %s/restore.log", copy) == 0,
		      "the plugin said nothing about %s", damage[i].what);
		if (damage[i].says &&
		    !CHECK(run("grep -q '%s' %s/restore.log", damage[i].says, copy) == 0,
			   "criu's log does not say \"%s\"; the plugin's lines:", damage[i].says))
			run("grep accmap_criu %s/restore.log | tail -n 5 | sed 's/^/# /'", copy);
		reap_all();
		/* Nothing of the tree may be left running. */
		CHECK(kill(pid, 0) == -1 && errno == ESRCH,
		      "pid %d is there after a restore from %s failed", pid, damage[i].what);
		CHECK(totals(now, sizeof(now)) && !strcmp(now, base),
		      "after the failed restore (%s) the debugfs totals are not back:\n%s\n%s",
		      damage[i].what, base, now);
	}
	/* And the undamaged image still restores. */
	if (criu_restore(tr.dir, true)) {
		tr.pid = pid;
		tree_verify(&tr);
	}
out:
	tree_stop(&tr);
}

static const struct tap_test tests[] = {
	{ "restore", test_restore },
	{ "restore_after_reload", test_restore_after_reload },
	{ "restore_dumped_twice", test_restore_dumped_twice },
	{ "restore_pidns", test_restore_pidns },
	{ "refuse_foreign_dmabuf", test_refuse_vgem },
	{ "refuse_dmabuf_mapping", test_refuse_dmabuf_map },
	{ "damaged_images", test_damaged_images },
	{ "refuse_register_window", test_refuse_mmio },
};

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--app"))
		return app_main(argv[2], atoi(argv[3]));
	if (!criu_bin()) {
		/* The harness runs it only where criu works, and says why not. */
		printf("TAP version 13\nBail out! ACCMAP_CRIU is not set: no criu to test with\n");
		return 1;
	}
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

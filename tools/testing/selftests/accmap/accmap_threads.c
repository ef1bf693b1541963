// SPDX-License-Identifier: GPL-2.0
/*
 * accmap under concurrency: several threads of one process sharing one
 * /dev/accmap file, for a bounded number of iterations each.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

#define NR_THREADS	4
#define ITERATIONS	300

struct worker {
	pthread_t thread;
	void *(*fn)(void *arg);
	int dev;
	unsigned int index;
	/* For the tests that share one handle or one mapping. */
	uint32_t id;
	uint8_t *map;
	size_t len;
	pthread_barrier_t *barrier;
	int result;
};

/*
 * Runs w[i].fn on each worker and waits for all.  A thread that cannot be
 * started would leave the others blocked on their barrier: end the test.
 */
static void run_workers(struct worker *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = pthread_create(&w[i].thread, NULL, w[i].fn, &w[i]);

		if (!CHECK(err == 0, "pthread_create: %s", strerror(err)))
			_exit(1);
	}
	for (size_t i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
}

/* One thread's life cycle loop: every buffer it makes is its own. */
static void *lifecycle_worker(void *arg)
{
	struct worker *w = arg;
	size_t pg = page_size();

	for (unsigned int i = 0; i < ITERATIONS && !tap_failed(); i++) {
		uint64_t size = (uint64_t)(1 + (i + w->index) % 16) * pg;
		uint32_t flags = (i & 1) ? ACCMAP_ALLOC_WRITECOMBINE : 0;
		uint16_t tag = (uint16_t)(w->index << 12 | (i & 0xfff));
		uint32_t id = 0;
		int ret, fd;

		ret = am_create(w->dev, size, &id);
		if (!CHECK(ret == 0, "thread %u: CREATE: %s", w->index, strerror(-ret)))
			break;
		ret = am_alloc(w->dev, id, flags, tag);
		if (!CHECK(ret == 0, "thread %u: ALLOC of %u: %s", w->index, id, strerror(-ret)))
			break;
		/* Another thread working on the same id would break this. */
		check_info(w->dev, id, size, ACCMAP_HEAP_SYSTEM, flags, ACCMAP_STATE_ALLOCATED,
			   tag, "thread loop");
		fd = am_get_fd(w->dev, id, O_RDWR | O_CLOEXEC);
		if (!CHECK(fd >= 0, "thread %u: GET_FD of %u: %s", w->index, id, strerror(-fd)))
			break;
		if (i % 8 == 0) {
			uint8_t *p = map_shared(fd, size, PROT_READ | PROT_WRITE, 0);

			if (p) {
				CHECK(find_nonzero(p, size) == size,
				      "thread %u: new buffer not zero", w->index);
				fill_pattern(p, size, 0, w->index);
				CHECK(find_pattern_mismatch(p, size, 0, w->index) == size,
				      "thread %u: pattern lost", w->index);
				munmap(p, size);
			}
		}
		ret = am_free(w->dev, id);
		CHECK(ret == 0, "thread %u: FREE of %u: %s", w->index, id, strerror(-ret));
		close(fd);
	}
	return NULL;
}

static void test_threads_lifecycle(void)
{
	struct worker w[NR_THREADS];
	int dev = am_open();
	int fd_before = next_fd();

	if (dev < 0)
		return;
	for (unsigned int i = 0; i < NR_THREADS; i++)
		w[i] = (struct worker){ .fn = lifecycle_worker, .dev = dev, .index = i };
	run_workers(w, NR_THREADS);
	CHECK(next_fd() == fd_before, "fds leaked: next fd %d, was %d", next_fd(), fd_before);
	close(dev);
}

static void *free_race_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->barrier);
	w->result = am_free(w->dev, w->id);
	return NULL;
}

static void test_threads_free_race(void)
{
	/* Two FREEs of one id at once: exactly one may succeed. */
	pthread_barrier_t barrier;
	struct worker w[2];
	int dev = am_open();

	if (dev < 0)
		return;
	pthread_barrier_init(&barrier, NULL, 2);
	for (unsigned int i = 0; i < ITERATIONS && !tap_failed(); i++) {
		uint32_t id = 0;
		int fd = -1;

		if (i % 2) {
			fd = am_buffer(dev, page_size(), 0, &id, true);
			if (fd < 0)
				break;
		} else if (!CHECK(am_create(dev, page_size(), &id) == 0, "CREATE")) {
			break;
		}
		for (unsigned int t = 0; t < 2; t++)
			w[t] = (struct worker){
				.fn = free_race_worker, .dev = dev, .index = t, .id = id,
				.barrier = &barrier, .result = 1,
			};
		run_workers(w, 2);
		CHECK((w[0].result == 0 && w[1].result == -ENOENT) ||
		      (w[1].result == 0 && w[0].result == -ENOENT),
		      "concurrent FREEs of %u returned %d and %d", id, w[0].result, w[1].result);
		if (fd >= 0)
			close(fd);
	}
	pthread_barrier_destroy(&barrier);
	close(dev);
}

static void *get_fd_worker(void *arg)
{
	struct worker *w = arg;
	size_t pg = page_size();

	pthread_barrier_wait(w->barrier);
	/* Bounded: a FREE that never takes effect must not hang the test. */
	for (int n = 0; n < 100000; n++) {
		int fd = am_get_fd(w->dev, w->id, O_RDWR | O_CLOEXEC);

		if (fd == -ENOENT)
			break;
		if (!CHECK(fd >= 0, "GET_FD racing FREE: %s", strerror(-fd)))
			break;
		CHECK(lseek(fd, 0, SEEK_END) == (off_t)pg, "dma-buf of the wrong size");
		close(fd);
	}
	return NULL;
}

static void test_threads_get_fd_vs_free(void)
{
	/* GET_FD either gives a working dma-buf or ENOENT, never anything else. */
	pthread_barrier_t barrier;
	struct worker w[2];
	int dev = am_open();

	if (dev < 0)
		return;
	pthread_barrier_init(&barrier, NULL, 2);
	for (unsigned int i = 0; i < ITERATIONS / 3 && !tap_failed(); i++) {
		uint32_t id = 0;

		if (am_buffer(dev, page_size(), 0, &id, false) < 0)
			break;
		w[0] = (struct worker){
			.fn = get_fd_worker, .dev = dev, .id = id, .barrier = &barrier,
		};
		w[1] = (struct worker){
			.fn = free_race_worker, .dev = dev, .id = id, .barrier = &barrier,
			.result = 1,
		};
		run_workers(w, 2);
		CHECK(w[1].result == 0, "FREE racing GET_FD: %s", strerror(-w[1].result));
	}
	pthread_barrier_destroy(&barrier);
	close(dev);
}

static void *info_worker(void *arg)
{
	struct worker *w = arg;
	struct accmap_info info;

	pthread_barrier_wait(w->barrier);
	for (int n = 0; n < 64; n++) {
		int ret = am_info(w->dev, w->id, &info);

		if (!CHECK(ret == 0, "INFO racing ALLOC: %s", strerror(-ret)))
			break;
		/* Before ALLOC or after it, never a mix of the two. */
		if (info.state == 0) {
			CHECK(info.heap == ACCMAP_HEAP_NONE && info.flags == 0 && info.tag == 0,
			      "INFO without memory shows heap %#x flags %#x tag %#x",
			      info.heap, info.flags, info.tag);
		} else {
			CHECK(info.state == ACCMAP_STATE_ALLOCATED &&
			      info.heap == ACCMAP_HEAP_SYSTEM &&
			      info.flags == ACCMAP_ALLOC_WRITECOMBINE && info.tag == 0x5a5a,
			      "INFO with memory shows state %#x heap %#x flags %#x tag %#x",
			      info.state, info.heap, info.flags, info.tag);
		}
		CHECK(info.size == 4 * page_size() && info.pad2 == 0,
		      "INFO size %llu pad2 %#x", (unsigned long long)info.size, info.pad2);
	}
	return NULL;
}

static void *alloc_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->barrier);
	w->result = am_alloc(w->dev, w->id, ACCMAP_ALLOC_WRITECOMBINE, 0x5a5a);
	return NULL;
}

static void test_threads_info_vs_alloc(void)
{
	pthread_barrier_t barrier;
	struct worker w[3];
	int dev = am_open();

	if (dev < 0)
		return;
	pthread_barrier_init(&barrier, NULL, 3);
	for (unsigned int i = 0; i < ITERATIONS / 3 && !tap_failed(); i++) {
		uint32_t id = 0;

		if (!CHECK(am_create(dev, 4 * page_size(), &id) == 0, "CREATE"))
			break;
		for (unsigned int t = 0; t < 3; t++)
			w[t] = (struct worker){ .dev = dev, .id = id, .barrier = &barrier };
		w[0].fn = alloc_worker;
		w[1].fn = info_worker;
		w[2].fn = info_worker;
		run_workers(w, 3);
		CHECK(w[0].result == 0, "ALLOC racing INFO: %s", strerror(-w[0].result));
		CHECK(am_free(dev, id) == 0, "FREE");
	}
	pthread_barrier_destroy(&barrier);
	close(dev);
}

static void *fault_worker(void *arg)
{
	struct worker *w = arg;
	size_t pg = page_size();
	size_t pages = w->len / pg;

	pthread_barrier_wait(w->barrier);
	/* Each thread walks the pages in its own order, writing its own byte. */
	for (size_t i = 0; i < pages; i++) {
		size_t n = (i * (2 * w->index + 1) + w->index * 13) % pages;

		w->map[n * pg + w->index] = (uint8_t)(0x10 + w->index);
	}
	return NULL;
}

static void test_threads_concurrent_faults(void)
{
	size_t len = 1024 * page_size();
	pthread_barrier_t barrier;
	struct worker w[NR_THREADS];
	int dev = am_open();
	uint32_t id;
	uint8_t *p;
	int fd;

	if (dev < 0)
		return;
	for (int round = 0; round < 4 && !tap_failed(); round++) {
		fd = am_buffer(dev, len, (round & 1) ? ACCMAP_ALLOC_WRITECOMBINE : 0, &id, true);
		if (fd < 0)
			break;
		p = map_shared(fd, len, PROT_READ | PROT_WRITE, 0);
		close(fd);
		if (!p)
			break;
		pthread_barrier_init(&barrier, NULL, NR_THREADS);
		for (unsigned int t = 0; t < NR_THREADS; t++)
			w[t] = (struct worker){
				.fn = fault_worker, .dev = dev, .index = t, .map = p, .len = len,
				.barrier = &barrier,
			};
		run_workers(w, NR_THREADS);
		pthread_barrier_destroy(&barrier);
		for (size_t n = 0; n < len / page_size(); n++) {
			uint8_t *pgp = p + n * page_size();
			bool ok = true;

			for (unsigned int t = 0; t < NR_THREADS; t++)
				ok &= pgp[t] == 0x10 + t;
			ok &= find_nonzero(pgp + NR_THREADS, page_size() - NR_THREADS) ==
			      page_size() - NR_THREADS;
			if (!CHECK(ok, "page %zu: writes of concurrent faults lost", n))
				break;
		}
		munmap(p, len);
		CHECK(am_free(dev, id) == 0, "FREE");
	}
	close(dev);
}

/*
 * Whether fd is a dma-buf of the buffer behind id in dev: FROM_FD must
 * take it back to a buffer of the same size and tag whose first word,
 * read through the new id, is the marker written through id.
 */
static bool is_dmabuf_of(int dev, int fd, uint64_t size, uint16_t tag, uint64_t marker,
			 const char *when)
{
	struct accmap_info info;
	uint64_t word = 0;
	uint32_t back;
	int ret;

	ret = am_from_fd(dev, fd, &back);
	if (!CHECK(ret == 0, "%s: FROM_FD of what GET_FD returned: %s", when, strerror(-ret)))
		return false;
	ret = am_info(dev, back, &info);
	CHECK(ret == 0 && info.size == size && info.tag == tag,
	      "%s: GET_FD gave a buffer of size %llu tag %u, not %llu / %u", when,
	      (unsigned long long)info.size, info.tag, (unsigned long long)size, tag);
	CHECK(am_read(dev, back, 0, &word, sizeof(word)) == 0 && word == marker,
	      "%s: GET_FD gave another buffer (word %#llx)", when, (unsigned long long)word);
	CHECK_OK(am_free(dev, back));
	return !tap_failed();
}

static bool same_inode(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Files freed a moment ago get reused by the next files opened: open a
 * few, to give a stale pointer to a freed dma-buf file something live
 * (and unrelated) to point at.
 */
static void churn_files(void)
{
	int fds[32];

	for (size_t i = 0; i < TAP_ARRAY_SIZE(fds); i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * A buffer of @size bytes tagged @tag whose first word is @marker, for
 * is_dmabuf_of() to recognise.  Returns false (the check failed) if not.
 */
static bool marked_buffer(int dev, uint64_t size, uint16_t tag, uint64_t marker,
			  uint32_t *id)
{
	return CHECK(am_create(dev, size, id) == 0 && am_alloc(dev, *id, 0, tag) == 0,
		     "buffer") &&
	       CHECK_OK(am_write(dev, *id, 0, &marker, sizeof(marker)));
}

static void test_get_fd_after_last_close(void)
{
	/*
	 * An O_PATH descriptor of /proc/self/fd/N holds the dma-buf's dentry
	 * (so the dma-buf itself) but not its file: after the last close the
	 * file is freed while the dma-buf lives on.  GET_FD of that mode must
	 * still hand out that dma-buf, through a live file: the handle keeps
	 * it while it has an id.
	 */
	static const int modes[] = { O_RDWR, O_RDONLY };
	uint64_t size = 4 * page_size(), marker = 0x6163636d61703301ULL;
	const uint16_t tag = 0x3303;
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	if (!marked_buffer(dev, size, tag, marker, &id))
		goto out;
	for (unsigned int round = 0; round < 16 && !tap_failed(); round++) {
		int mode = modes[round % 2];
		char path[64];
		int fd, opath, again;

		fd = am_get_fd(dev, id, (uint32_t)mode | O_CLOEXEC);
		if (!CHECK(fd >= 0, "GET_FD: %s", strerror(-fd)))
			break;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		opath = open(path, O_PATH | O_CLOEXEC);
		if (!CHECK(opath >= 0, "open(%s, O_PATH): %s", path, strerror(errno))) {
			close(fd);
			break;
		}
		close(fd);
		/* Let RCU free the file, and the allocator hand its memory out. */
		usleep(20000);
		churn_files();
		again = open("/dev/null", O_RDONLY | O_CLOEXEC);
		fd = am_get_fd(dev, id, (uint32_t)mode | O_CLOEXEC);
		if (CHECK(fd >= 0, "GET_FD after the last close: %s", strerror(-fd))) {
			CHECK(same_inode(fd, opath),
			      "round %u: GET_FD did not give the dma-buf the id keeps", round);
			is_dmabuf_of(dev, fd, size, tag, marker, "after the last close");
			close(fd);
		}
		if (again >= 0)
			close(again);
		close(opath);
	}
	CHECK_OK(am_free(dev, id));
out:
	close(dev);
}

struct lastclose {
	int dev;
	uint32_t id;
	uint64_t size;
	uint64_t marker;
	uint16_t tag;
	int mode;
	int stop;		/* set (atomically) when the getter is done */
	pthread_barrier_t *barrier;
};

/* GET_FD, check, close: over and over, each fd the last of its file. */
static void *lastclose_getter(void *arg)
{
	struct lastclose *lc = arg;

	pthread_barrier_wait(lc->barrier);
	for (unsigned int i = 0; i < ITERATIONS && !tap_failed(); i++) {
		int fd = am_get_fd(lc->dev, lc->id, (uint32_t)lc->mode | O_CLOEXEC);

		if (!CHECK(fd >= 0, "GET_FD %u: %s", i, strerror(-fd)))
			break;
		if ((i & 7) == 0)
			is_dmabuf_of(lc->dev, fd, lc->size, lc->tag, lc->marker, "racing");
		else
			CHECK(lseek(fd, 0, SEEK_END) == (off_t)lc->size, "size of GET_FD's fd");
		close(fd);
	}
	__atomic_store_n(&lc->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Path walks through /proc/self/fd to whatever the getters hold. */
static void *lastclose_walker(void *arg)
{
	struct lastclose *lc = arg;
	char path[64];

	pthread_barrier_wait(lc->barrier);
	while (!__atomic_load_n(&lc->stop, __ATOMIC_RELAXED)) {
		for (int fd = 3; fd < 24; fd++) {
			int o;

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			o = open(path, O_PATH | O_CLOEXEC);
			if (o >= 0)
				close(o);
		}
		churn_files();
	}
	return NULL;
}

static void test_get_fd_vs_last_close(void)
{
	/*
	 * Two threads per mode GET_FD and close while others walk the fds'
	 * /proc links (holding dentries) and churn files: every fd GET_FD
	 * returns must be a dma-buf of this very buffer.
	 */
	pthread_barrier_t barrier;
	struct lastclose lc[4];
	pthread_t th[6];
	uint64_t size = 2 * page_size(), marker = 0x6163636d61703302ULL;
	const uint16_t tag = 0x3304;
	int dev = am_open();
	uint32_t id;
	size_t n = 0;

	if (dev < 0)
		return;
	if (!marked_buffer(dev, size, tag, marker, &id))
		goto out;
	pthread_barrier_init(&barrier, NULL, 6);
	for (size_t i = 0; i < TAP_ARRAY_SIZE(lc); i++)
		lc[i] = (struct lastclose){ .dev = dev, .id = id, .size = size, .marker = marker,
					    .tag = tag, .mode = (i & 1) ? O_RDONLY : O_RDWR,
					    .barrier = &barrier };
	for (size_t i = 0; i < TAP_ARRAY_SIZE(lc); i++)
		if (CHECK(!pthread_create(&th[n], NULL, lastclose_getter, &lc[i]), "thread"))
			n++;
	for (size_t i = 0; i < 2; i++)
		if (CHECK(!pthread_create(&th[n], NULL, lastclose_walker, &lc[i]), "thread"))
			n++;
	if (n != TAP_ARRAY_SIZE(th))
		_exit(1);
	for (size_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	CHECK_OK(am_free(dev, id));
out:
	close(dev);
}

static const struct tap_test tests[] = {
	{ "threads_lifecycle", test_threads_lifecycle },
	{ "threads_free_race", test_threads_free_race },
	{ "threads_get_fd_vs_free", test_threads_get_fd_vs_free },
	{ "threads_info_vs_alloc", test_threads_info_vs_alloc },
	{ "threads_concurrent_faults", test_threads_concurrent_faults },
	{ "get_fd_after_last_close", test_get_fd_after_last_close },
	{ "get_fd_vs_last_close", test_get_fd_vs_last_close },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

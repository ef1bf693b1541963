// SPDX-License-Identifier: GPL-2.0
/*
 * accmap stress test: several processes, several threads each, doing
 * create / alloc / get_fd / from_fd / mmap / write / read / free / close
 * in random order, passing dma-buf fds between processes over unix
 * sockets.  Every buffer carries a signature that is checked whenever it
 * is read, by whichever process reads it.  Afterwards the device's
 * accounting must be back where it started.
 *
 * ACCMAP_STRESS_SECONDS (default 60) sets the duration; the seed is
 * printed and ACCMAP_STRESS_SEED replays it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

#define NPROC		4
#define NTHREAD		4
#define MAX_LIVE	12
#define MAX_PAGES	32

struct sig {
	uint32_t magic;
	uint32_t pid;
	uint64_t serial;
};

#define SIG_MAGIC	0xacc0a11c

struct buf {
	uint32_t id;		/* 0: slot empty */
	int fd;			/* dma-buf fd or -1 */
	int client;		/* the /dev/accmap fd the id belongs to */
	size_t size;
	struct sig sig;
};

struct worker {
	pthread_t thread;
	unsigned int seed;
	int shared_dev;		/* the process's common client */
	int own_dev;		/* a client only this thread uses, or -1 */
	int sock_out, sock_in;
	struct buf bufs[MAX_LIVE];
	uint64_t ops;
	uint64_t serial;
	time_t deadline;
};

static unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) & 0xffffff;
}

static void release(struct buf *b)
{
	if (b->fd >= 0)
		close(b->fd);
	if (b->id)
		CHECK(am_free(b->client, b->id) == 0, "free id %u", b->id);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

static struct buf *slot(struct worker *w, bool empty)
{
	unsigned int start = rnd(&w->seed) % MAX_LIVE, i;

	for (i = 0; i < MAX_LIVE; i++) {
		struct buf *b = &w->bufs[(start + i) % MAX_LIVE];

		if (!b->id == empty)
			return b;
	}
	return NULL;
}

static int pick_client(struct worker *w)
{
	if (w->own_dev >= 0 && rnd(&w->seed) % 2)
		return w->own_dev;
	return w->shared_dev;
}

static bool check_sig(int dev, uint32_t id, const struct sig *want)
{
	struct accmap_rw rw = {0};
	struct sig got;

	rw.addr = (uintptr_t)&got;
	rw.elem_size = sizeof(got);
	rw.count = 1;
	rw.id = id;
	if (!CHECK(raw_ioctl(dev, ACCMAP_IOC_READ, &rw) == 0, "READ id %u", id))
		return false;
	return CHECK(!memcmp(&got, want, sizeof(got)),
		     "signature of id %u: pid %u serial %llu, want pid %u serial %llu",
		     id, got.pid, (unsigned long long)got.serial, want->pid,
		     (unsigned long long)want->serial);
}

static void op_alloc(struct worker *w)
{
	struct buf *b = slot(w, true);
	struct accmap_rw rw = {0};
	uint32_t flags;

	if (!b)
		return;
	b->client = pick_client(w);
	b->size = (1 + rnd(&w->seed) % MAX_PAGES) * page_size();
	flags = rnd(&w->seed) % 2 ? ACCMAP_ALLOC_WRITECOMBINE : 0;
	if (!CHECK(am_create(b->client, b->size, &b->id) == 0, "create"))
		return;
	if (!CHECK(am_alloc(b->client, b->id, flags, rnd(&w->seed) % 8) == 0,
		   "alloc id %u", b->id))
		return;
	b->sig.magic = SIG_MAGIC;
	b->sig.pid = getpid();
	b->sig.serial = ++w->serial;
	rw.addr = (uintptr_t)&b->sig;
	rw.elem_size = sizeof(b->sig);
	rw.count = 1;
	rw.id = b->id;
	CHECK(raw_ioctl(b->client, ACCMAP_IOC_WRITE, &rw) == 0, "WRITE id %u", b->id);
}

static void op_get_fd(struct worker *w)
{
	struct buf *b = slot(w, false);
	int fd;

	if (!b || b->fd >= 0)
		return;
	fd = am_get_fd(b->client, b->id, O_RDWR | O_CLOEXEC);
	if (CHECK(fd >= 0, "get_fd id %u: %d", b->id, fd))
		b->fd = fd;
}

static void op_from_fd(struct worker *w)
{
	struct accmap_from_fd arg = {0};
	struct buf *b = slot(w, false);

	if (!b || b->fd < 0)
		return;
	arg.fd = b->fd;
	arg.id = GARBAGE_U32;
	if (!CHECK(raw_ioctl(w->shared_dev, ACCMAP_IOC_FROM_FD, &arg) == 0, "FROM_FD"))
		return;
	check_sig(w->shared_dev, arg.id, &b->sig);
	CHECK(am_free(w->shared_dev, arg.id) == 0, "free imported id");
}

static void op_mmap(struct worker *w)
{
	struct buf *b = slot(w, false);
	struct sig *p;

	if (!b || b->fd < 0)
		return;
	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (!CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno)))
		return;
	CHECK(!memcmp(p, &b->sig, sizeof(b->sig)), "signature through mmap");
	/* Touch the last page too; it must read as zero. */
	CHECK(((char *)p)[b->size - 1] == 0, "last byte zero");
	munmap(p, b->size);
}

static void op_rw(struct worker *w)
{
	struct buf *b = slot(w, false);

	if (b)
		check_sig(b->client, b->id, &b->sig);
}

static void op_free(struct worker *w)
{
	struct buf *b = slot(w, false);

	if (b)
		release(b);
}

static void op_reopen(struct worker *w)
{
	unsigned int i;

	if (w->own_dev >= 0) {
		/* Closing the client drops its ids; forget them unfreed. */
		for (i = 0; i < MAX_LIVE; i++) {
			struct buf *b = &w->bufs[i];

			if (b->id && b->client == w->own_dev) {
				if (b->fd >= 0)
					close(b->fd);
				memset(b, 0, sizeof(*b));
				b->fd = -1;
			}
		}
		close(w->own_dev);
	}
	w->own_dev = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	CHECK(w->own_dev >= 0, "open: %s", strerror(errno));
}

/* Send a dma-buf fd and its signature to the next process. */
static void op_send(struct worker *w)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct buf *b = slot(w, false);
	struct msghdr msg = {0};
	struct cmsghdr *cmsg;
	struct iovec iov;

	if (!b || b->fd < 0)
		return;
	iov.iov_base = &b->sig;
	iov.iov_len = sizeof(b->sig);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &b->fd, sizeof(int));
	/* A full socket just means the peer is behind: skip. */
	if (sendmsg(w->sock_out, &msg, MSG_DONTWAIT) < 0)
		CHECK(errno == EAGAIN, "sendmsg: %s", strerror(errno));
}

/* Take a dma-buf fd from the previous process and check its bytes. */
static void op_recv(struct worker *w)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct accmap_from_fd arg = {0};
	struct msghdr msg = {0};
	struct cmsghdr *cmsg;
	struct iovec iov;
	struct sig sig;
	ssize_t n;
	int fd;

	iov.iov_base = &sig;
	iov.iov_len = sizeof(sig);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	n = recvmsg(w->sock_in, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0) {
		CHECK(errno == EAGAIN, "recvmsg: %s", strerror(errno));
		return;
	}
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!CHECK(n == sizeof(sig) && cmsg && cmsg->cmsg_type == SCM_RIGHTS,
		   "message with an fd"))
		return;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	arg.fd = fd;
	if (CHECK(raw_ioctl(w->shared_dev, ACCMAP_IOC_FROM_FD, &arg) == 0,
		  "FROM_FD of a passed fd")) {
		check_sig(w->shared_dev, arg.id, &sig);
		CHECK(am_free(w->shared_dev, arg.id) == 0, "free passed id");
	}
	close(fd);
}

static void op_maybe_reopen(struct worker *w)
{
	if (rnd(&w->seed) % 16 == 0)
		op_reopen(w);
}

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* Operations, weighted by how often they appear. */
static void (*const ops[])(struct worker *w) = {
	op_alloc, op_alloc, op_get_fd, op_from_fd, op_mmap, op_rw, op_rw,
	op_free, op_free, op_maybe_reopen, op_send, op_recv,
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	unsigned int i;

	for (i = 0; i < MAX_LIVE; i++)
		w->bufs[i].fd = -1;
	while (!tap_failed() && time(NULL) < w->deadline) {
		w->ops++;
		ops[rnd(&w->seed) % ARRAY_LEN(ops)](w);
	}
	for (i = 0; i < MAX_LIVE; i++)
		if (w->bufs[i].id)
			release(&w->bufs[i]);
	if (w->own_dev >= 0)
		close(w->own_dev);
	return NULL;
}

static void process_main(unsigned int seed, int sock_out, int sock_in,
			 time_t deadline, int report)
{
	struct worker w[NTHREAD];
	uint64_t ops = 0;
	unsigned int t;
	int dev;

	dev = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (!CHECK(dev >= 0, "open: %s", strerror(errno)))
		_exit(1);
	for (t = 0; t < NTHREAD; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].seed = seed * 7919 + t;
		w[t].shared_dev = dev;
		w[t].own_dev = -1;
		w[t].sock_out = sock_out;
		w[t].sock_in = sock_in;
		w[t].deadline = deadline;
		CHECK(pthread_create(&w[t].thread, NULL, worker_main, &w[t]) == 0,
		      "pthread_create");
	}
	for (t = 0; t < NTHREAD; t++) {
		pthread_join(w[t].thread, NULL);
		ops += w[t].ops;
	}
	/* Drain what is still in flight so no fd outlives us unchecked. */
	close(dev);
	if (write(report, &ops, sizeof(ops)) != sizeof(ops))
		CHECK(0, "report ops");
	_exit(0);
}

/* Sum of the "used" column of debugfs heaps. */
static long long heaps_used(void)
{
	FILE *f = fopen("/sys/kernel/debug/accmap/heaps", "r");
	char line[256], name[64];
	unsigned long long total, used, sum = 0;
	unsigned int id;

	if (!CHECK(f, "open debugfs heaps: %s", strerror(errno)))
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %63s %llu %llu", &id, name, &total, &used) == 4)
			sum += used;
	fclose(f);
	return sum;
}

/* Data lines (after the header) of a debugfs table. */
static int table_rows(const char *file)
{
	char path[128], line[512];
	int rows = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/accmap/%s", file);
	f = fopen(path, "r");
	if (!CHECK(f, "open %s: %s", path, strerror(errno)))
		return -1;
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	return rows;
}

static void stress_procs_threads(void)
{
	const char *env = getenv("ACCMAP_STRESS_SECONDS");
	unsigned int seconds = env ? atoi(env) : 60;
	unsigned int seed = getenv("ACCMAP_STRESS_SEED") ?
		strtoul(getenv("ACCMAP_STRESS_SEED"), NULL, 0) : (unsigned int)time(NULL);
	int socks[NPROC][2], report[2];
	long long used_before, used_after;
	int clients_before, status;
	pid_t pids[NPROC];
	uint64_t total = 0, ops;
	time_t deadline;
	unsigned int i;

	tap_diag("seed %u, %u processes x %u threads, %u s", seed, NPROC, NTHREAD,
		 seconds);
	used_before = heaps_used();
	clients_before = table_rows("clients");
	CHECK(table_rows("orphans") == 0, "no orphans before");

	for (i = 0; i < NPROC; i++)
		CHECK_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, socks[i]));
	CHECK_OK(pipe(report));
	deadline = time(NULL) + seconds;

	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			/* Ring: send on socket i, receive on socket i - 1. */
			process_main(seed + i, socks[i][0],
				     socks[(i + NPROC - 1) % NPROC][1], deadline,
				     report[1]);
		CHECK(pids[i] > 0, "fork");
	}
	for (i = 0; i < NPROC; i++) {
		CHECK(waitpid(pids[i], &status, 0) == pids[i], "waitpid");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "process %u exit status %#x", i, status);
		if (read(report[0], &ops, sizeof(ops)) == sizeof(ops))
			total += ops;
	}
	/* In-flight messages still hold dma-buf fds: close the sockets. */
	for (i = 0; i < NPROC; i++) {
		close(socks[i][0]);
		close(socks[i][1]);
	}
	close(report[0]);
	close(report[1]);
	tap_diag("%llu operations", (unsigned long long)total);
	CHECK(total > 0, "operations ran");

	/* The last dma-buf references go with the sockets' queued fds. */
	for (i = 0; i < 50 && table_rows("orphans") != 0; i++)
		usleep(100 * 1000);
	used_after = heaps_used();
	CHECK(used_after == used_before, "heap bytes used %lld after, %lld before",
	      used_after, used_before);
	CHECK(table_rows("clients") == clients_before, "clients back to %d",
	      clients_before);
	CHECK(table_rows("orphans") == 0, "no orphans after");
	CHECK(table_rows("allocations") == 0, "no allocations after");
}

static const struct tap_test tests[] = {
	{ "stress_procs_threads", stress_procs_threads },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the accmap selftests; see accmap_util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"

size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

uint64_t total_ram_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

int raw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int am_open(void)
{
	int fd = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open(%s): %s", ACCMAP_DEV_PATH, strerror(errno));
	return fd < 0 ? -1 : fd;
}

int am_create(int dev, uint64_t size, uint32_t *id)
{
	struct accmap_create args = { .size = size, .flags = 0, .id = GARBAGE_U32 };
	int ret = raw_ioctl(dev, ACCMAP_IOC_CREATE, &args);

	if (!ret)
		*id = args.id;
	return ret;
}

int am_alloc(int dev, uint32_t id, uint32_t flags, uint16_t tag)
{
	struct accmap_alloc args = {
		.id = id,
		.heap_mask = ACCMAP_HEAP_MASK_SYSTEM,
		.flags = flags,
		.align = 0,
		.tag = tag,
		.pad = 0,
		.heap = GARBAGE_U32,
	};

	return raw_ioctl(dev, ACCMAP_IOC_ALLOC, &args);
}

int am_free(int dev, uint32_t id)
{
	struct accmap_free args = { .id = id, .pad = 0 };

	return raw_ioctl(dev, ACCMAP_IOC_FREE, &args);
}

int am_get_fd(int dev, uint32_t id, uint32_t fd_flags)
{
	struct accmap_get_fd args = {
		.id = id,
		.fd_flags = fd_flags,
		.fd = (int32_t)GARBAGE_U32,
		.pad = 0,
	};
	int ret = raw_ioctl(dev, ACCMAP_IOC_GET_FD, &args);

	return ret ? ret : args.fd;
}

int am_info(int dev, uint32_t id, struct accmap_info *info)
{
	memset(info, GARBAGE_BYTE, sizeof(*info));
	info->id = id;
	info->pad = 0;
	return raw_ioctl(dev, ACCMAP_IOC_INFO, info);
}

bool check_info(int dev, uint32_t id, uint64_t size, uint32_t heap, uint32_t flags,
		uint32_t state, uint16_t tag, const char *when)
{
	struct accmap_info info;
	bool ok = true;
	int ret;

	ret = am_info(dev, id, &info);
	if (!CHECK(ret == 0, "%s: INFO(id %u): %s", when, id, strerror(-ret)))
		return false;
	ok &= CHECK(info.id == id, "%s: INFO changed id %u to %u", when, id, info.id);
	ok &= CHECK(info.pad == 0, "%s: INFO changed pad to %#x", when, info.pad);
	ok &= CHECK(info.size == size, "%s: INFO size %llu, expected %llu", when,
		    (unsigned long long)info.size, (unsigned long long)size);
	ok &= CHECK(info.heap == heap, "%s: INFO heap %#x, expected %#x", when, info.heap, heap);
	ok &= CHECK(info.flags == flags, "%s: INFO flags %#x, expected %#x", when,
		    info.flags, flags);
	ok &= CHECK(info.state == state, "%s: INFO state %#x, expected %#x", when,
		    info.state, state);
	ok &= CHECK(info.tag == tag, "%s: INFO tag %#x, expected %#x", when, info.tag, tag);
	ok &= CHECK(info.pad2 == 0, "%s: INFO pad2 %#x, expected 0", when, info.pad2);
	return ok;
}

bool check_counts(int dev, uint32_t id, uint32_t handle_refs, uint32_t exports, uint32_t maps,
		  uint32_t attachments, const char *when)
{
	struct accmap_info info;
	int ret;

	ret = am_info(dev, id, &info);
	if (!CHECK(ret == 0, "%s: INFO(id %u): %s", when, id, strerror(-ret)))
		return false;
	return CHECK(info.handle_refs == handle_refs && info.exports == exports &&
		     info.maps == maps && info.attachments == attachments,
		     "%s: INFO counts refs %u exports %u maps %u attachments %u, expected %u %u %u %u",
		     when, info.handle_refs, info.exports, info.maps, info.attachments,
		     handle_refs, exports, maps, attachments);
}

int am_buffer(int dev, uint64_t size, uint32_t flags, uint32_t *id, bool want_fd)
{
	int ret;

	ret = am_create(dev, size, id);
	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return -1;
	ret = am_alloc(dev, *id, flags, 0);
	if (!CHECK(ret == 0, "ALLOC(id %u, flags %#x): %s", *id, flags, strerror(-ret)))
		return -1;
	if (!want_fd)
		return 0;
	ret = am_get_fd(dev, *id, O_RDWR | O_CLOEXEC);
	if (!CHECK(ret >= 0, "GET_FD(id %u): %s", *id, strerror(-ret)))
		return -1;
	return ret;
}

void *map_shared(int fd, size_t len, int prot, size_t offset)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)offset);

	if (!CHECK(p != MAP_FAILED, "mmap(len %zu, offset %zu): %s", len, offset,
		   strerror(errno)))
		return NULL;
	return p;
}

static uint8_t pattern_byte(size_t pos, unsigned int seed)
{
	uint32_t x = (uint32_t)pos * 2654435761U + (uint32_t)(pos >> 12) * 40503U + seed * 97U;

	x ^= x >> 15;
	/* Never 0, so a zero page can never pass for a pattern. */
	return (uint8_t)(x | 1);
}

void fill_pattern(void *buf, size_t len, size_t start, unsigned int seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(start + i, seed);
}

size_t find_pattern_mismatch(const void *buf, size_t len, size_t start, unsigned int seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i] != pattern_byte(start + i, seed))
			return i;
	}
	return len;
}

size_t find_nonzero(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++) {
		if (p[i])
			return i;
	}
	return len;
}

int next_fd(void)
{
	int fd = dup(STDERR_FILENO);

	if (fd >= 0)
		close(fd);
	return fd;
}

void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

bool child_go_reap(pid_t pid, int go_fd)
{
	int status = -1;

	if (write(go_fd, "g", 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited with %#x",
		     status);
}

/* ---- helpers for the ioctls after the first five ---- */

int am_from_fd(int dev, int fd, uint32_t *id)
{
	struct accmap_from_fd args = { .fd = fd, .flags = 0, .id = GARBAGE_U32, .pad = 0 };
	int ret = raw_ioctl(dev, ACCMAP_IOC_FROM_FD, &args);

	if (!ret)
		*id = args.id;
	return ret;
}

int am_rw(int dev, bool write, uint32_t id, const void *addr, uint64_t offset,
	  uint64_t elem_size, uint64_t user_stride, uint64_t handle_stride, uint64_t count,
	  uint64_t *bytes)
{
	struct accmap_rw args = {
		.addr = (uint64_t)(uintptr_t)addr,
		.offset = offset,
		.elem_size = elem_size,
		.user_stride = user_stride,
		.handle_stride = handle_stride,
		.count = count,
		.id = id,
		.flags = 0,
		.bytes = GARBAGE_U64,
	};
	int ret = raw_ioctl(dev, write ? ACCMAP_IOC_WRITE : ACCMAP_IOC_READ, &args);

	if (!ret && bytes)
		*bytes = args.bytes;
	return ret;
}

int am_write(int dev, uint32_t id, uint64_t offset, const void *buf, uint64_t len)
{
	return am_rw(dev, true, id, buf, offset, len, len, len, 1, NULL);
}

int am_read(int dev, uint32_t id, uint64_t offset, void *buf, uint64_t len)
{
	return am_rw(dev, false, id, buf, offset, len, len, len, 1, NULL);
}

int am_set_label(int dev, uint16_t tag, const char *label)
{
	struct accmap_tag_label args = { .tag = tag, .pad = 0, .flags = 0 };

	strncpy(args.label, label, sizeof(args.label) - 1);
	return raw_ioctl(dev, ACCMAP_IOC_SET_TAG_LABEL, &args);
}

int am_query_heap(int dev, uint32_t heap, struct accmap_heap_info *info)
{
	memset(info, GARBAGE_BYTE, sizeof(*info));
	info->heap = heap;
	info->pad = 0;
	return raw_ioctl(dev, ACCMAP_IOC_QUERY_HEAP, info);
}

unsigned long am_resize_cmd(unsigned long cmd, size_t size)
{
	return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
}

int am_query_pool(int dev, struct accmap_pool_info *info)
{
	memset(info, GARBAGE_BYTE, sizeof(*info));
	info->pad = 0;
	return raw_ioctl(dev, ACCMAP_IOC_QUERY_POOL, info);
}

int am_pool_wait_idle(int dev, unsigned int timeout_ms)
{
	for (unsigned int waited = 0;; waited += 10) {
		struct accmap_pool_info info;
		uint64_t dirty = 0;
		int ret = am_query_pool(dev, &info);

		if (ret)
			return ret;
		for (uint32_t i = 0; i < info.norders && i < ACCMAP_POOL_MAX_ORDERS; i++)
			dirty += info.orders[i].dirty;
		if (!dirty)
			return 0;
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
}

int am_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int am_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

int am_send_byte(int sock, char c)
{
	return send(sock, &c, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int am_recv_byte(int sock, char *c)
{
	return recv(sock, c, 1, 0) == 1 ? 0 : -1;
}

uint64_t meminfo_total_bytes(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return (uint64_t)kb * 1024;
}

void self_comm(char *comm)
{
	int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, comm, 15) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		n = 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

int fdinfo_value(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(val, len, "%s", line + klen + 1);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

bool write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok;
}

char *read_text(const char *path, size_t *len)
{
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);

			if (!bigger)
				goto fail;
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	/* The caller reports errno: that of open, read or malloc, not of close. */
	err = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return NULL;
}

/*
 * Cuts the line at *@p into its fields, stored at @out (room for @max);
 * moves *@p past the newline.  The number of fields, or 0 (a failed
 * check) if there are more than @max.
 */
static size_t dbg_split(char **p, char **out, size_t max, const char *path, size_t line)
{
	size_t f = 0;

	for (;;) {
		char *end = *p + strcspn(*p, "\t\n");
		char sep = *end;

		if (!CHECK(f < max, "%s: line %zu has more than %zu fields", path, line, max))
			return 0;
		out[f++] = *p;
		*end = '\0';
		*p = end + 1;
		if (sep == '\n')
			return f;
	}
}

bool dbg_read_keyed(const char *name, size_t nkeys, struct dbg_table *t)
{
	char path[128];
	size_t len = 0, lines = 0, fields;
	char *p;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", ACCMAP_DEBUGFS_DIR, name);
	t->text = read_text(path, &len);
	if (!CHECK(t->text, "read %s: %s", path, strerror(errno)))
		return false;
	if (!CHECK(len > 0 && t->text[len - 1] == '\n' && strlen(t->text) == len,
		   "%s: empty, NUL inside, or last line without a newline", path))
		goto bad;

	for (p = t->text; *p; p++)
		lines += *p == '\n';
	if (!CHECK(lines > nkeys, "%s: %zu lines, no header after %zu key lines", path, lines,
		   nkeys))
		goto bad;
	t->nkeys = nkeys;
	t->keys = calloc(2 * nkeys + 1, sizeof(*t->keys));
	if (!CHECK(t->keys, "calloc"))
		goto bad;
	p = t->text;
	for (size_t l = 0; l < nkeys; l++) {
		if (!CHECK(dbg_split(&p, t->keys + 2 * l, 2, path, l + 1) == 2,
			   "%s: line %zu is not key<TAB>value", path, l + 1))
			goto bad;
	}

	fields = 1;
	for (char *h = p; *h != '\n'; h++)
		fields += *h == '\t';
	t->ncols = fields;
	t->nrows = lines - nkeys - 1;
	t->cells = calloc((t->nrows + 1) * t->ncols, sizeof(*t->cells));
	if (!CHECK(t->cells, "calloc"))
		goto bad;
	for (size_t r = 0; r <= t->nrows; r++) {
		size_t f = dbg_split(&p, t->cells + r * t->ncols, t->ncols, path, nkeys + r + 1);

		if (!f)
			goto bad;
		if (!CHECK(f == t->ncols, "%s: line %zu has %zu fields, the header %zu", path,
			   nkeys + r + 1, f, t->ncols))
			goto bad;
	}
	return true;
bad:
	dbg_free(t);
	return false;
}

bool dbg_read(const char *name, struct dbg_table *t)
{
	return dbg_read_keyed(name, 0, t);
}

bool dbg_rows(const char *name, unsigned long long *rows, const char *col,
	      unsigned long long *sum)
{
	struct dbg_table tb;

	if (!dbg_read(name, &tb))
		return false;
	*rows = tb.nrows;
	if (sum) {
		*sum = 0;
		for (size_t r = 0; r < tb.nrows; r++)
			*sum += dbg_num(&tb, r, col);
	}
	dbg_free(&tb);
	return true;
}

void dbg_free(struct dbg_table *t)
{
	free(t->keys);
	free(t->cells);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

const char *dbg_key(const struct dbg_table *t, size_t i)
{
	return i < t->nkeys ? t->keys[2 * i] : "";
}

const char *dbg_value(const struct dbg_table *t, const char *key)
{
	for (size_t i = 0; i < t->nkeys; i++) {
		if (!strcmp(t->keys[2 * i], key))
			return t->keys[2 * i + 1];
	}
	return NULL;
}

int dbg_col(const struct dbg_table *t, const char *name)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (!strcmp(t->cells[c], name))
			return (int)c;
	}
	return -1;
}

const char *dbg_cell(const struct dbg_table *t, size_t row, const char *col)
{
	int c = dbg_col(t, col);

	if (c < 0 || row >= t->nrows)
		return "";
	return t->cells[(row + 1) * t->ncols + (size_t)c];
}

/* @s as an unsigned decimal number; ~0ULL if it is not one. */
static unsigned long long dbg_parse_num(const char *s)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return ~0ULL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		return ~0ULL;
	return v;
}

unsigned long long dbg_num(const struct dbg_table *t, size_t row, const char *col)
{
	return dbg_parse_num(dbg_cell(t, row, col));
}

unsigned long long dbg_value_num(const struct dbg_table *t, const char *key)
{
	const char *v = dbg_value(t, key);

	return v ? dbg_parse_num(v) : ~0ULL;
}

long long dbg_total(const char *name, const char *key)
{
	char line[256], path[128];
	size_t len = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ACCMAP_DEBUGFS_DIR, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == '\t')
			v = strtoll(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool dbg_match(const struct dbg_table *t, size_t row, const char *col1, const char *val1,
		      const char *col2, const char *val2)
{
	if (strcmp(dbg_cell(t, row, col1), val1))
		return false;
	return !col2 || !strcmp(dbg_cell(t, row, col2), val2);
}

long dbg_find(const struct dbg_table *t, const char *col1, const char *val1, const char *col2,
	      const char *val2)
{
	for (size_t r = 0; r < t->nrows; r++) {
		if (dbg_match(t, r, col1, val1, col2, val2))
			return (long)r;
	}
	return -1;
}

size_t dbg_count(const struct dbg_table *t, const char *col1, const char *val1, const char *col2,
		 const char *val2)
{
	size_t n = 0;

	for (size_t r = 0; r < t->nrows; r++)
		n += dbg_match(t, r, col1, val1, col2, val2);
	return n;
}

const char *err_name(int err)
{
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err < 0 ? -err : err);
	return name ? name : "unknown errno";
}

bool am_devmem_expected(void)
{
	const char *e = getenv("ACCMAP_DEVMEM");

	return e && (!strcmp(e, "private") || !strcmp(e, "coherent"));
}

const char *am_lacks_thp(void)
{
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0)
		return NULL;
	return "no /sys/kernel/mm/transparent_hugepage: a kernel without transparent huge pages";
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

long in_syscall(pid_t tid)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

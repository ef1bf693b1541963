// SPDX-License-Identifier: GPL-2.0
/*
 * accmap_criu: the CRIU plugin for processes that use /dev/accmap.
 *
 * Dump (in CRIU's process):
 *   DUMP_EXT_FILE      a /dev/accmap file: its client's state
 *                      (ACCMAP_CKPT_OP_STATE) and the contents of its
 *                      buffers; an accmap dma-buf file: its buffer's
 *                      record and contents.  Anything accmap cannot bring
 *                      back fails the dump with one line naming it.
 *   HANDLE_DEVICE_VMA  accepts mappings of /dev/accmap (their buffers'
 *                      contents are in our images, not CRIU's); refuses,
 *                      by name, mappings of accmap dma-buf files, which
 *                      CRIU 3.17 cannot restore.
 * Restore:
 *   init               CRIU's main process begins the restore
 *                      (RESTORE_BEGIN); the forked tree inherits the token.
 *   RESTORE_EXT_FILE   in each restored process: a new client made the
 *                      dumped one, every id back, sessions queued; or a
 *                      dma-buf of the restored buffer.
 *   UPDATE_VMA_MAP     a /dev/accmap mapping's new offset, and the file to
 *                      map it through.
 *   RESUME_DEVICES_LATE in CRIU's main process, once per restored process,
 *                      every process having restored its files: its
 *                      memory is final, its FROM_VA buffers are pinned and
 *                      its sessions made (RESTORE_FINISH); then
 *                      RESTORE_LEFT says whether the restore holds a
 *                      FROM_VA buffer or session that no FINISH still to
 *                      come will make (its process is not in the restored
 *                      tree).  Either failure is named in CRIU's log.
 *   fini               closing the main process's file ends the restore.
 *
 * CRIU (3.17 and later) ignores what RESUME_DEVICES_LATE returns, and by
 * then the tree is restored: so that a failure there fails the restore
 * rather than resuming a process whose device memory is not there, the
 * plugin kills that process (SIGKILL).  The tree is still stopped under
 * CRIU's ptrace, so CRIU's detaching it fails, CRIU kills the whole tree
 * and "Restoring FAILED" is its result.
 *
 * Images, in CRIU's image directory: accmap-file-<id>.img per dumped file
 * (struct accmap_criu_file, then the state or a buffer record), and
 * accmap-buf-<serial>.img with the bytes of each buffer, written once per
 * dump however many files name the buffer.  A dump replaces the images an
 * earlier dump left in the directory (--leave-running, dumped twice) and
 * never writes or reads through a symbolic link there: images are made
 * anew (unlink, then O_CREAT | O_EXCL) and opened with O_NOFOLLOW.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <signal.h>
#include <unistd.h>
#include <dirent.h>

#include <criu/criu-plugin.h>
#include "criu_log.h"
#include <linux/accmap.h>

#define ACCMAP_DEV		"/dev/accmap"
#define CRIU_FILE_MAGIC		0x41434346	/* "ACCF" */
#define CRIU_FILE_CLIENT	1
#define CRIU_FILE_DMABUF	2
/* Bytes read or written per call when saving contents. */
#define COPY_CHUNK		(4u << 20)

/**
 * struct accmap_criu_file - head of an accmap-file-<id>.img
 * @magic: CRIU_FILE_MAGIC
 * @type:  CRIU_FILE_CLIENT (a STATE follows, @size bytes) or
 *         CRIU_FILE_DMABUF (a struct accmap_ckpt_handle follows)
 * @mode:  DMABUF: O_RDONLY or O_RDWR
 * @pad:   0
 * @size:  bytes after this head
 */
struct accmap_criu_file {
	uint32_t magic;
	uint32_t type;
	uint32_t mode;
	uint32_t pad;
	uint64_t size;
};

/* Restore: the token of CRIU's main process, inherited by the tree. */
static int restore_fd = -1;
static uint64_t restore_token;

/* Dump: the plugin's own client, for dma-bufs no dumped file names. */
static int own_fd = -1;

/* Dump: the serials whose accmap-buf image this dump wrote. */
static uint64_t *saved;
static size_t nr_saved;

/* Restore, per process: what RESTORE_EXT_FILE read, for UPDATE_VMA_MAP. */
static struct accmap_ckpt_handle *known;
static size_t nr_known;

__printf(1, 2)
static void say(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (print_on_level)
		print_on_level(CRIU_LOG_ERROR, "accmap_criu: %s\n", msg);
	else
		fprintf(stderr, "accmap_criu: %s\n", msg);
}

static int ckpt(int fd, struct accmap_ckpt *arg)
{
	return ioctl(fd, ACCMAP_IOC_CHECKPOINT, arg) ? -errno : 0;
}

/* Whether @st is /dev/accmap (any open of it). */
static bool is_accmap_dev(const struct stat *st)
{
	struct stat dev;

	return S_ISCHR(st->st_mode) && !stat(ACCMAP_DEV, &dev) &&
	       dev.st_rdev == st->st_rdev;
}

static int dev_open(void)
{
	if (own_fd < 0)
		own_fd = open(ACCMAP_DEV, O_RDWR | O_CLOEXEC);
	return own_fd;
}

/* The exporter name of dma-buf @fd, from its fdinfo, or "" if none. */
static void exporter_of(int fd, char *name, size_t len)
{
	char path[64], line[256];
	FILE *f;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "exp_name:", 9)) {
			char *v = line + 9;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			strncpy(name, v, len - 1);
			name[len - 1] = '\0';
			break;
		}
	fclose(f);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Whether this dump wrote the image of @serial; else notes that it will. */
static int saved_already(uint64_t serial, bool *already)
{
	uint64_t *more;
	size_t i;

	for (i = 0; i < nr_saved; i++)
		if (saved[i] == serial) {
			*already = true;
			return 0;
		}
	*already = false;
	more = realloc(saved, (nr_saved + 1) * sizeof(*saved));
	if (!more)
		return -ENOMEM;
	saved = more;
	saved[nr_saved++] = serial;
	return 0;
}

/*
 * A new image @name in CRIU's image directory: whatever an earlier dump
 * left there under that name goes (a symbolic link too: never followed).
 */
static int image_create(const char *name)
{
	int dir = criu_get_image_dir(), fd;

	if (unlinkat(dir, name, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dir, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/*
 * Saves the bytes of buffer @rec, read through @id of client @fd, unless
 * another file of this dump saved them already.
 */
static int save_contents(int fd, uint32_t id,
			 const struct accmap_ckpt_handle *rec)
{
	char name[64];
	uint64_t off;
	bool already;
	void *buf;
	int out, ret = 0;

	if (rec->kind != ACCMAP_CKPT_KIND_ALLOC)
		return 0;
	ret = saved_already(rec->serial, &already);
	if (ret || already)
		return ret;
	snprintf(name, sizeof(name), "accmap-buf-%llu.img",
		 (unsigned long long)rec->serial);
	out = image_create(name);
	if (out < 0) {
		say("cannot write image %s: %s", name, strerror(-out));
		return out;
	}
	buf = malloc(COPY_CHUNK);
	if (!buf) {
		close(out);
		return -ENOMEM;
	}
	for (off = 0; off < rec->size && !ret; off += COPY_CHUNK) {
		uint64_t len = rec->size - off < COPY_CHUNK ?
			       rec->size - off : COPY_CHUNK;
		struct accmap_rw rw = {
			.addr = (uintptr_t)buf,
			.offset = off,
			.elem_size = len,
			.count = 1,
			.id = id,
		};

		if (ioctl(fd, ACCMAP_IOC_READ, &rw))
			ret = -errno;
		else
			ret = write_all(out, buf, len);
	}
	free(buf);
	close(out);
	if (ret)
		say("saving buffer %u (%llu bytes) failed: %s", id,
		    (unsigned long long)rec->size, strerror(-ret));
	return ret;
}

static int save_file(int id, const struct accmap_criu_file *head,
		     const void *body)
{
	char name[64];
	int out, ret;

	snprintf(name, sizeof(name), "accmap-file-%d.img", id);
	out = image_create(name);
	if (out < 0) {
		say("cannot write image %s: %s", name, strerror(-out));
		return out;
	}
	ret = write_all(out, head, sizeof(*head));
	if (!ret)
		ret = write_all(out, body, head->size);
	close(out);
	return ret;
}

static void say_refused(const struct accmap_ckpt *arg, int err)
{
	switch (arg->bad_kind) {
	case ACCMAP_CKPT_BAD_SESSION_BUSY:
		say("cannot checkpoint: replay session %u is running, or maps a freed buffer",
		    arg->bad_id);
		break;
	case ACCMAP_CKPT_BAD_SESSION_MMIO:
		say("cannot checkpoint: replay session %u drives a register window",
		    arg->bad_id);
		break;
	case ACCMAP_CKPT_BAD_RESTORING:
		say("cannot checkpoint: the file is part of a restore");
		break;
	default:
		say("cannot checkpoint the client: %s", strerror(-err));
		break;
	}
}

/*
 * The pid process @pid (in this process's namespace) has in its own pid
 * namespace, the innermost: the last number of /proc/PID/status's NSpid
 * line (@pid itself on a kernel without one).  0 or -errno.
 */
static int own_ns_pid(uint32_t pid, uint32_t *out)
{
	char path[64], line[256];
	int ret = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*out = pid;
	while (fgets(line, sizeof(line), f)) {
		char *last, *p;

		if (strncmp(line, "NSpid:", 6)) {
			if (!strncmp(line, "Pid:", 4))
				ret = 0;
			continue;
		}
		line[strcspn(line, "\n")] = '\0';
		last = NULL;
		for (p = strtok(line + 6, " \t"); p; p = strtok(NULL, " \t"))
			last = p;
		if (last)
			*out = strtoul(last, NULL, 10);
		ret = *out ? 0 : -ESRCH;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * FROM_VA records name the process whose memory they pin; STATE gives
 * its pid in our namespace, the restore needs it in the namespace the
 * dumped process sees (the one a restore into a new pid namespace makes
 * again).  0, or -ESRCH naming a buffer whose process is not there.
 */
static int translate_origins(struct accmap_ckpt_handle *h, uint32_t n)
{
	uint32_t i, pid = 0;
	int ret;

	for (i = 0; i < n; i++) {
		if (h[i].kind != ACCMAP_CKPT_KIND_FROM_VA)
			continue;
		ret = h[i].origin_pid ? own_ns_pid(h[i].origin_pid, &pid) : -ESRCH;
		if (ret) {
			say("cannot checkpoint id %u (buffer %llu): %s %u, %s",
			    h[i].id, (unsigned long long)h[i].serial,
			    "it pins memory of process", h[i].origin_pid,
			    "which is not running in this pid namespace");
			return -ESRCH;
		}
		h[i].origin_pid = pid;
	}
	return 0;
}

static int dump_client(int fd, int id)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_STATE };
	struct accmap_criu_file head = {
		.magic = CRIU_FILE_MAGIC,
		.type = CRIU_FILE_CLIENT,
	};
	struct accmap_ckpt_client *state;
	struct accmap_ckpt_handle *h;
	uint32_t i;
	int ret;

	ret = ckpt(fd, &arg);
	if (ret != -ENOSPC) {
		say_refused(&arg, ret ? ret : -EIO);
		return ret ? ret : -EIO;
	}
	/* A size this build cannot hold (32-bit) is not a state to save. */
	state = arg.size < SIZE_MAX ? malloc(arg.size) : NULL;
	if (!state)
		return -ENOMEM;
	arg.data = (uintptr_t)state;
	ret = ckpt(fd, &arg);
	if (ret) {
		say_refused(&arg, ret);
		goto out;
	}
	h = (void *)(state + 1);
	ret = translate_origins(h, state->nr_handles);
	for (i = 0; i < state->nr_handles && !ret; i++)
		ret = save_contents(fd, h[i].id, &h[i]);
	head.size = state->size;
	if (!ret)
		ret = save_file(id, &head, state);
out:
	free(state);
	return ret;
}

static int dump_dmabuf(int fd, int id, const struct accmap_ckpt *arg,
		       const struct accmap_ckpt_handle *rec)
{
	struct accmap_criu_file head = {
		.magic = CRIU_FILE_MAGIC,
		.type = CRIU_FILE_DMABUF,
		.mode = arg->dmabuf_mode,
		.size = sizeof(*rec),
	};
	struct accmap_from_fd imp = { .fd = fd };
	struct accmap_free fr = { 0 };
	int ret;

	if (rec->kind == ACCMAP_CKPT_KIND_FROM_VA) {
		/* Its memory is back only at RESUME_DEVICES_LATE. */
		say("cannot checkpoint fd %d: a dma-buf of FROM_VA memory at %#llx",
		    fd, (unsigned long long)rec->va);
		return -EOPNOTSUPP;
	}
	/* Its bytes, through an id of our own. */
	if (ioctl(own_fd, ACCMAP_IOC_FROM_FD, &imp))
		return -errno;
	ret = save_contents(own_fd, imp.id, rec);
	fr.id = imp.id;
	ioctl(own_fd, ACCMAP_IOC_FREE, &fr);
	return ret ? ret : save_file(id, &head, rec);
}

static int accmap_dump_file(int fd, int id)
{
	struct accmap_ckpt_handle rec;
	struct accmap_ckpt arg = {
		.op = ACCMAP_CKPT_OP_DMABUF,
		.fd = fd,
		.data = (uintptr_t)&rec,
		.size = sizeof(rec),
	};
	char exp[64];
	struct stat st;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	if (is_accmap_dev(&st))
		return dump_client(fd, id);
	if (dev_open() < 0)
		return -ENOTSUP;
	ret = ckpt(own_fd, &arg);
	if (!ret)
		return dump_dmabuf(fd, id, &arg, &rec);
	exporter_of(fd, exp, sizeof(exp));
	if (exp[0] && ret == -EXDEV)
		say("fd %d is a dma-buf exported by %s, not by accmap: accmap cannot checkpoint it",
		    fd, exp);
	return -ENOTSUP;
}

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, accmap_dump_file)

static int accmap_handle_vma(int fd, const struct stat *st)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_DMABUF, .fd = fd };

	if (is_accmap_dev(st))
		return 0;
	if (dev_open() >= 0 && !ckpt(own_fd, &arg)) {
		say("cannot checkpoint a mapping of an accmap dma-buf (%llu bytes)",
		    (unsigned long long)arg.dmabuf_size);
		return -EOPNOTSUPP;
	}
	return -ENOTSUP;
}

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, accmap_handle_vma)

/* Reads accmap-file-<id>.img: its head, and its body in *@body (malloc). */
static int load_file(int id, struct accmap_criu_file *head, void **body)
{
	char name[64];
	int in, ret;

	snprintf(name, sizeof(name), "accmap-file-%d.img", id);
	in = openat(criu_get_image_dir(), name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? -ENOTSUP : -errno;
	ret = read_all(in, head, sizeof(*head));
	/* SIZE_MAX: 2^32 passes the first test but not malloc() on 32 bits. */
	if (!ret && (head->magic != CRIU_FILE_MAGIC || head->pad ||
		     head->size > (1ull << 32) || head->size >= SIZE_MAX))
		ret = -EINVAL;
	if (!ret) {
		*body = malloc(head->size ? head->size : 1);
		ret = *body ? read_all(in, *body, head->size) : -ENOMEM;
		if (ret)
			free(*body);
	}
	close(in);
	if (ret)
		say("image %s is unreadable or damaged: %s", name, strerror(-ret));
	return ret;
}

/* Maps the saved bytes of @rec (or returns NULL where it has none). */
static void *map_contents(const struct accmap_ckpt_handle *rec, int *err)
{
	char name[64];
	struct stat st;
	void *p;
	int in;

	*err = 0;
	if (rec->kind != ACCMAP_CKPT_KIND_ALLOC)
		return NULL;
	snprintf(name, sizeof(name), "accmap-buf-%llu.img",
		 (unsigned long long)rec->serial);
	in = openat(criu_get_image_dir(), name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0) {
		*err = -errno;
		say("cannot open image %s: %s", name, strerror(errno));
		return NULL;
	}
	/* mmap() takes a size_t: no wrapping on 32-bit builds. */
	if (fstat(in, &st) || !S_ISREG(st.st_mode) || rec->size > SIZE_MAX ||
	    (uint64_t)st.st_size != rec->size) {
		say("image %s does not hold the buffer's %llu bytes", name,
		    (unsigned long long)rec->size);
		close(in);
		*err = -EINVAL;
		return NULL;
	}
	p = mmap(NULL, rec->size, PROT_READ, MAP_PRIVATE, in, 0);
	close(in);
	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

/* RESTORE_BUFFER of @rec, with its contents; returns 0 or a new fd. */
static int restore_buffer(int fd, const struct accmap_ckpt_handle *rec,
			  uint32_t flags)
{
	struct accmap_ckpt arg = {
		.op = ACCMAP_CKPT_OP_RESTORE_BUFFER,
		.flags = flags,
		.token = restore_token,
		.data = (uintptr_t)rec,
		.size = sizeof(*rec),
	};
	void *contents;
	int ret;

	contents = map_contents(rec, &ret);
	if (ret)
		return ret;
	arg.contents = (uintptr_t)contents;
	ret = ckpt(fd, &arg);
	if (contents)
		munmap(contents, rec->size);
	if (ret) {
		say("restoring buffer %llu (id %u, %llu bytes) failed: %s",
		    (unsigned long long)rec->serial, rec->id,
		    (unsigned long long)rec->size, strerror(-ret));
		return ret;
	}
	return flags & (ACCMAP_CKPT_FD_RDONLY | ACCMAP_CKPT_FD_RDWR) ? arg.fd : 0;
}

/* Remembers @n records for UPDATE_VMA_MAP. */
static int remember(const struct accmap_ckpt_handle *recs, size_t n)
{
	struct accmap_ckpt_handle *more;

	more = realloc(known, (nr_known + n) * sizeof(*known));
	if (!more)
		return -ENOMEM;
	known = more;
	memcpy(known + nr_known, recs, n * sizeof(*recs));
	nr_known += n;
	return 0;
}

/* Checks that a STATE from an image is whole before anything uses it. */
static int check_state(const struct accmap_ckpt_client *s, uint64_t size)
{
	const char *p, *end = (const char *)s + size;
	uint32_t i;

	if (size < sizeof(*s) || s->magic != ACCMAP_CKPT_MAGIC ||
	    s->version != ACCMAP_CKPT_VERSION || s->size != size ||
	    s->nr_handles > ACCMAP_CKPT_HANDLES_MAX ||
	    s->nr_sessions > ACCMAP_CKPT_SESSIONS_MAX ||
	    (uint64_t)s->nr_handles * sizeof(struct accmap_ckpt_handle) >
	    size - sizeof(*s))
		return -EINVAL;
	p = (const char *)(s + 1) +
	    s->nr_handles * sizeof(struct accmap_ckpt_handle);
	for (i = 0; i < s->nr_sessions; i++) {
		const struct accmap_ckpt_session *r = (const void *)p;

		if ((size_t)(end - p) < sizeof(*r) ||
		    r->nr_maps > ACCMAP_REPLAY_MAPS_MAX ||
		    r->nr_attrs > ACCMAP_SVM_ATTR_RANGES_MAX)
			return -EINVAL;
		p += sizeof(*r) + r->nr_maps * sizeof(struct accmap_replay_map) +
		     r->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
		if (p > end)
			return -EINVAL;
	}
	return p == end ? 0 : -EINVAL;
}

static int restore_client(const struct accmap_ckpt_client *s, uint64_t size)
{
	struct accmap_ckpt arg = {
		.op = ACCMAP_CKPT_OP_RESTORE_CLIENT,
		.token = restore_token,
		.data = (uintptr_t)s,
		.size = sizeof(*s),
	};
	const struct accmap_ckpt_handle *h = (const void *)(s + 1);
	const char *p;
	uint32_t i;
	int fd, ret;

	if (check_state(s, size)) {
		say("the client image is damaged (sizes or counts do not add up)");
		return -EINVAL;
	}
	fd = open(ACCMAP_DEV, O_RDWR);
	if (fd < 0)
		return -errno;
	ret = ckpt(fd, &arg);
	for (i = 0; i < s->nr_handles && !ret; i++)
		ret = restore_buffer(fd, &h[i], ACCMAP_CKPT_ADD_ID);
	p = (const char *)(h + s->nr_handles);
	for (i = 0; i < s->nr_sessions && !ret; i++) {
		const struct accmap_ckpt_session *r = (const void *)p;
		size_t len = sizeof(*r) +
			     r->nr_maps * sizeof(struct accmap_replay_map) +
			     r->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
		struct accmap_ckpt sarg = {
			.op = ACCMAP_CKPT_OP_RESTORE_SESSION,
			.token = restore_token,
			.data = (uintptr_t)r,
			.size = len,
		};

		ret = ckpt(fd, &sarg);
		if (ret)
			say("queueing replay session %u failed: %s", r->id,
			    strerror(-ret));
		p += len;
	}
	if (!ret)
		ret = remember(h, s->nr_handles);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static int accmap_restore_file(int id)
{
	struct accmap_criu_file head;
	void *body = NULL;
	int fd, tmp, ret;

	ret = load_file(id, &head, &body);
	if (ret)
		return ret;
	if (restore_fd < 0) {
		say("no restore in progress: is the accmap module loaded?");
		free(body);
		return -ENODEV;
	}
	if (head.type == CRIU_FILE_CLIENT) {
		fd = restore_client(body, head.size);
	} else if (head.type == CRIU_FILE_DMABUF &&
		   head.size == sizeof(struct accmap_ckpt_handle)) {
		tmp = open(ACCMAP_DEV, O_RDWR | O_CLOEXEC);
		fd = tmp < 0 ? -errno :
		     restore_buffer(tmp, body, head.mode == O_RDWR ?
				    ACCMAP_CKPT_FD_RDWR : ACCMAP_CKPT_FD_RDONLY);
		if (fd >= 0)
			ret = remember(body, 1);
		if (tmp >= 0)
			close(tmp);
		if (ret) {
			close(fd);
			fd = ret;
		}
	} else {
		say("image accmap-file-%d.img is damaged", id);
		fd = -EINVAL;
	}
	free(body);
	return fd;
}

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, accmap_restore_file)

/*
 * The restored buffer's new offset, through an accmap file of this
 * process that is being restored (or a new one made for it).  CRIU's
 * "pgoff" is the mapping's file offset in bytes, as /proc/PID/maps shows
 * it, both ways.
 */
static int accmap_update_vma(const char *path, const uint64_t addr,
			     const uint64_t old_pgoff, uint64_t *new_pgoff,
			     int *plugin_fd)
{
	uint64_t old = old_pgoff;
	const struct accmap_ckpt_handle *rec = NULL;
	struct accmap_ckpt arg = {
		.op = ACCMAP_CKPT_OP_RESTORE_OFFSET,
		.token = restore_token,
	};
	struct dirent *de;
	DIR *dir;
	size_t i;
	int fd = -1;

	if (strcmp(path, ACCMAP_DEV))
		return -ENOTSUP;
	for (i = 0; i < nr_known && !rec; i++)
		if (known[i].map_offset && old >= known[i].map_offset &&
		    old - known[i].map_offset < known[i].size)
			rec = &known[i];
	if (!rec) {
		say("the mapping at %#llx (offset %#llx) names no buffer of the images",
		    (unsigned long long)addr, (unsigned long long)old);
		return -ENOENT;
	}
	arg.serial = rec->serial;

	dir = opendir("/proc/self/fd");
	while (dir && (de = readdir(dir))) {
		char link[300], target[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, ACCMAP_DEV))
			continue;
		fd = atoi(de->d_name);
		if (!ckpt(fd, &arg))
			break;
		fd = -1;
	}
	if (dir)
		closedir(dir);
	if (fd < 0) {
		struct accmap_ckpt_client empty = {
			.magic = ACCMAP_CKPT_MAGIC,
			.version = ACCMAP_CKPT_VERSION,
			.size = sizeof(empty),
			.next_id = 1,
		};
		struct accmap_ckpt carg = {
			.op = ACCMAP_CKPT_OP_RESTORE_CLIENT,
			.token = restore_token,
			.data = (uintptr_t)&empty,
			.size = sizeof(empty),
		};

		/* Only the mapping kept this file: CRIU closes our number. */
		fd = open(ACCMAP_DEV, O_RDWR);
		if (fd < 0 || ckpt(fd, &carg) || ckpt(fd, &arg)) {
			say("no file to map buffer %llu at %#llx through",
			    (unsigned long long)rec->serial,
			    (unsigned long long)addr);
			if (fd >= 0)
				close(fd);
			return -EIO;
		}
	}
	*new_pgoff = arg.map_offset + (old - rec->map_offset);
	*plugin_fd = fd;
	return 1;
}

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, accmap_update_vma)

/*
 * Fails the restore from RESUME_DEVICES_LATE, whose result CRIU ignores:
 * process @pid, still stopped by CRIU, is killed, so CRIU's detaching it
 * fails and CRIU kills the tree (see the head of this file).
 */
static int fail_restore(int pid, int err)
{
	say("killing restored process %d: criu then fails the restore", pid);
	kill(pid, SIGKILL);
	return err;
}

static int accmap_resume_late(int pid)
{
	struct accmap_ckpt arg = {
		.op = ACCMAP_CKPT_OP_RESTORE_FINISH,
		.token = restore_token,
		.pid = pid,
	};
	struct accmap_ckpt left = {
		.op = ACCMAP_CKPT_OP_RESTORE_LEFT,
		.token = restore_token,
	};
	int ret;

	if (restore_fd < 0)
		return -ENOTSUP;
	ret = ckpt(restore_fd, &arg);
	/* A process that opened no accmap file never joined: nothing to do. */
	if (ret && ret != -EPERM) {
		say("finishing the restore of process %d failed: %s", pid,
		    strerror(-ret));
		return fail_restore(pid, ret);
	}
	/*
	 * Every restored process joined before the first of these calls:
	 * what no FINISH still to come will make is never made.
	 */
	ret = ckpt(restore_fd, &left);
	if (ret) {
		say("cannot ask what the restore left unmade: %s", strerror(-ret));
		return fail_restore(pid, ret);
	}
	if (!left.done)
		return 0;
	if (left.bad_kind == ACCMAP_CKPT_BAD_NO_PINNER)
		say("buffer %llu (FROM_VA) pins memory of process %u, %s: %u %s",
		    (unsigned long long)left.serial, left.bad_id,
		    "which is not in the restored tree", left.done,
		    "buffer(s) or session(s) cannot be restored");
	else
		say("replay session %u was queued by a process %s: %u %s",
		    left.bad_id, "that is not in the restored tree", left.done,
		    "buffer(s) or session(s) cannot be restored");
	return fail_restore(pid, -ESRCH);
}

CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, accmap_resume_late)

static int accmap_init(int stage)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_RESTORE_BEGIN };

	if (stage != CR_PLUGIN_STAGE__RESTORE)
		return 0;
	/* No module, no accmap files to restore: nothing to do. */
	restore_fd = open(ACCMAP_DEV, O_RDWR | O_CLOEXEC);
	if (restore_fd < 0)
		return 0;
	if (ckpt(restore_fd, &arg)) {
		say("cannot begin a restore: %s", strerror(errno));
		close(restore_fd);
		restore_fd = -1;
		return -1;
	}
	restore_token = arg.token;
	return 0;
}

static void accmap_fini(int stage, int ret)
{
	(void)stage;
	(void)ret;
	if (restore_fd >= 0)
		close(restore_fd);
	if (own_fd >= 0)
		close(own_fd);
	restore_fd = -1;
	own_fd = -1;
	free(saved);
	saved = NULL;
	nr_saved = 0;
	free(known);
	known = NULL;
	nr_known = 0;
}

CR_PLUGIN_REGISTER("accmap", accmap_init, accmap_fini)

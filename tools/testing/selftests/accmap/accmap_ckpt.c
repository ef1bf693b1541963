// SPDX-License-Identifier: GPL-2.0
/*
 * ACCMAP_IOC_CHECKPOINT, the kernel side of checkpoint and restore, driven
 * directly in one process (as root), without CRIU: STATE of a client with
 * every kind of id (system, write-combined, empty, FROM_VA, a read-only
 * id of a shared buffer, a labelled tag, a kept export) and with replay
 * sessions (SVM with attribute ranges, and one mapping a buffer); a
 * restore of that state into a fresh client of the same process (same
 * ids, contents, dma-bufs, next id, sessions, FROM_VA pins) that gives
 * every byte back when closed; and every errno of the ops.
 *
 * Sizes follow sysconf(_SC_PAGESIZE): the test runs with 4 and 16 KiB
 * CPU pages.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "accmap.h"
#include "accmap_util.h"
#include "simdrv.h"
#include "svm_util.h"
#include "tap.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

/* Tags of the test client: one plain, one labelled, the FROM_VA one's. */
#define TAG_SYS			0x0c01
#define TAG_LBL			0x0c02
#define TAG_VA			0x0c03
#define LABEL			"ckpt-test"
/* Where the plain session maps the system buffer. */
#define PLAIN_GPU_VA		0x100000ULL
#define PLAIN_VA_BITS		32
/* A session record with no maps: an SVM one, over [1 MiB, 2 MiB). */
#define REC_SVM_START		0x100000ULL
#define REC_SVM_SIZE		0x100000ULL
/* A pid above PID_MAX_LIMIT: no process has it. */
#define NO_PID			((1U << 22) + 1)

static size_t ps;

/* For printing: uint64_t is not unsigned long long everywhere. */
static unsigned long long ull(uint64_t v)
{
	return v;
}

/* ---- the ioctl ---- */

static void ckpt_init(struct accmap_ckpt *a, uint32_t op)
{
	memset(a, 0, sizeof(*a));
	a->op = op;
}

static int ckpt(int dev, struct accmap_ckpt *a)
{
	return raw_ioctl(dev, ACCMAP_IOC_CHECKPOINT, a);
}

/*
 * STATE of @dev's client into malloc'ed memory (*@state, *@size): asks
 * the size first (which must fail with ENOSPC and say it), then the
 * state.  0 or -errno; fails the test on an unexpected first answer.
 */
static int state_get(int dev, struct accmap_ckpt_client **state, size_t *size)
{
	struct accmap_ckpt a;
	void *buf;
	int ret;

	*state = NULL;
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	ret = ckpt(dev, &a);
	if (!CHECK(ret == -ENOSPC && a.size >= sizeof(**state),
		   "STATE with no room: %s, size %llu", err_name(ret), ull(a.size)))
		return ret ? ret : -EPROTO;
	buf = calloc(1, a.size);
	if (!CHECK(buf, "calloc(%llu)", ull(a.size)))
		return -ENOMEM;
	a.data = (uintptr_t)buf;
	ret = ckpt(dev, &a);
	if (ret) {
		free(buf);
		return ret;
	}
	*state = buf;
	*size = a.size;
	return 0;
}

static struct accmap_ckpt_handle *recs(const struct accmap_ckpt_client *st)
{
	return (struct accmap_ckpt_handle *)(st + 1);
}

/* The record of id @id, or NULL (a failed check). */
static struct accmap_ckpt_handle *rec_of(const struct accmap_ckpt_client *st, uint32_t id)
{
	for (uint32_t i = 0; i < st->nr_handles; i++)
		if (recs(st)[i].id == id)
			return &recs(st)[i];
	CHECK(0, "STATE has no record of id %u", id);
	return NULL;
}

static size_t session_bytes(const struct accmap_ckpt_session *s)
{
	return sizeof(*s) + s->nr_maps * sizeof(struct accmap_replay_map) +
	       s->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
}

/* Session record @n of @st (the caller checked nr_sessions). */
static struct accmap_ckpt_session *session_rec(const struct accmap_ckpt_client *st, uint32_t n)
{
	uint8_t *p = (uint8_t *)(recs(st) + st->nr_handles);

	while (n--)
		p += session_bytes((struct accmap_ckpt_session *)p);
	return (struct accmap_ckpt_session *)p;
}

static struct accmap_replay_map *session_maps(struct accmap_ckpt_session *s)
{
	return (struct accmap_replay_map *)(s + 1);
}

static struct accmap_ckpt_svm_attr *session_attrs(struct accmap_ckpt_session *s)
{
	return (struct accmap_ckpt_svm_attr *)(session_maps(s) + s->nr_maps);
}

/* RESTORE_BUFFER of @rec; the fd in *@fd if asked for.  0 or -errno. */
static int restore_buffer(int dev, uint64_t token, uint32_t flags,
			  const struct accmap_ckpt_handle *rec, const void *contents, int *fd)
{
	struct accmap_ckpt a;
	int ret;

	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_BUFFER);
	a.flags = flags;
	a.token = token;
	a.data = (uintptr_t)rec;
	a.size = sizeof(*rec);
	a.contents = (uintptr_t)contents;
	ret = ckpt(dev, &a);
	if (!(flags & (ACCMAP_CKPT_FD_RDONLY | ACCMAP_CKPT_FD_RDWR)) || ret)
		a.fd = -1;
	if (fd)
		*fd = a.fd;
	else if (a.fd >= 0)
		close(a.fd);
	return ret;
}

static int restore_client(int dev, uint64_t token, const struct accmap_ckpt_client *head)
{
	struct accmap_ckpt a;

	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_CLIENT);
	a.token = token;
	a.data = (uintptr_t)head;
	a.size = sizeof(*head);
	return ckpt(dev, &a);
}

static int restore_session(int dev, uint64_t token, const struct accmap_ckpt_session *s,
			   uint64_t size)
{
	struct accmap_ckpt a;

	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_SESSION);
	a.token = token;
	a.data = (uintptr_t)s;
	a.size = size;
	return ckpt(dev, &a);
}

static int restore_finish(int dev, uint64_t token, uint32_t pid, uint32_t *done)
{
	struct accmap_ckpt a;
	int ret;

	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_FINISH);
	a.token = token;
	a.pid = pid;
	a.done = GARBAGE_U32;
	ret = ckpt(dev, &a);
	if (done)
		*done = a.done;
	return ret;
}

/* RESTORE_LEFT on @dev; its answer in @a. */
static int restore_left(int dev, uint64_t token, struct accmap_ckpt *a)
{
	ckpt_init(a, ACCMAP_CKPT_OP_RESTORE_LEFT);
	a->token = token;
	a->done = GARBAGE_U32;
	a->bad_kind = GARBAGE_U32;
	a->bad_id = GARBAGE_U32;
	return ckpt(dev, a);
}

/* RESTORE_BEGIN that must succeed; the token, 0 after a failure. */
static uint64_t restore_begin(int dev)
{
	struct accmap_ckpt a;
	int ret;

	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_BEGIN);
	ret = ckpt(dev, &a);
	if (!CHECK(ret == 0 && a.token, "RESTORE_BEGIN: %s, token %#llx", err_name(ret),
		   ull(a.token)))
		return 0;
	return a.token;
}

/* Bytes the system and user heaps hold, summed; ~0 if unknown. */
static uint64_t heaps_used(void)
{
	struct accmap_heap_info sys, user;
	int dev = am_open(), ret1, ret2;

	if (dev < 0)
		return ~0ULL;
	ret1 = am_query_heap(dev, ACCMAP_HEAP_SYSTEM, &sys);
	ret2 = am_query_heap(dev, ACCMAP_HEAP_USER, &user);
	close(dev);
	if (!CHECK(ret1 == 0 && ret2 == 0, "QUERY_HEAP: %s, %s", err_name(ret1), err_name(ret2)))
		return ~0ULL;
	return sys.used + user.used;
}

static void check_used(uint64_t before, const char *when)
{
	uint64_t now = heaps_used();

	CHECK(now == before, "%s: the heaps hold %llu bytes, %llu before", when, ull(now),
	      ull(before));
}

/* ---- the client under test ---- */

/**
 * struct cli - a client with every kind of id
 * @dev:    its file
 * @sys:    system heap, 4 pages, pattern 1, tag TAG_SYS
 * @ro:     a read-only id of @sys (FROM_FD of an O_RDONLY dma-buf)
 * @wc:     write-combined, 2 pages, pattern 2
 * @empty:  CREATE only, 3 pages
 * @va_id:  FROM_VA, writable, of @va (2 pages, pattern 4), tag TAG_VA
 * @exp:    1 page, pattern 3, tag TAG_LBL (labelled), exported read-write
 * @exp_fd: that export, kept open
 * @freed:  an id made and freed last: the next id search starts after it
 * @va:     the FROM_VA memory
 */
struct cli {
	int dev;
	uint32_t sys, ro, wc, empty, va_id, exp, freed;
	int exp_fd;
	uint8_t *va;
};

enum { SEED_SYS = 1, SEED_WC, SEED_EXP, SEED_VA };

/* A buffer of @pages pages with @flags and @tag, filled with pattern @seed. */
static uint32_t filled(int dev, size_t pages, uint32_t flags, uint16_t tag, unsigned int seed)
{
	size_t len = pages * ps;
	uint8_t *buf = malloc(len);
	uint32_t id = 0;
	int ret;

	if (!CHECK(buf, "malloc"))
		return 0;
	ret = am_create(dev, len, &id);
	if (CHECK(ret == 0, "CREATE: %s", err_name(ret)))
		ret = am_alloc(dev, id, flags, tag);
	if (CHECK(ret == 0, "ALLOC(flags %#x, tag %#x): %s", flags, tag, err_name(ret))) {
		fill_pattern(buf, len, 0, seed);
		ret = am_write(dev, id, 0, buf, len);
		CHECK(ret == 0, "WRITE: %s", err_name(ret));
	}
	free(buf);
	return id;
}

/* Gives @dev's client every kind of id; false (a failed check) if it could not. */
static bool cli_build(struct cli *c, int dev)
{
	int fd, ret;

	memset(c, 0, sizeof(*c));
	c->dev = dev;
	c->exp_fd = -1;
	c->sys = filled(dev, 4, 0, TAG_SYS, SEED_SYS);
	fd = am_get_fd(dev, c->sys, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD O_RDONLY: %s", err_name(fd)))
		return false;
	ret = am_from_fd(dev, fd, &c->ro);
	close(fd);
	if (!CHECK(ret == 0, "FROM_FD of the O_RDONLY dma-buf: %s", err_name(ret)))
		return false;
	c->wc = filled(dev, 2, ACCMAP_ALLOC_WRITECOMBINE, 0, SEED_WC);
	ret = am_create(dev, 3 * ps, &c->empty);
	if (!CHECK(ret == 0, "CREATE: %s", err_name(ret)))
		return false;

	c->va = map_anon(2 * ps, PROT_READ | PROT_WRITE);
	if (!c->va)
		return false;
	fill_pattern(c->va, 2 * ps, 0, SEED_VA);
	ret = accmap_from_va(dev, c->va, 2 * ps, ACCMAP_FROM_VA_WRITE, TAG_VA, &c->va_id);
	if (!CHECK(ret == 0, "FROM_VA: %s", err_name(ret)))
		return false;

	ret = am_set_label(dev, TAG_LBL, LABEL);
	if (!CHECK(ret == 0, "SET_TAG_LABEL: %s", err_name(ret)))
		return false;
	c->exp = filled(dev, 1, 0, TAG_LBL, SEED_EXP);
	c->exp_fd = am_get_fd(dev, c->exp, O_RDWR | O_CLOEXEC);
	if (!CHECK(c->exp_fd >= 0, "GET_FD O_RDWR: %s", err_name(c->exp_fd)))
		return false;

	ret = am_create(dev, ps, &c->freed);
	if (CHECK(ret == 0, "CREATE: %s", err_name(ret)))
		ret = am_free(dev, c->freed);
	return CHECK(ret == 0, "FREE: %s", err_name(ret)) && c->sys && c->wc && c->exp;
}

static void cli_release(struct cli *c)
{
	if (c->exp_fd >= 0)
		close(c->exp_fd);
	c->exp_fd = -1;
	if (c->va)
		munmap(c->va, 2 * ps);
	c->va = NULL;
}

/* What one record must say. */
struct expect {
	uint32_t id;
	uint64_t size;
	uint32_t kind, heap, flags, state;
	uint16_t tag;
	const char *heap_name, *label;
	uint64_t va;
	uint32_t origin_pid;
};

static size_t cli_expect(const struct cli *c, struct expect *e)
{
	const uint32_t A = ACCMAP_CKPT_KIND_ALLOC, S = ACCMAP_HEAP_SYSTEM;
	const uint32_t RO = ACCMAP_CKPT_H_EXPORT_RDONLY;
	size_t n = 0;

	e[n++] = (struct expect){ c->sys, 4 * ps, A, S, 0, RO, TAG_SYS, "system", "", 0, 0 };
	e[n++] = (struct expect){ c->ro, 4 * ps, A, S, 0, RO | ACCMAP_CKPT_H_ID_RDONLY, TAG_SYS,
				  "system", "", 0, 0 };
	e[n++] = (struct expect){ c->wc, 2 * ps, A, S, ACCMAP_ALLOC_WRITECOMBINE, 0, 0, "system",
				  "", 0, 0 };
	e[n++] = (struct expect){ c->empty, 3 * ps, ACCMAP_CKPT_KIND_EMPTY, ACCMAP_HEAP_NONE, 0,
				  0, 0, "", "", 0, 0 };
	e[n++] = (struct expect){ c->va_id, 2 * ps, ACCMAP_CKPT_KIND_FROM_VA, ACCMAP_HEAP_NONE,
				  0, ACCMAP_CKPT_H_FROM_VA_WRITE, TAG_VA, "", "",
				  (uintptr_t)c->va, (uint32_t)getpid() };
	e[n++] = (struct expect){ c->exp, ps, A, S, 0, ACCMAP_CKPT_H_EXPORT_RDWR, TAG_LBL,
				  "system", LABEL, 0, 0 };
	return n;
}

/*
 * Every record of @st is what @c's ids say, in id order, and only the two
 * ids of the system buffer share a serial.
 */
static void check_records(const struct accmap_ckpt_client *st, const struct cli *c,
			  const char *when)
{
	struct expect e[8];
	size_t n = cli_expect(c, e);

	if (!CHECK(st->nr_handles == n, "%s: %u records, expected %zu", when, st->nr_handles,
		   n))
		return;
	for (uint32_t i = 0; i + 1 < st->nr_handles; i++)
		CHECK(recs(st)[i].id < recs(st)[i + 1].id, "%s: record %u (id %u) before id %u",
		      when, i, recs(st)[i].id, recs(st)[i + 1].id);
	for (size_t i = 0; i < n; i++) {
		const struct accmap_ckpt_handle *r = rec_of(st, e[i].id);

		if (!r)
			continue;
		CHECK(r->size == e[i].size && r->kind == e[i].kind && r->heap == e[i].heap &&
		      r->flags == e[i].flags && r->tag == e[i].tag && r->state == e[i].state,
		      "%s: id %u: size/kind/heap/flags/tag/state %llu %u %#x %#x %#x %#x, not %llu %u %#x %#x %#x %#x",
		      when, r->id, ull(r->size), r->kind,
		      r->heap, r->flags, r->tag, r->state, ull(e[i].size), e[i].kind, e[i].heap,
		      e[i].flags, e[i].tag, e[i].state);
		CHECK(r->va == e[i].va && r->origin_pid == e[i].origin_pid,
		      "%s: id %u: va %#llx origin_pid %u, expected %#llx %u", when, r->id,
		      ull(r->va), r->origin_pid, ull(e[i].va), e[i].origin_pid);
		CHECK(!strcmp(r->heap_name, e[i].heap_name) && !strcmp(r->label, e[i].label),
		      "%s: id %u: heap_name \"%.16s\" label \"%.32s\", expected \"%s\" \"%s\"",
		      when, r->id, r->heap_name, r->label, e[i].heap_name, e[i].label);
		CHECK(r->serial && !r->map_offset && !r->pad && !r->pad2,
		      "%s: id %u: serial %llu map_offset %#llx pad %#x pad2 %#x", when, r->id,
		      ull(r->serial), ull(r->map_offset), r->pad, r->pad2);
		for (size_t j = 0; j < i; j++) {
			const struct accmap_ckpt_handle *o = rec_of(st, e[j].id);
			bool same = e[i].id == c->ro && e[j].id == c->sys;

			if (o)
				CHECK((o->serial == r->serial) == same,
				      "%s: ids %u and %u: serials %llu and %llu", when, o->id,
				      r->id, ull(o->serial), ull(r->serial));
		}
	}
}

static void check_head(const struct accmap_ckpt_client *st, size_t size, uint32_t nr_handles,
		       uint32_t nr_sessions, uint32_t next_id, const char *when)
{
	CHECK(st->magic == ACCMAP_CKPT_MAGIC && st->version == ACCMAP_CKPT_VERSION &&
	      st->size == size && !st->pad,
	      "%s: head magic %#x version %u size %llu (call said %zu) pad %#x", when, st->magic,
	      st->version, ull(st->size), size, st->pad);
	CHECK(st->nr_handles == nr_handles && st->nr_sessions == nr_sessions &&
	      st->next_id == next_id && st->pid == (uint32_t)getpid(),
	      "%s: head nr_handles %u nr_sessions %u next_id %u pid %u, expected %u %u %u %d",
	      when, st->nr_handles, st->nr_sessions, st->next_id, st->pid, nr_handles,
	      nr_sessions, next_id, getpid());
}

/* ---- sessions ---- */

/* A session of @dev mapping all of buffer @id (@len bytes) read-write; its id or 0. */
static uint32_t plain_session(int dev, uint32_t id, uint64_t len, struct accmap_replay_map *m)
{
	struct accmap_replay_setup s;
	uint32_t target;
	int ret;

	ret = accmap_replay_find_target(dev, SIMDRV_TARGET, &target, NULL);
	if (!CHECK(ret == 0, "no target %s: %s", SIMDRV_TARGET, err_name(ret)))
		return 0;
	memset(m, 0, sizeof(*m));
	m->gpu_va = PLAIN_GPU_VA;
	m->length = len;
	m->id = id;
	m->flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE;
	memset(&s, 0, sizeof(s));
	s.maps = (uintptr_t)m;
	s.nr_maps = 1;
	s.target = target;
	s.format = SVM_PGT_FORMAT;
	s.va_bits = PLAIN_VA_BITS;
	ret = accmap_replay_setup(dev, &s);
	if (!CHECK(ret == 0, "REPLAY_SETUP of a plain session: %s", err_name(ret)))
		return 0;
	return s.session;
}

/**
 * struct sessions - an SVM session with an attribute range, and a plain one
 * @t:        the SVM session (its file is the client's)
 * @plain:    the plain session's id
 * @map:      its one mapping
 * @attr_at:  the start of the SET_ATTR range (mapped memory of 4 pages)
 */
struct sessions {
	struct svm t;
	uint32_t plain;
	struct accmap_replay_map map;
	uint8_t *attr_at;
};

#define ATTR_SET	(ACCMAP_SVM_ATTR_GPU_RO | ACCMAP_SVM_ATTR_NO_EXEC)

/* Opens the client with its SVM session, SET_ATTR over 4 pages. */
static bool sessions_open(struct sessions *ss)
{
	int ret;

	memset(ss, 0, sizeof(*ss));
	if (!svm_open(&ss->t))
		return false;
	ss->attr_at = map_anon(4 * ps, PROT_READ | PROT_WRITE);
	if (!ss->attr_at)
		return false;
	ret = svm_ioctl(ss->t.dev, ss->t.sim.session, ACCMAP_SVM_OP_SET_ATTR,
			(uintptr_t)ss->attr_at, 4 * ps, ATTR_SET, ACCMAP_SVM_LOC_SYSTEM, NULL);
	return CHECK(ret == 0, "SVM SET_ATTR: %s", err_name(ret));
}

/* The plain session, mapping buffer @id of @len bytes. */
static bool sessions_plain(struct sessions *ss, uint32_t id, uint64_t len)
{
	ss->plain = plain_session(ss->t.dev, id, len, &ss->map);
	return ss->plain != 0;
}

static void sessions_close(struct sessions *ss)
{
	if (ss->plain)
		CHECK(accmap_replay_destroy(ss->t.dev, ss->plain) == 0, "REPLAY_DESTROY");
	ss->plain = 0;
	svm_close(&ss->t);
	if (ss->attr_at)
		munmap(ss->attr_at, 4 * ps);
	ss->attr_at = NULL;
}

/*
 * The session records of @st are @ss's two sessions, SVM first; @map_id
 * the id the plain one's mapping names in that client.
 */
static void check_sessions(const struct accmap_ckpt_client *st, const struct sessions *ss,
			   uint32_t map_id, const char *when)
{
	uint64_t at = (uintptr_t)ss->attr_at, end = ss->t.start + ss->t.size;
	const struct accmap_ckpt_svm_attr want[3] = {
		{ ss->t.start, at - ss->t.start, 0, ACCMAP_SVM_GRANULE_DEFAULT,
		  ACCMAP_SVM_LOC_SYSTEM, 0 },
		{ at, 4 * ps, ATTR_SET, ACCMAP_SVM_GRANULE_DEFAULT, ACCMAP_SVM_LOC_SYSTEM, 0 },
		{ at + 4 * ps, end - at - 4 * ps, 0, ACCMAP_SVM_GRANULE_DEFAULT,
		  ACCMAP_SVM_LOC_SYSTEM, 0 },
	};
	struct accmap_ckpt_session *s;
	struct accmap_replay_map m;

	if (!CHECK(st->nr_sessions == 2, "%s: %u sessions, expected 2", when, st->nr_sessions))
		return;
	s = session_rec(st, 0);
	CHECK(s->id == ss->t.sim.session && s->target == 0 && s->format == SVM_PGT_FORMAT &&
	      s->as == 0 && s->va_bits == SIMDRV_VA_BITS && s->flags == ACCMAP_REPLAY_SETUP_SVM &&
	      s->nr_maps == 0 && s->nr_attrs == 3,
	      "%s: SVM session id/target/format/as/va_bits/flags/maps/attrs %u %u %u %u %u %#x %u %u, not %u 0 %u 0 %u %#x 0 3",
	      when, s->id, s->target, s->format, s->as,
	      s->va_bits, s->flags, s->nr_maps, s->nr_attrs, ss->t.sim.session, SVM_PGT_FORMAT,
	      SIMDRV_VA_BITS, ACCMAP_REPLAY_SETUP_SVM);
	CHECK(s->svm_start == ss->t.start && s->svm_size == ss->t.size,
	      "%s: SVM range %#llx+%#llx, expected %#llx+%#llx", when, ull(s->svm_start),
	      ull(s->svm_size), ull(ss->t.start), ull(ss->t.size));
	for (uint32_t i = 0; i < 3 && s->nr_attrs == 3; i++) {
		const struct accmap_ckpt_svm_attr *a = &session_attrs(s)[i];

		CHECK(!memcmp(a, &want[i], sizeof(*a)),
		      "%s: attribute range %u: %#llx+%#llx attrs %#x granule %u location %u pad %#x, not %#llx+%#llx %#x %u %u",
		      when, i, ull(a->start),
		      ull(a->size), a->attrs, a->granule, a->location, a->pad,
		      ull(want[i].start), ull(want[i].size), want[i].attrs, want[i].granule,
		      want[i].location);
	}

	s = session_rec(st, 1);
	CHECK(s->id == ss->plain && s->target == 0 && s->format == SVM_PGT_FORMAT && s->as == 0 &&
	      s->va_bits == PLAIN_VA_BITS && s->flags == 0 && s->nr_maps == 1 &&
	      s->nr_attrs == 0 && s->svm_start == 0 && s->svm_size == 0,
	      "%s: plain session id/target/format/as/va_bits/flags/maps/attrs %u %u %u %u %u %#x %u %u, svm %#llx+%#llx",
	      when, s->id, s->target, s->format, s->as, s->va_bits,
	      s->flags, s->nr_maps, s->nr_attrs, ull(s->svm_start), ull(s->svm_size));
	m = ss->map;
	m.id = map_id;
	if (s->nr_maps == 1)
		CHECK(!memcmp(session_maps(s), &m, sizeof(m)),
		      "%s: plain session's map: va %#llx offset %#llx length %#llx id %u flags %#x attr %u, not id %u",
		      when, ull(session_maps(s)->gpu_va),
		      ull(session_maps(s)->offset), ull(session_maps(s)->length),
		      session_maps(s)->id, session_maps(s)->flags, session_maps(s)->attr, map_id);
	CHECK((uint8_t *)session_rec(st, 2) - (uint8_t *)st == (ptrdiff_t)st->size,
	      "%s: the records end %td bytes in, the head says %llu", when,
	      (uint8_t *)session_rec(st, 2) - (uint8_t *)st, ull(st->size));
}

/* ==== the tests ==== */

static void test_state_ids(void)
{
	struct accmap_ckpt_client *st;
	struct accmap_ckpt a;
	struct cli c;
	size_t size;
	int dev, ret;

	dev = am_open();
	if (dev < 0)
		return;
	if (!cli_build(&c, dev))
		goto out;
	ret = state_get(dev, &st, &size);
	if (!CHECK(ret == 0, "STATE: %s", err_name(ret)))
		goto out;
	CHECK(size == sizeof(*st) + 6 * sizeof(struct accmap_ckpt_handle),
	      "STATE size %zu, expected %zu", size,
	      sizeof(*st) + 6 * sizeof(struct accmap_ckpt_handle));
	check_head(st, size, 6, 0, c.freed + 1, "STATE");
	check_records(st, &c, "STATE");

	/* One byte short: ENOSPC, the size needed, nothing written. */
	memset(st, GARBAGE_BYTE, size);
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.data = (uintptr_t)st;
	a.size = size - 1;
	ret = ckpt(dev, &a);
	CHECK(ret == -ENOSPC && a.size == size, "STATE one byte short: %s, size %llu (needs %zu)",
	      err_name(ret), ull(a.size), size);
	a.size = sizeof(*st);
	ret = ckpt(dev, &a);
	CHECK(ret == -ENOSPC && a.size == size, "STATE with room for the head: %s, size %llu",
	      err_name(ret), ull(a.size));
	CHECK(((uint8_t *)st)[0] == GARBAGE_BYTE && ((uint8_t *)st)[size - 1] == GARBAGE_BYTE,
	      "a refused STATE wrote its buffer");
	free(st);
out:
	cli_release(&c);
	close(dev);
}

static void test_state_sessions(void)
{
	struct accmap_ckpt_client *st;
	struct sessions ss;
	uint32_t id = 0;
	size_t size;
	int ret;

	if (!sessions_open(&ss))
		goto out;
	id = filled(ss.t.dev, 2, 0, 0, SEED_SYS);
	if (!id || !sessions_plain(&ss, id, 2 * ps))
		goto out;
	ret = state_get(ss.t.dev, &st, &size);
	if (!CHECK(ret == 0, "STATE: %s", err_name(ret)))
		goto out;
	check_head(st, size, 1, 2, id + 1, "STATE with sessions");
	check_sessions(st, &ss, id, "STATE");
	free(st);
out:
	sessions_close(&ss);
}

/*
 * STATE of a client with a session that writes a buffer the client now
 * holds only a read-only id of (its writable id freed under the session,
 * its other id from a read-only export): RESTORE_FINISH could not make
 * that session again, so the dump is refused with ENOENT naming the
 * session.  Once the session is gone the client dumps again.
 */
static void test_state_write_map_readonly_id(void)
{
	struct accmap_replay_map m;
	struct accmap_ckpt a;
	uint32_t id, ro = 0, session = 0;
	int dev, fd = -1, ret;
	void *buf = NULL;

	dev = am_open();
	if (!CHECK(dev >= 0, "open: %s", err_name(dev)))
		return;
	id = filled(dev, 2, 0, 0, SEED_SYS);
	if (!id)
		goto out;
	fd = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD O_RDONLY: %s", err_name(fd)))
		goto out;
	ret = am_from_fd(dev, fd, &ro);
	if (!CHECK(ret == 0, "FROM_FD of the read-only export: %s", err_name(ret)))
		goto out;
	session = plain_session(dev, id, 2 * ps, &m);
	if (!session)
		goto out;
	ret = am_free(dev, id);
	if (!CHECK(ret == 0, "FREE of the writable id: %s", err_name(ret)))
		goto out;
	buf = calloc(1, 1 << 16);
	if (!CHECK(buf, "calloc"))
		goto out;
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.data = (uintptr_t)buf;
	a.size = 1 << 16;
	ret = ckpt(dev, &a);
	CHECK(ret == -ENOENT && a.bad_kind == ACCMAP_CKPT_BAD_SESSION_BUSY &&
	      a.bad_id == session,
	      "STATE with a writing map of a buffer held by read-only id %u only: %s, bad_kind %u bad_id %u (session %u)",
	      ro, err_name(ret), a.bad_kind, a.bad_id, session);
	ret = accmap_replay_destroy(dev, session);
	session = 0;
	if (!CHECK(ret == 0, "REPLAY_DESTROY: %s", err_name(ret)))
		goto out;
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.data = (uintptr_t)buf;
	a.size = 1 << 16;
	ret = ckpt(dev, &a);
	CHECK(ret == 0, "STATE once the session is gone: %s", err_name(ret));
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dev);
}

/* A run that waits for an interrupt the idle model never raises. */
struct running {
	int dev;
	uint32_t session;
	int ret;
};

static void *run_waiting(void *arg)
{
	struct running *r = arg;
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_WAIT_IRQ,
		.mask = 1,
		.timeout_us = 1500000,
		.irq = ACCMAP_REPLAY_IRQ_JOB,
	};
	struct accmap_replay_run res;

	r->ret = accmap_replay_run(r->dev, r->session, &op, 1, &res);
	return NULL;
}

/*
 * STATE while a session runs ops: the dump is refused, naming the
 * session, and the client is as it was once the run ends.
 */
static void test_state_session_running(void)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_STATE };
	struct timespec pause = { 0, 300 * 1000 * 1000 };
	struct running r = { .dev = -1 };
	struct accmap_ckpt_client *st;
	struct accmap_replay_map m;
	pthread_t thread;
	uint32_t id;
	size_t size;
	int ret;

	r.dev = am_open();
	if (r.dev < 0)
		return;
	id = filled(r.dev, 2, 0, 0, SEED_SYS);
	r.session = id ? plain_session(r.dev, id, 2 * ps, &m) : 0;
	if (!r.session || !CHECK(pthread_create(&thread, NULL, run_waiting, &r) == 0,
				 "pthread_create"))
		goto out;
	nanosleep(&pause, NULL);
	ret = raw_ioctl(r.dev, ACCMAP_IOC_CHECKPOINT, &arg);
	CHECK(ret == -EBUSY && arg.bad_kind == ACCMAP_CKPT_BAD_SESSION_BUSY &&
	      arg.bad_id == r.session,
	      "STATE during a run: %s, bad_kind %u, bad_id %u; expected EBUSY, %u, %u",
	      err_name(ret), arg.bad_kind, arg.bad_id, ACCMAP_CKPT_BAD_SESSION_BUSY, r.session);
	pthread_join(thread, NULL);
	CHECK(r.ret == -ETIMEDOUT, "the waiting run ended with %s, not ETIMEDOUT",
	      err_name(r.ret));
	ret = state_get(r.dev, &st, &size);
	if (CHECK(ret == 0, "STATE after the run: %s", err_name(ret))) {
		CHECK(st->nr_handles == 1 && st->nr_sessions == 1,
		      "after the run: %u ids, %u sessions; expected 1, 1",
		      st->nr_handles, st->nr_sessions);
		free(st);
	}
out:
	close(r.dev);
}

/*
 * The contents of every ALLOC record of @st, read through @dev's ids,
 * one malloc'ed copy per record (NULL for the others).
 */
static void **read_contents(int dev, const struct accmap_ckpt_client *st)
{
	void **out = calloc(st->nr_handles, sizeof(*out));

	for (uint32_t i = 0; out && i < st->nr_handles; i++) {
		const struct accmap_ckpt_handle *r = &recs(st)[i];
		int ret;

		if (r->kind != ACCMAP_CKPT_KIND_ALLOC)
			continue;
		out[i] = malloc(r->size);
		if (!CHECK(out[i], "malloc"))
			continue;
		ret = am_read(dev, r->id, 0, out[i], r->size);
		CHECK(ret == 0, "READ of id %u: %s", r->id, err_name(ret));
	}
	return out;
}

static void free_contents(void **c, uint32_t n)
{
	for (uint32_t i = 0; c && i < n; i++)
		free(c[i]);
	free(c);
}

/* INFO of @id in @dev against what it was in the original (@want). */
static void check_like(int dev, uint32_t id, const struct accmap_info *want, uint32_t state,
		       const char *when)
{
	check_info(dev, id, want->size, want->heap, want->flags, state, want->tag, when);
}

/*
 * Restores @st (the state of client @orig, which began the restore,
 * @token) into @dev, with the ids' contents; checks each id as it comes.
 */
static void restore_ids(int dev, int orig, uint64_t token, const struct accmap_ckpt_client *st,
			void **contents)
{
	for (uint32_t i = 0; i < st->nr_handles; i++) {
		const struct accmap_ckpt_handle *r = &recs(st)[i];
		struct accmap_info want;
		uint8_t *got;
		int ret;

		ret = restore_buffer(dev, token, ACCMAP_CKPT_ADD_ID, r, contents[i], NULL);
		if (!CHECK(ret == 0, "RESTORE_BUFFER of id %u (kind %u): %s", r->id, r->kind,
			   err_name(ret)))
			continue;
		ret = am_info(orig, r->id, &want);
		if (!CHECK(ret == 0, "INFO: %s", err_name(ret)))
			continue;
		if (r->kind == ACCMAP_CKPT_KIND_FROM_VA) {
			/* Memory only at RESTORE_FINISH; the tag comes with it. */
			check_info(dev, r->id, r->size, ACCMAP_HEAP_NONE, 0, 0, 0,
				   "restored FROM_VA id before FINISH");
			continue;
		}
		/* No fd holds the restored dma-bufs: not EXPORTED. */
		check_like(dev, r->id, &want, want.state & ~ACCMAP_STATE_EXPORTED, "restored id");
		if (r->kind != ACCMAP_CKPT_KIND_ALLOC)
			continue;
		got = malloc(r->size);
		if (!CHECK(got, "malloc"))
			continue;
		ret = am_read(dev, r->id, 0, got, r->size);
		CHECK(ret == 0 && !memcmp(got, contents[i], r->size),
		      "READ of restored id %u: %s, or other bytes", r->id, err_name(ret));
		free(got);
	}
}

/*
 * A dma-buf fd of the restored buffer of @r (RESTORE_BUFFER FD_RDWR
 * only), FROM_FD into @dev: the same memory as @r's id there.
 */
static void check_fd_restore(int dev, uint64_t token, const struct accmap_ckpt_handle *r)
{
	uint8_t *buf = malloc(ps), *back = malloc(ps);
	uint32_t id = 0;
	int fd = -1, ret;

	if (!CHECK(buf && back, "malloc"))
		goto out;
	ret = restore_buffer(dev, token, ACCMAP_CKPT_FD_RDWR | ACCMAP_CKPT_FD_CLOEXEC, r, NULL,
			     &fd);
	if (!CHECK(ret == 0 && fd >= 0, "RESTORE_BUFFER FD_RDWR of serial %llu: %s, fd %d",
		   ull(r->serial), err_name(ret), fd))
		goto out;
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR,
	      "restored fd: flags %#x, mode %#x", fcntl(fd, F_GETFD), fcntl(fd, F_GETFL));
	ret = am_from_fd(dev, fd, &id);
	if (!CHECK(ret == 0, "FROM_FD of the restored fd: %s", err_name(ret)))
		goto out;
	fill_pattern(buf, ps, 0, 77);
	ret = am_write(dev, id, ps, buf, ps);
	if (CHECK(ret == 0, "WRITE through the FROM_FD id: %s", err_name(ret)))
		ret = am_read(dev, r->id, ps, back, ps);
	CHECK(ret == 0 && !memcmp(buf, back, ps),
	      "a write through the fd's id is not seen through id %u: %s", r->id, err_name(ret));
	fill_pattern(buf, ps, 0, 78);
	ret = am_write(dev, r->id, 0, buf, ps);
	if (CHECK(ret == 0, "WRITE through id %u: %s", r->id, err_name(ret)))
		ret = am_read(dev, id, 0, back, ps);
	CHECK(ret == 0 && !memcmp(buf, back, ps),
	      "a write through id %u is not seen through the fd's id: %s", r->id, err_name(ret));
	CHECK(am_free(dev, id) == 0, "FREE of the FROM_FD id");
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(back);
}

static void test_restore(void)
{
	struct accmap_ckpt_client *st = NULL, *st2 = NULL;
	uint64_t used0 = heaps_used(), token;
	struct accmap_info want;
	void **contents = NULL;
	uint8_t *got = NULL;
	struct sessions ss;
	size_t size, size2;
	uint32_t done, id;
	int b = -1, ret;
	struct cli c;

	memset(&c, 0, sizeof(c));
	c.exp_fd = -1;
	if (!sessions_open(&ss) || !cli_build(&c, ss.t.dev) || !sessions_plain(&ss, c.sys, 4 * ps))
		goto out;
	ret = state_get(c.dev, &st, &size);
	if (!CHECK(ret == 0, "STATE: %s", err_name(ret)))
		goto out;
	check_head(st, size, 6, 2, c.freed + 1, "STATE");
	check_records(st, &c, "STATE");
	check_sessions(st, &ss, c.sys, "STATE");
	contents = read_contents(c.dev, st);
	if (!CHECK(contents, "calloc"))
		goto out;

	token = restore_begin(c.dev);
	b = am_open();
	if (!token || b < 0)
		goto out;
	ret = restore_client(b, token, st);
	if (!CHECK(ret == 0, "RESTORE_CLIENT: %s", err_name(ret)))
		goto out;
	restore_ids(b, c.dev, token, st, contents);

	for (uint32_t i = 0; i < st->nr_sessions; i++) {
		struct accmap_ckpt_session *s = session_rec(st, i);

		ret = restore_session(b, token, s, session_bytes(s));
		CHECK(ret == 0, "RESTORE_SESSION %u: %s", s->id, err_name(ret));
	}
	/* Nothing made before FINISH: the session ids are still free. */
	ret = svm_ioctl(b, ss.t.sim.session, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, NULL);
	CHECK(ret == -ENOENT, "SVM QUERY before FINISH: %s", err_name(ret));
	ret = svm_ioctl(b, ss.plain, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, NULL);
	CHECK(ret == -ENOENT, "SVM QUERY of the plain session before FINISH: %s", err_name(ret));
	ret = restore_finish(c.dev, token, getpid(), &done);
	CHECK(ret == 0 && done == 3, "RESTORE_FINISH: %s, done %u (1 pin, 2 sessions)",
	      err_name(ret), done);

	/* The FROM_VA id pins the same memory now. */
	ret = am_info(c.dev, c.va_id, &want);
	if (CHECK(ret == 0, "INFO: %s", err_name(ret)))
		check_like(b, c.va_id, &want, ACCMAP_STATE_ALLOCATED, "FROM_VA id after FINISH");
	CHECK(want.heap == ACCMAP_HEAP_USER, "FROM_VA heap %u", want.heap);
	got = malloc(2 * ps);
	if (CHECK(got, "malloc")) {
		ret = am_read(b, c.va_id, 0, got, 2 * ps);
		CHECK(ret == 0 && find_pattern_mismatch(got, 2 * ps, 0, SEED_VA) == 2 * ps,
		      "READ of the restored FROM_VA id: %s, or not the process's memory",
		      err_name(ret));
		memset(got, 0x3c, ps);
		ret = am_write(b, c.va_id, ps, got, ps);
		CHECK(ret == 0 && c.va[ps] == 0x3c && c.va[2 * ps - 1] == 0x3c,
		      "WRITE through the restored FROM_VA id: %s, or not in the process's memory",
		      err_name(ret));
	}

	/* The sessions are there, at their ids, and work. */
	ret = svm_ioctl(b, ss.t.sim.session, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, NULL);
	CHECK(ret == 0, "SVM QUERY of restored session %u: %s", ss.t.sim.session, err_name(ret));
	/* A session that is not SVM: EOPNOTSUPP, not ENOENT. */
	ret = svm_ioctl(b, ss.plain, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, NULL);
	CHECK(ret == -EOPNOTSUPP, "SVM QUERY of the restored plain session: %s", err_name(ret));

	/* B's state is A's, but for the serials. */
	ret = state_get(b, &st2, &size2);
	if (CHECK(ret == 0, "STATE of the restored client: %s", err_name(ret))) {
		check_head(st2, size2, 6, 2, c.freed + 1, "restored STATE");
		check_records(st2, &c, "restored STATE");
		check_sessions(st2, &ss, c.sys, "restored STATE");
		for (uint32_t i = 0; i < st2->nr_handles && st2->nr_handles == 6; i++)
			CHECK(recs(st2)[i].serial != recs(st)[i].serial,
			      "restored id %u has the original's serial", recs(st2)[i].id);
	}

	/* The next CREATE takes the dumped next id, not the free one below. */
	ret = am_create(b, ps, &id);
	CHECK(ret == 0 && id == st->next_id, "CREATE after the restore: %s, id %u, expected %u",
	      err_name(ret), id, st->next_id);
	if (!ret)
		am_free(b, id);

	check_fd_restore(b, token, rec_of(st, c.wc));

	/* A and B gone (the SVM session with A): every byte back. */
	close(b);
	b = -1;
out:
	if (b >= 0)
		close(b);
	free(got);
	if (st)
		free_contents(contents, st->nr_handles);
	free(st);
	free(st2);
	cli_release(&c);
	sessions_close(&ss);
	check_used(used0, "after the restore");
}

/*
 * A FROM_VA buffer exported (GET_FD kept open) is restored with its id
 * before RESTORE_FINISH, when it has no memory yet; its dma-buf comes
 * with the pin.
 */
static void test_restore_fromva_exported(void)
{
	struct accmap_ckpt_client *st = NULL, *st2 = NULL;
	uint64_t used0 = heaps_used(), token;
	struct accmap_ckpt_handle *r;
	int a = -1, b = -1, fd = -1, fd2 = -1, ret;
	uint8_t *mem = NULL, *got = NULL;
	size_t size, size2;
	uint32_t id, done;

	a = am_open();
	mem = map_anon(2 * ps, PROT_READ | PROT_WRITE);
	got = malloc(2 * ps);
	if (a < 0 || !mem || !CHECK(got, "malloc"))
		goto out;
	fill_pattern(mem, 2 * ps, 0, SEED_VA);
	ret = accmap_from_va(a, mem, 2 * ps, ACCMAP_FROM_VA_WRITE, TAG_VA, &id);
	if (!CHECK(ret == 0, "FROM_VA: %s", err_name(ret)))
		goto out;
	fd = am_get_fd(a, id, O_RDWR | O_CLOEXEC);
	if (!CHECK(fd >= 0, "GET_FD of the FROM_VA buffer: %s", err_name(fd)))
		goto out;
	ret = state_get(a, &st, &size);
	if (!CHECK(ret == 0 && st->nr_handles == 1, "STATE: %s", err_name(ret)))
		goto out;
	r = &recs(st)[0];
	CHECK(r->kind == ACCMAP_CKPT_KIND_FROM_VA &&
	      r->state == (ACCMAP_CKPT_H_FROM_VA_WRITE | ACCMAP_CKPT_H_EXPORT_RDWR),
	      "record of the exported FROM_VA buffer: kind %u state %#x", r->kind, r->state);

	token = restore_begin(a);
	b = am_open();
	if (!token || b < 0)
		goto out;
	ret = restore_client(b, token, st);
	if (!CHECK(ret == 0, "RESTORE_CLIENT: %s", err_name(ret)))
		goto out;
	ret = restore_buffer(b, token, ACCMAP_CKPT_ADD_ID, r, NULL, NULL);
	CHECK(ret == 0, "RESTORE_BUFFER ADD_ID of the exported FROM_VA record: %s",
	      err_name(ret));
	ret = restore_finish(a, token, getpid(), &done);
	CHECK(ret == 0 && done == 1, "RESTORE_FINISH: %s, done %u", err_name(ret), done);
	/* Pinned once: a second FINISH has nothing to do. */
	ret = restore_finish(a, token, getpid(), &done);
	CHECK(ret == 0 && done == 0, "RESTORE_FINISH again: %s, done %u", err_name(ret), done);

	/* The pin made the kept dma-buf: STATE says so, GET_FD hands it out. */
	ret = state_get(b, &st2, &size2);
	if (CHECK(ret == 0, "STATE of the restored client: %s", err_name(ret)) &&
	    CHECK(st2->nr_handles == 1, "%u records", st2->nr_handles))
		CHECK(recs(st2)[0].id == id && recs(st2)[0].state == r->state &&
		      recs(st2)[0].va == r->va,
		      "restored record: id %u state %#x va %#llx, expected %u %#x %#llx",
		      recs(st2)[0].id, recs(st2)[0].state, ull(recs(st2)[0].va), id, r->state,
		      ull(r->va));
	check_counts(b, id, 2, 0, 0, 0, "restored exported FROM_VA id");
	fd2 = am_get_fd(b, id, O_RDWR | O_CLOEXEC);
	if (CHECK(fd2 >= 0, "GET_FD of the restored id: %s", err_name(fd2))) {
		check_counts(b, id, 2, 1, 0, 0, "restored exported FROM_VA id with an fd");
		ret = am_read(b, id, 0, got, 2 * ps);
		CHECK(ret == 0 && find_pattern_mismatch(got, 2 * ps, 0, SEED_VA) == 2 * ps,
		      "READ of the restored FROM_VA id: %s, or not the process's memory",
		      err_name(ret));
	}
out:
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);
	if (b >= 0)
		close(b);
	if (a >= 0)
		close(a);
	if (mem)
		munmap(mem, 2 * ps);
	free(got);
	free(st);
	free(st2);
	check_used(used0, "after the restore");
}

/* Drops capability @cap from the effective set. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static void test_no_capability(void)
{
	int dev = am_open(), status = 0;
	pid_t pid;

	if (dev < 0)
		return;
	pid = fork();
	if (pid == 0) {
		static const uint32_t ops[] = {
			ACCMAP_CKPT_OP_STATE, ACCMAP_CKPT_OP_DMABUF, ACCMAP_CKPT_OP_RESTORE_BEGIN,
			ACCMAP_CKPT_OP_RESTORE_CLIENT, ACCMAP_CKPT_OP_RESTORE_BUFFER,
			ACCMAP_CKPT_OP_RESTORE_SESSION, ACCMAP_CKPT_OP_RESTORE_FINISH,
		};
		struct accmap_ckpt a;
		int ret = drop_cap(CAP_CHECKPOINT_RESTORE);

		/* CAP_SYS_ADMIN alone is enough: STATE asks for room. */
		if (CHECK(ret == 0, "capset: %s", err_name(ret))) {
			ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
			ret = ckpt(dev, &a);
			CHECK(ret == -ENOSPC, "STATE with CAP_SYS_ADMIN only: %s", err_name(ret));
		}
		ret = drop_cap(CAP_SYS_ADMIN);
		if (CHECK(ret == 0, "capset: %s", err_name(ret))) {
			for (size_t i = 0; i < TAP_ARRAY_SIZE(ops); i++) {
				ckpt_init(&a, ops[i]);
				ret = ckpt(dev, &a);
				CHECK(ret == -EPERM, "op %u without the capabilities: %s", ops[i],
				      err_name(ret));
			}
		}
		/* The parent's check of the status sees the child's checks. */
		_exit(tap_failed());
	}
	if (CHECK(pid > 0, "fork: %s", strerror(errno)))
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "child status %#x", status);
	close(dev);
}

static void test_op_errors(void)
{
	struct accmap_ckpt_client head;
	struct accmap_ckpt a;
	int dev = am_open(), ret;

	if (dev < 0)
		return;
	ckpt_init(&a, 0);
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	ckpt_init(&a, 99);
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.pad = 1;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	/* STATE and BEGIN take no other input. */
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.token = 1;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_BEGIN);
	a.pid = 1;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);

	/* No restore has token 1 (a restore's token is random). */
	memset(&head, 0, sizeof(head));
	head.magic = ACCMAP_CKPT_MAGIC;
	head.version = ACCMAP_CKPT_VERSION;
	head.size = sizeof(head);
	head.next_id = 1;
	ret = restore_client(dev, 1, &head);
	CHECK(ret == -ENOENT, "RESTORE_CLIENT with an unknown token: %s", err_name(ret));
	close(dev);
}

/* A client with one system buffer, its state, and a second client for a restore. */
struct err_fix {
	int a, b;
	uint32_t id;
	uint64_t token;
	struct accmap_ckpt_client *st;
	size_t size;
	void *contents;
};

static bool err_fix_open(struct err_fix *f)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->b = -1;
	f->a = am_open();
	if (f->a < 0)
		return false;
	f->id = filled(f->a, 2, 0, 0, SEED_SYS);
	if (!f->id)
		return false;
	ret = state_get(f->a, &f->st, &f->size);
	if (!CHECK(ret == 0 && f->st->nr_handles == 1, "STATE: %s", err_name(ret)))
		return false;
	f->contents = malloc(2 * ps);
	if (!CHECK(f->contents, "malloc"))
		return false;
	fill_pattern(f->contents, 2 * ps, 0, SEED_SYS);
	f->token = restore_begin(f->a);
	f->b = am_open();
	if (!f->token || f->b < 0)
		return false;
	ret = restore_client(f->b, f->token, f->st);
	return CHECK(ret == 0, "RESTORE_CLIENT: %s", err_name(ret));
}

static void err_fix_close(struct err_fix *f)
{
	if (f->b >= 0)
		close(f->b);
	if (f->a >= 0)
		close(f->a);
	free(f->st);
	free(f->contents);
}

/* RESTORE_BUFFER of a changed copy of @f's record must fail with @err. */
static void bad_buffer(struct err_fix *f, uint32_t flags, const struct accmap_ckpt_handle *r,
		       const void *contents, int err, const char *what)
{
	int next = next_fd(), fd = -1;
	int ret = restore_buffer(f->b, f->token, flags, r, contents, &fd);

	CHECK(ret == -err, "RESTORE_BUFFER with %s: %s, expected %s", what, err_name(ret),
	      err_name(err));
	if (!ret && fd >= 0)
		close(fd);
	CHECK(next_fd() == next, "RESTORE_BUFFER with %s left an fd open", what);
}

static void test_restore_errors(void)
{
	uint64_t used0 = heaps_used();
	struct accmap_ckpt_session *s;
	struct accmap_ckpt_client head;
	struct accmap_ckpt_handle r;
	struct accmap_ckpt a;
	struct err_fix f;
	uint32_t id;
	int c = -1, ret;

	if (!err_fix_open(&f))
		goto out;

	/* The client that began a restore cannot be dumped nor restored. */
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	ret = ckpt(f.a, &a);
	CHECK(ret == -EBUSY && a.bad_kind == ACCMAP_CKPT_BAD_RESTORING,
	      "STATE of a client that began a restore: %s, bad_kind %u", err_name(ret),
	      a.bad_kind);
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	ret = ckpt(f.b, &a);
	CHECK(ret == -EBUSY && a.bad_kind == ACCMAP_CKPT_BAD_RESTORING,
	      "STATE of a client being restored: %s, bad_kind %u", err_name(ret), a.bad_kind);
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_BEGIN);
	CHECK_ERR(ioctl(f.a, ACCMAP_IOC_CHECKPOINT, &a), EBUSY);

	/* RESTORE_CLIENT: a client with ids, one restored already, a bad head. */
	c = am_open();
	if (c < 0)
		goto out;
	ret = am_create(c, ps, &id);
	CHECK(ret == 0, "CREATE: %s", err_name(ret));
	ret = restore_client(c, f.token, f.st);
	CHECK(ret == -EBUSY, "RESTORE_CLIENT of a client with ids: %s", err_name(ret));
	ret = restore_client(f.b, f.token, f.st);
	CHECK(ret == -EBUSY, "RESTORE_CLIENT twice: %s", err_name(ret));
	close(c);
	c = am_open();
	if (c < 0)
		goto out;
	head = *f.st;
	head.magic ^= 1;
	ret = restore_client(c, f.token, &head);
	CHECK(ret == -EINVAL, "RESTORE_CLIENT with a bad magic: %s", err_name(ret));
	head = *f.st;
	head.next_id = 0;
	ret = restore_client(c, f.token, &head);
	CHECK(ret == -EINVAL, "RESTORE_CLIENT with next_id 0: %s", err_name(ret));
	ret = restore_client(c, f.token + 1, f.st);
	CHECK(ret == -ENOENT, "RESTORE_CLIENT with a wrong token: %s", err_name(ret));

	/* RESTORE_BUFFER: every field of a tampered record. */
	r = recs(f.st)[0];
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, f.contents, 0, "the dumped record");
	r.size = 0;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, EINVAL, "size 0");
	r.size = ps + 1;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, EINVAL, "a size not page aligned");
	r.size = 1ULL << 60;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, EINVAL, "a huge size");
	r = recs(f.st)[0];
	r.kind = 7;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, EINVAL, "an unknown kind");
	r = recs(f.st)[0];
	r.id = 0;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, EINVAL, "id 0");
	r = recs(f.st)[0];
	r.serial += 1000;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, f.contents, EEXIST, "an id taken");
	r = recs(f.st)[0];
	r.size += ps;
	bad_buffer(&f, ACCMAP_CKPT_FD_RDWR, &r, NULL, EINVAL, "its serial at another size");
	r = recs(f.st)[0];
	r.serial += 2000;
	r.id += 1;
	strcpy(r.heap_name, "no-such-heap");
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, NULL, ENODEV, "an unknown heap_name");
	r = recs(f.st)[0];
	r.serial += 3000;
	r.id += 1;
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID, &r, (void *)8, EFAULT, "a bad contents pointer");
	r = recs(f.st)[0];
	bad_buffer(&f, ACCMAP_CKPT_FD_RDWR | ACCMAP_CKPT_FD_RDONLY, &r, NULL, EINVAL,
		   "both FD flags");
	bad_buffer(&f, 0, &r, NULL, EINVAL, "no flag");
	bad_buffer(&f, ACCMAP_CKPT_FD_CLOEXEC, &r, NULL, EINVAL, "only CLOEXEC");
	bad_buffer(&f, ACCMAP_CKPT_ADD_ID | ACCMAP_CKPT_FD_CLOEXEC, &r, NULL, EINVAL,
		   "CLOEXEC without an FD flag");
	r.pad = 1;
	bad_buffer(&f, ACCMAP_CKPT_FD_RDWR, &r, NULL, EINVAL, "nonzero pad");
	r = recs(f.st)[0];
	r.state = 1U << 31;
	bad_buffer(&f, ACCMAP_CKPT_FD_RDWR, &r, NULL, EINVAL, "an unknown state bit");
	r = recs(f.st)[0];
	ret = restore_buffer(f.b, f.token + 1, ACCMAP_CKPT_FD_RDWR, &r, NULL, NULL);
	CHECK(ret == -ENOENT, "RESTORE_BUFFER with a wrong token: %s", err_name(ret));
	/* ADD_ID into a client that is not being restored. */
	ret = restore_buffer(c, f.token, ACCMAP_CKPT_ADD_ID, &r, NULL, NULL);
	CHECK(ret == -EINVAL, "RESTORE_BUFFER ADD_ID into another client: %s", err_name(ret));
	/* What failed left the buffer whole: its contents are the dumped ones. */
	{
		uint8_t *got = malloc(2 * ps);

		if (CHECK(got, "malloc")) {
			ret = am_read(f.b, r.id, 0, got, 2 * ps);
			CHECK(ret == 0 && !memcmp(got, f.contents, 2 * ps),
			      "restored id after failed calls: %s, or other bytes", err_name(ret));
			free(got);
		}
	}

	/* RESTORE_OFFSET: a wrong token, another client, an unknown serial; one that works. */
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_OFFSET);
	a.token = f.token + 1;
	a.serial = r.serial;
	CHECK_ERR(ioctl(f.b, ACCMAP_IOC_CHECKPOINT, &a), ENOENT);
	a.token = f.token;
	CHECK_ERR(ioctl(c, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	a.serial = r.serial + 5000;
	CHECK_ERR(ioctl(f.b, ACCMAP_IOC_CHECKPOINT, &a), ENOENT);
	a.serial = r.serial;
	a.map_offset = 0;
	ret = ckpt(f.b, &a);
	CHECK(ret == 0 && a.map_offset && a.map_offset % ps == 0,
	      "RESTORE_OFFSET of a restored serial: %s, offset %#llx", err_name(ret),
	      ull(a.map_offset));

	/* RESTORE_SESSION: a size that is not the counts', id 0, a wrong token. */
	s = calloc(1, sizeof(*s) + sizeof(struct accmap_replay_map));
	if (!CHECK(s, "calloc"))
		goto out;
	s->id = 1;
	s->format = SVM_PGT_FORMAT;
	s->va_bits = PLAIN_VA_BITS;
	s->nr_maps = 1;
	ret = restore_session(f.b, f.token, s, sizeof(*s));
	CHECK(ret == -EINVAL, "RESTORE_SESSION shorter than its maps: %s", err_name(ret));
	ret = restore_session(f.b, f.token, s, sizeof(*s) + 2 * sizeof(struct accmap_replay_map));
	CHECK(ret == -EINVAL, "RESTORE_SESSION longer than its maps: %s", err_name(ret));
	s->id = 0;
	ret = restore_session(f.b, f.token, s, session_bytes(s));
	CHECK(ret == -EINVAL, "RESTORE_SESSION with id 0: %s", err_name(ret));
	s->id = 1;
	ret = restore_session(f.b, f.token + 1, s, session_bytes(s));
	CHECK(ret == -ENOENT, "RESTORE_SESSION with a wrong token: %s", err_name(ret));
	ret = restore_session(c, f.token, s, session_bytes(s));
	CHECK(ret == -EINVAL, "RESTORE_SESSION into a client not being restored: %s",
	      err_name(ret));
	free(s);

	/* RESTORE_FINISH: no such process, a wrong token, not the beginner. */
	ret = restore_finish(f.a, f.token, NO_PID, NULL);
	CHECK(ret == -ESRCH, "RESTORE_FINISH of a pid no process has: %s", err_name(ret));
	ret = restore_finish(f.a, f.token + 1, getpid(), NULL);
	CHECK(ret == -ENOENT, "RESTORE_FINISH with a wrong token: %s", err_name(ret));
	ret = restore_finish(f.b, f.token, getpid(), NULL);
	CHECK(ret == -EINVAL, "RESTORE_FINISH from a client that did not begin: %s",
	      err_name(ret));
	ret = restore_finish(f.a, f.token, 0, NULL);
	CHECK(ret == -EINVAL, "RESTORE_FINISH of pid 0: %s", err_name(ret));
out:
	if (c >= 0)
		close(c);
	err_fix_close(&f);
	check_used(used0, "after the failed restore calls");
}

static void test_dmabuf_op(void)
{
	struct accmap_ckpt_client *st = NULL;
	struct accmap_ckpt_handle rec;
	int dev = am_open(), fds[2] = { -1, -1 }, mfd = -1, fd = -1, ro = -1, ret;
	struct accmap_ckpt a;
	uint32_t id = 0;
	size_t size;

	if (dev < 0)
		return;
	if (!CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno)))
		goto out;
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = fds[0];
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	mfd = memfd_create("ckpt", MFD_CLOEXEC);
	if (!CHECK(mfd >= 0, "memfd_create: %s", strerror(errno)))
		goto out;
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = mfd;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EINVAL);
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = next_fd();
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), EBADF);

	fd = am_buffer(dev, 3 * ps, 0, &id, true);
	if (fd < 0)
		goto out;
	ro = am_get_fd(dev, id, O_RDONLY | O_CLOEXEC);
	if (!CHECK(ro >= 0, "GET_FD O_RDONLY: %s", err_name(ro)))
		goto out;
	ret = state_get(dev, &st, &size);
	if (!CHECK(ret == 0 && st->nr_handles == 1, "STATE: %s", err_name(ret)))
		goto out;

	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = fd;
	a.serial = GARBAGE_U64;
	a.dmabuf_size = GARBAGE_U64;
	a.dmabuf_mode = GARBAGE_U32;
	ret = ckpt(dev, &a);
	CHECK(ret == 0 && a.serial == recs(st)[0].serial && a.dmabuf_size == 3 * ps &&
	      a.dmabuf_mode == O_RDWR,
	      "DMABUF of the O_RDWR export: %s, serial %llu (STATE says %llu), size %llu, mode %#x",
	      err_name(ret), ull(a.serial), ull(recs(st)[0].serial), ull(a.dmabuf_size),
	      a.dmabuf_mode);

	memset(&rec, GARBAGE_BYTE, sizeof(rec));
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = ro;
	a.data = (uintptr_t)&rec;
	a.size = sizeof(rec);
	ret = ckpt(dev, &a);
	CHECK(ret == 0 && a.serial == recs(st)[0].serial && a.dmabuf_size == 3 * ps &&
	      a.dmabuf_mode == O_RDONLY && a.size == sizeof(rec),
	      "DMABUF of the O_RDONLY export: %s, serial %llu, size %llu, mode %#x", err_name(ret),
	      ull(a.serial), ull(a.dmabuf_size), a.dmabuf_mode);
	/* The record is the id's, without the id's own fields. */
	CHECK(rec.serial == recs(st)[0].serial && rec.size == 3 * ps && rec.id == 0 &&
	      rec.kind == ACCMAP_CKPT_KIND_ALLOC && rec.heap == ACCMAP_HEAP_SYSTEM &&
	      !strcmp(rec.heap_name, "system") &&
	      rec.state == (ACCMAP_CKPT_H_EXPORT_RDONLY | ACCMAP_CKPT_H_EXPORT_RDWR),
	      "DMABUF record: serial %llu size %llu id %u kind %u heap %#x state %#x",
	      ull(rec.serial), ull(rec.size), rec.id, rec.kind, rec.heap, rec.state);
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = ro;
	a.data = (uintptr_t)&rec;
	a.size = sizeof(rec) - 1;
	CHECK_ERR(ioctl(dev, ACCMAP_IOC_CHECKPOINT, &a), ENOSPC);
out:
	free(st);
	close_pair(fds);
	if (mfd >= 0)
		close(mfd);
	if (fd > 0)
		close(fd);
	if (ro >= 0)
		close(ro);
	close(dev);
}

/* ---- one wrong input at a time ---- */

/* Input fields of struct accmap_ckpt that an op needs to be 0. */
enum rsv_field { RSV_FLAGS, RSV_TOKEN, RSV_DATA, RSV_SIZE, RSV_CONTENTS, RSV_FD, RSV_PID, RSV_NR };

#define RSV(f)		(1U << RSV_##f)

static const char *const rsv_names[RSV_NR] = {
	"flags", "token", "data", "size", "contents", "fd", "pid",
};

/*
 * Makes field @f of @a wrong: a flag bit no op knows, else 1 where the op
 * needs 0 (or, for size, a size no record has).
 */
static void rsv_poke(struct accmap_ckpt *a, enum rsv_field f)
{
	switch (f) {
	case RSV_FLAGS:
		a->flags |= 1U << 31;
		break;
	case RSV_TOKEN:
		a->token = 1;
		break;
	case RSV_DATA:
		a->data = 1;
		break;
	case RSV_SIZE:
		a->size = 1;
		break;
	case RSV_CONTENTS:
		a->contents = 1;
		break;
	case RSV_FD:
		a->fd = 1;
		break;
	default:
		a->pid = 1;
		break;
	}
}

/**
 * struct rsv_fix - a valid call of every op, for test_reserved_fields()
 * @f:     a restore (@f.a began it, @f.b is being restored)
 * @fresh: a client that took no op yet: STATE, DMABUF, then BEGIN
 * @other: a client that RESTORE_CLIENT makes @f's
 * @buf:   a dma-buf of @f.a's buffer
 * @rec:   @f.a's record (RESTORE_BUFFER and RESTORE_OFFSET name its serial)
 * @s:     a session record without maps (RESTORE_SESSION queues it only)
 */
struct rsv_fix {
	struct err_fix f;
	int fresh, other, buf;
	pid_t joined;
	int go;
	struct accmap_ckpt_handle rec;
	struct accmap_ckpt_session s;
};

/* The valid call of @op in @a; the file it is made on. */
/*
 * A child that joins restore @token (RESTORE_CLIENT of an empty client)
 * and waits for a byte on *@go, which it closes when it exits: its pid,
 * or 0 (a failed check).
 */
static pid_t joined_child(uint64_t token, int *go)
{
	struct accmap_ckpt_client head = {
		.magic = ACCMAP_CKPT_MAGIC,
		.version = ACCMAP_CKPT_VERSION,
		.size = sizeof(head),
		.next_id = 1,
	};
	int sv[2], dev;
	pid_t pid;
	char c;

	*go = -1;
	if (!CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair: %s",
		   strerror(errno)))
		return 0;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		dev = am_open();
		if (dev < 0 || restore_client(dev, token, &head) || am_send_byte(sv[1], 'j'))
			_exit(1);
		am_recv_byte(sv[1], &c);
		_exit(0);
	}
	close(sv[1]);
	if (!CHECK(pid > 0, "fork: %s", strerror(errno)) ||
	    !CHECK(am_recv_byte(sv[0], &c) == 0, "the child did not join the restore")) {
		if (pid > 0)
			child_go_reap(pid, sv[0]);
		close(sv[0]);
		return 0;
	}
	*go = sv[0];
	return pid;
}

static int rsv_base(struct rsv_fix *x, uint32_t op, struct accmap_ckpt *a)
{
	ckpt_init(a, op);
	switch (op) {
	case ACCMAP_CKPT_OP_STATE:
		return x->fresh;
	case ACCMAP_CKPT_OP_DMABUF:
		a->fd = x->buf;
		return x->fresh;
	case ACCMAP_CKPT_OP_RESTORE_BEGIN:
		return x->fresh;
	case ACCMAP_CKPT_OP_RESTORE_CLIENT:
		a->token = x->f.token;
		a->data = (uintptr_t)x->f.st;
		a->size = sizeof(*x->f.st);
		return x->other;
	case ACCMAP_CKPT_OP_RESTORE_BUFFER:
		a->flags = ACCMAP_CKPT_FD_RDWR;
		a->token = x->f.token;
		a->data = (uintptr_t)&x->rec;
		a->size = sizeof(x->rec);
		return x->f.b;
	case ACCMAP_CKPT_OP_RESTORE_SESSION:
		a->token = x->f.token;
		a->data = (uintptr_t)&x->s;
		a->size = sizeof(x->s);
		return x->f.b;
	case ACCMAP_CKPT_OP_RESTORE_OFFSET:
		a->token = x->f.token;
		a->serial = x->rec.serial;
		return x->f.b;
	case ACCMAP_CKPT_OP_RESTORE_LEFT:
		a->token = x->f.token;
		return x->f.a;
	default:
		/* A process that joined the restore with nothing to do. */
		a->token = x->f.token;
		a->pid = x->joined;
		return x->f.a;
	}
}

/*
 * Per op, in an order where each valid call works: the fields it needs
 * to be 0 (or, for size, right), and what its valid call answers.
 */
static const struct {
	uint32_t op;
	unsigned int fields;
	int ok;
} rsv_ops[] = {
	{ ACCMAP_CKPT_OP_STATE, RSV(FLAGS) | RSV(TOKEN) | RSV(CONTENTS) | RSV(FD) | RSV(PID),
	  -ENOSPC },
	{ ACCMAP_CKPT_OP_DMABUF, RSV(FLAGS) | RSV(TOKEN) | RSV(CONTENTS) | RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_BEGIN, RSV(FLAGS) | RSV(TOKEN) | RSV(DATA) | RSV(SIZE) |
	  RSV(CONTENTS) | RSV(FD) | RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_CLIENT, RSV(FLAGS) | RSV(SIZE) | RSV(CONTENTS) | RSV(FD) |
	  RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_BUFFER, RSV(FLAGS) | RSV(SIZE) | RSV(FD) | RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_SESSION, RSV(FLAGS) | RSV(SIZE) | RSV(CONTENTS) | RSV(FD) |
	  RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_OFFSET, RSV(FLAGS) | RSV(DATA) | RSV(SIZE) | RSV(CONTENTS) |
	  RSV(FD) | RSV(PID), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_FINISH, RSV(FLAGS) | RSV(DATA) | RSV(SIZE) | RSV(CONTENTS) |
	  RSV(FD), 0 },
	{ ACCMAP_CKPT_OP_RESTORE_LEFT, RSV(FLAGS) | RSV(DATA) | RSV(SIZE) | RSV(CONTENTS) |
	  RSV(FD) | RSV(PID), 0 },
};

/*
 * Every op with each of its fields wrong alone: EINVAL, no fd, and no
 * effect, for the valid call that follows still works (a BEGIN or
 * RESTORE_CLIENT that took would make it EBUSY, a queued session EEXIST).
 */
static void test_reserved_fields(void)
{
	uint64_t used0 = heaps_used();
	struct accmap_ckpt a;
	struct rsv_fix x;
	int dev, next, ret;

	memset(&x, 0, sizeof(x));
	x.fresh = -1;
	x.other = -1;
	x.buf = -1;
	x.go = -1;
	if (!err_fix_open(&x.f))
		goto out;
	x.fresh = am_open();
	x.other = am_open();
	x.buf = am_get_fd(x.f.a, x.f.id, O_RDWR | O_CLOEXEC);
	if (x.fresh < 0 || x.other < 0 || !CHECK(x.buf >= 0, "GET_FD: %s", err_name(x.buf)))
		goto out;
	x.joined = joined_child(x.f.token, &x.go);
	if (!x.joined)
		goto out;
	x.rec = recs(x.f.st)[0];
	x.s.id = 1;
	x.s.format = SVM_PGT_FORMAT;
	x.s.va_bits = PLAIN_VA_BITS;
	x.s.flags = ACCMAP_REPLAY_SETUP_SVM;
	x.s.svm_start = REC_SVM_START;
	x.s.svm_size = REC_SVM_SIZE;

	for (size_t i = 0; i < TAP_ARRAY_SIZE(rsv_ops); i++) {
		for (int f = 0; f < RSV_NR; f++) {
			if (!(rsv_ops[i].fields & (1U << f)))
				continue;
			dev = rsv_base(&x, rsv_ops[i].op, &a);
			rsv_poke(&a, f);
			next = next_fd();
			ret = ckpt(dev, &a);
			CHECK(ret == -EINVAL && next_fd() == next,
			      "op %u with %s wrong: %s, expected EINVAL (next fd %d, was %d)",
			      rsv_ops[i].op, rsv_names[f], err_name(ret), next_fd(), next);
		}
		dev = rsv_base(&x, rsv_ops[i].op, &a);
		ret = ckpt(dev, &a);
		CHECK(ret == rsv_ops[i].ok, "op %u, valid: %s, expected %s", rsv_ops[i].op,
		      err_name(ret), err_name(rsv_ops[i].ok));
		if (!ret && rsv_ops[i].op == ACCMAP_CKPT_OP_RESTORE_BUFFER)
			close(a.fd);
	}
	/* The session the valid call queued is there: its id is taken. */
	ret = restore_session(x.f.b, x.f.token, &x.s, sizeof(x.s));
	CHECK(ret == -EEXIST, "RESTORE_SESSION of a queued id: %s", err_name(ret));
out:
	if (x.joined) {
		child_go_reap(x.joined, x.go);
		close(x.go);
	}
	if (x.buf >= 0)
		close(x.buf);
	if (x.other >= 0)
		close(x.other);
	if (x.fresh >= 0)
		close(x.fresh);
	/* @f.b goes with its session still queued. */
	err_fix_close(&x.f);
	check_used(used0, "after the calls with a wrong field");
}

/* What one case of test_record_fields() changes in a valid record. */
enum rec_bad {
	BAD_PAD2, BAD_HEAP_NAME, BAD_LABEL, BAD_VA, BAD_FLAGS, BAD_ORIGIN_PID, BAD_STATE,
	BAD_SERIAL, BAD_CONTENTS, BAD_NO_ORIGIN_PID, BAD_VA_UNALIGNED, BAD_VA_WRAPS,
	BAD_VA_HIGH, BAD_WC_UC,
};

static const struct {
	const char *what;
	uint32_t kind;
	enum rec_bad bad;
} rec_cases[] = {
	{ "pad2", ACCMAP_CKPT_KIND_ALLOC, BAD_PAD2 },
	{ "a heap_name without a NUL", ACCMAP_CKPT_KIND_ALLOC, BAD_HEAP_NAME },
	{ "a label with a control character", ACCMAP_CKPT_KIND_ALLOC, BAD_LABEL },
	{ "serial 0", ACCMAP_CKPT_KIND_ALLOC, BAD_SERIAL },
	{ "ALLOC with a va", ACCMAP_CKPT_KIND_ALLOC, BAD_VA },
	{ "ALLOC with an origin_pid", ACCMAP_CKPT_KIND_ALLOC, BAD_ORIGIN_PID },
	{ "ALLOC with an unknown flag", ACCMAP_CKPT_KIND_ALLOC, BAD_FLAGS },
	{ "ALLOC with FROM_VA_WRITE", ACCMAP_CKPT_KIND_ALLOC, BAD_STATE },
	{ "ALLOC both write-combined and uncached", ACCMAP_CKPT_KIND_ALLOC, BAD_WC_UC },
	{ "EMPTY with a va", ACCMAP_CKPT_KIND_EMPTY, BAD_VA },
	{ "EMPTY with flags", ACCMAP_CKPT_KIND_EMPTY, BAD_FLAGS },
	{ "EMPTY with an origin_pid", ACCMAP_CKPT_KIND_EMPTY, BAD_ORIGIN_PID },
	{ "EMPTY with EXPORT_RDONLY", ACCMAP_CKPT_KIND_EMPTY, BAD_STATE },
	{ "EMPTY with contents", ACCMAP_CKPT_KIND_EMPTY, BAD_CONTENTS },
	{ "FROM_VA with flags", ACCMAP_CKPT_KIND_FROM_VA, BAD_FLAGS },
	{ "FROM_VA with origin_pid 0", ACCMAP_CKPT_KIND_FROM_VA, BAD_NO_ORIGIN_PID },
	{ "FROM_VA with a va not page aligned", ACCMAP_CKPT_KIND_FROM_VA, BAD_VA_UNALIGNED },
	{ "FROM_VA whose end wraps", ACCMAP_CKPT_KIND_FROM_VA, BAD_VA_WRAPS },
	{ "FROM_VA past the user address space", ACCMAP_CKPT_KIND_FROM_VA, BAD_VA_HIGH },
	{ "FROM_VA with contents", ACCMAP_CKPT_KIND_FROM_VA, BAD_CONTENTS },
};

/* Ids and serials of test_record_fields(): the valid records', then the cases'. */
#define REC_ID0		100
#define REC_SERIAL0	0x10000000000ULL

/*
 * A valid record of @kind, new serial and id @n, of the size of @f's
 * buffer: ALLOC as @f's (no contents: zeros), EMPTY, or FROM_VA of @va.
 */
static void rec_valid(const struct err_fix *f, uint32_t kind, uint32_t n, void *va,
		      struct accmap_ckpt_handle *r)
{
	if (kind == ACCMAP_CKPT_KIND_ALLOC) {
		*r = recs(f->st)[0];
	} else {
		memset(r, 0, sizeof(*r));
		r->size = recs(f->st)[0].size;
		r->kind = kind;
		r->heap = ACCMAP_HEAP_NONE;
	}
	if (kind == ACCMAP_CKPT_KIND_FROM_VA) {
		r->va = (uintptr_t)va;
		r->origin_pid = getpid();
		r->state = ACCMAP_CKPT_H_FROM_VA_WRITE;
	}
	r->serial = REC_SERIAL0 + n;
	r->id = REC_ID0 + n;
}

/* Makes @r wrong as @bad says; the contents to give with it. */
static const void *rec_break(struct accmap_ckpt_handle *r, enum rec_bad bad, const void *bytes)
{
	switch (bad) {
	case BAD_PAD2:
		r->pad2 = 1;
		break;
	case BAD_HEAP_NAME:
		memset(r->heap_name, 'x', sizeof(r->heap_name));
		break;
	case BAD_LABEL:
		strcpy(r->label, "a\tb");
		break;
	case BAD_VA:
		r->va = ps;
		break;
	case BAD_FLAGS:
		r->flags = r->kind == ACCMAP_CKPT_KIND_ALLOC ? 1U << 31 : ACCMAP_ALLOC_WRITECOMBINE;
		break;
	case BAD_ORIGIN_PID:
		r->origin_pid = getpid();
		break;
	case BAD_STATE:
		r->state |= r->kind == ACCMAP_CKPT_KIND_ALLOC ? ACCMAP_CKPT_H_FROM_VA_WRITE :
								 ACCMAP_CKPT_H_EXPORT_RDONLY;
		break;
	case BAD_SERIAL:
		r->serial = 0;
		break;
	case BAD_CONTENTS:
		return bytes;
	case BAD_NO_ORIGIN_PID:
		r->origin_pid = 0;
		break;
	case BAD_VA_UNALIGNED:
		r->va += 8;
		break;
	case BAD_VA_WRAPS:
		r->va = -(uint64_t)r->size;
		break;
	case BAD_WC_UC:
		r->flags = ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED;
		break;
	default:
		/* Page aligned, no wrap, above every architecture's TASK_SIZE. */
		r->va = 1ULL << 56;
		break;
	}
	return NULL;
}

/*
 * RESTORE_BUFFER ADD_ID of records with one field wrong, each at its own
 * serial and id: EINVAL, and no id was made.  The same records without
 * the fault are restored, and what a serial holds cannot be named as
 * another kind later.
 */
static void test_record_fields(void)
{
	static const uint32_t kinds[] = {
		ACCMAP_CKPT_KIND_ALLOC, ACCMAP_CKPT_KIND_EMPTY, ACCMAP_CKPT_KIND_FROM_VA,
	};
	uint64_t used0 = heaps_used();
	struct accmap_ckpt_handle r;
	uint8_t *va = NULL, *got = NULL;
	const void *contents;
	struct accmap_info info;
	struct err_fix f;
	int ret;

	if (!err_fix_open(&f))
		goto out;
	va = map_anon(2 * ps, PROT_READ | PROT_WRITE);
	got = malloc(2 * ps);
	if (!va || !CHECK(got, "malloc"))
		goto out;

	for (uint32_t i = 0; i < TAP_ARRAY_SIZE(rec_cases); i++) {
		uint32_t n = TAP_ARRAY_SIZE(kinds) + i;

		rec_valid(&f, rec_cases[i].kind, n, va, &r);
		contents = rec_break(&r, rec_cases[i].bad, f.contents);
		ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_ADD_ID, &r, contents, NULL);
		CHECK(ret == -EINVAL, "RESTORE_BUFFER with %s: %s, expected EINVAL",
		      rec_cases[i].what, err_name(ret));
		ret = am_info(f.b, REC_ID0 + n, &info);
		CHECK(ret == -ENOENT, "RESTORE_BUFFER with %s made id %u: INFO %s",
		      rec_cases[i].what, REC_ID0 + n, err_name(ret));
	}

	/* The records the cases broke are valid as they are. */
	for (uint32_t k = 0; k < TAP_ARRAY_SIZE(kinds); k++) {
		rec_valid(&f, kinds[k], k, va, &r);
		ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_ADD_ID, &r, NULL, NULL);
		CHECK(ret == 0, "RESTORE_BUFFER of a valid record of kind %u: %s", kinds[k],
		      err_name(ret));
		/* Its serial holds that kind now: a valid record of another is refused. */
		rec_valid(&f, kinds[(k + 1) % TAP_ARRAY_SIZE(kinds)], k, va, &r);
		ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_FD_RDWR, &r, NULL, NULL);
		CHECK(ret == -EINVAL, "RESTORE_BUFFER of kind %u's serial as kind %u: %s",
		      kinds[k], r.kind, err_name(ret));
	}
	/* ALLOC without contents: the buffer is zeroed. */
	ret = am_read(f.b, REC_ID0, 0, got, 2 * ps);
	CHECK(ret == 0 && find_nonzero(got, 2 * ps) == 2 * ps,
	      "READ of an ALLOC restored without contents: %s, or not zeros", err_name(ret));
out:
	free(got);
	if (va)
		munmap(va, 2 * ps);
	err_fix_close(&f);
	check_used(used0, "after the records with a wrong field");
}

/* RESTORE_SESSION of @s (@size bytes at it) into @f.b must fail with @err. */
static void bad_session(struct err_fix *f, const struct accmap_ckpt_session *s, uint64_t size,
			int err, const char *what)
{
	int ret = restore_session(f->b, f->token, s, size);

	CHECK(ret == -err, "RESTORE_SESSION with %s: %s, expected %s", what, err_name(ret),
	      err_name(err));
}

/*
 * RESTORE_SESSION of records too long to be, or that user space cannot
 * give whole (a record, its maps, its attribute ranges at an unmapped
 * page); the record itself is queued after.
 */
static void check_session_input(struct err_fix *f)
{
	struct accmap_ckpt_session s = {
		.id = 3, .format = SVM_PGT_FORMAT, .va_bits = PLAIN_VA_BITS,
		.flags = ACCMAP_REPLAY_SETUP_SVM, .svm_start = REC_SVM_START,
		.svm_size = REC_SVM_SIZE,
	};
	struct accmap_ckpt_session *end;
	uint8_t *page;
	int ret;

	s.nr_maps = ACCMAP_REPLAY_MAPS_MAX + 1;
	bad_session(f, &s, sizeof(s), EINVAL, "too many maps");
	s.nr_maps = 0;
	s.nr_attrs = ACCMAP_SVM_ATTR_RANGES_MAX + 1;
	bad_session(f, &s, sizeof(s), EINVAL, "too many attribute ranges");
	s.nr_attrs = 0;
	bad_session(f, (void *)8, sizeof(s), EFAULT, "an unmapped record");

	page = map_anon(2 * ps, PROT_READ | PROT_WRITE);
	if (!page)
		return;
	munmap(page + ps, ps);
	end = (struct accmap_ckpt_session *)(page + ps) - 1;
	*end = s;
	end->nr_maps = 1;
	bad_session(f, end, session_bytes(end), EFAULT, "its maps unmapped");
	end->nr_maps = 0;
	end->nr_attrs = 1;
	bad_session(f, end, session_bytes(end), EFAULT, "its attribute ranges unmapped");
	munmap(page, ps);
	ret = restore_session(f->b, f->token, &s, sizeof(s));
	CHECK(ret == 0, "RESTORE_SESSION of the record: %s", err_name(ret));
}

/*
 * RESTORE_BUFFER with an fd when the process may open no more: EMFILE,
 * and an id ADD_ID made with it is taken back.
 */
static void check_emfile(struct err_fix *f)
{
	static const uint32_t flags[] = {
		ACCMAP_CKPT_FD_RDWR, ACCMAP_CKPT_ADD_ID | ACCMAP_CKPT_FD_RDWR,
	};
	const struct accmap_ckpt_handle *r = &recs(f->st)[0];
	struct accmap_info info;
	struct rlimit old, lim;
	int ret;

	if (!CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0, "getrlimit: %s", strerror(errno)))
		return;
	lim = old;
	lim.rlim_cur = next_fd();
	if (!CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0, "setrlimit: %s", strerror(errno)))
		return;
	for (size_t i = 0; i < TAP_ARRAY_SIZE(flags); i++) {
		ret = restore_buffer(f->b, f->token, flags[i], r, f->contents, NULL);
		CHECK(ret == -EMFILE, "RESTORE_BUFFER flags %#x without a free fd: %s", flags[i],
		      err_name(ret));
	}
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0, "setrlimit back: %s", strerror(errno));
	ret = am_info(f->b, r->id, &info);
	CHECK(ret == -ENOENT, "the id of the RESTORE_BUFFER that had no fd: INFO %s",
	      err_name(ret));
	ret = restore_buffer(f->b, f->token, flags[1], r, f->contents, NULL);
	CHECK(ret == 0, "RESTORE_BUFFER with a free fd: %s", err_name(ret));
}

/* mmap() of @dev at @offset, read-only, one page: 0 or -errno. */
static int map_at(int dev, uint64_t offset)
{
	void *p = mmap(NULL, ps, PROT_READ, MAP_SHARED, dev, offset);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, ps);
	return 0;
}

/*
 * mmap() of /dev/accmap without an id for the buffer: a client being
 * restored maps what its restore made, not another buffer; a client not
 * being restored maps neither.
 */
static void check_may_map(struct err_fix *f)
{
	struct accmap_ckpt_handle r = recs(f->st)[0];
	int other = am_open(), ret;
	struct accmap_ckpt a;
	uint64_t theirs = 0;

	if (other < 0)
		return;
	r.serial += 4000;
	r.id = 0;
	ret = restore_buffer(f->b, f->token, ACCMAP_CKPT_FD_RDWR, &r, NULL, NULL);
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_OFFSET);
	a.token = f->token;
	a.serial = r.serial;
	if (CHECK(ret == 0, "RESTORE_BUFFER FD_RDWR: %s", err_name(ret)))
		ret = ckpt(f->b, &a);
	if (CHECK(ret == 0, "RESTORE_OFFSET: %s", err_name(ret)))
		ret = accmap_map_offset(f->a, f->id, &theirs);
	if (!CHECK(ret == 0, "MAP_OFFSET: %s", err_name(ret)))
		goto out;
	ret = map_at(f->b, a.map_offset);
	CHECK(ret == 0, "mmap() of what the restore made, no id: %s", err_name(ret));
	ret = map_at(f->b, theirs);
	CHECK(ret == -EACCES, "mmap() of a buffer the restore did not make, no id: %s",
	      err_name(ret));
	ret = map_at(other, a.map_offset);
	CHECK(ret == -EACCES, "mmap() of what the restore made by another client: %s",
	      err_name(ret));
out:
	close(other);
}

/* What a client must be for BEGIN and RESTORE_CLIENT, faults of STATE and DMABUF. */
static void test_restore_states(void)
{
	struct accmap_ckpt_client head, *st = NULL;
	uint64_t used0 = heaps_used();
	struct svm t = { .dev = -1 };
	struct accmap_ckpt a;
	struct err_fix f;
	size_t size;
	int c = -1, buf = -1, ret;

	if (!err_fix_open(&f))
		goto out;
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_BEGIN);
	CHECK_ERR(ioctl(f.b, ACCMAP_IOC_CHECKPOINT, &a), EBUSY);
	ret = restore_client(f.a, f.token, f.st);
	CHECK(ret == -EBUSY, "RESTORE_CLIENT of the client that began the restore: %s",
	      err_name(ret));
	/* A session is state as ids are: a client with one and no id. */
	if (svm_open(&t) && !state_get(t.dev, &st, &size) &&
	    CHECK(st->nr_handles == 0 && st->nr_sessions == 1, "SVM client: %u ids, %u sessions",
		  st->nr_handles, st->nr_sessions)) {
		ret = restore_client(t.dev, f.token, f.st);
		CHECK(ret == -EBUSY, "RESTORE_CLIENT of a client with a session: %s",
		      err_name(ret));
	}

	c = am_open();
	buf = am_get_fd(f.a, f.id, O_RDONLY | O_CLOEXEC);
	if (c < 0 || !CHECK(buf >= 0, "GET_FD: %s", err_name(buf)))
		goto out;
	/* The answers go to a pointer nothing is mapped at. */
	ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
	a.data = 8;
	a.size = 1 << 20;
	CHECK_ERR(ioctl(c, ACCMAP_IOC_CHECKPOINT, &a), EFAULT);
	ckpt_init(&a, ACCMAP_CKPT_OP_DMABUF);
	a.fd = buf;
	a.data = 8;
	a.size = sizeof(struct accmap_ckpt_handle);
	CHECK_ERR(ioctl(c, ACCMAP_IOC_CHECKPOINT, &a), EFAULT);

	for (int i = 0; i < 2; i++) {
		head = *f.st;
		if (i)
			head.pad = 1;
		else
			head.version++;
		ret = restore_client(c, f.token, &head);
		CHECK(ret == -EINVAL, "RESTORE_CLIENT with a wrong %s: %s", i ? "pad" : "version",
		      err_name(ret));
	}
	ret = restore_client(c, f.token, f.st);
	CHECK(ret == 0, "RESTORE_CLIENT after the wrong heads: %s", err_name(ret));

	check_session_input(&f);
	check_emfile(&f);
	check_may_map(&f);
out:
	if (buf >= 0)
		close(buf);
	if (c >= 0)
		close(c);
	free(st);
	if (t.dev >= 0)
		svm_close(&t);
	err_fix_close(&f);
	check_used(used0, "after the restore states");
}

/*
 * A kernel thread visible here, a task without memory: one whose status
 * has no VmSize line.  0 if there is none.
 */
static pid_t find_kthread(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	while (d && !found && (e = readdir(d))) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		char path[64], *status;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		status = read_text(path, NULL);
		if (status && !strstr(status, "\nVmSize:"))
			found = pid;
		free(status);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * RESTORE_FINISH of a FROM_VA buffer whose memory went: another process's
 * FINISH is refused, its own fails with EFAULT and the id has no memory;
 * FINISH of a kernel thread.
 */
static void finish_unmapped(void)
{
	struct accmap_ckpt_handle r;
	struct err_fix f;
	uint32_t done;
	pid_t kthread;
	uint8_t *va;
	int ret;

	if (!err_fix_open(&f))
		goto out;
	va = map_anon(2 * ps, PROT_READ | PROT_WRITE);
	if (!va)
		goto out;
	rec_valid(&f, ACCMAP_CKPT_KIND_FROM_VA, 0, va, &r);
	ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_ADD_ID, &r, NULL, NULL);
	munmap(va, 2 * ps);
	if (!CHECK(ret == 0, "RESTORE_BUFFER of a FROM_VA record: %s", err_name(ret)))
		goto out;
	/* The parent never joined the restore: not its memory to touch. */
	ret = restore_finish(f.a, f.token, getppid(), &done);
	CHECK(ret == -EPERM, "RESTORE_FINISH of the parent: %s, done %u; expected EPERM",
	      err_name(ret), done);
	ret = restore_finish(f.a, f.token, getpid(), &done);
	CHECK(ret == -EFAULT && done == 0, "RESTORE_FINISH with the memory unmapped: %s, done %u",
	      err_name(ret), done);
	check_info(f.b, r.id, r.size, ACCMAP_HEAP_NONE, 0, 0, 0, "FROM_VA id whose pin failed");
	kthread = find_kthread();
	if (CHECK(kthread > 0, "no kernel thread in /proc")) {
		ret = restore_finish(f.a, f.token, kthread, NULL);
		CHECK(ret == -ESRCH, "RESTORE_FINISH of kernel thread %d: %s", kthread,
		      err_name(ret));
	}
out:
	err_fix_close(&f);
}

/* RESTORE_SESSION of @s from a child without CAP_SYS_RAWIO: EPERM. */
static void queue_without_rawio(struct err_fix *f, const struct accmap_ckpt_session *s,
				uint64_t size)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int ret = drop_cap(CAP_SYS_RAWIO);

		if (CHECK(ret == 0, "capset: %s", err_name(ret))) {
			ret = restore_session(f->b, f->token, s, size);
			CHECK(ret == -EPERM, "RESTORE_SESSION without CAP_SYS_RAWIO: %s",
			      err_name(ret));
		}
		_exit(tap_failed());
	}
	if (CHECK(pid > 0, "fork: %s", strerror(errno)))
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "child status %#x", status);
}

/*
 * A session record that cannot be made whatever the buffers (attribute
 * ranges without SVM) is refused when it is queued, and RESTORE_FINISH
 * makes the others.  One whose map names an id the restore did not make
 * gets through the queue, fails RESTORE_FINISH with that map's errno, and
 * the session queued after it is not made.
 */
static void finish_bad_session(void)
{
	struct session_rec {
		struct accmap_ckpt_session s;
		union {
			struct accmap_replay_map m;
			struct accmap_ckpt_svm_attr attr;
		};
	} no_svm, good, no_buffer, late;
	struct err_fix f;
	uint32_t done;
	int ret;

	if (!err_fix_open(&f))
		goto out;
	ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_ADD_ID, &recs(f.st)[0], f.contents, NULL);
	if (!CHECK(ret == 0, "RESTORE_BUFFER: %s", err_name(ret)))
		goto out;
	memset(&good, 0, sizeof(good));
	good.s.id = 1;
	good.s.format = SVM_PGT_FORMAT;
	good.s.va_bits = PLAIN_VA_BITS;
	good.s.nr_maps = 1;
	good.m.gpu_va = PLAIN_GPU_VA;
	good.m.length = 2 * ps;
	good.m.id = f.id;
	good.m.flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE;
	no_svm = good;
	no_svm.s.id = 2;
	no_svm.s.nr_maps = 0;
	no_svm.s.nr_attrs = 1;
	memset(&no_svm.attr, 0, sizeof(no_svm.attr));
	no_svm.attr.size = ps;
	no_buffer = good;
	no_buffer.s.id = 3;
	no_buffer.m.id = f.id + 1000;
	late = good;
	late.s.id = 4;
	ret = restore_session(f.b, f.token, &no_svm.s, session_bytes(&no_svm.s));
	CHECK(ret == -EINVAL, "RESTORE_SESSION with attribute ranges but no SVM: %s",
	      err_name(ret));
	no_svm = good;
	no_svm.s.target = 0xffff;
	ret = restore_session(f.b, f.token, &no_svm.s, session_bytes(&no_svm.s));
	CHECK(ret == -ENOENT, "RESTORE_SESSION of no such target: %s", err_name(ret));
	queue_without_rawio(&f, &good.s, session_bytes(&good.s));
	ret = restore_session(f.b, f.token, &good.s, session_bytes(&good.s));
	CHECK(ret == 0, "RESTORE_SESSION of a good session: %s", err_name(ret));
	ret = restore_session(f.b, f.token, &no_buffer.s, session_bytes(&no_buffer.s));
	CHECK(ret == 0, "RESTORE_SESSION of a map of no restored id: %s", err_name(ret));
	ret = restore_session(f.b, f.token, &late.s, session_bytes(&late.s));
	CHECK(ret == 0, "RESTORE_SESSION after it: %s", err_name(ret));
	ret = restore_finish(f.a, f.token, getpid(), &done);
	CHECK(ret == -ENOENT && done == 1, "RESTORE_FINISH: %s, done %u; expected ENOENT, done 1",
	      err_name(ret), done);
	for (uint32_t id = 1; id <= 4; id++) {
		int want = id == 1 ? -EOPNOTSUPP : -ENOENT;

		/* QUERY of a session without SVM: EOPNOTSUPP; of none: ENOENT. */
		ret = svm_ioctl(f.b, id, ACCMAP_SVM_OP_QUERY, 0, 0, 0, 0, NULL);
		CHECK(ret == want, "SVM QUERY of session %u after FINISH: %s, expected %s", id,
		      err_name(ret), err_name(want));
	}
out:
	err_fix_close(&f);
}

static void test_finish_errors(void)
{
	uint64_t used0 = heaps_used();

	finish_unmapped();
	finish_bad_session();
	check_used(used0, "after the failed FINISH calls");
}

/* ---- what a restore may do to another process, and for how long ---- */

/* VmPin + VmLck of process @pid, in kB, from /proc; -1 if unreadable. */
static long pinned_kb(pid_t pid)
{
	char path[64], *text, *p;
	long kb = 0, v;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = read_text(path, NULL);
	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (sscanf(p, "VmLck: %ld kB", &v) == 1 || sscanf(p, "VmPin: %ld kB", &v) == 1) {
			kb += v;
			n++;
		}
	}
	free(text);
	return n == 2 ? kb : -1;
}

/*
 * Becomes uid and gid 65534 with CAP_CHECKPOINT_RESTORE as its only
 * capability (no CAP_SYS_PTRACE, no CAP_SYS_ADMIN); 0 or -errno.
 */
static int become_restorer(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -errno;
	d[CAP_TO_INDEX(CAP_CHECKPOINT_RESTORE)].effective = CAP_TO_MASK(CAP_CHECKPOINT_RESTORE);
	d[CAP_TO_INDEX(CAP_CHECKPOINT_RESTORE)].permitted = CAP_TO_MASK(CAP_CHECKPOINT_RESTORE);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * A FROM_VA record of @len bytes at @va, owned by process @pid, as id
 * @id and serial @serial.
 */
static void rec_from_va(struct accmap_ckpt_handle *r, void *va, size_t len, pid_t pid,
			uint32_t id, uint64_t serial)
{
	memset(r, 0, sizeof(*r));
	r->kind = ACCMAP_CKPT_KIND_FROM_VA;
	r->heap = ACCMAP_HEAP_NONE;
	r->size = len;
	r->va = (uintptr_t)va;
	r->origin_pid = pid;
	r->state = ACCMAP_CKPT_H_FROM_VA_WRITE;
	r->id = id;
	r->serial = serial;
}

/*
 * The child of test_finish_foreign(): a uid-65534 process with only
 * CAP_CHECKPOINT_RESTORE restores a FROM_VA buffer naming its parent's
 * memory and asks RESTORE_FINISH of the parent.  Its exit status is the
 * number of failed checks.
 */
static int finish_foreign_child(uint8_t *victim, size_t len)
{
	struct accmap_ckpt_client head = {
		.magic = ACCMAP_CKPT_MAGIC,
		.version = ACCMAP_CKPT_VERSION,
		.size = sizeof(head),
		.next_id = 1,
	};
	struct accmap_ckpt_handle r;
	pid_t parent = getppid();
	long pinned0 = pinned_kb(parent);
	int a = -1, b = -1, ret;
	uint64_t token = 0;
	uint8_t *got = NULL;
	uint32_t done;

	ret = become_restorer();
	if (!CHECK(ret == 0, "uid 65534 with CAP_CHECKPOINT_RESTORE only: %s", err_name(ret)))
		goto out;
	a = am_open();
	b = am_open();
	got = malloc(len);
	if (a < 0 || b < 0 || !CHECK(got, "malloc"))
		goto out;
	token = restore_begin(a);
	if (!token)
		goto out;
	ret = restore_client(b, token, &head);
	if (!CHECK(ret == 0, "RESTORE_CLIENT: %s", err_name(ret)))
		goto out;
	rec_from_va(&r, victim, len, parent, 1, REC_SERIAL0 + 7000);
	ret = restore_buffer(b, token, ACCMAP_CKPT_ADD_ID, &r, NULL, NULL);
	if (!CHECK(ret == 0, "RESTORE_BUFFER of a FROM_VA record naming the parent: %s",
		   err_name(ret)))
		goto out;
	ret = restore_finish(a, token, parent, &done);
	CHECK(ret == -EPERM, "RESTORE_FINISH of a process that never joined: %s, done %u; "
	      "expected EPERM", err_name(ret), done);
	/* No FINISH will ever pin it: RESTORE_LEFT names it. */
	{
		struct accmap_ckpt l;

		ret = restore_left(a, token, &l);
		CHECK(ret == 0 && l.done == 1 && l.bad_kind == ACCMAP_CKPT_BAD_NO_PINNER &&
		      l.serial == r.serial && l.bad_id == (uint32_t)parent,
		      "RESTORE_LEFT: %s, done %u, bad_kind %u, serial %llu, bad_id %u; %s %llu, %d",
		      err_name(ret), l.done, l.bad_kind,
		      (unsigned long long)l.serial, l.bad_id, "expected 1, NO_PINNER,",
		      (unsigned long long)r.serial, (int)parent);
		ret = restore_left(b, token, &l);
		CHECK(ret == -EINVAL, "RESTORE_LEFT from a client that did not begin: %s",
		      err_name(ret));
	}
	ret = am_read(b, 1, 0, got, len);
	CHECK(ret != 0, "READ of the id after the refused FINISH: %s (the parent's memory)",
	      err_name(ret));
	check_info(b, 1, len, ACCMAP_HEAP_NONE, 0, 0, 0, "the id after the refused FINISH");
	CHECK(pinned_kb(parent) == pinned0, "the parent's pinned memory: %ld kB, was %ld kB",
	      pinned_kb(parent), pinned0);
	/* Its own memory, at the same address (fork copied it): its right. */
	r.origin_pid = getpid();
	r.serial++;
	r.id = 2;
	ret = restore_buffer(b, token, ACCMAP_CKPT_ADD_ID, &r, NULL, NULL);
	if (CHECK(ret == 0, "RESTORE_BUFFER of its own memory: %s", err_name(ret))) {
		ret = restore_finish(a, token, getpid(), &done);
		CHECK(ret == 0 && done == 1, "RESTORE_FINISH of itself: %s, done %u; expected 0, 1",
		      err_name(ret), done);
	}
out:
	free(got);
	if (b >= 0)
		close(b);
	if (a >= 0)
		close(a);
	return tap_failed();
}

/*
 * RESTORE_FINISH pins only the memory of a process that joined the
 * restore itself: CAP_CHECKPOINT_RESTORE alone gives no way into
 * another process's memory (as /proc/PID/mem would need ptrace rights).
 */
static void test_finish_foreign(void)
{
	size_t len = 2 * ps;
	uint8_t *victim = map_anon(len, PROT_READ | PROT_WRITE);
	int status = 0;
	pid_t pid;

	if (!victim)
		return;
	fill_pattern(victim, len, 0, SEED_VA);
	pid = fork();
	if (pid == 0)
		_exit(finish_foreign_child(victim, len));
	if (CHECK(pid > 0, "fork: %s", strerror(errno)))
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0, "child status %#x", status);
	CHECK(find_pattern_mismatch(victim, len, 0, SEED_VA) == len,
	      "the parent's memory changed");
	munmap(victim, len);
}

/*
 * mmap() through a restore's right: never writable where the restore was
 * given no writable id or dma-buf, and not at all once the restore ended.
 */
static void test_may_map_bounds(void)
{
	struct accmap_ckpt_handle r;
	struct accmap_ckpt a;
	struct err_fix f;
	int ret, fd = -1;
	void *p;

	if (!err_fix_open(&f))
		goto out;
	r = recs(f.st)[0];
	r.serial += 5000;
	r.id = 0;
	/* Only a read-only dma-buf of it was dumped; it keeps the buffer. */
	ret = restore_buffer(f.b, f.token, ACCMAP_CKPT_FD_RDONLY, &r, NULL, &fd);
	ckpt_init(&a, ACCMAP_CKPT_OP_RESTORE_OFFSET);
	a.token = f.token;
	a.serial = r.serial;
	if (CHECK(ret == 0, "RESTORE_BUFFER FD_RDONLY: %s", err_name(ret)))
		ret = ckpt(f.b, &a);
	if (!CHECK(ret == 0, "RESTORE_OFFSET: %s", err_name(ret)))
		goto out;
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED, f.b, a.map_offset);
	CHECK(p == MAP_FAILED && errno == EACCES,
	      "writable mmap() of a buffer restored read-only, no id: %s; expected EACCES",
	      p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, ps);
	ret = map_at(f.b, a.map_offset);
	CHECK(ret == 0, "read-only mmap() of it: %s", err_name(ret));

	/* The restore ends with the beginner's file: so does the right. */
	close(f.a);
	f.a = -1;
	ret = map_at(f.b, a.map_offset);
	CHECK(ret == -EACCES, "mmap() through a restore that ended: %s; expected EACCES",
	      err_name(ret));
out:
	if (fd >= 0)
		close(fd);
	err_fix_close(&f);
}

/* ---- STATE while other threads change what it copies ---- */

struct churn {
	struct svm *t;
	uint8_t *at;		/* CHURN_PAGES pages the SVM thread splits */
	int stop;		/* __atomic: the main thread sets it */
	unsigned long rounds;
	int err;
};

#define CHURN_PAGES	128

/* SET_ATTR: 1 range, then one per page (every other page set), again. */
static void *churn_attrs(void *arg)
{
	struct churn *c = arg;
	uint64_t at = (uintptr_t)c->at;
	int ret = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED) && !ret) {
		ret = svm_ioctl(c->t->dev, c->t->sim.session, ACCMAP_SVM_OP_SET_ATTR, at,
				CHURN_PAGES * ps, 0, ACCMAP_SVM_LOC_SYSTEM, NULL);
		for (size_t i = 0; i < CHURN_PAGES && !ret; i += 2)
			ret = svm_ioctl(c->t->dev, c->t->sim.session, ACCMAP_SVM_OP_SET_ATTR,
					at + i * ps, ps, ATTR_SET, ACCMAP_SVM_LOC_SYSTEM, NULL);
		c->rounds++;
	}
	c->err = ret;
	return NULL;
}

/* ALLOC and FREE of an id, again and again. */
static void *churn_ids(void *arg)
{
	struct churn *c = arg;
	uint32_t id;
	int ret = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED) && !ret) {
		ret = am_create(c->t->dev, ps, &id);
		if (!ret)
			ret = am_free(c->t->dev, id);
		c->rounds++;
	}
	c->err = ret;
	return NULL;
}

/*
 * Whether the STATE copy @st of @size bytes holds together: every
 * session record inside it, and the SVM session's ranges tiling its
 * range, in order.
 */
static bool state_consistent(const struct accmap_ckpt_client *st, size_t size,
			     const struct svm *t)
{
	const uint8_t *p = (const uint8_t *)(recs(st) + st->nr_handles);
	const uint8_t *end = (const uint8_t *)st + size;

	if (st->size != size || p > end)
		return false;
	for (uint32_t n = 0; n < st->nr_sessions; n++) {
		struct accmap_ckpt_session *s = (void *)p;
		struct accmap_ckpt_svm_attr *at;
		uint64_t next;

		if (p + sizeof(*s) > end || p + session_bytes(s) > end)
			return false;
		at = session_attrs(s);
		next = t->start;
		for (uint32_t i = 0; i < s->nr_attrs; i++) {
			if (at[i].start != next || !at[i].size)
				return false;
			next = at[i].start + at[i].size;
		}
		if (s->nr_attrs && next != t->start + t->size)
			return false;
		p += session_bytes(s);
	}
	return p == end;
}

/*
 * STATE racing SET_ATTR (the number of ranges changing between STATE's
 * sizing and its copy) and ALLOC/FREE: every answer is a whole,
 * consistent copy; none is EAGAIN (STATE takes its own new look).
 * Under KASAN a copy past what was sized is a report.
 */
static void test_state_churn(void)
{
	struct churn ca = { 0 }, ci = { 0 };
	struct svm t = { .dev = -1 };
	pthread_t ta, ti;
	unsigned long calls = 0, again = 0, bad = 0, other = 0;
	size_t cap = 1 << 20;
	struct accmap_ckpt a;
	void *buf = NULL;
	time_t until;
	int ret;

	if (!svm_open(&t))
		goto out;
	ca.t = &t;
	ci.t = &t;
	ca.at = map_anon(CHURN_PAGES * ps, PROT_READ | PROT_WRITE);
	buf = malloc(cap);
	if (!ca.at || !CHECK(buf, "malloc"))
		goto out;
	if (!CHECK(pthread_create(&ta, NULL, churn_attrs, &ca) == 0, "pthread_create"))
		goto out;
	if (!CHECK(pthread_create(&ti, NULL, churn_ids, &ci) == 0, "pthread_create")) {
		__atomic_store_n(&ca.stop, 1, __ATOMIC_RELAXED);
		pthread_join(ta, NULL);
		goto out;
	}
	until = time(NULL) + 5;
	while (time(NULL) < until || calls < 200) {
		ckpt_init(&a, ACCMAP_CKPT_OP_STATE);
		a.data = (uintptr_t)buf;
		a.size = cap;
		ret = ckpt(t.dev, &a);
		calls++;
		if (ret == -EAGAIN)
			again++;
		else if (ret)
			other++;
		else if (!state_consistent(buf, a.size, &t))
			bad++;
		if (calls >= 100000)
			break;
	}
	__atomic_store_n(&ca.stop, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ci.stop, 1, __ATOMIC_RELAXED);
	pthread_join(ta, NULL);
	pthread_join(ti, NULL);
	tap_diag("STATE: %lu calls against %lu SET_ATTR and %lu ALLOC/FREE rounds", calls,
		 ca.rounds, ci.rounds);
	CHECK(ca.err == 0 && ci.err == 0, "the churning threads: %s, %s", err_name(ca.err),
	      err_name(ci.err));
	CHECK(ca.rounds > 1 && ci.rounds > 1, "the churn ran: %lu, %lu rounds", ca.rounds,
	      ci.rounds);
	CHECK(again == 0 && other == 0 && bad == 0,
	      "STATE: %lu EAGAIN, %lu other errors, %lu inconsistent copies of %lu", again,
	      other, bad, calls);
out:
	free(buf);
	if (ca.at)
		munmap(ca.at, CHURN_PAGES * ps);
	svm_close(&t);
}

static const struct tap_test tests[] = {
	{ "state_ids", test_state_ids },
	{ "state_sessions", test_state_sessions },
	{ "state_session_running", test_state_session_running },
	{ "state_write_map_readonly_id", test_state_write_map_readonly_id },
	{ "restore_same_process", test_restore },
	{ "restore_fromva_exported", test_restore_fromva_exported },
	{ "no_capability", test_no_capability },
	{ "op_errors", test_op_errors },
	{ "restore_errors", test_restore_errors },
	{ "dmabuf_op", test_dmabuf_op },
	{ "reserved_fields", test_reserved_fields },
	{ "record_fields", test_record_fields },
	{ "restore_states", test_restore_states },
	{ "finish_errors", test_finish_errors },
	{ "finish_foreign", test_finish_foreign },
	{ "may_map_bounds", test_may_map_bounds },
	{ "state_churn", test_state_churn },
};

int main(void)
{
	ps = page_size();
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

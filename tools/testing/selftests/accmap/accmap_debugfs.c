// SPDX-License-Identifier: GPL-2.0
/*
 * accmap accounting as operators see it: SET_TAG_LABEL errno by errno,
 * the debugfs tables in /sys/kernel/debug/accmap (clients, allocations,
 * orphans, heaps, tags) row by row and column by column, and the fdinfo
 * of an open /dev/accmap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accmap_util.h"
#include "tap.h"
#include "vgem_util.h"

/* Tags of this program; nobody else uses them. */
#define TAG_LABELS	0x7e50
#define TAG_ALLOC1	0x7e51
#define TAG_ALLOC2	0x7e52
#define TAG_TAGS	0x7e53
#define TAG_ORPHAN	0x7e54
#define TAG_SHARED	0x7e55
#define TAG_KEPT	0x7e56

static const char *const clients_cols[] = { "pid", "comm", "handles" };

static const char *const allocations_cols[] = {
	"pid", "comm", "id", "size", "heap", "flags", "tag", "label", "maps", "attachments",
	"exports", "mapped", "vmaps", "contiguous", "runs", "above_4g",
};

static const char *const orphans_cols[] = {
	"size", "heap", "tag", "label", "exports", "maps", "attachments", "creator_pid",
	"creator_comm",
};

static const char *const heaps_cols[] = { "id", "name", "total", "used", "free", "largest_free",
					    "contiguous" };
static const char *const tags_cols[] = { "tag", "label", "buffers", "bytes" };

static uint32_t new_buffer(int dev, uint64_t size, uint32_t flags, uint16_t tag)
{
	uint32_t id = 0;
	int ret = am_create(dev, size, &id);

	if (!CHECK(ret == 0, "CREATE(%llu): %s", (unsigned long long)size, strerror(-ret)))
		return 0;
	ret = am_alloc(dev, id, flags, tag);
	if (!CHECK(ret == 0, "ALLOC(id %u): %s", id, strerror(-ret)))
		return 0;
	return id;
}

static int export(int dev, uint32_t id)
{
	int fd = am_get_fd(dev, id, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "GET_FD(id %u): %s", id, strerror(-fd));
	return fd;
}

static const char *num(char buf[24], unsigned long long v)
{
	snprintf(buf, 24, "%llu", v);
	return buf;
}

/*
 * Checks that row (0-based) of t holds exactly the given fields, in the
 * order of the header (NULL: not checked); nwant entries in want.
 */
static bool check_row_n(const struct dbg_table *t, long row, const char *const *want,
			size_t nwant, const char *what)
{
	bool ok = true;

	if (!CHECK(row >= 0 && (size_t)row < t->nrows, "%s: no such row", what))
		return false;
	for (size_t c = 0; c < t->ncols && c < nwant; c++) {
		const char *col = t->cells[c];
		const char *got = dbg_cell(t, (size_t)row, col);

		if (want[c])
			ok &= CHECK(!strcmp(got, want[c]), "%s: %s is '%s', expected '%s'", what,
				    col, got, want[c]);
	}
	return ok;
}

static bool check_header(const struct dbg_table *t, const char *name, const char *const *cols,
			 size_t n)
{
	bool ok = CHECK(t->ncols >= n, "%s: %zu columns, expected %zu", name, t->ncols, n);

	for (size_t c = 0; ok && c < n; c++)
		ok &= CHECK(!strcmp(t->cells[c], cols[c]), "%s: column %zu is '%s', expected '%s'",
			    name, c + 1, t->cells[c], cols[c]);
	return ok;
}

/* Label of a tag in the tags table: "(no row)" if the tag has no row. */
static const char *tag_label(uint16_t tag, char *buf, size_t len)
{
	struct dbg_table t;
	char s[24];
	long r;

	snprintf(buf, len, "(no row)");
	if (!dbg_read("tags", &t))
		return buf;
	r = dbg_find(&t, "tag", num(s, tag), NULL, NULL);
	if (r >= 0)
		snprintf(buf, len, "%s", dbg_cell(&t, (size_t)r, "label"));
	dbg_free(&t);
	return buf;
}

static bool check_tag_label(uint16_t tag, const char *want, const char *when)
{
	char now[64];

	return CHECK(!strcmp(tag_label(tag, now, sizeof(now)), want),
		     "%s: tag %u shows label '%s' in debugfs tags, expected '%s'", when, tag, now,
		     want);
}

/* ==== SET_TAG_LABEL ==== */

static void label_expect(int dev, const struct accmap_tag_label *in, int err, const char *what)
{
	struct accmap_tag_label a = *in;

	if (!CHECK_ERR(ioctl(dev, ACCMAP_IOC_SET_TAG_LABEL, &a), err))
		tap_diag("SET_TAG_LABEL: %s", what);
	CHECK(!memcmp(&a, in, sizeof(a)), "SET_TAG_LABEL (%s) changed its argument", what);
}

static struct accmap_tag_label label_arg(uint16_t tag, const char *label)
{
	struct accmap_tag_label a = { .tag = tag, .pad = 0, .flags = 0 };

	strncpy(a.label, label, sizeof(a.label));
	return a;
}

static void test_tag_label_bad_args(void)
{
	static const uint8_t bad_bytes[] = { 0x01, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0xa0,
					     0xff };
	static const uint16_t pads[] = { 1, 0x8000, 0xffff };
	struct accmap_tag_label a;
	int dev = am_open();

	if (dev < 0)
		return;
	if (!CHECK(am_set_label(dev, TAG_LABELS, "keep-me") == 0, "SET_TAG_LABEL"))
		goto out;

	for (size_t i = 0; i < TAP_ARRAY_SIZE(pads); i++) {
		a = label_arg(TAG_LABELS, "bad-pad");
		a.pad = pads[i];
		label_expect(dev, &a, EINVAL, "pad set");
	}
	for (unsigned int bit = 0; bit < 32; bit++) {
		a = label_arg(TAG_LABELS, "bad-flags");
		a.flags = 1U << bit;
		label_expect(dev, &a, EINVAL, "a flag set");
	}

	/* No NUL in 32 bytes. */
	a = label_arg(TAG_LABELS, "");
	memset(a.label, 'a', sizeof(a.label));
	label_expect(dev, &a, EINVAL, "32 characters, no NUL");

	/* Not printable ASCII, at the start, inside, last before the NUL. */
	for (size_t i = 0; i < TAP_ARRAY_SIZE(bad_bytes); i++) {
		const size_t pos[] = { 0, 3, 30 };

		for (size_t p = 0; p < TAP_ARRAY_SIZE(pos); p++) {
			char what[64];

			a = label_arg(TAG_LABELS, "");
			memset(a.label, 'b', ACCMAP_LABEL_LEN - 1);
			a.label[pos[p]] = (char)bad_bytes[i];
			snprintf(what, sizeof(what), "byte %#x at %zu", bad_bytes[i], pos[p]);
			label_expect(dev, &a, EINVAL, what);
		}
	}

	/* Anything but zero after the NUL. */
	a = label_arg(TAG_LABELS, "abc");
	a.label[4] = 'x';
	label_expect(dev, &a, EINVAL, "a character right after the NUL");
	a = label_arg(TAG_LABELS, "abc");
	a.label[31] = 1;
	label_expect(dev, &a, EINVAL, "a byte in the last position after the NUL");
	a = label_arg(TAG_LABELS, "");
	a.label[1] = 'y';
	label_expect(dev, &a, EINVAL, "an empty label with a character after the NUL");
	a = label_arg(TAG_LABELS, "");
	a.label[31] = (char)0xff;
	label_expect(dev, &a, EINVAL, "an empty label with 0xff at the end");

	check_tag_label(TAG_LABELS, "keep-me", "after refused SET_TAG_LABELs");
out:
	am_set_label(dev, TAG_LABELS, "");
	close(dev);
}

static void test_tag_label_set_and_remove(void)
{
	static const uint16_t edge_tags[] = { 0, 0xffff };
	char label[ACCMAP_LABEL_LEN];
	int dev = am_open();
	uint32_t id;

	if (dev < 0)
		return;
	/* Every printable character, 31 at a time (the most there is room for). */
	for (int first = 0x20; first <= 0x7e; first += ACCMAP_LABEL_LEN - 1) {
		struct accmap_tag_label a;
		size_t n = 0;

		for (int ch = first; ch <= 0x7e && n < ACCMAP_LABEL_LEN - 1; ch++)
			label[n++] = (char)ch;
		label[n] = '\0';
		a = label_arg(TAG_LABELS, label);
		if (!CHECK_OK(ioctl(dev, ACCMAP_IOC_SET_TAG_LABEL, &a)))
			tap_diag("label '%s'", label);
		else
			check_tag_label(TAG_LABELS, label, "printable label");
	}

	/* A new label replaces the old one; "" removes it. */
	CHECK(am_set_label(dev, TAG_LABELS, "first") == 0, "SET_TAG_LABEL");
	CHECK(am_set_label(dev, TAG_LABELS, "second") == 0, "SET_TAG_LABEL");
	check_tag_label(TAG_LABELS, "second", "relabelled");
	CHECK(am_set_label(dev, TAG_LABELS, "") == 0, "SET_TAG_LABEL of an empty label");
	check_tag_label(TAG_LABELS, "(no row)", "label removed from a tag without buffers");
	CHECK(am_set_label(dev, TAG_LABELS, "") == 0, "removing a label that is not there");

	/* With a buffer under the tag, the row stays and shows no label. */
	id = new_buffer(dev, page_size(), 0, TAG_LABELS);
	check_tag_label(TAG_LABELS, "-", "tag with a buffer and no label");
	CHECK(am_set_label(dev, TAG_LABELS, "x") == 0, "one-character label");
	check_tag_label(TAG_LABELS, "x", "one-character label");
	CHECK(am_set_label(dev, TAG_LABELS, "") == 0, "SET_TAG_LABEL of an empty label");
	check_tag_label(TAG_LABELS, "-", "label removed from a tag with a buffer");
	if (id)
		am_free(dev, id);

	for (size_t i = 0; i < TAP_ARRAY_SIZE(edge_tags); i++) {
		char before[64];

		/* Another program's buffer may use tag 0: its row stays as it was. */
		tag_label(edge_tags[i], before, sizeof(before));
		snprintf(label, sizeof(label), "edge-tag-%u", edge_tags[i]);
		CHECK(am_set_label(dev, edge_tags[i], label) == 0, "SET_TAG_LABEL tag %u",
		      edge_tags[i]);
		check_tag_label(edge_tags[i], label, "edge tag");
		CHECK(am_set_label(dev, edge_tags[i], "") == 0, "SET_TAG_LABEL tag %u",
		      edge_tags[i]);
		check_tag_label(edge_tags[i], before, "edge tag label removed");
	}
	close(dev);
}

/* Labels belong to the device: set by one client, seen on another's buffers. */
static void test_tag_label_shared(void)
{
	int a = am_open(), b = am_open();
	struct dbg_table t;
	char s[24];
	uint32_t id;

	if (a < 0 || b < 0)
		goto out;
	id = new_buffer(b, page_size(), 0, TAG_SHARED);
	CHECK(am_set_label(a, TAG_SHARED, "shared-label") == 0, "SET_TAG_LABEL in client a");
	close(a);
	a = -1;
	if (id && dbg_read("allocations", &t)) {
		long r = dbg_find(&t, "id", num(s, id), "tag", "32341");

		if (CHECK(r >= 0, "no allocations row for id %u", id))
			CHECK(!strcmp(dbg_cell(&t, (size_t)r, "label"), "shared-label"),
			      "label '%s' on another client's buffer",
			      dbg_cell(&t, (size_t)r, "label"));
		dbg_free(&t);
	}
	check_tag_label(TAG_SHARED, "shared-label", "after the labelling client closed");
	CHECK(am_set_label(b, TAG_SHARED, "") == 0, "SET_TAG_LABEL in client b");
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/* ==== debugfs tables ==== */

/* Heap names of the heaps table, in id order, comma separated. */
static void heap_names(char *buf, size_t len)
{
	struct dbg_table t;

	buf[0] = '\0';
	if (!dbg_read("heaps", &t))
		return;
	for (size_t r = 0; r < t.nrows; r++) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, "%s%s", r ? "," : "", dbg_cell(&t, r, "name"));
	}
	dbg_free(&t);
}

static void test_debugfs_format(void)
{
	static const struct {
		const char *name;
		const char *const *cols;
		size_t n;
	} files[] = {
		{ "clients", clients_cols, TAP_ARRAY_SIZE(clients_cols) },
		{ "allocations", allocations_cols, TAP_ARRAY_SIZE(allocations_cols) },
		{ "orphans", orphans_cols, TAP_ARRAY_SIZE(orphans_cols) },
		{ "heaps", heaps_cols, TAP_ARRAY_SIZE(heaps_cols) },
		{ "tags", tags_cols, TAP_ARRAY_SIZE(tags_cols) },
	};
	char names[256], got[256] = "";
	int dev = am_open();

	/* Something in every table while it is read. */
	if (dev >= 0)
		new_buffer(dev, page_size(), 0, TAG_TAGS);
	for (size_t f = 0; f < TAP_ARRAY_SIZE(files); f++) {
		struct dbg_table t;

		if (!dbg_read(files[f].name, &t))
			continue;
		check_header(&t, files[f].name, files[f].cols, files[f].n);
		/* Only clients has more columns: one per heap. */
		if (strcmp(files[f].name, "clients"))
			CHECK(t.ncols == files[f].n, "%s: %zu columns, expected %zu", files[f].name,
			      t.ncols, files[f].n);
		else
			for (size_t c = files[f].n; c < t.ncols; c++) {
				size_t n = strlen(got);

				snprintf(got + n, sizeof(got) - n, "%s%s",
					 c > files[f].n ? "," : "", t.cells[c]);
			}
		dbg_free(&t);
	}
	heap_names(names, sizeof(names));
	CHECK(!strcmp(names, "system") || !strncmp(names, "system,", 7),
	      "heaps: the first heap is not 'system' (%s)", names);
	CHECK(!strcmp(got, names), "clients: heap columns '%s', heaps table '%s'", got, names);
	if (dev >= 0)
		close(dev);
}

/* Rows of the clients table of process pid, in table order. */
static size_t client_rows(const struct dbg_table *t, pid_t pid, long *rows, size_t max)
{
	char s[24];
	size_t n = 0;

	num(s, (unsigned long long)pid);
	for (size_t r = 0; r < t->nrows && n < max; r++) {
		if (!strcmp(dbg_cell(t, r, "pid"), s))
			rows[n++] = (long)r;
	}
	return n;
}

static void check_clients(const char *when, size_t nclients, const uint32_t *handles,
			  const uint64_t *bytes)
{
	char comm[16], pid[24], h[24], b[24];
	struct dbg_table t;
	long rows[8];
	size_t n;

	self_comm(comm);
	num(pid, (unsigned long long)getpid());
	if (!dbg_read("clients", &t))
		return;
	n = client_rows(&t, getpid(), rows, 8);
	if (CHECK(n == nclients, "%s: %zu clients rows of this process, expected %zu", when, n,
		  nclients)) {
		for (size_t i = 0; i < n; i++) {
			const char *want[16] = { pid, comm, num(h, handles[i]), num(b, bytes[i]) };

			check_row_n(&t, rows[i], want, TAP_ARRAY_SIZE(want), when);
		}
	}
	dbg_free(&t);
}

static void test_debugfs_clients(void)
{
	size_t pg = page_size();
	int a = am_open(), b = am_open();
	uint32_t wc = 0, cached = 0, imp = 0, empty = 0;
	int fd = -1;

	if (a < 0 || b < 0)
		goto out;
	{
		const uint32_t h[] = { 0, 0 };
		const uint64_t by[] = { 0, 0 };

		check_clients("two empty clients", 2, h, by);
	}
	CHECK(am_create(a, 3 * pg, &empty) == 0, "CREATE");
	cached = new_buffer(a, 5 * pg, 0, 0);
	wc = new_buffer(a, 7 * pg, ACCMAP_ALLOC_WRITECOMBINE, 0);
	new_buffer(b, 1, 0, 0);
	{
		const uint32_t h[] = { 3, 1 };
		const uint64_t by[] = { 12 * pg, pg };

		check_clients("3 handles and 1", 2, h, by);
	}
	/* An import counts in the importing client too. */
	fd = cached ? export(a, cached) : -1;
	if (fd >= 0 && CHECK(am_from_fd(b, fd, &imp) == 0, "FROM_FD")) {
		const uint32_t h[] = { 3, 2 };
		const uint64_t by[] = { 12 * pg, 6 * pg };

		check_clients("after an import", 2, h, by);
	}
	CHECK(am_free(a, wc) == 0, "FREE");
	{
		const uint32_t h[] = { 2, 2 };
		const uint64_t by[] = { 5 * pg, 6 * pg };

		check_clients("after FREE", 2, h, by);
	}
	close(b);
	b = -1;
	{
		const uint32_t h[] = { 2 };
		const uint64_t by[] = { 5 * pg };

		check_clients("one client closed", 1, h, by);
	}
	close(a);
	a = -1;
	check_clients("both closed", 0, NULL, NULL);
out:
	if (fd >= 0)
		close(fd);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

static void test_debugfs_allocations(void)
{
	size_t pg = page_size();
	char comm[16], pid[24], s[8][24];
	int dev = am_open();
	int vgem = vgem_open();
	uint32_t u = 0, c, w, x = 0, vh = 0;
	int fdc = -1, fdw = -1;
	struct dbg_table t;
	void *map = NULL;

	if (dev < 0 || !CHECK(vgem >= 0, "no vgem: %s", strerror(errno)))
		goto out;
	self_comm(comm);
	num(pid, (unsigned long long)getpid());
	CHECK(am_set_label(dev, TAG_ALLOC1, "alloc-cached") == 0, "SET_TAG_LABEL");
	CHECK(am_create(dev, 3 * pg - 5, &u) == 0, "CREATE");
	c = new_buffer(dev, 2 * pg, 0, TAG_ALLOC1);
	w = new_buffer(dev, 4 * pg, ACCMAP_ALLOC_WRITECOMBINE, TAG_ALLOC2);
	fdc = c ? export(dev, c) : -1;
	fdw = w ? export(dev, w) : -1;
	if (fdc < 0 || fdw < 0 || !CHECK(am_from_fd(dev, fdc, &x) == 0, "FROM_FD"))
		goto out;
	map = map_shared(fdc, 2 * pg, PROT_READ, 0);
	if (!map || !CHECK(vgem_import(vgem, fdw, &vh) == 0, "vgem import"))
		goto out;

	if (!dbg_read("allocations", &t))
		goto out;
	CHECK(dbg_count(&t, "pid", pid, NULL, NULL) == 4, "%zu allocations rows, expected 4",
	      dbg_count(&t, "pid", pid, NULL, NULL));
	{
		const char *const row_u[] = {
			pid, comm, num(s[0], u), num(s[1], 3 * pg), "-", "-", "0", "-",
			"0", "0", "0",
		};
		const char *const row_c[] = {
			pid, comm, num(s[2], c), num(s[3], 2 * pg), "system", "cached", "32337",
			"alloc-cached", "1", "0", "1",
		};
		const char *const row_x[] = {
			pid, comm, num(s[4], x), s[3], "system", "cached", "32337", "alloc-cached",
			"1", "0", "1",
		};
		const char *const row_w[] = {
			pid, comm, num(s[5], w), num(s[6], 4 * pg), "system", "wc", "32338", "-",
			"0", "1", "1",
		};

		const size_t n = TAP_ARRAY_SIZE(row_u);

		check_row_n(&t, dbg_find(&t, "pid", pid, "id", s[0]), row_u, n,
			    "allocations: no memory");
		check_row_n(&t, dbg_find(&t, "pid", pid, "id", s[2]), row_c, n,
			    "allocations: cached");
		check_row_n(&t, dbg_find(&t, "pid", pid, "id", s[4]), row_x, n,
			    "allocations: import");
		check_row_n(&t, dbg_find(&t, "pid", pid, "id", s[5]), row_w, n, "allocations: wc");
	}
	dbg_free(&t);

	/* A label given later shows up; a freed id goes away. */
	CHECK(am_set_label(dev, TAG_ALLOC2, "alloc-wc") == 0, "SET_TAG_LABEL");
	CHECK(am_free(dev, u) == 0, "FREE");
	if (dbg_read("allocations", &t)) {
		long r = dbg_find(&t, "pid", pid, "id", num(s[7], w));

		CHECK(dbg_count(&t, "pid", pid, NULL, NULL) == 3, "%zu rows after FREE, expected 3",
		      dbg_count(&t, "pid", pid, NULL, NULL));
		CHECK(dbg_find(&t, "pid", pid, "id", s[0]) < 0, "freed id %u still listed", u);
		CHECK(r >= 0 && !strcmp(dbg_cell(&t, (size_t)r, "label"), "alloc-wc"),
		      "label of id %u: '%s'", w, r >= 0 ? dbg_cell(&t, (size_t)r, "label") : "");
		dbg_free(&t);
	}
out:
	if (vh)
		vgem_close_handle(vgem, vh);
	if (map)
		munmap(map, 2 * pg);
	if (fdc >= 0)
		close(fdc);
	if (fdw >= 0)
		close(fdw);
	if (dev >= 0) {
		am_set_label(dev, TAG_ALLOC1, "");
		am_set_label(dev, TAG_ALLOC2, "");
		close(dev);
	}
	if (vgem >= 0)
		close(vgem);
}

static void test_debugfs_heaps(void)
{
	struct accmap_heap_info info;
	size_t sz = 2 << 20;
	int dev = am_open();
	struct dbg_table t;
	uint64_t used0;
	long r;

	if (dev < 0)
		return;
	if (!CHECK(am_query_heap(dev, ACCMAP_HEAP_SYSTEM, &info) == 0, "QUERY_HEAP"))
		goto out;
	if (!dbg_read("heaps", &t))
		goto out;
	CHECK(dbg_count(&t, "name", "system", NULL, NULL) == 1, "heaps: %zu rows named system",
	      dbg_count(&t, "name", "system", NULL, NULL));
	r = dbg_find(&t, "id", "0", NULL, NULL);
	if (CHECK(r >= 0, "heaps: no row for heap 0")) {
		size_t row = (size_t)r;

		CHECK(!strcmp(dbg_cell(&t, row, "name"), "system"), "heap 0 named '%s'",
		      dbg_cell(&t, row, "name"));
		CHECK(dbg_num(&t, row, "total") == info.total, "heaps total %llu, QUERY_HEAP %llu",
		      dbg_num(&t, row, "total"), (unsigned long long)info.total);
		CHECK(dbg_num(&t, row, "used") == info.used, "heaps used %llu, QUERY_HEAP %llu",
		      dbg_num(&t, row, "used"), (unsigned long long)info.used);
		CHECK(dbg_num(&t, row, "free") <= dbg_num(&t, row, "total"),
		      "heaps free %llu above total", dbg_num(&t, row, "free"));
		CHECK(dbg_num(&t, row, "largest_free") == dbg_num(&t, row, "free"),
		      "heaps largest_free %llu, free %llu (system heap)",
		      dbg_num(&t, row, "largest_free"), dbg_num(&t, row, "free"));
	}
	/* Ids are unique and each row's id/name agrees with QUERY_HEAP. */
	for (size_t i = 0; i < t.nrows; i++) {
		unsigned long long id = dbg_num(&t, i, "id");
		struct accmap_heap_info q;

		if (!CHECK(id < ACCMAP_HEAP_MAX, "heaps: row %zu id '%s'", i,
			   dbg_cell(&t, i, "id")))
			continue;
		CHECK(dbg_count(&t, "id", dbg_cell(&t, i, "id"), NULL, NULL) == 1,
		      "heaps: id %llu listed twice", id);
		if (CHECK(am_query_heap(dev, (uint32_t)id, &q) == 0, "QUERY_HEAP %llu", id))
			CHECK(!strncmp(q.name, dbg_cell(&t, i, "name"), sizeof(q.name)),
			      "heap %llu: '%s' in debugfs, '%.16s' from QUERY_HEAP", id,
			      dbg_cell(&t, i, "name"), q.name);
	}
	used0 = dbg_num(&t, r >= 0 ? (size_t)r : 0, "used");
	dbg_free(&t);

	if (new_buffer(dev, sz, 0, 0) && dbg_read("heaps", &t)) {
		r = dbg_find(&t, "id", "0", NULL, NULL);
		CHECK(r >= 0 && dbg_num(&t, (size_t)r, "used") == used0 + sz,
		      "heaps used %llu after a 2 MiB ALLOC, expected %llu",
		      r >= 0 ? dbg_num(&t, (size_t)r, "used") : 0,
		      (unsigned long long)(used0 + sz));
		dbg_free(&t);
	}
out:
	close(dev);
}

/* The tags row of a tag: buffers and bytes, or false if it has none. */
static bool tag_row(uint16_t tag, char *label, unsigned long long *buffers,
		    unsigned long long *bytes)
{
	struct dbg_table t;
	char s[24];
	long r;

	if (!dbg_read("tags", &t))
		return false;
	r = dbg_find(&t, "tag", num(s, tag), NULL, NULL);
	if (r >= 0) {
		snprintf(label, ACCMAP_LABEL_LEN, "%s", dbg_cell(&t, (size_t)r, "label"));
		*buffers = dbg_num(&t, (size_t)r, "buffers");
		*bytes = dbg_num(&t, (size_t)r, "bytes");
	}
	dbg_free(&t);
	return r >= 0;
}

static void check_tag_row(uint16_t tag, const char *label, unsigned long long buffers,
			  unsigned long long bytes, const char *when)
{
	unsigned long long nb = 0, by = 0;
	char l[ACCMAP_LABEL_LEN] = "";

	if (!label) {
		CHECK(!tag_row(tag, l, &nb, &by), "%s: tag %u has a row (%s %llu %llu)", when, tag,
		      l, nb, by);
		return;
	}
	if (!CHECK(tag_row(tag, l, &nb, &by), "%s: tag %u has no row", when, tag))
		return;
	CHECK(!strcmp(l, label) && nb == buffers && by == bytes,
	      "%s: tag %u row '%s' %llu %llu, expected '%s' %llu %llu", when, tag, l, nb, by,
	      label, buffers, bytes);
}

static void test_debugfs_tags(void)
{
	size_t pg = page_size();
	int a = am_open(), b = am_open();
	uint32_t x, y, imp = 0, empty = 0;
	int fd = -1;

	if (a < 0 || b < 0)
		goto out;
	check_tag_row(TAG_TAGS, NULL, 0, 0, "unused tag");
	CHECK(am_set_label(a, TAG_TAGS, "tags-test") == 0, "SET_TAG_LABEL");
	check_tag_row(TAG_TAGS, "tags-test", 0, 0, "labelled, no buffers");

	/* A handle without memory has no tag yet. */
	CHECK(am_create(a, pg, &empty) == 0, "CREATE");
	x = new_buffer(a, 2 * pg, 0, TAG_TAGS);
	y = new_buffer(a, 5 * pg, ACCMAP_ALLOC_WRITECOMBINE, TAG_TAGS);
	new_buffer(a, pg, 0, TAG_TAGS + 100);
	check_tag_row(TAG_TAGS, "tags-test", 2, 7 * pg, "two buffers");

	/* Buffers count once, however many ids refer to them. */
	fd = y ? export(a, y) : -1;
	if (fd >= 0 && CHECK(am_from_fd(b, fd, &imp) == 0, "FROM_FD"))
		check_tag_row(TAG_TAGS, "tags-test", 2, 7 * pg, "one buffer imported");
	CHECK(am_free(a, y) == 0 && am_free(a, x) == 0, "FREE");
	check_tag_row(TAG_TAGS, "tags-test", 1, 5 * pg, "held by the import");
	if (imp)
		CHECK(am_free(b, imp) == 0, "FREE of the import");
	/* Held by a dma-buf alone, it is still a buffer under the tag. */
	if (fd >= 0)
		check_tag_row(TAG_TAGS, "tags-test", 1, 5 * pg, "held by its dma-buf");
	CHECK(am_set_label(a, TAG_TAGS, "") == 0, "SET_TAG_LABEL");
	if (fd >= 0) {
		check_tag_row(TAG_TAGS, "-", 1, 5 * pg, "label removed");
		close(fd);
		fd = -1;
	}
	check_tag_row(TAG_TAGS, NULL, 0, 0, "no buffer and no label");
	check_tag_row(TAG_TAGS + 100, "-", 1, pg, "another tag");
out:
	if (fd >= 0)
		close(fd);
	if (a >= 0) {
		am_set_label(a, TAG_TAGS, "");
		close(a);
	}
	if (b >= 0)
		close(b);
}

/* ==== orphans ==== */

/*
 * A child named comm creates a buffer under TAG_ORPHAN, sends its dma-buf
 * to the parent and exits without freeing anything.  Returns the fd, with
 * the child reaped; *pid is the child's pid.
 */
static int orphan_from_child(const char *comm, size_t size, pid_t *pid)
{
	int sv[2], status = -1, fd;

	if (!CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
		return -1;
	*pid = fork();
	if (*pid == 0) {
		int dev;
		uint32_t id;

		close(sv[0]);
		prctl(PR_SET_NAME, comm, 0, 0, 0);
		dev = am_open();
		id = dev >= 0 ? new_buffer(dev, size, 0, TAG_ORPHAN) : 0;
		fd = id ? export(dev, id) : -1;
		if (fd < 0 || !CHECK(am_send_fd(sv[1], fd) == 0, "child: send the dma-buf"))
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	if (!CHECK(*pid > 0, "fork: %s", strerror(errno))) {
		close(sv[0]);
		return -1;
	}
	fd = am_recv_fd(sv[0]);
	close(sv[0]);
	waitpid(*pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited with %#x", status);
	CHECK(fd >= 0, "no dma-buf from the child");
	return fd;
}

static size_t orphan_rows(void)
{
	struct dbg_table t;
	size_t n;

	if (!dbg_read("orphans", &t))
		return ~(size_t)0;
	n = t.nrows;
	dbg_free(&t);
	return n;
}

static void check_orphan(size_t size, pid_t pid, const char *comm, const char *maps,
			 const char *exports, const char *when)
{
	char s[2][24];
	struct dbg_table t;
	const char *const want[] = {
		num(s[0], size), "system", "32340", "orphan-label", exports, maps, "0",
		num(s[1], (unsigned long long)pid), comm,
	};

	if (!dbg_read("orphans", &t))
		return;
	if (CHECK(t.nrows == 1, "%s: %zu orphans rows, expected exactly 1", when, t.nrows))
		check_row_n(&t, 0, want, TAP_ARRAY_SIZE(want), when);
	dbg_free(&t);
}

static bool pid_listed(const char *file, pid_t pid)
{
	struct dbg_table t;
	char s[24];
	bool found;

	if (!dbg_read(file, &t))
		return false;
	found = dbg_find(&t, "pid", num(s, (unsigned long long)pid), NULL, NULL) >= 0;
	dbg_free(&t);
	return found;
}

static void test_debugfs_orphans_dmabuf(void)
{
	size_t size = 3 * page_size();
	int dev = am_open();
	uint32_t id;
	pid_t pid;
	int fd;

	if (dev < 0)
		return;
	if (!CHECK(orphan_rows() == 0, "orphans not empty before the test (%zu rows)",
		   orphan_rows()))
		goto out;
	CHECK(am_set_label(dev, TAG_ORPHAN, "orphan-label") == 0, "SET_TAG_LABEL");
	fd = orphan_from_child("orphan-maker", size, &pid);
	if (fd < 0)
		goto out;
	check_orphan(size, pid, "orphan-maker", "0", "1", "held by a dma-buf fd");
	CHECK(!pid_listed("clients", pid), "the exited child is still in clients");
	CHECK(!pid_listed("allocations", pid), "the exited child is still in allocations");

	/* An id makes it nobody's orphan; FREE of the id makes it one again. */
	if (CHECK(am_from_fd(dev, fd, &id) == 0, "FROM_FD")) {
		CHECK(orphan_rows() == 0, "%zu orphans with a client holding the buffer",
		      orphan_rows());
		CHECK(am_free(dev, id) == 0, "FREE");
		check_orphan(size, pid, "orphan-maker", "0", "1", "after FREE of the import");
	}
	close(fd);
	CHECK(orphan_rows() == 0, "%zu orphans rows after the last fd closed", orphan_rows());
out:
	am_set_label(dev, TAG_ORPHAN, "");
	close(dev);
}

static void test_debugfs_orphans_mapping(void)
{
	size_t size = 5 * page_size();
	int dev = am_open();
	uint8_t *p;
	pid_t pid;
	int fd;

	if (dev < 0)
		return;
	if (!CHECK(orphan_rows() == 0, "orphans not empty before the test (%zu rows)",
		   orphan_rows()))
		goto out;
	CHECK(am_set_label(dev, TAG_ORPHAN, "orphan-label") == 0, "SET_TAG_LABEL");
	fd = orphan_from_child("orphan-mapper", size, &pid);
	if (fd < 0)
		goto out;
	p = map_shared(fd, size, PROT_READ | PROT_WRITE, 0);
	if (!p) {
		close(fd);
		goto out;
	}
	fill_pattern(p, size, 0, 3);
	check_orphan(size, pid, "orphan-mapper", "1", "1", "held by an fd and a mapping");
	close(fd);
	/*
	 * The mapping alone keeps the buffer.  A mapping of a dma-buf holds
	 * its file, so the dma-buf is still live: exports stays 1 (as INFO
	 * reports for the same situation).
	 */
	check_orphan(size, pid, "orphan-mapper", "1", "1", "held by a mapping alone");
	CHECK(find_pattern_mismatch(p, size, 0, 3) == size, "mapping lost its contents");
	munmap(p, size);
	CHECK(orphan_rows() == 0, "%zu orphans rows after munmap", orphan_rows());
out:
	am_set_label(dev, TAG_ORPHAN, "");
	close(dev);
}

/* The creator of an orphan is the process that created it, not the holder. */
static void test_debugfs_orphans_own(void)
{
	size_t size = 2 * page_size();
	int dev = am_open();
	char comm[16];
	uint32_t id;
	void *p = NULL;
	int fd;

	if (dev < 0)
		return;
	self_comm(comm);
	CHECK(am_set_label(dev, TAG_ORPHAN, "orphan-label") == 0, "SET_TAG_LABEL");
	id = new_buffer(dev, size, 0, TAG_ORPHAN);
	fd = id ? export(dev, id) : -1;
	if (fd < 0)
		goto out;
	p = map_shared(fd, size, PROT_READ, 0);
	close(fd);
	CHECK(orphan_rows() == 0, "an orphan while the client holds the id");
	CHECK(am_free(dev, id) == 0, "FREE");
	if (p)
		check_orphan(size, getpid(), comm, "1", "1", "own buffer after FREE, mapped");
	close(dev);
	dev = -1;
	if (p) {
		check_orphan(size, getpid(), comm, "1", "1", "own buffer after close, mapped");
		munmap(p, size);
	}
	CHECK(orphan_rows() == 0, "%zu orphans rows after munmap", orphan_rows());
out:
	if (dev < 0)
		dev = am_open();
	if (dev >= 0) {
		am_set_label(dev, TAG_ORPHAN, "");
		close(dev);
	}
}

/* Names with tabs or spaces must not break the tables. */
static void test_debugfs_comm_sanitized(void)
{
	int sv[2], status = -1;
	char s[24], step;
	pid_t pid;

	if (!CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)))
		return;
	pid = fork();
	if (pid == 0) {
		int dev;

		close(sv[0]);
		prctl(PR_SET_NAME, "tab\there sp\n", 0, 0, 0);
		dev = am_open();
		if (dev < 0 || !new_buffer(dev, page_size(), 0, 0))
			_exit(1);
		am_send_byte(sv[1], 'R');
		am_recv_byte(sv[1], &step);
		_exit(0);
	}
	close(sv[1]);
	if (CHECK(pid > 0, "fork") && CHECK(am_recv_byte(sv[0], &step) == 0, "child ready")) {
		static const char *const files[] = { "clients", "allocations" };

		for (size_t f = 0; f < TAP_ARRAY_SIZE(files); f++) {
			struct dbg_table t;
			long r;

			if (!dbg_read(files[f], &t))
				continue;
			r = dbg_find(&t, "pid", num(s, (unsigned long long)pid), NULL, NULL);
			if (CHECK(r >= 0, "%s: no row for the child", files[f]))
				CHECK(!strcmp(dbg_cell(&t, (size_t)r, "comm"), "tab?here?sp?"),
				      "%s: comm '%s', expected 'tab?here?sp?'", files[f],
				      dbg_cell(&t, (size_t)r, "comm"));
			dbg_free(&t);
		}
	}
	close(sv[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited with %#x", status);
}

/*
 * The pool file: a header and one line per order (order, block_size,
 * zeroed, dirty), then one "name<TAB>value" line per counter; the same
 * figures as QUERY_POOL.
 */
static void test_debugfs_pool(void)
{
	static const char *const counters[] = { "cap", "pooled", "hits", "misses", "shrunk" };
	struct accmap_pool_info p;
	unsigned long long v[4];
	char line[256], key[32], extra;
	int dev = am_open();
	uint32_t n = 0;
	size_t c = 0;
	FILE *f = NULL;

	if (dev < 0)
		return;
	/* Nothing being zeroed, nothing allocating: the figures stand still. */
	if (!CHECK(am_pool_wait_idle(dev, 20000) == 0, "the pool did not go idle") ||
	    !CHECK(am_query_pool(dev, &p) == 0, "QUERY_POOL"))
		goto out;
	f = fopen(ACCMAP_DEBUGFS_DIR "/pool", "re");
	if (!CHECK(f, "open %s/pool: %s", ACCMAP_DEBUGFS_DIR, strerror(errno)))
		goto out;
	line[0] = '\0';
	if (!CHECK(fgets(line, sizeof(line), f) &&
		   !strcmp(line, "order\tblock_size\tzeroed\tdirty\n"),
		   "pool: header '%s'", line))
		goto out;
	while (fgets(line, sizeof(line), f)) {
		if (!CHECK(strchr(line, '\n'), "pool: line without a newline"))
			break;
		if (n < p.norders) {
			int got = sscanf(line, "%llu\t%llu\t%llu\t%llu%c", &v[0], &v[1], &v[2],
					 &v[3], &extra);

			if (!CHECK(got == 5 && extra == '\n', "pool: order line '%s'", line))
				break;
			CHECK(v[0] == p.orders[n].order && v[1] == p.orders[n].block_size &&
			      v[2] == p.orders[n].zeroed && v[3] == p.orders[n].dirty,
			      "pool: line '%.60s' differs from QUERY_POOL (%u %llu %llu %llu)",
			      line, p.orders[n].order, (unsigned long long)p.orders[n].block_size,
			      (unsigned long long)p.orders[n].zeroed,
			      (unsigned long long)p.orders[n].dirty);
			n++;
			continue;
		}
		if (!CHECK(c < TAP_ARRAY_SIZE(counters), "pool: extra line '%s'", line))
			break;
		if (!CHECK(sscanf(line, "%31[a-z_]\t%llu%c", key, &v[0], &extra) == 3 &&
			   extra == '\n' && !strcmp(key, counters[c]),
			   "pool: line '%s', expected counter %s", line, counters[c]))
			break;
		{
			const uint64_t want[] = { p.cap, p.pooled, p.hits, p.misses, p.shrunk };

			CHECK(v[0] == want[c], "pool: %s %llu, QUERY_POOL %llu", key, v[0],
			      (unsigned long long)want[c]);
		}
		c++;
	}
	CHECK(n == p.norders && c == TAP_ARRAY_SIZE(counters),
	      "pool: %u order lines and %zu counters, expected %u and %zu", n, c, p.norders,
	      TAP_ARRAY_SIZE(counters));
out:
	if (f)
		fclose(f);
	close(dev);
}

/* ==== fdinfo ==== */

static void check_fdinfo(int dev, uint32_t handles, uint64_t bytes, const char *when)
{
	char val[64], want[64];
	int ret;

	ret = fdinfo_value(dev, "accmap-handles", val, sizeof(val));
	snprintf(want, sizeof(want), "\t%u", handles);
	if (CHECK(ret == 0, "%s: no accmap-handles in fdinfo: %s", when, strerror(-ret)))
		CHECK(!strcmp(val, want), "%s: accmap-handles:'%s', expected '%s'", when, val,
		      want);
	ret = fdinfo_value(dev, "accmap-heap-system", val, sizeof(val));
	snprintf(want, sizeof(want), "\t%llu bytes", (unsigned long long)bytes);
	if (CHECK(ret == 0, "%s: no accmap-heap-system in fdinfo: %s", when, strerror(-ret)))
		CHECK(!strcmp(val, want), "%s: accmap-heap-system:'%s', expected '%s'", when, val,
		      want);
}

static void test_fdinfo(void)
{
	size_t pg = page_size();
	int dev = am_open(), other = am_open();
	uint32_t empty = 0, a, b, imp = 0;
	int fd = -1;

	if (dev < 0 || other < 0)
		goto out;
	check_fdinfo(dev, 0, 0, "new client");
	CHECK(am_create(dev, 3 * pg, &empty) == 0, "CREATE");
	check_fdinfo(dev, 1, 0, "a handle without memory");
	a = new_buffer(dev, 5 * pg, 0, 0);
	b = new_buffer(dev, 1, ACCMAP_ALLOC_WRITECOMBINE, 0);
	check_fdinfo(dev, 3, 6 * pg, "two buffers");
	fd = a ? export(dev, a) : -1;
	if (fd >= 0 && CHECK(am_from_fd(dev, fd, &imp) == 0, "FROM_FD"))
		check_fdinfo(dev, 4, 11 * pg, "one buffer imported into its own client");
	check_fdinfo(other, 0, 0, "the other client");
	if (fd >= 0 && CHECK(am_from_fd(other, fd, &imp) == 0, "FROM_FD"))
		check_fdinfo(other, 1, 5 * pg, "the other client after an import");
	CHECK(am_free(dev, a) == 0 && am_free(dev, b) == 0 && am_free(dev, empty) == 0, "FREE");
	check_fdinfo(dev, 1, 5 * pg, "the import left");
	/* dup()ed descriptors show the same client. */
	{
		int d = dup(dev);

		if (CHECK(d >= 0, "dup"))
			check_fdinfo(d, 1, 5 * pg, "a dup of the descriptor");
		if (d >= 0)
			close(d);
	}
out:
	if (fd >= 0)
		close(fd);
	if (other >= 0)
		close(other);
	if (dev >= 0)
		close(dev);
}

/*
 * A label left set when the program ends: labels belong to the device,
 * not to a client, so this one lasts until accmap is unloaded, and the
 * unload must free it (on the debug kernels kmemleak, which scans after
 * the unload, reports it otherwise).  Every other test removes its labels.
 */
static void test_tag_label_kept_to_unload(void)
{
	int dev = am_open();

	if (dev < 0)
		return;
	if (CHECK(am_set_label(dev, TAG_KEPT, "kept-to-unload") == 0, "SET_TAG_LABEL"))
		check_tag_label(TAG_KEPT, "kept-to-unload", "set, its client still open");
	close(dev);
	check_tag_label(TAG_KEPT, "kept-to-unload", "its client closed");
}

static const struct tap_test tests[] = {
	{ "tag_label_bad_args", test_tag_label_bad_args },
	{ "tag_label_set_and_remove", test_tag_label_set_and_remove },
	{ "tag_label_shared", test_tag_label_shared },
	{ "debugfs_format", test_debugfs_format },
	{ "debugfs_clients", test_debugfs_clients },
	{ "debugfs_allocations", test_debugfs_allocations },
	{ "debugfs_heaps", test_debugfs_heaps },
	{ "debugfs_tags", test_debugfs_tags },
	{ "debugfs_orphans_dmabuf", test_debugfs_orphans_dmabuf },
	{ "debugfs_orphans_mapping", test_debugfs_orphans_mapping },
	{ "debugfs_orphans_own", test_debugfs_orphans_own },
	{ "debugfs_comm_sanitized", test_debugfs_comm_sanitized },
	{ "debugfs_pool", test_debugfs_pool },
	{ "fdinfo", test_fdinfo },
	{ "tag_label_kept_to_unload", test_tag_label_kept_to_unload },
};

int main(void)
{
	return tap_run(tests, TAP_ARRAY_SIZE(tests));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap recordings: reader, writer and checker of accmap's recording
 * file format.  See recording.h and
 * Documentation/userspace-api/accmap-recording.rst.
 *
 * The reader works on a buffer in memory and never reads past its end.
 * Every offset it follows is checked as "offset <= size && length <= size -
 * offset", which cannot overflow, and every count is bounded before it is
 * multiplied.  Map contents are copied out only after their ranges in the
 * DATA section were found not to overlap, so the memory a file can make
 * the reader allocate is bounded by the file's size plus the fixed limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording.h"

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Header fields (byte offsets). */
#define HDR_MAGIC		0
#define HDR_VERSION		8
#define HDR_HEADER_SIZE		12
#define HDR_FILE_SIZE		16
#define HDR_FLAGS		24
#define HDR_SECTION_COUNT	28
#define HDR_SECTION_OFFSET	32
#define HDR_SECTION_ENTRY	40
#define HDR_FORMAT		44
#define HDR_AS			48
#define HDR_VA_BITS		52
#define HDR_GPU_ID		56
#define HDR_RESERVED0		60
#define HDR_TARGET		64
#define HDR_RESERVED1		96

/* Section table entry fields. */
#define SECT_TYPE		0
#define SECT_FLAGS		4
#define SECT_OFFSET		8
#define SECT_SIZE		16
#define SECT_COUNT		24
#define SECT_ENTRY_SIZE		32
#define SECT_RESERVED		36

/* Map record fields. */
#define MAP_GPU_VA		0
#define MAP_LENGTH		8
#define MAP_FLAGS		16
#define MAP_ATTR		20
#define MAP_CONTENT		24
#define MAP_RESERVED		28
#define MAP_DATA_OFFSET		32

/* Op record fields: struct accmap_replay_op in order. */
#define OP_OP			0
#define OP_FLAGS		4
#define OP_OFFSET		8
#define OP_VALUE		12
#define OP_MASK			16
#define OP_TIMEOUT		20
#define OP_IRQ			24
#define OP_PAD			28

/* Symbol record fields. */
#define SYM_NAME		0
#define SYM_GPU_VA		32
#define SYM_LENGTH		40
#define SYM_FLAGS		48
#define SYM_RESERVED		52

#define ALIGN8(x)		(((x) + 7) & ~(uint64_t)7)

/* ---- little-endian access ----------------------------------------------- */

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ---- errors -------------------------------------------------------------- */

/* Ends a message cut short by snprintf() with "...". */
static void mark_cut(char *msg, size_t size, int n)
{
	if (n < 0 || (size_t)n >= size)
		memcpy(msg + size - 4, "...", 4);
}

static void rec_verror(struct accmap_rec_error *err, const char *name, uint64_t offset,
		       const char *fmt, va_list ap)
{
	char what[ACCMAP_REC_ERR_LEN];
	int n;

	if (!err)
		return;
	n = vsnprintf(what, sizeof(what), fmt, ap);
	mark_cut(what, sizeof(what), n);
	err->offset = offset;
	if (offset == ACCMAP_REC_NO_OFFSET)
		n = snprintf(err->msg, sizeof(err->msg), "%s: %s", name ? name : "recording",
			     what);
	else
		n = snprintf(err->msg, sizeof(err->msg), "%s: offset 0x%llx: %s",
			     name ? name : "recording", (unsigned long long)offset, what);
	mark_cut(err->msg, sizeof(err->msg), n);
}

__printf(5, 6)
static int rec_error(struct accmap_rec_error *err, const char *name, uint64_t offset, int ret,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rec_verror(err, name, offset, fmt, ap);
	va_end(ap);
	return ret;
}

/* ---- checks shared by the reader, the writer and the builder ------------- */

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/*
 * A fixed field of @size bytes holding a NUL-terminated string of 1 to
 * @size - 1 characters that @ok accepts, zeros after it.  Returns NULL or
 * what is wrong.
 */
static const char *fixed_string_problem(const char *s, size_t size, bool (*ok)(char))
{
	size_t len = strnlen(s, size), i;

	if (!len)
		return "is empty";
	if (len == size)
		return "has no terminating NUL";
	for (i = 0; i < len; i++)
		if (!ok(s[i]))
			return "has a character that is not allowed";
	for (i = len; i < size; i++)
		if (s[i])
			return "has bytes after its NUL that are not 0";
	return NULL;
}

static bool is_target_char(char c)
{
	return c > ' ' && c < 0x7f;
}

static bool is_note_char(char c)
{
	return (c >= ' ' && c < 0x7f) || c == '\n' || c == '\t';
}

/* A name as a C string: 1 to 31 allowed characters. */
static bool name_ok(const char *name, size_t size, bool (*ok)(char))
{
	size_t len, i;

	if (!name)
		return false;
	len = strnlen(name, size);
	if (!len || len == size)
		return false;
	for (i = 0; i < len; i++)
		if (!ok(name[i]))
			return false;
	return true;
}

/**
 * struct op_rule - which fields of an op may be set
 * @flags:    flags the op takes
 * @offset:   it names a register
 * @value:    @value may be non-zero
 * @mask:     @mask may be non-zero
 * @need_mask: @mask must be non-zero
 * @timeout:  the most @timeout_us may be; 0 if it must be 0
 * @need_timeout: @timeout_us must be non-zero
 * @irq:      it names an interrupt source
 */
struct op_rule {
	uint32_t flags;
	bool offset;
	bool value;
	bool mask;
	bool need_mask;
	uint32_t timeout;
	bool need_timeout;
	bool irq;
};

static const struct op_rule op_rules[] = {
	[ACCMAP_REPLAY_OP_WRITE] = {
		.flags = ACCMAP_REPLAY_OP_CAPTURED, .offset = true, .value = true,
	},
	[ACCMAP_REPLAY_OP_READ] = {
		.flags = ACCMAP_REPLAY_OP_STRICT | ACCMAP_REPLAY_OP_CAPTURE,
		.offset = true, .value = true, .mask = true,
	},
	[ACCMAP_REPLAY_OP_POLL] = {
		.offset = true, .value = true, .mask = true,
		.timeout = ACCMAP_REPLAY_TIMEOUT_MAX_US, .need_timeout = true,
	},
	[ACCMAP_REPLAY_OP_WAIT_IRQ] = {
		.mask = true, .need_mask = true,
		.timeout = ACCMAP_REPLAY_TIMEOUT_MAX_US, .need_timeout = true, .irq = true,
	},
	[ACCMAP_REPLAY_OP_DELAY] = {
		.timeout = ACCMAP_REPLAY_DELAY_MAX_US,
	},
	[ACCMAP_REPLAY_OP_WRITE_ROOT] = {
		.flags = ACCMAP_REPLAY_OP_HI, .offset = true,
	},
};

#define NR_OP_RULES	ARRAY_SIZE(op_rules)

/*
 * The first rule of <linux/accmap.h> @op breaks, as a message, with the
 * byte offset of the field in *@field; NULL if it breaks none.  Whether
 * the register offset lies in the target's window is the kernel's to say.
 * *@captured says whether a CAPTURE READ came earlier in the list (start
 * it false and pass the ops in order); @op's own CAPTURE READ sets it.
 */
static const char *op_problem(const struct accmap_replay_op *op, unsigned int *field,
			      bool *captured)
{
	const struct op_rule *rule;

	if (op->op == 0 || op->op >= NR_OP_RULES) {
		*field = OP_OP;
		return "unknown op";
	}
	rule = &op_rules[op->op];
	*field = OP_FLAGS;
	if (op->flags & ~rule->flags)
		return "flags not defined for this op";
	*field = OP_OFFSET;
	if (!rule->offset && op->offset)
		return "offset must be 0 for this op";
	if (op->offset & 3)
		return "offset is not 4-byte aligned";
	*field = OP_VALUE;
	if (!rule->value && op->value)
		return "value must be 0 for this op";
	*field = OP_MASK;
	if (!rule->mask && op->mask)
		return "mask must be 0 for this op";
	if (rule->need_mask && !op->mask)
		return "mask must not be 0";
	*field = OP_TIMEOUT;
	if (op->timeout_us > rule->timeout)
		return rule->timeout ? "timeout_us is above the limit" :
				       "timeout_us must be 0 for this op";
	if (rule->need_timeout && !op->timeout_us)
		return "timeout_us must not be 0";
	*field = OP_IRQ;
	if (!rule->irq && op->irq)
		return "irq must be 0 for this op";
	if (op->irq >= ACCMAP_REPLAY_IRQ_COUNT)
		return "unknown interrupt source";
	*field = OP_PAD;
	if (op->pad)
		return "pad is not 0";
	*field = OP_FLAGS;
	if ((op->flags & ACCMAP_REPLAY_OP_CAPTURE) && (op->flags & ACCMAP_REPLAY_OP_STRICT))
		return "CAPTURE with STRICT";
	if (op->flags & ACCMAP_REPLAY_OP_CAPTURED) {
		if (!*captured)
			return "CAPTURED without a CAPTURE READ before it";
		*field = OP_VALUE;
		if (op->value)
			return "value of a CAPTURED write must be 0";
	}
	if (op->flags & ACCMAP_REPLAY_OP_CAPTURE)
		*captured = true;
	return NULL;
}

/*
 * Where the records of a recording are in its file, for messages: the
 * offset of the first record and the distance between records, or
 * ACCMAP_REC_NO_OFFSET for a recording that never was a file.
 */
struct rec_where {
	uint64_t header;
	uint64_t maps, map_size;
	uint64_t ops, op_size;
	uint64_t symbols, symbol_size;
	uint64_t note;
};

static const struct rec_where no_where = {
	.header = ACCMAP_REC_NO_OFFSET,
	.maps = ACCMAP_REC_NO_OFFSET,
	.ops = ACCMAP_REC_NO_OFFSET,
	.symbols = ACCMAP_REC_NO_OFFSET,
	.note = ACCMAP_REC_NO_OFFSET,
};

/* Offset of @field in record @i of a table at @base, or NO_OFFSET. */
static uint64_t at(uint64_t base, uint64_t size, uint64_t i, uint64_t field)
{
	if (base == ACCMAP_REC_NO_OFFSET)
		return ACCMAP_REC_NO_OFFSET;
	return base + i * size + field;
}

static const char *map_problem(const struct accmap_recording *rec, const struct accmap_rec_map *m,
			       unsigned int *field)
{
	uint64_t limit = 1ULL << rec->va_bits;

	*field = MAP_GPU_VA;
	if (m->gpu_va % ACCMAP_REC_PAGE_SIZE)
		return "gpu_va is not a multiple of 4096";
	*field = MAP_LENGTH;
	if (!m->length || m->length % ACCMAP_REC_PAGE_SIZE)
		return "length is 0 or not a multiple of 4096";
	if (m->length > limit || m->gpu_va > limit - m->length)
		return "map ends above the VA space (va_bits)";
	*field = MAP_FLAGS;
	if (m->flags & ~ACCMAP_REPLAY_MAP_VALID_FLAGS)
		return "unknown map flags";
	if (!(m->flags & ACCMAP_REPLAY_MAP_READ))
		return "map flags lack READ";
	*field = MAP_ATTR;
	if (m->attr > ACCMAP_REPLAY_ATTR_MAX)
		return "attr is above 7";
	return NULL;
}

/* A map's range and index, sorted by address. */
struct map_key {
	uint64_t va;
	uint64_t len;
	uint32_t idx;
};

static int cmp_map_key(const void *a, const void *b)
{
	const struct map_key *x = a, *y = b;

	/* Ties by index: the later map of two at one address is blamed. */
	if (x->va != y->va)
		return x->va < y->va ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_sym_name(const void *a, const void *b)
{
	const struct accmap_rec_symbol *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* The maps sorted by GPU VA (malloc()ed), or NULL without memory. */
static struct map_key *maps_by_va(const struct accmap_recording *rec)
{
	struct map_key *keys = malloc((size_t)rec->nr_maps * sizeof(*keys) + 1);
	uint32_t i;

	if (!keys)
		return NULL;
	for (i = 0; i < rec->nr_maps; i++) {
		keys[i].va = rec->maps[i].gpu_va;
		keys[i].len = rec->maps[i].length;
		keys[i].idx = i;
	}
	qsort(keys, rec->nr_maps, sizeof(*keys), cmp_map_key);
	return keys;
}

/* Whether one of the @n sorted maps holds [va, va + len); never overflows. */
static bool in_sorted_maps(const struct map_key *keys, uint32_t n, uint64_t va, uint64_t len)
{
	uint32_t lo = 0, hi = n;

	/* The last map starting at or below va is the only candidate. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (keys[mid].va <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	va -= keys[lo - 1].va;
	return va < keys[lo - 1].len && len <= keys[lo - 1].len - va;
}

static const char *const op_names[] = {
	[ACCMAP_REPLAY_OP_WRITE] = "WRITE",
	[ACCMAP_REPLAY_OP_READ] = "READ",
	[ACCMAP_REPLAY_OP_POLL] = "POLL",
	[ACCMAP_REPLAY_OP_WAIT_IRQ] = "WAIT_IRQ",
	[ACCMAP_REPLAY_OP_DELAY] = "DELAY",
	[ACCMAP_REPLAY_OP_WRITE_ROOT] = "WRITE_ROOT",
};

const char *accmap_rec_op_name(uint32_t op)
{
	return op && op < NR_OP_RULES ? op_names[op] : "unknown";
}

/*
 * Every rule about the contents of a recording; the reader has checked
 * the file's structure before.  @w says where records were in the file.
 */
static int rec_check_contents(const struct accmap_recording *rec, const struct rec_where *w,
			      const char *name, struct accmap_rec_error *err)
{
	const struct accmap_rec_symbol **names = NULL;
	struct map_key *order = NULL;
	uint64_t mapped = 0;
	uint32_t i;
	bool captured = false;
	unsigned int field;
	const char *why;
	int ret = -EBADMSG;

	why = fixed_string_problem(rec->target, sizeof(rec->target), is_target_char);
	if (why)
		return rec_error(err, name, at(w->header, 0, 0, HDR_TARGET), ret,
				 "target name %s", why);
	if (rec->format >= ACCMAP_PGT_COUNT)
		return rec_error(err, name, at(w->header, 0, 0, HDR_FORMAT), -EOPNOTSUPP,
				 "unknown page-table format %u", rec->format);
	if (rec->as >= ACCMAP_REC_AS_MAX)
		return rec_error(err, name, at(w->header, 0, 0, HDR_AS), ret,
				 "address space %u is not below %u", rec->as, ACCMAP_REC_AS_MAX);
	if (rec->va_bits < ACCMAP_REPLAY_VA_BITS_MIN || rec->va_bits > ACCMAP_REPLAY_VA_BITS_MAX)
		return rec_error(err, name, at(w->header, 0, 0, HDR_VA_BITS), ret,
				 "va_bits %u is not %u to %u", rec->va_bits,
				 ACCMAP_REPLAY_VA_BITS_MIN, ACCMAP_REPLAY_VA_BITS_MAX);

	if (!rec->nr_maps || rec->nr_maps > ACCMAP_REPLAY_MAPS_MAX)
		return rec_error(err, name, w->maps, ret, "%u maps, not 1 to %u", rec->nr_maps,
				 ACCMAP_REPLAY_MAPS_MAX);
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];

		why = map_problem(rec, m, &field);
		if (why)
			return rec_error(err, name, at(w->maps, w->map_size, i, field), ret,
					 "map %u (gpu_va 0x%llx, length 0x%llx): %s", i,
					 (unsigned long long)m->gpu_va,
					 (unsigned long long)m->length, why);
		/* Each length is below 2^48: no overflow in 4096 of them. */
		mapped += m->length;
		if (mapped > ACCMAP_REC_MAPPED_MAX)
			return rec_error(err, name, at(w->maps, w->map_size, i, MAP_LENGTH), ret,
					 "maps 0 to %u map more than %llu bytes", i,
					 (unsigned long long)ACCMAP_REC_MAPPED_MAX);
	}

	order = maps_by_va(rec);
	if (!order)
		return rec_error(err, name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
	for (i = 1; i < rec->nr_maps; i++) {
		const struct map_key *prev = &order[i - 1], *m = &order[i];

		if (m->va - prev->va < prev->len) {
			ret = rec_error(err, name,
					at(w->maps, w->map_size, m->idx, MAP_GPU_VA), ret,
					"map %u (gpu_va 0x%llx) overlaps map %u (0x%llx to 0x%llx)",
					m->idx, (unsigned long long)m->va, prev->idx,
					(unsigned long long)prev->va,
					(unsigned long long)(prev->va + prev->len));
			goto out;
		}
	}

	if (!rec->nr_ops || rec->nr_ops > ACCMAP_REPLAY_OPS_MAX) {
		ret = rec_error(err, name, w->ops, ret, "%u ops, not 1 to %u", rec->nr_ops,
				ACCMAP_REPLAY_OPS_MAX);
		goto out;
	}
	for (i = 0; i < rec->nr_ops; i++) {
		why = op_problem(&rec->ops[i], &field, &captured);
		if (why) {
			ret = rec_error(err, name, at(w->ops, w->op_size, i, field), ret,
					"op %u (%s %u): %s", i, accmap_rec_op_name(rec->ops[i].op),
					rec->ops[i].op, why);
			goto out;
		}
	}

	if (rec->nr_symbols > ACCMAP_REC_SYMBOLS_MAX) {
		ret = rec_error(err, name, w->symbols, ret, "%u symbols, more than %u",
				rec->nr_symbols, ACCMAP_REC_SYMBOLS_MAX);
		goto out;
	}
	for (i = 0; i < rec->nr_symbols; i++) {
		const struct accmap_rec_symbol *s = &rec->symbols[i];

		why = fixed_string_problem(s->name, sizeof(s->name), is_name_char);
		if (why) {
			ret = rec_error(err, name, at(w->symbols, w->symbol_size, i, SYM_NAME), ret,
					"symbol %u: name %s", i, why);
			goto out;
		}
		if (!s->length) {
			ret = rec_error(err, name, at(w->symbols, w->symbol_size, i, SYM_LENGTH),
					ret, "symbol %u (%s): length is 0", i, s->name);
			goto out;
		}
		if (!in_sorted_maps(order, rec->nr_maps, s->gpu_va, s->length)) {
			ret = rec_error(err, name,
					at(w->symbols, w->symbol_size, i, SYM_GPU_VA), ret,
					"symbol %u (%s): 0x%llx, 0x%llx bytes, not inside one map",
					i, s->name, (unsigned long long)s->gpu_va,
					(unsigned long long)s->length);
			goto out;
		}
		if (s->flags & ~ACCMAP_REC_SYM_VALID_FLAGS) {
			ret = rec_error(err, name, at(w->symbols, w->symbol_size, i, SYM_FLAGS),
					ret, "symbol %u (%s): unknown flags 0x%x", i, s->name,
					s->flags);
			goto out;
		}
	}
	names = malloc((size_t)rec->nr_symbols * sizeof(*names) + 1);
	if (!names) {
		ret = rec_error(err, name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < rec->nr_symbols; i++)
		names[i] = &rec->symbols[i];
	qsort(names, rec->nr_symbols, sizeof(*names), cmp_sym_name);
	for (i = 1; i < rec->nr_symbols; i++) {
		uint32_t a = (uint32_t)(names[i - 1] - rec->symbols);
		uint32_t b = (uint32_t)(names[i] - rec->symbols);

		if (!strcmp(names[i]->name, names[i - 1]->name)) {
			/* Blame the later one in the file. */
			ret = rec_error(err, name,
					at(w->symbols, w->symbol_size, a > b ? a : b, SYM_NAME),
					ret, "symbols %u and %u are both named %s",
					a < b ? a : b, a > b ? a : b, names[i]->name);
			goto out;
		}
	}

	if (rec->note) {
		size_t len = strnlen(rec->note, ACCMAP_REC_NOTE_MAX + 1);

		if (len > ACCMAP_REC_NOTE_MAX) {
			ret = rec_error(err, name, w->note, ret, "note longer than %u bytes",
					ACCMAP_REC_NOTE_MAX);
			goto out;
		}
		for (i = 0; i < len; i++) {
			if (!is_note_char(rec->note[i])) {
				ret = rec_error(err, name, at(w->note, 1, i, 0), ret,
						"note byte %u (0x%02x) is not printable", i,
						(unsigned char)rec->note[i]);
				goto out;
			}
		}
	}
	ret = 0;
out:
	free(names);
	free(order);
	return ret;
}

int accmap_rec_check(const struct accmap_recording *rec, struct accmap_rec_error *err)
{
	if (!rec)
		return rec_error(err, NULL, ACCMAP_REC_NO_OFFSET, -EINVAL, "no recording");
	return rec_check_contents(rec, &no_where, NULL, err);
}

/* ---- building a recording in memory -------------------------------------- */

int accmap_rec_create(const char *target, uint32_t format, uint32_t as, uint32_t va_bits,
		      struct accmap_recording **out)
{
	struct accmap_recording *rec;

	if (!out || !name_ok(target, ACCMAP_REPLAY_NAME_LEN, is_target_char) ||
	    format >= ACCMAP_PGT_COUNT || as >= ACCMAP_REC_AS_MAX ||
	    va_bits < ACCMAP_REPLAY_VA_BITS_MIN || va_bits > ACCMAP_REPLAY_VA_BITS_MAX)
		return -EINVAL;

	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	/* name_ok() saw the NUL within the field; the rest stays zero. */
	memcpy(rec->target, target, strlen(target));
	rec->format = format;
	rec->as = as;
	rec->va_bits = va_bits;
	*out = rec;
	return 0;
}

void accmap_rec_free(struct accmap_recording *rec)
{
	uint32_t i;

	if (!rec)
		return;
	for (i = 0; i < rec->nr_maps; i++)
		free(rec->maps[i].data);
	free(rec->maps);
	free(rec->ops);
	free(rec->symbols);
	free(rec->note);
	free(rec);
}

/* Room for one more entry of @size bytes in *@array of *@cap, up to @max. */
static int grow(void **array, uint32_t *cap, uint32_t used, uint32_t max, size_t size)
{
	uint32_t n;
	void *p;

	if (used < *cap)
		return 0;
	if (used >= max)
		return -E2BIG;
	n = *cap ? *cap * 2 : 16;
	if (n > max)
		n = max;
	p = realloc(*array, (size_t)n * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

int accmap_rec_add_map(struct accmap_recording *rec, uint64_t gpu_va, uint64_t length,
		       uint32_t flags, uint32_t attr, const void *data)
{
	struct accmap_rec_map m = {
		.gpu_va = gpu_va, .length = length, .flags = flags, .attr = attr,
	};
	uint64_t mapped = 0;
	unsigned int field;
	uint32_t i;
	int ret;

	if (!rec || map_problem(rec, &m, &field))
		return -EINVAL;
	for (i = 0; i < rec->nr_maps; i++)
		mapped += rec->maps[i].length;
	if (length > ACCMAP_REC_MAPPED_MAX - mapped)
		return -E2BIG;
	if (data && length > SIZE_MAX)
		return -ENOMEM;
	ret = grow((void **)&rec->maps, &rec->map_cap, rec->nr_maps, ACCMAP_REPLAY_MAPS_MAX,
		   sizeof(*rec->maps));
	if (ret)
		return ret;
	if (data) {
		m.data = malloc((size_t)length);
		if (!m.data)
			return -ENOMEM;
		memcpy(m.data, data, (size_t)length);
	}
	rec->maps[rec->nr_maps++] = m;
	return 0;
}

int accmap_rec_set_ops(struct accmap_recording *rec, const struct accmap_replay_op *ops,
		       uint32_t count)
{
	struct accmap_replay_op *copy;
	bool captured = false;
	unsigned int field;
	uint32_t i;

	if (!rec || !ops || !count || count > ACCMAP_REPLAY_OPS_MAX)
		return -EINVAL;
	for (i = 0; i < count; i++)
		if (op_problem(&ops[i], &field, &captured))
			return -EINVAL;
	copy = malloc((size_t)count * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ops, (size_t)count * sizeof(*copy));
	free(rec->ops);
	rec->ops = copy;
	rec->nr_ops = count;
	return 0;
}

int accmap_rec_add_symbol(struct accmap_recording *rec, const char *name, uint64_t gpu_va,
			  uint64_t length, uint32_t flags)
{
	struct accmap_rec_symbol *s;
	int ret;

	if (!rec || !name_ok(name, ACCMAP_REC_NAME_LEN, is_name_char) || !length ||
	    (flags & ~ACCMAP_REC_SYM_VALID_FLAGS) || gpu_va + length < gpu_va)
		return -EINVAL;
	if (accmap_rec_find_symbol(rec, name))
		return -EEXIST;
	ret = grow((void **)&rec->symbols, &rec->sym_cap, rec->nr_symbols,
		   ACCMAP_REC_SYMBOLS_MAX, sizeof(*rec->symbols));
	if (ret)
		return ret;
	s = &rec->symbols[rec->nr_symbols++];
	memset(s, 0, sizeof(*s));
	memcpy(s->name, name, strlen(name));
	s->gpu_va = gpu_va;
	s->length = length;
	s->flags = flags;
	return 0;
}

int accmap_rec_set_note(struct accmap_recording *rec, const char *note)
{
	size_t len, i;
	char *copy;

	if (!rec)
		return -EINVAL;
	len = note ? strnlen(note, ACCMAP_REC_NOTE_MAX + 1) : 0;
	if (len > ACCMAP_REC_NOTE_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!is_note_char(note[i]))
			return -EINVAL;
	copy = NULL;
	if (len) {
		copy = malloc(len + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, note, len + 1);
	}
	free(rec->note);
	rec->note = copy;
	return 0;
}

const struct accmap_rec_symbol *accmap_rec_find_symbol(const struct accmap_recording *rec,
						       const char *name)
{
	uint32_t i;

	if (!rec || !name || strnlen(name, ACCMAP_REC_NAME_LEN) == ACCMAP_REC_NAME_LEN)
		return NULL;
	for (i = 0; i < rec->nr_symbols; i++)
		if (!strncmp(rec->symbols[i].name, name, ACCMAP_REC_NAME_LEN))
			return &rec->symbols[i];
	return NULL;
}

int accmap_rec_find_map(const struct accmap_recording *rec, uint64_t gpu_va, uint64_t length)
{
	uint32_t i;

	if (!rec || !length)
		return -ERANGE;
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];

		if (gpu_va - m->gpu_va < m->length && length <= m->length - (gpu_va - m->gpu_va))
			return (int)i;
	}
	return -ERANGE;
}

/* ---- the reader ----------------------------------------------------------- */

/**
 * struct rec_section - a section as the table gives it
 * @entry:  file offset of its table entry
 * @type:   ACCMAP_REC_SECT_*
 * @offset: file offset of its first byte
 * @size:   bytes
 * @count:  records (array sections)
 * @rsize:  bytes per record (array sections)
 */
struct rec_section {
	uint64_t entry;
	uint32_t type;
	uint64_t offset;
	uint64_t size;
	uint64_t count;
	uint32_t rsize;
};

/**
 * struct rec_reader - the state of one parse
 * @buf:  the file
 * @size: its size, as the header says and the buffer has
 * @name: the file's name for messages
 * @err:  where errors go
 * @sect: the known sections found, by type; @sect[t].entry is 0 if none
 */
struct rec_reader {
	const uint8_t *buf;
	uint64_t size;
	const char *name;
	struct accmap_rec_error *err;
	struct rec_section sect[ACCMAP_REC_SECT_NOTE + 1];
};

__printf(3, 4)
static int bad(struct rec_reader *r, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rec_verror(r->err, r->name, offset, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Whether [off, off + len) lies in the file; never overflows. */
static bool in_file(const struct rec_reader *r, uint64_t off, uint64_t len)
{
	return off <= r->size && len <= r->size - off;
}

/* Whether the @len bytes at @off of the file are all 0. */
static bool zero_bytes(const struct rec_reader *r, uint64_t off, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (r->buf[off + i])
			return false;
	return true;
}

static int parse_header(struct rec_reader *r, size_t len, struct accmap_recording *rec)
{
	const uint8_t *h = r->buf;
	uint64_t file_size;
	uint32_t version, header_size;

	if (len < ACCMAP_REC_MAGIC_LEN || memcmp(h, ACCMAP_REC_MAGIC, ACCMAP_REC_MAGIC_LEN))
		return bad(r, HDR_MAGIC, "not an accmap recording (no \"%s\" magic)",
			   ACCMAP_REC_MAGIC);
	if (len < ACCMAP_REC_HEADER_SIZE)
		return bad(r, len, "truncated: %zu bytes, shorter than the %u-byte header", len,
			   ACCMAP_REC_HEADER_SIZE);
	version = get_le32(h + HDR_VERSION);
	if (version > ACCMAP_REC_VERSION)
		return rec_error(r->err, r->name, HDR_VERSION, -EOPNOTSUPP,
				 "version %u is newer than this reader's %u", version,
				 ACCMAP_REC_VERSION);
	if (version != ACCMAP_REC_VERSION)
		return bad(r, HDR_VERSION, "version %u does not exist", version);

	file_size = get_le64(h + HDR_FILE_SIZE);
	if (file_size > len)
		return bad(r, len, "truncated: %zu bytes of the %llu the header gives", len,
			   (unsigned long long)file_size);
	if (file_size < len)
		return bad(r, file_size, "%llu bytes after the end the header gives",
			   (unsigned long long)(len - file_size));
	r->size = file_size;

	header_size = get_le32(h + HDR_HEADER_SIZE);
	if (header_size < ACCMAP_REC_HEADER_SIZE || header_size % 8 || header_size > r->size)
		return bad(r, HDR_HEADER_SIZE,
			   "header size %u: below %u, unaligned or past the end",
			   header_size, ACCMAP_REC_HEADER_SIZE);
	if (get_le32(h + HDR_FLAGS))
		return bad(r, HDR_FLAGS, "header flags 0x%x are not 0", get_le32(h + HDR_FLAGS));
	if (get_le32(h + HDR_RESERVED0) || !zero_bytes(r, HDR_RESERVED1, 32))
		return bad(r, get_le32(h + HDR_RESERVED0) ? HDR_RESERVED0 : HDR_RESERVED1,
			   "reserved header bytes are not 0");

	/* The header is copied; rec_check_contents() judges these fields. */
	memcpy(rec->target, h + HDR_TARGET, sizeof(rec->target));
	rec->format = get_le32(h + HDR_FORMAT);
	rec->as = get_le32(h + HDR_AS);
	rec->va_bits = get_le32(h + HDR_VA_BITS);
	rec->gpu_id = get_le32(h + HDR_GPU_ID);
	return (int)header_size;
}

/* The record size and the most records a section of @type may have. */
static bool array_section(uint32_t type, uint32_t *rsize, uint32_t *max)
{
	switch (type) {
	case ACCMAP_REC_SECT_MAPS:
		*rsize = ACCMAP_REC_MAP_SIZE;
		*max = ACCMAP_REPLAY_MAPS_MAX;
		return true;
	case ACCMAP_REC_SECT_OPS:
		*rsize = ACCMAP_REC_OP_SIZE;
		*max = ACCMAP_REPLAY_OPS_MAX;
		return true;
	case ACCMAP_REC_SECT_SYMBOLS:
		*rsize = ACCMAP_REC_SYMBOL_SIZE;
		*max = ACCMAP_REC_SYMBOLS_MAX;
		return true;
	}
	return false;
}

static const char *const sect_names[] = {
	[ACCMAP_REC_SECT_MAPS] = "MAPS",
	[ACCMAP_REC_SECT_DATA] = "DATA",
	[ACCMAP_REC_SECT_OPS] = "OPS",
	[ACCMAP_REC_SECT_SYMBOLS] = "SYMBOLS",
	[ACCMAP_REC_SECT_NOTE] = "NOTE",
};

static int parse_sections(struct rec_reader *r, uint32_t header_size)
{
	struct rec_section all[ACCMAP_REC_SECTIONS_MAX + 2];
	uint64_t table, tsize;
	uint32_t count, esize, i, j, n = 0;

	count = get_le32(r->buf + HDR_SECTION_COUNT);
	table = get_le64(r->buf + HDR_SECTION_OFFSET);
	esize = get_le32(r->buf + HDR_SECTION_ENTRY);
	if (!count || count > ACCMAP_REC_SECTIONS_MAX)
		return bad(r, HDR_SECTION_COUNT, "%u sections, not 1 to %u", count,
			   ACCMAP_REC_SECTIONS_MAX);
	if (esize < ACCMAP_REC_SECTION_SIZE || esize % 8)
		return bad(r, HDR_SECTION_ENTRY, "section entry size %u is below %u or unaligned",
			   esize, ACCMAP_REC_SECTION_SIZE);
	tsize = (uint64_t)count * esize;
	if (table % 8 || table < header_size || !in_file(r, table, tsize))
		return bad(r, HDR_SECTION_OFFSET,
			   "section table at 0x%llx (%llu bytes) is unaligned, in the header or past the end",
			   (unsigned long long)table, (unsigned long long)tsize);

	/* The header and the table take part in the overlap check. */
	all[n++] = (struct rec_section){ .entry = HDR_MAGIC, .offset = 0, .size = header_size };
	all[n++] = (struct rec_section){ .entry = HDR_SECTION_OFFSET, .offset = table,
					 .size = tsize };

	for (i = 0; i < count; i++) {
		uint64_t e = table + (uint64_t)i * esize;
		const uint8_t *p = r->buf + e;
		struct rec_section s = {
			.entry = e,
			.type = get_le32(p + SECT_TYPE),
			.offset = get_le64(p + SECT_OFFSET),
			.size = get_le64(p + SECT_SIZE),
			.count = get_le64(p + SECT_COUNT),
			.rsize = get_le32(p + SECT_ENTRY_SIZE),
		};
		uint32_t flags = get_le32(p + SECT_FLAGS), rsize, max;
		bool known = s.type < ARRAY_SIZE(sect_names) &&
			     sect_names[s.type];

		if (flags & ~ACCMAP_REC_SECT_OPTIONAL)
			return bad(r, e + SECT_FLAGS, "section %u: unknown flags 0x%x", i, flags);
		if (get_le32(p + SECT_RESERVED))
			return bad(r, e + SECT_RESERVED, "section %u: reserved field is not 0", i);
		if (s.offset % 8 || !in_file(r, s.offset, s.size))
			return bad(r, e + SECT_OFFSET,
				   "section %u: 0x%llx bytes at 0x%llx: unaligned or past the end",
				   i, (unsigned long long)s.size, (unsigned long long)s.offset);
		if (!known) {
			if (!(flags & ACCMAP_REC_SECT_OPTIONAL))
				return rec_error(r->err, r->name, e + SECT_TYPE, -EOPNOTSUPP,
						 "section %u: type %u is unknown to this reader and required",
						 i, s.type);
		} else if (array_section(s.type, &rsize, &max)) {
			if (s.rsize < rsize || s.rsize % 8)
				return bad(r, e + SECT_ENTRY_SIZE,
					   "section %u (%s): record size %u is below %u or unaligned",
					   i, sect_names[s.type], s.rsize, rsize);
			if (s.count > max)
				return bad(r, e + SECT_COUNT,
					   "section %u (%s): %llu records, over %u", i,
					   sect_names[s.type], (unsigned long long)s.count, max);
			if (s.count * s.rsize != s.size)
				return bad(r, e + SECT_SIZE,
					   "section %u (%s): %llu bytes, not %llu records of %u",
					   i, sect_names[s.type], (unsigned long long)s.size,
					   (unsigned long long)s.count, s.rsize);
		} else if (s.count || s.rsize) {
			return bad(r, e + SECT_COUNT,
				   "section %u (%s): count and entry size must be 0", i,
				   sect_names[s.type]);
		}
		if (known && r->sect[s.type].entry)
			return bad(r, e + SECT_TYPE, "section %u: a second %s section", i,
				   sect_names[s.type]);
		for (j = 0; j < n; j++) {
			const struct rec_section *o = &all[j];

			if (s.size && o->size && s.offset < o->offset + o->size &&
			    o->offset < s.offset + s.size)
				return bad(r, e + SECT_OFFSET,
					   "section %u overlaps %s", i,
					   j == 0 ? "the header" : j == 1 ? "the section table" :
					   "another section");
		}
		all[n++] = s;
		if (known)
			r->sect[s.type] = s;
	}

	if (!r->sect[ACCMAP_REC_SECT_MAPS].entry)
		return bad(r, HDR_SECTION_COUNT, "no MAPS section");
	if (!r->sect[ACCMAP_REC_SECT_OPS].entry)
		return bad(r, HDR_SECTION_COUNT, "no OPS section");
	return 0;
}

static int cmp_u64_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int parse_maps(struct rec_reader *r, struct accmap_recording *rec)
{
	const struct rec_section *s = &r->sect[ACCMAP_REC_SECT_MAPS];
	const struct rec_section *d = &r->sect[ACCMAP_REC_SECT_DATA];
	/* Per map with contents: {data offset, map index}. */
	uint64_t (*ranges)[2] = NULL;
	uint32_t i, nranges = 0;
	int ret = -EBADMSG;

	if (!s->count)
		return bad(r, s->entry + SECT_COUNT, "no maps");
	rec->maps = calloc((size_t)s->count, sizeof(*rec->maps));
	ranges = malloc((size_t)s->count * sizeof(*ranges));
	if (!rec->maps || !ranges) {
		ret = rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
		goto out;
	}
	rec->map_cap = (uint32_t)s->count;

	for (i = 0; i < s->count; i++) {
		uint64_t e = s->offset + (uint64_t)i * s->rsize;
		const uint8_t *p = r->buf + e;
		struct accmap_rec_map *m = &rec->maps[i];
		uint32_t content = get_le32(p + MAP_CONTENT);
		uint64_t doff = get_le64(p + MAP_DATA_OFFSET);

		m->gpu_va = get_le64(p + MAP_GPU_VA);
		m->length = get_le64(p + MAP_LENGTH);
		m->flags = get_le32(p + MAP_FLAGS);
		m->attr = get_le32(p + MAP_ATTR);
		rec->nr_maps = i + 1;
		if (get_le32(p + MAP_RESERVED)) {
			ret = bad(r, e + MAP_RESERVED, "map %u: reserved field is not 0", i);
			goto out;
		}
		if (content == ACCMAP_REC_CONTENT_ZERO) {
			if (doff) {
				ret = bad(r, e + MAP_DATA_OFFSET,
					  "map %u: zero-filled, yet data_offset is not 0", i);
				goto out;
			}
			continue;
		}
		if (content != ACCMAP_REC_CONTENT_DATA) {
			ret = bad(r, e + MAP_CONTENT, "map %u: unknown content %u", i, content);
			goto out;
		}
		if (!m->length) {
			ret = bad(r, e + MAP_LENGTH, "map %u: length is 0", i);
			goto out;
		}
		if (!d->entry || doff > d->size || m->length > d->size - doff) {
			ret = bad(r, e + MAP_DATA_OFFSET,
				  "map %u: contents (0x%llx bytes at 0x%llx) not inside the DATA section (0x%llx bytes)",
				  i, (unsigned long long)m->length, (unsigned long long)doff,
				  (unsigned long long)(d->entry ? d->size : 0));
			goto out;
		}
		ranges[nranges][0] = doff;
		ranges[nranges][1] = i;
		nranges++;
	}

	/* Contents may not share bytes: what the copies take is bounded. */
	qsort(ranges, nranges, sizeof(*ranges), cmp_u64_pair);
	for (i = 1; i < nranges; i++) {
		const struct accmap_rec_map *prev = &rec->maps[ranges[i - 1][1]];

		if (ranges[i][0] - ranges[i - 1][0] < prev->length) {
			ret = bad(r, s->offset + ranges[i][1] * s->rsize + MAP_DATA_OFFSET,
				  "map %llu: contents overlap those of map %llu",
				  (unsigned long long)ranges[i][1],
				  (unsigned long long)ranges[i - 1][1]);
			goto out;
		}
	}
	for (i = 0; i < nranges; i++) {
		struct accmap_rec_map *m = &rec->maps[ranges[i][1]];

		if (m->length > SIZE_MAX) {
			ret = rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM,
					"map contents too large for this machine");
			goto out;
		}
		m->data = malloc((size_t)m->length);
		if (!m->data) {
			ret = rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM,
					"out of memory");
			goto out;
		}
		memcpy(m->data, r->buf + d->offset + ranges[i][0], (size_t)m->length);
	}
	ret = 0;
out:
	free(ranges);
	return ret;
}

static int parse_ops(struct rec_reader *r, struct accmap_recording *rec)
{
	const struct rec_section *s = &r->sect[ACCMAP_REC_SECT_OPS];
	uint32_t i;

	if (!s->count)
		return bad(r, s->entry + SECT_COUNT, "no ops");
	rec->ops = malloc((size_t)s->count * sizeof(*rec->ops));
	if (!rec->ops)
		return rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
	for (i = 0; i < s->count; i++) {
		const uint8_t *p = r->buf + s->offset + (uint64_t)i * s->rsize;
		struct accmap_replay_op *op = &rec->ops[i];

		op->op = get_le32(p + OP_OP);
		op->flags = get_le32(p + OP_FLAGS);
		op->offset = get_le32(p + OP_OFFSET);
		op->value = get_le32(p + OP_VALUE);
		op->mask = get_le32(p + OP_MASK);
		op->timeout_us = get_le32(p + OP_TIMEOUT);
		op->irq = get_le32(p + OP_IRQ);
		op->pad = get_le32(p + OP_PAD);
	}
	rec->nr_ops = (uint32_t)s->count;
	return 0;
}

static int parse_symbols(struct rec_reader *r, struct accmap_recording *rec)
{
	const struct rec_section *s = &r->sect[ACCMAP_REC_SECT_SYMBOLS];
	uint32_t i;

	if (!s->entry || !s->count)
		return 0;
	rec->symbols = calloc((size_t)s->count, sizeof(*rec->symbols));
	if (!rec->symbols)
		return rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
	rec->sym_cap = (uint32_t)s->count;
	for (i = 0; i < s->count; i++) {
		uint64_t e = s->offset + (uint64_t)i * s->rsize;
		const uint8_t *p = r->buf + e;
		struct accmap_rec_symbol *sym = &rec->symbols[i];

		memcpy(sym->name, p + SYM_NAME, sizeof(sym->name));
		sym->gpu_va = get_le64(p + SYM_GPU_VA);
		sym->length = get_le64(p + SYM_LENGTH);
		sym->flags = get_le32(p + SYM_FLAGS);
		rec->nr_symbols = i + 1;
		if (get_le32(p + SYM_RESERVED))
			return bad(r, e + SYM_RESERVED, "symbol %u: reserved field is not 0", i);
	}
	return 0;
}

static int parse_note(struct rec_reader *r, struct accmap_recording *rec)
{
	const struct rec_section *s = &r->sect[ACCMAP_REC_SECT_NOTE];
	uint64_t i;

	if (!s->entry || !s->size)
		return 0;
	if (s->size > ACCMAP_REC_NOTE_MAX)
		return bad(r, s->entry + SECT_SIZE, "note of %llu bytes, over %u",
			   (unsigned long long)s->size, ACCMAP_REC_NOTE_MAX);
	/* A NUL would cut the note short: rec_check_contents() sees none. */
	for (i = 0; i < s->size; i++)
		if (!is_note_char((char)r->buf[s->offset + i]))
			return bad(r, s->offset + i, "note byte %llu (0x%02x) is not printable",
				   (unsigned long long)i, r->buf[s->offset + i]);
	rec->note = malloc((size_t)s->size + 1);
	if (!rec->note)
		return rec_error(r->err, r->name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
	memcpy(rec->note, r->buf + s->offset, (size_t)s->size);
	rec->note[s->size] = '\0';
	return 0;
}

int accmap_rec_parse(const void *buf, size_t len, const char *name,
		     struct accmap_recording **out, struct accmap_rec_error *err)
{
	struct rec_reader r = { .buf = buf, .name = name ? name : "recording", .err = err };
	struct accmap_recording *rec;
	struct rec_where w;
	int ret;

	if (err) {
		err->offset = ACCMAP_REC_NO_OFFSET;
		err->msg[0] = '\0';
	}
	if (!buf || !out)
		return rec_error(err, r.name, ACCMAP_REC_NO_OFFSET, -EINVAL, "no buffer");

	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return rec_error(err, r.name, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");

	ret = parse_header(&r, len, rec);
	if (ret < 0)
		goto fail;
	ret = parse_sections(&r, (uint32_t)ret);
	if (ret)
		goto fail;
	ret = parse_maps(&r, rec);
	if (ret)
		goto fail;
	ret = parse_ops(&r, rec);
	if (ret)
		goto fail;
	ret = parse_symbols(&r, rec);
	if (ret)
		goto fail;
	ret = parse_note(&r, rec);
	if (ret)
		goto fail;

	w.header = 0;
	w.maps = r.sect[ACCMAP_REC_SECT_MAPS].offset;
	w.map_size = r.sect[ACCMAP_REC_SECT_MAPS].rsize;
	w.ops = r.sect[ACCMAP_REC_SECT_OPS].offset;
	w.op_size = r.sect[ACCMAP_REC_SECT_OPS].rsize;
	w.symbols = r.sect[ACCMAP_REC_SECT_SYMBOLS].offset;
	w.symbol_size = r.sect[ACCMAP_REC_SECT_SYMBOLS].rsize;
	w.note = r.sect[ACCMAP_REC_SECT_NOTE].offset;
	ret = rec_check_contents(rec, &w, r.name, err);
	if (ret)
		goto fail;
	*out = rec;
	return 0;

fail:
	accmap_rec_free(rec);
	return ret;
}

int accmap_rec_load(const char *path, struct accmap_recording **out,
		    struct accmap_rec_error *err)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int fd, ret;

	if (err) {
		err->offset = ACCMAP_REC_NO_OFFSET;
		err->msg[0] = '\0';
	}
	if (!path || !out)
		return rec_error(err, path, ACCMAP_REC_NO_OFFSET, -EINVAL, "no file");

	do {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		ret = -errno;
		return rec_error(err, path, ACCMAP_REC_NO_OFFSET, ret, "%s", strerror(-ret));
	}
	/* A regular file is read in one go; a pipe in growing steps. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > ACCMAP_REC_FILE_MAX) {
			ret = rec_error(err, path, ACCMAP_REC_NO_OFFSET, -EFBIG,
					"%lld bytes, larger than %llu", (long long)st.st_size,
					(unsigned long long)ACCMAP_REC_FILE_MAX);
			goto out;
		}
		cap = (size_t)st.st_size + 1;
	}
	for (;;) {
		ssize_t n;

		if (len == cap || !buf) {
			size_t want = buf ? cap * 2 : cap;
			uint8_t *p;

			if (want > ACCMAP_REC_FILE_MAX + 1)
				want = ACCMAP_REC_FILE_MAX + 1;
			if (buf && want == cap) {
				ret = rec_error(err, path, ACCMAP_REC_NO_OFFSET, -EFBIG,
						"larger than %llu bytes",
						(unsigned long long)ACCMAP_REC_FILE_MAX);
				goto out;
			}
			p = realloc(buf, want);
			if (!p) {
				ret = rec_error(err, path, ACCMAP_REC_NO_OFFSET, -ENOMEM,
						"out of memory for %zu bytes", want);
				goto out;
			}
			buf = p;
			cap = want;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			rec_error(err, path, len, ret, "read: %s", strerror(-ret));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	if (len > ACCMAP_REC_FILE_MAX) {
		ret = rec_error(err, path, ACCMAP_REC_NO_OFFSET, -EFBIG, "larger than %llu bytes",
				(unsigned long long)ACCMAP_REC_FILE_MAX);
		goto out;
	}
	ret = accmap_rec_parse(buf, len, path, out, err);
out:
	free(buf);
	close(fd);
	return ret;
}

/* ---- the writer ----------------------------------------------------------- */

static void put_section(uint8_t *e, uint32_t type, uint64_t offset, uint64_t size,
			uint64_t count, uint32_t rsize)
{
	put_le32(e + SECT_TYPE, type);
	put_le32(e + SECT_FLAGS, 0);
	put_le64(e + SECT_OFFSET, offset);
	put_le64(e + SECT_SIZE, size);
	put_le64(e + SECT_COUNT, count);
	put_le32(e + SECT_ENTRY_SIZE, rsize);
	put_le32(e + SECT_RESERVED, 0);
}

int accmap_rec_encode(const struct accmap_recording *rec, void **out, size_t *out_len,
		      struct accmap_rec_error *err)
{
	uint64_t maps_off, ops_off, syms_off, note_off, data_off, end, data_size = 0;
	uint64_t note_len, pos;
	uint32_t nsect = 2, i;
	uint8_t *buf, *e;
	int ret;

	if (err) {
		err->offset = ACCMAP_REC_NO_OFFSET;
		err->msg[0] = '\0';
	}
	if (!rec || !out || !out_len)
		return rec_error(err, NULL, ACCMAP_REC_NO_OFFSET, -EINVAL, "no recording");
	ret = accmap_rec_check(rec, err);
	if (ret)
		return ret;

	for (i = 0; i < rec->nr_maps; i++)
		if (rec->maps[i].data)
			data_size += rec->maps[i].length;
	note_len = rec->note ? strlen(rec->note) : 0;
	nsect += data_size ? 1 : 0;
	nsect += rec->nr_symbols ? 1 : 0;
	nsect += note_len ? 1 : 0;

	/* Bounded by the checks: at most 64 GiB of data and 33 MiB more. */
	maps_off = ACCMAP_REC_HEADER_SIZE + (uint64_t)nsect * ACCMAP_REC_SECTION_SIZE;
	ops_off = maps_off + (uint64_t)rec->nr_maps * ACCMAP_REC_MAP_SIZE;
	syms_off = ops_off + (uint64_t)rec->nr_ops * ACCMAP_REC_OP_SIZE;
	note_off = syms_off + (uint64_t)rec->nr_symbols * ACCMAP_REC_SYMBOL_SIZE;
	data_off = ALIGN8(note_off + note_len);
	end = data_off + data_size;
	if (end > SIZE_MAX)
		return rec_error(err, NULL, ACCMAP_REC_NO_OFFSET, -ENOMEM,
				 "%llu bytes do not fit in memory", (unsigned long long)end);
	buf = calloc(1, (size_t)end);
	if (!buf)
		return rec_error(err, NULL, ACCMAP_REC_NO_OFFSET, -ENOMEM,
				 "out of memory for %llu bytes", (unsigned long long)end);

	memcpy(buf + HDR_MAGIC, ACCMAP_REC_MAGIC, ACCMAP_REC_MAGIC_LEN);
	put_le32(buf + HDR_VERSION, ACCMAP_REC_VERSION);
	put_le32(buf + HDR_HEADER_SIZE, ACCMAP_REC_HEADER_SIZE);
	put_le64(buf + HDR_FILE_SIZE, end);
	put_le32(buf + HDR_SECTION_COUNT, nsect);
	put_le64(buf + HDR_SECTION_OFFSET, ACCMAP_REC_HEADER_SIZE);
	put_le32(buf + HDR_SECTION_ENTRY, ACCMAP_REC_SECTION_SIZE);
	put_le32(buf + HDR_FORMAT, rec->format);
	put_le32(buf + HDR_AS, rec->as);
	put_le32(buf + HDR_VA_BITS, rec->va_bits);
	put_le32(buf + HDR_GPU_ID, rec->gpu_id);
	memcpy(buf + HDR_TARGET, rec->target, sizeof(rec->target));

	e = buf + ACCMAP_REC_HEADER_SIZE;
	put_section(e, ACCMAP_REC_SECT_MAPS, maps_off, ops_off - maps_off, rec->nr_maps,
		    ACCMAP_REC_MAP_SIZE);
	e += ACCMAP_REC_SECTION_SIZE;
	put_section(e, ACCMAP_REC_SECT_OPS, ops_off, syms_off - ops_off, rec->nr_ops,
		    ACCMAP_REC_OP_SIZE);
	e += ACCMAP_REC_SECTION_SIZE;
	if (rec->nr_symbols) {
		put_section(e, ACCMAP_REC_SECT_SYMBOLS, syms_off, note_off - syms_off,
			    rec->nr_symbols, ACCMAP_REC_SYMBOL_SIZE);
		e += ACCMAP_REC_SECTION_SIZE;
	}
	if (note_len) {
		put_section(e, ACCMAP_REC_SECT_NOTE, note_off, note_len, 0, 0);
		e += ACCMAP_REC_SECTION_SIZE;
	}
	if (data_size)
		put_section(e, ACCMAP_REC_SECT_DATA, data_off, data_size, 0, 0);

	pos = 0;
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];
		uint8_t *p = buf + maps_off + (uint64_t)i * ACCMAP_REC_MAP_SIZE;

		put_le64(p + MAP_GPU_VA, m->gpu_va);
		put_le64(p + MAP_LENGTH, m->length);
		put_le32(p + MAP_FLAGS, m->flags);
		put_le32(p + MAP_ATTR, m->attr);
		if (!m->data)
			continue;
		put_le32(p + MAP_CONTENT, ACCMAP_REC_CONTENT_DATA);
		put_le64(p + MAP_DATA_OFFSET, pos);
		memcpy(buf + data_off + pos, m->data, (size_t)m->length);
		pos += m->length;
	}
	for (i = 0; i < rec->nr_ops; i++) {
		const struct accmap_replay_op *op = &rec->ops[i];
		uint8_t *p = buf + ops_off + (uint64_t)i * ACCMAP_REC_OP_SIZE;

		put_le32(p + OP_OP, op->op);
		put_le32(p + OP_FLAGS, op->flags);
		put_le32(p + OP_OFFSET, op->offset);
		put_le32(p + OP_VALUE, op->value);
		put_le32(p + OP_MASK, op->mask);
		put_le32(p + OP_TIMEOUT, op->timeout_us);
		put_le32(p + OP_IRQ, op->irq);
		put_le32(p + OP_PAD, op->pad);
	}
	for (i = 0; i < rec->nr_symbols; i++) {
		const struct accmap_rec_symbol *s = &rec->symbols[i];
		uint8_t *p = buf + syms_off + (uint64_t)i * ACCMAP_REC_SYMBOL_SIZE;

		memcpy(p + SYM_NAME, s->name, sizeof(s->name));
		put_le64(p + SYM_GPU_VA, s->gpu_va);
		put_le64(p + SYM_LENGTH, s->length);
		put_le32(p + SYM_FLAGS, s->flags);
	}
	if (note_len)
		memcpy(buf + note_off, rec->note, (size_t)note_len);

	*out = buf;
	*out_len = (size_t)end;
	return 0;
}

/* write(2) of all @len bytes; 0 or -errno. */
static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int accmap_rec_save(const struct accmap_recording *rec, const char *path,
		    struct accmap_rec_error *err)
{
	static unsigned int serial;
	size_t len, plen;
	char *tmp = NULL;
	void *buf = NULL;
	int fd = -1, ret, tries;

	if (!path)
		return rec_error(err, NULL, ACCMAP_REC_NO_OFFSET, -EINVAL, "no file name");
	/* Checked here first so that messages name the file. */
	if (!rec)
		return rec_error(err, path, ACCMAP_REC_NO_OFFSET, -EINVAL, "no recording");
	ret = rec_check_contents(rec, &no_where, path, err);
	if (!ret)
		ret = accmap_rec_encode(rec, &buf, &len, err);
	if (ret)
		return ret;

	plen = strlen(path) + 32;
	tmp = malloc(plen);
	if (!tmp) {
		ret = rec_error(err, path, ACCMAP_REC_NO_OFFSET, -ENOMEM, "out of memory");
		goto out;
	}
	/* A new name beside @path, so that rename() replaces it at once. */
	for (tries = 0; tries < 100; tries++) {
		snprintf(tmp, plen, "%s.tmp%d.%u", path, (int)getpid(), serial++);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ret = -errno;
		rec_error(err, tmp, ACCMAP_REC_NO_OFFSET, ret, "create: %s", strerror(-ret));
		goto out;
	}
	ret = write_all(fd, buf, len);
	if (!ret && close(fd) && errno != EINTR)
		ret = -errno;
	else if (ret)
		close(fd);
	if (ret) {
		rec_error(err, tmp, ACCMAP_REC_NO_OFFSET, ret, "write: %s", strerror(-ret));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		rec_error(err, path, ACCMAP_REC_NO_OFFSET, ret, "rename from %s: %s", tmp,
			  strerror(-ret));
		unlink(tmp);
	}
out:
	free(tmp);
	free(buf);
	return ret;
}

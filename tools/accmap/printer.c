// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl's printers: aligned text tables, and the JSON writer of
 * --json (see printer.h).  JSON:  Strings are written as UTF-8
 * passes through; control characters, '"' and '\\' are escaped.  Numbers
 * are unsigned 64-bit integers, written exactly: a reader that keeps
 * numbers as doubles loses precision above 2^53, as with any JSON.
 */
#include <stdlib.h>

#include <stdarg.h>
#include <string.h>

#include "accmapctl.h"
#include "printer.h"

void json_init(struct json *j)
{
	j->buf = NULL;
	j->len = 0;
	j->f = open_memstream(&j->buf, &j->len);
	if (!j->f) {
		fputs("accmapctl: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	j->depth = 0;
	j->count[0] = 0;
}

static void json_escape(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* The separator before a value, and its member name inside an object. */
static void json_member(struct json *j, const char *key)
{
	if (j->count[j->depth]++)
		fputc(',', j->f);
	if (key) {
		json_escape(j->f, key);
		fputc(':', j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 >= JSON_MAX_DEPTH)
		abort();
	j->count[++j->depth] = 0;
}

static void json_close(struct json *j, char c)
{
	if (j->depth <= 0)
		abort();
	j->depth--;
	fputc(c, j->f);
}

void json_begin_object(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_end_object(struct json *j)
{
	json_close(j, '}');
}

void json_begin_array(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_end_array(struct json *j)
{
	json_close(j, ']');
}

void json_string(struct json *j, const char *key, const char *s)
{
	json_member(j, key);
	json_escape(j->f, s);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->f);
}

void json_finish(struct json *j, FILE *out)
{
	if (j->depth)
		abort();
	if (fclose(j->f)) {
		fputs("accmapctl: out of memory\n", stderr);
		exit(EXIT_FAILURE);
	}
	fwrite(j->buf, 1, j->len, out);
	fputc('\n', out);
	free(j->buf);
}

void json_discard(struct json *j)
{
	fclose(j->f);
	free(j->buf);
}

/* ------------------------------------------------------------------ */
/* Aligned tables */

void table_init(struct table *t, size_t ncols)
{
	t->ncols = ncols;
	t->ncells = 0;
	t->cells = NULL;
	t->right = xrealloc(NULL, ncols, sizeof(*t->right));
	memset(t->right, 0, ncols * sizeof(*t->right));
}

/* Appends one cell; rows fill left to right, top to bottom. */
void table_add(struct table *t, const char *cell)
{
	t->cells = xrealloc(t->cells, t->ncells + 1, sizeof(*t->cells));
	t->cells[t->ncells++] = xstrdup(cell && *cell ? cell : "-");
}

void table_addf(struct table *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	table_add(t, buf);
}

void table_print(const struct table *t, FILE *f)
{
	size_t rows = (t->ncells + t->ncols - 1) / t->ncols;
	size_t *width = xrealloc(NULL, t->ncols, sizeof(*width));
	size_t r, c;

	memset(width, 0, t->ncols * sizeof(*width));
	for (r = 0; r < rows; r++)
		for (c = 0; c < t->ncols && r * t->ncols + c < t->ncells; c++) {
			size_t n = strlen(t->cells[r * t->ncols + c]);

			if (n > width[c])
				width[c] = n;
		}

	for (r = 0; r < rows; r++) {
		for (c = 0; c < t->ncols && r * t->ncols + c < t->ncells; c++) {
			const char *s = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (c)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s", (int)width[c], s);
			else if (last)
				fputs(s, f);	/* no trailing blanks */
			else
				fprintf(f, "%-*s", (int)width[c], s);
		}
		fputc('\n', f);
	}
	free(width);
}

void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
}

/* ------------------------------------------------------------------ */
/* Output: text or JSON through one set of calls */

void out_init(struct out *o, bool json, bool exact)
{
	memset(o, 0, sizeof(*o));
	o->json = json;
	o->exact = exact;
	if (json) {
		json_init(&o->j);
		json_begin_object(&o->j, NULL);
	}
}

int out_finish(struct out *o)
{
	if (o->in_list || o->in_group)
		abort();
	if (o->json) {
		json_end_object(&o->j);
		json_finish(&o->j, stdout);
	}
	return EXIT_SUCCESS;
}

void out_discard(struct out *o)
{
	if (o->in_list || o->in_group)
		table_free(&o->t);
	o->in_list = false;
	o->in_group = false;
	if (o->json)
		json_discard(&o->j);
}

void out_object_begin(struct out *o, const char *key)
{
	if (o->json)
		json_begin_object(&o->j, key);
}

void out_object_end(struct out *o)
{
	if (o->json)
		json_end_object(&o->j);
}

void out_list_begin(struct out *o, const char *key, const char *const *heads,
		    size_t ncols, unsigned long right)
{
	size_t c;

	if (o->in_list || o->in_group)
		abort();
	o->in_list = true;
	o->rows = 0;
	if (o->json) {
		json_begin_array(&o->j, key);
		return;
	}
	table_init(&o->t, ncols);
	for (c = 0; c < ncols; c++) {
		o->t.right[c] = c < 8 * sizeof(right) && (right >> c) & 1;
		table_add(&o->t, heads[c]);
	}
}

void out_row_begin(struct out *o)
{
	o->rows++;
	if (o->json)
		json_begin_object(&o->j, NULL);
}

void out_row_end(struct out *o)
{
	if (o->json)
		json_end_object(&o->j);
}

void out_list_end(struct out *o, const char *empty)
{
	o->in_list = false;
	if (o->json) {
		json_end_array(&o->j);
		return;
	}
	table_print(&o->t, stdout);
	if (!o->rows && empty)
		printf("%s\n", empty);
	table_free(&o->t);
}

void out_group_begin(struct out *o, const char *key, int width)
{
	if (o->in_list || o->in_group)
		abort();
	o->in_group = true;
	o->width = width;
	if (key)
		out_object_begin(o, key);
	if (!o->json) {
		/* Label and text of each line; a NULL label: the text alone. */
		table_init(&o->t, 2);
	}
	o->group_object = !!key;
}

void out_group_end(struct out *o)
{
	size_t i, w = 0;

	o->in_group = false;
	if (o->json) {
		if (o->group_object)
			json_end_object(&o->j);
		return;
	}
	for (i = 0; i < o->t.ncells; i += 2)
		if (o->t.cells[i] && strlen(o->t.cells[i]) + 2 > w)
			w = strlen(o->t.cells[i]) + 2;
	if (o->width)
		w = (size_t)o->width;
	for (i = 0; i + 1 < o->t.ncells; i += 2) {
		if (o->t.cells[i])
			printf("%-*s%s\n", (int)w, o->t.cells[i], o->t.cells[i + 1]);
		else
			printf("%s\n", o->t.cells[i + 1]);
	}
	for (i = 0; i < o->t.ncells; i++)
		free(o->t.cells[i]);
	o->t.ncells = 0;
	table_free(&o->t);
}

void out_label(struct out *o, const char *label)
{
	o->label = label;
}

/* Text: one cell of a row, or one line of a group (@label NULL: none). */
static void out_text_cell(struct out *o, const char *label, const char *text)
{
	struct table *t = &o->t;

	if (o->in_list) {
		table_add(t, text);
		return;
	}
	if (!o->in_group)
		abort();
	t->cells = xrealloc(t->cells, t->ncells + 2, sizeof(*t->cells));
	t->cells[t->ncells++] = label ? xstrdup(label) : NULL;
	t->cells[t->ncells++] = xstrdup(text);
}

/*
 * The text of a value: a cell of a row, or in a group a line labelled
 * with out_label()'s label as it is, or else with @key, '_' read as a
 * blank.
 */
static void out_text(struct out *o, const char *key, const char *text)
{
	char label[64];
	size_t i;

	if (o->in_group) {
		const char *from = o->label ? o->label : key;

		for (i = 0; from[i] && i + 2 < sizeof(label); i++)
			label[i] = from[i] == '_' && !o->label ? ' ' : from[i];
		label[i++] = ':';
		label[i] = '\0';
		o->label = NULL;
		out_text_cell(o, label, text);
	} else {
		out_text_cell(o, NULL, text);
	}
}

void out_u64(struct out *o, const char *key, uint64_t v)
{
	out_u64f(o, key, v, "%llu", (unsigned long long)v);
}

void out_bytes(struct out *o, const char *key, uint64_t v)
{
	char b[32];

	if (o->json)
		json_u64(&o->j, key, v);
	else
		out_text(o, key, fmt_bytes(b, sizeof(b), v, o->exact));
}

void out_str(struct out *o, const char *key, const char *s)
{
	out_strf(o, key, s, "%s", s);
}

void out_null(struct out *o, const char *key, const char *text)
{
	if (o->json)
		json_null(&o->j, key);
	else
		out_text(o, key, text ? text : "-");
}

/* The text of a value, from @fmt and @ap. */
static void out_vtext(struct out *o, const char *key, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	out_text(o, key, buf);
}

void out_u64f(struct out *o, const char *key, uint64_t v, const char *fmt, ...)
{
	va_list ap;

	if (o->json) {
		json_u64(&o->j, key, v);
		return;
	}
	va_start(ap, fmt);
	out_vtext(o, key, fmt, ap);
	va_end(ap);
}

void out_strf(struct out *o, const char *key, const char *s, const char *fmt, ...)
{
	va_list ap;

	if (o->json) {
		json_string(&o->j, key, s);
		return;
	}
	va_start(ap, fmt);
	out_vtext(o, key, fmt, ap);
	va_end(ap);
}

void out_boolf(struct out *o, const char *key, bool v, const char *fmt, ...)
{
	va_list ap;

	if (o->json) {
		json_bool(&o->j, key, v);
		return;
	}
	va_start(ap, fmt);
	out_vtext(o, key, fmt, ap);
	va_end(ap);
}

void out_u64_pair(struct out *o, const char *key, uint64_t v, const char *key2, uint64_t v2,
		  const char *fmt)
{
	char buf[256];

	if (o->json) {
		json_u64(&o->j, key, v);
		json_u64(&o->j, key2, v2);
		return;
	}
	snprintf(buf, sizeof(buf), fmt, (unsigned long long)v, (unsigned long long)v2);
	out_text(o, key, buf);
}

void out_textf(struct out *o, const char *label, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (o->json)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out_text_cell(o, label, buf);
}

void out_line(struct out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->json)
		return;
	if (o->in_list || o->in_group)
		abort();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

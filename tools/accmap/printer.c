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

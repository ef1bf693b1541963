// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl's JSON writer (see json.h).  Strings are written as UTF-8
 * passes through; control characters, '"' and '\\' are escaped.  Numbers
 * are unsigned 64-bit integers, written exactly: a reader that keeps
 * numbers as doubles loses precision above 2^53, as with any JSON.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

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
	fprintf(j->f, "%" PRIu64, v);
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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accmapctl's printers.  Aligned text tables: cells added row by row,
 * printed with each column as wide as its widest cell.  And a small JSON
 * writer for --json: objects, arrays, strings,
 * unsigned numbers, booleans and null, written as they come (no tree
 * kept) into memory, and printed as one line only when the document is
 * whole: a command that fails half way prints no JSON at all.
 */
#ifndef ACCMAPCTL_PRINTER_H
#define ACCMAPCTL_PRINTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

/* The Makefile defines __printf() to let the compiler check formats. */
#ifndef __printf
#define __printf(a, b)
#endif

/**
 * struct table - cells of a text table, printed with aligned columns
 * @ncols: number of columns
 * @ncells: cells added so far; row r, column c is @cells[r * @ncols + c]
 * @cells: the cells, row 0 is the header
 * @right: per column, true to align to the right (numbers)
 */
struct table {
	size_t ncols;
	size_t ncells;
	char **cells;
	bool *right;
};

void table_init(struct table *t, size_t ncols);
/* Appends one cell ("-" for NULL or ""); rows fill left to right. */
void table_add(struct table *t, const char *cell);
__printf(2, 3) void table_addf(struct table *t, const char *fmt, ...);
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/* Nesting deeper than this is a bug in the caller; the writer aborts. */
#define JSON_MAX_DEPTH	16

/**
 * struct json - the state of one JSON document being written
 * @f: the memory stream it is written to
 * @buf: @f's buffer
 * @len: @f's length
 * @depth: open objects and arrays
 * @count: per level, the members or elements written so far
 */
struct json {
	FILE *f;
	char *buf;
	size_t len;
	int depth;
	unsigned int count[JSON_MAX_DEPTH];
};

/*
 * Every call takes @key: the member's name inside an object, NULL for an
 * element of an array (or for the document's outermost value).
 */
/* Starts a document; exits the program if there is no memory for it. */
void json_init(struct json *j);
void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_string(struct json *j, const char *key, const char *s);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* Ends the document and prints it to @out, with a newline. */
void json_finish(struct json *j, FILE *out);
/* Drops an unfinished document. */
void json_discard(struct json *j);

/**
 * struct out - what a command prints: text (tables and "name: value"
 * lines) or, under --json, one JSON document, written through one set of
 * calls so that both say the same
 * @json: a JSON document, not text
 * @exact: text: byte counts exact, not KiB/MiB/GiB (JSON is always exact)
 * @j: the JSON document
 * @t: text: the table of the list or group being written
 * @in_list: a list is open (its rows are cells of @t)
 * @in_group: a group is open (its values are rows of @t)
 * @group_object: the open group is a JSON object of its own
 * @width: text: a group's label column width, 0 for its widest label
 * @rows: rows of the open list so far
 * @label: text label of the next value of a group, NULL to take its key
 *
 * Lists are tables in text and arrays of objects in JSON; groups are
 * "name: value" lines in text and members of the document (or of an
 * object) in JSON.  Each value is given once, with its JSON key and, as a
 * rule, the text derived from it: decimal for numbers, fmt_bytes() for
 * bytes, "-" for null; the *f() forms give the text themselves.
 */
struct out {
	bool json;
	bool exact;
	struct json j;
	struct table t;
	bool in_list;
	bool in_group;
	bool group_object;
	int width;
	size_t rows;
	const char *label;
};

/* Starts the output of a command; JSON: the document's outer object. */
void out_init(struct out *o, bool json, bool exact);
/* JSON: ends and prints the document.  Returns EXIT_SUCCESS. */
int out_finish(struct out *o);
/* Drops what was written (a command that fails prints no JSON). */
void out_discard(struct out *o);

/*
 * A list: text, a table with @ncols columns headed @heads, columns whose
 * bit is set in @right aligned to the right; JSON, member @key, an array
 * with an object per row.
 */
void out_list_begin(struct out *o, const char *key, const char *const *heads,
		    size_t ncols, unsigned long right);
void out_row_begin(struct out *o);
void out_row_end(struct out *o);
/* Text: prints the table, and @empty under it if it has no row. */
void out_list_end(struct out *o, const char *empty);

/*
 * A group of values: text, "label: value" lines with the values in a
 * column @width wide from the line's start (0: two blanks after the
 * widest label); JSON, members of object @key, or of the enclosing
 * object if @key is NULL.
 */
void out_group_begin(struct out *o, const char *key, int width);
void out_group_end(struct out *o);
/* JSON: an object @key (NULL in an array); text: nothing. */
void out_object_begin(struct out *o, const char *key);
void out_object_end(struct out *o);
/* Text: the label of the next value of a group instead of its key. */
void out_label(struct out *o, const char *label);

/* Values, in a row or a group. */
void out_u64(struct out *o, const char *key, uint64_t v);
void out_bytes(struct out *o, const char *key, uint64_t v);
void out_str(struct out *o, const char *key, const char *s);
/* JSON null; text @text, or "-" if NULL. */
void out_null(struct out *o, const char *key, const char *text);
__printf(4, 5) void out_u64f(struct out *o, const char *key, uint64_t v, const char *fmt, ...);
__printf(4, 5) void out_strf(struct out *o, const char *key, const char *s, const char *fmt, ...);
__printf(4, 5) void out_boolf(struct out *o, const char *key, bool v, const char *fmt, ...);
/*
 * Two numbers on one line of a group: JSON, members @key (@v) and @key2
 * (@v2); text, @fmt with two %llu for @v and @v2, labelled as @key's.
 */
void out_u64_pair(struct out *o, const char *key, uint64_t v, const char *key2, uint64_t v2,
		  const char *fmt);
/*
 * Text only: a cell of a row, or in a group a line labelled @label as it
 * is (with its colon; NULL: the text alone, not aligned).
 */
__printf(3, 4) void out_textf(struct out *o, const char *label, const char *fmt, ...);
/* Text only: a line of its own, printed now (outside lists and groups). */
__printf(2, 3) void out_line(struct out *o, const char *fmt, ...);
/* The JSON document to add members only JSON has to, or NULL for text. */
static inline struct json *out_json(struct out *o)
{
	return o->json ? &o->j : NULL;
}

#endif

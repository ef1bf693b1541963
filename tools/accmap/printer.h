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

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: the carveout module parameter, and the rules every carveout
 * list must follow whatever its source.
 *
 *   carveout=<size>@<base>[:<name>][,<size>@<base>[:<name>]...]
 *
 * Sizes and bases are written as for memparse() (a C number, decimal,
 * 0x hex or 0 octal, then an optional K, M, G, T, P or E suffix), but a
 * number that does not fit in 64 bits is an error here rather than a
 * silently wrapped value.  Everything is pure string and arithmetic work,
 * tested in KUnit (tests/carveout_test.c).
 */

#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include "accmap.h"

static const char *const carveout_error_text[] = {
	[ACCMAP_CARVEOUT_OK] = "no error",
	[ACCMAP_CARVEOUT_SYNTAX] = "not <size>@<base>[:<name>]",
	[ACCMAP_CARVEOUT_ZERO] = "size is zero",
	[ACCMAP_CARVEOUT_ALIGN] = "base or size is not page aligned",
	[ACCMAP_CARVEOUT_OVERFLOW] = "a number or base + size does not fit the address space",
	[ACCMAP_CARVEOUT_NAME] = "name is empty, longer than 15 characters, or not [a-z0-9_-]",
	[ACCMAP_CARVEOUT_DUP_NAME] = "name already taken by another carveout",
	[ACCMAP_CARVEOUT_OVERLAP] = "overlaps another carveout",
	[ACCMAP_CARVEOUT_TOO_MANY] = "more carveouts than ACCMAP_HEAP_CARVEOUT_MAX",
};

/**
 * accmap_carveout_strerror() - what a carveout error code means
 * @code: an enum accmap_carveout_err value
 *
 * Return: a constant, human-readable description.
 */
const char *accmap_carveout_strerror(enum accmap_carveout_err code)
{
	if ((unsigned int)code >= ARRAY_SIZE(carveout_error_text))
		return "unknown error";
	return carveout_error_text[code];
}

/**
 * accmap_carveout_name_valid() - whether a string may name a carveout heap
 * @name: NUL-terminated candidate
 *
 * Return: true for 1 to ACCMAP_HEAP_NAME_LEN - 1 characters of [a-z0-9_-].
 */
bool accmap_carveout_name_valid(const char *name)
{
	size_t len = strnlen(name, ACCMAP_HEAP_NAME_LEN);
	size_t i;

	if (!len || len >= ACCMAP_HEAP_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(islower(c) || isdigit(c) || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * One number in memparse() syntax at *s; *s moves past it.  The digits are
 * handed to kstrtoull() so that a value beyond 64 bits is caught, and the
 * suffix shift is checked the same way.
 */
static enum accmap_carveout_err carveout_parse_number(const char **s, u64 *val)
{
	/* "0x" and 16 hex digits, or 22 octal digits, fit with room to spare. */
	char digits[32];
	const char *p = *s;
	unsigned int shift = 0;
	size_t len = 0;
	u64 v;
	int ret;

	if (p[0] == '0' && tolower(p[1]) == 'x' && isxdigit(p[2])) {
		len = 2;
		while (isxdigit(p[len]))
			len++;
	} else {
		while (isdigit(p[len]))
			len++;
	}
	if (!len)
		return ACCMAP_CARVEOUT_SYNTAX;
	if (len >= sizeof(digits))
		return ACCMAP_CARVEOUT_OVERFLOW;
	memcpy(digits, p, len);
	digits[len] = '\0';
	ret = kstrtoull(digits, 0, &v);
	if (ret == -ERANGE)
		return ACCMAP_CARVEOUT_OVERFLOW;
	if (ret)
		return ACCMAP_CARVEOUT_SYNTAX;
	p += len;

	switch (tolower(*p)) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	case 'p':
		shift = 50;
		break;
	case 'e':
		shift = 60;
		break;
	}
	if (shift) {
		if (v > (U64_MAX >> shift))
			return ACCMAP_CARVEOUT_OVERFLOW;
		v <<= shift;
		p++;
	}
	*val = v;
	*s = p;
	return ACCMAP_CARVEOUT_OK;
}

/**
 * accmap_check_carveout() - check one carveout on its own
 * @spec: the carveout; an empty name stands for a default one
 *
 * Return: ACCMAP_CARVEOUT_OK, or ACCMAP_CARVEOUT_ZERO, _ALIGN (base or
 * size not page aligned), _OVERFLOW (base + size wraps, or the range
 * does not fit phys_addr_t) or _NAME.
 */
enum accmap_carveout_err
accmap_check_carveout(const struct accmap_carveout_spec *spec)
{
	u64 end;

	if (!spec->size)
		return ACCMAP_CARVEOUT_ZERO;
	if (!PAGE_ALIGNED(spec->base) || !PAGE_ALIGNED(spec->size))
		return ACCMAP_CARVEOUT_ALIGN;
	/*
	 * base + size must not wrap (every check after this one relies on
	 * it), and the last byte must be a physical address this kernel can
	 * hold.
	 */
	if (check_add_overflow(spec->base, spec->size, &end) ||
	    (u64)(phys_addr_t)(end - 1) != end - 1)
		return ACCMAP_CARVEOUT_OVERFLOW;
	if (spec->name[0] && !accmap_carveout_name_valid(spec->name))
		return ACCMAP_CARVEOUT_NAME;
	return ACCMAP_CARVEOUT_OK;
}

/* One "<size>@<base>[:<name>]" entry at *s, up to a ',' or the end. */
static enum accmap_carveout_err
carveout_parse_entry(const char **s, struct accmap_carveout_spec *spec)
{
	enum accmap_carveout_err err;
	const char *p = *s;
	size_t len;

	memset(spec, 0, sizeof(*spec));
	err = carveout_parse_number(&p, &spec->size);
	if (err)
		return err;
	if (*p++ != '@')
		return ACCMAP_CARVEOUT_SYNTAX;
	err = carveout_parse_number(&p, &spec->base);
	if (err)
		return err;

	if (*p == ':') {
		p++;
		len = strcspn(p, ",");
		if (!len || len >= ACCMAP_HEAP_NAME_LEN)
			return ACCMAP_CARVEOUT_NAME;
		memcpy(spec->name, p, len);
		spec->name[len] = '\0';
		if (!accmap_carveout_name_valid(spec->name))
			return ACCMAP_CARVEOUT_NAME;
		p += len;
	}
	if (*p && *p != ',')
		return ACCMAP_CARVEOUT_SYNTAX;

	err = accmap_check_carveout(spec);
	if (err)
		return err;

	*s = p;
	return ACCMAP_CARVEOUT_OK;
}

/**
 * accmap_carveout_default_name() - name a carveout that was given none
 * @spec: the carveout; its name is set if it is empty
 * @index: its place among all carveouts (its heap id less
 *         ACCMAP_HEAP_CARVEOUT_FIRST)
 */
void accmap_carveout_default_name(struct accmap_carveout_spec *spec, int index)
{
	if (!spec->name[0])
		snprintf(spec->name, sizeof(spec->name), "carveout%d", index);
}

/**
 * accmap_check_carveouts() - check a list of carveouts against each other
 * @specs: the carveouts, each already valid on its own and named
 * @n: number of entries in @specs
 * @err: on failure, the error, the index of the later of the two entries
 *       at fault and that of the earlier
 *
 * Return: 0, or -EINVAL if two carveouts overlap or share a name.
 */
int accmap_check_carveouts(const struct accmap_carveout_spec *specs, int n,
			   struct accmap_carveout_error *err)
{
	int i, j;

	err->other = -1;
	for (i = 1; i < n; i++) {
		for (j = 0; j < i; j++) {
			/* Neither ends before the other starts (sums do not wrap). */
			if (specs[i].base < specs[j].base + specs[j].size &&
			    specs[j].base < specs[i].base + specs[i].size) {
				err->code = ACCMAP_CARVEOUT_OVERLAP;
				err->entry = i;
				err->other = j;
				return -EINVAL;
			}
			if (!strcmp(specs[i].name, specs[j].name)) {
				err->code = ACCMAP_CARVEOUT_DUP_NAME;
				err->entry = i;
				err->other = j;
				return -EINVAL;
			}
		}
	}
	return 0;
}

/**
 * accmap_parse_carveouts() - parse the carveout module parameter
 * @s: the parameter, "<size>@<base>[:<name>]" entries separated by
 *     commas; NULL or "" for none
 * @out: room for @max carveouts; entries without a name get
 *       "carveout<index>"
 * @max: entries @out has room for
 * @err: on failure, what is wrong and in which entry (0-based)
 *
 * Each entry must have a non-zero, page-aligned size and base whose sum
 * fits the physical address space, and an optional name of 1 to 15
 * characters of [a-z0-9_-].  Entries must not overlap or share a name.
 *
 * Return: the number of carveouts (0 to @max), or -EINVAL.
 */
int accmap_parse_carveouts(const char *s, struct accmap_carveout_spec *out,
			   int max, struct accmap_carveout_error *err)
{
	struct accmap_carveout_spec spec;
	enum accmap_carveout_err code;
	int n = 0;

	err->code = ACCMAP_CARVEOUT_OK;
	err->entry = 0;
	err->other = -1;
	if (!s || !*s)
		return 0;

	for (;;) {
		code = carveout_parse_entry(&s, &spec);
		if (!code && n == max)
			code = ACCMAP_CARVEOUT_TOO_MANY;
		if (code) {
			err->code = code;
			err->entry = n;
			return -EINVAL;
		}
		accmap_carveout_default_name(&spec, n);
		out[n++] = spec;
		if (!*s)
			break;
		s++;	/* the ',' */
	}
	return accmap_check_carveouts(out, n, err) ?: n;
}

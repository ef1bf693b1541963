// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: attributes of the parts of an SVM range.
 *
 * A sorted array of ranges that covers the mirror exactly, at most
 * ACCMAP_SVM_ATTR_RANGES_MAX long: setting attributes splits the ranges
 * it cuts and merges neighbours left equal.  Lookups and changes are
 * made under svm->lock (see svm.h), where nothing may be allocated: a
 * change is built in scratch space the caller allocated before taking the
 * lock (accmap_svm_attr_scratch()).
 */

#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "svm.h"

/**
 * accmap_svm_attr_init() - one range over the whole mirror, defaults
 * @svm: the mirror, @start and @end set
 *
 * Return: 0 or -ENOMEM.
 */
int accmap_svm_attr_init(struct accmap_svm *svm)
{
	svm->ranges = kcalloc(ACCMAP_SVM_ATTR_RANGES_MAX,
			      sizeof(*svm->ranges), GFP_KERNEL_ACCOUNT);
	if (!svm->ranges)
		return -ENOMEM;
	svm->ranges[0] = (struct accmap_svm_range) {
		.start = svm->start,
		.end = svm->end,
		.granule = ACCMAP_SVM_GRANULE_DEFAULT,
		.location = ACCMAP_SVM_LOC_SYSTEM,
	};
	svm->nr_ranges = 1;
	return 0;
}

/**
 * accmap_svm_attr_fini() - free the ranges
 * @svm: the mirror
 */
void accmap_svm_attr_fini(struct accmap_svm *svm)
{
	kfree(svm->ranges);
	svm->ranges = NULL;
	svm->nr_ranges = 0;
}

/**
 * accmap_svm_attr_find() - the attributes of an address
 * @svm:  the mirror; svm->lock held
 * @addr: an address inside the mirror
 *
 * Return: the range holding @addr, or NULL if @addr is outside.
 */
const struct accmap_svm_range *accmap_svm_attr_find(struct accmap_svm *svm,
						    u64 addr)
{
	unsigned int lo = 0, hi = svm->nr_ranges;

	lockdep_assert_held(&svm->lock);
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct accmap_svm_range *r = &svm->ranges[mid];

		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

static bool svm_attr_same(const struct accmap_svm_range *a,
			  const struct accmap_svm_range *b)
{
	return a->attrs == b->attrs && a->granule == b->granule &&
	       a->location == b->location;
}

/* Appends @r to @out, merged with the last range if they are equal. */
static void svm_attr_push(struct accmap_svm_range *out, unsigned int *n,
			  const struct accmap_svm_range *r)
{
	if (r->start >= r->end)
		return;
	if (*n && out[*n - 1].end == r->start && svm_attr_same(&out[*n - 1], r)) {
		out[*n - 1].end = r->end;
		return;
	}
	/* The caller's array has room for every range this can make. */
	out[(*n)++] = *r;
}

/**
 * accmap_svm_attr_scratch() - room for accmap_svm_attr_set() to work in
 *
 * Context: process context, before svm->lock is taken (it allocates with
 * GFP_KERNEL); the caller frees the space with kfree() after.
 *
 * Return: the scratch space, or NULL.
 */
struct accmap_svm_range *accmap_svm_attr_scratch(void)
{
	return kcalloc(ACCMAP_SVM_ATTR_RANGES_MAX + 2,
		       sizeof(struct accmap_svm_range), GFP_KERNEL);
}

/**
 * accmap_svm_attr_set() - give [@start, @end) new attributes
 * @svm:      the mirror; svm->lock held
 * @out:      scratch space from accmap_svm_attr_scratch()
 * @start:    first byte, inside the mirror
 * @end:      byte after the last, inside the mirror, above @start
 * @attrs:    ACCMAP_SVM_ATTR_*
 * @granule:  ACCMAP_SVM_GRANULE_MIN to _MAX
 * @location: ACCMAP_SVM_LOC_*
 *
 * The caller drops the GPU entries of the range, so they are made again
 * with the new attributes.
 *
 * Return: 0, or -ENOSPC if the mirror would need more than
 * ACCMAP_SVM_ATTR_RANGES_MAX ranges (nothing changes then).
 */
int accmap_svm_attr_set(struct accmap_svm *svm, struct accmap_svm_range *out,
			u64 start, u64 end, u32 attrs, u32 granule,
			u32 location)
{
	const struct accmap_svm_range set = {
		.start = start, .end = end, .attrs = attrs,
		.granule = granule, .location = location,
	};
	unsigned int i, n = 0;
	bool placed = false;

	lockdep_assert_held(&svm->lock);
	/* @out has room for two more ranges: the ends of the one cut. */

	for (i = 0; i < svm->nr_ranges; i++) {
		struct accmap_svm_range r = svm->ranges[i];
		struct accmap_svm_range part = r;

		if (r.end <= start || r.start >= end) {
			if (r.start >= end && !placed) {
				svm_attr_push(out, &n, &set);
				placed = true;
			}
			svm_attr_push(out, &n, &r);
			continue;
		}
		/* The part before the new range, the new range, the part after. */
		part.end = start;
		svm_attr_push(out, &n, &part);
		if (!placed) {
			svm_attr_push(out, &n, &set);
			placed = true;
		}
		part = r;
		part.start = end;
		svm_attr_push(out, &n, &part);
	}
	if (!placed)
		svm_attr_push(out, &n, &set);

	if (n > ACCMAP_SVM_ATTR_RANGES_MAX)
		return -ENOSPC;
	memcpy(svm->ranges, out, n * sizeof(*out));
	svm->nr_ranges = n;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A software model of a write-back CPU cache, for KUnit tests of the
 * paths that zero, clean and invalidate memory (tests/cache_model.c).
 */
#ifndef _ACCMAP_CACHE_MODEL_H
#define _ACCMAP_CACHE_MODEL_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "../accmap.h"

/* What memory the model has not seen cleaned holds: someone else's data. */
#define CACHE_MODEL_STALE	0xa5

/* Cache line size of the model. */
#define CACHE_MODEL_LINE	64

/**
 * struct cache_model - a write-back cache in front of modelled memory
 * @cache: hand this to the code under test (pools, a device's @cache)
 * @lock: protects @memory and the counters
 * @memory: by PFN, a kmalloc'ed PAGE_SIZE copy of what memory (not the
 *          cache) holds; a page without one holds CACHE_MODEL_STALE
 * @clean_bytes: bytes cleaned, lines rounded out
 * @inval_bytes: bytes invalidated, lines rounded out
 */
struct cache_model {
	struct accmap_cache cache;
	struct mutex lock;	/* protects @memory and the counters */
	struct xarray memory;
	u64 clean_bytes;
	u64 inval_bytes;
};

struct kunit;

struct cache_model *cache_model_create(struct kunit *test);
bool cache_model_memory_is(struct cache_model *model, struct page *page,
			   size_t len, u8 value);
void cache_model_reset_counts(struct cache_model *model);

#endif /* _ACCMAP_CACHE_MODEL_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * A software model of a write-back CPU cache, standing in for the DMA
 * API's cache maintenance (struct accmap_cache) in KUnit tests.
 *
 * The CPU's view of a page is the page itself: every store the code under
 * test makes, through the linear map, a kmap or clear_highpage(), is a
 * store into the cache.  What memory holds, the view a device or an
 * invalidated line falls back to, is the model's own copy of the page.
 * The model knows nothing about a page until it is first cleaned: until
 * then its memory holds CACHE_MODEL_STALE, the data of whoever owned the
 * page before.  So:
 *
 *  - clean: memory takes the CPU's view of every line of the range;
 *  - invalidate: the CPU's view of every line wholly inside the range
 *    becomes what memory holds (dirty data is lost); a line the range
 *    only partly covers is cleaned first, as arm64's invalidate by
 *    address does, so that bytes outside the range are not lost.
 *
 * A path that zeroes through the cache and hands memory out without a
 * clean is then caught by invalidating and reading it back: the reader
 * sees CACHE_MODEL_STALE, or the previous owner's data, instead of zero.
 * The model does not evict lines on its own: a real cache may write a
 * dirty line back at any time, which can only hide such a bug, never
 * cause one.
 */

#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cache_model.h"

static struct cache_model *to_model(const struct accmap_cache *cache)
{
	return cache->priv;
}

/* The model's memory of @pfn, made (stale) on first use; NULL if no memory. */
static u8 *cache_model_memory(struct cache_model *model, unsigned long pfn)
{
	u8 *mem = xa_load(&model->memory, pfn);

	lockdep_assert_held(&model->lock);
	if (mem)
		return mem;
	mem = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!mem)
		return NULL;
	memset(mem, CACHE_MODEL_STALE, PAGE_SIZE);
	if (xa_err(xa_store(&model->memory, pfn, mem, GFP_KERNEL))) {
		kfree(mem);
		return NULL;
	}
	return mem;
}

/*
 * Calls @fn for each page-sized piece of [page + offset, + len), with the
 * piece rounded out to whole lines; @full says whether the range covers
 * the first and the last line of the piece whole.
 */
static int cache_model_walk(struct cache_model *model, struct page *page,
			    unsigned long offset, size_t len,
			    void (*fn)(u8 *cpu, u8 *mem, unsigned int from,
				       unsigned int to, unsigned int first_full,
				       unsigned int last_full),
			    u64 *counter)
{
	unsigned long pos = offset, end = offset + len;
	int ret = 0;

	mutex_lock(&model->lock);
	while (pos < end) {
		struct page *p = page + (pos >> PAGE_SHIFT);
		unsigned int in = pos & ~PAGE_MASK;
		unsigned int n = min_t(unsigned long, end - pos, PAGE_SIZE - in);
		unsigned int from = round_down(in, CACHE_MODEL_LINE);
		unsigned int to = round_up(in + n, CACHE_MODEL_LINE);
		u8 *mem = cache_model_memory(model, page_to_pfn(p));
		u8 *cpu;

		if (!mem) {
			ret = -ENOMEM;
			break;
		}
		cpu = kmap_local_page(p);
		fn(cpu, mem, from, to, in == from, in + n == to);
		kunmap_local(cpu);
		*counter += to - from;
		pos += n;
	}
	mutex_unlock(&model->lock);
	return ret;
}

static void cache_model_clean_piece(u8 *cpu, u8 *mem, unsigned int from,
				    unsigned int to, unsigned int first_full,
				    unsigned int last_full)
{
	memcpy(mem + from, cpu + from, to - from);
}

static void cache_model_inval_piece(u8 *cpu, u8 *mem, unsigned int from,
				    unsigned int to, unsigned int first_full,
				    unsigned int last_full)
{
	/* Lines the range only partly covers: clean and invalidate. */
	if (!first_full) {
		memcpy(mem + from, cpu + from, CACHE_MODEL_LINE);
		from += CACHE_MODEL_LINE;
	}
	if (!last_full && to > from) {
		memcpy(mem + to - CACHE_MODEL_LINE, cpu + to - CACHE_MODEL_LINE,
		       CACHE_MODEL_LINE);
		to -= CACHE_MODEL_LINE;
	}
	if (to > from)
		memcpy(cpu + from, mem + from, to - from);
}

static int cache_model_clean(const struct accmap_cache *cache,
			     struct page *page, unsigned long offset,
			     size_t len)
{
	struct cache_model *model = to_model(cache);

	return cache_model_walk(model, page, offset, len,
				cache_model_clean_piece, &model->clean_bytes);
}

static int cache_model_inval(const struct accmap_cache *cache,
			     struct page *page, unsigned long offset,
			     size_t len)
{
	struct cache_model *model = to_model(cache);

	return cache_model_walk(model, page, offset, len,
				cache_model_inval_piece, &model->inval_bytes);
}

static const struct accmap_cache_ops cache_model_ops = {
	.clean = cache_model_clean,
	.inval = cache_model_inval,
};

static int cache_model_init(struct kunit_resource *res, void *context)
{
	struct cache_model *model;

	model = kzalloc(sizeof(*model), GFP_KERNEL);
	if (!model)
		return -ENOMEM;
	mutex_init(&model->lock);
	xa_init(&model->memory);
	model->cache.ops = &cache_model_ops;
	model->cache.priv = model;
	res->data = model;
	return 0;
}

static void cache_model_free(struct kunit_resource *res)
{
	struct cache_model *model = res->data;
	unsigned long pfn;
	u8 *mem;

	xa_for_each(&model->memory, pfn, mem)
		kfree(mem);
	xa_destroy(&model->memory);
	mutex_destroy(&model->lock);
	kfree(model);
}

/**
 * cache_model_create() - a new, empty cache model
 * @test: the test; the model goes with it, after the test's resources
 *        made later (KUnit frees resources newest first), such as a pool
 *        that uses the model
 *
 * Return: the model; the test fails if out of memory.
 */
struct cache_model *cache_model_create(struct kunit *test)
{
	struct cache_model *model;

	model = kunit_alloc_resource(test, cache_model_init, cache_model_free,
				     GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, model);
	return model;
}

/**
 * cache_model_memory_is() - whether memory, as a device sees it, holds a
 * value over a range
 * @model: the model
 * @page: first page of physically contiguous memory
 * @len: bytes from the start of @page
 * @value: the byte every position must hold
 *
 * Return: true if every byte of memory (not of the cache) is @value.
 */
bool cache_model_memory_is(struct cache_model *model, struct page *page,
			   size_t len, u8 value)
{
	size_t pos;
	bool ok = true;

	mutex_lock(&model->lock);
	for (pos = 0; pos < len && ok; pos += PAGE_SIZE) {
		u8 *mem = xa_load(&model->memory,
				  page_to_pfn(page + (pos >> PAGE_SHIFT)));

		ok = mem ? !memchr_inv(mem, value, min(len - pos, PAGE_SIZE)) :
			   value == CACHE_MODEL_STALE;
	}
	mutex_unlock(&model->lock);
	return ok;
}

/**
 * cache_model_reset_counts() - zero the byte counters
 * @model: the model
 */
void cache_model_reset_counts(struct cache_model *model)
{
	mutex_lock(&model->lock);
	model->clean_bytes = 0;
	model->inval_bytes = 0;
	mutex_unlock(&model->lock);
}

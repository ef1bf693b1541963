// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap player: replays a recording through /dev/accmap.  One buffer
 * per map of the recording, filled with the recorded contents, one replay
 * session over them, and the recording's ops run in batches.  See
 * recording.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recording.h"

/* Bytes per WRITE of contents: one large map need not be one large call. */
#define PLAYER_CHUNK		(64U << 20)
/* Zeros written per call when restoring zero-filled maps. */
#define PLAYER_ZERO_CHUNK	(1024U * 1024U)

/**
 * struct accmap_player - a recording loaded into buffers and a session
 * @fd:      the accmap device
 * @rec:     the recording (the caller's)
 * @target:  index of the target
 * @info:    the target as found
 * @session: session id, 0 until set up
 * @ids:     buffer ids, one per map of @rec; 0 for none
 * @batch:   ops per run
 * @zeros:   PLAYER_ZERO_CHUNK zero bytes for accmap_player_restore(), or
 *           NULL until first needed
 * @chains:  the chains of the last run, or NULL
 * @nr_chains: entries in @chains
 */
struct accmap_player {
	int fd;
	const struct accmap_recording *rec;
	uint32_t target;
	struct accmap_replay_target_info info;
	uint32_t session;
	uint32_t *ids;
	uint32_t batch;
	void *zeros;
	struct accmap_player_chain *chains;
	uint32_t nr_chains;
};

/* WRITE of @len bytes in chunks; @src NULL writes zeros. */
static int player_fill(struct accmap_player *p, uint32_t id, uint64_t offset, const uint8_t *src,
		       uint64_t len)
{
	int ret;

	if (!src && !p->zeros) {
		p->zeros = calloc(1, PLAYER_ZERO_CHUNK);
		if (!p->zeros)
			return -ENOMEM;
	}
	while (len) {
		uint64_t n = len;

		if (n > (src ? PLAYER_CHUNK : PLAYER_ZERO_CHUNK))
			n = src ? PLAYER_CHUNK : PLAYER_ZERO_CHUNK;
		ret = accmap_write(p->fd, id, offset, src ? (const void *)src : p->zeros,
				   (size_t)n);
		if (ret)
			return ret;
		offset += n;
		len -= n;
		if (src)
			src += n;
	}
	return 0;
}

int accmap_player_open(int fd, const struct accmap_recording *rec,
		       const struct accmap_player_options *opts, struct accmap_player **out,
		       uint32_t *failed_map)
{
	static const struct accmap_player_options defaults;
	struct accmap_replay_setup setup;
	struct accmap_replay_map *maps = NULL;
	struct accmap_player *p;
	uint32_t heap_mask, i;
	int ret;

	if (failed_map)
		*failed_map = UINT32_MAX;
	if (!rec || !out || !rec->nr_maps || !rec->maps)
		return -EINVAL;
	if (!opts)
		opts = &defaults;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = fd;
	p->rec = rec;
	p->batch = opts->batch ? opts->batch : ACCMAP_PLAYER_BATCH_DEFAULT;
	if (p->batch > ACCMAP_REPLAY_OPS_MAX)
		p->batch = ACCMAP_REPLAY_OPS_MAX;
	p->ids = calloc(rec->nr_maps, sizeof(*p->ids));
	maps = calloc(rec->nr_maps, sizeof(*maps));
	if (!p->ids || !maps) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = accmap_replay_find_target(fd, opts->target ? opts->target : rec->target,
					&p->target, &p->info);
	if (ret)
		goto err_free;

	heap_mask = opts->heap_mask ? opts->heap_mask : ACCMAP_HEAP_MASK_SYSTEM;
	for (i = 0; i < rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &rec->maps[i];

		ret = accmap_alloc_buffer(fd, m->length, heap_mask, opts->alloc_flags, opts->tag,
					  &p->ids[i]);
		if (!ret && m->data)
			ret = player_fill(p, p->ids[i], 0, m->data, m->length);
		if (ret) {
			if (failed_map)
				*failed_map = i;
			goto err_free_buffers;
		}
		maps[i].gpu_va = m->gpu_va;
		maps[i].offset = 0;
		maps[i].length = m->length;
		maps[i].id = p->ids[i];
		maps[i].flags = m->flags;
		maps[i].attr = m->attr;
	}

	memset(&setup, 0, sizeof(setup));
	setup.maps = (uintptr_t)maps;
	setup.nr_maps = rec->nr_maps;
	setup.target = p->target;
	setup.format = rec->format;
	setup.as = rec->as;
	setup.va_bits = rec->va_bits;
	ret = accmap_replay_setup(fd, &setup);
	if (ret) {
		if (failed_map)
			*failed_map = setup.failed_map;
		goto err_free_buffers;
	}
	p->session = setup.session;
	free(maps);
	*out = p;
	return 0;

err_free_buffers:
	for (i = 0; i < rec->nr_maps; i++)
		if (p->ids[i])
			accmap_free(fd, p->ids[i]);
err_free:
	free(maps);
	free(p->ids);
	free(p);
	return ret;
}

int accmap_player_close(struct accmap_player *p)
{
	int ret = 0, r;
	uint32_t i;

	if (!p)
		return 0;
	if (p->session)
		ret = accmap_replay_destroy(p->fd, p->session);
	for (i = 0; i < p->rec->nr_maps; i++) {
		if (!p->ids[i])
			continue;
		r = accmap_free(p->fd, p->ids[i]);
		if (r && !ret)
			ret = r;
	}
	free(p->chains);
	free(p->zeros);
	free(p->ids);
	free(p);
	return ret;
}

uint32_t accmap_player_session(const struct accmap_player *p)
{
	return p->session;
}

uint32_t accmap_player_target(const struct accmap_player *p,
			      struct accmap_replay_target_info *info)
{
	if (info)
		*info = p->info;
	return p->target;
}

int accmap_player_restore(struct accmap_player *p)
{
	uint32_t i;
	int ret;

	for (i = 0; i < p->rec->nr_maps; i++) {
		const struct accmap_rec_map *m = &p->rec->maps[i];

		if (!(m->flags & ACCMAP_REPLAY_MAP_WRITE))
			continue;
		ret = player_fill(p, p->ids[i], 0, m->data, m->length);
		if (ret)
			return ret;
	}
	return 0;
}

/* The buffer and offset of [gpu_va, gpu_va + len); -ERANGE if none. */
static int player_locate(struct accmap_player *p, uint64_t gpu_va, size_t len, uint32_t *id,
			 uint64_t *offset)
{
	int i = accmap_rec_find_map(p->rec, gpu_va, len);

	if (i < 0)
		return i;
	*id = p->ids[i];
	*offset = gpu_va - p->rec->maps[i].gpu_va;
	return 0;
}

int accmap_player_write(struct accmap_player *p, uint64_t gpu_va, const void *src, size_t len)
{
	uint64_t offset;
	uint32_t id;
	int ret;

	if (!src || !len)
		return -EINVAL;
	ret = player_locate(p, gpu_va, len, &id, &offset);
	if (ret)
		return ret;
	return player_fill(p, id, offset, src, len);
}

int accmap_player_read(struct accmap_player *p, uint64_t gpu_va, void *dst, size_t len)
{
	uint8_t *d = dst;
	uint64_t offset;
	uint32_t id;
	int ret;

	if (!dst || !len)
		return -EINVAL;
	ret = player_locate(p, gpu_va, len, &id, &offset);
	if (ret)
		return ret;
	while (len) {
		size_t n = len > PLAYER_CHUNK ? PLAYER_CHUNK : len;

		ret = accmap_read(p->fd, id, offset, d, n);
		if (ret)
			return ret;
		offset += n;
		d += n;
		len -= n;
	}
	return 0;
}

/* The symbol @name if @len bytes fit in it; else NULL and *@ret. */
static const struct accmap_rec_symbol *player_symbol(struct accmap_player *p, const char *name,
						     size_t len, int *ret)
{
	const struct accmap_rec_symbol *s = accmap_rec_find_symbol(p->rec, name);

	*ret = -ENOENT;
	if (!s)
		return NULL;
	*ret = -ERANGE;
	if (len > s->length)
		return NULL;
	*ret = 0;
	return s;
}

int accmap_player_write_symbol(struct accmap_player *p, const char *name, const void *src,
			       size_t len)
{
	const struct accmap_rec_symbol *s;
	int ret;

	s = player_symbol(p, name, len, &ret);
	if (!s)
		return ret;
	return accmap_player_write(p, s->gpu_va, src, len);
}

int accmap_player_read_symbol(struct accmap_player *p, const char *name, void *dst, size_t len)
{
	const struct accmap_rec_symbol *s;
	int ret;

	s = player_symbol(p, name, len, &ret);
	if (!s)
		return ret;
	return accmap_player_read(p, s->gpu_va, dst, len);
}

const struct accmap_player_chain *accmap_player_chains(const struct accmap_player *p, uint32_t *nr)
{
	*nr = p->nr_chains;
	return p->chains;
}

/**
 * struct player_walk - a run's progress through the chains
 * @cuts:       op indices a batch may not run across (chain starts, and
 *              the op after each chain's end), ascending, unique
 * @nr_cuts:    entries in @cuts
 * @cut:        the first entry of @cuts not behind the current op
 * @by_end:     indices of the chains that have an end op, by end op
 * @nr_by_end:  entries in @by_end
 * @next_end:   the first entry of @by_end not yet ended
 * @next_start: the first chain not yet started
 * @t:          time of the run so far
 */
struct player_walk {
	uint32_t *cuts;
	uint32_t nr_cuts;
	uint32_t cut;
	uint32_t *by_end;
	uint32_t nr_by_end;
	uint32_t next_end;
	uint32_t next_start;
	uint64_t t;
};

static int player_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Orders (end op, chain index) pairs by end op. */
static int player_pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* @idx: the chains with an end op, ordered by it; 0 or -ENOMEM. */
static int player_sort_by_end(const struct accmap_player *p, uint32_t *idx, uint32_t n)
{
	uint32_t (*pairs)[2], i;

	if (!n)
		return 0;
	pairs = calloc(n, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pairs[i][0] = p->chains[idx[i]].chain.end_op;
		pairs[i][1] = idx[i];
	}
	qsort(pairs, n, sizeof(*pairs), player_pair_cmp);
	for (i = 0; i < n; i++)
		idx[i] = pairs[i][1];
	free(pairs);
	return 0;
}

/* Finds the chains of the recording's ops afresh and plans the cuts. */
static int player_walk_init(struct accmap_player *p, struct player_walk *w)
{
	struct accmap_rec_chain *rc;
	uint32_t n, i, k = 0;
	int ret;

	memset(w, 0, sizeof(*w));
	free(p->chains);
	p->chains = NULL;
	p->nr_chains = 0;
	ret = accmap_rec_chains(p->rec, &rc, &n);
	if (ret)
		return ret;
	if (!n)
		return 0;
	p->chains = calloc(n, sizeof(*p->chains));
	w->cuts = calloc(2 * (size_t)n, sizeof(*w->cuts));
	w->by_end = calloc(n, sizeof(*w->by_end));
	if (!p->chains || !w->cuts || !w->by_end) {
		free(rc);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		p->chains[i].chain = rc[i];
		w->cuts[k++] = rc[i].start_op;
		if (rc[i].end_op == UINT32_MAX)
			continue;
		w->cuts[k++] = rc[i].end_op + 1;
		w->by_end[w->nr_by_end++] = i;
	}
	p->nr_chains = n;
	free(rc);
	qsort(w->cuts, k, sizeof(*w->cuts), player_u32_cmp);
	for (i = 0; i < k; i++)
		if (!w->nr_cuts || w->cuts[w->nr_cuts - 1] != w->cuts[i])
			w->cuts[w->nr_cuts++] = w->cuts[i];
	return player_sort_by_end(p, w->by_end, w->nr_by_end);
}

static void player_walk_free(struct player_walk *w)
{
	free(w->cuts);
	free(w->by_end);
}

/* Where the batch starting at @from ends: at most the batch size, no cut crossed. */
static uint32_t player_batch_end(const struct accmap_player *p, struct player_walk *w,
				 uint32_t from, uint32_t total)
{
	uint32_t end = total - from > p->batch ? from + p->batch : total;

	while (w->cut < w->nr_cuts && w->cuts[w->cut] <= from)
		w->cut++;
	if (w->cut < w->nr_cuts && w->cuts[w->cut] < end)
		end = w->cuts[w->cut];
	return end;
}

/*
 * After a batch starting at @from of which @done ops ran in @ns: the
 * chains it started and ended.  A started chain's @ns holds the run's time
 * at its start until it ends (player_walk_end() does the rest).
 */
static void player_walk_batch(struct accmap_player *p, struct player_walk *w, uint32_t from,
			      uint32_t done, uint64_t ns)
{
	struct accmap_player_chain *c;

	while (w->next_start < p->nr_chains &&
	       p->chains[w->next_start].chain.start_op < from + done) {
		c = &p->chains[w->next_start++];
		c->state = ACCMAP_PLAYER_CHAIN_STARTED;
		c->ns = w->t;
	}
	w->t += ns;
	while (w->next_end < w->nr_by_end) {
		c = &p->chains[w->by_end[w->next_end]];
		if (c->chain.end_op >= from + done || c->state != ACCMAP_PLAYER_CHAIN_STARTED)
			break;
		c->state = ACCMAP_PLAYER_CHAIN_DONE;
		c->ns = w->t - c->ns;
		w->next_end++;
	}
}

/* The run stopped: chains still in flight get their time so far; one may have failed. */
static void player_walk_end(struct accmap_player *p, struct player_walk *w,
			    const struct accmap_replay_run *r, int ret)
{
	struct accmap_player_chain *failed = NULL;
	uint32_t i;

	for (i = 0; i < w->next_start; i++) {
		struct accmap_player_chain *c = &p->chains[i];

		if (c->state != ACCMAP_PLAYER_CHAIN_STARTED)
			continue;
		c->ns = w->t - c->ns;
		/* The failed slot's chain is the latest started on it. */
		if (ret && r->reason == ACCMAP_REPLAY_JOB_FAILED && c->chain.slot == r->fault_as)
			failed = c;
	}
	if (failed) {
		failed->state = ACCMAP_PLAYER_CHAIN_FAILED;
		failed->status = r->fault_status;
		failed->descriptor = r->fault_addr;
	}
}

int accmap_player_run(struct accmap_player *p, accmap_player_progress_fn progress, void *arg,
		      struct accmap_replay_run *result)
{
	const struct accmap_recording *rec = p->rec;
	struct player_walk w;
	struct accmap_replay_run r;
	uint32_t done = 0, ran;
	int ret = 0;

	if (!result)
		return -EINVAL;
	memset(result, 0, sizeof(*result));
	result->ops = (uintptr_t)rec->ops;
	result->nr_ops = rec->nr_ops;
	result->session = p->session;
	result->failed_op = UINT32_MAX;
	result->fault_as = UINT32_MAX;
	if (!rec->nr_ops || !rec->ops)
		return -EINVAL;
	ret = player_walk_init(p, &w);
	if (ret)
		goto out;

	while (done < rec->nr_ops) {
		uint32_t n = player_batch_end(p, &w, done, rec->nr_ops) - done;

		ret = accmap_replay_run(p->fd, p->session, rec->ops + done, n, &r);
		ran = ret ? (r.done <= n ? r.done : n) : n;
		player_walk_batch(p, &w, done, ran, r.elapsed_ns);
		if (ret) {
			/* The batch's outcome, with indices from the first op. */
			result->done = done + ran;
			if (r.failed_op < n)
				result->failed_op = done + r.failed_op;
			result->reason = r.reason;
			result->value = r.value;
			result->fault_status = r.fault_status;
			result->fault_as = r.fault_as;
			result->fault_addr = r.fault_addr;
			break;
		}
		done += n;
		result->done = done;
		if (progress && progress(arg, done, rec->nr_ops)) {
			if (done < rec->nr_ops)
				ret = -ECANCELED;
			break;
		}
	}
	result->elapsed_ns = w.t;
	player_walk_end(p, &w, result, ret);
out:
	player_walk_free(&w);
	return ret;
}

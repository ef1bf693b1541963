// SPDX-License-Identifier: GPL-2.0
/*
 * libaccmap: the job chains of a recording, found in its ops.  On the Mali
 * register map (every page-table format accmap replays is a Mali one) a
 * chain starts with a write of START to a job slot's JS_COMMAND_NEXT, after
 * its head went to JS_HEAD_NEXT, and ends with the first WAIT_IRQ of the
 * job interrupt after it that waits for that slot (its DONE or FAILED
 * bit).  The player uses this to time and report each chain; tools print
 * it.  See recording.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recording.h"

/* The Mali job slot registers the analysis reads. */
#define CH_JS_BASE		0x1800U
#define CH_JS_STRIDE		0x80U
#define CH_JS_COUNT		16U
#define CH_JS_HEAD_NEXT_LO	0x40U
#define CH_JS_HEAD_NEXT_HI	0x44U
#define CH_JS_COMMAND_NEXT	0x60U
#define CH_JS_START		1U
#define CH_IRQ_DONE(n)		(1U << (n))
#define CH_IRQ_FAILED(n)	(1U << ((n) + 16))

/* The register within a job slot block, or -1; the slot in *@js. */
static int ch_js_reg(uint32_t offset, uint32_t *js)
{
	if (offset < CH_JS_BASE || offset >= CH_JS_BASE + CH_JS_COUNT * CH_JS_STRIDE)
		return -1;
	*js = (offset - CH_JS_BASE) / CH_JS_STRIDE;
	return (int)((offset - CH_JS_BASE) % CH_JS_STRIDE);
}

/* Ends the chains of @pending whose slot @op waits for; returns @pending left. */
static uint32_t ch_end(struct accmap_rec_chain *chains, const uint32_t *open,
		       uint32_t pending, const struct accmap_replay_op *op, uint32_t i)
{
	uint32_t js;

	if (op->op != ACCMAP_REPLAY_OP_WAIT_IRQ || op->irq != ACCMAP_REPLAY_IRQ_JOB)
		return pending;
	for (js = 0; js < CH_JS_COUNT; js++) {
		if (!(pending & (1U << js)) ||
		    !(op->mask & (CH_IRQ_DONE(js) | CH_IRQ_FAILED(js))))
			continue;
		chains[open[js]].end_op = i;
		pending &= ~(1U << js);
	}
	return pending;
}

int accmap_rec_chains(const struct accmap_recording *rec, struct accmap_rec_chain **out,
		      uint32_t *nr)
{
	uint64_t head[CH_JS_COUNT] = { 0 };
	uint32_t open[CH_JS_COUNT] = { 0 };
	struct accmap_rec_chain *chains = NULL, *c;
	uint32_t i, n = 0, cap = 0, pending = 0, js;
	int reg;

	if (!rec || !out || !nr || (rec->nr_ops && !rec->ops))
		return -EINVAL;
	*out = NULL;
	*nr = 0;
	for (i = 0; i < rec->nr_ops; i++) {
		const struct accmap_replay_op *op = &rec->ops[i];

		pending = ch_end(chains, open, pending, op, i);
		if (op->op != ACCMAP_REPLAY_OP_WRITE)
			continue;
		reg = ch_js_reg(op->offset, &js);
		if (reg == CH_JS_HEAD_NEXT_LO) {
			head[js] = (head[js] & ~0xffffffffULL) | op->value;
		} else if (reg == CH_JS_HEAD_NEXT_HI) {
			head[js] = (head[js] & 0xffffffffULL) | (uint64_t)op->value << 32;
		} else if (reg == CH_JS_COMMAND_NEXT && op->value == CH_JS_START) {
			if (n == cap) {
				/* At most one chain per op: bounded by nr_ops. */
				uint32_t ncap = cap ? 2 * cap : 16;
				void *p = realloc(chains, (size_t)ncap * sizeof(*chains));

				if (!p) {
					free(chains);
					return -ENOMEM;
				}
				chains = p;
				cap = ncap;
			}
			c = &chains[n];
			memset(c, 0, sizeof(*c));
			c->slot = js;
			c->start_op = i;
			c->end_op = UINT32_MAX;
			c->head = head[js];
			/* A slot started again before its wait: the first has no end op. */
			open[js] = n++;
			pending |= 1U << js;
		}
	}
	*out = chains;
	*nr = n;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The writer's fast coder: raw rows per slot, coded once under sampled predictor choices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcz_impl.h"

/*
 * Rows per chunk that the predictor choice looks at, in runs of consecutive
 * rows (repeats are what it scores) spread over each slot.  On data/threads/
 * 128 rows pick what scoring every row picks, at a fraction of the cost.
 */
#define PCZ_SAMPLE_ROWS 128
#define PCZ_SAMPLE_RUN 16

void pcz_fast_free(pcz_fast *f)
{
	for (size_t k = 0; k < f->cap_slots; k++) {
		free(f->slot[k].v);
		free(f->slot[k].first);
	}
	free(f->slot);
	free(f->tmp);
	pcz_buf_free(&f->pieces);
	pcz_buf_free(&f->table);
	memset(f, 0, sizeof *f);
}

void pcz_fast_reset(pcz_fast *f)
{
	for (size_t k = 0; k < f->n_slots; k++)
		f->slot[k].n = f->slot[k].later = 0;
	f->n_slots = 0;
	f->n_values = 0;
}

static int grow_slots(pcz_fast *f, size_t slot)
{
	size_t cap = f->cap_slots ? f->cap_slots : 16;
	pcz_rows *s;

	while (cap <= slot)
		cap *= 2;
	s = realloc(f->slot, cap * sizeof *s);
	if (s == NULL)
		return -1;
	memset(s + f->cap_slots, 0, (cap - f->cap_slots) * sizeof *s);
	f->slot = s;
	f->cap_slots = cap;
	return 0;
}

/*
 * Quadruples a slot's room.  Rows stay as given (one memcpy each at add time);
 * the coder reads them a column at a time, which costs less than scattering
 * each value to its column as it arrives.
 */
static int grow_rows(pcz_rows *r, size_t width)
{
	size_t cap = r->cap ? 4 * r->cap : 64;
	uint64_t *v = realloc(r->v, cap * width * sizeof *v);
	uint8_t *first;

	if (v == NULL)
		return -1;
	r->v = v;
	first = realloc(r->first, cap);
	if (first == NULL)
		return -1;
	r->first = first;
	r->cap = cap;
	r->width = width;
	return 0;
}

int pcz_fast_grow(pcz_fast *f, size_t slot)
{
	if (slot >= f->cap_slots && grow_slots(f, slot) != 0)
		return -1;
	if (slot >= f->n_slots)
		f->n_slots = slot + 1;
	if (f->slot[slot].n == f->slot[slot].cap && grow_rows(&f->slot[slot], 2 + f->n_events) != 0)
		return -1;
	return 0;
}

/*
 * Rows [i0, i1) of one slot's stream s as coded under predictor pred into out
 * (doc/pcz-format.md, "Value coding"); returns the number of values.  Rows
 * are a slot's blocks in order, so a row's own-history prediction is the row
 * before it: the previous step of its block, or the unit's last step in an
 * earlier region of the section.  The first row of a slot has none (0: the
 * fast coder runs without groups, so there is no previous reference block).
 */
static size_t range_values(const pcz_rows *r, size_t s, unsigned pred, size_t i0, size_t i1,
			   uint64_t *out)
{
	const size_t W = r->width;
	const uint64_t *x = r->v + (1 + s), *dur = r->v + 1;
	uint64_t prev = i0 > 0 ? x[(i0 - 1) * W] : 0;
	size_t n = 0;

	if (s == 0) {
		for (size_t i = i0; i < i1; i++) {
			out[n++] = pcz_zigzag(r->v[i * W]);
			out[n++] = pcz_zigzag(dur[i * W]);
		}
	} else if (pred == PCZ_PRED_DURATION) {
		for (size_t i = i0; i < i1; i++)
			out[n++] = pcz_zigzag(x[i * W] - dur[i * W]);
	} else if (pred == PCZ_PRED_HISTORY) {
		for (size_t i = i0; i < i1; i++) {
			out[n++] = pcz_zigzag(x[i * W] - prev);
			prev = x[i * W];
		}
	} else {
		for (size_t i = i0; i < i1; i++) {
			out[n++] = pcz_zigzag(x[i * W] - (r->first[i] ? 0 : prev));
			prev = x[i * W];
		}
	}
	return n;
}

/* range_values over a whole slot, straight into varints at o: the hot loop of the coder. */
static uint8_t *varint_piece(const pcz_rows *r, size_t s, unsigned pred, uint8_t *o)
{
	const size_t W = r->width;
	const uint64_t *x = r->v + (1 + s), *dur = r->v + 1;
	uint64_t prev = 0;
	size_t n = r->n;

	if (s == 0) {
		for (size_t i = 0; i < n; i++) {
			o = pcz_put_varint(o, pcz_zigzag(r->v[i * W]));
			o = pcz_put_varint(o, pcz_zigzag(dur[i * W]));
		}
	} else if (pred == PCZ_PRED_DURATION) {
		for (size_t i = 0; i < n; i++)
			o = pcz_put_varint(o, pcz_zigzag(x[i * W] - dur[i * W]));
	} else if (pred == PCZ_PRED_HISTORY) {
		for (size_t i = 0; i < n; i++) {
			o = pcz_put_varint(o, pcz_zigzag(x[i * W] - prev));
			prev = x[i * W];
		}
	} else if (r->later == 0) {
		/* Vectors only: every row is step 0, coded as itself. */
		for (size_t i = 0; i < n; i++)
			o = pcz_put_varint(o, pcz_zigzag(x[i * W]));
	} else {
		for (size_t i = 0; i < n; i++) {
			o = pcz_put_varint(o, pcz_zigzag(x[i * W] - (r->first[i] ? 0 : prev)));
			prev = x[i * W];
		}
	}
	return o;
}

/*
 * The slow coder's estimate_size under all three predictors at once, over
 * rows [i0, i1) of one slot's event e: varint bytes, a quarter byte for a
 * value equal to one of the two before it in its piece.  In quarter bytes.
 */
struct recent {
	uint64_t a, b;
};

static inline uint64_t cost_of(struct recent *m, uint64_t z)
{
	uint64_t cost = z == m->a || z == m->b ? 1 : 4 * pcz_varint_len(z);

	m->b = m->a;
	m->a = z;
	return cost;
}

static void estimate(const pcz_rows *r, size_t e, size_t i0, size_t i1, uint64_t *cost)
{
	const size_t W = r->width;
	const uint64_t *x = r->v + 2 + e, *dur = r->v + 1;
	struct recent m[3] = { { UINT64_MAX, UINT64_MAX }, { UINT64_MAX, UINT64_MAX },
			       { UINT64_MAX, UINT64_MAX } };
	uint64_t prev = i0 > 0 ? x[(i0 - 1) * W] : 0;

	for (size_t i = i0; i < i1; i++) {
		cost[PCZ_PRED_HISTORY] += cost_of(&m[0], pcz_zigzag(x[i * W] - prev));
		uint64_t none = r->first[i] ? 0 : prev;
		cost[PCZ_PRED_NONE] += cost_of(&m[1], pcz_zigzag(x[i * W] - none));
		cost[PCZ_PRED_DURATION] += cost_of(&m[2], pcz_zigzag(x[i * W] - dur[i * W]));
		prev = x[i * W];
	}
}

static int reserve_tmp(pcz_fast *f, size_t n)
{
	uint64_t *t;

	if (n <= f->tmp_cap)
		return 0;
	t = realloc(f->tmp, n * sizeof *t);
	if (t == NULL)
		return -1;
	f->tmp = t;
	f->tmp_cap = n;
	return 0;
}

/* Each event's predictor from runs of rows spread over each slot; ties keep the lower. */
static void choose(const pcz_fast *f, uint8_t *pred)
{
	size_t quota = PCZ_SAMPLE_ROWS / (f->n_slots ? f->n_slots : 1);

	if (quota < PCZ_SAMPLE_RUN)
		quota = PCZ_SAMPLE_RUN;
	for (size_t e = 0; e < f->n_events; e++) {
		uint64_t cost[3] = { 0, 0, 0 };
		for (size_t k = 0; k < f->n_slots; k++) {
			const pcz_rows *r = &f->slot[k];
			size_t runs = r->n <= quota ? 1 : quota / PCZ_SAMPLE_RUN;
			size_t len = r->n <= quota ? r->n : PCZ_SAMPLE_RUN;
			for (size_t j = 0; j < runs; j++) {
				size_t i0 = runs == 1 ? 0 : j * (r->n - len) / (runs - 1);
				estimate(r, e, i0, i0 + len, cost);
			}
		}
		pred[e] = 0;
		for (unsigned p = 1; p < 3; p++)
			if (cost[p] < cost[pred[e]])
				pred[e] = (uint8_t)p;
	}
}

/* Every piece in one layout into f->pieces, its table entries into f->table. */
static void code_pieces(pcz_fast *f, unsigned layout, const uint8_t *pred)
{
	f->pieces.len = 0;
	f->table.len = 0;
	/* Room for 2 bytes a value, what counter data takes: usually no growth below. */
	if (pcz_buf_grow(&f->pieces, 2 * f->n_values) != 0)
		return;
	for (size_t s = 0; s <= f->n_events; s++)
		for (size_t k = 0; k < f->n_slots; k++) {
			const pcz_rows *r = &f->slot[k];
			size_t n;
			uint64_t all = 0;
			unsigned w = 0;
			uint8_t *o;
			if (layout == PCZ_LAYOUT_VARINT) {
				/* At most 10 bytes a value, 2 values a row in stream 0. */
				if (pcz_buf_grow(&f->pieces, 20 * r->n) != 0)
					return;
				o = f->pieces.data + f->pieces.len;
				n = (size_t)(varint_piece(r, s, s ? pred[s - 1] : 0, o) - o);
				f->pieces.len += n;
				pcz_buf_varint(&f->table, n);
				continue;
			}
			n = range_values(r, s, s ? pred[s - 1] : 0, 0, r->n, f->tmp);
			for (size_t i = 0; i < n; i++)
				all |= f->tmp[i];
			while (n && (w == 0 || (w < 8 && all >> (8 * w))))
				w++;
			pcz_buf_varint(&f->table, n);
			pcz_buf_u8(&f->table, w);
			if (n == 0 || pcz_buf_grow(&f->pieces, n * w) != 0)
				continue;
			/* Plane j holds byte j of every value: high planes are mostly zero. */
			o = f->pieces.data + f->pieces.len;
			for (unsigned j = 0; j < w; j++)
				for (size_t i = 0; i < n; i++)
					*o++ = (uint8_t)(f->tmp[i] >> (8 * j));
			f->pieces.len += n * w;
		}
}

/*
 * Counts every step-th byte of a buffer into four tables in turn: runs of one
 * byte (zeros, mostly) would otherwise chain every increment on the last.
 */
static size_t count_bytes(const pcz_buf *b, size_t step, uint32_t (*count)[256])
{
	size_t n = 0;

	for (size_t i = 0; i < b->len; i += step, n++)
		count[n & 3][b->data[i]]++;
	return n;
}

/*
 * Whether bytes this dense (order-0 entropy above 0.72 x 8 bits each) should
 * go as PLANES.  A systematic sample of about PCZ_SAMPLE_BYTES bytes gives the
 * entropy within a few hundredths of a bit per byte, far from the threshold
 * on data/threads/ (kernels 0.62-0.70, the others 0.74-0.82).
 */
#define PCZ_SAMPLE_BYTES 2048
static int dense(const pcz_buf *a, const pcz_buf *b)
{
	uint32_t count[4][256];
	size_t step = (a->len + b->len) / PCZ_SAMPLE_BYTES + 1;
	double n, bits = 0;

	memset(count, 0, sizeof count);
	n = (double)(count_bytes(a, step, count) + count_bytes(b, step, count));
	for (unsigned c = 0; c < 256; c++) {
		uint32_t k = count[0][c] + count[1][c] + count[2][c] + count[3][c];
		if (k)
			bits -= (double)k * log2((double)k / n);
	}
	return bits > PCZ_DENSE_VARINTS * 8.0 * n;
}

int pcz_fast_payload(pcz_fast *f, size_t n_regions, const pcz_buf *structure, pcz_buf *payload)
{
	size_t most = 0;
	unsigned layout = PCZ_LAYOUT_VARINT;
	uint8_t *pred = malloc(f->n_events);

	for (size_t k = 0; k < f->n_slots; k++)
		most = f->slot[k].n > most ? f->slot[k].n : most;
	if (pred == NULL || reserve_tmp(f, 2 * most + 1) != 0) {
		free(pred);
		return -MPXKIT_ENOMEM;
	}
	choose(f, pred);
	code_pieces(f, layout, pred);
	if (!f->pieces.oom && dense(structure, &f->pieces)) {
		layout = PCZ_LAYOUT_PLANES;
		code_pieces(f, layout, pred);
	}
	payload->len = 0;
	if (pcz_buf_grow(payload, 64 + f->n_events + f->table.len + structure->len +
					  f->pieces.len) != 0) {
		free(pred);
		return -MPXKIT_ENOMEM;
	}
	pcz_buf_varint(payload, n_regions);
	pcz_buf_varint(payload, layout);
	pcz_buf_put(payload, pred, f->n_events);
	pcz_buf_varint(payload, f->n_slots);
	pcz_buf_varint(payload, structure->len);
	pcz_buf_put(payload, f->table.data, f->table.len);
	pcz_buf_put(payload, structure->data, structure->len);
	pcz_buf_put(payload, f->pieces.data, f->pieces.len);
	free(pred);
	return payload->oom || f->pieces.oom || f->table.oom ? -MPXKIT_ENOMEM : 0;
}

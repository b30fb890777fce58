/* SPDX-License-Identifier: BSD-3-Clause */
/* Version 2's MODEL codec: range coder, number models, predictors, and the writer's section coder. */
#include <stdlib.h>
#include <string.h>

#include "pcz_impl.h"

/* Chosen on the tuning files of data/threads-dev (doc/pcz-format.md, "Numbers"). */
const uint8_t pcz_prob_rate[16] = { 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4 };

/* ---- Models ------------------------------------------------------------------------------ */

static void model_reset(pcz_model *m)
{
	uint16_t *p = &m->same[0];

	for (size_t i = 0; i < sizeof *m / sizeof *p; i++)
		p[i] = PCZ_PROB_INIT;
}

int pcz_models_init(pcz_models *m, size_t n_events)
{
	size_t n = 2 + n_events < PCZ_MODEL_COLUMNS ? 2 + n_events : PCZ_MODEL_COLUMNS;

	if (m->col == NULL || m->n_col != n) {
		free(m->col);
		m->col = malloc(n * sizeof *m->col);
		if (m->col == NULL)
			return -MPXKIT_ENOMEM;
		m->n_col = n;
	}
	for (size_t f = 0; f < PCZ_N_FIELDS; f++)
		model_reset(&m->field[f]);
	for (size_t i = 0; i < 256; i++)
		m->byte[i] = PCZ_PROB_INIT;
	for (size_t c = 0; c < n; c++)
		model_reset(&m->col[c]);
	return 0;
}

void pcz_models_free(pcz_models *m)
{
	free(m->col);
	memset(m, 0, sizeof *m);
}

/* ---- Range encoder (LZMA's ShiftLow with a carry cache) and raw bits ----------------------- */

void pcz_rc_enc_reset(pcz_rc_enc *e)
{
	e->low = 0;
	e->range = 0xFFFFFFFFu;
	e->cache = 0;
	e->cache_size = 1;
	e->out.len = 0;
	e->acc = 0;
	e->n_acc = 0;
	e->bits.len = 0;
}

void pcz_rc_enc_free(pcz_rc_enc *e)
{
	pcz_buf_free(&e->out);
	pcz_buf_free(&e->bits);
}

int pcz_rc_enc_reserve(pcz_rc_enc *e, size_t n)
{
	/* A pending run of 0xFF bytes comes out at once: room for it too. */
	if (pcz_buf_grow(&e->out, n + e->cache_size) != 0 || pcz_buf_grow(&e->bits, n) != 0)
		return -1;
	return 0;
}

static inline void shift_low(pcz_rc_enc *e)
{
	if ((uint32_t)e->low < 0xFF000000u || (e->low >> 32) != 0) {
		uint8_t carry = (uint8_t)(e->low >> 32), temp = e->cache;
		do {
			e->out.data[e->out.len++] = (uint8_t)(temp + carry);
			temp = 0xFF;
		} while (--e->cache_size != 0);
		e->cache = (uint8_t)(e->low >> 24);
	}
	e->cache_size++;
	e->low = (uint64_t)((uint32_t)e->low << 8);
}

static inline void enc_bit(pcz_rc_enc *e, uint16_t *p, unsigned bit)
{
	uint32_t bound = (e->range >> PCZ_PROB_BITS) * (*p & 0xFFFu);

	if (bit == 0) {
		e->range = bound;
	} else {
		e->low += bound;
		e->range -= bound;
	}
	*p = pcz_prob_update(*p, bit);
	while (e->range < (1u << 24)) {
		e->range <<= 8;
		shift_low(e);
	}
}

/* k (<= 32) raw bits of v, least significant first. */
static inline void put_bits(pcz_rc_enc *e, uint64_t v, unsigned k)
{
	e->acc |= (v & ((1ull << k) - 1)) << e->n_acc;
	e->n_acc += k;
	while (e->n_acc >= 8) {
		e->bits.data[e->bits.len++] = (uint8_t)e->acc;
		e->acc >>= 8;
		e->n_acc -= 8;
	}
}

void pcz_rc_enc_finish(pcz_rc_enc *e)
{
	for (int i = 0; i < 5; i++)
		shift_low(e);
	if (e->n_acc)
		e->bits.data[e->bits.len++] = (uint8_t)e->acc;
	e->acc = 0;
	e->n_acc = 0;
}

static inline void enc_number(pcz_rc_enc *e, pcz_model *m, unsigned q, uint64_t z)
{
	unsigned b = pcz_bit_length(z), node = 1, c = pcz_len_class(q);
	uint16_t *t = m->tree[c];

	/* The same length as the previous value: one decision instead of the tree's seven. */
	enc_bit(e, &m->same[c], b != q);
	for (int i = 6; b != q && i >= 0; i--) {
		unsigned bit = (b >> i) & 1;
		enc_bit(e, &t[node], bit);
		node = 2 * node + bit;
	}
	if (b >= 2) {
		unsigned first = (unsigned)(z >> (b - 2)) & 1;
		enc_bit(e, &m->mant[b][0], first);
		if (b >= 3) {
			enc_bit(e, &m->mant[b][1 + first], (unsigned)(z >> (b - 3)) & 1);
			if (b >= 4) {
				unsigned k = b - 3;
				if (k > 32) {
					put_bits(e, z, 32);
					put_bits(e, z >> 32, k - 32);
				} else {
					put_bits(e, z, k);
				}
			}
		}
	}
}

void pcz_enc_number(pcz_rc_enc *e, pcz_model *m, unsigned q, uint64_t z)
{
	enc_number(e, m, q, z);
}



static inline void enc_byte(pcz_rc_enc *e, uint16_t *probs, unsigned byte)
{
	unsigned node = 1;

	for (int i = 7; i >= 0; i--) {
		unsigned bit = (byte >> i) & 1;
		enc_bit(e, &probs[node], bit);
		node = 2 * node + bit;
	}
}

void pcz_enc_byte(pcz_rc_enc *e, uint16_t *probs, unsigned byte)
{
	enc_byte(e, probs, byte);
}

/* ---- Decoder ------------------------------------------------------------------------------- */

int pcz_rc_dec_init(pcz_rc_dec *d, const uint8_t *rc, size_t rc_len, const uint8_t *bits,
		    size_t bits_len)
{
	memset(d, 0, sizeof *d);
	if (rc_len < 5 || rc[0] != 0)
		return -1;
	d->code = (uint32_t)rc[1] << 24 | (uint32_t)rc[2] << 16 | (uint32_t)rc[3] << 8 | rc[4];
	d->range = 0xFFFFFFFFu;
	d->p = rc + 5;
	d->end = rc + rc_len;
	d->bits = bits;
	d->bits_end = bits + bits_len;
	return 0;
}

static inline unsigned dec_bit(pcz_rc_dec *d, uint16_t *p)
{
	uint32_t bound = (d->range >> PCZ_PROB_BITS) * (*p & 0xFFFu);
	/* Without a branch on the bit, which is as likely to go either way as the model says. */
	uint32_t mask = 0u - (uint32_t)(d->code >= bound);
	unsigned bit = mask & 1u;

	d->code -= bound & mask;
	d->range = (bound & ~mask) | ((d->range - bound) & mask);
	*p = pcz_prob_update(*p, bit);
	while (d->range < (1u << 24)) {
		d->range <<= 8;
		if (d->p < d->end) {
			d->code = d->code << 8 | *d->p++;
		} else {
			d->code <<= 8;
			d->err = 1;
		}
	}
	return bit;
}

/* k (<= 32) raw bits, least significant first. */
static inline uint64_t get_bits(pcz_rc_dec *d, unsigned k)
{
	uint64_t byte = d->bit_pos >> 3, left = (uint64_t)(d->bits_end - d->bits), v = 0;
	unsigned shift = (unsigned)(d->bit_pos & 7);

	if (((d->bit_pos + k + 7) >> 3) > left) {
		d->err = 1;
		return 0;
	}
	if (left - byte >= 8) {
		memcpy(&v, d->bits + byte, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = __builtin_bswap64(v);
#endif
	} else {
		for (uint64_t i = byte; i < left; i++)
			v |= (uint64_t)d->bits[i] << (8 * (i - byte));
	}
	d->bit_pos += k;
	return (v >> shift) & ((1ull << k) - 1);
}

static inline uint64_t dec_number(pcz_rc_dec *d, pcz_model *m, unsigned q)
{
	unsigned c = pcz_len_class(q), node = 1, b = q;
	uint16_t *t = m->tree[c];
	uint64_t z;

	if (dec_bit(d, &m->same[c])) {
		for (int i = 0; i < 7; i++)
			node = 2 * node + dec_bit(d, &t[node]);
		b = node - 128;
		/* One coding per value: the tree never holds the previous length. */
		if (b == q)
			d->err = 1;
	}
	if (b > 64) {
		d->err = 1;
		return 0;
	}
	if (b < 2)
		return b;
	z = 2 | dec_bit(d, &m->mant[b][0]);
	if (b >= 3) {
		z = 2 * z + dec_bit(d, &m->mant[b][1 + (z & 1)]);
		if (b >= 4) {
			unsigned k = b - 3;
			uint64_t low = k > 32 ? get_bits(d, 32) | get_bits(d, k - 32) << 32
					      : get_bits(d, k);
			z = z << k | low;
		}
	}
	return z;
}

uint64_t pcz_dec_number(pcz_rc_dec *d, pcz_model *m, unsigned q)
{
	return dec_number(d, m, q);
}

/* The ring's row closest in duration to d (see MATCH), or NULL when the ring is empty. */
static inline const uint64_t *ring_match(const pcz_ring *r, size_t W, uint64_t d)
{
	size_t best = SIZE_MAX;
	uint64_t gap = UINT64_MAX;

	/* Newest first, so that a tie keeps the most recent, as the writer's closest_row does. */
	for (size_t i = 0, at = r->next; i < r->n; i++) {
		uint64_t g;
		at = at ? at - 1 : PCZ_MATCH_WINDOW - 1;
		g = r->dur[at] > d ? r->dur[at] - d : d - r->dur[at];
		if (g < gap) {
			gap = g;
			best = at;
		}
	}
	return best == SIZE_MAX ? NULL : r->rows + best * W;
}

/* One number and the bit length it leaves as the column's context. */
static inline uint64_t dec_column(pcz_rc_dec *d, pcz_models *models, size_t col, uint8_t *cls,
				  uint8_t *col_cls)
{
	uint64_t z = dec_number(d, pcz_col_model(models, col), cls[col]);

	cls[col] = col_cls[col] = (uint8_t)pcz_bit_length(z);
	return z;
}

void pcz_dec_row(pcz_rc_dec *in, pcz_models *models, const uint8_t *pred, size_t W, uint64_t *row,
		 const uint64_t *h, const uint64_t *n, pcz_ring *ring, uint8_t *cls, uint8_t *col_cls,
		 uint64_t *bits)
{
	/* A local copy: the coder's state stays in registers for the row. */
	pcz_rc_dec local = *in;
	pcz_sources s;
	uint64_t d;

	uint64_t at = pcz_rc_dec_bits(&local), now;

	row[0] = (h ? h[1] : 0) + pcz_unzigzag(dec_column(&local, models, 0, cls, col_cls));
	now = pcz_rc_dec_bits(&local);
	bits[0] += now - at;
	at = now;
	d = pcz_v2_predict_duration(pred[1], h, n) +
	    pcz_unzigzag(dec_column(&local, models, 1, cls, col_cls));
	now = pcz_rc_dec_bits(&local);
	bits[1] += now - at;
	at = now;
	row[1] = row[0] + d;
	pcz_sources_set(&s, d, h, n, ring_match(ring, W, d));
	for (size_t col = 2; col < W; col++) {
		row[col] = pcz_v2_predict(pred[col], col, &s) +
			   pcz_unzigzag(dec_column(&local, models, col, cls, col_cls));
		now = pcz_rc_dec_bits(&local);
		bits[col] += now - at;
		at = now;
	}
	*in = local;
	memcpy(ring->rows + ring->next * W, row, W * sizeof *row);
	ring->dur[ring->next] = d;
	ring->next = (ring->next + 1) % PCZ_MATCH_WINDOW;
	ring->n += ring->n < PCZ_MATCH_WINDOW;
}

unsigned pcz_dec_byte(pcz_rc_dec *d, uint16_t *probs)
{
	unsigned node = 1;

	for (int i = 0; i < 8; i++)
		node = 2 * node + dec_bit(d, &probs[node]);
	return node - 256;
}

int pcz_rc_dec_done(const pcz_rc_dec *d)
{
	uint64_t left = (uint64_t)(d->bits_end - d->bits);
	unsigned rest = (unsigned)(d->bit_pos & 7);

	if (d->err || d->p != d->end || d->code != 0 || (d->bit_pos + 7) >> 3 != left)
		return 0;
	/* The unused high bits of the last byte are 0. */
	return rest == 0 || (d->bits[left - 1] >> rest) == 0;
}

/* ---- The writer's section coder ------------------------------------------------------------ */

void pcz_mchunk_free(pcz_mchunk *c)
{
	free(c->reg);
	free(c->unit);
	free(c->rows);
	free(c->link);
	pcz_buf_free(&c->names);
	free(c->slot_of);
	free(c->slot_gen);
	free(c->last_row);
	free(c->cls);
	free(c->place);
	pcz_models_free(&c->models);
	pcz_rc_enc_free(&c->rc);
	memset(c, 0, sizeof *c);
}

void pcz_mchunk_reset(pcz_mchunk *c)
{
	c->n_reg = c->n_unit = c->n_rows = c->n_slots_used = 0;
	c->names.len = 0;
	c->gen++;
}

static int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* Per dictionary entry slot bookkeeping, grown to dict_n entries. */
static int grow_dict(pcz_mchunk *c, size_t dict_n)
{
	size_t cap = c->cap_dict, old = c->cap_dict;

	if (dict_n <= cap)
		return 0;
	if (grow_array((void **)&c->slot_of, &cap, dict_n, sizeof *c->slot_of) != 0)
		return -1;
	cap = old;
	if (grow_array((void **)&c->slot_gen, &cap, dict_n, sizeof *c->slot_gen) != 0)
		return -1;
	for (size_t k = old; k < cap; k++)
		c->slot_gen[k] = UINT64_MAX;
	c->cap_dict = cap;
	return 0;
}

/* The chunk slot of entry k, new ones numbered in order of first use; SIZE_MAX when out of memory. */
static size_t chunk_slot(pcz_mchunk *c, size_t k, size_t *n_slots, int *fresh)
{
	*fresh = c->slot_gen[k] != c->gen;
	if (*fresh) {
		size_t cap = c->cap_slots, W = c->width;
		if (*n_slots >= cap) {
			size_t need = *n_slots + 1;
			if (grow_array((void **)&c->last_row, &cap, need, sizeof *c->last_row) != 0)
				return SIZE_MAX;
			cap = c->cap_slots;
			if (grow_array((void **)&c->place, &cap, need, 2 * sizeof *c->place) != 0)
				return SIZE_MAX;
			cap = c->cap_slots;
			if (grow_array((void **)&c->cls, &cap, need, W) != 0)
				return SIZE_MAX;
			c->cap_slots = cap;
		}
		c->slot_gen[k] = c->gen;
		c->slot_of[k] = (*n_slots)++;
		c->last_row[c->slot_of[k]] = SIZE_MAX;
	}
	return c->slot_of[k];
}

/*
 * MATCH's row for the next row, of duration d: of the PCZ_MATCH_WINDOW rows
 * before it, the closest in duration, ties to the most recent; SIZE_MAX when none.
 */
static size_t closest_row(const pcz_mchunk *c, uint64_t d)
{
	size_t best = SIZE_MAX, stop = c->n_rows > PCZ_MATCH_WINDOW ? c->n_rows - PCZ_MATCH_WINDOW : 0;
	uint64_t gap = UINT64_MAX;

	for (size_t i = c->n_rows; i-- > stop;) {
		uint64_t g = c->link[i].dur > d ? c->link[i].dur - d : d - c->link[i].dur;
		if (g < gap) {
			gap = g;
			best = i;
		}
	}
	return best;
}

int pcz_mchunk_add(pcz_mchunk *c, unsigned name_mode, const char *name, size_t n_units,
		   const mpxkit_pcz_unit *units, const size_t *kidx, size_t dict_n)
{
	size_t E = c->n_events, W = c->width, steps = 0, n_slots = 0;
	pcz_mregion *r;

	if (c->n_reg == 0) {
		c->dict_base = dict_n;
		c->gen++;
	}
	for (size_t u = 0; u < n_units; u++)
		steps += units[u].n_steps;
	if (grow_array((void **)&c->reg, &c->cap_reg, c->n_reg + 1, sizeof *c->reg) != 0 ||
	    grow_array((void **)&c->unit, &c->cap_unit, c->n_unit + n_units, sizeof *c->unit) != 0)
		return -MPXKIT_ENOMEM;
	{
		size_t cap = c->cap_rows;
		if (grow_array((void **)&c->rows, &cap, c->n_rows + steps, W * sizeof *c->rows) != 0)
			return -MPXKIT_ENOMEM;
		cap = c->cap_rows;
		if (grow_array((void **)&c->link, &cap, c->n_rows + steps, sizeof *c->link) != 0)
			return -MPXKIT_ENOMEM;
		c->cap_rows = cap;
	}
	r = &c->reg[c->n_reg++];
	r->name_mode = (uint8_t)name_mode;
	r->name_off = c->names.len;
	r->name_len = name_mode == PCZ_NAME_NEW ? strlen(name) : 0;
	pcz_buf_put(&c->names, name, r->name_len);
	r->first_unit = c->n_unit;
	r->n_units = n_units;
	/* Each unit's last row in the section, for the history links (see "Rows"). */
	n_slots = c->n_slots_used;
	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		pcz_munit *m = &c->unit[c->n_unit++];
		size_t slot, prev_first = u ? c->unit[c->n_unit - 2].first_row : 0;
		size_t prev_steps = u ? c->unit[c->n_unit - 2].n_steps : 0;
		int fresh;
		if (grow_dict(c, kidx[u] + 1) != 0)
			return -MPXKIT_ENOMEM;
		slot = chunk_slot(c, kidx[u], &n_slots, &fresh);
		if (slot == SIZE_MAX)
			return -MPXKIT_ENOMEM;
		m->k = kidx[u];
		m->n_steps = x->n_steps;
		m->cpu = x->cpu;
		m->numa = x->numa;
		m->first_row = c->n_rows;
		for (size_t s = 0; s < x->n_steps; s++) {
			uint64_t *row = c->rows + c->n_rows * W;
			row[0] = x->times[2 * s];
			row[1] = x->times[2 * s + 1];
			memcpy(row + 2, x->values + s * E, E * sizeof *row);
			struct pcz_mlink *l = &c->link[c->n_rows];
			l->dur = row[1] - row[0];
			l->match = closest_row(c, l->dur);
			l->hist = c->last_row[slot];
			l->ref = u ? prev_first + (s < prev_steps ? s : prev_steps - 1) : SIZE_MAX;
			c->last_row[slot] = c->n_rows++;
		}
	}
	c->n_slots_used = n_slots;
	return pcz_buf_grow(&c->names, 0) != 0 ? -MPXKIT_ENOMEM : 0;
}

static const uint64_t *row_or_null(const pcz_mchunk *c, size_t i)
{
	return i == SIZE_MAX ? NULL : c->rows + i * c->width;
}

/*
 * Each column's predictor: the smallest sum of residual bit lengths over up
 * to 8 runs of 32 consecutive rows spread over the chunk, ties to the lower.
 */
#define PCZ_CHOICE_RUNS 8
#define PCZ_CHOICE_RUN 32
static void choose(const pcz_mchunk *c, uint8_t *pred)
{
	size_t W = c->width, n = c->n_rows, runs, len;
	uint64_t *cost = calloc(W * PCZ_V2_N_PRED, sizeof *cost);

	len = n < PCZ_CHOICE_RUN ? n : PCZ_CHOICE_RUN;
	runs = n <= PCZ_CHOICE_RUNS * PCZ_CHOICE_RUN ? (n + len - 1) / (len ? len : 1)
						      : PCZ_CHOICE_RUNS;
	memset(pred, 0, W); /* indexed by column; 0 (the start) has none */
	if (cost == NULL || n == 0) {
		free(cost);
		return;
	}
	for (size_t j = 0; j < runs; j++) {
		size_t i0 = runs == 1 || n <= PCZ_CHOICE_RUNS * PCZ_CHOICE_RUN
				    ? j * len
				    : j * (n - len) / (runs - 1);
		for (size_t i = i0; i < i0 + len && i < n; i++) {
			const uint64_t *x = c->rows + i * W, *h = row_or_null(c, c->link[i].hist);
			const uint64_t *nb = row_or_null(c, c->link[i].ref);
			uint64_t d = x[1] - x[0];
			pcz_sources src;
			pcz_sources_set(&src, d, h, nb, row_or_null(c, c->link[i].match));
			for (unsigned p = 0; p < PCZ_V2_N_PRED; p++) {
				if (p == PCZ_V2_HISTORY || p == PCZ_V2_NONE || p == PCZ_V2_REFERENCE)
					cost[1 * PCZ_V2_N_PRED + p] += pcz_bit_length(
						pcz_zigzag(d - pcz_v2_predict_duration(p, h, nb)));
				for (size_t col = 2; col < W; col++)
					cost[col * PCZ_V2_N_PRED + p] += pcz_bit_length(
						pcz_zigzag(x[col] - pcz_v2_predict(p, col, &src)));
			}
		}
	}
	for (size_t col = 1; col < W; col++) {
		unsigned best = 0;
		for (unsigned p = 1; p < PCZ_V2_N_PRED; p++) {
			if (col == 1 && p != PCZ_V2_NONE && p != PCZ_V2_REFERENCE)
				continue;
			if (cost[col * PCZ_V2_N_PRED + p] < cost[col * PCZ_V2_N_PRED + best])
				best = p;
		}
		pred[col] = (uint8_t)best;
	}
	free(cost);
}

/* A number of a structure field. */
static inline void put_field(pcz_rc_enc *e, pcz_models *models, unsigned f, uint64_t z)
{
	enc_number(e, &models->field[f], 0, z);
}

static inline void put_name(pcz_rc_enc *e, pcz_models *models, const char *name, size_t len)
{
	put_field(e, models, PCZ_F_LENGTH, len - 1);
	for (size_t i = 0; i < len; i++)
		enc_byte(e, models->byte, (uint8_t)name[i]);
}

/* One number and the bit length it leaves as the column's context. */
static inline void enc_column(pcz_rc_enc *e, pcz_models *models, size_t col, uint64_t z,
			      uint8_t *cls, uint8_t *col_cls)
{
	enc_number(e, pcz_col_model(models, col), cls[col], z);
	cls[col] = col_cls[col] = (uint8_t)pcz_bit_length(z);
}

/* One row: start against the history's end, then every column under its predictor. */
static inline void put_row(pcz_mchunk *c, pcz_rc_enc *e, size_t i, size_t slot,
			   const uint8_t *pred, uint8_t *col_cls)
{
	size_t W = c->width;
	const uint64_t *x = c->rows + i * W, *h = row_or_null(c, c->link[i].hist);
	const uint64_t *nb = row_or_null(c, c->link[i].ref), *mb = row_or_null(c, c->link[i].match);
	uint8_t *cls = c->cls + slot * W;
	uint64_t d = x[1] - x[0], z;
	pcz_sources src;

	z = pcz_zigzag(x[0] - (h ? h[1] : 0));
	enc_column(e, &c->models, 0, z, cls, col_cls);
	z = pcz_zigzag(d - pcz_v2_predict_duration(pred[1], h, nb));
	enc_column(e, &c->models, 1, z, cls, col_cls);
	pcz_sources_set(&src, d, h, nb, mb);
	for (size_t col = 2; col < W; col++)
		enc_column(e, &c->models, col, pcz_zigzag(x[col] - pcz_v2_predict(pred[col], col, &src)),
			   cls, col_cls);
}

int pcz_mchunk_payload(pcz_mchunk *c, const pcz_dict *dict, int placement, pcz_buf *payload)
{
	size_t W = c->width, n_slots = 0, next_new = c->dict_base, prev_units = 0;
	uint8_t *pred = malloc(W), *col_cls = calloc(W, 1);
	int rc = -MPXKIT_ENOMEM;

	if (pred == NULL || col_cls == NULL || pcz_models_init(&c->models, c->n_events) != 0)
		goto out;
	choose(c, pred);
	pcz_rc_enc_reset(&c->rc);
	c->gen++;
	for (size_t g = 0; g < c->n_reg; g++) {
		const pcz_mregion *r = &c->reg[g];
		size_t k_prev = SIZE_MAX;
		pcz_rc_enc e;
		if (pcz_rc_enc_reserve(&c->rc, 64 + 3 * r->name_len) != 0)
			goto out;
		/* A local copy per stretch of coding: the state stays in registers. */
		e = c->rc;
		put_field(&e, &c->models, PCZ_F_NAME_MODE, r->name_mode);
		if (r->name_mode == PCZ_NAME_NEW)
			put_name(&e, &c->models, (const char *)c->names.data + r->name_off,
				 r->name_len);
		put_field(&e, &c->models, PCZ_F_UNITS, pcz_zigzag(r->n_units - prev_units));
		c->rc = e;
		prev_units = r->n_units;
		for (size_t u = 0; u < r->n_units; u++) {
			const pcz_munit *m = &c->unit[r->first_unit + u];
			size_t slot;
			int fresh;
			if (pcz_rc_enc_reserve(&c->rc, 128 + 3 * dict->len[m->k] +
							    m->n_steps * W * 20) != 0)
				goto out;
			slot = chunk_slot(c, m->k, &n_slots, &fresh);
			if (slot == SIZE_MAX)
				goto out;
			if (fresh) {
				memcpy(c->cls + slot * W, col_cls, W);
				c->place[2 * slot] = c->place[2 * slot + 1] = 0;
			}
			e = c->rc;
			put_field(&e, &c->models, PCZ_F_UNIT, pcz_zigzag(m->k - (k_prev + 1)));
			k_prev = m->k;
			if (m->k == next_new) {
				put_name(&e, &c->models, dict->names[m->k], dict->len[m->k]);
				next_new++;
			}
			put_field(&e, &c->models, PCZ_F_STEPS, m->n_steps - 1);
			if (placement) {
				int64_t cpu1 = (int64_t)m->cpu + 1, numa1 = (int64_t)m->numa + 1;
				put_field(&e, &c->models, PCZ_F_CPU,
					  pcz_zigzag((uint64_t)(cpu1 - c->place[2 * slot])));
				put_field(&e, &c->models, PCZ_F_NUMA,
					  pcz_zigzag((uint64_t)(numa1 - c->place[2 * slot + 1])));
				c->place[2 * slot] = cpu1;
				c->place[2 * slot + 1] = numa1;
			}
			for (size_t s = 0; s < m->n_steps; s++)
				put_row(c, &e, m->first_row + s, slot, pred, col_cls);
			c->rc = e;
		}
	}
	if (pcz_rc_enc_reserve(&c->rc, 16) != 0)
		goto out;
	pcz_rc_enc_finish(&c->rc);
	payload->len = 0;
	pcz_buf_varint(payload, c->n_reg);
	pcz_buf_put(payload, pred + 1, W - 1);
	pcz_buf_varint(payload, c->rc.out.len);
	pcz_buf_put(payload, c->rc.out.data, c->rc.out.len);
	pcz_buf_put(payload, c->rc.bits.data, c->rc.bits.len);
	rc = payload->oom ? -MPXKIT_ENOMEM : 0;
out:
	free(pred);
	free(col_cls);
	return rc;
}

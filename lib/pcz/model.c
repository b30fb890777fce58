/* SPDX-License-Identifier: BSD-3-Clause */
/* Version 2's MODEL codec: bit fields, static tables and rANS, MATCH's window, the section coder. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pcz_impl.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PCZ_AVX2 __attribute__((target("avx2")))
#define PCZ_AVX512 __attribute__((target("avx512f")))

/*
 * What the processor has, asked once when the library is loaded: the writer's
 * MATCH takes AVX2 (match_rows_avx2), the reader's AVX-512F
 * (ring_match_avx512) and its row decoder BMI2 (decode_row_bmi2).
 */
static int have_avx2, have_avx512, have_bmi2;

static void __attribute__((constructor)) cpu_init(void)
{
	__builtin_cpu_init();
	have_avx2 = __builtin_cpu_supports("avx2");
	have_avx512 = __builtin_cpu_supports("avx512f");
	have_bmi2 = __builtin_cpu_supports("bmi2");
}
#endif

/* ---- Classes of the previous symbol (doc/pcz-format.md, "Contexts") ------------------------- */

const uint8_t pcz_fine_class[PCZ_SYMBOLS] = {
	0, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7,
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
};

const uint8_t pcz_mode_class[PCZ_MODES][PCZ_FINE_CLASSES] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0 },
	{ 0, 1, 1, 1, 2, 2, 2, 2 },
	{ 0, 1, 2, 3, 4, 5, 6, 7 },
};

const uint8_t pcz_mode_classes[PCZ_MODES] = { 1, 3, 8 };

int pcz_by_pred_set(pcz_by_pred *b, const uint8_t *pred, size_t W)
{
	size_t at[PCZ_V2_N_PRED] = { 0 };

	memset(b->start, 0, sizeof b->start);
	for (size_t c = 2; c < W; c++)
		b->start[pred[c] + 1]++;
	for (unsigned p = 0; p < PCZ_V2_N_PRED; p++) {
		b->start[p + 1] += b->start[p];
		at[p] = b->start[p];
	}
	for (size_t c = 2; c < W; c++)
		b->col[at[pred[c]]++] = (uint32_t)c;
	return 0;
}

/* round(65536 * log2(1 + i / 64)), i = 0 .. 64: log2_fx's interpolation points. */
static const uint32_t log2_tab[65] = {
	0,     1466,  2909,  4331,  5732,  7112,  8473,  9814,  11136, 12440, 13727, 14996, 16248,
	17484, 18704, 19909, 21098, 22272, 23433, 24579, 25711, 26830, 27936, 29029, 30109, 31178,
	32234, 33279, 34312, 35334, 36346, 37346, 38336, 39316, 40286, 41246, 42196, 43137, 44068,
	44990, 45904, 46809, 47705, 48593, 49472, 50344, 51207, 52063, 52911, 53751, 54584, 55410,
	56229, 57040, 57845, 58643, 59434, 60219, 60997, 61769, 62534, 63294, 64047, 64794, 65536,
};

/* log2(v) in 1/65536 bits, v >= 1, within about 1e-4 bit: what the writer's choices and info need. */
static inline uint32_t log2_fx(uint32_t v)
{
	unsigned b = 31u - (unsigned)__builtin_clz(v);
	uint32_t m = v << (31 - b), i = (m >> 25) & 63, f = (m >> 9) & 0xFFFF;

	return (b << 16) + log2_tab[i] + (((log2_tab[i + 1] - log2_tab[i]) * f) >> 16);
}

/*
 * log2_fx of every frequency up to 2^12 (a table's, and normalize's before
 * it takes the rounding error from the largest): make_table
 * weighs each candidate log with them, a load where log2_fx takes ten
 * instructions (they were a sixth of the tables' time on small files).  Set
 * once when the library is loaded, from log2_fx itself.
 */
static uint32_t log2_freq[(1u << PCZ_TABLE_LOG_MAX) + 1];

static void __attribute__((constructor)) log2_freq_init(void)
{
	for (uint32_t f = 1; f <= (1u << PCZ_TABLE_LOG_MAX); f++)
		log2_freq[f] = log2_fx(f);
}

/* round(65536 * c * log2(c)), c = 0 .. 255: the entropy terms of small counts, one load each. */
static const uint32_t clog_tab[256] = {
	0, 0, 131072, 311616, 524288, 760849, 1016449, 1287880, 1572864, 1869698, 2177059, 2493890,
	2819329, 3152656, 3493263, 3840630, 4194304, 4553891, 4919044, 5289451, 5664838, 6044953,
	6429573, 6818492, 7211522, 7608494, 8009248, 8413640, 8821535, 9232807, 9647339, 10065024,
	10485760, 10909451, 11336007, 11765344, 12197383, 12632049, 13069271, 13508981, 13951115,
	14395614, 14842418, 15291475, 15742730, 16196134, 16651639, 17109200, 17568773, 18030316,
	18493788, 18959151, 19426369, 19895405, 20366225, 20838795, 21313085, 21789064, 22266701,
	22745969, 23226839, 23709285, 24193281, 24678802, 25165824, 25654323, 26144277, 26635664,
	27128462, 27622650, 28118208, 28615118, 29113359, 29612913, 30113762, 30615890, 31119277,
	31623909, 32129769, 32636841, 33145110, 33654561, 34165179, 34676950, 35189861, 35703897,
	36219045, 36735293, 37252627, 37771036, 38290508, 38811029, 39332590, 39855179, 40378784,
	40903395, 41429002, 41955593, 42483159, 43011690, 43541176, 44071607, 44602975, 45135269,
	45668482, 46202603, 46737625, 47273540, 47810337, 48348010, 48886551, 49425951, 49966203,
	50507299, 51049232, 51591994, 52135579, 52679978, 53225186, 53771194, 54317998, 54865589,
	55413962, 55963110, 56513026, 57063705, 57615140, 58167326, 58720256, 59273925, 59828327,
	60383456, 60939307, 61495874, 62053152, 62611135, 63169819, 63729198, 64289268, 64850022,
	65411457, 65973567, 66536347, 67099794, 67663902, 68228666, 68794082, 69360146, 69926853,
	70494199, 71062179, 71630790, 72200027, 72769886, 73340363, 73911454, 74483155, 75055462,
	75628371, 76201878, 76775981, 77350674, 77925954, 78501818, 79078263, 79655283, 80232877,
	80811040, 81389770, 81969062, 82548914, 83129321, 83710282, 84291793, 84873850, 85456450,
	86039591, 86623269, 87207481, 87792224, 88377495, 88963292, 89549611, 90136450, 90723805,
	91311674, 91900054, 92488942, 93078337, 93668234, 94258631, 94849526, 95440916, 96032798,
	96625170, 97218030, 97811374, 98405201, 98999508, 99594292, 100189552, 100785284, 101381487,
	101978157, 102575294, 103172894, 103770955, 104369475, 104968452, 105567883, 106167767,
	106768101, 107368883, 107970111, 108571783, 109173897, 109776450, 110379442, 110982869,
	111586729, 112191022, 112795744, 113400894, 114006470, 114612470, 115218892, 115825734,
	116432995, 117040672, 117648764, 118257268, 118866184, 119475509, 120085242, 120695380,
	121305922, 121916867, 122528213, 123139957, 123752099, 124364636, 124977567, 125590890,
	126204604, 126818708, 127433198, 128048075, 128663336, 129278980, 129895005, 130511410,
	131128193, 131745352, 132362887, 132980796, 133599076
};

/* c log2(c) in 1/65536 bits. */
static inline uint64_t clog2_fx(uint32_t c)
{
	return c < 256 ? clog_tab[c] : (uint64_t)c * log2_fx(c);
}

static unsigned ceil_log2(uint64_t n)
{
	return n <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(n - 1);
}

static unsigned gamma_bits(uint64_t v)
{
	return 2 * (pcz_bit_length(v) - 1) + 1;
}

/* ---- Bit fields ------------------------------------------------------------------------------ */

void pcz_bitr_init(pcz_bitr *b, const uint8_t *p, size_t len)
{
	b->p = b->start = p;
	b->end = p + len;
	b->acc = 0;
	b->n = 0;
	b->err = 0;
}

/* Zero bits before a one bit, at most max of them (more set err). */
static unsigned bitr_zeros(pcz_bitr *b, unsigned max)
{
	unsigned z = 0;

	while (!b->err && pcz_bitr_get(b, 1) == 0)
		if (++z > max) {
			b->err = 1;
			break;
		}
	return z;
}

static uint64_t bitr_gamma(pcz_bitr *b)
{
	unsigned n = bitr_zeros(b, 32);

	return b->err ? 0 : (1ull << n) | pcz_bitr_get(b, n);
}

/* The writer's bit fields: n < 32 bits wait in acc, the rest are bytes in buf. */
typedef struct pcz_bitw {
	uint8_t *o; /* room made before (bitw_reserve) */
	uint64_t acc;
	unsigned n;
} pcz_bitw;

/* k <= 32 bits of v. */
static inline void bitw_put(pcz_bitw *w, uint64_t v, unsigned k)
{
	w->acc |= (v & ((1ull << k) - 1)) << w->n;
	w->n += k;
	if (w->n >= 32) {
		uint32_t lo = (uint32_t)w->acc;
		w->o[0] = (uint8_t)lo;
		w->o[1] = (uint8_t)(lo >> 8);
		w->o[2] = (uint8_t)(lo >> 16);
		w->o[3] = (uint8_t)(lo >> 24);
		w->o += 4;
		w->acc >>= 32;
		w->n -= 32;
	}
}

/* Pads with 0 bits to a byte boundary and writes out what waits. */
static void bitw_flush(pcz_bitw *w)
{
	while (w->n > 0) {
		*w->o++ = (uint8_t)w->acc;
		w->acc >>= 8;
		w->n = w->n > 8 ? w->n - 8 : 0;
	}
	w->acc = 0;
}

static void bitw_gamma(pcz_bitw *w, uint64_t v)
{
	unsigned n = pcz_bit_length(v) - 1;

	bitw_put(w, 0, n);
	bitw_put(w, 1, 1);
	bitw_put(w, v, n);
}

static void bitw_rice(pcz_bitw *w, unsigned r, uint64_t v)
{
	for (uint64_t q = v >> r; q > 0; q -= q > 32 ? 32 : q)
		bitw_put(w, 0, q > 32 ? 32 : (unsigned)q);
	bitw_put(w, 1, 1);
	bitw_put(w, v, r);
}

/* ---- Tables ---------------------------------------------------------------------------------- */

/*
 * The Rice parameter with the fewest bits, and their number: near log2 of the
 * mean, so r0 - 1, r0 and r0 + 1 are tried (ties to the lower), costed in one
 * pass over the first k - 1 frequencies.
 */
static unsigned best_rice(const pcz_table *t, uint64_t *bits)
{
	uint32_t sum = 0, n = t->k > 1 ? t->k - 1 : 1;
	uint64_t q[3] = { 0, 0, 0 };
	unsigned best, r0, lo;

	/* Below 2^12 a frequency, 64 of them: 32 bits hold the sum and divide it. */
	for (unsigned i = 0; i + 1 < t->k; i++)
		sum += t->freq[i] - 1u;
	r0 = pcz_bit_length(sum / n);
	r0 = r0 > PCZ_TABLE_LOG_MAX - 2 ? PCZ_TABLE_LOG_MAX - 2 : r0;
	lo = r0 ? r0 - 1 : 0;
	for (unsigned i = 0; i + 1 < t->k; i++) {
		uint32_t v = t->freq[i] - 1u;
		q[0] += v >> lo;
		q[1] += v >> (lo + 1);
		q[2] += v >> (lo + 2);
	}
	best = lo;
	*bits = q[0] + (uint64_t)(t->k - 1) * (1 + lo);
	for (unsigned r = lo + 1; r <= r0 + 1; r++) {
		uint64_t b = q[r - lo] + (uint64_t)(t->k - 1) * (1 + r);
		if (b < *bits) {
			*bits = b;
			best = r;
		}
	}
	return best;
}

static void write_table(pcz_bitw *w, const pcz_table *t)
{
	uint64_t bits;

	bitw_gamma(w, t->k + 1);
	if (t->k == 1)
		bitw_gamma(w, t->sym[0] + 1u);
	if (t->k < 2)
		return;
	unsigned r = best_rice(t, &bits);
	bitw_put(w, t->L - 1, 4);
	bitw_put(w, r, 4);
	for (unsigned i = 0; i < t->k; i++)
		bitw_gamma(w, i ? (uint64_t)t->sym[i] - t->sym[i - 1] : t->sym[0] + 1u);
	for (unsigned i = 0; i + 1 < t->k; i++)
		bitw_rice(w, r, t->freq[i] - 1u);
}

/* 0, or -1 for a table the format does not allow. */
static int read_table(pcz_bitr *b, pcz_table *t)
{
	uint64_t k = bitr_gamma(b), sum = 0;
	unsigned r;

	if (b->err || k > PCZ_SYMBOLS + 1)
		return -1;
	t->k = (unsigned)k - 1;
	t->L = 0;
	if (t->k == 1) {
		uint64_t s = bitr_gamma(b);
		if (b->err || s > PCZ_SYMBOLS)
			return -1;
		t->sym[0] = (uint8_t)(s - 1);
		t->freq[0] = 1;
	}
	if (t->k < 2)
		return 0;
	t->L = (unsigned)pcz_bitr_get(b, 4) + 1;
	r = (unsigned)pcz_bitr_get(b, 4);
	if (t->L > PCZ_TABLE_LOG_MAX || (1u << t->L) < t->k)
		return -1;
	for (unsigned i = 0; i < t->k; i++) {
		uint64_t g = bitr_gamma(b), s = i ? t->sym[i - 1] + g : g - 1;
		if (b->err || s >= PCZ_SYMBOLS)
			return -1;
		t->sym[i] = (uint8_t)s;
	}
	for (unsigned i = 0; i + 1 < t->k; i++) {
		/* A frequency is below 2^12: its quotient is at most 4096 >> r zeros. */
		uint64_t q = bitr_zeros(b, (1u << PCZ_TABLE_LOG_MAX) >> r);
		uint64_t f = (q << r | pcz_bitr_get(b, r)) + 1;
		sum += f;
		if (b->err || sum >= (1u << t->L))
			return -1;
		t->freq[i] = (uint16_t)f;
	}
	t->freq[t->k - 1] = (uint16_t)((1u << t->L) - sum);
	return 0;
}

/* ---- The decoder's tables -------------------------------------------------------------------- */

/* A number under an empty table decodes as symbol 65, which the decoder rejects. */
static const uint32_t empty_dec[1] = { PCZ_SYMBOLS | 1u << 7 };
static const uint32_t empty_cost[PCZ_SYMBOLS + 1];

void pcz_msec_free(pcz_msec *m)
{
	free(m->pred);
	free(m->by_pred.col);
	free(m->z);
	free(m->col_ctx);
	free(m->col_flat);
	free(m->ctx);
	free(m->tabs);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

/* Room for n more entries of slots: 0 or -1. */
static int grow_slots(pcz_msec *m, size_t used, size_t n)
{
	size_t cap = m->cap_slots ? m->cap_slots : 4096;
	uint32_t *p;

	if (used + n <= m->cap_slots)
		return 0;
	while (cap < used + n)
		cap *= 2;
	p = realloc(m->slots, cap * sizeof *p);
	if (p == NULL)
		return -1;
	m->slots = p;
	m->cap_slots = cap;
	return 0;
}

/*
 * Builds table t into the slots from *used: its 2^L decoding entries, then
 * its costs; *off is where (SIZE_MAX for an empty table), the pointers of d
 * are set once every table is in (place_dtab).
 */
static int build_dtab(pcz_msec *m, const pcz_table *t, size_t *used, pcz_dtab *d, size_t *off)
{
	size_t L = t->L, n = (size_t)1 << L, at = *used;
	uint32_t *dec, *cost;

	*off = SIZE_MAX;
	if (t->k == 0) {
		*d = (pcz_dtab){ empty_dec, empty_cost, 0, 0 };
		return 0;
	}
	if (grow_slots(m, at, n + PCZ_SYMBOLS + 1) != 0)
		return -MPXKIT_ENOMEM;
	dec = m->slots + at;
	cost = dec + n;
	for (unsigned i = 0, c = 0; i < t->k; c += t->freq[i], i++) {
		uint32_t e = t->sym[i] | (uint32_t)t->freq[i] << 7;
		for (uint32_t j = 0; j < t->freq[i]; j++)
			dec[c + j] = e | j << 19;
		cost[t->sym[i]] = (uint32_t)(L << 16) - log2_fx(t->freq[i]) +
				  ((t->sym[i] ? t->sym[i] - 1u : 0u) << 16);
	}
	*d = (pcz_dtab){ NULL, NULL, (uint32_t)L, (uint32_t)(n - 1) };
	*off = at;
	*used = at + n + PCZ_SYMBOLS + 1;
	return 0;
}

/* The pointers of a table build_dtab put at off, once the slots no longer move. */
static void place_dtab(const pcz_msec *m, pcz_dtab *d, size_t off)
{
	if (off != SIZE_MAX) {
		d->dec = m->slots + off;
		d->cost = m->slots + off + ((size_t)1 << d->L);
	}
}

int pcz_msec_read(pcz_msec *m, size_t W, const uint8_t *p, size_t len, size_t *used,
		  const char **why)
{
	size_t C = W < PCZ_MODEL_COLUMNS ? W : PCZ_MODEL_COLUMNS, n_tabs = 0, at = 0;
	size_t off[PCZ_N_FIELDS + PCZ_MODEL_COLUMNS * PCZ_FINE_CLASSES];
	uint8_t mode[PCZ_MODEL_COLUMNS];
	pcz_bitr b;

	if (m->pred == NULL || m->W != W) {
		pcz_msec_free(m);
		m->pred = malloc(W);
		m->ctx = malloc(C * PCZ_SYMBOLS * sizeof *m->ctx);
		m->tabs = malloc((PCZ_N_FIELDS + C * PCZ_FINE_CLASSES) * sizeof *m->tabs);
		m->by_pred.col = malloc(W * sizeof *m->by_pred.col);
		m->z = malloc(W * sizeof *m->z);
		m->col_ctx = malloc(W * sizeof *m->col_ctx);
		m->col_flat = malloc(W);
		if (m->pred == NULL || m->ctx == NULL || m->tabs == NULL || m->by_pred.col == NULL ||
		    m->z == NULL || m->col_ctx == NULL || m->col_flat == NULL) {
			pcz_msec_free(m);
			return -MPXKIT_ENOMEM;
		}
		m->W = W;
		m->C = C;
	}
	pcz_bitr_init(&b, p, len);
	m->pred[0] = 0;
	m->match = 0;
	for (size_t col = 1; col < W; col++) {
		unsigned v = (unsigned)pcz_bitr_get(&b, 3);
		m->pred[col] = (uint8_t)v;
		m->match |= v == PCZ_V2_MATCH;
		if (v > PCZ_V2_MATCH ||
		    (col == 1 && v != PCZ_V2_HISTORY && v != PCZ_V2_NONE && v != PCZ_V2_REFERENCE)) {
			*why = "unknown predictor";
			return -1;
		}
	}
	for (size_t i = 0; i < PCZ_N_FIELDS + C; i++) {
		size_t classes = 1;
		if (i >= PCZ_N_FIELDS) {
			mode[i - PCZ_N_FIELDS] = (uint8_t)pcz_bitr_get(&b, 2);
			if (mode[i - PCZ_N_FIELDS] >= PCZ_MODES) {
				*why = "unknown context mode";
				return -1;
			}
			classes = pcz_mode_classes[mode[i - PCZ_N_FIELDS]];
		}
		for (size_t k = 0; k < classes; k++, n_tabs++) {
			int rc;
			if (read_table(&b, &m->t) != 0) {
				*why = b.err ? "tables end early" : "bad table";
				return -1;
			}
			rc = build_dtab(m, &m->t, &at, &m->tabs[n_tabs], &off[n_tabs]);
			if (rc < 0)
				return rc;
		}
	}
	/* The padding to the byte boundary is 0. */
	if (pcz_bitr_get(&b, (unsigned)(-pcz_bitr_used(&b) & 7)) != 0 || b.err) {
		*why = b.err ? "tables end early" : "nonzero padding after the tables";
		return -1;
	}
	for (size_t t = 0; t < n_tabs; t++)
		place_dtab(m, &m->tabs[t], off[t]);
	memcpy(m->field, m->tabs, sizeof m->field);
	pcz_by_pred_set(&m->by_pred, m->pred, W);
	m->needs = pcz_needs(m->pred, W);
	for (size_t col = 0; col < W; col++) {
		m->col_ctx[col] = m->ctx + pcz_table_column(col) * PCZ_SYMBOLS;
		m->col_flat[col] = mode[pcz_table_column(col)] == 0;
	}
	for (size_t c = 0, t = PCZ_N_FIELDS; c < C; t += pcz_mode_classes[mode[c]], c++)
		for (unsigned s = 0; s < PCZ_SYMBOLS; s++)
			m->ctx[c * PCZ_SYMBOLS + s] =
				m->tabs[t + pcz_mode_class[mode[c]][pcz_fine_class[s]]];
	*used = (size_t)(pcz_bitr_used(&b) / 8);
	return 0;
}

/* ---- The decoder's streams ------------------------------------------------------------------- */

int pcz_mdec_init(pcz_mdec *d, const uint8_t *ans, size_t ans_len, const uint8_t *raw,
		  size_t raw_len)
{
	memset(d, 0, sizeof *d);
	if (ans_len < 8 || ans_len % 2)
		return -1;
	d->x = pcz_le32(ans);
	d->y = pcz_le32(ans + 4);
	if (d->x < PCZ_ANS_LOW || d->y < PCZ_ANS_LOW)
		return -1;
	d->w = ans + 8;
	d->w_end = ans + ans_len;
	pcz_bitr_init(&d->raw, raw, raw_len);
	return 0;
}

int pcz_mdec_done(const pcz_mdec *d)
{
	const pcz_bitr *r = &d->raw;

	/* No whole byte unread, and the last byte's unused bits 0. */
	return !d->err && !r->err && d->w == d->w_end && d->x == PCZ_ANS_LOW &&
	       d->y == PCZ_ANS_LOW && r->p == r->end &&
	       r->n < 8 && (r->acc & ((1u << r->n) - 1)) == 0;
}

/*
 * MATCH for the reader: pcz_window_match_push's answer, the row among the 64
 * before this one closest in duration, ties to the most recent.  With
 * AVX-512, the 64 gaps from the durations by row number modulo 64 (dur_of)
 * take 8 vectors, their least one a reduction and the rows that have it a
 * mask, where the sorted window costs three searches and up to two moves a
 * row (10 % of the decoding time of omp-cg-12, doc/benchmarks.md).  The
 * window's sorted entries are then left as they are: a reader takes one way
 * or the other for all its sections.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#if PCZ_MATCH_WINDOW != 64
#error "ring_match_avx512 takes 8 vectors of 8"
#endif
/* The gaps of the 8 durations at dur from d, and UINT64_MAX in the lanes not in valid. */
static inline PCZ_AVX512 __m512i ring_gaps(const uint64_t *dur, __m512i d, __mmask8 valid)
{
	__m512i a = _mm512_loadu_si512((const void *)dur);

	return _mm512_mask_sub_epi64(_mm512_set1_epi64(-1), valid, _mm512_max_epu64(a, d),
				     _mm512_min_epu64(a, d));
}

static PCZ_AVX512 uint64_t ring_match_avx512(pcz_window *w, uint64_t d)
{
	uint64_t seq = w->seq, best = UINT64_MAX, rows, valid;
	__m512i dv = _mm512_set1_epi64((long long)d), g0, g1, g2, g3, g4, g5, g6, g7, m;

	if (seq > 0) {
		/* Row r's duration is at r mod 64; before row 64, only rows 0 .. seq - 1 are. */
		valid = seq >= PCZ_MATCH_WINDOW ? UINT64_MAX : (1ull << seq) - 1;
		g0 = ring_gaps(w->dur_of, dv, (__mmask8)valid);
		g1 = ring_gaps(w->dur_of + 8, dv, (__mmask8)(valid >> 8));
		g2 = ring_gaps(w->dur_of + 16, dv, (__mmask8)(valid >> 16));
		g3 = ring_gaps(w->dur_of + 24, dv, (__mmask8)(valid >> 24));
		g4 = ring_gaps(w->dur_of + 32, dv, (__mmask8)(valid >> 32));
		g5 = ring_gaps(w->dur_of + 40, dv, (__mmask8)(valid >> 40));
		g6 = ring_gaps(w->dur_of + 48, dv, (__mmask8)(valid >> 48));
		g7 = ring_gaps(w->dur_of + 56, dv, (__mmask8)(valid >> 56));
		m = _mm512_min_epu64(_mm512_min_epu64(_mm512_min_epu64(g0, g1), _mm512_min_epu64(g2, g3)),
				     _mm512_min_epu64(_mm512_min_epu64(g4, g5), _mm512_min_epu64(g6, g7)));
		m = _mm512_set1_epi64((long long)_mm512_reduce_min_epu64(m));
		/* The rows of the least gap, bit r mod 64 for row r. */
		rows = (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)valid, g0, m) |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 8), g1, m) << 8 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 16), g2, m) << 16 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 24), g3, m) << 24 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 32), g4, m) << 32 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 40), g5, m) << 40 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 48), g6, m) << 48 |
		       (uint64_t)_mm512_mask_cmpeq_epu64_mask((__mmask8)(valid >> 56), g7, m) << 56;
		/* Bit r mod 64 to bit r - (seq - 64): the most recent row is the highest bit. */
		rows = seq % 64 ? rows >> (seq % 64) | rows << (64 - seq % 64) : rows;
		best = seq - PCZ_MATCH_WINDOW + (uint64_t)(63 - __builtin_clzll(rows));
	}
	w->dur_of[seq % PCZ_MATCH_WINDOW] = d;
	w->seq = seq + 1;
	return best;
}

static uint64_t ring_match(pcz_ring *ring, uint64_t d)
{
	return have_avx512 ? ring_match_avx512(&ring->win, d) : pcz_window_match_push(&ring->win, d);
}
#else
static uint64_t ring_match(pcz_ring *ring, uint64_t d)
{
	return pcz_window_match_push(&ring->win, d);
}
#endif

/*
 * The decoder's streams while it decodes a row: the states, the word pointer
 * and the bit reader in locals (pcz_mdec_row's), so that the chain from one
 * symbol to the next (a table, a lookup, a multiplication) never goes
 * through memory.
 */
struct row_state {
	uint32_t x, y;
	const uint8_t *w, *w_end;
	pcz_bitr r;
	int err;
	unsigned b; /* the last symbol */
};

/* Column col's number into z[col], its table by the symbol before it; with count, bits[col]
 * grows by its cost. */
static inline __attribute__((always_inline)) void decode_number(struct row_state *st,
								const pcz_msec *m, size_t col,
								uint64_t *z, uint64_t *bits,
								const int count)
{
	const pcz_dtab *t = m->col_ctx[col];
	unsigned b = st->b;

	/* A branch, not a select: a column of one class then waits for no symbol. */
	if (!m->col_flat[col]) {
		__asm__("" : "+r"(t));
		t += b;
	}
	if (t->L == 0) { /* one symbol: nothing coded */
		b = t->dec[0] & 0x7F;
		/* An empty table (the only way to 65), checked here, off the coded symbols' way. */
		if (__builtin_expect(b >= PCZ_SYMBOLS, 0)) {
			st->err = 1;
			b = 0;
		}
	} else {
		uint32_t e = t->dec[st->x & t->mask];
		uint32_t nx = (e >> 7 & 0xFFF) * (st->x >> t->L) + (e >> 19);
		if (nx < PCZ_ANS_LOW) {
			if (st->w_end - st->w >= 2) {
				nx = nx << 16 | (uint32_t)st->w[0] | (uint32_t)st->w[1] << 8;
				st->w += 2;
			} else {
				nx <<= 16;
				st->err = 1;
			}
		}
		st->x = st->y;
		st->y = nx;
		b = e & 0x7F;
	}
	if (count)
		bits[col] += t->cost[b];
	z[col] = b < 2 ? b : 1ull << (b - 1) | pcz_bitr_get_wide(&st->r, b - 1);
	st->b = b;
}

/*
 * pcz_mdec_row, counting the bits or not: the row's numbers, then what they
 * are added to.  (Taking the match between the duration and the other
 * columns, to overlap its search with their decoding, was slower: the call
 * spilled the decoder's state.)
 */
static inline __attribute__((always_inline)) void
decode_row(pcz_mdec *dec, const pcz_msec *m, uint64_t *row, const uint64_t *h, const uint64_t *n,
	   pcz_ring *ring, uint64_t *bits, const int count)
{
	struct row_state st = { dec->x, dec->y, dec->w, dec->w_end, dec->raw, 0, 0 };
	size_t W = m->W;
	uint64_t *z = m->z, dur;
	const uint64_t *mrow = NULL;
	pcz_sources s;

	for (size_t col = 0; col < W; col++)
		decode_number(&st, m, col, z, bits, count);
	row[0] = (h ? h[1] : 0) + pcz_unzigzag(z[0]);
	dur = pcz_v2_predict_duration(m->pred[1], h, n) + pcz_unzigzag(z[1]);
	row[1] = row[0] + dur;
	if (m->match) {
		uint64_t seq = ring_match(ring, dur);
		if (seq != UINT64_MAX)
			mrow = ring->rows + seq * W;
	}
	pcz_sources_set(&s, dur, h, n, mrow, m->needs);
	dec->x = st.x;
	dec->y = st.y;
	dec->w = st.w;
	dec->raw = st.r;
	dec->err |= st.err;
	pcz_predict_row(&m->by_pred, &s, row, z);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * decode_row with BMI2 where the processor has it: its shifts by a register
 * (the bit reader's and the states') are one instruction each, without the
 * moves to cl around them, which leaves a register free in the loop.
 */
static __attribute__((target("bmi2"))) void decode_row_bmi2(pcz_mdec *dec, const pcz_msec *m,
							     uint64_t *row, const uint64_t *h,
							     const uint64_t *n, pcz_ring *ring)
{
	decode_row(dec, m, row, h, n, ring, NULL, 0);
}
#else
static const int have_bmi2 = 0;

static void decode_row_bmi2(pcz_mdec *dec, const pcz_msec *m, uint64_t *row, const uint64_t *h,
			    const uint64_t *n, pcz_ring *ring)
{
	decode_row(dec, m, row, h, n, ring, NULL, 0);
}
#endif

void pcz_mdec_row(pcz_mdec *dec, const pcz_msec *m, uint64_t *row, const uint64_t *h,
		  const uint64_t *n, pcz_ring *ring, uint64_t *bits)
{
	/* Three copies: counting the bits (mpxkit info), or not, with BMI2 or without. */
	if (bits)
		decode_row(dec, m, row, h, n, ring, bits, 1);
	else if (have_bmi2)
		decode_row_bmi2(dec, m, row, h, n, ring);
	else
		decode_row(dec, m, row, h, n, ring, NULL, 0);
}

/* ---- MATCH's window ------------------------------------------------------------------------ */

/*
 * The entries of the window below d: its place among them.  The entries are
 * kept sorted in the full array, the unused end holding durations of
 * UINT64_MAX (pcz_window_reset), and counted in two levels of 8 (the last
 * entry of each block, then the entries of the block): 16 compares that do
 * not wait for one another, where a binary search waits for 6 loads in turn.
 */
static inline size_t window_lower(const struct pcz_went *e, size_t n, uint64_t d)
{
	size_t blk, i;
	const struct pcz_went *q;

	(void)n;
#if PCZ_MATCH_WINDOW != 64
#error "window_lower counts 8 blocks of 8"
#endif
	blk = (size_t)(e[7].dur < d) + (e[15].dur < d) + (e[23].dur < d) + (e[31].dur < d) +
	      (e[39].dur < d) + (e[47].dur < d) + (e[55].dur < d) + (e[63].dur < d);
	/* With every block below, the last block's entries all count. */
	i = 8 * (blk < 8 ? blk : 7);
	q = e + i;
	return i + (size_t)(q[0].dur < d) + (q[1].dur < d) + (q[2].dur < d) + (q[3].dur < d) +
	       (q[4].dur < d) + (q[5].dur < d) + (q[6].dur < d) + (q[7].dur < d);
}

uint64_t pcz_window_match_push(pcz_window *w, uint64_t d)
{
	size_t n = w->n, lo = window_lower(w->e, n, d), at = lo;
	uint64_t best = UINT64_MAX, gap = 0;
	struct pcz_went x = { d, w->seq };

	/* Below d: the entry before lo, the most recent of its duration (equal ones in row order). */
	if (lo > 0) {
		best = w->e[lo - 1].seq;
		gap = d - w->e[lo - 1].dur;
	}
	/* From d up: the most recent entry of the smallest duration. */
	if (lo < n) {
		uint64_t v = w->e[lo].dur;
		/* Usually the only one of its duration; runs can be long though (threads that did
		 * the same work). */
		size_t last = lo + 1 >= n || w->e[lo + 1].dur != v
				      ? lo
				      : (v == UINT64_MAX ? n : window_lower(w->e, n, v + 1)) - 1;
		if (best == UINT64_MAX || v - d < gap || (v - d == gap && w->e[last].seq > best))
			best = w->e[last].seq;
		/* The new row goes after every entry of its duration. */
		if (v == d)
			at = last + 1;
	}
	if (n == PCZ_MATCH_WINDOW) {
		/* The oldest leaves (the first of its duration, as the oldest of all): shift what
		 * lies between it and the new row's place. */
		size_t r = window_lower(w->e, n, w->dur_of[w->seq % PCZ_MATCH_WINDOW]);
		if (r < at) {
			memmove(w->e + r, w->e + r + 1, (at - 1 - r) * sizeof *w->e);
			w->e[at - 1] = x;
		} else {
			memmove(w->e + at + 1, w->e + at, (r - at) * sizeof *w->e);
			w->e[at] = x;
		}
	} else {
		memmove(w->e + at + 1, w->e + at, (n - at) * sizeof *w->e);
		w->e[at] = x;
		w->n++;
	}
	w->dur_of[w->seq % PCZ_MATCH_WINDOW] = d;
	w->seq++;
	return best;
}

/* ---- The writer's section coder ------------------------------------------------------------ */

/* What pcz_mchunk_payload keeps of a width from section to section (width_arrays). */
static void free_width_arrays(pcz_mchunk *c)
{
	free(c->pred_row);
	free(c->zero_row);
	free(c->by_pred.col);
	free(c->pred);
	free(c->cost);
	free(c->counts);
	free(c->taken);
	c->pred_row = c->zero_row = NULL;
	c->by_pred.col = NULL;
	c->pred = NULL;
	c->cost = NULL;
	c->counts = NULL;
	c->taken = NULL;
}

void pcz_mchunk_free(pcz_mchunk *c)
{
	free(c->reg);
	for (size_t i = 0; i < c->n_slabs; i++) {
		free(c->slab[i].rows);
		free(c->slab[i].link);
		free(c->slab[i].unit);
	}
	free(c->slab);
	free(c->dur);
	free(c->dur32);
	free(c->ratio);
	pcz_buf_free(&c->names);
	free(c->slot_of);
	free(c->slot_gen);
	free(c->last_row);
	free(c->place);
	free(c->key);
	free(c->hist);
	free(c->esym);
	free_width_arrays(c);
	pcz_buf_free(&c->raw);
	pcz_buf_free(&c->tables);
	pcz_buf_free(&c->ans);
	memset(c, 0, sizeof *c);
}

/*
 * Chunks outlive their writer in a pool of a few, as codec contexts do
 * (codec.c): a section's rows, counts and streams are a few hundred KiB
 * that malloc would map fresh for each writer, and taking those pages costs
 * more than coding a small file.  What depends on the width is dropped when
 * a writer of another width takes a chunk; a chunk keeps about PCZ_MPOOL_KEEP
 * bytes of slabs and of each array.  The pool is freed when the library is
 * unloaded.
 */
#define PCZ_MPOOL 4
#define PCZ_MPOOL_KEEP ((size_t)1 << 20)
static pthread_mutex_t mpool_lock = PTHREAD_MUTEX_INITIALIZER;
static pcz_mchunk mpool[PCZ_MPOOL];
static size_t mpool_n;

/* Drops the slabs from keep on, and with keep = 0 the rows of width W too. */
static void drop_width(pcz_mchunk *c, size_t keep)
{
	for (size_t i = keep; i < c->n_slabs; i++) {
		free(c->slab[i].rows);
		free(c->slab[i].link);
		free(c->slab[i].unit);
	}
	c->n_slabs = c->n_slabs < keep ? c->n_slabs : keep;
	if (keep == 0)
		free_width_arrays(c);
}

void pcz_mchunk_init(pcz_mchunk *c, size_t n_events)
{
	memset(c, 0, sizeof *c);
	pthread_mutex_lock(&mpool_lock);
	if (mpool_n > 0)
		*c = mpool[--mpool_n];
	pthread_mutex_unlock(&mpool_lock);
	if (c->width != 2 + n_events)
		drop_width(c, 0);
	c->n_events = n_events;
	c->width = 2 + n_events;
}

void pcz_mchunk_release(pcz_mchunk *c)
{
	/* The counts are 0 between sections (pcz_mchunk_payload keeps them so). */
	if (c->names.oom || c->raw.oom || c->tables.oom || c->ans.oom) {
		pcz_mchunk_free(c);
		return;
	}
	if (c->width == 0) /* never a writer's (not the MODEL codec's) */
		return;
	pcz_mchunk_reset(c);
	drop_width(c, PCZ_MPOOL_KEEP / (PCZ_SLAB * (c->width * sizeof *c->slab->rows +
						    sizeof *c->slab->link + sizeof *c->slab->unit)));
	if (c->cap_dur > PCZ_MPOOL_KEEP / sizeof *c->dur) {
		free(c->dur);
		free(c->dur32);
		free(c->ratio);
		c->dur = NULL;
		c->dur32 = NULL;
		c->ratio = NULL;
		c->cap_dur = 0;
	}
	if (c->cap_num > PCZ_MPOOL_KEEP / sizeof *c->key) {
		free(c->key);
		c->key = NULL;
		c->cap_num = 0;
	}
	if (c->names.cap > PCZ_MPOOL_KEEP)
		pcz_buf_free(&c->names);
	if (c->raw.cap > PCZ_MPOOL_KEEP)
		pcz_buf_free(&c->raw);
	if (c->tables.cap > PCZ_MPOOL_KEEP)
		pcz_buf_free(&c->tables);
	if (c->ans.cap > PCZ_MPOOL_KEEP)
		pcz_buf_free(&c->ans);
	pthread_mutex_lock(&mpool_lock);
	if (mpool_n < PCZ_MPOOL) {
		mpool[mpool_n++] = *c;
		memset(c, 0, sizeof *c);
	}
	pthread_mutex_unlock(&mpool_lock);
	pcz_mchunk_free(c); /* nothing left when it went to the pool */
}

static void __attribute__((destructor)) mpool_free(void)
{
	while (mpool_n > 0)
		pcz_mchunk_free(&mpool[--mpool_n]);
}

void pcz_mchunk_reset(pcz_mchunk *c)
{
	c->n_reg = c->n_unit = c->n_rows = c->n_slots_used = 0;
	c->names.len = 0;
	c->gen++;
}

/* Row i of the chunk, and its links. */
static inline uint64_t *chunk_row(const pcz_mchunk *c, size_t i)
{
	return c->slab[i >> PCZ_SLAB_LOG].rows + (i & (PCZ_SLAB - 1)) * c->width;
}

static inline struct pcz_mlink *chunk_link(const pcz_mchunk *c, size_t i)
{
	return &c->slab[i >> PCZ_SLAB_LOG].link[i & (PCZ_SLAB - 1)];
}

/* The unit whose first row is row i. */
static inline pcz_munit *chunk_unit(const pcz_mchunk *c, size_t i)
{
	return &c->slab[i >> PCZ_SLAB_LOG].unit[i & (PCZ_SLAB - 1)];
}

static int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 256;
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
static inline size_t chunk_slot(pcz_mchunk *c, size_t k, size_t *n_slots, int *fresh)
{
	*fresh = c->slot_gen[k] != c->gen;
	if (*fresh) {
		size_t cap = c->cap_slots;
		if (*n_slots >= cap) {
			size_t need = *n_slots + 1;
			if (grow_array((void **)&c->last_row, &cap, need, sizeof *c->last_row) != 0)
				return SIZE_MAX;
			cap = c->cap_slots;
			if (grow_array((void **)&c->place, &cap, need, 2 * sizeof *c->place) != 0)
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
 * A row's n values into place: with n a constant GCC moves them inline, where
 * the call of memcpy for a row of a dozen values cost about as much as the
 * rest of the row's bookkeeping (the common counts of events; others call).
 */
static inline void copy_values(uint64_t *d, const uint64_t *s, size_t n)
{
	switch (n) {
#define PCZ_COPY_N(k)                            \
	case k:                                  \
		memcpy(d, s, (k) * sizeof *d); \
		break;
		PCZ_COPY_N(1)
		PCZ_COPY_N(2)
		PCZ_COPY_N(3)
		PCZ_COPY_N(4)
		PCZ_COPY_N(5)
		PCZ_COPY_N(6)
		PCZ_COPY_N(7)
		PCZ_COPY_N(8)
		PCZ_COPY_N(9)
		PCZ_COPY_N(10)
		PCZ_COPY_N(11)
		PCZ_COPY_N(12)
		PCZ_COPY_N(13)
		PCZ_COPY_N(14)
		PCZ_COPY_N(15)
		PCZ_COPY_N(16)
#undef PCZ_COPY_N
	default:
		memcpy(d, s, n * sizeof *d);
	}
}

int pcz_mchunk_add(pcz_mchunk *c, unsigned name_mode, const char *name, size_t n_units,
		   const mpxkit_pcz_unit *units, const size_t *kidx, size_t dict_n)
{
	size_t E = c->n_events, W = c->width, steps = 0, n_slots = 0, prev_first = 0, prev_steps = 0;
	pcz_mregion *r;

	if (c->n_reg == 0) {
		c->dict_base = dict_n;
		c->gen++;
	}
	for (size_t u = 0; u < n_units; u++)
		steps += units[u].n_steps;
	if (grow_array((void **)&c->reg, &c->cap_reg, c->n_reg + 1, sizeof *c->reg) != 0)
		return -MPXKIT_ENOMEM;
	while (c->n_slabs * PCZ_SLAB < c->n_rows + steps) {
		struct pcz_slab *b;
		if (grow_array((void **)&c->slab, &c->cap_slabs, c->n_slabs + 1, sizeof *c->slab) != 0)
			return -MPXKIT_ENOMEM;
		b = &c->slab[c->n_slabs];
		b->rows = malloc(PCZ_SLAB * W * sizeof *b->rows);
		b->link = malloc(PCZ_SLAB * sizeof *b->link);
		b->unit = malloc(PCZ_SLAB * sizeof *b->unit);
		if (b->rows == NULL || b->link == NULL || b->unit == NULL) {
			free(b->rows);
			free(b->link);
			free(b->unit);
			return -MPXKIT_ENOMEM;
		}
		c->n_slabs++;
	}
	r = &c->reg[c->n_reg++];
	r->name_mode = (uint8_t)name_mode;
	r->name_off = c->names.len;
	r->name_len = name_mode == PCZ_NAME_NEW ? strlen(name) : 0;
	pcz_buf_put(&c->names, name, r->name_len);
	r->first_row = c->n_rows;
	r->n_units = n_units;
	/* Each unit's last row in the section, for the history links (see "Rows"). */
	n_slots = c->n_slots_used;
	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		pcz_munit *m = chunk_unit(c, c->n_rows);
		size_t slot, first;
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
		c->n_unit++;
		first = c->n_rows;
		for (size_t s = 0; s < x->n_steps; s++) {
			uint64_t *row = chunk_row(c, c->n_rows);
			struct pcz_mlink *l = chunk_link(c, c->n_rows);
			row[0] = x->times[2 * s];
			row[1] = x->times[2 * s + 1];
			copy_values(row + 2, x->values + s * E, E);
			/* l->match: when the section closes (match_rows). */
			l->hist = c->last_row[slot];
			l->ref = u ? prev_first + (s < prev_steps ? s : prev_steps - 1) : SIZE_MAX;
			c->last_row[slot] = c->n_rows++;
		}
		prev_first = first;
		prev_steps = x->n_steps;
	}
	c->n_slots_used = n_slots;
	return c->names.oom ? -MPXKIT_ENOMEM : 0; /* the name's copy failed */
}

static const uint64_t *row_or_null(const pcz_mchunk *c, size_t i)
{
	return i == SIZE_MAX ? NULL : chunk_row(c, i);
}

/* scale(v, d, d'), r = d / d' (negative for d' = 0: v itself). */
static inline uint64_t scaled(uint64_t v, double r)
{
	return r < 0 ? v : pcz_scale(v, r);
}

/* Values below this scale by r = 1 to themselves: v + 0.5 is exact in binary64. */
#define PCZ_EXACT_HALF (1ull << 52)

/*
 * r, or -1 (v itself) where r = 1 and every value of the row is below
 * PCZ_EXACT_HALF, so that scale(v, d, d) = v for each.
 */
static inline double ratio_or_copy(double r, const uint64_t *row, size_t W)
{
	uint64_t any = 0;

	if (r != 1.0)
		return r;
	for (size_t col = 2; col < W; col++)
		any |= row[col];
	return any < PCZ_EXACT_HALF ? -1.0 : r;
}

/* ---- MATCH for the writer: every row of the section at once ------------------------------ */

/*
 * Each row's match is pcz_window_match_push's answer, the row among the 64
 * before it closest in duration, ties to the most recent.  The reader finds
 * it as it goes; the writer knows every duration when the section closes and
 * finds them all then.  Where the durations span less than 2^32 (the
 * measured sections do: nanoseconds, regions under 4 s), 32-bit gaps to the
 * 64 rows before are taken 8 at a time with AVX2 where the processor has it:
 * 9 ns a row against 22 for the window (doc/benchmarks.md).  Otherwise the
 * window as the reader keeps it.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#if PCZ_MATCH_WINDOW != 64
#error "match_avx2 takes 8 vectors of 8"
#endif
/* Lanes before row 0 (those below 64 - i, for i < 64) set to all ones in v[0..8): no row there. */
static inline PCZ_AVX2 void match_no_row(__m256i *v, size_t i)
{
	__m256i at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i below = _mm256_set1_epi32((int)(PCZ_MATCH_WINDOW - i));

	for (int k = 0; k < 8; k++, at = _mm256_add_epi32(at, _mm256_set1_epi32(8)))
		v[k] = _mm256_or_si256(v[k], _mm256_cmpgt_epi32(below, at));
}

/* The least of the 64 unsigned lanes of v[0..8), in every lane of the result. */
static inline PCZ_AVX2 __m128i match_least(const __m256i *v)
{
	__m256i m = _mm256_min_epu32(
		_mm256_min_epu32(_mm256_min_epu32(v[0], v[1]), _mm256_min_epu32(v[2], v[3])),
		_mm256_min_epu32(_mm256_min_epu32(v[4], v[5]), _mm256_min_epu32(v[6], v[7])));
	__m128i h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));

	h = _mm_min_epu32(h, _mm_shuffle_epi32(h, 0x4E));
	return _mm_min_epu32(h, _mm_shuffle_epi32(h, 0xB1));
}

/*
 * Row i's match from d, the durations less the section's least in 32 bits
 * (the same gaps), row j's at d[64 + j]; for i < 64 the entries before row 0
 * are left out (a gap above every other, and not among the candidates).
 */
static PCZ_AVX2 size_t match_avx2(const uint32_t *d, size_t i)
{
	const uint32_t *win = d + i; /* rows i - 64 .. i - 1 */
	__m256i dv = _mm256_set1_epi32((int)d[PCZ_MATCH_WINDOW + i]), g[8], m;
	uint64_t eq = 0, valid = i >= PCZ_MATCH_WINDOW ? UINT64_MAX : UINT64_MAX << (64 - i);

	for (int v = 0; v < 8; v++) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(win + 8 * v));
		g[v] = _mm256_sub_epi32(_mm256_max_epu32(a, dv), _mm256_min_epu32(a, dv));
	}
	if (i < PCZ_MATCH_WINDOW)
		match_no_row(g, i);
	/* The least gap, then the rows that have it: the last of them. */
	m = _mm256_broadcastd_epi32(match_least(g));
	for (int v = 0; v < 8; v++)
		eq |= (uint64_t)(uint32_t)_mm256_movemask_ps(
			      _mm256_castsi256_ps(_mm256_cmpeq_epi32(g[v], m)))
		      << (8 * v);
	eq &= valid;
	return i - PCZ_MATCH_WINDOW + (size_t)(63 - __builtin_clzll(eq));
}

/*
 * match_avx2 in one pass where the durations span less than 2^25: a lane's
 * key is its gap times 64 plus 63 less its place in the window, so that the
 * least key is the most recent row of the least gap (2^31 - 1 at most; no
 * row: 2^32 - 1).  Inlined into match_rows_keyed, unrolled: as a function of
 * its own the keys went through the stack and each row paid a call.
 */
static inline __attribute__((always_inline)) PCZ_AVX2 size_t match_avx2_keyed(const uint32_t *d,
									       size_t i, int first)
{
	const uint32_t *win = d + i; /* rows i - 64 .. i - 1 */
	__m256i dv = _mm256_set1_epi32((int)d[PCZ_MATCH_WINDOW + i]), k[8];
	__m256i back = _mm256_setr_epi32(63, 62, 61, 60, 59, 58, 57, 56);

#pragma GCC unroll 8
	for (int v = 0; v < 8; v++, back = _mm256_sub_epi32(back, _mm256_set1_epi32(8))) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(win + 8 * v));
		__m256i g = _mm256_sub_epi32(_mm256_max_epu32(a, dv), _mm256_min_epu32(a, dv));
		k[v] = _mm256_or_si256(_mm256_slli_epi32(g, 6), back);
	}
	if (first)
		match_no_row(k, i);
	return i - 1 - ((uint32_t)_mm_cvtsi128_si32(match_least(k)) & 63);
}

/* Every row's match from i = 1 on by match_avx2_keyed (the first 64 rows have rows missing). */
static PCZ_AVX2 void match_rows_keyed(pcz_mchunk *c, const uint32_t *d, size_t n)
{
	size_t i = 1;

	for (; i < n && i < PCZ_MATCH_WINDOW; i++)
		chunk_link(c, i)->match = match_avx2_keyed(d, i, 1);
	for (; i < n; i++)
		chunk_link(c, i)->match = match_avx2_keyed(d, i, 0);
}

/* Every row's match by match_avx2, when the durations span less than 2^32: 0 if done. */
static int match_rows_avx2(pcz_mchunk *c, const uint64_t *dur, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t *d = c->dur32;

	if (!have_avx2)
		return -1;
	for (size_t i = 0; i < n; i++) {
		lo = dur[i] < lo ? dur[i] : lo;
		hi = dur[i] > hi ? dur[i] : hi;
	}
	if (hi - lo > UINT32_MAX)
		return -1;
	memset(d, 0, PCZ_MATCH_WINDOW * sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[PCZ_MATCH_WINDOW + i] = (uint32_t)(dur[i] - lo);
	chunk_link(c, 0)->match = SIZE_MAX;
	if (hi - lo < (1u << 25))
		match_rows_keyed(c, d, n);
	else
		for (size_t i = 1; i < n; i++)
			chunk_link(c, i)->match = match_avx2(d, i);
	return 0;
}
#else
static int match_rows_avx2(pcz_mchunk *c, const uint64_t *dur, size_t n)
{
	(void)c;
	(void)dur;
	(void)n;
	return -1;
}
#endif

/* Every row's match (link->match): 0, or -MPXKIT_ENOMEM. */
static int match_rows(pcz_mchunk *c)
{
	size_t n = c->n_rows;
	uint64_t *dur;

	if (n > c->cap_dur) {
		uint64_t *d = realloc(c->dur, n * sizeof *d);
		uint32_t *d32 = d ? realloc(c->dur32, (PCZ_MATCH_WINDOW + n) * sizeof *d32) : NULL;
		double *r = d32 ? realloc(c->ratio, 3 * n * sizeof *r) : NULL;
		if (d)
			c->dur = d;
		if (d32)
			c->dur32 = d32;
		if (r == NULL)
			return -MPXKIT_ENOMEM;
		c->ratio = r;
		c->cap_dur = n;
	}
	dur = c->dur;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *row = chunk_row(c, i);
		dur[i] = row[1] - row[0];
	}
	if (n == 0 || match_rows_avx2(c, dur, n) == 0)
		return 0;
	pcz_window_reset(&c->window);
	for (size_t i = 0; i < n; i++) {
		uint64_t m = pcz_window_match_push(&c->window, dur[i]);
		chunk_link(c, i)->match = m == UINT64_MAX ? SIZE_MAX : (size_t)m;
	}
	return 0;
}

/* pcz_ratio_of with the rows' durations: d over row j's (j SIZE_MAX: none). */
static inline double ratio_to(const uint64_t *dur, uint64_t d, size_t j)
{
	return pcz_ratio(d, j == SIZE_MAX ? 0 : dur[j]);
}

/*
 * Each row's ratios to its history, reference and match as pcz_sources_set
 * takes them for needs, into c->ratio, before the forward pass: there each
 * row's divisions waited on its links and rows, and its predictions on the
 * divisions; here they follow one another without waiting.
 */
static void set_ratios(pcz_mchunk *c, unsigned needs)
{
	const uint64_t *dur = c->dur;
	double *r = c->ratio;
	int need_r = (needs & (1u << PCZ_V2_RATIO)) != 0;
	int need_n = (needs & (1u << PCZ_V2_REFERENCE_RATIO)) != 0;
	int need_m = (needs & (1u << PCZ_V2_MATCH)) != 0;

	for (size_t i = 0; i < c->n_rows; i++, r += 3) {
		const struct pcz_mlink *l = chunk_link(c, i);
		uint64_t d = dur[i];
		int has_n = l->ref != SIZE_MAX, has_m = l->match != SIZE_MAX;
		r[0] = need_r || (need_n && !has_n) || (need_m && !has_m) ? ratio_to(dur, d, l->hist)
									  : -1.0;
		r[1] = need_n && has_n ? ratio_to(dur, d, l->ref) : -1.0;
		r[2] = need_m && has_m ? ratio_to(dur, d, l->match) : -1.0;
	}
}

/*
 * The costs of row x's columns cols[0..n_cols) under each predictor into cost
 * (by predictor, then column), from its history hs, reference ns and match ms
 * with their ratios.  ref_is_h: ns is hs (rn is rh); m_is: 1 when ms is hs,
 * 2 when it is ns (with its ratio), 0 when it is neither.  Constants where it
 * is inlined.
 */
static inline __attribute__((always_inline)) void
choose_row(const uint64_t *x, size_t W, uint64_t d, uint64_t *cost, const uint32_t *cols,
	   size_t n_cols, const uint64_t *hs, double rh, const uint64_t *ns, double rn,
	   const uint64_t *ms, double rm, int ref_is_h, int m_is)
{
	for (size_t t = 0; t < n_cols; t++) {
		size_t col = cols[t];
		uint64_t v = x[col], *cp = cost + col, bh, br, bn, bnr;
		bh = pcz_bit_length(pcz_zigzag(v - hs[col]));
		br = pcz_bit_length(pcz_zigzag(v - scaled(hs[col], rh)));
		bn = ref_is_h ? bh : pcz_bit_length(pcz_zigzag(v - ns[col]));
		bnr = ref_is_h ? br : pcz_bit_length(pcz_zigzag(v - scaled(ns[col], rn)));
		cp[PCZ_V2_HISTORY * W] += bh;
		cp[PCZ_V2_NONE * W] += pcz_bit_length(pcz_zigzag(v));
		cp[PCZ_V2_DURATION * W] += pcz_bit_length(pcz_zigzag(v - d));
		cp[PCZ_V2_RATIO * W] += br;
		cp[PCZ_V2_REFERENCE * W] += bn;
		cp[PCZ_V2_REFERENCE_RATIO * W] += bnr;
		cp[PCZ_V2_MATCH * W] += m_is == 1   ? br
					: m_is == 2 ? bnr
						    : pcz_bit_length(pcz_zigzag(v - scaled(ms[col], rm)));
	}
}

/*
 * Each column's predictor: the smallest sum of residual bit lengths over up
 * to 16 runs of 5 consecutive rows spread over the chunk, ties to the lower
 * (80 rows: on the tuning files as small as 128, and cheaper).
 * All seven predictions of a column in one go, a missing row read as zeros
 * (its predictions are 0, as "Rows" says).
 *
 * The runs in two halves, every other one first: a column whose best
 * predictor leads the next by more than PCZ_CHOICE_LEAD eighths of its cost
 * plus PCZ_CHOICE_LEAD_BITS bits after the first half keeps it, and only the
 * others are costed on the second.  Chosen on the tuning files
 * (data/threads-dev/tune): at 2/8 and 16 bits each of them packs to the same
 * bytes as with every run costed for every column, at the default section
 * size and at 4096 and 30000 bytes; leads of 0 and 0 bits made them up to
 * 1.2 % larger.  The columns with a clear winner settle early (8 of 13 on
 * omp-cg-12, 1 on zstd-T6: doc/benchmarks.md).
 */
#define PCZ_CHOICE_RUNS 16
#define PCZ_CHOICE_RUN 5
#define PCZ_CHOICE_LEAD 2u
#define PCZ_CHOICE_LEAD_BITS 16u

/* The cheapest predictor of column col (ties to the lower); *next: the cost of the runner-up. */
static unsigned cheapest(const uint64_t *cost, size_t W, size_t col, uint64_t *next)
{
	unsigned best = col == 1 ? PCZ_V2_HISTORY : 0;
	uint64_t second = UINT64_MAX;

	for (unsigned p = best + 1; p < PCZ_V2_N_PRED; p++) {
		uint64_t v = cost[p * W + col];
		if (col == 1 && p != PCZ_V2_NONE && p != PCZ_V2_REFERENCE)
			continue;
		if (v < cost[best * W + col]) {
			second = cost[best * W + col];
			best = p;
		} else if (v < second) {
			second = v;
		}
	}
	*next = second;
	return best;
}

/* The rows of runs j0, j0 + 2, ... into cost, for the duration when dur and the columns cols. */
static void choose_runs(const pcz_mchunk *c, uint64_t *cost, const uint64_t *zero, size_t runs,
			size_t len, size_t j0, int dur, const uint32_t *cols, size_t n_cols)
{
	size_t W = c->width, n = c->n_rows;

	for (size_t j = j0; j < runs; j += 2) {
		size_t i0 = runs == 1 || n <= PCZ_CHOICE_RUNS * PCZ_CHOICE_RUN
				    ? j * len
				    : j * (n - len) / (runs - 1);
		for (size_t i = i0; i < i0 + len && i < n; i++) {
			const struct pcz_mlink *l = chunk_link(c, i);
			const uint64_t *x = chunk_row(c, i), *h = row_or_null(c, l->hist);
			const uint64_t *nb = row_or_null(c, l->ref), *mb = row_or_null(c, l->match);
			uint64_t d = x[1] - x[0];
			pcz_sources s;
			/* The fallbacks: REFERENCE as HISTORY, REFERENCE_RATIO and MATCH as RATIO. */
			const uint64_t *hs = h ? h : zero, *ns = nb ? nb : hs, *ms = mb ? mb : hs;
			double rh, rn, rm;
			if (dur)
				for (unsigned p = 0; p < PCZ_V2_N_PRED; p++)
					if (p == PCZ_V2_HISTORY || p == PCZ_V2_NONE ||
					    p == PCZ_V2_REFERENCE)
						cost[p * W + 1] += pcz_bit_length(pcz_zigzag(
							d - pcz_v2_predict_duration(p, h, nb)));
			if (n_cols == 0)
				continue;
			pcz_sources_set(&s, d, h, nb, mb, PCZ_NEEDS_ALL);
			rh = s.rh;
			rn = nb ? s.rn : rh;
			rm = mb ? s.rm : rh;
			/* Equal durations: each value is its own prediction (a negative ratio). */
			rh = ratio_or_copy(rh, hs, W);
			rn = ns == hs ? rh : ratio_or_copy(rn, ns, W);
			rm = ms == hs ? rh : ms == ns ? rn : ratio_or_copy(rm, ms, W);
			/* A source that is another's row (a fallback, or a match that is the
			 * history or the reference) has that one's ratio too: its costs are that
			 * one's, taken instead of computed again. */
			if (ns == hs && ms == hs)
				choose_row(x, W, d, cost, cols, n_cols, hs, rh, hs, rh, hs, rh, 1, 1);
			else if (ns == hs)
				choose_row(x, W, d, cost, cols, n_cols, hs, rh, hs, rh, ms, rm, 1, 0);
			else if (ms == hs)
				choose_row(x, W, d, cost, cols, n_cols, hs, rh, ns, rn, ms, rm, 0, 1);
			else if (ms == ns)
				choose_row(x, W, d, cost, cols, n_cols, hs, rh, ns, rn, ms, rm, 0, 2);
			else
				choose_row(x, W, d, cost, cols, n_cols, hs, rh, ns, rn, ms, rm, 0, 0);
		}
	}
}

static __attribute__((noinline)) void choose(const pcz_mchunk *c, uint8_t *pred, uint64_t *cost,
					     const uint64_t *zero, uint32_t *cols)
{
	size_t W = c->width, n = c->n_rows, runs, len, n_cols = 0;
	int dur_open = 1;

	len = n < PCZ_CHOICE_RUN ? n : PCZ_CHOICE_RUN;
	runs = n <= PCZ_CHOICE_RUNS * PCZ_CHOICE_RUN ? (n + len - 1) / (len ? len : 1)
						      : PCZ_CHOICE_RUNS;
	memset(pred, 0, W); /* indexed by column; 0 (the start) has none */
	memset(cost, 0, W * PCZ_V2_N_PRED * sizeof *cost);
	for (size_t col = 2; col < W; col++)
		cols[n_cols++] = (uint32_t)col;
	choose_runs(c, cost, zero, runs, len, 0, 1, cols, n_cols);
	/* The columns whose choice is still open after the first half. */
	n_cols = 0;
	for (size_t col = 1; col < W; col++) {
		uint64_t next, best;
		unsigned p = cheapest(cost, W, col, &next);
		int settled;
		best = cost[p * W + col];
		settled = next == UINT64_MAX ||
			  (next > best && next - best > PCZ_CHOICE_LEAD * best / 8 + PCZ_CHOICE_LEAD_BITS);
		pred[col] = (uint8_t)p;
		if (col == 1)
			dur_open = !settled;
		else if (!settled)
			cols[n_cols++] = (uint32_t)col;
	}
	if (n_cols == 0 && !dur_open)
		return;
	choose_runs(c, cost, zero, runs, len, 1, dur_open, cols, n_cols);
	if (dur_open) {
		uint64_t next;
		pred[1] = (uint8_t)cheapest(cost, W, 1, &next);
	}
	for (size_t t = 0; t < n_cols; t++) {
		uint64_t next;
		pred[cols[t]] = (uint8_t)cheapest(cost, W, cols[t], &next);
	}
}

/*
 * The raw stream as the forward pass writes it: n < 64 bits wait in acc,
 * whole 64-bit words go out (little-endian, so the bytes are those of
 * bitw_put's bit fields); room is made before (raw_room).
 */
typedef struct pcz_raww {
	uint8_t *o;
	uint64_t acc;
	unsigned n;
} pcz_raww;

static inline void store_le64(uint8_t *o, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(o, &v, 8);
}

/* The k <= 63 bits of v, which has no bit from k up. */
static inline void raw_put(pcz_raww *w, uint64_t v, unsigned k)
{
	w->acc |= v << w->n;
	if (w->n + k >= 64) {
		/* n > 0 here, as k < 64. */
		store_le64(w->o, w->acc);
		w->o += 8;
		w->acc = v >> (64 - w->n);
		w->n = w->n + k - 64;
	} else {
		w->n += k;
	}
}

/* The mantissa of z, of symbol b: the b - 1 bits below its leading one (none for 0 and 1). */
static inline void raw_mantissa(pcz_raww *w, uint64_t z, unsigned b)
{
	unsigned k = b - (b != 0);

	raw_put(w, z & ((1ull << k) - 1), k);
}

/* Pads with 0 bits to a byte boundary and writes out what waits. */
static void raw_flush(pcz_raww *w)
{
	for (; w->n > 0; w->n = w->n > 8 ? w->n - 8 : 0) {
		*w->o++ = (uint8_t)w->acc;
		w->acc >>= 8;
	}
	w->acc = 0;
}

/*
 * The forward pass: every number's place in hist in order (its key times
 * PCZ_HSTRIDE plus its symbol), counted there, the raw bits written.
 */
typedef struct pcz_fwd {
	uint16_t *key;
	size_t n;
	uint32_t *hist;
	pcz_raww raw;
} pcz_fwd;

static inline void put_number(pcz_fwd *f, unsigned key, uint64_t z)
{
	unsigned b = pcz_bit_length(z);

	f->key[f->n++] = (uint16_t)(key * PCZ_HSTRIDE + b);
	f->hist[key * PCZ_HSTRIDE + b]++;
	raw_mantissa(&f->raw, z, b);
}

static inline void put_name(pcz_fwd *f, const char *name, size_t len)
{
	put_number(f, PCZ_F_LENGTH, len);
	for (size_t i = 0; i < len; i++)
		raw_put(&f->raw, (uint8_t)name[i], 8);
}

/* Room for n more bytes of raw bits at w->o: 0, or -1 when out of memory. */
static int raw_room(pcz_mchunk *c, pcz_raww *w, size_t n)
{
	size_t used = (size_t)(w->o - c->raw.data);

	if (used + n + 8 <= c->raw.cap)
		return 0;
	c->raw.len = used;
	if (pcz_buf_grow(&c->raw, n + 8) != 0)
		return -1;
	w->o = c->raw.data + used;
	return 0;
}

/*
 * pcz_fine_class times PCZ_HSTRIDE: where the counts of a fine class start
 * in its column's (a table of this file, its address a constant in the hot loop).
 */
#define F(x) (x) * PCZ_HSTRIDE
static const uint16_t fine_at[PCZ_SYMBOLS] = {
	F(0), F(1), F(2), F(2), F(3), F(3), F(3), F(4), F(4), F(4), F(4), F(5), F(5), F(5),
	F(5), F(5), F(5), F(6), F(6), F(6), F(6), F(6), F(6), F(6), F(6), F(7), F(7), F(7),
	F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7),
	F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7),
	F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7), F(7),
};
#undef F

/*
 * Numbers of the columns [col, end) of a row, their residuals x - p, each
 * one's symbol, key, count and mantissa; key and hist move on to the next
 * column's after each column when step.  The state is held in locals: the
 * byte stores would otherwise make the compiler load it again after each one.
 */
static inline __attribute__((always_inline)) void put_columns(pcz_fwd *fp, const uint64_t *x,
							      const uint64_t *p, size_t col,
							      size_t end, unsigned *prev_p,
							      unsigned *key_p, int step)
{
	uint64_t acc = fp->raw.acc;
	unsigned prev = *prev_p, n_bits = fp->raw.n, at = *key_p * PCZ_HSTRIDE;
	uint32_t *hist = fp->hist;
	uint8_t *o = fp->raw.o;
	uint16_t *kp = fp->key + fp->n;

	for (; col < end; col++) {
		uint64_t v = pcz_zigzag(x[col] - p[col]);
		unsigned place = at + fine_at[prev], b = (unsigned)v;
		if (v > 1) {
			/* k: the bits below the leading one; 63 ^ clz is the bsr instruction. */
			unsigned k = 63u ^ (unsigned)__builtin_clzll(v);
			b = k + 1;
			/* The mantissa: v without its leading one. */
			v ^= 1ull << k;
			acc |= v << n_bits;
			n_bits += k;
			if (n_bits >= 64) {
				/* Before these k bits there were 64 + k - n_bits > 0 of them. */
				store_le64(o, acc);
				o += 8;
				n_bits -= 64;
				acc = v >> (k - n_bits);
			}
		}
		place += b; /* the number's place in hist */
		*kp++ = (uint16_t)place;
		hist[place]++;
		prev = b;
		if (step)
			at += PCZ_FINE_CLASSES * PCZ_HSTRIDE;
	}
	fp->n = (size_t)(kp - fp->key);
	fp->raw.acc = acc;
	fp->raw.n = n_bits;
	fp->raw.o = o;
	*prev_p = prev;
	*key_p = at / PCZ_HSTRIDE;
}

/*
 * One row: start against the history's end, the duration, then every column
 * under its predictor.  p[0] and p[1] are set so that x - p is the start's
 * and the duration's residual too.
 */
static inline void put_row(pcz_mchunk *c, pcz_fwd *fp, size_t i, const uint8_t *pred)
{
	size_t W = c->width, C = W < PCZ_MODEL_COLUMNS ? W : PCZ_MODEL_COLUMNS;
	const struct pcz_mlink *l = chunk_link(c, i);
	const uint64_t *x = chunk_row(c, i), *h = row_or_null(c, l->hist);
	const uint64_t *nb = row_or_null(c, l->ref), *mb = row_or_null(c, l->match);
	uint64_t *p = c->pred_row;
	unsigned prev = 0, key = PCZ_N_FIELDS;
	const double *r = c->ratio + 3 * i;
	pcz_sources src = { x[1] - x[0], h, nb, mb, r[0], r[1], r[2] };

	pcz_predict_row(&c->by_pred, &src, p, NULL);
	p[0] = h ? h[1] : 0;
	p[1] = x[0] + pcz_v2_predict_duration(pred[1], h, nb);
	put_columns(fp, x, p, 0, C, &prev, &key, 1);
	if (W > C) {
		/* Columns from PCZ_MODEL_COLUMNS on share the last one's. */
		key -= PCZ_FINE_CLASSES;
		put_columns(fp, x, p, C, W, &prev, &key, 0);
	}
}

/*
 * Normalises the counts h[i] of t's k symbols sym[i] to 2^L: each at least
 * 1, rounded, the rounding error taken from the largest.  scale_max is
 * floor(2^(PCZ_TABLE_LOG_MAX + 32) / n) for n counts in all: shifted down it
 * is floor(2^(L + 32) / n) exactly, one division a table instead of one a
 * log tried.  *wlog: the sum of h[i] log2(freq[i]) (in 1/65536 bits), taken
 * in the same pass.  0, or -1 when they do not fit (2^L too small for that).
 */
static int normalize(pcz_table *t, const uint32_t *h, uint64_t scale_max, unsigned L,
		     uint64_t *wlog)
{
	uint64_t scale = scale_max >> (PCZ_TABLE_LOG_MAX - L), sum = 0;
	int64_t left = (int64_t)1 << L;
	unsigned big = 0;

	for (unsigned i = 0; i < t->k; i++) {
		uint64_t f = ((uint64_t)h[i] * scale + (1ull << 31)) >> 32;
		t->freq[i] = (uint16_t)(f ? f : 1);
		left -= t->freq[i];
		sum += (uint64_t)h[i] * log2_freq[t->freq[i]];
		if (t->freq[i] > t->freq[big])
			big = i;
	}
	if ((int64_t)t->freq[big] + left >= 1) {
		sum -= (uint64_t)h[big] * log2_freq[t->freq[big]];
		t->freq[big] = (uint16_t)(t->freq[big] + left);
		*wlog = sum + (uint64_t)h[big] * log2_freq[t->freq[big]];
		return 0;
	}
	/* Too many rounded up: take one from each symbol above 1 until it fits. */
	while (left < 0) {
		int moved = 0;
		for (unsigned i = 0; i < t->k && left < 0; i++)
			if (t->freq[i] > 1) {
				t->freq[i]--;
				left++;
				moved = 1;
			}
		if (!moved)
			return -1;
	}
	sum = 0;
	for (unsigned i = 0; i < t->k; i++)
		sum += (uint64_t)h[i] * log2_freq[t->freq[i]];
	*wlog = sum;
	return 0;
}

/* Bits of the table t as written (write_table), gaps those of its symbols. */
static uint64_t table_bits(const pcz_table *t, uint64_t gaps)
{
	uint64_t rice;

	if (t->k == 0)
		return 1;
	if (t->k == 1)
		return 3 + gamma_bits(t->sym[0] + 1u);
	best_rice(t, &rice);
	return gamma_bits(t->k + 1) + 8 + gaps + rice;
}

/*
 * The table for the counts cnt[0..n_list) of the symbols list[0..n_list)
 * (ascending; zero counts skipped): the log with the fewest bits, table
 * included.  Returns the bits, in 1/65536.
 */
static uint64_t make_table(pcz_table *t, const uint8_t *list, const uint32_t *cnt, unsigned n_list)
{
	uint64_t n = 0, gaps = 0, best = UINT64_MAX, tbits = 0, scale_max;
	uint32_t c[PCZ_SYMBOLS];
	unsigned best_L = 0, lo, hi;
	int tL = 0;
	pcz_table try;

	t->k = 0;
	t->L = 0;
	for (unsigned i = 0; i < n_list; i++)
		if (cnt[i]) {
			unsigned s = list[i];
			gaps += gamma_bits(t->k ? s - t->sym[t->k - 1] : s + 1u);
			c[t->k] = cnt[i];
			t->sym[t->k++] = (uint8_t)s;
			n += cnt[i];
		}
	if (t->k < 2) {
		t->freq[0] = 1;
		return table_bits(t, gaps) << 16;
	}
	lo = ceil_log2(t->k) ? ceil_log2(t->k) : 1;
	hi = ceil_log2(n) + 1;
	hi = hi > PCZ_TABLE_LOG_MAX ? PCZ_TABLE_LOG_MAX : hi < lo ? lo : hi;
	try = *t;
	scale_max = ((uint64_t)1 << (PCZ_TABLE_LOG_MAX + 32)) / n;
	/*
	 * The bits as a function of the log fall, then rise: coarser frequencies
	 * take fewer table bits and more data bits.  The search starts 3 below
	 * the finest log, where the tuning files' minima mostly lie, and climbs
	 * whichever way falls.  The table's bits are counted once; each step
	 * down halves the frequencies, a bit less in each Rice code (the table
	 * written takes its best parameter again).
	 */
	for (int L = (int)hi - 3 < (int)lo ? (int)lo : (int)hi - 3, dir = 1, tried = 0;;) {
		uint64_t bits = 0, wlog;
		int better = 0;
		if (L >= (int)lo && L <= (int)hi &&
		    normalize(&try, c, scale_max, (unsigned)L, &wlog) == 0) {
			int64_t tb;
			try.L = (unsigned)L;
			/* The sum of c[i] (L - log2 freq[i]) over the symbols. */
			bits = n * ((uint64_t)L << 16) - wlog;
			if (tried++ == 0) {
				tbits = table_bits(&try, gaps);
				tL = L;
			}
			tb = (int64_t)tbits + (int64_t)(L - tL) * (int64_t)(try.k - 1);
			bits += (uint64_t)(tb > 8 + 2 * (int64_t)(try.k - 1) ? tb
									     : 8 + 2 * (int64_t)(try.k - 1))
				<< 16;
			better = bits < best;
		}
		if (better) {
			best = bits;
			best_L = (unsigned)L;
			memcpy(t->freq, try.freq, try.k * sizeof *t->freq);
			L += dir;
		} else if (dir == 1) {
			dir = -1; /* up does not help: down from the best */
			L = (int)best_L - 1;
		} else {
			break;
		}
	}
	t->L = best_L;
	return best;
}

/*
 * A quick estimate of the bits of a table of the counts cnt[0..n_list) of
 * the symbols list[]: the order-0 entropy plus its description, to compare
 * modes.
 */
static uint64_t estimate(const uint32_t *cnt, const uint8_t *list, unsigned n_list)
{
	uint64_t n = 0, sum = 0, gaps = 0;
	unsigned k = 0, last = 0;

	for (unsigned i = 0; i < n_list; i++) {
		uint32_t c = cnt[i];
		if (c == 0)
			continue;
		gaps += gamma_bits(k ? list[i] - last : list[i] + 1u);
		last = list[i];
		k++;
		n += c;
		sum += clog2_fx(c);
	}
	if (k < 2)
		return (uint64_t)(k ? 3 + gamma_bits(last + 1u) : 1) << 16;
	/* Frequencies near 2 n / k at L = ceil(log2 n) + 1: about log2(2 n / k) + 2 bits each. */
	return clog2_fx((uint32_t)n) - sum +
	       (((uint64_t)gamma_bits(k + 1) + 8 + gaps) << 16) +
	       (uint64_t)(k - 1) * (log2_fx((uint32_t)(2 * n) / k + 1) + (2u << 16));
}

/* A column's counts by fine class, on the symbols it uses. */
typedef struct pcz_colcounts {
	unsigned n_list;
	uint8_t list[PCZ_SYMBOLS];
	uint16_t fine_used; /* bit f: fine class f has numbers */
	/* [class][position in list]: mode 2's classes are the fine ones, then mode 1's 3 and
	 * mode 0's 1, each the sum of its fine classes. */
	uint32_t cnt[PCZ_FINE_CLASSES + 3 + 1][PCZ_HSTRIDE]; /* a stride: summed four at a time */
} pcz_colcounts;

/* The counts of mode's classes, from the first. */
static inline uint32_t (*mode_counts(pcz_colcounts *cc, unsigned mode))[PCZ_HSTRIDE]
{
	return cc->cnt + (mode == 2 ? 0 : mode == 1 ? PCZ_FINE_CLASSES : PCZ_FINE_CLASSES + 3);
}

/*
 * Four counts at a time: GCC's and Clang's generic vectors (SSE2 on x86-64,
 * plain code where there is none).  A column's 8 x 72 counts are mostly 0;
 * scanning them one by one took a third of write_tables on small files.
 */
typedef uint32_t pcz_u32x4 __attribute__((vector_size(16)));

static inline pcz_u32x4 load_u32x4(const uint32_t *p)
{
	pcz_u32x4 v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline int any_u32x4(pcz_u32x4 v)
{
	return (v[0] | v[1] | v[2] | v[3]) != 0;
}

/* Mode 1's and mode 0's classes as sums of the used fine ones, n4 fours of counts each. */
static void sum_classes(pcz_colcounts *cc, unsigned n4)
{
	for (unsigned g = 0; g < n4; g++) {
		pcz_u32x4 s1[3] = { { 0 } }, s0;
		for (unsigned m = cc->fine_used; m; m &= m - 1) {
			unsigned f = (unsigned)__builtin_ctz(m);
			s1[pcz_mode_class[1][f]] += load_u32x4(cc->cnt[f] + 4 * g);
		}
		s0 = s1[0] + s1[1] + s1[2];
		for (unsigned k = 0; k < 3; k++)
			memcpy(cc->cnt[PCZ_FINE_CLASSES + k] + 4 * g, &s1[k], sizeof s1[k]);
		memcpy(cc->cnt[PCZ_FINE_CLASSES + 3] + 4 * g, &s0, sizeof s0);
	}
}

/*
 * The counts of a column (fine: PCZ_FINE_CLASSES x PCZ_HSTRIDE) on the symbols
 * it uses.  They are left in fine: place_key overwrites each of them (every
 * counted symbol is in its class's table) and encode_ans zeroes them.
 */
static void compact_counts(pcz_colcounts *cc, uint32_t *fine)
{
	pcz_u32x4 any[PCZ_HSTRIDE / 4], row[PCZ_FINE_CLASSES] = { { 0 } };
	unsigned n4;

	cc->n_list = 0;
	cc->fine_used = 0;
	/* Symbols outside, classes inside: any and row stay in registers. */
	for (unsigned g = 0; g < PCZ_HSTRIDE / 4; g++) {
		pcz_u32x4 a = { 0 };
#pragma GCC unroll 8
		for (unsigned f = 0; f < PCZ_FINE_CLASSES; f++) {
			pcz_u32x4 v = load_u32x4(fine + f * PCZ_HSTRIDE + 4 * g);
			a |= v;
			row[f] |= v;
		}
		any[g] = a;
	}
	for (unsigned f = 0; f < PCZ_FINE_CLASSES; f++)
		cc->fine_used |= (uint16_t)(any_u32x4(row[f]) << f);
	/* Counts from PCZ_SYMBOLS on are never set: the stride's padding. */
	for (unsigned g = 0; g < PCZ_HSTRIDE / 4; g++)
		if (any_u32x4(any[g]))
			for (unsigned l = 0; l < 4; l++)
				if (any[g][l])
					cc->list[cc->n_list++] = (uint8_t)(4 * g + l);
	/* The used classes' counts on the list, padded with zeros to whole fours; the
	 * others are never read (class_used). */
	n4 = (cc->n_list + 3) / 4;
	for (unsigned m = cc->fine_used; m; m &= m - 1) {
		unsigned f = (unsigned)__builtin_ctz(m), j;
		for (j = 0; j < cc->n_list; j++)
			cc->cnt[f][j] = fine[f * PCZ_HSTRIDE + cc->list[j]];
		for (; j < 4 * n4; j++)
			cc->cnt[f][j] = 0;
	}
	sum_classes(cc, n4);
}

/* A field's counts (one class) on the symbols it uses, left in h as a column's are. */
static void field_counts(pcz_colcounts *cc, const uint32_t *h)
{
	cc->n_list = 0;
	for (unsigned g = 0; g < PCZ_HSTRIDE / 4; g++)
		if (any_u32x4(load_u32x4(h + 4 * g)))
			for (unsigned s = 4 * g; s < 4 * g + 4; s++)
				if (h[s]) {
					cc->cnt[PCZ_FINE_CLASSES + 3][cc->n_list] = h[s];
					cc->list[cc->n_list++] = (uint8_t)s;
				}
}

/* The fine classes of each class of each mode, as bits (pcz_mode_class the other way round). */
static const uint8_t class_fine[PCZ_MODES][PCZ_FINE_CLASSES] = {
	{ 0xFF },
	{ 0x01, 0x0E, 0xF0 },
	{ 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80 },
};

/* Whether class k of mode has numbers. */
static inline int class_used(const pcz_colcounts *cc, unsigned mode, unsigned k)
{
	return (cc->fine_used & class_fine[mode][k]) != 0;
}

/* The mode of a column: the fewest estimated bits. */

static unsigned choose_mode(pcz_colcounts *cc)
{
	unsigned best_mode = 0;
	uint64_t best = UINT64_MAX;

	/* One symbol, or every number in one class: nothing for contexts to split. */
	if (cc->n_list < 2 || (cc->fine_used & (cc->fine_used - 1)) == 0)
		return 0;

	for (unsigned mode = 0; mode < PCZ_MODES; mode++) {
		uint32_t(*sum)[PCZ_HSTRIDE] = mode_counts(cc, mode);
		uint64_t bits = 2 << 16;
		for (unsigned k = 0; k < pcz_mode_classes[mode]; k++)
			/* An empty class: an empty table, one bit (estimate's answer, without its loop). */
			bits += class_used(cc, mode, k) ? estimate(sum[k], cc->list, cc->n_list)
							: 1u << 16;
		if (bits < best) {
			best = bits;
			best_mode = mode;
		}
	}
	return best_mode;
}

/* The encoder's symbols of table t (PCZ_SYMBOLS entries, those of t's symbols set). */
static void encode_symbols(const pcz_table *t, pcz_esym *es)
{
	uint32_t M = 1u << t->L;

	for (unsigned i = 0, c = 0; i < t->k; c += t->freq[i], i++) {
		uint32_t f = t->freq[i];
		pcz_esym *e = &es[t->sym[i]];
		e->x_max = f << (32 - t->L);
		e->cmpl = (uint16_t)(M - f);
#ifdef __SIZEOF_INT128__
		/* q = floor(x / f) exactly for x < 2^32, f < 2^12 (error below 2^-32). */
		e->rcp = f >= 2 ? UINT64_MAX / f + 1 : UINT64_MAX;
		/* For f = 1 the product gives q = x - 1: the bias makes up for it. */
		e->bias = (uint16_t)(f >= 2 ? c : c + M - 1);
#else
		e->rcp = f;
		e->bias = (uint16_t)c;
#endif
	}
}

/*
 * Where the numbers of key under table t find their esym entries (where:
 * that of symbol 0, SIZE_MAX for a one-symbol table): in the places of
 * their counts, which are listed in taken.
 */
static inline void place_key(pcz_mchunk *c, size_t key, const pcz_table *t, size_t where)
{
	uint32_t *h = c->hist + key * PCZ_HSTRIDE;

	for (unsigned i = 0; i < t->k; i++) {
		unsigned s = t->sym[i];
		h[s] = where == SIZE_MAX ? UINT32_MAX : (uint32_t)(where + s);
		c->taken[c->n_taken++] = (uint16_t)(key * PCZ_HSTRIDE + s);
	}
}

/*
 * The tables: each field's, each column's mode and class tables, written to
 * c->tables (predictors first), with esym set and each counted place of hist
 * turned into its entry there (place_key) for the reverse pass.
 */
static __attribute__((noinline)) int write_tables(pcz_mchunk *c, const uint8_t *pred, pcz_colcounts *cc)
{
	size_t W = c->width, C = W < PCZ_MODEL_COLUMNS ? W : PCZ_MODEL_COLUMNS;
	size_t n_keys = PCZ_N_FIELDS + C * PCZ_FINE_CLASSES, n_tabs = 0;
	pcz_bitw w;
	pcz_table t;

	/* Each table's symbols lo..hi at esym + at, symbol s at esym + (at - lo) + s, from a
	 * start of PCZ_SYMBOLS so that at - lo >= 0. */
	size_t at = PCZ_SYMBOLS;

	c->n_taken = 0;
	/* A table: gammas of at most 13 bits for k and 65 symbols, 64 Rice codes of at most 14
	 * bits (that of the best parameter is at most that of 11), 8 bits: under 232 bytes. */
	if (pcz_buf_grow(&c->tables, W + n_keys * 232 + 64) != 0)
		return -MPXKIT_ENOMEM;
	w = (pcz_bitw){ c->tables.data, 0, 0 };
	for (size_t col = 1; col < W; col++)
		bitw_put(&w, pred[col], 3);
	for (size_t i = 0; i < PCZ_N_FIELDS + C; i++) {
		unsigned mode = 0;
		if (i < PCZ_N_FIELDS) {
			field_counts(cc, c->hist + i * PCZ_HSTRIDE);
		} else {
			compact_counts(cc, c->hist + (PCZ_N_FIELDS + (i - PCZ_N_FIELDS) *
								       PCZ_FINE_CLASSES) *
							      PCZ_HSTRIDE);
			mode = choose_mode(cc);
			bitw_put(&w, mode, 2);
		}
		for (unsigned k = 0; k < pcz_mode_classes[mode]; k++, n_tabs++) {
			size_t where = SIZE_MAX;
			if (i < PCZ_N_FIELDS || class_used(cc, mode, k))
				make_table(&t, cc->list, mode_counts(cc, mode)[k], cc->n_list);
			else
				t.k = t.L = 0; /* make_table's answer, without its loop */
			write_table(&w, &t);
			if (t.k > 1) {
				unsigned lo = t.sym[0], hi = t.sym[t.k - 1];
				if (grow_array((void **)&c->esym, &c->cap_tabs, at + hi - lo + 1,
					       sizeof *c->esym) != 0)
					return -MPXKIT_ENOMEM;
				encode_symbols(&t, c->esym + at - lo);
				where = at - lo;
				at += hi - lo + 1;
			}
			if (i < PCZ_N_FIELDS) {
				place_key(c, i, &t, where);
				continue;
			}
			for (unsigned m = cc->fine_used & class_fine[mode][k]; m; m &= m - 1)
				place_key(c, PCZ_N_FIELDS + (i - PCZ_N_FIELDS) * PCZ_FINE_CLASSES +
						     (unsigned)__builtin_ctz(m),
					  &t, where);
		}
	}
	bitw_flush(&w);
	c->tables.len = (size_t)(w.o - c->tables.data);
	return 0;
}

/*
 * The reverse pass: every number's symbol by rANS, last first, into c->ans,
 * the two states taking turns (x the one whose turn it is).
 */
static __attribute__((noinline)) int encode_ans(pcz_mchunk *c, const pcz_fwd *f)
{
	/* Locals: the bytes stored below could alias the chunk's fields, which would be read again
	 * after each store. */
	const uint16_t *key = f->key;
	const uint32_t *place = c->hist;
	const pcz_esym *esym = c->esym;
	uint8_t *end, *o;
	uint32_t x = PCZ_ANS_LOW, y = PCZ_ANS_LOW, t;

	if (pcz_buf_grow(&c->ans, 2 * f->n + 8) != 0)
		return -MPXKIT_ENOMEM;
	end = o = c->ans.data + 2 * f->n + 8;
	for (size_t i = f->n; i-- > 0;) {
		uint32_t at = place[key[i]];
		const pcz_esym *e;
		uint64_t q;
		if (at == UINT32_MAX) /* one symbol: nothing coded */
			continue;
		e = esym + at;
		if (x >= e->x_max) {
			o -= 2;
			o[0] = (uint8_t)x;
			o[1] = (uint8_t)(x >> 8);
			x >>= 16;
		}
#ifdef __SIZEOF_INT128__
		q = (uint64_t)(((unsigned __int128)x * e->rcp) >> 64);
#else
		q = x / e->rcp; /* rcp holds the frequency here */
#endif
		x = x + e->bias + (uint32_t)q * e->cmpl;
		t = x;
		x = y;
		y = t;
	}
	/* The first symbol took x0's turn: y is x0 now (x1 when no symbol was coded, both 2^16). */
	o -= 8;
	for (int k = 0; k < 4; k++) {
		o[k] = (uint8_t)(y >> (8 * k));
		o[4 + k] = (uint8_t)(x >> (8 * k));
	}
	c->ans.len = (size_t)(end - o);
	memmove(c->ans.data, o, c->ans.len);
	/* The counts 0 again for the next section. */
	for (size_t i = 0; i < c->n_taken; i++)
		c->hist[c->taken[i]] = 0;
	return 0;
}

/*
 * The arrays of the chunk's width, allocated by its first section and kept
 * with the chunk in the pool (a malloc and free of each per section were 3 %
 * of coding a small file): 0, or -1 when out of memory (all dropped, for
 * the next section to try again).
 */
static int width_arrays(pcz_mchunk *c, size_t n_keys)
{
	size_t W = c->width;

	if (c->pred_row && c->zero_row && c->by_pred.col && c->pred && c->cost && c->counts &&
	    c->taken)
		return 0;
	free_width_arrays(c);
	c->pred_row = malloc(W * sizeof *c->pred_row);
	c->zero_row = calloc(W, sizeof *c->zero_row);
	c->by_pred.col = malloc(W * sizeof *c->by_pred.col);
	c->pred = malloc(W);
	c->cost = malloc(W * PCZ_V2_N_PRED * sizeof *c->cost);
	c->counts = malloc(sizeof *c->counts);
	c->taken = malloc(n_keys * PCZ_SYMBOLS * sizeof *c->taken);
	if (c->pred_row && c->zero_row && c->by_pred.col && c->pred && c->cost && c->counts &&
	    c->taken)
		return 0;
	free_width_arrays(c);
	return -1;
}

int pcz_mchunk_payload(pcz_mchunk *c, const pcz_dict *dict, int placement, pcz_buf *payload)
{
	size_t W = c->width, C = W < PCZ_MODEL_COLUMNS ? W : PCZ_MODEL_COLUMNS;
	size_t n_keys = PCZ_N_FIELDS + C * PCZ_FINE_CLASSES, n_slots = 0;
	size_t next_new = c->dict_base, prev_units = 0, max_num;
	uint8_t *pred;
	pcz_fwd f;
	int rc = -MPXKIT_ENOMEM;

	max_num = c->n_rows * W + 6 * c->n_unit + 3 * c->n_reg;
	if (width_arrays(c, n_keys) != 0)
		goto out;
	pred = c->pred;
	if (max_num > c->cap_num) {
		size_t cap = c->cap_num;
		if (grow_array((void **)&c->key, &cap, max_num, sizeof *c->key) != 0)
			goto out;
		c->cap_num = cap;
	}
	if (n_keys > c->cap_hist) {
		/* The counts stay 0 between sections: encode_ans zeroes each section's. */
		free(c->hist);
		c->hist = calloc(n_keys, PCZ_HSTRIDE * sizeof *c->hist);
		c->cap_hist = c->hist ? n_keys : 0;
	}
	c->raw.len = 0;
	if (c->hist == NULL || pcz_buf_grow(&c->raw, 4096) != 0)
		goto out;
	if (match_rows(c) != 0)
		goto out;
	choose(c, pred, c->cost, c->zero_row, c->by_pred.col);
	pcz_by_pred_set(&c->by_pred, pred, W);
	c->needs = pcz_needs(pred, W);
	set_ratios(c, c->needs);
	f = (pcz_fwd){ c->key, 0, c->hist, { c->raw.data, 0, 0 } };
	c->gen++;
	for (size_t g = 0; g < c->n_reg; g++) {
		const pcz_mregion *r = &c->reg[g];
		size_t k_prev = SIZE_MAX;
		if (raw_room(c, &f.raw, 32 + r->name_len) != 0)
			goto out;
		put_number(&f, PCZ_F_NAME_MODE, r->name_mode);
		if (r->name_mode == PCZ_NAME_NEW)
			put_name(&f, (const char *)c->names.data + r->name_off, r->name_len);
		put_number(&f, PCZ_F_UNITS, pcz_zigzag(r->n_units - prev_units));
		prev_units = r->n_units;
		for (size_t u = 0, row = r->first_row; u < r->n_units; u++) {
			const pcz_munit *m = chunk_unit(c, row);
			size_t slot;
			int fresh;
			/* At most 63 raw bits a number, and the name's bytes. */
			if (raw_room(c, &f.raw, 8 * (6 + m->n_steps * W) + dict->len[m->k]) != 0)
				goto out;
			slot = chunk_slot(c, m->k, &n_slots, &fresh);
			if (slot == SIZE_MAX)
				goto out;
			if (fresh)
				c->place[2 * slot] = c->place[2 * slot + 1] = 0;
			put_number(&f, PCZ_F_UNIT, pcz_zigzag(m->k - (k_prev + 1)));
			k_prev = m->k;
			if (m->k == next_new) {
				size_t k = m->k;
				/* NEXT: the previous new name with its number plus one. */
				if (k > 0 && pcz_name_is_next(dict->names[k - 1], dict->len[k - 1],
							      dict->names[k], dict->len[k]))
					put_number(&f, PCZ_F_LENGTH, 0);
				else
					put_name(&f, dict->names[k], dict->len[k]);
				next_new++;
			}
			put_number(&f, PCZ_F_STEPS, m->n_steps - 1);
			if (placement) {
				int64_t cpu1 = (int64_t)m->cpu + 1, numa1 = (int64_t)m->numa + 1;
				put_number(&f, PCZ_F_CPU,
					   pcz_zigzag((uint64_t)(cpu1 - c->place[2 * slot])));
				put_number(&f, PCZ_F_NUMA,
					   pcz_zigzag((uint64_t)(numa1 - c->place[2 * slot + 1])));
				c->place[2 * slot] = cpu1;
				c->place[2 * slot + 1] = numa1;
			}
			for (size_t s = 0; s < m->n_steps; s++)
				put_row(c, &f, row++, pred);
		}
	}
	raw_flush(&f.raw);
	c->raw.len = (size_t)(f.raw.o - c->raw.data);
	rc = write_tables(c, pred, c->counts);
	if (rc == 0)
		rc = encode_ans(c, &f);
	if (rc < 0)
		goto out;
	payload->len = 0;
	pcz_buf_varint(payload, c->n_reg);
	pcz_buf_put(payload, c->tables.data, c->tables.len);
	pcz_buf_varint(payload, c->ans.len);
	pcz_buf_put(payload, c->ans.data, c->ans.len);
	pcz_buf_put(payload, c->raw.data, c->raw.len);
	rc = payload->oom ? -MPXKIT_ENOMEM : 0;
out:
	if (rc < 0 && c->hist) /* a section left half counted */
		memset(c->hist, 0, c->cap_hist * PCZ_HSTRIDE * sizeof *c->hist);
	return rc;
}

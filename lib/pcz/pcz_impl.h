/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals shared by the .pcz writer, reader and tests: byte buffers, varints, grouping. */
#ifndef MPXKIT_PCZ_IMPL_H
#define MPXKIT_PCZ_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include "mpxkit/pcz.h"

#define PCZ_MAGIC 0x5A43508Au
#define PCZ_END_MARK 0x444E458Au
#define PCZ_VERSION 1
#define PCZ_HEADER_SIZE 12
#define PCZ_FRAME_SIZE 16 /* section frame before the payload */
#define PCZ_END_PAYLOAD 24
#define PCZ_MAX_EVENTS 65536
#define PCZ_MAX_UNITS (1u << 20)
#define PCZ_MAX_STEPS (1u << 20)
#define PCZ_MEDOID_CANDIDATES 32
#define PCZ_EVENTS_PLACEMENT 1u
#define PCZ_EVENTS_INTERVALS 2u /* version 2 only: events in (NAME, NAME.lo, NAME.hi) triples */
/* Levels from which the writer runs codec trials for its choices (fast levels estimate). */
#define PCZ_THOROUGH_ZSTD 10
#define PCZ_THOROUGH_ZLIB 9

enum pcz_section { PCZ_META = 1, PCZ_TOPOLOGY = 2, PCZ_EVENTS = 3, PCZ_REGIONS = 4, PCZ_END = 255 };
enum pcz_diff_kind { PCZ_SAME = 0, PCZ_DENSE = 1, PCZ_MASK = 2, PCZ_TEMPORAL = 3 };

/* A growable vector of zigzagged values. */
struct pcz_vec {
	uint64_t *v, *alt, *dur; /* per predictor: HISTORY, NONE, DURATION; one block at v */
	size_t n, cap;
};

enum pcz_layout { PCZ_LAYOUT_VARINT = 0, PCZ_LAYOUT_PLANES = 1 };
enum pcz_predictor { PCZ_PRED_HISTORY = 0, PCZ_PRED_NONE = 1, PCZ_PRED_DURATION = 2 };

/* A piece's values as coded under predictor pred (PCZ_PRED_*). */
static inline const uint64_t *pcz_vec_of(const struct pcz_vec *x, unsigned pred)
{
	return pred == PCZ_PRED_DURATION ? x->dur : pred == PCZ_PRED_NONE ? x->alt : x->v;
}

/*
 * What element i (step i / E, event i % E) of a block coded on its own is
 * predicted by (doc/pcz-format.md, "Value coding"): v holds the block's
 * elements before i, h the step-0 history, times the block's (start, end) pairs.
 */
static inline uint64_t pcz_own_prediction(unsigned pred, const uint64_t *v, const uint64_t *h,
					  const uint64_t *times, size_t i, size_t E)
{
	if (pred == PCZ_PRED_DURATION)
		return times[2 * (i / E) + 1] - times[2 * (i / E)];
	if (i >= E)
		return v[i - E];
	return pred == PCZ_PRED_NONE ? 0 : h[i];
}

/* A growable byte buffer; a failed growth sets oom and later appends do nothing. */
typedef struct pcz_buf {
	uint8_t *data;
	size_t len, cap;
	int oom;
} pcz_buf;

void pcz_buf_free(pcz_buf *b);
/* Room for n more bytes at data + len: 0, or -1 with oom set. */
int pcz_buf_grow(pcz_buf *b, size_t n);
/* Appends n varints, reserving once (the hot loop of a section's values). */
void pcz_buf_varints(pcz_buf *b, const uint64_t *v, size_t n);
void pcz_buf_put(pcz_buf *b, const void *p, size_t n);
void pcz_buf_u8(pcz_buf *b, unsigned v);
void pcz_buf_u16(pcz_buf *b, unsigned v);
void pcz_buf_u32(pcz_buf *b, uint32_t v);
void pcz_buf_u64(pcz_buf *b, uint64_t v);
void pcz_buf_varint(pcz_buf *b, uint64_t v);
void pcz_buf_svarint(pcz_buf *b, uint64_t diff); /* diff taken modulo 2^64 */
void pcz_buf_string(pcz_buf *b, const char *s);

static inline uint64_t pcz_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)(-(int64_t)(d >> 63));
}

static inline uint64_t pcz_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)(-(int64_t)(z & 1));
}

/* Bytes varint(v) takes. */
static inline unsigned pcz_varint_len(uint64_t v)
{
	return (unsigned)(63 - __builtin_clzll(v | 1)) / 7 + 1;
}

/* A read cursor over decoded bytes; base is the file offset the diags report. */
typedef struct pcz_cur {
	const uint8_t *p, *end, *start;
	uint64_t base;
} pcz_cur;

uint32_t pcz_le32(const uint8_t *p);
uint64_t pcz_le64(const uint8_t *p);
/* 0 or -1 (truncated, overlong, non-canonical or above 2^64-1). */
int pcz_get_varint(pcz_cur *c, uint64_t *v);
uint64_t pcz_cur_offset(const pcz_cur *c);

/* CRC32 (zlib) of a buffer of any size. */
uint32_t pcz_crc32(const void *p, size_t n);
/* The CRC32 of the bytes before, crc, extended by p[0..n): zlib's crc32(crc, p, n). */
uint32_t pcz_crc32_update(uint32_t crc, const void *p, size_t n);

/*
 * Reusable codec contexts; zero-initialise, release with pcz_compressor_free,
 * which hands them to a small process-wide pool for the next writer.
 */
typedef struct pcz_compressor {
	struct ZSTD_CCtx_s *zstd;
	z_stream *zlib;
	int zlib_level;
} pcz_compressor;

void pcz_compressor_free(pcz_compressor *c);
/* Runs the codec over src into dst (reset first).  0 or a negative code. */
int pcz_compress_with(pcz_compressor *c, mpxkit_pcz_codec codec, int level, const uint8_t *src,
		      size_t n, pcz_buf *dst);
typedef struct pcz_decompressor {
	struct ZSTD_DCtx_s *zstd;
	z_stream zlib;
	int zlib_ready;
} pcz_decompressor;

void pcz_decompressor_free(pcz_decompressor *d);
/* Decodes exactly raw bytes into dst from exactly n stored bytes.  0 or -1. */
int pcz_decompress_with(pcz_decompressor *d, mpxkit_pcz_codec codec, const uint8_t *src, size_t n,
			uint8_t *dst, size_t raw);

/* 1 for the bytes a name may not hold: NUL , " CR LF. */
extern const uint8_t pcz_name_bad[256];
/* Name validity: non-empty, none of NUL , " CR LF. */
int pcz_name_ok(const char *s, size_t n);

/*
 * The INTERVALS rule (doc/pcz-format.md, "Intervals"), interval.c.
 * names_ok: 1 when the events are (NAME, NAME.lo, NAME.hi) triples; else 0
 * and why (len bytes) says what breaks the rule, one message for the writer
 * and the reader.  steps_bad: the first value index of a step-major block
 * whose triple is neither an interval that holds its value nor the
 * not-counted (0, 2^64-1, 0), SIZE_MAX when none is.
 */
int pcz_interval_names_ok(size_t n_events, const char *const *events, char *why, size_t len);
size_t pcz_interval_steps_bad(const uint64_t *values, size_t n_steps, size_t n_events);
/* Metadata key: [A-Za-z0-9_.-]+; value: no NUL, CR, LF. */
int pcz_meta_key_ok(const char *s, size_t n);
int pcz_meta_value_ok(const char *s, size_t n);

/* "loop17" -> "loop18" into out (cap >= strlen(prev) + 21): 0, or -1 without such a number. */
int pcz_name_next(const char *prev, char *out, size_t cap);
/* Whether name (nlen bytes) is what pcz_name_next makes of prev (plen bytes), unbuilt. */
int pcz_name_is_next(const char *prev, size_t plen, const char *name, size_t nlen);

enum pcz_name_mode { PCZ_NAME_NEW = 0, PCZ_NAME_SAME = 1, PCZ_NAME_NEXT = 2 };

/* The stored balance byte: floor(255 * ppm / 1e6). */
static inline unsigned pcz_balance_q8(uint32_t ppm)
{
	return (unsigned)((uint64_t)ppm * 255u / 1000000u);
}

/* File-wide unit-name dictionary: names in first-seen order, with a hash index. */
typedef struct pcz_dict {
	char **names;
	uint64_t *last_end;  /* end of the unit's last step in the current section */
	uint64_t *last_gen;  /* section in which last_end was set */
	size_t *hash, *len;  /* pcz_name_hash and length of each name */
	size_t n, cap;
	size_t *slots;       /* open addressing, holds index + 1 */
	size_t n_slots;
} pcz_dict;

void pcz_dict_free(pcz_dict *d);
/* Index of name, or SIZE_MAX. */
size_t pcz_dict_find(const pcz_dict *d, const char *name, size_t len);
/* The same with hash = pcz_name_hash(name, len) known. */
size_t pcz_dict_find_hashed(const pcz_dict *d, const char *name, size_t len, size_t hash);
size_t pcz_name_hash(const char *s, size_t n);
/* One pass over a NUL-terminated name: its length and hash, and whether it is a valid name. */
int pcz_name_scan(const char *s, size_t *len, size_t *hash);
/* Adds a name (not present yet); its index, or SIZE_MAX when out of memory. */
size_t pcz_dict_add(pcz_dict *d, const char *name, size_t len);

/*
 * Fast levels without groups (the default) use the fast coder: a chunk keeps
 * each slot's rows as given and codes every value once, when the chunk is
 * written, under predictors chosen from a sample of the rows.
 */
typedef struct pcz_rows {
	uint64_t *v;    /* rows of width: start - previous end, end - start, the values */
	uint8_t *first; /* per row: 1 when the row is step 0 of its block */
	size_t n, cap;
	size_t later;   /* rows that are not step 0 */
	size_t width;   /* 2 + n_events */
} pcz_rows;

typedef struct pcz_fast {
	size_t n_events;
	pcz_rows *slot; /* per chunk slot */
	size_t n_slots, cap_slots;
	size_t n_values;   /* timestamps and values held, for the chunk size */
	uint64_t *tmp;     /* one piece's coded values */
	size_t tmp_cap;
	pcz_buf pieces, table;
} pcz_fast;

/* Sections the fast coder stores without trying the codec: below this many raw bytes. */
#define PCZ_SMALL_SECTION 256

/* Layouts: fast levels take PLANES when the VARINT bytes' order-0 entropy exceeds this x 8 bits. */
#define PCZ_DENSE_VARINTS 0.72

void pcz_fast_free(pcz_fast *f);
/* Forgets the rows (a new chunk), keeping the memory. */
void pcz_fast_reset(pcz_fast *f);
/* Room for one more row of slot: 0, or -1 when out of memory. */
int pcz_fast_grow(pcz_fast *f, size_t slot);

/*
 * Appends a row to slot: its start against the previous end, its duration and
 * its values (n_events); first when it is step 0 of its block.  0, or -1 when
 * out of memory.
 */
static inline int pcz_fast_append(pcz_fast *f, size_t slot, int first, uint64_t start_gap,
				  uint64_t duration, const uint64_t *values)
{
	size_t width = 2 + f->n_events;
	pcz_rows *r;
	uint64_t *row;

	if ((slot >= f->n_slots || f->slot[slot].n == f->slot[slot].cap) &&
	    pcz_fast_grow(f, slot) != 0)
		return -1;
	r = &f->slot[slot];
	row = r->v + r->n * width;
	r->first[r->n++] = (uint8_t)first;
	r->later += !first;
	f->n_values += width;
	row[0] = start_gap;
	row[1] = duration;
	memcpy(row + 2, values, f->n_events * sizeof *row);
	return 0;
}

/* Writes varint(x) at o (10 bytes of room); returns the end. */
static inline uint8_t *pcz_put_varint(uint8_t *o, uint64_t x)
{
	while (x >= 0x80) {
		*o++ = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	*o++ = (uint8_t)x;
	return o;
}
/* The REGIONS payload of the chunk: choices, table, structure and pieces.  0 or -MPXKIT_ENOMEM. */
int pcz_fast_payload(pcz_fast *f, size_t n_regions, const pcz_buf *structure, pcz_buf *payload);

/* ---- Grouping (doc/pcz-format.md, "The method") ---------------------------- */

/* Duration of a unit's whole block: last end - first start, 0 when negative. */
uint64_t pcz_unit_duration(const mpxkit_pcz_unit *u);
/* floor(1e6 * min / max) over n durations; 1000000 when max is 0 or n is 0. */
uint32_t pcz_balance_ppm(const uint64_t *dur, size_t n);
/* floor(1e6 * lo / hi), 1000000 when hi is 0: the balance of durations lo <= hi. */
uint32_t pcz_ppm_of(uint64_t lo, uint64_t hi);
/*
 * Single-linkage clusters of the units idx[0..n) by duration: sorts idx by
 * (duration, index) and writes each unit's cluster number (0, 1, ... in sorted
 * order) into cluster[k] for idx[k] after sorting.  Returns the cluster count.
 */
size_t pcz_cluster(const uint64_t *dur, size_t *idx, size_t n, uint32_t threshold_ppm,
		   size_t *cluster);
/* Value-stream bytes of m's differences against r. */
uint64_t pcz_diff_cost(const uint64_t *m, const uint64_t *r, size_t n);
/* Position in members[0..n) of the medoid under pcz_diff_cost (see the format doc). */
size_t pcz_medoid(const mpxkit_pcz_unit *units, const size_t *members, size_t n, size_t n_events);

/* A region's groups: group_of per unit (SIZE_MAX raw), members ascending, ref per group. */
typedef struct pcz_plan {
	size_t n_groups;
	size_t *group_of;
	size_t *group_ref;
	size_t *work; /* 2 * n_units entries of scratch for the caller */
	uint32_t balance_ppm;
	void *mem;    /* one allocation behind every array */
} pcz_plan;

int pcz_plan_region(const mpxkit_pcz_unit *units, size_t n_units, size_t n_events,
		    mpxkit_pcz_grouping mode, uint32_t threshold_ppm, pcz_plan *plan);
void pcz_plan_free(pcz_plan *plan);

/* ---- Version 2: the MODEL codec (doc/pcz-format.md, "Version 2") --------------------------- */

#define PCZ_VERSION_MODEL 2
#define PCZ_CODEC_MODEL 3        /* REGIONS coded by the model (version 2 only) */
#define PCZ_MODEL_MAX_VALUES (1u << 21)
#define PCZ_MODEL_COLUMNS 64     /* columns with tables of their own; later ones use the last's */
#define PCZ_MAX_NAME 65536       /* bytes of a name in a version-2 file */
#define PCZ_SYMBOLS 65           /* a number's symbol: its bit length, 0 to 64 */
#define PCZ_HSTRIDE 72           /* the writer's counts of a key: PCZ_SYMBOLS, rounded up to 8 */
#define PCZ_TABLE_LOG_MAX 12
#define PCZ_FINE_CLASSES 8       /* classes of the previous symbol under mode 2 ("Contexts") */
#define PCZ_MODES 3              /* context modes: 1, 3 or 8 classes */
#define PCZ_ANS_LOW (1u << 16)   /* the rANS state stays within [2^16, 2^32) */

/* Predictors of version 2 (the duration takes HISTORY, NONE or REFERENCE). */
enum pcz_v2_pred {
	PCZ_V2_HISTORY = 0,
	PCZ_V2_NONE = 1,
	PCZ_V2_DURATION = 2,
	PCZ_V2_RATIO = 3,
	PCZ_V2_REFERENCE = 4,
	PCZ_V2_REFERENCE_RATIO = 5,
	PCZ_V2_MATCH = 6,
	PCZ_V2_N_PRED = 7,
};

/* Rows before this one that MATCH searches for the closest duration. */
#define PCZ_MATCH_WINDOW 64

/* Structure fields, each with its own table. */
enum pcz_field { PCZ_F_NAME_MODE, PCZ_F_LENGTH, PCZ_F_UNIT, PCZ_F_STEPS, PCZ_F_CPU, PCZ_F_NUMA,
		 PCZ_F_UNITS, PCZ_N_FIELDS };

/* The fine class (mode 2) of the previous symbol, and the class of a fine class by mode. */
extern const uint8_t pcz_fine_class[PCZ_SYMBOLS];
extern const uint8_t pcz_mode_class[PCZ_MODES][PCZ_FINE_CLASSES];
extern const uint8_t pcz_mode_classes[PCZ_MODES];

static inline unsigned pcz_bit_length(uint64_t z)
{
	return z ? 64u - (unsigned)__builtin_clzll(z) : 0u;
}

/* The column whose tables column col uses. */
static inline size_t pcz_table_column(size_t col)
{
	return col < PCZ_MODEL_COLUMNS ? col : PCZ_MODEL_COLUMNS - 1;
}

/* A table as the format gives it: k symbols, ascending, their frequencies adding up to 2^L. */
typedef struct pcz_table {
	unsigned k, L;
	uint8_t sym[PCZ_SYMBOLS];
	uint16_t freq[PCZ_SYMBOLS];
} pcz_table;

/* Bit fields, least significant bit first (doc/pcz-format.md, "Bit fields"). */
typedef struct pcz_bitr {
	const uint8_t *p, *start, *end;
	uint64_t acc; /* bits read ahead; n of them not yet used */
	unsigned n;
	int err;      /* read past the end: the missing bits read as 0 */
} pcz_bitr;

void pcz_bitr_init(pcz_bitr *b, const uint8_t *p, size_t len);

static inline uint64_t pcz_load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Tops the read-ahead up to 56 bits or more (fewer at the end of the stream). */
static inline void pcz_bitr_refill(pcz_bitr *b)
{
	if (b->end - b->p >= 8) {
		/* The bytes above n are ORed in again, at the same place, by the next refill. */
		b->acc |= pcz_load_le64(b->p) << b->n;
		b->p += (63 - b->n) >> 3;
		b->n |= 56;
	} else {
		while (b->n <= 56 && b->p < b->end) {
			b->acc |= (uint64_t)*b->p++ << b->n;
			b->n += 8;
		}
	}
}

/* k <= 32 bits. */
static inline uint64_t pcz_bitr_get(pcz_bitr *b, unsigned k)
{
	uint64_t v;

	if (b->n < k) {
		pcz_bitr_refill(b);
		if (b->n < k) {
			b->err = 1;
			b->n = k;
		}
	}
	v = b->acc & ((1ull << k) - 1);
	b->acc >>= k;
	b->n -= k;
	return v;
}

/* Bits used so far. */
static inline uint64_t pcz_bitr_used(const pcz_bitr *b)
{
	return 8 * (uint64_t)(b->p - b->start) - b->n;
}

/* The event columns of a section grouped by their predictor: col[start[p] .. start[p + 1]). */
typedef struct pcz_by_pred {
	uint32_t *col;
	size_t start[PCZ_V2_N_PRED + 1];
} pcz_by_pred;

/* Groups the columns 2 .. W-1 of pred by predictor (col: W entries).  0 or -MPXKIT_ENOMEM. */
int pcz_by_pred_set(pcz_by_pred *b, const uint8_t *pred, size_t W);

/*
 * A section's tables as the decoder uses them.  A pcz_dtab is one table:
 * dec holds 2^L entries, symbol | frequency << 7 | (slot - start of the
 * symbol's slots) << 19, and cost[s] the bits a number of symbol s takes, in
 * 1/65536 bits, mantissa included (what `mpxkit info` reports).
 */
typedef struct pcz_dtab {
	const uint32_t *dec;
	const uint32_t *cost;
	uint32_t L, mask;
} pcz_dtab;

typedef struct pcz_msec {
	size_t W, C;            /* columns, and those with tables of their own: min(W, 64) */
	uint8_t *pred;          /* per column: its predictor (column 0, the start, has none) */
	int match;              /* some column uses MATCH: the decoder keeps the window */
	pcz_dtab field[PCZ_N_FIELDS];
	pcz_dtab *ctx;          /* C x PCZ_SYMBOLS: each column's table by the previous symbol */
	const pcz_dtab **col_ctx; /* per column (W): its row of ctx */
	uint8_t *col_flat;        /* per column: of one class (mode 0), col_ctx[col][0] always */
	pcz_by_pred by_pred;    /* the event columns by predictor */
	uint64_t *z;            /* a row's numbers, W */
	unsigned needs;         /* the ratios the predictors use (pcz_needs) */
	pcz_dtab *tabs;         /* every table of the section, in file order */
	uint32_t *slots;        /* their dec entries, then their costs */
	size_t cap_tabs, cap_slots, cap_C;
	pcz_table t;            /* scratch */
} pcz_msec;

void pcz_msec_free(pcz_msec *m);
/*
 * Reads the tables of a REGIONS payload from p (W columns) and builds them;
 * *used is set to their bytes, padding included.  0, or -1 with *why set
 * (damaged), or -MPXKIT_ENOMEM.
 */
int pcz_msec_read(pcz_msec *m, size_t W, const uint8_t *p, size_t len, size_t *used,
		  const char **why);

/* The decoder's streams: the rANS state and its words, and the raw-bit stream. */
typedef struct pcz_mdec {
	uint32_t x, y; /* the rANS states: x's turn next */
	const uint8_t *w, *w_end;
	pcz_bitr raw;
	int err;
} pcz_mdec;

/* 0, or -1 when the rANS stream is not a whole number of words from 4 bytes up or x < 2^16. */
int pcz_mdec_init(pcz_mdec *d, const uint8_t *ans, size_t ans_len, const uint8_t *raw,
		  size_t raw_len);
/* Up to 63 bits. */
static inline uint64_t pcz_bitr_get_wide(pcz_bitr *b, unsigned k)
{
	return k <= 32 ? pcz_bitr_get(b, k) : pcz_bitr_get(b, 32) | pcz_bitr_get(b, k - 32) << 32;
}

/*
 * One symbol under t: a lookup, a multiplication, at most one word read,
 * under the state whose turn it is (x), which then passes the turn (to y).
 * A one-symbol table (L = 0) codes nothing.
 */
static inline unsigned pcz_ans_get(pcz_mdec *d, const pcz_dtab *t)
{
	uint32_t e, x;

	if (t->L == 0)
		return t->dec[0] & 0x7F;
	e = t->dec[d->x & t->mask];
	x = (e >> 7 & 0xFFF) * (d->x >> t->L) + (e >> 19);
	if (x < PCZ_ANS_LOW) {
		if (d->w_end - d->w >= 2) {
			x = x << 16 | (uint32_t)d->w[0] | (uint32_t)d->w[1] << 8;
			d->w += 2;
		} else {
			x <<= 16;
			d->err = 1;
		}
	}
	d->x = d->y;
	d->y = x;
	return e & 0x7F;
}

/* The number of symbol b: its leading one and the b - 1 raw bits below it. */
static inline uint64_t pcz_mantissa(pcz_mdec *d, unsigned b)
{
	if (b < 2)
		return b;
	return 1ull << (b - 1) | pcz_bitr_get_wide(&d->raw, b - 1);
}

/* A symbol with the empty table's 65 turned into an error. */
static inline unsigned pcz_symbol(pcz_mdec *d, const pcz_dtab *t)
{
	unsigned b = pcz_ans_get(d, t);

	if (__builtin_expect(b >= PCZ_SYMBOLS, 0)) {
		d->err = 1;
		b = 0;
	}
	return b;
}

/* One number under table t; a damaged stream sets err. */
static inline __attribute__((always_inline)) uint64_t pcz_mdec_number(pcz_mdec *d,
								   const pcz_dtab *t)
{
	return pcz_mantissa(d, pcz_symbol(d, t));
}

/* Whether both streams were used exactly (see "Numbers"). */
int pcz_mdec_done(const pcz_mdec *d);

/*
 * MATCH's window: the (duration, row number) of the last PCZ_MATCH_WINDOW
 * rows, kept sorted, so that the closest duration is a binary search away.
 */
typedef struct pcz_window {
	struct pcz_went {
		uint64_t dur, seq;
	} e[PCZ_MATCH_WINDOW];
	uint64_t dur_of[PCZ_MATCH_WINDOW]; /* by row number modulo the window */
	size_t n;
	uint64_t seq; /* rows pushed */
} pcz_window;

static inline void pcz_window_reset(pcz_window *w)
{
	/* The unused end of the sorted array: durations above every other. */
	for (size_t i = 0; i < PCZ_MATCH_WINDOW; i++)
		w->e[i] = (struct pcz_went){ UINT64_MAX, UINT64_MAX };
	w->n = 0;
	w->seq = 0;
}

/*
 * The row (its number) of the window closest in duration to d, ties to the
 * most recent, or UINT64_MAX when the window is empty; then d joins the window
 * as the next row.
 */
uint64_t pcz_window_match_push(pcz_window *w, uint64_t d);

/*
 * What a row's columns are predicted from ("Rows"): its duration d, its
 * history, reference and match rows (width 2 + n_events: start, end,
 * values; NULL when none) and d over each one's duration, taken once per row
 * (negative when that duration is 0, where scale gives the value itself).
 */
typedef struct pcz_sources {
	uint64_t d;
	const uint64_t *h, *n, *m;
	double rh, rn, rm;
} pcz_sources;

/* (double)v, with the one-instruction signed conversion below 2^63. */
static inline double pcz_to_double(uint64_t v)
{
	return (int64_t)v >= 0 ? (double)(int64_t)v : (double)v;
}

/* d over dref, or -1 when dref is 0: writer and reader must round it alike. */
static inline double pcz_ratio(uint64_t d, uint64_t dref)
{
	return dref ? pcz_to_double(d) / pcz_to_double(dref) : -1.0;
}

static inline double pcz_ratio_of(uint64_t d, const uint64_t *row)
{
	return pcz_ratio(d, row ? row[1] - row[0] : 0);
}

/* Which ratios a section's predictors use, for pcz_sources_set: bits of PCZ_V2_RATIO, ... */
#define PCZ_NEEDS_ALL ((1u << PCZ_V2_RATIO) | (1u << PCZ_V2_REFERENCE_RATIO) | (1u << PCZ_V2_MATCH))

static inline unsigned pcz_needs(const uint8_t *pred, size_t W)
{
	unsigned needs = 0;

	for (size_t c = 2; c < W; c++)
		needs |= 1u << pred[c];
	return needs & PCZ_NEEDS_ALL;
}

/* The ratios needs (pcz_needs) asks for, with the fallbacks of "Rows" (a divide each). */
static inline void pcz_sources_set(pcz_sources *s, uint64_t d, const uint64_t *h,
				   const uint64_t *n, const uint64_t *m, unsigned needs)
{
	s->d = d;
	s->h = h;
	s->n = n;
	s->m = m;
	s->rh = s->rn = s->rm = -1.0;
	if (needs & (1u << PCZ_V2_RATIO) || (needs & (1u << PCZ_V2_REFERENCE_RATIO) && !n) ||
	    (needs & (1u << PCZ_V2_MATCH) && !m))
		s->rh = pcz_ratio_of(d, h);
	if (needs & (1u << PCZ_V2_REFERENCE_RATIO) && n)
		s->rn = pcz_ratio_of(d, n);
	if (needs & (1u << PCZ_V2_MATCH) && m)
		s->rm = pcz_ratio_of(d, m);
}

/* The duration's prediction (HISTORY, NONE or REFERENCE) from the history and reference rows. */
static inline uint64_t pcz_v2_predict_duration(unsigned pred, const uint64_t *h, const uint64_t *n)
{
	if (pred == PCZ_V2_NONE)
		return 0;
	if (pred == PCZ_V2_REFERENCE && n)
		return n[1] - n[0];
	return h ? h[1] - h[0] : 0;
}

/*
 * The predictions below set p[c] for each listed column c, or with residuals
 * z (the reader's), p[c] plus unzigzag(z[c]): the row's value, in the same
 * pass.  z is a constant NULL for the writer, where this inlines away.
 */
static inline __attribute__((always_inline)) void pcz_put(uint64_t *p, size_t c, uint64_t v,
							   const uint64_t *z)
{
	p[c] = z ? v + pcz_unzigzag(z[c]) : v;
}

/* p[c] = src[c], or 0 for each listed column. */
static inline __attribute__((always_inline)) void pcz_predict_copy(uint64_t *p, const uint32_t *col,
								    size_t n, const uint64_t *src,
								    const uint64_t *z)
{
	for (size_t i = 0; i < n; i++)
		pcz_put(p, col[i], src ? src[col[i]] : 0, z);
}

/*
 * scale(v, d, d') with r = d / d' >= 0: y = v r + 0.5 in binary64, truncated
 * when below 2^64, else v.  Signed conversions, one instruction each, for the
 * values below 2^63 that counters are; the unsigned ones otherwise.
 */
static inline uint64_t pcz_scale(uint64_t v, double r)
{
	double y;

	if (__builtin_expect((int64_t)v >= 0, 1)) {
		y = (double)(int64_t)v * r + 0.5;
		if (__builtin_expect(y < 9223372036854775808.0, 1))
			return (uint64_t)(int64_t)y;
	} else {
		y = (double)v * r + 0.5;
	}
	return y < 18446744073709551616.0 ? (uint64_t)y : v;
}

/* p[c] = scale(src[c], d, d') with r = d / d' (negative: d' = 0, the value itself), or 0 without src. */
static inline __attribute__((always_inline)) void
pcz_predict_scaled(uint64_t *p, const uint32_t *col, size_t n, const uint64_t *src, double r,
		   const uint64_t *z)
{
	if (src == NULL || r < 0) {
		pcz_predict_copy(p, col, n, src, z);
		return;
	}
	for (size_t i = 0; i < n; i++)
		pcz_put(p, col[i], pcz_scale(src[col[i]], r), z);
}

/*
 * The predictions p[c] of a row's event columns, each under its predictor
 * (by b), with the fallbacks of "Rows" when h, n or m is missing; with z,
 * the values (pcz_put).
 */
static inline __attribute__((always_inline)) void pcz_predict_row(const pcz_by_pred *b,
								   const pcz_sources *s, uint64_t *p,
								   const uint64_t *z)
{
#define PCZ_COLS(pr) b->col + b->start[pr], b->start[(pr) + 1] - b->start[pr]
	const uint64_t *ref = s->n ? s->n : s->h;
	double rref = s->n ? s->rn : s->rh;

	pcz_predict_copy(p, PCZ_COLS(PCZ_V2_HISTORY), s->h, z);
	pcz_predict_copy(p, PCZ_COLS(PCZ_V2_NONE), NULL, z);
	for (size_t i = b->start[PCZ_V2_DURATION]; i < b->start[PCZ_V2_DURATION + 1]; i++)
		pcz_put(p, b->col[i], s->d, z);
	pcz_predict_scaled(p, PCZ_COLS(PCZ_V2_RATIO), s->h, s->rh, z);
	pcz_predict_copy(p, PCZ_COLS(PCZ_V2_REFERENCE), ref, z);
	pcz_predict_scaled(p, PCZ_COLS(PCZ_V2_REFERENCE_RATIO), ref, rref, z);
	pcz_predict_scaled(p, PCZ_COLS(PCZ_V2_MATCH), s->m ? s->m : s->h, s->m ? s->rm : s->rh, z);
#undef PCZ_COLS
}

/* MATCH's window over the decoder's rows of the section (used when m->match). */
typedef struct pcz_ring {
	const uint64_t *rows; /* the section's rows, by row number (width W) */
	pcz_window win;
} pcz_ring;

/*
 * Decodes one row (start, duration, values) into row[0..W) from its history
 * h and its reference n (NULL when none), finding its match in ring; bits[col]
 * grows by the 1/65536 bits each column took (bits NULL: not counted).
 */
void pcz_mdec_row(pcz_mdec *d, const pcz_msec *m, uint64_t *row, const uint64_t *h,
		  const uint64_t *n, pcz_ring *ring, uint64_t *bits);

/*
 * The writer's MODEL chunk: the section's regions as they arrive (structure
 * and rows), coded when the section closes.
 */
typedef struct pcz_mregion {
	uint8_t name_mode;
	size_t name_off, name_len; /* NEW: the name in names */
	size_t first_row, n_units;
} pcz_mregion;

/* A unit of the chunk, kept with its first row (its rows follow one another). */
typedef struct pcz_munit {
	size_t k;       /* dictionary entry */
	size_t n_steps;
	int cpu, numa;
} pcz_munit;

/* The encoder's form of a table's symbol (rANS with a reciprocal instead of a division). */
typedef struct pcz_esym {
	uint64_t rcp;   /* ceil(2^64 / f), or 2^64 - 1 for f = 1 (without 128-bit products: f) */
	uint32_t x_max; /* f * 2^(32 - L): a word goes out first from here up */
	uint16_t bias;  /* the symbol's first slot (plus 2^L - 1 for f = 1) */
	uint16_t cmpl;  /* 2^L - f */
} pcz_esym;

#define PCZ_SLAB_LOG 8
#define PCZ_SLAB (1u << PCZ_SLAB_LOG)

typedef struct pcz_mchunk {
	size_t n_events, width; /* width = 2 + n_events: start, end, values */
	size_t dict_base;       /* dictionary size when the chunk began: later entries are new */
	pcz_mregion *reg;
	size_t n_reg, cap_reg;
	size_t n_unit;
	/* The rows (width values each), their links and units (set at a unit's first row),
	 * PCZ_SLAB rows a slab, so that they are never copied as the section grows: row i is in
	 * slab i / PCZ_SLAB. */
	struct pcz_slab {
		uint64_t *rows;
		struct pcz_mlink {
			size_t hist, ref, match; /* the row's history, reference and match, or SIZE_MAX */
		} *link;
		pcz_munit *unit;
	} *slab;
	size_t n_slabs, cap_slabs;
	size_t n_rows;
	pcz_window window;
	/* The rows' durations when the section closes, to find their matches (match_rows),
	 * and the same less the least in 32 bits where they fit, after 64 entries of 0. */
	uint64_t *dur;
	uint32_t *dur32;
	double *ratio; /* per row: d / d' to its history, reference and match (set_ratios) */
	size_t cap_dur;
	pcz_buf names;
	/* Coding state, kept between sections to save allocations. */
	size_t *slot_of;  /* per dictionary entry */
	uint64_t *slot_gen;
	size_t cap_dict;
	uint64_t gen;
	size_t n_slots_used;
	size_t *last_row; /* per slot: its last row, or SIZE_MAX */
	int64_t *place;   /* per slot: cpu + 1 and numa + 1 of its last block */
	size_t cap_slots;
	/* Every number in coding order as the place of its count in hist: key * PCZ_HSTRIDE +
	 * symbol, the key its field, or 7 + 8 column + fine class. */
	uint16_t *key;
	size_t cap_num;
	/* Per key, PCZ_SYMBOLS counts (a stride of PCZ_HSTRIDE); for the reverse pass, write_tables
	 * puts in each counted place its symbol's entry in esym (UINT32_MAX: a one-symbol table,
	 * nothing coded), then encode_ans zeroes the places it listed in taken. */
	uint32_t *hist;
	size_t cap_hist;
	uint16_t *taken;
	size_t n_taken;
	pcz_by_pred by_pred;
	uint64_t *pred_row; /* a row's predictions, width entries */
	unsigned needs;     /* the ratios the section's predictors use (pcz_needs) */
	uint64_t *zero_row; /* width zeros: the row a missing one reads as */
	uint8_t *pred;      /* width: each column's predictor (choose) */
	uint64_t *cost;     /* width x PCZ_V2_N_PRED: choose's costs */
	struct pcz_colcounts *counts; /* write_tables' scratch (model.c) */
	pcz_esym *esym;   /* the tables' symbols, each table's from its lowest to its highest */
	size_t cap_tabs;
	pcz_buf raw, tables, ans;
} pcz_mchunk;

void pcz_mchunk_free(pcz_mchunk *c);
/* A writer's chunk for rows of n_events values, from the pool (or a new one). */
void pcz_mchunk_init(pcz_mchunk *c, size_t n_events);
/* Back to the pool (or freed), c left empty. */
void pcz_mchunk_release(pcz_mchunk *c);
/*
 * Appends a region (units validated, dictionary entries known; dict_n is the
 * dictionary's size before this region's new names).  0 or -MPXKIT_ENOMEM.
 */
int pcz_mchunk_add(pcz_mchunk *c, unsigned name_mode, const char *name, size_t n_units,
		   const mpxkit_pcz_unit *units, const size_t *kidx, size_t dict_n);
/* The REGIONS payload of the chunk into payload; dict gives the new names.  0 or a negative code. */
int pcz_mchunk_payload(pcz_mchunk *c, const pcz_dict *dict, int placement, pcz_buf *payload);
/* Forgets the chunk's regions. */
void pcz_mchunk_reset(pcz_mchunk *c);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-associative, LRU, sectored caches with fill times: L1, L2 and the instruction cache. */
#include <stdlib.h>
#include <string.h>

#include "simt_impl.h"

/* n rounded up to a power of two when below quantum, else to a multiple of quantum. */
static size_t round_block(size_t n, size_t quantum)
{
	size_t p = 8;

	if (n >= quantum)
		return (n + quantum - 1) / quantum * quantum;
	while (p < n)
		p *= 2;
	return p;
}

/* Zeroed memory aligned to a host cache line, so a row or a record never straddles two. */
static void *alloc_lines(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

/* Stamps stay below the padding lanes' value, so a vector minimum never picks a padding lane. */
#define STAMP_MAX 0x7ffe
#define STAMP_PAD 0x7fff

int mpxkit__simt_cache_init(simt_cache *c, const mpxkit_simt_cache_desc *d)
{
	size_t lines = (size_t)d->sets * d->ways;

	memset(c, 0, sizeof *c);
	c->sets = d->sets;
	c->ways = d->ways;
	c->spl = d->line / d->sector;
	c->set_mask = (d->sets & (d->sets - 1)) == 0 ? d->sets - 1 : 0;
	c->write_back = d->write == MPXKIT_SIMT_WRITE_BACK;
	c->lanes = (d->ways + 7) / 8 * 8;
	c->row_len = round_block((size_t)c->lanes * 4, 128) / sizeof *c->row;
	c->rec_size = round_block(sizeof(simt_way) + c->spl * sizeof(uint64_t), 64);
	c->set = calloc(d->sets, sizeof *c->set);
	c->row = alloc_lines(d->sets * c->row_len * sizeof *c->row);
	c->rec = alloc_lines(lines * c->rec_size);
	if (c->set == NULL || c->row == NULL || c->rec == NULL) {
		mpxkit__simt_cache_free(c);
		return -MPXKIT_ENOMEM;
	}
	for (size_t s = 0; s < d->sets; s++)
		for (uint32_t i = d->ways; i < c->lanes; i++)
			c->row[s * c->row_len + c->lanes + i] = STAMP_PAD;
	return 0;
}

void mpxkit__simt_cache_free(simt_cache *c)
{
	free(c->set);
	free(c->row);
	free(c->rec);
	memset(c, 0, sizeof *c);
}

void mpxkit__simt_cache_flush(simt_cache *c)
{
	memset(c->set, 0, (size_t)c->sets * sizeof *c->set);
}

static inline size_t set_of(const simt_cache *c, uint64_t line)
{
	return (size_t)(c->set_mask || c->sets == 1 ? line & c->set_mask : line % c->sets);
}

/* The tag hash a row holds: a full tag comparison confirms a match. */
static inline uint16_t tag_hash(uint64_t line)
{
	return (uint16_t)((line * 0x9E3779B97F4A7C15ull) >> 48);
}

static inline simt_way *record(const simt_cache *c, size_t slot)
{
	return (simt_way *)(void *)(c->rec + slot * c->rec_size);
}

void mpxkit__simt_cache_prefetch(const simt_cache *c, uint64_t line)
{
	const uint16_t *row = &c->row[set_of(c, line) * c->row_len];

	__builtin_prefetch(row);
	if (c->row_len * sizeof *row > 64)
		__builtin_prefetch(row + 32);
}

/*
 * The two scans of a row, eight lanes at a time where the host has SSE2
 * (every x86-64 does), one at a time elsewhere; both give the same answer.
 */
#ifdef __SSE2__
#include <emmintrin.h>

/* Lanes [v, v + 8) of the row whose hash equals h and that lie below n: 2 bits per lane. */
static inline uint32_t hash_matches(const uint16_t *hash, uint32_t v, uint32_t n, uint16_t h)
{
	__m128i x = _mm_load_si128((const __m128i *)(const void *)(hash + v));
	uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(x, _mm_set1_epi16((short)h)));

	return n - v >= 8 ? m : m & ((1u << (2 * (n - v))) - 1);
}

/* The least recently used of a full set's ways: the smallest stamp (they are distinct). */
static inline uint32_t lru(const simt_cache *c, const uint16_t *stamp)
{
	__m128i mn = _mm_load_si128((const __m128i *)(const void *)stamp), all;
	uint32_t v;

	for (v = 8; v < c->lanes; v += 8)
		mn = _mm_min_epi16(mn, _mm_load_si128((const __m128i *)(const void *)(stamp + v)));
	mn = _mm_min_epi16(mn, _mm_shuffle_epi32(mn, 0x4e));
	mn = _mm_min_epi16(mn, _mm_shuffle_epi32(mn, 0xb1));
	mn = _mm_min_epi16(mn, _mm_shufflelo_epi16(mn, 0xb1));
	all = _mm_shufflelo_epi16(mn, 0);
	all = _mm_unpacklo_epi64(all, all);
	for (v = 0;; v += 8) {
		__m128i x = _mm_load_si128((const __m128i *)(const void *)(stamp + v));
		uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi16(x, all));
		if (m)
			return v + (uint32_t)__builtin_ctz(m) / 2;
	}
}
#else
static inline uint32_t hash_matches(const uint16_t *hash, uint32_t v, uint32_t n, uint16_t h)
{
	uint32_t m = 0;

	for (uint32_t i = 0; i < 8 && v + i < n; i++)
		if (hash[v + i] == h)
			m |= 3u << (2 * i);
	return m;
}

static inline uint32_t lru(const simt_cache *c, const uint16_t *stamp)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < c->ways; i++)
		if (stamp[i] < stamp[best])
			best = i;
	return best;
}
#endif

/*
 * The way of set s holding line (its slot s * ways + way), or -1 with the
 * victim in *victim: the first invalid way, else the least recently used.
 */
static inline int64_t lookup(const simt_cache *c, size_t s, uint64_t line, uint32_t *victim)
{
	const uint16_t *hash = &c->row[s * c->row_len];
	uint32_t n = c->set[s].used;
	uint16_t h = tag_hash(line);

	for (uint32_t v = 0; v < n; v += 8)
		for (uint32_t m = hash_matches(hash, v, n, h); m; m &= m - 1, m &= m - 1) {
			uint32_t i = v + (uint32_t)__builtin_ctz(m) / 2;
			if (record(c, s * c->ways + i)->tag == line)
				return (int64_t)(s * c->ways + i);
		}
	*victim = n < c->ways ? n : lru(c, hash + c->lanes);
	return -1;
}

void mpxkit__simt_cache_locate(const simt_cache *c, uint64_t line, simt_place *p)
{
	size_t s = set_of(c, line);
	const uint16_t *hash = &c->row[s * c->row_len];
	uint32_t n = c->set[s].used;

	p->s = s;
	p->clock = c->set[s].clock;
	p->candidate = 0;
	/* the first way whose hash matches (its record is not read: that would wait for it) */
	for (uint32_t v = 0; v < n; v += 8) {
		uint32_t m = hash_matches(hash, v, n, tag_hash(line));
		if (m) {
			p->i = v + (uint32_t)__builtin_ctz(m) / 2;
			p->candidate = 1;
			break;
		}
	}
	if (!p->candidate)
		p->i = n < c->ways ? n : lru(c, hash + c->lanes);
	__builtin_prefetch(record(c, s * c->ways + p->i));
}

/* Where a line is or goes: its set, its way, and whether it is present. */
typedef struct where {
	size_t s;
	uint32_t i;
	int present;
} where;

static inline size_t slot_of(const simt_cache *c, where w)
{
	return w.s * c->ways + w.i;
}

static inline where find(const simt_cache *c, uint64_t line)
{
	where w;
	int64_t slot;

	w.s = set_of(c, line);
	w.i = 0;
	slot = lookup(c, w.s, line, &w.i);
	w.present = slot >= 0;
	if (w.present)
		w.i = (uint32_t)((size_t)slot - w.s * c->ways);
	return w;
}

/*
 * find, from a place located earlier when its set has not been used since
 * (every change to a set goes through use(), which moves its clock; one warp
 * access uses a set far fewer than the 2^15 times that would bring the clock
 * back): a candidate is confirmed by its full tag, a miss stands as it was.
 */
static inline where find_at(const simt_cache *c, uint64_t line, const simt_place *p)
{
	where w;

	if (p == NULL || c->set[p->s].clock != p->clock)
		return find(c, line);
	w.s = p->s;
	w.i = p->i;
	w.present = p->candidate;
	if (w.present && record(c, slot_of(c, w))->tag != line)
		return find(c, line); /* a hash collision: the line may be in a later way */
	return w;
}

/* Renumbers a set's stamps 1 .. used in the same order, before its clock passes STAMP_MAX. */
static void renumber(simt_cache *c, size_t s)
{
	uint16_t *stamp = &c->row[s * c->row_len] + c->lanes, old[1024];
	uint32_t n = c->set[s].used, prev = 0;

	memcpy(old, stamp, n * sizeof *old);
	for (uint32_t rank = 1; rank <= n; rank++) {
		uint32_t best = n;
		for (uint32_t i = 0; i < n; i++)
			if (old[i] > prev && (best == n || old[i] < old[best]))
				best = i;
		prev = old[best];
		stamp[best] = (uint16_t)rank;
	}
	c->set[s].clock = (uint16_t)n;
}

/* The way becomes the most recently used; a first-time way joins the valid ones. */
static inline void use(simt_cache *c, where w, uint64_t line)
{
	uint16_t *hash = &c->row[w.s * c->row_len];
	simt_set *st = &c->set[w.s];

	if (st->clock == STAMP_MAX)
		renumber(c, w.s);
	if (w.i == st->used)
		st->used++;
	hash[c->lanes + w.i] = ++st->clock;
	hash[w.i] = tag_hash(line);
	st->mru = (uint16_t)w.i;
}

/*
 * use() for a hit: on the way already most recently used, the order of the
 * stamps stays as it is, and so does every later victim; the clock stays
 * too, which keeps places located in the set valid, as they are.
 */
static inline void use_hit(simt_cache *c, where w, uint64_t line)
{
	if (w.i != c->set[w.s].mru)
		use(c, w, line);
}

static void latest_hit(const simt_cache *c, int64_t slot, uint32_t hit, simt_access *a)
{
	const uint64_t *r = record(c, (size_t)slot)->ready;

	a->ready = 0;
	for (; hit; hit &= hit - 1) {
		uint32_t s = (uint32_t)__builtin_ctz(hit);
		if (r[s] > a->ready)
			a->ready = r[s];
	}
}

/* Takes the victim way for line: notes its dirty sectors (when it held a line), clears it. */
static void take(simt_cache *c, where w, uint64_t line, simt_access *a)
{
	simt_way *r = record(c, slot_of(c, w));

	a->evicted_dirty = w.i < c->set[w.s].used ? r->dirty : 0;
	a->evicted_line = r->tag;
	r->tag = line;
	r->valid = 0;
	r->dirty = 0;
}

void mpxkit__simt_cache_read(simt_cache *c, uint64_t line, uint32_t sectors, int allocate,
			     simt_access *a)
{
	mpxkit__simt_cache_read_at(c, line, NULL, sectors, allocate, a);
}

void mpxkit__simt_cache_read_at(simt_cache *c, uint64_t line, const simt_place *p, uint32_t sectors,
				int allocate, simt_access *a)
{
	where at = find_at(c, line, p);
	size_t slot = slot_of(c, at);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	if (at.present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = (int64_t)slot;
		latest_hit(c, a->slot, a->hit, a);
		use_hit(c, at, line);
		w->valid |= allocate ? sectors : 0;
		return;
	}
	a->hit = 0;
	a->miss = sectors;
	a->ready = 0;
	if (!allocate)
		return;
	take(c, at, line, a);
	w->valid = sectors;
	use(c, at, line);
	a->slot = (int64_t)slot;
}

int mpxkit__simt_cache_read_mru(const simt_cache *c, uint64_t line, uint32_t sectors,
				uint64_t *ready)
{
	size_t s = set_of(c, line), slot = s * c->ways + c->set[s].mru;
	const simt_way *w = record(c, slot);
	simt_access a;

	if (c->set[s].used == 0 || w->tag != line || (sectors & ~w->valid) != 0)
		return 0;
	latest_hit(c, (int64_t)slot, sectors, &a);
	*ready = a.ready;
	return 1;
}

void mpxkit__simt_cache_fill(simt_cache *c, int64_t slot, uint32_t sectors, uint64_t ready)
{
	uint64_t *r;

	if (slot < 0)
		return;
	r = record(c, (size_t)slot)->ready;
	for (; sectors; sectors &= sectors - 1)
		r[__builtin_ctz(sectors)] = ready;
}

void mpxkit__simt_cache_write(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t now,
			      simt_access *a)
{
	mpxkit__simt_cache_write_at(c, line, NULL, sectors, now, a);
}

void mpxkit__simt_cache_write_at(simt_cache *c, uint64_t line, const simt_place *p,
				 uint32_t sectors, uint64_t now, simt_access *a)
{
	where at = find_at(c, line, p);
	size_t slot = slot_of(c, at);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	a->ready = 0;
	if (at.present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = (int64_t)slot;
		use_hit(c, at, line);
		if (c->write_back) {
			/* A store completes a sector whose fill is under way: it is written now. */
			w->valid |= sectors;
			w->dirty |= sectors;
			mpxkit__simt_cache_fill(c, a->slot, a->miss, now);
		}
		return;
	}
	a->hit = 0;
	a->miss = sectors;
	if (!c->write_back)
		return;
	take(c, at, line, a);
	w->valid = w->dirty = sectors;
	use(c, at, line);
	a->slot = (int64_t)slot;
	mpxkit__simt_cache_fill(c, a->slot, sectors, now);
}

void mpxkit__simt_cache_install(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t ready,
				simt_access *a)
{
	where at = find(c, line);
	size_t slot = slot_of(c, at);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->hit = at.present ? sectors & w->valid : 0;
	a->miss = sectors & ~a->hit;
	if (!at.present)
		take(c, at, line, a);
	w->valid |= sectors;
	w->dirty &= ~sectors;
	use(c, at, line);
	a->slot = (int64_t)slot;
	mpxkit__simt_cache_fill(c, a->slot, a->miss, ready);
}

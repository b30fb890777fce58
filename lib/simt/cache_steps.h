/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The caches' per-access steps, inline: memory.c takes several of them for
 * every line of every warp access, where a call's saving and restoring of
 * registers cost about as much as the step (lib/simt/cache.c has the rest and
 * the documented entry points, simt_impl.h the layout).
 */
#ifndef MPXKIT_SIMT_CACHE_STEPS_H
#define MPXKIT_SIMT_CACHE_STEPS_H

#include "simt_impl.h"

/* Stamps stay below the padding lanes' value, so a vector minimum never picks a padding lane. */
#define STAMP_MAX 0x7ffe
#define STAMP_PAD 0x7fff

/* Renumbers a set's stamps 1 .. used in the same order, before its clock passes STAMP_MAX. */
void mpxkit__simt_cache_renumber(simt_cache *c, size_t s);

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

static inline void cache_prefetch(const simt_cache *c, uint64_t line)
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

static inline void cache_locate(const simt_cache *c, uint64_t line, simt_place *p)
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

/* The way becomes the most recently used; a first-time way joins the valid ones. */
static inline void use(simt_cache *c, where w, uint64_t line)
{
	uint16_t *hash = &c->row[w.s * c->row_len];
	simt_set *st = &c->set[w.s];

	if (st->clock == STAMP_MAX)
		mpxkit__simt_cache_renumber(c, w.s);
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

static inline void latest_hit(const simt_cache *c, int64_t slot, uint32_t hit, simt_access *a)
{
	const uint64_t *r = record(c, (size_t)slot)->ready;

	a->ready = 0;
	for (; hit; hit &= hit - 1) {
		uint32_t s = (uint32_t)__builtin_ctz(hit);
		if (r[s] > a->ready)
			a->ready = r[s];
	}
}

/* Notes whether way i of set s holds dirty sectors now (sets of more than 64 ways keep no note). */
static inline void note_dirty(simt_cache *c, size_t s, uint32_t i, uint32_t dirty)
{
	uint64_t bit = i < 64 ? 1ull << i : 0;

	c->set[s].dirty = dirty ? c->set[s].dirty | bit : c->set[s].dirty & ~bit;
}

/*
 * Takes the victim way for line: notes its dirty sectors (when it held a
 * line) and their line, clears it.  The record of a victim the set knows to
 * be clean is not read: the host need not wait for it.
 */
static inline void take(simt_cache *c, where w, uint64_t line, simt_access *a)
{
	simt_way *r = record(c, slot_of(c, w));
	const simt_set *st = &c->set[w.s];
	int dirty = w.i < st->used && (c->ways > 64 || (st->dirty >> w.i & 1));

	a->evicted_dirty = dirty ? r->dirty : 0;
	if (a->evicted_dirty)
		a->evicted_line = r->tag;
	r->tag = line;
	r->valid = 0;
	r->dirty = 0;
	note_dirty(c, w.s, w.i, 0);
}

/* The answer for a present line: which sectors hit and miss, and where it is. */
static inline void split(simt_access *a, const simt_way *w, uint32_t sectors, size_t slot)
{
	a->hit = sectors & w->valid;
	a->miss = sectors & ~w->valid;
	a->slot = (int64_t)slot;
}

static inline void cache_read_at(simt_cache *c, uint64_t line, const simt_place *p,
				 uint32_t sectors, int allocate, simt_access *a)
{
	where at = find_at(c, line, p);
	size_t slot = slot_of(c, at);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	if (at.present) {
		split(a, w, sectors, slot);
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

static inline void cache_fill(simt_cache *c, int64_t slot, uint32_t sectors, uint64_t ready)
{
	uint64_t *r;

	if (slot < 0)
		return;
	r = record(c, (size_t)slot)->ready;
	for (; sectors; sectors &= sectors - 1)
		r[__builtin_ctz(sectors)] = ready;
}

static inline void cache_write_at(simt_cache *c, uint64_t line, const simt_place *p,
				  uint32_t sectors, uint64_t now, simt_access *a)
{
	where at = find_at(c, line, p);
	size_t slot = slot_of(c, at);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	a->ready = 0;
	if (at.present) {
		split(a, w, sectors, slot);
		use_hit(c, at, line);
		if (c->write_back) {
			/* A store completes a sector whose fill is under way: it is written now. */
			w->valid |= sectors;
			w->dirty |= sectors;
			note_dirty(c, at.s, at.i, w->dirty);
			cache_fill(c, a->slot, a->miss, now);
		}
		return;
	}
	a->hit = 0;
	a->miss = sectors;
	if (!c->write_back)
		return;
	take(c, at, line, a);
	w->valid = w->dirty = sectors;
	note_dirty(c, at.s, at.i, sectors);
	use(c, at, line);
	a->slot = (int64_t)slot;
	cache_fill(c, a->slot, sectors, now);
}

#endif

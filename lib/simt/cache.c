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

int mpxkit__simt_cache_init(simt_cache *c, const mpxkit_simt_cache_desc *d)
{
	size_t lines = (size_t)d->sets * d->ways;

	memset(c, 0, sizeof *c);
	c->sets = d->sets;
	c->ways = d->ways;
	c->spl = d->line / d->sector;
	c->set_mask = (d->sets & (d->sets - 1)) == 0 ? d->sets - 1 : 0;
	c->write_back = d->write == MPXKIT_SIMT_WRITE_BACK;
	c->row_len = round_block((size_t)d->ways * 4, 128) / sizeof *c->row;
	c->rec_size = round_block(sizeof(simt_way) + c->spl * sizeof(uint64_t), 64);
	c->set = calloc(d->sets, sizeof *c->set);
	c->row = alloc_lines(d->sets * c->row_len * sizeof *c->row);
	c->rec = alloc_lines(lines * c->rec_size);
	if (c->set == NULL || c->row == NULL || c->rec == NULL) {
		mpxkit__simt_cache_free(c);
		return -MPXKIT_ENOMEM;
	}
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

/* The least recently used of a full set's ways: the smallest stamp (they are distinct). */
static uint32_t lru(const simt_cache *c, const uint16_t *stamp)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < c->ways; i++)
		if (stamp[i] < stamp[best])
			best = i;
	return best;
}

void mpxkit__simt_cache_prefetch_way(const simt_cache *c, uint64_t line)
{
	size_t s = set_of(c, line), base = s * c->ways;
	const uint16_t *hash = &c->row[s * c->row_len];
	uint32_t n = c->set[s].used;
	uint16_t h = tag_hash(line);

	for (uint32_t i = 0; i < n; i++)
		if (hash[i] == h) {
			__builtin_prefetch(record(c, base + i));
			return;
		}
	__builtin_prefetch(record(c, base + (n < c->ways ? n : lru(c, hash + c->ways))));
}

/*
 * The slot (set * ways + way) holding line, or the victim: the first invalid
 * way, else the least recently used one.
 */
static size_t find(simt_cache *c, uint64_t line, int *present)
{
	size_t s = set_of(c, line), base = s * c->ways;
	const uint16_t *hash = &c->row[s * c->row_len];
	uint32_t n = c->set[s].used;
	uint16_t h = tag_hash(line);

	for (uint32_t i = 0; i < n; i++)
		if (hash[i] == h && record(c, base + i)->tag == line) {
			*present = 1;
			return base + i;
		}
	*present = 0;
	return base + (n < c->ways ? n : lru(c, hash + c->ways));
}

/* Renumbers a set's stamps 1 .. used in the same order, before its clock wraps (rare). */
static void renumber(simt_cache *c, size_t s)
{
	uint16_t *stamp = &c->row[s * c->row_len] + c->ways, old[1024];
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

/* Way slot (from find) becomes the most recently used; a first-time way joins the valid ones. */
static void use(simt_cache *c, size_t slot, uint64_t line)
{
	size_t s = slot / c->ways;
	uint32_t i = (uint32_t)(slot - s * c->ways);
	uint16_t *hash = &c->row[s * c->row_len];
	simt_set *st = &c->set[s];

	if (st->clock == UINT16_MAX)
		renumber(c, s);
	if (i == st->used)
		st->used++;
	hash[c->ways + i] = ++st->clock;
	hash[i] = tag_hash(line);
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

/* Takes the victim slot for line: notes its dirty sectors (when it held a line), clears it. */
static void take(simt_cache *c, size_t slot, uint64_t line, simt_access *a)
{
	simt_way *w = record(c, slot);
	size_t s = slot / c->ways;

	a->evicted_dirty = slot - s * c->ways < c->set[s].used ? w->dirty : 0;
	a->evicted_line = w->tag;
	w->tag = line;
	w->valid = 0;
	w->dirty = 0;
}

void mpxkit__simt_cache_read(simt_cache *c, uint64_t line, uint32_t sectors, int allocate,
			     simt_access *a)
{
	int present;
	size_t slot = find(c, line, &present);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	if (present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = (int64_t)slot;
		latest_hit(c, a->slot, a->hit, a);
		use(c, slot, line);
		w->valid |= allocate ? sectors : 0;
		return;
	}
	a->hit = 0;
	a->miss = sectors;
	a->ready = 0;
	if (!allocate)
		return;
	take(c, slot, line, a);
	w->valid = sectors;
	use(c, slot, line);
	a->slot = (int64_t)slot;
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
	int present;
	size_t slot = find(c, line, &present);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->slot = -1;
	a->ready = 0;
	if (present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = (int64_t)slot;
		use(c, slot, line);
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
	take(c, slot, line, a);
	w->valid = w->dirty = sectors;
	use(c, slot, line);
	a->slot = (int64_t)slot;
	mpxkit__simt_cache_fill(c, a->slot, sectors, now);
}

void mpxkit__simt_cache_install(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t ready,
				simt_access *a)
{
	int present;
	size_t slot = find(c, line, &present);
	simt_way *w = record(c, slot);

	a->evicted_dirty = 0;
	a->hit = present ? sectors & w->valid : 0;
	a->miss = sectors & ~a->hit;
	if (!present)
		take(c, slot, line, a);
	w->valid |= sectors;
	w->dirty &= ~sectors;
	use(c, slot, line);
	a->slot = (int64_t)slot;
	mpxkit__simt_cache_fill(c, a->slot, a->miss, ready);
}

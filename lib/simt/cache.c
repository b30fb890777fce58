/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-associative, LRU, sectored caches with fill times: L1, L2 and the instruction cache. */
#include <stdlib.h>
#include <string.h>

#include "simt_impl.h"

int mpxkit__simt_cache_init(simt_cache *c, const mpxkit_simt_cache_desc *d)
{
	size_t lines = (size_t)d->sets * d->ways;

	memset(c, 0, sizeof *c);
	c->sets = d->sets;
	c->ways = d->ways;
	c->spl = d->line / d->sector;
	c->set_mask = (d->sets & (d->sets - 1)) == 0 ? d->sets - 1 : 0;
	c->write_back = d->write == MPXKIT_SIMT_WRITE_BACK;
	c->way = calloc(lines, sizeof *c->way);
	c->ready = calloc(lines * c->spl, sizeof *c->ready);
	if (c->way == NULL || c->ready == NULL) {
		mpxkit__simt_cache_free(c);
		return -MPXKIT_ENOMEM;
	}
	return 0;
}

void mpxkit__simt_cache_free(simt_cache *c)
{
	free(c->way);
	free(c->ready);
	memset(c, 0, sizeof *c);
}

void mpxkit__simt_cache_flush(simt_cache *c)
{
	memset(c->way, 0, (size_t)c->sets * c->ways * sizeof *c->way);
}

static simt_way *set_of(const simt_cache *c, uint64_t line)
{
	uint64_t set = c->set_mask || c->sets == 1 ? line & c->set_mask : line % c->sets;
	return &c->way[set * c->ways];
}

/* The way holding line, or the victim (an invalid way first, else the least recently used). */
static simt_way *find(simt_cache *c, uint64_t line, int *present)
{
	simt_way *w = set_of(c, line), *victim = w;

	for (uint32_t i = 0; i < c->ways; i++) {
		if (w[i].stamp != 0 && w[i].tag == line) {
			*present = 1;
			return &w[i];
		}
		if (victim->stamp != 0 && (w[i].stamp == 0 || w[i].stamp < victim->stamp))
			victim = &w[i];
	}
	*present = 0;
	return victim;
}

static void latest_hit(const simt_cache *c, int64_t slot, uint32_t hit, simt_access *a)
{
	const uint64_t *r = &c->ready[(size_t)slot * c->spl];

	a->ready = 0;
	for (; hit; hit &= hit - 1) {
		uint32_t s = (uint32_t)__builtin_ctz(hit);
		if (r[s] > a->ready)
			a->ready = r[s];
	}
}

/* Takes the victim way for line: notes its dirty sectors, clears it. */
static void take(simt_way *w, uint64_t line, simt_access *a)
{
	a->evicted_dirty = w->stamp ? w->dirty : 0;
	a->evicted_line = w->tag;
	w->tag = line;
	w->valid = 0;
	w->dirty = 0;
}

void mpxkit__simt_cache_read(simt_cache *c, uint64_t line, uint32_t sectors, int allocate,
			     simt_access *a)
{
	int present;
	simt_way *w = find(c, line, &present);

	a->evicted_dirty = 0;
	a->slot = -1;
	if (present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = w - c->way;
		latest_hit(c, a->slot, a->hit, a);
		w->stamp = ++c->clock;
		w->valid |= allocate ? sectors : 0;
		return;
	}
	a->hit = 0;
	a->miss = sectors;
	a->ready = 0;
	if (!allocate)
		return;
	take(w, line, a);
	w->valid = sectors;
	w->stamp = ++c->clock;
	a->slot = w - c->way;
}

void mpxkit__simt_cache_fill(simt_cache *c, int64_t slot, uint32_t sectors, uint64_t ready)
{
	uint64_t *r;

	if (slot < 0)
		return;
	r = &c->ready[(size_t)slot * c->spl];
	for (; sectors; sectors &= sectors - 1)
		r[__builtin_ctz(sectors)] = ready;
}

void mpxkit__simt_cache_write(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t now,
			      simt_access *a)
{
	int present;
	simt_way *w = find(c, line, &present);

	a->evicted_dirty = 0;
	a->slot = -1;
	a->ready = 0;
	if (present) {
		a->hit = sectors & w->valid;
		a->miss = sectors & ~w->valid;
		a->slot = w - c->way;
		w->stamp = ++c->clock;
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
	take(w, line, a);
	w->valid = w->dirty = sectors;
	w->stamp = ++c->clock;
	a->slot = w - c->way;
	mpxkit__simt_cache_fill(c, a->slot, sectors, now);
}

void mpxkit__simt_cache_install(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t ready,
				simt_access *a)
{
	int present;
	simt_way *w = find(c, line, &present);

	a->evicted_dirty = 0;
	a->hit = present ? sectors & w->valid : 0;
	a->miss = sectors & ~a->hit;
	if (!present)
		take(w, line, a);
	w->valid |= sectors;
	w->dirty &= ~sectors;
	w->stamp = ++c->clock;
	a->slot = w - c->way;
	mpxkit__simt_cache_fill(c, a->slot, a->miss, ready);
}

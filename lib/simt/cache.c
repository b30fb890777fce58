/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-associative, LRU, sectored caches with fill times: L1, L2 and the instruction cache. */
#include <stdlib.h>
#include <string.h>

#include "cache_steps.h"

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

/* Renumbers a set's stamps 1 .. used in the same order, before its clock passes STAMP_MAX. */
void mpxkit__simt_cache_renumber(simt_cache *c, size_t s)
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

void mpxkit__simt_cache_read(simt_cache *c, uint64_t line, uint32_t sectors, int allocate,
			     simt_access *a)
{
	cache_read_at(c, line, NULL, sectors, allocate, a);
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

void mpxkit__simt_cache_prefetch(const simt_cache *c, uint64_t line)
{
	cache_prefetch(c, line);
}

void mpxkit__simt_cache_locate(const simt_cache *c, uint64_t line, simt_place *p)
{
	cache_locate(c, line, p);
}

void mpxkit__simt_cache_read_at(simt_cache *c, uint64_t line, const simt_place *p, uint32_t sectors,
				int allocate, simt_access *a)
{
	cache_read_at(c, line, p, sectors, allocate, a);
}

void mpxkit__simt_cache_fill(simt_cache *c, int64_t slot, uint32_t sectors, uint64_t ready)
{
	cache_fill(c, slot, sectors, ready);
}

void mpxkit__simt_cache_write_at(simt_cache *c, uint64_t line, const simt_place *p,
				 uint32_t sectors, uint64_t now, simt_access *a)
{
	cache_write_at(c, line, p, sectors, now, a);
}

void mpxkit__simt_cache_write(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t now,
			      simt_access *a)
{
	mpxkit__simt_cache_write_at(c, line, NULL, sectors, now, a);
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
	note_dirty(c, at.s, at.i, w->dirty);
	use(c, at, line);
	a->slot = (int64_t)slot;
	mpxkit__simt_cache_fill(c, a->slot, a->miss, ready);
}

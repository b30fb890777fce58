/* SPDX-License-Identifier: BSD-3-Clause */
/* The memory system: coalescing, per-SM L1 and instruction caches, shared L2, DRAM, shared memory.
 */
#include <stdlib.h>
#include <string.h>

#include "cache_steps.h"

#define WINDOW	   (16ull << 20) /* generic address windows of shared and local memory */
#define MAX_GROUPS 64		 /* 32 lanes of up to 32 bytes span at most 64 lines */

int mpxkit__simt_mem_init(simt_memsys *m, const mpxkit_simt_gpu *gpu)
{
	memset(m, 0, sizeof *m);
	m->gpu = gpu;
	m->line_shift = (uint32_t)__builtin_ctz(gpu->l2.line);
	m->l1_units = gpu->l1.sector / 32;
	for (uint32_t n = 0; n <= MAX_GROUPS; n++)
		m->tag_waves[n] =
		    (uint8_t)((n + gpu->l1_tags_per_cycle - 1) / gpu->l1_tags_per_cycle);
	m->l2_units = gpu->l2.sector / 32;
	m->l1 = calloc(gpu->sms, sizeof *m->l1);
	m->icache = gpu->icache.sets ? calloc(gpu->sms, sizeof *m->icache) : NULL;
	if (m->l1 == NULL || (gpu->icache.sets && m->icache == NULL) ||
	    mpxkit__simt_cache_init(&m->l2, &gpu->l2) < 0) {
		mpxkit__simt_mem_free(m);
		return -MPXKIT_ENOMEM;
	}
	return 0;
}

void mpxkit__simt_mem_free(simt_memsys *m)
{
	if (m->gpu == NULL)
		return;
	for (uint32_t s = 0; m->l1 && s < m->gpu->sms; s++) {
		mpxkit__simt_cache_free(&m->l1[s]);
		if (m->icache)
			mpxkit__simt_cache_free(&m->icache[s]);
	}
	free(m->l1);
	free(m->icache);
	mpxkit__simt_cache_free(&m->l2);
	memset(m, 0, sizeof *m);
}

int mpxkit__simt_mem_sm(simt_memsys *m, uint32_t sm)
{
	if (m->l1[sm].row == NULL && mpxkit__simt_cache_init(&m->l1[sm], &m->gpu->l1) < 0)
		return -MPXKIT_ENOMEM;
	if (m->icache && m->icache[sm].row == NULL &&
	    mpxkit__simt_cache_init(&m->icache[sm], &m->gpu->icache) < 0)
		return -MPXKIT_ENOMEM;
	return 0;
}

int mpxkit__simt_mem_kernel(simt_memsys *m, const mpxkit_simt_kernel *k, uint32_t kernel_index)
{
	/* L1 and instruction caches start empty for every kernel (each kernel has its own code). */
	for (uint32_t s = 0; s < m->gpu->sms; s++) {
		if (m->l1[s].row)
			mpxkit__simt_cache_flush(&m->l1[s]);
		if (m->icache && m->icache[s].row)
			mpxkit__simt_cache_flush(&m->icache[s]);
	}
	memset(&m->c, 0, sizeof m->c);
	m->shmem_base = k->shmem_base;
	m->local_base = k->local_base;
	/* Code lives in an address space of its own in L2, one 1 TiB window per kernel. */
	m->code_base = (1ull << 62) + ((uint64_t)kernel_index << 40);
	return 0;
}

/* The low n bits, n <= 32. */
static uint32_t low_bits(uint32_t n)
{
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Sector mask of a cache with `units` 32-byte units per sector, from a mask of 32-byte units. */
static uint32_t to_sectors(uint32_t units_mask, uint32_t units)
{
	uint32_t out = 0;

	if (units == 1)
		return units_mask;
	for (uint32_t s = 0; s * units < 32; s++)
		if ((units_mask >> (s * units)) & low_bits(units))
			out |= 1u << s;
	return out;
}

/* The 32-byte units of a sector mask. */
static uint32_t to_units(uint32_t sectors, uint32_t units)
{
	uint32_t out = 0;

	if (units == 1)
		return sectors;
	for (; sectors; sectors &= sectors - 1)
		out |= low_bits(units) << (__builtin_ctz(sectors) * units);
	return out;
}

/* ---- L2 and DRAM ---------------------------------------------------------------------------- */

/* Latency of reading units of a line from L2 at now (and DRAM behind it); fills what missed. */
static uint64_t l2_read(simt_memsys *m, uint64_t line, const simt_place *p, uint32_t units,
			uint64_t now, int count)
{
	const mpxkit_simt_gpu *g = m->gpu;
	uint32_t sectors = to_sectors(units, m->l2_units);
	uint64_t lat = 0;
	simt_access a;

	cache_read_at(&m->l2, line, p, sectors, 1, &a);
	if (a.hit) {
		lat = g->l2.latency;
		if (a.ready > now + lat)
			lat = a.ready - now; /* a fill under way: wait for it */
	}
	if (a.miss) {
		if (g->dram_latency > lat)
			lat = g->dram_latency;
		cache_fill(&m->l2, a.slot, a.miss, now + g->dram_latency);
	}
	m->c.dram_write += (uint64_t)mpxkit__simt_popcount_small(a.evicted_dirty) * m->l2_units;
	if (count) {
		m->c.l2_hits += (uint64_t)mpxkit__simt_popcount_small(a.hit);
		m->c.l2_misses += (uint64_t)mpxkit__simt_popcount_small(a.miss);
		m->c.dram_read += (uint64_t)mpxkit__simt_popcount_small(a.miss) * m->l2_units;
	}
	return lat;
}

static void l2_write(simt_memsys *m, uint64_t line, const simt_place *p, uint32_t units,
		     uint64_t now)
{
	simt_access a;

	cache_write_at(&m->l2, line, p, to_sectors(units, m->l2_units), now, &a);
	m->c.dram_write += (uint64_t)mpxkit__simt_popcount_small(a.evicted_dirty) * m->l2_units;
	if (!m->l2.write_back)
		m->c.dram_write += (uint64_t)mpxkit__simt_popcount_small(units);
}

/* ---- global and local memory ---------------------------------------------------------------- */

typedef struct group {
	uint64_t line;
	uint32_t units;		     /* 32-byte units touched in the line */
	simt_place l1, l2;	     /* where the line is or goes in SM's L1 and in L2, */
	const simt_place *at1, *at2; /* when located (else NULL: the access looks it up) */
} group;

/* 32-byte units lo..hi (0 <= lo <= hi <= 31) of a line. */
static uint32_t unit_range(uint64_t lo, uint64_t hi)
{
	return ((2u << hi) - 1) & ~((1u << lo) - 1);
}

/* The groups of one access by line: a small open-addressing table, its slots marked in used. */
typedef struct group_index {
	uint64_t used[2]; /* occupied slots of 128 */
	uint64_t line[128];
	uint8_t at[128]; /* the group's index */
} group_index;

/* Adds units of line to its group, or starts a group after the last one. */
static int add_group(group *g, group_index *x, int n, uint64_t line, uint32_t units)
{
	uint32_t h = (uint32_t)((line * 0x9E3779B97F4A7C15ull) >> 57);

	for (; x->used[h >> 6] >> (h & 63) & 1; h = (h + 1) & 127)
		if (x->line[h] == line) {
			g[x->at[h]].units |= units;
			return n;
		}
	if (n < MAX_GROUPS) {
		x->used[h >> 6] |= 1ull << (h & 63);
		x->line[h] = line;
		x->at[h] = (uint8_t)n;
		g[n].line = line;
		g[n].units = units;
		n++;
	}
	return n;
}

/*
 * Base and stride when every lane of mask follows them (a contiguous mask of
 * a mode-1 line, or anything of one lane); 0 otherwise.
 */
static int strided(const mpxkit_simt_inst *in, uint32_t mask, uint64_t *base, int64_t *step)
{
	int first = __builtin_ctz(mask);

	if (in->addr_mode != 1 || mask != in->mask)
		return 0;
	*base = in->addr[first];
	*step =
	    mpxkit__simt_popcount(mask) > 1 ? (int64_t)(in->addr[first + 1] - in->addr[first]) : 0;
	return 1;
}

/* The distinct lines and 32-byte units the lanes of mask touch, in lane order. */
static int coalesce(const simt_memsys *m, const mpxkit_simt_inst *in, uint32_t mask, group *g)
{
	uint32_t ls = m->line_shift;
	uint64_t off_mask = (1ull << ls) - 1, w1 = in->mem_width - 1, base;
	int64_t step;
	group_index x;
	int n = 0;

	/*
	 * Lanes at most 32 bytes apart touch every 32-byte unit between the
	 * lowest and the highest byte: the lines follow from the two ends.
	 */
	if (strided(in, mask, &base, &step) && step >= -32 && step <= 32) {
		uint64_t span =
		    (uint64_t)(step < 0 ? -step : step) * (mpxkit__simt_popcount(mask) - 1);
		uint64_t lo = step < 0 ? base - span : base,
			 hi = (step < 0 ? base : base + span) + w1;
		for (uint64_t line = lo >> ls;; line++) {
			uint64_t start = line << ls;
			uint64_t a = lo > start ? lo - start : 0;
			uint64_t b = hi - start <= off_mask ? hi - start : off_mask;
			if (n < MAX_GROUPS) {
				g[n].line = line;
				g[n].units = unit_range(a >> 5, b >> 5);
				n++;
			}
			if (line == hi >> ls)
				return n;
		}
	}

	x.used[0] = x.used[1] = 0;
	for (; mask; mask &= mask - 1) {
		uint64_t a = in->addr[__builtin_ctz(mask)], last = a + w1, line = a >> ls;
		if (last >> ls == line) {
			/* the common case: the lane's bytes lie in one line, often the previous
			 * lane's */
			uint32_t units = unit_range((a & off_mask) >> 5, (last & off_mask) >> 5);
			if (n > 0 && g[n - 1].line == line)
				g[n - 1].units |= units;
			else
				n = add_group(g, &x, n, line, units);
			continue;
		}
		for (;; line++) {
			uint64_t start = line << ls;
			uint64_t lo = a > start ? a - start : 0;
			uint64_t hi = last - start <= off_mask ? last - start : off_mask;
			n = add_group(g, &x, n, line, unit_range(lo >> 5, hi >> 5));
			if (line == last >> ls)
				break;
		}
	}
	return n;
}

/* Requests of request_bytes of consecutive lanes that hold an active lane (Maxwell/Pascal). */
static uint32_t requests(const mpxkit_simt_gpu *g, uint32_t mask, unsigned width)
{
	uint32_t per = g->l1_request_bytes >> __builtin_ctz(width), n = 0; /* powers of two */

	if (per >= 32)
		return mask ? 1 : 0;
	if (per == 0)
		per = 1;
	for (uint32_t lane = 0; lane < 32; lane += per)
		if ((mask >> lane) & ((1u << per) - 1))
			n++;
	return n;
}

/* A load of a line's units through L1 (cached) or around it; its latency. */
static uint64_t load_line(simt_memsys *m, uint32_t sm, const group *gr, int cached, int global,
			  uint64_t now)
{
	const mpxkit_simt_gpu *g = m->gpu;
	simt_cache *l1 = &m->l1[sm];
	uint64_t lat = 0, miss_lat, line = gr->line;
	uint32_t sectors, miss_units, units = gr->units;
	simt_access a;

	if (!cached) {
		m->c.l2_read += (uint64_t)mpxkit__simt_popcount_small(units);
		return l2_read(m, line, gr->at2, units, now, 1);
	}
	sectors = to_sectors(units, m->l1_units);
	cache_read_at(l1, line, gr->at1, sectors, 1, &a);
	m->c.l1_hits += (uint64_t)mpxkit__simt_popcount_small(a.hit);
	m->c.l1_misses += (uint64_t)mpxkit__simt_popcount_small(a.miss);
	if (global) {
		m->c.gld_l1_hits += (uint64_t)mpxkit__simt_popcount_small(a.hit);
		m->c.gld_l1_sectors += (uint64_t)mpxkit__simt_popcount_small(sectors);
	}
	if (a.evicted_dirty) /* a write-back L1 writes the victim's dirty sectors to L2 */
		l2_write(m, a.evicted_line, NULL, to_units(a.evicted_dirty, m->l1_units), now);
	if (a.hit) {
		lat = g->l1.latency;
		if (a.ready > now + lat)
			lat = a.ready - now;
	}
	if (a.miss) {
		miss_units = to_units(a.miss, m->l1_units);
		m->c.l2_read += (uint64_t)mpxkit__simt_popcount_small(miss_units);
		miss_lat = l2_read(m, line, gr->at2, miss_units, now, 1);
		cache_fill(l1, a.slot, a.miss, now + miss_lat);
		if (miss_lat > lat)
			lat = miss_lat;
	}
	return lat;
}

/* A store of a line's units: L1 by its policy, then L2 unless L1 keeps it; the ack latency. */
static uint64_t store_line(simt_memsys *m, uint32_t sm, const group *gr, uint64_t now)
{
	const mpxkit_simt_gpu *g = m->gpu;
	simt_cache *l1 = &m->l1[sm];
	simt_access a;

	cache_write_at(l1, gr->line, gr->at1, to_sectors(gr->units, m->l1_units), now, &a);
	if (l1->write_back) {
		if (a.evicted_dirty)
			l2_write(m, a.evicted_line, NULL, to_units(a.evicted_dirty, m->l1_units),
				 now);
		return g->l1.latency;
	}
	m->c.l2_write += (uint64_t)mpxkit__simt_popcount_small(gr->units);
	l2_write(m, gr->line, gr->at2, gr->units, now);
	return g->l2.latency;
}

/* An atomic: read and write in L2, around L1. */
static uint64_t atomic_line(simt_memsys *m, const group *gr, uint64_t now)
{
	uint64_t lat;

	m->c.l2_read += (uint64_t)mpxkit__simt_popcount_small(gr->units);
	m->c.l2_write += (uint64_t)mpxkit__simt_popcount_small(gr->units);
	lat = l2_read(m, gr->line, gr->at2, gr->units, now, 1);
	l2_write(m, gr->line, NULL, gr->units, now + lat);
	return lat;
}

static int l1_caches_load(const simt_memsys *m, const simt_opinfo *op, int space)
{
	if (space == MPXKIT_SIMT_LOCAL)
		return 1;
	if (op->l1 == SIMT_L1_CACHE)
		return 1;
	if (op->l1 == SIMT_L1_BYPASS)
		return 0;
	return m->gpu->l1_global_cached;
}

/*
 * The lines' host cache misses overlap: all rows first, then all records
 * (cache.c).  One line has nothing to overlap with but its L2 row, asked
 * for first; its lookups then go as they come, which saves locating it
 * ahead, the common coalesced access.
 */
static void locate(simt_memsys *m, uint32_t sm, group *grp, int n, int l1)
{
	if (n == 1) {
		cache_prefetch(&m->l2, grp[0].line);
		grp[0].at1 = grp[0].at2 = NULL;
		return;
	}
	for (int i = 0; i < n; i++) {
		if (l1)
			cache_prefetch(&m->l1[sm], grp[i].line);
		cache_prefetch(&m->l2, grp[i].line);
	}
	for (int i = 0; i < n; i++) {
		if (l1)
			cache_locate(&m->l1[sm], grp[i].line, &grp[i].l1);
		cache_locate(&m->l2, grp[i].line, &grp[i].l2);
		grp[i].at1 = l1 ? &grp[i].l1 : NULL;
		grp[i].at2 = &grp[i].l2;
	}
}

static void global_access(simt_memsys *m, uint32_t sm, const simt_opinfo *op,
			  const mpxkit_simt_inst *in, uint32_t mask, int space, uint64_t now,
			  simt_memresult *r)
{
	const mpxkit_simt_gpu *g = m->gpu;
	group grp[MAX_GROUPS];
	int n = coalesce(m, in, mask, grp);
	uint32_t tags = m->tag_waves[n];
	uint32_t req = requests(g, mask, in->mem_width), wave = req > tags ? req : tags;
	uint64_t lat = 0, sectors = 0;
	int cached = l1_caches_load(m, op, space);
	int l1 =
	    op->kind == MPXKIT_SIMT_KIND_STORE || (op->kind == MPXKIT_SIMT_KIND_LOAD && cached);

	locate(m, sm, grp, n, l1);
	for (int i = 0; i < n; i++) {
		uint64_t l;
		sectors += (uint64_t)mpxkit__simt_popcount_small(grp[i].units);
		if (op->kind == MPXKIT_SIMT_KIND_LOAD)
			l = load_line(m, sm, &grp[i], cached, space == MPXKIT_SIMT_GLOBAL, now);
		else if (op->kind == MPXKIT_SIMT_KIND_STORE)
			l = store_line(m, sm, &grp[i], now);
		else
			l = atomic_line(m, &grp[i], now);
		if (l > lat)
			lat = l;
	}
	if (op->kind == MPXKIT_SIMT_KIND_LOAD)
		*(space == MPXKIT_SIMT_LOCAL ? &m->c.lld_tx : &m->c.gld_tx) += sectors;
	else if (op->kind == MPXKIT_SIMT_KIND_STORE)
		*(space == MPXKIT_SIMT_LOCAL ? &m->c.lst_tx : &m->c.gst_tx) += sectors;
	if (n > 0) {
		lat +=
		    wave - 1; /* the last wavefront leaves the L1 wave - 1 cycles after the first */
		if (lat > r->latency)
			r->latency = lat;
		r->wavefronts += wave;
	}
	r->transactions += (uint32_t)sectors;
}

/* ---- shared memory -------------------------------------------------------------------------- */

static void shared_access(simt_memsys *m, const simt_opinfo *op, const mpxkit_simt_inst *in,
			  uint32_t mask, uint64_t base0, simt_memresult *r)
{
	const mpxkit_simt_gpu *g = m->gpu;
	uint32_t width = g->shared_width, banks = g->shared_banks, most = 0;

	uint64_t base;
	int64_t step;

	if (mask == 0)
		return;
	/*
	 * Lanes a fixed number of words apart, one word each: lane i's bank is
	 * (w0 + i s) mod banks, which repeats every banks / gcd(s, banks) lanes,
	 * so each bank serves ceil(lanes / period) distinct words (all lanes on
	 * one word: a broadcast).
	 */
	/*
	 * Banks and the word width are powers of two (gpu.c checks): the
	 * divisions are shifts and masks, and gcd(s, banks) for 0 < s < banks
	 * is s's lowest set bit; each a division less on an access in ten.
	 */
	if (strided(in, mask, &base, &step) && in->mem_width <= width &&
	    ((base - base0) & (width - 1)) == 0 && ((uint64_t)step & (width - 1)) == 0) {
		uint32_t wshift = (uint32_t)__builtin_ctz(width);
		uint64_t s = ((uint64_t)(step < 0 ? -step : step) >> wshift) & (banks - 1);
		uint64_t gcd = s ? s & (0 - s) : banks;
		uint32_t lanes = mpxkit__simt_popcount(mask), pshift;
		if (step == 0) {
			most = 1;
		} else {
			pshift = (uint32_t)__builtin_ctz(banks) - (uint32_t)__builtin_ctzll(gcd);
			most = (lanes + (1u << pshift) - 1) >> pshift; /* ceil(lanes / period) */
		}
		goto done;
	}
	if (++m->gen == 0) {
		memset(m->word_gen, 0, sizeof m->word_gen);
		m->gen = 1;
	}
	memset(m->bank_count, 0, banks * sizeof m->bank_count[0]);
	for (; mask; mask &= mask - 1) {
		uint64_t a = in->addr[__builtin_ctz(mask)] - base0;
		uint64_t first = a / width, last = (a + in->mem_width - 1) / width;
		for (uint64_t w = first; w <= last; w++) {
			uint32_t h = (uint32_t)((w * 0x9E3779B97F4A7C15ull) >> 55) & 511;
			while (m->word_gen[h] == m->gen && m->word_key[h] != w)
				h = (h + 1) & 511;
			if (m->word_gen[h] == m->gen)
				continue; /* the same word: one broadcast serves every lane */
			m->word_gen[h] = m->gen;
			m->word_key[h] = w;
			if (++m->bank_count[w & (banks - 1)] > most)
				most = m->bank_count[w & (banks - 1)];
		}
	}
done:
	if (g->shared_latency + most - 1 > r->latency)
		r->latency = g->shared_latency + most - 1;
	r->wavefronts += most;
	r->shared = 1;
	r->transactions += most;
	if (op->kind == MPXKIT_SIMT_KIND_LOAD)
		m->c.sld_tx += most;
	else if (op->kind == MPXKIT_SIMT_KIND_STORE)
		m->c.sst_tx += most;
}

/* ---- one instruction ------------------------------------------------------------------------ */

void mpxkit__simt_mem_access(simt_memsys *m, uint32_t sm, const simt_opinfo *op,
			     const mpxkit_simt_inst *in, uint64_t now, simt_memresult *r)
{
	uint32_t mask = in->mask, shared = 0, local = 0, global = 0;

	memset(r, 0, sizeof *r);
	if (in->mem_width == 0 || mask == 0)
		return;
	switch (op->space) {
	case MPXKIT_SIMT_SHARED:
		shared = mask;
		break;
	case MPXKIT_SIMT_LOCAL:
		local = mask;
		break;
	case MPXKIT_SIMT_GLOBAL:
		global = mask;
		break;
	default: /* generic: the address decides, lane by lane */
		for (uint32_t k = mask; k; k &= k - 1) {
			int lane = __builtin_ctz(k);
			uint64_t a = in->addr[lane];
			if (a >= m->shmem_base && a - m->shmem_base < WINDOW)
				shared |= 1u << lane;
			else if (a >= m->local_base && a - m->local_base < WINDOW)
				local |= 1u << lane;
			else
				global |= 1u << lane;
		}
	}
	if (shared)
		shared_access(m, op, in, shared,
			      op->space == MPXKIT_SIMT_SHARED ? 0 : m->shmem_base, r);
	if (local)
		global_access(m, sm, op, in, local, MPXKIT_SIMT_LOCAL, now, r);
	if (global)
		global_access(m, sm, op, in, global, MPXKIT_SIMT_GLOBAL, now, r);
}

/* Brings instruction line iline into SM sm's instruction cache from L2 at now; its arrival. */
static uint64_t fetch_line(simt_memsys *m, simt_cache *ic, uint64_t iline, uint64_t now)
{
	const mpxkit_simt_gpu *g = m->gpu;
	uint32_t ishift = (uint32_t)__builtin_ctz(g->icache.line);
	uint64_t lat = 0, ready;
	simt_access a;

	if (mpxkit__simt_cache_read_mru(ic, iline, 1, &ready))
		return ready > now ? ready : now;
	mpxkit__simt_cache_read(ic, iline, 1, 1, &a);
	if (a.hit)
		return a.ready > now ? a.ready : now;
	m->c.icache_misses++;
	/* The line's bytes come through L2 (code address space), not counted as data traffic. */
	for (uint64_t b = iline << ishift; b < (iline + 1) << ishift; b += g->l2.line) {
		uint64_t span = g->icache.line < g->l2.line ? g->icache.line : g->l2.line;
		uint64_t off = b & (g->l2.line - 1);
		uint32_t units = low_bits((uint32_t)(span / 32)) << (off / 32);
		uint64_t l = l2_read(m, b >> m->line_shift, NULL, units, now, 0);
		if (l > lat)
			lat = l;
	}
	cache_fill(ic, a.slot, 1, now + lat);
	return now + lat;
}

uint64_t mpxkit__simt_mem_fetch(simt_memsys *m, uint32_t sm, uint64_t pc, uint64_t now)
{
	simt_cache *ic = &m->icache[sm];
	uint32_t ishift = (uint32_t)__builtin_ctz(m->gpu->icache.line);
	uint64_t iline = (m->code_base + pc) >> ishift, misses = m->c.icache_misses;
	uint64_t ready = fetch_line(m, ic, iline, now);

	/* A miss also requests the next lines (sequential fetch-ahead), all at once. */
	if (m->c.icache_misses != misses)
		for (uint32_t k = 1; k <= m->gpu->icache_prefetch; k++)
			fetch_line(m, ic, iline + k, now);
	return ready;
}

void mpxkit__simt_mem_copy(simt_memsys *m, uint64_t addr, uint64_t size, uint64_t now)
{
	uint64_t cap = (uint64_t)m->gpu->l2.sets * m->gpu->l2.ways * m->gpu->l2.line;
	uint64_t end, first, last;

	if (size == 0)
		return;
	end = addr + size - 1 < addr ? UINT64_MAX : addr + size - 1;
	/* Only the last L2-full of a copy can stay in L2: skip what would be evicted anyway. */
	if (end - addr + 1 > cap)
		addr = end - cap + 1;
	first = addr >> m->line_shift;
	last = end >> m->line_shift;
	for (uint64_t line = first;; line++) {
		uint64_t base = line << m->line_shift;
		uint64_t lo = addr > base ? addr - base : 0;
		uint64_t hi = end - base < m->gpu->l2.line ? end - base : m->gpu->l2.line - 1;
		uint32_t units = unit_range(lo >> 5, hi >> 5);
		simt_access a;
		mpxkit__simt_cache_install(&m->l2, line, to_sectors(units, m->l2_units), now, &a);
		/* A copy writes whole sectors; dirty data it evicts goes to DRAM outside any
		 * kernel. */
		if (line == last)
			break;
	}
}

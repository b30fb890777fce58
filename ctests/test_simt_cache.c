/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIMT cache model against a brute-force reference on random address streams. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "simt_impl.h"

/*
 * The reference keeps each set as an array in recency order (most recent
 * first) and moves entries by shifting: obviously LRU, nothing shared with
 * the model's recency lists and valid prefixes.
 */
typedef struct ref_line {
	uint64_t tag;
	uint32_t valid, dirty;
} ref_line;

typedef struct ref_cache {
	uint32_t sets, ways, write_back;
	ref_line *line; /* sets * ways */
	uint32_t *used; /* lines held per set */
} ref_cache;

static void ref_init(ref_cache *r, uint32_t sets, uint32_t ways, int write_back)
{
	r->sets = sets;
	r->ways = ways;
	r->write_back = (uint32_t)write_back;
	r->line = calloc((size_t)sets * ways, sizeof *r->line);
	r->used = calloc(sets, sizeof *r->used);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->used);
}

static void ref_free(ref_cache *r)
{
	free(r->line);
	free(r->used);
}

/* Moves entry i of set s to the front; returns the front. */
static ref_line *to_front(ref_cache *r, uint32_t s, uint32_t i)
{
	ref_line *set = &r->line[(size_t)s * r->ways], keep = set[i];
	memmove(&set[1], &set[0], i * sizeof *set);
	set[0] = keep;
	return &set[0];
}

/* Finds line; when absent and insert is set, inserts it at the front (evicting the last). */
static ref_line *ref_find(ref_cache *r, uint64_t line, int insert, uint32_t *evicted_dirty)
{
	uint32_t s = (uint32_t)(line % r->sets), n = r->used[s];
	ref_line *set = &r->line[(size_t)s * r->ways];

	*evicted_dirty = 0;
	for (uint32_t i = 0; i < n; i++)
		if (set[i].tag == line)
			return to_front(r, s, i);
	if (!insert)
		return NULL;
	if (n == r->ways) {
		*evicted_dirty = set[n - 1].dirty;
		n--;
	} else {
		r->used[s]++;
	}
	memmove(&set[1], &set[0], n * sizeof *set);
	set[0].tag = line;
	set[0].valid = set[0].dirty = 0;
	return &set[0];
}

static void ref_read(ref_cache *r, uint64_t line, uint32_t sectors, uint32_t *hit,
		     uint32_t *evicted)
{
	ref_line *l = ref_find(r, line, 1, evicted);
	*hit = l->valid & sectors;
	l->valid |= sectors;
}

static void ref_write(ref_cache *r, uint64_t line, uint32_t sectors, uint32_t *hit,
		      uint32_t *evicted)
{
	ref_line *l = ref_find(r, line, r->write_back, evicted);
	*hit = l ? l->valid & sectors : 0;
	if (l && r->write_back) {
		l->valid |= sectors;
		l->dirty |= sectors;
	}
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * One random stream: reads and writes over a footprint a few times the
 * cache, with a locality knob so hits and evictions both happen often.
 * With spread, the lines are scattered over 48 bits, so that lines of one
 * set share their 16-bit tag hash now and then.  Half the accesses go
 * through a place located up to three accesses before (mpxkit__simt_cache_
 * locate, then the _at call), with other accesses, to the same sets or not,
 * in between: the answers must be the plain calls'.
 */
static void compare(uint32_t sets, uint32_t ways, uint32_t spl, int write_back, int spread,
		    uint64_t seed, unsigned n)
{
	mpxkit_simt_cache_desc d = {sets, ways, 32 * spl, 32, 0, (uint8_t)write_back};
	simt_cache c;
	ref_cache ref;
	uint64_t s = seed, footprint = (uint64_t)sets * ways * 3 + 1, hits = 0, evictions = 0;
	uint64_t *lines = malloc(n * sizeof *lines);
	uint32_t *sectors = malloc(n * sizeof *sectors);
	unsigned char *write = malloc(n), *located = calloc(n, 1);
	simt_place *place = malloc(n * sizeof *place);
	unsigned bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(lines);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sectors);
	CU_ASSERT_PTR_NOT_NULL_FATAL(write);
	CU_ASSERT_PTR_NOT_NULL_FATAL(located);
	CU_ASSERT_PTR_NOT_NULL_FATAL(place);
	for (unsigned i = 0; i < n; i++) {
		lines[i] = rng(&s) %
			   (rng(&s) % 4 == 0 ? (spread ? 1u << 20 : footprint) : footprint / 4 + 1);
		if (spread)
			lines[i] = (lines[i] * 0xD1B54A32D192ED03ull) >> 16;
		sectors[i] = (uint32_t)(rng(&s) & ((spl == 32 ? 0xffffffffu : (1u << spl) - 1)));
		if (sectors[i] == 0)
			sectors[i] = 1;
		write[i] = rng(&s) % 3 == 0;
	}
	d.line = 32 * spl;
	CU_ASSERT_EQUAL_FATAL(mpxkit__simt_cache_init(&c, &d), 0);
	ref_init(&ref, sets, ways, write_back);
	for (unsigned i = 0; i < n && bad < 5; i++) {
		uint32_t want_hit, want_ev;
		unsigned ahead = i + (unsigned)(rng(&s) % 4);
		simt_access a;
		if (rng(&s) % 2 && ahead < n && !located[ahead]) {
			mpxkit__simt_cache_locate(&c, lines[ahead], &place[ahead]);
			located[ahead] = 1;
		}
		if (write[i]) {
			mpxkit__simt_cache_write_at(&c, lines[i], located[i] ? &place[i] : NULL,
						    sectors[i], i, &a);
			ref_write(&ref, lines[i], sectors[i], &want_hit, &want_ev);
		} else {
			mpxkit__simt_cache_read_at(&c, lines[i], located[i] ? &place[i] : NULL,
						   sectors[i], 1, &a);
			ref_read(&ref, lines[i], sectors[i], &want_hit, &want_ev);
			/* the model's read reports what missed too */
			if (a.miss != (sectors[i] & ~want_hit))
				bad++;
		}
		if (a.hit != want_hit || a.evicted_dirty != want_ev) {
			if (bad++ < 3)
				fprintf(stderr,
					"\n  access %u line %llu sectors %x %s: hit %x want %x, "
					"evicted dirty %x want %x",
					i, (unsigned long long)lines[i], sectors[i],
					write[i] ? "write" : "read", a.hit, want_hit,
					a.evicted_dirty, want_ev);
		}
		hits += a.hit != 0;
		evictions += want_ev != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* the stream exercised both outcomes */
	CU_ASSERT(hits > n / 20);
	if (write_back)
		CU_ASSERT(evictions > 0);
	mpxkit__simt_cache_free(&c);
	ref_free(&ref);
	free(lines);
	free(sectors);
	free(write);
	free(located);
	free(place);
}

static void test_geometries(void)
{
	static const uint32_t geo[][3] = {
	    {1, 1, 1}, {1, 8, 4}, {4, 2, 4}, {64, 6, 4}, {3, 5, 2}, {16, 16, 1}, {7, 3, 32},
	};
	for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
		for (int wb = 0; wb < 2; wb++)
			compare(geo[g][0], geo[g][1], geo[g][2], wb, g % 2,
				0x9E3779B97F4A7C15ull + g * 2 + (uint64_t)wb, 20000);
	/* long enough for each set's recency stamps to be renumbered several times */
	compare(2, 5, 4, 1, 0, 0x2545F4914F6CDD1Dull, 400000);
	/* 48-bit lines: 16-bit tag hashes collide within a set, located or not */
	compare(1, 24, 4, 1, 1, 0x94D049BB133111EBull, 400000);
}

/* Flushing empties the cache: everything misses again. */
static void test_flush(void)
{
	mpxkit_simt_cache_desc d = {4, 2, 128, 32, 0, MPXKIT_SIMT_WRITE_THROUGH};
	simt_cache c;
	simt_access a;

	CU_ASSERT_EQUAL_FATAL(mpxkit__simt_cache_init(&c, &d), 0);
	mpxkit__simt_cache_read(&c, 5, 0xf, 1, &a);
	mpxkit__simt_cache_read(&c, 5, 0xf, 1, &a);
	CU_ASSERT_EQUAL(a.hit, 0xf);
	mpxkit__simt_cache_flush(&c);
	mpxkit__simt_cache_read(&c, 5, 0xf, 1, &a);
	CU_ASSERT_EQUAL(a.hit, 0);
	mpxkit__simt_cache_free(&c);
}

/* A sector filled at time 100 reports that time to a hit; a write-back store sets it to now. */
static void test_fill_times(void)
{
	mpxkit_simt_cache_desc d = {4, 2, 128, 32, 0, MPXKIT_SIMT_WRITE_BACK};
	simt_cache c;
	simt_access a;

	CU_ASSERT_EQUAL_FATAL(mpxkit__simt_cache_init(&c, &d), 0);
	mpxkit__simt_cache_read(&c, 9, 0x3, 1, &a);
	CU_ASSERT_EQUAL(a.miss, 0x3);
	mpxkit__simt_cache_fill(&c, a.slot, a.miss, 100);
	mpxkit__simt_cache_read(&c, 9, 0x1, 1, &a);
	CU_ASSERT_EQUAL(a.hit, 0x1);
	CU_ASSERT_EQUAL(a.ready, 100);
	mpxkit__simt_cache_write(&c, 9, 0x4, 50, &a);
	mpxkit__simt_cache_read(&c, 9, 0x4, 1, &a);
	CU_ASSERT_EQUAL(a.hit, 0x4);
	CU_ASSERT_EQUAL(a.ready, 50);
	mpxkit__simt_cache_free(&c);
}

static const cutest_case cases[] = {
    {"against brute-force LRU on random streams", test_geometries},
    {"flush", test_flush},
    {"fill times", test_fill_times},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"simt cache", cases, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_simt_cache", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* .pcz: round trips of every kind of block, damage detection, grouping by hand, thread safety. */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "cutest.h"
#include "mpxkit/pcz.h"
#include "pcz_impl.h"

/* ---- A dump held in plain arrays, written and compared independently of the codec ---- */

#define MAXU 16
#define MAXE 8
#define MAXS 6

struct tunit {
	char name[32];
	size_t n_steps;
	uint64_t times[2 * MAXS];
	uint64_t values[MAXS * MAXE];
	int cpu, numa;
};

struct tregion {
	char name[32];
	size_t n_units;
	struct tunit units[MAXU];
};

static int setup(void)
{
	return cutest_scratch_make("pcz");
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const char *const events8[MAXE] = { "A", "B", "C", "D", "E", "F", "G", "H" };

/* The regions' units as the writer takes them, added to w. */
static void add_all(mpxkit_pcz_writer *w, const struct tregion *regs, size_t n_regs)
{
	mpxkit_diag d = { 0 };

	for (size_t g = 0; g < n_regs; g++) {
		mpxkit_pcz_unit u[MAXU];
		for (size_t k = 0; k < regs[g].n_units; k++) {
			const struct tunit *t = &regs[g].units[k];
			u[k] = (mpxkit_pcz_unit){ t->name, t->n_steps, t->times, t->values, t->cpu,
						  t->numa };
		}
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, regs[g].name, regs[g].n_units,
								   u, &d),
				      0);
	}
}

/* The memory writer's bytes must be the file writer's, byte for byte. */
static void memory_matches_file(const char *path, const struct tregion *regs, size_t n_regs,
				size_t n_events, const mpxkit_pcz_options *opt)
{
	mpxkit_pcz_writer *w;
	mpxkit_diag d = { 0 };
	void *mem = NULL;
	size_t len = 0, flen;
	uint8_t *file;
	FILE *f = fopen(path, "rb");

	CU_ASSERT_FATAL(f != NULL);
	fseek(f, 0, SEEK_END);
	flen = (size_t)ftell(f);
	rewind(f);
	file = malloc(flen + 1);
	CU_ASSERT_FATAL(file != NULL);
	CU_ASSERT_EQUAL_FATAL(fread(file, 1, flen, f), flen);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(opt, n_events, events8, &w, &d), 0);
	add_all(w, regs, n_regs);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &mem, &len, &d), 0);
	CU_ASSERT_EQUAL(len, flen);
	CU_ASSERT(len == flen && memcmp(mem, file, len) == 0);
	free(mem);
	free(file);
}

/* Writes regions with the library, then checks every value that comes back. */
static void round_trip(const struct tregion *regs, size_t n_regs, size_t n_events,
		       const mpxkit_pcz_options *opt)
{
	const char *path = cutest_scratch_path("rt.pcz");
	mpxkit_pcz_writer *w;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag d = { 0 };
	size_t i = 0;
	int rc;

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, opt, n_events, events8, &w, &d), 0);
	add_all(w, regs, n_regs);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, &d), 0);
	memory_matches_file(path, regs, n_regs, n_events, opt);
	rc = mpxkit_pcz_reader_open(path, &r, &d);
	if (rc < 0)
		fprintf(stderr, "open: %s\n", d.msg);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_n_events(r), n_events);
	while ((rc = mpxkit_pcz_reader_next(r, &reg, &d)) == 1) {
		const struct tregion *want = &regs[i++];
		CU_ASSERT_FATAL(i <= n_regs);
		CU_ASSERT_STRING_EQUAL(reg->name, want->name);
		CU_ASSERT_EQUAL_FATAL(reg->n_units, want->n_units);
		for (size_t k = 0; k < reg->n_units; k++) {
			const mpxkit_pcz_unit *x = &reg->units[k];
			const struct tunit *t = &want->units[k];
			CU_ASSERT_STRING_EQUAL(x->name, t->name);
			CU_ASSERT_EQUAL_FATAL(x->n_steps, t->n_steps);
			CU_ASSERT(memcmp(x->times, t->times, 2 * t->n_steps * 8) == 0);
			CU_ASSERT(memcmp(x->values, t->values, t->n_steps * n_events * 8) == 0);
			if (opt && opt->placement) {
				CU_ASSERT_EQUAL(x->cpu, t->cpu);
				CU_ASSERT_EQUAL(x->numa, t->numa);
			} else {
				CU_ASSERT_EQUAL(x->cpu, -1);
			}
		}
	}
	if (rc < 0)
		fprintf(stderr, "next: %s\n", d.msg);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(i, n_regs);
	mpxkit_pcz_reader_free(r);
}

/* Homogeneous units: a base per event plus small per-unit noise, as threads of one loop. */
static void fill_region(struct tregion *g, const char *name, size_t n_units, size_t n_steps,
			size_t n_events, uint64_t t0)
{
	uint64_t base[MAXE];

	snprintf(g->name, sizeof g->name, "%s", name);
	g->n_units = n_units;
	for (size_t e = 0; e < n_events; e++)
		base[e] = 1000 + rnd() % 1000000;
	for (size_t k = 0; k < n_units; k++) {
		struct tunit *t = &g->units[k];
		snprintf(t->name, sizeof t->name, "thread%zu", k);
		t->n_steps = n_steps;
		t->cpu = (int)k;
		t->numa = (int)(k / 4);
		for (size_t s = 0; s < n_steps; s++) {
			t->times[2 * s] = t0 + 1000 * s + rnd() % 7;
			t->times[2 * s + 1] = t->times[2 * s] + 900 + rnd() % 50;
			for (size_t e = 0; e < n_events; e++)
				t->values[s * n_events + e] = base[e] + (rnd() % 4 ? rnd() % 300 : 0);
		}
	}
}

static struct tregion regs[600];

static void test_round_trip_vectors(void)
{
	mpxkit_pcz_options o;
	for (size_t g = 0; g < 40; g++) {
		char name[16];
		snprintf(name, sizeof name, "dump%zu", g + 1);
		fill_region(&regs[g], name, 1 + g % MAXU, 1, 5, 10000 * g);
	}
	for (int codec = 0; codec <= 3; codec++)
		for (int grouping = 0; grouping <= 3; grouping++) {
			mpxkit_pcz_options_init(&o);
			o.codec = (mpxkit_pcz_codec)codec;
			o.grouping = (mpxkit_pcz_grouping)grouping;
			/* The model codec (version 2) has no groups. */
			if (o.codec != MPXKIT_PCZ_MODEL || o.grouping == MPXKIT_PCZ_GROUP_NONE)
				round_trip(regs, 40, 5, &o);
		}
	round_trip(regs, 40, 5, NULL);
}

static void test_round_trip_series(void)
{
	mpxkit_pcz_options o;
	mpxkit_pcz_options_init(&o);
	o.placement = 1;
	for (size_t g = 0; g < 20; g++)
		fill_region(&regs[g], g % 3 ? "loop" : "init", 1 + g % 9, MAXS, MAXE, 77 * g);
	round_trip(regs, 20, MAXE, &o);
	o.codec = MPXKIT_PCZ_ZLIB;
	round_trip(regs, 20, MAXE, &o);
}

/* Units of one region with different step counts: differenced only within a shape. */
static void test_round_trip_unequal(void)
{
	fill_region(&regs[0], "r", 8, MAXS, 3, 0);
	for (size_t k = 0; k < 8; k++)
		regs[0].units[k].n_steps = 1 + k % 3;
	fill_region(&regs[1], "r", 8, 2, 3, 5000);
	regs[1].units[7].n_steps = 1;
	round_trip(regs, 2, 3, NULL);
}

static void test_round_trip_single_unit(void)
{
	for (size_t g = 0; g < 30; g++)
		fill_region(&regs[g], "solo", 1, 1 + g % 2, 4, g * 100);
	round_trip(regs, 30, 4, NULL);
}

/*
 * Counters equal to their step's duration (callgrind's Ir under an instruction
 * clock), in time series of changing durations, through every codec and level
 * class: the DURATION predictor must bring them back exactly.
 */
static void test_round_trip_duration(void)
{
	static const int levels[][2] = { { 0, 0 }, { 1, 1 }, { 1, 9 }, { 2, 1 }, { 2, 19 } };
	mpxkit_pcz_options o;

	for (size_t g = 0; g < 12; g++) {
		fill_region(&regs[g], "kernel", 1 + g % 5, 1 + g % MAXS, 3, 5000 * g);
		for (size_t k = 0; k < regs[g].n_units; k++) {
			struct tunit *t = &regs[g].units[k];
			for (size_t s = 0; s < t->n_steps; s++)
				t->values[s * 3] = t->times[2 * s + 1] - t->times[2 * s] + (k == 2);
		}
	}
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
		mpxkit_pcz_options_init(&o);
		o.codec = (mpxkit_pcz_codec)levels[i][0];
		o.level = levels[i][1];
		round_trip(regs, 12, 3, &o);
	}
}

/*
 * The predictor bytes by hand: one unit, A = end - start = 123456, B = 5.
 * A costs 3 varint bytes as itself (HISTORY or NONE, zigzag 246912) and 1
 * as its difference from the duration, so DURATION (2); B costs 1 byte under
 * HISTORY and NONE and 3 under DURATION, so HISTORY (0), the lower of the tie.
 */
static void test_duration_predictor_by_hand(void)
{
	static const char *const ev[] = { "A", "B" };
	const uint64_t times[2] = { 1000, 1000 + 123456 }, values[2] = { 123456, 5 };
	const mpxkit_pcz_unit u = { "t0", 1, times, values, -1, -1 };
	const char *path = cutest_scratch_path("dur.pcz");
	mpxkit_pcz_options o;
	mpxkit_pcz_writer *w;
	mpxkit_diag d = { 0 };
	uint8_t b[512];
	size_t n, off = PCZ_HEADER_SIZE;
	FILE *f;

	mpxkit_pcz_options_init(&o);
	o.codec = MPXKIT_PCZ_STORED;
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, &o, 2, ev, &w, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, &d), 0);
	f = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(b, 1, sizeof b, f);
	fclose(f);
	/* Skip META and EVENTS: frame, stored_size bytes, payload CRC. */
	for (int sec = 0; sec < 2 && off + 16 <= n; sec++)
		off += PCZ_FRAME_SIZE + pcz_le32(b + off + 4) + 4;
	CU_ASSERT_FATAL(off + PCZ_FRAME_SIZE + 4 <= n);
	CU_ASSERT_EQUAL(b[off], PCZ_REGIONS);
	CU_ASSERT_EQUAL(b[off + 1], MPXKIT_PCZ_STORED);
	off += PCZ_FRAME_SIZE;
	CU_ASSERT_EQUAL(b[off], 1);     /* one region */
	CU_ASSERT(b[off + 1] <= 1);     /* a layout */
	CU_ASSERT_EQUAL(b[off + 2], 2); /* A: DURATION */
	CU_ASSERT_EQUAL(b[off + 3], 0); /* B: HISTORY */
}

/*
 * The fast coder's predictor choice by hand (the defaults: zstd 1, no groups).
 * One unit, 40 vector dumps, so the sample is every row; costs in quarter
 * bytes (4 a varint byte, 1 for a value equal to one of the two before it).
 * A equals the duration, 100000 + 7919 g: DURATION codes 0 every time,
 * 4 + 39 = 43; HISTORY codes 200000 (3 bytes), then 15838 (2) over and over,
 * 12 + 8 + 38 = 58; NONE never repeats.  So DURATION (2).  B = 5000 + 1000 g:
 * HISTORY codes 10000, then 2000 over and over, 8 + 8 + 38 = 54; NONE 2- and
 * 3-byte numbers that never repeat.  So HISTORY (0).  C alternates 300000
 * and 7: NONE codes 600000 and 14, then repeats of the one two back,
 * 12 + 4 + 38 = 54; HISTORY codes 600000, 599985, 599986 before its repeats
 * start, 36 + 37 = 73.  So NONE (1).
 */
static uint8_t *load(const char *path, size_t *len);
static int decode_all(const uint8_t *b, size_t n, mpxkit_diag *d);

static void test_fast_predictors_by_hand(void)
{
	static const char *const ev[] = { "A", "B", "C" };
	const char *path = cutest_scratch_path("fast.pcz");
	mpxkit_pcz_writer *w;
	mpxkit_diag d = { 0 };
	pcz_decompressor dz = { 0 };
	uint8_t *b, raw[4096];
	size_t n, off = PCZ_HEADER_SIZE;
	uint64_t t = 0;

	mpxkit_pcz_options o;

	/* The fast coder is version 1's: zstd at a fast level, no groups. */
	mpxkit_pcz_options_init(&o);
	o.codec = MPXKIT_PCZ_ZSTD;
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, &o, 3, ev, &w, &d), 0);
	for (uint64_t g = 0; g < 40; g++) {
		uint64_t dur = 100000 + 7919 * g, times[2] = { t, t + dur };
		uint64_t values[3] = { dur, 5000 + 1000 * g, g % 2 ? 7 : 300000 };
		const mpxkit_pcz_unit u = { "t0", 1, times, values, -1, -1 };
		char name[16];
		snprintf(name, sizeof name, "dump%u", (unsigned)g + 1);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, name, 1, &u, &d), 0);
		t += dur;
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, &d), 0);
	b = load(path, &n);
	CU_ASSERT_EQUAL(decode_all(b, n, &d), 0);
	/* Skip META and EVENTS, then inflate the REGIONS payload. */
	for (int sec = 0; sec < 2 && off + 16 <= n; sec++)
		off += PCZ_FRAME_SIZE + pcz_le32(b + off + 4) + 4;
	CU_ASSERT_FATAL(off + PCZ_FRAME_SIZE + 4 <= n);
	CU_ASSERT_EQUAL(b[off], PCZ_REGIONS);
	CU_ASSERT_EQUAL_FATAL(b[off + 1], MPXKIT_PCZ_ZSTD);
	CU_ASSERT_FATAL(pcz_le32(b + off + 8) <= sizeof raw);
	CU_ASSERT_EQUAL_FATAL(pcz_decompress_with(&dz, MPXKIT_PCZ_ZSTD, b + off + PCZ_FRAME_SIZE,
						  pcz_le32(b + off + 4), raw,
						  pcz_le32(b + off + 8)),
			      0);
	CU_ASSERT_EQUAL(raw[0], 40);     /* regions */
	CU_ASSERT(raw[1] <= 1);          /* a layout */
	CU_ASSERT_EQUAL(raw[2], 2);      /* A: DURATION */
	CU_ASSERT_EQUAL(raw[3], 0);      /* B: HISTORY */
	CU_ASSERT_EQUAL(raw[4], 1);      /* C: NONE */
	pcz_decompressor_free(&dz);
	free(b);
}

static void test_round_trip_zero_and_max(void)
{
	mpxkit_pcz_options o;
	fill_region(&regs[0], "zero", 5, 2, 4, 0);
	for (size_t k = 0; k < 5; k++) {
		memset(regs[0].units[k].values, 0, sizeof regs[0].units[k].values);
		memset(regs[0].units[k].times, 0, sizeof regs[0].units[k].times);
	}
	fill_region(&regs[1], "max", 5, 2, 4, 0);
	for (size_t k = 0; k < 5; k++)
		for (size_t i = 0; i < 2 * 4; i++)
			regs[1].units[k].values[i] = (k + i) % 2 ? UINT64_MAX : UINT64_MAX - k;
	/* A clock that runs backwards and wraps: still stored exactly. */
	regs[1].units[0].times[0] = UINT64_MAX;
	regs[1].units[0].times[1] = 3;
	fill_region(&regs[2], "mixed", 4, 1, 4, 0);
	regs[2].units[1].values[0] = UINT64_MAX;
	regs[2].units[2].values[1] = 0;
	mpxkit_pcz_options_init(&o);
	round_trip(regs, 3, 4, &o);
	o.codec = MPXKIT_PCZ_ZSTD;
	round_trip(regs, 3, 4, &o);
	o.grouping = MPXKIT_PCZ_GROUP_BALANCE;
	o.threshold_ppm = 0;
	round_trip(regs, 3, 4, &o);
}

/* Enough regions for many REGIONS sections with a small chunk size. */
static void test_round_trip_many_regions(void)
{
	mpxkit_pcz_options o;
	mpxkit_pcz_stats st;
	mpxkit_pcz_reader *r;

	for (size_t g = 0; g < 600; g++) {
		char name[16];
		snprintf(name, sizeof name, "k%zu", g % 7);
		fill_region(&regs[g], name, 1 + g % 5, 1, 3, 1000 * g);
	}
	mpxkit_pcz_options_init(&o);
	o.chunk_size = 1024;
	round_trip(regs, 600, 3, &o);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open(cutest_scratch_path("rt.pcz"), &r, NULL), 0);
	mpxkit_pcz_reader_stats(r, &st);
	CU_ASSERT(st.n_region_sections > 5);
	CU_ASSERT_EQUAL(st.n_regions, 600);
	mpxkit_pcz_reader_free(r);
}

static void test_meta_and_topology(void)
{
	const char *path = cutest_scratch_path("meta.pcz");
	mpxkit_pcz_writer *w;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	const char *k, *v, *xml;
	mpxkit_diag d = { 0 };
	size_t len;

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, NULL, 2, events8, &w, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "host", "node 7", &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "host", "again", &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "bad key", "x", &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "k", "line\nbreak", &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_topology(w, NULL, 0, &d), 0);
	fill_region(&regs[0], "r", 2, 1, 2, 0);
	{
		mpxkit_pcz_unit u[2] = {
			{ regs[0].units[0].name, 1, regs[0].units[0].times, regs[0].units[0].values,
			  -1, -1 },
			{ regs[0].units[1].name, 1, regs[0].units[1].times, regs[0].units[1].values,
			  -1, -1 },
		};
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 2, u, &d), 0);
		/* Metadata belongs before the data. */
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "late", "x", &d), -MPXKIT_ESTATE);
		/* One name twice in a region is ambiguous. */
		u[1].name = u[0].name;
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 2, u, &d), -MPXKIT_EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "twice"));
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open(path, &r, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_n_meta(r), 2);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_meta(r, 0, &k, &v), 0);
	CU_ASSERT_STRING_EQUAL(k, "host");
	CU_ASSERT_STRING_EQUAL(v, "node 7");
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_meta(r, 1, &k, &v), 0);
	CU_ASSERT_STRING_EQUAL(v, "again");
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_meta(r, 2, &k, &v), -MPXKIT_ERANGE);
	xml = mpxkit_pcz_reader_topology(r, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
	CU_ASSERT(len > 100 && strncmp(xml, "<?xml", 5) == 0);
	CU_ASSERT_PTR_NOT_NULL(memmem(xml, len, "<topology", 9));
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_next(r, &reg, &d), 1);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_next(r, &reg, &d), 0);
	mpxkit_pcz_reader_free(r);
}

/*
 * Unit names against the last region's (the MODEL writer compares each with
 * the entry its place had there before it hashes one): repeats, a name that
 * extends or shortens the one it is compared with, a swap, a duplicate and
 * bad names among repeats; every region read back with its names.
 */
static void test_names_against_last_region(void)
{
	static const char *const regions[][3] = {
		{ "a", "b", NULL },    { "a", "b", NULL },  { "ab", "b", NULL }, { "a", "", NULL },
		{ "b", "a", NULL },    { "a", "a", NULL },  { "a", "b\n", NULL }, { "a", "b,", NULL },
		{ "a", NULL, NULL },   { "b", "ab", "a" },  { "b", "ab", "a" }, { "bb", "a", "ab" },
		/* The last region's first units only, then all of them again, then one twice
		 * past the last region's units. */
		{ "a", "b", NULL },    { "a", NULL, NULL }, { "a", "b", "a" },  { "a", "b", NULL },
		{ "a", "b", "b" },     { "a", "b", "a" },   { "a", "b", "c" },
	};
	/* Which add: a bad name, twice in a region, or an empty one fails alone. */
	static const int ok[] = { 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1 };
	size_t n_units[] = { 2, 2, 2, 2, 2, 2, 2, 2, 1, 3, 3, 3, 2, 1, 3, 2, 3, 3, 3 };
	uint64_t times[2] = { 0, 100 }, values[2] = { 5, 7 };
	mpxkit_pcz_writer *w;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag d = { 0 };
	void *bytes;
	size_t len, g = 0;
	char name[16];

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(NULL, 2, events8, &w, &d), 0);
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		mpxkit_pcz_unit u[3];
		for (size_t k = 0; k < n_units[i]; k++)
			u[k] = (mpxkit_pcz_unit){ regions[i][k], 1, times, values, -1, -1 };
		snprintf(name, sizeof name, "r%zu", i);
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, name, n_units[i], u, &d),
				ok[i] ? 0 : -MPXKIT_EINVAL);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &bytes, &len, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open_mem(bytes, len, "names", &r, &d), 0);
	while (mpxkit_pcz_reader_next(r, &reg, &d) == 1) {
		while (g < sizeof ok / sizeof ok[0] && !ok[g])
			g++;
		CU_ASSERT_FATAL(g < sizeof ok / sizeof ok[0]);
		snprintf(name, sizeof name, "r%zu", g);
		CU_ASSERT_STRING_EQUAL(reg->name, name);
		CU_ASSERT_EQUAL_FATAL(reg->n_units, n_units[g]);
		for (size_t k = 0; k < n_units[g]; k++)
			CU_ASSERT_STRING_EQUAL(reg->units[k].name, regions[g][k]);
		g++;
	}
	CU_ASSERT_EQUAL(g, sizeof ok / sizeof ok[0]);
	mpxkit_pcz_reader_free(r);
	free(bytes);
}

/* ---- Damage ----------------------------------------------------------------------- */

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(1 << 20);
	*len = f && b ? fread(b, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return b;
}

/* Opens and decodes everything: 0 only for an intact file. */
static int decode_all(const uint8_t *b, size_t n, mpxkit_diag *d)
{
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	int rc = mpxkit_pcz_reader_open_mem(b, n, "t.pcz", &r, d);

	if (rc < 0)
		return rc;
	while ((rc = mpxkit_pcz_reader_next(r, &reg, d)) == 1)
		;
	mpxkit_pcz_reader_free(r);
	return rc;
}

static size_t sample(mpxkit_pcz_codec codec, uint8_t **buf)
{
	mpxkit_pcz_options o;
	size_t len;

	mpxkit_pcz_options_init(&o);
	o.codec = codec;
	o.placement = 1;
	for (size_t g = 0; g < 4; g++)
		fill_region(&regs[g], "s", 3, 1 + g % 2, 3, 100 * g);
	round_trip(regs, 4, 3, &o);
	*buf = load(cutest_scratch_path("rt.pcz"), &len);
	return len;
}

static void test_every_bit_flip_detected(void)
{
	for (int codec = 0; codec <= 3; codec++) {
		uint8_t *b;
		size_t n = sample((mpxkit_pcz_codec)codec, &b), undetected = 0;
		mpxkit_diag d = { 0 };
		CU_ASSERT_FATAL(n > 50);
		CU_ASSERT_EQUAL(decode_all(b, n, &d), 0);
		for (size_t bit = 0; bit < 8 * n; bit++) {
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (decode_all(b, n, &d) >= 0)
				undetected++;
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		CU_ASSERT_EQUAL(undetected, 0);
		free(b);
	}
}

static void test_every_truncation_detected(void)
{
	static const mpxkit_pcz_codec codecs[] = { MPXKIT_PCZ_ZSTD, MPXKIT_PCZ_MODEL };

	for (size_t c = 0; c < 2; c++) {
		uint8_t *b;
		size_t n = sample(codecs[c], &b), undetected = 0;
		mpxkit_diag d = { 0 };
		for (size_t len = 0; len < n; len++)
			if (decode_all(b, len, &d) >= 0)
				undetected++;
		CU_ASSERT_EQUAL(undetected, 0);
		CU_ASSERT_EQUAL(decode_all(b, n - 1, &d), -MPXKIT_ETRUNC);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "t.pcz: offset"));
		free(b);
	}
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Reserved bits and versions are checked on their own, not only through the CRC. */

/* ---- Version 2 ---------------------------------------------------------------------------- */

/* A version-2 section frame at *off: its type, payload and size; *off moves past it. */
static int v2_section(const uint8_t *b, size_t n, size_t *off, const uint8_t **payload,
		      size_t *len)
{
	pcz_cur c = { b + *off + 2, b + n, b, 0 };
	uint64_t stored, raw;
	int type = b[*off];

	if (pcz_get_varint(&c, &stored) != 0 || pcz_get_varint(&c, &raw) != 0)
		return -1;
	*payload = c.p;
	*len = (size_t)stored;
	*off = (size_t)(c.p - b) + (size_t)stored + 4;
	return type;
}

/* The REGIONS payload of a one-section version-2 file in memory. */
static const uint8_t *v2_regions(const uint8_t *b, size_t n, size_t *len)
{
	size_t off = PCZ_HEADER_SIZE;
	const uint8_t *p = NULL;

	while (off < n) {
		int type = v2_section(b, n, &off, &p, len);
		if (type == PCZ_REGIONS || type < 0)
			return type < 0 ? NULL : p;
	}
	return NULL;
}

/*
 * The version-2 predictor bytes by hand, one unit over 40 regions with
 * durations d that change each time: A = d (DURATION, 2, ties RATIO and
 * MATCH and wins as the lower byte), B = 3 d (RATIO, 3: 3 d_h scaled by
 * d / d_h is exact, and MATCH ties it from above), C = 7 always (HISTORY, 0),
 * D = 1000 + region number (HISTORY misses by 1, RATIO by far more).  The
 * durations, 100000 + 7919 g, are best from HISTORY (off by 7919).
 */
static void test_model_predictors_by_hand(void)
{
	static const char *const ev[] = { "A", "B", "C", "D" };
	mpxkit_pcz_writer *w;
	mpxkit_diag d = { 0 };
	void *mem;
	size_t n, len;
	const uint8_t *p;
	uint64_t t = 0;
	pcz_bitr b;

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(NULL, 4, ev, &w, &d), 0);
	for (uint64_t g = 0; g < 40; g++) {
		uint64_t dur = 100000 + 7919 * g, times[2] = { t, t + dur };
		uint64_t values[4] = { dur, 3 * dur, 7, 1000 + g };
		const mpxkit_pcz_unit u = { "t0", 1, times, values, -1, -1 };
		char name[16];
		snprintf(name, sizeof name, "dump%u", (unsigned)g + 1);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, name, 1, &u, &d), 0);
		t += dur;
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &mem, &n, &d), 0);
	CU_ASSERT_EQUAL(decode_all(mem, n, &d), 0);
	CU_ASSERT_EQUAL(((uint8_t *)mem)[4], 2);           /* version 2 */
	CU_ASSERT_EQUAL(((uint8_t *)mem)[PCZ_HEADER_SIZE], PCZ_EVENTS); /* no META */
	p = v2_regions(mem, n, &len);
	CU_ASSERT_FATAL(p != NULL && len > 6);
	CU_ASSERT_EQUAL(p[0], 40); /* regions */
	/* The predictors open the tables, 3 bits each, least significant bit first. */
	pcz_bitr_init(&b, p + 1, len - 1);
	CU_ASSERT_EQUAL(pcz_bitr_get(&b, 3), PCZ_V2_HISTORY);  /* duration */
	CU_ASSERT_EQUAL(pcz_bitr_get(&b, 3), PCZ_V2_DURATION); /* A */
	CU_ASSERT_EQUAL(pcz_bitr_get(&b, 3), PCZ_V2_RATIO);    /* B */
	CU_ASSERT_EQUAL(pcz_bitr_get(&b, 3), PCZ_V2_HISTORY);  /* C */
	CU_ASSERT_EQUAL(pcz_bitr_get(&b, 3), PCZ_V2_HISTORY);  /* D */
	free(mem);
}

/* More events than column models (PCZ_MODEL_COLUMNS): the last model is shared, exactly. */
static void test_model_many_events(void)
{
	enum { E = 70, U = 3, G = 25 };
	static char names[E][8];
	const char *ev[E];
	static uint64_t times[G][U][2], values[G][U][E];
	mpxkit_pcz_writer *w;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag d = { 0 };
	void *mem;
	size_t n, g = 0;
	int rc;

	for (size_t e = 0; e < E; e++) {
		snprintf(names[e], sizeof names[e], "ev%zu", e);
		ev[e] = names[e];
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(NULL, E, ev, &w, &d), 0);
	for (size_t k = 0; k < G; k++) {
		mpxkit_pcz_unit u[U];
		for (size_t x = 0; x < U; x++) {
			times[k][x][0] = 1000 * k;
			times[k][x][1] = 1000 * k + 900 + rnd() % 90;
			for (size_t e = 0; e < E; e++)
				values[k][x][e] = e % 3 ? rnd() : (e * 1000 + rnd() % 7);
			u[x] = (mpxkit_pcz_unit){ x == 0 ? "a" : x == 1 ? "b" : "c", 1, times[k][x],
						  values[k][x], -1, -1 };
		}
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, "r", U, u, &d), 0);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &mem, &n, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open_mem(mem, n, "many", &r, &d), 0);
	while ((rc = mpxkit_pcz_reader_next(r, &reg, &d)) == 1) {
		CU_ASSERT_EQUAL_FATAL(reg->n_units, U);
		for (size_t x = 0; x < U; x++) {
			CU_ASSERT(memcmp(reg->units[x].times, times[g][x], sizeof times[g][x]) == 0);
			CU_ASSERT(memcmp(reg->units[x].values, values[g][x], sizeof values[g][x]) == 0);
		}
		g++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(g, G);
	mpxkit_pcz_reader_free(r);
	free(mem);
}

/* The model codec takes no level and no groups; the version-1 codecs keep both. */
static void test_model_options_checked(void)
{
	mpxkit_pcz_options o;
	mpxkit_pcz_writer *w = NULL;
	mpxkit_diag d = { 0 };

	mpxkit_pcz_options_init(&o);
	CU_ASSERT_EQUAL(o.codec, MPXKIT_PCZ_MODEL);
	o.level = 3;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 5, events8, &w, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "no level"));
	o.level = 0;
	o.grouping = MPXKIT_PCZ_GROUP_AUTO;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 5, events8, &w, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "grouping"));
	o.codec = MPXKIT_PCZ_ZSTD;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 5, events8, &w, &d), 0);
	mpxkit_pcz_writer_abort(w);
}

/* Event names: a bad one and the first repeat are named, below and above 64 events. */
static void test_events_checked(void)
{
	static char names[100][8];
	const char *ev[100];
	mpxkit_pcz_writer *w = NULL;
	mpxkit_diag d = { 0 };
	char want[32];

	for (size_t i = 0; i < 100; i++) {
		snprintf(names[i], sizeof names[i], "E%zu", i);
		ev[i] = names[i];
	}
	for (size_t n = 3; n <= 100; n += 97) {
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(NULL, n, ev, &w, &d), 0);
		mpxkit_pcz_writer_abort(w);
		ev[n - 1] = "E1";
		ev[n - 2] = "E0";
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(NULL, n, ev, &w, &d), -MPXKIT_EINVAL);
		CU_ASSERT_STRING_EQUAL(d.msg, "event 'E0' given twice");
		ev[n - 2] = "a,b";
		CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(NULL, n, ev, &w, &d), -MPXKIT_EINVAL);
		snprintf(want, sizeof want, "event %zu: bad name", n - 1);
		CU_ASSERT_STRING_EQUAL(d.msg, want);
		ev[n - 2] = names[n - 2];
		ev[n - 1] = names[n - 1];
	}
}

/*
 * The bits `mpxkit info` gives each column and the structure add up to the
 * REGIONS payload exactly; a column that is 0 throughout has a one-symbol
 * table and costs nothing.
 */
/*
 * MATCH's sorted window against the definition, by brute force: of the 64
 * rows before, the closest duration, ties to the most recent; durations from
 * small sets, so that equal ones and equal gaps on both sides are common.
 */
static void test_model_match_window(void)
{
	static uint64_t dur[5000];
	static const uint64_t spread[] = { 4, 50, 1000000, UINT64_MAX };
	pcz_window w;
	size_t wrong = 0;

	memset(&w, 0x5a, sizeof w); /* nothing of before may leak through a reset */
	for (size_t k = 0; k < sizeof spread / sizeof spread[0]; k++) {
		pcz_window_reset(&w);
		for (size_t i = 0; i < 5000; i++) {
			uint64_t best = UINT64_MAX, gap = UINT64_MAX;
			dur[i] = spread[k] == UINT64_MAX ? UINT64_MAX - rnd() % 3 : 1000 + rnd() % spread[k];
			for (size_t j = i > PCZ_MATCH_WINDOW ? i - PCZ_MATCH_WINDOW : 0; j < i; j++) {
				uint64_t g = dur[j] > dur[i] ? dur[j] - dur[i] : dur[i] - dur[j];
				if (g <= gap) { /* later rows win ties */
					gap = g;
					best = j;
				}
			}
			wrong += pcz_window_match_push(&w, dur[i]) != best;
		}
	}
	CU_ASSERT_EQUAL(wrong, 0);
}

static void zero_column_costs_nothing(void)
{
	static const char *const ev[] = { "A", "Z" };
	mpxkit_pcz_writer *w;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag d = { 0 };
	uint64_t bits, t = 0;
	void *mem;
	size_t n;

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(NULL, 2, ev, &w, &d), 0);
	for (unsigned g = 0; g < 30; g++) {
		uint64_t times[2] = { t, t + 1000 + rnd() % 500 }, values[2] = { rnd() % 100000, 0 };
		const mpxkit_pcz_unit u = { "t0", 1, times, values, -1, -1 };
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), 0);
		t = times[1];
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &mem, &n, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open_mem(mem, n, "zero", &r, &d), 0);
	mpxkit_pcz_reader_count_bits(r);
	while (mpxkit_pcz_reader_next(r, &reg, &d) == 1)
		;
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, 3, &bits), 0); /* Z */
	CU_ASSERT_EQUAL(bits, 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, 0, &bits), 0); /* the starts: the ends */
	CU_ASSERT_EQUAL(bits, 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, 2, &bits), 0); /* A: random */
	CU_ASSERT(bits > 30 * 10);
	mpxkit_pcz_reader_free(r);
	free(mem);
}

static void test_model_coded_bits_add_up(void)
{
	uint8_t *b;
	size_t n = sample(MPXKIT_PCZ_MODEL, &b), len, W = 2 + 3;
	const uint8_t *p = v2_regions(b, n, &len);
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag d = { 0 };
	uint64_t sum = 0, bits;

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open_mem(b, n, "bits", &r, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, 0, &bits), -MPXKIT_ESTATE);
	mpxkit_pcz_reader_count_bits(r);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, W, &bits), -MPXKIT_ERANGE);
	while (mpxkit_pcz_reader_next(r, &reg, &d) == 1)
		;
	for (size_t col = 0; col <= W; col++) {
		CU_ASSERT_EQUAL(mpxkit_pcz_reader_coded_bits(r, col < W ? col : SIZE_MAX, &bits), 0);
		sum += bits;
	}
	CU_ASSERT_EQUAL(sum, 8 * (uint64_t)len);
	mpxkit_pcz_reader_free(r);
	free(b);
	zero_column_costs_nothing();
}

static void test_reserved_bits_checked(void)
{
	uint8_t *b;
	size_t n = sample(MPXKIT_PCZ_STORED, &b);
	mpxkit_diag d = { 0 };

	b[6] |= 0x01; /* header flags */
	put32(b + 8, pcz_crc32(b, 8));
	CU_ASSERT_EQUAL(decode_all(b, n, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "reserved"));
	b[6] = 0;
	b[4] = 3; /* a version from the future */
	put32(b + 8, pcz_crc32(b, 8));
	CU_ASSERT_EQUAL(decode_all(b, n, &d), -MPXKIT_EVERSION);
	b[4] = 1;
	put32(b + 8, pcz_crc32(b, 8));
	CU_ASSERT_EQUAL(decode_all(b, n, &d), 0);
	/* The first section frame starts at 12; its reserved u16 is at 14. */
	b[12 + 3] = 0x80;
	put32(b + 12 + 12, pcz_crc32(b + 12, 12));
	CU_ASSERT_EQUAL(decode_all(b, n, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "reserved"));
	free(b);
}

/* Each writer kind refuses the other's close, and frees itself anyway (valgrind checks). */
static void test_close_kind_checked(void)
{
	mpxkit_pcz_writer *w;
	mpxkit_diag d = { 0 };
	void *mem = (void *)&d;
	size_t len = 1;

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(NULL, 1, events8, &w, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_close(w, &d), -MPXKIT_ESTATE);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(cutest_scratch_path("kind.pcz"), NULL, 1, events8, &w, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_close_memory(w, &mem, &len, &d), -MPXKIT_ESTATE);
	CU_ASSERT(mem == NULL);
	CU_ASSERT_EQUAL(len, 0);
	CU_ASSERT(access(cutest_scratch_path("kind.pcz"), F_OK) != 0);
}

static void test_not_a_pcz(void)
{
	mpxkit_diag d = { 0 };
	mpxkit_pcz_reader *r;

	CU_ASSERT_EQUAL(decode_all((const uint8_t *)"hello, world", 12, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "magic"));
	CU_ASSERT_EQUAL(decode_all((const uint8_t *)"", 0, &d), -MPXKIT_ETRUNC);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_open(cutest_scratch_path("missing.pcz"), &r, &d), -MPXKIT_ESYS);
	CU_ASSERT_EQUAL(d.sys_errno, 2);
}

/* ---- Grouping by hand ----------------------------------------------------------------- */

static void test_balance_by_hand(void)
{
	uint64_t a[] = { 100, 90, 80 }, b[] = { 0, 0 }, c[] = { 3, 7 }, e[] = { UINT64_MAX, 1 };
	CU_ASSERT_EQUAL(pcz_balance_ppm(a, 3), 800000);
	CU_ASSERT_EQUAL(pcz_balance_ppm(b, 2), 1000000);
	CU_ASSERT_EQUAL(pcz_balance_ppm(c, 2), 428571); /* floor(3e6 / 7) */
	CU_ASSERT_EQUAL(pcz_balance_ppm(e, 2), 0);      /* 1e6 / 2^64 rounds down to 0 */
	CU_ASSERT_EQUAL(pcz_balance_ppm(a, 0), 1000000);
	CU_ASSERT_EQUAL(pcz_balance_q8(1000000), 255);
	CU_ASSERT_EQUAL(pcz_balance_q8(428571), 109); /* floor(255 * 0.428571) */
}

static void test_cluster_by_hand(void)
{
	uint64_t dur[] = { 100, 95, 50, 48, 10 };
	size_t idx[] = { 0, 1, 2, 3, 4 }, cl[5];

	/* Sorted 10 48 50 95 100; neighbour ratios .21 .96 .53 .95 against 0.9. */
	CU_ASSERT_EQUAL(pcz_cluster(dur, idx, 5, 900000, cl), 3);
	CU_ASSERT_EQUAL(idx[0], 4);
	CU_ASSERT_EQUAL(idx[1], 3);
	CU_ASSERT_EQUAL(idx[2], 2);
	CU_ASSERT_EQUAL(idx[3], 1);
	CU_ASSERT_EQUAL(idx[4], 0);
	CU_ASSERT_EQUAL(cl[0], 0);
	CU_ASSERT_EQUAL(cl[1], 1);
	CU_ASSERT_EQUAL(cl[2], 1);
	CU_ASSERT_EQUAL(cl[3], 2);
	CU_ASSERT_EQUAL(cl[4], 2);
	/* At threshold 0.5 only the 10 stands apart. */
	for (size_t i = 0; i < 5; i++)
		idx[i] = i;
	CU_ASSERT_EQUAL(pcz_cluster(dur, idx, 5, 500000, cl), 2);
}

static mpxkit_pcz_unit unit_of(const char *name, const uint64_t *times, const uint64_t *values,
			       size_t n_steps)
{
	return (mpxkit_pcz_unit){ name, n_steps, times, values, -1, -1 };
}

static void test_medoid_by_hand(void)
{
	uint64_t t[2] = { 0, 10 }, v1[] = { 10, 12, 100 }, v2[] = { 0, 100, 120 };
	mpxkit_pcz_unit u[3];
	size_t members[] = { 0, 1, 2 };

	/* cost(10) = 1 + 2, cost(12) = 1 + 2, cost(100) = 2 + 2: a tie, the lower index wins. */
	for (int i = 0; i < 3; i++)
		u[i] = unit_of("u", t, &v1[i], 1);
	CU_ASSERT_EQUAL(pcz_diff_cost(&v1[1], &v1[0], 1), 1);
	CU_ASSERT_EQUAL(pcz_diff_cost(&v1[2], &v1[0], 1), 2);
	CU_ASSERT_EQUAL(pcz_medoid(u, members, 3, 1), 0);
	/* cost(0) = 2 + 2, cost(100) = 2 + 1, cost(120) = 2 + 1: 100 wins the tie with 120. */
	for (int i = 0; i < 3; i++)
		u[i] = unit_of("u", t, &v2[i], 1);
	CU_ASSERT_EQUAL(pcz_medoid(u, members, 3, 1), 1);
	/* Equal elements cost nothing. */
	CU_ASSERT_EQUAL(pcz_diff_cost(v1, v1, 3), 0);
}

static void test_plan_by_hand(void)
{
	uint64_t t_long[2] = { 0, 100 }, t_short[2] = { 0, 10 }, t2[4] = { 0, 50, 50, 100 };
	uint64_t v[2 * 3] = { 5, 5, 5, 6, 6, 6 };
	mpxkit_pcz_unit u[4];
	pcz_plan p;

	for (int i = 0; i < 3; i++)
		u[i] = unit_of("u", t_long, v, 1);
	u[3] = unit_of("u", t_short, v, 1);
	/* Balance 0.1 < 0.9: AUTO falls back to clusters {0, 1, 2} and a raw unit 3. */
	CU_ASSERT_EQUAL_FATAL(pcz_plan_region(u, 4, 3, MPXKIT_PCZ_GROUP_AUTO, 900000, &p), 0);
	CU_ASSERT_EQUAL(p.balance_ppm, 100000);
	CU_ASSERT_EQUAL(p.n_groups, 1);
	CU_ASSERT_EQUAL(p.group_of[0], 0);
	CU_ASSERT_EQUAL(p.group_of[2], 0);
	CU_ASSERT_EQUAL(p.group_of[3], SIZE_MAX);
	CU_ASSERT_EQUAL(p.group_ref[0], 0);
	pcz_plan_free(&p);
	/* BALANCE below the threshold: everything raw. */
	CU_ASSERT_EQUAL_FATAL(pcz_plan_region(u, 4, 3, MPXKIT_PCZ_GROUP_BALANCE, 900000, &p), 0);
	CU_ASSERT_EQUAL(p.n_groups, 0);
	pcz_plan_free(&p);
	/* Threshold 0: balanced by definition, one group. */
	CU_ASSERT_EQUAL_FATAL(pcz_plan_region(u, 4, 3, MPXKIT_PCZ_GROUP_BALANCE, 0, &p), 0);
	CU_ASSERT_EQUAL(p.n_groups, 1);
	CU_ASSERT_EQUAL(p.group_of[3], 0);
	pcz_plan_free(&p);
	CU_ASSERT_EQUAL_FATAL(pcz_plan_region(u, 4, 3, MPXKIT_PCZ_GROUP_NONE, 0, &p), 0);
	CU_ASSERT_EQUAL(p.n_groups, 0);
	pcz_plan_free(&p);
	/* Shapes {1, 2, 1, 2} steps with equal durations: groups {0, 2} and {1, 3}. */
	u[0] = unit_of("u", t_long, v, 1);
	u[1] = unit_of("u", t2, v, 2);
	u[2] = unit_of("u", t_long, v, 1);
	u[3] = unit_of("u", t2, v, 2);
	CU_ASSERT_EQUAL_FATAL(pcz_plan_region(u, 4, 3, MPXKIT_PCZ_GROUP_AUTO, 900000, &p), 0);
	CU_ASSERT_EQUAL(p.n_groups, 2);
	CU_ASSERT_EQUAL(p.group_of[0], 0);
	CU_ASSERT_EQUAL(p.group_of[2], 0);
	CU_ASSERT_EQUAL(p.group_of[1], 1);
	CU_ASSERT_EQUAL(p.group_of[3], 1);
	pcz_plan_free(&p);
}

static void test_varint_canonical(void)
{
	const uint8_t pad[] = { 0x81, 0x00 }, ok[] = { 0x81, 0x01 }, big[10] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02
	};
	pcz_cur c = { pad, pad + 2, pad, 0 };
	uint64_t v;

	CU_ASSERT_EQUAL(pcz_get_varint(&c, &v), -1);
	c = (pcz_cur){ ok, ok + 2, ok, 0 };
	CU_ASSERT_EQUAL(pcz_get_varint(&c, &v), 0);
	CU_ASSERT_EQUAL(v, 129);
	c = (pcz_cur){ big, big + 10, big, 0 };
	CU_ASSERT_EQUAL(pcz_get_varint(&c, &v), -1);
	CU_ASSERT_EQUAL(pcz_zigzag((uint64_t)-1), 1);
	CU_ASSERT_EQUAL(pcz_zigzag(1), 2);
	CU_ASSERT_EQUAL(pcz_unzigzag(pcz_zigzag(UINT64_MAX / 2 + 1)), UINT64_MAX / 2 + 1);
	{
		char n[64];
		CU_ASSERT_EQUAL(pcz_name_next("dump9", n, sizeof n), 0);
		CU_ASSERT_STRING_EQUAL(n, "dump10");
		CU_ASSERT_EQUAL(pcz_name_next("dump", n, sizeof n), -1);
		CU_ASSERT_EQUAL(pcz_name_next("dump07", n, sizeof n), -1);
		CU_ASSERT_EQUAL(pcz_name_next("x999999999999999999", n, sizeof n), 0);
		CU_ASSERT_STRING_EQUAL(n, "x1000000000000000000");
	}
	/* The writer's test without building the name agrees with pcz_name_next on every pair. */
	{
		static const char *const pre[] = { "", "dump", "a1b", "x-" };
		static const char *const num[] = { "",  "0",  "1",   "07", "9",   "10",  "11",
						   "99", "100", "0100", "999999999999999999",
						   "1000000000000000000", "9999999999999999999",
						   "10000000000000000000", "12x" };
		size_t disagree = 0, np = sizeof pre / sizeof pre[0], nn = sizeof num / sizeof num[0];
		char a[64], b[64], next[64];
		for (size_t i = 0; i < np * nn; i++)
			for (size_t j = 0; j < np * nn; j++) {
				int ref;
				snprintf(a, sizeof a, "%s%s", pre[i / nn], num[i % nn]);
				snprintf(b, sizeof b, "%s%s", pre[j / nn], num[j % nn]);
				ref = pcz_name_next(a, next, sizeof next) == 0 && strcmp(next, b) == 0;
				disagree += ref != pcz_name_is_next(a, strlen(a), b, strlen(b));
			}
		CU_ASSERT_EQUAL(disagree, 0);
		CU_ASSERT(pcz_name_is_next("dump99", 6, "dump100", 7));
		CU_ASSERT(!pcz_name_is_next("dump99", 6, "dump0100", 8));
	}
}

/*
 * The library's CRC32 (folded with PCLMULQDQ where the CPU has it) against
 * zlib's crc32(), the reference the format names: every length 0..1100 at
 * every alignment 0..7, long buffers, a running CRC fed in pieces, and the
 * check value of CRC-32/ISO-HDLC.
 */
static void test_crc32_matches_zlib(void)
{
	static uint8_t buf[70000];
	static const size_t big[] = { 4096, 4096 + 13, 65537, 69000 };
	size_t bad = 0;
	uint32_t pieces = 0;

	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(rnd() >> 7);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n <= 1100; n++)
			bad += pcz_crc32(buf + off, n) !=
			       (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf + off, (uInt)n);
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
		bad += pcz_crc32_update(0x12345678u, buf + 3, big[i]) !=
		       (uint32_t)crc32(0x12345678u, buf + 3, (uInt)big[i]);
	CU_ASSERT_EQUAL(bad, 0);
	for (size_t at = 0; at < sizeof buf; at += 997)
		pieces = pcz_crc32_update(pieces, buf + at,
					  sizeof buf - at < 997 ? sizeof buf - at : 997);
	CU_ASSERT_EQUAL(pieces, (uint32_t)crc32(0L, buf, (uInt)sizeof buf));
	CU_ASSERT_EQUAL(pcz_crc32("123456789", 9), 0xCBF43926u);
}

/* ---- Threads ------------------------------------------------------------------------- */

enum { N_THREADS = 4, N_PER_THREAD = 50 };

struct job {
	mpxkit_pcz_writer *w;
	int id, rc;
};

/* Region r of thread i holds 3 units whose values encode (i, r, unit, event). */
static uint64_t tval(int i, int r, int k, int e)
{
	return (uint64_t)i * 1000000 + (uint64_t)r * 1000 + (uint64_t)k * 10 + (uint64_t)e;
}

static void *adder(void *arg)
{
	struct job *j = arg;
	for (int r = 0; r < N_PER_THREAD && j->rc == 0; r++) {
		uint64_t times[3][2], values[3][4];
		mpxkit_pcz_unit u[3];
		char name[32], uname[3][8];
		snprintf(name, sizeof name, "t%d-r%d", j->id, r);
		for (int k = 0; k < 3; k++) {
			snprintf(uname[k], sizeof uname[k], "u%d", k);
			times[k][0] = (uint64_t)r * 100;
			times[k][1] = (uint64_t)r * 100 + 90 + (uint64_t)k;
			for (int e = 0; e < 4; e++)
				values[k][e] = tval(j->id, r, k, e);
			u[k] = (mpxkit_pcz_unit){ uname[k], 1, times[k], values[k], -1, -1 };
		}
		j->rc = mpxkit_pcz_writer_add_region(j->w, name, 3, u, NULL);
	}
	return NULL;
}

/* Each thread is one unit of every region, as a PAPI component's threads at PAPI_stop. */
static void *stager(void *arg)
{
	struct job *j = arg;
	for (int r = 0; r < N_PER_THREAD && j->rc == 0; r++) {
		uint64_t times[2] = { (uint64_t)r * 100, (uint64_t)r * 100 + 50 }, values[4];
		char uname[16];
		mpxkit_pcz_unit u;
		snprintf(uname, sizeof uname, "thread%d", j->id);
		for (int e = 0; e < 4; e++)
			values[e] = tval(j->id, r, 0, e);
		u = (mpxkit_pcz_unit){ uname, 1, times, values, j->id, 0 };
		j->rc = mpxkit_pcz_writer_stage_unit(j->w, "stop", &u, NULL);
	}
	return NULL;
}

static void run_threads(void *(*fn)(void *), const char *path)
{
	mpxkit_pcz_options o;
	pthread_t t[N_THREADS];
	struct job jobs[N_THREADS];
	mpxkit_pcz_writer *w;

	mpxkit_pcz_options_init(&o);
	o.chunk_size = 2048; /* sections close while other threads add */
	o.placement = 1;
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, &o, 4, events8, &w, NULL), 0);
	for (int i = 0; i < N_THREADS; i++) {
		jobs[i] = (struct job){ w, i, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, fn, &jobs[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(jobs[i].rc, 0);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, NULL), 0);
}

static void test_threads_add_regions(void)
{
	const char *path = cutest_scratch_path("threads.pcz");
	int seen[N_THREADS][N_PER_THREAD] = { { 0 } }, rc, n = 0;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;

	run_threads(adder, path);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open(path, &r, NULL), 0);
	while ((rc = mpxkit_pcz_reader_next(r, &reg, NULL)) == 1) {
		int i, g;
		CU_ASSERT_FATAL(sscanf(reg->name, "t%d-r%d", &i, &g) == 2);
		CU_ASSERT_FATAL(i >= 0 && i < N_THREADS && g >= 0 && g < N_PER_THREAD);
		seen[i][g]++;
		CU_ASSERT_EQUAL_FATAL(reg->n_units, 3);
		for (int k = 0; k < 3; k++)
			for (int e = 0; e < 4; e++)
				CU_ASSERT_EQUAL(reg->units[k].values[e], tval(i, g, k, e));
		n++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(n, N_THREADS * N_PER_THREAD);
	for (int i = 0; i < N_THREADS; i++)
		for (int g = 0; g < N_PER_THREAD; g++)
			CU_ASSERT_EQUAL(seen[i][g], 1);
	mpxkit_pcz_reader_free(r);
}

static void test_threads_stage_units(void)
{
	const char *path = cutest_scratch_path("staged.pcz");
	int next[N_THREADS] = { 0 }, rc, n = 0;
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;

	run_threads(stager, path);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open(path, &r, NULL), 0);
	/* Region k holds the k-th stop of every thread, whatever the interleaving. */
	while ((rc = mpxkit_pcz_reader_next(r, &reg, NULL)) == 1) {
		CU_ASSERT_STRING_EQUAL(reg->name, "stop");
		CU_ASSERT_EQUAL_FATAL(reg->n_units, N_THREADS);
		for (size_t k = 0; k < reg->n_units; k++) {
			int i;
			CU_ASSERT_FATAL(sscanf(reg->units[k].name, "thread%d", &i) == 1);
			CU_ASSERT_EQUAL(reg->units[k].cpu, i);
			CU_ASSERT_EQUAL(reg->units[k].values[2], tval(i, next[i], 0, 2));
			next[i]++;
		}
		n++;
	}
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(n, N_PER_THREAD);
	mpxkit_pcz_reader_free(r);
}

/* ---- CSV ----------------------------------------------------------------------------- */

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* pack then unpack, as text; NULL when packing failed (diag filled). */
static char *csv_round_trip(const char *csv, mpxkit_diag *d)
{
	const char *in = cutest_scratch_path("in.csv"), *out = cutest_scratch_path("out.pcz");
	mpxkit_pcz_reader *r;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	unlink(out);
	if (write_text(in, csv) != 0 || mpxkit_pcz_pack_csv(in, out, NULL, NULL, d) < 0)
		return NULL;
	if (mpxkit_pcz_reader_open(out, &r, d) < 0)
		return NULL;
	mem = open_memstream(&text, &len);
	if (mpxkit_pcz_write_csv(r, mem, d) < 0) {
		fclose(mem);
		free(text);
		text = NULL;
	} else {
		fclose(mem);
	}
	mpxkit_pcz_reader_free(r);
	return text;
}

static void test_csv_round_trip(void)
{
	static const char *const cases[] = {
		"# k=v\n# empty=\nregion,unit,start_ns,end_ns,A,B\nr1,t0,0,100,10,20\n"
		"r1,t1,0,100,11,20\nr2,t0,100,200,0,18446744073709551615\n",
		/* series: consecutive rows of one unit; placement columns */
		"region,unit,start_ns,end_ns,cpu,numa,X\nloop,t0,0,5,3,0,7\nloop,t0,5,9,3,0,8\n"
		"loop,t1,0,4,-1,-1,7\nloop,t1,4,9,-1,-1,9\nloop,t2,0,9,1,1,15\n",
		/* a region name that comes back later is another region */
		"region,unit,start_ns,end_ns,A\na,u,0,1,1\nb,u,1,2,2\na,u,2,3,3\n",
		/* header only */
		"region,unit,start_ns,end_ns,A\n",
	};
	mpxkit_diag d = { 0 };

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *back = csv_round_trip(cases[i], &d);
		CU_ASSERT_PTR_NOT_NULL_FATAL(back);
		CU_ASSERT_STRING_EQUAL(back, cases[i]);
		free(back);
	}
}

static void test_csv_errors(void)
{
	static const struct {
		const char *csv, *msg;
	} cases[] = {
		{ "region,unit,start_ns,end_ns,A\nr,u,0,1\n", "in.csv:2: 4 fields, the header has 5" },
		{ "region,unit,start_ns,end_ns,A\nr,u,0,1,x\n", "in.csv:2: field 5 (counter): 'x'" },
		{ "region,unit,start_ns,end_ns,A\nr,u,0,1,18446744073709551616\n",
		  "in.csv:2: field 5 (counter): '18446744073709551616' is not below 2^64" },
		{ "region,unit,start_ns,end_ns,A\nr,u,0,1,1\nr,v,0,1,1\nr,u,0,1,1\n",
		  "in.csv:4: unit 'u' appears twice in region 'r'" },
		{ "region,unit,start,end_ns,A\n", "in.csv:1: header must start with" },
		{ "region,unit,start_ns,end_ns\n", "in.csv:1: header names no event" },
		{ "# no equals sign\nregion,unit,start_ns,end_ns,A\n", "in.csv:1: metadata line" },
		{ "region,unit,start_ns,end_ns,A\r\n", "in.csv:1: CR line ending" },
		{ "region,unit,start_ns,end_ns,A,A\n", "in.csv:1: event 'A' given twice" },
		{ "region,unit,start_ns,end_ns,A\nr,u,0,1,1\n\n", "in.csv:3: empty line" },
		{ "", "in.csv:1: no header line" },
	};
	mpxkit_diag d;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *back;
		memset(&d, 0, sizeof d);
		back = csv_round_trip(cases[i].csv, &d);
		CU_ASSERT_PTR_NULL(back);
		free(back);
		if (strstr(d.msg, cases[i].msg) == NULL)
			fprintf(stderr, "case %zu: got '%s'\n", i, d.msg);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, cases[i].msg));
		/* A failed pack leaves no file under the final name. */
		CU_ASSERT_NOT_EQUAL(access(cutest_scratch_path("out.pcz"), F_OK), 0);
	}
}

static const cutest_case round_trip_cases[] = {
	{ "vectors, every codec and grouping", test_round_trip_vectors },
	{ "time series with placement", test_round_trip_series },
	{ "units of unequal length", test_round_trip_unequal },
	{ "single-unit regions", test_round_trip_single_unit },
	{ "counters that equal the duration", test_round_trip_duration },
	{ "duration predictor chosen by hand", test_duration_predictor_by_hand },
	{ "fast coder predictors by hand", test_fast_predictors_by_hand },
	{ "all zero and 2^64-1 values", test_round_trip_zero_and_max },
	{ "many regions, many sections", test_round_trip_many_regions },
	{ "metadata and topology", test_meta_and_topology },
	{ "unit names against the last region", test_names_against_last_region },
	{ "version 2 predictors by hand", test_model_predictors_by_hand },
	{ "version 2 with more events than column models", test_model_many_events },
	{ "version 2 options checked", test_model_options_checked },
	{ "event names checked", test_events_checked },
	{ "version 2 coded bits add up", test_model_coded_bits_add_up },
	{ "version 2 MATCH window", test_model_match_window },
	{ NULL, NULL },
};

static const cutest_case damage_cases[] = {
	{ "every single-bit flip detected", test_every_bit_flip_detected },
	{ "every truncation detected", test_every_truncation_detected },
	{ "reserved bits and version checked", test_reserved_bits_checked },
	{ "not a .pcz file", test_not_a_pcz },
	{ "close matches the writer kind", test_close_kind_checked },
	{ NULL, NULL },
};

/* mpxkit_pcz_interval_encode by hand: lo down, hi up, saturated at 2^64-1, the value held. */
static void test_interval_encode_by_hand(void)
{
	uint64_t t[3];

	mpxkit_pcz_interval_encode(10, 3.2, 17.1, 0, t);
	CU_ASSERT(t[0] == 10 && t[1] == 3 && t[2] == 18);
	mpxkit_pcz_interval_encode(7, 7, 7, 0, t); /* counted all the time */
	CU_ASSERT(t[0] == 7 && t[1] == 7 && t[2] == 7);
	mpxkit_pcz_interval_encode(44, 44, INFINITY, 0, t); /* one counted slice: open above */
	CU_ASSERT(t[0] == 44 && t[1] == 44 && t[2] == UINT64_MAX);
	mpxkit_pcz_interval_encode(10000000000000000000ull, 1e18, 1.9e19, 0, t); /* > 2^64 */
	CU_ASSERT(t[0] == 10000000000000000000ull && t[1] == 1000000000000000000ull &&
		  t[2] == UINT64_MAX);
	mpxkit_pcz_interval_encode(5, 6, 9, 0, t); /* an estimate below its own lo widens it */
	CU_ASSERT(t[0] == 5 && t[1] == 5 && t[2] == 9);
	mpxkit_pcz_interval_encode(0, -8, NAN, 0, t);
	CU_ASSERT(t[0] == 0 && t[1] == 0 && t[2] == UINT64_MAX);
	CU_ASSERT(!mpxkit_pcz_interval_not_counted(t));
	mpxkit_pcz_interval_encode(83, 0, INFINITY, 1, t);
	CU_ASSERT(t[0] == 0 && t[1] == UINT64_MAX && t[2] == 0);
	CU_ASSERT(mpxkit_pcz_interval_not_counted(t));
}

static const char *const iv_events[6] = { "A", "A.lo", "A.hi", "B.hi", "B.hi.lo", "B.hi.hi" };

/* The writer refuses what the reader would reject, and says which name or value. */
static void test_interval_writer_checks(void)
{
	const char *bad_names[6] = { "A", "A.lo", "A.hi", "B", "B.lo", "B.hj" };
	uint64_t times[4] = { 0, 10, 10, 20 };
	uint64_t vals[12] = { 5, 4, 6, 0, UINT64_MAX, 0, 5, 4, 6, 3, 4, 9 };
	mpxkit_pcz_unit u = { "t0", 2, times, vals, -1, -1 };
	mpxkit_pcz_writer *w = NULL;
	mpxkit_pcz_options o;
	mpxkit_diag d = { 0 };

	mpxkit_pcz_options_init(&o);
	o.intervals = 1;
	o.codec = MPXKIT_PCZ_ZSTD;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 6, iv_events, &w, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "intervals need format version 2 (the model codec)");
	o.codec = MPXKIT_PCZ_MODEL;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 5, iv_events, &w, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "intervals: 5 events, not triples (NAME, NAME.lo, NAME.hi)");
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_open_memory(&o, 6, bad_names, &w, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "intervals: event 6 is 'B.hj', not 'B.hi'");
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(&o, 6, iv_events, &w, &d), 0);
	/* Step 1's B is 3 in [4, 9]. */
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "region 'r': unit 't0': step 1: event 'B.hi': interval [4, 9] "
				      "does not hold 3");
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_stage_unit(w, "r", &u, &d), -MPXKIT_EINVAL);
	/* Not counted is (0, 2^64-1, 0) only: the same bounds around 1 are no interval. */
	vals[9] = 1, vals[10] = UINT64_MAX, vals[11] = 0;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), -MPXKIT_EINVAL);
	vals[9] = 4;
	vals[11] = UINT64_MAX;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), -MPXKIT_EINVAL);
	vals[10] = 4;
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, &d), 0);
	mpxkit_pcz_writer_abort(w);
}

/* Intervals come back as written, flagged; the same names without the flag are plain events. */
static void test_interval_round_trip(void)
{
	uint64_t times[6] = { 0, 10, 10, 20, 20, 30 };
	uint64_t vals[18] = { 5, 4, 6, 0, UINT64_MAX, 0, 7, 7, 7, 3, 1, UINT64_MAX,
			      UINT64_MAX - 1, 2, UINT64_MAX, 0, 0, 0 };
	mpxkit_pcz_unit u = { "t0", 3, times, vals, -1, -1 };
	for (int flag = 0; flag <= 1; flag++) {
		mpxkit_pcz_options o;
		mpxkit_pcz_writer *w = NULL;
		mpxkit_pcz_reader *r = NULL;
		const mpxkit_pcz_region *reg;
		mpxkit_diag d = { 0 };
		void *mem = NULL;
		size_t len = 0;

		mpxkit_pcz_options_init(&o);
		o.intervals = flag;
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open_memory(&o, 6, iv_events, &w, &d), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_add_region(w, "stop", 1, &u, &d), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close_memory(w, &mem, &len, &d), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open_mem(mem, len, "iv", &r, &d), 0);
		CU_ASSERT_EQUAL(mpxkit_pcz_reader_intervals(r), flag);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_next(r, &reg, &d), 1);
		CU_ASSERT(memcmp(reg->units[0].values, vals, sizeof vals) == 0);
		CU_ASSERT_EQUAL(mpxkit_pcz_reader_next(r, &reg, &d), 0);
		mpxkit_pcz_reader_free(r);
		free(mem);
	}
}

static const cutest_case interval_cases[] = {
	{ "interval triples by hand", test_interval_encode_by_hand },
	{ "the writer checks intervals", test_interval_writer_checks },
	{ "intervals round trip", test_interval_round_trip },
	{ NULL, NULL },
};

static const cutest_case method_cases[] = {
	{ "balance degree by hand", test_balance_by_hand },
	{ "clusters by hand", test_cluster_by_hand },
	{ "medoid by hand", test_medoid_by_hand },
	{ "region plans by hand", test_plan_by_hand },
	{ "varints are canonical", test_varint_canonical },
	{ "CRC32 matches zlib", test_crc32_matches_zlib },
	{ NULL, NULL },
};

static const cutest_case thread_cases[] = {
	{ "threads add regions", test_threads_add_regions },
	{ "threads stage units", test_threads_stage_units },
	{ NULL, NULL },
};

static const cutest_case csv_cases[] = {
	{ "canonical CSV comes back byte for byte", test_csv_round_trip },
	{ "bad CSV names file and line", test_csv_errors },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = {
		{ "pcz round trip", round_trip_cases, setup, NULL },
		{ "pcz damage", damage_cases, NULL, NULL },
		{ "pcz method", method_cases, NULL, NULL },
		{ "pcz threads", thread_cases, NULL, NULL },
		{ "pcz intervals", interval_cases, NULL, NULL },
		{ "pcz csv", csv_cases, NULL, cutest_scratch_remove },
		{ NULL, NULL, NULL, NULL },
	};
	return cutest_run("test_pcz", suites);
}

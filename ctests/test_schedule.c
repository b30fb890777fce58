/* SPDX-License-Identifier: BSD-3-Clause */
/* Schedules: round-robin reproduces v1 bit for bit, every schedule uses only the past, keeps its
 * period and its counter budget, honours the source's constraints, and refuses bad specs in one
 * line; estimators under any schedule are the same online and offline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/estimator.h"
#include "mpxkit/mpx.h"
#include "mpxkit/schedule.h"

/* Uniform in [0, 1): cutest_urand is uniform in [-1, 1). */
static double u01(uint64_t *state)
{
	return (cutest_urand(state) + 1.0) / 2.0;
}

static const char *const names13[] = {"Ir",   "Dr",   "Dw",   "I1mr", "D1mr", "D1mw", "ILmr",
				      "DLmr", "DLmw", "Bc",   "Bcm",  "Bi",	  "Bim"};

/*
 * A random trace of the corpus's 13 events: smooth levels with noise, a
 * start-up burst on the misses and phase changes, so every schedule has
 * something to adapt to.  Counts stay below 2^40.
 */
static mpxkit_trace *random_trace(size_t n_events, size_t steps, uint64_t seed)
{
	mpxkit_trace *t = NULL;
	uint64_t st = seed, row[13];
	double level[13];

	if (mpxkit_trace_new(&t, NULL, n_events, (const char **)names13, NULL) != 0)
		return NULL;
	for (size_t e = 0; e < n_events; e++)
		level[e] = pow(10.0, 1.0 + 6.0 * u01(&st));
	for (size_t s = 0; s < steps; s++) {
		if (u01(&st) < 0.02) /* a phase change */
			for (size_t e = 0; e < n_events; e++)
				level[e] *= 0.25 + 1.5 * u01(&st);
		for (size_t e = 0; e < n_events; e++) {
			double burst = s < 3 && e >= 3 && e % 2 ? 50.0 / (double)(s + 1) : 1.0;
			double x = level[e] * burst * (0.5 + u01(&st));
			row[e] = u01(&st) < 0.05 ? 0 : (uint64_t)x;
		}
		if (mpxkit_trace_append(t, s, row) != 0)
			return mpxkit_trace_free(t), NULL;
	}
	return t;
}

/* ---- round-robin is v1 ------------------------------------------------------------------ */

/* v1's estimators as doc/estimators.md (v1) wrote them, for one event of one rotation. */
static double v1_estimate(const char *name, double g, double a, double b, double p)
{
	if (strcmp(name, "fixed") == 0)
		return g * a;
	if (strcmp(name, "linear-dira") == 0)
		return g * a + (b - a) * (g - 1.0) / 2.0;
	if (strcmp(name, "linear-tam") == 0)
		return g * (p + a) / 2.0 + (a - p) / 2.0;
	return NAN;
}

/*
 * v1's simulation and its fixed, linear-dira and linear-tam, computed here
 * from the trace; the library's round-robin through protocol v2 (val and
 * windows, no fixed slices) must give the same doubles, bit for bit.
 */
static void test_round_robin_is_v1(void)
{
	static const char *const est_names[] = {"fixed", "linear-dira", "linear-tam"};
	uint64_t seed = 7;

	for (int trial = 0; trial < 40; trial++) {
		size_t ne = 2 + (size_t)(u01(&seed) * 12), C = 1 + (size_t)(u01(&seed) * 5);
		size_t steps = 5 + (size_t)(u01(&seed) * 200), G = (ne + C - 1) / C;
		mpxkit_trace *t = random_trace(ne, steps, seed + (uint64_t)trial);
		mpxkit_mpx_config cfg = {.counters = C, .schedule = "round-robin"};
		mpxkit_mpx_run *r = NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		if (steps < G) {
			mpxkit_trace_free(t);
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
		CU_ASSERT_EQUAL(r->layout.n_groups, G);
		CU_ASSERT_EQUAL(r->layout.gap, 0);
		CU_ASSERT_EQUAL(r->n_rotations, steps / G);
		for (size_t k = 0; k < r->n_rotations; k++)
			for (size_t e = 0; e < ne; e++) {
				uint64_t sum = 0;
				for (size_t j = 0; j < G; j++)
					sum += t->values[(k * G + j) * ne + e];
				CU_ASSERT_EQUAL(r->ocoe[k * ne + e], sum);
				CU_ASSERT_EQUAL(r->obs[k * ne + e],
						t->values[(k * G + e / C) * ne + e]);
			}
		/* Through the windows' val only, as any other schedule is estimated. */
		mpxkit_layout l = r->layout;
		l.slice = NULL;
		mpxkit_series run = mpxkit_mpx_series(r);
		double *out = malloc(r->n_rotations * ne * sizeof *out);
		for (size_t x = 0; x < 3; x++) {
			mpxkit_estimator *est = NULL;
			CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, est_names[x], &l, NULL, NULL), 0);
			CU_ASSERT_EQUAL(mpxkit_estimator_run_series(est, &run, out), 0);
			for (size_t k = 0; k < r->n_rotations; k++)
				for (size_t e = 0; e < ne; e++) {
					double a = (double)r->obs[k * ne + e];
					double b = k + 1 < r->n_rotations ? (double)r->obs[(k + 1) * ne + e] : a;
					double p = k > 0 ? (double)r->obs[(k - 1) * ne + e] : a;
					double want = v1_estimate(est_names[x], (double)G, a, b, p);
					if (memcmp(&want, &out[k * ne + e], sizeof want) != 0) {
						CU_FAIL("round-robin differs from v1");
						k = r->n_rotations;
						break;
					}
				}
			mpxkit_estimator_free(est);
		}
		free(out);
		mpxkit_mpx_run_free(r);
		mpxkit_trace_free(t);
	}
}

/*
 * Every estimator, learned ones included: round-robin's windows given as val
 * (slices unknown to the layout) and as v1's fixed slices give the same
 * doubles, so nothing of v1 changed; the learned ones then run under every
 * schedule.
 */
static void test_every_estimator_both_ways(void)
{
	static const char *const sched[] = {"round-robin", "prior", "adaptive",
					    "adaptive:floor=6:startup=0",
					    "adaptive:measure=0:startup=3"};
	mpxkit_trace *t = random_trace(13, 240, 11);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t s = 0; s < sizeof sched / sizeof sched[0]; s++) {
		mpxkit_mpx_config cfg = {.counters = 4, .schedule = sched[s], .reference = NULL};
		mpxkit_mpx_run *r = NULL;
		CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
		size_t ne = r->layout.n_events, n = r->n_rotations;
		mpxkit_series run = mpxkit_mpx_series(r);
		mpxkit_layout l = r->layout;
		double *a = malloc(n * ne * sizeof *a), *b = malloc(n * ne * sizeof *b);
		l.slice = NULL;
		for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
			const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
			mpxkit_estimator *e1 = NULL, *e2 = NULL;
			if (info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE)
				continue;
			if (mpxkit_estimator_new(&e1, info->name, &l, NULL, NULL) != 0) {
				CU_FAIL("an estimator does not build under a schedule");
				continue;
			}
			CU_ASSERT_EQUAL(mpxkit_estimator_run_whole_series(e1, &run, a, NULL), 0);
			for (size_t k = 0; k < n * ne; k++)
				CU_ASSERT_FATAL(isfinite(a[k]) && a[k] >= (double)r->obs[k] - 0.5);
			if (r->layout.slice) { /* round-robin: v1's path gives the same */
				CU_ASSERT_EQUAL_FATAL(
				    mpxkit_estimator_new(&e2, info->name, &r->layout, NULL, NULL), 0);
				CU_ASSERT_EQUAL(mpxkit_estimator_run_whole(e2, n, r->obs, r->ref, b,
									   NULL),
						0);
				CU_ASSERT(memcmp(a, b, n * ne * sizeof *a) == 0);
			}
			mpxkit_estimator_free(e1);
			mpxkit_estimator_free(e2);
		}
		free(a);
		free(b);
		mpxkit_mpx_run_free(r);
	}
	mpxkit_trace_free(t);
}

/* ---- only the past ------------------------------------------------------------------------ */

/* Which events each slice of r counted, slice-major. */
static unsigned char *counted_sets(const mpxkit_mpx_run *r)
{
	size_t n = r->n_rotations * r->layout.n_groups * r->layout.n_events;
	unsigned char *c = malloc(n);

	for (size_t i = 0; c && i < n; i++)
		c[i] = r->val[i] != MPXKIT_NOT_COUNTED;
	return c;
}

static void test_only_the_past(void)
{
	static const char *const sched[] = {"round-robin", "prior", "adaptive",
					    "adaptive:floor=20:startup=0:decay=0.9",
					    "adaptive:measure=0.3:keep=1:power=0.67"};
	uint64_t seed = 3;

	for (size_t s = 0; s < sizeof sched / sizeof sched[0]; s++)
		for (int trial = 0; trial < 10; trial++) {
			mpxkit_trace *t = random_trace(13, 160, seed++), *u = random_trace(13, 160, seed++);
			size_t cut = 1 + (size_t)(u01(&seed) * 150);
			mpxkit_mpx_config cfg = {.counters = 3, .schedule = sched[s]};
			mpxkit_mpx_run *a = NULL, *b = NULL;
			/* u is t up to slice cut, then something else. */
			memcpy(u->values, t->values, (cut + 1) * 13 * sizeof *t->values);
			CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &a, NULL), 0);
			CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(u, &cfg, &b, NULL), 0);
			unsigned char *ca = counted_sets(a), *cb = counted_sets(b);
			/* Slice cut + 1's set is chosen before slice cut is observed: it too. */
			CU_ASSERT(memcmp(ca, cb, (cut + 2) * 13) == 0);
			free(ca);
			free(cb);
			mpxkit_mpx_run_free(a);
			mpxkit_mpx_run_free(b);
			mpxkit_trace_free(t);
			mpxkit_trace_free(u);
		}
}

/* ---- budget, period, constraints --------------------------------------------------------- */

/* The source refuses events 0 and 1 together, as a PMU constraint would. */
static int not_0_with_1(void *arg, const size_t *set, size_t n)
{
	int zero = 0, one = 0;

	(*(size_t *)arg)++;
	for (size_t i = 0; i < n; i++) {
		zero |= set[i] == 0;
		one |= set[i] == 1;
	}
	return !(zero && one);
}

static void test_budget_period_constraints(void)
{
	static const char *const sched[] = {"round-robin", "prior", "prior:floor=5", "adaptive",
					    "adaptive:floor=7:startup=5", "adaptive:decay=0.5",
					    "adaptive:measure=0:keep=2:power=3"};
	uint64_t seed = 99;

	for (size_t s = 0; s < sizeof sched / sizeof sched[0]; s++)
		for (size_t ne = 1; ne <= 13; ne += 3)
			for (size_t C = 1; C <= 5; C += 2) {
				size_t asked = 0;
				mpxkit_schedule_setup setup = {ne, names13, C, NULL, NULL, NULL};
				mpxkit_schedule *sch = NULL;
				size_t set[8], last[13], M;
				CU_ASSERT_EQUAL_FATAL(mpxkit_schedule_new(&sch, sched[s], &setup, NULL), 0);
				M = mpxkit_schedule_period(sch);
				CU_ASSERT(M >= (ne + C - 1) / C);
				for (size_t e = 0; e < ne; e++)
					last[e] = (size_t)-1;
				for (size_t slice = 0; slice < 500; slice++) {
					size_t n = mpxkit_schedule_next(sch, set);
					uint64_t v[8];
					CU_ASSERT_FATAL(n <= C);
					for (size_t i = 0; i < n; i++) {
						CU_ASSERT_FATAL(set[i] < ne);
						CU_ASSERT_FATAL(i == 0 || set[i] > set[i - 1]);
						last[set[i]] = slice;
						v[i] = (uint64_t)(1000 * u01(&seed));
					}
					/* Counted at least once in any M consecutive slices. */
					for (size_t e = 0; e < ne; e++)
						CU_ASSERT_FATAL(last[e] != (size_t)-1 ? slice - last[e] < M
										 : slice + 1 < M);
					mpxkit_schedule_observe(sch, set, n, v, 1.0);
				}
				mpxkit_schedule_free(sch);
				/* A constraint: never 0 and 1 together, and the source was asked. */
				setup.countable = not_0_with_1;
				setup.countable_arg = &asked;
				if (C < 2 || ne < 2 || strncmp(sched[s], "round-robin", 11) == 0)
					continue;
				CU_ASSERT_EQUAL_FATAL(mpxkit_schedule_new(&sch, sched[s], &setup, NULL), 0);
				for (size_t slice = 0; slice < 200; slice++) {
					size_t n = mpxkit_schedule_next(sch, set);
					uint64_t v[8] = {0};
					CU_ASSERT_FATAL(!(n >= 2 && set[0] == 0 && set[1] == 1));
					mpxkit_schedule_observe(sch, set, n, v, 1.0);
				}
				CU_ASSERT(asked > 0);
				mpxkit_schedule_free(sch);
			}
}

/*
 * measure: event 0 bursts 1000-fold in slice 0 and is flat after it, event 1
 * jumps between 10 and 30 at random, the rest are flat.  The ratio of sums
 * (measure=0) stays dominated by the burst, so event 0 keeps the most time;
 * the mean of the pairs (measure=1) forgets it and gives event 1 the time.
 * (300 slices, C = 2 of 6: measure=0 counted them in 295 and 197 slices,
 * measure=1 in 116 and 292, when this was written.)
 */
static size_t counted_of(const char *spec, size_t which)
{
	static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
	mpxkit_schedule_setup setup = {6, names, 2, NULL, NULL, NULL};
	mpxkit_schedule *sch = NULL;
	uint64_t seed = 5;
	size_t set[2], hits = 0;

	CU_ASSERT_EQUAL_FATAL(mpxkit_schedule_new(&sch, spec, &setup, NULL), 0);
	for (size_t slice = 0; slice < 300; slice++) {
		size_t n = mpxkit_schedule_next(sch, set);
		uint64_t v[2];
		for (size_t i = 0; i < n; i++) {
			size_t e = set[i];
			v[i] = e == 0 ? (slice == 0 ? 100000 : 100)
			       : e == 1 ? (u01(&seed) < 0.5 ? 10 : 30)
					: 1000;
			hits += e == which;
		}
		mpxkit_schedule_observe(sch, set, n, v, 1.0);
	}
	mpxkit_schedule_free(sch);
	return hits;
}

static void test_measure(void)
{
	size_t burst0 = counted_of("adaptive:startup=0:measure=0", 0);
	size_t burst1 = counted_of("adaptive:startup=0:measure=1", 0);
	size_t jumpy0 = counted_of("adaptive:startup=0:measure=0", 1);
	size_t jumpy1 = counted_of("adaptive:startup=0:measure=1", 1);

	CU_ASSERT(burst0 > jumpy0);
	CU_ASSERT(jumpy1 > burst1);
	CU_ASSERT(burst0 > 2 * burst1);
	/* keep=1: a flat event's weight stays at its prior's, not near 0. */
	CU_ASSERT(counted_of("adaptive:startup=0:measure=1:keep=1", 2) >
		  counted_of("adaptive:startup=0:measure=1", 2) + 10);
}

/* reset: the same sets again from slice 0. */
static void test_reset(void)
{
	mpxkit_schedule_setup setup = {13, names13, 4, NULL, NULL, NULL};
	mpxkit_schedule *sch = NULL;
	size_t first[64][4], n_first[64], set[4];
	uint64_t v[4] = {5, 50, 500, 5000};

	CU_ASSERT_EQUAL_FATAL(mpxkit_schedule_new(&sch, "adaptive", &setup, NULL), 0);
	for (int round = 0; round < 2; round++) {
		for (size_t s = 0; s < 64; s++) {
			size_t n = mpxkit_schedule_next(sch, set);
			if (round == 0) {
				memcpy(first[s], set, sizeof set);
				n_first[s] = n;
			} else {
				CU_ASSERT_EQUAL(n, n_first[s]);
				CU_ASSERT(memcmp(first[s], set, n * sizeof *set) == 0);
			}
			mpxkit_schedule_observe(sch, set, n, v, 1.0 + (double)(s % 3));
		}
		mpxkit_schedule_reset(sch);
	}
	mpxkit_schedule_free(sch);
}

/* ---- bad specs: one line each ----------------------------------------------------------- */

static void expect_bad(const char *spec, int code, const char *msg)
{
	mpxkit_schedule_setup setup = {3, names13, 2, NULL, NULL, NULL};
	mpxkit_schedule *sch = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_schedule_new(&sch, spec, &setup, &d), -code);
	CU_ASSERT_PTR_NULL(sch);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	CU_ASSERT_PTR_NULL(strchr(d.msg, '\n'));
}

static void test_bad_specs(void)
{
	expect_bad("magic", MPXKIT_ENOENT,
		   "no schedule named 'magic' (round-robin, groups, prior, adaptive)");
	expect_bad("magic:floor=3", MPXKIT_ENOENT,
		   "no schedule named 'magic' (round-robin, groups, prior, adaptive)");
	expect_bad("adaptive:floor=0", MPXKIT_EINVAL,
		   "schedule 'adaptive:floor=0': floor takes a whole number 1 to 1e+06, not '0'");
	expect_bad("adaptive:floor=2.5", MPXKIT_EINVAL,
		   "schedule 'adaptive:floor=2.5': floor takes a whole number 1 to 1e+06, not "
		   "'2.5'");
	expect_bad("adaptive:decay=x", MPXKIT_EINVAL,
		   "schedule 'adaptive:decay=x': decay takes a number 0 to 1, not 'x'");
	expect_bad("adaptive:measure=1.5", MPXKIT_EINVAL,
		   "schedule 'adaptive:measure=1.5': measure takes a number 0 to 1, not '1.5'");
	expect_bad("adaptive:power=-1", MPXKIT_EINVAL,
		   "schedule 'adaptive:power=-1': power takes a number 0 to 4, not '-1'");
	expect_bad("prior:floor", MPXKIT_EINVAL, "schedule 'prior:floor': floor needs a value (floor=N)");
	expect_bad("prior:speed=3", MPXKIT_EINVAL,
		   "schedule 'prior:speed=3': prior has no setting 'speed'; it takes floor=M");
	expect_bad("round-robin:floor=3", MPXKIT_EINVAL,
		   "schedule 'round-robin:floor=3': round-robin has no setting 'floor' (it takes "
		   "none)");
	expect_bad("groups", MPXKIT_EINVAL,
		   "schedule groups needs a group file (give the file itself as the schedule)");
	CU_ASSERT(mpxkit_schedule_is_name("adaptive:floor=3"));
	CU_ASSERT(!mpxkit_schedule_is_name("groups.txt"));
}

/* Kinds: what prior falls back on for events its table lacks (real PMU and kernel events). */
static void test_kinds(void)
{
	static const char *const miss[] = {"I1mr", "DLmw", "Bcm", "perf::PAGE-FAULTS",
					   "perf::CACHE-MISSES", "BR_MISP_RETIRED", "perf::CONTEXT-SWITCHES"};
	static const char *const total[] = {"Ir", "Bc", "perf::TASK-CLOCK", "perf::INSTRUCTIONS",
					    "perf::CYCLES", "INST_RETIRED:ANY_P"};

	for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++)
		CU_ASSERT_EQUAL(mpxkit_event_kind_of(miss[i]), MPXKIT_EVENT_MISS);
	for (size_t i = 0; i < sizeof total / sizeof total[0]; i++)
		CU_ASSERT_EQUAL(mpxkit_event_kind_of(total[i]), MPXKIT_EVENT_TOTAL);
}

/* ---- online = offline under any schedule ------------------------------------------------- */

static void test_online_offline(void)
{
	static const char *const sched[] = {"prior", "adaptive", "adaptive:floor=30:startup=1"};
	static const size_t windows[] = {0, 3, 8};
	mpxkit_trace *t = random_trace(13, 200, 5);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (size_t s = 0; s < 3; s++)
		for (size_t wi = 0; wi < 3; wi++) {
			mpxkit_mpx_config cfg = {.counters = 4, .schedule = sched[s],
						 .reference = "Ir", .window = windows[wi]};
			mpxkit_mpx_run *r = NULL;
			CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
			size_t ne = r->layout.n_events, W = r->layout.n_groups, n = r->n_rotations;
			mpxkit_series run = mpxkit_mpx_series(r);
			double *off = malloc(n * ne * sizeof *off), *on = malloc(n * ne * sizeof *on);
			for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
				const char *name = mpxkit_estimator_info_at(i)->name;
				mpxkit_estimator *est = NULL;
				size_t got = 0;
				CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, name, &r->layout, NULL, NULL), 0);
				CU_ASSERT_EQUAL(mpxkit_estimator_run_series(est, &run, off), 0);
				for (size_t k = 0; k < n; k++) {
					mpxkit_rotation rot = {r->obs + k * ne, r->ref + k * W,
							       r->val + k * W * ne, NULL};
					if (mpxkit_estimator_push(est, &rot, on + got * ne) == 1)
						got++;
				}
				while (mpxkit_estimator_flush(est, on + got * ne) == 1)
					got++;
				CU_ASSERT_EQUAL(got, n);
				if (memcmp(on, off, n * ne * sizeof *on) != 0)
					CU_FAIL("online differs from offline under a schedule");
				mpxkit_estimator_free(est);
			}
			free(off);
			free(on);
			mpxkit_mpx_run_free(r);
		}
	mpxkit_trace_free(t);
}

/*
 * A stretched rotation (a rotation thread preempted on a loaded machine, so
 * every slice of rotation k0 lasted L nominal slices, and every count in it is
 * L times as large, at the same rates): each estimator's estimate for that
 * rotation is L times the one with nominal slices, to the rounding of a whole
 * count, and every other rotation's is unchanged.  The slices' lengths are
 * the only thing that says the rotation was longer.
 */
static void test_stretched_rotation(void)
{
	const double L = 5.0;
	mpxkit_trace *t = random_trace(13, 240, 17);
	mpxkit_mpx_config cfg = {.counters = 4, .schedule = "adaptive", .reference = "Ir"};
	mpxkit_mpx_run *r = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
	size_t ne = r->layout.n_events, W = r->layout.n_groups, n = r->n_rotations, k0 = n / 2;
	uint64_t *obs = malloc(n * ne * sizeof *obs), *val = malloc(n * W * ne * sizeof *val);
	uint64_t *ref = malloc(n * W * sizeof *ref);
	double *ones = malloc(n * W * sizeof *ones), *len = malloc(n * W * sizeof *len);
	double *base = malloc(n * ne * sizeof *base), *out = malloc(n * ne * sizeof *out);

	CU_ASSERT_FATAL(obs && val && ref && ones && len && base && out);
	memcpy(obs, r->obs, n * ne * sizeof *obs);
	memcpy(ref, r->ref, n * W * sizeof *ref);
	memcpy(val, r->val, n * W * ne * sizeof *val);
	for (size_t i = 0; i < n * W; i++)
		ones[i] = len[i] = 1.0;
	for (size_t e = 0; e < ne; e++)
		obs[k0 * ne + e] *= (uint64_t)L;
	for (size_t i = k0 * W * ne; i < (k0 + 1) * W * ne; i++)
		if (val[i] != MPXKIT_NOT_COUNTED)
			val[i] *= (uint64_t)L;
	for (size_t j = 0; j < W; j++) {
		len[k0 * W + j] = L;
		ref[k0 * W + j] *= (uint64_t)L;
	}
	mpxkit_series nominal = {n, r->obs, r->ref, r->val, ones}, stretched = {n, obs, ref, val, len};
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const char *name = mpxkit_estimator_info_at(i)->name;
		mpxkit_estimator *est = NULL;
		int bad = 0;

		CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, name, &r->layout, NULL, NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_whole_series(est, &nominal, base, NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_whole_series(est, &stretched, out, NULL), 0);
		for (size_t k = 0; k < n; k++)
			for (size_t e = 0; e < ne; e++) {
				double want = k == k0 ? L * base[k * ne + e] : base[k * ne + e];
				double slack = k == k0 ? L : 0.0; /* one whole count, L times */
				if (fabs(out[k * ne + e] - want) > slack + 1e-9 * want)
					bad++;
			}
		if (bad)
			printf("\n  %s: %d estimates not scaled with the rotation's length", name, bad);
		CU_ASSERT_EQUAL(bad, 0);
		mpxkit_estimator_free(est);
	}
	free(obs);
	free(val);
	free(ref);
	free(ones);
	free(len);
	free(base);
	free(out);
	mpxkit_mpx_run_free(r);
	mpxkit_trace_free(t);
}

static const cutest_case schedule_cases[] = {
    {"round-robin is v1, bit for bit", test_round_robin_is_v1},
    {"every estimator: v1's path and the windows' agree", test_every_estimator_both_ways},
    {"a schedule uses only the past", test_only_the_past},
    {"budget, period and the source's constraints", test_budget_period_constraints},
    {"reset", test_reset},
    {"measure: a start-up burst does not hold the shares", test_measure},
    {"bad specs: one line", test_bad_specs},
    {"event kinds", test_kinds},
    {"online = offline under any schedule", test_online_offline},
    {"a stretched rotation: every estimate scales with its length", test_stretched_rotation},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"schedule", schedule_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	return cutest_run("test_schedule", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The estimators' intervals: hand-computed cases, every path alike, and coverage on series of
 * known randomness (doc/estimators.md, "Intervals"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/estimator.h"

#include "cutest.h"

#define NOT MPXKIT_NOT_COUNTED

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* The same intervals, field by field (a struct's padding is nobody's). */
static int same(const mpxkit_interval *a, const mpxkit_interval *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&a[i].lo, &b[i].lo, sizeof a[i].lo) ||
		    memcmp(&a[i].hi, &b[i].hi, sizeof a[i].hi) ||
		    memcmp(&a[i].spread, &b[i].spread, sizeof a[i].spread) ||
		    memcmp(&a[i].dof, &b[i].dof, sizeof a[i].dof) || a[i].flags != b[i].flags)
			return 0;
	return 1;
}

/* est for layout l at the sampling model's level 0.9 (no calibration), or the registry's name. */
static mpxkit_estimator *make(const char *name, const mpxkit_layout *l, int model_only)
{
	mpxkit_estimator *est = NULL;
	mpxkit_diag diag = {0};

	if (mpxkit_estimator_new(&est, name, l, NULL, &diag) < 0) {
		fprintf(stderr, "%s: %s\n", name, diag.msg);
		return NULL;
	}
	CU_ASSERT_EQUAL(mpxkit_estimator_set_interval(est, 0.9, model_only), 0);
	return est;
}

/* ---- hand-computed cases -------------------------------------------------------------- */

/*
 * G = 1: the one slice of every rotation counts the event, so every
 * estimate is the count and its interval the count itself, the total's too.
 */
static void test_always_counted(void)
{
	static const size_t slice[1] = {0};
	const mpxkit_layout l = {1, 1, slice, 0, 0};
	const uint64_t obs[3] = {100, 250, 7};
	double out[3];
	mpxkit_interval iv[3], total;
	mpxkit_series run = {3, obs, NULL, NULL, NULL};

	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		mpxkit_estimator *est;
		if (info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE)
			continue;
		est = make(info->name, &l, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(est);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(est, &run, out, iv, &total), 0);
		for (int k = 0; k < 3; k++) {
			CU_ASSERT_EQUAL(iv[k].lo, (double)obs[k]);
			CU_ASSERT_EQUAL(iv[k].hi, (double)obs[k]);
			CU_ASSERT_EQUAL(iv[k].spread, 0);
			CU_ASSERT_EQUAL(iv[k].flags, 0);
		}
		CU_ASSERT_EQUAL(total.lo, 357);
		CU_ASSERT_EQUAL(total.hi, 357);
		CU_ASSERT_EQUAL(total.flags, 0);
		mpxkit_estimator_free(est);
	}
}

/*
 * Two events, windows of 2 slices told window by window: event 0 counted
 * in both slices (exact), event 1 in neither, ever.  Event 1's estimates
 * are no measurement: every window and the total say so, never a bound.
 */
static void test_never_counted(void)
{
	const mpxkit_layout l = {2, 2, NULL, 1, 0};
	uint64_t obs[3 * 2], val[3 * 2 * 2], ref[3 * 2];
	double out[3 * 2];
	mpxkit_interval iv[3 * 2], total[2];
	mpxkit_series run = {3, obs, ref, val, NULL};

	for (int k = 0; k < 3; k++) {
		val[(k * 2 + 0) * 2 + 0] = 5 + (uint64_t)k;
		val[(k * 2 + 1) * 2 + 0] = 9;
		val[(k * 2 + 0) * 2 + 1] = NOT;
		val[(k * 2 + 1) * 2 + 1] = NOT;
		obs[k * 2 + 0] = 14 + (uint64_t)k;
		obs[k * 2 + 1] = 0;
		ref[k * 2 + 0] = ref[k * 2 + 1] = 100;
	}
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		mpxkit_estimator *est = make(mpxkit_estimator_info_at(i)->name, &l, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(est);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(est, &run, out, iv, total), 0);
		for (int k = 0; k < 3; k++) {
			CU_ASSERT_EQUAL(iv[k * 2 + 0].lo, (double)obs[k * 2]);
			CU_ASSERT_EQUAL(iv[k * 2 + 0].hi, (double)obs[k * 2]);
			CU_ASSERT_EQUAL(iv[k * 2 + 1].flags, MPXKIT_INTERVAL_UNOBSERVED);
			CU_ASSERT_EQUAL(iv[k * 2 + 1].lo, 0);
			CU_ASSERT(isinf(iv[k * 2 + 1].hi));
		}
		CU_ASSERT_EQUAL(total[0].lo, 14 + 15 + 16);
		CU_ASSERT_EQUAL(total[0].hi, 14 + 15 + 16);
		CU_ASSERT_EQUAL(total[1].flags, MPXKIT_INTERVAL_UNOBSERVED);
		CU_ASSERT(isinf(total[1].hi));
		mpxkit_estimator_free(est);
	}
}

/*
 * Round-robin, G = 4, the event counted in slice 1 of each window: 10, 14,
 * 8, 12, so fixed gives 40, 56, 32, 48.  By hand, at 0.9 with the model
 * alone (doc/estimators.md, "Intervals"): each window's sampling factor is
 * G (G - t) / t = 12; a variance's degrees of freedom are 2/3 of the
 * decayed count of differences w^2 / w2, at least 1.  Window 0 has seen no
 * difference yet: open, lo = 10.  Window 1: d = 4, s = 8, w = w2 = 1,
 * variance 8, dof 1, t = tan(0.45 pi) = 6.313752; spread sqrt(12 x 8) =
 * 9.797959, h = 61.862, lo = max(14, 56 - h) = 14, hi = 117.861878.
 * Window 2: d = -6, s = 0.9 x 8 + 18 = 25.2, w = 1.9, w2 = 1.81, variance
 * 13.263158, dof 1.329650: t between nu = 1 and nu = 2 (0.9 / sqrt(0.095) =
 * 2.919986) linearly in 1 / nu, 4.630970; spread 12.615780, hi = 32 +
 * 58.423 = 90.423298, lo = 8.  Window 3: d = 4, s = 30.68, w = 2.71, w2 =
 * 2.4661, variance 11.321033, dof 1.985348, t 2.945032; spread 11.655574,
 * h = 34.326, so lo = 13.673965 (above the 12 counted) and hi = 82.326035.
 * The total: window 0's factor waits for window 1's variance: (12 + 12) 8
 * + 12 x 13.263158 + 12 x 11.321033 = 487.010302, spread 22.068310, with
 * the 3 differences' 2 degrees of freedom t = 2.919986: 176 -+ 64.439 =
 * [111.560854, 240.439146].
 */
static void test_one_slice_in_g(void)
{
	static const size_t slice[1] = {1};
	const mpxkit_layout l = {1, 4, slice, 0, 0};
	const uint64_t obs[4] = {10, 14, 8, 12};
	static const double lo[4] = {10, 14, 8, 13.673964502069722};
	static const double hi[4] = {INFINITY, 117.86187829471307, 90.42329767945944,
				     82.32603549793028};
	static const double spread[4] = {INFINITY, 9.797958971132712, 12.615779592908323,
					 11.655573710632405};
	mpxkit_estimator *est = make("fixed", &l, 1);
	mpxkit_interval iv[4], total, online[4], peeked;
	mpxkit_series run = {4, obs, NULL, NULL, NULL};
	double out[4], sum, pending;

	CU_ASSERT_PTR_NOT_NULL_FATAL(est);
	CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(est, &run, out, iv, &total), 0);
	for (int k = 0; k < 4; k++) {
		CU_ASSERT_EQUAL(out[k], 4.0 * (double)obs[k]);
		CU_ASSERT(close_to(iv[k].lo, lo[k]));
		CU_ASSERT(isinf(hi[k]) ? isinf(iv[k].hi) : close_to(iv[k].hi, hi[k]));
		CU_ASSERT(isinf(spread[k]) ? isinf(iv[k].spread) : close_to(iv[k].spread, spread[k]));
	}
	CU_ASSERT_EQUAL(iv[0].flags, MPXKIT_INTERVAL_OPEN);
	CU_ASSERT(close_to(iv[3].dof, 1.9853479853479854));
	CU_ASSERT(close_to(total.lo, 111.56085387696388));
	CU_ASSERT(close_to(total.hi, 240.43914612303612));
	CU_ASSERT(close_to(total.dof, 2));
	CU_ASSERT(close_to(total.spread, 22.068309705567106));
	/* Online: the same intervals, and a peek after 1 window is still open. */
	for (int k = 0; k < 4; k++) {
		mpxkit_rotation r = {&obs[k], NULL, NULL, NULL};
		CU_ASSERT_EQUAL(mpxkit_estimator_push_iv(est, &r, &out[k], &online[k]), 1);
		CU_ASSERT(same(&online[k], &iv[k], 1));
		if (k == 0) {
			CU_ASSERT_EQUAL(mpxkit_estimator_peek_iv(est, &pending, &peeked), 0);
			CU_ASSERT_EQUAL(peeked.flags, MPXKIT_INTERVAL_OPEN);
		}
	}
	CU_ASSERT_EQUAL(mpxkit_estimator_total(est, &sum, &peeked), 0);
	CU_ASSERT_EQUAL(sum, 176);
	CU_ASSERT(same(&peeked, &total, 1));
	/* A higher level, a wider interval; the estimates do not change. */
	CU_ASSERT_EQUAL(mpxkit_estimator_set_interval(est, 0.99, 1), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_total(est, NULL, &peeked), 0);
	CU_ASSERT(peeked.hi > total.hi && peeked.lo < total.lo);
	CU_ASSERT_EQUAL(mpxkit_estimator_set_interval(est, 0.995, 1), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_estimator_set_interval(est, -0.1, 1), -MPXKIT_EINVAL);
	mpxkit_estimator_free(est);
}

/*
 * A constant series (5 per slice, G = 3, 3 events): every estimator is
 * exact, and every difference between counted slices is 0.  No spread
 * seen is no proof that the slices not counted saw the same: the variance
 * is the Poisson one, (c + 1) / t over the counted time so far.  By hand
 * for fixed with the model alone (doc/estimators.md, "Intervals"): window
 * k >= 1 has counted k + 1 slices of 5, variance 5 + 1 / (k + 1) (5.5 at
 * k = 1), sampling factor G (G - 1) = 6, spread sqrt(6 x 5.5) = 5.744563
 * at k = 1, with the degrees of freedom of one slice in G (2/3 of
 * w^2 / w2 of the decayed differences, at least 1); window 0 has no
 * difference yet (open).  The total: window 0's factor waits for window
 * 1's variance, (6 + 6) 5.5 + 6 sum_{k=2..11} (5 + 1 / (k + 1)) =
 * 375.619264, spread 19.380899, the 11 differences' 22/3 degrees of
 * freedom; no start-up term (no burst: every rate is the typical one).
 * Every other estimator: its estimates exact, its bounds around them.
 */
static double decayed(int k, double d)
{
	double w = 0;

	for (int i = 0; i < k; i++)
		w += pow(d, i);
	return w;
}

static void test_constant_series(void)
{
	static const size_t slice[3] = {0, 1, 2};
	const mpxkit_layout l = {3, 3, slice, 1, 0};
	enum { N = 12 };
	uint64_t obs[N * 3], ref[N * 3];
	double out[N * 3], var = 0;
	mpxkit_interval iv[N * 3], total[3];
	mpxkit_series run = {N, obs, ref, NULL, NULL};
	mpxkit_estimator *fixed = make("fixed", &l, 1);

	for (int i = 0; i < N * 3; i++)
		obs[i] = ref[i] = 5;
	CU_ASSERT_PTR_NOT_NULL_FATAL(fixed);
	CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(fixed, &run, out, iv, total), 0);
	for (int k = 1; k < N; k++) {
		double v = 5 + 1.0 / (k + 1), w = decayed(k, 0.9), w2 = decayed(k, 0.81);
		double dof = fmax(1, w * w / w2 * 2 / 3), spread = sqrt(6 * v);
		double h = mpxkit_interval_quantile(0.9, dof) * spread;
		var += (k == 1 ? 12 : 6) * v;
		for (int e = 0; e < 3; e++) {
			CU_ASSERT(close_to(iv[k * 3 + e].spread, spread));
			CU_ASSERT(close_to(iv[k * 3 + e].dof, dof));
			CU_ASSERT(close_to(iv[k * 3 + e].lo, fmax(5, 15 - h)));
			CU_ASSERT(close_to(iv[k * 3 + e].hi, 15 + h));
		}
	}
	CU_ASSERT(close_to(iv[1 * 3].spread, 5.744562646538029));
	CU_ASSERT(close_to(var, 375.6192640692641));
	for (int e = 0; e < 3; e++) {
		double h = mpxkit_interval_quantile(0.9, 22.0 / 3) * sqrt(var);
		CU_ASSERT_EQUAL(iv[e].flags, MPXKIT_INTERVAL_OPEN);
		CU_ASSERT(close_to(total[e].spread, 19.380899464918137));
		CU_ASSERT(close_to(total[e].lo, 15 * N - h));
		CU_ASSERT(close_to(total[e].hi, 15 * N + h));
	}
	mpxkit_estimator_free(fixed);
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		mpxkit_estimator *est = make(info->name, &l, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(est);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(est, &run, out, iv, total), 0);
		for (int k = 0; k < N * 3; k++) {
			CU_ASSERT_EQUAL(out[k], 15);
			if (iv[k].flags == MPXKIT_INTERVAL_OPEN) {
				CU_ASSERT(k < 3 && mpxkit_estimator_info_of(est)->lookahead == 0);
				continue;
			}
			CU_ASSERT(iv[k].lo >= 5 && iv[k].lo < 15 && iv[k].hi > 15);
		}
		for (int e = 0; e < 3; e++)
			CU_ASSERT(total[e].lo >= 5 * N && total[e].lo < 15 * N && total[e].hi > 15 * N);
		mpxkit_estimator_free(est);
	}
}

/* ---- every path alike ------------------------------------------------------------------- */

/*
 * A random run under round-robin (fixed slices) and under a schedule (val,
 * lengths): push with intervals, peeks anywhere, flush, against the
 * offline run's intervals and totals bit for bit, for every estimator; the
 * whole-run path of an estimator without one is the offline run's.
 */
static void check_paths(const mpxkit_layout *l, const mpxkit_series *run, uint64_t *rng)
{
	size_t ne = l->n_events, n = run->n_windows;
	double *out = malloc(n * ne * sizeof *out), *on = malloc(n * ne * sizeof *on);
	double *whole = malloc(n * ne * sizeof *whole), *sum = malloc(ne * sizeof *sum);
	mpxkit_interval *iv = malloc(n * ne * sizeof *iv), *ivon = malloc(n * ne * sizeof *ivon);
	mpxkit_interval *ivw = malloc(n * ne * sizeof *ivw), *tot = malloc(3 * ne * sizeof *tot);

	CU_ASSERT_FATAL(out && on && whole && sum && iv && ivon && ivw && tot);
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		mpxkit_estimator *est;
		size_t got = 0;
		if ((info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) && !l->has_reference)
			continue;
		est = make(info->name, l, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(est);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(est, run, out, iv, tot), 0);
		for (size_t k = 0; k < n; k++) {
			mpxkit_rotation r = {run->obs + k * ne,
					     run->ref ? run->ref + k * l->n_groups : NULL,
					     run->val ? run->val + k * l->n_groups * ne : NULL,
					     run->len ? run->len + k * l->n_groups : NULL};
			int rc = mpxkit_estimator_push_iv(est, &r, on + got * ne, ivon + got * ne);
			CU_ASSERT(rc == 0 || rc == 1);
			got += rc == 1;
			if (cutest_urand(rng) > 0.3) {
				double pend[64];
				mpxkit_estimator_peek_iv(est, pend, tot + ne);
			}
		}
		mpxkit_estimator_peek_iv(est, sum, tot + ne);
		while (mpxkit_estimator_flush_iv(est, on + got * ne, ivon + got * ne) == 1)
			got++;
		CU_ASSERT_EQUAL(got, n);
		CU_ASSERT_EQUAL(memcmp(on, out, n * ne * sizeof *out), 0);
		CU_ASSERT(same(ivon, iv, n * ne));
		CU_ASSERT_EQUAL(mpxkit_estimator_total(est, NULL, tot + 2 * ne), 0);
		/* The last peek saw what the flush then estimated: the same totals. */
		CU_ASSERT(same(tot + ne, tot, ne));
		CU_ASSERT(same(tot + 2 * ne, tot, ne));
		if (!mpxkit_estimator_has_whole_run(est)) {
			CU_ASSERT_EQUAL(
			    mpxkit_estimator_run_whole_series_iv(est, run, whole, ivw, tot + ne, NULL),
			    0);
			CU_ASSERT(same(ivw, iv, n * ne));
			CU_ASSERT(same(tot + ne, tot, ne));
		} else {
			CU_ASSERT_EQUAL(
			    mpxkit_estimator_run_whole_series_iv(est, run, whole, ivw, tot + ne, NULL),
			    0);
			for (size_t x = 0; x < n * ne; x++)
				CU_ASSERT(ivw[x].lo <= ivw[x].hi);
		}
		for (size_t x = 0; x < n * ne; x++) {
			CU_ASSERT(iv[x].lo <= iv[x].hi);
			CU_ASSERT(iv[x].lo >= 0);
		}
		mpxkit_estimator_free(est);
	}
	free(out), free(on), free(whole), free(sum), free(iv), free(ivon), free(ivw), free(tot);
}

/*
 * The count regime of each bounded interval, by hand: one event in each of
 * G = 3 groups, each counted in one slice a window.  9 a slice is sparse
 * (under INTERVAL_DENSE_RATE, 10), 10 is dense.  The third sees 0 in
 * windows 0 to 5 and 40 after: its mean over its counted slices after
 * window k >= 6 is 40 (k - 5) / (k + 1), at least 10 from k = 7 on.  Window
 * 0 has no spread yet (open), and its regime says nothing.
 */
static void test_regime(void)
{
	static const size_t slice[3] = {0, 1, 2};
	const mpxkit_layout l = {3, 3, slice, 1, 0};
	enum { N = 12 };
	uint64_t obs[N * 3], ref[N * 3];
	double out[N * 3];
	mpxkit_interval iv[N * 3], total[3];
	mpxkit_series run = {N, obs, ref, NULL, NULL};
	mpxkit_estimator *fixed = make("fixed", &l, 0);

	for (int k = 0; k < N; k++) {
		obs[k * 3] = ref[k * 3] = 9;
		obs[k * 3 + 1] = ref[k * 3 + 1] = 10;
		obs[k * 3 + 2] = ref[k * 3 + 2] = k < 6 ? 0 : 40;
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(fixed);
	CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(fixed, &run, out, iv, total), 0);
	for (int k = 1; k < N; k++) {
		CU_ASSERT_EQUAL(iv[k * 3].flags, MPXKIT_INTERVAL_SPARSE);
		CU_ASSERT_EQUAL(iv[k * 3 + 1].flags, 0);
		CU_ASSERT_EQUAL(iv[k * 3 + 2].flags, k < 7 ? MPXKIT_INTERVAL_SPARSE : 0);
	}
	CU_ASSERT_EQUAL(total[0].flags, MPXKIT_INTERVAL_SPARSE);
	CU_ASSERT_EQUAL(total[1].flags, 0);
	CU_ASSERT_EQUAL(total[2].flags, 0); /* 240 over 12 slices */
	mpxkit_estimator_free(fixed);
}

/*
 * The factor by which event e's run total's half-width exceeds the
 * model's alone: the calibration's, as hi - estimate scales with it.
 */
static double total_factor(const mpxkit_layout *l, const mpxkit_series *run, size_t e)
{
	enum { NE = 4, N = 40 };
	double out[N * NE], h[2];
	mpxkit_interval iv[N * NE], total[NE];

	for (int model_only = 0; model_only < 2; model_only++) {
		mpxkit_estimator *fixed = make("fixed", l, model_only);
		double est = 0;
		CU_ASSERT_PTR_NOT_NULL_FATAL(fixed);
		CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(fixed, run, out, iv, total), 0);
		for (int k = 0; k < N; k++)
			est += out[k * NE + e];
		CU_ASSERT_EQUAL(total[e].flags, e < 2 ? MPXKIT_INTERVAL_SPARSE : 0);
		h[model_only] = total[e].hi - est;
		mpxkit_estimator_free(fixed);
	}
	return h[0] / h[1];
}

/*
 * A run total's factor is its layout's and, under a schedule, its count
 * regime's; fixed slices pool the regimes.  Events 0 and 1 are sparse (0
 * to 4 a slice), 2 and 3 dense (50 to 150), each counted in half the slices.
 */
static void test_total_regime(void)
{
	enum { NE = 4, W = 2, N = 40 };
	static const size_t slice[NE] = {0, 1, 0, 1};
	uint64_t rng = 41, obs[N * NE], ref[N * W], val[N * W * NE];
	double len[N * W], f[2][NE];

	for (size_t i = 0; i < N * W; i++) {
		ref[i] = 1000;
		len[i] = 1;
	}
	for (int fixed = 0; fixed < 2; fixed++) {
		mpxkit_layout l = {NE, W, fixed ? slice : NULL, 1, fixed ? 0 : 1};
		mpxkit_series run = {N, obs, ref, fixed ? NULL : val, fixed ? NULL : len};
		memset(obs, 0, sizeof obs);
		/* slot i: rotation i / (W NE), slice i / NE % W, event i % NE */
		for (size_t i = 0; i < N * W * NE; i++) {
			size_t e = i % NE, j = i / NE % W, k = i / (W * NE);
			int on = fixed ? slice[e] == j : (k + j + e) % 2 == 0;
			double u = (cutest_urand(&rng) + 1) / 2;
			uint64_t v = (uint64_t)(e < 2 ? 5 * u : 50 + 100 * u);
			val[i] = on ? v : NOT;
			obs[k * NE + e] += on ? v : 0;
		}
		for (size_t e = 0; e < NE; e++)
			f[fixed][e] = total_factor(&l, &run, e);
	}
	for (size_t e = 0; e < NE; e++)
		CU_ASSERT_DOUBLE_EQUAL(f[1][e], f[1][0], 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f[0][1], f[0][0], 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f[0][3], f[0][2], 1e-9);
	CU_ASSERT(fabs(f[0][2] - f[0][0]) > 1e-3);
}

static void test_paths(void)
{
	enum { NE = 5, W = 3, N = 30 };
	static const size_t slice[NE] = {0, 0, 1, 2, 2};
	uint64_t rng = 28, obs[N * NE], ref[N * W], val[N * W * NE];
	double len[N * W];

	for (int fixed = 0; fixed < 2; fixed++) {
		mpxkit_layout l = {NE, W, fixed ? slice : NULL, 1, fixed ? 0 : 1};
		mpxkit_series run = {N, obs, ref, fixed ? NULL : val, fixed ? NULL : len};
		memset(obs, 0, sizeof obs);
		for (int k = 0; k < N; k++)
			for (int j = 0; j < W; j++) {
				ref[k * W + j] = 1000 + (uint64_t)(500 * (1 + cutest_urand(&rng)));
				len[k * W + j] = 0.75 + (cutest_urand(&rng) + 1) / 4;
				for (int e = 0; e < NE; e++) {
					int on = fixed ? (int)slice[e] == j : cutest_urand(&rng) > 0.2;
					uint64_t v = (uint64_t)(50 * (1 + cutest_urand(&rng)));
					if (k == 0 && j == 0)
						v *= 100; /* a start-up burst */
					val[(k * W + j) * NE + e] = on ? v : NOT;
					obs[k * NE + e] += on ? v : 0;
				}
			}
		check_paths(&l, &run, &rng);
	}
}

/* ---- coverage on series of known randomness --------------------------------------------- */

static double unit(uint64_t *rng)
{
	return (cutest_urand(rng) + 1) / 2;
}

/* Poisson(mean) by inversion, from the mode outwards would be faster; means here are small. */
static uint64_t poisson(double mean, uint64_t *rng)
{
	double u = unit(rng), p = exp(-mean), c = p;
	uint64_t k = 0;

	while (u > c && k < 100000) {
		k++;
		p *= mean / (double)k;
		c += p;
	}
	return k;
}

/* Gamma(shape >= 1, scale 1): Marsaglia and Tsang, normals by Box-Muller. */
static double gamma1(double shape, uint64_t *rng)
{
	double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);

	for (;;) {
		double u1 = unit(rng), u2 = unit(rng), z, v, u;
		if (u1 <= 0)
			continue;
		z = sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
		v = 1 + c * z;
		if (v <= 0)
			continue;
		v = v * v * v;
		u = unit(rng);
		if (log(u > 0 ? u : 1e-300) < 0.5 * z * z + d - d * v + d * log(v))
			return d * v;
	}
}

/*
 * Round-robin with G = 4, one event, slice counts independent draws of a
 * Poisson (or negative binomial: a gamma-mixed Poisson, variance 3 times
 * the mean) of mean 40: exactly the sampling model's assumptions.  The
 * model's intervals (no calibration) must hold the truth in 90 % of 10,000
 * windows and of 10,000 run totals, to within 2 points.
 */
static void coverage_of(int negbin)
{
	static const size_t slice[1] = {2};
	const mpxkit_layout l = {1, 4, slice, 0, 0};
	enum { RUNS = 10000, N = 50, G = 4 };
	uint64_t rng = negbin ? 0x5eedull : 0xfeedull, obs[N], truth[N];
	size_t windows = 0, covered = 0, totals = 0;
	mpxkit_estimator *est = make("fixed", &l, 1);
	double out[N];
	mpxkit_interval iv[N], total;

	CU_ASSERT_PTR_NOT_NULL_FATAL(est);
	for (int r = 0; r < RUNS; r++) {
		mpxkit_series run = {N, obs, NULL, NULL, NULL};
		uint64_t sum = 0;
		for (int k = 0; k < N; k++) {
			truth[k] = 0;
			for (int j = 0; j < G; j++) {
				double mean = negbin ? gamma1(1.5, &rng) * 40 / 1.5 : 40;
				uint64_t x = poisson(mean, &rng);
				truth[k] += x;
				if (j == (int)slice[0])
					obs[k] = x;
			}
			sum += truth[k];
		}
		CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_run_series_iv(est, &run, out, iv, &total), 0);
		/* A window is drawn when its bounds are finite: all but the first of each run. */
		for (int k = 0; k < N && windows < RUNS; k++) {
			if (isinf(iv[k].hi))
				continue;
			windows++;
			covered += iv[k].lo <= (double)truth[k] && (double)truth[k] <= iv[k].hi;
		}
		totals += total.lo <= (double)sum && (double)sum <= total.hi;
	}
	printf("\n  %s: %zu of %zu windows covered (%.4f), %zu of %d totals (%.4f)\n",
	       negbin ? "negative binomial" : "Poisson", covered, windows,
	       (double)covered / (double)windows, totals, RUNS, (double)totals / RUNS);
	CU_ASSERT_EQUAL(windows, RUNS);
	CU_ASSERT(fabs((double)covered / (double)windows - 0.9) <= 0.02);
	CU_ASSERT(fabs((double)totals / RUNS - 0.9) <= 0.02);
	mpxkit_estimator_free(est);
}

static void test_coverage_poisson(void)
{
	coverage_of(0);
}

static void test_coverage_negbin(void)
{
	coverage_of(1);
}

/* The sampling model's multipliers: the normal and Student's t quantiles where they are exact. */
/* An interval from its bounds alone (spread and dof as a total's would carry them). */
static mpxkit_interval iv_of(double lo, double hi, double spread)
{
	mpxkit_interval v = {lo, hi, spread, 30, 0};

	return v;
}

/* What a run counted between two reads of its totals, by hand (doc/estimators.md). */
static void test_between(void)
{
	const mpxkit_interval open = {5, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_OPEN};
	const mpxkit_interval none = {0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_UNOBSERVED};
	mpxkit_interval a, b, r;
	double poisson = -log(0.05); /* the upper Poisson bound of 0 seen, at (1 + 0.9) / 2 */

	/* Exact both times and counted all along: the difference, exactly. */
	a = iv_of(10, 10, 0), b = iv_of(25, 25, 0);
	mpxkit_interval_between(&a, 10, &b, 25, 1.0, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 15, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 15, 1e-12);
	CU_ASSERT_EQUAL(r.flags, 0);
	/* Half-widths in quadrature: above sqrt(17^2 - 8^2) = 15, below sqrt(10^2 - 6^2) = 8. */
	a = iv_of(94, 108, 4), b = iv_of(290, 317, 5);
	mpxkit_interval_between(&a, 100, &b, 300, 0.5, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 192, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 215, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.spread, 3, 1e-12); /* sqrt(25 - 16) */
	/* The later total narrower (its spread re-estimated): its relative 8 / 200 of d = 100. */
	a = iv_of(90, 110, 5), b = iv_of(192, 208, 4);
	mpxkit_interval_between(&a, 100, &b, 200, 0.5, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 96, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 104, 1e-9);
	/* Nothing seen in a quarter of the time: not "exactly 0", the Poisson bound x 3 above. */
	a = iv_of(0, 0, 0), b = iv_of(0, 0, 0);
	mpxkit_interval_between(&a, 0, &b, 0, 0.25, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 3 * poisson, 1e-9);
	/* ... which floors a narrower quadrature too: above sqrt(5^2 - 4^2) = 3 < 2.996 x 3. */
	a = iv_of(96, 104, 1), b = iv_of(195, 205, 1);
	mpxkit_interval_between(&a, 100, &b, 200, 0.25, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 97, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 100 + 3 * poisson, 1e-9);
	/* Nothing counted before: the later total is all of it. */
	b = iv_of(10, 30, 6);
	mpxkit_interval_between(&none, 0, &b, 20, 0.5, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 10, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.hi, 30, 1e-9);
	/* Later open above: at least later.lo - earlier.hi, unbounded. */
	a = iv_of(1, 3, 1);
	mpxkit_interval_between(&a, 2, &open, 9, 0.5, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 2, 1e-12);
	CU_ASSERT(isinf(r.hi));
	CU_ASSERT_EQUAL(r.flags, MPXKIT_INTERVAL_OPEN);
	/* Not counted at all between the reads: open, the estimate no measurement. */
	a = iv_of(10, 10, 0), b = iv_of(30, 30, 0);
	mpxkit_interval_between(&a, 10, &b, 30, 0.0, 0.9, &r);
	CU_ASSERT_DOUBLE_EQUAL(r.lo, 20, 1e-12);
	CU_ASSERT(isinf(r.hi));
	/* Never counted: says so. */
	mpxkit_interval_between(&a, 10, &none, 0, 0.5, 0.9, &r);
	CU_ASSERT_EQUAL(r.flags, MPXKIT_INTERVAL_UNOBSERVED);
	CU_ASSERT(isinf(r.hi));
	/* lo is never below 0, hi never below lo: a learned estimate that went down. */
	a = iv_of(90, 110, 5), b = iv_of(80, 100, 5);
	mpxkit_interval_between(&a, 100, &b, 90, 1.0, 0.9, &r);
	CU_ASSERT(r.lo >= 0 && r.hi >= r.lo);
}

static void test_quantiles(void)
{
	CU_ASSERT(close_to(mpxkit_interval_quantile(0.9, INFINITY), 1.6448536269514722));
	CU_ASSERT(close_to(mpxkit_interval_quantile(0.95, INFINITY), 1.959963984540054));
	CU_ASSERT(close_to(mpxkit_interval_quantile(0.9, 1), 6.313751514675043));
	CU_ASSERT(close_to(mpxkit_interval_quantile(0.9, 2), 2.919985580353726));
	/* t(10) at 0.95 is 1.812461; the expansion is within 0.2 %. */
	CU_ASSERT(fabs(mpxkit_interval_quantile(0.9, 10) / 1.812461123 - 1) < 0.002);
	CU_ASSERT(fabs(mpxkit_interval_quantile(0.99, 5) / 4.032142984 - 1) < 0.01);
	CU_ASSERT(isnan(mpxkit_interval_quantile(1.0, 3)));
	CU_ASSERT(isnan(mpxkit_interval_quantile(0.9, 0.5)));
}

/* Every estimator the registry lists has an interval: it builds and bounds what it estimates. */
static void test_registry(void)
{
	CU_ASSERT_EQUAL(mpxkit_estimator_count(), 9);
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i), *found;
		CU_ASSERT_EQUAL(mpxkit_estimator_lookup(info->name, &found), 0);
		CU_ASSERT_PTR_EQUAL(found, info);
	}
}

int main(void)
{
	static const cutest_case cases[] = {
	    {"always counted: the count itself", test_always_counted},
	    {"never counted: says so", test_never_counted},
	    {"one slice in G, by hand", test_one_slice_in_g},
	    {"a constant series: the Poisson spread, by hand", test_constant_series},
	    {"the count regime, by hand", test_regime},
	    {"a total's factor: its layout's and, scheduled, its regime's", test_total_regime},
	    {"online, peeks, offline and whole-run alike", test_paths},
	    {"coverage: Poisson slices, 10,000 draws", test_coverage_poisson},
	    {"coverage: negative binomial slices, 10,000 draws", test_coverage_negbin},
	    {"between two reads, by hand", test_between},
	    {"quantiles", test_quantiles},
	    {"registry: every estimator has an interval", test_registry},
	    {NULL, NULL},
	};
	const cutest_suite suites[] = {{"intervals", cases, NULL, NULL}, {NULL, NULL, NULL, NULL}};

	return cutest_run("test_intervals", suites);
}

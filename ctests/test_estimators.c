/* SPDX-License-Identifier: BSD-3-Clause */
/* Every estimator against hand-computed values, its edge cases, and online = offline. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/estimator.h"

#define N_ROT 5
#define EPS   1e-9

/*
 * G = 4 slices per rotation, two events seen in slices 0 and 2.  Event 0
 * observes 10 20 0 0 5: a rise, a fall to zero, zero to zero, zero to
 * positive, and a last rotation.  Event 1 is constant 7.
 */
static const size_t two_slices[2] = {0, 2};
static const mpxkit_layout g4 = {2, 4, two_slices, 0};
static const uint64_t g4_obs[N_ROT * 2] = {10, 7, 20, 7, 0, 7, 0, 7, 5, 7};

/* Runs name offline over g4_obs and compares event 0's estimates with want. */
static void expect_series(const char *name, const double want[N_ROT])
{
	mpxkit_estimator *est = NULL;
	double out[N_ROT * 2];

	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, name, &g4, NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_run(est, N_ROT, g4_obs, NULL, out), 0);
	for (int k = 0; k < N_ROT; k++) {
		CU_ASSERT_DOUBLE_EQUAL(out[2 * k], want[k], EPS);
		/* A constant series is G x the constant under every interpolation. */
		CU_ASSERT_DOUBLE_EQUAL(out[2 * k + 1], 28.0, EPS);
	}
	mpxkit_estimator_free(est);
}

static void test_fixed(void)
{
	const double want[N_ROT] = {40, 80, 0, 0, 20};
	expect_series("fixed", want);
}

static void test_linear_dira(void)
{
	/* 4a + (b - a)(4 - 1)/2; the last rotation holds a. */
	const double want[N_ROT] = {40 + 15, 80 - 30, 0, 7.5, 20};
	expect_series("linear-dira", want);
	expect_series("linear", want);
}

static void test_linear_tam(void)
{
	/* 4(p + a)/2 + (a - p)/2; the first rotation holds a. */
	const double want[N_ROT] = {40, 60 + 5, 40 - 10, 0, 10 + 2.5};
	expect_series("linear-tam", want);
}

static void test_cam(void)
{
	/*
	 * k0: r = 2, 10 * 4 * 1/ln 2.  k1: b = 0 is taken as 1, r = 1/20,
	 * 20 * 4 * (0.05 - 1)/ln 0.05 = 25.369 (above a = 20, so kept).
	 * k2, k3: a = 0 gives 0.  k4: last, 4a.
	 */
	const double want[N_ROT] = {57.70780163555854, 25.36942325284539, 0, 0, 20};
	expect_series("cam", want);
	expect_series("nonlinear", want);
}

static void test_dcam(void)
{
	/*
	 * k0: 10 (1 + m + m^2 + m^3), m = 2^(1/4).  k1: b = 0 decays to 1 in
	 * the last slice, m = (1/20)^(1/3): 20 + 20m + 20m^2 + 1.  k2: 0 = 0.
	 * k3: a = 0, the 3 other slices ramp 1, m, m^2 with m = 5^(1/3).  k4: 4a.
	 */
	const double want[N_ROT] = {52.85213507883245, 31.082480613875685, 0, 5.633993684889562,
				    20};
	expect_series("dcam", want);
}

static void test_cam_floor_and_ratio_one(void)
{
	const size_t s[1] = {0};
	const mpxkit_layout l = {1, 4, s, 0};
	/* r = 1/1000: 4 (r - 1)/ln r = 0.578 < 1, so the floor a = 1000 holds. */
	const uint64_t obs[2] = {1000, 1};
	/* Ratio within rounding of 1: no 0/0, just G a. */
	const uint64_t near[2] = {1000000000000000ULL, 1000000000000001ULL};
	mpxkit_estimator *est = NULL;
	double out[2];

	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, "cam", &l, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_run(est, 2, obs, NULL, out), 0);
	CU_ASSERT_DOUBLE_EQUAL(out[0], 1000.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(out[1], 4.0, EPS);
	CU_ASSERT_EQUAL(mpxkit_estimator_run(est, 2, near, NULL, out), 0);
	CU_ASSERT(isfinite(out[0]));
	CU_ASSERT_DOUBLE_EQUAL(out[0] / 4e15, 1.0, 1e-9);
	mpxkit_estimator_free(est);
}

static void test_ref_rate(void)
{
	const mpxkit_layout l = {2, 4, two_slices, 1};
	/* Reference 10 30 0 60 (total 100).  Event 0 in slice 0: 5/10 x 100.  Event 1 in
	 * slice 2, where the reference counted nothing: fixed, 4 x 9. */
	const uint64_t obs[2] = {5, 9}, ref[4] = {10, 30, 0, 60};
	mpxkit_estimator *est = NULL;
	mpxkit_diag d = {0};
	double out[2];

	CU_ASSERT_EQUAL(mpxkit_estimator_new(&est, "ref-rate", &g4, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "estimator ref-rate needs a reference event counted in "
				      "every slice");
	CU_ASSERT_PTR_NULL(est);
	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, "ref-rate", &l, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_run(est, 1, obs, ref, out), 0);
	CU_ASSERT_DOUBLE_EQUAL(out[0], 50.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(out[1], 36.0, EPS);
	CU_ASSERT_EQUAL(mpxkit_estimator_run(est, 1, obs, NULL, out), -MPXKIT_EINVAL);
	mpxkit_estimator_free(est);
}

/* Runs every estimator offline on obs and checks each estimate against want(k, e). */
static void expect_all(const mpxkit_layout *l, size_t n, const uint64_t *obs, const uint64_t *ref,
		       double (*want)(size_t k, size_t e))
{
	double *out = malloc(n * l->n_events * sizeof *out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		mpxkit_estimator *est = NULL;
		if ((info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) && !l->has_reference)
			continue;
		CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, info->name, l, NULL, NULL), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_run(est, n, obs, ref, out), 0);
		for (size_t k = 0; k < n; k++)
			for (size_t e = 0; e < l->n_events; e++)
				CU_ASSERT_DOUBLE_EQUAL(out[k * l->n_events + e], want(k, e), EPS);
		mpxkit_estimator_free(est);
	}
	free(out);
}

static double zero(size_t k, size_t e)
{
	(void)k, (void)e;
	return 0.0;
}

static const uint64_t single_obs[2] = {6, 0};

static double single_want(size_t k, size_t e)
{
	(void)k;
	return 4.0 * (double)single_obs[e];
}

static const uint64_t g1_obs[8] = {3, 0, 9, 1, 0, 0, 2, 5};

static double g1_want(size_t k, size_t e)
{
	return (double)g1_obs[k * 2 + e];
}

static void test_edge_cases_all_estimators(void)
{
	const size_t one_slice[2] = {0, 0};
	const mpxkit_layout g1 = {2, 1, one_slice, 1};
	const mpxkit_layout g4r = {2, 4, two_slices, 1};
	const uint64_t zeros[6] = {0};
	const uint64_t ref_zero[12] = {0};
	const uint64_t ref_flat[4] = {1, 1, 1, 1};
	const uint64_t ref_g1[4] = {5, 5, 5, 5};

	/* Events that never fire: every estimator says 0, the reference too. */
	expect_all(&g4r, 3, zeros, ref_zero, zero);
	/* A single rotation: no neighbour, so every estimator is fixed's G x obs. */
	expect_all(&g4r, 1, single_obs, ref_flat, single_want);
	/* G = 1, nothing multiplexed: every estimator returns the observation itself. */
	expect_all(&g1, 4, g1_obs, ref_g1, g1_want);
}

static void test_registry(void)
{
	const mpxkit_estimator_info *info = NULL;
	const char *names[] = {"fixed", "linear-dira", "linear-tam", "cam", "dcam", "ref-rate"};
	mpxkit_estimator *est = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_estimator_count(), 6);
	for (size_t i = 0; i < 6; i++)
		CU_ASSERT_STRING_EQUAL(mpxkit_estimator_info_at(i)->name, names[i]);
	CU_ASSERT_PTR_NULL(mpxkit_estimator_info_at(6));
	CU_ASSERT_EQUAL(mpxkit_estimator_lookup("linear", &info), 0);
	CU_ASSERT_STRING_EQUAL(info->name, "linear-dira");
	CU_ASSERT_EQUAL(mpxkit_estimator_lookup("nonlinear", &info), 0);
	CU_ASSERT_STRING_EQUAL(info->name, "cam");
	CU_ASSERT_EQUAL(info->lookahead, 1);
	CU_ASSERT_EQUAL(mpxkit_estimator_lookup("linear-tam", &info), 0);
	CU_ASSERT_EQUAL(info->lookback, 1);
	CU_ASSERT_EQUAL(info->lookahead, 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_lookup("bogus", &info), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_estimator_new(&est, "bogus", &g4, NULL, &d), -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(d.msg, "no estimator named 'bogus'");
	{
		const size_t bad[1] = {4};
		const mpxkit_layout l = {1, 4, bad, 0};
		CU_ASSERT_EQUAL(mpxkit_estimator_new(&est, "fixed", &l, NULL, NULL),
				-MPXKIT_EINVAL);
	}
	CU_ASSERT_PTR_NULL(est);
	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&est, "nonlinear", &g4, NULL, NULL), 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_estimator_info_of(est)->name, "cam");
	mpxkit_estimator_free(est);
	mpxkit_estimator_free(NULL);
}

/* Pushes rotations one by one, then flushes; checks the look-ahead and the order. */
static size_t run_online(mpxkit_estimator *est, const mpxkit_layout *l, size_t n,
			 const uint64_t *obs, const uint64_t *ref, double *out)
{
	const mpxkit_estimator_info *info = mpxkit_estimator_info_of(est);
	size_t got = 0;
	uint64_t *obs_copy = malloc(l->n_events * sizeof *obs_copy);
	uint64_t *ref_copy = malloc(l->n_groups * sizeof *ref_copy);

	for (size_t k = 0; k < n; k++) {
		mpxkit_rotation rot;
		int rc;
		/* The caller's buffers are reused and scribbled on: the estimator must copy. */
		memcpy(obs_copy, obs + k * l->n_events, l->n_events * sizeof *obs_copy);
		if (ref)
			memcpy(ref_copy, ref + k * l->n_groups, l->n_groups * sizeof *ref_copy);
		rot.obs = obs_copy;
		rot.ref = ref ? ref_copy : NULL;
		rc = mpxkit_estimator_push(est, &rot, out + got * l->n_events);
		CU_ASSERT_EQUAL(rc, k >= info->lookahead ? 1 : 0);
		got += rc == 1;
		memset(obs_copy, 0xab, l->n_events * sizeof *obs_copy);
		memset(ref_copy, 0xab, l->n_groups * sizeof *ref_copy);
	}
	{
		/* peek predicts exactly what the flush below will give, and changes nothing. */
		double *peek = calloc(l->n_events, sizeof *peek);
		size_t first = got;
		int pending = mpxkit_estimator_peek(est, peek);
		CU_ASSERT_EQUAL(pending, (int)(n - got));
		CU_ASSERT(pending <= (int)info->lookahead);
		while (mpxkit_estimator_flush(est, out + got * l->n_events) == 1)
			got++;
		for (size_t e = 0; e < l->n_events; e++) {
			double sum = 0.0;
			for (size_t k = first; k < got; k++)
				sum += out[k * l->n_events + e];
			CU_ASSERT_EQUAL(peek[e], sum);
		}
		CU_ASSERT_EQUAL(mpxkit_estimator_peek(est, peek), 0);
		free(peek);
	}
	CU_ASSERT_EQUAL(mpxkit_estimator_flush(est, out), 0);
	free(obs_copy);
	free(ref_copy);
	return got;
}

static void test_online_equals_offline(void)
{
	unsigned seed = 777;
	for (int trial = 0; trial < 60; trial++) {
		size_t ng = 1 + rand_r(&seed) % 5, ne = 1 + rand_r(&seed) % 6;
		size_t n = 1 + rand_r(&seed) % 40;
		size_t *slice = malloc(ne * sizeof *slice);
		uint64_t *obs = malloc(n * ne * sizeof *obs), *ref = malloc(n * ng * sizeof *ref);
		double *off = malloc(n * ne * sizeof *off), *on = malloc(n * ne * sizeof *on);
		mpxkit_layout l = {ne, ng, slice, 1};

		for (size_t e = 0; e < ne; e++)
			slice[e] = (size_t)rand_r(&seed) % ng;
		for (size_t i = 0; i < n * ne; i++)
			obs[i] = rand_r(&seed) % 4 == 0 ? 0 : (uint64_t)(rand_r(&seed) % 100000);
		for (size_t i = 0; i < n * ng; i++)
			ref[i] = (uint64_t)(rand_r(&seed) % 1000);
		for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
			mpxkit_estimator *est = NULL;
			CU_ASSERT_EQUAL_FATAL(
			    mpxkit_estimator_new(&est, mpxkit_estimator_info_at(i)->name, &l, NULL,
						 NULL),
			    0);
			CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_run(est, n, obs, ref, off), 0);
			/* Twice, with a reset between: a second run starts clean. */
			for (int pass = 0; pass < 2; pass++) {
				memset(on, 0, n * ne * sizeof *on);
				CU_ASSERT_EQUAL(run_online(est, &l, n, obs, ref, on), n);
				CU_ASSERT(memcmp(on, off, n * ne * sizeof *on) == 0);
				mpxkit_estimator_reset(est);
			}
			mpxkit_estimator_free(est);
		}
		free(slice), free(obs), free(ref), free(off), free(on);
	}
}

static void test_estimates_bound_below(void)
{
	/* No estimate may fall below what the active slice alone counted. */
	unsigned seed = 99;
	const size_t s[3] = {0, 1, 2};
	const mpxkit_layout l = {3, 3, s, 0};
	uint64_t obs[30 * 3];
	double out[30 * 3];

	for (size_t i = 0; i < 90; i++)
		obs[i] = rand_r(&seed) % 3 == 0 ? 0 : (uint64_t)(rand_r(&seed) % 1000000);
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		mpxkit_estimator *est = NULL;
		if (mpxkit_estimator_info_at(i)->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE)
			continue;
		CU_ASSERT_EQUAL_FATAL(
		    mpxkit_estimator_new(&est, mpxkit_estimator_info_at(i)->name, &l, NULL, NULL),
		    0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_run(est, 30, obs, NULL, out), 0);
		for (size_t j = 0; j < 90; j++)
			CU_ASSERT(out[j] >= (double)obs[j] * (1 - 1e-12));
		mpxkit_estimator_free(est);
	}
}

static const cutest_case estimator_cases[] = {
    {"fixed", test_fixed},
    {"linear-dira", test_linear_dira},
    {"linear-tam", test_linear_tam},
    {"cam", test_cam},
    {"dcam", test_dcam},
    {"cam floor and r near 1", test_cam_floor_and_ratio_one},
    {"ref-rate", test_ref_rate},
    {"zeros, single rotation, G = 1", test_edge_cases_all_estimators},
    {"registry", test_registry},
    {"online equals offline", test_online_equals_offline},
    {"lower bound", test_estimates_bound_below},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"estimators", estimator_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	return cutest_run("test_estimators", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The mlp estimator's features on a hand-made window, against values worked out by hand. */
#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/model.h"
#include "mlp_features.h"

#define EPS	   1e-5		/* features are floats */
#define NX	   (20 + 6 * 8) /* the inputs at H = 2: own window, summaries, 8 slice slots */
#define SLOT(j, i) (20 + 6 * (j) + (i))

static const size_t slice[3] = {0, 1, 0};
/* Rotations k-1, k, k+1 of three events; log10(1 + obs) of event 0 is 1, 2, 3. */
static const uint64_t obs[3][3] = {{9, 0, 99}, {99, 9, 99}, {999, 0, 99}};
static const uint64_t ref[3][2] = {{9, 9}, {99, 299}, {49, 49}};

static void window(mpxkit_window *w, mpxkit_layout *l, mpxkit_rotation *rot, int with_ref)
{
	*l = (mpxkit_layout){
	    .n_events = 3, .n_groups = 2, .slice = slice, .has_reference = with_ref};
	for (int i = 0; i < 3; i++)
		rot[i] = (mpxkit_rotation){.obs = obs[i], .ref = with_ref ? ref[i] : NULL};
	*w = (mpxkit_window){.layout = l, .k = 5, .n_before = 1, .n_after = 1, .rot = rot};
}

static void test_levels_and_own_window(void)
{
	mpxkit_layout l;
	mpxkit_rotation rot[3];
	mpxkit_window w;
	double level[3], lgw[5 * 3];
	float x[NX];

	window(&w, &l, rot, 0);
	CU_ASSERT_EQUAL(mlp_feature_count(2), NX);
	mlp_levels(&w, 2, level, lgw);
	CU_ASSERT_DOUBLE_EQUAL(level[0], 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(level[1], 1.0 / 3.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(level[2], 2.0, 1e-12);
	mlp_features(&w, 0, 2, level, lgw, x);
	/* Own window d = -2..2: rotation k-2 and k+2 are outside the window. */
	const float v[5] = {0, -1, 0, 1, 0}, m[5] = {0, 1, 1, 1, 0};
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_DOUBLE_EQUAL(x[i], v[i], EPS);
		CU_ASSERT_DOUBLE_EQUAL(x[5 + i], m[i], EPS);
	}
	CU_ASSERT_DOUBLE_EQUAL(x[10], 0.0, EPS); /* slice 0 of 2 */
	CU_ASSERT_DOUBLE_EQUAL(x[11], log10(2.0), EPS);
	/* DIRA: 2*99 + (999-99)/2 = 648, per slice 324. */
	CU_ASSERT_DOUBLE_EQUAL(x[12], log10(325.0) - 2.0, EPS);
	/* CAM: 99 * 2 * (r - 1) / ln r with r = 999/99. */
	double cam = 198.0 * (900.0 / 99.0) / log(999.0 / 99.0);
	CU_ASSERT_DOUBLE_EQUAL(x[13], log10(1.0 + cam / 2.0) - 2.0, EPS);
	/* TAM: 2 (9+99)/2 + (99-9)/2 = 153, per slice 76.5. */
	CU_ASSERT_DOUBLE_EQUAL(x[14], log10(77.5) - 2.0, EPS);
	/* Event 2 shares slice 0 and sits at its level; event 1 is 2/3 above its own. */
	CU_ASSERT_DOUBLE_EQUAL(x[15], 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(x[16], (2.0 / 3.0 + 0.0) / 2.0, EPS);
	for (int i = 17; i < 20; i++)
		CU_ASSERT_DOUBLE_EQUAL(x[i], 0.0, EPS);

	/*
	 * Slots: slice 0 (event 0's own) holds event 2, lg 2 at its level 2 and at
	 * event 0's level 2; slice 1 holds event 1, lg 1 against its level 1/3
	 * and against event 0's level 2.  Slots 2..7 are past G.
	 */
	const float s0[6] = {1, 1, 0, 0, 0, 0}, s1[6] = {1, 0, 2.0f / 3, 2.0f / 3, -1, -1};
	for (int i = 0; i < 6; i++) {
		CU_ASSERT_DOUBLE_EQUAL(x[SLOT(0, i)], s0[i], EPS);
		CU_ASSERT_DOUBLE_EQUAL(x[SLOT(1, i)], s1[i], EPS);
	}
	for (int i = SLOT(2, 0); i < NX; i++)
		CU_ASSERT_DOUBLE_EQUAL(x[i], 0.0, EPS);
	/* The output starts from linear-dira: level 2 plus its input. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_origin(2, level[0], x), log10(325.0), EPS);

	/* Event 1 is alone in slice 1: no same-group mean. */
	mlp_features(&w, 1, 2, level, lgw, x);
	CU_ASSERT_DOUBLE_EQUAL(x[10], 0.5, EPS);
	CU_ASSERT_DOUBLE_EQUAL(x[15], 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(x[16], 0.0, EPS); /* events 0 and 2 both at their level */
	/* Slice 0 holds events 0 and 2, both lg 2: at their levels, 5/3 above event 1's. */
	const float t0[6] = {1, 0, 0, 0, 5.0f / 3, 5.0f / 3}, t1[6] = {1, 1, 0, 0, 0, 0};
	for (int i = 0; i < 6; i++) {
		CU_ASSERT_DOUBLE_EQUAL(x[SLOT(0, i)], t0[i], EPS);
		CU_ASSERT_DOUBLE_EQUAL(x[SLOT(1, i)], t1[i], EPS);
	}
}

static void test_reference(void)
{
	mpxkit_layout l;
	mpxkit_rotation rot[3];
	mpxkit_window w;
	double level[3], lgw[5 * 3];
	float x[NX];

	window(&w, &l, rot, 1);
	mlp_levels(&w, 2, level, lgw);
	mlp_features(&w, 0, 2, level, lgw, x);
	CU_ASSERT_DOUBLE_EQUAL(x[17], 1.0, EPS);
	/* Slice 0 saw 99 of the rotation's 398, whose mean per slice is 199. */
	CU_ASSERT_DOUBLE_EQUAL(x[18], 2.0 - log10(200.0), EPS);
	CU_ASSERT_DOUBLE_EQUAL(x[19], log10(399.0) - (log10(19.0) + log10(399.0) + log10(99.0)) / 3,
			       EPS);
	mlp_features(&w, 1, 2, level, lgw, x);
	CU_ASSERT_DOUBLE_EQUAL(x[18], log10(300.0) - log10(200.0), EPS);
}

static void test_target_and_estimate(void)
{
	/* 1998 over 2 slices is 999 per slice: log10(1000) - 2 = 1, and back. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_target(1998.0, 2.0, 2.0), 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(mlp_estimate(1.0, 2.0, 2.0, 2.0, 99.0), 1998.0, 1e-9);
	/* A rotation 3.5 nominal slices long at the same 999 per slice. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_estimate(1.0, 2.0, 3.5, 2.0, 99.0), 3496.5 + 0.5, 1e-9);
	/* Never below what the slice saw. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_estimate(-5.0, 2.0, 2.0, 2.0, 99.0), 99.0, 1e-12);
	/* One slice per rotation: the slice's count is the total, whatever the model says. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_estimate(3.0, 1.0, 1.0, 2.0, 99.0), 99.0, 1e-12);
	/* Loss weights: (total + G) over the run's mean of it. */
	CU_ASSERT_DOUBLE_EQUAL(mlp_weight(98.0, 2.0, 48.0), 2.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(mlp_weight(0.0, 2.0, 0.0), 1.0, 1e-12);
}

/* linear-dira by its formula (doc/estimators.md), b = a in the last rotation. */
static double dira(double g, const uint64_t *o, size_t nr, size_t ne, size_t k, size_t e)
{
	double a = (double)o[k * ne + e], b = k + 1 < nr ? (double)o[(k + 1) * ne + e] : a;

	return g * a + (b - a) * (g - 1.0) / 2.0;
}

/* A model that always outputs 0 is linear-dira, whose totals are then every target. */
static void test_run_as_dira(void)
{
	enum { NR = 9, NE = 3, G = 2, H = 3 };
	const size_t sl[NE] = {0, 1, 1};
	mpxkit_layout l = {NE, G, sl, 0, 0};
	uint64_t o[NR * NE], oc[NR * NE];
	double out[NR * NE];
	mpxkit_model_shape s = {.n_layers = 1,
				.width = {mlp_feature_count(H), 1},
				.feature_set = MLP_FEATURE_SET,
				.feature_param = H};
	mpxkit_model *m = NULL;
	mpxkit_diag d = {0};

	for (size_t i = 0; i < NR * NE; i++)
		o[i] = (i * 7919) % 1000 + (i % 5 == 0 ? 0 : 3);
	/* Even counts, so that dira's totals (halves at G = 2) are whole numbers. */
	for (size_t i = 0; i < NR * NE; i++)
		o[i] &= ~(uint64_t)1;
	for (size_t k = 0; k < NR; k++)
		for (size_t e = 0; e < NE; e++)
			oc[k * NE + e] = (uint64_t)dira(G, o, NR, NE, k, e);
	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_mlp_run(m, &l, NR, o, NULL, out, &d), 0);
	for (size_t i = 0; i < NR * NE; i++)
		CU_ASSERT_DOUBLE_EQUAL(out[i], (double)oc[i], 1e-3 * (1 + (double)oc[i]));

	mpxkit_mlp_samples smp = {.half = H};
	CU_ASSERT_EQUAL(mpxkit_mlp_samples_add(&smp, &l, NR, o, NULL, oc, 1, &d), 0);
	CU_ASSERT_EQUAL(smp.n, NE * NR);
	double wsum[NE] = {0};
	for (size_t i = 0; i < smp.n; i++) {
		CU_ASSERT_DOUBLE_EQUAL(smp.y[i], 0.0, 1e-5);
		wsum[i % NE] += smp.w[i];
	}
	/* The weights of each event average 1 over the run. */
	for (size_t e = 0; e < NE; e++)
		CU_ASSERT_DOUBLE_EQUAL(wsum[e], (double)NR, 1e-4);
	mpxkit_mlp_samples_free(&smp);

	/* A model for other features is refused. */
	mpxkit_model_free(m);
	s.feature_set = 0;
	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_mlp_run(m, &l, NR, o, NULL, out, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "feature set"));
	mpxkit_model_free(m);
}

static const cutest_case cases[] = {
    {"levels and the event's own window", test_levels_and_own_window},
    {"reference features", test_reference},
    {"target and estimate", test_target_and_estimate},
    {"a whole run, and training samples", test_run_as_dira},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"mlp-features", cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	return cutest_run("test_mlp_features", suites);
}

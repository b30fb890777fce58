/* SPDX-License-Identifier: BSD-3-Clause */
/* Features of the mlp estimator: per-event log levels, so one model serves every event. */
#include <math.h>

#include <stdlib.h>

#include "mpxkit/model.h"

#include "mlp_features.h"

size_t mlp_feature_count(unsigned h)
{
	return 2 * (2 * (size_t)h + 1) + 10;
}

static double lg(double x)
{
	return log10(1.0 + x);
}

/* Rotations k + d of the window with |d| <= h: d runs over [-lo, hi]. */
static void span(const mpxkit_window *w, unsigned h, long *lo, long *hi)
{
	*lo = (long)(w->n_before < h ? w->n_before : h);
	*hi = (long)(w->n_after < h ? w->n_after : h);
}

void mlp_levels(const mpxkit_window *w, unsigned h, double *level, double *lgw)
{
	size_t ne = w->layout->n_events;
	long lo, hi;

	span(w, h, &lo, &hi);
	for (size_t i = 0; i < (2 * (size_t)h + 1) * ne; i++)
		lgw[i] = 0.0;
	for (long d = -lo; d <= hi; d++)
		for (size_t e = 0; e < ne; e++)
			lgw[(size_t)(d + (long)h) * ne + e] = lg((double)window_obs(w, d, e));
	for (size_t e = 0; e < ne; e++) {
		double s = 0.0;
		for (long d = -lo; d <= hi; d++)
			s += lgw[(size_t)(d + (long)h) * ne + e];
		level[e] = s / (double)(lo + hi + 1);
	}
}

/* Mean of the other events' own normalised observations at k: same group (same slice), or all. */
static void others(const mpxkit_window *w, size_t e, const double *level, const double *lg_k,
		   float *x)
{
	const mpxkit_layout *l = w->layout;
	double s_grp = 0.0, s_all = 0.0;
	size_t n_grp = 0, n_all = 0;

	for (size_t f = 0; f < l->n_events; f++) {
		if (f == e)
			continue;
		double v = lg_k[f] - level[f];
		s_all += v, n_all++;
		if (l->slice[f] == l->slice[e])
			s_grp += v, n_grp++;
	}
	x[0] = n_grp ? (float)(s_grp / (double)n_grp) : 0.0f;
	x[1] = n_all ? (float)(s_all / (double)n_all) : 0.0f;
}

/* The reference: its own slice against the rotation's mean, the rotation against its window. */
static void reference(const mpxkit_window *w, size_t e, unsigned h, float *x)
{
	const mpxkit_layout *l = w->layout;
	size_t g = l->n_groups;
	long lo, hi;

	if (!l->has_reference || !w->rot[w->n_before].ref) {
		x[0] = x[1] = x[2] = 0.0f;
		return;
	}
	span(w, h, &lo, &hi);
	const uint64_t *ref = w->rot[w->n_before].ref;
	double sum_k = 0.0, lvl = 0.0;
	for (size_t j = 0; j < g; j++)
		sum_k += (double)ref[j];
	for (long d = -lo; d <= hi; d++) {
		const uint64_t *r = w->rot[(long)w->n_before + d].ref;
		double s = 0.0;
		for (size_t j = 0; j < g; j++)
			s += (double)r[j];
		lvl += lg(s);
	}
	x[0] = 1.0f;
	x[1] = (float)(lg((double)ref[l->slice[e]]) - lg(sum_k / (double)g));
	x[2] = (float)(lg(sum_k) - lvl / (double)(lo + hi + 1));
}

void mlp_features(const mpxkit_window *w, size_t e, unsigned h, const double *level,
		  const double *lgw, float *x)
{
	size_t ne = w->layout->n_events, n = 2 * (size_t)h + 1;
	double g = (double)w->layout->n_groups, lv = level[e];
	double a = (double)window_obs(w, 0, e);
	double b = w->n_after ? (double)window_obs(w, 1, e) : a;
	double p = w->n_before ? (double)window_obs(w, -1, e) : a;

	for (long d = -(long)h; d <= (long)h; d++) {
		int present = d < 0 ? (size_t)-d <= w->n_before : (size_t)d <= w->n_after;
		size_t i = (size_t)(d + (long)h);
		x[i] = present ? (float)(lgw[i * ne + e] - lv) : 0.0f;
		x[n + i] = present ? 1.0f : 0.0f;
	}
	x += 2 * n;
	x[0] = (float)((double)w->layout->slice[e] / g);
	x[1] = (float)log10(g);
	x[2] = (float)(lg(estimate_dira(g, a, b) / g) - lv);
	x[3] = (float)(lg(estimate_cam(g, a, b) / g) - lv);
	x[4] = (float)(lg(estimate_tam(g, p, a) / g) - lv);
	others(w, e, level, lgw + (size_t)h * ne, x + 5);
	reference(w, e, h, x + 7);
}

double mlp_target(double total, double g, double level)
{
	return lg(total / g) - level;
}

double mlp_estimate(double y, double g, double level, double a)
{
	/* 10^20 is above any 64-bit count: a wild output stays finite. */
	double e10 = level + y < 20.0 ? level + y : 20.0;
	double est = g * (pow(10.0, e10) - 1.0);

	return est > a ? est : a;
}

size_t mpxkit_mlp_feature_count(unsigned half)
{
	return mlp_feature_count(half);
}

/* The window of rotation k over a whole run, as mpxkit_estimator_run builds it. */
static void run_window(mpxkit_window *w, const mpxkit_layout *l, size_t n_rotations,
		       const uint64_t *obs, const uint64_t *ref, unsigned h, size_t k,
		       mpxkit_rotation *rot)
{
	size_t before = k < h ? k : h, left = n_rotations - 1 - k;
	size_t after = left < h ? left : h;

	*w = (mpxkit_window){l, k, before, after, rot};
	for (size_t i = 0; i < before + after + 1; i++) {
		size_t r = k - before + i;
		rot[i].obs = obs + r * l->n_events;
		rot[i].ref = l->has_reference && ref ? ref + r * l->n_groups : NULL;
	}
}

static int check_layout(const mpxkit_layout *l, unsigned h, mpxkit_diag *diag)
{
	if (!l || l->n_events == 0 || l->n_groups == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mlp: empty layout");
	if (h > MLP_HALF_MAX)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mlp: half-window %u above %d", h,
				   MLP_HALF_MAX);
	return 0;
}

int mpxkit_mlp_samples_add(mpxkit_mlp_samples *s, const mpxkit_layout *layout, size_t n_rotations,
			   const uint64_t *obs, const uint64_t *ref, const uint64_t *ocoe,
			   size_t stride, mpxkit_diag *diag)
{
	mpxkit_rotation rot[2 * MLP_HALF_MAX + 1];
	size_t nf = mlp_feature_count(s->half), ne;
	double *level = NULL;
	int rc = check_layout(layout, s->half, diag);

	if (rc < 0)
		return rc;
	if (stride == 0 || (n_rotations && (!obs || !ocoe)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mlp: bad run or stride");
	ne = layout->n_events;
	size_t want = s->n + ne * ((n_rotations + stride - 1) / stride);
	if (want > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < want)
			cap *= 2;
		float *x = realloc(s->x, cap * nf * sizeof(float));
		if (x)
			s->x = x;
		float *y = x ? realloc(s->y, cap * sizeof(float)) : NULL;
		if (!x || !y)
			return mpxkit_fail(diag, MPXKIT_ENOMEM,
					   "mlp: out of memory for %zu samples", want);
		s->y = y;
		s->cap = cap;
	}
	level = malloc((2 * (size_t)s->half + 2) * ne * sizeof(double));
	if (!level)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "mlp: out of memory");
	double *lgw = level + ne;
	double g = (double)layout->n_groups;
	for (size_t k = 0; k < n_rotations; k += stride) {
		mpxkit_window w;
		run_window(&w, layout, n_rotations, obs, ref, s->half, k, rot);
		mlp_levels(&w, s->half, level, lgw);
		for (size_t e = 0; e < ne; e++) {
			mlp_features(&w, e, s->half, level, lgw, s->x + s->n * nf);
			s->y[s->n] = (float)mlp_target((double)ocoe[k * ne + e], g, level[e]);
			s->n++;
		}
	}
	free(level);
	return 0;
}

void mpxkit_mlp_samples_free(mpxkit_mlp_samples *s)
{
	if (!s)
		return;
	free(s->x);
	free(s->y);
	s->x = s->y = NULL;
	s->n = s->cap = 0;
}

int mpxkit_mlp_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		   const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	unsigned h = s->feature_param;
	mpxkit_rotation rot[2 * MLP_HALF_MAX + 1];
	float *x = NULL, *scratch = NULL, y;
	double *level = NULL;
	int rc = check_layout(layout, h, diag);

	if (rc < 0)
		return rc;
	if (s->feature_set != MLP_FEATURE_SET || s->width[0] != mlp_feature_count(h) ||
	    s->width[s->n_layers] != 1)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "mlp: model has feature set %u with %zu inputs and %zu outputs, "
				   "expected set %d with %zu inputs and 1 output",
				   (unsigned)s->feature_set, s->width[0], s->width[s->n_layers],
				   MLP_FEATURE_SET, mlp_feature_count(h));
	x = malloc(mlp_feature_count(h) * sizeof(float));
	scratch = malloc(mpxkit_model_scratch_len(m) * sizeof(float));
	level = malloc((2 * (size_t)h + 2) * layout->n_events * sizeof(double));
	if (!x || !scratch || !level) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "mlp: out of memory");
		goto fail;
	}
	double g = (double)layout->n_groups;
	for (size_t k = 0; k < n_rotations; k++) {
		mpxkit_window w;
		run_window(&w, layout, n_rotations, obs, ref, h, k, rot);
		mlp_levels(&w, h, level, level + layout->n_events);
		for (size_t e = 0; e < layout->n_events; e++) {
			mlp_features(&w, e, h, level, level + layout->n_events, x);
			mpxkit_model_forward(m, x, &y, scratch);
			out[k * layout->n_events + e] =
			    mlp_estimate((double)y, g, level[e], (double)window_obs(&w, 0, e));
		}
	}
	rc = 0;
fail:
	free(x);
	free(scratch);
	free(level);
	return rc;
}

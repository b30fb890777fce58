/* SPDX-License-Identifier: BSD-3-Clause */
/* Features of the mlp estimator: per-event log levels, so one model serves every event. */
#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

#include "mlp_features.h"

size_t mlp_feature_count(unsigned h)
{
	return 2 * (2 * (size_t)h + 1) + 10 + 6 * MLP_SLOTS;
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

/*
 * log10(1 + obs) of the window's rotation k + d, from the memo when it holds
 * that row.  A window that says which slices counted what (any schedule)
 * gives log10(1 + c / t), the count per counted slice, and NAN for an event
 * it did not count, which the levels and features leave out; round-robin's
 * one counted slice per window makes that log10(1 + obs), as v1.
 */
static void lg_row(const mpxkit_window *w, long d, double *row, mlp_memo *memo)
{
	size_t ne = w->layout->n_events;
	const uint64_t *obs = w->rot[(long)w->n_before + d].obs;

	if (w->rot[(long)w->n_before + d].val != NULL) {
		for (size_t e = 0; e < ne; e++) {
			event_seen x = window_seen(w, d, e);
			row[e] = x.t > 0 ? lg(x.c / x.t) : NAN;
		}
		return;
	}
	if (!memo || memo->n_events != ne) {
		for (size_t e = 0; e < ne; e++)
			row[e] = lg((double)obs[e]);
		return;
	}
	size_t slot = ((size_t)((long)w->k + d)) % memo->n_slots;
	uint64_t *kept = memo->obs + slot * ne;
	double *kept_lg = memo->lg + slot * ne;
	if (!memo->filled[slot] || memcmp(kept, obs, ne * sizeof(*obs)) != 0) {
		for (size_t e = 0; e < ne; e++)
			kept_lg[e] = lg((double)obs[e]);
		memcpy(kept, obs, ne * sizeof(*obs));
		memo->filled[slot] = 1;
	}
	memcpy(row, kept_lg, ne * sizeof(*row));
}

void mlp_levels_memo(const mpxkit_window *w, unsigned h, double *level, double *lgw, mlp_memo *memo)
{
	size_t ne = w->layout->n_events;
	long lo, hi;

	span(w, h, &lo, &hi);
	for (size_t i = 0; i < (2 * (size_t)h + 1) * ne; i++)
		lgw[i] = 0.0;
	for (long d = -lo; d <= hi; d++)
		lg_row(w, d, lgw + (size_t)(d + (long)h) * ne, memo);
	for (size_t e = 0; e < ne; e++) {
		double s = 0.0;
		long n = 0;
		for (long d = -lo; d <= hi; d++) {
			double v = lgw[(size_t)(d + (long)h) * ne + e];
			if (!isnan(v))
				s += v, n++;
		}
		level[e] = n ? s / (double)n : 0.0;
	}
}

void mlp_levels(const mpxkit_window *w, unsigned h, double *level, double *lgw)
{
	mlp_levels_memo(w, h, level, lgw, NULL);
}

int mlp_memo_init(mlp_memo *memo, size_t n_events, unsigned h)
{
	size_t n = 2 * (size_t)h + 1;

	*memo = (mlp_memo){n_events, n, NULL, NULL, NULL};
	memo->obs = malloc(n * n_events * sizeof(*memo->obs));
	memo->lg = malloc(n * n_events * sizeof(*memo->lg));
	memo->filled = calloc(n, 1);
	if (!memo->obs || !memo->lg || !memo->filled) {
		mlp_memo_free(memo);
		return -MPXKIT_ENOMEM;
	}
	return 0;
}

void mlp_memo_free(mlp_memo *memo)
{
	free(memo->obs);
	free(memo->lg);
	free(memo->filled);
	*memo = (mlp_memo){0};
}

/* Whether events e and f counted in one slice of window k (round-robin: the same group). */
static int counted_together(const mpxkit_window *w, size_t e, size_t f)
{
	const mpxkit_layout *l = w->layout;
	const mpxkit_rotation *r = &w->rot[w->n_before];

	if (r->val == NULL)
		return l->slice[f] == l->slice[e];
	for (size_t j = 0; j < l->n_groups; j++)
		if (rot_val(l, r, j, e) != MPXKIT_NOT_COUNTED &&
		    rot_val(l, r, j, f) != MPXKIT_NOT_COUNTED)
			return 1;
	return 0;
}

/* Mean of the other events' own normalised observations at k: same group (same slice), or all. */
static void others(const mpxkit_window *w, size_t e, const double *level, const double *lg_k,
		   float *x)
{
	const mpxkit_layout *l = w->layout;
	double s_grp = 0.0, s_all = 0.0;
	size_t n_grp = 0, n_all = 0;

	for (size_t f = 0; f < l->n_events; f++) {
		if (f == e || isnan(lg_k[f])) /* f not counted in window k */
			continue;
		double v = lg_k[f] - level[f];
		s_all += v, n_all++;
		if (counted_together(w, e, f))
			s_grp += v, n_grp++;
	}
	x[0] = n_grp ? (float)(s_grp / (double)n_grp) : 0.0f;
	x[1] = n_all ? (float)(s_all / (double)n_all) : 0.0f;
}

/* The reference's count per nominal slice in slice j of rotation r. */
static double ref_rate(const mpxkit_rotation *r, size_t j)
{
	double len = rot_len(r, j);

	return len > 0 ? (double)r->ref[j] / len : 0.0;
}

/*
 * The reference: its own slice against the rotation's mean, the rotation
 * against its window; per nominal slice, so that a rotation stretched by a
 * late rotation thread looks like one of nominal length at the same rates.
 */
static void reference(const mpxkit_window *w, size_t e, unsigned h, float *x)
{
	const mpxkit_layout *l = w->layout;
	const mpxkit_rotation *k = &w->rot[w->n_before];
	size_t g = l->n_groups;
	long lo, hi;

	if (!l->has_reference || !k->ref) {
		x[0] = x[1] = x[2] = 0.0f;
		return;
	}
	span(w, h, &lo, &hi);
	double sum_k = 0.0, lvl = 0.0;
	for (size_t j = 0; j < g; j++)
		sum_k += ref_rate(k, j);
	for (long d = -lo; d <= hi; d++) {
		const mpxkit_rotation *r = &w->rot[(long)w->n_before + d];
		double s = 0.0;
		for (size_t j = 0; j < g; j++)
			s += ref_rate(r, j);
		lvl += lg(s);
	}
	/* The reference over e's slices (round-robin: its one slice), against the mean slice. */
	double in = 0.0;
	size_t n_in = 0;
	for (size_t j = 0; j < g; j++)
		if (rot_val(l, k, j, e) != MPXKIT_NOT_COUNTED)
			in += ref_rate(k, j), n_in++;
	x[0] = 1.0f;
	x[1] = n_in ? (float)(lg(in / (double)n_in) - lg(sum_k / (double)g)) : 0.0f;
	x[2] = (float)(lg(sum_k) - lvl / (double)(lo + hi + 1));
}

/*
 * What the other slices of rotation k saw.  A burst that event e's own slice
 * missed usually shows in the events counted beside it (cold instruction
 * misses come with cold last-level misses), so the model sees, per slice j:
 * present, whether it is e's own slice, the mean and the largest
 * lg(obs) - level of its other events (how unusual the slice was for them),
 * and the mean and the largest lg(obs) minus e's level (how large it was
 * against e, which gives a burst e never saw a size).
 */
static void slots(const mpxkit_window *w, size_t e, const double *level, const double *lg_k,
		  float *x)
{
	const mpxkit_layout *l = w->layout;
	double rel[MLP_SLOTS] = {0}, rel_max[MLP_SLOTS], abs[MLP_SLOTS] = {0}, abs_max[MLP_SLOTS];
	size_t n[MLP_SLOTS] = {0};

	const mpxkit_rotation *r = &w->rot[w->n_before];

	for (size_t f = 0; f < l->n_events; f++) {
		if (f == e)
			continue;
		double v = lg_k[f] - level[f], u = lg_k[f] - level[e];
		/* Each slice that counted f (round-robin: its group's one slice). */
		for (size_t j = 0; j < l->n_groups && j < MLP_SLOTS; j++) {
			if (rot_val(l, r, j, f) == MPXKIT_NOT_COUNTED)
				continue;
			rel[j] += v;
			abs[j] += u;
			rel_max[j] = n[j] == 0 || v > rel_max[j] ? v : rel_max[j];
			abs_max[j] = n[j] == 0 || u > abs_max[j] ? u : abs_max[j];
			n[j]++;
		}
	}
	for (size_t j = 0; j < MLP_SLOTS; j++, x += 6) {
		x[0] = j < l->n_groups ? 1.0f : 0.0f;
		x[1] = j < l->n_groups && rot_val(l, r, j, e) != MPXKIT_NOT_COUNTED ? 1.0f : 0.0f;
		x[2] = n[j] ? (float)(rel[j] / (double)n[j]) : 0.0f;
		x[3] = n[j] ? (float)rel_max[j] : 0.0f;
		x[4] = n[j] ? (float)(abs[j] / (double)n[j]) : 0.0f;
		x[5] = n[j] ? (float)abs_max[j] : 0.0f;
	}
}

void mlp_features(const mpxkit_window *w, size_t e, unsigned h, const double *level,
		  const double *lgw, float *x)
{
	size_t ne = w->layout->n_events, n = 2 * (size_t)h + 1, first = w->layout->n_groups;
	event_rates r = window_rates(w, e);
	double g = r.k.T, lv = level[e]; /* g: the rotation's length in nominal slices */

	/* The first slice that counted e (round-robin: its group's). */
	for (size_t j = 0; j < w->layout->n_groups && first == w->layout->n_groups; j++)
		if (rot_val(w->layout, &w->rot[w->n_before], j, e) != MPXKIT_NOT_COUNTED)
			first = j;

	for (long d = -(long)h; d <= (long)h; d++) {
		int present = d < 0 ? (size_t)-d <= w->n_before : (size_t)d <= w->n_after;
		size_t i = (size_t)(d + (long)h);
		/* The gaps: a window that did not count e is absent, as one past the run's end. */
		present = present && !isnan(lgw[i * ne + e]);
		x[i] = present ? (float)(lgw[i * ne + e] - lv) : 0.0f;
		x[n + i] = present ? 1.0f : 0.0f;
	}
	x += 2 * n;
	x[0] = (float)((double)first / (double)w->layout->n_groups);
	/* G, not the rotation's length: the features are rates, whatever the length (mlp_span). */
	x[1] = (float)log10((double)w->layout->n_groups);
	x[2] = (float)(lg(estimate_dira_rates(&r) / g) - lv);
	x[3] = (float)(lg(estimate_cam_rates(&r) / g) - lv);
	x[4] = (float)(lg(estimate_tam_rates(&r) / g) - lv);
	others(w, e, level, lgw + (size_t)h * ne, x + 5);
	reference(w, e, h, x + 7);
	slots(w, e, level, lgw + (size_t)h * ne, x + 10);
}

double mlp_origin(unsigned h, double level, const float *x)
{
	return level + (double)x[2 * (2 * (size_t)h + 1) + 2];
}

double mlp_target(double total, double g, double origin)
{
	return lg(total / g) - origin;
}

double mlp_span(const mpxkit_rotation *r, size_t n_groups)
{
	double span = 0.0;

	for (size_t j = 0; j < n_groups; j++)
		span += rot_len(r, j);
	return span;
}

double mlp_estimate(double y, double g, double span, double origin, double a)
{
	if (g <= 1.0) /* nothing multiplexed: the slice's count is the total */
		return a;
	/* 10^20 is above any 64-bit count: a wild output stays finite. */
	double e10 = origin + y < 20.0 ? origin + y : 20.0;
	/*
	 * A count is whole.  Rounding matters where the truth is 0 or a few: a
	 * network's output is not exact there, and 0.4 against 0 costs as much
	 * on the log scale of DTW as 40 against 100 (doc/estimators.md, "mlp").
	 */
	/*
	 * The features are counts per nominal slice, and so is the output: a
	 * rotation that a preempted rotation thread stretched is longer, and its
	 * total with it (G slices, exactly, where the lengths are all 1).
	 */
	double est = floor(span * (pow(10.0, e10) - 1.0) + 0.5);

	return est > a ? est : a;
}

size_t mpxkit_mlp_feature_count(unsigned half)
{
	return mlp_feature_count(half);
}

void mlp_run_window(mpxkit_window *w, const mpxkit_layout *l, const mpxkit_series *run,
		    unsigned h, size_t k, mpxkit_rotation *rot)
{
	size_t before = k < h ? k : h, left = run->n_windows - 1 - k;
	size_t after = left < h ? left : h;

	*w = (mpxkit_window){l, k, before, after, rot};
	for (size_t i = 0; i < before + after + 1; i++)
		rot[i] = series_window(l, run, k - before + i);
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

/* Each event's mean true count per rotation over the run. */
static void run_means(size_t n_rotations, size_t ne, const uint64_t *ocoe, double *mean)
{
	for (size_t e = 0; e < ne; e++) {
		double s = 0.0;
		for (size_t k = 0; k < n_rotations; k++)
			s += (double)ocoe[k * ne + e];
		mean[e] = n_rotations ? s / (double)n_rotations : 0.0;
	}
}

double mlp_weight(double total, double g, double mean)
{
	return (total + g) / (mean + g);
}

int mlp_rows_reserve(float **x, float **y, float **w, size_t *cap, size_t want, size_t nf)
{
	size_t c = *cap ? *cap : 4096;

	if (want <= *cap)
		return 0;
	while (c < want)
		c *= 2;
	/* Each array is kept as soon as it grows, so a failure leaves no dangling pointer. */
	float *nx = realloc(*x, c * nf * sizeof(float));
	if (nx)
		*x = nx;
	float *ny = nx ? realloc(*y, c * sizeof(float)) : NULL;
	if (ny)
		*y = ny;
	float *nw = ny ? realloc(*w, c * sizeof(float)) : NULL;
	if (!nw)
		return -MPXKIT_ENOMEM;
	*w = nw;
	*cap = c;
	return 0;
}

int mpxkit_mlp_samples_add(mpxkit_mlp_samples *s, const mpxkit_layout *layout, size_t n_rotations,
			   const uint64_t *obs, const uint64_t *ref, const uint64_t *ocoe,
			   size_t stride, mpxkit_diag *diag)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_mlp_samples_add_series(s, layout, &run, ocoe, stride, diag);
}

int mpxkit_mlp_samples_add_series(mpxkit_mlp_samples *s, const mpxkit_layout *layout,
				  const mpxkit_series *series, const uint64_t *ocoe, size_t stride,
				  mpxkit_diag *diag)
{
	mpxkit_rotation rot[2 * MLP_HALF_MAX + 1];
	mpxkit_series run = *series;
	size_t n_rotations = run.n_windows;
	const uint64_t *obs = run.obs;
	size_t nf = mlp_feature_count(s->half), ne;
	double *level = NULL;
	int rc = check_layout(layout, s->half, diag);

	if (rc < 0)
		return rc;
	if (stride == 0 || (n_rotations && (!obs || !ocoe)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mlp: bad run or stride");
	ne = layout->n_events;
	size_t want = s->n + ne * ((n_rotations + stride - 1) / stride);
	if (mlp_rows_reserve(&s->x, &s->y, &s->w, &s->cap, want, nf) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "mlp: out of memory for %zu samples", want);
	level = malloc((2 * (size_t)s->half + 3) * ne * sizeof(double));
	if (!level)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "mlp: out of memory");
	double *lgw = level + ne, *mean = lgw + (2 * (size_t)s->half + 1) * ne;
	run_means(n_rotations, ne, ocoe, mean);
	double g = (double)layout->n_groups;
	for (size_t k = 0; k < n_rotations; k += stride) {
		mpxkit_window w;
		mlp_run_window(&w, layout, &run, s->half, k, rot);
		mlp_levels(&w, s->half, level, lgw);
		for (size_t e = 0; e < ne; e++) {
			float *x = s->x + s->n * nf;
			mlp_features(&w, e, s->half, level, lgw, x);
			double o = mlp_origin(s->half, level[e], x);
			s->y[s->n] = (float)mlp_target((double)ocoe[k * ne + e], g, o);
			s->w[s->n] = (float)mlp_weight((double)ocoe[k * ne + e], g, mean[e]);
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
	free(s->w);
	s->x = s->y = s->w = NULL;
	s->n = s->cap = 0;
}

int mpxkit_mlp_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		   const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_mlp_run_series(m, layout, &run, out, diag);
}

int mpxkit_mlp_run_series(const mpxkit_model *m, const mpxkit_layout *layout,
			  const mpxkit_series *series, double *out, mpxkit_diag *diag)
{
	size_t n_rotations = series->n_windows;
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	unsigned h = s->feature_param;
	mpxkit_rotation rot[2 * MLP_HALF_MAX + 1];
	mpxkit_series run = *series;
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
	mlp_memo memo = {0};
	if (mlp_memo_init(&memo, layout->n_events, h) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "mlp: out of memory");
		goto fail;
	}
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
		mlp_run_window(&w, layout, &run, h, k, rot);
		mlp_levels_memo(&w, h, level, level + layout->n_events, &memo);
		for (size_t e = 0; e < layout->n_events; e++) {
			mlp_features(&w, e, h, level, level + layout->n_events, x);
			mpxkit_model_forward(m, x, &y, scratch);
			out[k * layout->n_events + e] =
			    mlp_estimate((double)y, g, mlp_span(&rot[w.n_before], layout->n_groups),
					 mlp_origin(h, level[e], x), (double)window_obs(&w, 0, e));
		}
	}
	rc = 0;
fail:
	mlp_memo_free(&memo);
	free(x);
	free(scratch);
	free(level);
	return rc;
}

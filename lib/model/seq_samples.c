/* SPDX-License-Identifier: BSD-3-Clause */
/* The bigru estimator's data: one sequence per run and event, a row of mlp features per rotation,
 * and a whole run estimated by a recurrent model. */
#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

/* The mlp's features (estimators/), relative to this file so no include path is needed. */
#include "../../estimators/mlp_features.h"

static int check_run(const mpxkit_layout *l, unsigned h, const mpxkit_series *run,
		     mpxkit_diag *diag)
{
	if (!l || !run || l->n_events == 0 || l->n_groups == 0 || (!l->slice && !run->val))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: empty layout");
	if (h > MLP_HALF_MAX)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: half-window %u above %d", h,
				   MLP_HALF_MAX);
	if (run->n_windows && !run->obs)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: no observations");
	return 0;
}

/*
 * The features of every event and rotation, event-major: the row of event
 * e, rotation k at x + (e * n_rotations + k) * nf, so each event's sequence
 * is contiguous; origin receives where each row's output starts from
 * (mlp_origin), in the same order.  work has (2h + 2) n_events doubles.
 * The same calls, in the same order, as mpxkit_mlp_samples_add and
 * mpxkit_mlp_run make (test_gru checks that the rows agree).
 */
static void run_features(const mpxkit_layout *l, const mpxkit_series *run, unsigned h, float *x,
			 double *origin, double *work)
{
	mpxkit_rotation rot[2 * MLP_HALF_MAX + 1];
	size_t ne = l->n_events, nf = mlp_feature_count(h), n_rotations = run->n_windows;
	double *lev = work, *lgw = work + ne;

	for (size_t k = 0; k < n_rotations; k++) {
		mpxkit_window w;

		mlp_run_window(&w, l, run, h, k, rot);
		mlp_levels(&w, h, lev, lgw);
		for (size_t e = 0; e < ne; e++) {
			float *row = x + (e * n_rotations + k) * nf;

			mlp_features(&w, e, h, lev, lgw, row);
			origin[e * n_rotations + k] = mlp_origin(h, lev[e], row);
		}
	}
}

/* Room for n_seq more sequences and n_rows more rows. */
static int reserve(mpxkit_bigru_samples *s, size_t n_seq, size_t n_rows, size_t nf)
{
	if (s->n_seq + n_seq + 1 > s->cap_seq) {
		size_t cap = s->cap_seq ? s->cap_seq : 64;
		while (cap < s->n_seq + n_seq + 1)
			cap *= 2;
		size_t *start = realloc(s->start, cap * sizeof(*start));
		if (!start)
			return -MPXKIT_ENOMEM;
		s->start = start;
		s->cap_seq = cap;
	}
	return mlp_rows_reserve(&s->x, &s->y, &s->w, &s->cap_rows, s->n_rows + n_rows, nf);
}

int mpxkit_bigru_samples_add(mpxkit_bigru_samples *s, const mpxkit_layout *layout,
			     size_t n_rotations, const uint64_t *obs, const uint64_t *ref,
			     const uint64_t *ocoe, mpxkit_diag *diag)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_bigru_samples_add_series(s, layout, &run, ocoe, diag);
}

int mpxkit_bigru_samples_add_series(mpxkit_bigru_samples *s, const mpxkit_layout *layout,
				    const mpxkit_series *run, const uint64_t *ocoe,
				    mpxkit_diag *diag)
{
	size_t nf, ne, n_rotations = run ? run->n_windows : 0;
	double *origin = NULL;
	int rc;

	if (!s)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: NULL samples");
	rc = check_run(layout, s->half, run, diag);
	if (rc < 0)
		return rc;
	if (n_rotations && !ocoe)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: no true counts");
	if (n_rotations == 0)
		return 0;
	nf = mlp_feature_count(s->half);
	ne = layout->n_events;
	if (reserve(s, ne, ne * n_rotations, nf) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "bigru: out of memory for %zu rows",
				   s->n_rows + ne * n_rotations);
	origin = malloc((ne * n_rotations + (2 * (size_t)s->half + 2) * ne) * sizeof(double));
	if (!origin)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "bigru: out of memory");
	if (s->n_seq == 0)
		s->start[0] = 0;
	run_features(layout, run, s->half, s->x + s->n_rows * nf, origin, origin + ne * n_rotations);
	double g = (double)layout->n_groups;
	for (size_t e = 0; e < ne; e++) {
		double mean = 0.0;
		for (size_t k = 0; k < n_rotations; k++)
			mean += (double)ocoe[k * ne + e];
		mean /= (double)n_rotations;
		for (size_t k = 0; k < n_rotations; k++) {
			size_t row = s->n_rows + e * n_rotations + k;
			double total = (double)ocoe[k * ne + e];
			s->y[row] = (float)mlp_target(total, g, origin[e * n_rotations + k]);
			s->w[row] = (float)mlp_weight(total, g, mean);
		}
		s->start[s->n_seq + e + 1] = s->n_rows + (e + 1) * n_rotations;
	}
	s->n_seq += ne;
	s->n_rows += ne * n_rotations;
	free(origin);
	return 0;
}

mpxkit_seq_set mpxkit_bigru_samples_set(const mpxkit_bigru_samples *s)
{
	static const size_t none = 0;
	mpxkit_seq_set set = {s->n_seq, s->n_seq ? s->start : &none, s->x, s->y, s->w};

	return set;
}

void mpxkit_bigru_samples_free(mpxkit_bigru_samples *s)
{
	if (!s)
		return;
	free(s->start);
	free(s->x);
	free(s->y);
	free(s->w);
	s->start = NULL;
	s->x = s->y = s->w = NULL;
	s->n_seq = s->n_rows = s->cap_seq = s->cap_rows = 0;
}

int mpxkit_bigru_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		     const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_bigru_run_series(m, layout, &run, out, diag);
}

int mpxkit_bigru_run_series(const mpxkit_model *m, const mpxkit_layout *layout,
			    const mpxkit_series *run, double *out, mpxkit_diag *diag)
{
	size_t n_rotations = run ? run->n_windows : 0;
	const uint64_t *obs = run ? run->obs : NULL;
	const mpxkit_model_shape *s;
	float *x = NULL, *y = NULL, *scratch = NULL;
	double *origin = NULL;
	size_t ne, nf;
	unsigned h;
	int rc;

	if (!m || (n_rotations && !out))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "bigru: NULL argument");
	s = mpxkit_model_shape_of(m);
	h = s->feature_param;
	rc = check_run(layout, h, run, diag);
	if (rc < 0)
		return rc;
	if (!mpxkit_model_is_recurrent(m) || s->feature_set != MLP_FEATURE_SET ||
	    s->width[0] != mlp_feature_count(h) || s->width[s->n_layers] != 1)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "bigru: model has feature set %u with %zu inputs and %zu "
				   "outputs%s, expected a recurrent model of set %d with %zu "
				   "inputs and 1 output",
				   (unsigned)s->feature_set, s->width[0], s->width[s->n_layers],
				   mpxkit_model_is_recurrent(m) ? "" : " and no GRU",
				   MLP_FEATURE_SET, mlp_feature_count(h));
	if (n_rotations == 0)
		return 0;
	ne = layout->n_events;
	nf = mlp_feature_count(h);
	x = malloc(ne * n_rotations * nf * sizeof(float));
	y = malloc(n_rotations * sizeof(float));
	origin = malloc((ne * n_rotations + (2 * (size_t)h + 2) * ne) * sizeof(double));
	size_t sl = mpxkit_model_seq_scratch_len(m, n_rotations);
	scratch = sl < SIZE_MAX / sizeof(float) ? malloc(sl * sizeof(float)) : NULL;
	if (!x || !y || !origin || !scratch) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "bigru: out of memory for %zu rotations",
				 n_rotations);
		goto fail;
	}
	run_features(layout, run, h, x, origin, origin + ne * n_rotations);
	double g = (double)layout->n_groups;
	for (size_t e = 0; e < ne; e++) {
		mpxkit_model_forward_seq(m, n_rotations, x + e * n_rotations * nf, y, scratch);
		for (size_t k = 0; k < n_rotations; k++) {
			mpxkit_rotation r = series_window(layout, run, k);
			out[k * ne + e] =
			    mlp_estimate((double)y[k], g, mlp_span(&r, layout->n_groups),
					 origin[e * n_rotations + k], (double)obs[k * ne + e]);
		}
	}
	rc = 0;
fail:
	free(x);
	free(y);
	free(origin);
	free(scratch);
	return rc;
}

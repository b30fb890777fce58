/* SPDX-License-Identifier: BSD-3-Clause */
/* mlp: the learned estimator, a small network over each event's normalised window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

#include "learned.h"
#include "mlp_features.h"

/* Where the default model lies under the data directory (data/local.am installs it there). */
#define DEFAULT_MODEL "models/default.mpxm"

/*
 * The model and the scratch of one estimate, all allocated by init: an
 * estimate allocates nothing.  The scratch makes an mlp estimator, unlike
 * the interpolating ones, usable from one thread at a time.
 */
typedef struct mlp_state {
	mpxkit_model *model;
	unsigned half;	/* H: the look-back and the look-ahead */
	float *x;	/* the inputs of one event */
	float *scratch; /* mpxkit_model_forward's */
	double *level;	/* n_events levels, then (2H + 1) x n_events logarithms */
	mlp_memo memo;	/* the logarithms of the last 2H + 1 rotations */
} mlp_state;

/* The model must be one that these features feed, one rotation at a time. */
static int check_shape(const mpxkit_model *m, const char *path, mpxkit_diag *diag)
{
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	unsigned h = s->feature_param;

	/* A GRU run one step at a time would see no neighbours: the bigru estimator's model. */
	if (mpxkit_model_is_recurrent(m))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s: a recurrent model (the bigru estimator's), not an mlp "
				   "estimator model",
				   path);
	if (s->feature_set != MLP_FEATURE_SET || h > MLP_HALF_MAX ||
	    s->width[0] != mlp_feature_count(h) || s->width[s->n_layers] != 1)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s: not an mlp estimator model: feature set %u, half-window "
				   "%u, %zu inputs, %zu outputs (expected set %d, half-window <= "
				   "%d, %zu inputs, 1 output)",
				   path, (unsigned)s->feature_set, h, s->width[0],
				   s->width[s->n_layers], MLP_FEATURE_SET, MLP_HALF_MAX,
				   mlp_feature_count(h <= MLP_HALF_MAX ? h : MLP_HALF_MAX));
	return 0;
}

static void mlp_fini(mpxkit_estimator *est)
{
	mlp_state *st = est->state;

	if (st == NULL)
		return;
	mpxkit_model_free(st->model);
	mlp_memo_free(&st->memo);
	free(st->x);
	free(st->scratch);
	free(st->level);
	free(st);
	est->state = NULL;
}

static int mlp_init(mpxkit_estimator *est, const mpxkit_estimator_options *opts, mpxkit_diag *diag)
{
	char *path = NULL;
	size_t ne = est->layout.n_events ? est->layout.n_events : 1;
	mlp_state *st = calloc(1, sizeof *st);
	int rc;

	if (st == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator mlp: out of memory");
	est->state = st;
	rc = learned_model_load("mlp", opts->model, DEFAULT_MODEL, &st->model, &path, diag);
	if (rc < 0)
		goto fail;
	rc = check_shape(st->model, path, diag);
	if (rc < 0)
		goto fail;
	st->half = mpxkit_model_shape_of(st->model)->feature_param;
	st->x = malloc(mlp_feature_count(st->half) * sizeof *st->x);
	st->scratch = malloc(mpxkit_model_scratch_len(st->model) * sizeof *st->scratch);
	st->level = malloc((2 * (size_t)st->half + 2) * ne * sizeof *st->level);
	if (st->x == NULL || st->scratch == NULL || st->level == NULL ||
	    mlp_memo_init(&st->memo, ne, st->half) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator mlp: out of memory");
		goto fail;
	}
	/* The model sees H rotations on either side, so the ring and the runs must hold them. */
	est->info.lookback = st->half;
	est->info.lookahead = st->half;
	free(path);
	return 0;
fail:
	free(path);
	mlp_fini(est);
	return rc;
}

static void mlp_estimate_window(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	const mlp_state *st = est->state;
	size_t ne = w->layout->n_events;
	double g = (double)w->layout->n_groups;
	double span = mlp_span(&w->rot[w->n_before], w->layout->n_groups);

	/* One slice per rotation: nothing is multiplexed and the count is the total. */
	if (w->layout->n_groups == 1) {
		for (size_t e = 0; e < ne; e++)
			out[e] = (double)window_obs(w, 0, e);
		return;
	}
	/* The state is the estimator's own: the memo only saves logarithms, it changes no result.
	 */
	mlp_levels_memo(w, st->half, st->level, st->level + ne, (mlp_memo *)&st->memo);
	for (size_t e = 0; e < ne; e++) {
		float y;
		mlp_features(w, e, st->half, st->level, st->level + ne, st->x);
		mpxkit_model_forward(st->model, st->x, &y, st->scratch);
		out[e] = mlp_estimate((double)y, g, span, mlp_origin(st->half, st->level[e], st->x),
				      (double)window_obs(w, 0, e));
	}
}

const estimator_ops estimator_mlp = {
    .info =
	{
	    .name = "mlp",
	    .summary = "a small neural network over each event's normalised window (a model file)",
	    /* The model's half-window H, set by init: H = 4 for the default model. */
	    .lookback = 0,
	    .lookahead = 0,
	    .flags = MPXKIT_ESTIMATOR_LEARNED,
	},
    .init = mlp_init,
    .fini = mlp_fini,
    .estimate = mlp_estimate_window,
    .interval = &interval_cal_mlp,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* bigru: the learned estimator over each event's series, a bidirectional GRU run on a window. */
#include <stdlib.h>

#include "mpxkit/model.h"

#include "learned.h"
#include "mlp_features.h"

/* Where the default model lies under the data directory (data/local.am installs it there). */
#define DEFAULT_MODEL "models/bigru.mpxm"

/*
 * The window the GRU reads for rotation k (doc/estimators.md, "bigru"): B
 * rotations before it and A after it, so rotation k is estimated A
 * rotations after it ended.  W = B + A + 1 = 16 was chosen on the
 * validation programs: it costs 0.025 of mean RA against the whole series,
 * and 4 is the least look-ahead that keeps the cost that small (2: 0.10).
 */
#define WINDOW_LOOKBACK	 11
#define WINDOW_LOOKAHEAD 4
/* bigru-full's window: every run up to 2 x 512 + 1 rotations is read whole. */
#define FULL_REACH 512

/*
 * The model and the scratch of one estimate, all allocated by init: an
 * estimate allocates nothing.  The scratch and the memo make a bigru
 * estimator, like an mlp one, usable from one thread at a time.
 */
typedef struct bigru_state {
	mpxkit_model *model;
	unsigned half;	/* H: the features' look-back and look-ahead */
	size_t steps;	/* the longest window: B + A + 1 */
	float *x;	/* n_events sequences of up to steps rows of features */
	float *y;	/* one sequence's outputs */
	float *scratch; /* mpxkit_model_forward_seq's, for steps */
	double *origin; /* where each row's output starts from (mlp_origin) */
	double *level;	/* n_events levels, then (2H + 1) x n_events logarithms */
	mlp_memo memo;	/* the logarithms of the last steps + 1 rotations */
} bigru_state;

/* The model must be recurrent and fed by the mlp's features. */
static int check_shape(const mpxkit_model *m, const char *who, const char *path, mpxkit_diag *diag)
{
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	unsigned h = s->feature_param;

	if (!mpxkit_model_is_recurrent(m))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "estimator %s: %s: not a recurrent model (no GRU layer), so "
				   "not a bigru estimator model",
				   who, path);
	if (s->feature_set != MLP_FEATURE_SET || h > MLP_HALF_MAX ||
	    s->width[0] != mlp_feature_count(h) || s->width[s->n_layers] != 1)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "estimator %s: %s: not a bigru estimator model: feature set %u, "
				   "half-window %u, %zu inputs, %zu outputs (expected set %d, "
				   "half-window <= %d, %zu inputs, 1 output)",
				   who, path, (unsigned)s->feature_set, h, s->width[0],
				   s->width[s->n_layers], MLP_FEATURE_SET, MLP_HALF_MAX,
				   mlp_feature_count(h <= MLP_HALF_MAX ? h : MLP_HALF_MAX));
	return 0;
}

static void bigru_fini(mpxkit_estimator *est)
{
	bigru_state *st = est->state;

	if (st == NULL)
		return;
	mpxkit_model_free(st->model);
	mlp_memo_free(&st->memo);
	free(st->x);
	free(st->y);
	free(st->scratch);
	free(st->origin);
	free(st->level);
	free(st);
	est->state = NULL;
}

/* Both variants: the model, then scratch for windows of lookback + lookahead + 1 rotations. */
static int bigru_setup(mpxkit_estimator *est, const mpxkit_estimator_options *opts,
		       unsigned lookback, unsigned lookahead, mpxkit_diag *diag)
{
	const char *who = est->info.name;
	char *path = NULL;
	size_t ne = est->layout.n_events ? est->layout.n_events : 1, nf, sl;
	bigru_state *st = calloc(1, sizeof *st);
	int rc;

	if (st == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", who);
	est->state = st;
	rc = learned_model_load(who, opts->model, DEFAULT_MODEL, &st->model, &path, diag);
	if (rc < 0)
		goto fail;
	rc = check_shape(st->model, who, path, diag);
	if (rc < 0)
		goto fail;
	st->half = mpxkit_model_shape_of(st->model)->feature_param;
	st->steps = (size_t)lookback + lookahead + 1;
	nf = mlp_feature_count(st->half);
	sl = mpxkit_model_seq_scratch_len(st->model, st->steps);
	st->x = malloc(ne * st->steps * nf * sizeof *st->x);
	st->y = malloc(st->steps * sizeof *st->y);
	st->scratch = sl < SIZE_MAX / sizeof(float) ? malloc(sl * sizeof(float)) : NULL;
	st->origin = malloc(ne * st->steps * sizeof *st->origin);
	st->level = malloc((2 * (size_t)st->half + 2) * ne * sizeof *st->level);
	/* Slots for every rotation of a window and the next, so each logarithm is taken once. */
	if (st->x == NULL || st->y == NULL || st->scratch == NULL || st->origin == NULL ||
	    st->level == NULL || mlp_memo_init(&st->memo, ne, (unsigned)(st->steps / 2 + 1)) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", who);
		goto fail;
	}
	est->info.lookback = lookback;
	est->info.lookahead = lookahead;
	free(path);
	return 0;
fail:
	free(path);
	bigru_fini(est);
	return rc;
}

static int bigru_init(mpxkit_estimator *est, const mpxkit_estimator_options *opts,
		      mpxkit_diag *diag)
{
	return bigru_setup(est, opts, WINDOW_LOOKBACK, WINDOW_LOOKAHEAD, diag);
}

static int bigru_full_init(mpxkit_estimator *est, const mpxkit_estimator_options *opts,
			   mpxkit_diag *diag)
{
	return bigru_setup(est, opts, FULL_REACH, FULL_REACH, diag);
}

/*
 * The window's rotations are a run of their own (mpxkit_bigru_run's rows
 * for that stretch): each rotation's features see its H neighbours inside
 * the window only, and the GRU starts from a zero state at both ends.
 */
static void bigru_estimate_window(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	bigru_state *st = est->state;
	const mpxkit_model *m = st->model;
	size_t ne = w->layout->n_events, len = w->n_before + w->n_after + 1, h = st->half;
	size_t nf = mlp_feature_count(st->half), at = w->n_before;
	double g = (double)w->layout->n_groups, *lev = st->level, *lgw = st->level + ne;

	/* One slice per rotation: nothing is multiplexed and the count is the total. */
	if (w->layout->n_groups == 1) {
		for (size_t e = 0; e < ne; e++)
			out[e] = (double)window_obs(w, 0, e);
		return;
	}
	for (size_t j = 0; j < len; j++) {
		size_t before = j < h ? j : h, after = len - 1 - j < h ? len - 1 - j : h;
		mpxkit_window sub = {w->layout, w->k - w->n_before + j, before, after,
				     w->rot + j - before};

		/* The memo only saves logarithms; it changes no result. */
		mlp_levels_memo(&sub, st->half, lev, lgw, &st->memo);
		for (size_t e = 0; e < ne; e++) {
			float *row = st->x + (e * len + j) * nf;

			mlp_features(&sub, e, st->half, lev, lgw, row);
			st->origin[e * len + j] = mlp_origin(st->half, lev[e], row);
		}
	}
	for (size_t e = 0; e < ne; e++) {
		mpxkit_model_forward_seq(m, len, st->x + e * len * nf, st->y, st->scratch);
		out[e] = mlp_estimate((double)st->y[at], g, st->origin[e * len + at],
				      (double)window_obs(w, 0, e));
	}
}

const estimator_ops estimator_bigru = {
    .info =
	{
	    .name = "bigru",
	    .summary = "a bidirectional GRU over each event's series, on a sliding window (a "
		       "model file)",
	    /* Set by init: the window of the default model's doc. */
	    .lookback = 0,
	    .lookahead = 0,
	},
    .init = bigru_init,
    .fini = bigru_fini,
    .estimate = bigru_estimate_window,
};

const estimator_ops estimator_bigru_full = {
    .info =
	{
	    .name = "bigru-full",
	    .summary = "the bigru model over the whole run (up to 1025 rotations): offline",
	    .lookback = 0,
	    .lookahead = 0,
	},
    .init = bigru_full_init,
    .fini = bigru_fini,
    .estimate = bigru_estimate_window,
};

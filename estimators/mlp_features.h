/* SPDX-License-Identifier: BSD-3-Clause */
/* The mlp estimator's inputs and output, per event and rotation (doc/estimators.md, "mlp"). */
#ifndef MPXKIT_MLP_FEATURES_H
#define MPXKIT_MLP_FEATURES_H

#include "estimator-impl.h"

/* The model file's feature_set for these features; feature_param is the half-window H. */
#define MLP_FEATURE_SET MPXKIT_MLP_FEATURE_SET
#define MLP_HALF_MAX	16
/* Slices of a rotation whose events the cross-slice features describe one by one. */
#define MLP_SLOTS 8

/* Inputs of the model for half-window h: 2 (2h + 1) + 10 + 6 MLP_SLOTS. */
size_t mlp_feature_count(unsigned h);

/*
 * Each event's level: the mean of log10(1 + obs) over the rotations of the
 * window within h of k.  level has n_events entries; lg receives
 * log10(1 + obs) of rotation k + d, event e at lg[(d + h) * n_events + e]
 * (0 outside the window), (2h + 1) x n_events entries, so the features
 * compute each logarithm once.
 */
void mlp_levels(const mpxkit_window *w, unsigned h, double *level, double *lg);

/*
 * Rows of log10(1 + obs) already computed, so that a run pays one logarithm
 * per observation instead of 2H + 1.  Rotation k's row is kept in slot
 * k mod (2H + 1) with the counts it came from, and reused only when the
 * window's counts are the same, so a reset or another run simply computes
 * afresh: the results are those of mlp_levels, bit for bit.
 */
typedef struct mlp_memo {
	size_t n_events, n_slots;
	uint64_t *obs;	       /* n_slots rows of n_events counts */
	double *lg;	       /* their logarithms */
	unsigned char *filled; /* per slot */
} mlp_memo;

int mlp_memo_init(mlp_memo *memo, size_t n_events, unsigned h); /* 0 or -MPXKIT_ENOMEM */
void mlp_memo_free(mlp_memo *memo);

/* mlp_levels through a memo (NULL: none). */
void mlp_levels_memo(const mpxkit_window *w, unsigned h, double *level, double *lg, mlp_memo *memo);

/* The inputs for event e at the window's rotation k; x has mlp_feature_count(h) floats. */
void mlp_features(const mpxkit_window *w, size_t e, unsigned h, const double *level,
		  const double *lg, float *x);

/*
 * Where the model's output starts from, on the lg scale: the level plus the
 * linear-dira input, so an output of 0 is linear-dira's estimate and the
 * model learns only a correction to it.  x holds the features of e.
 */
double mlp_origin(unsigned h, double level, const float *x);

/*
 * The window of rotation k over a whole run, at most h rotations either
 * side, as mpxkit_estimator_run builds it; rot has room for 2h + 1.
 */
void mlp_run_window(mpxkit_window *w, const mpxkit_layout *l, const mpxkit_series *run,
		    unsigned h, size_t k, mpxkit_rotation *rot);

/*
 * Room for want rows in the training arrays x (nf floats a row), y and w
 * (one float a row), which hold *cap rows: each grows by doubling, and *cap
 * follows.  0, or -MPXKIT_ENOMEM with the arrays still valid.
 */
int mlp_rows_reserve(float **x, float **y, float **w, size_t *cap, size_t want, size_t nf);

/* The training target: log10(1 + total / G) minus the origin. */
double mlp_target(double total, double g, double origin);

/*
 * The weight of a sample in the RA-shaped loss (doc/estimators.md, "mlp"):
 * (total + g) over its mean in the run, so the weights of one run and event
 * average 1 and a rotation weighs as much as it can cost in RA.
 */
double mlp_weight(double total, double g, double mean);

/*
 * The model's output y back to a rotation total: a whole count, never below
 * a, what the slice saw.  g is G, the slices per rotation; span the
 * rotation's length in nominal slices (mlp_span), which the output, a count
 * per nominal slice, is scaled by.
 */
double mlp_estimate(double y, double g, double span, double origin, double a);

/* Rotation r's length in nominal slices: its slices' lengths where it has them, else n_groups. */
double mlp_span(const mpxkit_rotation *r, size_t n_groups);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The mlp estimator's inputs and output, per event and rotation (doc/estimators.md, "mlp"). */
#ifndef MPXKIT_MLP_FEATURES_H
#define MPXKIT_MLP_FEATURES_H

#include "estimator-impl.h"

/* The model file's feature_set for these features; feature_param is the half-window H. */
#define MLP_FEATURE_SET 1
#define MLP_HALF_MAX	16

/* Inputs of the model for half-window h: 2 (2h + 1) + 10. */
size_t mlp_feature_count(unsigned h);

/*
 * Each event's level: the mean of log10(1 + obs) over the rotations of the
 * window within h of k.  level has n_events entries; lg receives
 * log10(1 + obs) of rotation k + d, event e at lg[(d + h) * n_events + e]
 * (0 outside the window), (2h + 1) x n_events entries, so the features
 * compute each logarithm once.
 */
void mlp_levels(const mpxkit_window *w, unsigned h, double *level, double *lg);

/* The inputs for event e at the window's rotation k; x has mlp_feature_count(h) floats. */
void mlp_features(const mpxkit_window *w, size_t e, unsigned h, const double *level,
		  const double *lg, float *x);

/* The training target: log10(1 + total / G) minus the level. */
double mlp_target(double total, double g, double level);

/* The model's output y back to a rotation total, never below a, the count the slice saw. */
double mlp_estimate(double y, double g, double level, double a);

#endif

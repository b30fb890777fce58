/* SPDX-License-Identifier: BSD-3-Clause */
/* Linear least squares, weighted and ridge, through LAPACK: the one solver every model fit uses. */
#ifndef MPXKIT_LSQ_H
#define MPXKIT_LSQ_H

#include <stddef.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Solves  min_b  sum_i w_i (y_i - x_i . b)^2  +  ridge * sum_{j >= skip} b_j^2
 *
 * for an n x p design matrix X (row-major: x[i * p + j]), observations y and
 * optional non-negative weights w (NULL: all 1).  Weights are how a fit
 * minimises relative rather than absolute error: w_i = 1 / y_i^2.  Ridge is
 * applied to the columns from `ridge_skip` on, so an intercept in the first
 * column(s) is never shrunk.  Columns are not rescaled: callers that use
 * ridge on columns of different units scale them first.
 *
 * The solve is LAPACKE_dgelsd (SVD, minimum-norm for rank-deficient X) on
 * sqrt(w)-scaled rows with sqrt(ridge) rows appended, so a rank-deficient or
 * collinear design gives the minimum-norm solution rather than garbage.
 * `rcond` (<= 0: machine precision x max(n, p)) sets which singular values
 * count; the rank found is returned in *rank (optional).
 *
 * Returns 0 with b[0..p-1] written; -MPXKIT_EINVAL for n == 0, p == 0, a
 * NaN/inf input or a negative weight or ridge; -MPXKIT_ENOMEM; -MPXKIT_ERANGE
 * when LAPACK does not converge.  X, y and w are not modified.
 */
typedef struct mpxkit_lsq_options {
	const double *weights; /* n values, or NULL */
	double ridge;          /* >= 0 */
	size_t ridge_skip;     /* leading columns exempt from the ridge penalty */
	double rcond;          /* <= 0: default */
} mpxkit_lsq_options;

int mpxkit_lsq_solve(const double *x, const double *y, size_t n, size_t p,
		     const mpxkit_lsq_options *opt, double *b, size_t *rank, mpxkit_diag *diag);

/* Residual statistics of a fitted b on (x, y): mean absolute percentage error in per cent,
 * skipping rows with y == 0 (counted in *skipped, optional).  NaN when no row counts. */
double mpxkit_lsq_mape(const double *x, const double *y, size_t n, size_t p, const double *b,
		       size_t *skipped);

#ifdef __cplusplus
}
#endif
#endif

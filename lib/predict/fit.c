/* SPDX-License-Identifier: BSD-3-Clause */
/* Design matrices for the model fits, solved by the one least-squares solver (mpxkit/lsq.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/lsq.h"

#include "predict_impl.h"

int mpxkit__pm_design_add(pm_design *d, const double *row, double y, double w)
{
	for (size_t j = 0; j < d->p; j++)
		if (!isfinite(row[j]))
			return 0; /* a row the inputs cannot describe is left out, not fitted */
	if (!isfinite(y) || !isfinite(w) || !(w >= 0))
		return 0;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		double *x = realloc(d->x, cap * d->p * sizeof *x);
		if (x == NULL)
			return -1;
		d->x = x;
		if ((x = realloc(d->y, cap * sizeof *x)) == NULL)
			return -1;
		d->y = x;
		if ((x = realloc(d->w, cap * sizeof *x)) == NULL)
			return -1;
		d->w = x;
		d->cap = cap;
	}
	memcpy(d->x + d->n * d->p, row, d->p * sizeof *row);
	d->y[d->n] = y;
	d->w[d->n++] = w;
	return 0;
}

void mpxkit__pm_design_free(pm_design *d)
{
	free(d->x);
	free(d->y);
	free(d->w);
	memset(d, 0, sizeof *d);
}

/*
 * Ridge needs columns of one scale: each penalised column is divided by its
 * weighted root mean square before the solve and the coefficient by the same
 * afterwards, so the penalty means the same for cycles/s and misses/s.
 */
int mpxkit__pm_design_fit(const pm_design *d, double ridge, size_t skip, double *b,
			  mpxkit_diag *diag)
{
	mpxkit_lsq_options opt = {.weights = d->w, .ridge = ridge, .ridge_skip = skip};
	double scale[MPXKIT_PMODEL_MAX_COEFS];
	double *x = d->x;
	int rc;

	/* Without ridge, fewer rows than coefficients cannot be a fit; with it they can. */
	if (d->n == 0 || (d->n < d->p && !(ridge > 0)) || d->p > MPXKIT_PMODEL_MAX_COEFS)
		return -1;
	for (size_t j = 0; j < d->p; j++)
		scale[j] = 1;
	if (ridge > 0) {
		if ((x = malloc(d->n * d->p * sizeof *x)) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		for (size_t j = skip; j < d->p; j++) {
			double ss = 0, ws = 0;
			for (size_t i = 0; i < d->n; i++)
				ss += d->w[i] * d->x[i * d->p + j] * d->x[i * d->p + j],
				    ws += d->w[i];
			scale[j] = ws > 0 && ss > 0 ? sqrt(ss / ws) : 1;
		}
		for (size_t i = 0; i < d->n; i++)
			for (size_t j = 0; j < d->p; j++)
				x[i * d->p + j] = d->x[i * d->p + j] / scale[j];
		/* the penalty per row, so it weighs the same whatever the number of rows */
		{
			double ws = 0;
			for (size_t i = 0; i < d->n; i++)
				ws += d->w[i];
			opt.ridge = ridge * ws;
		}
	}
	rc = mpxkit_lsq_solve(x, d->y, d->n, d->p, &opt, b, NULL, diag);
	if (x != d->x)
		free(x);
	if (rc < 0)
		return rc;
	for (size_t j = 0; j < d->p; j++)
		b[j] /= scale[j];
	return 0;
}

/*
 * Least absolute weighted residuals by iteratively reweighted least squares: each pass
 * refits with every row's weight divided by its weighted residual of the pass before, so
 * the fit minimises sum sqrt(w) |y - x b|: with relative weights, the sum of absolute
 * relative errors, which is what MAPE scores, and a workload unlike the others pulls less.
 * Residuals below ROBUST_FLOOR (0.1 %) count as that, so a row the fit meets exactly does
 * not take all the weight.
 */
#define ROBUST_PASSES 10
#define ROBUST_FLOOR  1e-3

int mpxkit__pm_design_fit_robust(const pm_design *d, double ridge, size_t skip, double *b,
				 mpxkit_diag *diag)
{
	pm_design e = *d;
	int rc = mpxkit__pm_design_fit(d, ridge, skip, b, diag);

	if (rc < 0 || d->n == 0)
		return rc;
	if ((e.w = malloc(d->n * sizeof *e.w)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (int pass = 0; pass < ROBUST_PASSES && rc == 0; pass++) {
		for (size_t i = 0; i < d->n; i++) {
			double r = d->y[i];
			for (size_t j = 0; j < d->p; j++)
				r -= d->x[i * d->p + j] * b[j];
			r = fabs(r) * sqrt(d->w[i]);
			e.w[i] = d->w[i] / (r > ROBUST_FLOOR ? r : ROBUST_FLOOR);
		}
		rc = mpxkit__pm_design_fit(&e, ridge, skip, b, diag);
	}
	free(e.w);
	return rc;
}

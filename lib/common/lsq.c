/* SPDX-License-Identifier: BSD-3-Clause */
/* Weighted and ridge least squares on LAPACK's SVD solver, for every model fit in the library. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "mpxkit/lsq.h"

static int inputs_ok(const double *x, const double *y, size_t n, size_t p,
		     const mpxkit_lsq_options *opt, mpxkit_diag *diag)
{
	if (x == NULL || y == NULL || n == 0 || p == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "least squares: empty problem");
	if (opt && (!(opt->ridge >= 0) || !isfinite(opt->ridge)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "least squares: ridge must be finite and >= 0");
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(y[i]))
			return mpxkit_fail(diag, MPXKIT_EINVAL, "least squares: row %zu: y not finite",
					   i + 1);
		if (opt && opt->weights && (!(opt->weights[i] >= 0) || !isfinite(opt->weights[i])))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "least squares: row %zu: weight must be finite and >= 0",
					   i + 1);
		for (size_t j = 0; j < p; j++)
			if (!isfinite(x[i * p + j]))
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "least squares: row %zu, column %zu: not finite",
						   i + 1, j + 1);
	}
	return 0;
}

int mpxkit_lsq_solve(const double *x, const double *y, size_t n, size_t p,
		     const mpxkit_lsq_options *opt, double *b, size_t *rank, mpxkit_diag *diag)
{
	double ridge = opt ? opt->ridge : 0;
	size_t skip = opt ? opt->ridge_skip : 0;
	size_t extra = ridge > 0 && skip < p ? p - skip : 0, rows = n + extra;
	size_t ldb = rows > p ? rows : p;
	double *a = NULL, *rhs = NULL, *s = NULL, rcond;
	lapack_int found = 0, info;
	int rc = inputs_ok(x, y, n, p, opt, diag);

	if (rc < 0)
		return rc;
	if (rows > (size_t)INT32_MAX / (p + 1))
		return mpxkit_fail(diag, MPXKIT_ERANGE, "least squares: %zu x %zu is too large", rows,
				   p);
	a = calloc(rows * p, sizeof *a);
	rhs = calloc(ldb, sizeof *rhs);
	s = calloc(rows < p ? rows : p, sizeof *s);
	if (a == NULL || rhs == NULL || s == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "least squares: out of memory");
		goto done;
	}
	/* sqrt(w) on each row turns the weighted problem into an ordinary one. */
	for (size_t i = 0; i < n; i++) {
		double sw = opt && opt->weights ? sqrt(opt->weights[i]) : 1.0;
		for (size_t j = 0; j < p; j++)
			a[i * p + j] = sw * x[i * p + j];
		rhs[i] = sw * y[i];
	}
	/* Ridge as sqrt(lambda) I rows under the penalised columns, with zero targets. */
	for (size_t k = 0; k < extra; k++)
		a[(n + k) * p + skip + k] = sqrt(ridge);
	rcond = opt && opt->rcond > 0 ? opt->rcond : DBL_EPSILON * (double)(rows > p ? rows : p);
	info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, (lapack_int)rows, (lapack_int)p, 1, a,
			      (lapack_int)p, rhs, 1, s, rcond, &found);
	if (info < 0) {
		rc = mpxkit_fail(diag, MPXKIT_EINVAL, "least squares: LAPACK argument %d rejected",
				 (int)-info);
		goto done;
	}
	if (info > 0) {
		rc = mpxkit_fail(diag, MPXKIT_ERANGE, "least squares: the SVD did not converge");
		goto done;
	}
	memcpy(b, rhs, p * sizeof *b);
	if (rank)
		*rank = (size_t)found;
done:
	free(a);
	free(rhs);
	free(s);
	return rc;
}

double mpxkit_lsq_mape(const double *x, const double *y, size_t n, size_t p, const double *b,
		       size_t *skipped)
{
	double sum = 0;
	size_t used = 0, zero = 0;

	for (size_t i = 0; i < n; i++) {
		double pred = 0;
		if (y[i] == 0) {
			zero++;
			continue;
		}
		for (size_t j = 0; j < p; j++)
			pred += x[i * p + j] * b[j];
		sum += fabs((pred - y[i]) / y[i]);
		used++;
	}
	if (skipped)
		*skipped = zero;
	return used ? 100.0 * sum / (double)used : NAN;
}

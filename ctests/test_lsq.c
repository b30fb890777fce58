/* SPDX-License-Identifier: BSD-3-Clause */
/* Least squares: known coefficients recovered from noise-free data, weights, ridge, rank deficiency. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/lsq.h"

#define CLOSE(a, b, tol) CU_ASSERT(fabs((a) - (double)(b)) <= (tol) * (1 + fabs((double)(b))))

/* y = 3 + 2 x1 - 0.5 x2 + 1e-3 x3 on random rows: recovered to rounding. */
static void test_exact_recovery(void)
{
	enum { N = 200, P = 4 };
	static const double truth[P] = { 3, 2, -0.5, 1e-3 };
	double x[N * P], y[N], b[P];
	uint64_t state = 42;
	size_t rank = 0;

	for (size_t i = 0; i < N; i++) {
		x[i * P] = 1;
		y[i] = truth[0];
		for (size_t j = 1; j < P; j++) {
			x[i * P + j] = 1000 * cutest_urand(&state);
			y[i] += truth[j] * x[i * P + j];
		}
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_lsq_solve(x, y, N, P, NULL, b, &rank, NULL), 0);
	CU_ASSERT_EQUAL(rank, P);
	for (size_t j = 0; j < P; j++)
		CLOSE(b[j], truth[j], 1e-10);
	CU_ASSERT(mpxkit_lsq_mape(x, y, N, P, b, NULL) < 1e-9);
}

/* Weighted: with w = (1, 1, 0) the third point is ignored; the line through the first two. */
static void test_weights(void)
{
	const double x[] = { 1, 0, 1, 1, 1, 2 };
	const double y[] = { 1, 3, 100 };
	const double w[] = { 1, 1, 0 };
	mpxkit_lsq_options opt = { .weights = w };
	double b[2];

	CU_ASSERT_EQUAL_FATAL(mpxkit_lsq_solve(x, y, 3, 2, &opt, b, NULL, NULL), 0);
	CLOSE(b[0], 1, 1e-12);
	CLOSE(b[1], 2, 1e-12);
}

/*
 * Ridge on one column, intercept exempt: centred data, so the intercept is
 * the mean of y and the slope is sum(xy) / (sum(x^2) + lambda).
 */
static void test_ridge_closed_form(void)
{
	const double xs[] = { -2, -1, 0, 1, 2 }, ys[] = { 1, 2, 4, 5, 8 };
	double x[10], b[2], sxy = 0, sxx = 0, mean = 0;
	const double lambda = 3;
	mpxkit_lsq_options opt = { .ridge = lambda, .ridge_skip = 1 };

	for (int i = 0; i < 5; i++) {
		x[2 * i] = 1;
		x[2 * i + 1] = xs[i];
		sxy += xs[i] * ys[i];
		sxx += xs[i] * xs[i];
		mean += ys[i] / 5;
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_lsq_solve(x, ys, 5, 2, &opt, b, NULL, NULL), 0);
	CLOSE(b[0], mean, 1e-12);
	CLOSE(b[1], sxy / (sxx + lambda), 1e-12);
}

/* Two equal columns: the minimum-norm solution splits the coefficient evenly, rank 1. */
static void test_rank_deficient(void)
{
	const double x[] = { 1, 1, 2, 2, 3, 3 }, y[] = { 2, 4, 6 };
	double b[2];
	size_t rank = 0;

	CU_ASSERT_EQUAL_FATAL(mpxkit_lsq_solve(x, y, 3, 2, NULL, b, &rank, NULL), 0);
	CU_ASSERT_EQUAL(rank, 1);
	CLOSE(b[0], 1, 1e-10);
	CLOSE(b[1], 1, 1e-10);
}

static void test_bad_input(void)
{
	const double x[] = { 1, NAN }, y[] = { 1, 2 }, w[] = { 1, -1 };
	const double ok[] = { 1, 2 };
	mpxkit_lsq_options neg = { .weights = w }, ridge = { .ridge = -1 };
	mpxkit_diag d = { 0 };
	double b[1];

	CU_ASSERT_EQUAL(mpxkit_lsq_solve(x, y, 2, 1, NULL, b, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "least squares: row 2, column 1: not finite");
	CU_ASSERT_EQUAL(mpxkit_lsq_solve(ok, y, 2, 1, &neg, b, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_lsq_solve(ok, y, 2, 1, &ridge, b, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_lsq_solve(ok, y, 0, 1, NULL, b, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT(isnan(mpxkit_lsq_mape(ok, (const double[]){ 0, 0 }, 2, 1, b, NULL)));
}

static const cutest_case lsq_cases[] = {
	{ "exact recovery", test_exact_recovery },
	{ "weights", test_weights },
	{ "ridge: closed form", test_ridge_closed_form },
	{ "rank deficient: minimum norm", test_rank_deficient },
	{ "bad input", test_bad_input },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "lsq", lsq_cases, NULL, NULL }, { NULL, NULL, NULL, NULL } };
	return cutest_run("test_lsq", suites);
}

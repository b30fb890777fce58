/* SPDX-License-Identifier: BSD-3-Clause */
/* Metrics against hand-computed values, and DTW against a brute-force full matrix. */
#include <math.h>
#include <stdlib.h>

#include "cutest.h"
#include "mpxkit/metric.h"

#define EPS 1e-12

static void test_ra(void)
{
	double ocoe[] = {10, 20, 30, 40};
	double exact[] = {10, 20, 30, 40};
	double off[] = {12, 18, 30, 40}; /* |err| = 2 + 2 = 4 of 100 */
	double wild[] = {500, 0, 0, 0};	 /* err 490 + 20 + 30 + 40 = 580 > 100 */
	double zero[] = {0, 0, 0, 0};

	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(exact, ocoe, 4), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(off, ocoe, 4), 0.96, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(wild, ocoe, 4), 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(zero, ocoe, 4), 0.0, EPS);
	/* An event that never fired: exact zeros score 1, anything else 0. */
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(zero, zero, 4), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(off, zero, 4), 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(off, ocoe, 0), 1.0, EPS);
	/* Single rotation. */
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_ra(off, ocoe, 1), 0.8, EPS);
}

static void test_total_accuracy(void)
{
	double ocoe[] = {10, 20, 30, 40};
	double off[] = {12, 18, 30, 40};   /* sums agree: per-step errors cancel */
	double over[] = {20, 20, 30, 40};  /* +10 of 100 */
	double huge[] = {400, 20, 30, 40}; /* +390: clipped to 0 */
	double zero[] = {0, 0, 0, 0};

	CU_ASSERT_DOUBLE_EQUAL(mpxkit_total_accuracy(off, ocoe, 4), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_total_accuracy(over, ocoe, 4), 0.9, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_total_accuracy(huge, ocoe, 4), 0.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_total_accuracy(zero, zero, 4), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_total_accuracy(over, zero, 4), 0.0, EPS);
}

static void test_dtw_hand(void)
{
	double a[] = {1, 2, 3};
	double b[] = {1, 2, 2, 3};
	double c[] = {0, 0, 5};
	double one[] = {4};
	mpxkit_dtw_options log = {MPXKIT_DTW_NO_BAND, 1};
	double cost = -1;

	/* b repeats a's middle value: the path absorbs it for free. */
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 3, b, 4, NULL, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 0.0, EPS);
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 3, a, 3, NULL, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 0.0, EPS);
	/*
	 * a = 1 2 3 against c = 0 0 5.  Matrix |a_i - c_j|:
	 *   1 1 4 / 2 2 3 / 3 3 2.  Cheapest path: (0,0)=1 -> (0,1)=1 -> (1,2)=3 ->
	 *   (2,2)=2 gives 7; diagonal 1+2+2 = 5 is cheaper; (0,0),(1,1),(2,2) = 5.
	 */
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 3, c, 3, NULL, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 5.0, EPS);
	/* A single value against a series: every cell of the one row is on the path. */
	CU_ASSERT_EQUAL(mpxkit_dtw(one, 1, a, 3, NULL, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 3 + 2 + 1, EPS);
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 3, one, 1, NULL, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 6.0, EPS);
	/* log10(1+x): 9 and 99 are one decade apart. */
	{
		double x[] = {9}, y[] = {99};
		CU_ASSERT_EQUAL(mpxkit_dtw(x, 1, y, 1, &log, &cost), 0);
		CU_ASSERT_DOUBLE_EQUAL(cost, 1.0, 1e-12);
	}
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 0, b, 4, NULL, &cost), -MPXKIT_EINVAL);
}

/* The textbook full matrix, independent of the library's two-row version. */
static double brute_dtw(const double *a, size_t n, const double *b, size_t m, size_t band)
{
	const double *r = n >= m ? a : b, *c = n >= m ? b : a;
	size_t rows = n >= m ? n : m, cols = n >= m ? m : n;
	double *D = malloc(rows * cols * sizeof *D);
	double out;

	for (size_t i = 0; i < rows; i++) {
		for (size_t j = 0; j < cols; j++) {
			double best;
			int allowed = 1;
			if (band != MPXKIT_DTW_NO_BAND) {
				/* |j - centre| <= band, the centre rounded from i
				 * (cols-1)/(rows-1). */
				double centre = rows > 1 ? floor((double)i * (double)(cols - 1) /
								     (double)(rows - 1) +
								 0.5)
							 : 0.0;
				allowed = fabs((double)j - centre) <= (double)band;
			}
			if (!allowed) {
				D[i * cols + j] = INFINITY;
				continue;
			}
			if (i == 0 && j == 0)
				best = 0;
			else {
				best = INFINITY;
				if (i > 0 && D[(i - 1) * cols + j] < best)
					best = D[(i - 1) * cols + j];
				if (j > 0 && D[i * cols + j - 1] < best)
					best = D[i * cols + j - 1];
				if (i > 0 && j > 0 && D[(i - 1) * cols + j - 1] < best)
					best = D[(i - 1) * cols + j - 1];
			}
			D[i * cols + j] = fabs(r[i] - c[j]) + best;
		}
	}
	out = D[rows * cols - 1];
	free(D);
	return out;
}

static void test_dtw_brute(void)
{
	unsigned seed = 12345;
	for (int trial = 0; trial < 400; trial++) {
		size_t n = 1 + rand_r(&seed) % 12, m = 1 + rand_r(&seed) % 12;
		size_t band = trial % 3 == 0 ? MPXKIT_DTW_NO_BAND : (size_t)(rand_r(&seed) % 4);
		double a[12], b[12], cost = -1, want;
		mpxkit_dtw_options opts = {band, 0};
		for (size_t i = 0; i < n; i++)
			a[i] = (double)(rand_r(&seed) % 100);
		for (size_t j = 0; j < m; j++)
			b[j] = (double)(rand_r(&seed) % 100);
		want = brute_dtw(a, n, b, m, band);
		CU_ASSERT_EQUAL_FATAL(mpxkit_dtw(a, n, b, m, &opts, &cost), 0);
		CU_ASSERT(isfinite(cost));
		CU_ASSERT_DOUBLE_EQUAL(cost, want, 1e-9);
		/* Swapping the series changes nothing. */
		CU_ASSERT_EQUAL_FATAL(mpxkit_dtw(b, m, a, n, &opts, &cost), 0);
		CU_ASSERT_DOUBLE_EQUAL(cost, want, 1e-9);
		/* A band is a constraint: never cheaper than the full matrix. */
		if (band != MPXKIT_DTW_NO_BAND)
			CU_ASSERT(cost >= brute_dtw(a, n, b, m, MPXKIT_DTW_NO_BAND) - 1e-9);
	}
}

static void test_dtw_band_zero_is_diagonal(void)
{
	double a[] = {1, 5, 2, 8}, b[] = {2, 2, 9, 8};
	mpxkit_dtw_options diag = {0, 0};
	double cost;
	/* Equal lengths, band 0: the diagonal only, sum |a_i - b_i| = 1 + 3 + 7 + 0. */
	CU_ASSERT_EQUAL(mpxkit_dtw(a, 4, b, 4, &diag, &cost), 0);
	CU_ASSERT_DOUBLE_EQUAL(cost, 11.0, EPS);
}

static void test_pearson(void)
{
	double x[] = {1, 2, 3, 4}, y[] = {2, 4, 6, 8}, z[] = {8, 6, 4, 2};
	double c[] = {5, 5, 5, 5};
	double u[] = {1, 2, 3}, v[] = {1, 3, 2};

	CU_ASSERT_DOUBLE_EQUAL(mpxkit_pearson(x, y, 4), 1.0, EPS);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_pearson(x, z, 4), -1.0, EPS);
	/* mean 2 each; dx = -1 0 1, dy = -1 1 0: sxy = 1, sxx = syy = 2, r = 0.5. */
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_pearson(u, v, 3), 0.5, EPS);
	CU_ASSERT(isnan(mpxkit_pearson(x, c, 4)));
	CU_ASSERT(isnan(mpxkit_pearson(x, y, 1)));
}

static void test_clean_tail(void)
{
	CU_ASSERT_EQUAL(mpxkit_clean_tail(500), 485); /* 10 + 5 */
	CU_ASSERT_EQUAL(mpxkit_clean_tail(100), 93);  /* 2 + 5 */
	CU_ASSERT_EQUAL(mpxkit_clean_tail(49), 44);   /* 0 + 5 */
	CU_ASSERT_EQUAL(mpxkit_clean_tail(5), 0);
	CU_ASSERT_EQUAL(mpxkit_clean_tail(0), 0);
}

static void test_clean_runs(void)
{
	double totals[] = {100, 19, 20, 0, -5, 50};
	unsigned char keep[6];
	CU_ASSERT_EQUAL(mpxkit_clean_runs(totals, 6, keep), 3);
	CU_ASSERT_EQUAL(keep[0], 1);
	CU_ASSERT_EQUAL(keep[1], 0);
	CU_ASSERT_EQUAL(keep[2], 1);
	CU_ASSERT_EQUAL(keep[3], 0);
	CU_ASSERT_EQUAL(keep[4], 0);
	CU_ASSERT_EQUAL(keep[5], 1);
}

static const cutest_case metric_cases[] = {
    {"RA", test_ra},
    {"total accuracy", test_total_accuracy},
    {"DTW by hand", test_dtw_hand},
    {"DTW against brute force", test_dtw_brute},
    {"DTW band 0", test_dtw_band_zero_is_diagonal},
    {"Pearson", test_pearson},
    {"tail truncation", test_clean_tail},
    {"run filter", test_clean_runs},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"metric", metric_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	return cutest_run("test_metric", suites);
}

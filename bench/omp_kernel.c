/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An OpenMP kernel for `mpxkit analyze` on real code (bench/spacetime-real.sh): a Jacobi sweep of
 * a 2D grid, then a lower-triangular matrix-vector product (row i has i + 1 terms) split in
 * static chunks, as a naive parallelisation of DTRMV would.
 */
#include <stdio.h>
#include <stdlib.h>

static void jacobi(double *restrict next, const double *restrict cur, int n)
{
#pragma omp parallel for schedule(static)
	for (int i = 1; i < n - 1; i++)
		for (int j = 1; j < n - 1; j++)
			next[i * n + j] = 0.25 * (cur[(i - 1) * n + j] + cur[(i + 1) * n + j] +
						  cur[i * n + j - 1] + cur[i * n + j + 1]);
}

static void trmv(double *restrict y, const double *restrict l, const double *restrict x, int n)
{
#pragma omp parallel for schedule(static)
	for (int i = 0; i < n; i++) {
		double s = 0;
		for (int j = 0; j <= i; j++)
			s += l[(size_t)i * n + j] * x[j];
		y[i] = s;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1024, sweeps = argc > 2 ? atoi(argv[2]) : 4;
	double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b);
	double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y), sum = 0;

	if (a == NULL || b == NULL || x == NULL || y == NULL || n < 3)
		return 2;
	for (size_t i = 0; i < (size_t)n * n; i++)
		a[i] = (double)(i % 17) / 17;
	for (int i = 0; i < n; i++)
		x[i] = 1.0 / (i + 1);
	for (int s = 0; s < sweeps; s++) {
		jacobi(b, a, n);
		jacobi(a, b, n);
	}
	for (int s = 0; s < sweeps; s++)
		trmv(y, a, x, n);
	for (int i = 0; i < n; i++)
		sum += y[i];
	printf("%g\n", sum);
	free(a);
	free(b);
	free(x);
	free(y);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP blocked matrix product of growing sizes, rows of blocks over the threads: the working
 * set outgrows the caches step by step (held-out kernel). */
#include <stdio.h>
#include <stdlib.h>

static void matmul(int n, const double *a, const double *b, double *c)
{
	const int bs = 32;
#pragma omp parallel for schedule(dynamic, 1)
	for (int ii = 0; ii < n; ii += bs)
		for (int kk = 0; kk < n; kk += bs)
			for (int jj = 0; jj < n; jj += bs)
				for (int i = ii; i < ii + bs && i < n; i++)
					for (int k = kk; k < kk + bs && k < n; k++) {
						double x = a[(size_t)i * n + k];
						for (int j = jj; j < jj + bs && j < n; j++)
							c[(size_t)i * n + j] += x * b[(size_t)k * n + j];
					}
}

int main(void)
{
	static const int sizes[] = {96, 160, 224, 288, 352};
	double check = 0;

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		int n = sizes[s];
		double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b);
		double *c = calloc((size_t)n * n, sizeof *c);
		if (a == NULL || b == NULL || c == NULL) {
			fprintf(stderr, "omp_matmul: out of memory\n");
			return 1;
		}
		for (size_t k = 0; k < (size_t)n * n; k++) {
			a[k] = (double)(k % 17) - 8.0;
			b[k] = (double)(k % 13) * 0.5;
		}
		matmul(n, a, b, c);
		for (size_t k = 0; k < (size_t)n * n; k += 97)
			check += c[k];
		free(a);
		free(b);
		free(c);
	}
	printf("%.6e\n", check);
	return 0;
}

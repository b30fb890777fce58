/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense LU factorisation with partial pivoting; the trailing update shrinks step by step (corpus
 * kernel). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0xda942042e4dd58b5u;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;
	int n = 160 * scale;
	double *a = malloc(sizeof *a * (size_t)n * n);
	int *piv = malloc(sizeof *piv * n);
	double logdet = 0;

	if (scale < 1 || a == NULL || piv == NULL) {
		fprintf(stderr, "usage: lu [SCALE>=1] (or out of memory)\n");
		return 2;
	}
	for (size_t k = 0; k < (size_t)n * n; k++)
		a[k] = uniform() - 0.5;
	for (int k = 0; k < n; k++) {
		int p = k;
		for (int i = k + 1; i < n; i++)
			if (fabs(a[(size_t)i * n + k]) > fabs(a[(size_t)p * n + k]))
				p = i;
		piv[k] = p;
		if (p != k)
			for (int j = 0; j < n; j++) {
				double t = a[(size_t)k * n + j];
				a[(size_t)k * n + j] = a[(size_t)p * n + j];
				a[(size_t)p * n + j] = t;
			}
		/* Column-order update of the trailing matrix: strided, so the caches feel n. */
		for (int i = k + 1; i < n; i++)
			a[(size_t)i * n + k] /= a[(size_t)k * n + k];
		for (int j = k + 1; j < n; j++) {
			double akj = a[(size_t)k * n + j];
			for (int i = k + 1; i < n; i++)
				a[(size_t)i * n + j] -= a[(size_t)i * n + k] * akj;
		}
		logdet += log(fabs(a[(size_t)k * n + k]));
	}
	printf("n %d log|det| %.9e piv %d\n", n, logdet, piv[n / 2]);
	free(a);
	free(piv);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Jacobi relaxation: a 2D 5-point sweep phase, then a 3D 7-point sweep phase (corpus kernel). */
#include <stdio.h>
#include <stdlib.h>

static double *grid(size_t n)
{
	double *g = calloc(n, sizeof *g);
	if (g == NULL) {
		fprintf(stderr, "stencil: out of memory\n");
		exit(1);
	}
	return g;
}

/* Hot west edge, cold elsewhere: the front moves inwards, so the values keep changing. */
static double jacobi2d(int n, int sweeps)
{
	double *a = grid((size_t)n * n), *b = grid((size_t)n * n), *t;
	double sum = 0;

	for (int i = 0; i < n; i++)
		a[(size_t)i * n] = b[(size_t)i * n] = 100.0;
	for (int s = 0; s < sweeps; s++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++) {
				size_t k = (size_t)i * n + j;
				b[k] = 0.25 * (a[k - 1] + a[k + 1] + a[k - n] + a[k + n]);
			}
		t = a, a = b, b = t;
	}
	for (size_t k = 0; k < (size_t)n * n; k++)
		sum += a[k];
	free(a);
	free(b);
	return sum;
}

static double jacobi3d(int n, int sweeps)
{
	size_t nn = (size_t)n * n, total = nn * n;
	double *a = grid(total), *b = grid(total), *t;
	double sum = 0;

	for (size_t k = 0; k < nn; k++)
		a[k] = b[k] = 1.0;
	for (int s = 0; s < sweeps; s++) {
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++)
				for (int l = 1; l < n - 1; l++) {
					size_t k = i * nn + (size_t)j * n + l;
					b[k] = (a[k - 1] + a[k + 1] + a[k - n] + a[k + n] +
						a[k - nn] + a[k + nn]) /
					       6.0;
				}
		t = a, a = b, b = t;
	}
	for (size_t k = 0; k < total; k++)
		sum += a[k];
	free(a);
	free(b);
	return sum;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;

	if (scale < 1) {
		fprintf(stderr, "usage: stencil [SCALE>=1]\n");
		return 2;
	}
	printf("2d %.6e\n", jacobi2d(640, 40 * scale));
	printf("3d %.6e\n", jacobi3d(96, 10 * scale));
	return 0;
}

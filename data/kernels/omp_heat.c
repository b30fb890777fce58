/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP heat diffusion: a 2D explicit stencil split by rows over the threads, with a residual
 * reduction every sweep and a source that moves, so the work stays uneven (held-out kernel). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const int n = 520, sweeps = 150;
	double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n * n, sizeof *b), *t;
	double res = 0;

	if (a == NULL || b == NULL) {
		fprintf(stderr, "omp_heat: out of memory\n");
		return 1;
	}
	for (int s = 0; s < sweeps; s++) {
		int si = 1 + (s * 7) % (n - 2), sj = 1 + (s * 13) % (n - 2);
		a[(size_t)si * n + sj] += 1000.0;
		res = 0;
#pragma omp parallel for reduction(+ : res) schedule(static)
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++) {
				size_t k = (size_t)i * n + j;
				b[k] = a[k] + 0.2 * (a[k - 1] + a[k + 1] + a[k - n] + a[k + n] - 4 * a[k]);
				res += fabs(b[k] - a[k]);
			}
		t = a, a = b, b = t;
	}
	printf("%.6e\n", res);
	free(a);
	free(b);
	return 0;
}

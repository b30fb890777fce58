/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-style conjugate gradient in one process: the rows of a 3D Laplacian split over 8 ranks,
 * each iteration gathers the neighbours' boundary values, multiplies its block, and does two
 * allreduces of dot products, as a distributed CG would (held-out kernel). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 48
#define RANKS 8

static double dot(const double *a, const double *b, size_t n)
{
	double part[RANKS] = {0}, s = 0; /* per-rank partial sums, then the allreduce */
	size_t chunk = n / RANKS;

	for (int r = 0; r < RANKS; r++)
		for (size_t i = r * chunk; i < (r + 1 == RANKS ? n : (r + 1) * chunk); i++)
			part[r] += a[i] * b[i];
	for (int r = 0; r < RANKS; r++)
		s += part[r];
	return s;
}

/* y = A x for the 7-point Laplacian, rank by rank over slabs of planes (a halo of one plane). */
static void apply(const double *x, double *y, double *halo)
{
	const size_t nn = (size_t)N * N;
	const int planes = N / RANKS;

	for (int r = 0; r < RANKS; r++) {
		int z0 = r * planes, z1 = z0 + planes;
		/* "receive" the planes below and above the slab into the halo buffer */
		for (size_t k = 0; k < nn; k++) {
			halo[k] = z0 > 0 ? x[(size_t)(z0 - 1) * nn + k] : 0.0;
			halo[nn + k] = z1 < N ? x[(size_t)z1 * nn + k] : 0.0;
		}
		for (int z = z0; z < z1; z++)
			for (int yy = 0; yy < N; yy++)
				for (int xx = 0; xx < N; xx++) {
					size_t k = (size_t)z * nn + (size_t)yy * N + xx, p = k % nn;
					double s = 6.0 * x[k];
					s -= xx > 0 ? x[k - 1] : 0.0;
					s -= xx < N - 1 ? x[k + 1] : 0.0;
					s -= yy > 0 ? x[k - N] : 0.0;
					s -= yy < N - 1 ? x[k + N] : 0.0;
					s -= z > z0 ? x[k - nn] : halo[p];
					s -= z < z1 - 1 ? x[k + nn] : halo[nn + p];
					y[k] = s;
				}
	}
}

int main(void)
{
	const size_t n = (size_t)N * N * N;
	double *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p);
	double *q = malloc(n * sizeof *q), *halo = malloc(2 * (size_t)N * N * sizeof *halo);
	double rr, rr_new;
	int it;

	if (!x || !r || !p || !q || !halo)
		return 1;
	for (size_t i = 0; i < n; i++)
		r[i] = p[i] = sin(0.001 * (double)i) + 1.0;
	rr = dot(r, r, n);
	for (it = 0; it < 90 && rr > 1e-12; it++) {
		apply(p, q, halo);
		double alpha = rr / dot(p, q, n);
		for (size_t i = 0; i < n; i++) {
			x[i] += alpha * p[i];
			r[i] -= alpha * q[i];
		}
		rr_new = dot(r, r, n);
		for (size_t i = 0; i < n; i++)
			p[i] = r[i] + rr_new / rr * p[i];
		rr = rr_new;
	}
	printf("%d %.6e\n", it, sqrt(rr));
	free(x), free(r), free(p), free(q), free(halo);
	return 0;
}

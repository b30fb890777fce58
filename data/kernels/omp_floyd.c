/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP Floyd-Warshall all-pairs shortest paths on a sparse random weighted graph, the rows of
 * each k step split over the threads: early steps improve many paths, late ones few, so the
 * taken branches thin out through the run; then the eccentricities (heldout2 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 352
#define INF 0x3fffffff

static uint64_t rng = 0x452821e638d01377u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

int main(void)
{
	int *d = malloc((size_t)N * N * sizeof *d);
	long long sum = 0;
	int diameter = 0;

	if (d == NULL)
		return 1;
	for (size_t i = 0; i < (size_t)N * N; i++)
		d[i] = INF;
	for (int i = 0; i < N; i++) {
		d[i * N + i] = 0;
		d[i * N + (i + 1) % N] = 1 + (int)(next() % 9); /* a ring keeps it connected */
		for (int e = 0; e < 3; e++) /* plus three random arcs per vertex */
			d[i * N + (int)(next() % N)] = 5 + (int)(next() % 50);
	}
	for (int k = 0; k < N; k++) {
		const int *dk = d + (size_t)k * N;
		int i;
#pragma omp parallel for schedule(static)
		for (i = 0; i < N; i++) {
			int *di = d + (size_t)i * N, dik = di[k];
			if (dik == INF)
				continue;
			for (int j = 0; j < N; j++)
				if (dik + dk[j] < di[j])
					di[j] = dik + dk[j];
		}
	}
	for (int i = 0; i < N; i++) {
		int ecc = 0;
		for (int j = 0; j < N; j++) {
			sum += d[i * N + j];
			if (d[i * N + j] > ecc)
				ecc = d[i * N + j];
		}
		if (ecc > diameter)
			diameter = ecc;
	}
	printf("%lld %d\n", sum, diameter);
	free(d);
	return 0;
}

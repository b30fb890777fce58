/* SPDX-License-Identifier: BSD-3-Clause */
/* Lloyd's k-means on generated clustered points until convergence or an iteration cap (corpus
 * kernel). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { DIM = 8, K = 16 };

static uint64_t rng = 0x853c49e6748fea9bu;

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
	int n = 16000 * scale;
	double(*pt)[DIM] = malloc(sizeof *pt * n), centre[K][DIM], sum[K][DIM];
	double truth[K][DIM];
	int *label = malloc(sizeof *label * n), count[K], iter, changed = 1;

	if (scale < 1 || pt == NULL || label == NULL) {
		fprintf(stderr, "usage: kmeans [SCALE>=1] (or out of memory)\n");
		return 2;
	}
	for (int c = 0; c < K; c++)
		for (int d = 0; d < DIM; d++)
			truth[c][d] = 10.0 * uniform();
	for (int i = 0; i < n; i++) {
		int c = (int)(uniform() * K);
		for (int d = 0; d < DIM; d++)
			pt[i][d] = truth[c][d] + 2.0 * (uniform() - 0.5) + 2.0 * (uniform() - 0.5);
		label[i] = -1;
	}
	for (int c = 0; c < K; c++)
		for (int d = 0; d < DIM; d++)
			centre[c][d] = pt[c * 7][d];
	/* Fewer points change label as it converges: the reassignment branch becomes predictable.
	 */
	for (iter = 0; iter < 40 && changed; iter++) {
		changed = 0;
		for (int i = 0; i < n; i++) {
			int best = 0;
			double bestd = DBL_MAX;
			for (int c = 0; c < K; c++) {
				double dist = 0;
				for (int d = 0; d < DIM; d++) {
					double t = pt[i][d] - centre[c][d];
					dist += t * t;
				}
				if (dist < bestd)
					bestd = dist, best = c;
			}
			if (label[i] != best)
				label[i] = best, changed++;
		}
		for (int c = 0; c < K; c++) {
			count[c] = 0;
			for (int d = 0; d < DIM; d++)
				sum[c][d] = 0;
		}
		for (int i = 0; i < n; i++) {
			count[label[i]]++;
			for (int d = 0; d < DIM; d++)
				sum[label[i]][d] += pt[i][d];
		}
		for (int c = 0; c < K; c++)
			for (int d = 0; d < DIM; d++)
				if (count[c] > 0)
					centre[c][d] = sum[c][d] / count[c];
	}
	printf("iterations %d centre0 %.6f\n", iter, centre[0][0]);
	free(pt);
	free(label);
	return 0;
}

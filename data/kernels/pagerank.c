/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-style PageRank in one process: a generated graph with skewed in-degrees, its vertices in
 * blocks over 8 ranks; each iteration every rank computes its vertices' contributions, an
 * allgather copies them into every rank's full vector, each rank pulls over its incoming edges,
 * and the change is summed as MPI_Allreduce would, until it converges (heldout2 kernel). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V 40000
#define RANKS 8
#define DAMP 0.85

static uint64_t rng = 0xbe5466cf34e90c6cu;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (p == NULL)
		exit(1);
	return p;
}

int main(void)
{
	int *outdeg = calloc(V, sizeof *outdeg), *src_of, *dst_of, *inptr = calloc(V + 1, sizeof *inptr);
	int *insrc, *fill;
	double *rank = xmalloc(V * sizeof *rank), *contrib = xmalloc(V * sizeof *contrib);
	double *full = xmalloc((size_t)RANKS * V * sizeof *full), *fresh = xmalloc(V * sizeof *fresh);
	size_t edges = 0, cap = (size_t)V * 12;
	int iterations = 0;
	double change = 1.0;

	if (outdeg == NULL || inptr == NULL)
		return 1;
	src_of = xmalloc(cap * sizeof *src_of);
	dst_of = xmalloc(cap * sizeof *dst_of);
	for (int v = 0; v < V; v++) { /* 1 to 20 out-edges; targets skewed toward low ids */
		int d = 1 + (int)(next() % 20);
		for (int e = 0; e < d && edges < cap; e++) {
			uint64_t z = next();
			double u = (double)(z >> 11) / 9007199254740992.0;
			src_of[edges] = v;
			dst_of[edges] = (int)((double)V * u * u * u) % V;
			edges++;
			outdeg[v]++;
		}
	}
	for (size_t e = 0; e < edges; e++) /* incoming CSR, as each rank stores its rows */
		inptr[dst_of[e] + 1]++;
	for (int v = 0; v < V; v++)
		inptr[v + 1] += inptr[v];
	insrc = xmalloc(edges * sizeof *insrc);
	fill = xmalloc(V * sizeof *fill);
	memcpy(fill, inptr, V * sizeof *fill);
	for (size_t e = 0; e < edges; e++)
		insrc[fill[dst_of[e]]++] = src_of[e];
	for (int v = 0; v < V; v++)
		rank[v] = 1.0 / V;
	while (change > 1e-10 && iterations < 100) {
		double part[RANKS] = {0};
		for (int r = 0; r < RANKS; r++) /* local contributions */
			for (int v = r * (V / RANKS); v < (r + 1) * (V / RANKS); v++)
				contrib[v] = rank[v] / outdeg[v];
		for (int r = 0; r < RANKS; r++) /* allgather: every rank gets the whole vector */
			memcpy(full + (size_t)r * V, contrib, V * sizeof *contrib);
		for (int r = 0; r < RANKS; r++) {
			const double *mine = full + (size_t)r * V;
			for (int v = r * (V / RANKS); v < (r + 1) * (V / RANKS); v++) {
				double s = 0;
				for (int p = inptr[v]; p < inptr[v + 1]; p++)
					s += mine[insrc[p]];
				fresh[v] = (1.0 - DAMP) / V + DAMP * s;
				part[r] += fabs(fresh[v] - rank[v]);
			}
		}
		change = 0;
		for (int r = 0; r < RANKS; r++) /* allreduce of the change */
			change += part[r];
		memcpy(rank, fresh, V * sizeof *rank);
		iterations++;
	}
	printf("%zu edges, %d iterations, %.9f\n", edges, iterations, rank[0]);
	free(outdeg), free(src_of), free(dst_of), free(inptr), free(insrc), free(fill);
	free(rank), free(contrib), free(full), free(fresh);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Breadth-first search from several roots over a generated small-world graph (corpus kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x2545f4914f6cdd1du;

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
	if (p == NULL) {
		fprintf(stderr, "bfs: out of memory\n");
		exit(1);
	}
	return p;
}

/* Ring lattice (local edges) plus random shortcuts: the frontier grows, peaks, then drains. */
int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;
	const int n = 300000, local = 2, shortcuts = 2;
	const int deg = 2 * local + shortcuts;
	size_t m = (size_t)n * deg;
	int *src = xmalloc(sizeof *src * m), *dst = xmalloc(sizeof *dst * m);
	int *rowptr = xmalloc(sizeof *rowptr * (n + 1)), *adj = xmalloc(sizeof *adj * m);
	int *fill = xmalloc(sizeof *fill * n), *level = xmalloc(sizeof *level * n);
	int *queue = xmalloc(sizeof *queue * n);
	size_t e = 0;
	uint64_t check = 0;

	if (scale < 1) {
		fprintf(stderr, "usage: bfs [SCALE>=1]\n");
		return 2;
	}
	for (int v = 0; v < n; v++) {
		for (int d = 1; d <= local; d++) {
			src[e] = v, dst[e++] = (v + d) % n;
			src[e] = v, dst[e++] = (v + n - d) % n;
		}
		for (int s = 0; s < shortcuts; s++)
			src[e] = v, dst[e++] = (int)(next() % n);
	}
	/* Counting sort of the edge list into CSR. */
	for (int v = 0; v <= n; v++)
		rowptr[v] = 0;
	for (size_t i = 0; i < m; i++)
		rowptr[src[i] + 1]++;
	for (int v = 0; v < n; v++)
		rowptr[v + 1] += rowptr[v];
	for (int v = 0; v < n; v++)
		fill[v] = rowptr[v];
	for (size_t i = 0; i < m; i++)
		adj[fill[src[i]]++] = dst[i];

	for (int root = 0; root < 4 * scale; root++) {
		int head = 0, tail = 0, r = (int)(next() % n);
		for (int v = 0; v < n; v++)
			level[v] = -1;
		level[r] = 0;
		queue[tail++] = r;
		while (head < tail) {
			int v = queue[head++];
			for (int k = rowptr[v]; k < rowptr[v + 1]; k++) {
				int w = adj[k];
				if (level[w] < 0) {
					level[w] = level[v] + 1;
					queue[tail++] = w;
				}
			}
		}
		for (int v = 0; v < n; v++)
			check += (uint64_t)level[v];
	}
	printf("levels %llu\n", (unsigned long long)check);
	free(src);
	free(dst);
	free(rowptr);
	free(adj);
	free(fill);
	free(level);
	free(queue);
	return 0;
}

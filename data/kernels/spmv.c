/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse matrix-vector products (CSR) in a power iteration, on a generated matrix (corpus kernel).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15u;

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
		fprintf(stderr, "spmv: out of memory\n");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;
	const int side = 400, extra = 4;
	const int n = side * side;
	int *rowptr, *col;
	double *val, *x, *y, norm = 0;
	size_t nnz = 0;

	if (scale < 1) {
		fprintf(stderr, "usage: spmv [SCALE>=1]\n");
		return 2;
	}
	/* A 2D Laplacian (regular) plus a few random long-range entries per row (irregular). */
	rowptr = xmalloc(sizeof *rowptr * (n + 1));
	col = xmalloc(sizeof *col * (size_t)n * (5 + extra));
	val = xmalloc(sizeof *val * (size_t)n * (5 + extra));
	for (int r = 0; r < n; r++) {
		int i = r / side, j = r % side;
		rowptr[r] = (int)nnz;
		if (i > 0)
			col[nnz] = r - side, val[nnz++] = -1.0;
		if (j > 0)
			col[nnz] = r - 1, val[nnz++] = -1.0;
		col[nnz] = r, val[nnz++] = 4.0 + extra;
		if (j < side - 1)
			col[nnz] = r + 1, val[nnz++] = -1.0;
		if (i < side - 1)
			col[nnz] = r + side, val[nnz++] = -1.0;
		for (int e = 0; e < extra; e++)
			col[nnz] = (int)(next() % n), val[nnz++] = 0.25;
	}
	rowptr[n] = (int)nnz;
	x = xmalloc(sizeof *x * n);
	y = xmalloc(sizeof *y * n);
	for (int r = 0; r < n; r++)
		x[r] = 1.0 + (double)(next() % 1000) / 1000.0;
	for (int it = 0; it < 12 * scale; it++) {
		for (int r = 0; r < n; r++) {
			double s = 0;
			for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
				s += val[k] * x[col[k]];
			y[r] = s;
		}
		norm = 0;
		for (int r = 0; r < n; r++)
			norm += y[r] * y[r];
		norm = sqrt(norm);
		for (int r = 0; r < n; r++)
			x[r] = y[r] / norm;
	}
	printf("nnz %zu norm %.9e\n", nnz, norm);
	free(rowptr);
	free(col);
	free(val);
	free(x);
	free(y);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse matrix transpose and product: a generated CSR matrix A (a band plus random far entries,
 * 60,000 rows), its transpose by counting, scanning and scattering, then C = A * A^T row by row
 * with a dense accumulator and a marker array (Gustavson's method), each row's columns sorted by
 * insertion, and a product of C with a vector checked against A * (A^T * x) (heldout3 kernel). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 60000

typedef struct csr {
	int *ptr, *col;
	double *val;
	long nnz;
} csr;

static uint64_t rng = 0xa54ff53a5f1d36f1u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		exit(1);
	return p;
}

static void sort_row(int *col, double *val, int n)
{
	for (int i = 1; i < n; i++) {
		int c = col[i], j = i;
		double v = val[i];
		while (j > 0 && col[j - 1] > c)
			col[j] = col[j - 1], val[j] = val[j - 1], j--;
		col[j] = c, val[j] = v;
	}
}

static csr transpose(const csr *a)
{
	csr t;
	int *fill = xmalloc(N * sizeof *fill);

	t.nnz = a->nnz;
	t.ptr = calloc(N + 1, sizeof *t.ptr);
	t.col = xmalloc((size_t)a->nnz * sizeof *t.col);
	t.val = xmalloc((size_t)a->nnz * sizeof *t.val);
	if (t.ptr == NULL)
		exit(1);
	for (long p = 0; p < a->nnz; p++)
		t.ptr[a->col[p] + 1]++;
	for (int i = 0; i < N; i++)
		t.ptr[i + 1] += t.ptr[i];
	memcpy(fill, t.ptr, N * sizeof *fill);
	for (int i = 0; i < N; i++)
		for (int p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
			int q = fill[a->col[p]]++;
			t.col[q] = i, t.val[q] = a->val[p];
		}
	free(fill);
	return t;
}

static void spmv(const csr *a, const double *x, double *y)
{
	for (int i = 0; i < N; i++) {
		double s = 0;
		for (int p = a->ptr[i]; p < a->ptr[i + 1]; p++)
			s += a->val[p] * x[a->col[p]];
		y[i] = s;
	}
}

int main(void)
{
	csr a, t, c;
	long cap;
	int *mark = xmalloc(N * sizeof *mark), *list = xmalloc(N * sizeof *list);
	double *acc = xmalloc(N * sizeof *acc), *x = xmalloc(N * sizeof *x);
	double *y = xmalloc(N * sizeof *y), *z = xmalloc(N * sizeof *z),
	       *w = xmalloc(N * sizeof *w);
	double err = 0;

	cap = (long)N * 15;
	a.ptr = xmalloc((N + 1) * sizeof *a.ptr);
	a.col = xmalloc((size_t)cap * sizeof *a.col);
	a.val = xmalloc((size_t)cap * sizeof *a.val);
	a.nnz = 0;
	for (int i = 0; i < N; i++) { /* band of 5 plus 2 to 9 far entries; columns made unique */
		int start = (int)a.nnz;
		a.ptr[i] = start;
		for (int d = -2; d <= 2; d++)
			if (i + d >= 0 && i + d < N)
				a.col[a.nnz] = i + d, a.val[a.nnz++] = d == 0 ? 4.0 : -1.0;
		for (int e = 1 + (int)(next() % 8); e >= 0; e--) {
			int cidx = (int)(next() % N), dup = 0;
			for (int p = start; p < a.nnz; p++)
				dup |= a.col[p] == cidx;
			if (!dup)
				a.col[a.nnz] = cidx,
				a.val[a.nnz++] = (double)(next() % 100) / 100.0;
		}
		sort_row(a.col + start, a.val + start, (int)(a.nnz - start));
	}
	a.ptr[N] = (int)a.nnz;
	t = transpose(&a);
	cap = a.nnz * 16;
	c.ptr = xmalloc((N + 1) * sizeof *c.ptr);
	c.col = xmalloc((size_t)cap * sizeof *c.col);
	c.val = xmalloc((size_t)cap * sizeof *c.val);
	c.nnz = 0;
	for (int i = 0; i < N; i++)
		mark[i] = -1;
	for (int i = 0; i < N; i++) { /* row i of A times A^T, whose row k is column k of A */
		int len = 0;
		c.ptr[i] = (int)c.nnz;
		for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++) {
			int k = a.col[p];
			for (int q = t.ptr[k]; q < t.ptr[k + 1]; q++) { /* (A^T)[k][j] = A[j][k] */
				int j = t.col[q];
				if (mark[j] != i)
					mark[j] = i, acc[j] = 0, list[len++] = j;
				acc[j] += a.val[p] * t.val[q];
			}
		}
		if (c.nnz + len > cap) {
			cap = 2 * (c.nnz + len);
			c.col = realloc(c.col, (size_t)cap * sizeof *c.col);
			c.val = realloc(c.val, (size_t)cap * sizeof *c.val);
			if (c.col == NULL || c.val == NULL)
				return 1;
		}
		for (int l = 0; l < len; l++)
			c.col[c.nnz + l] = list[l], c.val[c.nnz + l] = acc[list[l]];
		sort_row(c.col + c.nnz, c.val + c.nnz, len);
		c.nnz += len;
	}
	c.ptr[N] = (int)c.nnz;
	for (int i = 0; i < N; i++)
		x[i] = (double)(next() % 1000) / 1000.0;
	spmv(&c, x, y); /* C x */
	spmv(&t, x, z); /* A^T x */
	spmv(&a, z, w); /* A (A^T x) */
	for (int i = 0; i < N; i++)
		err = fmax(err, fabs(y[i] - w[i]));
	if (err > 1e-9)
		return 2;
	printf("%ld %ld %.6f\n", a.nnz, c.nnz, y[N / 2]);
	free(a.ptr), free(a.col), free(a.val), free(t.ptr), free(t.col), free(t.val);
	free(c.ptr), free(c.col), free(c.val);
	free(mark), free(list), free(acc), free(x), free(y), free(z), free(w);
	return 0;
}

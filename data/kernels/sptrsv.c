/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse triangular solves, as in a Gauss-Seidel preconditioner: a lower triangular CSR matrix
 * (a strided band plus random far entries), the level analysis of its dependencies, forward
 * solves in row order, then the rows permuted level by level and solved again in that order,
 * then backward solves with the transpose's pattern (heldout2 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 120000
#define FAR 5 /* random entries per row below the band */
#define BAND 3
#define STRIDE 37 /* the band's entries lie STRIDE apart, so rows fall into levels */

static uint64_t rng = 0x13198a2e03707344u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

typedef struct csr {
	int *ptr, *col;
	double *val; /* the diagonal is the last entry of each row */
} csr;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (p == NULL)
		exit(1);
	return p;
}

static void build(csr *a)
{
	size_t nnz = 0;
	a->ptr = xmalloc((N + 1) * sizeof *a->ptr);
	a->col = xmalloc((size_t)N * (BAND + FAR + 1) * sizeof *a->col);
	a->val = xmalloc((size_t)N * (BAND + FAR + 1) * sizeof *a->val);
	for (int i = 0; i < N; i++) {
		a->ptr[i] = (int)nnz;
		for (int f = 0; f < FAR && i > BAND * STRIDE; f++) { /* far entries, kept sorted */
			int c = (int)(next() % (uint64_t)(i - BAND * STRIDE));
			size_t p = nnz++;
			while (p > (size_t)a->ptr[i] && a->col[p - 1] > c) {
				a->col[p] = a->col[p - 1];
				p--;
			}
			a->col[p] = c;
		}
		for (int b = BAND; b >= 1; b--)
			if (i - b * STRIDE >= 0)
				a->col[nnz++] = i - b * STRIDE;
		a->col[nnz++] = i;
		for (size_t p = (size_t)a->ptr[i]; p < nnz; p++)
			a->val[p] = a->col[p] == i ? 4.0 + (double)(next() % 8) : -0.1 - 0.05 * (double)(next() % 8);
	}
	a->ptr[N] = (int)nnz;
}

/* x = L^-1 b, rows in the order given. */
static void forward(const csr *a, const int *order, const double *b, double *x)
{
	for (int o = 0; o < N; o++) {
		int i = order[o], end = a->ptr[i + 1] - 1;
		double s = b[i];
		for (int p = a->ptr[i]; p < end; p++)
			s -= a->val[p] * x[a->col[p]];
		x[i] = s / a->val[end];
	}
}

/* x = L^-T b: column-oriented, scattering each solved value into the rows it feeds. */
static void backward(const csr *a, const double *b, double *x)
{
	for (int i = 0; i < N; i++)
		x[i] = b[i];
	for (int i = N - 1; i >= 0; i--) {
		int end = a->ptr[i + 1] - 1;
		x[i] /= a->val[end];
		for (int p = a->ptr[i]; p < end; p++)
			x[a->col[p]] -= a->val[p] * x[i];
	}
}

int main(void)
{
	csr a;
	int *level = xmalloc(N * sizeof *level), *order = xmalloc(N * sizeof *order);
	int *count, nlevels = 0;
	double *b = xmalloc(N * sizeof *b), *x = xmalloc(N * sizeof *x), *y = xmalloc(N * sizeof *y);
	double check = 0;

	build(&a);
	for (int i = 0; i < N; i++) { /* level analysis: one more than the deepest dependency */
		int l = 0;
		for (int p = a.ptr[i]; p < a.ptr[i + 1] - 1; p++)
			if (level[a.col[p]] + 1 > l)
				l = level[a.col[p]] + 1;
		level[i] = l;
		if (l + 1 > nlevels)
			nlevels = l + 1;
	}
	count = calloc((size_t)nlevels + 1, sizeof *count);
	if (count == NULL)
		return 1;
	for (int i = 0; i < N; i++)
		count[level[i] + 1]++;
	for (int l = 0; l < nlevels; l++)
		count[l + 1] += count[l];
	for (int i = 0; i < N; i++)
		order[count[level[i]]++] = i;
	for (int i = 0; i < N; i++)
		b[i] = 1.0 + (double)(i % 17);
	for (int it = 0; it < 10; it++) { /* in row order */
		int *rows = level; /* reused as the identity order */
		for (int i = 0; i < N; i++)
			rows[i] = i;
		forward(&a, rows, b, x);
		check += x[N / 3];
		b[it * 97 % N] += 1.0;
	}
	for (int it = 0; it < 10; it++) { /* level by level, as a parallel solver would */
		forward(&a, order, b, y);
		check += y[N / 2];
		b[it * 89 % N] += 1.0;
	}
	for (int it = 0; it < 10; it++) {
		backward(&a, b, x);
		check += x[N / 5];
		b[it * 83 % N] += 1.0;
	}
	printf("%d levels, %.6e\n", nlevels, check);
	free(a.ptr), free(a.col), free(a.val), free(level), free(order), free(count);
	free(b), free(x), free(y);
	return 0;
}

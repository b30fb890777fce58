/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP HPC kernels whose per-thread counters are recorded under callgrind (see README.md). */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic pseudo-random numbers (xorshift64*), one state per caller. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* STREAM triad: the same streaming work per thread. */
static double triad(size_t n, int iters)
{
	double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
	double s = 0;
	for (size_t i = 0; i < n; i++)
		b[i] = (double)i, c[i] = 1.0 / (double)(i + 1);
	for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + 3.0 * c[i];
		s += a[it % n];
	}
	free(a), free(b), free(c);
	return s;
}

/* 2-D Jacobi 5-point stencil, rows split statically. */
static double jacobi2d(size_t n, int iters)
{
	double *u = calloc(n * n, sizeof *u), *v = calloc(n * n, sizeof *v), s = 0;
	for (size_t i = 0; i < n; i++)
		u[i] = 1.0;
	for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (size_t i = 1; i < n - 1; i++)
			for (size_t j = 1; j < n - 1; j++)
				v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
						       u[i * n + j - 1] + u[i * n + j + 1]);
		double *t = u;
		u = v, v = t;
	}
	for (size_t i = 0; i < n * n; i++)
		s += u[i];
	free(u), free(v);
	return s;
}

/* Sparse matrix-vector product over a random CSR matrix: irregular rows and misses. */
static double spmv(size_t n, int iters)
{
	size_t *row = malloc((n + 1) * sizeof *row), nnz = 0, cap = n * 12;
	size_t *col = malloc(cap * sizeof *col);
	double *val = malloc(cap * sizeof *val), *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	uint64_t r = 88172645463325252ull;
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = 2 + next_rand(&r) % 20;
		row[i] = nnz;
		for (size_t j = 0; j < k && nnz < cap; j++) {
			col[nnz] = next_rand(&r) % n;
			val[nnz++] = 1.0 / (double)(j + 1);
		}
		x[i] = 1.0;
	}
	row[n] = nnz;
	for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++) {
			double t = 0;
			for (size_t k = row[i]; k < row[i + 1]; k++)
				t += val[k] * x[col[k]];
			y[i] = t;
		}
		s += y[it % n];
	}
	free(row), free(col), free(val), free(x), free(y);
	return s;
}

/* Blocked dense matrix product. */
static double gemm(size_t n, int iters)
{
	double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
	double *c = calloc(n * n, sizeof *c), s = 0;
	for (size_t i = 0; i < n * n; i++)
		a[i] = (double)(i % 7), b[i] = (double)(i % 5);
	for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (size_t ii = 0; ii < n; ii += 16)
			for (size_t kk = 0; kk < n; kk += 16)
				for (size_t i = ii; i < ii + 16 && i < n; i++)
					for (size_t k = kk; k < kk + 16 && k < n; k++)
						for (size_t j = 0; j < n; j++)
							c[i * n + j] += a[i * n + k] * b[k * n + j];
		s += c[it % (n * n)];
	}
	free(a), free(b), free(c);
	return s;
}

/* All-pairs gravitational forces: compute-bound, square roots and divisions. */
static double nbody(size_t n, int iters)
{
	double *p = malloc(3 * n * sizeof *p), *f = malloc(3 * n * sizeof *f), s = 0;
	uint64_t r = 2463534242ull;
	for (size_t i = 0; i < 3 * n; i++)
		p[i] = (double)(next_rand(&r) % 10000) / 100.0;
	for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++) {
			double fx = 0, fy = 0, fz = 0;
			for (size_t j = 0; j < n; j++) {
				double dx = p[3 * j] - p[3 * i], dy = p[3 * j + 1] - p[3 * i + 1];
				double dz = p[3 * j + 2] - p[3 * i + 2];
				double d2 = dx * dx + dy * dy + dz * dz + 0.01, inv = 1.0 / (d2 * sqrt(d2));
				fx += dx * inv, fy += dy * inv, fz += dz * inv;
			}
			f[3 * i] = fx, f[3 * i + 1] = fy, f[3 * i + 2] = fz;
		}
		for (size_t i = 0; i < 3 * n; i++)
			p[i] += 1e-6 * f[i];
		s += f[0];
	}
	free(p), free(f);
	return s;
}

/* Monte Carlo estimate of pi: private generators, a reduction. */
static double montecarlo(size_t n, int iters)
{
	double s = 0;
	for (int it = 0; it < iters; it++) {
		size_t hits = 0;
#pragma omp parallel reduction(+ : hits)
		{
			uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(omp_get_thread_num() + 1 + it);
#pragma omp for schedule(static)
			for (size_t i = 0; i < n; i++) {
				double x = (double)(next_rand(&r) >> 11) / 9007199254740992.0;
				double y = (double)(next_rand(&r) >> 11) / 9007199254740992.0;
				hits += x * x + y * y <= 1.0;
			}
		}
		s += 4.0 * (double)hits / (double)n;
	}
	return s;
}

/* Two-pass parallel prefix sum: a phase of local sums, a serial step, a phase of fix-ups. */
static double scan(size_t n, int iters)
{
	int64_t *a = malloc(n * sizeof *a), *part = calloc(65, sizeof *part);
	double s = 0;
	for (int it = 0; it < iters; it++) {
		for (size_t i = 0; i < n; i++)
			a[i] = (int64_t)(i % 13);
#pragma omp parallel
		{
			int t = omp_get_thread_num(), nt = omp_get_num_threads();
			size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
			for (size_t i = lo + 1; i < hi; i++)
				a[i] += a[i - 1];
			part[t + 1] = hi > lo ? a[hi - 1] : 0;
#pragma omp barrier
#pragma omp single
			for (int k = 1; k <= nt; k++)
				part[k] += part[k - 1];
			for (size_t i = lo; i < hi; i++)
				a[i] += part[t];
		}
		s += (double)a[n - 1];
	}
	free(a), free(part);
	return s;
}

/* Mandelbrot rows with dynamic scheduling: very unequal work per row. */
static double mandel(size_t n, int iters)
{
	double s = 0;
	for (int it = 0; it < iters; it++) {
		size_t total = 0;
#pragma omp parallel for schedule(dynamic, 2) reduction(+ : total)
		for (size_t y = 0; y < n; y++)
			for (size_t x = 0; x < n; x++) {
				double cr = -2.0 + 2.5 * (double)x / (double)n;
				double ci = -1.25 + 2.5 * (double)y / (double)n, zr = 0, zi = 0;
				int k = 0;
				while (k < 200 && zr * zr + zi * zi < 4.0) {
					double t = zr * zr - zi * zi + cr;
					zi = 2.0 * zr * zi + ci, zr = t, k++;
				}
				total += (size_t)k;
			}
		s += (double)total;
	}
	return s;
}

/* Merge sort with OpenMP tasks: recursive, irregular, tasks stolen across threads. */
static void msort(uint32_t *a, uint32_t *t, size_t n)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) {
			uint32_t v = a[i];
			size_t k = i;
			while (k > 0 && a[k - 1] > v)
				a[k] = a[k - 1], k--;
			a[k] = v;
		}
		return;
	}
#pragma omp task if (n > 4096)
	msort(a, t, n / 2);
#pragma omp task if (n > 4096)
	msort(a + n / 2, t + n / 2, n - n / 2);
#pragma omp taskwait
	size_t i = 0, j = n / 2, k = 0;
	while (i < n / 2 && j < n)
		t[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < n / 2)
		t[k++] = a[i++];
	while (j < n)
		t[k++] = a[j++];
	memcpy(a, t, n * sizeof *a);
}

static double mergesort(size_t n, int iters)
{
	uint32_t *a = malloc(n * sizeof *a), *t = malloc(n * sizeof *t);
	uint64_t r = 1181783497276652981ull;
	double s = 0;
	for (int it = 0; it < iters; it++) {
		for (size_t i = 0; i < n; i++)
			a[i] = (uint32_t)next_rand(&r);
#pragma omp parallel
#pragma omp single
		msort(a, t, n);
		s += a[n / 2];
	}
	free(a), free(t);
	return s;
}

/* Conjugate-gradient iterations on a 1-D Laplacian: matvec, two dots, three axpys per step. */
static double cg(size_t n, int iters)
{
	double *x = calloc(n, sizeof *x), *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p);
	double *q = malloc(n * sizeof *q), rr = 0;
	for (size_t i = 0; i < n; i++)
		r[i] = p[i] = 1.0, rr += 1.0;
	for (int it = 0; it < iters; it++) {
		double pq = 0, rr2 = 0;
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++)
			q[i] = 2.0 * p[i] - (i ? p[i - 1] : 0) - (i + 1 < n ? p[i + 1] : 0);
#pragma omp parallel for schedule(static) reduction(+ : pq)
		for (size_t i = 0; i < n; i++)
			pq += p[i] * q[i];
		double alpha = rr / (pq + 1e-30);
#pragma omp parallel for schedule(static) reduction(+ : rr2)
		for (size_t i = 0; i < n; i++) {
			x[i] += alpha * p[i];
			r[i] -= alpha * q[i];
			rr2 += r[i] * r[i];
		}
		double beta = rr2 / (rr + 1e-30);
		rr = rr2;
#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++)
			p[i] = r[i] + beta * p[i];
	}
	double s = x[n / 2];
	free(x), free(r), free(p), free(q);
	return s;
}

/* Histogram with per-thread private bins merged under a critical section. */
static double histo(size_t n, int iters)
{
	uint32_t *keys = malloc(n * sizeof *keys);
	uint64_t bins[256] = { 0 }, r = 6364136223846793005ull;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		keys[i] = (uint32_t)next_rand(&r);
	for (int it = 0; it < iters; it++) {
#pragma omp parallel
		{
			uint64_t mine[256] = { 0 };
#pragma omp for schedule(static)
			for (size_t i = 0; i < n; i++)
				mine[(keys[i] >> (it % 24)) & 255]++;
#pragma omp critical
			for (int b = 0; b < 256; b++)
				bins[b] += mine[b];
		}
		s += (double)bins[it % 256];
	}
	free(keys);
	return s;
}

/* Collatz chain lengths, guided scheduling: unpredictable work per element. */
static double collatz(size_t n, int iters)
{
	double s = 0;
	for (int it = 0; it < iters; it++) {
		uint64_t longest = 0;
#pragma omp parallel for schedule(guided) reduction(max : longest)
		for (size_t i = 1; i < n; i++) {
			uint64_t v = i + (uint64_t)it * n, k = 0;
			while (v != 1)
				v = v & 1 ? 3 * v + 1 : v / 2, k++;
			if (k > longest)
				longest = k;
		}
		s += (double)longest;
	}
	return s;
}

static const struct {
	const char *name;
	double (*run)(size_t n, int iters);
} kernels[] = {
	{ "triad", triad },	{ "jacobi2d", jacobi2d }, { "spmv", spmv },
	{ "gemm", gemm },	{ "nbody", nbody },	  { "montecarlo", montecarlo },
	{ "scan", scan },	{ "mandel", mandel },	  { "mergesort", mergesort },
	{ "cg", cg },		{ "histo", histo },	  { "collatz", collatz },
};

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: omp_kernels KERNEL THREADS N ITERS\n");
		return 1;
	}
	int threads = atoi(argv[2]), iters = atoi(argv[4]);
	size_t n = (size_t)atol(argv[3]);
	if (threads < 1 || threads > 64 || n < 16 || iters < 1)
		return 1;
	omp_set_num_threads(threads);
	for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
		if (strcmp(argv[1], kernels[k].name) == 0) {
			printf("%g\n", kernels[k].run(n, iters));
			return 0;
		}
	fprintf(stderr, "omp_kernels: unknown kernel '%s'\n", argv[1]);
	return 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Multithreaded kernels whose per-thread counters are recorded under callgrind (see README.md). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_MAX_THREADS = 16 };

struct job {
	int id, n_threads, iters;
	size_t n;
	const char *kernel;
	double *a, *b, *c;
	uint32_t *keys;
	pthread_barrier_t *barrier;
	uint64_t sink;
};

/* Jacobi 1-D stencil: the same work per thread, so counters are nearly equal. */
static void stencil(struct job *j, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++) {
		size_t l = i ? i - 1 : i, r = i + 1 < j->n ? i + 1 : i;
		j->b[i] = 0.25 * j->a[l] + 0.5 * j->a[i] + 0.25 * j->a[r];
	}
}

/* Dense matrix-vector rows: regular, cache-friendly. */
static void matvec(struct job *j, size_t lo, size_t hi)
{
	size_t m = 256;
	for (size_t i = lo; i < hi; i += m) {
		double s = 0;
		for (size_t k = 0; k < m && i + k < hi; k++)
			s += j->a[i + k] * j->b[k];
		j->c[(i / m) % j->n] += s;
	}
}

/* Histogram of pseudo-random keys: data-dependent branches and misses. */
static void histogram(struct job *j, size_t lo, size_t hi)
{
	uint32_t h[64] = { 0 };
	for (size_t i = lo; i < hi; i++) {
		uint32_t k = j->keys[i];
		if (k & 1)
			h[k % 64] += 2;
		else
			h[(k >> 7) % 64]++;
	}
	for (int i = 0; i < 64; i++)
		j->sink += h[i];
}

/* Insertion sort of small runs: work depends on the data, so threads differ more. */
static void sortruns(struct job *j, size_t lo, size_t hi)
{
	for (size_t s = lo; s < hi; s += 32) {
		size_t e = s + 32 < hi ? s + 32 : hi;
		for (size_t i = s + 1; i < e; i++) {
			uint32_t v = j->keys[i];
			size_t k = i;
			while (k > s && j->keys[k - 1] > v) {
				j->keys[k] = j->keys[k - 1];
				k--;
			}
			j->keys[k] = v;
		}
		for (size_t i = s; i < e; i++)
			j->keys[i] ^= (uint32_t)(i * 2654435761u);
	}
}

static void *worker(void *arg)
{
	struct job *j = arg;
	size_t chunk = j->n / (size_t)j->n_threads;
	size_t lo = chunk * (size_t)j->id, hi = lo + chunk;

	for (int it = 0; it < j->iters; it++) {
		if (strcmp(j->kernel, "stencil") == 0)
			stencil(j, lo, hi);
		else if (strcmp(j->kernel, "matvec") == 0)
			matvec(j, lo, hi);
		else if (strcmp(j->kernel, "histogram") == 0)
			histogram(j, lo, hi);
		else
			sortruns(j, lo, hi);
		pthread_barrier_wait(j->barrier);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct job jobs[N_MAX_THREADS];
	pthread_t tid[N_MAX_THREADS];
	pthread_barrier_t barrier;
	int t, n_threads, iters;
	size_t n;
	double *a, *b, *c;
	uint32_t *keys, x = 12345;

	if (argc != 5) {
		fprintf(stderr, "usage: kernels stencil|matvec|histogram|sort THREADS N ITERS\n");
		return 1;
	}
	n_threads = atoi(argv[2]);
	n = (size_t)atol(argv[3]);
	iters = atoi(argv[4]);
	if (n_threads < 1 || n_threads > N_MAX_THREADS || n < 1024 || iters < 1)
		return 1;
	a = calloc(n, sizeof *a);
	b = calloc(n, sizeof *b);
	c = calloc(n, sizeof *c);
	keys = calloc(n, sizeof *keys);
	if (!a || !b || !c || !keys)
		return 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		keys[i] = x >> 3;
		a[i] = (double)(x % 1000) / 7.0;
	}
	pthread_barrier_init(&barrier, NULL, (unsigned)n_threads);
	for (t = 0; t < n_threads; t++) {
		jobs[t] = (struct job){ .id = t, .n_threads = n_threads, .iters = iters, .n = n,
					.kernel = argv[1], .a = a, .b = b, .c = c, .keys = keys,
					.barrier = &barrier };
		pthread_create(&tid[t], NULL, worker, &jobs[t]);
	}
	for (t = 0; t < n_threads; t++)
		pthread_join(tid[t], NULL);
	for (t = 0; t < n_threads; t++)
		x += (uint32_t)jobs[t].sink;
	printf("%u %g\n", x, c[0] + b[1]);
	free(a);
	free(b);
	free(c);
	free(keys);
	return 0;
}

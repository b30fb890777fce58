/* SPDX-License-Identifier: BSD-3-Clause */
/* Iterative radix-2 complex FFT: forward/inverse round trips over growing sizes (corpus kernel). */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x14057b7ef767814fu;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* In place; sign -1 forward, +1 inverse (unscaled). The strides double each stage. */
static void fft(double complex *x, size_t n, int sign)
{
	const double pi = 3.14159265358979323846;

	for (size_t i = 1, j = 0; i < n; i++) {
		size_t bit = n >> 1;
		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			double complex t = x[i];
			x[i] = x[j], x[j] = t;
		}
	}
	for (size_t len = 2; len <= n; len <<= 1) {
		double complex wl = cexp(sign * 2.0 * pi * I / (double)len);
		for (size_t i = 0; i < n; i += len) {
			double complex w = 1.0;
			for (size_t k = 0; k < len / 2; k++) {
				double complex u = x[i + k], v = x[i + k + len / 2] * w;
				x[i + k] = u + v, x[i + k + len / 2] = u - v;
				w *= wl;
			}
		}
	}
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 2;
	double err = 0;

	if (scale < 1) {
		fprintf(stderr, "usage: fft [SCALE>=1]\n");
		return 2;
	}
	for (int logn = 12; logn <= 19; logn++) {
		size_t n = (size_t)1 << logn;
		double complex *x = malloc(sizeof *x * n), *orig = malloc(sizeof *orig * n);
		if (x == NULL || orig == NULL) {
			fprintf(stderr, "fft: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			orig[i] = x[i] = uniform() - 0.5 + I * (uniform() - 0.5);
		for (int rep = 0; rep < scale; rep++) {
			fft(x, n, -1);
			fft(x, n, +1);
			for (size_t i = 0; i < n; i++)
				x[i] /= (double)n;
		}
		for (size_t i = 0; i < n; i++)
			err = fmax(err, cabs(x[i] - orig[i]));
		free(x);
		free(orig);
	}
	printf("max round-trip error %.3e\n", err);
	return 0;
}

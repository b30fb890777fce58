/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP direct 2D convolution (no FFT): a generated 640 x 640 image through box, Gaussian-like
 * and edge kernels of growing radius (1 to 4), the rows of each pass over the threads, borders
 * clamped by branches; each pass feeds the next, then a threshold count (heldout3 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 640

static uint64_t rng = 0x5be0cd19137e2179u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int clamp(int v)
{
	return v < 0 ? 0 : v >= N ? N - 1 : v;
}

/* One pass with a (2r+1)^2 kernel; interior rows and columns skip the clamping. */
static void convolve(const float *in, float *out, const float *k, int r)
{
	int y;

#pragma omp parallel for schedule(static)
	for (y = 0; y < N; y++) {
		int w = 2 * r + 1;
		for (int x = 0; x < N; x++) {
			float s = 0.0f;
			if (y >= r && y < N - r && x >= r && x < N - r) {
				for (int dy = -r; dy <= r; dy++) {
					const float *row = in + (size_t)(y + dy) * N + x - r;
					const float *kr = k + (dy + r) * w;
					for (int dx = 0; dx < w; dx++)
						s += kr[dx] * row[dx];
				}
			} else {
				for (int dy = -r; dy <= r; dy++)
					for (int dx = -r; dx <= r; dx++)
						s += k[(dy + r) * w + dx + r] *
						     in[(size_t)clamp(y + dy) * N + clamp(x + dx)];
			}
			out[(size_t)y * N + x] = s;
		}
	}
}

int main(void)
{
	float *a = malloc((size_t)N * N * sizeof *a), *b = malloc((size_t)N * N * sizeof *b);
	float k[81];
	long above = 0;

	if (a == NULL || b == NULL)
		return 1;
	for (size_t i = 0; i < (size_t)N * N; i++) /* noise plus bright rectangles */
		a[i] = (float)(next() % 256) / 256.0f;
	for (int n = 0; n < 40; n++) {
		int x0 = (int)(next() % (N - 64)), y0 = (int)(next() % (N - 64));
		for (int y = y0; y < y0 + 48; y++)
			for (int x = x0; x < x0 + 48; x++)
				a[(size_t)y * N + x] += 2.0f;
	}
	for (int pass = 0; pass < 8; pass++) {
		int r = 1 + pass / 2, w = 2 * r + 1;
		float sum = 0.0f;
		for (int dy = -r; dy <= r; dy++)
			for (int dx = -r; dx <= r; dx++) {
				float v;
				if (pass % 2 == 0) /* smoothing: weights fall off with distance */
					v = 1.0f / (float)(1 + dx * dx + dy * dy);
				else /* edges: centre minus surround, scaled */
					v = (dx == 0 && dy == 0) ? (float)(w * w) : -1.0f;
				k[(dy + r) * w + dx + r] = v;
				sum += v;
			}
		for (int i = 0; i < w * w; i++)
			k[i] /= (pass % 2 == 0) ? sum : (float)(w * w);
		convolve(a, b, k, r);
		float *t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < (size_t)N * N; i++)
		above += a[i] > 0.01f || a[i] < -0.01f;
	printf("%ld\n", above);
	free(a), free(b);
	return 0;
}

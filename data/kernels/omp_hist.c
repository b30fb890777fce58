/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP histogram and prefix sum: per-thread private histograms of pseudo-random keys with a
 * shifting distribution, merged in a critical section, then a scan (held-out kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BINS (1 << 16)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

int main(void)
{
	const size_t n = 1 << 20;
	uint32_t *hist = calloc(BINS, sizeof *hist);
	uint64_t total = 0;

	if (hist == NULL)
		return 1;
	for (int round = 0; round < 12; round++) {
		uint32_t range = 256u << round % 9;
#pragma omp parallel
		{
			uint32_t *mine = calloc(BINS, sizeof *mine);
			if (mine != NULL) {
#pragma omp for schedule(static)
				for (size_t i = 0; i < n; i++)
					mine[mix(i + (size_t)round * n) % range]++;
#pragma omp critical
				for (size_t b = 0; b < BINS; b++)
					hist[b] += mine[b];
				free(mine);
			}
		}
		for (size_t b = 1; b < BINS; b++)
			hist[b] += hist[b - 1] / 7;
		total += hist[BINS - 1];
		memset(hist, 0, BINS * sizeof *hist);
	}
	printf("%llu\n", (unsigned long long)total);
	free(hist);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP bitonic sort: the compare-exchange stages of each merge split over the threads, on
 * random keys, then on nearly sorted keys and on keys with few distinct values, so the branch
 * behaviour changes from round to round (heldout2 kernel). */
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

/* One bitonic stage (merge size k, distance j): every pair whose order disagrees with its
 * block's direction is swapped; a branch, not a select, so mispredictions follow the data. */
static void stage(uint32_t *a, size_t n, size_t k, size_t j)
{
	long i;

#pragma omp parallel for schedule(static)
	for (i = 0; i < (long)n; i++) {
		size_t l = (size_t)i ^ j;
		if (l > (size_t)i) {
			int up = ((size_t)i & k) == 0;
			if ((a[i] > a[l]) == up) {
				uint32_t t = a[i];
				a[i] = a[l];
				a[l] = t;
			}
		}
	}
}

static void bitonic(uint32_t *a, size_t n)
{
	for (size_t k = 2; k <= n; k <<= 1)
		for (size_t j = k >> 1; j > 0; j >>= 1)
			stage(a, n, k, j);
}

int main(void)
{
	const size_t n = (size_t)1 << 17;
	uint32_t *a = malloc(n * sizeof *a);
	uint64_t check = 0;

	if (a == NULL)
		return 1;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < n; i++) {
			uint32_t r = (uint32_t)next();
			if (round == 0)
				a[i] = r;
			else if (round == 1)
				a[i] = (uint32_t)i * 16u + (r % 64u < 2 ? r % 4096u : 0u); /* nearly sorted */
			else
				a[i] = r % 13u; /* few distinct keys */
		}
		bitonic(a, n);
		for (size_t i = 1; i < n; i++)
			if (a[i - 1] > a[i])
				return 2;
		check = check * 31 + a[n / 2] + a[n - 1];
	}
	printf("%llu\n", (unsigned long long)check);
	free(a);
	return 0;
}

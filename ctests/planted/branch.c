/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: a branch on random bytes (mispredicted half the time).  Its twin runs the same
 * loop on the same bytes sorted: the same work, a predictable branch.
 */
#include <stdlib.h>

#include "planted.h"

#define N (1 << 17)

/* The asm in one arm keeps the compiler from turning the branch into a conditional move. */
#define BODY(d, i, s)                                                                              \
	do {                                                                                       \
		if ((d)[i] < 128) {                                                                \
			__asm__ volatile("" ::: "memory");                                         \
			(s) += (d)[i] * 3u;                                                        \
		} else {                                                                           \
			(s) -= (d)[i];                                                             \
		}                                                                                  \
	} while (0)

__attribute__((noinline)) static uint64_t random_branches(const unsigned char *d, int passes)
{
	uint64_t s = 0;
	for (int p = 0; p < passes; p++)
		for (int i = 0; i < N; i++)
			BODY(d, i, s);
	return s;
}

__attribute__((noinline)) static uint64_t sorted_branches(const unsigned char *d, int passes)
{
	uint64_t s = 0;
	for (int p = 0; p < passes; p++)
		for (int i = 0; i < N; i++)
			BODY(d, i, s);
	return s;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	unsigned char *d = malloc(N), *sorted = malloc(N);
	size_t count[256] = {0}, k = 0;
	uint64_t seed = 42;

	if (d == NULL || sorted == NULL || passes < 1)
		return 2;
	for (int i = 0; i < N; i++)
		count[d[i] = (unsigned char)(planted_rand(&seed) >> 56)]++;
	for (int v = 0; v < 256; v++)
		for (size_t c = 0; c < count[v]; c++)
			sorted[k++] = (unsigned char)v;
	planted_sink = sorted_branches(sorted, passes);
	planted_sink += random_branches(d, passes);
	free(d);
	free(sorted);
	return planted_done();
}

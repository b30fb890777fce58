/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A well-behaved program: sums over a 16 KiB array that stays in D1, with no branch but the
 * loops' (taken every time but the last) and no call through a pointer.  No absolute threshold
 * may flag it, nor any of its code spaces.
 */
#include <stdlib.h>

#include "planted.h"

#define N (16 * 1024 / sizeof(uint32_t))

__attribute__((noinline)) static uint64_t sweep(const uint32_t *a, int passes)
{
	uint64_t s = 0;
	for (int p = 0; p < passes; p++)
		for (size_t i = 0; i < N; i++)
			s += (uint64_t)a[i] * a[i] + (s >> 7);
	return s;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	uint32_t *a = malloc(sizeof(uint32_t) * N);

	if (a == NULL || passes < 1)
		return 2;
	for (size_t i = 0; i < N; i++)
		a[i] = (uint32_t)(i * 2654435761u);
	planted_sink = sweep(a, passes);
	free(a);
	return planted_done();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: a parallel loop whose first quarter of iterations costs eight times the rest,
 * split in static chunks (one thread gets all of it).  Its twin spreads the same total work
 * evenly over the iterations.
 */
#include <stdlib.h>

#include "planted.h"

#define N    4096
#define UNIT 24 /* inner steps of one unit of work */

static uint64_t work(uint64_t i, int units)
{
	uint64_t x = i + 1;
	for (int k = 0; k < units * UNIT; k++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* 8 units for the first quarter, 1 for the rest: 11 units per 4 iterations. */
__attribute__((noinline)) static uint64_t imbalanced_loop(void)
{
	uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
	for (int i = 0; i < N; i++)
		s += work((uint64_t)i, i < N / 4 ? 8 : 1);
	return s;
}

/* The same 11 units per 4 iterations, spread evenly: 5 on every fourth iteration, 2 on the rest. */
__attribute__((noinline)) static uint64_t balanced_loop(void)
{
	uint64_t s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
	for (int i = 0; i < N; i++)
		s += work((uint64_t)i, i % 4 == 0 ? 5 : 2);
	return s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;

	if (rounds < 1)
		return 2;
	for (int r = 0; r < rounds; r++) {
		planted_sink += balanced_loop();
		planted_sink += imbalanced_loop();
	}
	return planted_done();
}

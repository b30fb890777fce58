/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted whole-program defect: a hot loop that calls through a table of sixteen functions at
 * random indices and does little else, so nearly every indirect call mispredicts everywhere the
 * program runs.  No code space is worse than the rest: the defect is the program's average.
 */
#include <stdlib.h>

#define PLANTED_OPS
#include "planted.h"

#define N (1 << 16)

__attribute__((noinline)) static uint64_t dispatch(const unsigned char *idx, int passes)
{
	uint64_t x = 1;
	for (int p = 0; p < passes; p++)
		for (int i = 0; i < N; i++)
			x = planted_ops[idx[i]](x);
	return x;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	unsigned char *idx = malloc(N);
	uint64_t seed = 11;

	if (idx == NULL || passes < 1)
		return 2;
	for (int i = 0; i < N; i++)
		idx[i] = (unsigned char)(planted_rand(&seed) >> 60);
	planted_sink = dispatch(idx, passes);
	free(idx);
	return planted_done();
}

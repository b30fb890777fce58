/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: calls through a table of eight functions at random indices (the target changes
 * at almost every call).  Its twin makes the same calls grouped by target.
 */
#include <stdlib.h>

#define PLANTED_OPS
#include "planted.h"

#define N (1 << 16)

__attribute__((noinline)) static uint64_t random_calls(const unsigned char *idx, int passes)
{
	uint64_t x = 1;
	for (int p = 0; p < passes; p++)
		for (int i = 0; i < N; i++)
			x = planted_ops[idx[i]](x);
	return x;
}

__attribute__((noinline)) static uint64_t grouped_calls(const unsigned char *idx, int passes)
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
	unsigned char *idx = malloc(N), *grouped = malloc(N);
	size_t count[8] = {0}, k = 0;
	uint64_t seed = 7;

	if (idx == NULL || grouped == NULL || passes < 1)
		return 2;
	for (int i = 0; i < N; i++)
		count[idx[i] = (unsigned char)(planted_rand(&seed) >> 61)]++;
	for (int v = 0; v < 8; v++)
		for (size_t c = 0; c < count[v]; c++)
			grouped[k++] = (unsigned char)v;
	planted_sink = grouped_calls(grouped, passes);
	planted_sink += random_calls(idx, passes);
	free(idx);
	free(grouped);
	return planted_done();
}

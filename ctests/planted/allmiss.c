/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted whole-program defect: a pointer chase through a random cycle of 64-byte nodes spread
 * over 16 MiB (eight times the 2 MiB LL), so every step misses D1 and LL, and so does the
 * shuffle that builds the cycle.  The program does nothing else: the defect is its average.
 */
#include <stdlib.h>

#include "planted.h"

#define NODES (1u << 18) /* 64-byte nodes: 16 MiB */

typedef struct node {
	uint32_t next;
	uint32_t pad[15];
} node;

__attribute__((noinline)) static uint64_t chase(const node *v, int passes)
{
	uint64_t s = 0;
	uint32_t p = 0;
	for (int k = 0; k < passes; k++)
		for (uint32_t i = 0; i < NODES; i++) {
			p = v[p].next;
			s += p;
		}
	return s;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	node *v = malloc(sizeof(node) * NODES);
	uint32_t *order = malloc(sizeof(uint32_t) * NODES);
	uint64_t seed = 13;

	if (v == NULL || order == NULL || passes < 1)
		return 2;
	/* Sattolo's shuffle: one cycle through every node. */
	for (uint32_t i = 0; i < NODES; i++)
		order[i] = i;
	for (uint32_t i = NODES - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(planted_rand(&seed) % i), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < NODES; i++)
		v[order[i]].next = order[(i + 1) % NODES];
	free(order);
	planted_sink = chase(v, passes);
	free(v);
	return planted_done();
}

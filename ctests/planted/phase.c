/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: the same loop in two phases: first over 16 KiB (in D1), then over 8 MiB
 * (beyond the 2 MiB LL), one access per 64-byte line, the same number of accesses in each.  Its
 * twin is the same loop over 16 KiB in both phases.
 */
#include <stdlib.h>

#include "planted.h"

#define LINE  8 /* doubles per 64-byte line */
#define SMALL (16 * 1024 / sizeof(double))
#define BIG   (8 * 1024 * 1024 / sizeof(double))

__attribute__((noinline)) static double phased_sweep(const double *a, size_t n, size_t accesses)
{
	double s = 0;
	for (size_t i = 0, k = 0; i < accesses; i++, k += LINE) {
		if (k >= n)
			k = 0;
		s += a[k];
	}
	return s;
}

__attribute__((noinline)) static double steady_sweep(const double *a, size_t n, size_t accesses)
{
	double s = 0;
	for (size_t i = 0, k = 0; i < accesses; i++, k += LINE) {
		if (k >= n)
			k = 0;
		s += a[k];
	}
	return s;
}

int main(int argc, char **argv)
{
	size_t accesses = (size_t)(argc > 1 ? atoi(argv[1]) : 1) * (BIG / LINE);
	double *a = malloc(BIG * sizeof *a);

	if (a == NULL || accesses == 0)
		return 2;
	for (size_t i = 0; i < BIG; i++)
		a[i] = (double)(i & 15);
	/* Phase 1: both loops in D1. */
	planted_sink = (uint64_t)steady_sweep(a, SMALL, accesses);
	planted_sink += (uint64_t)phased_sweep(a, SMALL, accesses);
	/* Phase 2: the planted loop now walks 8 MiB; its twin stays in D1. */
	planted_sink += (uint64_t)steady_sweep(a, SMALL, accesses);
	planted_sink += (uint64_t)phased_sweep(a, BIG, accesses);
	free(a);
	return planted_done();
}

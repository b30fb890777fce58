/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: a loop whose body is 8192 distinct steps of straight-line code (over 100 KiB,
 * far beyond the 32 KiB I1), run again and again.  Its twin takes the same 8192 steps per round
 * through a loop of one step.
 */
#include <stdlib.h>

#include "planted.h"

/* One step; the empty asm makes the compiler keep each step's value, so no two steps fold. */
#define STEP(k)                                                                                    \
	do {                                                                                       \
		x = x * 2862933555777941757u + (k);                                                \
		__asm__ volatile("" : "+r"(x));                                                    \
		y += x >> 29;                                                                      \
	} while (0)
#define R4(k)                                                                                      \
	STEP(k);                                                                                   \
	STEP((k) + 1);                                                                             \
	STEP((k) + 2);                                                                             \
	STEP((k) + 3)
#define R16(k)                                                                                     \
	R4(k);                                                                                     \
	R4((k) + 4);                                                                               \
	R4((k) + 8);                                                                               \
	R4((k) + 12)
#define R64(k)                                                                                     \
	R16(k);                                                                                    \
	R16((k) + 16);                                                                             \
	R16((k) + 32);                                                                             \
	R16((k) + 48)
#define R256(k)                                                                                    \
	R64(k);                                                                                    \
	R64((k) + 64);                                                                             \
	R64((k) + 128);                                                                            \
	R64((k) + 192)
#define R1024(k)                                                                                   \
	R256(k);                                                                                   \
	R256((k) + 256);                                                                           \
	R256((k) + 512);                                                                           \
	R256((k) + 768)
#define R8192(k)                                                                                   \
	R1024(k);                                                                                  \
	R1024((k) + 1024);                                                                         \
	R1024((k) + 2048);                                                                         \
	R1024((k) + 3072);                                                                         \
	R1024((k) + 4096);                                                                         \
	R1024((k) + 5120);                                                                         \
	R1024((k) + 6144);                                                                         \
	R1024((k) + 7168)

__attribute__((noinline)) static uint64_t huge_body(uint64_t x, int rounds)
{
	uint64_t y = 0;
	for (int r = 0; r < rounds; r++) {
		R8192(1);
	}
	return x + y;
}

__attribute__((noinline)) static uint64_t small_body(uint64_t x, int rounds)
{
	uint64_t y = 0;
	for (int r = 0; r < rounds; r++)
		for (uint64_t k = 1; k <= 8192; k++)
			STEP(k);
	return x + y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;

	if (rounds < 1)
		return 2;
	planted_sink = small_body(3, rounds);
	planted_sink += huge_body(5, rounds);
	return planted_done();
}

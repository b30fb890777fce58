/* SPDX-License-Identifier: BSD-3-Clause */
/* What every benchmark needs: a monotonic clock and the same pseudo-random numbers on every run. */
#ifndef MPXKIT_BENCH_H
#define MPXKIT_BENCH_H

#include <stdint.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: a fixed seed gives the same counts and weights on every run, so runs compare. */
static inline uint64_t next_random(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

#endif

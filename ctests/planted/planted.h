/* SPDX-License-Identifier: BSD-3-Clause */
/* What the planted-defect programs share: a result the compiler cannot drop, a fixed random stream.
 */
#ifndef MPXKIT_PLANTED_H
#define MPXKIT_PLANTED_H

#include <stdint.h>
#include <stdio.h>

/* Printed at the end, so no computation is dead code. */
static volatile uint64_t planted_sink;

/* xorshift64*: the same inputs on every run, so every profile is the same. */
static inline uint64_t planted_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static inline int planted_done(void)
{
	printf("%llu\n", (unsigned long long)planted_sink);
	return 0;
}

#endif

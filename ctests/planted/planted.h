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

#ifdef PLANTED_OPS
/*
 * Sixteen small functions to call through a table (indirect.c, allindirect.c): each is code of
 * its own, so no two fold into one and every call through the table has its own target.
 */
typedef uint64_t (*planted_op)(uint64_t);

/* clang-format off */
#define PLANTED_OP(k)                                                                              \
	__attribute__((noinline)) static uint64_t op##k(uint64_t x)                                \
	{                                                                                          \
		return x * (2 * (k) + 3) + (k);                                                    \
	}
PLANTED_OP(0) PLANTED_OP(1) PLANTED_OP(2) PLANTED_OP(3) PLANTED_OP(4) PLANTED_OP(5) PLANTED_OP(6)
PLANTED_OP(7) PLANTED_OP(8) PLANTED_OP(9) PLANTED_OP(10) PLANTED_OP(11) PLANTED_OP(12)
PLANTED_OP(13) PLANTED_OP(14) PLANTED_OP(15)

static planted_op planted_ops[16] = {op0, op1, op2,  op3,  op4,  op5,  op6,  op7,
				     op8, op9, op10, op11, op12, op13, op14, op15};
/* clang-format on */
#endif

#endif

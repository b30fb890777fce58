/* SPDX-License-Identifier: BSD-3-Clause */
/* The interval of an mpxkit event's count read through PAPI: a call of the mpxkit component. */
#ifndef MPXKIT_PAPI_H
#define MPXKIT_PAPI_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What mpxkit_papi_interval says of a value (doc/component.md, "Intervals
 * through PAPI").  Positive, so that PAPI's error codes (negative) stay
 * apart.
 */
enum {
	MPXKIT_PAPI_EXACT = 1,	     /* counted all the time: lo = hi = the count */
	MPXKIT_PAPI_ESTIMATED = 2,   /* multiplexed: the truth in [lo, hi] at the level */
	MPXKIT_PAPI_OPEN = 3,	     /* multiplexed, no spread seen yet: hi is INFINITY */
	MPXKIT_PAPI_NOT_COUNTED = 4, /* never counted: PAPI's 0 is no measurement */
};

/*
 * The interval of the index-th event of EventSet (the order of
 * PAPI_add_event), an event of the mpxkit component, at the level
 * MPXKIT_LEVEL sets (default 0.9): the truth lies in [*lo, *hi] with that
 * probability.  After PAPI_stop it is the interval of the values PAPI_stop
 * returned; while the event set runs, of the total at this call (a read of
 * its own, which leaves PAPI_read's values alone).  Returns one of the
 * MPXKIT_PAPI_* above, or a PAPI error: PAPI_ENOEVST for no such event set,
 * PAPI_EINVAL for a bad index, lo or hi, PAPI_ENOSUPP for an event set of
 * another component, PAPI_ENOTRUN before its first PAPI_start.  Defined in
 * libpapi when it was built with the mpxkit component (doc/papi-build.md);
 * the caller links -lpapi only.
 */
int mpxkit_papi_interval(int EventSet, int index, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Scores of an estimated series against ground truth, and the paper's data cleaning
 * (doc/evaluation.md). */
#ifndef MPXKIT_METRIC_H
#define MPXKIT_METRIC_H

#include <stddef.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Relative accuracy: max(0, 1 - sum|est - ocoe| / sum ocoe).  When the truth
 * sums to 0 it is 1 if every estimate is 0 too, else 0.  n = 0 gives 1.
 */
double mpxkit_ra(const double *est, const double *ocoe, size_t n);

/*
 * Total accuracy: max(0, 1 - |sum est - sum ocoe| / sum ocoe), with the same
 * convention for a truth that sums to 0.
 */
double mpxkit_total_accuracy(const double *est, const double *ocoe, size_t n);

/* No Sakoe-Chiba band: every cell of the matrix may lie on the path. */
#define MPXKIT_DTW_NO_BAND ((size_t)-1)

typedef struct mpxkit_dtw_options {
	size_t
	    band;   /* Sakoe-Chiba half-width in cells around the diagonal, or MPXKIT_DTW_NO_BAND */
	int log10p; /* compare log10(1 + x) rather than x (the values must be > -1) */
} mpxkit_dtw_options;

/*
 * Dynamic time warping cost between a (n values) and b (m values): the
 * cheapest path from (0,0) to (n-1,m-1) through steps (i+1,j), (i,j+1),
 * (i+1,j+1), each cell costing |a_i - b_j|.  O(n m) time (less with a band),
 * O(min(n, m)) memory.  With a band w, the longer series indexes rows and
 * cell (i, j) is allowed when |j - round(i (s-1)/(L-1))| <= w, L and s being
 * the longer and shorter lengths: the band follows the diagonal of the
 * rectangle, so every w >= 0 leaves a path.  opts NULL: no band, raw values.
 * Fails with -MPXKIT_EINVAL when a series is empty.
 */
int mpxkit_dtw(const double *a, size_t n, const double *b, size_t m, const mpxkit_dtw_options *opts,
	       double *cost);

/* Pearson correlation of x and y; NaN when n < 2 or either series is constant. */
double mpxkit_pearson(const double *x, const double *y, size_t n);

/*
 * The paper's tail truncation: of n steps, drop the last 2 % (floor(n/50))
 * and then 5 more; returns the steps kept (0 when nothing is left).
 */
size_t mpxkit_clean_tail(size_t n_steps);

/*
 * The paper's run filter: of n runs of one program with the given totals,
 * keep those whose total is at least 0.2 x the largest (keep[i] = 1) and
 * drop the others (keep[i] = 0), as runs that recorded nothing.  Returns
 * the number kept.
 */
size_t mpxkit_clean_runs(const double *totals, size_t n, unsigned char *keep);

#ifdef __cplusplus
}
#endif
#endif

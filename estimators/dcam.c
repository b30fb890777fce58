/* SPDX-License-Identifier: BSD-3-Clause */
/* dcam: NeoMPX's discrete geometric ramp between successive observations, ratio m = r^(1/G) per
 * slice. */
#include <math.h>

#include "estimator-impl.h"

/* sum_{j<n} first * m^j, summed term by term (G is small, and m near 1 stays exact). */
static double geometric_sum(double first, double m, size_t n)
{
	double acc = 0.0, term = first;
	for (size_t j = 0; j < n; j++) {
		acc += term;
		term *= m;
	}
	return acc;
}

/*
 * Slice j of the G from this observation a on counts a m^j, m = (b/a)^(1/G),
 * so that slice G would count b.  Zeros follow NeoMPX's dcam_raw_to_est: with
 * b = 0 the ramp decays to 1 in the last slice, m = (1/a)^(1/(G-1)); with a = 0
 * the observed slice counted 0 and the G-1 others ramp from 1 up to b at the
 * next observation, m = b^(1/(G-1)).
 */
double estimate_dcam(double g, double a, double b)
{
	size_t n = (size_t)g;

	if (n <= 1 || a == b)
		return g * a;
	if (b == 0.0)
		return geometric_sum(a, pow(1.0 / a, 1.0 / (g - 1.0)), n);
	if (a == 0.0)
		return geometric_sum(1.0, pow(b, 1.0 / (g - 1.0)), n - 1);
	return geometric_sum(a, pow(b / a, 1.0 / g), n);
}

/*
 * Under any schedule, where its formula applies (the window counted the
 * event): the W slices of the window on the geometric ramp from the observed
 * rate r to the next observed rn, scaled by the window's time over W (1
 * when the slices are nominal); a window that counted it not at all
 * interpolates linearly.
 */
static double estimate_dcam_rates(const event_rates *x, double g)
{
	double v;

	if (!(x->k.t > 0))
		return estimate_unseen(x);
	/* The last observation has no next one: m = 1, which is fixed's. */
	v = estimate_dcam(g, x->r, x->dn ? x->rn : x->r) * (x->k.T / g);
	return v < x->k.c ? x->k.c : v;
}

static void dcam_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		event_rates x = window_rates(w, e);
		out[e] = estimate_dcam_rates(&x, (double)w->layout->n_groups);
	}
}

const estimator_ops estimator_dcam = {
    .info =
	{
	    .name = "dcam",
	    .summary = "discrete geometric ramp towards the next observation (NeoMPX DCAM)",
	    .lookback = 0,
	    .lookahead = 1,
	},
    .estimate = dcam_estimate,
    .interval = &interval_cal_dcam,
};

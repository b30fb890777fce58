/* SPDX-License-Identifier: BSD-3-Clause */
/* linear-dira: NeoMPX's discrete linear ramp from this rotation's observation to the next one's. */
#include "estimator-impl.h"

/*
 * The G slices from the observed one on, each on the line from a (this
 * observation) to b (the next, G slices later): sum_{j<G} a + (b-a) j/G.
 */
double estimate_dira(double g, double a, double b)
{
	return g * a + (b - a) * (g - 1.0) / 2.0;
}

/*
 * Under any schedule: the window's T slices at the observed rate r, plus the
 * ramp towards the next observed rate rn over the uncounted time T - t:
 * r T + (rn - r)(T - t)/2, which is v1's G a + (b - a)(G - 1)/2 when t = 1.
 */
double estimate_dira_rates(const event_rates *x)
{
	/* The last observation has no next one: hold r, as fixed does. */
	double b = x->dn ? x->rn : x->r;

	if (!(x->k.t > 0))
		return estimate_unseen(x);
	return x->k.T * x->r + (b - x->r) * (x->k.T - x->k.t) / 2.0;
}

static void dira_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		event_rates x = window_rates(w, e);
		out[e] = estimate_dira_rates(&x);
	}
}

const estimator_ops estimator_linear_dira = {
    .info =
	{
	    .name = "linear-dira",
	    .summary = "discrete linear ramp towards the next observation (NeoMPX DIRA)",
	    .lookback = 0,
	    .lookahead = 1,
	},
    .estimate = dira_estimate,
    .interval = &interval_cal_linear_dira,
};

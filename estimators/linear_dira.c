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

static void dira_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	double g = (double)w->layout->n_groups;
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		double a = (double)window_obs(w, 0, e);
		/* The last rotation has no next observation: hold a, as fixed does. */
		double b = w->n_after ? (double)window_obs(w, 1, e) : a;
		out[e] = estimate_dira(g, a, b);
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
};

/* SPDX-License-Identifier: BSD-3-Clause */
/* linear-tam: NeoMPX's trapezoid between the previous rotation's observation and this one's. */
#include "estimator-impl.h"

/*
 * The G slices after the previous observation p up to and including this one
 * a, each on the line from p to a: sum_{j=1..G} p + (a-p) j/G
 * = G (p+a)/2 + (a-p)/2.
 */
double estimate_tam(double g, double p, double a)
{
	return g * (p + a) / 2.0 + (a - p) / 2.0;
}

static void tam_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	double g = (double)w->layout->n_groups;
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		double a = (double)window_obs(w, 0, e);
		/* The first rotation has no previous observation: hold a, as fixed does. */
		double p = w->n_before ? (double)window_obs(w, -1, e) : a;
		out[e] = estimate_tam(g, p, a);
	}
}

const estimator_ops estimator_linear_tam = {
    .info =
	{
	    .name = "linear-tam",
	    .summary = "trapezoid from the previous observation to this one (NeoMPX TAM)",
	    .lookback = 1,
	    .lookahead = 0,
	},
    .estimate = tam_estimate,
};

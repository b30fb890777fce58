/* SPDX-License-Identifier: BSD-3-Clause */
/* fixed: PAPI's default scaling, the slice's count held for the whole rotation (est = G x obs). */
#include "estimator-impl.h"

double estimate_fixed(double g, double a)
{
	return g * a;
}

static void fixed_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	double g = (double)w->layout->n_groups;
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++)
		out[e] = estimate_fixed(g, (double)window_obs(w, 0, e));
}

const estimator_ops estimator_fixed = {
    .info =
	{
	    .name = "fixed",
	    .summary = "G x the slice's count (PAPI's default multiplexing)",
	    .lookback = 0,
	    .lookahead = 0,
	},
    .estimate = fixed_estimate,
};

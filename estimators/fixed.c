/* SPDX-License-Identifier: BSD-3-Clause */
/* fixed: PAPI's scaling, the observed rate times the window's time (est = G x obs under
 * round-robin). */
#include "estimator-impl.h"

double estimate_fixed(double g, double a)
{
	return g * a;
}

/*
 * The count over the counted time c / t, times the window's time T, as PAPI
 * scales a multiplexed count by time enabled over time running; computed as
 * (c T) / t so that round-robin's t = 1 gives v1's G a bit for bit.  A
 * window that counted the event not at all holds the last observed rate
 * (the next one before the first observation).
 */
double estimate_fixed_rates(const event_rates *x)
{
	if (x->k.t > 0)
		return estimate_fixed(x->k.T, x->k.c) / x->k.t;
	return (x->dp ? x->rp : x->rn) * x->k.T;
}

static void fixed_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		event_rates x = window_rates(w, e);
		out[e] = estimate_fixed_rates(&x);
	}
}

const estimator_ops estimator_fixed = {
    .info =
	{
	    .name = "fixed",
	    .summary = "observed rate x the window's time (PAPI's default multiplexing)",
	    .lookback = 0,
	    .lookahead = 0,
	},
    .estimate = fixed_estimate,
    .interval = &interval_cal_fixed,
};

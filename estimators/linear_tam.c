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

/*
 * Under any schedule: the uncounted time T - t on the line from the previous
 * observed rate p to this window's r, the counted time at r:
 * T (p + r)/2 + (r - p) t/2, which is v1's formula when t = 1.
 */
double estimate_tam_rates(const event_rates *x)
{
	/* The first observation has no previous one: hold r, as fixed does. */
	double p = x->dp ? x->rp : x->r;

	if (!(x->k.t > 0))
		return estimate_unseen(x);
	return x->k.T * (p + x->r) / 2.0 + (x->r - p) * x->k.t / 2.0;
}

static void tam_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		event_rates x = window_rates(w, e);
		out[e] = estimate_tam_rates(&x);
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
    .interval = &interval_cal_linear_tam,
};

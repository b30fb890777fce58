/* SPDX-License-Identifier: BSD-3-Clause */
/* ref-rate: the event's count per reference unit in its own slice, times the reference's rotation
 * total. */
#include "estimator-impl.h"

static void ref_rate_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	const mpxkit_layout *l = w->layout;
	const uint64_t *ref = w->rot[w->n_before].ref;
	double g = (double)l->n_groups, total = 0.0;

	(void)est;
	for (size_t j = 0; j < l->n_groups; j++)
		total += (double)ref[j];
	for (size_t e = 0; e < l->n_events; e++) {
		double a = (double)window_obs(w, 0, e);
		double in_slice = (double)ref[l->slice[e]];
		/*
		 * A reference that counted nothing in the slice gives no rate: scale
		 * as fixed does.  The product first, so a constant reference gives
		 * G a exactly (a x total is exact below 2^53, and so is G a).
		 */
		out[e] = in_slice > 0.0 ? a * total / in_slice : estimate_fixed(g, a);
	}
}

const estimator_ops estimator_ref_rate = {
    .info =
	{
	    .name = "ref-rate",
	    .summary = "count per reference unit in the slice x the reference's rotation total",
	    .lookback = 0,
	    .lookahead = 0,
	    .flags = MPXKIT_ESTIMATOR_NEEDS_REFERENCE,
	},
    .estimate = ref_rate_estimate,
};

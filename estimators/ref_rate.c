/* SPDX-License-Identifier: BSD-3-Clause */
/* ref-rate: the event's count per reference unit in its own slice, times the reference's rotation
 * total. */
#include "estimator-impl.h"

/*
 * The event's count and the reference's over the slices of window k + d that
 * counted it, as a ratio count / in; 0 when there is none.  Kept as the pair,
 * so that count x total / in multiplies first: a constant reference then
 * gives G a exactly (a x total is exact below 2^53, and so is G a).
 */
typedef struct ref_share {
	double count, in;
} ref_share;

static int ref_ratio(const mpxkit_window *w, long d, size_t e, ref_share *ratio)
{
	const mpxkit_layout *l = w->layout;
	const mpxkit_rotation *r = &w->rot[(long)w->n_before + d];
	double in = 0.0;
	int counted = 0;

	for (size_t j = 0; j < l->n_groups; j++)
		if (rot_val(l, r, j, e) != MPXKIT_NOT_COUNTED) {
			in += (double)r->ref[j];
			counted = 1;
		}
	if (!counted || in <= 0.0)
		return 0;
	ratio->count = (double)r->obs[e];
	ratio->in = in;
	return 1;
}

/*
 * The count per reference unit over the slices that counted the event, times
 * the reference's window total.  A window that counted it not at all takes
 * the nearest observed window's ratio (the earlier one first).
 */
static void ref_rate_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	const mpxkit_layout *l = w->layout;
	const uint64_t *ref = w->rot[w->n_before].ref;
	double total = 0.0;

	(void)est;
	for (size_t j = 0; j < l->n_groups; j++)
		total += (double)ref[j];
	for (size_t e = 0; e < l->n_events; e++) {
		event_rates x = window_rates(w, e);
		ref_share ratio;
		if (ref_ratio(w, 0, e, &ratio)) {
			out[e] = ratio.count * total / ratio.in;
			continue;
		}
		/* A reference that counted nothing in the slices gives no rate: scale as fixed does. */
		if (x.k.t > 0) {
			out[e] = estimate_fixed(x.k.T, x.k.c) / x.k.t;
			continue;
		}
		int found = 0;
		for (size_t d = 1; !found && (d <= w->n_before || d <= w->n_after); d++)
			found = (d <= w->n_before && ref_ratio(w, -(long)d, e, &ratio)) ||
				(d <= w->n_after && ref_ratio(w, (long)d, e, &ratio));
		out[e] = found ? ratio.count * total / ratio.in : estimate_unseen(&x);
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
    .interval = &interval_cal_ref_rate,
};

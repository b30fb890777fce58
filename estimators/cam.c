/* SPDX-License-Identifier: BSD-3-Clause */
/* cam: NeoMPX's continuous exponential between successive observations, est = a G (r-1)/ln r. */
#include <math.h>

#include "estimator-impl.h"

/*
 * The count rate grows (or decays) by r = b/a over the G slices from this
 * observation to the next; its integral over those slices is a G (r-1)/ln r.
 * The cases where that is undefined or absurd are settled in
 * doc/estimators.md: G = 1 and a = b give G a; a = 0 gives 0, as in NeoMPX;
 * b = 0 is taken as b = 1, the smallest count that keeps r finite (NeoMPX's
 * DCAM does the same); and the estimate never falls below a, which the
 * observed slice alone counted.
 */
double estimate_cam(double g, double a, double b)
{
	double r, lr, est;

	if (g <= 1.0 || a == b)
		return g * a;
	if (a == 0.0)
		return 0.0;
	if (b == 0.0)
		b = 1.0;
	r = b / a;
	lr = log(r);
	if (fabs(lr) < 1e-12)
		return g * a;
	est = a * g * (r - 1.0) / lr;
	return est < a ? a : est;
}

/*
 * Under any schedule, where its formula applies (the window counted the
 * event): the rate grows geometrically from the observed rate r to the next
 * observed rn over the window's time T, never below what was counted; a
 * window that counted it not at all interpolates linearly.
 */
double estimate_cam_rates(const event_rates *x)
{
	double v;

	if (!(x->k.t > 0))
		return estimate_unseen(x);
	/* The last observation has no next one: ratio 1, which is fixed's. */
	v = estimate_cam(x->k.T, x->r, x->dn ? x->rn : x->r);
	return v < x->k.c ? x->k.c : v;
}

static void cam_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		event_rates x = window_rates(w, e);
		out[e] = estimate_cam_rates(&x);
	}
}

const estimator_ops estimator_cam = {
    .info =
	{
	    .name = "cam",
	    .summary = "continuous exponential towards the next observation (NeoMPX CAM)",
	    .lookback = 0,
	    .lookahead = 1,
	},
    .estimate = cam_estimate,
    .interval = &interval_cal_cam,
};

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

static void cam_estimate(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	double g = (double)w->layout->n_groups;
	(void)est;
	for (size_t e = 0; e < w->layout->n_events; e++) {
		double a = (double)window_obs(w, 0, e);
		/* The last rotation has no next observation: r = 1, which is fixed's G a. */
		double b = w->n_after ? (double)window_obs(w, 1, e) : a;
		out[e] = estimate_cam(g, a, b);
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
};

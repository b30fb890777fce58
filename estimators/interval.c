/* SPDX-License-Identifier: BSD-3-Clause */
/* Intervals of every estimator: the sampling spread of a window's uncounted slices, the run
 * total's, and the calibration learned on training traces (doc/estimators.md, "Intervals"). */
#include <math.h>

#include "estimator-impl.h"

const double interval_levels[INTERVAL_LEVELS] = {0.50, 0.55, 0.60, 0.65, 0.70, 0.75,
						 0.80, 0.85, 0.90, 0.95, 0.975, 0.99};

/*
 * Each new difference between successive counted slices weighs 1 and the
 * older ones 0.9 times less per difference: about the last 20 count, so a
 * phase's spread follows the program, and a start-up burst is forgotten
 * within a few dozen slices.  Chosen on the training and validation
 * programs (doc/estimators.md).
 */
#define SPREAD_DECAY 0.9
/*
 * A slice where another event counted at least 30 times its typical rate
 * is a burst (the start-up term).  Chosen on the validation programs.
 */
#define BURST_RATIO 30.0

/* ---- quantiles ------------------------------------------------------------------------ */

/* The standard normal quantile (P. J. Acklam's rational approximation, relative error 1e-9). */
static double normal_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00,  2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	double q, r;

	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	if (p > 1 - 0.02425)
		return -normal_quantile(1 - p);
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/*
 * Student's t quantile at p > 0.5 with nu >= 1 degrees of freedom: exact
 * for nu = 1 and 2, the Cornish-Fisher expansion from nu = 3 on (within
 * 0.2 % at the levels tabulated), and between 2 and 3 linear in 1 / nu.
 */
static double t_exact(double p, double nu)
{
	if (nu < 1.5)
		return tan(3.14159265358979323846 * (p - 0.5));
	return (2 * p - 1) / sqrt(2 * p * (1 - p));
}

static double t_expansion(double p, double nu)
{
	double z = normal_quantile(p), z2 = z * z;
	double g1 = (z2 + 1) * z / 4, g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;

	return z + g1 / nu + g2 / (nu * nu) + g3 / (nu * nu * nu);
}

static double t_quantile(double p, double nu)
{
	if (!(nu < 1e6))
		return normal_quantile(p);
	if (nu <= 1)
		return t_exact(p, 1);
	if (nu <= 2) {
		double x = (1 / nu - 0.5) / 0.5; /* 1 at nu = 1, 0 at nu = 2 */
		return x * t_exact(p, 1) + (1 - x) * t_exact(p, 2);
	}
	if (nu < 3) {
		double x = (1 / nu - 1.0 / 3) / (0.5 - 1.0 / 3); /* 1 at nu = 2, 0 at nu = 3 */
		return x * t_exact(p, 2) + (1 - x) * t_expansion(p, 3);
	}
	return t_expansion(p, nu);
}

double mpxkit_interval_quantile(double level, double dof)
{
	if (!(level > 0 && level < 1) || !(dof >= 1))
		return NAN;
	return t_quantile((1 + level) / 2, dof);
}

/* An estimator's factor at level: the table's, interpolated; 1 for the model alone. */
static double calibration(const mpxkit_estimator *est, const double *row)
{
	double L = est->level;

	if (est->interval_model)
		return 1.0;
	if (L <= interval_levels[0])
		return row[0];
	for (size_t i = 1; i < INTERVAL_LEVELS; i++)
		if (L <= interval_levels[i]) {
			double x = (L - interval_levels[i - 1]) /
				   (interval_levels[i] - interval_levels[i - 1]);
			return row[i - 1] + x * (row[i] - row[i - 1]);
		}
	return row[INTERVAL_LEVELS - 1];
}

static int layout_kind(const mpxkit_layout *l)
{
	return l->slice ? INTERVAL_FIXED_SLICES : INTERVAL_SCHEDULED;
}

/*
 * An event's count regime, from its count over all its counted time so
 * far: the same state the spread is taken from, so a window, or a total,
 * is calibrated as the run has shown the event until then.
 */
static int interval_regime(const spread_state *st)
{
	return st->all_t > 0 && st->all_c / st->all_t >= INTERVAL_DENSE_RATE ? INTERVAL_DENSE
									    : INTERVAL_SPARSE;
}

/* The interval flags of an event's regime: MPXKIT_INTERVAL_SPARSE says the run shows it sparse. */
static unsigned regime_flags(const spread_state *st)
{
	return interval_regime(st) == INTERVAL_SPARSE ? MPXKIT_INTERVAL_SPARSE : 0;
}

/* ---- the spread state ------------------------------------------------------------------ */

void spread_init(spread_state *st, size_t n_events)
{
	for (size_t e = 0; e < n_events; e++)
		st[e] = (spread_state){0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
}

/*
 * Successive counted slices of one event, in time order, each as a rate
 * per nominal slice: half their squared difference is an unbiased estimate
 * of the variance of a slice's rate about a level that drifts slowly (the
 * mean squared successive difference, von Neumann), whatever the lag
 * between them.
 */
void spread_fold(const mpxkit_layout *l, const mpxkit_rotation *r, size_t k,
		 const spread_state *before, spread_state *after)
{
	for (size_t e = 0; e < l->n_events; e++) {
		spread_state x = before[e];
		for (size_t j = 0; j < l->n_groups; j++) {
			uint64_t v = rot_val(l, r, j, e);
			double len = rot_len(r, j), rate;
			if (v == MPXKIT_NOT_COUNTED || !(len > 0))
				continue;
			rate = (double)v / len;
			if (x.has_prev) {
				double d = rate - x.prev;
				x.s = SPREAD_DECAY * x.s + d * d / 2;
				x.w = SPREAD_DECAY * x.w + 1;
				x.w2 = SPREAD_DECAY * SPREAD_DECAY * x.w2 + 1;
				x.n++;
			}
			x.prev = rate;
			x.has_prev = 1;
			x.all_c += (double)v;
			x.all_t += len;
			if (k > 0) {
				x.sum_c += (double)v;
				x.sum_t += len;
			}
		}
		after[e] = x;
	}
}

/*
 * The variance of a slice's rate, and the degrees of freedom of that
 * estimate.  Where every counted slice so far saw the same rate (a sparse
 * event that saw none, most often) the differences say 0, yet counts
 * arrive one by one and the slices not counted may have seen some: the
 * variance is then the Poisson one, the rate's posterior mean under a flat
 * prior, (c + 1) / t over all the counted time.  Only there: as a floor
 * under every estimate it would widen the intervals of series that do meet
 * the model (ctests/test_intervals' coverage of Poisson slices, 0.95 at 0.9).
 */
static int spread_variance(const spread_state *st, double *var, double *dof)
{
	if (!(st->w > 0) || !(st->all_t > 0))
		return 0;
	*var = st->s > 0 ? st->s / st->w : (st->all_c + 1) / st->all_t;
	/*
	 * The decayed sum counts w^2 / w2 differences; successive differences
	 * share a slice, so their mean square is worth 2/3 as many independent
	 * squares (von Neumann's efficiency of the successive differences).
	 */
	*dof = st->w * st->w / st->w2 * 2 / 3;
	if (*dof < 1)
		*dof = 1;
	return 1;
}

/* ---- a window ------------------------------------------------------------------------- */

/*
 * Window k counted event e for t of its T nominal slices and saw c.  The
 * estimators fill the T - t others from the rates they saw; a sampling
 * estimate of the window's total from t slices of T, with slice rates of
 * variance s2 about the window's level, errs by a variance of
 * T (T - t) s2 / t (the finite-population correction: 0 when t = T).  A
 * window that counted e not at all takes its rate from the nearest one
 * that did: T (T + 1) s2, as one slice's rate held over T others.
 */
void interval_window(const mpxkit_estimator *est, const mpxkit_window *w, const spread_state *st,
		     const double *estimate, mpxkit_interval *iv, interval_part *part)
{
	const mpxkit_layout *l = w->layout;
	double p = (1 + est->level) / 2;

	for (size_t e = 0; e < l->n_events; e++) {
		event_rates x = window_rates(w, e);
		double c = x.k.c, T = x.k.T, t = x.k.t, f, var, dof, spread, h;
		const double *row;
		mpxkit_interval *out = &iv[e];

		if (t >= T) {
			f = 0;
		} else if (t > 0) {
			f = T * (T - t) / t;
		} else if (x.dp || x.dn) {
			f = T * (T + 1);
		} else {
			*out = (mpxkit_interval){0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_UNOBSERVED};
			if (part)
				part[e] = (interval_part){0, INFINITY};
			continue;
		}
		if (part)
			part[e] = (interval_part){c, f};
		if (f == 0) {
			/* Counted all the time: its count is the truth. */
			*out = (mpxkit_interval){c, c, 0, 0, 0};
			continue;
		}
		if (!spread_variance(&st[e], &var, &dof)) {
			*out = (mpxkit_interval){c, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_OPEN};
			continue;
		}
		spread = sqrt(f * var);
		row = est->ops->interval->window[layout_kind(l)][interval_regime(&st[e])];
		h = calibration(est, row) * t_quantile(p, dof) * spread;
		out->lo = estimate[e] - h > c ? estimate[e] - h : c;
		out->hi = estimate[e] + h > out->lo ? estimate[e] + h : out->lo;
		out->spread = spread;
		out->dof = dof;
		out->flags = regime_flags(&st[e]);
	}
}

/* ---- the run total --------------------------------------------------------------------- */

void interval_acc_init(interval_acc *acc, size_t n_events)
{
	for (size_t e = 0; e < n_events; e++)
		acc[e] = (interval_acc){0, 0, 0, 0, 0, 0};
}

/*
 * The windows' errors add up; taken as independent, their variances do.
 * A window whose spread was not known yet (the run's first counted slice)
 * takes the spread of the first window after it that has one.
 */
void interval_acc_add(interval_acc *acc, size_t n_events, const double *estimate,
		      const interval_part *part, const spread_state *st)
{
	for (size_t e = 0; e < n_events; e++) {
		interval_acc *a = &acc[e];
		double var, dof;

		a->windows++;
		a->est += estimate[e];
		if (isinf(part[e].factor)) {
			a->unobserved++;
			continue;
		}
		a->seen += part[e].seen;
		if (part[e].factor == 0)
			continue;
		if (spread_variance(&st[e], &var, &dof)) {
			a->var += (a->pend + part[e].factor) * var;
			a->pend = 0;
		} else {
			a->pend += part[e].factor;
		}
	}
}

/* Event e's typical rate per nominal slice after the first window, or -1 where none is known. */
static double typical_rate(const spread_state *st)
{
	return st->sum_t > 0 ? st->sum_c / st->sum_t : -1;
}

/*
 * The start-up term of event e: what the first window's slices that did
 * not count it may have hidden.  The spread of the rest of the run says
 * nothing of a program's start-up, where the misses of a run concentrate
 * (doc/evaluation.md): in a slice where another event counted at least
 * BURST_RATIO times its typical rate, e may have burst by as much, up to
 * what that event counted itself.
 */
static double startup_term(const mpxkit_layout *l, const mpxkit_rotation *first,
			   const spread_state *st, size_t e)
{
	double mu_e = typical_rate(&st[e]), hidden = 0;

	if (mu_e < 0)
		mu_e = 0;
	for (size_t j = 0; j < l->n_groups; j++) {
		double len = rot_len(first, j), most = 0;
		if (!(len > 0) || rot_val(l, first, j, e) != MPXKIT_NOT_COUNTED)
			continue;
		for (size_t f = 0; f < l->n_events; f++) {
			uint64_t v = rot_val(l, first, j, f);
			double mu = typical_rate(&st[f]), rate, ratio, m;
			if (f == e || v == MPXKIT_NOT_COUNTED || mu < 0)
				continue;
			rate = (double)v / len;
			ratio = (rate + 1) / (mu + 1);
			if (ratio < BURST_RATIO)
				continue;
			m = (mu_e + 1) * ratio < rate ? (mu_e + 1) * ratio : rate;
			most = m > most ? m : most;
		}
		hidden += most * len;
	}
	return hidden;
}

void interval_total(const mpxkit_estimator *est, const interval_acc *acc,
		    const spread_state *st, const mpxkit_rotation *first, mpxkit_interval *iv)
{
	const mpxkit_layout *l = &est->layout;
	double p = (1 + est->level) / 2;

	for (size_t e = 0; e < l->n_events; e++) {
		const interval_acc *a = &acc[e];
		const double *row;
		double var = a->var, v, dof, spread, h;

		if (a->windows == 0 || a->unobserved == a->windows) {
			iv[e] = (mpxkit_interval){0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_UNOBSERVED};
			continue;
		}
		if (a->unobserved > 0) {
			iv[e] = (mpxkit_interval){a->seen, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_OPEN};
			continue;
		}
		if (a->pend > 0) {
			if (!spread_variance(&st[e], &v, &dof)) {
				iv[e] = (mpxkit_interval){a->seen, INFINITY, INFINITY, 0,
							  MPXKIT_INTERVAL_OPEN};
				continue;
			}
			var += a->pend * v;
		}
		if (first) {
			double s = startup_term(l, first, st, e);
			var += s * s;
		}
		spread = sqrt(var);
		/*
		 * The windows' variances share the run's differences: the total's
		 * variance is estimated from as many as were folded, each worth
		 * 2/3 of an independent one, as in a window's.
		 */
		dof = st[e].n * 2 / 3 > 1 ? st[e].n * 2 / 3 : 1;
		row = est->ops->interval->total[layout_kind(l)][interval_regime(&st[e])];
		h = calibration(est, row) * t_quantile(p, dof) * spread;
		iv[e].lo = a->est - h > a->seen ? a->est - h : a->seen;
		iv[e].hi = a->est + h > iv[e].lo ? a->est + h : iv[e].lo;
		iv[e].spread = spread;
		iv[e].dof = dof;
		iv[e].flags = regime_flags(&st[e]);
	}
}

/* ---- between two reads ----------------------------------------------------------------- */

/* The part of half-width later beyond earlier, in quadrature; rel x d where that is 0. */
static double half_between(double earlier, double later, double rel, double d)
{
	double v = later * later - earlier * earlier;

	if (v > 0)
		return sqrt(v);
	return later > 0 && d > 0 ? rel * d : 0.0;
}

/*
 * The upper Poisson bound, at (1 + level) / 2, of the counts in the time
 * not counted, from a rate that the counted share saw as none.
 */
static double unseen_floor(double counted, double level)
{
	return -log((1 - level) / 2) * (1 - counted) / counted;
}

void mpxkit_interval_between(const mpxkit_interval *earlier, double est_earlier,
			     const mpxkit_interval *later, double est_later, double counted,
			     double level, mpxkit_interval *out)
{
	double d = est_later - est_earlier, above_l, below_l, above, below, var;
	mpxkit_interval exact_before = {est_earlier, est_earlier, 0, INFINITY, 0};

	if (later->flags & MPXKIT_INTERVAL_UNOBSERVED) {
		*out = (mpxkit_interval){0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_UNOBSERVED};
		return;
	}
	if (!isfinite(later->hi) || !(counted > 0)) {
		double lo = isfinite(earlier->hi) ? later->lo - earlier->hi : 0.0;
		*out = (mpxkit_interval){lo > 0 ? lo : 0.0, INFINITY, INFINITY, 0,
					 MPXKIT_INTERVAL_OPEN};
		return;
	}
	/* Nothing counted before: the later total is all of it. */
	if (earlier->flags & MPXKIT_INTERVAL_UNOBSERVED)
		earlier = &exact_before;
	above_l = fmax(later->hi - est_later, 0.0);
	below_l = fmax(est_later - later->lo, 0.0);
	above = half_between(fmax(earlier->hi - est_earlier, 0.0), above_l,
			     est_later > 0 ? above_l / est_later : 0.0, d);
	below = half_between(fmax(est_earlier - earlier->lo, 0.0), below_l,
			     est_later > 0 ? below_l / est_later : 0.0, d);
	if (counted < 1 - 1e-9) /* a share of all the time, up to its rounding */
		above = fmax(above, unseen_floor(counted, level));
	var = later->spread * later->spread - earlier->spread * earlier->spread;
	out->lo = d - below > 0 ? d - below : 0.0;
	out->hi = d + above > out->lo ? d + above : out->lo;
	out->spread = isfinite(var) && var > 0 ? sqrt(var) : 0.0;
	out->dof = later->dof;
	out->flags = later->flags & MPXKIT_INTERVAL_SPARSE;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* What an estimator implements, and the registry's list of them; private to the library. */
#ifndef MPXKIT_ESTIMATOR_IMPL_H
#define MPXKIT_ESTIMATOR_IMPL_H

#include "mpxkit/estimator.h"

/*
 * The levels at which an estimator's interval calibration is tabulated
 * (doc/estimators.md, "Intervals"): 0.50, 0.55, ..., 0.95, 0.975, 0.99;
 * between them the factors are interpolated linearly.
 */
#define INTERVAL_LEVELS 12
extern const double interval_levels[INTERVAL_LEVELS];

/* Layouts the calibration tells apart: each event's one slice fixed, or told window by window. */
enum { INTERVAL_FIXED_SLICES, INTERVAL_SCHEDULED, INTERVAL_KINDS };

/*
 * Count regimes the calibration tells apart, from what the run has shown
 * of the event (estimators/interval.c): sparse, under INTERVAL_DENSE_RATE
 * counts per nominal slice, where most slices see few or none and the
 * truth is often what the counted slices saw; or dense.  Under fixed
 * slices the totals' two rows are one pooled factor (doc/estimators.md,
 * "Count regimes").
 */
enum { INTERVAL_SPARSE, INTERVAL_DENSE, INTERVAL_REGIMES };
#define INTERVAL_DENSE_RATE 10.0

/*
 * What an estimator's intervals are beyond the sampling model: at each
 * level, the factor by which the model's half-width must grow for the
 * share of training windows (window) and run totals (total) it holds to
 * be the level, per layout kind and count regime.
 * Written by `mpxkit train --model interval` (estimators/interval_table.c).
 */
typedef struct interval_calibration {
	double window[INTERVAL_KINDS][INTERVAL_REGIMES][INTERVAL_LEVELS];
	double total[INTERVAL_KINDS][INTERVAL_REGIMES][INTERVAL_LEVELS];
} interval_calibration;

/*
 * One event's spread state after a window (estimators/interval.c): the
 * rate of its last counted slice, the decayed sums of half the squared
 * differences between successive counted slices' rates, its count and
 * counted time after the run's first window (its typical rate), and over
 * the whole run so far (its Poisson floor).
 */
typedef struct spread_state {
	double prev;
	double s, w, w2; /* sum of decayed d^2 / 2, of the weights, of their squares */
	double n;	 /* differences folded, undecayed */
	double sum_c, sum_t;
	double all_c, all_t;
	int has_prev;
} spread_state;

/* One event's run total as the windows come: all a total's interval needs. */
typedef struct interval_acc {
	double est, seen; /* the estimates' sum; what the counted slices saw */
	double var;	  /* the spreads' squares */
	double pend;	  /* sampling factors of windows whose spread was not known yet */
	size_t windows, unobserved;
} interval_acc;

/*
 * One estimator.  estimate() sees a window around rotation k (see
 * mpxkit_window) and writes the layout's n_events estimates of rotation k.  It
 * is the only place where an estimator's formula lives: the online and the
 * offline paths differ only in how they build the window, so they agree by
 * construction.  init (optional) may load a model into est->state and widen
 * est->info.lookback/lookahead; fini (optional) releases what init took.
 */
typedef struct estimator_ops {
	mpxkit_estimator_info info;
	int (*init)(mpxkit_estimator *est, const mpxkit_estimator_options *opts, mpxkit_diag *diag);
	void (*fini)(mpxkit_estimator *est);
	void (*estimate)(const mpxkit_estimator *est, const mpxkit_window *w, double *out);
	/*
	 * Optional: the whole run in one pass, for an estimator whose windows
	 * are a bound the online path needs rather than its formula (bigru: one
	 * GRU over each event's whole series).  The contract of
	 * mpxkit_estimator_run_whole; NULL means mpxkit_estimator_run is the
	 * whole-run estimate.
	 */
	int (*whole_run)(const mpxkit_estimator *est, const mpxkit_series *run, double *out,
			 mpxkit_diag *diag);
	/*
	 * Required: the estimator's interval calibration.  The registry lists
	 * no estimator without one (estimators/registry.c), so every estimate
	 * comes with its interval.
	 */
	const interval_calibration *interval;
} estimator_ops;

struct mpxkit_estimator {
	const estimator_ops *ops;
	mpxkit_estimator_info info; /* the registry's, as init may have widened it */
	mpxkit_layout layout;	    /* layout.slice points at slice below */
	size_t *slice;
	void *state; /* the estimator's own, from init */
	/*
	 * The look-ahead estimate() reads: info.lookahead as init left it.  A
	 * learned estimator's info.lookahead may be wider (the short-run rule
	 * of estimator.h); the core then trims each window back to this.
	 */
	unsigned own_lookahead;

	/* Online state: a ring of the last lookback + lookahead + 1 rotations. */
	size_t ring_len;
	uint64_t *ring_obs;	 /* ring_len rows of n_events */
	uint64_t *ring_ref;	 /* ring_len rows of n_groups, or NULL */
	uint64_t *ring_val;	 /* ring_len rows of n_groups x n_events: what each slice counted */
	double *ring_len_ns;	 /* ring_len rows of n_groups: slice lengths */
	unsigned char *ring_has; /* ring_len: the window came with val (else layout.slice) */
	mpxkit_rotation *window; /* ring_len entries, rebuilt for each estimate */
	double *scratch;	 /* n_events estimates, for peek */
	size_t *first_nonzero;	 /* n_events: the first rotation pushed with obs > 0, or SIZE_MAX */
	size_t pushed;		 /* rotations pushed since the last reset */
	size_t emitted;		 /* rotations estimated since the last reset */

	/* Intervals (estimators/interval.c). */
	double level;		  /* mpxkit_estimator_set_interval's */
	int interval_model;	  /* the sampling model alone */
	spread_state *ring_spread; /* ring_len rows of n_events: the state after each window */
	spread_state *spread;	  /* n_events: after the newest window pushed */
	interval_acc *acc;	  /* n_events: the windows emitted */
	interval_acc *acc_peek;	  /* n_events: scratch for peek */
	mpxkit_interval *iv_scratch; /* n_events, for peek */
	struct interval_part *part;  /* n_events: the window's, for the totals */
	uint64_t *first;	  /* the run's first window: obs, then val (W x n), then ref */
	double *first_len;	  /* its W slice lengths */
	int first_has_val;	  /* it came with val */
};

/* Observation of event e in rotation k + d; d must lie in [-n_before, n_after]. */
static inline uint64_t window_obs(const mpxkit_window *w, long d, size_t e)
{
	return w->rot[(long)w->n_before + d].obs[e];
}

/* Slice j's count of event e in window r: MPXKIT_NOT_COUNTED where it did not count e. */
static inline uint64_t rot_val(const mpxkit_layout *l, const mpxkit_rotation *r, size_t j,
			       size_t e)
{
	if (r->val)
		return r->val[j * l->n_events + e];
	return l->slice[e] == j ? r->obs[e] : MPXKIT_NOT_COUNTED;
}

/* Slice j's length in nominal slices. */
static inline double rot_len(const mpxkit_rotation *r, size_t j)
{
	return r->len ? r->len[j] : 1.0;
}

/* Window r of a series, as mpxkit_rotation: the rows of each array that belong to it. */
mpxkit_rotation series_window(const mpxkit_layout *l, const mpxkit_series *run, size_t r);

/*
 * What window k + d saw of event e (doc/estimators.md, "Under any
 * schedule"): its count c over the slices that counted it, their time t and
 * the window's time T, in nominal slices.  Round-robin gives c = obs, t = 1
 * and T = G, so the formulas below reduce to v1's bit for bit.
 */
typedef struct event_seen {
	double c, t, T;
} event_seen;

event_seen window_seen(const mpxkit_window *w, long d, size_t e);

/*
 * Event e's rates in window k and its nearest observed neighbours, within
 * the window's look-back and look-ahead: r (c / t, valid when t > 0), the
 * previous observed window's rate rp at distance dp (0: none) and the
 * next one's rn at distance dn (0: none).
 */
typedef struct event_rates {
	event_seen k;
	double r, rp, rn;
	size_t dp, dn;
} event_rates;

event_rates window_rates(const mpxkit_window *w, size_t e);

/*
 * Window k's estimate when it counted e not at all: the rate interpolated
 * linearly between the nearest observed windows (held past the last, or
 * before the first), times the window's time; 0 with no observation in
 * reach.
 */
double estimate_unseen(const event_rates *x);

/* The estimators' formulas on one event's rates, for reuse (a learned model's features). */
double estimate_fixed_rates(const event_rates *x);
double estimate_dira_rates(const event_rates *x);
double estimate_tam_rates(const event_rates *x);
double estimate_cam_rates(const event_rates *x);

/* ---- intervals (estimators/interval.c) ---- */

/* The state before any window; the state after window r folded onto before (the window's slices). */
void spread_init(spread_state *st, size_t n_events);
void spread_fold(const mpxkit_layout *l, const mpxkit_rotation *r, size_t k,
		 const spread_state *before, spread_state *after);

/*
 * The interval of window w's estimates est (n_events) into iv, with st the
 * spread state after window k + min(1, n_after).  The calibration is the
 * estimator's; with interval_model, the model's alone.
 */
typedef struct interval_part {
	double seen;   /* c: what the counted slices saw */
	double factor; /* the sampling factor: spread^2 = factor x variance; INFINITY: unobserved */
} interval_part;

void interval_window(const mpxkit_estimator *est, const mpxkit_window *w, const spread_state *st,
		     const double *estimate, mpxkit_interval *iv, interval_part *part);

/* Window k's estimates and parts (interval_window's) into the run totals' accumulator. */
void interval_acc_init(interval_acc *acc, size_t n_events);
void interval_acc_add(interval_acc *acc, size_t n_events, const double *estimate,
		      const interval_part *part, const spread_state *st);

/*
 * The totals' intervals from the accumulator, st the newest spread state
 * and first the run's first window (NULL before one): the sampling
 * spreads, plus the start-up term (doc/estimators.md, "Intervals").
 */
void interval_total(const mpxkit_estimator *est, const interval_acc *acc,
		    const spread_state *st, const mpxkit_rotation *first, mpxkit_interval *iv);

/* The interval calibrations, one per estimator (estimators/interval_table.c). */
extern const interval_calibration interval_cal_fixed, interval_cal_linear_dira,
    interval_cal_linear_tam, interval_cal_cam, interval_cal_dcam, interval_cal_ref_rate,
    interval_cal_mlp, interval_cal_bigru, interval_cal_bigru_full;

/* The registry (estimators/registry.c) and the estimators it lists, one file each. */
extern const estimator_ops estimator_fixed;
extern const estimator_ops estimator_linear_dira;
extern const estimator_ops estimator_linear_tam;
extern const estimator_ops estimator_cam;
extern const estimator_ops estimator_dcam;
extern const estimator_ops estimator_ref_rate;
extern const estimator_ops estimator_mlp;
extern const estimator_ops estimator_bigru;
extern const estimator_ops estimator_bigru_full;

/* Estimates of one event by the interpolating formulas, for reuse (a learned model's features). */
double estimate_fixed(double g, double a);
double estimate_dira(double g, double a, double b);
double estimate_tam(double g, double prev, double a);
double estimate_cam(double g, double a, double b);
double estimate_dcam(double g, double a, double b);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Multiplexing estimators: from what each slice saw, estimate what each event counted
 * (doc/estimators.md). */
#ifndef MPXKIT_ESTIMATOR_H
#define MPXKIT_ESTIMATOR_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What an estimator is built for (doc/evaluation.md, protocol v2).  Time is
 * cut into slices, and the slices into windows of n_groups slices each
 * (W; G under round-robin, where a window is a rotation, hence the name).
 * An estimator estimates each event's total over each window.
 *
 * Which slices counted which events is either fixed, as under round-robin
 * (v1): slice[e] is event e's group and the offset of its one counted slice
 * in every window; or told window by window (mpxkit_rotation.val), as any
 * schedule (mpxkit/schedule.h) needs: slice is then NULL.  gap bounds the
 * windows in a row that may count an event not at all (0 when every window
 * counts every event, as round-robin with W = G does); estimators widen
 * their look-back and look-ahead by it to find the nearest observation.
 * With a reference, one more event is counted in every slice (as Intel's
 * fixed counters count instructions and cycles); it is not among the
 * n_events.
 */
typedef struct mpxkit_layout {
	size_t n_events;     /* multiplexed events */
	size_t n_groups;     /* W: slices per window, >= 1 (G: slices per rotation) */
	const size_t *slice; /* n_events offsets in [0, W); NULL: each window says (val) */
	int has_reference;
	size_t gap; /* most windows in a row that may not count an event */
} mpxkit_layout;

/* In mpxkit_rotation.val: the slice did not count the event. */
#define MPXKIT_NOT_COUNTED UINT64_MAX

/*
 * What one window brought: what the estimators see, and all they see.  With
 * a layout's fixed slices, obs and ref are enough (val and len NULL).
 */
typedef struct mpxkit_rotation {
	const uint64_t *obs; /* n_events: each event's count over the slices that counted it */
	const uint64_t *ref; /* n_groups: the reference's count in each slice; NULL without one */
	/*
	 * n_groups rows of n_events: slice j's count of event e, or
	 * MPXKIT_NOT_COUNTED; NULL: the layout's slice[] (one slice per event).
	 */
	const uint64_t *val;
	const double *len; /* n_groups slice lengths in nominal slices; NULL: all 1 */
} mpxkit_rotation;

/* A whole run of windows, offline, as the simulator or the engine kept it. */
typedef struct mpxkit_series {
	size_t n_windows;
	const uint64_t *obs; /* n_windows rows of n_events */
	const uint64_t *ref; /* n_windows rows of n_groups; NULL without a reference */
	const uint64_t *val; /* n_windows rows of n_groups x n_events; NULL: layout.slice */
	const double *len;   /* n_windows rows of n_groups; NULL: all 1 */
} mpxkit_series;

/*
 * The neighbourhood of rotation k that an estimator may look at: up to its
 * look-back before and its look-ahead after.  n_before is min(k, look-back);
 * n_after is the look-ahead except near the end of a run, where it is what is
 * left (0 for the last rotation).  rot[n_before + d] is rotation k + d.
 */
typedef struct mpxkit_window {
	const mpxkit_layout *layout;
	size_t k;
	size_t n_before;
	size_t n_after;
	const mpxkit_rotation *rot;
} mpxkit_window;

/* An estimator needs a reference event (mpxkit_layout.has_reference). */
#define MPXKIT_ESTIMATOR_NEEDS_REFERENCE 0x1u

/*
 * A learned estimator (mlp, bigru, bigru-full): its model has only seen runs
 * of many rotations that start with a program, so the library holds it to
 * two rules (doc/estimators.md, "Short runs and flat windows"), on every
 * path, online, offline and whole-run alike:
 * - a run of fewer than MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS rotations is
 *   estimated as fixed estimates it (G a);
 * - so is a rotation whose window (its look-back and look-ahead) shows no
 *   change at all: every event, and the reference, counted the same in
 *   every rotation of it.  A constant run is thus exact, an all-zero run 0.
 * - an event that has counted nothing in the run, from its first rotation to
 *   the last of rotation k's window, is estimated 0 in rotation k, as fixed
 *   estimates it: no estimator reports a count that no slice saw.
 * To tell a short run from the start of a long one before it estimates
 * rotation 0, such an estimator's look-ahead is at least
 * MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS - 1.
 */
#define MPXKIT_ESTIMATOR_LEARNED	       0x2u
#define MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS 11

/* What the registry says about an estimator before one is built. */
typedef struct mpxkit_estimator_info {
	const char *name;    /* canonical name, e.g. "linear-dira" */
	const char *summary; /* one line */
	unsigned lookback;   /* rotations before k it reads */
	unsigned lookahead;  /* rotations after k it needs before it can estimate k */
	unsigned flags;	     /* MPXKIT_ESTIMATOR_* */
} mpxkit_estimator_info;

/* Estimators in the registry, in the order tools list them. */
size_t mpxkit_estimator_count(void);

/* The i-th estimator of the registry, or NULL past the end. */
const mpxkit_estimator_info *mpxkit_estimator_info_at(size_t i);

/*
 * Looks a name up, aliases included ("linear" is "linear-dira", "nonlinear"
 * is "cam").  0 and *out set, or -MPXKIT_ENOENT.
 */
int mpxkit_estimator_lookup(const char *name, const mpxkit_estimator_info **out);

/* The level of the intervals when none is set: 90 %. */
#define MPXKIT_INTERVAL_LEVEL 0.9
/* The highest level an interval may be asked at: calibration stops there. */
#define MPXKIT_INTERVAL_LEVEL_MAX 0.99

/* Settings an estimator may need beyond the layout; zero-initialise, then set what you use. */
typedef struct mpxkit_estimator_options {
	const char *model; /* model file of a learned estimator; NULL: its default */
} mpxkit_estimator_options;

/*
 * An estimate's interval (doc/estimators.md, "Intervals"): the truth lies
 * in [lo, hi] with the estimator's level as probability, as measured on
 * held-out traces.  Counts are never negative and the slices that counted
 * an event saw part of its truth, so lo is at least what they counted.
 * An event counted all the time has lo = hi = its count.  hi is INFINITY
 * where nothing bounds the estimate; flags say why.
 */
typedef struct mpxkit_interval {
	double lo, hi;
	/*
	 * What the bounds are made of, for callers that combine or calibrate
	 * them: the estimate's spread in counts (0: exact; INFINITY: unknown)
	 * and the degrees of freedom of its estimated variance.
	 */
	double spread, dof;
	unsigned flags; /* MPXKIT_INTERVAL_* */
} mpxkit_interval;

/*
 * No slice within the estimator's reach counted the event: the estimate is
 * no measurement (0 for a total of such windows only), lo is 0 and hi
 * INFINITY.  A caller shows "not counted", never the estimate.
 */
#define MPXKIT_INTERVAL_UNOBSERVED 0x1u
/*
 * Counted, but the run has not shown the event's spread yet (one counted
 * slice so far): hi is INFINITY until a later window shows it.
 */
#define MPXKIT_INTERVAL_OPEN 0x2u
/*
 * A bounded interval of a sparse event: the run had shown it under 10
 * counts per nominal slice, so its half-width is calibrated as sparse
 * events' are (a window's; a total's under a schedule: doc/estimators.md,
 * "Count regimes").  Information only.
 */
#define MPXKIT_INTERVAL_SPARSE 0x4u

typedef struct mpxkit_estimator mpxkit_estimator;

/*
 * Builds an estimator for one run.  layout is copied.  Fails with
 * -MPXKIT_ENOENT for an unknown name and -MPXKIT_EINVAL when the layout lacks
 * what the estimator needs (a reference).  opts may be NULL.  Its intervals
 * are at MPXKIT_INTERVAL_LEVEL until mpxkit_estimator_set_interval says
 * otherwise.
 */
int mpxkit_estimator_new(mpxkit_estimator **out, const char *name, const mpxkit_layout *layout,
			 const mpxkit_estimator_options *opts, mpxkit_diag *diag);

/* free(NULL) semantics. */
void mpxkit_estimator_free(mpxkit_estimator *est);

/*
 * The level of every interval est gives from now on, in
 * (0, MPXKIT_INTERVAL_LEVEL_MAX] (0: MPXKIT_INTERVAL_LEVEL), and with
 * model_only nonzero the sampling model's intervals alone, without the
 * factors each estimator's calibration learned on training traces (what
 * the calibration starts from, and what the tests check against series of
 * known randomness).  Estimates and state do not change.  0, or
 * -MPXKIT_EINVAL for another level.
 */
int mpxkit_estimator_set_interval(mpxkit_estimator *est, double level, int model_only);

/*
 * The sampling model's half-width at level in units of a spread whose
 * variance was estimated with dof degrees of freedom: Student's t quantile
 * at (1 + level) / 2, the normal one for dof = INFINITY (doc/estimators.md,
 * "Intervals").  NaN outside 0 < level < 1 or for dof < 1.
 */
double mpxkit_interval_quantile(double level, double dof);

/*
 * The interval of what a run counted between two reads of its totals
 * (PAPI_read twice, a row of `mpxkit stat -I`): earlier and later are the
 * totals' intervals at level, around estimates est_earlier and est_later,
 * and counted the share of the time between the reads that the event was
 * counted (doc/estimators.md, "Between two reads").  out is centred on the
 * difference d.  The total's parts are independent windows, so the later
 * half-widths are the earlier ones and the difference's in quadrature:
 * sqrt(later^2 - earlier^2), above and below d; where that is 0 while the
 * later total has width (its spread was re-estimated smaller), d takes the
 * later total's relative half-widths.  Above, at least the Poisson bound of
 * the time not counted, whatever the spread said: -ln((1 - level) / 2) x
 * (1 - counted) / counted counts, 3 (1 - counted) / counted at 0.9, so a
 * row that saw nothing is not "exactly 0" unless it was counted all the
 * time.  Both totals exact and counted 1: [d, d].  Later unbounded above,
 * or counted 0: [max(0, later.lo - earlier.hi), INFINITY), open.  Later
 * never counted: never counted.  lo is never below 0, hi never below lo.
 */
void mpxkit_interval_between(const mpxkit_interval *earlier, double est_earlier,
			     const mpxkit_interval *later, double est_later, double counted,
			     double level, mpxkit_interval *out);

/* The canonical name, its registry entry, and the layout it was built for. */
const mpxkit_estimator_info *mpxkit_estimator_info_of(const mpxkit_estimator *est);

/*
 * Online use, one rotation at a time: push rotation after rotation (the data
 * is copied, so the caller may reuse its buffers).  When the estimator has
 * enough look-ahead for the oldest rotation not yet estimated, it writes that
 * rotation's n_events estimates to out and returns 1; otherwise it returns 0.
 * Rotation k is thus estimated at the push of rotation k + lookahead.  At the
 * end of the run, call mpxkit_estimator_flush until it returns 0: each call
 * that returns 1 writes the next rotation's estimates.  The estimates are
 * identical to those of mpxkit_estimator_run over the same rotations.
 * mpxkit_estimator_reset starts a new run.  Memory use is constant:
 * look-back + look-ahead + 1 rotations.
 */
int mpxkit_estimator_push(mpxkit_estimator *est, const mpxkit_rotation *rot, double *out);
int mpxkit_estimator_flush(mpxkit_estimator *est, double *out);
void mpxkit_estimator_reset(mpxkit_estimator *est);

/*
 * For a read in the middle of a run: writes to sum the n_events totals of the
 * rotations pushed but not yet estimated, as mpxkit_estimator_flush would
 * estimate them if the run ended now, and returns how many there are (at
 * most the look-ahead).  The estimator's state does not change, so the
 * running sum of what push returned plus this is the best total so far, in
 * bounded time.
 */
int mpxkit_estimator_peek(mpxkit_estimator *est, double *sum);

/*
 * The same with intervals: iv (NULL: none wanted) receives the n_events
 * intervals of the estimates written to out.  The plain calls are these
 * with iv NULL.  Every path gives the same intervals for the same window:
 * online, offline and, for a learned estimator's rules, the fallback's.
 */
int mpxkit_estimator_push_iv(mpxkit_estimator *est, const mpxkit_rotation *rot, double *out,
			     mpxkit_interval *iv);
int mpxkit_estimator_flush_iv(mpxkit_estimator *est, double *out, mpxkit_interval *iv);

/*
 * The run's totals so far and their intervals, one per event: the windows
 * push and flush have estimated since the last reset (after the last
 * flush: the run's totals).  The run total's interval combines the
 * windows' spreads as they come, in constant memory, so a read costs
 * O(n_events) whatever the length of the run.  sum or iv may be NULL.
 */
int mpxkit_estimator_total(const mpxkit_estimator *est, double *sum, mpxkit_interval *iv);

/*
 * A read in the middle of a run with intervals: sum as mpxkit_estimator_peek
 * writes it (the rotations not yet estimated), and iv the intervals of the
 * best totals so far, the windows estimated plus those, as
 * mpxkit_estimator_total would give them after a flush now.  The state
 * does not change.
 */
int mpxkit_estimator_peek_iv(mpxkit_estimator *est, double *sum, mpxkit_interval *iv);

/*
 * Offline use over a whole run of n_rotations: obs holds n_rotations rows of
 * n_events observations, ref (NULL without a reference) n_rotations rows of
 * n_groups reference counts; out receives n_rotations rows of n_events
 * estimates.  Independent of any online state.
 */
int mpxkit_estimator_run(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			 const uint64_t *ref, double *out);

/* The same over a series, whose val and len may say which slices counted what. */
int mpxkit_estimator_run_series(const mpxkit_estimator *est, const mpxkit_series *run,
				double *out);

/*
 * The same with intervals: iv (NULL: none) receives n_windows rows of
 * n_events intervals, total (NULL: none) the n_events intervals of the run
 * totals, both as the online path gives them.
 */
int mpxkit_estimator_run_series_iv(const mpxkit_estimator *est, const mpxkit_series *run,
				   double *out, mpxkit_interval *iv, mpxkit_interval *total);

/*
 * 1 when the estimator has a whole-run pass: an estimate of each rotation
 * that reads the whole run, where its online path must stop at a window
 * (bigru: its GRU over each event's whole series, as bigru-full computes it
 * for runs of up to 1025 rotations, but in one linear pass for any length).
 * 0 for the others, whose mpxkit_estimator_run already is the whole-run
 * estimate, and for NULL.
 */
int mpxkit_estimator_has_whole_run(const mpxkit_estimator *est);

/*
 * Offline use over a whole run, with the whole-run pass where the estimator
 * has one, else exactly mpxkit_estimator_run; arrays as for
 * mpxkit_estimator_run.  Independent of any online state.  Unlike
 * mpxkit_estimator_run, the pass may allocate memory in proportion to the
 * run (bigru: about 0.3 KB per event and rotation, freed before it
 * returns).  0, or -MPXKIT_EINVAL for a missing array and -MPXKIT_ENOMEM,
 * with one line in diag; out is then undefined.
 */
int mpxkit_estimator_run_whole(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			       const uint64_t *ref, double *out, mpxkit_diag *diag);

/* The same over a series. */
int mpxkit_estimator_run_whole_series(const mpxkit_estimator *est, const mpxkit_series *run,
				      double *out, mpxkit_diag *diag);

/*
 * The same with intervals, as mpxkit_estimator_run_series_iv writes them,
 * around the whole-run estimates.
 */
int mpxkit_estimator_run_whole_series_iv(const mpxkit_estimator *est, const mpxkit_series *run,
					 double *out, mpxkit_interval *iv, mpxkit_interval *total,
					 mpxkit_diag *diag);

/*
 * The run-total anchor (doc/estimators.md, "Real counters"): rescales each
 * event's estimates out (n_windows rows of n_events, est's estimates of run
 * by any of the calls above) so that they sum to fixed's estimate of the
 * same run's total, which under a schedule that counts every step with a
 * known share of the time is unbiased for it; the windows keep their shape.
 * An event whose estimates sum to 0 where fixed's do not takes fixed's
 * windows.  With iv or total (NULL: none), their intervals are computed
 * again around the anchored estimates, as mpxkit_estimator_run_series_iv
 * computes them.  Offline only: the online path emits each window before
 * the run's total is known.  0, -MPXKIT_EINVAL for a missing argument or
 * -MPXKIT_ENOMEM.
 */
int mpxkit_estimator_anchor_series(const mpxkit_estimator *est, const mpxkit_series *run,
				   double *out, mpxkit_interval *iv, mpxkit_interval *total);

/*
 * The anchor's arithmetic on n rows of n_events: each column of out scaled
 * to sum as the same column of fixed does; a column of out that sums to 0
 * (or less) where fixed's does not becomes fixed's.
 */
void mpxkit_anchor_totals(size_t n, size_t n_events, const double *fixed, double *out);

/*
 * The relations the kernel keeps between events (estimators/relations.c:
 * PAGE-FAULTS = MINOR-FAULTS + MAJOR-FAULTS, CONTEXT-SWITCHES =
 * sched:sched_switch, raw_syscalls:sys_enter >= the syscalls:sys_enter_*,
 * PAGE-FAULTS >= exceptions:page_fault_user), applied to a run's estimates
 * out (n_windows rows of n_events, named by names): where an equality's two
 * sides, or a broken inequality's, estimate different totals, both take
 * their mean, each event's windows scaled.  Events outside a relation, and
 * relations with an event missing, are left as they are.
 */
void mpxkit_relations_apply(const char *const *names, size_t n_events, size_t n_windows,
			    double *out);

#ifdef __cplusplus
}
#endif
#endif

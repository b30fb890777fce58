/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiplexing engine: C counters rotated over groups of events, estimated online. */
#ifndef MPXKIT_SCHED_H
#define MPXKIT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/estimator.h"
#include "mpxkit/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A scheduler multiplexes the events of one counter source (mpxkit/source.h)
 * on C counters.  Events form groups in the order they were added, C per
 * group (group g holds events gC .. gC+C-1), as mpxkit_mpx_simulate groups a
 * trace's columns; G groups make a rotation of G slices, and slice j of every
 * rotation counts group j.  At each slice boundary a background thread
 * disables the group that was counting, reads its counts and enables the next
 * one.  No signal is sent to any application thread.  At the end of each
 * rotation the observations go to an estimator (mpxkit/estimator.h) with
 * mpxkit_estimator_push, and what it returns is added to running sums, so a
 * read costs the same however long the run: sums + mpxkit_estimator_peek +
 * the rotation in progress, for which it reads the source about the events
 * counting now only (mpxkit_sched_read_mode: one read(2) of the perf group,
 * or none with rdpmc).  With one group nothing is multiplexed: the thread
 * only reads, and the estimates are the counts.
 *
 * The whole-run pass.  An estimator whose online path reads a window but
 * which can do better over the whole run (mpxkit_estimator_has_whole_run:
 * bigru) gets that run at the end: the scheduler then also keeps every
 * rotation's observations (and reference counts) as it pushed them, growing
 * by doubling, up to whole_max rotations (8 (n_events + G) bytes each).  At
 * the stop, after the flush, mpxkit_estimator_run_whole over the kept
 * rotations replaces the windowed estimates: the final totals are the sums
 * of its rows, in rotation order, and mpxkit_sched_whole_series gives the
 * rows.  Reads during a run stay windowed, in bounded time; the series
 * callback gets the windowed estimates as they come (it may be told of the
 * replacement only by mpxkit_sched_whole_series).  A run longer than
 * whole_max rotations, or one whose memory runs out or whose thread hit an
 * error, keeps its windowed results.
 *
 * Real-time sources (perf).  A slice lasts slice_ns of wall time.  Slices
 * are measured by the kernel's enabled time of their group, which for a
 * per-thread event only grows while the thread runs.  Before a rotation is
 * pushed each observation is scaled to the rotation's mean slice, so uneven
 * slices (timer jitter, a thread that slept) do not bias the estimate; fixed
 * is then exactly the kernel's time scaling, rotation by rotation.  The
 * rotation in progress at a read or a stop is estimated by time scaling:
 * a count from this rotation when its group has been counted, else the
 * event's rate in the previous rotation, else 0.  It is never in the series
 * nor in the whole-run pass, which covers the completed rotations; at a stop
 * it is added to the pass's sums.
 *
 * Virtual-clock sources (replay).  One source step is one slice; the thread
 * serves the whole trace, as fast as it can, from the first step on, at
 * every start and every reset.  Observations are not scaled, the trailing
 * partial rotation is dropped, and the estimator is flushed at the end, so
 * the totals are exactly those of mpxkit_mpx_simulate (same C, events in
 * column order) plus mpxkit_estimator_run, summed over rotations in order.
 * A read waits until the whole trace has been served.  With a whole-run
 * pass, the totals after the stop are those of mpxkit_estimator_run_whole
 * instead (mpxkit_estimator_run past whole_max rotations), while the reads
 * before it keep mpxkit_estimator_run's, as on a real-time source.
 *
 * Threads.  A scheduler belongs to one application thread at a time (as a
 * PAPI event set does); its calls may come from any thread but must not
 * overlap.  Each scheduler has its own rotation thread while it runs; many
 * schedulers may run at once.  The source is used by the rotation thread
 * while running, so leave it alone between start and stop.
 */
typedef struct mpxkit_sched mpxkit_sched;

#define MPXKIT_SCHED_DEFAULT_COUNTERS  4 /* software events: no PMU limit to follow */
#define MPXKIT_SCHED_MAX_COUNTERS      64
#define MPXKIT_SCHED_DEFAULT_SLICE_US  2000 /* 2 ms: see doc/component.md, "The slice" */
#define MPXKIT_SCHED_MIN_SLICE_US      100
#define MPXKIT_SCHED_MAX_SLICE_US      10000000
#define MPXKIT_SCHED_DEFAULT_ESTIMATOR "fixed"
#define MPXKIT_SCHED_PATH_MAX	       1024
#define MPXKIT_SCHED_EVENT_MAX	       128
/*
 * Rotations kept for the whole-run pass: 11 min of 10 ms slices with G = 4;
 * a stop of 13 events then costs about 0.6 s and 75 MB (doc/component.md).
 */
#define MPXKIT_SCHED_DEFAULT_WHOLE_MAX 16384
#define MPXKIT_SCHED_MAX_WHOLE_MAX     100000000

/*
 * The default C where MPXKIT_COUNTERS is unset, for real-time sources: the
 * number of generic counters of the host's core PMU, the smallest one's on
 * hybrid parts, as libpfm4's pfm_get_pmu_info reports it (num_cntrs), at most
 * 64; MPXKIT_SCHED_DEFAULT_COUNTERS (4) where there is no hardware PMU and
 * only the kernel's software events count, or where libpfm4 is missing.
 * Probed once per process.  Replayed traces keep 4: they have no PMU.
 */
size_t mpxkit_sched_default_counters(void);

/*
 * The rule above on given PMUs: generic[i] is core PMU i's generic counters.
 * None (n_pmus 0, or only zeros) gives 4.
 */
size_t mpxkit_sched_counters_for(const unsigned *generic, size_t n_pmus);

/*
 * The probe behind it: writes the generic counters of each present core PMU
 * to generic[0 .. cap-1] and returns how many there are; 0 when there is no
 * hardware PMU (or no libpfm4 to ask).
 */
int mpxkit_sched_pmu_counters(unsigned *generic, size_t cap);

/*
 * How a read takes the counts of the events counting now (the others need
 * none: their part of the window in progress is the engine's own), from
 * MPXKIT_READ (doc/component.md, "Reads").
 *   FAST   at one instant, at the least cost the source allows
 *          (mpxkit_source_snapshot): one read(2) of the perf group, or none
 *          with rdpmc.  The default.
 *   EXACT  each counting slot's own read(2), then the clock's: n_cur + 1
 *          system calls at nearby instants.
 * Both compute the same estimate from what they read; a stop always reads
 * exactly.
 */
typedef enum mpxkit_sched_read_mode {
	MPXKIT_SCHED_READ_FAST = 0,
	MPXKIT_SCHED_READ_EXACT = 1,
} mpxkit_sched_read_mode;

/*
 * What is multiplexed, from MPXKIT_MULTIPLEX (doc/component.md, "What is
 * multiplexed").
 *   HARDWARE  only the events that take a counter of their PMU
 *             (mpxkit_source_takes_counter); the others (software events,
 *             tracepoints, msr, power) are counted all the time, exactly:
 *             their estimate is their count, fidelity 1, a zero-width
 *             interval.  With no event that takes a counter there is no
 *             rotation at all: no rotation thread, no wake-up, no series.
 *             The default.
 *   ALL       every event is multiplexed on the C counters, as before issue
 *             26: what the demo and the accuracy tests do on purpose with
 *             software events, the only ones a machine without a PMU has.
 * A replayed trace is always multiplexed whole: it is there to be.
 */
typedef enum mpxkit_sched_multiplex {
	MPXKIT_SCHED_MULTIPLEX_HARDWARE = 0,
	MPXKIT_SCHED_MULTIPLEX_ALL = 1,
} mpxkit_sched_multiplex;

/* Settings: what MPXKIT_COUNTERS, MPXKIT_SLICE_US, ... say.  Plain data, no ownership. */
typedef struct mpxkit_sched_config {
	size_t counters;		    /* C, in [1, 64]; 0: mpxkit_sched_default_counters() */
	uint64_t slice_ns;		    /* slice length of real-time sources */
	char estimator[64];		    /* canonical estimator name */
	char model[MPXKIT_SCHED_PATH_MAX];  /* learned estimator's model; "": its default */
	char replay[MPXKIT_SCHED_PATH_MAX]; /* trace to replay; "": none */
	char reference[MPXKIT_SCHED_EVENT_MAX]; /* event counted in every slice; "": none */
	size_t whole_max; /* rotations kept for a whole-run pass; 0: none, windowed results */
	/*
	 * The schedule (mpxkit/schedule.h, doc/schedules.md): NAME,
	 * NAME:KEY=VALUE... or a group file; "": round-robin.
	 */
	char schedule[MPXKIT_SCHED_PATH_MAX];
	mpxkit_sched_read_mode
	    read; /* how mpxkit_sched_read reads: FAST unless MPXKIT_READ=exact */
	mpxkit_sched_multiplex multiplex; /* HARDWARE unless MPXKIT_MULTIPLEX=all */
	/*
	 * The level of the intervals mpxkit_sched_read_iv gives, in (0,
	 * MPXKIT_INTERVAL_LEVEL_MAX]: MPXKIT_LEVEL, default MPXKIT_INTERVAL_LEVEL
	 * (0.9); 0 is taken as the default.
	 */
	double level;
} mpxkit_sched_config;

/*
 * The defaults: C from the source, 10 ms slices, fixed, no model, no replay,
 * MPXKIT_SCHED_DEFAULT_WHOLE_MAX rotations kept for a whole-run pass, fast
 * reads, intervals at MPXKIT_INTERVAL_LEVEL, hardware events multiplexed and
 * the others counted all the time.
 */
void mpxkit_sched_config_default(mpxkit_sched_config *cfg);

/*
 * Sets one setting by its environment name: "MPXKIT_COUNTERS",
 * "MPXKIT_SLICE_US", "MPXKIT_ESTIMATOR", "MPXKIT_MODEL", "MPXKIT_REPLAY",
 * "MPXKIT_REFERENCE", "MPXKIT_WHOLE_MAX" (whole_max, 0 to 100000000),
 * "MPXKIT_SCHEDULE" (a schedule, checked, or a group file, read),
 * "MPXKIT_READ" ("fast" or "exact"), "MPXKIT_LEVEL" (a decimal in
 * (0, 0.99]: the intervals' level) or "MPXKIT_MULTIPLEX" ("hardware" or
 * "all").  A
 * bad value fails with -MPXKIT_EINVAL (-MPXKIT_ENOENT for an unknown
 * estimator) and one line in diag naming the setting; cfg is then unchanged.
 * Whether the reference event exists is known only to a source:
 * mpxkit_sched_new adds it.
 */
int mpxkit_sched_config_set(mpxkit_sched_config *cfg, const char *key, const char *value,
			    mpxkit_diag *diag);

/*
 * The settings together: -MPXKIT_EINVAL and one line when the estimator needs
 * a reference event (ref-rate) and MPXKIT_REFERENCE names none.
 */
int mpxkit_sched_config_check(const mpxkit_sched_config *cfg, mpxkit_diag *diag);

/*
 * Defaults, then each MPXKIT_* variable that is set and not empty, in the
 * order above, then mpxkit_sched_config_check.
 */
int mpxkit_sched_config_env(mpxkit_sched_config *cfg, mpxkit_diag *diag);

/*
 * Looks in envp (NULL: the process's environment) for a variable whose name
 * starts with MPXKIT_ but which nothing of mpxkit reads: a misspelt setting
 * (MPXKIT_COUNTER), which would otherwise be ignored without a word.  The
 * names read are the settings above, MPXKIT_DUMP, MPXKIT_DATADIR and
 * MPXKIT_SYSFS_ROOT, and those of the build and test tools (MPXKIT_SHARED,
 * MPXKIT_VALGRIND, MPXKIT_CACHE_DIR, MPXKIT_DEBIAN_MIRROR), listed in
 * doc/component.md.  0 when there is none; 1 for the first one, with diag's
 * line naming it and the nearest known name ("MPXKIT_COUNTER: no such mpxkit
 * setting, ignored (did you mean MPXKIT_COUNTERS?)").
 */
int mpxkit_sched_config_unknown_env(char *const *envp, mpxkit_diag *diag);

/*
 * A scheduler over src, whose events are all added already.  With
 * cfg->reference set, the scheduler adds that event to src as one more slot,
 * counted in every slice outside the C counters (as Intel's fixed counters
 * count instructions and cycles); it is not among the events estimated, and
 * the estimator sees its count in each slice (mpxkit_rotation.ref).  On
 * success the scheduler owns src and frees it; on failure the caller still
 * does.  Fails with -MPXKIT_EINVAL for a source without events, and as
 * mpxkit_source_add does for a reference the source cannot count.
 */
int mpxkit_sched_new(mpxkit_sched **out, mpxkit_source *src, const mpxkit_sched_config *cfg,
		     mpxkit_diag *diag);

/* Stops it if it runs, frees it and its source.  NULL is a no-op. */
void mpxkit_sched_free(mpxkit_sched *s);

/* The events, groups (G) and counters (C) it uses; slice[e] of the layout is event e's group. */
const mpxkit_layout *mpxkit_sched_layout(const mpxkit_sched *s);
size_t mpxkit_sched_counters(const mpxkit_sched *s);
const char *mpxkit_sched_estimator(const mpxkit_sched *s);

/*
 * Calls fn(arg, k, est) with the n_events estimates of each rotation k of a
 * run, in order, as the estimator gives them (rotation k comes at the end of
 * rotation k + look-ahead, the last ones at the stop).  fn runs in the
 * rotation thread with the scheduler's lock held: it must not call the
 * scheduler.  The rotation in progress at the stop is in the totals, not in
 * the series.  Set it while stopped; NULL removes it.
 */
typedef void (*mpxkit_sched_series_fn)(void *arg, size_t k, const double *est);
int mpxkit_sched_on_rotation(mpxkit_sched *s, mpxkit_sched_series_fn fn, void *arg);

/*
 * The same with each estimate's interval (mpxkit/estimator.h), at the
 * scheduler's level: iv holds the n_events intervals of rotation k, as
 * mpxkit_estimator_push_iv gives them.  One callback at a time: setting
 * either kind replaces the other.
 */
typedef void (*mpxkit_sched_series_iv_fn)(void *arg, size_t k, const double *est,
					  const mpxkit_interval *iv);
int mpxkit_sched_on_rotation_iv(mpxkit_sched *s, mpxkit_sched_series_iv_fn fn, void *arg);

/* The whole-run pass of the last run: the rotations kept and what the pass made of them. */
typedef struct mpxkit_sched_whole {
	size_t n_rotations;  /* the run's completed windows, all of them */
	const double *est;   /* n_rotations rows of n_events: the whole-run estimates */
	const uint64_t *obs; /* n_rotations rows of n_events: the observations pushed */
	const uint64_t *ref; /* n_rotations rows of W reference counts; NULL without one */
	const uint64_t *val; /* n_rotations rows of W x n_events: each slice's counts */
	const double *len;   /* n_rotations rows of W: slice lengths in nominal slices */
	const mpxkit_interval *iv; /* n_rotations rows of n_events: the estimates' intervals */
} mpxkit_sched_whole;

/*
 * How many times the rotation thread has woken from its sleep in this run
 * (or the last): 0 when nothing is multiplexed under MPXKIT_MULTIPLEX=hardware,
 * where no thread runs.
 */
size_t mpxkit_sched_wakeups(const mpxkit_sched *s);

/*
 * How many of its events are multiplexed on the C counters: all of them
 * under MPXKIT_MULTIPLEX=all, those that take a counter under hardware (the
 * others are counted all the time).
 */
size_t mpxkit_sched_n_multiplexed(const mpxkit_sched *s);

/*
 * The schedule it runs (its canonical spec, or the group file's name);
 * "none" when nothing is multiplexed, and then the estimator is "exact".
 */
const char *mpxkit_sched_schedule(const mpxkit_sched *s);

/*
 * After a stop: 1 when the last run's totals are the whole-run pass's (see
 * above), with its rows in *out, which replace the windowed estimates the
 * series callback had for rotations 0 .. n_rotations-1 (the callback had
 * every one of them); valid until the next start or the free.  0, *out
 * zeroed, when they are the windowed ones: an estimator without a
 * whole-run pass, whole_max 0, a run past whole_max rotations, memory that
 * ran out, an error in the run, or no run yet.  -MPXKIT_ESTATE while it
 * runs.
 */
int mpxkit_sched_whole_series(const mpxkit_sched *s, mpxkit_sched_whole *out);

/*
 * Starts a run from zero: the estimator, the sums and the counts start over
 * (a replay starts again at the trace's first step).  -MPXKIT_ESTATE when it
 * already runs; -MPXKIT_ESYS when the rotation thread cannot start.
 */
int mpxkit_sched_start(mpxkit_sched *s);

/*
 * Ends the run; reads then return its final totals until the next start.
 * With a whole-run pass, the stop runs it, in the calling thread
 * (doc/component.md: its cost).  No-op if stopped.
 */
int mpxkit_sched_stop(mpxkit_sched *s);

/* Starts the totals over from zero without stopping (a replay starts again at its first step). */
int mpxkit_sched_reset(mpxkit_sched *s);

/*
 * The estimated totals since the start or the last reset, in est[0 ..
 * n_events-1], and if fidelity is not NULL the share of the run's time each
 * event was counted (1/G or so when multiplexed, 1 when not).  An event whose
 * group has not held a counter yet has fidelity 0 exactly and estimate 0:
 * not counted, which callers should say rather than show a 0.  Returns the
 * number of rotations completed, or a negative code when the rotation thread
 * hit an error.  It reads as the settings' read mode says; a stopped
 * scheduler returns the stop's totals, which were read exactly.
 */
int mpxkit_sched_read(mpxkit_sched *s, double *est, double *fidelity);

/*
 * As mpxkit_sched_read, with the time behind the fidelity: *run_ns gets the
 * run's time so far in ns (the source's clock since the start; the closed
 * slices' time without a clock), so fidelity[e] x *run_ns is the time event
 * e was counted.  Differences of both between two reads say how long each
 * event was counted in between (mpxkit stat -I).  fidelity is required.
 */
int mpxkit_sched_read_timed(mpxkit_sched *s, double *est, double *fidelity, double *run_ns);

/*
 * As mpxkit_sched_read, with the interval of each total at the scheduler's
 * level (mpxkit_sched_level) in iv[0 .. n_events-1] (doc/component.md,
 * "Intervals"): the estimator's interval over the windows estimated
 * (mpxkit_estimator_peek_iv; after a whole-run pass, the pass's), widened
 * by the window in progress.  An event counted all the time has lo = hi;
 * an event no slice has counted has MPXKIT_INTERVAL_UNOBSERVED (lo 0, hi
 * INFINITY): show "not counted", not its estimate.  hi is INFINITY with
 * MPXKIT_INTERVAL_OPEN where the run has not shown the event's spread yet.
 * Always takes the lock, in the settings' read mode; a stopped scheduler
 * gives the stop's.  fidelity and run_ns (as mpxkit_sched_read_timed
 * gives it) may be NULL.
 */
int mpxkit_sched_read_iv(mpxkit_sched *s, double *est, double *fidelity, double *run_ns,
			 mpxkit_interval *iv);

/* The level of its intervals, in (0, MPXKIT_INTERVAL_LEVEL_MAX]. */
double mpxkit_sched_level(const mpxkit_sched *s);

/* As mpxkit_sched_read, in the mode given: to compare the two on one run. */
int mpxkit_sched_read_as(mpxkit_sched *s, mpxkit_sched_read_mode mode, double *est,
			 double *fidelity);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Code spaces over time: profiles (collection and the .prof file) and their analysis
 * (doc/spacetime.md). */
#ifndef MPXKIT_SPACETIME_H
#define MPXKIT_SPACETIME_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Three stages, in the order data flows (doc/spacetime.md says what each
 * computes, exactly):
 * - collection: mpxkit_profile_run runs a program under callgrind or perf
 *   sampling and writes a profile;
 * - the profile file (.prof): windows x threads x instruction addresses, with
 *   every event's count, the jumps taken, and symbols, on the shared
 *   container (include/mpxkit/container.h); a writer and a streaming reader;
 * - analysis: mpxkit_spacetime_analyze turns a profile into code spaces,
 *   their metrics, appearances, patterns and threads, and ranked findings.
 * Everything follows the error contract of mpxkit/error.h.
 */

/* ---- the profile file ------------------------------------------------------------------------ */

#define MPXKIT_PROFILE_MAGIC	   0x50545389u /* bytes 89 53 54 50: "\x89STP" */
#define MPXKIT_PROFILE_VERSION	   1
#define MPXKIT_PROFILE_MAX_SECTION (64u << 20)
#define MPXKIT_PROFILE_MAX_EVENTS  64
#define MPXKIT_PROFILE_MAX_NAME	   4096
#define MPXKIT_PROFILE_MAX_META	   256

/* One instruction address, the unit rows are counted in. */
typedef struct mpxkit_profile_code {
	uint32_t function;
	uint32_t file;
	uint32_t line;	  /* 0 when unknown */
	uint64_t address; /* in the object's ELF image */
} mpxkit_profile_code;

typedef struct mpxkit_profile_function {
	const char *name;
	uint32_t object;
	uint64_t lo, size; /* symbol range [lo, lo + size); size 0 when unknown */
} mpxkit_profile_function;

typedef struct mpxkit_profile_thread {
	uint64_t tid;	  /* OS thread id (perf) or valgrind's thread number (callgrind) */
	const char *name; /* may be "" */
} mpxkit_profile_thread;

typedef struct mpxkit_profile_jump {
	uint32_t from, to; /* code ids */
	uint64_t count;	   /* times taken in the window */
} mpxkit_profile_jump;

/* The rows of one thread in one window. */
typedef struct mpxkit_profile_block {
	uint64_t window;
	uint64_t t_begin, t_len; /* in the profile's time unit */
	uint32_t thread;
	size_t n_rows;
	const uint32_t *codes;	/* n_rows code ids (the reader gives them strictly increasing) */
	const uint64_t *counts; /* n_rows x n_events, row-major */
	size_t n_jumps;
	const mpxkit_profile_jump *jumps;
} mpxkit_profile_block;

/* ---- writing --------------------------------------------------------------------------------- */

typedef struct mpxkit_profile_writer mpxkit_profile_writer;

/*
 * Starts a profile at path (through the container writer: temporary file,
 * renamed at commit).  source is "callgrind" or "perf", time_unit "bb" or
 * "ns"; events are the row columns.
 */
int mpxkit_profile_create(mpxkit_profile_writer **w, const char *path, const char *source,
			  const char *time_unit, const char *const *events, size_t n_events,
			  mpxkit_diag *diag);

/* A metadata pair (doc/spacetime.md lists the keys); each key once per file. */
int mpxkit_profile_add_meta(mpxkit_profile_writer *w, const char *key, const char *value,
			    mpxkit_diag *diag);

/*
 * Symbol tables.  Each returns the entry's id in *id, the existing one when
 * the same entry was given before (objects and files by name, functions by
 * name and object, code by object and address, threads by tid), so
 * collectors need no tables of their own.
 */
int mpxkit_profile_add_object(mpxkit_profile_writer *w, const char *name, uint32_t *id,
			      mpxkit_diag *diag);
int mpxkit_profile_add_file(mpxkit_profile_writer *w, const char *name, uint32_t *id,
			    mpxkit_diag *diag);
int mpxkit_profile_add_function(mpxkit_profile_writer *w, const char *name, uint32_t object,
				uint64_t lo, uint64_t size, uint32_t *id, mpxkit_diag *diag);
int mpxkit_profile_add_code(mpxkit_profile_writer *w, uint32_t function, uint32_t file,
			    uint32_t line, uint64_t address, uint32_t *id, mpxkit_diag *diag);
int mpxkit_profile_add_thread(mpxkit_profile_writer *w, uint64_t tid, const char *name,
			      uint32_t *id, mpxkit_diag *diag);

/*
 * One block.  Rows may come in any order and name a code id more than once
 * (they are summed); jumps too.  Windows must not decrease from block to
 * block.  Large blocks are split over several sections.
 */
int mpxkit_profile_put_block(mpxkit_profile_writer *w, const mpxkit_profile_block *b,
			     mpxkit_diag *diag);

/* Writes the tables still pending and the end; renames into place; frees w either way. */
int mpxkit_profile_commit(mpxkit_profile_writer *w, mpxkit_diag *diag);
void mpxkit_profile_abort(mpxkit_profile_writer *w); /* NULL is a no-op */

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct mpxkit_profile mpxkit_profile;

/* Opens and reads the HEAD section; the rest streams through mpxkit_profile_next. */
int mpxkit_profile_open(mpxkit_profile **p, const char *path, mpxkit_diag *diag);
/* The same over a buffer the caller keeps for the profile's life; name labels diagnostics. */
int mpxkit_profile_open_buffer(mpxkit_profile **p, const void *buf, size_t len, const char *name,
			       mpxkit_diag *diag);

/*
 * The next block: 1 with *b filled (valid until the next call), 0 at the
 * verified end of the file, or a negative code.  Symbol and metadata
 * sections met on the way are absorbed: every id the block uses is defined.
 */
int mpxkit_profile_next(mpxkit_profile *p, mpxkit_profile_block *b, mpxkit_diag *diag);

const char *mpxkit_profile_source(const mpxkit_profile *p);
const char *mpxkit_profile_time_unit(const mpxkit_profile *p);
size_t mpxkit_profile_n_events(const mpxkit_profile *p);
const char *mpxkit_profile_event(const mpxkit_profile *p, size_t i);
/* A metadata value read so far, or NULL. */
const char *mpxkit_profile_meta(const mpxkit_profile *p, const char *key);
size_t mpxkit_profile_n_meta(const mpxkit_profile *p);
int mpxkit_profile_meta_at(const mpxkit_profile *p, size_t i, const char **key, const char **value);

/* Tables, as far as read: counts and entries (NULL or "" out of range). */
size_t mpxkit_profile_n_codes(const mpxkit_profile *p);
const mpxkit_profile_code *mpxkit_profile_code_at(const mpxkit_profile *p, uint32_t id);
size_t mpxkit_profile_n_functions(const mpxkit_profile *p);
const mpxkit_profile_function *mpxkit_profile_function_at(const mpxkit_profile *p, uint32_t id);
const char *mpxkit_profile_object_name(const mpxkit_profile *p, uint32_t id);
const char *mpxkit_profile_file_name(const mpxkit_profile *p, uint32_t id);
size_t mpxkit_profile_n_threads(const mpxkit_profile *p);
const mpxkit_profile_thread *mpxkit_profile_thread_at(const mpxkit_profile *p, uint32_t id);

void mpxkit_profile_close(mpxkit_profile *p); /* NULL is a no-op */

/* ---- collection ------------------------------------------------------------------------------ */

typedef enum mpxkit_profile_source_kind {
	MPXKIT_PROFILE_AUTO = 0,  /* perf when a hardware event opens here, else callgrind */
	MPXKIT_PROFILE_CALLGRIND, /* exact, any machine */
	MPXKIT_PROFILE_PERF,	  /* perf_event sampling with a counter group read per sample */
} mpxkit_profile_source_kind;

#define MPXKIT_PROFILE_FREQUENCY       4000	/* Hz: perf record's default */
#define MPXKIT_PROFILE_WINDOW_NS       10000000 /* 10 ms */
#define MPXKIT_PROFILE_MAX_PERF_EVENTS 16

typedef struct mpxkit_profile_options {
	mpxkit_profile_source_kind source;
	mpxkit_record_options callgrind; /* interval_bb, cache geometry, valgrind, tmpdir, envp */
	uint64_t frequency;		 /* perf: samples per second per thread */
	uint64_t window_ns;		 /* perf: window length */
	const char *const *events; /* perf: group members ("perf::PAGE-FAULTS"); NULL: default */
	size_t n_events;
	int keep_failed; /* write the profile even when the program exits nonzero or is killed */
} mpxkit_profile_options;

/* What a collection did. */
typedef struct mpxkit_profile_summary {
	mpxkit_profile_source_kind source; /* the one used */
	char why[128];			   /* why it was chosen (AUTO), for the user */
	uint64_t windows, threads, codes, rows;
	uint64_t samples, lost; /* perf */
	mpxkit_record_status status;
	int written; /* 0: the program failed and keep_failed was not set, nothing written */
} mpxkit_profile_summary;

void mpxkit_profile_options_init(mpxkit_profile_options *o);

/* 1 when a hardware cycles counter opens for this process here, else 0. */
int mpxkit_profile_have_pmu(void);

/*
 * Runs argv under the source and writes its profile to path.  The program
 * keeps stdin, stdout and stderr.  When it exits nonzero or dies of a
 * signal, nothing is written unless o->keep_failed is set; either way the
 * call succeeds and summary->status says how it ended.  Failures leave
 * nothing under path.
 */
int mpxkit_profile_run(const mpxkit_profile_options *o, char *const argv[], const char *path,
		       mpxkit_profile_summary *summary, mpxkit_diag *diag);

/*
 * Callgrind's per-thread dumps of one run (base.K-TT, base-TT; base.K and
 * base without --separate-threads) into blocks of w, in window order.  The
 * run's metadata is the caller's.  mpxkit_profile_run uses it; tests feed it
 * dumps written by hand.
 */
int mpxkit_profile_add_callgrind(mpxkit_profile_writer *w, const char *base,
				 mpxkit_profile_summary *summary, mpxkit_diag *diag);

/* ---- analysis -------------------------------------------------------------------------------- */

/* The metrics (doc/spacetime.md, "Metrics"), in this order in every metrics array. */
#define MPXKIT_SPACETIME_METRIC_LIST(X)                                                            \
	X(I1_MPKI, "i1_mpki")                                                                      \
	X(I1_MISS_RATIO, "i1_miss_ratio")                                                          \
	X(D1_MPKI, "d1_mpki")                                                                      \
	X(D1_MISS_RATIO, "d1_miss_ratio")                                                          \
	X(LL_MPKI, "ll_mpki")                                                                      \
	X(LL_MISS_RATIO, "ll_miss_ratio")                                                          \
	X(BRANCH_MISPREDICT_RATIO, "branch_mispredict_ratio")                                      \
	X(INDIRECT_MISPREDICT_RATIO, "indirect_mispredict_ratio")                                  \
	X(CPI, "cpi")                                                                              \
	X(FAULTS_PER_MS, "faults_per_ms")                                                          \
	X(CSW_PER_MS, "csw_per_ms")

#define MPXKIT_SPACETIME_METRIC_ENUM_(name, key) MPXKIT_METRIC_##name,
typedef enum mpxkit_spacetime_metric {
	MPXKIT_SPACETIME_METRIC_LIST(MPXKIT_SPACETIME_METRIC_ENUM_) MPXKIT_SPACETIME_N_METRICS
} mpxkit_spacetime_metric;
#undef MPXKIT_SPACETIME_METRIC_ENUM_

#define MPXKIT_SPACETIME_CLASS_LIST(X)                                                             \
	X(D1_MISS, "d1-miss")                                                                      \
	X(LL_MISS, "ll-miss")                                                                      \
	X(I1_MISS, "i1-miss")                                                                      \
	X(BRANCH_MISPREDICT, "branch-mispredict")                                                  \
	X(INDIRECT_MISPREDICT, "indirect-mispredict")                                              \
	X(CPI, "cpi")                                                                              \
	X(PAGE_FAULTS, "page-faults")                                                              \
	X(CONTEXT_SWITCHES, "context-switches")                                                    \
	X(LOAD_IMBALANCE, "load-imbalance")                                                        \
	X(PHASE_CHANGE, "phase-change")                                                            \
	X(TRANSITION, "transition")

#define MPXKIT_SPACETIME_CLASS_ENUM_(name, text) MPXKIT_CLASS_##name,
typedef enum mpxkit_spacetime_class {
	MPXKIT_SPACETIME_CLASS_LIST(MPXKIT_SPACETIME_CLASS_ENUM_) MPXKIT_SPACETIME_N_CLASSES
} mpxkit_spacetime_class;
#undef MPXKIT_SPACETIME_CLASS_ENUM_

typedef enum mpxkit_spacetime_scope {
	MPXKIT_SCOPE_SPACE,   /* a space against the rest of the program */
	MPXKIT_SCOPE_PHASE,   /* a space against itself at other times */
	MPXKIT_SCOPE_PATTERN, /* a space after a transition against itself overall */
	MPXKIT_SCOPE_THREADS, /* a space's threads against each other */
	MPXKIT_SCOPE_PROGRAM, /* the whole program against the top-down thresholds */
} mpxkit_spacetime_scope;

/* Names for output; never NULL ("?" out of range). */
const char *mpxkit_spacetime_metric_key(int metric);
const char *mpxkit_spacetime_metric_title(int metric); /* "D1 misses per kI" */
const char *mpxkit_spacetime_class_name(int cls);
const char *mpxkit_spacetime_scope_name(int scope);

typedef struct mpxkit_spacetime_options {
	double min_weight; /* selection: weight or cost share (0.01) */
	double overlap;	   /* merging (0.90) */
	double appear;	   /* appearance: share of a window's weight (0.01) */
	double factor;	   /* rate metrics, phases, transitions (2.0) */
	double cpi_factor; /* 1.5 */
	double imbalance;  /* busiest thread over the mean (1.25) */
	double min_share;  /* of the program's cost (0.005) */
	size_t bins;	   /* time bins (256) */
	/* Called now and then with the blocks read so far in pass 1 or 2; may be NULL. */
	void (*progress)(void *arg, int pass, uint64_t blocks, uint64_t rows);
	void *progress_arg;
} mpxkit_spacetime_options;

void mpxkit_spacetime_options_init(mpxkit_spacetime_options *o);

#define MPXKIT_SPACETIME_MAX_RUNS 256

/* A selected code space; metric values are NaN where the profile lacks their events. */
typedef struct mpxkit_spacetime_space {
	uint32_t id; /* order of founding, over all spaces */
	const char *object, *function, *file;
	uint32_t line;	     /* of its costliest instruction */
	uint64_t start, end; /* its range, inclusive */
	int loop;	     /* 1: a loop span, 0: a function body */
	int wait;	     /* 1: code that waits on other threads (doc/spacetime.md, "Threads") */
	double weight, cost_share;
	uint64_t appearances, first, last; /* windows */
	size_t n_runs;			   /* at most MPXKIT_SPACETIME_MAX_RUNS listed */
	uint64_t (*runs)[2];		   /* [first, last] windows of each run */
	int runs_truncated;
	uint64_t gaps, max_gap, max_gap_end;
	double metrics[MPXKIT_SPACETIME_N_METRICS];
	int has_after_gap;
	double after_gap[MPXKIT_SPACETIME_N_METRICS];
	unsigned worse_after_gap; /* bit m: metric m worse after the longest gap */
	double *thread_share;	  /* n_threads: the thread's cost here over the program's cost */
} mpxkit_spacetime_space;

typedef struct mpxkit_spacetime_finding {
	int advantage; /* 0: defect */
	int absolute;  /* 1: against the top-down thresholds, 0: against other code or times */
	mpxkit_spacetime_class cls;
	mpxkit_spacetime_scope scope;
	size_t space; /* index into spaces[]; for the program, where the events concentrate */
	int metric;   /* mpxkit_spacetime_metric, or -1 for imbalance */
	double value, program_value, reference_value;
	double share;	    /* of the program's cost: the score */
	double event_share; /* of all of the metric's numerator events; NaN for imbalance */
	double stall_share; /* absolute: the class's share of the scope's cost, else NaN */
	double threshold;   /* absolute: its top-down node's threshold, else NaN */
	const char *file;   /* where the metric's events concentrate */
	uint32_t line;
	uint64_t first_window, last_window; /* phase */
	long after;			    /* pattern: index of the preceding space, else -1 */
	long thread;			    /* imbalance: index of the busiest thread, else -1 */
	char direction[320];
} mpxkit_spacetime_finding;

typedef struct mpxkit_spacetime_pattern {
	size_t from, to; /* indexes into spaces[] */
	uint64_t count;
	double metrics[MPXKIT_SPACETIME_N_METRICS]; /* of `to` right after the transition */
} mpxkit_spacetime_pattern;

typedef struct mpxkit_spacetime_thread {
	uint64_t tid;
	double cost_share, wait_share; /* of the program's cost; of its own cost */
	double *bin_cost;	       /* n_bins: its cost per time bin */
	double *bin_wait;	       /* n_bins: its wait cost per time bin */
} mpxkit_spacetime_thread;

typedef struct mpxkit_spacetime {
	mpxkit_spacetime_options options;
	const char *source, *time_unit, *command;
	size_t n_events;
	char **events;
	uint64_t windows; /* windows with at least one block */
	uint64_t first_window, last_window;
	uint64_t blocks, rows;
	size_t n_all_spaces;   /* code spaces before selection */
	double cost, weight;   /* program totals */
	const char *cost_unit; /* "cycles (estimated)" or "ns" */
	double metrics[MPXKIT_SPACETIME_N_METRICS];
	size_t n_spaces;
	mpxkit_spacetime_space *spaces; /* selected, by cost share, largest first */
	size_t n_findings;
	mpxkit_spacetime_finding *findings; /* in rank order */
	size_t n_patterns;
	mpxkit_spacetime_pattern *patterns; /* by count, largest first */
	size_t n_threads;
	mpxkit_spacetime_thread *threads;
	size_t n_bins;
	uint64_t *bin_first_window; /* n_bins + 1: bin k holds windows [k], [k+1]) */
	/* Internal: per space and bin event sums (mpxkit_spacetime_bin_metric), owned strings. */
	uint64_t *bin_sums;
	void *internal;
} mpxkit_spacetime;

/* Two passes over the profile at path (or in buf); *out is freed with mpxkit_spacetime_free. */
int mpxkit_spacetime_analyze(const char *path, const mpxkit_spacetime_options *o,
			     mpxkit_spacetime **out, mpxkit_diag *diag);
int mpxkit_spacetime_analyze_buffer(const void *buf, size_t len, const char *name,
				    const mpxkit_spacetime_options *o, mpxkit_spacetime **out,
				    mpxkit_diag *diag);

/* A space's metric in one time bin, NaN where it did not run or the events are missing. */
double mpxkit_spacetime_bin_metric(const mpxkit_spacetime *r, size_t space, size_t bin, int metric);
/* A space's cost in one time bin, as a share of the program's cost. */
double mpxkit_spacetime_bin_cost(const mpxkit_spacetime *r, size_t space, size_t bin);

void mpxkit_spacetime_free(mpxkit_spacetime *r); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif

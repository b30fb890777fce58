/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of lib/predict share: field parsers, the model's layout, row features. */
#ifndef MPXKIT_PREDICT_IMPL_H
#define MPXKIT_PREDICT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/predict.h"

/* ---- fields (dataset.c) ------------------------------------------------------------------------
 */

/* A decimal number as doc/predict-format.md allows: [0-9.eE+-] only, whole, finite. */
int mpxkit__pd_real(const char *s, size_t len, double *out);
/* A whole number: digits only, at most max. */
int mpxkit__pd_whole(const char *s, size_t len, uint64_t max, uint64_t *out);
/* A name that travels unquoted: non-empty, < MPXKIT_PDATA_MAX_NAME, no comma, quote or control
 * byte. */
int mpxkit__pd_valid_name(const char *s, size_t len, int allow_blank);
/* Reads a whole input (path, or a buffer when buf != NULL) through the bounded reader. */
typedef int (*mpxkit__pd_line_fn)(void *arg, const char *line, size_t len, uint64_t lineno,
				  mpxkit_diag *diag);
int mpxkit__pd_each_line(const char *name, const char *path, const char *buf, size_t len,
			 uint64_t max_bytes, const char *what, mpxkit__pd_line_fn fn, void *arg,
			 mpxkit_diag *diag);

/*
 * Room for item n of a doubling array: arr itself while n < *cap, else the grown block (*cap
 * updated) or NULL with arr untouched.
 */
void *mpxkit__pd_grow(void *arr, size_t *cap, size_t n, size_t elem);
/* qsort's order of doubles, ascending. */
int mpxkit__pd_cmp_double(const void *a, const void *b);

/* ---- the model (model.c, file.c, predict.c) ---------------------------------------------------
 */

/* Coefficients of eq. (1) per core kind. */
typedef struct pm_time {
	uint32_t core; /* index into cores */
	int form;      /* enum mpxkit_met_form */
	double mu[2];  /* ns per miss; ns per miss per MPKI */
} pm_time;

/* Eq. (7) for one core kind at one frequency (PER_FREQ) or for all its frequencies (VOLTAGE). */
typedef struct pm_power {
	uint32_t core;
	int form;	 /* enum mpxkit_power_form */
	double freq_mhz; /* PER_FREQ: its frequency; VOLTAGE: NaN */
	size_t n_coef;
	double coef[MPXKIT_PMODEL_MAX_COEFS];
} pm_power;

/* Eq. (2) from one core kind to another. */
typedef struct pm_xcore {
	uint32_t from, to;
	int form;    /* enum mpxkit_xcore_form */
	double g[4]; /* g0 (intercept), g1 (core CPI), g2 (MPKI), g8 (MET x f') */
} pm_xcore;

struct mpxkit_pmodel {
	size_t n_cores;
	char **cores;
	/* Inputs: the roles (NULL: unset), then events named for power only. */
	size_t n_inputs;
	char *input[MPXKIT_PMODEL_MAX_INPUTS];
	uint64_t power_inputs; /* bit per input: the power regressors, in input order */
	size_t n_configs;
	mpxkit_pconfig *configs; /* core points into cores[] */
	uint32_t *config_core;
	size_t n_time;
	pm_time *time;
	size_t n_power;
	pm_power *power;
	size_t n_xcore;
	pm_xcore *xcore;
	size_t n_meta;
	char **meta_keys, **meta_values;
	/* Derived at load or train, not stored: per config, its time model, power model, and the
	 * cross-core map from each core (n_configs x n_cores, -1 none). */
	int *cfg_time, *cfg_power, *cfg_xcore;
};

/* Allocates the derived tables after cores, configs and the fits are in place. */
int mpxkit__pm_link(mpxkit_pmodel *m, mpxkit_diag *diag);
int mpxkit__pm_core(const mpxkit_pmodel *m, const char *name);
int mpxkit__pm_add_meta(mpxkit_pmodel *m, const char *key, const char *value);

/* ---- features of one observation (features.c) -------------------------------------------------
 */

/*
 * Everything the equations read, per instruction (doc/predict.md,
 * "Features"): work is measured in instructions so runs of any length and
 * samples of any period compare.  Times are core-nanoseconds per
 * instruction, frequencies GHz.
 */
typedef struct pm_feat {
	double f_ghz;
	double threads;
	double n_inst;	/* instructions */
	double busy;	/* b = cycles / (instructions x f) */
	double idle;	/* i = max(0, time x threads / instructions - b); 0 for windows */
	double tau;	/* b + i */
	double miss_pi; /* misses per instruction; NaN when not counted */
	double mpki;	/* 1000 x miss_pi */
	double rate[MPXKIT_PMODEL_MAX_INPUTS]; /* per instruction, by input; NaN: not counted */
	double power_w;			       /* measured power, NaN if none */
	double voltage_v;		       /* NaN if none */
	double time_s;			       /* wall time of the work: tau x n_inst / threads */
} pm_feat;

/* Features from input counts (NaN: not counted); 0, or -1 when cycles or instructions are unusable.
 */
int mpxkit__pm_features(const double *count, size_t n_inputs, double freq_mhz, double threads,
			double time_s, int time_kind, double power_w, double voltage_v,
			pm_feat *out);

/* MET per instruction of eq. (1), ns, clamped to [0, busy]; 0 without a model or misses. */
double mpxkit__pm_met(const pm_time *t, const pm_feat *x);
/* Busy ns per instruction at f' (eq. 4, 5): (b - m) f / f' + m. */
double mpxkit__pm_busy_at(const pm_time *t, const pm_feat *x, double f_to_ghz);
/* CPI on another core kind at f' (eq. 2); NaN when the form's inputs are missing. */
double mpxkit__pm_xcore_cpi(const pm_xcore *g, const pm_time *from_time, const pm_feat *x,
			    double f_to_ghz);
/* The regressors of eq. (7) from rates in G events/s by input: fills r, returns how many. */
size_t mpxkit__pm_power_row(const pm_power *p, uint64_t inputs, const double *rate_gps,
			    double f_ghz, double voltage, double *r);
double mpxkit__pm_power(const pm_power *p, uint64_t inputs, const double *rate_gps, double f_ghz,
			double voltage);

/*
 * The inputs of a model trained on these datasets with these options:
 * names[0 .. ROLE_COUNT-1] are the roles' events (from the first dataset
 * that names each; NULL unset), then the named power events; *power is
 * the bit set of power regressors.  Names are the datasets' (not copied).
 */
int mpxkit__pm_layout(const mpxkit_pdata *const *sets, size_t n_sets,
		      const mpxkit_pmodel_options *opt, const char **names, size_t *n_inputs,
		      uint64_t *power, mpxkit_diag *diag);

/* ---- observations: rows grouped per (dataset, workload, threads, core, frequency) (obs.c) ---- */

typedef struct pm_obs {
	size_t set;	      /* which dataset */
	const char *workload; /* the dataset's */
	size_t workload_idx;  /* in its dataset */
	const char *core;
	double freq_mhz;
	uint32_t threads;
	int time_kind;
	size_t n_runs; /* distinct runs summed */
	size_t n_inputs;
	int fold;				/* training's inner fold */
	double count[MPXKIT_PMODEL_MAX_INPUTS]; /* sums over the rows; NaN when a row lacks it */
	double time_s;				/* sum; NaN when a row lacks it */
	double power_w, voltage_v;		/* means weighted by time; NaN when missing */
	int has_events;				/* features computed from its own counts */
	int borrowed;				/* features taken from another observation */
	pm_feat feat;
} pm_obs;

/*
 * Groups the rows of the datasets whose workloads keep() accepts (NULL:
 * all) into observations, sorted by (set, workload, threads, core, freq).
 */
int mpxkit__pm_observe(const mpxkit_pdata *const *sets, size_t n_sets, const char *const *names,
		       size_t n_inputs, mpxkit_pdata_filter keep, void *arg, pm_obs **out,
		       size_t *n_out, mpxkit_diag *diag);

/*
 * The observations of the same work as obs[i] (same dataset, workload and
 * threads): obs[*lo .. *hi - 1], as they are sorted.
 */
void mpxkit__pm_same_work(const pm_obs *obs, size_t n, size_t i, size_t *lo, size_t *hi);

/* Its role counts per second of wall time, in G/s. */
void mpxkit__pm_obs_rates(const pm_obs *o, double *rate_gps);

/*
 * Gives observations without counts (time only) the per-instruction
 * features of the same workload on the same core kind at the nearest
 * frequency, in any dataset, moved to their own frequency by that core's
 * time model (which may be NULL).
 */
void mpxkit__pm_borrow(pm_obs *obs, size_t n, const pm_time *const *time_of_core,
		       const char *const *cores, size_t n_cores);

/*
 * Predictions for every configuration from features and rates per wall
 * second (G/s, by role; NaN where not counted): mpxkit_predict's core, and
 * what evaluation calls on its observations.  power_w > 0: the power
 * measured with the observation, which anchors the power model (NaN: none).
 * tau_out (optional) gets each configuration's predicted ns per instruction.
 */
void mpxkit__pm_predict_feat(const mpxkit_pmodel *m, int core, const pm_feat *x,
			     const double *rate_gps, double power_w, mpxkit_prediction *out,
			     double *tau_out);

/* ---- fitting (fit.c) ----------------------------------------------------------------------------
 */

/* Weighted least squares with relative weights 1/y^2 (or none), through mpxkit_lsq_solve. */
typedef struct pm_design {
	size_t n, p, cap;
	double *x, *y, *w;
} pm_design;

int mpxkit__pm_design_add(pm_design *d, const double *row, double y, double w);
void mpxkit__pm_design_free(pm_design *d);
/* Fits b; ridge on standardised columns from column skip on (0: none).  -1 when n < p. */
int mpxkit__pm_design_fit(const pm_design *d, double ridge, size_t skip, double *b,
			  mpxkit_diag *diag);
/* The same minimising the sum of absolute weighted residuals (IRLS), not their squares. */
int mpxkit__pm_design_fit_robust(const pm_design *d, double ridge, size_t skip, double *b,
				 mpxkit_diag *diag);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Performance and energy on other core kinds and DVFS frequencies: datasets, models, evaluation,
 * recording and live prediction (doc/predict.md, doc/predict-format.md). */
#ifndef MPXKIT_PREDICT_H
#define MPXKIT_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Four things, in the order data flows:
 *
 * - a dataset (mpxkit_pdata): one row per run or per sample of a workload
 *   on one core kind at one frequency, with time, power, voltage and event
 *   counts; CSV as doc/predict-format.md specifies; importers turn the
 *   public GemStone and Nikov layouts into it;
 * - a model (mpxkit_pmodel): the fitted equations of doc/predict.md, one
 *   DVFS time model per core kind, one power model per (core kind,
 *   frequency), one CPI mapping per ordered pair of core kinds; a `.mpxp`
 *   file built on mpxkit/container.h;
 * - predictions: from one row measured on (core, f), the time, CPI, power,
 *   energy and instruction rate of the same work on every (core', f') the
 *   model knows;
 * - evaluation: workloads held out, never rows; MAPE per pair of
 *   configurations next to the baselines.
 *
 * Errors follow mpxkit/error.h: a negative code and one line in diag.
 */

/* ---- datasets ---------------------------------------------------------------------------------
 */

#define MPXKIT_PDATA_VERSION	1
#define MPXKIT_PDATA_MAX_EVENTS 256
#define MPXKIT_PDATA_MAX_NAME	256	   /* bytes of a workload, core kind or event name */
#define MPXKIT_PDATA_MAX_BYTES	(1u << 30) /* largest dataset file read */

/*
 * What an event measures, as far as the models care.  A dataset names the
 * event that plays each role in `# role.NAME=EVENT` metadata; models read
 * events only through roles and the power event list.  The ids are the
 * model file's (doc/predict.md).
 */
enum mpxkit_role {
	MPXKIT_ROLE_CYCLES = 0,	      /* core clock cycles while not idle */
	MPXKIT_ROLE_INSTRUCTIONS = 1, /* instructions (retired, or speculative where only that) */
	MPXKIT_ROLE_MISSES = 2,	      /* last-level cache misses, or the closest proxy */
	MPXKIT_ROLE_ICACHE = 3,	      /* L1 instruction-cache accesses */
	MPXKIT_ROLE_DCACHE = 4,	      /* L1 data-cache accesses */
	MPXKIT_ROLE_LOADS = 5,
	MPXKIT_ROLE_STORES = 6,
	MPXKIT_ROLE_BRANCHES = 7,
	MPXKIT_ROLE_INT_OPS = 8,
	MPXKIT_ROLE_FP_OPS = 9,
	MPXKIT_ROLE_COUNT
};

/* "cycles", "instructions", "misses", ...; NULL for a bad id. */
const char *mpxkit_role_name(int role);
/* The role of a name, or -MPXKIT_ENOENT. */
int mpxkit_role_lookup(const char *name);

/*
 * What time_s means for the rows of a dataset (`# time=`):
 * - ELAPSED: the wall time the counted work took (a run, or one sample of
 *   one); time - cycles / (f x threads) is idle or I/O time;
 * - WINDOW: a fixed measurement window unrelated to when the work ends
 *   (GemStone's 30 s loops): only rates per second mean anything, and the
 *   time of the work is its busy time, cycles / f.
 */
enum mpxkit_time_kind { MPXKIT_TIME_ELAPSED = 0, MPXKIT_TIME_WINDOW = 1 };

/*
 * What a row may hold (doc/predict-format.md, "Plausibility"): a clock of 1
 * MHz to 100 GHz, counts below 2^63 (above: a wrapped counter), and with
 * time=elapsed no more cycles than freq x time_s x threads x the margin.  A
 * row past them is refused, by the reader with FILE:LINE, by
 * mpxkit_pdata_append (the importers, record) with the workload.
 */
#define MPXKIT_PDATA_MIN_MHZ	  1.0
#define MPXKIT_PDATA_MAX_MHZ	  100000.0
#define MPXKIT_PDATA_CYCLE_MARGIN 2.0

typedef struct mpxkit_pdata_row {
	uint32_t workload; /* index into workloads[] */
	uint32_t core;	   /* index into cores[] */
	double freq_mhz;   /* > 0 */
	uint32_t threads;  /* >= 1 */
	uint32_t run;	   /* which execution; samples of one run share it */
	int64_t sample;	   /* sample index within the run, or -1 for a whole-run row */
	double time_s;	   /* NaN: missing */
	double power_w;	   /* mean power over the row; NaN: missing */
	double voltage_v;  /* NaN: missing */
} mpxkit_pdata_row;

/*
 * A dataset.  Fields are public for fast reading; change a dataset only
 * through the functions below.  values[row * n_events + e] is event e's
 * count in the row, NaN where the row did not count it.
 */
typedef struct mpxkit_pdata {
	char *name; /* `# dataset=`: the name evaluations report */
	int time_kind;
	size_t n_events;
	char **events;
	int role[MPXKIT_ROLE_COUNT]; /* event column of each role, or -1 */
	size_t n_workloads, n_cores;
	char **workloads, **cores;
	size_t n_rows;
	mpxkit_pdata_row *rows;
	double *values;
	size_t n_meta; /* other `# key=value` lines, in file order */
	char **meta_keys, **meta_values;
	size_t cap_rows, cap_names[2]; /* internal */
} mpxkit_pdata;

/* An empty dataset with the given events (unique names, <= MPXKIT_PDATA_MAX_EVENTS). */
int mpxkit_pdata_new(mpxkit_pdata **out, const char *name, int time_kind, const char *const *events,
		     size_t n_events, mpxkit_diag *diag);
void mpxkit_pdata_free(mpxkit_pdata *d); /* NULL is a no-op */

/* Names the event column that plays a role; -1 unsets it. */
int mpxkit_pdata_set_role(mpxkit_pdata *d, int role, int column, mpxkit_diag *diag);

/* Sets or replaces a `# key=value` pair (keys [A-Za-z0-9_.-]+, values without LF). */
int mpxkit_pdata_set_meta(mpxkit_pdata *d, const char *key, const char *value, mpxkit_diag *diag);
const char *mpxkit_pdata_get_meta(const mpxkit_pdata *d, const char *key);

/*
 * Appends a row: the workload and core kind by name (added on first use),
 * the other fields from row (its workload and core are ignored), and
 * n_events values (NaN: not counted).  Checks every field as the reader
 * does: -MPXKIT_EINVAL with a line naming the field.
 */
int mpxkit_pdata_append(mpxkit_pdata *d, const char *workload, const char *core,
			const mpxkit_pdata_row *row, const double *values, mpxkit_diag *diag);

/* Index of a workload, core kind or event by name, or -MPXKIT_ENOENT. */
int mpxkit_pdata_workload(const mpxkit_pdata *d, const char *name);
int mpxkit_pdata_core(const mpxkit_pdata *d, const char *name);
int mpxkit_pdata_event(const mpxkit_pdata *d, const char *name);

/*
 * Reads a dataset (plain or gzip) through the bounded reader.  A bad file
 * fails with "FILE:LINE: reason" and -MPXKIT_EFORMAT (-MPXKIT_ERANGE for an
 * oversized file or line); no partial dataset is returned.
 */
int mpxkit_pdata_read(const char *path, mpxkit_pdata **out, mpxkit_diag *diag);
/* The same from text in memory; name labels the diag line. */
int mpxkit_pdata_parse(const char *name, const char *buf, size_t len, mpxkit_pdata **out,
		       mpxkit_diag *diag);

/* Writes the CSV whole through mpxkit_outfile ("-" is stdout). */
int mpxkit_pdata_write(const mpxkit_pdata *d, const char *path, mpxkit_diag *diag);
/* The CSV text in memory (*text malloc'd). */
int mpxkit_pdata_format(const mpxkit_pdata *d, char **text, size_t *len, mpxkit_diag *diag);

/* ---- importers --------------------------------------------------------------------------------
 */

/*
 * The public layouts of doc/predict-format.md, "Importers":
 * - "gemstone": Powmon CSVs of Walker et al. (tab-separated, a pandas index
 *   column), one row each, A15 events summed over cores 4-7;
 * - "nikov": Nikov and Nunez-Yanez's sample files (`.data`, told apart by
 *   their header), joined per (benchmark, frequency, run) with the run times
 *   of the runtime_*.csv table given with them, and the cross-core run-time
 *   table (time only).
 * The dataset is named `name` (NULL: the first file's base name without its
 * extension).  Bad input fails with "FILE:LINE: reason".
 */
int mpxkit_pdata_import(const char *from, const char *const *paths, size_t n_paths,
			const char *name, mpxkit_pdata **out, mpxkit_diag *diag);

/* One importer over texts in memory (fuzzing, tests): names[i] labels texts[i]. */
int mpxkit_pdata_import_buffers(const char *from, const char *const *names,
				const char *const *texts, const size_t *lens, size_t n,
				const char *name, mpxkit_pdata **out, mpxkit_diag *diag);

/* ---- models -----------------------------------------------------------------------------------
 */

#define MPXKIT_PMODEL_VERSION	  1
#define MPXKIT_PMODEL_MAX_CONFIGS 1024
#define MPXKIT_PMODEL_MAX_COEFS	  64
/* What a model reads: the roles, then up to 38 more events by name for power. */
#define MPXKIT_PMODEL_MAX_INPUTS 48

/* Eq. (1), memory time per instruction from misses (doc/predict.md). */
enum mpxkit_met_form {
	MPXKIT_MET_NONE = 0,   /* no memory time: core time scales as f/f' (idle still held) */
	MPXKIT_MET_LINEAR = 1, /* MET = mu0 x misses */
	MPXKIT_MET_MLP = 2,    /* MET = misses x (mu0 + mu1 x MPKI): overlapping misses */
	MPXKIT_MET_AUTO = 3,   /* training only: the form with the lowest inner CV error */
	MPXKIT_MET_CPI = 4, /* MET = mu0 + mu1 x CPI: stall cycles above a base CPI (no misses) */
};

/* Eq. (7), power. */
enum mpxkit_power_form {
	MPXKIT_POWER_PER_FREQ = 1, /* P = a0(f) + sum_k a_k(f) r_k, one fit per frequency */
	MPXKIT_POWER_VOLTAGE =
	    2, /* P = a0 + a1 V + a2 V^2 f + sum_k a_k V^2 r_k, all frequencies */
	MPXKIT_POWER_PER_FREQ_V = 3, /* P = a0(f) + a1(f) V + sum_k a_k(f) V^2 r_k, per frequency */
};

/* Eq. (2), the CPI of the second core kind. */
enum mpxkit_xcore_form {
	MPXKIT_XCORE_RATIO = 1,	   /* CPI' = g1 x CPI (the constant-ratio baseline as a model) */
	MPXKIT_XCORE_CPI = 2,	   /* CPI' = g0 + g1 x core CPI + g8 x MET f' */
	MPXKIT_XCORE_CPI_MPKI = 3, /* ... + g2 x MPKI */
	MPXKIT_XCORE_AUTO = 4,	   /* training only: the form with the lowest inner CV error */
};

typedef struct mpxkit_pmodel_options {
	int met_form;	/* enum mpxkit_met_form; default AUTO */
	int power_form; /* enum mpxkit_power_form; default PER_FREQ_V */
	int xcore_form; /* enum mpxkit_xcore_form; default AUTO */
	/*
	 * Power regressors: rates of these events, each a role name ("cycles")
	 * or an event name as the datasets spell it; "all" is every event of
	 * the datasets.  NULL: the default (doc/predict.md).
	 */
	const char *const *power_events;
	size_t n_power_events;
	double power_ridge; /* on standardised rates; < 0: the default */
	int unweighted;	    /* 1: ordinary least squares, not relative error (for comparison) */
	int no_anchor;	    /* evaluation: power elsewhere from the counters alone (comparison) */
	int robust;	    /* 1: power fits minimise the absolute relative error, not its square */
	/* Provenance kept in the model (`data`, `command`); may be NULL. */
	const char *data;
	const char *command;
} mpxkit_pmodel_options;

void mpxkit_pmodel_options_default(mpxkit_pmodel_options *opt);

/* Form names as options spell them: "none", "linear", "mlp"; "per-freq", "voltage"; ... */
int mpxkit_met_form_parse(const char *text);
int mpxkit_power_form_parse(const char *text);
int mpxkit_xcore_form_parse(const char *text);
const char *mpxkit_met_form_name(int form);
const char *mpxkit_power_form_name(int form);
const char *mpxkit_xcore_form_name(int form);

typedef struct mpxkit_pmodel mpxkit_pmodel;

/*
 * Fits a model on the rows of the datasets whose workload passes keep
 * (NULL: all): keep(arg, dataset, workload) returns nonzero to use it.
 * Fails with -MPXKIT_EINVAL when no part can be fitted (no pair of
 * frequencies, no power, ...), naming what is missing.
 */
typedef int (*mpxkit_pdata_filter)(void *arg, const mpxkit_pdata *d, size_t workload);
int mpxkit_pmodel_train(const mpxkit_pdata *const *sets, size_t n_sets,
			const mpxkit_pmodel_options *opt, mpxkit_pdata_filter keep, void *arg,
			mpxkit_pmodel **out, mpxkit_diag *diag);
void mpxkit_pmodel_free(mpxkit_pmodel *m); /* NULL is a no-op */

/* The `.mpxp` file (doc/predict.md, "Model file"): written whole, loaded strictly. */
int mpxkit_pmodel_save(const mpxkit_pmodel *m, const char *path, mpxkit_diag *diag);
int mpxkit_pmodel_load(const char *path, mpxkit_pmodel **out, mpxkit_diag *diag);
int mpxkit_pmodel_load_buffer(const void *buf, size_t len, const char *name, mpxkit_pmodel **out,
			      mpxkit_diag *diag);
int mpxkit_pmodel_encode(const mpxkit_pmodel *m, unsigned char **buf, size_t *len,
			 mpxkit_diag *diag);

/* A (core kind, frequency) the model predicts for. */
typedef struct mpxkit_pconfig {
	const char *core;
	double freq_mhz;
	double voltage_v; /* mean seen in training; NaN when unknown */
} mpxkit_pconfig;

size_t mpxkit_pmodel_n_configs(const mpxkit_pmodel *m);
const mpxkit_pconfig *mpxkit_pmodel_config(const mpxkit_pmodel *m, size_t i);
/* The event that plays a role, or NULL. */
const char *mpxkit_pmodel_role_event(const mpxkit_pmodel *m, int role);
/* The events the model reads: input i's event name (NULL for an unset role), i < n_inputs. */
size_t mpxkit_pmodel_n_inputs(const mpxkit_pmodel *m);
const char *mpxkit_pmodel_input(const mpxkit_pmodel *m, size_t i);
/* A `# key=value` the model carries (provenance: data, command), or NULL. */
const char *mpxkit_pmodel_meta(const mpxkit_pmodel *m, const char *key);

/*
 * A human-readable description of every fitted equation with its
 * coefficients (for `mpxkit predict train -v` and the docs); malloc'd.
 */
char *mpxkit_pmodel_describe(const mpxkit_pmodel *m);

/* ---- predictions ------------------------------------------------------------------------------
 */

/*
 * Where the model's inputs are in some input's columns: col[i] is the
 * column of the model's input i (mpxkit_pmodel_input), or -1.  Built once
 * per input, then used for every row.
 */
typedef struct mpxkit_pbinding {
	int col[MPXKIT_PMODEL_MAX_INPUTS]; /* roles first, in role order, then power events */
	uint64_t missing; /* bit per input the model would use but the input lacks */
} mpxkit_pbinding;

/*
 * By event names (live counting, traces): the model's role events looked
 * up in events[].  By a dataset: its own roles.  Either fails with
 * -MPXKIT_ENOENT when cycles or instructions are missing; other missing
 * roles are told in missing, and what needs them predicts NaN.
 */
int mpxkit_pbinding_events(const mpxkit_pmodel *m, const char *const *events, size_t n_events,
			   mpxkit_pbinding *out, mpxkit_diag *diag);
int mpxkit_pbinding_pdata(const mpxkit_pmodel *m, const mpxkit_pdata *d, mpxkit_pbinding *out,
			  mpxkit_diag *diag);

/* The model's index of a core kind, or -MPXKIT_ENOENT. */
int mpxkit_pmodel_core(const mpxkit_pmodel *m, const char *name);

/* One observation: what was measured on core kind `core` (the model's index) at freq_mhz. */
typedef struct mpxkit_pobs {
	int core;
	double freq_mhz;
	uint32_t threads;
	double time_s;	/* the period's wall time (ELAPSED) or window (WINDOW); NaN: unknown */
	int time_kind;	/* enum mpxkit_time_kind */
	double power_w; /* power measured over the period; NaN: not measured */
	const double *values; /* the bound input's columns; NaN: not counted */
} mpxkit_pobs;

/*
 * The observation of one dataset row, as mpxkit_predict takes it (its measured power anchors);
 * -MPXKIT_ENOENT with a line naming the row when the model lacks its core kind.
 */
int mpxkit_pobs_row(const mpxkit_pmodel *m, const mpxkit_pdata *d, size_t row, mpxkit_pobs *out,
		    mpxkit_diag *diag);

/* The predicted figures of one (core kind, frequency); NaN where the model cannot tell. */
typedef struct mpxkit_prediction {
	double time_s;	 /* time of the observed work there */
	double cpi;	 /* cycles per instruction there */
	double power_w;	 /* mean power while it runs there */
	double energy_j; /* power x time */
	double ips;	 /* performance: instructions per second (eq. 6) */
} mpxkit_prediction;

/*
 * Predicts for every configuration of the model: out[i] for
 * mpxkit_pmodel_config(m, i).  Allocates nothing.  -MPXKIT_EINVAL when the
 * observation has no instructions or cycles or a frequency <= 0;
 * -MPXKIT_ENOENT when the model does not know the core kind.
 */
int mpxkit_predict(const mpxkit_pmodel *m, const mpxkit_pbinding *b, const mpxkit_pobs *obs,
		   mpxkit_prediction *out, mpxkit_diag *diag);

/* ---- evaluation -------------------------------------------------------------------------------
 */

/*
 * Which workloads are held out (doc/predict.md, "Evaluation"):
 * - HASH: workload w is a test workload iff fnv1a64(w) mod 100 < percent;
 * - FILE: the authors' split file (two tab-separated columns, train and
 *   test, a '#' header): listed test workloads are held out, listed train
 *   workloads train, workloads in neither are left out and counted;
 * - LOO: every workload in turn is held out, the model trained on the rest.
 * With validate set, only the training part is used, held out one workload
 * at a time (leave-one-out): the figures that choose forms and settings.
 */
enum mpxkit_split_kind { MPXKIT_SPLIT_HASH = 1, MPXKIT_SPLIT_FILE = 2, MPXKIT_SPLIT_LOO = 3 };

typedef struct mpxkit_split {
	int kind;
	unsigned percent; /* HASH */
	size_t n_train, n_test;
	char **train, **test; /* FILE: the listed names */
	int validate;
} mpxkit_split;

/* "hash", "hash:PCT", "loo", or a split file's path; with validate as given. */
int mpxkit_split_parse(const char *spec, int validate, mpxkit_split **out, mpxkit_diag *diag);
void mpxkit_split_free(mpxkit_split *s);
/* 1 when workload w is a test workload of the split (HASH, FILE); 0 train; -1 left out. */
int mpxkit_split_role(const mpxkit_split *s, const char *workload);
/* The FNV-1a 64-bit hash the HASH split uses. */
uint64_t mpxkit_split_hash(const char *s);

enum mpxkit_eval_target {
	MPXKIT_TARGET_TIME = 0,
	MPXKIT_TARGET_POWER = 1,
	MPXKIT_TARGET_ENERGY = 2
};
const char *mpxkit_eval_target_name(int target);

/* One line of the result: MAPE of one target between two configurations of one dataset. */
typedef struct mpxkit_eval_row {
	const char *dataset;
	int target;	       /* enum mpxkit_eval_target */
	char from[96], to[96]; /* "A15@1000"; "adjacent", "extreme", "all" in summary rows */
	int summary;	       /* 1: over several pairs (adjacent, extreme, all, cross) */
	double mape;
	const char *baseline; /* "f/f'", "cpi-ratio", "E(V'/V)^2", "P(V'/V)^2 f'/f", "mean" */
	double baseline_mape;
	size_t n;
} mpxkit_eval_row;

/* One held-out prediction, for plots. */
typedef struct mpxkit_eval_point {
	int target;
	size_t row;	      /* index into rows[] of its pair */
	const char *workload; /* the dataset's name of it */
	uint32_t threads;
	double measured, predicted, baseline;
} mpxkit_eval_point;

typedef struct mpxkit_eval_result {
	size_t n_rows;
	mpxkit_eval_row *rows;
	size_t n_points;
	mpxkit_eval_point *points;
	size_t n_test_workloads, n_left_out; /* held out; in neither part of a split file */
	size_t n_folds;
	double train_seconds; /* CPU time of all the fits */
} mpxkit_eval_result;

int mpxkit_predict_eval(const mpxkit_pdata *const *sets, size_t n_sets, const mpxkit_split *split,
			const mpxkit_pmodel_options *opt, mpxkit_eval_result **out,
			mpxkit_diag *diag);
void mpxkit_eval_result_free(mpxkit_eval_result *r);

/* ---- the machine: core kinds, frequencies, energy ---------------------------------------------
 */

/*
 * What `predict record` and `--live` need from the machine, read under a
 * root directory (NULL or "": "/", the real one; tests give a fake tree):
 * core kinds from hwloc's cpukinds, frequencies from cpufreq
 * (ROOT/sys/devices/system/cpu/cpuN/cpufreq), energy from powercap
 * (ROOT/sys/class/powercap/NAME/energy_uj, top-level zones).  hwloc reads
 * the tree its own HWLOC_FSROOT names; the CLI sets it to the same root
 * (MPXKIT_SYSFS_ROOT) before probing.  Names are hwloc's CoreType, or
 * "kindN" in hwloc's order (least efficient first).
 */
#define MPXKIT_PLATFORM_MAX_KINDS 8
#define MPXKIT_PLATFORM_MAX_FREQS 64
#define MPXKIT_PLATFORM_MAX_ZONES 16
#define MPXKIT_PLATFORM_MAX_CPUS  1024

typedef struct mpxkit_core_kind {
	char name[64];	/* "kind0" ... ordered by efficiency, or hwloc's CoreType/model */
	int efficiency; /* hwloc's rank, -1 unknown */
	size_t n_cpus;
	int cpus[MPXKIT_PLATFORM_MAX_CPUS]; /* logical CPU numbers */
	int cpufreq;			    /* 1 when cpufreq governs them */
	size_t n_freqs;
	double freq_mhz[MPXKIT_PLATFORM_MAX_FREQS]; /* ascending */
} mpxkit_core_kind;

typedef struct mpxkit_energy_zone {
	char name[64]; /* powercap's name: "package-0", "core", "psys" */
	char path[512];
	double max_uj; /* where energy_uj wraps; 0 unknown */
} mpxkit_energy_zone;

typedef struct mpxkit_platform {
	char root[512];
	size_t n_kinds;
	mpxkit_core_kind kinds[MPXKIT_PLATFORM_MAX_KINDS];
	size_t n_zones;
	mpxkit_energy_zone zones[MPXKIT_PLATFORM_MAX_ZONES];
	char missing[256]; /* the first missing piece, one line; "" when complete */
} mpxkit_platform;

/* Probes; only failures to read what exists are errors: a missing piece is told in missing. */
int mpxkit_platform_probe(mpxkit_platform *p, const char *root, mpxkit_diag *diag);

/* Pins every CPU of a kind to freq_mhz (userspace governor, or min = max); restores with NULL. */
typedef struct mpxkit_freq_saved mpxkit_freq_saved;
int mpxkit_platform_set_freq(const mpxkit_platform *p, size_t kind, double freq_mhz,
			     mpxkit_freq_saved **saved, mpxkit_diag *diag);
int mpxkit_platform_restore(mpxkit_freq_saved *saved, mpxkit_diag *diag); /* frees it */

/* Each zone's energy counter, uj[0 .. n_zones-1] in microjoules. */
int mpxkit_platform_energy(const mpxkit_platform *p, double *uj, mpxkit_diag *diag);
/* Joules between two readings, summed over zones; a counter that wrapped once is allowed for. */
double mpxkit_platform_energy_delta(const mpxkit_platform *p, const double *before,
				    const double *after);

/* The current frequency of one CPU (scaling_cur_freq), MHz. */
int mpxkit_platform_cur_freq(const mpxkit_platform *p, int cpu, double *mhz, mpxkit_diag *diag);

/* ---- recording and live prediction ------------------------------------------------------------
 */

typedef struct mpxkit_record_options {
	const mpxkit_platform *platform;
	mpxkit_sched_config
	    sched; /* the engine's settings; sched.replay set: counts from a trace */
	const char *const *events; /* the events to count */
	size_t n_events;
	const char *roles[MPXKIT_ROLE_COUNT]; /* event of each role, or NULL */
	const char *workload;		      /* the workload's name in the dataset */
	unsigned runs;			      /* executions per configuration, >= 1 */
	unsigned threads;		      /* the dataset's threads column; 0: 1 */
	/* Called before each run; may be NULL. */
	void (*progress)(void *arg, size_t done, size_t total, const char *core, double freq_mhz);
	void *arg;
} mpxkit_record_options;

/*
 * Runs argv once per run at every frequency of every core kind, pinned to
 * that kind's CPUs, with the events counted by the engine and the energy
 * read from powercap; appends one whole-run row per execution to *out (a
 * new dataset).  Frequencies are restored at the end, also on failure.
 * -MPXKIT_ENOSUPP, and the missing piece in diag, when the platform lacks
 * core kinds, cpufreq or energy.  A run that exits nonzero is an error.
 */
int mpxkit_predict_record(const mpxkit_record_options *opt, char *const argv[], mpxkit_pdata **out,
			  mpxkit_diag *diag);

typedef struct mpxkit_live_options {
	const mpxkit_pmodel *model;
	mpxkit_sched_config sched;
	const char *core; /* where it runs; NULL: from the platform */
	double freq_mhz;  /* <= 0: from the platform */
	const mpxkit_platform *platform;
	uint64_t period_ns; /* default 100 ms */
	unsigned threads;   /* threads the command runs; 0: 1 */
	/*
	 * Called for each period with its predictions (n = the model's
	 * configs), in the engine's rotation thread while the command runs and
	 * in the caller's for the last, shorter period.  It must not block long.
	 */
	void (*on_period)(void *arg, size_t period, double t0_s, double t1_s,
			  const mpxkit_prediction *pred, size_t n);
	void *arg;
} mpxkit_live_options;

/*
 * Runs argv with the model's events counted by the engine and calls
 * on_period once per period: the whole rotations nearest to period_ns
 * (G slices each; with a replay trace, of its virtual clock).  The last
 * period may be shorter.  *wstatus gets the child's wait status.
 */
int mpxkit_predict_live(const mpxkit_live_options *opt, char *const argv[], int *wstatus,
			mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to lib/spacetime: events, metrics, code spaces and the screening, between the analyser's
 * files. */
#ifndef MPXKIT_SPACETIME_IMPL_H
#define MPXKIT_SPACETIME_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/spacetime.h"
#include "u64map.h"

/* ---- events (metrics.c) ---------------------------------------------------------------------- */

/* The events the metrics know, whatever the source calls them. */
typedef enum st_event {
	EV_IR,
	EV_DR,
	EV_DW,
	EV_I1MR,
	EV_D1MR,
	EV_D1MW,
	EV_ILMR,
	EV_DLMR,
	EV_DLMW,
	EV_BC,
	EV_BCM,
	EV_BI,
	EV_BIM,
	EV_SAMPLES,
	EV_CPU_CLOCK,
	EV_TASK_CLOCK,
	EV_FAULTS,
	EV_CSW,
	EV_CYCLES,
	EV_INSTRUCTIONS,
	EV_BRANCHES,
	EV_BRANCH_MISSES,
	EV_CACHE_REFS,
	EV_CACHE_MISSES,
	N_EV
} st_event;

#define EVB(e) (UINT32_C(1) << (e))

/* How a profile's events map onto the known ones, and what a row costs. */
typedef struct st_events {
	size_t n;	   /* the profile's events */
	int *kind;	   /* n: st_event, or -1 for an event no metric uses */
	int index[N_EV];   /* the profile's column of each known event, or -1 */
	double *cost_coef; /* n: cost = sum coef x count */
	int weight_col;	   /* column of the weight (Ir or samples), -1: the cost is the weight */
	int cost_is_ns;	   /* perf: cost in ns; callgrind: in estimated cycles */
} st_events;

int st_events_init(st_events *ev, const mpxkit_profile *p);
void st_events_free(st_events *ev);

/* Sum of the events in mask over a row of counts; NaN when one of them is missing. */
double st_event_sum(const st_events *ev, uint32_t mask, const uint64_t *sums);

/* ---- metrics (metrics.c) --------------------------------------------------------------------- */

typedef struct st_metric_def {
	int metric;    /* mpxkit_spacetime_metric */
	uint32_t num;  /* events summed into the numerator */
	uint32_t base; /* events summed into the base */
	double scale;
	int cls;       /* mpxkit_spacetime_class, -1: shown, never screened */
	double weight; /* cost of one numerator event: in cycles, or in ns when weight_ns */
	int weight_ns;
	double floor;
	int cpi;	  /* screened with the cpi factor */
	const char *what; /* "D1 misses", for directions */
} st_metric_def;

/* The definition of metric m that applies to these events, or NULL. */
const st_metric_def *st_metric_def_for(const st_events *ev, int metric);

/* The metric's value over a row of sums, NaN when undefined (missing events or a zero base). */
double st_metric_value(const st_events *ev, int metric, const uint64_t *sums);

/* The cost of one numerator event in the cost's unit, NaN when it cannot be said. */
double st_metric_weight(const st_events *ev, const st_metric_def *d, const uint64_t *program);

/* The top-down nodes the absolute thresholds come from (doc/spacetime.md, "Absolute thresholds").
 */
typedef enum st_category_id {
	ST_BAD_SPECULATION,
	ST_FRONTEND_BOUND,
	ST_MEMORY_BOUND,
	ST_N_CATEGORIES
} st_category_id;

typedef struct st_category {
	const char *name; /* the level-1 (Memory_Bound: level-2) node */
	double threshold; /* of the summed stall shares of its classes */
} st_category;

typedef struct st_absolute {
	int cls; /* mpxkit_spacetime_class */
	st_category_id category;
	const char *node;      /* the class's own node */
	double threshold;      /* of the class's stall share */
	double per_kilo_instr; /* its events per 1000 instructions must exceed this; 0: no rate */
} st_absolute;

/* The absolute rule of a class, or NULL when it has none. */
const st_absolute *st_absolute_for(int cls);
const st_category *st_category_of(const st_absolute *a);

/* Instructions in a row of sums (Ir, or perf's instructions), NaN when the profile has none. */
double st_instructions(const st_events *ev, const uint64_t *sums);

/* Nonzero for code that waits on other threads (doc/spacetime.md, "Threads"). */
int st_is_wait_function(const char *function, const char *object);

/* ---- code spaces (spaces.c) ------------------------------------------------------------------ */

typedef struct st_space {
	uint32_t function;
	uint64_t lo, hi; /* inclusive */
	int loop;
	uint32_t next; /* the function's next space, UINT32_MAX at the end */
} st_space;

typedef struct st_spaces {
	st_space *v;
	size_t n, cap;
	uint32_t *fn_head; /* per function: its first space, UINT32_MAX when none */
	uint32_t *fn_tail;
	size_t n_fn;
	double overlap;
	/* scratch for one block */
	void *keys, *spans, *inst;
	size_t cap_keys, cap_spans, cap_inst;
	uint32_t *stack;
	size_t cap_stack;
} st_spaces;

void st_spaces_init(st_spaces *t, double overlap);
void st_spaces_free(st_spaces *t);

/*
 * The space of every row of block b (out[i] for row i), founding spaces as
 * needed.  use_jumps: split functions along backward jumps (callgrind); else
 * one instance per function (perf).  0 or -MPXKIT_ENOMEM.
 */
int st_spaces_assign(st_spaces *t, const mpxkit_profile *p, const mpxkit_profile_block *b,
		     int use_jumps, uint32_t *out);

/* ---- screening (screen.c) -------------------------------------------------------------------- */

/* What screen.c needs of the passes, beside the result itself. */
typedef struct st_screen_input {
	const st_events *ev;
	const uint64_t *program;	 /* program sums, n events */
	const uint64_t *space_sums;	 /* n_spaces x n events, selected spaces in output order */
	const double *space_cost;	 /* n_spaces */
	const double *thread_space_cost; /* n_threads x n_spaces */
	const double *thread_cost;	 /* n_threads */
	const uint64_t *pattern_sums;	 /* n_patterns x n events: of `to`, after the transition */
	/* the hottest code of each space per event, for file:line */
	void (*hot_line)(void *arg, size_t space, uint32_t mask, const char **file, uint32_t *line);
	void *hot_arg;
} st_screen_input;

/* Fills r->findings (ranked) from the sums; 0 or -MPXKIT_ENOMEM. */
int st_screen(mpxkit_spacetime *r, const st_screen_input *in);

/* ---- collection (collect.c, collect_perf.c, symbols.c) --------------------------------------- */

/* The command and exit_status metadata of a profile. */
int st_add_run_meta(mpxkit_profile_writer *w, char *const argv[], const mpxkit_record_status *st,
		    mpxkit_diag *diag);

/* mpxkit_profile_run's perf source. */
int st_perf_run(const mpxkit_profile_options *o, char *const argv[], const char *path,
		mpxkit_profile_summary *sum, mpxkit_diag *diag);

typedef struct st_symbols st_symbols;

/* What libdwfl says of one address; strings valid until st_symbols_close. */
typedef struct st_symbol {
	uint64_t address;     /* in the ELF image; the file offset when it is not ELF */
	const char *function; /* NULL when no symbol covers it */
	uint64_t lo, size;    /* the symbol's range, size 0 when unknown */
	const char *file;     /* source file, NULL when no line information */
	uint32_t line;
} st_symbol;

int st_symbols_open(st_symbols **s);
void st_symbols_close(st_symbols *s);
/* The address at file offset `offset` of the ELF file at path; 0 or -MPXKIT_ENOMEM. */
int st_symbols_lookup(st_symbols *s, const char *path, uint64_t offset, st_symbol *out);

#endif

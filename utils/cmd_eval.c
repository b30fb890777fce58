/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit eval: simulate multiplexing on ground-truth traces, run the estimators, score them. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/estimator.h"
#include "mpxkit/metric.h"
#include "mpxkit/mpx.h"
#include "mpxkit/schedule.h"
#include "mpxkit/trace.h"

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "svg.h"

#define MAX_ESTIMATORS	 32
#define MAX_SCHEDULES	 8
#define MAX_MERGES	 16
#define DEFAULT_COUNTERS 4
#define RA_THRESHOLD	 0.9
/*
 * DTW's default Sakoe-Chiba half-width, in rotations: time grows as
 * n (2 w + 1), linear in the trace.  On data/corpus (up to 124 rotations) it
 * moves 3 of 1,690 costs against the full matrix and no ranking
 * (doc/evaluation.md); --band full is the whole matrix.
 */
#define DEFAULT_BAND 72

typedef struct input {
	char *path;
	mpxkit_trace *trace;
	int dropped;	  /* removed by the run filter of --clean */
	size_t max_steps; /* 0: all */
} input;

typedef struct score {
	size_t input;
	const char *event; /* points into the input's trace */
	size_t estimator;  /* column of the table: schedule * n_estimators + estimator */
	double ra, total_accuracy, dtw;
	/*
	 * The intervals (doc/evaluation.md, "Intervals"): windows covered, the
	 * total's, the windows' median width and the total's, each relative.
	 */
	double coverage, half_width, total_half_width;
	size_t windows, covered;
	int total_in;
	size_t merge; /* which --merge value: the steps per slice were merges[merge] */
} score;

/* One schedule of --schedule: a registry spec, or a group file read as the groups schedule. */
typedef struct schedule_arg {
	const char *spec;      /* the registry spec (label), or NULL: groups of a file */
	char label[160];       /* its name in the output: the spec, or the file */
	mpxkit_groups *groups; /* a group file's, owned */
} schedule_arg;

/* One plotted series: OCOE or one estimator's estimates of the plotted event. */
typedef struct plot_series {
	const char *label;
	double *values;
} plot_series;

typedef struct eval {
	const char *cmd;
	size_t counters;
	const char *reference;
	mpxkit_groups *groups; /* --groups FILE: the groups schedule when --schedule is not given */
	const char *groups_path;
	schedule_arg schedules[MAX_SCHEDULES];
	size_t n_schedules;
	size_t window; /* --window W; 0: G */
	int clean_tail, clean_runs;
	size_t from_step; /* --from-step: the steps before it are not counted */
	size_t merges[MAX_MERGES]; /* --merge: steps per slice, one evaluation each */
	size_t n_merges;
	size_t cur_merge; /* the --merge value being scored */
	cli_format format;
	size_t band;
	double level;  /* --level: the intervals' */
	int anchor;    /* --anchor: each run's totals anchored to fixed's (doc/estimators.md) */
	int relations; /* --relations: the kernel's relations between events, on the totals */
	const char *plot, *plot_trace, *plot_event;
	int plot_log; /* y axis on log10(1+x), the scale DTW compares */
	const char *estimators[MAX_ESTIMATORS];
	size_t n_estimators;
	mpxkit_estimator_options options; /* the model file of a learned estimator */

	input *inputs;
	size_t n_inputs;
	score *scores;
	size_t n_scores, cap_scores;

	plot_series *series; /* 1 + n_schedules x n_estimators when plotting */
	size_t plot_points;
	size_t plot_groups;
	size_t plot_window;	 /* W */
	unsigned char *plot_counted; /* n_schedules rows of plot_points x W: slice counted the event */

	/* Progress bar on a terminal once the work takes more than a second, redrawn 5 times a second. */
	struct timespec started;
	double progress_drawn; /* seconds since started at the last redraw */
	int progress_shown;
	size_t progress_done, progress_total; /* estimators run, of inputs x schedules x estimators */
} eval;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit eval [OPTIONS] TRACE...|DIR...\n"
		"       mpxkit eval --plot OUT.svg --trace TRACE --event EVENT [OPTIONS]\n"
		"\n"
		"Simulate multiplexing on ground-truth traces (one row = one slice), estimate\n"
		"every event of every rotation and score the estimates against the true\n"
		"per-rotation counts (doc/evaluation.md).  A DIR stands for its *.csv and\n"
		"*.csv.gz files; - is standard input (once).\n"
		"\n"
		"Options:\n"
		"  -c, --counters C        events counted per slice (default %d)\n"
		"  -e, --estimators LIST   comma-separated estimators (default: fixed,\n"
		"                          linear-dira,linear-tam,cam,dcam, and ref-rate with\n"
		"                          --reference); aliases: linear = linear-dira,\n"
		"                          nonlinear = cam\n"
		"  -m, --model FILE        model file of the learned estimators, mlp or bigru\n"
		"                          (default: each one's model installed with mpxkit)\n"
		"  -r, --reference EVENT   event counted in every slice, outside the groups\n"
		"  -g, --groups FILE       group file: one group per line (default: column\n"
		"                          order, C per group)\n"
		"  -s, --schedule LIST     comma-separated schedules, each a name, NAME:KEY=VALUE\n"
		"                          or a group file (default: round-robin, or the\n"
		"                          --groups file): round-robin, groups, prior,\n"
		"                          adaptive (doc/schedules.md)\n"
		"  -w, --window W          slices per scored window (default: G = ceil(E/C),\n"
		"                          a rotation)\n"
		"      --clean[=PARTS]     the paper's cleaning; PARTS is 'tail', 'runs' or\n"
		"                          'tail,runs' (the default)\n"
		"      --from-step N       count from step N of each trace on, as when\n"
		"                          counting starts after a program's start-up\n"
		"                          (default 0)\n"
		"      --merge LIST        comma-separated steps per slice: K consecutive\n"
		"                          steps of each trace make one slice, and each K is\n"
		"                          evaluated (default 1)\n"
		"  -f, --format FORMAT     table (default), csv or json\n"
		"      --band W|full       DTW within W rotations of the diagonal (a\n"
		"                          Sakoe-Chiba band, default %d), or the full\n"
		"                          matrix (time grows with the trace's square)\n"
		"      --level L           level of the estimates' intervals, above 0 and at\n"
		"                          most 0.99 (default 0.9)\n"
		"      --anchor            scale each estimator's windows of each event so\n"
		"                          that they sum to fixed's total of the run\n"
		"      --relations         apply the relations the kernel keeps between\n"
		"                          events (PAGE-FAULTS = MINOR + MAJOR, ...) to\n"
		"                          each run's totals (after --anchor)\n"
		"      --plot OUT.svg      plot the OCOE series and each estimator's series of\n"
		"                          --event in --trace\n"
		"      --trace TRACE       the trace to plot\n"
		"      --event EVENT       the event to plot\n"
		"      --log               plot log10(1 + count), the scale of DTW\n"
		"  -l, --list              list the estimators and the schedules and exit\n"
		"  -h, --help              show this help and exit\n"
		"\n"
		"Exit status: 0 success, 1 usage error, 2 bad input or failure.\n",
		DEFAULT_COUNTERS, DEFAULT_BAND);
}

/* ---- options ----------------------------------------------------------------------------- */

static int add_estimator(eval *ev, const char *name, size_t len)
{
	const mpxkit_estimator_info *info;
	char buf[64];

	if (len == 0 || len >= sizeof buf)
		return cli_usage_error(ev->cmd, "bad estimator name '%.*s'", (int)len, name);
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (mpxkit_estimator_lookup(buf, &info) < 0)
		return cli_usage_error(ev->cmd, "unknown estimator '%s' (see 'mpxkit eval --list')",
				       buf);
	for (size_t i = 0; i < ev->n_estimators; i++)
		if (strcmp(ev->estimators[i], info->name) == 0)
			return 0;
	if (ev->n_estimators == MAX_ESTIMATORS)
		return cli_usage_error(ev->cmd, "too many estimators");
	ev->estimators[ev->n_estimators++] = info->name;
	return 0;
}

/* Calls add for each item of a comma-separated list, in order; stops at the first failure. */
static int for_each_item(eval *ev, const char *list, int (*add)(eval *, const char *, size_t))
{
	for (const char *p = list;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		int rc = add(ev, p, len);
		if (rc != 0)
			return rc;
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
}

static int parse_estimators(eval *ev, const char *list)
{
	ev->n_estimators = 0;
	return for_each_item(ev, list, add_estimator);
}

/* One --merge value: steps per slice, a whole number from 1 to 2^20, each given once. */
static int add_merge(eval *ev, const char *text, size_t len)
{
	char buf[16];
	long v;

	if (len == 0 || len >= sizeof buf)
		return cli_usage_error(ev->cmd, "--merge takes whole numbers >= 1, comma-separated");
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (cli_parse_long(buf, 1, 1L << 20, &v) != 0)
		return cli_usage_error(ev->cmd, "--merge takes whole numbers >= 1, comma-separated");
	for (size_t i = 0; i < ev->n_merges; i++)
		if (ev->merges[i] == (size_t)v)
			return cli_usage_error(ev->cmd, "--merge: %ld given twice", v);
	if (ev->n_merges == MAX_MERGES)
		return cli_usage_error(ev->cmd, "--merge: at most %d values", MAX_MERGES);
	ev->merges[ev->n_merges++] = (size_t)v;
	return 0;
}

static int parse_clean(eval *ev, const char *parts)
{
	if (parts == NULL || strcmp(parts, "tail,runs") == 0 || strcmp(parts, "runs,tail") == 0) {
		ev->clean_tail = ev->clean_runs = 1;
	} else if (strcmp(parts, "tail") == 0) {
		ev->clean_tail = 1;
	} else if (strcmp(parts, "runs") == 0) {
		ev->clean_runs = 1;
	} else {
		return cli_usage_error(ev->cmd, "--clean takes 'tail', 'runs' or 'tail,runs'");
	}
	return 0;
}

/*
 * Builds estimator name for a small layout with a reference, as a run would
 * build it: a learned estimator loads its model here, so a missing or bad
 * model is reported once, before any trace is read.
 */
static int try_estimator(const char *name, const mpxkit_estimator_options *opts,
			 mpxkit_estimator **out, mpxkit_diag *diag)
{
	static const size_t slice[2] = {0, 1};
	const mpxkit_layout layout = {2, 2, slice, 1, 0};

	return mpxkit_estimator_new(out, name, &layout, opts, diag);
}

/* The look-back and look-ahead are those of the estimator as built: a model sets the mlp's. */
static int list_estimators(const mpxkit_estimator_options *opts)
{
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		mpxkit_estimator *est = NULL;
		const char *needs =
		    info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE ? ", needs --reference" : "";
		if (try_estimator(info->name, opts, &est, NULL) == 0) {
			info = mpxkit_estimator_info_of(est);
			printf("%-12s look-back %u, look-ahead %u%s  %s\n", info->name,
			       info->lookback, info->lookahead, needs, info->summary);
		} else {
			printf(
			    "%-12s look-back and look-ahead from its model%s  %s [its model does "
			    "not load; see --model]\n",
			    info->name, needs, info->summary);
		}
		mpxkit_estimator_free(est);
	}
	printf("aliases: linear = linear-dira, nonlinear = cam\n");
	printf("schedules:\n");
	for (size_t i = 0; i < mpxkit_schedule_count(); i++) {
		const mpxkit_schedule_info *info = mpxkit_schedule_info_at(i);
		printf("%-12s %s%s%s\n", info->name, info->summary, info->keys[0] ? "; keys " : "",
		       info->keys);
	}
	return cli_close_stdout("eval");
}

/* ---- inputs ------------------------------------------------------------------------------ */

static int add_input(eval *ev, const char *path)
{
	input *grown = realloc(ev->inputs, (ev->n_inputs + 1) * sizeof *grown);
	if (grown == NULL)
		return cli_error(ev->cmd, "out of memory");
	ev->inputs = grown;
	memset(&ev->inputs[ev->n_inputs], 0, sizeof *grown);
	ev->inputs[ev->n_inputs].path = strdup(path);
	if (ev->inputs[ev->n_inputs].path == NULL)
		return cli_error(ev->cmd, "out of memory");
	ev->n_inputs++;
	return 0;
}

static int add_input_cb(void *ev, const char *path)
{
	return add_input(ev, path);
}

static int collect_inputs(eval *ev, int argc, char **argv)
{
	return cli_for_each_trace_arg(ev->cmd, argc, argv, add_input_cb, ev);
}

/* ---- progress ---------------------------------------------------------------------------- */

static double elapsed(const eval *ev)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - ev->started.tv_sec) +
	       (double)(now.tv_nsec - ev->started.tv_nsec) * 1e-9;
}

/* Only on a terminal: a log file gets no carriage returns. */
static void progress(eval *ev, size_t done, size_t total, const char *what)
{
	const int width = 30;
	double now;
	int filled;

	if (!isatty(STDERR_FILENO))
		return;
	now = elapsed(ev);
	if (now < 1.0 || (ev->progress_shown && now - ev->progress_drawn < 0.2))
		return;
	filled = total ? (int)((double)width * (double)done / (double)total) : width;
	fprintf(stderr, "\rmpxkit eval: %s [%.*s%*s] %zu/%zu", what, filled,
		"##############################", width - filled, "", done, total);
	ev->progress_shown = 1;
	ev->progress_drawn = now;
}

static void progress_done(eval *ev)
{
	if (ev->progress_shown)
		fputs("\r\033[K", stderr);
	ev->progress_shown = 0;
}

/* ---- cleaning ---------------------------------------------------------------------------- */

static double trace_total(const mpxkit_trace *t)
{
	double sum = 0.0;
	for (size_t i = 0; i < t->n_steps * t->n_events; i++)
		sum += (double)t->values[i];
	return sum;
}

/* Runs of one program share their command line (the recorder's metadata); others stand alone. */
static const char *program_of(const mpxkit_trace *t)
{
	const char *p = mpxkit_trace_get_meta(t, "program");
	return p ? p : mpxkit_trace_get_meta(t, "command");
}

static int drop_weak_runs(eval *ev)
{
	double *totals = malloc(ev->n_inputs * sizeof *totals);
	size_t *members = malloc(ev->n_inputs * sizeof *members);
	unsigned char *keep = malloc(ev->n_inputs);
	unsigned char *seen = calloc(ev->n_inputs, 1);
	int rc = 0;

	if (totals == NULL || members == NULL || keep == NULL || seen == NULL) {
		rc = cli_error(ev->cmd, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ev->n_inputs; i++) {
		const char *prog = program_of(ev->inputs[i].trace);
		size_t n = 0;
		if (seen[i] || prog == NULL)
			continue;
		for (size_t j = i; j < ev->n_inputs; j++) {
			const char *other = program_of(ev->inputs[j].trace);
			if (!seen[j] && other && strcmp(prog, other) == 0) {
				seen[j] = 1;
				members[n] = j;
				totals[n++] = trace_total(ev->inputs[j].trace);
			}
		}
		mpxkit_clean_runs(totals, n, keep);
		for (size_t m = 0; m < n; m++)
			ev->inputs[members[m]].dropped = !keep[m];
	}
out:
	free(totals);
	free(members);
	free(keep);
	free(seen);
	return rc;
}

/* ---- evaluation -------------------------------------------------------------------------- */

static int add_score(eval *ev, const score *s)
{
	if (ev->n_scores == ev->cap_scores) {
		size_t cap = ev->cap_scores ? 2 * ev->cap_scores : 256;
		score *grown = realloc(ev->scores, cap * sizeof *grown);
		if (grown == NULL)
			return -1;
		ev->scores = grown;
		ev->cap_scores = cap;
	}
	ev->scores[ev->n_scores++] = *s;
	return 0;
}

/*
 * The name of a table column: the estimator, prefixed by the schedule when
 * there are several (kept in a static buffer per column, for the plot's
 * labels).
 */
static const char *column_label(const eval *ev, size_t col)
{
	static char labels[MAX_SCHEDULES * MAX_ESTIMATORS][112];
	size_t sch = col / ev->n_estimators, x = col % ev->n_estimators;

	if (ev->n_schedules <= 1)
		return ev->estimators[x];
	snprintf(labels[col], sizeof labels[col], "%s/%s", ev->schedules[sch].label,
		 ev->estimators[x]);
	return labels[col];
}

static int keep_plot_series(eval *ev, size_t slot, const char *label, const double *v, size_t n)
{
	ev->series[slot].label = label;
	ev->series[slot].values = malloc(n * sizeof *v);
	if (ev->series[slot].values == NULL)
		return -1;
	memcpy(ev->series[slot].values, v, n * sizeof *v);
	ev->plot_points = n;
	return 0;
}

/* Which slices of each window counted event v, for --plot's marks. */
static int keep_plot_marks(eval *ev, size_t sch, const mpxkit_mpx_run *run, size_t v)
{
	size_t W = run->layout.n_groups, nr = run->n_rotations, ne = run->layout.n_events;

	if (ev->plot_counted == NULL) {
		ev->plot_counted = calloc(ev->n_schedules * nr * W, 1);
		if (ev->plot_counted == NULL)
			return -1;
	}
	for (size_t i = 0; i < nr * W; i++)
		ev->plot_counted[sch * nr * W + i] = run->val[i * ne + v] != MPXKIT_NOT_COUNTED;
	ev->plot_window = W;
	return 0;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A half-width over its estimate: 0 for an exact one, infinite over an estimate of 0. */
static double relative_half(const mpxkit_interval *iv, double est)
{
	double half = (iv->hi - iv->lo) / 2;

	return half == 0 ? 0 : est > 0 ? half / est : INFINITY;
}

/*
 * Event v's intervals against its truth: the windows whose interval holds
 * it, whether the total's does, the median of the windows' relative
 * half-widths and the total's (infinite for an open bound).
 */
static void score_intervals(score *s, const mpxkit_interval *iv, const mpxkit_interval *total,
			    size_t ne, size_t v, const double *truth, const double *est, double *rel,
			    size_t nr)
{
	double sum = 0, sum_est = 0;

	for (size_t k = 0; k < nr; k++) {
		const mpxkit_interval *w = &iv[k * ne + v];
		s->covered += w->lo <= truth[k] && truth[k] <= w->hi;
		rel[k] = relative_half(w, est[k]);
		sum += truth[k];
		sum_est += est[k];
	}
	s->windows = nr;
	s->coverage = nr ? (double)s->covered / (double)nr : NAN;
	s->total_in = total[v].lo <= sum && sum <= total[v].hi;
	s->total_half_width = relative_half(&total[v], sum_est);
	qsort(rel, nr, sizeof *rel, compare_double);
	s->half_width = nr ? (nr % 2 ? rel[nr / 2] : (rel[nr / 2 - 1] + rel[nr / 2]) / 2) : NAN;
}

/* Scores every estimator on every (multiplexed) event of one simulated run. */
static int score_run(eval *ev, size_t which, size_t sch, const mpxkit_mpx_run *run)
{
	const mpxkit_series data = mpxkit_mpx_series(run);
	size_t nr = run->n_rotations, ne = run->layout.n_events;
	double *est = malloc(nr * (ne ? ne : 1) * sizeof *est);
	double *truth = malloc(nr * sizeof *truth), *series = malloc(nr * sizeof *series);
	double *rel = malloc(nr * sizeof *rel);
	mpxkit_interval *iv = malloc(nr * (ne ? ne : 1) * sizeof *iv);
	mpxkit_interval *total = malloc((ne ? ne : 1) * sizeof *total);
	mpxkit_dtw_options dtw = {ev->band, 1};
	mpxkit_estimator *e = NULL;
	mpxkit_diag diag = {0};
	int rc = 0, found = ev->plot_event == NULL;

	if (est == NULL || truth == NULL || series == NULL || rel == NULL || iv == NULL ||
	    total == NULL)
		goto nomem;
	for (size_t x = 0; x < ev->n_estimators; x++) {
		rc = mpxkit_estimator_new(&e, ev->estimators[x], &run->layout, &ev->options, &diag);
		if (rc < 0) {
			rc = cli_error(ev->cmd, "%s: %s", ev->inputs[which].path,
				       mpxkit_diag_message(&diag, rc));
			goto out;
		}
		mpxkit_estimator_set_interval(e, ev->level, 0);
		if (mpxkit_estimator_run_series_iv(e, &data, est, iv, total) < 0 ||
		    (ev->anchor && mpxkit_estimator_anchor_series(e, &data, est, iv, total) < 0))
			goto nomem;
		if (ev->relations)
			mpxkit_relations_apply((const char *const *)run->events, ne, nr, est);
		mpxkit_estimator_free(e);
		e = NULL;
		for (size_t v = 0; v < ne; v++) {
			size_t col = sch * ev->n_estimators + x;
			score s = {which, run->events[v], col, 0, 0, 0, 0, 0, 0, 0, 0, 0, ev->cur_merge};
			if (ev->plot_event && strcmp(ev->plot_event, run->events[v]) != 0)
				continue;
			found = 1;
			for (size_t k = 0; k < nr; k++) {
				truth[k] = (double)run->ocoe[k * ne + v];
				series[k] = est[k * ne + v];
			}
			score_intervals(&s, iv, total, ne, v, truth, series, rel, nr);
			s.ra = mpxkit_ra(series, truth, nr);
			s.total_accuracy = mpxkit_total_accuracy(series, truth, nr);
			if (mpxkit_dtw(series, nr, truth, nr, &dtw, &s.dtw) < 0 ||
			    add_score(ev, &s) < 0)
				goto nomem;
			if (ev->plot) {
				if ((col == 0 && keep_plot_series(ev, 0, "OCOE", truth, nr) < 0) ||
				    keep_plot_series(ev, col + 1, column_label(ev, col), series,
						     nr) < 0 ||
				    (x == 0 && keep_plot_marks(ev, sch, run, v) < 0))
					goto nomem;
				ev->plot_groups = run->groups;
			}
		}
		progress(ev, ++ev->progress_done, ev->progress_total, "scoring");
	}
	if (!found)
		rc = cli_error(ev->cmd, "%s: no multiplexed event '%s'", ev->inputs[which].path,
			       ev->plot_event);
	goto out;
nomem:
	rc = cli_error(ev->cmd, "out of memory");
out:
	mpxkit_estimator_free(e);
	free(est);
	free(truth);
	free(series);
	free(rel);
	free(iv);
	free(total);
	return rc;
}

/*
 * The steps of in's trace that are counted: a view that starts at
 * --from-step (it shares the trace's rows, so it is never freed) and, with
 * --clean=tail, the number of them to keep, else 0 (all).  The tail is cut
 * from the whole trace, as the paper's cleaning does.
 */
static int counted_steps(const eval *ev, const input *in, mpxkit_trace *view, size_t *max_steps)
{
	const mpxkit_trace *t = in->trace;
	size_t end = ev->clean_tail ? mpxkit_clean_tail(t->n_steps) : t->n_steps;

	if (ev->clean_tail && end == 0)
		return cli_error(ev->cmd, "%s: %zu steps leave nothing after tail truncation",
				 in->path, t->n_steps);
	if (ev->from_step >= end)
		return cli_error(ev->cmd, "%s: %zu steps%s leave nothing from step %zu on",
				 in->path, end, ev->clean_tail ? " after tail truncation" : "",
				 ev->from_step);
	*view = *t;
	view->n_steps = t->n_steps - ev->from_step;
	view->index = t->index + ev->from_step;
	view->values = t->values + ev->from_step * t->n_events;
	*max_steps = ev->clean_tail ? end - ev->from_step : 0;
	return 0;
}

/*
 * Trace i at --merge value m under every schedule: its counted steps,
 * merged m's number at a time into slices (the clean tail cut first), then
 * simulated and scored.
 */
static int score_merged(eval *ev, size_t i, size_t m)
{
	input *in = &ev->inputs[i];
	mpxkit_trace view, *merged = NULL;
	mpxkit_diag diag = {0};
	size_t max_steps = 0, first_score = ev->n_scores;
	int rc;

	if (in->dropped) {
		ev->progress_done += ev->n_schedules * ev->n_estimators;
		return 0;
	}
	rc = counted_steps(ev, in, &view, &max_steps);
	if (rc != 0)
		return rc;
	if (ev->merges[m] > 1) {
		if (max_steps)
			view.n_steps = max_steps;
		rc = mpxkit_trace_merge_steps(&view, ev->merges[m], &merged, &diag);
		if (rc < 0)
			return cli_error(ev->cmd, "%s: %s", in->path, mpxkit_diag_message(&diag, rc));
		max_steps = 0;
	}
	ev->cur_merge = m;
	for (size_t sch = 0; rc == 0 && sch < ev->n_schedules; sch++) {
		const schedule_arg *sa = &ev->schedules[sch];
		/* A named schedule multiplexes the --groups file's events when there is one. */
		mpxkit_mpx_config cfg = {ev->counters,
					 ev->reference,
					 sa->groups ? sa->groups : ev->groups,
					 max_steps,
					 in->path,
					 sa->spec,
					 ev->window};
		mpxkit_mpx_run *run = NULL;

		progress(ev, ev->progress_done, ev->progress_total, "scoring");
		rc = mpxkit_mpx_simulate(merged ? merged : &view, &cfg, &run, &diag);
		if (rc < 0) {
			rc = cli_lib_error(ev->cmd, rc, &diag);
			break;
		}
		rc = score_run(ev, i, sch, run);
		mpxkit_mpx_run_free(run);
	}
	/* The scores name the events of the merged trace, which goes: name the input's. */
	for (size_t j = first_score; merged && j < ev->n_scores; j++)
		ev->scores[j].event = in->trace->events[mpxkit_trace_event_index(
		    in->trace, ev->scores[j].event)];
	mpxkit_trace_free(merged);
	return rc;
}

static int evaluate(eval *ev)
{
	mpxkit_diag diag = {0};
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &ev->started);
	for (size_t i = 0; i < ev->n_inputs; i++) {
		progress(ev, i, ev->n_inputs, "reading");
		rc = mpxkit_trace_read(ev->inputs[i].path, &ev->inputs[i].trace, &diag);
		if (rc < 0) {
			progress_done(ev);
			return cli_lib_error(ev->cmd, rc, &diag);
		}
	}
	if (ev->clean_runs && (rc = drop_weak_runs(ev)) != 0)
		return rc;
	ev->progress_total = ev->n_inputs * ev->n_merges * ev->n_schedules * ev->n_estimators;
	for (size_t i = 0; i < ev->n_inputs * ev->n_merges; i++) {
		rc = score_merged(ev, i / ev->n_merges, i % ev->n_merges);
		if (rc != 0) {
			progress_done(ev);
			return rc;
		}
	}
	progress_done(ev);
	return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

/* One row per (trace, event, estimator, schedule), the scores at 6 decimals: what scripts read. */
static int print_scores(const eval *ev)
{
	static const cli_column columns[] = {
	    {"trace", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"estimator", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"ra", NULL, CLI_COL_FIXED, 6, 0, NULL},
	    {"total_accuracy", NULL, CLI_COL_FIXED, 6, 0, NULL},
	    {"dtw", NULL, CLI_COL_FIXED, 6, 0, NULL},
	    {"schedule", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"interval_coverage", NULL, CLI_COL_FIXED, 6, 0, NULL},
	    {"total_in_interval", NULL, CLI_COL_BOOL, 0, 0, NULL},
	    {"half_width", NULL, CLI_COL_FIXED, 6, 0, NULL},
	    {"merge", NULL, CLI_COL_INT, 0, 0, NULL},
	    {"total_half_width", NULL, CLI_COL_FIXED, 6, 0, NULL},
	};
	cli_table *t = cli_table_new(columns, sizeof columns / sizeof columns[0]);
	int rc;

	for (size_t i = 0; t && i < ev->n_scores; i++) {
		const score *s = &ev->scores[i];
		cli_table_text(t, ev->inputs[s->input].path);
		cli_table_text(t, s->event);
		cli_table_text(t, ev->estimators[s->estimator % ev->n_estimators]);
		cli_table_real(t, s->ra);
		cli_table_real(t, s->total_accuracy);
		cli_table_real(t, s->dtw);
		cli_table_text(t, ev->schedules[s->estimator / ev->n_estimators].label);
		cli_table_real(t, s->coverage);
		cli_table_bool(t, s->total_in);
		cli_table_real(t, s->half_width);
		cli_table_uint(t, ev->merges[s->merge]);
		cli_table_real(t, s->total_half_width);
	}
	rc = t ? cli_table_emit(ev->cmd, t, ev->format, NULL) : cli_error(ev->cmd, "out of memory");
	cli_table_free(t);
	return rc;
}

/* The median of n values (sorted in place); NaN for none. */
static double median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, compare_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Per-event means at --merge value m, in the order the events first appear. */
static int format_table(const eval *ev, size_t m, FILE *out)
{
	size_t ne = 0, nx = ev->n_estimators * ev->n_schedules, width = 12, pairs = 0, traces = 0;
	int cw = 15; /* column width: the longest label */
	const char **events = malloc((ev->n_scores + 1) * sizeof *events);
	double *ra = calloc((ev->n_scores + 1) * nx, sizeof *ra);
	double *dtw = calloc((ev->n_scores + 1) * nx, sizeof *dtw);
	size_t *count = calloc((ev->n_scores + 1) * nx, sizeof *count);
	double *widths = malloc((ev->n_scores + 1) * sizeof *widths);

	if (events == NULL || ra == NULL || dtw == NULL || count == NULL || widths == NULL) {
		free(events), free(ra), free(dtw), free(count), free(widths);
		return cli_error(ev->cmd, "out of memory");
	}
	for (size_t i = 0; i < ev->n_scores; i++) {
		const score *s = &ev->scores[i];
		size_t v = 0;
		if (s->merge != m)
			continue;
		pairs++;
		while (v < ne && strcmp(events[v], s->event) != 0)
			v++;
		if (v == ne) {
			events[ne++] = s->event;
			if (strlen(s->event) + 2 > width)
				width = strlen(s->event) + 2;
		}
		ra[v * nx + s->estimator] += s->ra;
		dtw[v * nx + s->estimator] += s->dtw;
		count[v * nx + s->estimator]++;
	}
	for (size_t i = 0; i < ev->n_inputs; i++)
		traces += !ev->inputs[i].dropped;
	pairs = nx ? pairs / nx : 0;
	fprintf(out, "# %zu trace%s, %zu (trace, event) pair%s, %zu counter%s%s%s%s\n", traces,
		cli_s(traces), pairs, cli_s(pairs), ev->counters, cli_s(ev->counters),
		ev->reference ? ", reference " : "",
		ev->reference ? ev->reference : "",
		ev->clean_tail || ev->clean_runs ? ", cleaned" : "");
	if (ev->from_step)
		fprintf(out, "# counted from step %zu of each trace\n", ev->from_step);
	if (ev->n_merges > 1 || ev->merges[m] > 1)
		fprintf(out, "# slices of %zu step%s\n", ev->merges[m], cli_s(ev->merges[m]));
	if (ev->n_schedules > 1 || ev->window || strcmp(ev->schedules[0].label, "round-robin") != 0)
		for (size_t i = 0; i < ev->n_schedules; i++)
			fprintf(out, "# schedule %s, windows of %s slices\n",
				ev->schedules[i].label, ev->window ? "W =" : "G");
	for (size_t x = 0; x < nx; x++)
		if ((int)strlen(column_label(ev, x)) > cw)
			cw = (int)strlen(column_label(ev, x));
	fprintf(out, "%-*s", (int)width, "event");
	for (size_t x = 0; x < nx; x++)
		fprintf(out, "  %-*s", cw, column_label(ev, x));
	fprintf(out, "\n%-*s", (int)width, "");
	for (size_t x = 0; x < nx; x++)
		fprintf(out, "  %*s%6s %8s", cw - 15, "", "RA", "DTW");
	fputc('\n', out);
	for (size_t v = 0; v < ne; v++) {
		fprintf(out, "%-*s", (int)width, events[v]);
		for (size_t x = 0; x < nx; x++) {
			size_t c = count[v * nx + x];
			fprintf(out, "  %*s%6.3f %8.3f", cw - 15, "", ra[v * nx + x] / (double)c,
				dtw[v * nx + x] / (double)c);
		}
		fputc('\n', out);
	}
	{
		static const char *const rows[] = {"mean",     "min RA",     "RA < 0.9",
						   "total acc.", "coverage", "total cov.",
						   "half-width", "total width"};
		for (int r = 0; r < 8; r++) {
			fprintf(out, "%-*s", (int)width, rows[r]);
			for (size_t x = 0; x < nx; x++) {
				double sum_ra = 0, sum_dtw = 0, sum_ta = 0, min = INFINITY;
				size_t n = 0, below = 0, windows = 0, covered = 0, totals_in = 0;
				for (size_t i = 0; i < ev->n_scores; i++) {
					const score *s = &ev->scores[i];
					if (s->estimator != x || s->merge != m)
						continue;
					n++;
					sum_ra += s->ra;
					sum_dtw += s->dtw;
					sum_ta += s->total_accuracy;
					min = s->ra < min ? s->ra : min;
					below += s->ra < RA_THRESHOLD;
					windows += s->windows;
					covered += s->covered;
					totals_in += s->total_in;
					widths[n - 1] = r == 7 ? s->total_half_width : s->half_width;
				}
				fprintf(out, "  %*s", cw - 15, "");
				if (r == 0)
					fprintf(out, "%6.3f %8.3f", sum_ra / (double)n,
						sum_dtw / (double)n);
				else if (r == 1)
					fprintf(out, "%6.3f %8s", min, "");
				else if (r == 2)
					fprintf(out, "%6zu %8s", below, "");
				else if (r == 3)
					fprintf(out, "%6.3f %8s", sum_ta / (double)n, "");
				else if (r == 4)
					fprintf(out, "%6.3f %8s", (double)covered / (double)windows, "");
				else if (r == 5)
					fprintf(out, "%6.3f %8s", (double)totals_in / (double)n, "");
				else
					fprintf(out, "%6.3f %8s", median(widths, n), "");
			}
			fputc('\n', out);
		}
	}
	free(events), free(ra), free(dtw), free(count), free(widths);
	return 0;
}

/* The table without trailing blanks, which the padded columns would leave. */
static int print_table(const eval *ev)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc;

	if (mem == NULL)
		return cli_error(ev->cmd, "out of memory");
	rc = 0;
	for (size_t m = 0; rc == 0 && m < ev->n_merges; m++) {
		if (m > 0)
			fputc('\n', mem);
		rc = format_table(ev, m, mem);
	}
	if (fclose(mem) != 0 && rc == 0)
		rc = cli_error(ev->cmd, "out of memory");
	for (char *line = text; rc == 0 && line && *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		while (n > 0 && line[n - 1] == ' ')
			n--;
		printf("%.*s\n", (int)n, line);
		line = nl ? nl + 1 : line + strlen(line);
	}
	free(text);
	return rc;
}

/* ---- plot -------------------------------------------------------------------------------- */

/*
 * OCOE and each schedule's and estimator's series of the event, against the
 * window, and one row of markers per schedule at the bottom: the slices
 * that counted the event, slice j of window k at k + (j + 0.5)/W - 0.5, so
 * a window's slices sit around its point.
 */
static int write_plot(const eval *ev)
{
#define PLOT_TITLE                                                                                 \
	"%s in %s (%zu counters, G = %zu, windows of %zu slices; markers: the slices that counted it)"
	size_t nc = ev->n_estimators * ev->n_schedules + 1, W = ev->plot_window;
	size_t n_marks = ev->plot_counted ? ev->n_schedules : 0, np = ev->plot_points * W;
	int n = snprintf(NULL, 0, PLOT_TITLE, ev->plot_event, ev->plot_trace, ev->counters,
			 ev->plot_groups, W);
	cli_series *series = calloc(nc + n_marks, sizeof *series);
	char *title = n < 0 ? NULL : malloc((size_t)n + 1);
	char(*labels)[192] = calloc(n_marks ? n_marks : 1, sizeof *labels);
	double *mx = malloc((np ? np : 1) * n_marks * sizeof *mx + 1);
	double *my = malloc((np ? np : 1) * n_marks * sizeof *my + 1);
	cli_chart chart = {title, "window",
			   ev->plot_log ? "count per window (log10(1+x) scale)" : "count per window",
			   0, 0, ev->plot_log, 0};
	cli_memout m;
	int rc;

	if (series == NULL || title == NULL || labels == NULL || mx == NULL || my == NULL ||
	    cli_memout_open(&m) < 0) {
		free(series), free(title), free(labels), free(mx), free(my);
		return cli_error(ev->cmd, "out of memory");
	}
	snprintf(title, (size_t)n + 1, PLOT_TITLE, ev->plot_event, ev->plot_trace, ev->counters,
		 ev->plot_groups, W);
#undef PLOT_TITLE
	for (size_t s = 0; s < nc; s++)
		series[s] = (cli_series){ev->series[s].label, NULL, ev->series[s].values,
					 ev->plot_points, 0, NULL};
	for (size_t sch = 0; sch < n_marks; sch++) {
		size_t k = 0;
		for (size_t i = 0; i < np; i++)
			if (ev->plot_counted[sch * np + i]) {
				mx[sch * np + k] = (double)(i / W) + ((double)(i % W) + 0.5) / (double)W - 0.5;
				my[sch * np + k++] = 0.0;
			}
		snprintf(labels[sch], sizeof labels[sch], "counted (%s)", ev->schedules[sch].label);
		series[nc + sch] = (cli_series){labels[sch], mx + sch * np, my + sch * np, k, 1, NULL};
	}
	cli_svg_document(m.f);
	cli_svg_lines(m.f, &chart, series, nc + n_marks);
	free(series), free(title), free(labels), free(mx), free(my);
	if (cli_memout_close(&m) < 0) {
		free(m.text);
		return cli_error(ev->cmd, "%s: out of memory", ev->plot);
	}
	rc = cli_write_file(ev->cmd, ev->plot, m.text, m.len);
	free(m.text);
	return rc;
}

/* ---- main -------------------------------------------------------------------------------- */

/* --plot can be written and replaces none of the files read: traces, group files, the model. */
static int check_plot(eval *ev)
{
	size_t n = 0, cap = ev->n_inputs + ev->n_schedules + 2;
	const char **inputs = malloc(cap * sizeof *inputs);
	int rc;

	if (inputs == NULL)
		return cli_error(ev->cmd, "out of memory");
	for (size_t i = 0; i < ev->n_inputs; i++)
		inputs[n++] = ev->inputs[i].path;
	for (size_t i = 0; i < ev->n_schedules; i++)
		if (ev->schedules[i].groups)
			inputs[n++] = ev->schedules[i].label;
	inputs[n++] = ev->groups_path;
	inputs[n++] = ev->options.model;
	rc = cli_check_outputs(ev->cmd, &ev->plot, 1, inputs, n);
	free(inputs);
	return rc;
}

static void eval_free(eval *ev)
{
	for (size_t i = 0; i < ev->n_inputs; i++) {
		free(ev->inputs[i].path);
		mpxkit_trace_free(ev->inputs[i].trace);
	}
	free(ev->inputs);
	free(ev->scores);
	if (ev->series)
		for (size_t s = 0; s <= ev->n_estimators * ev->n_schedules; s++)
			free(ev->series[s].values);
	free(ev->series);
	free(ev->plot_counted);
	mpxkit_groups_free(ev->groups);
	for (size_t i = 0; i < ev->n_schedules; i++)
		mpxkit_groups_free(ev->schedules[i].groups);
}

enum {
	OPT_CLEAN = 256,
	OPT_BAND,
	OPT_PLOT,
	OPT_TRACE,
	OPT_EVENT,
	OPT_LOG,
	OPT_FROM_STEP,
	OPT_LEVEL,
	OPT_MERGE,
	OPT_ANCHOR,
	OPT_RELATIONS
};

/*
 * One --schedule entry: a schedule of the registry (checked by building it
 * for a small layout, so a bad key is one line before any trace is read),
 * or else a group file.
 */
static int add_schedule(eval *ev, const char *spec, size_t len)
{
	schedule_arg *sa = &ev->schedules[ev->n_schedules];
	mpxkit_diag diag = {0};
	char buf[160];
	int rc;

	if (len == 0 || len >= sizeof buf)
		return cli_usage_error(ev->cmd, "bad schedule '%.*s'", (int)len, spec);
	if (ev->n_schedules == MAX_SCHEDULES)
		return cli_usage_error(ev->cmd, "too many schedules (at most %d)", MAX_SCHEDULES);
	memcpy(buf, spec, len);
	buf[len] = '\0';
	memset(sa, 0, sizeof *sa);
	if (mpxkit_schedule_is_name(buf)) {
		static const char *const names[] = {"a", "b", "c"};
		mpxkit_schedule_setup setup = {3, names, 1, NULL, NULL, NULL};
		mpxkit_schedule *sch = NULL;
		if (strncmp(buf, "groups", 6) == 0 && (buf[6] == '\0' || buf[6] == ':')) {
			if (ev->groups == NULL)
				return cli_usage_error(ev->cmd, "schedule groups needs --groups FILE "
								"(or give the group file itself)");
		} else {
			rc = mpxkit_schedule_new(&sch, buf, &setup, &diag);
			mpxkit_schedule_free(sch);
			if (rc < 0)
				return cli_usage_error(ev->cmd, "%s", diag.msg);
		}
		snprintf(sa->label, sizeof sa->label, "%s", buf);
		sa->spec = sa->label;
		ev->n_schedules++;
		return 0;
	}
	rc = mpxkit_groups_read(buf, &sa->groups, &diag);
	if (rc < 0) {
		if (rc == -MPXKIT_ESYS && diag.sys_errno == ENOENT)
			return cli_usage_error(ev->cmd,
					       "no schedule named '%s' and no group file '%s' "
					       "(schedules: round-robin, groups, prior, adaptive)",
					       buf, buf);
		return cli_lib_error(ev->cmd, rc, &diag);
	}
	snprintf(sa->label, sizeof sa->label, "%s", buf);
	ev->n_schedules++;
	return 0;
}

/* --schedule LIST, or the v1 default: the --groups file, else round-robin. */
static int parse_schedules(eval *ev, const char *list)
{
	if (list == NULL) {
		schedule_arg *sa = &ev->schedules[0];
		memset(sa, 0, sizeof *sa);
		snprintf(sa->label, sizeof sa->label, "%s", ev->groups ? "groups" : "round-robin");
		ev->n_schedules = 1;
		return 0;
	}
	return for_each_item(ev, list, add_schedule);
}

/* Every chosen estimator can be built: a model that will not load is one error line, up front. */
static int check_estimators(eval *ev)
{
	for (size_t i = 0; i < ev->n_estimators; i++) {
		mpxkit_estimator *est = NULL;
		mpxkit_diag diag = {0};
		int rc = try_estimator(ev->estimators[i], &ev->options, &est, &diag);
		mpxkit_estimator_free(est);
		if (rc < 0)
			return cli_lib_error(ev->cmd, rc, &diag);
	}
	return 0;
}

static int parse_options(eval *ev, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"counters", required_argument, NULL, 'c'},
	    {"estimators", required_argument, NULL, 'e'},
	    {"model", required_argument, NULL, 'm'},
	    {"reference", required_argument, NULL, 'r'},
	    {"groups", required_argument, NULL, 'g'},
	    {"schedule", required_argument, NULL, 's'},
	    {"window", required_argument, NULL, 'w'},
	    {"clean", optional_argument, NULL, OPT_CLEAN},
	    {"from-step", required_argument, NULL, OPT_FROM_STEP},
	    {"merge", required_argument, NULL, OPT_MERGE},
	    {"format", required_argument, NULL, 'f'},
	    {"band", required_argument, NULL, OPT_BAND},
	    {"level", required_argument, NULL, OPT_LEVEL},
	    {"anchor", no_argument, NULL, OPT_ANCHOR},
	    {"relations", no_argument, NULL, OPT_RELATIONS},
	    {"plot", required_argument, NULL, OPT_PLOT},
	    {"trace", required_argument, NULL, OPT_TRACE},
	    {"event", required_argument, NULL, OPT_EVENT},
	    {"log", no_argument, NULL, OPT_LOG},
	    {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *groups_path = NULL, *estimators = NULL, *schedules = NULL, *merges = NULL;
	mpxkit_diag diag = {0};
	long v;
	int c, rc, list = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:e:m:r:g:s:w:f:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (cli_option_long(ev->cmd, "--counters", optarg, 1, 1 << 20, &v) != CLI_OK)
				return CLI_USAGE;
			ev->counters = (size_t)v;
			break;
		case 'e':
			estimators = optarg;
			break;
		case 'm':
			ev->options.model = optarg;
			break;
		case 'r':
			ev->reference = optarg;
			break;
		case 'g':
			groups_path = optarg;
			break;
		case 's':
			schedules = optarg;
			break;
		case 'w':
			if (cli_parse_long(optarg, 1, 1 << 20, &v) != 0)
				return cli_usage_error(ev->cmd, "--window takes a whole number >= 1");
			ev->window = (size_t)v;
			break;
		case OPT_CLEAN:
			if ((rc = parse_clean(ev, optarg)) != 0)
				return rc;
			break;
		case OPT_FROM_STEP:
			if (cli_option_long(ev->cmd, "--from-step", optarg, 0, 1L << 40, &v) != CLI_OK)
				return CLI_USAGE;
			ev->from_step = (size_t)v;
			break;
		case OPT_MERGE:
			merges = optarg;
			break;
		case OPT_ANCHOR:
			ev->anchor = 1;
			break;
		case OPT_RELATIONS:
			ev->relations = 1;
			break;
		case 'f':
			if (cli_parse_format(optarg, &ev->format) != 0)
				return cli_usage_error(ev->cmd,
						       "--format takes table, csv or json");
			break;
		case OPT_BAND:
			if (strcmp(optarg, "full") == 0)
				ev->band = MPXKIT_DTW_NO_BAND;
			else if (cli_parse_long(optarg, 0, 1L << 30, &v) == 0)
				ev->band = (size_t)v;
			else
				return cli_usage_error(ev->cmd,
						       "--band %s: not 'full' or a whole number in "
						       "[0, %ld]",
						       optarg, 1L << 30);
			break;
		case OPT_LEVEL: {
			char *end;
			errno = 0;
			ev->level = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(ev->level > 0 && ev->level <= MPXKIT_INTERVAL_LEVEL_MAX))
				return cli_usage_error(ev->cmd,
						       "--level takes a number above 0 and at most "
						       "%g, not '%s'",
						       MPXKIT_INTERVAL_LEVEL_MAX, optarg);
			break;
		}
		case OPT_PLOT:
			ev->plot = optarg;
			break;
		case OPT_TRACE:
			ev->plot_trace = optarg;
			break;
		case OPT_EVENT:
			ev->plot_event = optarg;
			break;
		case OPT_LOG:
			ev->plot_log = 1;
			break;
		case 'l':
			list = 1;
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(ev->cmd) == CLI_OK ? -1 : CLI_FAIL;
		default:
			return cli_option_error(ev->cmd, c, argv);
		}
	}
	if (list) /* after the loop: --model may follow --list */
		return list_estimators(&ev->options) == CLI_OK ? -1 : CLI_FAIL;
	if (estimators) {
		if ((rc = parse_estimators(ev, estimators)) != 0)
			return rc;
	} else {
		static const char *const defaults[] = {"fixed", "linear-dira", "linear-tam",
						       "cam",	"dcam",	       "ref-rate"};
		for (size_t i = 0; i < 6; i++)
			if (i < 5 || ev->reference)
				ev->estimators[ev->n_estimators++] = defaults[i];
	}
	for (size_t i = 0; i < ev->n_estimators; i++) {
		const mpxkit_estimator_info *info;
		mpxkit_estimator_lookup(ev->estimators[i], &info);
		if ((info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) && ev->reference == NULL)
			return cli_usage_error(ev->cmd, "estimator %s needs --reference EVENT",
					       info->name);
	}
	if (merges && (rc = for_each_item(ev, merges, add_merge)) != 0)
		return rc;
	if (ev->n_merges == 0)
		ev->merges[ev->n_merges++] = 1;
	if (ev->plot || ev->plot_trace || ev->plot_event) {
		if (!ev->plot || !ev->plot_trace || !ev->plot_event)
			return cli_usage_error(ev->cmd, "--plot, --trace and --event go together");
		if (ev->n_merges > 1)
			return cli_usage_error(ev->cmd, "--plot takes one --merge value");
		if (optind < argc)
			return cli_usage_error(ev->cmd, "--plot takes its trace from --trace, not "
							"from the arguments");
	} else if (optind == argc) {
		return cli_usage_error(ev->cmd, "no trace given");
	}
	if (groups_path) {
		ev->groups_path = groups_path;
		rc = mpxkit_groups_read(groups_path, &ev->groups, &diag);
		if (rc < 0)
			return cli_lib_error(ev->cmd, rc, &diag);
	}
	rc = parse_schedules(ev, schedules);
	if (rc != 0)
		return rc;
	return check_estimators(ev);
}

int cmd_eval(int argc, char **argv)
{
	eval ev = {0};
	int rc;

	ev.cmd = argv[0];
	ev.counters = DEFAULT_COUNTERS;
	ev.band = DEFAULT_BAND;
	ev.level = MPXKIT_INTERVAL_LEVEL;
	rc = parse_options(&ev, argc, argv);
	if (rc != 0)
		goto out;
	if (ev.plot) {
		rc = add_input(&ev, ev.plot_trace);
		if (rc == 0 && (ev.series = calloc(ev.n_estimators * ev.n_schedules + 1,
						   sizeof *ev.series)) == NULL)
			rc = cli_error(ev.cmd, "out of memory");
	} else {
		rc = collect_inputs(&ev, argc - optind, argv + optind);
	}
	/* Before the traces are read and scored: the plot's file can be written. */
	if (rc == 0)
		rc = check_plot(&ev);
	if (rc != 0)
		goto out;
	rc = evaluate(&ev);
	if (rc != 0)
		goto out;
	if (ev.n_scores == 0) {
		rc = cli_error(ev.cmd, "nothing to score: no multiplexed event in any kept trace");
		goto out;
	}
	if (ev.plot && (rc = write_plot(&ev)) != 0)
		goto out;
	if (ev.format != CLI_FORMAT_TABLE)
		rc = print_scores(&ev);
	else
		rc = print_table(&ev);
	if (rc != 0)
		goto out;
	rc = cli_close_stdout(ev.cmd);
out:
	eval_free(&ev);
	return rc < 0 ? CLI_OK : rc;
}

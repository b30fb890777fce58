/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit stat's reports: perf stat's text, or rows (CSV, JSON), whole or interval by interval. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

uint64_t stat_as_count(double est)
{
	return est <= 0 ? 0 : est >= 1.8e19 ? UINT64_MAX : (uint64_t)(est + 0.5);
}

/* A signed count (an interval's difference), rounded. */
static int64_t as_delta(double d)
{
	if (d >= 9.2e18)
		return INT64_MAX;
	if (d <= -9.2e18)
		return INT64_MIN;
	return (int64_t)llround(d);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * One event's figures, whatever the output: a total, a run of -r, their
 * mean, or an interval's difference.  The rows' columns and the text's
 * fields come from the same figures.
 */
typedef struct figures {
	double time_s;	   /* -I */
	long run;	   /* -r: 1 .. N; 0 for the mean over the runs */
	const char *label; /* --per-thread: "COMM-TID" */
	pid_t tid;	   /* --per-thread */
	const char *comm;  /* --per-thread */
	const char *event;
	int counted;	     /* 0: <not counted> */
	double est;	     /* the estimate (a difference under -I) */
	double counted_pct;  /* the share of the time it was counted */
	double spread_pct;   /* -r, the mean: perf stat's spread */
	size_t runs_counted; /* -r, the mean: the runs it was counted in */
	double exact;	     /* --exact */
	int has_iv;	     /* a total's interval in lo, hi (a single run's totals) */
	double lo, hi;
} figures;

/*
 * The interval's half-width over the estimate, in %: 0 when lo = hi,
 * INFINITY when it is unbounded above or the estimate is 0 with room.
 */
static double half_width_pct(const figures *f)
{
	double width = f->hi - f->lo;

	if (width <= 0)
		return 0.0;
	if (!isfinite(width) || f->est <= 0)
		return INFINITY;
	return 100.0 * width / 2.0 / f->est;
}

/* ---- text, as perf stat prints it ---------------------------------------------------- */

/*
 * The error against the exact count: relative, or against an exact 0 the
 * difference itself.  It is the error of the count as shown (rounded, as
 * "%.0f" shows it): an estimate a fraction of a count below its exact one
 * printed the same two numbers beside "-0.00%" (a multiplexed task clock
 * under valgrind, test_stat_cli.sh in the CI of e9254f6).
 */
static void text_error(FILE *out, double est, double exact)
{
	double shown = nearbyint(est);

	if (exact != 0)
		fprintf(out, "  %+7.2f%%", 100.0 * (shown - exact) / exact);
	else
		fprintf(out, "  %+8.0f", shown - exact);
}

/* "ESTIMATE  EVENT (counted P%)", perf stat's spread, and the exact count with the error. */
static void text_line(const stat_run *st, FILE *out, const figures *f)
{
	if (st->interval_ms)
		fprintf(out, "%16.9f  ", f->time_s);
	if (f->label)
		fprintf(out, "%24s  ", f->label);
	if (!f->counted) {
		/* Padded only for the exact column: no trailing blanks. */
		fprintf(out, st->exact ? "%20s  %-28s" : "%20s  %s", "<not counted>", f->event);
		if (st->exact)
			fprintf(out, "                 exact %20.0f", f->exact);
		fputc('\n', out);
		return;
	}
	fprintf(out, "%20.0f  %-28s (counted %5.1f%%)", f->est, f->event, f->counted_pct);
	if (f->has_iv) {
		double pct = half_width_pct(f);
		if (isfinite(pct))
			fprintf(out, "  +-%7.2f%%", pct);
		else if (isfinite(f->hi) && f->est <= 0)
			/* No share of a zero: the bound itself, as wide as the share. */
			fprintf(out, "  <=%8.0f", ceil(f->hi));
		else
			fprintf(out, "  +-    inf%%");
	}
	/* perf stat prints no spread that is 0 (print_noise_pct). */
	if (st->repeat > 1 && f->spread_pct != 0)
		fprintf(out, "  ( +-%6.2f%% )", f->spread_pct);
	if (st->exact) {
		fprintf(out, "  exact %20.0f", f->exact);
		text_error(out, f->est, f->exact);
	}
	if (st->repeat > 1 && f->runs_counted < (size_t)st->repeat)
		fprintf(out, "  (counted in %zu of %ld runs)", f->runs_counted, st->repeat);
	fputc('\n', out);
}

/* What was counted, as perf stat names it: the command, 'system wide', process or thread ids. */
static void text_target(const stat_run *st, FILE *out)
{
	switch (st->target) {
	case STAT_ALL_CPUS:
		fprintf(out, "'system wide'");
		return;
	case STAT_PIDS:
	case STAT_TIDS:
		fprintf(out, "%s id '", st->target == STAT_PIDS ? "process" : "thread");
		for (size_t i = 0; i < st->n_tasks; i++)
			fprintf(out, "%s%ld", i ? "," : "", (long)st->tasks[i]);
		fputc('\'', out);
		return;
	case STAT_CMD:
		break;
	}
	fputc('\'', out);
	for (int i = 0; st->argv[i]; i++)
		fprintf(out, "%s%s", i ? " " : "", st->argv[i]);
	fputc('\'', out);
}

static void text_header(const stat_run *st, FILE *out, size_t runs)
{
	fprintf(out, "\n Performance counter stats for ");
	text_target(st, out);
	if (runs > 1)
		fprintf(out, " (%zu runs)", runs);
	char along[64] = "";

	if (st->all_along)
		snprintf(along, sizeof along, " (%zu counted all the time)", st->all_along);
	fprintf(
	    out,
	    " (mpxkit: %zu event%s%s on %zu counter%s, %zu group%s, %llu us slices, %s%s%s%s%s):\n\n",
	    st->n_events, plural(st->n_events), along, st->counters, plural(st->counters), st->groups,
	    plural(st->groups), (unsigned long long)(st->cfg.slice_ns / 1000), st->estimator,
	    st->cfg.reference[0] ? ", reference " : "", st->cfg.reference,
	    st->cfg.schedule[0] ? ", schedule " : "", st->cfg.schedule);
}

/* ---- rows: the columns each output has ----------------------------------------------- */

enum {
	COL_TIME,
	COL_RUN,
	COL_TID,
	COL_COMM,
	COL_EVENT,
	COL_ESTIMATE,
	COL_COUNTED,
	COL_LO,
	COL_HI,
	COL_SPREAD,
	COL_EXACT,
	COL_ERROR_PCT,
	COL_ERROR_ABS,
	N_COLS
};

static const cli_column all_columns[N_COLS] = {
    [COL_TIME] = {"time_s", NULL, CLI_COL_FIXED, 9, 0, NULL},
    [COL_RUN] = {"run", NULL, CLI_COL_INT, 0, 0, NULL},
    [COL_TID] = {"tid", NULL, CLI_COL_INT, 0, 0, NULL},
    [COL_COMM] = {"comm", NULL, CLI_COL_TEXT, 0, 0, NULL},
    [COL_EVENT] = {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
    [COL_ESTIMATE] = {"estimate", NULL, CLI_COL_INT, 0, 0, "<not counted>"},
    [COL_COUNTED] = {"counted_pct", NULL, CLI_COL_FIXED, 1, 0, NULL},
    [COL_LO] = {"lo", NULL, CLI_COL_INT, 0, 0, NULL},
    [COL_HI] = {"hi", NULL, CLI_COL_INT, 0, 0, NULL},
    [COL_SPREAD] = {"spread_pct", NULL, CLI_COL_FIXED, 2, 0, NULL},
    [COL_EXACT] = {"exact", NULL, CLI_COL_INT, 0, 0, NULL},
    [COL_ERROR_PCT] = {"error_pct", NULL, CLI_COL_FIXED, 2, 0, NULL},
    [COL_ERROR_ABS] = {"error_abs", NULL, CLI_COL_INT, 0, 0, NULL},
};

static int has_column(const stat_run *st, int col)
{
	switch (col) {
	case COL_TIME:
		return st->interval_ms != 0;
	case COL_RUN:
	case COL_SPREAD:
		return st->repeat > 1;
	case COL_TID:
	case COL_COMM:
		return st->per_thread;
	case COL_EXACT:
	case COL_ERROR_PCT:
	case COL_ERROR_ABS:
		return st->exact;
	default:
		return 1;
	}
}

/* One cell: missing, or a value of its column's kind. */
typedef struct cell {
	int missing;
	const char *text;
	int64_t i;
	double d;
} cell;

static cell missing_cell(void)
{
	cell c = {1, NULL, 0, 0};
	return c;
}

static cell int_cell(int64_t v)
{
	cell c = {0, NULL, v, 0};
	return c;
}

static cell real_cell(double v)
{
	cell c = {0, NULL, 0, v};
	return c;
}

static cell text_cell(const char *s)
{
	cell c = {s == NULL, s, 0, 0};
	return c;
}

/* The figures as the cells of their row, in column order; the cells' count. */
static size_t row_cells(const stat_run *st, const figures *f, cell *c)
{
	int64_t est = as_delta(f->est), exact = as_delta(f->exact);
	size_t n = 0;

	for (int col = 0; col < N_COLS; col++) {
		if (!has_column(st, col))
			continue;
		switch (col) {
		case COL_TIME:
			c[n++] = real_cell(f->time_s);
			break;
		case COL_RUN:
			c[n++] = f->run ? int_cell(f->run) : missing_cell();
			break;
		case COL_TID:
			c[n++] = int_cell(f->tid);
			break;
		case COL_COMM:
			c[n++] = text_cell(f->comm);
			break;
		case COL_EVENT:
			c[n++] = text_cell(f->event);
			break;
		case COL_ESTIMATE:
			c[n++] = f->counted ? int_cell(est) : missing_cell();
			break;
		case COL_COUNTED:
			c[n++] = real_cell(f->counted_pct);
			break;
		case COL_LO:
			c[n++] =
			    f->counted && f->has_iv ? int_cell(as_delta(f->lo)) : missing_cell();
			break;
		case COL_HI:
			c[n++] = f->counted && f->has_iv && isfinite(f->hi)
				     ? int_cell(as_delta(f->hi))
				     : missing_cell();
			break;
		case COL_SPREAD:
			c[n++] = f->run == 0 ? real_cell(f->spread_pct) : missing_cell();
			break;
		case COL_EXACT:
			c[n++] = int_cell(exact);
			break;
		case COL_ERROR_PCT:
			c[n++] = f->counted && f->exact != 0
				     ? real_cell(100.0 * (f->est - f->exact) / f->exact)
				     : missing_cell();
			break;
		case COL_ERROR_ABS:
			c[n++] =
			    f->counted ? int_cell(as_delta(f->est - f->exact)) : missing_cell();
			break;
		}
	}
	return n;
}

static cli_table *new_table(const stat_run *st)
{
	cli_column cols[N_COLS];
	size_t n = 0;

	for (int col = 0; col < N_COLS; col++)
		if (has_column(st, col))
			cols[n++] = all_columns[col];
	return cli_table_new(cols, n);
}

static int table_row(const stat_run *st, cli_table *t, const figures *f)
{
	cell c[N_COLS];
	size_t n = row_cells(st, f, c), k = 0;
	int rc = 0;

	for (int col = 0; col < N_COLS; col++) {
		if (!has_column(st, col))
			continue;
		const cell *x = &c[k++];
		if (x->missing)
			rc |= cli_table_missing(t);
		else if (all_columns[col].kind == CLI_COL_TEXT)
			rc |= cli_table_text(t, x->text);
		else if (all_columns[col].kind == CLI_COL_INT)
			rc |= cli_table_int(t, x->i);
		else
			rc |= cli_table_real(t, x->d);
	}
	return k == n ? rc : -1;
}

/* ---- a count's totals ------------------------------------------------------------------ */

/*
 * Unit u's event e as figures: its total and its exact count.  An event
 * never counted (fidelity 0: its group never held a counter, as in a run
 * shorter than one rotation) has no estimate: perf stat's "<not counted>",
 * not a false 0 (doc/component.md, "Never counted").
 */
static figures unit_figures(const stat_run *st, const stat_unit *u, size_t e)
{
	figures f;

	memset(&f, 0, sizeof f);
	f.event = st->events[e];
	f.counted = u->fid[e] > 0.0 && !(u->iv[e].flags & MPXKIT_INTERVAL_UNOBSERVED);
	f.est = u->est[e];
	f.has_iv = 1;
	f.lo = u->iv[e].lo;
	f.hi = u->iv[e].hi;
	f.counted_pct = 100.0 * u->fid[e];
	f.exact = (double)u->exact[e];
	if (st->per_thread) {
		f.label = u->label;
		f.tid = u->tid;
		f.comm = u->comm;
	}
	return f;
}

static void text_rotations(const stat_run *st, FILE *out, const stat_unit *u, size_t n)
{
	int lo = n ? u[0].rotations : 0, hi = lo;

	for (size_t i = 1; i < n; i++) {
		lo = u[i].rotations < lo ? u[i].rotations : lo;
		hi = u[i].rotations > hi ? u[i].rotations : hi;
	}
	if (st->per_thread)
		fprintf(out, "\n %d to %d rotations a thread\n", lo, hi);
	else
		fprintf(out, "\n %d rotation%s\n", lo, plural((size_t)lo));
	fprintf(out, " %17.9f seconds time elapsed\n\n", st->seconds);
}

/* A table of figures printed in the run's format; 0 or -1. */
typedef struct rows {
	const stat_run *st;
	cli_table *t;
	FILE *out;
	int rc;
} rows;

static void rows_begin(rows *r, const stat_run *st, FILE *out)
{
	r->st = st;
	r->out = out;
	r->t = st->format == CLI_FORMAT_TABLE ? NULL : new_table(st);
	r->rc = st->format != CLI_FORMAT_TABLE && r->t == NULL ? -1 : 0;
}

static void rows_add(rows *r, const figures *f)
{
	if (r->t)
		r->rc |= table_row(r->st, r->t, f);
	else
		text_line(r->st, r->out, f);
}

static int rows_end(rows *r)
{
	if (r->t && r->rc == 0)
		r->rc = cli_table_print(r->t, r->st->format, r->out);
	cli_table_free(r->t);
	return r->rc;
}

int stat_report(const stat_run *st, FILE *out, const stat_unit *u, size_t n_units)
{
	rows r;

	if (st->format == CLI_FORMAT_TABLE)
		text_header(st, out, 1);
	rows_begin(&r, st, out);
	for (size_t i = 0; i < n_units; i++)
		for (size_t e = 0; e < st->n_events; e++) {
			figures f = unit_figures(st, &u[i], e);
			rows_add(&r, &f);
		}
	if (st->format == CLI_FORMAT_TABLE)
		text_rotations(st, out, u, n_units);
	return rows_end(&r);
}

/* ---- -r: the mean over the runs, and perf stat's spread -------------------------------- */

/*
 * Welford's running mean and sum of squared deviations, as perf stat keeps
 * them (tools/perf/util/stat.c, update_stats).
 */
typedef struct running {
	double n, mean, m2;
} running;

static void running_add(running *r, double v)
{
	double delta = v - r->mean;

	r->n++;
	r->mean += delta / r->n;
	r->m2 += delta * (v - r->mean);
}

/*
 * perf stat's spread, "( +- x.xx% )": the standard error of the mean,
 * sqrt(s^2 / n) with s^2 = m2 / (n - 1), over the mean, in percent; 0 for
 * fewer than two values or a mean of 0 (tools/perf/util/stat.c,
 * stddev_stats and rel_stddev_stats).
 */
static double standard_error(const running *r)
{
	return r->n < 2 ? 0.0 : sqrt(r->m2 / (r->n - 1) / r->n);
}

static double spread_pct(const running *r)
{
	return r->mean != 0 ? 100.0 * standard_error(r) / r->mean : 0.0;
}

/*
 * Event e over the runs: the mean of the runs it was counted in, perf
 * stat's spread over them, the mean share of the time it was counted over
 * all runs, and the mean exact count of the same runs as the estimate's.
 */
static figures mean_figures(const stat_run *st, const stat_result *r, size_t n, size_t e)
{
	running est = {0, 0, 0}, exact = {0, 0, 0}, all_exact = {0, 0, 0};
	double fid = 0;
	figures f;

	for (size_t i = 0; i < n; i++) {
		fid += r[i].fid[e];
		running_add(&all_exact, (double)r[i].exact[e]);
		if (r[i].fid[e] <= 0)
			continue;
		running_add(&est, r[i].est[e]);
		running_add(&exact, (double)r[i].exact[e]);
	}
	memset(&f, 0, sizeof f);
	f.event = st->events[e];
	f.counted = est.n > 0;
	f.est = est.mean;
	f.counted_pct = n ? 100.0 * fid / (double)n : 0;
	f.spread_pct = spread_pct(&est);
	f.runs_counted = (size_t)est.n;
	f.exact = est.n > 0 ? exact.mean : all_exact.mean;
	return f;
}

static void text_runs_end(FILE *out, const stat_result *r, size_t n)
{
	running t = {0, 0, 0};
	int rotations = 0;

	for (size_t i = 0; i < n; i++) {
		running_add(&t, r[i].seconds);
		rotations += r[i].rotations;
	}
	fprintf(out, "\n %d rotation%s in %zu run%s\n", rotations, plural((size_t)rotations), n,
		plural(n));
	fprintf(out, " %17.9f +- %.9f seconds time elapsed", t.mean, standard_error(&t));
	if (spread_pct(&t) != 0)
		fprintf(out, "  ( +-%6.2f%% )", spread_pct(&t));
	fprintf(out, "\n\n");
}

int stat_report_runs(const stat_run *st, FILE *out, const stat_result *r, size_t n_runs)
{
	rows rw;

	if (st->format == CLI_FORMAT_TABLE)
		text_header(st, out, n_runs);
	rows_begin(&rw, st, out);
	/* Rows only: each run's figures, which the mean and the spread are computed from. */
	for (size_t i = 0; rw.t && i < n_runs; i++)
		for (size_t e = 0; e < st->n_events; e++) {
			figures f;
			memset(&f, 0, sizeof f);
			f.run = (long)i + 1;
			f.event = st->events[e];
			f.counted =
			    r[i].fid[e] > 0 && !(r[i].iv[e].flags & MPXKIT_INTERVAL_UNOBSERVED);
			f.est = r[i].est[e];
			f.has_iv = 1;
			f.lo = r[i].iv[e].lo;
			f.hi = r[i].iv[e].hi;
			f.counted_pct = 100.0 * r[i].fid[e];
			f.exact = (double)r[i].exact[e];
			rows_add(&rw, &f);
		}
	for (size_t e = 0; e < st->n_events; e++) {
		figures f = mean_figures(st, r, n_runs, e);
		rows_add(&rw, &f);
	}
	if (st->format == CLI_FORMAT_TABLE)
		text_runs_end(out, r, n_runs);
	return rows_end(&rw);
}

/* ---- -I: each interval's counts as they come ------------------------------------------- */

int stat_intervals_begin(const stat_run *st, stat_intervals *iv, FILE *out)
{
	memset(iv, 0, sizeof *iv);
	iv->out = out;
	if (st->format == CLI_FORMAT_JSON) {
		if ((iv->json = cli_json_new(out)) == NULL)
			return -1;
		cli_json_array(iv->json);
	} else if (st->format == CLI_FORMAT_TABLE) {
		fprintf(out, "#%15s  ", "time");
		if (st->per_thread)
			fprintf(out, "%24s  ", "thread");
		fprintf(out, "%20s  %s\n", "counts", "events");
	}
	return 0;
}

/* One row as a JSON object, keyed as the table's columns. */
static void json_row(const stat_run *st, cli_json *j, const figures *f)
{
	cell c[N_COLS];
	size_t k = 0;

	row_cells(st, f, c);
	cli_json_object(j);
	for (int col = 0; col < N_COLS; col++) {
		if (!has_column(st, col))
			continue;
		const cell *x = &c[k++];
		cli_json_key(j, all_columns[col].key);
		if (x->missing)
			cli_json_null(j);
		else if (all_columns[col].kind == CLI_COL_TEXT)
			cli_json_str(j, x->text);
		else if (all_columns[col].kind == CLI_COL_INT)
			cli_json_int(j, x->i);
		else
			cli_json_fixed(j, x->d, all_columns[col].decimals);
	}
	cli_json_close(j);
}

/*
 * Event e's row for the interval that ends now, from the unit's totals: the
 * difference of the estimates, of the exact counts, and of the times.  An
 * event is <not counted> in an interval while it has never been counted,
 * or when its target did not run at all (no time passed for it), as perf
 * stat says for a counter that did not run in the interval; its estimate
 * then goes to the next row it is counted in, and the last row takes what
 * is left, so each event's rows add up to its total.
 */
static figures interval_figures(const stat_run *st, stat_unit *u, size_t e, double t_s, int last)
{
	double run_d = u->run_ns - u->last_run_ns, counted_now = u->fid[e] * u->run_ns;
	int64_t total = as_delta(u->est[e]);
	figures f = unit_figures(st, u, e);

	f.time_s = t_s;
	f.counted = u->fid[e] > 0 && (run_d > 0 || last);
	f.est = f.counted ? (double)(total - u->shown[e]) : 0;
	f.counted_pct = run_d > 0 ? 100.0 * (counted_now - u->counted_ns[e]) / run_d : 0;
	f.counted_pct = f.counted_pct < 0 ? 0 : f.counted_pct > 100 ? 100 : f.counted_pct;
	if (f.counted) {
		/* What the run counted since the event's last row: the totals' difference. */
		mpxkit_interval row;
		double span = u->run_ns - u->shown_run_ns[e];
		double since = span > 0 ? (counted_now - u->shown_counted_ns[e]) / span : 1.0;
		mpxkit_interval_between(&u->shown_iv[e], (double)u->shown[e], &u->iv[e],
					(double)total, fmin(fmax(since, 0.0), 1.0),
					mpxkit_sched_level(u->s), &row);
		f.lo = row.lo;
		f.hi = row.hi;
		u->shown[e] = total;
		u->shown_iv[e] = u->iv[e];
		u->shown_counted_ns[e] = counted_now;
		u->shown_run_ns[e] = u->run_ns;
	}
	f.has_iv = f.counted;
	u->counted_ns[e] = counted_now;
	f.exact = (double)(u->exact[e] - u->shown_exact[e]);
	u->shown_exact[e] = u->exact[e];
	return f;
}

/* CSV: the interval's rows as a table of their own, its header line only the first time. */
static int csv_rows(stat_intervals *iv, cli_table *t)
{
	cli_memout m;
	int rc;

	if (cli_memout_open(&m) < 0)
		return -1;
	rc = cli_table_print(t, CLI_FORMAT_CSV, m.f) < 0 ? -1 : 0;
	if (cli_memout_close(&m) < 0)
		rc = -1;
	if (rc == 0) {
		const char *text = iv->header_done ? m.text + strcspn(m.text, "\n") + 1 : m.text;
		iv->header_done = 1;
		if (fputs(text, iv->out) == EOF)
			rc = -1;
	}
	free(m.text);
	return rc;
}

int stat_intervals_rows(const stat_run *st, stat_intervals *iv, double t_s, stat_unit *u,
			size_t n_units, int last)
{
	cli_table *t = st->format == CLI_FORMAT_CSV ? new_table(st) : NULL;
	int rc = st->format == CLI_FORMAT_CSV && t == NULL ? -1 : 0;

	for (size_t i = 0; i < n_units && rc == 0; i++) {
		for (size_t e = 0; e < st->n_events; e++) {
			figures f = interval_figures(st, &u[i], e, t_s, last);
			if (t)
				rc |= table_row(st, t, &f);
			else if (iv->json)
				json_row(st, iv->json, &f);
			else
				text_line(st, iv->out, &f);
		}
		u[i].last_run_ns = u[i].run_ns;
	}
	if (t && rc == 0)
		rc = csv_rows(iv, t);
	cli_table_free(t);
	if (rc == 0 && fflush(iv->out) != 0)
		rc = -1;
	return rc;
}

int stat_intervals_end(const stat_run *st, stat_intervals *iv)
{
	int rc = 0;

	(void)st;
	if (iv->json)
		rc = cli_json_end(iv->json);
	iv->json = NULL;
	if (iv->out && fflush(iv->out) != 0)
		rc = -1;
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit stat: run a command with its events multiplexed by the engine, like perf stat. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpxkit/outfile.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"
#include "mpxkit/workload.h"

#include "cli.h"
#include "commands.h"
#include "output.h"

#define MAX_EVENTS 64

typedef struct stat_run {
	const char *cmd;
	mpxkit_sched_config cfg;
	const char *events[MAX_EVENTS];
	size_t n_events;
	char *event_list; /* -e's argument, split in place */
	const char *series_path, *output_path;
	cli_format format; /* of the report: perf stat's text, or one row per event */
	mpxkit_trace *series;
	int series_failed;
	int exact; /* --exact: the same events counted all the time too, in the same run */
} stat_run;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit stat [OPTIONS] [--] CMD [ARGS...]\n"
		"\n"
		"Run CMD, its threads and children included, with the events multiplexed on C\n"
		"counters by mpxkit's engine (doc/component.md), and print each event's\n"
		"estimated total and the share of the time it was counted.  User mode only.\n"
		"\n"
		"Options:\n"
		"  -e, --events LIST      comma-separated events (default: every event\n"
		"                         'mpxkit list' shows)\n"
		"      --estimator E      estimator (default %s; see 'mpxkit eval --list')\n"
		"  -s, --schedule S       schedule: round-robin (default), prior, adaptive,\n"
		"                         NAME:KEY=VALUE..., or a group file (doc/schedules.md)\n"
		"  -m, --model FILE       model file of the learned estimators, mlp or bigru\n"
		"                         (default: each one's model installed with mpxkit)\n"
		"  -r, --reference EV     also count EV in every slice, outside the C counters,\n"
		"                         for estimators that need it (ref-rate)\n"
		"  -c, --counters C       events counted at once, 1 to %d (default: the PMU's\n"
		"                         generic counters, %d without a PMU; here %zu)\n"
		"      --slice-us US      slice length in microseconds (default %d)\n"
		"      --series OUT.csv   write each rotation's estimates as a trace (bigru:\n"
		"                         those of its whole-run pass)\n"
		"      --exact            also count every event all the time, in the same run,\n"
		"                         and show each estimate's error against it (software\n"
		"                         events; hardware ones need a counter each)\n"
		"  -o, --output FILE      write the report to FILE instead of stderr\n"
		"  -f, --format FORMAT    table (default: as perf stat), csv or json: one row\n"
		"                         per event; an event never counted has no estimate\n"
		"                         (<not counted>, an empty field, null)\n"
		"  -h, --help             show this help and exit\n"
		"\n"
		"Exit status: CMD's (128 + N if signal N ended it); 1 usage error; 2 when\n"
		"mpxkit fails or CMD cannot be run.\n",
		MPXKIT_SCHED_DEFAULT_ESTIMATOR, MPXKIT_SCHED_MAX_COUNTERS,
		MPXKIT_SCHED_DEFAULT_COUNTERS, mpxkit_sched_default_counters(),
		MPXKIT_SCHED_DEFAULT_SLICE_US);
}

/* One setting through the engine's own parser; its "KEY=VALUE: reason" is told as the option's. */
static int set(stat_run *st, const char *option, const char *key, const char *value)
{
	mpxkit_diag diag = {0};
	const char *reason;

	if (mpxkit_sched_config_set(&st->cfg, key, value, &diag) == 0)
		return 0;
	reason = strstr(diag.msg, ": ");
	return cli_usage_error(st->cmd, "%s %s: %s", option, value, reason ? reason + 2 : diag.msg);
}

static int split_events(stat_run *st, char *list)
{
	for (char *ev = strtok(list, ","); ev; ev = strtok(NULL, ",")) {
		if (st->n_events == MAX_EVENTS)
			return cli_usage_error(st->cmd, "-e: at most %d events", MAX_EVENTS);
		st->events[st->n_events++] = ev;
	}
	return st->n_events ? 0 : cli_usage_error(st->cmd, "-e: no event named");
}

enum { OPT_ESTIMATOR = 256, OPT_SLICE, OPT_SERIES, OPT_EXACT };

/* Settings that only make sense together (ref-rate without a reference) are a usage error. */
static int check_settings(stat_run *st)
{
	mpxkit_diag diag = {0};

	if (mpxkit_sched_config_check(&st->cfg, &diag) == 0)
		return 0;
	return cli_usage_error(st->cmd, "--estimator %s needs --reference EV", st->cfg.estimator);
}

/* 0 to go on; otherwise *done is set and the return value is the exit status. */
static int parse_options(stat_run *st, int argc, char **argv, int *done)
{
	static const struct option options[] = {
	    {"events", required_argument, NULL, 'e'},
	    {"estimator", required_argument, NULL, OPT_ESTIMATOR},
	    {"schedule", required_argument, NULL, 's'},
	    {"model", required_argument, NULL, 'm'},
	    {"reference", required_argument, NULL, 'r'},
	    {"counters", required_argument, NULL, 'c'},
	    {"slice-us", required_argument, NULL, OPT_SLICE},
	    {"series", required_argument, NULL, OPT_SERIES},
	    {"exact", no_argument, NULL, OPT_EXACT},
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc = 0;

	*done = 1;
	optind = 1;
	opterr = 0;
	/* '+': options end at CMD, so CMD's own options are never taken for ours. */
	while (rc == 0 && (c = getopt_long(argc, argv, "+:e:m:c:r:s:o:f:h", options, NULL)) != -1) {
		switch (c) {
		case 'e':
			free(st->event_list);
			st->n_events = 0;
			st->event_list = strdup(optarg);
			rc = st->event_list ? split_events(st, st->event_list)
					    : cli_error(st->cmd, "out of memory");
			break;
		case OPT_ESTIMATOR:
			rc = set(st, "--estimator", "MPXKIT_ESTIMATOR", optarg);
			break;
		case 'm':
			rc = set(st, "--model", "MPXKIT_MODEL", optarg);
			break;
		case 's':
			rc = set(st, "--schedule", "MPXKIT_SCHEDULE", optarg);
			break;
		case 'c':
			rc = set(st, "--counters", "MPXKIT_COUNTERS", optarg);
			break;
		case 'r':
			rc = set(st, "--reference", "MPXKIT_REFERENCE", optarg);
			break;
		case OPT_SLICE:
			rc = set(st, "--slice-us", "MPXKIT_SLICE_US", optarg);
			break;
		case OPT_EXACT:
			st->exact = 1;
			break;
		case OPT_SERIES:
			st->series_path = optarg;
			break;
		case 'o':
			st->output_path = optarg;
			break;
		case 'f':
			if (cli_parse_format(optarg, &st->format) != 0)
				return cli_usage_error(st->cmd, "--format takes table, csv or json, "
								"not '%s'",
						       optarg);
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(st->cmd);
		default:
			return cli_option_error(st->cmd, c, argv);
		}
	}
	if (rc == 0 && optind >= argc)
		rc = cli_usage_error(st->cmd, "no command to run");
	if (rc == 0)
		rc = check_settings(st);
	*done = rc != 0;
	return rc;
}

/* The default events: every event the perf source lists here. */
static int default_events(stat_run *st, mpxkit_source *probe)
{
	mpxkit_source_event ev;

	for (size_t i = 0; st->n_events < MAX_EVENTS && mpxkit_source_list(probe, i, &ev) == 0; i++)
		st->events[st->n_events++] = ev.name;
	return st->n_events ? 0 : cli_error(st->cmd, "perf_event_open counts no event here");
}

static uint64_t as_count(double est)
{
	return est <= 0 ? 0 : est >= 1.8e19 ? UINT64_MAX : (uint64_t)(est + 0.5);
}

static void on_rotation(void *arg, size_t k, const double *est)
{
	stat_run *st = arg;
	uint64_t row[MAX_EVENTS];

	for (size_t e = 0; e < st->n_events; e++)
		row[e] = as_count(est[e]);
	if (!st->series_failed && mpxkit_trace_append(st->series, k, row) < 0)
		st->series_failed = 1;
}

/*
 * After the stop: when the totals are the whole-run pass's (bigru), so is
 * the series, in place of the windowed rows the callback wrote.
 */
static void take_whole_series(stat_run *st, const mpxkit_sched *s)
{
	mpxkit_sched_whole w;

	if (st->series == NULL || st->series_failed || mpxkit_sched_whole_series(s, &w) != 1 ||
	    w.n_rotations != st->series->n_steps)
		return;
	for (size_t i = 0; i < w.n_rotations * st->n_events; i++)
		st->series->values[i] = as_count(w.est[i]);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/*
 * An event never counted (fidelity 0: its group never held a counter, as
 * in a run shorter than one rotation) has no estimate: perf stat's
 * "<not counted>", not a false 0 (doc/component.md, "Never counted").
 */
static int counted(const double *fid, size_t e)
{
	return fid[e] > 0.0;
}

/* perf stat's report, with each estimate's error against the exact count under --exact. */
static void report_text(const stat_run *st, FILE *out, char **argv, const mpxkit_sched *s,
			const double *est, const double *fid, const mpxkit_source_count *exact,
			int rotations)
{
	const mpxkit_layout *l = mpxkit_sched_layout(s);

	fprintf(out, "\n Performance counter stats for '");
	for (int i = 0; argv[i]; i++)
		fprintf(out, "%s%s", i ? " " : "", argv[i]);
	fprintf(out,
		"' (mpxkit: %zu event%s on %zu counter%s, %zu group%s, %llu us slices, %s%s%s%s%s):\n\n",
		l->n_events, plural(l->n_events), mpxkit_sched_counters(s),
		plural(mpxkit_sched_counters(s)), l->n_groups, plural(l->n_groups),
		(unsigned long long)(st->cfg.slice_ns / 1000), mpxkit_sched_estimator(s),
		st->cfg.reference[0] ? ", reference " : "", st->cfg.reference,
		st->cfg.schedule[0] ? ", schedule " : "", st->cfg.schedule);
	for (size_t e = 0; e < st->n_events; e++) {
		if (!counted(fid, e)) {
			/* Padded only for the exact column: no trailing blanks. */
			fprintf(out, exact ? "%20s  %-28s" : "%20s  %s", "<not counted>",
				st->events[e]);
			if (exact)
				fprintf(out, "                 exact %20llu",
					(unsigned long long)exact[e].value);
			fputc('\n', out);
			continue;
		}
		fprintf(out, "%20.0f  %-28s (counted %5.1f%%)", est[e], st->events[e],
			100.0 * fid[e]);
		if (exact && exact[e].value > 0)
			fprintf(out, "  exact %20llu  %+7.2f%%", (unsigned long long)exact[e].value,
				100.0 * (est[e] - (double)exact[e].value) / (double)exact[e].value);
		else if (exact)
			fprintf(out, "  exact %20llu  %8s", (unsigned long long)exact[e].value,
				est[e] == 0 ? "0" : "-");
		fputc('\n', out);
	}
	fprintf(out, "\n %d rotation%s\n\n", rotations, plural((size_t)rotations));
}

/*
 * One row per event, for scripts: the estimate is missing (empty, null)
 * where none was counted; with --exact, the exact count too.
 */
static int report_rows(const stat_run *st, FILE *out, const double *est, const double *fid,
		       const mpxkit_source_count *exact)
{
	static const cli_column columns[] = {
	    {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"estimate", NULL, CLI_COL_INT, 0, 0, "<not counted>"},
	    {"counted_pct", NULL, CLI_COL_FIXED, 1, 0, NULL},
	    {"exact", NULL, CLI_COL_INT, 0, 0, NULL},
	};
	cli_table *t = cli_table_new(columns, sizeof columns / sizeof columns[0] - !exact);
	int rc = t ? 0 : -1;

	for (size_t e = 0; e < st->n_events && rc == 0; e++) {
		rc |= cli_table_text(t, st->events[e]);
		rc |= counted(fid, e) ? cli_table_uint(t, as_count(est[e])) : cli_table_missing(t);
		rc |= cli_table_real(t, 100.0 * fid[e]);
		if (exact)
			rc |= cli_table_uint(t, exact[e].value);
	}
	if (rc == 0)
		rc = cli_table_print(t, st->format, out);
	cli_table_free(t);
	return rc;
}

static int report(const stat_run *st, FILE *out, char **argv, const mpxkit_sched *s,
		  const double *est, const double *fid, const mpxkit_source_count *exact,
		  int rotations)
{
	if (st->format == CLI_FORMAT_TABLE) {
		report_text(st, out, argv, s, est, fid, exact, rotations);
		return 0;
	}
	return report_rows(st, out, est, fid, exact);
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : CLI_FAIL;
}

/* Counts CMD from its exec to its end; the report and the series are written afterwards. */
static int run(stat_run *st, char **argv)
{
	mpxkit_source_target target = {0, -1, 1, 0};
	mpxkit_source *src = NULL, *truth = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	mpxkit_source_count exact[MAX_EVENTS];
	double est[MAX_EVENTS], fid[MAX_EVENTS];
	int status = 0, rc, exec_rc, rotations;
	mpxkit_diag exec_diag = {0};
	mpxkit_workload w;

	if ((rc = mpxkit_workload_prepare(&w, argv, &diag)) < 0)
		return cli_lib_error(st->cmd, rc, &diag);
	target.pid = w.pid;
	if ((rc = mpxkit_source_open_perf(&src, &target, &diag)) < 0)
		goto lib_fail;
	for (size_t e = 0; e < st->n_events; e++)
		if ((rc = mpxkit_source_add(src, st->events[e], &diag)) < 0)
			goto lib_fail;
	if ((rc = mpxkit_sched_new(&s, src, &st->cfg, &diag)) < 0)
		goto lib_fail;
	src = NULL;
	/* --exact: the same events on a second source, enabled from the exec to the end. */
	if (st->exact) {
		if ((rc = mpxkit_source_open_perf(&truth, &target, &diag)) < 0)
			goto lib_fail;
		for (size_t e = 0; e < st->n_events; e++)
			if ((rc = mpxkit_source_add(truth, st->events[e], &diag)) < 0)
				goto lib_fail;
		if ((rc = mpxkit_source_enable(truth, MPXKIT_SOURCE_ALL)) < 0)
			goto lib_fail;
	}
	if (st->series)
		mpxkit_sched_on_rotation(s, on_rotation, st);
	if ((rc = mpxkit_sched_start(s)) < 0)
		goto lib_fail;
	/* Like time(1): a ^C goes to CMD (the workload's wait), and its counts are still reported. */
	exec_rc = mpxkit_workload_start(&w, &exec_diag);
	mpxkit_workload_wait(&w, &status);
	rc = mpxkit_sched_stop(s);
	rotations = mpxkit_sched_read(s, est, fid);
	if (truth && rc == 0 &&
	    (rc = mpxkit_source_read(truth, exact, MAX_EVENTS)) > 0)
		rc = 0;
	take_whole_series(st, s);
	if (rc == 0 && rotations < 0)
		rc = rotations;
	if (exec_rc < 0) {
		rc = cli_lib_error(st->cmd, exec_rc, &exec_diag);
		goto out;
	}
	if (rc < 0)
		goto lib_fail;
	/* Built in memory and written whole: FILE never holds half a report. */
	{
		cli_memout m;
		int bad = cli_memout_open(&m) < 0;

		bad = bad || report(st, m.f, argv, s, est, fid, truth ? exact : NULL, rotations) < 0;
		bad |= m.f != NULL && cli_memout_close(&m) < 0;
		if (bad) {
			free(m.text);
			rc = cli_error(st->cmd, "out of memory");
			goto out;
		}
		if (st->output_path)
			rc = cli_write_file(st->cmd, st->output_path, m.text, m.len);
		else
			rc = fwrite(m.text, 1, m.len, stderr) == m.len ? CLI_OK : CLI_FAIL;
		free(m.text);
		if (rc != CLI_OK)
			goto out;
	}
	if (st->series && st->series_failed) {
		rc = cli_error(st->cmd, "--series: out of memory");
		goto out;
	}
	if (st->series && (rc = mpxkit_trace_write(st->series, st->series_path, &diag)) < 0)
		goto lib_fail;
	rc = exit_status(status);
	goto out;
lib_fail:
	rc = cli_lib_error(st->cmd, rc, &diag);
out:
	mpxkit_workload_cancel(&w); /* a child never started exits 127 on the closed pipe */
	mpxkit_sched_free(s);
	mpxkit_source_free(src);
	mpxkit_source_free(truth);
	return rc;
}

int cmd_stat(int argc, char **argv)
{
	stat_run st = {.cmd = "stat"};
	mpxkit_source *probe = NULL;
	mpxkit_diag diag = {0};
	int rc, done;

	mpxkit_sched_config_default(&st.cfg);
	rc = parse_options(&st, argc, argv, &done);
	if (done) {
		free(st.event_list);
		return rc;
	}
	/* Before CMD runs: a report that cannot be written is known now, not after the run. */
	{
		const char *outputs[] = {st.output_path, st.series_path};
		if ((rc = cli_check_outputs(st.cmd, outputs, 2)) != CLI_OK) {
			free(st.event_list);
			return rc;
		}
	}
	rc = mpxkit_source_open_perf(&probe, NULL, &diag);
	if (rc < 0) {
		free(st.event_list);
		return cli_lib_error(st.cmd, rc, &diag);
	}
	if (st.n_events == 0 && (rc = default_events(&st, probe)) != 0)
		goto out;
	/*
	 * Before CMD runs, with or without --series: every event exists and is
	 * named once, the rule of a trace's columns and of record --perf.
	 */
	for (size_t e = 0; e < st.n_events; e++) {
		if ((rc = mpxkit_source_add_once(probe, st.events[e], &diag)) < 0) {
			rc = cli_lib_error(st.cmd, rc, &diag);
			goto out;
		}
	}
	if (st.series_path) {
		rc = mpxkit_trace_new(&st.series, "step", st.n_events, st.events, &diag);
		if (rc < 0) {
			rc = cli_lib_error(st.cmd, rc, &diag);
			goto out;
		}
	}
	rc = run(&st, argv + optind);
out:
	mpxkit_trace_free(st.series);
	mpxkit_source_free(probe); /* after run: the default events' names live in it */
	free(st.event_list);
	return rc;
}

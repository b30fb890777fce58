/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit stat: a command, every CPU or running tasks, their events multiplexed by the engine. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/attach.h"
#include "mpxkit/outfile.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"
#include "mpxkit/workload.h"

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "stat.h"

#define MAX_INTERVAL_MS 3600000L
#define MAX_REPEAT	100000L

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit stat [OPTIONS] [--] CMD [ARGS...]\n"
		"       mpxkit stat [OPTIONS] -a | -p PIDS | -t TIDS [[--] CMD [ARGS...]]\n"
		"\n"
		"Count the events of CMD (its threads and children included), of every CPU\n"
		"(-a) or of running tasks (-p, -t), multiplexed on C counters by mpxkit's\n"
		"engine (doc/component.md), and print each event's estimated total and the\n"
		"share of the time it was counted.  With -a, -p or -t the count lasts while\n"
		"CMD runs, or without CMD until the tasks end or ^C.  Events are named as\n"
		"doc/events.md says ('mpxkit list'); without a modifier they count user and\n"
		"kernel mode where the kernel allows it, else user mode (:u, :k to choose).\n"
		"\n"
		"Targets:\n"
		"  -a, --all-cpus         every online CPU, whatever runs there (needs root,\n"
		"                         CAP_PERFMON or kernel.perf_event_paranoid <= 0)\n"
		"  -p, --pid PIDS         running processes, PID,PID,...: each thread they\n"
		"                         have now, and what those threads start later\n"
		"  -t, --tid TIDS         running threads, TID,TID,..., and what they start\n"
		"                         later\n"
		"      --per-thread       one count per thread of -p or -t\n"
		"\n"
		"Runs and output:\n"
		"  -I, --interval-print MS  print the counts of every MS milliseconds (10 to\n"
		"                         %ld) as they come, each row with its interval\n"
		"  -r, --repeat N         run CMD N times (1 to %ld): each event's mean, and\n"
		"                         its spread as perf stat's ( +- x.xx%% ), the standard\n"
		"                         error of the mean over the mean\n"
		"  -o, --output FILE      write the report to FILE instead of stderr\n"
		"  -f, --format FORMAT    table (default: as perf stat), csv or json: one row\n"
		"                         per event; an event never counted has no estimate\n"
		"                         (<not counted>, an empty field, null)\n"
		"      --level L          the level of each total's interval, in (0, 0.99]\n"
		"                         (default 0.9; MPXKIT_LEVEL in PAPI): the truth in\n"
		"                         [lo, hi] with probability L, as calibrated on\n"
		"                         held-out traces (doc/estimators.md).  The table\n"
		"                         shows it as +- x%%: half of hi - lo over the\n"
		"                         estimate, from this one run's multiplexing; 0 for\n"
		"                         an event counted all the time, inf%% while the run\n"
		"                         has not shown the event's spread, <= hi for an\n"
		"                         estimate of 0 (no share of 0).  -r's ( +- x%% )\n"
		"                         is another figure: the spread of the mean over\n"
		"                         the runs.  CSV and JSON give lo and hi (hi empty,\n"
		"                         null, when unbounded); -r's rows have each run's,\n"
		"                         its means none; -I's rows have their own\n"
		"      --exact            also count every event all the time, in the same run,\n"
		"                         and show each estimate's error against it (software\n"
		"                         events; hardware ones need a counter each); against\n"
		"                         an exact 0 the error is the difference itself\n"
		"      --series OUT.csv   write each rotation's estimates as a trace (bigru:\n"
		"                         those of its whole-run pass)\n"
		"      --series-intervals OUT.csv  write each rotation's estimates with their\n"
		"                         intervals at the level: step,event,estimate,lo,hi\n"
		"                         (empty fields where the rotation did not count the\n"
		"                         event; hi empty while unbounded)\n"
		"\n"
		"Counting:\n"
		"  -e, --events LIST      comma-separated events (default: the kernel's\n"
		"                         generic events that open here)\n"
		"      --estimator E      estimator (default %s; see 'mpxkit eval --list')\n"
		"  -s, --schedule S       schedule: round-robin (default), prior, adaptive,\n"
		"                         NAME:KEY=VALUE..., or a group file (doc/schedules.md)\n"
		"  -m, --model FILE       model file of the learned estimators, mlp or bigru\n"
		"                         (default: each one's model installed with mpxkit)\n"
		"      --reference EV     also count EV in every slice, outside the C counters,\n"
		"                         for estimators that need it (ref-rate)\n"
		"  -c, --counters C       events counted at once, 1 to %d (default: the PMU's\n"
		"                         generic counters, %d without a PMU; here %zu)\n"
		"      --slice-us US      slice length in microseconds (default %d)\n"
		"      --multiplex WHAT   hardware (default): multiplex the events that take a\n"
		"                         counter, and count software events, tracepoints and\n"
		"                         msr all the time, exactly; all: multiplex every event\n"
		"  -h, --help             show this help and exit\n"
		"\n"
		"Exit status: CMD's (128 + N if signal N ended it; the last run's with -r);\n"
		"without CMD 0, or 128 + N when signal N ended the count; 1 usage error;\n"
		"2 when mpxkit fails or CMD cannot be run.\n",
		MAX_INTERVAL_MS, MAX_REPEAT, MPXKIT_SCHED_DEFAULT_ESTIMATOR,
		MPXKIT_SCHED_MAX_COUNTERS, MPXKIT_SCHED_DEFAULT_COUNTERS,
		mpxkit_sched_default_counters(), MPXKIT_SCHED_DEFAULT_SLICE_US);
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
		if (st->n_events == STAT_MAX_EVENTS)
			return cli_usage_error(st->cmd, "-e: at most %d events", STAT_MAX_EVENTS);
		st->events[st->n_events++] = ev;
	}
	return st->n_events ? 0 : cli_usage_error(st->cmd, "-e: no event named");
}

/* -p's or -t's list: task ids > 0, comma-separated, each once. */
static int parse_tasks(stat_run *st, const char *option, const char *text, stat_target target)
{
	const char *p = text;

	if (st->target != STAT_CMD && st->target != target)
		return cli_usage_error(st->cmd, "-a, -p and -t name one target: give one of them");
	st->target = target;
	st->n_tasks = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char num[24];
		long v;
		if (len == 0 || len >= sizeof num)
			return cli_usage_error(st->cmd, "%s '%s': not a list of task ids", option,
					       text);
		memcpy(num, p, len);
		num[len] = '\0';
		if (cli_parse_long(num, 1, 0x7fffffff, &v) != 0)
			return cli_usage_error(st->cmd, "%s '%s': not a list of task ids", option,
					       text);
		if (st->n_tasks == STAT_MAX_TASKS)
			return cli_usage_error(st->cmd, "%s: at most %d tasks", option,
					       STAT_MAX_TASKS);
		for (size_t i = 0; i < st->n_tasks; i++)
			if (st->tasks[i] == (pid_t)v)
				return cli_usage_error(st->cmd, "%s: %ld named twice", option, v);
		st->tasks[st->n_tasks++] = (pid_t)v;
		p += len;
		if (*p++ == '\0')
			return 0;
	}
}

enum {
	OPT_ESTIMATOR = 256,
	OPT_SLICE,
	OPT_SERIES,
	OPT_EXACT,
	OPT_REFERENCE,
	OPT_PER_THREAD,
	OPT_MULTIPLEX,
	OPT_LEVEL,
	OPT_SERIES_IV,
};

/* Options that only make sense together; the first conflict is the usage error. */
static int check_settings(stat_run *st)
{
	mpxkit_diag diag = {0};

	if (mpxkit_sched_config_check(&st->cfg, &diag) != 0)
		return cli_usage_error(st->cmd, "--estimator %s needs --reference EV",
				       st->cfg.estimator);
	if (st->argv == NULL && st->target == STAT_CMD)
		return cli_usage_error(st->cmd, "no command to run");
	if (st->repeat > 1 && st->argv == NULL)
		return cli_usage_error(st->cmd, "-r runs CMD N times: name a command");
	if (st->repeat > 1 && st->interval_ms)
		return cli_usage_error(st->cmd, "-r and -I do not go together");
	if (st->per_thread && st->target != STAT_PIDS && st->target != STAT_TIDS)
		return cli_usage_error(st->cmd, "--per-thread counts the threads of -p or -t");
	if (st->per_thread && st->repeat > 1)
		return cli_usage_error(st->cmd, "--per-thread and -r do not go together");
	if (st->series_iv_path && (st->per_thread || st->repeat > 1))
		return cli_usage_error(st->cmd, "--series-intervals writes one count: not with "
						"--per-thread or -r");
	if (st->series_path && (st->per_thread || st->repeat > 1))
		return cli_usage_error(st->cmd,
				       "--series writes one count: not with --per-thread or -r");
	return 0;
}

/* 0 to go on; otherwise *done is set and the return value is the exit status. */
static int parse_options(stat_run *st, int argc, char **argv, int *done)
{
	static const struct option options[] = {
	    {"events", required_argument, NULL, 'e'},
	    {"estimator", required_argument, NULL, OPT_ESTIMATOR},
	    {"schedule", required_argument, NULL, 's'},
	    {"model", required_argument, NULL, 'm'},
	    {"reference", required_argument, NULL, OPT_REFERENCE},
	    {"counters", required_argument, NULL, 'c'},
	    {"slice-us", required_argument, NULL, OPT_SLICE},
	    {"series", required_argument, NULL, OPT_SERIES},
	    {"series-intervals", required_argument, NULL, OPT_SERIES_IV},
	    {"exact", no_argument, NULL, OPT_EXACT},
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"all-cpus", no_argument, NULL, 'a'},
	    {"pid", required_argument, NULL, 'p'},
	    {"tid", required_argument, NULL, 't'},
	    {"per-thread", no_argument, NULL, OPT_PER_THREAD},
	    {"multiplex", required_argument, NULL, OPT_MULTIPLEX},
	    {"interval-print", required_argument, NULL, 'I'},
	    {"repeat", required_argument, NULL, 'r'},
	    {"level", required_argument, NULL, OPT_LEVEL},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc = 0;

	*done = 1;
	optind = 1;
	opterr = 0;
	/* '+': options end at CMD, so CMD's own options are never taken for ours. */
	while (rc == 0 &&
	       (c = getopt_long(argc, argv, "+:e:m:c:r:s:o:f:hap:t:I:", options, NULL)) != -1) {
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
		case OPT_REFERENCE:
			rc = set(st, "--reference", "MPXKIT_REFERENCE", optarg);
			break;
		case OPT_SLICE:
			rc = set(st, "--slice-us", "MPXKIT_SLICE_US", optarg);
			break;
		case OPT_MULTIPLEX:
			rc = set(st, "--multiplex", "MPXKIT_MULTIPLEX", optarg);
			break;
		case OPT_LEVEL:
			rc = set(st, "--level", "MPXKIT_LEVEL", optarg);
			break;
		case OPT_EXACT:
			st->exact = 1;
			break;
		case OPT_SERIES:
			st->series_path = optarg;
			break;
		case OPT_SERIES_IV:
			st->series_iv_path = optarg;
			break;
		case 'o':
			st->output_path = optarg;
			break;
		case 'f':
			if (cli_parse_format(optarg, &st->format) != 0)
				return cli_usage_error(st->cmd,
						       "--format takes table, csv or json, "
						       "not '%s'",
						       optarg);
			break;
		case 'a':
			if (st->target != STAT_CMD && st->target != STAT_ALL_CPUS)
				return cli_usage_error(
				    st->cmd, "-a, -p and -t name one target: give one of them");
			st->target = STAT_ALL_CPUS;
			break;
		case 'p':
			rc = parse_tasks(st, "--pid", optarg, STAT_PIDS);
			break;
		case 't':
			rc = parse_tasks(st, "--tid", optarg, STAT_TIDS);
			break;
		case OPT_PER_THREAD:
			st->per_thread = 1;
			break;
		case 'I':
			rc = cli_option_long(st->cmd, "--interval-print", optarg, 10,
					     MAX_INTERVAL_MS, &st->interval_ms);
			break;
		case 'r':
			rc = cli_option_long(st->cmd, "--repeat", optarg, 1, MAX_REPEAT,
					     &st->repeat);
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(st->cmd);
		default:
			return cli_option_error(st->cmd, c, argv);
		}
	}
	if (rc == 0 && optind < argc)
		st->argv = argv + optind;
	if (rc == 0)
		rc = check_settings(st);
	*done = rc != 0;
	return rc;
}

/* The default events: every event the perf source lists here. */
static int default_events(stat_run *st, mpxkit_source *probe)
{
	mpxkit_source_event ev;

	for (size_t i = 0; st->n_events < STAT_MAX_EVENTS && mpxkit_source_list(probe, i, &ev) == 0;
	     i++)
		st->events[st->n_events++] = ev.name;
	return st->n_events ? 0 : cli_error(st->cmd, "perf_event_open counts no event here");
}

/* Room for window k's row of estimates and intervals, doubling; -1 out of memory. */
static int grow_windows(stat_run *st, size_t k)
{
	size_t cap = st->cap_windows ? 2 * st->cap_windows : 256, n = st->n_events;
	double *e;
	mpxkit_interval *v;

	if (k < st->cap_windows)
		return 0;
	if ((e = realloc(st->win_est, cap * n * sizeof *e)) == NULL)
		return -1;
	st->win_est = e;
	if ((v = realloc(st->win_iv, cap * n * sizeof *v)) == NULL)
		return -1;
	st->win_iv = v;
	st->cap_windows = cap;
	return 0;
}

static void on_rotation(void *arg, size_t k, const double *est, const mpxkit_interval *iv)
{
	stat_run *st = arg;
	uint64_t row[STAT_MAX_EVENTS];
	size_t n = st->n_events;

	for (size_t e = 0; e < n; e++)
		row[e] = stat_as_count(est[e]);
	if (st->series && !st->series_failed && mpxkit_trace_append(st->series, k, row) < 0)
		st->series_failed = 1;
	if (!st->series_iv_path || st->series_failed)
		return;
	if (k != st->n_windows || grow_windows(st, k) < 0) {
		st->series_failed = 1;
		return;
	}
	memcpy(st->win_est + k * n, est, n * sizeof *est);
	memcpy(st->win_iv + k * n, iv, n * sizeof *iv);
	st->n_windows++;
}

/*
 * After the stop: when the totals are the whole-run pass's (bigru), so is
 * the series, in place of the windowed rows the callback wrote.
 */
static void take_whole_series(stat_run *st, const mpxkit_sched *s)
{
	mpxkit_sched_whole w;

	if (st->series_failed || mpxkit_sched_whole_series(s, &w) != 1)
		return;
	if (st->series && w.n_rotations == st->series->n_steps)
		for (size_t i = 0; i < w.n_rotations * st->n_events; i++)
			st->series->values[i] = stat_as_count(w.est[i]);
	if (st->series_iv_path && w.iv && w.n_rotations == st->n_windows) {
		memcpy(st->win_est, w.est, w.n_rotations * st->n_events * sizeof *w.est);
		memcpy(st->win_iv, w.iv, w.n_rotations * st->n_events * sizeof *w.iv);
	}
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : CLI_FAIL;
}

static uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- what is counted ------------------------------------------------------------------ */

/*
 * One task or CPU as the perf source takes it: the default domain (user and
 * kernel where allowed, doc/events.md; an event's own :u or :k wins); a task
 * with inherit, so threads and children it starts later count with it (perf
 * stat's default, for -p and -t as for CMD).
 */
static mpxkit_source_target counted(pid_t pid, int cpu)
{
	mpxkit_source_target t = {.pid = pid, .cpu = cpu, .inherit = pid != -1, .domain = 0};
	return t;
}

typedef struct target_list {
	mpxkit_source_target *t;
	size_t n, cap;
} target_list;

static int add_target(target_list *l, mpxkit_source_target t, mpxkit_diag *diag)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		mpxkit_source_target *grown = realloc(l->t, cap * sizeof *grown);
		if (grown == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory listing tasks");
		l->t = grown;
		l->cap = cap;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].pid == t.pid && l->t[i].cpu == t.cpu)
			return 0; /* a thread of two processes named: counted once */
	l->t[l->n++] = t;
	return 0;
}

/* Each CPU, each thread of each process, or each thread named: what the sources count. */
static int list_targets(const stat_run *st, pid_t child, target_list *l, mpxkit_diag *diag)
{
	int rc = 0;

	switch (st->target) {
	case STAT_CMD:
		return add_target(l, counted(child, -1), diag);
	case STAT_ALL_CPUS: {
		int *cpus = NULL;
		size_t n = 0;
		if ((rc = mpxkit_attach_cpus(&cpus, &n, diag)) < 0)
			return rc;
		for (size_t i = 0; i < n && rc == 0; i++) {
			mpxkit_source_target t = counted(-1, cpus[i]);
			t.cpu_set = 1; /* cpumask PMUs on their mask's CPUs alone */
			rc = add_target(l, t, diag);
		}
		free(cpus);
		return rc;
	}
	case STAT_PIDS:
		for (size_t p = 0; p < st->n_tasks && rc == 0; p++) {
			pid_t *tids = NULL;
			size_t n = 0;
			if ((rc = mpxkit_attach_threads(st->tasks[p], &tids, &n, diag)) < 0)
				return rc;
			for (size_t i = 0; i < n && rc == 0; i++)
				rc = add_target(l, counted(tids[i], -1), diag);
			free(tids);
		}
		return rc;
	case STAT_TIDS:
		for (size_t i = 0; i < st->n_tasks && rc == 0; i++)
			if ((rc = mpxkit_attach_thread_exists(st->tasks[i], diag)) == 0)
				rc = add_target(l, counted(st->tasks[i], -1), diag);
		return rc;
	}
	return -MPXKIT_EINVAL;
}

static void free_units(stat_unit *u, size_t n)
{
	for (size_t i = 0; u && i < n; i++) {
		mpxkit_sched_free(u[i].s);
		mpxkit_source_free(u[i].truth);
	}
	free(u);
}

/* The opened sources (NULL where a task had ended) as one: itself, or their sum. */
static int join_sources(mpxkit_source **src, size_t n, mpxkit_source **out, mpxkit_diag *diag)
{
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		if (src[i])
			src[k++] = src[i];
	if (k == 1) {
		*out = src[0];
		return 0;
	}
	rc = mpxkit_source_open_sum(out, src, k, diag);
	if (rc < 0)
		for (size_t i = 0; i < k; i++)
			mpxkit_source_free(src[i]);
	return rc;
}

static void free_sources(mpxkit_source **src, size_t n)
{
	for (size_t i = 0; src && i < n; i++)
		mpxkit_source_free(src[i]);
	free(src);
}

/*
 * The counts of one run: one engine over all targets (their sum: each
 * slice's group on every CPU or thread at once), or with --per-thread one
 * engine per thread; with --exact a source per count that counts every
 * event all the time.
 */
static int open_units(stat_run *st, const target_list *l, stat_unit **out, size_t *n_units,
		      mpxkit_diag *diag)
{
	mpxkit_source **src = calloc(l->n, sizeof *src), **truth = calloc(l->n, sizeof *truth);
	size_t n = st->per_thread ? l->n : 1, k = 0;
	stat_unit *u = calloc(n, sizeof *u);
	int rc;

	if (src == NULL || truth == NULL || u == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory opening counters");
		goto out;
	}
	if ((rc = mpxkit_attach_open(src, l->t, l->n, st->events, st->n_events, diag)) < 0)
		goto out;
	if (st->exact &&
	    (rc = mpxkit_attach_open(truth, l->t, l->n, st->events, st->n_events, diag)) < 0)
		goto out;
	if (!st->per_thread) {
		mpxkit_source *one = NULL;
		if ((rc = join_sources(src, l->n, &one, diag)) < 0 ||
		    (rc = mpxkit_sched_new(&u[0].s, one, &st->cfg, diag)) < 0) {
			mpxkit_source_free(one);
			memset(src, 0, l->n * sizeof *src);
			goto out;
		}
		memset(src, 0, l->n * sizeof *src);
		if (st->exact && (rc = join_sources(truth, l->n, &u[0].truth, diag)) < 0) {
			memset(truth, 0, l->n * sizeof *truth);
			goto out;
		}
		memset(truth, 0, l->n * sizeof *truth);
		k = 1;
	}
	for (size_t i = 0; st->per_thread && i < l->n; i++) {
		if (src[i] == NULL)
			continue; /* ended before its counters opened */
		u[k].tid = l->t[i].pid;
		mpxkit_attach_comm(u[k].tid, u[k].comm, sizeof u[k].comm);
		snprintf(u[k].label, sizeof u[k].label, "%s-%ld", u[k].comm, (long)u[k].tid);
		if ((rc = mpxkit_sched_new(&u[k].s, src[i], &st->cfg, diag)) < 0)
			goto out;
		src[i] = NULL;
		u[k].truth = truth[i]; /* NULL: ended before; its exact counts are 0 */
		truth[i] = NULL;
		k++;
	}
	st->groups = mpxkit_sched_layout(u[0].s)->n_groups;
	st->counters = mpxkit_sched_counters(u[0].s);
	st->all_along = st->n_events - mpxkit_sched_n_multiplexed(u[0].s);
	snprintf(st->estimator, sizeof st->estimator, "%s", mpxkit_sched_estimator(u[0].s));
	*out = u;
	*n_units = k;
	u = NULL;
	rc = 0;
out:
	free_units(u, k);
	free_sources(src, l->n);
	free_sources(truth, l->n);
	return rc;
}

/* Each unit's totals now (or the stop's, once stopped), and its exact counts. */
static int read_units(stat_run *st, stat_unit *u, size_t n)
{
	mpxkit_source_count c[STAT_MAX_EVENTS];

	for (size_t i = 0; i < n; i++) {
		int rc = mpxkit_sched_read_iv(u[i].s, u[i].est, u[i].fid, &u[i].run_ns, u[i].iv);
		if (rc < 0)
			return rc;
		u[i].rotations = rc;
		if (u[i].truth == NULL)
			continue;
		if ((rc = mpxkit_source_read(u[i].truth, c, STAT_MAX_EVENTS)) < 0)
			return rc;
		for (size_t e = 0; e < st->n_events; e++)
			u[i].exact[e] = c[e].value;
	}
	return 0;
}

/* ---- the end of a count ---------------------------------------------------------------- */

/*
 * Without CMD a count ends when its tasks do, or at SIGINT, SIGTERM or
 * SIGHUP, after which the report is still written and the exit status is
 * 128 + N, as perf stat's.  The signals are blocked but inside the wait, so
 * one never comes between a check and the wait.
 */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

typedef struct signals {
	int on;
	sigset_t saved, inside; /* the mask before; the mask inside the wait */
	struct sigaction old[N_STOP_SIGNALS];
} signals;

static void catch_signals(signals *sg)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (size_t i = 0; i < N_STOP_SIGNALS; i++)
		sigaddset(&block, stop_signals[i]);
	stop_signal = 0;
	sigprocmask(SIG_BLOCK, &block, &sg->saved);
	sg->inside = sg->saved;
	for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
		sigaction(stop_signals[i], &sa, &sg->old[i]);
		sigdelset(&sg->inside, stop_signals[i]);
	}
	sg->on = 1;
}

static void release_signals(signals *sg)
{
	if (!sg->on)
		return;
	/* Unblocked while still caught: one that came meanwhile only says it came. */
	sigprocmask(SIG_SETMASK, &sg->saved, NULL);
	for (size_t i = 0; i < N_STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &sg->old[i], NULL);
	sg->on = 0;
}

/* What ends the count: CMD's end; else the tasks' (-p processes, -t threads), or none (-a). */
static int watch_end(const stat_run *st, pid_t child, mpxkit_attach_watch **w, mpxkit_diag *diag)
{
	if (st->argv)
		return mpxkit_attach_watch_new(w, &child, 1, 0, diag);
	if (st->target == STAT_ALL_CPUS)
		return mpxkit_attach_watch_new(w, NULL, 0, 0, diag);
	return mpxkit_attach_watch_new(w, st->tasks, st->n_tasks, st->target == STAT_TIDS, diag);
}

/*
 * Waits for the end of the count, printing the rows of each interval on
 * the way under -I.  0, or a negative code.
 */
static int wait_end(stat_run *st, mpxkit_attach_watch *w, const signals *sg, stat_unit *u, size_t n,
		    stat_intervals *iv, uint64_t t0)
{
	uint64_t step = (uint64_t)st->interval_ms * 1000000u, deadline = step ? t0 + step : 0;

	for (;;) {
		int rc = mpxkit_attach_wait(w, deadline, sg->on ? &sg->inside : NULL);
		if (rc < 0 || rc == 1 || (rc == 2 && sg->on))
			return rc < 0 ? rc : 0;
		if (rc != 0)
			continue; /* a signal for CMD: the workload passed it on */
		uint64_t now = monotonic_ns();
		if ((rc = read_units(st, u, n)) < 0 ||
		    (rc = stat_intervals_rows(st, iv, (double)(now - t0) / 1e9, u, n, 0)) < 0)
			return rc;
		/* Late (a loaded machine): the next row is at the next whole interval. */
		deadline += step;
		if (deadline <= now)
			deadline = t0 + ((now - t0) / step + 1) * step;
	}
}

/* ---- one run ---------------------------------------------------------------------------- */

typedef struct one_run {
	mpxkit_workload w;
	int have_workload;
	target_list targets;
	stat_unit *u;
	size_t n_units;
	mpxkit_attach_watch *watch;
	signals sg;
	int status;  /* CMD's wait status */
	int exec_rc; /* CMD's exec */
	mpxkit_diag exec_diag;
} one_run;

static void end_run(one_run *r)
{
	if (r->have_workload)
		mpxkit_workload_cancel(
		    &r->w); /* a child never started exits 127 on the closed pipe */
	release_signals(&r->sg);
	mpxkit_attach_watch_free(r->watch);
	free_units(r->u, r->n_units);
	free(r->targets.t);
}

/* Everything ready to count: the held CMD, the sources, their engines, what ends the count. */
static int set_up(stat_run *st, one_run *r, mpxkit_diag *diag)
{
	int rc;

	if (st->argv) {
		if ((rc = mpxkit_workload_prepare(&r->w, st->argv, diag)) < 0)
			return rc;
		r->have_workload = 1;
	} else {
		catch_signals(&r->sg);
	}
	if ((rc = list_targets(st, r->have_workload ? r->w.pid : 0, &r->targets, diag)) < 0 ||
	    (rc = open_units(st, &r->targets, &r->u, &r->n_units, diag)) < 0 ||
	    (rc = watch_end(st, r->have_workload ? r->w.pid : 0, &r->watch, diag)) < 0)
		return rc;
	if (st->series || st->series_iv_path)
		mpxkit_sched_on_rotation_iv(r->u[0].s, on_rotation, st);
	return 0;
}

/* The truth first, then the engines: every event the engine can count is counted exactly. */
static int start_counting(one_run *r)
{
	int rc = 0;

	for (size_t i = 0; i < r->n_units && rc == 0; i++)
		if (r->u[i].truth)
			rc = mpxkit_source_enable(r->u[i].truth, MPXKIT_SOURCE_ALL);
	for (size_t i = 0; i < r->n_units && rc == 0; i++)
		rc = mpxkit_sched_start(r->u[i].s);
	return rc;
}

static int stop_counting(stat_run *st, one_run *r)
{
	int rc = 0;

	for (size_t i = 0; i < r->n_units; i++) {
		int one = mpxkit_sched_stop(r->u[i].s);
		if (one < 0 && rc == 0)
			rc = one;
	}
	if (rc == 0)
		rc = read_units(st, r->u, r->n_units);
	if (r->n_units)
		take_whole_series(st, r->u[0].s);
	return rc;
}

/*
 * Counts once: CMD from its exec to its end, or the target until it ends
 * or a signal.  The units hold the totals afterwards.  Like time(1), a ^C
 * goes to CMD (the workload's wait), and its counts are still reported.
 */
static int count(stat_run *st, one_run *r, stat_intervals *iv, mpxkit_diag *diag)
{
	uint64_t t0;
	int rc, wait_rc;

	if ((rc = set_up(st, r, diag)) < 0 || (rc = start_counting(r)) < 0)
		return rc;
	t0 = monotonic_ns();
	if (r->have_workload)
		r->exec_rc = mpxkit_workload_start(&r->w, &r->exec_diag);
	if (r->have_workload && st->interval_ms == 0)
		wait_rc = 0; /* the wait below is the end */
	else
		wait_rc = wait_end(st, r->watch, &r->sg, r->u, r->n_units, iv, t0);
	if (r->have_workload) {
		mpxkit_workload_wait(&r->w, &r->status);
		r->have_workload = 0;
	}
	rc = stop_counting(st, r);
	st->seconds = (double)(monotonic_ns() - t0) / 1e9;
	if (rc == 0)
		rc = wait_rc;
	if (rc == 0 && st->interval_ms)
		rc = stat_intervals_rows(st, iv, st->seconds, r->u, r->n_units, 1);
	/* The signals stay caught until the report is out (end_run): a second ^C cannot cut it. */
	return rc;
}

/* CMD's exit status, or without CMD 0 or 128 + the signal that ended the count. */
static int run_status(const stat_run *st, const one_run *r)
{
	if (st->argv)
		return exit_status(r->status);
	return stop_signal ? 128 + stop_signal : CLI_OK;
}

/* ---- output ---------------------------------------------------------------------------- */

/*
 * Where the report goes: stderr, or FILE through mpxkit_outfile, whole or
 * not at all; rows under -I are streamed into its temporary file.
 */
typedef struct sink {
	mpxkit_outfile *of;
	FILE *f;
} sink;

static int sink_open(const stat_run *st, sink *k)
{
	mpxkit_diag diag = {0};
	int fd, rc;

	k->of = NULL;
	k->f = stderr;
	if (st->output_path == NULL)
		return CLI_OK;
	if ((rc = mpxkit_outfile_open(&k->of, st->output_path, &diag)) < 0)
		return cli_lib_error(st->cmd, rc, &diag);
	fd = dup(mpxkit_outfile_fd(k->of));
	if (fd < 0 || (k->f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		mpxkit_outfile_abort(k->of);
		k->of = NULL;
		k->f = stderr;
		return cli_error(st->cmd, "%s: %s", st->output_path, strerror(errno));
	}
	return CLI_OK;
}

/* Finishes the output: committed when ok (its last rows written), else taken back. */
static int sink_close(const stat_run *st, sink *k, int ok)
{
	mpxkit_diag diag = {0};
	int bad = 0, rc;

	if (k->of == NULL)
		return fflush(stderr) == 0 || !ok ? CLI_OK : CLI_FAIL;
	bad = fclose(k->f) != 0;
	if (!ok || bad) {
		mpxkit_outfile_abort(k->of);
		return ok ? cli_error(st->cmd, "%s: write failed", st->output_path) : CLI_OK;
	}
	rc = mpxkit_outfile_commit(k->of, &diag);
	return rc < 0 ? cli_lib_error(st->cmd, rc, &diag) : CLI_OK;
}

/*
 * The report built whole in memory, then written: FILE never holds half a
 * report.  The runs' means under -r (r), else the units' totals.
 */
static int write_report(stat_run *st, const stat_unit *u, size_t n_units, const stat_result *r,
			size_t n_runs)
{
	cli_memout m;
	int bad = cli_memout_open(&m) < 0, rc;

	bad = bad ||
	      (r ? stat_report_runs(st, m.f, r, n_runs) : stat_report(st, m.f, u, n_units)) < 0;
	bad |= m.f != NULL && cli_memout_close(&m) < 0;
	if (bad) {
		free(m.text);
		return cli_error(st->cmd, "out of memory");
	}
	if (st->output_path)
		rc = cli_write_file(st->cmd, st->output_path, m.text, m.len);
	else
		rc = fwrite(m.text, 1, m.len, stderr) == m.len ? CLI_OK : CLI_FAIL;
	free(m.text);
	return rc;
}

/*
 * --series-intervals: one row per window and event, the estimate and its
 * interval at the level; a window that did not count the event has none
 * (empty fields), an interval unbounded above an empty hi.
 */
static int write_series_intervals(stat_run *st)
{
	static const cli_column cols[] = {
	    {"step", NULL, CLI_COL_INT, 0, 0, NULL},	 {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"estimate", NULL, CLI_COL_INT, 0, 0, NULL}, {"lo", NULL, CLI_COL_INT, 0, 0, NULL},
	    {"hi", NULL, CLI_COL_INT, 0, 0, NULL},
	};
	cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	int bad = t == NULL, rc;

	for (size_t k = 0; !bad && k < st->n_windows; k++)
		for (size_t e = 0; e < st->n_events; e++) {
			const mpxkit_interval *v = &st->win_iv[k * st->n_events + e];
			int counted = !(v->flags & MPXKIT_INTERVAL_UNOBSERVED);
			bad |= cli_table_int(t, (int64_t)k) | cli_table_text(t, st->events[e]);
			bad |= counted
				   ? cli_table_int(t, llround(st->win_est[k * st->n_events + e]))
				   : cli_table_missing(t);
			bad |= counted ? cli_table_int(t, llround(v->lo)) : cli_table_missing(t);
			bad |= counted && isfinite(v->hi) ? cli_table_int(t, llround(v->hi))
							  : cli_table_missing(t);
		}
	rc = bad ? cli_error(st->cmd, "--series-intervals: out of memory")
		 : cli_table_emit(st->cmd, t, CLI_FORMAT_CSV, st->series_iv_path);
	cli_table_free(t);
	return rc;
}

/* The series, once the report is out. */
static int write_series(stat_run *st)
{
	mpxkit_diag diag = {0};
	int rc;

	if (st->series == NULL && st->series_iv_path == NULL)
		return CLI_OK;
	if (st->series_failed)
		return cli_error(st->cmd, "--series: out of memory");
	if (st->series && (rc = mpxkit_trace_write(st->series, st->series_path, &diag)) < 0)
		return cli_lib_error(st->cmd, rc, &diag);
	return st->series_iv_path ? write_series_intervals(st) : CLI_OK;
}

/* A count's failure as one line: CMD that could not run, else the library's. */
static int run_error(stat_run *st, const one_run *r, int rc, const mpxkit_diag *diag)
{
	if (r->exec_rc < 0)
		return cli_lib_error(st->cmd, r->exec_rc, &r->exec_diag);
	return cli_lib_error(st->cmd, rc, diag);
}

/* One count, its report at the end, or its rows as it goes under -I. */
static int run_once(stat_run *st)
{
	one_run r;
	mpxkit_diag diag = {0};
	stat_intervals iv = {0};
	sink k = {NULL, stderr};
	int rc;

	memset(&r, 0, sizeof r);
	if (st->interval_ms) {
		if ((rc = sink_open(st, &k)) != CLI_OK)
			return rc;
		if (stat_intervals_begin(st, &iv, k.f) < 0) {
			sink_close(st, &k, 0);
			return cli_error(st->cmd, "out of memory");
		}
	}
	rc = count(st, &r, &iv, &diag);
	if (rc < 0 || r.exec_rc < 0) {
		rc = run_error(st, &r, rc, &diag);
		if (st->interval_ms) {
			stat_intervals_end(st, &iv);
			sink_close(st, &k, 0);
		}
		end_run(&r);
		return rc;
	}
	if (st->interval_ms) {
		int bad = stat_intervals_end(st, &iv) < 0;
		rc = sink_close(st, &k, 1);
		if (rc == CLI_OK && bad)
			rc = cli_error(st->cmd, "writing the rows failed");
	} else {
		rc = write_report(st, r.u, r.n_units, NULL, 0);
	}
	if (rc == CLI_OK)
		rc = write_series(st);
	if (rc == CLI_OK)
		rc = run_status(st, &r);
	end_run(&r);
	return rc;
}

/* -r N: CMD N times, each run's totals kept; a run CMD did not finish by itself is the last. */
static int run_repeated(stat_run *st)
{
	stat_result *res = calloc((size_t)st->repeat, sizeof *res);
	size_t done = 0;
	int rc = CLI_OK, status = 0;

	if (res == NULL)
		return cli_error(st->cmd, "out of memory");
	while (done < (size_t)st->repeat) {
		one_run r;
		mpxkit_diag diag = {0};
		int crc;

		memset(&r, 0, sizeof r);
		crc = count(st, &r, NULL, &diag);
		if (crc < 0 || r.exec_rc < 0) {
			rc = run_error(st, &r, crc, &diag);
			end_run(&r);
			free(res);
			return rc;
		}
		memcpy(res[done].est, r.u[0].est, sizeof res[done].est);
		memcpy(res[done].fid, r.u[0].fid, sizeof res[done].fid);
		memcpy(res[done].iv, r.u[0].iv, sizeof res[done].iv);
		memcpy(res[done].exact, r.u[0].exact, sizeof res[done].exact);
		res[done].rotations = r.u[0].rotations;
		res[done].seconds = st->seconds;
		status = r.status;
		done++;
		end_run(&r);
		/* A signal passed on to CMD (^C, kill) ends the repeats, as perf stat's. */
		if (WIFSIGNALED(status))
			break;
	}
	rc = write_report(st, NULL, 0, res, done);
	free(res);
	return rc == CLI_OK ? exit_status(status) : rc;
}

/*
 * The source that checks every event before CMD runs, counting as the run
 * will: the calling thread, or system-wide the first CPU of the set (a
 * cpumask PMU's event then opens on its mask or holds its place).
 */
static int open_probe(const stat_run *st, mpxkit_source **probe, mpxkit_source_target *t,
		      mpxkit_diag *diag)
{
	int *cpus = NULL, rc;
	size_t n = 0;

	*t = MPXKIT_SOURCE_SELF;
	if (st->target != STAT_ALL_CPUS)
		return mpxkit_source_open_perf(probe, t, diag);
	if ((rc = mpxkit_attach_cpus(&cpus, &n, diag)) < 0)
		return rc;
	*t = counted(-1, n ? cpus[0] : 0);
	t->cpu_set = 1;
	free(cpus);
	return mpxkit_source_open_perf(probe, t, diag);
}

/* An event the probe refused: as the run's own open would say it (a permission: what it needs). */
static int probe_refused(const mpxkit_source_target *t, int rc, mpxkit_diag *diag)
{
	mpxkit_diag why = *diag;

	return mpxkit_attach_refused(t, rc, &why, diag);
}

int cmd_stat(int argc, char **argv)
{
	stat_run st = {.cmd = "stat", .repeat = 1};
	mpxkit_source *probe = NULL;
	mpxkit_source_target probe_target;
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
		const char *outputs[] = {st.output_path, st.series_path, st.series_iv_path};
		const char *inputs[] = {st.cfg.model, cli_program_is_path(argv[optind]) ? argv[optind] : NULL};
		if ((rc = cli_check_outputs(st.cmd, outputs, 3, inputs, 2)) != CLI_OK) {
			free(st.event_list);
			return rc;
		}
	}
	rc = open_probe(&st, &probe, &probe_target, &diag);
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
			rc = cli_lib_error(st.cmd, probe_refused(&probe_target, rc, &diag), &diag);
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
	rc = st.repeat > 1 ? run_repeated(&st) : run_once(&st);
out:
	mpxkit_trace_free(st.series);
	free(st.win_est);
	free(st.win_iv);
	mpxkit_source_free(probe); /* after the runs: the default events' names live in it */
	free(st.event_list);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit stat's state, shared by its runs (cmd_stat.c) and its reports (stat_print.c). */
#ifndef MPXKIT_CLI_STAT_H
#define MPXKIT_CLI_STAT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

#include "output.h"

#define STAT_MAX_EVENTS 64
#define STAT_MAX_TASKS	64 /* -p and -t lists */

/* What is counted: perf stat's targets. */
typedef enum stat_target {
	STAT_CMD,      /* the command mpxkit starts, its threads and children */
	STAT_ALL_CPUS, /* -a: every online CPU, whatever runs there */
	STAT_PIDS,     /* -p: running processes, each thread they have at the attach */
	STAT_TIDS,     /* -t: running threads */
} stat_target;

/*
 * One count of the events, by one engine: the whole target, or one thread
 * of it under --per-thread.  The last read, and under -I what the rows
 * printed so far add up to.
 */
typedef struct stat_unit {
	mpxkit_sched *s;
	mpxkit_source *truth; /* --exact: the events counted all the time, or NULL */
	pid_t tid;	      /* --per-thread: the thread; 0 for the whole target */
	char comm[32];	      /* --per-thread: its name when the count began */
	char label[48];	      /* --per-thread: "COMM-TID", as perf stat shows it */
	double est[STAT_MAX_EVENTS], fid[STAT_MAX_EVENTS], run_ns;
	mpxkit_interval iv[STAT_MAX_EVENTS]; /* each total's interval at the level */
	uint64_t exact[STAT_MAX_EVENTS];
	int rotations;
	/* -I */
	int64_t shown[STAT_MAX_EVENTS];	       /* the estimates' rows, summed */
	/* The total's interval, counted and run time at the event's last row it was counted in. */
	mpxkit_interval shown_iv[STAT_MAX_EVENTS];
	double shown_counted_ns[STAT_MAX_EVENTS], shown_run_ns[STAT_MAX_EVENTS];
	uint64_t shown_exact[STAT_MAX_EVENTS]; /* the exact counts' rows, summed */
	double counted_ns[STAT_MAX_EVENTS];    /* each event's counted time at the last rows */
	double last_run_ns;		       /* the run's time at the last rows */
} stat_unit;

/* One run's totals, for -r: the whole target's. */
typedef struct stat_result {
	double est[STAT_MAX_EVENTS], fid[STAT_MAX_EVENTS];
	mpxkit_interval iv[STAT_MAX_EVENTS];
	uint64_t exact[STAT_MAX_EVENTS];
	int rotations;
	double seconds;
} stat_result;

typedef struct stat_run {
	const char *cmd;
	mpxkit_sched_config cfg;
	const char *events[STAT_MAX_EVENTS];
	size_t n_events;
	char *event_list; /* -e's argument, split in place */
	const char *series_path, *output_path;
	cli_format format; /* of the report: perf stat's text, or one row per event */
	mpxkit_trace *series;
	int series_failed;
	/* --series-intervals: each window's estimates and intervals, n_windows rows of n_events */
	const char *series_iv_path;
	double *win_est;
	mpxkit_interval *win_iv;
	size_t n_windows, cap_windows;
	int exact; /* --exact: the same events counted all the time too, in the same run */
	stat_target target;
	pid_t tasks[STAT_MAX_TASKS]; /* -p's processes or -t's threads */
	size_t n_tasks;
	int per_thread;	  /* --per-thread: one count per thread of -p or -t */
	long interval_ms; /* -I: 0 for none */
	long repeat;	  /* -r: runs of CMD */
	char **argv;	  /* CMD, or NULL when the count lasts until the target ends or ^C */
	/* Filled by the run, from its first engine, for the report's header. */
	size_t groups, counters;
	size_t all_along; /* events counted all the time (MPXKIT_MULTIPLEX=hardware) */
	char estimator[64];
	double seconds; /* the count's wall time */
} stat_run;

/* The run's totals as perf stat prints them, or one row per event (-f csv, json). */
int stat_report(const stat_run *st, FILE *out, const stat_unit *u, size_t n_units);

/* -r: the mean of each event over the runs, with perf stat's spread; each run's rows in CSV and
 * JSON. */
int stat_report_runs(const stat_run *st, FILE *out, const stat_result *r, size_t n_runs);

/*
 * -I: rows streamed to out as the run goes, one per event (and thread) per
 * interval, each the count over that interval.  begin before the first,
 * end after the last (which is the stop's, last set).
 */
typedef struct stat_intervals {
	FILE *out;
	cli_json *json;
	int header_done;
} stat_intervals;

int stat_intervals_begin(const stat_run *st, stat_intervals *iv, FILE *out);
int stat_intervals_rows(const stat_run *st, stat_intervals *iv, double t_s, stat_unit *u,
			size_t n_units, int last);
int stat_intervals_end(const stat_run *st, stat_intervals *iv);

/* An estimate as a count: rounded, 0 below 0. */
uint64_t stat_as_count(double est);

#endif

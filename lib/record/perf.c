/* SPDX-License-Identifier: BSD-3-Clause */
/* Ground truth on perf_event: every counter-free event in one run, or C events per run (OCOE). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/event.h"
#include "mpxkit/record.h"
#include "mpxkit/workload.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"

/* One run's per-interval counts: steps rows of its k events, step-major. */
typedef struct perf_run {
	size_t first, k; /* its events: first .. first+k-1 of the recording */
	size_t steps, cap;
	uint64_t *rows;
	int keep_last;		/* all at once: the interval the program ended in is a step */
	uint64_t last_step_ns;	/* its wall time, when kept */
	int reads;		/* the most system calls one sample took */
	uint64_t late_ns;	/* the most a read ended after its deadline */
} perf_run;

static int append_row(perf_run *r, const uint64_t *row)
{
	if (r->steps == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		uint64_t *rows = realloc(r->rows, cap * r->k * sizeof *rows);
		if (rows == NULL)
			return -MPXKIT_ENOMEM;
		r->rows = rows;
		r->cap = cap;
	}
	memcpy(r->rows + r->steps * r->k, row, r->k * sizeof *row);
	r->steps++;
	return 0;
}

static void add_ns(struct timespec *ts, uint64_t ns)
{
	uint64_t total = (uint64_t)ts->tv_nsec + ns;
	ts->tv_sec += (time_t)(total / 1000000000u);
	ts->tv_nsec = (long)(total % 1000000000u);
}

static void note_status(mpxkit_record_status *st, int wstatus)
{
	mpxkit_record_status now = {WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
				    WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0};

	/* The first run that failed is the one to report. */
	if (st->exit_code == 0 && st->signal == 0)
		*st = now;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A sample: every slot at one instant, at the least cost (one group read), into now. */
static int take_sample(mpxkit_source *src, perf_run *r, const size_t *slots, uint64_t *now)
{
	int rc = mpxkit_source_snapshot(src, slots, r->k, now, NULL);

	if (rc > r->reads)
		r->reads = rc;
	return rc < 0 ? rc : 0;
}

/*
 * A loaded machine can keep the recorder off its CPU past a deadline: that
 * step is longer than an interval (and the next, read at once, shorter).
 * The recording says by how much at worst, rather than pass every step off
 * as a whole interval.
 */
static void note_lateness(perf_run *r, struct timespec deadline)
{
	uint64_t due = (uint64_t)deadline.tv_sec * 1000000000u + (uint64_t)deadline.tv_nsec;
	uint64_t t = now_ns();

	if (t > due && t - due > r->late_ns)
		r->late_ns = t - due;
}

/* The step since the previous sample: counts only grow (a smaller one would be a kernel bug). */
static int append_step(perf_run *r, uint64_t *prev, const uint64_t *now, uint64_t *row)
{
	for (size_t e = 0; e < r->k; e++) {
		row[e] = now[e] >= prev[e] ? now[e] - prev[e] : 0;
		prev[e] = now[e];
	}
	return append_row(r, row);
}

/*
 * Reads the counts every interval until the program ends.  A read is kept
 * as a step only when the program was still there right after it, so every
 * step is a whole interval of a live program; the one in which it ended is
 * dropped, or, with keep_last, read once the program is reaped (its exited
 * children's counts are then in the totals) and kept.
 */
static int sample(mpxkit_source *src, perf_run *r, pid_t pid, struct timespec deadline,
		  uint64_t interval_ns, int *wstatus, mpxkit_diag *diag)
{
	uint64_t *buf = calloc(3 * r->k + 1, sizeof *buf), *prev = buf, *now, *row, last;
	size_t *slots = malloc((r->k + 1) * sizeof *slots);
	int rc = 0;

	if (buf == NULL || slots == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto out;
	}
	now = buf + r->k;
	row = now + r->k;
	for (size_t e = 0; e < r->k; e++)
		slots[e] = e;
	last = now_ns();
	for (;;) {
		pid_t done;
		add_ns(&deadline, interval_ns);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
			;
		if ((rc = take_sample(src, r, slots, now)) < 0)
			break;
		note_lateness(r, deadline);
		while ((done = waitpid(pid, wstatus, WNOHANG)) < 0 && errno == EINTR)
			;
		if (done < 0) {
			rc = mpxkit_fail_sys(diag, "waitpid");
			break;
		}
		if (done == pid && r->keep_last && (rc = take_sample(src, r, slots, now)) == 0) {
			r->last_step_ns = now_ns() - last;
			rc = append_step(r, prev, now, row);
		}
		if (done == pid || rc < 0)
			break;
		last = now_ns();
		if ((rc = append_step(r, prev, now, row)) < 0)
			break;
	}
out:
	free(buf);
	free(slots);
	return rc;
}

/*
 * Ground truth or nothing: every slot counted all its enabled time.  A slot
 * that lost its counter part of the time (a PMU event in a group the PMU
 * could not hold) would be a multiplexed count.
 */
static int check_counted_throughout(mpxkit_source *src, const perf_run *r,
				    const char *const *names, mpxkit_diag *diag)
{
	mpxkit_source_count *c = calloc(r->k ? r->k : 1, sizeof *c);
	int rc;

	if (c == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	rc = mpxkit_source_read(src, c, r->k);
	for (size_t e = 0; rc >= 0 && e < r->k; e++)
		if (c[e].time_running != c[e].time_enabled) {
			rc = mpxkit_fail(diag, MPXKIT_ERANGE,
					 "%s was counted %.1f %% of its enabled time, not all of it: "
					 "no ground truth (use --counters for events that need "
					 "PMU counters)",
					 names[r->first + e],
					 c[e].time_enabled
					     ? 100.0 * (double)c[e].time_running /
						   (double)c[e].time_enabled
					     : 0.0);
		}
	free(c);
	return rc < 0 ? rc : 0;
}

/* One run: the program counted on r's events, from its exec to its end. */
static int one_run(const mpxkit_record_perf_options *o, const char *const *events, perf_run *r,
		   char *const argv[], mpxkit_record_status *st, mpxkit_diag *diag)
{
	mpxkit_source_target target = {
	    .pid = 0, .cpu = -1, .inherit = 1, .domain = o->kernel ? MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL : 0};
	mpxkit_source *src = NULL;
	struct timespec start;
	mpxkit_workload w;
	int wstatus = 0, rc;

	if ((rc = mpxkit_workload_prepare(&w, argv, diag)) < 0)
		return rc;
	target.pid = w.pid;
	rc = mpxkit_source_open_perf(&src, &target, diag);
	/* From the exec on, as perf stat counts: the child's last steps before it are not CMD's. */
	if (rc >= 0)
		rc = mpxkit_source_perf_count_from_exec(src);
	for (size_t e = 0; rc >= 0 && e < r->k; e++)
		rc = mpxkit_source_add(src, events[r->first + e], diag);
	if (rc < 0) {
		mpxkit_workload_cancel(&w);
		mpxkit_source_free(src);
		return rc;
	}
	/* ^C goes to the program (the workload's wait), and the recording sees it end. */
	/* Interval 0 starts when the program is let go, so its exec is in the first step. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = mpxkit_workload_start(&w, diag);
	if (rc == 0) {
		rc = sample(src, r, w.pid, start, o->interval_ns, &wstatus, diag);
		if (rc == 0)
			mpxkit_workload_reaped(&w); /* sample saw the end */
	}
	if (w.pid > 0)
		mpxkit_workload_wait(&w, &wstatus);
	if (rc == 0)
		rc = check_counted_throughout(src, r, events, diag);
	mpxkit_source_free(src);
	if (rc < 0)
		return rc;
	note_status(st, wstatus);
	return 0;
}

/* Appends arg to a command line, single-quoted when a shell would split or expand it. */
static int append_word(char **line, size_t *len, const char *arg, char sep)
{
	int quote = sep == ' ' && (*arg == '\0' || arg[strcspn(arg, " \t'\"\\$`*?[]{}()<>|&;#~!")]);
	char *s = realloc(*line, *len + 4 * strlen(arg) + 4), *p;

	if (s == NULL)
		return -MPXKIT_ENOMEM;
	*line = s;
	p = s + *len;
	if (*len > 0)
		*p++ = sep;
	if (quote)
		*p++ = '\'';
	for (const char *a = arg; *a; a++) {
		if (*a == '\'' && quote) {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = (*a == '\n' || *a == '\r') ? ' ' : *a; /* metadata is one line */
		}
	}
	if (quote)
		*p++ = '\'';
	*p = '\0';
	*len = (size_t)(p - s);
	return 0;
}

static int set_num(mpxkit_trace *t, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return mpxkit_trace_set_meta(t, key, buf);
}

/* The metadata of doc/recording.md ("--perf"). */
static int set_meta(mpxkit_trace *t, const mpxkit_record_perf_options *o, size_t C, int all,
		    const perf_run *runs, size_t n_runs, char *const argv[],
		    const mpxkit_record_status *st)
{
	char *cmd = NULL, *groups = NULL, *steps = NULL, buf[32];
	size_t lc = 0, lg = 0, ls = 0;
	int rc = 0, reads = 0;
	uint64_t late = 0;

	for (size_t i = 0; argv[i] && rc == 0; i++)
		rc = append_word(&cmd, &lc, argv[i], ' ');
	for (size_t r = 0; r < n_runs && rc == 0; r++) {
		char *one = NULL;
		size_t lo = 0;
		for (size_t e = 0; e < runs[r].k && rc == 0; e++)
			rc = append_word(&one, &lo, t->events[runs[r].first + e], ',');
		if (rc == 0)
			rc = append_word(&groups, &lg, one, ';');
		free(one);
		snprintf(buf, sizeof buf, "%zu", runs[r].steps);
		if (rc == 0)
			rc = append_word(&steps, &ls, buf, ';');
	}
	for (size_t r = 0; r < n_runs; r++) {
		reads = runs[r].reads > reads ? runs[r].reads : reads;
		late = runs[r].late_ns > late ? runs[r].late_ns : late;
	}
	if (rc == 0 && (rc = mpxkit_trace_set_meta(t, "tool", "perf_event")) == 0 &&
	    (rc = mpxkit_trace_set_meta(t, "mode", all ? "all-at-once" : "ocoe-runs")) == 0 &&
	    (rc = mpxkit_trace_set_meta(t, "command", cmd)) == 0 &&
	    (rc = set_num(t, "interval_ns", o->interval_ns)) == 0 &&
	    (rc = set_num(t, "counters", C)) == 0 && (rc = set_num(t, "runs", n_runs)) == 0 &&
	    (rc = mpxkit_trace_set_meta(t, "run_events", groups)) == 0 &&
	    (rc = mpxkit_trace_set_meta(t, "run_steps", steps)) == 0 &&
	    (rc = set_num(t, "reads_per_step", (uint64_t)reads)) == 0 &&
	    (rc = set_num(t, "read_late_ns", late)) == 0 &&
	    (!all || (rc = set_num(t, "last_step_ns", runs[0].last_step_ns)) == 0) &&
	    (rc = set_num(t, "kernel",
			  o->kernel || (mpxkit_event_default_domain() & MPXKIT_DOM_KERNEL))) == 0) {
		if (st->signal)
			snprintf(buf, sizeof buf, "signal %d", st->signal);
		else
			snprintf(buf, sizeof buf, "%d", st->exit_code);
		rc = mpxkit_trace_set_meta(t, "exit_status", buf);
	}
	free(cmd);
	free(groups);
	free(steps);
	return rc;
}

/* The runs side by side, step by step, cut to the shortest. */
static int build_trace(const char *const *names, size_t n, const perf_run *runs, size_t n_runs,
		       mpxkit_trace **out, mpxkit_diag *diag)
{
	size_t steps = runs[0].steps;
	uint64_t *row = calloc(n, sizeof *row);
	mpxkit_trace *t = NULL;
	int rc;

	for (size_t r = 1; r < n_runs; r++)
		steps = runs[r].steps < steps ? runs[r].steps : steps;
	if (row == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	rc = mpxkit_trace_new(&t, "step", n, names, diag);
	for (size_t s = 0; rc == 0 && s < steps; s++) {
		for (size_t r = 0; r < n_runs; r++)
			memcpy(row + runs[r].first, runs[r].rows + s * runs[r].k,
			       runs[r].k * sizeof *row);
		rc = mpxkit_trace_append(t, s, row);
	}
	free(row);
	if (rc < 0) {
		mpxkit_trace_free(t);
		return rc == -MPXKIT_ENOMEM ? mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory")
					    : rc;
	}
	*out = t;
	return 0;
}

/*
 * Checks every event before anything runs, on a probe of the calling thread,
 * and takes their canonical names; two spellings of one event are refused, as
 * a trace's columns are unique.
 */
static int check_events(const char *const *events, size_t n, mpxkit_source **probe,
			mpxkit_diag *diag)
{
	int rc = mpxkit_source_open_perf(probe, NULL, diag);

	for (size_t e = 0; rc >= 0 && e < n; e++)
		rc = mpxkit_source_add_once(*probe, events[e], diag);
	return rc < 0 ? rc : 0;
}

/*
 * 1 when an event takes a PMU counter: every kind but the kernel's software
 * events and tracepoints, which count in software, any number at once.
 * Should one take a counter after all, the check that every event counted
 * all its enabled time catches it.
 */
static int needs_counter(const char *name)
{
	mpxkit_event ev;

	return mpxkit_event_parse(name, &ev, NULL) == 0 && ev.kind != MPXKIT_EVENT_SOFTWARE &&
	       ev.kind != MPXKIT_EVENT_TRACEPOINT;
}

int mpxkit_record_perf(const mpxkit_record_perf_options *o, const char *const *events,
		       size_t n_events, char *const argv[], mpxkit_trace **out,
		       mpxkit_record_status *status, mpxkit_diag *diag)
{
	mpxkit_record_status st = {0, 0};
	mpxkit_source *probe = NULL;
	const char **names = NULL;
	perf_run *runs = NULL;
	size_t C, n_runs = 0;
	int rc, all;

	if (o == NULL || events == NULL || argv == NULL || argv[0] == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "record --perf: missing argument");
	C = o->counters ? o->counters : mpxkit_sched_default_counters();
	if (n_events == 0 || n_events > MPXKIT_SCHED_MAX_COUNTERS * 64u || C == 0 ||
	    C > MPXKIT_SCHED_MAX_COUNTERS || o->interval_ns < MPXKIT_RECORD_PERF_MIN_INTERVAL_NS)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "record --perf: %zu events on %zu counters every %" PRIu64
				   " ns: need 1 or more events, C in [1, %d], an interval >= 100 us",
				   n_events, C, o->interval_ns, MPXKIT_SCHED_MAX_COUNTERS);
	if ((rc = check_events(events, n_events, &probe, diag)) < 0)
		goto out;
	all = o->counters == 0;
	for (size_t e = 0; all && e < n_events; e++)
		all = !needs_counter(events[e]);
	if (all)
		C = n_events;
	n_runs = (n_events + C - 1) / C;
	runs = calloc(n_runs, sizeof *runs);
	names = calloc(n_events, sizeof *names);
	if (runs == NULL || names == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t e = 0; e < n_events; e++)
		names[e] = mpxkit_source_slot_name(probe, (int)e);
	for (size_t r = 0; r < n_runs && rc == 0; r++) {
		runs[r].first = r * C;
		runs[r].k = n_events - r * C < C ? n_events - r * C : C;
		runs[r].keep_last = all;
		rc = one_run(o, names, &runs[r], argv, &st, diag);
		if (rc == 0 && runs[r].steps == 0)
			rc = mpxkit_fail(diag, MPXKIT_ERANGE,
					 "run %zu of '%s' ended within one interval of %" PRIu64
					 " ns: nothing to record; use a shorter interval",
					 r + 1, argv[0], o->interval_ns);
	}
	if (rc == 0)
		rc = build_trace(names, n_events, runs, n_runs, out, diag);
	if (rc == 0 && (rc = set_meta(*out, o, C, all, runs, n_runs, argv, &st)) < 0) {
		mpxkit_trace_free(*out);
		*out = NULL;
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	if (rc == 0 && status)
		*status = st;
out:
	for (size_t r = 0; runs && r < n_runs; r++)
		free(runs[r].rows);
	free(runs);
	free(names);
	mpxkit_source_free(probe);
	return rc;
}

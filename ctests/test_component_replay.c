/* SPDX-License-Identifier: BSD-3-Clause */
/* MPXKIT_REPLAY through PAPI's API reproduces the library's offline totals, for every estimator. */
#include <stdio.h>

#include "cutest.h"

#ifndef MPXKIT_HAVE_PAPI

int main(void)
{
	printf("SKIP: PAPI with the mpxkit component was not built (configured with "
	       "--disable-papi)\n");
	return CUTEST_SKIP;
}

#else

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <papi.h>

#include "mpxkit/estimator.h"
#include "mpxkit/mpx.h"
#include "mpxkit/papi.h"
#include "mpxkit/schedule.h"
#include "mpxkit/trace.h"

#define N_EVENTS  7
#define N_STEPS	  103	/* not a multiple of G: the partial last rotation is dropped */
#define REFERENCE "ev6" /* with a reference, ev0 .. ev5 are multiplexed and ev6 counted always */

static char trace_path[256];
static char short_path[256]; /* 2 steps of the trace: shorter than any rotation of G >= 3 */
static char groups_path[256];
static mpxkit_trace *trace;
/* The schedule of the runs (MPXKIT_SCHEDULE, mpxkit_mpx_config.schedule); NULL: round-robin. */
static const char *schedule;

/* Bursty counts with zeros and large values, so every estimator gives its own numbers. */
static int make_trace(void)
{
	const char *names[N_EVENTS] = {"ev0", "ev1", "ev2", "ev3", "ev4", "ev5", "ev6"};
	uint64_t row[N_EVENTS];
	char dir[] = "/tmp/test_component_replay.XXXXXX";

	if (mkdtemp(dir) == NULL || mpxkit_trace_new(&trace, NULL, N_EVENTS, names, NULL) < 0)
		return -1;
	srand(11);
	for (size_t s = 0; s < N_STEPS; s++) {
		for (size_t e = 0; e < N_EVENTS; e++) {
			int r = rand();
			row[e] = r % 5 == 0 ? 0 : (uint64_t)(r % 1000000) * (1 + (s / 8) % 5);
		}
		if (mpxkit_trace_append(trace, s, row) < 0)
			return -1;
	}
	snprintf(trace_path, sizeof trace_path, "%s/replay.csv", dir);
	snprintf(groups_path, sizeof groups_path, "%s/groups.txt", dir);
	snprintf(short_path, sizeof short_path, "%s/short.csv", dir);
	{
		mpxkit_trace *two = NULL;
		int bad = mpxkit_trace_new(&two, NULL, N_EVENTS, names, NULL) < 0 ||
			  mpxkit_trace_append(two, 0, trace->values) < 0 ||
			  mpxkit_trace_append(two, 1, trace->values + N_EVENTS) < 0 ||
			  mpxkit_trace_write(two, short_path, NULL) < 0;
		mpxkit_trace_free(two);
		if (bad)
			return -1;
	}
	/* Groups in another order than the columns', with one of three events. */
	FILE *g = fopen(groups_path, "w");
	if (g == NULL || fputs("ev4 ev1\nev0\nev5, ev3 # and\nev2 ev6\n", g) < 0 || fclose(g) != 0)
		return -1;
	return mpxkit_trace_write(trace, trace_path, NULL);
}

/* Events multiplexed: every column, or every column but the reference (the last). */
static size_t n_multiplexed(const char *reference)
{
	return reference ? N_EVENTS - 1 : N_EVENTS;
}

/*
 * The library's offline path, as 'mpxkit eval [--reference EV]' takes it:
 * simulate with C counters, run the estimator, sum rotations in order.
 * whole: with its whole-run pass where it has one (bigru), as the totals
 * after PAPI_stop are (doc/component.md); else as the reads see it.
 */
static int offline_run(const char *estimator, size_t C, const char *reference, int whole,
		       long long *totals)
{
	mpxkit_mpx_config cfg = {C, reference, NULL, 0, trace_path, NULL, 0};
	mpxkit_mpx_run *run = NULL;
	mpxkit_estimator *est = NULL;
	mpxkit_groups *groups = NULL;
	size_t n = n_multiplexed(reference);
	double *out = NULL, sum[N_EVENTS] = {0};
	int rc = 0;

	/* A group file: its groups, its events in its order (mapped back to columns below). */
	if (schedule && !mpxkit_schedule_is_name(schedule))
		rc = mpxkit_groups_read(schedule, &groups, NULL);
	else
		cfg.schedule = schedule;
	cfg.groups = groups;
	if (rc == 0)
		rc = mpxkit_mpx_simulate(trace, &cfg, &run, NULL);

	if (rc == 0 && (run->layout.n_events != n || (reference && run->ref == NULL)))
		rc = -1;
	if (rc == 0)
		rc = mpxkit_estimator_new(&est, estimator, &run->layout, NULL, NULL);
	if (rc == 0 && (out = calloc(run->n_rotations * n, sizeof *out)) == NULL)
		rc = -1;
	if (rc == 0) {
		mpxkit_series series = mpxkit_mpx_series(run);
		rc = whole ? mpxkit_estimator_run_whole_series(est, &series, out, NULL)
			   : mpxkit_estimator_run_series(est, &series, out);
	}
	for (size_t k = 0; rc == 0 && k < run->n_rotations; k++)
		for (size_t e = 0; e < n; e++)
			sum[run->column[e]] += out[k * n + e];
	for (size_t e = 0; e < n; e++)
		totals[e] = llround(sum[e]);
	free(out);
	mpxkit_estimator_free(est);
	mpxkit_mpx_run_free(run);
	mpxkit_groups_free(groups);
	return rc;
}

static int offline(const char *estimator, size_t C, const char *reference, long long *totals)
{
	return offline_run(estimator, C, reference, 0, totals);
}

/*
 * In a child (the component reads its settings once, at PAPI_library_init):
 * replay the trace with C counters, the estimator and the reference if any,
 * adding the multiplexed events in column order; write the read, the stop,
 * and the read after a reset to fd.
 */
static int papi_child(const char *estimator, size_t C, const char *reference, int fd)
{
	long long v[3][N_EVENTS] = {{0}};
	char buf[32];
	int es = PAPI_NULL, rc;

	if (reference)
		setenv("MPXKIT_REFERENCE", reference, 1);
	setenv("MPXKIT_REPLAY", trace_path, 1);
	setenv("MPXKIT_ESTIMATOR", estimator, 1);
	if (schedule)
		setenv("MPXKIT_SCHEDULE", schedule, 1);
	snprintf(buf, sizeof buf, "%zu", C);
	setenv("MPXKIT_COUNTERS", buf, 1);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return 2;
	rc = PAPI_create_eventset(&es);
	for (size_t e = 0; rc == PAPI_OK && e < n_multiplexed(reference); e++) {
		snprintf(buf, sizeof buf, "mpxkit:::%s", trace->events[e]);
		rc = PAPI_add_named_event(es, buf);
	}
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	if (rc == PAPI_OK)
		rc = PAPI_read(es, v[0]);
	if (rc == PAPI_OK)
		rc = PAPI_reset(es); /* serves the trace again from its first step */
	if (rc == PAPI_OK)
		rc = PAPI_read(es, v[2]);
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, v[1]);
	if (rc != PAPI_OK)
		return 3;
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	return write(fd, v, sizeof v) == (ssize_t)sizeof v ? 0 : 4;
}

static int replay_via_papi(const char *estimator, size_t C, const char *reference,
			   long long v[3][N_EVENTS])
{
	int fds[2], status = -1;
	pid_t pid;
	ssize_t got;

	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(papi_child(estimator, C, reference, fds[1]));
	}
	close(fds[1]);
	got = read(fds[0], v, 3 * N_EVENTS * sizeof v[0][0]);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    got != (ssize_t)(3 * N_EVENTS * sizeof v[0][0]))
		return -1;
	return 0;
}

/* One estimator, one C, with or without the reference: PAPI's three readings = offline. */
static void check_one(const char *estimator, size_t C, const char *reference)
{
	long long v[3][N_EVENTS], want[N_EVENTS], whole[N_EVENTS];

	CU_ASSERT_EQUAL_FATAL(offline(estimator, C, reference, want), 0);
	CU_ASSERT_EQUAL_FATAL(offline_run(estimator, C, reference, 1, whole), 0);
	CU_ASSERT_EQUAL_FATAL(replay_via_papi(estimator, C, reference, v), 0);
	printf("\n  %-12s C=%zu %-13s %-12s ev0 read %lld stop %lld (offline %lld, whole %lld)",
	       estimator, C, reference ? "ref " REFERENCE : "no reference",
	       schedule ? (mpxkit_schedule_is_name(schedule) ? schedule : "group file")
			: "round-robin",
	       v[0][0], v[1][0], want[0], whole[0]);
	for (size_t e = 0; e < n_multiplexed(reference); e++) {
		CU_ASSERT_EQUAL(v[0][e], want[e]);  /* read: the trace served whole */
		CU_ASSERT_EQUAL(v[1][e], whole[e]); /* stop: with the whole-run pass */
		CU_ASSERT_EQUAL(v[2][e], want[e]);  /* read after reset: served again */
	}
}

/*
 * Every estimator in the registry, on C = 2 and 3: those that need no
 * reference both without and with one (the reference must not change what
 * they estimate), ref-rate with one.
 */
static void test_every_estimator(void)
{
	static const size_t counters[] = {2, 3};
	size_t checked = 0, with_reference = 0;

	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		int needs = (info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) != 0;
		for (size_t c = 0; c < sizeof counters / sizeof counters[0]; c++) {
			if (!needs)
				check_one(info->name, counters[c], NULL);
			check_one(info->name, counters[c], REFERENCE);
			with_reference += needs;
			checked++;
		}
	}
	printf("\n  ");
	CU_ASSERT(checked == 2 * mpxkit_estimator_count()); /* none skipped */
	CU_ASSERT(with_reference >= 2);			    /* ref-rate, both layouts */
}

/*
 * Every schedule: the sets the engine chooses slice by slice, and so every
 * total, are the simulator's, for the estimators that read one event at a
 * time and the learned ones (whose features read every event, in column
 * order: the group file's order differs, so they are checked on the named
 * schedules).
 */
static void test_every_schedule(void)
{
	static const char *const named[] = {"prior", "adaptive", "adaptive:floor=5:startup=1",
					    "round-robin"};
	static const char *const simple[] = {"fixed", "linear-dira", "linear-tam", "cam", "dcam"};

	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
		schedule = named[i];
		for (size_t x = 0; x < sizeof simple / sizeof simple[0]; x++)
			check_one(simple[x], 2, x == 0 ? REFERENCE : NULL);
		check_one("ref-rate", 3, REFERENCE);
		check_one("mlp", 2, NULL);
		check_one("bigru", 3, NULL);
	}
	schedule = groups_path;
	for (size_t x = 0; x < sizeof simple / sizeof simple[0]; x++)
		check_one(simple[x], 2, NULL);
	schedule = NULL;
	printf("\n  ");
}

/* ---- intervals through PAPI (mpxkit/papi.h) -------------------------------------------- */

typedef struct papi_iv {
	long long value[N_EVENTS];
	int status[N_EVENTS];
	double lo[N_EVENTS], hi[N_EVENTS];
	int before_start, bad_index; /* what the call says before PAPI_start, and past the end */
} papi_iv;

/* In a child: replay path with fixed on C counters, stop, and ask each value's interval. */
static int papi_iv_child(const char *path, size_t C, int fd)
{
	papi_iv r;
	char buf[32];
	int es = PAPI_NULL, rc;
	double lo, hi;

	memset(&r, 0, sizeof r);
	setenv("MPXKIT_REPLAY", path, 1);
	setenv("MPXKIT_ESTIMATOR", "fixed", 1);
	setenv("MPXKIT_LEVEL", "0.8", 1);
	snprintf(buf, sizeof buf, "%zu", C);
	setenv("MPXKIT_COUNTERS", buf, 1);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return 2;
	rc = PAPI_create_eventset(&es);
	for (size_t e = 0; rc == PAPI_OK && e < N_EVENTS; e++) {
		snprintf(buf, sizeof buf, "mpxkit:::%s", trace->events[e]);
		rc = PAPI_add_named_event(es, buf);
	}
	r.before_start = mpxkit_papi_interval(es, 0, &lo, &hi);
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, r.value);
	if (rc != PAPI_OK)
		return 3;
	for (int e = 0; e < N_EVENTS; e++)
		r.status[e] = mpxkit_papi_interval(es, e, &r.lo[e], &r.hi[e]);
	r.bad_index = mpxkit_papi_interval(es, N_EVENTS, &lo, &hi);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	return write(fd, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 4;
}

static int papi_iv_run(const char *path, size_t C, papi_iv *r)
{
	int fds[2], status = -1;
	pid_t pid;
	ssize_t got;

	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(papi_iv_child(path, C, fds[1]));
	}
	close(fds[1]);
	got = read(fds[0], r, sizeof *r);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == (ssize_t)sizeof *r ? 0 : -1;
}

/*
 * The library's total intervals of fixed on the trace with C counters at
 * 0.8, as mpxkit_estimator_run_series_iv gives them.
 */
static int offline_iv(size_t C, mpxkit_interval *total)
{
	mpxkit_mpx_config cfg = {C, NULL, NULL, 0, trace_path, NULL, 0};
	mpxkit_mpx_run *run = NULL;
	mpxkit_estimator *est = NULL;
	double *out = NULL;
	mpxkit_series series;
	int rc = mpxkit_mpx_simulate(trace, &cfg, &run, NULL);

	if (rc == 0)
		rc = mpxkit_estimator_new(&est, "fixed", &run->layout, NULL, NULL);
	if (rc == 0)
		rc = mpxkit_estimator_set_interval(est, 0.8, 0);
	if (rc == 0 && (out = calloc(run->n_rotations * N_EVENTS, sizeof *out)) == NULL)
		rc = -1;
	if (rc == 0) {
		series = mpxkit_mpx_series(run);
		rc = mpxkit_estimator_run_series_iv(est, &series, out, NULL, total);
	}
	free(out);
	mpxkit_estimator_free(est);
	mpxkit_mpx_run_free(run);
	return rc;
}

/*
 * Each value's interval from C, through the real libpapi: multiplexed (C =
 * 2), the library's offline interval at MPXKIT_LEVEL, holding the value
 * PAPI_stop returned; counted all the time (C = 7), exact, lo = hi = the
 * value = the column's sum over the whole rotations (every step); a replay
 * shorter than a rotation, not counted, where PAPI_stop's 0 is no
 * measurement.  Before PAPI_start and past the last event, errors.
 */
static void test_papi_intervals(void)
{
	papi_iv r;
	mpxkit_interval want[N_EVENTS];

	CU_ASSERT_EQUAL_FATAL(papi_iv_run(trace_path, 2, &r), 0);
	CU_ASSERT_EQUAL_FATAL(offline_iv(2, want), 0);
	CU_ASSERT_EQUAL(r.before_start, PAPI_ENOTRUN);
	CU_ASSERT_EQUAL(r.bad_index, PAPI_EINVAL);
	for (size_t e = 0; e < N_EVENTS; e++) {
		CU_ASSERT_EQUAL(r.status[e], MPXKIT_PAPI_ESTIMATED);
		CU_ASSERT_EQUAL(memcmp(&r.lo[e], &want[e].lo, sizeof r.lo[e]), 0);
		CU_ASSERT_EQUAL(memcmp(&r.hi[e], &want[e].hi, sizeof r.hi[e]), 0);
		CU_ASSERT(r.lo[e] <= (double)r.value[e] + 0.5 &&
			  (double)r.value[e] - 0.5 <= r.hi[e]);
		CU_ASSERT(r.hi[e] > r.lo[e]);
	}
	printf("\n  C=2 ev0: %lld in [%.0f, %.0f] at 0.8", r.value[0], r.lo[0], r.hi[0]);

	CU_ASSERT_EQUAL_FATAL(papi_iv_run(trace_path, N_EVENTS, &r), 0);
	for (size_t e = 0; e < N_EVENTS; e++) {
		double sum = 0;
		for (size_t k = 0; k < N_STEPS; k++)
			sum += (double)trace->values[k * N_EVENTS + e];
		CU_ASSERT_EQUAL(r.status[e], MPXKIT_PAPI_EXACT);
		CU_ASSERT_EQUAL(r.lo[e], r.hi[e]);
		CU_ASSERT_EQUAL(r.lo[e], sum);
		CU_ASSERT_EQUAL((double)r.value[e], sum);
	}

	CU_ASSERT_EQUAL_FATAL(papi_iv_run(short_path, 2, &r), 0);
	for (size_t e = 0; e < N_EVENTS; e++) {
		CU_ASSERT_EQUAL(r.status[e], MPXKIT_PAPI_NOT_COUNTED);
		CU_ASSERT_EQUAL(r.value[e], 0);
		CU_ASSERT_EQUAL(r.lo[e], 0.0);
		CU_ASSERT(isinf(r.hi[e]));
	}
	printf("\n  ");
}

/* The estimators differ on this trace, so an exact match is not the same number five times. */
static void test_estimators_differ(void)
{
	long long fixed[N_EVENTS] = {0}, cam[N_EVENTS] = {0}, ref_fixed[N_EVENTS] = {0},
		  ref_rate[N_EVENTS] = {0};

	CU_ASSERT_EQUAL_FATAL(offline("fixed", 2, NULL, fixed), 0);
	CU_ASSERT_EQUAL_FATAL(offline("cam", 2, NULL, cam), 0);
	CU_ASSERT(memcmp(fixed, cam, sizeof fixed) != 0);
	/* The reference's counts vary, so ref-rate is not fixed under another name. */
	CU_ASSERT_EQUAL_FATAL(offline("fixed", 2, REFERENCE, ref_fixed), 0);
	CU_ASSERT_EQUAL_FATAL(offline("ref-rate", 2, REFERENCE, ref_rate), 0);
	CU_ASSERT(memcmp(ref_fixed, ref_rate, sizeof ref_fixed) != 0);
}

static const cutest_case replay_cases[] = {
    {"estimators differ on the trace", test_estimators_differ},
    {"every estimator: PAPI replay = offline", test_every_estimator},
    {"every schedule: PAPI replay = the simulator", test_every_schedule},
    {"mpxkit_papi_interval: estimated, exact, not counted", test_papi_intervals},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"mpxkit component, replay", replay_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	int rc;

	if (make_trace() < 0) {
		fprintf(stderr, "test_component_replay: cannot write the trace to replay\n");
		return 1;
	}
	rc = cutest_run("test_component_replay", suites);
	unlink(trace_path);
	unlink(groups_path);
	unlink(short_path);
	*strrchr(trace_path, '/') = '\0';
	rmdir(trace_path);
	mpxkit_trace_free(trace);
	return rc;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiplexing engine: settings, replay against the offline path, perf against OCOE truth. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "../lib/source/perf_page.h"

#include "cutest.h"
#include "mpxkit/estimator.h"
#include "mpxkit/model.h"
#include "mpxkit/mpx.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

/*
 * What cutest_under_valgrind() skips: the multiplexed accuracy cannot be
 * checked under valgrind.  valgrind runs one thread at a time and, without
 * --fair-sched=yes, lets a spinning thread starve the rotation thread for most
 * of a run; and its own page faults land in the thread in bursts, so a fault
 * workload is not steady.  Memory errors are what it checks there.
 */

/* ---- settings ------------------------------------------------------------------------- */

static void test_config_defaults(void)
{
	mpxkit_sched_config cfg;

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_EQUAL(cfg.multiplex, MPXKIT_SCHED_MULTIPLEX_HARDWARE);
	CU_ASSERT_EQUAL(cfg.counters, 0);
	CU_ASSERT_EQUAL(cfg.slice_ns, (uint64_t)MPXKIT_SCHED_DEFAULT_SLICE_US * 1000u);
	CU_ASSERT_STRING_EQUAL(cfg.estimator, "fixed");
	CU_ASSERT_STRING_EQUAL(cfg.model, "");
	CU_ASSERT_STRING_EQUAL(cfg.replay, "");
	CU_ASSERT_EQUAL(cfg.whole_max, 16384);
}

static void test_config_values(void)
{
	mpxkit_sched_config cfg;
	mpxkit_diag diag = {0};

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_COUNTERS", "2", &diag), 0);
	CU_ASSERT_EQUAL(cfg.counters, 2);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_COUNTERS", "64", &diag), 0);
	CU_ASSERT_EQUAL(cfg.counters, 64);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_SLICE_US", "100", &diag), 0);
	CU_ASSERT_EQUAL(cfg.slice_ns, 100000u);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_ESTIMATOR", "linear", &diag), 0);
	CU_ASSERT_STRING_EQUAL(cfg.estimator, "linear-dira"); /* the alias, resolved */
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_REPLAY", "t.csv", &diag), 0);
	CU_ASSERT_STRING_EQUAL(cfg.replay, "t.csv");
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_WHOLE_MAX", "0", &diag), 0);
	CU_ASSERT_EQUAL(cfg.whole_max, 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_WHOLE_MAX", "100000000", &diag), 0);
	CU_ASSERT_EQUAL(cfg.whole_max, 100000000);
}

static void test_config_bad_values(void)
{
	static const char *const bad[][2] = {
	    {"MPXKIT_COUNTERS", "0"},	{"MPXKIT_COUNTERS", "65"},
	    {"MPXKIT_COUNTERS", "4x"},	{"MPXKIT_COUNTERS", "-1"},
	    {"MPXKIT_COUNTERS", " 4"},	{"MPXKIT_COUNTERS", "99999999999999999999999"},
	    {"MPXKIT_SLICE_US", "99"},	{"MPXKIT_SLICE_US", "10000001"},
	    {"MPXKIT_SLICE_US", "1.5"}, {"MPXKIT_REFERENCE", ""},
	    {"MPXKIT_NO_SUCH", "1"},	{"MPXKIT_WHOLE_MAX", "100000001"},
	    {"MPXKIT_WHOLE_MAX", "-1"}, {"MPXKIT_WHOLE_MAX", "1e5"},
	};
	mpxkit_sched_config cfg, before;
	mpxkit_diag diag = {0};

	mpxkit_sched_config_default(&cfg);
	before = cfg;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&diag, 0, sizeof diag);
		CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, bad[i][0], bad[i][1], &diag),
				-MPXKIT_EINVAL);
		CU_ASSERT(strstr(diag.msg, bad[i][0]) != NULL);
		CU_ASSERT_EQUAL(memcmp(&cfg, &before, sizeof cfg), 0);
	}
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_ESTIMATOR", "magic", &diag),
			-MPXKIT_ENOENT);
	CU_ASSERT(strstr(diag.msg, "MPXKIT_ESTIMATOR=magic") != NULL);
}

static void test_config_env(void)
{
	mpxkit_sched_config cfg;
	mpxkit_diag diag = {0};

	setenv("MPXKIT_COUNTERS", "3", 1);
	setenv("MPXKIT_SLICE_US", "", 1); /* empty: unset */
	setenv("MPXKIT_ESTIMATOR", "cam", 1);
	CU_ASSERT_EQUAL(mpxkit_sched_config_env(&cfg, &diag), 0);
	CU_ASSERT_EQUAL(cfg.counters, 3);
	CU_ASSERT_EQUAL(cfg.slice_ns, (uint64_t)MPXKIT_SCHED_DEFAULT_SLICE_US * 1000u);
	CU_ASSERT_STRING_EQUAL(cfg.estimator, "cam");
	setenv("MPXKIT_SLICE_US", "often", 1);
	CU_ASSERT_EQUAL(mpxkit_sched_config_env(&cfg, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg, "MPXKIT_SLICE_US=often: not a whole number of "
					 "microseconds in [100, 10000000]");
	unsetenv("MPXKIT_COUNTERS");
	unsetenv("MPXKIT_SLICE_US");
	unsetenv("MPXKIT_ESTIMATOR");
}

/* A misspelt MPXKIT_ name is found, with the known name nearest to it (issue 25). */
static void test_config_unknown_env(void)
{
	char *known[] = {"PATH=/bin", "MPXKIT_COUNTERS=2", "MPXKIT_SHARED=/x", "MPXKIT=1",
			 "MPXKIT_DUMP=", NULL};
	char *misspelt[] = {"MPXKIT_COUNTERS=2", "MPXKIT_COUNTER=4", "MPXKIT_SLICEUS=9", NULL};
	char *far[] = {"MPXKIT_ZZZZZZZZZZ=1", NULL};
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL(mpxkit_sched_config_unknown_env(known, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_unknown_env(misspelt, &diag), 1);
	CU_ASSERT_STRING_EQUAL(diag.msg, "MPXKIT_COUNTER: no such mpxkit setting, ignored (did "
					 "you mean MPXKIT_COUNTERS?)");
	CU_ASSERT_EQUAL(mpxkit_sched_config_unknown_env(far, &diag), 1);
	CU_ASSERT_STRING_EQUAL(diag.msg, "MPXKIT_ZZZZZZZZZZ: no such mpxkit setting, ignored "
					 "(see doc/component.md)");
	setenv("MPXKIT_ESTIMATR", "cam", 1);
	CU_ASSERT_EQUAL(mpxkit_sched_config_unknown_env(NULL, &diag), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "did you mean MPXKIT_ESTIMATOR?"));
	unsetenv("MPXKIT_ESTIMATR");
}

/* ref-rate is a setting like any other, but only together with a reference. */
static void test_config_reference(void)
{
	mpxkit_sched_config cfg;
	mpxkit_diag diag = {0};
	char long_name[MPXKIT_SCHED_EVENT_MAX + 1];

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_EQUAL(mpxkit_sched_config_check(&cfg, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_ESTIMATOR", "ref-rate", &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_check(&cfg, &diag), -MPXKIT_EINVAL);
	CU_ASSERT(strstr(diag.msg, "MPXKIT_REFERENCE") != NULL);
	CU_ASSERT_EQUAL(
	    mpxkit_sched_config_set(&cfg, "MPXKIT_REFERENCE", "perf::TASK-CLOCK", &diag), 0);
	CU_ASSERT_STRING_EQUAL(cfg.reference, "perf::TASK-CLOCK");
	CU_ASSERT_EQUAL(mpxkit_sched_config_check(&cfg, &diag), 0);
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_REFERENCE", long_name, &diag),
			-MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(cfg.reference, "perf::TASK-CLOCK");

	/* Read from the environment: ref-rate alone disables, with the reference it is taken. */
	setenv("MPXKIT_ESTIMATOR", "ref-rate", 1);
	CU_ASSERT_EQUAL(mpxkit_sched_config_env(&cfg, &diag), -MPXKIT_EINVAL);
	CU_ASSERT(strstr(diag.msg, "MPXKIT_ESTIMATOR=ref-rate") != NULL);
	setenv("MPXKIT_REFERENCE", "ev3", 1);
	CU_ASSERT_EQUAL(mpxkit_sched_config_env(&cfg, &diag), 0);
	CU_ASSERT_STRING_EQUAL(cfg.estimator, "ref-rate");
	CU_ASSERT_STRING_EQUAL(cfg.reference, "ev3");
	unsetenv("MPXKIT_ESTIMATOR");
	unsetenv("MPXKIT_REFERENCE");
}

/*
 * The default C.  The rule is checked on made-up PMUs; the probe only on this
 * machine, where (without a PMU) it must find none and give 4.  On a machine
 * with one, what it finds is printed and checked against the rule.
 */
static void test_default_counters(void)
{
	static const unsigned six = 6, hybrid[] = {8, 6}, none[] = {0, 0}, huge = 100;
	unsigned found[8];
	int n;

	CU_ASSERT_EQUAL(mpxkit_sched_counters_for(NULL, 0), MPXKIT_SCHED_DEFAULT_COUNTERS);
	CU_ASSERT_EQUAL(MPXKIT_SCHED_DEFAULT_COUNTERS, 4);
	CU_ASSERT_EQUAL(mpxkit_sched_counters_for(none, 2), 4);
	CU_ASSERT_EQUAL(mpxkit_sched_counters_for(&six, 1), 6);
	CU_ASSERT_EQUAL(mpxkit_sched_counters_for(hybrid, 2), 6);
	CU_ASSERT_EQUAL(mpxkit_sched_counters_for(&huge, 1), MPXKIT_SCHED_MAX_COUNTERS);
	CU_ASSERT_EQUAL(mpxkit_sched_pmu_counters(NULL, 1), -MPXKIT_EINVAL);

	n = mpxkit_sched_pmu_counters(found, 8);
	CU_ASSERT(n >= 0);
	printf("\n  core PMUs found: %d; default C %zu", n, mpxkit_sched_default_counters());
	if (n <= 0) {
		CU_ASSERT_EQUAL(mpxkit_sched_default_counters(), 4); /* software events only */
	} else {
		CU_ASSERT_EQUAL(mpxkit_sched_default_counters(),
				mpxkit_sched_counters_for(found, (size_t)n));
	}
	printf("\n  ");
}

/* ---- replay source -------------------------------------------------------------------- */

static mpxkit_trace *make_trace(size_t n_events, size_t n_steps, unsigned seed)
{
	char names[16][24];
	const char *ptrs[16];
	uint64_t row[16];
	mpxkit_trace *t = NULL;

	for (size_t e = 0; e < n_events; e++) {
		snprintf(names[e], sizeof names[e], "ev%zu", e);
		ptrs[e] = names[e];
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, NULL, n_events, ptrs, NULL), 0);
	srand(seed);
	for (size_t s = 0; s < n_steps; s++) {
		for (size_t e = 0; e < n_events; e++) {
			/* Bursty series with zeros, so the interpolating estimators differ from
			 * fixed. */
			int r = rand();
			row[e] = r % 7 == 0 ? 0 : (uint64_t)(r % 100000) * (1 + (s / 10) % 4);
		}
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, s, row), 0);
	}
	return t;
}

static void test_replay_source(void)
{
	static const uint64_t rows[3][2] = {{1, 10}, {2, 20}, {4, 40}};
	const char *names[] = {"a", "b"};
	mpxkit_trace *t = NULL;
	mpxkit_source *s = NULL;
	mpxkit_source_count c[2];
	mpxkit_source_event ev;
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, NULL, 2, names, NULL), 0);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, i, rows[i]), 0);
	CU_ASSERT_EQUAL(mpxkit_source_open_replay(&s, t, 0, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&s, t, 1000, &diag), 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_kind(s), "replay");
	CU_ASSERT(mpxkit_source_is_virtual(s));
	CU_ASSERT_EQUAL(mpxkit_source_list(s, 1, &ev), 0);
	CU_ASSERT_STRING_EQUAL(ev.name, "b");
	CU_ASSERT_EQUAL(mpxkit_source_list(s, 2, &ev), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "c", &diag), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "b", &diag), 0); /* slot 0 is column b */
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "a", &diag), 1);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_slot_name(s, 0), "b");

	/* Step 0 with nothing enabled; step 1 with b only; step 2 with both. */
	CU_ASSERT_EQUAL(mpxkit_source_step(s), 1);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_source_step(s), 1);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 1), 0);
	CU_ASSERT_EQUAL(mpxkit_source_step(s), 1);
	CU_ASSERT_EQUAL(mpxkit_source_step(s), 0); /* the end */
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 2), 2);
	CU_ASSERT_EQUAL(c[0].value, 20 + 40);
	CU_ASSERT_EQUAL(c[0].time_enabled, 2000);
	CU_ASSERT_EQUAL(c[0].time_running, 2000);
	CU_ASSERT_EQUAL(c[1].value, 4);
	CU_ASSERT_EQUAL(c[1].time_enabled, 1000);

	CU_ASSERT_EQUAL(mpxkit_source_reset(s, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, 1), 0);
	CU_ASSERT_EQUAL(mpxkit_source_rewind(s), 0);
	CU_ASSERT_EQUAL(mpxkit_source_step(s), 1);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 2), 2);
	CU_ASSERT_EQUAL(c[0].value, 10);
	CU_ASSERT_EQUAL(c[1].value, 4);
	mpxkit_source_free(s);
	mpxkit_trace_free(t);
}

/* ---- replay through the engine = the offline path ------------------------------------- */

/* The engine's totals on a replay of t, or NULL (asserted) on failure. */
static double *engine_totals(const mpxkit_trace *t, size_t C, const char *estimator,
			     double *fidelity)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	double *est = calloc(t->n_events, sizeof *est);
	int rc;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	snprintf(cfg.estimator, sizeof cfg.estimator, "%s", estimator);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, &diag), 0);
	for (size_t e = 0; e < t->n_events; e++)
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, t->events[e], &diag), (int)e);
	rc = mpxkit_sched_new(&s, src, &cfg, &diag);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), -MPXKIT_ESTATE);
	CU_ASSERT(mpxkit_sched_read(s, est, NULL) >= 0);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	CU_ASSERT(mpxkit_sched_read(s, est, fidelity) >= 0);
	mpxkit_sched_free(s);
	return est;
}

/*
 * ref-rate by hand (doc/estimators.md) on a replay with the last column as
 * the reference: per rotation, the event's count over the reference's in its
 * slice, times the reference's rotation total; G times the count where the
 * reference saw nothing.  The first n - 1 columns are multiplexed.
 */
static void test_replay_ref_rate_by_hand(void)
{
	const size_t C = 2, n = 6, m = n - 1, G = 3, steps = 61, K = steps / G;
	mpxkit_trace *t = make_trace(n, steps, 5);
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	double est[6], fid[6];
	size_t zero_ref = 0;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_ESTIMATOR", "ref-rate", &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_REFERENCE", "ev5", &diag), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, &diag), 0);
	for (size_t e = 0; e < m; e++)
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, t->events[e], &diag), (int)e);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_events, m);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, G);
	CU_ASSERT(mpxkit_sched_layout(s)->has_reference);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, est, fid), (int)K);
	for (size_t e = 0; e < m; e++) {
		size_t g = e / C;
		double want = 0;
		for (size_t k = 0; k < K; k++) {
			double a = (double)t->values[(k * G + g) * n + e], total = 0;
			double r = (double)t->values[(k * G + g) * n + m];
			for (size_t j = 0; j < G; j++)
				total += (double)t->values[(k * G + j) * n + m];
			want += r > 0 ? a / r * total : (double)G * a;
			zero_ref += r == 0;
		}
		CU_ASSERT_DOUBLE_EQUAL(est[e], want, 1e-6 * want + 1e-9);
	}
	CU_ASSERT(zero_ref > 0); /* the fallback was taken too */
	mpxkit_sched_free(s);

	/* C unset: a replay has no PMU, so 4 whatever the host has. */
	cfg.counters = 0;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, &diag), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, "ev0", &diag), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_counters(s), 4);
	mpxkit_sched_free(s);

	/* A reference the source lacks fails the scheduler, and the caller keeps the source. */
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, &diag), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, "ev0", &diag), 0);
	snprintf(cfg.reference, sizeof cfg.reference, "%s", "nope");
	CU_ASSERT_EQUAL(mpxkit_sched_new(&s, src, &cfg, &diag), -MPXKIT_ENOENT);
	mpxkit_source_free(src);
	mpxkit_trace_free(t);
}

/*
 * The library's offline path: simulate, run the estimator over the whole run
 * (its whole-run pass where it has one: bigru), sum each event's rotations
 * in order.
 */
static double *offline_totals(const mpxkit_trace *t, size_t C, const char *estimator)
{
	mpxkit_mpx_config cfg = {C, NULL, NULL, 0, "test", NULL, 0};
	mpxkit_mpx_run *run = NULL;
	mpxkit_estimator *e = NULL;
	double *out, *tot;

	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &run, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&e, estimator, &run->layout, NULL, NULL), 0);
	out = calloc(run->n_rotations * t->n_events, sizeof *out);
	tot = calloc(t->n_events, sizeof *tot);
	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_estimator_run_whole(e, run->n_rotations, run->obs, NULL, out, NULL), 0);
	for (size_t k = 0; k < run->n_rotations; k++)
		for (size_t v = 0; v < t->n_events; v++)
			tot[v] += out[k * t->n_events + v];
	mpxkit_estimator_free(e);
	mpxkit_mpx_run_free(run);
	free(out);
	return tot;
}

static void test_replay_matches_offline(void)
{
	static const size_t counters[] = {1, 2, 3, 4, 7};
	mpxkit_trace *t = make_trace(7, 103, 42); /* 103 steps: partial last rotations */
	size_t checked = 0;

	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const mpxkit_estimator_info *info = mpxkit_estimator_info_at(i);
		if (info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE)
			continue;
		for (size_t c = 0; c < sizeof counters / sizeof counters[0]; c++) {
			double *on = engine_totals(t, counters[c], info->name, NULL);
			double *off = offline_totals(t, counters[c], info->name);
			for (size_t e = 0; e < t->n_events; e++)
				CU_ASSERT_EQUAL(memcmp(&on[e], &off[e], sizeof on[e]), 0);
			free(on);
			free(off);
			checked++;
		}
	}
	CU_ASSERT(checked >= 5 * 5);
	mpxkit_trace_free(t);
}

/* fixed by hand: G times the count of each event's one slice, over whole rotations. */
static void test_replay_fixed_by_hand(void)
{
	const size_t C = 3, n = 7, G = 3, steps = 50, K = steps / G;
	mpxkit_trace *t = make_trace(n, steps, 7);
	double fidelity[7];
	double *est = engine_totals(t, C, "fixed", fidelity);

	for (size_t e = 0; e < n; e++) {
		size_t g = e / C;
		double want = 0;
		size_t slices = 0;
		for (size_t k = 0; k < K; k++)
			want += (double)G * (double)t->values[(k * G + g) * n + e];
		for (size_t s = 0; s < steps; s++)
			slices += s % G == g;
		CU_ASSERT_DOUBLE_EQUAL(est[e], want, 1e-6);
		/* Every step served is one slice, the partial last rotation included. */
		CU_ASSERT_DOUBLE_EQUAL(fidelity[e], (double)slices / (double)steps, 1e-12);
	}
	free(est);
	mpxkit_trace_free(t);
}

static void test_replay_restart_and_reset(void)
{
	mpxkit_trace *t = make_trace(5, 40, 3);
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	double a[5], b[5], c[5];
	double *off = offline_totals(t, 2, "cam");

	mpxkit_sched_config_default(&cfg);
	cfg.counters = 2;
	strcpy(cfg.estimator, "cam");
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, NULL), 0);
	for (size_t e = 0; e < 5; e++)
		mpxkit_source_add(src, t->events[e], NULL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 3);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0); /* stopping a stopped one: no-op */
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, a, NULL), 40 / 3);
	CU_ASSERT_EQUAL(mpxkit_sched_reset(s), 0); /* serves the trace again from step 0 */
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, b, NULL), 40 / 3);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, c, NULL), 40 / 3);
	CU_ASSERT_EQUAL(memcmp(a, off, sizeof a), 0);
	CU_ASSERT_EQUAL(memcmp(b, off, sizeof b), 0);
	CU_ASSERT_EQUAL(memcmp(c, off, sizeof c), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	mpxkit_sched_free(s); /* while running */
	free(off);
	mpxkit_trace_free(t);
}

typedef struct series {
	size_t n, next;
	int in_order;
	double sum[8];
	mpxkit_interval *iv; /* with on_rotation_iv: next x n intervals, or NULL */
} series;

static void on_rotation(void *arg, size_t k, const double *est)
{
	series *se = arg;

	se->in_order &= k == se->next++;
	for (size_t e = 0; e < se->n; e++)
		se->sum[e] += est[e];
}

static void on_rotation_iv(void *arg, size_t k, const double *est, const mpxkit_interval *iv)
{
	series *se = arg;

	if (se->iv)
		memcpy(se->iv + k * se->n, iv, se->n * sizeof *iv);
	on_rotation(arg, k, est);
}

/* On a replay the series is every rotation in order, and adds up to the totals exactly. */
static void test_replay_series(void)
{
	mpxkit_trace *t = make_trace(5, 41, 9);
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	series se = {5, 0, 1, {0}, NULL};
	double est[5];

	mpxkit_sched_config_default(&cfg);
	cfg.counters = 2;
	strcpy(cfg.estimator, "linear-dira");
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, NULL), 0);
	for (size_t e = 0; e < 5; e++)
		mpxkit_source_add(src, t->events[e], NULL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, on_rotation, &se), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, NULL, NULL), -MPXKIT_ESTATE);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, est, NULL), 41 / 3);
	CU_ASSERT_EQUAL(se.next, 41 / 3);
	CU_ASSERT(se.in_order);
	CU_ASSERT_EQUAL(memcmp(se.sum, est, sizeof est), 0);
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
}

/* ---- intervals through the engine ----------------------------------------------------- */

static mpxkit_mpx_run *simulate(const mpxkit_trace *t, size_t C, const char *reference);

/* A trace of n_events columns, n_steps rows, value(e, step) in each cell. */
static mpxkit_trace *trace_of(size_t n_events, size_t n_steps, uint64_t (*value)(size_t, size_t))
{
	static const char *names[] = {"ev0", "ev1", "ev2", "ev3", "ev4", "ev5"};
	uint64_t row[6];
	mpxkit_trace *t = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, NULL, n_events, names, NULL), 0);
	for (size_t k = 0; k < n_steps; k++) {
		for (size_t e = 0; e < n_events; e++)
			row[e] = value(e, k);
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, k, row), 0);
	}
	return t;
}

/* A replay of t through the engine with C counters, started and stopped. */
static mpxkit_sched *replay_stopped(const mpxkit_trace *t, size_t C, const char *estimator,
				    double level, series *se)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	cfg.level = level;
	snprintf(cfg.estimator, sizeof cfg.estimator, "%s", estimator);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, NULL), 0);
	for (size_t e = 0; e < t->n_events; e++)
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, t->events[e], NULL), (int)e);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	if (se)
		CU_ASSERT_EQUAL(mpxkit_sched_on_rotation_iv(s, on_rotation_iv, se), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	return s;
}

static uint64_t bursty(size_t e, size_t k)
{
	return (uint64_t)((k * 7919u + e * 104729u) % 1000u) * (1 + k % 3) + 10;
}

static uint64_t constant(size_t e, size_t k)
{
	(void)k;
	return 100u * (e + 1);
}

/*
 * Counted all the time (C >= events, G = 1): every total is the sum of its
 * column, with a zero-width interval, at any level and for every estimator.
 */
static void test_iv_always_counted(void)
{
	mpxkit_trace *t = trace_of(3, 25, bursty);
	static const char *const names[] = {"fixed", "linear-dira", "cam"};

	for (size_t i = 0; i < 3; i++) {
		mpxkit_sched *s = replay_stopped(t, 3, names[i], 0.5, NULL);
		double est[3], fid[3];
		mpxkit_interval iv[3];
		CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, fid, NULL, iv), 25);
		for (size_t e = 0; e < 3; e++) {
			double want = 0;
			for (size_t k = 0; k < 25; k++)
				want += (double)bursty(e, k);
			CU_ASSERT_DOUBLE_EQUAL(est[e], want, 1e-6);
			CU_ASSERT_EQUAL(iv[e].lo, iv[e].hi);
			CU_ASSERT_DOUBLE_EQUAL(iv[e].lo, want, 1e-6);
			CU_ASSERT_EQUAL(iv[e].flags, 0u);
		}
		mpxkit_sched_free(s);
	}
	mpxkit_trace_free(t);
}

/*
 * Never counted: a replay shorter than one rotation (2 steps, G = 3)
 * estimates no window, and its trailing partial rotation is dropped, so no
 * event has a measurement: each is unobserved, [0, inf), never a bare 0.
 * Before any run the same holds.
 */
static void test_iv_never_counted(void)
{
	mpxkit_trace *t = trace_of(3, 2, bursty);
	mpxkit_sched *s = replay_stopped(t, 1, "fixed", 0.9, NULL);
	double est[3];
	mpxkit_interval iv[3];

	CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, NULL, NULL, iv), 0);
	for (size_t e = 0; e < 3; e++) {
		CU_ASSERT_EQUAL(iv[e].flags, MPXKIT_INTERVAL_UNOBSERVED);
		CU_ASSERT_EQUAL(iv[e].lo, 0.0);
		CU_ASSERT(isinf(iv[e].hi));
	}
	CU_ASSERT_EQUAL(mpxkit_sched_reset(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, NULL, NULL, iv), 0);
	CU_ASSERT_EQUAL(iv[0].flags, MPXKIT_INTERVAL_UNOBSERVED);
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
}

/*
 * A constant series, one slice in G = 2 (C = 1, fixed): each window
 * estimates 2 x its one slice, which is the truth.  Successive slices'
 * rates never differ, and no spread seen is no proof that the slices not
 * counted saw the same: each window's variance is the Poisson one, (c + 1)
 * / t over the counted time so far (doc/estimators.md, "Intervals").  By
 * hand, with c the event's count per slice: window k >= 1 has counted k +
 * 1 slices, variance c + 1 / (k + 1), sampling factor G (G - 1) = 2; window
 * 0 waits for window 1's variance, so the total's spread^2 is (2 + 2)
 * (c + 1/2) + 2 sum_{k=2..9} (c + 1 / (k + 1)), with the 9 differences'
 * 6 degrees of freedom, and its interval is symmetric about the truth (the
 * calibration's factor is the table's, so the width itself is not checked
 * here: ctests/test_intervals has the model's by hand).
 */
static void test_iv_constant(void)
{
	mpxkit_trace *t = trace_of(2, 20, constant);
	mpxkit_sched *s = replay_stopped(t, 1, "fixed", 0.9, NULL);
	double est[2];
	mpxkit_interval iv[2];

	CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, NULL, NULL, iv), 10);
	for (size_t e = 0; e < 2; e++) {
		double c = (double)constant(e, 0), want = 20.0 * c, var = 4 * (c + 0.5);
		for (int k = 2; k < 10; k++)
			var += 2 * (c + 1.0 / (k + 1));
		CU_ASSERT_DOUBLE_EQUAL(est[e], want, 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(iv[e].spread, sqrt(var), 1e-9);
		CU_ASSERT_DOUBLE_EQUAL(iv[e].dof, 6, 1e-12);
		CU_ASSERT(iv[e].lo > 10 * c && iv[e].lo < want);
		CU_ASSERT_DOUBLE_EQUAL(iv[e].hi - want, want - iv[e].lo, 1e-9);
		CU_ASSERT_EQUAL(iv[e].flags, 0u);
	}
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
}

/*
 * One slice in G = 2 of a varying series (C = 1, fixed): the total's
 * interval is the offline path's for the same windows, bit for bit, at the
 * engine's level; it holds the estimate, its lower bound is at least what
 * the counted slices saw (the even or odd steps, summed by hand), and it has
 * width.  The series callback gets each window's interval, the offline
 * path's too.
 */
static void test_iv_one_slice_in_g(void)
{
	const size_t n = 2, steps = 40, K = steps / 2;
	mpxkit_trace *t = trace_of(n, steps, bursty);
	series se = {n, 0, 1, {0}, NULL};
	mpxkit_sched *s;
	mpxkit_mpx_run *run = simulate(t, 1, NULL);
	mpxkit_series sr = mpxkit_mpx_series(run);
	mpxkit_estimator *off = NULL;
	double est[2], *out = calloc(K * n, sizeof *out);
	mpxkit_interval iv[2], total[2], *win = calloc(K * n, sizeof *win);

	se.iv = calloc(K * n, sizeof *se.iv);
	s = replay_stopped(t, 1, "fixed", 0.8, &se);
	CU_ASSERT_DOUBLE_EQUAL(mpxkit_sched_level(s), 0.8, 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, NULL, NULL, iv), (int)K);
	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&off, "fixed", &run->layout, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_set_interval(off, 0.8, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_run_series_iv(off, &sr, out, win, total), 0);
	CU_ASSERT_EQUAL(se.next, K);
	for (size_t e = 0; e < n; e++) {
		double seen = 0;
		for (size_t k = e; k < steps; k += 2)
			seen += (double)bursty(e, k);
		CU_ASSERT_EQUAL(memcmp(&iv[e].lo, &total[e].lo, sizeof iv[e].lo), 0);
		CU_ASSERT_EQUAL(memcmp(&iv[e].hi, &total[e].hi, sizeof iv[e].hi), 0);
		CU_ASSERT(iv[e].lo >= seen);
		CU_ASSERT(iv[e].lo <= est[e] && est[e] <= iv[e].hi);
		CU_ASSERT(iv[e].hi > iv[e].lo && isfinite(iv[e].hi));
		for (size_t k = 0; k < K; k++) {
			CU_ASSERT_EQUAL(
			    memcmp(&se.iv[k * n + e].lo, &win[k * n + e].lo, sizeof(double)), 0);
			CU_ASSERT_EQUAL(
			    memcmp(&se.iv[k * n + e].hi, &win[k * n + e].hi, sizeof(double)), 0);
		}
	}
	/* Window 0 is the run's first counted slice of each event, with no spread seen yet. */
	CU_ASSERT(se.iv[0].flags & MPXKIT_INTERVAL_OPEN);
	mpxkit_estimator_free(off);
	mpxkit_mpx_run_free(run);
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
	free(out);
	free(win);
	free(se.iv);
}

/* A level is checked where it is set: MPXKIT_LEVEL, strictly. */
static void test_iv_level_setting(void)
{
	mpxkit_sched_config cfg;
	mpxkit_diag diag = {0};
	static const char *const bad[] = {"0",	  "1",	 "0.995", "-0.5", "0.9x",
					  " 0.9", "nan", "",	  "90"};

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_DOUBLE_EQUAL(cfg.level, 0.9, 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_LEVEL", "0.5", &diag), 0);
	CU_ASSERT_DOUBLE_EQUAL(cfg.level, 0.5, 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_LEVEL", "0.99", &diag), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_LEVEL", bad[i], &diag),
				-MPXKIT_EINVAL);
		CU_ASSERT(strstr(diag.msg, "MPXKIT_LEVEL") != NULL);
	}
	CU_ASSERT_DOUBLE_EQUAL(cfg.level, 0.99, 0);
}

/* ---- the whole-run pass (bigru) ------------------------------------------------------- */

/* The source tree's default bigru model ($MPXKIT_DATADIR, as make check sets it), or NULL. */
static mpxkit_model *bigru_model(void)
{
	const char *dir = getenv("MPXKIT_DATADIR");
	char path[1024];
	mpxkit_model *m = NULL;

	if (dir == NULL || dir[0] == '\0') {
		printf("\n  MPXKIT_DATADIR unset (not run by make check): not checked\n  ");
		return NULL;
	}
	snprintf(path, sizeof path, "%s/models/bigru.mpxm", dir);
	CU_ASSERT_EQUAL_FATAL(mpxkit_model_load_file(&m, path, NULL), 0);
	return m;
}

/* A started and stopped replay of t's columns (the reference's left out) with an estimator. */
static mpxkit_sched *replay_with(const char *estimator, const mpxkit_trace *t, size_t C,
				 size_t whole_max, const char *reference, series *se, double *read,
				 double *stop, int *rotations)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_sched_whole w;
	size_t n = 0;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	cfg.whole_max = whole_max;
	snprintf(cfg.estimator, sizeof cfg.estimator, "%s", estimator);
	if (reference)
		snprintf(cfg.reference, sizeof cfg.reference, "%s", reference);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, NULL), 0);
	for (size_t e = 0; e < t->n_events; e++)
		if (!reference || strcmp(t->events[e], reference) != 0)
			CU_ASSERT_EQUAL_FATAL(mpxkit_source_add(src, t->events[e], NULL), (int)n++);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), 0); /* no run yet */
	if (se)
		CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, on_rotation, se), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_start(s), 0);
	CU_ASSERT(mpxkit_sched_read(s, read, NULL) >= 0);
	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), -MPXKIT_ESTATE);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	*rotations = mpxkit_sched_read(s, stop, NULL);
	return s;
}

/* The offline run of t: simulate with C counters (and the reference), then bigru's windowed rows.
 */
static mpxkit_mpx_run *simulate(const mpxkit_trace *t, size_t C, const char *reference)
{
	mpxkit_mpx_config cfg = {C, reference, NULL, 0, "test", NULL, 0};
	mpxkit_mpx_run *run = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &run, NULL), 0);
	return run;
}

/*
 * The estimators' side of the pass the engine relies on: only bigru and
 * bigru-full have one, and their mpxkit_estimator_run_whole is
 * mpxkit_bigru_run over the whole run (with and without a reference); for
 * the others it is mpxkit_estimator_run, bit for bit.
 */
static void test_whole_estimators(void)
{
	mpxkit_trace *t = make_trace(6, 100, 25);
	mpxkit_model *m = bigru_model();
	mpxkit_mpx_run *runs[2];
	double a[33 * 6], b[33 * 6];
	mpxkit_diag diag = {0};

	if (m == NULL) {
		mpxkit_trace_free(t);
		return;
	}
	runs[0] = simulate(t, 2, NULL);
	runs[1] = simulate(t, 2, "ev5");
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const char *name = mpxkit_estimator_info_at(i)->name;
		int learned = strcmp(name, "bigru") == 0 || strcmp(name, "bigru-full") == 0;
		for (int r = 0; r < 2; r++) {
			const mpxkit_mpx_run *run = runs[r];
			size_t K = run->n_rotations, n = run->layout.n_events;
			mpxkit_estimator *e = NULL;

			if (mpxkit_estimator_new(&e, name, &run->layout, NULL, NULL) < 0) {
				CU_ASSERT_EQUAL(r, 0); /* ref-rate, without a reference */
				continue;
			}
			CU_ASSERT_EQUAL(mpxkit_estimator_has_whole_run(e), learned);
			CU_ASSERT_EQUAL(
			    mpxkit_estimator_run_whole(e, K, run->obs, run->ref, a, NULL), 0);
			if (learned) {
				CU_ASSERT_EQUAL(mpxkit_bigru_run(m, &run->layout, K, run->obs,
								 run->ref, b, NULL),
						0);
			} else {
				CU_ASSERT_EQUAL(mpxkit_estimator_run(e, K, run->obs, run->ref, b),
						0);
			}
			CU_ASSERT_EQUAL(memcmp(a, b, K * n * sizeof *a), 0);
			CU_ASSERT_EQUAL(mpxkit_estimator_run_whole(e, 0, NULL, NULL, NULL, NULL),
					0);
			CU_ASSERT_EQUAL(mpxkit_estimator_run_whole(e, K, NULL, run->ref, a, &diag),
					-MPXKIT_EINVAL);
			if (run->ref) {
				CU_ASSERT_EQUAL(
				    mpxkit_estimator_run_whole(e, K, run->obs, NULL, a, &diag),
				    -MPXKIT_EINVAL);
			}
			mpxkit_estimator_free(e);
		}
	}
	CU_ASSERT_EQUAL(mpxkit_estimator_has_whole_run(NULL), 0);
	mpxkit_mpx_run_free(runs[0]);
	mpxkit_mpx_run_free(runs[1]);
	mpxkit_model_free(m);
	mpxkit_trace_free(t);
}

/* Sums of each event's rows, in rotation order, as the engine adds them. */
static void row_sums(const double *rows, size_t K, size_t n, double *sum)
{
	memset(sum, 0, n * sizeof *sum);
	for (size_t k = 0; k < K; k++)
		for (size_t e = 0; e < n; e++)
			sum[e] += rows[k * n + e];
}

/* The windowed bigru's rows through the registry (= mpxkit_bigru_run per window: test_estimators).
 */
static void windowed_rows(const mpxkit_mpx_run *run, double *rows)
{
	mpxkit_estimator *e = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_estimator_new(&e, "bigru", &run->layout, NULL, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_estimator_run(e, run->n_rotations, run->obs, run->ref, rows), 0);
	mpxkit_estimator_free(e);
}

/*
 * A replay with bigru: the totals after the stop are the sums of
 * mpxkit_bigru_run over mpxkit_mpx_simulate's observations of the whole
 * run, bit for bit, and a read before it those of the window (the reads
 * stay windowed); the kept rotations are those observations,
 * the whole series is mpxkit_bigru_run's rows, and the series callback still
 * had the windowed rows, every one, in order.  Without and with a reference.
 */
static void test_whole_replay(void)
{
	const char *refs[2] = {NULL, "ev5"};
	mpxkit_trace *t = make_trace(6, 100, 21);
	mpxkit_model *m = bigru_model();

	if (m == NULL) {
		mpxkit_trace_free(t);
		return;
	}
	for (int r = 0; r < 2; r++) {
		mpxkit_mpx_run *run = simulate(t, 2, refs[r]);
		size_t n = run->layout.n_events, K = run->n_rotations;
		double *whole = calloc(K * n, sizeof *whole), *win = calloc(K * n, sizeof *win);
		double sum[8], wsum[8], read[8], stop[8];
		series se = {n, 0, 1, {0}, NULL};
		mpxkit_sched_whole w;
		int rotations;
		mpxkit_sched *s =
		    replay_with("bigru", t, 2, 65536, refs[r], &se, read, stop, &rotations);

		CU_ASSERT_EQUAL(K, 33);
		CU_ASSERT_EQUAL(n, refs[r] ? 5 : 6);
		CU_ASSERT_EQUAL_FATAL(
		    mpxkit_bigru_run(m, &run->layout, K, run->obs, run->ref, whole, NULL), 0);
		windowed_rows(run, win);
		row_sums(whole, K, n, sum);
		row_sums(win, K, n, wsum);
		CU_ASSERT_EQUAL(rotations, (int)K);
		CU_ASSERT_EQUAL(memcmp(read, wsum, n * sizeof *sum), 0); /* reads: windowed */
		CU_ASSERT_EQUAL(memcmp(stop, sum, n * sizeof *sum), 0);
		CU_ASSERT_NOT_EQUAL(memcmp(sum, wsum, n * sizeof *sum), 0); /* the pass matters */
		CU_ASSERT_EQUAL_FATAL(mpxkit_sched_whole_series(s, &w), 1);
		CU_ASSERT_EQUAL_FATAL(w.n_rotations, K);
		CU_ASSERT_EQUAL(memcmp(w.obs, run->obs, K * n * sizeof *w.obs), 0);
		if (refs[r]) {
			CU_ASSERT(w.ref != NULL &&
				  memcmp(w.ref, run->ref, K * 3 * sizeof *w.ref) == 0);
		} else {
			CU_ASSERT_PTR_NULL(w.ref);
		}
		CU_ASSERT_EQUAL(memcmp(w.est, whole, K * n * sizeof *whole), 0);
		CU_ASSERT_EQUAL(se.next, K);
		CU_ASSERT(se.in_order);
		CU_ASSERT_EQUAL(memcmp(se.sum, wsum, n * sizeof *wsum), 0);
		/* A second run of the same scheduler gives the same pass. */
		CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_read(s, stop, NULL), (int)K);
		CU_ASSERT_EQUAL(memcmp(stop, sum, n * sizeof *sum), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), 1);
		mpxkit_sched_free(s);
		mpxkit_mpx_run_free(run);
		free(whole);
		free(win);
	}
	mpxkit_model_free(m);
	mpxkit_trace_free(t);
}

/*
 * The cap: a run of exactly whole_max rotations gets the pass; one rotation
 * more, or whole_max 0, keeps the windowed sums, and the whole series is
 * not there.
 */
static void test_whole_cap(void)
{
	static const size_t caps[] = {33, 32, 1, 0};
	mpxkit_trace *t = make_trace(6, 100, 22);
	mpxkit_model *m = bigru_model();
	mpxkit_mpx_run *run;
	double whole[33 * 6], win[33 * 6], sum[6], wsum[6];

	if (m == NULL) {
		mpxkit_trace_free(t);
		return;
	}
	run = simulate(t, 2, NULL);
	CU_ASSERT_EQUAL_FATAL(run->n_rotations, 33);
	CU_ASSERT_EQUAL_FATAL(mpxkit_bigru_run(m, &run->layout, 33, run->obs, NULL, whole, NULL),
			      0);
	windowed_rows(run, win);
	row_sums(whole, 33, 6, sum);
	row_sums(win, 33, 6, wsum);
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		double read[6], stop[6];
		series se = {6, 0, 1, {0}, NULL};
		mpxkit_sched_whole w;
		int rotations;
		mpxkit_sched *s =
		    replay_with("bigru", t, 2, caps[i], NULL, &se, read, stop, &rotations);
		const double *want = caps[i] >= 33 ? sum : wsum;

		CU_ASSERT_EQUAL(rotations, 33);
		CU_ASSERT_EQUAL(memcmp(read, wsum, sizeof read), 0);
		CU_ASSERT_EQUAL(memcmp(stop, want, sizeof stop), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), caps[i] >= 33);
		CU_ASSERT_EQUAL(w.n_rotations, caps[i] >= 33 ? 33 : 0);
		CU_ASSERT_EQUAL(se.next, 33); /* the windowed series, whatever the cap */
		CU_ASSERT_EQUAL(memcmp(se.sum, wsum, sizeof wsum), 0);
		mpxkit_sched_free(s);
	}
	mpxkit_mpx_run_free(run);
	mpxkit_model_free(m);
	mpxkit_trace_free(t);
}

/*
 * Edges: a run that completes no rotation (2 steps, G = 3) has a whole
 * series of none and totals 0; with one group (C >= n) nothing is
 * multiplexed and the whole series is the trace's rows; an estimator
 * without a whole-run pass has no whole series.
 */
static void test_whole_edges(void)
{
	mpxkit_trace *t = make_trace(6, 2, 23), *u = make_trace(4, 20, 24);
	mpxkit_model *m = bigru_model();
	double read[6], stop[6], col[4] = {0};
	mpxkit_sched_whole w;
	int rotations;
	mpxkit_sched *s;

	if (m == NULL) {
		mpxkit_trace_free(t);
		mpxkit_trace_free(u);
		return;
	}
	mpxkit_model_free(m);
	s = replay_with("bigru", t, 2, 65536, NULL, NULL, read, stop, &rotations);
	CU_ASSERT_EQUAL(rotations, 0);
	for (size_t e = 0; e < 6; e++)
		CU_ASSERT(read[e] == 0 && stop[e] == 0);
	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), 1);
	CU_ASSERT_EQUAL(w.n_rotations, 0);
	mpxkit_sched_free(s);

	s = replay_with("bigru", u, 4, 65536, NULL, NULL, read, stop, &rotations);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 1);
	CU_ASSERT_EQUAL(rotations, 20);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_whole_series(s, &w), 1);
	CU_ASSERT_EQUAL_FATAL(w.n_rotations, 20);
	for (size_t i = 0; i < 20 * 4; i++) {
		CU_ASSERT_EQUAL(w.est[i], (double)u->values[i]);
		col[i % 4] += (double)u->values[i];
	}
	for (size_t e = 0; e < 4; e++)
		CU_ASSERT_EQUAL(stop[e], col[e]);
	mpxkit_sched_free(s);

	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(NULL, &w), -MPXKIT_EINVAL);
	s = replay_with("cam", u, 2, 65536, NULL, NULL, read, stop, &rotations);
	CU_ASSERT_EQUAL(rotations, 10);
	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), 0);
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
	mpxkit_trace_free(u);
}

static void test_sched_bad_arguments(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_trace *t = make_trace(2, 4, 1);
	mpxkit_diag diag = {0};

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_replay(&src, t, 1000, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_new(&s, src, &cfg, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg, "scheduler: the source has no event");
	mpxkit_source_add(src, "ev0", NULL);
	strcpy(cfg.estimator, "nope");
	CU_ASSERT_EQUAL(mpxkit_sched_new(&s, src, &cfg, &diag), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NULL(s);
	mpxkit_source_free(src); /* still ours after a failure */
	CU_ASSERT_EQUAL(mpxkit_sched_read(NULL, NULL, NULL), -MPXKIT_EINVAL);
	mpxkit_sched_free(NULL);
	mpxkit_trace_free(t);
}

/* ---- perf: 6 software events on 2 counters against OCOE truth -------------------------- */

#define SW_EVENTS 6
static const char *const sw_events[SW_EVENTS] = {
    "perf::TASK-CLOCK",	  "perf::PAGE-FAULTS",	    "perf::CPU-CLOCK",
    "perf::MINOR-FAULTS", "perf::CONTEXT-SWITCHES", "perf::MAJOR-FAULTS",
};

/*
 * A steady workload: one fresh page touched, then ~step_ns of CPU, over and
 * over for total_ns of CPU time, so every event's rate is even over time and
 * any slice sees its share.  Not instrumented: ASan's shadow writes would add
 * faults.
 */
__attribute__((no_sanitize_address)) static void steady_work(uint64_t total_ns, uint64_t step_ns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), max = 1 + total_ns / step_ns, i = 0;
	volatile char *p =
	    mmap(NULL, max * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t t0 = cutest_thread_cpu_ns(), t = t0;
	volatile uint64_t sink = 0;

	(void)sink; /* clang counts stores alone as "set but not used" */
	if (p == MAP_FAILED)
		return;
	madvise((void *)p, max * page, MADV_NOHUGEPAGE);
	while (t - t0 < total_ns) {
		uint64_t next = t + step_ns;
		if (i < max)
			p[i++ * page] = 1;
		while ((t = cutest_thread_cpu_ns()) < next)
			for (int j = 0; j < 1000; j++)
				sink += (uint64_t)j * 2654435761u;
	}
	munmap((void *)p, max * page);
}

/*
 * User mode only, as the truth of cutest_perf_open counts: in kernel mode
 * (the default where it is allowed) context switches count in the hundreds
 * under load, a rare and bursty event these accuracy checks are not about.
 */
static int open_events(mpxkit_source **out, size_t n)
{
	mpxkit_source_target user = MPXKIT_SOURCE_SELF;
	mpxkit_diag diag = {0};
	int rc;

	user.domain = MPXKIT_DOM_USER;
	rc = mpxkit_source_open_perf(out, &user, &diag);

	for (size_t e = 0; rc >= 0 && e < n; e++)
		rc = mpxkit_source_add(*out, sw_events[e], &diag);
	if (rc < 0)
		printf("\n  %s ", mpxkit_diag_message(&diag, rc));
	return rc < 0 ? rc : 0;
}

/*
 * The exact counts of the same run, to check the estimates against: one raw
 * perf_event descriptor per event (cutest_perf_open, not libmpxkit's
 * source), counting all the time over a window that encloses the
 * scheduler's.  Load on the machine then changes the run and its truth
 * alike, and the difference is the estimate's error alone.
 */
typedef struct exact_counts {
	int fd[SW_EVENTS];
	double value[SW_EVENTS];
} exact_counts;

static int exact_start(exact_counts *t)
{
	for (size_t e = 0; e < SW_EVENTS; e++)
		if ((t->fd[e] = cutest_perf_open(sw_events[e])) < 0)
			return -1;
	for (size_t e = 0; e < SW_EVENTS; e++)
		ioctl(t->fd[e], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

static void exact_stop(exact_counts *t)
{
	for (size_t e = 0; e < SW_EVENTS; e++)
		ioctl(t->fd[e], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t e = 0; e < SW_EVENTS; e++) {
		t->value[e] = (double)cutest_perf_read(t->fd[e]);
		close(t->fd[e]);
	}
}

/*
 * How far a multiplexed estimate of the steady workload may be from the
 * truth.  The clocks run at an even rate: only the slices' edges err, so 3 %.
 * Faults come one per 100 us of work, about 20 per 2 ms slice, so each
 * observation is quantised to +-5 %, and under valgrind or the sanitisers
 * there are fewer rotations to average over: 10 %.
 */
static double tolerance(const char *event)
{
	return strstr(event, "CLOCK") ? 0.03 : 0.10;
}

/*
 * What round robin guarantees of the fidelities of one engine's W groups
 * (fid[g]: an event of group g's; every event in exactly one group) after
 * `rotations` completed rotations over run_ns of its clock (mpxkit_sched_read_timed).
 * A fidelity is the event's counted time over the run's (sched.c, fidelity_of
 * and current_totals: total = now - run_clock).
 *  - Each completed rotation gave each group one slice (round_robin.c: group
 *    s mod G in slice s; end_window counts a rotation after W slices), and a
 *    slice ends only once slice_left found at most slice_ns / 10 of it left
 *    (run_real_time), with the switch's clock read after slice_left's:
 *    fid[g] >= rotations * (slice_ns - slice_ns / 10) / run_ns.
 *  - The slices tile the run: each starts at the clock where the last ended
 *    (rotate: slice_clock = now), the first at run_clock (begin_run), and the
 *    slice in progress is added up to the read's clock (tail_estimate), so
 *    the groups' fidelities sum to 1.
 *  - Hence fid[g] <= 1 - the other groups' lower bounds.
 * Nothing bounds one slice from above: a late wake-up stretches it, so
 * "about 1 / W" holds only on a quiet machine.
 */
static void check_rr_fidelity(const char *what, const double *fid, size_t W, int rotations,
			      uint64_t slice_ns, double run_ns)
{
	double low = 0, sum = 0;

	CU_ASSERT_FATAL(W > 0);
	CU_ASSERT(rotations >= 0 && run_ns > 0);
	if (rotations > 0 && run_ns > 0)
		low = (double)rotations * (double)(slice_ns - slice_ns / 10) / run_ns;
	for (size_t g = 0; g < W; g++)
		sum += fid[g];
	printf("\n  %s: %d rotations in %.0f ns, each group's fidelity in [%.3f, %.3f]:", what,
	       rotations, run_ns, low, 1 - (double)(W - 1) * low);
	for (size_t g = 0; g < W; g++) {
		printf(" %.3f", fid[g]);
		CU_ASSERT(fid[g] >= low - 1e-9);
		CU_ASSERT(fid[g] <= 1 - (double)(W - 1) * low + 1e-9);
	}
	printf(", sum %.9f", sum);
	CU_ASSERT(fabs(sum - 1.0) < 1e-9);
}

/* Multiplexed estimates against the same events counted all the time, in the same run. */
static void test_perf_six_on_two(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	exact_counts tc;
	double est[SW_EVENTS], fid[SW_EVENTS], group_fid[3], run_ns = 0;
	mpxkit_interval iv[SW_EVENTS];
	int rotations;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 2;
	cfg.slice_ns = 2000000; /* 2 ms: 50 rotations of 3 slices in 300 ms */
	CU_ASSERT_EQUAL_FATAL(open_events(&src, SW_EVENTS), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 3);

	CU_ASSERT_EQUAL_FATAL(exact_start(&tc), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(150000000, 100000);
	/* Mid-run, the window in progress included: every estimate inside its interval. */
	CU_ASSERT(mpxkit_sched_read_iv(s, est, fid, NULL, iv) >= 0);
	for (size_t e = 0; e < SW_EVENTS; e++)
		CU_ASSERT(iv[e].lo <= est[e] && est[e] <= iv[e].hi);
	steady_work(150000000, 100000);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	exact_stop(&tc);
	CU_ASSERT(mpxkit_sched_read_iv(s, est, fid, NULL, iv) >= 0);
	rotations = mpxkit_sched_read_timed(s, est, fid, &run_ns);
	CU_ASSERT(rotations >= 0);
	printf("\n  %d rotations, %zu wake-ups", rotations, mpxkit_sched_wakeups(s));
	if (cutest_under_valgrind())
		printf("\n  under valgrind: accuracy not checked");
	else if (cutest_rotation_thread_ran(mpxkit_sched_wakeups(s), run_ns, cfg.slice_ns))
		CU_ASSERT(rotations > 0);
	/* C = 2 in order: event e in group e / 2, whose events share one counted time. */
	for (size_t g = 0; g < 3; g++) {
		group_fid[g] = fid[2 * g];
		CU_ASSERT_EQUAL(fid[2 * g + 1], fid[2 * g]);
	}
	check_rr_fidelity("round robin", group_fid, 3, rotations, cfg.slice_ns, run_ns);
	for (size_t e = 0; e < SW_EVENTS; e++) {
		double want = tc.value[e];
		printf("\n  %-24s estimate %12.0f  truth %12.0f  counted %.3f  in [%.0f, %.0f]",
		       sw_events[e], est[e], want, fid[e], iv[e].lo, iv[e].hi);
		/*
		 * The stop's interval holds the stop's estimate, and past two
		 * rotations the run has shown every event's spread (a sparse one's
		 * interval says it is).  Whether it holds the truth is a matter of
		 * coverage, measured by eval.
		 */
		CU_ASSERT(iv[e].lo <= est[e] && est[e] <= iv[e].hi);
		CU_ASSERT(rotations < 3 ||
			  ((iv[e].flags & ~MPXKIT_INTERVAL_SPARSE) == 0 && isfinite(iv[e].hi)));
		if (want == 0) {
			CU_ASSERT_EQUAL(est[e], 0); /* user mode: no switches, no major faults */
		} else if (cutest_under_valgrind()) {
			continue;
		} else {
			CU_ASSERT(fabs(est[e] - want) <= tolerance(sw_events[e]) * want);
		}
	}
	printf("\n  ");
	mpxkit_sched_free(s);
}

/* ---- perf: what is multiplexed (MPXKIT_MULTIPLEX) ------------------------------------- */

/* This process's threads now, from /proc/self/task. */
static size_t thread_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* n write(2) calls of one byte to /dev/null: as many syscalls:sys_enter_write for this thread. */
static void writes(int fd, int n)
{
	for (int i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1)
			break;
}

/*
 * The default, hardware: six software events, none of which takes a
 * counter, are counted all the time on C = 2 (no rotation at all: no
 * wake-up of a rotation thread in 40 slices' time), each exactly, against
 * the same events counted by raw descriptors around the run.  The truth's
 * window encloses the engine's, so no count may pass it, and what lies
 * between the two is the start's and the stop's own work: a few page
 * faults of their first calls; the clocks within 0.2 % either way (seen: 3
 * us of 80 ms past the truth, cpu-clock read on another CPU's clock).
 */
static void test_perf_counted_all_the_time(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	exact_counts tc;
	double est[SW_EVENTS], fid[SW_EVENTS], run_ns = 0;
	mpxkit_interval iv[SW_EVENTS];
	size_t threads;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = 2;
	cfg.slice_ns = 2000000;
	CU_ASSERT_EQUAL_FATAL(open_events(&src, SW_EVENTS), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_events, SW_EVENTS);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 1);
	CU_ASSERT_STRING_EQUAL(mpxkit_sched_estimator(s), "exact");
	threads = thread_count();
	CU_ASSERT_EQUAL_FATAL(exact_start(&tc), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(thread_count(), threads); /* no rotation thread */
	steady_work(80000000, 100000);
	CU_ASSERT_EQUAL(mpxkit_sched_read_timed(s, est, fid, &run_ns), 0);
	CU_ASSERT(run_ns > 0);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	exact_stop(&tc);
	CU_ASSERT_EQUAL(mpxkit_sched_wakeups(s), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_read(s, est, fid), 0);
	/* Exact counts: intervals of zero width, at the default level. */
	CU_ASSERT_EQUAL(mpxkit_sched_read_iv(s, est, NULL, NULL, iv), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_level(s), MPXKIT_INTERVAL_LEVEL);
	for (size_t e = 0; e < SW_EVENTS; e++)
		CU_ASSERT(iv[e].lo == est[e] && iv[e].hi == est[e] && iv[e].flags == 0);
	for (size_t e = 0; e < SW_EVENTS; e++) {
		double want = tc.value[e];
		printf("\n  %-24s count %12.0f  truth %12.0f  counted %.3f", sw_events[e], est[e],
		       want, fid[e]);
		CU_ASSERT_EQUAL(fid[e], 1.0);
		if (strstr(sw_events[e], "CLOCK")) {
			/*
			 * Two clocks read on CPUs whose local clocks differ by microseconds;
			 * under valgrind the start and stop take milliseconds of the truth's.
			 */
			CU_ASSERT(est[e] <= 1.002 * want);
			CU_ASSERT(cutest_under_valgrind() || est[e] >= 0.998 * want);
		} else {
			CU_ASSERT(est[e] <= want);
			CU_ASSERT(cutest_under_valgrind() || est[e] >= want - 16);
		}
	}
	printf("\n  ");
	mpxkit_sched_free(s);
}

typedef struct series_rows {
	size_t n, events;
	double sum[8];
	int negative;
} series_rows;

static void sum_rows(void *arg, size_t k, const double *est)
{
	series_rows *r = arg;

	(void)k;
	r->n++;
	for (size_t e = 0; e < r->events; e++) {
		r->sum[e] += est[e];
		r->negative |= est[e] < 0;
	}
}

/*
 * Both kinds in one scheduler: a tracepoint and context switches counted all
 * the time beside three events multiplexed on one counter (taken as events
 * that take a counter, mpxkit__perf_force_counter: there is no hardware PMU
 * here).  The tracepoint counts the test's own 321 write(2) calls exactly,
 * with fidelity 1; the three are counted about a third of the time each,
 * their group rotating, and the task clock comes within 3 % of a raw
 * descriptor's count around the run; the series holds every event in the
 * caller's order, the tracepoint's rows adding up to no more than 321.
 */
static void test_perf_mixed(void)
{
	static const char *const names[] = {"syscalls:sys_enter_write", "perf::TASK-CLOCK",
					    "perf::CONTEXT-SWITCHES", "perf::PAGE-FAULTS",
					    "perf::CPU-CLOCK"};
	static const int forced[] = {0, 1, 0, 1, 1};
	const size_t n = sizeof names / sizeof names[0];
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	series_rows rows = {0};
	double est[5], fid[5], truth, run_ns = 0;
	int fd = open("/dev/null", O_WRONLY), clock_fd = cutest_perf_open("perf::TASK-CLOCK"), rc;

	rows.events = n;
	CU_ASSERT_FATAL(fd >= 0 && clock_fd >= 0);
	mpxkit_sched_config_default(&cfg);
	cfg.counters = 1;
	cfg.slice_ns = 2000000;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&src, NULL, &diag), 0);
	for (size_t e = 0; e < n; e++) {
		rc = mpxkit_source_add(src, names[e], &diag);
		if (rc < 0 && e == 0) {
			printf("\n  %s: not checked ", mpxkit_diag_message(&diag, rc));
			mpxkit_source_free(src);
			close(fd);
			close(clock_fd);
			return;
		}
		CU_ASSERT_EQUAL_FATAL(rc, (int)e);
		if (forced[e])
			CU_ASSERT_EQUAL(mpxkit__perf_force_counter(src, (int)e, PERF_TYPE_RAW), 0);
		CU_ASSERT_EQUAL(mpxkit_source_takes_counter(src, (int)e), forced[e]);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_events, n);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 3);
	CU_ASSERT_EQUAL(mpxkit_sched_counters(s), 1);
	CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, sum_rows, &rows), 0);
	ioctl(clock_fd, PERF_EVENT_IOC_ENABLE, 0);
	rc = mpxkit_sched_start(s);
	if (rc < 0)
		printf("\n  start: %s ", mpxkit_strerror(rc));
	CU_ASSERT_EQUAL(rc, 0);
	writes(fd, 100);
	steady_work(150000000, 100000);
	writes(fd, 221);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	ioctl(clock_fd, PERF_EVENT_IOC_DISABLE, 0);
	truth = (double)cutest_perf_read(clock_fd);
	/* run_ns: the engine's, whose events are the forced three. */
	rc = mpxkit_sched_read_timed(s, est, fid, &run_ns);
	CU_ASSERT(rc >= 0);
	printf("\n  %d rotations, %zu wake-ups, %zu series rows", rc, mpxkit_sched_wakeups(s),
	       rows.n);
	if (!cutest_under_valgrind() &&
	    cutest_rotation_thread_ran(mpxkit_sched_wakeups(s), run_ns, cfg.slice_ns))
		CU_ASSERT(rc > 0);
	for (size_t e = 0; e < n; e++)
		printf("\n  %-26s %12.0f  counted %.3f  series sum %12.0f", names[e], est[e], fid[e],
		       rows.sum[e]);
	CU_ASSERT_EQUAL(est[0], 321);
	CU_ASSERT_EQUAL(fid[0], 1.0);
	{
		mpxkit_interval iv[5];
		CU_ASSERT(mpxkit_sched_read_iv(s, est, NULL, NULL, iv) >= 0);
		CU_ASSERT(iv[0].lo == 321 && iv[0].hi == 321);
		CU_ASSERT(iv[1].lo <= est[1] && iv[1].hi >= est[1]); /* the engine's own */
	}
	CU_ASSERT_EQUAL(fid[2], 1.0);
	CU_ASSERT(rows.sum[0] <= 321);
	CU_ASSERT(!rows.negative);
	CU_ASSERT_EQUAL(rows.n, (size_t)rc);
	{
		/* The engine's three groups of one (C = 1): the forced events, in order. */
		double group_fid[3];
		size_t g = 0;
		for (size_t e = 0; e < n; e++)
			if (forced[e])
				group_fid[g++] = fid[e];
		CU_ASSERT_EQUAL_FATAL(g, 3);
		check_rr_fidelity("the engine", group_fid, 3, rc, cfg.slice_ns, run_ns);
	}
	printf("\n  task clock %.0f, truth %.0f\n  ", est[1], truth);
	CU_ASSERT(cutest_under_valgrind() || fabs(est[1] - truth) <= 0.03 * truth);
	mpxkit_sched_free(s);
	close(fd);
	close(clock_fd);
}

/*
 * C per PMU: two events taken as the core PMU's and two as another PMU's
 * (type 99, as an uncore PMU would be), with a tracepoint, on C = 1.  Each
 * PMU's pair rotates on its own counter, so each event is counted about
 * half the time (one engine for the four would give a quarter), and the
 * tracepoint all the time: 64 write(2) calls exactly.  Groups never mix
 * PMUs: the kernel would refuse such a perf group.  With two PMUs there is
 * no one series (each rotates on its own clock): asking for one is refused.
 */
static void test_perf_per_pmu(void)
{
	static const char *const names[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS",
					    "syscalls:sys_enter_write", "perf::CPU-CLOCK",
					    "perf::MINOR-FAULTS"};
	static const int pmu[] = {PERF_TYPE_RAW, 99, -1, PERF_TYPE_RAW, 99};
	const size_t n = sizeof names / sizeof names[0];
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	series_rows rows = {0};
	double est[5], fid[5], run_ns = 0;
	int fd = open("/dev/null", O_WRONLY), rc;
	size_t threads = thread_count();

	CU_ASSERT_FATAL(fd >= 0);
	mpxkit_sched_config_default(&cfg);
	cfg.counters = 1;
	cfg.slice_ns = 2000000;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&src, NULL, &diag), 0);
	for (size_t e = 0; e < n; e++) {
		rc = mpxkit_source_add(src, names[e], &diag);
		if (rc < 0 && e == 2) {
			printf("\n  %s: not checked ", mpxkit_diag_message(&diag, rc));
			mpxkit_source_free(src);
			close(fd);
			return;
		}
		CU_ASSERT_EQUAL_FATAL(rc, (int)e);
		if (pmu[e] >= 0)
			CU_ASSERT_EQUAL(mpxkit__perf_force_counter(src, (int)e, pmu[e]), 0);
		CU_ASSERT_EQUAL(mpxkit_source_counter_pmu(src, (int)e), pmu[e]);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_n_multiplexed(s), 4);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 2);
	CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, sum_rows, &rows), -MPXKIT_ENOSUPP);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	CU_ASSERT_EQUAL(thread_count(), threads + 2); /* a rotation thread per PMU */
	writes(fd, 30);
	steady_work(120000000, 100000);
	writes(fd, 34);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	/* rc and run_ns: the first PMU's engine's (lib/sched/front.c, totals). */
	rc = mpxkit_sched_read_timed(s, est, fid, &run_ns);
	CU_ASSERT(rc >= 0);
	printf("\n  %d rotations of the first PMU, %zu wake-ups", rc, mpxkit_sched_wakeups(s));
	for (size_t e = 0; e < n; e++) {
		printf("\n  %-26s PMU %3d %12.0f  counted %.3f", names[e], pmu[e], est[e], fid[e]);
		if (pmu[e] < 0)
			CU_ASSERT_EQUAL(fid[e], 1.0);
	}
	/*
	 * Each PMU's pair rotates on its own counter, two groups of one.  The
	 * first engine's rotations are known: round robin's bounds.  The
	 * second's are not (the front returns the first's), so of its pair
	 * only what holds for any number of rotations: the two slices tile its
	 * run, their fidelities in [0, 1] summing to 1.
	 */
	{
		double first[2] = {fid[0], fid[3]}, second = fid[1] + fid[4];
		check_rr_fidelity("first PMU", first, 2, rc, cfg.slice_ns, run_ns);
		printf("\n  second PMU: fidelities %.3f + %.3f = %.9f", fid[1], fid[4], second);
		CU_ASSERT(fid[1] >= 0 && fid[1] <= 1 && fid[4] >= 0 && fid[4] <= 1);
		CU_ASSERT(fabs(second - 1.0) < 1e-9);
	}
	printf("\n  ");
	CU_ASSERT_EQUAL(est[2], 64);
	mpxkit_sched_free(s);
	close(fd);
}

/* A reference counted in every slice needs slices: refused when nothing is multiplexed. */
static void test_perf_reference_nothing_multiplexed(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};

	mpxkit_sched_config_default(&cfg);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_REFERENCE", "perf::TASK-CLOCK", &diag),
			0);
	CU_ASSERT_EQUAL_FATAL(open_events(&src, 2), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_new(&s, src, &cfg, &diag), -MPXKIT_EINVAL);
	CU_ASSERT(strstr(diag.msg, "nothing is multiplexed") != NULL);
	mpxkit_source_free(src);
}

/*
 * A start-up burst: PAGES fresh pages touched at once, then CPU only.
 * Not instrumented: ASan's shadow writes would add faults.
 */
__attribute__((no_sanitize_address)) static void burst_then_work(size_t pages, uint64_t cpu_ns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p =
	    mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise((void *)p, pages * page, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
	cutest_burn_cpu(cpu_ns);
	munmap((void *)p, pages * page);
}

/* How long the burst of burst_then_work takes here, in ns (no work after it). */
static uint64_t burst_ns(size_t pages)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	burst_then_work(pages, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
	       (uint64_t)a.tv_nsec;
}

/*
 * The README demo's problem (doc/schedules.md): six software events on two
 * counters, the page faults all in the first slice.  Round-robin with fixed
 * sees the burst only if the faults' group happens to count then; adaptive
 * counts the burst-prone events first and must come within 10 % of the
 * faults and 2 % of the clocks, against the same events counted all the time
 * in the same run.  The slice is at least 2 ms, and longer where the host
 * takes longer for the burst (test_perf_startup_burst), so that the burst
 * stays in adaptive's start-up phase; the work after it lasts 60 slices at
 * least, so that every event is counted in some.
 */
static double burst_run(const char *schedule, uint64_t slice_ns, uint64_t work_ns, double *est,
			double *want)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL, *truth = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_source_count tc[SW_EVENTS];
	int rotations;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 2;
	cfg.slice_ns = slice_ns;
	snprintf(cfg.schedule, sizeof cfg.schedule, "%s", schedule);
	if (open_events(&src, SW_EVENTS) != 0 || open_events(&truth, SW_EVENTS) != 0 ||
	    mpxkit_sched_new(&s, src, &cfg, NULL) != 0) {
		mpxkit_source_free(src);
		mpxkit_source_free(truth);
		return -1;
	}
	mpxkit_source_enable(truth, MPXKIT_SOURCE_ALL);
	mpxkit_sched_start(s);
	burst_then_work(4000, work_ns);
	mpxkit_sched_stop(s);
	mpxkit_source_disable(truth, MPXKIT_SOURCE_ALL);
	mpxkit_source_read(truth, tc, SW_EVENTS);
	rotations = mpxkit_sched_read(s, est, NULL);
	for (size_t e = 0; e < SW_EVENTS; e++)
		want[e] = (double)tc[e].value;
	mpxkit_sched_free(s);
	mpxkit_source_free(truth);
	return rotations;
}

static void test_perf_startup_burst(void)
{
	double est[SW_EVENTS], want[SW_EVENTS], rr[SW_EVENTS], rr_want[SW_EVENTS];
	/*
	 * When this test was written the burst fitted in its first 2 ms slice
	 * (adaptive 3990 to 4002 faults for 4000); a day later, on the same
	 * machine, 4000 first touches took 4.5 to 12 ms, over more slices than
	 * adaptive's start-up phase (4), and the test is about a start-up burst.
	 * The slice: the time of one burst taken here, the first and coldest, so
	 * that the burst stays in the first window (W = G = 3 slices) and the
	 * start-up phase even at twice that time (half of it failed once in a
	 * distcheck: 4561 faults for 4000, the burst over a window's end).
	 */
	uint64_t d = burst_ns(4000), slice = d > 2000000 ? d : 2000000;
	uint64_t work = 60 * slice > 200000000 ? 60 * slice : 200000000;

	printf("\n  burst %.1f ms, slices of %.1f ms, work %.0f ms", (double)d * 1e-6,
	       (double)slice * 1e-6, (double)work * 1e-6);
	CU_ASSERT_FATAL(burst_run("round-robin", slice, work, rr, rr_want) >= 0);
	CU_ASSERT_FATAL(burst_run("adaptive", slice, work, est, want) >= 0);
	for (size_t e = 0; e < SW_EVENTS; e++)
		printf("\n  %-24s round-robin %10.0f (truth %10.0f)  adaptive %10.0f (truth %10.0f)",
		       sw_events[e], rr[e], rr_want[e], est[e], want[e]);
	printf("\n  ");
	if (cutest_under_valgrind()) {
		printf("under valgrind: accuracy not checked\n  ");
		return;
	}
	for (size_t e = 0; e < SW_EVENTS; e++) {
		double tol = strstr(sw_events[e], "CLOCK") ? 0.02 : 0.10;
		CU_ASSERT(want[e] == 0 ? est[e] == 0 : fabs(est[e] - want[e]) <= tol * want[e]);
	}
}

/* Start and stop again, reset while running, read in between: totals cover only their window. */
/*
 * A reference on real counters: perf::TASK-CLOCK in every slice, ref-rate
 * estimating the six events on two counters, against the same events counted
 * all the time.  The reference's slot is the seventh, and it counts while
 * every group rotates.
 */
static void test_perf_reference(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	exact_counts tc;
	double est[SW_EVENTS];
	int rotations;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 2;
	cfg.slice_ns = 2000000;
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_ESTIMATOR", "ref-rate", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_config_set(&cfg, "MPXKIT_REFERENCE", "perf::TASK-CLOCK", NULL),
			0);
	CU_ASSERT_EQUAL_FATAL(open_events(&src, SW_EVENTS), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_n_slots(src), SW_EVENTS + 1);
	cfg.counters = 0;
	{
		mpxkit_sched *d = NULL;
		mpxkit_source *one = NULL;
		CU_ASSERT_EQUAL_FATAL(open_events(&one, 1), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&d, one, &cfg, NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_counters(d), mpxkit_sched_default_counters());
		mpxkit_sched_free(d);
	}
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_events, SW_EVENTS);
	CU_ASSERT_STRING_EQUAL(mpxkit_sched_estimator(s), "ref-rate");

	CU_ASSERT_EQUAL_FATAL(exact_start(&tc), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(300000000, 100000);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	exact_stop(&tc);
	rotations = mpxkit_sched_read(s, est, NULL);
	CU_ASSERT(rotations >= 0);
	printf("\n  %d rotations, ref-rate on perf::TASK-CLOCK", rotations);
	for (size_t e = 0; e < SW_EVENTS; e++) {
		double want = tc.value[e];
		printf("\n  %-24s estimate %12.0f  truth %12.0f", sw_events[e], est[e], want);
		if (want == 0) {
			CU_ASSERT_EQUAL(est[e], 0);
		} else if (!cutest_under_valgrind()) {
			CU_ASSERT(fabs(est[e] - want) <= tolerance(sw_events[e]) * want);
		}
	}
	printf("\n  ");
	mpxkit_sched_free(s);
}

/*
 * Never counted: a run shorter than its first slice (1 s slices, three
 * groups) counts only group 0.  The events of the other groups have
 * fidelity 0 and estimate 0, exactly (sched.h), which mpxkit stat shows as
 * <not counted> and PAPI reads as 0 (doc/component.md); group 0's events
 * were counted all of the run.  After the stop and while running alike.
 */
static void test_perf_never_counted(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	double est[SW_EVENTS], fid[SW_EVENTS];
	mpxkit_interval iv[SW_EVENTS];

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 2;
	cfg.slice_ns = 1000000000;
	CU_ASSERT_EQUAL_FATAL(open_events(&src, SW_EVENTS), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_layout(s)->n_groups, 3);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(5000000, 100000);
	for (int stopped = 0; stopped < 2; stopped++) {
		if (stopped)
			CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
		CU_ASSERT_EQUAL(mpxkit_sched_read(s, est, fid), 0);
		for (size_t e = 0; e < SW_EVENTS; e++) {
			if (mpxkit_sched_layout(s)->slice[e] == 0) {
				CU_ASSERT(fid[e] > 0.9);
				continue;
			}
			CU_ASSERT_EQUAL(fid[e], 0.0);
			CU_ASSERT_EQUAL(est[e], 0.0);
		}
		/*
		 * The intervals: no window is done, so group 0's events have
		 * their first slice only, open above from what it saw; the
		 * others are not counted.
		 */
		CU_ASSERT(mpxkit_sched_read_iv(s, est, fid, NULL, iv) >= 0);
		for (size_t e = 0; e < SW_EVENTS; e++) {
			if (mpxkit_sched_layout(s)->slice[e] == 0) {
				CU_ASSERT_EQUAL(iv[e].flags, MPXKIT_INTERVAL_OPEN);
				CU_ASSERT(isinf(iv[e].hi));
				CU_ASSERT(iv[e].lo <= est[e]);
				continue;
			}
			CU_ASSERT_EQUAL(iv[e].flags, MPXKIT_INTERVAL_UNOBSERVED);
			CU_ASSERT_EQUAL(iv[e].lo, 0.0);
			CU_ASSERT(isinf(iv[e].hi));
		}
	}
	CU_ASSERT(est[0] > 0); /* task-clock, group 0 */
	mpxkit_sched_free(s);
}

static void test_perf_restart_reset(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	double est[3], again[3];
	uint64_t t0, used;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 1;
	cfg.slice_ns = 1000000;
	CU_ASSERT_EQUAL_FATAL(open_events(&src, 3), 0); /* task-clock, page faults, cpu-clock */
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	for (int run = 0; run < 3; run++) {
		CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
		steady_work(20000000, 200000);
		CU_ASSERT(mpxkit_sched_read(s, est, NULL) >= 0);
		CU_ASSERT_EQUAL(mpxkit_sched_reset(s), 0);
		t0 = cutest_thread_cpu_ns();
		steady_work(60000000, 200000);
		used = cutest_thread_cpu_ns() - t0;
		CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
		CU_ASSERT(mpxkit_sched_read(s, again, NULL) >= 0);
		/* task-clock: the 60 ms after the reset, not the 20 ms before it */
		CU_ASSERT(again[0] > 0.8 * (double)used && again[0] < 1.2 * (double)used);
	}
	mpxkit_sched_free(s);
}

/*
 * bigru on real counters: task-clock, page faults and cpu-clock on one
 * counter.  At the stop the kept rotations are every completed one, the
 * whole series is mpxkit_bigru_run over them, bit for bit, and the totals
 * are its sums plus the rotation in progress, by time scaling: at least the
 * sums, at most about one rotation more.  Past the cap (2 rotations) the
 * run keeps its windowed totals and has no whole series.
 */
static void test_perf_whole(void)
{
	mpxkit_model *m = bigru_model();
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_sched_whole w;
	double est[3], sum[3], fid[3], *rows = NULL, run_ns = 0, closed_ns = 0, open_ns;
	uint64_t t0, used;
	int rotations;

	if (m == NULL)
		return;
	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 1;
	cfg.slice_ns = 2000000;
	strcpy(cfg.estimator, "bigru");
	CU_ASSERT_EQUAL_FATAL(open_events(&src, 3), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	t0 = cutest_thread_cpu_ns();
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(150000000, 100000);
	/*
	 * The CPU time the counters saw ends where the stop begins: the stop then
	 * runs the whole-run pass on this thread, uncounted (50 ms of it under
	 * ASan on a loaded machine, a third of the run, failed the check below).
	 */
	used = cutest_thread_cpu_ns() - t0;
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	rotations = mpxkit_sched_read_timed(s, est, fid, &run_ns);
	CU_ASSERT(rotations >= 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_whole_series(s, &w), 1);
	CU_ASSERT_EQUAL_FATAL(w.n_rotations, (size_t)rotations);
	CU_ASSERT_PTR_NULL(w.ref);
	rows = calloc(w.n_rotations ? w.n_rotations * 3 : 1, sizeof *rows);
	/* The windows as the engine kept them: each slice's counts and its real length. */
	mpxkit_series kept = {w.n_rotations, w.obs, NULL, w.val, w.len};
	CU_ASSERT_EQUAL(mpxkit_bigru_run_series(m, mpxkit_sched_layout(s), &kept, rows, NULL), 0);
	/*
	 * A run of fewer than MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS rotations is
	 * fixed's by the learned rules (test_estimators checks that rule), not the
	 * network's: under valgrind this run makes 9 and the comparison with the
	 * bare network failed there now and then.
	 */
	if (w.n_rotations >= MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS)
		CU_ASSERT_EQUAL(memcmp(rows, w.est, w.n_rotations * 3 * sizeof *rows), 0);
	row_sums(w.est, w.n_rotations, 3, sum);
	/*
	 * The rotation in progress at the stop: the run's time (its clock,
	 * current_totals) less the kept rotations' slices, each kept as its
	 * clock time in slices (rotate: len = len_ns / slice_ns).  A late
	 * wake-up of the rotation thread stretches it without bound.
	 */
	for (size_t i = 0; i < w.n_rotations * 3; i++)
		closed_ns += w.len[i] * (double)cfg.slice_ns;
	open_ns = run_ns - closed_ns;
	printf("\n  %d rotations, %zu wake-ups; task-clock %.0f ns (whole series %.0f), cpu %llu "
	       "ns; in progress at the stop %.0f ns (%.2f rotations)",
	       rotations, mpxkit_sched_wakeups(s), est[0], sum[0], (unsigned long long)used,
	       open_ns, open_ns / (3.0 * (double)cfg.slice_ns));
	CU_ASSERT(open_ns >= -1 && open_ns <= run_ns + 1);
	for (size_t e = 0; e < 3; e++) {
		double most = 0, tail = est[e] - sum[e];
		for (size_t k = 0; k < w.n_rotations; k++)
			most = w.est[k * 3 + e] > most ? w.est[k * 3 + e] : most;
		CU_ASSERT(est[e] >= sum[e] - 1e-6 * sum[e]);
		printf("\n  %s: the rotation in progress adds %.0f", sw_events[e], tail);
		if (e == 0) {
			/*
			 * The totals are the whole series' sums plus the rotation in
			 * progress by time scaling (tail_estimate: its count over its
			 * counted time, times its time).  task-clock counts the
			 * target's time as the clock does (up to the instants of
			 * their reads), so what the rotation in progress adds is its
			 * time, however long a late wake-up made it (and however
			 * valgrind ran the threads).
			 */
			CU_ASSERT(fabs(tail - open_ns) <=
				  0.01 * open_ns + 0.01 * (double)cfg.slice_ns);
		} else if (cutest_under_valgrind() || rotations < 4) {
			continue;
		} else if (open_ns <= 3.0 * (double)cfg.slice_ns) {
			/*
			 * Page faults and cpu-clock: the rotation in progress's time
			 * at a rate measured over a slice or two of it (or the last
			 * slice counted), with no exact figure to hold it to.  Where
			 * it is at most one rotation long it adds about one
			 * rotation's estimate at most, a second one for jitter.
			 */
			CU_ASSERT(est[e] <= sum[e] + 2 * most + 1);
		} else {
			printf(" (in progress over one rotation: not checked)");
		}
	}
	if (!cutest_under_valgrind()) {
		if (cutest_rotation_thread_ran(mpxkit_sched_wakeups(s), run_ns, cfg.slice_ns))
			CU_ASSERT(rotations >= 4);
		CU_ASSERT(est[0] > 0.75 * (double)used && est[0] < 1.25 * (double)used);
	}

	/* Past the cap. */
	mpxkit_sched_free(s);
	cfg.whole_max = 2;
	CU_ASSERT_EQUAL_FATAL(open_events(&src, 3), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(50000000, 100000);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	rotations = mpxkit_sched_read(s, est, NULL);
	printf("\n  cap 2: %d rotations, whole series %d\n  ", rotations,
	       mpxkit_sched_whole_series(s, &w));
	CU_ASSERT_EQUAL(mpxkit_sched_whole_series(s, &w), rotations > 2 ? 0 : 1);
	mpxkit_sched_free(s);
	free(rows);
	mpxkit_model_free(m);
}

/*
 * The stop's own work is not counted.  After the counters stop, the stop
 * flushes the estimator (the series callback with it) and runs the
 * whole-run pass on the stopping thread, which a per-thread clock goes on
 * counting; the window in progress must end at the disable.  A callback that
 * burns 40 ms of CPU in the stop's flush (linear-dira holds one rotation back)
 * must leave task-clock and cpu-clock at the run's CPU time, 150 ms: ced039f
 * read the window in progress after the flush and added the 40 ms (the
 * sanitizers' slow bigru pass added 7 to 14 ms to test_perf_whole's).
 */
static int stopping;

static void burn_at_stop(void *arg, size_t k, const double *est)
{
	(void)arg;
	(void)k;
	(void)est;
	if (stopping)
		cutest_burn_cpu(40000000);
}

static void test_perf_stop_work(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	double est[3];
	uint64_t t0, used;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 1;
	cfg.slice_ns = 2000000;
	strcpy(cfg.estimator, "linear-dira");
	CU_ASSERT_EQUAL_FATAL(open_events(&src, 3), 0); /* task-clock, page faults, cpu-clock */
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_on_rotation(s, burn_at_stop, NULL), 0);
	t0 = cutest_thread_cpu_ns();
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	steady_work(150000000, 100000);
	used = cutest_thread_cpu_ns() - t0;
	stopping = 1;
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	stopping = 0;
	CU_ASSERT(mpxkit_sched_read(s, est, NULL) >= 0);
	printf("\n  task-clock %.0f ns, cpu-clock %.0f ns, cpu %llu ns", est[0], est[2],
	       (unsigned long long)used);
	if (cutest_under_valgrind()) {
		printf("\n  under valgrind: accuracy not checked");
	} else {
		CU_ASSERT(fabs(est[0] - (double)used) <= tolerance("CLOCK") * (double)used);
		CU_ASSERT(fabs(est[2] - (double)used) <= tolerance("CLOCK") * (double)used);
	}
	printf("\n  ");
	mpxkit_sched_free(s);
}

/* ---- threads ------------------------------------------------------------------------- */

#define N_THREADS 8

typedef struct worker {
	int ok;
	double task_clock;
	uint64_t cpu_ns;
} worker;

static void *thread_main(void *arg)
{
	worker *w = arg;
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	double est[3] = {0};
	uint64_t t0;

	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 2;
	cfg.slice_ns = 1000000;
	if (open_events(&src, 3) < 0 || mpxkit_sched_new(&s, src, &cfg, NULL) < 0)
		return NULL;
	t0 = cutest_thread_cpu_ns();
	if (mpxkit_sched_start(s) == 0) {
		for (int i = 0; i < 5; i++) {
			steady_work(10000000, 500000);
			mpxkit_sched_read(s, est, NULL);
		}
		w->ok = mpxkit_sched_stop(s) == 0 && mpxkit_sched_read(s, est, NULL) >= 0;
	}
	w->cpu_ns = cutest_thread_cpu_ns() - t0;
	w->task_clock = est[0];
	mpxkit_sched_free(s);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[N_THREADS];
	worker w[N_THREADS];

	memset(w, 0, sizeof w);
	for (int i = 0; i < N_THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, thread_main, &w[i]), 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N_THREADS; i++) {
		CU_ASSERT(w[i].ok);
		/* Each thread's own task clock, multiplexed: loose, the threads share two cores. */
		CU_ASSERT(w[i].task_clock > 0.5 * (double)w[i].cpu_ns &&
			  w[i].task_clock < 1.5 * (double)w[i].cpu_ns);
	}
}

static const cutest_case config_cases[] = {
    {"defaults", test_config_defaults},
    {"good values", test_config_values},
    {"bad values", test_config_bad_values},
    {"environment", test_config_env},
    {"a misspelt MPXKIT_ variable", test_config_unknown_env},
    {"reference", test_config_reference},
    {"default C: PMU or 4", test_default_counters},
    {NULL, NULL},
};

static const cutest_case replay_cases[] = {
    {"replay source", test_replay_source},
    {"engine = offline path, every estimator", test_replay_matches_offline},
    {"fixed by hand, fidelity", test_replay_fixed_by_hand},
    {"ref-rate by hand, reference slot", test_replay_ref_rate_by_hand},
    {"restart and reset", test_replay_restart_and_reset},
    {"per-rotation series", test_replay_series},
    {"run_whole: bigru = mpxkit_bigru_run, the others = run", test_whole_estimators},
    {"whole-run pass = mpxkit_bigru_run, kept rotations", test_whole_replay},
    {"whole-run pass: the cap", test_whole_cap},
    {"whole-run pass: no rotation, one group", test_whole_edges},
    {"bad arguments", test_sched_bad_arguments},
    {NULL, NULL},
};

static const cutest_case interval_cases[] = {
    {"MPXKIT_LEVEL", test_iv_level_setting},
    {"always counted: zero width", test_iv_always_counted},
    {"never counted: unobserved", test_iv_never_counted},
    {"a constant series: the Poisson spread, by hand", test_iv_constant},
    {"one slice in G: the offline path's, bounded by what was seen", test_iv_one_slice_in_g},
    {NULL, NULL},
};

/* Every perf_event descriptor of the process (readlink of /proc/self/fd) now reads as fd's. */
static int replace_perf_fds(int fd)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[64], link[64];
		ssize_t len;
		int k = atoi(de->d_name);
		snprintf(path, sizeof path, "/proc/self/fd/%d", k);
		len = readlink(path, link, sizeof link - 1);
		if (len <= 0 || k == dirfd(d))
			continue;
		link[len] = '\0';
		if (strcmp(link, "anon_inode:[perf_event]") == 0 && dup2(fd, k) == k)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * A system call that fails at a slice boundary, on the rotation thread,
 * reaches the caller's thread with its name and errno text
 * (mpxkit_diag_last), not a bare "system call failed".  The engine's
 * descriptors are replaced behind its back by a directory's: read(2) of it
 * fails with EISDIR, ioctl(2) with ENOTTY.
 */
static void test_perf_boundary_error(void)
{
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_sched_config cfg;
	mpxkit_diag diag = {0};
	const mpxkit_diag *last;
	double est[SW_EVENTS];
	int dir, rc = 0;

	if (open_events(&src, SW_EVENTS) < 0) {
		mpxkit_source_free(src);
		return;
	}
	mpxkit_sched_config_default(&cfg);
	cfg.counters = 2;
	cfg.slice_ns = 1000000;
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, src, &cfg, &diag), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_start(s), 0);
	dir = open("/", O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(dir >= 0);
	CU_ASSERT(replace_perf_fds(dir) >= SW_EVENTS);
	/* A boundary comes within a slice or two; 20 s is room for valgrind on a loaded machine. */
	for (int i = 0; i < 20000 && rc >= 0; i++) {
		rc = mpxkit_sched_read(s, est, NULL);
		if (rc >= 0)
			usleep(1000);
	}
	CU_ASSERT_EQUAL(rc, -MPXKIT_ESYS);
	last = mpxkit_diag_last();
	CU_ASSERT_PTR_NOT_NULL_FATAL(last);
	CU_ASSERT_EQUAL(last->code, -MPXKIT_ESYS);
	CU_ASSERT(last->sys_errno == EISDIR || last->sys_errno == ENOTTY);
	CU_ASSERT(strcmp(last->msg, "read: Is a directory") == 0 ||
		  strcmp(last->msg, "ioctl: Inappropriate ioctl for device") == 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(NULL, rc), last->msg);
	/* The stop returns the same error, with the same line. */
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), -MPXKIT_ESYS);
	CU_ASSERT_EQUAL(mpxkit_diag_last()->sys_errno, last->sys_errno);
	mpxkit_sched_free(s); /* and its source */
	close(dir);
}

static const cutest_case perf_cases[] = {
    {"6 software events on 2 counters", test_perf_six_on_two},
    {"hardware: software events counted all the time, no wake-up", test_perf_counted_all_the_time},
    {"hardware: counted all the time beside multiplexed", test_perf_mixed},
    {"hardware: a reference with nothing multiplexed", test_perf_reference_nothing_multiplexed},
    {"hardware: C per PMU, one engine each", test_perf_per_pmu},
    {"reference perf::TASK-CLOCK, ref-rate", test_perf_reference},
    {"never counted: fidelity 0, estimate 0", test_perf_never_counted},
    {"restart and reset", test_perf_restart_reset},
    {"a start-up burst of page faults: adaptive within 10 %", test_perf_startup_burst},
    {"bigru: the whole-run pass at the stop", test_perf_whole},
    {"the stop's own work is not counted", test_perf_stop_work},
    {"a boundary's failed system call keeps its errno text", test_perf_boundary_error},
    {"8 threads", test_threads},
    {NULL, NULL},
};

static int perf_allowed(void)
{
	mpxkit_source *s = NULL;
	int ok = open_events(&s, 1) == 0;

	mpxkit_source_free(s);
	return ok;
}

int main(void)
{
	const cutest_suite all[] = {{"settings", config_cases, NULL, NULL},
				    {"replay", replay_cases, NULL, NULL},
				    {"intervals", interval_cases, NULL, NULL},
				    {"perf", perf_cases, NULL, NULL},
				    {NULL, NULL, NULL, NULL}};
	const cutest_suite no_perf[] = {{"settings", config_cases, NULL, NULL},
					{"replay", replay_cases, NULL, NULL},
					{"intervals", interval_cases, NULL, NULL},
					{NULL, NULL, NULL, NULL}};

	if (!perf_allowed())
		printf("perf_event_open is refused here: the perf suite is left out\n");
	return cutest_run("test_sched", perf_allowed() ? all : no_perf);
}

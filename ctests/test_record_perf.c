/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit_record_perf: OCOE runs of a known workload on the kernel's software events. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/record.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"

#define PAGES	    3000
#define WORK_MS	    "300"
#define INTERVAL_MS 10

/* ctests/workload_pages, next to this program: built without sanitizers, so the faults
 * it takes are its own and not ASan's shadow memory's. */
static char workload[PATH_MAX];

static int record(const char *const *events, size_t n, size_t C, const char *status,
		  mpxkit_trace **t, mpxkit_record_status *st, mpxkit_diag *diag)
{
	char pages[16];
	char *argv[] = {workload, pages, WORK_MS, (char *)status, NULL};
	mpxkit_record_perf_options o = {C, INTERVAL_MS * 1000000ull, 0};

	snprintf(pages, sizeof pages, "%d", PAGES);
	return mpxkit_record_perf(&o, events, n, argv, t, st, diag);
}

static uint64_t column_sum(const mpxkit_trace *t, size_t e)
{
	uint64_t sum = 0;
	for (size_t s = 0; s < t->n_steps; s++)
		sum += t->values[s * t->n_events + e];
	return sum;
}

/* Three software events on one counter: three runs, side by side. */
static void test_three_runs(void)
{
	const char *events[] = {"perf::TASK-CLOCK", "perf::page-faults",
				"perf::PERF_COUNT_SW_PAGE_FAULTS_MIN"};
	mpxkit_record_status st = {-1, -1};
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	unsigned long s0, s1, s2;
	uint64_t interval = INTERVAL_MS * 1000000ull, late;

	CU_ASSERT_EQUAL_FATAL(record(events, 3, 1, "0", &t, &st, &diag), 0);
	CU_ASSERT_EQUAL(st.exit_code, 0);
	CU_ASSERT_EQUAL(st.signal, 0);
	CU_ASSERT_EQUAL_FATAL(t->n_events, 3);
	/* Canonical names, in the order given. */
	CU_ASSERT_STRING_EQUAL(t->events[0], "perf::TASK-CLOCK");
	CU_ASSERT_STRING_EQUAL(t->events[1], "perf::PAGE-FAULTS");
	CU_ASSERT_STRING_EQUAL(t->events[2], "perf::MINOR-FAULTS");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "tool"), "perf_event");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "runs"), "3");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "counters"), "1");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "interval_ns"), "10000000");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "run_events"),
			       "perf::TASK-CLOCK;perf::PAGE-FAULTS;perf::MINOR-FAULTS");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "exit_status"), "0");
	/* The trace is cut to the shortest run. */
	CU_ASSERT_FATAL(
	    sscanf(mpxkit_trace_get_meta(t, "run_steps"), "%lu;%lu;%lu", &s0, &s1, &s2) == 3);
	CU_ASSERT_EQUAL(t->n_steps, s0 < s1 ? (s0 < s2 ? s0 : s2) : (s1 < s2 ? s1 : s2));
	/* 300 ms of CPU in 10 ms intervals: about 30 whole ones (fewer on a loaded machine
	 * only if wall time outran CPU time, which makes more intervals, not fewer). */
	CU_ASSERT(t->n_steps >= 20);
	printf("\n  %zu steps (runs %s)", t->n_steps, mpxkit_trace_get_meta(t, "run_steps"));
	/*
	 * Reads come at absolute deadlines, s + 1 intervals after the start, and end
	 * at most read_late_ns after theirs (a loaded machine can make that more than
	 * an interval): a one-thread program's CPU time up to read s cannot exceed
	 * that.  (One step alone may: a late read lengthens its interval.)
	 */
	CU_ASSERT_FATAL(sscanf(mpxkit_trace_get_meta(t, "read_late_ns"), "%" SCNu64, &late) == 1);
	printf("\n  reads at most %.3f ms late", late / 1e6);
	for (size_t s = 0, clock = 0; s < t->n_steps; s++) {
		clock += t->values[s * 3];
		CU_ASSERT(clock <= (s + 1) * interval + late);
	}
	/* Every page touched faulted once, in a whole interval (the faults are mid-run). */
	printf("\n  task-clock %llu ns, page faults %llu, minor faults %llu",
	       (unsigned long long)column_sum(t, 0), (unsigned long long)column_sum(t, 1),
	       (unsigned long long)column_sum(t, 2));
	CU_ASSERT(column_sum(t, 1) >= PAGES);
	CU_ASSERT(column_sum(t, 2) >= PAGES);
	/* Plus the program's own start-up, under a hundred faults natively (never sanitised:
	 * ASan's shadow memory alone would fault thousands of pages). */
	CU_ASSERT(column_sum(t, 1) <= 2 * PAGES);
	/* The steps kept hold some of the program's CPU time, and not more than all of it
	 * (300 ms, plus a little for exec and the dynamic loader). */
	CU_ASSERT(column_sum(t, 0) > 0);
	CU_ASSERT(column_sum(t, 0) <= 330000000u);
	printf("\n  ");
	mpxkit_trace_free(t);
}

/* C = 2 over three events: two runs, the second with one event; a failing program is told. */
static void test_two_runs_and_status(void)
{
	const char *events[] = {"perf::TASK-CLOCK", "perf::CPU-CLOCK", "perf::PAGE-FAULTS"};
	mpxkit_record_status st = {0, 0};
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL_FATAL(record(events, 3, 2, "3", &t, &st, &diag), 0);
	CU_ASSERT_EQUAL(st.exit_code, 3);
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "runs"), "2");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "run_events"),
			       "perf::TASK-CLOCK,perf::CPU-CLOCK;perf::PAGE-FAULTS");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "exit_status"), "3");
	CU_ASSERT(column_sum(t, 2) >= PAGES);
	mpxkit_trace_free(t);
}

/*
 * Software events with C = 0: all at once, one run, every interval kept, the
 * one the program ended in too, so the columns are the program's totals: at
 * least its 300 ms of CPU time (which it measures itself) and its pages.
 */
static void test_all_at_once(void)
{
	const char *events[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::MINOR-FAULTS",
				"perf::MAJOR-FAULTS"};
	char *quick[] = {"true", NULL};
	mpxkit_record_perf_options o = {0, 1000000000ull, 0};
	mpxkit_record_status st = {-1, -1};
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL_FATAL(record(events, 4, 0, "0", &t, &st, &diag), 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "mode"), "all-at-once");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "runs"), "1");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "counters"), "4");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "reads_per_step"), "1");
	CU_ASSERT_PTR_NOT_NULL(mpxkit_trace_get_meta(t, "last_step_ns"));
	CU_ASSERT(t->n_steps >= 30);
	printf("\n  %zu steps, task-clock %llu ns, page faults %llu", t->n_steps,
	       (unsigned long long)column_sum(t, 0), (unsigned long long)column_sum(t, 1));
	CU_ASSERT(column_sum(t, 0) >= 300000000u);
	CU_ASSERT(column_sum(t, 0) <= 330000000u);
	CU_ASSERT(column_sum(t, 1) >= PAGES && column_sum(t, 1) <= 2 * PAGES);
	mpxkit_trace_free(t);
	t = NULL;
	/* A program that ends in its first interval is one step, its whole run. */
	CU_ASSERT_EQUAL_FATAL(mpxkit_record_perf(&o, events + 1, 1, quick, &t, &st, &diag), 0);
	CU_ASSERT_EQUAL(t->n_steps, 1);
	CU_ASSERT(t->values[0] > 0);
	mpxkit_trace_free(t);
	printf("\n  ");
}

static void test_errors(void)
{
	const char *unknown[] = {"perf::TASK-CLOCK", "perf::NOPE"};
	const char *twice[] = {"perf::PAGE-FAULTS", "perf::PERF_COUNT_SW_PAGE_FAULTS"};
	const char *one[] = {"perf::TASK-CLOCK"};
	char *missing[] = {"/nonexistent/program", NULL};
	char *quick[] = {"true", NULL};
	mpxkit_record_perf_options o = {1, INTERVAL_MS * 1000000ull, 0};
	mpxkit_record_status st;
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL(record(unknown, 2, 1, "0", &t, &st, &diag), -MPXKIT_ENOENT);
	CU_ASSERT(strstr(diag.msg, "perf::NOPE") != NULL);
	CU_ASSERT_EQUAL(record(twice, 2, 1, "0", &t, &st, &diag), -MPXKIT_EINVAL);
	CU_ASSERT(strstr(diag.msg, "named twice") != NULL);
	CU_ASSERT_EQUAL(mpxkit_record_perf(&o, one, 1, missing, &t, &st, &diag), -MPXKIT_ENOENT);
	CU_ASSERT(strstr(diag.msg, "/nonexistent/program") != NULL);
	/* true ends within its first interval: nothing whole to record. */
	o.interval_ns = 1000000000ull;
	CU_ASSERT_EQUAL(mpxkit_record_perf(&o, one, 1, quick, &t, &st, &diag), -MPXKIT_ERANGE);
	o.interval_ns = 1000; /* below 1 ms */
	CU_ASSERT_EQUAL(mpxkit_record_perf(&o, one, 1, quick, &t, &st, &diag), -MPXKIT_EINVAL);
	o.interval_ns = INTERVAL_MS * 1000000ull;
	CU_ASSERT_EQUAL(mpxkit_record_perf(&o, one, 0, quick, &t, &st, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(t);
}

static const cutest_case cases[] = {
    {"3 software events, C = 1: 3 runs", test_three_runs},
    {"C = 2: 2 runs; exit status", test_two_runs_and_status},
    {"C = 0, software events: all at once", test_all_at_once},
    {"bad events, programs, options", test_errors},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"record --perf", cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	mpxkit_source *probe = NULL;
	char *slash;
	ssize_t len;
	int ok;

	len = readlink("/proc/self/exe", workload, sizeof workload - sizeof "workload_pages");
	if (len <= 0)
		return 1;
	workload[len] = '\0';
	if ((slash = strrchr(workload, '/')) == NULL)
		return 1;
	strcpy(slash + 1, "workload_pages");
	ok = mpxkit_source_open_perf(&probe, NULL, NULL) == 0 &&
	     mpxkit_source_add(probe, "perf::TASK-CLOCK", NULL) >= 0;
	mpxkit_source_free(probe);
	if (!ok) {
		printf("SKIP: perf_event_open is refused here\n");
		return CUTEST_SKIP;
	}
	return cutest_run("test_record_perf", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Fast reads through PAPI (issue 17): system calls per PAPI_read, and what PAPI_stop returns. */
#define _GNU_SOURCE
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <papi.h>

/*
 * The read(2) calls libpapi makes, counted in the thread that asks: this
 * program's read() stands in for libc's, and libpapi calls it through its
 * PLT, so the component's reads of perf descriptors come through here.
 */
static __thread int counting;
static __thread unsigned long n_read;

ssize_t read(int fd, void *buf, size_t len)
{
	if (counting)
		n_read++;
	return syscall(SYS_read, fd, buf, len);
}

#define MAX_EVENTS 8
#define N_READS	   100

static const char *const perf_events[MAX_EVENTS] = {
    "mpxkit:::perf::TASK-CLOCK",     "mpxkit:::perf::PAGE-FAULTS",
    "mpxkit:::perf::CPU-CLOCK",	     "mpxkit:::perf::MINOR-FAULTS",
    "mpxkit:::perf::MAJOR-FAULTS",   "mpxkit:::perf::CONTEXT-SWITCHES",
    "mpxkit:::perf::CPU-MIGRATIONS", "mpxkit:::perf::ALIGNMENT-FAULTS",
};
static const char *const trace_events[MAX_EVENTS] = {
    "mpxkit:::ev0", "mpxkit:::ev1", "mpxkit:::ev2", "mpxkit:::ev3",
    "mpxkit:::ev4", "mpxkit:::ev5", "mpxkit:::ev6", "mpxkit:::ev7",
};

/* What one run in a child process saw. */
typedef struct run {
	int rc;					/* 0, CUTEST_SKIP (component disabled), or -1 */
	unsigned long most_reads, fewest_reads; /* read(2) calls of one PAPI_read */
	long long last[MAX_EVENTS];		/* the last PAPI_read before the stop */
	long long stop[MAX_EVENTS];		/* PAPI_stop */
	long long after[MAX_EVENTS];		/* PAPI_read after the stop */
	uint64_t cpu_ns;			/* the thread's CPU time from start to stop */
} run;

/*
 * 8 events on 4 counters (2 groups), 2 ms slices, MPXKIT_READ=mode; with a
 * trace, its replay.  N_READS reads, each after 0.2 ms of work.
 */
static void run_here(const char *mode, const char *trace, run *r)
{
	const char *const *names = trace ? trace_events : perf_events;
	int es = PAPI_NULL;
	uint64_t t0;
	const PAPI_component_info_t *info;

	memset(r, 0, sizeof *r);
	r->fewest_reads = ~0ul;
	setenv("MPXKIT_READ", mode, 1);
	setenv("MPXKIT_COUNTERS", "4", 1);
	setenv("MPXKIT_MULTIPLEX", "all", 1); /* software events, multiplexed on purpose */
	setenv("MPXKIT_SLICE_US", "2000", 1);
	if (trace)
		setenv("MPXKIT_REPLAY", trace, 1);
	else
		unsetenv("MPXKIT_REPLAY");
	r->rc = -1;
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return;
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	if (info == NULL || info->disabled) {
		printf("\n  mpxkit is disabled here: %s", info ? info->disabled_reason : "?");
		r->rc = CUTEST_SKIP;
		return;
	}
	if (PAPI_create_eventset(&es) != PAPI_OK)
		return;
	for (int i = 0; i < MAX_EVENTS; i++)
		if (PAPI_add_named_event(es, names[i]) != PAPI_OK)
			return;
	t0 = cutest_thread_cpu_ns();
	if (PAPI_start(es) != PAPI_OK)
		return;
	for (int i = 0; i < N_READS; i++) {
		int rc;
		if (!trace)
			cutest_burn_cpu(200000);
		n_read = 0;
		counting = 1;
		rc = PAPI_read(es, r->last);
		counting = 0;
		if (rc != PAPI_OK)
			return;
		r->most_reads = n_read > r->most_reads ? n_read : r->most_reads;
		r->fewest_reads = n_read < r->fewest_reads ? n_read : r->fewest_reads;
	}
	if (PAPI_stop(es, r->stop) != PAPI_OK)
		return;
	r->cpu_ns = cutest_thread_cpu_ns() - t0;
	if (PAPI_read(es, r->after) != PAPI_OK)
		return;
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	r->rc = 0;
}

/* PAPI reads its settings once per process: each mode runs in a child of its own. */
static int run_child(const char *mode, const char *trace, run *r)
{
	int fd[2], status;
	pid_t pid;
	ssize_t got;

	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fd[0]);
		run_here(mode, trace, r);
		fflush(stdout);
		_exit(write(fd[1], r, sizeof *r) == (ssize_t)sizeof *r ? 0 : 1);
	}
	close(fd[1]);
	got = syscall(SYS_read, fd[0], r, sizeof *r);
	close(fd[0]);
	if (waitpid(pid, &status, 0) < 0 || got != (ssize_t)sizeof *r || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return r->rc;
}

static int same(const long long *a, const long long *b)
{
	return memcmp(a, b, MAX_EVENTS * sizeof *a) == 0;
}

/* A replay: fast and exact reads and stops bit for bit the same, and no read(2) at all. */
static void test_replay_modes(void)
{
	char dir[] = "/tmp/test_component_fastread.XXXXXX", path[64];
	FILE *f;
	run fast, exact;
	int rc;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.csv", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "step,ev0,ev1,ev2,ev3,ev4,ev5,ev6,ev7\n");
	for (int s = 0; s < 61; s++)
		fprintf(f, "%d,%d,%d,%d,%d,%d,%d,%d,%d\n", s, 1000 + 37 * s, s % 7 ? 0 : 900,
			5000 - 60 * s, 3 * s * s, 10, (s * 7919) % 1000, s < 30 ? 1 : 5000, 42);
	CU_ASSERT_FATAL(fclose(f) == 0);
	rc = run_child("fast", path, &fast);
	if (rc == CUTEST_SKIP) {
		printf("\n  (skipped) ");
		unlink(path);
		rmdir(dir);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL_FATAL(run_child("exact", path, &exact), 0);
	unlink(path);
	rmdir(dir);
	CU_ASSERT(same(fast.last, exact.last));
	CU_ASSERT(same(fast.stop, exact.stop));
	CU_ASSERT(same(fast.after, exact.stop));
	CU_ASSERT(same(exact.after, exact.stop));
	CU_ASSERT(fast.stop[0] > 0);
	CU_ASSERT_EQUAL(fast.most_reads, 0);
	CU_ASSERT_EQUAL(exact.most_reads, 0);
	printf("\n  stop: ev0 %lld, ev6 %lld in both modes ", fast.stop[0], fast.stop[6]);
}

/*
 * Software events, 8 on 4 counters: a fast PAPI_read makes one read(2)
 * (the group), an exact one five (four counting events and the clock);
 * PAPI_stop returns the stop's totals (PAPI_read after it agrees), and its
 * task-clock is the thread's CPU time from start to stop in both modes.
 */
static void test_perf_modes(void)
{
	static const char *const modes[2] = {"fast", "exact"};
	static const unsigned long calls[2] = {1, 5};

	for (int m = 0; m < 2; m++) {
		run r;
		int rc = run_child(modes[m], NULL, &r);
		double err;
		if (rc == CUTEST_SKIP) {
			printf("\n  (skipped) ");
			return;
		}
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		err = ((double)r.stop[0] - (double)r.cpu_ns) / (double)r.cpu_ns;
		printf(
		    "\n  %-5s: read(2) per PAPI_read %lu to %lu; task-clock at the stop %lld ns, "
		    "CPU %llu ns (%+.2f %%)",
		    modes[m], r.fewest_reads, r.most_reads, r.stop[0], (unsigned long long)r.cpu_ns,
		    100 * err);
		CU_ASSERT_EQUAL(r.most_reads, calls[m]);
		CU_ASSERT_EQUAL(r.fewest_reads, calls[m]);
		CU_ASSERT(same(r.after, r.stop));
		/* Time scaling of a clock: exact but for the slices' edges (as test_sched's 3 %).
		 */
		CU_ASSERT(cutest_under_valgrind() || fabs(err) < 0.03);
	}
	printf("\n  ");
}

int main(void)
{
	static const cutest_case cases[] = {
	    {"replay: fast and exact alike, bit for bit", test_replay_modes},
	    {"software events: read(2) per PAPI_read, PAPI_stop at the stop", test_perf_modes},
	    {NULL, NULL},
	};
	static const cutest_suite suites[] = {{"mpxkit component, reads", cases, NULL, NULL},
					      {NULL, NULL, NULL, NULL}};

	return cutest_run("test_component_fastread", suites);
}

#endif

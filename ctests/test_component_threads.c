/* SPDX-License-Identifier: BSD-3-Clause */
/* Eight threads, each with its own multiplexed mpxkit event set, through PAPI's API. */
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

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <papi.h>

#define N_THREADS 8
#define N_EVENTS  3
#define WORK_NS	  20000000ll /* per read, in each thread's own CPU time */
#define N_READS	  4
#define N_BURST	  200 /* reads in a row after each piece of work */

static const char *const events[N_EVENTS] = {
    "mpxkit:::perf::TASK-CLOCK", "mpxkit:::perf::PAGE-FAULTS", "mpxkit:::perf::CPU-CLOCK"};

typedef struct worker {
	int rc;		  /* the first PAPI error, or PAPI_OK */
	int monotonic;	  /* task-clock never went down from read to read */
	long long cpu_ns; /* the thread's CPU time between start and stop */
	long long values[N_EVENTS];
} worker;

static void *thread_main(void *arg)
{
	worker *w = arg;
	long long v[N_EVENTS], last = 0, t0;
	int es = PAPI_NULL, rc = PAPI_register_thread();

	if (rc == PAPI_OK)
		rc = PAPI_create_eventset(&es);
	for (int i = 0; rc == PAPI_OK && i < N_EVENTS; i++)
		rc = PAPI_add_named_event(es, events[i]);
	t0 = (long long)cutest_thread_cpu_ns();
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	w->monotonic = 1;
	for (int r = 0; rc == PAPI_OK && r < N_READS; r++) {
		cutest_burn_cpu(WORK_NS);
		/* Reads in a row, as timed loops make them (doc/component.md, "Reads"). */
		for (int k = 0; rc == PAPI_OK && k < N_BURST; k++)
			rc = PAPI_read(es, v);
		if (rc == PAPI_OK)
			rc = PAPI_read(es, v);
		/* Estimates may dip a little between reads; a big drop would be a bug. */
		w->monotonic &= v[0] >= last - WORK_NS / 2;
		last = v[0];
	}
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, w->values);
	w->cpu_ns = (long long)cutest_thread_cpu_ns() - t0;
	if (rc == PAPI_OK)
		rc = PAPI_cleanup_eventset(es);
	if (rc == PAPI_OK)
		rc = PAPI_destroy_eventset(&es);
	if (rc == PAPI_OK)
		rc = PAPI_unregister_thread();
	w->rc = rc;
	return NULL;
}

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

/*
 * Each thread counts its own work only: its task-clock estimate is close to
 * its own CPU time, not to the eight threads' sum.  The eight threads share
 * two cores, so each is descheduled often; the slices follow each thread's own
 * time (mpxkit/sched.h), and 25 % covers the edges of its few rotations.
 */
static void test_eight_threads(void)
{
	pthread_t th[N_THREADS];
	worker w[N_THREADS];

	memset(w, 0, sizeof w);
	for (int i = 0; i < N_THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, thread_main, &w[i]), 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N_THREADS; i++) {
		printf("\n  thread %d: task-clock %lld ns, cpu %lld ns, page faults %lld", i,
		       w[i].values[0], w[i].cpu_ns, w[i].values[1]);
		CU_ASSERT_EQUAL(w[i].rc, PAPI_OK);
		CU_ASSERT(w[i].monotonic);
		if (cutest_under_valgrind()) {
			printf(" (under valgrind: accuracy not checked)");
			continue;
		}
		CU_ASSERT(w[i].values[0] > 0.75 * (double)w[i].cpu_ns);
		CU_ASSERT(w[i].values[0] < 1.25 * (double)w[i].cpu_ns);
	}
	printf("\n  ");
}

static const cutest_case thread_cases[] = {
    {"8 threads, one event set each", test_eight_threads},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"mpxkit component, threads", thread_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	const PAPI_component_info_t *info;
	int rc;

	setenv("MPXKIT_COUNTERS", "2", 1); /* 3 events: two groups, multiplexed */
	setenv("MPXKIT_MULTIPLEX", "all", 1); /* software events, multiplexed on purpose */
	setenv("MPXKIT_SLICE_US", "2000", 1);
	unsetenv("MPXKIT_REPLAY");
	rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		fprintf(stderr, "test_component_threads: PAPI_library_init: %s\n",
			PAPI_strerror(rc));
		return 1;
	}
	if (PAPI_thread_init(thread_id) != PAPI_OK) {
		fprintf(stderr, "test_component_threads: PAPI_thread_init failed\n");
		return 1;
	}
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	if (info == NULL || info->disabled) {
		printf("SKIP: mpxkit is disabled here: %s\n", info ? info->disabled_reason : "?");
		PAPI_shutdown();
		return CUTEST_SKIP;
	}
	rc = cutest_run("test_component_threads", suites);
	PAPI_shutdown();
	return rc;
}

#endif

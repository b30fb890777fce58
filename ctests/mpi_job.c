/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI job counted through PAPI with the mpxkit component: each rank's threads print what
 * PAPI_stop returned. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mpi.h>
#include <papi.h>

#include "cutest.h"

/*
 * Usage: mpi_job OUTDIR [--hide-launcher]
 *
 * Every rank starts N_THREADS threads; each counts N_EVENTS software events
 * (multiplexed by the component when MPXKIT_COUNTERS is below N_EVENTS),
 * burns CPU time that grows with the rank (so the job is imbalanced on
 * purpose: the last rank works WORK_GROWTH times as long as the first), and
 * stops.  Each rank writes OUTDIR/rank.R.txt, one line per thread:
 *   rank=R size=S pid=P tid=T values=V1,V2,V3
 * then all ranks call PAPI_shutdown together (which writes MPXKIT_DUMP) and
 * finish.  --hide-launcher removes the launcher's variables before PAPI
 * starts, so the component sees processes outside any launcher: they all
 * write the same MPXKIT_DUMP name at once (the no-clobber test).
 * A disabled component writes OUTDIR/disabled.txt with the reason.
 */

#define N_THREADS   2
#define N_EVENTS    3
#define WORK_NS	    20000000ll /* rank 0's CPU time per thread */
#define WORK_GROWTH 2	       /* the last rank's work over the first's */

static const char *const events[N_EVENTS] = {
    "mpxkit:::perf::TASK-CLOCK", "mpxkit:::perf::PAGE-FAULTS", "mpxkit:::perf::CPU-CLOCK"};

typedef struct worker {
	long long work_ns;
	int rc;
	long tid;
	long long values[N_EVENTS];
} worker;

static void *thread_main(void *arg)
{
	worker *w = arg;
	int es = PAPI_NULL, rc = PAPI_register_thread();

	w->tid = (long)syscall(SYS_gettid);
	if (rc == PAPI_OK)
		rc = PAPI_create_eventset(&es);
	for (int i = 0; rc == PAPI_OK && i < N_EVENTS; i++)
		rc = PAPI_add_named_event(es, events[i]);
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	cutest_burn_cpu((uint64_t)w->work_ns);
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, w->values);
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

/* Every variable that names a launcher's rank, so the component finds none. */
static void hide_launcher(void)
{
	extern char **environ;
	static const char *const prefixes[] = {"OMPI_COMM_WORLD_", "PMIX_", "PMI_", "SLURM_"};
	int again = 1;

	while (again) {
		again = 0;
		for (char **e = environ; *e && !again; e++)
			for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes && !again; p++)
				if (strncmp(*e, prefixes[p], strlen(prefixes[p])) == 0) {
					char name[256];
					size_t n = strcspn(*e, "=");
					snprintf(name, sizeof name, "%.*s", (int)n, *e);
					unsetenv(name);
					again = 1; /* environ changed under the loop */
				}
	}
}

static int fail(int rank, const char *what, int rc)
{
	fprintf(stderr, "mpi_job: rank %d: %s: %s\n", rank, what, PAPI_strerror(rc));
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* Writes what a rank's threads saw, or why the component is off, in OUTDIR. */
static int report(const char *dir, int rank, int size, const worker *w, const char *disabled)
{
	char path[4096];
	FILE *f;

	if (disabled)
		snprintf(path, sizeof path, "%s/disabled.txt", dir);
	else
		snprintf(path, sizeof path, "%s/rank.%d.%ld.txt", dir, rank, (long)getpid());
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	if (disabled)
		fprintf(f, "%s\n", disabled);
	for (int t = 0; !disabled && t < N_THREADS; t++) {
		fprintf(f, "rank=%d size=%d pid=%ld tid=%ld values=", rank, size, (long)getpid(),
			w[t].tid);
		for (int e = 0; e < N_EVENTS; e++)
			fprintf(f, "%lld%s", w[t].values[e], e + 1 < N_EVENTS ? "," : "\n");
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	const PAPI_component_info_t *info;
	pthread_t threads[N_THREADS];
	worker w[N_THREADS];
	int rank, size, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		fprintf(stderr, "usage: mpi_job OUTDIR [--hide-launcher]\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (argc > 2 && strcmp(argv[2], "--hide-launcher") == 0)
		hide_launcher();
	rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT)
		return fail(rank, "PAPI_library_init", rc);
	if ((rc = PAPI_thread_init(thread_id)) != PAPI_OK)
		return fail(rank, "PAPI_thread_init", rc);
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	if (info == NULL || info->disabled) {
		if (rank == 0)
			report(argv[1], rank, size, NULL,
			       info ? info->disabled_reason : "no mpxkit");
		PAPI_shutdown();
		MPI_Finalize();
		return 0;
	}
	memset(w, 0, sizeof w);
	for (int t = 0; t < N_THREADS; t++) {
		w[t].work_ns =
		    WORK_NS + (size > 1 ? WORK_NS * (WORK_GROWTH - 1) * rank / (size - 1) : 0);
		if (pthread_create(&threads[t], NULL, thread_main, &w[t]) != 0)
			return fail(rank, "pthread_create", PAPI_ESYS);
	}
	for (int t = 0; t < N_THREADS; t++) {
		pthread_join(threads[t], NULL);
		if (w[t].rc != PAPI_OK)
			return fail(rank, "a thread's PAPI calls", w[t].rc);
	}
	if (report(argv[1], rank, size, w, NULL) != 0)
		return fail(rank, "writing its report", PAPI_ESYS);
	/* Every rank reaches PAPI_shutdown together: the dumps are written at once. */
	MPI_Barrier(MPI_COMM_WORLD);
	PAPI_shutdown();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

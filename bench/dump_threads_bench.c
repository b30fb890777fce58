/* SPDX-License-Identifier: BSD-3-Clause */
/* MPXKIT_DUMP from many threads of one process at once: the cost of PAPI_stop and of PAPI_shutdown.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <papi.h>

/*
 * Usage: dump_threads_bench DIR [THREADS [RUN_MS [REPEATS]]]   (defaults 64 200 5)
 *
 * Each repeat is a child process: THREADS threads each add 3 software events
 * (mpxkit:::perf::TASK-CLOCK, PAGE-FAULTS, CPU-CLOCK) to an event set of
 * their own, multiplexed on 2 counters (10 ms slices, the default), start
 * together, sleep RUN_MS, and stop together (a barrier before PAPI_stop), so
 * every stop stages its thread into the dump at once; then the main thread
 * times PAPI_shutdown, which encodes the dump and writes it.  The same runs
 * without MPXKIT_DUMP are the baseline.  Reported: the median and the
 * largest PAPI_stop over threads and repeats, and each repeat's
 * PAPI_shutdown, with the dump's size.
 */

#define N_EVENTS 3

static const char *const events[N_EVENTS] = {
    "mpxkit:::perf::TASK-CLOCK", "mpxkit:::perf::PAGE-FAULTS", "mpxkit:::perf::CPU-CLOCK"};

typedef struct shared {
	pthread_barrier_t started, stopping;
	long run_ms;
} shared;

typedef struct worker {
	shared *sh;
	double stop_s;
	int rc;
} worker;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *thread_main(void *arg)
{
	worker *w = arg;
	long long v[N_EVENTS];
	int es = PAPI_NULL, rc = PAPI_register_thread();
	struct timespec d = {w->sh->run_ms / 1000, (w->sh->run_ms % 1000) * 1000000};
	double t0;

	if (rc == PAPI_OK)
		rc = PAPI_create_eventset(&es);
	for (int i = 0; rc == PAPI_OK && i < N_EVENTS; i++)
		rc = PAPI_add_named_event(es, events[i]);
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	pthread_barrier_wait(&w->sh->started);
	nanosleep(&d, NULL);
	pthread_barrier_wait(&w->sh->stopping);
	t0 = now();
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, v);
	w->stop_s = now() - t0;
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

/* One repeat, in this (child) process: the stops' times into stops[], the shutdown's returned. */
static double one_run(int n_threads, long run_ms, double *stops)
{
	pthread_t *t = calloc((size_t)n_threads, sizeof *t);
	worker *w = calloc((size_t)n_threads, sizeof *w);
	shared sh;
	double t0;

	if (t == NULL || w == NULL || PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_thread_init(thread_id) != PAPI_OK)
		return -1;
	sh.run_ms = run_ms;
	pthread_barrier_init(&sh.started, NULL, (unsigned)n_threads);
	pthread_barrier_init(&sh.stopping, NULL, (unsigned)n_threads);
	for (int i = 0; i < n_threads; i++) {
		w[i].sh = &sh;
		pthread_create(&t[i], NULL, thread_main, &w[i]);
	}
	for (int i = 0; i < n_threads; i++) {
		pthread_join(t[i], NULL);
		if (w[i].rc != PAPI_OK) {
			fprintf(stderr, "dump_threads_bench: %s\n", PAPI_strerror(w[i].rc));
			return -1;
		}
		stops[i] = w[i].stop_s;
	}
	t0 = now();
	PAPI_shutdown();
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* REPEATS children with or without the dump; prints one table row per repeat. */
static int measure(const char *dir, int dump, int n_threads, long run_ms, int repeats)
{
	size_t n = (size_t)n_threads * (size_t)repeats;
	double *all = malloc(n * sizeof *all), *shut = malloc((size_t)repeats * sizeof *shut);
	char path[4096];
	long long size = 0;

	snprintf(path, sizeof path, "%s/threads.pcz", dir);
	for (int r = 0; r < repeats; r++) {
		int fds[2], status;
		pid_t pid;
		if (pipe(fds) != 0)
			return -1;
		unlink(path);
		pid = fork();
		if (pid == 0) {
			double *stops = calloc((size_t)n_threads, sizeof *stops), s;
			close(fds[0]);
			if (dump)
				setenv("MPXKIT_DUMP", path, 1);
			else
				unsetenv("MPXKIT_DUMP");
			s = one_run(n_threads, run_ms, stops);
			_exit(s >= 0 && write(fds[1], &s, sizeof s) == sizeof s &&
				      write(fds[1], stops, (size_t)n_threads * sizeof *stops) ==
					  (ssize_t)((size_t)n_threads * sizeof *stops)
				  ? 0
				  : 1);
		}
		close(fds[1]);
		if (read(fds[0], &shut[r], sizeof shut[r]) != sizeof shut[r] ||
		    read(fds[0], all + (size_t)r * (size_t)n_threads,
			 (size_t)n_threads * sizeof *all) !=
			(ssize_t)((size_t)n_threads * sizeof *all))
			return -1;
		close(fds[0]);
		waitpid(pid, &status, 0);
		if (dump) {
			struct stat st;
			size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
		}
		printf("| %s | %d | %.1f ms | %lld |\n", dump ? "MPXKIT_DUMP" : "none", r + 1,
		       shut[r] * 1e3, size);
	}
	qsort(all, n, sizeof *all, cmp_double);
	qsort(shut, (size_t)repeats, sizeof *shut, cmp_double);
	printf("# %s: PAPI_stop median %.3f ms, largest %.3f ms over %zu stops; PAPI_shutdown "
	       "median %.1f ms, range %.1f-%.1f ms\n",
	       dump ? "MPXKIT_DUMP" : "none", all[n / 2] * 1e3, all[n - 1] * 1e3, n,
	       shut[repeats / 2] * 1e3, shut[0] * 1e3, shut[repeats - 1] * 1e3);
	unlink(path);
	free(all);
	free(shut);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	int n_threads = argc > 2 ? atoi(argv[2]) : 64;
	long run_ms = argc > 3 ? atol(argv[3]) : 200;
	int repeats = argc > 4 ? atoi(argv[4]) : 5;

	if (dir == NULL || n_threads < 1 || run_ms < 1 || repeats < 1) {
		fprintf(stderr, "usage: dump_threads_bench DIR [THREADS [RUN_MS [REPEATS]]]\n");
		return 1;
	}
	setenv("MPXKIT_COUNTERS", "2", 1);
	unsetenv("MPXKIT_SLICE_US");
	unsetenv("MPXKIT_ESTIMATOR");
	unsetenv("MPXKIT_REPLAY");
	unsetenv("MPXKIT_REFERENCE");
	printf("# %d threads, 3 events on 2 counters, %ld ms between start and stop\n", n_threads,
	       run_ms);
	printf("| dump | repeat | PAPI_shutdown | dump bytes |\n|---|---:|---:|---:|\n");
	if (measure(dir, 0, n_threads, run_ms, repeats) < 0 ||
	    measure(dir, 1, n_threads, run_ms, repeats) < 0)
		return 2;
	return 0;
}

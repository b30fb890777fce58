/* SPDX-License-Identifier: BSD-3-Clause */
/* PAPI_read of mpxkit event sets, fast and exact, against raw read() of the same descriptors. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <papi.h>

#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"
#include "../lib/source/perf_page.h"

/*
 * How measured (doc/benchmarks.md, "PAPI_read on mpxkit event sets"): every
 * figure is a median of REPS runs of READS reads, and the runs of the
 * compared methods alternate, so a change in the machine's load reaches
 * them alike.  Times are the reading thread's CPU time per read
 * (CLOCK_THREAD_CPUTIME_ID, kernel time of its system calls included),
 * which a loaded machine does not stretch as it stretches wall time; the
 * wall time is printed beside it.  PAPI reads the mpxkit settings once per
 * process, so each mode runs in a child process of its own.
 */
#define READS	  100000
#define REPS	  5
#define N_THREADS 8
#define MAX_EV	  8

static const char *const events[MAX_EV] = {
    "perf::TASK-CLOCK",	    "perf::PAGE-FAULTS",      "perf::CPU-CLOCK",
    "perf::MINOR-FAULTS",   "perf::MAJOR-FAULTS",     "perf::CONTEXT-SWITCHES",
    "perf::CPU-MIGRATIONS", "perf::ALIGNMENT-FAULTS",
};
static const uint64_t configs[MAX_EV] = {
    PERF_COUNT_SW_TASK_CLOCK,	   PERF_COUNT_SW_PAGE_FAULTS,	   PERF_COUNT_SW_CPU_CLOCK,
    PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ,  PERF_COUNT_SW_CONTEXT_SWITCHES,
    PERF_COUNT_SW_CPU_MIGRATIONS,  PERF_COUNT_SW_ALIGNMENT_FAULTS,
};
static const int sizes[] = {1, 4, 8};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* One measurement: ns per read, of the thread's CPU and of the wall clock. */
typedef struct cost {
	double cpu, wall;
} cost;

static double clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void start_clocks(double *cpu, double *wall)
{
	*wall = clock_ns(CLOCK_MONOTONIC);
	*cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static cost stop_clocks(double cpu, double wall, int n)
{
	cost c;
	c.cpu = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) / n;
	c.wall = (clock_ns(CLOCK_MONOTONIC) - wall) / n;
	return c;
}

/* ---- the methods ------------------------------------------------------------------------ */

/* READS read() of each of n descriptors opened as the component opened them before issue 17. */
static int raw_reads(int n, cost *out)
{
	struct perf_event_attr attr;
	uint64_t buf[3];
	double cpu, wall;
	int fd[MAX_EV], rc = 0;

	for (int i = 0; i < n; i++) {
		memset(&attr, 0, sizeof attr);
		attr.size = sizeof attr;
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = configs[i];
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd[i] = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd[i] < 0)
			return -1;
	}
	start_clocks(&cpu, &wall);
	for (int i = 0; i < READS && rc == 0; i++)
		for (int e = 0; e < n; e++)
			if (read(fd[e], buf, sizeof buf) != (ssize_t)sizeof buf)
				rc = -1;
	*out = stop_clocks(cpu, wall, READS);
	for (int i = 0; i < n; i++)
		close(fd[i]);
	return rc;
}

/* An mpxkit event set of the first n events (or the trace's columns), started. */
static int start_set(int n, const char *const *names, int *es)
{
	char name[128];

	*es = PAPI_NULL;
	if (PAPI_create_eventset(es) != PAPI_OK)
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "mpxkit:::%s", names[i]);
		if (PAPI_add_named_event(*es, name) != PAPI_OK)
			return -1;
	}
	return PAPI_start(*es) == PAPI_OK ? 0 : -1;
}

static void end_set(int *es)
{
	long long v[MAX_EV];

	PAPI_stop(*es, v);
	PAPI_cleanup_eventset(*es);
	PAPI_destroy_eventset(es);
}

/* READS PAPI_read of a started event set. */
static int papi_reads(int es, cost *out)
{
	long long v[MAX_EV];
	double cpu, wall;
	int rc = PAPI_OK;

	start_clocks(&cpu, &wall);
	for (int i = 0; i < READS && rc == PAPI_OK; i++)
		rc = PAPI_read(es, v);
	*out = stop_clocks(cpu, wall, READS);
	return rc == PAPI_OK ? 0 : -1;
}

static int papi_set_reads(int n, const char *const *names, cost *out)
{
	int es, rc = start_set(n, names, &es);

	if (rc == 0)
		rc = papi_reads(es, out);
	end_set(&es);
	return rc;
}

/* ---- 8 threads, each on its own event set ---------------------------------------------- */

typedef struct worker {
	pthread_barrier_t *go;
	cost c;
	int rc;
} worker;

static void *worker_main(void *arg)
{
	worker *w = arg;
	int es = -1;

	w->rc = PAPI_register_thread() == PAPI_OK ? start_set(MAX_EV, events, &es) : -1;
	pthread_barrier_wait(w->go);
	if (w->rc == 0)
		w->rc = papi_reads(es, &w->c);
	if (es != -1)
		end_set(&es);
	PAPI_unregister_thread();
	return NULL;
}

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

/* The median thread's CPU time per read with N_THREADS threads reading at once. */
static int threads_reads(cost *out)
{
	pthread_t th[N_THREADS];
	worker w[N_THREADS];
	pthread_barrier_t go;
	double cpu[N_THREADS], wall[N_THREADS];
	int rc = 0;

	pthread_barrier_init(&go, NULL, N_THREADS);
	for (int i = 0; i < N_THREADS; i++) {
		w[i].go = &go;
		if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0)
			return -1;
	}
	for (int i = 0; i < N_THREADS; i++) {
		pthread_join(th[i], NULL);
		rc |= w[i].rc;
		cpu[i] = w[i].c.cpu;
		wall[i] = w[i].c.wall;
	}
	pthread_barrier_destroy(&go);
	out->cpu = median(cpu, N_THREADS);
	out->wall = median(wall, N_THREADS);
	return rc;
}

/* ---- a child per mode ------------------------------------------------------------------- */

/*
 * What a child measures, in one process with one MPXKIT_READ: each size's
 * PAPI_read; with `threads`, one thread then N_THREADS threads on 8 events;
 * with `replay`, a replayed trace (no system call at all: the cost of PAPI
 * and the engine alone).
 */
typedef struct child_result {
	int rc;
	cost size[N_SIZES];
	cost one, eight;
	cost replay;
} child_result;

static const char *const trace_cols[4] = {"a", "b", "c", "d"};

static void child_measure(const char *mode, int threads, const char *trace, child_result *r)
{
	memset(r, 0, sizeof *r);
	setenv("MPXKIT_READ", mode, 1);
	if (trace)
		setenv("MPXKIT_REPLAY", trace, 1);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_thread_init(thread_id) != PAPI_OK) {
		r->rc = -1;
		return;
	}
	if (trace) {
		r->rc = papi_set_reads(4, trace_cols, &r->replay);
	} else if (threads) {
		r->rc = papi_set_reads(MAX_EV, events, &r->one);
		r->rc |= threads_reads(&r->eight);
	} else {
		for (size_t i = 0; i < N_SIZES && r->rc == 0; i++)
			r->rc = papi_set_reads(sizes[i], events, &r->size[i]);
	}
	PAPI_shutdown();
}

static int run_child(const char *mode, int threads, const char *trace, child_result *r)
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
		child_measure(mode, threads, trace, r);
		_exit(write(fd[1], r, sizeof *r) == (ssize_t)sizeof *r ? 0 : 1);
	}
	close(fd[1]);
	got = read(fd[0], r, sizeof *r);
	close(fd[0]);
	if (waitpid(pid, &status, 0) < 0 || got != (ssize_t)sizeof *r || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return r->rc;
}

/* ---- fast against exact at the same instant (libmpxkit) --------------------------------- */

static void burn(double ns)
{
	double t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	volatile uint64_t sink = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < ns)
		for (int j = 0; j < 200; j++)
			sink += (uint64_t)j * 2654435761u;
}

/*
 * 8 events on 4 counters of this thread, 2 ms slices, as the component runs
 * them: ROUNDS times, an exact read, a fast read and an exact read again,
 * each stamped with the thread's CPU time, then 50 to 550 us of work.  The
 * exact read at the fast read's instant is interpolated between the two
 * exact reads on the CPU clock.  Reported per event: the median and the
 * largest |fast - interpolated| over the estimate, and the span of one exact
 * read (its n_cur + 1 system calls): events counted now move within it.
 */
#define ROUNDS 2000

static int accuracy(void)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	double *rel[MAX_EV], span[ROUNDS];
	double e1[MAX_EV], f[MAX_EV], e2[MAX_EV];
	int rc = mpxkit_source_open_perf(&src, NULL, &diag), n = 0;

	for (int e = 0; rc >= 0 && e < MAX_EV; e++)
		rc = mpxkit_source_add(src, events[e], &diag);
	mpxkit_sched_config_default(&cfg);
	cfg.counters = 4;
	cfg.slice_ns = 2000000;
	if (rc >= 0)
		rc = mpxkit_sched_new(&s, src, &cfg, &diag);
	if (rc >= 0)
		rc = mpxkit_sched_start(s);
	if (rc < 0) {
		fprintf(stderr, "bench_papi_read: %s\n", mpxkit_diag_message(&diag, rc));
		if (s == NULL)
			mpxkit_source_free(src);
		mpxkit_sched_free(s);
		return -1;
	}
	for (int e = 0; e < MAX_EV; e++)
		rel[e] = calloc(ROUNDS, sizeof *rel[e]);
	for (int r = 0; r < ROUNDS; r++) {
		double c1, c2, c3, c4, w;
		int k1, k2;
		burn(50000 + (double)(r * 2654435761u % 500000));
		c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		k1 = mpxkit_sched_read_as(s, MPXKIT_SCHED_READ_EXACT, e1, NULL);
		c2 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		mpxkit_sched_read_as(s, MPXKIT_SCHED_READ_FAST, f, NULL);
		c3 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		k2 = mpxkit_sched_read_as(s, MPXKIT_SCHED_READ_EXACT, e2, NULL);
		c4 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (k1 != k2)
			continue; /* a rotation ended between them: its estimates came in */
		/* Each read's instant: the middle of its call. */
		w = ((c2 + c3) / 2 - (c1 + c2) / 2) / ((c3 + c4) / 2 - (c1 + c2) / 2);
		for (int e = 0; e < MAX_EV; e++) {
			double want = e1[e] + (e2[e] - e1[e]) * w;
			rel[e][n] = want > 0 ? fabs(f[e] - want) / want : fabs(f[e] - want);
		}
		span[n++] = c2 - c1;
	}
	mpxkit_sched_free(s);
	printf("\n## A fast read against an exact read at the same instant (libmpxkit)\n\n");
	printf("8 events on 4 counters of this thread, 2 ms slices, `fixed`; %d of %d instants "
	       "(the others had a rotation end between the reads). An exact read takes %.0f ns of "
	       "CPU (median), its %s.\n\n",
	       n, ROUNDS, median(span, (size_t)n),
	       "one read(2) per counting event and one for the clock");
	printf("| event | median |fast - exact| / exact | largest |\n|---|---:|---:|\n");
	for (int e = 0; e < MAX_EV; e++) {
		double m, worst = 0;
		for (int i = 0; i < n; i++)
			worst = rel[e][i] > worst ? rel[e][i] : worst;
		m = median(rel[e], (size_t)n);
		printf("| %s | %.2g | %.2g |\n", events[e], m, worst);
		free(rel[e]);
	}
	return 0;
}

/* ---- no system call, without PAPI: what an rdpmc read costs but for the instructions -------- */

static cost sched_reads(mpxkit_sched *s)
{
	double est[MAX_EV], cpu, wall;

	mpxkit_sched_read(s, est, NULL); /* the first read of a slice anchors: not timed */
	start_clocks(&cpu, &wall);
	for (int i = 0; i < READS; i++)
		mpxkit_sched_read(s, est, NULL);
	return stop_clocks(cpu, wall, READS);
}

static mpxkit_sched *lib_sched(mpxkit_source *src, int rc, size_t C)
{
	mpxkit_sched_config cfg;
	mpxkit_sched *s = NULL;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	cfg.slice_ns = 1000000000; /* 1 s of this thread's CPU: no boundary during the reads */
	if (rc >= 0)
		rc = mpxkit_sched_new(&s, src, &cfg, NULL);
	if (rc >= 0 && mpxkit_sched_start(s) == 0)
		return s;
	if (s == NULL)
		mpxkit_source_free(src);
	mpxkit_sched_free(s);
	return NULL;
}

/*
 * libmpxkit's mpxkit_sched_read, fast, without PAPI: 8 events on 4
 * counters whose mmap pages and instructions are simulated (each read runs
 * the page protocol of 4 slots and carries the clock from one), and the
 * replayed trace of 4 events (no read at all).  The first, less the second,
 * plus PAPI's own part and the instructions, is an rdpmc PAPI_read.
 */
static int lib_reads(const char *trace, cost *rdpmc, cost *replay)
{
	static mpxkit__sim_counter pages[MAX_EV];
	mpxkit_source *src = NULL;
	mpxkit_trace *t = NULL;
	mpxkit_sched *s;
	int rc = mpxkit_source_open_perf(&src, NULL, NULL);

	for (int e = 0; rc >= 0 && e < MAX_EV; e++)
		rc = mpxkit_source_add(src, events[e], NULL);
	for (int e = 0; rc >= 0 && e < MAX_EV; e++) {
		/* The page protocol runs; rdpmc and rdtsc are calls that return at once. */
		mpxkit__sim_counter_init(&pages[e], (uint32_t)e + 1, 0, 0, 0);
		rc = mpxkit__perf_simulate(src, e, &pages[e].page, &pages[e].pmc);
	}
	s = lib_sched(src, rc, 4);
	if (s == NULL)
		return -1;
	*rdpmc = sched_reads(s);
	mpxkit_sched_free(s);
	src = NULL;
	rc = mpxkit_trace_read(trace, &t, NULL);
	if (rc >= 0)
		rc = mpxkit_source_open_replay(&src, t, 1000, NULL);
	for (int e = 0; rc >= 0 && e < 4; e++)
		rc = mpxkit_source_add(src, trace_cols[e], NULL);
	s = lib_sched(src, rc, 4);
	if (s == NULL) {
		mpxkit_trace_free(t);
		return -1;
	}
	*replay = sched_reads(s);
	mpxkit_sched_free(s);
	mpxkit_trace_free(t);
	return 0;
}

/* ---- the report ------------------------------------------------------------------------- */

static void machine(const char *when)
{
	double load[3] = {0};
	char line[256], model[256] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			char *colon = strchr(line, ':');
			snprintf(model, sizeof model, "%s", colon ? colon + 2 : line);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	getloadavg(load, 3);
	printf("# %s: %s, %ld CPUs online, load average %.2f %.2f %.2f\n", when, model,
	       sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
}

/* A small trace for the replay floor, in the trace format (doc/trace-format.md). */
static int write_trace(char *path, size_t len)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/bench_papi_read-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
		return -1;
	fprintf(f, "step,a,b,c,d\n");
	for (int s = 0; s < 40; s++)
		fprintf(f, "%d,%d,%d,%d,%d\n", s, 1000 + s, 20 + s % 3, 5000, s % 2);
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * BENCH_PAPI_READ_ONCE=1: one event, in this process, READS fast PAPI_read
 * of an mpxkit event set, then READS + 1 mpxkit_sched_read of the same
 * event without PAPI; no timing.  For bench/papi-read-callgrind.sh, which
 * counts the instructions of each call (the read(2) itself is the kernel's).
 */
static int once(void)
{
	mpxkit_source *src = NULL;
	mpxkit_sched *s;
	cost c;
	int rc;

	setenv("MPXKIT_READ", "fast", 1);
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_thread_init(thread_id) != PAPI_OK)
		return 2;
	rc = papi_set_reads(1, events, &c);
	PAPI_shutdown();
	if (rc < 0)
		return 2;
	rc = mpxkit_source_open_perf(&src, NULL, NULL);
	if (rc >= 0)
		rc = mpxkit_source_add(src, events[0], NULL);
	s = lib_sched(src, rc, 4);
	if (s == NULL)
		return 2;
	c = sched_reads(s);
	mpxkit_sched_free(s);
	printf("%d PAPI_read and %d mpxkit_sched_read of 1 event\n", READS, READS + 1);
	return 0;
}

int main(void)
{
	double raw_c[N_SIZES][REPS], raw_w[N_SIZES][REPS], fast_c[N_SIZES][REPS],
	    fast_w[N_SIZES][REPS], ex_c[N_SIZES][REPS], ex_w[N_SIZES][REPS];
	double one_c[REPS], eight_c[REPS], one_w[REPS], eight_w[REPS], rep_c[REPS], rep_w[REPS];
	double sim_c[REPS], sim_w[REPS], lrep_c[REPS], lrep_w[REPS];
	const char *c = getenv("MPXKIT_COUNTERS");
	char trace[64];
	int C = c ? atoi(c) : 4;

	if (getenv("BENCH_PAPI_READ_ONCE"))
		return once();
	if (C <= 0 || C > 64 || getenv("MPXKIT_READ") || getenv("MPXKIT_REPLAY")) {
		fprintf(stderr, "bench_papi_read: leave MPXKIT_READ and MPXKIT_REPLAY unset; "
				"MPXKIT_COUNTERS 1 to 64\n");
		return 1;
	}
	if (write_trace(trace, sizeof trace) < 0) {
		fprintf(stderr, "bench_papi_read: cannot write a trace in /tmp\n");
		return 2;
	}
	machine("before");
	printf("# %d reads per run, median of %d runs, methods alternating; MPXKIT_COUNTERS=%d, "
	       "fixed, 10 ms slices\n",
	       READS, REPS, C);
	for (int r = 0; r < REPS; r++) {
		child_result fast, exact, fast_t, rep;
		cost sim_rd, lib_rep;
		for (size_t i = 0; i < N_SIZES; i++) {
			cost raw;
			if (raw_reads(sizes[i], &raw) < 0) {
				fprintf(stderr, "bench_papi_read: cannot count %d events here\n",
					sizes[i]);
				return 2;
			}
			raw_c[i][r] = raw.cpu, raw_w[i][r] = raw.wall;
		}
		if (run_child("fast", 0, NULL, &fast) < 0 ||
		    run_child("exact", 0, NULL, &exact) < 0 ||
		    run_child("fast", 1, NULL, &fast_t) < 0 ||
		    run_child("fast", 0, trace, &rep) < 0) {
			fprintf(stderr, "bench_papi_read: a PAPI run failed\n");
			unlink(trace);
			return 2;
		}
		if (lib_reads(trace, &sim_rd, &lib_rep) < 0) {
			fprintf(stderr, "bench_papi_read: a libmpxkit run failed\n");
			unlink(trace);
			return 2;
		}
		sim_c[r] = sim_rd.cpu, sim_w[r] = sim_rd.wall;
		lrep_c[r] = lib_rep.cpu, lrep_w[r] = lib_rep.wall;
		for (size_t i = 0; i < N_SIZES; i++) {
			fast_c[i][r] = fast.size[i].cpu, fast_w[i][r] = fast.size[i].wall;
			ex_c[i][r] = exact.size[i].cpu, ex_w[i][r] = exact.size[i].wall;
		}
		one_c[r] = fast_t.one.cpu, one_w[r] = fast_t.one.wall;
		eight_c[r] = fast_t.eight.cpu, eight_w[r] = fast_t.eight.wall;
		rep_c[r] = rep.replay.cpu, rep_w[r] = rep.replay.wall;
	}
	unlink(trace);

	printf("\n## PAPI_read, ns of the reading thread's CPU per read (wall ns in brackets)\n\n");
	printf("| events | groups | PAPI_read fast | PAPI_read exact | raw read() of each fd | "
	       "fast / raw | exact / raw |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < N_SIZES; i++) {
		double f = median(fast_c[i], REPS), e = median(ex_c[i], REPS),
		       w = median(raw_c[i], REPS);
		printf("| %d | %d | %.0f (%.0f) | %.0f (%.0f) | %.0f (%.0f) | %.2f | %.2f |\n",
		       sizes[i], (sizes[i] + C - 1) / C, f, median(fast_w[i], REPS), e,
		       median(ex_w[i], REPS), w, median(raw_w[i], REPS), f / w, e / w);
	}
	printf(
	    "\n## 8 events in %d groups, fast: one thread, then %d threads each on its own event "
	    "set\n\n",
	    (MAX_EV + C - 1) / C, N_THREADS);
	printf("| threads | CPU ns per read (median thread) | wall ns |\n|---:|---:|---:|\n");
	printf("| 1 | %.0f | %.0f |\n", median(one_c, REPS), median(one_w, REPS));
	printf("| %d | %.0f | %.0f |\n", N_THREADS, median(eight_c, REPS), median(eight_w, REPS));
	printf("\n## No system call\n\n");
	printf("| read | CPU ns per read | wall ns |\n|---|---:|---:|\n");
	printf("| PAPI_read, a replayed trace of 4 events: PAPI and the engine alone | %.0f | %.0f "
	       "|\n",
	       median(rep_c, REPS), median(rep_w, REPS));
	printf("| mpxkit_sched_read, the same trace: the engine alone | %.0f | %.0f |\n",
	       median(lrep_c, REPS), median(lrep_w, REPS));
	printf("| mpxkit_sched_read, 8 events on 4 simulated counters: the engine and 4 pages, "
	       "without rdpmc and rdtsc | %.0f | %.0f |\n",
	       median(sim_c, REPS), median(sim_w, REPS));
	if (accuracy() < 0)
		return 2;
	printf("\n");
	machine("after");
	return 0;
}

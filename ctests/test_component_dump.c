/* SPDX-License-Identifier: BSD-3-Clause */
/* MPXKIT_DUMP: eight threads counted through PAPI, their results read back from the .pcz. */
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
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <papi.h>

#include "mpxkit/papi.h"
#include "mpxkit/pcz.h"

#define N_THREADS 8
#define N_EVENTS  3
#define WORK_NS	  40000000ll /* each thread's own CPU time between start and stop */

static const char *const events[N_EVENTS] = {
    "mpxkit:::perf::TASK-CLOCK", "mpxkit:::perf::PAGE-FAULTS", "mpxkit:::perf::CPU-CLOCK"};

typedef struct worker {
	int rc;
	long tid;
	uint64_t before_ns, after_ns; /* CLOCK_REALTIME around PAPI_start .. PAPI_stop */
	long long values[N_EVENTS];   /* what PAPI_stop returned */
	double lo[N_EVENTS], hi[N_EVENTS]; /* and their intervals (mpxkit_papi_interval) */
	int status[N_EVENTS];
	long long task_clock;	      /* the thread's exact task-clock around start .. stop */
} worker;

static char dump_dir[256], dump_file[300];

/*
 * Every thread starts before any stops, and all stop together: the stops
 * stage into the writer at once, and no rotation thread has exited (leaving
 * its stack in glibc's cache, whose reuse helgrind reports as a race it
 * cannot see ordered) while another is being created.
 */
static pthread_barrier_t started, worked;

/*
 * What cutest_under_valgrind() skips: under valgrind (make check-helgrind) a
 * spinning thread can starve the rotation thread for most of its run (see
 * test_component.c), so a thread may complete no rotation and the rotation in
 * progress may be most of the run: the series' presence and its sum are
 * checked natively only.  The totals and every timestamp are checked
 * everywhere.
 */

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *thread_main(void *arg)
{
	worker *w = arg;
	int es = PAPI_NULL, fd, rc = PAPI_register_thread();

	w->tid = (long)syscall(SYS_gettid);
	if (rc == PAPI_OK)
		rc = PAPI_create_eventset(&es);
	for (int i = 0; rc == PAPI_OK && i < N_EVENTS; i++)
		rc = PAPI_add_named_event(es, events[i]);
	w->before_ns = realtime_ns();
	/* The exact count of the same run, to check the estimate against: a raw descriptor. */
	if ((fd = cutest_perf_open("TASK-CLOCK")) >= 0)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (rc == PAPI_OK)
		rc = PAPI_start(es);
	pthread_barrier_wait(&started);
	cutest_burn_cpu(WORK_NS);
	pthread_barrier_wait(&worked);
	/* Before PAPI_stop, whose read comes first: the first stop also starts the dump. */
	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (rc == PAPI_OK)
		rc = PAPI_stop(es, w->values);
	for (int i = 0; rc == PAPI_OK && i < N_EVENTS; i++)
		w->status[i] = mpxkit_papi_interval(es, i, &w->lo[i], &w->hi[i]);
	w->task_clock = cutest_perf_read(fd);
	if (fd >= 0)
		close(fd);
	w->after_ns = realtime_ns();
	if (rc == PAPI_OK)
		rc = PAPI_cleanup_eventset(es);
	if (rc == PAPI_OK)
		rc = PAPI_destroy_eventset(&es);
	if (rc == PAPI_OK)
		rc = PAPI_unregister_thread();
	w->rc = rc;
	return NULL;
}

static const worker *worker_named(const worker *w, const char *name)
{
	char want[32];

	for (int i = 0; i < N_THREADS; i++) {
		snprintf(want, sizeof want, "thread%ld", w[i].tid);
		if (strcmp(want, name) == 0)
			return &w[i];
	}
	return NULL;
}

/*
 * A stop.total triple (doc/pcz-format.md, "Intervals"): the value PAPI_stop
 * returned, and the interval mpxkit_papi_interval gave for it, lo rounded
 * down and hi up; not counted as (0, 2^64-1, 0).
 */
static void check_triple(const uint64_t *x, const worker *t, int e)
{
	if (t->status[e] == MPXKIT_PAPI_NOT_COUNTED) {
		CU_ASSERT(x[0] == 0 && x[1] == UINT64_MAX && x[2] == 0);
		return;
	}
	CU_ASSERT(t->status[e] == MPXKIT_PAPI_EXACT || t->status[e] == MPXKIT_PAPI_ESTIMATED ||
		  t->status[e] == MPXKIT_PAPI_OPEN);
	CU_ASSERT_EQUAL(x[0], (uint64_t)t->values[e]);
	CU_ASSERT(x[1] <= x[0] && x[0] <= x[2]);
	/* lo: floor, or the value where the estimate lies below its own interval */
	CU_ASSERT((double)x[1] <= t->lo[e] || x[1] == x[0]);
	CU_ASSERT((double)x[1] > t->lo[e] - 1 || x[1] == x[0]);
	if (isinf(t->hi[e])) {
		CU_ASSERT_EQUAL(x[2], UINT64_MAX);
	} else {
		CU_ASSERT((double)x[2] >= t->hi[e] || x[2] == x[0]);
		CU_ASSERT((double)x[2] < t->hi[e] + 1 || x[2] == x[0]);
	}
}

/* Region "stop.total": one unit per thread, holding exactly what PAPI_stop returned to it. */
static void check_totals(const mpxkit_pcz_region *reg, const worker *w, int *seen)
{
	long n_cpus = sysconf(_SC_NPROCESSORS_CONF);

	CU_ASSERT_EQUAL(reg->n_units, N_THREADS);
	for (size_t u = 0; u < reg->n_units; u++) {
		const mpxkit_pcz_unit *x = &reg->units[u];
		const worker *t = worker_named(w, x->name);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		seen[t - w]++;
		CU_ASSERT_EQUAL_FATAL(x->n_steps, 1);
		for (int e = 0; e < N_EVENTS; e++)
			check_triple(&x->values[3 * e], t, e);
		CU_ASSERT(t->before_ns <= x->times[0]);
		CU_ASSERT(x->times[0] <= x->times[1]);
		CU_ASSERT(x->times[1] <= t->after_ns);
		CU_ASSERT(x->cpu >= 0 && x->cpu < n_cpus);
		CU_ASSERT(x->numa >= 0);
	}
}

/*
 * Region "stop": each thread's per-rotation series.  Its task-clock steps sum
 * to the total less the rotation in progress at PAPI_stop's read, plus the
 * rotations that ended between that read and the stop (doc/component.md).
 * None can end there (a rotation needs the thread's own time, and the thread
 * is in PAPI_stop), so the sum is at most the total, plus the rounding of
 * each step.  How much of the total the rotation in progress holds depends
 * on when the rotation thread ran, which load decides, so it is only
 * printed; the total itself is checked against the thread's exact
 * task-clock of the same run (test_dump).
 */
static void check_series(const mpxkit_pcz_region *reg, const worker *w, int *seen)
{
	for (size_t u = 0; u < reg->n_units; u++) {
		const mpxkit_pcz_unit *x = &reg->units[u];
		const worker *t = worker_named(w, x->name);
		uint64_t sum = 0, max = 0;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		seen[t - w]++;
		CU_ASSERT(x->n_steps >= 1);
		for (size_t k = 0; k < x->n_steps; k++) {
			const uint64_t *tc = &x->values[k * 3 * N_EVENTS]; /* task-clock's triple */
			uint64_t v = tc[0];
			CU_ASSERT(tc[1] <= tc[0] && tc[0] <= tc[2]);
			sum += v;
			max = v > max ? v : max;
			CU_ASSERT(x->times[2 * k] <= x->times[2 * k + 1]);
			CU_ASSERT(k == 0 || x->times[2 * k] == x->times[2 * k - 1]);
			CU_ASSERT(t->before_ns <= x->times[2 * k]);
			CU_ASSERT(x->times[2 * k + 1] <= t->after_ns);
		}
		printf("\n  %s: %zu rotations, series task-clock %llu ns, total %lld ns", x->name,
		       x->n_steps, (unsigned long long)sum, t->values[0]);
		if (max > 0)
			printf(" (in progress at the read: %.1f rotations)",
			       ((double)t->values[0] - (double)sum) / (double)max);
		CU_ASSERT((double)sum <= (double)t->values[0] + 0.5 * (double)x->n_steps + 1.0);
	}
}

static void test_dump(void)
{
	pthread_t th[N_THREADS];
	worker w[N_THREADS];
	int seen_total[N_THREADS] = {0}, seen_series[N_THREADS] = {0}, n_total = 0, n_series = 0;
	mpxkit_pcz_reader *r = NULL;
	const mpxkit_pcz_region *reg;
	mpxkit_diag diag = {0};
	int rc;

	memset(w, 0, sizeof w);
	pthread_barrier_init(&started, NULL, N_THREADS);
	pthread_barrier_init(&worked, NULL, N_THREADS);
	for (int i = 0; i < N_THREADS; i++)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, thread_main, &w[i]), 0);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&started);
	pthread_barrier_destroy(&worked);
	for (int i = 0; i < N_THREADS; i++) {
		CU_ASSERT_EQUAL(w[i].rc, PAPI_OK);
		/*
		 * task-clock by fixed on 2 groups of 2 ms slices against the exact
		 * count of the same run (from before PAPI_start to just before
		 * PAPI_stop): the clock runs at an even rate, so only the slices'
		 * edges err, 3 % of 40 ms of CPU, and 1 ms for the windows' ends.
		 */
		printf("\n  thread %ld: task-clock %lld, exact %lld", w[i].tid, w[i].values[0],
		       w[i].task_clock);
		CU_ASSERT(w[i].task_clock > 0);
		if (!cutest_under_valgrind())
			CU_ASSERT(fabs((double)(w[i].values[0] - w[i].task_clock)) <=
				  0.03 * (double)w[i].task_clock + 1e6);
	}
	CU_ASSERT_EQUAL(access(dump_file, F_OK), -1); /* written at shutdown, not before */
	PAPI_shutdown();

	rc = mpxkit_pcz_reader_open(dump_file, &r, &diag);
	if (rc < 0)
		fprintf(stderr, "%s\n", mpxkit_diag_message(&diag, rc));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	/* Each event as a triple: the estimate, its lower and its upper bound. */
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_n_events(r), 3 * N_EVENTS);
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_intervals(r), 1);
	for (size_t e = 0; e < 3 * N_EVENTS && e < mpxkit_pcz_reader_n_events(r); e++) {
		char want[64];
		snprintf(want, sizeof want, "%s%s", events[e / 3],
			 e % 3 == 0 ? "" : e % 3 == 1 ? ".lo" : ".hi");
		CU_ASSERT_STRING_EQUAL(mpxkit_pcz_reader_event(r, e), want);
	}
	CU_ASSERT_EQUAL(mpxkit_pcz_reader_placement(r), 1);
	while ((rc = mpxkit_pcz_reader_next(r, &reg, &diag)) == 1) {
		if (strcmp(reg->name, "stop.total") == 0) {
			n_total++;
			check_totals(reg, w, seen_total);
		} else if (strcmp(reg->name, "stop") == 0) {
			n_series++;
			check_series(reg, w, seen_series);
		} else {
			CU_FAIL("a region neither stop nor stop.total");
		}
	}
	printf("\n  ");
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_EQUAL(n_total, 1);
	CU_ASSERT(n_series <= 1);
	for (int i = 0; i < N_THREADS; i++) {
		CU_ASSERT_EQUAL(seen_total[i], 1);
		/* 40 ms of CPU is about 10 rotations of 2 x 2 ms: natively, a series each. */
		if (cutest_under_valgrind()) {
			CU_ASSERT(seen_series[i] <= 1);
		} else {
			CU_ASSERT_EQUAL(seen_series[i], 1);
		}
	}
	mpxkit_pcz_reader_free(r);
	unlink(dump_file);
}

/* A dump that could not be written at shutdown disables the component at init instead. */
static void test_unwritable(void)
{
	char path[320];
	const PAPI_component_info_t *info;

	snprintf(path, sizeof path, "%s/no-such-dir/x.pcz", dump_dir);
	setenv("MPXKIT_DUMP", path, 1);
	CU_ASSERT_EQUAL_FATAL(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(info);
	CU_ASSERT(info->disabled != 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(info->disabled_reason, "MPXKIT_DUMP="));
	printf("\n  disabled_reason: %s\n  ", info->disabled_reason);
	PAPI_shutdown();
	unsetenv("MPXKIT_DUMP");
}

/* Reads up to cap-1 bytes of path into buf; "" when it cannot. */
static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/*
 * A directory that goes away after init: the run goes on, PAPI_stop still
 * succeeds, no file appears, and PAPI_shutdown prints one line on stderr.
 */
static void test_lost_directory(void)
{
	char sub[300], path[320], errpath[320], err[1024];
	long long v[N_EVENTS];
	int es = PAPI_NULL, saved, fd, lines = 0;

	snprintf(sub, sizeof sub, "%s/gone", dump_dir);
	snprintf(path, sizeof path, "%s/x.pcz", sub);
	snprintf(errpath, sizeof errpath, "%s/stderr.txt", dump_dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
	setenv("MPXKIT_DUMP", path, 1);
	CU_ASSERT_EQUAL_FATAL(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
	CU_ASSERT_EQUAL(PAPI_get_component_info(PAPI_get_component_index("mpxkit"))->disabled, 0);
	CU_ASSERT_EQUAL(rmdir(sub), 0);
	CU_ASSERT_EQUAL(PAPI_create_eventset(&es), PAPI_OK);
	for (int i = 0; i < N_EVENTS; i++)
		CU_ASSERT_EQUAL(PAPI_add_named_event(es, events[i]), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_start(es), PAPI_OK);
	cutest_burn_cpu(WORK_NS / 4);
	CU_ASSERT_EQUAL(PAPI_stop(es, v), PAPI_OK);
	CU_ASSERT(v[0] > 0);
	CU_ASSERT_EQUAL(PAPI_cleanup_eventset(es), PAPI_OK);
	CU_ASSERT_EQUAL(PAPI_destroy_eventset(&es), PAPI_OK);
	fflush(stderr);
	saved = dup(2);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	PAPI_shutdown();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	slurp(errpath, err, sizeof err);
	unlink(errpath);
	printf("\n  stderr: %s  ", err);
	for (const char *c = err; *c; c++)
		lines += *c == '\n';
	CU_ASSERT_EQUAL(lines, 1);
	CU_ASSERT_EQUAL(strncmp(err, "mpxkit: MPXKIT_DUMP=", 20), 0);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
	unsetenv("MPXKIT_DUMP");
}

/* The names in dir, one per line after a blank, for a message; "" when it is empty. */
static size_t list_dir(const char *dir, char *names, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0, used = 0;

	names[0] = '\0';
	while (d && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		n++;
		used +=
		    (size_t)snprintf(names + used, used < cap ? cap - used : 0, " %s", de->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * A child that counts and stops, then ends without PAPI_shutdown: through
 * exit(), it still writes the dump (3 events, one stop.total unit); through
 * _exit() it writes nothing.  Either way nothing else is left in the
 * directory: no temporary file.
 */
static void child_without_shutdown(int use_exit)
{
	char sub[300], path[320], names[512];
	mpxkit_pcz_reader *r = NULL;
	const mpxkit_pcz_region *reg;
	int status = -1;
	pid_t pid;

	snprintf(sub, sizeof sub, "%s/%s", dump_dir, use_exit ? "exit" : "_exit");
	snprintf(path, sizeof path, "%s/x.pcz", sub);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		long long v[N_EVENTS];
		int es = PAPI_NULL, ok = 1;

		setenv("MPXKIT_DUMP", path, 1);
		ok &= PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT;
		ok &= PAPI_create_eventset(&es) == PAPI_OK;
		for (int i = 0; ok && i < N_EVENTS; i++)
			ok &= PAPI_add_named_event(es, events[i]) == PAPI_OK;
		ok = ok && PAPI_start(es) == PAPI_OK;
		cutest_burn_cpu(WORK_NS / 4);
		ok = ok && PAPI_stop(es, v) == PAPI_OK;
		if (use_exit)
			exit(ok ? 0 : 3);
		_exit(ok ? 0 : 3);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (use_exit) {
		CU_ASSERT_EQUAL(list_dir(sub, names, sizeof names), 1);
		CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_reader_open(path, &r, NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_pcz_reader_n_events(r), 3 * N_EVENTS);
		CU_ASSERT_EQUAL(mpxkit_pcz_reader_next(r, &reg, NULL), 1);
		CU_ASSERT_STRING_EQUAL(reg->name, "stop.total");
		CU_ASSERT_EQUAL(reg->n_units, 1);
		mpxkit_pcz_reader_free(r);
		unlink(path);
	} else {
		CU_ASSERT_EQUAL(list_dir(sub, names, sizeof names), 0);
	}
	printf("\n  %s: left%s%s  ", use_exit ? "exit()" : "_exit()", names[0] ? "" : " nothing",
	       names);
	CU_ASSERT_EQUAL(rmdir(sub), 0);
}

static void test_no_shutdown_exit(void)
{
	child_without_shutdown(1);
}

static void test_no_shutdown_underscore_exit(void)
{
	child_without_shutdown(0);
}

static const cutest_case dump_cases[] = {
    {"8 threads dump at shutdown, read back", test_dump},
    {"directory lost after init: one stderr line", test_lost_directory},
    {"no PAPI_shutdown, exit(): the dump, nothing else", test_no_shutdown_exit},
    {"no PAPI_shutdown, _exit(): nothing left", test_no_shutdown_underscore_exit},
    /* Last: PAPI never calls init_component again for a component once disabled. */
    {"unwritable directory disables", test_unwritable},
    {NULL, NULL},
};

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

int main(void)
{
	const cutest_suite suites[] = {{"mpxkit component, MPXKIT_DUMP", dump_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	const PAPI_component_info_t *info;
	const char *tmp = getenv("TMPDIR");
	int rc;

	snprintf(dump_dir, sizeof dump_dir, "%s/mpxkit-dump-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dump_dir) == NULL) {
		perror("test_component_dump: mkdtemp");
		return 1;
	}
	snprintf(dump_file, sizeof dump_file, "%s/threads.pcz", dump_dir);
	setenv("MPXKIT_DUMP", dump_file, 1);
	setenv("MPXKIT_COUNTERS", "2", 1); /* 3 events: two groups, multiplexed */
	setenv("MPXKIT_MULTIPLEX", "all", 1); /* software events, multiplexed on purpose */
	setenv("MPXKIT_SLICE_US", "2000", 1);
	unsetenv("MPXKIT_REPLAY");
	unsetenv("MPXKIT_REFERENCE");
	unsetenv("MPXKIT_ESTIMATOR"); /* fixed: no look-ahead (the series check assumes it) */
	rc = PAPI_library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT || PAPI_thread_init(thread_id) != PAPI_OK) {
		fprintf(stderr, "test_component_dump: PAPI init: %s\n", PAPI_strerror(rc));
		rmdir(dump_dir);
		return 1;
	}
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	if (info == NULL || info->disabled) {
		printf("SKIP: mpxkit is disabled here: %s\n", info ? info->disabled_reason : "?");
		PAPI_shutdown();
		rmdir(dump_dir);
		return CUTEST_SKIP;
	}
	rc = cutest_run("test_component_dump", suites); /* the first case shuts PAPI down */
	unlink(dump_file);
	rmdir(dump_dir);
	return rc;
}

#endif

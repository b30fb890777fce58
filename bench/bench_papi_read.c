/* SPDX-License-Identifier: BSD-3-Clause */
/* Cost of PAPI_read on mpxkit event sets against a raw read() of the same perf_event fds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <papi.h>

#define READS 100000
#define REPS  5

static const char *const events[] = {
    "perf::TASK-CLOCK",	    "perf::PAGE-FAULTS",      "perf::CPU-CLOCK",
    "perf::MINOR-FAULTS",   "perf::MAJOR-FAULTS",     "perf::CONTEXT-SWITCHES",
    "perf::CPU-MIGRATIONS", "perf::ALIGNMENT-FAULTS",
};
static const uint64_t configs[] = {
    PERF_COUNT_SW_TASK_CLOCK,	   PERF_COUNT_SW_PAGE_FAULTS,	   PERF_COUNT_SW_CPU_CLOCK,
    PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ,  PERF_COUNT_SW_CONTEXT_SWITCHES,
    PERF_COUNT_SW_CPU_MIGRATIONS,  PERF_COUNT_SW_ALIGNMENT_FAULTS,
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, REPS, sizeof *v, cmp_double);
	return v[REPS / 2];
}

/* ns per PAPI_read of an mpxkit event set holding the first n events, median of REPS runs. */
static double papi_read_ns(int n)
{
	long long values[8];
	double t[REPS];
	char name[64];
	int es = PAPI_NULL;

	if (PAPI_create_eventset(&es) != PAPI_OK)
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "mpxkit:::%s", events[i]);
		if (PAPI_add_named_event(es, name) != PAPI_OK)
			return -1;
	}
	if (PAPI_start(es) != PAPI_OK)
		return -1;
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < READS; i++)
			PAPI_read(es, values);
		t[r] = (now_ns() - t0) / READS;
	}
	PAPI_stop(es, values);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	return median(t);
}

/* ns per read() of n perf_event fds opened as the component opens them (with times). */
static double raw_read_ns(int n)
{
	struct perf_event_attr attr;
	uint64_t buf[3];
	double t[REPS];
	int fd[8];

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
	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();
		for (int i = 0; i < READS; i++)
			for (int e = 0; e < n; e++)
				if (read(fd[e], buf, sizeof buf) != (ssize_t)sizeof buf)
					return -1;
		t[r] = (now_ns() - t0) / READS;
	}
	for (int i = 0; i < n; i++)
		close(fd[i]);
	return median(t);
}

int main(void)
{
	static const int sizes[] = {1, 4, 8};
	const char *c = getenv("MPXKIT_COUNTERS"), *est = getenv("MPXKIT_ESTIMATOR");

	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
		fprintf(stderr, "bench_papi_read: PAPI_library_init failed\n");
		return 2;
	}
	printf("# PAPI_read of mpxkit event sets vs read() of the same perf_event fds\n");
	printf("# %d reads per run, median of %d runs; MPXKIT_COUNTERS=%s MPXKIT_ESTIMATOR=%s\n",
	       READS, REPS, c ? c : "(4)", est ? est : "(fixed)");
	printf("| events | groups | PAPI_read ns | raw read() ns | overhead ns |\n");
	printf("|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		int n = sizes[i], cn = c ? atoi(c) : 4;
		double p = papi_read_ns(n), r = raw_read_ns(n);
		if (p < 0 || r < 0) {
			fprintf(stderr, "bench_papi_read: cannot count %d events here\n", n);
			return 2;
		}
		printf("| %d | %d | %.0f | %.0f | %.0f |\n", n, (n + cn - 1) / cn, p, r, p - r);
	}
	PAPI_shutdown();
	return 0;
}

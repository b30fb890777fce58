/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's whole-run pass at the stop (bigru): its time and memory against the run's length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

/* 13 events on 4 counters, as the corpus at C = 4 (doc/benchmarks.md). */
#define N_EVENTS 13
#define C	 4
#define G	 4

/* A field of /proc/self/status in kB ("VmHWM", "VmRSS"); -1 when it cannot be read. */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	size_t len = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, field, len) == 0 && line[len] == ':')
			kb = strtol(line + len + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* Starts the peak RSS (VmHWM) over from the RSS now (proc(5), /proc/pid/clear_refs). */
static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

/* Bursty counts with zeros, levels changing every 40 steps; xorshift, the same every run. */
static mpxkit_trace *make_trace(size_t steps)
{
	char names[N_EVENTS][8];
	const char *ptrs[N_EVENTS];
	uint64_t row[N_EVENTS], x = 88172645463325252ull;
	mpxkit_trace *t = NULL;

	for (size_t e = 0; e < N_EVENTS; e++) {
		snprintf(names[e], sizeof names[e], "ev%zu", e);
		ptrs[e] = names[e];
	}
	if (mpxkit_trace_new(&t, NULL, N_EVENTS, ptrs, NULL) < 0)
		return NULL;
	for (size_t s = 0; s < steps; s++) {
		for (size_t e = 0; e < N_EVENTS; e++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			row[e] = x % 7 == 0 ? 0 : (x >> 20) % 100000 * (1 + (s / 40 + e) % 4);
		}
		if (mpxkit_trace_append(t, s, row) < 0) {
			mpxkit_trace_free(t);
			return NULL;
		}
	}
	return t;
}

/*
 * One replay of R rotations with bigru: the seconds until the trace is
 * served (a read), the seconds of the stop (the pass, when whole_max allows
 * it), and the peak RSS the stop added, in kB.
 */
static int measure(const mpxkit_trace *t, size_t whole_max, double *serve, double *stop,
		   long *peak_kb)
{
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	double est[N_EVENTS], t0;
	long rss;
	int rc;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = C;
	cfg.whole_max = whole_max;
	strcpy(cfg.estimator, "bigru");
	rc = mpxkit_source_open_replay(&src, t, 1000, &diag);
	for (size_t e = 0; rc >= 0 && e < N_EVENTS; e++)
		rc = mpxkit_source_add(src, t->events[e], &diag);
	if (rc >= 0)
		rc = mpxkit_sched_new(&s, src, &cfg, &diag);
	if (rc < 0) {
		fprintf(stderr, "bench_whole: %s\n", mpxkit_diag_message(&diag, rc));
		mpxkit_source_free(src);
		return rc;
	}
	t0 = now();
	rc = mpxkit_sched_start(s);
	if (rc == 0)
		rc = mpxkit_sched_read(s, est, NULL);
	*serve = now() - t0;
	rss = status_kb("VmRSS");
	reset_peak();
	t0 = now();
	if (rc >= 0)
		rc = mpxkit_sched_stop(s);
	*stop = now() - t0;
	*peak_kb = status_kb("VmHWM") - rss;
	mpxkit_sched_free(s);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	static const size_t rotations[] = {1000, 4096, 16384, 65536};

	(void)argv;
	if (argc != 1) {
		fprintf(stderr,
			"usage: bench_whole (MPXKIT_DATADIR names the models' directory)\n");
		return 1;
	}
	printf("| rotations | served, windowed (s) | stop, windowed (s) | stop with the pass (s) | "
	       "rotations/s of the pass | peak RSS added by the stop (MB) |\n");
	printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < sizeof rotations / sizeof rotations[0]; i++) {
		size_t R = rotations[i];
		mpxkit_trace *t = make_trace(R * G);
		double serve0, stop0, serve1, stop1;
		long peak0, peak1;

		if (t == NULL || measure(t, 0, &serve0, &stop0, &peak0) < 0 ||
		    measure(t, R, &serve1, &stop1, &peak1) < 0) {
			mpxkit_trace_free(t);
			return 2;
		}
		printf("| %zu | %.3f | %.4f | %.3f | %.0f | %.1f |\n", R, serve0, stop0, stop1,
		       (double)R / (stop1 - stop0), (double)peak1 / 1024.0);
		mpxkit_trace_free(t);
	}
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Schedules: decisions per second online (next + observe), and what one change of the counted
 * set costs on real counters (the ioctls), against a 10 ms slice; prints markdown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mpxkit/schedule.h"
#include "mpxkit/source.h"

#define SLICES	5000000
#define REPEATS 5
#define SWITCHES 20000

static const char *const names13[] = {"Ir",   "Dr",   "Dw",   "I1mr", "D1mr", "D1mw", "ILmr",
				      "DLmr", "DLmw", "Bc",   "Bcm",  "Bi",	  "Bim"};

/* This thread's CPU time in seconds: the machine is shared, so wall time would count others. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Slices decided per second of CPU: next() for slice s + 1, then observe()
 * of slice s with made-up counts, in the order the engine calls them.
 */
static double decisions(const char *spec, size_t n_events, size_t counters)
{
	const char **names = malloc(n_events * sizeof *names);
	char (*buf)[32] = malloc(n_events * sizeof *buf);
	mpxkit_schedule *sch = NULL;
	size_t cur[64], nxt[64], n_cur, n_nxt;
	uint64_t vals[64], rng = 88172645463325252ull;
	double best = 1e30;

	for (size_t e = 0; e < n_events; e++) {
		if (e < 13) {
			names[e] = names13[e];
		} else {
			snprintf(buf[e], sizeof buf[e], "ev%zu%s", e, e % 2 ? "mr" : "");
			names[e] = buf[e];
		}
	}
	mpxkit_schedule_setup setup = {n_events, names, counters, NULL, NULL, NULL};
	if (mpxkit_schedule_new(&sch, spec, &setup, NULL) != 0)
		return -1;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = cpu_now();
		mpxkit_schedule_reset(sch);
		n_cur = mpxkit_schedule_next(sch, cur);
		for (size_t s = 0; s < SLICES; s++) {
			n_nxt = mpxkit_schedule_next(sch, nxt);
			for (size_t i = 0; i < n_cur; i++)
				vals[i] = next_random(&rng) % 100000;
			mpxkit_schedule_observe(sch, cur, n_cur, vals, 1.0);
			memcpy(cur, nxt, n_nxt * sizeof *cur);
			n_cur = n_nxt;
		}
		t0 = cpu_now() - t0;
		best = t0 < best ? t0 : best;
	}
	mpxkit_schedule_free(sch);
	free(names);
	free(buf);
	return (double)SLICES / best;
}

static const char *const sw[] = {"perf::TASK-CLOCK",	   "perf::CPU-CLOCK",
				 "perf::PAGE-FAULTS",	   "perf::MINOR-FAULTS",
				 "perf::MAJOR-FAULTS",	   "perf::CONTEXT-SWITCHES",
				 "perf::CPU-MIGRATIONS",   "perf::ALIGNMENT-FAULTS"};
#define N_SW (sizeof sw / sizeof sw[0])

/*
 * One change of the counted set as the engine makes it: disable the C
 * events that leave, enable the C that come (with the kick after
 * TASK-CLOCK's and CPU-CLOCK's enable, lib/source/perf.c), then read the
 * group (the clock and the new set at one instant); then the read of the
 * slice that closed, which the engine makes between the disables and the
 * enables: the C slots, one read(2) each.  Best of REPEATS, per change.
 */
static int switch_cost(size_t C, double *change_us, double *read_us)
{
	mpxkit_source *src = NULL;
	mpxkit_source_count counts[N_SW];
	uint64_t clk;
	int rc = mpxkit_source_open_perf(&src, NULL, NULL);

	for (size_t e = 0; rc >= 0 && e < N_SW; e++)
		rc = mpxkit_source_add(src, sw[e], NULL);
	if (rc < 0) {
		mpxkit_source_free(src);
		return -1;
	}
	*change_us = *read_us = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = cpu_now(), t1;
		for (size_t i = 0; i < SWITCHES; i++) {
			size_t from = (i % 2) * C, to = ((i + 1) % 2) * C;
			for (size_t e = from; e < from + C; e++)
				mpxkit_source_disable(src, (int)e);
			for (size_t e = to; e < to + C; e++)
				mpxkit_source_enable(src, (int)e);
			mpxkit_source_clock(src, &clk);
		}
		t1 = cpu_now();
		for (size_t i = 0; i < SWITCHES; i++) {
			size_t closed[N_SW];
			for (size_t e = 0; e < C; e++)
				closed[e] = (i % 2) * C + e;
			mpxkit_source_read_slots(src, closed, C, counts);
		}
		double c = (t1 - t0) / SWITCHES * 1e6, rd = (cpu_now() - t1) / SWITCHES * 1e6;
		*change_us = c < *change_us ? c : *change_us;
		*read_us = rd < *read_us ? rd : *read_us;
	}
	mpxkit_source_free(src);
	return 0;
}

int main(void)
{
	static const char *const specs[] = {"round-robin", "prior", "adaptive"};
	static const size_t events[] = {13, 64};
	double change, rd, dec = 0;

	printf("| schedule | events | C | slices decided per second of CPU |\n");
	printf("| --- | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < 3; i++)
		for (size_t n = 0; n < 2; n++) {
			double d = decisions(specs[i], events[n], 4);
			printf("| %s | %zu | 4 | %.2f M |\n", specs[i], events[n], d / 1e6);
			if (i == 2 && n == 0)
				dec = d;
		}
	if (switch_cost(4, &change, &rd) < 0) {
		printf("\nperf_event_open refused: no switch cost measured\n");
		return 0;
	}
	printf("\n| at a slice boundary (%zu software events, C = 4) | us of CPU |\n", N_SW);
	printf("| --- | ---: |\n");
	printf("| one change of the counted set: 4 disables, the clock, 4 enables | %.2f |\n",
	       change);
	printf("| the read of the closed slice's 4 slots that follows | %.2f |\n", rd);
	printf("| the schedule's decision (adaptive, 13 events) | %.3f |\n", 1e6 / dec);
	printf("| boundary, all of it | %.2f |\n", change + rd + 1e6 / dec);
	printf("| share of a 10 ms slice | %.3f %% |\n", (change + rd + 1e6 / dec) / 10000.0 * 100);
	return 0;
}

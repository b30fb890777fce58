/* SPDX-License-Identifier: BSD-3-Clause */
/* Estimator throughput (rotations/s, offline and online) and DTW time at 10k x 10k; prints
 * markdown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "mpxkit/estimator.h"
#include "mpxkit/metric.h"

#define N_EVENTS    13
#define N_GROUPS    4
#define N_ROTATIONS 200000
#define REPEATS	    5
#define DTW_LEN	    10000

static double sink; /* keeps the compiler from dropping the work */

static double best_offline(const mpxkit_estimator *est, const uint64_t *obs, const uint64_t *ref,
			   double *out)
{
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		if (mpxkit_estimator_run(est, N_ROTATIONS, obs, ref, out) != 0)
			return -1;
		t0 = now() - t0;
		sink += out[N_ROTATIONS / 2];
		best = t0 < best ? t0 : best;
	}
	return best;
}

static double best_online(mpxkit_estimator *est, const uint64_t *obs, const uint64_t *ref,
			  double *out)
{
	double best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		mpxkit_estimator_reset(est);
		for (size_t k = 0; k < N_ROTATIONS; k++) {
			mpxkit_rotation rot = {obs + k * N_EVENTS, ref + k * N_GROUPS, NULL, NULL};
			if (mpxkit_estimator_push(est, &rot, out) < 0)
				return -1;
		}
		while (mpxkit_estimator_flush(est, out) == 1)
			;
		t0 = now() - t0;
		sink += out[0];
		best = t0 < best ? t0 : best;
	}
	return best;
}

static int bench_estimators(void)
{
	size_t slice[N_EVENTS];
	mpxkit_layout layout = {N_EVENTS, N_GROUPS, slice, 1, 0};
	uint64_t *obs = malloc((size_t)N_ROTATIONS * N_EVENTS * sizeof *obs);
	uint64_t *ref = malloc((size_t)N_ROTATIONS * N_GROUPS * sizeof *ref);
	double *out = malloc((size_t)N_ROTATIONS * N_EVENTS * sizeof *out);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	if (obs == NULL || ref == NULL || out == NULL)
		return -1;
	for (size_t e = 0; e < N_EVENTS; e++)
		slice[e] = e * N_GROUPS / N_EVENTS;
	/* Counts spread over six decades, a tenth of them zero, as sparse events are. */
	for (size_t i = 0; i < (size_t)N_ROTATIONS * N_EVENTS; i++) {
		uint64_t r = next_random(&seed);
		obs[i] = r % 10 == 0 ? 0 : (r >> 8) % 1000000;
	}
	for (size_t i = 0; i < (size_t)N_ROTATIONS * N_GROUPS; i++)
		ref[i] = 1 + (next_random(&seed) >> 8) % 1000000;

	printf("| estimator | offline rotations/s | offline event-estimates/s | "
	       "online rotations/s |\n| --- | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		const char *name = mpxkit_estimator_info_at(i)->name;
		mpxkit_estimator *est = NULL;
		double off, on;
		if (mpxkit_estimator_new(&est, name, &layout, NULL, NULL) != 0)
			return -1;
		off = best_offline(est, obs, ref, out);
		on = best_online(est, obs, ref, out);
		mpxkit_estimator_free(est);
		if (off <= 0 || on <= 0)
			return -1;
		printf("| %s | %.3g | %.3g | %.3g |\n", name, N_ROTATIONS / off,
		       N_ROTATIONS * (double)N_EVENTS / off, N_ROTATIONS / on);
	}
	free(obs);
	free(ref);
	free(out);
	return 0;
}

static int bench_dtw(void)
{
	double *a = malloc(DTW_LEN * sizeof *a), *b = malloc(DTW_LEN * sizeof *b);
	const size_t bands[] = {MPXKIT_DTW_NO_BAND, 1000, 100};
	uint64_t seed = 42;

	if (a == NULL || b == NULL)
		return -1;
	for (size_t i = 0; i < DTW_LEN; i++) {
		a[i] = (double)((next_random(&seed) >> 8) % 10000000);
		b[i] = (double)((next_random(&seed) >> 8) % 10000000);
	}
	printf("\n| DTW %d x %d, log10(1+x) | best of 3 | cells/s |\n| --- | ---: | ---: |\n",
	       DTW_LEN, DTW_LEN);
	for (size_t i = 0; i < sizeof bands / sizeof bands[0]; i++) {
		mpxkit_dtw_options opts = {bands[i], 1};
		double best = 1e30, cost = 0, cells;
		for (int r = 0; r < 3; r++) {
			double t0 = now();
			if (mpxkit_dtw(a, DTW_LEN, b, DTW_LEN, &opts, &cost) != 0)
				return -1;
			t0 = now() - t0;
			sink += cost;
			best = t0 < best ? t0 : best;
		}
		cells = bands[i] == MPXKIT_DTW_NO_BAND
			    ? (double)DTW_LEN * DTW_LEN
			    : (double)DTW_LEN * (2.0 * (double)bands[i] + 1);
		if (bands[i] == MPXKIT_DTW_NO_BAND)
			printf("| full matrix | %.3f s | %.3g |\n", best, cells / best);
		else
			printf("| band %zu | %.3f s | %.3g |\n", bands[i], best, cells / best);
	}
	free(a);
	free(b);
	return 0;
}

int main(void)
{
	printf("%d rotations of %d events, G = %d, with a reference; best of %d runs.\n\n",
	       N_ROTATIONS, N_EVENTS, N_GROUPS, REPEATS);
	if (bench_estimators() != 0 || bench_dtw() != 0) {
		fprintf(stderr, "bench_estimators: failed\n");
		return 1;
	}
	return sink == 12345.678 ? 2 : 0;
}

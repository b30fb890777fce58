/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the estimators do on short runs (doc/estimators.md, "Short runs and flat
 * windows"): runs of n rotations cut from ground-truth traces, each estimated
 * as a run of its own.  Run by hand, never a test:
 *   bench/short_runs [--anywhere] [--max N] TRACE...
 * By default each run is the first n rotations of a trace (a program from its
 * start); --anywhere cuts runs of n rotations every n rotations through the
 * trace (counting that starts in the middle of a program, as PAPI_start may).
 * Every trace is multiplexed at C = 2, 3, 4 and 6 in column order.  Per n it
 * prints, for each estimator, the mean over (run, event) pairs with a nonzero
 * true total of |estimated total - true total| / true total: the error of
 * the total a user reads.  "mlp model" and "bigru model" are the models
 * alone (mpxkit_mlp_run, mpxkit_bigru_run), without the library's rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/estimator.h"
#include "mpxkit/model.h"
#include "mpxkit/mpx.h"
#include "mpxkit/trace.h"

#define MAX_N	    200
#define N_REGISTRY  6
#define N_COLUMNS   (N_REGISTRY + 2)
#define MLP_MODEL   N_REGISTRY
#define BIGRU_MODEL (N_REGISTRY + 1)

static const char *const names[N_REGISTRY] = {"fixed", "linear", "cam",
					      "mlp",   "bigru",	 "bigru-full"};
static const char *const titles[N_COLUMNS] = {"fixed", "linear",     "cam",	  "mlp",
					      "bigru", "bigru-full", "mlp model", "bigru model"};
static const size_t budgets[] = {2, 3, 4, 6};

typedef struct study {
	int anywhere;
	size_t max_n;
	double err[MAX_N + 1][N_COLUMNS];
	size_t pairs[MAX_N + 1];
	mpxkit_model *mlp, *bigru;
} study;

/* The models the registry's mlp and bigru load by default, for their raw passes. */
static int load_models(study *s)
{
	const char *dir = getenv("MPXKIT_DATADIR");
	char path[4096];
	mpxkit_diag d = {0};

	if (dir == NULL || dir[0] == '\0') {
		fprintf(stderr, "short_runs: set MPXKIT_DATADIR (the tree's data/)\n");
		return -1;
	}
	snprintf(path, sizeof path, "%s/models/default.mpxm", dir);
	if (mpxkit_model_load_file(&s->mlp, path, &d) < 0) {
		fprintf(stderr, "short_runs: %s\n", d.msg);
		return -1;
	}
	snprintf(path, sizeof path, "%s/models/bigru.mpxm", dir);
	if (mpxkit_model_load_file(&s->bigru, path, &d) < 0) {
		fprintf(stderr, "short_runs: %s\n", d.msg);
		return -1;
	}
	return 0;
}

/* Adds the error of each event's total over one run of n rotations starting at rotation at. */
static void score(study *s, const mpxkit_mpx_run *run, size_t at, size_t n, size_t col,
		  const double *out)
{
	size_t ne = run->layout.n_events;

	for (size_t e = 0; e < ne; e++) {
		double est = 0.0, truth = 0.0;
		for (size_t k = 0; k < n; k++) {
			est += out[k * ne + e];
			truth += (double)run->ocoe[(at + k) * ne + e];
		}
		if (truth <= 0.0)
			continue;
		s->err[n][col] += fabs(est - truth) / truth;
		if (col == 0)
			s->pairs[n]++;
	}
}

static int study_run(study *s, const mpxkit_mpx_run *run)
{
	size_t ne = run->layout.n_events;
	mpxkit_estimator *est[N_REGISTRY] = {0};
	double *out = malloc(s->max_n * ne * sizeof *out);
	mpxkit_diag d = {0};
	int rc = out ? 0 : -1;

	for (size_t x = 0; x < N_REGISTRY && rc == 0; x++)
		if ((rc = mpxkit_estimator_new(&est[x], names[x], &run->layout, NULL, &d)) < 0)
			fprintf(stderr, "short_runs: %s\n", d.msg);
	for (size_t n = 1; n <= s->max_n && rc == 0; n++) {
		for (size_t at = 0; at + n <= run->n_rotations; at += n) {
			const uint64_t *obs = run->obs + at * ne;
			for (size_t x = 0; x < N_REGISTRY && rc == 0; x++) {
				rc = mpxkit_estimator_run_whole(est[x], n, obs, NULL, out, &d);
				score(s, run, at, n, x, out);
			}
			if (rc == 0)
				rc = mpxkit_mlp_run(s->mlp, &run->layout, n, obs, NULL, out, &d);
			score(s, run, at, n, MLP_MODEL, out);
			if (rc == 0)
				rc =
				    mpxkit_bigru_run(s->bigru, &run->layout, n, obs, NULL, out, &d);
			score(s, run, at, n, BIGRU_MODEL, out);
			if (!s->anywhere)
				break;
		}
	}
	if (rc < 0 && d.msg[0])
		fprintf(stderr, "short_runs: %s\n", d.msg);
	for (size_t x = 0; x < N_REGISTRY; x++)
		mpxkit_estimator_free(est[x]);
	free(out);
	return rc;
}

static int study_trace(study *s, const char *path)
{
	mpxkit_trace *t = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_trace_read(path, &t, &d);

	for (size_t b = 0; b < sizeof budgets / sizeof budgets[0] && rc == 0; b++) {
		mpxkit_mpx_config cfg = {budgets[b], NULL, NULL, 0, path};
		mpxkit_mpx_run *run = NULL;
		if ((rc = mpxkit_mpx_simulate(t, &cfg, &run, &d)) == 0)
			rc = study_run(s, run);
		mpxkit_mpx_run_free(run);
	}
	if (rc < 0 && d.msg[0])
		fprintf(stderr, "short_runs: %s\n", d.msg);
	mpxkit_trace_free(t);
	return rc;
}

int main(int argc, char **argv)
{
	static study s = {.max_n = 20};
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--anywhere") == 0)
			s.anywhere = 1;
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
			s.max_n = (size_t)strtoul(argv[++i], NULL, 10);
		else
			break;
	}
	if (i == argc || s.max_n < 1 || s.max_n > MAX_N) {
		fprintf(stderr, "usage: short_runs [--anywhere] [--max N<=%d] TRACE...\n", MAX_N);
		return 1;
	}
	if (load_models(&s) < 0)
		return 2;
	for (; i < argc; i++)
		if (study_trace(&s, argv[i]) < 0)
			return 2;
	printf(
	    "# mean |estimated total - true total| / true total over (run, event) pairs; runs %s\n",
	    s.anywhere ? "cut anywhere" : "from the program's start");
	printf("%4s %6s", "n", "pairs");
	for (size_t x = 0; x < N_COLUMNS; x++)
		printf(" %11s", titles[x]);
	printf("\n");
	for (size_t n = 1; n <= s.max_n; n++) {
		if (s.pairs[n] == 0 || (n > 20 && n % 10))
			continue;
		printf("%4zu %6zu", n, s.pairs[n]);
		for (size_t x = 0; x < N_COLUMNS; x++)
			printf(" %11.3f", s.err[n][x] / (double)s.pairs[n]);
		printf("\n");
	}
	mpxkit_model_free(s.mlp);
	mpxkit_model_free(s.bigru);
	return 0;
}

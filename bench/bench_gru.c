/* SPDX-License-Identifier: BSD-3-Clause */
/* Bi-GRU inference throughput on one core: rotations/s over whole event series and over
 * sliding windows, for hidden sizes 16 and 32 and the mlp's 28 features (or as many as named),
 * then the registered bigru estimator (carried along the run), features included. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "mpxkit/estimator.h"
#include "mpxkit/model.h"

#define N_FEATURES   28 /* the mlp's features for H = 4 when the issue was written */
#define MAX_FEATURES 256
#define SERIES_LEN   125    /* rotations of one event in a corpus trace at C = 4 */
#define N_STEPS	     400000 /* steps per timed run */
#define REPEATS	     3
/* The registered estimator's run: 13 events on 4 counters, as the corpus at C = 4. */
#define EST_EVENTS    13
#define EST_GROUPS    4
#define EST_ROTATIONS 20000
#define EST_HALF      4	 /* the shipped model's feature half-window */
#define EST_HIDDEN    16 /* and its GRU units per direction */

static float small_random(uint64_t *s, float scale)
{
	return (float)((double)(next_random(s) >> 11) / 9007199254740992.0 - 0.5) * scale;
}

/* GRU(28 -> 2 hidden) then dense(2 hidden -> 1): the shape doc/model-format.md describes. */
static mpxkit_model *make_model(size_t nf, size_t hidden)
{
	mpxkit_model_shape s = {.n_layers = 2,
				.width = {nf, 2 * hidden, 1},
				.type = {MPXKIT_LAYER_BIGRU, MPXKIT_LAYER_DENSE},
				.activation = {MPXKIT_ACT_IDENTITY, MPXKIT_ACT_IDENTITY},
				.feature_set = MPXKIT_MLP_FEATURE_SET,
				.feature_param = EST_HALF};
	mpxkit_model *m = NULL;
	mpxkit_diag d = {0};
	uint64_t rng = 42;
	size_t n;
	int rc = mpxkit_model_new(&m, &s, &d);

	if (rc < 0) {
		fprintf(stderr, "bench_gru: %s\n", mpxkit_diag_message(&d, rc));
		return NULL;
	}
	float *p = mpxkit_model_params(m, &n);
	for (size_t i = 2 * nf + 2; i < n; i++)
		p[i] = small_random(&rng, 0.5f);
	return m;
}

/*
 * Best seconds of REPEATS runs of calls sequences of len steps, each starting
 * adv rotations after the one before (modulo the series).
 */
static double time_runs(const mpxkit_model *m, const float *x, size_t nf, size_t calls, size_t len,
			size_t adv, float *out, float *scratch, double *sink)
{
	double best = 1e30;

	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		size_t at = 0;
		for (size_t c = 0; c < calls; c++) {
			mpxkit_model_forward_seq(m, len, x + at * nf, out, scratch);
			*sink += out[len - 1];
			at = (at + adv) % SERIES_LEN;
		}
		t0 = now() - t0;
		best = t0 < best ? t0 : best;
	}
	return best;
}

/*
 * The registered estimator over EST_ROTATIONS rotations of random counts,
 * offline (mpxkit_estimator_run) or online (push every rotation, then
 * flush): best seconds of REPEATS.
 */
static double time_estimator(mpxkit_estimator *est, int online, const uint64_t *obs, double *out)
{
	double best = 1e30;

	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		if (!online) {
			if (mpxkit_estimator_run(est, EST_ROTATIONS, obs, NULL, out) != 0)
				return -1;
		} else {
			mpxkit_estimator_reset(est);
			for (size_t k = 0; k < EST_ROTATIONS; k++) {
				mpxkit_rotation rot = {obs + k * EST_EVENTS, NULL, NULL, NULL};
				if (mpxkit_estimator_push(est, &rot, out) < 0)
					return -1;
			}
			while (mpxkit_estimator_flush(est, out) == 1)
				;
		}
		t0 = now() - t0;
		best = t0 < best ? t0 : best;
	}
	return best;
}

/*
 * The bigru estimator with the shipped model's shape and random weights, or
 * the model file named, and mpxkit_bigru_run (whole series) on the same run.
 */
static int bench_estimator(const char *model_path, double *sink)
{
	static const size_t slice[EST_EVENTS] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3};
	const mpxkit_layout l = {EST_EVENTS, EST_GROUPS, slice, 0, 0};
	char tmp[] = "/tmp/bench_gru.XXXXXX";
	mpxkit_estimator_options opts = {model_path ? model_path : tmp};
	mpxkit_model *m = NULL;
	mpxkit_estimator *est = NULL;
	mpxkit_diag d = {0};
	uint64_t *obs = malloc(EST_ROTATIONS * EST_EVENTS * sizeof(*obs)), rng = 11;
	double *out = malloc(EST_ROTATIONS * EST_EVENTS * sizeof(*out)), t[3], best = 1e30;
	int rc = 2, fd;

	m = model_path ? NULL : make_model(mpxkit_mlp_feature_count(EST_HALF), EST_HIDDEN);
	if (model_path && mpxkit_model_load_file(&m, model_path, &d) < 0) {
		fprintf(stderr, "bench_gru: %s\n", mpxkit_diag_message(&d, -MPXKIT_EINVAL));
		goto out;
	}
	if (!obs || !out || !m)
		goto out;
	/* The estimator loads its model from a file: the random one goes to a temporary file. */
	if (!model_path) {
		fd = mkstemp(tmp);
		if (fd < 0 || close(fd) != 0 || mpxkit_model_save(m, tmp, &d) < 0) {
			fprintf(stderr, "bench_gru: %s: cannot write the model\n", tmp);
			goto out;
		}
	}
	rc = mpxkit_estimator_new(&est, "bigru", &l, &opts, &d);
	if (!model_path)
		unlink(tmp);
	if (rc < 0) {
		fprintf(stderr, "bench_gru: %s\n", mpxkit_diag_message(&d, rc));
		rc = 2;
		goto out;
	}
	rc = 2;
	for (size_t i = 0; i < EST_ROTATIONS * EST_EVENTS; i++)
		obs[i] = next_random(&rng) % 4 == 0 ? 0 : next_random(&rng) % 10000000;
	for (int online = 0; online < 2; online++)
		if ((t[online] = time_estimator(est, online, obs, out)) < 0)
			goto out;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		if (mpxkit_bigru_run(m, &l, EST_ROTATIONS, obs, NULL, out, &d) < 0)
			goto out;
		t0 = now() - t0;
		best = t0 < best ? t0 : best;
	}
	t[2] = best;
	const mpxkit_estimator_info *info = mpxkit_estimator_info_of(est);
	printf("\n| %s, %d events, G = %d | event-rotations/s | rotations/s |\n"
	       "| --- | ---: | ---: |\n",
	       model_path ? model_path : "random 76-16x2-1 model", EST_EVENTS, EST_GROUPS);
	static const char *const what[3] = {"offline (`mpxkit_estimator_run`)",
					    "online (push + flush)",
					    "whole series (`mpxkit_bigru_run`)"};
	for (int i = 0; i < 3; i++)
		printf("| `bigru` %s | %.3g | %.3g |\n", what[i],
		       (double)EST_ROTATIONS * EST_EVENTS / t[i], (double)EST_ROTATIONS / t[i]);
	printf("(bigru reads %u rotations back, %u ahead)\n", info->lookback, info->lookahead);
	*sink += out[EST_ROTATIONS / 2];
	rc = 0;
out:
	mpxkit_estimator_free(est);
	mpxkit_model_free(m);
	free(obs);
	free(out);
	return rc;
}

int main(int argc, char **argv)
{
	static const size_t hidden[] = {16, 32};
	static const size_t window[] = {8, 16, 32};
	size_t nf = argc > 1 ? strtoul(argv[1], NULL, 10) : N_FEATURES;
	float *x = malloc(2 * SERIES_LEN * MAX_FEATURES * sizeof(float));
	float out[2 * SERIES_LEN];
	double sink = 0.0;
	uint64_t rng = 7;

	if (nf < 1 || nf > MAX_FEATURES) {
		fprintf(stderr,
			"usage: bench_gru [FEATURES [MODEL]], 1 to %d features (default %d)\n",
			MAX_FEATURES, N_FEATURES);
		return 1;
	}
	if (!x)
		return 2;
	/* Twice the series, so a window starting anywhere in the first copy has its steps. */
	for (size_t i = 0; i < 2 * SERIES_LEN * nf; i++)
		x[i] = small_random(&rng, 4.0f);
	printf("| model | use | rotations/s |\n| --- | --- | ---: |\n");
	for (size_t h = 0; h < sizeof(hidden) / sizeof(hidden[0]); h++) {
		mpxkit_model *m = make_model(nf, hidden[h]);
		float *scratch;

		if (!m)
			return 2;
		scratch = malloc(mpxkit_model_seq_scratch_len(m, SERIES_LEN) * sizeof(float));
		if (!scratch)
			return 2;
		/* Whole series: every step is one rotation's estimate. */
		size_t calls = N_STEPS / SERIES_LEN;
		double t = time_runs(m, x, nf, calls, SERIES_LEN, SERIES_LEN, out, scratch, &sink);
		printf("| Bi-GRU %zu-%zux2-1 | whole series of %d rotations | %.3g |\n", nf,
		       hidden[h], SERIES_LEN, (double)(calls * SERIES_LEN) / t);
		/* A window of w rotations rerun for each estimate (the registered bigru did this
		 * before it carried its state along the run). */
		for (size_t w = 0; w < sizeof(window) / sizeof(window[0]); w++) {
			calls = N_STEPS / window[w];
			t = time_runs(m, x, nf, calls, window[w], 1, out, scratch, &sink);
			printf("| Bi-GRU %zu-%zux2-1 | sliding window of %zu | %.3g |\n", nf,
			       hidden[h], window[w], (double)calls / t);
		}
		free(scratch);
		mpxkit_model_free(m);
	}
	if (bench_estimator(argc > 2 ? argv[2] : NULL, &sink) != 0)
		return 2;
	fprintf(stderr, "(checksum %g)\n", sink);
	free(x);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mlp inference throughput on one core: forward passes/s and per-event rotation estimates/s. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "mpxkit/estimator.h"
#include "mpxkit/model.h"

#define N_EVENTS    13
#define N_GROUPS    4
#define N_ROTATIONS 100000
#define N_FORWARD   2000000
#define REPEATS	    3
#define HALF	    4

/* The shape mpxkit train writes, with small random weights; or the model file named. */
static int get_model(mpxkit_model **m, const char *path)
{
	mpxkit_model_shape s = {
	    .n_layers = 3,
	    .width = {mpxkit_mlp_feature_count(HALF), 64, 64, 1},
	    .activation = {MPXKIT_ACT_RELU, MPXKIT_ACT_RELU, MPXKIT_ACT_IDENTITY},
	    .feature_set = 1,
	    .feature_param = HALF,
	};
	mpxkit_diag d = {0};
	uint64_t rng = 42;
	size_t n, norm = 2 * s.width[0] + 2;
	int rc = path ? mpxkit_model_load_file(m, path, &d) : mpxkit_model_new(m, &s, &d);

	if (rc < 0) {
		fprintf(stderr, "bench_mlp: %s\n", mpxkit_diag_message(&d, rc));
		return rc;
	}
	if (!path) {
		float *p = mpxkit_model_params(*m, &n);
		for (size_t i = norm; i < n; i++)
			p[i] =
			    (float)((double)(next_random(&rng) >> 11) / 9007199254740992.0 - 0.5) *
			    0.3f;
	}
	return 0;
}

/*
 * The registered estimator, offline (mpxkit_estimator_run) or online (push
 * every rotation, then flush): seconds for the whole run.
 */
static double time_estimator(mpxkit_estimator *est, int online, const uint64_t *obs, double *out)
{
	double t0 = now();

	if (!online) {
		if (mpxkit_estimator_run(est, N_ROTATIONS, obs, NULL, out) != 0)
			return -1;
		return now() - t0;
	}
	mpxkit_estimator_reset(est);
	for (size_t k = 0; k < N_ROTATIONS; k++) {
		mpxkit_rotation rot = {obs + k * N_EVENTS, NULL, NULL, NULL};
		if (mpxkit_estimator_push(est, &rot, out) < 0)
			return -1;
	}
	while (mpxkit_estimator_flush(est, out) == 1)
		;
	return now() - t0;
}

int main(int argc, char **argv)
{
	static const size_t slice[N_EVENTS] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3};
	const mpxkit_layout l = {N_EVENTS, N_GROUPS, slice, 0, 0};
	uint64_t *obs = malloc(N_ROTATIONS * N_EVENTS * sizeof(*obs)), rng = 7;
	double *out = malloc(N_ROTATIONS * N_EVENTS * sizeof(*out)), best_run = 1e30,
	       best_fw = 1e30;
	double best_est[2] = {1e30, 1e30};
	mpxkit_model *m = NULL;
	mpxkit_estimator *est = NULL;
	mpxkit_diag d = {0};
	char tmp[] = "/tmp/bench_mlp.XXXXXX";
	mpxkit_estimator_options opts = {argc > 1 ? argv[1] : tmp};
	float x[64] = {0}, y = 0, scratch[128], sink = 0;
	int fd;

	if (!obs || !out || get_model(&m, argc > 1 ? argv[1] : NULL) < 0)
		return 2;
	/* The estimator loads its model from a file: the random one goes to a temporary file. */
	if (argc <= 1) {
		fd = mkstemp(tmp);
		if (fd < 0 || close(fd) != 0 || mpxkit_model_save(m, tmp, &d) < 0) {
			fprintf(stderr, "bench_mlp: %s: cannot write the model\n", tmp);
			return 2;
		}
	}
	if (mpxkit_estimator_new(&est, "mlp", &l, &opts, &d) < 0) {
		fprintf(stderr, "bench_mlp: %s\n", mpxkit_diag_message(&d, -MPXKIT_EINVAL));
		return 2;
	}
	if (argc <= 1)
		unlink(tmp);
	for (size_t i = 0; i < N_ROTATIONS * N_EVENTS; i++)
		obs[i] = next_random(&rng) % 4 == 0 ? 0 : next_random(&rng) % 10000000;
	for (size_t i = 0; i < mpxkit_mlp_feature_count(HALF); i++)
		x[i] = (float)i * 0.01f;
	for (int r = 0; r < REPEATS; r++) {
		double t0 = now();
		for (size_t i = 0; i < N_FORWARD; i++) {
			x[0] = (float)(i & 7);
			mpxkit_model_forward(m, x, &y, scratch);
			sink += y;
		}
		t0 = now() - t0;
		best_fw = t0 < best_fw ? t0 : best_fw;
		t0 = now();
		if (mpxkit_mlp_run(m, &l, N_ROTATIONS, obs, NULL, out, NULL) != 0)
			return 2;
		t0 = now() - t0;
		best_run = t0 < best_run ? t0 : best_run;
		for (int online = 0; online < 2; online++) {
			t0 = time_estimator(est, online, obs, out);
			if (t0 < 0)
				return 2;
			best_est[online] = t0 < best_est[online] ? t0 : best_est[online];
		}
	}
	printf("| measure | per second |\n| --- | ---: |\n");
	const mpxkit_model_shape *sh = mpxkit_model_shape_of(m);
	printf("| forward passes (%zu", sh->width[0]);
	for (size_t i = 1; i <= sh->n_layers; i++)
		printf("-%zu", sh->width[i]);
	printf(") | %.3g |\n", N_FORWARD / best_fw);
	printf("| rotation estimates, features included (one event, one rotation) | %.3g |\n",
	       (double)N_ROTATIONS * N_EVENTS / best_run);
	printf("| whole rotations of %d events | %.3g |\n", N_EVENTS, N_ROTATIONS / best_run);
	printf("| rotation-estimates of the registered `mlp`, offline (`mpxkit_estimator_run`) | "
	       "%.3g |\n",
	       (double)N_ROTATIONS * N_EVENTS / best_est[0]);
	printf("| rotation-estimates of the registered `mlp`, online (push + flush) | %.3g |\n",
	       (double)N_ROTATIONS * N_EVENTS / best_est[1]);
	fprintf(stderr, "(checksum %g %g)\n", (double)sink, out[N_ROTATIONS / 2]);
	mpxkit_estimator_free(est);
	mpxkit_model_free(m);
	free(obs);
	free(out);
	return 0;
}

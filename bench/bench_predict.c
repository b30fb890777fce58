/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit predict's speed: training on datasets, and predictions per second through the public
 * mpxkit_predict (one observation to every configuration). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mpxkit/predict.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	enum { TRAIN_REPEATS = 5 };
	mpxkit_pdata **sets;
	mpxkit_pmodel *m = NULL;
	mpxkit_diag diag = {0};
	mpxkit_pmodel_options opt;
	double t[TRAIN_REPEATS], t0, secs, sink = 0;
	size_t predictions = 0, rows = 0;
	int n = argc - 1;

	mpxkit_pmodel_options_default(&opt);
	/* --robust: every power fit of the event selection is ten reweighted solves. */
	if (n >= 1 && strcmp(argv[1], "--robust") == 0) {
		opt.robust = 1;
		argv++;
		n--;
	}
	if (n < 1) {
		fprintf(stderr,
			"usage: bench_predict [--robust] DATA.csv...\n"
			"Trains on all the datasets together (median of %d), then predicts every\n"
			"row of the first for every configuration for about 2 s.\n",
			TRAIN_REPEATS);
		return 1;
	}
	sets = calloc((size_t)n, sizeof *sets);
	for (int i = 0; i < n; i++)
		if (mpxkit_pdata_read(argv[i + 1], &sets[i], &diag) < 0) {
			fprintf(stderr, "bench_predict: %s\n", diag.msg);
			return 2;
		}
	for (int i = 0; i < n; i++)
		rows += sets[i]->n_rows;
	/* Training: defaults (forms and power events chosen by inner cross-validation). */
	for (int r = 0; r < TRAIN_REPEATS; r++) {
		mpxkit_pmodel_free(m);
		m = NULL;
		t0 = now();
		if (mpxkit_pmodel_train((const mpxkit_pdata *const *)sets, (size_t)n, &opt, NULL,
					NULL, &m, &diag) < 0) {
			fprintf(stderr, "bench_predict: %s\n", diag.msg);
			return 2;
		}
		t[r] = now() - t0;
	}
	qsort(t, TRAIN_REPEATS, sizeof *t, cmp_double);
	printf("train: %zu rows in %d datasets, %zu configurations: median %.3f s (min %.3f, max "
	       "%.3f)\n",
	       rows, n, mpxkit_pmodel_n_configs(m), t[TRAIN_REPEATS / 2], t[0],
	       t[TRAIN_REPEATS - 1]);
	{
		const mpxkit_pdata *d = sets[0];
		size_t nc = mpxkit_pmodel_n_configs(m);
		mpxkit_prediction *pred = malloc(nc * sizeof *pred);
		mpxkit_pobs *obs = calloc(d->n_rows, sizeof *obs);
		mpxkit_pbinding b;
		if (mpxkit_pbinding_pdata(m, d, &b, &diag) < 0) {
			fprintf(stderr, "bench_predict: %s\n", diag.msg);
			return 2;
		}
		for (size_t i = 0; i < d->n_rows; i++)
			if (mpxkit_pobs_row(m, d, i, &obs[i], NULL) < 0)
				obs[i].core = -1;
		t0 = now();
		do {
			for (size_t i = 0; i < d->n_rows; i++) {
				if (obs[i].core < 0 ||
				    mpxkit_predict(m, &b, &obs[i], pred, NULL) < 0)
					continue;
				predictions += nc;
				sink += pred[nc - 1].time_s;
			}
			secs = now() - t0;
		} while (secs < 2);
		printf("apply: %zu predictions (%zu rows x %zu configurations) in %.3f s: %.2f M "
		       "predictions/s, %.1f ns each (checksum %g)\n",
		       predictions, d->n_rows, nc, secs, (double)predictions / secs * 1e-6,
		       secs / (double)predictions * 1e9, sink);
		free(pred);
		free(obs);
	}
	mpxkit_pmodel_free(m);
	for (int i = 0; i < n; i++)
		mpxkit_pdata_free(sets[i]);
	free(sets);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the predict model loader (.mpxp), then a prediction from
 * every core kind it knows; never a crash, never a configuration without its core kind. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/predict.h"

/* Predicts a plain observation from each core kind: every input 1e9, cycles 2e9, 1 s. */
static void exercise(const mpxkit_pmodel *m)
{
	size_t n_in = mpxkit_pmodel_n_inputs(m), n_cfg = mpxkit_pmodel_n_configs(m);
	const char *names[MPXKIT_PMODEL_MAX_INPUTS];
	double values[MPXKIT_PMODEL_MAX_INPUTS];
	mpxkit_prediction *pred = malloc((n_cfg + 1) * sizeof *pred);
	mpxkit_pbinding b;
	size_t n = 0;

	if (pred == NULL)
		return;
	for (size_t i = 0; i < n_in; i++)
		if (mpxkit_pmodel_input(m, i)) {
			names[n] = mpxkit_pmodel_input(m, i);
			values[n++] = i == MPXKIT_ROLE_CYCLES ? 2e9 : 1e9;
		}
	if (mpxkit_pbinding_events(m, names, n, &b, NULL) == 0)
		for (size_t k = 0; k < n_cfg; k++) {
			const mpxkit_pconfig *c = mpxkit_pmodel_config(m, k);
			mpxkit_pobs ob = {.core = mpxkit_pmodel_core(m, c->core),
					  .freq_mhz = c->freq_mhz,
					  .threads = 1,
					  .time_s = 1,
					  .time_kind = MPXKIT_TIME_ELAPSED,
					  .power_w = NAN,
					  .values = values};
			if (ob.core < 0)
				__builtin_trap();
			mpxkit_predict(m, &b, &ob, pred, NULL);
		}
	free(pred);
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_pmodel *m = NULL;
	char *text;
	int rc = mpxkit_pmodel_load_buffer(data, size, "fuzz", &m, NULL);

	if (rc < 0)
		return rc;
	if (mpxkit_pmodel_n_configs(m) == 0)
		__builtin_trap();
	exercise(m);
	text = mpxkit_pmodel_describe(m);
	if (out && text)
		fputs(text, out);
	free(text);
	mpxkit_pmodel_free(m);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

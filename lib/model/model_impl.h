/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's layout in memory, shared by the loader and the trainer; private to the library. */
#ifndef MPXKIT_MODEL_IMPL_H
#define MPXKIT_MODEL_IMPL_H

#include "mpxkit/model.h"

struct mpxkit_model {
	mpxkit_model_shape shape;
	size_t n_params;
	size_t max_width;
	float *params;			       /* the one block, file order */
	size_t w_off[MPXKIT_MODEL_MAX_LAYERS]; /* float index of each layer's W; b follows */
};

/* Where the normalisation lives in params: in_shift, in_scale, out_shift, out_scale. */
static inline float *model_in_shift(mpxkit_model *m)
{
	return m->params;
}

static inline float *model_out_shift(mpxkit_model *m)
{
	return m->params + 2 * m->shape.width[0];
}

/* Floats of workspace model_sample_grad needs. */
size_t model_grad_ws_len(const mpxkit_model *m);

/*
 * One sample's squared error (mean over outputs, normalised target space);
 * adds its gradient to grad (n_params floats; the normalisation entries stay
 * untouched).  With dropout > 0, hidden units are dropped with that
 * probability, drawn from *rng.
 */
double model_sample_grad(const mpxkit_model *m, const float *x, const float *y, float *grad,
			 float *ws, double dropout, uint64_t *rng);

#endif

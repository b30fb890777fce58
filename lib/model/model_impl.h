/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's layout in memory, shared by the loader and the trainers; private to the library. */
#ifndef MPXKIT_MODEL_IMPL_H
#define MPXKIT_MODEL_IMPL_H

#include <math.h>

#include "mpxkit/model.h"

struct mpxkit_model {
	mpxkit_model_shape shape; /* type[] holds file ids: 0 is stored as MPXKIT_LAYER_DENSE */
	size_t n_params;
	size_t max_width;
	float *params;			       /* the one block, file order */
	size_t w_off[MPXKIT_MODEL_MAX_LAYERS]; /* float index of each layer's block */
	int recurrent;			       /* some layer is a GRU */
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

/*
 * Floats of one direction of a GRU layer with n_in inputs and hidden units
 * per direction: W_x (3 hidden x n_in), W_h (3 hidden x hidden), b_x, b_h
 * (3 hidden each), gates in the order r, z, n.
 */
static inline size_t model_gru_dir_len(size_t n_in, size_t hidden)
{
	return 3 * hidden * (n_in + hidden + 2);
}

static inline float model_sigmoid(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

static inline float model_activate(int act, float x)
{
	switch (act) {
	case MPXKIT_ACT_RELU:
		return x > 0.0f ? x : 0.0f;
	case MPXKIT_ACT_TANH:
		return tanhf(x);
	case MPXKIT_ACT_SIGMOID:
		return model_sigmoid(x);
	default:
		return x;
	}
}

/*
 * Hot loops of the forward passes get an AVX2 clone beside the baseline
 * x86-64 code, picked at load time.  Not FMA: without fused multiply-adds
 * every clone rounds as the baseline does, lane by lane, so results (and the
 * trainers' early stopping, which runs these) are the same on every x86-64.
 * Only on static functions: an exported ifunc would escape libtool's export
 * list.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define MODEL_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MODEL_SIMD_CLONES
#endif

/* The derivative of an activation, from its output v (what back-propagation keeps). */
static inline float model_act_deriv(int act, float v)
{
	switch (act) {
	case MPXKIT_ACT_RELU:
		return v > 0.0f ? 1.0f : 0.0f;
	case MPXKIT_ACT_TANH:
		return 1.0f - v * v;
	case MPXKIT_ACT_SIGMOID:
		return v * (1.0f - v);
	default:
		return 1.0f;
	}
}

/*
 * Eight independent partial sums: without them the additions form one chain
 * that the compiler may not reorder, and the loop runs at one add per cycle.
 */
static inline float model_dot(const float *a, const float *b, size_t n)
{
	float part[8] = {0};
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (size_t j = 0; j < 8; j++)
			part[j] += a[i + j] * b[i + j];
	float sum = ((part[0] + part[4]) + (part[1] + part[5])) +
		    ((part[2] + part[6]) + (part[3] + part[7]));
	for (; i < n; i++)
		sum += a[i] * b[i];
	return sum;
}

/* splitmix64, the stream the trainers draw weights, shuffles and dropout masks from. */
static inline uint64_t model_next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double model_next_unit(uint64_t *s)
{
	return (double)(model_next_u64(s) >> 11) / 9007199254740992.0;
}

/*
 * Mean and 1/standard deviation of each of the width columns of n rows (a
 * constant column gets scale 1): the normalisation both trainers fit.
 */
void model_fit_columns(size_t n, size_t width, const float *rows, float *shift, float *scale);

/* Floats of workspace model_sample_grad needs. */
size_t model_grad_ws_len(const mpxkit_model *m);

/*
 * One sample's squared error (mean over outputs, normalised target space);
 * adds its gradient to grad (n_params floats; the normalisation entries stay
 * untouched).  With dropout > 0, hidden units are dropped with that
 * probability, drawn from *rng.  Dense layers only (lib/model/train.c).
 */
double model_sample_grad(const mpxkit_model *m, const float *x, const float *y, float *grad,
			 float *ws, double dropout, uint64_t *rng);

/* The same for a loss kind (enum mpxkit_loss), the error and gradient scaled by weight. */
double model_sample_grad_w(const mpxkit_model *m, const float *x, const float *y, float weight,
			   int loss_kind, float *grad, float *ws, double dropout, uint64_t *rng);

/*
 * The loss of one output whose error is d in the normalised target space
 * (sigma: the target's standard deviation, out_scale), and in *dd its
 * derivative by d: d^2 for MPXKIT_LOSS_MSE; |10^(sigma d) - 1| for
 * MPXKIT_LOSS_RA, whose gradient stops growing past sigma d = 3, so one
 * wild early output cannot blow the weights up (doc/estimators.md, "mlp").
 * Both trainers use it.
 */
static inline double model_output_loss(int kind, double d, double sigma, float *dd)
{
	if (kind != MPXKIT_LOSS_RA) {
		*dd = (float)(2.0 * d);
		return d * d;
	}
	double delta = sigma * d, up = pow(10.0, delta < 3.0 ? delta : 3.0);
	*dd = (float)((delta > 0.0   ? 1.0
		       : delta < 0.0 ? -1.0
				     : 0.0) *
		      2.302585092994046 * up * sigma);
	return fabs(pow(10.0, delta < 6.0 ? delta : 6.0) - 1.0);
}

/*
 * A model with one bidirectional GRU layer, run a step at a time over a
 * series that grows (the bigru estimator, estimators/bigru.c): the dense
 * layers before the GRU and its input projections W_x u + b_x read one step
 * alone, so a caller can keep them per step and feed the recurrences itself;
 * the layers after the GRU read one step's [h_fwd; h_bwd].  The arithmetic
 * is mpxkit_model_forward_seq's (the same kernels in the same order), so
 * steps fed as that pass feeds them give its outputs bit for bit.
 */
typedef struct model_gru_plan {
	size_t layer;  /* the GRU layer's index */
	size_t hidden; /* its units per direction */
} model_gru_plan;

/* 0 and *plan when the model has exactly one GRU layer; -1 otherwise. */
int model_gru_plan_of(const mpxkit_model *m, model_gru_plan *plan);

/* Floats of scratch model_gru_project and model_gru_output need. */
size_t model_gru_step_scratch_len(const mpxkit_model *m);

/*
 * One step's model input in (width[0] floats) through the normalisation and
 * the dense layers before the GRU, then the GRU's input projections: proj
 * receives 3 hidden floats of the forward direction, then 3 hidden of the
 * backward one.
 */
void model_gru_project(const mpxkit_model *m, const model_gru_plan *p, const float *in, float *proj,
		       float *scratch);

/*
 * One step of a direction (backward 0 or 1) from its projection ax (3 hidden
 * floats of model_gru_project's) and the previous state prev (NULL: the zero
 * state a sequence starts from): h receives the new state (hidden floats; h
 * may be prev).  tmp holds 3 hidden floats.
 */
void model_gru_step(const mpxkit_model *m, const model_gru_plan *p, int backward, const float *ax,
		    const float *prev, float *h, float *tmp);

/* One step's outputs (width[n_layers] floats) from its two states: the layers after the GRU. */
void model_gru_output(const mpxkit_model *m, const model_gru_plan *p, const float *hf,
		      const float *hb, float *out, float *scratch);

/* Floats of workspace model_seq_grad needs for sequences of up to n_steps steps. */
size_t model_seq_grad_ws_len(const mpxkit_model *m, size_t n_steps);

/*
 * One sequence (lib/model/gru.c): n_steps rows of inputs x and targets y,
 * per-step weights w (NULL: 1).  Returns the sum over steps of w times the
 * loss of loss_kind (model_output_loss, mean over outputs), sets *w_sum to
 * the sum of w, and adds the gradient of that returned sum to grad,
 * back-propagated through time (normalisation entries untouched).  With
 * dropout > 0 every layer's output but the last's is dropped per step and
 * unit with that probability, drawn from *rng.
 */
double model_seq_grad(const mpxkit_model *m, size_t n_steps, const float *x, const float *y,
		      const float *w, int loss_kind, float *grad, float *ws, double dropout,
		      uint64_t *rng, double *w_sum);

#endif

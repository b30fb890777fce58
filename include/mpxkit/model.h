/* SPDX-License-Identifier: BSD-3-Clause */
/* Small feed-forward networks for learned estimators: model files (doc/model-format.md) and
 * inference. */
#ifndef MPXKIT_MODEL_H
#define MPXKIT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPXKIT_MODEL_VERSION	1
#define MPXKIT_MODEL_MAX_LAYERS 16
#define MPXKIT_MODEL_MAX_WIDTH	4096

/* Layer activations; the ids are the file's (doc/model-format.md). */
enum mpxkit_activation {
	MPXKIT_ACT_IDENTITY = 0,
	MPXKIT_ACT_RELU = 1,
	MPXKIT_ACT_TANH = 2,
	MPXKIT_ACT_SIGMOID = 3
};

/* Layer types; version 1 has only dense layers (2 is set aside for a GRU). */
enum mpxkit_layer_type { MPXKIT_LAYER_DENSE = 1 };

/* The shape of a network: width[0] inputs, width[n_layers] outputs. */
typedef struct mpxkit_model_shape {
	size_t n_layers;			   /* 1 .. MPXKIT_MODEL_MAX_LAYERS */
	size_t width[MPXKIT_MODEL_MAX_LAYERS + 1]; /* each 1 .. MPXKIT_MODEL_MAX_WIDTH */
	int activation[MPXKIT_MODEL_MAX_LAYERS];   /* enum mpxkit_activation, per layer */
	uint32_t feature_set;			   /* which extractor feeds the inputs; 0: none */
	uint32_t feature_param;			   /* its parameter, opaque to the model */
} mpxkit_model_shape;

typedef struct mpxkit_model mpxkit_model;

/*
 * A model of the given shape with every weight and bias 0, input shifts 0
 * and all scales 1.  -MPXKIT_EINVAL (diag filled) for a shape out of range.
 */
int mpxkit_model_new(mpxkit_model **out, const mpxkit_model_shape *shape, mpxkit_diag *diag);

/*
 * Decodes a model file held in memory; name labels the diag line.  Checks
 * every length, both checksums and every reserved field, and refuses a bad
 * file with -MPXKIT_ETRUNC, -MPXKIT_EFORMAT, -MPXKIT_EVERSION or
 * -MPXKIT_ECHECKSUM (see doc/model-format.md).
 */
int mpxkit_model_load_buffer(mpxkit_model **out, const void *buf, size_t len, const char *name,
			     mpxkit_diag *diag);

/* The same from a file; -MPXKIT_ESYS when it cannot be read. */
int mpxkit_model_load_file(mpxkit_model **out, const char *path, mpxkit_diag *diag);

/* free(NULL) semantics. */
void mpxkit_model_free(mpxkit_model *m);

/* The model's shape. */
const mpxkit_model_shape *mpxkit_model_shape_of(const mpxkit_model *m);

/*
 * The one contiguous parameter block, in file order: in_shift, in_scale,
 * out_shift, out_scale, then W (row-major, n_out x n_in) and b of each layer.
 * *n receives its length in floats.  The trainer writes it in place.
 */
float *mpxkit_model_params(mpxkit_model *m, size_t *n);

/* Floats of scratch that mpxkit_model_forward needs. */
size_t mpxkit_model_scratch_len(const mpxkit_model *m);

/*
 * One forward pass: in has width[0] floats, out receives width[n_layers],
 * scratch has mpxkit_model_scratch_len() floats.  Allocates nothing; the
 * model is not written, so threads may share it with a scratch each.
 */
void mpxkit_model_forward(const mpxkit_model *m, const float *in, float *out, float *scratch);

/* The file image of a model: *buf (malloc'd, the caller frees it) and *len. */
int mpxkit_model_encode(const mpxkit_model *m, void **buf, size_t *len, mpxkit_diag *diag);

/* Writes the file image to path through a temporary file and a rename. */
int mpxkit_model_save(const mpxkit_model *m, const char *path, mpxkit_diag *diag);

/* Training (lib/model/train.c): samples as rows of width[0] inputs and width[n_layers] targets. */
typedef struct mpxkit_train_set {
	size_t n;
	const float *x; /* n rows of width[0] */
	const float *y; /* n rows of width[n_layers] */
} mpxkit_train_set;

typedef struct mpxkit_train_config {
	unsigned epochs;      /* upper bound on passes over the training set */
	unsigned patience;    /* stop after this many epochs without a better validation loss */
	size_t batch;	      /* samples per Adam step */
	double learning_rate; /* Adam's step size */
	double dropout;	      /* probability of dropping a hidden unit in training, in [0, 1) */
	uint64_t seed;	      /* weights, shuffling and dropout all derive from it */
	/* Called after each epoch with the mean training and validation losses; may be NULL. */
	void (*progress)(void *arg, unsigned epoch, double train_loss, double val_loss);
	void *arg;
} mpxkit_train_config;

typedef struct mpxkit_train_report {
	unsigned epochs_run;
	unsigned best_epoch; /* 1-based epoch whose weights the model keeps */
	double best_val_loss;
} mpxkit_train_report;

/*
 * Sets the normalisation from a training set (each input and target to zero
 * mean and unit variance; a constant column gets scale 1) and draws fresh
 * weights from seed (Glorot-uniform, biases 0).
 */
int mpxkit_model_init(mpxkit_model *m, const mpxkit_train_set *train, uint64_t seed,
		      mpxkit_diag *diag);

/*
 * Mean squared error over a set, in the normalised target space the trainer
 * minimises (targets divided by out_scale).  No dropout.
 */
double mpxkit_model_loss(const mpxkit_model *m, const mpxkit_train_set *set);

/*
 * Adam on the mean squared error with inverted dropout on the hidden layers;
 * keeps the weights of the epoch with the lowest validation loss (early
 * stopping).  Deterministic for a seed: the same data and configuration give
 * bit-identical weights.  -MPXKIT_EINVAL for an empty set or a bad setting.
 */
int mpxkit_model_train(mpxkit_model *m, const mpxkit_train_config *cfg,
		       const mpxkit_train_set *train, const mpxkit_train_set *val,
		       mpxkit_train_report *report, mpxkit_diag *diag);

/*
 * The mlp estimator's data (doc/estimators.md, "mlp"): one sample per event
 * and rotation, its features and its target, for a half-window `half`.
 */
typedef struct mpxkit_mlp_samples {
	unsigned half; /* set before the first add; the look-back and look-ahead */
	size_t n, cap; /* samples held, and room for */
	float *x;      /* n rows of mpxkit_mlp_feature_count(half) */
	float *y;      /* n targets */
} mpxkit_mlp_samples;

/* Inputs of an mlp model with half-window half. */
size_t mpxkit_mlp_feature_count(unsigned half);

/*
 * Appends the samples of one multiplexed run: obs and ocoe are n_rotations
 * rows of layout->n_events, ref n_rotations rows of n_groups (or NULL).
 * Every stride-th rotation is used (stride >= 1).
 */
int mpxkit_mlp_samples_add(mpxkit_mlp_samples *s, const mpxkit_layout *layout, size_t n_rotations,
			   const uint64_t *obs, const uint64_t *ref, const uint64_t *ocoe,
			   size_t stride, mpxkit_diag *diag);

/* Releases the rows; the struct may be reused after setting half again. */
void mpxkit_mlp_samples_free(mpxkit_mlp_samples *s);

/*
 * Estimates a whole run with an mlp model: out receives n_rotations rows of
 * n_events.  -MPXKIT_EINVAL (diag filled) when the model was not made for
 * these features.
 */
int mpxkit_mlp_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		   const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

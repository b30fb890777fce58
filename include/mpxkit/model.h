/* SPDX-License-Identifier: BSD-3-Clause */
/* Small networks for learned estimators (dense layers, bidirectional GRU layers): model files
 * (doc/model-format.md), inference and training. */
#ifndef MPXKIT_MODEL_H
#define MPXKIT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/estimator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format version this build reads and writes; it also reads version 1. */
#define MPXKIT_MODEL_VERSION	2
#define MPXKIT_MODEL_MAX_LAYERS 16
#define MPXKIT_MODEL_MAX_WIDTH	4096
/* A bidirectional GRU layer has 2 x hidden outputs, hidden 1 .. this per direction. */
#define MPXKIT_MODEL_MAX_GRU_HIDDEN 512

/* Layer activations; the ids are the file's (doc/model-format.md). */
enum mpxkit_activation {
	MPXKIT_ACT_IDENTITY = 0,
	MPXKIT_ACT_RELU = 1,
	MPXKIT_ACT_TANH = 2,
	MPXKIT_ACT_SIGMOID = 3
};

/*
 * Layer types; the ids are the file's.  Version 1 has only dense layers;
 * version 2 adds the bidirectional GRU (doc/model-format.md), whose width is
 * 2 x its hidden size per direction and whose activation must be identity.
 */
enum mpxkit_layer_type { MPXKIT_LAYER_DENSE = 1, MPXKIT_LAYER_BIGRU = 2 };

/* The shape of a network: width[0] inputs, width[n_layers] outputs. */
typedef struct mpxkit_model_shape {
	size_t n_layers;			   /* 1 .. MPXKIT_MODEL_MAX_LAYERS */
	size_t width[MPXKIT_MODEL_MAX_LAYERS + 1]; /* each 1 .. MPXKIT_MODEL_MAX_WIDTH */
	int activation[MPXKIT_MODEL_MAX_LAYERS];   /* enum mpxkit_activation, per layer */
	uint32_t feature_set;			   /* which extractor feeds the inputs; 0: none */
	uint32_t feature_param;			   /* its parameter, opaque to the model */
	int type[MPXKIT_MODEL_MAX_LAYERS]; /* enum mpxkit_layer_type per layer; 0 means dense */
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
 * out_shift, out_scale, then W (row-major, n_out x n_in) and b of each dense
 * layer, or the block of a GRU layer (doc/model-format.md, "GRU layer").
 * *n receives its length in floats.  The trainer writes it in place.
 */
float *mpxkit_model_params(mpxkit_model *m, size_t *n);

/* Floats of scratch that mpxkit_model_forward needs. */
size_t mpxkit_model_scratch_len(const mpxkit_model *m);

/* 1 when a layer is recurrent (a GRU), so the model wants sequences; else 0. */
int mpxkit_model_is_recurrent(const mpxkit_model *m);

/*
 * One forward pass: in has width[0] floats, out receives width[n_layers],
 * scratch has mpxkit_model_scratch_len() floats.  Allocates nothing; the
 * model is not written, so threads may share it with a scratch each.
 */
void mpxkit_model_forward(const mpxkit_model *m, const float *in, float *out, float *scratch);

/*
 * Floats of scratch that mpxkit_model_forward_seq needs for sequences of up
 * to max_steps steps (2 x max_steps x the widest level); SIZE_MAX when that
 * does not fit a size_t.
 */
size_t mpxkit_model_seq_scratch_len(const mpxkit_model *m, size_t max_steps);

/*
 * A sequence of n_steps steps through the model: in has n_steps rows of
 * width[0] floats, out receives n_steps rows of width[n_layers].  Dense
 * layers apply to each step alone; a GRU layer runs its forward direction
 * over steps 0 .. n_steps - 1 and its backward direction from the last step
 * to the first, each from a zero state, so any window of a longer series
 * is a valid sequence of its own.  mpxkit_model_forward is this with one
 * step.  Allocates nothing; the model is not written.
 */
void mpxkit_model_forward_seq(const mpxkit_model *m, size_t n_steps, const float *in, float *out,
			      float *scratch);

/* The file image of a model: *buf (malloc'd, the caller frees it) and *len. */
int mpxkit_model_encode(const mpxkit_model *m, void **buf, size_t *len, mpxkit_diag *diag);

/* Writes the file image to path through a temporary file and a rename. */
int mpxkit_model_save(const mpxkit_model *m, const char *path, mpxkit_diag *diag);

/* Training (lib/model/train.c): samples as rows of width[0] inputs and width[n_layers] targets. */
typedef struct mpxkit_train_set {
	size_t n;
	const float *x; /* n rows of width[0] */
	const float *y; /* n rows of width[n_layers] */
	const float *w; /* n sample weights, or NULL for all 1: the loss is their weighted mean */
} mpxkit_train_set;

/*
 * What the trainer minimises, per output: the squared error, or |10^d - 1|
 * for an error of d in log10 units, which is RA's |est - total| relative
 * to the total when the output is a log10 count (doc/estimators.md, "mlp").
 */
enum mpxkit_loss { MPXKIT_LOSS_MSE = 0, MPXKIT_LOSS_RA = 1 };

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
	int loss; /* enum mpxkit_loss; 0 is the mean squared error */
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
 * minimises (targets divided by out_scale), weighted by set->w when it is
 * given.  No dropout.
 */
double mpxkit_model_loss(const mpxkit_model *m, const mpxkit_train_set *set);

/*
 * The same for a loss kind (enum mpxkit_loss); weighted by set->w when it is
 * given.  NaN for a recurrent model, whose loss is mpxkit_model_seq_loss's.
 */
double mpxkit_model_loss_as(const mpxkit_model *m, const mpxkit_train_set *set, int loss_kind);

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
 * Training on sequences (lib/model/gru_train.c), for models with GRU layers
 * (dense-only models work too, each step then being a sample).
 *
 * A set of sequences stored as consecutive rows: sequence i is rows
 * start[i] .. start[i + 1] - 1 (start has n_seq + 1 entries, start[0] = 0,
 * non-decreasing).  Each row has width[0] inputs, n_outputs targets and,
 * when w is not NULL, a loss weight >= 0 (NULL: every step weighs 1).
 */
typedef struct mpxkit_seq_set {
	size_t n_seq;
	const size_t *start;
	const float *x;
	const float *y;
	const float *w;
} mpxkit_seq_set;

typedef struct mpxkit_seq_train_config {
	/*
	 * epochs, patience, learning_rate, seed, progress, loss as for the MLP; batch
	 * counts windows per Adam step; dropout applies to every layer's output
	 * but the last (a GRU's output, not its recurrent state).
	 */
	mpxkit_train_config base;
	size_t window; /* steps per truncated-BPTT window; 0: whole sequences */
	size_t stride; /* steps between window starts; 0: the window itself */
	double clip;   /* gradient-norm clip per Adam step; 0: none */
} mpxkit_seq_train_config;

/*
 * Normalisation from every row of the set (each input and target to zero
 * mean and unit variance), dense weights Glorot-uniform, GRU weights uniform
 * in +-1/sqrt(hidden), every bias 0; all draws from seed.
 */
int mpxkit_model_seq_init(mpxkit_model *m, const mpxkit_seq_set *train, uint64_t seed,
			  mpxkit_diag *diag);

/*
 * The weighted loss of loss_kind (enum mpxkit_loss, as mpxkit_model_loss_as
 * defines it) over every step of the set, each sequence run whole: mean over
 * outputs, then sum of w x loss over the sum of w.  No dropout.  *loss is 0
 * when the weights sum to 0.
 */
int mpxkit_model_seq_loss(const mpxkit_model *m, const mpxkit_seq_set *set, int loss_kind,
			  double *loss, mpxkit_diag *diag);

/*
 * Adam on that loss (cfg->base.loss), back-propagation through time over windows of
 * cfg->window steps every cfg->stride steps (a last window ends at each
 * sequence's end, so every step is trained), each window run from a zero
 * state as inference runs it.  Keeps the weights of the epoch with the
 * lowest validation loss (mpxkit_model_seq_loss on val).  Deterministic for
 * a seed.  -MPXKIT_EINVAL for an empty set or a bad setting.
 */
int mpxkit_model_seq_train(mpxkit_model *m, const mpxkit_seq_train_config *cfg,
			   const mpxkit_seq_set *train, const mpxkit_seq_set *val,
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
	float *w;      /* n loss weights (mean 1 per run and event; doc/estimators.md) */
} mpxkit_mlp_samples;

/* The feature_set of an mlp model's file: what its inputs are (doc/estimators.md, "mlp"). */
#define MPXKIT_MLP_FEATURE_SET 2

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

/* The same from a series, whose val may say which slices counted what (any schedule). */
int mpxkit_mlp_samples_add_series(mpxkit_mlp_samples *s, const mpxkit_layout *layout,
				  const mpxkit_series *run, const uint64_t *ocoe, size_t stride,
				  mpxkit_diag *diag);

/* Releases the rows; the struct may be reused after setting half again. */
void mpxkit_mlp_samples_free(mpxkit_mlp_samples *s);

/*
 * Estimates a whole run with an mlp model: out receives n_rotations rows of
 * n_events.  -MPXKIT_EINVAL (diag filled) when the model was not made for
 * these features.
 */
int mpxkit_mlp_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		   const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag);

/* The same over a series (any schedule). */
int mpxkit_mlp_run_series(const mpxkit_model *m, const mpxkit_layout *layout,
			  const mpxkit_series *run, double *out, mpxkit_diag *diag);

/*
 * The bigru estimator's data (lib/model/seq_samples.c): one sequence per run
 * and event, one row per rotation with the mlp's features (half-window
 * `half`), its target and its loss weight, so a recurrent model with the
 * mlp's feature_set and feature_param = half reads the event's whole series.
 */
typedef struct mpxkit_bigru_samples {
	unsigned half;		  /* set before the first add */
	size_t n_seq, n_rows;	  /* sequences and rows held */
	size_t cap_seq, cap_rows; /* room for */
	size_t *start;		  /* n_seq + 1 row offsets (mpxkit_seq_set.start) */
	float *x, *y, *w;	  /* n_rows rows of features, targets, weights */
} mpxkit_bigru_samples;

/* Appends the n_events sequences of one multiplexed run (arrays as for mpxkit_mlp_samples_add). */
int mpxkit_bigru_samples_add(mpxkit_bigru_samples *s, const mpxkit_layout *layout,
			     size_t n_rotations, const uint64_t *obs, const uint64_t *ref,
			     const uint64_t *ocoe, mpxkit_diag *diag);

/* The same from a series, whose val may say which slices counted what (any schedule). */
int mpxkit_bigru_samples_add_series(mpxkit_bigru_samples *s, const mpxkit_layout *layout,
				    const mpxkit_series *run, const uint64_t *ocoe,
				    mpxkit_diag *diag);

/* The samples as a training set; valid until the next add or free. */
mpxkit_seq_set mpxkit_bigru_samples_set(const mpxkit_bigru_samples *s);

/* Releases the rows; the struct may be reused after setting half again. */
void mpxkit_bigru_samples_free(mpxkit_bigru_samples *s);

/*
 * Estimates a run with a recurrent model, each event's series as one
 * sequence: out receives n_rotations rows of n_events (what bigru-full gives;
 * the bigru estimator carries the GRU along the run instead).  Any stretch
 * of a run is a run of its own.  Allocates the features of the whole
 * stretch (n_rotations x n_events rows).
 * -MPXKIT_EINVAL (diag filled) when the model is not recurrent or was not
 * made for these features.
 */
int mpxkit_bigru_run(const mpxkit_model *m, const mpxkit_layout *layout, size_t n_rotations,
		     const uint64_t *obs, const uint64_t *ref, double *out, mpxkit_diag *diag);

/* The same over a series (any schedule). */
int mpxkit_bigru_run_series(const mpxkit_model *m, const mpxkit_layout *layout,
			    const mpxkit_series *run, double *out, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Training a model: normalisation, Glorot initialisation, back-propagation, Adam, early stopping.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

#include "model_impl.h"

size_t model_grad_ws_len(const mpxkit_model *m)
{
	/* Activations of every level, a dropout factor per hidden unit, two delta rows. */
	return (2 * m->shape.n_layers + 3) * m->max_width;
}

double model_sample_grad(const mpxkit_model *m, const float *x, const float *y, float *grad,
			 float *ws, double dropout, uint64_t *rng)
{
	return model_sample_grad_w(m, x, y, 1.0f, MPXKIT_LOSS_MSE, grad, ws, dropout, rng);
}

double model_sample_grad_w(const mpxkit_model *m, const float *x, const float *y, float weight,
			   int loss_kind, float *grad, float *ws, double dropout, uint64_t *rng)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t L = s->n_layers, mw = m->max_width, ni = s->width[0], no = s->width[L];
	const float *p = m->params;
	float *a = ws;			 /* a + l * mw: output of level l, after dropout */
	float *keep = ws + (L + 1) * mw; /* keep + l * mw: factor of layer l's units */
	float *delta = keep + L * mw, *dprev = delta + mw;
	float keep_scale = dropout > 0.0 ? (float)(1.0 / (1.0 - dropout)) : 1.0f;
	double loss = 0.0;

	for (size_t i = 0; i < ni; i++)
		a[i] = (x[i] - p[i]) * p[ni + i];
	for (size_t l = 0; l < L; l++) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		const float *w = p + m->w_off[l], *b = w + n_out * n_in, *in = a + l * mw;
		float *out = a + (l + 1) * mw, *k = keep + l * mw;

		for (size_t o = 0; o < n_out; o++) {
			float acc = b[o];
			for (size_t i = 0; i < n_in; i++)
				acc += w[o * n_in + i] * in[i];
			out[o] = model_activate(s->activation[l], acc);
			k[o] = 1.0f;
			if (dropout > 0.0 && l + 1 < L)
				k[o] = model_next_unit(rng) < dropout ? 0.0f : keep_scale;
			out[o] *= k[o];
		}
	}
	const float *out_shift = p + 2 * ni, *out_scale = out_shift + no, *yh = a + L * mw;
	for (size_t j = 0; j < no; j++) {
		float t = (y[j] - out_shift[j]) / out_scale[j], d = yh[j] - t, dd;
		loss += (double)weight * model_output_loss(loss_kind, d, out_scale[j], &dd);
		delta[j] = weight * dd / (float)no * model_act_deriv(s->activation[L - 1], yh[j]);
	}
	for (size_t l = L; l-- > 0;) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		const float *w = p + m->w_off[l], *in = a + l * mw;
		float *gw = grad + m->w_off[l], *gb = gw + n_out * n_in;

		for (size_t o = 0; o < n_out; o++) {
			gb[o] += delta[o];
			for (size_t i = 0; i < n_in; i++)
				gw[o * n_in + i] += delta[o] * in[i];
		}
		if (l == 0)
			break;
		const float *k = keep + (l - 1) * mw;
		for (size_t i = 0; i < n_in; i++) {
			float sum = 0.0f;
			for (size_t o = 0; o < n_out; o++)
				sum += w[o * n_in + i] * delta[o];
			/* Undo the dropout factor to get the activation's own output back. */
			float v = k[i] != 0.0f ? in[i] / k[i] : 0.0f;
			dprev[i] = sum * k[i] * model_act_deriv(s->activation[l - 1], v);
		}
		float *t = delta;
		delta = dprev;
		dprev = t;
	}
	return loss / (double)no;
}

/* Mean and 1/standard deviation of each of the width columns of n rows. */
void model_fit_columns(size_t n, size_t width, const float *rows, float *shift, float *scale)
{
	for (size_t c = 0; c < width; c++) {
		double mean = 0.0, var = 0.0;
		for (size_t r = 0; r < n; r++)
			mean += rows[r * width + c];
		mean /= (double)n;
		for (size_t r = 0; r < n; r++) {
			double d = rows[r * width + c] - mean;
			var += d * d;
		}
		var /= (double)n;
		shift[c] = (float)mean;
		scale[c] = var > 1e-12 ? (float)(1.0 / sqrt(var)) : 1.0f;
	}
}

int mpxkit_model_init(mpxkit_model *m, const mpxkit_train_set *train, uint64_t seed,
		      mpxkit_diag *diag)
{
	const mpxkit_model_shape *s;
	uint64_t rng = seed;

	if (!m || !train || train->n == 0 || !train->x || !train->y)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: empty training set");
	if (mpxkit_model_is_recurrent(m))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "train: a recurrent model takes mpxkit_model_seq_init");
	s = &m->shape;
	size_t ni = s->width[0], no = s->width[s->n_layers];
	float *in_shift = model_in_shift(m), *out_shift = model_out_shift(m);
	model_fit_columns(train->n, ni, train->x, in_shift, in_shift + ni);
	/* Targets: out_scale is the standard deviation, as forward multiplies by it. */
	model_fit_columns(train->n, no, train->y, out_shift, out_shift + no);
	for (size_t j = 0; j < no; j++)
		out_shift[no + j] = 1.0f / out_shift[no + j];
	for (size_t l = 0; l < s->n_layers; l++) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		float *w = m->params + m->w_off[l];
		double lim = sqrt(6.0 / (double)(n_in + n_out));

		for (size_t i = 0; i < n_in * n_out; i++)
			w[i] = (float)((2.0 * model_next_unit(&rng) - 1.0) * lim);
		memset(w + n_in * n_out, 0, n_out * sizeof(float));
	}
	return 0;
}

double mpxkit_model_loss(const mpxkit_model *m, const mpxkit_train_set *set)
{
	return mpxkit_model_loss_as(m, set, MPXKIT_LOSS_MSE);
}

double mpxkit_model_loss_as(const mpxkit_model *m, const mpxkit_train_set *set, int loss_kind)
{
	size_t ni = m->shape.width[0], no = m->shape.width[m->shape.n_layers];
	const float *out_shift = m->params + 2 * ni, *out_scale = out_shift + no;
	float scratch[2 * MPXKIT_MODEL_MAX_WIDTH], out[MPXKIT_MODEL_MAX_WIDTH];
	double sum = 0.0, wsum = 0.0;

	if (mpxkit_model_is_recurrent(m))
		return NAN; /* its loss is over sequences: mpxkit_model_seq_loss */
	if (set->n == 0)
		return 0.0;
	for (size_t r = 0; r < set->n; r++) {
		double w = set->w ? (double)set->w[r] : 1.0;
		mpxkit_model_forward(m, set->x + r * ni, out, scratch);
		for (size_t j = 0; j < no; j++) {
			double d = ((double)out[j] - set->y[r * no + j]) / out_scale[j];
			float dd;
			sum += w * model_output_loss(loss_kind, d, out_scale[j], &dd) / (double)no;
		}
		wsum += w;
	}
	return wsum > 0.0 ? sum / wsum : 0.0;
}

static int check_config(const mpxkit_train_config *cfg, const mpxkit_train_set *train,
			const mpxkit_train_set *val, mpxkit_diag *diag)
{
	if (!train || train->n == 0 || !val || val->n == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: empty training or validation set");
	if (cfg->epochs == 0 || cfg->batch == 0 || !(cfg->learning_rate > 0.0))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "train: epochs, batch and learning rate must be positive");
	if (cfg->loss != MPXKIT_LOSS_MSE && cfg->loss != MPXKIT_LOSS_RA)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: unknown loss %d", cfg->loss);
	if (!(cfg->dropout >= 0.0 && cfg->dropout < 1.0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: dropout %g outside [0, 1)",
				   cfg->dropout);
	return 0;
}

int mpxkit_model_train(mpxkit_model *m, const mpxkit_train_config *cfg,
		       const mpxkit_train_set *train, const mpxkit_train_set *val,
		       mpxkit_train_report *report, mpxkit_diag *diag)
{
	size_t np, ni, no, n_norm;
	float *grad = NULL, *adam_m = NULL, *adam_v = NULL, *best = NULL, *ws = NULL;
	size_t *order = NULL;
	mpxkit_train_report rep = {0, 0, INFINITY};
	uint64_t rng;
	int rc;

	if (!m || !cfg)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: NULL argument");
	if (mpxkit_model_is_recurrent(m))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "train: a recurrent model takes mpxkit_model_seq_train");
	rc = check_config(cfg, train, val, diag);
	if (rc < 0)
		return rc;
	rng = cfg->seed ^ 0x5eedf00dull;
	np = m->n_params;
	ni = m->shape.width[0];
	no = m->shape.width[m->shape.n_layers];
	n_norm = 2 * ni + 2 * no;
	grad = calloc(np, sizeof(float));
	adam_m = calloc(np, sizeof(float));
	adam_v = calloc(np, sizeof(float));
	best = malloc(np * sizeof(float));
	ws = malloc(model_grad_ws_len(m) * sizeof(float));
	order = malloc(train->n * sizeof(size_t));
	if (!grad || !adam_m || !adam_v || !best || !ws || !order) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "train: out of memory");
		goto fail;
	}
	memcpy(best, m->params, np * sizeof(float));
	for (size_t i = 0; i < train->n; i++)
		order[i] = i;
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	double b1t = 1.0, b2t = 1.0;
	unsigned since_best = 0;
	for (unsigned ep = 1; ep <= cfg->epochs; ep++) {
		double train_loss = 0.0;
		/* Fisher-Yates from the seeded stream: the shuffle is part of the determinism. */
		for (size_t i = train->n; i > 1; i--) {
			size_t j = (size_t)(model_next_u64(&rng) % i), t = order[i - 1];
			order[i - 1] = order[j];
			order[j] = t;
		}
		for (size_t start = 0; start < train->n; start += cfg->batch) {
			size_t end = start + cfg->batch < train->n ? start + cfg->batch : train->n;
			memset(grad, 0, np * sizeof(float));
			for (size_t r = start; r < end; r++) {
				size_t s = order[r];
				float w = train->w ? train->w[s] : 1.0f;
				train_loss +=
				    model_sample_grad_w(m, train->x + s * ni, train->y + s * no, w,
							cfg->loss, grad, ws, cfg->dropout, &rng);
			}
			b1t *= b1;
			b2t *= b2;
			double lr = cfg->learning_rate * sqrt(1.0 - b2t) / (1.0 - b1t);
			float inv = 1.0f / (float)(end - start);
			for (size_t i = n_norm; i < np; i++) {
				float g = grad[i] * inv;
				adam_m[i] = (float)(b1 * adam_m[i] + (1.0 - b1) * g);
				adam_v[i] = (float)(b2 * adam_v[i] + (1.0 - b2) * g * g);
				m->params[i] -= (float)(lr * adam_m[i] / (sqrt(adam_v[i]) + eps));
			}
		}
		train_loss /= (double)train->n;
		double val_loss = mpxkit_model_loss_as(m, val, cfg->loss);
		rep.epochs_run = ep;
		if (val_loss < rep.best_val_loss) {
			rep.best_val_loss = val_loss;
			rep.best_epoch = ep;
			memcpy(best, m->params, np * sizeof(float));
			since_best = 0;
		} else {
			since_best++;
		}
		if (cfg->progress)
			cfg->progress(cfg->arg, ep, train_loss, val_loss);
		if (cfg->patience && since_best >= cfg->patience)
			break;
	}
	memcpy(m->params, best, np * sizeof(float));
	if (report)
		*report = rep;
	rc = 0;
fail:
	free(grad);
	free(adam_m);
	free(adam_v);
	free(best);
	free(ws);
	free(order);
	return rc;
}

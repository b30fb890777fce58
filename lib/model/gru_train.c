/* SPDX-License-Identifier: BSD-3-Clause */
/* Training on sequences: initialisation, the validation loss, truncated back-propagation through
 * time with Adam and early stopping. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

#include "model_impl.h"

/* Rows of the set, after checking that it is well formed. */
static int check_set(const mpxkit_seq_set *set, const char *what, size_t *rows, mpxkit_diag *diag)
{
	if (!set || !set->start || set->start[0] != 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: %s set has no sequence table",
				   what);
	for (size_t i = 0; i < set->n_seq; i++)
		if (set->start[i + 1] < set->start[i])
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "train: %s sequence %zu ends before it starts", what, i);
	*rows = set->start[set->n_seq];
	if (*rows && (!set->x || !set->y))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: %s set has rows but no data", what);
	if (set->w)
		for (size_t r = 0; r < *rows; r++)
			if (!(set->w[r] >= 0.0f) || !isfinite(set->w[r]))
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "train: %s weight of row %zu is %g", what, r,
						   (double)set->w[r]);
	return 0;
}

static size_t longest(const mpxkit_seq_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n_seq; i++)
		if (set->start[i + 1] - set->start[i] > n)
			n = set->start[i + 1] - set->start[i];
	return n;
}

static void fill_uniform(float *w, size_t n, double lim, uint64_t *rng)
{
	for (size_t i = 0; i < n; i++)
		w[i] = (float)((2.0 * model_next_unit(rng) - 1.0) * lim);
}

int mpxkit_model_seq_init(mpxkit_model *m, const mpxkit_seq_set *train, uint64_t seed,
			  mpxkit_diag *diag)
{
	uint64_t rng = seed;
	size_t rows;
	int rc;

	if (!m)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: NULL model");
	rc = check_set(train, "training", &rows, diag);
	if (rc < 0)
		return rc;
	if (rows == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: empty training set");
	const mpxkit_model_shape *s = &m->shape;
	size_t ni = s->width[0], no = s->width[s->n_layers];
	float *in_shift = model_in_shift(m), *out_shift = model_out_shift(m);
	model_fit_columns(rows, ni, train->x, in_shift, in_shift + ni);
	/* Targets: out_scale is the standard deviation, as the forward pass multiplies by it. */
	model_fit_columns(rows, no, train->y, out_shift, out_shift + no);
	for (size_t j = 0; j < no; j++)
		out_shift[no + j] = 1.0f / out_shift[no + j];
	for (size_t l = 0; l < s->n_layers; l++) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		float *w = m->params + m->w_off[l];

		if (s->type[l] == MPXKIT_LAYER_BIGRU) {
			size_t hid = n_out / 2, dl = model_gru_dir_len(n_in, hid);
			double lim = 1.0 / sqrt((double)hid);

			for (int d = 0; d < 2; d++, w += dl) {
				/* W_x and W_h drawn, b_x and b_h zero. */
				fill_uniform(w, 3 * hid * (n_in + hid), lim, &rng);
				memset(w + 3 * hid * (n_in + hid), 0, 6 * hid * sizeof(float));
			}
			continue;
		}
		fill_uniform(w, n_in * n_out, sqrt(6.0 / (double)(n_in + n_out)), &rng);
		memset(w + n_in * n_out, 0, n_out * sizeof(float));
	}
	return 0;
}

int mpxkit_model_seq_loss(const mpxkit_model *m, const mpxkit_seq_set *set, int loss_kind,
			  double *loss, mpxkit_diag *diag)
{
	float *scratch = NULL, *out = NULL;
	double sum = 0.0, wsum = 0.0;
	size_t rows, ni, no, n;
	int rc;

	if (!m || !loss)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: NULL argument");
	rc = check_set(set, "scored", &rows, diag);
	if (rc < 0)
		return rc;
	ni = m->shape.width[0];
	no = m->shape.width[m->shape.n_layers];
	n = longest(set);
	const float *out_scale = m->params + 2 * ni + no;
	scratch = malloc(mpxkit_model_seq_scratch_len(m, n) * sizeof(float));
	out = malloc((n ? n : 1) * no * sizeof(float));
	if (!scratch || !out) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "train: out of memory for %zu steps", n);
		goto fail;
	}
	for (size_t i = 0; i < set->n_seq; i++) {
		size_t r0 = set->start[i], len = set->start[i + 1] - r0;

		if (len == 0)
			continue;
		mpxkit_model_forward_seq(m, len, set->x + r0 * ni, out, scratch);
		for (size_t t = 0; t < len; t++) {
			double wgt = set->w ? set->w[r0 + t] : 1.0, e = 0.0;
			for (size_t j = 0; j < no; j++) {
				double d = ((double)out[t * no + j] - set->y[(r0 + t) * no + j]) /
					   out_scale[j];
				float dd;
				e += model_output_loss(loss_kind, d, out_scale[j], &dd);
			}
			sum += wgt * e / (double)no;
			wsum += wgt;
		}
	}
	*loss = wsum > 0.0 ? sum / wsum : 0.0;
	rc = 0;
fail:
	free(scratch);
	free(out);
	return rc;
}

/* A training window: rows first .. first + len - 1 of the set. */
typedef struct window {
	size_t first, len;
} window;

/*
 * Windows of len steps every stride steps in each sequence, and one more
 * that ends at the sequence's end when the stride does not land there; a
 * sequence no longer than a window is one window.  *out is malloc'd.
 */
static int make_windows(const mpxkit_seq_set *set, size_t len, size_t stride, window **out,
			size_t *n_out)
{
	size_t n = 0, cap = 0;
	window *w = NULL;

	for (size_t i = 0; i < set->n_seq; i++) {
		size_t r0 = set->start[i], sl = set->start[i + 1] - r0, at = 0;

		while (at < sl) {
			size_t wl = len && sl - at > len ? len : sl - at;
			if (len && wl < len && sl >= len) /* the tail: a full window ending at sl */
				at = sl - len, wl = len;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 64;
				window *t = realloc(w, nc * sizeof(*w));
				if (!t) {
					free(w);
					return -MPXKIT_ENOMEM;
				}
				w = t, cap = nc;
			}
			w[n].first = r0 + at;
			w[n++].len = wl;
			if (at + wl >= sl)
				break;
			at += stride;
		}
	}
	*out = w;
	*n_out = n;
	return 0;
}

static int check_config(const mpxkit_seq_train_config *cfg, mpxkit_diag *diag)
{
	const mpxkit_train_config *b = &cfg->base;

	if (b->epochs == 0 || b->batch == 0 || !(b->learning_rate > 0.0))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "train: epochs, batch and learning rate must be positive");
	if (!(b->dropout >= 0.0 && b->dropout < 1.0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: dropout %g outside [0, 1)",
				   b->dropout);
	if (b->loss != MPXKIT_LOSS_MSE && b->loss != MPXKIT_LOSS_RA)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: unknown loss %d", b->loss);
	if (!(cfg->clip >= 0.0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: gradient clip %g is negative",
				   cfg->clip);
	return 0;
}

/* The training state: Adam's moments, the best weights, the gradient and its workspace. */
typedef struct trainer {
	float *grad, *adam_m, *adam_v, *best, *ws;
	window *win;
	size_t n_win;
	double b1t, b2t;
} trainer;

static void trainer_free(trainer *t)
{
	free(t->grad);
	free(t->adam_m);
	free(t->adam_v);
	free(t->best);
	free(t->ws);
	free(t->win);
}

/* Sum of w x squared error of one batch of windows; the gradient of that sum lands in grad. */
static double batch_grad(const mpxkit_model *m, const mpxkit_seq_train_config *cfg,
			 const mpxkit_seq_set *set, trainer *t, size_t from, size_t to,
			 uint64_t *rng, double *wsum)
{
	size_t ni = m->shape.width[0], no = m->shape.width[m->shape.n_layers];
	double loss = 0.0;

	*wsum = 0.0;
	memset(t->grad, 0, m->n_params * sizeof(float));
	for (size_t b = from; b < to; b++) {
		const window *w = &t->win[b];
		double ws = 0.0;

		loss += model_seq_grad(m, w->len, set->x + w->first * ni, set->y + w->first * no,
				       set->w ? set->w + w->first : NULL, cfg->base.loss, t->grad,
				       t->ws, cfg->base.dropout, rng, &ws);
		*wsum += ws;
	}
	return loss;
}

/* One Adam step on the mean gradient (grad / wsum), clipped to cfg->clip in norm. */
static void adam_step(mpxkit_model *m, const mpxkit_seq_train_config *cfg, trainer *t, double wsum)
{
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	size_t n_norm = 2 * m->shape.width[0] + 2 * m->shape.width[m->shape.n_layers];
	double inv = 1.0 / wsum;

	if (cfg->clip > 0.0) {
		double norm = 0.0;
		for (size_t i = n_norm; i < m->n_params; i++)
			norm += (double)t->grad[i] * t->grad[i];
		norm = sqrt(norm) * inv;
		if (norm > cfg->clip)
			inv *= cfg->clip / norm;
	}
	t->b1t *= b1;
	t->b2t *= b2;
	double lr = cfg->base.learning_rate * sqrt(1.0 - t->b2t) / (1.0 - t->b1t);
	for (size_t i = n_norm; i < m->n_params; i++) {
		float g = (float)(t->grad[i] * inv);
		t->adam_m[i] = (float)(b1 * t->adam_m[i] + (1.0 - b1) * g);
		t->adam_v[i] = (float)(b2 * t->adam_v[i] + (1.0 - b2) * g * g);
		m->params[i] -= (float)(lr * t->adam_m[i] / (sqrt(t->adam_v[i]) + eps));
	}
}

static int trainer_init(trainer *t, const mpxkit_model *m, const mpxkit_seq_train_config *cfg,
			const mpxkit_seq_set *train, mpxkit_diag *diag)
{
	size_t np = m->n_params, longest_win = 0;
	size_t stride = cfg->stride ? cfg->stride : cfg->window;

	memset(t, 0, sizeof(*t));
	t->b1t = t->b2t = 1.0;
	if (make_windows(train, cfg->window, stride, &t->win, &t->n_win) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "train: out of memory for windows");
	if (t->n_win == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: empty training set");
	for (size_t i = 0; i < t->n_win; i++)
		if (t->win[i].len > longest_win)
			longest_win = t->win[i].len;
	t->grad = calloc(np, sizeof(float));
	t->adam_m = calloc(np, sizeof(float));
	t->adam_v = calloc(np, sizeof(float));
	t->best = malloc(np * sizeof(float));
	t->ws = malloc(model_seq_grad_ws_len(m, longest_win) * sizeof(float));
	if (!t->grad || !t->adam_m || !t->adam_v || !t->best || !t->ws)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "train: out of memory");
	memcpy(t->best, m->params, np * sizeof(float));
	return 0;
}

int mpxkit_model_seq_train(mpxkit_model *m, const mpxkit_seq_train_config *cfg,
			   const mpxkit_seq_set *train, const mpxkit_seq_set *val,
			   mpxkit_train_report *report, mpxkit_diag *diag)
{
	mpxkit_train_report rep = {0, 0, INFINITY};
	size_t rows_train, rows_val;
	unsigned since_best = 0;
	trainer t;
	uint64_t rng;
	int rc;

	if (!m || !cfg)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: NULL argument");
	rc = check_config(cfg, diag);
	if (rc == 0)
		rc = check_set(train, "training", &rows_train, diag);
	if (rc == 0)
		rc = check_set(val, "validation", &rows_val, diag);
	if (rc < 0)
		return rc;
	if (rows_train == 0 || rows_val == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "train: empty training or validation set");
	rc = trainer_init(&t, m, cfg, train, diag);
	if (rc < 0)
		goto fail;
	rng = cfg->base.seed ^ 0x6e0a5eedull;
	for (unsigned ep = 1; ep <= cfg->base.epochs; ep++) {
		double train_loss = 0.0, train_w = 0.0, val_loss;

		/* Fisher-Yates from the seeded stream: the shuffle is part of the determinism. */
		for (size_t i = t.n_win; i > 1; i--) {
			size_t j = (size_t)(model_next_u64(&rng) % i);
			window tmp = t.win[i - 1];
			t.win[i - 1] = t.win[j];
			t.win[j] = tmp;
		}
		for (size_t from = 0; from < t.n_win; from += cfg->base.batch) {
			size_t to =
			    from + cfg->base.batch < t.n_win ? from + cfg->base.batch : t.n_win;
			double wsum;

			train_loss += batch_grad(m, cfg, train, &t, from, to, &rng, &wsum);
			train_w += wsum;
			if (wsum > 0.0)
				adam_step(m, cfg, &t, wsum);
		}
		train_loss = train_w > 0.0 ? train_loss / train_w : 0.0;
		rc = mpxkit_model_seq_loss(m, val, cfg->base.loss, &val_loss, diag);
		if (rc < 0)
			goto fail;
		rep.epochs_run = ep;
		if (val_loss < rep.best_val_loss) {
			rep.best_val_loss = val_loss;
			rep.best_epoch = ep;
			memcpy(t.best, m->params, m->n_params * sizeof(float));
			since_best = 0;
		} else {
			since_best++;
		}
		if (cfg->base.progress)
			cfg->base.progress(cfg->base.arg, ep, train_loss, val_loss);
		if (cfg->base.patience && since_best >= cfg->base.patience)
			break;
	}
	memcpy(m->params, t.best, m->n_params * sizeof(float));
	if (report)
		*report = rep;
	rc = 0;
fail:
	trainer_free(&t);
	return rc;
}

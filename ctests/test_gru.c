/* SPDX-License-Identifier: BSD-3-Clause */
/* Bidirectional GRU models: the sequence forward pass against a double-precision reference
 * written gate by gate, back-propagation through time against central differences, and
 * training (determinism, a task that needs look-ahead). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/model.h"

#include "model_impl.h" /* model_seq_grad, for the gradient check */

static uint64_t rng_state = 0x243f6a8885a308d3ull;

/* Values exactly representable in float, so both sides start from the same numbers. */
static double frand(double scale)
{
	return (double)(float)(cutest_urand(&rng_state) * scale);
}

/* --- the reference: every gate its own named array, double precision --- */

#define RL 4  /* layers at most */
#define RW 12 /* width at most */
#define RH 6  /* GRU hidden units per direction at most */
#define RT 24 /* steps at most */

typedef struct ref_gru_dir {
	/* input weights and biases of the reset, update and candidate gates */
	double w_ir[RH][RW], w_iz[RH][RW], w_in[RH][RW], b_ir[RH], b_iz[RH], b_in[RH];
	/* recurrent weights and biases */
	double w_hr[RH][RH], w_hz[RH][RH], w_hn[RH][RH], b_hr[RH], b_hz[RH], b_hn[RH];
} ref_gru_dir;

typedef struct refnet {
	size_t n_layers, w[RL + 1];
	int type[RL], act[RL];
	double in_shift[RW], in_scale[RW], out_shift[RW], out_scale[RW];
	double W[RL][RW][RW], b[RL][RW]; /* dense layers */
	ref_gru_dir dir[RL][2];		 /* GRU layers: forward, backward */
} refnet;

static double sigm(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double ref_act(int a, double x)
{
	if (a == MPXKIT_ACT_RELU)
		return x > 0 ? x : 0;
	if (a == MPXKIT_ACT_TANH)
		return tanh(x);
	if (a == MPXKIT_ACT_SIGMOID)
		return sigm(x);
	return x;
}

/* One GRU direction over in[0..T-1] (in processing order given by `order`), PyTorch's equations. */
static void ref_direction(const ref_gru_dir *d, size_t n_in, size_t H, size_t T, int backward,
			  double in[RT][RW], double out[RT][RW], size_t col)
{
	double h[RH] = {0};

	for (size_t s = 0; s < T; s++) {
		size_t t = backward ? T - 1 - s : s;
		double r[RH], z[RH], n[RH], hn[RH];

		for (size_t j = 0; j < H; j++) {
			double sr = d->b_ir[j] + d->b_hr[j], sz = d->b_iz[j] + d->b_hz[j];
			double sn = d->b_in[j];
			hn[j] = d->b_hn[j];
			for (size_t i = 0; i < n_in; i++) {
				sr += d->w_ir[j][i] * in[t][i];
				sz += d->w_iz[j][i] * in[t][i];
				sn += d->w_in[j][i] * in[t][i];
			}
			for (size_t k = 0; k < H; k++) {
				sr += d->w_hr[j][k] * h[k];
				sz += d->w_hz[j][k] * h[k];
				hn[j] += d->w_hn[j][k] * h[k];
			}
			r[j] = sigm(sr);
			z[j] = sigm(sz);
			n[j] = tanh(sn + r[j] * hn[j]);
		}
		for (size_t j = 0; j < H; j++) {
			h[j] = (1.0 - z[j]) * n[j] + z[j] * h[j];
			out[t][col + j] = h[j];
		}
	}
}

static void ref_forward(const refnet *r, size_t T, const double *x, double *y)
{
	static double cur[RT][RW], next[RT][RW];

	for (size_t t = 0; t < T; t++)
		for (size_t i = 0; i < r->w[0]; i++)
			cur[t][i] = (x[t * r->w[0] + i] - r->in_shift[i]) * r->in_scale[i];
	for (size_t l = 0; l < r->n_layers; l++) {
		size_t ni = r->w[l], no = r->w[l + 1];
		if (r->type[l] == MPXKIT_LAYER_BIGRU) {
			ref_direction(&r->dir[l][0], ni, no / 2, T, 0, cur, next, 0);
			ref_direction(&r->dir[l][1], ni, no / 2, T, 1, cur, next, no / 2);
		} else {
			for (size_t t = 0; t < T; t++)
				for (size_t o = 0; o < no; o++) {
					double s = r->b[l][o];
					for (size_t i = 0; i < ni; i++)
						s += r->W[l][o][i] * cur[t][i];
					next[t][o] = ref_act(r->act[l], s);
				}
		}
		memcpy(cur, next, sizeof(cur));
	}
	for (size_t t = 0; t < T; t++)
		for (size_t j = 0; j < r->w[r->n_layers]; j++)
			y[t * r->w[r->n_layers] + j] =
			    cur[t][j] * r->out_scale[j] + r->out_shift[j];
}

/*
 * The model for the reference: the shape, then its parameters written into
 * the model's block in the order doc/model-format.md gives.  where[] (if not
 * NULL) receives, for each block index, a pointer to the reference's copy.
 */
static mpxkit_model *build(refnet *r, double wscale, double **where)
{
	mpxkit_model_shape s = {.n_layers = r->n_layers};
	mpxkit_model *m = NULL;
	size_t np, k = 0;

	for (size_t l = 0; l <= r->n_layers; l++)
		s.width[l] = r->w[l];
	for (size_t l = 0; l < r->n_layers; l++) {
		s.type[l] = r->type[l];
		s.activation[l] = r->act[l];
	}
	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	float *p = mpxkit_model_params(m, &np);
#define PUT(ref, v)                                                                                \
	do {                                                                                       \
		(ref) = (v);                                                                       \
		if (where)                                                                         \
			where[k] = &(ref);                                                         \
		p[k++] = (float)(ref);                                                             \
	} while (0)
	for (size_t i = 0; i < r->w[0]; i++)
		PUT(r->in_shift[i], frand(1));
	for (size_t i = 0; i < r->w[0]; i++)
		PUT(r->in_scale[i], 0.5 + fabs(frand(1)));
	size_t no = r->w[r->n_layers];
	for (size_t j = 0; j < no; j++)
		PUT(r->out_shift[j], frand(2));
	for (size_t j = 0; j < no; j++)
		PUT(r->out_scale[j], 0.5 + fabs(frand(2)));
	for (size_t l = 0; l < r->n_layers; l++) {
		size_t ni = r->w[l], nout = r->w[l + 1];
		double sc = wscale / sqrt((double)ni);
		if (r->type[l] != MPXKIT_LAYER_BIGRU) {
			for (size_t o = 0; o < nout; o++)
				for (size_t i = 0; i < ni; i++)
					PUT(r->W[l][o][i], frand(sc));
			for (size_t o = 0; o < nout; o++)
				PUT(r->b[l][o], frand(0.5));
			continue;
		}
		size_t H = nout / 2;
		double hs = wscale / sqrt((double)H);
		for (int dd = 0; dd < 2; dd++) {
			ref_gru_dir *d = &r->dir[l][dd];
			/* W_x input-major: for each input, the r, z, n weights of every unit */
			for (size_t i = 0; i < ni; i++) {
				for (size_t j = 0; j < H; j++)
					PUT(d->w_ir[j][i], frand(sc));
				for (size_t j = 0; j < H; j++)
					PUT(d->w_iz[j][i], frand(sc));
				for (size_t j = 0; j < H; j++)
					PUT(d->w_in[j][i], frand(sc));
			}
			/* W_h the same, per unit of the previous state */
			for (size_t q = 0; q < H; q++) {
				for (size_t j = 0; j < H; j++)
					PUT(d->w_hr[j][q], frand(hs));
				for (size_t j = 0; j < H; j++)
					PUT(d->w_hz[j][q], frand(hs));
				for (size_t j = 0; j < H; j++)
					PUT(d->w_hn[j][q], frand(hs));
			}
			for (size_t j = 0; j < H; j++)
				PUT(d->b_ir[j], frand(0.5));
			for (size_t j = 0; j < H; j++)
				PUT(d->b_iz[j], frand(0.5));
			for (size_t j = 0; j < H; j++)
				PUT(d->b_in[j], frand(0.5));
			for (size_t j = 0; j < H; j++)
				PUT(d->b_hr[j], frand(0.5));
			for (size_t j = 0; j < H; j++)
				PUT(d->b_hz[j], frand(0.5));
			for (size_t j = 0; j < H; j++)
				PUT(d->b_hn[j], frand(0.5));
		}
	}
#undef PUT
	CU_ASSERT_FATAL(k == np);
	return m;
}

static mpxkit_model *roundtrip(const mpxkit_model *m)
{
	void *enc = NULL;
	size_t len = 0;
	mpxkit_model *m2 = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_FATAL(mpxkit_model_encode(m, &enc, &len, NULL) == 0);
	CU_ASSERT_EQUAL(((unsigned char *)enc)[4], 2); /* a GRU makes a version 2 file */
	int rc = mpxkit_model_load_buffer(&m2, enc, len, "mem", &d);
	if (rc)
		fprintf(stderr, "%s\n", d.msg);
	CU_ASSERT_FATAL(rc == 0);
	free(enc);
	return m2;
}

/* The model's output over rows first .. first + T - 1 of x against the reference's. */
static void compare(const mpxkit_model *m, const refnet *r, size_t T, const double *x,
		    const char *what)
{
	size_t ni = r->w[0], no = r->w[r->n_layers];
	float *xf = malloc(T * ni * sizeof(float)), *yf = malloc(T * no * sizeof(float));
	double *y = malloc(T * no * sizeof(double));
	/* Exactly the announced length, so ASan and valgrind see any overrun. */
	float *scratch = malloc(mpxkit_model_seq_scratch_len(m, T) * sizeof(float));

	for (size_t i = 0; i < T * ni; i++)
		xf[i] = (float)x[i];
	ref_forward(r, T, x, y);
	mpxkit_model_forward_seq(m, T, xf, yf, scratch);
	for (size_t i = 0; i < T * no; i++) {
		double tol = 2e-5 * (1 + fabs(y[i]));
		if (fabs(yf[i] - y[i]) > tol)
			fprintf(stderr, "%s: T %zu out %zu: %.9g vs %.9g\n", what, T, i, yf[i],
				y[i]);
		CU_ASSERT(fabs(yf[i] - y[i]) <= tol);
	}
	free(xf);
	free(yf);
	free(y);
	free(scratch);
}

static void random_shape(refnet *r, int trial)
{
	memset(r, 0, sizeof(*r));
	/* Alternate: GRU first; dense then GRU; GRU then GRU. */
	switch (trial % 3) {
	case 0:
		r->n_layers = 3;
		r->type[0] = MPXKIT_LAYER_BIGRU, r->type[1] = r->type[2] = MPXKIT_LAYER_DENSE;
		break;
	case 1:
		r->n_layers = 3;
		r->type[1] = MPXKIT_LAYER_BIGRU, r->type[0] = r->type[2] = MPXKIT_LAYER_DENSE;
		break;
	default:
		r->n_layers = 3;
		r->type[0] = r->type[1] = MPXKIT_LAYER_BIGRU, r->type[2] = MPXKIT_LAYER_DENSE;
		break;
	}
	for (size_t l = 0; l <= r->n_layers; l++)
		r->w[l] = 1 + (size_t)((cutest_urand(&rng_state) + 1) * 0.5 * (RW - 1));
	for (size_t l = 0; l < r->n_layers; l++) {
		if (r->type[l] == MPXKIT_LAYER_BIGRU)
			r->w[l + 1] =
			    2 * (1 + (size_t)((cutest_urand(&rng_state) + 1) * 0.5 * (RH - 1)));
		else
			r->act[l] = (trial + (int)l) % 4;
	}
}

static void test_forward_random(void)
{
	static refnet r;
	static double x[RT * RW];

	for (int trial = 0; trial < 30; trial++) {
		random_shape(&r, trial);
		mpxkit_model *m = build(&r, 1.5, NULL);
		mpxkit_model *m2 = roundtrip(m);
		CU_ASSERT(mpxkit_model_is_recurrent(m2));
		for (int rep = 0; rep < 3; rep++) {
			size_t T = 1 + (size_t)((cutest_urand(&rng_state) + 1) * 0.5 * (RT - 1));
			for (size_t i = 0; i < T * r.w[0]; i++)
				x[i] = frand(3);
			compare(m2, &r, T, x, "whole");
			/* Any window of the series is a sequence of its own. */
			size_t a = T / 3, b = T - T / 4;
			compare(m2, &r, b - a, x + a * r.w[0], "window");
		}
		mpxkit_model_free(m2);
		mpxkit_model_free(m);
	}
}

/* mpxkit_model_forward on a GRU model is the sequence of one step, in its own scratch. */
static void test_single_step(void)
{
	static refnet r;
	double x[RW], y[RW];
	float xf[RW], yf[RW];

	random_shape(&r, 0);
	mpxkit_model *m = build(&r, 1.5, NULL);
	float *scratch = malloc(mpxkit_model_scratch_len(m) * sizeof(float));
	CU_ASSERT_EQUAL(mpxkit_model_scratch_len(m), mpxkit_model_seq_scratch_len(m, 1));
	for (size_t i = 0; i < r.w[0]; i++)
		xf[i] = (float)(x[i] = frand(2));
	ref_forward(&r, 1, x, y);
	mpxkit_model_forward(m, xf, yf, scratch);
	for (size_t j = 0; j < r.w[r.n_layers]; j++)
		CU_ASSERT(fabs(yf[j] - y[j]) <= 2e-5 * (1 + fabs(y[j])));
	free(scratch);
	mpxkit_model_free(m);
}

/*
 * A GRU with one unit per direction and one input, weights picked so the
 * result can be followed by hand: only the candidate path is open
 * (W_ir = W_hr = 0 with b_ir = b_hr large gives r ~ 1; W_iz = 0, b_iz = b_hz
 * = 0 gives z = 1/2).  Forward: h1 = n1/2 with n1 = tanh(x1);
 * h2 = (n2 + h1)/2 with n2 = tanh(x2 + 1 * (w_hn h1)).
 */
static void test_by_hand(void)
{
	mpxkit_model_shape s = {.n_layers = 1, .width = {1, 2}, .type = {MPXKIT_LAYER_BIGRU}};
	mpxkit_model *m = NULL;
	size_t np;

	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	float *p = mpxkit_model_params(m, &np);
	CU_ASSERT_FATAL(np == 6 + 2 * 3 * (1 + 1 + 2)); /* 2 ni + 2 no, then two directions */
	/* in_shift 0, in_scale 1, out_shift 0 0, out_scale 1 1: set by mpxkit_model_new. */
	CU_ASSERT_EQUAL(p[1], 1.0f);
	CU_ASSERT_EQUAL(p[4], 1.0f);
	for (int d = 0; d < 2; d++) {
		float *q = p + 6 + d * 12;
		/* W_x r, z, n | W_h r, z, n | b_x r, z, n | b_h r, z, n */
		const float v[12] = {0, 0, 1, 0, 0, d ? 2.0f : 0.5f, 20, 0, 0, 20, 0, 0};
		memcpy(q, v, sizeof(v));
	}
	float x[2] = {0.3f, -0.7f}, y[4], scratch[16];
	CU_ASSERT_FATAL(mpxkit_model_seq_scratch_len(m, 2) <= 16);
	mpxkit_model_forward_seq(m, 2, x, y, scratch);
	double r = 1.0 / (1.0 + exp(-40.0));
	/* forward direction, w_hn = 0.5 */
	double f1 = tanh(0.3) / 2, f2 = (tanh(-0.7 + r * 0.5 * f1) + f1) / 2;
	/* backward direction, w_hn = 2, from the last step */
	double b2 = tanh(-0.7) / 2, b1 = (tanh(0.3 + r * 2 * b2) + b2) / 2;
	CU_ASSERT_DOUBLE_EQUAL(y[0], f1, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(y[1], b1, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(y[2], f2, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(y[3], b2, 1e-6);
	mpxkit_model_free(m);
}

/* --- gradients --- */

/*
 * The test's own loss: sum over steps of w_t x mean over outputs of
 * ((ref - y) / out_scale)^2, or for MPXKIT_LOSS_RA of |10^(ref - y) - 1|
 * (the error in the model's own output units).
 */
static double ref_loss(const refnet *r, int kind, size_t T, const double *x, const double *y,
		       const double *w)
{
	size_t no = r->w[r->n_layers];
	double out[RT * RW], s = 0.0;

	ref_forward(r, T, x, out);
	for (size_t t = 0; t < T; t++) {
		double e = 0.0;
		for (size_t j = 0; j < no; j++) {
			double err = out[t * no + j] - y[t * no + j], d = err / r->out_scale[j];
			e += kind == MPXKIT_LOSS_RA ? fabs(pow(10.0, err) - 1.0) : d * d;
		}
		s += w[t] * e / (double)no;
	}
	return s;
}

static void check_gradient(refnet *r, int kind, size_t T, const char *what, int need_big)
{
	static double *where[8192];
	static double x[RT * RW], y[RT * RW], w[RT];
	static float xf[RT * RW], yf[RT * RW], wf[RT];
	size_t ni = r->w[0], no = r->w[r->n_layers], np;
	size_t n_norm = 2 * ni + 2 * no, bad = 0, big = 0;

	mpxkit_model *m = build(r, 1.2, where);
	mpxkit_model_params(m, &np);
	CU_ASSERT_FATAL(np <= 8192);
	for (size_t i = 0; i < T * ni; i++)
		xf[i] = (float)(x[i] = frand(2));
	for (size_t i = 0; i < T * no; i++)
		yf[i] = (float)(y[i] = frand(2));
	if (kind == MPXKIT_LOSS_RA) {
		/* Targets within 1 of the outputs: the RA loss's gradient is clipped past 3. */
		ref_forward(r, T, x, y);
		for (size_t i = 0; i < T * no; i++)
			yf[i] = (float)(y[i] = (double)(float)(y[i] + frand(1)));
	}
	for (size_t t = 0; t < T; t++)
		wf[t] = (float)(w[t] = fabs(frand(2)));
	float *grad = calloc(np, sizeof(float));
	float *ws = malloc(model_seq_grad_ws_len(m, T) * sizeof(float));
	double wsum = 0.0, want_wsum = 0.0;
	double loss = model_seq_grad(m, T, xf, yf, wf, kind, grad, ws, 0.0, NULL, &wsum);
	for (size_t t = 0; t < T; t++)
		want_wsum += w[t];
	CU_ASSERT_DOUBLE_EQUAL(wsum, want_wsum, 1e-9 * want_wsum);
	CU_ASSERT_DOUBLE_EQUAL(loss, ref_loss(r, kind, T, x, y, w), 1e-4 * (1 + loss));
	/* Central differences in double on the test's own network, every trained parameter. */
	const double h = 1e-6;
	for (size_t k = n_norm; k < np; k++) {
		double save = *where[k];
		*where[k] = save + h;
		double lp = ref_loss(r, kind, T, x, y, w);
		*where[k] = save - h;
		double lm = ref_loss(r, kind, T, x, y, w);
		*where[k] = save;
		double num = (lp - lm) / (2 * h), tol = 1e-4 + 2e-3 * fabs(num);
		if (fabs(grad[k] - num) > tol) {
			if (bad++ < 10)
				fprintf(stderr, "%s: parameter %zu: %g vs %g\n", what, k, grad[k],
					num);
		}
		big += fabs(num) > 1e-2;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* Not a vacuous pass: most gradients are well above the tolerance. */
	if (need_big)
		CU_ASSERT(big > (np - n_norm) / 2);
	/* The normalisation is not trained. */
	for (size_t i = 0; i < n_norm; i++)
		CU_ASSERT_EQUAL(grad[i], 0.0f);
	free(grad);
	free(ws);
	mpxkit_model_free(m);
}

static void test_gradient(void)
{
	static refnet r;

	/* dense (tanh) -> GRU -> dense (sigmoid) -> dense: the GRU's input gradient is used. */
	memset(&r, 0, sizeof(r));
	r.n_layers = 4;
	const size_t w1[5] = {3, 4, 6, 5, 2};
	const int t1[4] = {MPXKIT_LAYER_DENSE, MPXKIT_LAYER_BIGRU, MPXKIT_LAYER_DENSE,
			   MPXKIT_LAYER_DENSE};
	const int a1[4] = {MPXKIT_ACT_TANH, MPXKIT_ACT_IDENTITY, MPXKIT_ACT_SIGMOID,
			   MPXKIT_ACT_IDENTITY};
	memcpy(r.w, w1, sizeof(w1));
	memcpy(r.type, t1, sizeof(t1));
	memcpy(r.act, a1, sizeof(a1));
	check_gradient(&r, MPXKIT_LOSS_MSE, 7, "dense-gru-dense-dense", 1);
	check_gradient(&r, MPXKIT_LOSS_RA, 7, "dense-gru-dense-dense, RA loss", 1);

	/* GRU -> GRU -> dense, the shape a stacked model would have, over a longer sequence. */
	memset(&r, 0, sizeof(r));
	r.n_layers = 3;
	const size_t w2[4] = {4, 6, 4, 1};
	memcpy(r.w, w2, sizeof(w2));
	r.type[0] = r.type[1] = MPXKIT_LAYER_BIGRU, r.type[2] = MPXKIT_LAYER_DENSE;
	check_gradient(&r, MPXKIT_LOSS_MSE, 13, "gru-gru-dense", 1);
	check_gradient(&r, MPXKIT_LOSS_RA, 13, "gru-gru-dense, RA loss", 1);

	/* One step: no recurrence at all, W_h has no gradient, b_h does. */
	memset(&r, 0, sizeof(r));
	r.n_layers = 2;
	const size_t w3[3] = {2, 4, 3};
	memcpy(r.w, w3, sizeof(w3));
	r.type[0] = MPXKIT_LAYER_BIGRU, r.type[1] = MPXKIT_LAYER_DENSE;
	r.act[1] = MPXKIT_ACT_TANH;
	check_gradient(&r, MPXKIT_LOSS_MSE, 1, "one step", 0);
}

/* --- training --- */

#define NSEQ	48
#define SEQ_LEN 40

static float gx[NSEQ * SEQ_LEN], gy[NSEQ * SEQ_LEN], gw[NSEQ * SEQ_LEN];
static size_t gstart[NSEQ + 1];

/*
 * A task only look-ahead solves: y_t = x_{t+1} - 0.5 x_t on white noise.  The
 * last step of each sequence has no x_{t+1}: its weight is 0.
 */
static void make_lookahead(void)
{
	for (size_t s = 0; s <= NSEQ; s++)
		gstart[s] = s * SEQ_LEN;
	for (size_t i = 0; i < NSEQ * SEQ_LEN; i++)
		gx[i] = (float)cutest_urand(&rng_state);
	for (size_t s = 0; s < NSEQ; s++)
		for (size_t t = 0; t < SEQ_LEN; t++) {
			size_t i = s * SEQ_LEN + t;
			int last = t + 1 == SEQ_LEN;
			gy[i] = last ? 0.0f : gx[i + 1] - 0.5f * gx[i];
			gw[i] = last ? 0.0f : 1.0f;
		}
}

static mpxkit_model *new_seq_model(size_t hidden)
{
	mpxkit_model_shape s = {.n_layers = 2,
				.width = {1, 2 * hidden, 1},
				.type = {MPXKIT_LAYER_BIGRU, MPXKIT_LAYER_DENSE}};
	mpxkit_model *m = NULL;

	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	return m;
}

static mpxkit_model *train_seq(uint64_t seed, int loss, double dropout, unsigned epochs,
			       mpxkit_train_report *rep, double *initial)
{
	const size_t n_train = 36;
	mpxkit_seq_set tr = {n_train, gstart, gx, gy, gw};
	mpxkit_seq_set va = {NSEQ - n_train, gstart, gx + gstart[n_train], gy + gstart[n_train],
			     gw + gstart[n_train]};
	static size_t vstart[NSEQ + 1];
	mpxkit_seq_train_config cfg = {.base = {.epochs = epochs,
						.patience = 10,
						.batch = 4,
						.learning_rate = 0.01,
						.dropout = dropout,
						.seed = seed,
						.loss = loss},
				       .window = 16,
				       .stride = 8,
				       .clip = 5.0};
	mpxkit_diag d = {0};

	/* The validation sequences' own table, rebased to 0. */
	for (size_t s = 0; s <= NSEQ - n_train; s++)
		vstart[s] = gstart[n_train + s] - gstart[n_train];
	va.start = vstart;
	mpxkit_model *m = new_seq_model(8);
	CU_ASSERT_FATAL(mpxkit_model_seq_init(m, &tr, seed, NULL) == 0);
	if (initial)
		CU_ASSERT(mpxkit_model_seq_loss(m, &va, loss, initial, NULL) == 0);
	int rc = mpxkit_model_seq_train(m, &cfg, &tr, &va, rep, &d);
	if (rc)
		fprintf(stderr, "%s\n", d.msg);
	CU_ASSERT_EQUAL(rc, 0);
	return m;
}

static void test_training_learns(void)
{
	mpxkit_train_report rep;
	double initial = 0.0;

	make_lookahead();
	mpxkit_model *m = train_seq(7, MPXKIT_LOSS_MSE, 0.0, 60, &rep, &initial);
	fprintf(stderr, "look-ahead task: validation loss %.4f -> %.4f (epoch %u of %u)\n", initial,
		rep.best_val_loss, rep.best_epoch, rep.epochs_run);
	/* Standardised targets: predicting their mean scores about 1. */
	CU_ASSERT(initial > 0.5);
	CU_ASSERT(rep.best_val_loss < 0.05);
	CU_ASSERT(rep.best_val_loss < 0.05 * initial);
	CU_ASSERT(rep.best_epoch >= 1 && rep.best_epoch <= rep.epochs_run);
	mpxkit_model_free(m);

	/* The RA-shaped loss: |10^(output - target) - 1| per step, the same task. */
	m = train_seq(7, MPXKIT_LOSS_RA, 0.0, 60, &rep, &initial);
	fprintf(stderr, "look-ahead task, RA loss: validation loss %.4f -> %.4f (epoch %u of %u)\n",
		initial, rep.best_val_loss, rep.best_epoch, rep.epochs_run);
	CU_ASSERT(rep.best_val_loss < 0.1 * initial);
	mpxkit_model_free(m);
}

static void test_training_deterministic(void)
{
	mpxkit_train_report ra, rb, rc;

	make_lookahead();
	/* Dropout on, so its masks are part of what must repeat. */
	mpxkit_model *a = train_seq(11, MPXKIT_LOSS_MSE, 0.2, 3, &ra, NULL);
	mpxkit_model *b = train_seq(11, MPXKIT_LOSS_MSE, 0.2, 3, &rb, NULL);
	mpxkit_model *c = train_seq(12, MPXKIT_LOSS_MSE, 0.2, 3, &rc, NULL);
	size_t n;
	const float *pa = mpxkit_model_params(a, &n);
	CU_ASSERT_EQUAL(memcmp(pa, mpxkit_model_params(b, NULL), n * sizeof(float)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(pa, mpxkit_model_params(c, NULL), n * sizeof(float)), 0);
	CU_ASSERT_EQUAL(ra.best_val_loss, rb.best_val_loss);
	/* With dropout the model still improves on its start. */
	CU_ASSERT(ra.best_val_loss < 0.9);
	mpxkit_model_free(a);
	mpxkit_model_free(b);
	mpxkit_model_free(c);
}

static void test_training_rejects(void)
{
	size_t bad_start[3] = {0, 5, 3}, empty_start[1] = {0};
	mpxkit_seq_set tr = {4, gstart, gx, gy, NULL};
	mpxkit_seq_set bad = {2, bad_start, gx, gy, NULL},
		       empty = {0, empty_start, NULL, NULL, NULL};
	mpxkit_seq_train_config cfg = {.base = {.epochs = 1, .batch = 1, .learning_rate = 0.1}};
	float neg_w[SEQ_LEN * 4];
	mpxkit_diag d = {0};
	double loss;

	make_lookahead();
	mpxkit_model *m = new_seq_model(2);
	CU_ASSERT_EQUAL(mpxkit_model_seq_init(m, &empty, 1, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_model_seq_init(m, &bad, 1, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_model_seq_loss(m, &bad, MPXKIT_LOSS_MSE, &loss, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &tr, &empty, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &empty, &tr, NULL, &d), -MPXKIT_EINVAL);
	for (size_t i = 0; i < SEQ_LEN * 4; i++)
		neg_w[i] = 1.0f;
	neg_w[17] = -1.0f;
	mpxkit_seq_set negw = {4, gstart, gx, gy, neg_w};
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &negw, &tr, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "row 17"));
	cfg.base.dropout = 1.0;
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	cfg.base.dropout = 0.0, cfg.clip = -1.0;
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	cfg.clip = 0.0, cfg.base.loss = 7;
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	cfg.base.loss = MPXKIT_LOSS_MSE, cfg.base.batch = 0;
	CU_ASSERT_EQUAL(mpxkit_model_seq_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	/* Shapes a GRU layer cannot have. */
	mpxkit_model *g = NULL;
	mpxkit_model_shape s = {.n_layers = 1, .width = {3, 5}, .type = {MPXKIT_LAYER_BIGRU}};
	CU_ASSERT_EQUAL(mpxkit_model_new(&g, &s, &d), -MPXKIT_EINVAL); /* odd width */
	s.width[1] = 2 * MPXKIT_MODEL_MAX_GRU_HIDDEN + 2;
	CU_ASSERT_EQUAL(mpxkit_model_new(&g, &s, &d), -MPXKIT_EINVAL);
	s.width[1] = 4, s.activation[0] = MPXKIT_ACT_TANH;
	CU_ASSERT_EQUAL(mpxkit_model_new(&g, &s, &d), -MPXKIT_EINVAL);
	s.activation[0] = MPXKIT_ACT_IDENTITY, s.type[0] = 3;
	CU_ASSERT_EQUAL(mpxkit_model_new(&g, &s, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(g);
	mpxkit_model_free(m);
}

/* --- the bigru estimator's data and whole-run estimates, against the mlp's --- */

#define BR_EVENTS 5
#define BR_ROT	  30

static const size_t br_slice[BR_EVENTS] = {0, 0, 1, 1, 1};
static uint64_t br_obs[BR_ROT * BR_EVENTS], br_ocoe[BR_ROT * BR_EVENTS];

static void make_run(void)
{
	for (size_t i = 0; i < BR_ROT * BR_EVENTS; i++) {
		br_ocoe[i] = (uint64_t)((cutest_urand(&rng_state) + 1) * 5e6);
		br_obs[i] = i % 7 == 3
				? 0
				: br_ocoe[i] / 2 + (uint64_t)((cutest_urand(&rng_state) + 1) * 1e5);
	}
}

/* The same rows as the mlp's samples, each event's rotations gathered into one sequence. */
static void test_bigru_samples(void)
{
	const mpxkit_layout l = {BR_EVENTS, 2, br_slice, 0, 0};
	mpxkit_mlp_samples ms;
	mpxkit_bigru_samples bs;
	const unsigned half = 3;

	make_run();
	memset(&ms, 0, sizeof(ms));
	memset(&bs, 0, sizeof(bs));
	ms.half = bs.half = half;
	CU_ASSERT_FATAL(mpxkit_mlp_samples_add(&ms, &l, BR_ROT, br_obs, NULL, br_ocoe, 1, NULL) ==
			0);
	/* Twice, so the second run's sequences follow the first's. */
	for (int rep = 0; rep < 2; rep++)
		CU_ASSERT_FATAL(
		    mpxkit_bigru_samples_add(&bs, &l, BR_ROT, br_obs, NULL, br_ocoe, NULL) == 0);
	size_t nf = mpxkit_mlp_feature_count(half);
	CU_ASSERT_FATAL(ms.n == BR_ROT * BR_EVENTS);
	CU_ASSERT_EQUAL(bs.n_seq, 2 * BR_EVENTS);
	CU_ASSERT_EQUAL(bs.n_rows, 2 * BR_ROT * BR_EVENTS);
	mpxkit_seq_set set = mpxkit_bigru_samples_set(&bs);
	CU_ASSERT_EQUAL(set.n_seq, 2 * BR_EVENTS);
	for (size_t q = 0; q < set.n_seq; q++) {
		size_t e = q % BR_EVENTS;
		CU_ASSERT_EQUAL(set.start[q], q * BR_ROT);
		CU_ASSERT_EQUAL(set.start[q + 1] - set.start[q], BR_ROT);
		for (size_t k = 0; k < BR_ROT; k++) {
			size_t brow = set.start[q] + k, mrow = k * BR_EVENTS + e;
			CU_ASSERT_EQUAL(
			    memcmp(set.x + brow * nf, ms.x + mrow * nf, nf * sizeof(float)), 0);
			CU_ASSERT_EQUAL(set.y[brow], ms.y[mrow]);
			CU_ASSERT_EQUAL(set.w[brow], ms.w[mrow]);
		}
	}
	mpxkit_mlp_samples_free(&ms);
	mpxkit_bigru_samples_free(&bs);
	mpxkit_bigru_samples_free(&bs); /* twice is harmless */
}

/*
 * A GRU with zero weights keeps a zero state (r = z = 1/2, n = tanh 0 = 0), so
 * the model returns its last bias at every step: the same constant an mlp
 * with zero weights returns, so both estimators must agree everywhere.
 */
static void test_bigru_run(void)
{
	const mpxkit_layout l = {BR_EVENTS, 2, br_slice, 0, 0};
	const unsigned half = 2;
	size_t nf = mpxkit_mlp_feature_count(half);
	mpxkit_model_shape ms = {.n_layers = 1,
				 .width = {nf, 1},
				 .feature_set = MPXKIT_MLP_FEATURE_SET,
				 .feature_param = half};
	mpxkit_model_shape gs = {.n_layers = 2,
				 .width = {nf, 8, 1},
				 .type = {MPXKIT_LAYER_BIGRU, MPXKIT_LAYER_DENSE},
				 .feature_set = MPXKIT_MLP_FEATURE_SET,
				 .feature_param = half};
	static double est_m[BR_ROT * BR_EVENTS], est_g[BR_ROT * BR_EVENTS];
	mpxkit_model *mm = NULL, *gm = NULL;
	mpxkit_diag d = {0};
	size_t n;

	make_run();
	CU_ASSERT_FATAL(mpxkit_model_new(&mm, &ms, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_model_new(&gm, &gs, NULL) == 0);
	float *p = mpxkit_model_params(mm, &n);
	p[n - 1] = 0.3f; /* the output bias */
	p = mpxkit_model_params(gm, &n);
	p[n - 1] = 0.3f;
	CU_ASSERT_FATAL(mpxkit_mlp_run(mm, &l, BR_ROT, br_obs, NULL, est_m, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_bigru_run(gm, &l, BR_ROT, br_obs, NULL, est_g, NULL) == 0);
	for (size_t i = 0; i < BR_ROT * BR_EVENTS; i++)
		CU_ASSERT_DOUBLE_EQUAL(est_g[i], est_m[i], 1e-9 * est_m[i]);
	/* A stretch of the run is a run of its own: the last 10 rotations alone. */
	CU_ASSERT_FATAL(mpxkit_bigru_run(gm, &l, 10, br_obs + 20 * BR_EVENTS, NULL, est_g, NULL) ==
			0);
	CU_ASSERT_FATAL(mpxkit_mlp_run(mm, &l, 10, br_obs + 20 * BR_EVENTS, NULL, est_m, NULL) ==
			0);
	for (size_t i = 0; i < 10 * BR_EVENTS; i++)
		CU_ASSERT_DOUBLE_EQUAL(est_g[i], est_m[i], 1e-9 * est_m[i]);
	/* An mlp model is not a bigru model, nor the other way round. */
	CU_ASSERT_EQUAL(mpxkit_bigru_run(mm, &l, BR_ROT, br_obs, NULL, est_g, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "no GRU"));
	mpxkit_model_free(mm);
	mpxkit_model_free(gm);
}

static const cutest_case gru_cases[] = {
    {"forward pass by hand", test_by_hand},
    {"sequence forward vs double reference", test_forward_random},
    {"one step through mpxkit_model_forward", test_single_step},
    {"BPTT gradient vs central differences", test_gradient},
    {"training learns a look-ahead task", test_training_learns},
    {"training deterministic for a seed", test_training_deterministic},
    {"training rejects bad settings", test_training_rejects},
    {"bigru samples are the mlp's, per event", test_bigru_samples},
    {"bigru run with a constant model = mlp run", test_bigru_run},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"gru", gru_cases, NULL, NULL}, {NULL, NULL, NULL, NULL}};
	return cutest_run("test_gru", suites);
}

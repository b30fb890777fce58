/* SPDX-License-Identifier: BSD-3-Clause */
/* Sequences through a model with bidirectional GRU layers: the allocation-free forward pass and
 * back-propagation through time. */
#include <stdint.h>
#include <string.h>

#include "mpxkit/model.h"

#include "model_impl.h"

/* The largest hidden size of the model's GRU layers; 0 without one. */
static size_t max_hidden(const mpxkit_model *m)
{
	size_t h = 0;

	for (size_t l = 0; l < m->shape.n_layers; l++)
		if (m->shape.type[l] == MPXKIT_LAYER_BIGRU && m->shape.width[l + 1] / 2 > h)
			h = m->shape.width[l + 1] / 2;
	return h;
}

size_t mpxkit_model_seq_scratch_len(const mpxkit_model *m, size_t max_steps)
{
	size_t row = 2 * m->max_width, extra = 6 * max_hidden(m);

	if (max_steps == 0)
		max_steps = 1;
	if (max_steps > (SIZE_MAX - extra) / row)
		return SIZE_MAX;
	return row * max_steps + extra;
}

/* The four parts of one direction's block (doc/model-format.md, "GRU layer"). */
typedef struct gru_dir {
	const float *wx, *wh, *bx, *bh;
} gru_dir;

static gru_dir dir_at(const float *block, size_t n_in, size_t hid)
{
	gru_dir d;

	d.wx = block;
	d.wh = d.wx + 3 * hid * n_in;
	d.bx = d.wh + 3 * hid * hid;
	d.bh = d.bx + 3 * hid;
	return d;
}

/*
 * acc = b + W v for W stored input-major (n rows of g3 floats, one row per
 * input): each input adds a multiple of its row, a loop over contiguous
 * floats with no horizontal sum per output.  The blocks of 8 have a fixed
 * trip count, which gcc -O2 vectorises (its cheap cost model leaves a loop
 * of unknown count scalar).
 */
MODEL_SIMD_CLONES static void project(const float *restrict w, const float *restrict b,
				      const float *restrict v, size_t n, size_t g3,
				      float *restrict acc)
{
	size_t g8 = g3 & ~(size_t)7, i = 0;

	memcpy(acc, b, g3 * sizeof(float));
	/* Four inputs per pass over acc: a quarter of the loads and stores of acc. */
	for (; i + 4 <= n; i += 4) {
		const float *r0 = w + i * g3, *r1 = r0 + g3, *r2 = r1 + g3, *r3 = r2 + g3;
		float v0 = v[i], v1 = v[i + 1], v2 = v[i + 2], v3 = v[i + 3];
		size_t g = 0;

		for (; g < g8; g += 8)
			for (size_t j = 0; j < 8; j++)
				acc[g + j] += (r0[g + j] * v0 + r1[g + j] * v1) +
					      (r2[g + j] * v2 + r3[g + j] * v3);
		for (; g < g3; g++)
			acc[g] += (r0[g] * v0 + r1[g] * v1) + (r2[g] * v2 + r3[g] * v3);
	}
	for (; i < n; i++) {
		const float *row = w + i * g3;
		float vi = v[i];
		size_t g = 0;

		for (; g < g8; g += 8)
			for (size_t j = 0; j < 8; j++)
				acc[g + j] += row[g + j] * vi;
		for (; g < g3; g++)
			acc[g] += row[g] * vi;
	}
}

/*
 * tanh from one expf: glibc's tanhf costs about three expf.  Exact at both
 * tails (expf going to 0 or infinity); near 0 its absolute error is about
 * 1e-7, below what the float weights carry.
 */
static inline float fast_tanh(float x)
{
	return 2.0f / (1.0f + expf(-2.0f * x)) - 1.0f;
}

/*
 * One step of one direction from its input projection ax = W_x x_t + b_x:
 * h receives the new state from prev (NULL: the zero state; h may be prev).
 * If gt is not NULL it keeps r, z, n and g = W_h[n] h_prev + b_h[n] (r at
 * 0, z at hid, n at 2 hid, g at 3 hid) for back-propagation.  ah holds
 * 3 hid floats.  The one place the gate equations live: the sequence pass
 * and the step-by-step one (model_gru_step) round alike.
 */
static inline void gru_cell(const gru_dir *d, size_t hid, const float *ax, const float *prev,
			    float *h, float *ah, float *gt)
{
	if (prev)
		project(d->wh, d->bh, prev, hid, 3 * hid, ah);
	else
		memcpy(ah, d->bh, 3 * hid * sizeof(float));
	for (size_t j = 0; j < hid; j++) {
		float r = model_sigmoid(ax[j] + ah[j]);
		float z = model_sigmoid(ax[hid + j] + ah[hid + j]);
		float g = ah[2 * hid + j];
		float n = fast_tanh(ax[2 * hid + j] + r * g);
		float hp = prev ? prev[j] : 0.0f;

		if (gt) {
			gt[j] = r;
			gt[hid + j] = z;
			gt[2 * hid + j] = n;
			gt[3 * hid + j] = g;
		}
		h[j] = n + z * (hp - n);
	}
}

/*
 * One direction over the sequence: x and h have row strides xs and hs; h
 * receives the state of each step, h[t] of step t.  If gate is not NULL it
 * keeps r, z, n and g of each step (rows of gs floats, as gru_cell) for
 * back-propagation.  tmp holds 6 hid floats.
 */
static void dir_forward(const gru_dir *d, size_t n_in, size_t hid, size_t n_steps, int reverse,
			const float *x, size_t xs, float *h, size_t hs, float *gate, size_t gs,
			float *tmp)
{
	const float *prev = NULL;
	float *ax = tmp, *ah = tmp + 3 * hid;

	for (size_t s = 0; s < n_steps; s++) {
		size_t t = reverse ? n_steps - 1 - s : s;
		float *ht = h + t * hs;

		project(d->wx, d->bx, x + t * xs, n_in, 3 * hid, ax);
		gru_cell(d, hid, ax, prev, ht, ah, gate ? gate + t * gs : NULL);
		prev = ht;
	}
}

/* A dense layer applied to each of n_steps rows (row stride mw) of cur, into next. */
MODEL_SIMD_CLONES static void dense_steps(const float *w, size_t n_in, size_t n_out, int act,
					  size_t n_steps, const float *cur, float *next, size_t mw)
{
	const float *b = w + n_out * n_in;

	for (size_t t = 0; t < n_steps; t++)
		for (size_t o = 0; o < n_out; o++)
			next[t * mw + o] =
			    model_activate(act, b[o] + model_dot(w + o * n_in, cur + t * mw, n_in));
}

void mpxkit_model_forward_seq(const mpxkit_model *m, size_t n_steps, const float *in, float *out,
			      float *scratch)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t ni = s->width[0], no = s->width[s->n_layers], mw = m->max_width;
	const float *in_shift = m->params, *in_scale = m->params + ni;
	const float *out_shift = m->params + 2 * ni, *out_scale = out_shift + no;
	float *cur = scratch, *next = scratch + n_steps * mw, *tmp = next + n_steps * mw;

	for (size_t t = 0; t < n_steps; t++)
		for (size_t i = 0; i < ni; i++)
			cur[t * mw + i] = (in[t * ni + i] - in_shift[i]) * in_scale[i];
	for (size_t l = 0; l < s->n_layers; l++) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		const float *w = m->params + m->w_off[l];

		if (s->type[l] == MPXKIT_LAYER_BIGRU) {
			size_t hid = n_out / 2;
			gru_dir fw = dir_at(w, n_in, hid);
			gru_dir bw = dir_at(w + model_gru_dir_len(n_in, hid), n_in, hid);

			dir_forward(&fw, n_in, hid, n_steps, 0, cur, mw, next, mw, NULL, 0, tmp);
			dir_forward(&bw, n_in, hid, n_steps, 1, cur, mw, next + hid, mw, NULL, 0,
				    tmp);
		} else {
			dense_steps(w, n_in, n_out, s->activation[l], n_steps, cur, next, mw);
		}
		float *swap = cur;
		cur = next;
		next = swap;
	}
	for (size_t t = 0; t < n_steps; t++)
		for (size_t j = 0; j < no; j++)
			out[t * no + j] = cur[t * mw + j] * out_scale[j] + out_shift[j];
}

/* --- one step at a time (model_impl.h, "model_gru_plan"): the same arithmetic --- */

int model_gru_plan_of(const mpxkit_model *m, model_gru_plan *plan)
{
	size_t n = 0;

	for (size_t l = 0; l < m->shape.n_layers; l++)
		if (m->shape.type[l] == MPXKIT_LAYER_BIGRU) {
			plan->layer = l;
			plan->hidden = m->shape.width[l + 1] / 2;
			n++;
		}
	return n == 1 ? 0 : -1;
}

size_t model_gru_step_scratch_len(const mpxkit_model *m)
{
	return 2 * m->max_width;
}

/* Dense layers from .. to - 1 on the row in a (b: the other buffer); returns the result's. */
static float *dense_range(const mpxkit_model *m, size_t from, size_t to, float *a, float *b)
{
	const mpxkit_model_shape *s = &m->shape;

	for (size_t l = from; l < to; l++) {
		dense_steps(m->params + m->w_off[l], s->width[l], s->width[l + 1], s->activation[l],
			    1, a, b, m->max_width);
		float *swap = a;
		a = b;
		b = swap;
	}
	return a;
}

static gru_dir plan_dir(const mpxkit_model *m, const model_gru_plan *p, int backward)
{
	size_t n_in = m->shape.width[p->layer];
	const float *w = m->params + m->w_off[p->layer];

	return dir_at(w + (backward ? model_gru_dir_len(n_in, p->hidden) : 0), n_in, p->hidden);
}

void model_gru_project(const mpxkit_model *m, const model_gru_plan *p, const float *in, float *proj,
		       float *scratch)
{
	size_t ni = m->shape.width[0], n_in = m->shape.width[p->layer], hid = p->hidden;
	const float *in_shift = m->params, *in_scale = m->params + ni;
	float *cur = scratch;

	for (size_t i = 0; i < ni; i++)
		cur[i] = (in[i] - in_shift[i]) * in_scale[i];
	cur = dense_range(m, 0, p->layer, cur, scratch + m->max_width);
	for (int dir = 0; dir < 2; dir++) {
		gru_dir d = plan_dir(m, p, dir);
		project(d.wx, d.bx, cur, n_in, 3 * hid, proj + (size_t)dir * 3 * hid);
	}
}

void model_gru_step(const mpxkit_model *m, const model_gru_plan *p, int backward, const float *ax,
		    const float *prev, float *h, float *tmp)
{
	gru_dir d = plan_dir(m, p, backward);

	gru_cell(&d, p->hidden, ax, prev, h, tmp, NULL);
}

void model_gru_output(const mpxkit_model *m, const model_gru_plan *p, const float *hf,
		      const float *hb, float *out, float *scratch)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t hid = p->hidden, ni = s->width[0], no = s->width[s->n_layers];
	const float *out_shift = m->params + 2 * ni, *out_scale = out_shift + no;
	float *cur = scratch;

	memcpy(cur, hf, hid * sizeof(float));
	memcpy(cur + hid, hb, hid * sizeof(float));
	cur = dense_range(m, p->layer + 1, s->n_layers, cur, scratch + m->max_width);
	for (size_t j = 0; j < no; j++)
		out[j] = cur[j] * out_scale[j] + out_shift[j];
}

/* --- back-propagation through time --- */

/*
 * The workspace of model_seq_grad for n_steps steps, T x (row) each:
 *   act[l]   l = 0 .. L: input of layer l (after the previous layer's dropout)
 *   val[l]   l = 0 .. L-1: output of layer l before dropout
 *   keep[l]  l = 0 .. L-1: dropout factor of each output (0 or 1/(1-p); 1 without)
 *   gate[l]  per GRU layer: r, z, n and g = W_hn h + b_hn of each direction, 8 hidden per step
 *   two delta rows of T x max_width, and 9 max_width floats for one step (the
 *   forward's 6 hidden, the backward's 8 hidden).
 */
typedef struct seq_ws {
	float *act, *val, *keep, *gate, *delta, *dprev, *step;
	size_t gate_off[MPXKIT_MODEL_MAX_LAYERS];
} seq_ws;

static size_t gate_len(const mpxkit_model *m, size_t n_steps, seq_ws *w)
{
	size_t n = 0;

	for (size_t l = 0; l < m->shape.n_layers; l++) {
		if (w)
			w->gate_off[l] = n;
		if (m->shape.type[l] == MPXKIT_LAYER_BIGRU)
			n += n_steps * 4 * m->shape.width[l + 1];
	}
	return n;
}

size_t model_seq_grad_ws_len(const mpxkit_model *m, size_t n_steps)
{
	size_t L = m->shape.n_layers, mw = m->max_width;

	return n_steps * mw * (3 * L + 3) + gate_len(m, n_steps, NULL) + 9 * mw;
}

static void ws_layout(const mpxkit_model *m, size_t n_steps, float *base, seq_ws *w)
{
	size_t L = m->shape.n_layers, tm = n_steps * m->max_width;

	w->act = base;
	w->val = w->act + (L + 1) * tm;
	w->keep = w->val + L * tm;
	w->gate = w->keep + L * tm;
	w->delta = w->gate + gate_len(m, n_steps, w);
	w->dprev = w->delta + tm;
	w->step = w->dprev + tm;
}

/*
 * One direction backward.  dh (row stride ds) is the loss's gradient with
 * respect to this direction's output at each step; h and gate are what the
 * forward kept; gw is this direction's gradient block; dx (row stride xs,
 * may be NULL) accumulates the gradient with respect to the inputs.  step
 * holds 8 hid floats.
 */
static void dir_backward(const gru_dir *d, float *gw, size_t n_in, size_t hid, size_t n_steps,
			 int reverse, const float *x, size_t xs, const float *h, size_t hs,
			 const float *gate, size_t gs, const float *dh, size_t ds, float *dx,
			 float *step)
{
	float *gwx = gw, *gwh = gwx + 3 * hid * n_in, *gbx = gwh + 3 * hid * hid;
	float *gbh = gbx + 3 * hid;
	/* carry: the gradient reaching h of this step from later steps; da, dgh: per gate. */
	float *carry = step, *next_carry = step + hid, *da = step + 2 * hid, *dgh = step + 5 * hid;

	memset(carry, 0, hid * sizeof(float));
	for (size_t s = n_steps; s-- > 0;) {
		size_t t = reverse ? n_steps - 1 - s : s;
		const float *gt = gate + t * gs, *xt = x + t * xs;
		const float *prev = s > 0 ? h + (reverse ? t + 1 : t - 1) * hs : NULL;

		for (size_t j = 0; j < hid; j++) {
			float r = gt[j], z = gt[hid + j], n = gt[2 * hid + j], g = gt[3 * hid + j];
			float hp = prev ? prev[j] : 0.0f;
			float dht = dh[t * ds + j] + carry[j];
			float dn = dht * (1.0f - z), dz = dht * (hp - n);
			float dan = dn * (1.0f - n * n);

			da[j] = dan * g * r * (1.0f - r);
			da[hid + j] = dz * z * (1.0f - z);
			da[2 * hid + j] = dan;
			dgh[j] = da[j];
			dgh[hid + j] = da[hid + j];
			dgh[2 * hid + j] = dan * r;
			next_carry[j] = dht * z;
		}
		/* W_x and W_h are input-major: row i holds the 3 hid weights of input i. */
		for (size_t k = 0; k < 3 * hid; k++) {
			gbx[k] += da[k];
			gbh[k] += dgh[k];
		}
		for (size_t i = 0; i < n_in; i++) {
			float *row = gwx + i * 3 * hid;
			for (size_t k = 0; k < 3 * hid; k++)
				row[k] += xt[i] * da[k];
		}
		if (prev)
			for (size_t i = 0; i < hid; i++) {
				float *row = gwh + i * 3 * hid;
				const float *wrow = d->wh + i * 3 * hid;
				float sum = 0.0f;
				for (size_t k = 0; k < 3 * hid; k++) {
					row[k] += prev[i] * dgh[k];
					sum += wrow[k] * dgh[k];
				}
				next_carry[i] += sum;
			}
		if (dx) {
			float *dxt = dx + t * xs;
			for (size_t i = 0; i < n_in; i++)
				dxt[i] += model_dot(d->wx + i * 3 * hid, da, 3 * hid);
		}
		float *tmp = carry;
		carry = next_carry;
		next_carry = tmp;
	}
}

static void layer_forward(const mpxkit_model *m, size_t l, size_t n_steps, const seq_ws *w)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t mw = m->max_width, tm = n_steps * mw, n_in = s->width[l], n_out = s->width[l + 1];
	const float *p = m->params + m->w_off[l], *in = w->act + l * tm;
	float *val = w->val + l * tm;

	if (s->type[l] == MPXKIT_LAYER_BIGRU) {
		size_t hid = n_out / 2;
		gru_dir fw = dir_at(p, n_in, hid);
		gru_dir bw = dir_at(p + model_gru_dir_len(n_in, hid), n_in, hid);
		float *gate = w->gate + w->gate_off[l];

		dir_forward(&fw, n_in, hid, n_steps, 0, in, mw, val, mw, gate, 8 * hid, w->step);
		dir_forward(&bw, n_in, hid, n_steps, 1, in, mw, val + hid, mw, gate + 4 * hid,
			    8 * hid, w->step);
		return;
	}
	const float *b = p + n_out * n_in;
	for (size_t t = 0; t < n_steps; t++)
		for (size_t o = 0; o < n_out; o++) {
			float acc = b[o];
			for (size_t i = 0; i < n_in; i++)
				acc += p[o * n_in + i] * in[t * mw + i];
			val[t * mw + o] = model_activate(s->activation[l], acc);
		}
}

/*
 * Layer l backward: delta holds the gradient with respect to its output
 * before dropout; adds its weights' gradient to grad and, if dprev is not
 * NULL, writes the gradient with respect to its input there.
 */
static void layer_backward(const mpxkit_model *m, size_t l, size_t n_steps, const seq_ws *w,
			   float *delta, float *dprev, float *grad)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t mw = m->max_width, tm = n_steps * mw, n_in = s->width[l], n_out = s->width[l + 1];
	const float *p = m->params + m->w_off[l], *in = w->act + l * tm, *val = w->val + l * tm;
	float *g = grad + m->w_off[l];

	if (dprev)
		for (size_t t = 0; t < n_steps; t++)
			memset(dprev + t * mw, 0, n_in * sizeof(float));
	if (s->type[l] == MPXKIT_LAYER_BIGRU) {
		size_t hid = n_out / 2, dl = model_gru_dir_len(n_in, hid);
		gru_dir fw = dir_at(p, n_in, hid), bw = dir_at(p + dl, n_in, hid);
		const float *gate = w->gate + w->gate_off[l];

		dir_backward(&fw, g, n_in, hid, n_steps, 0, in, mw, val, mw, gate, 8 * hid, delta,
			     mw, dprev, w->step);
		dir_backward(&bw, g + dl, n_in, hid, n_steps, 1, in, mw, val + hid, mw,
			     gate + 4 * hid, 8 * hid, delta + hid, mw, dprev, w->step);
		return;
	}
	float *gb = g + n_out * n_in;
	for (size_t t = 0; t < n_steps; t++) {
		float *dt = delta + t * mw;
		const float *it = in + t * mw;

		for (size_t o = 0; o < n_out; o++) {
			dt[o] *= model_act_deriv(s->activation[l], val[t * mw + o]);
			gb[o] += dt[o];
			for (size_t i = 0; i < n_in; i++)
				g[o * n_in + i] += dt[o] * it[i];
		}
		if (dprev)
			for (size_t o = 0; o < n_out; o++)
				for (size_t i = 0; i < n_in; i++)
					dprev[t * mw + i] += p[o * n_in + i] * dt[o];
	}
}

double model_seq_grad(const mpxkit_model *m, size_t n_steps, const float *x, const float *y,
		      const float *wt, int loss_kind, float *grad, float *ws, double dropout,
		      uint64_t *rng, double *w_sum)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t L = s->n_layers, mw = m->max_width, tm = n_steps * mw, ni = s->width[0];
	size_t no = s->width[L];
	const float *p = m->params, *out_shift = p + 2 * ni, *out_scale = out_shift + no;
	float keep_scale = dropout > 0.0 ? (float)(1.0 / (1.0 - dropout)) : 1.0f;
	double loss = 0.0, wsum = 0.0;
	seq_ws w;

	ws_layout(m, n_steps, ws, &w);
	for (size_t t = 0; t < n_steps; t++)
		for (size_t i = 0; i < ni; i++)
			w.act[t * mw + i] = (x[t * ni + i] - p[i]) * p[ni + i];
	for (size_t l = 0; l < L; l++) {
		float *val = w.val + l * tm, *k = w.keep + l * tm, *next = w.act + (l + 1) * tm;

		layer_forward(m, l, n_steps, &w);
		for (size_t t = 0; t < n_steps; t++)
			for (size_t o = 0; o < s->width[l + 1]; o++) {
				size_t at = t * mw + o;
				k[at] = 1.0f;
				if (dropout > 0.0 && l + 1 < L)
					k[at] = model_next_unit(rng) < dropout ? 0.0f : keep_scale;
				next[at] = val[at] * k[at];
			}
	}
	/* The loss's gradient with respect to the last layer's output. */
	const float *yh = w.act + L * tm;
	for (size_t t = 0; t < n_steps; t++) {
		float wgt = wt ? wt[t] : 1.0f;
		double e = 0.0;

		for (size_t j = 0; j < no; j++) {
			float tgt = (y[t * no + j] - out_shift[j]) / out_scale[j], dd;
			float d = yh[t * mw + j] - tgt;
			e += model_output_loss(loss_kind, d, out_scale[j], &dd);
			w.delta[t * mw + j] = wgt * dd / (float)no;
		}
		loss += wgt * e / (double)no;
		wsum += wgt;
	}
	float *delta = w.delta, *dprev = w.dprev;
	for (size_t l = L; l-- > 0;) {
		const float *k = w.keep + l * tm;

		/* Back through this layer's dropout to its own output. */
		for (size_t t = 0; t < n_steps; t++)
			for (size_t o = 0; o < s->width[l + 1]; o++)
				delta[t * mw + o] *= k[t * mw + o];
		layer_backward(m, l, n_steps, &w, delta, l > 0 ? dprev : NULL, grad);
		float *tmp = delta;
		delta = dprev;
		dprev = tmp;
	}
	if (w_sum)
		*w_sum = wsum;
	return loss;
}

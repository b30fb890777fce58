/* SPDX-License-Identifier: BSD-3-Clause */
/* bigru: the learned estimator over each event's series, a bidirectional GRU carried along the
 * run (bigru) or run over the whole series (bigru-full). */
#include <stdlib.h>
#include <string.h>

#include "mpxkit/model.h"

#include "../lib/model/model_impl.h"
#include "learned.h"
#include "mlp_features.h"

/* Where the default model lies under the data directory (data/local.am installs it there). */
#define DEFAULT_MODEL "models/bigru.mpxm"

/*
 * bigru's backward direction reads A rows past rotation k (doc/estimators.md,
 * "bigru"), each with its H rotations of look-ahead for its features, so k is
 * estimated A + H rotations after it ended.  A = 12 was chosen on the
 * validation programs: mean RA 0.764 at A = 4, 0.804 at 8, 0.816 at 12 and
 * no higher beyond, while each estimate's backward pass costs A + 1 GRU steps.
 */
#define STREAM_AHEAD 12
/* bigru-full's window: every run up to 2 x 512 + 1 rotations is read whole. */
#define FULL_REACH 512

/*
 * bigru's state along a run (doc/estimators.md, "bigru").  Row j of the
 * run is *final* once rotation j + H has been seen: its features, and so
 * its projections, no longer change.  Each final row is computed once, and
 * its forward state follows from the previous row's; the last A + 1 final
 * rows are kept for the backward passes.  Rows not yet final (at most H,
 * at the end of what has been seen) are computed afresh into t* by each
 * estimate and never kept, so the state is a function of the rows seen,
 * whatever the order of push, peek and flush.  Per row, event e's data is
 * at (slot * n_events + e) times its size.
 */
typedef struct gru_stream {
	model_gru_plan plan;
	size_t ahead;	/* A */
	size_t n_ring;	/* A + 1 final rows kept, row j in slot j mod n_ring */
	int live;	/* base and next describe a run */
	size_t base;	/* the run's first row: 0, or where a restart put it */
	size_t next;	/* rows base .. next - 1 are final and folded */
	float *proj;	/* 6 hidden per event: both directions' input projections */
	float *hf;	/* hidden per event: the forward state after the row */
	double *origin; /* per event: where the row's output starts from (mlp_origin) */
	float *tproj;	/* the same for up to H rows not yet final, slot j - next */
	double *torigin;
	float *thf;	/* the forward state over those rows, up to k */
	size_t n_seen;	/* rows whose counts are kept: look-back + A + 1 */
	uint64_t *seen; /* per final row, slot j mod n_seen: its counts, then its reference */
	float *feat;	/* one event's features */
	float *hb;	/* the backward state */
	float *tmp;	/* model_gru_step's */
	float *scratch; /* model_gru_project's and model_gru_output's */
} gru_stream;

/*
 * The model and the scratch of one estimate, all allocated by init: an
 * estimate allocates nothing.  The scratch, the memo and bigru's stream
 * make an estimator, like an mlp one, usable from one thread at a time.
 */
typedef struct bigru_state {
	mpxkit_model *model;
	unsigned half;	   /* H: the features' look-back and look-ahead */
	size_t steps;	   /* bigru-full's longest window: B + A + 1 */
	float *x;	   /* n_events sequences of up to steps rows of features */
	float *y;	   /* one sequence's outputs */
	float *scratch;	   /* mpxkit_model_forward_seq's, for steps */
	double *origin;	   /* where each row's output starts from (mlp_origin) */
	double *level;	   /* n_events levels, then (2H + 1) x n_events logarithms */
	mlp_memo memo;	   /* the logarithms of the last rotations read */
	gru_stream stream; /* bigru's; unused by bigru-full */
} bigru_state;

/* The model must be recurrent and fed by the mlp's features. */
static int check_shape(const mpxkit_model *m, const char *who, const char *path, mpxkit_diag *diag)
{
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	unsigned h = s->feature_param;

	if (!mpxkit_model_is_recurrent(m))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "estimator %s: %s: not a recurrent model (no GRU layer), so "
				   "not a bigru estimator model",
				   who, path);
	if (s->feature_set != MLP_FEATURE_SET || h > MLP_HALF_MAX ||
	    s->width[0] != mlp_feature_count(h) || s->width[s->n_layers] != 1)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "estimator %s: %s: not a bigru estimator model: feature set %u, "
				   "half-window %u, %zu inputs, %zu outputs (expected set %d, "
				   "half-window <= %d, %zu inputs, 1 output)",
				   who, path, (unsigned)s->feature_set, h, s->width[0],
				   s->width[s->n_layers], MLP_FEATURE_SET, MLP_HALF_MAX,
				   mlp_feature_count(h <= MLP_HALF_MAX ? h : MLP_HALF_MAX));
	return 0;
}

static void bigru_fini(mpxkit_estimator *est)
{
	bigru_state *st = est->state;
	gru_stream *gs;

	if (st == NULL)
		return;
	gs = &st->stream;
	mpxkit_model_free(st->model);
	mlp_memo_free(&st->memo);
	free(st->x);
	free(st->y);
	free(st->scratch);
	free(st->origin);
	free(st->level);
	free(gs->proj);
	free(gs->hf);
	free(gs->origin);
	free(gs->tproj);
	free(gs->thf);
	free(gs->torigin);
	free(gs->seen);
	free(gs->feat);
	free(gs->hb);
	free(gs->tmp);
	free(gs->scratch);
	free(st);
	est->state = NULL;
}

/* bigru's stream for ne events: -MPXKIT_ENOMEM, or 0 with no run under way. */
static int stream_alloc(gru_stream *gs, const mpxkit_model *m, const mpxkit_layout *l, size_t ne,
			unsigned h, unsigned lookback)
{
	size_t hid = gs->plan.hidden, nt = h ? h : 1;

	gs->ahead = STREAM_AHEAD;
	gs->n_ring = STREAM_AHEAD + 1;
	gs->live = 0;
	gs->proj = malloc(gs->n_ring * ne * 6 * hid * sizeof *gs->proj);
	gs->hf = malloc(gs->n_ring * ne * hid * sizeof *gs->hf);
	gs->origin = malloc(gs->n_ring * ne * sizeof *gs->origin);
	gs->tproj = malloc(nt * ne * 6 * hid * sizeof *gs->tproj);
	gs->thf = malloc(hid * sizeof *gs->thf);
	gs->torigin = malloc(nt * ne * sizeof *gs->torigin);
	gs->n_seen = lookback + gs->n_ring;
	gs->seen = malloc(gs->n_seen * (ne + l->n_groups) * sizeof *gs->seen);
	gs->feat = malloc(mlp_feature_count(h) * sizeof *gs->feat);
	gs->hb = malloc(hid * sizeof *gs->hb);
	gs->tmp = malloc(3 * hid * sizeof *gs->tmp);
	gs->scratch = malloc(model_gru_step_scratch_len(m) * sizeof *gs->scratch);
	if (!gs->proj || !gs->hf || !gs->origin || !gs->tproj || !gs->thf || !gs->torigin ||
	    !gs->seen || !gs->feat || !gs->hb || !gs->tmp || !gs->scratch)
		return -MPXKIT_ENOMEM;
	return 0;
}

/*
 * Both variants: the model, then bigru's stream or bigru-full's scratch for
 * windows of B + A + 1 rotations, and the levels and memo both read.
 */
static int bigru_setup(mpxkit_estimator *est, const mpxkit_estimator_options *opts, int stream,
		       mpxkit_diag *diag)
{
	const char *who = est->info.name;
	char *path = NULL;
	size_t ne = est->layout.n_events ? est->layout.n_events : 1, nf, sl;
	unsigned lookback = FULL_REACH, lookahead = FULL_REACH;
	bigru_state *st = calloc(1, sizeof *st);
	int rc;

	if (st == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", who);
	est->state = st;
	rc = learned_model_load(who, opts->model, DEFAULT_MODEL, &st->model, &path, diag);
	if (rc < 0)
		goto fail;
	rc = check_shape(st->model, who, path, diag);
	if (rc < 0)
		goto fail;
	st->half = mpxkit_model_shape_of(st->model)->feature_param;
	nf = mlp_feature_count(st->half);
	if (stream) {
		if (model_gru_plan_of(st->model, &st->stream.plan) < 0) {
			rc = mpxkit_fail(
			    diag, MPXKIT_EFORMAT,
			    "estimator %s: %s: more than one GRU layer, which %s cannot "
			    "carry along a run (bigru-full reads it)",
			    who, path, who);
			goto fail;
		}
		/*
		 * When k is not final, its forward state runs over the rows from
		 * newest - H + 1 on, whose features read H rotations further back:
		 * 2H - 1 before k (and 1 at least, to see the last row folded).
		 */
		lookback = st->half ? 2 * st->half - 1 : 1;
		lookahead = STREAM_AHEAD + st->half;
	}
	st->steps = (size_t)lookback + lookahead + 1;
	if (stream) {
		/*
		 * mpxkit_estimator_new widens the look-back and the look-ahead
		 * by the schedule's gap after init: a window then reaches gap
		 * rotations further back, and its final rows gap further ahead.
		 * The stream keeps the counts of all of them, or it could not
		 * tell that a window continues the run and would start over.
		 */
		rc = stream_alloc(&st->stream, st->model, &est->layout, ne, st->half,
				  lookback + 2 * (unsigned)est->layout.gap);
	} else {
		sl = mpxkit_model_seq_scratch_len(st->model, st->steps);
		st->x = malloc(ne * st->steps * nf * sizeof *st->x);
		st->y = malloc(st->steps * sizeof *st->y);
		st->scratch = sl < SIZE_MAX / sizeof(float) ? malloc(sl * sizeof(float)) : NULL;
		st->origin = malloc(ne * st->steps * sizeof *st->origin);
		rc = st->x && st->y && st->scratch && st->origin ? 0 : -MPXKIT_ENOMEM;
	}
	st->level = malloc((2 * (size_t)st->half + 2) * ne * sizeof *st->level);
	/* Slots for every rotation of a window and the next, so each logarithm is taken once. */
	if (rc < 0 || st->level == NULL ||
	    mlp_memo_init(&st->memo, ne, (unsigned)(st->steps / 2 + 1)) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", who);
		goto fail;
	}
	est->info.lookback = lookback;
	est->info.lookahead = lookahead;
	free(path);
	return 0;
fail:
	free(path);
	bigru_fini(est);
	return rc;
}

static int bigru_init(mpxkit_estimator *est, const mpxkit_estimator_options *opts,
		      mpxkit_diag *diag)
{
	return bigru_setup(est, opts, 1, diag);
}

static int bigru_full_init(mpxkit_estimator *est, const mpxkit_estimator_options *opts,
			   mpxkit_diag *diag)
{
	return bigru_setup(est, opts, 0, diag);
}

/*
 * The window's rotations are a run of their own (mpxkit_bigru_run's rows
 * for that stretch): each rotation's features see its H neighbours inside
 * the window only, and the GRU starts from a zero state at both ends.
 */
static void bigru_estimate_window(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	bigru_state *st = est->state;
	const mpxkit_model *m = st->model;
	size_t ne = w->layout->n_events, len = w->n_before + w->n_after + 1, h = st->half;
	size_t nf = mlp_feature_count(st->half), at = w->n_before;
	double g = (double)w->layout->n_groups, *lev = st->level, *lgw = st->level + ne;

	/* One slice per rotation: nothing is multiplexed and the count is the total. */
	if (w->layout->n_groups == 1) {
		for (size_t e = 0; e < ne; e++)
			out[e] = (double)window_obs(w, 0, e);
		return;
	}
	for (size_t j = 0; j < len; j++) {
		size_t before = j < h ? j : h, after = len - 1 - j < h ? len - 1 - j : h;
		mpxkit_window sub = {w->layout, w->k - w->n_before + j, before, after,
				     w->rot + j - before};

		/* The memo only saves logarithms; it changes no result. */
		mlp_levels_memo(&sub, st->half, lev, lgw, &st->memo);
		for (size_t e = 0; e < ne; e++) {
			float *row = st->x + (e * len + j) * nf;

			mlp_features(&sub, e, st->half, lev, lgw, row);
			st->origin[e * len + j] = mlp_origin(st->half, lev[e], row);
		}
	}
	for (size_t e = 0; e < ne; e++) {
		mpxkit_model_forward_seq(m, len, st->x + e * len * nf, st->y, st->scratch);
		out[e] = mlp_estimate((double)st->y[at], g,
				      mlp_span(&w->rot[at], w->layout->n_groups),
				      st->origin[e * len + at], (double)window_obs(w, 0, e));
	}
}

/*
 * The whole-run pass (mpxkit_estimator_run_whole): the model over each
 * event's whole series in one piece, mpxkit_bigru_run's rows, which is what
 * bigru-full gives for runs of up to 1025 rotations; with G = 1 the counts,
 * as the window gives them.  The state is only read, so the scratch of the
 * window stays free for the online path.
 */
static int bigru_whole_run(const mpxkit_estimator *est, const mpxkit_series *run, double *out,
			   mpxkit_diag *diag)
{
	size_t n_rotations = run->n_windows;
	const uint64_t *obs = run->obs;
	const bigru_state *st = est->state;
	const mpxkit_layout *l = &est->layout;

	if (l->n_groups == 1 || l->n_events == 0) {
		for (size_t i = 0; i < n_rotations * l->n_events; i++)
			out[i] = (double)obs[i];
		return 0;
	}
	return mpxkit_bigru_run_series(st->model, l, run, out, diag);
}

/* Row j's own window within w: its H rotations either side, clipped to the run and to w. */
static mpxkit_window row_window(const mpxkit_window *w, size_t base, unsigned h, size_t j)
{
	size_t first = w->k - w->n_before, newest = w->k + w->n_after;
	size_t lo = j - base < h ? j - base : h, hi = newest - j < h ? newest - j : h;
	mpxkit_window sub = {w->layout, j, lo, hi, w->rot + (j - lo - first)};

	return sub;
}

/* Row j's features, origins and input projections, every event (slot-major, as gru_stream). */
static void row_project(bigru_state *st, const mpxkit_window *w, size_t j, float *proj,
			double *origin)
{
	gru_stream *gs = &st->stream;
	size_t ne = w->layout->n_events, p6 = 6 * gs->plan.hidden;
	double *lev = st->level, *lgw = st->level + ne;
	mpxkit_window sub = row_window(w, gs->base, st->half, j);

	/* The memo only saves logarithms; it changes no result. */
	mlp_levels_memo(&sub, st->half, lev, lgw, &st->memo);
	for (size_t e = 0; e < ne; e++) {
		mlp_features(&sub, e, st->half, lev, lgw, gs->feat);
		origin[e] = mlp_origin(st->half, lev[e], gs->feat);
		model_gru_project(st->model, &gs->plan, gs->feat, proj + e * p6, gs->scratch);
	}
}

/*
 * Whether w continues the run the stream holds: row k is in it, the frontier
 * of final rows does not move back, the rows still to fold find their H
 * rotations before in w, and the rows already folded that w holds (the last
 * one at least) have the counts they had.  Anything else (another run, calls
 * out of order) restarts the stream at w's first rotation: one estimator
 * serves one run at a time.
 */
static int stream_follows(const bigru_state *st, const mpxkit_window *w, size_t fin)
{
	const gru_stream *gs = &st->stream;
	const mpxkit_layout *l = w->layout;
	size_t first = w->k - w->n_before, ne = l->n_events, ng = l->n_groups;
	size_t from = gs->next - gs->base < st->half ? gs->base : gs->next - st->half;

	if (!gs->live || w->k == 0 || w->k < gs->base || fin < gs->next || gs->next == gs->base ||
	    gs->next - 1 < first || (gs->next < fin && from < first))
		return 0;
	for (size_t j = first > gs->base ? first : gs->base; j < gs->next; j++) {
		const mpxkit_rotation *r = &w->rot[j - first];
		const uint64_t *kept = gs->seen + (j % gs->n_seen) * (ne + ng);

		if (memcmp(r->obs, kept, ne * sizeof *kept) != 0 ||
		    (l->has_reference && memcmp(r->ref, kept + ne, ng * sizeof *kept) != 0))
			return 0;
	}
	return 1;
}

/*
 * Rotation k (doc/estimators.md, "bigru"): the forward state of row k,
 * carried from the run's start over final rows (then over the rows not yet
 * final up to k, when k is one), and a backward pass from a zero state at
 * row min(k + A, newest) down to k.  Row j's features read rotations
 * j - H .. j + H of the run, clipped only at its ends and at the newest
 * rotation seen, so online and offline give the same rows, bit for bit.
 */
static void bigru_estimate_stream(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	bigru_state *st = est->state;
	gru_stream *gs = &st->stream;
	const mpxkit_model *m = st->model;
	const mpxkit_layout *l = w->layout;
	size_t ne = l->n_events, hid = gs->plan.hidden, p6 = 6 * hid, nr = gs->n_ring, k = w->k;
	size_t first = k - w->n_before, newest = k + w->n_after;
	size_t fin = newest + 1 > st->half ? newest + 1 - st->half : 0; /* rows < fin: final */
	size_t top = newest - k < gs->ahead ? newest : k + gs->ahead;
	double g = (double)l->n_groups;

	/* One slice per rotation: nothing is multiplexed and the count is the total. */
	if (l->n_groups == 1 || ne == 0) {
		for (size_t e = 0; e < ne; e++)
			out[e] = (double)window_obs(w, 0, e);
		return;
	}
	if (!stream_follows(st, w, fin)) {
		gs->live = 1;
		gs->base = gs->next = first;
	}
	fin = fin > gs->base ? fin : gs->base;
	for (; gs->next < fin; gs->next++) {
		size_t j = gs->next, at = j % nr, was = (j + nr - 1) % nr;
		const mpxkit_rotation *r = &w->rot[j - first];
		uint64_t *kept = gs->seen + (j % gs->n_seen) * (ne + l->n_groups);

		memcpy(kept, r->obs, ne * sizeof *kept);
		if (l->has_reference)
			memcpy(kept + ne, r->ref, l->n_groups * sizeof *kept);
		row_project(st, w, j, gs->proj + at * ne * p6, gs->origin + at * ne);
		for (size_t e = 0; e < ne; e++)
			model_gru_step(m, &gs->plan, 0, gs->proj + (at * ne + e) * p6,
				       j > gs->base ? gs->hf + (was * ne + e) * hid : NULL,
				       gs->hf + (at * ne + e) * hid, gs->tmp);
	}
	/* The rows not yet final that this estimate reads, computed afresh and not kept. */
	for (size_t j = fin; j <= top; j++)
		row_project(st, w, j, gs->tproj + (j - fin) * ne * p6,
			    gs->torigin + (j - fin) * ne);
	for (size_t e = 0; e < ne; e++) {
		const float *hk = gs->hf + ((k % nr) * ne + e) * hid;
		double origin =
		    k < fin ? gs->origin[(k % nr) * ne + e] : gs->torigin[(k - fin) * ne + e];
		float y;

		if (k >= fin) {
			hk = fin > gs->base ? gs->hf + (((fin - 1) % nr) * ne + e) * hid : NULL;
			for (size_t j = fin; j <= k; j++) {
				model_gru_step(m, &gs->plan, 0,
					       gs->tproj + ((j - fin) * ne + e) * p6, hk, gs->thf,
					       gs->tmp);
				hk = gs->thf;
			}
		}
		for (size_t j = top + 1; j-- > k;) {
			const float *p = j < fin ? gs->proj + ((j % nr) * ne + e) * p6
						 : gs->tproj + ((j - fin) * ne + e) * p6;
			model_gru_step(m, &gs->plan, 1, p + 3 * hid, j == top ? NULL : gs->hb,
				       gs->hb, gs->tmp);
		}
		model_gru_output(m, &gs->plan, hk, gs->hb, &y, gs->scratch);
		out[e] = mlp_estimate((double)y, g, mlp_span(&w->rot[w->n_before], l->n_groups),
				      origin, (double)window_obs(w, 0, e));
	}
}

const estimator_ops estimator_bigru = {
    .info =
	{
	    .name = "bigru",
	    .summary = "a bidirectional GRU over each event's series, carried along the run (a "
		       "model file)",
	    /* Set by init from the model's H. */
	    .lookback = 0,
	    .lookahead = 0,
	    .flags = MPXKIT_ESTIMATOR_LEARNED,
	},
    .init = bigru_init,
    .fini = bigru_fini,
    .estimate = bigru_estimate_stream,
    .whole_run = bigru_whole_run,
    .interval = &interval_cal_bigru,
};

const estimator_ops estimator_bigru_full = {
    .info =
	{
	    .name = "bigru-full",
	    .summary = "the bigru model over the whole run (up to 1025 rotations): offline",
	    .lookback = 0,
	    .lookahead = 0,
	    .flags = MPXKIT_ESTIMATOR_LEARNED,
	},
    .init = bigru_full_init,
    .fini = bigru_fini,
    .estimate = bigru_estimate_window,
    .whole_run = bigru_whole_run,
    .interval = &interval_cal_bigru_full,
};

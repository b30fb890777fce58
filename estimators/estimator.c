/* SPDX-License-Identifier: BSD-3-Clause */
/* The estimator object: construction, the online ring and the offline run share one formula per
 * estimator. */
#include <stdlib.h>
#include <string.h>

#include "estimator-impl.h"

void mpxkit_estimator_free(mpxkit_estimator *est)
{
	if (est == NULL)
		return;
	if (est->ops && est->ops->fini)
		est->ops->fini(est);
	free(est->slice);
	free(est->ring_obs);
	free(est->ring_ref);
	free(est->ring_val);
	free(est->ring_len_ns);
	free(est->ring_has);
	free(est->window);
	free(est->scratch);
	free(est->first_nonzero);
	free(est->ring_spread);
	free(est->spread);
	free(est->acc);
	free(est->acc_peek);
	free(est->iv_scratch);
	free(est->part);
	free(est->first);
	free(est->first_len);
	free(est);
}

static int check_layout(const mpxkit_layout *layout, const estimator_ops *ops, mpxkit_diag *diag)
{
	if (layout == NULL || layout->n_groups == 0 || layout->gap > (1u << 20))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator %s: invalid layout",
				   ops->info.name);
	for (size_t e = 0; layout->slice && e < layout->n_events; e++)
		if (layout->slice[e] >= layout->n_groups)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "estimator %s: event %zu's slice %zu is outside the "
					   "rotation of %zu slices",
					   ops->info.name, e, layout->slice[e], layout->n_groups);
	if (ops->interval == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator %s has no interval",
				   ops->info.name);
	if ((ops->info.flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) && !layout->has_reference)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "estimator %s needs a reference event counted in every slice",
				   ops->info.name);
	return 0;
}

/* The intervals' state: a spread state per ring slot, the totals, the run's first window. */
static int alloc_intervals(mpxkit_estimator *est)
{
	const mpxkit_layout *l = &est->layout;
	size_t ne = l->n_events ? l->n_events : 1, W = l->n_groups;

	est->ring_spread = calloc(est->ring_len * ne, sizeof *est->ring_spread);
	est->spread = calloc(ne, sizeof *est->spread);
	est->acc = calloc(ne, sizeof *est->acc);
	est->acc_peek = calloc(ne, sizeof *est->acc_peek);
	est->iv_scratch = calloc(ne, sizeof *est->iv_scratch);
	est->part = calloc(ne, sizeof *est->part);
	est->first = calloc(ne + W * ne + W, sizeof *est->first);
	est->first_len = calloc(W, sizeof *est->first_len);
	if (est->ring_spread == NULL || est->spread == NULL || est->acc == NULL ||
	    est->acc_peek == NULL || est->iv_scratch == NULL || est->part == NULL ||
	    est->first == NULL || est->first_len == NULL)
		return -MPXKIT_ENOMEM;
	spread_init(est->spread, l->n_events);
	interval_acc_init(est->acc, l->n_events);
	return 0;
}

static int alloc_ring(mpxkit_estimator *est)
{
	const mpxkit_layout *l = &est->layout;
	size_t n = est->info.lookback + est->info.lookahead + 1;

	est->ring_len = n;
	est->ring_obs = calloc(n * (l->n_events ? l->n_events : 1), sizeof *est->ring_obs);
	est->ring_val = calloc(n * l->n_groups * (l->n_events ? l->n_events : 1),
			       sizeof *est->ring_val);
	est->ring_len_ns = calloc(n * l->n_groups, sizeof *est->ring_len_ns);
	est->ring_has = calloc(n, 1);
	if (est->ring_val == NULL || est->ring_len_ns == NULL || est->ring_has == NULL)
		return -MPXKIT_ENOMEM;
	est->window = calloc(n, sizeof *est->window);
	est->scratch = calloc(l->n_events ? l->n_events : 1, sizeof *est->scratch);
	if (l->has_reference)
		est->ring_ref = calloc(n * l->n_groups, sizeof *est->ring_ref);
	est->first_nonzero = malloc((l->n_events ? l->n_events : 1) * sizeof *est->first_nonzero);
	if (est->ring_obs == NULL || est->window == NULL || est->scratch == NULL ||
	    est->first_nonzero == NULL || (l->has_reference && est->ring_ref == NULL))
		return -MPXKIT_ENOMEM;
	return alloc_intervals(est);
}

int mpxkit_estimator_new(mpxkit_estimator **out, const char *name, const mpxkit_layout *layout,
			 const mpxkit_estimator_options *opts, mpxkit_diag *diag)
{
	const mpxkit_estimator_info *info;
	const estimator_ops *ops;
	mpxkit_estimator *est = NULL;
	mpxkit_estimator_options none = {0};
	int rc;

	if (out == NULL || name == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator: missing argument");
	if (mpxkit_estimator_lookup(name, &info) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "no estimator named '%s'", name);
	/* info is the first member of its ops, so the registry entry is recovered from it. */
	ops = (const estimator_ops *)(const void *)info;
	rc = check_layout(layout, ops, diag);
	if (rc < 0)
		return rc;

	est = calloc(1, sizeof *est);
	if (est == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator: out of memory");
	est->ops = ops;
	est->info = ops->info;
	est->layout = *layout;
	if (layout->slice) {
		est->slice = malloc((layout->n_events ? layout->n_events : 1) * sizeof *est->slice);
		if (est->slice == NULL)
			goto nomem;
		if (layout->n_events)
			memcpy(est->slice, layout->slice, layout->n_events * sizeof *est->slice);
	}
	est->layout.slice = est->slice;
	est->level = MPXKIT_INTERVAL_LEVEL;
	if (ops->init) {
		rc = ops->init(est, opts ? opts : &none, diag);
		if (rc < 0) {
			est->ops = NULL; /* init failed: nothing for fini to release */
			mpxkit_estimator_free(est);
			return rc;
		}
	}
	/* Up to gap windows in a row may miss an event: the nearest observation lies beyond. */
	est->info.lookback += (unsigned)layout->gap;
	est->info.lookahead += (unsigned)layout->gap;
	est->own_lookahead = est->info.lookahead;
	if ((est->info.flags & MPXKIT_ESTIMATOR_LEARNED) &&
	    est->info.lookahead + 1 < MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS)
		est->info.lookahead = MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS - 1;
	if (alloc_ring(est) < 0)
		goto nomem;
	mpxkit_estimator_reset(est);
	*out = est;
	return 0;
nomem:
	mpxkit_estimator_free(est);
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator: out of memory");
}

int mpxkit_estimator_set_interval(mpxkit_estimator *est, double level, int model_only)
{
	if (est == NULL || !(level >= 0 && level <= MPXKIT_INTERVAL_LEVEL_MAX))
		return -MPXKIT_EINVAL;
	est->level = level > 0 ? level : MPXKIT_INTERVAL_LEVEL;
	est->interval_model = model_only != 0;
	return 0;
}

const mpxkit_estimator_info *mpxkit_estimator_info_of(const mpxkit_estimator *est)
{
	return est ? &est->info : NULL;
}

void mpxkit_estimator_reset(mpxkit_estimator *est)
{
	if (est == NULL)
		return;
	est->pushed = 0;
	est->emitted = 0;
	for (size_t e = 0; e < est->layout.n_events; e++)
		est->first_nonzero[e] = SIZE_MAX;
	spread_init(est->spread, est->layout.n_events);
	interval_acc_init(est->acc, est->layout.n_events);
}

/*
 * Window k's estimates as fixed gives them, on the window cut to fixed's own
 * reach (the layout's gap either side), so they are the registry's fixed's
 * bit for bit.
 */
static void estimate_as_fixed(const mpxkit_window *w, double *out)
{
	size_t gap = w->layout->gap;
	size_t before = w->n_before < gap ? w->n_before : gap;
	size_t after = w->n_after < gap ? w->n_after : gap;
	mpxkit_window own = {w->layout, w->k, before, after, w->rot + (w->n_before - before)};

	estimator_fixed.estimate(NULL, &own, out);
}

/* Windows a and b counted the same: every event in every slice, and the reference. */
static int same_window(const mpxkit_layout *l, const mpxkit_rotation *a, const mpxkit_rotation *b)
{
	size_t ne = l->n_events, W = l->n_groups;

	if (memcmp(a->obs, b->obs, ne * sizeof *a->obs) != 0 ||
	    (l->has_reference && memcmp(a->ref, b->ref, W * sizeof *a->ref) != 0))
		return 0;
	if (a->val == NULL && b->val == NULL)
		return 1; /* the layout's slices: obs is what each counted */
	for (size_t j = 0; j < W; j++) {
		if (rot_len(a, j) != rot_len(b, j))
			return 0;
		for (size_t e = 0; e < ne; e++)
			if (rot_val(l, a, j, e) != rot_val(l, b, j, e))
				return 0;
	}
	return 1;
}

/*
 * The learned estimators' rules (estimator.h, MPXKIT_ESTIMATOR_LEARNED): the
 * run is known to end before MIN_LEARNED_ROTATIONS (the window reaches its
 * end, n_after short of the look-ahead), or nothing in the window changes.
 */
static int learned_holds_back(const mpxkit_estimator *est, const mpxkit_window *w)
{
	size_t len = w->n_before + w->n_after + 1;

	if (w->n_after < est->info.lookahead &&
	    w->k + w->n_after + 1 < MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS)
		return 1;
	for (size_t i = 1; i < len; i++)
		if (!same_window(w->layout, &w->rot[0], &w->rot[i]))
			return 0;
	return 1;
}

/*
 * The learned rules' third (estimator.h): an event that has counted nothing
 * in the run up to the end of window k, first_nonzero[e] past it, is 0.
 */
static void zero_until_counted(const mpxkit_window *w, const size_t *first_nonzero, double *out)
{
	for (size_t e = 0; e < w->layout->n_events; e++)
		if (first_nonzero[e] > w->k + w->n_after)
			out[e] = 0.0;
}

/*
 * Every window goes through here, online and offline.  The estimator always
 * runs (its own state, bigru's stream, follows every window), on the window
 * trimmed to its own look-ahead; the learned rules may then replace what it
 * gave.
 */
static void estimate_window(const mpxkit_estimator *est, const mpxkit_window *w,
			    const size_t *first_nonzero, double *out)
{
	mpxkit_window own = *w;

	if (own.n_after > est->own_lookahead)
		own.n_after = est->own_lookahead;
	est->ops->estimate(est, &own, out);
	if (!(est->info.flags & MPXKIT_ESTIMATOR_LEARNED))
		return;
	if (learned_holds_back(est, w))
		estimate_as_fixed(w, out);
	zero_until_counted(w, first_nonzero, out);
}

/* The window the ring holds in slot, as a rotation. */
static mpxkit_rotation ring_window(const mpxkit_estimator *est, size_t slot)
{
	size_t W = est->layout.n_groups, ne = est->layout.n_events;
	mpxkit_rotation r = {est->ring_obs + slot * ne, est->ring_ref ? est->ring_ref + slot * W : NULL,
			     est->ring_has[slot] ? est->ring_val + slot * W * ne : NULL,
			     est->ring_has[slot] ? est->ring_len_ns + slot * W : NULL};
	return r;
}

/*
 * Window k's intervals read the spread state after window k + 1 when it is
 * within the window's reach (the differences with the next counted slice
 * are part of k's spread), else after k.
 */
static size_t spread_index(size_t k, size_t n_after)
{
	return k + (n_after > 0);
}

/* Estimates rotation k from the ring, with what has been pushed after it; iv may be NULL. */
static void estimate_at(mpxkit_estimator *est, size_t k, double *out, mpxkit_interval *iv,
			interval_part *part)
{
	size_t last = est->pushed - 1;
	size_t before = k < est->info.lookback ? k : est->info.lookback;
	size_t after = last - k < est->info.lookahead ? last - k : est->info.lookahead;
	mpxkit_window w = {&est->layout, k, before, after, est->window};

	for (size_t i = 0; i < before + after + 1; i++)
		est->window[i] = ring_window(est, (k - before + i) % est->ring_len);
	estimate_window(est, &w, est->first_nonzero, out);
	if (iv) {
		size_t slot = spread_index(k, after) % est->ring_len;
		interval_window(est, &w, est->ring_spread + slot * est->layout.n_events, out, iv,
				part);
	}
}

/* The oldest window not yet estimated, into out and iv, and into the run's totals. */
static void estimate_from_ring(mpxkit_estimator *est, double *out, mpxkit_interval *iv)
{
	size_t k = est->emitted, after = est->pushed - 1 - k;
	size_t slot = spread_index(k, after < est->info.lookahead ? after : est->info.lookahead) %
		      est->ring_len;
	mpxkit_interval *v = iv ? iv : est->iv_scratch;

	estimate_at(est, k, out, v, est->part);
	interval_acc_add(est->acc, est->layout.n_events, out, est->part,
			 est->ring_spread + slot * est->layout.n_events);
	est->emitted++;
}

/* The new window's spread state, after the previous newest one's, and the run's first window. */
static void fold_pushed(mpxkit_estimator *est, size_t slot)
{
	const mpxkit_layout *l = &est->layout;
	size_t ne = l->n_events, W = l->n_groups;
	mpxkit_rotation r = ring_window(est, slot);
	spread_state *after = est->ring_spread + slot * ne;

	spread_fold(l, &r, est->pushed, est->spread, after);
	if (ne)
		memcpy(est->spread, after, ne * sizeof *after);
	if (est->pushed > 0)
		return;
	if (ne)
		memcpy(est->first, r.obs, ne * sizeof *r.obs);
	est->first_has_val = r.val != NULL;
	if (r.val)
		memcpy(est->first + ne, r.val, W * ne * sizeof *r.val);
	if (r.ref)
		memcpy(est->first + ne + W * ne, r.ref, W * sizeof *r.ref);
	for (size_t j = 0; j < W; j++)
		est->first_len[j] = rot_len(&r, j);
}

/* The run's first window as kept by fold_pushed, or NULL before any push. */
static const mpxkit_rotation *first_window(const mpxkit_estimator *est, mpxkit_rotation *r)
{
	size_t ne = est->layout.n_events, W = est->layout.n_groups;

	if (est->pushed == 0)
		return NULL;
	*r = (mpxkit_rotation){est->first, est->layout.has_reference ? est->first + ne + W * ne : NULL,
			       est->first_has_val ? est->first + ne : NULL,
			       est->first_has_val ? est->first_len : NULL};
	return r;
}

int mpxkit_estimator_push(mpxkit_estimator *est, const mpxkit_rotation *rot, double *out)
{
	return mpxkit_estimator_push_iv(est, rot, out, NULL);
}

int mpxkit_estimator_push_iv(mpxkit_estimator *est, const mpxkit_rotation *rot, double *out,
			     mpxkit_interval *iv)
{
	size_t slot;

	if (est == NULL || rot == NULL || out == NULL ||
	    (est->layout.n_events > 0 && rot->obs == NULL) ||
	    (est->layout.has_reference && rot->ref == NULL) ||
	    (rot->val == NULL && est->layout.slice == NULL && est->layout.n_events > 0))
		return -MPXKIT_EINVAL;
	slot = est->pushed % est->ring_len;
	if (est->layout.n_events)
		memcpy(est->ring_obs + slot * est->layout.n_events, rot->obs,
		       est->layout.n_events * sizeof *rot->obs);
	est->ring_has[slot] = rot->val != NULL;
	if (rot->val) {
		size_t W = est->layout.n_groups;
		memcpy(est->ring_val + slot * W * est->layout.n_events, rot->val,
		       W * est->layout.n_events * sizeof *rot->val);
		for (size_t j = 0; j < W; j++)
			est->ring_len_ns[slot * W + j] = rot->len ? rot->len[j] : 1.0;
	}
	if (est->ring_ref)
		memcpy(est->ring_ref + slot * est->layout.n_groups, rot->ref,
		       est->layout.n_groups * sizeof *rot->ref);
	for (size_t e = 0; e < est->layout.n_events; e++)
		if (rot->obs[e] != 0 && est->first_nonzero[e] == SIZE_MAX)
			est->first_nonzero[e] = est->pushed;
	fold_pushed(est, slot);
	est->pushed++;
	if (est->pushed - est->emitted <= est->info.lookahead)
		return 0;
	estimate_from_ring(est, out, iv);
	return 1;
}

int mpxkit_estimator_flush(mpxkit_estimator *est, double *out)
{
	return mpxkit_estimator_flush_iv(est, out, NULL);
}

int mpxkit_estimator_flush_iv(mpxkit_estimator *est, double *out, mpxkit_interval *iv)
{
	if (est == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	if (est->emitted == est->pushed)
		return 0;
	estimate_from_ring(est, out, iv);
	return 1;
}

int mpxkit_estimator_peek(mpxkit_estimator *est, double *sum)
{
	return mpxkit_estimator_peek_iv(est, sum, NULL);
}

int mpxkit_estimator_peek_iv(mpxkit_estimator *est, double *sum, mpxkit_interval *iv)
{
	size_t ne;
	mpxkit_rotation first;

	if (est == NULL || sum == NULL)
		return -MPXKIT_EINVAL;
	ne = est->layout.n_events;
	for (size_t e = 0; e < ne; e++)
		sum[e] = 0.0;
	if (iv && ne)
		memcpy(est->acc_peek, est->acc, ne * sizeof *est->acc);
	for (size_t k = est->emitted; k < est->pushed; k++) {
		size_t after = est->pushed - 1 - k;
		size_t slot = spread_index(k, after) % est->ring_len;
		estimate_at(est, k, est->scratch, iv ? est->iv_scratch : NULL, est->part);
		for (size_t e = 0; e < ne; e++)
			sum[e] += est->scratch[e];
		if (iv)
			interval_acc_add(est->acc_peek, ne, est->scratch, est->part,
					 est->ring_spread + slot * ne);
	}
	if (iv)
		interval_total(est, est->acc_peek, est->spread, first_window(est, &first), iv);
	return (int)(est->pushed - est->emitted);
}

int mpxkit_estimator_total(const mpxkit_estimator *est, double *sum, mpxkit_interval *iv)
{
	mpxkit_rotation first;

	if (est == NULL)
		return -MPXKIT_EINVAL;
	for (size_t e = 0; sum && e < est->layout.n_events; e++)
		sum[e] = est->acc[e].est;
	if (iv)
		interval_total(est, est->acc, est->spread, first_window(est, &first), iv);
	return 0;
}

mpxkit_rotation series_window(const mpxkit_layout *l, const mpxkit_series *run, size_t r)
{
	size_t ne = l->n_events, W = l->n_groups;
	mpxkit_rotation rot = {run->obs + r * ne,
			       l->has_reference && run->ref ? run->ref + r * W : NULL,
			       run->val ? run->val + r * W * ne : NULL,
			       run->val && run->len ? run->len + r * W : NULL};

	return rot;
}

static int series_ok(const mpxkit_layout *l, const mpxkit_series *run)
{
	return run != NULL &&
	       (run->n_windows == 0 ||
		(run->obs != NULL && (!l->has_reference || run->ref != NULL) &&
		 (run->val != NULL || l->slice != NULL || l->n_events == 0)));
}

/* Each event's first window of run with a count above 0 (SIZE_MAX: none), as push keeps it. */
static size_t *series_first_nonzero(const mpxkit_layout *l, const mpxkit_series *run)
{
	size_t ne = l->n_events, *first = malloc((ne ? ne : 1) * sizeof *first);

	if (first == NULL)
		return NULL;
	for (size_t e = 0; e < ne; e++) {
		first[e] = SIZE_MAX;
		for (size_t r = 0; r < run->n_windows && first[e] == SIZE_MAX; r++)
			if (run->obs[r * ne + e] != 0)
				first[e] = r;
	}
	return first;
}

/*
 * The intervals of a run's estimates (est's estimates of run, in out), as
 * the online path gives them: the same windows, the spread state folded
 * window by window as pushes fold it, each window's from the state after
 * k + min(1, n_after).  iv or total may be NULL.
 */
static int series_intervals(const mpxkit_estimator *est, const mpxkit_series *run,
			    const double *out, mpxkit_interval *iv, mpxkit_interval *total)
{
	const mpxkit_layout *l = &est->layout;
	size_t ne = l->n_events, n = run->n_windows, nn = ne ? ne : 1, folded = 0;
	size_t len = est->ring_len + 1;
	mpxkit_rotation *rot = malloc(est->ring_len * sizeof *rot), first;
	spread_state *ring = malloc(len * nn * sizeof *ring), *newest;
	interval_acc *acc = malloc(nn * sizeof *acc);
	interval_part *part = malloc(nn * sizeof *part);
	mpxkit_interval *scratch = iv ? NULL : malloc(nn * sizeof *scratch);
	int rc = 0;

	if (rot == NULL || ring == NULL || acc == NULL || part == NULL || (!iv && !scratch)) {
		rc = -MPXKIT_ENOMEM;
		goto out;
	}
	/* Slot len - 1 of the ring stands for "before the first window". */
	spread_init(ring + (len - 1) * nn, ne);
	newest = ring + (len - 1) * nn;
	interval_acc_init(acc, ne);
	for (size_t k = 0; k < n; k++) {
		size_t before = k < est->info.lookback ? k : est->info.lookback;
		size_t left = n - 1 - k;
		size_t after = left < est->info.lookahead ? left : est->info.lookahead;
		mpxkit_window w = {l, k, before, after, rot};
		mpxkit_interval *v = iv ? iv + k * ne : scratch;
		const spread_state *st;
		for (; folded <= k + after; folded++) {
			mpxkit_rotation r = series_window(l, run, folded);
			spread_state *next = ring + (folded % (len - 1)) * nn;
			spread_fold(l, &r, folded, newest, next);
			newest = next;
		}
		for (size_t i = 0; i < before + after + 1; i++)
			rot[i] = series_window(l, run, k - before + i);
		st = ring + (spread_index(k, after) % (len - 1)) * nn;
		interval_window(est, &w, st, out + k * ne, v, part);
		interval_acc_add(acc, ne, out + k * ne, part, st);
	}
	if (total) {
		first = series_window(l, run, 0);
		interval_total(est, acc, newest, n ? &first : NULL, total);
	}
out:
	free(rot);
	free(ring);
	free(acc);
	free(part);
	free(scratch);
	return rc;
}

int mpxkit_estimator_run_series(const mpxkit_estimator *est, const mpxkit_series *run, double *out)
{
	const mpxkit_layout *l;
	mpxkit_rotation *rot;
	size_t ne, n, *first;

	if (est == NULL || !series_ok(&est->layout, run) || (run->n_windows > 0 && out == NULL))
		return -MPXKIT_EINVAL;
	l = &est->layout;
	ne = l->n_events;
	n = run->n_windows;
	rot = malloc(est->ring_len * sizeof *rot);
	first = series_first_nonzero(l, run);
	if (rot == NULL || first == NULL) {
		free(rot);
		free(first);
		return -MPXKIT_ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		size_t before = k < est->info.lookback ? k : est->info.lookback;
		size_t left = n - 1 - k;
		size_t after = left < est->info.lookahead ? left : est->info.lookahead;
		mpxkit_window w = {l, k, before, after, rot};
		for (size_t i = 0; i < before + after + 1; i++)
			rot[i] = series_window(l, run, k - before + i);
		estimate_window(est, &w, first, out + k * ne);
	}
	free(rot);
	free(first);
	return 0;
}

int mpxkit_estimator_run_series_iv(const mpxkit_estimator *est, const mpxkit_series *run,
				   double *out, mpxkit_interval *iv, mpxkit_interval *total)
{
	int rc = mpxkit_estimator_run_series(est, run, out);

	if (rc < 0 || (iv == NULL && total == NULL))
		return rc;
	return series_intervals(est, run, out, iv, total);
}

int mpxkit_estimator_run(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			 const uint64_t *ref, double *out)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_estimator_run_series(est, &run, out);
}

int mpxkit_estimator_has_whole_run(const mpxkit_estimator *est)
{
	return est != NULL && est->ops->whole_run != NULL;
}

/*
 * The learned rules over a whole-run pass, with the windows the online path
 * would build: a run shorter than MIN_LEARNED_ROTATIONS is fixed's, and so
 * is each window whose neighbourhood shows no change; an event that counted
 * nothing up to the end of a window's neighbourhood is 0 there.  same_to[r] is the
 * last window up to which windows r, r + 1, ... all count the same, so each
 * neighbourhood is checked in constant time.
 */
static int whole_run_holds_back(const mpxkit_estimator *est, const mpxkit_series *run, double *out,
				mpxkit_diag *diag)
{
	const mpxkit_layout *l = &est->layout;
	size_t n = run->n_windows, ne = l->n_events, gap = l->gap, *same_to, *first;
	mpxkit_rotation *rot = malloc((2 * gap + 1) * sizeof *rot);

	same_to = malloc(n * sizeof *same_to);
	first = series_first_nonzero(l, run);
	if (rot == NULL || same_to == NULL || first == NULL) {
		free(rot);
		free(same_to);
		free(first);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory",
				   est->info.name);
	}
	same_to[n - 1] = n - 1;
	for (size_t r = n - 1; r-- > 0;) {
		mpxkit_rotation a = series_window(l, run, r), b = series_window(l, run, r + 1);
		same_to[r] = same_window(l, &a, &b) ? same_to[r + 1] : r;
	}
	for (size_t k = 0; k < n; k++) {
		size_t lo = k < est->info.lookback ? 0 : k - est->info.lookback;
		size_t hi = n - 1 - k < est->info.lookahead ? n - 1 : k + est->info.lookahead;
		size_t before = k < gap ? k : gap, after = n - 1 - k < gap ? n - 1 - k : gap;
		mpxkit_window w = {l, k, before, after, rot};

		for (size_t e = 0; e < ne; e++)
			if (first[e] > hi)
				out[k * ne + e] = 0.0;
		if (n >= MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS && same_to[lo] < hi)
			continue;
		for (size_t i = 0; i < before + after + 1; i++)
			rot[i] = series_window(l, run, k - before + i);
		estimate_as_fixed(&w, out + k * ne);
	}
	free(rot);
	free(same_to);
	free(first);
	return 0;
}

int mpxkit_estimator_run_whole_series(const mpxkit_estimator *est, const mpxkit_series *run,
				      double *out, mpxkit_diag *diag)
{
	int rc;

	if (est == NULL || !series_ok(&est->layout, run) || (run->n_windows > 0 && out == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator: missing argument");
	if (run->n_windows == 0)
		return 0;
	if (est->ops->whole_run != NULL) {
		rc = est->ops->whole_run(est, run, out, diag);
		if (rc == 0 && (est->info.flags & MPXKIT_ESTIMATOR_LEARNED))
			rc = whole_run_holds_back(est, run, out, diag);
		return rc;
	}
	rc = mpxkit_estimator_run_series(est, run, out);
	/* Its arguments were checked above: only its window array can fail. */
	return rc < 0
		   ? mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", est->info.name)
		   : 0;
}

int mpxkit_estimator_run_whole_series_iv(const mpxkit_estimator *est, const mpxkit_series *run,
					 double *out, mpxkit_interval *iv, mpxkit_interval *total,
					 mpxkit_diag *diag)
{
	int rc = mpxkit_estimator_run_whole_series(est, run, out, diag);

	if (rc < 0 || (iv == NULL && total == NULL))
		return rc;
	if (series_intervals(est, run, out, iv, total) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory",
				   est->info.name);
	return 0;
}

int mpxkit_estimator_run_whole(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			       const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	mpxkit_series run = {n_rotations, obs, ref, NULL, NULL};

	return mpxkit_estimator_run_whole_series(est, &run, out, diag);
}

/* ---- the run-total anchor ----------------------------------------------------------------- */

void mpxkit_anchor_totals(size_t n, size_t n_events, const double *fixed, double *out)
{
	for (size_t e = 0; e < n_events; e++) {
		double f = 0, s = 0;
		for (size_t k = 0; k < n; k++) {
			f += fixed[k * n_events + e];
			s += out[k * n_events + e];
		}
		if (s > 0) {
			double scale = f / s;
			for (size_t k = 0; k < n; k++)
				out[k * n_events + e] *= scale;
		} else if (f > 0) {
			for (size_t k = 0; k < n; k++)
				out[k * n_events + e] = fixed[k * n_events + e];
		}
	}
}

int mpxkit_estimator_anchor_series(const mpxkit_estimator *est, const mpxkit_series *run,
				   double *out, mpxkit_interval *iv, mpxkit_interval *total)
{
	const mpxkit_layout *l;
	size_t ne, n, gap;
	double *fixed;
	mpxkit_rotation *rot;

	if (est == NULL || !series_ok(&est->layout, run) || (run->n_windows > 0 && out == NULL))
		return -MPXKIT_EINVAL;
	l = &est->layout;
	ne = l->n_events;
	n = run->n_windows;
	gap = l->gap;
	fixed = malloc((n > 0 && ne > 0 ? n * ne : 1) * sizeof *fixed);
	rot = malloc((2 * gap + 1) * sizeof *rot);
	if (fixed == NULL || rot == NULL) {
		free(fixed);
		free(rot);
		return -MPXKIT_ENOMEM;
	}
	/* Fixed's windows as the registry's fixed gives them: its reach is the layout's gap. */
	for (size_t k = 0; k < n; k++) {
		size_t before = k < gap ? k : gap, after = n - 1 - k < gap ? n - 1 - k : gap;
		mpxkit_window w = {l, k, before, after, rot};
		for (size_t i = 0; i < before + after + 1; i++)
			rot[i] = series_window(l, run, k - before + i);
		estimator_fixed.estimate(NULL, &w, fixed + k * ne);
	}
	mpxkit_anchor_totals(n, ne, fixed, out);
	free(fixed);
	free(rot);
	if (iv == NULL && total == NULL)
		return 0;
	return series_intervals(est, run, out, iv, total);
}

/* ---- what a window saw, for the formulas of every estimator ---------------------------- */

event_seen window_seen(const mpxkit_window *w, long d, size_t e)
{
	const mpxkit_layout *l = w->layout;
	const mpxkit_rotation *r = &w->rot[(long)w->n_before + d];
	event_seen x = {(double)r->obs[e], 0.0, 0.0};

	for (size_t j = 0; j < l->n_groups; j++) {
		double len = rot_len(r, j);
		x.T += len;
		if (rot_val(l, r, j, e) != MPXKIT_NOT_COUNTED)
			x.t += len;
	}
	return x;
}

/*
 * The rate of the last (dir < 0) or first (dir > 0) slice of window k + d
 * that counted e, per nominal slice; 0 when none did.
 */
static int edge_rate(const mpxkit_window *w, long d, size_t e, int dir, double *rate)
{
	const mpxkit_layout *l = w->layout;
	const mpxkit_rotation *r = &w->rot[(long)w->n_before + d];

	for (size_t i = 0; i < l->n_groups; i++) {
		size_t j = dir < 0 ? l->n_groups - 1 - i : i;
		uint64_t v = rot_val(l, r, j, e);
		double len = rot_len(r, j);
		if (v != MPXKIT_NOT_COUNTED && len > 0) {
			*rate = (double)v / len;
			return 1;
		}
	}
	return 0;
}

/*
 * The neighbours' rates are those of the slices nearest to window k: the
 * previous observed window's last counted slice and the next one's first,
 * so a burst that one slice saw and the next did not is not carried into
 * the windows around it.  Round-robin counts one slice per window, so this
 * is v1's obs of rotation k -+ 1.
 */
event_rates window_rates(const mpxkit_window *w, size_t e)
{
	event_rates x = {window_seen(w, 0, e), 0, 0, 0, 0, 0};

	x.r = x.k.t > 0 ? x.k.c / x.k.t : 0.0;
	for (size_t d = 1; d <= w->n_before; d++)
		if (edge_rate(w, -(long)d, e, -1, &x.rp)) {
			x.dp = d;
			break;
		}
	for (size_t d = 1; d <= w->n_after; d++)
		if (edge_rate(w, (long)d, e, 1, &x.rn)) {
			x.dn = d;
			break;
		}
	return x;
}

double estimate_unseen(const event_rates *x)
{
	double rate;

	if (x->dp && x->dn)
		rate = x->rp + (x->rn - x->rp) * (double)x->dp / (double)(x->dp + x->dn);
	else if (x->dp)
		rate = x->rp;
	else if (x->dn)
		rate = x->rn;
	else
		return 0.0;
	return rate * x->k.T;
}

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
	free(est->window);
	free(est->scratch);
	free(est);
}

static int check_layout(const mpxkit_layout *layout, const estimator_ops *ops, mpxkit_diag *diag)
{
	if (layout == NULL || layout->n_groups == 0 ||
	    (layout->n_events > 0 && layout->slice == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator %s: invalid layout",
				   ops->info.name);
	for (size_t e = 0; e < layout->n_events; e++)
		if (layout->slice[e] >= layout->n_groups)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "estimator %s: event %zu's slice %zu is outside the "
					   "rotation of %zu slices",
					   ops->info.name, e, layout->slice[e], layout->n_groups);
	if ((ops->info.flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE) && !layout->has_reference)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "estimator %s needs a reference event counted in every slice",
				   ops->info.name);
	return 0;
}

static int alloc_ring(mpxkit_estimator *est)
{
	const mpxkit_layout *l = &est->layout;
	size_t n = est->info.lookback + est->info.lookahead + 1;

	est->ring_len = n;
	est->ring_obs = calloc(n * (l->n_events ? l->n_events : 1), sizeof *est->ring_obs);
	est->window = calloc(n, sizeof *est->window);
	est->scratch = calloc(l->n_events ? l->n_events : 1, sizeof *est->scratch);
	if (l->has_reference)
		est->ring_ref = calloc(n * l->n_groups, sizeof *est->ring_ref);
	if (est->ring_obs == NULL || est->window == NULL || est->scratch == NULL ||
	    (l->has_reference && est->ring_ref == NULL))
		return -MPXKIT_ENOMEM;
	return 0;
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
	est->slice = malloc((layout->n_events ? layout->n_events : 1) * sizeof *est->slice);
	if (est->slice == NULL)
		goto nomem;
	if (layout->n_events)
		memcpy(est->slice, layout->slice, layout->n_events * sizeof *est->slice);
	est->layout.slice = est->slice;
	if (ops->init) {
		rc = ops->init(est, opts ? opts : &none, diag);
		if (rc < 0) {
			est->ops = NULL; /* init failed: nothing for fini to release */
			mpxkit_estimator_free(est);
			return rc;
		}
	}
	est->own_lookahead = est->info.lookahead;
	if ((est->info.flags & MPXKIT_ESTIMATOR_LEARNED) &&
	    est->info.lookahead + 1 < MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS)
		est->info.lookahead = MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS - 1;
	if (alloc_ring(est) < 0)
		goto nomem;
	*out = est;
	return 0;
nomem:
	mpxkit_estimator_free(est);
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator: out of memory");
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
}

/* Every estimate of rotation k is fixed's: G times what its one slice saw. */
static void estimate_as_fixed(const mpxkit_layout *l, const uint64_t *obs, double *out)
{
	for (size_t e = 0; e < l->n_events; e++)
		out[e] = estimate_fixed((double)l->n_groups, (double)obs[e]);
}

/* Rotations a and b counted the same: every event, and the reference. */
static int same_rotation(const mpxkit_layout *l, const mpxkit_rotation *a, const mpxkit_rotation *b)
{
	return memcmp(a->obs, b->obs, l->n_events * sizeof *a->obs) == 0 &&
	       (!l->has_reference || memcmp(a->ref, b->ref, l->n_groups * sizeof *a->ref) == 0);
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
		if (!same_rotation(w->layout, &w->rot[0], &w->rot[i]))
			return 0;
	return 1;
}

/*
 * Every window goes through here, online and offline.  The estimator always
 * runs (its own state, bigru's stream, follows every rotation), on the
 * window trimmed to its own look-ahead; the learned rules may then replace
 * what it gave.
 */
static void estimate_window(const mpxkit_estimator *est, const mpxkit_window *w, double *out)
{
	mpxkit_window own = *w;

	if (own.n_after > est->own_lookahead)
		own.n_after = est->own_lookahead;
	est->ops->estimate(est, &own, out);
	if ((est->info.flags & MPXKIT_ESTIMATOR_LEARNED) && learned_holds_back(est, w))
		estimate_as_fixed(w->layout, w->rot[w->n_before].obs, out);
}

/* Estimates rotation k from the ring, with what has been pushed after it. */
static void estimate_at(mpxkit_estimator *est, size_t k, double *out)
{
	size_t last = est->pushed - 1;
	size_t before = k < est->info.lookback ? k : est->info.lookback;
	size_t after = last - k < est->info.lookahead ? last - k : est->info.lookahead;
	mpxkit_window w = {&est->layout, k, before, after, est->window};

	for (size_t i = 0; i < before + after + 1; i++) {
		size_t slot = (k - before + i) % est->ring_len;
		est->window[i].obs = est->ring_obs + slot * est->layout.n_events;
		est->window[i].ref =
		    est->ring_ref ? est->ring_ref + slot * est->layout.n_groups : NULL;
	}
	estimate_window(est, &w, out);
}

static void estimate_from_ring(mpxkit_estimator *est, double *out)
{
	estimate_at(est, est->emitted, out);
	est->emitted++;
}

int mpxkit_estimator_push(mpxkit_estimator *est, const mpxkit_rotation *rot, double *out)
{
	size_t slot;

	if (est == NULL || rot == NULL || out == NULL ||
	    (est->layout.n_events > 0 && rot->obs == NULL) ||
	    (est->layout.has_reference && rot->ref == NULL))
		return -MPXKIT_EINVAL;
	slot = est->pushed % est->ring_len;
	if (est->layout.n_events)
		memcpy(est->ring_obs + slot * est->layout.n_events, rot->obs,
		       est->layout.n_events * sizeof *rot->obs);
	if (est->ring_ref)
		memcpy(est->ring_ref + slot * est->layout.n_groups, rot->ref,
		       est->layout.n_groups * sizeof *rot->ref);
	est->pushed++;
	if (est->pushed - est->emitted <= est->info.lookahead)
		return 0;
	estimate_from_ring(est, out);
	return 1;
}

int mpxkit_estimator_flush(mpxkit_estimator *est, double *out)
{
	if (est == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	if (est->emitted == est->pushed)
		return 0;
	estimate_from_ring(est, out);
	return 1;
}

int mpxkit_estimator_peek(mpxkit_estimator *est, double *sum)
{
	size_t ne;

	if (est == NULL || sum == NULL)
		return -MPXKIT_EINVAL;
	ne = est->layout.n_events;
	for (size_t e = 0; e < ne; e++)
		sum[e] = 0.0;
	for (size_t k = est->emitted; k < est->pushed; k++) {
		estimate_at(est, k, est->scratch);
		for (size_t e = 0; e < ne; e++)
			sum[e] += est->scratch[e];
	}
	return (int)(est->pushed - est->emitted);
}

int mpxkit_estimator_run(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			 const uint64_t *ref, double *out)
{
	const mpxkit_layout *l;
	mpxkit_rotation *rot;
	size_t ne, ng;

	if (est == NULL || (n_rotations > 0 && (out == NULL || obs == NULL)))
		return -MPXKIT_EINVAL;
	l = &est->layout;
	if (l->has_reference && n_rotations > 0 && ref == NULL)
		return -MPXKIT_EINVAL;
	ne = l->n_events;
	ng = l->n_groups;
	rot = malloc(est->ring_len * sizeof *rot);
	if (rot == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t k = 0; k < n_rotations; k++) {
		size_t before = k < est->info.lookback ? k : est->info.lookback;
		size_t left = n_rotations - 1 - k;
		size_t after = left < est->info.lookahead ? left : est->info.lookahead;
		mpxkit_window w = {l, k, before, after, rot};
		for (size_t i = 0; i < before + after + 1; i++) {
			size_t r = k - before + i;
			rot[i].obs = obs + r * ne;
			rot[i].ref = l->has_reference ? ref + r * ng : NULL;
		}
		estimate_window(est, &w, out + k * ne);
	}
	free(rot);
	return 0;
}

int mpxkit_estimator_has_whole_run(const mpxkit_estimator *est)
{
	return est != NULL && est->ops->whole_run != NULL;
}

/*
 * The learned rules over a whole-run pass, with the windows the online path
 * would build: a run shorter than MIN_LEARNED_ROTATIONS is fixed's, and so
 * is each rotation whose window shows no change.  same_to[r] is the last
 * rotation up to which rotations r, r + 1, ... all count the same, so each
 * window is checked in constant time.
 */
static int whole_run_holds_back(const mpxkit_estimator *est, size_t n, const uint64_t *obs,
				const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	const mpxkit_layout *l = &est->layout;
	size_t ne = l->n_events, ng = l->n_groups, *same_to;

	if (n < MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS) {
		for (size_t k = 0; k < n; k++)
			estimate_as_fixed(l, obs + k * ne, out + k * ne);
		return 0;
	}
	same_to = malloc(n * sizeof *same_to);
	if (same_to == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory",
				   est->info.name);
	same_to[n - 1] = n - 1;
	for (size_t r = n - 1; r-- > 0;) {
		mpxkit_rotation a = {obs + r * ne, ref ? ref + r * ng : NULL},
				b = {obs + (r + 1) * ne, ref ? ref + (r + 1) * ng : NULL};
		same_to[r] = same_rotation(l, &a, &b) ? same_to[r + 1] : r;
	}
	for (size_t k = 0; k < n; k++) {
		size_t lo = k < est->info.lookback ? 0 : k - est->info.lookback;
		size_t hi = n - 1 - k < est->info.lookahead ? n - 1 : k + est->info.lookahead;
		if (same_to[lo] >= hi)
			estimate_as_fixed(l, obs + k * ne, out + k * ne);
	}
	free(same_to);
	return 0;
}

int mpxkit_estimator_run_whole(const mpxkit_estimator *est, size_t n_rotations, const uint64_t *obs,
			       const uint64_t *ref, double *out, mpxkit_diag *diag)
{
	int rc;

	if (est == NULL || (n_rotations > 0 && (out == NULL || obs == NULL)) ||
	    (est->layout.has_reference && n_rotations > 0 && ref == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "estimator: missing argument");
	if (n_rotations == 0)
		return 0;
	if (est->ops->whole_run != NULL) {
		rc = est->ops->whole_run(est, n_rotations, obs, ref, out, diag);
		if (rc == 0 && (est->info.flags & MPXKIT_ESTIMATOR_LEARNED))
			rc = whole_run_holds_back(est, n_rotations, obs, ref, out, diag);
		return rc;
	}
	rc = mpxkit_estimator_run(est, n_rotations, obs, ref, out);
	/* Its arguments were checked above: only its window array can fail. */
	return rc < 0
		   ? mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", est->info.name)
		   : 0;
}

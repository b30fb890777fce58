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
	est->ops->estimate(est, &w, out);
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
		est->ops->estimate(est, &w, out + k * ne);
	}
	free(rot);
	return 0;
}

int mpxkit_estimator_has_whole_run(const mpxkit_estimator *est)
{
	return est != NULL && est->ops->whole_run != NULL;
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
	if (est->ops->whole_run != NULL)
		return est->ops->whole_run(est, n_rotations, obs, ref, out, diag);
	rc = mpxkit_estimator_run(est, n_rotations, obs, ref, out);
	/* Its arguments were checked above: only its window array can fail. */
	return rc < 0
		   ? mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", est->info.name)
		   : 0;
}

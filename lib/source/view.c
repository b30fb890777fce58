/* SPDX-License-Identifier: BSD-3-Clause */
/* The "view" counter source: some slots of another source, seen as a source of their own. */
#include <stdlib.h>
#include <string.h>

#include "source_impl.h"

typedef struct view_source {
	struct mpxkit_source base; /* first: the generic layer casts */
	mpxkit_source *parent;	   /* not owned */
	size_t *map;		   /* view slot i is the parent's slot map[i] */
	size_t cap;
	pthread_mutex_t *lock; /* taken around each call on the parent; NULL: none */
} view_source;

static void take(const view_source *vs)
{
	if (vs->lock)
		pthread_mutex_lock(vs->lock);
}

static void give(const view_source *vs)
{
	if (vs->lock)
		pthread_mutex_unlock(vs->lock);
}

static view_source *as_view(mpxkit_source *s)
{
	return (view_source *)s;
}

static const view_source *as_view_const(const mpxkit_source *s)
{
	return (const view_source *)s;
}

/*
 * Scratch for one call: a snapshot of one slot may run in several threads
 * at once (lib/sched/sched.c, "The unlocked read"), so nothing is kept in
 * the source; on the stack for the usual sizes.
 */
#define STACK_SLOTS 72

static int view_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	view_source *vs = as_view(s);
	int rc;

	take(vs);
	rc = mpxkit_source_list(vs->parent, i, out);
	give(vs);
	return rc;
}

static int view_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	view_source *vs = as_view(s);
	int slot;

	if (s->n_slots == vs->cap) {
		size_t cap = vs->cap ? 2 * vs->cap : 8;
		size_t *map = realloc(vs->map, cap * sizeof *map);
		if (map == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory adding a slot",
					   name);
		vs->map = map;
		vs->cap = cap;
	}
	take(vs);
	slot = mpxkit_source_add(vs->parent, name, diag);
	give(vs);
	if (slot < 0)
		return slot;
	vs->map[s->n_slots] = (size_t)slot;
	return (int)s->n_slots++;
}

static const char *view_slot_name(const mpxkit_source *s, int slot)
{
	const view_source *vs = as_view_const(s);

	return mpxkit_source_slot_name(vs->parent, (int)vs->map[slot]);
}

/* One operation on one slot, or on each of the view's: the first failure wins, all are tried. */
static int each(mpxkit_source *s, int slot, int (*op)(mpxkit_source *, int))
{
	view_source *vs = as_view(s);
	int rc = 0;

	take(vs);
	if (slot != MPXKIT_SOURCE_ALL)
		rc = op(vs->parent, (int)vs->map[slot]);
	for (size_t i = 0; slot == MPXKIT_SOURCE_ALL && i < s->n_slots; i++) {
		int r = op(vs->parent, (int)vs->map[i]);
		rc = rc ? rc : r;
	}
	give(vs);
	return rc;
}

static int view_enable(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_enable);
}

static int view_disable(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_disable);
}

static int view_reset(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_reset);
}

/*
 * The parent's counts for the listed view slots (all with slots NULL), into
 * counts[view slot]; the parent's other slots are not read.
 */
static int read_mapped(view_source *vs, const size_t *slots, size_t n, mpxkit_source_count *counts)
{
	size_t n_parent = mpxkit_source_n_slots(vs->parent), k = slots ? n : vs->base.n_slots;
	size_t pslots_stack[STACK_SLOTS], *pslots = pslots_stack;
	mpxkit_source_count *tmp = malloc((n_parent ? n_parent : 1) * sizeof *tmp);
	int rc = -MPXKIT_ENOMEM;

	if (k > STACK_SLOTS)
		pslots = malloc(k * sizeof *pslots);
	if (tmp != NULL && pslots != NULL) {
		for (size_t i = 0; i < k; i++)
			pslots[i] = vs->map[slots ? slots[i] : i];
		take(vs);
		rc = mpxkit_source_read_slots(vs->parent, pslots, k, tmp);
		give(vs);
		for (size_t i = 0; rc >= 0 && i < k; i++)
			counts[slots ? slots[i] : i] = tmp[pslots[i]];
	}
	if (pslots != pslots_stack)
		free(pslots);
	free(tmp);
	return rc < 0 ? rc : 0;
}

static int view_read(mpxkit_source *s, mpxkit_source_count *counts)
{
	return read_mapped(as_view(s), NULL, 0, counts);
}

static int view_read_slots(mpxkit_source *s, const size_t *slots, size_t n,
			   mpxkit_source_count *counts)
{
	return read_mapped(as_view(s), slots, n, counts);
}

static int view_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			 uint64_t *clock_ns)
{
	view_source *vs = as_view(s);
	size_t stack[STACK_SLOTS] = {0}, *pslots = stack;
	int rc;

	if (n > STACK_SLOTS && (pslots = malloc(n * sizeof *pslots)) == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < n; i++)
		pslots[i] = vs->map[slots[i]];
	take(vs);
	rc = mpxkit_source_snapshot(vs->parent, pslots, n, values, clock_ns);
	give(vs);
	if (pslots != stack)
		free(pslots);
	return rc;
}

static int view_clock(mpxkit_source *s, uint64_t *ns)
{
	view_source *vs = as_view(s);
	int rc;

	take(vs);
	rc = mpxkit_source_clock(vs->parent, ns);
	give(vs);
	return rc;
}

static int view_target_cpu(mpxkit_source *s)
{
	/* It touches nothing the other calls use (mpxkit/source.h): no lock. */
	return mpxkit_source_target_cpu(as_view(s)->parent);
}

/* The view's parts as the parent's, its other slots in none. */
static int view_partition(mpxkit_source *s, const size_t *part, size_t n_parts, mpxkit_diag *diag)
{
	view_source *vs = as_view(s);
	size_t n_parent = mpxkit_source_n_slots(vs->parent);
	size_t *ppart = malloc((n_parent ? n_parent : 1) * sizeof *ppart);
	int rc;

	if (ppart == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "view: out of memory for parts");
	for (size_t i = 0; i < n_parent; i++)
		ppart[i] = MPXKIT_SOURCE_NO_PART;
	for (size_t i = 0; i < s->n_slots; i++)
		ppart[vs->map[i]] = part[i];
	take(vs);
	rc = mpxkit_source_partition(vs->parent, ppart, n_parts, diag);
	give(vs);
	free(ppart);
	return rc;
}

/* The parent's switch; what it does not write of counts stays as the caller had it. */
static int view_switch_part(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
			    uint64_t *clock_ns)
{
	view_source *vs = as_view(s);
	size_t n_parent = mpxkit_source_n_slots(vs->parent);
	mpxkit_source_count *tmp = calloc(n_parent ? n_parent : 1, sizeof *tmp);
	int rc;

	if (tmp == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < s->n_slots; i++)
		tmp[vs->map[i]] = counts[i];
	take(vs);
	rc = mpxkit_source_switch_part(vs->parent, from, to, tmp, clock_ns);
	give(vs);
	for (size_t i = 0; i < s->n_slots; i++)
		counts[i] = tmp[vs->map[i]];
	free(tmp);
	return rc;
}

static int view_countable(const mpxkit_source *s, const size_t *slots, size_t n)
{
	const view_source *vs = as_view_const(s);
	size_t stack[STACK_SLOTS] = {0}, *pslots = stack;
	int rc;

	if (n > STACK_SLOTS && (pslots = malloc(n * sizeof *pslots)) == NULL)
		return 1; /* as a source without constraints says */
	for (size_t i = 0; i < n; i++)
		pslots[i] = vs->map[slots[i]];
	take(vs);
	rc = mpxkit_source_countable(vs->parent, pslots, n);
	give(vs);
	if (pslots != stack)
		free(pslots);
	return rc;
}

static int view_counter_pmu(const mpxkit_source *s, size_t slot)
{
	const view_source *vs = as_view_const(s);

	return mpxkit_source_counter_pmu(vs->parent, (int)vs->map[slot]);
}

static void view_free(mpxkit_source *s)
{
	free(as_view(s)->map);
	free(s);
}

static const mpxkit_source_ops view_ops = {
    .kind = "view",
    .list = view_list,
    .add = view_add,
    .slot_name = view_slot_name,
    .enable = view_enable,
    .disable = view_disable,
    .reset = view_reset,
    .read = view_read,
    .read_slots = view_read_slots,
    .snapshot = view_snapshot,
    .free = view_free,
    .clock = view_clock,
    .target_cpu = view_target_cpu,
    .partition = view_partition,
    .switch_part = view_switch_part,
    .countable = view_countable,
    .counter_pmu = view_counter_pmu,
};

int mpxkit_source_open_view(mpxkit_source **out, mpxkit_source *parent, const size_t *slots,
			    size_t n, pthread_mutex_t *lock, mpxkit_diag *diag)
{
	view_source *vs;

	if (out == NULL || parent == NULL || (n > 0 && slots == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "view source: missing argument");
	if (mpxkit_source_is_virtual(parent))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "view source: the parent is virtual, not a real-time source");
	for (size_t i = 0; i < n; i++)
		if (slots[i] >= mpxkit_source_n_slots(parent))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "view source: slot %zu is not the parent's", slots[i]);
	vs = calloc(1, sizeof *vs);
	if (vs == NULL || (vs->map = malloc((n ? n : 1) * sizeof *vs->map)) == NULL) {
		free(vs);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "view source: out of memory");
	}
	memcpy(vs->map, slots, n * sizeof *slots);
	vs->parent = parent;
	vs->lock = lock;
	vs->cap = n ? n : 1;
	vs->base.ops = &view_ops;
	vs->base.n_slots = n;
	*out = &vs->base;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* prior: a fixed share of counter time per event, from the learned table (doc/schedules.md). */
#include <stdlib.h>

#include "schedule-impl.h"

#define KEY_FLOOR 0

typedef struct prior_state {
	picker pick;
	double *burst; /* E */
} prior_state;

static size_t prior_next(mpxkit_schedule *s, size_t *set)
{
	prior_state *st = s->state;

	return picker_next(&st->pick, s, NULL, set);
}

/* The most burst-prone events first: their first deadlines come first (picker_reset). */
static void burst_rank(const double *burst, size_t E, size_t *rank)
{
	for (size_t i = 0; i < E; i++)
		rank[i] = i;
	for (size_t i = 1; i < E; i++) /* insertion sort, stable: ties keep the index order */
		for (size_t j = i; j > 0 && burst[rank[j]] > burst[rank[j - 1]]; j--) {
			size_t t = rank[j];
			rank[j] = rank[j - 1];
			rank[j - 1] = t;
		}
}

/* The first deadlines' order, set by init, never changes: the picker keeps it. */
static void prior_reset(mpxkit_schedule *s)
{
	prior_state *st = s->state;

	picker_reset(&st->pick, st->pick.rank);
}

static void prior_fini(mpxkit_schedule *s)
{
	prior_state *st = s->state;

	if (st == NULL)
		return;
	picker_free(&st->pick);
	free(st->burst);
	free(st);
}

int prior_setup(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, double *variability,
		picker *pick, double **burst, mpxkit_diag *diag)
{
	size_t floor = (size_t)s->key[KEY_FLOOR], *rank;

	s->M = floor > s->G ? floor : s->G;
	*burst = calloc(s->E ? s->E : 1, sizeof **burst);
	if (*burst == NULL || picker_init(pick, s->E, s->C, s->M) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule %s: out of memory",
				   s->ops->info.name);
	for (size_t e = 0; e < s->E; e++)
		prior_lookup(setup->events[e], &variability[e], &(*burst)[e]);
	picker_shares(pick, variability);
	rank = pick->rank; /* picker_reset copies from it: ranking in place is fine */
	burst_rank(*burst, s->E, rank);
	picker_reset(pick, rank);
	return 0;
}

static int prior_init(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, mpxkit_diag *diag)
{
	prior_state *st = calloc(1, sizeof *st);
	double *v = malloc((s->E ? s->E : 1) * sizeof *v);
	int rc;

	if (st == NULL || v == NULL) {
		free(st);
		free(v);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule prior: out of memory");
	}
	s->state = st;
	rc = prior_setup(s, setup, v, &st->pick, &st->burst, diag);
	free(v);
	if (rc < 0)
		prior_fini(s);
	return rc;
}

const schedule_ops schedule_prior = {
    .info = {.name = "prior",
	     .summary = "a fixed share of counter time per event, learned on training traces",
	     .keys = "floor=M"},
    .keys = {{"floor", 12, 1, 1000000, 1}},
    .n_keys = 1,
    .init = prior_init,
    .fini = prior_fini,
    .next = prior_next,
    .reset = prior_reset,
};

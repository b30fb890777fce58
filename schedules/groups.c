/* SPDX-License-Identifier: BSD-3-Clause */
/* groups: the groups of a group file, group s mod G in slice s. */
#include <stdlib.h>

#include "schedule-impl.h"

/* The events of each group, in file order: first[g] .. first[g+1] index member[]. */
typedef struct groups_state {
	size_t *first;
	size_t *member;
} groups_state;

static size_t groups_next(mpxkit_schedule *s, size_t *set)
{
	const groups_state *st = s->state;
	size_t g = (size_t)(s->slice % s->G), n = 0;

	for (size_t i = st->first[g]; i < st->first[g + 1]; i++)
		set[n++] = st->member[i];
	return n;
}

static void groups_fini(mpxkit_schedule *s)
{
	groups_state *st = s->state;

	if (st == NULL)
		return;
	free(st->first);
	free(st->member);
	free(st);
}

static int groups_init(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, mpxkit_diag *diag)
{
	const mpxkit_groups *g = setup->groups;
	groups_state *st;
	size_t at = 0;

	if (g == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "schedule groups needs a group file (give the file itself as "
				   "the schedule)");
	if (g->n_names != s->E)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "schedule groups: %s names %zu events, %zu are multiplexed",
				   g->source, g->n_names, s->E);
	st = calloc(1, sizeof *st);
	if (st == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule groups: out of memory");
	s->state = st;
	st->first = calloc(g->n_groups + 1, sizeof *st->first);
	st->member = calloc(g->n_names ? g->n_names : 1, sizeof *st->member);
	if (st->first == NULL || st->member == NULL) {
		groups_fini(s);
		s->state = NULL;
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule groups: out of memory");
	}
	for (size_t j = 0; j < g->n_groups; j++) {
		size_t size = 0;
		st->first[j] = at;
		for (size_t i = 0; i < g->n_names; i++)
			if (g->group[i] == j) {
				st->member[at++] = i;
				size++;
			}
		if (size > s->C) {
			groups_fini(s);
			s->state = NULL;
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s: group %zu has %zu events, more than the %zu "
					   "counters",
					   g->source, j + 1, size, s->C);
		}
	}
	st->first[g->n_groups] = at;
	s->G = s->M = g->n_groups;
	return 0;
}

const schedule_ops schedule_groups = {
    .info = {.name = "groups",
	     .summary = "the groups of a group file, one group per slice",
	     .keys = ""},
    .init = groups_init,
    .fini = groups_fini,
    .next = groups_next,
};

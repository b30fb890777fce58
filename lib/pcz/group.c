/* SPDX-License-Identifier: BSD-3-Clause */
/* Which blocks of a region are differenced against which reference (claims 2-3 of the spec). */
#include <stdlib.h>
#include <string.h>

#include "pcz_impl.h"

uint64_t pcz_unit_duration(const mpxkit_pcz_unit *u)
{
	uint64_t start = u->times[0], end = u->times[2 * u->n_steps - 1];
	return end >= start ? end - start : 0;
}

uint32_t pcz_balance_ppm(const uint64_t *dur, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	if (n == 0)
		return 1000000;
	for (size_t i = 0; i < n; i++) {
		lo = dur[i] < lo ? dur[i] : lo;
		hi = dur[i] > hi ? dur[i] : hi;
	}
	return pcz_ppm_of(lo, hi);
}

uint32_t pcz_ppm_of(uint64_t lo, uint64_t hi)
{
	if (hi == 0)
		return 1000000;
	/* 64-bit division when lo * 1e6 fits: several times cheaper than 128-bit. */
	if (lo < UINT64_MAX / 1000000u)
		return (uint32_t)(lo * 1000000u / hi);
	return (uint32_t)((unsigned __int128)lo * 1000000u / hi);
}

struct keyed {
	uint64_t dur;
	size_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Neighbours a <= b in sorted order belong together when a / b >= threshold. */
static int close_enough(uint64_t a, uint64_t b, uint32_t threshold_ppm)
{
	if (b == 0)
		return 1;
	return (unsigned __int128)a * 1000000u >= (unsigned __int128)b * threshold_ppm;
}

size_t pcz_cluster(const uint64_t *dur, size_t *idx, size_t n, uint32_t threshold_ppm,
		   size_t *cluster)
{
	struct keyed *k;
	size_t c = 0;

	if (n == 0)
		return 0;
	k = malloc(n * sizeof *k);
	if (k == NULL)
		return SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct keyed){ dur[idx[i]], idx[i] };
	qsort(k, n, sizeof *k, keyed_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && !close_enough(k[i - 1].dur, k[i].dur, threshold_ppm))
			c++;
		idx[i] = k[i].idx;
		cluster[i] = c;
	}
	free(k);
	return c + 1;
}

uint64_t pcz_diff_cost(const uint64_t *m, const uint64_t *r, size_t n)
{
	uint64_t cost = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i] != r[i])
			cost += pcz_varint_len(pcz_zigzag(m[i] - r[i]));
	return cost;
}

size_t pcz_medoid(const mpxkit_pcz_unit *units, const size_t *members, size_t n, size_t n_events)
{
	size_t n_cand = n > PCZ_MEDOID_CANDIDATES ? PCZ_MEDOID_CANDIDATES : n;
	size_t best = 0, elems = units[members[0]].n_steps * n_events;
	uint64_t best_cost = UINT64_MAX;

	for (size_t k = 0; k < n_cand; k++) {
		size_t pos = n_cand == n ? k : (size_t)((unsigned __int128)k * n / n_cand);
		const uint64_t *r = units[members[pos]].values;
		uint64_t cost = 0;
		for (size_t j = 0; j < n && cost < best_cost; j++)
			if (j != pos)
				cost += pcz_diff_cost(units[members[j]].values, r, elems);
		/* Candidates come in member order, so the strict < keeps the lower index on ties. */
		if (cost < best_cost) {
			best_cost = cost;
			best = pos;
		}
	}
	return best;
}

void pcz_plan_free(pcz_plan *plan)
{
	free(plan->mem);
	memset(plan, 0, sizeof *plan);
}

/* Makes members (unit indices, any order) one group if it has two or more. */
static void add_group(pcz_plan *plan, size_t *members, size_t n)
{
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++)
		plan->group_of[members[i]] = plan->n_groups;
	plan->n_groups++;
}

/* Groups the units of one shape, idx[0..n), following the mode. */
static int plan_shape(pcz_plan *plan, const uint64_t *dur, size_t *idx, size_t n,
		      mpxkit_pcz_grouping mode, uint32_t threshold_ppm, uint64_t *scratch)
{
	size_t n_clusters, start = 0;

	if (mode == MPXKIT_PCZ_GROUP_NONE || n < 2)
		return 0;
	if (mode != MPXKIT_PCZ_GROUP_CLUSTER) {
		for (size_t i = 0; i < n; i++)
			scratch[i] = dur[idx[i]];
		if (pcz_balance_ppm(scratch, n) >= threshold_ppm) {
			add_group(plan, idx, n);
			return 0;
		}
		if (mode == MPXKIT_PCZ_GROUP_BALANCE)
			return 0;
	}
	n_clusters = pcz_cluster(dur, idx, n, threshold_ppm, (size_t *)scratch);
	if (n_clusters == SIZE_MAX)
		return -MPXKIT_ENOMEM;
	for (size_t i = 1; i <= n; i++) {
		if (i == n || scratch[i] != scratch[start]) {
			add_group(plan, idx + start, i - start);
			start = i;
		}
	}
	return 0;
}

/* Renumbers groups by their first member and picks each group's medoid. */
static void finish_plan(pcz_plan *plan, const mpxkit_pcz_unit *units, size_t n_units,
			size_t n_events, size_t *members, size_t *renum)
{
	size_t next = 0;

	for (size_t g = 0; g < plan->n_groups; g++)
		renum[g] = SIZE_MAX;
	for (size_t u = 0; u < n_units; u++) {
		size_t g = plan->group_of[u];
		if (g != SIZE_MAX && renum[g] == SIZE_MAX)
			renum[g] = next++;
	}
	for (size_t u = 0; u < n_units; u++)
		if (plan->group_of[u] != SIZE_MAX)
			plan->group_of[u] = renum[plan->group_of[u]];
	for (size_t g = 0; g < plan->n_groups; g++) {
		size_t n = 0;
		for (size_t u = 0; u < n_units; u++)
			if (plan->group_of[u] == g)
				members[n++] = u;
		plan->group_ref[g] = members[pcz_medoid(units, members, n, n_events)];
	}
}

int pcz_plan_region(const mpxkit_pcz_unit *units, size_t n_units, size_t n_events,
		    mpxkit_pcz_grouping mode, uint32_t threshold_ppm, pcz_plan *plan)
{
	uint64_t *dur, *scratch;
	size_t *idx;
	struct keyed *k;
	int rc = 0;

	memset(plan, 0, sizeof *plan);
	if (n_units == 0 || n_units > SIZE_MAX / 128)
		return -MPXKIT_EINVAL;
	/* group_of, group_ref, work (2n), dur, scratch, idx, keyed (2 words): 9 words a unit. */
	plan->mem = malloc(n_units * 9 * sizeof(uint64_t));
	if (plan->mem == NULL)
		return -MPXKIT_ENOMEM;
	plan->group_of = plan->mem;
	plan->group_ref = plan->group_of + n_units;
	plan->work = plan->group_ref + n_units;
	dur = (uint64_t *)(plan->work + 2 * n_units);
	scratch = dur + n_units;
	idx = (size_t *)(scratch + n_units);
	k = (struct keyed *)(idx + n_units);
	for (size_t u = 0; u < n_units; u++) {
		dur[u] = pcz_unit_duration(&units[u]);
		plan->group_of[u] = SIZE_MAX;
		k[u] = (struct keyed){ units[u].n_steps, u };
	}
	plan->balance_ppm = pcz_balance_ppm(dur, n_units);
	if (n_units == 1 || mode == MPXKIT_PCZ_GROUP_NONE)
		return 0;
	/* Shapes: sort unit indices by (n_steps, index), then plan each run of one shape. */
	qsort(k, n_units, sizeof *k, keyed_cmp);
	for (size_t i = 0; i < n_units; i++)
		idx[i] = k[i].idx;
	for (size_t s = 0, i = 1; i <= n_units && rc == 0; i++) {
		if (i == n_units || units[idx[i]].n_steps != units[idx[s]].n_steps) {
			rc = plan_shape(plan, dur, idx + s, i - s, mode, threshold_ppm, scratch);
			s = i;
		}
	}
	if (rc < 0) {
		pcz_plan_free(plan);
		return rc;
	}
	finish_plan(plan, units, n_units, n_events, plan->work, (size_t *)scratch);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* adaptive: shares from each event's observed variability relative to its level, starting from
 * the prior, with the floor and a start-up phase for the burst-prone events (doc/schedules.md). */
#include <math.h>
#include <stdlib.h>

#include "schedule-impl.h"

enum { KEY_FLOOR, KEY_STARTUP, KEY_WEIGHT, KEY_DECAY };

/*
 * Per event: the prior's variability, and the observed one as decayed sums
 * of |r - r'| and (r + r')/2 over successive observations r', r (counts
 * per nominal slice); n the decayed number of such pairs.
 */
typedef struct adaptive_state {
	picker pick;
	double *burst, *v_prior, *w;
	double *last;		/* the last observed rate */
	unsigned char *seen;	/* last holds a rate */
	double *diff, *level, *n;
	long prefer[64 + 1];	/* the start-up set: the C most burst-prone, -1 ended */
	int stale;		/* observed since the shares were last set */
} adaptive_state;

/*
 * Neyman allocation: a share in proportion to the variability, prior and
 * observed blended.  Once per rotation (G slices) at most, so a slice costs
 * O(C) and the shares O(E) per slice on average (bench/bench_schedule).
 */
static void update_shares(mpxkit_schedule *s, adaptive_state *st)
{
	double k0 = s->key[KEY_WEIGHT];

	for (size_t e = 0; e < s->E; e++) {
		double v_obs = st->level[e] > 0 ? st->diff[e] / st->level[e] : 0.0;
		st->w[e] = (k0 * st->v_prior[e] + st->n[e] * v_obs) / (k0 + st->n[e]);
	}
	picker_shares(&st->pick, st->w);
	st->stale = 0;
}

static size_t adaptive_next(mpxkit_schedule *s, size_t *set)
{
	adaptive_state *st = s->state;
	int startup = s->slice < (uint64_t)s->key[KEY_STARTUP];

	if (st->stale && s->slice % s->G == 0)
		update_shares(s, st);
	return picker_next(&st->pick, s, startup ? st->prefer : NULL, set);
}

/* Each counted event's change since its last observation, relative to its level. */
static void adaptive_observe(mpxkit_schedule *s, const size_t *set, size_t n, const uint64_t *val,
			     double len)
{
	adaptive_state *st = s->state;
	double decay = s->key[KEY_DECAY];

	if (!(len > 0))
		return;
	for (size_t i = 0; i < n; i++) {
		size_t e = set[i];
		double r = (double)val[i] / len;
		if (st->seen[e]) {
			st->diff[e] = decay * st->diff[e] + fabs(r - st->last[e]);
			st->level[e] = decay * st->level[e] + 0.5 * (r + st->last[e]);
			st->n[e] = decay * st->n[e] + 1.0;
		}
		st->last[e] = r;
		st->seen[e] = 1;
	}
	st->stale = 1;
}

static void adaptive_reset(mpxkit_schedule *s)
{
	adaptive_state *st = s->state;

	for (size_t e = 0; e < s->E; e++) {
		st->seen[e] = 0;
		st->diff[e] = st->level[e] = st->n[e] = 0;
	}
	picker_shares(&st->pick, st->v_prior);
	picker_reset(&st->pick, st->pick.rank);
	st->stale = 0;
}

static void adaptive_fini(mpxkit_schedule *s)
{
	adaptive_state *st = s->state;

	if (st == NULL)
		return;
	picker_free(&st->pick);
	free(st->burst);
	free(st->v_prior);
	free(st->w);
	free(st->last);
	free(st->seen);
	free(st->diff);
	free(st->level);
	free(st->n);
	free(st);
}

static int adaptive_init(mpxkit_schedule *s, const mpxkit_schedule_setup *setup,
			 mpxkit_diag *diag)
{
	size_t n = s->E ? s->E : 1, c = s->C < 64 ? s->C : 64, i;
	adaptive_state *st = calloc(1, sizeof *st);
	int rc;

	if (st == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule adaptive: out of memory");
	s->state = st;
	st->v_prior = calloc(n, sizeof *st->v_prior);
	st->w = calloc(n, sizeof *st->w);
	st->last = calloc(n, sizeof *st->last);
	st->seen = calloc(n, 1);
	st->diff = calloc(n, sizeof *st->diff);
	st->level = calloc(n, sizeof *st->level);
	st->n = calloc(n, sizeof *st->n);
	if (!st->v_prior || !st->w || !st->last || !st->seen || !st->diff || !st->level ||
	    !st->n) {
		adaptive_fini(s);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule adaptive: out of memory");
	}
	rc = prior_setup(s, setup, st->v_prior, &st->pick, &st->burst, diag);
	if (rc < 0) {
		adaptive_fini(s);
		return rc;
	}
	/* The start-up set: the most burst-prone events, the picker's first ranks. */
	for (i = 0; i < c && i < s->E; i++)
		st->prefer[i] = (long)st->pick.rank[i];
	st->prefer[i] = -1;
	return 0;
}

const schedule_ops schedule_adaptive = {
    .info = {.name = "adaptive",
	     .summary = "shares from each event's observed variability, from the prior on, with "
			"a start-up phase for burst-prone events",
	     .keys = "floor=M, startup=S, weight=K, decay=D"},
    /* Chosen on the training and validation programs: doc/schedules.md, "Settings". */
    .keys = {{"floor", 12, 1, 1000000, 1},
	     {"startup", 3, 0, 1000000, 1},
	     {"weight", 2, 0, 1e9, 0},
	     {"decay", 1, 0, 1, 0}},
    .n_keys = 4,
    .init = adaptive_init,
    .fini = adaptive_fini,
    .next = adaptive_next,
    .observe = adaptive_observe,
    .reset = adaptive_reset,
};

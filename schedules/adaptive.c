/* SPDX-License-Identifier: BSD-3-Clause */
/* adaptive: shares from each event's observed variability relative to its level, starting from
 * the prior, with the floor and a start-up phase for the burst-prone events (doc/schedules.md). */
#include <math.h>
#include <stdlib.h>

#include "schedule-impl.h"

enum { KEY_FLOOR, KEY_STARTUP, KEY_WEIGHT, KEY_DECAY, KEY_KEEP, KEY_MEASURE, KEY_POWER };

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
	double *rel;		/* measure=1: the decayed sum of |r - r'| / ((r + r')/2) */
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
	double k0 = s->key[KEY_WEIGHT], keep = s->key[KEY_KEEP], power = s->key[KEY_POWER];
	double m = s->key[KEY_MEASURE];

	for (size_t e = 0; e < s->E; e++) {
		double v_sums = st->level[e] > 0 ? st->diff[e] / st->level[e] : 0.0;
		double v_pairs = st->n[e] > 0 ? st->rel[e] / st->n[e] : 0.0;
		double v_obs = m == 0 ? v_sums : m == 1 ? v_pairs : (1 - m) * v_sums + m * v_pairs;
		double w = (k0 * st->v_prior[e] + st->n[e] * v_obs) / (k0 + st->n[e]);
		if (w < keep * st->v_prior[e])
			w = keep * st->v_prior[e];
		st->w[e] = power == 1 ? w : pow(w, power);
	}
	picker_shares(&st->pick, st->w);
	st->stale = 0;
}

/* The shares before any observation: the prior's variabilities, to the power. */
static void prior_shares(mpxkit_schedule *s, adaptive_state *st)
{
	double power = s->key[KEY_POWER];

	for (size_t e = 0; e < s->E; e++)
		st->w[e] = power == 1 ? st->v_prior[e] : pow(st->v_prior[e], power);
	picker_shares(&st->pick, st->w);
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
			double d = fabs(r - st->last[e]), m = 0.5 * (r + st->last[e]);
			st->diff[e] = decay * st->diff[e] + d;
			st->level[e] = decay * st->level[e] + m;
			st->rel[e] = decay * st->rel[e] + (m > 0 ? d / m : 0.0);
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
		st->diff[e] = st->level[e] = st->n[e] = st->rel[e] = 0;
	}
	prior_shares(s, st);
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
	free(st->rel);
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
	st->rel = calloc(n, sizeof *st->rel);
	if (!st->v_prior || !st->w || !st->last || !st->seen || !st->diff || !st->level ||
	    !st->n || !st->rel) {
		adaptive_fini(s);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule adaptive: out of memory");
	}
	rc = prior_setup(s, setup, st->v_prior, &st->pick, &st->burst, diag);
	if (rc < 0) {
		adaptive_fini(s);
		return rc;
	}
	prior_shares(s, st);
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
	     .keys = "floor=M, startup=S, weight=K, decay=D, keep=F, measure=B, power=A"},
    /* Chosen on the training and validation programs: doc/schedules.md, "Settings". */
    .keys = {{"floor", 12, 1, 1000000, 1},
	     {"startup", 4, 0, 1000000, 1},
	     {"weight", 2, 0, 1e9, 0},
	     {"decay", 1, 0, 1, 0},
	     {"keep", 0, 0, 1e9, 0},
	     {"measure", 0.9, 0, 1, 0},
	     {"power", 1, 0, 4, 0}},
    .n_keys = 7,
    .init = adaptive_init,
    .fini = adaptive_fini,
    .next = adaptive_next,
    .observe = adaptive_observe,
    .reset = adaptive_reset,
};

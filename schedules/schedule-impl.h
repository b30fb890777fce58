/* SPDX-License-Identifier: BSD-3-Clause */
/* What a schedule implements, the registry's list of them, and the share picker that prior and
 * adaptive share; private to the library. */
#ifndef MPXKIT_SCHEDULE_IMPL_H
#define MPXKIT_SCHEDULE_IMPL_H

#include "mpxkit/mpx.h"
#include "mpxkit/schedule.h"

#define SCHEDULE_MAX_KEYS 8
#define SCHEDULE_SPEC_MAX 160

/* One NAME:KEY=VALUE setting: whole numbers or reals within [min, max]. */
typedef struct schedule_key {
	const char *name;
	double value; /* the default */
	double min, max;
	int whole;
} schedule_key;

/*
 * One schedule.  init sees the parsed keys in s->key and the setup; next and
 * observe follow mpxkit_schedule_next/observe; reset returns to slice 0.
 * Only init allocates.
 */
typedef struct schedule_ops {
	mpxkit_schedule_info info;
	schedule_key keys[SCHEDULE_MAX_KEYS];
	size_t n_keys;
	int (*init)(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, mpxkit_diag *diag);
	void (*fini)(mpxkit_schedule *s);
	size_t (*next)(mpxkit_schedule *s, size_t *set);
	void (*observe)(mpxkit_schedule *s, const size_t *set, size_t n, const uint64_t *val,
			double len);
	void (*reset)(mpxkit_schedule *s);
} schedule_ops;

struct mpxkit_schedule {
	const schedule_ops *ops;
	size_t E, C;
	size_t G; /* slices of a rotation */
	size_t M; /* the period: every event at least once in any M slices */
	double key[SCHEDULE_MAX_KEYS];
	char spec[SCHEDULE_SPEC_MAX];
	mpxkit_countable_fn countable;
	void *countable_arg;
	uint64_t slice; /* the slice whose set next() decides: the slices decided so far */
	void *state;
};

extern const schedule_ops schedule_round_robin;
extern const schedule_ops schedule_groups;
extern const schedule_ops schedule_prior;
extern const schedule_ops schedule_adaptive;

/*
 * The share picker behind prior and adaptive.  Each event e has a share
 * p_e of the counters (sum C, each in [1/M, 1]) and a credit that grows by
 * p_e each slice and drops by 1 each time e counts; each slice counts the
 * events whose deadline it is (counted last M slices ago), then those with
 * the most credit.  At most C events share a deadline (C count per slice,
 * and the first deadlines are set C at a time), so the period M holds
 * (doc/schedules.md, "The floor").
 */
typedef struct picker {
	size_t E, C, M;
	double *share;	   /* E */
	double *credit;	   /* E */
	uint64_t *due;	   /* E: the slice by which e must count */
	size_t *rank;	   /* E: the order of the first deadlines, most urgent first */
	unsigned char *in; /* E: scratch */
	uint64_t slice;	   /* the next slice to decide */
} picker;

int picker_init(picker *p, size_t E, size_t C, size_t M);
void picker_free(picker *p);
/* Sets rank (a permutation, most urgent first) and starts at slice 0. */
void picker_reset(picker *p, const size_t *rank);
/*
 * The next slice's set, with prefer (NULL: none) counted first after the
 * due events when it holds events (at most C, -1 ended), as the start-up
 * phase does.
 */
size_t picker_next(picker *p, const mpxkit_schedule *s, const long *prefer, size_t *set);
/* Shares from weights: p_e = clamp(lambda w_e, 1/M, 1) with sum C (water filling). */
void picker_shares(picker *p, const double *w);

/* The learned prior (schedules/prior_table.c, made by `mpxkit train --model prior`). */
typedef struct prior_row {
	const char *event;
	double variability; /* mean |x_{s+1} - x_s| / mean x_s over the training traces */
	double burst;	    /* slice 0's count / the mean slice's, over the training traces */
} prior_row;

extern const prior_row prior_table[];
extern const size_t prior_table_len;

/* An event's variability and burst: its row, else the mean of its kind's rows. */
void prior_lookup(const char *event, double *variability, double *burst);

/*
 * prior's and adaptive's start (schedules/prior.c): the floor M = max(key 0,
 * G), since G slices are the least that count every event once; each event's
 * variability (E, the caller's) and burst (*burst, malloc'd) from the table;
 * the picker with the shares of those variabilities and the first deadlines
 * most burst-prone first.
 */
int prior_setup(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, double *variability,
		picker *pick, double **burst, mpxkit_diag *diag);

#endif

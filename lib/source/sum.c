/* SPDX-License-Identifier: BSD-3-Clause */
/* The "sum" counter source: several sources counted as one (CPUs, threads), counts summed. */
#include <stdlib.h>
#include <string.h>

#include "source_impl.h"

typedef struct sum_source {
	struct mpxkit_source base; /* first: the generic layer casts */
	mpxkit_source **members;
	size_t n;
	int broken;   /* an add failed after some members took the slot: only free is left */
	size_t *part; /* n_slots: each slot's part, once partitioned (mpxkit_source_partition) */
} sum_source;

static sum_source *as_sum(mpxkit_source *s)
{
	return (sum_source *)s;
}

/*
 * Scratch for one call, on the stack for the usual sizes: a snapshot of one
 * slot may run in several threads at once (lib/sched/sched.c, "The unlocked
 * read"), so nothing is kept in the source.
 */
#define STACK_SLOTS 72

static int sum_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	return mpxkit_source_list(as_sum(s)->members[0], i, out);
}

static int sum_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	sum_source *ss = as_sum(s);

	if (ss->broken)
		return mpxkit_fail(diag, MPXKIT_ESTATE,
				   "%s: a failed add left this source unusable", name);
	for (size_t m = 0; m < ss->n; m++) {
		int slot = mpxkit_source_add(ss->members[m], name, diag);
		if (slot < 0) {
			ss->broken = m > 0;
			return slot;
		}
		if ((size_t)slot != s->n_slots) {
			ss->broken = 1;
			return mpxkit_fail(diag, MPXKIT_ESTATE,
					   "%s: the summed sources hold different slots", name);
		}
	}
	return (int)s->n_slots++;
}

static const char *sum_slot_name(const mpxkit_source *s, int slot)
{
	return mpxkit_source_slot_name(((const sum_source *)s)->members[0], slot);
}

/* One operation on every member; the first failure wins, but every member is tried. */
static int each(mpxkit_source *s, int slot, int (*op)(mpxkit_source *, int))
{
	sum_source *ss = as_sum(s);
	int rc = 0;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	for (size_t m = 0; m < ss->n; m++) {
		int r = op(ss->members[m], slot);
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

static int sum_enable(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_enable);
}

static int sum_disable(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_disable);
}

static int sum_reset(mpxkit_source *s, int slot)
{
	return each(s, slot, mpxkit_source_reset);
}

static void add_count(mpxkit_source_count *to, const mpxkit_source_count *c)
{
	to->value += c->value;
	to->time_enabled += c->time_enabled;
	to->time_running += c->time_running;
}

/*
 * The listed slots (every slot when slots is NULL) of every member, summed
 * into counts: values and times alike, as perf stat sums a counter's CPUs
 * and threads before it scales by time enabled over time running.
 */
static int read_summed(sum_source *ss, const size_t *slots, size_t n, mpxkit_source_count *counts)
{
	size_t n_slots = ss->base.n_slots;
	mpxkit_source_count stack[STACK_SLOTS], *one = stack;
	int rc = 0;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	if (n_slots > STACK_SLOTS && (one = malloc(n_slots * sizeof *one)) == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < (slots ? n : n_slots); i++)
		memset(&counts[slots ? slots[i] : i], 0, sizeof *counts);
	for (size_t m = 0; m < ss->n && rc >= 0; m++) {
		rc = slots ? mpxkit_source_read_slots(ss->members[m], slots, n, one)
			   : mpxkit_source_read(ss->members[m], one, n_slots);
		for (size_t i = 0; rc >= 0 && i < (slots ? n : n_slots); i++) {
			size_t k = slots ? slots[i] : i;
			add_count(&counts[k], &one[k]);
		}
	}
	if (one != stack)
		free(one);
	return rc < 0 ? rc : 0;
}

static int sum_read(mpxkit_source *s, mpxkit_source_count *counts)
{
	return read_summed(as_sum(s), NULL, 0, counts);
}

static int sum_read_slots(mpxkit_source *s, const size_t *slots, size_t n,
			  mpxkit_source_count *counts)
{
	return read_summed(as_sum(s), slots, n, counts);
}

/* Each member's snapshot, summed; the system calls too.  -MPXKIT_ENOSUPP when any lacks one. */
static int sum_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			uint64_t *clock_ns)
{
	sum_source *ss = as_sum(s);
	uint64_t stack[STACK_SLOTS], *one = stack, clock = 0, total_clock = 0;
	int calls = 0, rc = 0;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	if (n > STACK_SLOTS && (one = malloc(n * sizeof *one)) == NULL)
		return -MPXKIT_ENOMEM;
	memset(values, 0, n * sizeof *values);
	for (size_t m = 0; m < ss->n && rc >= 0; m++) {
		rc =
		    mpxkit_source_snapshot(ss->members[m], slots, n, one, clock_ns ? &clock : NULL);
		if (rc < 0)
			break;
		calls += rc;
		total_clock += clock;
		for (size_t i = 0; i < n; i++)
			values[i] += one[i];
	}
	if (one != stack)
		free(one);
	if (rc < 0)
		return rc;
	if (clock_ns)
		*clock_ns = total_clock;
	return calls;
}

/* The members' clocks summed: CPUs' or threads' time, as their slots' enabled times add up. */
static int sum_clock(mpxkit_source *s, uint64_t *ns)
{
	sum_source *ss = as_sum(s);
	uint64_t total = 0;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	for (size_t m = 0; m < ss->n; m++) {
		uint64_t one;
		int rc = mpxkit_source_clock(ss->members[m], &one);
		if (rc < 0)
			return rc;
		total += one;
	}
	*ns = total;
	return 0;
}

/*
 * Every member partitioned alike.  A member that fails leaves those before
 * it partitioned: their slots still switch one by one, each with its part,
 * which under a fixed schedule is the set switched anyway.
 */
static int sum_partition(mpxkit_source *s, const size_t *part, size_t n_parts, mpxkit_diag *diag)
{
	sum_source *ss = as_sum(s);
	size_t n = s->n_slots;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	if ((ss->part = malloc(n * sizeof *ss->part)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "sum source: out of memory");
	memcpy(ss->part, part, n * sizeof *part);
	for (size_t m = 0; m < ss->n; m++) {
		int rc = mpxkit_source_partition(ss->members[m], part, n_parts, diag);
		if (rc < 0) {
			free(ss->part);
			ss->part = NULL;
			return rc;
		}
	}
	return 0;
}

/* Each member's switch; the closed part's counts and the clocks summed. */
static int sum_switch_part(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
			   uint64_t *clock_ns)
{
	sum_source *ss = as_sum(s);
	size_t n_slots = s->n_slots;
	mpxkit_source_count stack[STACK_SLOTS], *one = stack;
	uint64_t total = 0;
	int rc = 0;

	if (ss->broken)
		return -MPXKIT_ESTATE;
	if (n_slots > STACK_SLOTS && (one = malloc(n_slots * sizeof *one)) == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < n_slots; i++)
		if (from != MPXKIT_SOURCE_NO_PART && ss->part[i] == from)
			memset(&counts[i], 0, sizeof *counts);
	for (size_t m = 0; m < ss->n && rc == 0; m++) {
		uint64_t clock = 0;
		rc = mpxkit_source_switch_part(ss->members[m], from, to, one, &clock);
		total += clock;
		for (size_t i = 0; rc == 0 && i < n_slots; i++)
			if (from != MPXKIT_SOURCE_NO_PART && ss->part[i] == from)
				add_count(&counts[i], &one[i]);
	}
	if (one != stack)
		free(one);
	*clock_ns = total;
	return rc;
}

static int sum_countable(const mpxkit_source *s, const size_t *slots, size_t n)
{
	const sum_source *ss = (const sum_source *)s;

	for (size_t m = 0; m < ss->n; m++)
		if (!mpxkit_source_countable(ss->members[m], slots, n))
			return 0;
	return 1;
}

static int sum_counter_pmu(const mpxkit_source *s, size_t slot)
{
	return mpxkit_source_counter_pmu(((const sum_source *)s)->members[0], (int)slot);
}

static void sum_free(mpxkit_source *s)
{
	sum_source *ss = as_sum(s);

	for (size_t m = 0; m < ss->n; m++)
		mpxkit_source_free(ss->members[m]);
	free(ss->members);
	free(ss->part);
	free(ss);
}

static const mpxkit_source_ops sum_ops = {
    .kind = "sum",
    .list = sum_list,
    .add = sum_add,
    .slot_name = sum_slot_name,
    .enable = sum_enable,
    .disable = sum_disable,
    .reset = sum_reset,
    .read = sum_read,
    .read_slots = sum_read_slots,
    .snapshot = sum_snapshot,
    .free = sum_free,
    .clock = sum_clock,
    .countable = sum_countable,
    .counter_pmu = sum_counter_pmu,
    .partition = sum_partition,
    .switch_part = sum_switch_part,
};

/* The members' slots, all alike: the same count, the same events in the same order. */
static int same_slots(mpxkit_source *const *members, size_t n, mpxkit_diag *diag)
{
	size_t slots = mpxkit_source_n_slots(members[0]);

	for (size_t m = 1; m < n; m++) {
		if (mpxkit_source_n_slots(members[m]) != slots)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "sum source: member %zu has %zu slots, member 0 has %zu",
					   m, mpxkit_source_n_slots(members[m]), slots);
		for (size_t i = 0; i < slots; i++)
			if (strcmp(mpxkit_source_slot_name(members[m], (int)i),
				   mpxkit_source_slot_name(members[0], (int)i)) != 0)
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "sum source: member %zu slot %zu is %s, not %s",
						   m, i,
						   mpxkit_source_slot_name(members[m], (int)i),
						   mpxkit_source_slot_name(members[0], (int)i));
	}
	return 0;
}

int mpxkit_source_open_sum(mpxkit_source **out, mpxkit_source *const *members, size_t n,
			   mpxkit_diag *diag)
{
	sum_source *ss;
	int rc;

	if (out == NULL || members == NULL || n == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "sum source: no members");
	for (size_t m = 0; m < n; m++)
		if (members[m] == NULL || mpxkit_source_is_virtual(members[m]))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "sum source: member %zu is %s, not a real-time source",
					   m, members[m] ? "virtual" : "missing");
	if ((rc = same_slots(members, n, diag)) < 0)
		return rc;
	ss = calloc(1, sizeof *ss);
	if (ss == NULL || (ss->members = malloc(n * sizeof *ss->members)) == NULL) {
		free(ss);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "sum source: out of memory");
	}
	memcpy(ss->members, members, n * sizeof *members);
	ss->n = n;
	ss->base.ops = &sum_ops;
	ss->base.n_slots = mpxkit_source_n_slots(members[0]);
	*out = &ss->base;
	return 0;
}

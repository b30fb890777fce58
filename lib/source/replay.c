/* SPDX-License-Identifier: BSD-3-Clause */
/* The "replay" counter source: a recorded trace served as counters, one step per virtual tick. */
#include <stdlib.h>
#include <string.h>

#include "source_impl.h"

typedef struct replay_slot {
	size_t column; /* the event's column in the trace */
	int enabled;
	mpxkit_source_count count;
} replay_slot;

typedef struct replay_source {
	struct mpxkit_source base; /* first: the generic layer casts */
	const mpxkit_trace *trace; /* not ours */
	uint64_t step_ns;
	size_t cursor; /* the next step the clock serves */
	replay_slot *slots;
	size_t cap;
} replay_source;

static replay_source *as_replay(mpxkit_source *s)
{
	return (replay_source *)s;
}

static int replay_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	const mpxkit_trace *t = as_replay(s)->trace;

	if (i >= t->n_events)
		return -MPXKIT_ENOENT;
	out->name = t->events[i];
	out->description = "Replayed from a recorded trace";
	out->unit = "";
	return 0;
}

static int replay_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	replay_source *rs = as_replay(s);
	int column = mpxkit_trace_event_index(rs->trace, name);

	if (column < 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "%s: the replayed trace has no such event",
				   name);
	if (s->n_slots == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 8;
		replay_slot *slots = realloc(rs->slots, cap * sizeof *slots);
		if (slots == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory adding a slot",
					   name);
		rs->slots = slots;
		rs->cap = cap;
	}
	memset(&rs->slots[s->n_slots], 0, sizeof rs->slots[0]);
	rs->slots[s->n_slots].column = (size_t)column;
	return (int)s->n_slots++;
}

static const char *replay_slot_name(const mpxkit_source *s, int slot)
{
	const replay_source *rs = (const replay_source *)s;
	return rs->trace->events[rs->slots[slot].column];
}

static void slot_range(const mpxkit_source *s, int slot, size_t *first, size_t *end)
{
	*first = slot == MPXKIT_SOURCE_ALL ? 0 : (size_t)slot;
	*end = slot == MPXKIT_SOURCE_ALL ? s->n_slots : *first + 1;
}

static int set_enabled(mpxkit_source *s, int slot, int on)
{
	size_t first, end;

	slot_range(s, slot, &first, &end);
	for (size_t i = first; i < end; i++)
		as_replay(s)->slots[i].enabled = on;
	return 0;
}

static int replay_enable(mpxkit_source *s, int slot)
{
	return set_enabled(s, slot, 1);
}

static int replay_disable(mpxkit_source *s, int slot)
{
	return set_enabled(s, slot, 0);
}

static int replay_reset(mpxkit_source *s, int slot)
{
	size_t first, end;

	slot_range(s, slot, &first, &end);
	for (size_t i = first; i < end; i++)
		as_replay(s)->slots[i].count.value = 0;
	return 0;
}

static int replay_read(mpxkit_source *s, mpxkit_source_count *counts)
{
	replay_source *rs = as_replay(s);

	for (size_t i = 0; i < s->n_slots; i++)
		counts[i] = rs->slots[i].count;
	return 0;
}

/* Counts wrap modulo 2^64 like a hardware counter; a reader's differences stay exact. */
static int replay_step(mpxkit_source *s)
{
	replay_source *rs = as_replay(s);
	const mpxkit_trace *t = rs->trace;
	const uint64_t *row;

	if (rs->cursor >= t->n_steps)
		return 0;
	row = t->values + rs->cursor * t->n_events;
	for (size_t i = 0; i < s->n_slots; i++) {
		replay_slot *sl = &rs->slots[i];
		if (!sl->enabled)
			continue;
		sl->count.value += row[sl->column];
		sl->count.time_enabled += rs->step_ns;
		sl->count.time_running += rs->step_ns;
	}
	rs->cursor++;
	return 1;
}

static int replay_rewind(mpxkit_source *s)
{
	as_replay(s)->cursor = 0;
	return 0;
}

static void replay_free(mpxkit_source *s)
{
	free(as_replay(s)->slots);
	free(s);
}

static const mpxkit_source_ops replay_ops = {
    .kind = "replay",
    .list = replay_list,
    .add = replay_add,
    .slot_name = replay_slot_name,
    .enable = replay_enable,
    .disable = replay_disable,
    .reset = replay_reset,
    .read = replay_read,
    .free = replay_free,
    .step = replay_step,
    .rewind = replay_rewind,
};

int mpxkit_source_open_replay(mpxkit_source **out, const mpxkit_trace *t, uint64_t step_ns,
			      mpxkit_diag *diag)
{
	replay_source *rs;

	if (out == NULL || t == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "replay source: no trace or output pointer");
	if (step_ns == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "replay source: a step must last >= 1 ns");
	rs = calloc(1, sizeof *rs);
	if (rs == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "replay source: out of memory");
	rs->base.ops = &replay_ops;
	rs->trace = t;
	rs->step_ns = step_ns;
	*out = &rs->base;
	return 0;
}

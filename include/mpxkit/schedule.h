/* SPDX-License-Identifier: BSD-3-Clause */
/* Multiplexing schedules: before each slice, which events count in it (doc/schedules.md). */
#ifndef MPXKIT_SCHEDULE_H
#define MPXKIT_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A schedule chooses, before each slice, the events (at most C) that count in
 * it, from what the slices before it counted and from documented fixed
 * priors only.  The simulator (mpxkit/mpx.h) and the engine (mpxkit/sched.h)
 * drive a schedule through the same calls in the same order, so a replayed
 * trace gets the sets the simulator chose:
 *
 *     set of slice 0 = mpxkit_schedule_next()
 *     for each slice s:
 *         set of slice s + 1 = mpxkit_schedule_next()   (the counters switch)
 *         mpxkit_schedule_observe(slice s's counts)    (then they are read)
 *
 * so the set of slice s + 1 is chosen from slices 0 .. s - 1: the engine
 * switches the counters first and reads the closed slice after, which keeps
 * the switch as short as it was (doc/schedules.md, "Protocol").
 *
 * Each schedule lives in its own file under schedules/ (one small interface,
 * like the estimators).  A schedule is named NAME or NAME:KEY=VALUE:...
 * (e.g. "adaptive:floor=12"); doc/schedules.md lists the keys.
 */
typedef struct mpxkit_schedule mpxkit_schedule;

/*
 * Whether the counter source can count these events together (1) or not (0):
 * on a PMU, libpfm4 and perf_event know the constraints.  NULL: any C events.
 * events[] holds n distinct event indices in increasing order.
 */
typedef int (*mpxkit_countable_fn)(void *arg, const size_t *events, size_t n);

/* An explicit assignment of events to groups (mpxkit/mpx.h's group file), for "groups". */
struct mpxkit_groups;

/* What a schedule is built for.  Plain data; nothing here is owned by the schedule. */
typedef struct mpxkit_schedule_setup {
	size_t n_events;	   /* E: the multiplexed events, indexed 0 .. E-1 */
	const char *const *events; /* their names: prior shares are looked up by name */
	size_t counters;	   /* C >= 1 */
	/*
	 * The groups schedule's group file: its names, in file order, are the
	 * events (events[i] is names[i]).  NULL for the other schedules.
	 */
	const struct mpxkit_groups *groups;
	mpxkit_countable_fn countable; /* NULL: any C events */
	void *countable_arg;
} mpxkit_schedule_setup;

/* What the registry says about a schedule. */
typedef struct mpxkit_schedule_info {
	const char *name;    /* "round-robin", "groups", "prior", "adaptive" */
	const char *summary; /* one line */
	const char *keys;    /* the NAME:KEY=VALUE keys it takes, "" for none */
} mpxkit_schedule_info;

size_t mpxkit_schedule_count(void);
const mpxkit_schedule_info *mpxkit_schedule_info_at(size_t i); /* NULL past the end */

/* The registry entry of NAME (without ":KEY=VALUE"); 0, or -MPXKIT_ENOENT. */
int mpxkit_schedule_lookup(const char *name, const mpxkit_schedule_info **out);

/*
 * 1 when spec names a schedule of the registry (its part before the first
 * ':'), 0 otherwise: a tool then takes spec as a group file.
 */
int mpxkit_schedule_is_name(const char *spec);

/*
 * Builds the schedule spec ("NAME" or "NAME:KEY=VALUE:...") for setup.
 * -MPXKIT_ENOENT for an unknown name, -MPXKIT_EINVAL for a bad key or value,
 * a groups schedule without a group file or with a group larger than C, or
 * more events than C x the floor period can cover; one line in diag.
 */
int mpxkit_schedule_new(mpxkit_schedule **out, const char *spec,
			const mpxkit_schedule_setup *setup, mpxkit_diag *diag);

void mpxkit_schedule_free(mpxkit_schedule *s); /* NULL is a no-op */

/* The canonical spec: the name and every key with its value, e.g. "adaptive:floor=12:...". */
const char *mpxkit_schedule_spec(const mpxkit_schedule *s);
const mpxkit_schedule_info *mpxkit_schedule_info_of(const mpxkit_schedule *s);

/*
 * The period M: every event is counted at least once in slices 0 .. M-1 and
 * in any M consecutive slices (G for round-robin and groups).  On a source
 * whose countable() refuses a set of due events the bound can break; the
 * simulator and software events refuse none.
 */
size_t mpxkit_schedule_period(const mpxkit_schedule *s);

/*
 * The slices of a rotation: G = ceil(E / C), or the group file's groups.
 * The default scoring window W (doc/evaluation.md).
 */
size_t mpxkit_schedule_groups(const mpxkit_schedule *s);

/*
 * The set of the next slice: writes its events, at most C, in increasing
 * order to set and returns how many.  Allocates nothing and cannot fail.
 */
size_t mpxkit_schedule_next(mpxkit_schedule *s, size_t *set);

/*
 * What the oldest slice not yet observed counted: its set (as next gave it),
 * val[i] the count of set[i], and its length in nominal slices (1 for a
 * trace's step).  Slices are observed in order.
 */
void mpxkit_schedule_observe(mpxkit_schedule *s, const size_t *set, size_t n, const uint64_t *val,
			     double len);

/* Back to the state before slice 0. */
void mpxkit_schedule_reset(mpxkit_schedule *s);

/* The kind of an event by its name, as prior falls back on for events its table lacks. */
typedef enum mpxkit_event_kind {
	MPXKIT_EVENT_TOTAL, /* instructions, accesses, branches, cycles, clocks */
	MPXKIT_EVENT_MISS,  /* misses, mispredictions, faults, switches: rare and bursty */
} mpxkit_event_kind;

mpxkit_event_kind mpxkit_event_kind_of(const char *name);

#ifdef __cplusplus
}
#endif
#endif

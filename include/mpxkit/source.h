/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter sources: where counts come from (perf_event, or a recorded trace replayed). */
#ifndef MPXKIT_SOURCE_H
#define MPXKIT_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpxkit/error.h"
#include "mpxkit/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A source is a set of counting slots, one per event added, that can be
 * enabled, disabled, reset and read one by one or all together.  The
 * multiplexing scheduler drives a source and never cares where the counts
 * come from; each kind of source lives in its own file under lib/source/.
 *
 * Kinds:
 *   "perf"  the kernel's perf_event_open(2).  Events are named as PAPI's
 *           perf_event component and libpfm4 name them: "perf::TASK-CLOCK",
 *           "perf::PAGE-FAULTS", "perf::CYCLES", ...  (case-insensitive; the
 *           kernel's "perf::PERF_COUNT_SW_TASK_CLOCK" spelling works too).
 *           Software events count everywhere perf_event_open is allowed;
 *           hardware events fail with -MPXKIT_ENOSUPP where there is no PMU.
 *   "replay" a recorded trace (mpxkit/trace.h) served as if it were hardware.
 *           Its events are the trace's columns.  It runs on a virtual clock:
 *           nothing counts until mpxkit_source_step() moves the clock on by
 *           one trace step, which adds that step's count to every enabled
 *           slot and step_ns to its enabled and running times.  Disabled
 *           slots neither count nor age, as perf_event's do not.
 *
 * A source belongs to one thread at a time: calls on one source are not
 * serialised.  Distinct sources are independent.
 *
 * Errors follow mpxkit/error.h.  -MPXKIT_ENOENT: no such event;
 * -MPXKIT_ENOSUPP: the event exists but cannot be counted here (no PMU);
 * -MPXKIT_EPERM: the kernel refused (perf_event_paranoid, seccomp).
 */
typedef struct mpxkit_source mpxkit_source;

/* What a perf source counts.  NULL where a target is asked for means MPXKIT_SOURCE_SELF. */
typedef struct mpxkit_source_target {
	pid_t pid;   /* 0: the thread that adds the events; -1: every task on cpu; else that task */
	int cpu;     /* -1: whichever CPU the target runs on; pid and cpu are never both -1 */
	int inherit; /* nonzero: also count threads and children the target creates later */
	int kernel;  /* nonzero: count kernel mode too (needs perf_event_paranoid <= 1 or
			CAP_PERFMON; refused with -MPXKIT_EPERM otherwise, never dropped silently) */
} mpxkit_source_target;

/*
 * The calling thread on any CPU, user mode only, without its future children.
 * Context switches and CPU migrations happen in kernel mode: they count 0
 * unless kernel is set.
 */
#define MPXKIT_SOURCE_SELF ((mpxkit_source_target){.pid = 0, .cpu = -1, .inherit = 0, .kernel = 0})

/* One event a source can count here. */
typedef struct mpxkit_source_event {
	const char *name;	 /* "perf::TASK-CLOCK"; owned by the source */
	const char *description; /* one line */
	const char *unit;	 /* "ns" for clocks, "" for plain counts */
} mpxkit_source_event;

/* One slot's reading.  Times are in ns, as the kernel reports them. */
typedef struct mpxkit_source_count {
	uint64_t value;	       /* count since the last reset */
	uint64_t time_enabled; /* time the slot was enabled */
	uint64_t time_running; /* time it was actually counting (< enabled when multiplexed) */
} mpxkit_source_count;

/* Pass as a slot to act on every slot. */
#define MPXKIT_SOURCE_ALL (-1)

/* Opens a perf_event source for target (NULL: the calling thread).  No events yet. */
int mpxkit_source_open_perf(mpxkit_source **out, const mpxkit_source_target *target,
			    mpxkit_diag *diag);

/*
 * Opens a replay source over trace t, whose steps each last step_ns (>= 1) of
 * virtual time.  The trace is not copied: it must outlive the source, which
 * never changes it, so one trace may back many sources in many threads.
 */
int mpxkit_source_open_replay(mpxkit_source **out, const mpxkit_trace *t, uint64_t step_ns,
			      mpxkit_diag *diag);

/* Closes every slot and frees the source.  NULL is a no-op. */
void mpxkit_source_free(mpxkit_source *s);

/* The kind's name: "perf" or "replay".  Never NULL. */
const char *mpxkit_source_kind(const mpxkit_source *s);

/*
 * The i-th event this source can count here, for i = 0, 1, ... until it
 * returns -MPXKIT_ENOENT.  The first call probes the kernel, so events the
 * machine lacks (hardware events without a PMU) are not listed.
 */
int mpxkit_source_list(mpxkit_source *s, size_t i, mpxkit_source_event *out);

/*
 * Adds an event by name, disabled and at zero.  Returns its slot (0, 1, ... in
 * the order of adding) or a negative code with one line in diag.
 */
int mpxkit_source_add(mpxkit_source *s, const char *name, mpxkit_diag *diag);

/*
 * As mpxkit_source_add, for a list that must name each event once (a
 * trace's columns are unique): an event that is the same as one added before,
 * under any of its spellings ("perf::page-faults", "PAGE-FAULTS"), fails with
 * -MPXKIT_EINVAL and "NAME: named twice".  Its slot is added all the same, so
 * check lists on a probe (mpxkit stat, mpxkit record --perf).
 */
int mpxkit_source_add_once(mpxkit_source *s, const char *name, mpxkit_diag *diag);

/*
 * For callers that open their own perf_event descriptors (mpxkit profile's
 * sampling groups): the type and config of an event name as
 * mpxkit_source_add takes it ("perf::PAGE-FAULTS", "page-faults",
 * "PERF_COUNT_SW_PAGE_FAULTS"), its canonical name, and whether it needs a
 * PMU.  0, or -MPXKIT_ENOENT with one line.
 */
int mpxkit_source_perf_event(const char *name, uint32_t *type, uint64_t *config,
			     const char **canonical, int *hardware, mpxkit_diag *diag);

/*
 * One line saying why perf_event_open just failed for that event (errno as
 * the call left it): no PMU, refused by perf_event_paranoid, ...  Returns the
 * negative code.
 */
int mpxkit_source_perf_error(const char *name, int kernel, mpxkit_diag *diag);

/* Number of slots added. */
size_t mpxkit_source_n_slots(const mpxkit_source *s);

/* Canonical name of a slot's event ("perf::TASK-CLOCK"), or NULL for a bad slot. */
const char *mpxkit_source_slot_name(const mpxkit_source *s, int slot);

/* Starts counting on a slot, or on every slot with MPXKIT_SOURCE_ALL. */
int mpxkit_source_enable(mpxkit_source *s, int slot);

/* Stops counting on a slot (its count is kept), or on every slot. */
int mpxkit_source_disable(mpxkit_source *s, int slot);

/* Zeroes a slot's count, or every slot's.  Enabled/running times keep growing. */
int mpxkit_source_reset(mpxkit_source *s, int slot);

/*
 * Reads every slot into counts[0 .. n_slots-1]; cap is counts' length.
 * Returns the number of slots read, or a negative code (-MPXKIT_ERANGE when
 * cap is too small).
 */
int mpxkit_source_read(mpxkit_source *s, mpxkit_source_count *counts, size_t cap);

/*
 * Reads the listed slots, each on its own (perf: one read(2) each), into
 * counts[slots[i]]: its count and its own enabled and running times.  Slots
 * not listed are left alone in counts, which is n_slots long.  Kinds that
 * cannot read a part read every slot.  0, or a negative code.
 */
int mpxkit_source_read_slots(mpxkit_source *s, const size_t *slots, size_t n,
			     mpxkit_source_count *counts);

/*
 * The counts of the listed slots, values[i] for slots[i], and the clock
 * (mpxkit_source_clock) in *clock_ns, all as at one instant, at the least
 * cost this source allows; clock_ns NULL when the clock is not wanted.  No
 * times per slot: mpxkit_source_read_slots gives those.  Returns how many
 * system calls it made, or a negative code; -MPXKIT_ENOSUPP for a kind
 * without it (replay) or a perf source without its clock.
 *
 * perf: every slot is a member of the clock's group (doc/component.md,
 * "Reads"), so one read(2) of the group gives them all and the clock: 1.
 * With clock_ns NULL and one slot, that slot's own read(2): 1.  A slot the
 * kernel would not take into the group costs one more read(2).  0, where a
 * PMU lets user space read its counters: when the source counts the thread
 * that opened it (pid 0, no inherit), the caller is that thread, and every
 * listed slot is a hardware event on a counter now, each is read with rdpmc
 * through its mmap page under the kernel's sequence lock, and the clock is
 * carried from a slot's enabled time: its offset to the clock is taken at a
 * group read, bracketed by the slot's enabled time just before and after
 * it, and holds while the slot stays enabled.  Otherwise (a slot off its
 * counter, index 0 on its page; no anchor yet) it reads the group.
 * One slot with clock_ns NULL (its read(2), or its rdpmc) writes nothing the
 * source shares: threads may make that snapshot at once, as the scheduler's
 * reads without its lock do (lib/sched/sched.c, "The unlocked read").
 */
int mpxkit_source_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			   uint64_t *clock_ns);

/*
 * 1 when the slots can count together, 0 when not: what a schedule asks
 * before it puts events in one slice (mpxkit/schedule.h).  A replay and the
 * kernel's software events count any set.  For hardware events the perf
 * kind says yes too today: the kernel multiplexes a set the PMU cannot hold
 * (time_running < time_enabled, which the engine's per-event scaling
 * absorbs); libpfm4's constraints would plug in here.
 */
int mpxkit_source_countable(const mpxkit_source *s, const size_t *slots, size_t n);

/*
 * Virtual-clock sources (replay) only.  mpxkit_source_step moves the clock on
 * by one step: 1 when it did, 0 when the trace has no step left.
 * mpxkit_source_rewind puts the clock back at the first step (counts are
 * kept; reset them separately).  Real-time sources return -MPXKIT_ENOSUPP.
 */
int mpxkit_source_is_virtual(const mpxkit_source *s);

/*
 * The time that has passed for the source's target, in ns, from a clock that
 * runs whatever is enabled (perf: an always-on dummy event's enabled time,
 * which grows like the slots' own enabled times would).  The scheduler
 * measures rotations with it, so time when no group counted (a rotation
 * thread preempted between two ioctls) is not lost.  -MPXKIT_ENOSUPP for
 * virtual sources, whose steps are the clock.
 */
int mpxkit_source_clock(mpxkit_source *s, uint64_t *ns);
int mpxkit_source_step(mpxkit_source *s);
int mpxkit_source_rewind(mpxkit_source *s);

#ifdef __cplusplus
}
#endif
#endif

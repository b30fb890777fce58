/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter sources: where counts come from (perf_event, or a recorded trace replayed). */
#ifndef MPXKIT_SOURCE_H
#define MPXKIT_SOURCE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpxkit/error.h"
#include "mpxkit/event.h"
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
 *   "perf"  the kernel's perf_event_open(2).  Events are named as
 *           doc/events.md says (mpxkit/event.h): the generic events as PAPI's
 *           perf_event component and libpfm4 name them ("perf::TASK-CLOCK",
 *           also "task-clock", "PERF_COUNT_SW_TASK_CLOCK"), tracepoints
 *           ("syscalls:sys_enter_write"), sysfs PMU events ("msr/tsc/"),
 *           libpfm4's native events ("icl::INST_RETIRED:ANY_P"), raw codes
 *           and perf's cache events, each with :u :k :h modifiers.
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
	/*
	 * The levels counted for events whose names carry no modifier
	 * (MPXKIT_DOM_USER, _KERNEL, _HV of mpxkit/event.h); 0: the default,
	 * user and kernel where the kernel allows it, else user only
	 * (mpxkit_event_default_domain).  Kernel mode asked for where it is not
	 * allowed (perf_event_paranoid 2 without CAP_PERFMON) is refused with
	 * -MPXKIT_EPERM at the add, never dropped silently.
	 */
	unsigned domain;
	/*
	 * Nonzero: one of a set of per-CPU sources (pid -1) that together count
	 * every CPU, summed (system-wide counting).  An event of a PMU with a
	 * cpumask (RAPL, uncore) is then counted on its mask's CPUs alone: on a
	 * CPU outside it, which would count the mask's package again, its slot
	 * holds a stand-in that counts 0 while it is enabled.  0: such a CPU
	 * refuses it.
	 */
	int cpu_set;
} mpxkit_source_target;

/*
 * The calling thread on any CPU, in the default domain, without its future
 * children.  Context switches and CPU migrations happen in kernel mode: in
 * user mode only (":u", or a domain of MPXKIT_DOM_USER) they count 0.
 */
#define MPXKIT_SOURCE_SELF ((mpxkit_source_target){.pid = 0, .cpu = -1, .inherit = 0, .domain = 0})

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

/*
 * Opens a "sum" source over n real-time sources (one per CPU, one per
 * thread: mpxkit/attach.h) that hold the same events in the same order, or
 * none yet: a scheduler over it multiplexes them all as one target, each
 * slice's group on every member at once.  An event added is added to every
 * member; enable, disable and reset act on every member; a read gives each
 * slot's value, time enabled and time running summed over the members, as
 * perf stat sums a counter's CPUs and threads, and the clock is the members'
 * clocks summed, so slices are measured in the same summed time; parts
 * (mpxkit_source_partition) are every member's, switched on each.  On success
 * the source owns the members and frees them; on failure the caller still
 * does.  An add that fails on a member after others took it leaves the
 * source good only for freeing (-MPXKIT_ESTATE from then on).
 */
int mpxkit_source_open_sum(mpxkit_source **out, mpxkit_source *const *members, size_t n,
			   mpxkit_diag *diag);

/* Closes every slot and frees the source.  NULL is a no-op. */
void mpxkit_source_free(mpxkit_source *s);

/* The kind's name: "perf", "replay" or "sum".  Never NULL. */
const char *mpxkit_source_kind(const mpxkit_source *s);

/*
 * The i-th event this source can count here, for i = 0, 1, ... until it
 * returns -MPXKIT_ENOENT: for "perf", the kernel's generic events (software,
 * and hardware where a PMU counts them), the default set of mpxkit stat.
 * The first call probes the kernel (one open per generic event), so events
 * the machine lacks are not listed.  Every event that exists, tracepoints
 * and PMU events included, is in mpxkit/event.h's catalogue, which opens
 * nothing.
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
 * perf only, before the first mpxkit_source_add: the events added start
 * counting at the target's next exec (perf_event_attr.enable_on_exec), as
 * perf stat counts a command, instead of at mpxkit_source_enable.  For a
 * workload held before its exec (mpxkit/workload.h): what the child does
 * between the release and the exec (page faults on the pages it shares
 * with its parent) is not counted.  0, -MPXKIT_ENOSUPP for another kind,
 * -MPXKIT_ESTATE once a slot was added.
 */
int mpxkit_source_perf_count_from_exec(mpxkit_source *s);

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
 * Parts: for a schedule whose sets never change (round-robin, a group
 * file), each set as one unit that the source switches at once.  part[slot]
 * is the slot's set, 0 .. n_parts-1, or MPXKIT_SOURCE_NO_PART to leave it as
 * it is (a reference counted all along); every part has a slot.  Then
 * mpxkit_source_switch_part makes a slice boundary between two sets, and
 * mpxkit_source_enable and _disable of a slot in a part switch its whole
 * part.  Reads are as before; a slot's enabled and running times are its
 * part's.  perf: each part is a perf group of its own, led by a dummy event
 * that switches it in one ioctl(2) (lib/source/perf.c, "Parts"); the slots
 * are reopened there, at zero, disabled, and the source is as it was on
 * failure.  -MPXKIT_EINVAL for a bad partition or a second one;
 * -MPXKIT_ENOSUPP for other kinds, and a perf source without its clock:
 * switch their slots one by one.
 */
#define MPXKIT_SOURCE_NO_PART SIZE_MAX
int mpxkit_source_partition(mpxkit_source *s, const size_t *part, size_t n_parts,
			    mpxkit_diag *diag);

/*
 * A slice boundary from part `from` to part `to` (either MPXKIT_SOURCE_NO_PART
 * for none; the same part: it stays on): disables `from`, reads its slots
 * into counts[slot] (each count, and the part's enabled and running times),
 * enables `to`, and reads the clock into *clock_ns (mpxkit_source_clock), as
 * at `to`'s enable.  perf: 2 ioctl(2) and 3 read(2), one more the first
 * time `to` is enabled; a snapshot of `to`'s slots then takes one read(2),
 * the clock carried from the switch's (lib/source/perf.c, "The clock of a
 * part").  0, or a negative code.
 */
int mpxkit_source_switch_part(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
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
 * 1 when the slot's event takes a counter of its PMU (mpxkit_event_takes_counter),
 * 0 when it takes none (software events, tracepoints, free-running PMUs such
 * as msr): what the engine asks to know which events to multiplex under
 * MPXKIT_MULTIPLEX=hardware (mpxkit/sched.h).  A replay says 1 for every
 * column: a replayed trace is there to be multiplexed.  A sum asks its first
 * member; a view, its parent.  1 for a bad slot.
 */
int mpxkit_source_takes_counter(const mpxkit_source *s, int slot);

/*
 * Whose counters the slot's event takes (mpxkit_event_counter_pmu): a PMU's
 * perf type, or -1 for none.  The engine multiplexes each PMU's events on
 * C counters of their own under MPXKIT_MULTIPLEX=hardware.  A replay says
 * 0 for every column (one PMU); 0 for a bad slot.
 */
int mpxkit_source_counter_pmu(const mpxkit_source *s, int slot);

/*
 * A view of some slots of another source, the parent: slot i of the view is
 * the parent's slot slots[i].  Every call on the view acts on those slots of
 * the parent only (enable and disable of MPXKIT_SOURCE_ALL too); an add adds
 * to the parent and to the view; parts are the parent's, with its other
 * slots left out (MPXKIT_SOURCE_NO_PART).  The parent must outlive the view,
 * which does not free it.  The engine counts the events it multiplexes
 * through a view, and the others beside it (lib/sched/front.c, "Counted all
 * the time").  The slots are copied.  lock, when not NULL, is taken around
 * every call the view makes on the parent: views of one parent used by
 * several threads at once (one engine per PMU, each with its rotation
 * thread) share one, since a perf source's group reads share its buffers.
 */
int mpxkit_source_open_view(mpxkit_source **out, mpxkit_source *parent, const size_t *slots,
			    size_t n, pthread_mutex_t *lock, mpxkit_diag *diag);

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

/*
 * The CPU the source's target runs on, or last ran on when it does not run
 * now, for a thread that drives the source and wants to run beside it
 * (lib/sched/sched.c, "Beside the target").  perf: the thread it counts, as
 * its /proc stat says (one pread(2), no call to another CPU); of a process
 * counted with its threads, the first thread while it runs, else one that
 * does (its main thread may only wait for its workers); the CPU of a per-CPU
 * target.  -1 when unknown: a replay, a target that has ended, no /proc.  It
 * touches nothing the other calls use, so another thread may call it beside
 * them.
 */
int mpxkit_source_target_cpu(mpxkit_source *s);
int mpxkit_source_step(mpxkit_source *s);
int mpxkit_source_rewind(mpxkit_source *s);

#ifdef __cplusplus
}
#endif
#endif

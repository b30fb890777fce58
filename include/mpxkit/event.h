/* SPDX-License-Identifier: BSD-3-Clause */
/* Event names: a name becomes a perf_event_attr with a unit and a scale, and the list of what
 * exists. */
#ifndef MPXKIT_EVENT_H
#define MPXKIT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The grammar is doc/events.md: sysfs PMU events (msr/tsc/, cpu/event=0x3c/),
 * libpfm4 events (icl::INST_RETIRED:ANY_P, or short), the kernel's generic
 * events (perf::TASK-CLOCK, task-clock, PERF_COUNT_SW_TASK_CLOCK), perf's
 * cache events (L1-dcache-load-misses), raw codes (r003c) and tracepoints
 * (syscalls:sys_enter_write), each with the modifiers :u :k :h (or :u=1 ...).
 *
 * Nothing here opens an event: parsing reads sysfs, tracefs and libpfm4's
 * tables.  Functions return 0 (or a count) on success and a negative
 * MPXKIT_E* code with one line in diag on failure (mpxkit/error.h).
 */

/* Kinds of event, in the order mpxkit list shows them (the name mpxkit_event_kind is the
 * schedules' total-or-miss, mpxkit/schedule.h). */
typedef enum mpxkit_event_class {
	MPXKIT_EVENT_SOFTWARE,	 /* PERF_TYPE_SOFTWARE */
	MPXKIT_EVENT_HARDWARE,	 /* PERF_TYPE_HARDWARE: the generic hardware events */
	MPXKIT_EVENT_CACHE,	 /* PERF_TYPE_HW_CACHE */
	MPXKIT_EVENT_TRACEPOINT, /* PERF_TYPE_TRACEPOINT, config = tracefs id */
	MPXKIT_EVENT_SYSFS,	 /* a PMU of /sys/bus/event_source/devices, by its format */
	MPXKIT_EVENT_LIBPFM,	 /* encoded by libpfm4 */
	MPXKIT_EVENT_RAW,	 /* PERF_TYPE_RAW, rNNNN */
	MPXKIT_EVENT_N_KINDS
} mpxkit_event_class;

/* Privilege levels: a name's modifiers, a counting domain (PAPI's USER, KERNEL, SUPERVISOR). */
#define MPXKIT_DOM_USER	  1u
#define MPXKIT_DOM_KERNEL 2u
#define MPXKIT_DOM_HV	  4u
#define MPXKIT_DOM_ALL	  (MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL | MPXKIT_DOM_HV)

#define MPXKIT_EVENT_NAME_MAX 256 /* bytes of a name, its NUL included */

/* One parsed name. */
typedef struct mpxkit_event {
	char name[MPXKIT_EVENT_NAME_MAX]; /* canonical: perf::TASK-CLOCK, msr/tsc/, r3c:u, ... */
	mpxkit_event_class kind;
	struct perf_event_attr attr; /* type, config*, and exclude_* per the name's modifiers */
	unsigned domain;	     /* levels the name's modifiers fixed (MPXKIT_DOM_*); 0: none */
	double scale;		     /* count x scale = value in unit (sysfs .scale); 1 otherwise */
	char unit[32];		     /* "ns", "Joules", ... or "" */
	char pmu[64];		     /* the sysfs or libpfm4 PMU, "" for generic kinds */
	int per_cpu;		     /* its PMU has a cpumask: counted per CPU, never per task */
} mpxkit_event;

/*
 * Parses a name into ev.  The attr's privilege bits follow the name's
 * modifiers, or MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL where it has none; a
 * caller with a domain of its own applies it with mpxkit_event_set_domain.
 * -MPXKIT_ENOENT: unknown, with the closest known names in the line;
 * -MPXKIT_EINVAL: a known form with a bad part (modifier, sysfs term).
 */
int mpxkit_event_parse(const char *name, mpxkit_event *ev, mpxkit_diag *diag);

/*
 * Sets the attr's exclude_user, exclude_kernel and exclude_hv from domain
 * (MPXKIT_DOM_*; 0 means mpxkit_event_default_domain()), unless the name's
 * own modifiers fixed them: those win.
 */
void mpxkit_event_set_domain(mpxkit_event *ev, unsigned domain);

/*
 * The default counting domain: user and kernel where the kernel lets this
 * process count kernel mode (CAP_PERFMON or CAP_SYS_ADMIN, or
 * kernel.perf_event_paranoid <= 1), else user only.  Opens nothing.
 */
unsigned mpxkit_event_default_domain(void);

/* "software", "hardware", "cache", "tracepoint", "sysfs", "libpfm4", "raw"; never NULL. */
const char *mpxkit_event_kind_name(mpxkit_event_class kind);

/*
 * One line saying why perf_event_open(ev) failed with errno err: "not on this
 * machine" (ENOENT, ENODEV, EOPNOTSUPP; -MPXKIT_ENOSUPP), "not allowed"
 * (EACCES, EPERM, naming kernel.perf_event_paranoid; -MPXKIT_EPERM), else
 * the system error.  Returns the negative code.
 */
int mpxkit_event_open_error(const mpxkit_event *ev, int err, mpxkit_diag *diag);

/*
 * After perf_event_open(attr) failed with EINVAL: PMUs that cannot tell the
 * modes apart (the kernel's PERF_PMU_CAP_NO_EXCLUDE: msr, most uncore and
 * RAPL PMUs) refuse any exclude_* bit.  For a sysfs event named without a
 * modifier, clears attr's exclude bits and returns 1: open it again, it
 * counts every mode (doc/events.md).  0 otherwise (a name whose modifiers
 * ask for a mode is never widened).
 */
int mpxkit_event_counts_every_mode(const mpxkit_event *ev, struct perf_event_attr *attr);

/*
 * 1 when the event takes one of its PMU's counters, a scarce resource the
 * engine multiplexes (doc/component.md, "What is multiplexed"): the
 * kernel's generic hardware events, cache events, raw codes, libpfm4's
 * events of a core PMU, and sysfs PMUs with counters (cpu, uncore_*).  0
 * for events that take none: software events, tracepoints, and the
 * free-running sysfs PMUs (msr, power, cstate_core, cstate_pkg,
 * cstate_module), which count any number of events at once.
 */
int mpxkit_event_takes_counter(const mpxkit_event *ev);

/*
 * Whose counters it takes: the perf type of its PMU (PERF_TYPE_RAW, 4, for
 * the core PMU's generic hardware, cache and raw events, as the core PMU's
 * own type is on x86; a hybrid part's core PMU from the config's extended
 * type; a sysfs or libpfm4 PMU's type), or -1 for an event that takes none.
 * Events of two PMUs never share a perf group.
 */
int mpxkit_event_counter_pmu(const mpxkit_event *ev);

/*
 * For an event whose PMU has a cpumask (ev->per_cpu): 1 when cpu is in it,
 * the CPUs the kernel counts the PMU's events on (one per package for RAPL
 * and uncore PMUs), 0 when not, -1 when the mask cannot be read.  1 for an
 * event without one, and for cpu -1.
 */
int mpxkit_event_on_cpu(const mpxkit_event *ev, int cpu);

/*
 * One line for an event whose PMU counts per CPU, asked for on a CPU outside
 * its cpumask (system-wide counting opens every CPU): counted there it would
 * count its package again.  Returns -MPXKIT_ENOSUPP.
 */
int mpxkit_event_cpumask_error(const mpxkit_event *ev, int cpu, mpxkit_diag *diag);

/*
 * One line for an event whose PMU counts per CPU (ev->per_cpu: a cpumask)
 * asked for in a per-task count: it needs system-wide counting.
 * Returns -MPXKIT_ENOSUPP.
 */
int mpxkit_event_per_task_error(const mpxkit_event *ev, mpxkit_diag *diag);

/*
 * The generic counters of each core PMU that libpfm4 reports present, into
 * generic[0 .. cap-1]; returns how many (0 without libpfm4).  lib/sched's
 * default C asks this.
 */
int mpxkit_event_pmu_counters(unsigned *generic, size_t cap);

/* ---- the catalogue ------------------------------------------------------------------------ */

/* One entry: an event, or one umask of the event entry just before it. */
typedef struct mpxkit_event_info {
	const char *name;	 /* usable as written: "msr/tsc/", "icl::INST_RETIRED:ANY_P" */
	const char *description; /* one line, or "" */
	const char *unit;	 /* "" for plain counts */
	const char *pmu;	 /* "" for the generic kinds */
	double scale;		 /* 1 unless sysfs says otherwise */
	mpxkit_event_class kind;
	int umask;  /* 1: a umask (name "EVENT:UMASK") of the last event entry before it */
	int counts; /* 0: listed by libpfm4 but its PMU is not in the kernel: encodes only */
} mpxkit_event_info;

typedef struct mpxkit_event_catalog mpxkit_event_catalog;

/*
 * The events of the kinds in mask (bit 1 << kind; 0: all) that exist here,
 * as doc/events.md, "The catalogue", says.  Kinds are read when first
 * asked for, so a catalogue of the software events reads no tracefs.
 */
int mpxkit_event_catalog_open(mpxkit_event_catalog **out, unsigned mask, mpxkit_diag *diag);
void mpxkit_event_catalog_free(mpxkit_event_catalog *c);

/* Entry i, for i = 0, 1, ... until -MPXKIT_ENOENT; the strings live as long as c. */
int mpxkit_event_catalog_get(mpxkit_event_catalog *c, size_t i, mpxkit_event_info *out);

/* Number of entries, umasks included (reads every kind in the mask). */
size_t mpxkit_event_catalog_size(mpxkit_event_catalog *c);

/* The heading of a kind's list ("tracefs /sys/kernel/tracing", "libpfm4 4.13.0"), or "". */
const char *mpxkit_event_catalog_origin(mpxkit_event_catalog *c, mpxkit_event_class kind);

/*
 * Up to n names of c closest to name (edit distance, case-insensitive),
 * best first, into out[]; returns how many.
 */
size_t mpxkit_event_closest(mpxkit_event_catalog *c, const char *name, const char **out, size_t n);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* What the parts of lib/event share: each form's parser, the paths, libpfm4's one access point. */
#ifndef MPXKIT_EVENT_IMPL_H
#define MPXKIT_EVENT_IMPL_H

#include <stddef.h>

#include "mpxkit/event.h"

/*
 * A small kernel file (sysfs, tracefs) as one line without its trailing
 * newline, through the bounded reader: 0, -1 when it is missing or
 * unreadable (errno set), -2 when it is longer than cap - 1 or not text.
 */
int mpxkit__read_text(const char *path, char *out, size_t cap);

/*
 * A directory's entries (directories only, if asked), sorted, without dot
 * files; NULL with *n 0 when it cannot be read.  Freed by mpxkit__free_names.
 */
char **mpxkit__sorted_dir(const char *path, int dirs_only, size_t *n);
void mpxkit__free_names(char **names, size_t n);

/* ---- modifiers (parse.c) ------------------------------------------------------------------ */

/*
 * The privilege modifiers of a generic, cache, raw, sysfs or tracepoint name:
 * mods is what follows the event ("", ":u", ":uk", ":u=1:k=0"; for sysfs what
 * follows the closing slash, "u" too).  Sets *domain to the levels named (0:
 * none named) and appends the canonical spelling (":uk") to canon.
 */
int mpxkit__event_mods(const char *name, const char *mods, unsigned *domain, char *canon,
		       size_t cap, mpxkit_diag *diag);

/* Sets ev->name, truncated at MPXKIT_EVENT_NAME_MAX (names are checked shorter before). */
void mpxkit__event_name(mpxkit_event *ev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- the kernel's generic events, perf's cache events, raw codes (generic.c) -------------- */

typedef struct mpxkit__generic {
	const char *name;	 /* perf::TASK-CLOCK */
	const char *kernel_name; /* PERF_COUNT_SW_TASK_CLOCK */
	const char *perf_name;	 /* task-clock */
	const char *perf_alias;	 /* a second perf name (cs), or NULL */
	uint32_t type;
	uint64_t config;
	const char *unit;
	const char *description;
} mpxkit__generic;

size_t mpxkit__generic_count(void);
const mpxkit__generic *mpxkit__generic_at(size_t i);
/* The generic event base names (any spelling, any case, "perf::" optional), or NULL. */
const mpxkit__generic *mpxkit__generic_find(const char *base, size_t len);

/* A cache event's config from its name (len bytes), canonical name into canon; 0 or -1. */
int mpxkit__cache_find(const char *base, size_t len, uint64_t *config, char *canon, size_t cap);
/* The i-th cache event's canonical name and description (i < 42), for the catalogue. */
void mpxkit__cache_at(size_t i, char *name, size_t cap, const char **description);
#define MPXKIT__N_CACHE 42

/* ---- sysfs PMUs (sysfs.c) ----------------------------------------------------------------- */

/* Whether cpu is in a cpulist such as sysfs's cpumask files ("0-3,8"): 1, 0, or -1 (bad text). */
int mpxkit__cpulist_has(const char *text, int cpu);

/* MPXKIT_TEST_SYSFS, else /sys/bus/event_source/devices. */
const char *mpxkit__sysfs_root(void);
/* name is the whole name, slash the offset of its first '/'. */
int mpxkit__sysfs_parse(const char *name, size_t slash, mpxkit_event *ev, mpxkit_diag *diag);
/* One sysfs event alias for the catalogue. */
typedef struct mpxkit__sysfs_entry {
	char name[MPXKIT_EVENT_NAME_MAX]; /* pmu/alias/ */
	char terms[128];		  /* the alias's content: event=0x00 */
	char unit[32];
	double scale;
	const char *pmu;
	int per_cpu;
} mpxkit__sysfs_entry;

/* Calls fn for every alias of every PMU, in name order; 0 or fn's < 0. */
int mpxkit__sysfs_each(int (*fn)(void *arg, const mpxkit__sysfs_entry *e), void *arg);
/* Calls fn with every PMU directory's name; 0 or fn's < 0. */
int mpxkit__sysfs_each_pmu(int (*fn)(void *arg, const char *pmu), void *arg);

/* 1 when sysfs has a core PMU (cpu, cpu_core, a PMU with a cpus file or of PERF_TYPE_RAW). */
int mpxkit__sysfs_has_core_pmu(void);

/* ---- tracefs (tracefs.c) ------------------------------------------------------------------ */

/* The tracefs root with an events/ directory (MPXKIT_TEST_TRACEFS first), or NULL. */
const char *mpxkit__tracefs_root(void);
/*
 * SUB:EVENT[:mods]: 1 and ev filled when tracefs has events/SUB/EVENT/id, 0
 * when it has no such directory (not a tracepoint), negative on error.
 */
int mpxkit__tracepoint_parse(const char *name, size_t colon, mpxkit_event *ev, mpxkit_diag *diag);

/* Calls fn with every tracepoint's SUB:EVENT, sorted; no id is read.  0 or fn's < 0. */
int mpxkit__tracefs_each(int (*fn)(void *arg, const char *name), void *arg);

/* ---- libpfm4 (pfm.c) ---------------------------------------------------------------------- */

/* 1 when libpfm.so.4 opened and initialised. */
int mpxkit__pfm_available(void);
/* libpfm4's encoding of name: 0, -MPXKIT_ENOENT (unknown to libpfm4), or an error. */
int mpxkit__pfm_parse(const char *name, mpxkit_event *ev, mpxkit_diag *diag);

/* One libpfm4 entry for the catalogue: an event or one of its umasks. */
typedef struct mpxkit__pfm_entry {
	char name[MPXKIT_EVENT_NAME_MAX];
	const char *description; /* libpfm4's, lives as long as the library */
	const char *pmu;	 /* libpfm4's PMU name */
	int umask;
} mpxkit__pfm_entry;

/* Calls fn for every event and umask of the present PMUs but perf and perf_raw; 0 or fn's < 0. */
int mpxkit__pfm_each(int (*fn)(void *arg, const mpxkit__pfm_entry *e), void *arg);
/* "libpfm4 4.13" or "" when it is missing. */
const char *mpxkit__pfm_version(void);

#endif

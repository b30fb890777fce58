/* SPDX-License-Identifier: BSD-3-Clause */
/* Multiplexing simulated on a ground-truth trace: the evaluation protocol of doc/evaluation.md. */
#ifndef MPXKIT_MPX_H
#define MPXKIT_MPX_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/estimator.h"
#include "mpxkit/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An explicit assignment of events to groups, read from a group file: one
 * group per line, events separated by commas and/or blanks, '#' starts a
 * comment, blank lines are skipped.  Group g is counted in slice g of every
 * rotation.
 */
typedef struct mpxkit_groups {
	size_t n_groups;
	size_t n_names;
	char **names;  /* n_names event names, in file order */
	size_t *group; /* group[i]: the group of names[i] */
	size_t *line;  /* line[i]: where names[i] was read, for diagnostics */
	char *source;  /* the file's name */
} mpxkit_groups;

int mpxkit_groups_read(const char *path, mpxkit_groups **out, mpxkit_diag *diag);
int mpxkit_groups_parse(const char *name, const char *buf, size_t len, mpxkit_groups **out,
			mpxkit_diag *diag);
void mpxkit_groups_free(mpxkit_groups *g);

/*
 * The groups of file for events[0 .. n) in that order (names compared
 * without case): a group file written for more events serves an event set
 * of some of them, and its groups without any are dropped.  -MPXKIT_EINVAL
 * and one line when the file names no group for one of the events.
 */
int mpxkit_groups_select(const mpxkit_groups *file, const char *const *events, size_t n,
			 mpxkit_groups **out, mpxkit_diag *diag);

typedef struct mpxkit_mpx_config {
	size_t counters;	     /* C: events one slice counts, >= 1 */
	const char *reference;	     /* event counted in every slice, or NULL */
	const mpxkit_groups *groups; /* explicit groups, or NULL: column order, C per group */
	size_t max_steps;	     /* use only the first max_steps slices; 0: all */
	const char *trace_name;	     /* what diagnostics call the trace; NULL: "trace" */
	/*
	 * The schedule (mpxkit/schedule.h), "NAME" or "NAME:KEY=VALUE...";
	 * NULL: "groups" with a group file, else "round-robin" (v1).
	 */
	const char *schedule;
	size_t window; /* W, slices per scored window; 0: G (a rotation) */
} mpxkit_mpx_config;

/*
 * A simulated multiplexed run (doc/evaluation.md, protocol v2).  Without a
 * group file, the multiplexed events are the trace's columns in order minus
 * the reference; with one, the events it names, in its order.  Window k is
 * slices [kW, kW+W); only whole windows are kept.  The schedule chose each
 * slice's events from the slices before it only.  With round-robin or
 * groups and W = G, a window is a rotation and layout.slice gives each
 * event's one slice in it, as v1 did; otherwise layout.slice is NULL and
 * val says, slice by slice, what was counted.
 */
typedef struct mpxkit_mpx_run {
	mpxkit_layout layout; /* n_events, W (n_groups), the slices or NULL, gap */
	size_t *slice;
	size_t *column;	     /* column[e]: event e's column in the trace */
	const char **events; /* n_events names, pointing into the trace: keep it alive */
	int ref_column;	     /* the reference's column, or -1 */
	size_t n_rotations;  /* whole windows */
	uint64_t *obs;	     /* n_rotations x n_events: count over the slices that counted it */
	uint64_t *ocoe;	     /* n_rotations x n_events: true sum over the window */
	uint64_t *ref;	     /* n_rotations x W: reference count per slice, or NULL */
	uint64_t *val;	     /* n_rotations x W x n_events: each slice's count, or NOT_COUNTED */
	size_t groups;	     /* G of the schedule: a rotation's slices */
	size_t period;	     /* M: every event counted at least once in any M slices */
	char schedule[160];  /* the schedule's canonical spec */
} mpxkit_mpx_run;

/* The run as the estimators' offline input (mpxkit_estimator_run_series). */
mpxkit_series mpxkit_mpx_series(const mpxkit_mpx_run *run);

/*
 * Simulates multiplexing with cfg on trace t, one trace row per slice.
 * Fails with -MPXKIT_EINVAL and a diag for C = 0, an unknown reference,
 * a group file naming an event the trace lacks, the reference, an event twice
 * or more than C events in a group, a bad schedule; -MPXKIT_ENOENT for an
 * unknown schedule name; with -MPXKIT_ERANGE when the trace is shorter than
 * one window, a window's sum overflows 64 bits or a counted slice holds
 * 2^64 - 1 (MPXKIT_NOT_COUNTED).
 */
int mpxkit_mpx_simulate(const mpxkit_trace *t, const mpxkit_mpx_config *cfg, mpxkit_mpx_run **out,
			mpxkit_diag *diag);

void mpxkit_mpx_run_free(mpxkit_mpx_run *run);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Trace I/O: per-step event counts in the CSV interchange format (doc/trace-format.md). */
#ifndef MPXKIT_TRACE_H
#define MPXKIT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A trace: n_steps rows of n_events counts, each the count of that step (not
 * a running total).  Values are step-major: values[step * n_events + event].
 * The fields are public for fast reading; change a trace only through the
 * functions below.
 */
typedef struct mpxkit_trace {
	char *index_name; /* first column's name: "step" or "time_ns" */
	size_t n_events;
	char **events; /* n_events names, unique */
	size_t n_steps;
	uint64_t *index;  /* n_steps values of the first column */
	uint64_t *values; /* n_steps * n_events counts */
	size_t n_meta;
	char **meta_keys; /* "# key=value" lines, in file order */
	char **meta_values;
	size_t cap_steps; /* allocated rows; internal */
} mpxkit_trace;

/* An empty trace with the given columns.  index_name NULL means "step". */
int mpxkit_trace_new(mpxkit_trace **out, const char *index_name, size_t n_events,
		     const char *const *events, mpxkit_diag *diag);

/* Appends one row; counts holds n_events values. */
int mpxkit_trace_append(mpxkit_trace *t, uint64_t index, const uint64_t *counts);

/* Sets (or replaces) a metadata pair.  Keys match [A-Za-z0-9_.-]+; values have no newline. */
int mpxkit_trace_set_meta(mpxkit_trace *t, const char *key, const char *value);

/* Value of a metadata key, or NULL. */
const char *mpxkit_trace_get_meta(const mpxkit_trace *t, const char *key);

/* Column of an event by name, or -MPXKIT_ENOENT. */
int mpxkit_trace_event_index(const mpxkit_trace *t, const char *name);

/* A trace is parsed whole: more text than this (inflated) is refused with ERANGE. */
#define MPXKIT_TRACE_MAX_BYTES ((uint64_t)1 << 30)

/*
 * Reads a trace from a CSV file, plain or gzip-compressed (told by content,
 * not by name); "-" reads standard input.  Bad input fails with
 * -MPXKIT_EFORMAT (or ERANGE for an overflowing value or a trace above
 * MPXKIT_TRACE_MAX_BYTES) and a diag of the form "FILE:LINE: reason"; a NUL
 * byte ends the read at once (include/mpxkit/reader.h).
 */
int mpxkit_trace_read(const char *path, mpxkit_trace **out, mpxkit_diag *diag);

/* Parses CSV text already in memory (uncompressed); name is what diagnostics call it. */
int mpxkit_trace_parse(const char *name, const char *buf, size_t len, mpxkit_trace **out,
		       mpxkit_diag *diag);

/*
 * Writes a trace, gzip-compressed when the path ends in ".gz".  The file is
 * written under a temporary name and renamed, so the final name never holds
 * partial output.  path "-" writes plain CSV to stdout.
 */
int mpxkit_trace_write(const mpxkit_trace *t, const char *path, mpxkit_diag *diag);

/*
 * A trace of steps k times as long (doc/trace-format.md, "Merging steps"):
 * step j is the sum of t's steps j k .. j k + k - 1, floor(n_steps / k)
 * steps in all (the trailing n_steps mod k are left out), each with the
 * index of its first step; t's columns and metadata, with merged_steps
 * multiplied by k.  -MPXKIT_EINVAL for k = 0 or fewer than k steps,
 * -MPXKIT_EFORMAT for a merged_steps that is not a whole number >= 1,
 * -MPXKIT_ERANGE for a sum past 2^64 - 1, -MPXKIT_ENOMEM; one line in diag.
 */
int mpxkit_trace_merge_steps(const mpxkit_trace *t, size_t k, mpxkit_trace **out,
			     mpxkit_diag *diag);

/* free(NULL) semantics. */
void mpxkit_trace_free(mpxkit_trace *t);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* What each kind of counter source implements behind include/mpxkit/source.h. */
#ifndef MPXKIT_SOURCE_IMPL_H
#define MPXKIT_SOURCE_IMPL_H

#include "mpxkit/source.h"

/*
 * The operations of one kind.  source.c checks the arguments (slot in range
 * or MPXKIT_SOURCE_ALL, counts large enough) before it calls them, so a kind
 * only implements the counting.  A new kind adds one file with one of these
 * and a constructor that fills struct mpxkit_source.
 */
typedef struct mpxkit_source_ops {
	const char *kind;
	int (*list)(mpxkit_source *s, size_t i, mpxkit_source_event *out);
	int (*add)(mpxkit_source *s, const char *name, mpxkit_diag *diag);
	const char *(*slot_name)(const mpxkit_source *s, int slot);
	int (*enable)(mpxkit_source *s, int slot); /* slot may be MPXKIT_SOURCE_ALL */
	int (*disable)(mpxkit_source *s, int slot);
	int (*reset)(mpxkit_source *s, int slot);
	int (*read)(mpxkit_source *s, mpxkit_source_count *counts); /* all n_slots */
	/* Optional: the listed slots only, into counts[slot]; NULL: read reads them all. */
	int (*read_slots)(mpxkit_source *s, const size_t *slots, size_t n,
			  mpxkit_source_count *counts);
	/* Optional (real-time kinds): mpxkit_source_snapshot; NULL: -MPXKIT_ENOSUPP. */
	int (*snapshot)(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			uint64_t *clock_ns);
	void (*free)(mpxkit_source *s);
	int (*step)(mpxkit_source *s);		      /* NULL for real-time kinds */
	int (*rewind)(mpxkit_source *s);	      /* NULL for real-time kinds */
	int (*clock)(mpxkit_source *s, uint64_t *ns); /* NULL for virtual kinds */
	/* Optional: mpxkit_source_target_cpu; NULL: -1. */
	int (*target_cpu)(mpxkit_source *s);
	/* Optional: parts (checked by source.c); NULL: -MPXKIT_ENOSUPP. */
	int (*partition)(mpxkit_source *s, const size_t *part, size_t n_parts, mpxkit_diag *diag);
	int (*switch_part)(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
			   uint64_t *clock_ns);
	/* Optional: whether these slots count together (mpxkit_source_countable); NULL: any. */
	int (*countable)(const mpxkit_source *s, const size_t *slots, size_t n);
	/* Optional: mpxkit_source_counter_pmu; NULL: every slot takes one of PMU 0. */
	int (*counter_pmu)(const mpxkit_source *s, size_t slot);
} mpxkit_source_ops;

/* The part every kind shares; a kind's own struct starts with it. */
struct mpxkit_source {
	const mpxkit_source_ops *ops;
	size_t n_slots;
	size_t n_parts; /* 0 until mpxkit_source_partition */
};

#endif

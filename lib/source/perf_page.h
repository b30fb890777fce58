/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: a perf_event mmap page read in user space (rdpmc), as the kernel says. */
#ifndef MPXKIT_PERF_PAGE_H
#define MPXKIT_PERF_PAGE_H

#include <stdint.h>

#include <linux/perf_event.h>

#include "mpxkit/source.h"

/*
 * The two instructions the protocol needs, behind pointers so that a test
 * drives the real reader over a simulated page (ctests/test_perf_page).
 * rdpmc gets the counter the page names (index - 1), rdtsc the time stamp
 * the page's time_mult/time_shift/time_offset convert.  During a read the
 * reader calls rdtsc before rdpmc, once per try.
 */
typedef struct mpxkit__pmc {
	uint64_t (*rdpmc)(void *arg, uint32_t counter);
	uint64_t (*rdtsc)(void *arg);
	void *arg;
} mpxkit__pmc;

/* This CPU's instructions, or NULL where the reader has none (not x86). */
const mpxkit__pmc *mpxkit__pmc_native(void);

/* What one read of a page gave. */
typedef struct mpxkit__page_reading {
	uint64_t value;	       /* the event's count now: offset + the counter, sign-extended */
	uint64_t time_enabled; /* now, when timed; else as the kernel last wrote them */
	uint64_t time_running;
	int timed;	/* cap_user_time: the times were carried to now */
	unsigned tries; /* 1 when the page did not change under the read */
} mpxkit__page_reading;

enum {
	MPXKIT__PAGE_COUNTER = 0, /* read from its counter: value is the count now */
	MPXKIT__PAGE_OFF = 1,	  /* not on a counter now (index 0), or no rdpmc: read(2) it */
	MPXKIT__PAGE_BUSY = 2,	  /* the page kept changing: MPXKIT__PAGE_TRIES tries */
};

/* The tries before a read gives up (the kernel rewrites a page at most a few times a slice). */
#define MPXKIT__PAGE_TRIES 64

/*
 * The kernel's sequence-lock protocol (include/uapi/linux/perf_event.h,
 * struct perf_event_mmap_page): read lock; read the times, and with
 * cap_user_time the time stamp and its conversion; read index and offset,
 * and with cap_user_rdpmc and index != 0 the counter index - 1, keeping its
 * low pmc_width bits sign-extended; read lock again, and try again when it
 * moved (or is odd: a write in progress).  With cap_user_time the delta
 * since the page was written, time_offset + cyc x time_mult >> time_shift
 * (cyc first folded into time_cycles + ((cyc - time_cycles) & time_mask) when
 * cap_user_time_short), is added to time_enabled, and to time_running when
 * the event is on a counter; want_time 0 skips the time stamp (a caller that
 * needs one slot's times only), and the times are then the page's.  Returns
 * one of the codes above; out is filled for MPXKIT__PAGE_COUNTER only.
 */
int mpxkit__perf_page_read(const struct perf_event_mmap_page *page, const mpxkit__pmc *pmc,
			   int want_time, mpxkit__page_reading *out);

/*
 * A simulated counter for tests and benches: a page as Linux writes it for
 * an event on counter index - 1 of a 48-bit PMU with user rdpmc and user
 * time at 1 ns per time stamp tick (time_mult 1, time_shift 0, time_offset
 * 0), and instructions that return `counter` and `tsc`.  Change them, and
 * the page, between reads.
 */
typedef struct mpxkit__sim_counter {
	struct perf_event_mmap_page page;
	uint64_t counter, tsc;
	mpxkit__pmc pmc; /* reads this counter */
} mpxkit__sim_counter;

void mpxkit__sim_counter_init(mpxkit__sim_counter *s, uint32_t index, int64_t offset,
			      uint64_t counter, uint64_t enabled);

/*
 * Tests only, on a perf source (lib/source/perf.c).  map_software: before
 * any slot is added, map software events' pages too, so that the real
 * fallback runs here (their pages never name a counter).  simulate: slot's
 * page and instructions replaced by a test's own, as if the slot counted
 * the calling thread on a counter.  anchor: 1 and the slot's anchor (clock
 * minus its enabled time) and half the span it was taken in; 0 when none.
 */
int mpxkit__perf_map_software(mpxkit_source *s, int on);
int mpxkit__perf_simulate(mpxkit_source *s, int slot, struct perf_event_mmap_page *page,
			  const mpxkit__pmc *pmc);
int mpxkit__perf_anchor(const mpxkit_source *s, int slot, int64_t *anchor, uint64_t *err);

/*
 * Tests only: slot's event is taken as one that takes a counter of PMU pmu
 * (mpxkit_source_counter_pmu says pmu), so that the engine multiplexes it
 * under MPXKIT_MULTIPLEX=hardware beside events counted all the time, and
 * apart from other PMUs' events, on a machine without a PMU.  Its counting
 * is unchanged.
 */
int mpxkit__perf_force_counter(mpxkit_source *s, int slot, int pmu);

#endif

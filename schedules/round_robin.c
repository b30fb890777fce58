/* SPDX-License-Identifier: BSD-3-Clause */
/* round-robin: the events in order, C per group, group s mod G in slice s (v1's schedule). */
#include "schedule-impl.h"

static size_t rr_next(mpxkit_schedule *s, size_t *set)
{
	size_t g = (size_t)(s->slice % s->G), n = 0;

	for (size_t e = g * s->C; e < s->E && e < (g + 1) * s->C; e++)
		set[n++] = e;
	return n;
}

static int rr_init(mpxkit_schedule *s, const mpxkit_schedule_setup *setup, mpxkit_diag *diag)
{
	(void)s;
	(void)setup;
	(void)diag;
	return 0;
}

const schedule_ops schedule_round_robin = {
    .info = {.name = "round-robin",
	     .summary = "the events in order, C per group, one group per slice (v1, PAPI, perf)",
	     .keys = ""},
    .init = rr_init,
    .next = rr_next,
};

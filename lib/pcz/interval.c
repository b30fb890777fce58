/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The INTERVALS rule of .pcz version 2 (doc/pcz-format.md, "Intervals"),
 * kept in one place because the writer refuses what the reader rejects.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcz_impl.h"

/* name is base followed by suffix exactly. */
static int is_bound_of(const char *name, const char *base, const char *suffix)
{
	size_t n = strlen(base);

	return strncmp(name, base, n) == 0 && strcmp(name + n, suffix) == 0;
}

int pcz_interval_names_ok(size_t n_events, const char *const *events, char *why, size_t len)
{
	if (n_events == 0 || n_events % 3 != 0) {
		snprintf(why, len, "%zu events, not triples (NAME, NAME.lo, NAME.hi)", n_events);
		return 0;
	}
	for (size_t k = 0; k < n_events; k += 3) {
		for (size_t b = 1; b <= 2; b++) {
			const char *suffix = b == 1 ? ".lo" : ".hi";
			if (is_bound_of(events[k + b], events[k], suffix))
				continue;
			snprintf(why, len, "event %zu is '%s', not '%s%s'", k + b + 1, events[k + b],
				 events[k], suffix);
			return 0;
		}
	}
	return 1;
}

/* lo <= v <= hi, or the one empty triple that says "not counted". */
static int triple_ok(const uint64_t t[3])
{
	return mpxkit_pcz_interval_not_counted(t) || (t[1] <= t[0] && t[0] <= t[2]);
}

size_t pcz_interval_steps_bad(const uint64_t *values, size_t n_steps, size_t n_events)
{
	for (size_t i = 0; i < n_steps * n_events; i += 3)
		if (!triple_ok(values + i))
			return i;
	return SIZE_MAX;
}

/* A count from a double: NaN and negatives are 0, 2^64 and beyond saturate. */
static uint64_t count_down(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)floor(x);
}

static uint64_t count_up(double x)
{
	if (isnan(x) || x >= 18446744073709551616.0)
		return UINT64_MAX;
	if (!(x > 0))
		return 0;
	uint64_t c = (uint64_t)x; /* exact below 2^64 */
	return (double)c < x ? c + 1 : c;
}

void mpxkit_pcz_interval_encode(uint64_t v, double lo, double hi, int not_counted,
				uint64_t triple[3])
{
	uint64_t l = count_down(lo), h = count_up(hi);

	if (not_counted) {
		triple[0] = 0;
		triple[1] = MPXKIT_PCZ_NOT_COUNTED_LO;
		triple[2] = MPXKIT_PCZ_NOT_COUNTED_HI;
		return;
	}
	/* An estimate outside its own interval (a learned estimator's, rounded) widens it. */
	triple[0] = v;
	triple[1] = l < v ? l : v;
	triple[2] = h > v ? h : v;
}

int mpxkit_pcz_interval_not_counted(const uint64_t triple[3])
{
	return triple[0] == 0 && triple[1] == MPXKIT_PCZ_NOT_COUNTED_LO &&
	       triple[2] == MPXKIT_PCZ_NOT_COUNTED_HI;
}

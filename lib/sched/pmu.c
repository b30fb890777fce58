/* SPDX-License-Identifier: BSD-3-Clause */
/* The default C: the host's core PMU's generic counters (libpfm4), or 4 with software events only.
 */
#include <pthread.h>
#include <stddef.h>

#include "mpxkit/sched.h"

#include "mpxkit/event.h"

size_t mpxkit_sched_counters_for(const unsigned *generic, size_t n_pmus)
{
	size_t c = 0;

	/* Hybrid parts (P and E cores) have one core PMU each: a group must fit the smaller. */
	for (size_t i = 0; i < n_pmus; i++)
		if (generic[i] > 0 && (c == 0 || generic[i] < c))
			c = generic[i];
	if (c == 0)
		return MPXKIT_SCHED_DEFAULT_COUNTERS;
	return c > MPXKIT_SCHED_MAX_COUNTERS ? MPXKIT_SCHED_MAX_COUNTERS : c;
}

int mpxkit_sched_pmu_counters(unsigned *generic, size_t cap)
{
	/* libpfm4 has one access point, lib/event/pfm.c (why it is dlopen'd is told there). */
	return mpxkit_event_pmu_counters(generic, cap);
}

static pthread_once_t probed = PTHREAD_ONCE_INIT;
static size_t host_counters;

static void probe_host(void)
{
	unsigned generic[8];
	int n = mpxkit_sched_pmu_counters(generic, sizeof generic / sizeof generic[0]);

	host_counters = mpxkit_sched_counters_for(generic, n > 0 ? (size_t)n : 0);
}

size_t mpxkit_sched_default_counters(void)
{
	pthread_once(&probed, probe_host);
	return host_counters;
}

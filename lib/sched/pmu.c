/* SPDX-License-Identifier: BSD-3-Clause */
/* The default C: the host's core PMU's generic counters (libpfm4), or 4 with software events only.
 */
#include "config.h"

#include <pthread.h>
#include <stddef.h>

#include "mpxkit/sched.h"

#ifdef HAVE_PERFMON_PFMLIB_H
#include <dlfcn.h>
#include <perfmon/pfmlib.h>
#endif

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

#ifdef HAVE_PERFMON_PFMLIB_H
/*
 * libpfm4 is opened at run time rather than linked: the component lives in
 * libpapi next to PAPI's own copy of libpfm4, and two copies linked into one
 * process would share symbol names.  A dlopen'd copy keeps its own.
 */
static int probe_libpfm(unsigned *generic, size_t cap)
{
	pfm_err_t (*init)(void);
	pfm_err_t (*info_of)(pfm_pmu_t, pfm_pmu_info_t *);
	void *lib = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	size_t n = 0;

	if (lib == NULL)
		return 0;
	*(void **)&init = dlsym(lib, "pfm_initialize");
	*(void **)&info_of = dlsym(lib, "pfm_get_pmu_info");
	if (init == NULL || info_of == NULL || init() != PFM_SUCCESS) {
		dlclose(lib);
		return 0;
	}
	for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX && n < cap; pmu++) {
		pfm_pmu_info_t info = {0};
		info.size = sizeof info;
		if (info_of((pfm_pmu_t)pmu, &info) == PFM_SUCCESS && info.is_present &&
		    info.type == PFM_PMU_TYPE_CORE && info.num_cntrs > 0)
			generic[n++] = (unsigned)info.num_cntrs;
	}
	/* libpfm4 keeps its tables for the life of the process; so does this handle. */
	return (int)n;
}
#endif

int mpxkit_sched_pmu_counters(unsigned *generic, size_t cap)
{
	if (generic == NULL && cap > 0)
		return -MPXKIT_EINVAL;
#ifdef HAVE_PERFMON_PFMLIB_H
	return probe_libpfm(generic, cap);
#else
	return 0;
#endif
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

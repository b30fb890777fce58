/* SPDX-License-Identifier: BSD-3-Clause */
/* libpfm4, the one place it is reached from: opened at run time, its encodings and its tables. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "event_impl.h"

#ifdef HAVE_PERFMON_PFMLIB_H
#include <dlfcn.h>
#include <perfmon/pfmlib_perf_event.h>

/*
 * libpfm4 is opened at run time rather than linked: the component lives in
 * libpapi next to PAPI's own copy of libpfm4, and two copies linked into one
 * process would share symbol names.  A dlopen'd copy keeps its own.  The
 * handle and the functions are set once, under the lock, and kept for the
 * life of the process, as libpfm4 keeps its tables.
 */
typedef struct pfm_api {
	pfm_err_t (*initialize)(void);
	void (*terminate)(void);
	int (*version)(void);
	pfm_err_t (*pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
	int (*event_next)(int);
	pfm_err_t (*event_info)(int, pfm_os_t, pfm_event_info_t *);
	pfm_err_t (*attr_info)(int, int, pfm_os_t, pfm_event_attr_info_t *);
	pfm_err_t (*encode)(const char *, int, pfm_os_t, void *);
	const char *(*strerror)(int);
} pfm_api;

static pthread_mutex_t pfm_lock = PTHREAD_MUTEX_INITIALIZER;
static pfm_api api;
static void *handle;
static int state; /* 0: not tried; 1: initialised; -1: missing or failed (never reset: libpfm4
		     4.13 frees tables in pfm_terminate that a second pfm_initialize reads) */
static char version[32];

static int load_symbols(void)
{
	static const char *const names[] = {
	    "pfm_initialize",
	    "pfm_terminate",
	    "pfm_get_version",
	    "pfm_get_pmu_info",
	    "pfm_get_event_next",
	    "pfm_get_event_info",
	    "pfm_get_event_attr_info",
	    "pfm_get_os_event_encoding",
	    "pfm_strerror",
	};
	void **slots[] = {
	    (void **)&api.initialize, (void **)&api.terminate,	(void **)&api.version,
	    (void **)&api.pmu_info,   (void **)&api.event_next, (void **)&api.event_info,
	    (void **)&api.attr_info,  (void **)&api.encode,	(void **)&api.strerror,
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if ((*slots[i] = dlsym(handle, names[i])) == NULL)
			return -1;
	return 0;
}

/* The API, initialised, or NULL where libpfm4 cannot be had. */
static const pfm_api *pfm(void)
{
	const pfm_api *p;

	pthread_mutex_lock(&pfm_lock);
	if (state == 0) {
		if (handle == NULL)
			handle = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
		state = handle != NULL && load_symbols() == 0 && api.initialize() == PFM_SUCCESS
			    ? 1
			    : -1;
		if (state == 1) /* the API's version: 4.13 says 4.0 */
			snprintf(version, sizeof version, "libpfm4, API %d.%d",
				 (api.version() >> 16) & 0xffff, api.version() & 0xffff);
	}
	p = state == 1 ? &api : NULL;
	pthread_mutex_unlock(&pfm_lock);
	return p;
}

int mpxkit__pfm_available(void)
{
	return pfm() != NULL;
}

const char *mpxkit__pfm_version(void)
{
	return pfm() != NULL ? version : "";
}

static int present_pmu(const pfm_api *p, int pmu, pfm_pmu_info_t *info)
{
	memset(info, 0, sizeof *info);
	info->size = sizeof *info;
	return p->pmu_info((pfm_pmu_t)pmu, info) == PFM_SUCCESS && info->is_present;
}

int mpxkit_event_pmu_counters(unsigned *generic, size_t cap)
{
	const pfm_api *p;
	size_t n = 0;

	if (generic == NULL && cap > 0)
		return -MPXKIT_EINVAL;
	if ((p = pfm()) == NULL)
		return 0;
	for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX && n < cap; pmu++) {
		pfm_pmu_info_t info;
		if (present_pmu(p, pmu, &info) && info.type == PFM_PMU_TYPE_CORE &&
		    info.num_cntrs > 0)
			generic[n++] = (unsigned)info.num_cntrs;
	}
	return (int)n;
}

/* One encoding with the default privilege levels plm. */
static int encode(const pfm_api *p, const char *name, int plm, struct perf_event_attr *attr,
		  char *pmu, size_t cap)
{
	pfm_perf_encode_arg_t arg;
	pfm_event_info_t einfo;
	pfm_pmu_info_t pinfo;
	int rc;

	memset(attr, 0, sizeof *attr);
	memset(&arg, 0, sizeof arg);
	arg.attr = attr;
	arg.size = sizeof arg;
	rc = p->encode(name, plm, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS || pmu == NULL)
		return rc;
	memset(&einfo, 0, sizeof einfo);
	einfo.size = sizeof einfo;
	memset(&pinfo, 0, sizeof pinfo);
	pinfo.size = sizeof pinfo;
	if (p->event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &einfo) == PFM_SUCCESS &&
	    p->pmu_info(einfo.pmu, &pinfo) == PFM_SUCCESS)
		snprintf(pmu, cap, "%s", pinfo.name);
	return rc;
}

/*
 * The name fixed its levels when the encoding does not depend on the
 * default ones: encoded once with user only and once with kernel only.
 */
int mpxkit__pfm_parse(const char *name, mpxkit_event *ev, mpxkit_diag *diag)
{
	const pfm_api *p = pfm();
	struct perf_event_attr user, kernel;
	int rc;

	if (p == NULL)
		return -MPXKIT_ENOENT;
	rc = encode(p, name, PFM_PLM3, &user, NULL, 0);
	if (rc == PFM_ERR_NOTFOUND)
		return -MPXKIT_ENOENT;
	if (rc != PFM_SUCCESS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: libpfm4: %s", name, p->strerror(rc));
	if (encode(p, name, PFM_PLM0, &kernel, NULL, 0) != PFM_SUCCESS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: libpfm4 cannot encode it", name);
	ev->kind = MPXKIT_EVENT_LIBPFM;
	if (user.exclude_user == kernel.exclude_user &&
	    user.exclude_kernel == kernel.exclude_kernel) {
		/* Not exclude_hv: libpfm4's Intel tables leave it 0 whatever the levels. */
		ev->domain = (user.exclude_user ? 0 : MPXKIT_DOM_USER) |
			     (user.exclude_kernel ? 0 : MPXKIT_DOM_KERNEL);
		if (ev->domain == 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s: its modifiers count in no mode (neither u nor k)",
					   name);
	}
	encode(p, name, PFM_PLM0 | PFM_PLM3, &ev->attr, ev->pmu, sizeof ev->pmu);
	ev->attr.size = sizeof ev->attr;
	return 0;
}

/* Calls fn for the event idx of a listed PMU and for each of its umasks. */
static int each_of_event(const pfm_api *p, const char *pmu, int idx,
			 int (*fn)(void *, const mpxkit__pfm_entry *), void *arg)
{
	pfm_event_info_t info;
	mpxkit__pfm_entry e;
	int rc;

	memset(&info, 0, sizeof info);
	info.size = sizeof info;
	if (p->event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return 0;
	snprintf(e.name, sizeof e.name, "%s::%s", pmu, info.name);
	e.description = info.desc ? info.desc : "";
	e.pmu = pmu;
	e.umask = 0;
	if ((rc = fn(arg, &e)) < 0)
		return rc;
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ai;
		memset(&ai, 0, sizeof ai);
		ai.size = sizeof ai;
		if (p->attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
		    ai.type != PFM_ATTR_UMASK)
			continue;
		snprintf(e.name, sizeof e.name, "%s::%s:%s", pmu, info.name, ai.name);
		e.description = ai.desc ? ai.desc : "";
		e.umask = 1;
		if ((rc = fn(arg, &e)) < 0)
			return rc;
	}
	return 0;
}

int mpxkit__pfm_each(int (*fn)(void *arg, const mpxkit__pfm_entry *e), void *arg)
{
	const pfm_api *p = pfm();

	if (p == NULL)
		return 0;
	for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; pmu++) {
		pfm_pmu_info_t info;
		if (!present_pmu(p, pmu, &info) || pmu == PFM_PMU_PERF_EVENT ||
		    pmu == PFM_PMU_PERF_EVENT_RAW)
			continue;
		for (int idx = info.first_event; idx != -1; idx = p->event_next(idx)) {
			int rc = each_of_event(p, info.name, idx, fn, arg);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

#else /* no libpfm4 header at build time: the libpfm4 forms are unknown */

int mpxkit__pfm_available(void)
{
	return 0;
}

const char *mpxkit__pfm_version(void)
{
	return "";
}

int mpxkit_event_pmu_counters(unsigned *generic, size_t cap)
{
	return generic == NULL && cap > 0 ? -MPXKIT_EINVAL : 0;
}

int mpxkit__pfm_parse(const char *name, mpxkit_event *ev, mpxkit_diag *diag)
{
	(void)name, (void)ev, (void)diag;
	return -MPXKIT_ENOENT;
}

int mpxkit__pfm_each(int (*fn)(void *arg, const mpxkit__pfm_entry *e), void *arg)
{
	(void)fn, (void)arg;
	return 0;
}
#endif

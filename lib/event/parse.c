/* SPDX-License-Identifier: BSD-3-Clause */
/* A name to an event: which form it is (doc/events.md), its modifiers, its counting domain. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "event_impl.h"

static const char *const kind_names[MPXKIT_EVENT_N_KINDS] = {
    "software", "hardware", "cache", "tracepoint", "sysfs", "libpfm4", "raw"};

const char *mpxkit_event_kind_name(mpxkit_event_class kind)
{
	return (unsigned)kind < MPXKIT_EVENT_N_KINDS ? kind_names[kind] : "unknown";
}

/* ---- modifiers ---------------------------------------------------------------------------- */

static unsigned level_of(char c)
{
	return c == 'u'	  ? MPXKIT_DOM_USER
	       : c == 'k' ? MPXKIT_DOM_KERNEL
	       : c == 'h' ? MPXKIT_DOM_HV
			  : 0;
}

static int bad_mod(const char *name, const char *group, size_t len, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_EINVAL,
			   "%s: bad modifier '%.*s' (perf's :u :k :h or :uk, or :u=1 :k=0)", name,
			   (int)len, group);
}

/* One group: letters "uk", or one "u=1"; adds to *named and *on. */
static int mod_group(const char *name, const char *g, size_t len, unsigned *named, unsigned *on,
		     mpxkit_diag *diag)
{
	if (len == 3 && g[1] == '=') {
		unsigned bit = level_of(g[0]);
		if (bit == 0 || (g[2] != '0' && g[2] != '1') || (*named & bit))
			return bad_mod(name, g, len, diag);
		*named |= bit;
		if (g[2] == '1')
			*on |= bit;
		return 0;
	}
	if (len == 0)
		return bad_mod(name, g, len, diag);
	for (size_t i = 0; i < len; i++) {
		unsigned bit = level_of(g[i]);
		if (bit == 0 || (*named & bit))
			return bad_mod(name, g, len, diag);
		*named |= bit;
		*on |= bit;
	}
	return 0;
}

int mpxkit__event_mods(const char *name, const char *mods, unsigned *domain, char *canon,
		       size_t cap, mpxkit_diag *diag)
{
	unsigned named = 0, on = 0;
	const char *p = mods;
	size_t n = 0;

	*domain = 0;
	if (canon && cap)
		canon[0] = '\0';
	if (*p == '\0')
		return 0;
	if (*p == ':')
		p++;
	for (;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		int rc = mod_group(name, p, len, &named, &on, diag);
		if (rc < 0)
			return rc;
		if (colon == NULL)
			break;
		p = colon + 1;
	}
	if (on == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s: its modifiers count in no mode (none of u, k, h is on)",
				   name);
	*domain = on;
	if (canon && cap >= 5) {
		canon[n++] = ':';
		for (const char *c = "ukh"; *c; c++)
			if (on & level_of(*c))
				canon[n++] = *c;
		canon[n] = '\0';
	}
	return 0;
}

/* ---- the counting domain ------------------------------------------------------------------ */

static pthread_once_t domain_once = PTHREAD_ONCE_INIT;
static unsigned default_domain;

static int paranoid_level(void)
{
	char text[16], *end;
	long level;

	if (mpxkit__read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof text) != 0)
		return 2; /* the kernel's default */
	level = strtol(text, &end, 10);
	return end == text || *end ? 2 : (int)level;
}

/* CAP_SYS_ADMIN (21) or CAP_PERFMON (38) in the effective set. */
static int capable(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long caps = 0;
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f))
		found = sscanf(line, "CapEff: %llx", &caps) == 1;
	fclose(f);
	return found && ((caps >> 21 & 1) || (caps >> 38 & 1));
}

static void find_default_domain(void)
{
	default_domain = MPXKIT_DOM_USER;
	if (capable() || paranoid_level() <= 1)
		default_domain |= MPXKIT_DOM_KERNEL;
}

unsigned mpxkit_event_default_domain(void)
{
	pthread_once(&domain_once, find_default_domain);
	return default_domain;
}

void mpxkit_event_set_domain(mpxkit_event *ev, unsigned domain)
{
	unsigned d = ev->domain ? ev->domain : domain ? domain : mpxkit_event_default_domain();

	ev->attr.exclude_user = !(d & MPXKIT_DOM_USER);
	ev->attr.exclude_kernel = !(d & MPXKIT_DOM_KERNEL);
	ev->attr.exclude_hv = !(d & MPXKIT_DOM_HV);
}

/* ---- the forms ---------------------------------------------------------------------------- */

void mpxkit__event_name(mpxkit_event *ev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ev->name, sizeof ev->name, fmt, ap);
	va_end(ap);
}

static int generic_event(const char *name, const mpxkit__generic *g, const char *mods,
			 mpxkit_event *ev, mpxkit_diag *diag)
{
	char canon[16];
	int rc = mpxkit__event_mods(name, mods, &ev->domain, canon, sizeof canon, diag);

	if (rc < 0)
		return rc;
	ev->kind = g->type == PERF_TYPE_SOFTWARE ? MPXKIT_EVENT_SOFTWARE : MPXKIT_EVENT_HARDWARE;
	ev->attr.type = g->type;
	ev->attr.config = g->config;
	snprintf(ev->unit, sizeof ev->unit, "%s", g->unit);
	mpxkit__event_name(ev, "%s%s", g->name, canon);
	return 0;
}

static int is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return len > 0;
}

/* Cache and raw events: 1 when base is one, 0 when not. */
static int cache_or_raw(const char *name, size_t len, const char *mods, mpxkit_event *ev,
			mpxkit_diag *diag)
{
	char canon[MPXKIT_EVENT_NAME_MAX], m[16];
	uint64_t config;
	int rc;

	if (mpxkit__cache_find(name, len, &config, canon, sizeof canon) == 0) {
		ev->kind = MPXKIT_EVENT_CACHE;
		ev->attr.type = PERF_TYPE_HW_CACHE;
	} else if (name[0] == 'r' && len >= 2 && len <= 17 && is_hex(name + 1, len - 1)) {
		config = strtoull(name + 1, NULL, 16);
		snprintf(canon, sizeof canon, "r%llx", (unsigned long long)config);
		ev->kind = MPXKIT_EVENT_RAW;
		ev->attr.type = PERF_TYPE_RAW;
	} else {
		return 0;
	}
	if ((rc = mpxkit__event_mods(name, mods, &ev->domain, m, sizeof m, diag)) < 0)
		return rc;
	ev->attr.config = config;
	mpxkit__event_name(ev, "%s%s", canon, m);
	return 1;
}

/* The canonical name of the short form names the PMU libpfm4 chose: INST_RETIRED is
 * icl::INST_RETIRED. */
static int libpfm_event(const char *name, mpxkit_event *ev, mpxkit_diag *diag)
{
	int rc = mpxkit__pfm_parse(name, ev, diag);

	if (rc == 0 && strstr(name, "::") == NULL && ev->pmu[0])
		mpxkit__event_name(ev, "%s::%s", ev->pmu, name);
	else if (rc == 0)
		mpxkit__event_name(ev, "%s", name);
	return rc;
}

/* PMU::EVENT: the generic table for perf::NAME, else libpfm4. */
static int named_pmu(const char *name, size_t dcolon, mpxkit_event *ev, mpxkit_diag *diag)
{
	if (dcolon == 4 && strncasecmp(name, "perf", 4) == 0) {
		const char *colon = strchr(name + 6, ':');
		size_t len = colon ? (size_t)(colon - name) : strlen(name);
		const mpxkit__generic *g = mpxkit__generic_find(name, len);
		if (g)
			return generic_event(name, g, name + len, ev, diag);
	}
	return libpfm_event(name, ev, diag);
}

/* No '/' and no "::": generic, cache, raw, tracepoint, libpfm4's short form. */
static int plain(const char *name, mpxkit_event *ev, mpxkit_diag *diag)
{
	const char *colon = strchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);
	const mpxkit__generic *g = mpxkit__generic_find(name, len);
	int rc;

	if (g)
		return generic_event(name, g, name + len, ev, diag);
	if ((rc = cache_or_raw(name, len, name + len, ev, diag)) != 0)
		return rc < 0 ? rc : 0;
	if (colon && (rc = mpxkit__tracepoint_parse(name, len, ev, diag)) != 0)
		return rc < 0 ? rc : 0;
	return libpfm_event(name, ev, diag);
}

static int valid_name(const char *name)
{
	size_t len = 0;

	for (const char *p = name; *p; p++, len++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 127)
			return 0;
	return len > 0 && len < MPXKIT_EVENT_NAME_MAX;
}

/* "NAME: no such event; closest: A, B, C", with why a whole form may be missing. */
static int unknown(const char *name, mpxkit_diag *diag)
{
	const char *slash = strchr(name, '/'), *dcolon = strstr(name, "::");
	unsigned mask = slash	 ? 1u << MPXKIT_EVENT_SYSFS
			: dcolon ? 1u << MPXKIT_EVENT_LIBPFM | 1u << MPXKIT_EVENT_SOFTWARE |
				       1u << MPXKIT_EVENT_HARDWARE
				 : 0;
	const char *hint = "";
	mpxkit_event_catalog *c = NULL;
	const char *best[3];
	char list[160] = "";
	size_t n = 0;

	if (diag == NULL)
		return -MPXKIT_ENOENT;
	if (dcolon && !mpxkit__pfm_available())
		hint = "; libpfm4 (libpfm.so.4) is not installed, so no PMU::EVENT name is known";
	else if (!slash && !dcolon && strchr(name, ':') && mpxkit__tracefs_root() == NULL)
		hint = "; tracefs is not mounted, so no tracepoint is known (as root: mount -t "
		       "tracefs nodev /sys/kernel/tracing)";
	if (mpxkit_event_catalog_open(&c, mask, NULL) == 0)
		n = mpxkit_event_closest(c, name, best, 3);
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(list);
		snprintf(list + used, sizeof list - used, "%s%s",
			 i ? ", " : "; closest: ", best[i]);
	}
	mpxkit_fail(diag, MPXKIT_ENOENT, "%s: no such event%s%s", name, list, hint);
	mpxkit_event_catalog_free(c);
	return -MPXKIT_ENOENT;
}

int mpxkit_event_parse(const char *name, mpxkit_event *ev, mpxkit_diag *diag)
{
	const char *slash, *dcolon;
	int rc;

	if (name == NULL || ev == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "no event name given");
	if (!valid_name(name))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "'%.64s': not an event name (1 to %d printable bytes, no blank)",
				   name, MPXKIT_EVENT_NAME_MAX - 1);
	memset(ev, 0, sizeof *ev);
	ev->scale = 1;
	ev->attr.size = sizeof ev->attr;
	slash = strchr(name, '/');
	dcolon = strstr(name, "::");
	if (slash && (dcolon == NULL || slash < dcolon))
		rc = mpxkit__sysfs_parse(name, (size_t)(slash - name), ev, diag);
	else if (dcolon)
		rc = named_pmu(name, (size_t)(dcolon - name), ev, diag);
	else
		rc = plain(name, ev, diag);
	if (rc == -MPXKIT_ENOENT)
		return unknown(name, diag);
	if (rc < 0)
		return rc;
	mpxkit_event_set_domain(ev, MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL);
	return 0;
}

/* ---- open errors -------------------------------------------------------------------------- */

static int not_here(const mpxkit_event *ev, int err, mpxkit_diag *diag)
{
	if ((ev->kind == MPXKIT_EVENT_HARDWARE || ev->kind == MPXKIT_EVENT_CACHE ||
	     ev->kind == MPXKIT_EVENT_RAW || ev->kind == MPXKIT_EVENT_LIBPFM) &&
	    !mpxkit__sysfs_has_core_pmu())
		return mpxkit_fail(diag, MPXKIT_ENOSUPP,
				   "%s: not on this machine: its kernel has no core PMU "
				   "(perf_event_open: %s)",
				   ev->name, strerror(err));
	return mpxkit_fail(diag, MPXKIT_ENOSUPP, "%s: not on this machine (perf_event_open: %s)",
			   ev->name, strerror(err));
}

/* Where kernel mode was refused, the line says how to count user mode alone. */
static int not_allowed(const mpxkit_event *ev, int err, mpxkit_diag *diag)
{
	int kernel = !ev->attr.exclude_kernel;
	char hint[MPXKIT_EVENT_NAME_MAX + 32] = "";

	if (kernel && ev->domain == 0)
		snprintf(hint, sizeof hint, "; %s:u counts user mode only", ev->name);
	else if (kernel)
		snprintf(hint, sizeof hint, "; without k it counts user mode only");
	return mpxkit_fail(
	    diag, MPXKIT_EPERM,
	    "%s%s: not allowed (perf_event_open: %s; kernel.perf_event_paranoid=%d%s)", ev->name,
	    kernel ? " in kernel mode" : "", strerror(err), paranoid_level(), hint);
}

int mpxkit_event_counts_every_mode(const mpxkit_event *ev, struct perf_event_attr *attr)
{
	if (ev->kind != MPXKIT_EVENT_SYSFS || ev->domain != 0 ||
	    !(attr->exclude_user || attr->exclude_kernel || attr->exclude_hv))
		return 0;
	attr->exclude_user = attr->exclude_kernel = attr->exclude_hv = 0;
	return 1;
}

/*
 * The kernel's PMUs that count without a counter to share: free-running
 * registers read at each event read (msr's TSC, APERF, MPERF, SMI count;
 * RAPL energy; C-state residency).  Any number of their events count at
 * once, so there is nothing to multiplex.  Uncore PMUs have counters of
 * their own, as the core PMU does, and are not in this list.
 */
static const char *const free_running_pmus[] = {"msr", "power", "cstate_core", "cstate_pkg",
						"cstate_module"};

int mpxkit_event_counter_pmu(const mpxkit_event *ev)
{
	switch (ev->attr.type) {
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_TRACEPOINT:
		return -1;
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
		/* Hybrid parts name the core PMU in the config's upper half (the extended type). */
		return (ev->attr.config >> 32) ? (int)(ev->attr.config >> 32) : PERF_TYPE_RAW;
	case PERF_TYPE_RAW:
		return PERF_TYPE_RAW;
	default:
		break;
	}
	for (size_t i = 0; i < sizeof free_running_pmus / sizeof free_running_pmus[0]; i++)
		if (strcmp(ev->pmu, free_running_pmus[i]) == 0)
			return -1;
	return (int)ev->attr.type;
}

int mpxkit_event_takes_counter(const mpxkit_event *ev)
{
	return mpxkit_event_counter_pmu(ev) >= 0;
}

int mpxkit_event_open_error(const mpxkit_event *ev, int err, mpxkit_diag *diag)
{
	int rc;

	switch (err) {
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		rc = not_here(ev, err, diag);
		break;
	case ENOSYS:
		rc = mpxkit_fail(diag, MPXKIT_ENOSUPP,
				 "%s: perf_event_open is not available on this system", ev->name);
		break;
	case EACCES:
	case EPERM:
		rc = not_allowed(ev, err, diag);
		break;
	case EINVAL:
		if (ev->kind == MPXKIT_EVENT_SYSFS && ev->domain != 0) {
			rc = mpxkit_fail(diag, MPXKIT_EINVAL,
					 "%s: the kernel refused it (perf_event_open: %s); %s may "
					 "count every mode only: name it without a modifier",
					 ev->name, strerror(err), ev->pmu);
			break;
		}
		/* fall through */
	default:
		errno = err;
		rc = mpxkit_fail_sys(diag, "%s: perf_event_open", ev->name);
	}
	errno = err; /* reading sysfs or procfs may have changed it */
	return rc;
}

int mpxkit_event_cpumask_error(const mpxkit_event *ev, int cpu, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_ENOSUPP,
			   "%s: %s counts on the CPUs of its cpumask, not on CPU %d; on it, the "
			   "kernel would count a package again (system-wide, -a, the mask's CPUs "
			   "count it)",
			   ev->name, ev->pmu, cpu);
}

int mpxkit_event_per_task_error(const mpxkit_event *ev, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_ENOSUPP,
			   "%s: %s counts per CPU (it has a cpumask), not per task; it needs "
			   "system-wide counting (mpxkit stat -a; PAPI_CPU_ATTACH is not supported)",
			   ev->name, ev->pmu);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* What exists here, by kind, read lazily from sysfs, tracefs and libpfm4; nothing is opened. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_impl.h"

struct mpxkit_event_catalog {
	unsigned mask;
	int next_kind; /* kinds below it are loaded */
	mpxkit_event_info *e;
	size_t n, cap;
	int core; /* sysfs has a core PMU */
	char origin[MPXKIT_EVENT_N_KINDS][160];
	int failed; /* out of memory while loading */
};

static char *dup_or_empty(mpxkit_event_catalog *c, const char *s)
{
	char *d = strdup(s ? s : "");

	if (d == NULL)
		c->failed = 1;
	return d;
}

static int add(mpxkit_event_catalog *c, mpxkit_event_class kind, const char *name,
	       const char *description, const char *unit, const char *pmu, double scale, int umask)
{
	mpxkit_event_info *e;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		mpxkit_event_info *grown = realloc(c->e, cap * sizeof *grown);
		if (grown == NULL) {
			c->failed = 1;
			return -MPXKIT_ENOMEM;
		}
		c->e = grown;
		c->cap = cap;
	}
	e = &c->e[c->n];
	e->name = dup_or_empty(c, name);
	e->description = dup_or_empty(c, description);
	e->unit = dup_or_empty(c, unit);
	e->pmu = dup_or_empty(c, pmu);
	e->scale = scale;
	e->kind = kind;
	e->umask = umask;
	e->counts = kind != MPXKIT_EVENT_LIBPFM || c->core;
	c->n++;
	if (c->failed)
		return -MPXKIT_ENOMEM;
	return 0;
}

static int load_generic(mpxkit_event_catalog *c, uint32_t type, mpxkit_event_class kind)
{
	for (size_t i = 0; i < mpxkit__generic_count(); i++) {
		const mpxkit__generic *g = mpxkit__generic_at(i);
		int rc;
		if (g->type == type &&
		    (rc = add(c, kind, g->name, g->description, g->unit, "", 1, 0)) < 0)
			return rc;
	}
	return 0;
}

static int load_cache(mpxkit_event_catalog *c)
{
	for (size_t i = 0; i < MPXKIT__N_CACHE; i++) {
		char name[64];
		const char *what;
		int rc;
		mpxkit__cache_at(i, name, sizeof name, &what);
		if ((rc = add(c, MPXKIT_EVENT_CACHE, name, what, "", "", 1, 0)) < 0)
			return rc;
	}
	return 0;
}

static int add_tracepoint(void *arg, const char *name)
{
	return add(arg, MPXKIT_EVENT_TRACEPOINT, name, "", "", "", 1, 0);
}

static int add_sysfs(void *arg, const mpxkit__sysfs_entry *e)
{
	mpxkit_event_catalog *c = arg;
	char what[200];

	snprintf(what, sizeof what, "%s%s", e->terms,
		 e->per_cpu ? " (per CPU: needs system-wide counting)" : "");
	return add(c, MPXKIT_EVENT_SYSFS, e->name, what, e->unit, e->pmu, e->scale, 0);
}

static int add_pfm(void *arg, const mpxkit__pfm_entry *e)
{
	return add(arg, MPXKIT_EVENT_LIBPFM, e->name, e->description, "", e->pmu, 1, e->umask);
}

static void set_origin(mpxkit_event_catalog *c, mpxkit_event_class kind, const char *a,
		       const char *b)
{
	snprintf(c->origin[kind], sizeof c->origin[kind], "%s%s", a, b ? b : "");
}

static int load_kind(mpxkit_event_catalog *c, mpxkit_event_class kind)
{
	const char *tracefs;

	switch (kind) {
	case MPXKIT_EVENT_SOFTWARE:
		set_origin(c, kind, "the kernel's software events", NULL);
		return load_generic(c, PERF_TYPE_SOFTWARE, kind);
	case MPXKIT_EVENT_HARDWARE:
		if (!c->core)
			return 0;
		set_origin(c, kind, "the kernel's generic hardware events (core PMU)", NULL);
		return load_generic(c, PERF_TYPE_HARDWARE, kind);
	case MPXKIT_EVENT_CACHE:
		if (!c->core)
			return 0;
		set_origin(c, kind, "perf's legacy cache events (core PMU)", NULL);
		return load_cache(c);
	case MPXKIT_EVENT_TRACEPOINT:
		tracefs = mpxkit__tracefs_root();
		set_origin(c, kind, tracefs ? "tracefs " : "tracefs is not mounted", tracefs);
		return mpxkit__tracefs_each(add_tracepoint, c);
	case MPXKIT_EVENT_SYSFS:
		set_origin(c, kind, "sysfs ", mpxkit__sysfs_root());
		return mpxkit__sysfs_each(add_sysfs, c);
	case MPXKIT_EVENT_LIBPFM:
		if (!mpxkit__pfm_available()) {
			set_origin(c, kind, "libpfm4 (libpfm.so.4) is not installed", NULL);
			return 0;
		}
		snprintf(c->origin[kind], sizeof c->origin[kind], "%s%s", mpxkit__pfm_version(),
			 c->core ? ""
				 : "; this kernel has no core PMU: these encode, but do not "
				   "count here");
		return mpxkit__pfm_each(add_pfm, c);
	case MPXKIT_EVENT_RAW:
		set_origin(c, kind, "the core PMU's own codes", NULL);
		return add(c, kind, "rNNNN", "raw event: the core PMU's config in hex (r003c)", "",
			   "", 1, 0);
	default:
		return 0;
	}
}

/* Loads kinds in order until entry i exists or every kind is loaded. */
static int load_until(mpxkit_event_catalog *c, size_t i)
{
	while (i >= c->n && c->next_kind < MPXKIT_EVENT_N_KINDS) {
		mpxkit_event_class kind = (mpxkit_event_class)c->next_kind++;
		int rc;
		if (!(c->mask & 1u << kind))
			continue;
		if ((rc = load_kind(c, kind)) < 0)
			return rc;
	}
	return 0;
}

int mpxkit_event_catalog_open(mpxkit_event_catalog **out, unsigned mask, mpxkit_diag *diag)
{
	mpxkit_event_catalog *c;

	if (out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "event catalogue: no output pointer");
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "event catalogue: out of memory");
	c->mask = mask ? mask : (1u << MPXKIT_EVENT_N_KINDS) - 1;
	c->core = mpxkit__sysfs_has_core_pmu();
	*out = c;
	return 0;
}

void mpxkit_event_catalog_free(mpxkit_event_catalog *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free((char *)c->e[i].name);
		free((char *)c->e[i].description);
		free((char *)c->e[i].unit);
		free((char *)c->e[i].pmu);
	}
	free(c->e);
	free(c);
}

int mpxkit_event_catalog_get(mpxkit_event_catalog *c, size_t i, mpxkit_event_info *out)
{
	int rc;

	if (c == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	if ((rc = load_until(c, i)) < 0)
		return rc;
	if (i >= c->n)
		return -MPXKIT_ENOENT;
	*out = c->e[i];
	return 0;
}

size_t mpxkit_event_catalog_size(mpxkit_event_catalog *c)
{
	if (c == NULL)
		return 0;
	load_until(c, (size_t)-1);
	return c->n;
}

const char *mpxkit_event_catalog_origin(mpxkit_event_catalog *c, mpxkit_event_class kind)
{
	if (c == NULL || (unsigned)kind >= MPXKIT_EVENT_N_KINDS)
		return "";
	load_until(c, (size_t)-1);
	return c->origin[kind];
}

/* ---- the closest names -------------------------------------------------------------------- */

/* Levenshtein distance, case-insensitive, both strings at most 255 bytes. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[MPXKIT_EVENT_NAME_MAX];

	if (la >= MPXKIT_EVENT_NAME_MAX || lb >= MPXKIT_EVENT_NAME_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

typedef struct ranked {
	const char **out;
	size_t *dist;
	size_t n, cap;
} ranked;

/* Keeps the cap best, best first; on a tie the earlier candidate stays first. */
static void consider(ranked *r, const char *name, size_t d)
{
	size_t at = r->n;

	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->out[i], name) == 0)
			return;
	while (at > 0 && d < r->dist[at - 1])
		at--;
	if (at >= r->cap)
		return;
	if (r->n < r->cap)
		r->n++;
	memmove(r->out + at + 1, r->out + at, (r->n - 1 - at) * sizeof *r->out);
	memmove(r->dist + at + 1, r->dist + at, (r->n - 1 - at) * sizeof *r->dist);
	r->out[at] = name;
	r->dist[at] = d;
}

/* The name without trailing privilege modifiers (":u", ":uk", ":k=1"). */
static void strip_mods(const char *name, char *base, size_t cap)
{
	char *colon;

	snprintf(base, cap, "%s", name);
	while ((colon = strrchr(base, ':')) != NULL && colon > base && colon[-1] != ':' &&
	       colon[1] != '\0' && strspn(colon + 1, "ukh=01") == strlen(colon + 1))
		*colon = '\0';
}

size_t mpxkit_event_closest(mpxkit_event_catalog *c, const char *name, const char **out, size_t n)
{
	size_t dist[8];
	ranked r = {out, dist, 0, n < 8 ? n : 8};
	char base[MPXKIT_EVENT_NAME_MAX];

	if (c == NULL || name == NULL || out == NULL)
		return 0;
	strip_mods(name, base, sizeof base);
	load_until(c, (size_t)-1);
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].kind != MPXKIT_EVENT_RAW) /* rNNNN is a pattern, not a name */
			consider(&r, c->e[i].name, distance(base, c->e[i].name));
	/* perf's and the kernel's spellings of the generic events, which the list shows once. */
	for (size_t i = 0; i < mpxkit__generic_count(); i++) {
		const mpxkit__generic *g = mpxkit__generic_at(i);
		mpxkit_event_class kind =
		    g->type == PERF_TYPE_SOFTWARE ? MPXKIT_EVENT_SOFTWARE : MPXKIT_EVENT_HARDWARE;
		if (!(c->mask & 1u << kind) || (kind == MPXKIT_EVENT_HARDWARE && !c->core))
			continue;
		consider(&r, g->perf_name, distance(base, g->perf_name));
		consider(&r, g->kernel_name, distance(base, g->kernel_name));
	}
	return r.n;
}

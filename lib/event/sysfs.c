/* SPDX-License-Identifier: BSD-3-Clause */
/* sysfs PMUs: pmu/alias/ and pmu/field=value,.../ through format/ bit ranges and events/ aliases.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpxkit/reader.h"

#include "event_impl.h"

#define PATH_CAP 512

const char *mpxkit__sysfs_root(void)
{
	const char *root = getenv("MPXKIT_TEST_SYSFS");

	return root && root[0] ? root : "/sys/bus/event_source/devices";
}

int mpxkit__read_text(const char *path, char *out, size_t cap)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT, 4096, 4096, "kernel file"};
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (mpxkit_read_file(path, &opt, &buf, &len, NULL) < 0) {
		err = errno;
		free(buf);
		errno = err;
		return access(path, R_OK) == 0 ? -2 : -1;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	if (len >= cap || memchr(buf, '\0', len) != NULL) {
		free(buf);
		return -2;
	}
	memcpy(out, buf, len);
	out[len] = '\0';
	free(buf);
	return 0;
}

/* A name that may be a path component: letters, digits, '_', '-', '.', not starting with '.'. */
static int safe_component(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || s[i] == '-' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

static int pmu_file(char *path, const char *pmu, const char *sub, const char *leaf,
		    const char *suffix)
{
	int n =
	    snprintf(path, PATH_CAP, "%s/%s%s%s%s%s%s", mpxkit__sysfs_root(), pmu, sub ? "/" : "",
		     sub ? sub : "", leaf ? "/" : "", leaf ? leaf : "", suffix ? suffix : "");
	return n > 0 && n < PATH_CAP ? 0 : -1;
}

static int read_pmu_file(const char *pmu, const char *sub, const char *leaf, const char *suffix,
			 char *out, size_t cap)
{
	char path[PATH_CAP];

	if (pmu_file(path, pmu, sub, leaf, suffix) < 0)
		return -1;
	return mpxkit__read_text(path, out, cap);
}

static int has_file(const char *pmu, const char *leaf)
{
	char path[PATH_CAP];
	struct stat st;

	return pmu_file(path, pmu, NULL, leaf, NULL) == 0 && stat(path, &st) == 0;
}

/*
 * Whether cpu is in a cpulist ("0", "0-3,8", "0,4-7\n"): 1 or 0; -1 for text
 * that is not one.
 */
int mpxkit__cpulist_has(const char *text, int cpu)
{
	const char *p = text;

	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -1;
			p = end;
		}
		if (cpu >= lo && cpu <= hi)
			return 1;
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

int mpxkit_event_on_cpu(const mpxkit_event *ev, int cpu)
{
	char text[4096];

	if (!ev->per_cpu || cpu < 0)
		return 1;
	if (read_pmu_file(ev->pmu, NULL, "cpumask", NULL, text, sizeof text) != 0)
		return -1;
	return mpxkit__cpulist_has(text, cpu);
}

/* The PMU's perf type, or -1 when it has none (not a PMU here). */
static long pmu_type(const char *pmu)
{
	char text[32], *end;
	long type;

	if (read_pmu_file(pmu, NULL, "type", NULL, text, sizeof text) != 0)
		return -1;
	errno = 0;
	type = strtol(text, &end, 10);
	return errno || end == text || *end || type < 0 || type > 0x7fffffff ? -1 : type;
}

/* ---- one term ----------------------------------------------------------------------------- */

typedef struct term_ctx {
	const char *name; /* the whole event name, for messages */
	const char *pmu;
	uint64_t config[3];
	mpxkit_diag *diag;
	mpxkit_event *ev; /* gets an alias's scale and unit */
	int aliases;
} term_ctx;

static int parse_u64(const char *s, size_t len, uint64_t *v)
{
	char text[32], *end;

	if (len == 0 || len >= sizeof text || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(text, s, len);
	text[len] = '\0';
	errno = 0;
	*v = strtoull(text, &end, 0);
	return errno || *end ? -1 : 0;
}

/* Puts v into the bits of a format spec "config1:0-7,21"; 0, or -1 when it does not fit. */
static int place(term_ctx *t, const char *field, const char *spec, uint64_t v)
{
	const char *colon = strchr(spec, ':'), *p;
	int which, bit = 0;
	uint64_t out = 0;

	if (colon == NULL)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s/format/%s: bad format '%s'",
				   t->name, t->pmu, field, spec);
	which = strncmp(spec, "config:", 7) == 0    ? 0
		: strncmp(spec, "config1:", 8) == 0 ? 1
		: strncmp(spec, "config2:", 8) == 0 ? 2
						    : -1;
	if (which < 0)
		return mpxkit_fail(t->diag, MPXKIT_ENOSUPP,
				   "%s: %s/format/%s: '%s' is not config, "
				   "config1 or config2",
				   t->name, t->pmu, field, spec);
	for (p = colon + 1; *p;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (lo > hi || hi > 63)
			goto bad;
		for (unsigned long b = lo; b <= hi; b++, bit++)
			if (bit < 64 && (v >> bit & 1))
				out |= (uint64_t)1 << b;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0')
			goto bad;
	}
	if (bit < 64 && (v >> bit) != 0)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL,
				   "%s: %s=0x%llx does not fit %s's %d bits (%s)", t->name, field,
				   (unsigned long long)v, field, bit, spec);
	t->config[which] |= out;
	return 0;
bad:
	return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s/format/%s: bad format '%s'", t->name,
			   t->pmu, field, spec);
}

/* "NAME: PMU has no format field 'F'; it has: event, umask, ..." (as many as fit the line). */
static int no_field(term_ctx *t, const char *field)
{
	char path[PATH_CAP], have[160] = "";
	char **names = NULL;
	size_t n = 0;

	if (pmu_file(path, t->pmu, "format", NULL, NULL) == 0)
		names = mpxkit__sorted_dir(path, 0, &n);
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(have);
		snprintf(have + used, sizeof have - used, "%s%s",
			 i ? ", " : "; it has: ", names[i]);
	}
	mpxkit__free_names(names, n);
	return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s has no format field '%s'%s", t->name,
			   t->pmu, field, n ? have : "; it has none");
}

/* One FIELD or FIELD=VALUE term (len bytes at s). */
static int field_term(term_ctx *t, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	size_t flen = eq ? (size_t)(eq - s) : len;
	char field[64], spec[128];
	uint64_t v = 1;
	int rc;

	if (!safe_component(s, flen) || flen >= sizeof field)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: bad term '%.*s'", t->name, (int)len,
				   s);
	memcpy(field, s, flen);
	field[flen] = '\0';
	if (eq && parse_u64(eq + 1, len - flen - 1, &v) < 0)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s: '%.*s' is not a number",
				   t->name, field, (int)(len - flen - 1), eq + 1);
	rc = read_pmu_file(t->pmu, "format", field, NULL, spec, sizeof spec);
	if (rc == 0)
		return place(t, field, spec, v);
	/* perf's built-in terms: the whole config word. */
	for (int w = 0; w < 3; w++) {
		static const char *const words[] = {"config", "config1", "config2"};
		if (strcmp(field, words[w]) == 0) {
			t->config[w] = v;
			return 0;
		}
	}
	return no_field(t, field);
}

/* Calls one for each comma-separated term of s (len bytes); 0 or its first error. */
static int each_term(term_ctx *t, const char *s, size_t len,
		     int (*one)(term_ctx *t, const char *term, size_t len))
{
	while (len > 0) {
		const char *comma = memchr(s, ',', len);
		size_t n = comma ? (size_t)(comma - s) : len;
		int rc = one(t, s, n);
		if (rc < 0)
			return rc;
		s += n, len -= n;
		if (comma)
			s++, len--;
	}
	return 0;
}

/* The alias's terms, scale and unit into t and ev; 1, 0 when there is no such alias. */
static int alias_term(term_ctx *t, const char *alias)
{
	mpxkit_event *ev = t->ev;
	char terms[256], text[64];
	int rc = read_pmu_file(t->pmu, "events", alias, NULL, terms, sizeof terms);

	if (rc == -1)
		return 0;
	if (rc < 0)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s/events/%s: not one short line",
				   t->name, t->pmu, alias);
	if (strchr(terms, '?'))
		return mpxkit_fail(t->diag, MPXKIT_EINVAL,
				   "%s: %s/events/%s needs a value ('%s'); give the fields instead",
				   t->name, t->pmu, alias, terms);
	if ((rc = each_term(t, terms, strlen(terms), field_term)) < 0)
		return rc;
	if (read_pmu_file(t->pmu, "events", alias, ".scale", text, sizeof text) == 0) {
		char *end;
		double scale = strtod(text, &end);
		if (end == text || *end || !(scale > 0))
			return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s/events/%s.scale: '%s'",
					   t->name, t->pmu, alias, text);
		ev->scale = scale;
	}
	if (read_pmu_file(t->pmu, "events", alias, ".unit", ev->unit, sizeof ev->unit) == -2)
		return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: %s/events/%s.unit: too long",
				   t->name, t->pmu, alias);
	return 1;
}

/* One term of the name: an alias of PMU/events, else a field. */
static int user_term(term_ctx *t, const char *s, size_t len)
{
	char alias[128];
	int rc = 0;

	if (memchr(s, '=', len) == NULL && len < sizeof alias && safe_component(s, len)) {
		memcpy(alias, s, len);
		alias[len] = '\0';
		rc = alias_term(t, alias);
		if (rc > 0 && ++t->aliases > 1)
			return mpxkit_fail(t->diag, MPXKIT_EINVAL, "%s: more than one event alias",
					   t->name);
	}
	return rc == 0 ? field_term(t, s, len) : rc < 0 ? rc : 0;
}

int mpxkit__sysfs_parse(const char *name, size_t slash, mpxkit_event *ev, mpxkit_diag *diag)
{
	const char *terms = name + slash + 1, *end = strchr(terms, '/');
	term_ctx t = {name, NULL, {0, 0, 0}, diag, ev, 0};
	char mods[16] = "";
	long type;
	int rc;

	if (end == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: no closing '/'", name);
	if (!safe_component(name, slash) || slash >= sizeof ev->pmu)
		return -MPXKIT_ENOENT;
	memcpy(ev->pmu, name, slash);
	ev->pmu[slash] = '\0';
	if ((type = pmu_type(ev->pmu)) < 0)
		return -MPXKIT_ENOENT;
	t.pmu = ev->pmu;
	ev->kind = MPXKIT_EVENT_SYSFS;
	ev->attr.type = (uint32_t)type;
	if (end == terms)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: no event or term between the slashes",
				   name);
	if ((rc = each_term(&t, terms, (size_t)(end - terms), user_term)) < 0)
		return rc;
	ev->attr.config = t.config[0];
	ev->attr.config1 = t.config[1];
	ev->attr.config2 = t.config[2];
	ev->per_cpu = has_file(ev->pmu, "cpumask");
	if ((rc = mpxkit__event_mods(name, end + 1, &ev->domain, mods, sizeof mods, diag)) < 0)
		return rc;
	mpxkit__event_name(ev, "%.*s%s", (int)(end + 1 - name), name, mods);
	return 0;
}

/* ---- enumeration -------------------------------------------------------------------------- */

int mpxkit__sysfs_each_pmu(int (*fn)(void *arg, const char *pmu), void *arg)
{
	size_t n;
	char **pmus = mpxkit__sorted_dir(mpxkit__sysfs_root(), 0, &n);
	int rc = 0;

	for (size_t i = 0; i < n && rc >= 0; i++)
		if (pmu_type(pmus[i]) >= 0)
			rc = fn(arg, pmus[i]);
	mpxkit__free_names(pmus, n);
	return rc < 0 ? rc : 0;
}

typedef struct each_ctx {
	int (*fn)(void *, const mpxkit__sysfs_entry *);
	void *arg;
} each_ctx;

static int aliases_of(void *arg, const char *pmu)
{
	each_ctx *c = arg;
	char path[PATH_CAP];
	char **names;
	size_t n;
	int rc = 0, per_cpu = has_file(pmu, "cpumask");

	if (pmu_file(path, pmu, "events", NULL, NULL) < 0)
		return 0;
	names = mpxkit__sorted_dir(path, 0, &n);
	for (size_t i = 0; i < n && rc >= 0; i++) {
		mpxkit__sysfs_entry e;
		char text[64];
		if (strchr(names[i], '.') != NULL)
			continue; /* .scale, .unit, .snapshot, .per-pkg: the alias's attributes */
		memset(&e, 0, sizeof e);
		snprintf(e.name, sizeof e.name, "%s/%s/", pmu, names[i]);
		if (read_pmu_file(pmu, "events", names[i], NULL, e.terms, sizeof e.terms) != 0)
			continue;
		e.scale = 1;
		if (read_pmu_file(pmu, "events", names[i], ".scale", text, sizeof text) == 0)
			e.scale = strtod(text, NULL);
		if (!(e.scale > 0))
			e.scale = 1;
		read_pmu_file(pmu, "events", names[i], ".unit", e.unit, sizeof e.unit);
		e.pmu = pmu;
		e.per_cpu = per_cpu;
		rc = c->fn(c->arg, &e);
	}
	mpxkit__free_names(names, n);
	return rc;
}

int mpxkit__sysfs_each(int (*fn)(void *arg, const mpxkit__sysfs_entry *e), void *arg)
{
	each_ctx c = {fn, arg};

	return mpxkit__sysfs_each_pmu(aliases_of, &c);
}

static int is_core(void *arg, const char *pmu)
{
	(void)arg;
	if (strcmp(pmu, "cpu") == 0 || strcmp(pmu, "cpu_core") == 0 ||
	    strcmp(pmu, "cpu_atom") == 0 || has_file(pmu, "cpus") || pmu_type(pmu) == PERF_TYPE_RAW)
		return -1; /* found: stop */
	return 0;
}

int mpxkit__sysfs_has_core_pmu(void)
{
	return mpxkit__sysfs_each_pmu(is_core, NULL) < 0;
}

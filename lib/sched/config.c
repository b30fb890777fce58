/* SPDX-License-Identifier: BSD-3-Clause */
/* The scheduler's settings: defaults and the MPXKIT_* environment variables, strictly parsed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/mpx.h"
#include "mpxkit/sched.h"
#include "mpxkit/schedule.h"

void mpxkit_sched_config_default(mpxkit_sched_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->slice_ns = (uint64_t)MPXKIT_SCHED_DEFAULT_SLICE_US * 1000u;
	strcpy(cfg->estimator, MPXKIT_SCHED_DEFAULT_ESTIMATOR);
	cfg->whole_max = MPXKIT_SCHED_DEFAULT_WHOLE_MAX;
	cfg->level = MPXKIT_INTERVAL_LEVEL;
}

/*
 * An interval's level: a plain decimal in (0, MPXKIT_INTERVAL_LEVEL_MAX],
 * the estimators' calibrated range; no blanks, no suffix.
 */
static int set_level(mpxkit_sched_config *cfg, const char *value, mpxkit_diag *diag)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno != 0 || end == value || *end != '\0' || !(v > 0.0) ||
	    v > MPXKIT_INTERVAL_LEVEL_MAX || value[0] == ' ' || value[0] == '+')
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "MPXKIT_LEVEL=%s: not a level in (0, %.2f] (0.9 is 90 %%)",
				   value, MPXKIT_INTERVAL_LEVEL_MAX);
	cfg->level = v;
	return 0;
}

/* A whole decimal number in [lo, hi]: no sign, no blanks, no suffix. */
static int parse_whole(const char *value, unsigned long long lo, unsigned long long hi,
		       unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (value[0] < '0' || value[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int set_path(char *dst, const char *key, const char *value, mpxkit_diag *diag)
{
	if (strlen(value) >= MPXKIT_SCHED_PATH_MAX)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: path longer than %d bytes", key,
				   MPXKIT_SCHED_PATH_MAX - 1);
	strcpy(dst, value);
	return 0;
}

static int set_estimator(mpxkit_sched_config *cfg, const char *value, mpxkit_diag *diag)
{
	const mpxkit_estimator_info *info;

	if (mpxkit_estimator_lookup(value, &info) < 0)
		return mpxkit_fail(
		    diag, MPXKIT_ENOENT,
		    "MPXKIT_ESTIMATOR=%s: no such estimator (see 'mpxkit eval --list')", value);
	if (strlen(info->name) >= sizeof cfg->estimator)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "MPXKIT_ESTIMATOR=%s: name too long",
				   value);
	strcpy(cfg->estimator, info->name);
	return 0;
}

/*
 * A schedule of the registry, built once for three events to check its keys,
 * or else a group file, read and parsed: a bad one disables the component at
 * init with this line, not each event set later.
 */
static int set_schedule(mpxkit_sched_config *cfg, const char *value, mpxkit_diag *diag)
{
	static const char *const names[] = {"a", "b", "c"};
	mpxkit_schedule_setup setup = {3, names, 1, NULL, NULL, NULL};
	mpxkit_schedule *sch = NULL;
	mpxkit_groups *g = NULL;
	mpxkit_diag why = {0};
	int rc;

	if (strlen(value) >= sizeof cfg->schedule)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "MPXKIT_SCHEDULE: longer than %zu bytes",
				   sizeof cfg->schedule - 1);
	if (mpxkit_schedule_is_name(value)) {
		if (strncmp(value, "groups", 6) == 0 && (value[6] == '\0' || value[6] == ':'))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_SCHEDULE=%s: give the group file itself "
					   "(MPXKIT_SCHEDULE=FILE)",
					   value);
		rc = mpxkit_schedule_new(&sch, value, &setup, &why);
		mpxkit_schedule_free(sch);
		if (rc < 0)
			return mpxkit_fail(diag, -rc, "MPXKIT_SCHEDULE=%s: %s", value, why.msg);
	} else {
		rc = mpxkit_groups_read(value, &g, &why);
		mpxkit_groups_free(g);
		if (rc == -MPXKIT_ESYS && why.sys_errno == ENOENT)
			return mpxkit_fail(diag, MPXKIT_ENOENT,
					   "MPXKIT_SCHEDULE=%s: no schedule of that name "
					   "(round-robin, prior, adaptive) and no such group file",
					   value);
		if (rc < 0)
			return mpxkit_fail(diag, -rc, "MPXKIT_SCHEDULE=%s: %s", value, why.msg);
	}
	strcpy(cfg->schedule, value);
	return 0;
}

int mpxkit_sched_config_set(mpxkit_sched_config *cfg, const char *key, const char *value,
			    mpxkit_diag *diag)
{
	unsigned long long v;

	if (cfg == NULL || key == NULL || value == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler setting: missing argument");
	if (strcmp(key, "MPXKIT_COUNTERS") == 0) {
		if (parse_whole(value, 1, MPXKIT_SCHED_MAX_COUNTERS, &v) < 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_COUNTERS=%s: not a whole number in [1, %d]",
					   value, MPXKIT_SCHED_MAX_COUNTERS);
		cfg->counters = (size_t)v;
		return 0;
	}
	if (strcmp(key, "MPXKIT_SLICE_US") == 0) {
		if (parse_whole(value, MPXKIT_SCHED_MIN_SLICE_US, MPXKIT_SCHED_MAX_SLICE_US, &v) <
		    0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_SLICE_US=%s: not a whole number of microseconds "
					   "in [%d, %d]",
					   value, MPXKIT_SCHED_MIN_SLICE_US,
					   MPXKIT_SCHED_MAX_SLICE_US);
		cfg->slice_ns = (uint64_t)v * 1000u;
		return 0;
	}
	if (strcmp(key, "MPXKIT_ESTIMATOR") == 0)
		return set_estimator(cfg, value, diag);
	if (strcmp(key, "MPXKIT_MODEL") == 0)
		return set_path(cfg->model, key, value, diag);
	if (strcmp(key, "MPXKIT_REPLAY") == 0)
		return set_path(cfg->replay, key, value, diag);
	if (strcmp(key, "MPXKIT_REFERENCE") == 0) {
		if (value[0] == '\0' || strlen(value) >= sizeof cfg->reference)
			return mpxkit_fail(
			    diag, MPXKIT_EINVAL,
			    "MPXKIT_REFERENCE=%s: not an event name of 1 to %zu bytes", value,
			    sizeof cfg->reference - 1);
		strcpy(cfg->reference, value);
		return 0;
	}
	if (strcmp(key, "MPXKIT_WHOLE_MAX") == 0) {
		if (parse_whole(value, 0, MPXKIT_SCHED_MAX_WHOLE_MAX, &v) < 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_WHOLE_MAX=%s: not a whole number of rotations "
					   "in [0, %d]",
					   value, MPXKIT_SCHED_MAX_WHOLE_MAX);
		cfg->whole_max = (size_t)v;
		return 0;
	}
	if (strcmp(key, "MPXKIT_SCHEDULE") == 0)
		return set_schedule(cfg, value, diag);
	if (strcmp(key, "MPXKIT_READ") == 0) {
		if (strcmp(value, "fast") != 0 && strcmp(value, "exact") != 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_READ=%s: not 'fast' or 'exact'", value);
		cfg->read = value[0] == 'f' ? MPXKIT_SCHED_READ_FAST : MPXKIT_SCHED_READ_EXACT;
		return 0;
	}
	if (strcmp(key, "MPXKIT_MULTIPLEX") == 0) {
		if (strcmp(value, "hardware") != 0 && strcmp(value, "all") != 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "MPXKIT_MULTIPLEX=%s: not 'hardware' or 'all'", value);
		cfg->multiplex = value[0] == 'a' ? MPXKIT_SCHED_MULTIPLEX_ALL
						 : MPXKIT_SCHED_MULTIPLEX_HARDWARE;
		return 0;
	}
	if (strcmp(key, "MPXKIT_LEVEL") == 0)
		return set_level(cfg, value, diag);
	return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: no such scheduler setting", key);
}

int mpxkit_sched_config_check(const mpxkit_sched_config *cfg, mpxkit_diag *diag)
{
	const mpxkit_estimator_info *info;

	if (cfg == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler settings: missing argument");
	if (cfg->reference[0] == '\0' && mpxkit_estimator_lookup(cfg->estimator, &info) == 0 &&
	    (info->flags & MPXKIT_ESTIMATOR_NEEDS_REFERENCE))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "MPXKIT_ESTIMATOR=%s: it needs a reference event counted in "
				   "every slice; set MPXKIT_REFERENCE",
				   cfg->estimator);
	return 0;
}

/* Every MPXKIT_ name something reads: the library, the component, the CLI, the build and tests. */
static const char *const known_env[] = {
    "MPXKIT_COUNTERS",	   "MPXKIT_SLICE_US",  "MPXKIT_ESTIMATOR", "MPXKIT_MODEL",
    "MPXKIT_REPLAY",	   "MPXKIT_REFERENCE", "MPXKIT_WHOLE_MAX", "MPXKIT_SCHEDULE",
    "MPXKIT_READ",	   "MPXKIT_LEVEL",     "MPXKIT_MULTIPLEX", "MPXKIT_DUMP",
    "MPXKIT_DATADIR",	   "MPXKIT_SYSFS_ROOT", "MPXKIT_SHARED",   "MPXKIT_VALGRIND",
    "MPXKIT_CACHE_DIR",	   "MPXKIT_DEBIAN_MIRROR"};

/* Edit distance of a[0..n) and b[0..m), both at most 63 bytes here (longer: far). */
static size_t distance(const char *a, size_t n, const char *b, size_t m)
{
	size_t row[64];

	if (n >= 64 || m >= 64)
		return 64;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

int mpxkit_sched_config_unknown_env(char *const *envp, mpxkit_diag *diag)
{
	extern char **environ;

	for (char *const *e = envp ? envp : environ; e && *e; e++) {
		size_t n = strcspn(*e, "="), best = 4, nearest = 0, known = 0;
		if (strncmp(*e, "MPXKIT_", 7) != 0)
			continue;
		for (size_t k = 0; k < sizeof known_env / sizeof known_env[0]; k++) {
			size_t d = distance(*e, n, known_env[k], strlen(known_env[k]));
			known |= d == 0;
			if (d < best)
				best = d, nearest = k;
		}
		if (known)
			continue;
		if (best < 4)
			mpxkit_fail(diag, MPXKIT_ENOENT,
				    "%.*s: no such mpxkit setting, ignored (did you mean %s?)",
				    (int)(n < 64 ? n : 64), *e, known_env[nearest]);
		else
			mpxkit_fail(diag, MPXKIT_ENOENT,
				    "%.*s: no such mpxkit setting, ignored (see doc/component.md)",
				    (int)(n < 64 ? n : 64), *e);
		return 1;
	}
	return 0;
}

int mpxkit_sched_config_env(mpxkit_sched_config *cfg, mpxkit_diag *diag)
{
	static const char *const keys[] = {
	    "MPXKIT_COUNTERS", "MPXKIT_SLICE_US",  "MPXKIT_ESTIMATOR", "MPXKIT_MODEL",
	    "MPXKIT_REPLAY",   "MPXKIT_REFERENCE", "MPXKIT_WHOLE_MAX", "MPXKIT_SCHEDULE",
	    "MPXKIT_READ",     "MPXKIT_LEVEL",	   "MPXKIT_MULTIPLEX"};

	if (cfg == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler settings: missing argument");
	mpxkit_sched_config_default(cfg);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *value = getenv(keys[i]);
		int rc;
		if (value == NULL || value[0] == '\0')
			continue;
		rc = mpxkit_sched_config_set(cfg, keys[i], value, diag);
		if (rc < 0)
			return rc;
	}
	return mpxkit_sched_config_check(cfg, diag);
}

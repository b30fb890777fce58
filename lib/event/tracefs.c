/* SPDX-License-Identifier: BSD-3-Clause */
/* Tracepoints: SUBSYSTEM:EVENT through the id that tracefs gives each one. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "event_impl.h"

#define PATH_CAP 512

static int has_events(const char *root)
{
	char path[PATH_CAP];
	struct stat st;

	return snprintf(path, sizeof path, "%s/events", root) < (int)sizeof path &&
	       stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *mpxkit__tracefs_root(void)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	const char *test = getenv("MPXKIT_TEST_TRACEFS");

	if (test && test[0])
		return has_events(test) ? test : NULL;
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (has_events(roots[i]))
			return roots[i];
	return NULL;
}

/* A tracefs directory name: no '/', no leading '.', printable. */
static int safe_name(const char *s, size_t len)
{
	if (len == 0 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || (unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127)
			return 0;
	return 1;
}

int mpxkit__tracepoint_parse(const char *name, size_t colon, mpxkit_event *ev, mpxkit_diag *diag)
{
	const char *event = name + colon + 1, *end = strchr(event, ':');
	size_t elen = end ? (size_t)(end - event) : strlen(event);
	const char *root = mpxkit__tracefs_root();
	char path[PATH_CAP], id[32], mods[16] = "", *stop;
	struct stat st;
	unsigned long long config;
	int n, rc;

	if (root == NULL || !safe_name(name, colon) || !safe_name(event, elen))
		return 0;
	n = snprintf(path, sizeof path, "%s/events/%.*s/%.*s", root, (int)colon, name, (int)elen,
		     event);
	if (n <= 0 || n >= (int)sizeof path - 4 || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	strcat(path, "/id");
	rc = mpxkit__read_text(path, id, sizeof id);
	if (rc == -1 && (errno == EACCES || errno == EPERM))
		return mpxkit_fail_sys(diag, "%s: cannot read %s (tracefs is often root's only)",
				       name, path);
	errno = 0;
	config = rc == 0 ? strtoull(id, &stop, 10) : 0;
	if (rc != 0 || errno || stop == id || *stop)
		return mpxkit_fail(diag, MPXKIT_EIO, "%s: %s: no tracepoint id in it", name, path);
	if ((rc = mpxkit__event_mods(name, end ? end : "", &ev->domain, mods, sizeof mods, diag)) <
	    0)
		return rc;
	ev->kind = MPXKIT_EVENT_TRACEPOINT;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = config;
	mpxkit__event_name(ev, "%.*s:%.*s%s", (int)colon, name, (int)elen, event, mods);
	return 1;
}

/* ---- enumeration -------------------------------------------------------------------------- */

/*
 * By name, the end of a name ordered as ':' is: subsystems then sort as
 * their tracepoints' full names do ("fib6:..." before "fib:..."), as perf's.
 */
static int by_name(const void *a, const void *b)
{
	const unsigned char *x = *(const unsigned char *const *)a;
	const unsigned char *y = *(const unsigned char *const *)b;

	for (;; x++, y++) {
		int cx = *x ? *x : ':', cy = *y ? *y : ':';
		if (cx != cy)
			return cx - cy;
		if (*x == '\0' || *y == '\0')
			return (int)*x - (int)*y;
	}
}

/* An event directory the kernel can count: it has an id (ftrace's own events have none). */
static int has_id(const char *dir, const char *event)
{
	char path[PATH_CAP];
	struct stat st;

	return snprintf(path, sizeof path, "%s/%s/id", dir, event) < (int)sizeof path &&
	       stat(path, &st) == 0;
}

static int is_dir(const char *dir, const struct dirent *de)
{
	char path[PATH_CAP];
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	return snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path &&
	       stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char **mpxkit__sorted_dir(const char *path, int dirs_only, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || (dirs_only && !is_dir(path, de)))
			continue;
		if (*n == cap) {
			char **grown;
			cap = cap ? 2 * cap : 32;
			if ((grown = realloc(names, cap * sizeof *names)) == NULL)
				break;
			names = grown;
		}
		if ((names[*n] = strdup(de->d_name)) == NULL)
			break;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof *names, by_name);
	return names;
}

void mpxkit__free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int mpxkit__tracefs_each(int (*fn)(void *arg, const char *name), void *arg)
{
	const char *root = mpxkit__tracefs_root();
	char path[PATH_CAP], name[MPXKIT_EVENT_NAME_MAX];
	char **subs;
	size_t n_subs;
	int rc = 0;

	if (root == NULL)
		return 0;
	snprintf(path, sizeof path, "%s/events", root);
	subs = mpxkit__sorted_dir(path, 1, &n_subs);
	for (size_t s = 0; s < n_subs && rc >= 0; s++) {
		size_t n;
		char **events;
		if (snprintf(path, sizeof path, "%s/events/%s", root, subs[s]) >= (int)sizeof path)
			continue;
		events = mpxkit__sorted_dir(path, 1, &n);
		for (size_t e = 0; e < n && rc >= 0; e++)
			if (has_id(path, events[e]) && snprintf(name, sizeof name, "%s:%s", subs[s],
								events[e]) < (int)sizeof name)
				rc = fn(arg, name);
		mpxkit__free_names(events, n);
	}
	mpxkit__free_names(subs, n_subs);
	return rc < 0 ? rc : 0;
}

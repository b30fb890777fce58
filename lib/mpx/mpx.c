/* SPDX-License-Identifier: BSD-3-Clause */
/* Simulated multiplexing: groups, slices and rotations over a ground-truth trace
 * (doc/evaluation.md). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpxkit/mpx.h"
#include "mpxkit/reader.h"
#include "mpxkit/schedule.h"

/* ---- group files ----------------------------------------------------------------------- */

void mpxkit_groups_free(mpxkit_groups *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n_names; i++)
		free(g->names[i]);
	free(g->names);
	free(g->group);
	free(g->line);
	free(g->source);
	free(g);
}

/*
 * The names read so far, hashed (open addressing, FNV-1a): a file of many thousand events must
 * not cost a quadratic number of comparisons to check for repeats.  slot[] holds index + 1.
 */
typedef struct name_set {
	size_t *slot;
	size_t cap; /* a power of two, or 0 */
} name_set;

static size_t name_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* Index of the name equal to s[0..len) among g's names, or g->n_names. */
static size_t name_set_find(const name_set *set, const mpxkit_groups *g, const char *s, size_t len)
{
	if (set->cap == 0)
		return g->n_names;
	for (size_t i = name_hash(s, len) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		size_t k = set->slot[i];
		if (k == 0)
			return g->n_names;
		if (strncmp(g->names[k - 1], s, len) == 0 && g->names[k - 1][len] == '\0')
			return k - 1;
	}
}

/* Adds g's last name; keeps the table at most half full. */
static int name_set_add(name_set *set, const mpxkit_groups *g)
{
	size_t k = g->n_names - 1;

	if (2 * g->n_names > set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		size_t *slot = calloc(cap, sizeof *slot);
		if (slot == NULL)
			return -1;
		free(set->slot);
		set->slot = slot;
		set->cap = cap;
		for (size_t j = 0; j < k; j++)
			for (size_t i = name_hash(g->names[j], strlen(g->names[j])) & (cap - 1);;
			     i = (i + 1) & (cap - 1))
				if (slot[i] == 0) {
					slot[i] = j + 1;
					break;
				}
	}
	for (size_t i = name_hash(g->names[k], strlen(g->names[k])) & (set->cap - 1);;
	     i = (i + 1) & (set->cap - 1))
		if (set->slot[i] == 0) {
			set->slot[i] = k + 1;
			return 0;
		}
}

static int groups_add(mpxkit_groups *g, const char *name, size_t len, size_t group, size_t line)
{
	char **names = realloc(g->names, (g->n_names + 1) * sizeof *names);
	size_t *groups, *lines;

	if (names == NULL)
		return -1;
	g->names = names;
	groups = realloc(g->group, (g->n_names + 1) * sizeof *groups);
	if (groups == NULL)
		return -1;
	g->group = groups;
	lines = realloc(g->line, (g->n_names + 1) * sizeof *lines);
	if (lines == NULL)
		return -1;
	g->line = lines;
	g->names[g->n_names] = malloc(len + 1);
	if (g->names[g->n_names] == NULL)
		return -1;
	memcpy(g->names[g->n_names], name, len);
	g->names[g->n_names][len] = '\0';
	g->group[g->n_names] = group;
	g->line[g->n_names] = line;
	g->n_names++;
	return 0;
}

static int is_separator(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\r';
}

int mpxkit_groups_parse(const char *name, const char *buf, size_t len, mpxkit_groups **out,
			mpxkit_diag *diag)
{
	mpxkit_groups *g = NULL;
	name_set seen = {NULL, 0};
	size_t pos = 0, number = 0, k;
	int rc;

	if (out == NULL || (buf == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "groups: missing argument");
	if (name == NULL)
		name = "<groups>";
	g = calloc(1, sizeof *g);
	if (g == NULL || (g->source = strdup(name)) == NULL)
		goto nomem;
	while (pos < len) {
		const char *line = buf + pos, *nl = memchr(line, '\n', len - pos), *hash;
		size_t n = nl ? (size_t)(nl - line) : len - pos, before = g->n_names;

		pos += n + (nl ? 1 : 0);
		number++;
		hash = memchr(line, '#', n);
		if (hash)
			n = (size_t)(hash - line);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			if (is_separator(line[i])) {
				i++;
				continue;
			}
			while (j < n && !is_separator(line[j]))
				j++;
			if (memchr(line + i, '\0', j - i) != NULL) {
				rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: NUL byte", name,
						 number);
				goto fail;
			}
			k = name_set_find(&seen, g, line + i, j - i);
			if (k < g->n_names) {
				rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
						 "%s:%zu: event '%s' is already in group %zu "
						 "(line %zu)",
						 name, number, g->names[k], g->group[k] + 1,
						 g->line[k]);
				goto fail;
			}
			if (groups_add(g, line + i, j - i, g->n_groups, number) < 0 ||
			    name_set_add(&seen, g) < 0)
				goto nomem;
			i = j;
		}
		if (g->n_names > before)
			g->n_groups++;
	}
	if (g->n_groups == 0) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: no group: the file names no event",
				 name, number ? number : 1);
		goto fail;
	}
	free(seen.slot);
	*out = g;
	return 0;
nomem:
	rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
fail:
	free(seen.slot);
	mpxkit_groups_free(g);
	return rc;
}

/* A group file is a few lines of event names: 1 MiB is far beyond any real one. */
#define GROUPS_MAX_BYTES ((uint64_t)1 << 20)

int mpxkit_groups_read(const char *path, mpxkit_groups **out, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_TEXT,
				      .max_bytes = GROUPS_MAX_BYTES,
				      .what = "group file" };
	char *buf;
	size_t len;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "groups: missing argument");
	rc = mpxkit_read_file(path, &opt, &buf, &len, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_groups_parse(path, buf, len, out, diag);
	free(buf);
	return rc;
}

int mpxkit_groups_select(const mpxkit_groups *file, const char *const *events, size_t n,
			 mpxkit_groups **out, mpxkit_diag *diag)
{
	mpxkit_groups *g = NULL;
	size_t *renum = NULL, n_groups = 0;

	if (file == NULL || out == NULL || (n > 0 && events == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "groups: missing argument");
	g = calloc(1, sizeof *g);
	renum = malloc((file->n_groups ? file->n_groups : 1) * sizeof *renum);
	if (g == NULL || renum == NULL || (g->source = strdup(file->source)) == NULL)
		goto nomem;
	for (size_t j = 0; j < file->n_groups; j++)
		renum[j] = SIZE_MAX;
	for (size_t e = 0; e < n; e++) {
		size_t i = 0;
		while (i < file->n_names && strcasecmp(file->names[i], events[e]) != 0)
			i++;
		if (i == file->n_names) {
			int rc = mpxkit_fail(diag, MPXKIT_EINVAL, "%s names no group for event '%s'",
					     file->source, events[e]);
			free(renum);
			mpxkit_groups_free(g);
			return rc;
		}
		if (groups_add(g, events[e], strlen(events[e]), file->group[i], file->line[i]) < 0)
			goto nomem;
		renum[file->group[i]] = 0;
	}
	/* The file's groups that hold one of the events, in file order. */
	for (size_t j = 0; j < file->n_groups; j++)
		if (renum[j] == 0)
			renum[j] = n_groups++;
	for (size_t e = 0; e < g->n_names; e++)
		g->group[e] = renum[g->group[e]];
	g->n_groups = n_groups;
	free(renum);
	*out = g;
	return 0;
nomem:
	free(renum);
	mpxkit_groups_free(g);
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "groups: out of memory");
}

/* ---- simulation ------------------------------------------------------------------------ */

void mpxkit_mpx_run_free(mpxkit_mpx_run *run)
{
	if (run == NULL)
		return;
	free(run->slice);
	free(run->column);
	free(run->events);
	free(run->obs);
	free(run->ocoe);
	free(run->ref);
	free(run->val);
	free(run);
}

/* Column order, C per group, the reference left out. */
static int plan_columns(mpxkit_mpx_run *r, const mpxkit_trace *t, size_t counters)
{
	size_t e = 0;

	for (size_t c = 0; c < t->n_events; c++) {
		if ((int)c == r->ref_column)
			continue;
		r->column[e] = c;
		r->slice[e] = e / counters;
		e++;
	}
	r->layout.n_events = e;
	r->layout.n_groups = e ? (e + counters - 1) / counters : 1;
	return 0;
}

static int plan_groups(mpxkit_mpx_run *r, const mpxkit_trace *t, const mpxkit_mpx_config *cfg,
		       const char *tname, mpxkit_diag *diag)
{
	const mpxkit_groups *g = cfg->groups;
	size_t *size = calloc(g->n_groups, sizeof *size);

	if (size == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", tname);
	for (size_t i = 0; i < g->n_names; i++) {
		int c = mpxkit_trace_event_index(t, g->names[i]);
		if (c < 0) {
			free(size);
			return mpxkit_fail(diag, MPXKIT_EINVAL, "%s:%zu: %s has no event '%s'",
					   g->source, g->line[i], tname, g->names[i]);
		}
		if (c == r->ref_column) {
			free(size);
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s:%zu: '%s' is the reference, counted in every "
					   "slice; it belongs to no group",
					   g->source, g->line[i], g->names[i]);
		}
		if (++size[g->group[i]] > cfg->counters) {
			free(size);
			return mpxkit_fail(
			    diag, MPXKIT_EINVAL,
			    "%s:%zu: group %zu has more events than the %zu counters", g->source,
			    g->line[i], g->group[i] + 1, cfg->counters);
		}
		r->column[i] = (size_t)c;
		r->slice[i] = g->group[i];
	}
	free(size);
	r->layout.n_events = g->n_names;
	r->layout.n_groups = g->n_groups;
	return 0;
}

/*
 * Runs the schedule over the slices of the whole windows, in the order the
 * engine drives it (mpxkit/schedule.h): the set of slice s + 1 is chosen
 * before slice s is observed.  Fills val, obs, ocoe and ref window by window.
 */
static int fill_windows(mpxkit_mpx_run *r, const mpxkit_trace *t, mpxkit_schedule *sch,
			size_t C, const char *tname, mpxkit_diag *diag)
{
	size_t ne = r->layout.n_events, W = r->layout.n_groups, nt = t->n_events;
	size_t n_slices = r->n_rotations * W, n_cur, n_next = 0;
	size_t *cur = malloc(2 * (C ? C : 1) * sizeof *cur), *next = cur + C;
	uint64_t *v = malloc((C ? C : 1) * sizeof *v);
	int rc = 0;

	if (cur == NULL || v == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", tname);
		goto out;
	}
	for (size_t i = 0; i < n_slices * ne; i++)
		r->val[i] = MPXKIT_NOT_COUNTED;
	n_next = mpxkit_schedule_next(sch, next);
	for (size_t s = 0; s < n_slices; s++) {
		const uint64_t *row = t->values + s * nt;
		size_t k = s / W, j = s % W, *swap = cur;
		cur = next;
		next = swap;
		n_cur = n_next;
		if (s + 1 < n_slices)
			n_next = mpxkit_schedule_next(sch, next);
		/* The truth first: a counted slice is part of it, so obs cannot overflow after it. */
		for (size_t e = 0; e < ne; e++) {
			uint64_t x = row[r->column[e]];
			if (r->ocoe[k * ne + e] > UINT64_MAX - x) {
				rc = mpxkit_fail(diag, MPXKIT_ERANGE,
						 "%s: window %zu of '%s' sums past 2^64-1", tname,
						 k, t->events[r->column[e]]);
				goto out;
			}
			r->ocoe[k * ne + e] += x;
		}
		for (size_t i = 0; i < n_cur; i++) {
			size_t e = cur[i];
			v[i] = row[r->column[e]];
			if (v[i] == MPXKIT_NOT_COUNTED) {
				rc = mpxkit_fail(diag, MPXKIT_ERANGE,
						 "%s: step %zu of '%s' holds 2^64-1, which cannot "
						 "be counted",
						 tname, s, t->events[r->column[e]]);
				goto out;
			}
			r->val[s * ne + e] = v[i];
			r->obs[k * ne + e] += v[i];
		}
		mpxkit_schedule_observe(sch, cur, n_cur, v, 1.0);
		if (r->ref)
			r->ref[k * W + j] = row[(size_t)r->ref_column];
	}
out:
	/* cur and next are the two halves of one allocation: free its start. */
	free(cur < next ? cur : next);
	free(v);
	return rc;
}

mpxkit_series mpxkit_mpx_series(const mpxkit_mpx_run *run)
{
	mpxkit_series s = {run->n_rotations, run->obs, run->ref, run->val, NULL};
	return s;
}

/* The schedule of cfg for r's events: its spec, or groups / round-robin as v1. */
static int make_schedule(const mpxkit_mpx_run *r, const mpxkit_mpx_config *cfg,
			 mpxkit_schedule **out, mpxkit_diag *diag)
{
	const char *spec = cfg->schedule ? cfg->schedule
					 : (cfg->groups ? "groups" : "round-robin");
	mpxkit_schedule_setup setup = {r->layout.n_events, r->events, cfg->counters,
				       cfg->groups, NULL, NULL};

	return mpxkit_schedule_new(out, spec, &setup, diag);
}

int mpxkit_mpx_simulate(const mpxkit_trace *t, const mpxkit_mpx_config *cfg, mpxkit_mpx_run **out,
			mpxkit_diag *diag)
{
	const char *tname;
	mpxkit_mpx_run *r = NULL;
	mpxkit_schedule *sch = NULL;
	size_t steps, width, W, ne;
	int rc, fixed_slices;

	if (t == NULL || cfg == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mpx: missing argument");
	tname = cfg->trace_name ? cfg->trace_name : "trace";
	if (cfg->counters == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "mpx: at least one counter is needed");
	r = calloc(1, sizeof *r);
	if (r == NULL)
		goto nomem;
	r->ref_column = -1;
	if (cfg->reference) {
		r->ref_column = mpxkit_trace_event_index(t, cfg->reference);
		if (r->ref_column < 0) {
			rc = mpxkit_fail(diag, MPXKIT_EINVAL, "%s: no reference event '%s'", tname,
					 cfg->reference);
			goto fail;
		}
	}
	width = t->n_events + (cfg->groups ? cfg->groups->n_names : 0) + 1;
	r->column = calloc(width, sizeof *r->column);
	r->slice = calloc(width, sizeof *r->slice);
	r->events = calloc(width, sizeof *r->events);
	if (r->column == NULL || r->slice == NULL || r->events == NULL)
		goto nomem;
	rc = cfg->groups ? plan_groups(r, t, cfg, tname, diag) : plan_columns(r, t, cfg->counters);
	if (rc < 0)
		goto fail;
	ne = r->layout.n_events;
	for (size_t e = 0; e < ne; e++)
		r->events[e] = t->events[r->column[e]];
	rc = make_schedule(r, cfg, &sch, diag);
	if (rc < 0)
		goto fail;
	snprintf(r->schedule, sizeof r->schedule, "%s", mpxkit_schedule_spec(sch));
	r->groups = mpxkit_schedule_groups(sch);
	r->period = mpxkit_schedule_period(sch);
	W = cfg->window ? cfg->window : r->groups;
	/* Round-robin and groups over rotations: each event's one slice is fixed, as in v1. */
	fixed_slices = W == r->groups && (strncmp(r->schedule, "round-robin", 11) == 0 ||
					 strncmp(r->schedule, "groups", 6) == 0);
	r->layout.n_groups = W;
	r->layout.slice = fixed_slices ? r->slice : NULL;
	r->layout.has_reference = r->ref_column >= 0;
	r->layout.gap = (r->period - 1) / W;

	steps = cfg->max_steps && cfg->max_steps < t->n_steps ? cfg->max_steps : t->n_steps;
	r->n_rotations = steps / W;
	if (r->n_rotations == 0) {
		rc = mpxkit_fail(diag, MPXKIT_ERANGE,
				 "%s: %zu slices make no whole window of %zu slices", tname, steps,
				 W);
		goto fail;
	}
	if (r->n_rotations > SIZE_MAX / W / (ne + 1))
		goto nomem;
	r->obs = calloc(r->n_rotations * (ne + 1), sizeof *r->obs);
	r->ocoe = calloc(r->n_rotations * (ne + 1), sizeof *r->ocoe);
	r->val = calloc(r->n_rotations * W * (ne + 1), sizeof *r->val);
	if (r->obs == NULL || r->ocoe == NULL || r->val == NULL)
		goto nomem;
	if (r->layout.has_reference) {
		r->ref = calloc(r->n_rotations * W, sizeof *r->ref);
		if (r->ref == NULL)
			goto nomem;
	}
	rc = fill_windows(r, t, sch, cfg->counters, tname, diag);
	if (rc < 0)
		goto fail;
	mpxkit_schedule_free(sch);
	*out = r;
	return 0;
nomem:
	rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", tname);
fail:
	mpxkit_schedule_free(sch);
	mpxkit_mpx_run_free(r);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The schedule object: the registry, NAME:KEY=VALUE specs, and the share picker of prior and
 * adaptive. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "schedule-impl.h"

static const schedule_ops *const registry[] = {
    &schedule_round_robin,
    &schedule_groups,
    &schedule_prior,
    &schedule_adaptive,
};
#define N_SCHEDULES (sizeof registry / sizeof registry[0])

size_t mpxkit_schedule_count(void)
{
	return N_SCHEDULES;
}

const mpxkit_schedule_info *mpxkit_schedule_info_at(size_t i)
{
	return i < N_SCHEDULES ? &registry[i]->info : NULL;
}

/* The registry entry whose name is name[0 .. len). */
static const schedule_ops *find(const char *name, size_t len)
{
	for (size_t i = 0; i < N_SCHEDULES; i++)
		if (strlen(registry[i]->info.name) == len &&
		    strncmp(registry[i]->info.name, name, len) == 0)
			return registry[i];
	return NULL;
}

int mpxkit_schedule_lookup(const char *name, const mpxkit_schedule_info **out)
{
	const schedule_ops *ops;

	if (name == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	ops = find(name, strlen(name));
	if (ops == NULL)
		return -MPXKIT_ENOENT;
	*out = &ops->info;
	return 0;
}

int mpxkit_schedule_is_name(const char *spec)
{
	return spec != NULL && find(spec, strcspn(spec, ":")) != NULL;
}

/* ---- NAME:KEY=VALUE ------------------------------------------------------------------- */

static int parse_key(mpxkit_schedule *s, const char *spec, const char *kv, size_t len,
		     mpxkit_diag *diag)
{
	const schedule_ops *ops = s->ops;
	const char *eq = memchr(kv, '=', len);
	char value[32], *end;
	size_t klen = eq ? (size_t)(eq - kv) : len, vlen = eq ? len - klen - 1 : 0;
	double v;

	for (size_t i = 0; i < ops->n_keys; i++) {
		const schedule_key *k = &ops->keys[i];
		if (strlen(k->name) != klen || strncmp(k->name, kv, klen) != 0)
			continue;
		if (eq == NULL || vlen == 0 || vlen >= sizeof value)
			break;
		memcpy(value, eq + 1, vlen);
		value[vlen] = '\0';
		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end || !(v >= k->min && v <= k->max) ||
		    (k->whole && v != floor(v)) || isspace((unsigned char)value[0]))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "schedule '%s': %s takes %s %g to %g, not '%s'", spec,
					   k->name, k->whole ? "a whole number" : "a number",
					   k->min, k->max, value);
		s->key[i] = v;
		return 0;
	}
	if (eq == NULL)
		for (size_t i = 0; i < ops->n_keys; i++)
			if (strlen(ops->keys[i].name) == klen &&
			    strncmp(ops->keys[i].name, kv, klen) == 0)
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "schedule '%s': %.*s needs a value (%.*s=N)",
						   spec, (int)klen, kv, (int)klen, kv);
	return mpxkit_fail(diag, MPXKIT_EINVAL, "schedule '%s': %s has no setting '%.*s'%s%s",
			   spec, ops->info.name, (int)klen, kv,
			   ops->n_keys ? "; it takes " : " (it takes none)", ops->info.keys);
}

/* Defaults, then each :KEY=VALUE of spec, then the canonical spec. */
static int parse_spec(mpxkit_schedule *s, const char *spec, mpxkit_diag *diag)
{
	const char *p = strchr(spec, ':');
	int n;

	for (size_t i = 0; i < s->ops->n_keys; i++)
		s->key[i] = s->ops->keys[i].value;
	while (p != NULL) {
		const char *next = strchr(p + 1, ':');
		size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);
		int rc = parse_key(s, spec, p + 1, len, diag);
		if (rc < 0)
			return rc;
		p = next;
	}
	n = snprintf(s->spec, sizeof s->spec, "%s", s->ops->info.name);
	for (size_t i = 0; i < s->ops->n_keys && n > 0 && (size_t)n < sizeof s->spec; i++)
		n += snprintf(s->spec + n, sizeof s->spec - (size_t)n, ":%s=%g",
			      s->ops->keys[i].name, s->key[i]);
	return 0;
}

int mpxkit_schedule_new(mpxkit_schedule **out, const char *spec,
			const mpxkit_schedule_setup *setup, mpxkit_diag *diag)
{
	const schedule_ops *ops;
	mpxkit_schedule *s;
	int rc;

	if (out == NULL || spec == NULL || setup == NULL || setup->counters == 0 ||
	    (setup->n_events > 0 && setup->events == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "schedule: missing argument");
	ops = find(spec, strcspn(spec, ":"));
	if (ops == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOENT,
				   "no schedule named '%.*s' (round-robin, groups, prior, adaptive)",
				   (int)strcspn(spec, ":"), spec);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "schedule: out of memory");
	s->ops = ops;
	s->E = setup->n_events;
	s->C = setup->counters;
	s->G = s->E ? (s->E + s->C - 1) / s->C : 1;
	s->M = s->G;
	s->countable = setup->countable;
	s->countable_arg = setup->countable_arg;
	rc = parse_spec(s, spec, diag);
	if (rc == 0)
		rc = ops->init(s, setup, diag);
	if (rc < 0) {
		s->ops = NULL; /* init failed: nothing for fini */
		mpxkit_schedule_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void mpxkit_schedule_free(mpxkit_schedule *s)
{
	if (s == NULL)
		return;
	if (s->ops && s->ops->fini)
		s->ops->fini(s);
	free(s);
}

const char *mpxkit_schedule_spec(const mpxkit_schedule *s)
{
	return s ? s->spec : "none";
}

const mpxkit_schedule_info *mpxkit_schedule_info_of(const mpxkit_schedule *s)
{
	return s ? &s->ops->info : NULL;
}

size_t mpxkit_schedule_period(const mpxkit_schedule *s)
{
	return s ? s->M : 0;
}

size_t mpxkit_schedule_groups(const mpxkit_schedule *s)
{
	return s ? s->G : 0;
}

size_t mpxkit_schedule_next(mpxkit_schedule *s, size_t *set)
{
	size_t n = s->ops->next(s, set);

	s->slice++;
	return n;
}

void mpxkit_schedule_observe(mpxkit_schedule *s, const size_t *set, size_t n, const uint64_t *val,
			     double len)
{
	if (s->ops->observe)
		s->ops->observe(s, set, n, val, len);
}

void mpxkit_schedule_reset(mpxkit_schedule *s)
{
	if (s == NULL)
		return;
	s->slice = 0;
	if (s->ops->reset)
		s->ops->reset(s);
}

/* ---- event kinds ---------------------------------------------------------------------- */

/* Whether name contains word, ignoring case. */
static int has(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (; *name; name++)
		if (strncasecmp(name, word, n) == 0)
			return 1;
	return 0;
}

mpxkit_event_kind mpxkit_event_kind_of(const char *name)
{
	static const char *const rare[] = {"MISS", "MISP", "FAULT", "SWITCH",
					   "MIGRATION", "STALL", "FLUSH", "NUKE"};
	size_t len = name ? strlen(name) : 0;

	if (len == 0)
		return MPXKIT_EVENT_TOTAL;
	for (size_t i = 0; i < sizeof rare / sizeof rare[0]; i++)
		if (has(name, rare[i]))
			return MPXKIT_EVENT_MISS;
	/* callgrind's names: I1mr, D1mw, ILmr, DLmw (misses), Bcm, Bim (mispredictions). */
	if (len >= 3 && (strcmp(name + len - 2, "mr") == 0 || strcmp(name + len - 2, "mw") == 0))
		return MPXKIT_EVENT_MISS;
	if (strcmp(name, "Bcm") == 0 || strcmp(name, "Bim") == 0)
		return MPXKIT_EVENT_MISS;
	return MPXKIT_EVENT_TOTAL;
}

void prior_lookup(const char *event, double *variability, double *burst)
{
	mpxkit_event_kind kind = mpxkit_event_kind_of(event);
	double v = 0, b = 0;
	size_t n = 0;

	for (size_t i = 0; i < prior_table_len; i++)
		if (strcmp(prior_table[i].event, event) == 0) {
			*variability = prior_table[i].variability;
			*burst = prior_table[i].burst;
			return;
		}
	for (size_t i = 0; i < prior_table_len; i++)
		if (mpxkit_event_kind_of(prior_table[i].event) == kind) {
			v += prior_table[i].variability;
			b += prior_table[i].burst;
			n++;
		}
	*variability = n ? v / (double)n : 1.0;
	*burst = n ? b / (double)n : 1.0;
}

/* ---- the share picker ----------------------------------------------------------------- */

int picker_init(picker *p, size_t E, size_t C, size_t M)
{
	size_t n = E ? E : 1;

	*p = (picker){.E = E, .C = C, .M = M};
	p->share = calloc(n, sizeof *p->share);
	p->credit = calloc(n, sizeof *p->credit);
	p->due = calloc(n, sizeof *p->due);
	p->rank = calloc(n, sizeof *p->rank);
	p->in = calloc(n, 1);
	return p->share && p->credit && p->due && p->rank && p->in ? 0 : -MPXKIT_ENOMEM;
}

void picker_free(picker *p)
{
	free(p->share);
	free(p->credit);
	free(p->due);
	free(p->rank);
	free(p->in);
	*p = (picker){0};
}

/*
 * The first deadlines, C at a time: the most urgent C events are due by
 * slice M - 1 - floor((E-1)/C), ..., the last C by slice M - 1, so no more
 * than C share one and all fall within the first M slices (M >= ceil(E/C)).
 */
void picker_reset(picker *p, const size_t *rank)
{
	size_t E = p->E, C = p->C, first = p->M - 1 - (E ? (E - 1) / C : 0);

	for (size_t i = 0; i < E; i++) {
		p->rank[i] = rank[i];
		p->due[rank[i]] = first + i / C;
		p->credit[i] = 0.0;
	}
	p->slice = 0;
}

void picker_shares(picker *p, const double *w)
{
	double lo = 1.0 / (double)p->M, fixed = 0, free_w = 0, lambda;
	size_t E = p->E, C = p->C, rounds = 0;
	unsigned char *clamped = p->in;

	if (E <= C) {
		for (size_t e = 0; e < E; e++)
			p->share[e] = 1.0;
		return;
	}
	memset(clamped, 0, E);
	/* Water filling: clamp at lo or 1 what falls outside, rescale the rest, until stable. */
	for (;;) {
		int changed = 0;
		fixed = free_w = 0;
		for (size_t e = 0; e < E; e++) {
			if (clamped[e])
				fixed += p->share[e];
			else
				free_w += w[e] > 0 ? w[e] : 0;
		}
		lambda = free_w > 0 ? ((double)C - fixed) / free_w : 0;
		for (size_t e = 0; e < E; e++) {
			if (clamped[e])
				continue;
			double v = free_w > 0 ? lambda * (w[e] > 0 ? w[e] : 0)
					      : ((double)C - fixed) / (double)E;
			if (v < lo || v > 1.0) {
				p->share[e] = v < lo ? lo : 1.0;
				clamped[e] = 1;
				changed = 1;
			} else {
				p->share[e] = v;
			}
		}
		if (!changed || ++rounds > E)
			break;
	}
	memset(clamped, 0, E);
}

/* Adds e to the set being built, if the source can count the set with it. */
static int try_add(const mpxkit_schedule *s, size_t *set, size_t *n, size_t e)
{
	size_t i = *n;

	/* Keep the set in increasing order, as mpxkit_schedule_next promises. */
	while (i > 0 && set[i - 1] > e) {
		set[i] = set[i - 1];
		i--;
	}
	set[i] = e;
	(*n)++;
	if (s->countable == NULL || s->countable(s->countable_arg, set, *n))
		return 1;
	memmove(set + i, set + i + 1, (*n - i - 1) * sizeof *set);
	(*n)--;
	return 0;
}

size_t picker_next(picker *p, const mpxkit_schedule *s, const long *prefer, size_t *set)
{
	size_t n = 0, E = p->E, C = p->C;
	unsigned char *in = p->in;

	memset(in, 0, E);
	for (size_t e = 0; e < E; e++)
		p->credit[e] += p->share[e];
	/* Due now: counted M slices ago, or never and at its first deadline. */
	for (size_t i = 0; i < E && n < C; i++) {
		size_t e = p->rank[i];
		if (p->due[e] <= p->slice && try_add(s, set, &n, e))
			in[e] = 1;
	}
	for (size_t i = 0; prefer && i < C && prefer[i] >= 0 && n < C; i++) {
		size_t e = (size_t)prefer[i];
		if (!in[e] && try_add(s, set, &n, e))
			in[e] = 1;
	}
	/* Then the most credit: a selection of at most C, ties to the lower index. */
	while (n < C) {
		size_t best = E;
		for (size_t e = 0; e < E; e++)
			if (!in[e] && (best == E || p->credit[e] > p->credit[best]))
				best = e;
		if (best == E)
			break;
		in[best] = 1; /* tried: refused or taken */
		try_add(s, set, &n, best);
	}
	/*
	 * What the start-up phase preferred beyond its share is not charged:
	 * a burst-prone event must be counted again soon after, to see its
	 * burst end.
	 */
	for (size_t i = 0; i < n; i++) {
		int preferred = 0;
		for (size_t k = 0; prefer && k < C && prefer[k] >= 0; k++)
			preferred |= (size_t)prefer[k] == set[i];
		if (!preferred)
			p->credit[set[i]] -= 1.0;
		p->due[set[i]] = p->slice + p->M;
	}
	p->slice++;
	return n;
}

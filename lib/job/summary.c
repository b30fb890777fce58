/* SPDX-License-Identifier: BSD-3-Clause */
/* A job's counts per (rank, thread) and per rank, their spread per event, and the imbalanced ones.
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_impl.h"
#include "mpxkit/job.h"

/* One (rank, thread) as it is read: its sums over the selected regions and over all of them. */
typedef struct unit {
	char *name; /* as stored: rank<R>.<thread> in a merged file */
	long rank;
	const char *thread; /* into name, after the rank prefix */
	int cpu, numa;
	int seen_selected, seen_stop_total;
	size_t first; /* order of first appearance */
} unit;

typedef struct summary {
	mpxkit_job_summary pub; /* first: the caller's pointer is this struct's */
	char **events;
	long *ranks;
	size_t *unit_rank;
	const char **unit_names;
	int *unit_cpu, *unit_numa;
	uint64_t *unit_counts, *rank_counts, *totals;
	uint64_t *total_lo, *total_hi, *not_counted;
	mpxkit_job_spread *unit_spread, *rank_spread;
	unsigned char *unit_flags, *rank_flags;
	unsigned char *unit_nc, *rank_nc; /* 1: no step of it counted the event */
	/*
	 * An INTERVALS file's sums: each unit's row holds, per event, the
	 * estimates, the lower bounds, the upper bounds (2^64-1 unbounded), the
	 * steps not counted and the steps, in five blocks of n_events.  W is the
	 * row's width: n_events without intervals (the estimates only).
	 */
	int intervals;
	size_t W;
	/* While reading. */
	unit *units;
	size_t n_units, cap_units;
	size_t *slots, n_slots;		    /* open addressing over units, SIZE_MAX empty */
	uint64_t *sum_all, *sum_stop_total; /* [read order * n_events + e] */
	int merged;			    /* units carry rank<R>. prefixes */
	long file_rank;			    /* the rank of a single dump */
} summary;

static uint64_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

static int grow_slots(summary *s)
{
	size_t n = s->n_slots ? 2 * s->n_slots : 1024;
	size_t *slots = malloc(n * sizeof *slots);

	if (slots == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		slots[i] = SIZE_MAX;
	for (size_t u = 0; u < s->n_units; u++) {
		size_t i = hash_name(s->units[u].name) & (n - 1);
		while (slots[i] != SIZE_MAX)
			i = (i + 1) & (n - 1);
		slots[i] = u;
	}
	free(s->slots);
	s->slots = slots;
	s->n_slots = n;
	return 0;
}

/* "rank12.thread77" -> 12 and "thread77"; -1 when the name has no such prefix. */
static long split_rank(const char *name, const char **thread)
{
	char *end;
	long r;

	if (strncmp(name, "rank", 4) != 0 || name[4] < '0' || name[4] > '9')
		return -1;
	r = strtol(name + 4, &end, 10);
	if (*end != '.' || end[1] == '\0')
		return -1;
	*thread = end + 1;
	return r;
}

static int add_unit(summary *s, const mpxkit_pcz_unit *pu, size_t *out, mpxkit_diag *diag)
{
	unit *u;

	if (s->n_units == s->cap_units) {
		size_t cap = s->cap_units ? 2 * s->cap_units : 64;
		unit *units = realloc(s->units, cap * sizeof *units);
		uint64_t *a = units ? realloc(s->sum_all, cap * s->W * sizeof *a) : NULL;
		uint64_t *b = a ? realloc(s->sum_stop_total, cap * s->W * sizeof *b) : NULL;
		if (units)
			s->units = units;
		if (a)
			s->sum_all = a;
		if (b)
			s->sum_stop_total = b;
		if (b == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory for %zu units",
					   s->n_units);
		s->cap_units = cap;
	}
	u = &s->units[s->n_units];
	memset(u, 0, sizeof *u);
	if ((u->name = strdup(pu->name)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	u->thread = u->name;
	u->rank = s->merged ? split_rank(u->name, &u->thread) : s->file_rank;
	if (u->rank < 0) {
		free(u->name);
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "unit %s: a merged file's units are named rank<R>.<unit>",
				   pu->name);
	}
	u->first = s->n_units;
	u->cpu = u->numa = -1;
	memset(s->sum_all + s->n_units * s->W, 0, s->W * sizeof *s->sum_all);
	memset(s->sum_stop_total + s->n_units * s->W, 0, s->W * sizeof *s->sum_stop_total);
	*out = s->n_units++;
	return 0;
}

/* The index of the unit named like pu, added when new. */
static int find_unit(summary *s, const mpxkit_pcz_unit *pu, size_t *out, mpxkit_diag *diag)
{
	size_t i;
	int rc;

	if (2 * (s->n_units + 1) > s->n_slots && grow_slots(s) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	i = hash_name(pu->name) & (s->n_slots - 1);
	for (; s->slots[i] != SIZE_MAX; i = (i + 1) & (s->n_slots - 1))
		if (strcmp(s->units[s->slots[i]].name, pu->name) == 0) {
			*out = s->slots[i];
			return 0;
		}
	rc = add_unit(s, pu, out, diag);
	if (rc == 0)
		s->slots[i] = *out;
	return rc;
}

static int add_counts(uint64_t *sum, const mpxkit_pcz_unit *pu, size_t E, const char *region,
		      mpxkit_diag *diag)
{
	for (size_t st = 0; st < pu->n_steps; st++)
		for (size_t e = 0; e < E; e++) {
			uint64_t v = pu->values[st * E + e];
			if (sum[e] > UINT64_MAX - v)
				return mpxkit_fail(diag, MPXKIT_ERANGE,
						   "region %s, unit %s: a sum passes 2^64", region,
						   pu->name);
			sum[e] += v;
		}
	return 0;
}

/*
 * An INTERVALS unit into its row (see summary.W): a not-counted step adds
 * to no bound, an unbounded one leaves the sum of the highs unbounded.
 */
static int add_intervals(uint64_t *row, const mpxkit_pcz_unit *pu, size_t E, const char *region,
			 mpxkit_diag *diag)
{
	for (size_t st = 0; st < pu->n_steps; st++)
		for (size_t e = 0; e < E; e++) {
			const uint64_t *t = pu->values + st * 3 * E + 3 * e;
			row[4 * E + e]++;
			if (mpxkit_pcz_interval_not_counted(t)) {
				row[3 * E + e]++;
				continue;
			}
			/* lo <= v (the reader checked): a sum of the estimates that fits bounds
			 * the lows' */
			if (row[e] > UINT64_MAX - t[0])
				return mpxkit_fail(diag, MPXKIT_ERANGE,
						   "region %s, unit %s: a sum passes 2^64", region,
						   pu->name);
			row[e] += t[0];
			row[E + e] += t[1];
			row[2 * E + e] =
			    row[2 * E + e] > UINT64_MAX - t[2] ? UINT64_MAX : row[2 * E + e] + t[2];
		}
	return 0;
}

static int add_unit_sums(const summary *s, uint64_t *row, const mpxkit_pcz_unit *pu,
			 const char *region, mpxkit_diag *diag)
{
	size_t E = s->pub.n_events;

	return s->intervals ? add_intervals(row, pu, E, region, diag)
			    : add_counts(row, pu, E, region, diag);
}

/* One region into the sums: every region into "all", the chosen name (or stop.total) apart. */
static int add_region(summary *s, const mpxkit_pcz_region *reg, const char *region,
		      mpxkit_diag *diag)
{
	size_t W = s->W;
	int selected = region && strcmp(reg->name, region) == 0;
	int stop_total = strcmp(reg->name, "stop.total") == 0;

	for (size_t k = 0; k < reg->n_units; k++) {
		const mpxkit_pcz_unit *pu = &reg->units[k];
		size_t i = 0;
		int rc = find_unit(s, pu, &i, diag);
		if (rc == 0 && (selected || !region))
			rc = add_unit_sums(s, s->sum_all + i * W, pu, reg->name, diag);
		if (rc == 0 && stop_total && !region)
			rc = add_unit_sums(s, s->sum_stop_total + i * W, pu, reg->name, diag);
		if (rc < 0)
			return rc;
		s->units[i].seen_selected |= selected || !region;
		s->units[i].seen_stop_total |= stop_total;
		if (pu->cpu >= 0) /* the last placement known */
			s->units[i].cpu = pu->cpu;
		if (pu->numa >= 0)
			s->units[i].numa = pu->numa;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int imbalanced(double v, double median, double factor)
{
	if (median <= 0)
		return v > 0;
	return v > factor * median || v < median / factor;
}

/*
 * Spread of column e of counts (n rows of n_events) and the flags of its
 * members; scratch holds n values.
 */
static void spread(const uint64_t *counts, size_t n_rows, size_t E, size_t e, double factor,
		   const unsigned char *not_counted, uint64_t *scratch, mpxkit_job_spread *out,
		   unsigned char *flags)
{
	size_t n = 0;

	memset(out, 0, sizeof *out);
	/* A member that never counted the event has no count: it is in no spread. */
	for (size_t i = 0; i < n_rows; i++)
		if (!not_counted[i * E + e])
			scratch[n++] = counts[i * E + e];
	if (n == 0) {
		out->min = out->median = out->max = NAN;
		return;
	}
	qsort(scratch, n, sizeof *scratch, cmp_u64);
	out->min = (double)scratch[0];
	out->max = (double)scratch[n - 1];
	out->median = n % 2 ? (double)scratch[n / 2]
			    : ((double)scratch[n / 2 - 1] + (double)scratch[n / 2]) / 2;
	for (size_t i = 0; i < n_rows; i++) {
		flags[i * E + e] = !not_counted[i * E + e] &&
				   imbalanced((double)counts[i * E + e], out->median, factor);
		out->n_flagged += flags[i * E + e];
	}
}

static int by_rank_then_first(const void *pa, const void *pb, void *arg)
{
	const unit *units = arg;
	const unit *a = &units[*(const size_t *)pa], *b = &units[*(const size_t *)pb];

	if (a->rank != b->rank)
		return (a->rank > b->rank) - (a->rank < b->rank);
	return (a->first > b->first) - (a->first < b->first);
}

/* Unit k's bounds of event e, from its row of sums, into the job's; rank: k's. */
static void add_bounds(summary *s, const uint64_t *row, size_t k, size_t rank, size_t e)
{
	size_t E = s->pub.n_events;
	uint64_t nc = row[3 * E + e], steps = row[4 * E + e];

	s->total_lo[e] += row[E + e]; /* at most the estimates' sum */
	/* A step not counted could have held anything: nothing bounds the sum. */
	s->total_hi[e] = nc > 0 || s->total_hi[e] > UINT64_MAX - row[2 * E + e]
			     ? UINT64_MAX
			     : s->total_hi[e] + row[2 * E + e];
	s->not_counted[e] += nc;
	s->unit_nc[k * E + e] = steps > 0 && nc == steps;
	s->rank_nc[rank * E + e] &= s->unit_nc[k * E + e];
}

/* The units kept (those of the chosen regions), in rank order, their ranks and every figure. */
static int finish(summary *s, int use_stop_total, mpxkit_diag *diag)
{
	size_t E = s->pub.n_events, n = 0, nr = 0;
	const uint64_t *sums = use_stop_total ? s->sum_stop_total : s->sum_all;
	size_t *order = malloc((s->n_units ? s->n_units : 1) * sizeof *order);
	uint64_t *scratch;

	if (order == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t u = 0; u < s->n_units; u++)
		if (use_stop_total ? s->units[u].seen_stop_total : s->units[u].seen_selected)
			order[n++] = u;
	qsort_r(order, n, sizeof *order, by_rank_then_first, s->units);
	s->ranks = malloc((n ? n : 1) * sizeof *s->ranks);
	s->unit_rank = malloc((n ? n : 1) * sizeof *s->unit_rank);
	s->unit_names = malloc((n ? n : 1) * sizeof *s->unit_names);
	s->unit_cpu = malloc((n ? n : 1) * sizeof *s->unit_cpu);
	s->unit_numa = malloc((n ? n : 1) * sizeof *s->unit_numa);
	s->unit_counts = malloc((n ? n : 1) * E * sizeof *s->unit_counts);
	s->unit_flags = calloc((n ? n : 1) * E, 1);
	s->rank_counts = calloc((n ? n : 1) * E, sizeof *s->rank_counts);
	s->rank_flags = calloc((n ? n : 1) * E, 1);
	s->totals = calloc(E, sizeof *s->totals);
	s->total_lo = calloc(E, sizeof *s->total_lo);
	s->total_hi = calloc(E, sizeof *s->total_hi);
	s->not_counted = calloc(E, sizeof *s->not_counted);
	s->unit_nc = calloc((n ? n : 1) * E, 1);
	s->rank_nc = malloc((n ? n : 1) * E);
	s->unit_spread = calloc(E, sizeof *s->unit_spread);
	s->rank_spread = calloc(E, sizeof *s->rank_spread);
	scratch = malloc((n ? n : 1) * sizeof *scratch);
	if (!s->ranks || !s->unit_rank || !s->unit_names || !s->unit_cpu || !s->unit_numa ||
	    !s->unit_counts || !s->unit_flags || !s->rank_counts || !s->rank_flags || !s->totals ||
	    !s->unit_spread || !s->rank_spread || !scratch || !s->total_lo || !s->total_hi ||
	    !s->not_counted || !s->unit_nc || !s->rank_nc) {
		free(order);
		free(scratch);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	for (size_t k = 0; k < n; k++) {
		const unit *u = &s->units[order[k]];
		if (nr == 0 || s->ranks[nr - 1] != u->rank) {
			memset(s->rank_nc + nr * E, s->intervals, E);
			s->ranks[nr++] = u->rank;
		}
		s->unit_rank[k] = nr - 1;
		s->unit_names[k] = u->thread;
		s->unit_cpu[k] = u->cpu;
		s->unit_numa[k] = u->numa;
		for (size_t e = 0; e < E; e++) {
			const uint64_t *row = sums + order[k] * s->W;
			uint64_t v = row[e];
			s->unit_counts[k * E + e] = v;
			if (s->intervals)
				add_bounds(s, row, k, nr - 1, e);
			/* Each unit's sum fits; the job's may not. */
			if (s->totals[e] > UINT64_MAX - v) {
				free(order);
				free(scratch);
				return mpxkit_fail(diag, MPXKIT_ERANGE,
						   "event %s: the job's sum passes 2^64",
						   s->events[e]);
			}
			s->totals[e] += v;
			s->rank_counts[(nr - 1) * E + e] += v; /* at most the total */
		}
	}
	free(order);
	if (!s->intervals) { /* exact, or unknown: the totals themselves */
		memcpy(s->total_lo, s->totals, E * sizeof *s->totals);
		memcpy(s->total_hi, s->totals, E * sizeof *s->totals);
	}
	s->pub.n_ranks = nr;
	s->pub.n_units = n;
	for (size_t e = 0; e < E; e++) {
		spread(s->unit_counts, n, E, e, s->pub.factor, s->unit_nc, scratch,
		       &s->unit_spread[e], s->unit_flags);
		spread(s->rank_counts, nr, E, e, s->pub.factor, s->rank_nc, scratch,
		       &s->rank_spread[e], s->rank_flags);
	}
	free(scratch);
	return 0;
}

static void publish(summary *s)
{
	mpxkit_job_summary *p = &s->pub;

	p->events = (const char *const *)s->events;
	p->ranks = s->ranks;
	p->unit_rank = s->unit_rank;
	p->unit_names = s->unit_names;
	p->unit_cpu = s->unit_cpu;
	p->unit_numa = s->unit_numa;
	p->unit_counts = s->unit_counts;
	p->rank_counts = s->rank_counts;
	p->totals = s->totals;
	p->intervals = s->intervals;
	p->total_lo = s->total_lo;
	p->total_hi = s->total_hi;
	p->not_counted = s->not_counted;
	p->unit_not_counted = s->unit_nc;
	p->rank_not_counted = s->rank_nc;
	p->unit_spread = s->unit_spread;
	p->rank_spread = s->rank_spread;
	p->unit_flags = s->unit_flags;
	p->rank_flags = s->rank_flags;
}

/* Events copied and the file's kind (merged or one rank's) read from its metadata. */
static int start(summary *s, const mpxkit_pcz_reader *r, const char *path, mpxkit_diag *diag)
{
	const char *rank = job_meta_value(r, "job.rank");
	const char *level = job_meta_value(r, "interval_level");
	size_t E = mpxkit_pcz_reader_n_events(r), step = 1;

	s->merged = job_meta_value(r, "merge.ranks") != NULL;
	s->file_rank = rank ? strtol(rank, NULL, 10) : 0;
	if (s->file_rank < 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: job.rank=%s is not a rank", path,
				   rank);
	/* With intervals the summary's events are the estimates: every third column. */
	s->intervals = mpxkit_pcz_reader_intervals(r);
	if (s->intervals)
		E /= 3, step = 3;
	s->W = s->intervals ? 5 * E : E;
	s->pub.interval_level = level && s->intervals ? strtod(level, NULL) : NAN;
	s->events = calloc(E ? E : 1, sizeof *s->events);
	if (s->events == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t e = 0; e < E; e++) {
		if ((s->events[e] = strdup(mpxkit_pcz_reader_event(r, e * step))) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		s->pub.n_events++;
	}
	return 0;
}

int mpxkit_job_summarize(const char *path, const char *region, double factor,
			 mpxkit_job_summary **out, mpxkit_diag *diag)
{
	const mpxkit_pcz_region *reg;
	mpxkit_pcz_reader *r = NULL;
	size_t n_stop_total = 0, n_selected = 0;
	summary *s;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "summary: NULL argument");
	if (!(factor > 1) || isinf(factor))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "imbalance factor %g: must be above 1",
				   factor);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	s->pub.factor = factor;
	rc = mpxkit_pcz_reader_open(path, &r, diag);
	if (rc == 0)
		rc = start(s, r, path, diag);
	while (rc == 0 && (rc = mpxkit_pcz_reader_next(r, &reg, diag)) == 1) {
		n_stop_total += strcmp(reg->name, "stop.total") == 0;
		n_selected += region && strcmp(reg->name, region) == 0;
		rc = add_region(s, reg, region, diag);
	}
	if (rc == 0 && region && n_selected == 0)
		rc = mpxkit_fail(diag, MPXKIT_ENOENT, "%s: no region named %s", path, region);
	s->pub.regions = region ? region : n_stop_total ? "stop.total" : "all";
	if (rc == 0)
		rc = finish(s, !region && n_stop_total > 0, diag);
	mpxkit_pcz_reader_free(r);
	/* What reading needed; the units stay, their names are the published ones. */
	free(s->slots);
	free(s->sum_all);
	free(s->sum_stop_total);
	s->slots = NULL;
	s->sum_all = s->sum_stop_total = NULL;
	if (rc < 0) {
		mpxkit_job_summary_free(&s->pub);
		return rc;
	}
	publish(s);
	*out = &s->pub;
	return 0;
}

void mpxkit_job_summary_free(mpxkit_job_summary *p)
{
	summary *s = (summary *)p;

	if (s == NULL)
		return;
	for (size_t e = 0; e < s->pub.n_events; e++)
		free(s->events[e]);
	free(s->events);
	for (size_t u = 0; u < s->n_units; u++)
		free(s->units[u].name);
	free(s->units);
	free(s->slots);
	free(s->sum_all);
	free(s->sum_stop_total);
	free(s->ranks);
	free(s->unit_rank);
	free(s->unit_names);
	free(s->unit_cpu);
	free(s->unit_numa);
	free(s->unit_counts);
	free(s->unit_flags);
	free(s->rank_counts);
	free(s->rank_flags);
	free(s->totals);
	free(s->total_lo);
	free(s->total_hi);
	free(s->not_counted);
	free(s->unit_nc);
	free(s->rank_nc);
	free(s->unit_spread);
	free(s->rank_spread);
	free(s);
}

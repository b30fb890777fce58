/* SPDX-License-Identifier: BSD-3-Clause */
/* The dumps of a job's ranks merged into one .pcz, one input at a time (doc/mpi.md, "The merged
 * file"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/job.h"

/* What the first pass keeps of one input: small, so a thousand of them cost little. */
typedef struct input {
	const char *path;
	long rank;
	const char *launcher, *id, *size; /* into the meta strings, or NULL */
	size_t n_meta;
	char **keys, **values;
	int has_topology;
	uint64_t topology_hash;
} input;

typedef struct merge {
	size_t n;
	input *in;
	size_t n_events;
	char **events;
	const char *events_from; /* the input the event list was taken from */
	int intervals;		 /* the events are estimates with their bounds (all inputs') */
	size_t n_common;
	const char **common_keys, **common_values; /* into in[0]'s strings, in its order */
} merge;

static void input_free(input *x)
{
	for (size_t i = 0; i < x->n_meta; i++) {
		free(x->keys[i]);
		free(x->values[i]);
	}
	free(x->keys);
	free(x->values);
}

static void merge_free(merge *m)
{
	for (size_t i = 0; i < m->n; i++)
		input_free(&m->in[i]);
	free(m->in);
	for (size_t e = 0; e < m->n_events; e++)
		free(m->events[e]);
	free(m->events);
	free(m->common_keys);
	free(m->common_values);
}

/* FNV-1a: tells the hosts' topologies apart, no more. */
static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3u;
	return h ^ n;
}

static const char *input_meta(const input *x, const char *key)
{
	for (size_t i = 0; i < x->n_meta; i++)
		if (strcmp(x->keys[i], key) == 0)
			return x->values[i];
	return NULL;
}

static int copy_meta(input *x, const mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	size_t n = mpxkit_pcz_reader_n_meta(r);

	x->keys = calloc(n ? n : 1, sizeof *x->keys);
	x->values = calloc(n ? n : 1, sizeof *x->values);
	if (x->keys == NULL || x->values == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", x->path);
	for (size_t i = 0; i < n; i++) {
		const char *k, *v;
		mpxkit_pcz_reader_meta(r, i, &k, &v);
		x->keys[i] = strdup(k);
		x->values[i] = strdup(v);
		x->n_meta++;
		if (x->keys[i] == NULL || x->values[i] == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", x->path);
	}
	return 0;
}

/* The event list of the first input, or a check that another has the same. */
static int check_events(merge *m, const input *x, const mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	size_t n = mpxkit_pcz_reader_n_events(r);

	if (m->events == NULL) {
		m->events = calloc(n, sizeof *m->events);
		if (m->events == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", x->path);
		for (size_t e = 0; e < n; e++) {
			m->events[e] = strdup(mpxkit_pcz_reader_event(r, e));
			if (m->events[e] == NULL)
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory",
						   x->path);
			m->n_events++;
		}
		m->events_from = x->path;
		m->intervals = mpxkit_pcz_reader_intervals(r);
		return 0;
	}
	if (n != m->n_events)
		return mpxkit_fail(
		    diag, MPXKIT_EINVAL,
		    "%s has %zu events, %s has %zu: dumps with different event lists", x->path, n,
		    m->events_from, m->n_events);
	for (size_t e = 0; e < n; e++)
		if (strcmp(mpxkit_pcz_reader_event(r, e), m->events[e]) != 0)
			return mpxkit_fail(
			    diag, MPXKIT_EINVAL,
			    "%s: event %zu is %s, in %s it is %s: dumps with different "
			    "event lists",
			    x->path, e + 1, mpxkit_pcz_reader_event(r, e), m->events_from,
			    m->events[e]);
	if (mpxkit_pcz_reader_intervals(r) != m->intervals)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s %s intervals, %s %s: the columns would mean different things",
				   x->path, m->intervals ? "has no" : "has",
				   m->events_from, m->intervals ? "has" : "has none");
	return 0;
}

/* First pass over one input: its frame checked, what the merge needs of it kept. */
static int scan(merge *m, input *x, uint64_t *bytes, mpxkit_diag *diag)
{
	mpxkit_pcz_reader *r = NULL;
	mpxkit_pcz_stats st;
	const char *rank, *xml;
	char *end;
	size_t len;
	int rc = mpxkit_pcz_reader_open(x->path, &r, diag);

	if (rc < 0)
		return rc;
	rc = check_events(m, x, r, diag);
	if (rc == 0)
		rc = copy_meta(x, r, diag);
	mpxkit_pcz_reader_stats(r, &st);
	*bytes += st.file_size;
	xml = mpxkit_pcz_reader_topology(r, &len);
	x->has_topology = xml != NULL;
	x->topology_hash = xml ? hash_bytes(xml, len) : 0;
	mpxkit_pcz_reader_free(r);
	if (rc < 0)
		return rc;
	rank = input_meta(x, "job.rank");
	if (rank == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s: no job.rank in its metadata: not the dump of an MPI rank",
				   x->path);
	x->rank = rank[0] >= '0' && rank[0] <= '9' ? strtol(rank, &end, 10) : -1;
	if (x->rank < 0 || *end != '\0')
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: job.rank=%s is not a rank", x->path,
				   rank);
	x->launcher = input_meta(x, "job.launcher");
	x->id = input_meta(x, "job.id");
	x->size = input_meta(x, "job.size");
	return 0;
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int by_rank(const void *pa, const void *pb)
{
	const input *a = pa, *b = pb;

	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* One job: same launcher, id and size everywhere, and every rank once. */
static int check_job(merge *m, mpxkit_diag *diag)
{
	const input *a = &m->in[0];

	qsort(m->in, m->n, sizeof *m->in, by_rank);
	for (size_t i = 1; i < m->n; i++) {
		const input *b = &m->in[i];
		if (!same_text(a->launcher, b->launcher) || !same_text(a->id, b->id))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s is of job %s (%s), %s of job %s (%s): dumps of "
					   "different jobs",
					   b->path, b->id ? b->id : "without id",
					   b->launcher ? b->launcher : "no launcher", a->path,
					   a->id ? a->id : "without id",
					   a->launcher ? a->launcher : "no launcher");
		if (!same_text(a->size, b->size))
			return mpxkit_fail(
			    diag, MPXKIT_EINVAL,
			    "%s is from a job of %s ranks, %s of %s: dumps of different "
			    "jobs",
			    b->path, b->size ? b->size : "unknown", a->path,
			    a->size ? a->size : "unknown");
		if (b->rank == m->in[i - 1].rank)
			return mpxkit_fail(
			    diag, MPXKIT_EINVAL,
			    "%s and %s are both rank %ld: a rank's dump given twice, "
			    "or dumps of processes outside a launcher",
			    m->in[i - 1].path, b->path, b->rank);
	}
	if (a->size && m->in[m->n - 1].rank >= strtol(a->size, NULL, 10))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: rank %ld in a job of %s ranks",
				   m->in[m->n - 1].path, m->in[m->n - 1].rank, a->size);
	return 0;
}

static int has_pair(const input *x, const char *key, const char *value)
{
	for (size_t i = 0; i < x->n_meta; i++)
		if (strcmp(x->keys[i], key) == 0 && strcmp(x->values[i], value) == 0)
			return 1;
	return 0;
}

/* Pairs of the lowest rank that every input has as well; job.rank is never shared. */
static int find_common(merge *m, mpxkit_diag *diag)
{
	const input *a = &m->in[0];

	m->common_keys = calloc(a->n_meta ? a->n_meta : 1, sizeof *m->common_keys);
	m->common_values = calloc(a->n_meta ? a->n_meta : 1, sizeof *m->common_values);
	if (m->common_keys == NULL || m->common_values == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t k = 0; k < a->n_meta; k++) {
		int all = strcmp(a->keys[k], "job.rank") != 0;
		for (size_t i = 1; i < m->n && all; i++)
			all = has_pair(&m->in[i], a->keys[k], a->values[k]);
		if (all) {
			m->common_keys[m->n_common] = a->keys[k];
			m->common_values[m->n_common++] = a->values[k];
		}
	}
	return 0;
}

static int is_common(const merge *m, const char *key, const char *value)
{
	for (size_t c = 0; c < m->n_common; c++)
		if (strcmp(m->common_keys[c], key) == 0 && strcmp(m->common_values[c], value) == 0)
			return 1;
	return 0;
}

static size_t distinct_topologies(const merge *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		int seen = !m->in[i].has_topology;
		for (size_t j = 0; j < i && !seen; j++)
			seen = m->in[j].has_topology &&
			       m->in[j].topology_hash == m->in[i].topology_hash;
		n += !seen;
	}
	return n;
}

/* The merged file's metadata (doc/mpi.md): shared pairs, merge.*, topology.*, rank.R.KEY. */
static int write_meta(const merge *m, mpxkit_pcz_writer *w, int topology, mpxkit_diag *diag)
{
	char key[256], num[32];
	int rc = 0;

	for (size_t c = 0; c < m->n_common && rc >= 0; c++)
		rc = mpxkit_pcz_writer_set_meta(w, m->common_keys[c], m->common_values[c], diag);
	snprintf(num, sizeof num, "%zu", m->n);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "merge.ranks", num, diag);
	snprintf(num, sizeof num, "%ld", m->in[0].rank);
	if (rc >= 0 && topology)
		rc = mpxkit_pcz_writer_set_meta(w, "topology.rank", num, diag);
	snprintf(num, sizeof num, "%zu", distinct_topologies(m));
	if (rc >= 0 && topology)
		rc = mpxkit_pcz_writer_set_meta(w, "topology.distinct", num, diag);
	for (size_t i = 0; i < m->n && rc >= 0; i++) {
		const input *x = &m->in[i];
		for (size_t k = 0; k < x->n_meta && rc >= 0; k++) {
			if (strcmp(x->keys[k], "job.rank") == 0 ||
			    is_common(m, x->keys[k], x->values[k]))
				continue;
			snprintf(key, sizeof key, "rank.%ld.%s", x->rank, x->keys[k]);
			rc = mpxkit_pcz_writer_set_meta(w, key, x->values[k], diag);
		}
	}
	return rc;
}

/* The lowest rank's region names, in order, to check the other ranks against. */
typedef struct alignment {
	long rank;
	size_t n, cap;
	char **names;
} alignment;

static void alignment_free(alignment *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->names[i]);
	free(a->names);
}

static int alignment_add(alignment *a, const char *name)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		char **p = realloc(a->names, cap * sizeof *p);
		if (p == NULL)
			return -1;
		a->names = p;
		a->cap = cap;
	}
	if ((a->names[a->n] = strdup(name)) == NULL)
		return -1;
	a->n++;
	return 0;
}

/* Notes the first rank whose k-th region is not the lowest rank's k-th. */
static void note_misaligned(mpxkit_job_merge_result *res, long rank, size_t k, const char *name,
			    const alignment *a)
{
	if (res->n_misaligned++ > 0)
		return;
	res->misaligned_rank = rank;
	if (k < a->n && name)
		snprintf(res->misaligned_note, sizeof res->misaligned_note,
			 "rank %ld's region %zu is %s, rank %ld's is %s", rank, k + 1, name,
			 a->rank, a->names[k]);
	else if (name)
		snprintf(res->misaligned_note, sizeof res->misaligned_note,
			 "rank %ld has more regions than rank %ld's %zu", rank, a->rank, a->n);
	else
		snprintf(res->misaligned_note, sizeof res->misaligned_note,
			 "rank %ld has %zu regions, rank %ld has %zu", rank, k, a->rank, a->n);
}

/* Unit names of one region, rank<R>.<name>, in one buffer. */
typedef struct renamer {
	char *buf;
	size_t cap;
	mpxkit_pcz_unit *units;
	size_t cap_units;
} renamer;

static int rename_units(renamer *rn, long rank, const mpxkit_pcz_region *reg)
{
	size_t need = 0, at = 0;
	char prefix[32];
	int plen = snprintf(prefix, sizeof prefix, "rank%ld.", rank);

	for (size_t u = 0; u < reg->n_units; u++)
		need += (size_t)plen + strlen(reg->units[u].name) + 1;
	if (need > rn->cap) {
		char *b = realloc(rn->buf, need);
		if (b == NULL)
			return -1;
		rn->buf = b;
		rn->cap = need;
	}
	if (reg->n_units > rn->cap_units) {
		mpxkit_pcz_unit *u = realloc(rn->units, reg->n_units * sizeof *u);
		if (u == NULL)
			return -1;
		rn->units = u;
		rn->cap_units = reg->n_units;
	}
	for (size_t u = 0; u < reg->n_units; u++) {
		size_t n = strlen(reg->units[u].name) + 1;
		rn->units[u] = reg->units[u];
		rn->units[u].name = rn->buf + at;
		memcpy(rn->buf + at, prefix, (size_t)plen);
		memcpy(rn->buf + at + plen, reg->units[u].name, n);
		at += (size_t)plen + n;
	}
	return 0;
}

/* Second pass over one input: its regions, renamed, into the writer. */
static int copy_regions(const input *x, mpxkit_pcz_reader *r, mpxkit_pcz_writer *w, int first,
			alignment *al, renamer *rn, mpxkit_job_merge_result *res, mpxkit_diag *diag)
{
	const mpxkit_pcz_region *reg;
	size_t k = 0;
	int rc;

	while ((rc = mpxkit_pcz_reader_next(r, &reg, diag)) == 1) {
		if (first && alignment_add(al, reg->name) < 0)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		if (!first && (k >= al->n || strcmp(al->names[k], reg->name) != 0))
			note_misaligned(res, x->rank, k, reg->name, al);
		if (rename_units(rn, x->rank, reg) < 0)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		rc = mpxkit_pcz_writer_add_region(w, reg->name, reg->n_units, rn->units, diag);
		if (rc < 0)
			return rc;
		res->n_regions++;
		res->n_units += reg->n_units;
		k++;
	}
	if (rc == 0 && !first && k < al->n)
		note_misaligned(res, x->rank, k, NULL, al);
	return rc;
}

static int write_merged(merge *m, const char *out_path, const mpxkit_job_merge_options *opt,
			mpxkit_job_merge_result *res, mpxkit_diag *diag)
{
	mpxkit_pcz_options popt;
	mpxkit_pcz_writer *w = NULL;
	mpxkit_pcz_reader *r = NULL;
	alignment al = {m->in[0].rank, 0, 0, NULL};
	renamer rn = {0};
	const char *xml;
	size_t len;
	int rc;

	if (opt && opt->pcz) {
		popt = *opt->pcz;
	} else {
		mpxkit_pcz_options_init(&popt);
	}
	popt.placement = 1;
	popt.intervals = m->intervals;
	rc = mpxkit_pcz_reader_open(m->in[0].path, &r, diag);
	if (rc == 0)
		rc = mpxkit_pcz_writer_open(out_path, &popt, m->n_events,
					    (const char *const *)m->events, &w, diag);
	xml = r ? mpxkit_pcz_reader_topology(r, &len) : NULL;
	if (rc == 0)
		rc = write_meta(m, w, xml != NULL, diag);
	if (rc == 0 && xml)
		rc = mpxkit_pcz_writer_set_topology(w, xml, len, diag);
	for (size_t i = 0; rc == 0 && i < m->n; i++) {
		if (r == NULL)
			rc = mpxkit_pcz_reader_open(m->in[i].path, &r, diag);
		if (rc == 0)
			rc = copy_regions(&m->in[i], r, w, i == 0, &al, &rn, res, diag);
		mpxkit_pcz_reader_free(r);
		r = NULL;
		if (rc == 0 && opt && opt->progress)
			opt->progress(opt->progress_arg, i + 1, m->n);
	}
	mpxkit_pcz_reader_free(r);
	alignment_free(&al);
	free(rn.buf);
	free(rn.units);
	if (rc < 0) {
		mpxkit_pcz_writer_abort(w);
		return rc;
	}
	return mpxkit_pcz_writer_close(w, diag);
}

int mpxkit_job_merge(const char *out_path, size_t n_inputs, const char *const *inputs,
		     const mpxkit_job_merge_options *opt, mpxkit_job_merge_result *res,
		     mpxkit_diag *diag)
{
	mpxkit_job_merge_result local;
	merge m = {0};
	int rc = 0;

	if (out_path == NULL || inputs == NULL || n_inputs == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "merge: no input");
	if (res == NULL)
		res = &local;
	memset(res, 0, sizeof *res);
	res->misaligned_rank = -1;
	m.in = calloc(n_inputs, sizeof *m.in);
	if (m.in == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n_inputs && rc == 0; i++) {
		m.in[i].path = inputs[i];
		m.n++;
		rc = scan(&m, &m.in[i], &res->bytes_in, diag);
	}
	if (rc == 0)
		rc = check_job(&m, diag);
	if (rc == 0)
		rc = find_common(&m, diag);
	if (rc == 0)
		rc = write_merged(&m, out_path, opt, res, diag);
	if (rc == 0) {
		res->n_ranks = m.n;
		res->size = m.in[0].size ? strtol(m.in[0].size, NULL, 10) : 0;
	}
	merge_free(&m);
	return rc;
}

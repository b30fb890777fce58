/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-unit counter CSV to .pcz and back: the text side of mpxkit pack and unpack. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/reader.h"
#include "pcz_impl.h"

/* A unit being read: its steps grow row by row. */
struct csv_unit {
	char *name;
	size_t n_steps, cap_steps;
	uint64_t *times, *values;
	int cpu, numa;
};

struct csv_state {
	const char *path;
	mpxkit_reader *in;
	char *line;
	unsigned long lineno;
	mpxkit_diag *diag;
	size_t n_events;
	int placement;
	char **fields;
	size_t cap_fields;
	/* The region being read. */
	char *region;
	struct csv_unit *units;
	size_t n_units, cap_units;
	pcz_dict names;
	mpxkit_pcz_unit *view;
	size_t cap_view;
	uint64_t *row;
};

__attribute__((format(printf, 3, 4))) static int csv_fail(struct csv_state *s, int code,
							  const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return mpxkit_fail(s->diag, code, "%s:%lu: %s", s->path, s->lineno, msg);
}

/* Next line without its LF: 1, 0 at EOF, or a negative code. */
static int next_line(struct csv_state *s, size_t *len)
{
	size_t n;
	int rc = mpxkit_reader_line(s->in, &s->line, &n, s->diag);

	if (rc <= 0)
		return rc;
	s->lineno++;
	if (n > 0 && s->line[n - 1] == '\r')
		return csv_fail(s, MPXKIT_EFORMAT, "CR line ending; use LF");
	*len = n;
	return 1;
}

/* Splits the line at commas in place; the field count, or a negative code. */
static int split(struct csv_state *s, size_t *n_out)
{
	size_t n = 0;
	char *p = s->line;

	for (;;) {
		char *comma = strchr(p, ',');
		if (n == s->cap_fields) {
			size_t cap = s->cap_fields ? 2 * s->cap_fields : 16;
			char **f = realloc(s->fields, cap * sizeof *f);
			if (f == NULL)
				return -MPXKIT_ENOMEM;
			s->fields = f;
			s->cap_fields = cap;
		}
		s->fields[n++] = p;
		if (comma == NULL)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	*n_out = n;
	return 0;
}

static int parse_u64(const char *t, uint64_t *out)
{
	uint64_t v = 0;

	if (*t == '\0')
		return -MPXKIT_EFORMAT;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return -MPXKIT_EFORMAT;
		if (v > (UINT64_MAX - (uint64_t)(*t - '0')) / 10)
			return -MPXKIT_ERANGE;
		v = v * 10 + (uint64_t)(*t - '0');
	}
	*out = v;
	return 0;
}

static int parse_place(const char *t, int *out)
{
	uint64_t v;
	int rc;

	if (strcmp(t, "-1") == 0) {
		*out = -1;
		return 0;
	}
	rc = parse_u64(t, &v);
	if (rc == 0 && v > INT_MAX)
		rc = -MPXKIT_ERANGE;
	if (rc == 0)
		*out = (int)v;
	return rc;
}

static void free_units(struct csv_state *s)
{
	for (size_t u = 0; u < s->n_units; u++) {
		free(s->units[u].name);
		free(s->units[u].times);
		free(s->units[u].values);
	}
	s->n_units = 0;
	pcz_dict_free(&s->names);
	free(s->region);
	s->region = NULL;
}

static int flush_region(struct csv_state *s, mpxkit_pcz_writer *w)
{
	int rc;

	if (s->region == NULL)
		return 0;
	if (s->n_units > s->cap_view) {
		mpxkit_pcz_unit *v = realloc(s->view, s->n_units * sizeof *v);
		if (v == NULL)
			return -MPXKIT_ENOMEM;
		s->view = v;
		s->cap_view = s->n_units;
	}
	for (size_t u = 0; u < s->n_units; u++) {
		struct csv_unit *x = &s->units[u];
		s->view[u] = (mpxkit_pcz_unit){ x->name, x->n_steps, x->times, x->values, x->cpu,
						x->numa };
	}
	rc = mpxkit_pcz_writer_add_region(w, s->region, s->n_units, s->view, s->diag);
	if (rc < 0 && s->diag) {
		char msg[MPXKIT_DIAG_MAX];
		snprintf(msg, sizeof msg, "%s", s->diag->msg);
		mpxkit_fail(s->diag, -rc, "%s:%lu: %s", s->path, s->lineno - 1, msg);
	}
	free_units(s);
	return rc;
}

static int add_step(struct csv_state *s, struct csv_unit *x, const uint64_t *row)
{
	size_t E = s->n_events;

	if (x->n_steps == x->cap_steps) {
		size_t cap = x->cap_steps ? 2 * x->cap_steps : 1;
		uint64_t *t = realloc(x->times, 2 * cap * sizeof *t), *v;
		if (t == NULL)
			return -MPXKIT_ENOMEM;
		x->times = t;
		v = realloc(x->values, cap * E * sizeof *v);
		if (v == NULL)
			return -MPXKIT_ENOMEM;
		x->values = v;
		x->cap_steps = cap;
	}
	x->times[2 * x->n_steps] = row[0];
	x->times[2 * x->n_steps + 1] = row[1];
	memcpy(x->values + x->n_steps * E, row + 2, E * sizeof *row);
	x->n_steps++;
	return 0;
}

/* The unit a row belongs to: the last one (another step), or a new one. */
static int row_unit(struct csv_state *s, const char *unit, int cpu, int numa,
		    struct csv_unit **out)
{
	struct csv_unit *x = NULL;
	size_t len = strlen(unit);

	if (s->n_units > 0 && strcmp(s->units[s->n_units - 1].name, unit) == 0) {
		x = &s->units[s->n_units - 1];
		if (x->cpu != cpu || x->numa != numa)
			return csv_fail(s, MPXKIT_EFORMAT,
					"cpu or numa changes within the series of unit '%s'", unit);
		*out = x;
		return 0;
	}
	if (pcz_dict_find(&s->names, unit, len) != SIZE_MAX)
		return csv_fail(s, MPXKIT_EFORMAT,
				"unit '%s' appears twice in region '%s' (a unit's rows must be "
				"consecutive)",
				unit, s->region);
	if (pcz_dict_add(&s->names, unit, len) == SIZE_MAX)
		return -MPXKIT_ENOMEM;
	if (s->n_units == s->cap_units) {
		size_t cap = s->cap_units ? 2 * s->cap_units : 16;
		struct csv_unit *u = realloc(s->units, cap * sizeof *u);
		if (u == NULL)
			return -MPXKIT_ENOMEM;
		s->units = u;
		s->cap_units = cap;
	}
	x = &s->units[s->n_units];
	memset(x, 0, sizeof *x);
	x->name = strdup(unit);
	if (x->name == NULL)
		return -MPXKIT_ENOMEM;
	s->n_units++;
	x->cpu = cpu;
	x->numa = numa;
	*out = x;
	return 0;
}

static int read_row(struct csv_state *s, mpxkit_pcz_writer *w)
{
	size_t n, first = s->placement ? 6 : 4;
	int cpu = -1, numa = -1, rc = split(s, &n);
	struct csv_unit *x = NULL;

	if (rc < 0)
		return rc;
	if (n != first + s->n_events)
		return csv_fail(s, MPXKIT_EFORMAT, "%zu fields, the header has %zu", n,
				first + s->n_events);
	if (!pcz_name_ok(s->fields[0], strlen(s->fields[0])) ||
	    !pcz_name_ok(s->fields[1], strlen(s->fields[1])))
		return csv_fail(s, MPXKIT_EFORMAT, "empty region or unit name, or a quote in it");
	for (size_t i = 2; i < n; i++) {
		size_t at = i < 4 ? i - 2 : i >= first ? i - first + 2 : 0;
		const char *col = i < 4 ? (i == 2 ? "start_ns" : "end_ns") : NULL;
		if (i >= 4 && i < first)
			rc = parse_place(s->fields[i], i == 4 ? &cpu : &numa);
		else
			rc = parse_u64(s->fields[i], &s->row[at]);
		if (rc < 0)
			return csv_fail(s, -rc, "field %zu (%s): '%s' is not %s", i + 1,
					col ? col : i < first ? (i == 4 ? "cpu" : "numa") : "counter",
					s->fields[i],
					rc == -MPXKIT_ERANGE ? "below 2^64 (or 2^31 for cpu and numa)"
							     : "a whole decimal number");
	}
	if (s->region == NULL || strcmp(s->region, s->fields[0]) != 0) {
		rc = flush_region(s, w);
		if (rc < 0)
			return rc;
		s->region = strdup(s->fields[0]);
		if (s->region == NULL)
			return -MPXKIT_ENOMEM;
	}
	rc = row_unit(s, s->fields[1], cpu, numa, &x);
	if (rc == 0 && x->n_steps >= PCZ_MAX_STEPS)
		rc = csv_fail(s, MPXKIT_ERANGE, "more than %u steps in one block", PCZ_MAX_STEPS);
	if (rc == 0)
		rc = add_step(s, x, s->row);
	return rc;
}

static int parse_header(struct csv_state *s, size_t *n_fields)
{
	static const char *const fixed[] = { "region", "unit", "start_ns", "end_ns" };
	size_t n;
	int rc = split(s, &n);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < 4; i++)
		if (i >= n || strcmp(s->fields[i], fixed[i]) != 0)
			return csv_fail(s, MPXKIT_EFORMAT,
					"header must start with region,unit,start_ns,end_ns");
	s->placement = n >= 6 && strcmp(s->fields[4], "cpu") == 0 &&
		       strcmp(s->fields[5], "numa") == 0;
	if (n <= (size_t)(s->placement ? 6 : 4))
		return csv_fail(s, MPXKIT_EFORMAT, "header names no event");
	*n_fields = n;
	return 0;
}

/* Metadata lines, then the header: opens the writer once the events are known. */
static int read_head(struct csv_state *s, const char *out_path, const mpxkit_pcz_options *opt,
		     const char *topology_xml, mpxkit_pcz_writer **w)
{
	char **keys = NULL, **values = NULL;
	size_t n_meta = 0, len, n_fields = 0;
	char why[200]; /* why the columns are no triples: then plain columns */
	mpxkit_pcz_options o;
	int rc;

	for (;;) {
		char *eq, **k, **v;
		rc = next_line(s, &len);
		if (rc == 0) {
			s->lineno++;
			rc = csv_fail(s, MPXKIT_EFORMAT, "no header line");
		}
		if (rc < 0)
			goto out;
		if (s->line[0] != '#')
			break;
		eq = strchr(s->line, '=');
		if (strncmp(s->line, "# ", 2) != 0 || eq == NULL ||
		    !pcz_meta_key_ok(s->line + 2, (size_t)(eq - s->line - 2))) {
			rc = csv_fail(s, MPXKIT_EFORMAT, "metadata line must be '# key=value'");
			goto out;
		}
		k = realloc(keys, (n_meta + 1) * sizeof *k);
		if (k)
			keys = k;
		v = realloc(values, (n_meta + 1) * sizeof *v);
		if (v)
			values = v;
		rc = -MPXKIT_ENOMEM;
		if (!k || !v)
			goto out;
		*eq = '\0';
		keys[n_meta] = strdup(s->line + 2);
		values[n_meta] = strdup(eq + 1);
		n_meta++;
		if (!keys[n_meta - 1] || !values[n_meta - 1])
			goto out;
	}
	rc = parse_header(s, &n_fields);
	if (rc < 0)
		goto out;
	o = *opt;
	o.placement = s->placement;
	s->n_events = n_fields - (s->placement ? 6 : 4);
	/* Columns named as triples are estimates with their intervals (doc/pcz-format.md, "CSV"). */
	o.intervals = o.codec == MPXKIT_PCZ_MODEL &&
		      pcz_interval_names_ok(s->n_events,
					    (const char *const *)s->fields + (s->placement ? 6 : 4),
					    why, sizeof why);
	s->row = malloc((2 + s->n_events) * sizeof *s->row);
	rc = -MPXKIT_ENOMEM;
	if (s->row == NULL)
		goto out;
	rc = mpxkit_pcz_writer_open(out_path, &o, s->n_events,
				    (const char *const *)s->fields + (s->placement ? 6 : 4), w,
				    s->diag);
	if (rc < 0) {
		if (rc != -MPXKIT_ESYS && rc != -MPXKIT_EPERM && s->diag)
			rc = csv_fail(s, -rc, "%s", s->diag->msg);
		goto out;
	}
	for (size_t i = 0; i < n_meta && rc == 0; i++)
		rc = mpxkit_pcz_writer_set_meta(*w, keys[i], values[i], s->diag);
	if (rc == 0 && topology_xml)
		rc = mpxkit_pcz_writer_set_topology(*w, *topology_xml ? topology_xml : NULL,
						    strlen(topology_xml), s->diag);
out:
	for (size_t i = 0; i < n_meta; i++) {
		free(keys[i]);
		free(values[i]);
	}
	free(keys);
	free(values);
	return rc;
}

int mpxkit_pcz_pack_csv(const char *in_path, const char *out_path, const mpxkit_pcz_options *opt,
			const char *topology_xml, mpxkit_diag *diag)
{
	/* Streamed region by region: the line bound is the memory bound.  Gzip, as the traces. */
	mpxkit_reader_options reader_opt = { .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP,
					     .what = "counter CSV" };
	struct csv_state s = { .path = in_path, .diag = diag };
	mpxkit_pcz_writer *w = NULL;
	mpxkit_pcz_options defaults;
	size_t len;
	int rc;

	if (in_path == NULL || out_path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pack: NULL argument");
	if (opt == NULL) {
		mpxkit_pcz_options_init(&defaults);
		opt = &defaults;
	}
	rc = mpxkit_reader_open(&s.in, in_path, &reader_opt, diag);
	if (rc < 0)
		return rc;
	s.path = mpxkit_reader_name(s.in);
	rc = read_head(&s, out_path, opt, topology_xml, &w);
	while (rc == 0) {
		rc = next_line(&s, &len);
		if (rc <= 0)
			break;
		if (len == 0)
			rc = csv_fail(&s, MPXKIT_EFORMAT, "empty line");
		else if (s.line[0] == '#')
			rc = csv_fail(&s, MPXKIT_EFORMAT, "metadata line after the header");
		else
			rc = read_row(&s, w);
	}
	if (rc == 0) {
		s.lineno++;
		rc = flush_region(&s, w);
	}
	if (rc == 0) {
		rc = mpxkit_pcz_writer_close(w, diag);
		w = NULL;
	}
	mpxkit_pcz_writer_abort(w);
	free_units(&s);
	free(s.units);
	free(s.view);
	free(s.fields);
	free(s.row);
	mpxkit_reader_close(s.in);
	return rc;
}

static int print_u64s(FILE *out, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fprintf(out, ",%" PRIu64, v[i]) < 0)
			return -1;
	return 0;
}

int mpxkit_pcz_write_csv(mpxkit_pcz_reader *r, FILE *out, mpxkit_diag *diag)
{
	size_t E = mpxkit_pcz_reader_n_events(r);
	int placement = mpxkit_pcz_reader_placement(r), rc = 0, io = 0;
	const mpxkit_pcz_region *reg;

	for (size_t i = 0; i < mpxkit_pcz_reader_n_meta(r); i++) {
		const char *k, *v;
		mpxkit_pcz_reader_meta(r, i, &k, &v);
		io |= fprintf(out, "# %s=%s\n", k, v) < 0;
	}
	io |= fputs(placement ? "region,unit,start_ns,end_ns,cpu,numa" : "region,unit,start_ns,end_ns",
		    out) < 0;
	for (size_t e = 0; e < E; e++)
		io |= fprintf(out, ",%s", mpxkit_pcz_reader_event(r, e)) < 0;
	io |= fputc('\n', out) < 0;
	while (!io && (rc = mpxkit_pcz_reader_next(r, &reg, diag)) == 1) {
		for (size_t u = 0; u < reg->n_units && !io; u++) {
			const mpxkit_pcz_unit *x = &reg->units[u];
			for (size_t s = 0; s < x->n_steps && !io; s++) {
				io |= fprintf(out, "%s,%s,%" PRIu64 ",%" PRIu64, reg->name, x->name,
					      x->times[2 * s], x->times[2 * s + 1]) < 0;
				if (placement)
					io |= fprintf(out, ",%d,%d", x->cpu, x->numa) < 0;
				io |= print_u64s(out, x->values + s * E, E) != 0;
				io |= fputc('\n', out) < 0;
			}
		}
	}
	if (io)
		return mpxkit_fail_sys(diag, "cannot write the CSV");
	return rc;
}

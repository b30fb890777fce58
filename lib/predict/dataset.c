/* SPDX-License-Identifier: BSD-3-Clause */
/* The predict dataset in memory and its CSV reader and writer (doc/predict-format.md). */
#define _GNU_SOURCE /* fmemopen, open_memstream */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/outfile.h"
#include "mpxkit/reader.h"

#include "predict_impl.h"

static const char *const role_names[MPXKIT_ROLE_COUNT] = {
    "cycles", "instructions", "misses",	  "icache",  "dcache",
    "loads",  "stores",	      "branches", "int_ops", "fp_ops",
};

static const char fixed_header[] = "workload,core,freq_mhz,threads,run,sample,time_s,power_w,"
				   "voltage_v";
enum { N_FIXED = 9 };

const char *mpxkit_role_name(int role)
{
	return role >= 0 && role < MPXKIT_ROLE_COUNT ? role_names[role] : NULL;
}

int mpxkit_role_lookup(const char *name)
{
	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++)
		if (strcmp(name, role_names[r]) == 0)
			return r;
	return -MPXKIT_ENOENT;
}

/* ---- fields -----------------------------------------------------------------------------------
 */

int mpxkit__pd_real(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	double v;

	if (len == 0 || len >= sizeof buf)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789.eE+-", s[i]) || s[i] == '\0')
			return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end != buf + len || !isfinite(v) || (errno == ERANGE && fabs(v) > 1))
		return -1;
	*out = v;
	return 0;
}

int mpxkit__pd_whole(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (max - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int mpxkit__pd_valid_name(const char *s, size_t len, int allow_blank)
{
	if (len == 0 || len >= MPXKIT_PDATA_MAX_NAME)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < ' ' || c == 0x7f || c == ',' || c == '"' || (c == ' ' && !allow_blank))
			return 0;
	}
	return 1;
}

void *mpxkit__pd_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *p;

	if (n < *cap)
		return arr;
	if (c > SIZE_MAX / elem || (p = realloc(arr, c * elem)) == NULL)
		return NULL;
	*cap = c;
	return p;
}

int mpxkit__pd_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int valid_meta_key(const char *key)
{
	if (*key == '\0')
		return 0;
	for (const char *p = key; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			return 0;
	return 1;
}

/* ---- construction -----------------------------------------------------------------------------
 */

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void mpxkit_pdata_free(mpxkit_pdata *d)
{
	if (d == NULL)
		return;
	free(d->name);
	free_names(d->events, d->n_events);
	free_names(d->workloads, d->n_workloads);
	free_names(d->cores, d->n_cores);
	free_names(d->meta_keys, d->n_meta);
	free_names(d->meta_values, d->n_meta);
	free(d->rows);
	free(d->values);
	free(d);
}

int mpxkit_pdata_new(mpxkit_pdata **out, const char *name, int time_kind, const char *const *events,
		     size_t n_events, mpxkit_diag *diag)
{
	mpxkit_pdata *d;

	if (out == NULL || name == NULL || (n_events && events == NULL) ||
	    (time_kind != MPXKIT_TIME_ELAPSED && time_kind != MPXKIT_TIME_WINDOW))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict dataset: bad argument");
	if (!mpxkit__pd_valid_name(name, strlen(name), 1))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "dataset name '%.64s': empty, too long or "
				   "holds a comma, quote or control byte",
				   name);
	if (n_events > MPXKIT_PDATA_MAX_EVENTS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%zu events: at most %d", n_events,
				   MPXKIT_PDATA_MAX_EVENTS);
	for (size_t e = 0; e < n_events; e++) {
		if (!mpxkit__pd_valid_name(events[e], strlen(events[e]), 0))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "event %zu: name is empty, too long or holds a comma, "
					   "quote, blank or control byte",
					   e + 1);
		for (size_t k = 0; k < e; k++)
			if (strcmp(events[k], events[e]) == 0)
				return mpxkit_fail(diag, MPXKIT_EINVAL, "duplicate event name '%s'",
						   events[e]);
	}
	if ((d = calloc(1, sizeof *d)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	d->time_kind = time_kind;
	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++)
		d->role[r] = -1;
	if ((d->name = strdup(name)) == NULL ||
	    (n_events && (d->events = calloc(n_events, sizeof *d->events)) == NULL))
		goto oom;
	for (; d->n_events < n_events; d->n_events++)
		if ((d->events[d->n_events] = strdup(events[d->n_events])) == NULL)
			goto oom;
	*out = d;
	return 0;
oom:
	mpxkit_pdata_free(d);
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
}

int mpxkit_pdata_set_role(mpxkit_pdata *d, int role, int column, mpxkit_diag *diag)
{
	if (role < 0 || role >= MPXKIT_ROLE_COUNT || column < -1 ||
	    (column >= 0 && (size_t)column >= d->n_events))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "role %d, column %d: out of range", role,
				   column);
	d->role[role] = column;
	return 0;
}

int mpxkit_pdata_set_meta(mpxkit_pdata *d, const char *key, const char *value, mpxkit_diag *diag)
{
	char *k, *v, **keys, **values;

	if (!valid_meta_key(key) || strpbrk(value, "\r\n"))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "metadata '%.64s': bad key or value", key);
	for (size_t i = 0; i < d->n_meta; i++)
		if (strcmp(d->meta_keys[i], key) == 0) {
			if ((v = strdup(value)) == NULL)
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
			free(d->meta_values[i]);
			d->meta_values[i] = v;
			return 0;
		}
	keys = realloc(d->meta_keys, (d->n_meta + 1) * sizeof *keys);
	if (keys)
		d->meta_keys = keys;
	values = realloc(d->meta_values, (d->n_meta + 1) * sizeof *values);
	if (values)
		d->meta_values = values;
	k = strdup(key);
	v = strdup(value);
	if (!keys || !values || !k || !v) {
		free(k);
		free(v);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	d->meta_keys[d->n_meta] = k;
	d->meta_values[d->n_meta++] = v;
	return 0;
}

const char *mpxkit_pdata_get_meta(const mpxkit_pdata *d, const char *key)
{
	for (size_t i = 0; i < d->n_meta; i++)
		if (strcmp(d->meta_keys[i], key) == 0)
			return d->meta_values[i];
	return NULL;
}

static int find_name(char *const *names, size_t n, const char *name)
{
	for (size_t i = n; i-- > 0;) /* newest first: rows come grouped by name */
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -MPXKIT_ENOENT;
}

int mpxkit_pdata_workload(const mpxkit_pdata *d, const char *name)
{
	return find_name(d->workloads, d->n_workloads, name);
}

int mpxkit_pdata_core(const mpxkit_pdata *d, const char *name)
{
	return find_name(d->cores, d->n_cores, name);
}

int mpxkit_pdata_event(const mpxkit_pdata *d, const char *name)
{
	return find_name(d->events, d->n_events, name);
}

/* The index of a name in a growing list, added when new; -1 when out of memory. */
static long intern(char ***names, size_t *n, size_t *cap, const char *name)
{
	int i = find_name(*names, *n, name);
	char *copy;

	if (i >= 0)
		return i;
	if (*n >= UINT32_MAX)
		return -1;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **p = realloc(*names, c * sizeof *p);
		if (p == NULL)
			return -1;
		*names = p;
		*cap = c;
	}
	if ((copy = strdup(name)) == NULL)
		return -1;
	(*names)[*n] = copy;
	return (long)(*n)++;
}

static int reserve_rows(mpxkit_pdata *d)
{
	size_t cap;
	mpxkit_pdata_row *rows;
	double *values;

	if (d->n_rows < d->cap_rows)
		return 0;
	cap = d->cap_rows ? d->cap_rows * 2 : 64;
	if (cap > SIZE_MAX / sizeof *rows ||
	    (d->n_events && cap > SIZE_MAX / sizeof *values / d->n_events))
		return -1;
	if ((rows = realloc(d->rows, cap * sizeof *rows)) == NULL)
		return -1;
	d->rows = rows;
	if (d->n_events) {
		if ((values = realloc(d->values, cap * d->n_events * sizeof *values)) == NULL)
			return -1;
		d->values = values;
	}
	d->cap_rows = cap;
	return 0;
}

/* NULL when the row is valid, else which field is not. */
static const char *bad_field(const mpxkit_pdata_row *r, const double *v, size_t n_events)
{
	if (!(r->freq_mhz > 0) || !isfinite(r->freq_mhz))
		return "freq_mhz must be a number > 0";
	if (r->threads < 1)
		return "threads must be >= 1";
	if (r->sample < -1)
		return "sample must be >= 0 or missing";
	if (!isnan(r->time_s) && (!(r->time_s > 0) || !isfinite(r->time_s)))
		return "time_s must be > 0 or missing";
	if (!isnan(r->power_w) && (!(r->power_w >= 0) || !isfinite(r->power_w)))
		return "power_w must be >= 0 or missing";
	if (!isnan(r->voltage_v) && (!(r->voltage_v > 0) || !isfinite(r->voltage_v)))
		return "voltage_v must be > 0 or missing";
	for (size_t e = 0; e < n_events; e++)
		if (!isnan(v[e]) && (!(v[e] >= 0) || !isfinite(v[e])))
			return "an event count must be >= 0 or missing";
	return NULL;
}

/*
 * Values no machine gives, which one row of many would otherwise carry into
 * every fit and score (issue 25: one CPU_CYCLES = 1e30 in 180 rows moved the
 * time MAPE from 7.7 % to 36.6 %): NULL, or the reason in buf.  The limits
 * are in doc/predict-format.md, "Plausibility".
 */
static const char *implausible(const mpxkit_pdata *d, const mpxkit_pdata_row *r, const double *v,
			       char *buf, size_t cap)
{
	int c = d->role[MPXKIT_ROLE_CYCLES];

	if (r->freq_mhz < MPXKIT_PDATA_MIN_MHZ || r->freq_mhz > MPXKIT_PDATA_MAX_MHZ) {
		snprintf(buf, cap, "freq_mhz %g: outside the plausible %g to %g MHz", r->freq_mhz,
			 MPXKIT_PDATA_MIN_MHZ, MPXKIT_PDATA_MAX_MHZ);
		return buf;
	}
	for (size_t e = 0; e < d->n_events; e++)
		if (!isnan(v[e]) && v[e] >= 0x1p63) {
			snprintf(buf, cap,
				 "%.64s = %.17g: 2^63 or more, a counter that wrapped (or a "
				 "negative count read as unsigned)",
				 d->events[e], v[e]);
			return buf;
		}
	if (d->time_kind == MPXKIT_TIME_ELAPSED && c >= 0 && !isnan(r->time_s) && !isnan(v[c])) {
		double most =
		    r->freq_mhz * 1e6 * r->time_s * r->threads * MPXKIT_PDATA_CYCLE_MARGIN;
		if (v[c] > most) {
			snprintf(buf, cap,
				 "%.64s = %.15g cycles in %g s at %g MHz on %u thread%s: more than "
				 "%.15g "
				 "(freq x time x threads x %g)",
				 d->events[c], v[c], r->time_s, r->freq_mhz, r->threads,
				 r->threads == 1 ? "" : "s", most, MPXKIT_PDATA_CYCLE_MARGIN);
			return buf;
		}
	}
	return NULL;
}

int mpxkit_pdata_append(mpxkit_pdata *d, const char *workload, const char *core,
			const mpxkit_pdata_row *row, const double *values, mpxkit_diag *diag)
{
	char reason[320];
	const char *why;
	long w, c;
	mpxkit_pdata_row r = *row;

	if (!mpxkit__pd_valid_name(workload, strlen(workload), 1) ||
	    !mpxkit__pd_valid_name(core, strlen(core), 1))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "workload or core name '%.64s'/'%.64s': "
				   "empty, too long, or holds a comma, quote or control byte",
				   workload, core);
	if ((why = bad_field(row, values, d->n_events)) != NULL ||
	    (why = implausible(d, row, values, reason, sizeof reason)) != NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "row of %.64s: %s", workload, why);
	if (reserve_rows(d) < 0 ||
	    (w = intern(&d->workloads, &d->n_workloads, &d->cap_names[0], workload)) < 0 ||
	    (c = intern(&d->cores, &d->n_cores, &d->cap_names[1], core)) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	r.workload = (uint32_t)w;
	r.core = (uint32_t)c;
	d->rows[d->n_rows] = r;
	if (d->n_events)
		memcpy(d->values + d->n_rows * d->n_events, values, d->n_events * sizeof *values);
	d->n_rows++;
	return 0;
}

/* ---- reading ----------------------------------------------------------------------------------
 */

int mpxkit__pd_each_line(const char *name, const char *path, const char *buf, size_t len,
			 uint64_t max_bytes, const char *what, mpxkit__pd_line_fn fn, void *arg,
			 mpxkit_diag *diag)
{
	mpxkit_reader_options ro = {
	    .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP, .max_bytes = max_bytes, .what = what};
	mpxkit_reader *r = NULL;
	FILE *mem = NULL;
	char *line;
	size_t line_len;
	int rc;

	if (buf) {
		/* Text in memory is plain: gzip is told from a descriptor, which memory has not. */
		ro.flags = MPXKIT_READER_TEXT;
		/* fmemopen refuses a zero length: an empty buffer is an empty input. */
		if ((mem = fmemopen((void *)(len ? buf : ""), len ? len : 1, "r")) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
		if (len == 0)
			fgetc(mem);
		rc = mpxkit_reader_from_stream(&r, mem, name, &ro, diag);
	} else {
		rc = mpxkit_reader_open(&r, path, &ro, diag);
	}
	while (rc >= 0 && (rc = mpxkit_reader_line(r, &line, &line_len, diag)) == 1) {
		if (line_len && line[line_len - 1] == '\r')
			line_len--;
		rc = fn(arg, line, line_len, mpxkit_reader_lineno(r), diag);
	}
	mpxkit_reader_close(r);
	if (mem)
		fclose(mem);
	return rc < 0 ? rc : 0;
}

typedef struct parser {
	const char *name;
	mpxkit_pdata *d;
	int state; /* 0: first line, 1: metadata, 2: rows */
	char *role_text[MPXKIT_ROLE_COUNT];
	uint64_t role_line[MPXKIT_ROLE_COUNT];
	double *values;
	int have_name, have_time;
} parser;

static int bad(const parser *p, uint64_t line, mpxkit_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(const parser *p, uint64_t line, mpxkit_diag *diag, const char *fmt, ...)
{
	char why[360];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%llu: %s", p->name, (unsigned long long)line,
			   why);
}

/* "# key=value" into key and value (in a scratch copy); -1 when it is not that shape. */
static int split_meta(const char *line, size_t len, char *scratch, char **key, char **value)
{
	size_t i = 1;
	char *eq;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	memcpy(scratch, line + i, len - i);
	scratch[len - i] = '\0';
	if ((eq = strchr(scratch, '=')) == NULL)
		return -1;
	*eq = '\0';
	*key = scratch;
	*value = eq + 1;
	return valid_meta_key(scratch) ? 0 : -1;
}

static int parse_meta(parser *p, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	char *scratch = malloc(len + 1), *key, *value;
	int rc = 0, role;

	if (scratch == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (split_meta(line, len, scratch, &key, &value) < 0) {
		rc = bad(p, no, diag, "bad metadata line: expected '# key=value'");
	} else if (p->state == 0) {
		if (strcmp(key, "mpxkit-predict") != 0)
			rc = bad(p, no, diag,
				 "not a predict dataset: the first line must be "
				 "'# mpxkit-predict=1'");
		else if (strcmp(value, "1") != 0)
			rc = bad(p, no, diag,
				 "predict dataset version '%.32s': this build reads "
				 "version 1",
				 value);
	} else if (mpxkit_pdata_get_meta(p->d, key) ||
		   (strcmp(key, "dataset") == 0 && p->have_name) ||
		   (strcmp(key, "time") == 0 && p->have_time) ||
		   strcmp(key, "mpxkit-predict") == 0) {
		rc = bad(p, no, diag, "duplicate metadata key '%.64s'", key);
	} else if (strcmp(key, "dataset") == 0) {
		if (!mpxkit__pd_valid_name(value, strlen(value), 1)) {
			rc = bad(p, no, diag,
				 "dataset name: empty, too long, or holds a comma, "
				 "quote or control byte");
		} else {
			char *copy = strdup(value);
			if (copy == NULL) {
				rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
			} else {
				free(p->d->name);
				p->d->name = copy;
				p->have_name = 1;
			}
		}
	} else if (strcmp(key, "time") == 0) {
		p->have_time = 1;
		if (strcmp(value, "elapsed") == 0)
			p->d->time_kind = MPXKIT_TIME_ELAPSED;
		else if (strcmp(value, "window") == 0)
			p->d->time_kind = MPXKIT_TIME_WINDOW;
		else
			rc = bad(p, no, diag, "time=%.32s: expected 'elapsed' or 'window'", value);
	} else if (strncmp(key, "role.", 5) == 0) {
		if ((role = mpxkit_role_lookup(key + 5)) < 0)
			rc = bad(p, no, diag, "%.64s: no such role", key);
		else if (p->role_text[role])
			rc = bad(p, no, diag, "duplicate metadata key '%.64s'", key);
		else if ((p->role_text[role] = strdup(value)) == NULL)
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		else
			p->role_line[role] = no;
	} else if (mpxkit_pdata_set_meta(p->d, key, value, diag) < 0) {
		rc = -MPXKIT_ENOMEM;
	}
	free(scratch);
	p->state = 1;
	return rc;
}

/* Splits a line at commas in place into at most max fields; returns how many, or max + 1. */
static size_t split_fields(char *s, size_t len, char **field, size_t *flen, size_t max)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ',')
			continue;
		if (n == max)
			return max + 1;
		field[n] = s + start;
		flen[n++] = i - start;
		start = i + 1;
	}
	return n;
}

static int parse_header(parser *p, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	size_t nf, n_events, fixed_len = sizeof fixed_header - 1;
	char *copy, *field[N_FIXED + MPXKIT_PDATA_MAX_EVENTS + 1];
	size_t flen[N_FIXED + MPXKIT_PDATA_MAX_EVENTS + 1];
	const char *events[MPXKIT_PDATA_MAX_EVENTS];
	mpxkit_pdata *d = NULL;
	int rc;

	if (len < fixed_len || memcmp(line, fixed_header, fixed_len) != 0 ||
	    (len > fixed_len && line[fixed_len] != ','))
		return bad(p, no, diag, "header: expected '%s' and then the events", fixed_header);
	if ((copy = malloc(len + 1)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	memcpy(copy, line, len);
	copy[len] = '\0';
	nf = split_fields(copy, len, field, flen, N_FIXED + MPXKIT_PDATA_MAX_EVENTS);
	if (nf > N_FIXED + MPXKIT_PDATA_MAX_EVENTS) {
		free(copy);
		return bad(p, no, diag, "more than %d events", MPXKIT_PDATA_MAX_EVENTS);
	}
	n_events = nf - N_FIXED;
	for (size_t e = 0; e < n_events; e++) {
		field[N_FIXED + e][flen[N_FIXED + e]] = '\0';
		if (!mpxkit__pd_valid_name(field[N_FIXED + e], flen[N_FIXED + e], 0)) {
			free(copy);
			return bad(p, no, diag,
				   "header column %zu: event name is empty, longer than "
				   "%d bytes, or holds a quote, blank or control byte",
				   N_FIXED + e + 1, MPXKIT_PDATA_MAX_NAME - 1);
		}
		events[e] = field[N_FIXED + e];
		for (size_t k = 0; k < e; k++)
			if (strcmp(events[k], events[e]) == 0) {
				rc = bad(p, no, diag, "duplicate event name '%s'", events[e]);
				free(copy);
				return rc;
			}
	}
	rc = mpxkit_pdata_new(&d, p->d->name, p->d->time_kind, events, n_events, diag);
	free(copy);
	if (rc < 0)
		return rc;
	/* Carry the metadata read so far into the dataset with its columns. */
	for (size_t i = 0; i < p->d->n_meta && rc == 0; i++)
		rc = mpxkit_pdata_set_meta(d, p->d->meta_keys[i], p->d->meta_values[i], diag);
	for (int r = 0; r < MPXKIT_ROLE_COUNT && rc == 0; r++) {
		if (p->role_text[r] == NULL)
			continue;
		if ((d->role[r] = mpxkit_pdata_event(d, p->role_text[r])) < 0) {
			d->role[r] = -1;
			rc = bad(p, p->role_line[r], diag, "role.%s=%.64s: no event column '%.64s'",
				 role_names[r], p->role_text[r], p->role_text[r]);
		}
	}
	if (rc == 0 && n_events && (p->values = malloc(n_events * sizeof *p->values)) == NULL)
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (rc < 0) {
		mpxkit_pdata_free(d);
		return rc;
	}
	mpxkit_pdata_free(p->d);
	p->d = d;
	p->state = 2;
	return 0;
}

static const char *const column_names[N_FIXED] = {
    "workload", "core", "freq_mhz", "threads", "run", "sample", "time_s", "power_w", "voltage_v",
};

/* An optional real: empty is NaN. */
static int opt_real(const char *s, size_t len, double *out)
{
	if (len == 0) {
		*out = NAN;
		return 0;
	}
	return mpxkit__pd_real(s, len, out);
}

/* The fixed columns of a row into r; the failing column (why set) or -1. */
static int parse_fixed(char **field, const size_t *flen, mpxkit_pdata_row *r, const char **why)
{
	static const char *const name_rule = "a name (1 to 255 bytes, no quote or control byte)";
	uint64_t u;

	*why = name_rule;
	if (!mpxkit__pd_valid_name(field[0], flen[0], 1))
		return 0;
	if (!mpxkit__pd_valid_name(field[1], flen[1], 1))
		return 1;
	*why = "a number > 0";
	if (mpxkit__pd_real(field[2], flen[2], &r->freq_mhz) < 0 || !(r->freq_mhz > 0))
		return 2;
	*why = "a whole number >= 1";
	if (mpxkit__pd_whole(field[3], flen[3], UINT32_MAX, &u) < 0 || u == 0)
		return 3;
	r->threads = (uint32_t)u;
	*why = "a whole number";
	if (mpxkit__pd_whole(field[4], flen[4], UINT32_MAX, &u) < 0)
		return 4;
	r->run = (uint32_t)u;
	*why = "empty or a whole number";
	r->sample = -1;
	if (flen[5]) {
		if (mpxkit__pd_whole(field[5], flen[5], INT64_MAX, &u) < 0)
			return 5;
		r->sample = (int64_t)u;
	}
	*why = "empty or a number > 0";
	if (opt_real(field[6], flen[6], &r->time_s) < 0 || !(isnan(r->time_s) || r->time_s > 0))
		return 6;
	*why = "empty or a number >= 0";
	if (opt_real(field[7], flen[7], &r->power_w) < 0 || r->power_w < 0)
		return 7;
	*why = "empty or a number > 0";
	if (opt_real(field[8], flen[8], &r->voltage_v) < 0 ||
	    !(isnan(r->voltage_v) || r->voltage_v > 0))
		return 8;
	*why = NULL;
	return -1;
}

static int parse_row(parser *p, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	mpxkit_pdata *d = p->d;
	size_t want = N_FIXED + d->n_events, nf;
	char *copy, *field[N_FIXED + MPXKIT_PDATA_MAX_EVENTS + 1];
	size_t flen[N_FIXED + MPXKIT_PDATA_MAX_EVENTS + 1];
	mpxkit_pdata_row r = {0};
	int col, rc;
	const char *why;

	if ((copy = malloc(len + 1)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	memcpy(copy, line, len);
	copy[len] = '\0';
	nf = split_fields(copy, len, field, flen, want);
	if (nf != want) {
		free(copy);
		if (nf > want)
			return bad(p, no, diag, "more fields than the header's %zu", want);
		return bad(p, no, diag, "%zu fields, the header has %zu", nf, want);
	}
	for (size_t i = 0; i < nf; i++)
		field[i][flen[i]] = '\0';
	col = parse_fixed(field, flen, &r, &why);
	for (size_t e = 0; why == NULL && e < d->n_events; e++)
		if (opt_real(field[N_FIXED + e], flen[N_FIXED + e], &p->values[e]) < 0 ||
		    p->values[e] < 0)
			col = (int)(N_FIXED + e), why = "empty or a count >= 0";
	if (why) {
		rc = bad(p, no, diag, "column %s: '%.40s' is not %s",
			 col < N_FIXED ? column_names[col] : d->events[col - N_FIXED], field[col],
			 why);
		free(copy);
		return rc;
	}
	{
		char reason[320];
		if ((why = implausible(d, &r, p->values, reason, sizeof reason)) != NULL) {
			free(copy);
			return bad(p, no, diag, "%s", why);
		}
	}
	rc = mpxkit_pdata_append(d, field[0], field[1], &r, p->values, diag);
	free(copy);
	return rc;
}

static int on_line(void *arg, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	parser *p = arg;

	/* A UTF-8 byte order mark, as spreadsheets write, is not part of the first line. */
	if (no == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		line += 3, len -= 3;
	if (len == 0)
		return bad(p, no, diag, "blank line");
	if (p->state < 2 && line[0] == '#')
		return parse_meta(p, line, len, no, diag);
	if (p->state == 0)
		return bad(p, no, diag,
			   "not a predict dataset: the first line must be "
			   "'# mpxkit-predict=1'");
	if (p->state == 1)
		return parse_header(p, line, len, no, diag);
	return parse_row(p, line, len, no, diag);
}

/* The default dataset name: the file's base name without directories and extensions. */
static void base_name(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strcspn(b, ".");
	if (n == 0 || strcmp(path, "-") == 0) {
		snprintf(out, cap, "dataset");
		return;
	}
	snprintf(out, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), b);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < ' ' || *p == ',' || *p == '"')
			*p = '_';
}

static int parse_any(const char *name, const char *path, const char *buf, size_t len,
		     mpxkit_pdata **out, mpxkit_diag *diag)
{
	parser p = {.name = name};
	char dname[128];
	int rc;

	if (out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict dataset: bad argument");
	base_name(name, dname, sizeof dname);
	if ((rc = mpxkit_pdata_new(&p.d, dname, MPXKIT_TIME_ELAPSED, NULL, 0, diag)) < 0)
		return rc;
	rc = mpxkit__pd_each_line(name, path, buf, len, MPXKIT_PDATA_MAX_BYTES, "predict dataset",
				  on_line, &p, diag);
	if (rc == 0 && p.state == 0)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: empty file", name);
	else if (rc == 0 && p.state == 1)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: no header: only metadata lines", name);
	else if (rc == 0 && p.d->n_rows == 0)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: no rows", name);
	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++)
		free(p.role_text[r]);
	free(p.values);
	if (rc < 0) {
		mpxkit_pdata_free(p.d);
		return rc;
	}
	*out = p.d;
	return 0;
}

int mpxkit_pdata_read(const char *path, mpxkit_pdata **out, mpxkit_diag *diag)
{
	return parse_any(path, path, NULL, 0, out, diag);
}

int mpxkit_pdata_parse(const char *name, const char *buf, size_t len, mpxkit_pdata **out,
		       mpxkit_diag *diag)
{
	if (buf == NULL && len)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict dataset: bad argument");
	return parse_any(name ? name : "input", NULL, buf ? buf : "", len, out, diag);
}

/* ---- writing ----------------------------------------------------------------------------------
 */

/* Shortest text that reads back as the same double. */
static void put_real(FILE *f, double v)
{
	char buf[40];

	if (isnan(v))
		return;
	/* Counts are whole numbers: digits, as a spreadsheet shows them. */
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		fprintf(f, "%.0f", v);
		return;
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, f);
}

int mpxkit_pdata_format(const mpxkit_pdata *d, char **text, size_t *len, mpxkit_diag *diag)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (f == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	fprintf(f, "# mpxkit-predict=%d\n# dataset=%s\n# time=%s\n", MPXKIT_PDATA_VERSION, d->name,
		d->time_kind == MPXKIT_TIME_WINDOW ? "window" : "elapsed");
	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++)
		if (d->role[r] >= 0)
			fprintf(f, "# role.%s=%s\n", role_names[r], d->events[d->role[r]]);
	for (size_t i = 0; i < d->n_meta; i++)
		fprintf(f, "# %s=%s\n", d->meta_keys[i], d->meta_values[i]);
	fputs(fixed_header, f);
	for (size_t e = 0; e < d->n_events; e++)
		fprintf(f, ",%s", d->events[e]);
	fputc('\n', f);
	for (size_t i = 0; i < d->n_rows; i++) {
		const mpxkit_pdata_row *r = &d->rows[i];
		fprintf(f, "%s,%s,", d->workloads[r->workload], d->cores[r->core]);
		put_real(f, r->freq_mhz);
		fprintf(f, ",%u,%u,", r->threads, r->run);
		if (r->sample >= 0)
			fprintf(f, "%lld", (long long)r->sample);
		fputc(',', f);
		put_real(f, r->time_s);
		fputc(',', f);
		put_real(f, r->power_w);
		fputc(',', f);
		put_real(f, r->voltage_v);
		for (size_t e = 0; e < d->n_events; e++) {
			fputc(',', f);
			put_real(f, d->values[i * d->n_events + e]);
		}
		fputc('\n', f);
	}
	if (ferror(f) | (fclose(f) != 0)) {
		free(buf);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	*text = buf;
	*len = n;
	return 0;
}

int mpxkit_pdata_write(const mpxkit_pdata *d, const char *path, mpxkit_diag *diag)
{
	char *text;
	size_t len;
	int rc = mpxkit_pdata_format(d, &text, &len, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_outfile_write_all(path, text, len, diag);
	free(text);
	return rc;
}

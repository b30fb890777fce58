/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-memory trace and its CSV reader and writer (doc/trace-format.md). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "mpxkit/outfile.h"
#include "mpxkit/reader.h"
#include "mpxkit/trace.h"

/* ---- construction ---------------------------------------------------------------------- */

static int valid_index_name(const char *name)
{
	return strcmp(name, "step") == 0 || strcmp(name, "time_ns") == 0;
}

/* Event names travel unquoted in CSV, so they may not hold separators, quotes or blanks. */
static int valid_event_name(const char *name)
{
	if (*name == '\0')
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p <= ' ' || *p == ',' || *p == '"' || *p == 0x7f)
			return 0;
	return 1;
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

static int valid_meta_value(const char *value)
{
	return strpbrk(value, "\r\n") == NULL;
}

void mpxkit_trace_free(mpxkit_trace *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->n_events; i++)
		free(t->events[i]);
	for (size_t i = 0; i < t->n_meta; i++) {
		free(t->meta_keys[i]);
		free(t->meta_values[i]);
	}
	free(t->index_name);
	free(t->events);
	free(t->index);
	free(t->values);
	free(t->meta_keys);
	free(t->meta_values);
	free(t);
}

int mpxkit_trace_new(mpxkit_trace **out, const char *index_name, size_t n_events,
		     const char *const *events, mpxkit_diag *diag)
{
	mpxkit_trace *t = NULL;

	if (out == NULL || (n_events > 0 && events == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: missing argument");
	if (index_name == NULL)
		index_name = "step";
	if (!valid_index_name(index_name))
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "trace: first column '%s' is neither 'step' nor 'time_ns'",
				   index_name);
	if (n_events == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: no events");
	for (size_t i = 0; i < n_events; i++) {
		if (events[i] == NULL || !valid_event_name(events[i]))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "trace: event name %zu is empty or holds a comma, "
					   "quote or blank",
					   i + 1);
		for (size_t j = 0; j < i; j++)
			if (strcmp(events[i], events[j]) == 0)
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "trace: duplicate event name '%s'", events[i]);
	}
	t = calloc(1, sizeof *t);
	if (t == NULL)
		goto fail;
	t->index_name = strdup(index_name);
	t->events = calloc(n_events, sizeof *t->events);
	if (t->index_name == NULL || t->events == NULL)
		goto fail;
	for (size_t i = 0; i < n_events; i++) {
		t->events[i] = strdup(events[i]);
		if (t->events[i] == NULL)
			goto fail;
		t->n_events = i + 1;
	}
	*out = t;
	return 0;
fail:
	mpxkit_trace_free(t);
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "trace: out of memory");
}

static int reserve_rows(mpxkit_trace *t, size_t want)
{
	size_t cap = t->cap_steps ? t->cap_steps : 64;
	uint64_t *index, *values;

	if (want <= t->cap_steps)
		return 0;
	while (cap < want) {
		if (cap > SIZE_MAX / 2)
			return -MPXKIT_ENOMEM;
		cap *= 2;
	}
	if (cap > SIZE_MAX / sizeof(uint64_t) / t->n_events)
		return -MPXKIT_ENOMEM;
	index = realloc(t->index, cap * sizeof *index);
	if (index == NULL)
		return -MPXKIT_ENOMEM;
	t->index = index;
	values = realloc(t->values, cap * t->n_events * sizeof *values);
	if (values == NULL)
		return -MPXKIT_ENOMEM;
	t->values = values;
	t->cap_steps = cap;
	return 0;
}

int mpxkit_trace_append(mpxkit_trace *t, uint64_t index, const uint64_t *counts)
{
	int rc;

	if (t == NULL || counts == NULL)
		return -MPXKIT_EINVAL;
	rc = reserve_rows(t, t->n_steps + 1);
	if (rc < 0)
		return rc;
	t->index[t->n_steps] = index;
	memcpy(t->values + t->n_steps * t->n_events, counts, t->n_events * sizeof *counts);
	t->n_steps++;
	return 0;
}

int mpxkit_trace_set_meta(mpxkit_trace *t, const char *key, const char *value)
{
	char *k = NULL, *v = NULL, **keys, **values;

	if (t == NULL || key == NULL || value == NULL || !valid_meta_key(key) ||
	    !valid_meta_value(value))
		return -MPXKIT_EINVAL;
	v = strdup(value);
	if (v == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < t->n_meta; i++) {
		if (strcmp(t->meta_keys[i], key) == 0) {
			free(t->meta_values[i]);
			t->meta_values[i] = v;
			return 0;
		}
	}
	k = strdup(key);
	if (k == NULL)
		goto fail;
	keys = realloc(t->meta_keys, (t->n_meta + 1) * sizeof *keys);
	if (keys == NULL)
		goto fail;
	t->meta_keys = keys;
	values = realloc(t->meta_values, (t->n_meta + 1) * sizeof *values);
	if (values == NULL)
		goto fail;
	t->meta_values = values;
	t->meta_keys[t->n_meta] = k;
	t->meta_values[t->n_meta] = v;
	t->n_meta++;
	return 0;
fail:
	free(k);
	free(v);
	return -MPXKIT_ENOMEM;
}

const char *mpxkit_trace_get_meta(const mpxkit_trace *t, const char *key)
{
	if (t == NULL || key == NULL)
		return NULL;
	for (size_t i = 0; i < t->n_meta; i++)
		if (strcmp(t->meta_keys[i], key) == 0)
			return t->meta_values[i];
	return NULL;
}

int mpxkit_trace_event_index(const mpxkit_trace *t, const char *name)
{
	if (t == NULL || name == NULL)
		return -MPXKIT_EINVAL;
	for (size_t i = 0; i < t->n_events; i++)
		if (strcmp(t->events[i], name) == 0)
			return (int)i;
	return -MPXKIT_ENOENT;
}

/* ---- parsing --------------------------------------------------------------------------- */

/* One physical line of the input, without its terminator (and without a CR before it). */
typedef struct line {
	const char *text;
	size_t len;
	size_t number; /* 1-based */
} line;

typedef struct cursor {
	const char *name; /* what diagnostics call the input */
	const char *buf;
	size_t len;
	size_t pos;
	size_t number;
} cursor;

static int next_line(cursor *c, line *l)
{
	const char *nl;

	if (c->pos >= c->len)
		return 0;
	l->text = c->buf + c->pos;
	nl = memchr(l->text, '\n', c->len - c->pos);
	l->len = nl ? (size_t)(nl - l->text) : c->len - c->pos;
	c->pos += l->len + (nl ? 1 : 0);
	if (l->len > 0 && l->text[l->len - 1] == '\r')
		l->len--;
	l->number = ++c->number;
	return 1;
}

static int bad(const cursor *c, size_t number, mpxkit_diag *diag, int code, const char *why)
{
	return mpxkit_fail(diag, code, "%s:%zu: %s", c->name, number, why);
}

/* Copies [s, s+len) into a fresh string. */
static char *dup_span(const char *s, size_t len)
{
	char *d = malloc(len + 1);
	if (d == NULL)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

/* "# key=value": a '#', optional blanks, a key, '=', the rest of the line as the value. */
static int parse_meta(const cursor *c, const line *l, mpxkit_trace *t, mpxkit_diag *diag)
{
	const char *p = l->text + 1, *end = l->text + l->len, *eq;
	char *key = NULL, *value = NULL;
	int rc;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	eq = memchr(p, '=', (size_t)(end - p));
	if (eq == NULL || eq == p)
		return bad(c, l->number, diag, MPXKIT_EFORMAT,
			   "comment line is not '# key=value' metadata");
	key = dup_span(p, (size_t)(eq - p));
	value = dup_span(eq + 1, (size_t)(end - eq - 1));
	if (key == NULL || value == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
		goto out;
	}
	if (!valid_meta_key(key)) {
		rc = bad(c, l->number, diag, MPXKIT_EFORMAT,
			 "metadata key must match [A-Za-z0-9_.-]+");
		goto out;
	}
	if (mpxkit_trace_get_meta(t, key) != NULL) {
		rc = bad(c, l->number, diag, MPXKIT_EFORMAT, "duplicate metadata key");
		goto out;
	}
	rc = mpxkit_trace_set_meta(t, key, value);
	if (rc < 0)
		rc = mpxkit_fail(diag, -rc, "%s: out of memory", c->name);
out:
	free(key);
	free(value);
	return rc;
}

static int cmp_name_then_position(const void *a, const void *b)
{
	const char *const *x = *(const char *const *const *)a;
	const char *const *y = *(const char *const *const *)b;
	int c = strcmp(*x, *y);
	return c ? c : (x > y) - (x < y);
}

/*
 * Position of the first name that repeats an earlier one, or n when all differ.  Sorting keeps
 * a header of many thousand columns from costing a quadratic number of comparisons.
 */
static int first_duplicate(char *const *names, size_t n, size_t *dup)
{
	char *const **sorted = malloc((n ? n : 1) * sizeof *sorted);

	if (sorted == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t i = 0; i < n; i++)
		sorted[i] = &names[i];
	qsort(sorted, n, sizeof *sorted, cmp_name_then_position);
	*dup = n;
	for (size_t i = 1; i < n; i++)
		if (strcmp(*sorted[i - 1], *sorted[i]) == 0 && (size_t)(sorted[i] - names) < *dup)
			*dup = (size_t)(sorted[i] - names);
	free(sorted);
	return 0;
}

/* Splits a header line into the first column and the event names. */
static int parse_header(const cursor *c, const line *l, mpxkit_trace *t, mpxkit_diag *diag)
{
	const char *p = l->text, *end = l->text + l->len;
	size_t n = 1, k = 0, dup;
	char **names = NULL;
	int rc;

	for (const char *q = p; q < end; q++)
		n += *q == ',';
	names = calloc(n, sizeof *names);
	if (names == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
	for (k = 0; k < n; k++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		names[k] = dup_span(p, (size_t)(stop - p));
		if (names[k] == NULL) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
			goto out;
		}
		p = stop + 1;
	}
	if (!valid_index_name(names[0])) {
		rc = bad(c, l->number, diag, MPXKIT_EFORMAT,
			 "no header: the first column must be named 'step' or 'time_ns'");
		goto out;
	}
	if (n < 2) {
		rc = bad(c, l->number, diag, MPXKIT_EFORMAT, "header names no event column");
		goto out;
	}
	rc = first_duplicate(names + 1, n - 1, &dup);
	if (rc < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
		goto out;
	}
	for (k = 1; k < n; k++) {
		char why[MPXKIT_DIAG_MAX];
		if (!valid_event_name(names[k])) {
			snprintf(why, sizeof why,
				 "header column %zu: event name is empty or holds a quote or blank",
				 k + 1);
			rc = bad(c, l->number, diag, MPXKIT_EFORMAT, why);
			goto out;
		}
		if (k - 1 == dup) {
			snprintf(why, sizeof why, "duplicate event name '%.100s'", names[k]);
			rc = bad(c, l->number, diag, MPXKIT_EFORMAT, why);
			goto out;
		}
	}
	/* The array's first slot is the index column's name; the rest become t's events. */
	t->events = malloc((n - 1) * sizeof *t->events);
	if (t->events == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
		goto out;
	}
	memcpy(t->events, names + 1, (n - 1) * sizeof *t->events);
	t->n_events = n - 1;
	t->index_name = names[0];
	free(names);
	return 0;
out:
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return rc;
}

/* A whole non-negative decimal integer that fits 64 bits. */
static int parse_u64(const char *s, size_t len, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	if (len == 0)
		return *why = "empty value", -MPXKIT_EFORMAT;
	if (s[0] == '-') {
		for (size_t i = 1; i < len; i++)
			if (s[i] < '0' || s[i] > '9')
				return *why = "non-numeric value", -MPXKIT_EFORMAT;
		return *why = len > 1 ? "negative value" : "non-numeric value", -MPXKIT_EFORMAT;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9)
			return *why = "non-numeric value", -MPXKIT_EFORMAT;
		if (v > (UINT64_MAX - d) / 10) {
			for (size_t j = i + 1; j < len; j++)
				if (s[j] < '0' || s[j] > '9')
					return *why = "non-numeric value", -MPXKIT_EFORMAT;
			return *why = "value overflows 64 bits", -MPXKIT_ERANGE;
		}
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_row(const cursor *c, const line *l, mpxkit_trace *t, uint64_t *row,
		     mpxkit_diag *diag)
{
	const char *p = l->text, *end = l->text + l->len;
	size_t n = t->n_events + 1, k;
	uint64_t index = 0;

	if (l->len == 0)
		return bad(c, l->number, diag, MPXKIT_EFORMAT, "blank line");
	for (k = 0; k < n; k++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		const char *why = NULL;
		uint64_t v = 0;
		int rc;

		if (comma != NULL && k == n - 1)
			break; /* one field too many */
		if (comma == NULL && k < n - 1) {
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%zu: ragged row: %zu fields, the header has %zu",
					   c->name, l->number, k + 1, n);
		}
		rc = parse_u64(p, (size_t)(stop - p), &v, &why);
		if (rc < 0)
			return mpxkit_fail(diag, -rc, "%s:%zu: column %zu ('%.80s'): %s", c->name,
					   l->number, k + 1,
					   k == 0 ? t->index_name : t->events[k - 1], why);
		if (k == 0)
			index = v;
		else
			row[k - 1] = v;
		p = stop + 1;
	}
	if (k < n) {
		size_t fields = n;
		for (const char *q = p; q < end; q++)
			fields += *q == ',';
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: ragged row: %zu fields, the header has %zu", c->name,
				   l->number, fields, n);
	}
	if (mpxkit_trace_append(t, index, row) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c->name);
	return 0;
}

int mpxkit_trace_parse(const char *name, const char *buf, size_t len, mpxkit_trace **out,
		       mpxkit_diag *diag)
{
	cursor c = {name ? name : "<memory>", buf, len, 0, 0};
	mpxkit_trace *t = NULL;
	uint64_t *row = NULL;
	line l;
	int rc, have_header = 0;

	if (out == NULL || (buf == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: missing argument");
	if (len == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:1: empty file", c.name);
	if (memchr(buf, '\0', len) != NULL) {
		const char *z = memchr(buf, '\0', len);
		size_t number = 1;
		for (const char *p = buf; p < z; p++)
			number += *p == '\n';
		return bad(&c, number, diag, MPXKIT_EFORMAT, "NUL byte: not a text CSV file");
	}
	/* Spreadsheets save CSV with a UTF-8 byte order mark; it is not part of the header. */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		c.pos = 3;
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", c.name);
	while (next_line(&c, &l)) {
		if (!have_header && l.len > 0 && l.text[0] == '#') {
			rc = parse_meta(&c, &l, t, diag);
		} else if (!have_header) {
			if (l.len == 0) {
				rc = bad(&c, l.number, diag, MPXKIT_EFORMAT,
					 "no header: blank line where the header belongs");
				goto fail;
			}
			rc = parse_header(&c, &l, t, diag);
			have_header = rc == 0;
			if (have_header) {
				row = malloc(t->n_events * sizeof *row);
				if (row == NULL) {
					rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory",
							 c.name);
					goto fail;
				}
			}
		} else if (l.len > 0 && l.text[0] == '#') {
			rc = bad(&c, l.number, diag, MPXKIT_EFORMAT,
				 "metadata line after the header");
		} else {
			rc = parse_row(&c, &l, t, row, diag);
		}
		if (rc < 0)
			goto fail;
	}
	if (!have_header) {
		rc = bad(&c, c.number ? c.number : 1, diag, MPXKIT_EFORMAT,
			 c.number ? "no header: only metadata lines" : "empty file");
		goto fail;
	}
	if (t->n_steps == 0) {
		rc = bad(&c, c.number, diag, MPXKIT_EFORMAT,
			 "empty trace: a header but no data rows");
		goto fail;
	}
	free(row);
	*out = t;
	return 0;
fail:
	free(row);
	mpxkit_trace_free(t);
	return rc;
}

/* ---- file I/O -------------------------------------------------------------------------- */

int mpxkit_trace_read(const char *path, mpxkit_trace **out, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP,
				      .max_bytes = MPXKIT_TRACE_MAX_BYTES,
				      .what = "trace" };
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: missing argument");
	rc = mpxkit_read_file(path, &opt, &buf, &len, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_trace_parse(strcmp(path, "-") == 0 ? "<stdin>" : path, buf, len, out, diag);
	free(buf);
	return rc;
}

/* A growable text buffer for one write. */
typedef struct text {
	char *buf;
	size_t len, cap;
} text;

static int text_put(text *b, const char *s, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *grown;
		while (cap - b->len < n)
			cap *= 2;
		grown = realloc(b->buf, cap);
		if (grown == NULL)
			return -MPXKIT_ENOMEM;
		b->buf = grown;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	return 0;
}

static int text_str(text *b, const char *s)
{
	return text_put(b, s, strlen(s));
}

static int text_u64(text *b, uint64_t v)
{
	char digits[24];
	size_t i = sizeof digits;
	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return text_put(b, digits + i, sizeof digits - i);
}

static int format_trace(const mpxkit_trace *t, text *b)
{
	int rc = 0;

	for (size_t i = 0; i < t->n_meta && rc == 0; i++) {
		rc |= text_str(b, "# ");
		rc |= text_str(b, t->meta_keys[i]);
		rc |= text_put(b, "=", 1);
		rc |= text_str(b, t->meta_values[i]);
		rc |= text_put(b, "\n", 1);
	}
	rc |= text_str(b, t->index_name ? t->index_name : "step");
	for (size_t e = 0; e < t->n_events; e++) {
		rc |= text_put(b, ",", 1);
		rc |= text_str(b, t->events[e]);
	}
	rc |= text_put(b, "\n", 1);
	for (size_t s = 0; s < t->n_steps && rc == 0; s++) {
		const uint64_t *row = t->values + s * t->n_events;
		rc |= text_u64(b, t->index[s]);
		for (size_t e = 0; e < t->n_events; e++) {
			rc |= text_put(b, ",", 1);
			rc |= text_u64(b, row[e]);
		}
		rc |= text_put(b, "\n", 1);
	}
	return rc ? -MPXKIT_ENOMEM : 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}


/* gzip-compresses b in memory, so the file is written whole or not at all. */
static int gzip_text(const text *b, text *out)
{
	z_stream z;
	int zrc;

	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: a gzip wrapper rather than zlib's, as gzip(1) and gzopen read. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	out->cap = deflateBound(&z, (uLong)b->len);
	out->buf = malloc(out->cap);
	if (out->buf == NULL) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)b->buf;
	z.avail_in = (uInt)b->len;
	z.next_out = (Bytef *)out->buf;
	z.avail_out = (uInt)out->cap;
	zrc = deflate(&z, Z_FINISH);
	out->len = z.total_out;
	deflateEnd(&z);
	return zrc == Z_STREAM_END ? 0 : -1;
}

int mpxkit_trace_write(const mpxkit_trace *t, const char *path, mpxkit_diag *diag)
{
	text b = {NULL, 0, 0}, gz = {NULL, 0, 0};
	int rc;

	if (t == NULL || path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: missing argument");
	if (format_trace(t, &b) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		goto done;
	}
	if (strcmp(path, "-") == 0) {
		rc = 0;
		if (fwrite(b.buf, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
			rc = mpxkit_fail_sys(diag, "standard output");
		goto done;
	}
	if (ends_with(path, ".gz")) {
		/* One deflate call takes at most 4 GiB: far beyond any trace this tool writes. */
		if (b.len > UINT32_MAX || gzip_text(&b, &gz) != 0) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: cannot gzip-compress the trace", path);
			goto done;
		}
		rc = mpxkit_outfile_write_all(path, gz.buf, gz.len, diag);
	} else {
		rc = mpxkit_outfile_write_all(path, b.buf, b.len, diag);
	}
done:
	free(gz.buf);
	free(b.buf);
	return rc;
}

/* ---- merging steps ---------------------------------------------------------------------- */

/* t's merged_steps times k, as text, in buf: 0, or the failure's code with its line. */
static int merged_meta(const mpxkit_trace *t, size_t k, char *buf, size_t len, mpxkit_diag *diag)
{
	const char *v = mpxkit_trace_get_meta(t, "merged_steps");
	const char *why = NULL;
	uint64_t had = 1;

	if (v != NULL && (parse_u64(v, strlen(v), &had, &why) < 0 || had == 0))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "trace: metadata merged_steps=%s is not a whole number >= 1", v);
	if (had > UINT64_MAX / k)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "trace: merged_steps %" PRIu64 " x %zu overflows 64 bits", had, k);
	snprintf(buf, len, "%" PRIu64, had * (uint64_t)k);
	return 0;
}

/* Step j of the merge: the sums of t's steps j k .. j k + k - 1; 0 or -MPXKIT_ERANGE. */
static int merge_step(const mpxkit_trace *t, size_t k, size_t j, uint64_t *row)
{
	size_t ne = t->n_events;

	memset(row, 0, ne * sizeof *row);
	for (size_t s = j * k; s < (j + 1) * k; s++)
		for (size_t e = 0; e < ne; e++) {
			uint64_t v = t->values[s * ne + e];
			if (row[e] > UINT64_MAX - v)
				return -MPXKIT_ERANGE;
			row[e] += v;
		}
	return 0;
}

int mpxkit_trace_merge_steps(const mpxkit_trace *t, size_t k, mpxkit_trace **out,
			     mpxkit_diag *diag)
{
	mpxkit_trace *m = NULL;
	uint64_t *row = NULL;
	char merged[32];
	int rc;

	if (t == NULL || out == NULL || k == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "trace: merging needs a trace and k >= 1");
	if (t->n_steps < k)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "trace: %zu step%s fewer than the %zu of one merged step",
				   t->n_steps, t->n_steps == 1 ? " is" : "s are", k);
	if ((rc = merged_meta(t, k, merged, sizeof merged, diag)) < 0)
		return rc;
	rc = mpxkit_trace_new(&m, t->index_name, t->n_events, (const char *const *)t->events,
			      diag);
	if (rc < 0)
		return rc;
	row = malloc(t->n_events * sizeof *row);
	rc = row ? reserve_rows(m, t->n_steps / k) : -MPXKIT_ENOMEM;
	for (size_t i = 0; rc == 0 && i < t->n_meta; i++)
		rc = mpxkit_trace_set_meta(m, t->meta_keys[i], t->meta_values[i]);
	if (rc == 0)
		rc = mpxkit_trace_set_meta(m, "merged_steps", merged);
	for (size_t j = 0; rc == 0 && j < t->n_steps / k; j++) {
		rc = merge_step(t, k, j, row);
		if (rc == -MPXKIT_ERANGE) {
			rc = mpxkit_fail(diag, MPXKIT_ERANGE,
					 "trace: a sum of %zu steps from step %zu overflows 64 bits",
					 k, j * k);
			break;
		}
		if (rc == 0)
			rc = mpxkit_trace_append(m, t->index[j * k], row);
	}
	free(row);
	if (rc < 0) {
		mpxkit_trace_free(m);
		return rc == -MPXKIT_ENOMEM ? mpxkit_fail(diag, MPXKIT_ENOMEM, "trace: out of memory")
					    : rc;
	}
	*out = m;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Callgrind's periodic dumps, read back as one trace step per dump. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callgrind_impl.h"
#include "mpxkit/record.h"
#include "mpxkit/reader.h"

/* Bounds a corrupt events: line; callgrind itself defines a few dozen events at most. */
#define MAX_EVENTS 1024

void mpxkit_callgrind_dump_free(mpxkit_callgrind_dump *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n_events; i++)
		free(d->events[i]);
	free(d->events);
	free(d->totals);
	free(d->creator);
	free(d);
}

const char *mpxkit__cg_header_value(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) != 0 || line[n] != ':')
		return NULL;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

int mpxkit__cg_is_blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

/* Splits the events: line; names are runs of non-blank characters. */
static int parse_events(const char *path, size_t lineno, const char *s, mpxkit_callgrind_dump *d,
			mpxkit_diag *diag)
{
	if (d->events != NULL)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: second events: line (combined dumps are not supported)",
				   path, lineno);
	for (;;) {
		size_t len;
		char **grown;

		s += strspn(s, " \t\r\n");
		if (*s == '\0')
			break;
		len = strcspn(s, " \t\r\n");
		if (d->n_events == MAX_EVENTS)
			return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: more than %d events",
					   path, lineno, MAX_EVENTS);
		grown = realloc(d->events, (d->n_events + 1) * sizeof *grown);
		if (grown == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		d->events = grown;
		for (size_t i = 0; i < d->n_events; i++)
			if (strlen(d->events[i]) == len && strncmp(d->events[i], s, len) == 0)
				return mpxkit_fail(diag, MPXKIT_EFORMAT,
						   "%s:%zu: duplicate event '%s'", path, lineno,
						   d->events[i]);
		d->events[d->n_events] = strndup(s, len);
		if (d->events[d->n_events] == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		d->n_events++;
		s += len;
	}
	if (d->n_events == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: events: line names no event",
				   path, lineno);
	return 0;
}

/* Length of the word at s, at most 20 characters, for quoting it in a diag. */
static int word_len(const char *s)
{
	size_t n = strcspn(s, " \t\r\n");
	return n > 20 ? 20 : (int)n;
}

static int not_a_number(const char *path, size_t lineno, const char *s, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: count '%.*s' is not a number", path,
			   lineno, word_len(s), s);
}

int mpxkit__cg_parse_count(const char *path, size_t lineno, const char *s, const char **end,
		       uint64_t *out, mpxkit_diag *diag)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return not_a_number(path, lineno, s, diag);
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return mpxkit_fail(diag, MPXKIT_ERANGE, "%s:%zu: count overflows 64 bits",
					   path, lineno);
		v = v * 10 + digit;
	}
	if (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
		return not_a_number(path, lineno, s, diag);
	*end = p;
	*out = v;
	return 0;
}

/* The totals: line: up to n_events counts, the missing trailing ones zero (as in cost lines). */
static int parse_totals(const char *path, size_t lineno, const char *s, mpxkit_callgrind_dump *d,
			mpxkit_diag *diag)
{
	size_t n = 0;

	if (d->events == NULL)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: totals: before the events: line",
				   path, lineno);
	d->totals = calloc(d->n_events, sizeof *d->totals);
	if (d->totals == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	for (;;) {
		int rc;

		s += strspn(s, " \t\r\n");
		if (*s == '\0')
			break;
		if (n == d->n_events)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%zu: totals: has more counts than the %zu events",
					   path, lineno, d->n_events);
		rc = mpxkit__cg_parse_count(path, lineno, s, &s, &d->totals[n], diag);
		if (rc < 0)
			return rc;
		n++;
	}
	if (n == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: totals: holds no count", path,
				   lineno);
	return 0;
}

/* A handler's 0 as "handled", its error as it is. */
static int handled(int rc)
{
	return rc < 0 ? rc : 1;
}

static int parse_part(const char *path, size_t lineno, const char *s, mpxkit_callgrind_dump *d,
		      mpxkit_diag *diag)
{
	uint64_t v;
	const char *end;
	int rc = mpxkit__cg_parse_count(path, lineno, s, &end, &v, diag);

	if (rc < 0 || !mpxkit__cg_is_blank(end) || v == 0 || v > 100000000)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: bad part: number", path, lineno);
	d->part = (unsigned)v;
	return 0;
}

/* "Timerange: Basic block A - B" is informative only, so a malformed one is ignored. */
static void parse_desc(const char *s, mpxkit_callgrind_dump *d)
{
	uint64_t a, b;

	if (sscanf(s, "Timerange: Basic block %" SCNu64 " - %" SCNu64, &a, &b) == 2 && a <= b)
		d->bb_begin = a, d->bb_end = b;
}

int mpxkit__cg_header(const char *path, size_t lineno, const char *line, mpxkit_callgrind_dump *d,
		      mpxkit_diag *diag)
{
	const char *v;

	if ((v = mpxkit__cg_header_value(line, "events")) != NULL)
		return handled(parse_events(path, lineno, v, d, diag));
	if ((v = mpxkit__cg_header_value(line, "totals")) != NULL)
		return handled(parse_totals(path, lineno, v, d, diag));
	if ((v = mpxkit__cg_header_value(line, "part")) != NULL)
		return handled(parse_part(path, lineno, v, d, diag));
	if ((v = mpxkit__cg_header_value(line, "version")) != NULL) {
		if (strncmp(v, "1", strcspn(v, " \t\r\n")) != 0 || v[0] != '1')
			return mpxkit_fail(diag, MPXKIT_EVERSION,
					   "%s:%zu: callgrind format version %.*s, only 1 is known",
					   path, lineno, word_len(v), v);
		return 1;
	}
	if ((v = mpxkit__cg_header_value(line, "creator")) != NULL && d->creator == NULL) {
		d->creator = strndup(v, strcspn(v, "\r\n"));
		return d->creator ? 1 : mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	}
	if ((v = mpxkit__cg_header_value(line, "desc")) != NULL) {
		parse_desc(v, d);
		return 1;
	}
	if (mpxkit__cg_header_value(line, "creator") != NULL)
		return 1;
	return 0;
}

/* One header or body line; cost lines and the call graph do not matter here. */
static int parse_line(const char *path, size_t lineno, const char *line, mpxkit_callgrind_dump *d,
		      mpxkit_diag *diag)
{
	int rc;

	if (d->totals != NULL) {
		if (mpxkit__cg_is_blank(line))
			return 0;
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: text after the totals: line",
				   path, lineno);
	}
	rc = mpxkit__cg_header(path, lineno, line, d, diag);
	return rc < 0 ? rc : 0;
}

int mpxkit_callgrind_parse(const char *name, const char *buf, size_t len,
			   mpxkit_callgrind_dump **out, mpxkit_diag *diag)
{
	mpxkit_callgrind_dump *d = NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0, pos = 0;
	int rc;

	if (out == NULL || (buf == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "callgrind: missing argument");
	if (name == NULL)
		name = "<callgrind>";
	d = calloc(1, sizeof *d);
	if (d == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) + 1 : len - pos;

		lineno++;
		/* The line parsers work on C strings, so each line gets its own terminated copy. */
		if (n + 1 > cap) {
			char *grown = realloc(line, n + 1);
			if (grown == NULL) {
				rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
				goto fail;
			}
			line = grown;
			cap = n + 1;
		}
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos += n;
		if (memchr(line, '\0', n) != NULL) {
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: NUL byte in a text file",
					 name, lineno);
			goto fail;
		}
		rc = parse_line(name, lineno, line, d, diag);
		if (rc < 0)
			goto fail;
	}
	if (lineno == 0) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:1: empty file", name);
		goto fail;
	}
	if (buf[len - 1] != '\n') {
		rc =
		    mpxkit_fail(diag, MPXKIT_EFORMAT,
				"%s:%zu: last line has no newline (file truncated?)", name, lineno);
		goto fail;
	}
	if (d->events == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: no events: line", name, lineno);
		goto fail;
	}
	if (d->totals == NULL) {
		/* callgrind writes totals: last, so its absence means the file was cut short. */
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
				 "%s:%zu: no totals: line at the end (file truncated?)", name,
				 lineno);
		goto fail;
	}
	free(line);
	*out = d;
	return 0;
fail:
	free(line);
	mpxkit_callgrind_dump_free(d);
	return rc;
}

int mpxkit_callgrind_read(const char *path, mpxkit_callgrind_dump **out, mpxkit_diag *diag)
{
	/* A dump is parsed whole; 4 GiB of text is far beyond the totals files lib/record reads. */
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_TEXT,
				      .max_bytes = (uint64_t)1 << 32,
				      .what = "callgrind output" };
	char *buf;
	size_t len;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "callgrind: missing argument");
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "%s: no such file", path);
	rc = mpxkit_read_file(path, &opt, &buf, &len, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_callgrind_parse(path, buf, len, out, diag);
	free(buf);
	return rc;
}

static int same_events(const mpxkit_callgrind_dump *a, const mpxkit_callgrind_dump *b)
{
	if (a->n_events != b->n_events)
		return 0;
	for (size_t i = 0; i < a->n_events; i++)
		if (strcmp(a->events[i], b->events[i]) != 0)
			return 0;
	return 1;
}

/* Reads base.k and checks it belongs to the same run as the final dump. */
static int read_numbered(const char *base, unsigned k, const mpxkit_callgrind_dump *last,
			 mpxkit_callgrind_dump **out, mpxkit_diag *diag)
{
	size_t size = strlen(base) + 24;
	char *path = malloc(size);
	int rc;

	if (path == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", base);
	snprintf(path, size, "%s.%u", base, k);
	rc = mpxkit_callgrind_read(path, out, diag);
	if (rc < 0)
		goto done;
	if ((*out)->part != k)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: holds part %u, expected part %u", path,
				 (*out)->part, k);
	else if (!same_events(*out, last))
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: events differ from those of %s", path,
				 base);
	if (rc < 0) {
		mpxkit_callgrind_dump_free(*out);
		*out = NULL;
	}
done:
	free(path);
	return rc;
}

/* "callgrind-3.19.0" -> "3.19.0"; anything else is kept whole. */
static const char *creator_version(const char *creator)
{
	static const char prefix[] = "callgrind-";

	if (strncmp(creator, prefix, sizeof prefix - 1) == 0 && creator[sizeof prefix - 1])
		return creator + sizeof prefix - 1;
	return creator;
}

static int set_collect_meta(mpxkit_trace *t, const mpxkit_callgrind_dump *last)
{
	char buf[32];
	int rc = mpxkit_trace_set_meta(t, "tool", "callgrind");

	if (rc == 0 && last->creator != NULL)
		rc = mpxkit_trace_set_meta(t, "valgrind", creator_version(last->creator));
	if (rc == 0 && last->bb_end > 0) {
		snprintf(buf, sizeof buf, "%" PRIu64, last->bb_end);
		rc = mpxkit_trace_set_meta(t, "total_bb", buf);
	}
	if (rc == 0 && last->bb_end > 0) {
		snprintf(buf, sizeof buf, "%" PRIu64, last->bb_end - last->bb_begin);
		rc = mpxkit_trace_set_meta(t, "last_step_bb", buf);
	}
	return rc;
}

int mpxkit_callgrind_collect(const char *base, mpxkit_trace **out, mpxkit_diag *diag)
{
	mpxkit_callgrind_dump *last = NULL, *d = NULL;
	mpxkit_trace *t = NULL;
	unsigned parts;
	int rc;

	if (base == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "callgrind: missing argument");
	rc = mpxkit_callgrind_read(base, &last, diag);
	if (rc < 0)
		return rc;
	parts = last->part == 0 ? 1 : last->part;
	rc = mpxkit_trace_new(&t, "step", last->n_events, (const char *const *)last->events, diag);
	if (rc < 0)
		goto fail;
	for (unsigned k = 1; k < parts; k++) {
		rc = read_numbered(base, k, last, &d, diag);
		if (rc < 0)
			goto fail;
		rc = mpxkit_trace_append(t, k - 1, d->totals);
		mpxkit_callgrind_dump_free(d);
		d = NULL;
		if (rc < 0)
			goto lib_fail;
	}
	rc = mpxkit_trace_append(t, parts - 1, last->totals);
	if (rc == 0)
		rc = set_collect_meta(t, last);
	if (rc < 0)
		goto lib_fail;
	mpxkit_callgrind_dump_free(last);
	*out = t;
	return 0;
lib_fail:
	rc = mpxkit_fail(diag, -rc, "%s: %s", base, mpxkit_strerror(rc));
fail:
	mpxkit_callgrind_dump_free(last);
	mpxkit_trace_free(t);
	return rc;
}

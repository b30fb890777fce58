/* SPDX-License-Identifier: BSD-3-Clause */
/* The .prof reader: streams the container's sections, checks every id and length before use. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "profile_impl.h"
#include "u64map.h"

struct mpxkit_profile {
	mpxkit_container_reader *cr;
	char *name;
	char *source, *time_unit;
	size_t n_events;
	char **events;
	size_t n_meta;
	char **meta_keys, **meta_values;
	size_t n_objects, n_files, n_functions, n_codes, n_threads;
	size_t cap_objects, cap_files, cap_functions, cap_codes, cap_threads;
	char **objects, **files;
	mpxkit_profile_function *functions;
	mpxkit_profile_code *codes;
	mpxkit_profile_thread *threads;
	mpxkit__u64map code_index, tid_index;
	/* the block being handed out */
	uint32_t *row_codes;
	uint64_t *counts;
	mpxkit_profile_jump *jumps;
	size_t cap_rows, cap_jumps;
	int have_window;
	uint64_t window, t_begin, t_len;
	int done;
};

/* The section being decoded, for messages. */
typedef struct section {
	mpxkit_profile *p;
	const char *tag;
	mpxkit_cursor c;
	mpxkit_diag *diag;
} section;

static int bad(section *s, const char *why)
{
	return mpxkit_fail(s->diag, MPXKIT_EFORMAT, "%s: %s section: %s", s->p->name, s->tag, why);
}

static int cursor_failed(section *s)
{
	if (s->c.error == -MPXKIT_ETRUNC)
		return mpxkit_fail(s->diag, MPXKIT_ETRUNC, "%s: %s section ends early", s->p->name,
				   s->tag);
	return bad(s, "malformed number or string");
}

static int oom(mpxkit_profile *p, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", p->name);
}

/* A string of 1 to max bytes (min 0 when empty_ok) as a new C string. */
static char *take_string(section *s, size_t max, int empty_ok, int *rc)
{
	size_t len;
	const char *v = mpxkit_cursor_string(&s->c, max, &len);
	char *copy;

	*rc = 0;
	if (s->c.error) {
		*rc = cursor_failed(s);
		return NULL;
	}
	if (len == 0 && !empty_ok) {
		*rc = bad(s, "empty name");
		return NULL;
	}
	copy = malloc(len + 1);
	if (copy == NULL) {
		*rc = oom(s->p, s->diag);
		return NULL;
	}
	memcpy(copy, v, len);
	copy[len] = '\0';
	return copy;
}

/* Room for n more entries in a table of `size` bytes each. */
static int table_room(section *s, void **arr, size_t *cap, size_t have, uint64_t n, size_t size)
{
	if (n == 0)
		return bad(s, "no entries");
	if (n > PROF_MAX_TABLE - have)
		return bad(s, "more entries than the format allows");
	/* Each entry takes at least one byte, so n is bounded by the payload. */
	if (n > mpxkit_cursor_left(&s->c))
		return bad(s, "more entries than bytes");
	if (mpxkit__reserve(arr, cap, have + n, size) < 0)
		return oom(s->p, s->diag);
	return 0;
}

/* The (first, n) opening every table section; first must continue the table. */
static int table_head(section *s, size_t have, uint64_t *n)
{
	uint64_t first = mpxkit_cursor_varint(&s->c);

	*n = mpxkit_cursor_varint(&s->c);
	if (s->c.error)
		return cursor_failed(s);
	if (first != have)
		return bad(s, "first id does not continue the table");
	return 0;
}

static int check_done(section *s)
{
	if (s->c.error)
		return cursor_failed(s);
	if (mpxkit_cursor_left(&s->c) != 0)
		return bad(s, "bytes after the last entry");
	return 0;
}

/* ---- HEAD and META --------------------------------------------------------------------------- */

static int read_meta(section *s, uint64_t n)
{
	mpxkit_profile *p = s->p;
	int rc;

	if (n > MPXKIT_PROFILE_MAX_META - p->n_meta)
		return bad(s, "more metadata than the format allows");
	if (n > mpxkit_cursor_left(&s->c))
		return bad(s, "more metadata than bytes");
	char **k = realloc(p->meta_keys, (p->n_meta + n + 1) * sizeof *k);
	if (k == NULL)
		return oom(p, s->diag);
	p->meta_keys = k;
	char **v = realloc(p->meta_values, (p->n_meta + n + 1) * sizeof *v);
	if (v == NULL)
		return oom(p, s->diag);
	p->meta_values = v;
	for (uint64_t i = 0; i < n; i++) {
		char *key = take_string(s, PROF_MAX_META_KEY, 0, &rc), *value;
		if (key == NULL)
			return rc;
		if (!mpxkit__profile_meta_key_ok(key, strlen(key)) ||
		    mpxkit_profile_meta(p, key) != NULL) {
			free(key);
			return bad(s, "bad or repeated metadata key");
		}
		value = take_string(s, PROF_MAX_META_VALUE, 1, &rc);
		if (value == NULL) {
			free(key);
			return rc;
		}
		p->meta_keys[p->n_meta] = key;
		p->meta_values[p->n_meta++] = value;
		if (!mpxkit__profile_meta_value_ok(value, strlen(value)))
			return bad(s, "metadata value with a line break");
	}
	return 0;
}

static int read_head(section *s)
{
	mpxkit_profile *p = s->p;
	uint64_t n;
	int rc;

	if ((p->source = take_string(s, 16, 0, &rc)) == NULL ||
	    (p->time_unit = take_string(s, 16, 0, &rc)) == NULL)
		return rc;
	if (strcmp(p->source, "callgrind") != 0 && strcmp(p->source, "perf") != 0)
		return bad(s, "source is neither callgrind nor perf");
	if (strcmp(p->time_unit, "bb") != 0 && strcmp(p->time_unit, "ns") != 0)
		return bad(s, "time unit is neither bb nor ns");
	n = mpxkit_cursor_varint(&s->c);
	if (s->c.error)
		return cursor_failed(s);
	if (n == 0 || n > MPXKIT_PROFILE_MAX_EVENTS)
		return bad(s, "number of events out of range (1 to 64)");
	p->events = calloc(n, sizeof *p->events);
	if (p->events == NULL)
		return oom(p, s->diag);
	for (size_t i = 0; i < n; i++) {
		if ((p->events[i] = take_string(s, PROF_MAX_EVENT_NAME, 0, &rc)) == NULL)
			return rc;
		p->n_events++;
		if (!mpxkit__profile_event_name_ok(p->events[i], strlen(p->events[i])))
			return bad(s, "event name with a blank or a non-ASCII byte");
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->events[i], p->events[j]) == 0)
				return bad(s, "event named twice");
	}
	n = mpxkit_cursor_varint(&s->c);
	if (s->c.error)
		return cursor_failed(s);
	if ((rc = read_meta(s, n)) < 0)
		return rc;
	return check_done(s);
}

/* ---- symbol tables --------------------------------------------------------------------------- */

static int read_strings(section *s, char ***table, size_t *n_have, size_t *cap)
{
	uint64_t n;
	int rc;

	if ((rc = table_head(s, *n_have, &n)) < 0 ||
	    (rc = table_room(s, (void **)table, cap, *n_have, n, sizeof **table)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		char *name = take_string(s, MPXKIT_PROFILE_MAX_NAME, 0, &rc);
		if (name == NULL)
			return rc;
		(*table)[(*n_have)++] = name;
	}
	return check_done(s);
}

static int read_functions(section *s)
{
	mpxkit_profile *p = s->p;
	uint64_t n;
	int rc;

	if ((rc = table_head(s, p->n_functions, &n)) < 0 ||
	    (rc = table_room(s, (void **)&p->functions, &p->cap_functions, p->n_functions, n,
			     sizeof *p->functions)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		mpxkit_profile_function *f = &p->functions[p->n_functions];
		char *name = take_string(s, MPXKIT_PROFILE_MAX_NAME, 0, &rc);
		uint64_t object;

		if (name == NULL)
			return rc;
		f->name = name;
		p->n_functions++;
		object = mpxkit_cursor_varint(&s->c);
		f->lo = mpxkit_cursor_varint(&s->c);
		f->size = mpxkit_cursor_varint(&s->c);
		if (s->c.error)
			return cursor_failed(s);
		if (object >= p->n_objects)
			return bad(s, "function of an undefined object");
		if (f->size > UINT64_MAX - f->lo)
			return bad(s, "function range beyond 2^64");
		f->object = (uint32_t)object;
	}
	return check_done(s);
}

static uint64_t code_key(uint32_t object, uint64_t address)
{
	return mpxkit__hash_u64(address) ^ mpxkit__hash_u64((uint64_t)object << 1 | 1);
}

static int read_codes(section *s)
{
	mpxkit_profile *p = s->p;
	uint64_t n;
	int rc;

	if ((rc = table_head(s, p->n_codes, &n)) < 0 ||
	    (rc = table_room(s, (void **)&p->codes, &p->cap_codes, p->n_codes, n,
			     sizeof *p->codes)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t fn = mpxkit_cursor_varint(&s->c), file = mpxkit_cursor_varint(&s->c);
		uint64_t line = mpxkit_cursor_varint(&s->c), address = mpxkit_cursor_varint(&s->c);
		uint32_t object, v;
		size_t cursor;
		uint64_t key;

		if (s->c.error)
			return cursor_failed(s);
		if (fn >= p->n_functions || file >= p->n_files)
			return bad(s, "code entry of an undefined function or file");
		if (line > UINT32_MAX)
			return bad(s, "line number above 2^32-1");
		object = p->functions[fn].object;
		key = code_key(object, address);
		for (int found = mpxkit__u64map_find(&p->code_index, key, &v, &cursor); found;
		     found = mpxkit__u64map_find_next(&p->code_index, key, &v, &cursor))
			if (p->codes[v].address == address &&
			    p->functions[p->codes[v].function].object == object)
				return bad(s, "an address defined twice");
		if (mpxkit__u64map_add(&p->code_index, key, (uint32_t)p->n_codes) < 0)
			return oom(p, s->diag);
		p->codes[p->n_codes].function = (uint32_t)fn;
		p->codes[p->n_codes].file = (uint32_t)file;
		p->codes[p->n_codes].line = (uint32_t)line;
		p->codes[p->n_codes++].address = address;
	}
	return check_done(s);
}

static int read_threads(section *s)
{
	mpxkit_profile *p = s->p;
	uint64_t n;
	int rc;

	if ((rc = table_head(s, p->n_threads, &n)) < 0 ||
	    (rc = table_room(s, (void **)&p->threads, &p->cap_threads, p->n_threads, n,
			     sizeof *p->threads)) < 0)
		return rc;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t tid = mpxkit_cursor_varint(&s->c);
		uint32_t v;
		char *name;

		if (s->c.error)
			return cursor_failed(s);
		if (mpxkit__u64map_find(&p->tid_index, tid, &v, NULL))
			return bad(s, "a thread id defined twice");
		if ((name = take_string(s, PROF_MAX_THREAD_NAME, 1, &rc)) == NULL)
			return rc;
		if (mpxkit__u64map_add(&p->tid_index, tid, (uint32_t)p->n_threads) < 0) {
			free(name);
			return oom(p, s->diag);
		}
		p->threads[p->n_threads].tid = tid;
		p->threads[p->n_threads++].name = name;
	}
	return check_done(s);
}

/* ---- blocks ---------------------------------------------------------------------------------- */

static int read_block(section *s, mpxkit_profile_block *b)
{
	mpxkit_profile *p = s->p;
	size_t ne = p->n_events;
	uint64_t window = mpxkit_cursor_varint(&s->c), t_begin = mpxkit_cursor_varint(&s->c);
	uint64_t t_len = mpxkit_cursor_varint(&s->c), thread = mpxkit_cursor_varint(&s->c);
	uint64_t n_rows = mpxkit_cursor_varint(&s->c), code = 0, n_jumps;

	if (s->c.error)
		return cursor_failed(s);
	if (p->have_window && window < p->window)
		return bad(s, "window before the previous block's");
	if (p->have_window && window == p->window && (t_begin != p->t_begin || t_len != p->t_len))
		return bad(s, "a window's time differs between its blocks");
	if (t_len > UINT64_MAX - t_begin)
		return bad(s, "window time beyond 2^64");
	if (thread >= p->n_threads)
		return bad(s, "block of an undefined thread");
	/* A row takes at least 1 + n_events bytes, so n_rows is bounded before anything is
	 * allocated. */
	if (n_rows > PROF_MAX_ROWS || n_rows > mpxkit_cursor_left(&s->c) / (1 + ne))
		return bad(s, "more rows than the section holds");
	if (n_rows > p->cap_rows) {
		uint32_t *c = realloc(p->row_codes, n_rows * sizeof *c);
		if (c)
			p->row_codes = c;
		uint64_t *v = realloc(p->counts, n_rows * ne * sizeof *v);
		if (v)
			p->counts = v;
		if (c == NULL || v == NULL)
			return oom(p, s->diag);
		p->cap_rows = n_rows;
	}
	for (uint64_t i = 0; i < n_rows; i++) {
		uint64_t step = mpxkit_cursor_varint(&s->c);
		if (i > 0 && step == 0)
			return bad(s, "rows not in increasing code order");
		if (step > UINT64_MAX - code)
			return bad(s, "code id beyond 2^64");
		code += step;
		if (code >= p->n_codes)
			return bad(s, "row of an undefined code address");
		p->row_codes[i] = (uint32_t)code;
		for (size_t e = 0; e < ne; e++)
			p->counts[i * ne + e] = mpxkit_cursor_varint(&s->c);
		if (s->c.error)
			return cursor_failed(s);
	}
	n_jumps = mpxkit_cursor_varint(&s->c);
	if (s->c.error)
		return cursor_failed(s);
	if (n_jumps > PROF_MAX_ROWS || n_jumps > mpxkit_cursor_left(&s->c) / 3)
		return bad(s, "more jumps than the section holds");
	if (n_jumps > p->cap_jumps) {
		mpxkit_profile_jump *j = realloc(p->jumps, n_jumps * sizeof *j);
		if (j == NULL)
			return oom(p, s->diag);
		p->jumps = j;
		p->cap_jumps = n_jumps;
	}
	for (uint64_t i = 0; i < n_jumps; i++) {
		uint64_t from = mpxkit_cursor_varint(&s->c), to = mpxkit_cursor_varint(&s->c);
		uint64_t count = mpxkit_cursor_varint(&s->c);
		if (s->c.error)
			return cursor_failed(s);
		if (from >= p->n_codes || to >= p->n_codes)
			return bad(s, "jump of an undefined code address");
		if (count == 0)
			return bad(s, "jump taken 0 times");
		p->jumps[i].from = (uint32_t)from;
		p->jumps[i].to = (uint32_t)to;
		p->jumps[i].count = count;
	}
	if (check_done(s) < 0)
		return -MPXKIT_EFORMAT;
	p->have_window = 1;
	p->window = window;
	p->t_begin = t_begin;
	p->t_len = t_len;
	b->window = window;
	b->t_begin = t_begin;
	b->t_len = t_len;
	b->thread = (uint32_t)thread;
	b->n_rows = n_rows;
	b->codes = p->row_codes;
	b->counts = p->counts;
	b->n_jumps = n_jumps;
	b->jumps = p->jumps;
	return 0;
}

/* ---- the file -------------------------------------------------------------------------------- */

static const char *tag_name(uint32_t tag, char buf[5])
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(tag >> (8 * i));
		buf[i] = (c >= ' ' && c <= '~') ? (char)c : '?';
	}
	buf[4] = '\0';
	return buf;
}

int mpxkit_profile_next(mpxkit_profile *p, mpxkit_profile_block *b, mpxkit_diag *diag)
{
	if (p == NULL || b == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	while (!p->done) {
		uint32_t tag;
		const void *payload;
		size_t len;
		char name[5];
		section s = {p, NULL, {NULL, NULL, 0}, diag};
		int rc = mpxkit_container_next(p->cr, &tag, &payload, &len, diag);

		if (rc < 0)
			return rc;
		if (rc == 0) {
			p->done = 1;
			break;
		}
		s.tag = tag_name(tag, name);
		mpxkit_cursor_init(&s.c, payload, len);
		switch (tag) {
		case PROF_WIND:
			rc = read_block(&s, b);
			return rc < 0 ? rc : 1;
		case PROF_META: {
			uint64_t n = mpxkit_cursor_varint(&s.c);
			if (s.c.error)
				rc = cursor_failed(&s);
			else if (n == 0)
				rc = bad(&s, "no entries");
			else if ((rc = read_meta(&s, n)) == 0)
				rc = check_done(&s);
			break;
		}
		case PROF_OBJS:
			rc = read_strings(&s, &p->objects, &p->n_objects, &p->cap_objects);
			break;
		case PROF_FILS:
			rc = read_strings(&s, &p->files, &p->n_files, &p->cap_files);
			break;
		case PROF_FUNS:
			rc = read_functions(&s);
			break;
		case PROF_CODE:
			rc = read_codes(&s);
			break;
		case PROF_THRD:
			rc = read_threads(&s);
			break;
		case PROF_HEAD:
			rc = bad(&s, "a second HEAD section");
			break;
		default:
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: unknown section '%s'", p->name,
					 name);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int open_common(mpxkit_profile *p, mpxkit_diag *diag)
{
	uint32_t tag;
	const void *payload;
	size_t len;
	section s = {p, "HEAD", {NULL, NULL, 0}, diag};
	int rc = mpxkit_container_next(p->cr, &tag, &payload, &len, diag);

	if (rc < 0)
		return rc;
	if (rc == 0 || tag != PROF_HEAD)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: the first section is not HEAD",
				   p->name);
	mpxkit_cursor_init(&s.c, payload, len);
	return read_head(&s);
}

static int open_with(mpxkit_profile **out, const char *name, const void *buf, size_t len,
		     const char *path, mpxkit_diag *diag)
{
	mpxkit_profile *p;
	int rc;

	if (out == NULL || name == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	p = calloc(1, sizeof *p);
	if (p == NULL || (p->name = strdup(name)) == NULL) {
		free(p);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", name);
	}
	if (path)
		rc = mpxkit_container_open(&p->cr, path, &mpxkit__profile_format, diag);
	else
		rc = mpxkit_container_open_buffer(&p->cr, buf, len, name, &mpxkit__profile_format,
						  diag);
	if (rc < 0)
		p->cr = NULL;
	else
		rc = open_common(p, diag);
	if (rc < 0) {
		mpxkit_profile_close(p);
		return rc;
	}
	*out = p;
	return 0;
}

int mpxkit_profile_open(mpxkit_profile **out, const char *path, mpxkit_diag *diag)
{
	if (path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	return open_with(out, path, NULL, 0, path, diag);
}

int mpxkit_profile_open_buffer(mpxkit_profile **out, const void *buf, size_t len, const char *name,
			       mpxkit_diag *diag)
{
	if (buf == NULL && len > 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	return open_with(out, name ? name : "<profile>", buf, len, NULL, diag);
}

/* ---- accessors ------------------------------------------------------------------------------- */

const char *mpxkit_profile_source(const mpxkit_profile *p)
{
	return p->source;
}

const char *mpxkit_profile_time_unit(const mpxkit_profile *p)
{
	return p->time_unit;
}

size_t mpxkit_profile_n_events(const mpxkit_profile *p)
{
	return p->n_events;
}

const char *mpxkit_profile_event(const mpxkit_profile *p, size_t i)
{
	return i < p->n_events ? p->events[i] : NULL;
}

const char *mpxkit_profile_meta(const mpxkit_profile *p, const char *key)
{
	for (size_t i = 0; i < p->n_meta; i++)
		if (strcmp(p->meta_keys[i], key) == 0)
			return p->meta_values[i];
	return NULL;
}

size_t mpxkit_profile_n_meta(const mpxkit_profile *p)
{
	return p->n_meta;
}

int mpxkit_profile_meta_at(const mpxkit_profile *p, size_t i, const char **key, const char **value)
{
	if (i >= p->n_meta)
		return -MPXKIT_ERANGE;
	*key = p->meta_keys[i];
	*value = p->meta_values[i];
	return 0;
}

size_t mpxkit_profile_n_codes(const mpxkit_profile *p)
{
	return p->n_codes;
}

const mpxkit_profile_code *mpxkit_profile_code_at(const mpxkit_profile *p, uint32_t id)
{
	return id < p->n_codes ? &p->codes[id] : NULL;
}

size_t mpxkit_profile_n_functions(const mpxkit_profile *p)
{
	return p->n_functions;
}

const mpxkit_profile_function *mpxkit_profile_function_at(const mpxkit_profile *p, uint32_t id)
{
	return id < p->n_functions ? &p->functions[id] : NULL;
}

const char *mpxkit_profile_object_name(const mpxkit_profile *p, uint32_t id)
{
	return id < p->n_objects ? p->objects[id] : "";
}

const char *mpxkit_profile_file_name(const mpxkit_profile *p, uint32_t id)
{
	return id < p->n_files ? p->files[id] : "";
}

size_t mpxkit_profile_n_threads(const mpxkit_profile *p)
{
	return p->n_threads;
}

const mpxkit_profile_thread *mpxkit_profile_thread_at(const mpxkit_profile *p, uint32_t id)
{
	return id < p->n_threads ? &p->threads[id] : NULL;
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i]);
	free(s);
}

void mpxkit_profile_close(mpxkit_profile *p)
{
	if (p == NULL)
		return;
	mpxkit_container_close(p->cr);
	free(p->name);
	free(p->source);
	free(p->time_unit);
	free_strings(p->events, p->n_events);
	free_strings(p->meta_keys, p->n_meta);
	free_strings(p->meta_values, p->n_meta);
	free_strings(p->objects, p->n_objects);
	free_strings(p->files, p->n_files);
	for (size_t i = 0; i < p->n_functions; i++)
		free((char *)p->functions[i].name);
	free(p->functions);
	free(p->codes);
	for (size_t i = 0; i < p->n_threads; i++)
		free((char *)p->threads[i].name);
	free(p->threads);
	mpxkit__u64map_free(&p->code_index);
	mpxkit__u64map_free(&p->tid_index);
	free(p->row_codes);
	free(p->counts);
	free(p->jumps);
	free(p);
}

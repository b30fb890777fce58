/* SPDX-License-Identifier: BSD-3-Clause */
/* The .prof writer: interned symbol tables flushed ahead of the blocks that use them. */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "profile_impl.h"
#include "u64map.h"

const mpxkit_container_format mpxkit__profile_format = {
    .name = "profile",
    .magic = MPXKIT_PROFILE_MAGIC,
    .min_version = MPXKIT_PROFILE_VERSION,
    .max_version = MPXKIT_PROFILE_VERSION,
    .max_section = MPXKIT_PROFILE_MAX_SECTION,
    .max_sections = 0,
};

int mpxkit__profile_event_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > PROF_MAX_EVENT_NAME)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return 0;
	return 1;
}

int mpxkit__profile_meta_key_ok(const char *s, size_t len)
{
	if (len == 0 || len > PROF_MAX_META_KEY)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

int mpxkit__profile_meta_value_ok(const char *s, size_t len)
{
	return len <= PROF_MAX_META_VALUE && memchr(s, '\r', len) == NULL &&
	       memchr(s, '\n', len) == NULL && memchr(s, '\0', len) == NULL;
}

/* One interned table: entries in id order, a hash index, and the ids not yet written. */
typedef struct table {
	mpxkit__u64map index;
	size_t n, flushed;
} table;

typedef struct row {
	uint32_t code;
	size_t src; /* the row's index in the block given */
} row;

struct mpxkit_profile_writer {
	mpxkit_container_writer *cw;
	char *path;
	size_t n_events;
	int head_written;
	mpxkit_bytes head; /* HEAD without its meta, written at the first flush */
	/* metadata: keys for uniqueness, pairs waiting to be written */
	char **meta_keys, **meta_values;
	size_t n_meta, meta_flushed, cap_meta;
	table objects, files, functions, codes, threads;
	char **object_names, **file_names, **function_names;
	uint32_t *function_object;
	uint64_t *function_lo, *function_size;
	uint32_t *code_function, *code_file, *code_line;
	uint64_t *code_address;
	uint64_t *thread_tid;
	char **thread_names;
	size_t cap_objects, cap_files, cap_functions, cap_codes, cap_threads;
	uint64_t last_window;
	int have_window;
	row *rows; /* block scratch */
	size_t cap_rows;
	mpxkit_profile_jump *jumps;
	size_t cap_jumps;
	uint64_t *sums;
	size_t cap_sums;
};

static int oom(mpxkit_profile_writer *w, mpxkit_diag *diag)
{
	return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", w->path);
}

static int put_section(mpxkit_profile_writer *w, uint32_t tag, mpxkit_bytes *b, mpxkit_diag *diag)
{
	int rc;

	if (b->oom)
		return oom(w, diag);
	rc = mpxkit_container_put(w->cw, tag, b->data, b->len, diag);
	b->len = 0;
	return rc;
}

int mpxkit_profile_create(mpxkit_profile_writer **out, const char *path, const char *source,
			  const char *time_unit, const char *const *events, size_t n_events,
			  mpxkit_diag *diag)
{
	mpxkit_profile_writer *w;
	int rc;

	if (out == NULL || path == NULL || source == NULL || time_unit == NULL || events == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if (strcmp(source, "callgrind") != 0 && strcmp(source, "perf") != 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: unknown source '%s'", source);
	if (strcmp(time_unit, "bb") != 0 && strcmp(time_unit, "ns") != 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: unknown time unit '%s'",
				   time_unit);
	if (n_events == 0 || n_events > MPXKIT_PROFILE_MAX_EVENTS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: %zu events (1 to %d)", n_events,
				   MPXKIT_PROFILE_MAX_EVENTS);
	for (size_t i = 0; i < n_events; i++) {
		if (events[i] == NULL ||
		    !mpxkit__profile_event_name_ok(events[i], strlen(events[i])))
			return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: bad event name '%s'",
					   events[i] ? events[i] : "(null)");
		for (size_t j = 0; j < i; j++)
			if (strcmp(events[i], events[j]) == 0)
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "profile: event '%s' named twice", events[i]);
	}
	w = calloc(1, sizeof *w);
	if (w == NULL || (w->path = strdup(path)) == NULL) {
		free(w);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	}
	w->n_events = n_events;
	mpxkit_bytes_string(&w->head, source);
	mpxkit_bytes_string(&w->head, time_unit);
	mpxkit_bytes_varint(&w->head, n_events);
	for (size_t i = 0; i < n_events; i++)
		mpxkit_bytes_string(&w->head, events[i]);
	rc = mpxkit_container_create(&w->cw, path, &mpxkit__profile_format, MPXKIT_PROFILE_VERSION,
				     diag);
	if (rc < 0) {
		w->cw = NULL;
		mpxkit_profile_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

int mpxkit_profile_add_meta(mpxkit_profile_writer *w, const char *key, const char *value,
			    mpxkit_diag *diag)
{
	if (w == NULL || key == NULL || value == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if (!mpxkit__profile_meta_key_ok(key, strlen(key)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: bad metadata key '%s'", key);
	if (!mpxkit__profile_meta_value_ok(value, strlen(value)))
		return mpxkit_fail(
		    diag, MPXKIT_EINVAL,
		    "profile: metadata '%s' is longer than %d bytes or has a line break", key,
		    PROF_MAX_META_VALUE);
	for (size_t i = 0; i < w->n_meta; i++)
		if (strcmp(w->meta_keys[i], key) == 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: metadata '%s' set twice",
					   key);
	if (w->n_meta == MPXKIT_PROFILE_MAX_META)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: more than %d metadata pairs",
				   MPXKIT_PROFILE_MAX_META);
	if (mpxkit__reserve((void **)&w->meta_keys, &w->cap_meta, w->n_meta + 1,
			    sizeof *w->meta_keys) < 0)
		return oom(w, diag);
	/* meta_values follows meta_keys' capacity. */
	char **values = realloc(w->meta_values, w->cap_meta * sizeof *values);
	if (values == NULL)
		return oom(w, diag);
	w->meta_values = values;
	w->meta_keys[w->n_meta] = strdup(key);
	w->meta_values[w->n_meta] = strdup(value);
	if (w->meta_keys[w->n_meta] == NULL || w->meta_values[w->n_meta] == NULL) {
		free(w->meta_keys[w->n_meta]);
		free(w->meta_values[w->n_meta]);
		return oom(w, diag);
	}
	w->n_meta++;
	return 0;
}

/* ---- interning ------------------------------------------------------------------------------- */

static int check_name(mpxkit_profile_writer *w, const char *what, const char *name,
		      mpxkit_diag *diag)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > MPXKIT_PROFILE_MAX_NAME)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: %s name of %zu bytes (1 to %d)",
				   w->path, what, len, MPXKIT_PROFILE_MAX_NAME);
	return 0;
}

static int table_full(mpxkit_profile_writer *w, const table *t, const char *what, mpxkit_diag *diag)
{
	if (t->n >= PROF_MAX_TABLE)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: more than %u %s", w->path,
				   (unsigned)PROF_MAX_TABLE, what);
	return 0;
}

/* A string table's id for name, added when new. */
static int intern_string(mpxkit_profile_writer *w, table *t, char ***names, size_t *cap,
			 const char *what, const char *name, uint32_t *id, mpxkit_diag *diag)
{
	uint64_t h;
	size_t cursor;
	uint32_t v;
	int rc;

	if ((rc = check_name(w, what, name, diag)) < 0)
		return rc;
	h = mpxkit__hash_bytes(name, strlen(name));
	for (int found = mpxkit__u64map_find(&t->index, h, &v, &cursor); found;
	     found = mpxkit__u64map_find_next(&t->index, h, &v, &cursor))
		if (strcmp((*names)[v], name) == 0) {
			*id = v;
			return 0;
		}
	if ((rc = table_full(w, t, what, diag)) < 0)
		return rc;
	if (mpxkit__reserve((void **)names, cap, t->n + 1, sizeof **names) < 0 ||
	    ((*names)[t->n] = strdup(name)) == NULL ||
	    mpxkit__u64map_add(&t->index, h, (uint32_t)t->n) < 0)
		return oom(w, diag);
	*id = (uint32_t)t->n++;
	return 0;
}

int mpxkit_profile_add_object(mpxkit_profile_writer *w, const char *name, uint32_t *id,
			      mpxkit_diag *diag)
{
	if (w == NULL || id == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	return intern_string(w, &w->objects, &w->object_names, &w->cap_objects, "object", name, id,
			     diag);
}

int mpxkit_profile_add_file(mpxkit_profile_writer *w, const char *name, uint32_t *id,
			    mpxkit_diag *diag)
{
	if (w == NULL || id == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	return intern_string(w, &w->files, &w->file_names, &w->cap_files, "file", name, id, diag);
}

int mpxkit_profile_add_function(mpxkit_profile_writer *w, const char *name, uint32_t object,
				uint64_t lo, uint64_t size, uint32_t *id, mpxkit_diag *diag)
{
	uint64_t h;
	size_t cursor, n;
	uint32_t v;
	int rc;

	if (w == NULL || id == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if ((rc = check_name(w, "function", name, diag)) < 0)
		return rc;
	if (object >= w->objects.n)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: function %s: no object %u", w->path,
				   name, object);
	if (size > UINT64_MAX - lo)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: function %s: range beyond 2^64",
				   w->path, name);
	h = mpxkit__hash_bytes(name, strlen(name)) ^ mpxkit__hash_u64(object);
	for (int found = mpxkit__u64map_find(&w->functions.index, h, &v, &cursor); found;
	     found = mpxkit__u64map_find_next(&w->functions.index, h, &v, &cursor))
		if (w->function_object[v] == object && strcmp(w->function_names[v], name) == 0) {
			*id = v;
			return 0;
		}
	if ((rc = table_full(w, &w->functions, "functions", diag)) < 0)
		return rc;
	n = w->functions.n;
	if (n >= w->cap_functions) {
		size_t cap = w->cap_functions;
		if (mpxkit__reserve((void **)&w->function_names, &cap, n + 1,
				    sizeof *w->function_names) < 0)
			return oom(w, diag);
		uint32_t *o = realloc(w->function_object, cap * sizeof *o);
		if (o)
			w->function_object = o;
		uint64_t *l = realloc(w->function_lo, cap * sizeof *l);
		if (l)
			w->function_lo = l;
		uint64_t *z = realloc(w->function_size, cap * sizeof *z);
		if (z)
			w->function_size = z;
		if (o == NULL || l == NULL || z == NULL)
			return oom(w, diag);
		w->cap_functions = cap;
	}
	if ((w->function_names[n] = strdup(name)) == NULL ||
	    mpxkit__u64map_add(&w->functions.index, h, (uint32_t)n) < 0)
		return oom(w, diag);
	w->function_object[n] = object;
	w->function_lo[n] = lo;
	w->function_size[n] = size;
	*id = (uint32_t)w->functions.n++;
	return 0;
}

static uint64_t code_key(uint32_t object, uint64_t address)
{
	return mpxkit__hash_u64(address) ^ mpxkit__hash_u64((uint64_t)object << 1 | 1);
}

int mpxkit_profile_add_code(mpxkit_profile_writer *w, uint32_t function, uint32_t file,
			    uint32_t line, uint64_t address, uint32_t *id, mpxkit_diag *diag)
{
	uint32_t object, v;
	uint64_t h;
	size_t cursor, n;
	int rc;

	if (w == NULL || id == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if (function >= w->functions.n || file >= w->files.n)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: code entry names an undefined %s",
				   w->path, function >= w->functions.n ? "function" : "file");
	object = w->function_object[function];
	h = code_key(object, address);
	for (int found = mpxkit__u64map_find(&w->codes.index, h, &v, &cursor); found;
	     found = mpxkit__u64map_find_next(&w->codes.index, h, &v, &cursor))
		if (w->code_address[v] == address &&
		    w->function_object[w->code_function[v]] == object) {
			/* An address has one code entry: the first function and line named. */
			*id = v;
			return 0;
		}
	if ((rc = table_full(w, &w->codes, "code addresses", diag)) < 0)
		return rc;
	n = w->codes.n;
	if (n >= w->cap_codes) {
		size_t cap = w->cap_codes ? 2 * w->cap_codes : 256;
		uint32_t *f = realloc(w->code_function, cap * sizeof *f);
		if (f)
			w->code_function = f;
		uint32_t *fl = realloc(w->code_file, cap * sizeof *fl);
		if (fl)
			w->code_file = fl;
		uint32_t *l = realloc(w->code_line, cap * sizeof *l);
		if (l)
			w->code_line = l;
		uint64_t *a = realloc(w->code_address, cap * sizeof *a);
		if (a)
			w->code_address = a;
		if (f == NULL || fl == NULL || l == NULL || a == NULL)
			return oom(w, diag);
		w->cap_codes = cap;
	}
	if (mpxkit__u64map_add(&w->codes.index, h, (uint32_t)n) < 0)
		return oom(w, diag);
	w->code_function[n] = function;
	w->code_file[n] = file;
	w->code_line[n] = line;
	w->code_address[n] = address;
	*id = (uint32_t)w->codes.n++;
	return 0;
}

int mpxkit_profile_add_thread(mpxkit_profile_writer *w, uint64_t tid, const char *name,
			      uint32_t *id, mpxkit_diag *diag)
{
	uint32_t v;
	size_t n, cap;
	int rc;

	if (w == NULL || id == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if (name == NULL)
		name = "";
	if (strlen(name) > PROF_MAX_THREAD_NAME)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: thread name longer than %d bytes",
				   w->path, PROF_MAX_THREAD_NAME);
	if (mpxkit__u64map_find(&w->threads.index, tid, &v, NULL)) {
		*id = v;
		return 0;
	}
	if ((rc = table_full(w, &w->threads, "threads", diag)) < 0)
		return rc;
	n = w->threads.n;
	cap = w->cap_threads;
	if (mpxkit__reserve((void **)&w->thread_names, &cap, n + 1, sizeof *w->thread_names) < 0)
		return oom(w, diag);
	if (cap != w->cap_threads) {
		uint64_t *t = realloc(w->thread_tid, cap * sizeof *t);
		if (t == NULL)
			return oom(w, diag);
		w->thread_tid = t;
		w->cap_threads = cap;
	}
	if ((w->thread_names[n] = strdup(name)) == NULL ||
	    mpxkit__u64map_add(&w->threads.index, tid, (uint32_t)n) < 0)
		return oom(w, diag);
	w->thread_tid[n] = tid;
	*id = (uint32_t)w->threads.n++;
	return 0;
}

/* ---- flushing -------------------------------------------------------------------------------- */

static void put_meta_pairs(mpxkit_profile_writer *w, mpxkit_bytes *b)
{
	mpxkit_bytes_varint(b, w->n_meta - w->meta_flushed);
	for (size_t i = w->meta_flushed; i < w->n_meta; i++) {
		mpxkit_bytes_string(b, w->meta_keys[i]);
		mpxkit_bytes_string(b, w->meta_values[i]);
	}
	w->meta_flushed = w->n_meta;
}

/* Every table entry not written yet, in the order their references need. */
static int flush_tables(mpxkit_profile_writer *w, mpxkit_diag *diag)
{
	mpxkit_bytes b = {NULL, 0, 0, 0};
	int rc = 0;

	if (!w->head_written) {
		put_meta_pairs(w, &w->head);
		if ((rc = put_section(w, PROF_HEAD, &w->head, diag)) < 0)
			goto done;
		w->head_written = 1;
	} else if (w->meta_flushed < w->n_meta) {
		put_meta_pairs(w, &b);
		if ((rc = put_section(w, PROF_META, &b, diag)) < 0)
			goto done;
	}
	/* Strings are at most 4 KiB, so sections close well before the container's bound. */
#define FLUSH_STRINGS(tbl, names, tag)                                                             \
	while (rc == 0 && (tbl).flushed < (tbl).n) {                                               \
		size_t end = (tbl).flushed;                                                        \
		size_t bytes = 0;                                                                  \
		while (end < (tbl).n && bytes < MPXKIT_PROFILE_MAX_SECTION / 2)                    \
			bytes += strlen((names)[end++]) + 10;                                      \
		mpxkit_bytes_varint(&b, (tbl).flushed);                                            \
		mpxkit_bytes_varint(&b, end - (tbl).flushed);                                      \
		for (size_t i = (tbl).flushed; i < end; i++)                                       \
			mpxkit_bytes_string(&b, (names)[i]);                                       \
		rc = put_section(w, tag, &b, diag);                                                \
		(tbl).flushed = end;                                                               \
	}
	FLUSH_STRINGS(w->objects, w->object_names, PROF_OBJS)
	FLUSH_STRINGS(w->files, w->file_names, PROF_FILS)
#undef FLUSH_STRINGS
	while (rc == 0 && w->functions.flushed < w->functions.n) {
		size_t first = w->functions.flushed, end = first, bytes = 0;
		while (end < w->functions.n && bytes < MPXKIT_PROFILE_MAX_SECTION / 2)
			bytes += strlen(w->function_names[end++]) + 40;
		mpxkit_bytes_varint(&b, first);
		mpxkit_bytes_varint(&b, end - first);
		for (size_t i = first; i < end; i++) {
			mpxkit_bytes_string(&b, w->function_names[i]);
			mpxkit_bytes_varint(&b, w->function_object[i]);
			mpxkit_bytes_varint(&b, w->function_lo[i]);
			mpxkit_bytes_varint(&b, w->function_size[i]);
		}
		rc = put_section(w, PROF_FUNS, &b, diag);
		w->functions.flushed = end;
	}
	while (rc == 0 && w->codes.flushed < w->codes.n) {
		/* At most 40 bytes an entry: a million entries stay far below the bound. */
		size_t first = w->codes.flushed, end = w->codes.n;
		if (end - first > 1000000)
			end = first + 1000000;
		mpxkit_bytes_varint(&b, first);
		mpxkit_bytes_varint(&b, end - first);
		for (size_t i = first; i < end; i++) {
			mpxkit_bytes_varint(&b, w->code_function[i]);
			mpxkit_bytes_varint(&b, w->code_file[i]);
			mpxkit_bytes_varint(&b, w->code_line[i]);
			mpxkit_bytes_varint(&b, w->code_address[i]);
		}
		rc = put_section(w, PROF_CODE, &b, diag);
		w->codes.flushed = end;
	}
	while (rc == 0 && w->threads.flushed < w->threads.n) {
		size_t first = w->threads.flushed, end = w->threads.n;
		if (end - first > 100000)
			end = first + 100000;
		mpxkit_bytes_varint(&b, first);
		mpxkit_bytes_varint(&b, end - first);
		for (size_t i = first; i < end; i++) {
			mpxkit_bytes_varint(&b, w->thread_tid[i]);
			mpxkit_bytes_string(&b, w->thread_names[i]);
		}
		rc = put_section(w, PROF_THRD, &b, diag);
		w->threads.flushed = end;
	}
done:
	mpxkit_bytes_free(&b);
	return rc;
}

/* ---- blocks ---------------------------------------------------------------------------------- */

static int cmp_row(const void *a, const void *b)
{
	const row *x = a, *y = b;

	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

static int cmp_jump(const void *a, const void *b)
{
	const mpxkit_profile_jump *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Sorts the block's rows by code and sums repeated codes into w->sums; the row count. */
static int merge_rows(mpxkit_profile_writer *w, const mpxkit_profile_block *b, size_t *n_out,
		      mpxkit_diag *diag)
{
	size_t n = 0, ne = w->n_events;

	if (b->n_rows > w->cap_rows) {
		row *r = realloc(w->rows, b->n_rows * sizeof *r);
		if (r == NULL)
			return oom(w, diag);
		w->rows = r;
		w->cap_rows = b->n_rows;
	}
	if (b->n_rows * ne > w->cap_sums) {
		uint64_t *s = realloc(w->sums, b->n_rows * ne * sizeof *s);
		if (s == NULL)
			return oom(w, diag);
		w->sums = s;
		w->cap_sums = b->n_rows * ne;
	}
	for (size_t i = 0; i < b->n_rows; i++) {
		if (b->codes[i] >= w->codes.n)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: row names undefined code %u",
					   w->path, b->codes[i]);
		w->rows[i].code = b->codes[i];
		w->rows[i].src = i;
	}
	if (b->n_rows > 1)
		qsort(w->rows, b->n_rows, sizeof *w->rows, cmp_row);
	for (size_t i = 0; i < b->n_rows; i++) {
		const uint64_t *c = b->counts + w->rows[i].src * ne;
		if (n > 0 && w->rows[n - 1].code == w->rows[i].code) {
			uint64_t *s = w->sums + (n - 1) * ne;
			for (size_t e = 0; e < ne; e++) {
				if (c[e] > UINT64_MAX - s[e])
					return mpxkit_fail(diag, MPXKIT_ERANGE,
							   "%s: counts of one row beyond 2^64-1",
							   w->path);
				s[e] += c[e];
			}
		} else {
			memcpy(w->sums + n * ne, c, ne * sizeof *c);
			w->rows[n++].code = w->rows[i].code;
		}
	}
	*n_out = n;
	return 0;
}

static int merge_jumps(mpxkit_profile_writer *w, const mpxkit_profile_block *b, size_t *n_out,
		       mpxkit_diag *diag)
{
	size_t n = 0;

	if (b->n_jumps > w->cap_jumps) {
		mpxkit_profile_jump *j = realloc(w->jumps, b->n_jumps * sizeof *j);
		if (j == NULL)
			return oom(w, diag);
		w->jumps = j;
		w->cap_jumps = b->n_jumps;
	}
	for (size_t i = 0; i < b->n_jumps; i++) {
		if (b->jumps[i].from >= w->codes.n || b->jumps[i].to >= w->codes.n)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: jump names undefined code",
					   w->path);
		if (b->jumps[i].count > 0)
			w->jumps[n++] = b->jumps[i];
	}
	if (n > 1)
		qsort(w->jumps, n, sizeof *w->jumps, cmp_jump);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k > 0 && w->jumps[k - 1].from == w->jumps[i].from &&
		    w->jumps[k - 1].to == w->jumps[i].to) {
			if (w->jumps[i].count > UINT64_MAX - w->jumps[k - 1].count)
				return mpxkit_fail(diag, MPXKIT_ERANGE,
						   "%s: jump count beyond 2^64-1", w->path);
			w->jumps[k - 1].count += w->jumps[i].count;
		} else {
			w->jumps[k++] = w->jumps[i];
		}
	}
	*n_out = k;
	return 0;
}

static void put_block_head(mpxkit_bytes *s, const mpxkit_profile_block *b)
{
	mpxkit_bytes_varint(s, b->window);
	mpxkit_bytes_varint(s, b->t_begin);
	mpxkit_bytes_varint(s, b->t_len);
	mpxkit_bytes_varint(s, b->thread);
}

/* Rows [r0, r1) and jumps [j0, j1) as one WIND section. */
static int put_wind(mpxkit_profile_writer *w, const mpxkit_profile_block *b, size_t r0, size_t r1,
		    size_t j0, size_t j1, mpxkit_diag *diag)
{
	mpxkit_bytes s = {NULL, 0, 0, 0};
	size_t ne = w->n_events;
	uint32_t prev = 0;
	int rc;

	put_block_head(&s, b);
	mpxkit_bytes_varint(&s, r1 - r0);
	for (size_t i = r0; i < r1; i++) {
		mpxkit_bytes_varint(&s, w->rows[i].code - (i > r0 ? prev : 0));
		prev = w->rows[i].code;
		for (size_t e = 0; e < ne; e++)
			mpxkit_bytes_varint(&s, w->sums[i * ne + e]);
	}
	mpxkit_bytes_varint(&s, j1 - j0);
	for (size_t i = j0; i < j1; i++) {
		mpxkit_bytes_varint(&s, w->jumps[i].from);
		mpxkit_bytes_varint(&s, w->jumps[i].to);
		mpxkit_bytes_varint(&s, w->jumps[i].count);
	}
	rc = put_section(w, PROF_WIND, &s, diag);
	mpxkit_bytes_free(&s);
	return rc;
}

int mpxkit_profile_put_block(mpxkit_profile_writer *w, const mpxkit_profile_block *b,
			     mpxkit_diag *diag)
{
	size_t n_rows = 0, n_jumps = 0, per_row, rows_per, jumps_per = 0x100000, r = 0, j = 0;
	int rc;

	if (w == NULL || b == NULL || (b->n_rows && (b->codes == NULL || b->counts == NULL)) ||
	    (b->n_jumps && b->jumps == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if (w->have_window && b->window < w->last_window)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: window %llu after window %llu",
				   w->path, (unsigned long long)b->window,
				   (unsigned long long)w->last_window);
	if (b->t_len > UINT64_MAX - b->t_begin)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: window time beyond 2^64", w->path);
	if (b->thread >= w->threads.n)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: block of undefined thread %u", w->path,
				   b->thread);
	if ((rc = merge_rows(w, b, &n_rows, diag)) < 0 ||
	    (rc = merge_jumps(w, b, &n_jumps, diag)) < 0 || (rc = flush_tables(w, diag)) < 0)
		return rc;
	/* Whole sections, each far below the bound: a row is at most 10 bytes per varint. */
	per_row = 10 * (1 + w->n_events);
	rows_per = (MPXKIT_PROFILE_MAX_SECTION / 2) / per_row;
	if (rows_per > PROF_MAX_ROWS)
		rows_per = PROF_MAX_ROWS;
	do {
		size_t r1 = r + rows_per < n_rows ? r + rows_per : n_rows;
		size_t j1 = r1 == n_rows ? (j + jumps_per < n_jumps ? j + jumps_per : n_jumps) : j;
		if ((rc = put_wind(w, b, r, r1, j, j1, diag)) < 0)
			return rc;
		r = r1;
		j = j1;
	} while (r < n_rows || j < n_jumps);
	w->last_window = b->window;
	w->have_window = 1;
	return 0;
}

static void free_strings(char **s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i]);
	free(s);
}

static void writer_free(mpxkit_profile_writer *w)
{
	mpxkit_bytes_free(&w->head);
	free_strings(w->meta_keys, w->n_meta);
	free_strings(w->meta_values, w->n_meta);
	free_strings(w->object_names, w->objects.n);
	free_strings(w->file_names, w->files.n);
	free_strings(w->function_names, w->functions.n);
	free_strings(w->thread_names, w->threads.n);
	mpxkit__u64map_free(&w->objects.index);
	mpxkit__u64map_free(&w->files.index);
	mpxkit__u64map_free(&w->functions.index);
	mpxkit__u64map_free(&w->codes.index);
	mpxkit__u64map_free(&w->threads.index);
	free(w->function_object);
	free(w->function_lo);
	free(w->function_size);
	free(w->code_function);
	free(w->code_file);
	free(w->code_line);
	free(w->code_address);
	free(w->thread_tid);
	free(w->rows);
	free(w->jumps);
	free(w->sums);
	free(w->path);
	free(w);
}

int mpxkit_profile_commit(mpxkit_profile_writer *w, mpxkit_diag *diag)
{
	int rc;

	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	rc = flush_tables(w, diag);
	if (rc < 0) {
		mpxkit_profile_abort(w);
		return rc;
	}
	rc = mpxkit_container_commit(w->cw, diag);
	w->cw = NULL;
	writer_free(w);
	return rc;
}

void mpxkit_profile_abort(mpxkit_profile_writer *w)
{
	if (w == NULL)
		return;
	mpxkit_container_abort(w->cw);
	writer_free(w);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Collection under callgrind: the recorder's per-thread, per-instruction dumps, one window per
 * dump. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spacetime_impl.h"

/* One dump file of the run: its part (0 for the final dump, whose part: says) and thread. */
typedef struct dump_file {
	char *path;
	unsigned part;	 /* from the name; 0: the final dump */
	unsigned thread; /* from the name; 0 without --separate-threads */
} dump_file;

typedef struct dump_list {
	dump_file *v;
	size_t n, cap;
} dump_list;

static void dump_list_free(dump_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
}

/* "K" or "K-TT" or "-TT" after the base name; 0 when name is not one of the run's dumps. */
static int parse_suffix(const char *s, unsigned *part, unsigned *thread)
{
	char *end;
	unsigned long v;

	*part = 0;
	*thread = 0;
	if (*s == '\0')
		return 1;
	if (*s == '.') {
		if (s[1] < '0' || s[1] > '9')
			return 0;
		v = strtoul(s + 1, &end, 10);
		if (v == 0 || v > 100000000)
			return 0;
		*part = (unsigned)v;
		s = end;
	}
	if (*s == '-') {
		if (s[1] < '0' || s[1] > '9')
			return 0;
		v = strtoul(s + 1, &end, 10);
		if (v == 0 || v > 1000000)
			return 0;
		*thread = (unsigned)v;
		s = end;
	}
	return *s == '\0';
}

static int cmp_dump(const void *a, const void *b)
{
	const dump_file *x = a, *y = b;
	/* The final dump (part 0 in its name) comes last. */
	unsigned px = x->part ? x->part : UINT32_MAX, py = y->part ? y->part : UINT32_MAX;

	if (px != py)
		return px < py ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The dumps next to base, in window order, thread by thread. */
static int list_dumps(const char *base, dump_list *l, mpxkit_diag *diag)
{
	const char *slash = strrchr(base, '/');
	size_t dir_len = slash ? (size_t)(slash - base) : 0;
	const char *name = slash ? slash + 1 : base;
	size_t name_len = strlen(name);
	char *dir = slash ? strndup(base, dir_len ? dir_len : 1) : strdup(".");
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (dir == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", base);
	d = opendir(dir);
	if (d == NULL) {
		rc = mpxkit_fail_sys(diag, "%s", dir);
		free(dir);
		return rc;
	}
	while ((e = readdir(d)) != NULL) {
		unsigned part, thread;
		if (strncmp(e->d_name, name, name_len) != 0 ||
		    !parse_suffix(e->d_name + name_len, &part, &thread))
			continue;
		if (mpxkit__reserve((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v) < 0) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", base);
			break;
		}
		size_t size = strlen(dir) + strlen(e->d_name) + 2;
		l->v[l->n].path = malloc(size);
		if (l->v[l->n].path == NULL) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", base);
			break;
		}
		snprintf(l->v[l->n].path, size, "%s/%s", dir, e->d_name);
		l->v[l->n].part = part;
		l->v[l->n++].thread = thread;
	}
	closedir(d);
	free(dir);
	/* With one dump per thread, callgrind also leaves the base name itself, empty. */
	int threaded = 0;
	for (size_t i = 0; i < l->n; i++)
		threaded |= l->v[i].thread != 0;
	if (threaded) {
		size_t k = 0;
		for (size_t i = 0; i < l->n; i++) {
			if (l->v[i].thread != 0)
				l->v[k++] = l->v[i];
			else
				free(l->v[i].path);
		}
		l->n = k;
	}
	if (rc == 0 && l->n == 0)
		rc = mpxkit_fail(diag, MPXKIT_ENOENT, "%s: no callgrind dumps", base);
	if (rc == 0)
		qsort(l->v, l->n, sizeof *l->v, cmp_dump);
	return rc;
}

/* A dump's names, as the profile's ids. */
typedef struct id_maps {
	uint32_t *object, *file, *function;
	uint32_t unknown_file;
} id_maps;

static int map_names(mpxkit_profile_writer *w, const mpxkit_callgrind_instr *d, id_maps *m,
		     mpxkit_diag *diag)
{
	int rc;

	m->object = malloc((d->n_objects + 1) * sizeof *m->object);
	m->file = malloc((d->n_files + 1) * sizeof *m->file);
	m->function = malloc((d->n_functions + 1) * sizeof *m->function);
	if (m->object == NULL || m->file == NULL || m->function == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "profile: out of memory");
	for (size_t i = 0; i < d->n_objects; i++)
		if ((rc = mpxkit_profile_add_object(w, d->objects[i], &m->object[i], diag)) < 0)
			return rc;
	for (size_t i = 0; i < d->n_files; i++)
		if ((rc = mpxkit_profile_add_file(w, d->files[i], &m->file[i], diag)) < 0)
			return rc;
	if ((rc = mpxkit_profile_add_file(w, "???", &m->unknown_file, diag)) < 0)
		return rc;
	for (size_t i = 0; i < d->n_functions; i++)
		if ((rc = mpxkit_profile_add_function(w, d->functions[i].name,
						      m->object[d->functions[i].object], 0, 0,
						      &m->function[i], diag)) < 0)
			return rc;
	return 0;
}

static void id_maps_free(id_maps *m)
{
	free(m->object);
	free(m->file);
	free(m->function);
}

/* Scratch of one block, kept across dumps. */
typedef struct block_buf {
	uint32_t *codes;
	mpxkit_profile_jump *jumps;
	size_t cap_codes, cap_jumps;
} block_buf;

static int same_events(mpxkit_profile_writer *w, const char *path, const mpxkit_callgrind_instr *d,
		       const char *const *events, size_t n, mpxkit_diag *diag)
{
	(void)w;
	if (d->head.n_events != n)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: %zu events, the profile has %zu",
				   path, d->head.n_events, n);
	for (size_t e = 0; e < n; e++)
		if (strcmp(d->head.events[e], events[e]) != 0)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s: event %zu is %s, the profile's is %s", path, e + 1,
					   d->head.events[e], events[e]);
	return 0;
}

/* One dump file as one block of window `window`. */
static int put_dump(mpxkit_profile_writer *w, const mpxkit_callgrind_instr *d, uint64_t window,
		    uint64_t t_begin, uint64_t t_len, block_buf *bb, mpxkit_profile_summary *sum,
		    mpxkit_diag *diag)
{
	id_maps m = {NULL, NULL, NULL, 0};
	mpxkit_profile_block b;
	uint32_t thread;
	int rc;

	if ((rc = map_names(w, d, &m, diag)) < 0)
		goto done;
	if ((rc = mpxkit_profile_add_thread(w, d->thread ? d->thread : 1, "", &thread, diag)) < 0)
		goto done;
	if (mpxkit__reserve((void **)&bb->codes, &bb->cap_codes, d->n_costs, sizeof *bb->codes) <
		0 ||
	    mpxkit__reserve((void **)&bb->jumps, &bb->cap_jumps, d->n_jumps, sizeof *bb->jumps) <
		0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "profile: out of memory");
		goto done;
	}
	for (size_t i = 0; i < d->n_costs; i++) {
		const mpxkit_callgrind_cost *c = &d->costs[i];
		if ((rc = mpxkit_profile_add_code(w, m.function[c->function], m.file[c->file],
						  c->line, c->address, &bb->codes[i], diag)) < 0)
			goto done;
	}
	/* Jump ends are instructions that ran; their code entries exist unless a dump split them.
	 */
	for (size_t i = 0; i < d->n_jumps; i++) {
		const mpxkit_callgrind_jump *j = &d->jumps[i];
		if ((rc = mpxkit_profile_add_code(w, m.function[j->function], m.unknown_file, 0,
						  j->from, &bb->jumps[i].from, diag)) < 0 ||
		    (rc = mpxkit_profile_add_code(w, m.function[j->to_function], m.unknown_file, 0,
						  j->to, &bb->jumps[i].to, diag)) < 0)
			goto done;
		bb->jumps[i].count = j->count;
	}
	b.window = window;
	b.t_begin = t_begin;
	b.t_len = t_len;
	b.thread = thread;
	b.n_rows = d->n_costs;
	b.codes = bb->codes;
	b.counts = d->counts;
	b.n_jumps = d->n_jumps;
	b.jumps = bb->jumps;
	rc = mpxkit_profile_put_block(w, &b, diag);
	if (rc == 0 && sum)
		sum->rows += d->n_costs;
done:
	id_maps_free(&m);
	return rc;
}

int mpxkit_profile_add_callgrind(mpxkit_profile_writer *w, const char *base,
				 mpxkit_profile_summary *sum, mpxkit_diag *diag)
{
	dump_list l = {NULL, 0, 0};
	block_buf bb = {NULL, NULL, 0, 0};
	mpxkit_callgrind_instr *d = NULL;
	char **events = NULL;
	size_t n_events = 0;
	unsigned last_part = 0, window_part = UINT32_MAX, max_thread = 0;
	uint64_t window = 0, t_begin = 0, t_len = 0;
	int rc, have_window = 0;

	if (w == NULL || base == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: missing argument");
	if ((rc = list_dumps(base, &l, diag)) < 0)
		goto done;
	for (size_t i = 0; i < l.n; i++) {
		const dump_file *f = &l.v[i];
		unsigned part;

		if ((rc = mpxkit_callgrind_instr_read(f->path, &d, diag)) < 0)
			goto done;
		part = f->part ? f->part : d->head.part;
		if (f->part && d->head.part != f->part) {
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: holds part %u", f->path,
					 d->head.part);
			goto done;
		}
		if (part < last_part || (f->part == 0 && part == 0 && last_part > 0)) {
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
					 "%s: the final dump's part: %u comes before part %u",
					 f->path, part, last_part);
			goto done;
		}
		if (events == NULL) {
			events = d->head.events;
			n_events = d->head.n_events;
			d->head.events = NULL; /* kept for the whole run */
			d->head.n_events = 0;
		} else if ((rc = same_events(w, f->path, d, (const char *const *)events, n_events,
					     diag)) < 0) {
			goto done;
		}
		/* Every thread's dump of a part is one window, timed by the first one's range. */
		if (!have_window || part != window_part) {
			if (have_window)
				window++;
			have_window = 1;
			window_part = part;
			t_begin = d->head.bb_begin;
			t_len = d->head.bb_end - d->head.bb_begin;
		}
		last_part = part;
		if (d->thread > max_thread)
			max_thread = d->thread;
		if ((rc = put_dump(w, d, window, t_begin, t_len, &bb, sum, diag)) < 0)
			goto done;
		mpxkit_callgrind_instr_free(d);
		d = NULL;
	}
	if (sum) {
		sum->windows = have_window ? window + 1 : 0;
		sum->threads = max_thread ? max_thread : 1;
	}
done:
	mpxkit_callgrind_instr_free(d);
	for (size_t e = 0; events && e < n_events; e++)
		free(events[e]);
	free(events);
	free(bb.codes);
	free(bb.jumps);
	dump_list_free(&l);
	return rc;
}

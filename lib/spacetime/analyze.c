/* SPDX-License-Identifier: BSD-3-Clause */
/* The analyser's two passes: spaces and totals first, then time bins, threads and patterns of the
 * selected spaces. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "spacetime_impl.h"

#define NONE	       UINT32_MAX
#define PROGRESS_EVERY 4096 /* blocks */

/* What the result keeps beyond its public fields. */
typedef struct st_internal {
	st_events ev;
	char **strings;
	size_t n_strings, cap_strings;
} st_internal;

/* A space's appearances over the windows (doc/spacetime.md, "Appearances and gaps"). */
typedef struct appear {
	uint64_t appearances, first, last, gaps, max_gap, max_gap_end;
	size_t n_runs;
	int truncated;
} appear;

/* Pass 1, per space. */
typedef struct acc {
	double cost, weight, win_weight;
	uint64_t win_stamp; /* window + 1 of the last block that touched it */
	appear ap;
} acc;

/* One (thread, selected space) of the current window, for the dominant space and patterns. */
typedef struct win_entry {
	uint32_t thread, sel;
	double cost;
} win_entry;

typedef struct analyser {
	const mpxkit_spacetime_options *o;
	mpxkit_spacetime *r;
	st_internal *in;
	mpxkit_profile *p;
	int use_jumps;
	int pass;
	size_t ne;
	st_spaces spaces;
	uint32_t *row_space;
	double *row_cost, *row_weight;
	size_t cap_rows;
	uint8_t *fn_wait; /* per function: 0 unknown, 1 runs, 2 waits */
	size_t cap_fn_wait;
	/* program */
	uint64_t *program;
	double cost, weight;
	uint64_t blocks, rows;
	/* windows */
	int have_window;
	uint64_t window, windows, first_window, last_window;
	double window_weight;
	uint32_t *touched;
	size_t n_touched, cap_touched;
	/* pass 1, per space */
	acc *acc;
	uint64_t *sums;
	size_t cap_acc;
	/* threads */
	size_t n_threads, cap_threads;
	double *thread_cost, *thread_wait;
	/* pass 2, per selected space */
	size_t n_all;	  /* spaces of pass 1 */
	uint32_t *sel_of; /* n_all: selected index or NONE */
	size_t n_sel;
	uint32_t *sel_space; /* n_sel: the space */
	appear *ap2;
	uint64_t (*runs)[2]; /* n_sel x MAX_RUNS */
	size_t n_bins;
	uint64_t span;		  /* last_window - first_window + 1 */
	uint64_t *bin_sums;	  /* n_sel x n_bins x ne */
	double *thread_space;	  /* n_threads x n_sel */
	uint64_t *gap_sums;	  /* n_sel x ne: the window after the longest gap */
	mpxkit__u64map hot_index; /* (sel, code) -> hot entry */
	uint64_t *hot_sums;
	uint32_t *hot_code, *hot_sel;
	size_t n_hot, cap_hot;
	mpxkit__u64map win_index; /* (thread, sel) -> window entry */
	win_entry *win;
	uint64_t *win_sums;
	size_t n_win, cap_win;
	uint32_t *win_order;
	size_t cap_win_order;
	uint32_t *prev_dom; /* n_threads */
	mpxkit__u64map pat_index;
	mpxkit_spacetime_pattern *pat;
	uint64_t *pat_sums;
	size_t n_pat, cap_pat;
	mpxkit_diag *diag;
} analyser;

static int oom(analyser *a)
{
	return mpxkit_fail(a->diag, MPXKIT_ENOMEM, "analyze: out of memory");
}

/* A string the result owns. */
static const char *keep(analyser *a, const char *s)
{
	st_internal *in = a->in;

	if (s == NULL)
		return NULL;
	if (mpxkit__reserve((void **)&in->strings, &in->cap_strings, in->n_strings + 1,
			    sizeof *in->strings) < 0)
		return NULL;
	in->strings[in->n_strings] = strdup(s);
	return in->strings[in->n_strings] ? in->strings[in->n_strings++] : NULL;
}

/* ---- windows and appearances ----------------------------------------------------------------- */

static void appear_at(appear *ap, uint64_t w, uint64_t (*runs)[2])
{
	if (ap->appearances == 0) {
		ap->first = w;
		ap->n_runs = 1;
		if (runs)
			runs[0][0] = w;
	} else if (w == ap->last + 1) {
		/* the run goes on */
	} else {
		uint64_t gap = w - ap->last - 1;
		if (runs && ap->n_runs <= MPXKIT_SPACETIME_MAX_RUNS)
			runs[ap->n_runs - 1][1] = ap->last;
		ap->gaps++;
		if (gap > ap->max_gap) {
			ap->max_gap = gap;
			ap->max_gap_end = w;
		}
		if (runs && ap->n_runs < MPXKIT_SPACETIME_MAX_RUNS)
			runs[ap->n_runs][0] = w;
		else if (runs)
			ap->truncated = 1;
		ap->n_runs++;
	}
	ap->last = w;
	ap->appearances++;
}

static int thread_room(analyser *a, uint32_t thread)
{
	size_t cap = a->cap_threads;

	if (thread < a->n_threads)
		return 0;
	if (mpxkit__reserve((void **)&a->thread_cost, &cap, thread + 1, sizeof *a->thread_cost) < 0)
		return oom(a);
	cap = a->cap_threads;
	if (mpxkit__reserve((void **)&a->thread_wait, &cap, thread + 1, sizeof *a->thread_wait) < 0)
		return oom(a);
	a->cap_threads = cap;
	a->n_threads = thread + 1;
	return 0;
}

/* The end of a window: which spaces appeared in it, and each thread's dominant space. */
static int end_window(analyser *a);

static int start_block(analyser *a, const mpxkit_profile_block *b)
{
	int rc;

	if (a->have_window && b->window != a->window && (rc = end_window(a)) < 0)
		return rc;
	if (!a->have_window || b->window != a->window) {
		if (!a->have_window)
			a->first_window = b->window;
		a->have_window = 1;
		a->window = b->window;
		a->last_window = b->window;
		a->window_weight = 0;
		a->n_touched = 0;
		if (a->pass == 1)
			a->windows++;
	}
	if (a->pass == 2 && b->thread >= a->n_threads)
		return mpxkit_fail(a->diag, MPXKIT_EFORMAT,
				   "analyze: the profile changed between the two passes");
	return thread_room(a, b->thread);
}

/* ---- rows ------------------------------------------------------------------------------------ */

static int is_wait(analyser *a, uint32_t function)
{
	if (function >= a->cap_fn_wait &&
	    mpxkit__reserve((void **)&a->fn_wait, &a->cap_fn_wait, function + 1, 1) < 0)
		return -1;
	if (a->fn_wait[function] == 0) {
		const mpxkit_profile_function *f = mpxkit_profile_function_at(a->p, function);
		a->fn_wait[function] =
		    st_is_wait_function(f->name, mpxkit_profile_object_name(a->p, f->object)) ? 2
											      : 1;
	}
	return a->fn_wait[function] == 2;
}

/* Cost and weight of every row of b, and the space of each. */
static int rows_of(analyser *a, const mpxkit_profile_block *b)
{
	const st_events *ev = &a->in->ev;
	size_t ne = a->ne;

	if (b->n_rows > a->cap_rows) {
		size_t cap = a->cap_rows;
		if (mpxkit__reserve((void **)&a->row_space, &cap, b->n_rows, sizeof *a->row_space) <
		    0)
			return oom(a);
		cap = a->cap_rows;
		if (mpxkit__reserve((void **)&a->row_cost, &cap, b->n_rows, sizeof *a->row_cost) <
		    0)
			return oom(a);
		cap = a->cap_rows;
		if (mpxkit__reserve((void **)&a->row_weight, &cap, b->n_rows,
				    sizeof *a->row_weight) < 0)
			return oom(a);
		a->cap_rows = cap;
	}
	for (size_t i = 0; i < b->n_rows; i++) {
		const uint64_t *c = b->counts + i * ne;
		double cost = 0;
		for (size_t e = 0; e < ne; e++)
			cost += ev->cost_coef[e] * (double)c[e];
		a->row_cost[i] = cost;
		a->row_weight[i] = ev->weight_col >= 0 ? (double)c[ev->weight_col] : cost;
	}
	if (st_spaces_assign(&a->spaces, a->p, b, a->use_jumps, a->row_space) < 0)
		return oom(a);
	return 0;
}

static int pass1_block(analyser *a, const mpxkit_profile_block *b)
{
	size_t ne = a->ne;
	int rc;

	if ((rc = start_block(a, b)) < 0 || (rc = rows_of(a, b)) < 0)
		return rc;
	if (a->spaces.n > a->cap_acc) {
		size_t cap = a->cap_acc;
		if (mpxkit__reserve((void **)&a->acc, &cap, a->spaces.n, sizeof *a->acc) < 0)
			return oom(a);
		cap = a->cap_acc;
		if (mpxkit__reserve((void **)&a->sums, &cap, a->spaces.n, ne * sizeof *a->sums) < 0)
			return oom(a);
		a->cap_acc = cap;
	}
	for (size_t i = 0; i < b->n_rows; i++) {
		uint32_t s = a->row_space[i];
		const uint64_t *c = b->counts + i * ne;
		acc *x = &a->acc[s];
		int wait = is_wait(a, mpxkit_profile_code_at(a->p, b->codes[i])->function);

		if (wait < 0)
			return oom(a);
		for (size_t e = 0; e < ne; e++) {
			a->sums[s * ne + e] += c[e];
			a->program[e] += c[e];
		}
		x->cost += a->row_cost[i];
		x->weight += a->row_weight[i];
		a->cost += a->row_cost[i];
		a->weight += a->row_weight[i];
		a->window_weight += a->row_weight[i];
		a->thread_cost[b->thread] += a->row_cost[i];
		if (wait)
			a->thread_wait[b->thread] += a->row_cost[i];
		if (x->win_stamp != a->window + 1) {
			x->win_stamp = a->window + 1;
			x->win_weight = 0;
			if (mpxkit__reserve((void **)&a->touched, &a->cap_touched, a->n_touched + 1,
					    sizeof *a->touched) < 0)
				return oom(a);
			a->touched[a->n_touched++] = s;
		}
		x->win_weight += a->row_weight[i];
	}
	return 0;
}

/* ---- pass 2 ---------------------------------------------------------------------------------- */

static size_t bin_of(const analyser *a, uint64_t w)
{
	unsigned __int128 k = (unsigned __int128)(w - a->first_window) * a->n_bins;
	return (size_t)(k / a->span);
}

static int hot_add(analyser *a, uint32_t sel, uint32_t code, const uint64_t *c)
{
	uint64_t key = (uint64_t)sel << 32 | code;
	uint32_t h;

	if (!mpxkit__u64map_find(&a->hot_index, key, &h, NULL)) {
		size_t cap = a->cap_hot;
		if (mpxkit__reserve((void **)&a->hot_code, &cap, a->n_hot + 1,
				    sizeof *a->hot_code) < 0)
			return oom(a);
		cap = a->cap_hot;
		if (mpxkit__reserve((void **)&a->hot_sel, &cap, a->n_hot + 1, sizeof *a->hot_sel) <
		    0)
			return oom(a);
		cap = a->cap_hot;
		if (mpxkit__reserve((void **)&a->hot_sums, &cap, a->n_hot + 1,
				    a->ne * sizeof *a->hot_sums) < 0)
			return oom(a);
		a->cap_hot = cap;
		h = (uint32_t)a->n_hot++;
		a->hot_code[h] = code;
		a->hot_sel[h] = sel;
		if (mpxkit__u64map_add(&a->hot_index, key, h) < 0)
			return oom(a);
	}
	for (size_t e = 0; e < a->ne; e++)
		a->hot_sums[(size_t)h * a->ne + e] += c[e];
	return 0;
}

static int win_add(analyser *a, uint32_t thread, uint32_t sel, double cost, const uint64_t *c)
{
	uint64_t key = (uint64_t)thread << 32 | sel;
	uint32_t k;

	if (!mpxkit__u64map_find(&a->win_index, key, &k, NULL)) {
		size_t cap = a->cap_win;
		if (mpxkit__reserve((void **)&a->win, &cap, a->n_win + 1, sizeof *a->win) < 0)
			return oom(a);
		cap = a->cap_win;
		if (mpxkit__reserve((void **)&a->win_sums, &cap, a->n_win + 1,
				    a->ne * sizeof *a->win_sums) < 0)
			return oom(a);
		a->cap_win = cap;
		k = (uint32_t)a->n_win++;
		a->win[k] = (win_entry){thread, sel, 0};
		memset(a->win_sums + (size_t)k * a->ne, 0, a->ne * sizeof *a->win_sums);
		if (mpxkit__u64map_add(&a->win_index, key, k) < 0)
			return oom(a);
	}
	a->win[k].cost += cost;
	for (size_t e = 0; e < a->ne; e++)
		a->win_sums[(size_t)k * a->ne + e] += c[e];
	return 0;
}

static int pass2_block(analyser *a, const mpxkit_profile_block *b)
{
	size_t ne = a->ne, bin;
	int rc;

	if ((rc = start_block(a, b)) < 0 || (rc = rows_of(a, b)) < 0)
		return rc;
	if (a->spaces.n > a->n_all)
		return mpxkit_fail(a->diag, MPXKIT_EFORMAT,
				   "%s: the profile changed between the two passes",
				   mpxkit_profile_source(a->p));
	bin = bin_of(a, b->window);
	for (size_t i = 0; i < b->n_rows; i++) {
		uint32_t s = a->row_space[i], sel = a->sel_of[s];
		const uint64_t *c = b->counts + i * ne;
		int wait = is_wait(a, mpxkit_profile_code_at(a->p, b->codes[i])->function);
		mpxkit_spacetime_thread *t = &a->r->threads[b->thread];

		if (wait < 0)
			return oom(a);
		a->window_weight += a->row_weight[i];
		t->bin_cost[bin] += a->row_cost[i];
		if (wait)
			t->bin_wait[bin] += a->row_cost[i];
		if (a->acc[s].win_stamp != a->window + 1) {
			a->acc[s].win_stamp = a->window + 1;
			a->acc[s].win_weight = 0;
			if (mpxkit__reserve((void **)&a->touched, &a->cap_touched, a->n_touched + 1,
					    sizeof *a->touched) < 0)
				return oom(a);
			a->touched[a->n_touched++] = s;
		}
		a->acc[s].win_weight += a->row_weight[i];
		if (sel == NONE)
			continue;
		uint64_t *bs = a->bin_sums + ((size_t)sel * a->n_bins + bin) * ne;
		for (size_t e = 0; e < ne; e++)
			bs[e] += c[e];
		a->thread_space[(size_t)b->thread * a->n_sel + sel] += a->row_cost[i];
		if (a->ap2[sel].max_gap > 0 && b->window == a->ap2[sel].max_gap_end)
			for (size_t e = 0; e < ne; e++)
				a->gap_sums[(size_t)sel * ne + e] += c[e];
		if ((rc = hot_add(a, sel, b->codes[i], c)) < 0 ||
		    (rc = win_add(a, b->thread, sel, a->row_cost[i], c)) < 0)
			return rc;
	}
	return 0;
}

/* A transition prev -> cur of one thread, with cur's events in the window it starts. */
static int transition(analyser *a, uint32_t from, uint32_t to, const uint64_t *c)
{
	uint64_t key = (uint64_t)from << 32 | to;
	uint32_t k;

	if (!mpxkit__u64map_find(&a->pat_index, key, &k, NULL)) {
		size_t cap = a->cap_pat;
		if (mpxkit__reserve((void **)&a->pat, &cap, a->n_pat + 1, sizeof *a->pat) < 0)
			return oom(a);
		cap = a->cap_pat;
		if (mpxkit__reserve((void **)&a->pat_sums, &cap, a->n_pat + 1,
				    a->ne * sizeof *a->pat_sums) < 0)
			return oom(a);
		a->cap_pat = cap;
		k = (uint32_t)a->n_pat++;
		a->pat[k].from = from;
		a->pat[k].to = to;
		if (mpxkit__u64map_add(&a->pat_index, key, k) < 0)
			return oom(a);
	}
	a->pat[k].count++;
	for (size_t e = 0; e < a->ne; e++)
		a->pat_sums[(size_t)k * a->ne + e] += c[e];
	return 0;
}

/* Window entries by thread, the costliest first (ties: the lower space index). */
static int cmp_win(const void *x, const void *y, void *arg)
{
	const win_entry *w = arg, *p = &w[*(const uint32_t *)x], *q = &w[*(const uint32_t *)y];

	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	if (p->cost != q->cost)
		return p->cost > q->cost ? -1 : 1;
	return p->sel < q->sel ? -1 : p->sel > q->sel;
}

/* Each thread's dominant selected space in the window just ended, and its transitions. */
static int window_patterns(analyser *a)
{
	size_t cap = a->cap_win_order;

	if (mpxkit__reserve((void **)&a->win_order, &cap, a->n_win, sizeof *a->win_order) < 0)
		return oom(a);
	a->cap_win_order = cap;
	for (size_t i = 0; i < a->n_win; i++)
		a->win_order[i] = (uint32_t)i;
	if (a->n_win > 1)
		qsort_r(a->win_order, a->n_win, sizeof *a->win_order, cmp_win, a->win);
	for (size_t i = 0; i < a->n_win; i++) {
		const win_entry *w = &a->win[a->win_order[i]];
		if (i > 0 && a->win[a->win_order[i - 1]].thread == w->thread)
			continue; /* not the thread's dominant one */
		uint32_t prev = a->prev_dom[w->thread];
		if (prev != NONE && prev != w->sel) {
			int rc = transition(a, prev, w->sel, a->win_sums + a->win_order[i] * a->ne);
			if (rc < 0)
				return rc;
		}
		a->prev_dom[w->thread] = w->sel;
	}
	a->n_win = 0;
	mpxkit__u64map_clear(&a->win_index);
	return 0;
}

static int end_window(analyser *a)
{
	for (size_t i = 0; i < a->n_touched; i++) {
		uint32_t s = a->touched[i];
		if (!(a->acc[s].win_weight >= a->o->appear * a->window_weight) ||
		    a->acc[s].win_weight <= 0)
			continue;
		if (a->pass == 1)
			appear_at(&a->acc[s].ap, a->window, NULL);
		else if (a->sel_of[s] != NONE)
			appear_at(&a->ap2[a->sel_of[s]], a->window,
				  a->runs + (size_t)a->sel_of[s] * MPXKIT_SPACETIME_MAX_RUNS);
	}
	a->n_touched = 0;
	return a->pass == 2 ? window_patterns(a) : 0;
}

/* ---- driving the passes ---------------------------------------------------------------------- */

typedef struct input {
	const char *path;
	const void *buf;
	size_t len;
	const char *name;
} input;

static int open_input(const input *in, mpxkit_profile **p, mpxkit_diag *diag)
{
	if (in->path)
		return mpxkit_profile_open(p, in->path, diag);
	return mpxkit_profile_open_buffer(p, in->buf, in->len, in->name, diag);
}

static int run_pass(analyser *a, int (*block)(analyser *, const mpxkit_profile_block *))
{
	mpxkit_profile_block b;
	int rc;

	while ((rc = mpxkit_profile_next(a->p, &b, a->diag)) == 1) {
		if ((rc = block(a, &b)) < 0)
			return rc;
		a->blocks++;
		a->rows += b.n_rows;
		if (a->o->progress && a->blocks % PROGRESS_EVERY == 0)
			a->o->progress(a->o->progress_arg, a->pass, a->blocks, a->rows);
	}
	if (rc < 0)
		return rc;
	if (a->have_window && (rc = end_window(a)) < 0)
		return rc;
	a->have_window = 0;
	return 0;
}

/* Resets what both passes rebuild: spaces, window state, per-space window stamps. */
static void restart(analyser *a)
{
	st_spaces_free(&a->spaces);
	st_spaces_init(&a->spaces, a->o->overlap);
	a->have_window = 0;
	a->n_touched = 0;
	for (size_t s = 0; s < a->n_all; s++)
		a->acc[s].win_stamp = 0;
	a->blocks = 0;
	a->rows = 0;
}

static int cmp_by_cost(const void *x, const void *y, void *arg)
{
	const acc *v = arg;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;

	if (v[i].cost != v[j].cost)
		return v[i].cost > v[j].cost ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The spaces above min_weight in weight or cost, costliest first; the state pass 2 fills. */
static int select_spaces(analyser *a)
{
	mpxkit_spacetime *r = a->r;
	size_t ne = a->ne;

	a->n_all = a->spaces.n;
	a->sel_of = malloc((a->n_all + 1) * sizeof *a->sel_of);
	a->sel_space = malloc((a->n_all + 1) * sizeof *a->sel_space);
	if (a->sel_of == NULL || a->sel_space == NULL)
		return oom(a);
	for (size_t s = 0; s < a->n_all; s++) {
		a->sel_of[s] = NONE;
		if ((a->weight > 0 && a->acc[s].weight >= a->o->min_weight * a->weight) ||
		    (a->cost > 0 && a->acc[s].cost >= a->o->min_weight * a->cost))
			a->sel_space[a->n_sel++] = (uint32_t)s;
	}
	if (a->n_sel > 1)
		qsort_r(a->sel_space, a->n_sel, sizeof *a->sel_space, cmp_by_cost, a->acc);
	for (size_t k = 0; k < a->n_sel; k++)
		a->sel_of[a->sel_space[k]] = (uint32_t)k;
	a->span = a->last_window - a->first_window + 1;
	a->n_bins = a->o->bins < a->span ? a->o->bins : (size_t)a->span;
	if (a->n_bins == 0)
		a->n_bins = 1;
	size_t ns = a->n_sel ? a->n_sel : 1, nt = a->n_threads ? a->n_threads : 1;
	a->ap2 = calloc(ns, sizeof *a->ap2);
	a->runs = calloc(ns * MPXKIT_SPACETIME_MAX_RUNS, sizeof *a->runs);
	a->bin_sums = calloc(ns * a->n_bins * ne, sizeof *a->bin_sums);
	a->thread_space = calloc(nt * ns, sizeof *a->thread_space);
	a->gap_sums = calloc(ns * ne, sizeof *a->gap_sums);
	a->prev_dom = malloc(nt * sizeof *a->prev_dom);
	r->threads = calloc(nt, sizeof *r->threads);
	if (a->ap2 == NULL || a->runs == NULL || a->bin_sums == NULL || a->thread_space == NULL ||
	    a->gap_sums == NULL || a->prev_dom == NULL || r->threads == NULL)
		return oom(a);
	r->n_threads = a->n_threads;
	for (size_t t = 0; t < a->n_threads; t++) {
		a->prev_dom[t] = NONE;
		r->threads[t].bin_cost = calloc(a->n_bins, sizeof(double));
		r->threads[t].bin_wait = calloc(a->n_bins, sizeof(double));
		if (r->threads[t].bin_cost == NULL || r->threads[t].bin_wait == NULL)
			return oom(a);
	}
	/* The longest gap of pass 1 says which window's events pass 2 keeps. */
	for (size_t k = 0; k < a->n_sel; k++) {
		a->ap2[k].max_gap = a->acc[a->sel_space[k]].ap.max_gap;
		a->ap2[k].max_gap_end = a->acc[a->sel_space[k]].ap.max_gap_end;
	}
	return 0;
}

/* ---- results --------------------------------------------------------------------------------- */

static void metrics_of(const st_events *ev, const uint64_t *sums, double *out)
{
	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
		out[m] = st_metric_value(ev, m, sums);
}

/* The code of a space with the most of the events in mask (the cost when mask is 0). */
static void hot_line(void *arg, size_t sel, uint32_t mask, const char **file, uint32_t *line)
{
	analyser *a = arg;
	const st_events *ev = &a->in->ev;
	double best = -1;
	uint32_t code = NONE;

	/* The hot entries of a space are few next to the run; a scan keeps no index. */
	for (size_t h = 0; h < a->n_hot; h++) {
		const uint64_t *c = a->hot_sums + h * a->ne;
		double v = 0;
		if (a->hot_sel[h] != sel)
			continue;
		if (mask == 0)
			for (size_t e = 0; e < a->ne; e++)
				v += ev->cost_coef[e] * (double)c[e];
		else
			v = st_event_sum(ev, mask, c);
		if (v > best) {
			best = v;
			code = a->hot_code[h];
		}
	}
	*file = "";
	*line = 0;
	if (code != NONE) {
		const mpxkit_profile_code *pc = mpxkit_profile_code_at(a->p, code);
		*file = keep(a, mpxkit_profile_file_name(a->p, pc->file));
		if (*file == NULL)
			*file = "";
		*line = pc->line;
	}
}

static int build_spaces(analyser *a)
{
	mpxkit_spacetime *r = a->r;
	const st_events *ev = &a->in->ev;
	size_t ne = a->ne;

	r->spaces = calloc(a->n_sel ? a->n_sel : 1, sizeof *r->spaces);
	if (r->spaces == NULL)
		return oom(a);
	r->n_spaces = a->n_sel;
	for (size_t k = 0; k < a->n_sel; k++) {
		uint32_t s = a->sel_space[k];
		const st_space *sp = &a->spaces.v[s];
		const mpxkit_profile_function *f = mpxkit_profile_function_at(a->p, sp->function);
		mpxkit_spacetime_space *o = &r->spaces[k];
		const appear *ap = &a->ap2[k];

		o->id = s;
		o->object = keep(a, mpxkit_profile_object_name(a->p, f->object));
		o->function = keep(a, f->name);
		hot_line(a, k, 0, &o->file, &o->line);
		if (o->object == NULL || o->function == NULL)
			return oom(a);
		o->start = sp->lo;
		o->end = sp->hi;
		o->loop = sp->loop;
		o->wait = is_wait(a, sp->function) == 1;
		o->weight = a->weight > 0 ? a->acc[s].weight / a->weight : 0;
		o->cost_share = a->cost > 0 ? a->acc[s].cost / a->cost : 0;
		o->appearances = ap->appearances;
		o->first = ap->first;
		o->last = ap->last;
		o->gaps = ap->gaps;
		o->max_gap = ap->max_gap;
		o->max_gap_end = ap->max_gap_end;
		o->n_runs =
		    ap->n_runs < MPXKIT_SPACETIME_MAX_RUNS ? ap->n_runs : MPXKIT_SPACETIME_MAX_RUNS;
		o->runs_truncated = ap->truncated;
		o->runs = malloc((o->n_runs ? o->n_runs : 1) * sizeof *o->runs);
		if (o->runs == NULL)
			return oom(a);
		memcpy(o->runs, a->runs + k * MPXKIT_SPACETIME_MAX_RUNS,
		       o->n_runs * sizeof *o->runs);
		if (o->n_runs > 0 && !ap->truncated)
			o->runs[o->n_runs - 1][1] = ap->last;
		metrics_of(ev, a->sums + (size_t)s * ne, o->metrics);
		o->has_after_gap = ap->max_gap > 0;
		if (o->has_after_gap) {
			metrics_of(ev, a->gap_sums + k * ne, o->after_gap);
			for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++) {
				const st_metric_def *d = st_metric_def_for(ev, m);
				if (d && d->cls >= 0 &&
				    o->after_gap[m] >= (d->cpi ? a->o->cpi_factor : a->o->factor) *
							   o->metrics[m] &&
				    o->after_gap[m] >= d->floor)
					o->worse_after_gap |= 1u << m;
			}
		} else {
			for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
				o->after_gap[m] = NAN;
		}
		o->thread_share = calloc(a->n_threads ? a->n_threads : 1, sizeof(double));
		if (o->thread_share == NULL)
			return oom(a);
		for (size_t t = 0; t < a->n_threads; t++)
			o->thread_share[t] =
			    a->cost > 0 ? a->thread_space[t * a->n_sel + k] / a->cost : 0;
	}
	return 0;
}

static int cmp_pattern(const void *x, const void *y)
{
	const mpxkit_spacetime_pattern *p = x, *q = y;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	if (p->from != q->from)
		return p->from < q->from ? -1 : 1;
	return p->to < q->to ? -1 : p->to > q->to;
}

static int build_rest(analyser *a)
{
	mpxkit_spacetime *r = a->r;
	const st_events *ev = &a->in->ev;
	size_t ne = a->ne;
	uint64_t *space_sums = NULL;
	double *space_cost = NULL;
	int rc = 0;

	metrics_of(ev, a->program, r->metrics);
	r->cost = a->cost;
	r->weight = a->weight;
	r->cost_unit = ev->cost_is_ns ? "ns" : "cycles (estimated)";
	for (size_t t = 0; t < a->n_threads; t++) {
		mpxkit_spacetime_thread *th = &r->threads[t];
		const mpxkit_profile_thread *pt = mpxkit_profile_thread_at(a->p, (uint32_t)t);
		th->tid = pt ? pt->tid : t;
		th->cost_share = a->cost > 0 ? a->thread_cost[t] / a->cost : 0;
		th->wait_share = a->thread_cost[t] > 0 ? a->thread_wait[t] / a->thread_cost[t] : 0;
	}
	/* Patterns, with their after-transition metrics, most frequent first. */
	for (size_t k = 0; k < a->n_pat; k++)
		metrics_of(ev, a->pat_sums + k * ne, a->pat[k].metrics);
	r->n_patterns = a->n_pat;
	r->patterns = a->pat;
	a->pat = NULL;
	r->n_bins = a->n_bins;
	r->bin_first_window = malloc((a->n_bins + 1) * sizeof *r->bin_first_window);
	space_sums = malloc((a->n_sel ? a->n_sel : 1) * ne * sizeof *space_sums);
	space_cost = malloc((a->n_sel ? a->n_sel : 1) * sizeof *space_cost);
	if (r->bin_first_window == NULL || space_sums == NULL || space_cost == NULL) {
		rc = oom(a);
		goto done;
	}
	for (size_t k = 0; k <= a->n_bins; k++) {
		unsigned __int128 w = ((unsigned __int128)k * a->span + a->n_bins - 1) / a->n_bins;
		r->bin_first_window[k] = a->first_window + (uint64_t)w;
	}
	for (size_t k = 0; k < a->n_sel; k++) {
		memcpy(space_sums + k * ne, a->sums + (size_t)a->sel_space[k] * ne,
		       ne * sizeof *space_sums);
		space_cost[k] = a->acc[a->sel_space[k]].cost;
	}
	r->bin_sums = a->bin_sums;
	a->bin_sums = NULL;
	st_screen_input in = {ev,	   a->program,	    space_sums,
			      space_cost,  a->thread_space, a->thread_cost,
			      a->pat_sums, hot_line,	    a};
	rc = st_screen(r, &in);
	if (rc < 0) {
		rc = oom(a);
		goto done;
	}
	/* Patterns sort after screening: findings name patterns by their spaces only. */
	if (r->n_patterns > 1)
		qsort(r->patterns, r->n_patterns, sizeof *r->patterns, cmp_pattern);
done:
	free(space_sums);
	free(space_cost);
	return rc;
}

static void analyser_free(analyser *a)
{
	mpxkit_profile_close(a->p);
	st_spaces_free(&a->spaces);
	free(a->row_space);
	free(a->row_cost);
	free(a->row_weight);
	free(a->fn_wait);
	free(a->program);
	free(a->touched);
	free(a->acc);
	free(a->sums);
	free(a->thread_cost);
	free(a->thread_wait);
	free(a->sel_of);
	free(a->sel_space);
	free(a->ap2);
	free(a->runs);
	free(a->bin_sums);
	free(a->thread_space);
	free(a->gap_sums);
	mpxkit__u64map_free(&a->hot_index);
	free(a->hot_sums);
	free(a->hot_code);
	free(a->hot_sel);
	free(a->win_order);
	mpxkit__u64map_free(&a->win_index);
	free(a->win);
	free(a->win_sums);
	free(a->prev_dom);
	mpxkit__u64map_free(&a->pat_index);
	free(a->pat);
	free(a->pat_sums);
}

static int header(analyser *a)
{
	mpxkit_spacetime *r = a->r;
	const char *cmd = mpxkit_profile_meta(a->p, "command");

	a->ne = mpxkit_profile_n_events(a->p);
	a->use_jumps = strcmp(mpxkit_profile_source(a->p), "callgrind") == 0;
	if (st_events_init(&a->in->ev, a->p) < 0)
		return oom(a);
	a->program = calloc(a->ne, sizeof *a->program);
	r->events = calloc(a->ne, sizeof *r->events);
	if (a->program == NULL || r->events == NULL)
		return oom(a);
	for (size_t e = 0; e < a->ne; e++)
		if ((r->events[e] = strdup(mpxkit_profile_event(a->p, e))) == NULL)
			return oom(a);
	r->n_events = a->ne;
	r->source = keep(a, mpxkit_profile_source(a->p));
	r->time_unit = keep(a, mpxkit_profile_time_unit(a->p));
	r->command = cmd ? keep(a, cmd) : NULL;
	if (r->source == NULL || r->time_unit == NULL || (cmd && r->command == NULL))
		return oom(a);
	return 0;
}

static int analyze(const input *in, const mpxkit_spacetime_options *o, mpxkit_spacetime **out,
		   mpxkit_diag *diag)
{
	mpxkit_spacetime_options dflt;
	analyser a;
	mpxkit_spacetime *r;
	int rc;

	if (out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "analyze: missing argument");
	if (o == NULL) {
		mpxkit_spacetime_options_init(&dflt);
		o = &dflt;
	}
	if (!(o->overlap > 0 && o->overlap <= 1) || !(o->min_weight >= 0 && o->min_weight <= 1) ||
	    !(o->appear >= 0 && o->appear <= 1) || !(o->factor >= 1) || !(o->cpi_factor >= 1) ||
	    !(o->imbalance >= 1) || !(o->min_share >= 0 && o->min_share <= 1) || o->bins == 0 ||
	    o->bins > 65536)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "analyze: setting out of range");
	memset(&a, 0, sizeof a);
	a.o = o;
	a.diag = diag;
	r = calloc(1, sizeof *r);
	a.in = calloc(1, sizeof *a.in);
	if (r == NULL || a.in == NULL) {
		free(r);
		free(a.in);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "analyze: out of memory");
	}
	r->internal = a.in;
	r->options = *o;
	a.r = r;
	st_spaces_init(&a.spaces, o->overlap);
	a.pass = 1;
	if ((rc = open_input(in, &a.p, diag)) < 0 || (rc = header(&a)) < 0 ||
	    (rc = run_pass(&a, pass1_block)) < 0)
		goto fail;
	if (a.windows == 0) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: the profile holds no samples",
				 in->path ? in->path : in->name);
		goto fail;
	}
	r->windows = a.windows;
	r->first_window = a.first_window;
	r->last_window = a.last_window;
	r->n_all_spaces = a.spaces.n;
	if ((rc = select_spaces(&a)) < 0)
		goto fail;
	mpxkit_profile_close(a.p);
	a.p = NULL;
	a.pass = 2;
	restart(&a);
	if ((rc = open_input(in, &a.p, diag)) < 0 || (rc = run_pass(&a, pass2_block)) < 0)
		goto fail;
	r->blocks = a.blocks;
	r->rows = a.rows;
	if ((rc = build_spaces(&a)) < 0 || (rc = build_rest(&a)) < 0)
		goto fail;
	analyser_free(&a);
	*out = r;
	return 0;
fail:
	analyser_free(&a);
	mpxkit_spacetime_free(r);
	return rc;
}

int mpxkit_spacetime_analyze(const char *path, const mpxkit_spacetime_options *o,
			     mpxkit_spacetime **out, mpxkit_diag *diag)
{
	input in = {path, NULL, 0, path};

	if (path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "analyze: missing argument");
	return analyze(&in, o, out, diag);
}

int mpxkit_spacetime_analyze_buffer(const void *buf, size_t len, const char *name,
				    const mpxkit_spacetime_options *o, mpxkit_spacetime **out,
				    mpxkit_diag *diag)
{
	input in = {NULL, buf, len, name ? name : "<profile>"};

	if (buf == NULL && len > 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "analyze: missing argument");
	return analyze(&in, o, out, diag);
}

void mpxkit_spacetime_options_init(mpxkit_spacetime_options *o)
{
	memset(o, 0, sizeof *o);
	o->min_weight = 0.01;
	o->overlap = 0.90;
	o->appear = 0.01;
	o->factor = 2.0;
	o->cpi_factor = 1.5;
	o->imbalance = 1.25;
	o->min_share = 0.005;
	o->bins = 256;
}

double mpxkit_spacetime_bin_metric(const mpxkit_spacetime *r, size_t space, size_t bin, int metric)
{
	const st_internal *in = r->internal;

	if (space >= r->n_spaces || bin >= r->n_bins || r->bin_sums == NULL)
		return NAN;
	return st_metric_value(&in->ev, metric,
			       r->bin_sums + (space * r->n_bins + bin) * r->n_events);
}

double mpxkit_spacetime_bin_cost(const mpxkit_spacetime *r, size_t space, size_t bin)
{
	const st_internal *in = r->internal;
	const uint64_t *c;
	double cost = 0;

	if (space >= r->n_spaces || bin >= r->n_bins || r->bin_sums == NULL || !(r->cost > 0))
		return NAN;
	c = r->bin_sums + (space * r->n_bins + bin) * r->n_events;
	for (size_t e = 0; e < r->n_events; e++)
		cost += in->ev.cost_coef[e] * (double)c[e];
	return cost / r->cost;
}

void mpxkit_spacetime_free(mpxkit_spacetime *r)
{
	st_internal *in;

	if (r == NULL)
		return;
	in = r->internal;
	for (size_t k = 0; r->spaces && k < r->n_spaces; k++) {
		free(r->spaces[k].runs);
		free(r->spaces[k].thread_share);
	}
	free(r->spaces);
	free(r->findings);
	free(r->patterns);
	for (size_t t = 0; r->threads && t < r->n_threads; t++) {
		free(r->threads[t].bin_cost);
		free(r->threads[t].bin_wait);
	}
	free(r->threads);
	for (size_t e = 0; r->events && e < r->n_events; e++)
		free(r->events[e]);
	free(r->events);
	free(r->bin_first_window);
	free(r->bin_sums);
	if (in) {
		st_events_free(&in->ev);
		for (size_t i = 0; i < in->n_strings; i++)
			free(in->strings[i]);
		free(in->strings);
		free(in);
	}
	free(r);
}

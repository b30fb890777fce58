/* SPDX-License-Identifier: BSD-3-Clause */
/* Screening: defects and advantages of spaces, phases, transitions and threads, ranked by the cost
 * they explain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spacetime_impl.h"

/* The smallest share of a space's base that a phase, and the rest of its time, must hold. */
#define PHASE_MIN_PART 0.10
/* The rest of the program must hold this share of a metric's base to be compared with. */
#define REST_MIN_PART 0.05
/* A phase-change that explains this share of a space defect's excess replaces it. */
#define ABSORB		0.5
#define MIN_TRANSITIONS 2

static const char *const advice[MPXKIT_SPACETIME_N_CLASSES] = {
    [MPXKIT_CLASS_D1_MISS] =
	"look at the access stride and the data layout (loop order, structure of arrays)",
    [MPXKIT_CLASS_LL_MISS] = "the working set outgrows the last-level cache: block the loop, or "
			     "stream through the data once",
    [MPXKIT_CLASS_I1_MISS] =
	"the hot code is larger than I1: less inlining and unrolling, hot/cold splitting, PGO",
    [MPXKIT_CLASS_BRANCH_MISPREDICT] = "the branch follows the data: make it branch-free "
				       "(conditional move, arithmetic) or sort the data",
    [MPXKIT_CLASS_INDIRECT_MISPREDICT] = "calls through pointers change target often: group the "
					 "work by target, or devirtualise",
    [MPXKIT_CLASS_CPI] = "stalls without a miss or mispredict counted: look at dependencies and "
			 "long-latency operations",
    [MPXKIT_CLASS_PAGE_FAULTS] = "memory is touched for the first time here: preallocate, reuse "
				 "buffers, or use huge pages",
    [MPXKIT_CLASS_CONTEXT_SWITCHES] = "the thread blocks or is preempted here: look at locks, I/O "
				      "and oversubscription",
    [MPXKIT_CLASS_LOAD_IMBALANCE] = "share the work evenly: schedule(dynamic) or (guided), or "
				    "split the iterations by cost",
    [MPXKIT_CLASS_PHASE_CHANGE] =
	"the same code behaves worse in this phase: its input or working set changed there",
    [MPXKIT_CLASS_TRANSITION] = "the preceding space evicts this one's data: fuse them, reorder, "
				"or shrink what runs between",
};

typedef struct finding_list {
	mpxkit_spacetime_finding *v;
	double *excess; /* events beyond the reference, for absorbing */
	size_t n, cap;
} finding_list;

static mpxkit_spacetime_finding *add(finding_list *l, double excess)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		mpxkit_spacetime_finding *v = realloc(l->v, cap * sizeof *v);
		if (v == NULL)
			return NULL;
		l->v = v;
		double *e = realloc(l->excess, cap * sizeof *e);
		if (e == NULL)
			return NULL;
		l->excess = e;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof l->v[l->n]);
	l->v[l->n].after = -1;
	l->v[l->n].thread = -1;
	l->v[l->n].event_share = NAN;
	l->v[l->n].stall_share = NAN;
	l->v[l->n].threshold = NAN;
	l->excess[l->n] = excess;
	return &l->v[l->n++];
}

/* A metric value as people read it: "38/kI", "12.5 %", "1.42", "60/ms". */
static void fmt_value(int metric, double v, char *buf, size_t size)
{
	switch (metric) {
	case MPXKIT_METRIC_I1_MPKI:
	case MPXKIT_METRIC_D1_MPKI:
	case MPXKIT_METRIC_LL_MPKI:
		snprintf(buf, size, "%.3g/kI", v);
		break;
	case MPXKIT_METRIC_FAULTS_PER_MS:
	case MPXKIT_METRIC_CSW_PER_MS:
		snprintf(buf, size, "%.3g/ms", v);
		break;
	case MPXKIT_METRIC_CPI:
		snprintf(buf, size, "%.2f", v);
		break;
	default:
		snprintf(buf, size, "%.3g %%", 100 * v);
	}
}

/* What one metric of one scope screens on: numerator and base sums. */
typedef struct sums {
	double n, b;
} sums;

static sums sums_of(const st_events *ev, const st_metric_def *d, const uint64_t *s)
{
	sums r = {st_event_sum(ev, d->num, s), st_event_sum(ev, d->base, s)};
	return r;
}

static double factor_of(const mpxkit_spacetime *r, const st_metric_def *d)
{
	return d->cpi ? r->options.cpi_factor : r->options.factor;
}

/* ---- one space against the rest of the program ----------------------------------------------- */

/*
 * The one rule of every rate finding: `what` (a space, a phase, a space after a transition) is
 * a defect when its rate is F times the defect reference and above the floor, an advantage when
 * F times below the advantage reference (NaN: none), which is above the floor; its share is the
 * excess (or the saving) at the metric's weight.  *out is the finding, or NULL when there is none.
 */
typedef struct judged {
	sums what;
	double defect_ref, advantage_ref; /* unscaled rates */
	mpxkit_spacetime_class cls; /* of a rate defect: the metric's; else phase, transition */
	mpxkit_spacetime_scope scope;
	size_t space;
} judged;

static int judge(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l,
		 const st_metric_def *d, double w, const judged *j, mpxkit_spacetime_finding **out)
{
	double f = factor_of(r, d), rate = j->what.n / j->what.b, ref, excess, share;
	sums pg = sums_of(in->ev, d, in->program);
	mpxkit_spacetime_finding *x;
	int advantage;

	*out = NULL;
	if (d->scale * rate >= f * d->scale * j->defect_ref && d->scale * rate >= d->floor) {
		advantage = 0;
		ref = j->defect_ref;
		excess = j->what.n - ref * j->what.b;
	} else if (rate * f <= j->advantage_ref && d->scale * j->advantage_ref >= d->floor) {
		advantage = 1;
		ref = j->advantage_ref;
		excess = ref * j->what.b - j->what.n;
	} else {
		return 0;
	}
	share = excess * w / r->cost;
	if (!(share >= r->options.min_share))
		return 0;
	if ((x = add(l, excess)) == NULL)
		return -MPXKIT_ENOMEM;
	x->advantage = advantage;
	x->cls = j->cls;
	x->scope = j->scope;
	x->space = j->space;
	x->metric = d->metric;
	x->value = d->scale * rate;
	x->program_value = r->metrics[d->metric];
	x->reference_value = d->scale * ref;
	x->share = share;
	x->event_share = pg.n > 0 ? j->what.n / pg.n : NAN;
	in->hot_line(in->hot_arg, j->space, d->num, &x->file, &x->line);
	*out = x;
	return 0;
}

/* ---- a scope against the top-down thresholds ------------------------------------------------ */

/* What the absolute test of one class found on one scope (the program or a space). */
typedef struct past {
	sums what;
	double stall_share;
	double n_theta; /* the count at which the class would cost exactly its node's threshold */
	const st_absolute *rule;
} past;

/* The stall share of class cls in a scope: its events at their weight over the scope's cost. */
static double class_share(const st_screen_input *in, int cls, const uint64_t *s, double cost)
{
	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++) {
		const st_metric_def *d = st_metric_def_for(in->ev, m);
		if (d != NULL && d->cls == cls) {
			double w = st_metric_weight(in->ev, d, in->program);
			return w * st_event_sum(in->ev, d->num, s) / cost;
		}
	}
	return NAN;
}

/* 1 when the scope (sums s, cost) is past the class's thresholds, with the numbers in *out. */
static int past_threshold(const st_screen_input *in, const st_metric_def *d, double w,
			  const uint64_t *s, double cost, past *out)
{
	const st_absolute *a = st_absolute_for(d->cls);
	double node = 0, others;

	if (a == NULL || !(cost > 0))
		return 0;
	out->rule = a;
	out->what = sums_of(in->ev, d, s);
	if (!(out->what.b > 0) || !(out->what.n > 0))
		return 0;
	out->stall_share = w * out->what.n / cost;
	/* toplev flags a node only under a flagged parent: the level-1 node sums its classes. */
	for (int c = 0; c < MPXKIT_SPACETIME_N_CLASSES; c++) {
		const st_absolute *o = st_absolute_for(c);
		double x =
		    o != NULL && o->category == a->category ? class_share(in, c, s, cost) : 0;
		node += isnan(x) ? 0 : x;
	}
	if (!(node > st_category_of(a)->threshold) || !(out->stall_share > a->threshold) ||
	    !(d->scale * out->what.n / out->what.b >= d->floor))
		return 0;
	if (a->per_kilo_instr > 0 &&
	    !(1000 * out->what.n / st_instructions(in->ev, s) > a->per_kilo_instr))
		return 0;
	others = cost - w * out->what.n;
	out->n_theta = a->threshold * (others > 0 ? others : 0) / (w * (1 - a->threshold));
	return 1;
}

/* Fills a finding of an absolute test past its thresholds; its share was checked. */
static mpxkit_spacetime_finding *add_absolute(mpxkit_spacetime *r, const st_screen_input *in,
					      finding_list *l, const st_metric_def *d,
					      const past *p, mpxkit_spacetime_scope scope, size_t k)
{
	mpxkit_spacetime_finding *x = add(l, p->what.n - p->n_theta);

	if (x == NULL)
		return NULL;
	x->absolute = 1;
	x->cls = (mpxkit_spacetime_class)d->cls;
	x->scope = scope;
	x->space = k;
	x->metric = d->metric;
	x->value = d->scale * p->what.n / p->what.b;
	x->program_value = r->metrics[d->metric];
	x->reference_value = d->scale * p->n_theta / p->what.b;
	x->stall_share = p->stall_share;
	x->threshold = p->rule->threshold;
	in->hot_line(in->hot_arg, k, d->num, &x->file, &x->line);
	return x;
}

/* The whole program past a class's thresholds, named after the space with most of its events. */
static int program_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l,
			   const st_metric_def *d, double w)
{
	mpxkit_spacetime_finding *x;
	size_t best = SIZE_MAX;
	double most = 0, share;
	past p;

	if (!past_threshold(in, d, w, in->program, r->cost, &p))
		return 0;
	share = (p.what.n - p.n_theta) * w / r->cost;
	for (size_t k = 0; k < r->n_spaces; k++) {
		double n = st_event_sum(in->ev, d->num, in->space_sums + k * in->ev->n);
		if (n > most) {
			most = n;
			best = k;
		}
	}
	if (!(share >= r->options.min_share) || best == SIZE_MAX)
		return 0;
	if ((x = add_absolute(r, in, l, d, &p, MPXKIT_SCOPE_PROGRAM, best)) == NULL)
		return -MPXKIT_ENOMEM;
	x->share = share;
	x->event_share = most / p.what.n;
	return 0;
}

/* A space past a class's thresholds, at least as bad as the program's own rate. */
static int absolute_space_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l,
				  size_t k, const st_metric_def *d, double w)
{
	sums pg = sums_of(in->ev, d, in->program);
	mpxkit_spacetime_finding *x;
	double share;
	past p;

	if (!past_threshold(in, d, w, in->space_sums + k * in->ev->n, in->space_cost[k], &p) ||
	    !(p.what.n / p.what.b >= pg.n / pg.b))
		return 0;
	share = (p.what.n - p.n_theta) * w / r->cost;
	if (!(share >= r->options.min_share))
		return 0;
	if ((x = add_absolute(r, in, l, d, &p, MPXKIT_SCOPE_SPACE, k)) == NULL)
		return -MPXKIT_ENOMEM;
	x->share = share;
	x->event_share = pg.n > 0 ? p.what.n / pg.n : NAN;
	return 0;
}

/*
 * A space against the rest of the program, its advantages against the whole; past the
 * top-down thresholds when no relative defect says more (doc/spacetime.md).
 */
static int space_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l, size_t k,
			 const st_metric_def *d, double w)
{
	sums sp = sums_of(in->ev, d, in->space_sums + k * in->ev->n);
	sums pg = sums_of(in->ev, d, in->program);
	sums rest = {pg.n - sp.n, pg.b - sp.b};
	mpxkit_spacetime_finding *x = NULL;
	int rc;

	if (!(sp.b > 0))
		return 0;
	if (rest.b >= REST_MIN_PART * pg.b && rest.b > 0) {
		/*
		 * An advantage is against the whole program: what the space saves next to the
		 * program's average, which never exceeds the program's own events (against the
		 * rest, a defect elsewhere would make every other space look good).
		 */
		judged j = {sp,
			    rest.n / rest.b,
			    pg.n / pg.b,
			    (mpxkit_spacetime_class)d->cls,
			    MPXKIT_SCOPE_SPACE,
			    k};
		if ((rc = judge(r, in, l, d, w, &j, &x)) < 0 || (x != NULL && !x->advantage))
			return rc;
	}
	return absolute_space_finding(r, in, l, k, d, w);
}

/* ---- one space against itself at other times ------------------------------------------------- */

static int phase_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l, size_t k,
			 const st_metric_def *d, double w)
{
	size_t nb = r->n_bins, ne = in->ev->n, best_i = 0, best_j = 0, start = 0;
	sums sp = sums_of(in->ev, d, in->space_sums + k * ne), ph = {0, 0}, rest;
	double run = 0, best = 0, rate;
	mpxkit_spacetime_finding *x;
	int found = 0, rc;

	if (!(sp.b > 0))
		return 0;
	rate = sp.n / sp.b;
	/* Kadane: the run of bins with the largest excess over the space's own rate. */
	for (size_t j = 0; j < nb; j++) {
		sums bin = sums_of(in->ev, d, r->bin_sums + (k * nb + j) * ne);
		double xj = bin.n - rate * bin.b;
		if (run <= 0) {
			run = 0;
			start = j;
		}
		run += xj;
		if (run > best) {
			best = run;
			best_i = start;
			best_j = j;
			found = 1;
		}
	}
	if (!found)
		return 0;
	for (size_t j = best_i; j <= best_j; j++) {
		sums bin = sums_of(in->ev, d, r->bin_sums + (k * nb + j) * ne);
		ph.n += bin.n;
		ph.b += bin.b;
	}
	rest.n = sp.n - ph.n;
	rest.b = sp.b - ph.b;
	if (!(ph.b >= PHASE_MIN_PART * sp.b) || !(rest.b >= PHASE_MIN_PART * sp.b))
		return 0;
	/* Worse than the same code at other times; a phase is never an advantage. */
	judged j = {ph, rest.n / rest.b, NAN, MPXKIT_CLASS_PHASE_CHANGE, MPXKIT_SCOPE_PHASE, k};
	if ((rc = judge(r, in, l, d, w, &j, &x)) < 0 || x == NULL)
		return rc;
	x->first_window = r->bin_first_window[best_i];
	x->last_window = r->bin_first_window[best_j + 1] - 1;
	return 0;
}

/* ---- a space right after another ------------------------------------------------------------- */

static int transition_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l,
			      size_t p, const st_metric_def *d, double w)
{
	const mpxkit_spacetime_pattern *pat = &r->patterns[p];
	size_t ne = in->ev->n;
	sums after = sums_of(in->ev, d, in->pattern_sums + p * ne);
	sums to = sums_of(in->ev, d, in->space_sums + pat->to * ne);
	mpxkit_spacetime_finding *x;
	int rc;

	if (pat->count < MIN_TRANSITIONS || !(after.b > 0) || !(to.b > after.b))
		return 0;
	judged j = {after,  to.n / to.b, to.n / to.b, MPXKIT_CLASS_TRANSITION, MPXKIT_SCOPE_PATTERN,
		    pat->to};
	if ((rc = judge(r, in, l, d, w, &j, &x)) == 0 && x != NULL)
		x->after = (long)pat->from;
	return rc;
}

/* ---- threads --------------------------------------------------------------------------------- */

static int imbalance_finding(mpxkit_spacetime *r, const st_screen_input *in, finding_list *l,
			     size_t k)
{
	size_t nt = r->n_threads, ns = r->n_spaces, busy = 0, n = 0, n_all = 0;
	double max = 0, sum = 0, idle = 0, tmax = 0, tsum = 0, ratio, share;
	mpxkit_spacetime_finding *x;

	for (size_t t = 0; t < nt; t++) {
		double c = in->thread_space_cost[t * ns + k];
		if (in->thread_cost[t] > 0) {
			n_all++;
			tsum += in->thread_cost[t];
			tmax = in->thread_cost[t] > tmax ? in->thread_cost[t] : tmax;
		}
		if (!(c > 0))
			continue;
		n++;
		sum += c;
		if (c > max) {
			max = c;
			busy = t;
		}
	}
	/* Waiting is the symptom, not the place to fix: only the work is screened. */
	if (n < 2 || r->spaces[k].wait)
		return 0;
	for (size_t t = 0; t < nt; t++) {
		double c = in->thread_space_cost[t * ns + k];
		if (c > 0)
			idle += max - c;
	}
	ratio = max / (sum / (double)n);
	share = idle / (r->cost + idle);
	if (!(ratio >= r->options.imbalance) || !(share >= r->options.min_share))
		return 0;
	if ((x = add(l, idle)) == NULL)
		return -MPXKIT_ENOMEM;
	x->cls = MPXKIT_CLASS_LOAD_IMBALANCE;
	x->scope = MPXKIT_SCOPE_THREADS;
	x->space = k;
	x->metric = -1;
	x->value = ratio;
	x->program_value = n_all > 0 && tsum > 0 ? tmax / (tsum / (double)n_all) : NAN;
	x->reference_value = 1;
	x->share = share;
	x->thread = (long)busy;
	x->file = r->spaces[k].file;
	x->line = r->spaces[k].line;
	return 0;
}

/* ---- directions and ranking ------------------------------------------------------------------ */

static void direction(const mpxkit_spacetime *r, mpxkit_spacetime_finding *x, const char *what)
{
	char v[32], ref[32];
	const char *a = advice[x->cls];

	if (x->cls == MPXKIT_CLASS_LOAD_IMBALANCE) {
		const mpxkit_spacetime_thread *t = &r->threads[x->thread];
		const mpxkit_spacetime_space *s = &r->spaces[x->space];
		double wait = 0, others = 0;
		size_t n = 0;
		for (size_t i = 0; i < r->n_threads; i++) {
			if (!(s->thread_share[i] > 0))
				continue;
			n++;
			if ((long)i != x->thread) {
				wait += r->threads[i].wait_share * r->threads[i].cost_share;
				others += r->threads[i].cost_share;
			}
		}
		snprintf(x->direction, sizeof x->direction,
			 "thread %llu does %.2fx the mean work of the %zu threads that ran this "
			 "code; the others spend %.0f %% of their time in wait code: %s",
			 (unsigned long long)t->tid, x->value, n,
			 others > 0 ? 100 * wait / others : 0, a);
		return;
	}
	fmt_value(x->metric, x->value, v, sizeof v);
	fmt_value(x->metric, x->reference_value, ref, sizeof ref);
	if (x->absolute) {
		const st_absolute *rule = st_absolute_for(x->cls);
		char where[160];
		if (x->scope == MPXKIT_SCOPE_PROGRAM)
			snprintf(where, sizeof where, "; %.0f %% of them in %s",
				 100 * x->event_share, r->spaces[x->space].function);
		else
			where[0] = '\0';
		snprintf(
		    x->direction, sizeof x->direction,
		    "%s%s %s cost %.0f %% of %s, past the top-down %s > %.0f %% (%s > %.0f %%)%s: "
		    "%s",
		    x->scope == MPXKIT_SCOPE_PROGRAM ? "whole program: " : "", what, v,
		    100 * x->stall_share,
		    x->scope == MPXKIT_SCOPE_PROGRAM ? "the program" : "this code's cost",
		    rule->node, 100 * rule->threshold, st_category_of(rule)->name,
		    100 * st_category_of(rule)->threshold, where, a);
		return;
	}
	switch (x->scope) {
	case MPXKIT_SCOPE_PHASE:
		snprintf(
		    x->direction, sizeof x->direction,
		    "%s %s in windows %llu-%llu vs %s at other times of the same code, %.0f %% "
		    "of all %s: %s",
		    what, v, (unsigned long long)x->first_window,
		    (unsigned long long)x->last_window, ref, 100 * x->event_share, what, a);
		break;
	case MPXKIT_SCOPE_PATTERN:
		snprintf(x->direction, sizeof x->direction,
			 "%s %s right after %s vs %s overall: %s", what, v,
			 r->spaces[x->after].function, ref,
			 x->advantage ? "the space before warms it up; keep them together" : a);
		break;
	default:
		if (x->advantage)
			snprintf(x->direction, sizeof x->direction,
				 "%s %s vs %s for the whole program: better than its average, a "
				 "pattern to copy",
				 what, v, ref);
		else
			snprintf(x->direction, sizeof x->direction,
				 "%s %s vs %s elsewhere, %.0f %% of all %s: %s", what, v, ref,
				 100 * x->event_share, what, a);
	}
}

static int cmp_finding(const void *p, const void *q)
{
	const mpxkit_spacetime_finding *x = p, *y = q;

	if (x->advantage != y->advantage)
		return x->advantage ? 1 : -1;
	/* The program's own findings first: they are about all of its cost, as a summary is. */
	if ((x->scope == MPXKIT_SCOPE_PROGRAM) != (y->scope == MPXKIT_SCOPE_PROGRAM))
		return x->scope == MPXKIT_SCOPE_PROGRAM ? -1 : 1;
	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return x->after < y->after ? -1 : x->after > y->after;
}

/*
 * A phase-change that explains most of a space defect on the same metric replaces it; the
 * program finding of a class replaces the absolute finding of the space it names.
 */
static int absorbed(const finding_list *l, size_t i)
{
	const mpxkit_spacetime_finding *x = &l->v[i];

	if (x->scope != MPXKIT_SCOPE_SPACE || x->advantage)
		return 0;
	for (size_t j = 0; j < l->n; j++) {
		const mpxkit_spacetime_finding *y = &l->v[j];
		if (y->space != x->space || y->metric != x->metric)
			continue;
		if (y->scope == MPXKIT_SCOPE_PHASE && l->excess[j] >= ABSORB * l->excess[i])
			return 1;
		if (y->scope == MPXKIT_SCOPE_PROGRAM && x->absolute)
			return 1;
	}
	return 0;
}

static void absorb(finding_list *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++) {
		int drop = absorbed(l, i);
		if (!drop) {
			l->v[k] = l->v[i];
			l->excess[k++] = l->excess[i];
		}
	}
	l->n = k;
}

int st_screen(mpxkit_spacetime *r, const st_screen_input *in)
{
	finding_list l = {NULL, NULL, 0, 0};
	int rc = 0;

	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS && rc == 0; m++) {
		const st_metric_def *d = st_metric_def_for(in->ev, m);
		double w;
		if (d == NULL || d->cls < 0)
			continue;
		w = st_metric_weight(in->ev, d, in->program);
		if (!(w > 0) || !(r->cost > 0))
			continue;
		rc = program_finding(r, in, &l, d, w);
		for (size_t k = 0; k < r->n_spaces && rc == 0; k++) {
			rc = space_finding(r, in, &l, k, d, w);
			if (rc == 0)
				rc = phase_finding(r, in, &l, k, d, w);
		}
		for (size_t p = 0; p < r->n_patterns && rc == 0; p++)
			rc = transition_finding(r, in, &l, p, d, w);
	}
	for (size_t k = 0; k < r->n_spaces && rc == 0 && r->cost > 0; k++)
		rc = imbalance_finding(r, in, &l, k);
	if (rc < 0) {
		free(l.v);
		free(l.excess);
		return rc;
	}
	absorb(&l);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof *l.v, cmp_finding);
	for (size_t i = 0; i < l.n; i++) {
		const st_metric_def *d =
		    l.v[i].metric >= 0 ? st_metric_def_for(in->ev, l.v[i].metric) : NULL;
		direction(r, &l.v[i], d ? d->what : "");
	}
	free(l.excess);
	r->findings = l.v;
	r->n_findings = l.n;
	return 0;
}

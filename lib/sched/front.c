/* SPDX-License-Identifier: BSD-3-Clause */
/* Counted all the time: the events that take no counter, read beside the multiplexing engine. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "sched_impl.h"

/*
 * Counted all the time (doc/component.md, "What is multiplexed").  Under
 * MPXKIT_MULTIPLEX=hardware, the default, an event that takes no counter
 * (mpxkit_source_takes_counter: software events, tracepoints, msr) is not
 * multiplexed: it is enabled at the start and read at each read, exactly,
 * as perf stat counts it.  The others go to an engine of their own (sched.c)
 * over a view of their slots (mpxkit_source_open_view), C counters and all;
 * without any, there is no engine and no rotation thread at all.  The front
 * puts both back in the caller's order.  Its events' estimates are their
 * counts since the start (or the last reset), with fidelity 1; in the
 * series, rotation k's value of such an event is what it counted since the
 * series' previous rotation, read when the engine hands rotation k on; the
 * count after the last one is in the totals only, as the engine's rotation
 * in progress at the stop is.
 *
 * Reads of these events take each slot's own read(2) (mpxkit_source_read_slots),
 * which shares nothing in the source, so they never race with the
 * engine's rotation thread, which uses the same source for its own slots.
 */
/* One PMU's events, on an engine of their own, C counters of their own. */
typedef struct front_pmu {
	int pmu;	    /* its perf type (mpxkit_source_counter_pmu) */
	mpxkit_sched *s;    /* over a view of its events */
	size_t *ev, n;	    /* its engine's event i is slot ev[i] */
	double *est, *fid;  /* n: its engine's read */
	mpxkit_interval *iv; /* n: and its intervals */
} front_pmu;

struct sched_front {
	mpxkit_source *src;   /* owned */
	mpxkit_sched *inner;  /* the first PMU's engine (pmus[0].s), or NULL: nothing multiplexed */
	front_pmu *pmus;      /* one engine per PMU whose counters the events take */
	size_t n_pmus;
	/*
	 * With several engines, their rotation threads use the one source at
	 * once through their views: each call on it under this lock.
	 */
	pthread_mutex_t source_lock;
	int has_lock;
	size_t n;	      /* every event */
	size_t *aon, n_aon;   /* the slots counted all the time */
	size_t *mpx, n_mpx;   /* the inner engine's event i is slot mpx[i] */
	size_t C;	      /* the setting's C, or the default */
	mpxkit_layout layout; /* n events, the engine's G */
	int running;
	int has_clock;
	uint64_t clock0;		  /* the clock at the start */
	mpxkit_source_count *base, *rd;	  /* n: counts at the start; a read's */
	double *final, *final_fid;	  /* n: after a stop */
	mpxkit_interval *final_iv;	  /* n: and the intervals then */
	double level;			  /* the intervals' level */
	double final_ns;		  /* and its run time */
	/*
	 * The series, in the rotation thread; what it shares with the caller's
	 * thread (ser_last, kept) under ser_lock, which the rotation thread
	 * takes with its engine's lock held, and the caller's never with it.
	 */
	pthread_mutex_t ser_lock;
	int has_ser_lock;
	mpxkit_sched_series_fn series;
	mpxkit_sched_series_iv_fn series_iv; /* or this one, with each row's intervals */
	void *series_arg;
	mpxkit_interval *ser_iv; /* n */
	mpxkit_source_count *ser_rd; /* n */
	uint64_t *ser_last;	     /* n: each event's count at the previous rotation */
	double *ser_row;	     /* n */
	double *kept;		     /* rows of n_aon: each rotation's counts, for the whole series */
	size_t n_kept, cap_kept;
	int kept_lost;
	double *whole; /* after a stop with a whole-run pass: n_rotations rows of n */
	mpxkit_interval *whole_iv; /* and their intervals, where the engine's pass has them */
};

int mpxkit__front_wanted(mpxkit_source *src, const mpxkit_sched_config *cfg)
{
	size_t n = mpxkit_source_n_slots(src);
	int first = -1;

	if (cfg->multiplex != MPXKIT_SCHED_MULTIPLEX_HARDWARE || mpxkit_source_is_virtual(src))
		return 0;
	/* Some event takes no counter, or the events take counters of two PMUs. */
	for (size_t i = 0; i < n; i++) {
		int pmu = mpxkit_source_counter_pmu(src, (int)i);
		if (pmu < 0 || (first >= 0 && pmu != first))
			return 1;
		first = pmu;
	}
	return 0;
}

void mpxkit__front_free(sched_front *f)
{
	if (f == NULL)
		return;
	mpxkit__front_stop(f);
	for (size_t p = 0; p < f->n_pmus; p++) {
		mpxkit_sched_free(f->pmus[p].s); /* and its view */
		free(f->pmus[p].ev);
		free(f->pmus[p].est);
		free(f->pmus[p].fid);
		free(f->pmus[p].iv);
	}
	free(f->pmus);
	if (f->has_lock)
		pthread_mutex_destroy(&f->source_lock);
	if (f->has_ser_lock)
		pthread_mutex_destroy(&f->ser_lock);
	mpxkit_source_free(f->src);
	free(f->aon);
	free(f->mpx);
	free(f->base);
	free(f->rd);
	free(f->final);
	free(f->final_fid);
	free(f->final_iv);
	free(f->ser_iv);
	free(f->whole_iv);
	free(f->ser_rd);
	free(f->ser_last);
	free(f->ser_row);
	free(f->kept);
	free(f->whole);
	free(f);
}

static int alloc_front(sched_front *f)
{
	size_t n = f->n;

	f->aon = calloc(n, sizeof *f->aon);
	f->mpx = calloc(n, sizeof *f->mpx);
	f->base = calloc(n, sizeof *f->base);
	f->rd = calloc(n, sizeof *f->rd);
	f->pmus = calloc(n, sizeof *f->pmus);
	f->final = calloc(n, sizeof *f->final);
	f->final_fid = calloc(n, sizeof *f->final_fid);
	f->ser_rd = calloc(n, sizeof *f->ser_rd);
	f->ser_last = calloc(n, sizeof *f->ser_last);
	f->ser_row = calloc(n, sizeof *f->ser_row);
	f->final_iv = calloc(n, sizeof *f->final_iv);
	f->ser_iv = calloc(n, sizeof *f->ser_iv);
	return f->aon && f->mpx && f->base && f->rd && f->pmus && f->final &&
		       f->final_fid && f->ser_rd && f->ser_last && f->ser_row && f->final_iv &&
		       f->ser_iv
		   ? 0
		   : -MPXKIT_ENOMEM;
}

/*
 * The PMU's engine over a view of its events; on failure the view is freed.
 * C: MPXKIT_COUNTERS for every PMU; else the core PMU's generic counters
 * (mpxkit_sched_default_counters) for the core PMU's events, and 4 for
 * another PMU's (an uncore PMU: libpfm4 tells no counter count by perf type).
 */
static int new_pmu_engine(sched_front *f, front_pmu *p, const mpxkit_sched_config *cfg,
			  mpxkit_diag *diag)
{
	mpxkit_sched_config inner = *cfg;
	mpxkit_source *view = NULL;
	int rc;

	p->est = calloc(p->n, sizeof *p->est);
	p->fid = calloc(p->n, sizeof *p->fid);
	p->iv = calloc(p->n, sizeof *p->iv);
	if (p->est == NULL || p->fid == NULL || p->iv == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
	if ((rc = mpxkit_source_open_view(&view, f->src, p->ev, p->n,
					  f->has_lock ? &f->source_lock : NULL, diag)) < 0)
		return rc;
	inner.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* its events all take counters */
	if (inner.counters == 0 && p->pmu != PERF_TYPE_RAW)
		inner.counters = MPXKIT_SCHED_DEFAULT_COUNTERS;
	rc = mpxkit_sched_new(&p->s, view, &inner, diag);
	if (rc < 0)
		mpxkit_source_free(view);
	return rc;
}

/* The events that take counters, by PMU, in the order their first events came. */
static int group_by_pmu(sched_front *f, mpxkit_diag *diag)
{
	for (size_t i = 0; i < f->n_mpx; i++) {
		int pmu = mpxkit_source_counter_pmu(f->src, (int)f->mpx[i]);
		size_t p = 0;
		while (p < f->n_pmus && f->pmus[p].pmu != pmu)
			p++;
		if (p == f->n_pmus) {
			f->pmus[p].pmu = pmu;
			if ((f->pmus[p].ev = calloc(f->n_mpx, sizeof *f->pmus[p].ev)) == NULL)
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
			f->n_pmus++;
		}
		f->pmus[p].ev[f->pmus[p].n++] = f->mpx[i];
	}
	return 0;
}

/*
 * With nothing multiplexed the estimator estimates nothing, but a setting
 * that names one that cannot be built (a learned estimator's model missing)
 * is refused as the engine would refuse it, not accepted in silence.
 */
static int check_estimator(const sched_front *f, const mpxkit_sched_config *cfg,
			   mpxkit_diag *diag)
{
	mpxkit_layout layout = {f->n, 1, NULL, 0, 0};
	mpxkit_estimator_options opts = {cfg->model[0] ? cfg->model : NULL};
	mpxkit_estimator *est = NULL;
	int rc = mpxkit_estimator_new(&est, cfg->estimator[0] ? cfg->estimator : "fixed", &layout,
				      &opts, diag);

	mpxkit_estimator_free(est);
	return rc;
}

int mpxkit__front_new(sched_front **out, mpxkit_source *src, const mpxkit_sched_config *cfg,
		      mpxkit_diag *diag)
{
	sched_front *f = calloc(1, sizeof *f);
	int rc;

	if (f == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
	f->src = src;
	f->n = mpxkit_source_n_slots(src);
	if (pthread_mutex_init(&f->ser_lock, NULL) != 0) {
		free(f);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: cannot create a lock");
	}
	f->has_ser_lock = 1;
	for (size_t i = 0; i < f->n; i++)
		f->n_mpx += mpxkit_source_takes_counter(src, (int)i) != 0;
	if (alloc_front(f) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
		goto fail;
	}
	f->n_mpx = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (mpxkit_source_takes_counter(src, (int)i))
			f->mpx[f->n_mpx++] = i;
		else
			f->aon[f->n_aon++] = i;
	}
	if (cfg->reference[0] && f->n_mpx == 0) {
		rc = mpxkit_fail(diag, MPXKIT_EINVAL,
				 "MPXKIT_REFERENCE=%s: nothing is multiplexed (every event is counted "
				 "all the time under MPXKIT_MULTIPLEX=hardware)",
				 cfg->reference);
		goto fail;
	}
	if ((rc = group_by_pmu(f, diag)) < 0)
		goto fail;
	if (cfg->reference[0] && f->n_pmus > 1) {
		rc = mpxkit_fail(diag, MPXKIT_EINVAL,
				 "MPXKIT_REFERENCE=%s: the events take counters of %zu PMUs, each "
				 "multiplexed apart; a reference serves one",
				 cfg->reference, f->n_pmus);
		goto fail;
	}
	if (f->n_pmus > 1) {
		if (pthread_mutex_init(&f->source_lock, NULL) != 0) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: cannot create a lock");
			goto fail;
		}
		f->has_lock = 1;
	}
	for (size_t p = 0; p < f->n_pmus; p++)
		if ((rc = new_pmu_engine(f, &f->pmus[p], cfg, diag)) < 0)
			goto fail;
	f->inner = f->n_pmus ? f->pmus[0].s : NULL;
	f->level = f->inner			? mpxkit_sched_level(f->inner)
		   : cfg->level > 0		? cfg->level
						: MPXKIT_INTERVAL_LEVEL;
	if (f->n_mpx == 0 && (rc = check_estimator(f, cfg, diag)) < 0)
		goto fail;
	f->C = f->inner ? mpxkit_sched_counters(f->inner)
			: cfg->counters ? cfg->counters
					: mpxkit_sched_default_counters();
	f->layout = (mpxkit_layout){f->n, 1, NULL, cfg->reference[0] != 0, 0};
	for (size_t p = 0; p < f->n_pmus; p++) /* the longest rotation */
		if (mpxkit_sched_layout(f->pmus[p].s)->n_groups > f->layout.n_groups)
			f->layout.n_groups = mpxkit_sched_layout(f->pmus[p].s)->n_groups;
	*out = f;
	return 0;
fail:
	f->src = NULL; /* the caller's still */
	mpxkit__front_free(f);
	return rc;
}

const mpxkit_layout *mpxkit__front_layout(const sched_front *f)
{
	return &f->layout;
}

size_t mpxkit__front_counters(const sched_front *f)
{
	return f->C;
}

const char *mpxkit__front_estimator(const sched_front *f)
{
	return f->inner ? mpxkit_sched_estimator(f->inner) : "exact";
}

const char *mpxkit__front_schedule(const sched_front *f)
{
	return f->inner ? mpxkit_sched_schedule(f->inner) : "none";
}

double mpxkit__front_level(const sched_front *f)
{
	return f->level;
}

/* An exact count's interval: of zero width. */
static mpxkit_interval exact_iv(double count)
{
	mpxkit_interval iv = {count, count, 0.0, INFINITY, 0};

	return iv;
}

size_t mpxkit__front_n_multiplexed(const sched_front *f)
{
	return f->n_mpx;
}

size_t mpxkit__front_wakeups(const sched_front *f)
{
	size_t n = 0;

	for (size_t p = 0; p < f->n_pmus; p++)
		n += mpxkit_sched_wakeups(f->pmus[p].s);
	return n;
}

/* The events counted all the time, read into c (each slot's own read(2)). */
static int read_aon(sched_front *f, mpxkit_source_count *c)
{
	return f->n_aon ? mpxkit_source_read_slots(f->src, f->aon, f->n_aon, c) : 0;
}

/*
 * Rotation k of the engine, in its thread: its events' estimates (and
 * intervals, iv not NULL), and ours since rotation k-1.
 */
static void inner_rotation(sched_front *f, size_t k, const double *est, const mpxkit_interval *iv)
{
	int ok;

	pthread_mutex_lock(&f->ser_lock);
	ok = read_aon(f, f->ser_rd) == 0;

	for (size_t i = 0; i < f->pmus[0].n; i++) {
		f->ser_row[f->pmus[0].ev[i]] = est[i];
		if (iv)
			f->ser_iv[f->pmus[0].ev[i]] = iv[i];
	}
	for (size_t i = 0; i < f->n_aon; i++) {
		size_t e = f->aon[i];
		uint64_t v = ok ? f->ser_rd[e].value : f->ser_last[e];
		f->ser_row[e] = (double)(v - f->ser_last[e]);
		f->ser_iv[e] = exact_iv(f->ser_row[e]);
		f->ser_last[e] = v;
	}
	if (!f->kept_lost && f->n_kept == f->cap_kept) {
		size_t cap = f->cap_kept ? 2 * f->cap_kept : 64;
		double *kept = realloc(f->kept, cap * (f->n_aon ? f->n_aon : 1) * sizeof *kept);
		if (kept == NULL)
			f->kept_lost = 1;
		else
			f->kept = kept, f->cap_kept = cap;
	}
	if (!f->kept_lost) {
		for (size_t i = 0; i < f->n_aon; i++)
			f->kept[f->n_kept * f->n_aon + i] = f->ser_row[f->aon[i]];
		f->n_kept++;
	}
	pthread_mutex_unlock(&f->ser_lock);
	if (f->series_iv)
		f->series_iv(f->series_arg, k, f->ser_row, f->ser_iv);
	else
		f->series(f->series_arg, k, f->ser_row);
}

static void on_inner_rotation(void *arg, size_t k, const double *est)
{
	inner_rotation(arg, k, est, NULL);
}

static void on_inner_rotation_iv(void *arg, size_t k, const double *est, const mpxkit_interval *iv)
{
	inner_rotation(arg, k, est, iv);
}

int mpxkit__front_on_rotation_iv(sched_front *f, mpxkit_sched_series_iv_fn fn, void *arg)
{
	if (f->running)
		return -MPXKIT_ESTATE;
	if (fn && f->n_pmus > 1)
		return -MPXKIT_ENOSUPP;
	f->series = NULL;
	f->series_iv = fn;
	f->series_arg = arg;
	if (f->inner == NULL)
		return 0;
	return mpxkit_sched_on_rotation_iv(f->inner, fn ? on_inner_rotation_iv : NULL, f);
}

int mpxkit__front_on_rotation(sched_front *f, mpxkit_sched_series_fn fn, void *arg)
{
	if (f->running)
		return -MPXKIT_ESTATE;
	/* Each PMU rotates on its own clock: there is no one series of them all. */
	if (fn && f->n_pmus > 1)
		return -MPXKIT_ENOSUPP;
	f->series = fn;
	f->series_iv = NULL;
	f->series_arg = arg;
	if (f->inner == NULL)
		return 0; /* nothing rotates: no rotation to tell of */
	return mpxkit_sched_on_rotation(f->inner, fn ? on_inner_rotation : NULL, f);
}

/* Where the events counted all the time start from: now. */
static int take_base(sched_front *f)
{
	int rc;

	pthread_mutex_lock(&f->ser_lock);
	rc = read_aon(f, f->base);
	for (size_t i = 0; rc == 0 && i < f->n_aon; i++)
		f->ser_last[f->aon[i]] = f->base[f->aon[i]].value;
	f->n_kept = 0;
	f->kept_lost = 0;
	f->has_clock = mpxkit_source_clock(f->src, &f->clock0) == 0;
	pthread_mutex_unlock(&f->ser_lock);
	return rc;
}

static int each_aon(sched_front *f, int (*op)(mpxkit_source *, int))
{
	int rc = 0;

	for (size_t i = 0; i < f->n_aon; i++) {
		int r = op(f->src, (int)f->aon[i]);
		rc = rc ? rc : r;
	}
	return rc;
}

int mpxkit__front_start(sched_front *f)
{
	int rc;

	if (f->running)
		return -MPXKIT_ESTATE;
	free(f->whole);
	f->whole = NULL;
	/*
	 * The engine first, ours last, and at the stop ours first: their
	 * counts hold none of the engine's own work at either end (its thread's
	 * start, the eventfd write(2) that wakes it to quit).
	 */
	size_t started = 0;

	/* Disabled, our counts stand still from the base taken here to their enable. */
	rc = each_aon(f, mpxkit_source_disable);
	if (rc == 0)
		rc = each_aon(f, mpxkit_source_reset);
	if (rc == 0)
		rc = take_base(f);
	while (rc == 0 && started < f->n_pmus)
		if ((rc = mpxkit_sched_start(f->pmus[started].s)) == 0)
			started++;
	if (rc == 0)
		rc = each_aon(f, mpxkit_source_enable);
	if (rc < 0) {
		each_aon(f, mpxkit_source_disable);
		while (started > 0)
			mpxkit_sched_stop(f->pmus[--started].s);
		return rc;
	}
	f->running = 1;
	return 0;
}

/*
 * The totals now: the engine's, and ours from their own reads; fidelity 1
 * for ours, counted all along.  run_ns: the engine's run time, else the
 * source's clock since the start (the first event's enabled time without
 * one).
 */
static int totals(sched_front *f, mpxkit_sched_read_mode mode, int use_mode, double *est,
		  double *fidelity, double *run_ns, mpxkit_interval *iv)
{
	double ns = 0;
	int rc = 0, r;

	/* Each PMU's engine; the first one's rotations and run time are the front's. */
	for (size_t p = 0; p < f->n_pmus; p++) {
		front_pmu *u = &f->pmus[p];
		double *fid = fidelity || run_ns ? u->fid : NULL, one_ns = 0;
		r = iv	       ? mpxkit_sched_read_iv(u->s, u->est, fid, &one_ns, u->iv)
		    : run_ns   ? mpxkit_sched_read_timed(u->s, u->est, fid, &one_ns)
		    : use_mode ? mpxkit_sched_read_as(u->s, mode, u->est, fid)
			       : mpxkit_sched_read(u->s, u->est, fid);
		if (r < 0)
			return r;
		if (p == 0)
			rc = r, ns = one_ns;
		for (size_t i = 0; i < u->n; i++) {
			est[u->ev[i]] = u->est[i];
			if (fidelity)
				fidelity[u->ev[i]] = u->fid[i];
			if (iv)
				iv[u->ev[i]] = u->iv[i];
		}
	}
	if ((r = read_aon(f, f->rd)) < 0)
		return r;
	for (size_t i = 0; i < f->n_aon; i++) {
		size_t e = f->aon[i];
		est[e] = (double)(f->rd[e].value - f->base[e].value);
		if (fidelity)
			fidelity[e] = 1.0;
		if (iv)
			iv[e] = exact_iv(est[e]);
	}
	if (run_ns && f->inner == NULL) {
		uint64_t now;
		if (f->has_clock && mpxkit_source_clock(f->src, &now) == 0)
			ns = (double)(now - f->clock0);
		else if (f->n_aon)
			ns = (double)(f->rd[f->aon[0]].time_enabled -
				      f->base[f->aon[0]].time_enabled);
	}
	if (run_ns)
		*run_ns = ns;
	return rc;
}

/* After a stop with a whole-run pass: its rows, ours put in from the series kept. */
static void take_whole(sched_front *f)
{
	mpxkit_sched_whole w;

	if (f->inner == NULL || f->n_pmus != 1 || f->series == NULL || f->kept_lost ||
	    mpxkit_sched_whole_series(f->inner, &w) != 1 || w.n_rotations != f->n_kept)
		return;
	f->whole = malloc((w.n_rotations ? w.n_rotations : 1) * f->n * sizeof *f->whole);
	if (f->whole == NULL)
		return;
	free(f->whole_iv);
	f->whole_iv = w.iv ? malloc((w.n_rotations ? w.n_rotations : 1) * f->n * sizeof *f->whole_iv)
			   : NULL;
	for (size_t k = 0; k < w.n_rotations; k++) {
		double *row = f->whole + k * f->n;
		mpxkit_interval *ivr = f->whole_iv ? f->whole_iv + k * f->n : NULL;
		for (size_t i = 0; i < f->pmus[0].n; i++) {
			row[f->pmus[0].ev[i]] = w.est[k * f->pmus[0].n + i];
			if (ivr)
				ivr[f->pmus[0].ev[i]] = w.iv[k * f->pmus[0].n + i];
		}
		for (size_t i = 0; i < f->n_aon; i++) {
			row[f->aon[i]] = f->kept[k * f->n_aon + i];
			if (ivr)
				ivr[f->aon[i]] = exact_iv(row[f->aon[i]]);
		}
	}
}

int mpxkit__front_stop(sched_front *f)
{
	int rc = 0, r;

	if (!f->running)
		return 0;
	rc = each_aon(f, mpxkit_source_disable);
	for (size_t p = 0; p < f->n_pmus; p++) {
		r = mpxkit_sched_stop(f->pmus[p].s);
		rc = rc ? rc : r;
	}
	f->running = 0;
	/* Stopped, the engine's read gives its stop's totals; ours stand still now. */
	r = totals(f, MPXKIT_SCHED_READ_EXACT, 0, f->final, f->final_fid, &f->final_ns,
		   f->final_iv);
	rc = rc ? rc : (r < 0 ? r : 0);
	take_whole(f);
	return rc;
}

int mpxkit__front_reset(sched_front *f)
{
	int rc = 0;

	if (!f->running) {
		memset(f->final, 0, f->n * sizeof *f->final);
		return 0;
	}
	for (size_t p = 0; p < f->n_pmus && rc == 0; p++)
		rc = mpxkit_sched_reset(f->pmus[p].s);
	if (rc == 0)
		rc = take_base(f);
	return rc;
}

int mpxkit__front_read(sched_front *f, mpxkit_sched_read_mode mode, int use_mode, double *est,
		       double *fidelity, double *run_ns)
{
	if (!f->running) {
		memcpy(est, f->final, f->n * sizeof *est);
		if (fidelity)
			memcpy(fidelity, f->final_fid, f->n * sizeof *fidelity);
		if (run_ns)
			*run_ns = f->final_ns;
		return f->inner ? mpxkit_sched_read(f->inner, f->pmus[0].est, NULL) : 0;
	}
	return totals(f, mode, use_mode, est, fidelity, run_ns, NULL);
}

int mpxkit__front_read_iv(sched_front *f, double *est, double *fidelity, double *run_ns,
			  mpxkit_interval *iv)
{
	if (!f->running) {
		int rc = mpxkit__front_read(f, MPXKIT_SCHED_READ_FAST, 0, est, fidelity, run_ns);
		memcpy(iv, f->final_iv, f->n * sizeof *iv);
		return rc;
	}
	return totals(f, MPXKIT_SCHED_READ_FAST, 0, est, fidelity, run_ns, iv);
}

int mpxkit__front_whole_series(const sched_front *f, mpxkit_sched_whole *out)
{
	mpxkit_sched_whole w;

	memset(out, 0, sizeof *out);
	if (f->running)
		return -MPXKIT_ESTATE;
	if (f->whole == NULL || f->inner == NULL || mpxkit_sched_whole_series(f->inner, &w) != 1)
		return 0;
	/* Only the estimates are the caller's order; the engine's raw rows are its events'. */
	out->n_rotations = w.n_rotations;
	out->est = f->whole;
	out->iv = f->whole_iv;
	return 1;
}

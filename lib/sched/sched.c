/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiplexing engine: a rotation thread per running scheduler, running sums for reads. */
#define _GNU_SOURCE /* ppoll, sched_getcpu */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif
#ifndef VALGRIND_HG_DISABLE_CHECKING
#define VALGRIND_HG_DISABLE_CHECKING(start, len) ((void)(start), (void)(len))
#endif

#include "mpxkit/mpx.h"
#include "mpxkit/sched.h"
#include "mpxkit/schedule.h"

#include "diag_last.h"
#include "sched_impl.h"

struct mpxkit_sched {
	/*
	 * Set when some events take no counter under MPXKIT_MULTIPLEX=hardware:
	 * the front (front.c) counts them and runs an engine of its own for the
	 * others; nothing below is used then.
	 */
	sched_front *front;
	mpxkit_source *src;
	mpxkit_estimator *est;
	mpxkit_schedule *sch;
	mpxkit_layout layout;
	size_t *slice; /* layout.slice under round-robin and groups with W = G: e's group */
	size_t n, G, C, W;
	size_t n_slots; /* n, plus the reference's slot (slot n) when there is one */
	int has_ref;
	int all_on; /* every event counts in every slice: nothing is multiplexed */
	/*
	 * The source switches each slice's set as one part (fixed slices: part
	 * g is slice g's set; lib/source/perf.c, "Parts"); part_size[g] events.
	 */
	int parted;
	size_t *part_size;
	uint64_t slice_ns;
	int is_virtual;
	int has_clock; /* real time measured by mpxkit_source_clock, gaps between slices included */
	char estimator[64];
	char schedule[MPXKIT_SCHED_PATH_MAX];
	mpxkit_sched_read_mode read_mode; /* what mpxkit_sched_read does */

	/* Everything below is shared with the rotation thread and guarded by lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* to a virtual thread: quit, or serve again */
	int wake_fd;	       /* to a real-time thread, which waits in ppoll: quit */
	pthread_cond_t served; /* from the thread: the virtual trace has been served */
	pthread_t thread;
	cpu_set_t allowed; /* the rotation thread's CPUs as it started: where it may follow */
	int running, quit, done;
	int error;	       /* first error the thread hit, negative, or 0 */
	mpxkit_diag error_diag; /* its line, for the thread of the call that returns it */

	/*
	 * The slice in progress and the next: the schedule chose the next
	 * slice's set before this slice is read (mpxkit/schedule.h), so the
	 * boundary switches at once and reads after.
	 */
	size_t *cur, n_cur;	     /* the set counting now */
	size_t *nxt, n_nxt;	     /* the next slice's set */
	unsigned char *on;	     /* n: counting now */
	unsigned char *mark;	     /* n: scratch, the next set */
	uint64_t *vals;		     /* C: the closed slice's counts, for the schedule */
	mpxkit_source_count *counts; /* n_slots: the last read */
	size_t *closed;		     /* C + 1: the slots a boundary reads, the reference's last */
	/* A read's own (the application thread's): the set counting now, at the read. */
	uint64_t *snap;		 /* C: mpxkit_source_snapshot's values, in the order of cur */
	uint64_t *live;		 /* n: each counting event's count at the read */
	mpxkit_source_count *rd; /* n_slots: an exact read's counts */
	uint64_t *base_value;	 /* n: each slot's count when its slice began */
	uint64_t *base_time;	 /* n: each slot's enabled time when its slice began */
	uint64_t *base_run;	 /* n: each slot's running time when its slice began */
	/*
	 * n: each counting event's count at slice_clock, read with it at one
	 * instant once the slice's set was all on (start_slice); what a read
	 * measures the slice in progress from, when start_counts says so.
	 */
	uint64_t *live_base;
	int start_counts;

	/* The window in progress: slice j of W. */
	size_t j;
	uint64_t *win_val; /* W rows of n: each closed slice's counts, or MPXKIT_NOT_COUNTED */
	double *win_len;   /* W: closed slices' lengths in nominal slices */
	uint64_t *win_obs; /* n: counted so far in the window */
	double *win_t;	   /* n: their time, ns */
	double win_ns;	   /* the closed slices' time, ns */
	double *last_rate; /* n: count per ns of e's last counted slice, for reads */
	uint64_t ref_base; /* the reference's count when the slice in progress began */
	uint64_t ref_run;  /* and its running time */
	uint64_t *ref_raw; /* W: the reference's count in each slice of the window */

	double *out; /* n: what push returned */
	/*
	 * The intervals (doc/component.md, "Intervals"): of what push
	 * returned, of the last window estimated (its estimate beside it),
	 * whose relative width the window in progress takes, of the last
	 * run's totals, and a read's scratch.
	 */
	mpxkit_interval *out_iv, *last_iv, *final_iv, *iv_scratch;
	double *last_est, *pre_tail;
	double level;
	/*
	 * What mpxkit_estimator_peek gave, kept until the estimator changes
	 * (push, flush, reset): with a look-ahead of several windows (a
	 * schedule's gap) it costs more than the rest of a read, and it is the
	 * same for every read of a window.
	 */
	double *peeked;
	int peek_pending; /* its return; -1: to compute */
	/*
	 * The shortcut of a read with every event counting all the time
	 * (all_on, a clock, no fidelity asked; "The shortcut" at
	 * read_all_on): base, what the general read adds the live slice to
	 * (sum, plus peeked when the estimator holds windows), kept until the
	 * sums or the estimator change, as the peek is.
	 */
	int shortcut; /* all_on, real time, with a clock: set by each run's begin */
	double *base; /* n */
	int base_ok;  /* 0: to compute */
	/*
	 * The unlocked read of a single event ("The unlocked read", at
	 * read_unlocked): what it needs, published under a sequence count by
	 * whoever changes the engine's state (lock held), read without the lock.
	 */
	struct {
		unsigned seq; /* odd: being changed; version seq & ~1 is in buf[(seq >> 1) & 1] */
		struct {
			int ok;		     /* the shortcut holds, one event, counting */
			size_t slot;	     /* its slot */
			double base;	     /* base[slot] */
			uint64_t base_value; /* slice_start(slot) */
			int rc;		     /* what a read returns: the rotations, or the error */
		} buf[2];
	} pub;
	double *sum;	  /* n: running sums of the estimates */
	double *final;	  /* n: totals of the last run, after a stop */
	double *counted_ns, *final_fidelity, *scratch;
	double total_ns;      /* closed slices, when there is no clock */
	double read_total;    /* the run's time at the last current_totals: fidelity's denominator */
	uint64_t run_clock;   /* the clock when the run began */
	uint64_t win_clock;   /* the clock when the window in progress began */
	uint64_t slice_clock; /* the clock when the slice in progress began */
	int stop_rc;	      /* the stop's read of the live slice, taken at the disable */
	uint64_t stop_now;    /* and the clock then */
	/* And the wall clock then (CLOCK_MONOTONIC), for the target's pace (wall_for). */
	struct timespec slice_wall;
	size_t rotations;     /* windows completed */
	size_t wakeups;	      /* the rotation thread's wake-ups this run (atomic) */
	mpxkit_sched_series_fn series;
	mpxkit_sched_series_iv_fn series_iv;
	void *series_arg;
	size_t emitted; /* windows handed to series */

	/*
	 * The whole-run pass (doc/component.md): with an estimator that has
	 * one, every window as pushed, up to whole_max; at the end of the
	 * run the pass replaces the windowed sums and gives whole_est.
	 */
	int whole;	    /* the estimator has a whole-run pass and whole_max > 0 */
	size_t whole_max;   /* windows kept at most */
	uint64_t *kept_obs; /* n_kept rows of n */
	uint64_t *kept_ref; /* n_kept rows of W, with a reference */
	uint64_t *kept_val; /* n_kept rows of W x n */
	double *kept_len;   /* n_kept rows of W */
	size_t n_kept, cap_kept;
	int kept_all;	   /* every window of this run is kept: under the cap, memory found */
	double *whole_est; /* n_kept rows of n, once the pass ran */
	mpxkit_interval *whole_iv;    /* and their intervals */
	mpxkit_interval *whole_total; /* n: the intervals of the pass's totals */
	int whole_done;	   /* the sums are the whole-run pass's */
};

/* ---- construction -------------------------------------------------------------------- */

/* No measurement: what the engine says of an event no slice has counted. */
static mpxkit_interval not_counted(void)
{
	return (mpxkit_interval){0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_UNOBSERVED};
}

static int alloc_arrays(mpxkit_sched *s)
{
	size_t n = s->n, W = s->W, C = s->C;

	s->slice = calloc(n, sizeof *s->slice);
	s->part_size = calloc(n, sizeof *s->part_size);
	s->cur = calloc(C, sizeof *s->cur);
	s->nxt = calloc(C, sizeof *s->nxt);
	s->on = calloc(n, 1);
	s->mark = calloc(n, 1);
	s->vals = calloc(C, sizeof *s->vals);
	s->counts = calloc(s->n_slots, sizeof *s->counts);
	s->closed = calloc(C + 1, sizeof *s->closed);
	s->snap = calloc(C, sizeof *s->snap);
	s->live = calloc(n, sizeof *s->live);
	s->rd = calloc(s->n_slots, sizeof *s->rd);
	s->base_value = calloc(n, sizeof *s->base_value);
	s->base_time = calloc(n, sizeof *s->base_time);
	s->base_run = calloc(n, sizeof *s->base_run);
	s->live_base = calloc(n, sizeof *s->live_base);
	s->win_val = calloc(W * n, sizeof *s->win_val);
	s->win_len = calloc(W, sizeof *s->win_len);
	s->win_obs = calloc(n, sizeof *s->win_obs);
	s->win_t = calloc(n, sizeof *s->win_t);
	s->last_rate = calloc(n, sizeof *s->last_rate);
	s->ref_raw = calloc(W, sizeof *s->ref_raw);
	s->out = calloc(n, sizeof *s->out);
	s->sum = calloc(n, sizeof *s->sum);
	s->peeked = calloc(n, sizeof *s->peeked);
	s->base = calloc(n, sizeof *s->base);
	s->scratch = calloc(n, sizeof *s->scratch);
	s->final = calloc(n, sizeof *s->final);
	s->counted_ns = calloc(n, sizeof *s->counted_ns);
	s->final_fidelity = calloc(n, sizeof *s->final_fidelity);
	s->out_iv = calloc(n, sizeof *s->out_iv);
	s->last_iv = calloc(n, sizeof *s->last_iv);
	s->final_iv = calloc(n, sizeof *s->final_iv);
	s->iv_scratch = calloc(n, sizeof *s->iv_scratch);
	s->whole_total = calloc(n, sizeof *s->whole_total);
	s->last_est = calloc(n, sizeof *s->last_est);
	s->pre_tail = calloc(n, sizeof *s->pre_tail);
	if (!s->out_iv || !s->last_iv || !s->final_iv || !s->iv_scratch || !s->whole_total ||
	    !s->last_est || !s->pre_tail)
		return -MPXKIT_ENOMEM;
	return s->slice && s->part_size && s->cur && s->nxt && s->on && s->mark && s->vals &&
		       s->counts && s->closed && s->snap && s->live && s->rd && s->base_value &&
		       s->base_time && s->base_run && s->live_base && s->win_val && s->win_len &&
		       s->win_obs && s->win_t && s->last_rate && s->ref_raw && s->out && s->sum &&
		       s->peeked && s->base && s->scratch && s->final && s->counted_ns &&
		       s->final_fidelity
		   ? 0
		   : -MPXKIT_ENOMEM;
}

static void free_arrays(mpxkit_sched *s)
{
	free(s->slice);
	free(s->part_size);
	free(s->cur);
	free(s->nxt);
	free(s->on);
	free(s->mark);
	free(s->vals);
	free(s->counts);
	free(s->closed);
	free(s->snap);
	free(s->live);
	free(s->rd);
	free(s->base_value);
	free(s->base_time);
	free(s->base_run);
	free(s->live_base);
	free(s->win_val);
	free(s->win_len);
	free(s->win_obs);
	free(s->win_t);
	free(s->last_rate);
	free(s->ref_raw);
	free(s->out);
	free(s->sum);
	free(s->peeked);
	free(s->base);
	free(s->scratch);
	free(s->final);
	free(s->counted_ns);
	free(s->final_fidelity);
	free(s->out_iv);
	free(s->last_iv);
	free(s->final_iv);
	free(s->iv_scratch);
	free(s->whole_total);
	free(s->last_est);
	free(s->pre_tail);
	free(s->whole_iv);
	free(s->kept_obs);
	free(s->kept_ref);
	free(s->kept_val);
	free(s->kept_len);
	free(s->whole_est);
}

/* Condition variables on the monotonic clock: a change of the wall clock must not stretch a slice.
 */
static int init_sync(mpxkit_sched *s)
{
	pthread_condattr_t attr;
	int rc = pthread_condattr_init(&attr);

	if (rc != 0)
		return -1;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (rc == 0 && (rc = pthread_cond_init(&s->wake, &attr)) == 0) {
		rc = pthread_cond_init(&s->served, &attr);
		if (rc != 0)
			pthread_cond_destroy(&s->wake);
	}
	pthread_condattr_destroy(&attr);
	if (rc != 0)
		return -1;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		pthread_cond_destroy(&s->wake);
		pthread_cond_destroy(&s->served);
		return -1;
	}
	return 0;
}

/* The schedule's question, passed to the source: can these events count together? */
static int source_countable(void *arg, const size_t *events, size_t n)
{
	return mpxkit_source_countable(arg, events, n);
}

/*
 * The schedule of cfg over the source's events (their slots' names): a
 * registry spec, or a group file whose groups are those of these events.
 */
static int make_schedule(mpxkit_sched *s, const mpxkit_sched_config *cfg, mpxkit_diag *diag)
{
	const char *spec = cfg->schedule[0] ? cfg->schedule : "round-robin";
	const char **names = calloc(s->n, sizeof *names);
	mpxkit_groups *file = NULL, *g = NULL;
	int rc;

	if (names == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
	for (size_t e = 0; e < s->n; e++)
		names[e] = mpxkit_source_slot_name(s->src, (int)e);
	if (!mpxkit_schedule_is_name(spec)) {
		rc = mpxkit_groups_read(spec, &file, diag);
		if (rc == 0)
			rc = mpxkit_groups_select(file, names, s->n, &g, diag);
		mpxkit_groups_free(file);
		if (rc < 0)
			goto out;
	}
	mpxkit_schedule_setup setup = {s->n, names, s->C, g, source_countable, s->src};
	rc = mpxkit_schedule_new(&s->sch, g ? "groups" : spec, &setup, diag);
	if (rc == 0)
		snprintf(s->schedule, sizeof s->schedule, "%s",
			 g ? spec : mpxkit_schedule_spec(s->sch));
	/* Round-robin and groups over rotations give each event one fixed slice, as in v1. */
	if (rc == 0 && (g || strcmp(spec, "round-robin") == 0))
		for (size_t e = 0; e < s->n; e++)
			s->slice[e] = g ? g->group[e] : e / s->C;
out:
	mpxkit_groups_free(g);
	free(names);
	return rc;
}

/*
 * Fixed slices: slice g's events as part g of the source, switched at once
 * (mpxkit_source_switch_part: one ioctl(2) each way and one read(2) of the
 * set that closed, where one per event each way and one read per event was
 * needed).  A source that cannot (a replay, no clock, the kernel refused a
 * group) keeps switching event by event; so does every changing schedule.
 */
static void make_parts(mpxkit_sched *s)
{
	size_t *part = malloc(s->n_slots * sizeof *part);

	if (part == NULL)
		return;
	for (size_t e = 0; e < s->n_slots; e++)
		part[e] = e < s->n ? s->slice[e] : MPXKIT_SOURCE_NO_PART;
	for (size_t e = 0; e < s->n; e++)
		s->part_size[s->slice[e]]++;
	s->parted = mpxkit_source_partition(s->src, part, s->W, NULL) == 0;
	free(part);
}

int mpxkit_sched_new(mpxkit_sched **out, mpxkit_source *src, const mpxkit_sched_config *cfg,
		     mpxkit_diag *diag)
{
	mpxkit_estimator_options opts = {0};
	mpxkit_sched *s;
	int rc, fixed_slices;

	if (out == NULL || src == NULL || cfg == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler: missing argument");
	if (mpxkit_source_n_slots(src) == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler: the source has no event");
	if (cfg->counters > MPXKIT_SCHED_MAX_COUNTERS || cfg->slice_ns == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "scheduler: bad settings (C %zu, slice %llu ns)", cfg->counters,
				   (unsigned long long)cfg->slice_ns);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
	if (mpxkit__front_wanted(src, cfg)) {
		rc = mpxkit__front_new(&s->front, src, cfg, diag);
		if (rc < 0) {
			free(s);
			return rc;
		}
		*out = s;
		return 0;
	}
	s->wake_fd = -1;
	s->peek_pending = -1;
	/* Read without the lock by design, under its sequence count (read_unlocked). */
	VALGRIND_HG_DISABLE_CHECKING(&s->pub, sizeof s->pub);
	s->src = src;
	s->n = mpxkit_source_n_slots(src);
	s->n_slots = s->n;
	if (cfg->reference[0]) {
		/* Slot n: added last, so the events keep their slots 0 .. n-1. */
		rc = mpxkit_source_add(src, cfg->reference, diag);
		if (rc < 0)
			goto fail;
		s->has_ref = 1;
		s->n_slots = s->n + 1;
	}
	s->is_virtual = mpxkit_source_is_virtual(src);
	/* A replayed trace has no PMU to follow. */
	s->C = cfg->counters;
	if (s->C == 0)
		s->C =
		    s->is_virtual ? MPXKIT_SCHED_DEFAULT_COUNTERS : mpxkit_sched_default_counters();
	s->G = (s->n + s->C - 1) / s->C;
	s->W = s->G; /* the windows are the schedule's rotations, set below */
	s->all_on = s->n <= s->C;
	s->slice_ns = cfg->slice_ns;
	/* W is at most G until the schedule says (a group file may have more groups): grow then. */
	s->W = s->n;
	if (alloc_arrays(s) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
		goto fail;
	}
	for (size_t e = 0; e < s->n; e++)
		s->slice[e] = SIZE_MAX;
	rc = make_schedule(s, cfg, diag);
	if (rc < 0)
		goto fail;
	s->G = s->W = mpxkit_schedule_groups(s->sch);
	s->all_on = s->W == 1;
	fixed_slices = s->slice[0] != SIZE_MAX;
	s->layout = (mpxkit_layout){s->n, s->W, fixed_slices ? s->slice : NULL, s->has_ref,
				    (mpxkit_schedule_period(s->sch) - 1) / s->W};
	if (fixed_slices && !s->is_virtual)
		make_parts(s);
	opts.model = cfg->model[0] ? cfg->model : NULL;
	rc = mpxkit_estimator_new(&s->est, cfg->estimator[0] ? cfg->estimator : "fixed", &s->layout,
				  &opts, diag);
	if (rc < 0)
		goto fail;
	snprintf(s->estimator, sizeof s->estimator, "%s", mpxkit_estimator_info_of(s->est)->name);
	s->level = cfg->level > 0 ? cfg->level : MPXKIT_INTERVAL_LEVEL;
	if (mpxkit_estimator_set_interval(s->est, s->level, 0) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_EINVAL, "scheduler: level %g not in (0, %.2f]",
				 s->level, MPXKIT_INTERVAL_LEVEL_MAX);
		goto fail;
	}
	for (size_t e = 0; e < s->n; e++)
		s->final_iv[e] = not_counted();
	s->whole_max = cfg->whole_max;
	s->read_mode = cfg->read;
	s->whole = s->whole_max > 0 && mpxkit_estimator_has_whole_run(s->est);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0) {
		rc = mpxkit_fail_sys(diag, "scheduler: eventfd");
		goto fail;
	}
	if (init_sync(s) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: cannot create its lock");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	mpxkit_estimator_free(s->est);
	mpxkit_schedule_free(s->sch);
	free_arrays(s);
	free(s);
	return rc;
}

void mpxkit_sched_free(mpxkit_sched *s)
{
	if (s == NULL)
		return;
	if (s->front) {
		mpxkit__front_free(s->front);
		free(s);
		return;
	}
	mpxkit_sched_stop(s);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->served);
	close(s->wake_fd);
	mpxkit_estimator_free(s->est);
	mpxkit_schedule_free(s->sch);
	mpxkit_source_free(s->src);
	free_arrays(s);
	free(s);
}

const mpxkit_layout *mpxkit_sched_layout(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_layout(s->front);
	return s ? &s->layout : NULL;
}

size_t mpxkit_sched_counters(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_counters(s->front);
	return s ? s->C : 0;
}

const char *mpxkit_sched_estimator(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_estimator(s->front);
	return s ? s->estimator : "none";
}

const char *mpxkit_sched_schedule(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_schedule(s->front);
	return s ? s->schedule : "none";
}

size_t mpxkit_sched_n_multiplexed(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_n_multiplexed(s->front);
	return s ? s->n : 0;
}

size_t mpxkit_sched_wakeups(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_wakeups(s->front);
	return s ? __atomic_load_n(&s->wakeups, __ATOMIC_RELAXED) : 0;
}

/* ---- slices (all under lock) ---------------------------------------------------------- */

static int read_counts(mpxkit_sched *s)
{
	int rc = mpxkit_source_read(s->src, s->counts, s->n_slots);
	return rc < 0 ? rc : 0;
}

/*
 * A boundary's read (step 3 of doc/component.md's boundary): the slots of
 * the slice that just closed, each with its own running time for step 4,
 * and the reference.  No other slot's count moved since it was last read:
 * an event counts only in the slices it belongs to, and every slice ends
 * with this read of its events, after their disable.
 */
static int read_closed(mpxkit_sched *s)
{
	size_t k = s->n_cur;

	memcpy(s->closed, s->cur, k * sizeof *s->closed);
	if (s->has_ref)
		s->closed[k++] = s->n;
	return mpxkit_source_read_slots(s->src, s->closed, k, s->counts);
}

/*
 * Where the slice in progress starts, for the reads taken in it: the clock
 * and the count of every event of its set, at one instant (one read(2) of
 * the perf group, mpxkit_source_snapshot), once the set is all on.  A read
 * then measures each counting event and the clock from the same instant, so
 * an event that counts whenever the target runs (a task clock) counts
 * exactly the slice's time.  The clock read before the enables, as before,
 * left out what the target ran from that read until each event was enabled
 * and put on its counter (the enable's ioctl, the kick's two: 30 us of a
 * task clock seen at a stop); the boundary's step 4 scales that away for a
 * closed slice, but the slice in progress at a read or at the stop had no
 * running time to scale by.  Without a clock there is nothing to measure
 * from: reads take the slice's base counts and the slots' own times.
 */
static int start_slice(mpxkit_sched *s, const size_t *set, size_t n, uint64_t *now)
{
	int rc;

	s->start_counts = 0;
	if (!s->has_clock)
		return 0;
	rc = mpxkit_source_snapshot(s->src, set, n, s->snap, now);
	if (rc == -MPXKIT_ENOSUPP)
		return mpxkit_source_clock(s->src, now);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		s->live_base[set[i]] = s->snap[i];
	s->start_counts = 1;
	return 0;
}

/*
 * The change of the counted set (doc/component.md, "One change of the
 * counted set"): disable what leaves, read the closed slice's slots, enable
 * what comes, then start the slice (its clock and counts at one instant);
 * one ioctl per event that changes and none for an event that stays; the
 * next set's events are marked in s->mark.
 */
/* The part that is exactly this set, or MPXKIT_SOURCE_NO_PART (an empty set too). */
static size_t part_of(const mpxkit_sched *s, const size_t *set, size_t n)
{
	size_t p = n ? s->slice[set[0]] : MPXKIT_SOURCE_NO_PART;

	if (n == 0 || s->part_size[p] != n)
		return MPXKIT_SOURCE_NO_PART;
	for (size_t i = 1; i < n; i++)
		if (s->slice[set[i]] != p)
			return MPXKIT_SOURCE_NO_PART;
	return p;
}

/*
 * The change of the counted set when the source has parts: one switch
 * (mpxkit_source_switch_part), which reads the closed set and the clock as
 * at the next set's enable, and the reference.  The next set's slice starts
 * from its counts of its last read, after its last disable, which have
 * stood still since (start_counts 0), and from that clock.
 */
static int switch_parts(mpxkit_sched *s, uint64_t *now)
{
	size_t from = part_of(s, s->cur, s->n_cur), to = part_of(s, s->nxt, s->n_nxt), ref = s->n;
	int rc;

	/* A fixed schedule's set is always one part: anything else is a bug, said as such. */
	if ((s->n_cur && from == MPXKIT_SOURCE_NO_PART) || to == MPXKIT_SOURCE_NO_PART)
		return -MPXKIT_EINVAL;
	rc = mpxkit_source_switch_part(s->src, from, to, s->counts, now);
	if (rc == 0 && s->has_ref)
		rc = mpxkit_source_read_slots(s->src, &ref, 1, s->counts);
	for (size_t i = 0; i < s->n_cur; i++)
		s->on[s->cur[i]] = 0;
	for (size_t i = 0; i < s->n_nxt; i++)
		s->on[s->nxt[i]] = 1;
	s->start_counts = 0;
	return rc;
}

static int switch_set(mpxkit_sched *s, uint64_t *now)
{
	int rc = 0;

	if (s->parted)
		return switch_parts(s, now);
	for (size_t i = 0; i < s->n_nxt; i++)
		s->mark[s->nxt[i]] = 1;
	for (size_t i = 0; i < s->n_cur && rc == 0; i++)
		if (!s->mark[s->cur[i]]) {
			rc = mpxkit_source_disable(s->src, (int)s->cur[i]);
			s->on[s->cur[i]] = 0;
		}
	if (rc == 0)
		rc = read_closed(s);
	for (size_t i = 0; i < s->n_nxt && rc == 0; i++)
		if (!s->on[s->nxt[i]]) {
			rc = mpxkit_source_enable(s->src, (int)s->nxt[i]);
			s->on[s->nxt[i]] = 1;
		}
	for (size_t i = 0; i < s->n_nxt; i++)
		s->mark[s->nxt[i]] = 0;
	if (rc == 0)
		rc = start_slice(s, s->nxt, s->n_nxt, now);
	return rc;
}

/*
 * Where each slot's next slice starts, for the boundary's step 4: its count
 * and times at its last read.  A slot enabled at this boundary was last read
 * after its disable, before this enable (switch_set reads the closed slice
 * before it enables the next set), and stood still in between, so every
 * count since its enable is its new slice's.
 */
static void rebase_after_switch(mpxkit_sched *s)
{
	for (size_t e = 0; e < s->n; e++) {
		s->base_value[e] = s->counts[e].value;
		s->base_time[e] = s->counts[e].time_enabled;
		s->base_run[e] = s->counts[e].time_running;
	}
}

/* Slot e's count when its slice in progress began: the group read that started it, if any. */
static uint64_t slice_start(const mpxkit_sched *s, size_t e)
{
	return s->start_counts ? s->live_base[e] : s->base_value[e];
}

/* The sums or the estimator changed: what a read peeks at, and the shortcut's base, are stale. */
static void estimates_changed(mpxkit_sched *s)
{
	s->peek_pending = -1;
	s->base_ok = 0;
}

static int peek(mpxkit_sched *s);

/*
 * The unlocked read's publication (see read_unlocked).  unpublish before
 * the engine's state changes (a boundary: before its reads; a reset; the
 * stop), publish after, both with the lock held or no reader possible.
 */
static void unpublish(mpxkit_sched *s)
{
	if (s->pub.seq & 1)
		return;
	__atomic_store_n(&s->pub.seq, s->pub.seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void publish(mpxkit_sched *s)
{
	size_t e = s->cur[0];
	int ok = s->shortcut && s->n == 1 && s->n_cur == 1 && s->running;

	unpublish(s);
	/* The buffer of the next version: readers of the last one keep theirs meanwhile. */
	__typeof__(s->pub.buf[0]) *b = &s->pub.buf[((s->pub.seq + 1) >> 1) & 1];
	if (ok) {
		double base = s->sum[e];
		if (peek(s) > 0)
			base += s->peeked[e];
		__atomic_store_n(&b->slot, e, __ATOMIC_RELAXED);
		__atomic_store(&b->base, &base, __ATOMIC_RELAXED);
		__atomic_store_n(&b->base_value, slice_start(s, e), __ATOMIC_RELAXED);
		__atomic_store_n(&b->rc, s->error < 0 ? s->error : (int)s->rotations,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&b->ok, ok, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pub.seq, s->pub.seq + 1, __ATOMIC_RELEASE);
}

static uint64_t scaled(uint64_t count, double f)
{
	double v = (double)count * f + 0.5;
	return v >= 18446744073709551615.0 ? UINT64_MAX - 1 : (uint64_t)v;
}

/*
 * Step 4 of a boundary: a slot's count v in a slice of len_ns, scaled by its
 * running time run.  Not when every event counts all the time: then each
 * count is the truth, and a slice whose clock started before its event was
 * on (the first one, under valgrind: 10 % of it) would inflate it; seen as
 * a PAPI_stop of 2,012 page faults against 1,897 counted by a raw
 * perf_event around it (ctests/test_component).
 */
static uint64_t to_slice(const mpxkit_sched *s, uint64_t v, uint64_t run, uint64_t len_ns)
{
	if (!s->is_virtual && !s->all_on && run > 0 && len_ns > 0 && run != len_ns)
		return scaled(v, (double)len_ns / (double)run);
	return v;
}

/* Time of the slice in progress: the clock's, else its first slot's enabled time in c. */
static uint64_t live_time(const mpxkit_sched *s, uint64_t now, const mpxkit_source_count *c)
{
	if (s->has_clock)
		return now - s->slice_clock;
	if (s->n_cur == 0)
		return 0;
	return c[s->cur[0]].time_enabled - s->base_time[s->cur[0]];
}

static void add_to(double *sum, const double *v, size_t n)
{
	for (size_t e = 0; e < n; e++)
		sum[e] += v[e];
}

/*
 * One window's estimates, from push or flush: into the sums, and to the
 * series; its intervals are the last window's, which the window in
 * progress follows at a read.
 */
static void take_estimates(mpxkit_sched *s)
{
	add_to(s->sum, s->out, s->n);
	memcpy(s->last_est, s->out, s->n * sizeof *s->last_est);
	memcpy(s->last_iv, s->out_iv, s->n * sizeof *s->last_iv);
	s->base_ok = 0;
	if (s->series)
		s->series(s->series_arg, s->emitted, s->out);
	if (s->series_iv)
		s->series_iv(s->series_arg, s->emitted, s->out, s->out_iv);
	s->emitted++;
}

/* Past the cap, or out of memory: this run keeps its windowed results, and its memory goes. */
static void stop_keeping(mpxkit_sched *s)
{
	free(s->kept_obs);
	free(s->kept_ref);
	free(s->kept_val);
	free(s->kept_len);
	s->kept_obs = s->kept_ref = s->kept_val = NULL;
	s->kept_len = NULL;
	s->n_kept = s->cap_kept = 0;
	s->kept_all = 0;
}

/* Grows one kept array to cap rows of row elements of size sz; the old one stays on failure. */
static int grow(void **p, size_t cap, size_t row, size_t sz)
{
	void *q;

	if (row && cap > SIZE_MAX / sz / row)
		return -1;
	q = realloc(*p, (cap * row != 0 ? cap * row : 1) * sz);
	if (q == NULL)
		return -1;
	*p = q;
	return 0;
}

/* Room for one more kept window, doubling up to whole_max. */
static int grow_kept(mpxkit_sched *s)
{
	size_t cap = s->cap_kept ? 2 * s->cap_kept : 64;

	if (cap > s->whole_max)
		cap = s->whole_max;
	if (grow((void **)&s->kept_obs, cap, s->n, sizeof *s->kept_obs) < 0 ||
	    grow((void **)&s->kept_val, cap, s->W * s->n, sizeof *s->kept_val) < 0 ||
	    grow((void **)&s->kept_len, cap, s->W, sizeof *s->kept_len) < 0 ||
	    (s->has_ref && grow((void **)&s->kept_ref, cap, s->W, sizeof *s->kept_ref) < 0))
		return -1;
	s->cap_kept = cap;
	return 0;
}

/* Keeps the window just pushed, as pushed, for the whole-run pass. */
static void keep_window(mpxkit_sched *s)
{
	size_t k = s->n_kept, n = s->n, W = s->W;

	if (!s->whole || !s->kept_all)
		return;
	if (k == s->whole_max || (k == s->cap_kept && grow_kept(s) < 0)) {
		stop_keeping(s);
		return;
	}
	memcpy(s->kept_obs + k * n, s->win_obs, n * sizeof *s->win_obs);
	memcpy(s->kept_val + k * W * n, s->win_val, W * n * sizeof *s->win_val);
	memcpy(s->kept_len + k * W, s->win_len, W * sizeof *s->win_len);
	if (s->has_ref)
		memcpy(s->kept_ref + k * W, s->ref_raw, W * sizeof *s->ref_raw);
	s->n_kept++;
}

/* The window in progress starts empty. */
static void clear_window(mpxkit_sched *s)
{
	for (size_t i = 0; i < s->W * s->n; i++)
		s->win_val[i] = MPXKIT_NOT_COUNTED;
	memset(s->win_obs, 0, s->n * sizeof *s->win_obs);
	memset(s->win_t, 0, s->n * sizeof *s->win_t);
	s->win_ns = 0;
	s->j = 0;
}

/*
 * The window's W slices to the estimator: what each slice counted and how
 * long it was, in nominal slices (a replay's steps are exactly 1, as the
 * simulator's).
 */
static int end_window(mpxkit_sched *s)
{
	mpxkit_rotation rot = {s->win_obs, s->has_ref ? s->ref_raw : NULL, s->win_val, s->win_len};
	int rc;

	keep_window(s);
	estimates_changed(s);
	rc = mpxkit_estimator_push_iv(s->est, &rot, s->out, s->out_iv);
	if (rc < 0)
		return rc;
	if (rc == 1)
		take_estimates(s);
	s->rotations++;
	clear_window(s);
	return 0;
}

/*
 * One slice boundary: the schedule's next set, the switch (the closed
 * slice read between the two ioctl batches, the clock after them), then the
 * closed slice's counts to the window and to the schedule, and the window to
 * the estimator when it was its last slice.
 */
static int rotate(mpxkit_sched *s)
{
	uint64_t now = 0, len_ns;
	double len;
	size_t *t;
	int rc;

	s->n_nxt = mpxkit_schedule_next(s->sch, s->nxt);
	rc = switch_set(s, &now);
	if (rc < 0)
		return rc;
	len_ns = live_time(s, now, s->counts);
	len = s->is_virtual ? 1.0 : (double)len_ns / (double)s->slice_ns;
	for (size_t i = 0; i < s->n_cur; i++) {
		size_t e = s->cur[i];
		uint64_t v = s->counts[e].value - s->base_value[e];
		uint64_t run = s->counts[e].time_running - s->base_run[e];
		/*
		 * The switch is not instantaneous: an event counts from its
		 * enable to its disable, the slice runs from one boundary's
		 * clock to the next (after the enables), and a rotation thread
		 * preempted in between widens the difference; an event enabled
		 * may also wait to be put on (a PMU that cannot hold the set;
		 * lib/source/perf.c, "The kick").  Its count is scaled to the
		 * slice by the time it counted, its own running time, as perf
		 * scales by time enabled over running.
		 */
		v = to_slice(s, v, run, len_ns);
		s->vals[i] = v;
		s->win_val[s->j * s->n + e] = v;
		s->win_obs[e] += v;
		s->win_t[e] += (double)len_ns;
		s->counted_ns[e] += (double)len_ns;
		if (len_ns > 0)
			s->last_rate[e] = (double)v / (double)len_ns;
	}
	s->win_len[s->j] = len;
	s->win_ns += (double)len_ns;
	s->total_ns += (double)len_ns;
	if (s->has_ref) {
		/*
		 * From the last boundary's read to this one's: the span the slice
		 * was counted, scaled to the slice by the time it took, as the
		 * events' counts are.  A rotation thread preempted between the
		 * reads and the clock of a boundary shortens that span: the
		 * events enabled late are scaled up for it, and so must the
		 * reference be, or ref-rate's count per reference unit grows by
		 * the slice over the span (2x seen under load).
		 */
		const mpxkit_source_count *r = &s->counts[s->n];
		uint64_t v = r->value - s->ref_base, run = r->time_running - s->ref_run;
		v = to_slice(s, v, run, len_ns);
		s->ref_raw[s->j] = v;
		s->ref_base = r->value;
		s->ref_run = r->time_running;
	}
	mpxkit_schedule_observe(s->sch, s->cur, s->n_cur, s->vals, len);
	rebase_after_switch(s);
	t = s->cur, s->cur = s->nxt, s->nxt = t;
	s->n_cur = s->n_nxt;
	s->slice_clock = now;
	if (++s->j < s->W)
		return 0;
	s->win_clock = now;
	return end_window(s);
}

/* Pushes what the estimator still holds into the sums, in window order. */
static void flush_estimator(mpxkit_sched *s)
{
	estimates_changed(s);
	while (mpxkit_estimator_flush_iv(s->est, s->out, s->out_iv) == 1)
		take_estimates(s);
}

/*
 * At the stop, after the flush: the whole-run pass over the kept windows,
 * whose estimates replace the windowed sums, added in window order as the
 * windowed ones were.  A run past the cap, out of memory or broken by an
 * error keeps its windowed sums.
 */
static void whole_pass(mpxkit_sched *s)
{
	mpxkit_series run = {s->n_kept, s->kept_obs, s->kept_ref, s->kept_val, s->kept_len};
	double *est;
	mpxkit_interval *iv;

	if (!s->whole || !s->kept_all || s->error < 0 || s->n_kept != s->rotations)
		return;
	est = malloc((s->n_kept ? s->n_kept : 1) * s->n * sizeof *est);
	iv = malloc((s->n_kept ? s->n_kept : 1) * s->n * sizeof *iv);
	if (est == NULL || iv == NULL ||
	    mpxkit_estimator_run_whole_series_iv(s->est, &run, est, iv, s->whole_total, NULL) < 0) {
		free(est);
		free(iv);
		return;
	}
	memset(s->sum, 0, s->n * sizeof *s->sum);
	for (size_t k = 0; k < s->n_kept; k++)
		add_to(s->sum, est + k * s->n, s->n);
	s->base_ok = 0;
	free(s->whole_est);
	free(s->whole_iv);
	s->whole_est = est;
	s->whole_iv = iv;
	s->whole_done = 1;
}

/*
 * A counting event's count in the slice in progress, live ns long.  A read
 * measures it from the slice's start, where start_slice took the counts
 * with the clock.  The stop (closing: every slot off, each read on its own
 * with its times) closes the slice as a boundary closes one (step 4): the
 * count since the slot's base, scaled to the slice by its own running time;
 * with nothing multiplexed, that count as it is (the truth, as a read's).
 * Only that is exact for a task clock: a perf group read while the target
 * runs gives a task clock member as of the kernel's own clock read, some
 * 0.1 to 0.2 us after the group's time, so a read's start count is that
 * much ahead (doc/component.md, "Reads").
 */
static double live_count(const mpxkit_sched *s, size_t e, uint64_t live, int closing)
{
	if (closing && !s->all_on)
		return (double)to_slice(s, s->rd[e].value - s->base_value[e],
					s->rd[e].time_running - s->base_run[e], live);
	return (double)(s->live[e] - slice_start(s, e));
}

/*
 * The window in progress, by time scaling (real-time sources only), from a
 * read of the set counting now (s->live, taken live ns into its slice;
 * closing: the stop's, see live_count); elapsed is the window's time so far.
 * Each event's count over its counted time in this window, live slice
 * included, times elapsed; an event not yet counted in it takes the rate of
 * its last counted slice.  Adds the live slice to counted, unless it is
 * NULL.  The events not counting now need no read: their counts in this
 * window are the engine's.
 */
static void tail_estimate(const mpxkit_sched *s, uint64_t live, double elapsed, int closing,
			  double *tail, double *counted)
{
	for (size_t e = 0; e < s->n; e++) {
		double count = (double)s->win_obs[e], t = s->win_t[e];
		if (s->on[e]) {
			count += live_count(s, e, live, closing);
			t += (double)live;
			if (counted)
				counted[e] += live;
		}
		/* Every event counts all the time: its count is the truth, not to be scaled. */
		if (s->all_on)
			tail[e] += count;
		else
			tail[e] += t > 0 ? count * (elapsed / t) : s->last_rate[e] * elapsed;
	}
}

/*
 * The relative half-width above the estimate of event e's last window
 * estimated; INFINITY where it has none (not counted, open, or a zero
 * estimate with room above it).
 */
static double last_relative(const mpxkit_sched *s, size_t e)
{
	const mpxkit_interval *v = &s->last_iv[e];
	double est = s->last_est[e];

	if ((v->flags & (MPXKIT_INTERVAL_UNOBSERVED | MPXKIT_INTERVAL_OPEN)) || !isfinite(v->hi))
		return INFINITY;
	if (v->hi <= est)
		return 0.0;
	return est > 0 ? (v->hi - est) / est : INFINITY;
}

/*
 * Event e's total interval v (the estimator's, over the windows estimated
 * and those it holds) widened by the window in progress, which added tail
 * to the estimate, now est, of which the window's slices saw seen
 * (doc/component.md, "Intervals").  Counted all the time, the tail is the
 * truth: both bounds move by it.  Otherwise the tail is an estimate with the
 * last window's relative half-width, its error taken as independent of the
 * windows' before (their half-widths add in quadrature, as the estimator
 * adds the windows' variances); below, the tail is at least what it saw.
 * With no window estimated yet a tail that saw counts is open above, one
 * that saw none leaves the event not counted.
 */
static void widen_by_tail(const mpxkit_sched *s, size_t e, double tail, double seen, double est,
			  mpxkit_interval *v)
{
	double rel, h_t, below, above, prev = est - tail;

	if (s->all_on) {
		/* Inside the first window nothing is estimated: the count so far is the truth. */
		if (v->flags & MPXKIT_INTERVAL_UNOBSERVED)
			*v = (mpxkit_interval){est, est, 0, INFINITY, 0};
		else
			v->lo += tail, v->hi += tail;
		return;
	}
	if (v->flags & MPXKIT_INTERVAL_UNOBSERVED) {
		if (seen > 0 || s->win_t[e] > 0 || s->on[e])
			*v = (mpxkit_interval){seen, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_OPEN};
		return;
	}
	if (tail == 0 && seen == 0)
		return;
	rel = last_relative(s, e);
	h_t = tail > 0 ? rel * tail : 0.0;
	if (!isfinite(h_t) || !isfinite(v->hi)) {
		v->lo += seen;
		v->hi = INFINITY;
		v->flags |= MPXKIT_INTERVAL_OPEN;
		return;
	}
	below = prev - v->lo;
	above = v->hi - prev;
	v->hi = est + sqrt(above * above + h_t * h_t);
	v->lo = fmax(v->lo + seen, est - sqrt(below * below + h_t * h_t));
	if (v->lo > est)
		v->lo = est;
}

/*
 * What the window in progress saw of each event: its closed slices' counts,
 * and the live slice's of an event counting now.
 */
static double window_seen(const mpxkit_sched *s, size_t e, uint64_t live, int closing)
{
	double seen = (double)s->win_obs[e];

	if (s->on[e])
		seen += live_count(s, e, live, closing);
	return seen;
}

static void fidelity_of(const mpxkit_sched *s, const double *counted, double total, double *out)
{
	for (size_t e = 0; e < s->n; e++)
		out[e] = total > 0 ? counted[e] / total : 0.0;
}

/* ---- the rotation thread ------------------------------------------------------------- */

/*
 * The first error, with its line: the failure the calling thread met last
 * when it is this error (the work that gave rc started from a cleared
 * mpxkit_diag_last), else the code's text.
 */
static void note_error(mpxkit_sched *s, int rc)
{
	const mpxkit_diag *d = mpxkit_diag_last();

	if (rc >= 0 || s->error != 0)
		return;
	s->error = rc;
	if (d && d->code == rc)
		s->error_diag = *d;
	else
		mpxkit_fail(&s->error_diag, -rc, "%s", mpxkit_strerror(rc));
}

/* What a call returns: the first error, its line left for the caller's thread; else n. */
static int outcome(const mpxkit_sched *s, int n)
{
	if (s->error >= 0)
		return n;
	mpxkit__diag_keep_last(&s->error_diag);
	return s->error;
}

static void add_ns(struct timespec *ts, uint64_t ns)
{
	uint64_t total = (uint64_t)ts->tv_nsec + ns;
	ts->tv_sec += (time_t)(total / 1000000000u);
	ts->tv_nsec = (long)(total % 1000000000u);
}

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * How long the slice in progress still has to run, in the target's own time:
 * a thread that was not scheduled has not used its slice, so a group is never
 * rotated out before it could count anything.  Without a clock, wall time.
 */
static uint64_t slice_left(mpxkit_sched *s, uint64_t *used)
{
	uint64_t now;

	*used = 0;
	if (!s->has_clock || mpxkit_source_clock(s->src, &now) < 0)
		return 0;
	*used = now - s->slice_clock;
	return *used >= s->slice_ns ? 0 : s->slice_ns - *used;
}

/*
 * The wall time the target needs for `left` more of its own time, at the
 * pace it had in this slice so far (used of its time in the slice's wall
 * time): a target that gets a quarter of a CPU (8 threads on 2) needs 4 ms
 * for a slice of 1 ms, and sleeping `left` each time instead woke the
 * thread some 8 times a slice.  At least `left` (a thread runs no faster
 * than its clock), at most 4 times it: a target that speeds up then (it
 * waited, and runs again) overruns its slice by at most 3 times what was
 * left of it.
 */
static uint64_t wall_for(const mpxkit_sched *s, const struct timespec *now, uint64_t used,
			 uint64_t left)
{
	double wall = (double)(now->tv_sec - s->slice_wall.tv_sec) * 1e9 +
		      (double)(now->tv_nsec - s->slice_wall.tv_nsec);
	double pace = wall > 0 && used > 0 ? (double)used / wall : 1;

	pace = pace > 1 ? 1 : pace < 0.25 ? 0.25 : pace;
	return (uint64_t)((double)left / pace);
}

/* Sleeps until the deadline or a wake-up, with the lock released so reads are never held up. */
static void sleep_until(mpxkit_sched *s, const struct timespec *deadline)
{
	struct pollfd pfd = {s->wake_fd, POLLIN, 0};
	struct timespec now, left;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!before(&now, deadline))
		return;
	left.tv_sec = deadline->tv_sec - now.tv_sec;
	left.tv_nsec = deadline->tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000;
	}
	pthread_mutex_unlock(&s->lock);
	ppoll(&pfd, 1, &left, NULL);
	pthread_mutex_lock(&s->lock);
}

/*
 * Beside the target (doc/component.md, "Slice boundaries"): each
 * ioctl(2) on the events of a target that runs on another CPU is a call to
 * that CPU, and so is a read(2) of one that counts there; in a virtual
 * machine each costs tens of microseconds of both CPUs, where the same call
 * on the target's own CPU costs under one.  So before a boundary the thread
 * moves to the CPU its target runs on (or last ran on), if it may run there
 * (the CPUs it started with: a caller's pinning is kept), and stays there:
 * its next wake-up is that CPU's timer.  There the target waits while the
 * boundary runs, so every call is local and no count moves during it.
 */
static void follow_target(mpxkit_sched *s)
{
	int cpu = mpxkit_source_target_cpu(s->src);
	cpu_set_t one;

	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &s->allowed) || cpu == sched_getcpu())
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* A refusal (a cpuset changed meanwhile) leaves it where it is. */
	sched_setaffinity(0, sizeof one, &one);
}

static void run_real_time(mpxkit_sched *s)
{
	struct timespec deadline, now;

	if (sched_getaffinity(0, sizeof s->allowed, &s->allowed) != 0)
		CPU_ZERO(&s->allowed);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	add_ns(&deadline, s->slice_ns);
	while (!s->quit) {
		uint64_t left, used;
		sleep_until(s, &deadline);
		if (s->quit)
			break;
		__atomic_store_n(&s->wakeups, s->wakeups + 1, __ATOMIC_RELAXED);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (before(&now, &deadline))
			continue; /* woken early */
		deadline = now;
		/* Less than a tenth of a slice left: rotate now rather than wake again so soon. */
		left = slice_left(s, &used);
		if (left > s->slice_ns / 10) {
			add_ns(&deadline, wall_for(s, &now, used, left));
			continue;
		}
		if (s->error == 0) {
			follow_target(s);
			unpublish(s);
			mpxkit__diag_clear_last();
			note_error(s, rotate(s));
			publish(s);
		}
		clock_gettime(CLOCK_MONOTONIC, &s->slice_wall);
		add_ns(&deadline, s->slice_ns);
	}
}

/* Serves the trace, one step per slice, then waits for a reset (serve again) or the stop. */
static void run_virtual(mpxkit_sched *s)
{
	while (!s->quit) {
		int rc;
		if (s->done) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		mpxkit__diag_clear_last();
		rc = mpxkit_source_step(s->src);
		if (rc > 0 && (rc = rotate(s)) == 0)
			continue;
		/* The end of the trace (0) or an error: the run is complete. */
		note_error(s, rc);
		flush_estimator(s);
		s->done = 1;
		pthread_cond_broadcast(&s->served);
	}
}

static void *rotation_thread(void *arg)
{
	mpxkit_sched *s = arg;

	pthread_mutex_lock(&s->lock);
	if (s->is_virtual)
		run_virtual(s);
	else
		run_real_time(s);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- start, stop, reset, read -------------------------------------------------------- */

/* A fresh run from where the source is now; the source's slots are all off. */
static int begin_run(mpxkit_sched *s)
{
	int rc = 0;

	if (s->is_virtual)
		rc = mpxkit_source_rewind(s->src);
	s->has_clock = !s->is_virtual && mpxkit_source_clock(s->src, &s->run_clock) == 0;
	s->shortcut = s->all_on && s->has_clock;
	s->win_clock = s->slice_clock = s->run_clock;
	clock_gettime(CLOCK_MONOTONIC, &s->slice_wall);
	if (rc == 0)
		rc = read_counts(s);
	if (rc < 0)
		return rc;
	s->ref_base = s->has_ref ? s->counts[s->n].value : 0;
	s->ref_run = s->has_ref ? s->counts[s->n].time_running : 0;
	mpxkit_estimator_reset(s->est);
	estimates_changed(s);
	mpxkit_schedule_reset(s->sch);
	memset(s->sum, 0, s->n * sizeof *s->sum);
	memset(s->counted_ns, 0, s->n * sizeof *s->counted_ns);
	memset(s->last_rate, 0, s->n * sizeof *s->last_rate);
	memset(s->on, 0, s->n);
	/*
	 * Slice 0 is measured from the clock read above, before its enables,
	 * and from the counts read then: nothing of its set counts yet, and a
	 * snapshot here, in the starting thread, would anchor its rdpmc slots.
	 */
	s->start_counts = 0;
	clear_window(s);
	s->total_ns = 0;
	s->rotations = 0;
	__atomic_store_n(&s->wakeups, 0, __ATOMIC_RELAXED);
	s->emitted = 0;
	s->done = 0;
	s->error = 0;
	s->error_diag = (mpxkit_diag){0};
	s->n_kept = 0;
	s->kept_all = 1;
	s->whole_done = 0;
	free(s->whole_est);
	free(s->whole_iv);
	s->whole_est = NULL;
	s->whole_iv = NULL;
	for (size_t e = 0; e < s->n; e++) {
		s->last_est[e] = 0;
		s->last_iv[e] = not_counted();
	}
	/* Slice 0's set, chosen before anything is counted. */
	s->n_cur = mpxkit_schedule_next(s->sch, s->cur);
	rebase_after_switch(s); /* everything is off: every count stands where it was read */
	rc = s->has_ref ? mpxkit_source_enable(s->src, (int)s->n) : 0;
	if (s->parted) {
		/* Slice 0 keeps the clock read above; the switch anchors its set's part. */
		size_t p = part_of(s, s->cur, s->n_cur);
		uint64_t at;
		if (rc == 0)
			rc = p == MPXKIT_SOURCE_NO_PART
				 ? -MPXKIT_EINVAL
				 : mpxkit_source_switch_part(s->src, MPXKIT_SOURCE_NO_PART, p,
							     s->counts, &at);
		for (size_t i = 0; i < s->n_cur; i++)
			s->on[s->cur[i]] = 1;
		return rc;
	}
	for (size_t i = 0; i < s->n_cur && rc == 0; i++) {
		rc = mpxkit_source_enable(s->src, (int)s->cur[i]);
		s->on[s->cur[i]] = 1;
	}
	return rc;
}

int mpxkit_sched_on_rotation(mpxkit_sched *s, mpxkit_sched_series_fn fn, void *arg)
{
	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_on_rotation(s->front, fn, arg);
	if (s->running)
		return -MPXKIT_ESTATE;
	s->series = fn;
	s->series_iv = NULL;
	s->series_arg = arg;
	return 0;
}

int mpxkit_sched_on_rotation_iv(mpxkit_sched *s, mpxkit_sched_series_iv_fn fn, void *arg)
{
	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_on_rotation_iv(s->front, fn, arg);
	if (s->running)
		return -MPXKIT_ESTATE;
	s->series = NULL;
	s->series_iv = fn;
	s->series_arg = arg;
	return 0;
}

int mpxkit_sched_start(mpxkit_sched *s)
{
	sigset_t all, old;
	int rc;

	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_start(s->front);
	if (s->running)
		return -MPXKIT_ESTATE;
	rc = mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
	if (rc == 0)
		rc = mpxkit_source_reset(s->src, MPXKIT_SOURCE_ALL);
	if (rc == 0)
		rc = begin_run(s);
	if (rc < 0) {
		mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
		return rc;
	}
	s->quit = 0;
	/* Running before the thread exists, which reads it (publish) from then on. */
	s->running = 1;
	publish(s);
	/* The thread starts with every signal blocked, so it never takes the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, rotation_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		s->running = 0;
		unpublish(s);
		mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
		errno = rc;
		return mpxkit_fail_sys(NULL, "pthread_create");
	}
	return 0;
}

/* Virtual sources: a read or a stop sees the trace served to its end. */
static void wait_served(mpxkit_sched *s)
{
	while (s->is_virtual && !s->done)
		pthread_cond_wait(&s->served, &s->lock);
}

/*
 * The exact read: each counting slot's own read(2), then the clock (what
 * every read did before issue 17, less the slots not counting).
 */
static int read_live_exact(mpxkit_sched *s, uint64_t *now)
{
	int rc = mpxkit_source_read_slots(s->src, s->cur, s->n_cur, s->rd);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->n_cur; i++)
		s->live[s->cur[i]] = s->rd[s->cur[i]].value;
	*now = s->slice_clock;
	if (s->has_clock && mpxkit_source_clock(s->src, now) < 0)
		*now = s->slice_clock;
	return 0;
}

/*
 * The fast read: the counting slots and the clock at one instant, in one
 * read(2) of the group or with rdpmc (mpxkit_source_snapshot); the clock
 * only where the estimate needs it (multiplexed, or a fidelity asked for).
 * -MPXKIT_ENOSUPP where the source cannot (no clock): the exact read then.
 */
static int read_live_fast(mpxkit_sched *s, int need_clock, uint64_t *now)
{
	int rc;

	if (!s->has_clock)
		return -MPXKIT_ENOSUPP;
	*now = s->slice_clock;
	if (s->n_cur == 0 && !need_clock)
		return 0;
	rc = mpxkit_source_snapshot(s->src, s->cur, s->n_cur, s->snap, need_clock ? now : NULL);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < s->n_cur; i++)
		s->live[s->cur[i]] = s->snap[i];
	return 0;
}

/* What the estimator holds, kept until it changes (lock held); its return. */
static int peek(mpxkit_sched *s)
{
	if (s->peek_pending < 0)
		s->peek_pending = mpxkit_estimator_peek(s->est, s->peeked);
	return s->peek_pending;
}

/*
 * The shortcut (lock held): current_totals' fast read without fidelity
 * where every event counts all the time (s->shortcut), less what it
 * computes for nothing there.  W is 1, so every boundary closes the window
 * and a read finds it empty (win_obs 0): each event's estimate is base
 * (sum, plus what the estimator holds) plus its count in the live slice,
 * live - slice_start, the same double operations in the same order as
 * current_totals and tail_estimate, so the same bits (ctests/test_fastread,
 * "every event on: the shortcut = the general read").  No peek, copy, clock,
 * window or time scaling per read: base changes only at a boundary.
 * -MPXKIT_ENOSUPP where the source has no snapshot: the general read then.
 */
static int read_all_on(mpxkit_sched *s, double *est)
{
	size_t n = s->n, k = s->n_cur;

	if (!s->base_ok) {
		memcpy(s->base, s->sum, n * sizeof *s->base);
		if (peek(s) > 0)
			add_to(s->base, s->peeked, n);
		s->base_ok = 1;
	}
	if (k > 0) {
		int rc = mpxkit_source_snapshot(s->src, s->cur, k, s->snap, NULL);
		if (rc == -MPXKIT_ENOSUPP)
			return rc;
		if (rc < 0) { /* as current_totals: without the live slice */
			memcpy(est, s->base, n * sizeof *est);
			return 0;
		}
	}
	if (k < n) /* an event in no group: its window count, 0, added as current_totals adds it */
		for (size_t e = 0; e < n; e++)
			est[e] = s->base[e] + 0.0;
	for (size_t i = 0; i < k; i++) {
		size_t e = s->cur[i];
		est[e] = s->base[e] + (double)(s->snap[i] - slice_start(s, e));
	}
	return 0;
}

/*
 * The unlocked read: the shortcut of a single event (n = 1, every event
 * counting all the time), without the lock, whose two atomic operations
 * cost about as much as the rest of the engine's part of such a read
 * (doc/benchmarks.md).  Whoever changes the engine's state holds the lock
 * and brackets the change with unpublish and publish: a boundary from
 * before its reads to after its estimates; a reset; the stop.  publish
 * writes what a read needs (the base, the slot's count when its slice
 * began, the return) as a new version, in the buffer the last version does
 * not use.  The read takes the last version, reads the slot (one read(2)
 * or rdpmc, which touch nothing shared: mpxkit/source.h), and keeps the
 * result unless the writers have since begun to overwrite that buffer
 * (version + 3): the result then has the bits read_all_on gives under the
 * lock at the instant of the slot's read, with the state of that version.
 * A boundary under way meanwhile changes no count the read takes (every
 * event stays enabled), so the read is the one that would have held the
 * lock just before the boundary; the next read takes the next version.
 * Else (no version with one event counting, a failed read, two changes
 * meanwhile) 0: the caller takes the lock and reads as always.  1 with
 * *rc set when it read.
 */
static int read_unlocked(mpxkit_sched *s, double *est, int *rc)
{
	unsigned q = __atomic_load_n(&s->pub.seq, __ATOMIC_ACQUIRE) & ~1u;
	__typeof__(s->pub.buf[0]) *b = &s->pub.buf[(q >> 1) & 1];
	size_t slot;
	double base;
	uint64_t base_value, v;
	int r;

	if (!__atomic_load_n(&b->ok, __ATOMIC_RELAXED))
		return 0;
	slot = __atomic_load_n(&b->slot, __ATOMIC_RELAXED);
	__atomic_load(&b->base, &base, __ATOMIC_RELAXED);
	base_value = __atomic_load_n(&b->base_value, __ATOMIC_RELAXED);
	r = __atomic_load_n(&b->rc, __ATOMIC_RELAXED);
	if (mpxkit_source_snapshot(s->src, &slot, 1, &v, NULL) < 0)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* Version q's buffer is written again from version q + 3 on. */
	if (__atomic_load_n(&s->pub.seq, __ATOMIC_RELAXED) - q > 2)
		return 0;
	est[slot] = base + (double)(v - base_value);
	*rc = r < 0 ? outcome(s, r) : r;
	return 1;
}

/*
 * The totals now (lock held): sums, what the estimator holds, the window in
 * progress from a read of the set counting now, taken as mode says; closing
 * (the stop, every slot off): the stop's exact read at the disable, and the
 * slice in progress closed as a boundary closes one (live_count).
 */
static void current_totals(mpxkit_sched *s, double *est, double *fidelity, mpxkit_interval *iv,
			   mpxkit_sched_read_mode mode, int closing)
{
	double total = s->total_ns;
	int pending, rc = -MPXKIT_ENOSUPP;
	uint64_t now = 0;

	memcpy(est, s->sum, s->n * sizeof *est);
	if (fidelity)
		memcpy(s->scratch, s->counted_ns, s->n * sizeof *s->scratch);
	pending = peek(s);
	if (pending > 0)
		add_to(est, s->peeked, s->n);
	if (iv && s->whole_done)
		memcpy(iv, s->whole_total, s->n * sizeof *iv);
	else if (iv)
		mpxkit_estimator_peek_iv(s->est, s->pre_tail, iv);
	if (s->is_virtual)
		goto out;
	if (closing) {
		rc = s->stop_rc;
		now = s->stop_now;
	} else {
		if (mode == MPXKIT_SCHED_READ_FAST)
			rc = read_live_fast(s, !s->all_on || fidelity != NULL, &now);
		if (rc == -MPXKIT_ENOSUPP)
			rc = read_live_exact(s, &now);
	}
	if (rc == 0) {
		uint64_t live = live_time(s, now, s->rd);
		double elapsed = s->win_ns + (double)live;
		total += (double)live;
		if (s->has_clock) {
			elapsed = (double)(now - s->win_clock);
			total = (double)(now - s->run_clock);
		}
		if (iv)
			memcpy(s->pre_tail, est, s->n * sizeof *est);
		tail_estimate(s, live, elapsed, closing, est, fidelity ? s->scratch : NULL);
		for (size_t e = 0; iv && e < s->n; e++)
			widen_by_tail(s, e, est[e] - s->pre_tail[e],
				      window_seen(s, e, live, closing), est[e], &iv[e]);
	}
out:
	s->read_total = total;
	if (fidelity)
		fidelity_of(s, s->scratch, total, fidelity);
}

int mpxkit_sched_stop(mpxkit_sched *s)
{
	int rc;

	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_stop(s->front);
	if (!s->running)
		return 0;
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	unpublish(s); /* from here every read takes the lock, then sees the stop's totals */
	s->quit = 1;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (!s->is_virtual) {
		/* An eventfd write fails only at a count of 2^64 - 1; the thread also ends within a
		 * slice. */
		uint64_t one = 1, drained;
		ssize_t written = write(s->wake_fd, &one, sizeof one);
		pthread_join(s->thread, NULL);
		if (written == (ssize_t)sizeof one)
			while (read(s->wake_fd, &drained, sizeof drained) < 0 && errno == EINTR)
				;
	} else {
		pthread_join(s->thread, NULL);
	}
	/* The thread is gone: nothing else touches the state now. */
	rc = mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
	/*
	 * The live slice ends here.  The flush, the series callback and the
	 * whole-run pass run next on the caller's thread, which a per-thread
	 * clock goes on counting: read after them, the window in progress grew
	 * by their time (bigru under ASan: 7 ms of task-clock added to a 150 ms
	 * run, 13 ms on a loaded machine; ctests/test_sched).
	 */
	if (!s->is_virtual)
		s->stop_rc = read_live_exact(s, &s->stop_now);
	flush_estimator(s);
	whole_pass(s); /* after the flush: the series callback has had every windowed rotation */
	current_totals(s, s->final, s->final_fidelity, s->final_iv, MPXKIT_SCHED_READ_EXACT, 1);
	s->running = 0;
	return outcome(s, rc);
}

int mpxkit_sched_reset(mpxkit_sched *s)
{
	int rc = 0;

	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_reset(s->front);
	if (!s->running) {
		memset(s->final, 0, s->n * sizeof *s->final);
		for (size_t e = 0; e < s->n; e++)
			s->final_iv[e] = not_counted();
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	unpublish(s);
	mpxkit__diag_clear_last();
	rc = mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
	if (rc == 0)
		rc = begin_run(s);
	note_error(s, rc);
	publish(s);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int mpxkit_sched_read(mpxkit_sched *s, double *est, double *fidelity)
{
	if (s && s->front && est)
		return mpxkit__front_read(s->front, MPXKIT_SCHED_READ_FAST, 0, est, fidelity, NULL);
	return s ? mpxkit_sched_read_as(s, s->read_mode, est, fidelity) : -MPXKIT_EINVAL;
}

int mpxkit_sched_read_as(mpxkit_sched *s, mpxkit_sched_read_mode mode, double *est,
			 double *fidelity)
{
	int rc;

	if (s == NULL || est == NULL ||
	    (mode != MPXKIT_SCHED_READ_FAST && mode != MPXKIT_SCHED_READ_EXACT))
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_read(s->front, mode, 1, est, fidelity, NULL);
	if (!s->running) {
		memcpy(est, s->final, s->n * sizeof *est);
		if (fidelity)
			memcpy(fidelity, s->final_fidelity, s->n * sizeof *fidelity);
		return outcome(s, (int)s->rotations);
	}
	if (mode == MPXKIT_SCHED_READ_FAST && fidelity == NULL && read_unlocked(s, est, &rc))
		return rc;
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	if (!s->shortcut || fidelity != NULL || mode != MPXKIT_SCHED_READ_FAST ||
	    read_all_on(s, est) == -MPXKIT_ENOSUPP)
		current_totals(s, est, fidelity, NULL, mode, 0);
	rc = outcome(s, (int)s->rotations);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int mpxkit_sched_read_timed(mpxkit_sched *s, double *est, double *fidelity, double *run_ns)
{
	int rc;

	if (s == NULL || fidelity == NULL || run_ns == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return est ? mpxkit__front_read(s->front, MPXKIT_SCHED_READ_FAST, 0, est, fidelity,
						run_ns)
			   : -MPXKIT_EINVAL;
	/* With fidelity asked for, every read goes through current_totals, or is the stop's. */
	rc = mpxkit_sched_read(s, est, fidelity);
	if (rc >= 0)
		*run_ns = s->read_total;
	return rc;
}

int mpxkit_sched_read_iv(mpxkit_sched *s, double *est, double *fidelity, double *run_ns,
			 mpxkit_interval *iv)
{
	int rc;

	if (s == NULL || est == NULL || iv == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_read_iv(s->front, est, fidelity, run_ns, iv);
	if (!s->running) {
		memcpy(est, s->final, s->n * sizeof *est);
		memcpy(iv, s->final_iv, s->n * sizeof *iv);
		if (fidelity)
			memcpy(fidelity, s->final_fidelity, s->n * sizeof *fidelity);
		if (run_ns)
			*run_ns = s->read_total;
		return outcome(s, (int)s->rotations);
	}
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	current_totals(s, est, fidelity, iv, s->read_mode, 0);
	if (run_ns)
		*run_ns = s->read_total;
	rc = outcome(s, (int)s->rotations);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

double mpxkit_sched_level(const mpxkit_sched *s)
{
	if (s && s->front)
		return mpxkit__front_level(s->front);
	return s ? s->level : 0.0;
}

int mpxkit_sched_whole_series(const mpxkit_sched *s, mpxkit_sched_whole *out)
{
	if (s == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	if (s->front)
		return mpxkit__front_whole_series(s->front, out);
	memset(out, 0, sizeof *out);
	if (s->running)
		return -MPXKIT_ESTATE;
	if (!s->whole_done)
		return 0;
	out->n_rotations = s->n_kept;
	out->est = s->whole_est;
	out->obs = s->kept_obs;
	out->ref = s->has_ref ? s->kept_ref : NULL;
	out->val = s->kept_val;
	out->len = s->kept_len;
	out->iv = s->whole_iv;
	return 1;
}

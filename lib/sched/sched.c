/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiplexing engine: a rotation thread per running scheduler, running sums for reads. */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/sched.h"

struct mpxkit_sched {
	mpxkit_source *src;
	mpxkit_estimator *est;
	mpxkit_layout layout;
	size_t *slice; /* layout.slice: event e's group */
	size_t n, G, C;
	size_t n_slots; /* n, plus the reference's slot (slot n) when there is one */
	int has_ref;
	uint64_t slice_ns;
	int is_virtual;
	int has_clock; /* real time measured by mpxkit_source_clock, gaps between slices included */
	char estimator[64];

	/* Everything below is shared with the rotation thread and guarded by lock. */
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* to a virtual thread: quit, or serve again */
	int wake_fd;	       /* to a real-time thread, which waits in ppoll: quit */
	pthread_cond_t served; /* from the thread: the virtual trace has been served */
	pthread_t thread;
	int running, quit, done;
	int error; /* first error the thread hit, negative, or 0 */

	size_t cur;		     /* the group counting now */
	mpxkit_source_count *counts; /* n: the last read */
	uint64_t *base_value;	     /* n: each slot's count when its slice began */
	uint64_t *base_time;	     /* n: each slot's enabled time when its slice began */
	uint64_t *raw;		     /* n: this rotation's count of each event in its slice */
	uint64_t *slice_time;	     /* G: this rotation's closed slices, ns */
	uint64_t *prev_raw;	     /* n: the previous rotation's raw */
	uint64_t *prev_time;	     /* G: the previous rotation's slice_time */
	int have_prev;
	uint64_t *obs;	   /* n: what is pushed */
	uint64_t ref_base; /* the reference's count when the slice in progress began */
	uint64_t *ref_raw; /* G: the reference's count in each slice of this rotation */
	uint64_t *ref_obs; /* G: what is pushed of it */
	double *out;	   /* n: what push returned */
	double *sum;	   /* n: running sums of the estimates */
	double *scratch;
	double *final; /* n: totals of the last run, after a stop */
	double *counted_ns, *final_fidelity;
	double total_ns;      /* closed slices, when there is no clock */
	uint64_t run_clock;   /* the clock when the run began */
	uint64_t rot_clock;   /* the clock when the rotation in progress began */
	uint64_t slice_clock; /* the clock when the slice in progress began */
	uint64_t rot_time;    /* the last finished rotation's length */
	size_t rotations;
	mpxkit_sched_series_fn series;
	void *series_arg;
	size_t emitted; /* rotations handed to series */

	/*
	 * The whole-run pass (doc/component.md): with an estimator that has
	 * one, every rotation as pushed, up to whole_max; at the end of the
	 * run the pass replaces the windowed sums and gives whole_est.
	 */
	int whole;	    /* the estimator has a whole-run pass and whole_max > 0 */
	size_t whole_max;   /* rotations kept at most */
	uint64_t *kept_obs; /* n_kept rows of n */
	uint64_t *kept_ref; /* n_kept rows of G, with a reference */
	size_t n_kept, cap_kept;
	int kept_all;	   /* every rotation of this run is kept: under the cap, memory found */
	double *whole_est; /* n_kept rows of n, once the pass ran */
	int whole_done;	   /* the sums are the whole-run pass's */
};

/* ---- construction -------------------------------------------------------------------- */

static int alloc_arrays(mpxkit_sched *s)
{
	size_t n = s->n, G = s->G;

	s->slice = calloc(n, sizeof *s->slice);
	s->counts = calloc(s->n_slots, sizeof *s->counts);
	s->base_value = calloc(n, sizeof *s->base_value);
	s->base_time = calloc(n, sizeof *s->base_time);
	s->raw = calloc(n, sizeof *s->raw);
	s->prev_raw = calloc(n, sizeof *s->prev_raw);
	s->obs = calloc(n, sizeof *s->obs);
	s->slice_time = calloc(G, sizeof *s->slice_time);
	s->prev_time = calloc(G, sizeof *s->prev_time);
	s->out = calloc(n, sizeof *s->out);
	s->sum = calloc(n, sizeof *s->sum);
	s->scratch = calloc(n, sizeof *s->scratch);
	s->final = calloc(n, sizeof *s->final);
	s->counted_ns = calloc(n, sizeof *s->counted_ns);
	s->final_fidelity = calloc(n, sizeof *s->final_fidelity);
	s->ref_raw = calloc(G, sizeof *s->ref_raw);
	s->ref_obs = calloc(G, sizeof *s->ref_obs);
	return s->slice && s->counts && s->base_value && s->base_time && s->raw && s->prev_raw &&
		       s->obs && s->slice_time && s->prev_time && s->out && s->sum && s->scratch &&
		       s->final && s->counted_ns && s->final_fidelity && s->ref_raw && s->ref_obs
		   ? 0
		   : -MPXKIT_ENOMEM;
}

static void free_arrays(mpxkit_sched *s)
{
	free(s->slice);
	free(s->counts);
	free(s->base_value);
	free(s->base_time);
	free(s->raw);
	free(s->prev_raw);
	free(s->obs);
	free(s->slice_time);
	free(s->prev_time);
	free(s->out);
	free(s->sum);
	free(s->scratch);
	free(s->final);
	free(s->counted_ns);
	free(s->final_fidelity);
	free(s->ref_raw);
	free(s->ref_obs);
	free(s->kept_obs);
	free(s->kept_ref);
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

int mpxkit_sched_new(mpxkit_sched **out, mpxkit_source *src, const mpxkit_sched_config *cfg,
		     mpxkit_diag *diag)
{
	mpxkit_estimator_options opts = {0};
	mpxkit_sched *s;
	int rc;

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
	s->wake_fd = -1;
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
	s->slice_ns = cfg->slice_ns;
	if (alloc_arrays(s) < 0) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "scheduler: out of memory");
		goto fail;
	}
	for (size_t e = 0; e < s->n; e++)
		s->slice[e] = e / s->C;
	s->layout = (mpxkit_layout){s->n, s->G, s->slice, s->has_ref, 0};
	opts.model = cfg->model[0] ? cfg->model : NULL;
	rc = mpxkit_estimator_new(&s->est, cfg->estimator[0] ? cfg->estimator : "fixed", &s->layout,
				  &opts, diag);
	if (rc < 0)
		goto fail;
	snprintf(s->estimator, sizeof s->estimator, "%s", mpxkit_estimator_info_of(s->est)->name);
	s->whole_max = cfg->whole_max;
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
	s->src = src;
	*out = s;
	return 0;
fail:
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	mpxkit_estimator_free(s->est);
	free_arrays(s);
	free(s);
	return rc;
}

void mpxkit_sched_free(mpxkit_sched *s)
{
	if (s == NULL)
		return;
	mpxkit_sched_stop(s);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->served);
	close(s->wake_fd);
	mpxkit_estimator_free(s->est);
	mpxkit_source_free(s->src);
	free_arrays(s);
	free(s);
}

const mpxkit_layout *mpxkit_sched_layout(const mpxkit_sched *s)
{
	return s ? &s->layout : NULL;
}

size_t mpxkit_sched_counters(const mpxkit_sched *s)
{
	return s ? s->C : 0;
}

const char *mpxkit_sched_estimator(const mpxkit_sched *s)
{
	return s ? s->estimator : "none";
}

/* ---- rotation (all under lock) -------------------------------------------------------- */

static size_t group_first(const mpxkit_sched *s, size_t g)
{
	return g * s->C;
}

static size_t group_end(const mpxkit_sched *s, size_t g)
{
	size_t end = (g + 1) * s->C;
	return end < s->n ? end : s->n;
}

/* Turns a group on or off; with one group everything stays on and the thread only reads. */
static int switch_group(mpxkit_sched *s, size_t g, int on)
{
	int rc = 0;

	if (s->G == 1)
		return 0;
	for (size_t e = group_first(s, g); e < group_end(s, g) && rc == 0; e++)
		rc = on ? mpxkit_source_enable(s->src, (int)e)
			: mpxkit_source_disable(s->src, (int)e);
	return rc;
}

static int read_counts(mpxkit_sched *s)
{
	int rc = mpxkit_source_read(s->src, s->counts, s->n_slots);
	return rc < 0 ? rc : 0;
}

/* Each slot's count and enabled time as of the last read become where its next slice starts. */
static void rebase(mpxkit_sched *s, size_t first, size_t end)
{
	for (size_t e = first; e < end; e++) {
		s->base_value[e] = s->counts[e].value;
		s->base_time[e] = s->counts[e].time_enabled;
	}
}

/* Time of group g's slice in progress, from its first slot's enabled time since its base. */
static uint64_t live_time(const mpxkit_sched *s, size_t g)
{
	size_t e = group_first(s, g);
	return s->counts[e].time_enabled - s->base_time[e];
}

static uint64_t scaled(uint64_t count, double f)
{
	double v = (double)count * f + 0.5;
	return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
}

/* The factor that stretches slice g to the rotation's mean slice. */
static double slice_factor(const mpxkit_sched *s, size_t g)
{
	uint64_t t = s->slice_time[g];
	return t ? (double)s->rot_time / (double)s->G / (double)t : 1.0;
}

/*
 * Observations scaled to the rotation's mean slice; a virtual clock's slices
 * are all equal.  The reference's slice is scaled by its group's factor, so
 * the count per reference unit that ref-rate takes from a slice is the
 * slice's own.
 */
static void scale_observations(mpxkit_sched *s)
{
	if (s->is_virtual || s->G == 1) {
		memcpy(s->obs, s->raw, s->n * sizeof *s->obs);
		memcpy(s->ref_obs, s->ref_raw, s->G * sizeof *s->ref_obs);
		return;
	}
	for (size_t e = 0; e < s->n; e++)
		s->obs[e] = scaled(s->raw[e], slice_factor(s, s->slice[e]));
	for (size_t g = 0; g < s->G; g++)
		s->ref_obs[g] = scaled(s->ref_raw[g], slice_factor(s, g));
}

static void add_to(double *sum, const double *v, size_t n)
{
	for (size_t e = 0; e < n; e++)
		sum[e] += v[e];
}

/* One rotation's estimates, from push or flush: into the sums, and to the series. */
static void take_estimates(mpxkit_sched *s)
{
	add_to(s->sum, s->out, s->n);
	if (s->series)
		s->series(s->series_arg, s->emitted, s->out);
	s->emitted++;
}

/* Past the cap, or out of memory: this run keeps its windowed results, and its memory goes. */
static void stop_keeping(mpxkit_sched *s)
{
	free(s->kept_obs);
	free(s->kept_ref);
	s->kept_obs = s->kept_ref = NULL;
	s->n_kept = s->cap_kept = 0;
	s->kept_all = 0;
}

/* Room for one more kept rotation, doubling up to whole_max. */
static int grow_kept(mpxkit_sched *s)
{
	size_t cap = s->cap_kept ? 2 * s->cap_kept : 64;
	uint64_t *obs, *ref = NULL;

	if (cap > s->whole_max)
		cap = s->whole_max;
	if (cap > SIZE_MAX / sizeof *obs / (s->n + s->G))
		return -1;
	obs = realloc(s->kept_obs, cap * s->n * sizeof *obs);
	if (obs == NULL)
		return -1;
	s->kept_obs = obs;
	if (s->has_ref) {
		ref = realloc(s->kept_ref, cap * s->G * sizeof *ref);
		if (ref == NULL)
			return -1;
		s->kept_ref = ref;
	}
	s->cap_kept = cap;
	return 0;
}

/* Keeps the rotation just pushed, as pushed, for the whole-run pass. */
static void keep_rotation(mpxkit_sched *s)
{
	if (!s->whole || !s->kept_all)
		return;
	if (s->n_kept == s->whole_max || (s->n_kept == s->cap_kept && grow_kept(s) < 0)) {
		stop_keeping(s);
		return;
	}
	memcpy(s->kept_obs + s->n_kept * s->n, s->obs, s->n * sizeof *s->obs);
	if (s->has_ref)
		memcpy(s->kept_ref + s->n_kept * s->G, s->ref_obs, s->G * sizeof *s->ref_obs);
	s->n_kept++;
}

static int end_rotation(mpxkit_sched *s)
{
	mpxkit_rotation rot = {s->obs, s->has_ref ? s->ref_obs : NULL, NULL, NULL};
	int rc;

	scale_observations(s);
	keep_rotation(s);
	rc = mpxkit_estimator_push(s->est, &rot, s->out);
	if (rc < 0)
		return rc;
	if (rc == 1)
		take_estimates(s);
	memcpy(s->prev_raw, s->raw, s->n * sizeof *s->raw);
	memcpy(s->prev_time, s->slice_time, s->G * sizeof *s->slice_time);
	s->have_prev = 1;
	s->rotations++;
	return 0;
}

/*
 * One slice boundary: switch from the current group to the next with as
 * little between the two ioctls as possible, then take the closed slice's
 * counts, and push the rotation when it was the last slice.
 */
static int rotate(mpxkit_sched *s)
{
	size_t g = s->cur, next = (g + 1) % s->G, first = group_first(s, g), end = group_end(s, g);
	uint64_t t, now = 0;
	int rc = switch_group(s, g, 0);

	if (rc == 0 && s->has_clock)
		rc = mpxkit_source_clock(s->src, &now);
	if (rc == 0)
		rc = switch_group(s, next, 1);
	if (rc == 0)
		rc = read_counts(s);
	if (rc < 0)
		return rc;
	t = live_time(s, g);
	for (size_t e = first; e < end; e++) {
		s->raw[e] = s->counts[e].value - s->base_value[e];
		s->counted_ns[e] += (double)t;
	}
	s->slice_time[g] = t;
	s->total_ns += (double)t;
	rebase(s, first, end);
	if (s->has_ref) {
		/* From the last boundary's read to this one's: the span the group was counted. */
		s->ref_raw[g] = s->counts[s->n].value - s->ref_base;
		s->ref_base = s->counts[s->n].value;
	}
	s->cur = next;
	s->slice_clock = now;
	if (g < s->G - 1)
		return 0;
	if (s->has_clock) {
		s->rot_time = now - s->rot_clock;
		s->rot_clock = now;
	} else {
		s->rot_time = 0;
		for (size_t j = 0; j < s->G; j++)
			s->rot_time += s->slice_time[j];
	}
	return end_rotation(s);
}

/* Pushes what the estimator still holds into the sums, in rotation order. */
static void flush_estimator(mpxkit_sched *s)
{
	while (mpxkit_estimator_flush(s->est, s->out) == 1)
		take_estimates(s);
}

/*
 * At the stop, after the flush: the whole-run pass over the kept rotations,
 * whose estimates replace the windowed sums, added in rotation order as the
 * windowed ones were.  A run past the cap, out of memory or broken by an
 * error keeps its windowed sums.
 */
static void whole_pass(mpxkit_sched *s)
{
	double *est;

	if (!s->whole || !s->kept_all || s->error < 0 || s->n_kept != s->rotations)
		return;
	est = malloc((s->n_kept ? s->n_kept : 1) * s->n * sizeof *est);
	if (est == NULL)
		return;
	if (mpxkit_estimator_run_whole(s->est, s->n_kept, s->kept_obs, s->kept_ref, est, NULL) <
	    0) {
		free(est);
		return;
	}
	memset(s->sum, 0, s->n * sizeof *s->sum);
	for (size_t k = 0; k < s->n_kept; k++)
		add_to(s->sum, est + k * s->n, s->n);
	free(s->whole_est);
	s->whole_est = est;
	s->whole_done = 1;
}

/*
 * The rotation in progress, by time scaling (real-time sources only); the
 * counts must have just been read, and elapsed is the rotation's time so far.
 * Adds each event's share to tail and the live slice to counted.
 */
static void tail_estimate(const mpxkit_sched *s, double elapsed, double *tail, double *counted)
{
	double now = (double)live_time(s, s->cur);

	for (size_t e = 0; e < s->n; e++) {
		size_t g = s->slice[e];
		double count = 0, t = 0;
		if (g < s->cur) {
			count = (double)s->raw[e];
			t = (double)s->slice_time[g];
		} else if (g == s->cur) {
			count = (double)(s->counts[e].value - s->base_value[e]);
			t = now;
			counted[e] += now;
		} else if (s->have_prev) {
			count = (double)s->prev_raw[e];
			t = (double)s->prev_time[g];
		}
		/* One group counts all the time: its count is the truth, not to be scaled. */
		tail[e] += t > 0 && s->G > 1 ? count * (elapsed / t) : count;
	}
}

static void fidelity_of(const mpxkit_sched *s, const double *counted, double total, double *out)
{
	for (size_t e = 0; e < s->n; e++)
		out[e] = total > 0 ? counted[e] / total : 0.0;
}

/* ---- the rotation thread ------------------------------------------------------------- */

static void note_error(mpxkit_sched *s, int rc)
{
	if (rc < 0 && s->error == 0)
		s->error = rc;
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
static uint64_t slice_left(mpxkit_sched *s)
{
	uint64_t now;

	if (!s->has_clock || mpxkit_source_clock(s->src, &now) < 0)
		return 0;
	return now - s->slice_clock >= s->slice_ns ? 0 : s->slice_ns - (now - s->slice_clock);
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

static void run_real_time(mpxkit_sched *s)
{
	struct timespec deadline, now;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	add_ns(&deadline, s->slice_ns);
	while (!s->quit) {
		uint64_t left;
		sleep_until(s, &deadline);
		if (s->quit)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (before(&now, &deadline))
			continue; /* woken early */
		deadline = now;
		/* Less than a tenth of a slice left: rotate now rather than wake again so soon. */
		left = slice_left(s);
		if (left > s->slice_ns / 10) {
			add_ns(&deadline, left);
			continue;
		}
		if (s->error == 0)
			note_error(s, rotate(s));
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
	s->rot_clock = s->slice_clock = s->run_clock;
	if (rc == 0)
		rc = read_counts(s);
	if (rc < 0)
		return rc;
	rebase(s, 0, s->n);
	s->ref_base = s->has_ref ? s->counts[s->n].value : 0;
	mpxkit_estimator_reset(s->est);
	memset(s->sum, 0, s->n * sizeof *s->sum);
	memset(s->counted_ns, 0, s->n * sizeof *s->counted_ns);
	memset(s->slice_time, 0, s->G * sizeof *s->slice_time);
	s->total_ns = 0;
	s->have_prev = 0;
	s->rotations = 0;
	s->emitted = 0;
	s->done = 0;
	s->error = 0;
	s->cur = 0;
	s->n_kept = 0;
	s->kept_all = 1;
	s->whole_done = 0;
	free(s->whole_est);
	s->whole_est = NULL;
	if (s->G == 1)
		return mpxkit_source_enable(s->src, MPXKIT_SOURCE_ALL);
	rc = s->has_ref ? mpxkit_source_enable(s->src, (int)s->n) : 0;
	return rc < 0 ? rc : switch_group(s, 0, 1);
}

int mpxkit_sched_on_rotation(mpxkit_sched *s, mpxkit_sched_series_fn fn, void *arg)
{
	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (s->running)
		return -MPXKIT_ESTATE;
	s->series = fn;
	s->series_arg = arg;
	return 0;
}

int mpxkit_sched_start(mpxkit_sched *s)
{
	sigset_t all, old;
	int rc;

	if (s == NULL)
		return -MPXKIT_EINVAL;
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
	/* The thread starts with every signal blocked, so it never takes the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&s->thread, NULL, rotation_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
		errno = rc;
		return mpxkit_fail_sys(NULL, "pthread_create");
	}
	s->running = 1;
	return 0;
}

/* Virtual sources: a read or a stop sees the trace served to its end. */
static void wait_served(mpxkit_sched *s)
{
	while (s->is_virtual && !s->done)
		pthread_cond_wait(&s->served, &s->lock);
}

/* The totals now (lock held, running): sums, what the estimator holds, the rotation in progress. */
static void current_totals(mpxkit_sched *s, double *est, double *fidelity)
{
	double total = s->total_ns;
	int pending;

	memcpy(est, s->sum, s->n * sizeof *est);
	memcpy(s->scratch, s->counted_ns, s->n * sizeof *s->scratch);
	pending = mpxkit_estimator_peek(s->est, s->out);
	if (pending > 0)
		add_to(est, s->out, s->n);
	if (!s->is_virtual && read_counts(s) == 0) {
		uint64_t now;
		double elapsed = (double)live_time(s, s->cur);
		for (size_t g = 0; g < s->cur; g++)
			elapsed += (double)s->slice_time[g];
		total += (double)live_time(s, s->cur);
		/* One group needs no clock: its counts are the estimates, its slots' time the
		 * run's. */
		if (s->has_clock && s->G > 1 && mpxkit_source_clock(s->src, &now) == 0) {
			elapsed = (double)(now - s->rot_clock);
			total = (double)(now - s->run_clock);
		}
		tail_estimate(s, elapsed, est, s->scratch);
	}
	if (fidelity)
		fidelity_of(s, s->scratch, total, fidelity);
}

int mpxkit_sched_stop(mpxkit_sched *s)
{
	int rc;

	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (!s->running)
		return 0;
	pthread_mutex_lock(&s->lock);
	wait_served(s);
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
	flush_estimator(s);
	whole_pass(s); /* after the flush: the series callback has had every windowed rotation */
	current_totals(s, s->final, s->final_fidelity);
	s->running = 0;
	if (s->error < 0)
		rc = s->error;
	return rc;
}

int mpxkit_sched_reset(mpxkit_sched *s)
{
	int rc = 0;

	if (s == NULL)
		return -MPXKIT_EINVAL;
	if (!s->running) {
		memset(s->final, 0, s->n * sizeof *s->final);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	rc = mpxkit_source_disable(s->src, MPXKIT_SOURCE_ALL);
	if (rc == 0)
		rc = begin_run(s);
	note_error(s, rc);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int mpxkit_sched_read(mpxkit_sched *s, double *est, double *fidelity)
{
	int rc;

	if (s == NULL || est == NULL)
		return -MPXKIT_EINVAL;
	if (!s->running) {
		memcpy(est, s->final, s->n * sizeof *est);
		if (fidelity)
			memcpy(fidelity, s->final_fidelity, s->n * sizeof *fidelity);
		return s->error < 0 ? s->error : (int)s->rotations;
	}
	pthread_mutex_lock(&s->lock);
	wait_served(s);
	current_totals(s, est, fidelity);
	rc = s->error < 0 ? s->error : (int)s->rotations;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int mpxkit_sched_whole_series(const mpxkit_sched *s, mpxkit_sched_whole *out)
{
	if (s == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	memset(out, 0, sizeof *out);
	if (s->running)
		return -MPXKIT_ESTATE;
	if (!s->whole_done)
		return 0;
	out->n_rotations = s->n_kept;
	out->est = s->whole_est;
	out->obs = s->kept_obs;
	out->ref = s->has_ref ? s->kept_ref : NULL;
	return 1;
}

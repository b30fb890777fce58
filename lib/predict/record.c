/* SPDX-License-Identifier: BSD-3-Clause */
/* `predict record` and `--live`: a command run under the engine, at every (core kind, frequency)
 * or with predictions every period. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"
#include "mpxkit/workload.h"

#include "predict_impl.h"

/* ---- one counted run --------------------------------------------------------------------------
 */

typedef struct counted {
	mpxkit_workload w;
	mpxkit_sched *s;
	int started;
} counted;

/*
 * The engine over a prepared child: perf_event on it and its children, or, with a replay
 * trace set, the trace on its virtual clock (tests, machines without a PMU).
 */
static int open_engine(counted *c, const mpxkit_sched_config *cfg, const mpxkit_trace *replay,
		       const char *const *events, size_t n_events, mpxkit_diag *diag)
{
	mpxkit_source_target target = {.pid = c->w.pid, .cpu = -1, .inherit = 1, .domain = 0};
	mpxkit_source *src = NULL;
	int rc;

	if (replay)
		rc = mpxkit_source_open_replay(&src, replay, cfg->slice_ns, diag);
	else
		rc = mpxkit_source_open_perf(&src, &target, diag);
	for (size_t e = 0; rc >= 0 && e < n_events; e++)
		rc = mpxkit_source_add(src, events[e], diag);
	if (rc >= 0)
		rc = mpxkit_sched_new(&c->s, src, cfg, diag);
	if (rc < 0) {
		mpxkit_source_free(src);
		return rc;
	}
	return 0;
}

/* Pins the held child to a set of CPUs before it execs. */
static int pin_child(pid_t pid, const mpxkit_core_kind *k, mpxkit_diag *diag)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (size_t i = 0; i < k->n_cpus; i++)
		if (k->cpus[i] >= 0 && k->cpus[i] < CPU_SETSIZE)
			CPU_SET(k->cpus[i], &set);
	if (sched_setaffinity(pid, sizeof set, &set) < 0)
		return mpxkit_fail_sys(diag, "cannot pin the command to the CPUs of %s", k->name);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "cmd exited with status 3" and the like, for a run that did not succeed. */
static int child_failed(const char *name, int status, mpxkit_diag *diag)
{
	if (WIFEXITED(status))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "'%s' exited with status %d", name,
				   WEXITSTATUS(status));
	return mpxkit_fail(diag, MPXKIT_EINVAL, "'%s' was killed by signal %d", name,
			   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* ---- record -----------------------------------------------------------------------------------
 */

static int check_record(const mpxkit_record_options *o, mpxkit_diag *diag)
{
	const mpxkit_platform *p = o->platform;

	if (p == NULL || o->n_events == 0 || o->runs == 0 || o->workload == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict record: bad argument");
	if (p->missing[0])
		return mpxkit_fail(diag, MPXKIT_ENOSUPP, "%s", p->missing);
	if (o->roles[MPXKIT_ROLE_CYCLES] == NULL || o->roles[MPXKIT_ROLE_INSTRUCTIONS] == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "predict record: the events must include "
				   "cycles and instructions (roles)");
	return 0;
}

/* One execution at (kind, freq): the row of the dataset. */
static int record_run(const mpxkit_record_options *o, const mpxkit_trace *replay, size_t kind,
		      double freq, unsigned run, char *const argv[], mpxkit_pdata *d,
		      mpxkit_diag *diag)
{
	const mpxkit_platform *p = o->platform;
	counted c = {0};
	double e0[MPXKIT_PLATFORM_MAX_ZONES], e1[MPXKIT_PLATFORM_MAX_ZONES], t0, t1;
	double *est = calloc(o->n_events + 1, sizeof *est);
	mpxkit_pdata_row row = {.freq_mhz = freq,
				.threads = o->threads ? o->threads : 1,
				.run = run,
				.sample = -1,
				.voltage_v = NAN};
	mpxkit_diag exec_diag = {0};
	int rc, status = 0, exec_rc;

	if (est == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if ((rc = mpxkit_workload_prepare(&c.w, argv, diag)) < 0) {
		free(est);
		return rc;
	}
	rc = pin_child(c.w.pid, &p->kinds[kind], diag);
	if (rc == 0)
		rc = open_engine(&c, &o->sched, replay, o->events, o->n_events, diag);
	if (rc == 0)
		rc = mpxkit_sched_start(c.s);
	if (rc == 0)
		rc = mpxkit_platform_energy(p, e0, diag);
	if (rc < 0) {
		mpxkit_workload_cancel(&c.w);
		mpxkit_sched_free(c.s);
		free(est);
		return rc;
	}
	t0 = now_s();
	exec_rc = mpxkit_workload_start(&c.w, &exec_diag);
	mpxkit_workload_wait(&c.w, &status);
	t1 = now_s();
	rc = mpxkit_platform_energy(p, e1, diag);
	if (mpxkit_sched_stop(c.s) < 0 && rc == 0)
		rc = mpxkit_fail(diag, MPXKIT_ESYS, "the engine failed while counting");
	if (rc == 0 && mpxkit_sched_read(c.s, est, NULL) < 0)
		rc = mpxkit_fail(diag, MPXKIT_ESYS, "the engine's rotation thread failed");
	mpxkit_sched_free(c.s);
	if (exec_rc < 0) {
		*diag = exec_diag;
		rc = exec_rc;
	} else if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		rc = child_failed(argv[0], status, diag);
	}
	if (rc == 0) {
		/*
		 * A replay's counts are its whole trace on the virtual clock, not the
		 * command's wall time: the row's time is the trace's, so that cycles and
		 * time agree (doc/predict-format.md, "Plausibility").
		 */
		row.time_s = replay    ? (double)replay->n_steps * (double)o->sched.slice_ns * 1e-9
			     : t1 > t0 ? t1 - t0
				       : 1e-9;
		row.power_w = mpxkit_platform_energy_delta(p, e0, e1) / row.time_s;
		rc = mpxkit_pdata_append(d, o->workload, p->kinds[kind].name, &row, est, diag);
	}
	free(est);
	return rc;
}

static int new_record_dataset(const mpxkit_record_options *o, mpxkit_pdata **out, mpxkit_diag *diag)
{
	mpxkit_pdata *d;
	int rc =
	    mpxkit_pdata_new(&d, o->workload, MPXKIT_TIME_ELAPSED, o->events, o->n_events, diag);

	for (int r = 0; rc == 0 && r < MPXKIT_ROLE_COUNT; r++) {
		int col;
		if (o->roles[r] == NULL)
			continue;
		if ((col = mpxkit_pdata_event(d, o->roles[r])) < 0)
			rc = mpxkit_fail(diag, MPXKIT_EINVAL, "role %s=%s: not among the events",
					 mpxkit_role_name(r), o->roles[r]);
		else
			d->role[r] = col;
	}
	if (rc == 0)
		rc = mpxkit_pdata_set_meta(d, "source", "mpxkit predict record", diag);
	if (rc < 0) {
		mpxkit_pdata_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int mpxkit_predict_record(const mpxkit_record_options *o, char *const argv[], mpxkit_pdata **out,
			  mpxkit_diag *diag)
{
	const mpxkit_platform *p = o->platform;
	mpxkit_trace *replay = NULL;
	mpxkit_pdata *d = NULL;
	size_t total = 0, done = 0;
	int rc;

	if ((rc = check_record(o, diag)) < 0)
		return rc;
	if (o->sched.replay[0] && (rc = mpxkit_trace_read(o->sched.replay, &replay, diag)) < 0)
		return rc;
	if ((rc = new_record_dataset(o, &d, diag)) < 0) {
		mpxkit_trace_free(replay);
		return rc;
	}
	for (size_t k = 0; k < p->n_kinds; k++)
		total += p->kinds[k].n_freqs * o->runs;
	for (size_t k = 0; rc == 0 && k < p->n_kinds; k++)
		for (size_t f = 0; rc == 0 && f < p->kinds[k].n_freqs; f++) {
			mpxkit_freq_saved *saved = NULL;
			double freq = p->kinds[k].freq_mhz[f];
			if ((rc = mpxkit_platform_set_freq(p, k, freq, &saved, diag)) < 0)
				break;
			for (unsigned r = 0; rc == 0 && r < o->runs; r++) {
				if (o->progress)
					o->progress(o->arg, done, total, p->kinds[k].name, freq);
				rc = record_run(o, replay, k, freq, r, argv, d, diag);
				done++;
			}
			/* Restored after every frequency, so a failure leaves the machine as found.
			 */
			if (mpxkit_platform_restore(saved, rc == 0 ? diag : NULL) < 0 && rc == 0)
				rc = -MPXKIT_ESYS;
		}
	mpxkit_trace_free(replay);
	if (rc < 0) {
		mpxkit_pdata_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* ---- live -------------------------------------------------------------------------------------
 */

typedef struct live {
	const mpxkit_live_options *o;
	const mpxkit_pmodel *m;
	mpxkit_pbinding b;
	mpxkit_pobs obs;
	size_t n_events;
	uint64_t rotation_ns, rotations_per_period;
	double *sum;
	mpxkit_prediction *pred;
	size_t in_period, period;
	double t; /* seconds since the start, at the period's start */
	int failed;
	mpxkit_diag diag;
} live;

/* One period of len seconds from the sums in l->sum. */
static void live_emit(live *l, double len)
{
	l->obs.time_s = len;
	l->obs.values = l->sum;
	if (mpxkit_predict(l->m, &l->b, &l->obs, l->pred, &l->diag) < 0) {
		/* A period without cycles or instructions (the command slept): all unknown. */
		for (size_t k = 0; k < mpxkit_pmodel_n_configs(l->m); k++)
			l->pred[k] = (mpxkit_prediction){NAN, NAN, NAN, NAN, NAN};
	}
	l->o->on_period(l->o->arg, l->period++, l->t, l->t + len, l->pred,
			mpxkit_pmodel_n_configs(l->m));
	l->t += len;
	l->in_period = 0;
	memset(l->sum, 0, l->n_events * sizeof *l->sum);
}

static void live_flush(live *l)
{
	if (l->in_period == 0 || l->failed)
		return;
	live_emit(l, (double)l->in_period * (double)l->rotation_ns * 1e-9);
}

/* Runs in the engine's rotation thread: sums rotations into periods. */
static void live_rotation(void *arg, size_t k, const double *est)
{
	live *l = arg;

	(void)k;
	for (size_t e = 0; e < l->n_events; e++)
		l->sum[e] += est[e];
	if (++l->in_period >= l->rotations_per_period)
		live_flush(l);
}

/* The events the model reads, in input order: the live input's columns. */
static size_t live_events(const mpxkit_pmodel *m, const char **events)
{
	size_t n = 0;

	for (size_t i = 0; i < mpxkit_pmodel_n_inputs(m); i++)
		if (mpxkit_pmodel_input(m, i))
			events[n++] = mpxkit_pmodel_input(m, i);
	return n;
}

/* Where the command runs: as told, else the platform's only core kind at its current clock. */
static int live_config(const mpxkit_live_options *o, live *l, mpxkit_diag *diag)
{
	const char *core = o->core;
	double f = o->freq_mhz;
	int rc;

	if (core == NULL || f <= 0) {
		const mpxkit_platform *p = o->platform;
		if (p == NULL || p->n_kinds == 0)
			return mpxkit_fail(diag, MPXKIT_ENOSUPP,
					   "no core kinds known: name the "
					   "configuration the command runs on (CORE@MHZ)");
		if (p->n_kinds > 1 && core == NULL)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%zu core kinds here: name the one "
					   "the command runs on (CORE@MHZ)",
					   p->n_kinds);
		if (core == NULL)
			core = p->kinds[0].name;
		if (f <= 0 && (rc = mpxkit_platform_cur_freq(p, p->kinds[0].cpus[0], &f, diag)) < 0)
			return rc;
	}
	if ((l->obs.core = mpxkit_pmodel_core(l->m, core)) < 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "core kind '%.64s': not in the model",
				   core);
	l->obs.freq_mhz = f;
	return 0;
}

int mpxkit_predict_live(const mpxkit_live_options *o, char *const argv[], int *wstatus,
			mpxkit_diag *diag)
{
	const char *events[MPXKIT_PMODEL_MAX_INPUTS];
	live l = {.o = o, .m = o->model};
	mpxkit_trace *replay = NULL;
	counted c = {0};
	mpxkit_diag exec_diag = {0};
	uint64_t period = o->period_ns ? o->period_ns : 100000000u;
	double t0, t1;
	int rc, exec_rc;

	if (o->model == NULL || o->on_period == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict live: bad argument");
	l.n_events = live_events(l.m, events);
	l.obs = (mpxkit_pobs){.threads = o->threads ? o->threads : 1,
			      .time_kind = MPXKIT_TIME_ELAPSED,
			      .power_w = NAN};
	if ((rc = live_config(o, &l, diag)) < 0 ||
	    (rc = mpxkit_pbinding_events(l.m, events, l.n_events, &l.b, diag)) < 0)
		return rc;
	l.sum = calloc(l.n_events + 1, sizeof *l.sum);
	l.pred = calloc(mpxkit_pmodel_n_configs(l.m) + 1, sizeof *l.pred);
	if (!l.sum || !l.pred) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto out;
	}
	if (o->sched.replay[0] && (rc = mpxkit_trace_read(o->sched.replay, &replay, diag)) < 0)
		goto out;
	if ((rc = mpxkit_workload_prepare(&c.w, argv, diag)) < 0)
		goto out;
	rc = open_engine(&c, &o->sched, replay, events, l.n_events, diag);
	if (rc == 0) {
		const mpxkit_layout *lay = mpxkit_sched_layout(c.s);
		/* A rotation lasts G slices; a period is the whole rotations nearest to it. */
		l.rotation_ns = lay->n_groups * o->sched.slice_ns;
		l.rotations_per_period = (period + l.rotation_ns / 2) / l.rotation_ns;
		if (l.rotations_per_period == 0)
			l.rotations_per_period = 1;
		rc = mpxkit_sched_on_rotation(c.s, live_rotation, &l);
	}
	if (rc == 0)
		rc = mpxkit_sched_start(c.s);
	if (rc < 0) {
		mpxkit_workload_cancel(&c.w);
		goto out;
	}
	t0 = now_s();
	exec_rc = mpxkit_workload_start(&c.w, &exec_diag);
	mpxkit_workload_wait(&c.w, wstatus);
	t1 = now_s();
	if (mpxkit_sched_stop(c.s) < 0)
		rc = mpxkit_fail(diag, MPXKIT_ESYS, "the engine failed while counting");
	live_flush(&l); /* the last, shorter period */
	/*
	 * A command that ended before its first rotation: one row from the
	 * stop's totals (read exactly) over its wall time, not a header alone.
	 */
	if (rc == 0 && l.period == 0 && !l.failed && mpxkit_sched_read(c.s, l.sum, NULL) >= 0)
		live_emit(&l, t1 > t0 ? t1 - t0 : 1e-9);
	if (exec_rc < 0) {
		*diag = exec_diag;
		rc = exec_rc;
	}
out:
	mpxkit_sched_free(c.s);
	mpxkit_trace_free(replay);
	free(l.sum);
	free(l.pred);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* PAPI component "mpxkit": events mpxkit:::<event> multiplexed in software, estimated online. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getcpu */
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* PAPI's internal headers predate -Wstrict-prototypes; the component itself is held to it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "papi.h"
#include "papi_internal.h"
#include "papi_vector.h"
#pragma GCC diagnostic pop

#include "mpxkit/event.h"
#include "mpxkit/job.h"
#include "mpxkit/papi.h"
#include "mpxkit/pcz.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/trace.h"

#ifndef MPXKIT_VERSION
#define MPXKIT_VERSION "unknown"
#endif

/* Events one event set may hold; the engine multiplexes them on MPXKIT_COUNTERS counters. */
#define MPXKIT_MAX_EVENTS 64

papi_vector_t _mpxkit_vector;

/* One native event: an event the counter source can count on this machine. */
typedef struct mpxkit_native {
	char *name; /* the source's name, "perf::TASK-CLOCK"; PAPI prefixes "mpxkit:::" */
	char *description;
	char *unit;
} mpxkit_native;

/*
 * Native codes (doc/component.md, "Events").  Under perf_event: the
 * catalogue's entries (mpxkit/event.h: every event that exists here, the
 * umasks of libpfm4's events among them) are codes 0 .. n_catalog - 1, in
 * its order, and every other name an event set asks for (a raw code, a
 * sysfs event with fields, a name with modifiers) gets a code of its own,
 * DYN_BASE + its index in natives, when PAPI first asks for it.  Under
 * MPXKIT_REPLAY: the trace's columns, code = index in natives.
 *
 * Filled once by init_component, read-only afterwards, so threads share
 * them without locks: the catalogue (read whole at init), the settings read
 * from the environment, and the trace every event set replays.  natives
 * grows under natives_lock under perf_event (PAPI_add_named_event from any
 * thread); its strings never move once added.
 */
#define DYN_BASE 0x01000000u /* below PAPI's component bits (PAPI_COMPONENT_MASK) */

static mpxkit_event_catalog *catalog;
static unsigned n_catalog;
static int n_listed; /* its events, umasks left out: num_native_events */
static pthread_mutex_t natives_lock = PTHREAD_MUTEX_INITIALIZER;
static mpxkit_native *natives;
static int n_natives, cap_natives;
static mpxkit_sched_config settings;
static mpxkit_trace *replay_trace;

/*
 * MPXKIT_DUMP (doc/component.md): the template, read at init ("" = off), the
 * file it names for this process (doc/mpi.md), and the writer, opened in
 * memory at the first PAPI_stop with that event set's events.  The lock
 * guards the writer's opening and closing and the error state; the writer's
 * own stage_unit is thread-safe, so stops stage without it.
 */
static char dump_path[PATH_MAX];
static mpxkit_job_dump dump_job;
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static mpxkit_pcz_writer *dump_writer;
static unsigned int dump_codes[MPXKIT_MAX_EVENTS];
static int dump_n_events;
static char dump_error[512];	   /* the first failure, printed at shutdown */
static unsigned long dump_skipped; /* stops of event sets with other events */

/*
 * Per event set: one scheduler over one source.  The slots are opened for the
 * thread that adds the events, because perf_event counts the task it was
 * opened in; options that change what is counted (domain, inherit) reopen
 * them.  The scheduler's rotation thread runs between start and stop.
 */
typedef struct mpxkit_control {
	mpxkit_sched *sched;
	int n_events;
	unsigned domain; /* MPXKIT_DOM_* of the event set's PAPI domain; 0: the default */
	int inherit; /* PAPI_INHERIT asked for */
	unsigned int codes[MPXKIT_MAX_EVENTS];
	long long values[MPXKIT_MAX_EVENTS];
	double estimates[MPXKIT_MAX_EVENTS];
	/*
	 * MPXKIT_DUMP only: the run's per-rotation estimates (step-major) and
	 * the time each arrived, appended by the rotation thread and read at
	 * the stop, after it joined; run_start_ns is touched by the owner only.
	 */
	uint64_t *series;
	uint64_t *series_ns;
	size_t n_series, cap_series;
	int series_lost; /* out of memory: this run's series is incomplete */
	uint64_t run_start_ns;
	int started; /* PAPI_start has run once: the engine has totals to give intervals of */
} mpxkit_control;

/* Per thread.  Nothing: every count and the rotation state live in the event set. */
typedef struct mpxkit_context {
	int reserved;
} mpxkit_context;

static int papi_error(int mpxkit_code)
{
	switch (-mpxkit_code) {
	case MPXKIT_OK:
		return PAPI_OK;
	case MPXKIT_ENOENT:
		return PAPI_ENOEVNT;
	case MPXKIT_ENOSUPP:
		return PAPI_ENOSUPP;
	case MPXKIT_EPERM:
		return PAPI_EPERM;
	case MPXKIT_ENOMEM:
		return PAPI_ENOMEM;
	case MPXKIT_EINVAL:
	case MPXKIT_ERANGE:
		return PAPI_EINVAL;
	case MPXKIT_ESYS:
	case MPXKIT_EIO:
		/* PAPI_ESYS says only "a system call failed": which one, and why, goes to PAPI's
		 * error channel (shown at PAPI_VERB_ECONT), from the thread's last failure. */
		PAPIERROR("mpxkit: %s", mpxkit_diag_message(NULL, mpxkit_code));
		return PAPI_ESYS;
	case MPXKIT_ESTATE:
		return PAPI_EISRUN;
	default:
		return PAPI_ECMP;
	}
}

__attribute__((format(printf, 1, 2))) static void set_disabled_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(_mpxkit_vector.cmp_info.disabled_reason,
		  sizeof _mpxkit_vector.cmp_info.disabled_reason, fmt, ap);
	va_end(ap);
}

/*
 * A bad MPXKIT_* setting disables the component, and PAPI shows its users
 * only "Event does not exist" from PAPI_add_event: the reason is also said
 * once on stderr, at PAPI_library_init, as MPXKIT_DUMP's failures are.  Not
 * for what the machine lacks (no perf_event), which papi_component_avail
 * reports and every PAPI program would otherwise repeat.
 */
static void report_setting_once(void)
{
	static int said;

	if (said++ == 0)
		fprintf(stderr, "mpxkit: %s; the mpxkit component is disabled\n",
			_mpxkit_vector.cmp_info.disabled_reason);
}

/* A misspelt MPXKIT_ variable changes nothing: said once, the component stays enabled. */
static void warn_unknown_env_once(void)
{
	static int said;
	mpxkit_diag diag = {0};

	if (said == 0 && mpxkit_sched_config_unknown_env(NULL, &diag) == 1) {
		said = 1;
		fprintf(stderr, "mpxkit: warning: %s\n", diag.msg);
	}
}

static void free_natives(void)
{
	for (int i = 0; i < n_natives; i++) {
		free(natives[i].name);
		free(natives[i].description);
		free(natives[i].unit);
	}
	free(natives);
	natives = NULL;
	n_natives = cap_natives = 0;
	mpxkit_event_catalog_free(catalog);
	catalog = NULL;
	n_catalog = 0;
}

/* Appends one native; its code, or -1 when out of memory.  Caller holds natives_lock. */
static int append_native(const char *name, const char *description, const char *unit)
{
	mpxkit_native *n;

	if (n_natives == cap_natives) {
		int cap = cap_natives ? 2 * cap_natives : 16;
		mpxkit_native *grown = realloc(natives, (size_t)cap * sizeof *grown);
		if (grown == NULL)
			return -1;
		natives = grown;
		cap_natives = cap;
	}
	n = &natives[n_natives];
	n->name = strdup(name);
	n->description = strdup(description);
	n->unit = strdup(unit);
	if (!n->name || !n->description || !n->unit) {
		free(n->name);
		free(n->description);
		free(n->unit);
		return -1;
	}
	return n_natives++;
}

/* Under MPXKIT_REPLAY: the trace's columns, as the replay source lists them. */
static int load_replay_natives(mpxkit_source *probe)
{
	mpxkit_source_event ev;

	for (size_t i = 0; mpxkit_source_list(probe, i, &ev) == 0; i++)
		if (append_native(ev.name, ev.description, ev.unit) < 0)
			return PAPI_ENOMEM;
	return PAPI_OK;
}

/* Under perf_event: the whole catalogue, read now so that it is read-only afterwards. */
static int load_catalog(void)
{
	mpxkit_diag diag = {0};
	size_t n;

	if (mpxkit_event_catalog_open(&catalog, 0, &diag) < 0)
		return PAPI_ENOMEM;
	n = mpxkit_event_catalog_size(catalog);
	if (n >= DYN_BASE)
		n = DYN_BASE - 1;
	n_catalog = (unsigned)n;
	n_listed = 0; /* what PAPI_ENUM_EVENTS walks: umasks are not counted */
	for (unsigned i = 0; i < n_catalog; i++) {
		mpxkit_event_info info;
		if (mpxkit_event_catalog_get(catalog, i, &info) == 0 && !info.umask)
			n_listed++;
	}
	return PAPI_OK;
}

/* Native code's entry: its strings (stable until shutdown) and whether it is a umask. */
typedef struct native_ref {
	const char *name, *description, *unit;
	mpxkit_event_class kind;
	int umask;
	int listed; /* an entry of the catalogue */
} native_ref;

static int native_of(unsigned code, native_ref *out)
{
	mpxkit_event_info info;
	int ok = 0;

	memset(out, 0, sizeof *out);
	if (catalog && code < n_catalog && mpxkit_event_catalog_get(catalog, code, &info) == 0) {
		out->name = info.name;
		out->description = info.description;
		out->unit = info.unit;
		out->kind = info.kind;
		out->umask = info.umask;
		out->listed = 1;
		return 1;
	}
	if (catalog) {
		if (code < DYN_BASE)
			return 0;
		code -= DYN_BASE;
	}
	pthread_mutex_lock(&natives_lock);
	if (code < (unsigned)n_natives) {
		out->name = natives[code].name;
		out->description = natives[code].description;
		out->unit = natives[code].unit;
		out->kind = MPXKIT_EVENT_N_KINDS;
		ok = 1;
	}
	pthread_mutex_unlock(&natives_lock);
	return ok;
}

/* The name a native code stands for, or NULL. */
static const char *native_name(unsigned code)
{
	native_ref r;

	return native_of(code, &r) ? r.name : NULL;
}

/* The counter source the settings ask for, with no events yet. */
static int open_source(mpxkit_source **out, const mpxkit_source_target *target, mpxkit_diag *diag)
{
	if (replay_trace)
		return mpxkit_source_open_replay(out, replay_trace, settings.slice_ns, diag);
	return mpxkit_source_open_perf(out, target, diag);
}

/* ---- MPXKIT_DUMP ---------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An estimate as a count in the dump: rounded as PAPI_read rounds it, negatives and NaN as 0. */
static uint64_t dump_count(double est)
{
	if (!(est > 0))
		return 0;
	return est >= 9.2e18 ? (uint64_t)LLONG_MAX : (uint64_t)llround(est);
}

static void dump_close(void);

static pid_t dump_pid; /* the process that read MPXKIT_DUMP: a forked child never writes it */

/* A program that never calls PAPI_shutdown still gets its dump when it exits. */
static void dump_at_exit(void)
{
	if (getpid() == dump_pid)
		dump_close();
}

static void dump_register_exit(void)
{
	atexit(dump_at_exit);
}

/*
 * Reads MPXKIT_DUMP and expands it for this process (%r, %s, %h, %p, %j, the
 * rank inserted under a launcher: mpxkit_job_dump_init).  A bad template, or
 * a directory the process cannot write to, disables the component, as a bad
 * value of any other setting does: the dump would be lost at shutdown, long
 * after the run.  The dump is written at PAPI_shutdown, or at exit when the
 * program never calls it.
 */
static int dump_init(void)
{
	static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;
	const char *path = getenv("MPXKIT_DUMP");
	mpxkit_diag diag = {0};
	int rc;

	dump_path[0] = '\0';
	if (path == NULL || path[0] == '\0')
		return PAPI_OK;
	if (strlen(path) >= sizeof dump_path) {
		set_disabled_reason("MPXKIT_DUMP: path longer than %zu bytes", sizeof dump_path - 1);
		return PAPI_EINVAL;
	}
	rc = mpxkit_job_dump_init(&dump_job, path, NULL, &diag);
	if (rc < 0) {
		set_disabled_reason("MPXKIT_DUMP=%s: %s", path, mpxkit_diag_message(&diag, rc));
		return PAPI_EINVAL;
	}
	snprintf(dump_path, sizeof dump_path, "%s", path);
	dump_pid = getpid();
	pthread_once(&at_exit_once, dump_register_exit);
	return PAPI_OK;
}

/* Keeps the first failure, for the one line printed at shutdown.  Caller holds dump_lock. */
static void dump_note(const char *what, const mpxkit_diag *diag, int rc)
{
	if (dump_error[0] == '\0')
		snprintf(dump_error, sizeof dump_error, "%s: %s", what,
			 mpxkit_diag_message(diag, rc));
}

static int dump_set_meta(mpxkit_pcz_writer *w, const mpxkit_control *c, mpxkit_diag *diag)
{
	char buf[64];
	int rc;

	rc = mpxkit_pcz_writer_set_meta(w, "source", "mpxkit PAPI component " MPXKIT_VERSION, diag);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "estimator", settings.estimator, diag);
	snprintf(buf, sizeof buf, "%zu", mpxkit_sched_counters(c->sched));
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "counters", buf, diag);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)settings.slice_ns);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "slice_ns", buf, diag);
	if (rc >= 0 && settings.model[0])
		rc = mpxkit_pcz_writer_set_meta(w, "model", settings.model, diag);
	if (rc >= 0 && settings.reference[0])
		rc = mpxkit_pcz_writer_set_meta(w, "reference", settings.reference, diag);
	if (rc >= 0 && settings.schedule[0])
		rc = mpxkit_pcz_writer_set_meta(w, "schedule", settings.schedule, diag);
	if (rc >= 0 && settings.replay[0])
		rc = mpxkit_pcz_writer_set_meta(w, "replay", settings.replay, diag);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "clock", "CLOCK_REALTIME ns", diag);
	snprintf(buf, sizeof buf, "%g", mpxkit_sched_level(c->sched));
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "interval_level", buf, diag);
	if (rc >= 0)
		rc = mpxkit_job_set_meta(&dump_job.job, w, diag);
	return rc;
}

/* Opens the writer, in memory until shutdown, with c's events.  Caller holds dump_lock. */
static int dump_open(const mpxkit_control *c)
{
	static const char *const suffix[3] = {"", ".lo", ".hi"};
	const char *names[3 * MPXKIT_MAX_EVENTS] = {0};
	mpxkit_pcz_options opt;
	mpxkit_diag diag = {0};
	int rc = -MPXKIT_ENOMEM;

	mpxkit_pcz_options_init(&opt);
	opt.placement = 1;
	opt.intervals = 1; /* every estimate with its interval */
	for (int i = 0; i < 3 * c->n_events; i++) {
		const char *event = native_name(c->codes[i / 3]);
		char *n = event ? malloc(strlen(event) + 13) : NULL;
		if (n == NULL)
			goto fail;
		sprintf(n, "mpxkit:::%s%s", event, suffix[i % 3]);
		names[i] = n;
	}
	rc = mpxkit_pcz_writer_open_memory(&opt, 3 * (size_t)c->n_events, names, &dump_writer,
					   &diag);
	if (rc >= 0)
		rc = dump_set_meta(dump_writer, c, &diag);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_topology(dump_writer, NULL, 0, &diag);
	if (rc >= 0) {
		memcpy(dump_codes, c->codes, sizeof dump_codes);
		dump_n_events = c->n_events;
	}
fail:
	if (rc < 0) {
		dump_note("cannot start the dump", &diag, rc);
		mpxkit_pcz_writer_abort(dump_writer);
		dump_writer = NULL;
	}
	for (int i = 0; i < 3 * c->n_events; i++)
		free((char *)names[i]);
	return rc;
}

/*
 * The writer for c's events, opened at the first stop; NULL when the dump
 * failed or c counts other events than the first event set that stopped
 * (one dump holds one event list; such stops are counted and reported).
 */
static mpxkit_pcz_writer *dump_writer_for(const mpxkit_control *c)
{
	mpxkit_pcz_writer *w = NULL;

	pthread_mutex_lock(&dump_lock);
	if (dump_writer == NULL && dump_error[0] == '\0')
		dump_open(c);
	if (dump_writer != NULL) {
		if (c->n_events == dump_n_events &&
		    memcmp(c->codes, dump_codes, (size_t)c->n_events * sizeof *c->codes) == 0)
			w = dump_writer;
		else
			dump_skipped++;
	}
	pthread_mutex_unlock(&dump_lock);
	return w;
}

/* One estimate and its interval as the dump's (value, lo, hi) triple (doc/pcz-format.md). */
static void dump_triple(uint64_t value, const mpxkit_interval *iv, uint64_t *triple)
{
	mpxkit_pcz_interval_encode(value, iv->lo, iv->hi, iv->flags & MPXKIT_INTERVAL_UNOBSERVED,
				   triple);
}

/*
 * Series callback: rotation k's estimates and their intervals, in the
 * rotation thread (mpxkit_sched_on_rotation_iv); a row holds E triples.
 */
static void dump_on_rotation(void *arg, size_t k, const double *est, const mpxkit_interval *iv)
{
	mpxkit_control *c = arg;
	size_t E = (size_t)c->n_events;

	if (k == 0) { /* a start or a reset: a new run */
		c->n_series = 0;
		c->series_lost = 0;
	}
	if (c->series_lost || k != c->n_series)
		return;
	if (c->n_series == c->cap_series) {
		size_t cap = c->cap_series ? 2 * c->cap_series : 64;
		uint64_t *v = realloc(c->series, cap * 3 * E * sizeof *v);
		uint64_t *t = v ? realloc(c->series_ns, cap * sizeof *t) : NULL;
		if (v)
			c->series = v;
		if (t)
			c->series_ns = t, c->cap_series = cap;
		if (t == NULL) {
			c->series_lost = 1;
			return;
		}
	}
	for (size_t e = 0; e < E; e++)
		dump_triple(dump_count(est[e]), &iv[e], &c->series[3 * (c->n_series * E + e)]);
	c->series_ns[c->n_series++] = now_ns();
}

static void dump_free_series(mpxkit_control *c)
{
	free(c->series);
	free(c->series_ns);
	c->series = c->series_ns = NULL;
	c->n_series = c->cap_series = 0;
	c->series_lost = 0;
}

static void dump_stage(mpxkit_pcz_writer *w, const char *region, const mpxkit_pcz_unit *u)
{
	mpxkit_diag diag = {0};
	int rc = mpxkit_pcz_writer_stage_unit(w, region, u, &diag);

	if (rc < 0) {
		pthread_mutex_lock(&dump_lock);
		dump_note("cannot keep a thread's results", &diag, rc);
		pthread_mutex_unlock(&dump_lock);
	}
}

/*
 * After a stop whose totals came from the whole-run pass (bigru;
 * mpxkit_sched_whole_series): the series gets the pass's rows in place of
 * the windowed estimates the callback had for the same rotations.  Each
 * step keeps its timestamps: when the windowed estimate arrived.
 */
static void dump_whole_series(mpxkit_control *c, const mpxkit_sched_whole *w)
{
	/* Without the pass's intervals (out of memory) [0, inf) is the one that still holds. */
	static const mpxkit_interval unknown = {0, INFINITY, INFINITY, 0, MPXKIT_INTERVAL_OPEN};
	size_t E = (size_t)c->n_events;

	if (c->series_lost || c->n_series != w->n_rotations)
		return;
	for (size_t i = 0; i < w->n_rotations * E; i++)
		dump_triple(dump_count(w->est[i]), w->iv ? &w->iv[i] : &unknown, &c->series[3 * i]);
}

/*
 * At PAPI_stop, after the rotation thread joined: stages this thread's
 * totals (region "stop.total", the values PAPI_stop returns, which PAPI read
 * just before the stop) and its per-rotation series (region "stop").
 */
static void dump_stop(mpxkit_control *c)
{
	uint64_t totals[3 * MPXKIT_MAX_EVENTS], span[2], *times = NULL;
	double est[MPXKIT_MAX_EVENTS];
	mpxkit_interval iv[MPXKIT_MAX_EVENTS];
	unsigned int cpu = 0, node = 0;
	mpxkit_pcz_unit u = {0};
	mpxkit_pcz_writer *w;
	char name[32];

	span[1] = now_ns();
	span[0] = c->run_start_ns;
	w = dump_writer_for(c);
	if (w == NULL)
		return;
	snprintf(name, sizeof name, "thread%ld", (long)syscall(SYS_gettid));
	u.name = name;
	u.cpu = u.numa = -1;
	if (getcpu(&cpu, &node) == 0)
		u.cpu = (int)cpu, u.numa = (int)node;
	/* The intervals of the values PAPI_stop returned (mpxkit_papi_interval's). */
	if (mpxkit_sched_read_iv(c->sched, est, NULL, NULL, iv) < 0) {
		pthread_mutex_lock(&dump_lock);
		if (dump_error[0] == '\0')
			snprintf(dump_error, sizeof dump_error, "no intervals at a stop");
		pthread_mutex_unlock(&dump_lock);
		return;
	}
	for (int i = 0; i < c->n_events; i++)
		dump_triple(c->values[i] < 0 ? 0 : (uint64_t)c->values[i], &iv[i], &totals[3 * i]);
	u.n_steps = 1;
	u.times = span;
	u.values = totals;
	dump_stage(w, "stop.total", &u);
	if (c->n_series == 0 || c->series_lost)
		return;
	times = malloc(2 * c->n_series * sizeof *times);
	if (times == NULL) {
		pthread_mutex_lock(&dump_lock);
		if (dump_error[0] == '\0')
			snprintf(dump_error, sizeof dump_error, "out of memory for a series");
		pthread_mutex_unlock(&dump_lock);
		return;
	}
	for (size_t k = 0; k < c->n_series; k++) {
		times[2 * k] = k == 0 ? c->run_start_ns : c->series_ns[k - 1];
		times[2 * k + 1] = c->series_ns[k];
	}
	u.n_steps = c->n_series;
	u.times = times;
	u.values = c->series;
	dump_stage(w, "stop", &u);
	free(times);
}

/*
 * At shutdown or exit, whichever comes first (the second finds nothing to
 * do): writes the dump, keeping any file another process of the run wrote
 * under its name (mpxkit_job_dump_write), or says in one stderr line why it
 * was not written whole.
 */
static void dump_close(void)
{
	char written[sizeof dump_job.path] = "";
	mpxkit_diag diag = {0};
	void *data = NULL;
	size_t len = 0;
	int rc = 0;

	pthread_mutex_lock(&dump_lock);
	if (dump_writer != NULL)
		rc = mpxkit_pcz_writer_close_memory(dump_writer, &data, &len, &diag);
	if (rc == 0 && data != NULL)
		rc = mpxkit_job_dump_write(&dump_job, data, len, written, sizeof written, &diag);
	free(data);
	if (rc < 0)
		dump_note("cannot write the dump", &diag, rc);
	if (rc == 0 && written[0] && strcmp(written, dump_job.path) != 0)
		fprintf(stderr,
			"mpxkit: MPXKIT_DUMP=%s: %s holds a dump of another process of this run; "
			"this one is %s\n",
			dump_path, dump_job.path, written);
	if (dump_path[0] && dump_error[0])
		fprintf(stderr, "mpxkit: MPXKIT_DUMP=%s: %s\n", dump_path, dump_error);
	if (dump_path[0] && dump_skipped)
		fprintf(stderr,
			"mpxkit: MPXKIT_DUMP=%s: %lu stops of event sets with other events than "
			"the first left out\n",
			dump_path, dump_skipped);
	dump_writer = NULL;
	dump_error[0] = '\0';
	dump_skipped = 0;
	dump_path[0] = '\0';
	pthread_mutex_unlock(&dump_lock);
}

/*
 * Builds the estimator once, as every event set will: a learned estimator
 * whose model does not load (MPXKIT_MODEL, or the default model) would fail
 * each of them, so the component is disabled with the reason instead.
 */
static int check_estimator(void)
{
	static const size_t slice[2] = {0, 1};
	const mpxkit_layout layout = {2, 2, slice, settings.reference[0] != '\0', 0};
	mpxkit_estimator_options opts = {settings.model[0] ? settings.model : NULL};
	mpxkit_estimator *est = NULL;
	mpxkit_diag diag = {0};
	int rc = mpxkit_estimator_new(&est, settings.estimator, &layout, &opts, &diag);

	mpxkit_estimator_free(est);
	if (rc >= 0)
		return PAPI_OK;
	if (settings.model[0])
		set_disabled_reason("MPXKIT_MODEL=%s: %s", settings.model,
				    mpxkit_diag_message(&diag, rc));
	else
		set_disabled_reason("MPXKIT_ESTIMATOR=%s: %s", settings.estimator,
				    mpxkit_diag_message(&diag, rc));
	report_setting_once();
	return rc == -MPXKIT_ENOMEM ? PAPI_ENOMEM : PAPI_EINVAL;
}

static int mpxkit_init_component(int cidx)
{
	mpxkit_source *probe = NULL;
	mpxkit_diag diag = {0};
	int rc = mpxkit_sched_config_env(&settings, &diag);

	warn_unknown_env_once();
	if (rc < 0) {
		set_disabled_reason("%s", mpxkit_diag_message(&diag, rc));
		report_setting_once();
		rc = PAPI_EINVAL;
		goto fail;
	}
	if (settings.replay[0]) {
		rc = mpxkit_trace_read(settings.replay, &replay_trace, &diag);
		if (rc < 0) {
			set_disabled_reason("MPXKIT_REPLAY: %s", mpxkit_diag_message(&diag, rc));
			report_setting_once();
			rc = PAPI_EINVAL;
			goto fail;
		}
	}
	rc = check_estimator();
	if (rc != PAPI_OK)
		goto fail;
	rc = dump_init();
	if (rc != PAPI_OK) {
		report_setting_once();
		goto fail;
	}
	rc = open_source(&probe, NULL, &diag);
	if (rc < 0) {
		set_disabled_reason("%s", mpxkit_diag_message(&diag, rc));
		rc = PAPI_ENOSUPP;
		goto fail;
	}
	rc = replay_trace ? load_replay_natives(probe) : load_catalog();
	if (rc != PAPI_OK) {
		set_disabled_reason("%s", "cannot build the native event table (out of memory)");
		goto fail;
	}
	/*
	 * One open, not one per event (the catalogue opens nothing): where the
	 * simplest event does not open, nothing does, and its line says why.
	 */
	if (replay_trace ? n_natives == 0 : mpxkit_source_add(probe, "perf::TASK-CLOCK", &diag) < 0) {
		set_disabled_reason("%s counts no event here: %s",
				    replay_trace ? "the replayed trace" : "perf_event_open",
				    mpxkit_diag_message(&diag, replay_trace ? -MPXKIT_ENOSUPP
									    : diag.code));
		rc = PAPI_ENOSUPP;
		goto fail;
	}
	_mpxkit_vector.cmp_info.default_domain = PAPI_DOM_USER;
	if (!replay_trace && (mpxkit_event_default_domain() & MPXKIT_DOM_KERNEL))
		_mpxkit_vector.cmp_info.default_domain |= PAPI_DOM_KERNEL;
	/* A reference the source cannot count would fail every event set: say so once, here. */
	if (settings.reference[0] &&
	    (rc = mpxkit_source_add(probe, settings.reference, &diag)) < 0) {
		set_disabled_reason("MPXKIT_REFERENCE=%s: %s", settings.reference,
				    mpxkit_diag_message(&diag, rc));
		report_setting_once();
		rc = PAPI_EINVAL;
		goto fail;
	}
	mpxkit_source_free(probe);
	_mpxkit_vector.cmp_info.num_native_events = replay_trace ? n_natives : n_listed;
	_mpxkit_vector.cmp_info.CmpIdx = cidx;
	_mpxkit_vector.cmp_info.initialized = 1;
	_mpxkit_vector.cmp_info.disabled = PAPI_OK;
	return PAPI_OK;

fail:
	mpxkit_source_free(probe);
	free_natives();
	mpxkit_trace_free(replay_trace);
	replay_trace = NULL;
	dump_path[0] = '\0';
	_mpxkit_vector.cmp_info.disabled = rc;
	return rc;
}

static int mpxkit_shutdown_component(void)
{
	dump_close();
	free_natives();
	mpxkit_trace_free(replay_trace);
	replay_trace = NULL;
	return PAPI_OK;
}

static int mpxkit_init_thread(hwd_context_t *ctx)
{
	memset(ctx, 0, sizeof(mpxkit_context));
	return PAPI_OK;
}

static int mpxkit_shutdown_thread(hwd_context_t *ctx)
{
	(void)ctx;
	return PAPI_OK;
}

static int mpxkit_init_control_state(hwd_control_state_t *ctl)
{
	memset(ctl, 0, sizeof(mpxkit_control));
	return PAPI_OK;
}

/* (Re)opens the event set's slots in the calling thread with its current options. */
static int open_slots(mpxkit_control *c)
{
	mpxkit_source_target target = MPXKIT_SOURCE_SELF;
	mpxkit_source *source = NULL;
	mpxkit_diag diag = {0};
	int rc;

	mpxkit_sched_free(c->sched);
	c->sched = NULL;
	if (c->n_events == 0)
		return PAPI_OK;
	target.domain = c->domain;
	target.inherit = c->inherit;
	rc = open_source(&source, &target, &diag);
	for (int i = 0; rc >= 0 && i < c->n_events; i++) {
		const char *name = native_name(c->codes[i]);
		rc = name ? mpxkit_source_add(source, name, &diag)
			  : mpxkit_fail(&diag, MPXKIT_ENOENT, "no native event of code %u",
					c->codes[i]);
	}
	if (rc >= 0)
		rc = mpxkit_sched_new(&c->sched, source, &settings, &diag);
	if (rc >= 0 && dump_path[0] &&
	    (rc = mpxkit_sched_on_rotation_iv(c->sched, dump_on_rotation, c)) < 0) {
		mpxkit_sched_free(c->sched);
		c->sched = NULL;
		source = NULL; /* the scheduler owned it */
	}
	if (rc < 0) {
		PAPIERROR("mpxkit: %s", mpxkit_diag_message(&diag, rc));
		mpxkit_source_free(source);
		c->n_events = 0;
		return papi_error(rc);
	}
	return PAPI_OK;
}

static int mpxkit_update_control_state(hwd_control_state_t *ctl, NativeInfo_t *native, int count,
				       hwd_context_t *ctx)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (count < 0 || count > MPXKIT_MAX_EVENTS)
		return PAPI_ECOUNT;
	for (int i = 0; i < count; i++) {
		native_ref r;
		if (native[i].ni_event < 0 || !native_of((unsigned)native[i].ni_event, &r))
			return PAPI_ENOEVNT;
		c->codes[i] = (unsigned int)native[i].ni_event;
		native[i].ni_position = i;
	}
	c->n_events = count;
	return open_slots(c);
}

static int mpxkit_cleanup_eventset(hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	mpxkit_sched_free(c->sched);
	c->sched = NULL;
	c->n_events = 0;
	dump_free_series(c);
	return PAPI_OK;
}

static int mpxkit_start(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (c->sched == NULL)
		return c->n_events == 0 ? PAPI_OK : PAPI_EBUG;
	if (dump_path[0])
		c->run_start_ns = now_ns();
	c->started = 1;
	return papi_error(mpxkit_sched_start(c->sched));
}

/*
 * PAPI_stop returns what its own read saw just before it called the stop
 * (papi.c: _papi_hwi_read into ESI->sw_stop, then the component's stop,
 * then a copy of sw_stop), and a PAPI_read of a stopped event set returns
 * sw_stop again.  That read is a fast one (MPXKIT_READ), but what PAPI_stop
 * returns is the stop's own totals: read exactly once the counters are off
 * (doc/component.md, "Reads"), and, with a whole-run pass, the pass's.  So
 * the stop reads them again into sw_stop through PAPI's own read, which
 * also sets c->values.  The event set is the one this thread runs on the
 * component (PAPI_start set it and PAPI_stop clears it only after the
 * component's stop).  1 when sw_stop was refreshed; 0 when the event set
 * was not found (a stop from another thread than the one that started it:
 * PAPI_stop then returns its own read, which from that thread never uses
 * rdpmc, and the windowed totals).
 */
static int refresh_stop_values(hwd_context_t *ctx, mpxkit_control *c)
{
	int cidx = _mpxkit_vector.cmp_info.CmpIdx;
	ThreadInfo_t *t = _papi_hwi_lookup_thread(0);
	EventSetInfo_t *esi;

	if (t == NULL || t->context == NULL || t->context[cidx] != ctx ||
	    t->running_eventset == NULL)
		return 0;
	esi = t->running_eventset[cidx];
	if (esi == NULL || esi->ctl_state != (hwd_control_state_t *)c || esi->sw_stop == NULL)
		return 0;
	return _papi_hwi_read(ctx, esi, esi->sw_stop) == PAPI_OK;
}

static int mpxkit_stop(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;
	mpxkit_sched_whole whole;
	int rc, refreshed = 0;

	if (c->sched == NULL)
		return PAPI_OK;
	rc = papi_error(mpxkit_sched_stop(c->sched));
	if (rc == PAPI_OK)
		refreshed = refresh_stop_values(ctx, c);
	if (rc == PAPI_OK && dump_path[0]) {
		/* The series follows the totals PAPI_stop returns: whole-run, or both windowed. */
		if (refreshed && mpxkit_sched_whole_series(c->sched, &whole) == 1)
			dump_whole_series(c, &whole);
		dump_stop(c);
	}
	return rc;
}

static int mpxkit_reset(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	if (c->sched == NULL)
		return PAPI_OK;
	if (dump_path[0])
		c->run_start_ns = now_ns();
	return papi_error(mpxkit_sched_reset(c->sched));
}

/* The estimated totals, rounded to the nearest count; in bounded time (see mpxkit/sched.h). */
static int mpxkit_read(hwd_context_t *ctx, hwd_control_state_t *ctl, long long **events, int flags)
{
	mpxkit_control *c = (mpxkit_control *)ctl;

	(void)ctx;
	(void)flags;
	if (c->sched != NULL) {
		int rc = mpxkit_sched_read(c->sched, c->estimates, NULL);
		if (rc < 0)
			return papi_error(rc);
		for (int i = 0; i < c->n_events; i++)
			c->values[i] =
			    c->estimates[i] >= 9.2e18 ? LLONG_MAX : llround(c->estimates[i]);
	}
	*events = c->values;
	return PAPI_OK;
}

/*
 * mpxkit/papi.h: the interval of one value of an event set of this
 * component, from the engine's own read (after a stop: the stop's totals,
 * which PAPI_stop returned).  The event set's index-th event is the
 * component's native position pos[0] (PAPI's map, which
 * mpxkit_update_control_state set to the order of the natives).
 * libpapi's one export of the component (hidden visibility there, and Rules.mpxkit).
 */
__attribute__((visibility("default"))) int mpxkit_papi_interval(int EventSet, int index, double *lo,
								double *hi)
{
	EventSetInfo_t *esi = _papi_hwi_lookup_EventSet(EventSet);
	double est[MPXKIT_MAX_EVENTS];
	mpxkit_interval iv[MPXKIT_MAX_EVENTS];
	mpxkit_control *c;
	int pos, rc;

	if (esi == NULL)
		return PAPI_ENOEVST;
	if (lo == NULL || hi == NULL || index < 0 || index >= esi->NumberOfEvents)
		return PAPI_EINVAL;
	if (esi->CmpIdx != _mpxkit_vector.cmp_info.CmpIdx || esi->ctl_state == NULL)
		return PAPI_ENOSUPP;
	c = (mpxkit_control *)esi->ctl_state;
	pos = esi->EventInfoArray[index].pos[0];
	if (pos < 0 || pos >= c->n_events || c->sched == NULL)
		return PAPI_EINVAL;
	if (!c->started)
		return PAPI_ENOTRUN;
	rc = mpxkit_sched_read_iv(c->sched, est, NULL, NULL, iv);
	if (rc < 0)
		return papi_error(rc);
	*lo = iv[pos].lo;
	*hi = iv[pos].hi;
	if (iv[pos].flags & MPXKIT_INTERVAL_UNOBSERVED)
		return MPXKIT_PAPI_NOT_COUNTED;
	if (iv[pos].flags & MPXKIT_INTERVAL_OPEN)
		return MPXKIT_PAPI_OPEN;
	return mpxkit_sched_layout(c->sched)->n_groups == 1 ? MPXKIT_PAPI_EXACT
							    : MPXKIT_PAPI_ESTIMATED;
}

/*
 * Domains (doc/events.md, "Modifiers"): USER, KERNEL and SUPERVISOR are the
 * u, k and h of events named without a modifier; OTHER has no perf_event
 * meaning and is ignored.  The kernel may refuse kernel mode at the reopen.
 */
static int mpxkit_set_domain(hwd_control_state_t *ctl, int domain)
{
	mpxkit_control *c = (mpxkit_control *)ctl;
	unsigned d = (domain & PAPI_DOM_USER ? MPXKIT_DOM_USER : 0) |
		     (domain & PAPI_DOM_KERNEL ? MPXKIT_DOM_KERNEL : 0) |
		     (domain & PAPI_DOM_SUPERVISOR ? MPXKIT_DOM_HV : 0);

	if (d == 0 || (domain & ~PAPI_DOM_ALL))
		return PAPI_EINVAL;
	c->domain = d;
	return open_slots(c);
}

static int mpxkit_ctl(hwd_context_t *ctx, int code, _papi_int_option_t *option)
{
	mpxkit_control *c;

	(void)ctx;
	switch (code) {
	case PAPI_DOMAIN:
		return mpxkit_set_domain(option->domain.ESI->ctl_state, option->domain.domain);
	case PAPI_GRANUL:
		return option->granularity.granularity == PAPI_GRN_THR ? PAPI_OK : PAPI_EINVAL;
	case PAPI_INHERIT:
		c = (mpxkit_control *)option->inherit.ESI->ctl_state;
		c->inherit = option->inherit.inherit != 0;
		return open_slots(c);
	default:
		return PAPI_ENOSUPP;
	}
}

/* The event entry after code (umasks skipped), or -1. */
static int next_event(unsigned code)
{
	native_ref r;

	for (unsigned i = code + 1; native_of(i, &r) && r.listed; i++)
		if (!r.umask)
			return (int)i;
	return -1;
}

/* code's next umask: the entry after an event or a umask, if it is a umask; or -1. */
static int next_umask(unsigned code)
{
	native_ref r;

	if (!native_of(code, &r) || !r.listed || !native_of(code + 1, &r) || !r.umask)
		return -1;
	return (int)code + 1;
}

static int mpxkit_ntv_enum_events(unsigned int *code, int modifier)
{
	native_ref r;
	int next;

	switch (modifier) {
	case PAPI_ENUM_FIRST:
		if (!native_of(0, &r))
			return PAPI_ENOEVNT;
		*code = 0;
		return PAPI_OK;
	case PAPI_ENUM_EVENTS:
		if (catalog == NULL) { /* replay: the trace's columns */
			if (!native_of(*code + 1, &r))
				return PAPI_ENOEVNT;
			(*code)++;
			return PAPI_OK;
		}
		if ((next = next_event(*code)) < 0)
			return PAPI_ENOEVNT;
		*code = (unsigned)next;
		return PAPI_OK;
	case PAPI_NTV_ENUM_UMASKS:
		if ((next = next_umask(*code)) < 0)
			return PAPI_ENOEVNT;
		*code = (unsigned)next;
		return PAPI_OK;
	default:
		return PAPI_EINVAL;
	}
}

/*
 * A catalogue entry named exactly name, or -1.  A libpfm4 event named
 * without its PMU is the first listed PMU's (INST_RETIRED: icl::INST_RETIRED),
 * as libpfm4's short form is, even where the event alone does not encode
 * (it needs a umask) and so is never parsed.
 */
static int listed_code(const char *name)
{
	size_t len = strlen(name);
	native_ref r;

	for (unsigned i = 0; i < n_catalog; i++)
		if (native_of(i, &r) && strcmp(r.name, name) == 0)
			return (int)i;
	if (strstr(name, "::") != NULL)
		return -1;
	for (unsigned i = 0; i < n_catalog; i++) {
		const char *sep;
		if (native_of(i, &r) && r.kind == MPXKIT_EVENT_LIBPFM &&
		    (sep = strstr(r.name, "::")) != NULL && strlen(sep + 2) == len &&
		    strcmp(sep + 2, name) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * Under perf_event any name of doc/events.md: the catalogue's entry when it
 * is one (as written, or its canonical spelling: "task-clock" is
 * perf::TASK-CLOCK), else a code of its own, made once per canonical name.
 */
static int perf_name_to_code(const char *name, unsigned int *code)
{
	mpxkit_event ev;
	int i;

	if ((i = listed_code(name)) >= 0 ||
	    (mpxkit_event_parse(name, &ev, NULL) == 0 && (i = listed_code(ev.name)) >= 0)) {
		*code = (unsigned)i;
		return PAPI_OK;
	}
	if (mpxkit_event_parse(name, &ev, NULL) < 0)
		return PAPI_ENOEVNT;
	pthread_mutex_lock(&natives_lock);
	for (i = 0; i < n_natives && strcmp(natives[i].name, ev.name) != 0; i++)
		;
	if (i == n_natives)
		i = append_native(ev.name, "", ev.unit);
	pthread_mutex_unlock(&natives_lock);
	if (i < 0)
		return PAPI_ENOMEM;
	*code = DYN_BASE + (unsigned)i;
	return PAPI_OK;
}

static int mpxkit_ntv_name_to_code(const char *name, unsigned int *code)
{
	native_ref r;

	if (catalog)
		return perf_name_to_code(name, code);
	for (unsigned i = 0; native_of(i, &r); i++) {
		if (strcasecmp(name, r.name) == 0) {
			*code = i;
			return PAPI_OK;
		}
	}
	return PAPI_ENOEVNT;
}

static int copy_out(char *dst, int len, const char *src)
{
	if (len <= 0)
		return PAPI_EINVAL;
	snprintf(dst, (size_t)len, "%s", src);
	return PAPI_OK;
}

static int mpxkit_ntv_code_to_name(unsigned int code, char *name, int len)
{
	native_ref r;

	if (!native_of(code, &r))
		return PAPI_ENOEVNT;
	return copy_out(name, len, r.name);
}

/* An entry's description; the kind of event where it has none (a tracepoint, a named raw code). */
static const char *describe(const native_ref *r, char *buf, size_t len)
{
	mpxkit_event ev;

	if (r->description[0])
		return r->description;
	if (r->kind < MPXKIT_EVENT_N_KINDS)
		snprintf(buf, len, "%s event", mpxkit_event_kind_name(r->kind));
	else if (mpxkit_event_parse(r->name, &ev, NULL) == 0)
		snprintf(buf, len, "%s event", mpxkit_event_kind_name(ev.kind));
	else
		return "";
	return buf;
}

static int mpxkit_ntv_code_to_descr(unsigned int code, char *descr, int len)
{
	native_ref r;
	char buf[64];

	if (!native_of(code, &r))
		return PAPI_ENOEVNT;
	return copy_out(descr, len, describe(&r, buf, sizeof buf));
}

static int mpxkit_ntv_code_to_info(unsigned int code, PAPI_event_info_t *info)
{
	native_ref r, event;
	unsigned up = code;
	char buf[64];

	if (!native_of(code, &r))
		return PAPI_ENOEVNT;
	copy_out(info->symbol, sizeof info->symbol, r.name);
	copy_out(info->long_descr, sizeof info->long_descr, describe(&r, buf, sizeof buf));
	/* A umask as PAPI's perf_event component describes it: "EVENT's, masks:UMASK's". */
	while (r.umask && up > 0 && native_of(--up, &event) && event.umask)
		;
	if (r.umask && up < code && native_of(up, &event) && !event.umask)
		snprintf(info->long_descr, sizeof info->long_descr, "%s, masks:%s",
			 event.description, r.description);
	copy_out(info->short_descr, sizeof info->short_descr, describe(&r, buf, sizeof buf));
	copy_out(info->units, sizeof info->units, r.unit);
	info->data_type = PAPI_DATATYPE_UINT64;
	return PAPI_OK;
}

/* clang-format off */
papi_vector_t _mpxkit_vector = {
	.cmp_info = {
		.name = "mpxkit",
		.short_name = "mpxkit",
		.description = "Software multiplexing with estimators (Linux perf_event, or a replayed trace)",
		.version = MPXKIT_VERSION,
		.num_cntrs = MPXKIT_MAX_EVENTS,
		.num_mpx_cntrs = MPXKIT_MAX_EVENTS,
		.default_domain = PAPI_DOM_USER, /* and KERNEL where allowed: init_component */
		.available_domains = PAPI_DOM_ALL,
		.default_granularity = PAPI_GRN_THR,
		.available_granularities = PAPI_GRN_THR,
		.hardware_intr_sig = PAPI_INT_SIGNAL,
	},
	.size = {
		.context = sizeof(mpxkit_context),
		.control_state = sizeof(mpxkit_control),
		.reg_value = 1,
		.reg_alloc = 1,
	},
	.init_component = mpxkit_init_component,
	.shutdown_component = mpxkit_shutdown_component,
	.init_thread = mpxkit_init_thread,
	.shutdown_thread = mpxkit_shutdown_thread,
	.init_control_state = mpxkit_init_control_state,
	.update_control_state = mpxkit_update_control_state,
	.cleanup_eventset = mpxkit_cleanup_eventset,
	.start = mpxkit_start,
	.stop = mpxkit_stop,
	.read = mpxkit_read,
	.reset = mpxkit_reset,
	.ctl = mpxkit_ctl,
	.set_domain = mpxkit_set_domain,
	.ntv_enum_events = mpxkit_ntv_enum_events,
	.ntv_name_to_code = mpxkit_ntv_name_to_code,
	.ntv_code_to_name = mpxkit_ntv_code_to_name,
	.ntv_code_to_descr = mpxkit_ntv_code_to_descr,
	.ntv_code_to_info = mpxkit_ntv_code_to_info,
};
/* clang-format on */

/* SPDX-License-Identifier: BSD-3-Clause */
/* The mlp estimator in the PAPI component: default model, MPXKIT_MODEL, bad models, perf. */
#include <stdio.h>

#include "cutest.h"

#ifndef MPXKIT_HAVE_PAPI

int main(void)
{
	printf("SKIP: PAPI with the mpxkit component was not built (configured with "
	       "--disable-papi)\n");
	return CUTEST_SKIP;
}

#else

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <papi.h>

#include "mpxkit/estimator.h"
#include "mpxkit/model.h"
#include "mpxkit/mpx.h"
#include "mpxkit/trace.h"

#include "mlp_features.h" /* MLP_FEATURE_SET: the id of the features mlp feeds its model */

#define N_EVENTS	6
#define N_STEPS		90 /* G = 3 with C = 2: 30 whole rotations */
#define C		2
#define G		3
#define CONST_Y		0.125f /* the output of the test's own model */
#define HALF		2      /* its half-window */

static char dir[64], trace_path[128], model_path[128];
static mpxkit_trace *trace;

/* What a child saw: whether mpxkit was disabled and why, else the totals PAPI_stop returned. */
typedef struct outcome {
	int rc; /* 0, or the step that failed */
	int disabled;
	char reason[PAPI_HUGE_STR_LEN];
	long long v[N_EVENTS];
	long long cpu_ns; /* the child's CPU time from PAPI_start to PAPI_stop (perf runs) */
} outcome;

/* Counts that rise and fall with a few zeros, so an event's level moves along its window. */
static int make_trace(void)
{
	const char *names[N_EVENTS] = {"ev0", "ev1", "ev2", "ev3", "ev4", "ev5"};
	uint64_t row[N_EVENTS];

	if (mpxkit_trace_new(&trace, NULL, N_EVENTS, names, NULL) < 0)
		return -1;
	srand(5);
	for (size_t s = 0; s < N_STEPS; s++) {
		for (size_t e = 0; e < N_EVENTS; e++) {
			int r = rand();
			row[e] = r % 7 == 0 ? 0 : (uint64_t)(r % 100000) * (1 + (s / 10 + e) % 4);
		}
		if (mpxkit_trace_append(trace, s, row) < 0)
			return -1;
	}
	return mpxkit_trace_write(trace, trace_path, NULL);
}

/* mlp's features with half-window HALF, all weights 0 and the output bias CONST_Y. */
static int make_model(void)
{
	mpxkit_model_shape shape = {
	    .n_layers = 2,
	    .width = {mpxkit_mlp_feature_count(HALF), 4, 1},
	    .activation = {MPXKIT_ACT_RELU, MPXKIT_ACT_IDENTITY},
	    .feature_set = MLP_FEATURE_SET,
	    .feature_param = HALF,
	};
	mpxkit_model *m = NULL;
	size_t n;
	int rc = mpxkit_model_new(&m, &shape, NULL);

	if (rc < 0)
		return rc;
	mpxkit_model_params(m, &n)[n - 1] = CONST_Y;
	rc = mpxkit_model_save(m, model_path, NULL);
	mpxkit_model_free(m);
	return rc;
}

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void burn_cpu(long long ns)
{
	long long t0 = cpu_ns();
	volatile uint64_t sink = 0;

	while (cpu_ns() - t0 < ns)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * 2654435761u;
}

/* Software events of constant rate (ns of CPU per ns), and one that hardly counts. */
static const char *const perf_events[3] = {"mpxkit:::perf::TASK-CLOCK", "mpxkit:::perf::CPU-CLOCK",
					   "mpxkit:::perf::PAGE-FAULTS"};

/* In a child: the settings are read once, at PAPI_library_init. */
static void papi_child(int replay, outcome *o)
{
	const PAPI_component_info_t *info;
	int es = PAPI_NULL, n = replay ? N_EVENTS : 3;
	char name[64];

	o->rc = 1;
	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
		return;
	info = PAPI_get_component_info(PAPI_get_component_index("mpxkit"));
	o->rc = 2;
	if (info == NULL)
		return;
	if (info->disabled) {
		o->disabled = 1;
		snprintf(o->reason, sizeof o->reason, "%s", info->disabled_reason);
		o->rc = 0;
		return;
	}
	o->rc = 3;
	if (PAPI_create_eventset(&es) != PAPI_OK)
		return;
	for (int e = 0; e < n; e++) {
		if (replay)
			snprintf(name, sizeof name, "mpxkit:::%s", trace->events[e]);
		else
			snprintf(name, sizeof name, "%s", perf_events[e]);
		if (PAPI_add_named_event(es, name) != PAPI_OK)
			return;
	}
	o->rc = 4;
	o->cpu_ns = cpu_ns();
	if (PAPI_start(es) != PAPI_OK)
		return;
	if (!replay)
		burn_cpu(200000000ll);
	if (PAPI_stop(es, o->v) != PAPI_OK)
		return;
	o->cpu_ns = cpu_ns() - o->cpu_ns;
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_shutdown();
	o->rc = 0;
}

/*
 * Runs papi_child in a child process with these settings (NULL: unset) and
 * returns what it saw.  MPXKIT_DATADIR stays as make check set it.
 */
static int run_child(const char *estimator, const char *model, const char *datadir, int replay,
		     outcome *o)
{
	int fds[2], status = -1;
	pid_t pid;
	ssize_t got;

	memset(o, 0, sizeof *o);
	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		setenv("MPXKIT_ESTIMATOR", estimator, 1);
		setenv("MPXKIT_COUNTERS", replay ? "2" : "1", 1);
		setenv("MPXKIT_SLICE_US", "2000", 1);
		unsetenv("MPXKIT_REFERENCE");
		unsetenv("MPXKIT_DUMP");
		if (replay)
			setenv("MPXKIT_REPLAY", trace_path, 1);
		else
			unsetenv("MPXKIT_REPLAY");
		if (model)
			setenv("MPXKIT_MODEL", model, 1);
		else
			unsetenv("MPXKIT_MODEL");
		if (datadir)
			setenv("MPXKIT_DATADIR", datadir, 1);
		papi_child(replay, o);
		_exit(write(fds[1], o, sizeof *o) == (ssize_t)sizeof *o ? 0 : 1);
	}
	close(fds[1]);
	got = read(fds[0], o, sizeof *o);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof *o)
		return -1;
	return o->rc;
}

/* Rotation k's observation of event e: its count in its group's slice, e / C. */
static double observation(size_t k, size_t e)
{
	return (double)trace->values[(k * G + e / C) * N_EVENTS + e];
}

/*
 * No MPXKIT_MODEL: the component loads the default model from
 * $MPXKIT_DATADIR/models/default.mpxm.  Its totals are those of that file
 * loaded here and run through mpxkit_mlp_run (the trainer's scorer, not the
 * registry), summed over the rotations in order.
 */
static void test_default_model(void)
{
	const char *datadir = getenv("MPXKIT_DATADIR");
	char path[512];
	mpxkit_mpx_config cfg = {C, NULL, NULL, 0, trace_path};
	mpxkit_mpx_run *run = NULL;
	mpxkit_model *m = NULL;
	double *out, sum[N_EVENTS] = {0}, seen[N_EVENTS] = {0};
	outcome o;

	if (datadir == NULL || datadir[0] == '\0') {
		printf(
		    "\n  MPXKIT_DATADIR unset (not run by make check): default model not checked");
		return;
	}
	snprintf(path, sizeof path, "%s/models/default.mpxm", datadir);
	CU_ASSERT_EQUAL_FATAL(mpxkit_model_load_file(&m, path, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(trace, &cfg, &run, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(run->layout.n_groups, G);
	out = calloc(run->n_rotations * N_EVENTS, sizeof *out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_mlp_run(m, &run->layout, run->n_rotations, run->obs, NULL, out, NULL), 0);
	for (size_t k = 0; k < run->n_rotations; k++)
		for (size_t e = 0; e < N_EVENTS; e++) {
			sum[e] += out[k * N_EVENTS + e];
			seen[e] += observation(k, e);
		}
	CU_ASSERT_EQUAL_FATAL(run_child("mlp", NULL, NULL, 1, &o), 0);
	CU_ASSERT_FALSE_FATAL(o.disabled);
	for (size_t e = 0; e < N_EVENTS; e++) {
		printf("\n  ev%zu: mlp %lld, offline %.1f, counted in its slices %.0f", e, o.v[e],
		       sum[e], seen[e]);
		CU_ASSERT_EQUAL(o.v[e], llround(sum[e]));
		/* Never below what the slices saw. */
		CU_ASSERT((double)o.v[e] >= seen[e] - 0.5);
	}
	printf("\n  ");
	free(out);
	mpxkit_mpx_run_free(run);
	mpxkit_model_free(m);
}

/*
 * MPXKIT_MODEL names the test's own model, whose output is CONST_Y: each
 * rotation's estimate is max(a, G (10^(O + y) - 1)), O = log10(1 + dira / G)
 * with linear-dira's dira = G a + (b - a)(G - 1) / 2 (b: the next rotation's
 * count, a in the last), computed here from the trace's rows directly.  The
 * model gets O as a float input, hence a relative tolerance of 1e-6.
 */
static void test_named_model(void)
{
	size_t K = N_STEPS / G;
	outcome o;

	CU_ASSERT_EQUAL_FATAL(run_child("mlp", model_path, NULL, 1, &o), 0);
	CU_ASSERT_FALSE_FATAL(o.disabled);
	for (size_t e = 0; e < N_EVENTS; e++) {
		double total = 0.0;
		for (size_t k = 0; k < K; k++) {
			double a = observation(k, e), b = k + 1 < K ? observation(k + 1, e) : a;
			double dira = G * a + (b - a) * (G - 1) / 2.0;
			double est = G * (pow(10.0, log10(1.0 + dira / G) + CONST_Y) - 1.0);
			total += est > a ? est : a;
		}
		printf("\n  ev%zu: mlp %lld, closed form %.2f", e, o.v[e], total);
		CU_ASSERT(fabs((double)o.v[e] - total) <= 0.5 + 1e-6 * total);
	}
	printf("\n  ");
}

/* bigru's window (estimators/bigru.c, doc/estimators.md "bigru"): look-back and look-ahead. */
#define BIGRU_LOOKBACK	11
#define BIGRU_LOOKAHEAD 4

/*
 * bigru with its default model ($MPXKIT_DATADIR/models/bigru.mpxm): the
 * component's totals are the sums of mpxkit_bigru_run's row k over the
 * stretch k - 11 .. k + 4 of the run (the window, not through the registry),
 * so the engine runs it online, flush at PAPI_stop included.  The test's own
 * model, an mlp one, is refused as not recurrent.
 */
static void test_bigru(void)
{
	const char *datadir = getenv("MPXKIT_DATADIR");
	char path[512];
	mpxkit_mpx_config cfg = {C, NULL, NULL, 0, trace_path};
	mpxkit_mpx_run *run = NULL;
	mpxkit_model *m = NULL;
	double *out, sum[N_EVENTS] = {0};
	outcome o;

	if (datadir == NULL || datadir[0] == '\0') {
		printf("\n  MPXKIT_DATADIR unset (not run by make check): bigru not checked");
		return;
	}
	snprintf(path, sizeof path, "%s/models/bigru.mpxm", datadir);
	CU_ASSERT_EQUAL_FATAL(mpxkit_model_load_file(&m, path, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(trace, &cfg, &run, NULL), 0);
	out = calloc(run->n_rotations * N_EVENTS, sizeof *out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	for (size_t k = 0, n = run->n_rotations; k < n; k++) {
		size_t lo = k < BIGRU_LOOKBACK ? 0 : k - BIGRU_LOOKBACK;
		size_t hi = n - 1 - k < BIGRU_LOOKAHEAD ? n - 1 : k + BIGRU_LOOKAHEAD;
		CU_ASSERT_EQUAL_FATAL(mpxkit_bigru_run(m, &run->layout, hi - lo + 1,
						       run->obs + lo * N_EVENTS, NULL, out, NULL),
				      0);
		for (size_t e = 0; e < N_EVENTS; e++)
			sum[e] += out[(k - lo) * N_EVENTS + e];
	}
	CU_ASSERT_EQUAL_FATAL(run_child("bigru", NULL, NULL, 1, &o), 0);
	CU_ASSERT_FALSE_FATAL(o.disabled);
	for (size_t e = 0; e < N_EVENTS; e++) {
		printf("\n  ev%zu: bigru %lld, offline %.1f", e, o.v[e], sum[e]);
		CU_ASSERT_EQUAL(o.v[e], llround(sum[e]));
	}
	CU_ASSERT_EQUAL_FATAL(run_child("bigru", model_path, NULL, 1, &o), 0);
	CU_ASSERT(o.disabled);
	printf("\n  %s\n  ", o.reason);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.reason, "estimator bigru: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.reason, "not a recurrent model"));
	free(out);
	mpxkit_mpx_run_free(run);
	mpxkit_model_free(m);
}

/* A model that does not load disables the component with one reason naming the setting. */
static void test_bad_models(void)
{
	outcome o;

	CU_ASSERT_EQUAL_FATAL(run_child("mlp", "/nonexistent/model.mpxm", NULL, 1, &o), 0);
	CU_ASSERT(o.disabled);
	printf("\n  %s", o.reason);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.reason, "MPXKIT_MODEL=/nonexistent/model.mpxm: estimator "
						"mlp: /nonexistent/model.mpxm: cannot open model"));
	CU_ASSERT_EQUAL_FATAL(run_child("mlp", trace_path, NULL, 1, &o), 0);
	CU_ASSERT(o.disabled);
	printf("\n  %s", o.reason);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.reason, "wrong magic"));
	CU_ASSERT_EQUAL_FATAL(run_child("mlp", NULL, "/nonexistent-datadir", 1, &o), 0);
	CU_ASSERT(o.disabled);
	printf("\n  %s", o.reason);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(o.reason, "MPXKIT_ESTIMATOR=mlp: estimator mlp: /nonexistent-datadir/models/"
			     "default.mpxm: cannot open model"));
	/* Only a learned estimator reads the model. */
	CU_ASSERT_EQUAL_FATAL(run_child("fixed", "/nonexistent/model.mpxm", NULL, 1, &o), 0);
	CU_ASSERT_FALSE(o.disabled);
	printf("\n  ");
}

/*
 * Real software counters, three events on one counter (G = 3), 2 ms slices,
 * 200 ms of CPU: task-clock counts the child's CPU time at a constant rate,
 * so every estimator should come close to it.  mlp with the default model and
 * fixed run one after the other (one estimator per process); each must be
 * within 25 % of its own CPU time, as in test_component_threads.  The bound
 * every estimator keeps, est >= what the slices counted (about a third of the
 * CPU time here), follows from the lower end.
 */
static void test_real_counters(void)
{
	const char *datadir = getenv("MPXKIT_DATADIR");
	outcome mlp, fixed;

	if (datadir == NULL || datadir[0] == '\0') {
		printf("\n  MPXKIT_DATADIR unset (not run by make check): not run");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(run_child("mlp", NULL, NULL, 0, &mlp), 0);
	if (mlp.disabled) {
		printf("\n  mpxkit disabled here: %s", mlp.reason);
		CU_ASSERT_PTR_NULL(strstr(mlp.reason, "MPXKIT_"));
		return;
	}
	CU_ASSERT_EQUAL_FATAL(run_child("fixed", NULL, NULL, 0, &fixed), 0);
	printf("\n  mlp:   task-clock %lld ns, cpu-clock %lld ns, cpu %lld ns (%.3f)", mlp.v[0],
	       mlp.v[1], mlp.cpu_ns, (double)mlp.v[0] / (double)mlp.cpu_ns);
	printf("\n  fixed: task-clock %lld ns, cpu-clock %lld ns, cpu %lld ns (%.3f)", fixed.v[0],
	       fixed.v[1], fixed.cpu_ns, (double)fixed.v[0] / (double)fixed.cpu_ns);
	printf("\n  ");
	if (cutest_under_valgrind()) {
		printf("(under valgrind: accuracy not checked)\n  ");
		return;
	}
	for (int e = 0; e < 2; e++) {
		CU_ASSERT(mlp.v[e] > 0.75 * (double)mlp.cpu_ns);
		CU_ASSERT(mlp.v[e] < 1.25 * (double)mlp.cpu_ns);
		CU_ASSERT(fixed.v[e] > 0.75 * (double)fixed.cpu_ns);
		CU_ASSERT(fixed.v[e] < 1.25 * (double)fixed.cpu_ns);
	}
}

static const cutest_case mlp_cases[] = {
    {"default model: PAPI replay = mpxkit_mlp_run", test_default_model},
    {"MPXKIT_MODEL: closed form of a constant model", test_named_model},
    {"bad or missing models disable the component", test_bad_models},
    {"bigru: PAPI replay = mpxkit_bigru_run on each window", test_bigru},
    {"real counters: mlp and fixed near the CPU time", test_real_counters},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"mpxkit component, mlp", mlp_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	int rc = 1;

	snprintf(dir, sizeof dir, "/tmp/test_component_mlp.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "test_component_mlp: cannot make a directory under /tmp\n");
		return 1;
	}
	snprintf(trace_path, sizeof trace_path, "%s/replay.csv", dir);
	snprintf(model_path, sizeof model_path, "%s/const.mpxm", dir);
	if (make_trace() < 0 || make_model() < 0)
		fprintf(stderr, "test_component_mlp: cannot write the trace or the model\n");
	else
		rc = cutest_run("test_component_mlp", suites);
	unlink(trace_path);
	unlink(model_path);
	rmdir(dir);
	mpxkit_trace_free(trace);
	return rc;
}

#endif

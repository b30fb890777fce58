/* SPDX-License-Identifier: BSD-3-Clause */
/* predict on a machine: core kinds, cpufreq and powercap read from a fake sysfs tree, record and
 * --live through the engine's replay source (no PMU, no cpufreq, no RAPL needed). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/predict.h"
#include "mpxkit/trace.h"

#define CLOSE(a, b, tol) CU_ASSERT(fabs((a) - (double)(b)) <= (tol) * (1 + fabs((double)(b))))

static int cpus[2], n_cpus; /* CPUs this test may run on: the fake tree's */
static char root[512];

static void put(const char *rel, const char *text)
{
	char path[1024], *slash;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	/* every directory on the way */
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
}

static char *get(const char *rel)
{
	static char buf[256];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/*
 * A machine of up to two CPUs as hwloc and the kernel show it: the CPUs this process may run on,
 * renumbered nowhere (pinning uses the real numbers), one kind each by cpu_capacity, cpufreq
 * offering 800 and 1600 MHz, and one RAPL package with a core subzone.
 */
static void fake_tree(int with_cpufreq, int with_powercap)
{
	char rel[1024], val[64], list[64] = "";

	for (int i = 0; i < n_cpus; i++) {
		int c = cpus[i];
		snprintf(val, sizeof val, "%s%d", i ? "," : "", c);
		strcat(list, val);
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpu_capacity", c);
		put(rel, i ? "1024\n" : "430\n");
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/online", c);
		put(rel, "1\n");
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_id", c);
		snprintf(val, sizeof val, "%d\n", c);
		put(rel, val);
		snprintf(rel, sizeof rel,
			 "sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		put(rel, "0\n");
		snprintf(val, sizeof val, "%x\n", 1u << c);
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/thread_siblings",
			 c);
		put(rel, val);
		snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_siblings", c);
		put(rel, val);
		if (with_cpufreq) {
			static const char *const files[][2] = {
			    {"scaling_available_frequencies", "1600000 800000 \n"},
			    {"scaling_min_freq", "800000\n"},
			    {"scaling_max_freq", "1600000\n"},
			    {"scaling_cur_freq", "1200000\n"},
			    {"cpuinfo_min_freq", "800000\n"},
			    {"cpuinfo_max_freq", "1600000\n"},
			};
			for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
				snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/%s",
					 c, files[k][0]);
				put(rel, files[k][1]);
			}
		}
		put("sys/bus/cpu/devices/.keep", "");
		snprintf(rel, sizeof rel, "%s/sys/bus/cpu/devices/cpu%d", root, c);
		snprintf(val, sizeof val, "../../../devices/system/cpu/cpu%d", c);
		if (symlink(val, rel) < 0)
			CU_FAIL_FATAL("symlink");
	}
	strcat(list, "\n");
	put("sys/devices/system/cpu/online", list);
	put("sys/devices/system/cpu/possible", list);
	put("sys/devices/system/cpu/present", list);
	if (with_powercap) {
		put("sys/class/powercap/intel-rapl:0/name", "package-0\n");
		put("sys/class/powercap/intel-rapl:0/energy_uj", "123456\n");
		put("sys/class/powercap/intel-rapl:0/max_energy_range_uj", "1000000\n");
		put("sys/class/powercap/intel-rapl:0:0/name", "core\n");
		put("sys/class/powercap/intel-rapl:0:0/energy_uj", "5\n");
	}
}

/* A new empty tree for each case; hwloc reads it through HWLOC_FSROOT as the CLI sets it. */
static void new_root(const char *tag)
{
	snprintf(root, sizeof root, "%s", cutest_scratch_path(tag));
	mkdir(root, 0755);
	setenv("HWLOC_FSROOT", root, 1);
}

static void test_probe(void)
{
	mpxkit_platform p;

	new_root("full");
	fake_tree(1, 1);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	CU_ASSERT_STRING_EQUAL(p.missing, "");
	CU_ASSERT_EQUAL_FATAL(p.n_kinds, (size_t)n_cpus);
	for (size_t k = 0; k < p.n_kinds; k++) {
		CU_ASSERT_EQUAL(p.kinds[k].n_cpus, 1);
		CU_ASSERT_EQUAL(p.kinds[k].cpus[0], cpus[k]);
		CU_ASSERT_EQUAL(p.kinds[k].n_freqs, 2);
		CU_ASSERT_EQUAL(p.kinds[k].freq_mhz[0], 800);
		CU_ASSERT_EQUAL(p.kinds[k].freq_mhz[1], 1600);
	}
	if (n_cpus == 2) { /* hwloc ranks the smaller capacity first */
		CU_ASSERT_STRING_EQUAL(p.kinds[0].name, "kind0");
		CU_ASSERT_STRING_EQUAL(p.kinds[1].name, "kind1");
	}
	CU_ASSERT_EQUAL(p.n_zones, 1); /* the subzone is inside the package */
	CU_ASSERT_STRING_EQUAL(p.zones[0].name, "package-0");
	CU_ASSERT_EQUAL(p.zones[0].max_uj, 1000000);
}

static void test_missing(void)
{
	mpxkit_platform p;
	char want[600];

	new_root("nofreq");
	fake_tree(0, 1);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	snprintf(want, sizeof want,
		 "no cpufreq: %s/sys/devices/system/cpu/cpu%d/cpufreq is missing", root, cpus[0]);
	CU_ASSERT_STRING_EQUAL(p.missing, want);
	new_root("nopower");
	fake_tree(1, 0);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	snprintf(want, sizeof want,
		 "no energy counter: %s/sys/class/powercap has no zone with energy_uj", root);
	CU_ASSERT_STRING_EQUAL(p.missing, want);
}

static void test_freq_and_energy(void)
{
	mpxkit_platform p;
	mpxkit_freq_saved *saved = NULL;
	double before[1] = {900}, after[1] = {100}, uj[1];
	char rel[128];

	new_root("freq");
	fake_tree(1, 1);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_platform_set_freq(&p, 0, 800, &saved, NULL) == 0);
	snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", cpus[0]);
	CU_ASSERT_STRING_EQUAL(get(rel), "800000");
	snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_min_freq", cpus[0]);
	CU_ASSERT_STRING_EQUAL(get(rel), "800000");
	CU_ASSERT(mpxkit_platform_restore(saved, NULL) == 0);
	CU_ASSERT_STRING_EQUAL(get(rel), "800000");
	snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", cpus[0]);
	CU_ASSERT_STRING_EQUAL(get(rel), "1600000");
	CU_ASSERT(mpxkit_platform_energy(&p, uj, NULL) == 0);
	CU_ASSERT_EQUAL(uj[0], 123456);
	/* 900 -> 100 on a counter that wraps at 1e6 uj: 999200 uj */
	CLOSE(mpxkit_platform_energy_delta(&p, before, after), 0.9992, 1e-12);
}

/* ---- record and live through the replay source ---------------------------------------------- */

static const char *const trace_events[] = {"CYC", "INS", "MISS"};
enum { STEPS = 10 };

static uint64_t trace_value(size_t step, size_t e)
{
	return (uint64_t)(1000000 * (e + 1) + 1000 * step * (e + 2) + 7 * e);
}

static const char *write_trace(void)
{
	const char *path = cutest_scratch_path("replay.csv");
	mpxkit_trace *t = NULL;

	CU_ASSERT_FATAL(mpxkit_trace_new(&t, "step", 3, trace_events, NULL) == 0);
	for (size_t s = 0; s < STEPS; s++) {
		uint64_t row[3];
		for (size_t e = 0; e < 3; e++)
			row[e] = trace_value(s, e);
		CU_ASSERT_FATAL(mpxkit_trace_append(t, s, row) == 0);
	}
	CU_ASSERT_FATAL(mpxkit_trace_write(t, path, NULL) == 0);
	mpxkit_trace_free(t);
	return path;
}

static void test_record(void)
{
	mpxkit_platform p;
	mpxkit_record_options o = {.runs = 2, .workload = "true"};
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};
	char *const argv[] = {"true", NULL};
	char rel[128];
	int rc;

	new_root("record");
	fake_tree(1, 1);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	mpxkit_sched_config_default(&o.sched);
	CU_ASSERT_FATAL(mpxkit_sched_config_set(&o.sched, "MPXKIT_REPLAY", write_trace(), NULL) ==
			0);
	o.platform = &p;
	o.events = trace_events;
	o.n_events = 3;
	o.roles[MPXKIT_ROLE_CYCLES] = "CYC";
	o.roles[MPXKIT_ROLE_INSTRUCTIONS] = "INS";
	o.roles[MPXKIT_ROLE_MISSES] = "MISS";
	rc = mpxkit_predict_record(&o, argv, &d, &diag);
	if (rc < 0)
		fprintf(stderr, "record: %s\n", diag.msg);
	CU_ASSERT_FATAL(rc == 0);
	CU_ASSERT_EQUAL(d->n_rows, (size_t)n_cpus * 2 * 2);
	CU_ASSERT_EQUAL(d->role[MPXKIT_ROLE_MISSES], 2);
	for (size_t i = 0; i < d->n_rows; i++) {
		/* one group of 3 events on 4 counters: the counts are the trace's totals */
		for (size_t e = 0; e < 3; e++) {
			double sum = 0;
			for (size_t s = 0; s < STEPS; s++)
				sum += (double)trace_value(s, e);
			CU_ASSERT_EQUAL(d->values[i * 3 + e], sum);
		}
		CU_ASSERT(d->rows[i].time_s > 0);
		CU_ASSERT_EQUAL(d->rows[i].power_w, 0); /* the fake counter never moves */
		CU_ASSERT_EQUAL(d->rows[i].run, i % 2);
		CU_ASSERT_EQUAL(d->rows[i].freq_mhz, (i / 2) % 2 ? 1600 : 800);
	}
	/* and cpufreq is as it was */
	snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_min_freq", cpus[0]);
	CU_ASSERT_STRING_EQUAL(get(rel), "800000");
	snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", cpus[0]);
	CU_ASSERT_STRING_EQUAL(get(rel), "1600000");
	mpxkit_pdata_free(d);
	/* A failing command is an error, and the frequencies are restored all the same. */
	{
		char *const fail[] = {"false", NULL};
		CU_ASSERT(mpxkit_predict_record(&o, fail, &d, &diag) == -MPXKIT_EINVAL);
		CU_ASSERT_STRING_EQUAL(diag.msg, "'false' exited with status 1");
		CU_ASSERT_STRING_EQUAL(get(rel), "1600000");
	}
	/* Without powercap it names the missing piece. */
	new_root("record-nopower");
	fake_tree(1, 0);
	CU_ASSERT_FATAL(mpxkit_platform_probe(&p, root, NULL) == 0);
	CU_ASSERT(mpxkit_predict_record(&o, argv, &d, &diag) == -MPXKIT_ENOSUPP);
	CU_ASSERT(strncmp(diag.msg, "no energy counter: ", 19) == 0);
}

/* A model over CYC, INS, MISS: two frequencies of one core kind, exact data. */
static mpxkit_pmodel *small_model(void)
{
	mpxkit_pdata *d = NULL;
	mpxkit_pmodel *m = NULL;
	mpxkit_pmodel_options o;
	static const char *const pe[] = {"cycles", "instructions"};

	CU_ASSERT_FATAL(mpxkit_pdata_new(&d, "small", MPXKIT_TIME_ELAPSED, trace_events, 3, NULL) ==
			0);
	for (int r = 0; r < 3; r++)
		d->role[r] = r;
	for (int w = 0; w < 6; w++)
		for (int k = 0; k < 2; k++) {
			double f = k ? 2.0 : 1.0, n = 1e9, mpi = 0.001 * (w + 1), cpi;
			double v[3];
			mpxkit_pdata_row row = {
			    .freq_mhz = 1000 * f, .threads = 1, .sample = -1, .voltage_v = NAN};
			char name[8];
			cpi = 1 + 0.1 * w + mpi * 30 * f;
			v[0] = cpi * n;
			v[1] = n;
			v[2] = mpi * n;
			row.time_s = cpi / f * n * 1e-9;
			row.power_w = 0.2 + 0.3 * f * v[0] / row.time_s * 1e-9;
			snprintf(name, sizeof name, "w%d", w);
			CU_ASSERT_FATAL(mpxkit_pdata_append(d, name, "big", &row, v, NULL) == 0);
		}
	mpxkit_pmodel_options_default(&o);
	o.met_form = MPXKIT_MET_LINEAR;
	o.power_form = MPXKIT_POWER_PER_FREQ;
	o.power_events = pe;
	o.n_power_events = 2;
	CU_ASSERT_FATAL(mpxkit_pmodel_train((const mpxkit_pdata *const[]){d}, 1, &o, NULL, NULL, &m,
					    NULL) == 0);
	mpxkit_pdata_free(d);
	return m;
}

typedef struct periods {
	size_t n;
	double t0[8], t1[8];
	mpxkit_prediction pred[8][2];
} periods;

static void on_period(void *arg, size_t period, double t0, double t1, const mpxkit_prediction *pred,
		      size_t n)
{
	periods *p = arg;

	CU_ASSERT_EQUAL(period, p->n);
	CU_ASSERT_EQUAL(n, 2);
	if (p->n < 8 && n == 2) {
		p->t0[p->n] = t0;
		p->t1[p->n] = t1;
		memcpy(p->pred[p->n], pred, 2 * sizeof *pred);
	}
	p->n++;
}

/* Periods of 3 rotations of one 10 ms slice: 3 + 3 + 3 + 1 steps, each predicted as a row is. */
static void test_live(void)
{
	mpxkit_pmodel *m = small_model();
	mpxkit_live_options o = {.model = m,
				 .core = "big",
				 .freq_mhz = 1000,
				 .period_ns = 30000000,
				 .on_period = on_period};
	periods got = {0};
	mpxkit_diag diag = {0};
	char *const argv[] = {"true", NULL};
	int status = -1, rc;
	static const size_t start[] = {0, 3, 6, 9, 10};

	mpxkit_sched_config_default(&o.sched);
	CU_ASSERT_FATAL(mpxkit_sched_config_set(&o.sched, "MPXKIT_REPLAY", write_trace(), NULL) ==
			0);
	/* The periods below are worked out for 10 ms slices, one replayed step each. */
	CU_ASSERT_FATAL(mpxkit_sched_config_set(&o.sched, "MPXKIT_SLICE_US", "10000", NULL) == 0);
	o.arg = &got;
	rc = mpxkit_predict_live(&o, argv, &status, &diag);
	if (rc < 0)
		fprintf(stderr, "live: %s\n", diag.msg);
	CU_ASSERT_FATAL(rc == 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL_FATAL(got.n, 4);
	for (size_t k = 0; k < 4; k++) {
		double v[3] = {0}, len = 0.01 * (double)(start[k + 1] - start[k]);
		mpxkit_pbinding b;
		mpxkit_prediction want[2];
		for (size_t s = start[k]; s < start[k + 1]; s++)
			for (size_t e = 0; e < 3; e++)
				v[e] += (double)trace_value(s, e);
		mpxkit_pobs ob = {.core = 0,
				  .freq_mhz = 1000,
				  .threads = 1,
				  .time_s = len,
				  .time_kind = MPXKIT_TIME_ELAPSED,
				  .power_w = NAN,
				  .values = v};
		CU_ASSERT_FATAL(mpxkit_pbinding_events(m, trace_events, 3, &b, NULL) == 0);
		CU_ASSERT_FATAL(mpxkit_predict(m, &b, &ob, want, NULL) == 0);
		CLOSE(got.t0[k], 0.01 * (double)start[k], 1e-12);
		CLOSE(got.t1[k], 0.01 * (double)start[k + 1], 1e-12);
		for (int c = 0; c < 2; c++) {
			CLOSE(got.pred[k][c].time_s, want[c].time_s, 1e-12);
			CLOSE(got.pred[k][c].power_w, want[c].power_w, 1e-12);
			CLOSE(got.pred[k][c].cpi, want[c].cpi, 1e-12);
		}
	}
	mpxkit_pmodel_free(m);
}

static int setup(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n_cpus < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n_cpus++] = c;
	return n_cpus ? cutest_scratch_make("predict-machine") : -1;
}

static const cutest_case machine_cases[] = {
    {"probe a fake tree", test_probe},
    {"missing pieces named", test_missing},
    {"frequencies pinned and restored, energy with wrap", test_freq_and_energy},
    {"record through the replay source", test_record},
    {"live periods through the replay source", test_live},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"machine", machine_cases, setup, cutest_scratch_remove},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_predict_machine", suites);
}

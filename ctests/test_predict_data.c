/* SPDX-License-Identifier: BSD-3-Clause */
/* predict datasets: the CSV reader and writer, its errors, and the importers on small files
 * shaped like the public GemStone and Nikov layouts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/predict.h"

#define CLOSE(a, b, tol) CU_ASSERT(fabs((a) - (double)(b)) <= (tol) * (1 + fabs((double)(b))))

static const char good[] =
    "# mpxkit-predict=1\n"
    "# dataset=tiny\n"
    "# time=elapsed\n"
    "# role.cycles=CYC\n"
    "# role.instructions=INS\n"
    "# source=hand-written\n"
    "workload,core,freq_mhz,threads,run,sample,time_s,power_w,voltage_v,CYC,INS\n"
    "a,big,1000,1,0,,2.5,1.25,0.9,2e9,1.5e9\n"
    "a,big,2000,1,0,,1.5,3,1.1,2.2e9,1.5e9\n"
    "b x,little,500,2,3,7,,,,100,\n";

static mpxkit_pdata *parse(const char *text, mpxkit_diag *diag)
{
	mpxkit_pdata *d = NULL;

	if (mpxkit_pdata_parse("t.csv", text, strlen(text), &d, diag) < 0)
		return NULL;
	return d;
}

static void test_read(void)
{
	mpxkit_pdata *d = parse(good, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_STRING_EQUAL(d->name, "tiny");
	CU_ASSERT_EQUAL(d->time_kind, MPXKIT_TIME_ELAPSED);
	CU_ASSERT_EQUAL(d->n_rows, 3);
	CU_ASSERT_EQUAL(d->n_events, 2);
	CU_ASSERT_EQUAL(d->n_workloads, 2);
	CU_ASSERT_EQUAL(d->n_cores, 2);
	CU_ASSERT_EQUAL(d->role[MPXKIT_ROLE_CYCLES], 0);
	CU_ASSERT_EQUAL(d->role[MPXKIT_ROLE_INSTRUCTIONS], 1);
	CU_ASSERT_EQUAL(d->role[MPXKIT_ROLE_MISSES], -1);
	CU_ASSERT_STRING_EQUAL(mpxkit_pdata_get_meta(d, "source"), "hand-written");
	CU_ASSERT_EQUAL(d->rows[1].freq_mhz, 2000);
	CU_ASSERT_EQUAL(d->rows[1].sample, -1);
	CU_ASSERT_EQUAL(d->values[1 * 2 + 0], 2.2e9);
	CU_ASSERT_STRING_EQUAL(d->workloads[d->rows[2].workload], "b x");
	CU_ASSERT_STRING_EQUAL(d->cores[d->rows[2].core], "little");
	CU_ASSERT_EQUAL(d->rows[2].threads, 2);
	CU_ASSERT_EQUAL(d->rows[2].run, 3);
	CU_ASSERT_EQUAL(d->rows[2].sample, 7);
	CU_ASSERT(isnan(d->rows[2].time_s) && isnan(d->rows[2].power_w) &&
		  isnan(d->rows[2].voltage_v));
	CU_ASSERT(isnan(d->values[2 * 2 + 1]));
	mpxkit_pdata_free(d);
}

/* The writer's text reads back to the same dataset, and formats the same again. */
static void test_round_trip(void)
{
	mpxkit_pdata *d = parse(good, NULL), *e;
	char *a = NULL, *b = NULL;
	size_t la, lb;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_FATAL(mpxkit_pdata_format(d, &a, &la, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_parse("again", a, la, &e, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_format(e, &b, &lb, NULL) == 0);
	CU_ASSERT(la == lb && memcmp(a, b, la) == 0);
	CU_ASSERT_EQUAL(e->n_rows, d->n_rows);
	for (size_t i = 0; i < d->n_rows * d->n_events; i++)
		CU_ASSERT(d->values[i] == e->values[i] ||
			  (isnan(d->values[i]) && isnan(e->values[i])));
	/* 1/3 and 2e9+1 survive the text exactly. */
	d->values[0] = 1.0 / 3;
	d->values[1] = 2e9 + 1;
	free(a);
	mpxkit_pdata_free(e);
	CU_ASSERT_FATAL(mpxkit_pdata_format(d, &a, &la, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_parse("again", a, la, &e, NULL) == 0);
	CU_ASSERT(e->values[0] == 1.0 / 3 && e->values[1] == 2e9 + 1);
	free(a);
	free(b);
	mpxkit_pdata_free(d);
	mpxkit_pdata_free(e);
}

/* Each bad input: one line naming the file, the line and the reason; no dataset. */
static void test_errors(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
	    {"", "t.csv: empty file"},
	    {"workload,core\n", "t.csv:1: not a predict dataset"},
	    {"# mpxkit-predict=2\n", "t.csv:1: predict dataset version '2'"},
	    {"# mpxkit-predict=1\n", "t.csv: no header: only metadata lines"},
	    {"# mpxkit-predict=1\n# time=later\n", "t.csv:2: time=later: expected"},
	    {"# mpxkit-predict=1\n# role.speed=X\n", "t.csv:2: role.speed: no such role"},
	    {"# mpxkit-predict=1\n# role.cycles=X\nworkload,core,freq_mhz,threads,run,sample,"
	     "time_s,power_w,voltage_v,Y\n",
	     "t.csv:2: role.cycles=X: no event column 'X'"},
	    {"# mpxkit-predict=1\n# a=1\n# a=2\n", "t.csv:3: duplicate metadata key 'a'"},
	    {"# mpxkit-predict=1\n# nonsense\n", "t.csv:2: bad metadata line"},
	    {"# mpxkit-predict=1\nworkload,core,freq\n", "t.csv:2: header: expected"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v,E,E\n",
	     "t.csv:2: duplicate event name 'E'"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v,a b\n",
	     "t.csv:2: header column 10: event name"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\n",
	     "t.csv: no rows"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,1000,1,0,,1,1\n",
	     "t.csv:3: 8 fields, the header has 9"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,0,1,0,,1,1,1\n",
	     "t.csv:3: column freq_mhz: '0' is not a number > 0"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,inf,1,0,,1,1,1\n",
	     "t.csv:3: column freq_mhz: 'inf'"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,1000,0,0,,1,1,1\n",
	     "t.csv:3: column threads: '0' is not a whole number >= 1"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,1000,1,-1,,1,1,1\n",
	     "t.csv:3: column run"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v,E\nw,c,1000,1,0,,1,1,1,-5\n",
	     "t.csv:3: column E: '-5' is not empty or a count >= 0"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\n,c,1000,1,0,,1,1,1\n",
	     "t.csv:3: column workload"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,1000,1,0,,1,1,1\n\n",
	     "t.csv:4: blank line"},
	    {"# mpxkit-predict=1\nworkload,core,freq_mhz,threads,run,sample,time_s,power_w,"
	     "voltage_v\nw,c,1000,1,0,,0x10,1,1\n",
	     "t.csv:3: column time_s: '0x10'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		mpxkit_diag diag = {0};
		mpxkit_pdata *d = parse(cases[i].text, &diag);
		CU_ASSERT_PTR_NULL(d);
		if (strncmp(diag.msg, cases[i].why, strlen(cases[i].why)) != 0) {
			fprintf(stderr, "case %zu: got '%s', want '%s...'\n", i, diag.msg,
				cases[i].why);
			CU_FAIL("wrong message");
		}
		CU_ASSERT(strchr(diag.msg, '\n') == NULL);
		mpxkit_pdata_free(d);
	}
}

/* A NUL byte in the middle is refused by the bounded reader at its line. */
static void test_nul(void)
{
	static const char text[] = "# mpxkit-predict=1\nwork\0load\n";
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT(mpxkit_pdata_parse("t.csv", text, sizeof text - 1, &d, &diag) < 0);
	CU_ASSERT(strstr(diag.msg, "t.csv:2") != NULL && strstr(diag.msg, "NUL") != NULL);
}

/* ---- importers
 * ----------------------------------------------------------------------------------- */

/* A GemStone powmon table: the pandas index, status, cores 4-7 with the six events. */
static void gemstone_text(char **buf, size_t *len)
{
	static const char *const ev[] = {"CycleCount", "Event 0x1b", "Event 0x50", "Event 0x6a",
					 "Event 0x73", "Event 0x14", "Event 0x19"};
	FILE *f = open_memstream(buf, len);

	fputs("\tWorkload Name\tCore Mask\tFrequency A15\tWorkload Duration\tSamples Averaged\t"
	      "Status\tVoltage A15\tPower A15",
	      f);
	for (int c = 4; c < 8; c++)
		for (int e = 0; e < 7; e++)
			fprintf(f, "\tCore %d %s", c, ev[e]);
	fputc('\n', f);
	/* row r, core c, event e holds 1000 r + 10 c + e */
	for (int r = 0; r < 2; r++) {
		fprintf(f, "%d\t%s\t%s\t%d\t30.0\t150\t\t%.3f\t%.3f", r, r ? "fft" : "qsort",
			r ? "4,5,6,7:4,5,6,7" : "4,5,6,7", 600 + 400 * r, 0.9 + 0.1 * r, 0.5 + r);
		for (int c = 4; c < 8; c++)
			for (int e = 0; e < 7; e++)
				fprintf(f, "\t%d", 1000 * r + 10 * c + e);
		fputc('\n', f);
	}
	fclose(f);
}

static void test_gemstone(void)
{
	char *text = NULL;
	size_t text_len = 0;
	const char *names[] = {"asrtpm-A15.csv"};
	const char *texts[1];
	size_t lens[1];
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};

	gemstone_text(&text, &text_len);
	texts[0] = text;
	lens[0] = text_len;
	CU_ASSERT_FATAL(
	    mpxkit_pdata_import_buffers("gemstone", names, texts, lens, 1, NULL, &d, &diag) == 0);
	CU_ASSERT_STRING_EQUAL(d->name, "asrtpm-A15");
	CU_ASSERT_EQUAL(d->time_kind, MPXKIT_TIME_WINDOW);
	CU_ASSERT_EQUAL(d->n_rows, 2);
	CU_ASSERT_EQUAL(d->n_events, 7);
	CU_ASSERT_STRING_EQUAL(d->events[1], "INST_SPEC");
	CU_ASSERT_STRING_EQUAL(d->events[6], "BUS_ACCESS");
	CU_ASSERT_EQUAL(d->role[MPXKIT_ROLE_MISSES], 6);
	CU_ASSERT_STRING_EQUAL(d->workloads[d->rows[1].workload], "fft");
	CU_ASSERT_EQUAL(d->rows[0].threads, 1);
	CU_ASSERT_EQUAL(d->rows[1].threads, 2);
	CU_ASSERT_EQUAL(d->rows[1].freq_mhz, 1000);
	CLOSE(d->rows[1].time_s, 30.0 / 150, 1e-15);
	CLOSE(d->rows[1].voltage_v, 1.0, 1e-15);
	CLOSE(d->rows[1].power_w, 1.5, 1e-15);
	/* sum over cores 4..7 of 1000 r + 10 c + e = 4000 r + 220 + 4 e */
	for (int e = 0; e < 7; e++) {
		CU_ASSERT_EQUAL(d->values[0 * 7 + e], 220 + 4 * e);
		CU_ASSERT_EQUAL(d->values[1 * 7 + e], 4000 + 220 + 4 * e);
	}
	mpxkit_pdata_free(d);
	/* A row with a status is not a measurement. */
	text[strlen(text) - 1] = '\0';
	{
		char *bad = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&bad, &n);
		const char *p = strchr(text, '\n') + 1;
		fprintf(f, "%.*s", (int)(p - text), text);
		/* replace the empty Status of the first row by "failed" */
		for (int tabs = 0; *p; p++) {
			fputc(*p, f);
			if (*p == '\t' && ++tabs == 6)
				fputs("failed", f);
		}
		fputc('\n', f);
		fclose(f);
		texts[0] = bad;
		lens[0] = n;
		CU_ASSERT(mpxkit_pdata_import_buffers("gemstone", names, texts, lens, 1, NULL, &d,
						      &diag) == -MPXKIT_EFORMAT);
		CU_ASSERT(strstr(diag.msg, "asrtpm-A15.csv:2: Status 'failed'") == diag.msg);
		free(bad);
	}
	free(text);
}

/*
 * Nikov's layout: two sample files (event lists el1 and el2, two samples per run) and the
 * run-time table.  Sample steps are 0.5 s; the first sample of a run gets the median step.
 */
static const char nk_el1[] =
    "#Timestamp\tBenchmark\tRun(#)\tCPU(4) Frequency(MHz)\tCPU(4) Temperature(C)\t"
    "A15 Voltage(V)\tA15 Current(A)\tA15 Power(W)\tCPU_CYCLES\tL1D_CACHE_REFILL\n"
    "1000000000\tbench\t1\t2000\t50\t1.3\t1\t2.0\t100\t10\n"
    "1500000000\tbench\t1\t2000\t50\t1.3\t1\t3.0\t200\t20\n"
    "9000000000\tbench\t1\t1000\t40\t0.9\t1\t1.0\t50\t5\n"
    "9500000000\tbench\t1\t1000\t40\t0.9\t1\t1.0\t50\t5\n";
static const char nk_el2[] =
    "#Timestamp\tBenchmark\tRun(#)\tCPU(4) Frequency(MHz)\tCPU(4) Temperature(C)\t"
    "A15 Voltage(V)\tA15 Current(A)\tA15 Power(W)\tCPU_CYCLES\tINST_RETIRED\n"
    "2000000000\tbench\t1\t2000\t50\t1.3\t1\t4.0\t110\t300\n"
    "2500000000\tbench\t1\t2000\t50\t1.3\t1\t4.0\t130\t400\n"
    "8000000000\tbench\t1\t1000\t40\t0.9\t1\t1.0\t60\t300\n"
    "8500000000\tbench\t1\t1000\t40\t0.9\t1\t1.0\t40\t400\n";
static const char nk_rt[] =
    "benchmark,core,cores_used,events_list,run,freq_mhz,start_ns,end_ns,runtime_s,source_path\n"
    "bench,A15,1,1,1,2000,0,0,1.0,x\n"
    "bench,A15,1,2,1,2000,0,0,1.2,x\n"
    "bench,A15,1,1,1,1000,0,0,2.0,x\n"
    "bench,A15,1,2,1,1000,0,0,2.2,x\n";
static const char nk_cross[] = "benchmark,core,freq_mhz,events_list,run,start_ns,end_ns,runtime_s\n"
			       "bench,A7,800,list1,2,0,0,5.5\n"
			       "bench,A15,2000,list2,1,0,0,1.25\n";

static int nikov(const char *const *texts, size_t n, mpxkit_pdata **d, mpxkit_diag *diag)
{
	const char *names[] = {"x_el1_big.data", "x_el2_big.data", "runtime_x.csv", "cross.csv"};
	size_t lens[4];

	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(texts[i]);
	return mpxkit_pdata_import_buffers("nikov", names, texts, lens, n, "nk", d, diag);
}

static void test_nikov(void)
{
	const char *texts[] = {nk_el1, nk_el2, nk_rt, nk_cross};
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};
	int cyc, inst, miss;

	CU_ASSERT_FATAL(nikov(texts, 4, &d, &diag) == 0);
	CU_ASSERT_STRING_EQUAL(d->name, "nk");
	CU_ASSERT_EQUAL(d->n_rows, 4); /* two joined runs, two cross-core executions */
	CU_ASSERT_EQUAL(d->n_events, 3);
	cyc = d->role[MPXKIT_ROLE_CYCLES];
	inst = d->role[MPXKIT_ROLE_INSTRUCTIONS];
	miss = d->role[MPXKIT_ROLE_MISSES];
	CU_ASSERT_STRING_EQUAL(d->events[cyc], "CPU_CYCLES");
	CU_ASSERT_STRING_EQUAL(d->events[inst], "INST_RETIRED");
	CU_ASSERT_STRING_EQUAL(d->events[miss], "L1D_CACHE_REFILL");
	/* 2000 MHz: cycles the mean of the two executions' sums (300, 240), times the mean of
	 * 1.0 and 1.2 s, power weighted by step: every step 0.5 s, so the mean of 2, 3, 4, 4. */
	CU_ASSERT_EQUAL(d->rows[0].freq_mhz, 2000);
	CLOSE(d->values[0 * 3 + cyc], 270, 1e-15);
	CLOSE(d->values[0 * 3 + miss], 30, 1e-15);
	CLOSE(d->values[0 * 3 + inst], 700, 1e-15);
	CLOSE(d->rows[0].time_s, 1.1, 1e-15);
	CLOSE(d->rows[0].power_w, 3.25, 1e-15);
	CLOSE(d->rows[0].voltage_v, 1.3, 1e-15);
	CU_ASSERT_EQUAL(d->rows[1].freq_mhz, 1000);
	CLOSE(d->values[1 * 3 + cyc], 100, 1e-15);
	CLOSE(d->rows[1].time_s, 2.1, 1e-15);
	/* the cross-core rows: time only, run = list x 1000 + run */
	CU_ASSERT_STRING_EQUAL(d->cores[d->rows[2].core], "A7");
	CU_ASSERT_EQUAL(d->rows[2].run, 1002);
	CLOSE(d->rows[2].time_s, 5.5, 1e-15);
	CU_ASSERT(isnan(d->values[2 * 3 + cyc]) && isnan(d->rows[2].power_w));
	CU_ASSERT_EQUAL(d->rows[3].run, 2001);
	mpxkit_pdata_free(d);
}

static void test_nikov_errors(void)
{
	const char *no_rt[] = {nk_el1, nk_el2};
	const char *junk[] = {"hello\tworld\n"};
	const char *ragged[] = {"#Timestamp\tBenchmark\tRun(#)\tCPU(4) Frequency(MHz)\t"
				"CPU(4) Temperature(C)\tA15 Voltage(V)\tA15 Current(A)\t"
				"A15 Power(W)\tE\n1\tb\t1\t1000\t1\t1\t1\t1\n"};
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT(nikov(no_rt, 2, &d, &diag) == -MPXKIT_EFORMAT);
	CU_ASSERT(strstr(diag.msg, "no run time for bench at 2000 MHz run 1") == diag.msg);
	CU_ASSERT(nikov(junk, 1, &d, &diag) == -MPXKIT_EFORMAT);
	CU_ASSERT(strstr(diag.msg, "x_el1_big.data:1: not a Nikov sample file") == diag.msg);
	CU_ASSERT(nikov(ragged, 1, &d, &diag) == -MPXKIT_EFORMAT);
	CU_ASSERT(strstr(diag.msg, "x_el1_big.data:2: 8 fields, the header has 9") == diag.msg);
	CU_ASSERT(mpxkit_pdata_import_buffers("other", junk, junk, (size_t[]){1}, 1, NULL, &d,
					      &diag) == -MPXKIT_EINVAL);
}

static const cutest_case data_cases[] = {
    {"read", test_read},
    {"write and read back", test_round_trip},
    {"bad input: one line each", test_errors},
    {"NUL byte", test_nul},
    {NULL, NULL},
};

static const cutest_case import_cases[] = {
    {"gemstone", test_gemstone},
    {"nikov: joined runs and cross-core", test_nikov},
    {"nikov: bad input", test_nikov_errors},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"dataset", data_cases, NULL, NULL},
	    {"import", import_cases, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_predict_data", suites);
}

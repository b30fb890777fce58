/* SPDX-License-Identifier: BSD-3-Clause */
/* predict models: known coefficients recovered from noise-free synthetic runs, the model file,
 * predictions by hand, held-out evaluation and splits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/predict.h"

#define CLOSE(a, b, tol) CU_ASSERT(fabs((a) - (double)(b)) <= (tol) * (1 + fabs((double)(b))))

/*
 * The world the synthetic data comes from (doc/predict.md's equations, by hand):
 * - per workload w: N instructions, core CPI c_w on "big", misses per instruction p_w, idle
 *   ns per instruction i_w;
 * - big at f GHz: busy ns per instruction b = c_w / f + m, m = p_w (MU0 + MU1 MPKI);
 * - little at f GHz: CPI = G0 + G1 c_w + G8 m f, busy = CPI / f;
 * - power at (core, f): A0 + A1 x cycles/s + A2 x instructions/s (G/s), per configuration.
 */
#define MU0	    40.0
#define MU1	    -2.0
#define G0	    0.3
#define G1	    1.6
#define G8	    1.2
#define N_WORKLOADS 12

static const double big_f[] = {1000, 1500, 2000}, little_f[] = {500, 1000};

static double inst(int w)
{
	return 1e9 * (1 + 0.1 * w);
}

static double core_cpi(int w)
{
	return 0.8 + 0.15 * (w % 5) + 0.02 * w;
}

static double miss_pi(int w)
{
	return 0.0005 + 0.0004 * ((w * 7) % 11);
}

static double idle_pi(int w)
{
	return 0.05 * (w % 3);
}

static double met(int w)
{
	return miss_pi(w) * (MU0 + MU1 * 1000 * miss_pi(w));
}

/* The power coefficients of one configuration: a0, a1 (cycles), a2 (instructions). */
static void power_coef(int little, double f_ghz, double *a)
{
	double s = little ? 0.5 : 1;

	a[0] = s * (0.1 + 0.05 * f_ghz);
	a[1] = s * 0.2 * f_ghz * f_ghz;
	a[2] = s * (0.05 + 0.01 * f_ghz);
}

/* The CPI and ns per instruction of workload w on a configuration. */
static void truth(int w, int little, double f_mhz, double *cpi, double *tau)
{
	double f = f_mhz * 1e-3;

	if (little)
		*cpi = G0 + G1 * core_cpi(w) + G8 * met(w) * f;
	else
		*cpi = core_cpi(w) + met(w) * f;
	*tau = *cpi / f + idle_pi(w);
}

static const char *const syn_events[] = {"CYC", "INS", "MISS", "DC"};

/* One whole-run row per workload and configuration, exactly as the world above says. */
static mpxkit_pdata *synthetic(void)
{
	mpxkit_pdata *d = NULL;

	CU_ASSERT_FATAL(mpxkit_pdata_new(&d, "syn", MPXKIT_TIME_ELAPSED, syn_events, 4, NULL) == 0);
	for (int r = 0; r < 4; r++)
		CU_ASSERT_FATAL(
		    mpxkit_pdata_set_role(d, r == 3 ? MPXKIT_ROLE_DCACHE : r, r, NULL) == 0);
	for (int w = 0; w < N_WORKLOADS; w++)
		for (int little = 0; little < 2; little++)
			for (int k = 0; k < (little ? 2 : 3); k++) {
				double f = little ? little_f[k] : big_f[k], cpi, tau, a[3], v[4];
				char name[16];
				mpxkit_pdata_row row = {
				    .freq_mhz = f, .threads = 1, .sample = -1, .voltage_v = NAN};
				truth(w, little, f, &cpi, &tau);
				row.time_s = tau * inst(w) * 1e-9;
				v[0] = cpi * inst(w);
				v[1] = inst(w);
				v[2] = miss_pi(w) * inst(w);
				v[3] = (0.3 + 0.01 * w) * inst(w);
				power_coef(little, f * 1e-3, a);
				row.power_w = a[0] + a[1] * v[0] / row.time_s * 1e-9 +
					      a[2] * v[1] / row.time_s * 1e-9;
				snprintf(name, sizeof name, "w%02d", w);
				CU_ASSERT_FATAL(mpxkit_pdata_append(d, name,
								    little ? "little" : "big", &row,
								    v, NULL) == 0);
			}
	return d;
}

static const char *const power_events[] = {"cycles", "instructions"};

static void exact_options(mpxkit_pmodel_options *o)
{
	mpxkit_pmodel_options_default(o);
	o->met_form = MPXKIT_MET_MLP;
	o->xcore_form = MPXKIT_XCORE_CPI;
	o->power_form = MPXKIT_POWER_PER_FREQ;
	o->power_events = power_events;
	o->n_power_events = 2;
}

/* Pulls "name: a, b, c" style numbers out of the description: the coefficients as fitted. */
static int describe_has(const mpxkit_pmodel *m, const char *needle)
{
	char *text = mpxkit_pmodel_describe(m);
	int found = text && strstr(text, needle) != NULL;

	if (!found)
		fprintf(stderr, "description lacks '%s':\n%s", needle, text ? text : "(null)");
	free(text);
	return found;
}

/* Predicts workload w measured on (core, f) for every configuration of the model. */
static void predict_from(const mpxkit_pmodel *m, const mpxkit_pdata *d, int w, const char *core,
			 double f, mpxkit_prediction *out, int anchor)
{
	mpxkit_pbinding b;
	char name[16];

	snprintf(name, sizeof name, "w%02d", w);
	CU_ASSERT_FATAL(mpxkit_pbinding_pdata(m, d, &b, NULL) == 0);
	for (size_t i = 0; i < d->n_rows; i++) {
		const mpxkit_pdata_row *r = &d->rows[i];
		if (strcmp(d->workloads[r->workload], name) != 0 ||
		    strcmp(d->cores[r->core], core) != 0 || r->freq_mhz != f)
			continue;
		mpxkit_pobs ob;
		CU_ASSERT_FATAL(mpxkit_pobs_row(m, d, i, &ob, NULL) == 0);
		if (!anchor)
			ob.power_w = NAN;
		CU_ASSERT_FATAL(mpxkit_predict(m, &b, &ob, out, NULL) == 0);
		return;
	}
	CU_FAIL_FATAL("row not found");
}

/* Every equation's coefficients come back from noise-free data, and predictions are exact. */
static void test_recovery(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *m = NULL;
	mpxkit_prediction pred[8];
	char line[256];

	exact_options(&o);
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_pmodel_n_configs(m), 5);
	/* Through the description, as a user reads them: six significant digits. */
	CU_ASSERT(describe_has(m, "time big: MET mlp: MET/inst = miss/inst x (40 + -2 x MPKI) ns"));
	/* little's memory time is G8 x big's: (48, -2.4) */
	CU_ASSERT(
	    describe_has(m, "time little: MET mlp: MET/inst = miss/inst x (48 + -2.4 x MPKI)"));
	snprintf(line, sizeof line, "cpi big -> little (cpi): g0 %.6g, g1 %.6g, g2 0, g8 %.6g", G0,
		 G1, G8);
	CU_ASSERT(describe_has(m, line));
	/* and back: big CPI = (core CPI - G0) / G1 + (MET / G8) f */
	snprintf(line, sizeof line, "cpi little -> big (cpi): g0 %.6g, g1 %.6g, g2 0, g8 %.6g",
		 -G0 / G1, 1 / G1, 1 / G8);
	CU_ASSERT(describe_has(m, line));
	for (int little = 0; little < 2; little++)
		for (int k = 0; k < (little ? 2 : 3); k++) {
			double f = little ? little_f[k] : big_f[k], a[3];
			power_coef(little, f * 1e-3, a);
			snprintf(line, sizeof line, "power %s@%g (per-freq): %.6g %.6g %.6g\n",
				 little ? "little" : "big", f, a[0], a[1], a[2]);
			CU_ASSERT(describe_has(m, line));
		}
	/* A prediction from big@1500 to every configuration equals the world's figures. */
	for (int w = 0; w < N_WORKLOADS; w += 5) {
		predict_from(m, d, w, "big", 1500, pred, 0);
		for (size_t k = 0; k < mpxkit_pmodel_n_configs(m); k++) {
			const mpxkit_pconfig *c = mpxkit_pmodel_config(m, k);
			int little = strcmp(c->core, "little") == 0;
			double cpi, tau, a[3], t;
			truth(w, little, c->freq_mhz, &cpi, &tau);
			t = tau * inst(w) * 1e-9;
			power_coef(little, c->freq_mhz * 1e-3, a);
			CLOSE(pred[k].cpi, cpi, 1e-9);
			CLOSE(pred[k].time_s, t, 1e-9);
			CLOSE(pred[k].ips, inst(w) / t, 1e-9);
			CLOSE(pred[k].power_w, a[0] + (a[1] * cpi + a[2]) * inst(w) / t * 1e-9,
			      1e-9);
			CLOSE(pred[k].energy_j, pred[k].power_w * t, 1e-12);
		}
	}
	mpxkit_pmodel_free(m);
	mpxkit_pdata_free(d);
}

/* Measured power anchors: a row whose power is 10 % above the model's scales every power. */
static void test_anchor(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *m = NULL;
	mpxkit_prediction bare[8], anchored[8];

	exact_options(&o);
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	for (size_t i = 0; i < d->n_rows; i++)
		d->rows[i].power_w *= 1.1;
	predict_from(m, d, 4, "big", 2000, bare, 0);
	predict_from(m, d, 4, "big", 2000, anchored, 1);
	for (size_t k = 0; k < mpxkit_pmodel_n_configs(m); k++) {
		CLOSE(anchored[k].power_w, 1.1 * bare[k].power_w, 1e-9);
		CLOSE(anchored[k].time_s, bare[k].time_s, 1e-12);
	}
	mpxkit_pmodel_free(m);
	mpxkit_pdata_free(d);
}

/* Forms chosen by cross-validation find the true ones when the data holds them exactly. */
static void test_auto_forms(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *m = NULL;

	mpxkit_pmodel_options_default(&o);
	o.power_events = power_events;
	o.n_power_events = 2;
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	CU_ASSERT(describe_has(m, "time big: MET mlp"));
	CU_ASSERT(describe_has(m, "cpi big -> little (cpi)"));
	mpxkit_pmodel_free(m);
	/* The default power events come from forward selection: cycles and instructions here. */
	o.power_events = NULL;
	o.power_form = MPXKIT_POWER_PER_FREQ;
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	CU_ASSERT(describe_has(m, "power regressors: 1, CYC, INS\n"));
	mpxkit_pmodel_free(m);
	mpxkit_pdata_free(d);
}

/*
 * Eq. (1)'s cpi form, MET = mu0 + mu1 x CPI, recovered from a world whose memory time is the
 * same MU_C ns per instruction for every workload: mu0 = MU_C and mu1 = 0 exactly.  (Fitted
 * over every ordered pair of frequencies, the form cannot be exact with mu1 != 0: the CPI
 * differs between the two ends of a pair.  The CPI column must still be right, or the
 * minimum-norm solution would split MU_C between two equal columns.)
 */
#define MU_C 0.25

static mpxkit_pdata *constant_met_world(void)
{
	mpxkit_pdata *d = NULL;

	CU_ASSERT_FATAL(mpxkit_pdata_new(&d, "cmet", MPXKIT_TIME_ELAPSED, syn_events, 2, NULL) ==
			0);
	CU_ASSERT_FATAL(mpxkit_pdata_set_role(d, MPXKIT_ROLE_CYCLES, 0, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_set_role(d, MPXKIT_ROLE_INSTRUCTIONS, 1, NULL) == 0);
	for (int w = 0; w < N_WORKLOADS; w++)
		for (int k = 0; k < 3; k++) {
			double f = big_f[k] * 1e-3, busy = core_cpi(w) / f + MU_C, v[2];
			char name[16];
			mpxkit_pdata_row row = {.freq_mhz = big_f[k],
						.threads = 1,
						.sample = -1,
						.power_w = NAN,
						.voltage_v = NAN};
			row.time_s = (busy + idle_pi(w)) * inst(w) * 1e-9;
			v[0] = busy * f * inst(w);
			v[1] = inst(w);
			snprintf(name, sizeof name, "w%02d", w);
			CU_ASSERT_FATAL(mpxkit_pdata_append(d, name, "big", &row, v, NULL) == 0);
		}
	return d;
}

/* The two numbers of "MET/inst = A + B x CPI ns" in the model's description. */
static int met_cpi_coefs(const mpxkit_pmodel *m, double *a, double *b)
{
	char *text = mpxkit_pmodel_describe(m), *at = text ? strstr(text, "MET/inst = ") : NULL;
	int n = at ? sscanf(at, "MET/inst = %lf + %lf x CPI ns", a, b) : 0;

	free(text);
	return n == 2 ? 0 : -1;
}

static void test_recovery_cpi(void)
{
	mpxkit_pdata *d = constant_met_world();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *m = NULL;
	mpxkit_prediction pred[4];
	double a = NAN, b = NAN;

	mpxkit_pmodel_options_default(&o);
	o.met_form = MPXKIT_MET_CPI;
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	CU_ASSERT_FATAL(met_cpi_coefs(m, &a, &b) == 0);
	CLOSE(a, MU_C, 1e-9);
	CU_ASSERT(fabs(b) < 1e-9);
	/* The workloads' misses were never counted: the cpi form needs none. */
	for (int w = 0; w < N_WORKLOADS; w += 3) {
		predict_from(m, d, w, "big", 1000, pred, 0);
		for (size_t k = 0; k < mpxkit_pmodel_n_configs(m); k++) {
			double f = mpxkit_pmodel_config(m, k)->freq_mhz * 1e-3;
			CLOSE(pred[k].time_s,
			      (core_cpi(w) / f + MU_C + idle_pi(w)) * inst(w) * 1e-9, 1e-9);
			CLOSE(pred[k].cpi, core_cpi(w) + MU_C * f, 1e-9);
		}
	}
	mpxkit_pmodel_free(m);
	mpxkit_pdata_free(d);
}

/*
 * The cpi form's prediction by hand, with mu1 != 0: ctests/golden/pmodel/full.mpxp gives the
 * A7 MET/inst = -0.25 + 0.33 x CPI ns (ctests/fuzz/pmodel_golden.py).  A run at 800 MHz of
 * 2e9 instructions and 3e9 cycles in 4 s: CPI 1.5, busy 1.875 ns, idle 0.125 ns, MET 0.245 ns.
 */
static void test_cpi_by_hand(void)
{
	static const char *const ev[] = {"CPU_CYCLES", "INST_RETIRED"};
	char path[4096];
	mpxkit_pmodel *m = NULL;
	mpxkit_pdata *d = NULL;
	mpxkit_pbinding bind;
	mpxkit_pobs ob;
	mpxkit_prediction pred[4];
	mpxkit_pdata_row row = {.freq_mhz = 800,
				.threads = 1,
				.sample = -1,
				.time_s = 4,
				.power_w = NAN,
				.voltage_v = NAN};
	const double v[] = {3e9, 2e9}, busy = 1.875, idle = 0.125, met = -0.25 + 0.33 * 1.5;

	snprintf(path, sizeof path, "%s/ctests/golden/pmodel/full.mpxp", cutest_srcdir());
	CU_ASSERT_FATAL(mpxkit_pmodel_load(path, &m, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_new(&d, "hand", MPXKIT_TIME_ELAPSED, ev, 2, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_set_role(d, MPXKIT_ROLE_CYCLES, 0, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_set_role(d, MPXKIT_ROLE_INSTRUCTIONS, 1, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pdata_append(d, "w", "A7", &row, v, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pbinding_pdata(m, d, &bind, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pobs_row(m, d, 0, &ob, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_predict(m, &bind, &ob, pred, NULL) == 0);
	for (size_t k = 0; k < mpxkit_pmodel_n_configs(m); k++) {
		const mpxkit_pconfig *c = mpxkit_pmodel_config(m, k);
		double f = c->freq_mhz * 1e-3;
		if (strcmp(c->core, "A7") != 0)
			continue;
		CLOSE(pred[k].time_s, ((busy - met) * 0.8 / f + met + idle) * 2e9 * 1e-9, 1e-12);
		CLOSE(pred[k].cpi, (busy - met) * 0.8 + met * f, 1e-12);
	}
	mpxkit_pdata_free(d);
	mpxkit_pmodel_free(m);
}

/*
 * --robust: one workload's power 50 % off at one configuration pulls the least-squares fit
 * there by more than 1 %; least absolute relative error keeps the world's coefficients.
 */
static void test_robust(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *ls = NULL, *l1 = NULL;
	mpxkit_prediction p_ls[8], p_l1[8];
	double a[3];

	for (size_t i = 0; i < d->n_rows; i++)
		if (d->rows[i].workload == 3 && d->rows[i].freq_mhz == 1500)
			d->rows[i].power_w *= 1.5;
	exact_options(&o);
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &ls, NULL) == 0);
	o.robust = 1;
	CU_ASSERT_FATAL(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &l1, NULL) == 0);
	power_coef(0, 1.5, a);
	/* Workload 7 at big@1500, from its counters alone: the world's power there. */
	predict_from(ls, d, 7, "big", 1500, p_ls, 0);
	predict_from(l1, d, 7, "big", 1500, p_l1, 0);
	for (size_t k = 0; k < mpxkit_pmodel_n_configs(l1); k++) {
		const mpxkit_pconfig *c = mpxkit_pmodel_config(l1, k);
		double cpi, tau, t, want;
		if (strcmp(c->core, "big") != 0 || c->freq_mhz != 1500)
			continue;
		truth(7, 0, 1500, &cpi, &tau);
		t = tau * inst(7) * 1e-9;
		want = a[0] + (a[1] * cpi + a[2]) * inst(7) / t * 1e-9;
		CU_ASSERT(fabs(p_ls[k].power_w - want) > 0.01 * want);
		CU_ASSERT(fabs(p_l1[k].power_w - want) < 1e-3 * want);
	}
	mpxkit_pmodel_free(ls);
	mpxkit_pmodel_free(l1);
	mpxkit_pdata_free(d);
}

/* ---- the model file ----------------------------------------------------------------------------
 */

static mpxkit_pmodel *trained(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_pmodel *m = NULL;

	exact_options(&o);
	o.data = "synthetic";
	o.command = "test_predict";
	CU_ASSERT(mpxkit_pmodel_train(sets, 1, &o, NULL, NULL, &m, NULL) == 0);
	mpxkit_pdata_free(d);
	return m;
}

static void test_file_round_trip(void)
{
	mpxkit_pmodel *m = trained(), *back = NULL, *disk = NULL;
	unsigned char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	char *da, *db;
	const char *path = cutest_scratch_path("m.mpxp");

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(mpxkit_pmodel_encode(m, &a, &la, NULL) == 0);
	CU_ASSERT(memcmp(a, "\x89PRD", 4) == 0);
	CU_ASSERT_FATAL(mpxkit_pmodel_load_buffer(a, la, "m", &back, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pmodel_encode(back, &b, &lb, NULL) == 0);
	CU_ASSERT(la == lb && memcmp(a, b, la) == 0);
	da = mpxkit_pmodel_describe(m);
	db = mpxkit_pmodel_describe(back);
	CU_ASSERT(da && db && strcmp(da, db) == 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_pmodel_meta(back, "data"), "synthetic");
	CU_ASSERT_STRING_EQUAL(mpxkit_pmodel_meta(back, "command"), "test_predict");
	CU_ASSERT_FATAL(mpxkit_pmodel_save(m, path, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_pmodel_load(path, &disk, NULL) == 0);
	free(db);
	db = mpxkit_pmodel_describe(disk);
	CU_ASSERT(db && strcmp(da, db) == 0);
	free(da);
	free(db);
	free(a);
	free(b);
	mpxkit_pmodel_free(m);
	mpxkit_pmodel_free(back);
	mpxkit_pmodel_free(disk);
}

/* Every truncation and every single-bit flip of a model file is refused with a diag line. */
static void test_file_damage(void)
{
	mpxkit_pmodel *m = trained(), *x = NULL;
	unsigned char *a = NULL;
	size_t la = 0, refused = 0, tries = 0;
	mpxkit_diag diag;

	CU_ASSERT_FATAL(mpxkit_pmodel_encode(m, &a, &la, NULL) == 0);
	for (size_t n = 0; n < la; n++) {
		memset(&diag, 0, sizeof diag);
		if (mpxkit_pmodel_load_buffer(a, n, "cut", &x, &diag) < 0 && diag.msg[0])
			refused++;
		else
			mpxkit_pmodel_free(x);
		tries++;
	}
	for (size_t i = 0; i < la; i++)
		for (int bit = 0; bit < 8; bit++) {
			a[i] ^= (unsigned char)(1u << bit);
			memset(&diag, 0, sizeof diag);
			if (mpxkit_pmodel_load_buffer(a, la, "flip", &x, &diag) < 0 && diag.msg[0])
				refused++;
			else
				mpxkit_pmodel_free(x);
			a[i] ^= (unsigned char)(1u << bit);
			tries++;
		}
	CU_ASSERT_EQUAL(refused, tries);
	free(a);
	mpxkit_pmodel_free(m);
}

/* ---- evaluation ---------------------------------------------------------------------------------
 */

static const mpxkit_eval_row *find_row(const mpxkit_eval_result *r, int target, const char *from)
{
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].summary && r->rows[i].target == target &&
		    strcmp(r->rows[i].from, from) == 0)
			return &r->rows[i];
	return NULL;
}

/* On exact data held-out workloads are predicted exactly; the baselines are not. */
static void test_eval_exact(void)
{
	mpxkit_pdata *d = synthetic();
	const mpxkit_pdata *sets[] = {d};
	mpxkit_pmodel_options o;
	mpxkit_split *s = NULL;
	mpxkit_eval_result *r = NULL;
	const mpxkit_eval_row *x;

	exact_options(&o);
	CU_ASSERT_FATAL(mpxkit_split_parse("loo", 0, &s, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_predict_eval(sets, 1, s, &o, &r, NULL) == 0);
	CU_ASSERT_EQUAL(r->n_folds, N_WORKLOADS);
	CU_ASSERT_EQUAL(r->n_test_workloads, N_WORKLOADS);
	/* Big: 3 x 2 ordered pairs, little 2 x 1, per workload. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(x = find_row(r, MPXKIT_TARGET_TIME, "all"));
	CU_ASSERT_EQUAL(x->n, 8 * N_WORKLOADS);
	CU_ASSERT(x->mape < 1e-6);
	CU_ASSERT(x->baseline_mape > 1);
	CU_ASSERT_STRING_EQUAL(x->baseline, "f/f'");
	CU_ASSERT_PTR_NOT_NULL_FATAL(x = find_row(r, MPXKIT_TARGET_TIME, "cross"));
	CU_ASSERT_EQUAL(x->n, 12 * N_WORKLOADS);
	CU_ASSERT(x->mape < 1e-6);
	CU_ASSERT_STRING_EQUAL(x->baseline, "cpi-ratio");
	CU_ASSERT_PTR_NOT_NULL_FATAL(x = find_row(r, MPXKIT_TARGET_POWER, "same"));
	CU_ASSERT_EQUAL(x->n, 5 * N_WORKLOADS);
	CU_ASSERT(x->mape < 1e-6);
	CU_ASSERT_PTR_NOT_NULL_FATAL(x = find_row(r, MPXKIT_TARGET_ENERGY, "all"));
	CU_ASSERT(x->mape < 1e-6);
	CU_ASSERT_PTR_NOT_NULL_FATAL(x = find_row(r, MPXKIT_TARGET_TIME, "extreme"));
	CU_ASSERT_EQUAL(x->n, 4 * N_WORKLOADS); /* 1000 <-> 2000 and 500 <-> 1000 */
	mpxkit_eval_result_free(r);
	mpxkit_split_free(s);
	mpxkit_pdata_free(d);
}

/* FNV-1a 64 test vectors (Fowler, Noll, Vo: the published ones for "" and "a", "foobar"). */
static void test_split_hash(void)
{
	mpxkit_split *s = NULL;
	size_t test = 0;

	CU_ASSERT_EQUAL(mpxkit_split_hash(""), 0xcbf29ce484222325ull);
	CU_ASSERT_EQUAL(mpxkit_split_hash("a"), 0xaf63dc4c8601ec8cull);
	CU_ASSERT_EQUAL(mpxkit_split_hash("foobar"), 0x85944171f73967e8ull);
	CU_ASSERT_FATAL(mpxkit_split_parse("hash:50", 0, &s, NULL) == 0);
	for (int i = 0; i < 1000; i++) {
		char w[16];
		snprintf(w, sizeof w, "w%d", i);
		test += mpxkit_split_role(s, w) == 1;
	}
	CU_ASSERT(test > 400 && test < 600);
	mpxkit_split_free(s);
	CU_ASSERT(mpxkit_split_parse("hash:0", 0, &s, NULL) == -MPXKIT_EINVAL);
	CU_ASSERT(mpxkit_split_parse("hash:100", 0, &s, NULL) == -MPXKIT_EINVAL);
	CU_ASSERT(mpxkit_split_parse("hash:x", 0, &s, NULL) == -MPXKIT_EINVAL);
}

/* The authors' split file: train and test columns, blank lines at the end, unknown names out. */
static void test_split_file(void)
{
	const char *path = cutest_scratch_path("split.data");
	FILE *f = fopen(path, "w");
	mpxkit_split *s = NULL;
	mpxkit_diag diag = {0};

	CU_ASSERT_FATAL(f != NULL);
	fputs("#Train Benchmarks\tTest Benchmarks\na\tb\nc\td\n\te\n\n", f);
	fclose(f);
	CU_ASSERT_FATAL(mpxkit_split_parse(path, 0, &s, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_split_role(s, "a"), 0);
	CU_ASSERT_EQUAL(mpxkit_split_role(s, "c"), 0);
	CU_ASSERT_EQUAL(mpxkit_split_role(s, "b"), 1);
	CU_ASSERT_EQUAL(mpxkit_split_role(s, "e"), 1);
	CU_ASSERT_EQUAL(mpxkit_split_role(s, "z"), -1);
	mpxkit_split_free(s);
	f = fopen(path, "w");
	fputs("#x\ty\na\ta\n", f);
	fclose(f);
	CU_ASSERT(mpxkit_split_parse(path, 0, &s, &diag) == -MPXKIT_EFORMAT);
	CU_ASSERT(strstr(diag.msg, "'a' is both a training and a test workload") != NULL);
}

static const cutest_case model_cases[] = {
    {"coefficients recovered, predictions exact", test_recovery},
    {"measured power anchors", test_anchor},
    {"forms chosen by cross-validation", test_auto_forms},
    {"cpi form recovered from a constant memory time", test_recovery_cpi},
    {"cpi form by hand", test_cpi_by_hand},
    {"robust fit ignores one bad observation", test_robust},
    {NULL, NULL},
};

static const cutest_case file_cases[] = {
    {"round trip", test_file_round_trip},
    {"every truncation and bit flip refused", test_file_damage},
    {NULL, NULL},
};

static const cutest_case eval_cases[] = {
    {"exact data: zero error held out", test_eval_exact},
    {"hash split", test_split_hash},
    {"split file", test_split_file},
    {NULL, NULL},
};

static int setup(void)
{
	return cutest_scratch_make("predict");
}

int main(void)
{
	const cutest_suite suites[] = {
	    {"model", model_cases, NULL, NULL},
	    {"file", file_cases, setup, NULL},
	    {"eval", eval_cases, NULL, cutest_scratch_remove},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_predict", suites);
}

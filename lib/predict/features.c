/* SPDX-License-Identifier: BSD-3-Clause */
/* The equations of doc/predict.md on one observation: features, memory time, the DVFS step,
 * the CPI map to another core kind, and power. */
#include <math.h>

#include "predict_impl.h"

int mpxkit__pm_features(const double *count, size_t n_inputs, double freq_mhz, double threads,
			double time_s, int time_kind, double power_w, double voltage_v, pm_feat *x)
{
	double n = count[MPXKIT_ROLE_INSTRUCTIONS], c = count[MPXKIT_ROLE_CYCLES];

	/* Work is counted in instructions and time in ns per instruction, f in GHz, so every
	 * coefficient is a plain number near 1 and runs of any length compare. */
	x->f_ghz = freq_mhz * 1e-3;
	x->threads = threads;
	x->power_w = power_w;
	x->voltage_v = voltage_v;
	if (!(n > 0) || !(c > 0) || !(x->f_ghz > 0) || !(threads >= 1))
		return -1;
	x->n_inst = n;
	x->busy = c / (n * x->f_ghz);
	x->idle = 0;
	if (time_kind == MPXKIT_TIME_ELAPSED && time_s > 0) {
		/* Core-ns per instruction the workload waited (I/O, sleep): held fixed at f'. */
		x->idle = time_s * 1e9 * threads / n - x->busy;
		if (x->idle < 0)
			x->idle = 0;
	}
	x->tau = x->busy + x->idle;
	x->time_s = x->tau * n / threads * 1e-9;
	for (size_t i = 0; i < n_inputs; i++)
		x->rate[i] = count[i] / n; /* NaN stays NaN */
	x->miss_pi = x->rate[MPXKIT_ROLE_MISSES];
	x->mpki = 1000 * x->miss_pi;
	return 0;
}

/*
 * Eq. (1) per instruction, ns: misses per instruction x (mu0 + mu1 MPKI), or from the CPI
 * alone, mu0 + mu1 x CPI (doc/predict.md).
 */
double mpxkit__pm_met(const pm_time *t, const pm_feat *x)
{
	double m;

	if (t == NULL || t->form == MPXKIT_MET_NONE)
		return 0;
	if (t->form == MPXKIT_MET_CPI) {
		m = t->mu[0] + t->mu[1] * x->busy * x->f_ghz;
	} else {
		if (isnan(x->miss_pi))
			return 0; /* documented: without misses counted, memory time is 0 */
		m = x->miss_pi * t->mu[0];
		if (t->form == MPXKIT_MET_MLP)
			m += x->miss_pi * x->mpki * t->mu[1];
	}
	if (m < 0)
		m = 0;
	if (m > x->busy)
		m = x->busy;
	return m;
}

/* Eq. (4), (5): core time scales with the clock, memory time does not. */
double mpxkit__pm_busy_at(const pm_time *t, const pm_feat *x, double f_to_ghz)
{
	double m = mpxkit__pm_met(t, x);

	return (x->busy - m) * x->f_ghz / f_to_ghz + m;
}

/* Eq. (2): CPI on the other core kind at f', from the first core's core CPI, MPKI and MET. */
double mpxkit__pm_xcore_cpi(const pm_xcore *g, const pm_time *from_time, const pm_feat *x,
			    double f_to_ghz)
{
	double m = mpxkit__pm_met(from_time, x);
	double core_cpi = (x->busy - m) * x->f_ghz;
	double cpi = g->g[0] + g->g[1] * core_cpi + g->g[3] * m * f_to_ghz;

	/* The constant ratio maps the whole time, idle included: CPI' = g1 x tau f. */
	if (g->form == MPXKIT_XCORE_RATIO)
		return g->g[1] * x->tau * x->f_ghz;

	if (g->form == MPXKIT_XCORE_CPI_MPKI) {
		if (isnan(x->mpki))
			return NAN;
		cpi += g->g[2] * x->mpki;
	}
	return cpi;
}

/*
 * Eq. (7)'s regressors: 1, then each power input's rate in G events/s (PER_FREQ); 1, V, then
 * V^2 x each rate (PER_FREQ_V); or 1, V, V^2 f, then V^2 x each rate (VOLTAGE), f in GHz.
 */
size_t mpxkit__pm_power_row(const pm_power *p, uint64_t inputs, const double *rate_gps,
			    double f_ghz, double voltage, double *r)
{
	size_t n = 0;
	double scale = 1;

	r[n++] = 1;
	if (p->form == MPXKIT_POWER_PER_FREQ_V) {
		r[n++] = voltage;
		scale = voltage * voltage;
	}
	if (p->form == MPXKIT_POWER_VOLTAGE) {
		r[n++] = voltage;
		r[n++] = voltage * voltage * f_ghz;
		scale = voltage * voltage;
	}
	for (int k = 0; k < MPXKIT_PMODEL_MAX_INPUTS; k++)
		if (inputs & (1ull << k))
			r[n++] = scale * rate_gps[k];
	return n;
}

double mpxkit__pm_power(const pm_power *p, uint64_t inputs, const double *rate_gps, double f_ghz,
			double voltage)
{
	double r[MPXKIT_PMODEL_MAX_COEFS], sum = 0;
	size_t n = mpxkit__pm_power_row(p, inputs, rate_gps, f_ghz, voltage, r);

	for (size_t i = 0; i < n && i < p->n_coef; i++)
		sum += p->coef[i] * r[i];
	return sum;
}

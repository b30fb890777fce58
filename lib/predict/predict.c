/* SPDX-License-Identifier: BSD-3-Clause */
/* Predictions: one observation on (core, f) to time, CPI, power and energy on every (core', f'). */
#include <math.h>
#include <string.h>

#include "predict_impl.h"

int mpxkit_pmodel_core(const mpxkit_pmodel *m, const char *name)
{
	return mpxkit__pm_core(m, name);
}

/* The inputs the model reads: cycles and instructions always, misses for eq. (1), power's. */
static uint64_t used_inputs(const mpxkit_pmodel *m)
{
	uint64_t used = (1ull << MPXKIT_ROLE_CYCLES) | (1ull << MPXKIT_ROLE_INSTRUCTIONS);

	for (size_t i = 0; i < m->n_time; i++)
		if (m->time[i].form == MPXKIT_MET_LINEAR || m->time[i].form == MPXKIT_MET_MLP)
			used |= 1ull << MPXKIT_ROLE_MISSES;
	for (size_t i = 0; i < m->n_xcore; i++)
		if (m->xcore[i].form != MPXKIT_XCORE_RATIO)
			used |= 1ull << MPXKIT_ROLE_MISSES;
	if (m->n_power)
		used |= m->power_inputs;
	return used;
}

static int finish_binding(const mpxkit_pmodel *m, mpxkit_pbinding *b, const char *input,
			  mpxkit_diag *diag)
{
	uint64_t used = used_inputs(m);

	b->missing = 0;
	for (size_t i = 0; i < m->n_inputs; i++)
		if ((used & (1ull << i)) && b->col[i] < 0)
			b->missing |= 1ull << i;
	for (int r = MPXKIT_ROLE_CYCLES; r <= MPXKIT_ROLE_INSTRUCTIONS; r++)
		if (b->col[r] < 0)
			return mpxkit_fail(diag, MPXKIT_ENOENT,
					   "%s: no %s counted (%s): every "
					   "prediction needs cycles and instructions",
					   input, mpxkit_role_name(r),
					   m->input[r] ? m->input[r] : "unnamed");
	return 0;
}

int mpxkit_pbinding_events(const mpxkit_pmodel *m, const char *const *events, size_t n_events,
			   mpxkit_pbinding *out, mpxkit_diag *diag)
{
	for (size_t i = 0; i < MPXKIT_PMODEL_MAX_INPUTS; i++) {
		out->col[i] = -1;
		for (size_t e = 0; i < m->n_inputs && m->input[i] && e < n_events; e++)
			if (strcmp(events[e], m->input[i]) == 0)
				out->col[i] = (int)e;
	}
	return finish_binding(m, out, "input", diag);
}

int mpxkit_pbinding_pdata(const mpxkit_pmodel *m, const mpxkit_pdata *d, mpxkit_pbinding *out,
			  mpxkit_diag *diag)
{
	/* Roles through the dataset's own metadata, power events by name. */
	for (size_t i = 0; i < MPXKIT_PMODEL_MAX_INPUTS; i++)
		out->col[i] = i < MPXKIT_ROLE_COUNT	       ? d->role[i]
			      : i < m->n_inputs && m->input[i] ? mpxkit_pdata_event(d, m->input[i])
							       : -1;
	for (size_t i = 0; i < MPXKIT_PMODEL_MAX_INPUTS; i++)
		if (out->col[i] < 0)
			out->col[i] = -1;
	return finish_binding(m, out, d->name, diag);
}

int mpxkit_pobs_row(const mpxkit_pmodel *m, const mpxkit_pdata *d, size_t row, mpxkit_pobs *out,
		    mpxkit_diag *diag)
{
	const mpxkit_pdata_row *r = &d->rows[row];
	int core = mpxkit__pm_core(m, d->cores[r->core]);

	if (core < 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT,
				   "%s: row %zu: core kind '%s' is not in the model", d->name,
				   row + 1, d->cores[r->core]);
	*out = (mpxkit_pobs){.core = core,
			     .freq_mhz = r->freq_mhz,
			     .threads = r->threads,
			     .time_s = r->time_s,
			     .time_kind = d->time_kind,
			     .power_w = r->power_w,
			     .values = d->values + row * d->n_events};
	return 0;
}

static void all_nan(mpxkit_prediction *p)
{
	p->time_s = p->cpi = p->power_w = p->energy_j = p->ips = NAN;
}

/*
 * Power at a configuration from the observed rates per wall second: the same work in tau'
 * instead of tau makes every rate tau/tau' as high, and cycles also CPI'/CPI.
 */
static double power_at(const mpxkit_pmodel *m, int pi, const double *rate_gps, double speedup,
		       double cpi_ratio, const mpxkit_pconfig *cfg, double voltage)
{
	double r[MPXKIT_PMODEL_MAX_INPUTS];

	for (size_t k = 0; k < m->n_inputs; k++)
		r[k] = rate_gps[k] * speedup;
	r[MPXKIT_ROLE_CYCLES] *= cpi_ratio;
	return mpxkit__pm_power(&m->power[pi], m->power_inputs, r, cfg->freq_mhz * 1e-3, voltage);
}

/* At its own configuration an observation's measured voltage, where it has one, is the one. */
static double own_voltage(const pm_feat *x, const mpxkit_pconfig *cfg)
{
	return x->voltage_v > 0 ? x->voltage_v : cfg->voltage_v;
}

void mpxkit__pm_predict_feat(const mpxkit_pmodel *m, int c, const pm_feat *x,
			     const double *rate_gps, double power_w, mpxkit_prediction *out,
			     double *tau_out)
{
	size_t nc = m->n_cores;
	const pm_time *tf = m->cfg_time[c] >= 0 ? &m->time[m->cfg_time[c]] : NULL;
	double anchor = 1;

	/* Measured power at the observation's own configuration scales the model's power
	 * everywhere: what sets this workload apart from the training mean (doc/predict.md). */
	if (power_w > 0)
		for (size_t k = 0; k < m->n_configs; k++)
			if (m->config_core[k] == (uint32_t)c &&
			    m->configs[k].freq_mhz * 1e-3 == x->f_ghz && m->cfg_power[k] >= 0) {
				double own =
				    power_at(m, m->cfg_power[k], rate_gps, 1, 1, &m->configs[k],
					     own_voltage(x, &m->configs[k]));
				if (own > 0)
					anchor = power_w / own;
			}

	for (size_t k = 0; k < m->n_configs; k++) {
		const mpxkit_pconfig *cfg = &m->configs[k];
		double f = cfg->freq_mhz * 1e-3, tau, cpi;
		uint32_t to = m->config_core[k];
		mpxkit_prediction *p = &out[k];
		if (to == (uint32_t)c) {
			double busy = mpxkit__pm_busy_at(tf, x, f);
			tau = busy + x->idle;
			cpi = busy * f;
		} else {
			int xi = m->cfg_xcore[c * nc + to];
			if (xi < 0) {
				all_nan(p);
				if (tau_out)
					tau_out[k] = NAN;
				continue;
			}
			cpi = mpxkit__pm_xcore_cpi(&m->xcore[xi], tf, x, f);
			tau = cpi / f + (m->xcore[xi].form == MPXKIT_XCORE_RATIO ? 0 : x->idle);
		}
		if (tau_out)
			tau_out[k] = tau;
		p->cpi = cpi;
		p->time_s = tau * x->n_inst / x->threads * 1e-9;
		p->ips = x->threads / tau * 1e9;
		p->power_w = NAN;
		if (m->cfg_power[k] >= 0)
			p->power_w = anchor * power_at(m, m->cfg_power[k], rate_gps, x->tau / tau,
						       cpi / (x->busy * x->f_ghz), cfg,
						       to == (uint32_t)c && f == x->f_ghz
							   ? own_voltage(x, cfg)
							   : cfg->voltage_v);
		p->energy_j = p->power_w * p->time_s;
	}
}

int mpxkit_predict(const mpxkit_pmodel *m, const mpxkit_pbinding *b, const mpxkit_pobs *obs,
		   mpxkit_prediction *out, mpxkit_diag *diag)
{
	double count[MPXKIT_PMODEL_MAX_INPUTS], rate_gps[MPXKIT_PMODEL_MAX_INPUTS];
	pm_feat x;
	int c = obs->core;

	if (c < 0 || (size_t)c >= m->n_cores)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "core kind %d: not in the model", c);
	for (size_t i = 0; i < m->n_inputs; i++)
		count[i] = b->col[i] >= 0 ? obs->values[b->col[i]] : NAN;
	if (mpxkit__pm_features(count, m->n_inputs, obs->freq_mhz, obs->threads, obs->time_s,
				obs->time_kind, NAN, NAN, &x) < 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "an observation needs cycles > 0, "
				   "instructions > 0, a frequency > 0 and threads >= 1");
	/* Rates per wall second of the period (NaN without a time: no power then). */
	for (size_t i = 0; i < m->n_inputs; i++)
		rate_gps[i] = count[i] / obs->time_s * 1e-9;
	mpxkit__pm_predict_feat(m, c, &x, rate_gps, obs->power_w, out, NULL);
	return 0;
}

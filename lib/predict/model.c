/* SPDX-License-Identifier: BSD-3-Clause */
/* Training the predict model: DVFS memory time per core kind, power per configuration, the CPI
 * map between core kinds (doc/predict.md). */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict_impl.h"

/* ---- forms and options ------------------------------------------------------------------------
 */

static const char *const met_names[] = {"none", "linear", "mlp", "auto", "cpi"};
static const char *const power_names[] = {NULL, "per-freq", "voltage", "per-freq-v"};
static const char *const xcore_names[] = {NULL, "ratio", "cpi", "cpi-mpki", "auto"};

#define N_OF(a) (int)(sizeof(a) / sizeof((a)[0]))

static int parse_name(const char *const *names, int n, const char *text)
{
	for (int i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], text) == 0)
			return i;
	return -MPXKIT_ENOENT;
}

int mpxkit_met_form_parse(const char *text)
{
	return parse_name(met_names, N_OF(met_names), text);
}

int mpxkit_power_form_parse(const char *text)
{
	return parse_name(power_names, N_OF(power_names), text);
}

int mpxkit_xcore_form_parse(const char *text)
{
	return parse_name(xcore_names, N_OF(xcore_names), text);
}

const char *mpxkit_met_form_name(int f)
{
	return f >= 0 && f < N_OF(met_names) ? met_names[f] : "?";
}

const char *mpxkit_power_form_name(int f)
{
	return f > 0 && f < N_OF(power_names) ? power_names[f] : "?";
}

const char *mpxkit_xcore_form_name(int f)
{
	return f > 0 && f < N_OF(xcore_names) ? xcore_names[f] : "?";
}

void mpxkit_pmodel_options_default(mpxkit_pmodel_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->met_form = MPXKIT_MET_AUTO;
	opt->power_form = MPXKIT_POWER_PER_FREQ_V;
	opt->xcore_form = MPXKIT_XCORE_AUTO;
	opt->power_ridge = -1;
}

/* ---- the model object -------------------------------------------------------------------------
 */

void mpxkit_pmodel_free(mpxkit_pmodel *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n_cores; i++)
		free(m->cores[i]);
	for (size_t i = 0; i < m->n_inputs; i++)
		free(m->input[i]);
	for (size_t i = 0; i < m->n_meta; i++) {
		free(m->meta_keys[i]);
		free(m->meta_values[i]);
	}
	free(m->meta_keys);
	free(m->meta_values);
	free(m->cores);
	free(m->configs);
	free(m->config_core);
	free(m->time);
	free(m->power);
	free(m->xcore);
	free(m->cfg_time);
	free(m->cfg_power);
	free(m->cfg_xcore);
	free(m);
}

int mpxkit__pm_core(const mpxkit_pmodel *m, const char *name)
{
	for (size_t i = 0; i < m->n_cores; i++)
		if (strcmp(m->cores[i], name) == 0)
			return (int)i;
	return -MPXKIT_ENOENT;
}

int mpxkit__pm_add_meta(mpxkit_pmodel *m, const char *key, const char *value)
{
	char **k = realloc(m->meta_keys, (m->n_meta + 1) * sizeof *k), **v;

	if (k == NULL)
		return -MPXKIT_ENOMEM;
	m->meta_keys = k;
	if ((v = realloc(m->meta_values, (m->n_meta + 1) * sizeof *v)) == NULL)
		return -MPXKIT_ENOMEM;
	m->meta_values = v;
	if ((m->meta_keys[m->n_meta] = strdup(key)) == NULL)
		return -MPXKIT_ENOMEM;
	if ((m->meta_values[m->n_meta] = strdup(value)) == NULL) {
		free(m->meta_keys[m->n_meta]);
		return -MPXKIT_ENOMEM;
	}
	m->n_meta++;
	return 0;
}

const char *mpxkit_pmodel_meta(const mpxkit_pmodel *m, const char *key)
{
	for (size_t i = 0; i < m->n_meta; i++)
		if (strcmp(m->meta_keys[i], key) == 0)
			return m->meta_values[i];
	return NULL;
}

size_t mpxkit_pmodel_n_configs(const mpxkit_pmodel *m)
{
	return m->n_configs;
}

const mpxkit_pconfig *mpxkit_pmodel_config(const mpxkit_pmodel *m, size_t i)
{
	return i < m->n_configs ? &m->configs[i] : NULL;
}

const char *mpxkit_pmodel_role_event(const mpxkit_pmodel *m, int role)
{
	return role >= 0 && role < MPXKIT_ROLE_COUNT ? m->input[role] : NULL;
}

size_t mpxkit_pmodel_n_inputs(const mpxkit_pmodel *m)
{
	return m->n_inputs;
}

const char *mpxkit_pmodel_input(const mpxkit_pmodel *m, size_t i)
{
	return i < m->n_inputs ? m->input[i] : NULL;
}

/* Which fit serves each configuration: the tables mpxkit_predict reads. */
int mpxkit__pm_link(mpxkit_pmodel *m, mpxkit_diag *diag)
{
	free(m->cfg_time);
	free(m->cfg_power);
	free(m->cfg_xcore);
	m->cfg_time = malloc((m->n_cores + 1) * sizeof *m->cfg_time);
	m->cfg_power = malloc((m->n_configs + 1) * sizeof *m->cfg_power);
	m->cfg_xcore = malloc((m->n_cores * m->n_cores + 1) * sizeof *m->cfg_xcore);
	if (!m->cfg_time || !m->cfg_power || !m->cfg_xcore)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t c = 0; c < m->n_cores; c++) {
		m->cfg_time[c] = -1;
		for (size_t i = 0; i < m->n_time; i++)
			if (m->time[i].core == c)
				m->cfg_time[c] = (int)i;
	}
	for (size_t k = 0; k < m->n_configs; k++) {
		m->configs[k].core = m->cores[m->config_core[k]];
		m->cfg_power[k] = -1;
		for (size_t i = 0; i < m->n_power; i++) {
			const pm_power *p = &m->power[i];
			if (p->core == m->config_core[k] && (p->form == MPXKIT_POWER_VOLTAGE ||
							     p->freq_mhz == m->configs[k].freq_mhz))
				m->cfg_power[k] = (int)i;
		}
	}
	for (size_t i = 0; i < m->n_cores * m->n_cores; i++)
		m->cfg_xcore[i] = -1;
	for (size_t i = 0; i < m->n_xcore; i++)
		m->cfg_xcore[m->xcore[i].from * m->n_cores + m->xcore[i].to] = (int)i;
	return 0;
}

/* ---- training ---------------------------------------------------------------------------------
 */

typedef struct trainer {
	const mpxkit_pmodel_options *opt;
	pm_obs *obs;
	size_t n_obs;
	size_t n_folds; /* inner folds: pm_obs.fold */
	mpxkit_pmodel *m;
} trainer;

static double relw(const trainer *t, double y)
{
	return t->opt->unweighted ? 1 : 1 / (y * y);
}

static int add_core(mpxkit_pmodel *m, const char *name)
{
	int c = mpxkit__pm_core(m, name);
	char **p;

	if (c >= 0)
		return c;
	if ((p = realloc(m->cores, (m->n_cores + 1) * sizeof *p)) == NULL)
		return -MPXKIT_ENOMEM;
	m->cores = p;
	if ((m->cores[m->n_cores] = strdup(name)) == NULL)
		return -MPXKIT_ENOMEM;
	return (int)m->n_cores++;
}

/* The configurations seen, sorted by core kind then frequency, with their mean voltage. */
static int collect_configs(trainer *t, mpxkit_diag *diag)
{
	mpxkit_pmodel *m = t->m;
	double *vsum, *vw;
	size_t cap_cfg = 0, cap_core = 0;
	mpxkit_pconfig *cfg;
	uint32_t *cores;
	int c;

	for (size_t i = 0; i < t->n_obs; i++) {
		const pm_obs *o = &t->obs[i];
		size_t k;
		if ((c = add_core(m, o->core)) < 0)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		for (k = 0; k < m->n_configs; k++)
			if (m->config_core[k] == (uint32_t)c &&
			    m->configs[k].freq_mhz == o->freq_mhz)
				break;
		if (k < m->n_configs)
			continue;
		if (m->n_configs == MPXKIT_PMODEL_MAX_CONFIGS)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "more than %d (core, frequency) "
					   "configurations",
					   MPXKIT_PMODEL_MAX_CONFIGS);
		if ((cfg = mpxkit__pd_grow(m->configs, &cap_cfg, m->n_configs, sizeof *cfg)) ==
		    NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		m->configs = cfg;
		if ((cores = mpxkit__pd_grow(m->config_core, &cap_core, m->n_configs,
					     sizeof *cores)) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		m->config_core = cores;
		m->configs[m->n_configs] = (mpxkit_pconfig){NULL, o->freq_mhz, NAN};
		m->config_core[m->n_configs++] = (uint32_t)c;
	}
	/* Sort by core name, then frequency: the order apply prints. */
	for (size_t i = 1; i < m->n_configs; i++)
		for (size_t j = i; j > 0; j--) {
			int cmp =
			    strcmp(m->cores[m->config_core[j - 1]], m->cores[m->config_core[j]]);
			if (cmp < 0 ||
			    (cmp == 0 && m->configs[j - 1].freq_mhz <= m->configs[j].freq_mhz))
				break;
			mpxkit_pconfig tc = m->configs[j];
			uint32_t tk = m->config_core[j];
			m->configs[j] = m->configs[j - 1];
			m->config_core[j] = m->config_core[j - 1];
			m->configs[j - 1] = tc;
			m->config_core[j - 1] = tk;
		}
	vsum = calloc(m->n_configs + 1, sizeof *vsum);
	vw = calloc(m->n_configs + 1, sizeof *vw);
	if (!vsum || !vw) {
		free(vsum);
		free(vw);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_obs; i++) {
		const pm_obs *o = &t->obs[i];
		c = mpxkit__pm_core(m, o->core);
		for (size_t k = 0; k < m->n_configs; k++)
			if (m->config_core[k] == (uint32_t)c &&
			    m->configs[k].freq_mhz == o->freq_mhz && !isnan(o->voltage_v))
				vsum[k] += o->voltage_v, vw[k] += 1;
	}
	for (size_t k = 0; k < m->n_configs; k++)
		m->configs[k].voltage_v = vw[k] > 0 ? vsum[k] / vw[k] : NAN;
	free(vsum);
	free(vw);
	return 0;
}

/*
 * Inner folds of the choices made in training (forms, power events): by workload, never by
 * row.  Leave-one-workload-out up to MAX_FOLDS training workloads, so small sets choose on
 * every workload; beyond, MAX_FOLDS folds by workload hash, which bounds the cost.
 */
#define MAX_FOLDS 20

/*
 * A richer form of eq. (1) or (2) is chosen only when its inner cross-validated error is 5 %
 * lower than the simpler one's: with few workloads, smaller gains are noise (doc/predict.md,
 * "Choosing forms").
 */
#define FORM_MARGIN 0.95

static int inner_fold(const pm_obs *o)
{
	return o->fold;
}

/*
 * The event selection refits eq. (7) for every candidate at every step: it groups the inner
 * folds into POWER_FOLDS, still whole workloads, to bound training time (doc/benchmarks.md).
 */
#define POWER_FOLDS 5

static int power_group(const pm_obs *o)
{
	return o->fold % POWER_FOLDS;
}

static int assign_inner_folds(trainer *t, mpxkit_diag *diag)
{
	const char **names = malloc((t->n_obs + 1) * sizeof *names);
	size_t n = 0;

	if (names == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < t->n_obs; i++) {
		size_t k;
		for (k = 0; k < n && strcmp(names[k], t->obs[i].workload) != 0; k++)
			;
		if (k == n)
			names[n++] = t->obs[i].workload;
		t->obs[i].fold = (int)k;
	}
	t->n_folds = n <= MAX_FOLDS ? n : MAX_FOLDS;
	if (n > MAX_FOLDS)
		for (size_t i = 0; i < t->n_obs; i++)
			t->obs[i].fold = (int)(mpxkit_split_hash(t->obs[i].workload) % MAX_FOLDS);
	free(names);
	return 0;
}

/*
 * Eq. (1) in eq. (5), per instruction: tau' - i - b f/f' = (1 - f/f') m, and m is linear in
 * mu, so every ordered pair of frequencies of one workload on core c is one row of a linear
 * fit, weighted by 1/tau'^2 for relative error.  Pairs whose first observation is in inner
 * fold `skip` are left out (-1: none).  With too few pairs the form falls back to none.
 */
static int fit_time_on(const trainer *t, uint32_t core, int form, int skip, pm_time *tm,
		       mpxkit_diag *diag)
{
	const mpxkit_pmodel *m = t->m;
	pm_design d = {.p = form == MPXKIT_MET_MLP || form == MPXKIT_MET_CPI ? 2 : 1};
	double b[2] = {0, 0};
	int rc = 0;

	*tm = (pm_time){.core = core, .form = form};
	for (size_t i = 0; i < t->n_obs && rc == 0 && form != MPXKIT_MET_NONE; i++) {
		const pm_obs *a = &t->obs[i];
		size_t lo, hi;
		if (!a->has_events || strcmp(a->core, m->cores[core]) != 0 ||
		    (form != MPXKIT_MET_CPI && isnan(a->feat.miss_pi)) ||
		    (skip >= 0 && inner_fold(a) == skip))
			continue;
		mpxkit__pm_same_work(t->obs, t->n_obs, i, &lo, &hi);
		for (size_t j = lo; j < hi && rc == 0; j++) {
			const pm_obs *z = &t->obs[j];
			double ratio, row[2];
			if (j == i || !z->has_events || strcmp(z->core, a->core) != 0 ||
			    z->freq_mhz == a->freq_mhz)
				continue;
			ratio = a->feat.f_ghz / z->feat.f_ghz;
			if (form == MPXKIT_MET_CPI) {
				row[0] = 1 - ratio;
				row[1] = (1 - ratio) * a->feat.busy * a->feat.f_ghz;
			} else {
				row[0] = (1 - ratio) * a->feat.miss_pi;
				row[1] = (1 - ratio) * a->feat.miss_pi * a->feat.mpki;
			}
			rc = mpxkit__pm_design_add(
			    &d, row, z->feat.tau - a->feat.idle - a->feat.busy * ratio,
			    relw(t, z->feat.tau));
		}
	}
	if (rc < 0) {
		mpxkit__pm_design_free(&d);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	if (form != MPXKIT_MET_NONE) {
		rc = mpxkit__pm_design_fit(&d, 0, 0, b, diag);
		if (rc == -1) /* too few pairs: no memory term for this core kind */
			tm->form = MPXKIT_MET_NONE, b[0] = b[1] = 0, rc = 0;
	}
	mpxkit__pm_design_free(&d);
	if (rc < 0)
		return rc;
	tm->mu[0] = b[0];
	tm->mu[1] = tm->form == MPXKIT_MET_MLP || tm->form == MPXKIT_MET_CPI ? b[1] : 0;
	return 0;
}

/* Mean relative error of the DVFS time of core c's pairs, each inner fold by the others. */
static int time_cv(const trainer *t, uint32_t core, int form, double *score, mpxkit_diag *diag)
{
	double ape = 0;
	size_t n = 0;

	for (int fold = 0; fold < (int)t->n_folds; fold++) {
		pm_time tm;
		int rc = fit_time_on(t, core, form, fold, &tm, diag);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < t->n_obs; i++) {
			const pm_obs *a = &t->obs[i];
			size_t lo, hi;
			if (!a->has_events || inner_fold(a) != fold ||
			    strcmp(a->core, t->m->cores[core]) != 0)
				continue;
			mpxkit__pm_same_work(t->obs, t->n_obs, i, &lo, &hi);
			for (size_t j = lo; j < hi; j++) {
				const pm_obs *z = &t->obs[j];
				double pred;
				if (j == i || !z->has_events || strcmp(z->core, a->core) != 0 ||
				    z->freq_mhz == a->freq_mhz)
					continue;
				pred =
				    mpxkit__pm_busy_at(&tm, &a->feat, z->feat.f_ghz) + a->feat.idle;
				ape += fabs(pred - z->feat.tau) / z->feat.tau;
				n++;
			}
		}
	}
	*score = n ? ape / (double)n : INFINITY;
	return 0;
}

/*
 * The form of eq. (1) for core c: the one asked for, or with MPXKIT_MET_AUTO the one whose
 * inner cross-validated error is lowest, a richer form only when it is FORM_MARGIN lower.
 */
static int fit_time(trainer *t, uint32_t core, mpxkit_diag *diag)
{
	int form = t->opt->met_form, rc;

	if (form == MPXKIT_MET_AUTO) {
		double best = INFINITY, sc;
		/* From the fewest coefficients to the most. */
		static const int forms[] = {MPXKIT_MET_NONE, MPXKIT_MET_LINEAR, MPXKIT_MET_MLP,
					    MPXKIT_MET_CPI};
		for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
			if ((rc = time_cv(t, core, forms[k], &sc, diag)) < 0)
				return rc;
			if (sc < best * FORM_MARGIN)
				best = sc, form = forms[k];
		}
		if (form == MPXKIT_MET_AUTO)
			form = MPXKIT_MET_NONE;
	}
	rc = fit_time_on(t, core, form, -1, &t->m->time[t->m->n_time], diag);
	if (rc == 0)
		t->m->n_time++;
	return rc;
}

static const pm_time *time_of(const mpxkit_pmodel *m, const char *core)
{
	int c = mpxkit__pm_core(m, core);

	return c >= 0 && m->cfg_time && m->cfg_time[c] >= 0 ? &m->time[m->cfg_time[c]] : NULL;
}

/* Rates in G events per second of wall time (run or window): the sums over the rows. */
void mpxkit__pm_obs_rates(const pm_obs *o, double *r)
{
	for (size_t k = 0; k < o->n_inputs; k++)
		r[k] = o->count[k] / o->time_s * 1e-9;
}

/* An observation power can be fitted on: counts, a time to make rates, a power. */
static int power_usable(const pm_obs *o)
{
	return o->has_events && !isnan(o->power_w) && o->power_w > 0 && o->time_s > 0;
}

/* Whether an observation belongs to the power fit of (core, freq) in this form. */
static int power_member(const trainer *t, const pm_obs *o, uint32_t core, int form, double freq_mhz)
{
	if (!power_usable(o) || strcmp(o->core, t->m->cores[core]) != 0)
		return 0;
	if (form == MPXKIT_POWER_VOLTAGE)
		return !isnan(o->voltage_v);
	return o->freq_mhz == freq_mhz;
}

/* Leading columns that are not event rates, so ridge leaves them alone. */
static size_t power_fixed_columns(int form)
{
	return form == MPXKIT_POWER_VOLTAGE ? 3 : form == MPXKIT_POWER_PER_FREQ_V ? 2 : 1;
}

/*
 * Eq. (7) fitted for (core, freq) on the inputs in mask: P = a0 + sum_k a_k r_k per
 * configuration, with voltage terms per configuration, or with voltage terms over all
 * frequencies of a core kind.  Per configuration with voltage falls back to without it where
 * a training observation has no voltage.  Observations of inner fold `skip` are left out (-1:
 * none).  1 with *p fitted, 0 when there is too little to fit, or a negative code.
 */
static int fit_power_on(const trainer *t, uint32_t core, double freq_mhz, uint64_t mask, int skip,
			pm_power *p, mpxkit_diag *diag)
{
	pm_design d = {0};
	double r[MPXKIT_PMODEL_MAX_COEFS], rate[MPXKIT_PMODEL_MAX_INPUTS];
	double ridge = t->opt->power_ridge < 0 ? 0 : t->opt->power_ridge;
	int rc = 0;

	*p = (pm_power){.core = core, .form = t->opt->power_form, .freq_mhz = freq_mhz};
	for (size_t i = 0; i < t->n_obs && p->form == MPXKIT_POWER_PER_FREQ_V; i++)
		if (power_member(t, &t->obs[i], core, p->form, freq_mhz) &&
		    isnan(t->obs[i].voltage_v))
			p->form = MPXKIT_POWER_PER_FREQ;
	for (size_t i = 0; i < t->n_obs && rc == 0; i++) {
		const pm_obs *o = &t->obs[i];
		if (!power_member(t, o, core, p->form, freq_mhz) ||
		    (skip >= 0 && power_group(o) == skip))
			continue;
		mpxkit__pm_obs_rates(o, rate);
		d.p = mpxkit__pm_power_row(p, mask, rate, o->feat.f_ghz, o->voltage_v, r);
		rc = mpxkit__pm_design_add(&d, r, o->power_w, relw(t, o->power_w));
	}
	if (rc < 0) {
		mpxkit__pm_design_free(&d);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	p->n_coef = d.p;
	rc = d.p == 0 ? -1
	     : t->opt->robust
		 ? mpxkit__pm_design_fit_robust(&d, ridge, power_fixed_columns(p->form), p->coef,
						diag)
		 : mpxkit__pm_design_fit(&d, ridge, power_fixed_columns(p->form), p->coef, diag);
	mpxkit__pm_design_free(&d);
	return rc == -1 ? 0 : rc < 0 ? rc : 1;
}

/* The fits of eq. (7): one per configuration, or one per core kind (VOLTAGE). */
static size_t power_units(const trainer *t)
{
	return t->opt->power_form == MPXKIT_POWER_VOLTAGE ? t->m->n_cores : t->m->n_configs;
}

static void power_unit(const trainer *t, size_t u, uint32_t *core, double *freq)
{
	if (t->opt->power_form == MPXKIT_POWER_VOLTAGE) {
		*core = (uint32_t)u;
		*freq = NAN;
	} else {
		*core = t->m->config_core[u];
		*freq = t->m->configs[u].freq_mhz;
	}
}

/* Mean relative error of eq. (7) on inputs mask, each group of workloads predicted by the rest. */
static int power_cv(const trainer *t, uint64_t mask, double *score, mpxkit_diag *diag)
{
	double ape = 0, rate[MPXKIT_PMODEL_MAX_INPUTS];
	size_t n = 0;

	for (int fold = 0; fold < POWER_FOLDS; fold++)
		for (size_t u = 0; u < power_units(t); u++) {
			pm_power p;
			uint32_t core;
			double freq;
			int rc;
			power_unit(t, u, &core, &freq);
			if ((rc = fit_power_on(t, core, freq, mask, fold, &p, diag)) < 0)
				return rc;
			for (size_t i = 0; i < t->n_obs; i++) {
				const pm_obs *o = &t->obs[i];
				double pred;
				if (power_group(o) != fold ||
				    !power_member(t, o, core, p.form, freq))
					continue;
				mpxkit__pm_obs_rates(o, rate);
				/* A fold without a fit counts as the worst guess, 100 %. */
				pred = rc ? mpxkit__pm_power(&p, mask, rate, o->feat.f_ghz,
							     o->voltage_v)
					  : 0;
				ape += fabs(pred - o->power_w) / o->power_w;
				n++;
			}
		}
	*score = n ? ape / (double)n : INFINITY;
	return 0;
}

/*
 * Power events chosen by forward selection: from the intercept (and voltage) alone, add the
 * event whose inclusion lowers the inner cross-validated error most, while it lowers it by at
 * least 1 % of itself and 0.01 points.  Walker et al. choose their events by a search of this kind.
 */
static int select_power(trainer *t, mpxkit_diag *diag)
{
	mpxkit_pmodel *m = t->m;
	uint64_t chosen = 0, avail = m->power_inputs;
	double best;
	int rc;

	/* Candidates: events every observation with a power counted (others would drop rows). */
	for (size_t i = 0; i < t->n_obs; i++)
		for (size_t k = 0; k < m->n_inputs; k++)
			if (power_usable(&t->obs[i]) && !isfinite(t->obs[i].count[k]))
				avail &= ~(1ull << k);

	if ((rc = power_cv(t, chosen, &best, diag)) < 0)
		return rc;
	for (;;) {
		uint64_t pick = 0;
		double pick_score = best;
		for (size_t i = 0; i < m->n_inputs; i++) {
			double sc;
			if (!(avail & (1ull << i)) || (chosen & (1ull << i)))
				continue;
			if ((rc = power_cv(t, chosen | (1ull << i), &sc, diag)) < 0)
				return rc;
			if (sc < pick_score)
				pick_score = sc, pick = 1ull << i;
		}
		/* Gains below 1 % of the error, or below 0.01 points of MAPE, are noise. */
		if (pick == 0 || pick_score > best * 0.99 || best - pick_score < 1e-4)
			break;
		chosen |= pick;
		best = pick_score;
	}
	m->power_inputs = chosen;
	return 0;
}

static int fit_power(trainer *t, uint32_t core, double freq_mhz, mpxkit_diag *diag)
{
	pm_power p;
	int rc = fit_power_on(t, core, freq_mhz, t->m->power_inputs, -1, &p, diag);

	if (rc == 1)
		t->m->power[t->m->n_power++] = p;
	return rc < 0 ? rc : 0;
}

/* Columns of eq. (2) in each form. */
static size_t xcore_columns(int form)
{
	return form == MPXKIT_XCORE_CPI_MPKI ? 4 : form == MPXKIT_XCORE_CPI ? 3 : 1;
}

/*
 * One pair for eq. (2) with (3): the regressors from the first core's observation a and the
 * CPI the second core showed in z, CPI' = (tau' - i) f' (the ratio form maps the whole time,
 * idle included).  0 when the pair cannot be a row.
 */
static int xcore_row(const trainer *t, int form, const pm_time *tf, const pm_obs *a,
		     const pm_obs *z, double *row, double *y)
{
	double met, tau_z;

	if (!(a->has_events || a->borrowed) || !(z->time_s > 0) ||
	    z->time_kind != MPXKIT_TIME_ELAPSED)
		return 0;
	(void)t;
	tau_z = z->time_s / (double)z->n_runs * 1e9 * z->threads / a->feat.n_inst;
	met = mpxkit__pm_met(tf, &a->feat);
	if (form == MPXKIT_XCORE_RATIO) {
		row[0] = a->feat.tau * a->feat.f_ghz;
		*y = tau_z * z->feat.f_ghz;
	} else {
		row[0] = 1;
		row[1] = (a->feat.busy - met) * a->feat.f_ghz;
		row[2] = met * z->feat.f_ghz;
		row[3] = a->feat.mpki;
		*y = (tau_z - a->feat.idle) * z->feat.f_ghz;
	}
	return 1;
}

/* Eq. (2) from core kind `from` to `to`, leaving out inner fold skip (-1: none). 1, 0, or < 0. */
static int fit_xcore_on(const trainer *t, uint32_t from, uint32_t to, int form, int skip,
			pm_xcore *g, mpxkit_diag *diag)
{
	const mpxkit_pmodel *m = t->m;
	const pm_time *tf = time_of(m, m->cores[from]);
	pm_design d = {.p = xcore_columns(form)};
	double b[4] = {0};
	int rc = 0;

	*g = (pm_xcore){.from = from, .to = to, .form = form};
	for (size_t i = 0; i < t->n_obs && rc == 0; i++) {
		const pm_obs *a = &t->obs[i];
		size_t lo, hi;
		if (strcmp(a->core, m->cores[from]) != 0 || (skip >= 0 && inner_fold(a) == skip))
			continue;
		mpxkit__pm_same_work(t->obs, t->n_obs, i, &lo, &hi);
		for (size_t j = lo; j < hi && rc == 0; j++) {
			double row[4], y;
			if (strcmp(t->obs[j].core, m->cores[to]) == 0 &&
			    xcore_row(t, form, tf, a, &t->obs[j], row, &y))
				rc = mpxkit__pm_design_add(&d, row, y, relw(t, y));
		}
	}
	if (rc < 0) {
		mpxkit__pm_design_free(&d);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	rc = mpxkit__pm_design_fit(&d, 0, 0, b, diag);
	mpxkit__pm_design_free(&d);
	if (rc < 0)
		return rc == -1 ? 0 : rc;
	if (form == MPXKIT_XCORE_RATIO) {
		g->g[1] = b[0];
	} else {
		g->g[0] = b[0];
		g->g[1] = b[1];
		g->g[3] = b[2];
		g->g[2] = form == MPXKIT_XCORE_CPI_MPKI ? b[3] : 0;
	}
	return 1;
}

/* Mean relative error of the predicted time on `to`, each inner fold by the others. */
static int xcore_cv(const trainer *t, uint32_t from, uint32_t to, int form, double *score,
		    mpxkit_diag *diag)
{
	const pm_time *tf = time_of(t->m, t->m->cores[from]);
	double ape = 0;
	size_t n = 0;

	for (int fold = 0; fold < (int)t->n_folds; fold++) {
		pm_xcore g;
		int rc = fit_xcore_on(t, from, to, form, fold, &g, diag);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < t->n_obs; i++) {
			const pm_obs *a = &t->obs[i];
			size_t lo, hi;
			if (inner_fold(a) != fold || strcmp(a->core, t->m->cores[from]) != 0 ||
			    !(a->has_events || a->borrowed))
				continue;
			mpxkit__pm_same_work(t->obs, t->n_obs, i, &lo, &hi);
			for (size_t j = lo; j < hi; j++) {
				const pm_obs *z = &t->obs[j];
				double measured, pred, cpi;
				if (strcmp(z->core, t->m->cores[to]) != 0 || !(z->time_s > 0) ||
				    z->time_kind != MPXKIT_TIME_ELAPSED)
					continue;
				measured = z->time_s / (double)z->n_runs;
				cpi =
				    rc ? mpxkit__pm_xcore_cpi(&g, tf, &a->feat, z->feat.f_ghz) : 0;
				pred = (cpi / z->feat.f_ghz +
					(form == MPXKIT_XCORE_RATIO ? 0 : a->feat.idle)) *
				       a->feat.n_inst / a->feat.threads * 1e-9;
				ape += fabs(pred - measured) / measured;
				n++;
			}
		}
	}
	*score = n ? ape / (double)n : INFINITY;
	return 0;
}

/* Eq. (2): the form asked for, or the one with the lowest inner cross-validated error. */
static int fit_xcore(trainer *t, uint32_t from, uint32_t to, mpxkit_diag *diag)
{
	int form = t->opt->xcore_form, rc;
	pm_xcore g;

	if (form == MPXKIT_XCORE_AUTO) {
		double best = INFINITY, sc;
		for (int f = MPXKIT_XCORE_RATIO; f <= MPXKIT_XCORE_CPI_MPKI; f++) {
			if ((rc = xcore_cv(t, from, to, f, &sc, diag)) < 0)
				return rc;
			if (sc < best * FORM_MARGIN)
				best = sc, form = f;
		}
		if (form == MPXKIT_XCORE_AUTO)
			form = MPXKIT_XCORE_RATIO;
	}
	if ((rc = fit_xcore_on(t, from, to, form, -1, &g, diag)) == 1)
		t->m->xcore[t->m->n_xcore++] = g;
	return rc < 0 ? rc : 0;
}

/* The slot of an event among the inputs, added when new; -1 when full. */
static int input_slot(const char **names, size_t *n, const char *event)
{
	for (size_t i = 0; i < *n; i++)
		if (names[i] && strcmp(names[i], event) == 0)
			return (int)i;
	if (*n == MPXKIT_PMODEL_MAX_INPUTS)
		return -1;
	names[*n] = event;
	return (int)(*n)++;
}

static int counted_anywhere(const mpxkit_pdata *const *sets, size_t n_sets, const char *event)
{
	for (size_t s = 0; s < n_sets; s++)
		if (mpxkit_pdata_event(sets[s], event) >= 0)
			return 1;
	return 0;
}

/* One item of the power list: a role, "all", or an event by name. */
static int power_item(const mpxkit_pdata *const *sets, size_t n_sets, const char *item,
		      int explicit, const char **names, size_t *n, uint64_t *power,
		      mpxkit_diag *diag)
{
	int r = mpxkit_role_lookup(item), slot;

	if (strcmp(item, "roles") == 0) {
		for (int k = 0; k < MPXKIT_ROLE_COUNT; k++)
			if (names[k])
				*power |= 1ull << k;
		return 0;
	}
	if (strcmp(item, "all") == 0) {
		for (size_t s = 0; s < n_sets; s++)
			for (size_t e = 0; e < sets[s]->n_events; e++) {
				if ((slot = input_slot(names, n, sets[s]->events[e])) < 0)
					return mpxkit_fail(diag, MPXKIT_EINVAL,
							   "power events: more "
							   "than %d inputs",
							   MPXKIT_PMODEL_MAX_INPUTS);
				*power |= 1ull << slot;
			}
		return 0;
	}
	if (r >= 0) {
		if (names[r])
			*power |= 1ull << r;
		else if (explicit)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "power event '%s': no dataset names "
					   "the event of that role",
					   item);
		return 0;
	}
	if (!counted_anywhere(sets, n_sets, item))
		return mpxkit_fail(diag, MPXKIT_ENOENT, "power event '%.64s': no dataset counts it",
				   item);
	if ((slot = input_slot(names, n, item)) < 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "power events: more than %d inputs",
				   MPXKIT_PMODEL_MAX_INPUTS);
	*power |= 1ull << slot;
	return 0;
}

int mpxkit__pm_layout(const mpxkit_pdata *const *sets, size_t n_sets,
		      const mpxkit_pmodel_options *opt, const char **names, size_t *n_inputs,
		      uint64_t *power, mpxkit_diag *diag)
{
	/* "auto": every event is a candidate of the selection. */
	static const char *const dflt[] = {"all"};
	const char *const *items = opt->power_events ? opt->power_events : dflt;
	size_t n_items = opt->power_events ? opt->n_power_events : 1, n = MPXKIT_ROLE_COUNT;
	int rc;

	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++) {
		names[r] = NULL;
		for (size_t s = 0; s < n_sets && names[r] == NULL; s++)
			if (sets[s]->role[r] >= 0)
				names[r] = sets[s]->events[sets[s]->role[r]];
	}
	*power = 0;
	for (size_t i = 0; i < n_items; i++)
		if ((rc = power_item(sets, n_sets, items[i], opt->power_events != NULL, names, &n,
				     power, diag)) < 0)
			return rc;
	*n_inputs = n;
	return 0;
}

static int take_inputs(mpxkit_pmodel *m, const char *const *names, size_t n, uint64_t power,
		       mpxkit_diag *diag)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && (m->input[i] = strdup(names[i])) == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	m->n_inputs = n;
	m->power_inputs = power;
	return 0;
}

static int fit_all(trainer *t, mpxkit_diag *diag)
{
	mpxkit_pmodel *m = t->m;
	const pm_time **toc = NULL;
	int rc;

	if ((rc = collect_configs(t, diag)) < 0)
		return rc;
	m->time = calloc(m->n_cores + 1, sizeof *m->time);
	m->power = calloc(m->n_configs + m->n_cores + 1, sizeof *m->power);
	m->xcore = calloc(m->n_cores * m->n_cores + 1, sizeof *m->xcore);
	toc = calloc(m->n_cores + 1, sizeof *toc);
	if (!m->time || !m->power || !m->xcore || !toc) {
		free(toc);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	for (uint32_t c = 0; c < m->n_cores && rc == 0; c++)
		rc = fit_time(t, c, diag);
	if (rc == 0)
		rc = mpxkit__pm_link(m, diag);
	for (size_t c = 0; rc == 0 && c < m->n_cores; c++)
		toc[c] = time_of(m, m->cores[c]);
	if (rc == 0)
		mpxkit__pm_borrow(t->obs, t->n_obs, toc, (const char *const *)m->cores, m->n_cores);
	free(toc);
	if (rc == 0 && t->opt->power_events == NULL)
		rc = select_power(t, diag);
	if (t->opt->power_form == MPXKIT_POWER_VOLTAGE)
		for (uint32_t c = 0; c < m->n_cores && rc == 0; c++)
			rc = fit_power(t, c, NAN, diag);
	else
		for (size_t k = 0; k < m->n_configs && rc == 0; k++)
			rc = fit_power(t, m->config_core[k], m->configs[k].freq_mhz, diag);
	for (uint32_t a = 0; a < m->n_cores && rc == 0; a++)
		for (uint32_t b = 0; b < m->n_cores && rc == 0; b++)
			if (a != b)
				rc = fit_xcore(t, a, b, diag);
	if (rc == 0)
		rc = mpxkit__pm_link(m, diag);
	return rc;
}

int mpxkit_pmodel_train(const mpxkit_pdata *const *sets, size_t n_sets,
			const mpxkit_pmodel_options *opt, mpxkit_pdata_filter keep, void *arg,
			mpxkit_pmodel **out, mpxkit_diag *diag)
{
	mpxkit_pmodel_options dflt;
	const char *names[MPXKIT_PMODEL_MAX_INPUTS];
	size_t n_inputs;
	uint64_t power;
	trainer t = {0};
	int rc;

	if (opt == NULL) {
		mpxkit_pmodel_options_default(&dflt);
		opt = &dflt;
	}
	if (out == NULL || (n_sets && sets == NULL) || opt->met_form < 0 ||
	    opt->met_form > MPXKIT_MET_CPI || opt->power_form < 1 || opt->power_form > 3 ||
	    opt->xcore_form < 1 || opt->xcore_form > MPXKIT_XCORE_AUTO)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict train: bad argument");
	t.opt = opt;
	if ((t.m = calloc(1, sizeof *t.m)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	rc = mpxkit__pm_layout(sets, n_sets, opt, names, &n_inputs, &power, diag);
	if (rc == 0)
		rc = take_inputs(t.m, names, n_inputs, power, diag);
	if (rc == 0)
		rc = mpxkit__pm_observe(sets, n_sets, names, n_inputs, keep, arg, &t.obs, &t.n_obs,
					diag);
	if (rc == 0 && t.n_obs == 0)
		rc = mpxkit_fail(diag, MPXKIT_EINVAL, "predict train: no rows to train on");
	if (rc == 0)
		rc = assign_inner_folds(&t, diag);
	if (rc == 0)
		rc = fit_all(&t, diag);
	if (rc == 0 && t.m->n_power == 0 && t.m->n_xcore == 0 && t.m->n_configs < 2)
		rc = mpxkit_fail(diag, MPXKIT_EINVAL,
				 "predict train: nothing to fit: one configuration, no power");
	if (rc == 0 && opt->data)
		rc = mpxkit__pm_add_meta(t.m, "data", opt->data);
	if (rc == 0 && opt->command)
		rc = mpxkit__pm_add_meta(t.m, "command", opt->command);
	free(t.obs);
	if (rc < 0) {
		if (rc == -MPXKIT_ENOMEM && diag && diag->code == 0)
			mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		mpxkit_pmodel_free(t.m);
		return rc;
	}
	*out = t.m;
	return 0;
}

/* ---- description ------------------------------------------------------------------------------
 */

char *mpxkit_pmodel_describe(const mpxkit_pmodel *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	fprintf(f, "roles:");
	for (int r = 0; r < MPXKIT_ROLE_COUNT; r++)
		if (m->input[r])
			fprintf(f, " %s=%s", mpxkit_role_name(r), m->input[r]);
	fprintf(f, "\npower regressors: 1");
	for (size_t i = 0; i < m->n_inputs; i++)
		if (m->power_inputs & (1ull << i))
			fprintf(f, ", %s", m->input[i]);
	fprintf(f, "\nconfigurations:");
	for (size_t k = 0; k < m->n_configs; k++) {
		fprintf(f, " %s@%g", m->configs[k].core, m->configs[k].freq_mhz);
		if (!isnan(m->configs[k].voltage_v))
			fprintf(f, "(%.3f V)", m->configs[k].voltage_v);
	}
	fputc('\n', f);
	for (size_t i = 0; i < m->n_time; i++) {
		const pm_time *t = &m->time[i];
		fprintf(f, "time %s: MET %s", m->cores[t->core], mpxkit_met_form_name(t->form));
		if (t->form == MPXKIT_MET_LINEAR)
			fprintf(f, ": MET/inst = miss/inst x %.6g ns", t->mu[0]);
		else if (t->form == MPXKIT_MET_MLP)
			fprintf(f, ": MET/inst = miss/inst x (%.6g + %.6g x MPKI) ns", t->mu[0],
				t->mu[1]);
		else if (t->form == MPXKIT_MET_CPI)
			fprintf(f, ": MET/inst = %.6g + %.6g x CPI ns", t->mu[0], t->mu[1]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < m->n_power; i++) {
		const pm_power *p = &m->power[i];
		fprintf(f, "power %s", m->cores[p->core]);
		if (p->form != MPXKIT_POWER_VOLTAGE)
			fprintf(f, "@%g", p->freq_mhz);
		fprintf(f, " (%s):", mpxkit_power_form_name(p->form));
		for (size_t k = 0; k < p->n_coef; k++)
			fprintf(f, " %.6g", p->coef[k]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < m->n_xcore; i++) {
		const pm_xcore *g = &m->xcore[i];
		fprintf(f, "cpi %s -> %s (%s): g0 %.6g, g1 %.6g, g2 %.6g, g8 %.6g\n",
			m->cores[g->from], m->cores[g->to], mpxkit_xcore_form_name(g->form),
			g->g[0], g->g[1], g->g[2], g->g[3]);
	}
	for (size_t i = 0; i < m->n_meta; i++)
		fprintf(f, "%s: %s\n", m->meta_keys[i], m->meta_values[i]);
	if (ferror(f) | (fclose(f) != 0)) {
		free(text);
		return NULL;
	}
	return text;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Evaluation on held-out workloads: splits, folds, MAPE per pair of configurations next to the
 * baselines (doc/predict.md, "Evaluation"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "predict_impl.h"

/* ---- splits -----------------------------------------------------------------------------------
 */

uint64_t mpxkit_split_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

void mpxkit_split_free(mpxkit_split *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n_train; i++)
		free(s->train[i]);
	for (size_t i = 0; i < s->n_test; i++)
		free(s->test[i]);
	free(s->train);
	free(s->test);
	free(s);
}

static int push_name(char ***list, size_t *n, const char *s, size_t len)
{
	char **p = realloc(*list, (*n + 1) * sizeof *p), *c;

	if (p == NULL)
		return -1;
	*list = p;
	if ((c = malloc(len + 1)) == NULL)
		return -1;
	memcpy(c, s, len);
	c[len] = '\0';
	p[(*n)++] = c;
	return 0;
}

/* A split file: '#' header, then "TRAIN<TAB>TEST" lines where either may be empty. */
static int split_line(void *arg, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	mpxkit_split *s = arg;
	const char *tab = memchr(line, '\t', len);
	size_t a = tab ? (size_t)(tab - line) : len, b = tab ? len - a - 1 : 0;

	if (len && line[0] == '#')
		return 0;
	if (len == 0)
		return 0; /* the authors' files end with blank lines */
	if (tab && memchr(tab + 1, '\t', b))
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "split file:%llu: more than two columns",
				   (unsigned long long)no);
	if ((a && !mpxkit__pd_valid_name(line, a, 1)) ||
	    (b && !mpxkit__pd_valid_name(tab + 1, b, 1)))
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "split file:%llu: bad workload name",
				   (unsigned long long)no);
	if ((a && push_name(&s->train, &s->n_train, line, a) < 0) ||
	    (b && push_name(&s->test, &s->n_test, tab + 1, b) < 0))
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	return 0;
}

int mpxkit_split_parse(const char *spec, int validate, mpxkit_split **out, mpxkit_diag *diag)
{
	mpxkit_split *s = calloc(1, sizeof *s);
	uint64_t pct;
	int rc = 0;

	if (s == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	s->validate = validate;
	if (strcmp(spec, "hash") == 0 || strncmp(spec, "hash:", 5) == 0) {
		s->kind = MPXKIT_SPLIT_HASH;
		s->percent = 30;
		if (spec[4] == ':') {
			if (mpxkit__pd_whole(spec + 5, strlen(spec + 5), 99, &pct) < 0 || pct == 0)
				rc = mpxkit_fail(diag, MPXKIT_EINVAL,
						 "split '%.40s': the percentage must be 1 to 99",
						 spec);
			s->percent = (unsigned)pct;
		}
	} else if (strcmp(spec, "loo") == 0) {
		s->kind = MPXKIT_SPLIT_LOO;
	} else {
		s->kind = MPXKIT_SPLIT_FILE;
		rc = mpxkit__pd_each_line(spec, spec, NULL, 0, 1u << 20, "split file", split_line,
					  s, diag);
		if (rc == 0 && (s->n_train == 0 || s->n_test == 0))
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
					 "%s: a split file lists training and test workloads "
					 "(two tab-separated columns)",
					 spec);
		for (size_t i = 0; rc == 0 && i < s->n_train; i++)
			for (size_t j = 0; rc == 0 && j < s->n_test; j++)
				if (strcmp(s->train[i], s->test[j]) == 0)
					rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
							 "%s: '%s' is both a training and a "
							 "test workload",
							 spec, s->train[i]);
	}
	if (rc < 0) {
		mpxkit_split_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static int listed(char *const *names, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], w) == 0)
			return 1;
	return 0;
}

int mpxkit_split_role(const mpxkit_split *s, const char *w)
{
	switch (s->kind) {
	case MPXKIT_SPLIT_HASH:
		return mpxkit_split_hash(w) % 100 < s->percent;
	case MPXKIT_SPLIT_FILE:
		if (listed(s->test, s->n_test, w))
			return 1;
		return listed(s->train, s->n_train, w) ? 0 : -1;
	default:
		return 0; /* LOO: every workload trains, and is tested in its own fold */
	}
}

const char *mpxkit_eval_target_name(int target)
{
	static const char *const names[] = {"time", "power", "energy"};
	return target >= 0 && target < 3 ? names[target] : "?";
}

/* ---- accumulating errors ----------------------------------------------------------------------
 */

typedef struct acc {
	mpxkit_eval_row row;
	double ape, base_ape; /* sums */
	int kind;	      /* pair kind: 0 same config, 1 same core, 2 cross-core */
	int adjacent, extreme;
} acc;

typedef struct evaluator {
	const mpxkit_pdata *const *sets;
	size_t n_sets;
	const mpxkit_split *split;
	const mpxkit_pmodel_options *opt;
	pm_obs *all;
	size_t n_all;
	/* workloads by name across datasets, and the fold of each */
	size_t n_names;
	const char **names;
	int *fold; /* -1: trains in every fold; -2: left out; k: tested in fold k */
	size_t n_folds;
	int cur_fold;
	size_t n_acc, cap_acc;
	acc *accs;
	size_t n_points, cap_points;
	mpxkit_eval_point *points;
	double train_seconds;
} evaluator;

static int name_index(const evaluator *e, const char *w)
{
	for (size_t i = 0; i < e->n_names; i++)
		if (strcmp(e->names[i], w) == 0)
			return (int)i;
	return -1;
}

/* The filter of mpxkit_pmodel_train: workloads that train in the current fold. */
static int keep_training(void *arg, const mpxkit_pdata *d, size_t w)
{
	const evaluator *e = arg;
	int i = name_index(e, d->workloads[w]);

	return i >= 0 && e->fold[i] != -2 && e->fold[i] != e->cur_fold;
}

static int assign_folds(evaluator *e, mpxkit_diag *diag)
{
	for (size_t i = 0; i < e->n_all; i++)
		if (name_index(e, e->all[i].workload) < 0) {
			const char **p = realloc(e->names, (e->n_names + 1) * sizeof *p);
			if (p == NULL)
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
			e->names = p;
			e->names[e->n_names++] = e->all[i].workload;
		}
	if ((e->fold = malloc((e->n_names + 1) * sizeof *e->fold)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	e->n_folds = 0;
	for (size_t i = 0; i < e->n_names; i++) {
		int role = mpxkit_split_role(e->split, e->names[i]);
		if (role < 0 || (e->split->validate && role == 1)) {
			e->fold[i] = -2; /* the test part stays unseen while choosing */
		} else if (e->split->kind == MPXKIT_SPLIT_LOO || e->split->validate) {
			e->fold[i] = (int)e->n_folds++;
		} else {
			e->fold[i] = role == 1 ? 0 : -1;
			e->n_folds = 1;
		}
	}
	return 0;
}

static void config_name(const pm_obs *o, char *out, size_t cap)
{
	snprintf(out, cap, "%.60s@%g", o->core, o->freq_mhz);
}

static acc *find_acc(evaluator *e, const char *dataset, int target, const pm_obs *a,
		     const pm_obs *z)
{
	char from[96], to[96];
	acc *x;

	config_name(a, from, sizeof from);
	config_name(z, to, sizeof to);
	for (size_t i = 0; i < e->n_acc; i++) {
		x = &e->accs[i];
		if (x->row.target == target && strcmp(x->row.dataset, dataset) == 0 &&
		    strcmp(x->row.from, from) == 0 && strcmp(x->row.to, to) == 0)
			return x;
	}
	if ((x = mpxkit__pd_grow(e->accs, &e->cap_acc, e->n_acc, sizeof *x)) == NULL)
		return NULL;
	e->accs = x;
	x = &e->accs[e->n_acc++];
	memset(x, 0, sizeof *x);
	x->row.dataset = dataset;
	x->row.target = target;
	snprintf(x->row.from, sizeof x->row.from, "%s", from);
	snprintf(x->row.to, sizeof x->row.to, "%s", to);
	x->kind = strcmp(a->core, z->core) != 0 ? 2 : a->freq_mhz == z->freq_mhz ? 0 : 1;
	return x;
}

static int add_point(evaluator *e, const char *dataset, int target, const pm_obs *a,
		     const pm_obs *z, double measured, double predicted, const char *baseline,
		     double base)
{
	mpxkit_eval_point *p;
	acc *x;

	if (!(measured > 0) || !isfinite(predicted))
		return 0;
	if ((x = find_acc(e, dataset, target, a, z)) == NULL)
		return -1;
	x->row.baseline = baseline;
	x->ape += fabs(predicted - measured) / measured;
	x->base_ape += fabs(base - measured) / measured;
	x->row.n++;
	p = mpxkit__pd_grow(e->points, &e->cap_points, e->n_points, sizeof *p);
	if (p == NULL)
		return -1;
	e->points = p;
	e->points[e->n_points++] = (mpxkit_eval_point){
	    target, (size_t)(x - e->accs), z->workload, z->threads, measured, predicted, base};
	return 0;
}

/* ---- baselines fitted on the training part ----------------------------------------------------
 */

typedef struct baselines {
	/* constant CPI ratio per (from core, to core): T' = k T f / f' */
	double k_num[64], k_den[64];
	/* mean power per (core, freq) configuration of the model */
	double *p_num, *p_den;
} baselines;

static int in_training(const evaluator *e, const pm_obs *o)
{
	int i = name_index(e, o->workload);
	return i >= 0 && e->fold[i] != -2 && e->fold[i] != e->cur_fold;
}

static int config_index(const mpxkit_pmodel *m, const pm_obs *o)
{
	int c = mpxkit__pm_core(m, o->core);

	for (size_t k = 0; c >= 0 && k < m->n_configs; k++)
		if (m->config_core[k] == (uint32_t)c && m->configs[k].freq_mhz == o->freq_mhz)
			return (int)k;
	return -1;
}

static double per_run_time(const pm_obs *o)
{
	return o->time_s / (double)o->n_runs;
}

static void fit_baselines(const evaluator *e, const mpxkit_pmodel *m, baselines *b)
{
	size_t nc = m->n_cores;

	memset(b->k_num, 0, sizeof b->k_num);
	memset(b->k_den, 0, sizeof b->k_den);
	for (size_t k = 0; k < m->n_configs; k++)
		b->p_num[k] = b->p_den[k] = 0;
	for (size_t i = 0; i < e->n_all; i++) {
		const pm_obs *a = &e->all[i];
		int ka, ca;
		if (!in_training(e, a))
			continue;
		ka = config_index(m, a);
		ca = mpxkit__pm_core(m, a->core);
		/* The constant that minimises relative error: sum(1/y) / sum(1/y^2). */
		if (ka >= 0 && a->power_w > 0 && a->has_events) {
			b->p_num[ka] += 1 / a->power_w;
			b->p_den[ka] += 1 / (a->power_w * a->power_w);
		}
		size_t lo, hi;
		if (ca < 0 || nc * nc > 64 || !(a->time_s > 0))
			continue;
		mpxkit__pm_same_work(e->all, e->n_all, i, &lo, &hi);
		for (size_t j = lo; j < hi; j++) {
			const pm_obs *z = &e->all[j];
			int cz;
			double x, r;
			if (strcmp(z->core, a->core) == 0 || !(z->time_s > 0) ||
			    (cz = mpxkit__pm_core(m, z->core)) < 0)
				continue;
			x = per_run_time(a) * a->freq_mhz / z->freq_mhz;
			r = x / per_run_time(z);
			b->k_num[ca * nc + cz] += r;
			b->k_den[ca * nc + cz] += r * r;
		}
	}
}

/* ---- one fold ---------------------------------------------------------------------------------
 */

static double vratio2(double v_to, double v_from)
{
	return (v_to / v_from) * (v_to / v_from);
}

static int eval_pair(evaluator *e, const mpxkit_pmodel *m, const baselines *bl, const pm_obs *a,
		     const pm_obs *z, const mpxkit_prediction *pred, const double *tau)
{
	const char *ds = e->sets[z->set]->name;
	int kz = config_index(m, z), window = a->time_kind == MPXKIT_TIME_WINDOW;
	int ca = mpxkit__pm_core(m, a->core), cz = mpxkit__pm_core(m, z->core);
	const mpxkit_prediction *p;
	double vz;
	int rc = 0;

	if (kz < 0)
		return 0; /* a configuration no training workload ran: nothing to predict with */
	p = &pred[kz];
	vz = m->configs[kz].voltage_v;
	if (a != z && ca == cz && a->has_events) {
		/* DVFS time: the run's time, or time per instruction for windows.  Borrowed
		 * features are for cross-core pairs only: their busy time is itself a DVFS
		 * prediction. */
		if (window)
			rc = add_point(e, ds, MPXKIT_TARGET_TIME, a, z, z->feat.busy, tau[kz],
				       "f/f'", a->feat.busy * a->freq_mhz / z->freq_mhz);
		else
			rc = add_point(e, ds, MPXKIT_TARGET_TIME, a, z, per_run_time(z), p->time_s,
				       "f/f'", per_run_time(a) * a->freq_mhz / z->freq_mhz);
	} else if (a != z && !window) {
		double k = bl->k_den[ca * m->n_cores + cz] > 0
			       ? bl->k_num[ca * m->n_cores + cz] / bl->k_den[ca * m->n_cores + cz]
			       : NAN;
		rc = add_point(e, ds, MPXKIT_TARGET_TIME, a, z, per_run_time(z), p->time_s,
			       "cpi-ratio", k * per_run_time(a) * a->freq_mhz / z->freq_mhz);
	}
	if (rc == 0 && a == z && a->has_events && a->power_w > 0) {
		double mean = bl->p_den[kz] > 0 ? bl->p_num[kz] / bl->p_den[kz] : NAN;
		rc = add_point(e, ds, MPXKIT_TARGET_POWER, a, z, z->power_w, p->power_w, "mean",
			       mean);
	}
	/* Across frequencies, window averages are not the work's power (doc/predict-format.md). */
	if (rc == 0 && a != z && ca == cz && !window && a->has_events && z->power_w > 0 &&
	    a->power_w > 0) {
		double e_to = z->power_w * per_run_time(z), e_from = a->power_w * per_run_time(a);
		double v2 = vratio2(vz, a->voltage_v);
		rc = add_point(e, ds, MPXKIT_TARGET_POWER, a, z, z->power_w, p->power_w,
			       "P(V'/V)^2 f'/f", a->power_w * v2 * z->freq_mhz / a->freq_mhz);
		if (rc == 0)
			rc = add_point(e, ds, MPXKIT_TARGET_ENERGY, a, z, e_to, p->energy_j,
				       "E(V'/V)^2", e_from * v2);
	}
	return rc;
}

static int run_fold(evaluator *e, int fold, mpxkit_diag *diag)
{
	mpxkit_pmodel *m = NULL;
	pm_obs *obs = NULL;
	const pm_time **toc = NULL;
	mpxkit_prediction *pred = NULL, *bare = NULL;
	double *tau = NULL;
	baselines bl = {0};
	struct timespec t0, t1;
	int rc;

	e->cur_fold = fold;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	rc = mpxkit_pmodel_train(e->sets, e->n_sets, e->opt, keep_training, e, &m, diag);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	e->train_seconds +=
	    (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	if (rc < 0)
		return rc;
	obs = malloc((e->n_all + 1) * sizeof *obs);
	toc = calloc(m->n_cores + 1, sizeof *toc);
	pred = malloc((m->n_configs + 1) * sizeof *pred);
	bare = malloc((m->n_configs + 1) * sizeof *bare);
	tau = malloc((m->n_configs + 1) * sizeof *tau);
	bl.p_num = calloc(m->n_configs + 1, sizeof *bl.p_num);
	bl.p_den = calloc(m->n_configs + 1, sizeof *bl.p_den);
	if (!obs || !toc || !pred || !bare || !tau || !bl.p_num || !bl.p_den) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto out;
	}
	/* Borrowing moves busy time with this fold's time model. */
	memcpy(obs, e->all, e->n_all * sizeof *obs);
	for (size_t c = 0; c < m->n_cores; c++)
		toc[c] = m->cfg_time[c] >= 0 ? &m->time[m->cfg_time[c]] : NULL;
	mpxkit__pm_borrow(obs, e->n_all, toc, (const char *const *)m->cores, m->n_cores);
	fit_baselines(e, m, &bl);
	for (size_t i = 0; rc == 0 && i < e->n_all; i++) {
		const pm_obs *a = &obs[i];
		double rate[MPXKIT_PMODEL_MAX_INPUTS];
		int wi = name_index(e, a->workload), ca = mpxkit__pm_core(m, a->core);
		size_t lo, hi;
		if (wi < 0 || e->fold[wi] != fold || ca < 0 || !(a->has_events || a->borrowed))
			continue;
		mpxkit__pm_obs_rates(a, rate);
		/* Power at the own configuration from the counters alone; elsewhere anchored by
		 * the power measured here, as mpxkit_predict does with a measured power. */
		mpxkit__pm_predict_feat(m, ca, &a->feat, rate, NAN, bare, NULL);
		mpxkit__pm_predict_feat(m, ca, &a->feat, rate, e->opt->no_anchor ? NAN : a->power_w,
					pred, tau);
		mpxkit__pm_same_work(obs, e->n_all, i, &lo, &hi);
		for (size_t j = lo; rc == 0 && j < hi; j++)
			rc = eval_pair(e, m, &bl, a, &obs[j], &obs[j] == a ? bare : pred, tau);
	}
	if (rc < 0 && rc != -MPXKIT_ENOMEM)
		rc = -MPXKIT_ENOMEM;
	if (rc < 0)
		mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
out:
	free(obs);
	free(toc);
	free(pred);
	free(bare);
	free(tau);
	free(bl.p_num);
	free(bl.p_den);
	mpxkit_pmodel_free(m);
	return rc;
}

/* ---- summaries --------------------------------------------------------------------------------
 */

/* Marks pairs of adjacent frequencies and the extreme pair per (dataset, core kind). */
static void mark_pairs(evaluator *e)
{
	for (size_t i = 0; i < e->n_acc; i++) {
		acc *x = &e->accs[i];
		const char *af = strrchr(x->row.from, '@'), *tf = strrchr(x->row.to, '@');
		double f1 = af ? atof(af + 1) : 0, f2 = tf ? atof(tf + 1) : 0, lo, hi;
		double fmin = INFINITY, fmax = -INFINITY;
		int between = 0;
		if (x->kind != 1)
			continue;
		lo = f1 < f2 ? f1 : f2;
		hi = f1 < f2 ? f2 : f1;
		/* Frequencies of the same core and dataset seen in any pair. */
		for (size_t j = 0; j < e->n_acc; j++) {
			const acc *y = &e->accs[j];
			const char *yf = strrchr(y->row.from, '@');
			double f;
			if (y->kind != 1 || strcmp(y->row.dataset, x->row.dataset) != 0 ||
			    (size_t)(yf - y->row.from) != (size_t)(af - x->row.from) ||
			    strncmp(y->row.from, x->row.from, (size_t)(af - x->row.from)) != 0)
				continue;
			f = atof(yf + 1);
			fmin = f < fmin ? f : fmin;
			fmax = f > fmax ? f : fmax;
			between |= f > lo && f < hi;
		}
		x->adjacent = !between;
		x->extreme = lo == fmin && hi == fmax;
	}
}

static int push_row(mpxkit_eval_result *r, const mpxkit_eval_row *row)
{
	mpxkit_eval_row *p = realloc(r->rows, (r->n_rows + 1) * sizeof *p);

	if (p == NULL)
		return -1;
	r->rows = p;
	r->rows[r->n_rows++] = *row;
	return 0;
}

/* Pooled MAPE over the pairs of one kind: same-config, adjacent, extreme, all, cross. */
static int summarise(const evaluator *e, mpxkit_eval_result *r, const char *ds, int target)
{
	static const char *const groups[] = {"same", "adjacent", "extreme", "all", "cross"};

	for (int g = 0; g < 5; g++) {
		mpxkit_eval_row row = {.dataset = ds, .target = target, .summary = 1};
		double ape = 0, base = 0;
		for (size_t i = 0; i < e->n_acc; i++) {
			const acc *x = &e->accs[i];
			int in = g == 0	  ? x->kind == 0
				 : g == 1 ? x->kind == 1 && x->adjacent
				 : g == 2 ? x->kind == 1 && x->extreme
				 : g == 3 ? x->kind == 1
					  : x->kind == 2;
			if (!in || x->row.target != target || strcmp(x->row.dataset, ds) != 0)
				continue;
			ape += x->ape;
			base += x->base_ape;
			row.n += x->row.n;
			row.baseline = x->row.baseline;
		}
		if (row.n == 0)
			continue;
		snprintf(row.from, sizeof row.from, "%s", groups[g]);
		snprintf(row.to, sizeof row.to, "*");
		row.mape = 100 * ape / (double)row.n;
		row.baseline_mape = 100 * base / (double)row.n;
		if (push_row(r, &row) < 0)
			return -1;
	}
	return 0;
}

static int build_result(evaluator *e, mpxkit_eval_result *r)
{
	size_t *map = malloc((e->n_acc + 1) * sizeof *map);

	if (map == NULL)
		return -1;
	mark_pairs(e);
	/* Summaries first, per dataset and target, then every pair. */
	for (size_t s = 0; s < e->n_sets; s++) {
		int seen = 0;
		for (size_t t = 0; t < s; t++)
			seen |= strcmp(e->sets[t]->name, e->sets[s]->name) == 0;
		for (int target = 0; !seen && target < 3; target++)
			if (summarise(e, r, e->sets[s]->name, target) < 0)
				goto fail;
	}
	for (size_t i = 0; i < e->n_acc; i++) {
		mpxkit_eval_row row = e->accs[i].row;
		row.mape = 100 * e->accs[i].ape / (double)row.n;
		row.baseline_mape = 100 * e->accs[i].base_ape / (double)row.n;
		map[i] = r->n_rows;
		if (push_row(r, &row) < 0)
			goto fail;
	}
	for (size_t i = 0; i < e->n_points; i++)
		e->points[i].row = map[e->points[i].row];
	r->points = e->points;
	r->n_points = e->n_points;
	e->points = NULL;
	free(map);
	return 0;
fail:
	free(map);
	return -1;
}

void mpxkit_eval_result_free(mpxkit_eval_result *r)
{
	if (r == NULL)
		return;
	free(r->rows);
	free(r->points);
	free(r);
}

int mpxkit_predict_eval(const mpxkit_pdata *const *sets, size_t n_sets, const mpxkit_split *split,
			const mpxkit_pmodel_options *opt, mpxkit_eval_result **out,
			mpxkit_diag *diag)
{
	evaluator e = {.sets = sets, .n_sets = n_sets, .split = split, .opt = opt};
	mpxkit_eval_result *r = NULL;
	const char *names[MPXKIT_PMODEL_MAX_INPUTS];
	size_t n_inputs;
	uint64_t power;
	mpxkit_pmodel_options dflt;
	int rc;

	if (out == NULL || split == NULL || n_sets == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "predict eval: bad argument");
	if (opt == NULL) {
		mpxkit_pmodel_options_default(&dflt);
		e.opt = opt = &dflt;
	}
	rc = mpxkit__pm_layout(sets, n_sets, opt, names, &n_inputs, &power, diag);
	if (rc == 0)
		rc = mpxkit__pm_observe(sets, n_sets, names, n_inputs, NULL, NULL, &e.all, &e.n_all,
					diag);
	if (rc == 0)
		rc = assign_folds(&e, diag);
	if (rc == 0 && (r = calloc(1, sizeof *r)) == NULL)
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (rc == 0 && e.n_folds == 0)
		rc = mpxkit_fail(diag, MPXKIT_EINVAL,
				 "predict eval: the split holds out no workload");
	for (size_t f = 0; rc == 0 && f < e.n_folds; f++)
		rc = run_fold(&e, (int)f, diag);
	if (rc == 0 && build_result(&e, r) < 0)
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (rc == 0) {
		for (size_t i = 0; i < e.n_names; i++) {
			r->n_test_workloads += e.fold[i] >= 0;
			r->n_left_out += e.fold[i] == -2 && !split->validate;
		}
		r->n_folds = e.n_folds;
		r->train_seconds = e.train_seconds;
	}
	free(e.all);
	free(e.names);
	free(e.fold);
	free(e.accs);
	free(e.points);
	if (rc < 0) {
		mpxkit_eval_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

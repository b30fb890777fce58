/* SPDX-License-Identifier: BSD-3-Clause */
/* Observations: the rows of one workload on one configuration summed over runs (doc/predict.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "predict_impl.h"

typedef struct row_ref {
	const mpxkit_pdata *d;
	size_t set, row;
	const int *col; /* the dataset's column of each input, -1 */
} row_ref;

static int cmp_rows(const void *a, const void *b)
{
	const row_ref *x = a, *y = b;
	const mpxkit_pdata_row *p = &x->d->rows[x->row], *q = &y->d->rows[y->row];
	int c;

	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	if ((c = strcmp(x->d->workloads[p->workload], y->d->workloads[q->workload])) != 0)
		return c;
	if (p->threads != q->threads)
		return p->threads < q->threads ? -1 : 1;
	if ((c = strcmp(x->d->cores[p->core], y->d->cores[q->core])) != 0)
		return c;
	if (p->freq_mhz != q->freq_mhz)
		return p->freq_mhz < q->freq_mhz ? -1 : 1;
	if (p->run != q->run)
		return p->run < q->run ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

static int same_group(const row_ref *x, const row_ref *y)
{
	const mpxkit_pdata_row *p = &x->d->rows[x->row], *q = &y->d->rows[y->row];

	return x->set == y->set && p->workload == q->workload && p->threads == q->threads &&
	       p->core == q->core && p->freq_mhz == q->freq_mhz;
}

/* Sums one group of rows [a, b) into an observation. */
static void sum_group(const row_ref *refs, size_t a, size_t b, size_t n_inputs, pm_obs *o)
{
	const int *col = refs[a].col;
	const mpxkit_pdata *d = refs[a].d;
	const mpxkit_pdata_row *r0 = &d->rows[refs[a].row];
	double pt = 0, ptw = 0, vt = 0, vtw = 0;
	int have_power = 1, have_volt = 1;

	memset(o, 0, sizeof *o);
	o->set = refs[a].set;
	o->workload_idx = r0->workload;
	o->workload = d->workloads[r0->workload];
	o->core = d->cores[r0->core];
	o->freq_mhz = r0->freq_mhz;
	o->threads = r0->threads;
	o->time_kind = d->time_kind;
	o->n_inputs = n_inputs;
	for (size_t k = 0; k < n_inputs; k++)
		o->count[k] = col[k] >= 0 ? 0 : NAN;
	for (size_t i = a; i < b; i++) {
		const mpxkit_pdata_row *r = &d->rows[refs[i].row];
		const double *v = d->values + refs[i].row * d->n_events;
		/* The weight of a row's power and voltage: its time, or 1 when it has none. */
		double w = isnan(r->time_s) ? 1 : r->time_s;
		if (i == a || r->run != d->rows[refs[i - 1].row].run)
			o->n_runs++;
		o->time_s += r->time_s; /* NaN sticks */
		for (size_t k = 0; k < n_inputs; k++)
			if (col[k] >= 0)
				o->count[k] += v[col[k]];
		if (isnan(r->power_w))
			have_power = 0;
		else
			pt += r->power_w * w, ptw += w;
		if (isnan(r->voltage_v))
			have_volt = 0;
		else
			vt += r->voltage_v * w, vtw += w;
	}
	o->power_w = have_power ? pt / ptw : NAN;
	o->voltage_v = have_volt ? vt / vtw : NAN;
	o->has_events = mpxkit__pm_features(o->count, n_inputs, o->freq_mhz, o->threads, o->time_s,
					    o->time_kind, o->power_w, o->voltage_v, &o->feat) == 0;
	/* Work and time per run, so observations with different numbers of runs compare. */
	o->feat.n_inst /= (double)o->n_runs;
	o->feat.time_s /= (double)o->n_runs;
}

int mpxkit__pm_observe(const mpxkit_pdata *const *sets, size_t n_sets, const char *const *names,
		       size_t n_inputs, mpxkit_pdata_filter keep, void *arg, pm_obs **out,
		       size_t *n_out, mpxkit_diag *diag)
{
	size_t n = 0, k = 0, n_obs = 0;
	row_ref *refs;
	int *cols;
	pm_obs *obs;

	for (size_t s = 0; s < n_sets; s++)
		n += sets[s]->n_rows;
	refs = malloc((n + 1) * sizeof *refs);
	cols = malloc((n_sets * n_inputs + 1) * sizeof *cols);
	if (refs == NULL || cols == NULL) {
		free(refs);
		free(cols);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	/* Roles through each dataset's own role metadata, power events by name. */
	for (size_t s = 0; s < n_sets; s++)
		for (size_t i = 0; i < n_inputs; i++)
			cols[s * n_inputs + i] = i < MPXKIT_ROLE_COUNT ? sets[s]->role[i]
						 : names[i] ? mpxkit_pdata_event(sets[s], names[i])
							    : -1;
	for (size_t s = 0; s < n_sets; s++)
		for (size_t i = 0; i < n_inputs; i++)
			if (cols[s * n_inputs + i] < 0)
				cols[s * n_inputs + i] = -1;
	for (size_t s = 0; s < n_sets; s++)
		for (size_t r = 0; r < sets[s]->n_rows; r++)
			if (keep == NULL || keep(arg, sets[s], sets[s]->rows[r].workload))
				refs[k++] = (row_ref){sets[s], s, r, cols + s * n_inputs};
	qsort(refs, k, sizeof *refs, cmp_rows);
	for (size_t i = 0; i < k; i++)
		n_obs += i == 0 || !same_group(&refs[i - 1], &refs[i]);
	if ((obs = calloc(n_obs + 1, sizeof *obs)) == NULL) {
		free(refs);
		free(cols);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	n_obs = 0;
	for (size_t a = 0, b; a < k; a = b) {
		for (b = a + 1; b < k && same_group(&refs[a], &refs[b]); b++)
			;
		sum_group(refs, a, b, n_inputs, &obs[n_obs++]);
	}
	free(refs);
	free(cols);
	*out = obs;
	*n_out = n_obs;
	return 0;
}

static int core_index(const char *const *cores, size_t n, const char *core)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(cores[i], core) == 0)
			return (int)i;
	return -1;
}

void mpxkit__pm_borrow(pm_obs *obs, size_t n, const pm_time *const *time_of_core,
		       const char *const *cores, size_t n_cores)
{
	for (size_t i = 0; i < n; i++) {
		pm_obs *o = &obs[i];
		const pm_obs *best = NULL;
		const pm_time *t;
		double per_run_time, busy;
		int c;
		if (o->has_events || !(o->time_s > 0) || o->time_kind != MPXKIT_TIME_ELAPSED)
			continue;
		for (size_t j = 0; j < n; j++) {
			const pm_obs *s = &obs[j];
			if (!s->has_events || s->threads != o->threads ||
			    strcmp(s->workload, o->workload) != 0 || strcmp(s->core, o->core) != 0)
				continue;
			if (best == NULL ||
			    fabs(s->freq_mhz - o->freq_mhz) < fabs(best->freq_mhz - o->freq_mhz))
				best = s;
		}
		if (best == NULL)
			continue;
		c = core_index(cores, n_cores, o->core);
		t = c >= 0 ? time_of_core[c] : NULL;
		/* Work per run as the source counted it, busy time moved to our frequency, and
		 * the rest of our own time idle. */
		per_run_time = o->time_s / (double)o->n_runs;
		o->feat = best->feat;
		o->feat.f_ghz = o->freq_mhz * 1e-3;
		busy = mpxkit__pm_busy_at(t, &best->feat, o->feat.f_ghz);
		o->feat.busy = busy;
		o->feat.idle = per_run_time * 1e9 * o->threads / o->feat.n_inst - busy;
		if (o->feat.idle < 0)
			o->feat.idle = 0;
		o->feat.tau = o->feat.busy + o->feat.idle;
		o->feat.time_s = per_run_time;
		o->feat.power_w = o->power_w;
		o->feat.voltage_v = o->voltage_v;
		o->borrowed = 1;
	}
}

static int same_work(const pm_obs *a, const pm_obs *b)
{
	return a->set == b->set && a->workload_idx == b->workload_idx && a->threads == b->threads;
}

void mpxkit__pm_same_work(const pm_obs *obs, size_t n, size_t i, size_t *lo, size_t *hi)
{
	size_t a = i, b = i + 1;

	while (a > 0 && same_work(&obs[a - 1], &obs[i]))
		a--;
	while (b < n && same_work(&obs[b], &obs[i]))
		b++;
	*lo = a;
	*hi = b;
}

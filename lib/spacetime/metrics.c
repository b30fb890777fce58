/* SPDX-License-Identifier: BSD-3-Clause */
/* The analyser's tables: events by name, the cost model, metrics with their classes, weights and
 * floors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spacetime_impl.h"

/* The profile's event names for each known event (callgrind's, then lib/source's perf names). */
static const char *const event_names[N_EV] = {
    [EV_IR] = "Ir",
    [EV_DR] = "Dr",
    [EV_DW] = "Dw",
    [EV_I1MR] = "I1mr",
    [EV_D1MR] = "D1mr",
    [EV_D1MW] = "D1mw",
    [EV_ILMR] = "ILmr",
    [EV_DLMR] = "DLmr",
    [EV_DLMW] = "DLmw",
    [EV_BC] = "Bc",
    [EV_BCM] = "Bcm",
    [EV_BI] = "Bi",
    [EV_BIM] = "Bim",
    [EV_SAMPLES] = "samples",
    [EV_CPU_CLOCK] = "perf::CPU-CLOCK",
    [EV_TASK_CLOCK] = "perf::TASK-CLOCK",
    [EV_FAULTS] = "perf::PAGE-FAULTS",
    [EV_CSW] = "perf::CONTEXT-SWITCHES",
    [EV_CYCLES] = "perf::CYCLES",
    [EV_INSTRUCTIONS] = "perf::INSTRUCTIONS",
    [EV_BRANCHES] = "perf::BRANCHES",
    [EV_BRANCH_MISSES] = "perf::BRANCH-MISSES",
    [EV_CACHE_REFS] = "perf::CACHE-REFERENCES",
    [EV_CACHE_MISSES] = "perf::CACHE-MISSES",
};

/*
 * KCachegrind's cycle estimation (doc/spacetime.md, "Cost"): 10 cycles for
 * an L1 miss or a misprediction, 100 more for a last-level miss.
 */
#define CYCLES_L1_MISS	  10.0
#define CYCLES_LL_MISS	  100.0
#define CYCLES_MISPREDICT 10.0
/* Software events, in ns, as measured by bench/bench_spacetime costs (doc/benchmarks.md). */
#define NS_PAGE_FAULT	  6000.0
#define NS_CONTEXT_SWITCH 5000.0

/* clang-format off */
static const st_metric_def metric_defs[] = {
	{MPXKIT_METRIC_I1_MPKI, EVB(EV_I1MR), EVB(EV_IR), 1000, MPXKIT_CLASS_I1_MISS,
	 CYCLES_L1_MISS, 0, 5, 0, "I1 misses"},
	{MPXKIT_METRIC_I1_MISS_RATIO, EVB(EV_I1MR), EVB(EV_IR), 1, -1, 0, 0, 0, 0, "I1 misses"},
	{MPXKIT_METRIC_D1_MPKI, EVB(EV_D1MR) | EVB(EV_D1MW), EVB(EV_IR), 1000, MPXKIT_CLASS_D1_MISS,
	 CYCLES_L1_MISS, 0, 5, 0, "D1 misses"},
	{MPXKIT_METRIC_D1_MISS_RATIO, EVB(EV_D1MR) | EVB(EV_D1MW), EVB(EV_DR) | EVB(EV_DW), 1, -1,
	 0, 0, 0, 0, "D1 misses"},
	{MPXKIT_METRIC_LL_MPKI, EVB(EV_ILMR) | EVB(EV_DLMR) | EVB(EV_DLMW), EVB(EV_IR), 1000,
	 MPXKIT_CLASS_LL_MISS, CYCLES_LL_MISS, 0, 0.5, 0, "LL misses"},
	{MPXKIT_METRIC_LL_MPKI, EVB(EV_CACHE_MISSES), EVB(EV_INSTRUCTIONS), 1000,
	 MPXKIT_CLASS_LL_MISS, CYCLES_LL_MISS, 0, 0.5, 0, "LL misses"},
	{MPXKIT_METRIC_LL_MISS_RATIO, EVB(EV_ILMR) | EVB(EV_DLMR) | EVB(EV_DLMW),
	 EVB(EV_I1MR) | EVB(EV_D1MR) | EVB(EV_D1MW), 1, -1, 0, 0, 0, 0, "LL misses"},
	{MPXKIT_METRIC_LL_MISS_RATIO, EVB(EV_CACHE_MISSES), EVB(EV_CACHE_REFS), 1, -1, 0, 0, 0, 0,
	 "LL misses"},
	{MPXKIT_METRIC_BRANCH_MISPREDICT_RATIO, EVB(EV_BCM), EVB(EV_BC), 1,
	 MPXKIT_CLASS_BRANCH_MISPREDICT, CYCLES_MISPREDICT, 0, 0.05, 0, "branch mispredictions"},
	{MPXKIT_METRIC_BRANCH_MISPREDICT_RATIO, EVB(EV_BRANCH_MISSES), EVB(EV_BRANCHES), 1,
	 MPXKIT_CLASS_BRANCH_MISPREDICT, CYCLES_MISPREDICT, 0, 0.05, 0, "branch mispredictions"},
	{MPXKIT_METRIC_INDIRECT_MISPREDICT_RATIO, EVB(EV_BIM), EVB(EV_BI), 1,
	 MPXKIT_CLASS_INDIRECT_MISPREDICT, CYCLES_MISPREDICT, 0, 0.10, 0,
	 "indirect mispredictions"},
	{MPXKIT_METRIC_CPI, EVB(EV_CYCLES), EVB(EV_INSTRUCTIONS), 1, MPXKIT_CLASS_CPI, 1, 0, 1.0, 1,
	 "cycles per instruction"},
	{MPXKIT_METRIC_FAULTS_PER_MS, EVB(EV_FAULTS), EVB(EV_CPU_CLOCK), 1e6,
	 MPXKIT_CLASS_PAGE_FAULTS, NS_PAGE_FAULT, 1, 8, 0, "page faults"},
	{MPXKIT_METRIC_FAULTS_PER_MS, EVB(EV_FAULTS), EVB(EV_TASK_CLOCK), 1e6,
	 MPXKIT_CLASS_PAGE_FAULTS, NS_PAGE_FAULT, 1, 8, 0, "page faults"},
	{MPXKIT_METRIC_CSW_PER_MS, EVB(EV_CSW), EVB(EV_CPU_CLOCK), 1e6,
	 MPXKIT_CLASS_CONTEXT_SWITCHES, NS_CONTEXT_SWITCH, 1, 10, 0, "context switches"},
	{MPXKIT_METRIC_CSW_PER_MS, EVB(EV_CSW), EVB(EV_TASK_CLOCK), 1e6,
	 MPXKIT_CLASS_CONTEXT_SWITCHES, NS_CONTEXT_SWITCH, 1, 10, 0, "context switches"},
};
/* clang-format on */

#define N_DEFS (sizeof metric_defs / sizeof metric_defs[0])

/*
 * The top-down thresholds of doc/spacetime.md, "Absolute thresholds": TMA 5.01 as toplev applies
 * it (pmu-tools hsw_client_ratios.py), the same figures as Linux perf's MetricThreshold fields.
 */
static const st_category categories[ST_N_CATEGORIES] = {
    [ST_BAD_SPECULATION] = {"Bad_Speculation", 0.15},
    [ST_FRONTEND_BOUND] = {"Frontend_Bound", 0.15},
    [ST_MEMORY_BOUND] = {"Memory_Bound", 0.20},
};

static const st_absolute absolute_rules[] = {
    {MPXKIT_CLASS_BRANCH_MISPREDICT, ST_BAD_SPECULATION, "Branch_Mispredicts", 0.10, 5},
    {MPXKIT_CLASS_INDIRECT_MISPREDICT, ST_BAD_SPECULATION, "Branch_Mispredicts", 0.10, 1},
    {MPXKIT_CLASS_I1_MISS, ST_FRONTEND_BOUND, "ICache_Misses", 0.05, 0},
    {MPXKIT_CLASS_D1_MISS, ST_MEMORY_BOUND, "L3_Bound", 0.05, 0},
    {MPXKIT_CLASS_LL_MISS, ST_MEMORY_BOUND, "DRAM_Bound", 0.10, 0},
};

const st_absolute *st_absolute_for(int cls)
{
	for (size_t i = 0; i < sizeof absolute_rules / sizeof absolute_rules[0]; i++)
		if (absolute_rules[i].cls == cls)
			return &absolute_rules[i];
	return NULL;
}

const st_category *st_category_of(const st_absolute *a)
{
	return &categories[a->category];
}

double st_instructions(const st_events *ev, const uint64_t *sums)
{
	if (ev->index[EV_IR] >= 0)
		return (double)sums[ev->index[EV_IR]];
	if (ev->index[EV_INSTRUCTIONS] >= 0)
		return (double)sums[ev->index[EV_INSTRUCTIONS]];
	return NAN;
}

#define METRIC_KEY_(name, key) key,
static const char *const metric_keys[] = {MPXKIT_SPACETIME_METRIC_LIST(METRIC_KEY_)};
#undef METRIC_KEY_

static const char *const metric_titles[MPXKIT_SPACETIME_N_METRICS] = {
    [MPXKIT_METRIC_I1_MPKI] = "I1 misses per kI",
    [MPXKIT_METRIC_I1_MISS_RATIO] = "I1 miss ratio",
    [MPXKIT_METRIC_D1_MPKI] = "D1 misses per kI",
    [MPXKIT_METRIC_D1_MISS_RATIO] = "D1 miss ratio",
    [MPXKIT_METRIC_LL_MPKI] = "LL misses per kI",
    [MPXKIT_METRIC_LL_MISS_RATIO] = "LL miss ratio",
    [MPXKIT_METRIC_BRANCH_MISPREDICT_RATIO] = "branch mispredict ratio",
    [MPXKIT_METRIC_INDIRECT_MISPREDICT_RATIO] = "indirect mispredict ratio",
    [MPXKIT_METRIC_CPI] = "cycles per instruction",
    [MPXKIT_METRIC_FAULTS_PER_MS] = "page faults per ms",
    [MPXKIT_METRIC_CSW_PER_MS] = "context switches per ms",
};

#define CLASS_NAME_(name, text) text,
static const char *const class_names[] = {MPXKIT_SPACETIME_CLASS_LIST(CLASS_NAME_)};
#undef CLASS_NAME_

static const char *const scope_names[] = {"space", "phase", "pattern", "threads", "program"};

const char *mpxkit_spacetime_metric_key(int metric)
{
	return metric >= 0 && metric < MPXKIT_SPACETIME_N_METRICS ? metric_keys[metric] : "?";
}

const char *mpxkit_spacetime_metric_title(int metric)
{
	return metric >= 0 && metric < MPXKIT_SPACETIME_N_METRICS ? metric_titles[metric] : "?";
}

const char *mpxkit_spacetime_class_name(int cls)
{
	return cls >= 0 && cls < MPXKIT_SPACETIME_N_CLASSES ? class_names[cls] : "?";
}

const char *mpxkit_spacetime_scope_name(int scope)
{
	return scope >= 0 && scope < (int)(sizeof scope_names / sizeof scope_names[0])
		   ? scope_names[scope]
		   : "?";
}

int st_events_init(st_events *ev, const mpxkit_profile *p)
{
	size_t n = mpxkit_profile_n_events(p);
	int perf = strcmp(mpxkit_profile_source(p), "perf") == 0;

	memset(ev, 0, sizeof *ev);
	ev->n = n;
	ev->kind = malloc(n * sizeof *ev->kind);
	ev->cost_coef = calloc(n, sizeof *ev->cost_coef);
	if (ev->kind == NULL || ev->cost_coef == NULL) {
		st_events_free(ev);
		return -MPXKIT_ENOMEM;
	}
	for (int k = 0; k < N_EV; k++)
		ev->index[k] = -1;
	for (size_t i = 0; i < n; i++) {
		ev->kind[i] = -1;
		for (int k = 0; k < N_EV; k++)
			if (strcmp(mpxkit_profile_event(p, i), event_names[k]) == 0) {
				ev->kind[i] = k;
				ev->index[k] = (int)i;
			}
	}
	ev->cost_is_ns = perf;
	if (perf) {
		/* Time: cpu-clock, else task-clock, else one unit per sample. */
		int t = ev->index[EV_CPU_CLOCK] >= 0 ? ev->index[EV_CPU_CLOCK]
						     : ev->index[EV_TASK_CLOCK];
		if (t < 0) {
			t = ev->index[EV_SAMPLES];
			ev->cost_is_ns = 0;
		}
		if (t >= 0)
			ev->cost_coef[t] = 1;
		ev->weight_col = ev->index[EV_SAMPLES];
	} else {
		static const struct {
			int ev;
			double coef;
		} cest[] = {
		    {EV_IR, 1},
		    {EV_I1MR, CYCLES_L1_MISS},
		    {EV_D1MR, CYCLES_L1_MISS},
		    {EV_D1MW, CYCLES_L1_MISS},
		    {EV_ILMR, CYCLES_LL_MISS},
		    {EV_DLMR, CYCLES_LL_MISS},
		    {EV_DLMW, CYCLES_LL_MISS},
		    {EV_BCM, CYCLES_MISPREDICT},
		    {EV_BIM, CYCLES_MISPREDICT},
		};
		for (size_t i = 0; i < sizeof cest / sizeof cest[0]; i++)
			if (ev->index[cest[i].ev] >= 0)
				ev->cost_coef[ev->index[cest[i].ev]] = cest[i].coef;
		ev->weight_col = ev->index[EV_IR];
	}
	/* A profile of unknown events: every event counts one unit of cost. */
	int any = 0;
	for (size_t i = 0; i < n; i++)
		any |= ev->cost_coef[i] != 0;
	if (!any)
		for (size_t i = 0; i < n; i++)
			ev->cost_coef[i] = 1;
	return 0;
}

void st_events_free(st_events *ev)
{
	free(ev->kind);
	free(ev->cost_coef);
	ev->kind = NULL;
	ev->cost_coef = NULL;
}

double st_event_sum(const st_events *ev, uint32_t mask, const uint64_t *sums)
{
	double s = 0;

	for (int k = 0; k < N_EV; k++) {
		if (!(mask & EVB(k)))
			continue;
		if (ev->index[k] < 0)
			return NAN;
		s += (double)sums[ev->index[k]];
	}
	return s;
}

static int available(const st_events *ev, uint32_t mask)
{
	for (int k = 0; k < N_EV; k++)
		if ((mask & EVB(k)) && ev->index[k] < 0)
			return 0;
	return 1;
}

const st_metric_def *st_metric_def_for(const st_events *ev, int metric)
{
	for (size_t i = 0; i < N_DEFS; i++)
		if (metric_defs[i].metric == metric && available(ev, metric_defs[i].num) &&
		    available(ev, metric_defs[i].base))
			return &metric_defs[i];
	return NULL;
}

double st_metric_value(const st_events *ev, int metric, const uint64_t *sums)
{
	const st_metric_def *d = st_metric_def_for(ev, metric);
	double num, base;

	if (d == NULL)
		return NAN;
	num = st_event_sum(ev, d->num, sums);
	base = st_event_sum(ev, d->base, sums);
	return base > 0 ? d->scale * num / base : NAN;
}

double st_metric_weight(const st_events *ev, const st_metric_def *d, const uint64_t *program)
{
	if (!ev->cost_is_ns)
		return d->weight_ns ? NAN : d->weight; /* cycles, or units of a cost without time */
	if (d->weight_ns)
		return d->weight;
	/* Cycles in a time cost: at the program's own ns per cycle. */
	double cycles = st_event_sum(ev, EVB(EV_CYCLES), program);
	int t = ev->index[EV_CPU_CLOCK] >= 0 ? ev->index[EV_CPU_CLOCK] : ev->index[EV_TASK_CLOCK];
	if (!(cycles > 0) || t < 0)
		return NAN;
	return d->weight * (double)program[t] / cycles;
}

/* Substrings of the wait functions of libgomp and glibc (doc/spacetime.md, "Threads"). */
static const char *const wait_names[] = {
    "barrier_wait",   "gomp_mutex_lock_slow", "gomp_sem_wait_slow",
    "futex_wait",     "futex_abstimed_wait",  "cond_wait",
    "cond_timedwait", "lll_lock_wait",	      "sched_yield",
};

int st_is_wait_function(const char *function, const char *object)
{
	const char *base = strrchr(object, '/');

	base = base ? base + 1 : object;
	for (size_t i = 0; i < sizeof wait_names / sizeof wait_names[0]; i++)
		if (strstr(function, wait_names[i]) != NULL)
			return 1;
	if (strcmp(function, "do_wait") == 0 || strcmp(function, "do_spin") == 0)
		return 1;
	/*
	 * Debian's libgomp is stripped: its barrier, lock and team internals have
	 * no names, only its GOMP_ and omp_ entry points do.
	 */
	if (strncmp(base, "libgomp", 7) == 0 && strncmp(function, "GOMP_", 5) != 0 &&
	    strncmp(function, "omp_", 4) != 0)
		return 1;
	return 0;
}

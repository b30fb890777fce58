/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel's generic events under their three spellings, and perf's legacy cache events. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "event_impl.h"

/*
 * Names follow libpfm4's "perf" PMU table, which is what PAPI's perf_event
 * component shows (perf::TASK-CLOCK); the second spelling is the kernel's
 * enum name, which libpfm4 accepts too, and the third perf(1)'s.  Alignment
 * and emulation faults are missing from libpfm4, so they take perf's names.
 */
/* clang-format off */
#define SW(n, k, p, a, u, d) { "perf::" n, "PERF_COUNT_SW_" #k, p, a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##k, u, d }
#define HW(n, k, p, a, d) { "perf::" n, "PERF_COUNT_HW_" #k, p, a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##k, "", d }

static const mpxkit__generic generic[] = {
	SW("CPU-CLOCK", CPU_CLOCK, "cpu-clock", NULL, "ns", "Time the task was running, from the per-CPU clock"),
	SW("TASK-CLOCK", TASK_CLOCK, "task-clock", NULL, "ns", "Time the task was running, from the task's own clock"),
	SW("PAGE-FAULTS", PAGE_FAULTS, "page-faults", "faults", "", "Page faults, minor and major"),
	SW("CONTEXT-SWITCHES", CONTEXT_SWITCHES, "context-switches", "cs", "", "Context switches"),
	SW("CPU-MIGRATIONS", CPU_MIGRATIONS, "cpu-migrations", "migrations", "", "Moves of the task to another CPU"),
	SW("MINOR-FAULTS", PAGE_FAULTS_MIN, "minor-faults", NULL, "", "Page faults served without I/O"),
	SW("MAJOR-FAULTS", PAGE_FAULTS_MAJ, "major-faults", NULL, "", "Page faults that needed I/O"),
	SW("ALIGNMENT-FAULTS", ALIGNMENT_FAULTS, "alignment-faults", NULL, "", "Unaligned accesses fixed up by the kernel"),
	SW("EMULATION-FAULTS", EMULATION_FAULTS, "emulation-faults", NULL, "", "Instructions the kernel emulated"),
	SW("CGROUP-SWITCHES", CGROUP_SWITCHES, "cgroup-switches", NULL, "", "Context switches to a task in another cgroup"),
	HW("CYCLES", CPU_CYCLES, "cycles", "cpu-cycles", "CPU cycles"),
	HW("INSTRUCTIONS", INSTRUCTIONS, "instructions", NULL, "Instructions retired"),
	HW("CACHE-REFERENCES", CACHE_REFERENCES, "cache-references", NULL, "Last-level cache accesses"),
	HW("CACHE-MISSES", CACHE_MISSES, "cache-misses", NULL, "Last-level cache misses"),
	HW("BRANCHES", BRANCH_INSTRUCTIONS, "branches", "branch-instructions", "Branch instructions retired"),
	HW("BRANCH-MISSES", BRANCH_MISSES, "branch-misses", NULL, "Mispredicted branches"),
	HW("BUS-CYCLES", BUS_CYCLES, "bus-cycles", NULL, "Bus cycles"),
	HW("STALLED-CYCLES-FRONTEND", STALLED_CYCLES_FRONTEND, "stalled-cycles-frontend", NULL, "Cycles the front end stalled"),
	HW("STALLED-CYCLES-BACKEND", STALLED_CYCLES_BACKEND, "stalled-cycles-backend", NULL, "Cycles the back end stalled"),
	HW("REF-CYCLES", REF_CPU_CYCLES, "ref-cycles", NULL, "Reference cycles, unaffected by frequency scaling"),
};
/* clang-format on */

#undef SW
#undef HW

#define N_GENERIC (sizeof generic / sizeof generic[0])
#define PREFIX	  "perf::"

size_t mpxkit__generic_count(void)
{
	return N_GENERIC;
}

const mpxkit__generic *mpxkit__generic_at(size_t i)
{
	return i < N_GENERIC ? &generic[i] : NULL;
}

static int same(const char *s, size_t len, const char *name)
{
	return name != NULL && strlen(name) == len && strncasecmp(s, name, len) == 0;
}

const mpxkit__generic *mpxkit__generic_find(const char *base, size_t len)
{
	size_t plen = strlen(PREFIX);

	if (len > plen && strncasecmp(base, PREFIX, plen) == 0)
		base += plen, len -= plen;
	for (size_t i = 0; i < N_GENERIC; i++) {
		const mpxkit__generic *g = &generic[i];
		if (same(base, len, g->name + plen) || same(base, len, g->kernel_name) ||
		    same(base, len, g->perf_name) || same(base, len, g->perf_alias))
			return g;
	}
	return NULL;
}

/* ---- cache events: CACHE-OP[-RESULT], perf's names (tools/perf/util/evsel.c) ------------- */

static const char *const caches[] = {"L1-dcache", "L1-icache", "LLC", "dTLB",
				     "iTLB",	  "branch",    "node"};
static const char *const cache_what[] = {
    "level-1 data cache", "level-1 instruction cache", "last-level cache",	  "data TLB",
    "instruction TLB",	  "branch prediction unit",    "local memory (NUMA node)"};
static const char *const ops[] = {"load", "store", "prefetch"};
static const char *const ops_plural[] = {"loads", "stores", "prefetches"};

/* The op at s, singular or plural, and its length; -1 for none. */
static int find_op(const char *s, size_t len, size_t *used)
{
	for (int o = 0; o < 3; o++) {
		size_t lp = strlen(ops_plural[o]), ls = strlen(ops[o]);
		if (len >= lp && strncasecmp(s, ops_plural[o], lp) == 0 &&
		    (len == lp || s[lp] == '-')) {
			*used = lp;
			return o;
		}
		if (len >= ls && strncasecmp(s, ops[o], ls) == 0 && (len == ls || s[ls] == '-')) {
			*used = ls;
			return o;
		}
	}
	return -1;
}

static void cache_name(int c, int o, int miss, char *canon, size_t cap)
{
	if (miss)
		snprintf(canon, cap, "%s-%s-misses", caches[c], ops[o]);
	else
		snprintf(canon, cap, "%s-%s", caches[c], ops_plural[o]);
}

int mpxkit__cache_find(const char *base, size_t len, uint64_t *config, char *canon, size_t cap)
{
	for (int c = 0; c < 7; c++) {
		size_t lc = strlen(caches[c]), used;
		const char *rest = base + lc;
		size_t left = len - lc;
		int o, miss;
		if (len <= lc + 1 || strncasecmp(base, caches[c], lc) != 0 || base[lc] != '-')
			continue;
		rest++, left--;
		if ((o = find_op(rest, left, &used)) < 0)
			return -1;
		rest += used, left -= used;
		if (left == 0)
			miss = 0;
		else if (same(rest, left, "-misses"))
			miss = 1;
		else if (same(rest, left, "-accesses"))
			miss = 0;
		else
			return -1;
		*config = (uint64_t)c | (uint64_t)o << 8 |
			  (uint64_t)(miss ? PERF_COUNT_HW_CACHE_RESULT_MISS
					  : PERF_COUNT_HW_CACHE_RESULT_ACCESS)
			      << 16;
		cache_name(c, o, miss, canon, cap);
		return 0;
	}
	return -1;
}

void mpxkit__cache_at(size_t i, char *name, size_t cap, const char **description)
{
	int c = (int)(i / 6), o = (int)(i / 2 % 3), miss = (int)(i % 2);

	cache_name(c, o, miss, name, cap);
	*description = cache_what[c];
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/event: every form of doc/events.md against hand-worked attrs, fake sysfs and tracefs trees,
 * libpfm4. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/event.h"
#include "mpxkit/source.h"
#include "../lib/event/event_impl.h"

#ifdef HAVE_PERFMON_PFMLIB_H
#include <perfmon/pfmlib_perf_event.h>
#endif

static char tree[256]; /* the fake sysfs and tracefs, made by main */

static int parse(const char *name, mpxkit_event *ev, mpxkit_diag *d)
{
	memset(d, 0, sizeof *d);
	return mpxkit_event_parse(name, ev, d);
}

/* ---- generic, cache, raw ---------------------------------------------------------------- */

static void test_generic_spellings(void)
{
	static const char *const same[] = {"perf::TASK-CLOCK",
					   "task-clock",
					   "TASK-CLOCK",
					   "PERF_COUNT_SW_TASK_CLOCK",
					   "perf::PERF_COUNT_SW_TASK_CLOCK",
					   "perf::task-clock"};
	mpxkit_event ev;
	mpxkit_diag d;

	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		CU_ASSERT_EQUAL_FATAL(parse(same[i], &ev, &d), 0);
		CU_ASSERT_STRING_EQUAL(ev.name, "perf::TASK-CLOCK");
		CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_SOFTWARE);
		CU_ASSERT_EQUAL(ev.attr.type, PERF_TYPE_SOFTWARE);
		CU_ASSERT_EQUAL(ev.attr.config, PERF_COUNT_SW_TASK_CLOCK);
		CU_ASSERT_STRING_EQUAL(ev.unit, "ns");
		CU_ASSERT_EQUAL(ev.domain, 0);
	}
	CU_ASSERT_EQUAL(parse("cs", &ev, &d), 0);
	CU_ASSERT_STRING_EQUAL(ev.name, "perf::CONTEXT-SWITCHES");
	CU_ASSERT_EQUAL(parse("migrations", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, PERF_COUNT_SW_CPU_MIGRATIONS);
	CU_ASSERT_EQUAL(parse("cycles", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_HARDWARE);
	CU_ASSERT_EQUAL(ev.attr.type, PERF_TYPE_HARDWARE);
	CU_ASSERT_EQUAL(ev.attr.config, PERF_COUNT_HW_CPU_CYCLES);
	CU_ASSERT_EQUAL(parse("perf::BRANCH-MISSES", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, PERF_COUNT_HW_BRANCH_MISSES);
}

/* config = cache | op << 8 | result << 16, worked by hand from linux/perf_event.h's enums. */
static void test_cache_and_raw(void)
{
	static const struct {
		const char *name, *canonical;
		uint64_t config;
	} cases[] = {
	    {"L1-dcache-load-misses", "L1-dcache-load-misses", 0x10000},
	    {"L1-dcache-loads", "L1-dcache-loads", 0x0},
	    {"L1-icache-load-misses", "L1-icache-load-misses", 0x10001},
	    {"LLC-loads", "LLC-loads", 0x2},
	    {"LLC-store-misses", "LLC-store-misses", 0x10102},
	    {"dTLB-store-misses", "dTLB-store-misses", 0x10103},
	    {"iTLB-load-misses", "iTLB-load-misses", 0x10004},
	    {"branch-loads", "branch-loads", 0x5},
	    {"node-prefetch-misses", "node-prefetch-misses", 0x10206},
	    {"llc-LOAD-accesses", "LLC-loads", 0x2},
	};
	mpxkit_event ev;
	mpxkit_diag d;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CU_ASSERT_EQUAL_FATAL(parse(cases[i].name, &ev, &d), 0);
		CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_CACHE);
		CU_ASSERT_EQUAL(ev.attr.type, PERF_TYPE_HW_CACHE);
		CU_ASSERT_EQUAL(ev.attr.config, cases[i].config);
		CU_ASSERT_STRING_EQUAL(ev.name, cases[i].canonical);
	}
	CU_ASSERT_EQUAL(parse("r003c", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_RAW);
	CU_ASSERT_EQUAL(ev.attr.type, PERF_TYPE_RAW);
	CU_ASSERT_EQUAL(ev.attr.config, 0x3c);
	CU_ASSERT_STRING_EQUAL(ev.name, "r3c");
	CU_ASSERT_EQUAL(parse("rFFFFFFFFFFFFFFFF:u", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(ev.name, "rffffffffffffffff:u");
	CU_ASSERT(parse("r1FFFFFFFFFFFFFFFF", &ev, &d) < 0); /* 17 digits */
	CU_ASSERT(parse("r", &ev, &d) < 0);
	CU_ASSERT(parse("L1-dcache-load-hits", &ev, &d) < 0);
}

/* ---- modifiers and domains ---------------------------------------------------------------- */

static void excludes(const mpxkit_event *ev, int u, int k, int h)
{
	CU_ASSERT_EQUAL(ev->attr.exclude_user, u);
	CU_ASSERT_EQUAL(ev->attr.exclude_kernel, k);
	CU_ASSERT_EQUAL(ev->attr.exclude_hv, h);
}

/* Which events take a counter, and whose: what MPXKIT_MULTIPLEX=hardware multiplexes. */
static void test_counter_pmu(void)
{
	static const struct {
		const char *name;
		int pmu;
	} cases[] = {{"perf::TASK-CLOCK", -1},	     {"page-faults", -1},
		     {"perf::CPU-CYCLES", 4},	     {"instructions:u", 4},
		     {"L1-dcache-load-misses", 4}, {"r003c", 4}};
	mpxkit_event ev;
	mpxkit_diag d;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CU_ASSERT_EQUAL_FATAL(parse(cases[i].name, &ev, &d), 0);
		CU_ASSERT_EQUAL(mpxkit_event_counter_pmu(&ev), cases[i].pmu);
		CU_ASSERT_EQUAL(mpxkit_event_takes_counter(&ev), cases[i].pmu >= 0);
	}
	/* A hybrid part's generic event names its core PMU in the extended type. */
	CU_ASSERT_EQUAL_FATAL(parse("perf::CPU-CYCLES", &ev, &d), 0);
	ev.attr.config |= (uint64_t)8 << 32;
	CU_ASSERT_EQUAL(mpxkit_event_counter_pmu(&ev), 8);
}

static void test_modifiers(void)
{
	mpxkit_event ev;
	mpxkit_diag d;

	CU_ASSERT_EQUAL_FATAL(parse("task-clock:u", &ev, &d), 0);
	CU_ASSERT_STRING_EQUAL(ev.name, "perf::TASK-CLOCK:u");
	CU_ASSERT_EQUAL(ev.domain, MPXKIT_DOM_USER);
	excludes(&ev, 0, 1, 1);
	CU_ASSERT_EQUAL_FATAL(parse("r3c:ku", &ev, &d), 0);
	CU_ASSERT_STRING_EQUAL(ev.name, "r3c:uk");
	excludes(&ev, 0, 0, 1);
	CU_ASSERT_EQUAL_FATAL(parse("cycles:h", &ev, &d), 0);
	excludes(&ev, 1, 1, 0);
	/* libpfm4's spelling: the levels set to 1 */
	CU_ASSERT_EQUAL_FATAL(parse("cycles:u=1:k=0", &ev, &d), 0);
	CU_ASSERT_STRING_EQUAL(ev.name, "perf::CYCLES:u");
	excludes(&ev, 0, 1, 1);
	CU_ASSERT_EQUAL_FATAL(parse("perf::CYCLES:k=1:u", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.domain, MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL);
	/* A name's modifiers win over any domain; without them the domain applies. */
	mpxkit_event_set_domain(&ev, MPXKIT_DOM_KERNEL);
	excludes(&ev, 0, 0, 1);
	CU_ASSERT_EQUAL_FATAL(parse("cycles", &ev, &d), 0);
	excludes(&ev, 0, 0, 1); /* parse: user and kernel */
	mpxkit_event_set_domain(&ev, MPXKIT_DOM_KERNEL);
	excludes(&ev, 1, 0, 1);
	mpxkit_event_set_domain(&ev, MPXKIT_DOM_ALL);
	excludes(&ev, 0, 0, 0);
	mpxkit_event_set_domain(&ev, 0);
	excludes(&ev, 0, !cutest_kernel_allowed(), 1);
	CU_ASSERT_EQUAL(mpxkit_event_default_domain(),
			MPXKIT_DOM_USER | (cutest_kernel_allowed() ? MPXKIT_DOM_KERNEL : 0));

	/* Bad modifiers: one line each. */
	CU_ASSERT_EQUAL(parse("cycles:x", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg,
			       "cycles:x: bad modifier 'x' (perf's :u :k :h or :uk, or :u=1 :k=0)");
	CU_ASSERT_EQUAL(parse("cycles:uu", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cycles:u:u=1", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cycles:", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cycles:u=2", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cycles:u=0", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "count in no mode"));
}

static void test_bad_names(void)
{
	char long_name[400];
	mpxkit_event ev;
	mpxkit_diag d;

	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	CU_ASSERT_EQUAL(parse("", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("task clock", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("task\tclock", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse(long_name, &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse(NULL, &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_event_parse("cycles", NULL, NULL), -MPXKIT_EINVAL);
	/* Unknown: the closest names, nothing opened. */
	CU_ASSERT_EQUAL(parse("task-clok", &ev, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "task-clok: no such event; closest: task-clock"));
	CU_ASSERT_EQUAL(parse("PERF_COUNT_SW_TASK_CLOK:u", &ev, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "closest: PERF_COUNT_SW_TASK_CLOCK"));
	CU_ASSERT_EQUAL(mpxkit_event_parse("task-clok", &ev, NULL), -MPXKIT_ENOENT);
}

/* ---- fake sysfs and tracefs --------------------------------------------------------------- */

static void put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", tree, rel);
	for (slash = strchr(path + strlen(tree) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path); /* before the suites run: no CUnit yet */
		exit(1);
	}
}

/*
 * A core PMU "cpu" of type 4 with perf's x86 format (arch/x86/events/intel/
 * core.c: event config:0-7, umask config:8-15, edge 18, inv 23, cmask
 * config:24-31, ldlat config1:0-15), RAPL's "power" with a cpumask and a
 * scaled alias, and a field of two ranges.
 */
static void make_tree(void)
{
	put("sys/cpu/type", "4\n");
	put("sys/cpu/cpus", "0-1\n");
	put("sys/cpu/format/event", "config:0-7\n");
	put("sys/cpu/format/umask", "config:8-15\n");
	put("sys/cpu/format/edge", "config:18\n");
	put("sys/cpu/format/inv", "config:23\n");
	put("sys/cpu/format/cmask", "config:24-31\n");
	put("sys/cpu/format/ldlat", "config1:0-15\n");
	put("sys/cpu/events/cycles", "event=0x3c\n");
	put("sys/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("sys/cpu/events/needs", "event=0xcd,umask=?\n");
	put("sys/power/type", "23\n");
	put("sys/power/cpumask", "0\n");
	put("sys/power/format/event", "config:0-7\n");
	put("sys/power/events/energy-pkg", "event=0x02\n");
	put("sys/power/events/energy-pkg.scale", "2.3283064365386962890625e-10\n");
	put("sys/power/events/energy-pkg.unit", "Joules\n");
	put("sys/split/type", "30\n");
	put("sys/split/format/field", "config2:0-3,8-11\n");
	put("sys/broken/type", "31\n");
	put("sys/broken/format/bad", "config:7-3\n");
	put("trace/events/sub/ev/id", "123\n");
	put("trace/events/sub/ev/format", "name: ev\n");
	put("trace/events/sub/noid/format", "name: noid\n");
	put("trace/events/other/a_b/id", "7\n");
	put("trace/events/enable", "0\n");
}

static void use_tree(int on)
{
	char path[512];

	if (!on) {
		unsetenv("MPXKIT_TEST_SYSFS");
		unsetenv("MPXKIT_TEST_TRACEFS");
		return;
	}
	snprintf(path, sizeof path, "%s/sys", tree);
	setenv("MPXKIT_TEST_SYSFS", path, 1);
	snprintf(path, sizeof path, "%s/trace", tree);
	setenv("MPXKIT_TEST_TRACEFS", path, 1);
}

/*
 * A perf source on CPU 1 refuses the fake power PMU's event with the cpumask
 * line before any perf_event_open (the kernel would count package 0 on it
 * again); on CPU 0 it goes on to the kernel, which has no PMU of type 23
 * here, and says so otherwise.
 */
static void cpumask_refused_at_open(const mpxkit_event *ev)
{
	mpxkit_source_target cpu1 = {.pid = -1, .cpu = 1}, cpu0 = {.pid = -1, .cpu = 0};
	mpxkit_source *src = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&src, &cpu1, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(src, ev->name, &d), -MPXKIT_ENOSUPP);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "not on CPU 1"));
	mpxkit_source_free(src);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&src, &cpu0, &d), 0);
	memset(&d, 0, sizeof d);
	mpxkit_source_add(src, ev->name, &d);
	CU_ASSERT_PTR_NULL(strstr(d.msg, "cpumask"));
	mpxkit_source_free(src);
}

/*
 * CPU 1 of a set of CPU sources (cpu_set, as mpxkit stat -a opens them):
 * the event's slot there holds a stand-in, which counts 0 over the times it
 * is enabled, so the set's sum scales by every CPU's time (a slot of 0 ns
 * would double a 2-CPU estimate).  Opening it needs the right to count a
 * CPU: without it (not root), the kernel says so and nothing is checked.
 */
static void cpumask_elsewhere_in_a_set(const mpxkit_event *ev)
{
	mpxkit_source_target cpu1 = {.pid = -1, .cpu = 1, .cpu_set = 1};
	mpxkit_source *src = NULL;
	mpxkit_source_count c = {0};
	mpxkit_diag d = {0};
	struct timespec nap = {0, 20000000};
	int slot;

	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&src, &cpu1, &d), 0);
	slot = mpxkit_source_add(src, ev->name, &d);
	if (slot == -MPXKIT_EPERM || slot == -MPXKIT_ENOENT) { /* not allowed, or no CPU 1 */
		printf("\n  not checked: %s", d.msg);
		mpxkit_source_free(src);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(slot, 0);
	CU_ASSERT_EQUAL(mpxkit_source_enable(src, slot), 0);
	nanosleep(&nap, NULL);
	CU_ASSERT_EQUAL(mpxkit_source_read(src, &c, 1), 1);
	CU_ASSERT_EQUAL(c.value, 0);
	CU_ASSERT(c.time_enabled >= 20000000u);
	CU_ASSERT_EQUAL(c.time_running, c.time_enabled);
	mpxkit_source_free(src);
}

/* cpulists as sysfs writes them. */
static void test_cpulist(void)
{
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0\n", 0), 1);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0\n", 1), 0);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0-3,8\n", 3), 1);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0-3,8\n", 8), 1);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0-3,8\n", 5), 0);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("0,18", 18), 1);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("", 0), 0);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("x", 0), -1);
	CU_ASSERT_EQUAL(mpxkit__cpulist_has("3-1", 2), -1);
}

static void test_sysfs(void)
{
	mpxkit_event ev;
	mpxkit_diag d;

	use_tree(1);
	CU_ASSERT_EQUAL_FATAL(parse("cpu/cycles/", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_SYSFS);
	CU_ASSERT_EQUAL(ev.attr.type, 4);
	CU_ASSERT_EQUAL(ev.attr.config, 0x3c);
	CU_ASSERT_STRING_EQUAL(ev.pmu, "cpu");
	CU_ASSERT_EQUAL(ev.per_cpu, 0);
	CU_ASSERT_EQUAL(ev.scale, 1);
	/* 0xc0 | 0x01 << 8 | 1 << 18 | 1 << 23 | 2 << 24 */
	CU_ASSERT_EQUAL_FATAL(parse("cpu/event=0xc0,umask=1,edge,inv,cmask=2/u", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, 0x028401c0);
	CU_ASSERT_STRING_EQUAL(ev.name, "cpu/event=0xc0,umask=1,edge,inv,cmask=2/:u");
	excludes(&ev, 0, 1, 1);
	/* an alias, then a field that overrides nothing and one in config1 */
	CU_ASSERT_EQUAL_FATAL(parse("cpu/mem-loads/", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, 0x01cd);
	CU_ASSERT_EQUAL(ev.attr.config1, 3);
	CU_ASSERT_EQUAL_FATAL(parse("cpu/cycles,cmask=1/:k", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, 0x0100003c);
	CU_ASSERT_EQUAL_FATAL(parse("cpu/config=0x1234,config1=5/", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, 0x1234);
	CU_ASSERT_EQUAL(ev.attr.config1, 5);
	/* value 0xab: 0xb into bits 0-3, 0xa into bits 8-11 */
	CU_ASSERT_EQUAL_FATAL(parse("split/field=0xab/", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config2, 0x0a0b);
	CU_ASSERT_EQUAL(parse("split/field=0x100/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "does not fit field's 8 bits"));
	/* The core PMU of sysfs takes counters: its own type's */
	CU_ASSERT_EQUAL_FATAL(parse("cpu/cycles/", &ev, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_event_counter_pmu(&ev), 4);
	/* RAPL: joules, per CPU */
	CU_ASSERT_EQUAL_FATAL(parse("power/energy-pkg/", &ev, &d), 0);
	/* RAPL counts free-running: no counter taken, never multiplexed by default */
	CU_ASSERT_EQUAL(mpxkit_event_counter_pmu(&ev), -1);
	CU_ASSERT_EQUAL(mpxkit_event_takes_counter(&ev), 0);
	CU_ASSERT_EQUAL(ev.attr.type, 23);
	CU_ASSERT_EQUAL(ev.attr.config, 2);
	CU_ASSERT_STRING_EQUAL(ev.unit, "Joules");
	CU_ASSERT_DOUBLE_EQUAL(ev.scale, 2.3283064365386962890625e-10, 1e-25);
	CU_ASSERT_EQUAL(ev.per_cpu, 1);
	CU_ASSERT_EQUAL(mpxkit_event_per_task_error(&ev, &d), -MPXKIT_ENOSUPP);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "power/energy-pkg/: power counts per CPU"));
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "needs system-wide counting"));
	/* Its cpumask "0": CPU 0 counts it, CPU 1 would count the package again. */
	CU_ASSERT_EQUAL(mpxkit_event_on_cpu(&ev, 0), 1);
	CU_ASSERT_EQUAL(mpxkit_event_on_cpu(&ev, 1), 0);
	CU_ASSERT_EQUAL(mpxkit_event_on_cpu(&ev, -1), 1);
	CU_ASSERT_EQUAL(mpxkit_event_cpumask_error(&ev, 1, &d), -MPXKIT_ENOSUPP);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "power/energy-pkg/: power counts on the CPUs of its "
					     "cpumask, not on CPU 1"));
	cpumask_refused_at_open(&ev);
	cpumask_elsewhere_in_a_set(&ev);
	/* bad terms, one line each */
	CU_ASSERT_EQUAL(parse("cpu/foo=1/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "cpu/foo=1/: cpu has no format field 'foo'; it has: cmask, "
				      "edge, event, inv, ldlat, umask");
	CU_ASSERT_EQUAL(parse("cpu/event=x/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/event=-1/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/event=0x100/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/needs/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "needs a value"));
	CU_ASSERT_EQUAL(parse("cpu//", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/cycles", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/cycles,cycles/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/../type/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("broken/bad=1/", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("cpu/cycles/x", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("pwer/energy-pkg/", &ev, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "closest: power/energy-pkg/"));
	CU_ASSERT_EQUAL(parse("../cpu/cycles/", &ev, &d), -MPXKIT_ENOENT);
	use_tree(0);
}

static void test_tracefs(void)
{
	mpxkit_event ev;
	mpxkit_diag d;

	use_tree(1);
	CU_ASSERT_EQUAL_FATAL(parse("sub:ev", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.kind, MPXKIT_EVENT_TRACEPOINT);
	CU_ASSERT_EQUAL(ev.attr.type, PERF_TYPE_TRACEPOINT);
	CU_ASSERT_EQUAL(ev.attr.config, 123);
	CU_ASSERT_EQUAL_FATAL(parse("other:a_b:u", &ev, &d), 0);
	CU_ASSERT_EQUAL(ev.attr.config, 7);
	CU_ASSERT_STRING_EQUAL(ev.name, "other:a_b:u");
	excludes(&ev, 0, 1, 1);
	CU_ASSERT_EQUAL(parse("sub:ev:q", &ev, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(parse("sub:noid", &ev, &d), -MPXKIT_EIO); /* a directory without id */
	CU_ASSERT_EQUAL(parse("sub:evv", &ev, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "closest: sub:ev"));
	CU_ASSERT_EQUAL(parse("sub:..", &ev, &d), -MPXKIT_ENOENT);
	/* No tracefs: the name says why no tracepoint is known. */
	setenv("MPXKIT_TEST_TRACEFS", "/nonexistent", 1);
	CU_ASSERT_EQUAL(parse("sub:ev", &ev, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "tracefs is not mounted"));
	use_tree(0);
}

/* The catalogue of the fake tree: what exists, by kind, with units and scales. */
static void test_catalog(void)
{
	mpxkit_event_catalog *c = NULL;
	mpxkit_event_info e;
	int seen_pkg = 0, seen_ev = 0, seen_noid = 0, seen_cache = 0, seen_cycles = 0;
	int last_kind = -1, ordered = 1;

	use_tree(1);
	CU_ASSERT_EQUAL_FATAL(mpxkit_event_catalog_open(&c, 0, NULL), 0);
	for (size_t i = 0; mpxkit_event_catalog_get(c, i, &e) == 0; i++) {
		ordered &= (int)e.kind >= last_kind;
		last_kind = (int)e.kind;
		seen_cycles |= strcmp(e.name, "perf::CYCLES") == 0; /* a core PMU is in the tree */
		seen_cache |= strcmp(e.name, "L1-dcache-load-misses") == 0;
		seen_ev |= strcmp(e.name, "sub:ev") == 0;
		seen_noid |= strcmp(e.name, "sub:noid") == 0;
		if (strcmp(e.name, "power/energy-pkg/") == 0) {
			seen_pkg = 1;
			CU_ASSERT_STRING_EQUAL(e.unit, "Joules");
			CU_ASSERT_DOUBLE_EQUAL(e.scale, 2.3283064365386962890625e-10, 1e-25);
			CU_ASSERT_STRING_EQUAL(e.pmu, "power");
			CU_ASSERT_PTR_NOT_NULL(strstr(e.description, "needs system-wide counting"));
		}
	}
	CU_ASSERT(ordered);
	CU_ASSERT(seen_cycles && seen_cache && seen_ev && seen_pkg);
	CU_ASSERT(!seen_noid);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(mpxkit_event_catalog_origin(c, MPXKIT_EVENT_TRACEPOINT), tree));
	mpxkit_event_catalog_free(c);
	/* A mask reads only its kinds. */
	CU_ASSERT_EQUAL_FATAL(mpxkit_event_catalog_open(&c, 1u << MPXKIT_EVENT_TRACEPOINT, NULL),
			      0);
	CU_ASSERT_EQUAL(mpxkit_event_catalog_size(c), 2);
	mpxkit_event_catalog_free(c);
	mpxkit_event_catalog_free(NULL);
	use_tree(0);
}

/* ---- open errors -------------------------------------------------------------------------- */

static void test_open_errors(void)
{
	mpxkit_event ev;
	mpxkit_diag d;

	CU_ASSERT_EQUAL_FATAL(parse("task-clock", &ev, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_event_open_error(&ev, ENOENT, &d), -MPXKIT_ENOSUPP);
	CU_ASSERT_STRING_EQUAL(d.msg, "perf::TASK-CLOCK: not on this machine (perf_event_open: "
				      "No such file or directory)");
	CU_ASSERT_EQUAL(mpxkit_event_open_error(&ev, EOPNOTSUPP, &d), -MPXKIT_ENOSUPP);
	CU_ASSERT_EQUAL(errno, EOPNOTSUPP);
	CU_ASSERT_EQUAL(mpxkit_event_open_error(&ev, EACCES, &d), -MPXKIT_EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::TASK-CLOCK in kernel mode: not allowed "
					     "(perf_event_open: Permission denied; "
					     "kernel.perf_event_paranoid="));
	CU_ASSERT_EQUAL_FATAL(parse("task-clock:u", &ev, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_event_open_error(&ev, EPERM, &d), -MPXKIT_EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::TASK-CLOCK:u: not allowed (perf_event_open: "));
	CU_ASSERT_EQUAL(mpxkit_event_open_error(&ev, EINVAL, &d), -MPXKIT_ESYS);
}

/* ---- libpfm4 ------------------------------------------------------------------------------ */

#ifdef HAVE_PERFMON_PFMLIB_H
typedef pfm_err_t (*encode_fn)(const char *, int, pfm_os_t, void *);
typedef pfm_err_t (*pmu_info_fn)(pfm_pmu_t, pfm_pmu_info_t *);

/* libpfm4's own encoding, called here directly (the same library the parser dlopens). */
static int pfm_direct(const char *name, struct perf_event_attr *attr)
{
	void *lib = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	encode_fn encode = lib ? (encode_fn)dlsym(lib, "pfm_get_os_event_encoding") : NULL;
	pfm_err_t (*init)(void) = lib ? (pfm_err_t(*)(void))dlsym(lib, "pfm_initialize") : NULL;
	pfm_perf_encode_arg_t arg;

	if (encode == NULL || init == NULL || init() != PFM_SUCCESS) /* after a reset, again */
		return -1;
	memset(attr, 0, sizeof *attr);
	memset(&arg, 0, sizeof arg);
	arg.attr = attr;
	arg.size = sizeof arg;
	return encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) == PFM_SUCCESS ? 0
											     : -1;
}

/* Whether this libpfm4 has the PMU's tables at all (Arm's are built on Arm only). */
static int pfm_knows(pfm_pmu_t pmu)
{
	void *lib = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	pmu_info_fn info_of = lib ? (pmu_info_fn)dlsym(lib, "pfm_get_pmu_info") : NULL;
	pfm_pmu_info_t info;

	memset(&info, 0, sizeof info);
	info.size = sizeof info;
	return info_of && info_of(pmu, &info) == PFM_SUCCESS;
}

/*
 * One forced PMU: the attr mpxkit builds equals libpfm4's own (exclude_hv
 * aside: mpxkit sets it from the domain, doc/events.md), and two events
 * carry the vendor's published codes, event in bits 0-7, umask in 8-15.
 */
typedef struct forced {
	const char *force;
	pfm_pmu_t pmu;
	const char *event[2];
	uint64_t code[2];
} forced;

/*
 * The codes, from the vendors' event lists:
 * - Intel's perfmon JSON (github.com/intel/perfmon): SKL/events/skylake_core.json,
 *   ICL/events/icelake_core.json, SPR/events/sapphirerapids_core.json:
 *   INST_RETIRED.ANY_P EventCode 0xC0 UMask 0x00, BR_MISP_RETIRED.ALL_BRANCHES
 *   EventCode 0xC5 UMask 0x00.
 * - AMD's Zen 4 PPR (55901), as Linux's tools/perf/pmu-events/arch/x86/amdzen4:
 *   ex_ret_instr (Retired Instructions) 0xC0, ex_ret_brn_misp (Retired Branch
 *   Instructions Mispredicted) 0xC3.
 * - The Arm Architecture Reference Manual's common architectural events (D17.11):
 *   INST_RETIRED 0x08, BR_MIS_PRED 0x10.
 */
static const forced pmus[] = {
    {"skl",
     PFM_PMU_INTEL_SKL,
     {"skl::INST_RETIRED:ANY_P", "skl::BR_MISP_RETIRED:ALL_BRANCHES"},
     {0xc0, 0xc5}},
    {"icl",
     PFM_PMU_INTEL_ICL,
     {"icl::INST_RETIRED:ANY_P", "icl::BR_MISP_RETIRED:ALL_BRANCHES"},
     {0xc0, 0xc5}},
    {"spr",
     PFM_PMU_INTEL_SPR,
     {"spr::INST_RETIRED:ANY_P", "spr::BR_MISP_RETIRED:ALL_BRANCHES"},
     {0xc0, 0xc5}},
    {"amd64_fam19h_zen4",
     PFM_PMU_AMD64_FAM19H_ZEN4,
     {"amd64_fam19h_zen4::RETIRED_INSTRUCTIONS",
      "amd64_fam19h_zen4::RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"},
     {0xc0, 0xc3}},
    {"arm_ac57",
     PFM_PMU_ARM_CORTEX_A57,
     {"arm_ac57::INST_RETIRED", "arm_ac57::BR_MIS_PRED"},
     {0x08, 0x10}},
    {"arm_n1", PFM_PMU_ARM_N1, {"arm_n1::INST_RETIRED", "arm_n1::BR_MIS_PRED"}, {0x08, 0x10}},
};

/* In the child that checks one forced PMU: failures are counted and told, one line each. */
static int child_failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
			child_failures++;                                                          \
		}                                                                                  \
	} while (0)

static void same_as_libpfm(const char *name)
{
	struct perf_event_attr want;
	mpxkit_event ev;
	mpxkit_diag d;

	if (pfm_direct(name, &want) != 0 || parse(name, &ev, &d) != 0) {
		printf("  FAIL %s: does not encode (%s)\n", name, d.msg);
		child_failures++;
		return;
	}
	CHECK(ev.kind == MPXKIT_EVENT_LIBPFM);
	CHECK(ev.attr.type == want.type);
	CHECK(ev.attr.config == want.config);
	CHECK(ev.attr.config1 == want.config1);
	CHECK(ev.attr.config2 == want.config2);
	CHECK(ev.attr.exclude_user == want.exclude_user);
	CHECK(ev.attr.exclude_kernel == want.exclude_kernel);
	CHECK(ev.attr.precise_ip == want.precise_ip);
}

/* The checks of one PMU, in a process whose libpfm4 read LIBPFM_FORCE_PMU at its start. */
static int check_forced(const forced *f)
{
	const char *short_form = strstr(f->event[0], "::") + 2;
	mpxkit_event ev;
	mpxkit_diag d;

	for (int i = 0; i < 2; i++) {
		char with_mods[128];
		same_as_libpfm(f->event[i]);
		if (parse(f->event[i], &ev, &d) != 0)
			continue;
		printf("  %-58s config 0x%llx\n", f->event[i], (unsigned long long)ev.attr.config);
		CHECK((ev.attr.config & 0xffff) == f->code[i]);
		CHECK(ev.domain == 0);
		/* A native event takes a counter of its core PMU (multiplexed, C of its own). */
		CHECK(mpxkit_event_counter_pmu(&ev) == (int)ev.attr.type &&
		      mpxkit_event_takes_counter(&ev));
		/* libpfm4's own modifiers: :u fixes the levels, whatever the domain */
		snprintf(with_mods, sizeof with_mods, "%s:u", f->event[i]);
		same_as_libpfm(with_mods);
		CHECK(parse(with_mods, &ev, &d) == 0 && ev.domain == MPXKIT_DOM_USER);
		mpxkit_event_set_domain(&ev, MPXKIT_DOM_KERNEL);
		CHECK(ev.attr.exclude_kernel == 1 && ev.attr.exclude_user == 0);
	}
	/*
	 * The short form: on the first present PMU that has the event, as libpfm4
	 * resolves it (the host's own may come before the forced one), and the
	 * canonical name says which.
	 */
	same_as_libpfm(short_form);
	CHECK(parse(short_form, &ev, &d) == 0 &&
	      strcmp(strstr(ev.name, "::") + 2, short_form) == 0 &&
	      strncmp(ev.name, ev.pmu, strlen(ev.pmu)) == 0);
	if (strcmp(f->force, "skl") == 0) {
		/* cmask 2 << 24 | inv 1 << 23 | edge 1 << 18 | 0xc0 (Intel SDM vol. 3B,
		 * IA32_PERFEVTSELx) */
		const char *name = "skl::INST_RETIRED:ANY_P:c=2:i=1:e=1";
		CHECK(parse(name, &ev, &d) == 0 && ev.attr.config == 0x028400c0);
		same_as_libpfm(name);
		CHECK(parse("skl::INST_RETIRED:NOPE", &ev, &d) < 0 &&
		      strncmp(d.msg, "skl::INST_RETIRED:NOPE: ", 24) == 0);
		CHECK(parse("skl::INST_RETIRD", &ev, &d) == -MPXKIT_ENOENT &&
		      strstr(d.msg, "closest: skl::INST_RETIRED") != NULL);
	}
	return child_failures ? 1 : 0;
}

static const char *self_path;

/*
 * Runs check_forced in a fresh process of this program with LIBPFM_FORCE_PMU
 * set: libpfm4 reads it once, at its initialisation, and cannot be
 * initialised twice in one process (4.13's pfm_terminate frees tables a
 * second pfm_initialize reads; valgrind shows it).
 */
static int run_forced(const forced *f)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "LIBPFM_FORCE_PMU=%s '%s' --forced %s", f->force, self_path,
		 f->force);
	fflush(stdout);
	return system(cmd);
}

static void test_libpfm(void)
{
	int checked = 0;

	if (!mpxkit__pfm_available()) {
		printf("\n  libpfm4 is not installed: not checked ");
		return;
	}
	printf("\n");
	for (size_t p = 0; p < sizeof pmus / sizeof pmus[0]; p++) {
		if (!pfm_knows(pmus[p].pmu)) {
			printf("  %s: this libpfm4 has no tables for it (built for another "
			       "architecture): skipped\n",
			       pmus[p].force);
			continue;
		}
		CU_ASSERT_EQUAL(run_forced(&pmus[p]), 0);
		checked++;
	}
	CU_ASSERT(checked >= 4); /* the x86 four, on any Debian libpfm4 for amd64 */
}

static int forced_main(const char *force)
{
	for (size_t p = 0; p < sizeof pmus / sizeof pmus[0]; p++)
		if (strcmp(pmus[p].force, force) == 0)
			return check_forced(&pmus[p]);
	printf("  FAIL: no PMU %s in the table\n", force);
	return 1;
}
#else
static void test_libpfm(void)
{
	printf("\n  built without libpfm4's header: not checked ");
}

static int forced_main(const char *force)
{
	(void)force;
	return 1;
}
#endif

static const cutest_case event_cases[] = {
    {"generic events, every spelling", test_generic_spellings},
    {"cache and raw events", test_cache_and_raw},
    {"modifiers and domains", test_modifiers},
    {"which events take a counter, of which PMU", test_counter_pmu},
    {"bad and unknown names", test_bad_names},
    {"sysfs PMUs on a fake tree", test_sysfs},
    {"cpulists", test_cpulist},
    {"tracepoints on a fake tracefs", test_tracefs},
    {"the catalogue of the fake tree", test_catalog},
    {"open errors", test_open_errors},
    {"libpfm4 forced PMUs vs libpfm4 and the vendors' codes", test_libpfm},
    {NULL, NULL},
};

static void remove_tree(void)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
	if (system(cmd) != 0)
		fprintf(stderr, "test_event: could not remove %s\n", tree);
}

/* test_event, or test_event --forced PMU: the checks of one forced PMU (run by test_libpfm). */
int main(int argc, char **argv)
{
	const cutest_suite suites[] = {{"event names", event_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	const char *tmp = getenv("TMPDIR");
	int rc;

	if (argc == 3 && strcmp(argv[1], "--forced") == 0)
		return forced_main(argv[2]);
	self_path = argv[0];
	snprintf(tree, sizeof tree, "%s/mpxkit-event-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(tree) == NULL) {
		perror("test_event: mkdtemp");
		return 1;
	}
	make_tree();
	rc = cutest_run("test_event", suites);
	remove_tree();
	return rc;
}

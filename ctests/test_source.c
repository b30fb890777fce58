/* SPDX-License-Identifier: BSD-3-Clause */
/* The perf counter source against work whose cost is known independently of perf. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/source.h"

/*
 * What cutest_under_valgrind() skips: under valgrind, some of the faults a new
 * thread takes on its pages are charged to the thread that created it
 * (valgrind's own bookkeeping), so per-thread attribution cannot be checked
 * there.
 */

#define FRESH_PAGES 1024
#define BUSY_NS	    50000000ull /* 50 ms of CPU time */
/*
 * task-clock and CLOCK_THREAD_CPUTIME_ID both charge this thread's run time,
 * but from different clocks; tens of microseconds apart were seen here, so a
 * count may fall short of the CPU time burnt by up to this much.
 */
#define CLOCK_SLACK_NS 1000000ull

static mpxkit_source *open_self(void)
{
	mpxkit_source *s = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, NULL, NULL), 0);
	return s;
}

/*
 * Maps n pages that were never touched and writes one byte to each.  Each
 * first write to an anonymous private page is one minor fault; huge pages are
 * turned off for the mapping so the kernel cannot serve 512 pages per fault.
 */
static void *map_fresh(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * page, MADV_NOHUGEPAGE);
	return p;
}

/* Not instrumented: ASan's shadow writes would add a fault per 8 pages touched. */
__attribute__((no_sanitize_address)) static void touch(void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * page] = 1;
}

static int has_event(mpxkit_source *s, const char *name)
{
	mpxkit_source_event ev;
	for (size_t i = 0; mpxkit_source_list(s, i, &ev) == 0; i++)
		if (strcmp(ev.name, name) == 0)
			return 1;
	return 0;
}

static void test_list_software_events(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_event ev;
	static const char *const expected[] = {
	    "perf::TASK-CLOCK",	    "perf::CPU-CLOCK",	      "perf::PAGE-FAULTS",
	    "perf::MINOR-FAULTS",   "perf::MAJOR-FAULTS",     "perf::CONTEXT-SWITCHES",
	    "perf::CPU-MIGRATIONS", "perf::ALIGNMENT-FAULTS", "perf::EMULATION-FAULTS",
	};

	CU_ASSERT_STRING_EQUAL(mpxkit_source_kind(s), "perf");
	for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
		CU_ASSERT(has_event(s, expected[i]));
	CU_ASSERT_EQUAL(mpxkit_source_list(s, 1000, &ev), -MPXKIT_ENOENT);
	mpxkit_source_free(s);
}

static void test_names(void)
{
	mpxkit_source *s = open_self();
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "task-clock", NULL), 1);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::PERF_COUNT_SW_PAGE_FAULTS", NULL), 2);
	CU_ASSERT_EQUAL(mpxkit_source_n_slots(s), 3);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_slot_name(s, 1), "perf::TASK-CLOCK");
	CU_ASSERT_STRING_EQUAL(mpxkit_source_slot_name(s, 2), "perf::PAGE-FAULTS");
	CU_ASSERT_PTR_NULL(mpxkit_source_slot_name(s, 3));
	CU_ASSERT_PTR_NULL(mpxkit_source_slot_name(s, -1));

	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::NO-SUCH-EVENT", &d), -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(d.msg, "perf::NO-SUCH-EVENT: no such perf event");
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK:u", &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "modifiers"));
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "", NULL), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::", NULL), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, NULL, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_n_slots(s), 3); /* failures add nothing */
	mpxkit_source_free(s);
	mpxkit_source_free(NULL);

	/* A list that names each event once: another spelling of an added event is refused. */
	s = open_self();
	CU_ASSERT_EQUAL(mpxkit_source_add_once(s, "perf::TASK-CLOCK", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add_once(s, "perf::CPU-CLOCK", NULL), 1);
	CU_ASSERT_EQUAL(mpxkit_source_add_once(s, "task-clock", &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "task-clock: named twice");
	CU_ASSERT_EQUAL(mpxkit_source_add_once(s, "perf::NO-SUCH-EVENT", NULL), -MPXKIT_ENOENT);
	mpxkit_source_free(s);
}

static void test_bad_arguments(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_count c[1];
	mpxkit_source_target bad = {.pid = -1, .cpu = -1};
	mpxkit_source *t = NULL;

	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 1), 0); /* no slots yet */
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::PAGE-FAULTS", NULL), 1);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 1), -MPXKIT_ERANGE);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 2), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, -2), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_reset(s, 7), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_enable(NULL, 0), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_open_perf(&t, &bad, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(t);
	mpxkit_source_free(s);
}

/* Without a PMU the hardware events fail clearly, and the list agrees with add. */
static void test_hardware_event(void)
{
	mpxkit_source *s = open_self();
	mpxkit_diag d = {0};
	int rc = mpxkit_source_add(s, "perf::CYCLES", &d);

	if (rc < 0) {
		CU_ASSERT_EQUAL(rc, -MPXKIT_ENOSUPP);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::CYCLES: no hardware PMU"));
		CU_ASSERT(!has_event(s, "perf::CYCLES"));
	} else {
		CU_ASSERT(has_event(s, "perf::CYCLES"));
	}
	mpxkit_source_free(s);
}

/* Kernel mode counts where the kernel allows it, and fails clearly, never silently, where not. */
static void test_kernel_mode(void)
{
	mpxkit_source_target target = MPXKIT_SOURCE_SELF;
	mpxkit_source *s = NULL;
	mpxkit_diag d = {0};
	int rc;

	target.kernel = 1;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &target, NULL), 0);
	rc = mpxkit_source_add(s, "perf::TASK-CLOCK", &d);
	if (rc != 0) {
		CU_ASSERT_EQUAL(rc, -MPXKIT_EPERM);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "in kernel mode: perf_event_open refused "
						     "(kernel.perf_event_paranoid="));
		printf("\n  kernel mode refused here: %s ", d.msg);
	}
	mpxkit_source_free(s);
}

static void test_page_faults(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_count c[3];
	void *p = map_fresh(FRESH_PAGES);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::PAGE-FAULTS", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MINOR-FAULTS", NULL), 1);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MAJOR-FAULTS", NULL), 2);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, MPXKIT_SOURCE_ALL), 0);
	touch(p, FRESH_PAGES);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, MPXKIT_SOURCE_ALL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 3), 3);

	/* One fault per fresh page; a few more for the stack and code the loop itself touches. */
	CU_ASSERT(c[0].value >= FRESH_PAGES);
	CU_ASSERT(c[0].value <= FRESH_PAGES + 64);
	CU_ASSERT(c[1].value >= FRESH_PAGES);
	CU_ASSERT(c[1].value <= FRESH_PAGES + 64);
	CU_ASSERT(c[2].value <= 64); /* anonymous pages never need I/O */
	CU_ASSERT(c[0].time_running > 0);
	CU_ASSERT_EQUAL(c[0].time_running, c[0].time_enabled); /* software events never rotate */
	if (c[0].value < FRESH_PAGES || c[0].value > FRESH_PAGES + 64)
		printf("\n  page-faults %llu for %d fresh pages\n", (unsigned long long)c[0].value,
		       FRESH_PAGES);

	munmap(p, FRESH_PAGES * (size_t)sysconf(_SC_PAGESIZE));
	mpxkit_source_free(s);
}

static void test_task_clock(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_count c[1];
	uint64_t used;

	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 0), 0);
	used = cutest_burn_cpu(BUSY_NS);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 1), 1);

	/*
	 * The counter is enabled before and disabled after the CPU-time reads,
	 * so it may exceed them by the cost of two ioctls (far below 5 ms) and
	 * fall short only by the clocks' disagreement.
	 */
	CU_ASSERT(c[0].value + CLOCK_SLACK_NS >= used);
	CU_ASSERT(c[0].value <= used + 5000000);
	printf("\n  task-clock %llu ns for %llu ns of thread CPU time ",
	       (unsigned long long)c[0].value, (unsigned long long)used);
	mpxkit_source_free(s);
}

static void test_disable_reset(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_count a[1], b[1];

	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, a, 1), 1);
	CU_ASSERT_EQUAL(a[0].value, 0); /* added disabled */
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 0), 0);
	cutest_burn_cpu(BUSY_NS / 5);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, a, 1), 1);
	CU_ASSERT(a[0].value + CLOCK_SLACK_NS >= BUSY_NS / 5);
	cutest_burn_cpu(BUSY_NS / 5);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, b, 1), 1);
	CU_ASSERT_EQUAL(b[0].value, a[0].value); /* disabled: no counting */
	CU_ASSERT_EQUAL(mpxkit_source_reset(s, MPXKIT_SOURCE_ALL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, b, 1), 1);
	CU_ASSERT_EQUAL(b[0].value, 0);
	mpxkit_source_free(s);
}

struct toucher {
	void *pages;
};

static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	touch(t->pages, FRESH_PAGES);
	return NULL;
}

/* Faults of a thread started after enable: counted with inherit, not without. */
static void test_inherit(void)
{
	for (int inherit = 0; inherit <= 1; inherit++) {
		mpxkit_source_target target = MPXKIT_SOURCE_SELF;
		mpxkit_source *s = NULL;
		mpxkit_source_count c[1];
		struct toucher t = {map_fresh(FRESH_PAGES)};
		pthread_t th;

		CU_ASSERT_PTR_NOT_NULL_FATAL(t.pages);
		target.inherit = inherit;
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &target, NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MINOR-FAULTS", NULL), 0);
		CU_ASSERT_EQUAL(mpxkit_source_enable(s, 0), 0);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, toucher_main, &t), 0);
		pthread_join(th, NULL);
		CU_ASSERT_EQUAL(mpxkit_source_disable(s, 0), 0);
		CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 1), 1);
		if (inherit) {
			CU_ASSERT(c[0].value >= FRESH_PAGES);
		} else if (cutest_under_valgrind()) {
			printf("\n  valgrind: not checking that faults of another thread are left "
			       "out ");
		} else {
			CU_ASSERT(c[0].value < FRESH_PAGES / 2);
		}
		munmap(t.pages, FRESH_PAGES * (size_t)sysconf(_SC_PAGESIZE));
		mpxkit_source_free(s);
	}
}

static const cutest_case source_cases[] = {
    {"software events listed", test_list_software_events},
    {"event names", test_names},
    {"bad arguments", test_bad_arguments},
    {"hardware event without PMU", test_hardware_event},
    {"kernel mode", test_kernel_mode},
    {"page faults of fresh pages", test_page_faults},
    {"task clock of a busy loop", test_task_clock},
    {"disable and reset", test_disable_reset},
    {"inherit to new threads", test_inherit},
    {NULL, NULL},
};

/* Skips (77) where the kernel allows no perf_event_open at all. */
static int perf_usable(void)
{
	mpxkit_source *s = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_source_open_perf(&s, NULL, &d);

	if (rc == 0)
		rc = mpxkit_source_add(s, "perf::TASK-CLOCK", &d);
	mpxkit_source_free(s);
	if (rc < 0) {
		printf("SKIP: %s\n", mpxkit_diag_message(&d, rc));
		return 0;
	}
	return 1;
}

int main(void)
{
	const cutest_suite suites[] = {{"perf source", source_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};

	if (!perf_usable())
		return CUTEST_SKIP;
	return cutest_run("test_source", suites);
}

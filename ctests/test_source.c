/* SPDX-License-Identifier: BSD-3-Clause */
/* The perf counter source against work whose cost is known independently of perf. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
 * The count and cutest_thread_cpu_ns are two task-clock events of this
 * thread, read at different instants; a count may fall short of the CPU
 * time burnt by up to this much.
 */
#define CLOCK_SLACK_NS 1000000ull

static mpxkit_source *open_self(void)
{
	mpxkit_source *s = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, NULL, NULL), 0);
	return s;
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
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::NO-SUCH-EVENT: no such event; closest: "));
	/* Modifiers (doc/events.md): the canonical name carries them. */
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK-CLOCK:u", &d), 3);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_slot_name(s, 3), "perf::TASK-CLOCK:u");
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "task-clock:x", &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "task-clock:x: bad modifier 'x'"));
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "", NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::TASK CLOCK", NULL), -MPXKIT_EINVAL);
	CU_ASSERT(mpxkit_source_add(s, "perf::", NULL) < 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, NULL, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_n_slots(s), 4); /* failures add nothing */
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
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::CYCLES: not on this machine"));
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

	target.domain = MPXKIT_DOM_USER | MPXKIT_DOM_KERNEL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &target, NULL), 0);
	rc = mpxkit_source_add(s, "perf::TASK-CLOCK", &d);
	if (rc != 0) {
		CU_ASSERT_EQUAL(rc, -MPXKIT_EPERM);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::TASK-CLOCK in kernel mode: not allowed "
						     "(perf_event_open: "));
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "kernel.perf_event_paranoid="));
		printf("\n  kernel mode refused here: %s ", d.msg);
	}
	mpxkit_source_free(s);
}

static void test_page_faults(void)
{
	mpxkit_source *s = open_self();
	mpxkit_source_count c[3];
	void *p = cutest_fresh_pages(FRESH_PAGES);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::PAGE-FAULTS", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MINOR-FAULTS", NULL), 1);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MAJOR-FAULTS", NULL), 2);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, MPXKIT_SOURCE_ALL), 0);
	cutest_touch_pages(p, FRESH_PAGES);
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
	cutest_touch_pages(t->pages, FRESH_PAGES);
	return NULL;
}

/* Faults of a thread started after enable: counted with inherit, not without. */
static void test_inherit(void)
{
	for (int inherit = 0; inherit <= 1; inherit++) {
		mpxkit_source_target target = MPXKIT_SOURCE_SELF;
		mpxkit_source *s = NULL;
		mpxkit_source_count c[1];
		struct toucher t = {cutest_fresh_pages(FRESH_PAGES)};
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

/*
 * Counting from the exec: a child held on a pipe touches FRESH_PAGES fresh
 * pages once released, then execs true.  Enabled before the release, its
 * minor faults hold those pages; counted from the exec, only true's own
 * (a few dozen), as perf stat would count "true".
 */
static uint64_t faults_of_child(int from_exec)
{
	mpxkit_source_target target = {.pid = 0, .cpu = -1, .inherit = 1, .domain = 0};
	mpxkit_source *s = NULL;
	mpxkit_source_count c[1] = {{0, 0, 0}};
	int go[2], status;
	char byte = 'g';
	pid_t pid;

	CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		void *p;
		close(go[1]);
		if (read(go[0], &byte, 1) != 1 || (p = cutest_fresh_pages(FRESH_PAGES)) == NULL)
			_exit(1);
		cutest_touch_pages(p, FRESH_PAGES);
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);
	}
	close(go[0]);
	target.pid = pid;
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &target, NULL), 0);
	if (from_exec)
		CU_ASSERT_EQUAL(mpxkit_source_perf_count_from_exec(s), 0);
	CU_ASSERT_EQUAL(mpxkit_source_add(s, "perf::MINOR-FAULTS", NULL), 0);
	if (!from_exec)
		CU_ASSERT_EQUAL(mpxkit_source_enable(s, 0), 0);
	CU_ASSERT_EQUAL(write(go[1], &byte, 1), 1);
	close(go[1]);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 1), 1);
	CU_ASSERT_EQUAL(mpxkit_source_perf_count_from_exec(s), -MPXKIT_ESTATE);
	mpxkit_source_free(s);
	return c[0].value;
}

static void test_count_from_exec(void)
{
	uint64_t before = faults_of_child(0), from_exec = faults_of_child(1);

	printf("\n  minor faults: enabled before the release %llu, from the exec %llu ",
	       (unsigned long long)before, (unsigned long long)from_exec);
	CU_ASSERT(before >= FRESH_PAGES);
	CU_ASSERT(from_exec > 0 && from_exec < FRESH_PAGES / 2);
}

/*
 * Parts: a partition is checked whole (every slot in a part that exists,
 * every part with a slot, once per source); then enabling one slot switches
 * its whole part.  Four page-fault events in two parts, part 0 on while
 * FRESH_PAGES fresh pages are touched: both its slots see them all, the
 * other part's none.
 */
static void test_parts(void)
{
	static const char *const faults[2] = {"perf::PAGE-FAULTS", "perf::MINOR-FAULTS"};
	mpxkit_source *s = open_self();
	mpxkit_diag d = {0};
	const size_t part[4] = {0, 0, 1, 1}, bad[4] = {0, 0, 2, 2}, empty[4] = {0, 0, 0, 0};
	mpxkit_source_count c[4];
	size_t len = (size_t)sysconf(_SC_PAGESIZE) * FRESH_PAGES;
	void *p;

	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(mpxkit_source_add(s, faults[i / 2], NULL), i);
	CU_ASSERT_EQUAL(mpxkit_source_partition(s, part, 0, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_partition(s, bad, 2, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_partition(s, empty, 2, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_partition(NULL, part, 2, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_partition(s, part, 2, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_source_partition(s, part, 2, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_source_reset(s, MPXKIT_SOURCE_ALL), 0);
	p = cutest_fresh_pages(FRESH_PAGES);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_EQUAL(mpxkit_source_enable(s, 1), 0); /* slot 1: part 0, slots 0 and 1 */
	cutest_touch_pages(p, FRESH_PAGES);
	CU_ASSERT_EQUAL(mpxkit_source_disable(s, 0), 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(s, c, 4), 4);
	printf("\n  part 0 on: %llu and %llu faults; part 1 off: %llu and %llu\n  ",
	       (unsigned long long)c[0].value, (unsigned long long)c[1].value,
	       (unsigned long long)c[2].value, (unsigned long long)c[3].value);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT(c[i].value >= FRESH_PAGES);
		CU_ASSERT(c[i].value < FRESH_PAGES + FRESH_PAGES / 2);
		CU_ASSERT_EQUAL(c[2 + i].value, 0);
		CU_ASSERT(c[i].time_enabled > 0 && c[i].time_running > 0);
		CU_ASSERT_EQUAL(c[2 + i].time_enabled, 0);
	}
	munmap(p, len);
	mpxkit_source_free(s);
}

/* A thread that pins itself to one CPU and waits there, for the CPU of its source. */
typedef struct pinned {
	int cpu;
	pid_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int quit;
} pinned;

static void *pinned_main(void *arg)
{
	pinned *t = arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(t->cpu, &one);
	sched_setaffinity(0, sizeof one, &one);
	cutest_burn_cpu(1000000); /* runs there at least once */
	pthread_mutex_lock(&t->lock);
	t->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&t->cond);
	while (!t->quit)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/*
 * mpxkit_source_target_cpu: a thread pinned to each CPU this process may
 * use in turn, and this thread itself (sched_getcpu, while pinned too).
 */
static void test_target_cpu(void)
{
	cpu_set_t allowed;
	int tried = 0;

	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof allowed, &allowed), 0);
	for (int cpu = 0; cpu < CPU_SETSIZE && tried < 4; cpu++) {
		pinned t = {.cpu = cpu};
		mpxkit_source_target who = {.pid = 0, .cpu = -1, .inherit = 0, .domain = 0};
		mpxkit_source *s = NULL;
		pthread_t th;
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		pthread_mutex_init(&t.lock, NULL);
		pthread_cond_init(&t.cond, NULL);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, pinned_main, &t), 0);
		pthread_mutex_lock(&t.lock);
		while (t.tid == 0)
			pthread_cond_wait(&t.cond, &t.lock);
		pthread_mutex_unlock(&t.lock);
		who.pid = t.tid;
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &who, NULL), 0);
		CU_ASSERT(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL) >= 0);
		CU_ASSERT_EQUAL(mpxkit_source_target_cpu(s), cpu);
		mpxkit_source_free(s);
		pthread_mutex_lock(&t.lock);
		t.quit = 1;
		pthread_cond_broadcast(&t.cond);
		pthread_mutex_unlock(&t.lock);
		pthread_join(th, NULL);
		tried++;
	}
	{
		/* This thread, pinned where it runs, through a source of its own (pid 0). */
		mpxkit_source *s = open_self();
		cpu_set_t one;
		int here = sched_getcpu();
		CPU_ZERO(&one);
		CPU_SET(here, &one);
		CU_ASSERT_EQUAL(sched_setaffinity(0, sizeof one, &one), 0);
		here = sched_getcpu();
		CU_ASSERT(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL) >= 0);
		CU_ASSERT_EQUAL(mpxkit_source_target_cpu(s), here);
		sched_setaffinity(0, sizeof allowed, &allowed);
		mpxkit_source_free(s);
	}
	CU_ASSERT_EQUAL(mpxkit_source_target_cpu(NULL), -1);
	printf("\n  %d pinned thread(s) found on their CPUs\n  ", tried);
}

static void *spin_forever(void *arg)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(*(int *)arg, &one);
	sched_setaffinity(0, sizeof one, &one);
	for (volatile unsigned long i = 0;; i++)
		;
	return NULL;
}

/*
 * A process counted with its threads whose main thread only waits for a
 * worker: the worker's CPU (pinned to the last CPU allowed), not main's
 * (pinned to the first, where there are two).
 */
static void test_target_cpu_worker(void)
{
	cpu_set_t allowed;
	int first = -1, last = -1, cpu = -2, found = 0;
	pid_t child;

	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof allowed, &allowed), 0);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed)) {
			first = first < 0 ? c : first;
			last = c;
		}
	child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		cpu_set_t one;
		pthread_t th;
		CPU_ZERO(&one);
		CPU_SET(first, &one);
		sched_setaffinity(0, sizeof one, &one);
		cutest_burn_cpu(1000000); /* main runs there once */
		if (pthread_create(&th, NULL, spin_forever, &last) == 0)
			pthread_join(th, NULL);
		_exit(1);
	}
	{
		mpxkit_source_target who = {.pid = child, .cpu = -1, .inherit = 1, .domain = 0};
		mpxkit_source *s = NULL;
		CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_perf(&s, &who, NULL), 0);
		CU_ASSERT(mpxkit_source_add(s, "perf::TASK-CLOCK", NULL) >= 0);
		/* Until the worker runs where it is pinned: 2 s at most. */
		for (int tries = 0; tries < 400 && !found; tries++) {
			struct timespec t = {0, 5000000};
			nanosleep(&t, NULL);
			cpu = mpxkit_source_target_cpu(s);
			found = cpu == last;
		}
		mpxkit_source_free(s);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("\n  main pinned to CPU %d, its worker to CPU %d, followed on CPU %d\n  ", first,
	       last, cpu);
	CU_ASSERT(found);
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
    {"counting from the exec", test_count_from_exec},
    {"parts: checked whole, switched whole", test_parts},
    {"the target's CPU", test_target_cpu},
    {"the target's CPU: a process whose worker runs", test_target_cpu_worker},
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

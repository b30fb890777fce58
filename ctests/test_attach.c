/* SPDX-License-Identifier: BSD-3-Clause */
/* The attach targets (CPU lists, a process's threads, the end of tasks) against what /proc says. */
#define _GNU_SOURCE /* gettid, pthread_setname_np */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/attach.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"

#define FRESH_PAGES 512

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void expect_cpus(const char *text, const int *want, size_t n_want)
{
	int *cpus = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_parse_cpus(text, &cpus, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, n_want);
	for (size_t i = 0; i < n && i < n_want; i++)
		CU_ASSERT_EQUAL(cpus[i], want[i]);
	free(cpus);
}

/* The kernel's cpulist format (Documentation/admin-guide/cputopology.rst). */
static void test_parse_cpus(void)
{
	static const char *const bad[] = {"",	 "\n",	"a",   "1,",	    "1-",
					  "-1",	 "3-1", "1 2", "0-1048576", "99999999999999999999",
					  "1,,2"};
	const int a[] = {0, 1, 2, 3, 8, 10, 11}, b[] = {1, 2, 5}, c[] = {0};
	mpxkit_diag d = {0};
	int *cpus = NULL;
	size_t n = 0;

	expect_cpus("0-3,8,10-11\n", a, 7);
	expect_cpus("5,1-2,2", b, 3);
	expect_cpus("0", c, 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT_EQUAL(mpxkit_attach_parse_cpus(bad[i], &cpus, &n, &d), -MPXKIT_EFORMAT);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "not a list such as 0-3,8"));
	}
}

/* /sys agrees with sysconf: the CPUs online now. */
static void test_online_cpus(void)
{
	int *cpus = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_cpus(&cpus, &n, NULL), 0);
	CU_ASSERT_EQUAL(n, (size_t)sysconf(_SC_NPROCESSORS_ONLN));
	free(cpus);
}

/* Workers that wait at a gate, then touch their pages: the threads -p and -t find. */
typedef struct worker {
	pthread_t th;
	pid_t tid;
	pthread_mutex_t *lock;
	pthread_cond_t *cond;
	int *open, *ready;
	void *pages;
	uint64_t burn_ns; /* CPU time to spend after the pages */
	uint64_t cpu_ns;  /* the thread's CPU time at its end */
} worker;

static void *worker_main(void *arg)
{
	worker *w = arg;

	pthread_mutex_lock(w->lock);
	w->tid = gettid();
	(*w->ready)++;
	pthread_cond_broadcast(w->cond);
	while (!*w->open)
		pthread_cond_wait(w->cond, w->lock);
	pthread_mutex_unlock(w->lock);
	cutest_touch_pages(w->pages, FRESH_PAGES);
	if (w->burn_ns)
		cutest_burn_cpu(w->burn_ns);
	w->cpu_ns = cutest_thread_cpu_ns();
	return NULL;
}

typedef struct crew {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open, ready;
	worker w[2];
} crew;

static void crew_start_burning(crew *c, uint64_t burn_ns)
{
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->open = c->ready = 0;
	for (int i = 0; i < 2; i++) {
		worker *w = &c->w[i];
		w->lock = &c->lock;
		w->cond = &c->cond;
		w->open = &c->open;
		w->ready = &c->ready;
		w->pages = cutest_fresh_pages(FRESH_PAGES);
		w->burn_ns = burn_ns;
		CU_ASSERT_PTR_NOT_NULL_FATAL(w->pages);
		CU_ASSERT_EQUAL_FATAL(pthread_create(&w->th, NULL, worker_main, w), 0);
	}
	pthread_mutex_lock(&c->lock);
	while (c->ready < 2)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static void crew_start(crew *c)
{
	crew_start_burning(c, 0);
}

static void crew_finish(crew *c)
{
	pthread_mutex_lock(&c->lock);
	c->open = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < 2; i++) {
		pthread_join(c->w[i].th, NULL);
		munmap(c->w[i].pages, FRESH_PAGES * (size_t)sysconf(_SC_PAGESIZE));
	}
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
}

static int has_tid(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return 1;
	return 0;
}

/*
 * A joined thread's answer once the kernel has let it go.  pthread_join
 * returns when the kernel clears the thread's tid word (mm_release, early in
 * do_exit); /proc drops the task only at release_task, later in the same exit,
 * so for a moment after the join it is still there (43 in 20,000 joins on a
 * quiet machine here).  Asked again every 0.1 ms for up to 5 s.
 */
static int wait_thread_gone(pid_t tid, mpxkit_diag *d)
{
	const struct timespec pause_ts = {0, 100000};
	uint64_t end = now_ns() + 5000000000u;
	int rc;

	while ((rc = mpxkit_attach_thread_exists(tid, d)) == 0 && now_ns() < end)
		nanosleep(&pause_ts, NULL);
	return rc;
}

/* This process's threads: itself and its two workers, ascending; names from comm. */
static void test_threads(void)
{
	crew c;
	pid_t *tids = NULL;
	size_t n = 0;
	char name[32];
	mpxkit_diag d = {0};

	crew_start(&c);
	pthread_setname_np(c.w[1].th, "mpx-worker1");
	CU_ASSERT_EQUAL(mpxkit_attach_threads(getpid(), &tids, &n, NULL), 0);
	CU_ASSERT(n >= 3);
	CU_ASSERT(has_tid(tids, n, getpid()));
	CU_ASSERT(has_tid(tids, n, c.w[0].tid));
	CU_ASSERT(has_tid(tids, n, c.w[1].tid));
	for (size_t i = 1; i < n; i++)
		CU_ASSERT(tids[i - 1] < tids[i]);
	free(tids);
	CU_ASSERT_EQUAL(mpxkit_attach_thread_exists(c.w[0].tid, NULL), 0);
	mpxkit_attach_comm(c.w[1].tid, name, sizeof name);
	CU_ASSERT_STRING_EQUAL(name, "mpx-worker1");
	crew_finish(&c);
	CU_ASSERT_EQUAL(wait_thread_gone(c.w[1].tid, &d), -MPXKIT_ENOENT);
	mpxkit_attach_comm(c.w[1].tid, name, sizeof name);
	CU_ASSERT_STRING_EQUAL(name, "");
	CU_ASSERT_EQUAL(mpxkit_attach_threads(0, &tids, &n, &d), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(mpxkit_attach_threads(-5, &tids, &n, &d), -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(d.msg, "process -5: no such process");
}

/* A child that has exited and been reaped: its pid names no task (not reused this soon). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* A child that sleeps until killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/*
 * The end of a process wakes the wait, zombie or not; a deadline that comes
 * first returns 0; an empty watch waits for the deadline only.
 */
static void test_wait_process(void)
{
	mpxkit_attach_watch *w = NULL;
	pid_t child = sleeper();
	uint64_t t0;

	CU_ASSERT_FATAL(child > 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_watch_new(&w, &child, 1, 0, NULL), 0);
	t0 = now_ns();
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, t0 + 20000000u, NULL), 0);
	CU_ASSERT(now_ns() >= t0 + 20000000u);
	kill(child, SIGKILL);
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, 0, NULL), 1); /* a zombie now: not reaped yet */
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, 0, NULL), 1);
	waitpid(child, NULL, 0);
	mpxkit_attach_watch_free(w);

	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_watch_new(&w, NULL, 0, 0, NULL), 0);
	t0 = now_ns();
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, t0 + 5000000u, NULL), 0);
	CU_ASSERT(now_ns() >= t0 + 5000000u);
	mpxkit_attach_watch_free(w);
	mpxkit_attach_watch_free(NULL);
	CU_ASSERT_EQUAL(mpxkit_attach_wait(NULL, 0, NULL), -MPXKIT_EINVAL);
}

/* A single thread's end, whether the kernel gives a thread pidfd or /proc is looked at. */
static void test_wait_thread(void)
{
	mpxkit_attach_watch *w = NULL;
	crew c;
	pid_t tid;

	crew_start(&c);
	tid = c.w[0].tid;
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_watch_new(&w, &tid, 1, 1, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, now_ns() + 1000000u, NULL), 0);
	crew_finish(&c);
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, 0, NULL), 1);
	mpxkit_attach_watch_free(w);
}

static volatile sig_atomic_t got_signal;

static void on_usr1(int sig)
{
	got_signal = sig;
}

/* A signal blocked outside the wait and let in by its mask ends the wait with 2. */
static void test_wait_signal(void)
{
	mpxkit_attach_watch *w = NULL;
	struct sigaction sa, old;
	sigset_t block, saved;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &saved);
	raise(SIGUSR1); /* pending until the wait lets it in */
	CU_ASSERT_EQUAL(got_signal, 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_watch_new(&w, NULL, 0, 0, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_attach_wait(w, 0, &saved), 2);
	CU_ASSERT_EQUAL(got_signal, SIGUSR1);
	mpxkit_attach_watch_free(w);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	sigaction(SIGUSR1, &old, NULL);
}

/* perf_event_open allowed here for this process's own threads; else one line and no check. */
static int perf_usable(void)
{
	int fd = cutest_perf_open("TASK-CLOCK");

	if (fd < 0) {
		printf("\n  perf_event_open refused, not checked ");
		return 0;
	}
	close(fd);
	return 1;
}

/*
 * One source per thread of this process, a dead pid left out (ESRCH):
 * each worker's faults land in its own source, and the sum source counts
 * them all.
 */
static void test_open_threads(void)
{
	static const char *const events[] = {"perf::MINOR-FAULTS", "perf::TASK-CLOCK"};
	mpxkit_source_target t[3] = {{.pid = 0, .cpu = -1}, {.pid = 0, .cpu = -1}, {.pid = 0, .cpu = -1}};
	mpxkit_source *src[3] = {NULL, NULL, NULL}, *sum = NULL;
	mpxkit_source_count one[2], all[2];
	mpxkit_diag d = {0};
	int checked = !cutest_under_valgrind();
	crew c;

	if (!perf_usable())
		return;
	if (!checked)
		printf(
		    "\n  valgrind: its own bookkeeping moves faults between threads: not checked ");
	crew_start(&c);
	t[0].pid = c.w[0].tid;
	t[1].pid = dead_pid();
	t[2].pid = c.w[1].tid;
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_open(src, t, 3, events, 2, &d), 2);
	CU_ASSERT_PTR_NOT_NULL(src[0]);
	CU_ASSERT_PTR_NULL(src[1]);
	CU_ASSERT_PTR_NOT_NULL(src[2]);
	CU_ASSERT_EQUAL(mpxkit_source_enable(src[0], MPXKIT_SOURCE_ALL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_enable(src[2], MPXKIT_SOURCE_ALL), 0);
	crew_finish(&c);
	CU_ASSERT_EQUAL(mpxkit_source_read(src[0], one, 2), 2);
	CU_ASSERT(!checked || (one[0].value >= FRESH_PAGES && one[0].value < 2 * FRESH_PAGES));
	CU_ASSERT_EQUAL(mpxkit_source_read(src[2], one, 2), 2);
	CU_ASSERT(!checked || (one[0].value >= FRESH_PAGES && one[0].value < 2 * FRESH_PAGES));
	src[1] = src[2];
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_sum(&sum, src, 2, &d), 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_kind(sum), "sum");
	CU_ASSERT_EQUAL(mpxkit_source_n_slots(sum), 2);
	CU_ASSERT_STRING_EQUAL(mpxkit_source_slot_name(sum, 1), "perf::TASK-CLOCK");
	CU_ASSERT_EQUAL(mpxkit_source_read(sum, all, 2), 2);
	CU_ASSERT(!checked || (all[0].value >= 2 * FRESH_PAGES && all[0].value < 3 * FRESH_PAGES));
	mpxkit_source_free(sum);

	/* Every task gone: nothing to count. */
	t[0].pid = dead_pid();
	CU_ASSERT_EQUAL(mpxkit_attach_open(src, t, 1, events, 2, &d), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NULL(src[0]);
	/* A bad event is the event's error, with nothing left open. */
	{
		static const char *const nope[] = {"perf::NOPE"};
		t[0].pid = getpid();
		CU_ASSERT_EQUAL(mpxkit_attach_open(src, t, 1, nope, 1, &d), -MPXKIT_ENOENT);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "perf::NOPE"));
	}
}

/*
 * One scheduler over the sum of two threads' sources, task clock and page
 * faults on one counter: its estimates against the same events counted all
 * the time on a second sum of the same threads, and against the CPU time the
 * threads burnt (a task clock ends at least that high).
 */
static void test_sched_over_sum(void)
{
	static const char *const events[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS"};
	mpxkit_source_target t[2] = {{.pid = 0, .cpu = -1}, {.pid = 0, .cpu = -1}};
	mpxkit_source *src[2], *sum = NULL, *truth = NULL;
	mpxkit_sched_config cfg;
	mpxkit_sched *s = NULL;
	mpxkit_source_count exact[2];
	double est[2], fid[2], run_ns = 0, low;
	int rotations;
	crew c;

	if (!perf_usable())
		return;
	crew_start_burning(&c, 60000000u);
	t[0].pid = c.w[0].tid;
	t[1].pid = c.w[1].tid;
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_open(src, t, 2, events, 2, NULL), 2);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_sum(&sum, src, 2, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_attach_open(src, t, 2, events, 2, NULL), 2);
	CU_ASSERT_EQUAL_FATAL(mpxkit_source_open_sum(&truth, src, 2, NULL), 0);
	mpxkit_sched_config_default(&cfg);
	cfg.multiplex = MPXKIT_SCHED_MULTIPLEX_ALL; /* software events, multiplexed on purpose */
	cfg.counters = 1;
	cfg.slice_ns = 1000000u;
	CU_ASSERT_EQUAL_FATAL(mpxkit_sched_new(&s, sum, &cfg, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_source_enable(truth, MPXKIT_SOURCE_ALL), 0);
	CU_ASSERT_EQUAL(mpxkit_sched_start(s), 0);
	crew_finish(&c);
	CU_ASSERT_EQUAL(mpxkit_sched_stop(s), 0);
	rotations = mpxkit_sched_read_timed(s, est, fid, &run_ns);
	CU_ASSERT(rotations >= 0);
	CU_ASSERT_EQUAL(mpxkit_source_read(truth, exact, 2), 2);
	/* Both threads' time, summed: the clock covers what the task clock counted. */
	CU_ASSERT(run_ns >= 0.99 * (double)exact[0].value);
	/* One counter: at every instant exactly one of the two is on it. */
	CU_ASSERT(fid[0] >= 0 && fid[0] <= 1 && fid[1] >= 0 && fid[1] <= 1);
	CU_ASSERT(fabs(fid[0] + fid[1] - 1.0) < 1e-3);
	/*
	 * The engine rotates only when its thread runs (lib/sched/sched.c,
	 * run_real_time: at its first wake-up once a slice had nine tenths of
	 * slice_ns of the clock, however late): valgrind runs one thread at a
	 * time, and there the burning crew held it off for 98 % of the run even
	 * on a quiet machine; so does a loaded one.  A rotation is expected only
	 * where the thread woke at least once per two slices of the run's time.
	 */
	printf("\n  %d rotations, %zu wake-ups in %.0f ns", rotations, mpxkit_sched_wakeups(s),
	       run_ns);
	if (cutest_rotation_thread_ran(mpxkit_sched_wakeups(s), run_ns, cfg.slice_ns))
		CU_ASSERT(rotations >= 1);
	/*
	 * What round robin guarantees however late the thread wakes: each
	 * completed rotation gave each of the two groups one slice of at least
	 * slice_ns - slice_ns / 10 of the clock (run_real_time, slice_left), and
	 * the two share the run (above), so each fidelity is at least
	 * rotations * that / run_ns and at most 1 less the other's bound.  No
	 * slice is bounded above: one late wake-up stretches it.
	 */
	low = rotations > 0 && run_ns > 0
		  ? rotations * (double)(cfg.slice_ns - cfg.slice_ns / 10) / run_ns
		  : 0;
	printf("\n  fidelities %.3f %.3f, each in [%.3f, %.3f]", fid[0], fid[1], low, 1 - low);
	CU_ASSERT(fid[0] >= low - 1e-9 && fid[0] <= 1 - low + 1e-9);
	CU_ASSERT(fid[1] >= low - 1e-9 && fid[1] <= 1 - low + 1e-9);
	CU_ASSERT((double)exact[0].value + 1e6 >= (double)(c.w[0].cpu_ns + c.w[1].cpu_ns) * 0.99);
	if (cutest_under_valgrind()) {
		printf(
		    "\n  valgrind: its thread scheduling makes slices meaningless: estimates not "
		    "checked ");
	} else {
		CU_ASSERT(est[0] > 0.95 * (double)exact[0].value &&
			  est[0] < 1.05 * (double)exact[0].value);
		printf("\n  task clock %.0f estimated, %llu exact; faults %.0f, %llu ", est[0],
		       (unsigned long long)exact[0].value, est[1],
		       (unsigned long long)exact[1].value);
	}
	mpxkit_sched_free(s);
	mpxkit_source_free(truth);
}

static const cutest_case attach_cases[] = {
    {"CPU lists", test_parse_cpus},
    {"online CPUs", test_online_cpus},
    {"threads of a process", test_threads},
    {"the end of a process", test_wait_process},
    {"the end of a thread", test_wait_thread},
    {"a signal ends the wait", test_wait_signal},
    {"sources per thread", test_open_threads},
    {"a scheduler over a sum of threads", test_sched_over_sum},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"attach", attach_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};

	return cutest_run("test_attach", suites);
}

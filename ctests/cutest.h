/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared CUnit driver: registers suites and turns CUnit's counters into an exit status. */
#ifndef MPXKIT_CUTEST_H
#define MPXKIT_CUTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <CUnit/CUnit.h>

/* automake's code for a test that cannot run here. */
#define CUTEST_SKIP 77

typedef struct cutest_case {
	const char *name;
	void (*fn)(void);
} cutest_case;

typedef struct cutest_suite {
	const char *name;
	const cutest_case *cases; /* ends with {NULL, NULL} */
	int (*setup)(void);
	int (*teardown)(void);
} cutest_suite;

/*
 * Runs the suites (the list ends with a suite whose name is NULL) with the
 * basic verbose interface and returns the process exit status: 0 only when no
 * assertion, test or suite failed.  CU_basic_run_tests() alone returns 0 even
 * when assertions fail, so the status comes from CUnit's failure counters.
 */
int cutest_run(const char *program, const cutest_suite *suites);

/*
 * Nonzero when the test runs under valgrind (make check-valgrind).  Tests of
 * time-sliced accuracy use it to skip what valgrind's serialised, unfair thread
 * scheduling makes meaningless there, saying so in their output; memory errors
 * are what that run checks.
 */
int cutest_under_valgrind(void);

/*
 * Whether an engine's rotation thread ran often enough for a count of its
 * rotations to mean anything: at least one wake-up (mpxkit_sched_wakeups)
 * per two slices of the run's time.  The engine rotates only when that
 * thread runs (lib/sched/sched.c, run_real_time: at its first wake-up once
 * the slice has had nine tenths of slice_ns of the target's time, however
 * late), so on a loaded machine a run of many slices can end with few
 * rotations or none (0 of 75 slices seen beside stress-ng).  Otherwise it
 * prints that the count is not checked, and returns 0.
 */
int cutest_rotation_thread_ran(size_t wakeups, double run_ns, uint64_t slice_ns);

/*
 * splitmix64 on *state, mapped to [-1, 1) with 52 bits: each test keeps its
 * own state and seed, so its random models are the same on every run.
 */
double cutest_urand(uint64_t *state);

/*
 * This thread's CPU time in ns as perf's task-clock and cpu-clock count it:
 * the kernel's own task-clock of the thread, from a perf event of the
 * test's, counting all the time (software events never rotate), so an
 * estimate of mpxkit's is checked against an independent exact count.
 * CLOCK_THREAD_CPUTIME_ID is not that clock: it charges the scheduler's task
 * time, which leaves out the time the hypervisor ran something else on the
 * CPU (steal) and interrupts' time; perf's clocks count both.  On this 2-CPU
 * VM, beside two CI runs and stress-ng --cpu 2, a 17 ms loop's task-clock
 * passed its CLOCK_THREAD_CPUTIME_ID by up to 22 %.  Where perf_event_open
 * is refused, CLOCK_THREAD_CPUTIME_ID.  Each call is one read(2), made with
 * syscall(2): a test's own read(), counting the library's calls, never sees it.
 */
uint64_t cutest_thread_cpu_ns(void);

/*
 * Computes until this thread has used ns of CPU time, checking the clock
 * every few microseconds; returns the CPU time used as the clock saw it.
 */
uint64_t cutest_burn_cpu(uint64_t ns);

/*
 * Waits until thread tid of this process sleeps in futex(2) on a word in
 * [at, at + len) (a condition variable's) with its on-CPU time standing
 * still between two looks.  A thread that has signalled "done" still runs
 * until it sleeps, and under valgrind it may wait for valgrind's own lock
 * first, so a clock read just after the signal can move again.  0 once
 * asleep; -1 when /proc cannot tell or after 10 s.
 */
int cutest_wait_asleep(pid_t tid, const void *at, size_t len);

/*
 * One scratch directory per test program, /tmp/mpxkit-test-TAG-XXXXXX:
 * cutest_scratch_make in a suite's setup, cutest_scratch_remove (everything
 * in it, then the directory; a no-op when none was made) in the last suite's
 * teardown.  Both return 0 or -1, as CUnit's setup and teardown do.
 * cutest_scratch_path gives DIR/name in one of 4 rotating buffers, so a
 * call may take up to 4 paths at once.
 */
int cutest_scratch_make(const char *tag);
int cutest_scratch_remove(void);
const char *cutest_scratch(void);
const char *cutest_scratch_path(const char *name);
/* Entries in the scratch directory (-1 if it cannot be read): a stray temporary file shows. */
int cutest_scratch_entries(void);

/*
 * Exact counts to check estimates against, from the same run: a disabled
 * perf_event_open descriptor, written here rather than taken from
 * libmpxkit, counting one of the kernel's software events for the calling
 * thread in user mode, as the engine and the component count by default.
 * name is the event's name after "perf::" (TASK-CLOCK, CPU-CLOCK,
 * PAGE-FAULTS, MINOR-FAULTS, MAJOR-FAULTS, CONTEXT-SWITCHES,
 * CPU-MIGRATIONS), with or without a "mpxkit:::perf::" or "perf::" prefix.
 * Enable and disable it with ioctl; -1 when the name is unknown or the
 * kernel refuses.  cutest_perf_read gives its count, or -1.
 */
int cutest_perf_open(const char *name);

/*
 * 1 where this process may count kernel mode (CAP_SYS_ADMIN or CAP_PERFMON in
 * /proc/self/status, or kernel.perf_event_paranoid <= 1): what the default
 * counting domain of doc/events.md must then include.
 */
int cutest_kernel_allowed(void);
long long cutest_perf_read(int fd);

/*
 * n anonymous pages never touched, huge pages off (so each first write is
 * one minor fault, not one per 512 pages), or NULL; munmap them after.
 * cutest_touch_pages writes one byte to each, uninstrumented: ASan's shadow
 * writes would add faults of their own.
 */
void *cutest_fresh_pages(size_t n);
void cutest_touch_pages(void *p, size_t n);

/* Directory of the source tree's top, from $top_srcdir, or "." */
const char *cutest_srcdir(void);

/* The public measurements' folder (data/dvfs, data/simt): $MPXKIT_SHARED, which make check
 * sets, or the source tree's ../shared. */
const char *cutest_shared(void);

/* Directory of the build tree's top, from $top_builddir, or "." */
const char *cutest_builddir(void);

#endif

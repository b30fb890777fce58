/* SPDX-License-Identifier: BSD-3-Clause */
/* What to count besides a program mpxkit starts: every CPU, or tasks already running. */
#ifndef MPXKIT_ATTACH_H
#define MPXKIT_ATTACH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpxkit/error.h"
#include "mpxkit/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * perf stat's targets besides a workload it forks: -a counts every online
 * CPU (one perf source per CPU, pid -1), -p a running process (one source per
 * thread it has at the attach, each with inherit on, so threads and children
 * those threads create later are counted too), -t single threads.  The
 * sources are summed into one (mpxkit_source_open_sum) or counted one by one
 * (--per-thread).  Everything here reads /proc and /sys, and reports one
 * line in diag on failure (mpxkit/error.h).
 */

/*
 * A CPU list in the kernel's format ("0-3,8,10-11\n", as
 * /sys/devices/system/cpu/online holds it): *cpus (malloc'ed, the caller
 * frees) gets the CPUs in ascending order, each once.  -MPXKIT_EFORMAT for
 * anything else (an empty list, a range backwards, a number past 2^20).
 */
int mpxkit_attach_parse_cpus(const char *text, int **cpus, size_t *n, mpxkit_diag *diag);

/* The online CPUs, from /sys/devices/system/cpu/online, as above. */
int mpxkit_attach_cpus(int **cpus, size_t *n, mpxkit_diag *diag);

/*
 * The threads process pid has now (the entries of /proc/PID/task),
 * ascending, in *tids (malloc'ed).  -MPXKIT_ENOENT with "process PID: no
 * such process" when there is none.
 */
int mpxkit_attach_threads(pid_t pid, pid_t **tids, size_t *n, mpxkit_diag *diag);

/* 0 when task tid (a thread of any process) exists now; -MPXKIT_ENOENT "thread TID: no such
 * thread". */
int mpxkit_attach_thread_exists(pid_t tid, mpxkit_diag *diag);

/* The name of task tid (/proc/TID/comm, without its newline) in buf; "" once it is gone. */
void mpxkit_attach_comm(pid_t tid, char *buf, size_t cap);

/*
 * One perf source per target, each with the n_events events added, in
 * out[0 .. n-1]: out[i] is NULL where target i was a task that ended before
 * its counters could be opened (ESRCH), as perf stat leaves such a thread
 * out.  Returns how many were opened.  None: -MPXKIT_ENOENT ("every task
 * had ended").  On any other failure nothing is left open, and the line
 * says what the kernel refused: counting every CPU (pid -1) needs
 * CAP_PERFMON (or root) or kernel.perf_event_paranoid <= 0; a task of
 * another user needs ptrace access to it.
 */
int mpxkit_attach_open(mpxkit_source **out, const mpxkit_source_target *targets, size_t n,
		       const char *const *events, size_t n_events, mpxkit_diag *diag);

/*
 * A failure rc (with why's line) of counting target t, as mpxkit_attach_open
 * says it: a refused permission names what counting every CPU, or attaching
 * to a task, needs.  Returns rc.
 */
int mpxkit_attach_refused(const mpxkit_source_target *t, int rc, const mpxkit_diag *why,
			  mpxkit_diag *diag);

/*
 * The end of tasks.  A watch holds a pidfd per task where the kernel gives
 * one (pidfd_open(2): Linux 5.3 for processes, 6.9 for single threads), so
 * its end wakes the wait at once, and looks at /proc every 20 ms for the
 * others.  A process has ended when all its threads have (a zombie has
 * ended); a thread when it has exited.
 */
typedef struct mpxkit_attach_watch mpxkit_attach_watch;

/* Watches tasks[0 .. n-1] (n may be 0), processes or, with threads set, single threads. */
int mpxkit_attach_watch_new(mpxkit_attach_watch **out, const pid_t *tasks, size_t n, int threads,
			    mpxkit_diag *diag);

/*
 * Waits, with sigmask in force during the wait (ppoll(2)'s; NULL: the mask
 * as it is), until every task watched has ended: 1; until deadline_ns on
 * CLOCK_MONOTONIC has come (0: no deadline): 0; or until a signal handler
 * has run: 2.  With no task watched it waits for the deadline or a signal
 * only.  -MPXKIT_ESYS when ppoll fails otherwise.
 */
int mpxkit_attach_wait(mpxkit_attach_watch *w, uint64_t deadline_ns, const sigset_t *sigmask);

/* NULL is a no-op. */
void mpxkit_attach_watch_free(mpxkit_attach_watch *w);

#ifdef __cplusplus
}
#endif
#endif

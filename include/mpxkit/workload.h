/* SPDX-License-Identifier: BSD-3-Clause */
/* A measured program, started held before its exec so counters can be attached first. */
#ifndef MPXKIT_WORKLOAD_H
#define MPXKIT_WORKLOAD_H

#include <sys/types.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * As perf's "workload": mpxkit_workload_prepare forks a child that waits on a
 * pipe, and returns once it sleeps there (as /proc tells); the caller opens
 * its counters on w->pid; mpxkit_workload_start lets the
 * child exec argv and reports whether the exec worked.  So the counts cover
 * the program from its exec on, and none of the fork.  The child starts with
 * default SIGINT, SIGTERM, SIGHUP and SIGQUIT handling whatever the caller's.
 * From the prepare to the end of the wait (or mpxkit_workload_reaped), those
 * signals sent to this process are handled as mpxkit_workload_wait says.
 */
typedef struct mpxkit_workload {
	pid_t pid;  /* the child, or -1 */
	int go_fd;  /* written to let the child exec; internal */
	int err_fd; /* the child's exec errno, or closed empty by a successful exec; internal */
	const char *name; /* argv[0], for diagnostics; not owned */
} mpxkit_workload;

int mpxkit_workload_prepare(mpxkit_workload *w, char *const argv[], mpxkit_diag *diag);

/*
 * Lets the child exec.  0 once the exec succeeded; -MPXKIT_ENOENT (no such
 * program), -MPXKIT_EPERM (not executable) or -MPXKIT_ESYS when it failed,
 * with the diag "cannot run 'NAME': reason".  Either way the child must still
 * be reaped with mpxkit_workload_wait.
 */
int mpxkit_workload_start(mpxkit_workload *w, mpxkit_diag *diag);

/* Abandons a prepared child that was never started: it exits 127 and is reaped. */
void mpxkit_workload_cancel(mpxkit_workload *w);

/*
 * Waits for the child (retrying on EINTR) and stores its wait status; 0 or
 * -MPXKIT_ESYS.  From the prepare on, SIGINT, SIGTERM and SIGHUP sent to this
 * process with kill(2) are passed on to the child (a second one as
 * SIGKILL), so the program stops with the tool and the caller still reports
 * and cleans up; the terminal's ^C reaches the child by itself.  SIGQUIT is
 * ignored meanwhile.  A child that outlives its parent (killed by SIGKILL)
 * is killed too.
 */
int mpxkit_workload_wait(mpxkit_workload *w, int *wstatus);

/* The caller reaped the child itself (its own waitpid): the signals' handling ends. */
void mpxkit_workload_reaped(mpxkit_workload *w);

#ifdef __cplusplus
}
#endif
#endif

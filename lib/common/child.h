/* SPDX-License-Identifier: BSD-3-Clause */
/* Waiting for a measured program so that a signal to the tool stops the program too; internal. */
#ifndef MPXKIT_CHILD_H
#define MPXKIT_CHILD_H

#include <sys/types.h>

/*
 * Waits for the child pid (retrying on EINTR) and stores its wait status.
 * Meanwhile SIGINT, SIGTERM and SIGHUP sent to this process by kill(2) are
 * forwarded to the child, the first one as itself and any later one as
 * SIGKILL, so the caller's own cleanup still runs once the child has ended.
 * The terminal's ^C and hang-up reach the whole foreground process group,
 * the child included, so they are not sent again; SIGQUIT is ignored, as
 * system(3) ignores it.  The dispositions are restored before it returns.
 * Process-wide: one such wait at a time.  0, or -1 with errno set.
 */
int mpxkit__wait_child(pid_t pid, int *wstatus);

/*
 * In a child, after fork and before exec: the child is killed (SIGKILL)
 * when parent dies, whatever kills it, so no program outlives the tool that
 * measures it.  Exits 127 when parent is already gone.
 */
void mpxkit__die_with_parent(pid_t parent);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Waiting for a measured program so that a signal to the tool stops the program too; internal. */
#ifndef MPXKIT_CHILD_H
#define MPXKIT_CHILD_H

#include <sys/types.h>

/*
 * From mpxkit__forward_begin, before the fork, to the end of the wait:
 * SIGINT, SIGTERM and SIGHUP sent to this process by kill(2) are forwarded
 * to the child, the first one as itself and any later one as SIGKILL, so
 * the caller's own cleanup still runs once the child has ended.  One that
 * comes before mpxkit__forward_to names the child is held and sent then, so
 * no signal finds the tool between its fork and its wait with the default
 * action; when there is no child (the fork failed), mpxkit__forward_end
 * raises the held signal in the tool once its own dispositions are back.
 * The child, until its mpxkit__forward_reset, takes a signal as its own.
 * The terminal's ^C and hang-up reach the whole foreground process group,
 * the child included, so they are not sent again; SIGQUIT is ignored, as
 * system(3) ignores it.  Process-wide: one child at a time.
 */
void mpxkit__forward_begin(void);
/* In the parent, right after the fork (pid > 0; or -1 when it failed). */
void mpxkit__forward_to(pid_t pid);
/* The dispositions of before mpxkit__forward_begin again (nothing if none is in force). */
void mpxkit__forward_end(void);
/* In the child after fork: the forwarded signals and SIGQUIT back to their defaults. */
void mpxkit__forward_reset(void);

/*
 * Waits for the child pid (retrying on EINTR), stores its wait status and
 * ends the forwarding.  0, or -1 with errno set.
 */
int mpxkit__wait_child(pid_t pid, int *wstatus);

/*
 * In a child, after fork and before exec: the child is killed (SIGKILL)
 * when parent dies, whatever kills it, so no program outlives the tool that
 * measures it.  Exits 127 when parent is already gone.
 */
void mpxkit__die_with_parent(pid_t parent);

#endif

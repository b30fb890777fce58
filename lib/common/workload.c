/* SPDX-License-Identifier: BSD-3-Clause */
/* Fork held before exec, so the counters of `stat` and `record --perf` see the whole program. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/workload.h"

#include "child.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: wait for the go byte, exec, and on failure send errno back. */
static void __attribute__((noreturn)) child(char *const argv[], int go, int err, pid_t parent)
{
	char byte;
	int e;

	mpxkit__die_with_parent(parent);
	mpxkit__forward_reset();
	if (read(go, &byte, 1) != 1)
		_exit(127); /* the parent cancelled */
	execvp(argv[0], argv);
	e = errno;
	if (write(err, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/*
 * The state letter of /proc/PID/stat (R running, S sleeping, ...), or 0
 * when it cannot be read.
 */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

/*
 * Returns once the child sleeps in its read of the go pipe, the only place
 * it can sleep before its exec (at most 5 s; at once where /proc cannot
 * tell).  Counters opened on it afterwards then see nothing of the fork.
 * A child still on its way to that read (38 to 66 us of it seen after the
 * first counters were enabled) ran under counters already enabled, so two
 * sets enabled one after the other disagreed by that much: mpxkit stat
 * --exact's task clock, 53 and 60 us short in 2 runs of 50 on a loaded
 * machine; 62 us in 1 of 25 with the child made to spin 2 ms first, 0 of
 * 25 with this wait.
 */
static void wait_parked(pid_t pid)
{
	struct timespec pause = {0, 20000};

	for (int tries = 0; tries < 250000; tries++) {
		char state = proc_state(pid);
		if (state == 0 || state == 'S' || state == 'Z' || state == 'X' || state == 'T' ||
		    state == 't')
			return;
		nanosleep(&pause, NULL);
	}
}

int mpxkit_workload_prepare(mpxkit_workload *w, char *const argv[], mpxkit_diag *diag)
{
	int go[2], err[2];
	pid_t parent = getpid();

	w->pid = -1;
	w->go_fd = w->err_fd = -1;
	w->name = argv && argv[0] ? argv[0] : "";
	if (argv == NULL || argv[0] == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "no program to run");
	/* Close-on-exec: a successful exec closes the error pipe empty. */
	if (pipe2(go, O_CLOEXEC) != 0)
		return mpxkit_fail_sys(diag, "cannot start '%s'", w->name);
	if (pipe2(err, O_CLOEXEC) != 0) {
		int rc = mpxkit_fail_sys(diag, "cannot start '%s'", w->name);
		close(go[0]);
		close(go[1]);
		return rc;
	}
	/* From here to the wait, a signal to the tool reaches the child (mpxkit__forward_begin). */
	mpxkit__forward_begin();
	w->pid = fork();
	if (w->pid == 0) {
		close(go[1]);
		close(err[0]);
		child(argv, go[0], err[1], parent);
	}
	mpxkit__forward_to(w->pid);
	close(go[0]);
	close(err[1]);
	if (w->pid < 0) {
		int rc = mpxkit_fail_sys(diag, "cannot start '%s'", w->name);
		mpxkit__forward_end();
		close(go[1]);
		close(err[0]);
		return rc;
	}
	w->go_fd = go[1];
	w->err_fd = err[0];
	wait_parked(w->pid);
	return 0;
}

int mpxkit_workload_start(mpxkit_workload *w, mpxkit_diag *diag)
{
	int exec_errno = 0;

	if (write(w->go_fd, "g", 1) != 1)
		exec_errno = errno;
	close_fd(&w->go_fd);
	if (exec_errno == 0 && read(w->err_fd, &exec_errno, sizeof exec_errno) != sizeof exec_errno)
		exec_errno = 0;
	close_fd(&w->err_fd);
	if (exec_errno == 0)
		return 0;
	errno = exec_errno;
	if (exec_errno == ENOENT) {
		mpxkit_fail_sys(diag, "cannot run '%s'", w->name);
		if (diag)
			diag->code = -MPXKIT_ENOENT;
		return -MPXKIT_ENOENT;
	}
	return mpxkit_fail_sys(diag, "cannot run '%s'", w->name);
}

void mpxkit_workload_cancel(mpxkit_workload *w)
{
	close_fd(&w->go_fd);
	close_fd(&w->err_fd);
	if (w->pid > 0)
		mpxkit_workload_wait(w, NULL);
}

void mpxkit_workload_reaped(mpxkit_workload *w)
{
	w->pid = -1;
	mpxkit__forward_end();
}

int mpxkit_workload_wait(mpxkit_workload *w, int *wstatus)
{
	int status = 0;

	if (w->pid <= 0)
		return -MPXKIT_ESTATE;
	if (mpxkit__wait_child(w->pid, &status) < 0)
		return -MPXKIT_ESYS;
	w->pid = -1;
	if (wstatus)
		*wstatus = status;
	return 0;
}

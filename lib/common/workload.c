/* SPDX-License-Identifier: BSD-3-Clause */
/* Fork held before exec, so the counters of `stat` and `record --perf` see the whole program. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
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
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (read(go, &byte, 1) != 1)
		_exit(127); /* the parent cancelled */
	execvp(argv[0], argv);
	e = errno;
	if (write(err, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
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
	w->pid = fork();
	if (w->pid == 0) {
		close(go[1]);
		close(err[0]);
		child(argv, go[0], err[1], parent);
	}
	close(go[0]);
	close(err[1]);
	if (w->pid < 0) {
		int rc = mpxkit_fail_sys(diag, "cannot start '%s'", w->name);
		close(go[1]);
		close(err[0]);
		return rc;
	}
	w->go_fd = go[1];
	w->err_fd = err[0];
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

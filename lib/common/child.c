/* SPDX-License-Identifier: BSD-3-Clause */
/* Signals to the tool reach the program it waits for: no orphan keeps running after the tool. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile sig_atomic_t forward_pid;
static volatile sig_atomic_t forwards;

static void forward(int sig, siginfo_t *si, void *context)
{
	int saved = errno;

	(void)context;
	/* The terminal signals the foreground group: the child got this one already. */
	if (si->si_code != SI_KERNEL && forward_pid > 0)
		kill((pid_t)forward_pid, forwards++ ? SIGKILL : sig);
	errno = saved;
}

int mpxkit__wait_child(pid_t pid, int *wstatus)
{
	struct sigaction fwd, ign, old[N_FORWARDED], old_quit;
	int status = 0, rc = 0, e = 0;

	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward;
	fwd.sa_flags = SA_SIGINFO;
	sigfillset(&fwd.sa_mask);
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	forwards = 0;
	forward_pid = pid;
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &fwd, &old[i]);
	sigaction(SIGQUIT, &ign, &old_quit);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			rc = -1;
			e = errno;
			break;
		}
	}
	forward_pid = 0;
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (rc == 0 && wstatus)
		*wstatus = status;
	errno = e;
	return rc;
}

void mpxkit__die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
}

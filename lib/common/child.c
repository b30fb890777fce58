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

static volatile sig_atomic_t forward_pid; /* the child; 0 before the fork has told it */
static volatile sig_atomic_t forwards;
static volatile sig_atomic_t held; /* a signal that came before the child was known */
static struct sigaction old[N_FORWARDED], old_quit;
static int forwarding;
static pid_t owner; /* the process that began the forwarding */

/*
 * A child between its fork and mpxkit__forward_reset still runs this handler:
 * the signal is its own, and it takes it as it would after the reset (else it
 * would be held in the child's copy and lost at its exec).
 */
static void own_signal(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig); /* delivered when the handler returns */
}

static void forward(int sig, siginfo_t *si, void *context)
{
	int saved = errno;

	(void)context;
	if (getpid() != owner)
		own_signal(sig);
	/* The terminal signals the foreground group: the child got this one already. */
	else if (si->si_code != SI_KERNEL) {
		if (forward_pid > 0)
			kill((pid_t)forward_pid, forwards++ ? SIGKILL : sig);
		else if (held == 0)
			held = sig;
	}
	errno = saved;
}

void mpxkit__forward_begin(void)
{
	struct sigaction fwd, ign;

	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward;
	fwd.sa_flags = SA_SIGINFO;
	sigfillset(&fwd.sa_mask);
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	forward_pid = 0;
	forwards = 0;
	held = 0;
	owner = getpid();
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &fwd, &old[i]);
	sigaction(SIGQUIT, &ign, &old_quit);
	forwarding = 1;
}

void mpxkit__forward_to(pid_t pid)
{
	sigset_t block, saved;

	/* The handler and this code both send: with the signals blocked, only one of them does. */
	sigemptyset(&block);
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &saved);
	forward_pid = pid;
	/* Without a child the signal stays held: mpxkit__forward_end gives it back to the tool. */
	if (held != 0 && pid > 0) {
		kill(pid, forwards++ ? SIGKILL : held);
		held = 0;
	}
	sigprocmask(SIG_SETMASK, &saved, NULL);
}

void mpxkit__forward_end(void)
{
	int sig;

	if (!forwarding)
		return;
	forward_pid = 0;
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	forwarding = 0;
	/*
	 * A signal no child took (the fork failed, or it came as the child was
	 * reaped) was meant for the tool: it gets it now, under its own disposition.
	 */
	sig = held;
	held = 0;
	if (sig != 0)
		raise(sig);
}

void mpxkit__forward_reset(void)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &dfl, NULL);
	sigaction(SIGQUIT, &dfl, NULL);
}

int mpxkit__wait_child(pid_t pid, int *wstatus)
{
	int status = 0, rc = 0, e = 0;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			rc = -1;
			e = errno;
			break;
		}
	}
	mpxkit__forward_end();
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* Workloads: held before exec, then run, with exec failures reported as codes and one line. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h" /* lib/common: the forwarding the workloads use */
#include "cutest.h"
#include "mpxkit/workload.h"

static void test_runs_and_reports_status(void)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	mpxkit_workload w;
	int status = -1;

	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, NULL), 0);
	CU_ASSERT(w.pid > 0);
	CU_ASSERT_EQUAL(mpxkit_workload_start(&w, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	CU_ASSERT_EQUAL(w.pid, -1);
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), -MPXKIT_ESTATE);
	mpxkit_workload_cancel(&w); /* after a wait: nothing left to do */
}

/* The child must not exec before start: a marker file it would create is absent until then. */
static void test_held_until_start(void)
{
	char path[] = "/tmp/mpxkit-test-workload-XXXXXX";
	char *argv[] = { "touch", path, NULL };
	mpxkit_workload w;
	int fd = mkstemp(path), status;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, NULL), 0);
	usleep(50000);
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	CU_ASSERT_EQUAL(mpxkit_workload_start(&w, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), 0);
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	unlink(path);
}

static void test_missing_program(void)
{
	char *argv[] = { "/nonexistent/mpxkit-no-such-program", NULL };
	mpxkit_diag d = { 0 };
	mpxkit_workload w;
	int status;

	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_workload_start(&w, &d), -MPXKIT_ENOENT);
	CU_ASSERT_EQUAL(d.code, -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(d.msg, "cannot run '/nonexistent/mpxkit-no-such-program': "
				      "No such file or directory");
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

static void test_not_executable(void)
{
	char path[] = "/tmp/mpxkit-test-workload-XXXXXX";
	char *argv[] = { path, NULL };
	mpxkit_diag d = { 0 };
	mpxkit_workload w;
	int fd = mkstemp(path), status, rc;

	CU_ASSERT_FATAL(fd >= 0);
	close(fd); /* mode 0600: not executable */
	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, &d), 0);
	rc = mpxkit_workload_start(&w, &d);
	/* root may still be refused: execve needs an x bit for everyone, root included. */
	CU_ASSERT_EQUAL(rc, -MPXKIT_EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "Permission denied"));
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), 0);
	unlink(path);
}

static void test_cancel_reaps(void)
{
	char *argv[] = { "true", NULL };
	mpxkit_workload w;
	pid_t pid;

	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, NULL), 0);
	pid = w.pid;
	mpxkit_workload_cancel(&w);
	CU_ASSERT_EQUAL(w.pid, -1);
	CU_ASSERT_EQUAL(waitpid(pid, NULL, WNOHANG), -1); /* already reaped */
}

/*
 * A SIGTERM sent to the tool between the prepare and the wait (here: before
 * the start) reaches the held child, which it ends, and not the tool; after
 * the wait the tool's own disposition is back.
 */
static void test_signal_before_the_wait(void)
{
	char *argv[] = { "sleep", "60", NULL };
	struct sigaction before, after;
	mpxkit_workload w;
	int status = 0;

	sigaction(SIGTERM, NULL, &before);
	CU_ASSERT_EQUAL_FATAL(mpxkit_workload_prepare(&w, argv, NULL), 0);
	CU_ASSERT_EQUAL(kill(getpid(), SIGTERM), 0); /* the tool would have died here before */
	CU_ASSERT_EQUAL(mpxkit_workload_wait(&w, &status), 0);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	sigaction(SIGTERM, NULL, &after);
	CU_ASSERT(after.sa_handler == before.sa_handler);
	mpxkit_workload_cancel(&w);
}

static volatile sig_atomic_t got_term;

static void note_term(int sig)
{
	(void)sig;
	got_term++;
}

/*
 * A SIGTERM that comes after the forwarding began and before a child exists
 * is held; when the fork fails, no child takes it, and the tool must still get
 * it, once, under its own handler, when the forwarding ends.
 */
static void test_held_signal_without_a_child(void)
{
	struct sigaction note, before;

	memset(&note, 0, sizeof note);
	note.sa_handler = note_term;
	sigemptyset(&note.sa_mask);
	sigaction(SIGTERM, &note, &before);
	got_term = 0;
	mpxkit__forward_begin();
	CU_ASSERT_EQUAL(raise(SIGTERM), 0);
	mpxkit__forward_to(-1);
	CU_ASSERT_EQUAL(got_term, 0);
	mpxkit__forward_end();
	CU_ASSERT_EQUAL(got_term, 1);
	mpxkit__forward_end(); /* a second end gives nothing again */
	CU_ASSERT_EQUAL(got_term, 1);
	sigaction(SIGTERM, &before, NULL);
}

/*
 * A signal forwarded to the child before it has reset its dispositions (it
 * still runs the tool's handler) ends it as it would after the reset, and is
 * not held in its copy of the tool's state, to be lost at its exec.
 */
static void test_signal_before_the_child_resets(void)
{
	int status = 0;
	pid_t pid;

	mpxkit__forward_begin();
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		raise(SIGTERM); /* as the tool's kill would find it, before the reset */
		_exit(0);
	}
	mpxkit__forward_to(pid);
	CU_ASSERT_EQUAL(mpxkit__wait_child(pid, &status), 0);
	CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

/* In a child of the test: fork fails (EAGAIN) from here on, even for root. */
static int forbid_fork(void)
{
	struct rlimit none = { 0, 0 };

	/* root is exempt from RLIMIT_NPROC: give up root first (nobody's ids). */
	if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
		return -1;
	return setrlimit(RLIMIT_NPROC, &none);
}

/*
 * When the fork itself fails, prepare says so with one line, and the tool's
 * dispositions are its own again.  Checked in a child, where forks can be
 * forbidden without touching the test's own process.
 */
static void test_failed_fork(void)
{
	pid_t pid = fork();
	int status = 0;

	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "true", NULL };
		struct sigaction before, after;
		mpxkit_workload w;
		mpxkit_diag d;
		int rc;

		if (forbid_fork() != 0)
			_exit(77);
		sigaction(SIGTERM, NULL, &before);
		rc = mpxkit_workload_prepare(&w, argv, &d);
		sigaction(SIGTERM, NULL, &after);
		if (rc >= 0)
			_exit(1);
		if (strstr(d.msg, "cannot start 'true'") == NULL)
			_exit(2);
		_exit(after.sa_handler == before.sa_handler ? 0 : 3);
	}
	CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_FATAL(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		return; /* could not forbid forks here: nothing to check */
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

static void test_no_program(void)
{
	char *argv[] = { NULL };
	mpxkit_workload w;
	CU_ASSERT_EQUAL(mpxkit_workload_prepare(&w, argv, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_workload_prepare(&w, NULL, NULL), -MPXKIT_EINVAL);
}

static const cutest_case workload_cases[] = {
	{ "runs and reports its status", test_runs_and_reports_status },
	{ "held until start", test_held_until_start },
	{ "missing program", test_missing_program },
	{ "not executable", test_not_executable },
	{ "cancel reaps the child", test_cancel_reaps },
	{ "a signal before the wait ends the child, not the tool", test_signal_before_the_wait },
	{ "a held signal without a child reaches the tool", test_held_signal_without_a_child },
	{ "a failed fork", test_failed_fork },
	{ "a signal before the child resets ends it", test_signal_before_the_child_resets },
	{ "no program", test_no_program },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "workload", workload_cases, NULL, NULL },
					{ NULL, NULL, NULL, NULL } };
	return cutest_run("test_workload", suites);
}

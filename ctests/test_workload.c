/* SPDX-License-Identifier: BSD-3-Clause */
/* Workloads: held before exec, then run, with exec failures reported as codes and one line. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
	{ "no program", test_no_program },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "workload", workload_cases, NULL, NULL },
					{ NULL, NULL, NULL, NULL } };
	return cutest_run("test_workload", suites);
}

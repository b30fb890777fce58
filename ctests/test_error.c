/* SPDX-License-Identifier: BSD-3-Clause */
/* The error contract: every code has text, unknown codes too, diags carry one line. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/error.h"

static void test_every_code_has_text(void)
{
	for (int c = 0; c < MPXKIT_ERROR_COUNT_; c++) {
		CU_ASSERT_PTR_NOT_NULL(mpxkit_strerror(c));
		CU_ASSERT_STRING_EQUAL(mpxkit_strerror(c), mpxkit_strerror(-c));
		CU_ASSERT(strcmp(mpxkit_errname(c), "EUNKNOWN") != 0);
	}
	CU_ASSERT_STRING_EQUAL(mpxkit_errname(-MPXKIT_EFORMAT), "EFORMAT");
}

static void test_unknown_code_never_null(void)
{
	CU_ASSERT_STRING_EQUAL(mpxkit_strerror(9999), "unknown mpxkit error");
	CU_ASSERT_STRING_EQUAL(mpxkit_strerror(-9999), "unknown mpxkit error");
	CU_ASSERT_STRING_EQUAL(mpxkit_strerror(-2147483647), "unknown mpxkit error");
	CU_ASSERT_STRING_EQUAL(mpxkit_errname(12345), "EUNKNOWN");
}

static void test_fail_fills_diag(void)
{
	mpxkit_diag d = { 0 };
	int rc = mpxkit_fail(&d, MPXKIT_EFORMAT, "%s:%d: %s", "t.csv", 3, "ragged row");
	CU_ASSERT_EQUAL(rc, -MPXKIT_EFORMAT);
	CU_ASSERT_EQUAL(d.code, -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "t.csv:3: ragged row");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(&d, rc), "t.csv:3: ragged row");
	CU_ASSERT_EQUAL(mpxkit_fail(NULL, MPXKIT_ENOMEM, "x"), -MPXKIT_ENOMEM);
}

static void test_fail_sys_keeps_errno(void)
{
	mpxkit_diag d = { 0 };
	errno = EACCES;
	CU_ASSERT_EQUAL(mpxkit_fail_sys(&d, "open %s", "/x"), -MPXKIT_EPERM);
	CU_ASSERT_EQUAL(errno, EACCES);
	CU_ASSERT_EQUAL(d.sys_errno, EACCES);
	CU_ASSERT_STRING_EQUAL(d.msg, "open /x: Permission denied");
	errno = ENOENT;
	CU_ASSERT_EQUAL(mpxkit_fail_sys(&d, "open"), -MPXKIT_ESYS);
}

static void test_diag_message_falls_back(void)
{
	mpxkit_diag d = { 0 };
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(&d, -MPXKIT_ETRUNC), "truncated input");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(NULL, -MPXKIT_ETRUNC), "truncated input");
}

static void *other_thread(void *arg)
{
	(void)arg;
	/* Not this thread's failure: none here. */
	return (void *)(mpxkit_diag_last() == NULL ? "none" : "leaked");
}

/* A failure without a diag keeps its line for the thread that met it, and for it only. */
static void test_last_failure_per_thread(void)
{
	mpxkit_diag d = { 0 };
	const mpxkit_diag *last;
	pthread_t t;
	void *seen = NULL;

	errno = EBADF;
	CU_ASSERT_EQUAL(mpxkit_fail_sys(NULL, "ioctl"), -MPXKIT_ESYS);
	CU_ASSERT_EQUAL(errno, EBADF);
	last = mpxkit_diag_last();
	CU_ASSERT_PTR_NOT_NULL_FATAL(last);
	CU_ASSERT_EQUAL(last->code, -MPXKIT_ESYS);
	CU_ASSERT_EQUAL(last->sys_errno, EBADF);
	CU_ASSERT_STRING_EQUAL(last->msg, "ioctl: Bad file descriptor");
	/* The fallback of an unfilled diag, for that code only, with either sign. */
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(NULL, -MPXKIT_ESYS), "ioctl: Bad file descriptor");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(&d, MPXKIT_ESYS), "ioctl: Bad file descriptor");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(NULL, -MPXKIT_ETRUNC), "truncated input");
	/* A failure with a diag goes there, and leaves the last one as it was. */
	mpxkit_fail(&d, MPXKIT_ESYS, "mine");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(&d, -MPXKIT_ESYS), "mine");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_last()->msg, "ioctl: Bad file descriptor");
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, other_thread, NULL), 0);
	pthread_join(t, &seen);
	CU_ASSERT_STRING_EQUAL((const char *)seen, "none");
	/* mpxkit_fail without a diag is kept too. */
	mpxkit_fail(NULL, MPXKIT_EIO, "read of %s: short", "x");
	CU_ASSERT_STRING_EQUAL(mpxkit_diag_message(NULL, -MPXKIT_EIO), "read of x: short");
}

/* A 100,000-byte name is shortened in the line, and the reason after it survives (issue 25). */
static void test_long_words_are_bounded(void)
{
	static char name[100001];
	char want[256];
	mpxkit_diag d = { 0 };

	memset(name, 'x', sizeof name - 1);
	name[0] = 'A';
	name[sizeof name - 2] = 'Z';
	mpxkit_fail(&d, MPXKIT_ENOENT, "event '%s': no such event", name);
	/* The word is 'A...Z': with its quotes and colon, 100,003 bytes: 100 of them, 40 at its end. */
	snprintf(want, sizeof want, "event '%.99s...[100003 bytes]...%.37sZ': no such event",
		 name, name + 1000);
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	/* A word of MPXKIT_ECHO_MAX bytes is kept whole. */
	name[MPXKIT_ECHO_MAX] = '\0';
	mpxkit_fail(&d, MPXKIT_ENOENT, "%s", name);
	CU_ASSERT_EQUAL(strlen(d.msg), MPXKIT_ECHO_MAX);
	/* No UTF-8 character is cut: "é" is 2 bytes, the head's 100th byte would split one. */
	{
		char utf[400] = "x";
		for (int i = 0; i < 150; i++)
			strcat(utf, "\xc3\xa9");
		mpxkit_fail(&d, MPXKIT_EINVAL, "%s", utf);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "x\xc3\xa9"));
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "\xc3\xa9...[301 bytes]...\xc3\xa9"));
	}
}

static const cutest_case error_cases[] = {
	{ "every code has text", test_every_code_has_text },
	{ "unknown code never NULL", test_unknown_code_never_null },
	{ "fail fills diag", test_fail_fills_diag },
	{ "fail_sys keeps errno", test_fail_sys_keeps_errno },
	{ "diag message falls back", test_diag_message_falls_back },
	{ "long words are bounded", test_long_words_are_bounded },
	{ "the last failure, per thread", test_last_failure_per_thread },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "error", error_cases, NULL, NULL }, { NULL, NULL, NULL, NULL } };
	return cutest_run("test_error", suites);
}

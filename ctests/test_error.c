/* SPDX-License-Identifier: BSD-3-Clause */
/* The error contract: every code has text, unknown codes too, diags carry one line. */
#include <errno.h>
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

static const cutest_case error_cases[] = {
	{ "every code has text", test_every_code_has_text },
	{ "unknown code never NULL", test_unknown_code_never_null },
	{ "fail fills diag", test_fail_fills_diag },
	{ "fail_sys keeps errno", test_fail_sys_keeps_errno },
	{ "diag message falls back", test_diag_message_falls_back },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "error", error_cases, NULL, NULL }, { NULL, NULL, NULL, NULL } };
	return cutest_run("test_error", suites);
}

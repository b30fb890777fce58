/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared CUnit driver: registers suites and turns CUnit's counters into an exit status. */
#ifndef MPXKIT_CUTEST_H
#define MPXKIT_CUTEST_H

#include <CUnit/CUnit.h>

/* automake's code for a test that cannot run here. */
#define CUTEST_SKIP 77

typedef struct cutest_case {
	const char *name;
	void (*fn)(void);
} cutest_case;

typedef struct cutest_suite {
	const char *name;
	const cutest_case *cases; /* ends with {NULL, NULL} */
	int (*setup)(void);
	int (*teardown)(void);
} cutest_suite;

/*
 * Runs the suites (the list ends with a suite whose name is NULL) with the
 * basic verbose interface and returns the process exit status: 0 only when no
 * assertion, test or suite failed.  CU_basic_run_tests() alone returns 0 even
 * when assertions fail, so the status comes from CUnit's failure counters.
 */
int cutest_run(const char *program, const cutest_suite *suites);

/*
 * Nonzero when the test runs under valgrind (make check-valgrind).  Tests of
 * time-sliced accuracy use it to skip what valgrind's serialised, unfair thread
 * scheduling makes meaningless there, saying so in their output; memory errors
 * are what that run checks.
 */
int cutest_under_valgrind(void);

/* Directory of the source tree's top, from $top_srcdir, or "." */
const char *cutest_srcdir(void);

/* Directory of the build tree's top, from $top_builddir, or "." */
const char *cutest_builddir(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared CUnit driver for every check program. */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "cutest.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

static int add_suite(const cutest_suite *s)
{
	CU_pSuite suite = CU_add_suite(s->name, s->setup, s->teardown);
	if (suite == NULL)
		return -1;
	for (const cutest_case *c = s->cases; c->name != NULL; c++)
		if (CU_add_test(suite, c->name, c->fn) == NULL)
			return -1;
	return 0;
}

int cutest_run(const char *program, const cutest_suite *suites)
{
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "%s: cannot initialise CUnit: %s\n", program, CU_get_error_msg());
		return 2;
	}
	for (const cutest_suite *s = suites; s->name != NULL; s++) {
		if (add_suite(s) != 0) {
			fprintf(stderr, "%s: cannot register suite %s: %s\n", program, s->name,
				CU_get_error_msg());
			CU_cleanup_registry();
			return 2;
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed() +
		   CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

static const char *env_or_dot(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : ".";
}

const char *cutest_srcdir(void)
{
	return env_or_dot("top_srcdir");
}

const char *cutest_builddir(void)
{
	return env_or_dot("top_builddir");
}

int cutest_under_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
	return RUNNING_ON_VALGRIND != 0;
#else
	return 0;
#endif
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiplexing simulation against hand-worked schedules: groups, slices, rotations, reference.
 */
#include <string.h>

#include "cutest.h"
#include "mpxkit/mpx.h"

/* Five events over seven slices; value = 100 x slice + column + 1, so each cell is recognisable. */
static mpxkit_trace *five_events(void)
{
	const char *names[] = {"a", "b", "c", "d", "e"};
	mpxkit_trace *t = NULL;

	if (mpxkit_trace_new(&t, NULL, 5, names, NULL) != 0)
		return NULL;
	for (uint64_t s = 0; s < 7; s++) {
		uint64_t row[5];
		for (uint64_t c = 0; c < 5; c++)
			row[c] = 100 * s + c + 1;
		if (mpxkit_trace_append(t, s, row) != 0)
			return mpxkit_trace_free(t), NULL;
	}
	return t;
}

static uint64_t cell(uint64_t slice, uint64_t column)
{
	return 100 * slice + column + 1;
}

static void test_column_order(void)
{
	mpxkit_trace *t = five_events();
	mpxkit_mpx_config cfg = {.counters = 2};
	mpxkit_mpx_run *r = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
	/* 5 events, 2 counters: groups {a,b} {c,d} {e}, G = 3; 7 slices = 2 whole rotations. */
	CU_ASSERT_EQUAL(r->layout.n_events, 5);
	CU_ASSERT_EQUAL(r->layout.n_groups, 3);
	CU_ASSERT_EQUAL(r->n_rotations, 2);
	CU_ASSERT_FALSE(r->layout.has_reference);
	CU_ASSERT_PTR_NULL(r->ref);
	{
		size_t want_slice[5] = {0, 0, 1, 1, 2};
		for (size_t e = 0; e < 5; e++) {
			CU_ASSERT_EQUAL(r->slice[e], want_slice[e]);
			CU_ASSERT_EQUAL(r->column[e], e);
			CU_ASSERT_STRING_EQUAL(r->events[e], t->events[e]);
			for (uint64_t k = 0; k < 2; k++) {
				uint64_t sum =
				    cell(3 * k, e) + cell(3 * k + 1, e) + cell(3 * k + 2, e);
				CU_ASSERT_EQUAL(r->obs[k * 5 + e], cell(3 * k + want_slice[e], e));
				CU_ASSERT_EQUAL(r->ocoe[k * 5 + e], sum);
			}
		}
	}
	/* Spot values, worked by hand: c in rotation 1 is seen in slice 4 = 403. */
	CU_ASSERT_EQUAL(r->obs[1 * 5 + 2], 403);
	CU_ASSERT_EQUAL(r->ocoe[1 * 5 + 2], 303 + 403 + 503);
	mpxkit_mpx_run_free(r);
	mpxkit_trace_free(t);
}

static void test_reference_and_max_steps(void)
{
	mpxkit_trace *t = five_events();
	mpxkit_mpx_config cfg = {.counters = 2, .reference = "b", .max_steps = 5};
	mpxkit_mpx_run *r = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
	/* b leaves the groups: {a,c} {d,e}, G = 2; 5 slices = 2 rotations. */
	CU_ASSERT_EQUAL(r->layout.n_events, 4);
	CU_ASSERT_EQUAL(r->layout.n_groups, 2);
	CU_ASSERT_EQUAL(r->n_rotations, 2);
	CU_ASSERT_TRUE(r->layout.has_reference);
	CU_ASSERT_EQUAL(r->ref_column, 1);
	CU_ASSERT_STRING_EQUAL(r->events[0], "a");
	CU_ASSERT_STRING_EQUAL(r->events[1], "c");
	CU_ASSERT_STRING_EQUAL(r->events[2], "d");
	CU_ASSERT_STRING_EQUAL(r->events[3], "e");
	CU_ASSERT_EQUAL(r->slice[1], 0);
	CU_ASSERT_EQUAL(r->slice[2], 1);
	/* Reference b in rotation 1: slices 2 and 3. */
	CU_ASSERT_EQUAL(r->ref[2], 202);
	CU_ASSERT_EQUAL(r->ref[3], 302);
	/* d (column 3) in rotation 1 is seen in slice 3. */
	CU_ASSERT_EQUAL(r->obs[1 * 4 + 2], 304);
	CU_ASSERT_EQUAL(r->ocoe[1 * 4 + 2], 204 + 304);
	mpxkit_mpx_run_free(r);
	mpxkit_trace_free(t);
}

static void test_enough_counters(void)
{
	mpxkit_trace *t = five_events();
	mpxkit_mpx_config cfg = {.counters = 8};
	mpxkit_mpx_run *r = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
	/* One group: every slice is a rotation and observation = truth. */
	CU_ASSERT_EQUAL(r->layout.n_groups, 1);
	CU_ASSERT_EQUAL(r->n_rotations, 7);
	CU_ASSERT(memcmp(r->obs, r->ocoe, 7 * 5 * sizeof(uint64_t)) == 0);
	CU_ASSERT(memcmp(r->obs, t->values, 7 * 5 * sizeof(uint64_t)) == 0);
	mpxkit_mpx_run_free(r);
	mpxkit_trace_free(t);
}

static void test_group_file(void)
{
	const char *text = "# two groups, out of column order\n"
			   "e, a\n"
			   "\n"
			   "  d\tc  # trailing comment\n";
	mpxkit_groups *g = NULL;
	mpxkit_trace *t = five_events();
	mpxkit_mpx_config cfg = {.counters = 2};
	mpxkit_mpx_run *r = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_groups_parse("g.txt", text, strlen(text), &g, NULL), 0);
	CU_ASSERT_EQUAL(g->n_groups, 2);
	CU_ASSERT_EQUAL(g->n_names, 4);
	CU_ASSERT_STRING_EQUAL(g->names[2], "d");
	CU_ASSERT_EQUAL(g->group[2], 1);
	CU_ASSERT_EQUAL(g->line[2], 4);
	cfg.groups = g;
	CU_ASSERT_EQUAL_FATAL(mpxkit_mpx_simulate(t, &cfg, &r, NULL), 0);
	/* Events e a d c; b is in no group and not evaluated.  G = 2, 3 rotations. */
	CU_ASSERT_EQUAL(r->layout.n_events, 4);
	CU_ASSERT_EQUAL(r->layout.n_groups, 2);
	CU_ASSERT_EQUAL(r->n_rotations, 3);
	CU_ASSERT_STRING_EQUAL(r->events[0], "e");
	CU_ASSERT_EQUAL(r->column[0], 4);
	CU_ASSERT_EQUAL(r->slice[3], 1);
	/* c (column 2) in rotation 2 is seen in slice 5. */
	CU_ASSERT_EQUAL(r->obs[2 * 4 + 3], 503);
	CU_ASSERT_EQUAL(r->ocoe[2 * 4 + 3], 403 + 503);
	mpxkit_mpx_run_free(r);
	mpxkit_groups_free(g);
	mpxkit_trace_free(t);
}

static void expect_fail(const char *groups, const mpxkit_mpx_config *base, int code,
			const char *msg)
{
	mpxkit_groups *g = NULL;
	mpxkit_trace *t = five_events();
	mpxkit_mpx_config cfg = *base;
	mpxkit_mpx_run *r = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	if (groups) {
		CU_ASSERT_EQUAL_FATAL(
		    mpxkit_groups_parse("g.txt", groups, strlen(groups), &g, NULL), 0);
		cfg.groups = g;
	}
	CU_ASSERT_EQUAL(mpxkit_mpx_simulate(t, &cfg, &r, &d), -code);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	mpxkit_groups_free(g);
	mpxkit_trace_free(t);
}

static void test_errors(void)
{
	mpxkit_mpx_config two = {.counters = 2, .trace_name = "t.csv"};
	mpxkit_mpx_config zero = {.counters = 0};
	mpxkit_mpx_config ref = {.counters = 2, .reference = "zz", .trace_name = "t.csv"};
	mpxkit_mpx_config refb = {.counters = 2, .reference = "b", .trace_name = "t.csv"};
	mpxkit_mpx_config one = {.counters = 1, .trace_name = "t.csv"};
	mpxkit_mpx_config short_run = {.counters = 1, .max_steps = 4, .trace_name = "t.csv"};
	mpxkit_groups *g = NULL;

	expect_fail(NULL, &zero, MPXKIT_EINVAL, "mpx: at least one counter is needed");
	expect_fail(NULL, &ref, MPXKIT_EINVAL, "t.csv: no reference event 'zz'");
	expect_fail("a\nq\n", &two, MPXKIT_EINVAL, "g.txt:2: t.csv has no event 'q'");
	expect_fail(
	    "a b\n", &refb, MPXKIT_EINVAL,
	    "g.txt:1: 'b' is the reference, counted in every slice; it belongs to no group");
	expect_fail("a b\nc\n", &one, MPXKIT_EINVAL,
		    "g.txt:1: group 1 has more events than the 1 counters");
	/* 1 counter: G = 5; 4 slices are no rotation. */
	expect_fail(NULL, &short_run, MPXKIT_ERANGE,
		    "t.csv: 4 slices make no whole window of 5 slices");

	{
		mpxkit_diag d = {0};
		const char *dup = "a b\nc a\n";
		const char *empty = "# nothing\n\n";
		CU_ASSERT_EQUAL(mpxkit_groups_parse("g.txt", dup, strlen(dup), &g, &d),
				-MPXKIT_EFORMAT);
		CU_ASSERT_STRING_EQUAL(d.msg, "g.txt:2: event 'a' is already in group 1 (line 1)");
		CU_ASSERT_EQUAL(mpxkit_groups_parse("g.txt", empty, strlen(empty), &g, &d),
				-MPXKIT_EFORMAT);
		CU_ASSERT_STRING_EQUAL(d.msg, "g.txt:2: no group: the file names no event");
		CU_ASSERT_EQUAL(mpxkit_groups_read("/nonexistent/g.txt", &g, &d), -MPXKIT_ESYS);
		CU_ASSERT_PTR_NULL(g);
	}
}

static void test_overflow(void)
{
	const char *names[] = {"a", "b"};
	uint64_t big[2] = {UINT64_MAX - 1, 1}, two[2] = {2, 1};
	mpxkit_trace *t = NULL;
	mpxkit_mpx_config cfg = {.counters = 1, .trace_name = "t.csv"};
	mpxkit_mpx_run *r = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, NULL, 2, names, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, 0, big), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, 1, two), 0);
	CU_ASSERT_EQUAL(mpxkit_mpx_simulate(t, &cfg, &r, &d), -MPXKIT_ERANGE);
	CU_ASSERT_STRING_EQUAL(d.msg, "t.csv: window 0 of 'a' sums past 2^64-1");
	mpxkit_trace_free(t);
}

static const cutest_case mpx_cases[] = {
    {"column order", test_column_order},
    {"reference and max_steps", test_reference_and_max_steps},
    {"enough counters", test_enough_counters},
    {"group file", test_group_file},
    {"errors", test_errors},
    {"overflow", test_overflow},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"mpx", mpx_cases, NULL, NULL}, {NULL, NULL, NULL, NULL}};
	return cutest_run("test_mpx", suites);
}

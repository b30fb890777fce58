/* SPDX-License-Identifier: BSD-3-Clause */
/* The callgrind dump reader, the dump-to-trace collector and the cache geometry checks. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/record.h"

static int make_tmpdir(void)
{
	return cutest_scratch_make("record");
}

static void put_file(const char *name, const char *text)
{
	FILE *f = fopen(cutest_scratch_path(name), "wb");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_FATAL(fwrite(text, 1, strlen(text), f) == strlen(text));
	CU_ASSERT_FATAL(fclose(f) == 0);
}

/* A dump as callgrind 3.19 writes it, cut down; the body lines must not count. */
#define HEAD(part, from, to)                                                                       \
	"# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\n"                   \
	"cmd:  ./prog a b\npart: " part "\n\n\ndesc: I1 cache: 32768 B, 64 B, 8-way\n"             \
	"desc: Timerange: Basic block " from " - " to "\ndesc: Trigger: --dump-every-bb=100\n"     \
	"\npositions: line\nevents: Ir Dr Dw Bc Bcm\nsummary: 999 1 1 1 1\n\n\n"                   \
	"ob=(1) /lib/ld.so\nfl=(1) ???\nfn=(1) _start\n+2 2 2\n+1 4 0 0 2 1\n"

/* Reads name, expecting failure with code, and a diag that starts with "PATH:LINE: ". */
static void expect_bad(const char *name, int code, int line, const char *reason)
{
	mpxkit_callgrind_dump *d = (mpxkit_callgrind_dump *)0x1;
	mpxkit_diag diag = {0};
	char want[600];
	const char *path = cutest_scratch_path(name);

	CU_ASSERT_EQUAL(mpxkit_callgrind_read(path, &d, &diag), -code);
	CU_ASSERT_PTR_EQUAL(d, (mpxkit_callgrind_dump *)0x1); /* untouched on failure */
	CU_ASSERT_EQUAL(diag.code, -code);
	snprintf(want, sizeof want, "%s:%d: %s", path, line, reason);
	CU_ASSERT_STRING_EQUAL(diag.msg, want);
	if (strcmp(diag.msg, want) != 0)
		fprintf(stderr, "\n  got  '%s'\n  want '%s'\n", diag.msg, want);
}

static void test_read_one_dump(void)
{
	mpxkit_callgrind_dump *d = NULL;
	mpxkit_diag diag = {0};

	put_file("one", HEAD("3", "200", "350") "totals: 7 6 5\n\n");
	CU_ASSERT_EQUAL_FATAL(mpxkit_callgrind_read(cutest_scratch_path("one"), &d, &diag), 0);
	CU_ASSERT_EQUAL(d->part, 3);
	CU_ASSERT_STRING_EQUAL(d->creator, "callgrind-3.19.0");
	CU_ASSERT_EQUAL_FATAL(d->n_events, 5);
	CU_ASSERT_STRING_EQUAL(d->events[0], "Ir");
	CU_ASSERT_STRING_EQUAL(d->events[4], "Bcm");
	/* The totals: line, not the summary: line; the events it leaves out are zero. */
	CU_ASSERT_EQUAL(d->totals[0], 7);
	CU_ASSERT_EQUAL(d->totals[1], 6);
	CU_ASSERT_EQUAL(d->totals[2], 5);
	CU_ASSERT_EQUAL(d->totals[3], 0);
	CU_ASSERT_EQUAL(d->totals[4], 0);
	CU_ASSERT_EQUAL(d->bb_begin, 200);
	CU_ASSERT_EQUAL(d->bb_end, 350);
	mpxkit_callgrind_dump_free(d);
	mpxkit_callgrind_dump_free(NULL);
}

static void test_largest_count(void)
{
	mpxkit_callgrind_dump *d = NULL;

	put_file("max", HEAD("1", "0", "1") "totals: 18446744073709551615 0 0 0 1\n");
	CU_ASSERT_EQUAL_FATAL(mpxkit_callgrind_read(cutest_scratch_path("max"), &d, NULL), 0);
	CU_ASSERT_EQUAL(d->totals[0], UINT64_MAX);
	CU_ASSERT_EQUAL(d->totals[4], 1);
	mpxkit_callgrind_dump_free(d);
}

static void test_bad_dumps(void)
{
	/* HEAD is 22 lines long. */
	put_file("truncated", HEAD("1", "0", "9") "+3 1 1\n");
	expect_bad("truncated", MPXKIT_EFORMAT, 23, "no totals: line at the end (file truncated?)");
	put_file("cut", HEAD("1", "0", "9") "totals: 7 6");
	expect_bad("cut", MPXKIT_EFORMAT, 23, "last line has no newline (file truncated?)");
	put_file("noevents", "version: 1\npart: 1\nsummary: 4\n\nfn=(1) f\n1 4\ntotals: 4\n");
	expect_bad("noevents", MPXKIT_EFORMAT, 7, "totals: before the events: line");
	put_file("noevents2", "version: 1\npart: 1\n\nfn=(1) f\n1 4\n");
	expect_bad("noevents2", MPXKIT_EFORMAT, 5, "no events: line");
	put_file("alpha", HEAD("1", "0", "9") "totals: 7 x6 5\n");
	expect_bad("alpha", MPXKIT_EFORMAT, 23, "count 'x6' is not a number");
	put_file("alpha2", HEAD("1", "0", "9") "totals: 7 6e3 5\n");
	expect_bad("alpha2", MPXKIT_EFORMAT, 23, "count '6e3' is not a number");
	put_file("negative", HEAD("1", "0", "9") "totals: 7 -6 5\n");
	expect_bad("negative", MPXKIT_EFORMAT, 23, "count '-6' is not a number");
	put_file("overflow", HEAD("1", "0", "9") "totals: 18446744073709551616\n");
	expect_bad("overflow", MPXKIT_ERANGE, 23, "count overflows 64 bits");
	put_file("toomany", HEAD("1", "0", "9") "totals: 1 2 3 4 5 6\n");
	expect_bad("toomany", MPXKIT_EFORMAT, 23, "totals: has more counts than the 5 events");
	put_file("nocount", HEAD("1", "0", "9") "totals:   \n");
	expect_bad("nocount", MPXKIT_EFORMAT, 23, "totals: holds no count");
	put_file("after", HEAD("1", "0", "9") "totals: 1\n\nfn=(2) g\n");
	expect_bad("after", MPXKIT_EFORMAT, 25, "text after the totals: line");
	put_file("empty", "");
	expect_bad("empty", MPXKIT_EFORMAT, 1, "empty file");
	put_file("twice", "events: Ir\nevents: Ir\ntotals: 1\n");
	expect_bad("twice", MPXKIT_EFORMAT, 2,
		   "second events: line (combined dumps are not supported)");
	put_file("noname", "events:  \ntotals: 1\n");
	expect_bad("noname", MPXKIT_EFORMAT, 1, "events: line names no event");
	put_file("version", "version: 2\nevents: Ir\ntotals: 1\n");
	expect_bad("version", MPXKIT_EVERSION, 1, "callgrind format version 2, only 1 is known");
	put_file("part", "part: 0\nevents: Ir\ntotals: 1\n");
	expect_bad("part", MPXKIT_EFORMAT, 1, "bad part: number");
	/* put_file stops at a NUL: write these bytes by hand. */
	{
		FILE *f = fopen(cutest_scratch_path("nul"), "wb");
		CU_ASSERT_FATAL(f != NULL);
		fwrite("events: Ir\ntot\0als: 1\n", 1, 22, f);
		fclose(f);
	}
	expect_bad("nul", MPXKIT_EFORMAT, 2, "NUL byte: not a text callgrind output");
}

static void test_missing_file(void)
{
	mpxkit_diag diag = {0};
	mpxkit_callgrind_dump *d = NULL;
	mpxkit_trace *t = NULL;

	CU_ASSERT_EQUAL(mpxkit_callgrind_read(cutest_scratch_path("nothere"), &d, &diag), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "nothere: no such file"));
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("nothere"), &t, NULL), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NULL(t);
}

/* Three dumps: base.1 and base.2 periodic, base the final one; rows come in part order. */
static void test_collect_three_parts(void)
{
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	const uint64_t want[3][5] = {{10, 1, 2, 3, 4}, {20, 0, 0, 5, 0}, {30, 3, 0, 0, 0}};

	put_file("run.1", HEAD("1", "0", "120") "totals: 10 1 2 3 4\n");
	put_file("run.2", HEAD("2", "120", "240") "totals: 20 0 0 5\n");
	put_file("run", HEAD("3", "240", "275") "totals: 30 3\n");
	CU_ASSERT_EQUAL_FATAL(mpxkit_callgrind_collect(cutest_scratch_path("run"), &t, &diag), 0);
	CU_ASSERT_STRING_EQUAL(t->index_name, "step");
	CU_ASSERT_EQUAL_FATAL(t->n_events, 5);
	CU_ASSERT_STRING_EQUAL(t->events[3], "Bc");
	CU_ASSERT_EQUAL_FATAL(t->n_steps, 3);
	for (size_t s = 0; s < 3; s++) {
		CU_ASSERT_EQUAL(t->index[s], s);
		for (size_t e = 0; e < 5; e++)
			CU_ASSERT_EQUAL(t->values[s * 5 + e], want[s][e]);
	}
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "tool"), "callgrind");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "valgrind"), "3.19.0");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "total_bb"), "275");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "last_step_bb"), "35");
	mpxkit_trace_free(t);
}

/* A run without periodic dumps is one file and one step. */
static void test_collect_single(void)
{
	mpxkit_trace *t = NULL;

	put_file("single", "events: Ir Dr\ntotals: 5 6\n");
	CU_ASSERT_EQUAL_FATAL(mpxkit_callgrind_collect(cutest_scratch_path("single"), &t, NULL), 0);
	CU_ASSERT_EQUAL(t->n_steps, 1);
	CU_ASSERT_EQUAL(t->values[1], 6);
	CU_ASSERT_PTR_NULL(mpxkit_trace_get_meta(t, "valgrind"));
	mpxkit_trace_free(t);
}

static void test_collect_inconsistent(void)
{
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	char want[600];

	/* A gap: the final dump says part 3 but base.2 is missing. */
	put_file("gap.1", HEAD("1", "0", "1") "totals: 1\n");
	put_file("gap", HEAD("3", "2", "3") "totals: 1\n");
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("gap"), &t, &diag), -MPXKIT_ENOENT);
	CU_ASSERT_PTR_NULL(t);
	/* A dump of another run under the numbered name. */
	put_file("swap.1", HEAD("2", "0", "1") "totals: 1\n");
	put_file("swap", HEAD("2", "2", "3") "totals: 1\n");
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("swap"), &t, &diag), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s.1: holds part 2, expected part 1", cutest_scratch_path("swap"));
	CU_ASSERT_STRING_EQUAL(diag.msg, want);
	/* Other events in one dump. */
	put_file("ev.1", "part: 1\nevents: Ir Dw\ntotals: 1\n");
	put_file("ev", "part: 2\nevents: Ir Dr\ntotals: 1\n");
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("ev"), &t, &diag), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s.1: events differ from those of %s", cutest_scratch_path("ev"),
		 cutest_scratch_path("ev"));
	CU_ASSERT_STRING_EQUAL(diag.msg, want);
	/* A bad periodic dump fails the whole collection with its own line. */
	put_file("bad.1", "part: 1\nevents: Ir\ntotals: one\n");
	put_file("bad", "part: 2\nevents: Ir\ntotals: 1\n");
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("bad"), &t, &diag), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s.1:3: count 'one' is not a number", cutest_scratch_path("bad"));
	CU_ASSERT_STRING_EQUAL(diag.msg, want);
	/* Duplicate event names cannot make a trace. */
	put_file("dup", "events: Ir Dr Ir\ntotals: 1 2\n");
	CU_ASSERT_EQUAL(mpxkit_callgrind_collect(cutest_scratch_path("dup"), &t, &diag), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s:1: duplicate event 'Ir'", cutest_scratch_path("dup"));
	CU_ASSERT_STRING_EQUAL(diag.msg, want);
	CU_ASSERT_PTR_NULL(t);
}

static void test_geometry(void)
{
	mpxkit_cache_geometry g = {0, 0, 0};
	mpxkit_diag diag = {0};
	mpxkit_record_options o;

	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32768,8,64", "D1", &g, NULL), 0);
	CU_ASSERT_EQUAL(g.size, 32768);
	CU_ASSERT_EQUAL(g.assoc, 8);
	CU_ASSERT_EQUAL(g.line, 64);
	/* 12 ways of 64 B in 48 KiB: 64 sets (Golden Cove's L1D), valid. */
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("49152,12,64", "D1", &g, NULL), 0);
	/* 27.5 MiB, 11-way: 40960 sets, not a power of two. */
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("28835840,11,64", "LL", &g, &diag),
			-MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg, "LL: 28835840 bytes / (11 ways x 64-byte lines) is not "
					 "a power of two number of sets");
	CU_ASSERT_EQUAL(g.size, 49152); /* untouched on failure */
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32768,8,8", "I1", &g, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg, "I1: line size 8 is not a power of two of at least 16 "
					 "bytes");
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32768,0,64", "I1", &g, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("1000,8,64", "I1", &g, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32768,8", "I1", &g, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg,
			       "I1: '32768,8' is not SIZE,ASSOC,LINE (bytes, ways, bytes)");
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32768,8,64,1", "I1", &g, NULL),
			-MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("32k,8,64", "I1", &g, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("-32768,8,64", "I1", &g, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("", "I1", &g, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_parse("99999999999999999999,8,64", "I1", &g, NULL),
			-MPXKIT_EINVAL);
	/* The defaults are simulable, and what the header documents. */
	mpxkit_record_options_init(&o);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_check(&o.i1, "I1", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_check(&o.d1, "D1", NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_cache_geometry_check(&o.ll, "LL", NULL), 0);
	CU_ASSERT_EQUAL(o.ll.size, 2 * 1024 * 1024);
	CU_ASSERT_EQUAL(o.interval_bb, 1000000);
	CU_ASSERT_PTR_NULL(o.envp);
}

static void test_run_bad_arguments(void)
{
	mpxkit_record_options o;
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	char *missing[] = {(char *)"mpxkit-no-such-program-here", NULL};
	char *dir[] = {(char *)"/tmp", NULL};
	char *none[] = {NULL};

	mpxkit_record_options_init(&o);
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, missing, &t, NULL, &diag), -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(diag.msg, "program 'mpxkit-no-such-program-here' not found on PATH");
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, dir, &t, NULL, &diag), -MPXKIT_EPERM);
	CU_ASSERT_STRING_EQUAL(diag.msg, "program '/tmp' is not an executable file");
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, none, &t, NULL, &diag), -MPXKIT_EINVAL);
	o.valgrind = "/nonexistent/valgrind";
	dir[0] = (char *)"/bin/sh";
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, dir, &t, NULL, &diag), -MPXKIT_ENOENT);
	CU_ASSERT_STRING_EQUAL(diag.msg, "valgrind '/nonexistent/valgrind' not found");
	o.valgrind = NULL;
	o.interval_bb = 0;
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, dir, &t, NULL, &diag), -MPXKIT_EINVAL);
	o.interval_bb = 10;
	o.ll.line = 48;
	CU_ASSERT_EQUAL(mpxkit_record_run(&o, dir, &t, NULL, &diag), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(diag.msg, "LL: line size 48 is not a power of two of at least 16 "
					 "bytes");
	CU_ASSERT_PTR_NULL(t);
}

static const cutest_case parse_cases[] = {
    {"read one dump", test_read_one_dump},
    {"largest count", test_largest_count},
    {"bad dumps", test_bad_dumps},
    {"missing file", test_missing_file},
    {"collect three parts", test_collect_three_parts},
    {"collect single", test_collect_single},
    {"collect inconsistent", test_collect_inconsistent},
    {NULL, NULL},
};

static const cutest_case option_cases[] = {
    {"cache geometry", test_geometry},
    {"run with bad arguments", test_run_bad_arguments},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"callgrind dumps", parse_cases, make_tmpdir, cutest_scratch_remove},
	    {"record options", option_cases, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_record", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The trace reader and writer: round trips, gzip, line endings and every bad-input case. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "cutest.h"
#include "mpxkit/trace.h"

static int make_tmpdir(void)
{
	return cutest_scratch_make("trace");
}

static void put_file(const char *path, const char *bytes, size_t len)
{
	FILE *f = fopen(path, "wb");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_FATAL(fwrite(bytes, 1, len, f) == len);
	CU_ASSERT_FATAL(fclose(f) == 0);
}

static void put_gz(const char *path, const char *bytes, size_t len)
{
	gzFile gz = gzopen(path, "wb");
	CU_ASSERT_FATAL(gz != NULL);
	CU_ASSERT_FATAL(gzwrite(gz, bytes, (unsigned)len) == (int)len);
	CU_ASSERT_FATAL(gzclose(gz) == Z_OK);
}

/* Parses text from memory and checks the failure code and the exact diagnostic line. */
static void expect_bad(const char *csv, int code, const char *msg)
{
	mpxkit_trace *t = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_trace_parse("bad.csv", csv, strlen(csv), &t, &d);
	CU_ASSERT_EQUAL(rc, -code);
	CU_ASSERT_PTR_NULL(t);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	if (strcmp(d.msg, msg) != 0)
		fprintf(stderr, "\n  got:  %s\n  want: %s\n", d.msg, msg);
	mpxkit_trace_free(t);
}

static void test_parse_basic(void)
{
	const char *csv = "# program=ls\n#cc=gcc -O2\nstep,Ir,Dr\n0,970610,228547\n1,0,5\n";
	mpxkit_trace *t = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("x.csv", csv, strlen(csv), &t, NULL), 0);
	CU_ASSERT_STRING_EQUAL(t->index_name, "step");
	CU_ASSERT_EQUAL(t->n_events, 2);
	CU_ASSERT_STRING_EQUAL(t->events[0], "Ir");
	CU_ASSERT_STRING_EQUAL(t->events[1], "Dr");
	CU_ASSERT_EQUAL(t->n_steps, 2);
	CU_ASSERT_EQUAL(t->index[0], 0);
	CU_ASSERT_EQUAL(t->index[1], 1);
	CU_ASSERT_EQUAL(t->values[0], 970610);
	CU_ASSERT_EQUAL(t->values[1], 228547);
	CU_ASSERT_EQUAL(t->values[2], 0);
	CU_ASSERT_EQUAL(t->values[3], 5);
	CU_ASSERT_EQUAL(t->n_meta, 2);
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "program"), "ls");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "cc"), "gcc -O2");
	CU_ASSERT_PTR_NULL(mpxkit_trace_get_meta(t, "nope"));
	CU_ASSERT_EQUAL(mpxkit_trace_event_index(t, "Dr"), 1);
	CU_ASSERT_EQUAL(mpxkit_trace_event_index(t, "Dw"), -MPXKIT_ENOENT);
	mpxkit_trace_free(t);
}

static void test_line_endings(void)
{
	const char *crlf = "# a=b\r\ntime_ns,x\r\n10,1\r\n20,2\r\n";
	const char *nofinal = "step,x\n0,1\n1,18446744073709551615";
	const char *bom = "\xEF\xBB\xBFstep,x\n0,7\n";
	mpxkit_trace *t = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("c.csv", crlf, strlen(crlf), &t, NULL), 0);
	CU_ASSERT_STRING_EQUAL(t->index_name, "time_ns");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "a"), "b");
	CU_ASSERT_EQUAL(t->n_steps, 2);
	CU_ASSERT_EQUAL(t->index[1], 20);
	CU_ASSERT_EQUAL(t->values[1], 2);
	mpxkit_trace_free(t);
	t = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("n.csv", nofinal, strlen(nofinal), &t, NULL), 0);
	CU_ASSERT_EQUAL(t->n_steps, 2);
	CU_ASSERT_EQUAL(t->values[1], UINT64_MAX);
	mpxkit_trace_free(t);
	t = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("b.csv", bom, strlen(bom), &t, NULL), 0);
	CU_ASSERT_STRING_EQUAL(t->index_name, "step");
	CU_ASSERT_EQUAL(t->n_steps, 1);
	CU_ASSERT_EQUAL(t->values[0], 7);
	mpxkit_trace_free(t);
}

static void test_bad_inputs(void)
{
	expect_bad("", MPXKIT_EFORMAT, "bad.csv:1: empty file");
	expect_bad("# a=1\n# b=2\n", MPXKIT_EFORMAT, "bad.csv:2: no header: only metadata lines");
	expect_bad("0,1,2\n1,2,3\n", MPXKIT_EFORMAT,
		   "bad.csv:1: no header: the first column must be named 'step' or 'time_ns'");
	expect_bad("\nstep,a\n0,1\n", MPXKIT_EFORMAT,
		   "bad.csv:1: no header: blank line where the header belongs");
	expect_bad("step\n0\n", MPXKIT_EFORMAT, "bad.csv:1: header names no event column");
	expect_bad("step,a,b,a\n0,1,2,3\n", MPXKIT_EFORMAT, "bad.csv:1: duplicate event name 'a'");
	expect_bad("step,a,,b\n", MPXKIT_EFORMAT,
		   "bad.csv:1: header column 3: event name is empty or holds a quote or blank");
	expect_bad("step,a, b\n", MPXKIT_EFORMAT,
		   "bad.csv:1: header column 3: event name is empty or holds a quote or blank");
	expect_bad("step,a,b\n", MPXKIT_EFORMAT,
		   "bad.csv:1: empty trace: a header but no data rows");
	expect_bad("step,a,b\n0,1,2\n1,2\n", MPXKIT_EFORMAT,
		   "bad.csv:3: ragged row: 2 fields, the header has 3");
	expect_bad("step,a,b\n0,1,2\n1,2,3,4,5\n", MPXKIT_EFORMAT,
		   "bad.csv:3: ragged row: 5 fields, the header has 3");
	expect_bad("step,a,b\n0,1,2\n1,2,3,\n", MPXKIT_EFORMAT,
		   "bad.csv:3: ragged row: 4 fields, the header has 3");
	expect_bad("step,a,b\n0,1,x\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 3 ('b'): non-numeric value");
	expect_bad("step,a,b\n0,1.5,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
	expect_bad("step,a,b\n0,1e3,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
	expect_bad("step,a,b\n0, 1,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
	expect_bad("step,a,b\n0,+1,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
	expect_bad("step,a,b\n0,-7,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): negative value");
	expect_bad("step,a,b\n-1,7,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 1 ('step'): negative value");
	expect_bad("step,a,b\n0,-,2\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
	expect_bad("step,a,b\n0,,2\n", MPXKIT_EFORMAT, "bad.csv:2: column 2 ('a'): empty value");
	expect_bad("step,a,b\n0,1,18446744073709551616\n", MPXKIT_ERANGE,
		   "bad.csv:2: column 3 ('b'): value overflows 64 bits");
	expect_bad("step,a,b\n0,1,99999999999999999999999\n", MPXKIT_ERANGE,
		   "bad.csv:2: column 3 ('b'): value overflows 64 bits");
	expect_bad("step,a\n0,1\n\n1,2\n", MPXKIT_EFORMAT, "bad.csv:3: blank line");
	expect_bad("step,a\n0,1\n\n", MPXKIT_EFORMAT, "bad.csv:3: blank line");
	expect_bad("step,a\n0,1\n# late=1\n", MPXKIT_EFORMAT,
		   "bad.csv:3: metadata line after the header");
	expect_bad("# just a comment\nstep,a\n0,1\n", MPXKIT_EFORMAT,
		   "bad.csv:1: comment line is not '# key=value' metadata");
	expect_bad("# a b=1\nstep,a\n0,1\n", MPXKIT_EFORMAT,
		   "bad.csv:1: metadata key must match [A-Za-z0-9_.-]+");
	expect_bad("# a=1\n# a=2\nstep,a\n0,1\n", MPXKIT_EFORMAT,
		   "bad.csv:2: duplicate metadata key");
	expect_bad("step,a\n0,1\r\r\n", MPXKIT_EFORMAT,
		   "bad.csv:2: column 2 ('a'): non-numeric value");
}

static void test_nul_byte(void)
{
	static const char csv[] = "step,a\n0,1\n1,\0002\n";
	mpxkit_trace *t = NULL;
	mpxkit_diag d = {0};
	CU_ASSERT_EQUAL(mpxkit_trace_parse("z.csv", csv, sizeof csv - 1, &t, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "z.csv:3: NUL byte: not a text CSV file");
	CU_ASSERT_PTR_NULL(t);
}

static mpxkit_trace *sample_trace(void)
{
	const char *names[] = {"Ir", "perf::PAGE-FAULTS", "x.y"};
	uint64_t rows[3][3] = {{1, 2, 3}, {0, 0, 0}, {UINT64_MAX, 10, 42}};
	mpxkit_trace *t = NULL;

	if (mpxkit_trace_new(&t, NULL, 3, names, NULL) != 0)
		return NULL;
	for (int i = 0; i < 3; i++)
		if (mpxkit_trace_append(t, (uint64_t)i * 5, rows[i]) != 0)
			return mpxkit_trace_free(t), NULL;
	if (mpxkit_trace_set_meta(t, "program", "old") != 0 ||
	    mpxkit_trace_set_meta(t, "tool", "callgrind --cache-sim=yes") != 0 ||
	    mpxkit_trace_set_meta(t, "program", "new") != 0)
		return mpxkit_trace_free(t), NULL;
	return t;
}

static void check_same(const mpxkit_trace *a, const mpxkit_trace *b)
{
	CU_ASSERT_STRING_EQUAL(a->index_name, b->index_name);
	CU_ASSERT_EQUAL_FATAL(a->n_events, b->n_events);
	CU_ASSERT_EQUAL_FATAL(a->n_steps, b->n_steps);
	CU_ASSERT_EQUAL_FATAL(a->n_meta, b->n_meta);
	for (size_t e = 0; e < a->n_events; e++)
		CU_ASSERT_STRING_EQUAL(a->events[e], b->events[e]);
	for (size_t s = 0; s < a->n_steps; s++)
		CU_ASSERT_EQUAL(a->index[s], b->index[s]);
	CU_ASSERT(memcmp(a->values, b->values, a->n_steps * a->n_events * sizeof(uint64_t)) == 0);
	for (size_t m = 0; m < a->n_meta; m++) {
		CU_ASSERT_STRING_EQUAL(a->meta_keys[m], b->meta_keys[m]);
		CU_ASSERT_STRING_EQUAL(a->meta_values[m], b->meta_values[m]);
	}
}

static void test_round_trip(void)
{
	static const char *const suffixes[] = {"rt.csv", "rt.csv.gz"};
	mpxkit_trace *t = sample_trace();

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(t->n_meta, 2);
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(t, "program"), "new");
	for (int i = 0; i < 2; i++) {
		mpxkit_trace *back = NULL;
		mpxkit_diag d = {0};
		const char *path = cutest_scratch_path(suffixes[i]);
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_write(t, path, &d), 0);
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_read(path, &back, &d), 0);
		check_same(t, back);
		mpxkit_trace_free(back);
	}
	mpxkit_trace_free(t);
}

static void test_exact_text(void)
{
	const char *want = "# program=new\n# tool=callgrind --cache-sim=yes\n"
			   "step,Ir,perf::PAGE-FAULTS,x.y\n"
			   "0,1,2,3\n5,0,0,0\n10,18446744073709551615,10,42\n";
	mpxkit_trace *t = sample_trace();
	char got[512] = {0};
	FILE *f;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_write(t, cutest_scratch_path("exact.csv"), NULL), 0);
	f = fopen(cutest_scratch_path("exact.csv"), "rb");
	CU_ASSERT_FATAL(f != NULL);
	n = fread(got, 1, sizeof got - 1, f);
	fclose(f);
	CU_ASSERT_EQUAL(n, strlen(want));
	CU_ASSERT_STRING_EQUAL(got, want);
	mpxkit_trace_free(t);
}

static void test_gzip_by_content(void)
{
	const char *csv = "step,a\n0,1\n1,2\n";
	mpxkit_trace *t = NULL;
	/* A gzip file without the .gz suffix, and a plain file with it: content decides. */
	put_gz(cutest_scratch_path("gz-without-suffix.csv"), csv, strlen(csv));
	put_file(cutest_scratch_path("plain-with-suffix.csv.gz"), csv, strlen(csv));
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_read(cutest_scratch_path("gz-without-suffix.csv"), &t, NULL), 0);
	CU_ASSERT_EQUAL(t->n_steps, 2);
	CU_ASSERT_EQUAL(t->values[1], 2);
	mpxkit_trace_free(t);
	t = NULL;
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_read(cutest_scratch_path("plain-with-suffix.csv.gz"), &t, NULL), 0);
	CU_ASSERT_EQUAL(t->n_steps, 2);
	mpxkit_trace_free(t);
}

static void test_bad_files(void)
{
	const char *csv = "step,a\n0,1\n1,2\n2,3\n3,4\n";
	char whole[4096];
	mpxkit_trace *t = NULL;
	mpxkit_diag d = {0};
	char want[600];
	FILE *f;
	size_t n;

	/* A gzip stream cut short is an error, never a silently shorter trace. */
	put_gz(cutest_scratch_path("cut.csv.gz"), csv, strlen(csv));
	f = fopen(cutest_scratch_path("cut.csv.gz"), "rb");
	CU_ASSERT_FATAL(f != NULL);
	n = fread(whole, 1, sizeof whole, f);
	fclose(f);
	CU_ASSERT_FATAL(n > 12);
	put_file(cutest_scratch_path("cut.csv.gz"), whole, n - 6);
	CU_ASSERT(mpxkit_trace_read(cutest_scratch_path("cut.csv.gz"), &t, &d) < 0);
	CU_ASSERT_PTR_NULL(t);
	snprintf(want, sizeof want, "%s:", cutest_scratch_path("cut.csv.gz"));
	CU_ASSERT(strncmp(d.msg, want, strlen(want)) == 0);

	/* A corrupted deflate body. */
	whole[n / 2] ^= 0x55;
	whole[n / 2 + 1] ^= 0x55;
	put_file(cutest_scratch_path("corrupt.csv.gz"), whole, n);
	CU_ASSERT(mpxkit_trace_read(cutest_scratch_path("corrupt.csv.gz"), &t, &d) < 0);
	CU_ASSERT_PTR_NULL(t);

	put_file(cutest_scratch_path("empty.csv"), "", 0);
	CU_ASSERT_EQUAL(mpxkit_trace_read(cutest_scratch_path("empty.csv"), &t, &d), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s:1: empty file", cutest_scratch_path("empty.csv"));
	CU_ASSERT_STRING_EQUAL(d.msg, want);

	CU_ASSERT_EQUAL(mpxkit_trace_read(cutest_scratch_path("missing.csv"), &t, &d), -MPXKIT_ESYS);
	snprintf(want, sizeof want, "cannot open %s: No such file or directory",
		 cutest_scratch_path("missing.csv"));
	CU_ASSERT_STRING_EQUAL(d.msg, want);

	CU_ASSERT_EQUAL(mpxkit_trace_read(cutest_scratch(), &t, &d), -MPXKIT_ESYS);
	snprintf(want, sizeof want, "cannot read %s: Is a directory", cutest_scratch());
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	CU_ASSERT_PTR_NULL(t);
}

static void test_write_failure_leaves_nothing(void)
{
	mpxkit_trace *t = sample_trace();
	mpxkit_diag d = {0};
	const char *path = cutest_scratch_path("no-such-dir/out.csv");

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(mpxkit_trace_write(t, path, &d) < 0);
	CU_ASSERT(d.msg[0] != '\0');
	CU_ASSERT(access(path, F_OK) != 0);
	mpxkit_trace_free(t);
}

static void test_new_validates(void)
{
	const char *dup[] = {"a", "b", "a"};
	const char *comma[] = {"a,b"};
	const char *ok[] = {"a"};
	mpxkit_trace *t = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_trace_new(&t, NULL, 3, dup, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "trace: duplicate event name 'a'");
	CU_ASSERT_EQUAL(mpxkit_trace_new(&t, NULL, 1, comma, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_trace_new(&t, "cycles", 1, ok, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_trace_new(&t, NULL, 0, ok, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, "time_ns", 1, ok, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_trace_set_meta(t, "bad key", "v"), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_trace_set_meta(t, "k", "two\nlines"), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(t->n_meta, 0);
	mpxkit_trace_free(t);
	mpxkit_trace_free(NULL);
}

/*
 * Merging steps against a hand-worked trace: 7 steps of two events merged by
 * 3 give 2 steps (step 6 left out), (1+2+3, 10+0+5) and (4+5+6, 7+7+7), at
 * the indexes 100 and 130; the metadata kept, merged_steps=3, then 6 after a
 * second merge by 2 (one step: 21, 36).  By 1, a copy; by 8, refused.
 */
static void test_merge_steps(void)
{
	static const char csv[] = "# program=hand\n# interval_ns=1000000\n"
				  "time_ns,a,b\n100,1,10\n110,2,0\n120,3,5\n"
				  "130,4,7\n140,5,7\n150,6,7\n160,9,9\n";
	const uint64_t want[4] = {6, 15, 15, 21};
	mpxkit_trace *t = NULL, *m = NULL, *mm = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("hand.csv", csv, strlen(csv), &t, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_merge_steps(t, 3, &m, &d), 0);
	CU_ASSERT_EQUAL(m->n_steps, 2);
	CU_ASSERT_EQUAL(m->n_events, 2);
	CU_ASSERT_STRING_EQUAL(m->index_name, "time_ns");
	CU_ASSERT_STRING_EQUAL(m->events[1], "b");
	CU_ASSERT_EQUAL(m->index[0], 100);
	CU_ASSERT_EQUAL(m->index[1], 130);
	CU_ASSERT(memcmp(m->values, want, sizeof want) == 0);
	CU_ASSERT_EQUAL(m->n_meta, 3);
	CU_ASSERT_STRING_EQUAL(m->meta_keys[0], "program");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(m, "interval_ns"), "1000000");
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(m, "merged_steps"), "3");
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_merge_steps(m, 2, &mm, &d), 0);
	CU_ASSERT_EQUAL(mm->n_steps, 1);
	CU_ASSERT_EQUAL(mm->values[0], 21);
	CU_ASSERT_EQUAL(mm->values[1], 36);
	CU_ASSERT_STRING_EQUAL(mpxkit_trace_get_meta(mm, "merged_steps"), "6");
	mpxkit_trace_free(mm);
	mm = NULL;
	/* By 1: the same rows. */
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_merge_steps(t, 1, &mm, &d), 0);
	CU_ASSERT_EQUAL(mm->n_steps, 7);
	CU_ASSERT(memcmp(mm->values, t->values, 14 * sizeof *t->values) == 0);
	CU_ASSERT(memcmp(mm->index, t->index, 7 * sizeof *t->index) == 0);
	mpxkit_trace_free(mm);
	mm = NULL;
	CU_ASSERT_EQUAL(mpxkit_trace_merge_steps(t, 8, &mm, &d), -MPXKIT_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "trace: 7 steps are fewer than the 8 of one merged step");
	CU_ASSERT_EQUAL(mpxkit_trace_merge_steps(t, 0, &mm, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(mm);
	mpxkit_trace_free(m);
	mpxkit_trace_free(t);
}

/* A sum past 2^64 - 1, and a merged_steps that is not a count, are refused. */
static void test_merge_steps_bad(void)
{
	static const char big[] = "step,a\n0,18446744073709551615\n1,1\n";
	static const char bad[] = "# merged_steps=x\nstep,a\n0,1\n1,1\n";
	static const char zero[] = "# merged_steps=0\nstep,a\n0,1\n1,1\n";
	mpxkit_trace *t = NULL, *m = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("big.csv", big, strlen(big), &t, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_trace_merge_steps(t, 2, &m, &d), -MPXKIT_ERANGE);
	CU_ASSERT_STRING_EQUAL(d.msg, "trace: a sum of 2 steps from step 0 overflows 64 bits");
	CU_ASSERT_PTR_NULL(m);
	mpxkit_trace_free(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("bad.csv", bad, strlen(bad), &t, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_trace_merge_steps(t, 2, &m, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg,
			       "trace: metadata merged_steps=x is not a whole number >= 1");
	mpxkit_trace_free(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_parse("zero.csv", zero, strlen(zero), &t, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_trace_merge_steps(t, 2, &m, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NULL(m);
	mpxkit_trace_free(t);
}

static void test_many_rows(void)
{
	const char *names[] = {"a", "b"};
	mpxkit_trace *t = NULL, *back = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_new(&t, NULL, 2, names, NULL), 0);
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t row[2] = {i * i, i ^ 0x5555};
		CU_ASSERT_EQUAL_FATAL(mpxkit_trace_append(t, i, row), 0);
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_write(t, cutest_scratch_path("many.csv.gz"), NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_trace_read(cutest_scratch_path("many.csv.gz"), &back, NULL), 0);
	check_same(t, back);
	CU_ASSERT_EQUAL(back->values[2 * 9999], 9999ULL * 9999ULL);
	mpxkit_trace_free(t);
	mpxkit_trace_free(back);
}

static const cutest_case parse_cases[] = {
    {"basic", test_parse_basic},
    {"CRLF and no final newline", test_line_endings},
    {"every bad input", test_bad_inputs},
    {"NUL byte", test_nul_byte},
    {NULL, NULL},
};

static const cutest_case file_cases[] = {
    {"round trip plain and gzip", test_round_trip},
    {"exact written text", test_exact_text},
    {"gzip told by content", test_gzip_by_content},
    {"bad files", test_bad_files},
    {"failed write leaves nothing", test_write_failure_leaves_nothing},
    {"new validates", test_new_validates},
    {"10k rows", test_many_rows},
    {"merging steps: a hand-worked trace", test_merge_steps},
    {"merging steps: overflow, bad metadata", test_merge_steps_bad},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"trace parse", parse_cases, NULL, NULL},
	    {"trace files", file_cases, make_tmpdir, cutest_scratch_remove},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_trace", suites);
}

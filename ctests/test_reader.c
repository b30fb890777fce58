/* SPDX-License-Identifier: BSD-3-Clause */
/* The bounded reader: lines, NUL bytes, size and line bounds, gzip, and its messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cutest.h"
#include "mpxkit/reader.h"

static int setup(void)
{
	return cutest_scratch_make("reader");
}

static const char *put_file(const char *name, const void *data, size_t len)
{
	const char *path = cutest_scratch_path(name);
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
	return path;
}

static const char *put_gzip(const char *name, const void *data, size_t len)
{
	const char *path = cutest_scratch_path(name);
	gzFile gz = gzopen(path, "wb");

	if (gz) {
		gzwrite(gz, data, (unsigned)len);
		gzclose(gz);
	}
	return path;
}

/* Every line of a file joined with '|', as the reader hands them out. */
static int read_lines(const char *path, const mpxkit_reader_options *opt, char *out, size_t cap,
		      mpxkit_diag *d)
{
	mpxkit_reader *r;
	char *line;
	size_t len, used = 0;
	int rc = mpxkit_reader_open(&r, path, opt, d);

	if (rc < 0)
		return rc;
	out[0] = '\0';
	while ((rc = mpxkit_reader_line(r, &line, &len, d)) == 1) {
		CU_ASSERT_EQUAL(strlen(line), len);
		used += (size_t)snprintf(out + used, cap - used, "%s|", line);
	}
	mpxkit_reader_close(r);
	return rc;
}

static void test_lines(void)
{
	char got[256];
	mpxkit_reader_options text = { .flags = MPXKIT_READER_TEXT };
	const char *path = put_file("lines.txt", "a,b\n\nlast without LF", 20);

	CU_ASSERT_EQUAL(read_lines(path, &text, got, sizeof got, NULL), 0);
	CU_ASSERT_STRING_EQUAL(got, "a,b||last without LF|");
	path = put_file("crlf.txt", "x\r\ny\r\n", 6);
	CU_ASSERT_EQUAL(read_lines(path, &text, got, sizeof got, NULL), 0);
	CU_ASSERT_STRING_EQUAL(got, "x\r|y\r|");
	path = put_file("empty.txt", "", 0);
	CU_ASSERT_EQUAL(read_lines(path, &text, got, sizeof got, NULL), 0);
	CU_ASSERT_STRING_EQUAL(got, "");
}

/* Lines that straddle the reader's 64 KiB chunks come out whole. */
static void test_long_lines_across_chunks(void)
{
	size_t n = 300000, lines = 0, total = 0;
	char *data = malloc(n);
	mpxkit_reader *r;
	char *line;
	size_t len;
	uint64_t state = 7;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	for (size_t i = 0; i < n; i++)
		data[i] = cutest_urand(&state) > 0.9 ? '\n' : 'a' + (char)(i % 26);
	data[n - 1] = '\n';
	CU_ASSERT_EQUAL_FATAL(mpxkit_reader_open(&r, put_file("long.txt", data, n), NULL, NULL), 0);
	while (mpxkit_reader_line(r, &line, &len, NULL) == 1) {
		CU_ASSERT_EQUAL(memcmp(line, data + total, len), 0);
		CU_ASSERT_EQUAL(data[total + len], '\n');
		total += len + 1;
		lines++;
	}
	CU_ASSERT_EQUAL(total, n);
	CU_ASSERT_EQUAL(mpxkit_reader_lineno(r), lines);
	CU_ASSERT_EQUAL(mpxkit_reader_offset(r), n);
	mpxkit_reader_close(r);
	free(data);
}

static void test_nul_names_its_line(void)
{
	char got[64], want[512];
	mpxkit_diag d = { 0 };
	mpxkit_reader_options text = { .flags = MPXKIT_READER_TEXT, .what = "trace" };
	const char *path = put_file("nul.txt", "one\ntwo\nth\0ree\n", 15);
	char *buf = NULL;
	size_t len;

	CU_ASSERT_EQUAL(read_lines(path, &text, got, sizeof got, &d), -MPXKIT_EFORMAT);
	snprintf(want, sizeof want, "%s:3: NUL byte: not a text trace", path);
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	CU_ASSERT_EQUAL(mpxkit_read_file(path, &text, &buf, &len, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	CU_ASSERT_PTR_NULL(buf);
	/* Binary readers take NUL bytes. */
	CU_ASSERT_EQUAL(mpxkit_read_file(path, NULL, &buf, &len, &d), 0);
	CU_ASSERT_EQUAL(len, 15);
	CU_ASSERT_EQUAL(memcmp(buf, "one\ntwo\nth\0ree\n", 15), 0);
	free(buf);
}

static void test_dev_zero_stops_at_once(void)
{
	mpxkit_diag d = { 0 };
	mpxkit_reader_options text = { .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP };
	mpxkit_reader_options bounded = { .max_bytes = 1 << 20, .what = "model file" };
	char *buf = NULL;
	size_t len;

	CU_ASSERT_EQUAL(mpxkit_read_file("/dev/zero", &text, &buf, &len, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "/dev/zero:1: NUL byte: not a text input");
	CU_ASSERT_EQUAL(mpxkit_read_file("/dev/zero", &bounded, &buf, &len, &d), -MPXKIT_ERANGE);
	CU_ASSERT_STRING_EQUAL(d.msg, "/dev/zero: larger than 1048576 bytes, the limit for a model file");
	CU_ASSERT_PTR_NULL(buf);
}

static void test_line_bound(void)
{
	char got[64];
	mpxkit_diag d = { 0 };
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_TEXT, .max_line = 4 };
	const char *path = put_file("bound.txt", "abcd\nabcde\n", 11);

	CU_ASSERT_EQUAL(read_lines(path, &opt, got, sizeof got, &d), -MPXKIT_ERANGE);
	CU_ASSERT_STRING_EQUAL(got, "abcd|");
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, ":2: line longer than 4 bytes"));
}

static void test_gzip_transparent(void)
{
	char got[64];
	mpxkit_diag d = { 0 };
	mpxkit_reader_options gz = { .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP };
	const char *path = put_gzip("t.gz", "p\nq\n", 4);
	unsigned char whole[256];
	size_t n;
	FILE *f;

	CU_ASSERT_EQUAL(read_lines(path, &gz, got, sizeof got, &d), 0);
	CU_ASSERT_STRING_EQUAL(got, "p|q|");
	/* Without the flag the compressed bytes come as they are. */
	CU_ASSERT_EQUAL(read_lines(put_file("plain", "p\nq\n", 4), &gz, got, sizeof got, &d), 0);
	CU_ASSERT_STRING_EQUAL(got, "p|q|");
	f = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(whole, 1, sizeof whole, f);
	fclose(f);
	/* A gzip stream cut short is truncated input, not a short file. */
	path = put_file("cut.gz", whole, n - 6);
	CU_ASSERT_EQUAL(read_lines(path, &gz, got, sizeof got, &d), -MPXKIT_ETRUNC);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "gzip stream"));
	/* The file's name, once, and not zlib's name of the descriptor (issue 25). */
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "cut.gz: gzip stream: unexpected end of file"));
	CU_ASSERT_PTR_NULL(strstr(d.msg, "<fd:"));
}

static void test_gzip_bound_counts_inflated_bytes(void)
{
	size_t n = 1 << 20;
	char *data = malloc(n);
	mpxkit_diag d = { 0 };
	mpxkit_reader_options opt = { .flags = MPXKIT_READER_GZIP, .max_bytes = 200000 };
	char *buf = NULL;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	memset(data, 'x', n);
	/* 1 MiB of one byte compresses to about a kilobyte; the bound is on what it inflates to. */
	CU_ASSERT_EQUAL(mpxkit_read_file(put_gzip("bomb.gz", data, n), &opt, &buf, &len, &d),
			-MPXKIT_ERANGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "larger than 200000 bytes"));
	free(data);
}

static void test_open_errors(void)
{
	mpxkit_diag d = { 0 };
	mpxkit_reader *r = NULL;
	char want[512];

	CU_ASSERT_EQUAL(mpxkit_reader_open(&r, cutest_scratch_path("missing"), NULL, &d),
			-MPXKIT_ESYS);
	snprintf(want, sizeof want, "cannot open %s: No such file or directory",
		 cutest_scratch_path("missing"));
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	CU_ASSERT_EQUAL(mpxkit_reader_open(&r, cutest_scratch(), NULL, &d), -MPXKIT_ESYS);
	snprintf(want, sizeof want, "cannot read %s: Is a directory", cutest_scratch());
	CU_ASSERT_STRING_EQUAL(d.msg, want);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(mpxkit_reader_open(&r, "", NULL, &d), -MPXKIT_EINVAL);
	mpxkit_reader_close(NULL);
}

static void test_stream_and_binary_reads(void)
{
	FILE *f = fopen(put_file("bin", "0123456789", 10), "rb");
	mpxkit_reader *r;
	char buf[8];
	size_t got;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL_FATAL(mpxkit_reader_from_stream(&r, f, "bin", NULL, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_reader_read(r, buf, 4, &got, NULL), 0);
	CU_ASSERT_EQUAL(got, 4);
	CU_ASSERT_EQUAL(memcmp(buf, "0123", 4), 0);
	CU_ASSERT_EQUAL(mpxkit_reader_read(r, buf, 8, &got, NULL), 0);
	CU_ASSERT_EQUAL(got, 6);
	CU_ASSERT_EQUAL(memcmp(buf, "456789", 6), 0);
	CU_ASSERT_EQUAL(mpxkit_reader_read(r, buf, 8, &got, NULL), 0);
	CU_ASSERT_EQUAL(got, 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_reader_name(r), "bin");
	mpxkit_reader_close(r);
	/* The caller's stream stays open. */
	CU_ASSERT_EQUAL(fseek(f, 0, SEEK_SET), 0);
	CU_ASSERT_EQUAL(fgetc(f), '0');
	fclose(f);
}

/*
 * Every line of a file joined with '|' as mpxkit_reader_lines hands them out:
 * each window split at its LFs, all of it skipped, or (one_at_a_time) only its
 * first line skipped before asking again.
 */
static int read_windows(const char *path, const mpxkit_reader_options *opt, int one_at_a_time,
			char *out, size_t cap, mpxkit_diag *d, uint64_t *lines, uint64_t *bytes)
{
	mpxkit_reader *r;
	char *text;
	size_t len, used = 0;
	int rc = mpxkit_reader_open(&r, path, opt, d);

	if (rc < 0)
		return rc;
	out[0] = '\0';
	*lines = *bytes = 0;
	while ((rc = mpxkit_reader_lines(r, &text, &len, d)) == 1) {
		size_t at = 0, n = 0;
		CU_ASSERT(len > 0 && text[len - 1] == '\n');
		CU_ASSERT_PTR_NULL(memchr(text, '\0', len));
		while (at < len) {
			char *nl = memchr(text + at, '\n', len - at);
			used += (size_t)snprintf(out + used, cap - used, "%.*s|",
						 (int)(nl - (text + at)), text + at);
			at = (size_t)(nl - text) + 1;
			n++;
			if (one_at_a_time)
				break;
		}
		mpxkit_reader_skip(r, at, n);
	}
	*lines = mpxkit_reader_lineno(r);
	*bytes = mpxkit_reader_offset(r);
	mpxkit_reader_close(r);
	return rc;
}

/* Windows of whole lines give the lines, counts, errors and messages that lines one by one give. */
static void test_windows_match_lines(void)
{
	size_t n = 300000;
	char *data = malloc(n), *want = malloc(2 * n), *got = malloc(2 * n);
	mpxkit_reader_options text = { .flags = MPXKIT_READER_TEXT, .what = "trace" };
	mpxkit_reader_options gz = { .flags = MPXKIT_READER_TEXT | MPXKIT_READER_GZIP };
	mpxkit_reader_options bound = { .flags = MPXKIT_READER_TEXT, .max_line = 4 };
	uint64_t state = 11;
	struct {
		const char *path;
		const mpxkit_reader_options *opt;
	} cases[10];
	size_t nc = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	for (size_t i = 0; i < n; i++)
		data[i] = cutest_urand(&state) > 0.97 ? '\n' : 'a' + (char)(i % 26);
	/* the paths copied: cutest_scratch_path reuses four buffers */
	/* lines across chunks, no final LF */
	cases[nc].path = strdup(put_file("w-long.txt", data, n));
	cases[nc++].opt = &text;
	data[70000] = '\0'; /* a NUL in a later chunk */
	cases[nc].path = strdup(put_file("w-nul.txt", data, n));
	cases[nc++].opt = &text;
	cases[nc].path = strdup(put_file("w-lines.txt", "a,b\n\nlast without LF", 20));
	cases[nc++].opt = &text;
	cases[nc].path = strdup(put_file("w-crlf.txt", "x\r\ny\r\n", 6));
	cases[nc++].opt = &text;
	/* a last line without LF that fills the copy buffer: putting the LF back grows it */
	memset(want, 'x', 255);
	cases[nc].path = strdup(put_file("w-last255.txt", want, 255));
	cases[nc++].opt = &text;
	cases[nc].path = strdup(put_file("w-empty.txt", "", 0));
	cases[nc++].opt = &text;
	cases[nc].path = strdup(put_file("w-nul1.txt", "one\ntwo\nth\0ree\n", 15));
	cases[nc++].opt = &text;
	cases[nc].path = strdup(put_file("w-bound.txt", "abcd\nab\nabcde\nx\n", 17));
	cases[nc++].opt = &bound;
	cases[nc].path = strdup(put_gzip("w-gz.gz", "p\nq\nlast", 8));
	cases[nc++].opt = &gz;
	cases[nc].path = strdup(put_file("w-plain-gz.txt", "p\nq\n", 4));
	cases[nc++].opt = &gz;
	for (size_t c = 0; c < nc; c++) {
		CU_ASSERT_PTR_NOT_NULL_FATAL(cases[c].path);
		for (int one = 0; one < 2; one++) {
			mpxkit_diag dl = { 0 }, dw = { 0 };
			mpxkit_reader *r;
			char *line;
			size_t len, used = 0;
			uint64_t lines, bytes;
			int rc_l, rc_w;
			CU_ASSERT_EQUAL_FATAL(mpxkit_reader_open(&r, cases[c].path, cases[c].opt,
								 NULL),
					      0);
			want[0] = '\0';
			while ((rc_l = mpxkit_reader_line(r, &line, &len, &dl)) == 1)
				used += (size_t)snprintf(want + used, 2 * n - used, "%s|", line);
			rc_w = read_windows(cases[c].path, cases[c].opt, one, got, 2 * n, &dw, &lines,
					    &bytes);
			CU_ASSERT_EQUAL(rc_w, rc_l);
			CU_ASSERT_STRING_EQUAL(got, want);
			CU_ASSERT_STRING_EQUAL(dw.msg, dl.msg);
			if (rc_l == 0) {
				CU_ASSERT_EQUAL(lines, mpxkit_reader_lineno(r));
				CU_ASSERT_EQUAL(bytes, mpxkit_reader_offset(r));
			}
			mpxkit_reader_close(r);
		}
		free((char *)cases[c].path);
	}
	free(data);
	free(want);
	free(got);
}

static const cutest_case reader_cases[] = {
	{ "windows of whole lines match lines one by one", test_windows_match_lines },
	{ "lines", test_lines },
	{ "long lines across chunks", test_long_lines_across_chunks },
	{ "a NUL byte names its line", test_nul_names_its_line },
	{ "/dev/zero stops at once", test_dev_zero_stops_at_once },
	{ "line bound", test_line_bound },
	{ "gzip is transparent, truncation is reported", test_gzip_transparent },
	{ "the bound counts inflated bytes", test_gzip_bound_counts_inflated_bytes },
	{ "open errors", test_open_errors },
	{ "streams and binary reads", test_stream_and_binary_reads },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "reader", reader_cases, setup, cutest_scratch_remove },
					{ NULL, NULL, NULL, NULL } };
	return cutest_run("test_reader", suites);
}

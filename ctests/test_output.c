/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's shared output: escapers, number formats, the JSON writer, tables in three formats. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cutest.h"

#include "cli.h"
#include "output.h"
#include "svg.h"

/*
 * Every expected text below is written out by hand from the rules in
 * output.h (RFC 4180, RFC 8259, the table layout), not produced by the code.
 */

/* ---- capture --------------------------------------------------------------------------------- */

static cli_memout cap;

static FILE *cap_open(void)
{
	CU_ASSERT_FATAL(cli_memout_open(&cap) == 0);
	return cap.f;
}

/* The captured text; freed by the next cap_open's caller through cap_done. */
static const char *cap_text(void)
{
	CU_ASSERT_FATAL(cli_memout_close(&cap) == 0);
	return cap.text;
}

static void cap_done(void)
{
	free(cap.text);
	cap.text = NULL;
}

#define EXPECT_TEXT(call, want)                                                                    \
	do {                                                                                       \
		FILE *out_ = cap_open();                                                           \
		(void)out_;                                                                        \
		call;                                                                              \
		CU_ASSERT_STRING_EQUAL(cap_text(), want);                                          \
		if (strcmp(cap.text, want) != 0)                                                   \
			fprintf(stderr, "\n--- got:\n%s\n--- want:\n%s\n", cap.text, want);        \
		cap_done();                                                                        \
	} while (0)

/* ---- formats and escapers -------------------------------------------------------------------- */

static void test_parse_format(void)
{
	cli_format f = CLI_FORMAT_JSON;

	CU_ASSERT(cli_parse_format("table", &f) == 0 && f == CLI_FORMAT_TABLE);
	CU_ASSERT(cli_parse_format("csv", &f) == 0 && f == CLI_FORMAT_CSV);
	CU_ASSERT(cli_parse_format("json", &f) == 0 && f == CLI_FORMAT_JSON);
	CU_ASSERT(cli_parse_format("JSON", &f) == -1);
	CU_ASSERT(cli_parse_format("", &f) == -1);
	CU_ASSERT(cli_parse_format("tab", &f) == -1);
	CU_ASSERT(cli_parse_format(NULL, &f) == -1);
}

static void test_csv_field(void)
{
	EXPECT_TEXT(cli_csv_field(out_, "plain text"), "plain text");
	EXPECT_TEXT(cli_csv_field(out_, "a,b"), "\"a,b\"");
	EXPECT_TEXT(cli_csv_field(out_, "say \"hi\""), "\"say \"\"hi\"\"\"");
	EXPECT_TEXT(cli_csv_field(out_, "two\nlines"), "\"two\nlines\"");
	EXPECT_TEXT(cli_csv_field(out_, "cr\r"), "\"cr\r\"");
	EXPECT_TEXT(cli_csv_field(out_, "\""), "\"\"\"\"");
	EXPECT_TEXT(cli_csv_field(out_, "tab\tsemi;colon"), "tab\tsemi;colon");
	EXPECT_TEXT(cli_csv_field(out_, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac"),
		    "\xc3\xa9t\xc3\xa9 \xe2\x82\xac");
	EXPECT_TEXT(cli_csv_field(out_, ""), "");
	EXPECT_TEXT(cli_csv_field(out_, NULL), "");
}

static void test_json_string(void)
{
	EXPECT_TEXT(cli_json_string(out_, "plain"), "\"plain\"");
	EXPECT_TEXT(cli_json_string(out_, "a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	EXPECT_TEXT(cli_json_string(out_, "\n\t\r\x01\x1f"),
		    "\"\\u000a\\u0009\\u000d\\u0001\\u001f\"");
	EXPECT_TEXT(cli_json_string(out_, "del\x7f"), "\"del\x7f\"");
	/* UTF-8 passes through: 2, 3 and 4 byte sequences */
	EXPECT_TEXT(cli_json_string(out_, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
		    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* not UTF-8: a stray byte, an overlong '/', a surrogate, a cut sequence */
	EXPECT_TEXT(cli_json_string(out_, "a\xff"), "\"a\\ufffd\"");
	EXPECT_TEXT(cli_json_string(out_, "\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	EXPECT_TEXT(cli_json_string(out_, "\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	EXPECT_TEXT(cli_json_string(out_, "x\xe2\x82"), "\"x\\ufffd\\ufffd\"");
	EXPECT_TEXT(cli_json_string(out_, NULL), "null");
}

static void test_utf8_len(void)
{
	CU_ASSERT_EQUAL(cli_utf8_len("a"), 1);
	CU_ASSERT_EQUAL(cli_utf8_len("\xc2\x80"), 2);
	CU_ASSERT_EQUAL(cli_utf8_len("\xdf\xbf"), 2);
	CU_ASSERT_EQUAL(cli_utf8_len("\xe0\xa0\x80"), 3);
	CU_ASSERT_EQUAL(cli_utf8_len("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
	CU_ASSERT_EQUAL(cli_utf8_len("\xc1\xbf"), 0);	      /* overlong */
	CU_ASSERT_EQUAL(cli_utf8_len("\xe0\x9f\xbf"), 0);     /* overlong */
	CU_ASSERT_EQUAL(cli_utf8_len("\xf0\x8f\xbf\xbf"), 0); /* overlong */
	CU_ASSERT_EQUAL(cli_utf8_len("\xf4\x90\x80\x80"), 0); /* above U+10FFFF */
	CU_ASSERT_EQUAL(cli_utf8_len("\xef\xbf\xbe"), 0);     /* U+FFFE */
	CU_ASSERT_EQUAL(cli_utf8_len("\x80"), 0);
	CU_ASSERT_EQUAL(cli_utf8_len("\xe2\x82"), 0);
	CU_ASSERT_EQUAL(cli_text_width("\xc3\xa9t\xc3\xa9"), 3);
	CU_ASSERT_EQUAL(cli_text_width("a\xff"), 2);
}

static void test_json_number(void)
{
	EXPECT_TEXT(cli_json_number(out_, 0.1, 17), "0.1");
	EXPECT_TEXT(cli_json_number(out_, 1.0 / 3.0, 17), "0.3333333333333333");
	EXPECT_TEXT(cli_json_number(out_, 2.5, 17), "2.5");
	EXPECT_TEXT(cli_json_number(out_, 100.0, 17), "100");
	EXPECT_TEXT(cli_json_number(out_, 1e15, 17), "1000000000000000");
	EXPECT_TEXT(cli_json_number(out_, 1e16, 17), "1e+16");
	EXPECT_TEXT(cli_json_number(out_, 0.0001, 17), "0.0001");
	EXPECT_TEXT(cli_json_number(out_, 0.00001234, 17), "1.234e-05");
	EXPECT_TEXT(cli_json_number(out_, 1234.5, 17), "1234.5");
	EXPECT_TEXT(cli_json_number(out_, 1e22, 17), "1e+22");
	EXPECT_TEXT(cli_json_number(out_, 1e-7, 17), "1e-07");
	EXPECT_TEXT(cli_json_number(out_, 123456789012345678.0, 17), "1.2345678901234568e+17");
	EXPECT_TEXT(cli_json_number(out_, DBL_MAX, 17), "1.7976931348623157e+308");
	EXPECT_TEXT(cli_json_number(out_, 5e-324, 17), "5e-324");
	EXPECT_TEXT(cli_json_number(out_, -0.0, 17), "-0");
	EXPECT_TEXT(cli_json_number(out_, 3.14159, 3), "3.14");
	EXPECT_TEXT(cli_json_number(out_, NAN, 17), "null");
	EXPECT_TEXT(cli_json_number(out_, INFINITY, 17), "null");
	EXPECT_TEXT(cli_json_number(out_, -INFINITY, 6), "null");
}

/* Any finite double reads back exactly from what cli_json_number writes at 17. */
static void test_json_number_round_trips(void)
{
	uint64_t state = 20240611;
	int bad = 0;

	for (int i = 0; i < 20000; i++) {
		uint64_t bits;
		double v;
		char *end;
		FILE *out = cap_open();
		bits = (uint64_t)((cutest_urand(&state) + 1.0) * 0x1p52) << 12 ^
		       (uint64_t)((cutest_urand(&state) + 1.0) * 0x1p31);
		memcpy(&v, &bits, sizeof v);
		if (!isfinite(v))
			v = (double)i / 7.0;
		cli_json_number(out, v, 17);
		cap_text();
		bad += strtod(cap.text, &end) != v || *end != '\0';
		cap_done();
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* ---- JSON writer ----------------------------------------------------------------------------- */

static void test_json_writer_nesting(void)
{
	FILE *out = cap_open();
	cli_json *j = cli_json_new(out);

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	cli_json_object(j);
	cli_json_key(j, "name");
	cli_json_str(j, "x\"y");
	cli_json_key(j, "n");
	cli_json_int(j, INT64_MIN);
	cli_json_key(j, "u");
	cli_json_uint(j, UINT64_MAX);
	cli_json_key(j, "list");
	cli_json_array(j);
	cli_json_num(j, 0.1);
	cli_json_num(j, NAN);
	cli_json_null(j);
	cli_json_bool(j, 1);
	cli_json_bool(j, 0);
	cli_json_str(j, NULL);
	cli_json_close(j);
	cli_json_key(j, "empty");
	cli_json_object(j);
	cli_json_close(j);
	cli_json_key(j, "none");
	cli_json_array(j);
	cli_json_close(j);
	cli_json_key(j, "fixed");
	cli_json_fixed(j, 0.25, 3);
	cli_json_key(j, "zero");
	cli_json_fixed(j, -0.0001, 3);
	cli_json_key(j, "inf");
	cli_json_fixed(j, INFINITY, 2);
	cli_json_key(j, "deep");
	cli_json_array(j);
	cli_json_object(j);
	cli_json_key(j, "k\n");
	cli_json_fixed(j, 3.14159, 2);
	cli_json_close(j);
	cli_json_close(j);
	cli_json_close(j);
	CU_ASSERT_EQUAL(cli_json_end(j), 0);
	CU_ASSERT_STRING_EQUAL(cap_text(), "{\n"
					   "  \"name\": \"x\\\"y\",\n"
					   "  \"n\": -9223372036854775808,\n"
					   "  \"u\": 18446744073709551615,\n"
					   "  \"list\": [\n"
					   "    0.1,\n"
					   "    null,\n"
					   "    null,\n"
					   "    true,\n"
					   "    false,\n"
					   "    null\n"
					   "  ],\n"
					   "  \"empty\": {},\n"
					   "  \"none\": [],\n"
					   "  \"fixed\": 0.250,\n"
					   "  \"zero\": 0.000,\n"
					   "  \"inf\": null,\n"
					   "  \"deep\": [\n"
					   "    {\n"
					   "      \"k\\u000a\": 3.14\n"
					   "    }\n"
					   "  ]\n"
					   "}\n");
	cap_done();
}

/* cli_json_end closes what is still open. */
static void test_json_writer_closes(void)
{
	FILE *out = cap_open();
	cli_json *j = cli_json_new(out);

	cli_json_array(j);
	cli_json_object(j);
	cli_json_key(j, "a");
	cli_json_int(j, 1);
	CU_ASSERT_EQUAL(cli_json_end(j), 0);
	CU_ASSERT_STRING_EQUAL(cap_text(), "[\n  {\n    \"a\": 1\n  }\n]\n");
	cap_done();

	out = cap_open();
	j = cli_json_new(out);
	cli_json_num(j, 42);
	CU_ASSERT_EQUAL(cli_json_end(j), 0);
	CU_ASSERT_STRING_EQUAL(cap_text(), "42\n");
	cap_done();
}

/* Each misuse sets the flag: end returns -1, and nothing after the error is written. */
static void test_json_writer_errors(void)
{
	for (int kind = 0; kind < 8; kind++) {
		FILE *out = cap_open();
		cli_json *j = cli_json_new(out);
		switch (kind) {
		case 0: /* a value in an object without its key */
			cli_json_object(j);
			cli_json_int(j, 1);
			break;
		case 1: /* a key in an array */
			cli_json_array(j);
			cli_json_key(j, "k");
			break;
		case 2: /* closing what is not open */
			cli_json_int(j, 1);
			cli_json_close(j);
			break;
		case 3: /* two top-level values */
			cli_json_int(j, 1);
			cli_json_int(j, 2);
			break;
		case 4: /* a key left without its value */
			cli_json_object(j);
			cli_json_key(j, "k");
			break;
		case 5: /* closing over a waiting key */
			cli_json_object(j);
			cli_json_key(j, "k");
			cli_json_close(j);
			break;
		case 6: /* two keys in a row */
			cli_json_object(j);
			cli_json_key(j, "a");
			cli_json_key(j, "b");
			break;
		case 7: /* nothing at all */
			break;
		}
		CU_ASSERT_EQUAL(cli_json_end(j), -1);
		cap_text();
		cap_done();
	}
	CU_ASSERT_EQUAL(cli_json_end(NULL), -1);
	cli_json_int(NULL, 1); /* no-ops, no crash */
	cli_json_close(NULL);
	cli_json_key(NULL, "k");
	CU_ASSERT_PTR_NULL(cli_json_new(NULL));
}

/* ---- tables ---------------------------------------------------------------------------------- */

static const cli_column demo_columns[] = {
    {"name", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"count", "count", CLI_COL_INT, 0, 1, NULL},
    {"ratio", "ratio", CLI_COL_FIXED, 3, 0, "<not counted>"},
    {"value", "value", CLI_COL_REAL, 4, 0, NULL},
};

static cli_table *demo_table(void)
{
	cli_table *t = cli_table_new(demo_columns, 4);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(cli_table_comment(t, "%d rows, %s", 3, "by hand"), 0);
	CU_ASSERT_EQUAL(cli_table_text(t, "alpha"), 0);
	CU_ASSERT_EQUAL(cli_table_int(t, 1234567), 0);
	CU_ASSERT_EQUAL(cli_table_real(t, 0.5), 0);
	CU_ASSERT_EQUAL(cli_table_real(t, 1.0 / 3.0), 0);
	CU_ASSERT_EQUAL(cli_table_text(t, "b,\"c\""), 0);
	CU_ASSERT_EQUAL(cli_table_int(t, -42), 0);
	CU_ASSERT_EQUAL(cli_table_real(t, NAN), 0);
	CU_ASSERT_EQUAL(cli_table_real(t, 1e-10), 0);
	CU_ASSERT_EQUAL(cli_table_text(t, "\xc3\xa9"), 0);
	CU_ASSERT_EQUAL(cli_table_uint(t, 0), 0);
	CU_ASSERT_EQUAL(cli_table_real(t, 2.0), 0);
	CU_ASSERT_EQUAL(cli_table_missing(t), 0);
	CU_ASSERT_EQUAL(cli_table_rows(t), 3);
	return t;
}

static void test_table_aligned(void)
{
	cli_table *t = demo_table();

	/* widths: name 5, count 9 ("1,234,567"), ratio 13 ("<not counted>"), value 6 ("0.3333") */
	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_TABLE, out_), 0),
		    "# 3 rows, by hand\n"
		    "name       count          ratio   value\n"
		    "alpha  1,234,567          0.500  0.3333\n"
		    "b,\"c\"        -42  <not counted>   1e-10\n"
		    "\xc3\xa9              0          2.000       -\n");
	cli_table_free(t);
}

static void test_table_csv(void)
{
	cli_table *t = demo_table();

	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_CSV, out_), 0),
		    "name,count,ratio,value\n"
		    "alpha,1234567,0.500,0.3333333333333333\n"
		    "\"b,\"\"c\"\"\",-42,,1e-10\n"
		    "\xc3\xa9,0,2.000,\n");
	cli_table_free(t);
}

static void test_table_json(void)
{
	cli_table *t = demo_table();

	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_JSON, out_), 0),
		    "[\n"
		    "  {\n"
		    "    \"name\": \"alpha\",\n"
		    "    \"count\": 1234567,\n"
		    "    \"ratio\": 0.500,\n"
		    "    \"value\": 0.3333333333333333\n"
		    "  },\n"
		    "  {\n"
		    "    \"name\": \"b,\\\"c\\\"\",\n"
		    "    \"count\": -42,\n"
		    "    \"ratio\": null,\n"
		    "    \"value\": 1e-10\n"
		    "  },\n"
		    "  {\n"
		    "    \"name\": \"\xc3\xa9\",\n"
		    "    \"count\": 0,\n"
		    "    \"ratio\": 2.000,\n"
		    "    \"value\": null\n"
		    "  }\n"
		    "]\n");
	cli_table_free(t);
}

/* A table inside a larger document, at the writer's position. */
static void test_table_in_document(void)
{
	static const cli_column c[] = {{"k", NULL, CLI_COL_INT, 0, 0, NULL}};
	cli_table *t = cli_table_new(c, 1);
	FILE *out = cap_open();
	cli_json *j = cli_json_new(out);

	cli_table_int(t, 7);
	cli_json_object(j);
	cli_json_key(j, "rows");
	cli_table_json(t, j);
	cli_json_key(j, "after");
	cli_json_bool(j, 1);
	CU_ASSERT_EQUAL(cli_json_end(j), 0);
	CU_ASSERT_STRING_EQUAL(cap_text(), "{\n"
					   "  \"rows\": [\n"
					   "    {\n"
					   "      \"k\": 7\n"
					   "    }\n"
					   "  ],\n"
					   "  \"after\": true\n"
					   "}\n");
	cap_done();
	cli_table_free(t);
}

/* Left-aligned text last, an empty text cell between others, comments with newlines: no trailing
 * blanks. */
static void test_table_no_trailing_blanks(void)
{
	static const cli_column c[] = {
	    {"a", "first", CLI_COL_TEXT, 0, 0, NULL},
	    {"b", "mid", CLI_COL_TEXT, 0, 0, NULL},
	    {"n", "n", CLI_COL_REAL, 0, 0, "?"},
	    {"z", "last", CLI_COL_TEXT, 0, 0, NULL},
	};
	cli_table *t = cli_table_new(c, 4);

	cli_table_comment(t, "one  \ntwo");
	cli_table_comment(t, "%s", "");
	cli_table_text(t, "x");
	cli_table_text(t, "");
	cli_table_real(t, 123456789.0);
	cli_table_text(t, "long last cell");
	cli_table_text(t, "yy\tz");
	cli_table_text(t, "m");
	cli_table_missing(t);
	cli_table_text(t, "s");
	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_TABLE, out_), 0),
		    "# one\n"
		    "# two\n"
		    "#\n"
		    "first  mid            n  last\n"
		    "x           1.23457e+08  long last cell\n"
		    "yy?z   m              ?  s\n");
	cli_table_free(t);
}

static void test_table_grouping(void)
{
	static const cli_column c[] = {
	    {"i", NULL, CLI_COL_INT, 0, 1, NULL},
	    {"f", NULL, CLI_COL_FIXED, 0, 0, NULL},
	};
	cli_table *t = cli_table_new(c, 2);

	cli_table_int(t, INT64_MIN);
	cli_table_real(t, -0.4);
	cli_table_uint(t, UINT64_MAX);
	cli_table_real(t, INFINITY);
	cli_table_int(t, 999);
	cli_table_real(t, -INFINITY);
	cli_table_int(t, 1000);
	cli_table_real(t, 7);
	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_TABLE, out_), 0),
		    "                         i     f\n"
		    "-9,223,372,036,854,775,808     0\n"
		    "18,446,744,073,709,551,615   inf\n"
		    "                       999  -inf\n"
		    "                     1,000     7\n");
	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_CSV, out_), 0),
		    "i,f\n-9223372036854775808,0\n18446744073709551615,inf\n999,-inf\n1000,7\n");
	EXPECT_TEXT(CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_JSON, out_), 0),
		    "[\n  {\n    \"i\": -9223372036854775808,\n    \"f\": 0\n  },\n"
		    "  {\n    \"i\": 18446744073709551615,\n    \"f\": null\n  },\n"
		    "  {\n    \"i\": 999,\n    \"f\": null\n  },\n"
		    "  {\n    \"i\": 1000,\n    \"f\": 7\n  }\n]\n");
	cli_table_free(t);
}

static void test_table_empty(void)
{
	cli_table *t = cli_table_new(demo_columns, 4);

	cli_table_comment(t, "nothing");
	EXPECT_TEXT(cli_table_print(t, CLI_FORMAT_TABLE, out_),
		    "# nothing\nname  count  ratio  value\n");
	EXPECT_TEXT(cli_table_print(t, CLI_FORMAT_CSV, out_), "name,count,ratio,value\n");
	EXPECT_TEXT(cli_table_print(t, CLI_FORMAT_JSON, out_), "[]\n");
	cli_table_free(t);
}

/* A cell of the wrong kind, or a row left unfinished, fails the table in every format. */
static void test_table_misuse(void)
{
	for (int kind = 0; kind < 5; kind++) {
		cli_table *t = cli_table_new(demo_columns, 4);
		FILE *out;
		int rc = 0;
		switch (kind) {
		case 0:
			rc = cli_table_int(t, 1); /* into the text column */
			break;
		case 1:
			cli_table_text(t, "a");
			rc = cli_table_text(t, "b"); /* into the INT column */
			break;
		case 2:
			cli_table_text(t, "a");
			rc = cli_table_real(t, 1.5); /* a real into INT */
			break;
		case 3:
			rc = cli_table_real(t, NAN); /* a NaN is still a real */
			break;
		case 4:
			cli_table_text(t, "a"); /* unfinished row */
			rc = -1;
			break;
		}
		CU_ASSERT_EQUAL(rc, -1);
		out = cap_open();
		CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_TABLE, out), -1);
		CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_CSV, out), -1);
		CU_ASSERT_EQUAL(cli_table_print(t, CLI_FORMAT_JSON, out), -1);
		cap_text();
		cap_done();
		if (kind < 4) /* a failed table refuses everything after */
			CU_ASSERT_EQUAL(cli_table_text(t, "x"), -1);
		cli_table_free(t);
	}
	CU_ASSERT_PTR_NULL(cli_table_new(demo_columns, 0));
	CU_ASSERT_EQUAL(cli_table_rows(NULL), 0);
	cli_table_free(NULL);
}

static void test_table_html(void)
{
	static const cli_column c[] = {
	    {"name", "Name <i>", CLI_COL_TEXT, 0, 0, NULL},
	    {"n", NULL, CLI_COL_INT, 0, 1, "n/a"},
	};
	cli_table *t = cli_table_new(c, 2);

	cli_table_comment(t, "a & b");
	cli_table_comment(t, "c");
	cli_table_text(t, "x\"y'");
	cli_table_int(t, 12345);
	cli_table_text(t, "z");
	cli_table_missing(t);
	EXPECT_TEXT(cli_table_html(t, out_),
		    "<table class=\"data\">\n"
		    "<caption>a &amp; b<br/>c</caption>\n"
		    "<thead><tr><th>Name &lt;i&gt;</th><th class=\"num\">n</th></tr></thead>\n"
		    "<tbody>\n"
		    "<tr><td>x&quot;y&#39;</td><td class=\"num\">12,345</td></tr>\n"
		    "<tr><td>z</td><td class=\"num missing\">n/a</td></tr>\n"
		    "</tbody>\n"
		    "</table>\n");
	cli_table_free(t);
}

/* ---- pictures' text -------------------------------------------------------------------------- */

static void test_xml_text(void)
{
	EXPECT_TEXT(cli_xml_text(out_, "a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
	EXPECT_TEXT(cli_xml_text(out_, "t\tl\nc\r\x01\x1f."), "t\tl\nc.");
	EXPECT_TEXT(cli_xml_text(out_, "\xc3\xa9\xe2\x82\xac"), "\xc3\xa9\xe2\x82\xac");
	EXPECT_TEXT(cli_xml_text(out_, "x\xffy\xef\xbf\xbe"),
		    "x\xef\xbf\xbdy\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	EXPECT_TEXT(cli_xml_text(out_, NULL), "");
}

static void test_heat_colours(void)
{
	char c[8];

	cli_svg_heat(0.0, c);
	CU_ASSERT_STRING_EQUAL(c, "#f7fbff");
	cli_svg_heat(1.0, c);
	CU_ASSERT_STRING_EQUAL(c, "#08306b");
	cli_svg_heat(0.5, c); /* the middle stop */
	CU_ASSERT_STRING_EQUAL(c, "#6baed6");
	cli_svg_heat(0.125, c); /* half way from f7fbff to c6dbef: (247+198)/2 = 222.5 -> df */
	CU_ASSERT_STRING_EQUAL(c, "#dfebf7");
	cli_svg_heat(-3, c);
	CU_ASSERT_STRING_EQUAL(c, "#f7fbff");
	cli_svg_heat(7, c);
	CU_ASSERT_STRING_EQUAL(c, "#08306b");
	cli_svg_heat(NAN, c);
	CU_ASSERT_STRING_EQUAL(c, "#dddddd");
	/* Series colours never repeat within a chart (the palette used to wrap after 8). */
	{
		static char colours[512][8];
		int repeats = 0;
		for (size_t i = 0; i < 512; i++) {
			cli_svg_colour(i, colours[i]);
			for (size_t k = 0; k < i; k++)
				repeats += strcmp(colours[i], colours[k]) == 0;
		}
		CU_ASSERT_EQUAL(repeats, 0);
		CU_ASSERT_STRING_EQUAL(colours[0], "#000000");
		CU_ASSERT_STRING_EQUAL(colours[8], "#332288");
	}
}

/* ---- whole outputs --------------------------------------------------------------------------- */

static char *read_back(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 4096);

	*len = f && buf ? fread(buf, 1, 4095, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void test_write_file(void)
{
	const char *path = cutest_scratch_path("out.txt");
	char *text;
	size_t len;
	cli_table *t = demo_table();

	CU_ASSERT_EQUAL(cli_write_file("test", path, "abc\0def", 7), CLI_OK);
	text = read_back(path, &len);
	CU_ASSERT(len == 7 && memcmp(text, "abc\0def", 7) == 0);
	free(text);
	CU_ASSERT_EQUAL(cli_table_emit("test", t, CLI_FORMAT_CSV, path), CLI_OK);
	text = read_back(path, &len);
	CU_ASSERT_STRING_EQUAL(text, "name,count,ratio,value\n"
				     "alpha,1234567,0.500,0.3333333333333333\n"
				     "\"b,\"\"c\"\"\",-42,,1e-10\n"
				     "\xc3\xa9,0,2.000,\n");
	free(text);
	/* a full device: the write fails, one error line */
	CU_ASSERT_EQUAL(cli_write_file("test", "/dev/full", "x", 1), CLI_FAIL);
	/* a directory is no output: one error line, CLI_FAIL, the directory untouched */
	CU_ASSERT_EQUAL(cli_write_file("test", cutest_scratch(), "x", 1), CLI_FAIL);
	CU_ASSERT_EQUAL(cli_table_emit("test", t, CLI_FORMAT_JSON, cutest_scratch()), CLI_FAIL);
	cli_table_free(t);
}

/* NULL and "-" are standard output, after what the command printed there through stdio. */
static void test_write_stdout(void)
{
	const char *path = cutest_scratch_path("stdout.txt");
	cli_table *t = demo_table();
	int saved, fd, rc1, rc2;
	char *text;
	size_t len;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	printf("before\n");
	rc1 = cli_write_file("test", "-", "text\n", 5);
	rc2 = cli_table_emit("test", t, CLI_FORMAT_TABLE, NULL);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	CU_ASSERT_EQUAL(rc1, CLI_OK);
	CU_ASSERT_EQUAL(rc2, CLI_OK);
	text = read_back(path, &len);
	CU_ASSERT_STRING_EQUAL(text, "before\n"
				     "text\n"
				     "# 3 rows, by hand\n"
				     "name       count          ratio   value\n"
				     "alpha  1,234,567          0.500  0.3333\n"
				     "b,\"c\"        -42  <not counted>   1e-10\n"
				     "\xc3\xa9              0          2.000       -\n");
	free(text);
	cli_table_free(t);
}

static int setup(void)
{
	return cutest_scratch_make("output");
}

static int teardown(void)
{
	return cutest_scratch_remove();
}

static const cutest_case text_cases[] = {
    {"parse format", test_parse_format},
    {"CSV field: RFC 4180 quoting", test_csv_field},
    {"JSON string: RFC 8259 escapes, UTF-8", test_json_string},
    {"UTF-8 sequence lengths", test_utf8_len},
    {"JSON numbers", test_json_number},
    {"JSON numbers round-trip", test_json_number_round_trips},
    {NULL, NULL},
};

static const cutest_case json_cases[] = {
    {"nesting and every value kind", test_json_writer_nesting},
    {"end closes what is open", test_json_writer_closes},
    {"misuse sets the error flag", test_json_writer_errors},
    {NULL, NULL},
};

static const cutest_case table_cases[] = {
    {"aligned columns", test_table_aligned},
    {"CSV", test_table_csv},
    {"JSON", test_table_json},
    {"inside a JSON document", test_table_in_document},
    {"no trailing blanks", test_table_no_trailing_blanks},
    {"digit grouping and infinities", test_table_grouping},
    {"no rows", test_table_empty},
    {"misuse fails the table", test_table_misuse},
    {"HTML", test_table_html},
    {NULL, NULL},
};

static const cutest_case picture_cases[] = {
    {"XML text", test_xml_text},
    {"heat colours and palette", test_heat_colours},
    {NULL, NULL},
};

static const cutest_case file_cases[] = {
    {"write file and emit", test_write_file},
    {"standard output", test_write_stdout},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"text", text_cases, NULL, NULL},	    {"json writer", json_cases, NULL, NULL},
	    {"tables", table_cases, NULL, NULL},    {"pictures", picture_cases, NULL, NULL},
	    {"files", file_cases, setup, teardown}, {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_output", suites);
}

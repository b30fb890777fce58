/* SPDX-License-Identifier: BSD-3-Clause */
/* Code spaces over time: the per-instruction callgrind reader, the .prof file, and the analyser's
 * rules on hand-made profiles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/container.h"
#include "mpxkit/spacetime.h"

static int setup(void)
{
	return cutest_scratch_make("spacetime");
}

static int teardown(void)
{
	return cutest_scratch_remove();
}

/* ---- the per-instruction callgrind reader
 * -------------------------------------------------------- */

/*
 * Name compression, relative positions (based on the last cost line only),
 * a call whose inclusive cost is not an instruction's, an inlined file,
 * jcnd= in callgrind's followed/executed form and in the documented
 * "executed followed" form, jump=, and jfn=.
 */
#define CG_HEAD                                                                                    \
	"# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npart: 2\nthread: 3\n"          \
	"desc: Timerange: Basic block 100 - 250\npositions: instr line\nevents: Ir Dr Bc Bcm\n"
#define CG_BODY                                                                                    \
	"ob=(1) /bin/prog\nfl=(1) prog.c\nfn=(1) main\n"                                           \
	"0x1000 10 2 1\n"                                                                          \
	"+4 * 3 0 1 1\n"                                                                           \
	"jcnd=5/7 -4 *\n* *\n"                                                                     \
	"+8 +2 4 1\n"                                                                              \
	"cfn=(2) helper\ncalls=1 0x2000 40\n* * 100 50\n"                                          \
	"fi=(2) inl.h\n+4 3 1\nfe=(1)\n"                                                           \
	"jump=2 -16 10\n* *\n"                                                                     \
	"fn=(2)\n0x2000 40 7 3 2 0\n"                                                              \
	"jcnd=3 1 +8 *\n* *\n"

static mpxkit_callgrind_instr *parse_cg(const char *text, int want_rc, const char *want_msg)
{
	mpxkit_callgrind_instr *d = NULL;
	mpxkit_diag diag = {0};
	int rc = mpxkit_callgrind_instr_parse("dump", text, strlen(text), &d, &diag);

	CU_ASSERT_EQUAL(rc, want_rc);
	if (want_msg != NULL) {
		CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, want_msg));
		if (strstr(diag.msg, want_msg) == NULL)
			fprintf(stderr, "\n  got '%s', want '%s'\n", diag.msg, want_msg);
	}
	return d;
}

static void test_cg_instr(void)
{
	mpxkit_callgrind_instr *d = parse_cg(CG_HEAD CG_BODY "totals: 17 5 3 1\n", 0, NULL);
	static const uint64_t addr[] = {0x1000, 0x1004, 0x100c, 0x1010, 0x2000};
	static const uint32_t line[] = {10, 10, 12, 3, 40};
	static const uint64_t ir[] = {2, 3, 4, 1, 7}, bcm[] = {0, 1, 0, 0, 0};

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d->head.part, 2);
	CU_ASSERT_EQUAL(d->thread, 3);
	CU_ASSERT_EQUAL(d->head.bb_begin, 100);
	CU_ASSERT_EQUAL(d->head.bb_end, 250);
	CU_ASSERT_EQUAL_FATAL(d->n_costs, 5);
	CU_ASSERT_EQUAL_FATAL(d->head.n_events, 4);
	for (size_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(d->costs[i].address, addr[i]);
		CU_ASSERT_EQUAL(d->costs[i].line, line[i]);
		CU_ASSERT_EQUAL(d->counts[i * 4 + 0], ir[i]);
		CU_ASSERT_EQUAL(d->counts[i * 4 + 3], bcm[i]);
	}
	CU_ASSERT_EQUAL_FATAL(d->n_functions, 2);
	CU_ASSERT_STRING_EQUAL(d->functions[d->costs[0].function].name, "main");
	CU_ASSERT_STRING_EQUAL(d->functions[d->costs[4].function].name, "helper");
	CU_ASSERT_STRING_EQUAL(d->objects[d->functions[d->costs[4].function].object], "/bin/prog");
	CU_ASSERT_STRING_EQUAL(d->files[d->costs[2].file], "prog.c");
	CU_ASSERT_STRING_EQUAL(d->files[d->costs[3].file], "inl.h");
	CU_ASSERT_STRING_EQUAL(d->files[d->costs[4].file], "prog.c");
	CU_ASSERT_EQUAL_FATAL(d->n_jumps, 3);
	CU_ASSERT_EQUAL(d->jumps[0].from, 0x1004);
	CU_ASSERT_EQUAL(d->jumps[0].to, 0x1000);
	CU_ASSERT_EQUAL(d->jumps[0].count, 5);
	CU_ASSERT_EQUAL(d->jumps[0].executed, 7);
	CU_ASSERT_TRUE(d->jumps[0].conditional);
	CU_ASSERT_EQUAL(d->jumps[1].from, 0x1010);
	CU_ASSERT_EQUAL(d->jumps[1].to, 0x1000);
	CU_ASSERT_EQUAL(d->jumps[1].count, 2);
	CU_ASSERT_FALSE(d->jumps[1].conditional);
	CU_ASSERT_EQUAL(d->jumps[2].from, 0x2000);
	CU_ASSERT_EQUAL(d->jumps[2].to, 0x2008);
	CU_ASSERT_EQUAL(d->jumps[2].count, 1);
	CU_ASSERT_EQUAL(d->jumps[2].executed, 3);
	mpxkit_callgrind_instr_free(d);
}

static void test_cg_instr_bad(void)
{
	parse_cg(CG_HEAD CG_BODY "totals: 17 5 3 2\n", -MPXKIT_EFORMAT,
		 "the cost lines sum to 1 Bcm, totals: says 2");
	parse_cg(CG_HEAD "ob=(1) a\nfl=(1) b\nfn=(9)\n0x10 1 1\ntotals: 1\n", -MPXKIT_EFORMAT,
		 "dump:11: name id used before it is defined");
	parse_cg(CG_HEAD "ob=(1) a\nfl=(1) b\nfn=(1) f\n+4 1 1\ntotals: 1\n", -MPXKIT_EFORMAT,
		 "relative position before any absolute one");
	parse_cg("events: Ir\nfn=(1) f\n0x10 1\ntotals: 1\n", -MPXKIT_EFORMAT,
		 "not a --dump-instr=yes dump");
	parse_cg(CG_HEAD
		 "ob=(1) a\nfl=(1) b\nfn=(1) f\n0x10 1 1\njump=1 0x10 1\n* * 5\ntotals: 1\n",
		 -MPXKIT_EFORMAT, "cost on a jump's source line");
	parse_cg(CG_HEAD
		 "ob=(1) a\nfl=(1) b\nfn=(1) f\n0x10 1 1\njcnd=4/3 0x10 1\n* *\ntotals: 1\n",
		 -MPXKIT_EFORMAT, "jcnd= jumps more often than it runs");
	parse_cg(CG_HEAD "ob=(1) a\nfl=(1) b\nfn=(1) f\n0x10 1 1\ntotals: 1\n0x10 1 1\n",
		 -MPXKIT_EFORMAT, "text after the totals: line");
	parse_cg(CG_HEAD "ob=(1) a\nfl=(1) b\nfn=(1) f\n0x10 1 1 2 3 4 5\ntotals: 1\n",
		 -MPXKIT_EFORMAT, "more counts than events");
	parse_cg(CG_HEAD "ob=(1) a\nfl=(1) b\nfn=(1) f\n0x10 1 1\n", -MPXKIT_EFORMAT,
		 "no totals: line");
}

/* ---- the profile file ------------------------------------------------------------------------ */

static const char *const cg_events[] = {"Ir",	"Dr",	"Dw", "I1mr", "D1mr", "D1mw", "ILmr",
					"DLmr", "DLmw", "Bc", "Bcm",  "Bi",   "Bim"};
enum { IR, DR, DW, I1MR, D1MR, D1MW, ILMR, DLMR, DLMW, BC, BCM, BI, BIM, NE };

/* A hand-made profile under construction. */
typedef struct synth {
	mpxkit_profile_writer *w;
	uint32_t object, file;
	uint32_t thread[4];
} synth;

static void synth_open(synth *s, const char *name, size_t n_threads)
{
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_create(&s->w, cutest_scratch_path(name), "callgrind",
						    "bb", cg_events, NE, &diag),
			      0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_meta(s->w, "command", "./synthetic", &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_object(s->w, "/bin/synth", &s->object, &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_file(s->w, "synth.c", &s->file, &diag), 0);
	for (size_t t = 0; t < n_threads; t++)
		CU_ASSERT_EQUAL(mpxkit_profile_add_thread(s->w, 100 + t, "", &s->thread[t], &diag),
				0);
}

static uint32_t synth_code(synth *s, const char *function, uint64_t address)
{
	uint32_t fn, code;

	CU_ASSERT_EQUAL(mpxkit_profile_add_function(s->w, function, s->object, 0, 0, &fn, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_code(s->w, fn, s->file, (uint32_t)(address & 0xfff),
						address, &code, NULL),
			0);
	return code;
}

/* A block of rows (code, Ir, D1mr, and for some Bi, Bim) and jumps. */
typedef struct srow {
	const char *function;
	uint64_t address, ir, d1mr, bi, bim;
} srow;

typedef struct sjump {
	const char *function;
	uint64_t from, to;
} sjump;

static void synth_block(synth *s, uint64_t window, size_t thread, const srow *rows, size_t n,
			const sjump *jumps, size_t n_jumps)
{
	uint32_t codes[64];
	uint64_t counts[64 * NE];
	mpxkit_profile_jump j[16];
	mpxkit_diag diag = {0};

	CU_ASSERT_FATAL(n <= 64 && n_jumps <= 16);
	memset(counts, 0, sizeof counts);
	for (size_t i = 0; i < n; i++) {
		codes[i] = synth_code(s, rows[i].function, rows[i].address);
		counts[i * NE + IR] = rows[i].ir;
		counts[i * NE + D1MR] = rows[i].d1mr;
		counts[i * NE + BI] = rows[i].bi;
		counts[i * NE + BIM] = rows[i].bim;
	}
	for (size_t i = 0; i < n_jumps; i++) {
		j[i].from = synth_code(s, jumps[i].function, jumps[i].from);
		j[i].to = synth_code(s, jumps[i].function, jumps[i].to);
		j[i].count = 3;
	}
	mpxkit_profile_block b = {window, window * 1000, 1000, s->thread[thread], n, codes,
				  counts, n_jumps,	 j};
	CU_ASSERT_EQUAL(mpxkit_profile_put_block(s->w, &b, &diag), 0);
}

static void synth_commit(synth *s)
{
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_commit(s->w, &diag), 0);
}

static mpxkit_spacetime *analyze(const char *name, double min_weight)
{
	mpxkit_spacetime_options o;
	mpxkit_spacetime *r = NULL;
	mpxkit_diag diag = {0};

	mpxkit_spacetime_options_init(&o);
	o.min_weight = min_weight;
	CU_ASSERT_EQUAL(mpxkit_spacetime_analyze(cutest_scratch_path(name), &o, &r, &diag), 0);
	if (r == NULL)
		fprintf(stderr, "\n  analyze: %s\n", diag.msg);
	return r;
}

/* A profile of 10 windows of one thread, each with the same rows, analysed. */
static mpxkit_spacetime *steady(const char *name, const srow *rows, size_t n)
{
	synth s;

	synth_open(&s, name, 1);
	for (uint64_t w = 0; w < 10; w++)
		synth_block(&s, w, 0, rows, n, NULL, 0);
	synth_commit(&s);
	return analyze(name, 0.01);
}

static void test_profile_round_trip(void)
{
	synth s;
	mpxkit_profile *p = NULL;
	mpxkit_profile_block b;
	mpxkit_diag diag = {0};
	/* The same address twice in one block: one row, summed. */
	const srow rows[] = {
	    {"f", 0x20, 5, 1, 0, 0}, {"g", 0x10, 7, 0, 0, 0}, {"f", 0x20, 1, 1, 0, 0}};
	const sjump jumps[] = {{"f", 0x20, 0x18}, {"f", 0x20, 0x18}};

	synth_open(&s, "rt.prof", 2);
	synth_block(&s, 3, 1, rows, 3, jumps, 2);
	synth_block(&s, 3, 0, rows + 1, 1, NULL, 0);
	synth_commit(&s);
	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_open(&p, cutest_scratch_path("rt.prof"), &diag), 0);
	CU_ASSERT_STRING_EQUAL(mpxkit_profile_source(p), "callgrind");
	CU_ASSERT_STRING_EQUAL(mpxkit_profile_time_unit(p), "bb");
	CU_ASSERT_EQUAL(mpxkit_profile_n_events(p), NE);
	CU_ASSERT_STRING_EQUAL(mpxkit_profile_event(p, D1MR), "D1mr");
	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_next(p, &b, &diag), 1);
	CU_ASSERT_STRING_EQUAL(mpxkit_profile_meta(p, "command"), "./synthetic");
	CU_ASSERT_EQUAL(b.window, 3);
	CU_ASSERT_EQUAL(b.t_begin, 3000);
	CU_ASSERT_EQUAL(b.t_len, 1000);
	CU_ASSERT_EQUAL(mpxkit_profile_thread_at(p, b.thread)->tid, 101);
	CU_ASSERT_EQUAL_FATAL(b.n_rows, 2);
	/* Rows by code id: f's 0x20 was defined first. */
	CU_ASSERT_EQUAL(mpxkit_profile_code_at(p, b.codes[0])->address, 0x20);
	CU_ASSERT_EQUAL(b.counts[0 * NE + IR], 6);
	CU_ASSERT_EQUAL(b.counts[0 * NE + D1MR], 2);
	CU_ASSERT_EQUAL(mpxkit_profile_code_at(p, b.codes[1])->address, 0x10);
	CU_ASSERT_EQUAL(b.counts[1 * NE + IR], 7);
	CU_ASSERT_STRING_EQUAL(
	    mpxkit_profile_function_at(p, mpxkit_profile_code_at(p, b.codes[1])->function)->name,
	    "g");
	CU_ASSERT_EQUAL_FATAL(b.n_jumps, 1);
	CU_ASSERT_EQUAL(b.jumps[0].count, 6);
	CU_ASSERT_EQUAL(mpxkit_profile_code_at(p, b.jumps[0].to)->address, 0x18);
	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_next(p, &b, &diag), 1);
	CU_ASSERT_EQUAL(mpxkit_profile_thread_at(p, b.thread)->tid, 100);
	CU_ASSERT_EQUAL(mpxkit_profile_next(p, &b, &diag), 0);
	mpxkit_profile_close(p);
}

static void test_writer_refuses(void)
{
	mpxkit_profile_writer *w = NULL;
	mpxkit_diag diag = {0};
	uint32_t t;
	const char *two[] = {"Ir", "Ir"};

	CU_ASSERT_EQUAL(mpxkit_profile_create(&w, cutest_scratch_path("x.prof"), "gprof", "bb",
					      cg_events, NE, &diag),
			-MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(
	    mpxkit_profile_create(&w, cutest_scratch_path("x.prof"), "perf", "ns", two, 2, &diag),
	    -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL_FATAL(mpxkit_profile_create(&w, cutest_scratch_path("x.prof"), "perf", "ns",
						    cg_events, 2, &diag),
			      0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_meta(w, "bad key", "v", &diag), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_profile_add_meta(w, "k", "two\nlines", &diag), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_profile_add_meta(w, "k", "v", &diag), 0);
	CU_ASSERT_EQUAL(mpxkit_profile_add_meta(w, "k", "v", &diag), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_profile_add_thread(w, 1, "", &t, &diag), 0);
	mpxkit_profile_block b = {5, 0, 0, t, 0, NULL, NULL, 0, NULL};
	CU_ASSERT_EQUAL(mpxkit_profile_put_block(w, &b, &diag), 0);
	b.window = 4;
	CU_ASSERT_EQUAL(mpxkit_profile_put_block(w, &b, &diag), -MPXKIT_EINVAL);
	b.window = 6;
	b.thread = 9;
	CU_ASSERT_EQUAL(mpxkit_profile_put_block(w, &b, &diag), -MPXKIT_EINVAL);
	mpxkit_profile_abort(w);
	CU_ASSERT_EQUAL(access(cutest_scratch_path("x.prof"), F_OK), -1);
}

static unsigned char *slurp(const char *name, size_t *len)
{
	FILE *f = fopen(cutest_scratch_path(name), "rb");
	unsigned char *buf = malloc(1 << 16);

	CU_ASSERT_FATAL(f != NULL && buf != NULL);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

/* Every block of a profile read, or the first error. */
static int read_all(const void *buf, size_t len)
{
	mpxkit_profile *p = NULL;
	mpxkit_profile_block b;
	int rc = mpxkit_profile_open_buffer(&p, buf, len, "buf", NULL);

	while (rc >= 0 && (rc = mpxkit_profile_next(p, &b, NULL)) == 1)
		;
	mpxkit_profile_close(p);
	return rc;
}

static void test_profile_damage(void)
{
	size_t len;
	unsigned char *buf = slurp("rt.prof", &len);

	CU_ASSERT_EQUAL(read_all(buf, len), 0);
	/* Cut anywhere, or any bit flipped: an error, never a crash or a silent half. */
	for (size_t cut = 0; cut < len; cut++)
		CU_ASSERT(read_all(buf, cut) < 0);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	for (size_t i = 0; i < len; i++) {
		buf[i] ^= 0x10;
		CU_ASSERT(read_all(buf, len) < 0);
		buf[i] ^= 0x10;
	}
#else
	/* Fuzzing builds skip the container's checksums, so flipped bits may decode there. */
	printf("(bit flips not checked: checksums are off in fuzzing builds) ");
#endif
	free(buf);
}

/* A profile made of hand-encoded payloads, to reach each of the decoder's own checks. */
static void expect_bad_sections(const uint32_t *tags, mpxkit_bytes *payloads, size_t n,
				const char *want)
{
	const void *p[8];
	size_t lens[8];
	unsigned char *file = NULL;
	size_t len = 0;
	mpxkit_profile *prof = NULL;
	mpxkit_profile_block b;
	mpxkit_diag diag = {0};
	mpxkit_container_format fmt = {"profile", MPXKIT_PROFILE_MAGIC,	      1,
				       1,	  MPXKIT_PROFILE_MAX_SECTION, 0};
	int rc;

	for (size_t i = 0; i < n; i++) {
		p[i] = payloads[i].data;
		lens[i] = payloads[i].len;
	}
	CU_ASSERT_EQUAL_FATAL(mpxkit_container_encode(&fmt, 1, tags, p, lens, n, &file, &len, NULL),
			      0);
	rc = mpxkit_profile_open_buffer(&prof, file, len, "hand", &diag);
	while (rc >= 0 && (rc = mpxkit_profile_next(prof, &b, &diag)) == 1)
		;
	CU_ASSERT_EQUAL(rc, -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, want));
	if (strstr(diag.msg, want) == NULL)
		fprintf(stderr, "\n  got '%s', want '%s'\n", diag.msg, want);
	mpxkit_profile_close(prof);
	free(file);
	for (size_t i = 0; i < n; i++)
		mpxkit_bytes_free(&payloads[i]);
}

#define TAG(s) MPXKIT_TAG(s[0], s[1], s[2], s[3])

static void head(mpxkit_bytes *b, const char *source)
{
	mpxkit_bytes_string(b, source);
	mpxkit_bytes_string(b, "bb");
	mpxkit_bytes_varint(b, 1);
	mpxkit_bytes_string(b, "Ir");
	mpxkit_bytes_varint(b, 0);
}

/* HEAD, OBJS, FILS, FUNS, CODE of one address, THRD of one thread. */
static size_t tables(mpxkit_bytes *b, uint32_t *tags)
{
	head(&b[0], "callgrind");
	tags[0] = TAG("HEAD");
	mpxkit_bytes_varint(&b[1], 0);
	mpxkit_bytes_varint(&b[1], 1);
	mpxkit_bytes_string(&b[1], "/bin/x");
	tags[1] = TAG("OBJS");
	mpxkit_bytes_varint(&b[2], 0);
	mpxkit_bytes_varint(&b[2], 1);
	mpxkit_bytes_string(&b[2], "x.c");
	tags[2] = TAG("FILS");
	mpxkit_bytes_varint(&b[3], 0);
	mpxkit_bytes_varint(&b[3], 1);
	mpxkit_bytes_string(&b[3], "main");
	mpxkit_bytes_varint(&b[3], 0);
	mpxkit_bytes_varint(&b[3], 0);
	mpxkit_bytes_varint(&b[3], 0);
	tags[3] = TAG("FUNS");
	mpxkit_bytes_varint(&b[4], 0);
	mpxkit_bytes_varint(&b[4], 1);
	mpxkit_bytes_varint(&b[4], 0); /* function */
	mpxkit_bytes_varint(&b[4], 0); /* file */
	mpxkit_bytes_varint(&b[4], 7); /* line */
	mpxkit_bytes_varint(&b[4], 0x40);
	tags[4] = TAG("CODE");
	mpxkit_bytes_varint(&b[5], 0);
	mpxkit_bytes_varint(&b[5], 1);
	mpxkit_bytes_varint(&b[5], 42);
	mpxkit_bytes_string(&b[5], "");
	tags[5] = TAG("THRD");
	return 6;
}

/* A WIND section of one row per code id given (0 for a repeated id), no jumps. */
static void wind(mpxkit_bytes *b, uint64_t window, uint64_t thread, const uint64_t *steps, size_t n)
{
	mpxkit_bytes_varint(b, window);
	mpxkit_bytes_varint(b, 0);
	mpxkit_bytes_varint(b, 10);
	mpxkit_bytes_varint(b, thread);
	mpxkit_bytes_varint(b, n);
	for (size_t i = 0; i < n; i++) {
		mpxkit_bytes_varint(b, steps[i]);
		mpxkit_bytes_varint(b, 5);
	}
	mpxkit_bytes_varint(b, 0);
}

static void test_profile_decoder_checks(void)
{
	mpxkit_bytes b[8];
	uint32_t tags[8];
	size_t n;
	const uint64_t one = 0, twice[] = {0, 0}, beyond = 1;

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	wind(&b[n], 0, 0, twice, 2);
	tags[n] = TAG("WIND");
	expect_bad_sections(tags, b, n + 1, "rows not in increasing code order");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	wind(&b[n], 0, 0, &beyond, 1);
	tags[n] = TAG("WIND");
	expect_bad_sections(tags, b, n + 1, "row of an undefined code address");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	wind(&b[n], 0, 1, &one, 1);
	tags[n] = TAG("WIND");
	expect_bad_sections(tags, b, n + 1, "block of an undefined thread");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	wind(&b[n], 5, 0, &one, 1);
	wind(&b[n + 1], 4, 0, &one, 1);
	tags[n] = tags[n + 1] = TAG("WIND");
	expect_bad_sections(tags, b, n + 2, "window before the previous block's");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	mpxkit_bytes_varint(&b[n], 0);
	tags[n] = TAG("XXXX");
	expect_bad_sections(tags, b, n + 1, "unknown section 'XXXX'");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	head(&b[n], "callgrind");
	tags[n] = TAG("HEAD");
	expect_bad_sections(tags, b, n + 1, "a second HEAD section");

	memset(b, 0, sizeof b);
	n = tables(b, tags);
	mpxkit_bytes_free(&b[1]);
	memset(&b[1], 0, sizeof b[1]);
	mpxkit_bytes_varint(&b[1], 1); /* first id 1, with none defined */
	mpxkit_bytes_varint(&b[1], 1);
	mpxkit_bytes_string(&b[1], "/bin/x");
	expect_bad_sections(tags, b, n, "first id does not continue the table");

	memset(b, 0, sizeof b);
	tables(b, tags);
	for (int i = 1; i < 6; i++)
		mpxkit_bytes_free(&b[i]);
	memset(&b[1], 0, 5 * sizeof b[1]);
	mpxkit_bytes_varint(&b[1], 0);
	mpxkit_bytes_varint(&b[1], 1);
	mpxkit_bytes_varint(&b[1], 0); /* a function that does not exist */
	mpxkit_bytes_varint(&b[1], 0);
	mpxkit_bytes_varint(&b[1], 0);
	mpxkit_bytes_varint(&b[1], 0);
	tags[1] = TAG("CODE");
	expect_bad_sections(tags, b, 2, "code entry of an undefined function or file");

	memset(b, 0, sizeof b);
	head(&b[0], "gprof");
	tags[0] = TAG("HEAD");
	expect_bad_sections(tags, b, 1, "source is neither callgrind nor perf");

	memset(b, 0, sizeof b);
	mpxkit_bytes_varint(&b[0], 0);
	tags[0] = TAG("OBJS");
	expect_bad_sections(tags, b, 1, "the first section is not HEAD");
}

/* ---- code spaces
 * --------------------------------------------------------------------------------- */

/* The selected space of function with range [start, end], or NULL. */
static const mpxkit_spacetime_space *space_at(const mpxkit_spacetime *r, const char *function,
					      uint64_t start, uint64_t end)
{
	for (size_t k = 0; k < r->n_spaces; k++)
		if (strcmp(r->spaces[k].function, function) == 0 && r->spaces[k].start == start &&
		    r->spaces[k].end == end)
			return &r->spaces[k];
	return NULL;
}

/*
 * f runs 0x100..0x140 (4-byte steps, Ir 10 each); back edges 0x130 -> 0x110
 * (outer loop) and 0x120 -> 0x114 (inner).  Spaces: the inner loop
 * 0x114..0x120 (4 addresses), the outer 0x110..0x130 less the inner (5), the
 * body (8).  Window 1: the body without 0x140 (overlap 61/65 >= 0.9: the same
 * space).  Window 2: 0x100..0x120 without jumps (33/65: a new space).
 * Window 3: back edges 0x120 -> 0x110 and 0x128 -> 0x118 overlap partially:
 * one loop 0x110..0x128, with the outer loop's header: the outer loop's space.
 */
static void test_spaces(void)
{
	synth s;
	srow rows[17];
	const sjump nest[] = {{"f", 0x130, 0x110}, {"f", 0x120, 0x114}};
	const sjump partial[] = {{"f", 0x120, 0x110}, {"f", 0x128, 0x118}};
	mpxkit_spacetime *r;
	const mpxkit_spacetime_space *body, *outer, *inner, *short_body;

	for (size_t i = 0; i < 17; i++)
		rows[i] = (srow){"f", 0x100 + 4 * i, 10, 0, 0, 0};
	synth_open(&s, "spaces.prof", 1);
	synth_block(&s, 0, 0, rows, 17, nest, 2);
	synth_block(&s, 1, 0, rows, 16, NULL, 0);
	synth_block(&s, 2, 0, rows, 9, NULL, 0);
	synth_block(&s, 3, 0, rows + 4, 7, partial, 2);
	synth_commit(&s);
	r = analyze("spaces.prof", 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_all_spaces, 4);
	body = space_at(r, "f", 0x100, 0x140);
	outer = space_at(r, "f", 0x110, 0x130);
	inner = space_at(r, "f", 0x114, 0x120);
	short_body = space_at(r, "f", 0x100, 0x120);
	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	CU_ASSERT_PTR_NOT_NULL_FATAL(outer);
	CU_ASSERT_PTR_NOT_NULL_FATAL(inner);
	CU_ASSERT_PTR_NOT_NULL_FATAL(short_body);
	CU_ASSERT_FALSE(body->loop);
	CU_ASSERT_TRUE(outer->loop);
	CU_ASSERT_TRUE(inner->loop);
	/* Ir: window 0 170 (body 80, outer 50, inner 40), window 1 160, window 2 90, window 3 70.
	 */
	CU_ASSERT_DOUBLE_EQUAL(body->weight, (80.0 + 160) / 490, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(outer->weight, (50.0 + 70) / 490, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(inner->weight, 40.0 / 490, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(short_body->weight, 90.0 / 490, 1e-12);
	/* Founded in file order, within a block by range: body, outer, inner, then the short body.
	 */
	CU_ASSERT_EQUAL(body->id, 0);
	CU_ASSERT_EQUAL(outer->id, 1);
	CU_ASSERT_EQUAL(inner->id, 2);
	CU_ASSERT_EQUAL(short_body->id, 3);
	/* Appearances: the body in windows 0-1, the outer loop in 0 and 3. */
	CU_ASSERT_EQUAL(body->appearances, 2);
	CU_ASSERT_EQUAL(outer->appearances, 2);
	CU_ASSERT_EQUAL(outer->max_gap, 2);
	CU_ASSERT_EQUAL(outer->max_gap_end, 3);
	mpxkit_spacetime_free(r);
}

/* ---- screening
 * ----------------------------------------------------------------------------------- */

/* A finding about code (the program's, which only names a space, are left out). */
static const mpxkit_spacetime_finding *find(const mpxkit_spacetime *r, int advantage, int cls,
					    const char *function)
{
	for (size_t i = 0; i < r->n_findings; i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		if (f->advantage == advantage && (int)f->cls == cls &&
		    f->scope != MPXKIT_SCOPE_PROGRAM &&
		    strcmp(r->spaces[f->space].function, function) == 0)
			return f;
	}
	return NULL;
}

static const mpxkit_spacetime_finding *find_program(const mpxkit_spacetime *r, int cls)
{
	for (size_t i = 0; i < r->n_findings; i++)
		if (r->findings[i].scope == MPXKIT_SCOPE_PROGRAM && (int)r->findings[i].cls == cls)
			return &r->findings[i];
	return NULL;
}

/*
 * hot: Ir 1e6, D1mr 50 000; cold: Ir 1e6, D1mr 1000, over 10 windows.
 * cost = 2e6 + 10 x 51 000 = 2 510 000 estimated cycles.
 * hot against the rest (cold): 50/kI vs 1/kI, excess 49 000 misses:
 * share 490 000 / 2 510 000.  cold against the program (25.5/kI): saves
 * 24 500 misses, share 245 000 / 2 510 000.  The whole program is past the
 * top-down thresholds (doc/spacetime.md): D1 misses cost 510 000 / 2.51e6 =
 * 20.3 % of it (> 20 %), N_theta = 0.05 x 2e6 / 9.5 = 10 526.3, share
 * (51 000 - 10 526.3) x 10 / 2.51e6; that finding ranks first.
 */
static void test_space_defect(void)
{
	const srow rows[] = {{"hot", 0x10, 100000, 5000, 0, 0}, {"cold", 0x80, 100000, 100, 0, 0}};
	mpxkit_spacetime *r = steady("defect.prof", rows, 2);
	const mpxkit_spacetime_finding *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_DOUBLE_EQUAL(r->cost, 2510000, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(r->metrics[MPXKIT_METRIC_D1_MPKI], 25.5, 1e-9);
	CU_ASSERT_TRUE_FATAL(r->n_findings >= 2);
	f = &r->findings[0];
	CU_ASSERT_EQUAL(f->scope, MPXKIT_SCOPE_PROGRAM);
	CU_ASSERT_EQUAL(f->cls, MPXKIT_CLASS_D1_MISS);
	CU_ASSERT_STRING_EQUAL(r->spaces[f->space].function, "hot");
	CU_ASSERT_DOUBLE_EQUAL(f->share, (51000 - 0.05 * 2e6 / 9.5) * 10 / 2510000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->stall_share, 510000.0 / 2510000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->event_share, 50000.0 / 51000, 1e-12);
	f = &r->findings[1];
	CU_ASSERT_FALSE(f->advantage);
	CU_ASSERT_FALSE(f->absolute);
	CU_ASSERT_EQUAL(f->cls, MPXKIT_CLASS_D1_MISS);
	CU_ASSERT_EQUAL(f->scope, MPXKIT_SCOPE_SPACE);
	CU_ASSERT_STRING_EQUAL(r->spaces[f->space].function, "hot");
	CU_ASSERT_DOUBLE_EQUAL(f->value, 50, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->program_value, 25.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->share, 490000.0 / 2510000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->event_share, 50000.0 / 51000, 1e-12);
	CU_ASSERT_STRING_EQUAL(f->file, "synth.c");
	CU_ASSERT_EQUAL(f->line, 0x10);
	CU_ASSERT_PTR_NOT_NULL(strstr(f->direction, "D1 misses 50/kI vs 1/kI elsewhere, 98 %"));
	f = find(r, 1, MPXKIT_CLASS_D1_MISS, "cold");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_DOUBLE_EQUAL(f->share, 245000.0 / 2510000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, 25.5, 1e-9);
	/* hot has no phase: every window alike. */
	CU_ASSERT_PTR_NULL(find(r, 0, MPXKIT_CLASS_PHASE_CHANGE, "hot"));
	mpxkit_spacetime_free(r);
}

/*
 * A: windows 0-9 Ir 1e5 D1mr 100, windows 10-19 Ir 1e5 D1mr 10 000; B:
 * every window Ir 1e5 D1mr 100.  cost = 4e6 + 10 x 103 000 = 5 030 000.
 * A's phase 10-19: 100/kI vs 1/kI in 0-9, excess 99 000, share
 * 990 000 / 5 030 000.  It explains all of A's space defect (99 000 too),
 * which is not reported.  The program's D1 misses cost 1.03e6 / 5.03e6 =
 * 20.5 %, past the top-down thresholds: a program finding ranks first.
 */
static void test_phase(void)
{
	synth s;
	mpxkit_spacetime *r;
	const mpxkit_spacetime_finding *f;

	synth_open(&s, "phase.prof", 1);
	for (uint64_t w = 0; w < 20; w++) {
		const srow rows[] = {{"A", 0x10, 100000, w < 10 ? 100 : 10000, 0, 0},
				     {"B", 0x80, 100000, 100, 0, 0}};
		synth_block(&s, w, 0, rows, 2, NULL, 0);
	}
	synth_commit(&s);
	r = analyze("phase.prof", 0.01);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_TRUE_FATAL(r->n_findings >= 2);
	CU_ASSERT_EQUAL(r->findings[0].scope, MPXKIT_SCOPE_PROGRAM);
	CU_ASSERT_EQUAL(r->findings[0].cls, MPXKIT_CLASS_D1_MISS);
	CU_ASSERT_DOUBLE_EQUAL(r->findings[0].share, (103000 - 0.05 * 4e6 / 9.5) * 10 / 5030000,
			       1e-12);
	f = &r->findings[1];
	CU_ASSERT_EQUAL(f->cls, MPXKIT_CLASS_PHASE_CHANGE);
	CU_ASSERT_EQUAL(f->metric, MPXKIT_METRIC_D1_MPKI);
	CU_ASSERT_STRING_EQUAL(r->spaces[f->space].function, "A");
	CU_ASSERT_EQUAL(f->first_window, 10);
	CU_ASSERT_EQUAL(f->last_window, 19);
	CU_ASSERT_DOUBLE_EQUAL(f->value, 100, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->share, 990000.0 / 5030000, 1e-12);
	CU_ASSERT_PTR_NULL(find(r, 0, MPXKIT_CLASS_D1_MISS, "A"));
	CU_ASSERT_PTR_NULL(find(r, 0, MPXKIT_CLASS_PHASE_CHANGE, "B"));
	mpxkit_spacetime_free(r);
}

/*
 * A defect that is the average: a and b each Ir 1e5, D1mr 4000 in each of 10 windows.  Program:
 * Ir 2e6, D1mr 80 000 (40/kI), cost 2e6 + 10 x 80 000 = 2.8e6; D1 misses cost 800 000 / 2.8e6 =
 * 2/7 of it, past Memory_Bound (0.20) and L3_Bound (0.05).  Neither space differs from the
 * other, so no relative finding.  N_theta = 0.05 x (2.8e6 - 800 000) / (10 x 0.95) = 10 526.3
 * misses: reference 1000 x 10 526.3 / 2e6 = 5.263/kI, share (80 000 - 10 526.3) x 10 / 2.8e6.
 * The program finding names a (ties go to the first space); a's own absolute finding is its
 * duplicate and goes; b's: cost 1.4e6, N_theta = 0.05 x 1e6 / 9.5 = 5263.2, share
 * (40 000 - 5263.2) x 10 / 2.8e6, event share 1/2.
 */
static void test_absolute_miss(void)
{
	const double n_theta = 0.05 * 2e6 / 9.5, n_theta_b = 0.05 * 1e6 / 9.5;
	const srow rows[] = {{"a", 0x10, 100000, 4000, 0, 0}, {"b", 0x80, 100000, 4000, 0, 0}};
	const srow fewer[] = {{"a", 0x10, 100000, 400, 0, 0}, {"b", 0x80, 100000, 400, 0, 0}};
	mpxkit_spacetime *r = steady("average.prof", rows, 2);
	const mpxkit_spacetime_finding *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_findings, 2);
	f = find_program(r, MPXKIT_CLASS_D1_MISS);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_EQUAL(f, &r->findings[0]);
	CU_ASSERT_TRUE(f->absolute);
	CU_ASSERT_FALSE(f->advantage);
	CU_ASSERT_STRING_EQUAL(r->spaces[f->space].function, "a");
	CU_ASSERT_DOUBLE_EQUAL(f->value, 40, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->program_value, 40, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->stall_share, 2.0 / 7, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->threshold, 0.05, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, 1000 * n_theta / 2e6, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(f->share, (80000 - n_theta) * 10 / 2.8e6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->event_share, 0.5, 1e-12);
	CU_ASSERT_PTR_NOT_NULL(strstr(f->direction, "whole program: D1 misses 40/kI cost 29 %"));
	CU_ASSERT_PTR_NULL(find(r, 0, MPXKIT_CLASS_D1_MISS, "a"));
	f = find(r, 0, MPXKIT_CLASS_D1_MISS, "b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_TRUE(f->absolute);
	CU_ASSERT_EQUAL(f->scope, MPXKIT_SCOPE_SPACE);
	CU_ASSERT_DOUBLE_EQUAL(f->share, (40000 - n_theta_b) * 10 / 2.8e6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->event_share, 0.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, 1000 * n_theta_b / 1e6, 1e-9);
	mpxkit_spacetime_free(r);

	/* A tenth of the misses: 4/kI cost 80 000 / 2.08e6 = 3.8 %, below every threshold. */
	r = steady("average-clean.prof", fewer, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_findings, 0);
	mpxkit_spacetime_free(r);
}

/*
 * Indirect calls in one loop, Ir 1e5 and Bi 10 000 per window over 10 windows; the level-1 node
 * must be flagged too.  With Bim 1500 a window they cost 150 000 / 1.15e6 = 13.0 % of the
 * program: past Branch_Mispredicts (0.10), not Bad_Speculation (0.15): nothing.  With Bim 2000,
 * 200 000 / 1.2e6 = 1/6: past both, at 20 per 1000 instructions (> 1).  N_theta = 0.10 x 1e6 /
 * (10 x 0.9) = 11 111.1, share (20 000 - 11 111.1) x 10 / 1.2e6, reference 11 111.1 / 1e5 (the
 * ratio Bim / Bi).
 */
static void test_absolute_indirect(void)
{
	const double n_theta = 0.10 * 1e6 / 9;
	const srow under[] = {{"calls", 0x10, 100000, 0, 10000, 1500}};
	const srow past[] = {{"calls", 0x10, 100000, 0, 10000, 2000}};
	mpxkit_spacetime *r = steady("indirect13.prof", under, 1);
	const mpxkit_spacetime_finding *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_DOUBLE_EQUAL(r->metrics[MPXKIT_METRIC_INDIRECT_MISPREDICT_RATIO], 0.15, 1e-12);
	CU_ASSERT_EQUAL(r->n_findings, 0);
	mpxkit_spacetime_free(r);

	r = steady("indirect17.prof", past, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->n_findings, 1);
	f = find_program(r, MPXKIT_CLASS_INDIRECT_MISPREDICT);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_DOUBLE_EQUAL(f->value, 0.2, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->stall_share, 1.0 / 6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->threshold, 0.10, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->share, (20000 - n_theta) * 10 / 1.2e6, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->reference_value, n_theta / 100000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->event_share, 1, 1e-12);
	mpxkit_spacetime_free(r);
}

/*
 * One loop run by two threads: 3e6 and 1e6 instructions.  c_max / c_mean =
 * 1.5, idle 2e6, share 2e6 / (4e6 + 2e6).
 */
static void test_imbalance(void)
{
	synth s;
	mpxkit_spacetime *r;
	const mpxkit_spacetime_finding *f;
	const srow busy[] = {{"loop", 0x10, 3000000, 0, 0, 0}},
		   idle[] = {{"loop", 0x10, 1000000, 0, 0, 0}};

	synth_open(&s, "threads.prof", 2);
	synth_block(&s, 0, 0, busy, 1, NULL, 0);
	synth_block(&s, 0, 1, idle, 1, NULL, 0);
	synth_commit(&s);
	r = analyze("threads.prof", 0.01);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	f = find(r, 0, MPXKIT_CLASS_LOAD_IMBALANCE, "loop");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_DOUBLE_EQUAL(f->value, 1.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(f->share, 2.0 / 6, 1e-12);
	CU_ASSERT_EQUAL(r->threads[f->thread].tid, 100);
	CU_ASSERT_EQUAL(r->n_threads, 2);
	CU_ASSERT_DOUBLE_EQUAL(r->threads[0].cost_share, 0.75, 1e-12);
	mpxkit_spacetime_free(r);
}

/*
 * One thread: A in windows 0-2, B in 3-4, A in 5-6, B in 7.  Transitions
 * A -> B twice, B -> A once; A's runs [0, 2] and [5, 6], longest gap 2
 * windows, ending at 5.
 */
static void test_patterns(void)
{
	synth s;
	mpxkit_spacetime *r;
	const mpxkit_spacetime_space *a = NULL;
	const char *seq = "AAABBAAB";
	size_t ab = 0, ba = 0;

	synth_open(&s, "patterns.prof", 1);
	for (uint64_t w = 0; w < 8; w++) {
		const srow rows[] = {
		    {seq[w] == 'A' ? "A" : "B", seq[w] == 'A' ? 0x10 : 0x80, 1000, 0, 0, 0}};
		synth_block(&s, w, 0, rows, 1, NULL, 0);
	}
	synth_commit(&s);
	r = analyze("patterns.prof", 0.01);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL_FATAL(r->n_spaces, 2);
	for (size_t p = 0; p < r->n_patterns; p++) {
		const char *from = r->spaces[r->patterns[p].from].function;
		if (strcmp(from, "A") == 0)
			ab = r->patterns[p].count;
		else
			ba = r->patterns[p].count;
	}
	CU_ASSERT_EQUAL(r->n_patterns, 2);
	CU_ASSERT_EQUAL(ab, 2);
	CU_ASSERT_EQUAL(ba, 1);
	a = strcmp(r->spaces[0].function, "A") == 0 ? &r->spaces[0] : &r->spaces[1];
	CU_ASSERT_EQUAL(a->appearances, 5);
	CU_ASSERT_EQUAL_FATAL(a->n_runs, 2);
	CU_ASSERT_EQUAL(a->runs[0][0], 0);
	CU_ASSERT_EQUAL(a->runs[0][1], 2);
	CU_ASSERT_EQUAL(a->runs[1][0], 5);
	CU_ASSERT_EQUAL(a->runs[1][1], 6);
	CU_ASSERT_EQUAL(a->gaps, 1);
	CU_ASSERT_EQUAL(a->max_gap, 2);
	CU_ASSERT_EQUAL(a->max_gap_end, 5);
	mpxkit_spacetime_free(r);
}

static void test_analyze_refuses(void)
{
	mpxkit_spacetime *r = NULL;
	mpxkit_diag diag = {0};
	synth s;

	CU_ASSERT(mpxkit_spacetime_analyze(cutest_scratch_path("none.prof"), NULL, &r, &diag) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "No such file"));
	CU_ASSERT_PTR_NULL(r);
	synth_open(&s, "empty.prof", 1);
	synth_commit(&s);
	CU_ASSERT_EQUAL(
	    mpxkit_spacetime_analyze(cutest_scratch_path("empty.prof"), NULL, &r, &diag),
	    -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "holds no samples"));
}

int main(void)
{
	static const cutest_case cg_cases[] = {
	    {"per-instruction dump", test_cg_instr},
	    {"malformed dumps", test_cg_instr_bad},
	    {NULL, NULL},
	};
	static const cutest_case file_cases[] = {
	    {"round trip", test_profile_round_trip},
	    {"writer refuses", test_writer_refuses},
	    {"every cut and flipped bit", test_profile_damage},
	    {"decoder checks", test_profile_decoder_checks},
	    {NULL, NULL},
	};
	static const cutest_case analysis_cases[] = {
	    {"code spaces: nesting, overlap, headers", test_spaces},
	    {"space defect and advantage", test_space_defect},
	    {"phase change", test_phase},
	    {"absolute: a miss rate that is the average", test_absolute_miss},
	    {"absolute: indirect mispredictions under their level-1 node", test_absolute_indirect},
	    {"load imbalance", test_imbalance},
	    {"patterns and appearances", test_patterns},
	    {"bad input", test_analyze_refuses},
	    {NULL, NULL},
	};
	static const cutest_suite suites[] = {
	    {"callgrind per-instruction dumps", cg_cases, NULL, NULL},
	    {"profile file", file_cases, setup, NULL},
	    {"analysis", analysis_cases, NULL, teardown},
	    {NULL, NULL, NULL, NULL},
	};

	return cutest_run("test_spacetime", suites);
}

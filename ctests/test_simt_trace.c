/* SPDX-License-Identifier: BSD-3-Clause */
/* The Accel-Sim trace reader: every tracer version and address mode, gzip, kernelslist.g, bad
 * input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cutest.h"
#include "mpxkit/simt.h"

/* Lines 1-4 of every trace below; instruction lines start at line 9. */
#define HEAD(v)                                                                                    \
	"-kernel name = k\n-grid dim = (2,1,1)\n-block dim = (40,1,1)\n"                           \
	"-accelsim tracer version = " v "\n"
#define WARP0(n) "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = " n "\n"
/* A block that ran no warp: a trace holds every block of its grid (HEAD's has two). */
#define BLOCK(xyz) "#BEGIN_TB\nthread block = " xyz "\n#END_TB\n"

typedef struct seen {
	unsigned blocks, warps, insts, ends;
	mpxkit_simt_inst last;
	char last_opcode[64];
} seen;

/* Reads every event; returns 0 at the end or the first negative code (diag in d). */
static int drain(mpxkit_simt_trace *t, seen *s, mpxkit_diag *d)
{
	mpxkit_simt_step st;
	int ev;

	memset(s, 0, sizeof *s);
	while ((ev = mpxkit_simt_trace_next(t, &st, d)) > 0) {
		if (ev == MPXKIT_SIMT_BLOCK)
			s->blocks++;
		else if (ev == MPXKIT_SIMT_WARP)
			s->warps++;
		else if (ev == MPXKIT_SIMT_BLOCK_END)
			s->ends++;
		else if (ev == MPXKIT_SIMT_INST) {
			s->insts++;
			s->last = *st.inst;
			snprintf(s->last_opcode, sizeof s->last_opcode, "%s",
				 mpxkit_simt_trace_opcode(t, st.inst->opcode));
		}
	}
	return ev;
}

static int parse_all(const char *text, seen *s, mpxkit_diag *d)
{
	mpxkit_simt_trace *t = NULL;
	int rc = mpxkit_simt_trace_open_buffer("bad.traceg", text, strlen(text), &t, d);

	if (rc == 0)
		rc = drain(t, s, d);
	mpxkit_simt_trace_close(t);
	return rc;
}

static void expect_bad(const char *text, int code, const char *msg)
{
	mpxkit_diag d = {0};
	seen s;
	int rc = parse_all(text, &s, &d);

	CU_ASSERT_EQUAL(rc, -code);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	if (rc != -code || strcmp(d.msg, msg) != 0)
		fprintf(stderr, "\n  got:  %d %s\n  want: %d %s\n", rc, d.msg, -code, msg);
}

static void expect_good(const char *text, seen *s)
{
	mpxkit_diag d = {0};
	int rc = parse_all(text, s, &d);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc != 0)
		fprintf(stderr, "\n  %s\n", d.msg);
}

static const char *vecadd_like = HEAD(
    "4") "-kernel id = 3\n-shmem = 16\n-nregs = 8\n"
	 "-binary version = 61\n-cuda stream id = 7\n-shmem base_addr = 0x00007f2b5a000000\n"
	 "-local mem base_addr = 0x00007f2b58000000\n-nvbit version = 1.5.5\n-enable lineinfo = 0\n"
	 "-future key = whatever\n\n"
	 "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "
	 "mem_width\n\n"
	 "#BEGIN_TB\n\nthread block = 1,0,0\n\nwarp = 1\ninsts = 4\n"
	 "0098 000000ff 1 R4 LDG.E.CG 1 R4 4 1 0x7f2b2d500000 4 \n"
	 "00a0 00000005 1 R5 LDG.E.64 1 R6 8 0 0x10 0x20\n"
	 "00a8 0000000d 0 STG.E 2 R6 R0 4 2 0x1000 -8 1000\n"
	 "00b0 00000000 0 EXIT 0 0 \n\nwarp = 0\ninsts = 0\n#END_TB\n" BLOCK("0,0,0");

static void test_header_and_events(void)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_step st;
	mpxkit_diag d = {0};
	const mpxkit_simt_kernel *k;
	const mpxkit_simt_inst *in;

	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_simt_trace_open_buffer("v.traceg", vecadd_like, strlen(vecadd_like), &t, &d), 0);
	k = mpxkit_simt_trace_kernel(t);
	CU_ASSERT_STRING_EQUAL(k->name, "k");
	CU_ASSERT_EQUAL(k->id, 3);
	CU_ASSERT_EQUAL(k->grid[0], 2);
	CU_ASSERT_EQUAL(k->block[0], 40);
	CU_ASSERT_EQUAL(k->threads_per_block, 40);
	CU_ASSERT_EQUAL(k->warps_per_block, 2);
	CU_ASSERT_EQUAL(k->shmem, 16);
	CU_ASSERT_EQUAL(k->nregs, 8);
	CU_ASSERT_EQUAL(k->binary_version, 61);
	CU_ASSERT_EQUAL(k->stream, 7);
	CU_ASSERT_EQUAL(k->shmem_base, 0x00007f2b5a000000ull);
	CU_ASSERT_EQUAL(k->local_base, 0x00007f2b58000000ull);
	CU_ASSERT_EQUAL(k->tracer_version, 4);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_BLOCK);
	CU_ASSERT_EQUAL(st.block[0], 1);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_WARP);
	CU_ASSERT_EQUAL(st.warp, 1);
	CU_ASSERT_EQUAL(st.insts, 4);
	/* mode 1: 8 lanes from the base, stride 4 */
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_INST);
	in = st.inst;
	CU_ASSERT_EQUAL(in->pc, 0x98);
	CU_ASSERT_EQUAL(in->mask, 0xff);
	CU_ASSERT_EQUAL(in->n_dst, 1);
	CU_ASSERT_EQUAL(in->dst[0], 4);
	CU_ASSERT_STRING_EQUAL(mpxkit_simt_trace_opcode(t, in->opcode), "LDG.E.CG");
	CU_ASSERT_EQUAL(in->mem_width, 4);
	CU_ASSERT_EQUAL(in->addr_mode, 1);
	CU_ASSERT_EQUAL(in->addr[0], 0x7f2b2d500000ull);
	CU_ASSERT_EQUAL(in->addr[7], 0x7f2b2d500000ull + 28);
	/* mode 0: one address per set bit, lanes 0 and 2 */
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_INST);
	in = st.inst;
	CU_ASSERT_EQUAL(in->addr_mode, 0);
	CU_ASSERT_EQUAL(in->addr[0], 0x10);
	CU_ASSERT_EQUAL(in->addr[2], 0x20);
	CU_ASSERT_EQUAL(in->mem_width, 8);
	/* mode 2: lanes 0, 2, 3 at base, base - 8, base - 8 + 1000 */
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_INST);
	in = st.inst;
	CU_ASSERT_EQUAL(in->n_src, 2);
	CU_ASSERT_EQUAL(in->src[1], 0);
	CU_ASSERT_EQUAL(in->addr[0], 0x1000);
	CU_ASSERT_EQUAL(in->addr[2], 0x1000 - 8);
	CU_ASSERT_EQUAL(in->addr[3], 0x1000 - 8 + 1000);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_INST);
	CU_ASSERT_EQUAL(st.inst->mask, 0);
	CU_ASSERT_EQUAL(st.inst->mem_width, 0);
	CU_ASSERT_EQUAL(st.inst->addr_mode, -1);
	/* a warp that ran nothing, then the block's end and the trace's */
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_WARP);
	CU_ASSERT_EQUAL(st.insts, 0);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_BLOCK_END);
	/* the grid's other block, which ran no warp */
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_BLOCK);
	CU_ASSERT_EQUAL(st.block[0], 0);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_BLOCK_END);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_END);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_next(t, &st, &d), MPXKIT_SIMT_END);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_n_opcodes(t), 4);
	mpxkit_simt_trace_close(t);
}

/* Version 2 prefixes each line with the block and warp; version 5 appends the immediate. */
static void test_versions(void)
{
	seen s;

	expect_good(HEAD("2") "#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\ninsts = 1\n"
			      "1 0 0 1 0090 000000ff 0 BRA 0 0\n#END_TB\n" BLOCK("0,0,0"),
		    &s);
	CU_ASSERT_EQUAL(s.insts, 1);
	CU_ASSERT_EQUAL(s.last.pc, 0x90);
	/* no version line: read as version 2, as Accel-Sim does */
	expect_good(
	    "-kernel name = k\n-grid dim = (2,1,1)\n-block dim = (40,1,1)\n"
	    "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0 0 0 0 0010 1 0 NOP 0 0\n"
	    "#END_TB\n" BLOCK("1,0,0"),
	    &s);
	CU_ASSERT_EQUAL(s.insts, 1);
	expect_good(
	    HEAD("5")
		WARP0("2") "0010 ffffffff 1 R2 IADD3 2 R0 R1 0 -5\n"
			   "0018 ffffffff 1 R3 LDG.E 1 R2 4 1 0x100 4 2147483647 \n#END_TB\n" BLOCK(
			       "1,0,0"),
	    &s);
	CU_ASSERT_EQUAL(s.last.has_imm, 1);
	CU_ASSERT_EQUAL(s.last.imm, 2147483647);
	expect_good(HEAD("4") "-enable lineinfo = 1\n" WARP0(
			"1") "77 0010 1 0 NOP 0 0\n#END_TB\n" BLOCK("1,0,0"),
		    &s);
	CU_ASSERT_EQUAL(s.last.source_line, 77);
	/* CRLF line ends */
	expect_good(
	    "-kernel name = k\r\n-grid dim = (1,1,1)\r\n-block dim = (32,1,1)\r\n"
	    "-accelsim tracer version = 3\r\n#BEGIN_TB\r\nthread block = 0,0,0\r\nwarp = 0\r\n"
	    "insts = 1\r\n0010 1 0 NOP 0 0\r\n#END_TB\r\n",
	    &s);
	CU_ASSERT_EQUAL(s.insts, 1);
}

static void test_bad_header(void)
{
	expect_bad("", MPXKIT_EFORMAT,
		   "bad.traceg: no '#BEGIN_TB': the trace holds no thread block");
	expect_bad(HEAD("4"), MPXKIT_EFORMAT,
		   "bad.traceg: no '#BEGIN_TB': the trace holds no thread block");
	expect_bad("-kernel name = k\n-block dim = (1,1,1)\n#BEGIN_TB\n", MPXKIT_EFORMAT,
		   "bad.traceg: header lacks '-grid dim'");
	expect_bad(HEAD("6"), MPXKIT_EVERSION,
		   "bad.traceg:4: accelsim tracer version 6 is not supported (2 to 5)");
	expect_bad("-kernel name = k\n-grid dim (1,1,1)\n", MPXKIT_EFORMAT,
		   "bad.traceg:2: header line is not '-key = value'");
	expect_bad("-kernel name = k\n-grid dim = (1,1,1)\n-grid dim = (1,1,1)\n", MPXKIT_EFORMAT,
		   "bad.traceg:3: header key 'grid dim' given twice");
	expect_bad(
	    "-kernel name = k\n-grid dim = (0,1,1)\n", MPXKIT_EFORMAT,
	    "bad.traceg:2: grid dim: '(X,Y,Z)' with X below 2^31, Y and Z at most 65535 expected");
	expect_bad("-kernel name = k\n-block dim = (1024,4,1)\n", MPXKIT_EFORMAT,
		   "bad.traceg:2: block dim: '(X,Y,Z)' with at most 2048 threads expected");
	expect_bad("-kernel name = k\n-nregs = 300\n", MPXKIT_ERANGE,
		   "bad.traceg:2: nregs: a whole number from 0 to 256 expected");
	expect_bad("-kernel name = k\n-shmem base_addr = 7f00\n", MPXKIT_EFORMAT,
		   "bad.traceg:2: shmem base_addr: a hex address '0x...' expected");
	expect_bad("-kernel name = \n", MPXKIT_EFORMAT,
		   "bad.traceg:1: kernel name: 1 to 4095 bytes expected");
	expect_bad("thread block = 0,0,0\n", MPXKIT_EFORMAT,
		   "bad.traceg:1: '-key = value' header line expected");
	expect_bad("-kernel name = k\n#END_TB\n", MPXKIT_EFORMAT,
		   "bad.traceg:2: '#END_TB' before any '#BEGIN_TB'");
}

static void test_bad_structure(void)
{
	expect_bad(HEAD("4") "#BEGIN_TB\nwarp = 0\n", MPXKIT_EFORMAT,
		   "bad.traceg:6: 'thread block = X,Y,Z' expected after '#BEGIN_TB'");
	expect_bad(HEAD("4") "#BEGIN_TB\nthread block = 5,0,0\n", MPXKIT_ERANGE,
		   "bad.traceg:6: thread block x = 5 is outside the grid (2)");
	/* A trace holds every block of its grid, once: fewer or more is refused (issue 25). */
	expect_bad(HEAD("4") BLOCK("1,0,0"), MPXKIT_ETRUNC,
		   "bad.traceg: holds 1 of the grid's 2 thread blocks (grid dim = (2,1,1))");
	expect_bad(HEAD("4") BLOCK("1,0,0") BLOCK("0,0,0") BLOCK("1,0,0"), MPXKIT_EFORMAT,
		   "bad.traceg:12: more thread blocks than the grid's 2 (grid dim = (2,1,1))");
	expect_bad(HEAD("4") "#BEGIN_TB\nthread block = 0,0\n", MPXKIT_EFORMAT,
		   "bad.traceg:6: 'thread block = X,Y,Z' expected");
	expect_bad(HEAD("4") "#BEGIN_TB\nthread block = 0,0,0\nwarp = 2\n", MPXKIT_ERANGE,
		   "bad.traceg:7: warp 2: the block has 2 warps");
	expect_bad(HEAD("4") WARP0("0") "warp = 0\ninsts = 0\n", MPXKIT_EFORMAT,
		   "bad.traceg:9: warp 0 appears twice in this block");
	expect_bad(HEAD("4") "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\nwarp = 1\n",
		   MPXKIT_EFORMAT, "bad.traceg:8: 'insts = K' expected after 'warp = 0'");
	expect_bad(HEAD("4") WARP0("2") "0010 1 0 NOP 0 0\n#END_TB\n", MPXKIT_EFORMAT,
		   "bad.traceg:10: warp 0 announced 2 instructions, 1 found");
	expect_bad(HEAD("4") WARP0("2") "0010 1 0 NOP 0 0\n", MPXKIT_ETRUNC,
		   "bad.traceg: ends inside warp 0: 1 of 2 instructions");
	expect_bad(HEAD("4") WARP0("1") "0010 1 0 NOP 0 0\n", MPXKIT_ETRUNC,
		   "bad.traceg: ends inside a thread block (no '#END_TB')");
	expect_bad(HEAD("4") WARP0("0") "#END_TB\nthread block = 1,0,0\n", MPXKIT_EFORMAT,
		   "bad.traceg:10: '#BEGIN_TB' or the end of the file expected");
	expect_bad(HEAD("4") "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n", MPXKIT_ETRUNC,
		   "bad.traceg: ends after 'warp = 0'");
}

static void test_bad_instructions(void)
{
	static const struct {
		const char *line;
		int code;
		const char *msg;
	} cases[] = {
	    {"zz 1 0 NOP 0 0", MPXKIT_EFORMAT, "PC: 1 to 16 hex digits expected"},
	    {"10 123456789 0 NOP 0 0", MPXKIT_EFORMAT, "mask: 1 to 8 hex digits expected"},
	    {"10 1 9 NOP 0 0", MPXKIT_EFORMAT, "destination register count: 0 to 8 expected"},
	    {"10 1 1 R256 MOV 0 0", MPXKIT_EFORMAT,
	     "destination register 1 of 1: R0 to R255 expected"},
	    {"10 1 1 P0 MOV 0 0", MPXKIT_EFORMAT,
	     "destination register 1 of 1: R0 to R255 expected"},
	    {"10 1 0 9NOP 0 0", MPXKIT_EFORMAT,
	     "opcode: 1 to 63 characters starting with a letter expected"},
	    {"10 1 0 NO-P 0 0", MPXKIT_EFORMAT, "opcode: only letters, digits, '_' and '.'"},
	    {"10 1 0 NOP 1 0", MPXKIT_EFORMAT, "source register 1 of 1: R0 to R255 expected"},
	    {"10 1 0 LD 0 3 1 0x0 4", MPXKIT_EFORMAT,
	     "memory width: 0, 1, 2, 4, 8, 16 or 32 expected"},
	    {"10 1 0 LD 0 4 3 0x0", MPXKIT_EFORMAT, "address mode: 0, 1 or 2 expected"},
	    {"10 3 0 LD 0 4 0 0x0", MPXKIT_EFORMAT,
	     "address of lane 1: a hex address expected (mode 0 lists one per active lane)"},
	    {"10 5 0 LD 0 4 1 0x0 4", MPXKIT_EFORMAT,
	     "address mode 1 with a non-contiguous mask 00000005"},
	    {"10 3 0 LD 0 4 1 0x0 4294967296", MPXKIT_ERANGE,
	     "stride: a decimal in -2^31..2^31-1 expected"},
	    {"10 7 0 LD 0 4 2 0x0 4", MPXKIT_EFORMAT,
	     "delta of lane 2: a decimal expected (mode 2 gives one per further active lane)"},
	    {"10 3 0 LD 0 4 1 0xfffffffffffffff0 16", MPXKIT_ERANGE,
	     "address of lane 1 wraps past 2^64"},
	    {"10 1 0 LD 0 8 0 0xfffffffffffffffc", MPXKIT_ERANGE,
	     "address of lane 0 wraps past 2^64"},
	    {"10 3 0 LD 0 4 2 0x10 -32", MPXKIT_ERANGE, "address of lane 1 wraps past 2^64"},
	    {"10 1 0 NOP 0 0 x", MPXKIT_EFORMAT,
	     "unexpected field 'x' at the end of the instruction"},
	    {"10 1 0 NOP 0 0 5", MPXKIT_EFORMAT,
	     "unexpected field '5' at the end of the instruction"},
	};
	char text[512], msg[256];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, HEAD("4") WARP0("1") "%s\n#END_TB\n", cases[i].line);
		snprintf(msg, sizeof msg, "bad.traceg:9: %s", cases[i].msg);
		expect_bad(text, cases[i].code, msg);
	}
	/* lanes beyond the block: 40 threads leave warp 1 eight lanes */
	expect_bad(
	    HEAD("4") "#BEGIN_TB\nthread block = 0,0,0\nwarp = 1\ninsts = 1\n"
		      "0010 1ff 0 NOP 0 0\n#END_TB\n",
	    MPXKIT_ERANGE,
	    "bad.traceg:9: mask 000001ff names lanes beyond the block's 40 threads (warp 1)");
	expect_bad(HEAD("2") "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n"
			     "1 0 0 0 0010 1 0 NOP 0 0\n#END_TB\n",
		   MPXKIT_EFORMAT,
		   "bad.traceg:9: instruction of block 1,0,0 warp 0 inside block 0,0,0 warp 0");
	expect_bad(HEAD("5") WARP0("1") "0010 1 0 NOP 0 0\n#END_TB\n", MPXKIT_EFORMAT,
		   "bad.traceg:9: immediate: a decimal 32-bit value expected (tracer version 5)");
}

/* A NUL byte is refused by the shared reader, with its line. */
static void test_nul(void)
{
	static const char text[] = HEAD("4") WARP0("1") "0010 1 0 NOP\0 0 0\n#END_TB\n";
	mpxkit_simt_trace *t = NULL;
	mpxkit_diag d = {0};
	seen s;

	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_simt_trace_open_buffer("nul.traceg", text, sizeof text - 1, &t, &d), 0);
	CU_ASSERT_EQUAL(drain(t, &s, &d), -MPXKIT_EFORMAT);
	CU_ASSERT_STRING_EQUAL(d.msg, "nul.traceg:9: NUL byte: not a text file");
	mpxkit_simt_trace_close(t);
}

/* ---- files ---------------------------------------------------------------------------------- */

static void put(const char *path, const char *text, int gz)
{
	if (gz) {
		gzFile f = gzopen(path, "wb");
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_FATAL(gzwrite(f, text, (unsigned)strlen(text)) == (int)strlen(text));
		CU_ASSERT_FATAL(gzclose(f) == Z_OK);
	} else {
		FILE *f = fopen(path, "w");
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_FATAL(fputs(text, f) >= 0);
		CU_ASSERT_FATAL(fclose(f) == 0);
	}
}

/* The same trace plain and gzip-compressed (any name) reads the same, streamed from the file. */
static void test_files(void)
{
	const char *plain = cutest_scratch_path("kernel-1.traceg");
	const char *packed = cutest_scratch_path("kernel-2.traceg.gz");
	mpxkit_simt_trace *t = NULL;
	mpxkit_diag d = {0};
	seen a, b;

	put(plain, vecadd_like, 0);
	put(packed, vecadd_like, 1);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_open(plain, &t, &d), 0);
	CU_ASSERT_EQUAL(drain(t, &a, &d), 0);
	mpxkit_simt_trace_close(t);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_trace_open(packed, &t, &d), 0);
	CU_ASSERT_EQUAL(drain(t, &b, &d), 0);
	mpxkit_simt_trace_close(t);
	CU_ASSERT_EQUAL(a.insts, 4);
	CU_ASSERT_EQUAL(b.insts, a.insts);
	CU_ASSERT_EQUAL(b.warps, a.warps);
	CU_ASSERT_EQUAL(memcmp(&a.last, &b.last, sizeof a.last), 0);
	CU_ASSERT_EQUAL(mpxkit_simt_trace_open(cutest_scratch(), &t, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "Is a directory"));
}

static void test_kernelslist(void)
{
	const char *list = cutest_scratch_path("kernelslist.g");
	mpxkit_simt_commands *c = NULL;
	mpxkit_diag d = {0};
	char want[512];

	put(list,
	    "MemcpyHtoD,0x00007f2b2d500000,400\n\nkernel-1.traceg\nMemcpyDtoH,0x10,4\r\n"
	    "kernel-2.traceg.gz\n",
	    0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_commands_read(cutest_scratch(), &c, &d), 0);
	CU_ASSERT_EQUAL_FATAL(c->n, 3);
	CU_ASSERT_EQUAL(c->cmd[0].is_kernel, 0);
	CU_ASSERT_EQUAL(c->cmd[0].addr, 0x00007f2b2d500000ull);
	CU_ASSERT_EQUAL(c->cmd[0].size, 400);
	CU_ASSERT_EQUAL(c->cmd[1].is_kernel, 1);
	snprintf(want, sizeof want, "%s/kernel-1.traceg", cutest_scratch());
	CU_ASSERT_STRING_EQUAL(c->cmd[1].path, want);
	mpxkit_simt_commands_free(c);
	/* the file itself reads the same as its directory */
	CU_ASSERT_EQUAL(mpxkit_simt_commands_read(list, &c, &d), 0);
	mpxkit_simt_commands_free(c);

	static const struct {
		const char *text, *msg;
	} bad[] = {
	    {"MemcpyHtoD,10,5\n", "kernelslist.g:1: 'MemcpyHtoD,0xADDRESS,BYTES' expected"},
	    {"MemcpyHtoD,0x10,\n", "kernelslist.g:1: 'MemcpyHtoD,0xADDRESS,BYTES' expected"},
	    {"MemcpyHtoD,0x10,281474976710657\n",
	     "kernelslist.g:1: 'MemcpyHtoD,0xADDRESS,BYTES' expected"},
	    {"kernel-1.traceg\nkernel/../x.traceg\n",
	     "kernelslist.g:2: neither 'MemcpyHtoD,...', 'MemcpyDtoH,...' nor a kernel-N.traceg "
	     "file name"},
	    {"kernel 1.traceg\n",
	     "kernelslist.g:1: kernel file name with a blank or control character"},
	    {"hello\n", "kernelslist.g:1: neither 'MemcpyHtoD,...', 'MemcpyDtoH,...' nor a "
			"kernel-N.traceg file name"},
	    /* a copy that ends past 2^64 (issue 25); the last byte at 2^64 - 1 is fine */
	    {"MemcpyHtoD,0xfffffffffffffff0,17\n",
	     "kernelslist.g:1: MemcpyHtoD of 17 bytes at 0xfffffffffffffff0 ends past 2^64"},
	    {"MemcpyHtoD,0xfffffffffffffff0,16\nMemcpyDtoH,0xffffffffffffffff,2\n",
	     "kernelslist.g:2: MemcpyDtoH of 2 bytes at 0xffffffffffffffff ends past 2^64"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put(list, bad[i].text, 0);
		CU_ASSERT_EQUAL(mpxkit_simt_commands_read(list, &c, &d), -MPXKIT_EFORMAT);
		snprintf(want, sizeof want, "%s/%s", cutest_scratch(), bad[i].msg);
		CU_ASSERT_STRING_EQUAL(d.msg, want);
		if (strcmp(d.msg, want) != 0)
			fprintf(stderr, "\n  got:  %s\n  want: %s\n", d.msg, want);
	}
}

static int setup(void)
{
	return cutest_scratch_make("simt-trace");
}

static const cutest_case parse_cases[] = {
    {"header and events, address modes 0 1 2", test_header_and_events},
    {"tracer versions 2 to 5, lineinfo, CRLF", test_versions},
    {"bad headers", test_bad_header},
    {"bad block structure", test_bad_structure},
    {"bad instruction lines", test_bad_instructions},
    {"NUL byte", test_nul},
    {NULL, NULL},
};

static const cutest_case file_cases[] = {
    {"plain and gzip files", test_files},
    {"kernelslist.g", test_kernelslist},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"simt trace parse", parse_cases, NULL, NULL},
	    {"simt trace files", file_cases, setup, cutest_scratch_remove},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_simt_trace", suites);
}

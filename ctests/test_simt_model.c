/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIMT model on synthetic traces whose cycles and counts are worked out by hand here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/simt.h"

/*
 * A GPU with round numbers, so every expected figure below can be derived in
 * a line: one SM with one scheduler, ALU latency 4 (initiation 1), L1 hit 10,
 * L2 hit 100, DRAM 300, shared memory 5, no instruction cache, no launch
 * overhead, and bandwidths too large to bind.
 */
#define GPU_HEAD                                                                                   \
	"mpxkit-gpu 1\nname test\nsms %u\nclock_mhz 1000\nwarp_size 32\nschedulers %u\n"           \
	"max_warps 64\nmax_blocks %u\nmax_threads_per_block 1024\nregisters 65536\n"               \
	"register_unit 256\nshared_per_sm 65536\nshared_per_block 49152\nshared_unit 256\n"        \
	"launch_cycles 0\n"                                                                        \
	"l1 sets=64 ways=4 line=128 sector=32 latency=10 write=through global=cached "             \
	"request_bytes=%u tags_per_cycle=%u\n"                                                     \
	"l2 sets=64 ways=4 line=128 sector=32 latency=100 write=back bytes_per_cycle=100000\n"     \
	"icache none\nshared_mem banks=32 width=4 latency=5\n"                                     \
	"dram latency=300 bytes_per_cycle=100000\n"
#define GPU_UNITS                                                                                  \
	"unit int latency=4 initiation=%u\nunit fp16 latency=4 initiation=1\n"                     \
	"unit fp32 latency=4 initiation=1\nunit fp64 latency=8 initiation=4\n"                     \
	"unit sfu latency=20 initiation=8\nunit conv latency=20 initiation=8\n"                    \
	"unit tensor latency=8 initiation=2\nunit branch latency=4 initiation=1\n"                 \
	"unit ldst latency=20 initiation=1\nunit const latency=4 initiation=1\n"                   \
	"unit tex latency=200 initiation=4\nunit sreg latency=4 initiation=1\n"                    \
	"unit sync latency=4 initiation=1\nops builtin\n"

typedef struct gpu_opts {
	unsigned sms, schedulers, max_blocks, request_bytes, tags, int_init;
} gpu_opts;

static const gpu_opts plain = {1, 1, 8, 128, 4, 1};

static mpxkit_simt_gpu *make_gpu(const gpu_opts *o)
{
	char text[4096];
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	int n = snprintf(text, sizeof text, GPU_HEAD GPU_UNITS, o->sms, o->schedulers,
			 o->max_blocks, o->request_bytes, o->tags, o->int_init);

	CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof text);
	if (mpxkit_simt_gpu_parse("test.gpu", text, (size_t)n, &g, &d) < 0)
		fprintf(stderr, "\n  %s\n", d.msg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	return g;
}

/* A kernel trace: the header, then body (blocks, warps, instructions). */
#define TRACE_HEAD                                                                                 \
	"-kernel name = k\n-kernel id = 1\n-grid dim = (%u,1,1)\n"                                 \
	"-block dim = (%u,1,1)\n-shmem = 0\n-nregs = 8\n-binary version = 70\n"                    \
	"-cuda stream id = 0\n-shmem base_addr = 0x00007f0000000000\n"                             \
	"-local mem base_addr = 0x00007e0000000000\n-nvbit version = 1.5\n"                        \
	"-accelsim tracer version = 4\n-enable lineinfo = 0\n\n"                                   \
	"#traces format = PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "                 \
	"mem_width [adrrescompress?] [mem_addresses]\n\n"

static char *trace_text(unsigned block_threads, unsigned grid_x, const char *body)
{
	size_t n = sizeof TRACE_HEAD + strlen(body) + 64;
	char *s = malloc(n);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	snprintf(s, n, TRACE_HEAD "%s", grid_x, block_threads, body);
	return s;
}

static mpxkit_simt_result *run_on(const mpxkit_simt_gpu *g, const char *trace)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_sim *sim = NULL;
	mpxkit_simt_result *r = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_sim_new(g, &sim, &d), 0);
	if (mpxkit_simt_trace_open_buffer("t.traceg", trace, strlen(trace), &t, &d) < 0 ||
	    mpxkit_simt_sim_kernel(sim, t, &r, &d) < 0)
		fprintf(stderr, "\n  %s\n", d.msg);
	CU_ASSERT_PTR_NOT_NULL(r);
	mpxkit_simt_trace_close(t);
	mpxkit_simt_sim_free(sim);
	return r;
}

static mpxkit_simt_result *run_body(const gpu_opts *o, unsigned threads, unsigned grid,
				    const char *body)
{
	mpxkit_simt_gpu *g = make_gpu(o);
	char *t = trace_text(threads, grid, body);
	mpxkit_simt_result *r = run_on(g, t);

	free(t);
	mpxkit_simt_gpu_free(g);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

/* One warp of n copies of an instruction (its fields after the PC), at PCs 0, 8, 16, ... */
static char *one_warp(const char *inst, unsigned n)
{
	size_t cap = 128 + (size_t)n * 96, len;
	char *s = malloc(cap);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	len =
	    (size_t)snprintf(s, cap, "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = %u\n", n);
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%04x %s\n", 8 * i, inst);
	snprintf(s + len, cap - len, "#END_TB\n");
	return s;
}

/* ---- all lanes masked ----------------------------------------------------------------------- */

/*
 * Every lane masked: the spec charges each instruction a NOP time (one
 * issue slot) and nothing else, so a chain that would wait 4 cycles per
 * instruction takes one cycle per instruction: n.
 */
static void test_all_masked(void)
{
	const unsigned n = 50;
	char *body = one_warp("00000000 1 R1 IADD 1 R1 0", n);
	mpxkit_simt_result *r = run_body(&plain, 32, 1, body);

	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, n, 0);
	CU_ASSERT_DOUBLE_EQUAL(r->parts[MPXKIT_SIMT_PART_NOP], n, 0);
	CU_ASSERT_EQUAL(r->warp_insts, n);
	CU_ASSERT_EQUAL(r->thread_insts, 0);
	CU_ASSERT_EQUAL(r->all_masked_insts, n);
	CU_ASSERT_EQUAL(r->nop_lane_slots, 32 * n);
	free(body);
	mpxkit_simt_result_free(r);
}

/* ---- ALU chains ----------------------------------------------------------------------------- */

/*
 * n dependent IADDs (R1 <- R1): the k-th issues when the (k-1)-th's result is
 * ready, at (k-1) * 4; the warp ends one cycle after the last issue:
 * 4(n-1) + 1.  n independent ones (each its own register) issue one per cycle:
 * n.  With an initiation interval of 2 the int unit takes them every other
 * cycle, the last at 2(n-1), and stays busy 2 cycles per instruction: the
 * unit bound, 2n, sets the time.
 */
static void test_alu_chain(void)
{
	const unsigned n = 40;
	char *dep = one_warp("ffffffff 1 R1 IADD 1 R1 0", n), *ind;
	mpxkit_simt_result *r = run_body(&plain, 32, 1, dep);
	gpu_opts slow = plain;

	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 4.0 * (n - 1) + 1, 0);
	CU_ASSERT_EQUAL(r->thread_insts, 32 * n);
	CU_ASSERT_EQUAL(r->thread_class[MPXKIT_SIMT_INTEGER], 32 * n);
	/* n issue slots, the rest waits for ALU results */
	CU_ASSERT_DOUBLE_EQUAL(r->parts[MPXKIT_SIMT_PART_ALU], n, 0);
	CU_ASSERT_DOUBLE_EQUAL(r->parts[MPXKIT_SIMT_PART_STALL_ALU], 3.0 * (n - 1), 1e-9);
	mpxkit_simt_result_free(r);

	/* R2..R41 from R255 (RZ, never a dependence) */
	ind = malloc(128 + n * 96);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ind);
	{
		size_t len = (size_t)sprintf(
		    ind, "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = %u\n", n);
		for (unsigned i = 0; i < n; i++)
			len += (size_t)sprintf(ind + len, "%04x ffffffff 1 R%u IADD 1 R255 0\n",
					       8 * i, i + 2);
		sprintf(ind + len, "#END_TB\n");
	}
	r = run_body(&plain, 32, 1, ind);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, n, 0);
	mpxkit_simt_result_free(r);
	slow.int_init = 2;
	r = run_body(&slow, 32, 1, ind);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 2.0 * n, 0);
	CU_ASSERT_EQUAL(r->bound, MPXKIT_SIMT_BOUND_UNIT);
	mpxkit_simt_result_free(r);
	free(ind);
	free(dep);
}

/* ---- strided loads -------------------------------------------------------------------------- */

/* A warp that loads R2 with stride s from A, then R3 the same way, then adds them. */
static mpxkit_simt_result *two_loads(const gpu_opts *o, unsigned stride, const char *gap)
{
	char body[1024];

	snprintf(body, sizeof body,
		 "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = %u\n"
		 "0000 ffffffff 1 R2 LDG.E 1 R8 4 1 0x10000 %u\n"
		 "%s"
		 "0010 ffffffff 1 R3 LDG.E 1 R8 4 1 0x10000 %u\n"
		 "0018 ffffffff 1 R4 IADD 2 R2 R3 0\n#END_TB\n",
		 gap[0] ? 4u : 3u, stride, gap, stride);
	return run_body(o, 32, 1, body);
}

/*
 * Stride 4: 32 lanes read 128 contiguous bytes, one line of four sectors.
 * The first load misses L1 and L2: DRAM, 300 cycles, R2 ready at 300.  The
 * second, issued at 1, finds the four sectors still being filled and waits
 * for that fill (ready at 300), so the add issues at 300 and the warp ends at
 * 301.  Transactions: 4 sectors per load; L1 hits 4 (the pending fill), L1
 * misses 4, L2 misses 4, DRAM reads 4.
 *
 * With a dependence between them (an add R8 <- R2 at 300, ready at 304, and
 * the second load's address R8), the second load issues at 304 and hits L1
 * (10 cycles): the add issues at 314, the end is 315.
 *
 * Stride 128: every lane its own line, 32 lines at 4 tags per cycle = 8
 * wavefronts, so each access takes 7 cycles more: the first load 307, the
 * second (pending hits) waits for the same fills, and the warp ends at 308.
 * Transactions: 32 sectors per load.  With request_bytes=32 and 1 tag per
 * cycle (Pascal), 32 lines take 32 wavefronts: 300 + 31, end 332.
 */
static void test_strided_loads(void)
{
	gpu_opts pascal = plain;
	mpxkit_simt_result *r = two_loads(&plain, 4, "");

	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 301, 0);
	CU_ASSERT_EQUAL(r->gld_transactions, 8);
	CU_ASSERT_EQUAL(r->l1_hits, 4);
	CU_ASSERT_EQUAL(r->l1_misses, 4);
	CU_ASSERT_EQUAL(r->l2_misses, 4);
	CU_ASSERT_EQUAL(r->l2_hits, 0);
	CU_ASSERT_EQUAL(r->dram_read_transactions, 4);
	CU_ASSERT_EQUAL(r->l2_read_transactions, 4);
	CU_ASSERT_EQUAL(r->inst_global_loads, 2);
	mpxkit_simt_result_free(r);

	r = two_loads(&plain, 4, "0008 ffffffff 1 R8 IADD 1 R2 0\n");
	/* the IADD at 300 makes R8 ready at 304: the second load issues at 304, hits at 314 */
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 315, 0);
	CU_ASSERT_EQUAL(r->l1_hits, 4);
	mpxkit_simt_result_free(r);

	r = two_loads(&plain, 128, "");
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 308, 0);
	CU_ASSERT_EQUAL(r->gld_transactions, 64);
	CU_ASSERT_EQUAL(r->l1_misses, 32);
	mpxkit_simt_result_free(r);

	pascal.request_bytes = 32;
	pascal.tags = 1;
	r = two_loads(&pascal, 128, "");
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 332, 0);
	mpxkit_simt_result_free(r);
	/* stride 4 under Pascal's 8-lane requests: 4 requests, 1 line: 3 cycles more */
	r = two_loads(&pascal, 4, "");
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 304, 0);
	mpxkit_simt_result_free(r);
}

/* ---- divergence ----------------------------------------------------------------------------- */

/*
 * if (lane < 16) { two adds } else { two adds }, compiled as a predicated
 * branch: ISETP, BRA taken by lanes 0-15, the then-path (16-31 masked), the
 * BRA that jumps over the else-path, the else-path (0-15 masked), SYNC, an
 * add for all.  Nine independent instructions issue one per cycle: 9.  Lanes
 * masked: 16 at each of the six instructions between ISETP and SYNC = 96 of
 * 9 x 32 slots (a third).  Charged to the branches: 16 x 3 to the first BRA
 * (itself and the then-path), 16 x 3 to the second.
 */
static void test_divergent_if_else(void)
{
	const char *body = "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 9\n"
			   "0000 ffffffff 0 ISETP.GE.AND 1 R0 0\n"
			   "0008 0000ffff 0 BRA 0 0\n"
			   "0010 ffff0000 1 R2 IADD 1 R255 0\n"
			   "0018 ffff0000 1 R3 IADD 1 R255 0\n"
			   "0020 ffff0000 0 BRA 0 0\n"
			   "0028 0000ffff 1 R4 IADD 1 R255 0\n"
			   "0030 0000ffff 1 R5 IADD 1 R255 0\n"
			   "0038 ffffffff 0 SYNC 0 0\n"
			   "0040 ffffffff 1 R6 IADD 1 R255 0\n#END_TB\n";
	mpxkit_simt_result *r = run_body(&plain, 32, 1, body);
	uint64_t first = 0, second = 0;

	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 9, 0);
	CU_ASSERT_EQUAL(r->nop_lane_slots, 96);
	CU_ASSERT_EQUAL(r->thread_insts, 9 * 32 - 96);
	CU_ASSERT_EQUAL(r->entry_diverged_slots, 0);
	for (size_t i = 0; i < r->n_pcs; i++) {
		if (r->pcs[i].pc == 0x08)
			first = r->pcs[i].diverged_slots;
		if (r->pcs[i].pc == 0x20)
			second = r->pcs[i].diverged_slots;
	}
	CU_ASSERT_EQUAL(first, 48);
	CU_ASSERT_EQUAL(second, 48);
	CU_ASSERT_EQUAL(r->thread_class[MPXKIT_SIMT_CONTROL], 16 + 16 + 32);
	mpxkit_simt_result_free(r);
}

/* ---- shared memory bank conflicts ----------------------------------------------------------- */

/*
 * LDS R2 with lane i at 4 * s * i bytes, then an add on R2.  32 banks of 4
 * bytes: stride s words puts the lanes in gcd(s, 32)-way conflict (s = 1: 1,
 * 2: 2, 32: 32, 3: 1); all lanes on one word is a broadcast (1); 8-byte
 * accesses of consecutive lanes touch 64 words, 2 per bank.  The load takes
 * 5 + (ways - 1), the add issues then, the warp ends one cycle later:
 * 5 + ways.
 */
static void check_lds(unsigned width, long stride_bytes, unsigned ways)
{
	char body[512];
	mpxkit_simt_result *r;

	snprintf(body, sizeof body,
		 "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
		 "0000 ffffffff 1 R2 LDS.U.%u 1 R8 %u 1 0x0 %ld\n"
		 "0008 ffffffff 1 R4 IADD 1 R2 0\n#END_TB\n",
		 width * 8, width, stride_bytes);
	r = run_body(&plain, 32, 1, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 5.0 + ways, 0);
	CU_ASSERT_EQUAL(r->shared_load_transactions, ways);
	CU_ASSERT_EQUAL(r->inst_shared_loads, 1);
	if (r->active_cycles != 5.0 + ways)
		fprintf(stderr, "\n  width %u stride %ld: %g cycles\n", width, stride_bytes,
			r->active_cycles);
	mpxkit_simt_result_free(r);
}

static void test_bank_conflicts(void)
{
	check_lds(4, 4, 1);
	check_lds(4, 8, 2);
	check_lds(4, 12, 1);
	check_lds(4, 128, 32);
	check_lds(4, 64, 16);
	check_lds(4, 0, 1);
	check_lds(8, 8, 2);
	check_lds(16, 16, 4);
}

/* ---- warps, blocks and barriers ------------------------------------------------------------- */

static char *warps_body(unsigned blocks, unsigned warps, unsigned n)
{
	size_t cap = 256 + (size_t)blocks * warps * (64 + n * 40), len = 0;
	char *s = malloc(cap);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (unsigned b = 0; b < blocks; b++) {
		len +=
		    (size_t)snprintf(s + len, cap - len, "#BEGIN_TB\nthread block = %u,0,0\n", b);
		for (unsigned w = 0; w < warps; w++) {
			len +=
			    (size_t)snprintf(s + len, cap - len, "warp = %u\ninsts = %u\n", w, n);
			for (unsigned i = 0; i < n; i++)
				len += (size_t)snprintf(s + len, cap - len,
							"%04x ffffffff 1 R%u IADD 1 R255 0\n",
							8 * i, i % 200 + 2);
		}
		len += (size_t)snprintf(s + len, cap - len, "#END_TB\n");
	}
	return s;
}

/*
 * Two warps of n independent adds on one scheduler: each alone takes n
 * cycles (its latency bound), together they must share the issue slots:
 * 2n.  With two schedulers each warp has its own: n.
 */
static void test_issue_bound(void)
{
	const unsigned n = 30;
	char *body = warps_body(1, 2, n);
	gpu_opts two = plain;
	mpxkit_simt_result *r = run_body(&plain, 64, 1, body);

	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 2 * n, 0);
	CU_ASSERT_EQUAL(r->bound, MPXKIT_SIMT_BOUND_ISSUE);
	mpxkit_simt_result_free(r);
	two.schedulers = 2;
	r = run_body(&two, 64, 1, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, n, 0);
	CU_ASSERT_EQUAL(r->bound, MPXKIT_SIMT_BOUND_LATENCY);
	mpxkit_simt_result_free(r);
	free(body);
}

/*
 * Blocks of one warp of a dependent chain (4(n-1) + 1 cycles each, the
 * latency bound).  On one SM with room for one block, three blocks run one
 * after another: 3 x (4(n-1) + 1).  With room for four they overlap and the
 * issue bound (3n) is below the latency bound: 4(n-1) + 1.  Three SMs with
 * room for one each: the first wave puts block k on SM k: 4(n-1) + 1.
 */
static void test_block_scheduler(void)
{
	const unsigned n = 20;
	char *body = malloc(4096), *one = one_warp("ffffffff 1 R1 IADD 1 R1 0", n);
	gpu_opts o = plain;
	double t1 = 4.0 * (n - 1) + 1;
	mpxkit_simt_result *r;
	size_t len = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	for (unsigned b = 0; b < 3; b++) {
		char *p = strstr(one, "thread block = 0,0,0");
		len += (size_t)sprintf(body + len, "%.*sthread block = %u,0,0%s", (int)(p - one),
				       one, b, p + strlen("thread block = 0,0,0"));
	}
	o.max_blocks = 1;
	r = run_body(&o, 32, 3, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 3 * t1, 0);
	CU_ASSERT_EQUAL(r->occupancy, 1);
	mpxkit_simt_result_free(r);
	o.max_blocks = 4;
	r = run_body(&o, 32, 3, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, t1, 0);
	mpxkit_simt_result_free(r);
	o.max_blocks = 1;
	o.sms = 3;
	r = run_body(&o, 32, 3, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, t1, 0);
	CU_ASSERT_EQUAL(r->sms_active, 3);
	mpxkit_simt_result_free(r);
	free(one);
	free(body);
}

/*
 * A barrier: warp 0 runs a chain of 10 dependent adds (37 cycles to its
 * last issue at 36), warp 1 one add, both then BAR.SYNC and two dependent
 * adds.  Warp 0 reaches the barrier at 40 (after R1's last result at 40),
 * warp 1 at 1; the interval before the barrier lasts 40.  After it each
 * warp's add waits nothing, the second waits 4: 4 + 1 = 5 more, from the
 * barrier's issue: 40 + 1 (the barrier) + 4 + 1 = 46 for the block.  Two
 * schedulers, so issue does not bind.  Warp 1 waited 39 cycles at the
 * barrier: the synchronisation stall.
 */
static void test_barrier(void)
{
	char body[2048];
	size_t len;
	gpu_opts o = plain;
	mpxkit_simt_result *r;

	len = (size_t)sprintf(body, "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 13\n");
	for (unsigned i = 0; i < 10; i++)
		len += (size_t)sprintf(body + len, "%04x ffffffff 1 R1 IADD 1 R1 0\n", 8 * i);
	len += (size_t)sprintf(body + len, "0050 ffffffff 0 BAR.SYNC 1 R1 0\n"
					   "0058 ffffffff 1 R2 IADD 1 R255 0\n"
					   "0060 ffffffff 1 R2 IADD 1 R2 0\n"
					   "warp = 1\ninsts = 4\n"
					   "0000 ffffffff 1 R1 IADD 1 R255 0\n"
					   "0050 ffffffff 0 BAR.SYNC 0 0\n"
					   "0058 ffffffff 1 R2 IADD 1 R255 0\n"
					   "0060 ffffffff 1 R2 IADD 1 R2 0\n#END_TB\n");
	o.schedulers = 2;
	r = run_body(&o, 64, 1, body);
	CU_ASSERT_DOUBLE_EQUAL(r->active_cycles, 46, 0);
	mpxkit_simt_result_free(r);
}

/*
 * The model takes shortcuts for base-and-stride (mode 1) accesses; the same
 * addresses listed one by one (mode 0) must give the same cycles,
 * transactions and wavefronts, on random strides, widths and masks.
 */
static void test_stride_shortcuts(void)
{
	static const char *const ops[] = {"LDG.E", "STG.E", "LDS", "STS", "LD.E"};
	static const unsigned widths[] = {1, 2, 4, 8, 16};
	uint64_t seed = 0x2545F4914F6CDD1Dull;
	char *a = malloc(8192), *b = malloc(8192);

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (int trial = 0; trial < 300; trial++) {
		uint64_t r = (uint64_t)(cutest_urand(&seed) * 1e9 + 2e9);
		const char *op = ops[r % 5];
		unsigned width = widths[(r >> 8) % 5], first = (unsigned)(r >> 12) % 32;
		unsigned lanes = 1 + (unsigned)(r >> 20) % (32 - first);
		long stride = (long)((r >> 28) % 97) - 48;
		uint64_t base =
		    (r >> 4) % 2 ? 0x7f0000000200ull + 4096 : 0x10000 + ((r >> 36) % 512);
		uint32_t mask = (lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1)) << first;
		size_t la, lb;
		mpxkit_simt_result *ra, *rb;

		if (base > 0x100000 && strncmp(op, "LD.", 3) != 0 && strcmp(op, "LDS") != 0 &&
		    strcmp(op, "STS") != 0)
			base = 0x20000; /* generic addresses only for the generic op */
		if (stride < 0 && (uint64_t)(-stride) * (lanes - 1) > base)
			stride = -stride;
		la = (size_t)sprintf(a,
				     "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
				     "0000 %08x 1 R2 %s 1 R8 %u 1 0x%llx %ld\n",
				     mask, op, width, (unsigned long long)base, stride);
		lb = (size_t)sprintf(b,
				     "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
				     "0000 %08x 1 R2 %s 1 R8 %u 0",
				     mask, op, width);
		for (unsigned i = 0; i < lanes; i++)
			lb += (size_t)sprintf(
			    b + lb, " 0x%llx",
			    (unsigned long long)(base + (uint64_t)((long)i * stride)));
		strcpy(a + la, "0008 ffffffff 1 R3 IADD 1 R2 0\n#END_TB\n");
		strcpy(b + lb, "\n0008 ffffffff 1 R3 IADD 1 R2 0\n#END_TB\n");
		ra = run_body(&plain, 32, 1, a);
		rb = run_body(&plain, 32, 1, b);
		CU_ASSERT_DOUBLE_EQUAL(ra->active_cycles, rb->active_cycles, 0);
		CU_ASSERT_EQUAL(ra->gld_transactions + ra->gst_transactions,
				rb->gld_transactions + rb->gst_transactions);
		CU_ASSERT_EQUAL(ra->shared_load_transactions + ra->shared_store_transactions,
				rb->shared_load_transactions + rb->shared_store_transactions);
		CU_ASSERT_EQUAL(ra->l1_misses + ra->l2_misses, rb->l1_misses + rb->l2_misses);
		if (ra->active_cycles != rb->active_cycles)
			fprintf(stderr, "\n  %s width %u mask %08x stride %ld base %llx: %g vs %g",
				op, width, mask, stride, (unsigned long long)base,
				ra->active_cycles, rb->active_cycles);
		mpxkit_simt_result_free(ra);
		mpxkit_simt_result_free(rb);
	}
	free(a);
	free(b);
}

static const cutest_case closed_forms[] = {
    {"all lanes masked", test_all_masked},
    {"ALU dependency chain", test_alu_chain},
    {"strided loads, known hits and misses", test_strided_loads},
    {"divergent if/else", test_divergent_if_else},
    {"shared-memory bank conflicts", test_bank_conflicts},
    {"stride shortcuts equal listed addresses", test_stride_shortcuts},
    {NULL, NULL},
};

static const cutest_case combining[] = {
    {"issue bound", test_issue_bound},
    {"block scheduler and occupancy", test_block_scheduler},
    {"barrier", test_barrier},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"simt closed forms", closed_forms, NULL, NULL},
	    {"simt warps and blocks", combining, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_simt_model", suites);
}

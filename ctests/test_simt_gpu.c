/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU descriptions: the shipped files, the canonical writer, every bad input, and the importer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutest.h"
#include "mpxkit/simt.h"

static const char *const units =
    "unit int latency=4 initiation=2\nunit fp16 latency=4 initiation=1\n"
    "unit fp32 latency=4 initiation=2\nunit fp64 latency=8 initiation=4\n"
    "unit sfu latency=20 initiation=8\nunit conv latency=20 initiation=8\n"
    "unit tensor latency=8 initiation=2\nunit branch latency=4 initiation=1\n"
    "unit ldst latency=20 initiation=4\nunit const latency=4 initiation=1\n"
    "unit tex latency=200 initiation=4\nunit sreg latency=4 initiation=1\n"
    "unit sync latency=4 initiation=1\n";

#define SCALARS                                                                                    \
	"mpxkit-gpu 1\nname Test GPU\nsms 2\nclock_mhz 1000.5\nwarp_size 32\nschedulers 4\n"       \
	"max_warps 64\nmax_blocks 32\nmax_threads_per_block 1024\nregisters 65536\n"               \
	"register_unit 256\nshared_per_sm 98304\nshared_per_block 49152\nshared_unit 256\n"        \
	"launch_cycles 5000\n"
#define CACHES                                                                                     \
	"l1 sets=64 ways=4 line=128 sector=32 latency=28 write=through global=cached "             \
	"request_bytes=128 tags_per_cycle=4\n"                                                     \
	"l2 sets=2048 ways=24 line=128 sector=32 latency=193 write=back bytes_per_cycle=2048\n"    \
	"icache sets=64 ways=16 line=128 prefetch=8\nshared_mem banks=32 width=4 latency=19\n"     \
	"dram latency=400 bytes_per_cycle=768.6\n"

static char *good_text(const char *extra)
{
	size_t n = strlen(SCALARS CACHES) + strlen(units) + strlen(extra) + 32;
	char *s = malloc(n);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	snprintf(s, n, "%s%s%sops builtin\n%s", SCALARS, CACHES, units, extra);
	return s;
}

static void test_parse_good(void)
{
	char *text = good_text("op IMAD fp32 integer\nop MYLD ldst compute_ld_st load:global\n");
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	const mpxkit_simt_op *op;

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_parse("t.gpu", text, strlen(text), &g, &d), 0);
	CU_ASSERT_STRING_EQUAL(g->name, "Test GPU");
	CU_ASSERT_EQUAL(g->sms, 2);
	CU_ASSERT_DOUBLE_EQUAL(g->clock_mhz, 1000.5, 0);
	CU_ASSERT_EQUAL(g->l1.sets, 64);
	CU_ASSERT_EQUAL(g->l1.latency, 28);
	CU_ASSERT_EQUAL(g->l1_global_cached, 1);
	CU_ASSERT_EQUAL(g->l2.write, MPXKIT_SIMT_WRITE_BACK);
	CU_ASSERT_EQUAL(g->icache.sector, 128);
	CU_ASSERT_EQUAL(g->icache_prefetch, 8);
	CU_ASSERT_DOUBLE_EQUAL(g->dram_bytes_per_cycle, 768.6, 0);
	CU_ASSERT_EQUAL(g->n_units, 13);
	/* the base opcode decides: LDG.E.CG is LDG */
	op = mpxkit_simt_gpu_op(g, "LDG.E.CG");
	CU_ASSERT_PTR_NOT_NULL_FATAL(op);
	CU_ASSERT_STRING_EQUAL(op->name, "LDG");
	CU_ASSERT_EQUAL(op->kind, MPXKIT_SIMT_KIND_LOAD);
	CU_ASSERT_EQUAL(op->space, MPXKIT_SIMT_GLOBAL);
	CU_ASSERT_STRING_EQUAL(g->units[op->unit].name, "ldst");
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_op(g, "XMAD.PSL.CBCC")->cls, MPXKIT_SIMT_INTEGER);
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_op(g, "S2R")->cls, MPXKIT_SIMT_MISC);
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_op(g, "EXIT")->cls, MPXKIT_SIMT_CONTROL);
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_op(g, "BAR.SYNC")->kind, MPXKIT_SIMT_KIND_BARRIER);
	/* op lines replace built-in entries and add new ones */
	CU_ASSERT_STRING_EQUAL(g->units[mpxkit_simt_gpu_op(g, "IMAD.WIDE")->unit].name, "fp32");
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_op(g, "MYLD.X")->kind, MPXKIT_SIMT_KIND_LOAD);
	CU_ASSERT_PTR_NULL(mpxkit_simt_gpu_op(g, "NOSUCH"));
	CU_ASSERT_STRING_EQUAL(mpxkit_simt_gpu_op(g, "LD.E.CG")->name, "LD"); /* not LDG's prefix */
	mpxkit_simt_gpu_free(g);
	free(text);
}

/* The canonical form parses back to the same description and prints the same again. */
static void test_round_trip(void)
{
	char *text = good_text("op IMAD fp32 integer\nop ATOMX ldst compute_ld_st "
			       "atomic:shared\nop BARX sync misc barrier\n");
	mpxkit_simt_gpu *a = NULL, *b = NULL;
	char *out1 = NULL, *out2 = NULL;
	size_t n1 = 0, n2 = 0;
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_parse("t.gpu", text, strlen(text), &a, NULL), 0);
	f = open_memstream(&out1, &n1);
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_write(a, f), 0);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_parse("out.gpu", out1, n1, &b, NULL), 0);
	f = open_memstream(&out2, &n2);
	CU_ASSERT_EQUAL(mpxkit_simt_gpu_write(b, f), 0);
	fclose(f);
	CU_ASSERT_EQUAL(n1, n2);
	CU_ASSERT_STRING_EQUAL(out1, out2);
	CU_ASSERT_EQUAL(a->n_ops, b->n_ops);
	CU_ASSERT_EQUAL(memcmp(a->ops, b->ops, a->n_ops * sizeof *a->ops), 0);
	/* only what differs from the built-in table is written */
	CU_ASSERT_PTR_NOT_NULL(strstr(out1, "op IMAD fp32 integer\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out1, "op ATOMX ldst compute_ld_st atomic:shared\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out1, "op BARX sync misc barrier\n"));
	CU_ASSERT_PTR_NULL(strstr(out1, "op LDG "));
	mpxkit_simt_gpu_free(a);
	mpxkit_simt_gpu_free(b);
	free(out1);
	free(out2);
	free(text);
}

static void expect_bad(const char *text, int code, const char *msg)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_simt_gpu_parse("bad.gpu", text, strlen(text), &g, &d);

	CU_ASSERT_EQUAL(rc, -code);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	if (rc != -code || strcmp(d.msg, msg) != 0)
		fprintf(stderr, "\n  got:  %d %s\n  want: %d %s\n", rc, d.msg, -code, msg);
	mpxkit_simt_gpu_free(g);
}

/* The good text with one line replaced (or, with no match, the extra line added at the end). */
static void expect_bad_edit(const char *from, const char *to, int code, const char *msg)
{
	char *good = good_text(""), *text, *at = strstr(good, from);
	size_t n = strlen(good) + strlen(to) + 2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	text = malloc(n);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	snprintf(text, n, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
	expect_bad(text, code, msg);
	free(text);
	free(good);
}

static void test_bad(void)
{
	expect_bad("", MPXKIT_EFORMAT, "bad.gpu: empty: no 'mpxkit-gpu 1' line");
	expect_bad("# only a comment\n", MPXKIT_EFORMAT, "bad.gpu: empty: no 'mpxkit-gpu 1' line");
	expect_bad("sms 4\n", MPXKIT_EFORMAT,
		   "bad.gpu:1: not a GPU description: 'mpxkit-gpu 1' expected first");
	expect_bad("mpxkit-gpu 2\n", MPXKIT_EVERSION,
		   "bad.gpu:1: GPU description version '2' is not supported (1)");
	expect_bad("mpxkit-gpu 1\nname x\n", MPXKIT_EFORMAT, "bad.gpu: key 'sms' missing");
	expect_bad_edit("sms 2\n", "sms 0\n", MPXKIT_ERANGE,
			"bad.gpu:3: sms 0: a whole number from 1 to 4096 expected");
	expect_bad_edit("sms 2\n", "sms 2\nsms 3\n", MPXKIT_EFORMAT, "bad.gpu:4: sms given twice");
	expect_bad_edit("sms 2\n", "sms 2 3\n", MPXKIT_EFORMAT,
			"bad.gpu:3: sms: one value expected");
	expect_bad_edit("sms 2\n", "sms -2\n", MPXKIT_ERANGE,
			"bad.gpu:3: sms -2: a whole number from 1 to 4096 expected");
	expect_bad_edit("clock_mhz 1000.5\n", "clock_mhz 1e3\n", MPXKIT_ERANGE,
			"bad.gpu:4: clock_mhz 1e3: a decimal above 0 and at most 100000 expected");
	expect_bad_edit("clock_mhz 1000.5\n", "clock_mhz nan\n", MPXKIT_ERANGE,
			"bad.gpu:4: clock_mhz nan: a decimal above 0 and at most 100000 expected");
	expect_bad_edit("warp_size 32\n", "warp_size 64\n", MPXKIT_ERANGE,
			"bad.gpu:5: warp_size 64: a whole number from 32 to 32 expected");
	expect_bad_edit("name Test GPU\n", "name \n", MPXKIT_EFORMAT,
			"bad.gpu:2: name: 1 to 63 characters expected");
	expect_bad_edit("l1 sets=64", "l1 sets=64 sets=3", MPXKIT_EFORMAT,
			"bad.gpu:16: l1: field 'sets' given twice");
	expect_bad_edit("l1 sets=64", "l1 sots=64", MPXKIT_EFORMAT,
			"bad.gpu:16: l1: unknown field 'sots'");
	expect_bad_edit("l1 sets=64", "l1 64", MPXKIT_EFORMAT,
			"bad.gpu:16: l1: field '64' is not name=value");
	expect_bad_edit(" tags_per_cycle=4", "", MPXKIT_EFORMAT,
			"bad.gpu:16: l1: field 'tags_per_cycle' missing");
	expect_bad_edit("write=through", "write=around", MPXKIT_EFORMAT,
			"bad.gpu:16: l1 write=around: 'through' or 'back' expected");
	expect_bad_edit("global=cached", "global=maybe", MPXKIT_EFORMAT,
			"bad.gpu:16: l1 global=maybe: 'cached' or 'uncached' expected");
	expect_bad_edit("l1 sets=64 ways=4 line=128", "l1 sets=64 ways=4 line=96", MPXKIT_ERANGE,
			"bad.gpu: l1: line must be a power of two from 32 to 1024");
	expect_bad_edit("l1 sets=64 ways=4 line=128 sector=32",
			"l1 sets=64 ways=4 line=128 sector=16", MPXKIT_ERANGE,
			"bad.gpu: l1: sector must be a power of two from 32 bytes up to the line");
	expect_bad_edit("l1 sets=64 ways=4 line=128", "l1 sets=64 ways=4 line=256", MPXKIT_ERANGE,
			"bad.gpu: l1 and l2 must have the same line size");
	expect_bad_edit("l2 sets=2048 ways=24", "l2 sets=16777216 ways=1024", MPXKIT_ERANGE,
			"bad.gpu: l2: larger than 256 MiB");
	expect_bad_edit(
	    "bytes_per_cycle=2048", "bytes_per_cycle=0", MPXKIT_ERANGE,
	    "bad.gpu:17: l2 bytes_per_cycle=0: a decimal above 0 and at most 10^9 expected");
	expect_bad_edit("banks=32", "banks=24", MPXKIT_ERANGE,
			"bad.gpu: shared_mem banks must be a power of two up to 64, width 4 or 8, "
			"latency at most 100000");
	expect_bad_edit("shared_per_block 49152", "shared_per_block 200000", MPXKIT_ERANGE,
			"bad.gpu: shared_per_sm at most 2^30, shared_per_block at most "
			"shared_per_sm, shared_unit 1 to 2^20");
	expect_bad_edit("unit int latency=4 initiation=2", "unit int latency=4", MPXKIT_EFORMAT,
			"bad.gpu:21: unit: 'unit NAME latency=L initiation=I' expected");
	expect_bad_edit("unit int latency=4 initiation=2", "unit Int latency=4 initiation=2",
			MPXKIT_EFORMAT, "bad.gpu:21: unit name 'Int': 1 to 15 of a-z, 0-9, _");
	expect_bad_edit(
	    "unit int latency=4 initiation=2", "unit int latency=0 initiation=2", MPXKIT_ERANGE,
	    "bad.gpu:21: unit int: latency=0: a whole number from 1 to 100000 expected");
	expect_bad_edit("unit fp16 latency=4 initiation=1", "unit int latency=4 initiation=1",
			MPXKIT_EFORMAT, "bad.gpu:22: unit int declared twice");
	expect_bad_edit("unit sync latency=4 initiation=1\n", "", MPXKIT_EFORMAT,
			"bad.gpu:33: 'ops builtin' needs a 'unit sync' line");
	expect_bad_edit(
	    "ops builtin\n", "ops builtin\nop FOO nounit misc\n", MPXKIT_EFORMAT,
	    "bad.gpu:35: op FOO names unit 'nounit', which no earlier unit line declares");
	expect_bad_edit("ops builtin\n", "ops builtin\nop FOO int fancy\n", MPXKIT_EFORMAT,
			"bad.gpu:35: op FOO: unknown class 'fancy' (fp_32, integer, control, ...)");
	expect_bad_edit("ops builtin\n", "ops builtin\nop FOO int misc load:texture\n",
			MPXKIT_EFORMAT,
			"bad.gpu:35: op FOO: kind 'load:texture': load:, store: or atomic: with "
			"global, shared, local or generic, or barrier expected");
	expect_bad_edit("ops builtin\n", "ops builtin\nop foo int misc\n", MPXKIT_EFORMAT,
			"bad.gpu:35: op 'foo': a base opcode of 1 to 23 of A-Z, 0-9, _ expected");
	expect_bad_edit("ops builtin\n", "op FOO int misc\nops builtin\n", MPXKIT_EFORMAT,
			"bad.gpu:35: 'ops builtin' must come before any op line");
	expect_bad_edit("ops builtin\n", "", MPXKIT_EFORMAT,
			"bad.gpu: no op lines and no 'ops builtin'");
	expect_bad_edit("sms 2\n", "sms 2\nsize 5\n", MPXKIT_EFORMAT,
			"bad.gpu:4: unknown key 'size'");
	expect_bad_edit("sms 2\n", "sms\t2\x01\n", MPXKIT_EFORMAT, "bad.gpu:3: control character");
	{
		static const char nul[] = "mpxkit-gpu 1\nna\0me x\n";
		mpxkit_simt_gpu *g = NULL;
		mpxkit_diag d = {0};
		CU_ASSERT_EQUAL(mpxkit_simt_gpu_parse("bad.gpu", nul, sizeof nul - 1, &g, &d),
				-MPXKIT_EFORMAT);
		CU_ASSERT_STRING_EQUAL(d.msg, "bad.gpu:2: NUL byte: not a text file");
	}
}

/* The three shipped descriptions parse (from the source tree, as make check sets MPXKIT_DATADIR).
 */
static void test_shipped(void)
{
	static const char *const names[] = {"gtx1080", "qv100", "rtx3070"};
	mpxkit_diag d = {0};

	for (size_t i = 0; i < 3; i++) {
		mpxkit_simt_gpu *g = NULL;
		int rc = mpxkit_simt_gpu_load(names[i], &g, &d);
		CU_ASSERT_EQUAL(rc, 0);
		if (rc < 0)
			fprintf(stderr, "\n  %s\n", d.msg);
		CU_ASSERT(g == NULL || g->ops_builtin);
		mpxkit_simt_gpu_free(g);
	}
	CU_ASSERT_STRING_EQUAL(mpxkit_simt_gpu_default_for(61), "gtx1080");
	CU_ASSERT_STRING_EQUAL(mpxkit_simt_gpu_default_for(70), "qv100");
	CU_ASSERT_STRING_EQUAL(mpxkit_simt_gpu_default_for(86), "rtx3070");
	CU_ASSERT_PTR_NULL(mpxkit_simt_gpu_default_for(35));
	{
		mpxkit_simt_gpu *g = NULL;
		CU_ASSERT_EQUAL(mpxkit_simt_gpu_load("no such", &g, &d), -MPXKIT_ENOENT);
		CU_ASSERT_STRING_EQUAL(
		    d.msg, "GPU 'no such': neither a file (give a path) nor a shipped name "
			   "(gtx1080, qv100, rtx3070)");
	}
}

/*
 * The importer on a configuration written here, its values worked out by
 * hand from the mapping in doc/simt.md: comments after values, a later line
 * replacing an earlier one, a quoted value over two lines.
 */
static const char *const config =
    "# a GPGPU-Sim configuration\n"
    "-gpgpu_n_clusters 10 # ten clusters\n-gpgpu_n_cores_per_cluster 2\n"
    "-gpgpu_clock_domains 1000.0:1000.0:1500.0:2000.0\n-gpgpu_shader_core_pipeline 1536:32\n"
    "-gpgpu_num_sched_per_core 2\n-gpgpu_shader_cta 16\n-gpgpu_shader_registers 65536\n"
    "-gpgpu_shmem_size 65536\n-gpgpu_kernel_launch_latency 100\n"
    "-gpgpu_cache:dl1  S:4:128:64,L:T:m:L:L,A:512:8,16:0,32\n-gpgpu_l1_latency 20\n"
    "-gpgpu_l1_latency 30\n-gpgpu_gmem_skip_L1D 1\n-gpgpu_coalesce_arch 61\n"
    "-gpgpu_cache:dl2 N:32:128:16,L:B:m:L:P,A:192:4,32:0,32\n-gpgpu_n_mem 4\n"
    "-gpgpu_n_sub_partition_per_mchannel 2\n-gpgpu_l2_rop_latency 100\n-dram_latency 50\n"
    "-gpgpu_dram_buswidth 4\n-gpgpu_n_mem_per_ctrlr 1\n-dram_data_command_freq_ratio 4\n"
    "-gpgpu_dram_timing_opt \"nbk=16:CCD=2:\n   CL=12:WL=4\"\n"
    "-gpgpu_perfect_inst_const_cache 0\n-gpgpu_cache:il1 N:8:128:4,L:R:f:N:L,S:2:48,4\n"
    "-gpgpu_shmem_num_banks 32\n-gpgpu_smem_latency 24\n";
static const char *const trace_config =
    "-trace_opcode_latency_initiation_int 6,1\n-trace_opcode_latency_initiation_sp 4,1\n"
    "-trace_opcode_latency_initiation_sp 5,2\n-trace_opcode_latency_initiation_dp 8,8\n"
    "-trace_opcode_latency_initiation_sfu 14,4\n-specialized_unit_1 1,4,4,4,4,BRA\n"
    "-trace_opcode_latency_initiation_spec_op_1 3,3\n";

static void test_import(void)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_simt_gpu_import_accelsim_text("cfg/TEST/gpgpusim.config", config,
						      strlen(config), "cfg/TEST/trace.config",
						      trace_config, strlen(trace_config), &g, &d);

	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(g->name, "TEST");
	CU_ASSERT_EQUAL(g->sms, 20);
	CU_ASSERT_DOUBLE_EQUAL(g->clock_mhz, 1000, 0);
	CU_ASSERT_EQUAL(g->max_warps, 48);
	CU_ASSERT_EQUAL(g->schedulers, 2);
	CU_ASSERT_EQUAL(g->max_blocks, 16);
	CU_ASSERT_EQUAL(g->shared_per_block, 65536);
	CU_ASSERT_EQUAL(g->launch_cycles, 100);
	CU_ASSERT_EQUAL(g->l1.sets, 4);
	CU_ASSERT_EQUAL(g->l1.ways, 64);
	CU_ASSERT_EQUAL(g->l1.sector, 32);
	CU_ASSERT_EQUAL(g->l1.latency, 30);
	CU_ASSERT_EQUAL(g->l1.write, MPXKIT_SIMT_WRITE_THROUGH);
	CU_ASSERT_EQUAL(g->l1_global_cached, 0);
	CU_ASSERT_EQUAL(g->l1_request_bytes, 32);
	CU_ASSERT_EQUAL(g->l1_tags_per_cycle, 1);
	/* 32 sets per slice x 4 channels x 2 sub-partitions; not sectored */
	CU_ASSERT_EQUAL(g->l2.sets, 256);
	CU_ASSERT_EQUAL(g->l2.sector, 128);
	CU_ASSERT_EQUAL(g->l2.write, MPXKIT_SIMT_WRITE_BACK);
	CU_ASSERT_EQUAL(g->l2.latency, 130);
	CU_ASSERT_DOUBLE_EQUAL(g->l2_bytes_per_cycle, 32.0 * 8 * 1.5, 1e-9);
	CU_ASSERT_EQUAL(g->dram_latency, 180);
	/* 4 channels x 1 chip x 4 bytes x ratio 4 x 2000 MHz / 1000 MHz */
	CU_ASSERT_DOUBLE_EQUAL(g->dram_bytes_per_cycle, 128, 1e-9);
	CU_ASSERT_EQUAL(g->icache.sets, 8);
	CU_ASSERT_EQUAL(g->icache.ways, 4);
	CU_ASSERT_EQUAL(g->shared_latency, 24);
	CU_ASSERT_EQUAL(g->units[0].latency, 6);
	CU_ASSERT_EQUAL(g->units[2].latency, 5); /* fp32: the later sp line */
	CU_ASSERT_EQUAL(g->units[2].initiation, 2);
	CU_ASSERT_STRING_EQUAL(g->units[7].name, "branch");
	CU_ASSERT_EQUAL(g->units[7].latency, 3);
	CU_ASSERT(g->ops_builtin);
	mpxkit_simt_gpu_free(g);
}

static void import_bad(const char *cfg, const char *tcfg, int code, const char *msg)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_simt_gpu_import_accelsim_text("g.config", cfg, strlen(cfg), "t.config",
						      tcfg, strlen(tcfg), &g, &d);

	CU_ASSERT_EQUAL(rc, -code);
	CU_ASSERT_STRING_EQUAL(d.msg, msg);
	if (rc != -code || strcmp(d.msg, msg) != 0)
		fprintf(stderr, "\n  got:  %d %s\n  want: %d %s\n", rc, d.msg, -code, msg);
	mpxkit_simt_gpu_free(g);
}

static void test_import_bad(void)
{
	char *c = malloc(strlen(config) + 256);

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	import_bad("", trace_config, MPXKIT_EFORMAT, "g.config: option -gpgpu_n_clusters missing");
	import_bad("gpgpu_n_clusters 4\n", trace_config, MPXKIT_EFORMAT,
		   "g.config:1: '-option value' expected, found 'gpgpu_n_clusters'");
	import_bad("-gpgpu_n_clusters\n", trace_config, MPXKIT_EFORMAT,
		   "g.config:1: option -gpgpu_n_clusters has no value");
	import_bad("-x \"open\n", trace_config, MPXKIT_EFORMAT, "g.config:1: quote never closed");
	import_bad("-gpgpu_n_clusters four\n", trace_config, MPXKIT_EFORMAT,
		   "g.config:1: -gpgpu_n_clusters 'four': a whole number expected");
	sprintf(c, "%s-gpgpu_cache:dl1 X:4:128:64\n", config);
	import_bad(c, trace_config, MPXKIT_EFORMAT,
		   "g.config:30: -gpgpu_cache:dl1 'X:4:128:64': 'S:sets:line:ways,...' or "
		   "'N:sets:line:ways,...' expected");
	sprintf(c, "%s-gpgpu_shader_core_pipeline 2048:64\n", config);
	import_bad(c, trace_config, MPXKIT_EFORMAT,
		   "g.config:30: -gpgpu_shader_core_pipeline '2048:64': 'threads:32' expected");
	import_bad(
	    config, "-trace_opcode_latency_initiation_int 6\n", MPXKIT_EFORMAT,
	    "t.config:1: -trace_opcode_latency_initiation_int '6': 'latency,initiation' expected");
	import_bad(config, "", MPXKIT_EFORMAT,
		   "t.config: option -trace_opcode_latency_initiation_int missing");
	free(c);
}

static const cutest_case cases[] = {
    {"a good description", test_parse_good},
    {"canonical round trip", test_round_trip},
    {"every bad input", test_bad},
    {"shipped descriptions", test_shipped},
    {"Accel-Sim import", test_import},
    {"Accel-Sim import, bad input", test_import_bad},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"simt gpu", cases, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_simt_gpu", suites);
}

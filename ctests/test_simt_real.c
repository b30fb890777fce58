/* SPDX-License-Identifier: BSD-3-Clause */
/* The SIMT model on the real GTX 1080 traces, against the profiler's counts; SKIP without the data.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cutest.h"
#include "mpxkit/simt.h"

static char data[2048];

static const char *path(const char *rel)
{
	static char buf[4][2400];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", data, rel);
	return buf[k];
}

/* Runs every command of a trace directory on the GPU; returns the last kernel's result. */
static mpxkit_simt_result *run_dir(const mpxkit_simt_gpu *g, const char *dir)
{
	mpxkit_simt_commands *c = NULL;
	mpxkit_simt_sim *sim = NULL;
	mpxkit_simt_result *r = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_commands_read(dir, &c, &d), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_sim_new(g, &sim, &d), 0);
	for (size_t i = 0; i < c->n; i++) {
		mpxkit_simt_trace *t = NULL;
		if (!c->cmd[i].is_kernel) {
			CU_ASSERT_EQUAL(
			    mpxkit_simt_sim_memcpy(sim, c->cmd[i].addr, c->cmd[i].size, &d), 0);
			continue;
		}
		mpxkit_simt_result_free(r);
		r = NULL;
		if (mpxkit_simt_trace_open(c->cmd[i].path, &t, &d) < 0 ||
		    mpxkit_simt_sim_kernel(sim, t, &r, &d) < 0)
			fprintf(stderr, "\n  %s\n", d.msg);
		mpxkit_simt_trace_close(t);
	}
	mpxkit_simt_sim_free(sim);
	mpxkit_simt_commands_free(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	return r;
}

static double counter(const mpxkit_simt_result *r, const char *name)
{
	mpxkit_simt_counter c[64];
	size_t n = mpxkit_simt_counters(r, c, 64);

	for (size_t i = 0; i < n && i < 64; i++)
		if (strcmp(c[i].name, name) == 0)
			return c[i].value;
	CU_FAIL("no such counter");
	return -1;
}

/* ---- the measured values, read from the data's own files ------------------------------------ */

/* Splits a CSV line with quoted fields in place; the field count. */
static int csv_split(char *s, char **f, int max)
{
	int n = 0;

	while (*s && n < max) {
		if (*s == '"') {
			f[n++] = ++s;
			while (*s && *s != '"')
				s++;
			if (*s)
				*s++ = '\0';
		} else {
			f[n++] = s;
			while (*s && *s != ',')
				s++;
		}
		if (*s == ',')
			*s++ = '\0';
	}
	return n;
}

/* A profiler's CSV: a header line (the first that starts with head), a units line, values. */
struct profile_csv {
	const char *file, *head;
	char header[65536], units[65536], values[65536];
	char *hf[512], *vf[512];
	int nh, nv, loaded;
};

/* The first run's value of a metric of a profiler's CSV. */
static double profile_metric(struct profile_csv *p, const char *name)
{
	if (!p->loaded) {
		FILE *f = fopen(path(p->file), "r");
		size_t head_len = strlen(p->head);

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		while (fgets(p->header, sizeof p->header, f) &&
		       strncmp(p->header, p->head, head_len) != 0)
			;
		CU_ASSERT_FATAL(fgets(p->units, sizeof p->units, f) != NULL);
		CU_ASSERT_FATAL(fgets(p->values, sizeof p->values, f) != NULL);
		fclose(f);
		p->header[strcspn(p->header, "\r\n")] = p->values[strcspn(p->values, "\r\n")] = '\0';
		p->nh = csv_split(p->header, p->hf, 512);
		p->nv = csv_split(p->values, p->vf, 512);
		p->loaded = 1;
	}
	for (int i = 0; i < p->nh && i < p->nv; i++)
		if (strcmp(p->hf[i], name) == 0)
			return strtod(p->vf[i], NULL);
	CU_FAIL("metric not in the profiler's file");
	return -1;
}

/* nvprof --metrics all (hw_nvprof_metrics.csv.log). */
static double nvprof_metric(const char *name)
{
	static struct profile_csv nvprof = {
	    .file = "gtx1080/vectoradd-100-32/hw_nvprof_metrics.csv.log", .head = "\"Device\""};

	return profile_metric(&nvprof, name);
}

/* Nsight Compute on the same kernel, a build with L1 caching of global loads (hw_nsight_metrics.csv). */
static double ncu_metric(const char *name)
{
	static struct profile_csv ncu = {.file = "gtx1080/vectoradd-100-32/hw_nsight_metrics.csv",
					 .head = "\"ID\""};

	return profile_metric(&ncu, name);
}

/* tracer_stats.csv's total_insts: the tracer's own count of warp instructions. */
static double tracer_insts(const char *dir)
{
	char rel[256], line[1024], *f[16];
	FILE *fp;

	snprintf(rel, sizeof rel, "gtx1080/%s/tracer_stats.csv", dir);
	fp = fopen(path(rel), "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_FATAL(fgets(line, sizeof line, fp) != NULL); /* header */
	CU_ASSERT_FATAL(fgets(line, sizeof line, fp) != NULL);
	fclose(fp);
	CU_ASSERT_FATAL(csv_split(line, f, 16) >= 11);
	return strtod(f[10], NULL);
}

/* A "name = value" line of Accel-Sim's log. */
static double accelsim_stat(const char *name)
{
	FILE *f = fopen(path("gtx1080/vectoradd-100-32/accelsim_sim_gtx1080.log"), "r");
	char line[4096];
	size_t n = strlen(name);
	double v = -1;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, name, n) == 0 && strncmp(line + n, " = ", 3) == 0)
			v = strtod(line + n + 3, NULL);
	fclose(f);
	return v;
}

/*
 * An independent count of a trace's instruction lines, lanes and memory
 * lines, by splitting on blanks (not the library's reader): line = PC MASK
 * NDST DST.. OP NSRC SRC.. WIDTH ...
 */
static void scan(const char *file, double *warp, double *thread, double *mem)
{
	FILE *f = fopen(file, "r");
	char line[65536];

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	*warp = *thread = *mem = 0;
	while (fgets(line, sizeof line, f)) {
		char *tok[64], *save = NULL;
		int n = 0;
		for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 64;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[n++] = t;
		if (n < 6 || !isxdigit((unsigned char)tok[0][0]) || strchr(tok[0], '=') ||
		    tok[0][0] == '#')
			continue;
		{
			int nd = atoi(tok[2]), ns = atoi(tok[4 + nd]);
			(*warp)++;
			*thread += __builtin_popcount((unsigned)strtoul(tok[1], NULL, 16));
			if (atoi(tok[5 + nd + ns]) != 0)
				(*mem)++;
		}
	}
	fclose(f);
}

/* The breakdown's parts add up to the cycles. */
static void check_parts(const mpxkit_simt_result *r)
{
	double sum = 0;
	for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++) {
		CU_ASSERT(r->parts[p] >= 0);
		sum += r->parts[p];
	}
	CU_ASSERT_DOUBLE_EQUAL(sum, r->cycles, 1e-6 * r->cycles);
}

static void report(const char *what, const mpxkit_simt_result *r)
{
	printf("\n    %s: %.0f cycles (%.0f active, bound %s), IPC %.3f ", what, r->cycles,
	       r->active_cycles, mpxkit_simt_bound_name(r->bound), r->ipc);
}

/* ---- vecadd --------------------------------------------------------------------------------- */

static void test_vecadd_counts(void)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	mpxkit_simt_result *r;
	double warp, thread, mem;
	static const char *const same[] = {
	    "inst_executed",
	    "inst_fp_32",
	    "inst_fp_64",
	    "inst_integer",
	    "inst_bit_convert",
	    "inst_control",
	    "inst_compute_ld_st",
	    "inst_misc",
	    "inst_inter_thread_communication",
	    "inst_executed_global_loads",
	    "inst_executed_global_stores",
	    "inst_executed_shared_loads",
	    "inst_executed_shared_stores",
	    "inst_executed_local_loads",
	    "inst_executed_local_stores",
	    "gst_transactions",
	    "l2_tex_read_transactions",
	    "l2_tex_write_transactions",
	    "shared_load_transactions",
	    "shared_store_transactions",
	    "local_load_transactions",
	    "local_store_transactions",
	};

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_load("gtx1080", &g, &d), 0);
	r = run_dir(g, path("gtx1080/vectoradd-100-32"));
	scan(path("gtx1080/vectoradd-100-32/kernel-1.traceg"), &warp, &thread, &mem);
	CU_ASSERT_EQUAL(r->warp_insts, (uint64_t)warp);
	CU_ASSERT_EQUAL(r->thread_insts, (uint64_t)thread);
	CU_ASSERT_EQUAL(r->warp_insts, (uint64_t)tracer_insts("vectoradd-100-32"));
	CU_ASSERT_EQUAL(r->thread_insts, (uint64_t)accelsim_stat("gpu_sim_insn"));
	CU_ASSERT_EQUAL(r->inst_global_loads + r->inst_global_stores, (uint64_t)mem);
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		double want = nvprof_metric(same[i]), got = counter(r, same[i]);
		CU_ASSERT_DOUBLE_EQUAL(got, want, 0);
		if (got != want)
			fprintf(stderr, "\n  %s: %g, nvprof %g", same[i], got, want);
	}
	/* nvprof prints percentages with six decimals */
	CU_ASSERT_DOUBLE_EQUAL(counter(r, "warp_nonpred_execution_efficiency"),
			       nvprof_metric("warp_nonpred_execution_efficiency"), 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(counter(r, "global_hit_rate"), nvprof_metric("global_hit_rate"), 0);
	/*
	 * gld_transactions: our 32-byte sectors of global loads are the sectors
	 * L2 served them (nvprof's l2_tex_read_transactions); nvprof's own
	 * gld_transactions counts otherwise on Pascal (doc/simt.md).
	 */
	CU_ASSERT_DOUBLE_EQUAL(counter(r, "gld_transactions"),
			       nvprof_metric("l2_tex_read_transactions"), 0);
	/*
	 * Nsight Compute counts sectors as we do: the global loads' unique sector
	 * requests to L1/tex, and the stores' requests.
	 */
	CU_ASSERT_DOUBLE_EQUAL(counter(r, "gld_transactions"),
			       ncu_metric("tex__global_ld_unique_sector_requests"), 0);
	CU_ASSERT_DOUBLE_EQUAL(counter(r, "gst_transactions"),
			       ncu_metric("tex__texin_requests_global_st"), 0);
	CU_ASSERT_DOUBLE_EQUAL((double)r->warp_insts, ncu_metric("smsp__inst_executed_sum"), 0);
	CU_ASSERT_DOUBLE_EQUAL((double)r->inst_global_loads,
			       ncu_metric("sass__inst_executed_global_loads"), 0);
	CU_ASSERT_DOUBLE_EQUAL((double)r->inst_global_stores,
			       ncu_metric("sass__inst_executed_global_stores"), 0);
	check_parts(r);
	report("vecadd on gtx1080.gpu", r);
	printf("(nvprof: IPC %.3f, so %.0f active cycles; Accel-Sim %.0f cycles) ",
	       nvprof_metric("ipc"), nvprof_metric("inst_executed") / nvprof_metric("ipc"),
	       accelsim_stat("gpu_sim_cycle"));
	mpxkit_simt_result_free(r);
	mpxkit_simt_gpu_free(g);
}

/* ---- matrixmul ------------------------------------------------------------------------------ */

static void test_matrixmul_counts(void)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	mpxkit_simt_result *r;
	double warp, thread, mem;

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_load("gtx1080", &g, &d), 0);
	r = run_dir(g, path("gtx1080/matrixmul-32-32"));
	scan(path("gtx1080/matrixmul-32-32/kernel-1.traceg"), &warp, &thread, &mem);
	CU_ASSERT_EQUAL(r->warp_insts, (uint64_t)tracer_insts("matrixmul-32-32"));
	CU_ASSERT_EQUAL(r->warp_insts, (uint64_t)warp);
	CU_ASSERT_EQUAL(r->thread_insts, (uint64_t)thread);
	CU_ASSERT_EQUAL(r->inst_global_loads + r->inst_global_stores + r->inst_shared_loads +
			    r->inst_shared_stores,
			(uint64_t)mem);
	check_parts(r);
	report("matrixmul on gtx1080.gpu", r);
	mpxkit_simt_result_free(r);
	mpxkit_simt_gpu_free(g);
}

/* ---- Accel-Sim's configurations ------------------------------------------------------------- */

/* Each expected value is worked out by hand from the file, as the comment shows. */
static void test_import_real(void)
{
	mpxkit_simt_gpu *g = NULL;
	mpxkit_diag d = {0};
	mpxkit_simt_result *r;

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_import_accelsim(path("configs/SM7_QV100"), &g, &d),
			      0);
	CU_ASSERT_EQUAL(g->sms, 80); /* 80 clusters x 1 core */
	CU_ASSERT_DOUBLE_EQUAL(g->clock_mhz, 1132, 0);
	CU_ASSERT_EQUAL(g->max_warps, 64); /* 2048:32 */
	CU_ASSERT_EQUAL(g->l2.sets, 2048); /* S:32:128:24 x 32 channels x 2 */
	CU_ASSERT_EQUAL(g->l2.ways, 24);
	CU_ASSERT_EQUAL(g->l2.latency, 180);   /* l1 20 + rop 160 */
	CU_ASSERT_EQUAL(g->dram_latency, 280); /* + dram_latency 100 */
	CU_ASSERT_DOUBLE_EQUAL(g->dram_bytes_per_cycle, 32.0 * 16 * 2 * 850 / 1132, 1e-9);
	CU_ASSERT_EQUAL(g->icache.sets, 0);	   /* gpgpu_perfect_inst_const_cache 1 */
	CU_ASSERT_EQUAL(g->l1_request_bytes, 128); /* coalesce arch 70 */
	CU_ASSERT_EQUAL(g->units[0].latency, 2);   /* int 2,2 */
	mpxkit_simt_gpu_free(g);

	CU_ASSERT_EQUAL_FATAL(mpxkit_simt_gpu_import_accelsim(path("configs/SM86_RTX3070"), &g, &d),
			      0);
	CU_ASSERT_EQUAL(g->sms, 46);
	CU_ASSERT_EQUAL(g->max_warps, 48); /* 1536:32 */
	CU_ASSERT_EQUAL(g->l2.sets, 2048); /* S:64:128:16 x 16 x 2 */
	CU_ASSERT_EQUAL(g->shared_per_block, 49152);
	CU_ASSERT_DOUBLE_EQUAL(g->dram_bytes_per_cycle, 16.0 * 2 * 4 * 3500.5 / 1132, 1e-9);
	mpxkit_simt_gpu_free(g);

	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_simt_gpu_import_accelsim(path("configs/gtx1080_microgpusim"), &g, &d), 0);
	CU_ASSERT_EQUAL(g->sms, 28);		 /* "-gpgpu_n_clusters 28 # 20 for GTX1080" */
	CU_ASSERT_EQUAL(g->units[0].latency, 6); /* the later int line: 6,1 */
	CU_ASSERT_EQUAL(g->l2.latency, 83 + 231);
	CU_ASSERT_EQUAL(g->l1_global_cached, 1);  /* gmem_skip_L1D 0 */
	CU_ASSERT_EQUAL(g->l1_request_bytes, 32); /* coalesce arch 61 */
	CU_ASSERT_EQUAL(g->icache_prefetch, 0);
	/* the imported GPU runs the traces too */
	r = run_dir(g, path("gtx1080/vectoradd-100-32"));
	CU_ASSERT_EQUAL(r->warp_insts, (uint64_t)tracer_insts("vectoradd-100-32"));
	check_parts(r);
	report("vecadd on the imported GTX 1080 config", r);
	mpxkit_simt_result_free(r);
	mpxkit_simt_gpu_free(g);
}

static const cutest_case cases[] = {
    {"vecadd against nvprof", test_vecadd_counts},
    {"matrixmul", test_matrixmul_counts},
    {"Accel-Sim's configurations", test_import_real},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"simt on real traces", cases, NULL, NULL},
	    {NULL, NULL, NULL, NULL},
	};
	struct stat st;

	snprintf(data, sizeof data, "%s/data/simt", cutest_shared());
	if (stat(data, &st) != 0 || !S_ISDIR(st.st_mode)) {
		printf("test_simt_real: %s is not here: SKIP\n", data);
		return CUTEST_SKIP;
	}
	return cutest_run("test_simt_real", suites);
}

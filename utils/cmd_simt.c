/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit simt: the analytic SIMT timing model on Accel-Sim traces, as tables, JSON and a picture.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpxkit/simt.h"

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "svg.h"

#define CMD	     "simt"
#define MAX_COUNTERS 64
#define TOP_BRANCHES 8

typedef struct simt_cli {
	const char *gpu_name, *accelsim, *output, *svg, *export_gpu, *input;
	cli_format format;
	long per_pc;
	mpxkit_simt_gpu *gpu;
	char gpu_note[160];
	mpxkit_simt_result **res;
	char **opnames; /* per result: its per-PC opcode texts, joined by NUL (opcode ids are per
			   trace) */
	size_t n_res;
} simt_cli;

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit simt [OPTIONS] TRACE_DIR | kernelslist.g | kernel-N.traceg[.gz]\n"
	    "       mpxkit simt --accelsim-config DIR --export-gpu FILE\n\n"
	    "Estimate each kernel's cycles, IPC and what they are made of (ALU, memory, NOP and\n"
	    "stall time) from an Accel-Sim/NVBit SASS trace with the analytic SIMT model, and "
	    "count\n"
	    "instructions, transactions and masked lanes under the profiler's names "
	    "(doc/simt.md).\n\n"
	    "Options:\n"
	    "  -g, --gpu=NAME|FILE        GPU description: gtx1080, qv100, rtx3070 or a .gpu file\n"
	    "                             (default: the shipped one for the trace's binary "
	    "version)\n"
	    "  -a, --accelsim-config=DIR  import Accel-Sim's gpgpusim.config and trace.config "
	    "instead\n"
	    "  -f, --format=FORMAT        table (default), csv or json\n"
	    "  -o, --output=FILE          write the results to FILE (whole, or not at all)\n"
	    "  -p, --per-pc=N             also list the N instructions with the most cycles\n"
	    "      --svg=FILE             a stacked bar per kernel of its cycles' breakdown\n"
	    "      --export-gpu=FILE      write the GPU description in use, in mpxkit's format\n"
	    "  -h, --help                 show this help\n\n"
	    "Exit status: 0 done, 1 usage error, 2 bad input or failure.\n");
}

/* ---- running the kernels -------------------------------------------------------------------- */

static int is_kernel_file(const char *path)
{
	size_t n = strlen(path);
	return (n >= 7 && strcmp(path + n - 7, ".traceg") == 0) ||
	       (n >= 10 && strcmp(path + n - 10, ".traceg.gz") == 0);
}

/* The kernels to run and the copies between them: the directory's list, or one kernel file. */
static int read_commands(simt_cli *s, mpxkit_simt_commands **out)
{
	mpxkit_diag d = {0};
	mpxkit_simt_commands *c;
	int rc;

	if (!is_kernel_file(s->input)) {
		rc = mpxkit_simt_commands_read(s->input, out, &d);
		return rc < 0 ? cli_lib_error(CMD, rc, &d) : 0;
	}
	c = calloc(1, sizeof *c);
	if (c == NULL || (c->cmd = calloc(1, sizeof *c->cmd)) == NULL ||
	    (c->cmd[0].path = strdup(s->input)) == NULL) {
		mpxkit_simt_commands_free(c);
		return cli_error(CMD, "out of memory");
	}
	c->n = 1;
	c->cmd[0].is_kernel = 1;
	*out = c;
	return 0;
}

/* The GPU: named, imported, or the shipped one for the first kernel's binary version. */
static int choose_gpu(simt_cli *s, const mpxkit_simt_commands *c)
{
	mpxkit_diag d = {0};
	const char *name = s->gpu_name;
	int rc;

	if (s->accelsim) {
		rc = mpxkit_simt_gpu_import_accelsim(s->accelsim, &s->gpu, &d);
		snprintf(s->gpu_note, sizeof s->gpu_note, "imported from %s", s->accelsim);
		return rc < 0 ? cli_lib_error(CMD, rc, &d) : 0;
	}
	if (name == NULL) {
		mpxkit_simt_trace *t = NULL;
		unsigned version;
		size_t i = 0;
		while (i < c->n && !c->cmd[i].is_kernel)
			i++;
		if (i == c->n)
			return cli_error(CMD, "%s names no kernel trace", s->input);
		if ((rc = mpxkit_simt_trace_open(c->cmd[i].path, &t, &d)) < 0)
			return cli_lib_error(CMD, rc, &d);
		version = mpxkit_simt_trace_kernel(t)->binary_version;
		mpxkit_simt_trace_close(t);
		name = mpxkit_simt_gpu_default_for(version);
		if (name == NULL)
			return cli_error(
			    CMD,
			    "no shipped GPU description for binary version %u: name one with "
			    "--gpu or --accelsim-config",
			    version);
		snprintf(s->gpu_note, sizeof s->gpu_note,
			 "%s, the shipped one for binary version %u", name, version);
	} else {
		snprintf(s->gpu_note, sizeof s->gpu_note, "%s", name);
	}
	rc = mpxkit_simt_gpu_load(name, &s->gpu, &d);
	return rc < 0 ? cli_lib_error(CMD, rc, &d) : 0;
}

/* The opcode texts of a result's PCs, kept since the trace (and its opcode ids) is closed next. */
static char *opcode_names(const mpxkit_simt_result *r, const mpxkit_simt_trace *t)
{
	size_t len = 0, off = 0;
	char *s;

	for (size_t i = 0; i < r->n_pcs; i++)
		len += strlen(mpxkit_simt_trace_opcode(t, r->pcs[i].opcode)) + 1;
	s = malloc(len + 1);
	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < r->n_pcs; i++) {
		const char *op = mpxkit_simt_trace_opcode(t, r->pcs[i].opcode);
		size_t n = strlen(op) + 1;
		memcpy(s + off, op, n);
		off += n;
	}
	return s;
}

static const char *pc_opcode(const simt_cli *s, size_t k, size_t pc_index)
{
	const char *p = s->opnames[k];
	for (size_t i = 0; i < pc_index; i++)
		p += strlen(p) + 1;
	return p;
}

static int run_kernel(simt_cli *s, mpxkit_simt_sim *sim, const char *path, size_t index,
		      size_t total)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_result *r = NULL;
	mpxkit_diag d = {0};
	int rc;

	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\rmpxkit simt: kernel %zu of %zu: %s\033[K", index + 1, total,
			path);
	if ((rc = mpxkit_simt_trace_open(path, &t, &d)) < 0 ||
	    (rc = mpxkit_simt_sim_kernel(sim, t, &r, &d)) < 0) {
		if (isatty(STDERR_FILENO))
			fputc('\n', stderr);
		mpxkit_simt_trace_close(t);
		return cli_lib_error(CMD, rc, &d);
	}
	s->res[s->n_res] = r;
	s->opnames[s->n_res] = opcode_names(r, t);
	mpxkit_simt_trace_close(t);
	if (s->opnames[s->n_res++] == NULL)
		return cli_error(CMD, "out of memory");
	return 0;
}

static int run_all(simt_cli *s, const mpxkit_simt_commands *c)
{
	mpxkit_simt_sim *sim = NULL;
	mpxkit_diag d = {0};
	size_t kernels = 0, k = 0;
	int rc;

	for (size_t i = 0; i < c->n; i++)
		kernels += (size_t)c->cmd[i].is_kernel;
	s->res = calloc(kernels + 1, sizeof *s->res);
	s->opnames = calloc(kernels + 1, sizeof *s->opnames);
	if (s->res == NULL || s->opnames == NULL)
		return cli_error(CMD, "out of memory");
	if ((rc = mpxkit_simt_sim_new(s->gpu, &sim, &d)) < 0)
		return cli_lib_error(CMD, rc, &d);
	for (size_t i = 0; i < c->n && rc == 0; i++) {
		if (c->cmd[i].is_kernel)
			rc = run_kernel(s, sim, c->cmd[i].path, k++, kernels);
		else if ((rc = mpxkit_simt_sim_memcpy(sim, c->cmd[i].addr, c->cmd[i].size, &d)) < 0)
			rc = cli_lib_error(CMD, rc, &d);
	}
	if (rc == 0 && isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	mpxkit_simt_sim_free(sim);
	return rc;
}

/* ---- results as tables ---------------------------------------------------------------------- */

static double stall(const mpxkit_simt_result *r)
{
	double t = 0;
	for (int p = MPXKIT_SIMT_PART_STALL_MEMORY; p <= MPXKIT_SIMT_PART_STALL_PIPE; p++)
		t += r->parts[p];
	return t;
}

static double lost_pct(const mpxkit_simt_result *r)
{
	return r->warp_insts ? 100.0 * (double)r->nop_lane_slots / (32.0 * (double)r->warp_insts)
			     : 0;
}

/* The first cells of every per-kernel row: which kernel, its time and the bound that set it. */
#define HEAD_COLUMNS(real, digits)                                                                 \
	{"kernel_id", "id", CLI_COL_INT, 0, 0, NULL}, {"kernel", NULL, CLI_COL_TEXT, 0, 0, NULL},  \
	    {"cycles", NULL, real, digits, 1, NULL},                                               \
	    {"active_cycles", "active", real, digits, 1, NULL},                                    \
	    {"ipc", "IPC", real, digits ? digits : 3, 0, NULL},                                    \
	{                                                                                          \
		"bound", NULL, CLI_COL_TEXT, 0, 0, NULL                                            \
	}
#define N_HEAD 6

static void head_cells(cli_table *t, const mpxkit_simt_result *r)
{
	cli_table_uint(t, r->id);
	cli_table_text(t, r->kernel);
	cli_table_real(t, r->cycles);
	cli_table_real(t, r->active_cycles);
	cli_table_real(t, r->ipc);
	cli_table_text(t, mpxkit_simt_bound_name(r->bound));
}

static cli_table *summary_table(const simt_cli *s)
{
	static const cli_column cols[] = {
	    HEAD_COLUMNS(CLI_COL_FIXED, 0),
	    {"warp_insts", "warp insts", CLI_COL_INT, 0, 1, NULL},
	    {"thread_insts", "thread insts", CLI_COL_INT, 0, 1, NULL},
	    {"alu", "ALU", CLI_COL_FIXED, 0, 1, NULL},
	    {"memory", NULL, CLI_COL_FIXED, 0, 1, NULL},
	    {"nop", "NOP", CLI_COL_FIXED, 0, 1, NULL},
	    {"stall", NULL, CLI_COL_FIXED, 0, 1, NULL},
	    {"launch", NULL, CLI_COL_FIXED, 0, 1, NULL},
	    {"lost_slots_pct", "lost slots %", CLI_COL_FIXED, 1, 0, NULL},
	};
	cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);

	if (t == NULL)
		return NULL;
	cli_table_comment(t, "GPU: %s (%s); %s", s->gpu->name, s->gpu_note,
			  "cycles = ALU + memory + NOP issue + stall + launch (doc/simt.md)");
	for (size_t k = 0; k < s->n_res; k++) {
		const mpxkit_simt_result *r = s->res[k];
		head_cells(t, r);
		cli_table_uint(t, r->warp_insts);
		cli_table_uint(t, r->thread_insts);
		cli_table_real(t, r->parts[MPXKIT_SIMT_PART_ALU]);
		cli_table_real(t, r->parts[MPXKIT_SIMT_PART_MEMORY]);
		cli_table_real(t, r->parts[MPXKIT_SIMT_PART_NOP]);
		cli_table_real(t, stall(r));
		cli_table_real(t, r->parts[MPXKIT_SIMT_PART_LAUNCH]);
		cli_table_real(t, lost_pct(r));
	}
	return t;
}

/* One row per kernel, every figure: the CSV (and the tables' second part). */
static cli_table *wide_table(const simt_cli *s)
{
	static const cli_column head[] = {HEAD_COLUMNS(CLI_COL_REAL, 12)};
	cli_column cols[16 + MPXKIT_SIMT_N_PARTS + MAX_COUNTERS];
	mpxkit_simt_counter cn[MAX_COUNTERS];
	size_t n = N_HEAD, nc = s->n_res ? mpxkit_simt_counters(s->res[0], cn, MAX_COUNTERS) : 0;
	static const char *const extra[] = {
	    "sm_ipc",  "thread_ipc", "nop_lane_slots", "all_masked_insts", "l1_hits",	"l1_misses",
	    "l2_hits", "l2_misses",  "icache_misses",  "occupancy",	   "sms_active"};
	cli_table *t;

	memcpy(cols, head, sizeof head);
	for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++)
		cols[n++] = (cli_column){mpxkit_simt_part_name(p), NULL, CLI_COL_REAL, 12, 0, NULL};
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
		cols[n++] =
		    (cli_column){extra[i], NULL, i < 2 ? CLI_COL_REAL : CLI_COL_INT, 6, 0, NULL};
	for (size_t i = 0; i < nc && i < MAX_COUNTERS; i++)
		cols[n++] = (cli_column){cn[i].name, NULL, CLI_COL_REAL, 12, 0, NULL};
	t = cli_table_new(cols, n);
	for (size_t k = 0; t && k < s->n_res; k++) {
		const mpxkit_simt_result *r = s->res[k];
		head_cells(t, r);
		for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++)
			cli_table_real(t, r->parts[p]);
		cli_table_real(t, r->sm_ipc);
		cli_table_real(t, r->thread_ipc);
		cli_table_uint(t, r->nop_lane_slots);
		cli_table_uint(t, r->all_masked_insts);
		cli_table_uint(t, r->l1_hits);
		cli_table_uint(t, r->l1_misses);
		cli_table_uint(t, r->l2_hits);
		cli_table_uint(t, r->l2_misses);
		cli_table_uint(t, r->icache_misses);
		cli_table_uint(t, r->occupancy);
		cli_table_uint(t, r->sms_active);
		nc = mpxkit_simt_counters(r, cn, MAX_COUNTERS);
		for (size_t i = 0; i < nc && i < MAX_COUNTERS; i++)
			cli_table_real(t, cn[i].value);
	}
	return t;
}

/* Cycles charged to an instruction: its issues and the waits before them. */
static double pc_cycles(const mpxkit_simt_pc_stats *p)
{
	return (double)p->warp_insts + (double)p->stall_cycles;
}

typedef struct rank {
	double key;
	size_t index;
} rank;

static int cmp_rank(const void *a, const void *b)
{
	const rank *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Indices of a result's PCs, by cycles charged (or masked lanes charged, for branches), most first.
 */
static size_t *ranked(const mpxkit_simt_result *r, int by_divergence)
{
	rank *rk = malloc((r->n_pcs + 1) * sizeof *rk);
	size_t *idx = malloc((r->n_pcs + 1) * sizeof *idx);

	if (rk == NULL || idx == NULL) {
		free(rk);
		free(idx);
		return NULL;
	}
	for (size_t i = 0; i < r->n_pcs; i++) {
		rk[i].key =
		    by_divergence ? (double)r->pcs[i].diverged_slots : pc_cycles(&r->pcs[i]);
		rk[i].index = i;
	}
	qsort(rk, r->n_pcs, sizeof *rk, cmp_rank);
	for (size_t i = 0; i < r->n_pcs; i++)
		idx[i] = rk[i].index;
	free(rk);
	return idx;
}

/* Memory traffic per kernel, under the profiler's names. */
static cli_table *traffic_table(const simt_cli *s)
{
	static const cli_column cols[] = {
	    {"kernel_id", "id", CLI_COL_INT, 0, 0, NULL},
	    {"gld_transactions", "gld tx", CLI_COL_INT, 0, 1, NULL},
	    {"gst_transactions", "gst tx", CLI_COL_INT, 0, 1, NULL},
	    {"shared_load_transactions", "shared ld tx", CLI_COL_INT, 0, 1, NULL},
	    {"shared_store_transactions", "shared st tx", CLI_COL_INT, 0, 1, NULL},
	    {"l2_tex_read_transactions", "L2 reads", CLI_COL_INT, 0, 1, NULL},
	    {"l2_tex_write_transactions", "L2 writes", CLI_COL_INT, 0, 1, NULL},
	    {"dram_read_transactions", "DRAM reads", CLI_COL_INT, 0, 1, NULL},
	    {"dram_write_transactions", "DRAM writes", CLI_COL_INT, 0, 1, NULL},
	    {"l1_hits", "L1 hits", CLI_COL_INT, 0, 1, NULL},
	    {"l1_misses", "L1 misses", CLI_COL_INT, 0, 1, NULL},
	    {"l2_hits", "L2 hits", CLI_COL_INT, 0, 1, NULL},
	    {"l2_misses", "L2 misses", CLI_COL_INT, 0, 1, NULL},
	};
	cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);

	if (t == NULL)
		return NULL;
	cli_table_comment(
	    t, "memory: 32-byte sectors (shared: wavefronts); hits and misses in sectors");
	for (size_t k = 0; k < s->n_res; k++) {
		const mpxkit_simt_result *r = s->res[k];
		cli_table_uint(t, r->id);
		cli_table_uint(t, r->gld_transactions);
		cli_table_uint(t, r->gst_transactions);
		cli_table_uint(t, r->shared_load_transactions);
		cli_table_uint(t, r->shared_store_transactions);
		cli_table_uint(t, r->l2_read_transactions);
		cli_table_uint(t, r->l2_write_transactions);
		cli_table_uint(t, r->dram_read_transactions);
		cli_table_uint(t, r->dram_write_transactions);
		cli_table_uint(t, r->l1_hits);
		cli_table_uint(t, r->l1_misses);
		cli_table_uint(t, r->l2_hits);
		cli_table_uint(t, r->l2_misses);
	}
	return t;
}

/* The hottest instructions: kernel k's alone (k < n_res), or every kernel's (k == n_res). */
static cli_table *per_pc_table(const simt_cli *s, size_t k)
{
	static const cli_column cols[] = {
	    {"kernel_id", "id", CLI_COL_INT, 0, 0, NULL},
	    {"pc", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"opcode", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"cycles", NULL, CLI_COL_INT, 0, 1, NULL},
	    {"stall_cycles", "stall", CLI_COL_INT, 0, 1, NULL},
	    {"warp_insts", "warp insts", CLI_COL_INT, 0, 1, NULL},
	    {"thread_insts", "thread insts", CLI_COL_INT, 0, 1, NULL},
	    {"nop_lane_slots", "masked lanes", CLI_COL_INT, 0, 1, NULL},
	    {"transactions", NULL, CLI_COL_INT, 0, 1, NULL},
	};
	cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	size_t first = k < s->n_res ? k : 0, last = k < s->n_res ? k + 1 : s->n_res;
	char pc[32];

	if (t == NULL)
		return NULL;
	cli_table_comment(t,
			  "the %ld instructions with the most warp cycles (issues and the waits "
			  "before them)%s",
			  s->per_pc, k < s->n_res ? "" : " per kernel");
	for (k = first; k < last; k++) {
		const mpxkit_simt_result *r = s->res[k];
		size_t *idx = ranked(r, 0);
		if (idx == NULL) {
			cli_table_free(t);
			return NULL;
		}
		for (size_t i = 0; i < r->n_pcs && i < (size_t)s->per_pc; i++) {
			const mpxkit_simt_pc_stats *p = &r->pcs[idx[i]];
			snprintf(pc, sizeof pc, "%04llx", (unsigned long long)p->pc);
			cli_table_uint(t, r->id);
			cli_table_text(t, pc);
			cli_table_text(t, pc_opcode(s, k, idx[i]));
			cli_table_uint(t, (uint64_t)pc_cycles(p));
			cli_table_uint(t, p->stall_cycles);
			cli_table_uint(t, p->warp_insts);
			cli_table_uint(t, p->thread_insts);
			cli_table_uint(t, p->nop_lane_slots);
			cli_table_uint(t, p->transactions);
		}
		free(idx);
	}
	return t;
}

/* Masked lane slots per branch: the SIMT cost the spec adds to analytic models. */
static cli_table *branch_table(const simt_cli *s)
{
	static const cli_column cols[] = {
	    {"kernel_id", "id", CLI_COL_INT, 0, 0, NULL},
	    {"pc", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"opcode", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"lane_slots", "masked lane slots", CLI_COL_INT, 0, 1, NULL},
	    {"issue_slots_pct", "% of issue slots", CLI_COL_FIXED, 2, 0, NULL},
	};
	cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
	char pc[32];

	if (t == NULL)
		return NULL;
	cli_table_comment(t, "divergence: lanes masked off after each branch (the last control "
			     "instruction a warp ran), worst first");
	for (size_t k = 0; k < s->n_res; k++) {
		const mpxkit_simt_result *r = s->res[k];
		double slots = 32.0 * (double)r->warp_insts;
		size_t *idx = ranked(r, 1);
		if (idx == NULL) {
			cli_table_free(t);
			return NULL;
		}
		if (r->entry_diverged_slots) {
			cli_table_uint(t, r->id);
			cli_table_text(t, "(entry)");
			cli_table_text(t, "");
			cli_table_uint(t, r->entry_diverged_slots);
			cli_table_real(t, 100.0 * (double)r->entry_diverged_slots / slots);
		}
		for (size_t i = 0; i < r->n_pcs && i < TOP_BRANCHES; i++) {
			const mpxkit_simt_pc_stats *p = &r->pcs[idx[i]];
			if (p->diverged_slots == 0)
				break;
			snprintf(pc, sizeof pc, "%04llx", (unsigned long long)p->pc);
			cli_table_uint(t, r->id);
			cli_table_text(t, pc);
			cli_table_text(t, pc_opcode(s, k, idx[i]));
			cli_table_uint(t, p->diverged_slots);
			cli_table_real(t, 100.0 * (double)p->diverged_slots / slots);
		}
		free(idx);
	}
	return t;
}

/* ---- output --------------------------------------------------------------------------------- */

static void json_kernel(const simt_cli *s, size_t k, cli_json *j)
{
	const mpxkit_simt_result *r = s->res[k];
	mpxkit_simt_counter cn[MAX_COUNTERS];
	size_t nc = mpxkit_simt_counters(r, cn, MAX_COUNTERS);
	char pc[32];

	cli_json_object(j);
	cli_json_key(j, "kernel_id");
	cli_json_uint(j, r->id);
	cli_json_key(j, "kernel");
	cli_json_str(j, r->kernel);
	cli_json_key(j, "cycles");
	cli_json_num(j, r->cycles);
	cli_json_key(j, "active_cycles");
	cli_json_num(j, r->active_cycles);
	cli_json_key(j, "bound");
	cli_json_str(j, mpxkit_simt_bound_name(r->bound));
	cli_json_key(j, "warp_insts");
	cli_json_uint(j, r->warp_insts);
	cli_json_key(j, "thread_insts");
	cli_json_uint(j, r->thread_insts);
	cli_json_key(j, "ipc");
	cli_json_num(j, r->ipc);
	cli_json_key(j, "thread_ipc");
	cli_json_num(j, r->thread_ipc);
	cli_json_key(j, "sm_ipc");
	cli_json_num(j, r->sm_ipc);
	cli_json_key(j, "occupancy");
	cli_json_uint(j, r->occupancy);
	cli_json_key(j, "sms_active");
	cli_json_uint(j, r->sms_active);
	for (size_t i = 0; i < nc && i < MAX_COUNTERS; i++) {
		cli_json_key(j, cn[i].name);
		cli_json_num(j, cn[i].value);
	}
	cli_json_key(j, "breakdown");
	cli_json_object(j);
	for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++) {
		cli_json_key(j, mpxkit_simt_part_name(p));
		cli_json_num(j, r->parts[p]);
	}
	cli_json_close(j);
	cli_json_key(j, "caches");
	cli_json_object(j);
	cli_json_key(j, "l1_hits");
	cli_json_uint(j, r->l1_hits);
	cli_json_key(j, "l1_misses");
	cli_json_uint(j, r->l1_misses);
	cli_json_key(j, "l2_hits");
	cli_json_uint(j, r->l2_hits);
	cli_json_key(j, "l2_misses");
	cli_json_uint(j, r->l2_misses);
	cli_json_key(j, "icache_misses");
	cli_json_uint(j, r->icache_misses);
	cli_json_close(j);
	cli_json_key(j, "divergence");
	cli_json_object(j);
	cli_json_key(j, "nop_lane_slots");
	cli_json_uint(j, r->nop_lane_slots);
	cli_json_key(j, "all_masked_insts");
	cli_json_uint(j, r->all_masked_insts);
	cli_json_key(j, "issue_slots_lost_pct");
	cli_json_num(j, lost_pct(r));
	cli_json_key(j, "entry_lane_slots");
	cli_json_uint(j, r->entry_diverged_slots);
	cli_json_key(j, "branches");
	cli_json_array(j);
	for (size_t i = 0; i < r->n_pcs; i++)
		if (r->pcs[i].diverged_slots) {
			snprintf(pc, sizeof pc, "%04llx", (unsigned long long)r->pcs[i].pc);
			cli_json_object(j);
			cli_json_key(j, "pc");
			cli_json_str(j, pc);
			cli_json_key(j, "opcode");
			cli_json_str(j, pc_opcode(s, k, i));
			cli_json_key(j, "lane_slots");
			cli_json_uint(j, r->pcs[i].diverged_slots);
			cli_json_close(j);
		}
	cli_json_close(j);
	cli_json_close(j);
	if (s->per_pc > 0) {
		cli_table *t = per_pc_table(s, k);
		cli_json_key(j, "per_pc");
		if (t)
			cli_table_json(t, j);
		else
			cli_json_null(j);
		cli_table_free(t);
	}
	cli_json_close(j);
}

static int emit_json(const simt_cli *s)
{
	cli_memout m;
	cli_json *j;
	int rc;

	if (cli_memout_open(&m) < 0 || (j = cli_json_new(m.f)) == NULL)
		return cli_error(CMD, "out of memory");
	cli_json_array(j);
	for (size_t k = 0; k < s->n_res; k++)
		json_kernel(s, k, j);
	rc = cli_json_end(j);
	if (cli_memout_close(&m) < 0 || rc < 0) {
		free(m.text);
		return cli_error(CMD, "out of memory");
	}
	rc = cli_write_file(CMD, s->output, m.text, m.len);
	free(m.text);
	return rc;
}

/* Tables one after another, blank lines between, into one output. */
static int emit_tables(const simt_cli *s)
{
	enum { SUMMARY, TRAFFIC, BRANCHES, PER_PC, WIDE, N_TABLES };
	cli_table *t[N_TABLES] = {NULL, NULL, NULL, NULL, NULL};
	cli_memout m;
	int rc = 0;

	if (s->format == CLI_FORMAT_CSV) {
		/* CSV is one table: the per-PC rows when asked for, else every figure per kernel */
		t[PER_PC] = s->per_pc > 0 ? per_pc_table(s, s->n_res) : NULL;
		t[WIDE] = s->per_pc > 0 ? NULL : wide_table(s);
	} else {
		t[SUMMARY] = summary_table(s);
		t[TRAFFIC] = traffic_table(s);
		t[BRANCHES] = branch_table(s);
		t[PER_PC] = s->per_pc > 0 ? per_pc_table(s, s->n_res) : NULL;
	}
	if (cli_memout_open(&m) < 0) {
		rc = cli_error(CMD, "out of memory");
		goto out;
	}
	for (int i = 0, printed = 0; i < N_TABLES; i++) {
		int wanted = s->format == CLI_FORMAT_CSV
				 ? (i == PER_PC && s->per_pc > 0) || (i == WIDE && s->per_pc == 0)
				 : i != WIDE && (i != PER_PC || s->per_pc > 0);
		if (!wanted)
			continue;
		if (t[i] == NULL) {
			rc = 1;
			break;
		}
		if (i == BRANCHES && cli_table_rows(t[i]) == 0)
			continue;
		if (printed++)
			fputc('\n', m.f);
		rc |= cli_table_print(t[i], s->format, m.f) < 0;
	}
	if (cli_memout_close(&m) < 0 || rc) {
		free(m.text);
		rc = cli_error(CMD, "out of memory");
		goto out;
	}
	rc = cli_write_file(CMD, s->output, m.text, m.len);
	free(m.text);
out:
	for (int i = 0; i < N_TABLES; i++)
		cli_table_free(t[i]);
	return rc;
}

static int write_svg(const simt_cli *s)
{
	const char *parts[MPXKIT_SIMT_N_PARTS];
	char **labels = calloc(s->n_res + 1, sizeof *labels), title[160];
	double *v = calloc(s->n_res * MPXKIT_SIMT_N_PARTS + 1, sizeof *v);
	cli_chart chart = {title, "cycles", "kernel", 0, 0, 0, 0};
	cli_memout m;
	int rc = CLI_FAIL;

	snprintf(title, sizeof title, "Where each kernel's cycles go on %s", s->gpu->name);
	if (labels == NULL || v == NULL || cli_memout_open(&m) < 0)
		goto out;
	for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++)
		parts[p] = mpxkit_simt_part_name(p);
	for (size_t k = 0; k < s->n_res; k++) {
		const mpxkit_simt_result *r = s->res[k];
		size_t n = strlen(r->kernel) + 32;
		if ((labels[k] = malloc(n)) == NULL) {
			cli_memout_close(&m);
			free(m.text);
			goto out;
		}
		snprintf(labels[k], n, "%u %.48s", r->id, r->kernel);
		for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++)
			v[k * MPXKIT_SIMT_N_PARTS + (size_t)p] = r->parts[p];
	}
	cli_svg_document(m.f);
	cli_svg_bars(m.f, &chart, (const char *const *)labels, s->n_res, parts, MPXKIT_SIMT_N_PARTS,
		     v, 0);
	if (cli_memout_close(&m) < 0) {
		free(m.text);
		goto out;
	}
	rc = cli_write_file(CMD, s->svg, m.text, m.len);
	free(m.text);
	goto done;
out:
	rc = cli_error(CMD, "out of memory");
done:
	for (size_t k = 0; labels && k < s->n_res; k++)
		free(labels[k]);
	free(labels);
	free(v);
	return rc;
}

static int export_gpu(const simt_cli *s)
{
	cli_memout m;
	int rc;

	if (cli_memout_open(&m) < 0)
		return cli_error(CMD, "out of memory");
	fprintf(m.f, "# %s (%s), written by mpxkit simt --export-gpu; format: doc/simt.md\n",
		s->gpu->name, s->gpu_note);
	mpxkit_simt_gpu_write(s->gpu, m.f);
	if (cli_memout_close(&m) < 0) {
		free(m.text);
		return cli_error(CMD, "out of memory");
	}
	rc = cli_write_file(CMD, s->export_gpu, m.text, m.len);
	free(m.text);
	return rc;
}

/* ---- main ----------------------------------------------------------------------------------- */

enum { OPT_SVG = 256, OPT_EXPORT };

static int parse_options(simt_cli *s, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"gpu", required_argument, NULL, 'g'},
	    {"accelsim-config", required_argument, NULL, 'a'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"per-pc", required_argument, NULL, 'p'},
	    {"svg", required_argument, NULL, OPT_SVG},
	    {"export-gpu", required_argument, NULL, OPT_EXPORT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:a:f:o:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			s->gpu_name = optarg;
			break;
		case 'a':
			s->accelsim = optarg;
			break;
		case 'f':
			if (cli_parse_format(optarg, &s->format) != 0)
				return cli_usage_error(CMD, "--format takes table, csv or json");
			break;
		case 'o':
			s->output = optarg;
			break;
		case 'p':
			if (cli_parse_long(optarg, 1, 1000000, &s->per_pc) != 0)
				return cli_usage_error(
				    CMD, "--per-pc takes a whole number from 1 to 1000000");
			break;
		case OPT_SVG:
			s->svg = optarg;
			break;
		case OPT_EXPORT:
			s->export_gpu = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return cli_option_error(CMD, c, argv);
		}
	}
	if (s->gpu_name && s->accelsim)
		return cli_usage_error(CMD, "--gpu and --accelsim-config are alternatives");
	if (optind < argc)
		s->input = argv[optind++];
	if (optind < argc)
		return cli_usage_error(CMD,
				       "one trace directory or kernel trace expected, not '%s' too",
				       argv[optind]);
	if (s->input == NULL && !(s->export_gpu && (s->gpu_name || s->accelsim)))
		return cli_usage_error(CMD, "no trace directory given");
	return 0;
}

static void simt_free(simt_cli *s)
{
	for (size_t k = 0; k < s->n_res; k++) {
		mpxkit_simt_result_free(s->res[k]);
		free(s->opnames[k]);
	}
	free(s->res);
	free(s->opnames);
	mpxkit_simt_gpu_free(s->gpu);
}

/*
 * Every output can be written and replaces none of the files read: the
 * command list (DIR/kernelslist.g), each kernel trace it names, the GPU
 * description and the Accel-Sim configuration.
 */
static int check_outputs(const simt_cli *s, const mpxkit_simt_commands *c)
{
	const char *outputs[] = {s->output, s->svg, s->export_gpu};
	size_t n = 0, cap = (c ? c->n : 0) + 4;
	const char **inputs = malloc(cap * sizeof *inputs);
	char *list = NULL;
	int rc;

	if (inputs == NULL)
		return cli_error(CMD, "out of memory");
	if (s->input && (list = malloc(strlen(s->input) + sizeof "/kernelslist.g")) == NULL) {
		free(inputs);
		return cli_error(CMD, "out of memory");
	}
	if (list)
		sprintf(list, "%s/kernelslist.g", s->input);
	inputs[n++] = s->input;
	inputs[n++] = list;
	inputs[n++] = s->gpu_name;
	inputs[n++] = s->accelsim;
	for (size_t i = 0; c && i < c->n; i++)
		if (c->cmd[i].is_kernel)
			inputs[n++] = c->cmd[i].path;
	rc = cli_check_outputs(CMD, outputs, 3, inputs, n);
	free(list);
	free(inputs);
	return rc;
}

int cmd_simt(int argc, char **argv)
{
	simt_cli s;
	mpxkit_simt_commands *c = NULL;
	int rc;

	memset(&s, 0, sizeof s);
	rc = parse_options(&s, argc, argv);
	if (rc != 0)
		return rc < 0 ? cli_close_stdout(CMD) : rc;
	if (s.input && (rc = read_commands(&s, &c)) != 0)
		goto out;
	/* Before the traces are read and timed: every output can be written. */
	if ((rc = check_outputs(&s, c)) != CLI_OK)
		goto out;
	if ((rc = choose_gpu(&s, c)) != 0)
		goto out;
	if (s.export_gpu && (rc = export_gpu(&s)) != 0)
		goto out;
	if (s.input == NULL)
		goto out;
	if ((rc = run_all(&s, c)) != 0)
		goto out;
	if (s.svg && (rc = write_svg(&s)) != 0)
		goto out;
	rc = s.format == CLI_FORMAT_JSON ? emit_json(&s) : emit_tables(&s);
	if (rc == 0 && (s.output == NULL || strcmp(s.output, "-") == 0))
		rc = cli_close_stdout(CMD);
out:
	mpxkit_simt_commands_free(c);
	simt_free(&s);
	return rc;
}

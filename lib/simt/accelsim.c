/* SPDX-License-Identifier: BSD-3-Clause */
/* Importer of Accel-Sim's gpgpusim.config and trace.config into a GPU description (doc/simt.md). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpxkit/reader.h"
#include "simt_impl.h"

#define CONFIG_MAX_BYTES (1u << 20)
#define MAX_OPTIONS	 4096
#define MAX_VALUE	 1024

/* One "-option value" of an option file; a later one of the same name replaces it. */
typedef struct option {
	char name[96];
	char value[MAX_VALUE];
	const char *file;
	unsigned long line;
} option;

typedef struct options {
	option *o;
	size_t n, cap;
	mpxkit_diag *diag;
} options;

static option *find(const options *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->o[i].name, name) == 0)
			return &s->o[i];
	return NULL;
}

/* Splits an option file into tokens: blanks separate, '#' comments, '"' quotes span lines. */
static int tokenize(options *s, const char *file, const char *text, size_t len)
{
	size_t i = 0;
	unsigned long line = 1;
	option *pending = NULL;

	while (i < len) {
		char tok[MAX_VALUE];
		size_t n = 0;
		unsigned long at;
		char c = text[i];
		if (c == '\n') {
			line++;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (c == '\0')
			return mpxkit_fail(s->diag, MPXKIT_EFORMAT,
					   "%s:%lu: NUL byte: not a text file", file, line);
		if (c == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		at = line;
		if (c == '"') {
			for (i++; i < len && text[i] != '"'; i++) {
				if (text[i] == '\n')
					line++;
				if (text[i] == '\0')
					return mpxkit_fail(s->diag, MPXKIT_EFORMAT,
							   "%s:%lu: NUL byte", file, line);
				if (n + 1 >= sizeof tok)
					return mpxkit_fail(
					    s->diag, MPXKIT_ERANGE,
					    "%s:%lu: quoted value longer than %d bytes", file, at,
					    MAX_VALUE - 1);
				tok[n++] = text[i] == '\n' || text[i] == '\t' || text[i] == '\r'
					       ? ' '
					       : text[i];
			}
			if (i == len)
				return mpxkit_fail(s->diag, MPXKIT_EFORMAT,
						   "%s:%lu: quote never closed", file, at);
			i++;
		} else {
			while (i < len && text[i] != ' ' && text[i] != '\t' && text[i] != '\r' &&
			       text[i] != '\n' && text[i] != '#') {
				if (text[i] == '\0')
					return mpxkit_fail(s->diag, MPXKIT_EFORMAT,
							   "%s:%lu: NUL byte", file, line);
				if (n + 1 >= sizeof tok)
					return mpxkit_fail(s->diag, MPXKIT_ERANGE,
							   "%s:%lu: token longer than %d bytes",
							   file, at, MAX_VALUE - 1);
				tok[n++] = text[i++];
			}
		}
		tok[n] = '\0';
		if (pending) {
			snprintf(pending->value, sizeof pending->value, "%s", tok);
			pending = NULL;
			continue;
		}
		if (tok[0] != '-' || n < 2 || n - 1 >= sizeof s->o[0].name)
			return mpxkit_fail(s->diag, MPXKIT_EFORMAT,
					   "%s:%lu: '-option value' expected, found '%.40s'", file,
					   at, tok);
		pending = find(s, tok + 1);
		if (pending == NULL) {
			if (s->n == MAX_OPTIONS)
				return mpxkit_fail(s->diag, MPXKIT_ERANGE,
						   "%s:%lu: more than %d options", file, at,
						   MAX_OPTIONS);
			if (s->n == s->cap) {
				size_t ncap = s->cap ? s->cap * 2 : 64;
				option *g = realloc(s->o, ncap * sizeof *g);
				if (g == NULL)
					return mpxkit_fail(s->diag, MPXKIT_ENOMEM,
							   "%s: out of memory", file);
				s->o = g;
				s->cap = ncap;
			}
			pending = &s->o[s->n++];
			memcpy(pending->name, tok + 1, n); /* n - 1 bytes and the NUL */
		}
		pending->file = file;
		pending->line = at;
	}
	if (pending)
		return mpxkit_fail(s->diag, MPXKIT_EFORMAT, "%s:%lu: option -%s has no value", file,
				   pending->line, pending->name);
	return 0;
}

static int bad(const options *s, const option *o, const char *what)
{
	return mpxkit_fail(s->diag, MPXKIT_EFORMAT, "%s:%lu: -%s '%.60s': %s expected", o->file,
			   o->line, o->name, o->value, what);
}

static int missing(const options *s, const char *file, const char *name)
{
	return mpxkit_fail(s->diag, MPXKIT_EFORMAT, "%s: option -%s missing", file, name);
}

static int to_u32(const char *v, uint32_t *out)
{
	char *end;
	unsigned long long x;

	if (*v < '0' || *v > '9')
		return -1;
	x = strtoull(v, &end, 10);
	if (*end != '\0' || x > 0xffffffffull)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* A whole-number option; absent: dflt when dflt_ok, else an error. */
static int get_u32(const options *s, const char *file, const char *name, int dflt_ok, uint32_t dflt,
		   uint32_t *out)
{
	const option *o = find(s, name);

	if (o == NULL) {
		if (!dflt_ok)
			return missing(s, file, name);
		*out = dflt;
		return 0;
	}
	if (to_u32(o->value, out) < 0)
		return bad(s, o, "a whole number");
	return 0;
}

/* Up to n numbers separated by ':' or ','; the count found. */
static int numbers(const char *v, double *out, int n)
{
	int k = 0;
	char *end;

	while (k < n) {
		if (!((*v >= '0' && *v <= '9') || *v == '.'))
			return -1;
		out[k++] = strtod(v, &end);
		if (!isfinite(out[k - 1]) || out[k - 1] < 0)
			return -1;
		if (*end == '\0')
			return k;
		if (*end != ':' && *end != ',')
			return -1;
		v = end + 1;
	}
	return -1;
}

/* "S:sets:line:ways,..." or "N:..." of a GPGPU-Sim cache option. */
static int get_cache(const options *s, const char *file, const char *name,
		     mpxkit_simt_cache_desc *c, char *write_policy)
{
	const option *o = find(s, name);
	uint32_t v[3];
	const char *p;
	char *end;

	if (o == NULL)
		return missing(s, file, name);
	p = o->value;
	if ((p[0] != 'S' && p[0] != 'N') || p[1] != ':')
		return bad(s, o, "'S:sets:line:ways,...' or 'N:sets:line:ways,...'");
	p += 2;
	for (int i = 0; i < 3; i++) {
		unsigned long long x;
		if (*p < '0' || *p > '9')
			return bad(s, o, "'S:sets:line:ways,...'");
		x = strtoull(p, &end, 10);
		if (x == 0 || x > 0xffffffu || *end != (i < 2 ? ':' : ','))
			return bad(s, o, "'S:sets:line:ways,...' with whole numbers");
		v[i] = (uint32_t)x;
		p = end + 1;
	}
	c->sets = v[0];
	c->line = v[1];
	c->ways = v[2];
	c->sector = o->value[0] == 'S' ? 32 : v[1];
	/* the write policy: the second letter of the next group ("L:T:m:L:L") */
	*write_policy = p[0] && p[1] == ':' ? p[2] : 'T';
	return 0;
}

static int get_pair(const options *s, const char *name, int required, const char *file,
		    uint32_t *lat, uint32_t *init)
{
	const option *o = find(s, name);
	double v[2];

	if (o == NULL)
		return required ? missing(s, file, name) : 1;
	if (numbers(o->value, v, 2) != 2 || v[0] > 100000 || v[1] > 100000)
		return bad(s, o, "'latency,initiation'");
	/* this model's units need at least one cycle of each */
	*lat = v[0] < 1 ? 1 : (uint32_t)v[0];
	*init = v[1] < 1 ? 1 : (uint32_t)v[1];
	return 0;
}

static void add_unit(mpxkit_simt_gpu *g, const char *name, uint32_t lat, uint32_t init)
{
	mpxkit_simt_unit *u = &g->units[g->n_units++];
	snprintf(u->name, sizeof u->name, "%s", name);
	u->latency = lat;
	u->initiation = init;
}

/* The specialized unit named NAME (BRA, TEX), if the trace config declares one. */
static int special_unit(const options *s, const char *want, const char *file, uint32_t *lat,
			uint32_t *init)
{
	for (int i = 1; i <= 8; i++) {
		char key[64];
		const option *o;
		const char *comma;
		snprintf(key, sizeof key, "specialized_unit_%d", i);
		o = find(s, key);
		if (o == NULL || (comma = strrchr(o->value, ',')) == NULL ||
		    strcmp(comma + 1, want) != 0)
			continue;
		snprintf(key, sizeof key, "trace_opcode_latency_initiation_spec_op_%d", i);
		return get_pair(s, key, 1, file, lat, init);
	}
	return 1;
}

static int map_units(mpxkit_simt_gpu *g, const options *t, const char *tfile)
{
	uint32_t il, ii, sl, si, l, i;
	int rc;

	if ((rc = get_pair(t, "trace_opcode_latency_initiation_int", 1, tfile, &il, &ii)) < 0 ||
	    (rc = get_pair(t, "trace_opcode_latency_initiation_sp", 1, tfile, &sl, &si)) < 0)
		return rc;
	add_unit(g, "int", il, ii);
	add_unit(g, "fp16", sl, si);
	add_unit(g, "fp32", sl, si);
	if ((rc = get_pair(t, "trace_opcode_latency_initiation_dp", 1, tfile, &l, &i)) < 0)
		return rc;
	add_unit(g, "fp64", l, i);
	if ((rc = get_pair(t, "trace_opcode_latency_initiation_sfu", 1, tfile, &l, &i)) < 0)
		return rc;
	add_unit(g, "sfu", l, i);
	add_unit(g, "conv", il, ii);
	if ((rc = get_pair(t, "trace_opcode_latency_initiation_tensor", 0, tfile, &l, &i)) < 0)
		return rc;
	if (rc == 1)
		l = sl, i = si;
	add_unit(g, "tensor", l, i);
	if ((rc = special_unit(t, "BRA", tfile, &l, &i)) < 0)
		return rc;
	if (rc == 1)
		l = il, i = ii;
	add_unit(g, "branch", l, i);
	add_unit(g, "ldst", il, ii);
	add_unit(g, "const", il, ii);
	if ((rc = special_unit(t, "TEX", tfile, &l, &i)) < 0)
		return rc;
	if (rc == 1)
		l = g->l1.latency ? g->l1.latency : 1, i = 4;
	add_unit(g, "tex", l, i);
	add_unit(g, "sreg", il, ii);
	add_unit(g, "sync", il, ii);
	return 0;
}

/* The directory's last component as the GPU's name. */
static void name_from(mpxkit_simt_gpu *g, const char *config_name)
{
	const char *end = strrchr(config_name, '/'), *start;
	size_t n;

	snprintf(g->name, sizeof g->name, "Accel-Sim configuration");
	if (end == NULL || end == config_name)
		return;
	start = end;
	while (start > config_name && start[-1] != '/')
		start--;
	n = (size_t)(end - start);
	if (n == 0 || n >= sizeof g->name)
		return;
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)start[k] < 0x20 || (unsigned char)start[k] > 0x7e)
			return;
	memcpy(g->name, start, n);
	g->name[n] = '\0';
}

static int map_config(mpxkit_simt_gpu *g, const options *s, const char *f)
{
	uint32_t clusters, cores, n_mem, subs, rop, dram_lat, skip, arch, perfect, bus, per_ctrl;
	const option *o;
	double clocks[4], pipe[2], ratio;
	char w1, w2, wi;
	int rc;

	if ((rc = get_u32(s, f, "gpgpu_n_clusters", 0, 0, &clusters)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_n_cores_per_cluster", 1, 1, &cores)) < 0)
		return rc;
	if ((uint64_t)clusters * cores > 4096)
		return mpxkit_fail(s->diag, MPXKIT_ERANGE, "%s: more than 4096 SMs", f);
	g->sms = clusters * cores;
	if ((o = find(s, "gpgpu_clock_domains")) == NULL)
		return missing(s, f, "gpgpu_clock_domains");
	if (numbers(o->value, clocks, 4) != 4 || clocks[0] <= 0 || clocks[0] > 100000 ||
	    clocks[2] <= 0 || clocks[3] <= 0)
		return bad(s, o, "'core:icnt:l2:dram' clocks in MHz");
	g->clock_mhz = clocks[0];
	if ((o = find(s, "gpgpu_shader_core_pipeline")) == NULL)
		return missing(s, f, "gpgpu_shader_core_pipeline");
	if (numbers(o->value, pipe, 2) != 2 || pipe[1] != 32 || pipe[0] < 32 || pipe[0] > 32768)
		return bad(s, o, "'threads:32'");
	g->warp_size = 32;
	g->max_warps = (uint32_t)pipe[0] / 32;
	g->max_threads_per_block = 1024; /* CUDA's limit on every architecture to date */
	if ((rc = get_u32(s, f, "gpgpu_num_sched_per_core", 0, 0, &g->schedulers)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_shader_cta", 0, 0, &g->max_blocks)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_shader_registers", 0, 0, &g->registers)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_shmem_size", 0, 0, &g->shared_per_sm)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_shmem_per_block", 1, g->shared_per_sm,
			  &g->shared_per_block)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_kernel_launch_latency", 1, 0, &g->launch_cycles)) < 0)
		return rc;
	if (g->shared_per_block > g->shared_per_sm)
		g->shared_per_block = g->shared_per_sm;
	/* the CUDA occupancy calculator's allocation granularities (registers per warp, bytes) */
	g->register_unit = 256;
	g->shared_unit = 256;
	if ((rc = get_cache(s, f, "gpgpu_cache:dl1", &g->l1, &w1)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_l1_latency", 1, 1, &g->l1.latency)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_gmem_skip_L1D", 1, 0, &skip)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_coalesce_arch", 1, 13, &arch)) < 0)
		return rc;
	g->l1.write = w1 == 'B' ? MPXKIT_SIMT_WRITE_BACK : MPXKIT_SIMT_WRITE_THROUGH;
	g->l1_global_cached = skip == 0;
	g->l1_request_bytes = arch >= 70 ? 128 : 32;
	g->l1_tags_per_cycle = arch >= 70 ? 4 : 1;
	if ((rc = get_cache(s, f, "gpgpu_cache:dl2", &g->l2, &w2)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_n_mem", 0, 0, &n_mem)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_n_sub_partition_per_mchannel", 1, 1, &subs)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_l2_rop_latency", 0, 0, &rop)) < 0 ||
	    (rc = get_u32(s, f, "dram_latency", 0, 0, &dram_lat)) < 0)
		return rc;
	if ((uint64_t)g->l2.sets * n_mem * subs > (1u << 24) || n_mem == 0 || subs == 0)
		return mpxkit_fail(s->diag, MPXKIT_ERANGE,
				   "%s: L2 sets times partitions out of range", f);
	g->l2.sets *= n_mem * subs;
	g->l2.write = w2 == 'T' ? MPXKIT_SIMT_WRITE_THROUGH : MPXKIT_SIMT_WRITE_BACK;
	g->l2.latency = g->l1.latency + rop;
	g->l2_bytes_per_cycle = 32.0 * n_mem * subs * clocks[2] / clocks[0];
	g->dram_latency = g->l2.latency + dram_lat;
	if ((rc = get_u32(s, f, "gpgpu_dram_buswidth", 1, 4, &bus)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_n_mem_per_ctrlr", 1, 1, &per_ctrl)) < 0)
		return rc;
	{
		uint32_t r;
		if ((rc = get_u32(s, f, "dram_data_command_freq_ratio", 1, 2, &r)) < 0)
			return rc;
		ratio = r;
	}
	g->dram_bytes_per_cycle = (double)n_mem * per_ctrl * bus * ratio * clocks[3] / clocks[0];
	if ((rc = get_u32(s, f, "gpgpu_perfect_inst_const_cache", 1, 0, &perfect)) < 0)
		return rc;
	if (perfect)
		memset(&g->icache, 0, sizeof g->icache);
	else {
		if ((rc = get_cache(s, f, "gpgpu_cache:il1", &g->icache, &wi)) < 0)
			return rc;
		g->icache.sector = g->icache.line;
		g->icache.latency = 0;
		g->icache_prefetch = 0; /* GPGPU-Sim fetches no line ahead */
	}
	if ((rc = get_u32(s, f, "gpgpu_shmem_num_banks", 1, 32, &g->shared_banks)) < 0 ||
	    (rc = get_u32(s, f, "gpgpu_smem_latency", 1, 1, &g->shared_latency)) < 0)
		return rc;
	g->shared_width = 4;
	return 0;
}

int mpxkit_simt_gpu_import_accelsim_text(const char *config_name, const char *config,
					 size_t config_len, const char *trace_name,
					 const char *trace_config, size_t trace_len,
					 mpxkit_simt_gpu **out, mpxkit_diag *diag)
{
	options cs = {NULL, 0, 0, diag}, ts = {NULL, 0, 0, diag};
	mpxkit_simt_gpu *g = NULL;
	char who[256];
	int rc;

	if (out == NULL || (config == NULL && config_len) || (trace_config == NULL && trace_len))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "Accel-Sim import: missing argument");
	if (config_len > CONFIG_MAX_BYTES || trace_len > CONFIG_MAX_BYTES)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "Accel-Sim import: a file is larger than %u bytes",
				   CONFIG_MAX_BYTES);
	g = calloc(1, sizeof *g);
	if (g == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "Accel-Sim import: out of memory");
		goto done;
	}
	if ((rc = tokenize(&cs, config_name, config, config_len)) < 0 ||
	    (rc = tokenize(&ts, trace_name, trace_config, trace_len)) < 0 ||
	    (rc = map_config(g, &cs, config_name)) < 0 || (rc = map_units(g, &ts, trace_name)) < 0)
		goto done;
	name_from(g, config_name);
	snprintf(who, sizeof who, "%s", config_name);
	if ((rc = mpxkit__simt_gpu_use_builtin(g, who, diag)) < 0 ||
	    (rc = mpxkit__simt_gpu_check(g, who, diag)) < 0)
		goto done;
	*out = g;
	g = NULL;
done:
	mpxkit_simt_gpu_free(g);
	free(cs.o);
	free(ts.o);
	return rc;
}

static int read_text(const char *path, char **buf, size_t *len, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT, CONFIG_MAX_BYTES, 0,
				     "Accel-Sim configuration"};
	return mpxkit_read_file(path, &opt, buf, len, diag);
}

int mpxkit_simt_gpu_import_accelsim(const char *dir, mpxkit_simt_gpu **out, mpxkit_diag *diag)
{
	char *cpath = NULL, *tpath = NULL, *cbuf = NULL, *tbuf = NULL;
	size_t clen = 0, tlen = 0, n;
	struct stat st;
	int rc;

	if (dir == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "Accel-Sim import: missing argument");
	n = strlen(dir) + sizeof "/gpgpusim.trace.config";
	cpath = malloc(n);
	tpath = malloc(n);
	if (cpath == NULL || tpath == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "Accel-Sim import: out of memory");
		goto done;
	}
	snprintf(cpath, n, "%s/gpgpusim.config", dir);
	snprintf(tpath, n, "%s/trace.config", dir);
	if (stat(tpath, &st) != 0)
		snprintf(tpath, n, "%s/gpgpusim.trace.config", dir);
	if ((rc = read_text(cpath, &cbuf, &clen, diag)) < 0 ||
	    (rc = read_text(tpath, &tbuf, &tlen, diag)) < 0)
		goto done;
	rc = mpxkit_simt_gpu_import_accelsim_text(cpath, cbuf, clen, tpath, tbuf, tlen, out, diag);
done:
	free(cpath);
	free(tpath);
	free(cbuf);
	free(tbuf);
	return rc;
}

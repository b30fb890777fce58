/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU description: parser, checks, canonical writer and op table (doc/simt.md). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"
#include "mpxkit/reader.h"
#include "simt_impl.h"

#define GPU_MAX_BYTES  (1u << 20)
#define GPU_MAX_LINE   4096
#define GPU_MAX_TOKENS 16

static const char *const class_names[MPXKIT_SIMT_N_CLASSES] = {
    "fp_16",	     "fp_32",	    "fp_64",
    "integer",	     "bit_convert", "control",
    "compute_ld_st", "misc",	    "inter_thread_communication",
};

static const char *const kind_names[] = {"", "load", "store", "atomic", "barrier"};
static const char *const space_names[] = {"global", "shared", "local", "generic"};

const char *mpxkit_simt_class_name(int cls)
{
	return cls >= 0 && cls < MPXKIT_SIMT_N_CLASSES ? class_names[cls] : "unknown";
}

size_t mpxkit__simt_base_len(const char *opcode)
{
	const char *dot = strchr(opcode, '.');
	return dot ? (size_t)(dot - opcode) : strlen(opcode);
}

void mpxkit_simt_gpu_free(mpxkit_simt_gpu *gpu)
{
	if (gpu == NULL)
		return;
	free(gpu->ops);
	free(gpu);
}

int mpxkit__simt_gpu_unit(const mpxkit_simt_gpu *gpu, const char *name)
{
	for (size_t i = 0; i < gpu->n_units; i++)
		if (strcmp(gpu->units[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Compares a base opcode of n bytes with a table name. */
static int base_cmp(const char *base, size_t n, const char *name)
{
	int c = strncmp(base, name, n);
	if (c != 0)
		return c;
	return name[n] == '\0' ? 0 : -1;
}

/* Index of the first op whose name is not below base (binary search). */
static size_t op_lower(const mpxkit_simt_gpu *gpu, const char *base, size_t n)
{
	size_t lo = 0, hi = gpu->n_ops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (base_cmp(base, n, gpu->ops[mid].name) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const mpxkit_simt_op *mpxkit_simt_gpu_op(const mpxkit_simt_gpu *gpu, const char *opcode)
{
	size_t n = mpxkit__simt_base_len(opcode), i;

	if (gpu == NULL || gpu->n_ops == 0)
		return NULL;
	i = op_lower(gpu, opcode, n);
	if (i < gpu->n_ops && base_cmp(opcode, n, gpu->ops[i].name) == 0)
		return &gpu->ops[i];
	return NULL;
}

int mpxkit__simt_gpu_set_op(mpxkit_simt_gpu *gpu, const mpxkit_simt_op *op)
{
	size_t i = op_lower(gpu, op->name, strlen(op->name));
	mpxkit_simt_op *grown;

	if (i < gpu->n_ops && strcmp(gpu->ops[i].name, op->name) == 0) {
		gpu->ops[i] = *op;
		return 0;
	}
	grown = realloc(gpu->ops, (gpu->n_ops + 1) * sizeof *grown);
	if (grown == NULL)
		return -MPXKIT_ENOMEM;
	gpu->ops = grown;
	memmove(&gpu->ops[i + 1], &gpu->ops[i], (gpu->n_ops - i) * sizeof *grown);
	gpu->ops[i] = *op;
	gpu->n_ops++;
	return 0;
}

int mpxkit__simt_gpu_use_builtin(mpxkit_simt_gpu *gpu, const char *who, mpxkit_diag *diag)
{
	int unit_of[32];
	mpxkit_simt_op *ops;

	for (size_t u = 0; u < mpxkit__simt_n_builtin_units; u++) {
		unit_of[u] = mpxkit__simt_gpu_unit(gpu, mpxkit__simt_builtin_units[u]);
		if (unit_of[u] < 0)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s: 'ops builtin' needs a 'unit %s' line", who,
					   mpxkit__simt_builtin_units[u]);
	}
	ops = calloc(mpxkit__simt_n_builtin_ops, sizeof *ops);
	if (ops == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", who);
	for (size_t i = 0; i < mpxkit__simt_n_builtin_ops; i++) {
		const simt_builtin_op *b = &mpxkit__simt_builtin_ops[i];
		size_t u = 0;
		while (strcmp(mpxkit__simt_builtin_units[u], b->unit) != 0)
			u++;
		snprintf(ops[i].name, sizeof ops[i].name, "%s", b->name);
		ops[i].unit = (uint8_t)unit_of[u];
		ops[i].cls = b->cls;
		ops[i].kind = b->kind;
		ops[i].space = b->space;
	}
	free(gpu->ops);
	gpu->ops = ops;
	gpu->n_ops = mpxkit__simt_n_builtin_ops;
	gpu->ops_builtin = 1;
	return 0;
}

static int pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static int check_cache(const mpxkit_simt_cache_desc *c, const char *who, const char *key,
		       mpxkit_diag *diag)
{
	if (c->sets == 0)
		return 0; /* icache none */
	if (c->sets > (1u << 24) || c->ways < 1 || c->ways > 1024)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: %s: sets must be 1 to 16777216 and ways 1 to 1024", who,
				   key);
	if (!pow2(c->line) || c->line < 32 || c->line > 1024)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: %s: line must be a power of two from 32 to 1024", who, key);
	if (!pow2(c->sector) || c->sector < 32 || c->sector > c->line)
		return mpxkit_fail(
		    diag, MPXKIT_ERANGE,
		    "%s: %s: sector must be a power of two from 32 bytes up to the line", who, key);
	if ((uint64_t)c->sets * c->ways * c->line > (256ull << 20))
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: %s: larger than 256 MiB", who, key);
	if (c->latency > 100000)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: %s: latency above 100000 cycles", who,
				   key);
	return 0;
}

int mpxkit__simt_gpu_check(const mpxkit_simt_gpu *g, const char *who, mpxkit_diag *diag)
{
	int rc;

	if (g->name[0] == '\0')
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: empty name", who);
	if (g->sms < 1 || g->sms > 4096)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: sms must be 1 to 4096", who);
	if (!(g->clock_mhz > 0 && g->clock_mhz <= 100000))
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: clock_mhz must be above 0 and at most 100000", who);
	if (g->warp_size != MPXKIT_SIMT_WARP_SIZE)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: warp_size must be 32 (traces carry 32-bit masks)", who);
	if (g->schedulers < 1 || g->schedulers > 16)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: schedulers must be 1 to 16", who);
	if (g->max_warps < 1 || g->max_warps > 1024 || g->max_blocks < 1 || g->max_blocks > 1024)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: max_warps and max_blocks must be 1 to 1024", who);
	if (g->max_threads_per_block < 32 || g->max_threads_per_block > 4096)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: max_threads_per_block must be 32 to 4096", who);
	if (g->registers < 1 || g->registers > (1u << 24) || g->register_unit < 1 ||
	    g->register_unit > 65536)
		return mpxkit_fail(
		    diag, MPXKIT_ERANGE,
		    "%s: registers must be 1 to 16777216 and register_unit 1 to 65536", who);
	if (g->shared_per_sm > (1u << 30) || g->shared_per_block > g->shared_per_sm ||
	    g->shared_unit < 1 || g->shared_unit > (1u << 20))
		return mpxkit_fail(
		    diag, MPXKIT_ERANGE,
		    "%s: shared_per_sm at most 2^30, shared_per_block at most shared_per_sm, "
		    "shared_unit 1 to 2^20",
		    who);
	if (g->launch_cycles > 1000000000u)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: launch_cycles above 10^9", who);
	if ((rc = check_cache(&g->l1, who, "l1", diag)) < 0 ||
	    (rc = check_cache(&g->l2, who, "l2", diag)) < 0 ||
	    (rc = check_cache(&g->icache, who, "icache", diag)) < 0)
		return rc;
	if (g->l1.sets == 0 || g->l2.sets == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: l1 and l2 need sets", who);
	if (g->l1.line != g->l2.line)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: l1 and l2 must have the same line size", who);
	if (!pow2(g->l1_request_bytes) || g->l1_request_bytes < 4 || g->l1_request_bytes > 1024 ||
	    g->l1_tags_per_cycle < 1 || g->l1_tags_per_cycle > 64)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: l1 request_bytes must be a power of two from 4 to 1024 and "
				   "tags_per_cycle 1 to 64",
				   who);
	if (!(g->l2_bytes_per_cycle > 0 && g->l2_bytes_per_cycle <= 1e9) ||
	    !(g->dram_bytes_per_cycle > 0 && g->dram_bytes_per_cycle <= 1e9))
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: bytes_per_cycle must be above 0 and at most 10^9", who);
	if (!pow2(g->shared_banks) || g->shared_banks > 64 ||
	    (g->shared_width != 4 && g->shared_width != 8) || g->shared_latency > 100000)
		return mpxkit_fail(
		    diag, MPXKIT_ERANGE,
		    "%s: shared_mem banks must be a power of two up to 64, width 4 or 8, "
		    "latency at most 100000",
		    who);
	if (g->dram_latency > 100000)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: dram latency above 100000 cycles",
				   who);
	if (g->n_units == 0 || g->n_units > MPXKIT_SIMT_MAX_UNITS)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: needs 1 to 32 unit lines", who);
	for (size_t u = 0; u < g->n_units; u++)
		if (g->units[u].latency < 1 || g->units[u].latency > 100000 ||
		    g->units[u].initiation < 1 || g->units[u].initiation > 100000)
			return mpxkit_fail(
			    diag, MPXKIT_ERANGE,
			    "%s: unit %s: latency and initiation must be 1 to 100000", who,
			    g->units[u].name);
	if (g->n_ops == 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: no op lines and no 'ops builtin'",
				   who);
	for (size_t i = 0; i < g->n_ops; i++)
		if (g->ops[i].unit >= g->n_units || g->ops[i].cls >= MPXKIT_SIMT_N_CLASSES ||
		    g->ops[i].kind > MPXKIT_SIMT_KIND_BARRIER ||
		    g->ops[i].space > MPXKIT_SIMT_GENERIC)
			return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: op %s is malformed", who,
					   g->ops[i].name);
	return 0;
}

/* ---- parser --------------------------------------------------------------------------------- */

typedef struct parse {
	const char *name;
	unsigned long line;
	mpxkit_diag *diag;
} parse;

static int perr(parse *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(parse *p, int code, const char *fmt, ...)
{
	char msg[MPXKIT_DIAG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return mpxkit_fail(p->diag, code, "%s:%lu: %s", p->name, p->line, msg);
}

/* A whole decimal number in [lo, hi]. */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > hi)
			return -1;
	}
	if (v < lo)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* A plain decimal (digits, at most one point): no sign, exponent, hex, inf or nan. */
static int parse_real(const char *s, double *out)
{
	int digits = 0, points = 0;
	char *end;

	for (const char *q = s; *q; q++) {
		if (*q >= '0' && *q <= '9')
			digits++;
		else if (*q == '.' && points == 0)
			points++;
		else
			return -1;
	}
	if (digits == 0 || digits > 40)
		return -1;
	*out = strtod(s, &end);
	return *end == '\0' && isfinite(*out) ? 0 : -1;
}

static int valid_unit_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 15)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int valid_opcode(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 23)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

enum { F_U32, F_REAL, F_WRITE, F_GLOBAL };

typedef struct field {
	const char *key;
	int type;
	size_t offset; /* into mpxkit_simt_gpu */
	uint32_t lo, hi;
} field;

#define G(f) offsetof(mpxkit_simt_gpu, f)

static const field l1_fields[] = {
    {"sets", F_U32, G(l1.sets), 1, 1u << 24},
    {"ways", F_U32, G(l1.ways), 1, 1024},
    {"line", F_U32, G(l1.line), 1, 1024},
    {"sector", F_U32, G(l1.sector), 1, 1024},
    {"latency", F_U32, G(l1.latency), 0, 100000},
    {"write", F_WRITE, G(l1.write), 0, 0},
    {"global", F_GLOBAL, G(l1_global_cached), 0, 0},
    {"request_bytes", F_U32, G(l1_request_bytes), 4, 1024},
    {"tags_per_cycle", F_U32, G(l1_tags_per_cycle), 1, 64},
    {NULL, 0, 0, 0, 0},
};
static const field l2_fields[] = {
    {"sets", F_U32, G(l2.sets), 1, 1u << 24},
    {"ways", F_U32, G(l2.ways), 1, 1024},
    {"line", F_U32, G(l2.line), 1, 1024},
    {"sector", F_U32, G(l2.sector), 1, 1024},
    {"latency", F_U32, G(l2.latency), 0, 100000},
    {"write", F_WRITE, G(l2.write), 0, 0},
    {"bytes_per_cycle", F_REAL, G(l2_bytes_per_cycle), 0, 0},
    {NULL, 0, 0, 0, 0},
};
static const field icache_fields[] = {
    {"sets", F_U32, G(icache.sets), 1, 1u << 24},
    {"ways", F_U32, G(icache.ways), 1, 1024},
    {"line", F_U32, G(icache.line), 1, 1024},
    {"prefetch", F_U32, G(icache_prefetch), 0, 64},
    {NULL, 0, 0, 0, 0},
};
static const field shared_fields[] = {
    {"banks", F_U32, G(shared_banks), 1, 64},
    {"width", F_U32, G(shared_width), 4, 8},
    {"latency", F_U32, G(shared_latency), 0, 100000},
    {NULL, 0, 0, 0, 0},
};
static const field dram_fields[] = {
    {"latency", F_U32, G(dram_latency), 0, 100000},
    {"bytes_per_cycle", F_REAL, G(dram_bytes_per_cycle), 0, 0},
    {NULL, 0, 0, 0, 0},
};

typedef struct scalar {
	const char *key;
	int type; /* F_U32 or F_REAL */
	size_t offset;
	uint32_t lo, hi;
} scalar;

static const scalar scalars[] = {
    {"sms", F_U32, G(sms), 1, 4096},
    {"clock_mhz", F_REAL, G(clock_mhz), 0, 0},
    {"warp_size", F_U32, G(warp_size), 32, 32},
    {"schedulers", F_U32, G(schedulers), 1, 16},
    {"max_warps", F_U32, G(max_warps), 1, 1024},
    {"max_blocks", F_U32, G(max_blocks), 1, 1024},
    {"max_threads_per_block", F_U32, G(max_threads_per_block), 32, 4096},
    {"registers", F_U32, G(registers), 1, 1u << 24},
    {"register_unit", F_U32, G(register_unit), 1, 65536},
    {"shared_per_sm", F_U32, G(shared_per_sm), 0, 1u << 30},
    {"shared_per_block", F_U32, G(shared_per_block), 0, 1u << 30},
    {"shared_unit", F_U32, G(shared_unit), 1, 1u << 20},
    {"launch_cycles", F_U32, G(launch_cycles), 0, 1000000000u},
};
#define N_SCALARS (sizeof scalars / sizeof scalars[0])

typedef struct structured {
	const char *key;
	const field *fields;
} structured;

static const structured structs[] = {
    {"l1", l1_fields},	       {"l2", l2_fields},
    {"icache", icache_fields}, {"shared_mem", shared_fields},
    {"dram", dram_fields},
};
#define N_STRUCTS (sizeof structs / sizeof structs[0])

static int set_field(parse *p, mpxkit_simt_gpu *g, const char *key, const field *f,
		     const char *value)
{
	char *base = (char *)g + f->offset;
	uint32_t u;
	double d;

	switch (f->type) {
	case F_U32:
		if (parse_u32(value, f->lo, f->hi, &u) < 0)
			return perr(p, MPXKIT_ERANGE,
				    "%s %s=%s: a whole number from %u to %u expected", key, f->key,
				    value, f->lo, f->hi);
		memcpy(base, &u, sizeof u);
		return 0;
	case F_REAL:
		if (parse_real(value, &d) < 0 || !(d > 0 && d <= 1e9))
			return perr(p, MPXKIT_ERANGE,
				    "%s %s=%s: a decimal above 0 and at most 10^9 expected", key,
				    f->key, value);
		memcpy(base, &d, sizeof d);
		return 0;
	case F_WRITE:
		if (strcmp(value, "through") == 0)
			*(uint8_t *)base = MPXKIT_SIMT_WRITE_THROUGH;
		else if (strcmp(value, "back") == 0)
			*(uint8_t *)base = MPXKIT_SIMT_WRITE_BACK;
		else
			return perr(p, MPXKIT_EFORMAT, "%s write=%s: 'through' or 'back' expected",
				    key, value);
		return 0;
	default: /* F_GLOBAL */
		if (strcmp(value, "cached") == 0)
			u = 1;
		else if (strcmp(value, "uncached") == 0)
			u = 0;
		else
			return perr(p, MPXKIT_EFORMAT,
				    "%s global=%s: 'cached' or 'uncached' expected", key, value);
		memcpy(base, &u, sizeof(int));
		return 0;
	}
}

static int parse_struct(parse *p, mpxkit_simt_gpu *g, const structured *s, char **tok, int n)
{
	unsigned seen = 0, all = 0;
	int i, k;

	for (k = 0; s->fields[k].key; k++)
		all |= 1u << k;
	if (strcmp(s->key, "icache") == 0 && n == 2 && strcmp(tok[1], "none") == 0) {
		memset(&g->icache, 0, sizeof g->icache);
		g->icache_prefetch = 0;
		return 0;
	}
	for (i = 1; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		if (eq == NULL)
			return perr(p, MPXKIT_EFORMAT, "%s: field '%s' is not name=value", s->key,
				    tok[i]);
		*eq = '\0';
		for (k = 0; s->fields[k].key; k++)
			if (strcmp(s->fields[k].key, tok[i]) == 0)
				break;
		if (s->fields[k].key == NULL)
			return perr(p, MPXKIT_EFORMAT, "%s: unknown field '%s'", s->key, tok[i]);
		if (seen & (1u << k))
			return perr(p, MPXKIT_EFORMAT, "%s: field '%s' given twice", s->key,
				    tok[i]);
		seen |= 1u << k;
		if ((k = set_field(p, g, s->key, &s->fields[k], eq + 1)) < 0)
			return k;
	}
	if (seen != all) {
		for (k = 0; s->fields[k].key; k++)
			if (!(seen & (1u << k)))
				break;
		return perr(p, MPXKIT_EFORMAT, "%s: field '%s' missing", s->key, s->fields[k].key);
	}
	if (strcmp(s->key, "icache") == 0)
		g->icache.sector = g->icache.line; /* an instruction line is fetched whole */
	return 0;
}

static int parse_unit(parse *p, mpxkit_simt_gpu *g, char **tok, int n)
{
	mpxkit_simt_unit *u;
	uint32_t have = 0;

	if (n != 4)
		return perr(p, MPXKIT_EFORMAT, "unit: 'unit NAME latency=L initiation=I' expected");
	if (!valid_unit_name(tok[1]))
		return perr(p, MPXKIT_EFORMAT, "unit name '%s': 1 to 15 of a-z, 0-9, _", tok[1]);
	if (mpxkit__simt_gpu_unit(g, tok[1]) >= 0)
		return perr(p, MPXKIT_EFORMAT, "unit %s declared twice", tok[1]);
	if (g->n_units == MPXKIT_SIMT_MAX_UNITS)
		return perr(p, MPXKIT_ERANGE, "more than 32 units");
	u = &g->units[g->n_units];
	snprintf(u->name, sizeof u->name, "%s", tok[1]);
	for (int i = 2; i < 4; i++) {
		uint32_t *dst;
		if (strncmp(tok[i], "latency=", 8) == 0 && !(have & 1))
			dst = &u->latency, have |= 1;
		else if (strncmp(tok[i], "initiation=", 11) == 0 && !(have & 2))
			dst = &u->initiation, have |= 2;
		else
			return perr(p, MPXKIT_EFORMAT, "unit %s: 'latency=L initiation=I' expected",
				    tok[1]);
		if (parse_u32(strchr(tok[i], '=') + 1, 1, 100000, dst) < 0)
			return perr(p, MPXKIT_ERANGE,
				    "unit %s: %s: a whole number from 1 to 100000 expected", tok[1],
				    tok[i]);
	}
	g->n_units++;
	return 0;
}

static int parse_kind(const char *s, mpxkit_simt_op *op)
{
	const char *colon = strchr(s, ':');
	size_t n;

	if (strcmp(s, "barrier") == 0) {
		op->kind = MPXKIT_SIMT_KIND_BARRIER;
		return 0;
	}
	if (colon == NULL)
		return -1;
	n = (size_t)(colon - s);
	for (int k = MPXKIT_SIMT_KIND_LOAD; k <= MPXKIT_SIMT_KIND_ATOMIC; k++)
		if (strlen(kind_names[k]) == n && strncmp(s, kind_names[k], n) == 0)
			for (int sp = 0; sp <= MPXKIT_SIMT_GENERIC; sp++)
				if (strcmp(colon + 1, space_names[sp]) == 0) {
					op->kind = (uint8_t)k;
					op->space = (uint8_t)sp;
					return 0;
				}
	return -1;
}

static int parse_op(parse *p, mpxkit_simt_gpu *g, char **tok, int n)
{
	mpxkit_simt_op op = {{0}, 0, 0, MPXKIT_SIMT_KIND_NONE, MPXKIT_SIMT_GLOBAL};
	int u, c;

	if (n != 4 && n != 5)
		return perr(p, MPXKIT_EFORMAT, "op: 'op OPCODE UNIT CLASS [KIND]' expected");
	if (!valid_opcode(tok[1]))
		return perr(p, MPXKIT_EFORMAT,
			    "op '%s': a base opcode of 1 to 23 of A-Z, 0-9, _ expected", tok[1]);
	snprintf(op.name, sizeof op.name, "%s", tok[1]);
	if ((u = mpxkit__simt_gpu_unit(g, tok[2])) < 0)
		return perr(p, MPXKIT_EFORMAT,
			    "op %s names unit '%s', which no earlier unit line declares", tok[1],
			    tok[2]);
	op.unit = (uint8_t)u;
	for (c = 0; c < MPXKIT_SIMT_N_CLASSES; c++)
		if (strcmp(class_names[c], tok[3]) == 0)
			break;
	if (c == MPXKIT_SIMT_N_CLASSES)
		return perr(p, MPXKIT_EFORMAT,
			    "op %s: unknown class '%s' (fp_32, integer, control, ...)", tok[1],
			    tok[3]);
	op.cls = (uint8_t)c;
	if (n == 5 && parse_kind(tok[4], &op) < 0)
		return perr(
		    p, MPXKIT_EFORMAT,
		    "op %s: kind '%s': load:, store: or atomic: with global, shared, local or "
		    "generic, or barrier expected",
		    tok[1], tok[4]);
	if (mpxkit__simt_gpu_set_op(g, &op) < 0)
		return perr(p, MPXKIT_ENOMEM, "out of memory");
	return 0;
}

/* Splits a line in place into blank-separated tokens; -1 when there are too many. */
static int tokenize(char *s, char **tok)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			*s++ = '\0';
		if (*s == '\0')
			return n;
		if (n == GPU_MAX_TOKENS)
			return -1;
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
}

/* Everything after the key, trimmed: the name's value. */
static int parse_name(parse *p, mpxkit_simt_gpu *g, const char *rest)
{
	size_t n;

	while (*rest == ' ' || *rest == '\t')
		rest++;
	n = strlen(rest);
	while (n > 0 && (rest[n - 1] == ' ' || rest[n - 1] == '\t'))
		n--;
	if (n < 1 || n >= sizeof g->name)
		return perr(p, MPXKIT_EFORMAT, "name: 1 to 63 characters expected");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)rest[i] < 0x20 || (unsigned char)rest[i] > 0x7e)
			return perr(p, MPXKIT_EFORMAT, "name: printable ASCII expected");
	memcpy(g->name, rest, n);
	g->name[n] = '\0';
	return 0;
}

enum {
	SEEN_NAME = N_SCALARS,
	SEEN_STRUCT0 = N_SCALARS + 1,
	SEEN_OPS = SEEN_STRUCT0 + N_STRUCTS,
	SEEN_COUNT
};

static int parse_line(parse *p, mpxkit_simt_gpu *g, char *line, unsigned char *seen)
{
	char *tok[GPU_MAX_TOKENS], *rest;
	int n;
	size_t i;

	if (strncmp(line, "name", 4) == 0 &&
	    (line[4] == ' ' || line[4] == '\t' || line[4] == '\0')) {
		if (seen[SEEN_NAME]++)
			return perr(p, MPXKIT_EFORMAT, "name given twice");
		return parse_name(p, g, line + 4);
	}
	rest = line;
	if ((n = tokenize(rest, tok)) < 0)
		return perr(p, MPXKIT_EFORMAT, "more than %d fields", GPU_MAX_TOKENS);
	for (i = 0; i < N_SCALARS; i++) {
		uint32_t u;
		double d;
		if (strcmp(tok[0], scalars[i].key) != 0)
			continue;
		if (seen[i]++)
			return perr(p, MPXKIT_EFORMAT, "%s given twice", tok[0]);
		if (n != 2)
			return perr(p, MPXKIT_EFORMAT, "%s: one value expected", tok[0]);
		if (scalars[i].type == F_REAL) {
			if (parse_real(tok[1], &d) < 0 || !(d > 0 && d <= 100000))
				return perr(p, MPXKIT_ERANGE,
					    "%s %s: a decimal above 0 and at most 100000 expected",
					    tok[0], tok[1]);
			memcpy((char *)g + scalars[i].offset, &d, sizeof d);
		} else {
			if (parse_u32(tok[1], scalars[i].lo, scalars[i].hi, &u) < 0)
				return perr(p, MPXKIT_ERANGE,
					    "%s %s: a whole number from %u to %u expected", tok[0],
					    tok[1], scalars[i].lo, scalars[i].hi);
			memcpy((char *)g + scalars[i].offset, &u, sizeof u);
		}
		return 0;
	}
	for (i = 0; i < N_STRUCTS; i++)
		if (strcmp(tok[0], structs[i].key) == 0) {
			if (seen[SEEN_STRUCT0 + i]++)
				return perr(p, MPXKIT_EFORMAT, "%s given twice", tok[0]);
			return parse_struct(p, g, &structs[i], tok, n);
		}
	if (strcmp(tok[0], "unit") == 0)
		return parse_unit(p, g, tok, n);
	if (strcmp(tok[0], "op") == 0)
		return parse_op(p, g, tok, n);
	if (strcmp(tok[0], "ops") == 0) {
		int rc;
		char who[96];
		if (seen[SEEN_OPS]++)
			return perr(p, MPXKIT_EFORMAT, "ops given twice");
		if (n != 2 || strcmp(tok[1], "builtin") != 0)
			return perr(p, MPXKIT_EFORMAT, "'ops builtin' expected");
		if (g->n_ops > 0)
			return perr(p, MPXKIT_EFORMAT,
				    "'ops builtin' must come before any op line");
		snprintf(who, sizeof who, "%s:%lu", p->name, p->line);
		rc = mpxkit__simt_gpu_use_builtin(g, who, p->diag);
		return rc;
	}
	return perr(p, MPXKIT_EFORMAT, "unknown key '%s'", tok[0]);
}

int mpxkit_simt_gpu_parse(const char *name, const char *text, size_t len, mpxkit_simt_gpu **out,
			  mpxkit_diag *diag)
{
	parse p = {name ? name : "GPU description", 0, diag};
	unsigned char seen[SEEN_COUNT] = {0};
	mpxkit_simt_gpu *g;
	char line[GPU_MAX_LINE + 1];
	int magic = 0, rc = 0;
	size_t pos = 0;

	if (out == NULL || (text == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "GPU description: missing argument");
	if (len > GPU_MAX_BYTES)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: larger than %u bytes, the limit for a GPU description",
				   p.name, GPU_MAX_BYTES);
	g = calloc(1, sizeof *g);
	if (g == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", p.name);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *hash;
		p.line++;
		if (n > GPU_MAX_LINE) {
			rc = perr(&p, MPXKIT_ERANGE, "line longer than %d bytes", GPU_MAX_LINE);
			goto fail;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		if (memchr(line, '\0', n) != NULL) {
			rc = perr(&p, MPXKIT_EFORMAT, "NUL byte: not a text file");
			goto fail;
		}
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		{
			char *s = line;
			while (*s == ' ' || *s == '\t')
				s++;
			if (*s == '\0')
				continue;
			if (!magic) {
				char *tok[GPU_MAX_TOKENS];
				int nt = tokenize(s, tok);
				if (nt < 1 || strcmp(tok[0], "mpxkit-gpu") != 0) {
					rc = perr(
					    &p, MPXKIT_EFORMAT,
					    "not a GPU description: 'mpxkit-gpu 1' expected first");
					goto fail;
				}
				if (nt != 2 || strcmp(tok[1], "1") != 0) {
					rc = perr(
					    &p, MPXKIT_EVERSION,
					    "GPU description version '%s' is not supported (1)",
					    nt >= 2 ? tok[1] : "");
					goto fail;
				}
				magic = 1;
				continue;
			}
			for (char *q = s; *q; q++)
				if ((unsigned char)*q < 0x20 && *q != '\t') {
					rc = perr(&p, MPXKIT_EFORMAT, "control character");
					goto fail;
				}
			if ((rc = parse_line(&p, g, s, seen)) < 0)
				goto fail;
		}
	}
	if (!magic) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: empty: no 'mpxkit-gpu 1' line", p.name);
		goto fail;
	}
	if (!seen[SEEN_NAME]) {
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: key 'name' missing", p.name);
		goto fail;
	}
	for (size_t i = 0; i < N_SCALARS; i++)
		if (!seen[i]) {
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: key '%s' missing", p.name,
					 scalars[i].key);
			goto fail;
		}
	for (size_t i = 0; i < N_STRUCTS; i++)
		if (!seen[SEEN_STRUCT0 + i]) {
			rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: key '%s' missing", p.name,
					 structs[i].key);
			goto fail;
		}
	if ((rc = mpxkit__simt_gpu_check(g, p.name, diag)) < 0)
		goto fail;
	*out = g;
	return 0;
fail:
	mpxkit_simt_gpu_free(g);
	return rc;
}

int mpxkit_simt_gpu_read(const char *path, mpxkit_simt_gpu **out, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT | MPXKIT_READER_GZIP, GPU_MAX_BYTES, 0,
				     "GPU description"};
	char *buf = NULL;
	size_t len = 0;
	int rc = mpxkit_read_file(path, &opt, &buf, &len, diag);

	if (rc == 0)
		rc = mpxkit_simt_gpu_parse(path, buf, len, out, diag);
	free(buf);
	return rc;
}

static int valid_short_name(const char *s)
{
	if (*s == '\0' || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return 0;
	return 1;
}

int mpxkit_simt_gpu_load(const char *what, mpxkit_simt_gpu **out, mpxkit_diag *diag)
{
	size_t n;
	char rel[96], *path;
	int rc;

	if (what == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "GPU description: missing argument");
	n = strlen(what);
	if (strchr(what, '/') != NULL || (n > 4 && strcmp(what + n - 4, ".gpu") == 0))
		return mpxkit_simt_gpu_read(what, out, diag);
	if (!valid_short_name(what))
		return mpxkit_fail(
		    diag, MPXKIT_ENOENT,
		    "GPU '%s': neither a file (give a path) nor a shipped name (gtx1080, "
		    "qv100, rtx3070)",
		    what);
	snprintf(rel, sizeof rel, "gpus/%s.gpu", what);
	path = mpxkit__datadir_path(rel);
	if (path == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "GPU '%s': out of memory", what);
	rc = mpxkit_simt_gpu_read(path, out, diag);
	free(path);
	return rc;
}

const char *mpxkit_simt_gpu_default_for(unsigned v)
{
	if (v >= 60 && v < 70)
		return "gtx1080";
	if (v >= 70 && v < 80)
		return "qv100";
	if (v >= 80 && v < 90)
		return "rtx3070";
	return NULL;
}

/* ---- writer --------------------------------------------------------------------------------- */

static void put_cache(FILE *f, const char *key, const mpxkit_simt_cache_desc *c)
{
	fprintf(f, "%s sets=%u ways=%u line=%u", key, c->sets, c->ways, c->line);
}

static const char *write_name(int w)
{
	return w == MPXKIT_SIMT_WRITE_BACK ? "back" : "through";
}

/* The built-in entry with this name, resolved against the GPU's units, differs from op? */
static int differs_from_builtin(const mpxkit_simt_gpu *g, const mpxkit_simt_op *op)
{
	size_t lo = 0, hi = mpxkit__simt_n_builtin_ops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(mpxkit__simt_builtin_ops[mid].name, op->name);
		if (c == 0) {
			const simt_builtin_op *b = &mpxkit__simt_builtin_ops[mid];
			return mpxkit__simt_gpu_unit(g, b->unit) != op->unit || b->cls != op->cls ||
			       b->kind != op->kind ||
			       (b->kind != MPXKIT_SIMT_KIND_NONE &&
				b->kind != MPXKIT_SIMT_KIND_BARRIER && b->space != op->space);
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 1;
}

int mpxkit_simt_gpu_write(const mpxkit_simt_gpu *g, FILE *f)
{
	fprintf(f, "mpxkit-gpu 1\nname %s\n", g->name);
	for (size_t i = 0; i < N_SCALARS; i++) {
		const char *p = (const char *)g + scalars[i].offset;
		if (scalars[i].type == F_REAL) {
			double d;
			memcpy(&d, p, sizeof d);
			fprintf(f, "%s %.15g\n", scalars[i].key, d);
		} else {
			uint32_t u;
			memcpy(&u, p, sizeof u);
			fprintf(f, "%s %u\n", scalars[i].key, u);
		}
	}
	put_cache(f, "l1", &g->l1);
	fprintf(f, " sector=%u latency=%u write=%s global=%s request_bytes=%u tags_per_cycle=%u\n",
		g->l1.sector, g->l1.latency, write_name(g->l1.write),
		g->l1_global_cached ? "cached" : "uncached", g->l1_request_bytes,
		g->l1_tags_per_cycle);
	put_cache(f, "l2", &g->l2);
	fprintf(f, " sector=%u latency=%u write=%s bytes_per_cycle=%.15g\n", g->l2.sector,
		g->l2.latency, write_name(g->l2.write), g->l2_bytes_per_cycle);
	if (g->icache.sets == 0)
		fputs("icache none\n", f);
	else {
		put_cache(f, "icache", &g->icache);
		fprintf(f, " prefetch=%u\n", g->icache_prefetch);
	}
	fprintf(f, "shared_mem banks=%u width=%u latency=%u\n", g->shared_banks, g->shared_width,
		g->shared_latency);
	fprintf(f, "dram latency=%u bytes_per_cycle=%.15g\n", g->dram_latency,
		g->dram_bytes_per_cycle);
	for (size_t u = 0; u < g->n_units; u++)
		fprintf(f, "unit %s latency=%u initiation=%u\n", g->units[u].name,
			g->units[u].latency, g->units[u].initiation);
	if (g->ops_builtin)
		fputs("ops builtin\n", f);
	for (size_t i = 0; i < g->n_ops; i++) {
		const mpxkit_simt_op *op = &g->ops[i];
		if (g->ops_builtin && !differs_from_builtin(g, op))
			continue;
		fprintf(f, "op %s %s %s", op->name, g->units[op->unit].name, class_names[op->cls]);
		if (op->kind == MPXKIT_SIMT_KIND_BARRIER)
			fputs(" barrier", f);
		else if (op->kind != MPXKIT_SIMT_KIND_NONE)
			fprintf(f, " %s:%s", kind_names[op->kind], space_names[op->space]);
		fputc('\n', f);
	}
	return ferror(f) ? -MPXKIT_EIO : 0;
}

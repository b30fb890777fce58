/* SPDX-License-Identifier: BSD-3-Clause */
/* Importers of the public GemStone and Nikov layouts into predict datasets (doc/predict-format.md).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "predict_impl.h"

/* Every input file is read whole through the bounded reader, at most this. */
#define IMPORT_MAX_BYTES (64u << 20)
#define MAX_COLUMNS	 256

typedef struct input {
	const char *name; /* path or label */
	const char *path; /* NULL: buf */
	const char *buf;
	size_t len;
} input;

/* ---- one table: header, then lines split at a separator ----------------------------------- */

typedef struct table {
	const input *in;
	char sep; /* 0: told by the header */
	size_t n_cols;
	char *cols[MAX_COLUMNS];
	/* per line */
	size_t n_fields;
	char *field[MAX_COLUMNS];
	size_t flen[MAX_COLUMNS];
	uint64_t lineno;
	int (*row)(struct table *t, void *arg, mpxkit_diag *diag);
	void *arg;
	char *scratch;
	size_t scratch_cap;
} table;

static int tbad(const table *t, mpxkit_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int tbad(const table *t, mpxkit_diag *diag, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%llu: %s", t->in->name,
			   (unsigned long long)t->lineno, why);
}

static void free_table(table *t)
{
	for (size_t i = 0; i < t->n_cols; i++)
		free(t->cols[i]);
	free(t->scratch);
	t->n_cols = 0;
	t->scratch = NULL;
}

/* Splits into t->field (in t->scratch); -1 when more than MAX_COLUMNS. */
static int split(table *t, const char *line, size_t len)
{
	size_t start = 0;

	if (len + 1 > t->scratch_cap) {
		char *p = realloc(t->scratch, len + 1);
		if (p == NULL)
			return -2;
		t->scratch = p;
		t->scratch_cap = len + 1;
	}
	memcpy(t->scratch, line, len);
	t->scratch[len] = '\0';
	t->n_fields = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && t->scratch[i] != t->sep)
			continue;
		if (t->n_fields == MAX_COLUMNS)
			return -1;
		t->scratch[i] = '\0';
		t->field[t->n_fields] = t->scratch + start;
		t->flen[t->n_fields++] = i - start;
		start = i + 1;
	}
	return 0;
}

static int table_line(void *arg, const char *line, size_t len, uint64_t no, mpxkit_diag *diag)
{
	table *t = arg;
	int rc;

	t->lineno = no;
	if (no == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		line += 3, len -= 3;
	if (len == 0)
		return tbad(t, diag, "blank line");
	/* sep 0: tabs when the header holds one (sample files), else commas. */
	if (t->sep == 0)
		t->sep = memchr(line, '\t', len) ? '\t' : ',';
	if ((rc = split(t, line, len)) == -2)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (rc < 0)
		return tbad(t, diag, "more than %d columns", MAX_COLUMNS);
	if (t->n_cols == 0) {
		for (size_t i = 0; i < t->n_fields; i++)
			if ((t->cols[i] = strdup(t->field[i])) == NULL) {
				t->n_cols = i;
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
			}
		t->n_cols = t->n_fields;
		return t->row(t, t->arg, diag);
	}
	if (t->n_fields != t->n_cols)
		return tbad(t, diag, "%zu fields, the header has %zu", t->n_fields, t->n_cols);
	return t->row(t, t->arg, diag);
}

static int read_table(const input *in, char sep, int (*row)(table *, void *, mpxkit_diag *),
		      void *arg, mpxkit_diag *diag)
{
	table t = {.in = in, .sep = sep, .row = row, .arg = arg};
	int rc = mpxkit__pd_each_line(in->name, in->path, in->buf, in->len, IMPORT_MAX_BYTES,
				      "input table", table_line, &t, diag);

	if (rc == 0 && t.n_cols == 0)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: empty file", in->name);
	free_table(&t);
	return rc;
}

/* The column named name, or -1. */
static int column(const table *t, const char *name)
{
	for (size_t i = 0; i < t->n_cols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return (int)i;
	return -1;
}

static int need_columns(const table *t, const char *const *names, int *idx, size_t n,
			mpxkit_diag *diag)
{
	for (size_t i = 0; i < n; i++)
		if ((idx[i] = column(t, names[i])) < 0)
			return tbad(t, diag, "no column '%s'", names[i]);
	return 0;
}

static int field_real(const table *t, int col, double *v, mpxkit_diag *diag)
{
	if (mpxkit__pd_real(t->field[col], t->flen[col], v) < 0)
		return tbad(t, diag, "column '%s': '%.40s' is not a number", t->cols[col],
			    t->field[col]);
	return 0;
}

static int field_whole(const table *t, int col, uint64_t max, uint64_t *v, mpxkit_diag *diag)
{
	if (mpxkit__pd_whole(t->field[col], t->flen[col], max, v) < 0)
		return tbad(t, diag, "column '%s': '%.40s' is not a whole number", t->cols[col],
			    t->field[col]);
	return 0;
}

static int field_name(const table *t, int col, mpxkit_diag *diag)
{
	if (!mpxkit__pd_valid_name(t->field[col], t->flen[col], 1))
		return tbad(t, diag,
			    "column '%s': empty, too long, or holds a comma, quote or "
			    "control byte",
			    t->cols[col]);
	return 0;
}

/* ---- GemStone ---------------------------------------------------------------------------------
 */

static const char *const gs_events[] = {"CPU_CYCLES",	       "INST_SPEC", "L2D_CACHE_LD",
					"UNALIGNED_LDST_SPEC", "DP_SPEC",   "L1I_CACHE",
					"BUS_ACCESS"};
static const char *const gs_suffix[] = {"CycleCount", "Event 0x1b", "Event 0x50", "Event 0x6a",
					"Event 0x73", "Event 0x14", "Event 0x19"};
enum { GS_EVENTS = 7, GS_FIRST_CORE = 4, GS_CORES = 4 };

typedef struct gs_state {
	mpxkit_pdata *d;
	int col[8];
	int ev[GS_CORES][GS_EVENTS];
	int status;
} gs_state;

static int gs_header(table *t, gs_state *s, mpxkit_diag *diag)
{
	static const char *const names[] = {
	    "Workload Name",	"Core Mask",   "Frequency A15", "Workload Duration",
	    "Samples Averaged", "Voltage A15", "Power A15"};
	char name[64];

	if (t->n_cols < 2 || t->cols[0][0] != '\0' || column(t, "Workload Name") < 0)
		return tbad(t, diag,
			    "not a GemStone powmon table (tab-separated, an empty first "
			    "header field, 'Workload Name', ...)");
	if (need_columns(t, names, s->col, 7, diag) < 0)
		return -MPXKIT_EFORMAT;
	s->status = column(t, "Status");
	for (int c = 0; c < GS_CORES; c++)
		for (int e = 0; e < GS_EVENTS; e++) {
			snprintf(name, sizeof name, "Core %d %s", GS_FIRST_CORE + c, gs_suffix[e]);
			if ((s->ev[c][e] = column(t, name)) < 0)
				return tbad(t, diag, "no column '%s'", name);
		}
	return 0;
}

static int gs_row(table *t, void *arg, mpxkit_diag *diag)
{
	gs_state *s = arg;
	mpxkit_pdata_row r = {.run = 0, .sample = -1};
	double v[GS_EVENTS] = {0}, dur, samples, x;
	size_t threads = 1;
	int rc;

	if (t->lineno == 1)
		return gs_header(t, s, diag);
	if (s->status >= 0 && t->flen[s->status] != 0)
		return tbad(t, diag, "Status '%.40s': only rows without a status are measurements",
			    t->field[s->status]);
	if ((rc = field_name(t, s->col[0], diag)) < 0 ||
	    (rc = field_real(t, s->col[2], &r.freq_mhz, diag)) < 0 ||
	    (rc = field_real(t, s->col[3], &dur, diag)) < 0 ||
	    (rc = field_real(t, s->col[4], &samples, diag)) < 0 ||
	    (rc = field_real(t, s->col[5], &r.voltage_v, diag)) < 0 ||
	    (rc = field_real(t, s->col[6], &r.power_w, diag)) < 0)
		return rc;
	if (!(r.freq_mhz > 0) || !(dur > 0) || !(samples >= 1) || !(r.voltage_v > 0) ||
	    !(r.power_w >= 0))
		return tbad(t, diag, "frequency, duration, samples, voltage or power out of range");
	for (size_t i = 0; i < t->flen[s->col[1]]; i++)
		threads += t->field[s->col[1]][i] == ':';
	r.threads = (uint32_t)threads;
	r.time_s = dur / samples;
	for (int c = 0; c < GS_CORES; c++)
		for (int e = 0; e < GS_EVENTS; e++) {
			if ((rc = field_real(t, s->ev[c][e], &x, diag)) < 0)
				return rc;
			if (!(x >= 0))
				return tbad(t, diag, "column '%s': negative count",
					    t->cols[s->ev[c][e]]);
			v[e] += x;
		}
	rc = mpxkit_pdata_append(s->d, t->field[s->col[0]], "A15", &r, v, diag);
	return rc < 0 ? tbad(t, diag, "%s", diag ? diag->msg : "bad row") : 0;
}

static int import_gemstone(const input *in, size_t n, const char *name, mpxkit_pdata **out,
			   mpxkit_diag *diag)
{
	gs_state s = {0};
	int rc = mpxkit_pdata_new(&s.d, name, MPXKIT_TIME_WINDOW, gs_events, GS_EVENTS, diag);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = read_table(&in[i], '\t', gs_row, &s, diag);
	if (rc == 0) {
		s.d->role[MPXKIT_ROLE_CYCLES] = 0;
		s.d->role[MPXKIT_ROLE_INSTRUCTIONS] = 1;
		s.d->role[MPXKIT_ROLE_MISSES] = 6;
		s.d->role[MPXKIT_ROLE_ICACHE] = 5;
		s.d->role[MPXKIT_ROLE_INT_OPS] = 4;
		rc = mpxkit_pdata_set_meta(
		    s.d, "source", "github.com/mattw200/gemstone-applypower 9a64fc66", diag);
	}
	if (rc == 0)
		rc = mpxkit_pdata_set_meta(s.d, "licence", "BSD-3-Clause, (c) 2018 Matthew Walker",
					   diag);
	if (rc < 0) {
		mpxkit_pdata_free(s.d);
		return rc;
	}
	*out = s.d;
	return 0;
}

/* ---- Nikov ------------------------------------------------------------------------------------
 */

/* One execution's samples: (benchmark, cores, frequency, run, event list). */
typedef struct nk_exec {
	char *bench;
	unsigned cores, list, run;
	double freq;
	double *sum;	       /* per event of the union, NaN where this list does not count it */
	double p_dt, v_dt, dt; /* power and voltage weighted by sample length */
	double p0, v0;	       /* the first sample's, weighted at the end of its file */
	size_t n_samples;
	uint64_t last_ts;
} nk_exec;

typedef struct nk_runtime {
	char *bench, *core;
	unsigned cores, list, run;
	double freq, seconds;
	int cross; /* from the cross-core table */
} nk_runtime;

typedef struct nk_state {
	size_t n_events;
	char *events[MPXKIT_PDATA_MAX_EVENTS];
	size_t n_exec, cap_exec;
	nk_exec *exec;
	size_t n_rt, cap_rt;
	nk_runtime *rt;
	/* the file being read */
	int kind; /* 1 samples, 2 runtime, 3 cross-core runtime */
	unsigned list, cores;
	int ev_col[MAX_COLUMNS]; /* file column -> union event, -1 */
	size_t first_exec;	 /* executions of the file being read start here */
	size_t n_steps, cap_steps;
	double *steps;
	int col[10];
} nk_state;

/* The digits after tag in the file's base name ("el2" -> 2), or dflt. */
static unsigned name_number(const char *path, const char *tag, int after, unsigned dflt)
{
	const char *b = strrchr(path, '/'), *p;

	b = b ? b + 1 : path;
	for (p = strstr(b, tag); p; p = strstr(p + 1, tag)) {
		const char *q = after ? p + strlen(tag) : p;
		unsigned v = 0;
		int digits = 0;
		if (after) {
			while (*q >= '0' && *q <= '9' && digits < 6)
				v = v * 10 + (unsigned)(*q++ - '0'), digits++;
			if (digits)
				return v;
		} else {
			/* digits just before the tag: "2core" */
			const char *s = p;
			unsigned mul = 1;
			while (s > b && s[-1] >= '0' && s[-1] <= '9' && digits < 6)
				v += mul * (unsigned)(*--s - '0'), mul *= 10, digits++;
			if (digits)
				return v;
		}
	}
	return dflt;
}

static int nk_event(nk_state *s, const char *name, mpxkit_diag *diag)
{
	for (size_t i = 0; i < s->n_events; i++)
		if (strcmp(s->events[i], name) == 0)
			return (int)i;
	if (s->n_events == MPXKIT_PDATA_MAX_EVENTS)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "more than %d events in all",
				   MPXKIT_PDATA_MAX_EVENTS);
	if ((s->events[s->n_events] = strdup(name)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	return (int)s->n_events++;
}

static const char *const nk_fixed[] = {"#Timestamp",
				       "Benchmark",
				       "Run(#)",
				       "CPU(4) Frequency(MHz)",
				       "CPU(4) Temperature(C)",
				       "A15 Voltage(V)",
				       "A15 Current(A)",
				       "A15 Power(W)"};
enum { NK_FIXED = 8 };

static int nk_sample_header(table *t, nk_state *s, mpxkit_diag *diag)
{
	int ev;

	for (int i = 0; i < NK_FIXED; i++)
		if ((size_t)i >= t->n_cols || strcmp(t->cols[i], nk_fixed[i]) != 0)
			return tbad(t, diag, "sample file: column %d must be '%s'", i + 1,
				    nk_fixed[i]);
	if (t->n_cols == NK_FIXED)
		return tbad(t, diag, "sample file without event columns");
	s->list = name_number(t->in->name, "el", 1, 0);
	if (s->list == 0)
		return tbad(t, diag, "sample file: its name must say its event list (el1, el2)");
	s->cores = name_number(t->in->name, "core", 0, 1);
	for (size_t i = 0; i < t->n_cols; i++)
		s->ev_col[i] = -1;
	for (size_t i = NK_FIXED; i < t->n_cols; i++) {
		if (!mpxkit__pd_valid_name(t->cols[i], strlen(t->cols[i]), 0))
			return tbad(t, diag, "column %zu: bad event name", i + 1);
		for (size_t k = NK_FIXED; k < i; k++)
			if (strcmp(t->cols[k], t->cols[i]) == 0)
				return tbad(t, diag, "duplicate event '%s'", t->cols[i]);
		if ((ev = nk_event(s, t->cols[i], diag)) < 0)
			return ev;
		s->ev_col[i] = ev;
	}
	return 0;
}

static nk_exec *nk_find_exec(nk_state *s, const char *bench, unsigned run, double freq)
{
	/* Samples of one execution are contiguous in every file: look at the newest first. */
	for (size_t i = s->n_exec; i-- > 0;) {
		nk_exec *e = &s->exec[i];
		if (e->list == s->list && e->cores == s->cores && e->run == run &&
		    e->freq == freq && strcmp(e->bench, bench) == 0)
			return e;
	}
	return NULL;
}

static nk_exec *nk_new_exec(nk_state *s, const char *bench, unsigned run, double freq)
{
	nk_exec *e;

	if ((e = mpxkit__pd_grow(s->exec, &s->cap_exec, s->n_exec, sizeof *e)) == NULL)
		return NULL;
	s->exec = e;
	e = &s->exec[s->n_exec];
	memset(e, 0, sizeof *e);
	if ((e->bench = strdup(bench)) == NULL ||
	    (e->sum = malloc(MPXKIT_PDATA_MAX_EVENTS * sizeof *e->sum)) == NULL) {
		free(e->bench);
		return NULL;
	}
	for (size_t i = 0; i < MPXKIT_PDATA_MAX_EVENTS; i++)
		e->sum[i] = NAN;
	e->list = s->list;
	e->cores = s->cores;
	e->run = run;
	e->freq = freq;
	s->n_exec++;
	return e;
}

static int nk_add_step(nk_state *s, double dt)
{
	double *p = mpxkit__pd_grow(s->steps, &s->cap_steps, s->n_steps, sizeof *p);

	if (p == NULL)
		return -1;
	s->steps = p;
	s->steps[s->n_steps++] = dt;
	return 0;
}

static int nk_sample_row(table *t, void *arg, mpxkit_diag *diag)
{
	nk_state *s = arg;
	uint64_t ts, run;
	double freq, volt, power, x, dt;
	nk_exec *e;
	int rc;

	if (t->lineno == 1)
		return nk_sample_header(t, s, diag);
	if ((rc = field_whole(t, 0, UINT64_MAX, &ts, diag)) < 0 ||
	    (rc = field_name(t, 1, diag)) < 0 ||
	    (rc = field_whole(t, 2, UINT32_MAX, &run, diag)) < 0 ||
	    (rc = field_real(t, 3, &freq, diag)) < 0 || (rc = field_real(t, 5, &volt, diag)) < 0 ||
	    (rc = field_real(t, 7, &power, diag)) < 0)
		return rc;
	if (!(freq > 0) || !(volt > 0) || !(power >= 0))
		return tbad(t, diag, "frequency, voltage or power out of range");
	e = nk_find_exec(s, t->field[1], (unsigned)run, freq);
	if (e == NULL && (e = nk_new_exec(s, t->field[1], (unsigned)run, freq)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	if (e->n_samples && ts <= e->last_ts)
		return tbad(t, diag, "timestamp does not increase within the run");
	if (e->n_samples == 0) {
		/* The file does not say when the first sample began: it gets the file's median
		 * step once the file is read. */
		e->p0 = power;
		e->v0 = volt;
	} else {
		dt = (double)(ts - e->last_ts) * 1e-9;
		if (nk_add_step(s, dt) < 0)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		e->p_dt += power * dt;
		e->v_dt += volt * dt;
		e->dt += dt;
	}
	e->last_ts = ts;
	e->n_samples++;
	for (size_t i = NK_FIXED; i < t->n_fields; i++) {
		if ((rc = field_real(t, (int)i, &x, diag)) < 0)
			return rc;
		if (!(x >= 0))
			return tbad(t, diag, "column '%s': negative count", t->cols[i]);
		e->sum[s->ev_col[i]] = (isnan(e->sum[s->ev_col[i]]) ? 0 : e->sum[s->ev_col[i]]) + x;
	}
	return 0;
}

static const char *const rt_cols[] = {"benchmark", "core",     "cores_used", "events_list",
				      "run",	   "freq_mhz", "runtime_s"};
static const char *const xc_cols[] = {"benchmark",   "core", "freq_mhz",
				      "events_list", "run",  "runtime_s"};

static int nk_runtime_row(table *t, void *arg, mpxkit_diag *diag)
{
	nk_state *s = arg;
	nk_runtime *r;
	uint64_t cores = 1, list = 0, run;
	double freq, secs;
	const char *lt;
	int rc, c;

	if (t->lineno == 1) {
		if (s->kind == 2)
			return need_columns(t, rt_cols, s->col, 7, diag);
		return need_columns(t, xc_cols, s->col, 6, diag);
	}
	c = s->kind == 2;
	if ((rc = field_name(t, s->col[0], diag)) < 0 ||
	    (rc = field_name(t, s->col[1], diag)) < 0 ||
	    (c && (rc = field_whole(t, s->col[2], 64, &cores, diag)) < 0) ||
	    (rc = field_whole(t, s->col[c ? 4 : 4], UINT32_MAX / 1000, &run, diag)) < 0 ||
	    (rc = field_real(t, s->col[c ? 5 : 2], &freq, diag)) < 0 ||
	    (rc = field_real(t, s->col[c ? 6 : 5], &secs, diag)) < 0)
		return rc;
	/* events_list is "1" in run-time tables and "list1" in the cross-core one. */
	lt = t->field[s->col[3]];
	if (strncmp(lt, "list", 4) == 0)
		lt += 4;
	if (mpxkit__pd_whole(lt, strlen(lt), 999, &list) < 0)
		return tbad(t, diag, "column 'events_list': '%.40s' is not N or listN",
			    t->field[s->col[3]]);
	if (!(freq > 0) || !(secs > 0) || cores == 0)
		return tbad(t, diag, "frequency, cores_used or runtime_s out of range");
	if ((r = mpxkit__pd_grow(s->rt, &s->cap_rt, s->n_rt, sizeof *r)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	s->rt = r;
	r = &s->rt[s->n_rt];
	memset(r, 0, sizeof *r);
	r->bench = strdup(t->field[s->col[0]]);
	r->core = strdup(t->field[s->col[1]]);
	if (r->bench == NULL || r->core == NULL) {
		free(r->bench);
		free(r->core);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	r->cores = (unsigned)cores;
	r->list = (unsigned)list;
	r->run = (unsigned)run;
	r->freq = freq;
	r->seconds = secs;
	r->cross = s->kind == 3;
	s->n_rt++;
	return 0;
}

/* Which Nikov table a file is, told by its header, then its rows. */
static int nk_row(table *t, void *arg, mpxkit_diag *diag)
{
	nk_state *s = arg;

	if (t->lineno == 1) {
		if (strcmp(t->cols[0], "#Timestamp") == 0)
			s->kind = 1;
		else if (t->n_cols > 2 && strcmp(t->cols[0], "benchmark") == 0 &&
			 strcmp(t->cols[2], "cores_used") == 0)
			s->kind = 2;
		else if (t->n_cols > 2 && strcmp(t->cols[0], "benchmark") == 0 &&
			 strcmp(t->cols[2], "freq_mhz") == 0)
			s->kind = 3;
		else
			return tbad(t, diag,
				    "not a Nikov sample file ('#Timestamp<TAB>...'), "
				    "run-time table ('benchmark,core,cores_used,...') or "
				    "cross-core table ('benchmark,core,freq_mhz,...')");
	}
	return s->kind == 1 ? nk_sample_row(t, arg, diag) : nk_runtime_row(t, arg, diag);
}

static const nk_runtime *nk_lookup_rt(const nk_state *s, const nk_exec *e)
{
	for (size_t i = 0; i < s->n_rt; i++) {
		const nk_runtime *r = &s->rt[i];
		if (!r->cross && r->cores == e->cores && r->list == e->list && r->run == e->run &&
		    r->freq == e->freq && strcmp(r->bench, e->bench) == 0)
			return r;
	}
	return NULL;
}

static int nk_role(const nk_state *s, const char *name)
{
	for (size_t i = 0; i < s->n_events; i++)
		if (strcmp(s->events[i], name) == 0)
			return (int)i;
	return -1;
}

static void nk_roles(const nk_state *s, mpxkit_pdata *d)
{
	static const struct {
		int role;
		const char *names[3];
	} map[] = {
	    {MPXKIT_ROLE_CYCLES, {"CPU_CYCLES"}},
	    {MPXKIT_ROLE_INSTRUCTIONS, {"INST_RETIRED"}},
	    {MPXKIT_ROLE_MISSES, {"L1D_CACHE_REFILL", "L2D_CACHE_ACCESS"}},
	    {MPXKIT_ROLE_ICACHE, {"L1I_CACHE_ACCESS"}},
	    {MPXKIT_ROLE_DCACHE, {"L1D_CACHE_ACCESS", "DATA_MEM_ACCESS"}},
	    {MPXKIT_ROLE_BRANCHES, {"BRANCH_PRED"}},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		for (int k = 0; k < 3 && map[i].names[k]; k++)
			if ((d->role[map[i].role] = nk_role(s, map[i].names[k])) >= 0)
				break;
}

/* Whole-run rows: the executions of each (bench, cores, freq, run) joined over event lists. */
static int nk_join(nk_state *s, mpxkit_pdata *d, mpxkit_diag *diag)
{
	char *done = calloc(s->n_exec + 1, 1);
	double *v = malloc((s->n_events + 1) * sizeof *v),
	       *nv = malloc((s->n_events + 1) * sizeof *nv);
	int rc = 0;

	if (!done || !v || !nv) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; rc == 0 && i < s->n_exec; i++) {
		const nk_exec *a = &s->exec[i];
		mpxkit_pdata_row r = {
		    .freq_mhz = a->freq, .threads = a->cores, .run = a->run, .sample = -1};
		double t_sum = 0, p_dt = 0, v_dt = 0, dt = 0;
		size_t n_lists = 0;
		if (done[i])
			continue;
		for (size_t k = 0; k < s->n_events; k++)
			v[k] = 0, nv[k] = 0;
		for (size_t j = i; j < s->n_exec; j++) {
			const nk_exec *b = &s->exec[j];
			const nk_runtime *rt;
			if (done[j] || b->cores != a->cores || b->run != a->run ||
			    b->freq != a->freq || strcmp(b->bench, a->bench) != 0)
				continue;
			done[j] = 1;
			if ((rt = nk_lookup_rt(s, b)) == NULL) {
				rc = mpxkit_fail(diag, MPXKIT_EFORMAT,
						 "no run time for %s at %g MHz run %u (event list "
						 "%u, %u cores): give the runtime_*.csv table",
						 b->bench, b->freq, b->run, b->list, b->cores);
				goto out;
			}
			t_sum += rt->seconds;
			n_lists++;
			p_dt += b->p_dt;
			v_dt += b->v_dt;
			dt += b->dt;
			for (size_t k = 0; k < s->n_events; k++)
				if (!isnan(b->sum[k]))
					v[k] += b->sum[k], nv[k]++;
		}
		for (size_t k = 0; k < s->n_events; k++)
			v[k] = nv[k] ? v[k] / nv[k] : NAN;
		r.time_s = t_sum / (double)n_lists;
		r.power_w = p_dt / dt;
		r.voltage_v = v_dt / dt;
		rc = mpxkit_pdata_append(d, a->bench, "A15", &r, v, diag);
	}
out:
	free(done);
	free(v);
	free(nv);
	return rc;
}

static int nk_cross_rows(nk_state *s, mpxkit_pdata *d, mpxkit_diag *diag)
{
	double *v = malloc((s->n_events + 1) * sizeof *v);
	int rc = 0;

	if (v == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t k = 0; k < s->n_events; k++)
		v[k] = NAN;
	for (size_t i = 0; rc == 0 && i < s->n_rt; i++) {
		const nk_runtime *r = &s->rt[i];
		mpxkit_pdata_row row = {.freq_mhz = r->freq,
					.threads = r->cores,
					.run = r->list * 1000 + r->run,
					.sample = -1,
					.time_s = r->seconds,
					.power_w = NAN,
					.voltage_v = NAN};
		if (r->cross)
			rc = mpxkit_pdata_append(d, r->bench, r->core, &row, v, diag);
	}
	free(v);
	return rc;
}

static void nk_free(nk_state *s)
{
	for (size_t i = 0; i < s->n_events; i++)
		free(s->events[i]);
	for (size_t i = 0; i < s->n_exec; i++) {
		free(s->exec[i].bench);
		free(s->exec[i].sum);
	}
	for (size_t i = 0; i < s->n_rt; i++) {
		free(s->rt[i].bench);
		free(s->rt[i].core);
	}
	free(s->exec);
	free(s->rt);
	free(s->steps);
}

static int nk_read(nk_state *s, const input *in, mpxkit_diag *diag)
{
	int rc;

	s->kind = 0;
	s->first_exec = s->n_exec;
	s->n_steps = 0;
	rc = read_table(in, 0, nk_row, s, diag);
	if (rc == 0 && s->kind == 1) {
		double median;
		if (s->n_steps) /* qsort takes no NULL, even for nothing */
			qsort(s->steps, s->n_steps, sizeof *s->steps, mpxkit__pd_cmp_double);
		median = s->n_steps ? s->steps[s->n_steps / 2] : 0.5;
		for (size_t i = s->first_exec; i < s->n_exec; i++) {
			nk_exec *e = &s->exec[i];
			e->p_dt += e->p0 * median;
			e->v_dt += e->v0 * median;
			e->dt += median;
		}
	}
	return rc;
}

static int import_nikov(const input *in, size_t n, const char *name, mpxkit_pdata **out,
			mpxkit_diag *diag)
{
	nk_state s = {0};
	mpxkit_pdata *d = NULL;
	int rc = 0, any_cross = 0;

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = nk_read(&s, &in[i], diag);
	for (size_t i = 0; i < s.n_rt; i++)
		any_cross |= s.rt[i].cross;
	if (rc == 0 && s.n_exec == 0 && !any_cross)
		rc = mpxkit_fail(diag, MPXKIT_EINVAL,
				 "%s: no sample file and no cross-core table: "
				 "nothing to import",
				 in[0].name);
	if (rc == 0)
		rc = mpxkit_pdata_new(&d, name, MPXKIT_TIME_ELAPSED, (const char *const *)s.events,
				      s.n_events, diag);
	if (rc == 0)
		rc = nk_join(&s, d, diag);
	if (rc == 0)
		rc = nk_cross_rows(&s, d, diag);
	if (rc == 0) {
		nk_roles(&s, d);
		rc = mpxkit_pdata_set_meta(d, "source",
					   "github.com/kranik/ARMPM_BUILDMODEL d3822e73, "
					   "github.com/kranik/ARMPM_DATACOLLECT",
					   diag);
	}
	if (rc == 0)
		rc = mpxkit_pdata_set_meta(d, "licence", "BSD-3-Clause, (c) 2019 Dr Kris Nikov",
					   diag);
	nk_free(&s);
	if (rc < 0) {
		mpxkit_pdata_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

/* ---- entry points -----------------------------------------------------------------------------
 */

static void default_name(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strcspn(b, ".");
	snprintf(out, cap, "%.*s", (int)(n && n < cap ? n : 0), b);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < ' ' || *p == ',' || *p == '"')
			*p = '_';
	if (out[0] == '\0')
		snprintf(out, cap, "dataset");
}

static int import_inputs(const char *from, const input *in, size_t n, const char *name,
			 mpxkit_pdata **out, mpxkit_diag *diag)
{
	char dname[128];

	if (from == NULL || out == NULL || n == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "import: no input");
	if (name == NULL) {
		default_name(in[0].name, dname, sizeof dname);
		name = dname;
	}
	if (strcmp(from, "gemstone") == 0)
		return import_gemstone(in, n, name, out, diag);
	if (strcmp(from, "nikov") == 0)
		return import_nikov(in, n, name, out, diag);
	return mpxkit_fail(diag, MPXKIT_EINVAL, "import from '%.40s': expected gemstone or nikov",
			   from);
}

int mpxkit_pdata_import(const char *from, const char *const *paths, size_t n_paths,
			const char *name, mpxkit_pdata **out, mpxkit_diag *diag)
{
	input *in = calloc(n_paths + 1, sizeof *in);
	int rc;

	if (in == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n_paths; i++)
		in[i].name = in[i].path = paths[i];
	rc = import_inputs(from, in, n_paths, name, out, diag);
	free(in);
	return rc;
}

int mpxkit_pdata_import_buffers(const char *from, const char *const *names,
				const char *const *texts, const size_t *lens, size_t n,
				const char *name, mpxkit_pdata **out, mpxkit_diag *diag)
{
	input *in = calloc(n + 1, sizeof *in);
	int rc;

	if (in == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		in[i].name = names[i];
		in[i].buf = texts[i];
		in[i].len = lens[i];
	}
	rc = import_inputs(from, in, n, name, out, diag);
	free(in);
	return rc;
}

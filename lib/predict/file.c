/* SPDX-License-Identifier: BSD-3-Clause */
/* The predict model file `.mpxp` (doc/predict.md, "Model file") on the sectioned container. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/container.h"

#include "predict_impl.h"

#define TAG_META MPXKIT_TAG('M', 'E', 'T', 'A')
#define TAG_INPT MPXKIT_TAG('I', 'N', 'P', 'T')
#define TAG_CORE MPXKIT_TAG('C', 'O', 'R', 'E')
#define TAG_CONF MPXKIT_TAG('C', 'O', 'N', 'F')
#define TAG_TIME MPXKIT_TAG('T', 'I', 'M', 'E')
#define TAG_POWR MPXKIT_TAG('P', 'O', 'W', 'R')
#define TAG_XCOR MPXKIT_TAG('X', 'C', 'O', 'R')

#define MAX_CORES 64
#define MAX_META  64
#define MAX_TEXT  4096 /* bytes of a name or metadata value */

/* "\x89PRD": the high bit first, as the container asks. */
static const mpxkit_container_format pmodel_format = {
    .name = "predict model",
    .magic = MPXKIT_TAG(0x89, 'P', 'R', 'D'),
    .min_version = MPXKIT_PMODEL_VERSION,
    .max_version = MPXKIT_PMODEL_VERSION,
    .max_section = 1u << 20,
    .max_sections = 8,
};

/* ---- encoding ---------------------------------------------------------------------------------
 */

static void put_meta(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_meta);
	for (size_t i = 0; i < m->n_meta; i++) {
		mpxkit_bytes_string(b, m->meta_keys[i]);
		mpxkit_bytes_string(b, m->meta_values[i]);
	}
}

static void put_inputs(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_inputs);
	for (size_t i = 0; i < m->n_inputs; i++) {
		mpxkit_bytes_u8(b, m->input[i] != NULL);
		if (m->input[i])
			mpxkit_bytes_string(b, m->input[i]);
	}
	mpxkit_bytes_u64(b, m->power_inputs);
}

static void put_cores(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_cores);
	for (size_t i = 0; i < m->n_cores; i++)
		mpxkit_bytes_string(b, m->cores[i]);
}

static void put_configs(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_configs);
	for (size_t k = 0; k < m->n_configs; k++) {
		mpxkit_bytes_varint(b, m->config_core[k]);
		mpxkit_bytes_f64(b, m->configs[k].freq_mhz);
		mpxkit_bytes_f64(b, m->configs[k].voltage_v);
	}
}

static void put_time(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_time);
	for (size_t i = 0; i < m->n_time; i++) {
		mpxkit_bytes_varint(b, m->time[i].core);
		mpxkit_bytes_u8(b, (uint8_t)m->time[i].form);
		mpxkit_bytes_f64(b, m->time[i].mu[0]);
		mpxkit_bytes_f64(b, m->time[i].mu[1]);
	}
}

static void put_power(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_power);
	for (size_t i = 0; i < m->n_power; i++) {
		const pm_power *p = &m->power[i];
		mpxkit_bytes_varint(b, p->core);
		mpxkit_bytes_u8(b, (uint8_t)p->form);
		mpxkit_bytes_f64(b, p->freq_mhz);
		mpxkit_bytes_varint(b, p->n_coef);
		for (size_t k = 0; k < p->n_coef; k++)
			mpxkit_bytes_f64(b, p->coef[k]);
	}
}

static void put_xcore(mpxkit_bytes *b, const mpxkit_pmodel *m)
{
	mpxkit_bytes_varint(b, m->n_xcore);
	for (size_t i = 0; i < m->n_xcore; i++) {
		const pm_xcore *g = &m->xcore[i];
		mpxkit_bytes_varint(b, g->from);
		mpxkit_bytes_varint(b, g->to);
		mpxkit_bytes_u8(b, (uint8_t)g->form);
		for (int k = 0; k < 4; k++)
			mpxkit_bytes_f64(b, g->g[k]);
	}
}

enum { N_SECTIONS = 7 };

static void (*const putters[N_SECTIONS])(mpxkit_bytes *, const mpxkit_pmodel *) = {
    put_meta, put_inputs, put_cores, put_configs, put_time, put_power, put_xcore,
};
static const uint32_t tags[N_SECTIONS] = {TAG_META, TAG_INPT, TAG_CORE, TAG_CONF,
					  TAG_TIME, TAG_POWR, TAG_XCOR};

static int encode_sections(const mpxkit_pmodel *m, mpxkit_bytes *b, mpxkit_diag *diag)
{
	for (int s = 0; s < N_SECTIONS; s++) {
		putters[s](&b[s], m);
		if (b[s].oom)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	}
	return 0;
}

static void free_sections(mpxkit_bytes *b)
{
	for (int s = 0; s < N_SECTIONS; s++)
		mpxkit_bytes_free(&b[s]);
}

int mpxkit_pmodel_encode(const mpxkit_pmodel *m, unsigned char **buf, size_t *len,
			 mpxkit_diag *diag)
{
	mpxkit_bytes b[N_SECTIONS] = {{0}};
	const void *payloads[N_SECTIONS];
	size_t lens[N_SECTIONS];
	int rc = encode_sections(m, b, diag);

	for (int s = 0; s < N_SECTIONS; s++) {
		payloads[s] = b[s].data ? (const void *)b[s].data : (const void *)"";
		lens[s] = b[s].len;
	}
	if (rc == 0)
		rc = mpxkit_container_encode(&pmodel_format, MPXKIT_PMODEL_VERSION, tags, payloads,
					     lens, N_SECTIONS, buf, len, diag);
	free_sections(b);
	return rc;
}

int mpxkit_pmodel_save(const mpxkit_pmodel *m, const char *path, mpxkit_diag *diag)
{
	mpxkit_bytes b[N_SECTIONS] = {{0}};
	mpxkit_container_writer *w = NULL;
	int rc = encode_sections(m, b, diag);

	if (rc == 0)
		rc = mpxkit_container_create(&w, path, &pmodel_format, MPXKIT_PMODEL_VERSION, diag);
	for (int s = 0; rc == 0 && s < N_SECTIONS; s++)
		rc = mpxkit_container_put(w, tags[s], b[s].data ? (const void *)b[s].data : "",
					  b[s].len, diag);
	if (rc == 0) {
		rc = mpxkit_container_commit(w, diag);
		w = NULL;
	}
	mpxkit_container_abort(w);
	free_sections(b);
	return rc;
}

/* ---- decoding ---------------------------------------------------------------------------------
 */

typedef struct loader {
	const char *name;
	mpxkit_pmodel *m;
	unsigned seen; /* bit per section index */
	mpxkit_diag *diag;
} loader;

static int lbad(const loader *l, const char *section, const char *why)
{
	return mpxkit_fail(l->diag, MPXKIT_EFORMAT, "%s: %s section: %s", l->name, section, why);
}

/* A string of the payload as a new C string: non-empty, no NUL, at most MAX_TEXT bytes. */
static char *take_string(mpxkit_cursor *c)
{
	size_t len;
	const char *s = mpxkit_cursor_string(c, MAX_TEXT, &len);
	char *copy;

	if (s == NULL || c->error || len == 0)
		return NULL;
	if ((copy = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

/* A count of at most max items, each at least min_bytes long in what is left. */
static int take_count(mpxkit_cursor *c, size_t max, size_t min_bytes, size_t *n)
{
	uint64_t v = mpxkit_cursor_varint(c);

	if (c->error || v > max || (min_bytes && v > mpxkit_cursor_left(c) / min_bytes))
		return -1;
	*n = (size_t)v;
	return 0;
}

static int read_meta(loader *l, mpxkit_cursor *c)
{
	size_t n;

	if (take_count(c, MAX_META, 2, &n) < 0)
		return lbad(l, "META", "bad count");
	for (size_t i = 0; i < n; i++) {
		char *k = take_string(c), *v = take_string(c);
		if (!k || !v || mpxkit__pm_add_meta(l->m, k, v) < 0) {
			free(k);
			free(v);
			return lbad(l, "META", "bad key or value");
		}
		free(k);
		free(v);
	}
	return 0;
}

static int read_inputs(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n;

	if (take_count(c, MPXKIT_PMODEL_MAX_INPUTS, 1, &n) < 0 || n < MPXKIT_ROLE_COUNT)
		return lbad(l, "INPT", "bad count");
	for (size_t i = 0; i < n; i++) {
		uint8_t present = mpxkit_cursor_u8(c);
		if (c->error || present > 1 || (!present && i >= MPXKIT_ROLE_COUNT))
			return lbad(l, "INPT", "bad presence flag");
		if (present && (m->input[i] = take_string(c)) == NULL)
			return lbad(l, "INPT", "bad event name");
		m->n_inputs = i + 1;
		for (size_t k = 0; present && k < i; k++)
			if (m->input[k] && strcmp(m->input[k], m->input[i]) == 0 &&
			    k >= MPXKIT_ROLE_COUNT)
				return lbad(l, "INPT", "an event twice");
	}
	m->power_inputs = mpxkit_cursor_u64(c);
	if (c->error)
		return lbad(l, "INPT", "truncated");
	for (size_t i = 0; i < 64; i++)
		if ((m->power_inputs >> i & 1) && (i >= n || m->input[i] == NULL))
			return lbad(l, "INPT", "a power regressor that is not an input");
	return 0;
}

static int read_cores(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n;

	if (take_count(c, MAX_CORES, 2, &n) < 0 || n == 0)
		return lbad(l, "CORE", "bad count");
	if ((m->cores = calloc(n, sizeof *m->cores)) == NULL)
		return mpxkit_fail(l->diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if ((m->cores[i] = take_string(c)) == NULL)
			return lbad(l, "CORE", "bad name");
		m->n_cores = i + 1;
		for (size_t k = 0; k < i; k++)
			if (strcmp(m->cores[k], m->cores[i]) == 0)
				return lbad(l, "CORE", "a core kind twice");
	}
	return 0;
}

static int read_core_index(mpxkit_cursor *c, size_t n_cores, uint32_t *out)
{
	uint64_t v = mpxkit_cursor_varint(c);

	if (c->error || v >= n_cores)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int read_configs(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n;

	if (!(l->seen & 1u << 2))
		return lbad(l, "CONF", "before the CORE section");
	if (take_count(c, MPXKIT_PMODEL_MAX_CONFIGS, 17, &n) < 0 || n == 0)
		return lbad(l, "CONF", "bad count");
	m->configs = calloc(n, sizeof *m->configs);
	m->config_core = calloc(n, sizeof *m->config_core);
	if (!m->configs || !m->config_core)
		return mpxkit_fail(l->diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		mpxkit_pconfig *cf = &m->configs[k];
		if (read_core_index(c, m->n_cores, &m->config_core[k]) < 0)
			return lbad(l, "CONF", "bad core index");
		cf->freq_mhz = mpxkit_cursor_f64(c);
		cf->voltage_v = mpxkit_cursor_f64(c);
		if (c->error || !(cf->freq_mhz > 0) || !isfinite(cf->freq_mhz) ||
		    !(isnan(cf->voltage_v) || (cf->voltage_v > 0 && isfinite(cf->voltage_v))))
			return lbad(l, "CONF", "bad frequency or voltage");
		for (size_t j = 0; j < k; j++)
			if (m->config_core[j] == m->config_core[k] &&
			    m->configs[j].freq_mhz == cf->freq_mhz)
				return lbad(l, "CONF", "a configuration twice");
		m->n_configs = k + 1;
	}
	return 0;
}

static int finite_all(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return 0;
	return 1;
}

static int read_time(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n;

	if (!(l->seen & 1u << 2))
		return lbad(l, "TIME", "before the CORE section");
	if (take_count(c, m->n_cores, 18, &n) < 0)
		return lbad(l, "TIME", "bad count");
	if ((m->time = calloc(n + 1, sizeof *m->time)) == NULL)
		return mpxkit_fail(l->diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		pm_time *t = &m->time[i];
		if (read_core_index(c, m->n_cores, &t->core) < 0)
			return lbad(l, "TIME", "bad core index");
		t->form = mpxkit_cursor_u8(c);
		t->mu[0] = mpxkit_cursor_f64(c);
		t->mu[1] = mpxkit_cursor_f64(c);
		if (c->error || (t->form > MPXKIT_MET_MLP && t->form != MPXKIT_MET_CPI) ||
		    !finite_all(t->mu, 2))
			return lbad(l, "TIME", "bad form or coefficient");
		for (size_t j = 0; j < i; j++)
			if (m->time[j].core == t->core)
				return lbad(l, "TIME", "two models for one core kind");
		m->n_time = i + 1;
	}
	return 0;
}

/* Coefficients a power form has: its fixed columns, then one per power input. */
static size_t power_coefs(int form, uint64_t inputs)
{
	size_t n = form == MPXKIT_POWER_VOLTAGE ? 3 : form == MPXKIT_POWER_PER_FREQ_V ? 2 : 1;

	for (int i = 0; i < 64; i++)
		n += inputs >> i & 1;
	return n;
}

static int config_of(const mpxkit_pmodel *m, uint32_t core, double freq)
{
	for (size_t k = 0; k < m->n_configs; k++)
		if (m->config_core[k] == core && m->configs[k].freq_mhz == freq)
			return (int)k;
	return -1;
}

static int read_power(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n, max = m->n_configs + m->n_cores;

	if ((l->seen & 0xe) != 0xe)
		return lbad(l, "POWR", "before the INPT, CORE and CONF sections");
	if (take_count(c, max, 19, &n) < 0)
		return lbad(l, "POWR", "bad count");
	if ((m->power = calloc(n + 1, sizeof *m->power)) == NULL)
		return mpxkit_fail(l->diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		pm_power *p = &m->power[i];
		uint64_t nc;
		if (read_core_index(c, m->n_cores, &p->core) < 0)
			return lbad(l, "POWR", "bad core index");
		p->form = mpxkit_cursor_u8(c);
		p->freq_mhz = mpxkit_cursor_f64(c);
		nc = mpxkit_cursor_varint(c);
		if (c->error || p->form < MPXKIT_POWER_PER_FREQ ||
		    p->form > MPXKIT_POWER_PER_FREQ_V ||
		    nc != power_coefs(p->form, m->power_inputs) || nc > MPXKIT_PMODEL_MAX_COEFS)
			return lbad(l, "POWR", "bad form or coefficient count");
		if (p->form == MPXKIT_POWER_VOLTAGE ? !isnan(p->freq_mhz)
						    : config_of(m, p->core, p->freq_mhz) < 0)
			return lbad(l, "POWR", "a frequency that is not a configuration");
		p->n_coef = (size_t)nc;
		for (size_t k = 0; k < p->n_coef; k++)
			p->coef[k] = mpxkit_cursor_f64(c);
		if (c->error || !finite_all(p->coef, p->n_coef))
			return lbad(l, "POWR", "bad coefficient");
		for (size_t j = 0; j < i; j++)
			if (m->power[j].core == p->core &&
			    (m->power[j].form == MPXKIT_POWER_VOLTAGE ||
			     p->form == MPXKIT_POWER_VOLTAGE ||
			     m->power[j].freq_mhz == p->freq_mhz))
				return lbad(l, "POWR", "two models for one configuration");
		m->n_power = i + 1;
	}
	return 0;
}

static int read_xcore(loader *l, mpxkit_cursor *c)
{
	mpxkit_pmodel *m = l->m;
	size_t n;

	if (!(l->seen & 1u << 2))
		return lbad(l, "XCOR", "before the CORE section");
	if (take_count(c, m->n_cores * m->n_cores, 35, &n) < 0)
		return lbad(l, "XCOR", "bad count");
	if ((m->xcore = calloc(n + 1, sizeof *m->xcore)) == NULL)
		return mpxkit_fail(l->diag, MPXKIT_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		pm_xcore *g = &m->xcore[i];
		if (read_core_index(c, m->n_cores, &g->from) < 0 ||
		    read_core_index(c, m->n_cores, &g->to) < 0 || g->from == g->to)
			return lbad(l, "XCOR", "bad core indices");
		g->form = mpxkit_cursor_u8(c);
		for (int k = 0; k < 4; k++)
			g->g[k] = mpxkit_cursor_f64(c);
		if (c->error || g->form < MPXKIT_XCORE_RATIO || g->form > MPXKIT_XCORE_CPI_MPKI ||
		    !finite_all(g->g, 4))
			return lbad(l, "XCOR", "bad form or coefficient");
		for (size_t j = 0; j < i; j++)
			if (m->xcore[j].from == g->from && m->xcore[j].to == g->to)
				return lbad(l, "XCOR", "two maps for one pair of core kinds");
		m->n_xcore = i + 1;
	}
	return 0;
}

static int (*const readers[N_SECTIONS])(loader *, mpxkit_cursor *) = {
    read_meta, read_inputs, read_cores, read_configs, read_time, read_power, read_xcore,
};

static int read_section(loader *l, uint32_t tag, const void *payload, size_t len)
{
	mpxkit_cursor c;
	int s, rc;

	for (s = 0; s < N_SECTIONS && tags[s] != tag; s++)
		;
	if (s == N_SECTIONS)
		return mpxkit_fail(l->diag, MPXKIT_EFORMAT, "%s: unknown section '%c%c%c%c'",
				   l->name, (int)(tag & 0x7f), (int)(tag >> 8 & 0x7f),
				   (int)(tag >> 16 & 0x7f), (int)(tag >> 24 & 0x7f));
	if (l->seen & 1u << s)
		return mpxkit_fail(l->diag, MPXKIT_EFORMAT, "%s: the %c%c%c%c section twice",
				   l->name, (int)(tag & 0xff), (int)(tag >> 8 & 0xff),
				   (int)(tag >> 16 & 0xff), (int)(tag >> 24));
	mpxkit_cursor_init(&c, payload, len);
	if ((rc = readers[s](l, &c)) < 0)
		return rc;
	if (mpxkit_cursor_left(&c) != 0)
		return mpxkit_fail(l->diag, MPXKIT_EFORMAT,
				   "%s: %zu bytes after the section's "
				   "content",
				   l->name, mpxkit_cursor_left(&c));
	l->seen |= 1u << s;
	return 0;
}

static int load(mpxkit_container_reader *r, const char *name, mpxkit_pmodel **out,
		mpxkit_diag *diag)
{
	loader l = {.name = name, .diag = diag};
	uint32_t tag;
	const void *payload;
	size_t len;
	int rc;

	if ((l.m = calloc(1, sizeof *l.m)) == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
	while ((rc = mpxkit_container_next(r, &tag, &payload, &len, diag)) == 1)
		if ((rc = read_section(&l, tag, payload, len)) < 0)
			break;
	if (rc == 0 && l.seen != (1u << N_SECTIONS) - 1)
		rc = mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: a section is missing", name);
	if (rc == 0)
		rc = mpxkit__pm_link(l.m, diag);
	if (rc < 0) {
		mpxkit_pmodel_free(l.m);
		return rc;
	}
	*out = l.m;
	return 0;
}

int mpxkit_pmodel_load(const char *path, mpxkit_pmodel **out, mpxkit_diag *diag)
{
	mpxkit_container_reader *r;
	int rc = mpxkit_container_open(&r, path, &pmodel_format, diag);

	if (rc < 0)
		return rc;
	rc = load(r, path, out, diag);
	mpxkit_container_close(r);
	return rc;
}

int mpxkit_pmodel_load_buffer(const void *buf, size_t len, const char *name, mpxkit_pmodel **out,
			      mpxkit_diag *diag)
{
	mpxkit_container_reader *r;
	int rc =
	    mpxkit_container_open_buffer(&r, buf, len, name ? name : "model", &pmodel_format, diag);

	if (rc < 0)
		return rc;
	rc = load(r, name ? name : "model", out, diag);
	mpxkit_container_close(r);
	return rc;
}

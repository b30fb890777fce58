/* SPDX-License-Identifier: BSD-3-Clause */
/* Model files (doc/model-format.md): decoder, encoder, and the allocation-free forward pass. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mpxkit/model.h"
#include "mpxkit/outfile.h"

#include "model_impl.h"
#include "mpxkit/reader.h"

#define MAGIC	    0x4D58504Du /* "MPXM" */
#define HEADER_LEN  40
#define LAYER_LEN   16
#define TRAILER_LEN 4

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffffu);
	put16(p + 2, v >> 16);
}

static uint32_t crc(const unsigned char *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

static int valid_activation(int a)
{
	return a >= MPXKIT_ACT_IDENTITY && a <= MPXKIT_ACT_SIGMOID;
}

/* A GRU layer's width is 2 x hidden: even, hidden within the limit. */
static int valid_gru_width(size_t n_out)
{
	return n_out % 2 == 0 && n_out >= 2 && n_out <= 2 * MPXKIT_MODEL_MAX_GRU_HIDDEN;
}

static size_t layer_len(int type, size_t n_in, size_t n_out)
{
	if (type == MPXKIT_LAYER_BIGRU)
		return 2 * model_gru_dir_len(n_in, n_out / 2);
	return n_out * n_in + n_out;
}

static size_t norm_len(const mpxkit_model_shape *s)
{
	return 2 * s->width[0] + 2 * s->width[s->n_layers];
}

/* Floats of the parameter block; the caller has checked the shape's limits, so no overflow. */
static size_t params_len(const mpxkit_model_shape *s)
{
	size_t n = norm_len(s);

	for (size_t l = 0; l < s->n_layers; l++)
		n += layer_len(s->type[l], s->width[l], s->width[l + 1]);
	return n;
}

static int check_shape(const mpxkit_model_shape *s, mpxkit_diag *diag)
{
	if (s->n_layers < 1 || s->n_layers > MPXKIT_MODEL_MAX_LAYERS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: %zu layers, expected 1 to %d",
				   s->n_layers, MPXKIT_MODEL_MAX_LAYERS);
	for (size_t l = 0; l <= s->n_layers; l++)
		if (s->width[l] < 1 || s->width[l] > MPXKIT_MODEL_MAX_WIDTH)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "model: width %zu of level %zu, expected 1 to %d",
					   s->width[l], l, MPXKIT_MODEL_MAX_WIDTH);
	for (size_t l = 0; l < s->n_layers; l++) {
		if (!valid_activation(s->activation[l]))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "model: unknown activation %d of layer %zu",
					   s->activation[l], l);
		if (s->type[l] != 0 && s->type[l] != MPXKIT_LAYER_DENSE &&
		    s->type[l] != MPXKIT_LAYER_BIGRU)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "model: unknown type %d of layer %zu", s->type[l], l);
		if (s->type[l] == MPXKIT_LAYER_BIGRU && !valid_gru_width(s->width[l + 1]))
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "model: GRU layer %zu has width %zu, expected an even "
					   "2 to %d (2 x hidden)",
					   l, s->width[l + 1], 2 * MPXKIT_MODEL_MAX_GRU_HIDDEN);
		if (s->type[l] == MPXKIT_LAYER_BIGRU && s->activation[l] != MPXKIT_ACT_IDENTITY)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "model: GRU layer %zu has activation %d, expected 0 "
					   "(its gates have their own)",
					   l, s->activation[l]);
	}
	return 0;
}

/* The descriptor and the one zeroed parameter block for a checked shape. */
static int model_alloc(mpxkit_model **out, const mpxkit_model_shape *s, mpxkit_diag *diag)
{
	mpxkit_model *m = calloc(1, sizeof(*m));

	if (!m)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "model: out of memory");
	m->shape = *s;
	for (size_t l = 0; l < s->n_layers; l++) {
		if (m->shape.type[l] == 0)
			m->shape.type[l] = MPXKIT_LAYER_DENSE;
		if (m->shape.type[l] == MPXKIT_LAYER_BIGRU)
			m->recurrent = 1;
	}
	m->n_params = params_len(s);
	m->params = calloc(m->n_params, sizeof(float));
	if (!m->params) {
		free(m);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "model: out of memory for %zu weights",
				   params_len(s));
	}
	size_t off = norm_len(s);
	for (size_t l = 0; l < s->n_layers; l++) {
		m->w_off[l] = off;
		off += layer_len(s->type[l], s->width[l], s->width[l + 1]);
	}
	for (size_t l = 0; l <= s->n_layers; l++)
		if (s->width[l] > m->max_width)
			m->max_width = s->width[l];
	*out = m;
	return 0;
}

int mpxkit_model_new(mpxkit_model **out, const mpxkit_model_shape *shape, mpxkit_diag *diag)
{
	mpxkit_model *m;
	int rc;

	if (!out || !shape)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: NULL argument");
	rc = check_shape(shape, diag);
	if (rc < 0)
		return rc;
	rc = model_alloc(&m, shape, diag);
	if (rc < 0)
		return rc;
	/* Identity normalisation: scales 1, shifts 0. */
	size_t ni = shape->width[0], no = shape->width[shape->n_layers];
	for (size_t i = 0; i < ni; i++)
		m->params[ni + i] = 1.0f;
	for (size_t j = 0; j < no; j++)
		m->params[2 * ni + no + j] = 1.0f;
	*out = m;
	return 0;
}

void mpxkit_model_free(mpxkit_model *m)
{
	if (!m)
		return;
	free(m->params);
	free(m);
}

const mpxkit_model_shape *mpxkit_model_shape_of(const mpxkit_model *m)
{
	return &m->shape;
}

float *mpxkit_model_params(mpxkit_model *m, size_t *n)
{
	if (n)
		*n = m->n_params;
	return m->params;
}

size_t mpxkit_model_scratch_len(const mpxkit_model *m)
{
	/* Two rows of the widest level, and a GRU's gate sums: a sequence of one step. */
	return mpxkit_model_seq_scratch_len(m, 1);
}

int mpxkit_model_is_recurrent(const mpxkit_model *m)
{
	return m->recurrent;
}

/*
 * The dense layers, from normalised inputs in cur; returns the buffer holding
 * the last layer's output.  Their dot products vectorise, and an AVX2 clone
 * does 8 lanes at once where the CPU has it.  Not FMA: without fused
 * multiply-adds every clone rounds as the baseline does, so the results (and
 * the trainer's early stopping, which runs this) are the same on every
 * x86-64.  The clone is static: an exported ifunc would escape libtool's
 * export list.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static float *
dense_layers(const mpxkit_model *m, float *cur, float *next)
{
	const mpxkit_model_shape *s = &m->shape;

	for (size_t l = 0; l < s->n_layers; l++) {
		size_t n_in = s->width[l], n_out = s->width[l + 1];
		const float *w = m->params + m->w_off[l], *b = w + n_out * n_in;

		for (size_t o = 0; o < n_out; o++)
			next[o] = model_activate(s->activation[l],
						 b[o] + model_dot(w + o * n_in, cur, n_in));
		float *t = cur;
		cur = next;
		next = t;
	}
	return cur;
}

void mpxkit_model_forward(const mpxkit_model *m, const float *in, float *out, float *scratch)
{
	const mpxkit_model_shape *s = &m->shape;
	size_t ni = s->width[0], no = s->width[s->n_layers];
	const float *in_shift = m->params, *in_scale = m->params + ni;
	const float *out_shift = m->params + 2 * ni, *out_scale = out_shift + no;
	float *cur = scratch;

	if (m->recurrent) {
		mpxkit_model_forward_seq(m, 1, in, out, scratch);
		return;
	}
	for (size_t i = 0; i < ni; i++)
		cur[i] = (in[i] - in_shift[i]) * in_scale[i];
	cur = dense_layers(m, cur, scratch + m->max_width);
	for (size_t j = 0; j < no; j++)
		out[j] = cur[j] * out_scale[j] + out_shift[j];
}

static float get_f32(const unsigned char *p)
{
	uint32_t u = le32(p);
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static void put_f32(unsigned char *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	put32(p, u);
}

/* Header fields after the magic, version and checksum have been accepted. */
static int decode_header(const unsigned char *p, size_t len, const char *name,
			 mpxkit_model_shape *s, uint32_t *body_size, mpxkit_diag *diag)
{
	uint32_t n_in = le32(p + 8), n_out = le32(p + 12), n_layers = le32(p + 16);

	if (le16(p + 6) != 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:6: reserved flags 0x%04x set", name,
				   (unsigned)le16(p + 6));
	if (le32(p + 28) != 0)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:28: reserved field 0x%08x set", name,
				   (unsigned)le32(p + 28));
	if (n_in < 1 || n_in > MPXKIT_MODEL_MAX_WIDTH)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:8: %u inputs, expected 1 to %d", name,
				   (unsigned)n_in, MPXKIT_MODEL_MAX_WIDTH);
	if (n_out < 1 || n_out > MPXKIT_MODEL_MAX_WIDTH)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:12: %u outputs, expected 1 to %d",
				   name, (unsigned)n_out, MPXKIT_MODEL_MAX_WIDTH);
	if (n_layers < 1 || n_layers > MPXKIT_MODEL_MAX_LAYERS)
		return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:16: %u layers, expected 1 to %d", name,
				   (unsigned)n_layers, MPXKIT_MODEL_MAX_LAYERS);
	*body_size = le32(p + 32);
	if ((uint64_t)*body_size + HEADER_LEN + TRAILER_LEN > len)
		return mpxkit_fail(
		    diag, MPXKIT_ETRUNC,
		    "%s:%zu: truncated: body of %u bytes announced, file has %zu bytes", name, len,
		    (unsigned)*body_size, len);
	if ((uint64_t)*body_size + HEADER_LEN + TRAILER_LEN < len)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%u: %zu bytes after the end of the model", name,
				   (unsigned)*body_size + HEADER_LEN + TRAILER_LEN,
				   len - HEADER_LEN - TRAILER_LEN - *body_size);
	memset(s, 0, sizeof(*s));
	s->n_layers = n_layers;
	s->width[0] = n_in;
	s->width[n_layers] = n_out;
	s->feature_set = le32(p + 20);
	s->feature_param = le32(p + 24);
	return 0;
}

/* A layer's type, activation and width, as the file's version allows them. */
static int check_layer_kind(const unsigned char *e, size_t at, size_t l, unsigned version,
			    const char *name, mpxkit_diag *diag)
{
	uint32_t n_out = le32(e + 8);

	if (e[0] == MPXKIT_LAYER_BIGRU && version < 2)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: layer %zu is a GRU (type 2), which needs format "
				   "version 2; the file says version %u",
				   name, at, l, version);
	if (e[0] != MPXKIT_LAYER_DENSE && e[0] != MPXKIT_LAYER_BIGRU)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: layer %zu has unknown type %u (1 dense, 2 GRU)", name,
				   at, l, (unsigned)e[0]);
	if (!valid_activation(e[1]))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: layer %zu has unknown activation %u", name, at + 1, l,
				   (unsigned)e[1]);
	if (e[0] == MPXKIT_LAYER_BIGRU && e[1] != MPXKIT_ACT_IDENTITY)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: GRU layer %zu has activation %u, must be 0", name,
				   at + 1, l, (unsigned)e[1]);
	if (e[0] == MPXKIT_LAYER_BIGRU && n_out >= 1 && n_out <= MPXKIT_MODEL_MAX_WIDTH &&
	    !valid_gru_width(n_out))
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:%zu: GRU layer %zu has %u outputs, expected an even 2 to "
				   "%d (2 x hidden)",
				   name, at + 8, l, (unsigned)n_out,
				   2 * MPXKIT_MODEL_MAX_GRU_HIDDEN);
	return 0;
}

/* The layer table; fills the widths, types and activations and checks the chain. */
static int decode_layers(const unsigned char *p, unsigned version, const char *name,
			 mpxkit_model_shape *s, mpxkit_diag *diag)
{
	size_t n_out_last = s->width[s->n_layers];
	int rc;

	for (size_t l = 0; l < s->n_layers; l++) {
		const unsigned char *e = p + HEADER_LEN + l * LAYER_LEN;
		size_t at = HEADER_LEN + l * LAYER_LEN;
		uint32_t n_in = le32(e + 4), n_out = le32(e + 8);

		rc = check_layer_kind(e, at, l, version, name, diag);
		if (rc < 0)
			return rc;
		if (le16(e + 2) != 0 || le32(e + 12) != 0)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%zu: reserved field of layer %zu set", name,
					   le16(e + 2) ? at + 2 : at + 12, l);
		if (n_in != s->width[l])
			return mpxkit_fail(
			    diag, MPXKIT_EFORMAT,
			    "%s:%zu: layer %zu takes %u inputs, the level before has %zu", name,
			    at + 4, l, (unsigned)n_in, s->width[l]);
		if (n_out < 1 || n_out > MPXKIT_MODEL_MAX_WIDTH)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%zu: layer %zu has %u outputs, expected 1 to %d",
					   name, at + 8, l, (unsigned)n_out,
					   MPXKIT_MODEL_MAX_WIDTH);
		if (l + 1 == s->n_layers && n_out != n_out_last)
			return mpxkit_fail(diag, MPXKIT_EFORMAT,
					   "%s:%zu: last layer has %u outputs, the header says %zu",
					   name, at + 8, (unsigned)n_out, n_out_last);
		s->width[l + 1] = n_out;
		s->activation[l] = e[1];
		s->type[l] = e[0];
	}
	return 0;
}

int mpxkit_model_load_buffer(mpxkit_model **out, const void *buf, size_t len, const char *name,
			     mpxkit_diag *diag)
{
	const unsigned char *p = buf;
	mpxkit_model_shape s;
	mpxkit_model *m = NULL;
	uint32_t body_size = 0;
	unsigned version;
	int rc;

	if (!out || (!buf && len))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: NULL argument");
	if (!name)
		name = "(model)";
	if (len < 4)
		return mpxkit_fail(diag, MPXKIT_ETRUNC, "%s:%zu: truncated: %zu bytes, not a model",
				   name, len, len);
	if (le32(p) != MAGIC)
		return mpxkit_fail(
		    diag, MPXKIT_EFORMAT,
		    "%s:0: wrong magic 0x%08x, not an mpxkit model (expected \"MPXM\")", name,
		    (unsigned)le32(p));
	if (len < HEADER_LEN + TRAILER_LEN)
		return mpxkit_fail(diag, MPXKIT_ETRUNC,
				   "%s:%zu: truncated: %zu bytes, shorter than a model header",
				   name, len, len);
	version = le16(p + 4);
	if (version < 1 || version > MPXKIT_MODEL_VERSION)
		return mpxkit_fail(
		    diag, MPXKIT_EVERSION,
		    "%s:4: model format version %u, this build reads versions 1 to %d", name,
		    version, MPXKIT_MODEL_VERSION);
	if (crc(p, 36) != le32(p + 36))
		return mpxkit_fail(
		    diag, MPXKIT_ECHECKSUM,
		    "%s:36: header checksum mismatch (stored 0x%08x, computed 0x%08x)", name,
		    (unsigned)le32(p + 36), (unsigned)crc(p, 36));
	rc = decode_header(p, len, name, &s, &body_size, diag);
	if (rc < 0)
		return rc;
	if (crc(p + HEADER_LEN, body_size) != le32(p + HEADER_LEN + body_size))
		return mpxkit_fail(diag, MPXKIT_ECHECKSUM,
				   "%s:%u: body checksum mismatch (stored 0x%08x, computed 0x%08x)",
				   name, (unsigned)(HEADER_LEN + body_size),
				   (unsigned)le32(p + HEADER_LEN + body_size),
				   (unsigned)crc(p + HEADER_LEN, body_size));
	if ((uint64_t)s.n_layers * LAYER_LEN > body_size)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:32: body of %u bytes cannot hold %zu layer entries", name,
				   (unsigned)body_size, s.n_layers);
	rc = decode_layers(p, version, name, &s, diag);
	if (rc < 0)
		return rc;
	uint64_t want = (uint64_t)s.n_layers * LAYER_LEN + 4 * (uint64_t)params_len(&s);
	if (want != body_size)
		return mpxkit_fail(diag, MPXKIT_EFORMAT,
				   "%s:32: body_size %u, the layer table implies %llu", name,
				   (unsigned)body_size, (unsigned long long)want);
	rc = model_alloc(&m, &s, diag);
	if (rc < 0)
		return rc;
	const unsigned char *f = p + HEADER_LEN + s.n_layers * LAYER_LEN;
	for (size_t i = 0; i < m->n_params; i++) {
		m->params[i] = get_f32(f + 4 * i);
		if (!isfinite(m->params[i])) {
			mpxkit_model_free(m);
			return mpxkit_fail(diag, MPXKIT_EFORMAT, "%s:%zu: weight %zu is not finite",
					   name, (size_t)(f - p) + 4 * i, i);
		}
	}
	*out = m;
	return 0;
}

/*
 * A model file's size is in its header: read the header, and when its
 * checksum holds, exactly the body it announces plus one byte (so trailing
 * bytes are still reported), never more.  /dev/zero stops at the magic.
 */
int mpxkit_model_load_file(mpxkit_model **out, const char *path, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = { .what = "model file" };
	mpxkit_reader *r = NULL;
	unsigned char *buf = NULL;
	size_t len = 0, got = 0, want = HEADER_LEN;
	int rc;

	if (!out || !path)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: NULL argument");
	rc = mpxkit_reader_open(&r, path, &opt, diag);
	if (rc < 0)
		return rc;
	buf = malloc(HEADER_LEN);
	if (buf == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		goto done;
	}
	rc = mpxkit_reader_read(r, buf, HEADER_LEN, &len, diag);
	if (rc == 0 && len == HEADER_LEN && le32(buf) == MAGIC && crc(buf, 36) == le32(buf + 36)) {
		unsigned char *grown;
		want = (size_t)HEADER_LEN + le32(buf + 32) + TRAILER_LEN + 1;
		grown = realloc(buf, want);
		if (grown == NULL) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
			goto done;
		}
		buf = grown;
		rc = mpxkit_reader_read(r, buf + len, want - len, &got, diag);
		len += got;
	}
	if (rc == 0)
		rc = mpxkit_model_load_buffer(out, buf, len, path, diag);
done:
	mpxkit_reader_close(r);
	free(buf);
	return rc;
}

int mpxkit_model_encode(const mpxkit_model *m, void **buf, size_t *len, mpxkit_diag *diag)
{
	const mpxkit_model_shape *s;
	size_t body, total;
	unsigned char *p;

	if (!m || !buf || !len)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: NULL argument");
	s = &m->shape;
	for (size_t i = 0; i < m->n_params; i++)
		if (!isfinite(m->params[i]))
			return mpxkit_fail(diag, MPXKIT_EINVAL, "model: weight %zu is not finite",
					   i);
	body = s->n_layers * LAYER_LEN + 4 * m->n_params;
	total = HEADER_LEN + body + TRAILER_LEN;
	p = calloc(1, total);
	if (!p)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "model: out of memory for %zu bytes",
				   total);
	put32(p, MAGIC);
	/* The oldest version that holds the model: an MLP's file stays what version 1 wrote. */
	put16(p + 4, m->recurrent ? 2 : 1);
	put32(p + 8, (uint32_t)s->width[0]);
	put32(p + 12, (uint32_t)s->width[s->n_layers]);
	put32(p + 16, (uint32_t)s->n_layers);
	put32(p + 20, s->feature_set);
	put32(p + 24, s->feature_param);
	put32(p + 32, (uint32_t)body);
	put32(p + 36, crc(p, 36));
	for (size_t l = 0; l < s->n_layers; l++) {
		unsigned char *e = p + HEADER_LEN + l * LAYER_LEN;

		e[0] = (unsigned char)s->type[l];
		e[1] = (unsigned char)s->activation[l];
		put32(e + 4, (uint32_t)s->width[l]);
		put32(e + 8, (uint32_t)s->width[l + 1]);
	}
	unsigned char *f = p + HEADER_LEN + s->n_layers * LAYER_LEN;
	for (size_t i = 0; i < m->n_params; i++)
		put_f32(f + 4 * i, m->params[i]);
	put32(p + HEADER_LEN + body, crc(p + HEADER_LEN, body));
	*buf = p;
	*len = total;
	return 0;
}

int mpxkit_model_save(const mpxkit_model *m, const char *path, mpxkit_diag *diag)
{
	void *buf;
	size_t len;
	int rc;

	if (!path)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "model: NULL path");
	rc = mpxkit_model_encode(m, &buf, &len, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_outfile_write_all(path, buf, len, diag);
	free(buf);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Model files against a byte-by-byte hand-built image, every corruption the decoder must refuse,
 * and the forward pass against a naive double-precision reference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cutest.h"
#include "mpxkit/model.h"

#include "model_impl.h" /* model_sample_grad, for the gradient check */

/* --- an encoder written from doc/model-format.md, independent of lib/model --- */

typedef struct bytes {
	unsigned char d[4096];
	size_t n;
} bytes;

static void b_u8(bytes *b, unsigned v)
{
	b->d[b->n++] = (unsigned char)v;
}

static void b_u16(bytes *b, unsigned v)
{
	b_u8(b, v & 0xff);
	b_u8(b, (v >> 8) & 0xff);
}

static void b_u32(bytes *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b_u8(b, (v >> (8 * i)) & 0xff);
}

static void b_f32(bytes *b, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	b_u32(b, u);
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t zcrc(const unsigned char *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

/* Recomputes both checksums, so a test reaches the check behind them. */
static void fix_crcs(unsigned char *p, size_t len)
{
	uint32_t body = rd32(p + 32);

	wr32(p + 36, zcrc(p, 36));
	if (40 + (size_t)body + 4 <= len)
		wr32(p + 40 + body, zcrc(p + 40, body));
}

/*
 * A 2-3-1 network: hidden ReLU, output identity.  Inputs normalised with
 * shift (1, -1) and scale (0.5, 2); output y = y' * 10 + 3.
 */
static const float H_W1[3][2] = {{1, 2}, {-1, 0.5f}, {0.25f, -3}};
static const float H_B1[3] = {0.5f, 1, -0.25f};
static const float H_W2[3] = {2, -1, 4};
static const float H_B2 = -0.5f;

static void hand_file(bytes *b)
{
	b->n = 0;
	b_u8(b, 'M'), b_u8(b, 'P'), b_u8(b, 'X'), b_u8(b, 'M');
	b_u16(b, 1);
	b_u16(b, 0);
	b_u32(b, 2);
	b_u32(b, 1);
	b_u32(b, 2);
	b_u32(b, 7);  /* feature_set */
	b_u32(b, 11); /* feature_param */
	b_u32(b, 0);
	/* body: 2 layers x 16 + 4 x (2*2 + 2*1) + 4 x (3*2 + 3) + 4 x (1*3 + 1) */
	b_u32(b, 32 + 24 + 36 + 16);
	b_u32(b, zcrc(b->d, 36));
	b_u8(b, 1), b_u8(b, 1), b_u16(b, 0), b_u32(b, 2), b_u32(b, 3), b_u32(b, 0);
	b_u8(b, 1), b_u8(b, 0), b_u16(b, 0), b_u32(b, 3), b_u32(b, 1), b_u32(b, 0);
	b_f32(b, 1), b_f32(b, -1);   /* in_shift */
	b_f32(b, 0.5f), b_f32(b, 2); /* in_scale */
	b_f32(b, 3);		     /* out_shift */
	b_f32(b, 10);		     /* out_scale */
	for (int o = 0; o < 3; o++)
		b_f32(b, H_W1[o][0]), b_f32(b, H_W1[o][1]);
	for (int o = 0; o < 3; o++)
		b_f32(b, H_B1[o]);
	for (int i = 0; i < 3; i++)
		b_f32(b, H_W2[i]);
	b_f32(b, H_B2);
	b_u32(b, zcrc(b->d + 40, b->n - 40));
}

static mpxkit_model *load_ok(const void *p, size_t n)
{
	mpxkit_model *m = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_model_load_buffer(&m, p, n, "mem", &d);

	if (rc != 0)
		fprintf(stderr, "unexpected failure: %s\n", mpxkit_diag_message(&d, rc));
	CU_ASSERT_EQUAL(rc, 0);
	return m;
}

/* The decoder refuses p with code, one diag line naming the buffer, and leaves out alone. */
static void expect_fail(const unsigned char *p, size_t n, int code)
{
	mpxkit_model *m = (mpxkit_model *)&m; /* a sentinel that must survive */
	mpxkit_diag d = {0};
	int rc = mpxkit_model_load_buffer(&m, p, n, "bad.mpxm", &d);

	if (rc != -code)
		fprintf(stderr, "len %zu: expected %s, got %d (%s)\n", n, mpxkit_errname(code), rc,
			d.msg);
	CU_ASSERT_EQUAL(rc, -code);
	CU_ASSERT_PTR_EQUAL(m, (mpxkit_model *)&m);
	CU_ASSERT_EQUAL(strncmp(d.msg, "bad.mpxm:", 9), 0);
	CU_ASSERT_PTR_NULL(strchr(d.msg, '\n'));
}

static void test_hand_built(void)
{
	bytes b;
	float in[2] = {3, 0.5f}, out[1], scratch[64];

	hand_file(&b);
	mpxkit_model *m = load_ok(b.d, b.n);
	if (!m)
		return;
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	CU_ASSERT_EQUAL(s->n_layers, 2);
	CU_ASSERT_EQUAL(s->width[0], 2);
	CU_ASSERT_EQUAL(s->width[1], 3);
	CU_ASSERT_EQUAL(s->width[2], 1);
	CU_ASSERT_EQUAL(s->activation[0], MPXKIT_ACT_RELU);
	CU_ASSERT_EQUAL(s->activation[1], MPXKIT_ACT_IDENTITY);
	CU_ASSERT_EQUAL(s->feature_set, 7);
	CU_ASSERT_EQUAL(s->feature_param, 11);
	CU_ASSERT(mpxkit_model_scratch_len(m) <= 64);
	/*
	 * By hand: x' = ((3-1)*0.5, (0.5+1)*2) = (1, 3).
	 * h = relu(1+6+0.5, -1+1.5+1, 0.25-9-0.25) = (7.5, 1.5, 0).
	 * y' = 15 - 1.5 + 0 - 0.5 = 13; y = 130 + 3 = 133.
	 */
	mpxkit_model_forward(m, in, out, scratch);
	CU_ASSERT_DOUBLE_EQUAL(out[0], 133.0, 1e-4);

	/* The library's encoder writes the same bytes. */
	void *enc = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL(mpxkit_model_encode(m, &enc, &len, NULL), 0);
	CU_ASSERT_EQUAL(len, b.n);
	if (len == b.n)
		CU_ASSERT_EQUAL(memcmp(enc, b.d, len), 0);
	free(enc);
	mpxkit_model_free(m);
}

/* Every prefix of a good file is truncated, and one byte too many is refused. */
static void expect_every_truncation(bytes *b)
{
	for (size_t n = 0; n < b->n; n++) {
		unsigned char *copy = malloc(n ? n : 1);

		/* A fresh allocation of exactly n bytes, so ASan and valgrind see any over-read. */
		memcpy(copy, b->d, n);
		expect_fail(copy, n, MPXKIT_ETRUNC);
		free(copy);
	}
	b->d[b->n] = 0;
	expect_fail(b->d, b->n + 1, MPXKIT_EFORMAT);
}

static void test_truncated_every_length(void)
{
	bytes b;

	hand_file(&b);
	expect_every_truncation(&b);
}

static void test_header_errors(void)
{
	bytes b, c;

	hand_file(&b);
	c = b, c.d[0] = 'X';
	expect_fail(c.d, c.n, MPXKIT_EFORMAT); /* wrong magic */
	c = b, c.d[4] = 3, fix_crcs(c.d, c.n); /* 1 and 2 are known */
	expect_fail(c.d, c.n, MPXKIT_EVERSION);
	c = b, c.d[4] = 0, fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EVERSION);
	c = b, c.d[5] = 1, fix_crcs(c.d, c.n); /* version 257 */
	expect_fail(c.d, c.n, MPXKIT_EVERSION);
	c = b, c.d[9] ^= 1; /* n_inputs changed, checksum stale */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	c = b, c.d[36] ^= 0x80;
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	c = b, c.d[60] ^= 0x01; /* a byte of the body */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	c = b, c.d[c.n - 1] ^= 0x01; /* the body checksum itself */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);

	/* Reserved fields, each with valid checksums so only the field is wrong. */
	for (unsigned bit = 0; bit < 16; bit++) {
		c = b, c.d[6 + bit / 8] = (unsigned char)(1u << (bit % 8));
		fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	c = b, c.d[31] = 0x40, fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, c.d[40 + 2] = 1, fix_crcs(c.d, c.n); /* layer 0 reserved u16 */
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, c.d[56 + 15] = 1, fix_crcs(c.d, c.n); /* layer 1 reserved u32 */
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
}

static void test_bad_sizes(void)
{
	bytes b, c;

	hand_file(&b);
	static const struct {
		size_t off;
		uint32_t v;
	} cases[] = {
	    {8, 0},	/* no inputs */
	    {8, 5000},	/* too many inputs */
	    {8, 3},	/* inputs disagree with layer 0 */
	    {12, 0},	/* no outputs */
	    {12, 2},	/* outputs disagree with the last layer */
	    {16, 0},	/* no layers */
	    {16, 17},	/* too many layers */
	    {16, 1},	/* layer 0's 3 outputs are not the 1 output */
	    {16, 3},	/* three layer entries do not fit the body */
	    {44, 3},	/* layer 0 n_in breaks the chain */
	    {48, 0},	/* layer 0 with no outputs */
	    {48, 4},	/* layer 0 n_out 4: layer 1 takes 3 */
	    {48, 9999}, /* layer 0 n_out out of range */
	    {60, 2},	/* layer 1 n_in breaks the chain */
	    {64, 2},	/* last layer's outputs disagree with the header */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = b;
		wr32(c.d + cases[i].off, cases[i].v);
		fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	/* body_size smaller than the layer table implies (body shortened consistently). */
	c = b;
	wr32(c.d + 32, rd32(b.d + 32) - 4);
	c.n -= 4;
	fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* body_size larger than the file. */
	c = b, wr32(c.d + 32, rd32(b.d + 32) + 4), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_ETRUNC);
	/* Unknown layer types (2, the future GRU, included) and activations. */
	for (unsigned t = 0; t < 256; t++) {
		if (t == 1)
			continue;
		c = b, c.d[40] = (unsigned char)t, fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	c = b, c.d[41] = 4, fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* A NaN and an infinite weight. */
	c = b, wr32(c.d + 100, 0x7fc00000u), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, wr32(c.d + 72, 0x7f800000u), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* Sanity: fix_crcs on the untouched image still loads, so the cases above fail for their
	 * field. */
	c = b, fix_crcs(c.d, c.n);
	mpxkit_model_free(load_ok(c.d, c.n));
}

/* --- version 2: the bidirectional GRU layer --- */

/*
 * A file from its parts: the header of the version given, the layer table
 * (type, activation, n_in = width[l], n_out = width[l + 1]) and n floats;
 * body_size is what the bytes hold, whatever the table implies.
 */
static void build_file(bytes *b, unsigned version, size_t n_layers, const unsigned *type,
		       const unsigned *act, const uint32_t *width, const float *f, size_t n)
{
	b->n = 0;
	b_u8(b, 'M'), b_u8(b, 'P'), b_u8(b, 'X'), b_u8(b, 'M');
	b_u16(b, version);
	b_u16(b, 0);
	b_u32(b, width[0]);
	b_u32(b, width[n_layers]);
	b_u32(b, (uint32_t)n_layers);
	b_u32(b, 2), b_u32(b, 9), b_u32(b, 0); /* feature_set, feature_param, reserved */
	b_u32(b, (uint32_t)(16 * n_layers + 4 * n));
	b_u32(b, zcrc(b->d, 36));
	for (size_t l = 0; l < n_layers; l++) {
		b_u8(b, type[l]), b_u8(b, act[l]), b_u16(b, 0);
		b_u32(b, width[l]), b_u32(b, width[l + 1]), b_u32(b, 0);
	}
	for (size_t i = 0; i < n; i++)
		b_f32(b, f[i]);
	b_u32(b, zcrc(b->d + 40, b->n - 40));
}

/*
 * 1 input, a GRU with one unit per direction, a dense 2 -> 1.  The floats in
 * the order of doc/model-format.md: normalisation; per direction W_x (r, z,
 * n), W_h (r, z, n), b_x (r, z, n), b_h (r, z, n); the dense W and b.
 */
static const float G_NORM[4] = {0.5f, 2, 1, 3}; /* in_shift, in_scale, out_shift, out_scale */
static const float G_DIR[2][12] = {
    {0.5f, -1, 1.5f, 0.25f, 0.5f, -2, 0.125f, 0, -0.25f, 0, 0.375f, 0.5f},
    {-0.5f, 1, 0.75f, 1, -0.5f, 0.5f, 0, 0.25f, 0.125f, -0.125f, 0, 0.375f},
};
static const float G_DENSE[3] = {2, -1, 0.5f};

static const unsigned G_TYPE[2] = {2, 1}, G_ACT[2] = {0, 0};
static const uint32_t G_WIDTH[3] = {1, 2, 1};

static void gru_file(bytes *b, unsigned version)
{
	float f[31];

	memcpy(f, G_NORM, sizeof(G_NORM));
	memcpy(f + 4, G_DIR, sizeof(G_DIR));
	memcpy(f + 28, G_DENSE, sizeof(G_DENSE));
	build_file(b, version, 2, G_TYPE, G_ACT, G_WIDTH, f, 31);
}

/* One step of one direction, the equations of doc/model-format.md written out for H = 1. */
static double g_step(const float *d, double x, double h)
{
	double r = 1 / (1 + exp(-(d[0] * x + d[6] + d[3] * h + d[9])));
	double z = 1 / (1 + exp(-(d[1] * x + d[7] + d[4] * h + d[10])));
	double n = tanh(d[2] * x + d[8] + r * (d[5] * h + d[11]));
	return (1 - z) * n + z * h;
}

static void test_v2_hand_built(void)
{
	bytes b;
	const float in[3] = {1.5f, -0.25f, 0.75f};
	float out[3], scratch[64];
	double x[3], hf[3], hb[3];

	gru_file(&b, 2);
	CU_ASSERT_EQUAL(b.n, 200);
	mpxkit_model *m = load_ok(b.d, b.n);
	CU_ASSERT_FATAL(m != NULL);
	const mpxkit_model_shape *s = mpxkit_model_shape_of(m);
	CU_ASSERT_EQUAL(s->n_layers, 2);
	CU_ASSERT_EQUAL(s->type[0], MPXKIT_LAYER_BIGRU);
	CU_ASSERT_EQUAL(s->type[1], MPXKIT_LAYER_DENSE);
	CU_ASSERT_EQUAL(s->width[1], 2);
	CU_ASSERT(mpxkit_model_is_recurrent(m));
	CU_ASSERT_FATAL(mpxkit_model_seq_scratch_len(m, 3) <= 64);
	for (int t = 0; t < 3; t++)
		x[t] = (in[t] - 0.5) * 2;
	for (int t = 0; t < 3; t++)
		hf[t] = g_step(G_DIR[0], x[t], t ? hf[t - 1] : 0);
	for (int t = 2; t >= 0; t--)
		hb[t] = g_step(G_DIR[1], x[t], t < 2 ? hb[t + 1] : 0);
	mpxkit_model_forward_seq(m, 3, in, out, scratch);
	for (int t = 0; t < 3; t++) {
		double want = (2 * hf[t] - hb[t] + 0.5) * 3 + 1;
		CU_ASSERT_DOUBLE_EQUAL(out[t], want, 1e-5);
	}
	/* The encoder writes the same bytes, version 2 included. */
	void *enc = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL(mpxkit_model_encode(m, &enc, &len, NULL), 0);
	CU_ASSERT_EQUAL(len, b.n);
	if (len == b.n)
		CU_ASSERT_EQUAL(memcmp(enc, b.d, len), 0);
	free(enc);
	mpxkit_model_free(m);

	/* A version 2 file with dense layers only loads; the encoder writes it back as 1. */
	const unsigned dt[2] = {1, 1};
	const float df[4 + 4 + 3] = {0, 1, 0, 1, 1, 2, 0, 0, 1, 1, 0};
	build_file(&b, 2, 2, dt, G_ACT, G_WIDTH, df, 11);
	m = load_ok(b.d, b.n);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT(!mpxkit_model_is_recurrent(m));
	CU_ASSERT_EQUAL(mpxkit_model_encode(m, &enc, &len, NULL), 0);
	CU_ASSERT_EQUAL(((unsigned char *)enc)[4], 1);
	free(enc);
	mpxkit_model_free(m);
}

static void test_v2_truncated(void)
{
	bytes b;

	gru_file(&b, 2);
	expect_every_truncation(&b);
}

static void test_v2_errors(void)
{
	bytes b, c;
	mpxkit_diag d = {0};
	mpxkit_model *m = NULL;

	gru_file(&b, 2);
	/* A GRU in a version 1 file: refused, and the diag says why. */
	gru_file(&c, 1);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	CU_ASSERT_EQUAL(mpxkit_model_load_buffer(&m, c.d, c.n, "v1.mpxm", &d), -MPXKIT_EFORMAT);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "version 2"));
	/* Checksums. */
	c = b, c.d[48] ^= 1; /* in the body, stale CRC */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	c = b, c.d[120] ^= 0x10; /* a GRU weight */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	c = b, c.d[20] ^= 1; /* feature_set, header CRC stale */
	expect_fail(c.d, c.n, MPXKIT_ECHECKSUM);
	/* Fields of the GRU entry, each with valid checksums. */
	static const struct {
		size_t off;
		uint32_t v;
	} cases[] = {
	    {48, 3},	/* odd width: no hidden size */
	    {48, 1},	/* odd width */
	    {48, 1026}, /* hidden 513, over the limit */
	    {48, 4},	/* even, but the dense layer takes 2 */
	    {44, 2},	/* n_in breaks the chain */
	    {60, 4},	/* dense n_in breaks the chain */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = b, wr32(c.d + cases[i].off, cases[i].v), fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	for (unsigned a = 1; a < 4; a++) { /* a GRU's activation must be 0 */
		c = b, c.d[41] = (unsigned char)a, fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	for (unsigned t = 0; t < 256; t++) { /* unknown types in version 2 */
		if (t == 1 || t == 2)
			continue;
		c = b, c.d[40] = (unsigned char)t, fix_crcs(c.d, c.n);
		expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	}
	c = b, c.d[40 + 3] = 1, fix_crcs(c.d, c.n); /* reserved u16 of the GRU entry */
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, c.d[40 + 12] = 1, fix_crcs(c.d, c.n); /* reserved u32 of the GRU entry */
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* body_size: one float short (body shortened consistently), or past the end. */
	c = b;
	wr32(c.d + 32, rd32(b.d + 32) - 4);
	c.n -= 4;
	fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, wr32(c.d + 32, rd32(b.d + 32) + 4), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_ETRUNC);
	/* A GRU entry over a block of a dense layer's size: the table implies more. */
	const float df[11] = {0};
	build_file(&c, 2, 2, G_TYPE, G_ACT, G_WIDTH, df, 11);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* Non-finite GRU weights: the first of the backward direction, the last b_h. */
	c = b, wr32(c.d + 136, 0x7fc00000u), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	c = b, wr32(c.d + 180, 0xff800000u), fix_crcs(c.d, c.n);
	expect_fail(c.d, c.n, MPXKIT_EFORMAT);
	/* Sanity: the untouched image, checksums refreshed, loads. */
	c = b, fix_crcs(c.d, c.n);
	mpxkit_model_free(load_ok(c.d, c.n));
}

/* --- forward pass against a naive double-precision reference --- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double ref_act(int a, double x)
{
	if (a == MPXKIT_ACT_RELU)
		return x > 0 ? x : 0;
	if (a == MPXKIT_ACT_TANH)
		return tanh(x);
	if (a == MPXKIT_ACT_SIGMOID)
		return 1 / (1 + exp(-x));
	return x;
}

#define RN 4 /* layers of the random networks */
#define RW 40

/* The network as the test holds it: plain arrays, filled independently of the model's block. */
typedef struct refnet {
	size_t w[RN + 1];
	int act[RN];
	double in_shift[RW], in_scale[RW], out_shift[RW], out_scale[RW];
	double W[RN][RW][RW], b[RN][RW];
} refnet;

static void ref_forward(const refnet *r, const double *x, double *y)
{
	double cur[RW], next[RW];

	for (size_t i = 0; i < r->w[0]; i++)
		cur[i] = (x[i] - r->in_shift[i]) * r->in_scale[i];
	for (size_t l = 0; l < RN; l++) {
		for (size_t o = 0; o < r->w[l + 1]; o++) {
			double s = r->b[l][o];
			for (size_t i = 0; i < r->w[l]; i++)
				s += r->W[l][o][i] * cur[i];
			next[o] = ref_act(r->act[l], s);
		}
		memcpy(cur, next, sizeof(cur));
	}
	for (size_t j = 0; j < r->w[RN]; j++)
		y[j] = cur[j] * r->out_scale[j] + r->out_shift[j];
}

/* Values exactly representable in float, so both sides start from the same numbers. */
static double frand(double scale)
{
	return (double)(float)(cutest_urand(&rng_state) * scale);
}

static void test_forward_random(void)
{
	static refnet r;
	float scratch[2 * RW], xin[RW], yout[RW];
	double x[RW], y[RW];

	for (int trial = 0; trial < 20; trial++) {
		mpxkit_model_shape s = {.n_layers = RN};
		for (size_t l = 0; l <= RN; l++)
			s.width[l] = r.w[l] =
			    1 + (size_t)((cutest_urand(&rng_state) + 1) * 0.5 * (RW - 1));
		for (size_t l = 0; l < RN; l++)
			s.activation[l] = r.act[l] = (trial + (int)l) % 4;
		mpxkit_model *m = NULL;
		CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
		size_t np, k = 0;
		float *p = mpxkit_model_params(m, &np);

		/* Fill in the documented block order: in_shift, in_scale, out_shift, out_scale, W,
		 * b. */
		for (size_t i = 0; i < r.w[0]; i++)
			p[k++] = (float)(r.in_shift[i] = frand(2));
		for (size_t i = 0; i < r.w[0]; i++)
			p[k++] = (float)(r.in_scale[i] = frand(2));
		for (size_t j = 0; j < r.w[RN]; j++)
			p[k++] = (float)(r.out_shift[j] = frand(5));
		for (size_t j = 0; j < r.w[RN]; j++)
			p[k++] = (float)(r.out_scale[j] = frand(5));
		for (size_t l = 0; l < RN; l++) {
			double sc = 1.5 / sqrt((double)r.w[l]);
			for (size_t o = 0; o < r.w[l + 1]; o++)
				for (size_t i = 0; i < r.w[l]; i++)
					p[k++] = (float)(r.W[l][o][i] = frand(sc));
			for (size_t o = 0; o < r.w[l + 1]; o++)
				p[k++] = (float)(r.b[l][o] = frand(0.5));
		}
		CU_ASSERT_EQUAL(k, np);
		CU_ASSERT(mpxkit_model_scratch_len(m) <= 2 * RW);

		/* Through the file format and back, so the decoded model is the one checked. */
		void *enc = NULL;
		size_t len = 0;
		CU_ASSERT_FATAL(mpxkit_model_encode(m, &enc, &len, NULL) == 0);
		mpxkit_model *m2 = load_ok(enc, len);
		free(enc);
		CU_ASSERT_FATAL(m2 != NULL);
		for (int rep = 0; rep < 10; rep++) {
			for (size_t i = 0; i < r.w[0]; i++)
				xin[i] = (float)(x[i] = frand(3));
			ref_forward(&r, x, y);
			mpxkit_model_forward(m2, xin, yout, scratch);
			for (size_t j = 0; j < r.w[RN]; j++) {
				double tol = 1e-4 * (1 + fabs(y[j]));
				if (fabs(yout[j] - y[j]) > tol)
					fprintf(stderr, "trial %d out %zu: %.9g vs %.9g\n", trial,
						j, yout[j], y[j]);
				CU_ASSERT(fabs(yout[j] - y[j]) <= tol);
			}
		}
		mpxkit_model_free(m2);
		mpxkit_model_free(m);
	}
}

static void test_new_rejects_bad_shape(void)
{
	mpxkit_model *m = NULL;
	mpxkit_diag d = {0};
	mpxkit_model_shape s = {.n_layers = 0, .width = {1, 1}};

	CU_ASSERT_EQUAL(mpxkit_model_new(&m, &s, &d), -MPXKIT_EINVAL);
	s.n_layers = 1, s.width[1] = 0;
	CU_ASSERT_EQUAL(mpxkit_model_new(&m, &s, &d), -MPXKIT_EINVAL);
	s.width[1] = 1, s.activation[0] = 9;
	CU_ASSERT_EQUAL(mpxkit_model_new(&m, &s, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(m);
	/* A non-finite weight is refused by the encoder, not written. */
	s.activation[0] = MPXKIT_ACT_IDENTITY;
	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	void *enc = NULL;
	size_t len = 0;
	mpxkit_model_params(m, NULL)[4] = NAN;
	CU_ASSERT_EQUAL(mpxkit_model_encode(m, &enc, &len, NULL), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NULL(enc);
	mpxkit_model_free(m);
	mpxkit_model_free(NULL);
}

static void test_files(void)
{
	char path[] = "/tmp/test_model_XXXXXX";
	int fd = mkstemp(path);
	bytes b;
	mpxkit_model *m = NULL, *m2 = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	hand_file(&b);
	m = load_ok(b.d, b.n);
	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_EQUAL(mpxkit_model_save(m, path, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_model_load_file(&m2, path, &d), 0);
	if (m2) {
		float in[2] = {3, 0.5f}, out[1], scratch[64];
		mpxkit_model_forward(m2, in, out, scratch);
		CU_ASSERT_DOUBLE_EQUAL(out[0], 133.0, 1e-4);
	}
	mpxkit_model_free(m2);
	/* A truncated file on disk: the diag names the path. */
	FILE *fp = fopen(path, "wb");
	CU_ASSERT_FATAL(fp != NULL);
	fwrite(b.d, 1, b.n - 1, fp);
	fclose(fp);
	m2 = NULL;
	CU_ASSERT_EQUAL(mpxkit_model_load_file(&m2, path, &d), -MPXKIT_ETRUNC);
	CU_ASSERT_PTR_NULL(m2);
	CU_ASSERT_EQUAL(strncmp(d.msg, path, strlen(path)), 0);
	unlink(path);
	CU_ASSERT_EQUAL(mpxkit_model_load_file(&m2, path, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, path));
	mpxkit_model_free(m);
}

/* --- training --- */

/* The test's own loss: mean over outputs of ((reference output - y) / out_scale)^2. */
static double ref_loss(const refnet *r, const double *x, const double *y)
{
	double out[RW], s = 0.0;

	ref_forward(r, x, out);
	for (size_t j = 0; j < r->w[RN]; j++) {
		double d = (out[j] - y[j]) / r->out_scale[j];
		s += d * d;
	}
	return s / (double)r->w[RN];
}

static void test_gradient(void)
{
	static refnet r;
	mpxkit_model_shape s = {.n_layers = RN};
	const size_t w[RN + 1] = {5, 7, 6, 4, 3};
	const int acts[RN] = {MPXKIT_ACT_TANH, MPXKIT_ACT_SIGMOID, MPXKIT_ACT_TANH,
			      MPXKIT_ACT_IDENTITY};
	double x[RW], y[RW];
	float xf[RW], yf[RW];

	for (size_t l = 0; l <= RN; l++)
		s.width[l] = r.w[l] = w[l];
	for (size_t l = 0; l < RN; l++)
		s.activation[l] = r.act[l] = acts[l];
	mpxkit_model *m = NULL;
	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	size_t np, k = 0;
	float *p = mpxkit_model_params(m, &np);
	for (size_t i = 0; i < w[0]; i++)
		p[k++] = (float)(r.in_shift[i] = frand(1));
	for (size_t i = 0; i < w[0]; i++)
		p[k++] = (float)(r.in_scale[i] = 0.5 + fabs(frand(1)));
	for (size_t j = 0; j < w[RN]; j++)
		p[k++] = (float)(r.out_shift[j] = frand(1));
	for (size_t j = 0; j < w[RN]; j++)
		p[k++] = (float)(r.out_scale[j] = 0.5 + fabs(frand(2)));
	size_t off[RN];
	for (size_t l = 0; l < RN; l++) {
		off[l] = k;
		for (size_t o = 0; o < w[l + 1]; o++)
			for (size_t i = 0; i < w[l]; i++)
				p[k++] = (float)(r.W[l][o][i] = frand(1));
		for (size_t o = 0; o < w[l + 1]; o++)
			p[k++] = (float)(r.b[l][o] = frand(0.5));
	}
	CU_ASSERT_FATAL(k == np);
	for (size_t i = 0; i < w[0]; i++)
		xf[i] = (float)(x[i] = frand(2));
	for (size_t j = 0; j < w[RN]; j++)
		yf[j] = (float)(y[j] = frand(2));

	float *grad = calloc(np, sizeof(float));
	float *ws = malloc(model_grad_ws_len(m) * sizeof(float));
	double loss = model_sample_grad(m, xf, yf, grad, ws, 0.0, NULL);
	CU_ASSERT_DOUBLE_EQUAL(loss, ref_loss(&r, x, y), 1e-4 * (1 + loss));
	/* Central differences in double on the test's own network. */
	const double h = 1e-6;
	for (size_t l = 0; l < RN; l++) {
		for (size_t o = 0; o < w[l + 1]; o++) {
			for (size_t i = 0; i <= w[l]; i++) {
				double *q = i < w[l] ? &r.W[l][o][i] : &r.b[l][o];
				size_t at =
				    i < w[l] ? off[l] + o * w[l] + i : off[l] + w[l + 1] * w[l] + o;
				double save = *q;
				*q = save + h;
				double lp = ref_loss(&r, x, y);
				*q = save - h;
				double lm = ref_loss(&r, x, y);
				*q = save;
				double num = (lp - lm) / (2 * h);
				if (fabs(grad[at] - num) > 1e-3 * (1 + fabs(num)))
					fprintf(stderr, "layer %zu [%zu][%zu]: %g vs %g\n", l, o, i,
						grad[at], num);
				CU_ASSERT(fabs(grad[at] - num) <= 1e-3 * (1 + fabs(num)));
			}
		}
	}
	/* The normalisation is not trained. */
	for (size_t i = 0; i < off[0]; i++)
		CU_ASSERT_EQUAL(grad[i], 0.0f);
	free(grad);
	free(ws);
	mpxkit_model_free(m);
}

#define NT 400

static float tx[NT][2], ty[NT];

static void make_data(void)
{
	for (size_t i = 0; i < NT; i++) {
		tx[i][0] = (float)(cutest_urand(&rng_state) * 2);
		tx[i][1] = (float)(cutest_urand(&rng_state) * 2);
		ty[i] = (float)(sin(tx[i][0]) + 0.5 * tx[i][1] * tx[i][1]);
	}
}

static mpxkit_model *train_one(uint64_t seed, double dropout, mpxkit_train_report *rep)
{
	mpxkit_model_shape s = {
	    .n_layers = 3,
	    .width = {2, 16, 16, 1},
	    .activation = {MPXKIT_ACT_TANH, MPXKIT_ACT_TANH, MPXKIT_ACT_IDENTITY}};
	mpxkit_train_set tr = {300, &tx[0][0], ty, NULL}, va = {100, &tx[300][0], ty + 300, NULL};
	mpxkit_train_config cfg = {.epochs = 150,
				   .patience = 30,
				   .batch = 8,
				   .learning_rate = 0.01,
				   .dropout = dropout,
				   .seed = seed};
	mpxkit_model *m = NULL;

	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	CU_ASSERT_FATAL(mpxkit_model_init(m, &tr, seed, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_model_train(m, &cfg, &tr, &va, rep, NULL), 0);
	return m;
}

static void test_training(void)
{
	mpxkit_train_report rep;
	mpxkit_train_set va = {100, &tx[300][0], ty + 300, NULL};

	make_data();
	/* The mean predictor scores about 1 on standardised targets; the fit must do far better. */
	mpxkit_model *a = train_one(42, 0.0, &rep);
	double la = mpxkit_model_loss(a, &va);
	CU_ASSERT(la < 0.02);
	CU_ASSERT_DOUBLE_EQUAL(la, rep.best_val_loss, 1e-12);
	CU_ASSERT(rep.best_epoch >= 1 && rep.best_epoch <= rep.epochs_run);
	/* The same seed gives the same bits; another seed does not. */
	mpxkit_model *b = train_one(42, 0.0, &rep);
	mpxkit_model *c = train_one(43, 0.0, &rep);
	size_t n;
	const float *pa = mpxkit_model_params(a, &n);
	CU_ASSERT_EQUAL(memcmp(pa, mpxkit_model_params(b, NULL), n * sizeof(float)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(pa, mpxkit_model_params(c, NULL), n * sizeof(float)), 0);
	/* With dropout 0.3 it still learns, if less tightly. */
	mpxkit_model *d = train_one(42, 0.3, &rep);
	CU_ASSERT(mpxkit_model_loss(d, &va) < 0.2);
	mpxkit_model_free(a);
	mpxkit_model_free(b);
	mpxkit_model_free(c);
	mpxkit_model_free(d);
}

static void test_train_rejects(void)
{
	mpxkit_model_shape s = {.n_layers = 1, .width = {2, 1}};
	mpxkit_train_set tr = {10, &tx[0][0], ty, NULL}, empty = {0, NULL, NULL, NULL};
	mpxkit_train_config cfg = {.epochs = 1, .batch = 1, .learning_rate = 0.1};
	mpxkit_model *m = NULL;
	mpxkit_diag d = {0};

	CU_ASSERT_FATAL(mpxkit_model_new(&m, &s, NULL) == 0);
	CU_ASSERT_EQUAL(mpxkit_model_init(m, &empty, 1, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_model_train(m, &cfg, &tr, &empty, NULL, &d), -MPXKIT_EINVAL);
	cfg.dropout = 1.0;
	CU_ASSERT_EQUAL(mpxkit_model_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	cfg.dropout = 0.0, cfg.batch = 0;
	CU_ASSERT_EQUAL(mpxkit_model_train(m, &cfg, &tr, &tr, NULL, &d), -MPXKIT_EINVAL);
	mpxkit_model_free(m);
}

static const cutest_case model_cases[] = {
    {"hand-built file and forward pass", test_hand_built},
    {"truncated at every length", test_truncated_every_length},
    {"magic, version, checksums, reserved fields", test_header_errors},
    {"bad sizes, types, activations, weights", test_bad_sizes},
    {"version 2: hand-built GRU file and forward pass", test_v2_hand_built},
    {"version 2: truncated at every length", test_v2_truncated},
    {"version 2: GRU fields, sizes, versions, checksums", test_v2_errors},
    {"forward pass vs double reference", test_forward_random},
    {"shape checks and the encoder", test_new_rejects_bad_shape},
    {"save and load files", test_files},
    {"gradient vs central differences", test_gradient},
    {"training fits, deterministic for a seed", test_training},
    {"training rejects bad settings", test_train_rejects},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {{"model", model_cases, NULL, NULL},
				       {NULL, NULL, NULL, NULL}};
	return cutest_run("test_model", suites);
}

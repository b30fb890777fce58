/* SPDX-License-Identifier: BSD-3-Clause */
/* Building blocks of the .pcz coding: buffers, varints, the byte-stream codecs, names, dictionary. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "pcz_impl.h"

static int buf_reserve(pcz_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len)
		goto fail;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
		goto fail;
	b->data = p;
	b->cap = cap;
	return 0;
fail:
	b->oom = 1;
	return -1;
}

int pcz_buf_grow(pcz_buf *b, size_t n)
{
	return buf_reserve(b, n);
}

void pcz_buf_free(pcz_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}

void pcz_buf_put(pcz_buf *b, const void *p, size_t n)
{
	if (n == 0 || buf_reserve(b, n) != 0)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pcz_buf_u8(pcz_buf *b, unsigned v)
{
	uint8_t c = (uint8_t)v;
	pcz_buf_put(b, &c, 1);
}

void pcz_buf_u16(pcz_buf *b, unsigned v)
{
	uint8_t c[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	pcz_buf_put(b, c, 2);
}

void pcz_buf_u32(pcz_buf *b, uint32_t v)
{
	uint8_t c[4];
	for (int i = 0; i < 4; i++)
		c[i] = (uint8_t)(v >> (8 * i));
	pcz_buf_put(b, c, 4);
}

void pcz_buf_u64(pcz_buf *b, uint64_t v)
{
	uint8_t c[8];
	for (int i = 0; i < 8; i++)
		c[i] = (uint8_t)(v >> (8 * i));
	pcz_buf_put(b, c, 8);
}

void pcz_buf_varint(pcz_buf *b, uint64_t v)
{
	uint8_t *p;

	if (buf_reserve(b, 10) != 0)
		return;
	p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
}

void pcz_buf_varints(pcz_buf *b, const uint64_t *v, size_t n)
{
	uint8_t *p;

	if (n == 0 || n > SIZE_MAX / 10 || buf_reserve(b, 10 * n) != 0)
		return;
	p = b->data + b->len;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		while (x >= 0x80) {
			*p++ = (uint8_t)(x | 0x80);
			x >>= 7;
		}
		*p++ = (uint8_t)x;
	}
	b->len = (size_t)(p - b->data);
}

void pcz_buf_svarint(pcz_buf *b, uint64_t diff)
{
	pcz_buf_varint(b, pcz_zigzag(diff));
}

void pcz_buf_string(pcz_buf *b, const char *s)
{
	size_t n = strlen(s);
	pcz_buf_varint(b, n);
	pcz_buf_put(b, s, n);
}

uint32_t pcz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t pcz_le64(const uint8_t *p)
{
	return (uint64_t)pcz_le32(p) | (uint64_t)pcz_le32(p + 4) << 32;
}

int pcz_get_varint(pcz_cur *c, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	const uint8_t *p = c->p;

	for (int i = 0; i < 10; i++) {
		uint8_t b;
		if (p >= c->end)
			return -1;
		b = *p++;
		if (i == 9 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			/* One encoding per value: a trailing zero group is padding. */
			if (b == 0 && i > 0)
				return -1;
			c->p = p;
			*v = x;
			return 0;
		}
	}
	return -1;
}

uint64_t pcz_cur_offset(const pcz_cur *c)
{
	return c->base + (uint64_t)(c->p - c->start);
}

/*
 * CRC32 by folding with carry-less multiplication (PCLMULQDQ), the method of
 * Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ
 * Instruction" (Intel, 2009), where the CPU has it: the CRCs cost the writer
 * about 4.5 instructions a byte through zlib, a tenth of that folded.  A
 * 128-bit register holds 16 message bytes; as a polynomial, bit j (bit j % 8
 * of byte j / 8) is the coefficient of x^(127 - j), the reflected order of
 * zlib's CRC, so its low 64-bit lane is the high-degree half L and the high
 * lane H.  Moving a block 128 bits on is V x^128 = L x^192 + H x^128, and
 * since a carry-less product of two lanes is x A(x) B(x) in this order, the
 * lanes are multiplied by x^191 mod P and x^127 mod P (x^575 and x^511 for
 * 512 bits) and the products, below 96 bits, added to the block 128 (512)
 * bits on.  What is left is congruent to the message mod P, so its CRC with
 * a zero state is the message's: the byte table finishes it.  The constants
 * are computed at load; every length is checked against zlib (test_pcz).
 */
static uint32_t crc_table[256];
static uint64_t fold128[2], fold512[2]; /* per lane: x^191, x^127 / x^575, x^511 mod P */
static int have_clmul;

/* x^n mod P, P = x^32 + 0x04C11DB7 (zlib's polynomial): bit d is the coefficient of x^d. */
static uint32_t xpow_mod(unsigned n)
{
	uint32_t r = 1;

	while (n--)
		r = r & 0x80000000u ? (r << 1) ^ 0x04C11DB7u : r << 1;
	return r;
}

/* The 64-bit lane holding a remainder: the coefficient of x^d at bit 63 - d. */
static uint64_t lane(uint32_t r)
{
	uint64_t w = 0;

	for (int d = 0; d < 32; d++)
		if (r >> d & 1)
			w |= 1ull << (63 - d);
	return w;
}

static void __attribute__((constructor)) crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	fold128[0] = lane(xpow_mod(191));
	fold128[1] = lane(xpow_mod(127));
	fold512[0] = lane(xpow_mod(575));
	fold512[1] = lane(xpow_mod(511));
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	have_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}

/* The CRC register without zlib's inversions, a byte at a time. */
static uint32_t crc_bytes(uint32_t s, const uint8_t *b, size_t n)
{
	while (n--)
		s = crc_table[(s ^ *b++) & 0xff] ^ (s >> 8);
	return s;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define PCZ_CLMUL __attribute__((target("pclmul,sse4.1")))

static inline PCZ_CLMUL __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     next);
}

static inline PCZ_CLMUL __m128i load16(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* The register s extended by n >= 64 bytes. */
static PCZ_CLMUL uint32_t crc_fold(uint32_t s, const uint8_t *b, size_t n)
{
	__m128i k4 = _mm_set_epi64x((long long)fold512[1], (long long)fold512[0]);
	__m128i k1 = _mm_set_epi64x((long long)fold128[1], (long long)fold128[0]);
	/* The state enters as an xor into the first 4 message bytes. */
	__m128i x0 = _mm_xor_si128(load16(b), _mm_cvtsi32_si128((int)s));
	__m128i x1 = load16(b + 16), x2 = load16(b + 32), x3 = load16(b + 48);
	uint8_t rest[16];

	for (b += 64, n -= 64; n >= 64; b += 64, n -= 64) {
		x0 = fold(x0, k4, load16(b));
		x1 = fold(x1, k4, load16(b + 16));
		x2 = fold(x2, k4, load16(b + 32));
		x3 = fold(x3, k4, load16(b + 48));
	}
	x0 = fold(fold(fold(x0, k1, x1), k1, x2), k1, x3);
	for (; n >= 16; b += 16, n -= 16)
		x0 = fold(x0, k1, load16(b));
	_mm_storeu_si128((__m128i *)(void *)rest, x0);
	return crc_bytes(crc_bytes(0, rest, 16), b, n);
}
#endif

uint32_t pcz_crc32_update(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

#if defined(__x86_64__) && defined(__GNUC__)
	if (have_clmul && n >= 64)
		return ~crc_fold(~crc, b, n);
#endif
	/* zlib takes uInt lengths; feed large buffers in pieces. */
	while (n > 0) {
		uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		n -= k;
	}
	return crc;
}

uint32_t pcz_crc32(const void *p, size_t n)
{
	return pcz_crc32_update(0, p, n);
}

/*
 * Codec contexts outlive their writer in a pool of a few: a zstd or deflate
 * context is a few hundred KiB that malloc maps fresh each time, and taking
 * its pages costs more than compressing a small dump.  The pool is freed when
 * the library is unloaded (or the process exits).
 */
#define PCZ_POOL 4
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static ZSTD_CCtx *pool_zstd[PCZ_POOL];
static z_stream *pool_zlib[PCZ_POOL];
static int pool_zlib_level[PCZ_POOL];
static size_t pool_n_zstd, pool_n_zlib;

static ZSTD_CCtx *take_zstd(void)
{
	ZSTD_CCtx *z = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_n_zstd > 0)
		z = pool_zstd[--pool_n_zstd];
	pthread_mutex_unlock(&pool_lock);
	return z ? z : ZSTD_createCCtx();
}

static z_stream *take_zlib(int *level)
{
	z_stream *z = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_n_zlib > 0) {
		pool_n_zlib--;
		z = pool_zlib[pool_n_zlib];
		*level = pool_zlib_level[pool_n_zlib];
	}
	pthread_mutex_unlock(&pool_lock);
	return z;
}

void pcz_compressor_free(pcz_compressor *c)
{
	pthread_mutex_lock(&pool_lock);
	if (c->zstd && pool_n_zstd < PCZ_POOL) {
		pool_zstd[pool_n_zstd++] = c->zstd;
		c->zstd = NULL;
	}
	if (c->zlib && pool_n_zlib < PCZ_POOL) {
		pool_zlib_level[pool_n_zlib] = c->zlib_level;
		pool_zlib[pool_n_zlib++] = c->zlib;
		c->zlib = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	ZSTD_freeCCtx(c->zstd);
	if (c->zlib) {
		deflateEnd(c->zlib);
		free(c->zlib);
	}
	memset(c, 0, sizeof *c);
}

static void __attribute__((destructor)) pool_free(void)
{
	while (pool_n_zstd > 0)
		ZSTD_freeCCtx(pool_zstd[--pool_n_zstd]);
	while (pool_n_zlib > 0) {
		deflateEnd(pool_zlib[--pool_n_zlib]);
		free(pool_zlib[pool_n_zlib]);
	}
}

/*
 * One codec context per writer, reused for every section: creating a zstd or
 * deflate context costs more than compressing a small section with it.
 */
int pcz_compress_with(pcz_compressor *c, mpxkit_pcz_codec codec, int level, const uint8_t *src,
		      size_t n, pcz_buf *dst)
{
	dst->len = 0;
	if (codec == MPXKIT_PCZ_ZLIB) {
		uLong out = compressBound((uLong)n);
		int zl = level ? level : 6, rc;
		if (buf_reserve(dst, out) != 0)
			return -MPXKIT_ENOMEM;
		if (c->zlib == NULL)
			c->zlib = take_zlib(&c->zlib_level);
		if (c->zlib == NULL) {
			c->zlib = calloc(1, sizeof *c->zlib);
			if (c->zlib == NULL)
				return -MPXKIT_ENOMEM;
			if (deflateInit(c->zlib, zl) != Z_OK) {
				free(c->zlib);
				c->zlib = NULL;
				return -MPXKIT_ENOMEM;
			}
		} else if (deflateReset(c->zlib) != Z_OK ||
			   (c->zlib_level != zl && deflateParams(c->zlib, zl, Z_DEFAULT_STRATEGY) != Z_OK)) {
			return -MPXKIT_ENOMEM;
		}
		c->zlib_level = zl;
		c->zlib->next_in = (Bytef *)(uintptr_t)src;
		c->zlib->avail_in = (uInt)n;
		c->zlib->next_out = dst->data;
		c->zlib->avail_out = (uInt)out;
		rc = deflate(c->zlib, Z_FINISH);
		if (rc != Z_STREAM_END)
			return -MPXKIT_ENOMEM;
		dst->len = out - c->zlib->avail_out;
		return 0;
	}
	if (codec == MPXKIT_PCZ_ZSTD) {
		size_t out = ZSTD_compressBound(n), r;
		if (buf_reserve(dst, out) != 0)
			return -MPXKIT_ENOMEM;
		if (c->zstd == NULL && (c->zstd = take_zstd()) == NULL)
			return -MPXKIT_ENOMEM;
		r = ZSTD_compressCCtx(c->zstd, dst->data, out, src, n,
				      level ? level : MPXKIT_PCZ_ZSTD_LEVEL_DEFAULT);
		if (ZSTD_isError(r))
			return -MPXKIT_ENOMEM;
		dst->len = r;
		return 0;
	}
	pcz_buf_put(dst, src, n);
	return dst->oom ? -MPXKIT_ENOMEM : 0;
}

void pcz_decompressor_free(pcz_decompressor *d)
{
	ZSTD_freeDCtx(d->zstd);
	if (d->zlib_ready)
		inflateEnd(&d->zlib);
	memset(d, 0, sizeof *d);
}

static int inflate_exact(pcz_decompressor *d, const uint8_t *src, size_t n, uint8_t *dst,
			 size_t raw)
{
	int rc;

	if (!d->zlib_ready) {
		if (inflateInit(&d->zlib) != Z_OK)
			return -1;
		d->zlib_ready = 1;
	} else if (inflateReset(&d->zlib) != Z_OK) {
		return -1;
	}
	d->zlib.next_in = (Bytef *)(uintptr_t)src;
	d->zlib.avail_in = (uInt)n;
	d->zlib.next_out = dst;
	d->zlib.avail_out = (uInt)raw;
	rc = inflate(&d->zlib, Z_FINISH);
	/* Exactly raw bytes out of exactly n bytes in, or the frame lied. */
	if (rc != Z_STREAM_END || d->zlib.avail_in != 0 || d->zlib.avail_out != 0)
		return -1;
	return 0;
}

int pcz_decompress_with(pcz_decompressor *d, mpxkit_pcz_codec codec, const uint8_t *src, size_t n,
			uint8_t *dst, size_t raw)
{
	if (codec == MPXKIT_PCZ_STORED) {
		if (n != raw)
			return -1;
		memcpy(dst, src, n);
		return 0;
	}
	if (codec == MPXKIT_PCZ_ZLIB)
		return inflate_exact(d, src, n, dst, raw);
	if (codec == MPXKIT_PCZ_ZSTD) {
		unsigned long long size = ZSTD_getFrameContentSize(src, n);
		size_t frame = ZSTD_findFrameCompressedSize(src, n), got;
		if (size != (unsigned long long)raw || ZSTD_isError(frame) || frame != n)
			return -1;
		if (d->zstd == NULL && (d->zstd = ZSTD_createDCtx()) == NULL)
			return -1;
		got = ZSTD_decompressDCtx(d->zstd, dst, raw, src, n);
		if (ZSTD_isError(got) || got != raw)
			return -1;
		return 0;
	}
	return -1;
}

/* The bytes a name may not hold (doc/pcz-format.md, "Conventions"). */
const uint8_t pcz_name_bad[256] = { [0] = 1, [','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1 };

int pcz_name_ok(const char *s, size_t n)
{
	unsigned bad = 0;

	for (size_t i = 0; i < n; i++)
		bad |= pcz_name_bad[(uint8_t)s[i]];
	return n > 0 && !bad;
}

int pcz_meta_key_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int pcz_meta_value_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0' || s[i] == '\r' || s[i] == '\n')
			return 0;
	return 1;
}

/* FNV-1a: short names, no adversary that matters (a decoder bounds the dictionary). */
size_t pcz_name_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return (size_t)h;
}

int pcz_name_scan(const char *s, size_t *len, size_t *hash)
{
	uint64_t h = 1469598103934665603ull;
	unsigned bad = 0;
	size_t i;

	for (i = 0; s[i]; i++) {
		bad |= pcz_name_bad[(uint8_t)s[i]];
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	}
	*len = i;
	*hash = (size_t)h;
	return i > 0 && !bad;
}

void pcz_dict_free(pcz_dict *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	free(d->last_end);
	free(d->last_gen);
	free(d->hash);
	free(d->len);
	free(d->slots);
	memset(d, 0, sizeof *d);
}

size_t pcz_dict_find(const pcz_dict *d, const char *name, size_t len)
{
	return pcz_dict_find_hashed(d, name, len, pcz_name_hash(name, len));
}

size_t pcz_dict_find_hashed(const pcz_dict *d, const char *name, size_t len, size_t hash)
{
	if (d->n_slots == 0)
		return SIZE_MAX;
	for (size_t i = hash & (d->n_slots - 1);; i = (i + 1) & (d->n_slots - 1)) {
		size_t k = d->slots[i];
		if (k == 0)
			return SIZE_MAX;
		/* Equal hash and length first: memcmp then reads only within both names. */
		if (d->hash[k - 1] == hash && d->len[k - 1] == len &&
		    memcmp(d->names[k - 1], name, len) == 0)
			return k - 1;
	}
}

static int dict_rehash(pcz_dict *d, size_t n_slots)
{
	size_t *slots = calloc(n_slots, sizeof *slots);

	if (slots == NULL)
		return -1;
	for (size_t k = 0; k < d->n; k++) {
		size_t i = d->hash[k] & (n_slots - 1);
		while (slots[i] != 0)
			i = (i + 1) & (n_slots - 1);
		slots[i] = k + 1;
	}
	free(d->slots);
	d->slots = slots;
	d->n_slots = n_slots;
	return 0;
}

static int dict_grow(pcz_dict *d)
{
	size_t cap = d->cap ? d->cap * 2 : 16;
	char **names = realloc(d->names, cap * sizeof *names);
	uint64_t *ends, *gens;
	size_t *hash;

	if (names == NULL)
		return -1;
	d->names = names;
	ends = realloc(d->last_end, cap * sizeof *ends);
	if (ends == NULL)
		return -1;
	d->last_end = ends;
	gens = realloc(d->last_gen, cap * sizeof *gens);
	if (gens == NULL)
		return -1;
	d->last_gen = gens;
	hash = realloc(d->hash, cap * sizeof *hash);
	if (hash == NULL)
		return -1;
	d->hash = hash;
	hash = realloc(d->len, cap * sizeof *hash);
	if (hash == NULL)
		return -1;
	d->len = hash;
	d->cap = cap;
	return 0;
}

size_t pcz_dict_add(pcz_dict *d, const char *name, size_t len)
{
	char *copy;

	if (d->n == d->cap && dict_grow(d) != 0)
		return SIZE_MAX;
	if ((d->n + 1) * 2 > d->n_slots && dict_rehash(d, d->n_slots ? d->n_slots * 2 : 32) != 0)
		return SIZE_MAX;
	copy = malloc(len + 1);
	if (copy == NULL)
		return SIZE_MAX;
	memcpy(copy, name, len);
	copy[len] = '\0';
	d->names[d->n] = copy;
	d->last_end[d->n] = 0;
	d->last_gen[d->n] = UINT64_MAX;
	d->hash[d->n] = pcz_name_hash(name, len);
	d->len[d->n] = len;
	{
		size_t i = d->hash[d->n] & (d->n_slots - 1);
		while (d->slots[i] != 0)
			i = (i + 1) & (d->n_slots - 1);
		d->slots[i] = d->n + 1;
	}
	return d->n++;
}

int pcz_name_is_next(const char *prev, size_t plen, const char *name, size_t nlen)
{
	size_t d = plen;
	uint64_t v = 0, x = 0;

	while (d > 0 && prev[d - 1] >= '0' && prev[d - 1] <= '9')
		d--;
	/* The rule of pcz_name_next for prev, then name's digits against v + 1. */
	if (d == plen || plen - d > 18 || (prev[d] == '0' && plen - d > 1))
		return 0;
	/* The common case, a last digit below 9: v + 1 is prev with that digit plus one. */
	if (prev[plen - 1] != '9') {
		if (nlen != plen || name[plen - 1] != prev[plen - 1] + 1)
			return 0;
		for (size_t i = 0; i + 1 < plen; i++)
			if (name[i] != prev[i])
				return 0;
		return 1;
	}
	if (nlen <= d || nlen - d > 19 || memcmp(prev, name, d) != 0 || name[d] == '0')
		return 0;
	for (size_t i = d; i < plen; i++)
		v = v * 10 + (uint64_t)(prev[i] - '0');
	for (size_t i = d; i < nlen; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		x = x * 10 + (uint64_t)(name[i] - '0');
	}
	return x == v + 1;
}

int pcz_name_next(const char *prev, char *out, size_t cap)
{
	size_t n = strlen(prev), d = n, i;

	while (d > 0 && prev[d - 1] >= '0' && prev[d - 1] <= '9')
		d--;
	/* A trailing number of 1 to 18 digits, without a leading zero. */
	if (d == n || n - d > 18 || (prev[d] == '0' && n - d > 1) || cap < d + 21)
		return -1;
	/* Plus one in decimal, in place: nines become zeros up to the first other digit. */
	memcpy(out, prev, n + 1);
	for (i = n; i > d && out[i - 1] == '9'; i--)
		out[i - 1] = '0';
	if (i > d) {
		out[i - 1]++;
	} else { /* all nines: one more digit, a 1 in front */
		out[d] = '1';
		out[n] = '0';
		out[n + 1] = '\0';
	}
	return 0;
}

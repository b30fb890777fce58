/* SPDX-License-Identifier: BSD-3-Clause */
/* Little-endian encoding into a growable buffer, and bounded decoding with one sticky error. */
#include <stdlib.h>
#include <string.h>

#include "mpxkit/container.h"

void mpxkit_bytes_put(mpxkit_bytes *b, const void *p, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *grown;
		while (cap - b->len < n) {
			if (cap > SIZE_MAX / 2) {
				b->oom = 1;
				return;
			}
			cap *= 2;
		}
		grown = realloc(b->data, cap);
		if (grown == NULL) {
			b->oom = 1;
			return;
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_le(mpxkit_bytes *b, uint64_t v, int n)
{
	unsigned char t[8];

	for (int i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	mpxkit_bytes_put(b, t, (size_t)n);
}

void mpxkit_bytes_u8(mpxkit_bytes *b, uint8_t v)
{
	put_le(b, v, 1);
}

void mpxkit_bytes_u16(mpxkit_bytes *b, uint16_t v)
{
	put_le(b, v, 2);
}

void mpxkit_bytes_u32(mpxkit_bytes *b, uint32_t v)
{
	put_le(b, v, 4);
}

void mpxkit_bytes_u64(mpxkit_bytes *b, uint64_t v)
{
	put_le(b, v, 8);
}

void mpxkit_bytes_f64(mpxkit_bytes *b, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof u);
	put_le(b, u, 8);
}

void mpxkit_bytes_varint(mpxkit_bytes *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	mpxkit_bytes_put(b, t, n);
}

void mpxkit_bytes_svarint(mpxkit_bytes *b, int64_t v)
{
	uint64_t u = (uint64_t)v;

	mpxkit_bytes_varint(b, (u << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

void mpxkit_bytes_string(mpxkit_bytes *b, const char *s)
{
	size_t n = strlen(s);

	mpxkit_bytes_varint(b, n);
	mpxkit_bytes_put(b, s, n);
}

void mpxkit_bytes_free(mpxkit_bytes *b)
{
	free(b->data);
	*b = (mpxkit_bytes){ 0 };
}

void mpxkit_cursor_init(mpxkit_cursor *c, const void *p, size_t len)
{
	c->p = p;
	c->end = c->p + len;
	c->error = 0;
}

/* n bytes at the cursor, or NULL after setting the error. */
static const unsigned char *take(mpxkit_cursor *c, size_t n)
{
	const unsigned char *p = c->p;

	if (c->error)
		return NULL;
	if ((size_t)(c->end - c->p) < n) {
		c->error = -MPXKIT_ETRUNC;
		return NULL;
	}
	c->p += n;
	return p;
}

static uint64_t get_le(mpxkit_cursor *c, int n)
{
	const unsigned char *p = take(c, (size_t)n);
	uint64_t v = 0;

	if (p == NULL)
		return 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint8_t mpxkit_cursor_u8(mpxkit_cursor *c)
{
	return (uint8_t)get_le(c, 1);
}

uint16_t mpxkit_cursor_u16(mpxkit_cursor *c)
{
	return (uint16_t)get_le(c, 2);
}

uint32_t mpxkit_cursor_u32(mpxkit_cursor *c)
{
	return (uint32_t)get_le(c, 4);
}

uint64_t mpxkit_cursor_u64(mpxkit_cursor *c)
{
	return get_le(c, 8);
}

double mpxkit_cursor_f64(mpxkit_cursor *c)
{
	uint64_t u = get_le(c, 8);
	double v;

	memcpy(&v, &u, sizeof v);
	return v;
}

/* Canonical LEB128 only: at most 10 bytes, no value above 2^64-1, no trailing zero byte. */
uint64_t mpxkit_cursor_varint(mpxkit_cursor *c)
{
	uint64_t v = 0;

	for (int i = 0; i < 10; i++) {
		const unsigned char *p = take(c, 1);
		if (p == NULL)
			return 0;
		if (i == 9 && *p > 1)
			break;
		v |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p & 0x80)) {
			if (i > 0 && *p == 0)
				break;
			return v;
		}
	}
	c->error = -MPXKIT_EFORMAT;
	return 0;
}

int64_t mpxkit_cursor_svarint(mpxkit_cursor *c)
{
	uint64_t u = mpxkit_cursor_varint(c);

	return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

const char *mpxkit_cursor_string(mpxkit_cursor *c, size_t max_len, size_t *len)
{
	uint64_t n = mpxkit_cursor_varint(c);
	const unsigned char *p;

	*len = 0;
	if (c->error)
		return NULL;
	if (n > max_len) {
		c->error = -MPXKIT_EFORMAT;
		return NULL;
	}
	p = take(c, (size_t)n);
	if (p == NULL)
		return NULL;
	if (memchr(p, '\0', (size_t)n)) {
		c->error = -MPXKIT_EFORMAT;
		return NULL;
	}
	*len = (size_t)n;
	return (const char *)p;
}

const void *mpxkit_cursor_bytes(mpxkit_cursor *c, size_t n)
{
	return take(c, n);
}

size_t mpxkit_cursor_left(const mpxkit_cursor *c)
{
	return c->error ? 0 : (size_t)(c->end - c->p);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Versioned, checksummed, sectioned files: one framing and one strict loader for every new binary format. */
#ifndef MPXKIT_CONTAINER_H
#define MPXKIT_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * doc/container-format.md specifies the bytes.  In short: a 16-byte header
 * (the format's own magic, version, reserved flags, header CRC), then
 * sections, each framed as (tag, reserved, length, frame CRC, payload,
 * payload CRC), then an END section that counts the sections and carries a
 * CRC of everything before it, then an end mark.  A format built on it
 * (predict models .mpxp, profiles .prof, ...) chooses its magic, its
 * versions and its section tags, and documents its payloads.
 *
 * The reader is strict and streamed: it checks the header CRC before any
 * other field, every length against the format's bounds before allocating,
 * every payload CRC before handing out the payload, the section count and
 * content CRC at END, and refuses any byte after the end mark.  A section
 * is at most max_section bytes (the format's bound, <= 1 GiB), so memory is
 * bounded by one section whatever the file's size.
 *
 * The writer writes through mpxkit_outfile: the file appears whole under its
 * name at commit, or not at all.
 */

/* Four ASCII characters as a little-endian u32: MPXKIT_TAG('M','E','T','A'). */
#define MPXKIT_TAG(a, b, c, d)                                                                     \
	((uint32_t)(unsigned char)(a) | (uint32_t)(unsigned char)(b) << 8 |                        \
	 (uint32_t)(unsigned char)(c) << 16 | (uint32_t)(unsigned char)(d) << 24)

/* ---- bytes: encoding and bounded decoding of payloads --------------------------------------- */

/* A growable byte buffer; a failed growth sets oom and later appends do nothing. */
typedef struct mpxkit_bytes {
	unsigned char *data;
	size_t len, cap;
	int oom;
} mpxkit_bytes;

void mpxkit_bytes_put(mpxkit_bytes *b, const void *p, size_t n);
void mpxkit_bytes_u8(mpxkit_bytes *b, uint8_t v);
void mpxkit_bytes_u16(mpxkit_bytes *b, uint16_t v); /* little-endian */
void mpxkit_bytes_u32(mpxkit_bytes *b, uint32_t v);
void mpxkit_bytes_u64(mpxkit_bytes *b, uint64_t v);
void mpxkit_bytes_f64(mpxkit_bytes *b, double v); /* IEEE-754 binary64, little-endian */
void mpxkit_bytes_varint(mpxkit_bytes *b, uint64_t v); /* unsigned LEB128 */
void mpxkit_bytes_svarint(mpxkit_bytes *b, int64_t v); /* zigzag, then LEB128 */
void mpxkit_bytes_string(mpxkit_bytes *b, const char *s); /* varint length, bytes, no NUL */
void mpxkit_bytes_free(mpxkit_bytes *b);

/*
 * A cursor over a payload.  Every read checks that the bytes are there; the
 * first failure sets `error` (-MPXKIT_ETRUNC, or -MPXKIT_EFORMAT for a
 * non-canonical varint or a string with a NUL) and every later read returns
 * 0, so a decoder reads a whole record and checks once.
 */
typedef struct mpxkit_cursor {
	const unsigned char *p, *end;
	int error;
} mpxkit_cursor;

void mpxkit_cursor_init(mpxkit_cursor *c, const void *p, size_t len);
uint8_t mpxkit_cursor_u8(mpxkit_cursor *c);
uint16_t mpxkit_cursor_u16(mpxkit_cursor *c);
uint32_t mpxkit_cursor_u32(mpxkit_cursor *c);
uint64_t mpxkit_cursor_u64(mpxkit_cursor *c);
double mpxkit_cursor_f64(mpxkit_cursor *c);
uint64_t mpxkit_cursor_varint(mpxkit_cursor *c);
int64_t mpxkit_cursor_svarint(mpxkit_cursor *c);
/* A string's bytes, not terminated: *len set; the pointer is into the payload. */
const char *mpxkit_cursor_string(mpxkit_cursor *c, size_t max_len, size_t *len);
/* n raw bytes, or NULL. */
const void *mpxkit_cursor_bytes(mpxkit_cursor *c, size_t n);
size_t mpxkit_cursor_left(const mpxkit_cursor *c);

/* ---- the file --------------------------------------------------------------------------------- */

typedef struct mpxkit_container_format {
	const char *name;      /* in messages: "predict model", "profile" */
	uint32_t magic;        /* first byte with its high bit set (the PNG trick) */
	uint16_t min_version;  /* versions this reader accepts */
	uint16_t max_version;
	uint64_t max_section;  /* largest payload, bytes */
	uint64_t max_sections; /* 0: no bound */
} mpxkit_container_format;

typedef struct mpxkit_container_writer mpxkit_container_writer;

int mpxkit_container_create(mpxkit_container_writer **w, const char *path,
			    const mpxkit_container_format *fmt, uint16_t version, mpxkit_diag *diag);
/* A whole section; len <= fmt->max_section. */
int mpxkit_container_put(mpxkit_container_writer *w, uint32_t tag, const void *payload, size_t len,
			 mpxkit_diag *diag);
/* Writes END and the end mark and renames into place; frees w either way. */
int mpxkit_container_commit(mpxkit_container_writer *w, mpxkit_diag *diag);
/* Removes the temporary file and frees w; NULL is a no-op. */
void mpxkit_container_abort(mpxkit_container_writer *w);

/* The same file built in memory (tests, fuzz seeds): *out malloc'd. */
int mpxkit_container_encode(const mpxkit_container_format *fmt, uint16_t version,
			    const uint32_t *tags, const void *const *payloads, const size_t *lens,
			    size_t n_sections, unsigned char **out, size_t *out_len, mpxkit_diag *diag);

typedef struct mpxkit_container_reader mpxkit_container_reader;

int mpxkit_container_open(mpxkit_container_reader **r, const char *path,
			  const mpxkit_container_format *fmt, mpxkit_diag *diag);
/* Over a buffer the caller keeps for the reader's life. */
int mpxkit_container_open_buffer(mpxkit_container_reader **r, const void *buf, size_t len,
				 const char *name, const mpxkit_container_format *fmt,
				 mpxkit_diag *diag);
uint16_t mpxkit_container_version(const mpxkit_container_reader *r);

/*
 * The next section: 1 with *tag, *payload and *len set (the payload is
 * valid until the next call), 0 once END and the end mark have been read
 * and verified, or a negative code (then every later call fails too).
 */
int mpxkit_container_next(mpxkit_container_reader *r, uint32_t *tag, const void **payload,
			  size_t *len, mpxkit_diag *diag);

void mpxkit_container_close(mpxkit_container_reader *r); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif

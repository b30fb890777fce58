/* SPDX-License-Identifier: BSD-3-Clause */
/* The sectioned container of doc/container-format.md: a strict streamed reader and an atomic writer. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mpxkit/container.h"
#include "mpxkit/outfile.h"
#include "mpxkit/reader.h"

#define HEADER_LEN 16
#define FRAME_LEN 20 /* tag, reserved, length, frame CRC */
#define FRAME_CRC_AT 16
#define CRC_LEN 4
#define END_TAG 0x444E458Au /* bytes 8A 45 4E 44: "\x8AEND" */
#define END_PAYLOAD 12
#define MAX_SECTION_LIMIT ((uint64_t)1 << 30)

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* Fuzzing builds skip the checksums so that mutations reach the framing and payload checks. */
#define crc_matches(a, b) ((void)(a), (void)(b), 1)
#else
#define crc_matches(a, b) ((a) == (b))
#endif

static uint32_t crc_of(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	/* zlib's crc32 takes uInt lengths. */
	while (n > 0) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, b, step);
		b += step;
		n -= step;
	}
	return crc;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int tag_ok(uint32_t tag)
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(tag >> (8 * i));
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return 1;
}

static void tag_text(uint32_t tag, char out[5])
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (unsigned char)(tag >> (8 * i));
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[4] = '\0';
}

static int format_ok(const mpxkit_container_format *fmt)
{
	return fmt && fmt->name && (fmt->magic & 0x80) && fmt->min_version <= fmt->max_version &&
	       fmt->max_section > 0 && fmt->max_section <= MAX_SECTION_LIMIT;
}

/* ---- writer ------------------------------------------------------------------------------------ */

struct mpxkit_container_writer {
	const mpxkit_container_format *fmt;
	mpxkit_outfile *out; /* NULL: into mem */
	mpxkit_bytes mem;
	uint32_t content_crc;
	uint64_t n_sections;
	int failed;
};

static int emit(mpxkit_container_writer *w, const void *p, size_t n, mpxkit_diag *diag)
{
	w->content_crc = crc_of(w->content_crc, p, n);
	if (w->out)
		return mpxkit_outfile_write(w->out, p, n, diag);
	mpxkit_bytes_put(&w->mem, p, n);
	return w->mem.oom ? mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", w->fmt->name) : 0;
}

static int write_header(mpxkit_container_writer *w, uint16_t version, mpxkit_diag *diag)
{
	mpxkit_bytes h = { 0 };
	int rc;

	mpxkit_bytes_u32(&h, w->fmt->magic);
	mpxkit_bytes_u16(&h, version);
	mpxkit_bytes_u16(&h, 0);
	mpxkit_bytes_u32(&h, 0);
	if (h.oom)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", w->fmt->name);
	mpxkit_bytes_u32(&h, crc_of(0, h.data, h.len));
	rc = h.oom ? mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", w->fmt->name)
		   : emit(w, h.data, h.len, diag);
	mpxkit_bytes_free(&h);
	return rc;
}

static int write_section(mpxkit_container_writer *w, uint32_t tag, const void *payload,
			 size_t len, mpxkit_diag *diag)
{
	unsigned char frame[FRAME_LEN], crc[CRC_LEN];
	mpxkit_bytes f = { .data = frame, .cap = sizeof frame };
	uint32_t pcrc = crc_of(0, payload, len);
	int rc;

	mpxkit_bytes_u32(&f, tag);
	mpxkit_bytes_u32(&f, 0);
	mpxkit_bytes_u64(&f, (uint64_t)len);
	mpxkit_bytes_u32(&f, crc_of(0, frame, FRAME_CRC_AT));
	for (int i = 0; i < 4; i++)
		crc[i] = (unsigned char)(pcrc >> (8 * i));
	rc = emit(w, frame, sizeof frame, diag);
	if (rc == 0)
		rc = emit(w, payload, len, diag);
	if (rc == 0)
		rc = emit(w, crc, sizeof crc, diag);
	return rc;
}

static int writer_new(mpxkit_container_writer **out, const mpxkit_container_format *fmt,
		      uint16_t version, mpxkit_diag *diag)
{
	mpxkit_container_writer *w;

	if (out == NULL || !format_ok(fmt))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "container: bad format description");
	if (version < fmt->min_version || version > fmt->max_version)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: cannot write version %u", fmt->name,
				   version);
	w = calloc(1, sizeof *w);
	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", fmt->name);
	w->fmt = fmt;
	*out = w;
	return 0;
}

int mpxkit_container_create(mpxkit_container_writer **out, const char *path,
			    const mpxkit_container_format *fmt, uint16_t version, mpxkit_diag *diag)
{
	mpxkit_container_writer *w;
	int rc = writer_new(&w, fmt, version, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_outfile_open(&w->out, path, diag);
	if (rc == 0)
		rc = write_header(w, version, diag);
	if (rc < 0) {
		mpxkit_container_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

int mpxkit_container_put(mpxkit_container_writer *w, uint32_t tag, const void *payload, size_t len,
			 mpxkit_diag *diag)
{
	int rc;

	if (w->failed)
		return mpxkit_fail(diag, MPXKIT_ESTATE, "%s: write after a failure", w->fmt->name);
	if (!tag_ok(tag) || (payload == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: bad section tag or payload",
				   w->fmt->name);
	if ((uint64_t)len > w->fmt->max_section)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: section of %zu bytes above the %" PRIu64
						       "-byte limit",
				   w->fmt->name, len, w->fmt->max_section);
	if (w->fmt->max_sections && w->n_sections >= w->fmt->max_sections)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "%s: more than %" PRIu64 " sections",
				   w->fmt->name, w->fmt->max_sections);
	rc = write_section(w, tag, payload, len, diag);
	if (rc < 0)
		w->failed = 1;
	else
		w->n_sections++;
	return rc;
}

static int write_end(mpxkit_container_writer *w, mpxkit_diag *diag)
{
	unsigned char p[END_PAYLOAD];
	mpxkit_bytes b = { .data = p, .cap = sizeof p };

	if (w->failed)
		return mpxkit_fail(diag, MPXKIT_ESTATE, "%s: commit after a failure", w->fmt->name);
	mpxkit_bytes_u64(&b, w->n_sections);
	mpxkit_bytes_u32(&b, w->content_crc);
	return write_section(w, END_TAG, p, sizeof p, diag);
}

int mpxkit_container_commit(mpxkit_container_writer *w, mpxkit_diag *diag)
{
	int rc;

	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "container: NULL writer");
	rc = write_end(w, diag);
	if (rc == 0) {
		rc = mpxkit_outfile_commit(w->out, diag);
		w->out = NULL;
	}
	mpxkit_container_abort(w);
	return rc;
}

void mpxkit_container_abort(mpxkit_container_writer *w)
{
	if (w == NULL)
		return;
	mpxkit_outfile_abort(w->out);
	mpxkit_bytes_free(&w->mem);
	free(w);
}

int mpxkit_container_encode(const mpxkit_container_format *fmt, uint16_t version,
			    const uint32_t *tags, const void *const *payloads, const size_t *lens,
			    size_t n_sections, unsigned char **out, size_t *out_len, mpxkit_diag *diag)
{
	mpxkit_container_writer *w;
	int rc = writer_new(&w, fmt, version, diag);

	if (rc < 0)
		return rc;
	rc = write_header(w, version, diag);
	for (size_t i = 0; rc == 0 && i < n_sections; i++)
		rc = mpxkit_container_put(w, tags[i], payloads[i], lens[i], diag);
	if (rc == 0)
		rc = write_end(w, diag);
	if (rc == 0) {
		*out = w->mem.data;
		*out_len = w->mem.len;
		w->mem = (mpxkit_bytes){ 0 };
	}
	mpxkit_container_abort(w);
	return rc;
}

/* ---- reader ------------------------------------------------------------------------------------ */

struct mpxkit_container_reader {
	const mpxkit_container_format *fmt;
	char *name;
	mpxkit_reader *in;          /* a file; NULL when reading a buffer */
	const unsigned char *mem;   /* a buffer */
	size_t mem_len, mem_pos;
	unsigned char *payload;     /* the current section's bytes (file input) */
	size_t payload_cap;
	uint16_t version;
	uint64_t n_sections;
	uint32_t content_crc;
	int done;
	int error;
};

static int rfail(mpxkit_container_reader *r, int rc)
{
	r->error = rc;
	return rc;
}

/* Exactly n bytes into *p (a pointer into the buffer, or into dst for a file). */
static int need(mpxkit_container_reader *r, size_t n, unsigned char *dst, const unsigned char **p,
		const char *what, mpxkit_diag *diag)
{
	if (r->in == NULL) {
		if (r->mem_len - r->mem_pos < n)
			return rfail(r, mpxkit_fail(diag, MPXKIT_ETRUNC, "%s: truncated %s (%s)",
						    r->name, what, r->fmt->name));
		*p = r->mem + r->mem_pos;
		r->mem_pos += n;
	} else {
		size_t got;
		int rc = mpxkit_reader_read(r->in, dst, n, &got, diag);
		if (rc < 0)
			return rfail(r, rc);
		if (got < n)
			return rfail(r, mpxkit_fail(diag, MPXKIT_ETRUNC, "%s: truncated %s (%s)",
						    r->name, what, r->fmt->name));
		*p = dst;
	}
	return 0;
}

static int read_header(mpxkit_container_reader *r, mpxkit_diag *diag)
{
	unsigned char buf[HEADER_LEN];
	const unsigned char *h;
	int rc = need(r, HEADER_LEN, buf, &h, "header", diag);

	if (rc < 0)
		return rc;
	if (le32(h) != r->fmt->magic)
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: not a %s file (bad magic)",
					    r->name, r->fmt->name));
	if (!crc_matches(crc_of(0, h, 12), le32(h + 12)))
		return rfail(r, mpxkit_fail(diag, MPXKIT_ECHECKSUM, "%s: header checksum mismatch",
					    r->name));
	r->version = (uint16_t)(h[4] | h[5] << 8);
	if (r->version < r->fmt->min_version || r->version > r->fmt->max_version)
		return rfail(r, mpxkit_fail(diag, MPXKIT_EVERSION,
					    "%s: %s version %u, this build reads %u to %u", r->name,
					    r->fmt->name, r->version, r->fmt->min_version,
					    r->fmt->max_version));
	if (h[6] | h[7] | le32(h + 8))
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: reserved header bits set",
					    r->name));
	r->content_crc = crc_of(0, h, HEADER_LEN);
	return 0;
}

static int reader_new(mpxkit_container_reader **out, const char *name,
		      const mpxkit_container_format *fmt, mpxkit_diag *diag)
{
	mpxkit_container_reader *r;

	if (out == NULL || !format_ok(fmt))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "container: bad format description");
	r = calloc(1, sizeof *r);
	if (r == NULL || (r->name = strdup(name ? name : fmt->name)) == NULL) {
		free(r);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", fmt->name);
	}
	r->fmt = fmt;
	*out = r;
	return 0;
}

int mpxkit_container_open(mpxkit_container_reader **out, const char *path,
			  const mpxkit_container_format *fmt, mpxkit_diag *diag)
{
	mpxkit_container_reader *r;
	mpxkit_reader_options opt = { .what = fmt ? fmt->name : NULL };
	int rc = reader_new(&r, path, fmt, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_reader_open(&r->in, path, &opt, diag);
	if (rc == 0)
		rc = read_header(r, diag);
	if (rc < 0) {
		mpxkit_container_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int mpxkit_container_open_buffer(mpxkit_container_reader **out, const void *buf, size_t len,
				 const char *name, const mpxkit_container_format *fmt,
				 mpxkit_diag *diag)
{
	mpxkit_container_reader *r;
	int rc = reader_new(&r, name, fmt, diag);

	if (rc < 0)
		return rc;
	r->mem = buf;
	r->mem_len = buf ? len : 0;
	rc = read_header(r, diag);
	if (rc < 0) {
		mpxkit_container_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

uint16_t mpxkit_container_version(const mpxkit_container_reader *r)
{
	return r->version;
}

static int check_frame(mpxkit_container_reader *r, const unsigned char *f, uint32_t *tag,
		       uint64_t *len, mpxkit_diag *diag)
{
	char text[5];

	if (!crc_matches(crc_of(0, f, FRAME_CRC_AT), le32(f + FRAME_CRC_AT)))
		return rfail(r, mpxkit_fail(diag, MPXKIT_ECHECKSUM,
					    "%s: section %" PRIu64 ": frame checksum mismatch",
					    r->name, r->n_sections + 1));
	*tag = le32(f);
	*len = le64(f + 8);
	tag_text(*tag, text);
	if (le32(f + 4) != 0)
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT,
					    "%s: section %s: reserved bits set", r->name, text));
	if (*tag == END_TAG ? *len != END_PAYLOAD : !tag_ok(*tag))
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: section %" PRIu64
								  ": bad tag or END length",
					    r->name, r->n_sections + 1));
	if (*len > r->fmt->max_section)
		return rfail(r, mpxkit_fail(diag, MPXKIT_ERANGE,
					    "%s: section %s of %" PRIu64
					    " bytes, above the %" PRIu64 "-byte limit of a %s",
					    r->name, text, *len, r->fmt->max_section, r->fmt->name));
	if (*tag != END_TAG && r->fmt->max_sections && r->n_sections >= r->fmt->max_sections)
		return rfail(r, mpxkit_fail(diag, MPXKIT_ERANGE, "%s: more than %" PRIu64
								 " sections",
					    r->name, r->fmt->max_sections));
	return 0;
}

static int read_payload(mpxkit_container_reader *r, uint64_t len, const unsigned char **p,
			mpxkit_diag *diag)
{
	if (r->in && len > r->payload_cap) {
		unsigned char *grown = realloc(r->payload, (size_t)len);
		if (grown == NULL)
			return rfail(r, mpxkit_fail(diag, MPXKIT_ENOMEM,
						    "%s: out of memory for a %" PRIu64
						    "-byte section",
						    r->name, len));
		r->payload = grown;
		r->payload_cap = (size_t)len;
	}
	return need(r, (size_t)len, r->payload, p, "section", diag);
}

/* Whether any byte follows the end: 1, 0, or a negative code. */
static int trailing(mpxkit_container_reader *r, mpxkit_diag *diag)
{
	unsigned char extra;
	size_t got = 0;
	int rc;

	if (r->in == NULL)
		return r->mem_pos != r->mem_len;
	rc = mpxkit_reader_read(r->in, &extra, 1, &got, diag);
	return rc < 0 ? rc : got != 0;
}

/* After END: the counts and the content checksum agree, and nothing follows. */
static int check_end(mpxkit_container_reader *r, const unsigned char *p, uint32_t crc_before,
		     mpxkit_diag *diag)
{
	int rc;

	if (le64(p) != r->n_sections)
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT,
					    "%s: END counts %" PRIu64 " sections, read %" PRIu64,
					    r->name, le64(p), r->n_sections));
	if (!crc_matches(le32(p + 8), crc_before))
		return rfail(r, mpxkit_fail(diag, MPXKIT_ECHECKSUM,
					    "%s: content checksum mismatch", r->name));
	rc = trailing(r, diag);
	if (rc < 0)
		return rfail(r, rc);
	if (rc > 0)
		return rfail(r, mpxkit_fail(diag, MPXKIT_EFORMAT, "%s: bytes after the end",
					    r->name));
	r->done = 1;
	return 0;
}

int mpxkit_container_next(mpxkit_container_reader *r, uint32_t *tag, const void **payload,
			  size_t *len, mpxkit_diag *diag)
{
	unsigned char fbuf[FRAME_LEN], cbuf[CRC_LEN];
	const unsigned char *f, *p, *c;
	uint64_t n = 0;
	uint32_t t = 0, crc_before;
	int rc;

	if (r->error)
		return mpxkit_fail(diag, -r->error, "%s: read after an error", r->name);
	if (r->done)
		return 0;
	crc_before = r->content_crc;
	if ((rc = need(r, FRAME_LEN, fbuf, &f, "section frame", diag)) < 0 ||
	    (rc = check_frame(r, f, &t, &n, diag)) < 0)
		return rc;
	r->content_crc = crc_of(r->content_crc, f, FRAME_LEN);
	if ((rc = read_payload(r, n, &p, diag)) < 0 ||
	    (rc = need(r, CRC_LEN, cbuf, &c, "section checksum", diag)) < 0)
		return rc;
	if (!crc_matches(crc_of(0, p, (size_t)n), le32(c))) {
		char text[5];
		tag_text(t, text);
		return rfail(r, mpxkit_fail(diag, MPXKIT_ECHECKSUM,
					    "%s: section %s: payload checksum mismatch", r->name,
					    text));
	}
	if (t == END_TAG) {
		rc = check_end(r, p, crc_before, diag);
		return rc < 0 ? rc : 0;
	}
	r->content_crc = crc_of(crc_of(r->content_crc, p, (size_t)n), c, CRC_LEN);
	r->n_sections++;
	*tag = t;
	*payload = p;
	*len = (size_t)n;
	return 1;
}

void mpxkit_container_close(mpxkit_container_reader *r)
{
	if (r == NULL)
		return;
	mpxkit_reader_close(r->in);
	free(r->payload);
	free(r->name);
	free(r);
}

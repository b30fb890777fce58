/* SPDX-License-Identifier: BSD-3-Clause */
/* The .pcz reader: checks the whole frame at open, then decodes regions one by one. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpxkit/reader.h"
#include "pcz_impl.h"

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* Fuzzing builds skip the checksums so that mutations reach the structure checks (as zstd does). */
#define crc_matches(a, b) ((void)(a), (void)(b), 1)
#else
#define crc_matches(a, b) ((a) == (b))
#endif

struct section {
	unsigned type, codec;
	uint64_t off; /* of the frame in the file */
	size_t stored, raw;
	const uint8_t *body;
	uint32_t raw_crc; /* version 1 */
	size_t frame;     /* bytes of the frame before the payload */
};

/* Where the values of one (slot, stream) are read from. */
struct vcur {
	const uint8_t *p, *end; /* VARINT: the bytes left */
	uint64_t n, i;          /* PLANES: count and next index; p is plane 0 */
	unsigned width;
	uint64_t off;           /* file offset of the first byte, for diags */
};

/* Version 2's MODEL decoding state (doc/pcz-format.md, "Version 2"). */
struct model_state {
	pcz_msec sec;       /* the section's predictors and tables */
	pcz_mdec dec;       /* its streams */
	size_t *slot_last;  /* per slot: the unit's last row in rows, or SIZE_MAX */
	int64_t *slot_place;
	size_t cap_slots;
	uint64_t *rows;     /* the section's rows so far, contiguous (width 2 + n_events) */
	size_t cap_rows, n_rows;
	size_t *first_row;  /* per unit of the region */
	size_t cap_first;
	uint64_t values_left, prev_units;
	size_t values_total; /* the section frame's */
	pcz_ring ring;      /* MATCH's window over rows */
	uint64_t *bits;     /* per column: 1/65536 bits read so far (info) */
	int count_bits;     /* mpxkit_pcz_reader_count_bits was called: bits are kept */
	uint64_t payload_bits; /* of the REGIONS payloads begun */
};

struct mpxkit_pcz_reader {
	char *name;
	unsigned version;
	struct model_state m;
	uint8_t *owned;
	const uint8_t *buf;
	size_t len;
	struct section *sec;
	size_t n_sec;
	uint64_t end_regions, end_units;
	char **meta_keys, **meta_values;
	size_t n_meta;
	char **events;
	size_t n_events;
	int placement;
	int intervals; /* EVENTS flag INTERVALS: every region's triples are checked */
	uint8_t *topology;
	size_t topology_len;
	mpxkit_pcz_stats stats;
	pcz_decompressor dz;
	/* Region iteration. */
	size_t next_sec;
	size_t sec_index; /* REGIONS sections begun */
	uint8_t *chunk;
	const struct section *cur_sec;
	pcz_cur structure;
	struct vcur *vc;
	size_t cap_vc, n_slots, next_slot;
	unsigned layout;
	uint8_t *pred; /* per event: PCZ_PRED_* of this section */
	size_t *slot_of;
	uint64_t *slot_gen;
	uint64_t chunk_left;
	uint64_t *prev_ref;
	uint64_t *hist, *hist_gen; /* per dictionary entry, as in the writer */
	size_t hist_cap;
	pcz_dict dict;
	uint64_t *seen; /* per dictionary entry: number of the region it was last used in */
	size_t cap_seen;
	uint64_t regions_read, units_read;
	int failed;
	mpxkit_diag fail_diag;
	/* The current region. */
	mpxkit_pcz_region region;
	char *region_name;
	size_t region_cap;
	char *spare_name;  /* the next NEXT name is made here, then swapped in */
	size_t spare_cap;
	mpxkit_pcz_unit *units;
	size_t *group_of, *group_ref, *members, *kidx;
	uint64_t *dur;
	size_t cap_units;
	uint64_t *times, *values;
	size_t cap_times, cap_values;
	uint8_t *mask;
	size_t cap_mask;
};

static const char *section_name(unsigned type)
{
	switch (type) {
	case PCZ_META:
		return "META";
	case PCZ_TOPOLOGY:
		return "TOPOLOGY";
	case PCZ_EVENTS:
		return "EVENTS";
	case PCZ_REGIONS:
		return "REGIONS";
	case PCZ_END:
		return "END";
	}
	return "unknown";
}

/* "NAME: offset N: reason": every failure of a damaged file reads this way. */
__attribute__((format(printf, 5, 6))) static int bad(const mpxkit_pcz_reader *r,
						     mpxkit_diag *diag, int code, uint64_t off,
						     const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return mpxkit_fail(diag, code, "%s: offset %" PRIu64 ": %s", r->name, off, msg);
}

/* ---- Frame ----------------------------------------------------------------- */

static int check_header(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	const uint8_t *p = r->buf;

	if (r->len < 4 || pcz_le32(p) != PCZ_MAGIC) {
		if (r->len < 4 && memcmp(p, "\x8APCZ", r->len) == 0)
			return bad(r, diag, MPXKIT_ETRUNC, 0, "file ends inside the header");
		return bad(r, diag, MPXKIT_EFORMAT, 0, "not a .pcz file (bad magic number)");
	}
	if (r->len < PCZ_HEADER_SIZE)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends inside the header");
	if (!crc_matches(pcz_crc32(p, 8), pcz_le32(p + 8)))
		return bad(r, diag, MPXKIT_ECHECKSUM, 8, "header checksum mismatch");
	if (p[4] != PCZ_VERSION && p[4] != PCZ_VERSION_MODEL)
		return bad(r, diag, MPXKIT_EVERSION, 4, "format version %u, this reader knows %u and %u",
			   p[4], PCZ_VERSION, PCZ_VERSION_MODEL);
	r->version = p[4];
	if (p[5] != 0 || p[6] != 0 || p[7] != 0)
		return bad(r, diag, MPXKIT_EFORMAT, 5, "reserved header bits set");
	return 0;
}

/* A version-2 frame: varint sizes, one CRC over frame and payload, checked here. */
static int read_frame2(mpxkit_pcz_reader *r, uint64_t off, struct section *s, mpxkit_diag *diag)
{
	pcz_cur c = { r->buf + off, r->buf + r->len, r->buf + off, off };
	uint64_t stored, raw, max_raw;

	if (r->len - off < 2)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends inside a section frame");
	s->type = c.p[0];
	s->codec = c.p[1];
	s->off = off;
	c.p += 2;
	if (pcz_get_varint(&c, &stored) != 0 || pcz_get_varint(&c, &raw) != 0)
		return bad(r, diag, c.p >= c.end ? MPXKIT_ETRUNC : MPXKIT_EFORMAT, off + 2,
			   "bad or truncated section sizes");
	if (strcmp(section_name(s->type), "unknown") == 0)
		return bad(r, diag, MPXKIT_EFORMAT, off, "unknown section type %u", s->type);
	if (s->codec > PCZ_CODEC_MODEL || (s->type == PCZ_END && s->codec != 0) ||
	    ((s->type == PCZ_REGIONS) != (s->codec == PCZ_CODEC_MODEL)))
		return bad(r, diag, MPXKIT_EFORMAT, off + 1, "codec %u not allowed for %s", s->codec,
			   section_name(s->type));
	max_raw = s->codec == PCZ_CODEC_MODEL ? PCZ_MODEL_MAX_VALUES : MPXKIT_PCZ_MAX_SECTION;
	if (raw > max_raw || stored > MPXKIT_PCZ_MAX_SECTION)
		return bad(r, diag, MPXKIT_EFORMAT, off + 2, "%s section of %" PRIu64 " bytes, limit %u",
			   section_name(s->type), raw > max_raw ? raw : stored,
			   MPXKIT_PCZ_MAX_SECTION);
	if ((s->codec == 0 && stored != raw) ||
	    ((s->codec == 1 || s->codec == 2) && stored > raw + 1024))
		return bad(r, diag, MPXKIT_EFORMAT, off + 2,
			   "stored size %" PRIu64 " does not fit raw size %" PRIu64, stored, raw);
	s->frame = (size_t)(c.p - (r->buf + off));
	if ((uint64_t)(c.end - c.p) < stored + 4)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends inside the %s section",
			   section_name(s->type));
	s->stored = (size_t)stored;
	s->raw = (size_t)raw;
	s->body = c.p;
	if (!crc_matches(pcz_crc32(r->buf + off, s->frame + s->stored),
			 pcz_le32(s->body + s->stored)))
		return bad(r, diag, MPXKIT_ECHECKSUM, off + s->frame + s->stored,
			   "%s section checksum mismatch", section_name(s->type));
	return 0;
}

/* Reads the frame at off and checks everything but the payload's CRC. */
static int read_frame(mpxkit_pcz_reader *r, uint64_t off, struct section *s, mpxkit_diag *diag)
{
	if (r->version == PCZ_VERSION_MODEL)
		return read_frame2(r, off, s, diag);
	const uint8_t *p = r->buf + off;
	size_t left = r->len - off;

	if (left < PCZ_FRAME_SIZE)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends inside a section frame");
	if (!crc_matches(pcz_crc32(p, 12), pcz_le32(p + 12)))
		return bad(r, diag, MPXKIT_ECHECKSUM, off, "section frame checksum mismatch");
	s->type = p[0];
	s->codec = p[1];
	s->off = off;
	s->stored = pcz_le32(p + 4);
	s->raw = pcz_le32(p + 8);
	if (p[2] != 0 || p[3] != 0)
		return bad(r, diag, MPXKIT_EFORMAT, off + 2, "reserved section bits set");
	if (strcmp(section_name(s->type), "unknown") == 0)
		return bad(r, diag, MPXKIT_EFORMAT, off, "unknown section type %u", s->type);
	if (s->codec > MPXKIT_PCZ_ZSTD || (s->type == PCZ_END && s->codec != 0))
		return bad(r, diag, MPXKIT_EFORMAT, off + 1, "unknown codec %u", s->codec);
	if (s->raw > MPXKIT_PCZ_MAX_SECTION)
		return bad(r, diag, MPXKIT_EFORMAT, off + 8, "%s section of %zu bytes, limit %u",
			   section_name(s->type), s->raw, MPXKIT_PCZ_MAX_SECTION);
	if ((s->codec == 0 && s->stored != s->raw) || (s->codec != 0 && s->stored > s->raw + 1024))
		return bad(r, diag, MPXKIT_EFORMAT, off + 4, "stored size %zu does not fit raw size %zu",
			   s->stored, s->raw);
	if (left - PCZ_FRAME_SIZE < (uint64_t)s->stored + 4)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends inside the %s section",
			   section_name(s->type));
	s->body = p + PCZ_FRAME_SIZE;
	s->raw_crc = pcz_le32(s->body + s->stored);
	s->frame = PCZ_FRAME_SIZE;
	return 0;
}

/* Decodes a section's payload into a new buffer and checks its CRC. */
static int load_payload(mpxkit_pcz_reader *r, const struct section *s, uint8_t **out,
			mpxkit_diag *diag)
{
	uint8_t *raw = malloc(s->raw ? s->raw : 1);

	if (raw == NULL)
		return -MPXKIT_ENOMEM;
	if (pcz_decompress_with(&r->dz, s->codec, s->body, s->stored, raw, s->raw) != 0) {
		free(raw);
		return bad(r, diag, MPXKIT_EFORMAT, s->off + s->frame,
			   "%s section: damaged compressed payload", section_name(s->type));
	}
	/* Version 2's CRC covers the stored bytes and was checked with the frame. */
	if (r->version == PCZ_VERSION && !crc_matches(pcz_crc32(raw, s->raw), s->raw_crc)) {
		free(raw);
		return bad(r, diag, MPXKIT_ECHECKSUM, s->off + PCZ_FRAME_SIZE + s->stored,
			   "%s section: payload checksum mismatch", section_name(s->type));
	}
	*out = raw;
	return 0;
}

/* Where each section may stand: META, [TOPOLOGY], EVENTS, REGIONS*, END. */
static int check_order(mpxkit_pcz_reader *r, const struct section *s, size_t i, mpxkit_diag *diag)
{
	unsigned prev = i ? r->sec[i - 1].type : 0;
	int ok;

	/* Version 2 leaves out an empty META. */
	int first = i == 0 && r->version == PCZ_VERSION_MODEL;

	switch (s->type) {
	case PCZ_META:
		ok = i == 0;
		break;
	case PCZ_TOPOLOGY:
		ok = prev == PCZ_META || first;
		break;
	case PCZ_EVENTS:
		ok = prev == PCZ_META || prev == PCZ_TOPOLOGY || first;
		break;
	default: /* REGIONS and END */
		ok = prev == PCZ_EVENTS || prev == PCZ_REGIONS;
	}
	if (!ok)
		return bad(r, diag, MPXKIT_EFORMAT, s->off, "%s section out of place",
			   section_name(s->type));
	return 0;
}

/*
 * The content checksum failed: decode each section to name the damaged one, for a diag that
 * points at the damage rather than at the checksum.
 */
static int locate_damage(mpxkit_pcz_reader *r, const struct section *end, mpxkit_diag *diag)
{
	for (size_t i = 0; i < r->n_sec; i++) {
		uint8_t *raw = NULL;
		int rc = load_payload(r, &r->sec[i], &raw, diag);
		free(raw);
		if (rc < 0)
			return rc;
	}
	return bad(r, diag, MPXKIT_ECHECKSUM, end->off + PCZ_FRAME_SIZE + 20,
		   "content checksum mismatch (the file is damaged)");
}

/* The end mark at mark_off, and nothing after it. */
static int check_end_mark(const mpxkit_pcz_reader *r, uint64_t mark_off, mpxkit_diag *diag)
{
	if (r->len - mark_off < 4)
		return bad(r, diag, MPXKIT_ETRUNC, r->len, "file ends before the end mark");
	if (pcz_le32(r->buf + mark_off) != PCZ_END_MARK)
		return bad(r, diag, MPXKIT_EFORMAT, mark_off, "bad end mark");
	if (r->len - mark_off > 4)
		return bad(r, diag, MPXKIT_EFORMAT, mark_off + 4, "%zu stray bytes after the end mark",
			   (size_t)(r->len - mark_off - 4));
	return 0;
}

/* Version 2's END: varint counts, the content CRC; frame and CRC were checked by read_frame2. */
static int check_end2(mpxkit_pcz_reader *r, const struct section *s, mpxkit_diag *diag)
{
	pcz_cur c = { s->body, s->body + s->stored, s->body, s->off + s->frame };
	uint64_t mark_off = s->off + s->frame + s->stored + 4, n_sec;

	int rc;

	if (pcz_get_varint(&c, &r->end_regions) != 0 || pcz_get_varint(&c, &r->end_units) != 0 ||
	    pcz_get_varint(&c, &n_sec) != 0 || c.end - c.p != 4)
		return bad(r, diag, MPXKIT_EFORMAT, s->off + s->frame, "bad END section");
	rc = check_end_mark(r, mark_off, diag);
	if (rc < 0)
		return rc;
	if (!crc_matches(pcz_crc32(r->buf, s->off), pcz_le32(c.p)))
		return bad(r, diag, MPXKIT_ECHECKSUM, pcz_cur_offset(&c),
			   "content checksum mismatch (the file is damaged)");
	if (n_sec != r->n_sec)
		return bad(r, diag, MPXKIT_EFORMAT, s->off + s->frame,
			   "END counts %" PRIu64 " sections, the file has %zu", n_sec, r->n_sec);
	r->stats.end_size = s->frame + s->stored + 8;
	r->stats.end_raw = s->raw;
	return 0;
}

static int check_end(mpxkit_pcz_reader *r, const struct section *s, mpxkit_diag *diag)
{
	const uint8_t *p = s->body;
	uint64_t mark_off = s->off + PCZ_FRAME_SIZE + s->stored + 4;
	int rc;

	if (r->version == PCZ_VERSION_MODEL)
		return check_end2(r, s, diag);
	if (s->raw != PCZ_END_PAYLOAD)
		return bad(r, diag, MPXKIT_EFORMAT, s->off + 8, "END section of %zu bytes", s->raw);
	if (!crc_matches(pcz_crc32(p, s->raw), s->raw_crc))
		return bad(r, diag, MPXKIT_ECHECKSUM, s->off + PCZ_FRAME_SIZE + s->stored,
			   "END section checksum mismatch");
	rc = check_end_mark(r, mark_off, diag);
	if (rc < 0)
		return rc;
	if (!crc_matches(pcz_crc32(r->buf, s->off), pcz_le32(p + 20)))
		return locate_damage(r, s, diag);
	if (pcz_le32(p + 16) != r->n_sec)
		return bad(r, diag, MPXKIT_EFORMAT, s->off + PCZ_FRAME_SIZE + 16,
			   "END counts %" PRIu32 " sections, the file has %zu", pcz_le32(p + 16),
			   r->n_sec);
	r->end_regions = pcz_le64(p);
	r->end_units = pcz_le64(p + 8);
	r->stats.end_size = PCZ_FRAME_SIZE + s->stored + 8;
	r->stats.end_raw = s->raw;
	return 0;
}

static int scan_sections(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	uint64_t off = PCZ_HEADER_SIZE;
	size_t cap = 0;

	for (;;) {
		struct section s;
		int rc;
		if (off == r->len)
			return bad(r, diag, MPXKIT_ETRUNC, off, "file ends before the END section");
		rc = read_frame(r, off, &s, diag);
		if (rc == 0)
			rc = check_order(r, &s, r->n_sec, diag);
		if (rc < 0)
			return rc;
		if (s.type == PCZ_END)
			return check_end(r, &s, diag);
		if (r->n_sec == cap) {
			struct section *n;
			cap = cap ? 2 * cap : 16;
			n = realloc(r->sec, cap * sizeof *n);
			if (n == NULL)
				return -MPXKIT_ENOMEM;
			r->sec = n;
		}
		r->sec[r->n_sec++] = s;
		off += s.frame + (uint64_t)s.stored + 4;
	}
}

/* ---- META, TOPOLOGY, EVENTS -------------------------------------------------- */

static int get_count(const mpxkit_pcz_reader *r, pcz_cur *c, uint64_t max, uint64_t *v,
		     const char *what, mpxkit_diag *diag)
{
	uint64_t off = pcz_cur_offset(c);
	if (pcz_get_varint(c, v) != 0)
		return bad(r, diag, MPXKIT_EFORMAT, off, "bad or truncated number (%s)", what);
	if (*v > max)
		return bad(r, diag, MPXKIT_EFORMAT, off, "%s %" PRIu64 " above %" PRIu64, what, *v,
			   max);
	return 0;
}

/* A string into a new NUL-terminated copy, its length checked against the bytes left. */
static int get_string(const mpxkit_pcz_reader *r, pcz_cur *c, char **out, size_t *len,
		      const char *what, mpxkit_diag *diag)
{
	uint64_t n, off = pcz_cur_offset(c);
	int rc = get_count(r, c, UINT32_MAX, &n, what, diag);

	if (rc < 0)
		return rc;
	/* Against what is left after the length itself. */
	if (n > (uint64_t)(c->end - c->p))
		return bad(r, diag, MPXKIT_EFORMAT, off, "%s of %" PRIu64 " bytes, %zu left", what, n,
			   (size_t)(c->end - c->p));
	*out = malloc(n + 1);
	if (*out == NULL)
		return -MPXKIT_ENOMEM;
	memcpy(*out, c->p, n);
	(*out)[n] = '\0';
	c->p += n;
	*len = (size_t)n;
	return 0;
}

static int expect_end(const mpxkit_pcz_reader *r, const pcz_cur *c, const char *what,
		      mpxkit_diag *diag)
{
	if (c->p != c->end)
		return bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(c), "%zu stray bytes after the %s",
			   (size_t)(c->end - c->p), what);
	return 0;
}

/* Payload cursors report offsets as the section's payload offset plus the raw position. */
static pcz_cur payload_cur(const struct section *s, const uint8_t *raw)
{
	pcz_cur c = { raw, raw + s->raw, raw, s->off + s->frame };
	return c;
}

static int read_meta(mpxkit_pcz_reader *r, const struct section *s, mpxkit_diag *diag)
{
	uint8_t *raw;
	pcz_cur c;
	uint64_t n;
	int rc = load_payload(r, s, &raw, diag);

	if (rc < 0)
		return rc;
	c = payload_cur(s, raw);
	rc = get_count(r, &c, s->raw / 2, &n, "metadata pairs", diag);
	if (rc == 0) {
		r->meta_keys = calloc(n + 1, sizeof *r->meta_keys);
		r->meta_values = calloc(n + 1, sizeof *r->meta_values);
		if (!r->meta_keys || !r->meta_values)
			rc = -MPXKIT_ENOMEM;
	}
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		uint64_t off = pcz_cur_offset(&c);
		size_t klen = 0, vlen = 0;
		rc = get_string(r, &c, &r->meta_keys[i], &klen, "metadata key", diag);
		if (rc == 0)
			rc = get_string(r, &c, &r->meta_values[i], &vlen, "metadata value", diag);
		if (r->meta_keys[i])
			r->n_meta++;
		if (rc < 0)
			break;
		if (!pcz_meta_key_ok(r->meta_keys[i], klen) ||
		    !pcz_meta_value_ok(r->meta_values[i], vlen))
			rc = bad(r, diag, MPXKIT_EFORMAT, off, "bad metadata pair %" PRIu64, i + 1);
	}
	if (rc == 0)
		rc = expect_end(r, &c, "metadata", diag);
	free(raw);
	return rc;
}

static int check_interval_names(const mpxkit_pcz_reader *r, const struct section *s,
				mpxkit_diag *diag)
{
	char why[200];

	if (pcz_interval_names_ok(r->n_events, (const char *const *)r->events, why, sizeof why))
		return 0;
	return bad(r, diag, MPXKIT_EFORMAT, s->off, "INTERVALS: %s", why);
}

static int read_events(mpxkit_pcz_reader *r, const struct section *s, mpxkit_diag *diag)
{
	uint8_t *raw;
	pcz_cur c;
	uint64_t flags, n;
	int rc = load_payload(r, s, &raw, diag);

	if (rc < 0)
		return rc;
	c = payload_cur(s, raw);
	rc = get_count(r, &c,
		       PCZ_EVENTS_PLACEMENT |
			   (r->version == PCZ_VERSION_MODEL ? PCZ_EVENTS_INTERVALS : 0),
		       &flags, "event flags", diag);
	if (rc == 0)
		rc = get_count(r, &c, PCZ_MAX_EVENTS, &n, "events", diag);
	if (rc == 0 && n == 0)
		rc = bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c) - 1, "no events");
	if (rc == 0 && n > (uint64_t)(c.end - c.p) / 2)
		rc = bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c), "%" PRIu64 " events in %zu bytes",
			 n, (size_t)(c.end - c.p));
	if (rc == 0) {
		r->events = calloc(n, sizeof *r->events);
		if (r->events == NULL)
			rc = -MPXKIT_ENOMEM;
	}
	for (uint64_t i = 0; rc == 0 && i < n; i++) {
		uint64_t off = pcz_cur_offset(&c);
		size_t len;
		rc = get_string(r, &c, &r->events[i], &len, "event name", diag);
		if (rc < 0)
			break;
		r->n_events++;
		if (!pcz_name_ok(r->events[i], len))
			rc = bad(r, diag, MPXKIT_EFORMAT, off, "bad event name %" PRIu64, i + 1);
		for (uint64_t j = 0; rc == 0 && j < i; j++)
			if (strcmp(r->events[i], r->events[j]) == 0)
				rc = bad(r, diag, MPXKIT_EFORMAT, off, "event '%s' twice",
					 r->events[i]);
	}
	if (rc == 0)
		rc = expect_end(r, &c, "events", diag);
	r->placement = (flags & PCZ_EVENTS_PLACEMENT) != 0;
	r->intervals = (flags & PCZ_EVENTS_INTERVALS) != 0;
	if (rc == 0 && r->intervals)
		rc = check_interval_names(r, s, diag);
	free(raw);
	return rc;
}

static int read_fixed_sections(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	int rc = 0;

	for (size_t i = 0; i < r->n_sec && rc == 0; i++) {
		const struct section *s = &r->sec[i];
		uint64_t in_file = s->frame + s->stored + 4;
		r->stats.codecs |= 1u << s->codec;
		*(s->type == PCZ_META ? &r->stats.meta_file
		  : s->type == PCZ_TOPOLOGY ? &r->stats.topology_file
		  : s->type == PCZ_EVENTS ? &r->stats.events_file
					   : &r->stats.regions_file) += in_file;
		switch (s->type) {
		case PCZ_META:
			r->stats.meta_stored = s->stored, r->stats.meta_raw = s->raw;
			rc = read_meta(r, s, diag);
			break;
		case PCZ_TOPOLOGY:
			r->stats.topology_stored = s->stored, r->stats.topology_raw = s->raw;
			rc = load_payload(r, s, &r->topology, diag);
			r->topology_len = s->raw;
			break;
		case PCZ_EVENTS:
			r->stats.events_stored = s->stored, r->stats.events_raw = s->raw;
			rc = read_events(r, s, diag);
			r->next_sec = i + 1;
			break;
		default:
			r->stats.regions_stored += s->stored;
			/* MODEL counts values: the raw size is their bytes as 64-bit integers. */
			r->stats.regions_raw += s->codec == PCZ_CODEC_MODEL ? 8 * (uint64_t)s->raw : s->raw;
			r->stats.n_region_sections++;
		}
	}
	return rc;
}

/* ---- Open and free ------------------------------------------------------------ */

void mpxkit_pcz_reader_free(mpxkit_pcz_reader *r)
{
	if (r == NULL)
		return;
	free(r->name);
	free(r->owned);
	free(r->sec);
	for (size_t i = 0; i < r->n_meta; i++) {
		free(r->meta_keys[i]);
		free(r->meta_values[i]);
	}
	free(r->meta_keys);
	free(r->meta_values);
	for (size_t i = 0; i < r->n_events; i++)
		free(r->events[i]);
	free(r->events);
	free(r->topology);
	free(r->chunk);
	free(r->vc);
	free(r->pred);
	free(r->slot_of);
	free(r->slot_gen);
	free(r->prev_ref);
	free(r->hist);
	free(r->hist_gen);
	free(r->kidx);
	pcz_dict_free(&r->dict);
	free(r->seen);
	free(r->region_name);
	free(r->spare_name);
	free(r->units);
	free(r->group_of);
	free(r->group_ref);
	free(r->members);
	free(r->dur);
	free(r->times);
	free(r->values);
	free(r->mask);
	pcz_msec_free(&r->m.sec);
	free(r->m.slot_last);
	free(r->m.slot_place);
	free(r->m.rows);
	free(r->m.first_row);
	free(r->m.bits);
	pcz_decompressor_free(&r->dz);
	free(r);
}

int mpxkit_pcz_reader_open_mem(const void *buf, size_t len, const char *name,
			       mpxkit_pcz_reader **out, mpxkit_diag *diag)
{
	mpxkit_pcz_reader *r;
	int rc;

	if ((buf == NULL && len > 0) || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz reader: NULL argument");
	r = calloc(1, sizeof *r);
	if (r == NULL)
		return -MPXKIT_ENOMEM;
	r->name = strdup(name ? name : "(buffer)");
	r->buf = buf ? buf : (const uint8_t *)"";
	r->len = len;
	rc = r->name ? 0 : -MPXKIT_ENOMEM;
	if (rc == 0)
		rc = check_header(r, diag);
	if (rc == 0)
		rc = scan_sections(r, diag);
	if (rc == 0)
		rc = read_fixed_sections(r, diag);
	if (rc == 0) {
		r->prev_ref = calloc(r->n_events, sizeof *r->prev_ref);
		r->pred = calloc(r->n_events, 1);
		if (r->prev_ref == NULL || r->pred == NULL)
			rc = -MPXKIT_ENOMEM;
	}
	if (rc < 0) {
		mpxkit_pcz_reader_free(r);
		return rc;
	}
	r->stats.file_size = len;
	r->stats.version = r->version;
	r->stats.header_size = PCZ_HEADER_SIZE;
	r->stats.n_regions = r->end_regions;
	r->stats.n_units = r->end_units;
	*out = r;
	return 0;
}

/*
 * The magic is read first and the rest only when it matches, so /dev/zero or
 * a wrong file ends at four bytes; the whole file is then decoded from memory,
 * within a bound that keeps a stray device or pipe from filling it.
 */
static int read_whole(const char *path, uint8_t **out, size_t *out_len, mpxkit_diag *diag)
{
	mpxkit_reader_options opt = { .max_bytes = MPXKIT_PCZ_MAX_FILE, .what = "pcz file" };
	mpxkit_reader *in;
	unsigned char magic[4];
	char *rest = NULL;
	uint8_t *buf;
	size_t got = 0, len = 0;
	int rc = mpxkit_reader_open(&in, path, &opt, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_reader_read(in, magic, sizeof magic, &got, diag);
	if (rc == 0 && got == sizeof magic && pcz_le32(magic) == PCZ_MAGIC)
		rc = mpxkit_reader_slurp(in, &rest, &len, diag);
	mpxkit_reader_close(in);
	if (rc < 0)
		return rc;
	/* Put the magic back in front, in place. */
	buf = realloc(rest, got + len + 1);
	if (buf == NULL) {
		free(rest);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	}
	memmove(buf + got, buf, len);
	memcpy(buf, magic, got);
	*out = buf;
	*out_len = got + len;
	return 0;
}

int mpxkit_pcz_reader_open(const char *path, mpxkit_pcz_reader **out, mpxkit_diag *diag)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	if (path == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz reader: NULL argument");
	rc = read_whole(path, &buf, &len, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_pcz_reader_open_mem(buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, out,
					diag);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	(*out)->owned = buf;
	return 0;
}

int mpxkit_pcz_reader_reopen(const mpxkit_pcz_reader *r, mpxkit_pcz_reader **out,
			     mpxkit_diag *diag)
{
	if (r == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz reader: NULL argument");
	return mpxkit_pcz_reader_open_mem(r->buf, r->len, r->name, out, diag);
}

/* ---- Accessors ------------------------------------------------------------------ */

int mpxkit_pcz_reader_coded_bits(const mpxkit_pcz_reader *r, size_t col, uint64_t *bits)
{
	size_t W = 2 + r->n_events;
	uint64_t columns = 0;

	*bits = 0;
	if (r->version != PCZ_VERSION_MODEL || (col >= W && col != SIZE_MAX))
		return -MPXKIT_ERANGE;
	if (!r->m.count_bits)
		return -MPXKIT_ESTATE;
	if (r->m.bits == NULL)
		return 0;
	if (col != SIZE_MAX) {
		*bits = r->m.bits[col] >> 16;
		return 0;
	}
	/* The structure: the rest of the payloads (fields, names, tables, the coders' ends). */
	for (size_t c = 0; c < W; c++)
		columns += r->m.bits[c] >> 16;
	*bits = r->m.payload_bits > columns ? r->m.payload_bits - columns : 0;
	return 0;
}

void mpxkit_pcz_reader_count_bits(mpxkit_pcz_reader *r)
{
	r->m.count_bits = 1;
}

size_t mpxkit_pcz_reader_n_events(const mpxkit_pcz_reader *r)
{
	return r->n_events;
}

const char *mpxkit_pcz_reader_event(const mpxkit_pcz_reader *r, size_t i)
{
	return i < r->n_events ? r->events[i] : NULL;
}

size_t mpxkit_pcz_reader_n_meta(const mpxkit_pcz_reader *r)
{
	return r->n_meta;
}

int mpxkit_pcz_reader_meta(const mpxkit_pcz_reader *r, size_t i, const char **key,
			   const char **value)
{
	if (i >= r->n_meta)
		return -MPXKIT_ERANGE;
	*key = r->meta_keys[i];
	*value = r->meta_values[i];
	return 0;
}

int mpxkit_pcz_reader_placement(const mpxkit_pcz_reader *r)
{
	return r->placement;
}

int mpxkit_pcz_reader_intervals(const mpxkit_pcz_reader *r)
{
	return r->intervals;
}

const char *mpxkit_pcz_reader_topology(const mpxkit_pcz_reader *r, size_t *len)
{
	*len = r->topology ? r->topology_len : 0;
	return r->topology ? (const char *)r->topology : NULL;
}

void mpxkit_pcz_reader_stats(const mpxkit_pcz_reader *r, mpxkit_pcz_stats *out)
{
	*out = r->stats;
}

/* ---- Regions ---------------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;
	if (n <= *cap)
		return 0;
	q = realloc(*p, n * size);
	if (q == NULL)
		return -MPXKIT_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* The table of a REGIONS payload: the size of every (stream, slot) piece. */
static int read_table(mpxkit_pcz_reader *r, pcz_cur *c, uint64_t *total, mpxkit_diag *diag)
{
	size_t S = 1 + r->n_events;
	int rc = 0;

	*total = 0;
	for (size_t st = 0; st < S; st++)
		for (size_t k = 0; k < r->n_slots && rc == 0; k++) {
			struct vcur *v = &r->vc[k * S + st];
			uint64_t len, off = pcz_cur_offset(c);
			memset(v, 0, sizeof *v);
			if (r->layout == PCZ_LAYOUT_VARINT) {
				rc = get_count(r, c, (uint64_t)(c->end - c->p), &len, "stream length",
					       diag);
			} else {
				rc = get_count(r, c, (uint64_t)(c->end - c->p), &v->n, "value count",
					       diag);
				if (rc == 0 && c->p == c->end)
					rc = bad(r, diag, MPXKIT_ETRUNC, off, "table ends early");
				if (rc == 0) {
					v->width = *c->p++;
					if (v->width > 8 || (v->width == 0) != (v->n == 0))
						rc = bad(r, diag, MPXKIT_EFORMAT, off,
							 "bad byte width %u for %" PRIu64 " values",
							 v->width, v->n);
				}
				len = v->n * v->width;
			}
			/* Each piece is shorter than the payload, so the sum cannot wrap. */
			*total += rc == 0 ? len : 0;
			v->i = len; /* the length, until pointers are set */
		}
	return rc;
}

/* Opens the next REGIONS section: payload, CRC, stream table. 0, or 1 at END. */
static int begin_chunk(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	const struct section *s;
	size_t S = 1 + r->n_events;
	uint64_t n, layout, n_slots, st_len, total;
	const uint8_t *p;
	pcz_cur c;
	int rc;

	if (r->next_sec >= r->n_sec)
		return 1;
	s = &r->sec[r->next_sec++];
	free(r->chunk);
	r->chunk = NULL;
	rc = load_payload(r, s, &r->chunk, diag);
	if (rc < 0)
		return rc;
	r->cur_sec = s;
	r->sec_index++;
	c = payload_cur(s, r->chunk);
	rc = get_count(r, &c, s->raw, &n, "regions in section", diag);
	if (rc == 0 && n == 0)
		rc = bad(r, diag, MPXKIT_EFORMAT, c.base, "REGIONS section without regions");
	if (rc == 0)
		rc = get_count(r, &c, PCZ_LAYOUT_PLANES, &layout, "layout", diag);
	if (rc == 0 && (size_t)(c.end - c.p) < r->n_events)
		rc = bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c), "payload ends in the predictors");
	for (size_t e = 0; rc == 0 && e < r->n_events; e++) {
		r->pred[e] = *c.p++;
		if (r->pred[e] > PCZ_PRED_DURATION)
			rc = bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c) - 1,
				 "unknown predictor %u", r->pred[e]);
	}
	if (rc == 0)
		rc = get_count(r, &c, (uint64_t)(c.end - c.p) / S, &n_slots, "units in section",
			       diag);
	if (rc == 0)
		rc = get_count(r, &c, (uint64_t)(c.end - c.p), &st_len, "structure length", diag);
	if (rc == 0)
		rc = grow((void **)&r->vc, &r->cap_vc, (size_t)(n_slots * S), sizeof *r->vc);
	if (rc < 0)
		return rc;
	r->layout = (unsigned)layout;
	r->n_slots = (size_t)n_slots;
	r->next_slot = 0;
	rc = read_table(r, &c, &total, diag);
	if (rc == 0 && st_len + total != (uint64_t)(c.end - c.p))
		rc = bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c),
			 "table adds up to %" PRIu64 " bytes, payload holds %zu", st_len + total,
			 (size_t)(c.end - c.p));
	if (rc < 0)
		return rc;
	r->structure = (pcz_cur){ c.p, c.p + st_len, c.start, c.base };
	p = c.p + st_len;
	for (size_t i = 0; i < n_slots * S; i++) {
		/* Table order is stream-major; vc is indexed slot * S + stream. */
		struct vcur *v = &r->vc[(i % n_slots) * S + i / n_slots];
		uint64_t len = v->i;
		v->p = p;
		v->end = p + len;
		v->off = c.base + (uint64_t)(p - c.start);
		v->i = 0;
		p += len;
	}
	r->chunk_left = n;
	free(r->region_name);
	r->region_name = NULL;
	memset(r->prev_ref, 0, r->n_events * sizeof *r->prev_ref);
	return 0;
}

static int stream_fail(const mpxkit_pcz_reader *r, const pcz_cur *c, size_t i, const char *what,
		       mpxkit_diag *diag)
{
	(void)i;
	return bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(c), "REGIONS section %zu: %s",
		   r->sec_index, what);
}

/* The next zigzagged value of a unit's stream (0 timestamps, 1 + e event e). */
static int get_value(const mpxkit_pcz_reader *r, size_t slot, size_t stream, uint64_t *out,
		     mpxkit_diag *diag)
{
	struct vcur *v = &r->vc[slot * (1 + r->n_events) + stream];

	if (r->layout == PCZ_LAYOUT_VARINT) {
		pcz_cur c = { v->p, v->end, v->p, v->off };
		if (pcz_get_varint(&c, out) != 0)
			return bad(r, diag, MPXKIT_EFORMAT, v->off,
				   "REGIONS section %zu, unit slot %zu, stream %zu: bad varint or "
				   "values end early",
				   r->sec_index, slot, stream);
		v->off += (uint64_t)(c.p - v->p);
		v->p = c.p;
		return 0;
	}
	if (v->i >= v->n)
		return bad(r, diag, MPXKIT_EFORMAT, v->off,
			   "REGIONS section %zu, unit slot %zu, stream %zu: values end early",
			   r->sec_index, slot, stream);
	*out = 0;
	for (unsigned j = 0; j < v->width; j++)
		*out |= (uint64_t)v->p[j * v->n + v->i] << (8 * j);
	v->i++;
	return 0;
}

static int chunk_consumed(const mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	size_t S = 1 + r->n_events;

	if (r->structure.p != r->structure.end)
		return stream_fail(r, &r->structure, 0, "structure bytes left after the last region",
				   diag);
	for (size_t i = 0; i < r->n_slots * S; i++) {
		const struct vcur *v = &r->vc[i];
		if (r->layout == PCZ_LAYOUT_VARINT ? v->p != v->end : v->i != v->n)
			return bad(r, diag, MPXKIT_EFORMAT, v->off,
				   "REGIONS section %zu: values left after the last region",
				   r->sec_index);
	}
	if (r->next_slot != r->n_slots)
		return bad(r, diag, MPXKIT_EFORMAT, r->cur_sec->off,
			   "REGIONS section %zu: %zu unit slots declared, %zu used", r->sec_index,
			   r->n_slots, r->next_slot);
	return 0;
}


static int reserve_units(mpxkit_pcz_reader *r, size_t n)
{
	size_t cap = r->cap_units;
	int rc = 0;

	if (n <= cap)
		return 0;
	rc |= grow((void **)&r->units, &cap, n, sizeof *r->units);
	cap = r->cap_units;
	rc |= grow((void **)&r->group_of, &cap, n, sizeof *r->group_of);
	cap = r->cap_units;
	rc |= grow((void **)&r->group_ref, &cap, n, sizeof *r->group_ref);
	cap = r->cap_units;
	rc |= grow((void **)&r->members, &cap, n, sizeof *r->members);
	cap = r->cap_units;
	rc |= grow((void **)&r->dur, &cap, n, sizeof *r->dur);
	cap = r->cap_units;
	rc |= grow((void **)&r->kidx, &cap, n, sizeof *r->kidx);
	if (rc != 0)
		return -MPXKIT_ENOMEM;
	r->cap_units = n;
	return 0;
}

static int grow_history(mpxkit_pcz_reader *r)
{
	size_t E = r->n_events, cap = r->dict.cap;
	uint64_t *h, *g;

	if (r->dict.n <= r->hist_cap)
		return 0;
	h = realloc(r->hist, cap * E * sizeof *h);
	if (h == NULL)
		return -MPXKIT_ENOMEM;
	r->hist = h;
	g = realloc(r->hist_gen, cap * sizeof *g);
	if (g == NULL)
		return -MPXKIT_ENOMEM;
	r->hist_gen = g;
	g = realloc(r->slot_gen, cap * sizeof *g);
	if (g == NULL)
		return -MPXKIT_ENOMEM;
	r->slot_gen = g;
	{
		size_t *so = realloc(r->slot_of, cap * sizeof *so);
		if (so == NULL)
			return -MPXKIT_ENOMEM;
		r->slot_of = so;
	}
	for (size_t k = r->hist_cap; k < cap; k++)
		r->hist_gen[k] = r->slot_gen[k] = UINT64_MAX;
	r->hist_cap = cap;
	return 0;
}

/* The section slot of dictionary entry k, given on first use as the writer did. */
static int slot_for(mpxkit_pcz_reader *r, size_t k, size_t *slot, mpxkit_diag *diag)
{
	if (r->slot_gen[k] != r->sec_index) {
		if (r->next_slot >= r->n_slots)
			return stream_fail(r, &r->structure, 0, "more units than the table declares",
					   diag);
		r->slot_gen[k] = r->sec_index;
		r->slot_of[k] = r->next_slot++;
	}
	*slot = r->slot_of[k];
	return 0;
}

/* Unit headers of a region: names, shapes, placement; then their timestamps. */
static int read_units(mpxkit_pcz_reader *r, uint64_t n_units, uint64_t region_no,
		      mpxkit_diag *diag)
{
	pcz_cur *st = &r->structure;
	uint64_t bound = 64, n_steps_total = 0;
	size_t E = r->n_events;
	int rc;

	for (uint64_t u = 0; u < n_units; u++) {
		mpxkit_pcz_unit *x = &r->units[u];
		uint64_t ref, steps, cpu = 0, numa = 0;
		size_t k;
		rc = get_count(r, st, r->dict.n, &ref, "unit name reference", diag);
		if (rc < 0)
			return rc;
		if (ref == 0) {
			char *name;
			size_t len;
			rc = get_string(r, st, &name, &len, "unit name", diag);
			if (rc < 0)
				return rc;
			if (!pcz_name_ok(name, len) || pcz_dict_find(&r->dict, name, len) != SIZE_MAX) {
				free(name);
				return stream_fail(r, st, 0, "bad or repeated new unit name", diag);
			}
			k = pcz_dict_add(&r->dict, name, strlen(name));
			free(name);
			if (k == SIZE_MAX || grow((void **)&r->seen, &r->cap_seen, r->dict.cap,
						  sizeof *r->seen) != 0)
				return -MPXKIT_ENOMEM;
			r->seen[k] = 0;
		} else {
			k = (size_t)ref - 1;
		}
		if (r->seen[k] == region_no)
			return stream_fail(r, st, 0, "unit twice in one region", diag);
		r->seen[k] = region_no;
		rc = get_count(r, st, PCZ_MAX_STEPS, &steps, "steps", diag);
		if (rc == 0 && steps == 0)
			rc = stream_fail(r, st, 0, "block of zero steps", diag);
		if (rc == 0 && r->placement)
			rc = get_count(r, st, (uint64_t)INT32_MAX + 1, &cpu, "cpu", diag);
		if (rc == 0 && r->placement)
			rc = get_count(r, st, (uint64_t)INT32_MAX + 1, &numa, "numa node", diag);
		if (rc < 0)
			return rc;
		/* The writer's bound on a region (doc/pcz-format.md), so allocations stay small. */
		bound += 40 + r->dict.len[k] + 11 * (1 + E) + steps * (20 + E * 11);
		if (bound > MPXKIT_PCZ_MAX_SECTION / 2)
			return stream_fail(r, st, 0, "region larger than the format allows", diag);
		x->name = r->dict.names[k];
		x->n_steps = (size_t)steps;
		x->cpu = (int)((int64_t)cpu - 1);
		x->numa = (int)((int64_t)numa - 1);
		r->kidx[u] = k;
		n_steps_total += steps;
	}
	rc = grow((void **)&r->times, &r->cap_times, (size_t)(2 * n_steps_total), sizeof *r->times);
	if (rc == 0)
		rc = grow((void **)&r->values, &r->cap_values, (size_t)(n_steps_total * E),
			  sizeof *r->values);
	if (rc != 0 || grow_history(r) != 0)
		return -MPXKIT_ENOMEM;
	for (uint64_t u = 0, t = 0; u < n_units; u++) {
		mpxkit_pcz_unit *x = &r->units[u];
		size_t k = r->kidx[u], slot = 0;
		uint64_t prev = r->dict.last_gen[k] == r->sec_index ? r->dict.last_end[k] : 0;
		uint64_t *times = r->times + 2 * t;
		rc = slot_for(r, k, &slot, diag);
		if (rc < 0)
			return rc;
		for (size_t s = 0; s < x->n_steps; s++) {
			uint64_t d0, d1;
			rc = get_value(r, slot, 0, &d0, diag);
			if (rc == 0)
				rc = get_value(r, slot, 0, &d1, diag);
			if (rc < 0)
				return rc;
			times[2 * s] = prev + pcz_unzigzag(d0);
			times[2 * s + 1] = times[2 * s] + pcz_unzigzag(d1);
			prev = times[2 * s + 1];
		}
		r->dict.last_end[k] = prev;
		r->dict.last_gen[k] = r->sec_index;
		x->times = times;
		x->values = r->values + t * E;
		t += x->n_steps;
	}
	return 0;
}

/* Decodes a block coded on its own: reference, raw or TEMPORAL member. */
static int read_block(mpxkit_pcz_reader *r, size_t u, int is_ref, mpxkit_diag *diag)
{
	const mpxkit_pcz_unit *x = &r->units[u];
	size_t E = r->n_events, k = r->kidx[u];
	const uint64_t *h = r->hist_gen[k] == r->sec_index ? r->hist + k * E : r->prev_ref;
	uint64_t *v = (uint64_t *)x->values;

	for (size_t i = 0; i < x->n_steps * E; i++) {
		uint64_t d;
		int rc = get_value(r, r->slot_of[k], 1 + i % E, &d, diag);
		if (rc < 0)
			return rc;
		v[i] = pcz_own_prediction(r->pred[i % E], v, h, x->times, i, E) + pcz_unzigzag(d);
	}
	if (is_ref)
		memcpy(r->prev_ref, v, E * sizeof *v);
	return 0;
}

static int read_member(mpxkit_pcz_reader *r, size_t u, const mpxkit_pcz_unit *ref,
		       mpxkit_diag *diag)
{
	const mpxkit_pcz_unit *m = &r->units[u];
	pcz_cur *st = &r->structure;
	uint64_t *v = (uint64_t *)m->values;
	size_t E = r->n_events, n = m->n_steps * E, mask_len = (n + 7) / 8, any = 0;
	uint8_t kind;

	if (st->p >= st->end)
		return stream_fail(r, st, 0, "structure ends early", diag);
	kind = *st->p++;
	if (kind > PCZ_TEMPORAL)
		return stream_fail(r, st, 0, "unknown difference kind", diag);
	if (kind == PCZ_TEMPORAL)
		return read_block(r, u, 0, diag);
	if (kind == PCZ_MASK) {
		if ((size_t)(st->end - st->p) < mask_len)
			return stream_fail(r, st, 0, "structure ends inside a mask", diag);
		for (size_t i = 0; i < mask_len; i++)
			any |= st->p[i];
		if (!any || (n % 8 && (st->p[mask_len - 1] >> (n % 8))))
			return stream_fail(r, st, 0, "empty mask or padding bits set", diag);
	}
	for (size_t i = 0; i < n; i++) {
		int set = kind == PCZ_DENSE || (kind == PCZ_MASK && (st->p[i / 8] >> (i % 8)) & 1);
		uint64_t d = 0;
		if (set) {
			int rc = get_value(r, r->slot_of[r->kidx[u]], 1 + i % E, &d, diag);
			if (rc < 0)
				return rc;
			if (kind == PCZ_MASK && d == 0)
				return stream_fail(r, st, 0, "zero difference under a mask bit",
						   diag);
		}
		v[i] = ref->values[i] + pcz_unzigzag(d);
	}
	if (kind == PCZ_MASK)
		st->p += mask_len;
	return 0;
}

static int read_groups(mpxkit_pcz_reader *r, size_t n_units, mpxkit_diag *diag)
{
	pcz_cur *st = &r->structure;
	uint64_t n_groups;
	int rc = get_count(r, st, n_units / 2, &n_groups, "groups", diag);

	for (size_t u = 0; u < n_units; u++)
		r->group_of[u] = SIZE_MAX;
	for (uint64_t g = 0; rc == 0 && g < n_groups; g++) {
		uint64_t n, ref, at = 0;
		rc = get_count(r, st, n_units, &n, "group members", diag);
		if (rc == 0 && n < 2)
			rc = stream_fail(r, st, 0, "group of fewer than two units", diag);
		for (uint64_t i = 0; rc == 0 && i < n; i++) {
			uint64_t gap;
			rc = get_count(r, st, n_units, &gap, "member gap", diag);
			if (rc < 0)
				break;
			at = i == 0 ? gap : at + gap + 1;
			if (at >= n_units || r->group_of[at] != SIZE_MAX ||
			    (i > 0 && r->units[at].n_steps != r->units[r->members[0]].n_steps))
				rc = stream_fail(r, st, 0, "bad group member", diag);
			else {
				r->members[i] = (size_t)at;
				r->group_of[at] = (size_t)g;
			}
		}
		if (rc == 0)
			rc = get_count(r, st, n - 1, &ref, "reference position", diag);
		if (rc < 0)
			break;
		r->group_ref[g] = r->members[ref];
		rc = read_block(r, r->members[ref], 1, diag);
		for (uint64_t i = 0; rc == 0 && i < n; i++)
			if (i != ref)
				rc = read_member(r, r->members[i], &r->units[r->members[ref]], diag);
	}
	for (size_t u = 0; rc == 0 && u < n_units; u++)
		if (r->group_of[u] == SIZE_MAX)
			rc = read_block(r, u, 0, diag);
	for (size_t u = 0; rc == 0 && u < n_units; u++) {
		const mpxkit_pcz_unit *x = &r->units[u];
		size_t E = r->n_events;
		memcpy(r->hist + r->kidx[u] * E, x->values + (x->n_steps - 1) * E,
		       E * sizeof *r->hist);
		r->hist_gen[r->kidx[u]] = r->sec_index;
	}
	if (rc == 0)
		r->region.n_groups = (size_t)n_groups;
	return rc;
}

static int read_region_name(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	pcz_cur *st = &r->structure;
	uint64_t mode;
	char *name = NULL;
	size_t len;
	int rc = get_count(r, st, PCZ_NAME_NEXT, &mode, "region name mode", diag);

	if (rc < 0)
		return rc;
	if (mode != PCZ_NAME_NEW && r->region_name == NULL)
		return stream_fail(r, st, 0, "region name refers to no previous region", diag);
	if (mode == PCZ_NAME_SAME)
		return 0;
	if (mode == PCZ_NAME_NEXT) {
		size_t cap = strlen(r->region_name) + 22;
		name = malloc(cap);
		if (name == NULL)
			return -MPXKIT_ENOMEM;
		if (pcz_name_next(r->region_name, name, cap) != 0) {
			free(name);
			return stream_fail(r, st, 0, "previous region name has no number", diag);
		}
	} else {
		rc = get_string(r, st, &name, &len, "region name", diag);
		if (rc < 0)
			return rc;
		if (!pcz_name_ok(name, len)) {
			free(name);
			return stream_fail(r, st, 0, "bad region name", diag);
		}
	}
	free(r->region_name);
	r->region_name = name;
	return 0;
}

static int read_region(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	pcz_cur *st = &r->structure;
	uint64_t n_units = 0, balance = 0, off = 0;
	uint32_t ppm;
	int rc;

	rc = read_region_name(r, diag);
	if (rc == 0)
		rc = get_count(r, st, PCZ_MAX_UNITS, &n_units, "units", diag);
	if (rc == 0 && (n_units == 0 || n_units > (uint64_t)(st->end - st->p) / 2))
		rc = stream_fail(r, st, 0, "unit count does not fit the structure stream", diag);
	if (rc == 0)
		rc = reserve_units(r, (size_t)n_units);
	if (rc == 0)
		rc = read_units(r, n_units, r->regions_read + 1, diag);
	if (rc == 0) {
		off = pcz_cur_offset(st);
		if (st->p >= st->end)
			rc = stream_fail(r, st, 0, "structure ends before the balance degree", diag);
		else
			balance = *st->p++;
	}
	if (rc < 0)
		return rc;
	for (size_t u = 0; u < n_units; u++)
		r->dur[u] = pcz_unit_duration(&r->units[u]);
	ppm = pcz_balance_ppm(r->dur, (size_t)n_units);
	if (pcz_balance_q8(ppm) != balance)
		return bad(r, diag, MPXKIT_EFORMAT, off,
			   "stored balance degree does not match the timestamps");
	rc = read_groups(r, (size_t)n_units, diag);
	if (rc < 0)
		return rc;
	r->region.name = r->region_name;
	r->region.n_units = (size_t)n_units;
	r->region.units = r->units;
	r->region.balance_ppm = ppm;
	r->region.group_of = r->group_of;
	r->region.group_ref = r->group_ref;
	return 0;
}

static int finish(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	if (r->regions_read != r->end_regions || r->units_read != r->end_units)
		return bad(r, diag, MPXKIT_EFORMAT, r->len,
			   "END counts %" PRIu64 " regions and %" PRIu64
			   " units, the sections hold %" PRIu64 " and %" PRIu64,
			   r->end_regions, r->end_units, r->regions_read, r->units_read);
	return 0;
}


/* ---- Version 2: MODEL-coded REGIONS ---------------------------------------------------------- */

static int model_fail(const mpxkit_pcz_reader *r, const char *what, mpxkit_diag *diag)
{
	return bad(r, diag, MPXKIT_EFORMAT, r->cur_sec->off + r->cur_sec->frame,
		   "REGIONS section %zu: %s", r->sec_index, what);
}

/* Opens the next REGIONS section of a version-2 file. 0, or 1 at END. */
static int begin_chunk_model(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	struct model_state *m = &r->m;
	const struct section *s;
	size_t W = 2 + r->n_events, used;
	uint64_t n, ans_size;
	const char *why = NULL;
	pcz_cur c;
	int rc;

	if (r->next_sec >= r->n_sec)
		return 1;
	s = &r->sec[r->next_sec++];
	r->cur_sec = s;
	r->sec_index++;
	c = (pcz_cur){ s->body, s->body + s->stored, s->body, s->off + s->frame };
	rc = get_count(r, &c, s->raw, &n, "regions in section", diag);
	if (rc == 0 && n == 0)
		rc = bad(r, diag, MPXKIT_EFORMAT, c.base, "REGIONS section without regions");
	if (rc < 0)
		return rc;
	if (m->bits == NULL) {
		m->bits = calloc(W, sizeof *m->bits);
		if (m->bits == NULL)
			return -MPXKIT_ENOMEM;
	}
	rc = pcz_msec_read(&m->sec, W, c.p, (size_t)(c.end - c.p), &used, &why);
	if (rc == -1)
		return bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c), "REGIONS section %zu: %s",
			   r->sec_index, why);
	if (rc < 0)
		return rc;
	c.p += used;
	rc = get_count(r, &c, (uint64_t)(c.end - c.p), &ans_size, "rANS bytes", diag);
	if (rc < 0)
		return rc;
	/* The bound above was taken before the count's own bytes (found by fuzz_pcz_decode). */
	if (ans_size > (uint64_t)(c.end - c.p))
		return bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c),
			   "rANS stream of %" PRIu64 " bytes, %zu left", ans_size,
			   (size_t)(c.end - c.p));
	if (pcz_mdec_init(&m->dec, c.p, (size_t)ans_size, c.p + ans_size,
			  (size_t)(c.end - c.p - ans_size)) != 0)
		return bad(r, diag, MPXKIT_EFORMAT, pcz_cur_offset(&c), "bad rANS stream");
	pcz_window_reset(&m->ring.win);
	m->n_rows = 0;
	m->payload_bits += 8 * (uint64_t)s->stored;
	m->values_left = s->raw;
	m->values_total = s->raw;
	m->prev_units = 0;
	r->chunk_left = n;
	r->next_slot = 0;
	r->n_slots = SIZE_MAX; /* any number: slots are made as units come */
	free(r->region_name);
	r->region_name = NULL;
	r->region_cap = 0;
	return 0;
}

/* The section slot of entry k for the MODEL decoder, with room for its state. */
static int model_slot(mpxkit_pcz_reader *r, size_t k, size_t *slot)
{
	struct model_state *m = &r->m;

	if (r->slot_gen[k] != r->sec_index) {
		size_t need = r->next_slot + 1, cap = m->cap_slots;
		if (need > cap) {
			size_t c2 = cap ? 2 * cap : 16;
			size_t *last = realloc(m->slot_last, c2 * sizeof *last);
			if (last)
				m->slot_last = last;
			int64_t *pl = realloc(m->slot_place, c2 * 2 * sizeof *pl);
			if (pl)
				m->slot_place = pl;
			if (!last || !pl)
				return -MPXKIT_ENOMEM;
			m->cap_slots = c2;
		}
		r->slot_gen[k] = r->sec_index;
		r->slot_of[k] = r->next_slot++;
		m->slot_place[2 * r->slot_of[k]] = m->slot_place[2 * r->slot_of[k] + 1] = 0;
		m->slot_last[r->slot_of[k]] = SIZE_MAX;
	}
	*slot = r->slot_of[k];
	return 0;
}

static uint64_t get_field(struct model_state *m, unsigned f)
{
	return pcz_mdec_number(&m->dec, &m->sec.field[f]);
}

static int model_err(const struct model_state *m)
{
	return m->dec.err || m->dec.raw.err;
}

/*
 * A name of the model stream into a new string: its bytes, or for a unit
 * (next set) LENGTH 0, the dictionary's last name with its number plus one.
 * NULL when out of memory or invalid (*bad set).
 */
static char *get_model_name(struct model_state *m, const pcz_dict *dict, int unit, size_t *len,
			    int *bad_name)
{
	uint64_t n = get_field(m, PCZ_F_LENGTH);
	char *name;

	*bad_name = 0;
	if (n == 0 && unit && !model_err(m) && dict->n > 0) {
		const char *prev = dict->names[dict->n - 1];
		size_t cap = strlen(prev) + 22;
		if ((name = malloc(cap)) == NULL)
			return NULL;
		if (pcz_name_next(prev, name, cap) != 0) {
			free(name);
			*bad_name = 1;
			return NULL;
		}
		*len = strlen(name);
		return name;
	}
	if (model_err(m) || n == 0 || n > PCZ_MAX_NAME) {
		*bad_name = 1;
		return NULL;
	}
	name = malloc(n + 1);
	if (name == NULL)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		name[i] = (char)pcz_bitr_get(&m->dec.raw, 8);
	name[n] = '\0';
	*len = (size_t)n;
	if (model_err(m) || !pcz_name_ok(name, *len)) {
		free(name);
		*bad_name = 1;
		return NULL;
	}
	return name;
}

static int read_region_model(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	struct model_state *m = &r->m;
	/* The region's rows follow the section's earlier ones, from t0. */
	size_t E = r->n_events, W = 2 + E, t0 = m->n_rows, t = t0, k_prev = SIZE_MAX;
	uint64_t mode, n_units, bound = 64, region_no = r->regions_read + 1;
	int rc;

	mode = get_field(m, PCZ_F_NAME_MODE);
	if (model_err(m) || mode > PCZ_NAME_NEXT)
		return model_fail(r, "bad region name mode", diag);
	if (mode != PCZ_NAME_NEW && r->region_name == NULL)
		return model_fail(r, "region name refers to no previous region", diag);
	if (mode == PCZ_NAME_NEXT) {
		/* Into the spare buffer, which then swaps with the name: no allocation per region. */
		size_t cap = strlen(r->region_name) + 22, tcap;
		char *t2;
		if (cap > r->spare_cap) {
			char *p2 = realloc(r->spare_name, cap);
			if (p2 == NULL)
				return -MPXKIT_ENOMEM;
			r->spare_name = p2;
			r->spare_cap = cap;
		}
		if (pcz_name_next(r->region_name, r->spare_name, r->spare_cap) != 0)
			return model_fail(r, "previous region name has no number", diag);
		t2 = r->region_name;
		r->region_name = r->spare_name;
		r->spare_name = t2;
		tcap = r->region_cap;
		r->region_cap = r->spare_cap;
		r->spare_cap = tcap;
	} else if (mode == PCZ_NAME_NEW) {
		size_t len;
		int bad_name;
		char *name = get_model_name(m, &r->dict, 0, &len, &bad_name);
		if (name == NULL)
			return bad_name ? model_fail(r, "bad region name", diag) : -MPXKIT_ENOMEM;
		free(r->region_name);
		r->region_name = name;
		r->region_cap = len + 1;
	}
	n_units = m->prev_units + pcz_unzigzag(get_field(m, PCZ_F_UNITS));
	if (model_err(m) || n_units == 0 || n_units > PCZ_MAX_UNITS)
		return model_fail(r, "bad unit count", diag);
	m->prev_units = n_units;
	rc = reserve_units(r, (size_t)n_units);
	if (rc == 0)
		rc = grow((void **)&m->first_row, &m->cap_first, (size_t)n_units, sizeof *m->first_row);
	if (rc < 0)
		return rc;
	for (uint64_t u = 0; u < n_units; u++) {
		mpxkit_pcz_unit *x = &r->units[u];
		uint64_t k = (k_prev + 1) + pcz_unzigzag(get_field(m, PCZ_F_UNIT)), steps;
		size_t slot;
		if (model_err(m) || k > r->dict.n)
			return model_fail(r, "bad unit reference", diag);
		if (k == r->dict.n) {
			size_t len;
			int bad_name;
			char *name = get_model_name(m, &r->dict, 1, &len, &bad_name);
			if (name == NULL)
				return bad_name ? model_fail(r, "bad unit name", diag) : -MPXKIT_ENOMEM;
			if (pcz_dict_find(&r->dict, name, len) != SIZE_MAX) {
				free(name);
				return model_fail(r, "repeated new unit name", diag);
			}
			k = pcz_dict_add(&r->dict, name, len);
			free(name);
			if (k == SIZE_MAX || grow((void **)&r->seen, &r->cap_seen, r->dict.cap,
						  sizeof *r->seen) != 0 ||
			    grow_history(r) != 0)
				return -MPXKIT_ENOMEM;
			r->seen[k] = 0;
		}
		if (r->seen[k] == region_no)
			return model_fail(r, "unit twice in one region", diag);
		r->seen[k] = region_no;
		k_prev = (size_t)k;
		steps = get_field(m, PCZ_F_STEPS) + 1;
		if (model_err(m) || steps > PCZ_MAX_STEPS)
			return model_fail(r, "bad step count", diag);
		bound += 40 + r->dict.len[k] + 11 * (1 + E) + steps * (20 + E * 11);
		if (bound > MPXKIT_PCZ_MAX_SECTION / 2)
			return model_fail(r, "region larger than the format allows", diag);
		if (steps * W > m->values_left)
			return model_fail(r, "more values than the section frame declares", diag);
		m->values_left -= steps * W;
		rc = model_slot(r, (size_t)k, &slot);
		/* The section's rows grow geometrically, up to the values its frame declares. */
		if (rc == 0 && (t + steps) * W > m->cap_rows) {
			size_t need = (size_t)((t + steps) * W), want = 2 * m->cap_rows;
			want = want < need ? need : want > m->values_total ? m->values_total : want;
			rc = grow((void **)&m->rows, &m->cap_rows, want < need ? need : want,
				  sizeof *m->rows);
		}
		if (rc < 0)
			return rc;
		x->cpu = x->numa = -1;
		if (r->placement) {
			int64_t *pl = m->slot_place + 2 * slot;
			pl[0] += (int64_t)pcz_unzigzag(get_field(m, PCZ_F_CPU));
			pl[1] += (int64_t)pcz_unzigzag(get_field(m, PCZ_F_NUMA));
			if (model_err(m) || pl[0] < 0 || pl[0] > (int64_t)INT32_MAX + 1 || pl[1] < 0 ||
			    pl[1] > (int64_t)INT32_MAX + 1)
				return model_fail(r, "bad cpu or numa node", diag);
			x->cpu = (int)(pl[0] - 1);
			x->numa = (int)(pl[1] - 1);
		}
		m->first_row[u] = t;
		m->ring.rows = m->rows; /* the rows, grown above, are MATCH's too */
		for (uint64_t s2 = 0; s2 < steps; s2++) {
			uint64_t *row = m->rows + (t + s2) * W;
			size_t last = m->slot_last[slot];
			const uint64_t *h = s2 ? row - W : last != SIZE_MAX ? m->rows + last * W : NULL;
			const uint64_t *n = NULL;
			if (u > 0) {
				size_t ps = r->units[u - 1].n_steps;
				n = m->rows + (m->first_row[u - 1] + (s2 < ps ? s2 : ps - 1)) * W;
			}
			pcz_mdec_row(&m->dec, &m->sec, row, h, n, &m->ring,
				     m->count_bits ? m->bits : NULL);
		}
		if (model_err(m))
			return model_fail(r, "damaged coded stream", diag);
		m->slot_last[slot] = t + steps - 1;
		x->name = r->dict.names[k];
		x->n_steps = (size_t)steps;
		r->kidx[u] = (size_t)k;
		t += steps;
	}
	/*
	 * The public layout: times in pairs, values step-major.  A block of one
	 * step is its row as it is (start, end, then the values); longer ones
	 * are copied out.
	 */
	m->n_rows = t;
	t -= t0;
	rc = grow((void **)&r->times, &r->cap_times, 2 * t, sizeof *r->times);
	if (rc == 0)
		rc = grow((void **)&r->values, &r->cap_values, t * E, sizeof *r->values);
	if (rc < 0)
		return rc;
	for (uint64_t u = 0; u < n_units; u++) {
		size_t first = m->first_row[u], steps = r->units[u].n_steps, o = first - t0;
		if (steps == 1) {
			r->units[u].times = m->rows + first * W;
			r->units[u].values = m->rows + first * W + 2;
		} else {
			for (size_t i = 0; i < steps; i++) {
				r->times[2 * (o + i)] = m->rows[(first + i) * W];
				r->times[2 * (o + i) + 1] = m->rows[(first + i) * W + 1];
				memcpy(r->values + (o + i) * E, m->rows + (first + i) * W + 2,
				       E * sizeof *r->values);
			}
			r->units[u].times = r->times + 2 * o;
			r->units[u].values = r->values + o * E;
		}
		r->dur[u] = pcz_unit_duration(&r->units[u]);
		r->group_of[u] = SIZE_MAX;
	}
	r->region.name = r->region_name;
	r->region.n_units = (size_t)n_units;
	r->region.units = r->units;
	r->region.balance_ppm = pcz_balance_ppm(r->dur, (size_t)n_units);
	r->region.n_groups = 0;
	r->region.group_of = r->group_of;
	r->region.group_ref = r->group_ref;
	return 0;
}

static int model_consumed(const mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	if (r->m.values_left != 0)
		return model_fail(r, "fewer values than the section frame declares", diag);
	if (!pcz_mdec_done(&r->m.dec))
		return model_fail(r, "coded streams do not end with the last region", diag);
	return 0;
}

/* Values that decode correctly can still break the INTERVALS rule: the region is refused. */
static int check_region_intervals(const mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	size_t E = r->n_events;

	for (size_t u = 0; u < r->region.n_units; u++) {
		const mpxkit_pcz_unit *x = &r->units[u];
		size_t i = pcz_interval_steps_bad(x->values, x->n_steps, E);
		char what[160];
		if (i == SIZE_MAX)
			continue;
		snprintf(what, sizeof what,
			 "region '%s': unit '%s': step %zu: event '%s': interval does not hold the "
			 "estimate",
			 r->region.name, x->name, i / E, r->events[i % E]);
		return model_fail(r, what, diag);
	}
	return 0;
}

static int next_region(mpxkit_pcz_reader *r, mpxkit_diag *diag)
{
	int v2 = r->version == PCZ_VERSION_MODEL;
	int rc;

	if (r->chunk_left == 0) {
		rc = v2 ? begin_chunk_model(r, diag) : begin_chunk(r, diag);
		if (rc == 1)
			return finish(r, diag);
		if (rc < 0)
			return rc;
	}
	rc = v2 ? read_region_model(r, diag) : read_region(r, diag);
	if (rc == 0 && r->intervals)
		rc = check_region_intervals(r, diag);
	if (rc < 0)
		return rc;
	r->regions_read++;
	r->units_read += r->region.n_units;
	r->stats.n_groups += r->region.n_groups;
	for (size_t u = 0; u < r->region.n_units; u++) {
		r->stats.n_values += r->units[u].n_steps * r->n_events;
		r->stats.n_steps += r->units[u].n_steps;
		if (r->group_of[u] == SIZE_MAX)
			r->stats.n_raw++;
		else
			r->stats.n_grouped++;
	}
	if (--r->chunk_left == 0) {
		rc = v2 ? model_consumed(r, diag) : chunk_consumed(r, diag);
		if (rc < 0)
			return rc;
	}
	return 1;
}

int mpxkit_pcz_reader_next(mpxkit_pcz_reader *r, const mpxkit_pcz_region **out,
			   mpxkit_diag *diag)
{
	int rc;

	if (r == NULL || out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz reader: NULL argument");
	if (r->failed) {
		if (diag)
			*diag = r->fail_diag;
		return r->failed;
	}
	rc = next_region(r, diag ? diag : &r->fail_diag);
	if (rc < 0) {
		r->failed = rc;
		if (diag)
			r->fail_diag = *diag;
		return rc;
	}
	if (rc == 1)
		*out = &r->region;
	return rc;
}

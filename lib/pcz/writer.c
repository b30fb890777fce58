/* SPDX-License-Identifier: BSD-3-Clause */
/* The streaming .pcz writer: regions from any thread, coded into chunks, to a file or memory. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "mpxkit/outfile.h"
#include "pcz_impl.h"

/*
 * A unit name's length and pcz_name_hash, from the pass of check_region that
 * validates it, and its dictionary entry when that pass found it (the MODEL
 * coder's, under the writer's lock), else SIZE_MAX.
 */
struct name_key {
	size_t len, hash, k;
};

/* A region whose units arrive one by one (mpxkit_pcz_writer_stage_unit). */
struct staged {
	char *name;
	size_t n, cap;
	mpxkit_pcz_unit *units; /* deep copies */
};

struct mpxkit_pcz_writer {
	pthread_mutex_t lock;
	mpxkit_outfile *out; /* the file's sink; NULL for a memory writer */
	int to_mem; /* the bytes go to mem, not a file (mpxkit_pcz_writer_open_memory) */
	pcz_buf mem;
	mpxkit_pcz_options opt;
	size_t n_events;
	char **events;
	pcz_buf meta;
	size_t n_meta;
	char *topology;
	size_t topology_len;
	int started; /* META, TOPOLOGY and EVENTS are in the file */
	int failed;  /* sticky: the first error code, once the file is unusable */
	mpxkit_diag fail_diag;
	/* The REGIONS section being filled: the structure stream, and the zigzagged
	 * values of each (slot, stream) where a slot is a unit of the chunk in order
	 * of first use and stream 0 holds timestamps, 1 + e the event e. */
	pcz_buf structure;
	struct pcz_vec *vals;
	size_t n_slots, cap_slots;
	size_t *slot_of;  /* per dictionary entry */
	uint64_t *slot_gen;
	uint64_t chunk_values; /* timestamps and values in the chunk (slow coder) */
	int fast;              /* the fast coder holds the chunk's values (pcz_fast) */
	pcz_fast fast_rows;
	int model;             /* format version 2: the MODEL coder holds the chunk (pcz_mchunk) */
	pcz_mchunk mchunk;
	int vals_oom;
	char *prev_region; /* name of the chunk's last region, when has_prev */
	size_t prev_cap, prev_len;
	int has_prev;
	size_t chunk_regions;
	uint64_t *prev_ref;
	uint64_t *hist;     /* per dictionary entry: its last step's values */
	uint64_t *hist_gen; /* section in which hist was set */
	size_t hist_cap;
	uint64_t gen;
	pcz_dict dict;
	size_t *last_k; /* the MODEL coder's: each unit's entry in the last region, in order */
	size_t n_last, cap_last;
	/* What END records. */
	uint32_t content_crc;
	uint64_t n_regions, n_units;
	uint32_t n_sections;
	pcz_buf payload, stored;
	pcz_compressor cz;
	struct staged *staged;
	size_t n_staged, cap_staged;
};

static int thorough(const mpxkit_pcz_writer *w);

void mpxkit_pcz_options_init(mpxkit_pcz_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->codec = MPXKIT_PCZ_MODEL;
	opt->level = 0;
	opt->threshold_ppm = MPXKIT_PCZ_THRESHOLD_DEFAULT;
	opt->grouping = MPXKIT_PCZ_GROUP_NONE;
	opt->chunk_size = MPXKIT_PCZ_CHUNK_DEFAULT;
	opt->placement = 0;
}

static int check_options(const mpxkit_pcz_options *o, mpxkit_diag *diag)
{
	if ((unsigned)o->codec > MPXKIT_PCZ_MODEL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "unknown codec %d", (int)o->codec);
	if (o->codec == MPXKIT_PCZ_MODEL && o->level != 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "the model codec has no level (levels are for zstd and zlib)");
	if (o->codec == MPXKIT_PCZ_MODEL && o->grouping != MPXKIT_PCZ_GROUP_NONE)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "grouping needs a version-1 codec (zstd, zlib or stored); the "
				   "model codec predicts each unit from the previous one instead");
	if ((unsigned)o->grouping > MPXKIT_PCZ_GROUP_NONE)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "unknown grouping %d", (int)o->grouping);
	if (o->threshold_ppm > 1000000)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "threshold above 1.0");
	if (o->intervals && o->codec != MPXKIT_PCZ_MODEL)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "intervals need format version 2 (the model codec)");
	if (o->chunk_size > MPXKIT_PCZ_MAX_SECTION / 4)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "chunk size above %u bytes",
				   MPXKIT_PCZ_MAX_SECTION / 4);
	if (o->codec == MPXKIT_PCZ_ZLIB && (o->level < 0 || o->level > 9))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "zlib level %d outside 1..9", o->level);
	if (o->codec == MPXKIT_PCZ_ZSTD && (o->level < -7 || o->level > 22))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "zstd level %d outside -7..22", o->level);
	return 0;
}

static void writer_free(mpxkit_pcz_writer *w)
{
	mpxkit_outfile_abort(w->out);
	pcz_buf_free(&w->mem);
	for (size_t i = 0; i < w->n_events; i++)
		free(w->events[i]);
	free(w->events);
	pcz_buf_free(&w->meta);
	free(w->topology);
	pcz_buf_free(&w->structure);
	free(w->prev_region);
	for (size_t i = 0; i < w->cap_slots * (1 + w->n_events); i++)
		free(w->vals[i].v); /* alt and dur live in the same block */
	free(w->vals);
	free(w->slot_of);
	free(w->slot_gen);
	free(w->prev_ref);
	free(w->hist);
	free(w->hist_gen);
	pcz_dict_free(&w->dict);
	free(w->last_k);
	pcz_buf_free(&w->payload);
	pcz_buf_free(&w->stored);
	pcz_fast_free(&w->fast_rows);
	pcz_mchunk_release(&w->mchunk);
	pcz_compressor_free(&w->cz);
	for (size_t i = 0; i < w->n_staged; i++) {
		struct staged *s = &w->staged[i];
		for (size_t u = 0; u < s->n; u++) {
			free((char *)s->units[u].name);
			free((uint64_t *)s->units[u].times);
			free((uint64_t *)s->units[u].values);
		}
		free(s->units);
		free(s->name);
	}
	free(w->staged);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

static int copy_events(mpxkit_pcz_writer *w, size_t n_events, const char *const *events,
		       mpxkit_diag *diag)
{
	if (n_events == 0 || n_events > PCZ_MAX_EVENTS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%zu events: need 1 to %u", n_events,
				   PCZ_MAX_EVENTS);
	/* Names are compared only where their hashes agree: a writer opened per dump of a few
	 * hundred rows spent more on n^2 / 2 strcmp calls than on some of its regions. */
	size_t few[64], *hash = n_events <= 64 ? few : malloc(n_events * sizeof *hash), len;
	int rc = 0;

	w->events = calloc(n_events, sizeof *w->events);
	if (w->events == NULL || hash == NULL) {
		if (hash != few)
			free(hash);
		return -MPXKIT_ENOMEM;
	}
	w->n_events = n_events;
	for (size_t i = 0; i < n_events && rc == 0; i++) {
		if (events[i] == NULL || !pcz_name_scan(events[i], &len, &hash[i])) {
			rc = mpxkit_fail(diag, MPXKIT_EINVAL, "event %zu: bad name", i + 1);
			break;
		}
		for (size_t j = 0; j < i; j++)
			if (hash[j] == hash[i] && strcmp(events[i], events[j]) == 0) {
				rc = mpxkit_fail(diag, MPXKIT_EINVAL, "event '%s' given twice",
						 events[i]);
				break;
			}
		if (rc == 0) {
			w->events[i] = malloc(len + 1);
			if (w->events[i] == NULL)
				rc = -MPXKIT_ENOMEM;
			else
				memcpy(w->events[i], events[i], len + 1);
		}
	}
	if (hash != few)
		free(hash);
	return rc;
}

static int check_interval_names(const mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	char why[200];

	if (pcz_interval_names_ok(w->n_events, (const char *const *)w->events, why, sizeof why))
		return 0;
	return mpxkit_fail(diag, MPXKIT_EINVAL, "intervals: %s", why);
}

/* Both sinks share everything but where file_write puts the bytes; path NULL means memory. */
static int writer_new(const char *path, const mpxkit_pcz_options *opt, size_t n_events,
		      const char *const *events, mpxkit_pcz_writer **out, mpxkit_diag *diag)
{
	mpxkit_pcz_writer *w;
	int rc;

	if (out == NULL || (events == NULL && n_events > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	w = calloc(1, sizeof *w);
	if (w == NULL)
		return -MPXKIT_ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	if (opt)
		w->opt = *opt;
	else
		mpxkit_pcz_options_init(&w->opt);
	if (w->opt.chunk_size == 0)
		w->opt.chunk_size = MPXKIT_PCZ_CHUNK_DEFAULT;
	rc = check_options(&w->opt, diag);
	if (rc < 0)
		goto fail;
	rc = copy_events(w, n_events, events, diag);
	if (rc == 0 && w->opt.intervals)
		rc = check_interval_names(w, diag);
	if (rc < 0)
		goto fail;
	w->prev_ref = calloc(n_events, sizeof *w->prev_ref);
	rc = -MPXKIT_ENOMEM;
	if (w->prev_ref == NULL)
		goto fail;
	/* Groups and codec trials need every predictor's values: the slow coder. */
	w->model = w->opt.codec == MPXKIT_PCZ_MODEL;
	w->fast = !w->model && w->opt.grouping == MPXKIT_PCZ_GROUP_NONE && !thorough(w);
	w->fast_rows.n_events = n_events;
	if (w->model)
		pcz_mchunk_init(&w->mchunk, n_events);
	w->to_mem = path == NULL;
	rc = w->to_mem ? 0 : mpxkit_outfile_open(&w->out, path, diag);
	if (rc < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	writer_free(w);
	return rc;
}

int mpxkit_pcz_writer_open(const char *path, const mpxkit_pcz_options *opt, size_t n_events,
			   const char *const *events, mpxkit_pcz_writer **out, mpxkit_diag *diag)
{
	if (path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	return writer_new(path, opt, n_events, events, out, diag);
}

int mpxkit_pcz_writer_open_memory(const mpxkit_pcz_options *opt, size_t n_events,
				  const char *const *events, mpxkit_pcz_writer **out,
				  mpxkit_diag *diag)
{
	return writer_new(NULL, opt, n_events, events, out, diag);
}

int mpxkit_pcz_writer_set_meta(mpxkit_pcz_writer *w, const char *key, const char *value,
			       mpxkit_diag *diag)
{
	int rc = 0;

	if (w == NULL || key == NULL || value == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	if (!pcz_meta_key_ok(key, strlen(key)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "metadata key '%s': use [A-Za-z0-9_.-]",
				   key);
	if (!pcz_meta_value_ok(value, strlen(value)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "metadata value of '%s' has a newline",
				   key);
	pthread_mutex_lock(&w->lock);
	if (w->started) {
		rc = mpxkit_fail(diag, MPXKIT_ESTATE, "metadata after the first region");
	} else {
		pcz_buf_string(&w->meta, key);
		pcz_buf_string(&w->meta, value);
		w->n_meta++;
		if (w->meta.oom)
			rc = -MPXKIT_ENOMEM;
		else if (w->meta.len > MPXKIT_PCZ_MAX_SECTION - 16)
			rc = mpxkit_fail(diag, MPXKIT_ERANGE, "metadata above %u bytes",
					 MPXKIT_PCZ_MAX_SECTION);
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* This machine's topology as hwloc XML, in a malloc'ed buffer of *len bytes (no NUL counted). */
static int export_this_machine(char **out, size_t *len, mpxkit_diag *diag)
{
	hwloc_topology_t topo;
	char *xml;
	int n, rc = 0;

	if (hwloc_topology_init(&topo) != 0)
		return mpxkit_fail_sys(diag, "hwloc: cannot initialise a topology");
	if (hwloc_topology_load(topo) != 0 || hwloc_topology_export_xmlbuffer(topo, &xml, &n, 0) != 0) {
		rc = mpxkit_fail_sys(diag, "hwloc: cannot export this machine's topology");
		hwloc_topology_destroy(topo);
		return rc;
	}
	/* hwloc counts the NUL it appends; the section holds the text only. */
	*len = n > 0 ? (size_t)n - 1 : 0;
	*out = malloc(*len + 1);
	if (*out == NULL)
		rc = -MPXKIT_ENOMEM;
	else
		memcpy(*out, xml, *len);
	/* The buffer must go back while the topology (and hwloc's XML backend) lives. */
	hwloc_free_xmlbuffer(topo, xml);
	hwloc_topology_destroy(topo);
	return rc;
}

int mpxkit_pcz_writer_set_topology(mpxkit_pcz_writer *w, const char *xml, size_t len,
				   mpxkit_diag *diag)
{
	char *copy = NULL;
	int rc = 0;

	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	if (xml == NULL) {
		rc = export_this_machine(&copy, &len, diag);
		if (rc < 0)
			return rc;
	}
	if (len > MPXKIT_PCZ_MAX_SECTION) {
		free(copy);
		return mpxkit_fail(diag, MPXKIT_ERANGE, "topology above %u bytes",
				   MPXKIT_PCZ_MAX_SECTION);
	}
	if (copy == NULL) {
		copy = malloc(len ? len : 1);
		if (copy == NULL)
			return -MPXKIT_ENOMEM;
		memcpy(copy, xml, len);
	}
	pthread_mutex_lock(&w->lock);
	if (w->started) {
		free(copy);
		rc = mpxkit_fail(diag, MPXKIT_ESTATE, "topology after the first region");
	} else {
		free(w->topology);
		w->topology = copy;
		w->topology_len = len;
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static int file_write(mpxkit_pcz_writer *w, const void *p, size_t n, mpxkit_diag *diag)
{
	if (w->to_mem) {
		pcz_buf_put(&w->mem, p, n);
		if (w->mem.oom)
			return -MPXKIT_ENOMEM;
	} else {
		int rc = mpxkit_outfile_write(w->out, p, n, diag);
		if (rc < 0)
			return rc;
	}
	w->content_crc = pcz_crc32_update(w->content_crc, p, n);
	return 0;
}

/* Runs the codec into out; *codec falls back to STORED when it does not shrink the payload. */
static int encode(mpxkit_pcz_writer *w, const uint8_t *raw, size_t n, pcz_buf *out,
		  mpxkit_pcz_codec *codec)
{
	int rc = pcz_compress_with(&w->cz, *codec, w->opt.level, raw, n, out);

	if (rc < 0)
		return rc;
	if (*codec != MPXKIT_PCZ_STORED && out->len >= n) {
		*codec = MPXKIT_PCZ_STORED;
		out->len = 0;
		pcz_buf_put(out, raw, n);
		if (out->oom)
			return -MPXKIT_ENOMEM;
	}
	return 0;
}

/*
 * Version 2's frame: type, codec, varint sizes, the payload, one CRC of it
 * all.  raw_size is the decoded size, or for MODEL the number of values.
 */
static int write_framed2(mpxkit_pcz_writer *w, unsigned type, unsigned codec, const uint8_t *body,
			 size_t body_len, uint64_t raw_size, mpxkit_diag *diag)
{
	uint8_t head[22], *o = head, c[4];
	uint32_t crc;
	int rc;

	*o++ = (uint8_t)type;
	*o++ = (uint8_t)codec;
	o = pcz_put_varint(o, body_len);
	o = pcz_put_varint(o, raw_size);
	crc = pcz_crc32_update(pcz_crc32(head, (size_t)(o - head)), body, body_len);
	for (int i = 0; i < 4; i++)
		c[i] = (uint8_t)(crc >> (8 * i));
	rc = file_write(w, head, (size_t)(o - head), diag);
	if (rc == 0)
		rc = file_write(w, body, body_len, diag);
	if (rc == 0)
		rc = file_write(w, c, 4, diag);
	if (rc == 0 && type != PCZ_END)
		w->n_sections++;
	return rc;
}

/* Frames and writes one section whose payload raw[0..n) was encoded as body. */
static int write_framed(mpxkit_pcz_writer *w, unsigned type, mpxkit_pcz_codec codec,
			const uint8_t *body, size_t body_len, const uint8_t *raw, size_t n,
			mpxkit_diag *diag)
{
	pcz_buf frame = { 0 };
	int rc;
	pcz_buf_u8(&frame, type);
	pcz_buf_u8(&frame, codec);
	pcz_buf_u16(&frame, 0);
	pcz_buf_u32(&frame, (uint32_t)body_len);
	pcz_buf_u32(&frame, (uint32_t)n);
	if (frame.oom)
		return pcz_buf_free(&frame), -MPXKIT_ENOMEM;
	pcz_buf_u32(&frame, pcz_crc32(frame.data, 12));
	rc = file_write(w, frame.data, frame.len, diag);
	pcz_buf_free(&frame);
	if (rc == 0)
		rc = file_write(w, body, body_len, diag);
	if (rc == 0) {
		uint8_t c[4];
		uint32_t crc = pcz_crc32(raw, n);
		for (int i = 0; i < 4; i++)
			c[i] = (uint8_t)(crc >> (8 * i));
		rc = file_write(w, c, 4, diag);
	}
	if (rc == 0 && type != PCZ_END)
		w->n_sections++;
	return rc;
}

static int write_section(mpxkit_pcz_writer *w, unsigned type, const uint8_t *raw, size_t n,
			 mpxkit_diag *diag)
{
	/*
	 * The fast coder stores small sections (event names, a few metadata
	 * lines) without trying the codec, which seldom shrinks them and costs
	 * a context reset per call.
	 */
	int small = (w->fast || w->model) && n < PCZ_SMALL_SECTION;
	mpxkit_pcz_codec codec = type == PCZ_END || small ? MPXKIT_PCZ_STORED
				 : w->model			 ? MPXKIT_PCZ_ZSTD
								 : w->opt.codec;
	int rc = encode(w, raw, n, &w->stored, &codec);

	if (rc < 0)
		return rc;
	if (w->model)
		return write_framed2(w, type, codec, w->stored.data, w->stored.len, n, diag);
	return write_framed(w, type, codec, w->stored.data, w->stored.len, raw, n, diag);
}

static int write_start(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	pcz_buf b = { 0 };
	int rc;

	w->content_crc = 0;
	pcz_buf_u32(&b, PCZ_MAGIC);
	pcz_buf_u8(&b, w->model ? PCZ_VERSION_MODEL : PCZ_VERSION);
	pcz_buf_u8(&b, 0);
	pcz_buf_u16(&b, 0);
	if (b.oom)
		return pcz_buf_free(&b), -MPXKIT_ENOMEM;
	pcz_buf_u32(&b, pcz_crc32(b.data, 8));
	rc = file_write(w, b.data, b.len, diag);
	b.len = 0;
	pcz_buf_varint(&b, w->n_meta);
	pcz_buf_put(&b, w->meta.data, w->meta.len);
	/* Version 2 leaves out an empty META. */
	if (rc == 0 && (!w->model || w->n_meta > 0))
		rc = b.oom ? -MPXKIT_ENOMEM : write_section(w, PCZ_META, b.data, b.len, diag);
	if (rc == 0 && w->topology)
		rc = write_section(w, PCZ_TOPOLOGY, (const uint8_t *)w->topology, w->topology_len,
				   diag);
	b.len = 0;
	pcz_buf_varint(&b, (w->opt.placement ? PCZ_EVENTS_PLACEMENT : 0) |
			       (w->opt.intervals ? PCZ_EVENTS_INTERVALS : 0));
	pcz_buf_varint(&b, w->n_events);
	for (size_t i = 0; i < w->n_events; i++)
		pcz_buf_string(&b, w->events[i]);
	if (rc == 0)
		rc = b.oom ? -MPXKIT_ENOMEM : write_section(w, PCZ_EVENTS, b.data, b.len, diag);
	pcz_buf_free(&b);
	w->started = 1;
	return rc;
}

/* The chunk's input: 8 bytes per timestamp and value, and its structure stream. */
static uint64_t chunk_raw_size(const mpxkit_pcz_writer *w)
{
	uint64_t values = w->fast ? w->fast_rows.n_values : w->chunk_values;

	if (w->model)
		return w->mchunk.names.len + 8 * (uint64_t)w->mchunk.n_rows * w->mchunk.width;
	return w->structure.len + 8 * values;
}

/* Bytes value v takes in the PLANES layout's widest lane. */
static unsigned byte_width(uint64_t v)
{
	unsigned n = 1;
	while (v >>= 8)
		n++;
	return n;
}

/* The values of one (slot, stream) under the chosen predictor. */
static const uint64_t *values_of(const struct pcz_vec *x, size_t s,
				 const uint8_t *pred)
{
	return s == 0 ? x->v : pcz_vec_of(x, pred[s - 1]);
}

/* The payload of the current chunk in one layout (doc/pcz-format.md, "REGIONS"). */
static void build_payload(const mpxkit_pcz_writer *w, unsigned layout, const uint8_t *pred,
			  pcz_buf *b)
{
	size_t S = 1 + w->n_events;

	b->len = 0;
	pcz_buf_varint(b, w->chunk_regions);
	pcz_buf_varint(b, layout);
	pcz_buf_put(b, pred, w->n_events);
	pcz_buf_varint(b, w->n_slots);
	pcz_buf_varint(b, w->structure.len);
	for (size_t s = 0; s < S; s++)
		for (size_t k = 0; k < w->n_slots; k++) {
			const struct pcz_vec *x = &w->vals[k * S + s];
			const uint64_t *v = values_of(x, s, pred);
			size_t bytes = 0;
			uint64_t all = 0;
			if (layout == PCZ_LAYOUT_PLANES) {
				for (size_t i = 0; i < x->n; i++)
					all |= v[i];
				pcz_buf_varint(b, x->n);
				pcz_buf_u8(b, x->n ? byte_width(all) : 0);
			} else {
				for (size_t i = 0; i < x->n; i++)
					bytes += pcz_varint_len(v[i]);
				pcz_buf_varint(b, bytes);
			}
		}
	pcz_buf_put(b, w->structure.data, w->structure.len);
	for (size_t s = 0; s < S; s++)
		for (size_t k = 0; k < w->n_slots; k++) {
			const struct pcz_vec *x = &w->vals[k * S + s];
			const uint64_t *v = values_of(x, s, pred);
			unsigned width = 0;
			uint64_t all = 0;
			uint8_t *o;
			if (layout == PCZ_LAYOUT_VARINT) {
				pcz_buf_varints(b, v, x->n);
				continue;
			}
			for (size_t i = 0; i < x->n; i++)
				all |= v[i];
			width = byte_width(all);
			if (x->n == 0 || pcz_buf_grow(b, x->n * width) != 0)
				continue;
			/* Plane j holds byte j of every value: high planes are mostly zero. */
			o = b->data + b->len;
			for (unsigned j = 0; j < width; j++)
				for (size_t i = 0; i < x->n; i++)
					*o++ = (uint8_t)(v[i] >> (8 * j));
			b->len += x->n * width;
		}
}

/* Encoded size of one event's values under one predictor: a fast trial of the codec. */
static size_t trial_size(mpxkit_pcz_writer *w, size_t e, unsigned pred, pcz_buf *tmp, pcz_buf *out)
{
	size_t S = 1 + w->n_events;

	tmp->len = 0;
	for (size_t k = 0; k < w->n_slots; k++) {
		const struct pcz_vec *x = &w->vals[k * S + 1 + e];
		pcz_buf_varints(tmp, pcz_vec_of(x, pred), x->n);
	}
	if (tmp->oom || w->opt.codec == MPXKIT_PCZ_STORED)
		return tmp->len;
	if (pcz_compress_with(&w->cz, w->opt.codec, 1, tmp->data, tmp->len, out) != 0)
		return tmp->len;
	return out->len;
}

/*
 * Cheap stand-in for trial_size at fast levels: the varint bytes of the
 * event's values, where a value equal to one of the two before it in its
 * piece counts a quarter, since an LZ stage codes such a repeat as a short
 * match.  Counts in quarter bytes.
 */
static uint64_t estimate_size(const mpxkit_pcz_writer *w, size_t e, unsigned pred)
{
	size_t S = 1 + w->n_events;
	uint64_t cost = 0;

	for (size_t k = 0; k < w->n_slots; k++) {
		const struct pcz_vec *x = &w->vals[k * S + 1 + e];
		const uint64_t *v = pcz_vec_of(x, pred);
		uint64_t a = UINT64_MAX, b = UINT64_MAX;
		for (size_t i = 0; i < x->n; i++) {
			uint64_t z = v[i];
			cost += z == a || z == b ? 1 : 4 * pcz_varint_len(z);
			b = a;
			a = z;
		}
	}
	return cost;
}

/* Whether the writer may spend codec trials on its choices: slow levels only. */
static int thorough(const mpxkit_pcz_writer *w)
{
	if (w->opt.codec == MPXKIT_PCZ_ZSTD)
		return w->opt.level >= PCZ_THOROUGH_ZSTD;
	if (w->opt.codec == MPXKIT_PCZ_ZLIB)
		return w->opt.level == 0 || w->opt.level >= PCZ_THOROUGH_ZLIB;
	return 1;
}

/*
 * Picks each event's step-0 predictor for this chunk.  Counters that repeat a
 * few values (a dump that alternately catches one or two intervals of work)
 * compress better as themselves than as differences, which the byte-stream
 * stage sees as new numbers; counters that tick with the clock (callgrind's Ir
 * when the timestamps are instructions, cycles at a fixed frequency) cost
 * least as their difference from the step's duration.  Slow levels run a
 * trial of the codec at level 1 per candidate, fast ones estimate_size.
 */
static int choose_predictors(mpxkit_pcz_writer *w, uint8_t *pred)
{
	pcz_buf tmp = { 0 }, out = { 0 };

	for (size_t e = 0; e < w->n_events; e++) {
		uint64_t best = UINT64_MAX;
		/* Ties keep the lower predictor: HISTORY, then NONE. */
		for (unsigned p = PCZ_PRED_HISTORY; p <= PCZ_PRED_DURATION; p++) {
			uint64_t size = thorough(w) ? trial_size(w, e, p, &tmp, &out)
						    : estimate_size(w, e, p);
			if (size < best) {
				best = size;
				pred[e] = (uint8_t)p;
			}
		}
	}
	pcz_buf_free(&out);
	if (tmp.oom)
		return pcz_buf_free(&tmp), -MPXKIT_ENOMEM;
	pcz_buf_free(&tmp);
	return 0;
}

/*
 * Order-0 entropy of a buffer in bits.  Fast levels take PLANES when the
 * varints are dense, above PCZ_DENSE_VARINTS of 8 bits per byte: such values
 * are noise an LZ stage cannot shorten, and planes at least gather their zero
 * high bytes.  On data/threads/ the varints of the kernels score 0.62-0.70
 * (VARINT codes smaller) and those of xz, zstd and the sorts 0.74-0.82
 * (PLANES codes smaller).
 */
static double entropy_bits(const uint8_t *p, size_t n)
{
	size_t count[256] = { 0 };
	double bits = 0;

	for (size_t i = 0; i < n; i++)
		count[p[i]]++;
	for (unsigned c = 0; c < 256; c++)
		if (count[c])
			bits -= (double)count[c] * log2((double)count[c] / (double)n);
	return bits;
}

/* The fast coder's chunk: one payload, one run of the codec. */
static int write_chunk_fast(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	mpxkit_pcz_codec codec = w->opt.codec;
	int rc = pcz_fast_payload(&w->fast_rows, w->chunk_regions, &w->structure, &w->payload);

	/* The region bound of check_region keeps a chunk below the limit; this is a guard. */
	if (rc == 0 && w->payload.len > MPXKIT_PCZ_MAX_SECTION)
		rc = mpxkit_fail(diag, MPXKIT_ERANGE, "REGIONS section above %u bytes",
				 MPXKIT_PCZ_MAX_SECTION);
	if (rc == 0)
		rc = encode(w, w->payload.data, w->payload.len, &w->stored, &codec);
	if (rc == 0)
		rc = write_framed(w, PCZ_REGIONS, codec, w->stored.data, w->stored.len,
				  w->payload.data, w->payload.len, diag);
	return rc;
}

/* The slow coder's chunk, in whichever layout encodes smaller (estimated at fast levels). */
static int write_chunk_slow(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	pcz_buf planes = { 0 }, planes_stored = { 0 };
	mpxkit_pcz_codec c0 = w->opt.codec, c1 = w->opt.codec;
	uint8_t *pred;
	int rc, guess = -1; /* layout: 0 VARINT, 1 PLANES, -1 try both */

	pred = malloc(w->n_events);
	if (pred == NULL)
		return -MPXKIT_ENOMEM;
	rc = choose_predictors(w, pred);
	if (rc < 0)
		return free(pred), rc;
	build_payload(w, PCZ_LAYOUT_VARINT, pred, &w->payload);
	/* Fast levels guess the smaller layout and run the codec once; slow ones run both. */
	if (!thorough(w) && !w->payload.oom)
		guess = entropy_bits(w->payload.data, w->payload.len) >
				PCZ_DENSE_VARINTS * 8.0 * (double)w->payload.len
			? 1
			: 0;
	if (guess != 0)
		build_payload(w, PCZ_LAYOUT_PLANES, pred, &planes);
	free(pred);
	rc = w->payload.oom || planes.oom ? -MPXKIT_ENOMEM : 0;
	/* The region bound of check_region keeps a chunk below the limit; this is a guard. */
	if (rc == 0 && w->payload.len > MPXKIT_PCZ_MAX_SECTION)
		rc = mpxkit_fail(diag, MPXKIT_ERANGE, "REGIONS section above %u bytes",
				 MPXKIT_PCZ_MAX_SECTION);
	if (planes.len > MPXKIT_PCZ_MAX_SECTION)
		guess = 0;
	if (rc == 0 && guess != 1)
		rc = encode(w, w->payload.data, w->payload.len, &w->stored, &c0);
	if (rc == 0 && guess != 0)
		rc = encode(w, planes.data, planes.len, &planes_stored, &c1);
	if (rc == 0 && (guess == 1 || (guess == -1 && planes_stored.len < w->stored.len)))
		rc = write_framed(w, PCZ_REGIONS, c1, planes_stored.data, planes_stored.len,
				  planes.data, planes.len, diag);
	else if (rc == 0)
		rc = write_framed(w, PCZ_REGIONS, c0, w->stored.data, w->stored.len,
				  w->payload.data, w->payload.len, diag);
	pcz_buf_free(&planes);
	pcz_buf_free(&planes_stored);
	return rc;
}

/* The MODEL coder's chunk: one payload, framed with the number of values as raw size. */
static int write_chunk_model(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	int rc = pcz_mchunk_payload(&w->mchunk, &w->dict, w->opt.placement, &w->payload);

	if (rc == 0 && w->payload.len > MPXKIT_PCZ_MAX_SECTION)
		rc = mpxkit_fail(diag, MPXKIT_ERANGE, "REGIONS section above %u bytes",
				 MPXKIT_PCZ_MAX_SECTION);
	if (rc == 0)
		rc = write_framed2(w, PCZ_REGIONS, PCZ_CODEC_MODEL, w->payload.data, w->payload.len,
				   (uint64_t)w->mchunk.n_rows * w->mchunk.width, diag);
	pcz_mchunk_reset(&w->mchunk);
	return rc;
}

static int flush_chunk(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	int rc;

	if (w->chunk_regions == 0)
		return 0;
	if (w->vals_oom || w->structure.oom)
		return -MPXKIT_ENOMEM;
	rc = w->model ? write_chunk_model(w, diag)
	     : w->fast ? write_chunk_fast(w, diag)
		       : write_chunk_slow(w, diag);
	/* Every predictor restarts with the next section. */
	w->chunk_regions = 0;
	w->structure.len = 0;
	for (size_t i = 0; !w->fast && i < w->n_slots * (1 + w->n_events); i++)
		w->vals[i].n = 0;
	w->n_slots = 0;
	w->chunk_values = 0;
	pcz_fast_reset(&w->fast_rows);
	w->has_prev = 0;
	memset(w->prev_ref, 0, w->n_events * sizeof *w->prev_ref);
	w->gen++;
	return rc;
}

/*
 * Appends one value to a slot's stream, zigzagged, as coded with the history
 * predictor (diff) and without it (alt); they differ only at step 0 of a block
 * coded on its own.
 */
static __attribute__((noinline)) int vec_grow(struct pcz_vec *x)
{
	size_t cap = x->cap ? 2 * x->cap : 64;
	/* One block holds the three predictors' arrays: a third of the allocations. */
	uint64_t *v = malloc(3 * cap * sizeof *v);

	if (v == NULL)
		return -1;
	if (x->n) {
		memcpy(v, x->v, x->n * sizeof *v);
		memcpy(v + cap, x->alt, x->n * sizeof *v);
		memcpy(v + 2 * cap, x->dur, x->n * sizeof *v);
	}
	free(x->v);
	x->v = v;
	x->alt = v + cap;
	x->dur = v + 2 * cap;
	x->cap = cap;
	return 0;
}

static inline void put(mpxkit_pcz_writer *w, size_t slot, size_t stream, uint64_t diff,
		       uint64_t alt, uint64_t dur)
{
	struct pcz_vec *x = &w->vals[slot * (1 + w->n_events) + stream];
	uint64_t z = pcz_zigzag(diff), za = pcz_zigzag(alt), zd = pcz_zigzag(dur);

	if (x->n == x->cap && vec_grow(x) != 0) {
		w->vals_oom = 1;
		return;
	}
	x->alt[x->n] = za;
	x->dur[x->n] = zd;
	x->v[x->n++] = z;
}

/* put for a value that every predictor codes alike (timestamps, differences). */
static inline void put1(mpxkit_pcz_writer *w, size_t slot, size_t stream, uint64_t diff)
{
	put(w, slot, stream, diff, diff, diff);
}

/* The chunk slot of dictionary entry k, assigned on first use in this chunk. */
static inline size_t slot_for(mpxkit_pcz_writer *w, size_t k)
{
	size_t S = 1 + w->n_events;

	if (w->slot_gen[k] == w->gen)
		return w->slot_of[k];
	if (!w->fast && w->n_slots == w->cap_slots) {
		size_t cap = w->cap_slots ? 2 * w->cap_slots : 16;
		struct pcz_vec *v = realloc(w->vals, cap * S * sizeof *v);
		if (v == NULL)
			return SIZE_MAX;
		memset(v + w->cap_slots * S, 0, (cap - w->cap_slots) * S * sizeof *v);
		w->vals = v;
		w->cap_slots = cap;
	}
	w->slot_gen[k] = w->gen;
	w->slot_of[k] = w->n_slots;
	return w->n_slots++;
}

/* Step 0's predictor: the unit's own last step in this section, else the last reference. */
static const uint64_t *history(const mpxkit_pcz_writer *w, size_t k)
{
	return w->hist_gen[k] == w->gen ? w->hist + k * w->n_events : w->prev_ref;
}

/* Value-stream bytes of a block coded on its own (reference, raw or TEMPORAL). */
static uint64_t block_cost(const mpxkit_pcz_writer *w, const mpxkit_pcz_unit *u, size_t k)
{
	const uint64_t *h = history(w, k);
	size_t E = w->n_events;
	uint64_t cost = 0;

	for (size_t i = 0; i < u->n_steps * E; i++)
		cost += pcz_varint_len(pcz_zigzag(u->values[i] - (i < E ? h[i] : u->values[i - E])));
	return cost;
}

static void code_block(mpxkit_pcz_writer *w, const mpxkit_pcz_unit *u, size_t k, int is_ref)
{
	const uint64_t *h = history(w, k);
	size_t E = w->n_events, slot = w->slot_of[k];

	for (size_t i = 0; i < u->n_steps * E; i++) {
		uint64_t p = i < E ? 0 : u->values[i - E];
		uint64_t d = u->times[2 * (i / E) + 1] - u->times[2 * (i / E)];
		put(w, slot, 1 + i % E, u->values[i] - (i < E ? h[i] : p), u->values[i] - p,
		    u->values[i] - d);
	}
	if (is_ref)
		memcpy(w->prev_ref, u->values, E * sizeof *w->prev_ref);
}

/* Writes a member's kind (and mask) to the structure stream and its values. */
static void code_member(mpxkit_pcz_writer *w, const mpxkit_pcz_unit *m, size_t k,
			const mpxkit_pcz_unit *r)
{
	size_t E = w->n_events, n = m->n_steps * E, nnz = 0, slot = w->slot_of[k];
	pcz_buf *st = &w->structure;
	uint64_t spatial;

	for (size_t i = 0; i < n; i++)
		nnz += m->values[i] != r->values[i];
	if (nnz == 0) {
		pcz_buf_u8(st, PCZ_SAME);
		return;
	}
	spatial = pcz_diff_cost(m->values, r->values, n) + (nnz == n ? 0 : (n + 7) / 8);
	if (block_cost(w, m, k) < spatial) {
		pcz_buf_u8(st, PCZ_TEMPORAL);
		code_block(w, m, k, 0);
		return;
	}
	if (nnz == n) {
		pcz_buf_u8(st, PCZ_DENSE);
	} else {
		pcz_buf_u8(st, PCZ_MASK);
		for (size_t i = 0; i < n; i += 8) {
			unsigned byte = 0;
			for (size_t b = 0; b < 8 && i + b < n; b++)
				byte |= (unsigned)(m->values[i + b] != r->values[i + b]) << b;
			pcz_buf_u8(st, byte);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (nnz == n || m->values[i] != r->values[i])
			put1(w, slot, 1 + i % E, m->values[i] - r->values[i]);
}

/* Keeps each unit's last step as the next region's predictor. */
static int update_history(mpxkit_pcz_writer *w, const mpxkit_pcz_unit *units, size_t n_units,
			  const size_t *kidx)
{
	size_t E = w->n_events;

	if (w->dict.n > w->hist_cap) {
		size_t cap = w->dict.cap;
		uint64_t *h = realloc(w->hist, cap * E * sizeof *h), *g;
		size_t *so;
		if (h == NULL)
			return -MPXKIT_ENOMEM;
		w->hist = h;
		g = realloc(w->hist_gen, cap * sizeof *g);
		if (g == NULL)
			return -MPXKIT_ENOMEM;
		w->hist_gen = g;
		g = realloc(w->slot_gen, cap * sizeof *g);
		if (g == NULL)
			return -MPXKIT_ENOMEM;
		w->slot_gen = g;
		so = realloc(w->slot_of, cap * sizeof *so);
		if (so == NULL)
			return -MPXKIT_ENOMEM;
		w->slot_of = so;
		for (size_t k = w->hist_cap; k < cap; k++)
			w->hist_gen[k] = w->slot_gen[k] = UINT64_MAX;
		w->hist_cap = cap;
	}
	for (size_t u = 0; u < n_units; u++) {
		memcpy(w->hist + kidx[u] * E, units[u].values + (units[u].n_steps - 1) * E,
		       E * sizeof *w->hist);
		w->hist_gen[kidx[u]] = w->gen;
	}
	return 0;
}

/* Unit headers into the structure stream; kidx gets each unit's dictionary entry. */
static int code_units(mpxkit_pcz_writer *w, const mpxkit_pcz_unit *units, size_t n_units,
		      const struct name_key *keys, size_t *kidx)
{
	pcz_buf *st = &w->structure;

	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		size_t len = keys[u].len,
		       k = pcz_dict_find_hashed(&w->dict, x->name, len, keys[u].hash);
		if (k == SIZE_MAX) {
			k = pcz_dict_add(&w->dict, x->name, len);
			if (k == SIZE_MAX)
				return -MPXKIT_ENOMEM;
			pcz_buf_varint(st, 0);
			pcz_buf_string(st, x->name);
		} else {
			pcz_buf_varint(st, k + 1);
		}
		pcz_buf_varint(st, x->n_steps);
		if (w->opt.placement) {
			pcz_buf_varint(st, (uint64_t)((int64_t)x->cpu + 1));
			pcz_buf_varint(st, (uint64_t)((int64_t)x->numa + 1));
		}
		kidx[u] = k;
	}
	return 0;
}

/* Timestamps into each unit's slot: start against the previous end, then the duration. */
static int code_times(mpxkit_pcz_writer *w, const mpxkit_pcz_unit *units, size_t n_units,
		      const size_t *kidx)
{
	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		size_t k = kidx[u], slot = slot_for(w, k);
		uint64_t prev = w->dict.last_gen[k] == w->gen ? w->dict.last_end[k] : 0;
		if (slot == SIZE_MAX)
			return -MPXKIT_ENOMEM;
		for (size_t s = 0; s < x->n_steps; s++) {
			put1(w, slot, 0, x->times[2 * s] - prev);
			put1(w, slot, 0, x->times[2 * s + 1] - x->times[2 * s]);
			prev = x->times[2 * s + 1];
		}
		w->dict.last_end[k] = prev;
		w->dict.last_gen[k] = w->gen;
	}
	return 0;
}

/*
 * Dumps are often named loop1, loop2, ...: such a name is "the previous one,
 * plus one" (PCZ_NAME_*); the chunk's last name is kept for the next.
 */
static int region_name_mode(mpxkit_pcz_writer *w, const char *name, unsigned *mode)
{
	size_t len = strlen(name);

	if (w->has_prev && w->prev_len == len && memcmp(w->prev_region, name, len) == 0) {
		*mode = PCZ_NAME_SAME;
		return 0;
	}
	*mode = w->has_prev && pcz_name_is_next(w->prev_region, w->prev_len, name, len)
			? PCZ_NAME_NEXT
			: PCZ_NAME_NEW;
	if (len + 1 > w->prev_cap) {
		char *p = realloc(w->prev_region, len + 1);
		if (p == NULL)
			return -MPXKIT_ENOMEM;
		w->prev_region = p;
		w->prev_cap = len + 1;
	}
	memcpy(w->prev_region, name, len + 1);
	w->prev_len = len;
	w->has_prev = 1;
	return 0;
}

static int code_region_name(mpxkit_pcz_writer *w, const char *name)
{
	unsigned mode;
	int rc = region_name_mode(w, name, &mode);

	pcz_buf_varint(&w->structure, mode);
	if (mode == PCZ_NAME_NEW)
		pcz_buf_string(&w->structure, name);
	return rc;
}

/* Appends one planned region to the current chunk (lock held). */
static int code_region(mpxkit_pcz_writer *w, const char *name, size_t n_units,
		       const mpxkit_pcz_unit *units, const struct name_key *keys,
		       const pcz_plan *plan, size_t *members)
{
	size_t *kidx = members + n_units;
	pcz_buf *st = &w->structure;
	int rc;

	rc = code_region_name(w, name);
	if (rc < 0)
		return rc;
	pcz_buf_varint(st, n_units);
	rc = code_units(w, units, n_units, keys, kidx);
	if (rc == 0) /* sizes the per-name arrays for the names just added */
		rc = update_history(w, NULL, 0, NULL);
	if (rc == 0)
		rc = code_times(w, units, n_units, kidx);
	if (rc < 0)
		return rc;
	pcz_buf_u8(st, pcz_balance_q8(plan->balance_ppm));
	pcz_buf_varint(st, plan->n_groups);
	for (size_t g = 0; g < plan->n_groups; g++) {
		size_t n = 0, ref = 0;
		for (size_t u = 0; u < n_units; u++)
			if (plan->group_of[u] == g) {
				if (u == plan->group_ref[g])
					ref = n;
				members[n++] = u;
			}
		pcz_buf_varint(st, n);
		for (size_t i = 0; i < n; i++)
			pcz_buf_varint(st, i == 0 ? members[0] : members[i] - members[i - 1] - 1);
		pcz_buf_varint(st, ref);
		code_block(w, &units[members[ref]], kidx[members[ref]], 1);
		for (size_t i = 0; i < n; i++)
			if (i != ref)
				code_member(w, &units[members[i]], kidx[members[i]],
					    &units[members[ref]]);
	}
	for (size_t u = 0; u < n_units; u++)
		if (plan->group_of[u] == SIZE_MAX)
			code_block(w, &units[u], kidx[u], 0);
	rc = update_history(w, units, n_units, kidx);
	if (rc < 0)
		return rc;
	for (size_t u = 0; u < n_units; u++)
		w->chunk_values += units[u].n_steps * (2 + w->n_events);
	w->chunk_regions++;
	w->n_regions++;
	w->n_units += n_units;
	return w->vals_oom || st->oom ? -MPXKIT_ENOMEM : 0;
}

/* The fast coder's region: structure as always, each unit's steps as raw rows of its slot. */
static int code_region_fast(mpxkit_pcz_writer *w, const char *name, size_t n_units,
			    const mpxkit_pcz_unit *units, const struct name_key *keys)
{
	size_t E = w->n_events, room = 32;
	uint64_t lo = UINT64_MAX, hi = 0; /* durations, for the balance degree */
	pcz_buf *st = &w->structure;
	uint8_t *o;
	int rc;

	rc = code_region_name(w, name);
	if (rc < 0)
		return rc;
	/* Unit headers: at most 5 varints and a name each, written in place. */
	for (size_t u = 0; u < n_units; u++)
		room += 50 + keys[u].len;
	if (pcz_buf_grow(st, room) != 0)
		return -MPXKIT_ENOMEM;
	o = pcz_put_varint(st->data + st->len, n_units);
	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		size_t k = pcz_dict_find_hashed(&w->dict, x->name, keys[u].len, keys[u].hash), slot;
		uint64_t prev, d;
		if (k == SIZE_MAX) {
			k = pcz_dict_add(&w->dict, x->name, keys[u].len);
			/* Sizes the per-name arrays for the name just added. */
			if (k == SIZE_MAX || update_history(w, NULL, 0, NULL) != 0)
				return -MPXKIT_ENOMEM;
			*o++ = 0;
			o = pcz_put_varint(o, keys[u].len);
			memcpy(o, x->name, keys[u].len);
			o += keys[u].len;
		} else {
			o = pcz_put_varint(o, k + 1);
		}
		o = pcz_put_varint(o, x->n_steps);
		if (w->opt.placement) {
			o = pcz_put_varint(o, (uint64_t)((int64_t)x->cpu + 1));
			o = pcz_put_varint(o, (uint64_t)((int64_t)x->numa + 1));
		}
		/* The unit's steps, as rows of its slot. */
		slot = slot_for(w, k);
		if (slot == SIZE_MAX)
			return -MPXKIT_ENOMEM;
		prev = w->dict.last_gen[k] == w->gen ? w->dict.last_end[k] : 0;
		for (size_t s = 0; s < x->n_steps; s++) {
			if (pcz_fast_append(&w->fast_rows, slot, s == 0, x->times[2 * s] - prev,
					    x->times[2 * s + 1] - x->times[2 * s],
					    x->values + s * E) != 0)
				return -MPXKIT_ENOMEM;
			prev = x->times[2 * s + 1];
		}
		w->dict.last_end[k] = prev;
		w->dict.last_gen[k] = w->gen;
		d = pcz_unit_duration(x);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	*o++ = (uint8_t)pcz_balance_q8(pcz_ppm_of(lo, hi));
	*o++ = 0; /* no groups */
	st->len = (size_t)(o - st->data);
	w->chunk_regions++;
	w->n_regions++;
	w->n_units += n_units;
	return 0;
}

/*
 * The MODEL coder's region: dictionary entries here, everything else when the
 * chunk closes.  same: every unit is the last region's at its place
 * (check_region), whose entries are the first n_units of last_k.
 */
static int code_region_model(mpxkit_pcz_writer *w, const char *name, size_t n_units,
			     const mpxkit_pcz_unit *units, const struct name_key *keys, int same)
{
	size_t few[32], *kidx, dict_n = w->dict.n;
	unsigned mode;
	int rc;

	if (same) {
		rc = region_name_mode(w, name, &mode);
		if (rc == 0)
			rc = pcz_mchunk_add(&w->mchunk, mode, name, n_units, units, w->last_k,
					    dict_n);
		if (rc < 0)
			return rc;
		w->n_last = n_units;
		w->chunk_regions++;
		w->n_regions++;
		w->n_units += n_units;
		return 0;
	}
	kidx = n_units <= 32 ? few : malloc(n_units * sizeof *kidx);
	rc = kidx ? region_name_mode(w, name, &mode) : -MPXKIT_ENOMEM;

	for (size_t u = 0; rc == 0 && u < n_units; u++) {
		size_t k = keys[u].k;
		if (k == SIZE_MAX)
			k = pcz_dict_find_hashed(&w->dict, units[u].name, keys[u].len, keys[u].hash);
		if (k == SIZE_MAX)
			k = pcz_dict_add(&w->dict, units[u].name, keys[u].len);
		if (k == SIZE_MAX)
			rc = -MPXKIT_ENOMEM;
		kidx[u] = k;
	}
	if (rc == 0)
		rc = pcz_mchunk_add(&w->mchunk, mode, name, n_units, units, kidx, dict_n);
	/* The entries to try first for the next region's units (check_region). */
	if (rc == 0 && n_units > w->cap_last) {
		size_t *p = realloc(w->last_k, n_units * sizeof *p);
		if (p) {
			w->last_k = p;
			w->cap_last = n_units;
		}
	}
	if (rc == 0) {
		w->n_last = n_units <= w->cap_last ? n_units : 0;
		memcpy(w->last_k, kidx, w->n_last * sizeof *kidx);
	}
	if (kidx != few)
		free(kidx);
	if (rc < 0)
		return rc;
	w->chunk_regions++;
	w->n_regions++;
	w->n_units += n_units;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether name is the dictionary entry that unit u of the last region had
 * (the MODEL coder's, under the writer's lock), and then its key: most
 * regions repeat the units of the one before, in order, and comparing with
 * that entry's name costs less than hashing the name and looking it up.  An
 * entry's name is valid: it was checked when it was added.
 */
static int same_as_last(const mpxkit_pcz_writer *w, size_t u, const char *name,
			struct name_key *key)
{
	const char *e;
	size_t k;

	if (u >= w->n_last)
		return 0;
	k = w->last_k[u];
	e = w->dict.names[k];
	/* libc's strcmp reads name no further than its end and compares a vector at a time,
	 * where a loop here took a compare and a branch a byte. */
	if (strcmp(e, name) != 0)
		return 0;
	*key = (struct name_key){ w->dict.len[k], w->dict.hash[k], k };
	return 1;
}

/*
 * Everything about a region that can be wrong, checked before the shared
 * state is touched.  locked: under the writer's lock, where unit names are
 * first compared with the last region's (same_as_last).  0, 1 when every
 * unit is the last region's at its place (locked only), or a negative code.
 */
static int check_unit_intervals(const mpxkit_pcz_writer *w, const char *region,
				const mpxkit_pcz_unit *x, mpxkit_diag *diag)
{
	size_t E = w->n_events, i = pcz_interval_steps_bad(x->values, x->n_steps, E);

	if (i == SIZE_MAX)
		return 0;
	return mpxkit_fail(diag, MPXKIT_EINVAL,
			   "region '%s': unit '%s': step %zu: event '%s': interval [%" PRIu64
			   ", %" PRIu64 "] does not hold %" PRIu64,
			   region, x->name, i / E, w->events[i % E], x->values[i + 1],
			   x->values[i + 2], x->values[i]);
}

static int check_region(const mpxkit_pcz_writer *w, const char *region, size_t n_units,
			const mpxkit_pcz_unit *units, struct name_key *keys, int locked,
			mpxkit_diag *diag)
{
	size_t rlen = strlen(region), n_same = 0;
	uint64_t bound, name_bytes = 0, steps = 0;
	const char **names;
	int rc = 0;

	if (!pcz_name_ok(region, rlen) || (w->model && rlen > PCZ_MAX_NAME))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "region '%s': bad name", region);
	if (n_units == 0 || n_units > PCZ_MAX_UNITS)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "region '%s': %zu units, need 1 to %u",
				   region, n_units, PCZ_MAX_UNITS);
	for (size_t u = 0; u < n_units; u++) {
		const mpxkit_pcz_unit *x = &units[u];
		keys[u].k = SIZE_MAX;
		if (x->name != NULL && locked && same_as_last(w, u, x->name, &keys[u]))
			n_same++;
		else if (x->name == NULL || !pcz_name_scan(x->name, &keys[u].len, &keys[u].hash) ||
			 (w->model && keys[u].len > PCZ_MAX_NAME))
			return mpxkit_fail(diag, MPXKIT_EINVAL, "region '%s': unit %zu: bad name",
					   region, u);
		if (x->n_steps == 0 || x->n_steps > PCZ_MAX_STEPS || !x->times || !x->values)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "region '%s': unit '%s': %zu steps or no data", region,
					   x->name, x->n_steps);
		if (x->cpu < -1 || x->numa < -1)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "region '%s': unit '%s': cpu or numa below -1", region,
					   x->name);
		if (w->opt.intervals && (rc = check_unit_intervals(w, region, x, diag)) < 0)
			return rc;
		name_bytes += keys[u].len;
		steps += x->n_steps;
	}
	/* Worst case: 10-byte varints everywhere, a mask bit per element: the sum over the
	 * units, regrouped (the same number modulo 2^64 as added unit by unit). */
	bound = 64 + rlen + n_units * (40 + 11 * (1 + (uint64_t)w->n_events)) + name_bytes +
		steps * (20 + (uint64_t)w->n_events * 11);
	if (bound > MPXKIT_PCZ_MAX_SECTION / 2)
		return mpxkit_fail(diag, MPXKIT_ERANGE, "region '%s' too large for one section",
				   region);
	/* Every unit the last region's at its place: distinct, as the last region's were. */
	if (n_same == n_units)
		return 1;
	if (n_units <= 16) { /* the common case: a few threads, no sort needed */
		/* A bit per unit, by 6 bits of its name's hash (mixed: names that differ in
		 * their last digits differ little in any 6 bits of FNV-1a): only a unit whose bit
		 * was taken can repeat an earlier name, and only such a unit is compared. */
		uint64_t seen = 0;
		for (size_t u = 0; u < n_units; u++) {
			uint64_t bit = 1ull << (((uint64_t)keys[u].hash * 0x9E3779B97F4A7C15ull) >> 58);
			if (seen & bit)
				for (size_t v = 0; v < u; v++)
					if (keys[u].hash == keys[v].hash &&
					    strcmp(units[u].name, units[v].name) == 0)
						return mpxkit_fail(diag, MPXKIT_EINVAL,
								   "region '%s': unit '%s' given twice",
								   region, units[u].name);
			seen |= bit;
		}
		return 0;
	}
	names = malloc(n_units * sizeof *names);
	if (names == NULL)
		return -MPXKIT_ENOMEM;
	for (size_t u = 0; u < n_units; u++)
		names[u] = units[u].name;
	qsort(names, n_units, sizeof *names, cmp_name);
	for (size_t u = 1; u < n_units && rc == 0; u++)
		if (strcmp(names[u], names[u - 1]) == 0)
			rc = mpxkit_fail(diag, MPXKIT_EINVAL, "region '%s': unit '%s' given twice",
					 region, names[u]);
	free(names);
	return rc;
}

static int fail_sticky(mpxkit_pcz_writer *w, int rc, mpxkit_diag *diag)
{
	if (!w->failed) {
		w->failed = rc;
		if (diag)
			w->fail_diag = *diag;
	}
	return rc;
}

/*
 * The writer's side of adding a region, under its lock: refused after an
 * earlier failure, else the file is started if need be, the region coded
 * (through plan by the grouping coder, or by the fast one when plan is
 * NULL) and the chunk flushed once full.  A failure here sticks.
 */
static int add_region_locked(mpxkit_pcz_writer *w, const char *region, size_t n_units,
			     const mpxkit_pcz_unit *units, struct name_key *keys,
			     const pcz_plan *plan, size_t *members, int check, mpxkit_diag *diag)
{
	int rc, same = 0;

	pthread_mutex_lock(&w->lock);
	/* check: the region is checked here, under the lock (a bad region fails alone). */
	if (check && (rc = same = check_region(w, region, n_units, units, keys, 1, diag)) < 0)
		goto out;
	if (w->failed) {
		rc = mpxkit_fail(diag, MPXKIT_ESTATE, "an earlier write failed: %s",
				 mpxkit_diag_message(&w->fail_diag, w->failed));
		goto out;
	}
	rc = w->started ? 0 : write_start(w, diag);
	if (rc == 0)
		rc = plan	? code_region(w, region, n_units, units, keys, plan, members)
		     : w->model ? code_region_model(w, region, n_units, units, keys, same)
				: code_region_fast(w, region, n_units, units, keys);
	if (rc == 0 && chunk_raw_size(w) >= w->opt.chunk_size)
		rc = flush_chunk(w, diag);
	if (rc < 0)
		fail_sticky(w, rc, diag);
out:
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static int add_region_fast(mpxkit_pcz_writer *w, const char *region, size_t n_units,
			   const mpxkit_pcz_unit *units, struct name_key *keys,
			   mpxkit_diag *diag)
{
	return add_region_locked(w, region, n_units, units, keys, NULL, NULL, 0, diag);
}

static int add_region_slow(mpxkit_pcz_writer *w, const char *region, size_t n_units,
			   const mpxkit_pcz_unit *units, struct name_key *keys,
			   mpxkit_diag *diag)
{
	pcz_plan plan;
	int rc;

	/* The costly part, grouping and medoids, runs outside the lock. */
	rc = pcz_plan_region(units, n_units, w->n_events, w->opt.grouping, w->opt.threshold_ppm,
			     &plan);
	if (rc < 0)
		return rc;
	rc = add_region_locked(w, region, n_units, units, keys, &plan, plan.work, 0, diag);
	pcz_plan_free(&plan);
	return rc;
}

int mpxkit_pcz_writer_add_region(mpxkit_pcz_writer *w, const char *region, size_t n_units,
				 const mpxkit_pcz_unit *units, mpxkit_diag *diag)
{
	struct name_key few[32], *keys = few;
	int rc;

	if (w == NULL || region == NULL || (units == NULL && n_units > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	/* check_region rejects a count out of range before it uses keys. */
	if (n_units > 32 && n_units <= PCZ_MAX_UNITS) {
		keys = malloc(n_units * sizeof *keys);
		if (keys == NULL)
			return -MPXKIT_ENOMEM;
	}
	/* The MODEL coder checks under the lock, where names are compared with the last region's
	 * dictionary entries instead of hashed (same_as_last); the others before it. */
	if (w->model)
		rc = add_region_locked(w, region, n_units, units, keys, NULL, NULL, 1, diag);
	else if ((rc = check_region(w, region, n_units, units, keys, 0, diag)) == 0)
		rc = (w->fast ? add_region_fast : add_region_slow)(w, region, n_units, units, keys,
								   diag);
	if (keys != few)
		free(keys);
	return rc;
}

static int copy_unit(mpxkit_pcz_unit *dst, const mpxkit_pcz_unit *src, size_t n_events)
{
	size_t nv = src->n_steps * n_events;
	uint64_t *times = malloc(2 * src->n_steps * sizeof *times);
	uint64_t *values = malloc(nv * sizeof *values);
	char *name = strdup(src->name);

	if (!times || !values || !name) {
		free(times);
		free(values);
		free(name);
		return -MPXKIT_ENOMEM;
	}
	memcpy(times, src->times, 2 * src->n_steps * sizeof *times);
	memcpy(values, src->values, nv * sizeof *values);
	*dst = *src;
	dst->name = name;
	dst->times = times;
	dst->values = values;
	return 0;
}

/* The oldest staged region called name without a unit called unit, or a new one. */
static struct staged *staged_slot(mpxkit_pcz_writer *w, const char *name, const char *unit)
{
	struct staged *s;

	for (size_t i = 0; i < w->n_staged; i++) {
		int taken = 0;
		s = &w->staged[i];
		if (strcmp(s->name, name) != 0)
			continue;
		for (size_t u = 0; u < s->n && !taken; u++)
			taken = strcmp(s->units[u].name, unit) == 0;
		if (!taken)
			return s;
	}
	if (w->n_staged == w->cap_staged) {
		size_t cap = w->cap_staged ? 2 * w->cap_staged : 8;
		s = realloc(w->staged, cap * sizeof *s);
		if (s == NULL)
			return NULL;
		w->staged = s;
		w->cap_staged = cap;
	}
	s = &w->staged[w->n_staged];
	memset(s, 0, sizeof *s);
	s->name = strdup(name);
	if (s->name == NULL)
		return NULL;
	w->n_staged++;
	return s;
}

int mpxkit_pcz_writer_stage_unit(mpxkit_pcz_writer *w, const char *region,
				 const mpxkit_pcz_unit *unit, mpxkit_diag *diag)
{
	mpxkit_pcz_unit copy;
	struct name_key key;
	struct staged *s;
	int rc;

	if (w == NULL || region == NULL || unit == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	rc = check_region(w, region, 1, unit, &key, 0, diag);
	if (rc < 0)
		return rc;
	rc = copy_unit(&copy, unit, w->n_events);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&w->lock);
	s = staged_slot(w, region, unit->name);
	if (s && s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		mpxkit_pcz_unit *u = realloc(s->units, cap * sizeof *u);
		if (u == NULL)
			s = NULL;
		else
			s->units = u, s->cap = cap;
	}
	if (s)
		s->units[s->n++] = copy;
	pthread_mutex_unlock(&w->lock);
	if (s == NULL) {
		free((char *)copy.name);
		free((uint64_t *)copy.times);
		free((uint64_t *)copy.values);
		return -MPXKIT_ENOMEM;
	}
	return 0;
}

int mpxkit_pcz_writer_flush(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	struct staged *list;
	size_t n;
	int rc = 0;

	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	pthread_mutex_lock(&w->lock);
	list = w->staged;
	n = w->n_staged;
	w->staged = NULL;
	w->n_staged = w->cap_staged = 0;
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = mpxkit_pcz_writer_add_region(w, list[i].name, list[i].n, list[i].units,
							  diag);
		for (size_t u = 0; u < list[i].n; u++) {
			free((char *)list[i].units[u].name);
			free((uint64_t *)list[i].units[u].times);
			free((uint64_t *)list[i].units[u].values);
		}
		free(list[i].units);
		free(list[i].name);
	}
	free(list);
	return rc;
}

static int write_end(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	pcz_buf b = { 0 };
	int rc;

	if (w->model) {
		pcz_buf_varint(&b, w->n_regions);
		pcz_buf_varint(&b, w->n_units);
		pcz_buf_varint(&b, w->n_sections);
	} else {
		pcz_buf_u64(&b, w->n_regions);
		pcz_buf_u64(&b, w->n_units);
		pcz_buf_u32(&b, w->n_sections);
	}
	pcz_buf_u32(&b, w->content_crc);
	rc = b.oom ? -MPXKIT_ENOMEM : write_section(w, PCZ_END, b.data, b.len, diag);
	b.len = 0;
	pcz_buf_u32(&b, PCZ_END_MARK);
	if (rc == 0)
		rc = b.oom ? -MPXKIT_ENOMEM : file_write(w, b.data, b.len, diag);
	pcz_buf_free(&b);
	return rc;
}

/* Everything up to the end mark, into whichever sink w has. */
static int finish(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	int rc = mpxkit_pcz_writer_flush(w, diag);

	if (rc == 0 && w->failed)
		rc = mpxkit_fail(diag, MPXKIT_ESTATE, "an earlier write failed: %s",
				 mpxkit_diag_message(&w->fail_diag, w->failed));
	if (rc == 0 && !w->started)
		rc = write_start(w, diag);
	if (rc == 0)
		rc = flush_chunk(w, diag);
	if (rc == 0)
		rc = write_end(w, diag);
	return rc;
}

int mpxkit_pcz_writer_close_memory(mpxkit_pcz_writer *w, void **data, size_t *len,
				   mpxkit_diag *diag)
{
	int rc;

	if (w == NULL || data == NULL || len == NULL) {
		mpxkit_pcz_writer_abort(w);
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	}
	*data = NULL;
	*len = 0;
	rc = w->to_mem ? finish(w, diag)
		       : mpxkit_fail(diag, MPXKIT_ESTATE, "pcz writer: not a memory writer");
	if (rc == 0) {
		*data = w->mem.data;
		*len = w->mem.len;
		w->mem = (pcz_buf){ 0 };
	}
	writer_free(w);
	return rc;
}

int mpxkit_pcz_writer_close(mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	int rc;

	if (w == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "pcz writer: NULL argument");
	rc = w->to_mem ? mpxkit_fail(diag, MPXKIT_ESTATE,
				     "pcz writer: a memory writer ends with close_memory")
		       : finish(w, diag);
	if (rc == 0) {
		rc = mpxkit_outfile_commit(w->out, diag);
		w->out = NULL;
	}
	writer_free(w);
	return rc;
}

void mpxkit_pcz_writer_abort(mpxkit_pcz_writer *w)
{
	if (w)
		writer_free(w);
}

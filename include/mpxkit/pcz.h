/* SPDX-License-Identifier: BSD-3-Clause */
/* .pcz dumps: per-unit counter blocks, delta-coded against group references (doc/pcz-format.md). */
#ifndef MPXKIT_PCZ_H
#define MPXKIT_PCZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every function follows include/mpxkit/error.h: 0 (or a count) on success, a
 * negative mpxkit code on failure, and a one-line diag naming the file and
 * the byte offset (reader) or "FILE:LINE" (CSV) when one is given.
 */

/*
 * How REGIONS sections are coded.  MODEL (the default) writes format version
 * 2: a model of the counters (predictors per column, static entropy tables
 * per section), no level, no groups.  The byte-stream
 * codecs write version 1: varints under zlib, zstd or nothing.
 */
typedef enum mpxkit_pcz_codec {
	MPXKIT_PCZ_STORED = 0,
	MPXKIT_PCZ_ZLIB = 1,
	MPXKIT_PCZ_ZSTD = 2,
	MPXKIT_PCZ_MODEL = 3,
} mpxkit_pcz_codec;

/* How the units of a region are split into groups to difference (doc/pcz-format.md). */
typedef enum mpxkit_pcz_grouping {
	MPXKIT_PCZ_GROUP_AUTO = 0,    /* balance, then clusters when unbalanced */
	MPXKIT_PCZ_GROUP_BALANCE = 1, /* one group if balanced, else all raw */
	MPXKIT_PCZ_GROUP_CLUSTER = 2, /* clusters of similar task duration */
	MPXKIT_PCZ_GROUP_NONE = 3,    /* every unit raw */
} mpxkit_pcz_grouping;

#define MPXKIT_PCZ_THRESHOLD_DEFAULT 900000u /* balance degree 0.90, in ppm */
#define MPXKIT_PCZ_ZSTD_LEVEL_DEFAULT 1      /* zstd level for level 0 (zlib's is 6) */
#define MPXKIT_PCZ_CHUNK_DEFAULT (1u << 20)  /* input bytes per REGIONS section, 8 a value */
#define MPXKIT_PCZ_MAX_SECTION (1u << 24)    /* raw bytes a decoder accepts per section */
#define MPXKIT_PCZ_MAX_FILE ((uint64_t)1 << 32) /* bytes mpxkit_pcz_reader_open reads, at most */

typedef struct mpxkit_pcz_options {
	mpxkit_pcz_codec codec;      /* default MODEL (format version 2) */
	int level;                   /* codec level; 0 = the default: zstd 1, zlib 6; MODEL: 0 */
	uint32_t threshold_ppm;      /* balance threshold in parts per million */
	mpxkit_pcz_grouping grouping;
	size_t chunk_size;           /* 0 = MPXKIT_PCZ_CHUNK_DEFAULT; at most MAX_SECTION / 4 */
	int placement;               /* 1: store each unit's cpu and numa */
	/*
	 * 1: the events are (NAME, NAME.lo, NAME.hi) triples, an estimate and
	 * its interval, checked in every step (doc/pcz-format.md, "Intervals");
	 * version 2 only.  mpxkit_pcz_interval_encode fills a triple.
	 */
	int intervals;
} mpxkit_pcz_options;

/*
 * Fills the defaults: the MODEL codec (format version 2), threshold 0.90
 * and NONE grouping (used by the version-1 codecs), 1 MiB chunks, no
 * placement.
 */
void mpxkit_pcz_options_init(mpxkit_pcz_options *opt);

/*
 * One unit's block in one region.  n_steps == 1 is a vector of counters (one
 * value per event); n_steps > 1 a time series, values step-major:
 * values[step * n_events + event].  times holds n_steps (start, end) pairs.
 * cpu and numa are -1 when unknown.
 */
typedef struct mpxkit_pcz_unit {
	const char *name;
	size_t n_steps;
	const uint64_t *times;
	const uint64_t *values;
	int cpu;
	int numa;
} mpxkit_pcz_unit;

/* The bounds of a not-counted triple (value 0): an empty interval, lo > hi. */
#define MPXKIT_PCZ_NOT_COUNTED_LO UINT64_MAX
#define MPXKIT_PCZ_NOT_COUNTED_HI 0

/*
 * One (value, lo, hi) triple of an INTERVALS dump from an estimate, as the
 * caller rounds it (PAPI's llround), and its interval: lo down and hi up,
 * widened to hold the value, so the stored interval holds the real one;
 * hi INFINITY or past 2^64 is 2^64-1.  A negative or NaN lo is 0, a NaN hi
 * unbounded.  not_counted nonzero gives the not-counted triple.
 */
void mpxkit_pcz_interval_encode(uint64_t value, double lo, double hi, int not_counted,
				uint64_t triple[3]);
/* 1 when triple is the not-counted one. */
int mpxkit_pcz_interval_not_counted(const uint64_t triple[3]);

/* ---- Writer --------------------------------------------------------------- */

typedef struct mpxkit_pcz_writer mpxkit_pcz_writer;

/*
 * Starts a dump at path (written as a temporary file, renamed at close).
 * opt NULL means the defaults.  The event names are copied.
 */
int mpxkit_pcz_writer_open(const char *path, const mpxkit_pcz_options *opt, size_t n_events,
			   const char *const *events, mpxkit_pcz_writer **out, mpxkit_diag *diag);

/*
 * The same writer, coded by the same code, into a growing memory buffer
 * instead of a file; end it with mpxkit_pcz_writer_close_memory (or abort).
 */
int mpxkit_pcz_writer_open_memory(const mpxkit_pcz_options *opt, size_t n_events,
				  const char *const *events, mpxkit_pcz_writer **out,
				  mpxkit_diag *diag);

/* Appends a "# key=value" pair; only before the first region (else -MPXKIT_ESTATE). */
int mpxkit_pcz_writer_set_meta(mpxkit_pcz_writer *w, const char *key, const char *value,
			       mpxkit_diag *diag);

/*
 * Stores a hwloc XML topology; xml NULL exports the topology of this machine.
 * Only before the first region.
 */
int mpxkit_pcz_writer_set_topology(mpxkit_pcz_writer *w, const char *xml, size_t len,
				   mpxkit_diag *diag);

/*
 * Adds one region with all its units.  Thread-safe: any number of threads may
 * call it at once; regions are stored in the order the calls complete.  The
 * caller keeps ownership of units (copied or coded before return).
 */
int mpxkit_pcz_writer_add_region(mpxkit_pcz_writer *w, const char *region, size_t n_units,
				 const mpxkit_pcz_unit *units, mpxkit_diag *diag);

/*
 * Stages one unit of a region for later: thread-safe, meant for threads that
 * each own one unit (a PAPI component at PAPI_stop).  The unit joins the
 * oldest staged region of that name that does not hold a unit of its name
 * yet, or opens a new one.  Staged regions are written, in the order they were
 * opened, by mpxkit_pcz_writer_flush() or mpxkit_pcz_writer_close().
 */
int mpxkit_pcz_writer_stage_unit(mpxkit_pcz_writer *w, const char *region,
				 const mpxkit_pcz_unit *unit, mpxkit_diag *diag);

/* Writes the staged regions.  Thread-safe. */
int mpxkit_pcz_writer_flush(mpxkit_pcz_writer *w, mpxkit_diag *diag);

/*
 * Flushes, writes the END section, syncs and renames to the final name; frees
 * w in every case.  Call it from one thread, after every adder returned.  A
 * memory writer fails here with ESTATE (use close_memory).
 */
int mpxkit_pcz_writer_close(mpxkit_pcz_writer *w, mpxkit_diag *diag);

/*
 * Ends a memory writer: *data (malloc'ed, the caller frees it) and *len get
 * the whole .pcz, byte for byte what the file writer writes.  Frees w in
 * every case; on failure *data is NULL.  A file writer fails with ESTATE.
 */
int mpxkit_pcz_writer_close_memory(mpxkit_pcz_writer *w, void **data, size_t *len,
				   mpxkit_diag *diag);

/* Drops the dump: removes the temporary file and frees w.  free(NULL) semantics. */
void mpxkit_pcz_writer_abort(mpxkit_pcz_writer *w);

/* ---- Reader --------------------------------------------------------------- */

typedef struct mpxkit_pcz_reader mpxkit_pcz_reader;

/* One decoded region; valid until the next call to mpxkit_pcz_reader_next. */
typedef struct mpxkit_pcz_region {
	const char *name;
	size_t n_units;
	const mpxkit_pcz_unit *units;
	uint32_t balance_ppm;
	size_t n_groups;
	const size_t *group_of;  /* per unit: its group, or SIZE_MAX when stored raw */
	const size_t *group_ref; /* per group: the unit index of its reference block */
} mpxkit_pcz_region;

/* Sizes of the file's parts, for `mpxkit info`. */
typedef struct mpxkit_pcz_stats {
	uint64_t file_size;
	uint64_t header_size;
	uint64_t meta_stored, meta_raw;
	uint64_t topology_stored, topology_raw;
	uint64_t events_stored, events_raw;
	uint64_t regions_stored, regions_raw;
	uint64_t n_region_sections;
	/* Bytes each kind of section takes in the file: frames, payloads and checksums. */
	uint64_t meta_file, topology_file, events_file, regions_file;
	uint64_t end_size; /* END frame plus end mark */
	uint64_t end_raw;  /* END payload */
	uint32_t codecs;   /* bit c set when a section (END aside) uses codec c (MPXKIT_PCZ_*) */
	unsigned version;  /* format version of the file: 1 or 2 */
	uint64_t n_regions, n_units;
	uint64_t n_values;  /* counter values, n_steps * n_events summed over units */
	uint64_t n_steps;   /* steps (rows), each with a start and an end timestamp */
	uint64_t n_groups;  /* summed over regions; filled as regions are read */
	uint64_t n_grouped; /* units in a group; filled as regions are read */
	uint64_t n_raw;     /* units stored raw; filled as regions are read */
} mpxkit_pcz_stats;

/*
 * Opens a dump and checks its whole frame before returning: header, every
 * section's lengths and checksums, the content checksum and the end mark.
 * Damage fails with ETRUNC, ECHECKSUM, EVERSION or EFORMAT and a diag
 * "PATH: offset N: reason".  Region payloads are decoded, and checked, lazily
 * by mpxkit_pcz_reader_next.
 */
int mpxkit_pcz_reader_open(const char *path, mpxkit_pcz_reader **out, mpxkit_diag *diag);

/* The same over a buffer the caller keeps alive; name is used in diags. */
int mpxkit_pcz_reader_open_mem(const void *buf, size_t len, const char *name,
			       mpxkit_pcz_reader **out, mpxkit_diag *diag);

/*
 * A second reader over r's bytes, at the first region: a dump read from a
 * pipe ("-") can be decoded twice (checked whole, then written) although its
 * bytes arrive once.  It borrows r's bytes: free it before r.
 */
int mpxkit_pcz_reader_reopen(const mpxkit_pcz_reader *r, mpxkit_pcz_reader **out,
			     mpxkit_diag *diag);

size_t mpxkit_pcz_reader_n_events(const mpxkit_pcz_reader *r);
const char *mpxkit_pcz_reader_event(const mpxkit_pcz_reader *r, size_t i);
size_t mpxkit_pcz_reader_n_meta(const mpxkit_pcz_reader *r);
/* Key and value of pair i (file order); 0 or -MPXKIT_ERANGE. */
int mpxkit_pcz_reader_meta(const mpxkit_pcz_reader *r, size_t i, const char **key,
			   const char **value);
/* 1 when units carry cpu and numa. */
int mpxkit_pcz_reader_placement(const mpxkit_pcz_reader *r);
/* 1 when the events are (NAME, NAME.lo, NAME.hi) triples (the INTERVALS flag). */
int mpxkit_pcz_reader_intervals(const mpxkit_pcz_reader *r);
/* The stored hwloc XML (not NUL-terminated: use len), or NULL with *len 0. */
const char *mpxkit_pcz_reader_topology(const mpxkit_pcz_reader *r, size_t *len);
/* Section sizes; the group counts cover the regions read so far. */
void mpxkit_pcz_reader_stats(const mpxkit_pcz_reader *r, mpxkit_pcz_stats *out);

/*
 * Version 2 only: from the next region on, count the bits each column takes,
 * for mpxkit_pcz_reader_coded_bits (decoding takes a little longer while it
 * does).  Call it before the first region for whole counts.
 */
void mpxkit_pcz_reader_count_bits(mpxkit_pcz_reader *r);

/*
 * Version 2 only: the bits of the REGIONS sections read so far that went to
 * column col (0 the starts, 1 the durations, 2 + e event e): what its numbers
 * cost under their sections' tables, raw bits included; or, for col
 * SIZE_MAX, the rest of those sections' payloads (structure fields, names,
 * tables, the ends of the coded streams), so that all add up to the payloads.
 * 0; -MPXKIT_ERANGE for a version-1 file or a column out of range;
 * -MPXKIT_ESTATE when mpxkit_pcz_reader_count_bits was not called.
 */
int mpxkit_pcz_reader_coded_bits(const mpxkit_pcz_reader *r, size_t col, uint64_t *bits);

/* Decodes the next region: 1 and *out set, 0 at the end, or a negative code. */
int mpxkit_pcz_reader_next(mpxkit_pcz_reader *r, const mpxkit_pcz_region **out,
			   mpxkit_diag *diag);

/* free(NULL) semantics. */
void mpxkit_pcz_reader_free(mpxkit_pcz_reader *r);

/* ---- CSV ------------------------------------------------------------------ */

/*
 * Packs a CSV (doc/pcz-format.md, "CSV"): "# key=value" lines, the header
 * region,unit,start_ns,end_ns[,cpu,numa],EV1,... and one row per unit per
 * region (consecutive rows of one unit form a time series).  Bad input fails
 * with EFORMAT or ERANGE and "FILE:LINE: reason".  in_path "-" reads stdin.
 * topology_xml, if not NULL, is stored as the TOPOLOGY section ("" exports
 * this machine's).
 */
int mpxkit_pcz_pack_csv(const char *in_path, const char *out_path, const mpxkit_pcz_options *opt,
			const char *topology_xml, mpxkit_diag *diag);

/*
 * Writes every remaining region of r as CSV to out (which stays open).
 * Canonical CSV packed and unpacked comes back byte for byte.
 */
int mpxkit_pcz_write_csv(mpxkit_pcz_reader *r, FILE *out, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

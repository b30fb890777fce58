/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit's SIMT model: what its files share and nothing else may include. */
#ifndef MPXKIT_SIMT_IMPL_H
#define MPXKIT_SIMT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/simt.h"

/* An entry of the built-in opcode table (lib/simt/isa.c): units by name, resolved per GPU. */
typedef struct simt_builtin_op {
	const char *name;
	const char *unit;
	uint8_t cls, kind, space;
} simt_builtin_op;

/* The built-in table, sorted by name, and the unit names it uses. */
extern const simt_builtin_op mpxkit__simt_builtin_ops[];
extern const size_t mpxkit__simt_n_builtin_ops;
extern const char *const mpxkit__simt_builtin_units[];
extern const size_t mpxkit__simt_n_builtin_units;

/* Index of a unit by name, or -1. */
int mpxkit__simt_gpu_unit(const mpxkit_simt_gpu *gpu, const char *name);

/*
 * Replaces the op table with the built-in one (units resolved by name);
 * -MPXKIT_EFORMAT with a line naming the first missing unit.
 */
int mpxkit__simt_gpu_use_builtin(mpxkit_simt_gpu *gpu, const char *who, mpxkit_diag *diag);

/* Adds or replaces one op, keeping the table sorted; 0 or -MPXKIT_ENOMEM. */
int mpxkit__simt_gpu_set_op(mpxkit_simt_gpu *gpu, const mpxkit_simt_op *op);

/* Checks the whole description's ranges and cross-field rules; who names it in the message. */
int mpxkit__simt_gpu_check(const mpxkit_simt_gpu *gpu, const char *who, mpxkit_diag *diag);

/*
 * Set bits of a lane mask.  The bit trick, not __builtin_popcount, which
 * without -mpopcnt is a libgcc call on the model's hottest path.
 */
static inline uint32_t mpxkit__simt_popcount(uint32_t x)
{
	x = x - ((x >> 1) & 0x55555555u);
	x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
	return (((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/* The set bits of each byte value (lib/simt/isa.c). */
extern const uint8_t mpxkit__simt_bits8[256];

/*
 * Set bits of a sector or 32-byte-unit mask: almost always below 256 (a
 * line of at most eight sectors), then one table load.
 */
static inline uint32_t mpxkit__simt_popcount_small(uint32_t x)
{
	return x < 256 ? mpxkit__simt_bits8[x] : mpxkit__simt_popcount(x);
}

/*
 * printf into a per-thread buffer, for composing one diag line (then copied
 * by mpxkit_fail): the reader's and the model's "FILE:LINE: reason" lines.
 */
const char *mpxkit__simt_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The base opcode's length: up to the first '.'. */
size_t mpxkit__simt_base_len(const char *opcode);

/* ---- caches (lib/simt/cache.c) -------------------------------------------------------------- */

/*
 * A set-associative, LRU, sectored cache of line addresses (byte address >>
 * log2(line)).  Each sector remembers when its fill completes, so an access
 * that finds a fill under way waits for it (doc/simt.md, "Fill times").  The
 * cache only answers hit or miss and keeps state; the model composes latencies.
 *
 * Laid out for the host's caches, since a lookup is the model's most frequent
 * step and the simulated caches are larger than the host's: a set's row
 * holds what a lookup scans, 16-bit hashes of its tags and 16-bit recency
 * stamps, in one or two host cache lines; a way's record holds its full tag,
 * sector masks and fill times, in one.  Ways become valid in index order (the
 * victim is the first invalid way, and only a flush invalidates), so a set's
 * valid ways are the prefix [0, used) and a flush resets one count per set.
 * Stamps count accesses per set, renumbered in order before the count
 * reaches 2^15, so the least recently used way is the one with the smallest
 * stamp; rows are padded to eight lanes so both scans can go eight at a time.
 * A set also knows which of its ways are dirty: the victim, the least
 * recently used way, is the record least likely in the host's caches, and a
 * clean one is only written, never read.
 */
typedef struct simt_way {
	uint64_t tag;	       /* line address */
	uint32_t valid, dirty; /* sector masks */
	uint64_t ready[];      /* spl fill completion times */
} simt_way;

typedef struct simt_set {
	uint64_t dirty; /* with at most 64 ways, the valid ways that hold dirty sectors */
	uint16_t used;	/* valid ways: indices 0 .. used - 1 */
	uint16_t clock; /* the stamp of the set's last access */
	uint16_t mru;	/* the way of that access (its stamp is the clock) */
} simt_set;

typedef struct simt_cache {
	uint32_t sets, ways, spl; /* sectors per line */
	uint32_t set_mask;	  /* sets - 1 when sets is a power of two, else 0 */
	int write_back;
	uint32_t lanes;	    /* ways rounded up to 8: the length of a row's two arrays */
	size_t row_len;	    /* uint16_t per set row: hash[lanes], then stamp[lanes] */
	size_t rec_size;    /* bytes per way record */
	simt_set *set;	    /* sets */
	uint16_t *row;	    /* sets rows */
	unsigned char *rec; /* sets * ways records */
} simt_cache;

/* The outcome of a lookup: which sectors hit, and the latest fill among the hits. */
typedef struct simt_access {
	uint32_t hit, miss;	/* sector masks */
	uint64_t ready;		/* latest fill completion among the hit sectors */
	uint32_t evicted_dirty; /* the dirty sectors an eviction writes back, */
	uint64_t evicted_line;	/* of this line (set only when there are some) */
	int64_t slot;		/* the line's way index, or -1 when not allocated */
} simt_access;

int mpxkit__simt_cache_init(simt_cache *c, const mpxkit_simt_cache_desc *d);
void mpxkit__simt_cache_free(simt_cache *c);
void mpxkit__simt_cache_flush(simt_cache *c);

/*
 * Reads sectors of a line: hits are valid sectors; with allocate, a missing
 * line takes the LRU way (a.evicted_dirty: the victim's dirty sectors) and the
 * missed sectors become valid with fill time `fill` (set it later with
 * mpxkit__simt_cache_fill when it is not yet known).
 */
void mpxkit__simt_cache_read(simt_cache *c, uint64_t line, uint32_t sectors, int allocate,
			     simt_access *a);
void mpxkit__simt_cache_fill(simt_cache *c, int64_t slot, uint32_t sectors, uint64_t ready);

/*
 * mpxkit__simt_cache_read of sectors that all hit in the way its set used
 * last, where a loop's next access most often goes (an instruction cache
 * line): 1 and their latest fill in *ready, else 0 and nothing done.  Using
 * the most recent way again leaves the LRU order as it is, so no state
 * changes.
 */
int mpxkit__simt_cache_read_mru(const simt_cache *c, uint64_t line, uint32_t sectors,
				uint64_t *ready);

/*
 * The lookups of one warp access overlap their host cache misses in three
 * passes: mpxkit__simt_cache_prefetch asks the host for each line's set row;
 * mpxkit__simt_cache_locate then scans the row for the line's way (or the
 * victim) and asks for that way's record, without reading it; the _at
 * accesses finally take the place located, confirming it (its full tag; the
 * set unused since) or looking again.  The answers are those of the plain
 * calls.
 */
typedef struct simt_place {
	size_t s;	/* set */
	uint32_t i;	/* the way whose tag hash matches (candidate), else the victim */
	int candidate;	/* 1: a hash matched at way i */
	uint16_t clock; /* the set's clock when located */
} simt_place;

void mpxkit__simt_cache_prefetch(const simt_cache *c, uint64_t line);
void mpxkit__simt_cache_locate(const simt_cache *c, uint64_t line, simt_place *p);
void mpxkit__simt_cache_read_at(simt_cache *c, uint64_t line, const simt_place *p, uint32_t sectors,
				int allocate, simt_access *a);
void mpxkit__simt_cache_write_at(simt_cache *c, uint64_t line, const simt_place *p,
				 uint32_t sectors, uint64_t now, simt_access *a);

/*
 * Writes sectors: write-back allocates the line and marks them valid and
 * dirty (fill time `now`); write-through updates a present line only.  a.hit
 * are the sectors that were valid before.
 */
void mpxkit__simt_cache_write(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t now,
			      simt_access *a);

/* Marks sectors valid and clean, as a copy engine's fill does (memcpy into L2). */
void mpxkit__simt_cache_install(simt_cache *c, uint64_t line, uint32_t sectors, uint64_t ready,
				simt_access *a);

/* ---- the memory system (lib/simt/memory.c) -------------------------------------------------- */

/* How an opcode's loads use L1: the GPU's default, or a cache modifier that decides. */
enum { SIMT_L1_DEFAULT, SIMT_L1_CACHE, SIMT_L1_BYPASS };

/* An opcode of the trace resolved against the GPU description, once per opcode id. */
typedef struct simt_opinfo {
	uint8_t resolved, unit, cls, kind, space, l1, barrier, control, fence;
	uint32_t latency, initiation;
} simt_opinfo;

/* Counters the memory system keeps for one kernel (doc/simt.md, "Outputs"). */
typedef struct simt_memcounters {
	uint64_t gld_tx, gst_tx, lld_tx, lst_tx, sld_tx, sst_tx;
	uint64_t l2_read, l2_write, dram_read, dram_write;
	uint64_t l1_hits, l1_misses, l2_hits, l2_misses, gld_l1_hits, gld_l1_sectors;
	uint64_t icache_misses;
} simt_memcounters;

typedef struct simt_memsys {
	const mpxkit_simt_gpu *gpu;
	simt_cache l2;
	simt_cache *l1;	    /* per SM; l1[sm].row is NULL until the SM is used in a kernel */
	simt_cache *icache; /* per SM, when the GPU has an instruction cache */
	simt_memcounters c;
	uint64_t shmem_base, local_base, code_base;
	uint32_t line_shift;	     /* log2 of the line size, the same in L1 and L2 */
	uint32_t l1_units, l2_units; /* 32-byte units per sector */
	uint8_t tag_waves[65];	     /* L1 tag passes of n lines: ceil(n / tags per cycle) */
	/* scratch for shared-memory bank conflicts */
	uint64_t word_key[512];
	uint32_t word_gen[512], gen;
	uint16_t bank_count[64];
} simt_memsys;

/* The outcome of one warp memory instruction. */
typedef struct simt_memresult {
	uint64_t latency;    /* cycles from issue until the data (loads) or the ack (stores) */
	uint32_t wavefronts; /* L1 or shared-memory passes the access takes */
	uint32_t shared;     /* 1 when the wavefronts are shared memory's */
	uint32_t transactions;
} simt_memresult;

int mpxkit__simt_mem_init(simt_memsys *m, const mpxkit_simt_gpu *gpu);
void mpxkit__simt_mem_free(simt_memsys *m);

/* A kernel starts: L1s flushed (allocated for SMs first used), counters zeroed, windows set. */
int mpxkit__simt_mem_kernel(simt_memsys *m, const mpxkit_simt_kernel *k, uint32_t kernel_index);

/* Makes sure SM sm has its L1 (and instruction cache); 0 or -MPXKIT_ENOMEM. */
int mpxkit__simt_mem_sm(simt_memsys *m, uint32_t sm);

void mpxkit__simt_mem_access(simt_memsys *m, uint32_t sm, const simt_opinfo *op,
			     const mpxkit_simt_inst *in, uint64_t now, simt_memresult *r);

/* The time the instruction line holding pc is in SM sm's instruction cache, fetched at now. */
uint64_t mpxkit__simt_mem_fetch(simt_memsys *m, uint32_t sm, uint64_t pc, uint64_t now);

/* A host-to-device copy into L2 at time now. */
void mpxkit__simt_mem_copy(simt_memsys *m, uint64_t addr, uint64_t size, uint64_t now);

#endif

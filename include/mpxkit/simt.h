/* SPDX-License-Identifier: BSD-3-Clause */
/* SIMT: an analytic GPU timing model on Accel-Sim SASS traces (doc/simt.md). */
#ifndef MPXKIT_SIMT_H
#define MPXKIT_SIMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Three parts, each usable alone:
 * - the GPU description (a small text format, or imported from Accel-Sim's
 *   gpgpusim.config + trace.config);
 * - a streamed reader of Accel-Sim/NVBit traces (kernelslist.g and
 *   kernel-N.traceg, plain or gzip), which never holds a kernel in memory;
 * - the model, which walks one kernel's trace once and returns its cycles,
 *   counts and breakdown.
 * Every function follows include/mpxkit/error.h: 0 or a negative code, and a
 * one-line diag naming the file and line of bad input.
 */

#define MPXKIT_SIMT_WARP_SIZE 32
#define MPXKIT_SIMT_MAX_UNITS 32
#define MPXKIT_SIMT_MAX_REGS  8 /* destination or source registers of one instruction */

/* ---- GPU description ------------------------------------------------------------------------ */

/* The profiler classes an instruction counts in (nvprof's inst_* counters). */
typedef enum mpxkit_simt_class {
	MPXKIT_SIMT_FP_16,
	MPXKIT_SIMT_FP_32,
	MPXKIT_SIMT_FP_64,
	MPXKIT_SIMT_INTEGER,
	MPXKIT_SIMT_BIT_CONVERT,
	MPXKIT_SIMT_CONTROL,
	MPXKIT_SIMT_COMPUTE_LD_ST,
	MPXKIT_SIMT_MISC,
	MPXKIT_SIMT_INTER_THREAD_COMMUNICATION,
	MPXKIT_SIMT_N_CLASSES
} mpxkit_simt_class;

/* What an opcode does beyond its unit: memory with addresses in the trace, or a barrier. */
typedef enum mpxkit_simt_kind {
	MPXKIT_SIMT_KIND_NONE,
	MPXKIT_SIMT_KIND_LOAD,
	MPXKIT_SIMT_KIND_STORE,
	MPXKIT_SIMT_KIND_ATOMIC,
	MPXKIT_SIMT_KIND_BARRIER,
} mpxkit_simt_kind;

typedef enum mpxkit_simt_space {
	MPXKIT_SIMT_GLOBAL,
	MPXKIT_SIMT_SHARED,
	MPXKIT_SIMT_LOCAL,
	MPXKIT_SIMT_GENERIC,
} mpxkit_simt_space;

typedef struct mpxkit_simt_unit {
	char name[16];
	uint32_t latency;    /* dependent-issue latency, cycles */
	uint32_t initiation; /* cycles one scheduler's unit is busy per warp instruction */
} mpxkit_simt_unit;

typedef struct mpxkit_simt_op {
	char name[24]; /* base opcode: "LDG" for LDG.E.CG */
	uint8_t unit;  /* index into units */
	uint8_t cls;   /* mpxkit_simt_class */
	uint8_t kind;  /* mpxkit_simt_kind */
	uint8_t space; /* mpxkit_simt_space, for memory kinds */
} mpxkit_simt_op;

typedef enum mpxkit_simt_write {
	MPXKIT_SIMT_WRITE_THROUGH,
	MPXKIT_SIMT_WRITE_BACK
} mpxkit_simt_write;

typedef struct mpxkit_simt_cache_desc {
	uint32_t sets, ways, line,
	    sector; /* line and sector in bytes; sets 0 = no cache (icache none) */
	uint32_t latency;
	uint8_t write; /* mpxkit_simt_write */
} mpxkit_simt_cache_desc;

/*
 * A GPU (doc/simt.md, "The GPU description format").  The fields are public
 * for reading; build one only through the parser or the importer, which
 * validate every field.
 */
typedef struct mpxkit_simt_gpu {
	char name[64];
	uint32_t sms;
	double clock_mhz;
	uint32_t warp_size;
	uint32_t schedulers;
	uint32_t max_warps, max_blocks, max_threads_per_block;
	uint32_t registers, register_unit;
	uint32_t shared_per_sm, shared_per_block, shared_unit;
	uint32_t launch_cycles;
	mpxkit_simt_cache_desc l1, l2, icache;
	uint32_t icache_prefetch;  /* lines fetched ahead of an instruction-cache miss */
	int l1_global_cached;	   /* plain LDG cached in L1 */
	uint32_t l1_request_bytes; /* bytes of consecutive lanes per L1 request */
	uint32_t l1_tags_per_cycle;
	double l2_bytes_per_cycle;
	uint32_t shared_banks, shared_width, shared_latency;
	uint32_t dram_latency;
	double dram_bytes_per_cycle;
	size_t n_units;
	mpxkit_simt_unit units[MPXKIT_SIMT_MAX_UNITS];
	size_t n_ops;
	mpxkit_simt_op *ops; /* sorted by name */
	int ops_builtin;     /* the table started from the built-in one */
} mpxkit_simt_gpu;

/* Parses a description held in memory; name is what diagnostics call it. */
int mpxkit_simt_gpu_parse(const char *name, const char *text, size_t len, mpxkit_simt_gpu **out,
			  mpxkit_diag *diag);

/* Reads a description file (bounded: 1 MiB, text, gzip allowed). */
int mpxkit_simt_gpu_read(const char *path, mpxkit_simt_gpu **out, mpxkit_diag *diag);

/*
 * A shipped description by name ("gtx1080": $MPXKIT_DATADIR/gpus/gtx1080.gpu,
 * else the installed data directory), or a file when the argument holds a
 * '/' or ends in ".gpu".
 */
int mpxkit_simt_gpu_load(const char *name_or_path, mpxkit_simt_gpu **out, mpxkit_diag *diag);

/* The shipped description for a trace's "binary version" (61, 70, 86, ...), or NULL. */
const char *mpxkit_simt_gpu_default_for(unsigned binary_version);

/*
 * Imports Accel-Sim's configuration: dir holds gpgpusim.config and
 * trace.config (or gpgpusim.trace.config).  doc/simt.md gives the mapping.
 */
int mpxkit_simt_gpu_import_accelsim(const char *dir, mpxkit_simt_gpu **out, mpxkit_diag *diag);

/* Parses the two files' texts (names for diagnostics); what the importer and its fuzz target use.
 */
int mpxkit_simt_gpu_import_accelsim_text(const char *config_name, const char *config,
					 size_t config_len, const char *trace_name,
					 const char *trace_config, size_t trace_len,
					 mpxkit_simt_gpu **out, mpxkit_diag *diag);

/* Writes the canonical text form (doc/simt.md).  0, or -MPXKIT_EIO on a write error. */
int mpxkit_simt_gpu_write(const mpxkit_simt_gpu *gpu, FILE *out);

/* The opcode's entry (base opcode: the part before the first '.'), or NULL. */
const mpxkit_simt_op *mpxkit_simt_gpu_op(const mpxkit_simt_gpu *gpu, const char *opcode);

void mpxkit_simt_gpu_free(mpxkit_simt_gpu *gpu); /* NULL is a no-op */

/* "fp_32", "integer", ...; never NULL. */
const char *mpxkit_simt_class_name(int cls);

/* ---- traces --------------------------------------------------------------------------------- */

/* One line of kernelslist.g that matters: a host-to-device copy or a kernel. */
typedef struct mpxkit_simt_command {
	int is_kernel;
	uint64_t addr, size; /* MemcpyHtoD */
	char *path;	     /* kernel: the trace's path (directory joined) */
} mpxkit_simt_command;

typedef struct mpxkit_simt_commands {
	size_t n;
	mpxkit_simt_command *cmd;
} mpxkit_simt_commands;

/* Reads DIR/kernelslist.g (or the file itself when path is a file). */
int mpxkit_simt_commands_read(const char *path, mpxkit_simt_commands **out, mpxkit_diag *diag);
void mpxkit_simt_commands_free(mpxkit_simt_commands *c);

/* A kernel trace's header. */
typedef struct mpxkit_simt_kernel {
	char *name;
	uint32_t id;
	uint32_t grid[3], block[3];
	uint32_t shmem, nregs;
	uint32_t binary_version, tracer_version;
	int lineinfo;
	uint64_t stream, shmem_base, local_base;
	uint32_t threads_per_block, warps_per_block;
	uint64_t n_blocks;
} mpxkit_simt_kernel;

/* One executed warp instruction.  addr[lane] is set for the lanes of mask when n_addr > 0. */
typedef struct mpxkit_simt_inst {
	uint64_t pc;
	uint32_t mask;
	uint32_t opcode;      /* an id: mpxkit_simt_trace_opcode() gives the text */
	uint8_t n_dst, n_src; /* registers listed */
	uint8_t dst[MPXKIT_SIMT_MAX_REGS], src[MPXKIT_SIMT_MAX_REGS];
	uint8_t mem_width; /* bytes per lane; 0: not a memory instruction */
	int8_t addr_mode;  /* 0, 1, 2, or -1 when mem_width is 0 */
	int has_imm;
	int32_t imm;
	uint32_t source_line; /* lineinfo, or 0 */
	uint64_t addr[MPXKIT_SIMT_WARP_SIZE];
} mpxkit_simt_inst;

typedef enum mpxkit_simt_event {
	MPXKIT_SIMT_END,       /* the end of the trace */
	MPXKIT_SIMT_BLOCK,     /* a block begins: block[] */
	MPXKIT_SIMT_WARP,      /* a warp of the block begins: warp, insts */
	MPXKIT_SIMT_INST,      /* an instruction of that warp: inst */
	MPXKIT_SIMT_BLOCK_END, /* the block is complete */
} mpxkit_simt_event;

typedef struct mpxkit_simt_trace mpxkit_simt_trace;

/* Opens a kernel trace and reads its header (doc/simt.md, "kernel-N.traceg"). */
int mpxkit_simt_trace_open(const char *path, mpxkit_simt_trace **out, mpxkit_diag *diag);

/* The same from a buffer in memory (uncompressed); name is used in messages. */
int mpxkit_simt_trace_open_buffer(const char *name, const char *buf, size_t len,
				  mpxkit_simt_trace **out, mpxkit_diag *diag);

const mpxkit_simt_kernel *mpxkit_simt_trace_kernel(const mpxkit_simt_trace *t);

/*
 * The next event: returns it (>= 0) or a negative code.  After BLOCK,
 * block[] holds its coordinates; after WARP, *warp and *insts; after INST,
 * *inst points to the instruction, valid until the next call.
 */
typedef struct mpxkit_simt_step {
	uint32_t block[3];
	uint32_t warp;
	uint64_t insts;
	const mpxkit_simt_inst *inst;
} mpxkit_simt_step;

int mpxkit_simt_trace_next(mpxkit_simt_trace *t, mpxkit_simt_step *step, mpxkit_diag *diag);

/* The text of an opcode id, or NULL; the number of distinct opcodes so far. */
const char *mpxkit_simt_trace_opcode(const mpxkit_simt_trace *t, uint32_t id);
uint32_t mpxkit_simt_trace_n_opcodes(const mpxkit_simt_trace *t);

/* The trace's name and the line number of the last line read (for messages). */
const char *mpxkit_simt_trace_name(const mpxkit_simt_trace *t);
uint64_t mpxkit_simt_trace_line(const mpxkit_simt_trace *t);

void mpxkit_simt_trace_close(mpxkit_simt_trace *t); /* NULL is a no-op */

/* ---- the model ------------------------------------------------------------------------------ */

/* What the active time is made of (doc/simt.md, "Outputs"); the parts sum to cycles. */
typedef enum mpxkit_simt_part {
	MPXKIT_SIMT_PART_ALU,
	MPXKIT_SIMT_PART_MEMORY,
	MPXKIT_SIMT_PART_NOP,
	MPXKIT_SIMT_PART_STALL_MEMORY,
	MPXKIT_SIMT_PART_STALL_ALU,
	MPXKIT_SIMT_PART_STALL_FETCH,
	MPXKIT_SIMT_PART_STALL_SYNC,
	MPXKIT_SIMT_PART_STALL_PIPE,
	MPXKIT_SIMT_PART_LAUNCH,
	MPXKIT_SIMT_N_PARTS
} mpxkit_simt_part;

/* "alu", "memory", "nop", "stall_memory", ...; never NULL. */
const char *mpxkit_simt_part_name(int part);

/* Which bound set an SM's (and the kernel's) time. */
typedef enum mpxkit_simt_bound {
	MPXKIT_SIMT_BOUND_LATENCY,
	MPXKIT_SIMT_BOUND_ISSUE,
	MPXKIT_SIMT_BOUND_UNIT,
	MPXKIT_SIMT_BOUND_L1,
	MPXKIT_SIMT_BOUND_SHARED,
	MPXKIT_SIMT_BOUND_L2,
	MPXKIT_SIMT_BOUND_DRAM,
	MPXKIT_SIMT_N_BOUNDS
} mpxkit_simt_bound;

const char *mpxkit_simt_bound_name(int bound);

/* Per instruction address (--per-pc). */
typedef struct mpxkit_simt_pc_stats {
	uint64_t pc;
	uint32_t opcode; /* the trace's opcode id of its first execution */
	uint64_t warp_insts, thread_insts;
	uint64_t nop_lane_slots; /* masked lanes at this instruction */
	uint64_t diverged_slots; /* masked lane slots charged to this PC as a branch */
	uint64_t stall_cycles;	 /* cycles warps waited before issuing it */
	uint64_t transactions;	 /* sectors or shared wavefronts */
} mpxkit_simt_pc_stats;

typedef struct mpxkit_simt_result {
	char *kernel; /* the kernel's name */
	uint32_t id;
	uint32_t grid[3], block[3];
	uint32_t occupancy; /* resident blocks per SM */
	uint32_t sms_active;
	double cycles, active_cycles;
	int bound; /* mpxkit_simt_bound of the kernel */
	double parts[MPXKIT_SIMT_N_PARTS];
	double ipc, thread_ipc, sm_ipc;
	uint64_t warp_insts, thread_insts;
	uint64_t warp_class[MPXKIT_SIMT_N_CLASSES], thread_class[MPXKIT_SIMT_N_CLASSES];
	uint64_t nop_lane_slots, all_masked_insts;
	/* counters named after nvprof's metrics */
	uint64_t inst_global_loads, inst_global_stores, inst_local_loads, inst_local_stores;
	uint64_t inst_shared_loads, inst_shared_stores, inst_global_atomics, inst_shared_atomics;
	uint64_t gld_transactions, gst_transactions, local_load_transactions,
	    local_store_transactions;
	uint64_t shared_load_transactions, shared_store_transactions;
	uint64_t l2_read_transactions, l2_write_transactions; /* the SMs' sector traffic to L2 */
	uint64_t dram_read_transactions, dram_write_transactions;
	uint64_t l1_hits, l1_misses; /* sectors of L1-cached accesses */
	uint64_t l2_hits, l2_misses; /* sectors of data accesses at L2 */
	uint64_t gld_l1_hits,
	    gld_l1_sectors; /* global loads' L1 sector hits, of all their sectors */
	uint64_t icache_misses;
	size_t n_pcs;
	mpxkit_simt_pc_stats *pcs;     /* sorted by pc; branches: the entries with diverged_slots */
	uint64_t entry_diverged_slots; /* masked slots before any control instruction */
} mpxkit_simt_result;

void mpxkit_simt_result_free(mpxkit_simt_result *r); /* NULL is a no-op */

/* A counter of a result under its profiler name. */
typedef struct mpxkit_simt_counter {
	const char *name;
	double value;
} mpxkit_simt_counter;

/* Fills up to max counters in a fixed order; returns how many there are. */
size_t mpxkit_simt_counters(const mpxkit_simt_result *r, mpxkit_simt_counter *out, size_t max);

/*
 * A simulated GPU: its L2 lives across kernels, so a sequence of kernels and
 * copies runs on one sim, as on one device.
 */
typedef struct mpxkit_simt_sim mpxkit_simt_sim;

int mpxkit_simt_sim_new(const mpxkit_simt_gpu *gpu, mpxkit_simt_sim **out, mpxkit_diag *diag);

/* A host-to-device copy: its bytes are written into L2 (doc/simt.md, "Memory copies"). */
int mpxkit_simt_sim_memcpy(mpxkit_simt_sim *sim, uint64_t addr, uint64_t size, mpxkit_diag *diag);

/* Runs one kernel trace to its end; *out is the caller's to free. */
int mpxkit_simt_sim_kernel(mpxkit_simt_sim *sim, mpxkit_simt_trace *trace, mpxkit_simt_result **out,
			   mpxkit_diag *diag);

void mpxkit_simt_sim_free(mpxkit_simt_sim *sim); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif

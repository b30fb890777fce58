/* SPDX-License-Identifier: BSD-3-Clause */
/* Ground-truth traces recorded under valgrind's callgrind (doc/recording.md). */
#ifndef MPXKIT_RECORD_H
#define MPXKIT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/error.h"
#include "mpxkit/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One simulated cache, in valgrind's terms: --I1=SIZE,ASSOC,LINE. */
typedef struct mpxkit_cache_geometry {
	uint64_t size;	/* bytes */
	unsigned assoc; /* ways */
	unsigned line;	/* bytes */
} mpxkit_cache_geometry;

/*
 * Defaults, justified in doc/recording.md: 32 KiB 8-way L1s with 64-byte lines
 * (Intel Skylake-SP/Cascade Lake, AMD Zen 2/3 data side) and a 2 MiB 16-way
 * last level, about one core's share of a shared L3 on an HPC socket.
 */
#define MPXKIT_RECORD_I1                                                                           \
	{                                                                                          \
		32768, 8, 64                                                                       \
	}
#define MPXKIT_RECORD_D1                                                                           \
	{                                                                                          \
		32768, 8, 64                                                                       \
	}
#define MPXKIT_RECORD_LL                                                                           \
	{                                                                                          \
		2097152, 16, 64                                                                    \
	}
#define MPXKIT_RECORD_INTERVAL_BB 1000000

typedef struct mpxkit_record_options {
	uint64_t interval_bb; /* basic blocks per step (--dump-every-bb) */
	mpxkit_cache_geometry i1, d1, ll;
	const char *valgrind; /* valgrind to run; NULL: "valgrind" on PATH */
	const char *tmpdir;   /* where the private dump directory goes; NULL: $TMPDIR or /tmp */
	char *const *envp;    /* the program's whole environment ("K=V", NULL-ended);
				 NULL: inherit this process's */
	int instr;	      /* nonzero: per-instruction dumps with jumps, one per thread
				 (--dump-instr=yes --collect-jumps=yes --separate-threads=yes):
				 mpxkit profile's; use mpxkit_record_run_dumps */
} mpxkit_record_options;

/* What became of the recorded program. */
typedef struct mpxkit_record_status {
	int exit_code; /* its exit status, or -1 when a signal ended it */
	int signal;    /* the signal that ended it, or 0 */
} mpxkit_record_status;

/* Fills o with the defaults above. */
void mpxkit_record_options_init(mpxkit_record_options *o);

/*
 * Parses "SIZE,ASSOC,LINE" (bytes, ways, bytes) and checks that valgrind can
 * simulate it: a line of at least 16 bytes and a power of two, and a power of
 * two number of sets.  name ("I1", "D1", "LL") only labels the diag.
 */
int mpxkit_cache_geometry_parse(const char *text, const char *name, mpxkit_cache_geometry *out,
				mpxkit_diag *diag);

/* The check of mpxkit_cache_geometry_parse, on a geometry built in code. */
int mpxkit_cache_geometry_check(const mpxkit_cache_geometry *g, const char *name,
				mpxkit_diag *diag);

/*
 * One callgrind output file ("dump"), reduced to what a trace needs: the
 * events and the file's totals: line, the sum of all its cost lines.
 */
typedef struct mpxkit_callgrind_dump {
	unsigned part; /* "part:" number, 1-based; 0 when the file has none */
	char *creator; /* "creator:" value, e.g. "callgrind-3.19.0"; NULL when absent */
	size_t n_events;
	char **events;	   /* the "events:" line */
	uint64_t *totals;  /* n_events counts; events missing at the end of the line are 0 */
	uint64_t bb_begin; /* "desc: Timerange: Basic block A - B", or 0 - 0 when absent */
	uint64_t bb_end;
} mpxkit_callgrind_dump;

/*
 * Reads one dump.  A file without an events: line, without a totals: line (as
 * a truncated file is, since callgrind writes totals: last), with text after
 * totals:, with a last line that lacks its newline, or with a count that is
 * not a decimal number fails with -MPXKIT_EFORMAT ("FILE:LINE: reason"); a
 * count beyond 2^64-1 with -MPXKIT_ERANGE.
 */
int mpxkit_callgrind_read(const char *path, mpxkit_callgrind_dump **out, mpxkit_diag *diag);

/* The same from memory; name is what diagnostics call the input. */
int mpxkit_callgrind_parse(const char *name, const char *buf, size_t len,
			   mpxkit_callgrind_dump **out, mpxkit_diag *diag);

void mpxkit_callgrind_dump_free(mpxkit_callgrind_dump *d);

/* ---- per-instruction dumps (--dump-instr=yes --collect-jumps=yes), what mpxkit profile reads ---- */

/* A function: callgrind names functions per object. */
typedef struct mpxkit_callgrind_function {
	char *name;
	uint32_t object; /* index into objects */
} mpxkit_callgrind_function;

/* One cost line: the self cost of one instruction (several lines may name the same one). */
typedef struct mpxkit_callgrind_cost {
	uint32_t function; /* index into functions */
	uint32_t file;	   /* index into files: the line's source file (inlined code: fi=) */
	uint32_t line;	   /* 0 when unknown */
	uint64_t address;  /* relative to the object, as callgrind writes it */
} mpxkit_callgrind_cost;

/* One jump=/jcnd= line: a jump taken `count` times in the dump. */
typedef struct mpxkit_callgrind_jump {
	uint32_t function;    /* of the jump instruction */
	uint32_t to_function; /* of the target (jfn=), else the same */
	uint64_t from, to;    /* addresses in the function's object */
	uint64_t count;	      /* times taken */
	uint64_t executed;    /* times the instruction ran (jcnd=), or count (jump=) */
	int conditional;
} mpxkit_callgrind_jump;

typedef struct mpxkit_callgrind_instr {
	mpxkit_callgrind_dump head; /* part, creator, events, totals, basic-block range */
	unsigned thread;	    /* the "thread:" number, 0 when absent */
	size_t n_objects, n_files, n_functions;
	char **objects, **files;
	mpxkit_callgrind_function *functions;
	size_t n_costs;
	mpxkit_callgrind_cost *costs;
	uint64_t *counts; /* n_costs x head.n_events, row-major; missing trailing counts are 0 */
	size_t n_jumps;
	mpxkit_callgrind_jump *jumps;
} mpxkit_callgrind_instr;

/*
 * Reads one dump written with --dump-instr=yes (positions: instr line, or
 * instr): every cost line with its object, function, file and line resolved
 * through callgrind's name compression and relative positions, and every
 * jump.  Checks what the totals reader checks, and also that the cost lines
 * sum to the totals: line exactly, that every name id is defined before use,
 * and that positions stay within 64 bits.  _read reads through the bounded
 * reader (at most 1 GiB per dump).
 */
int mpxkit_callgrind_instr_parse(const char *name, const char *buf, size_t len,
				 mpxkit_callgrind_instr **out, mpxkit_diag *diag);
int mpxkit_callgrind_instr_read(const char *path, mpxkit_callgrind_instr **out, mpxkit_diag *diag);
void mpxkit_callgrind_instr_free(mpxkit_callgrind_instr *d); /* NULL is a no-op */

/*
 * Turns the dumps of one run into a trace, one step per dump.  base is the
 * --callgrind-out-file name: callgrind writes the periodic dumps to base.1,
 * base.2, ... and the final one (the program's end) to base itself, whose
 * part: number says how many dumps there are.  Every dump must carry its part
 * number and the same events.  The trace's columns are the events in
 * callgrind's order; the metadata gets tool, valgrind (the version),
 * total_bb (basic blocks of the whole run) and last_step_bb (how many of them
 * the final, partial step covers).
 */
int mpxkit_callgrind_collect(const char *base, mpxkit_trace **out, mpxkit_diag *diag);

/*
 * Runs argv (argv[0] is looked up on PATH unless it holds a '/') under
 * callgrind with the cache and branch simulators and a dump every
 * o->interval_bb basic blocks, in a private temporary directory that is
 * removed afterwards, and returns its trace with metadata (command,
 * interval_bb, cache_I1/D1/LL, exit_status, and env when o->envp is set).
 * The environment is part of the experiment: its size moves the stack, so
 * the same program under another environment can miss the cache differently.
 * The program inherits
 * stdin, stdout and stderr; valgrind's own messages go to a log in the
 * temporary directory, whose last line is quoted when valgrind fails.
 * Child processes the program starts are not traced.  The program starts
 * with default signal dispositions and an empty signal mask, whatever the
 * caller's, since inherited ones change some programs' start-up.  Like
 * system(3), the call ignores ^C and ^\ while the program (which gets them
 * from the terminal) runs; SIGINT, SIGTERM and SIGHUP sent to the caller by
 * kill(2) are passed on to valgrind (a second one as SIGKILL), so the
 * program stops, the call returns as it does after a ^C and the temporary
 * directory is removed.  Valgrind is killed if the caller dies (SIGKILL).
 *
 * A program that exits nonzero or dies from a signal still yields its trace:
 * status says how it ended and the caller decides.  Failures: ENOENT (program
 * or valgrind not found), EPERM (not executable), EINVAL (bad options),
 * ESYS (fork, temporary directory), EFORMAT (valgrind wrote no usable dumps).
 */
int mpxkit_record_run(const mpxkit_record_options *o, char *const argv[], mpxkit_trace **out,
		      mpxkit_record_status *status, mpxkit_diag *diag);

/*
 * The runner under mpxkit_record_run, for callers that read the dumps
 * themselves: runs argv as mpxkit_record_run does, then calls
 * consume(arg, base, status, diag) with base the --callgrind-out-file name
 * in the private directory (dumps base.K and base, or with o->instr
 * base.K-TT and base-TT per thread TT), before the directory is removed.
 * consume's negative result is returned as it is.
 */
int mpxkit_record_run_dumps(const mpxkit_record_options *o, char *const argv[],
			    int (*consume)(void *arg, const char *base,
					   const mpxkit_record_status *status, mpxkit_diag *diag),
			    void *arg, mpxkit_record_status *status, mpxkit_diag *diag);

/*
 * argv as one line, each word single-quoted when a shell would split or
 * expand it (the "command" metadata of traces and profiles); malloc'd, NULL
 * when out of memory.
 */
char *mpxkit_record_command_line(char *const argv[]);

/* ---- OCOE ground truth on perf_event (lib/record/perf.c; doc/recording.md, "--perf") ---- */

#define MPXKIT_RECORD_PERF_INTERVAL_MS	   10
#define MPXKIT_RECORD_PERF_MIN_INTERVAL_NS 100000u /* 100 us */

typedef struct mpxkit_record_perf_options {
	/*
	 * C: events per run; 0: all at once where no event needs a PMU
	 * counter, else mpxkit_sched_default_counters().
	 */
	size_t counters;
	uint64_t interval_ns; /* how often the counts are read, >= 100 us */
	int kernel;	      /* nonzero: count kernel mode too, refused where not allowed; 0: the
				 default domain, kernel too where allowed (mpxkit_source_target) */
} mpxkit_record_perf_options;

/*
 * Ground truth on perf_event (doc/recording.md, "--perf"), counted all the
 * time on argv, its threads and children included, read every
 * o->interval_ns, one column per event in the order given (canonical
 * names), in one of two modes:
 *
 * - All at once (C = 0 and no event needs a PMU counter: the kernel's
 *   software events, tracepoints): argv runs once with every event, each
 *   sample one read(2) of the perf group.  The interval in which the
 *   program ends is the last step, read after the program was reaped, so the
 *   columns sum to its totals.
 * - One counter one event (OCOE), the paper's: the events are cut into runs
 *   of C in the order given, and argv runs once per run (ceil(n/C) runs).
 *   Step i of the trace is interval i of every run, side by side.  Runs are
 *   aligned by interval index and differ in length: the trace keeps the
 *   steps every run has (the shortest run's), and each run's interval in
 *   which the program ended is dropped, so every step is a whole interval.
 *
 * Metadata: tool=perf_event, mode (all-at-once or ocoe-runs), command,
 * interval_ns, counters, runs, run_events (each run's events, runs split by
 * ';'), run_steps (each run's steps), reads_per_step (the most system calls
 * a sample took), read_late_ns (the most a read ended after its deadline:
 * a loaded machine makes that step longer than an interval), last_step_ns (all at once: the last step's wall time),
 * kernel, exit_status (the first run that failed, else 0).
 *
 * Every event is checked before the first run, and each must have counted
 * all its enabled time (running = enabled) or the recording fails.  A run
 * that exits nonzero or dies from a signal does not stop the recording:
 * status says how the first such run ended and the caller decides.  Fails
 * with -MPXKIT_ENOENT for an unknown event or program, -MPXKIT_ENOSUPP for a
 * hardware event without a PMU, -MPXKIT_EINVAL for an event named twice or
 * bad options, and -MPXKIT_ERANGE when an OCOE run ends within its first
 * interval or an event was not counted all the time.
 */
int mpxkit_record_perf(const mpxkit_record_perf_options *o, const char *const *events,
		       size_t n_events, char *const argv[], mpxkit_trace **out,
		       mpxkit_record_status *status, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

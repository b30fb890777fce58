/* SPDX-License-Identifier: BSD-3-Clause */
/* What every mpxkit subcommand shares: the command table and one way to report errors. */
#ifndef MPXKIT_CLI_H
#define MPXKIT_CLI_H

#include <stdio.h>

#include "mpxkit/error.h"

/* Exit codes of every subcommand, as documented in mpxkit(1). */
enum { CLI_OK = 0, CLI_USAGE = 1, CLI_FAIL = 2 };

typedef struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
} cli_command;

/* Every subcommand, in the order `mpxkit help` lists them. */
extern const cli_command cli_commands[];

/* "mpxkit CMD: MESSAGE" on stderr; returns CLI_FAIL. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "mpxkit CMD: MESSAGE" on stderr for what is no failure (a list that matched nothing). */
void cli_note(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * How a program that CMD ran (record, profile) ended, for its exit status:
 * nothing when it exited 0; else one line, "PROGRAM was killed by signal N;
 * NOUN kept (--keep-failed)" or "PROGRAM exited with status N; no NOUN
 * written (--keep-failed keeps it)", as kept says.  Returns the status CMD
 * ends with once its output is written: CLI_OK for an exit 0, and for a
 * nonzero exit whose output was kept; CLI_FAIL for one that was not kept,
 * and for a program killed by a signal even with its output kept (^C, a
 * timeout's SIGTERM stop the run from outside: a script or a shell loop
 * must stop there too).
 */
int cli_program_ended(const char *cmd, const char *program, int exit_code, int signal, int kept,
		      const char *noun);

/* "mpxkit CMD: MESSAGE (try 'mpxkit CMD --help')" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The one usage line for what getopt_long returned as an error: ':' (an
 * option without its argument) or anything else (an unknown option), for
 * option strings that start with ':' (after any '+') and opterr = 0.  Names
 * the option as given ("--counters", "-c").  Returns CLI_USAGE.
 */
int cli_option_error(const char *cmd, int c, char *const argv[]);

/*
 * For commands that read the engine's MPXKIT_* settings: one warning line
 * about a misspelt MPXKIT_ variable in the environment
 * (mpxkit_sched_config_unknown_env), which would be ignored otherwise.
 */
void cli_warn_unknown_env(const char *cmd);

/* Reports a library failure with its diag line; returns CLI_FAIL. */
int cli_lib_error(const char *cmd, int code, const mpxkit_diag *diag);

/*
 * Checks, before any long work starts, that each of the n output paths can
 * be written as mpxkit_outfile will write it (mpxkit_outfile_check): the
 * directory of a file exists and takes a new one, a device or FIFO is
 * writable, and none is the same file as one of the n_inputs inputs (every
 * file the command reads: its arguments, and files its options name), which
 * it would replace.  NULL entries (outputs not asked for) are skipped.
 * CLI_OK, or CLI_FAIL after one line about the first that cannot be written.
 */
int cli_check_outputs(const char *cmd, const char *const *paths, size_t n,
		      const char *const *inputs, size_t n_inputs);

/*
 * 1 when the program a command runs (argv[0] of CMD) is named by a path
 * (holds a '/'), so it is an input an output must not replace; 0 when it is
 * looked up in PATH.  For the n_inputs of cli_check_outputs.
 */
size_t cli_program_is_path(const char *program);

/*
 * An option's whole number in [min, max]: CLI_OK with *out set, or CLI_USAGE
 * after the line "OPTION TEXT: not a whole number in [MIN, MAX]", the form
 * of the engine's settings (mpxkit_sched_config_set), so every limit is said.
 */
int cli_option_long(const char *cmd, const char *option, const char *text, long min, long max,
		    long *out);

struct mpxkit_cache_geometry;

/* A simulated cache's "SIZE,ASSOC,LINE" of option --NAME (record, profile); a usage error
 * otherwise. */
int cli_parse_cache_geometry(const char *cmd, const char *text, const char *name,
			     struct mpxkit_cache_geometry *g);

/* "s" unless n is 1: every count printed agrees with its noun ("1 thread", "2 threads"). */
static inline const char *cli_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

/* Parses a whole decimal number in [min, max]; 0 on success, -1 otherwise. */
int cli_parse_long(const char *text, long min, long max, long *out);

/* Flushes stdout so a full disk or closed pipe is an error, not silent loss; CLI_OK or CLI_FAIL. */
int cli_close_stdout(const char *cmd);

/*
 * Hands each trace a command names to add(arg, path): a file as it is, a
 * directory as its *.csv and *.csv.gz files (not dot files) in name order, so
 * the order never depends on the disk.  A directory with none is an error.
 * Returns 0, the first nonzero add() result, or CLI_FAIL (reported).
 */
int cli_for_each_trace(const char *cmd, const char *path, int (*add)(void *arg, const char *path),
		       void *arg);

/*
 * cli_for_each_trace over each of the n command-line arguments in order.
 * "-" is standard input (the trace reader's), which can be read once: given
 * twice, it is one usage line (CLI_USAGE) before anything is read.
 */
int cli_for_each_trace_arg(const char *cmd, int n, char *const args[],
			   int (*add)(void *arg, const char *path), void *arg);

#endif

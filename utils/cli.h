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

/* "mpxkit CMD: MESSAGE (try 'mpxkit CMD --help')" on stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports a library failure with its diag line; returns CLI_FAIL. */
int cli_lib_error(const char *cmd, int code, const mpxkit_diag *diag);

struct mpxkit_cache_geometry;

/* A simulated cache's "SIZE,ASSOC,LINE" of option --NAME (record, profile); a usage error
 * otherwise. */
int cli_parse_cache_geometry(const char *cmd, const char *text, const char *name,
			     struct mpxkit_cache_geometry *g);

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

#endif

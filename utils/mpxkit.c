/* SPDX-License-Identifier: BSD-3-Clause */
/* The mpxkit front end: one binary, subcommands in the manner of perf and git. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "config.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

const cli_command cli_commands[] = {
	{ "eval", "simulate multiplexing on ground-truth traces and score estimators", cmd_eval },
	{ "train", "train the mlp estimator's model on ground-truth traces", cmd_train },
	{ "record", "record a ground-truth trace (callgrind, or perf_event with --perf)", cmd_record },
	{ "pack", "compress per-unit counter CSV into a .pcz dump", cmd_pack },
	{ "unpack", "decode a .pcz dump back into CSV", cmd_unpack },
	{ "info", "show the regions, units, groups and sections of a .pcz dump", cmd_info },
	{ "verify", "check every length and checksum of a .pcz dump", cmd_verify },
	{ "merge", "merge the .pcz dumps of an MPI job's ranks into one", cmd_merge },
	{ "report", "a job's counts per event over ranks and threads, and its imbalance", cmd_report },
	{ "stat", "run a command with its events multiplexed and estimated, like perf stat", cmd_stat },
	{ "list", "list every event that exists here, by kind (doc/events.md)", cmd_list },
	{ "predict", "predict time, power and energy on other core kinds and frequencies",
	  cmd_predict },
	{ "simt", "estimate a GPU kernel's cycles from its SASS trace (analytic SIMT model)", cmd_simt },
	{ "profile", "record a program's code spaces over time (callgrind or perf sampling)",
	  cmd_profile },
	{ "analyze", "rank a profile's defects by code space and time, with directions", cmd_analyze },
	{ "help", "list the subcommands, or show one's usage", cmd_help },
	{ "version", "print the version", cmd_version },
	{ NULL, NULL, NULL },
};

static void list_commands(FILE *out)
{
	fprintf(out, "usage: mpxkit [--help] [--version] COMMAND [ARGS]\n\n"
		     "Multiplexed hardware-counter estimation for HPC.\n\n"
		     "Commands:\n");
	for (const cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-9s %s\n", c->name, c->summary);
	fprintf(out, "\nRun 'mpxkit COMMAND --help' for one command's options; "
		     "see mpxkit(1).\n");
}

static const cli_command *find_command(const char *name)
{
	for (const cli_command *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	char help[] = "--help";
	char *sub_argv[3];
	const cli_command *c;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		list_commands(stdout);
		return cli_close_stdout(NULL);
	}
	if (argv[1][0] == '-')
		return cli_usage_error("help", "unknown option '%s'", argv[1]);
	if (argc > 2)
		return cli_usage_error("help", "takes one command name, not %d", argc - 1);
	c = find_command(argv[1]);
	if (c == NULL)
		return cli_usage_error(NULL, "'%s' is not an mpxkit command", argv[1]);
	if (c->run == cmd_help) {
		list_commands(stdout);
		return cli_close_stdout(NULL);
	}
	sub_argv[0] = argv[1];
	sub_argv[1] = help;
	sub_argv[2] = NULL;
	return c->run(2, sub_argv);
}

static int cmd_version(int argc, char **argv)
{
	static const struct option options[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (c != 'h')
			return cli_option_error("version", c, argv);
		printf("usage: mpxkit version\n\nPrint mpxkit's version.\n");
		return cli_close_stdout("version");
	}
	if (optind < argc)
		return cli_usage_error("version", "takes no arguments, not '%s'", argv[optind]);
	printf("mpxkit %s\n", PACKAGE_VERSION);
	return cli_close_stdout(NULL);
}

int main(int argc, char **argv)
{
	const cli_command *c;

	if (argc < 2)
		return list_commands(stderr), CLI_USAGE;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_help(1, argv);
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(1, argv);
	c = find_command(argv[1]);
	if (c == NULL)
		return cli_usage_error(NULL, "'%s' is not an mpxkit command", argv[1]);
	return c->run(argc - 1, argv + 1);
}

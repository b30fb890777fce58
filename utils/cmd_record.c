/* SPDX-License-Identifier: BSD-3-Clause */
/* Placeholder until the record subcommand lands; it fails loudly rather than pretending. */
#include "cli.h"
#include "commands.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	return cli_error(argv[0], "not implemented yet");
}

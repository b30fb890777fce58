/* SPDX-License-Identifier: BSD-3-Clause */
/* Placeholder until the pack subcommand lands; it fails loudly rather than pretending. */
#include "cli.h"
#include "commands.h"

int cmd_pack(int argc, char **argv)
{
	(void)argc;
	return cli_error(argv[0], "not implemented yet");
}

int cmd_unpack(int argc, char **argv)
{
	(void)argc;
	return cli_error(argv[0], "not implemented yet");
}

int cmd_info(int argc, char **argv)
{
	(void)argc;
	return cli_error(argv[0], "not implemented yet");
}

int cmd_verify(int argc, char **argv)
{
	(void)argc;
	return cli_error(argv[0], "not implemented yet");
}

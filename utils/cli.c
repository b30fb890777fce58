/* SPDX-License-Identifier: BSD-3-Clause */
/* Error reporting and option parsing shared by the subcommands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

__attribute__((format(printf, 2, 0)))
static void vreport(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "mpxkit%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	vfprintf(stderr, fmt, ap);
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'mpxkit %s%s--help')\n", cmd ? cmd : "", cmd ? " " : "");
	return CLI_USAGE;
}

int cli_lib_error(const char *cmd, int code, const mpxkit_diag *diag)
{
	return cli_error(cmd, "%s", mpxkit_diag_message(diag, code));
}

int cli_parse_long(const char *text, long min, long max, long *out)
{
	char *end;
	long v;

	if (text == NULL || *text == '\0')
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_close_stdout(const char *cmd)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_error(cmd, "cannot write to standard output: %s", strerror(errno));
	return CLI_OK;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Error reporting and option parsing shared by the subcommands. */
#include <dirent.h>
#include <getopt.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpxkit/outfile.h"

#include "cli.h"
#include "mpxkit/record.h"
#include "mpxkit/sched.h"

/* Every error line of every command: what it echoes from the user is bounded (mpxkit_vformat_line).
 */
__attribute__((format(printf, 2, 0))) static void vreport(const char *cmd, const char *fmt,
							  va_list ap)
{
	char line[2048];

	fprintf(stderr, "mpxkit%s%s: %s", cmd ? " " : "", cmd ? cmd : "",
		mpxkit_vformat_line(line, sizeof line, fmt, ap));
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

void cli_note(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_program_ended(const char *cmd, const char *program, int exit_code, int signal, int kept,
		      const char *noun)
{
	if (signal == 0 && exit_code == 0)
		return CLI_OK;
	if (signal != 0)
		cli_error(cmd, "%s was killed by signal %d; %s%s %s", program, signal,
			  kept ? "" : "no ", noun, kept ? "kept (--keep-failed)" : "written (--keep-failed keeps it)");
	else
		cli_error(cmd, "%s exited with status %d; %s%s %s", program, exit_code,
			  kept ? "" : "no ", noun, kept ? "kept (--keep-failed)" : "written (--keep-failed keeps it)");
	return kept && signal == 0 ? CLI_OK : CLI_FAIL;
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

void cli_warn_unknown_env(const char *cmd)
{
	mpxkit_diag diag = {0};

	if (mpxkit_sched_config_unknown_env(NULL, &diag) == 1)
		cli_error(cmd, "warning: %s", diag.msg);
}

/*
 * A library line that starts with the command's own name ("predict eval:
 * ..." under "mpxkit predict eval:") says it once: the library names its
 * concern, which is the command's name when the command is that concern.
 */
int cli_lib_error(const char *cmd, int code, const mpxkit_diag *diag)
{
	const char *msg = mpxkit_diag_message(diag, code);
	size_t n = cmd ? strlen(cmd) : 0;

	if (n && strncmp(msg, cmd, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	return cli_error(cmd, "%s", msg);
}

int cli_option_error(const char *cmd, int c, char *const argv[])
{
	const char *given = optind > 0 ? argv[optind - 1] : "";
	char name[64];

	/* A long option as typed (without =VALUE); a short one by its letter, even inside -xyz. */
	if (strncmp(given, "--", 2) == 0)
		snprintf(name, sizeof name, "%.*s", (int)strcspn(given, "="), given);
	else if (optopt > 0 && optopt < 128)
		snprintf(name, sizeof name, "-%c", optopt);
	else
		snprintf(name, sizeof name, "%s", given);
	if (c == ':')
		return cli_usage_error(cmd, "option '%s' needs an argument", name);
	return cli_usage_error(cmd, "unknown option '%s'", name);
}

int cli_check_outputs(const char *cmd, const char *const *paths, size_t n,
		      const char *const *inputs, size_t n_inputs)
{
	for (size_t i = 0; i < n; i++) {
		mpxkit_diag diag = {0};
		int rc = paths[i] ? mpxkit_outfile_check(paths[i], inputs, n_inputs, &diag) : 0;
		if (rc < 0)
			return cli_lib_error(cmd, rc, &diag);
	}
	return CLI_OK;
}

size_t cli_program_is_path(const char *program)
{
	return program && strchr(program, '/') != NULL;
}

int cli_option_long(const char *cmd, const char *option, const char *text, long min, long max,
		    long *out)
{
	if (cli_parse_long(text, min, max, out) == 0)
		return CLI_OK;
	return cli_usage_error(cmd, "%s %s: not a whole number in [%ld, %ld]", option, text, min,
			       max);
}

int cli_parse_cache_geometry(const char *cmd, const char *text, const char *name,
			     struct mpxkit_cache_geometry *g)
{
	mpxkit_diag diag = {0};

	if (mpxkit_cache_geometry_parse(text, name, g, &diag) < 0)
		return cli_usage_error(cmd, "--%s: %s", name, diag.msg);
	return CLI_OK;
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

static int is_trace_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	return (n > 4 && strcmp(name + n - 4, ".csv") == 0) ||
	       (n > 7 && strcmp(name + n - 7, ".csv.gz") == 0);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR's traces, sorted: *names (malloc'd, each too) and *n. */
static int list_traces(const char *cmd, const char *dir, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
	struct dirent *de;

	*names = NULL;
	*n = 0;
	if (d == NULL)
		return cli_error(cmd, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!is_trace_name(de->d_name))
			continue;
		char **grown = realloc(*names, (*n + 1) * sizeof(*grown));
		if (grown)
			*names = grown;
		char *name = grown ? malloc(strlen(dir) + strlen(de->d_name) + 2) : NULL;
		if (name == NULL) {
			closedir(d);
			return cli_error(cmd, "out of memory");
		}
		sprintf(name, "%s%s%s", dir, sep, de->d_name);
		(*names)[(*n)++] = name;
	}
	closedir(d);
	if (*n == 0)
		return cli_error(cmd, "%s: no *.csv or *.csv.gz trace in this directory", dir);
	qsort(*names, *n, sizeof(**names), compare_names);
	return 0;
}

int cli_for_each_trace_arg(const char *cmd, int n, char *const args[],
			   int (*add)(void *arg, const char *path), void *arg)
{
	int rc = 0, stdin_seen = 0;

	for (int i = 0; i < n; i++)
		if (strcmp(args[i], "-") == 0 && stdin_seen++)
			return cli_usage_error(cmd, "'-' (standard input) given twice");
	for (int i = 0; i < n && rc == 0; i++)
		rc = cli_for_each_trace(cmd, args[i], add, arg);
	return rc;
}

int cli_for_each_trace(const char *cmd, const char *path, int (*add)(void *arg, const char *path),
		       void *arg)
{
	struct stat st;
	char **names;
	size_t n;
	int rc;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return add(arg, path);
	rc = list_traces(cmd, path, &names, &n);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add(arg, names[i]);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

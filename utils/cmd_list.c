/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit list: the events this machine's counter source can count. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "mpxkit/source.h"
#include "mpxkit/trace.h"

#include "cli.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit list [--replay TRACE]\n"
		"\n"
		"List the events 'mpxkit stat -e' and the PAPI component (as mpxkit:::EVENT)\n"
		"can count here: the perf_event events this kernel opens, or the columns of a\n"
		"trace to replay.  One line each: name, unit, description.\n"
		"\n"
		"Options:\n"
		"      --replay TRACE   list the events of a recorded trace instead\n"
		"  -h, --help           show this help and exit\n"
		"\n"
		"Exit status: 0 success, 1 usage error, 2 failure.\n");
}

static int print_events(mpxkit_source *s)
{
	mpxkit_source_event ev;
	size_t i;

	for (i = 0; mpxkit_source_list(s, i, &ev) == 0; i++)
		printf("%-28s %-3s %s\n", ev.name, ev.unit[0] ? ev.unit : "-", ev.description);
	return (int)i;
}

int cmd_list(int argc, char **argv)
{
	static const struct option options[] = {
	    {"replay", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "list", *replay = NULL;
	mpxkit_trace *trace = NULL;
	mpxkit_source *s = NULL;
	mpxkit_diag diag = {0};
	int opt, rc;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
		switch (opt) {
		case 'R':
			replay = optarg;
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, opt, argv);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (replay) {
		rc = mpxkit_trace_read(replay, &trace, &diag);
		if (rc == 0)
			rc = mpxkit_source_open_replay(&s, trace, 1, &diag);
	} else {
		rc = mpxkit_source_open_perf(&s, NULL, &diag);
	}
	if (rc < 0) {
		mpxkit_trace_free(trace);
		return cli_lib_error(cmd, rc, &diag);
	}
	if (print_events(s) == 0 && !replay) {
		/* Opening the simplest event says why the kernel refuses them all. */
		rc = mpxkit_source_add(s, "perf::TASK-CLOCK", &diag);
		mpxkit_source_free(s);
		return cli_lib_error(cmd, rc < 0 ? rc : -MPXKIT_ENOSUPP, &diag);
	}
	mpxkit_source_free(s);
	mpxkit_trace_free(trace);
	return cli_close_stdout(cmd);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit profile: a program's code spaces over time, under callgrind or perf sampling
 * (doc/spacetime.md). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "mpxkit/outfile.h"
#include "mpxkit/spacetime.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit profile -o PROFILE [OPTIONS] -- CMD [ARGS...]\n"
	    "\n"
	    "Runs CMD and writes where it ran, window by window and thread by thread: every\n"
	    "instruction address with its events, for `mpxkit analyze`.\n"
	    "\n"
	    "Options:\n"
	    "  -o, --output FILE       profile to write (.prof); required\n"
	    "  -s, --source SRC        callgrind (exact, any machine), perf (sampling; a PMU\n"
	    "                          gives hardware events), or auto (default: perf where a\n"
	    "                          hardware event opens, else callgrind)\n"
	    "      --keep-failed       write the profile even when CMD exits nonzero (status 0)\n"
	    "                          or is killed (status 2)\n"
	    "  -h, --help              show this help\n"
	    "callgrind:\n"
	    "  -i, --interval-bb N     basic blocks per window (default %d)\n"
	    "      --I1 SIZE,ASSOC,LINE  simulated L1 instruction cache (default 32768,8,64)\n"
	    "      --D1 SIZE,ASSOC,LINE  simulated L1 data cache (default 32768,8,64)\n"
	    "      --LL SIZE,ASSOC,LINE  simulated last-level cache (default 2097152,16,64)\n"
	    "      --valgrind PATH     valgrind to run (default: valgrind on PATH)\n"
	    "perf:\n"
	    "  -F, --frequency HZ      samples per second (default %d)\n"
	    "  -w, --window-ms MS      window length (default %d)\n"
	    "  -e, --events LIST       counters read at every sample (default page-faults,\n"
	    "                          context-switches, and hardware events where a PMU exists)\n"
	    "\n"
	    "Exit status: 0 profile written, 1 usage error, 2 failure (CMD failed without\n"
	    "--keep-failed, CMD killed by a signal even with it, source unavailable, output\n"
	    "not writable).\n",
	    MPXKIT_RECORD_INTERVAL_BB, MPXKIT_PROFILE_FREQUENCY,
	    MPXKIT_PROFILE_WINDOW_NS / 1000000);
}

enum { OPT_I1 = 256, OPT_D1, OPT_LL, OPT_VALGRIND, OPT_KEEP_FAILED };

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"source", required_argument, NULL, 's'},
    {"interval-bb", required_argument, NULL, 'i'},
    {"I1", required_argument, NULL, OPT_I1},
    {"D1", required_argument, NULL, OPT_D1},
    {"LL", required_argument, NULL, OPT_LL},
    {"valgrind", required_argument, NULL, OPT_VALGRIND},
    {"frequency", required_argument, NULL, 'F'},
    {"window-ms", required_argument, NULL, 'w'},
    {"events", required_argument, NULL, 'e'},
    {"keep-failed", no_argument, NULL, OPT_KEEP_FAILED},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_source(const char *cmd, const char *text, mpxkit_profile_source_kind *out)
{
	if (strcmp(text, "callgrind") == 0)
		*out = MPXKIT_PROFILE_CALLGRIND;
	else if (strcmp(text, "perf") == 0)
		*out = MPXKIT_PROFILE_PERF;
	else if (strcmp(text, "auto") == 0)
		*out = MPXKIT_PROFILE_AUTO;
	else
		return cli_usage_error(cmd, "--source: '%s' is not callgrind, perf or auto", text);
	return CLI_OK;
}

static int split_events(const char *cmd, char *list, const char **events, size_t *n)
{
	*n = 0;
	for (char *ev = strtok(list, ","); ev; ev = strtok(NULL, ",")) {
		if (*n == MPXKIT_PROFILE_MAX_PERF_EVENTS)
			return cli_usage_error(cmd, "--events: at most %d events",
					       MPXKIT_PROFILE_MAX_PERF_EVENTS);
		events[(*n)++] = ev;
	}
	return *n ? CLI_OK : cli_usage_error(cmd, "--events: no event named");
}

/* Options into o; CLI_OK, or the exit status of a usage error (or of --help). */
static int parse_options(int argc, char **argv, mpxkit_profile_options *o, const char **output,
			 char **event_list, const char **events, int *help)
{
	const char *cmd = argv[0];
	long v;
	int c, rc;

	optind = 1;
	opterr = 0;
	/* '+': options end at CMD, so CMD's own options are never taken for ours. */
	while ((c = getopt_long(argc, argv, "+:o:s:i:F:w:e:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			*output = optarg;
			break;
		case 's':
			if ((rc = parse_source(cmd, optarg, &o->source)) != CLI_OK)
				return rc;
			break;
		case 'i':
			if (cli_parse_long(optarg, 1, 1000000000000L, &v) < 0)
				return cli_usage_error(
				    cmd, "--interval-bb: '%s' is not a number of basic blocks >= 1",
				    optarg);
			o->callgrind.interval_bb = (uint64_t)v;
			break;
		case OPT_I1:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "I1", &o->callgrind.i1)) !=
			    CLI_OK)
				return rc;
			break;
		case OPT_D1:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "D1", &o->callgrind.d1)) !=
			    CLI_OK)
				return rc;
			break;
		case OPT_LL:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "LL", &o->callgrind.ll)) !=
			    CLI_OK)
				return rc;
			break;
		case OPT_VALGRIND:
			o->callgrind.valgrind = optarg;
			break;
		case 'F':
			if (cli_parse_long(optarg, 1, 100000, &v) < 0)
				return cli_usage_error(
				    cmd, "--frequency: '%s' is not a number of Hz in [1, 100000]",
				    optarg);
			o->frequency = (uint64_t)v;
			break;
		case 'w':
			if (cli_parse_long(optarg, 1, 3600000, &v) < 0)
				return cli_usage_error(
				    cmd, "--window-ms: '%s' is not a number of ms in [1, 3600000]",
				    optarg);
			o->window_ns = (uint64_t)v * 1000000u;
			break;
		case 'e':
			free(*event_list);
			*event_list = strdup(optarg);
			if (*event_list == NULL)
				return cli_error(cmd, "out of memory");
			if ((rc = split_events(cmd, *event_list, events, &o->n_events)) != CLI_OK)
				return rc;
			o->events = events;
			break;
		case OPT_KEEP_FAILED:
			o->keep_failed = 1;
			break;
		case 'h':
			*help = 1;
			return CLI_OK;
		case ':':
			return cli_usage_error(cmd, "option '%s' needs an argument",
					       argv[optind - 1]);
		default:
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	return CLI_OK;
}

static const char *source_name(mpxkit_profile_source_kind s)
{
	return s == MPXKIT_PROFILE_PERF ? "perf" : "callgrind";
}

int cmd_profile(int argc, char **argv)
{
	const char *cmd = argv[0], *output = NULL, *events[MPXKIT_PROFILE_MAX_PERF_EVENTS];
	mpxkit_profile_options o;
	mpxkit_profile_summary sum;
	int ended;
	mpxkit_diag diag = {0};
	char *event_list = NULL;
	int rc, help = 0;

	mpxkit_profile_options_init(&o);
	rc = parse_options(argc, argv, &o, &output, &event_list, events, &help);
	if (rc == CLI_OK && help) {
		usage(stdout);
		free(event_list);
		return cli_close_stdout(cmd);
	}
	if (rc == CLI_OK && output == NULL)
		rc = cli_usage_error(cmd, "no output file (-o PROFILE)");
	if (rc == CLI_OK && strcmp(output, "-") == 0)
		rc = cli_usage_error(cmd,
				     "-o -: the program's own output shares stdout; name a file");
	if (rc == CLI_OK && optind >= argc)
		rc = cli_usage_error(cmd,
				     "no command to profile (mpxkit profile -o PROFILE -- CMD)");
	if (rc == CLI_OK && o.events && o.source == MPXKIT_PROFILE_CALLGRIND)
		rc = cli_usage_error(cmd, "--events: callgrind counts its own 13 events");
	if (rc == CLI_OK && mpxkit_outfile_check(output, (const char *const *)argv + optind,
						 cli_program_is_path(argv[optind]), &diag) < 0)
		rc = cli_lib_error(cmd, diag.code, &diag);
	if (rc != CLI_OK) {
		free(event_list);
		return rc;
	}
	rc = mpxkit_profile_run(&o, argv + optind, output, &sum, &diag);
	free(event_list);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	ended = cli_program_ended(cmd, argv[optind], sum.status.exit_code, sum.status.signal,
				  sum.written, "profile");
	if (ended != CLI_OK)
		return ended;
	if (sum.source == MPXKIT_PROFILE_PERF)
		fprintf(stderr,
			"mpxkit %s: perf (%s): %" PRIu64 " sample%s (%" PRIu64 " lost), %" PRIu64
			" window%s, %" PRIu64 " thread%s written to %s\n",
			cmd, sum.why, sum.samples, cli_s(sum.samples), sum.lost, sum.windows,
			cli_s(sum.windows), sum.threads, cli_s(sum.threads), output);
	else
		fprintf(stderr,
			"mpxkit %s: %s (%s): %" PRIu64 " window%s, %" PRIu64 " thread%s, %" PRIu64
			" row%s written to %s\n",
			cmd, source_name(sum.source), sum.why, sum.windows, cli_s(sum.windows),
			sum.threads, cli_s(sum.threads), sum.rows, cli_s(sum.rows), output);
	return CLI_OK;
}

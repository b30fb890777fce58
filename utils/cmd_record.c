/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit record: a ground-truth trace of one program run under callgrind (doc/recording.md). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "mpxkit/record.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit record -o TRACE[.gz] [OPTIONS] -- CMD [ARGS...]\n"
	    "\n"
	    "Runs CMD under valgrind's callgrind with its cache and branch simulators and\n"
	    "writes one trace row per INTERVAL basic blocks: the 13 callgrind events\n"
	    "(Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim), counted in that step.\n"
	    "\n"
	    "Options:\n"
	    "  -o, --output FILE       trace to write (.gz: gzip-compressed); required\n"
	    "  -i, --interval-bb N     basic blocks per step (default %d)\n"
	    "      --I1 SIZE,ASSOC,LINE  simulated L1 instruction cache (default 32768,8,64)\n"
	    "      --D1 SIZE,ASSOC,LINE  simulated L1 data cache (default 32768,8,64)\n"
	    "      --LL SIZE,ASSOC,LINE  simulated last-level cache (default 2097152,16,64)\n"
	    "      --valgrind PATH     valgrind to run (default: valgrind on PATH)\n"
	    "      --keep-failed       write the trace even when CMD exits nonzero or is killed\n"
	    "      --meta KEY=VALUE    add a metadata line, e.g. input=\"text.txt on stdin\"\n"
	    "      --env KEY=VALUE     set an environment variable for CMD\n"
	    "      --clean-env         run CMD with only the --env variables (recorded in the\n"
	    "                          trace), so the run does not depend on the caller's\n"
	    "                          environment\n"
	    "  -h, --help              show this help\n"
	    "      --perf              OCOE ground truth on perf_event instead (see\n"
	    "                          'mpxkit record --perf --help')\n"
	    "\n"
	    "CMD's child processes are not traced. Exit status: 0 trace written, 1 usage\n"
	    "error, 2 failure (CMD failed, valgrind missing, output not writable; CMD\n"
	    "killed by a signal, even with --keep-failed, which writes the trace).\n",
	    MPXKIT_RECORD_INTERVAL_BB);
}

enum {
	OPT_I1 = 256,
	OPT_D1,
	OPT_LL,
	OPT_VALGRIND,
	OPT_KEEP_FAILED,
	OPT_META,
	OPT_ENV,
	OPT_CLEAN_ENV
};

/* Enough for any sensible description of a recording, or environment of one. */
#define MAX_META 16
#define MAX_ENV	 64

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"interval-bb", required_argument, NULL, 'i'},
    {"I1", required_argument, NULL, OPT_I1},
    {"D1", required_argument, NULL, OPT_D1},
    {"LL", required_argument, NULL, OPT_LL},
    {"valgrind", required_argument, NULL, OPT_VALGRIND},
    {"keep-failed", no_argument, NULL, OPT_KEEP_FAILED},
    {"meta", required_argument, NULL, OPT_META},
    {"env", required_argument, NULL, OPT_ENV},
    {"clean-env", no_argument, NULL, OPT_CLEAN_ENV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};


/* The metadata keys the recorder writes itself (doc/recording.md). */
static const char *const reserved_meta[] = {"tool",	"valgrind", "total_bb",	   "last_step_bb",
					    "command",	"env",	    "interval_bb", "cache_I1",
					    "cache_D1", "cache_LL", "exit_status", NULL};

/* --meta KEY=VALUE: checked before the run, so a typo does not cost the recording. */
static int check_meta(const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (eq == NULL || eq == arg || eq[strcspn(eq, "\r\n")] != '\0')
		return cli_usage_error(cmd, "--meta: '%s' is not KEY=VALUE on one line", arg);
	for (const char *const *r = reserved_meta; *r; r++)
		if (strlen(*r) == (size_t)(eq - arg) && strncmp(arg, *r, (size_t)(eq - arg)) == 0)
			return cli_usage_error(cmd, "--meta: '%s' is set by the recorder itself",
					       *r);
	for (const char *p = arg; p < eq; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			return cli_usage_error(cmd,
					       "--meta: key '%.*s' has characters other than "
					       "[A-Za-z0-9_.-]",
					       (int)(eq - arg), arg);
	return CLI_OK;
}

/* Adds the --meta pairs after the recorder's own. */
static int add_meta(mpxkit_trace *t, char *const *meta, size_t n_meta)
{
	for (size_t i = 0; i < n_meta; i++) {
		size_t klen = strcspn(meta[i], "=");
		char *key = strndup(meta[i], klen);
		int rc = key ? mpxkit_trace_set_meta(t, key, meta[i] + klen + 1) : -MPXKIT_ENOMEM;
		free(key);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --env without --clean-env: CMD inherits this process's environment, so change it here. */
static int export_env(const char *cmd, char *const *env)
{
	for (; *env; env++) {
		size_t klen = strcspn(*env, "=");
		char *key = strndup(*env, klen);
		int rc = key ? setenv(key, *env + klen + 1, 1) : -1;
		free(key);
		if (rc != 0)
			return cli_error(cmd, "--env %s: cannot set it", *env);
	}
	return CLI_OK;
}

/* ---- --perf: OCOE ground truth on perf_event (mpxkit_record_perf) --------------------- */

#define MAX_PERF_EVENTS 256

static void perf_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit record --perf -e EV,... [OPTIONS] -- CMD [ARGS...]\n"
	    "\n"
	    "Records ground truth on perf_event, CMD's threads and children included.\n"
	    "Events that take no PMU counter (software events, tracepoints) are counted\n"
	    "all at once, in one run; otherwise one counter one event: C events per run,\n"
	    "CMD run again until every event was counted, step i of the trace being\n"
	    "interval i of every run, cut to the steps every run has.\n"
	    "\n"
	    "Options:\n"
	    "  -e, --events LIST       comma-separated events, e.g. perf::TASK-CLOCK; required\n"
	    "  -c, --counters C        events per run, 1 to 64 (default: all at once when no\n"
	    "                          event needs a PMU counter, else the PMU's generic\n"
	    "                          counters, 4 without a PMU)\n"
	    "      --interval-ms T     read the counts every T ms (default %d)\n"
	    "      --interval-us U     read the counts every U us, 100 or more\n"
	    "  -k, --kernel            require kernel mode (the default counts it where the\n"
	    "                          kernel allows; most tracepoints fire only there)\n"
	    "  -o, --output FILE       trace to write (.gz: gzip-compressed; default\n"
	    "                          mpxkit-record.csv)\n"
	    "      --keep-failed       write the trace even when CMD exits nonzero or is killed\n"
	    "  -h, --help              show this help\n",
	    MPXKIT_RECORD_PERF_INTERVAL_MS);
}

/* record_perf's answer when --perf was CMD's argument, not ours ("record -o T ls --perf"). */
#define NOT_PERF (-1)

/* --perf before "--": the perf recorder, whose options differ. */
static int wants_perf(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--perf") == 0)
			return 1;
	return 0;
}

static int split_perf_events(const char *cmd, char *list, const char **events, size_t *n)
{
	for (char *ev = strtok(list, ","); ev; ev = strtok(NULL, ",")) {
		if (*n == MAX_PERF_EVENTS)
			return cli_usage_error(cmd, "-e: at most %d events", MAX_PERF_EVENTS);
		events[(*n)++] = ev;
	}
	return *n ? CLI_OK : cli_usage_error(cmd, "-e: no event named");
}

static int record_perf(int argc, char **argv)
{
	static const struct option perf_options[] = {
	    {"perf", no_argument, NULL, 'P'},
	    {"events", required_argument, NULL, 'e'},
	    {"counters", required_argument, NULL, 'c'},
	    {"interval-ms", required_argument, NULL, 'T'},
	    {"interval-us", required_argument, NULL, 'U'},
	    {"kernel", no_argument, NULL, 'k'},
	    {"output", required_argument, NULL, 'o'},
	    {"keep-failed", no_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = argv[0], *output = "mpxkit-record.csv", *events[MAX_PERF_EVENTS];
	mpxkit_record_perf_options o = {0, MPXKIT_RECORD_PERF_INTERVAL_MS * 1000000ull, 0};
	mpxkit_record_status st = {0, 0};
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	char *list = NULL;
	size_t n = 0;
	int c, rc = CLI_OK, keep_failed = 0, seen = 0, ended;
	long v;

	optind = 1;
	opterr = 0;
	while (rc == CLI_OK &&
	       (c = getopt_long(argc, argv, "+:e:c:o:kh", perf_options, NULL)) != -1) {
		switch (c) {
		case 'P':
			seen = 1;
			break;
		case 'e':
			free(list);
			n = 0;
			list = strdup(optarg);
			rc = list ? split_perf_events(cmd, list, events, &n)
				  : cli_error(cmd, "out of memory");
			break;
		case 'c':
			if ((rc = cli_option_long(cmd, "--counters", optarg, 1, 64, &v)) == CLI_OK)
				o.counters = (size_t)v;
			break;
		case 'T':
			if ((rc = cli_option_long(cmd, "--interval-ms", optarg, 1, 3600000, &v)) ==
			    CLI_OK)
				o.interval_ns = (uint64_t)v * 1000000u;
			break;
		case 'k':
			o.kernel = 1;
			break;
		case 'U':
			if ((rc = cli_option_long(cmd, "--interval-us", optarg, 100, 3600000000L,
						  &v)) == CLI_OK)
				o.interval_ns = (uint64_t)v * 1000u;
			break;
		case 'o':
			output = optarg;
			break;
		case 'K':
			keep_failed = 1;
			break;
		case 'h':
			perf_usage(stdout);
			free(list);
			return cli_close_stdout(cmd);
		case ':':
			rc = cli_option_error(cmd, c, argv);
			break;
		default:
			rc = cli_usage_error(cmd, "unknown option '%s' with --perf",
					     argv[optind - 1]);
		}
	}
	if (rc == CLI_OK && !seen) {
		free(list);
		return NOT_PERF;
	}
	if (rc == CLI_OK && n == 0)
		rc = cli_usage_error(cmd, "--perf: no events (-e EV,...)");
	if (rc == CLI_OK && strcmp(output, "-") == 0)
		rc = cli_usage_error(cmd,
				     "-o -: the program's own output shares stdout; name a file");
	if (rc == CLI_OK && optind >= argc)
		rc = cli_usage_error(cmd,
				     "no command to record (mpxkit record --perf -e EV -- CMD)");
	if (rc == CLI_OK)
		rc = cli_check_outputs(cmd, &output, 1, (const char *const *)argv + optind,
				       cli_program_is_path(argv[optind]));
	if (rc != CLI_OK) {
		free(list);
		return rc;
	}
	rc = mpxkit_record_perf(&o, events, n, argv + optind, &t, &st, &diag);
	free(list);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	ended = cli_program_ended(cmd, argv[optind], st.exit_code, st.signal, keep_failed, "trace");
	if (!keep_failed && ended != CLI_OK) {
		mpxkit_trace_free(t);
		return ended;
	}
	rc = mpxkit_trace_write(t, output, &diag);
	if (rc == 0)
		fprintf(stderr, "mpxkit %s: %zu step%s of %zu event%s (%s, %s run%s) written to %s\n",
			cmd, t->n_steps, cli_s(t->n_steps), t->n_events, cli_s(t->n_events),
			mpxkit_trace_get_meta(t, "mode"), mpxkit_trace_get_meta(t, "runs"),
			strcmp(mpxkit_trace_get_meta(t, "runs"), "1") ? "s" : "", output);
	mpxkit_trace_free(t);
	return rc < 0 ? cli_lib_error(cmd, rc, &diag) : ended;
}

int cmd_record(int argc, char **argv)
{
	const char *cmd = argv[0], *output = NULL;
	mpxkit_record_options o;
	mpxkit_record_status st;
	mpxkit_trace *t = NULL;
	mpxkit_diag diag = {0};
	char *meta[MAX_META], *env[MAX_ENV + 1];
	size_t n_meta = 0, n_env = 0;
	int c, rc, keep_failed = 0, clean_env = 0, ended;
	long interval;

	if (wants_perf(argc, argv) && (rc = record_perf(argc, argv)) != NOT_PERF)
		return rc;
	mpxkit_record_options_init(&o);
	optind = 1;
	opterr = 0;
	/* '+': options end at CMD, so CMD's own options are never taken for ours. */
	while ((c = getopt_long(argc, argv, "+:o:i:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'i':
			if (cli_option_long(cmd, "--interval-bb", optarg, 1, 1000000000000L,
					    &interval) != CLI_OK)
				return CLI_USAGE;
			o.interval_bb = (uint64_t)interval;
			break;
		case OPT_I1:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "I1", &o.i1)) != CLI_OK)
				return rc;
			break;
		case OPT_D1:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "D1", &o.d1)) != CLI_OK)
				return rc;
			break;
		case OPT_LL:
			if ((rc = cli_parse_cache_geometry(cmd, optarg, "LL", &o.ll)) != CLI_OK)
				return rc;
			break;
		case OPT_VALGRIND:
			o.valgrind = optarg;
			break;
		case OPT_KEEP_FAILED:
			keep_failed = 1;
			break;
		case OPT_META:
			if (n_meta == MAX_META)
				return cli_usage_error(cmd, "--meta: at most %d pairs", MAX_META);
			if ((rc = check_meta(cmd, optarg)) != CLI_OK)
				return rc;
			meta[n_meta++] = optarg;
			break;
		case OPT_ENV:
			if (n_env == MAX_ENV)
				return cli_usage_error(cmd, "--env: at most %d variables", MAX_ENV);
			if (strchr(optarg, '=') == NULL || optarg[0] == '=')
				return cli_usage_error(cmd, "--env: '%s' is not KEY=VALUE", optarg);
			env[n_env++] = optarg;
			break;
		case OPT_CLEAN_ENV:
			clean_env = 1;
			break;
		case 'h':
			usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, c, argv);
		}
	}
	if (output == NULL)
		return cli_usage_error(cmd, "no output file (-o TRACE)");
	if (strcmp(output, "-") == 0)
		return cli_usage_error(cmd, "-o -: the program's own output shares stdout; "
					    "name a file");
	if (optind >= argc)
		return cli_usage_error(cmd, "no command to record (mpxkit record -o TRACE -- CMD)");
	/* Fails before the run, not after minutes of it, when the output cannot be created. */
	{
		const char *inputs[] = {o.valgrind,
					cli_program_is_path(argv[optind]) ? argv[optind] : NULL};
		if ((rc = cli_check_outputs(cmd, &output, 1, inputs, 2)) != CLI_OK)
			return rc;
	}
	env[n_env] = NULL;
	if (clean_env)
		o.envp = env;
	else if ((rc = export_env(cmd, env)) != CLI_OK)
		return rc;

	rc = mpxkit_record_run(&o, argv + optind, &t, &st, &diag);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	ended = cli_program_ended(cmd, argv[optind], st.exit_code, st.signal, keep_failed, "trace");
	if (!keep_failed && ended != CLI_OK) {
		mpxkit_trace_free(t);
		return ended;
	}
	rc = add_meta(t, meta, n_meta);
	if (rc < 0) {
		mpxkit_trace_free(t);
		return cli_lib_error(cmd, rc, NULL);
	}
	rc = mpxkit_trace_write(t, output, &diag);
	if (rc == 0)
		fprintf(stderr, "mpxkit %s: %zu step%s of %zu event%s written to %s\n", cmd,
			t->n_steps, cli_s(t->n_steps), t->n_events, cli_s(t->n_events), output);
	mpxkit_trace_free(t);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	return ended;
}

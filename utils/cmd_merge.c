/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit merge: the dumps of an MPI job's ranks into one .pcz. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "mpxkit/job.h"
#include "mpxkit/outfile.h"

static void merge_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit merge -o OUT.pcz [-v] DUMP.pcz...\n\n"
	    "Merge the dumps of an MPI job's ranks (MPXKIT_DUMP=job.%%r.pcz) into one .pcz whose\n"
	    "units are (rank, thread): rank<R>.thread<TID>, with their cpu and numa node.  Each\n"
	    "rank's regions follow in rank order; the k-th region of a name in one rank aligns\n"
	    "with the k-th of that name in the others (doc/mpi.md).  Dumps of different jobs or\n"
	    "with different event lists are refused.  mpxkit info, unpack and report read the\n"
	    "result.\n\n"
	    "Options:\n"
	    "  -o, --output=FILE  the merged file (required)\n"
	    "  -v, --verbose      one line on stderr: ranks, units, sizes\n"
	    "  -h, --help         show this help\n");
}

/* On a terminal, the ranks merged so far, on one line that rewrites itself. */
static void progress(void *arg, size_t done, size_t total)
{
	(void)arg;
	fprintf(stderr, "\rmpxkit merge: %zu/%zu ranks", done, total);
	if (done == total)
		fputs("\r\033[K", stderr);
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = argv[0], *output = NULL;
	mpxkit_job_merge_options opt = {0};
	mpxkit_job_merge_result res;
	mpxkit_diag diag = {0};
	int verbose = 0, c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			merge_usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, c, argv);
		}
	}
	if (output == NULL)
		return cli_usage_error(cmd, "no output file (-o OUT.pcz)");
	if (optind == argc)
		return cli_usage_error(cmd, "no dump to merge");
	if (isatty(STDERR_FILENO))
		opt.progress = progress;
	rc = mpxkit_outfile_check(output, (const char *const *)argv + optind,
				  (size_t)(argc - optind), &diag);
	if (rc == 0)
		rc = mpxkit_job_merge(output, (size_t)(argc - optind),
				      (const char *const *)argv + optind, &opt, &res, &diag);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	if (res.size > 0 && res.n_ranks < (size_t)res.size)
		fprintf(stderr, "mpxkit merge: note: %zu of the job's %ld ranks merged\n",
			res.n_ranks, res.size);
	if (res.n_misaligned)
		fprintf(stderr,
			"mpxkit merge: note: %zu rank%s regions differ from the lowest rank's "
			"(first: %s); regions align by name and order\n",
			res.n_misaligned, res.n_misaligned == 1 ? "'s" : "s'", res.misaligned_note);
	if (verbose)
		fprintf(stderr,
			"mpxkit merge: %s: %zu rank%s, %" PRIu64 " region%s, %" PRIu64
			" unit%s; from %" PRIu64 " bytes of dumps\n",
			output, res.n_ranks, cli_s(res.n_ranks), res.n_regions,
			cli_s(res.n_regions), res.n_units, cli_s(res.n_units), res.bytes_in);
	return CLI_OK;
}

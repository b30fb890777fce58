/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit report: a job's counts per event over ranks and threads, its imbalance, and a rank x event
 * heat map. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "mpxkit/job.h"
#include "output.h"
#include "svg.h"

static void report_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit report [OPTIONS] JOB.pcz\n\n"
	    "Summarise a job's dump (mpxkit merge's, or one rank's): per event the total and\n"
	    "the min, median and max over the (rank, thread) units and over the ranks, and the\n"
	    "counts that differ from their median by more than a factor (doc/mpi.md). A dump\n"
	    "with intervals (the PAPI component's) adds each total's lo and hi and the values\n"
	    "not counted; a total never counted reads <not counted>, not 0.\n\n"
	    "Options:\n"
	    "  -f, --format=FORMAT  table (default), csv or json\n"
	    "  -r, --region=NAME    sum the regions of that name (default: stop.total, what each\n"
	    "                       PAPI_stop returned, when the file has it; else every region)\n"
	    "      --factor=F       imbalance factor, above 1 (default %.2f): a count above F x\n"
	    "                       the median of its ranks or threads, or below median / F\n"
	    "      --imbalance      csv and json: the imbalanced counts only, worst first\n"
	    "  -o, --output=FILE    write the report to FILE (default: standard output)\n"
	    "      --svg=FILE       heat map, rank x event: each rank's count over the median\n"
	    "                       rank's, imbalanced cells outlined in red\n"
	    "  -h, --help           show this help\n",
	    MPXKIT_JOB_FACTOR_DEFAULT);
}

/*
 * A dump with intervals adds, after the total, its interval and how many
 * (unit, step) values were not counted; a total none of whose values was
 * counted shows as not counted, never as 0.
 */
static void interval_cells(cli_table *t, const mpxkit_job_summary *s, size_t e)
{
	cli_table_uint(t, s->total_lo[e]);
	if (s->total_hi[e] == UINT64_MAX)
		cli_table_missing(t);
	else
		cli_table_uint(t, s->total_hi[e]);
	cli_table_uint(t, s->not_counted[e]);
}

static int total_not_counted(const mpxkit_job_summary *s, size_t e)
{
	for (size_t u = 0; u < s->n_units; u++)
		if (!s->unit_not_counted[u * s->n_events + e])
			return 0;
	return s->intervals && s->n_units > 0;
}

static cli_table *summary_table(const mpxkit_job_summary *s, const char *path)
{
	static const cli_column columns[] = {
	    {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"total", NULL, CLI_COL_INT, 0, 1, "<not counted>"},
	    {"lo", NULL, CLI_COL_INT, 0, 1, NULL},
	    {"hi", NULL, CLI_COL_INT, 0, 1, "unbounded"},
	    {"not_counted", "not counted", CLI_COL_INT, 0, 0, NULL},
	    {"thread_min", "thread min", CLI_COL_REAL, 15, 0, NULL},
	    {"thread_median", "median", CLI_COL_REAL, 15, 0, NULL},
	    {"thread_max", "max", CLI_COL_REAL, 15, 0, NULL},
	    {"rank_min", "rank min", CLI_COL_REAL, 15, 0, NULL},
	    {"rank_median", "median", CLI_COL_REAL, 15, 0, NULL},
	    {"rank_max", "max", CLI_COL_REAL, 15, 0, NULL},
	    {"imbalanced_ranks", "imbalanced ranks", CLI_COL_INT, 0, 0, NULL},
	    {"imbalanced_threads", "threads", CLI_COL_INT, 0, 0, NULL},
	};
	enum { FIRST_BOUND = 2, LAST_BOUND = 4 }; /* lo, hi, not_counted */
	cli_column chosen[sizeof columns / sizeof *columns];
	size_t n = 0;
	cli_table *t;

	/* Without intervals every count is as counted: no bounds to show. */
	for (size_t i = 0; i < sizeof columns / sizeof *columns; i++)
		if (s->intervals || i < FIRST_BOUND || i > LAST_BOUND)
			chosen[n++] = columns[i];
	t = cli_table_new(chosen, n);
	if (t == NULL)
		return NULL;
	cli_table_comment(t, "%s: %zu rank%s, %zu (rank, thread) unit%s, regions %s", path,
			  s->n_ranks, cli_s(s->n_ranks), s->n_units, cli_s(s->n_units), s->regions);
	if (s->intervals && isnan(s->interval_level))
		cli_table_comment(t, "estimates with their intervals (lo, hi); a total's are the "
				     "sums of its units'");
	else if (s->intervals)
		cli_table_comment(t,
				  "estimates with their %g %% intervals (lo, hi): each unit's "
				  "truth lies in its interval with that probability; a total's "
				  "are the sums of its units'",
				  100 * s->interval_level);
	for (size_t e = 0; e < s->n_events; e++) {
		const mpxkit_job_spread *u = &s->unit_spread[e], *r = &s->rank_spread[e];
		cli_table_text(t, s->events[e]);
		if (total_not_counted(s, e))
			cli_table_missing(t);
		else
			cli_table_uint(t, s->totals[e]);
		if (s->intervals)
			interval_cells(t, s, e);
		cli_table_real(t, u->min);
		cli_table_real(t, u->median);
		cli_table_real(t, u->max);
		cli_table_real(t, r->min);
		cli_table_real(t, r->median);
		cli_table_real(t, r->max);
		cli_table_uint(t, r->n_flagged);
		cli_table_uint(t, u->n_flagged);
	}
	return t;
}

/* One imbalanced count: a rank's (thread SIZE_MAX) or a thread's. */
typedef struct flagged {
	size_t rank, unit, event;
	uint64_t count;
	double median;
} flagged;

/* How far from its median: |log ratio|, infinite against a zero median. */
static double distance(const flagged *f)
{
	return f->median > 0 ? fabs(log((double)f->count / f->median)) : INFINITY;
}

static int worst_first(const void *pa, const void *pb)
{
	const flagged *a = pa, *b = pb;
	double da = distance(a), db = distance(b);

	if (da != db)
		return da < db ? 1 : -1;
	if ((a->unit == SIZE_MAX) != (b->unit == SIZE_MAX))
		return a->unit == SIZE_MAX ? -1 : 1; /* ranks before their threads */
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->unit != b->unit)
		return a->unit < b->unit ? -1 : 1;
	return (a->event > b->event) - (a->event < b->event);
}

/* Every imbalanced count, ranks' and threads', worst first; NULL when out of memory. */
static flagged *collect_flagged(const mpxkit_job_summary *s, size_t *n_out)
{
	size_t E = s->n_events, n = 0;
	flagged *f;

	for (size_t e = 0; e < E; e++)
		n += s->rank_spread[e].n_flagged + s->unit_spread[e].n_flagged;
	f = malloc((n ? n : 1) * sizeof *f);
	if (f == NULL)
		return NULL;
	n = 0;
	for (size_t r = 0; r < s->n_ranks; r++)
		for (size_t e = 0; e < E; e++)
			if (s->rank_flags[r * E + e])
				f[n++] = (flagged){r, SIZE_MAX, e, s->rank_counts[r * E + e],
						   s->rank_spread[e].median};
	for (size_t u = 0; u < s->n_units; u++)
		for (size_t e = 0; e < E; e++)
			if (s->unit_flags[u * E + e])
				f[n++] = (flagged){s->unit_rank[u], u, e, s->unit_counts[u * E + e],
						   s->unit_spread[e].median};
	qsort(f, n, sizeof *f, worst_first);
	*n_out = n;
	return f;
}

static cli_table *imbalance_table(const mpxkit_job_summary *s)
{
	static const cli_column columns[] = {
	    {"level", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"rank", NULL, CLI_COL_INT, 0, 0, NULL},
	    {"thread", NULL, CLI_COL_TEXT, 0, 0, "-"},
	    {"event", NULL, CLI_COL_TEXT, 0, 0, NULL},
	    {"count", NULL, CLI_COL_INT, 0, 1, NULL},
	    {"median", NULL, CLI_COL_REAL, 15, 0, NULL},
	    {"ratio", "count/median", CLI_COL_FIXED, 2, 0, "inf"},
	};
	cli_table *t = cli_table_new(columns, sizeof columns / sizeof *columns);
	size_t n = 0;
	flagged *f = collect_flagged(s, &n);

	if (t == NULL || f == NULL) {
		cli_table_free(t);
		free(f);
		return NULL;
	}
	cli_table_comment(t,
			  "imbalance: %zu counts above %g x the median of their ranks or "
			  "threads, or below median / %g; worst first",
			  n, s->factor, s->factor);
	for (size_t i = 0; i < n; i++) {
		cli_table_text(t, f[i].unit == SIZE_MAX ? "rank" : "thread");
		cli_table_int(t, s->ranks[f[i].rank]);
		cli_table_text(t, f[i].unit == SIZE_MAX ? NULL : s->unit_names[f[i].unit]);
		cli_table_text(t, s->events[f[i].event]);
		cli_table_uint(t, f[i].count);
		cli_table_real(t, f[i].median);
		cli_table_real(t, f[i].median > 0 ? (double)f[i].count / f[i].median : NAN);
	}
	free(f);
	return t;
}

static int print_report(const mpxkit_job_summary *s, const char *path, cli_format format,
			int imbalance_only, FILE *out)
{
	cli_table *sum = summary_table(s, path), *imb = imbalance_table(s);
	int rc = sum && imb ? 0 : -1;

	if (rc == 0 && format == CLI_FORMAT_JSON && !imbalance_only) {
		cli_json *j = cli_json_new(out);
		if (j == NULL)
			rc = -1;
		if (j) {
			cli_json_object(j);
			cli_json_key(j, "file");
			cli_json_str(j, path);
			cli_json_key(j, "regions");
			cli_json_str(j, s->regions);
			cli_json_key(j, "factor");
			cli_json_num(j, s->factor);
			cli_json_key(j, "ranks");
			cli_json_uint(j, s->n_ranks);
			cli_json_key(j, "units");
			cli_json_uint(j, s->n_units);
			cli_json_key(j, "events");
			cli_table_json(sum, j);
			cli_json_key(j, "imbalance");
			cli_table_json(imb, j);
			rc = cli_json_end(j);
		}
	} else if (rc == 0 && format == CLI_FORMAT_TABLE) {
		rc = cli_table_print(sum, format, out);
		fputc('\n', out);
		if (rc == 0)
			rc = cli_table_print(imb, format, out);
	} else if (rc == 0) {
		rc = cli_table_print(imbalance_only ? imb : sum, format, out);
	}
	cli_table_free(sum);
	cli_table_free(imb);
	return rc;
}

/* Each rank's count over the median rank's, per event; blank where the median is 0. */
static int write_heatmap(const char *cmd, const mpxkit_job_summary *s, const char *path,
			 const char *svg_path)
{
	size_t R = s->n_ranks, E = s->n_events;
	double *values = malloc((R * E > 0 ? R * E : 1) * sizeof *values);
	char **rows = calloc(R ? R : 1, sizeof *rows);
	char title[512], caption[96];
	cli_memout m = {0};
	int rc = CLI_OK;

	if (values == NULL || rows == NULL || cli_memout_open(&m) < 0) {
		rc = cli_error(cmd, "out of memory");
		goto done;
	}
	for (size_t r = 0; r < R; r++) {
		char label[32];
		snprintf(label, sizeof label, "rank %ld", s->ranks[r]);
		if ((rows[r] = strdup(label)) == NULL) {
			rc = cli_error(cmd, "out of memory");
			goto done;
		}
		for (size_t e = 0; e < E; e++) {
			double med = s->rank_spread[e].median;
			/* blank, as where the median is 0: a rank that never counted e has no count */
			values[r * E + e] = med > 0 && !s->rank_not_counted[r * E + e]
						? (double)s->rank_counts[r * E + e] / med
						: NAN;
		}
	}
	/* Short: the chart is as wide as its cells, and a title does not widen it. */
	snprintf(title, sizeof title, "%s (%s)", path, s->regions);
	snprintf(caption, sizeof caption, "count / median rank; red: beyond %g x", s->factor);
	cli_heatmap h = {
	    title,  (const char *const *)rows, R, s->events, E, values, s->rank_flags, 0, 2, 0,
	    caption};
	cli_svg_document(m.f);
	cli_svg_heatmap(m.f, &h);
	if (cli_memout_close(&m) < 0) {
		rc = cli_error(cmd, "out of memory");
		goto done;
	}
	rc = cli_write_file(cmd, svg_path, m.text, m.len);
done:
	free(m.text);
	for (size_t r = 0; rows && r < R; r++)
		free(rows[r]);
	free(rows);
	free(values);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_FACTOR = 256, OPT_IMBALANCE, OPT_SVG };
	static const struct option longopts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"region", required_argument, NULL, 'r'},
	    {"factor", required_argument, NULL, OPT_FACTOR},
	    {"imbalance", no_argument, NULL, OPT_IMBALANCE},
	    {"output", required_argument, NULL, 'o'},
	    {"svg", required_argument, NULL, OPT_SVG},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = argv[0], *region = NULL, *output = NULL, *svg = NULL;
	double factor = MPXKIT_JOB_FACTOR_DEFAULT;
	cli_format format = CLI_FORMAT_TABLE;
	mpxkit_job_summary *s = NULL;
	mpxkit_diag diag = {0};
	int imbalance_only = 0, c, rc;
	cli_memout m;
	char *end;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":f:r:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cli_parse_format(optarg, &format) != 0)
				return cli_usage_error(cmd, "--format takes table, csv or json");
			break;
		case 'r':
			region = optarg;
			break;
		case OPT_FACTOR:
			factor = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || !(factor > 1) || isinf(factor))
				return cli_usage_error(cmd, "--factor '%s': a number above 1",
						       optarg);
			break;
		case OPT_IMBALANCE:
			imbalance_only = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return cli_close_stdout(cmd);
		default:
			return cli_option_error(cmd, c, argv);
		}
	}
	if (optind + 1 != argc)
		return cli_usage_error(cmd, "need exactly one dump");
	{
		const char *outputs[] = {output, svg};
		if (cli_check_outputs(cmd, outputs, 2, (const char *const *)argv + optind, 1) !=
		    CLI_OK)
			return CLI_FAIL;
	}
	rc = mpxkit_job_summarize(argv[optind], region, factor, &s, &diag);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	if (cli_memout_open(&m) < 0) {
		mpxkit_job_summary_free(s);
		return cli_error(cmd, "out of memory");
	}
	rc = print_report(s, argv[optind], format, imbalance_only, m.f);
	if ((cli_memout_close(&m) < 0) | (rc < 0))
		rc = cli_error(cmd, "out of memory");
	else
		rc = cli_write_file(cmd, output, m.text, m.len);
	free(m.text);
	if (rc == CLI_OK && svg)
		rc = write_heatmap(cmd, s, argv[optind], svg);
	mpxkit_job_summary_free(s);
	return rc;
}

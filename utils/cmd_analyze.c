/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit analyze: a profile's code spaces, patterns and threads screened, the findings ranked
 * (doc/spacetime.md). */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyze_html.h"
#include "cli.h"
#include "commands.h"
#include "mpxkit/spacetime.h"
#include "output.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit analyze PROFILE [OPTIONS]\n"
	    "\n"
	    "Finds the code spaces of a profile (`mpxkit profile`), compares each with the\n"
	    "rest of the program, with itself at other times, after other spaces and across\n"
	    "threads, and prints the findings worst first: where, what, how much of the\n"
	    "program's cost, and which way to go.\n"
	    "\n"
	    "Options:\n"
	    "  -f, --format FMT        table (default), csv or json (the whole analysis)\n"
	    "  -o, --output FILE       write the table or JSON there instead of stdout\n"
	    "      --html FILE         also write a self-contained HTML report\n"
	    "      --color-by KEY      the timeline's metric (e.g. d1_mpki, ll_mpki, cost)\n"
	    "  -n, --top N             findings in the table (default 10; 0: all)\n"
	    "      --min-share PCT     smallest share of the program's cost a finding explains\n"
	    "                          (default 0.5)\n"
	    "      --factor F          how much worse a metric must be (default 2)\n"
	    "      --min-weight PCT    code spaces kept: weight or cost share (default 1)\n"
	    "      --bins N            time bins for phases and pictures (default 256)\n"
	    "  -q, --quiet             no progress (shown only on a terminal)\n"
	    "  -h, --help              show this help\n"
	    "\n"
	    "Exit status: 0 analysed, 1 usage error, 2 failure (unreadable or damaged profile,\n"
	    "output not writable).\n");
}

static const struct option long_options[] = {
    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
    {"html", required_argument, NULL, 'H'},   {"color-by", required_argument, NULL, 'C'},
    {"top", required_argument, NULL, 'n'},    {"min-share", required_argument, NULL, 'S'},
    {"factor", required_argument, NULL, 'x'}, {"min-weight", required_argument, NULL, 'W'},
    {"bins", required_argument, NULL, 'B'},   {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0},
};

/* A number in [lo, hi] from the whole of text; -1 otherwise. */
static int parse_real(const char *text, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || *end != '\0' || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/* ---- the table ------------------------------------------------------------------------------- */

static const cli_column finding_columns[] = {
    {"rank", NULL, CLI_COL_INT, 0, 0, NULL},
    {"kind", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"class", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"function", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"location", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"metric", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"value", NULL, CLI_COL_REAL, 3, 0, NULL},
    {"reference", NULL, CLI_COL_REAL, 3, 0, NULL},
    {"program", NULL, CLI_COL_REAL, 3, 0, NULL},
    {"share_pct", "share %", CLI_COL_FIXED, 1, 0, NULL},
    {"direction", NULL, CLI_COL_TEXT, 0, 0, NULL},
};

/* "file:line", or the file alone, or NULL (missing). */
static const char *location(const char *file, uint32_t line, char *buf, size_t size)
{
	if (file == NULL || *file == '\0' || strcmp(file, "???") == 0)
		return NULL;
	if (line)
		snprintf(buf, size, "%s:%" PRIu32, file, line);
	else
		snprintf(buf, size, "%s", file);
	return buf;
}

static const char *metric_name(const mpxkit_spacetime_finding *f)
{
	return f->metric >= 0 ? mpxkit_spacetime_metric_key(f->metric) : "imbalance";
}

static void comments(cli_table *t, const mpxkit_spacetime *r, const char *path, size_t top)
{
	size_t defects = 0;
	char line[1024];
	size_t len = 0;

	cli_table_comment(t, "%s: %s profile, %" PRIu64 " window%s, %zu thread%s, %" PRIu64 " row%s",
			  path, r->source, r->windows, cli_s(r->windows), r->n_threads,
			  cli_s(r->n_threads), r->rows, cli_s(r->rows));
	if (r->command)
		cli_table_comment(t, "command: %s", r->command);
	len = (size_t)snprintf(line, sizeof line, "program: cost %.4g %s", r->cost, r->cost_unit);
	for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS && len < sizeof line; m++)
		if (!isnan(r->metrics[m]))
			len += (size_t)snprintf(line + len, sizeof line - len, ", %s %.3g",
						mpxkit_spacetime_metric_key(m), r->metrics[m]);
	cli_table_comment(t, "%s", line);
	cli_table_comment(t, "code spaces: %zu selected of %zu (weight or cost >= %g %%)",
			  r->n_spaces, r->n_all_spaces, 100 * r->options.min_weight);
	for (size_t i = 0; i < r->n_findings; i++)
		defects += !r->findings[i].advantage;
	cli_table_comment(
	    t, "findings: %zu defect%s, %zu advantage%s%s", defects, defects == 1 ? "" : "s",
	    r->n_findings - defects, r->n_findings - defects == 1 ? "" : "s",
	    top && top < r->n_findings ? " (the top ones below; --top 0 for all)" : "");
}

/* Which findings a table holds: the terminal's all of them, the page's each kind on its own. */
typedef enum finding_rows { ROWS_ALL, ROWS_DEFECTS, ROWS_ADVANTAGES } finding_rows;

/*
 * The top findings (of the kind asked for, with their global ranks); the HTML page leaves the
 * direction out of the table (it has its own place) and the comments out of its second table.
 */
static cli_table *findings_table(const mpxkit_spacetime *r, const char *path, size_t top,
				 int direction, finding_rows rows)
{
	size_t n_columns = sizeof finding_columns / sizeof *finding_columns - !direction;
	cli_table *t = cli_table_new(finding_columns, n_columns);
	size_t shown = 0;
	char loc[1024];

	if (t == NULL)
		return NULL;
	if (rows != ROWS_ADVANTAGES)
		comments(t, r, path, top);
	for (size_t i = 0; i < r->n_findings && (top == 0 || shown < top); i++) {
		const mpxkit_spacetime_finding *f = &r->findings[i];
		if ((rows == ROWS_DEFECTS && f->advantage) ||
		    (rows == ROWS_ADVANTAGES && !f->advantage))
			continue;
		shown++;
		cli_table_int(t, (int64_t)i + 1);
		cli_table_text(t, f->advantage ? "advantage" : "defect");
		cli_table_text(t, mpxkit_spacetime_class_name(f->cls));
		if (f->scope == MPXKIT_SCOPE_PROGRAM) {
			snprintf(loc, sizeof loc, "%s (whole program)",
				 r->spaces[f->space].function);
			cli_table_text(t, loc);
		} else {
			cli_table_text(t, r->spaces[f->space].function);
		}
		/* The page names files by their last component; its source lines give the path. */
		const char *file = f->file, *slash = file ? strrchr(file, '/') : NULL;
		cli_table_text(
		    t, location(!direction && slash ? slash + 1 : file, f->line, loc, sizeof loc));
		cli_table_text(t, metric_name(f));
		cli_table_real(t, f->value);
		cli_table_real(t, f->reference_value);
		cli_table_real(t, f->program_value);
		cli_table_real(t, 100 * f->share);
		if (direction)
			cli_table_text(t, f->direction);
	}
	return t;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_hex(cli_json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	cli_json_str(j, buf);
}

static void json_metrics(cli_json *j, const double *m)
{
	cli_json_object(j);
	for (int k = 0; k < MPXKIT_SPACETIME_N_METRICS; k++) {
		cli_json_key(j, mpxkit_spacetime_metric_key(k));
		cli_json_num(j, m[k]);
	}
	cli_json_close(j);
}

static void json_nullable_text(cli_json *j, const char *s)
{
	cli_json_str(j, s && *s && strcmp(s, "???") != 0 ? s : NULL);
}

static void json_space(cli_json *j, const mpxkit_spacetime *r, const mpxkit_spacetime_space *s)
{
	cli_json_object(j);
	cli_json_key(j, "id");
	cli_json_uint(j, s->id);
	cli_json_key(j, "object");
	cli_json_str(j, s->object);
	cli_json_key(j, "function");
	cli_json_str(j, s->function);
	cli_json_key(j, "file");
	json_nullable_text(j, s->file);
	cli_json_key(j, "line");
	cli_json_uint(j, s->line);
	cli_json_key(j, "start");
	json_hex(j, s->start);
	cli_json_key(j, "end");
	json_hex(j, s->end);
	cli_json_key(j, "kind");
	cli_json_str(j, s->loop ? "loop" : "body");
	cli_json_key(j, "wait");
	cli_json_bool(j, s->wait);
	cli_json_key(j, "weight");
	cli_json_num(j, s->weight);
	cli_json_key(j, "cost_share");
	cli_json_num(j, s->cost_share);
	cli_json_key(j, "appearances");
	cli_json_uint(j, s->appearances);
	cli_json_key(j, "first");
	cli_json_uint(j, s->first);
	cli_json_key(j, "last");
	cli_json_uint(j, s->last);
	cli_json_key(j, "runs");
	cli_json_array(j);
	for (size_t k = 0; k < s->n_runs; k++) {
		cli_json_array(j);
		cli_json_uint(j, s->runs[k][0]);
		cli_json_uint(j, s->runs[k][1]);
		cli_json_close(j);
	}
	cli_json_close(j);
	cli_json_key(j, "runs_truncated");
	cli_json_bool(j, s->runs_truncated);
	cli_json_key(j, "gaps");
	cli_json_uint(j, s->gaps);
	cli_json_key(j, "max_gap");
	cli_json_uint(j, s->max_gap);
	cli_json_key(j, "max_gap_end");
	if (s->max_gap)
		cli_json_uint(j, s->max_gap_end);
	else
		cli_json_null(j);
	cli_json_key(j, "after_gap");
	if (s->has_after_gap) {
		cli_json_object(j);
		cli_json_key(j, "metrics");
		json_metrics(j, s->after_gap);
		cli_json_key(j, "worse");
		cli_json_array(j);
		for (int m = 0; m < MPXKIT_SPACETIME_N_METRICS; m++)
			if (s->worse_after_gap & (1u << m))
				cli_json_str(j, mpxkit_spacetime_metric_key(m));
		cli_json_close(j);
		cli_json_close(j);
	} else {
		cli_json_null(j);
	}
	cli_json_key(j, "metrics");
	json_metrics(j, s->metrics);
	cli_json_key(j, "threads");
	cli_json_array(j);
	for (size_t t = 0; t < r->n_threads; t++) {
		if (!(s->thread_share[t] > 0))
			continue;
		cli_json_object(j);
		cli_json_key(j, "tid");
		cli_json_uint(j, r->threads[t].tid);
		cli_json_key(j, "cost_share");
		cli_json_num(j, s->thread_share[t]);
		cli_json_close(j);
	}
	cli_json_close(j);
	cli_json_close(j);
}

static void json_finding(cli_json *j, const mpxkit_spacetime *r, size_t rank,
			 const mpxkit_spacetime_finding *f)
{
	cli_json_object(j);
	cli_json_key(j, "rank");
	cli_json_uint(j, rank);
	cli_json_key(j, "kind");
	cli_json_str(j, f->advantage ? "advantage" : "defect");
	cli_json_key(j, "class");
	cli_json_str(j, mpxkit_spacetime_class_name(f->cls));
	cli_json_key(j, "scope");
	cli_json_str(j, mpxkit_spacetime_scope_name(f->scope));
	cli_json_key(j, "basis");
	cli_json_str(j, f->absolute ? "absolute" : "relative");
	cli_json_key(j, "space");
	cli_json_uint(j, r->spaces[f->space].id);
	cli_json_key(j, "function");
	cli_json_str(j, r->spaces[f->space].function);
	cli_json_key(j, "file");
	json_nullable_text(j, f->file);
	cli_json_key(j, "line");
	cli_json_uint(j, f->line);
	cli_json_key(j, "metric");
	cli_json_str(j, metric_name(f));
	cli_json_key(j, "value");
	cli_json_num(j, f->value);
	cli_json_key(j, "program_value");
	cli_json_num(j, f->program_value);
	cli_json_key(j, "reference_value");
	cli_json_num(j, f->reference_value);
	cli_json_key(j, "share");
	cli_json_num(j, f->share);
	cli_json_key(j, "event_share");
	cli_json_num(j, f->event_share);
	cli_json_key(j, "stall_share");
	cli_json_num(j, f->stall_share);
	cli_json_key(j, "threshold");
	cli_json_num(j, f->threshold);
	cli_json_key(j, "first_window");
	if (f->scope == MPXKIT_SCOPE_PHASE)
		cli_json_uint(j, f->first_window);
	else
		cli_json_null(j);
	cli_json_key(j, "last_window");
	if (f->scope == MPXKIT_SCOPE_PHASE)
		cli_json_uint(j, f->last_window);
	else
		cli_json_null(j);
	cli_json_key(j, "after");
	if (f->after >= 0)
		cli_json_uint(j, r->spaces[f->after].id);
	else
		cli_json_null(j);
	cli_json_key(j, "thread");
	if (f->thread >= 0)
		cli_json_uint(j, r->threads[f->thread].tid);
	else
		cli_json_null(j);
	cli_json_key(j, "direction");
	cli_json_str(j, f->direction);
	cli_json_close(j);
}

static void json_head(cli_json *j, const mpxkit_spacetime *r, const char *path)
{
	const mpxkit_spacetime_options *o = &r->options;

	cli_json_key(j, "schema");
	cli_json_str(j, "mpxkit-analyze/1");
	cli_json_key(j, "profile");
	cli_json_object(j);
	cli_json_key(j, "path");
	cli_json_str(j, path);
	cli_json_key(j, "source");
	cli_json_str(j, r->source);
	cli_json_key(j, "time_unit");
	cli_json_str(j, r->time_unit);
	cli_json_key(j, "command");
	cli_json_str(j, r->command);
	cli_json_key(j, "windows");
	cli_json_uint(j, r->windows);
	cli_json_key(j, "threads");
	cli_json_uint(j, r->n_threads);
	cli_json_key(j, "events");
	cli_json_array(j);
	for (size_t e = 0; e < r->n_events; e++)
		cli_json_str(j, r->events[e]);
	cli_json_close(j);
	cli_json_key(j, "code_spaces");
	cli_json_uint(j, r->n_all_spaces);
	cli_json_key(j, "selected");
	cli_json_uint(j, r->n_spaces);
	cli_json_close(j);
	cli_json_key(j, "settings");
	cli_json_object(j);
	const struct {
		const char *key;
		double v;
	} settings[] = {{"min_weight", o->min_weight}, {"overlap", o->overlap},
			{"appear", o->appear},	       {"factor", o->factor},
			{"cpi_factor", o->cpi_factor}, {"imbalance", o->imbalance},
			{"min_share", o->min_share},   {"bins", (double)r->n_bins}};
	for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
		cli_json_key(j, settings[i].key);
		cli_json_num(j, settings[i].v);
	}
	cli_json_close(j);
	cli_json_key(j, "program");
	cli_json_object(j);
	cli_json_key(j, "cost");
	cli_json_num(j, r->cost);
	cli_json_key(j, "cost_unit");
	cli_json_str(j, r->cost_unit);
	cli_json_key(j, "weight");
	cli_json_num(j, r->weight);
	cli_json_key(j, "metrics");
	json_metrics(j, r->metrics);
	cli_json_close(j);
}

static void json_threads(cli_json *j, const mpxkit_spacetime *r)
{
	cli_json_key(j, "threads");
	cli_json_array(j);
	for (size_t t = 0; t < r->n_threads; t++) {
		cli_json_object(j);
		cli_json_key(j, "index");
		cli_json_uint(j, t);
		cli_json_key(j, "tid");
		cli_json_uint(j, r->threads[t].tid);
		cli_json_key(j, "cost_share");
		cli_json_num(j, r->threads[t].cost_share);
		cli_json_key(j, "wait_share");
		cli_json_num(j, r->threads[t].wait_share);
		cli_json_key(j, "spaces");
		cli_json_array(j);
		for (size_t k = 0; k < r->n_spaces; k++) {
			if (!(r->spaces[k].thread_share[t] > 0))
				continue;
			cli_json_object(j);
			cli_json_key(j, "space");
			cli_json_uint(j, r->spaces[k].id);
			cli_json_key(j, "cost_share");
			cli_json_num(j, r->spaces[k].thread_share[t]);
			cli_json_close(j);
		}
		cli_json_close(j);
		cli_json_close(j);
	}
	cli_json_close(j);
}

static int write_json(const mpxkit_spacetime *r, const char *path, FILE *out)
{
	cli_json *j = cli_json_new(out);

	if (j == NULL)
		return -1;
	cli_json_object(j);
	json_head(j, r, path);
	cli_json_key(j, "spaces");
	cli_json_array(j);
	for (size_t k = 0; k < r->n_spaces; k++)
		json_space(j, r, &r->spaces[k]);
	cli_json_close(j);
	cli_json_key(j, "findings");
	cli_json_array(j);
	for (size_t i = 0; i < r->n_findings; i++)
		json_finding(j, r, i + 1, &r->findings[i]);
	cli_json_close(j);
	cli_json_key(j, "patterns");
	cli_json_array(j);
	for (size_t p = 0; p < r->n_patterns; p++) {
		cli_json_object(j);
		cli_json_key(j, "from");
		cli_json_uint(j, r->spaces[r->patterns[p].from].id);
		cli_json_key(j, "to");
		cli_json_uint(j, r->spaces[r->patterns[p].to].id);
		cli_json_key(j, "count");
		cli_json_uint(j, r->patterns[p].count);
		cli_json_key(j, "metrics");
		json_metrics(j, r->patterns[p].metrics);
		cli_json_close(j);
	}
	cli_json_close(j);
	json_threads(j, r);
	return cli_json_end(j);
}

/* ---- the command ----------------------------------------------------------------------------- */

/*
 * Progress goes to a terminal only (a log file would fill with carriage returns), after the
 * first second and at most four times a second, and is erased at the end.
 */
typedef struct progress_line {
	struct timespec start, last;
	int shown;
} progress_line;

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void progress(void *arg, int pass, uint64_t blocks, uint64_t rows)
{
	progress_line *p = arg;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&p->start, &now) < 1.0 ||
	    (p->shown && seconds_between(&p->last, &now) < 0.25))
		return;
	p->last = now;
	p->shown = 1;
	fprintf(stderr,
		"\rmpxkit analyze: pass %d of 2: %" PRIu64 " blocks, %" PRIu64 " rows\033[K", pass,
		blocks, rows);
}

static void progress_done(progress_line *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

typedef struct analyze_args {
	const char *profile, *output, *html, *color_by;
	cli_format format;
	size_t top;
	int quiet;
	mpxkit_spacetime_options o;
} analyze_args;

static int parse_args(int argc, char **argv, analyze_args *a, int *help)
{
	const char *cmd = argv[0];
	double v;
	long n;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:n:qh", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cli_parse_format(optarg, &a->format) < 0)
				return cli_usage_error(
				    cmd, "--format: '%s' is not table, csv or json", optarg);
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'H':
			a->html = optarg;
			break;
		case 'C':
			a->color_by = optarg;
			break;
		case 'n':
			if (cli_parse_long(optarg, 0, 1000000, &n) < 0)
				return cli_usage_error(cmd, "--top: '%s' is not a number >= 0",
						       optarg);
			a->top = (size_t)n;
			break;
		case 'S':
			if (parse_real(optarg, 0, 100, &v) < 0)
				return cli_usage_error(cmd, "--min-share: '%s' is not a percentage",
						       optarg);
			a->o.min_share = v / 100;
			break;
		case 'x':
			if (parse_real(optarg, 1, 1e6, &v) < 0)
				return cli_usage_error(cmd, "--factor: '%s' is not a number >= 1",
						       optarg);
			a->o.factor = v;
			break;
		case 'W':
			if (parse_real(optarg, 0, 100, &v) < 0)
				return cli_usage_error(
				    cmd, "--min-weight: '%s' is not a percentage", optarg);
			a->o.min_weight = v / 100;
			break;
		case 'B':
			if (cli_parse_long(optarg, 1, 65536, &n) < 0)
				return cli_usage_error(
				    cmd, "--bins: '%s' is not a number in [1, 65536]", optarg);
			a->o.bins = (size_t)n;
			break;
		case 'q':
			a->quiet = 1;
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
	if (optind >= argc)
		return cli_usage_error(cmd, "no profile to analyse (mpxkit analyze PROFILE)");
	if (optind + 1 < argc)
		return cli_usage_error(cmd, "one profile at a time ('%s' is one too many)",
				       argv[optind + 1]);
	a->profile = argv[optind];
	if (a->color_by && !cli_analyze_color_ok(a->color_by))
		return cli_usage_error(cmd, "--color-by: '%s' is not a metric key or cost",
				       a->color_by);
	return CLI_OK;
}

int cmd_analyze(int argc, char **argv)
{
	const char *cmd = argv[0];
	analyze_args a;
	mpxkit_spacetime *r = NULL;
	mpxkit_diag diag = {0};
	cli_table *t = NULL, *t_adv = NULL;
	cli_memout m = {NULL, NULL, 0};
	progress_line line = {{0, 0}, {0, 0}, 0};
	int rc, help = 0;

	memset(&a, 0, sizeof a);
	a.format = CLI_FORMAT_TABLE;
	a.top = 10;
	mpxkit_spacetime_options_init(&a.o);
	rc = parse_args(argc, argv, &a, &help);
	if (rc != CLI_OK)
		return rc;
	if (help) {
		usage(stdout);
		return cli_close_stdout(cmd);
	}
	if (cli_check_outputs(cmd, (const char *const[]){a.output, a.html}, 2, &a.profile, 1) !=
	    CLI_OK)
		return CLI_FAIL;
	if (!a.quiet && isatty(STDERR_FILENO)) {
		clock_gettime(CLOCK_MONOTONIC, &line.start);
		a.o.progress = progress;
		a.o.progress_arg = &line;
	}
	rc = mpxkit_spacetime_analyze(a.profile, &a.o, &r, &diag);
	progress_done(&line);
	if (rc < 0)
		return cli_lib_error(cmd, rc, &diag);
	if (a.format == CLI_FORMAT_JSON) {
		if (cli_memout_open(&m) < 0 || write_json(r, a.profile, m.f) < 0 ||
		    cli_memout_close(&m) < 0)
			rc = cli_error(cmd, "out of memory");
		else
			rc = cli_write_file(cmd, a.output, m.text, m.len);
		free(m.text);
	} else {
		t = findings_table(r, a.profile, a.top, 1, ROWS_ALL);
		rc = t ? cli_table_emit(cmd, t, a.format, a.output)
		       : cli_error(cmd, "out of memory");
	}
	if (rc == CLI_OK && a.html) {
		cli_table_free(t);
		t = findings_table(r, a.profile, a.top, 0, ROWS_DEFECTS);
		t_adv = findings_table(r, a.profile, a.top, 0, ROWS_ADVANTAGES);
		rc = t && t_adv
			 ? cli_analyze_html_write(cmd, a.html, r, a.profile, t, t_adv, a.color_by)
			 : cli_error(cmd, "out of memory");
	}
	cli_table_free(t);
	cli_table_free(t_adv);
	mpxkit_spacetime_free(r);
	if (rc == CLI_OK && (a.output == NULL || strcmp(a.output, "-") == 0))
		rc = cli_close_stdout(cmd);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit predict: time, CPI, power and energy on other core kinds and frequencies (doc/predict.md).
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "mpxkit/outfile.h"
#include "mpxkit/predict.h"
#include "mpxkit/sched.h"

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "svg.h"

#define MAX_INPUTS 64

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: mpxkit predict COMMAND [OPTIONS] ...\n"
	    "       mpxkit predict --live -m MODEL [OPTIONS] -- CMD [ARGS...]\n"
	    "\n"
	    "Predict a program's time, CPI, power and energy on other core kinds and DVFS\n"
	    "frequencies from its counters on one (doc/predict.md).\n"
	    "\n"
	    "Commands:\n"
	    "  import --from gemstone|nikov -o DATA.csv FILE...   public data to a dataset\n"
	    "  record -o DATA.csv [-e EVENTS] -- CMD   run CMD at every core kind and frequency\n"
	    "  list                                    core kinds, frequencies, energy here\n"
	    "  train -o MODEL.mpxp DATA.csv...         fit the model\n"
	    "  apply -m MODEL.mpxp INPUT.csv           predictions for every row\n"
	    "  eval [--split SPEC] DATA.csv...         held-out error next to the baselines\n"
	    "  --live -m MODEL -- CMD                  predictions every period while CMD runs\n"
	    "\n"
	    "Run 'mpxkit predict COMMAND --help' for a command's options; see\n"
	    "mpxkit-predict(1).  Exit status: 0 success, 1 usage error, 2 failure.\n");
}

/* ---- shared option handling -------------------------------------------------------------------
 */

typedef struct opts {
	const char *cmd;
	mpxkit_pmodel_options model;
	const char *power_list[MAX_INPUTS];
	char *power_text;
	cli_format format;
	const char *output, *model_path, *plot, *split, *from, *dataset;
	int validate, verbose;
} opts;

static int bad_arg(const opts *o, char **argv)
{
	return cli_option_error(o->cmd, '?', argv);
}

static int need_arg(const opts *o, char **argv)
{
	return cli_option_error(o->cmd, ':', argv);
}

enum {
	OPT_MET = 256,
	OPT_POWER,
	OPT_POWER_EVENTS,
	OPT_RIDGE,
	OPT_XCORE,
	OPT_UNWEIGHTED,
	OPT_NO_ANCHOR,
	OPT_ROBUST,
	OPT_SPLIT,
	OPT_VALIDATE,
	OPT_PLOT,
	OPT_FROM,
	OPT_DATASET,
	OPT_RUNS,
	OPT_ROLE,
	OPT_THREADS,
	OPT_PERIOD,
	OPT_LIVE,
	OPT_SLICE,
	OPT_ESTIMATOR,
};

/* A form option through the library's parser: 1, or minus the usage error's status. */
static int set_form(const opts *o, const char *option, const char *arg, int (*parse)(const char *),
		    const char *expected, int *field)
{
	int v = parse(arg);

	if (v < 0)
		return -cli_usage_error(o->cmd, "%s %s: expected %s", option, arg, expected);
	*field = v;
	return 1;
}

/* The model options shared by train and eval; 1 when c was one of them, else 0 or an error. */
static int model_option(opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case OPT_MET:
		return set_form(o, "--met", arg, mpxkit_met_form_parse,
				"none, linear, mlp, cpi or auto", &o->model.met_form);
	case OPT_POWER:
		return set_form(o, "--power", arg, mpxkit_power_form_parse,
				"per-freq, per-freq-v or voltage", &o->model.power_form);
	case OPT_XCORE:
		return set_form(o, "--xcore", arg, mpxkit_xcore_form_parse,
				"ratio, cpi, cpi-mpki or auto", &o->model.xcore_form);
	case OPT_POWER_EVENTS:
		free(o->power_text);
		if ((o->power_text = strdup(arg)) == NULL)
			return -cli_error(o->cmd, "out of memory");
		o->model.n_power_events = 0;
		for (char *t = strtok(o->power_text, ","); t; t = strtok(NULL, ",")) {
			if (o->model.n_power_events == MAX_INPUTS)
				return -cli_usage_error(o->cmd, "--power-events: at most %d",
							MAX_INPUTS);
			o->power_list[o->model.n_power_events++] = t;
		}
		if (o->model.n_power_events == 0)
			return -cli_usage_error(o->cmd, "--power-events: no event named");
		/* "auto" alone is the default selection */
		o->model.power_events =
		    o->model.n_power_events == 1 && strcmp(o->power_list[0], "auto") == 0
			? NULL
			: o->power_list;
		return 1;
	case OPT_RIDGE:
		o->model.power_ridge = strtod(arg, &end);
		if (*arg == '\0' || *end != '\0' || !(o->model.power_ridge >= 0) ||
		    !isfinite(o->model.power_ridge))
			return -cli_usage_error(o->cmd, "--ridge %s: expected a number >= 0", arg);
		return 1;
	case OPT_UNWEIGHTED:
		o->model.unweighted = 1;
		return 1;
	case OPT_ROBUST:
		o->model.robust = 1;
		return 1;
	case OPT_NO_ANCHOR:
		o->model.no_anchor = 1;
		return 1;
	case 'f': /* -f, --format, as in every command that has one */
		if (cli_parse_format(arg, &o->format) < 0)
			return -cli_usage_error(o->cmd, "--format %s: expected table, csv or json",
						arg);
		return 1;
	default:
		return 0;
	}
}

#define MODEL_OPTIONS                                                                              \
	{"met", required_argument, NULL, OPT_MET}, {"power", required_argument, NULL, OPT_POWER},  \
	    {"power-events", required_argument, NULL, OPT_POWER_EVENTS},                           \
	    {"ridge", required_argument, NULL, OPT_RIDGE},                                         \
	    {"xcore", required_argument, NULL, OPT_XCORE},                                         \
	    {"unweighted", no_argument, NULL, OPT_UNWEIGHTED},                                     \
	    {"robust", no_argument, NULL, OPT_ROBUST},                                             \
	{                                                                                          \
		"no-anchor", no_argument, NULL, OPT_NO_ANCHOR                                      \
	}

#define MODEL_HELP                                                                                 \
	"      --met FORM          eq. (1): none, linear, mlp, cpi, auto (default:\n"              \
	"                          chosen by cross-validation over the training\n"                 \
	"                          workloads)\n"                                                   \
	"      --power FORM        eq. (7): per-freq, per-freq-v (default), voltage\n"             \
	"      --power-events LIST power regressors: roles (cycles, misses, ...), event\n"         \
	"                          names, 'all' or 'auto' (default: forward selection)\n"          \
	"      --ridge X           ridge on standardised power rates (default 0)\n"                \
	"      --xcore FORM        eq. (2): ratio, cpi, cpi-mpki, auto (default)\n"                \
	"      --unweighted        ordinary least squares instead of relative error\n"             \
	"      --robust            power fits minimise the absolute relative error (IRLS)\n"       \
	"      --no-anchor         eval: power elsewhere from the counters alone, not\n"           \
	"                          scaled by the power measured where the workload ran\n"

static void free_opts(opts *o)
{
	free(o->power_text);
}

/* Reads every dataset named; on failure reports and frees what was read. */
static int read_sets(const opts *o, char **paths, int n, mpxkit_pdata **sets)
{
	mpxkit_diag diag = {0};

	for (int i = 0; i < n; i++) {
		int rc = mpxkit_pdata_read(paths[i], &sets[i], &diag);
		if (rc < 0) {
			for (int k = 0; k < i; k++)
				mpxkit_pdata_free(sets[k]);
			return cli_lib_error(o->cmd, rc, &diag);
		}
	}
	return 0;
}

static void free_sets(mpxkit_pdata **sets, int n)
{
	for (int i = 0; i < n; i++)
		mpxkit_pdata_free(sets[i]);
	free(sets);
}

/* Words joined by blanks after a prefix: the command line and the data, for provenance. */
static char *joined(const char *prefix, int argc, char **argv)
{
	size_t len = strlen(prefix) + 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if ((s = malloc(len)) == NULL)
		return NULL;
	strcpy(s, prefix);
	for (int i = 0; i < argc; i++) {
		strcat(s, argv[i]);
		if (i + 1 < argc)
			strcat(s, " ");
	}
	return s;
}

/* ---- import -----------------------------------------------------------------------------------
 */

static int p_import(int argc, char **argv)
{
	static const struct option options[] = {
	    {"from", required_argument, NULL, OPT_FROM},
	    {"dataset", required_argument, NULL, OPT_DATASET},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	opts o = {.cmd = "predict import"};
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", options, NULL)) != -1) {
		switch (c) {
		case OPT_FROM:
			o.from = optarg;
			break;
		case OPT_DATASET:
			o.dataset = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'h':
			printf(
			    "usage: mpxkit predict import --from gemstone|nikov [--dataset NAME]\n"
			    "                             -o DATA.csv FILE...\n"
			    "\n"
			    "Turn the public GemStone (Walker et al.) or Nikov and Nunez-Yanez\n"
			    "files into one predict dataset (doc/predict-format.md, 'Importers').\n"
			    "For nikov give the sample files (.data) with their runtime_*.csv\n"
			    "table, or the cross-core run-time table.\n"
			    "\n"
			    "Options:\n"
			    "      --from KIND      gemstone or nikov\n"
			    "      --dataset NAME   the dataset's name (default: the first "
			    "file's)\n"
			    "  -o, --output FILE    the dataset to write ('-': standard output)\n"
			    "  -h, --help           show this help and exit\n");
			return cli_close_stdout(o.cmd);
		case ':':
			return need_arg(&o, argv);
		default:
			return bad_arg(&o, argv);
		}
	}
	if (o.from == NULL)
		return cli_usage_error(o.cmd, "--from gemstone|nikov is required");
	if (strcmp(o.from, "gemstone") != 0 && strcmp(o.from, "nikov") != 0)
		return cli_usage_error(o.cmd, "--from %s: expected gemstone or nikov", o.from);
	if (o.output == NULL)
		return cli_usage_error(o.cmd, "-o DATA.csv is required");
	if (optind >= argc)
		return cli_usage_error(o.cmd, "no input file");
	if (cli_check_outputs(o.cmd, &o.output, 1, (const char *const *)argv + optind,
			      (size_t)(argc - optind)) != CLI_OK)
		return CLI_FAIL;
	rc = mpxkit_pdata_import(o.from, (const char *const *)argv + optind,
				 (size_t)(argc - optind), o.dataset, &d, &diag);
	if (rc == 0)
		rc = mpxkit_pdata_write(d, o.output, &diag);
	mpxkit_pdata_free(d);
	return rc < 0 ? cli_lib_error(o.cmd, rc, &diag) : CLI_OK;
}

/* ---- train ------------------------------------------------------------------------------------
 */

static int p_train(int argc, char **argv)
{
	static const struct option options[] = {
	    MODEL_OPTIONS,
	    {"output", required_argument, NULL, 'o'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	opts o = {.cmd = "predict train"};
	mpxkit_pdata **sets = NULL;
	mpxkit_pmodel *m = NULL;
	mpxkit_diag diag = {0};
	char *command = NULL, *data = NULL;
	int c, rc, n;

	mpxkit_pmodel_options_default(&o.model);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vh", options, NULL)) != -1) {
		if ((rc = model_option(&o, c, optarg)) != 0) {
			if (rc < 0) {
				free_opts(&o);
				return -rc;
			}
			continue;
		}
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			printf(
			    "usage: mpxkit predict train -o MODEL.mpxp [OPTIONS] DATA.csv...\n"
			    "\n"
			    "Fit the equations of doc/predict.md on every row of the datasets and\n"
			    "write the model (.mpxp).\n"
			    "\n"
			    "Options:\n"
			    "  -o, --output FILE       the model to write\n"
			    "  -v, --verbose           print the fitted equations\n" MODEL_HELP
			    "  -h, --help              show this help and exit\n");
			free_opts(&o);
			return cli_close_stdout(o.cmd);
		case ':':
			free_opts(&o);
			return need_arg(&o, argv);
		default:
			free_opts(&o);
			return bad_arg(&o, argv);
		}
	}
	if (o.output == NULL || optind >= argc) {
		free_opts(&o);
		return cli_usage_error(o.cmd,
				       o.output ? "no dataset" : "-o MODEL.mpxp is required");
	}
	if (cli_check_outputs(o.cmd, &o.output, 1, (const char *const *)argv + optind,
			      (size_t)(argc - optind)) != CLI_OK) {
		free_opts(&o);
		return CLI_FAIL;
	}
	n = argc - optind;
	if ((sets = calloc((size_t)n, sizeof *sets)) == NULL) {
		free_opts(&o);
		return cli_error(o.cmd, "out of memory");
	}
	if ((rc = read_sets(&o, argv + optind, n, sets)) != 0) {
		free(sets);
		free_opts(&o);
		return rc;
	}
	command = joined("mpxkit ", argc + 1, argv - 1);
	data = joined("", n, argv + optind);
	o.model.command = command;
	o.model.data = data;
	rc = mpxkit_pmodel_train((const mpxkit_pdata *const *)sets, (size_t)n, &o.model, NULL, NULL,
				 &m, &diag);
	if (rc == 0)
		rc = mpxkit_pmodel_save(m, o.output, &diag);
	if (rc < 0) {
		rc = cli_lib_error(o.cmd, rc, &diag);
	} else if (o.verbose) {
		char *text = mpxkit_pmodel_describe(m);
		fputs(text ? text : "", stdout);
		free(text);
		rc = cli_close_stdout(o.cmd);
	}
	mpxkit_pmodel_free(m);
	free_sets(sets, n);
	free(command);
	free(data);
	free_opts(&o);
	return rc;
}

/* ---- apply ------------------------------------------------------------------------------------
 */

static void config_text(char *out, size_t cap, const char *core, double mhz)
{
	snprintf(out, cap, "%s@%g", core, mhz);
}

/*
 * apply streams: a row's predictions are written as they are made, through a 1 MiB buffer, to
 * stdout or to an mpxkit_outfile (whole under its name at the end), so memory stays flat and
 * text is made at the rate predictions are (doc/benchmarks.md).  Table columns are as wide as
 * the longest workload and configuration name, which are known before the first row.
 */
typedef struct emitter {
	const char *cmd;
	cli_format format;
	mpxkit_outfile *of;
	char *buf;
	size_t len, cap;
	int failed;
	int name_w, cfg_w;
	size_t rows;
} emitter;

static void emit_flush(emitter *e)
{
	mpxkit_diag diag = {0};

	if (e->failed || e->len == 0)
		return;
	if (e->of) {
		if (mpxkit_outfile_write(e->of, e->buf, e->len, &diag) < 0) {
			cli_lib_error(e->cmd, diag.code, &diag);
			e->failed = 1;
		}
	} else if (fwrite(e->buf, 1, e->len, stdout) != e->len) {
		e->failed = 1;
	}
	e->len = 0;
}

static void emit(emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(emitter *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (e->cap - e->len < 512)
		emit_flush(e);
	va_start(ap, fmt);
	n = vsnprintf(e->buf + e->len, e->cap - e->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < e->cap - e->len)
		e->len += (size_t)n;
}

/*
 * A finite number with 9 significant digits, as %.9g writes it (the last digit may differ by
 * one where v lies within an ulp of a tie): glibc's printf spends most of apply's time in
 * multi-precision digit generation, which 9 digits do not need.  Returns the length.
 */
static size_t format_g9(char *out, double v)
{
	char digits[16];
	size_t n = 0, len = 0;
	int e10, nd = 9;
	uint64_t m;

	if (v == 0) {
		strcpy(out, "0");
		return 1;
	}
	if (v < 0) {
		out[len++] = '-';
		v = -v;
	}
	e10 = (int)floor(log10(v));
	if (e10 < -290 || e10 > 290) /* 10^(8 - e10) would leave the doubles: printf's way */
		return len + (size_t)sprintf(out + len, "%.9g", v);
	m = (uint64_t)llround(v * pow(10.0, 8 - e10));
	if (m >= 1000000000u) {
		m = (m + 5) / 10;
		e10++;
	} else if (m < 100000000u) {
		m *= 10;
		e10--;
	}
	for (int i = nd - 1; i >= 0; i--, m /= 10)
		digits[i] = (char)('0' + m % 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (e10 < -4 || e10 >= 9) { /* d.ddde+XX */
		out[len++] = digits[0];
		if (nd > 1) {
			out[len++] = '.';
			memcpy(out + len, digits + 1, (size_t)nd - 1);
			len += (size_t)nd - 1;
		}
		len += (size_t)sprintf(out + len, "e%c%02d", e10 < 0 ? '-' : '+', abs(e10));
		return len;
	}
	if (e10 < 0) { /* 0.000ddd */
		out[len++] = '0';
		out[len++] = '.';
		for (int i = -1; i > e10; i--)
			out[len++] = '0';
		memcpy(out + len, digits, (size_t)nd);
		return len + (size_t)nd;
	}
	for (n = 0; n < (size_t)nd || (int)n <= e10; n++) { /* ddd.ddd */
		if ((int)n == e10 + 1)
			out[len++] = '.';
		out[len++] = n < (size_t)nd ? digits[n] : '0';
	}
	return len;
}

/* A number: missing (NaN) is empty in CSV, null in JSON, "-" in a table. */
static void emit_value(emitter *e, double v)
{
	int known = isfinite(v);

	if (e->format == CLI_FORMAT_TABLE) {
		if (known)
			emit(e, " %12.6g", v);
		else
			emit(e, " %12s", "-");
		return;
	}
	if (e->cap - e->len < 64)
		emit_flush(e);
	if (e->format == CLI_FORMAT_CSV)
		e->buf[e->len++] = ',';
	if (known)
		e->len += format_g9(e->buf + e->len, v);
	else if (e->format == CLI_FORMAT_JSON)
		memcpy(e->buf + e->len, "null", 4), e->len += 4;
}

static const char *const apply_keys[] = {"time_s", "cpi", "power_w", "energy_j", "ips"};

static void emit_header(emitter *e)
{
	if (e->format == CLI_FORMAT_CSV) {
		emit(e, "row,workload,from,to,time_s,cpi,power_w,energy_j,ips\n");
	} else if (e->format == CLI_FORMAT_TABLE) {
		emit(e, "%8s  %-*s  %-*s  %-*s", "row", e->name_w, "workload", e->cfg_w, "from",
		     e->cfg_w, "to");
		for (int i = 0; i < 5; i++)
			emit(e, " %12s", apply_keys[i]);
		emit(e, "\n");
	} else {
		emit(e, "[");
	}
}

static void emit_prediction(emitter *e, size_t row, const char *workload, const char *from,
			    const char *to, const mpxkit_prediction *p)
{
	const double v[5] = {p->time_s, p->cpi, p->power_w, p->energy_j, p->ips};

	if (e->format == CLI_FORMAT_JSON) {
		/* Names hold no quote, backslash or control byte (doc/predict-format.md). */
		emit(e,
		     "%s\n  {\"row\": %zu, \"workload\": \"%s\", \"from\": \"%s\", \"to\": \"%s\"",
		     e->rows ? "," : "", row, workload, from, to);
		for (int i = 0; i < 5; i++) {
			emit(e, ", \"%s\": ", apply_keys[i]);
			emit_value(e, v[i]);
		}
		emit(e, "}");
	} else {
		if (e->format == CLI_FORMAT_CSV)
			emit(e, "%zu,%s,%s,%s", row, workload, from, to);
		else
			emit(e, "%8zu  %-*s  %-*s  %-*s", row, e->name_w, workload, e->cfg_w, from,
			     e->cfg_w, to);
		for (int i = 0; i < 5; i++)
			emit_value(e, v[i]);
		emit(e, "\n");
	}
	e->rows++;
}

static void emit_widths(emitter *e, const mpxkit_pmodel *m, const mpxkit_pdata *d)
{
	char cfg[96];

	e->name_w = 8;
	e->cfg_w = 4;
	for (size_t i = 0; i < d->n_workloads; i++)
		if ((int)strlen(d->workloads[i]) > e->name_w)
			e->name_w = (int)strlen(d->workloads[i]);
	for (size_t i = 0; i < d->n_rows; i++) {
		config_text(cfg, sizeof cfg, d->cores[d->rows[i].core], d->rows[i].freq_mhz);
		if ((int)strlen(cfg) > e->cfg_w)
			e->cfg_w = (int)strlen(cfg);
	}
	for (size_t k = 0; k < mpxkit_pmodel_n_configs(m); k++) {
		const mpxkit_pconfig *c = mpxkit_pmodel_config(m, k);
		config_text(cfg, sizeof cfg, c->core, c->freq_mhz);
		if ((int)strlen(cfg) > e->cfg_w)
			e->cfg_w = (int)strlen(cfg);
	}
}

static int apply_rows(const opts *o, const mpxkit_pmodel *m, const mpxkit_pdata *d, emitter *e)
{
	size_t nc = mpxkit_pmodel_n_configs(m);
	mpxkit_prediction *pred = calloc(nc + 1, sizeof *pred);
	char(*to)[96] = calloc(nc + 1, sizeof *to);
	mpxkit_pbinding b;
	mpxkit_diag diag = {0};
	int rc = mpxkit_pbinding_pdata(m, d, &b, &diag);

	if (pred == NULL || to == NULL) {
		free(pred);
		free(to);
		return cli_error(o->cmd, "out of memory");
	}
	if (rc < 0) {
		free(pred);
		free(to);
		return cli_lib_error(o->cmd, rc, &diag);
	}
	for (size_t k = 0; k < nc; k++)
		config_text(to[k], sizeof to[k], mpxkit_pmodel_config(m, k)->core,
			    mpxkit_pmodel_config(m, k)->freq_mhz);
	/* Every row's core kind is known before the first line, so a refusal prints nothing else.
	 */
	for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
		mpxkit_pobs ob;
		if ((rc = mpxkit_pobs_row(m, d, i, &ob, &diag)) < 0)
			rc = cli_lib_error(o->cmd, rc, &diag);
	}
	if (rc != 0) {
		free(pred);
		free(to);
		return rc;
	}
	emit_header(e);
	for (size_t i = 0; i < d->n_rows && !e->failed; i++) {
		const mpxkit_pdata_row *r = &d->rows[i];
		mpxkit_pobs ob;
		char from[96];
		mpxkit_pobs_row(m, d, i, &ob, NULL);
		/* A row without cycles or instructions (an idle period) has no prediction. */
		if (mpxkit_predict(m, &b, &ob, pred, NULL) < 0)
			for (size_t k = 0; k < nc; k++)
				pred[k] = (mpxkit_prediction){NAN, NAN, NAN, NAN, NAN};
		config_text(from, sizeof from, d->cores[r->core], r->freq_mhz);
		for (size_t k = 0; k < nc; k++)
			emit_prediction(e, i + 1, d->workloads[r->workload], from, to[k], &pred[k]);
	}
	if (rc == 0 && e->format == CLI_FORMAT_JSON)
		emit(e, e->rows ? "\n]\n" : "]\n");
	emit_flush(e);
	free(pred);
	free(to);
	return rc;
}

static int p_apply(int argc, char **argv)
{
	static const struct option options[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	opts o = {.cmd = "predict apply"};
	mpxkit_pmodel *m = NULL;
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};
	emitter e = {.cmd = o.cmd, .cap = 1u << 20};
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:o:f:h", options, NULL)) != -1) {
		if ((rc = model_option(&o, c, optarg)) != 0) {
			if (rc < 0)
				return -rc;
			continue;
		}
		switch (c) {
		case 'm':
			o.model_path = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'h':
			printf(
			    "usage: mpxkit predict apply -m MODEL.mpxp [-f F] [-o OUT] "
			    "INPUT.csv\n"
			    "\n"
			    "For every row of a dataset (a run or a sampling period), the "
			    "predicted\n"
			    "time, CPI, power, energy and instructions per second of the same "
			    "work\n"
			    "on every (core kind, frequency) the model knows.  A row's measured\n"
			    "power, where it has one, anchors the power predicted elsewhere.\n"
			    "\n"
			    "Options:\n"
			    "  -m, --model FILE     the model (mpxkit predict train)\n"
			    "  -f, --format F       table (default), csv or json\n"
			    "  -o, --output FILE    write there instead of standard output\n"
			    "  -h, --help           show this help and exit\n");
			return cli_close_stdout(o.cmd);
		case ':':
			return need_arg(&o, argv);
		default:
			return bad_arg(&o, argv);
		}
	}
	if (o.model_path == NULL)
		return cli_usage_error(o.cmd, "-m MODEL.mpxp is required");
	if (optind != argc - 1)
		return cli_usage_error(o.cmd, optind >= argc ? "no input dataset"
							     : "one input dataset at a time");
	{
		const char *inputs[] = {o.model_path, argv[optind]};
		if (cli_check_outputs(o.cmd, &o.output, 1, inputs, 2) != CLI_OK)
			return CLI_FAIL;
	}
	if ((rc = mpxkit_pmodel_load(o.model_path, &m, &diag)) < 0 ||
	    (rc = mpxkit_pdata_read(argv[optind], &d, &diag)) < 0 ||
	    (o.output && strcmp(o.output, "-") != 0 &&
	     (rc = mpxkit_outfile_open(&e.of, o.output, &diag)) < 0)) {
		mpxkit_pmodel_free(m);
		mpxkit_pdata_free(d);
		return cli_lib_error(o.cmd, rc, &diag);
	}
	e.format = o.format;
	emit_widths(&e, m, d);
	if ((e.buf = malloc(e.cap)) == NULL)
		rc = cli_error(o.cmd, "out of memory");
	else if ((rc = apply_rows(&o, m, d, &e)) == 0 && e.failed)
		rc = e.of		       ? CLI_FAIL
		     : cli_close_stdout(o.cmd) ? CLI_FAIL
					       : cli_error(o.cmd, "write error");
	if (rc == 0 && e.of) {
		rc = mpxkit_outfile_commit(e.of, &diag) < 0 ? cli_lib_error(o.cmd, diag.code, &diag)
							    : 0;
		e.of = NULL;
	} else if (rc == 0) {
		rc = cli_close_stdout(o.cmd);
	}
	mpxkit_outfile_abort(e.of);
	free(e.buf);
	mpxkit_pdata_free(d);
	mpxkit_pmodel_free(m);
	return rc;
}

/* ---- eval -------------------------------------------------------------------------------------
 */

static const cli_column eval_columns[] = {
    {"dataset", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"target", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"from", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"to", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"n", NULL, CLI_COL_INT, 0, 0, NULL},
    {"mape", "MAPE %", CLI_COL_FIXED, 2, 0, NULL},
    {"baseline", NULL, CLI_COL_TEXT, 0, 0, NULL},
    {"baseline_mape", "baseline MAPE %", CLI_COL_FIXED, 2, 0, NULL},
};

static int eval_table(const opts *o, const mpxkit_eval_result *r, int pairs)
{
	cli_table *t = cli_table_new(eval_columns, sizeof eval_columns / sizeof eval_columns[0]);
	int rc;

	if (t == NULL)
		return cli_error(o->cmd, "out of memory");
	cli_table_comment(t, "split %s%s: %zu held-out workloads in %zu fold%s%s", o->split,
			  o->validate ? " (validation: training workloads only)" : "",
			  r->n_test_workloads, r->n_folds, r->n_folds == 1 ? "" : "s",
			  r->n_left_out ? "" : "");
	if (r->n_left_out)
		cli_table_comment(t, "%zu workload%s in neither part of the split %s left out",
				  r->n_left_out, cli_s(r->n_left_out),
				  r->n_left_out == 1 ? "was" : "were");
	cli_table_comment(t, "MAPE in %%; summaries first (same: own configuration; adjacent "
			     "and extreme frequency pairs; all: every pair of one core kind; "
			     "cross: core kind pairs)");
	for (size_t i = 0; i < r->n_rows; i++) {
		const mpxkit_eval_row *x = &r->rows[i];
		if (!pairs && !x->summary)
			continue;
		cli_table_text(t, x->dataset);
		cli_table_text(t, mpxkit_eval_target_name(x->target));
		cli_table_text(t, x->from);
		cli_table_text(t, x->to);
		cli_table_uint(t, x->n);
		cli_table_real(t, x->mape);
		cli_table_text(t, x->baseline);
		cli_table_real(t, x->baseline_mape);
	}
	rc = cli_table_emit(o->cmd, t, o->format, o->output);
	cli_table_free(t);
	return rc;
}

/* One chart per target: predicted and baseline against measured, y = x drawn. */
static void eval_chart(FILE *f, const mpxkit_eval_result *r, int target, double *buf)
{
	static const char *const units[] = {"time (s, or ns per instruction)", "power (W)",
					    "energy (J)"};
	size_t n = 0;
	double *mx = buf, *py = buf + r->n_points, *by = buf + 2 * r->n_points;
	char title[96], xl[96], yl[96];
	cli_chart chart = {title, xl, yl, 720, 480, 1, 1};
	cli_series s[2];

	for (size_t i = 0; i < r->n_points; i++)
		if (r->points[i].target == target) {
			mx[n] = r->points[i].measured;
			py[n] = r->points[i].predicted;
			by[n++] = r->points[i].baseline;
		}
	snprintf(title, sizeof title, "%s: predicted against measured (held-out workloads)",
		 mpxkit_eval_target_name(target));
	snprintf(xl, sizeof xl, "measured %s", units[target]);
	snprintf(yl, sizeof yl, "predicted %s", units[target]);
	/* The model drawn last, on top of the baseline it is compared with. */
	s[0] = (cli_series){"baseline", mx, by, n, 1, NULL};
	s[1] = (cli_series){"model", mx, py, n, 1, NULL};
	cli_svg_lines(f, &chart, s, 2);
}

static int eval_plot(const opts *o, const mpxkit_eval_result *r)
{
	double *buf = malloc((3 * r->n_points + 1) * sizeof *buf);
	int targets[3], n_targets = 0, rc;
	cli_memout mem;

	if (buf == NULL || cli_memout_open(&mem) < 0) {
		free(buf);
		return cli_error(o->cmd, "out of memory");
	}
	for (int t = 0; t < 3; t++)
		for (size_t i = 0; i < r->n_points; i++)
			if (r->points[i].target == t) {
				targets[n_targets++] = t;
				break;
			}
	/* One document, the charts stacked: each chart is its own <svg>, placed by a group. */
	cli_svg_document(mem.f);
	fprintf(mem.f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"%d\" "
		"viewBox=\"0 0 720 %d\">\n",
		480 * (n_targets ? n_targets : 1), 480 * (n_targets ? n_targets : 1));
	for (int i = 0; i < n_targets; i++) {
		fprintf(mem.f, "<g transform=\"translate(0,%d)\">\n", 480 * i);
		eval_chart(mem.f, r, targets[i], buf);
		fputs("</g>\n", mem.f);
	}
	fputs("</svg>\n", mem.f);
	free(buf);
	if (cli_memout_close(&mem) < 0) {
		free(mem.text);
		return cli_error(o->cmd, "%s: out of memory", o->plot);
	}
	rc = cli_write_file(o->cmd, o->plot, mem.text, mem.len);
	free(mem.text);
	return rc;
}

/* eval's --plot and -o against its datasets and a split file (a spec that is not hash or loo). */
static int check_eval_outputs(const opts *o, char **sets, int n)
{
	const char *outputs[] = {o->plot, o->output};
	const char **inputs = malloc(((size_t)n + 1) * sizeof *inputs);
	int file = strcmp(o->split, "loo") != 0 && strncmp(o->split, "hash", 4) != 0;
	int rc;

	if (inputs == NULL)
		return cli_error(o->cmd, "out of memory");
	for (int i = 0; i < n; i++)
		inputs[i] = sets[i];
	inputs[n] = file ? o->split : NULL;
	rc = cli_check_outputs(o->cmd, outputs, 2, inputs, (size_t)n + 1);
	free(inputs);
	return rc;
}

static int p_eval(int argc, char **argv)
{
	static const struct option options[] = {
	    MODEL_OPTIONS,
	    {"split", required_argument, NULL, OPT_SPLIT},
	    {"validate", no_argument, NULL, OPT_VALIDATE},
	    {"pairs", no_argument, NULL, 'p'},
	    {"format", required_argument, NULL, 'f'},
	    {"plot", required_argument, NULL, OPT_PLOT},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	opts o = {.cmd = "predict eval", .split = "hash"};
	mpxkit_pdata **sets = NULL;
	mpxkit_split *split = NULL;
	mpxkit_eval_result *r = NULL;
	mpxkit_diag diag = {0};
	int c, rc, n, pairs = 0;

	mpxkit_pmodel_options_default(&o.model);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":po:f:h", options, NULL)) != -1) {
		if ((rc = model_option(&o, c, optarg)) != 0) {
			if (rc < 0) {
				free_opts(&o);
				return -rc;
			}
			continue;
		}
		switch (c) {
		case OPT_SPLIT:
			o.split = optarg;
			break;
		case OPT_VALIDATE:
			o.validate = 1;
			break;
		case 'p':
			pairs = 1;
			break;
		case OPT_PLOT:
			o.plot = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'h':
			printf(
			    "usage: mpxkit predict eval [OPTIONS] DATA.csv...\n"
			    "\n"
			    "Train on some workloads, predict the others, and print the mean\n"
			    "absolute percentage error (MAPE) of time, power and energy per pair "
			    "of\n"
			    "configurations next to the baselines: f/f' scaling of time, a "
			    "constant\n"
			    "CPI ratio across core kinds, E (V'/V)^2 for energy (doc/predict.md).\n"
			    "Workloads are held out whole, never rows.\n"
			    "\n"
			    "Options:\n"
			    "      --split SPEC        hash (30 %% of workloads by FNV-1a), "
			    "hash:PCT,\n"
			    "                          loo (leave one workload out), or a split "
			    "file\n"
			    "                          (train and test columns; default hash)\n"
			    "      --validate          only the training part, one workload out at "
			    "a\n"
			    "                          time: the figures to choose settings with\n"
			    "  -p, --pairs             every pair of configurations, not summaries "
			    "only\n"
			    "  -f, --format F          table (default), csv or json\n"
			    "      --plot OUT.svg      predicted against measured, per target\n"
			    "  -o, --output FILE       write the table there\n" MODEL_HELP
			    "  -h, --help              show this help and exit\n");
			free_opts(&o);
			return cli_close_stdout(o.cmd);
		case ':':
			free_opts(&o);
			return need_arg(&o, argv);
		default:
			free_opts(&o);
			return bad_arg(&o, argv);
		}
	}
	if (optind >= argc) {
		free_opts(&o);
		return cli_usage_error(o.cmd, "no dataset");
	}
	if ((rc = mpxkit_split_parse(o.split, o.validate, &split, &diag)) == -MPXKIT_EINVAL) {
		free_opts(&o);
		return cli_usage_error(o.cmd, "%s", diag.msg);
	}
	if (rc < 0) {
		mpxkit_split_free(split);
		free_opts(&o);
		return cli_lib_error(o.cmd, rc, &diag);
	}
	if ((rc = check_eval_outputs(&o, argv + optind, argc - optind)) != CLI_OK) {
		mpxkit_split_free(split);
		free_opts(&o);
		return rc;
	}
	n = argc - optind;
	if ((sets = calloc((size_t)n, sizeof *sets)) == NULL) {
		rc = cli_error(o.cmd, "out of memory");
		goto out;
	}
	if ((rc = read_sets(&o, argv + optind, n, sets)) != 0) {
		free(sets);
		sets = NULL;
		goto out;
	}
	rc = mpxkit_predict_eval((const mpxkit_pdata *const *)sets, (size_t)n, split, &o.model, &r,
				 &diag);
	if (rc < 0) {
		rc = cli_lib_error(o.cmd, rc, &diag);
		goto out;
	}
	rc = eval_table(&o, r, pairs);
	if (rc == 0 && o.plot)
		rc = eval_plot(&o, r);
out:
	mpxkit_eval_result_free(r);
	if (sets)
		free_sets(sets, n);
	mpxkit_split_free(split);
	free_opts(&o);
	return rc;
}

/* ---- the machine: list, record ----------------------------------------------------------------
 */

/*
 * MPXKIT_SYSFS_ROOT names the filesystem root the probe reads (a fake tree in tests); hwloc
 * is pointed at the same root unless HWLOC_FSROOT already says otherwise.  hwloc's own messages
 * on a tree it cannot use are silenced (HWLOC_HIDE_ERRORS=2 unless set): what is missing is
 * told in the one line of ours.
 */
static int probe_platform(const char *cmd, mpxkit_platform *p)
{
	const char *root = getenv("MPXKIT_SYSFS_ROOT");
	mpxkit_diag diag = {0};
	int rc;

	if ((root && root[0] && getenv("HWLOC_FSROOT") == NULL &&
	     setenv("HWLOC_FSROOT", root, 1) < 0) ||
	    (getenv("HWLOC_HIDE_ERRORS") == NULL && setenv("HWLOC_HIDE_ERRORS", "2", 1) < 0))
		return cli_error(cmd, "out of memory");
	if ((rc = mpxkit_platform_probe(p, root, &diag)) < 0)
		return cli_lib_error(cmd, rc, &diag);
	return 0;
}

static void print_cpus(const mpxkit_core_kind *k)
{
	for (size_t i = 0; i < k->n_cpus;) {
		size_t j = i;
		while (j + 1 < k->n_cpus && k->cpus[j + 1] == k->cpus[j] + 1)
			j++;
		printf("%s%d", i ? "," : "", k->cpus[i]);
		if (j > i)
			printf("-%d", k->cpus[j]);
		i = j + 1;
	}
}

static int p_list(int argc, char **argv)
{
	const char *cmd = "predict list";
	mpxkit_platform *p;
	int rc;

	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf(
		    "usage: mpxkit predict list\n"
		    "\n"
		    "This machine's core kinds (hwloc cpukinds), the frequencies cpufreq offers\n"
		    "each, and the energy counters powercap exposes, or that there are none.\n"
		    "MPXKIT_SYSFS_ROOT reads another root instead of / (a copy, or a test "
		    "tree).\n");
		return cli_close_stdout(cmd);
	}
	if (argc > 1)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
	if ((p = malloc(sizeof *p)) == NULL)
		return cli_error(cmd, "out of memory");
	if ((rc = probe_platform(cmd, p)) != 0) {
		free(p);
		return rc;
	}
	printf("core kinds (hwloc cpukinds): %zu\n", p->n_kinds);
	for (size_t i = 0; i < p->n_kinds; i++) {
		const mpxkit_core_kind *k = &p->kinds[i];
		printf("  %-12s CPUs ", k->name);
		print_cpus(k);
		if (k->n_freqs == 0)
			printf("  frequencies: none (%s)\n",
			       k->cpufreq ? "cpufreq lists none" : "no cpufreq");
		for (size_t f = 0; f < k->n_freqs; f++)
			printf("%s%g", f ? " " : "  frequencies (MHz): ", k->freq_mhz[f]);
		if (k->n_freqs)
			putchar('\n');
	}
	printf("energy counters (powercap): %zu\n", p->n_zones);
	for (size_t i = 0; i < p->n_zones; i++)
		printf("  %-12s %s\n", p->zones[i].name, p->zones[i].path);
	if (p->missing[0])
		printf("predict record cannot run here: %s\n", p->missing);
	free(p);
	return cli_close_stdout(cmd);
}

typedef struct rec_state {
	const char *cmd;
	int quiet;
} rec_state;

static void rec_progress(void *arg, size_t done, size_t total, const char *core, double mhz)
{
	const rec_state *s = arg;

	if (!s->quiet)
		fprintf(stderr, "mpxkit %s: run %zu/%zu on %s at %g MHz\n", s->cmd, done + 1, total,
			core, mhz);
}

/* "role=EVENT" into the record options. */
static int set_role(const char *cmd, mpxkit_record_options *r, char *text)
{
	char *eq = strchr(text, '=');
	int role;

	if (eq == NULL || eq[1] == '\0')
		return cli_usage_error(cmd, "--role %s: expected ROLE=EVENT", text);
	*eq = '\0';
	if ((role = mpxkit_role_lookup(text)) < 0)
		return cli_usage_error(cmd,
				       "--role %s: no such role (cycles, instructions, misses, "
				       "icache, dcache, loads, stores, branches, int_ops, "
				       "fp_ops)",
				       text);
	r->roles[role] = eq + 1;
	return 0;
}

static int split_events(const char *cmd, char *list, const char **events, size_t *n)
{
	*n = 0;
	for (char *e = strtok(list, ","); e; e = strtok(NULL, ",")) {
		if (*n == MAX_INPUTS)
			return cli_usage_error(cmd, "-e: at most %d events", MAX_INPUTS);
		events[(*n)++] = e;
	}
	return *n ? 0 : cli_usage_error(cmd, "-e: no event named");
}

/* An engine setting through its own parser, told as the option's. */
static int engine_set(const char *cmd, mpxkit_sched_config *cfg, const char *option,
		      const char *key, const char *value)
{
	mpxkit_diag diag = {0};
	const char *why;

	if (mpxkit_sched_config_set(cfg, key, value, &diag) == 0)
		return 0;
	why = strstr(diag.msg, ": ");
	return cli_usage_error(cmd, "%s %s: %s", option, value, why ? why + 2 : diag.msg);
}

static int p_record(int argc, char **argv)
{
	static const struct option options[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"events", required_argument, NULL, 'e'},
	    {"role", required_argument, NULL, OPT_ROLE},
	    {"runs", required_argument, NULL, OPT_RUNS},
	    {"workload", required_argument, NULL, 'w'},
	    {"threads", required_argument, NULL, OPT_THREADS},
	    {"counters", required_argument, NULL, 'c'},
	    {"slice-us", required_argument, NULL, OPT_SLICE},
	    {"estimator", required_argument, NULL, OPT_ESTIMATOR},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const dflt_events[] = {"perf::CYCLES", "perf::INSTRUCTIONS",
						  "perf::CACHE-MISSES"};
	const char *cmd = "predict record", *output = NULL, *events[MAX_INPUTS];
	char *event_list = NULL, *roles_text[MPXKIT_ROLE_COUNT] = {0};
	mpxkit_record_options r = {.runs = 1};
	rec_state st = {.cmd = cmd};
	mpxkit_platform *p = NULL;
	mpxkit_pdata *d = NULL;
	mpxkit_diag diag = {0};
	size_t n_events = 0, n_roles = 0;
	long v;
	int c, rc = 0;

	cli_warn_unknown_env(cmd);
	if ((rc = mpxkit_sched_config_env(&r.sched, &diag)) < 0)
		return cli_lib_error(cmd, rc, &diag);
	optind = 1;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "+:o:e:w:c:qh", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'e':
			free(event_list);
			if ((event_list = strdup(optarg)) == NULL)
				rc = cli_error(cmd, "out of memory");
			else
				rc = split_events(cmd, event_list, events, &n_events);
			break;
		case OPT_ROLE:
			if (n_roles == MPXKIT_ROLE_COUNT) {
				rc = cli_usage_error(cmd, "--role: at most %d", MPXKIT_ROLE_COUNT);
				break;
			}
			if ((roles_text[n_roles] = strdup(optarg)) == NULL)
				rc = cli_error(cmd, "out of memory");
			else
				rc = set_role(cmd, &r, roles_text[n_roles++]);
			break;
		case OPT_RUNS:
			if (cli_parse_long(optarg, 1, 1000, &v) < 0)
				rc = cli_usage_error(cmd, "--runs %s: expected 1 to 1000", optarg);
			r.runs = (unsigned)v;
			break;
		case OPT_THREADS:
			if (cli_parse_long(optarg, 1, 4096, &v) < 0)
				rc = cli_usage_error(cmd, "--threads %s: expected 1 to 4096",
						     optarg);
			r.threads = (unsigned)v;
			break;
		case 'w':
			r.workload = optarg;
			break;
		case 'c':
			rc = engine_set(cmd, &r.sched, "--counters", "MPXKIT_COUNTERS", optarg);
			break;
		case OPT_SLICE:
			rc = engine_set(cmd, &r.sched, "--slice-us", "MPXKIT_SLICE_US", optarg);
			break;
		case OPT_ESTIMATOR:
			rc = engine_set(cmd, &r.sched, "--estimator", "MPXKIT_ESTIMATOR", optarg);
			break;
		case 'q':
			st.quiet = 1;
			break;
		case 'h':
			printf(
			    "usage: mpxkit predict record -o DATA.csv [OPTIONS] -- CMD [ARGS...]\n"
			    "\n"
			    "Run CMD at every frequency cpufreq offers on every core kind (pinned "
			    "to\n"
			    "its CPUs), count its events through mpxkit's engine (multiplexed on "
			    "the\n"
			    "counters there are), read the energy from powercap, and write one row "
			    "per\n"
			    "run.  Frequencies are restored afterwards.  Needs root for cpufreq.\n"
			    "\n"
			    "Options:\n"
			    "  -o, --output FILE       the dataset to write\n"
			    "  -e, --events LIST       events to count (default perf::CYCLES,\n"
			    "                          perf::INSTRUCTIONS,perf::CACHE-MISSES)\n"
			    "      --role ROLE=EVENT   which event plays a role (default: the "
			    "three\n"
			    "                          defaults as cycles, instructions, misses)\n"
			    "      --runs N            runs per configuration (default 1)\n"
			    "  -w, --workload NAME     the workload's name (default: CMD's)\n"
			    "      --threads N         the threads column (default 1)\n"
			    "  -c, --counters C        events counted at once (engine default)\n"
			    "      --slice-us US       slice length (default %d)\n"
			    "      --estimator E       the engine's estimator (default %s)\n"
			    "  -q, --quiet             no progress lines\n"
			    "  -h, --help              show this help and exit\n"
			    "\n"
			    "MPXKIT_SYSFS_ROOT reads cpufreq and powercap under another root;\n"
			    "MPXKIT_REPLAY counts from a recorded trace instead of perf_event.\n",
			    MPXKIT_SCHED_DEFAULT_SLICE_US, MPXKIT_SCHED_DEFAULT_ESTIMATOR);
			rc = cli_close_stdout(cmd);
			goto out;
		case ':':
			rc = need_arg(&(opts){.cmd = cmd}, argv);
			break;
		default:
			rc = bad_arg(&(opts){.cmd = cmd}, argv);
		}
	}
	if (rc != 0)
		goto out;
	if (output == NULL) {
		rc = cli_usage_error(cmd, "-o DATA.csv is required");
		goto out;
	}
	if (optind >= argc) {
		rc = cli_usage_error(cmd, "no command to run");
		goto out;
	}
	if (n_events == 0) {
		for (size_t i = 0; i < 3; i++)
			events[n_events++] = dflt_events[i];
		if (n_roles == 0) {
			r.roles[MPXKIT_ROLE_CYCLES] = dflt_events[0];
			r.roles[MPXKIT_ROLE_INSTRUCTIONS] = dflt_events[1];
			r.roles[MPXKIT_ROLE_MISSES] = dflt_events[2];
		}
	}
	r.events = events;
	r.n_events = n_events;
	if (r.workload == NULL) {
		const char *b = strrchr(argv[optind], '/');
		r.workload = b ? b + 1 : argv[optind];
	}
	if ((p = malloc(sizeof *p)) == NULL) {
		rc = cli_error(cmd, "out of memory");
		goto out;
	}
	if ((rc = probe_platform(cmd, p)) != 0)
		goto out;
	if (p->missing[0]) {
		rc = cli_error(cmd, "%s", p->missing);
		goto out;
	}
	if ((rc = cli_check_outputs(cmd, &output, 1, (const char *const *)argv + optind,
				    cli_program_is_path(argv[optind]))) != CLI_OK)
		goto out;
	r.platform = p;
	r.progress = rec_progress;
	r.arg = &st;
	rc = mpxkit_predict_record(&r, argv + optind, &d, &diag);
	if (rc == 0)
		rc = mpxkit_pdata_write(d, output, &diag);
	rc = rc < 0 ? cli_lib_error(cmd, rc, &diag) : CLI_OK;
out:
	mpxkit_pdata_free(d);
	free(p);
	free(event_list);
	for (size_t i = 0; i < n_roles; i++)
		free(roles_text[i]);
	return rc;
}

/* ---- live -------------------------------------------------------------------------------------
 */

typedef struct live_out {
	const mpxkit_pmodel *m;
	cli_format format;
	FILE *f;
	cli_json *json;
	int started, failed;
} live_out;

/*
 * The head of the output, written with the first period (or at the end of a run without one),
 * so a run refused before it starts prints its one error line and nothing else.
 */
static void live_start(live_out *o)
{
	o->started = 1;
	if (o->format == CLI_FORMAT_JSON) {
		if ((o->json = cli_json_new(o->f)) == NULL)
			o->failed = 1;
		else
			cli_json_array(o->json);
	} else if (o->format == CLI_FORMAT_CSV) {
		fputs("period,t0_s,t1_s,to,cpu_time_s,cpi,power_w,energy_j,ips\n", o->f);
	} else {
		fprintf(o->f, "%6s %8s %8s %-16s %13s %13s %13s %13s %13s\n", "period", "t0_s",
			"t1_s", "to", "cpu_time_s", "cpi", "power_w", "energy_j", "ips");
	}
}

static void print_value(FILE *f, double v, int csv)
{
	if (isnan(v))
		fputs(csv ? "" : "             -", f);
	else
		fprintf(f, csv ? "%.6g" : " %13.6g", v);
}

static void on_period(void *arg, size_t period, double t0, double t1, const mpxkit_prediction *pred,
		      size_t n)
{
	live_out *o = arg;
	char cfg[96];

	if (!o->started)
		live_start(o);
	if (o->failed)
		return;
	for (size_t k = 0; k < n; k++) {
		const mpxkit_pconfig *c = mpxkit_pmodel_config(o->m, k);
		const mpxkit_prediction *p = &pred[k];
		config_text(cfg, sizeof cfg, c->core, c->freq_mhz);
		if (o->format == CLI_FORMAT_JSON) {
			cli_json_object(o->json);
			cli_json_key(o->json, "period");
			cli_json_uint(o->json, period);
			cli_json_key(o->json, "t0_s");
			cli_json_num(o->json, t0);
			cli_json_key(o->json, "t1_s");
			cli_json_num(o->json, t1);
			cli_json_key(o->json, "to");
			cli_json_str(o->json, cfg);
			cli_json_key(o->json, "cpu_time_s");
			cli_json_num(o->json, p->time_s);
			cli_json_key(o->json, "cpi");
			cli_json_num(o->json, p->cpi);
			cli_json_key(o->json, "power_w");
			cli_json_num(o->json, p->power_w);
			cli_json_key(o->json, "energy_j");
			cli_json_num(o->json, p->energy_j);
			cli_json_key(o->json, "ips");
			cli_json_num(o->json, p->ips);
			cli_json_close(o->json);
			continue;
		}
		if (o->format == CLI_FORMAT_CSV) {
			fprintf(o->f, "%zu,%.6g,%.6g,", period, t0, t1);
			cli_csv_field(o->f, cfg);
		} else {
			fprintf(o->f, "%6zu %8.3f %8.3f %-16s", period, t0, t1, cfg);
		}
		for (int i = 0; i < 5; i++) {
			double v = i == 0   ? p->time_s
				   : i == 1 ? p->cpi
				   : i == 2 ? p->power_w
				   : i == 3 ? p->energy_j
					    : p->ips;
			if (o->format == CLI_FORMAT_CSV)
				fputc(',', o->f);
			print_value(o->f, v, o->format == CLI_FORMAT_CSV);
		}
		fputc('\n', o->f);
	}
	fflush(o->f);
}

/* "CORE@MHZ" into its parts. */
static int parse_config(const char *cmd, char *text, const char **core, double *mhz)
{
	char *at = strrchr(text, '@'), *end;

	if (at == NULL || at == text)
		return cli_usage_error(cmd, "--from %s: expected CORE@MHZ", text);
	*at = '\0';
	*mhz = strtod(at + 1, &end);
	if (*end != '\0' || !(*mhz > 0) || !isfinite(*mhz))
		return cli_usage_error(cmd, "--from: '%s' is not a frequency in MHz", at + 1);
	*core = text;
	return 0;
}

static int p_live(int argc, char **argv)
{
	static const struct option options[] = {
	    {"live", no_argument, NULL, OPT_LIVE},
	    {"model", required_argument, NULL, 'm'},
	    {"from", required_argument, NULL, OPT_FROM},
	    {"period-ms", required_argument, NULL, OPT_PERIOD},
	    {"threads", required_argument, NULL, OPT_THREADS},
	    {"format", required_argument, NULL, 'f'},
	    {"counters", required_argument, NULL, 'c'},
	    {"slice-us", required_argument, NULL, OPT_SLICE},
	    {"estimator", required_argument, NULL, OPT_ESTIMATOR},
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = "predict", *model_path = NULL, *output = NULL;
	char *from = NULL;
	mpxkit_live_options lo = {0};
	live_out out = {.format = CLI_FORMAT_TABLE, .f = stdout};
	mpxkit_platform *p = NULL;
	mpxkit_pmodel *m = NULL;
	mpxkit_diag diag = {0};
	char *text = NULL;
	size_t text_len = 0;
	int c, rc = 0, status = 0, live = 0;
	long v;

	cli_warn_unknown_env(cmd);
	if ((rc = mpxkit_sched_config_env(&lo.sched, &diag)) < 0)
		return cli_lib_error(cmd, rc, &diag);
	optind = 1;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, "+:m:c:o:f:h", options, NULL)) != -1) {
		switch (c) {
		case OPT_LIVE:
			live = 1;
			break;
		case 'm':
			model_path = optarg;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_PERIOD:
			if (cli_parse_long(optarg, 1, 3600000, &v) < 0)
				rc = cli_usage_error(cmd, "--period-ms %s: expected 1 to 3600000",
						     optarg);
			lo.period_ns = (uint64_t)v * 1000000u;
			break;
		case OPT_THREADS:
			if (cli_parse_long(optarg, 1, 4096, &v) < 0)
				rc = cli_usage_error(cmd, "--threads %s: expected 1 to 4096",
						     optarg);
			lo.threads = (unsigned)v;
			break;
		case 'f':
			if (cli_parse_format(optarg, &out.format) < 0)
				rc = cli_usage_error(
				    cmd, "--format %s: expected table, csv or json", optarg);
			break;
		case 'c':
			rc = engine_set(cmd, &lo.sched, "--counters", "MPXKIT_COUNTERS", optarg);
			break;
		case OPT_SLICE:
			rc = engine_set(cmd, &lo.sched, "--slice-us", "MPXKIT_SLICE_US", optarg);
			break;
		case OPT_ESTIMATOR:
			rc = engine_set(cmd, &lo.sched, "--estimator", "MPXKIT_ESTIMATOR", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'h':
			usage(stdout);
			printf(
			    "\n--live options:\n"
			    "  -m, --model FILE        the model (mpxkit predict train)\n"
			    "      --from CORE@MHZ     where CMD runs (default: this machine's\n"
			    "                          only core kind at its current frequency)\n"
			    "      --period-ms N       prediction period (default 100)\n"
			    "      --threads N         threads CMD runs (default 1)\n"
			    "  -f, --format F          table (default), csv or json\n"
			    "  -o, --output FILE       write the predictions there\n"
			    "  -c, --counters C        events counted at once (engine default)\n"
			    "      --slice-us US       slice length (default %d)\n"
			    "      --estimator E       the engine's estimator\n"
			    "\n"
			    "MPXKIT_REPLAY counts from a recorded trace instead of perf_event.\n",
			    MPXKIT_SCHED_DEFAULT_SLICE_US);
			return cli_close_stdout(cmd);
		case ':':
			rc = need_arg(&(opts){.cmd = cmd}, argv);
			break;
		default:
			rc = bad_arg(&(opts){.cmd = cmd}, argv);
		}
	}
	if (rc != 0)
		return rc;
	if (!live)
		return cli_usage_error(cmd, "'%s' is not a predict command", argv[1]);
	if (model_path == NULL)
		return cli_usage_error(cmd, "--live needs -m MODEL.mpxp");
	if (optind >= argc)
		return cli_usage_error(cmd, "--live: no command to run");
	if (from && (rc = parse_config(cmd, from, &lo.core, &lo.freq_mhz)) != 0)
		return rc;
	{
		const char *inputs[] = {model_path,
					cli_program_is_path(argv[optind]) ? argv[optind] : NULL};
		if (cli_check_outputs(cmd, &output, 1, inputs, 2) != CLI_OK)
			return CLI_FAIL;
	}
	if ((rc = mpxkit_pmodel_load(model_path, &m, &diag)) < 0)
		return cli_lib_error(cmd, rc, &diag);
	if (from == NULL) {
		if ((p = malloc(sizeof *p)) == NULL) {
			rc = cli_error(cmd, "out of memory");
			goto done;
		}
		if ((rc = probe_platform(cmd, p)) != 0)
			goto done;
		lo.platform = p;
	}
	if (output) {
		if ((out.f = open_memstream(&text, &text_len)) == NULL) {
			rc = cli_error(cmd, "out of memory");
			goto done;
		}
	}
	out.m = m;
	lo.model = m;
	lo.on_period = on_period;
	lo.arg = &out;
	rc = mpxkit_predict_live(&lo, argv + optind, &status, &diag);
	if (rc == 0 && !out.started)
		live_start(&out);
	if (rc == 0 && out.failed)
		rc = mpxkit_fail(&diag, MPXKIT_ENOMEM, "out of memory");
	if (out.json && cli_json_end(out.json) < 0 && rc == 0)
		rc = -MPXKIT_ENOMEM;
	out.json = NULL;
	if (rc < 0) {
		rc = cli_lib_error(cmd, rc, &diag);
		goto done;
	}
	if (output) {
		int bad = ferror(out.f) | (fclose(out.f) != 0);
		out.f = stdout;
		if (bad) {
			rc = cli_error(cmd, "out of memory");
			goto done;
		}
		if ((rc = cli_write_file(cmd, output, text, text_len)) != 0)
			goto done;
	} else if ((rc = cli_close_stdout(cmd)) != 0) {
		goto done;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
done:
	if (out.json)
		cli_json_end(out.json);
	if (output && out.f != stdout)
		fclose(out.f);
	free(text);
	free(p);
	mpxkit_pmodel_free(m);
	return rc;
}

/* ---- dispatch ---------------------------------------------------------------------------------
 */

int cmd_predict(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(int, char **);
	} subs[] = {
	    {"import", p_import}, {"record", p_record}, {"list", p_list},
	    {"train", p_train},	  {"apply", p_apply},	{"eval", p_eval},
	};

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return cli_close_stdout("predict");
	}
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].run(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return p_live(argc, argv);
	return cli_usage_error("predict",
			       "'%s' is not a predict command (import, record, list, "
			       "train, apply, eval, --live)",
			       argv[1]);
}

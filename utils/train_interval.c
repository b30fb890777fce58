/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit train --model interval: the estimators' interval calibration, from the training programs
 * (doc/estimators.md, "Intervals"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/estimator.h"
#include "mpxkit/mpx.h"
#include "mpxkit/outfile.h"

#include "cli.h"
#include "train_interval.h"

/* The levels of estimators/estimator-impl.h's table, in its order. */
static const double levels[] = {0.50, 0.55, 0.60, 0.65, 0.70, 0.75,
				0.80, 0.85, 0.90, 0.95, 0.975, 0.99};
#define N_LEVELS (sizeof levels / sizeof levels[0])
#define MAX_SETS 8 /* data sets: the directories the traces come from */
/* The layouts the table tells apart: each event's one slice fixed (round-robin, groups), or scheduled. */
enum { FIXED_SLICES, SCHEDULED, N_KINDS };

/* What each run is simulated with: the trainer's counter budgets and schedules. */
static const size_t budgets[] = {2, 3, 4, 6};
#define SHUFFLES 4 /* shuffled group assignments besides column order */
static const char *const scheduled[] = {"prior", "adaptive"};
#define N_SCHEDULED (sizeof scheduled / sizeof scheduled[0])

/*
 * One window's or total's error against the sampling model: |truth - est|
 * over the spread, and the degrees of freedom its multiplier takes; r = 0
 * where the interval holds the truth at any factor, INFINITY where none does.
 */
typedef struct score {
	double r, dof;
} score;

typedef struct scores {
	score *v;
	size_t n, cap;
} scores;

/*
 * What the table calibrates apart: windows and run totals, each of sparse
 * events and of dense ones (MPXKIT_INTERVAL_SPARSE, the library's regime).
 * Under fixed slices the totals are pooled, all scored as SPARSE_TOTALS
 * and written for both regimes: callgrind's sparse totals there are
 * start-up bursts round-robin misses, and their factor (34.8 at 0.9) would
 * hold nearly every real total (doc/estimators.md, "Count regimes").
 */
enum { SPARSE_WINDOWS, DENSE_WINDOWS, SPARSE_TOTALS, DENSE_TOTALS, N_PARTS };
static const char *const part_names[N_PARTS] = {"w sparse", "w dense", "t sparse", "t dense"};

/* The part a total of a layout kind is scored in. */
static int total_part(int kind, const mpxkit_interval *total)
{
	return kind == SCHEDULED && !(total->flags & MPXKIT_INTERVAL_SPARSE) ? DENSE_TOTALS : SPARSE_TOTALS;
}

/* The parts of a layout kind that have scores of their own: not fixed slices' dense totals. */
static int kind_has_part(int kind, int part)
{
	return kind == SCHEDULED || part != DENSE_TOTALS;
}

/* A part's name in the report: fixed slices' totals are pooled, all regimes. */
static const char *part_name(int kind, int part)
{
	return kind == FIXED_SLICES && part == SPARSE_TOTALS ? "totals" : part_names[part];
}

/* Scores of one estimator, layout kind and split: each part's. */
typedef struct cell {
	scores part[N_PARTS];
} cell;

typedef struct fit {
	const char *cmd;
	size_t n_est, n_sets;
	const char *names[16];
	size_t skipped[16]; /* runs past MAX_RUN_COST, per estimator */
	const char *sets[MAX_SETS]; /* each set's directory */
	size_t set_len[MAX_SETS];
	cell *cells; /* [set][split (train, validation)][estimator][kind] */
	uint64_t rng; /* the seed's: each program's shuffles start from it and the program's name */
	train_interval_shuffle shuffle;
} fit;

static int push(scores *s, double r, double dof)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		score *v = realloc(s->v, cap * sizeof *v);
		if (v == NULL)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (score){r, dof};
	return 0;
}

static cell *cell_of(const fit *f, size_t set, int valid, size_t x, int kind)
{
	return &f->cells[(((set * 2) + (size_t)valid) * f->n_est + x) * N_KINDS + (size_t)kind];
}

/* The length of path's directory part: its set's name. */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

/* The set of a trace at path, a new one for a new directory; MAX_SETS when there are too many. */
static size_t set_of(fit *f, const char *path)
{
	size_t len = dir_len(path);

	for (size_t i = 0; i < f->n_sets; i++)
		if (f->set_len[i] == len && strncmp(f->sets[i], path, len) == 0)
			return i;
	if (f->n_sets == MAX_SETS)
		return MAX_SETS;
	f->sets[f->n_sets] = path;
	f->set_len[f->n_sets] = len;
	return f->n_sets++;
}

/*
 * The factor that makes a model interval hold the truth: with c what the
 * counted slices saw (the truth is at least c, and lo is never below it),
 * an interval holds a truth equal to c at any factor.
 */
static double ratio(double truth, double est, double seen, const mpxkit_interval *iv)
{
	double err = fabs(truth - est);

	if (truth == seen || err == 0)
		return 0;
	return iv->spread > 0 ? err / iv->spread : INFINITY;
}

/*
 * The most a run may cost an estimator that reads each rotation's window
 * whole (bigru-full reads 1025 rotations around each, recomputed for every
 * rotation), in rotations times the rotations each reads: a run of 840
 * rotations (a 7 000-step real recording at C = 4) takes it 66 s, and the
 * real corpus's long recordings would take it hours.  Every callgrind corpus
 * run is below the cap (the longest, 497 steps at C = 6, costs 165 x 165);
 * the runs above it are counted and left out for that estimator only.  An
 * estimator reading fewer than WHOLE_REACH rotations (the others: a stream
 * or a few rotations each side) costs O(rotations), and is never left out.
 */
#define MAX_RUN_COST 32768.0
#define WHOLE_REACH  256.0

static int too_costly(const mpxkit_mpx_run *run, const mpxkit_estimator *e)
{
	const mpxkit_estimator_info *info = mpxkit_estimator_info_of(e);
	double n = (double)run->n_rotations, reach = 1.0 + info->lookback + info->lookahead;

	return reach >= WHOLE_REACH && n * (reach < n ? reach : n) > MAX_RUN_COST;
}

/*
 * Scores every window and the total of every event of one run, for one
 * estimator: 0, 1 when the run is past MAX_RUN_COST for it, or an error.
 */
static int score_run(fit *f, const mpxkit_mpx_run *run, const char *name, size_t set, size_t x,
		     int valid, mpxkit_diag *diag)
{
	const mpxkit_series data = mpxkit_mpx_series(run);
	size_t nr = run->n_rotations, ne = run->layout.n_events;
	double *est = NULL;
	mpxkit_interval *iv = NULL, *total = NULL;
	mpxkit_estimator *e = NULL;
	int kind = run->layout.slice ? FIXED_SLICES : SCHEDULED;
	cell *c = cell_of(f, set, valid, x, kind);
	int rc = mpxkit_estimator_new(&e, name, &run->layout, NULL, diag);

	/* Its reach is the instance's (bigru-full's is set at init): known only once made. */
	if (rc < 0 || (rc = too_costly(run, e)) != 0)
		goto out;
	rc = -MPXKIT_ENOMEM;
	est = malloc(nr * (ne ? ne : 1) * sizeof *est);
	iv = malloc(nr * (ne ? ne : 1) * sizeof *iv);
	total = malloc((ne ? ne : 1) * sizeof *total);
	if (est == NULL || iv == NULL || total == NULL)
		goto out;
	mpxkit_estimator_set_interval(e, 0, 1);
	if (mpxkit_estimator_run_series_iv(e, &data, est, iv, total) < 0)
		goto out;
	for (size_t v = 0; v < ne; v++) {
		double truth = 0, sum = 0, seen = 0;
		for (size_t k = 0; k < nr; k++) {
			const mpxkit_interval *w = &iv[k * ne + v];
			double t = (double)run->ocoe[k * ne + v], c_k = (double)run->obs[k * ne + v];
			truth += t;
			sum += est[k * ne + v];
			seen += c_k;
			/* Unbounded windows hold any truth: they say nothing of the factor. */
			if (isinf(w->hi))
				continue;
			if (push(&c->part[w->flags & MPXKIT_INTERVAL_SPARSE ? SPARSE_WINDOWS
									     : DENSE_WINDOWS],
				 ratio(t, est[k * ne + v], c_k, w), w->dof) < 0)
				goto out;
		}
		if (!isinf(total[v].hi) &&
		    push(&c->part[total_part(kind, &total[v])], ratio(truth, sum, seen, &total[v]),
			 total[v].dof) < 0)
			goto out;
	}
	rc = 0;
out:
	mpxkit_estimator_free(e);
	free(est);
	free(iv);
	free(total);
	return rc;
}

/*
 * A program's own random state: the seed's, mixed with its file name (FNV-1a),
 * so that its shuffled groups are the same whichever other programs are
 * trained with it, and a data set's factors alone are its factors in company.
 */
static uint64_t program_rng(const fit *f, const char *path)
{
	const char *base = strrchr(path, '/');
	uint64_t h = 0xcbf29ce484222325ull;

	for (const char *p = base ? base + 1 : path; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return f->rng ^ h;
}

/*
 * One program's runs: every budget, column order, shuffled groups and the
 * scheduled runs; every estimator, ref-rate with the trace's first column
 * as the reference (as a fixed counter counts instructions).
 */
static int program_runs(fit *f, const mpxkit_trace *tr, const char *path, size_t set, int valid)
{
	mpxkit_diag diag = {0};
	uint64_t rng = program_rng(f, path);

	for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++)
		for (size_t a = 0; a < 1 + SHUFFLES + N_SCHEDULED; a++)
			for (int with_ref = 0; with_ref < 2; with_ref++) {
				mpxkit_groups *groups = NULL;
				mpxkit_mpx_run *run = NULL;
				char *text = NULL;
				int rc;
				if (with_ref && tr->n_events < 2)
					continue;
				if (a >= 1 && a <= SHUFFLES) {
					text = f->shuffle(tr, budgets[b], &rng);
					if (text == NULL)
						return cli_error(f->cmd, "out of memory");
					/* ref-rate's runs leave the reference out of the groups. */
					if (with_ref) {
						free(text);
						continue;
					}
					rc = mpxkit_groups_parse("(shuffled groups)", text,
								 strlen(text), &groups, &diag);
					free(text);
					if (rc < 0)
						return cli_lib_error(f->cmd, rc, &diag);
				}
				mpxkit_mpx_config cfg = {
				    budgets[b], with_ref ? tr->events[0] : NULL, groups, 0, path,
				    a > SHUFFLES ? scheduled[a - SHUFFLES - 1] : NULL, 0};
				rc = mpxkit_mpx_simulate(tr, &cfg, &run, &diag);
				mpxkit_groups_free(groups);
				if (rc == -MPXKIT_ERANGE)
					continue; /* shorter than one window */
				if (rc < 0)
					return cli_lib_error(f->cmd, rc, &diag);
				for (size_t x = 0; x < f->n_est && rc == 0; x++) {
					if ((strcmp(f->names[x], "ref-rate") == 0) != with_ref)
						continue;
					rc = score_run(f, run, f->names[x], set, x, valid, &diag);
					if (rc == 1) {
						f->skipped[x]++;
						rc = 0;
					}
				}
				mpxkit_mpx_run_free(run);
				if (rc < 0)
					return cli_lib_error(f->cmd, rc, &diag);
			}
	return 0;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The smallest factor that holds a share level of the scores, each against
 * its multiplier.  Where more than that share hold the truth at any factor
 * (a sparse event's windows whose truth is what was counted), 0 would do,
 * but a width of 0 would call a multiplexed estimate exact: the factor is
 * then the smallest that any score needs (1, the model alone, if none does).
 */
static double factor_at(const scores *s, double level, double *tmp)
{
	size_t i;

	if (s->n == 0)
		return 1.0;
	for (size_t k = 0; k < s->n; k++)
		tmp[k] = s->v[k].r > 0 ? s->v[k].r / mpxkit_interval_quantile(level, s->v[k].dof) : 0;
	qsort(tmp, s->n, sizeof *tmp, compare_double);
	i = (size_t)ceil(level * (double)s->n);
	for (i = i > 0 ? i - 1 : 0; i < s->n; i++)
		if (tmp[i] > 0)
			return tmp[i];
	return 1.0;
}

/* The share of scores no factor covers: a wrong estimate with no spread. */
static double uncoverable(const scores *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += isinf(s->v[i].r);
	return s->n ? (double)n / (double)s->n : NAN;
}

/* The share of scores whose interval at factor k and level holds the truth. */
static double covered(const scores *s, double level, double k)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].r <= k * mpxkit_interval_quantile(level, s->v[i].dof);
	return s->n ? (double)n / (double)s->n : NAN;
}

/*
 * The factor of estimator x's part (sparse or dense windows or totals) at
 * a level: the largest of the data sets' own (1, the model alone, where no
 * set has a score).  Callgrind's simulated events and the kernel's sparse
 * real ones want different factors (0.755 and 0.404 for fixed's windows at
 * 0.9 before the count regimes), and pooled, the set with more runs would
 * set the factor for both (0.456): the largest covers each set's training
 * programs at the level at least.
 */
static double set_factor(const fit *f, size_t x, int kind, int part, double level, double *tmp)
{
	double most = 0;
	int any = 0;

	for (size_t k = 0; k < f->n_sets; k++) {
		const scores *s = &cell_of(f, k, 0, x, kind)->part[part];
		double v;
		if (s->n == 0)
			continue;
		v = factor_at(s, level, tmp);
		most = any && !(v > most) ? most : v;
		any = 1;
	}
	return any ? most : 1.0;
}

typedef double factor_table[N_KINDS][N_PARTS][N_LEVELS];

/*
 * The factors at 0.9 (index 8, the default), per estimator, layout and
 * part: each set's own, the coverage the table's gives its validation
 * programs and the share no factor covers; then the table's.
 */
static void report(const fit *f, const factor_table *table, double *tmp)
{
	printf("%-12s %-9s %-8s %-14s %9s %9s %9s %9s\n", "estimator", "layout", "part", "set",
	       "scores", "factor", "valid", "none");
	for (size_t x = 0; x < f->n_est; x++)
		for (int kind = 0; kind < N_KINDS; kind++)
			for (int part = 0; part < N_PARTS; part++) {
				const char *layout = kind ? "scheduled" : "fixed";
				double k9 = table[x][kind][part][8];
				if (!kind_has_part(kind, part))
					continue;
				for (size_t k = 0; k < f->n_sets; k++) {
					const scores *tr = &cell_of(f, k, 0, x, kind)->part[part];
					const scores *va = &cell_of(f, k, 1, x, kind)->part[part];
					printf("%-12s %-9s %-8s %-14.*s %9zu %9.3f %9.3f %9.3f\n",
					       f->names[x], layout, part_name(kind, part),
					       f->set_len[k] ? (int)f->set_len[k] : 1,
					       f->set_len[k] ? f->sets[k] : ".", tr->n,
					       factor_at(tr, 0.9, tmp), covered(va, 0.9, k9),
					       uncoverable(tr));
				}
				printf("%-12s %-9s %-8s %-14s %9s %9.3f\n", f->names[x], layout,
				       part_name(kind, part), "(the table)", "", k9);
			}
}

/* One row of factors, level by level; an infinite one (no bounded score) as 1e6, a finite literal. */
static void write_row(FILE *mem, const char *indent, const double *row)
{
	fprintf(mem, "%s{", indent);
	for (size_t l = 0; l < N_LEVELS; l++)
		fprintf(mem, "%s%.4f", l ? ", " : "", isfinite(row[l]) ? row[l] : 1e6);
	fprintf(mem, "},\n");
}

/* Estimator x's calibration as C, in estimators/estimator-impl.h's layout. */
static void write_calibration(FILE *mem, const fit *f, const factor_table *table, size_t x)
{
	char id[32];

	snprintf(id, sizeof id, "%s", f->names[x]);
	for (char *p = id; *p; p++)
		if (*p == '-')
			*p = '_';
	fprintf(mem, "\nconst interval_calibration interval_cal_%s = {\n    {\n", id);
	for (int kind = 0; kind < N_KINDS; kind++) {
		fprintf(mem, "\t{\n");
		write_row(mem, "\t\t", (*table)[kind][SPARSE_WINDOWS]);
		write_row(mem, "\t\t", (*table)[kind][DENSE_WINDOWS]);
		fprintf(mem, "\t},\n");
	}
	fprintf(mem, "    },\n    {\n");
	for (int kind = 0; kind < N_KINDS; kind++) {
		fprintf(mem, "\t{\n");
		write_row(mem, "\t\t", (*table)[kind][SPARSE_TOTALS]);
		write_row(mem, "\t\t",
			  (*table)[kind][kind_has_part(kind, DENSE_TOTALS) ? DENSE_TOTALS : SPARSE_TOTALS]);
		fprintf(mem, "\t},\n");
	}
	fprintf(mem, "    },\n};\n");
}

int train_interval_table(const char *cmd, const train_interval_program *progs, size_t n_progs,
			 uint64_t seed, train_interval_shuffle shuffle, const char *output)
{
	fit f = {cmd, 0, 0, {0}, {0}, {0}, {0}, NULL, seed ^ 0xbb67ae8584caa73bull, shuffle};
	factor_table table[16];
	size_t most = 0, n_train = 0, n_cells, *set = NULL;
	double *tmp = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = NULL;
	mpxkit_diag diag = {0};
	int rc = 0;

	for (size_t i = 0; i < mpxkit_estimator_count() && f.n_est < 16; i++)
		f.names[f.n_est++] = mpxkit_estimator_info_at(i)->name;
	set = malloc((n_progs ? n_progs : 1) * sizeof *set);
	if (set == NULL)
		return cli_error(cmd, "out of memory");
	for (size_t i = 0; i < n_progs; i++)
		if (progs[i].split <= 1 && (set[i] = set_of(&f, progs[i].path)) == MAX_SETS) {
			free(set);
			return cli_error(cmd, "traces from more than %d directories: each is a data set, "
					      "and a calibration takes at most %d",
					 MAX_SETS, MAX_SETS);
		}
	n_cells = f.n_sets * 2 * f.n_est * N_KINDS;
	f.cells = calloc(n_cells ? n_cells : 1, sizeof *f.cells);
	if (f.cells == NULL) {
		free(set);
		return cli_error(cmd, "out of memory");
	}
	for (size_t i = 0; i < n_progs && rc == 0; i++) {
		if (progs[i].split > 1)
			continue;
		n_train += progs[i].split == 0;
		rc = program_runs(&f, progs[i].trace, progs[i].path, set[i], progs[i].split);
	}
	if (rc != 0)
		goto out;
	for (size_t c = 0; c < n_cells; c++)
		for (int part = 0; part < N_PARTS; part++)
			most = f.cells[c].part[part].n > most ? f.cells[c].part[part].n : most;
	tmp = malloc((most ? most : 1) * sizeof *tmp);
	if (tmp == NULL) {
		rc = cli_error(cmd, "out of memory");
		goto out;
	}
	for (size_t x = 0; x < f.n_est; x++)
		if (f.skipped[x])
			printf("%s: %zu runs left out, each past %.0f rotations x reach\n",
			       f.names[x], f.skipped[x], MAX_RUN_COST);
	for (size_t x = 0; x < f.n_est; x++)
		for (int kind = 0; kind < N_KINDS; kind++)
			for (int part = 0; part < N_PARTS; part++)
				for (size_t l = 0; l < N_LEVELS; l++)
					table[x][kind][part][l] = set_factor(&f, x, kind, part, levels[l], tmp);
	report(&f, table, tmp);
	mem = open_memstream(&text, &len);
	if (mem == NULL) {
		rc = cli_error(cmd, "out of memory");
		goto out;
	}
	fprintf(mem,
		"/* SPDX-License-Identifier: BSD-3-Clause */\n"
		"/* The estimators' interval calibration (doc/estimators.md, \"Intervals\"), written "
		"by\n * `mpxkit train --model interval --seed %llu` from %zu training programs. */\n"
		"#include \"estimator-impl.h\"\n",
		(unsigned long long)seed, n_train);
	for (size_t x = 0; x < f.n_est; x++)
		write_calibration(mem, &f, &table[x], x);
	if (ferror(mem) | (fclose(mem) != 0)) {
		mem = NULL;
		rc = cli_error(cmd, "out of memory");
		goto out;
	}
	mem = NULL;
	rc = mpxkit_outfile_write_all(output, text, len, &diag);
	if (rc < 0) {
		rc = cli_lib_error(cmd, rc, &diag);
		goto out;
	}
	printf("interval calibration of %zu estimators from %zu training programs written to %s\n",
	       f.n_est, n_train, output);
	rc = 0;
out:
	free(text);
	free(tmp);
	free(set);
	for (size_t c = 0; f.cells && c < n_cells; c++)
		for (int part = 0; part < N_PARTS; part++)
			free(f.cells[c].part[part].v);
	free(f.cells);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit train: fit the mlp or bigru estimator's model on simulated multiplexing of ground-truth
 * traces. */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpxkit/estimator.h"
#include "mpxkit/metric.h"
#include "mpxkit/model.h"
#include "mpxkit/mpx.h"
#include "mpxkit/outfile.h"
#include "mpxkit/trace.h"

#include "cli.h"
#include "commands.h"
#include "train_interval.h"

#define HALF_WINDOW 4 /* bigru's features: rotations either side */
#define MLP_HALF    4 /* mlp's: chosen on the validation programs (doc/estimators.md) */
#define HIDDEN	    32
#define DROPOUT	    0.1
#define PATIENCE    10
/* The bigru's settings (doc/estimators.md, "bigru"): chosen on the validation programs. */
#define GRU_DENSE     64 /* ReLU units of the dense layer before the GRU */
#define GRU_HIDDEN    16 /* units per direction */
#define GRU_DROPOUT   0.0
#define GRU_PATIENCE  5
#define GRU_BATCH     16 /* windows per Adam step */
#define GRU_LR	      2e-3
#define GRU_WINDOW    32 /* steps of truncated back-propagation through time */
#define GRU_CLIP      5.0
#define EVAL_COUNTERS 4
#define ASSIGNMENTS   5 /* column order plus random shuffles, per counter budget */

static const size_t budgets[] = {2, 3, 4, 6};
/*
 * Besides round-robin over column order and shuffled groups, the schedules
 * the models must serve (doc/schedules.md): one model for every schedule.
 */
/*
 * adaptive's settings are spelled out, so that a later default leaves the
 * shipped models reproducible from their command: the first setting, its
 * variant without start-up, and the tuned default (doc/schedules.md,
 * "Tuning adaptive").
 */
static const char *const schedules[] = {"prior", "adaptive:startup=3:measure=0",
					"adaptive:startup=0:floor=8:measure=0",
					"adaptive:startup=4:measure=0.9"};
#define N_SCHEDULES (sizeof schedules / sizeof schedules[0])
static const char *const baselines[] = {"fixed", "linear", "nonlinear"};
#define N_SCORED (sizeof baselines / sizeof baselines[0] + 1)

enum model_kind { MODEL_MLP, MODEL_BIGRU, MODEL_PRIOR, MODEL_INTERVAL };
static const char *const model_names[] = {"mlp", "bigru", "prior", "interval"};

enum split { SPLIT_TRAIN, SPLIT_VAL, SPLIT_TEST, N_SPLITS };
static const char *const split_names[] = {"train", "validation", "test"};

typedef struct program {
	char *path;
	mpxkit_trace *trace;
	enum split split;
} program;

typedef struct train {
	const char *cmd;
	program *progs;
	size_t n_progs;
	uint64_t seed;
	int bar; /* progress bar on a terminal */
	unsigned epochs;
	size_t hidden;	/* units per hidden layer (GRU: per direction); 0: the default */
	double dropout; /* on the hidden layers, in training only; < 0: the model's default */
	int loss;	/* enum mpxkit_loss */
	enum model_kind kind;
	size_t merge; /* --merge: steps summed into one slice */
} train;

/* Where one split's samples go: rotations for the mlp, whole series for the bigru. */
typedef struct sample_sink {
	mpxkit_mlp_samples mlp;
	mpxkit_bigru_samples seq;
} sample_sink;

static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int usage(void)
{
	fprintf(
	    stdout,
	    "usage: mpxkit train -o MODEL [--model mlp|bigru|prior|interval] [--epochs N] [--seed S] "
	    "CORPUS...\n"
	    "Train the mlp or bigru estimator's model on ground-truth traces (files or\n"
	    "directories of *.csv / *.csv.gz).  Programs are split 7:1:2 into training,\n"
	    "validation and test sets by --seed, but for a trace whose metadata names its\n"
	    "split (# split=train, validation or test); the model is written to MODEL\n"
	    "(doc/model-format.md).  --model prior writes the prior schedule's table as C\n"
	    "(schedules/prior_table.c, doc/schedules.md), from the training programs only;\n"
	    "--model interval the estimators' interval calibration as C\n"
	    "(estimators/interval_table.c, doc/estimators.md).\n"
	    "  -o, --output FILE   the model file to write\n"
	    "      --model KIND    mlp (default: two hidden layers), bigru (bidirectional GRU)\n"
	    "                      prior (the schedules' table) or interval (the\n"
	    "                      intervals' calibration)\n"
	    "      --epochs N      at most N passes over the training set (default 40)\n"
	    "      --seed S        split, weights, shuffling and dropout (default 1)\n"
	    "      --loss KIND     ra (default: shaped like RA) or mse (squared log error)\n"
	    "      --hidden N      mlp: units in each hidden layer (default 32); bigru: GRU\n"
	    "                      units per direction (default 16)\n"
	    "      --dropout P     dropout, 0 to 0.9: mlp on the hidden layers (default 0.1),\n"
	    "                      bigru on the GRU's outputs (default 0)\n"
	    "      --merge K       sum every K steps of each trace into one slice (default 1)\n"
	    "  -h, --help          this text\n");
	return cli_close_stdout("train");
}

static int add_program(train *t, const char *path)
{
	program *p = realloc(t->progs, (t->n_progs + 1) * sizeof(*p));

	if (!p)
		return cli_error(t->cmd, "out of memory");
	t->progs = p;
	p += t->n_progs;
	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	if (!p->path)
		return cli_error(t->cmd, "out of memory");
	t->n_progs++;
	return 0;
}

static int add_program_cb(void *t, const char *path)
{
	return add_program(t, path);
}

/*
 * A trace whose metadata names its split (`# split=train`, `validation` or
 * `test`, as data/real's recordings do: split by program when the corpus
 * was written) keeps it, and *named is 1; 0 where it names none.  A usage
 * error for another value.
 */
static int named_split(const train *t, program *p, int *named)
{
	const char *v = mpxkit_trace_get_meta(p->trace, "split");

	*named = 0;
	if (v == NULL)
		return 0;
	for (int sp = 0; sp < N_SPLITS; sp++)
		if (strcmp(v, split_names[sp]) == 0) {
			p->split = (enum split)sp;
			*named = 1;
			return 0;
		}
	return cli_usage_error(t->cmd, "%s: split '%s' is not train, validation or test", p->path,
			       v);
}

/* Shuffles the n programs of order by the seed and deals them 7:1:2. */
static void deal_splits(train *t, size_t *order, size_t n)
{
	size_t n_train = (7 * n + 5) / 10, n_val = (n + 5) / 10;
	uint64_t rng = t->seed;

	if (n_val == 0)
		n_val = 1;
	if (n_train + n_val >= n)
		n_train = n - n_val - 1;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_u64(&rng) % i), s = order[i - 1];
		order[i - 1] = order[j];
		order[j] = s;
	}
	for (size_t i = 0; i < n; i++)
		t->progs[order[i]].split = i < n_train		 ? SPLIT_TRAIN
					   : i < n_train + n_val ? SPLIT_VAL
								 : SPLIT_TEST;
}

/*
 * 7:1:2 by program: programs whose traces name a split keep it; a seeded
 * shuffle of the others, in the order given, then the first 70 % train, 10 %
 * validate; the same split as before any trace named one, for the same
 * programs.
 */
static int split_programs(train *t)
{
	size_t n = 0, *order = malloc(t->n_progs * sizeof(*order));
	int rc = 0;

	if (!order)
		return cli_error(t->cmd, "out of memory");
	for (size_t i = 0; rc == 0 && i < t->n_progs; i++) {
		int named;
		rc = named_split(t, &t->progs[i], &named);
		if (rc == 0 && !named)
			order[n++] = i;
	}
	if (rc == 0 && n > 0 && n < 3)
		rc = cli_usage_error(t->cmd,
				     "%zu programs given without a split, at least 3 are needed "
				     "for a training, a validation and a test set",
				     n);
	else if (rc == 0 && n > 0)
		deal_splits(t, order, n);
	free(order);
	return rc;
}

/* A group file's text: the trace's events shuffled, c per line. */
static char *shuffled_groups(const mpxkit_trace *tr, size_t c, uint64_t *rng)
{
	size_t n = tr->n_events, len = 1;
	size_t *ord = malloc(n * sizeof(*ord));
	char *text = NULL, *w;

	if (!ord)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		ord[i] = i;
		len += strlen(tr->events[i]) + 1;
	}
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_u64(rng) % i), s = ord[i - 1];
		ord[i - 1] = ord[j];
		ord[j] = s;
	}
	text = malloc(len);
	if (text) {
		w = text;
		for (size_t i = 0; i < n; i++)
			w += sprintf(w, "%s%c", tr->events[ord[i]],
				     (i + 1) % c == 0 || i + 1 == n ? '\n' : ',');
		*w = '\0';
	}
	free(ord);
	return text;
}

/* The samples of one program: every counter budget, column order and shuffled groups. */
static int program_samples(train *t, const program *p, sample_sink *s, uint64_t *rng)
{
	mpxkit_diag diag = {0};
	int rc;

	for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
		for (int a = 0; a < ASSIGNMENTS + (int)N_SCHEDULES; a++) {
			mpxkit_groups *groups = NULL;
			mpxkit_mpx_run *run = NULL;
			char *text = NULL;

			if (a > 0 && a < ASSIGNMENTS) {
				text = shuffled_groups(p->trace, budgets[b], rng);
				if (!text)
					return cli_error(t->cmd, "out of memory");
				rc = mpxkit_groups_parse("(shuffled groups)", text, strlen(text),
							 &groups, &diag);
				free(text);
				if (rc < 0)
					return cli_lib_error(t->cmd, rc, &diag);
			}
			mpxkit_mpx_config cfg = {
			    budgets[b], NULL, groups, 0, p->path,
			    a >= ASSIGNMENTS ? schedules[a - ASSIGNMENTS] : NULL, 0};
			rc = mpxkit_mpx_simulate(p->trace, &cfg, &run, &diag);
			if (rc ==
			    -MPXKIT_ERANGE) { /* shorter than one rotation: nothing to learn */
				mpxkit_groups_free(groups);
				continue;
			}
			mpxkit_series series = rc == 0 ? mpxkit_mpx_series(run) : (mpxkit_series){0};
			if (rc == 0 && t->kind == MODEL_BIGRU)
				rc = mpxkit_bigru_samples_add_series(&s->seq, &run->layout, &series,
								     run->ocoe, &diag);
			else if (rc == 0)
				rc = mpxkit_mlp_samples_add_series(&s->mlp, &run->layout, &series,
								   run->ocoe, 1, &diag);
			mpxkit_mpx_run_free(run);
			mpxkit_groups_free(groups);
			if (rc < 0)
				return cli_lib_error(t->cmd, rc, &diag);
		}
	}
	return 0;
}

/* A bar redrawn in place on a terminal; elsewhere (a log) one whole line per epoch. */
static void progress(void *arg, unsigned epoch, double train_loss, double val_loss)
{
	const train *t = arg;
	const int width = 30;
	int filled = (int)((double)width * epoch / t->epochs);

	if (!t->bar) {
		fprintf(stderr, "mpxkit train: epoch %u/%u: loss %.4f, validation %.4f\n", epoch,
			t->epochs, train_loss, val_loss);
		return;
	}
	fprintf(stderr, "\rmpxkit train: epoch %u/%u [%.*s%*s] loss %.4f validation %.4f", epoch,
		t->epochs, filled, "##############################", width - filled, "", train_loss,
		val_loss);
}

/* Mean RA per rotation over the programs of one split and their events, at C = 4. */
static int score_split(train *t, const mpxkit_model *m, enum split sp, const char *schedule,
		       double *mean, size_t *n_out)
{
	double sum[N_SCORED] = {0};
	size_t n = 0;
	mpxkit_diag diag = {0};
	int rc = 0;

	for (size_t i = 0; i < t->n_progs && rc == 0; i++) {
		const program *p = &t->progs[i];
		mpxkit_mpx_config cfg = {EVAL_COUNTERS, NULL, NULL, 0, p->path, schedule, 0};
		mpxkit_mpx_run *run = NULL;
		mpxkit_series series;
		double *est = NULL, *truth = NULL;

		if (p->split != sp)
			continue;
		rc = mpxkit_mpx_simulate(p->trace, &cfg, &run, &diag);
		if (rc == -MPXKIT_ERANGE) {
			rc = 0;
			continue;
		}
		if (rc < 0)
			return cli_lib_error(t->cmd, rc, &diag);
		series = mpxkit_mpx_series(run);
		size_t nr = run->n_rotations, ne = run->layout.n_events;
		est = malloc(N_SCORED * nr * ne * sizeof(double));
		truth = malloc(nr * sizeof(double));
		double *col = malloc(nr * sizeof(double));
		if (!est || !truth || !col) {
			rc = cli_error(t->cmd, "out of memory");
			goto next;
		}
		for (size_t x = 0; x + 1 < N_SCORED && rc == 0; x++) {
			mpxkit_estimator *e = NULL;
			rc = mpxkit_estimator_new(&e, baselines[x], &run->layout, NULL, &diag);
			if (rc == 0)
				rc = mpxkit_estimator_run_series(e, &series, est + x * nr * ne);
			mpxkit_estimator_free(e);
		}
		/* The model's own whole-run scorer: for the bigru, every series in one piece. */
		if (rc == 0)
			rc = (t->kind == MODEL_BIGRU ? mpxkit_bigru_run_series : mpxkit_mlp_run_series)(
			    m, &run->layout, &series, est + (N_SCORED - 1) * nr * ne, &diag);
		if (rc < 0) {
			rc = cli_lib_error(t->cmd, rc, &diag);
			goto next;
		}
		for (size_t e = 0; e < ne; e++) {
			for (size_t k = 0; k < nr; k++)
				truth[k] = (double)run->ocoe[k * ne + e];
			for (size_t x = 0; x < N_SCORED; x++) {
				for (size_t k = 0; k < nr; k++)
					col[k] = est[x * nr * ne + k * ne + e];
				sum[x] += mpxkit_ra(col, truth, nr);
			}
			n++;
		}
	next:
		free(col);
		free(est);
		free(truth);
		mpxkit_mpx_run_free(run);
	}
	for (size_t x = 0; x < N_SCORED; x++)
		mean[x] = n ? sum[x] / (double)n : 0.0;
	*n_out = n;
	return rc;
}

static int report(train *t, const mpxkit_model *m, const mpxkit_train_report *rep)
{
	printf("best epoch %u of %u, validation loss %.5f\n", rep->best_epoch, rep->epochs_run,
	       rep->best_val_loss);
	static const char *const scored[] = {NULL, "adaptive"};
	for (size_t i = 0; i < 2; i++) {
		printf("mean RA per window at C=%d (program x event pairs), schedule %s:\n",
		       EVAL_COUNTERS, scored[i] ? scored[i] : "round-robin");
		printf("%-11s %6s", "split", "pairs");
		for (size_t x = 0; x + 1 < N_SCORED; x++)
			printf(" %9s", baselines[x]);
		printf(" %9s\n", model_names[t->kind]);
		for (int sp = 0; sp < N_SPLITS; sp++) {
			double mean[N_SCORED];
			size_t n = 0;
			int rc = score_split(t, m, (enum split)sp, scored[i], mean, &n);
			if (rc != 0)
				return rc;
			printf("%-11s %6zu", split_names[sp], n);
			for (size_t x = 0; x < N_SCORED; x++)
				printf(" %9.4f", mean[x]);
			printf("\n");
		}
	}
	for (int sp = 0; sp < N_SPLITS; sp++) {
		printf("%s programs:", split_names[sp]);
		for (size_t i = 0; i < t->n_progs; i++)
			if (t->progs[i].split == (enum split)sp)
				printf(" %s", t->progs[i].path);
		printf("\n");
	}
	return 0;
}

/* The mlp: two hidden ReLU layers over each rotation's features. */
static int fit_mlp(train *t, sample_sink *set, mpxkit_model **m, mpxkit_train_report *rep,
		   mpxkit_diag *diag)
{
	mpxkit_model_shape shape = {
	    .n_layers = 3,
	    .width = {mpxkit_mlp_feature_count(MLP_HALF), t->hidden, t->hidden, 1},
	    .activation = {MPXKIT_ACT_RELU, MPXKIT_ACT_RELU, MPXKIT_ACT_IDENTITY},
	    .feature_set = MPXKIT_MLP_FEATURE_SET,
	    .feature_param = MLP_HALF,
	};
	/* The weights shape only the RA loss; the squared error weighs every rotation alike. */
	int weighted = t->loss == MPXKIT_LOSS_RA;
	const mpxkit_mlp_samples *a = &set[0].mlp, *b = &set[1].mlp;
	mpxkit_train_set tr = {a->n, a->x, a->y, weighted ? a->w : NULL},
			 va = {b->n, b->x, b->y, weighted ? b->w : NULL};
	mpxkit_train_config cfg = {.epochs = t->epochs,
				   .patience = PATIENCE,
				   .batch = 32,
				   .learning_rate = 1e-3,
				   .dropout = t->dropout,
				   .loss = t->loss,
				   .seed = t->seed,
				   .progress = progress,
				   .arg = t};
	int rc = mpxkit_model_new(m, &shape, diag);

	if (rc == 0)
		rc = mpxkit_model_init(*m, &tr, t->seed, diag);
	if (rc == 0)
		rc = mpxkit_model_train(*m, &cfg, &tr, &va, rep, diag);
	return rc;
}

/*
 * The bigru: a dense ReLU layer on each rotation's features, a bidirectional
 * GRU over the event's series of them, then a linear output per rotation.
 */
static int fit_bigru(train *t, sample_sink *set, mpxkit_model **m, mpxkit_train_report *rep,
		     mpxkit_diag *diag)
{
	mpxkit_model_shape shape = {
	    .n_layers = 3,
	    .width = {mpxkit_mlp_feature_count(HALF_WINDOW), GRU_DENSE, 2 * t->hidden, 1},
	    .activation = {MPXKIT_ACT_RELU, MPXKIT_ACT_IDENTITY, MPXKIT_ACT_IDENTITY},
	    .type = {MPXKIT_LAYER_DENSE, MPXKIT_LAYER_BIGRU, MPXKIT_LAYER_DENSE},
	    .feature_set = MPXKIT_MLP_FEATURE_SET,
	    .feature_param = HALF_WINDOW,
	};
	mpxkit_seq_set tr = mpxkit_bigru_samples_set(&set[0].seq),
		       va = mpxkit_bigru_samples_set(&set[1].seq);
	mpxkit_seq_train_config cfg = {.base = {.epochs = t->epochs,
						.patience = GRU_PATIENCE,
						.batch = GRU_BATCH,
						.learning_rate = GRU_LR,
						.dropout = t->dropout,
						.loss = t->loss,
						.seed = t->seed,
						.progress = progress,
						.arg = t},
				       .window = GRU_WINDOW,
				       .stride = GRU_WINDOW / 2,
				       .clip = GRU_CLIP};
	int rc;

	if (t->loss != MPXKIT_LOSS_RA)
		tr.w = va.w = NULL;
	rc = mpxkit_model_new(m, &shape, diag);
	if (rc == 0)
		rc = mpxkit_model_seq_init(*m, &tr, t->seed, diag);
	if (rc == 0)
		rc = mpxkit_model_seq_train(*m, &cfg, &tr, &va, rep, diag);
	return rc;
}

/* One event's prior over the training programs (doc/schedules.md, "The prior"). */
typedef struct prior_acc {
	const char *event;
	double variability, burst;
	size_t n;
} prior_acc;

/* Adds one trace's events: mean |x_{s+1} - x_s| / mean x, and x_0 / mean x. */
static int prior_add(prior_acc *acc, size_t *n_acc, size_t cap, const mpxkit_trace *tr)
{
	for (size_t c = 0; c < tr->n_events; c++) {
		double sum = 0, diff = 0, mean;
		size_t i = 0, n = tr->n_steps;
		for (size_t s = 0; s < n; s++) {
			double x = (double)tr->values[s * tr->n_events + c];
			sum += x;
			if (s > 0)
				diff += fabs(x - (double)tr->values[(s - 1) * tr->n_events + c]);
		}
		mean = n ? sum / (double)n : 0;
		if (n < 2 || !(mean > 0))
			continue;
		while (i < *n_acc && strcmp(acc[i].event, tr->events[c]) != 0)
			i++;
		if (i == *n_acc) {
			if (i == cap)
				return -1;
			acc[(*n_acc)++] = (prior_acc){tr->events[c], 0, 0, 0};
		}
		acc[i].variability += diff / (double)(n - 1) / mean;
		acc[i].burst += (double)tr->values[c] / mean;
		acc[i].n++;
	}
	return 0;
}

/* The prior's table as C, from the training programs of the split. */
static int write_prior(train *t, const char *output)
{
	size_t cap = 0, n_acc = 0, programs = 0;
	prior_acc *acc;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	mpxkit_diag diag = {0};
	int rc = split_programs(t);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < t->n_progs; i++)
		cap += t->progs[i].trace->n_events;
	acc = calloc(cap ? cap : 1, sizeof *acc);
	if (acc == NULL)
		return cli_error(t->cmd, "out of memory");
	for (size_t i = 0; i < t->n_progs; i++)
		if (t->progs[i].split == SPLIT_TRAIN) {
			prior_add(acc, &n_acc, cap, t->progs[i].trace);
			programs++;
		}
	mem = open_memstream(&text, &len);
	if (mem == NULL) {
		free(acc);
		return cli_error(t->cmd, "out of memory");
	}
	fprintf(mem,
		"/* SPDX-License-Identifier: BSD-3-Clause */\n"
		"/* The prior schedule's table (doc/schedules.md), written by\n"
		" * `mpxkit train --model prior --seed %llu` from %zu training programs. */\n"
		"#include \"schedule-impl.h\"\n\n"
		"const prior_row prior_table[] = {\n",
		(unsigned long long)t->seed, programs);
	for (size_t i = 0; i < n_acc; i++)
		fprintf(mem, "    {\"%s\", %.6f, %.6f},\n", acc[i].event,
			acc[i].variability / (double)acc[i].n, acc[i].burst / (double)acc[i].n);
	fprintf(mem, "};\nconst size_t prior_table_len = sizeof prior_table / sizeof prior_table[0];\n");
	free(acc);
	if (ferror(mem) | (fclose(mem) != 0)) {
		free(text);
		return cli_error(t->cmd, "out of memory");
	}
	rc = mpxkit_outfile_write_all(output, text, len, &diag);
	free(text);
	if (rc < 0)
		return cli_lib_error(t->cmd, rc, &diag);
	printf("prior table of %zu event%s from %zu training program%s written to %s\n", n_acc,
	       cli_s(n_acc), programs, cli_s(programs), output);
	return 0;
}

/* --merge: the program's trace with K steps to a slice, as mpxkit eval --merge makes it. */
static int merge_program(train *t, program *p)
{
	mpxkit_trace *merged = NULL;
	mpxkit_diag diag = {0};
	int rc = mpxkit_trace_merge_steps(p->trace, t->merge, &merged, &diag);

	if (rc < 0)
		return cli_error(t->cmd, "%s: %s", p->path, mpxkit_diag_message(&diag, rc));
	mpxkit_trace_free(p->trace);
	p->trace = merged;
	return 0;
}

/* The estimators' interval calibration as C, from the training programs of the split. */
static int write_intervals(train *t, const char *output)
{
	train_interval_program *p;
	int rc = split_programs(t);

	if (rc != 0)
		return rc;
	p = calloc(t->n_progs, sizeof *p);
	if (p == NULL)
		return cli_error(t->cmd, "out of memory");
	for (size_t i = 0; i < t->n_progs; i++)
		p[i] = (train_interval_program){t->progs[i].trace, t->progs[i].path,
						(int)t->progs[i].split};
	rc = train_interval_table(t->cmd, p, t->n_progs, t->seed, shuffled_groups, output);
	free(p);
	return rc;
}

static int run_training(train *t, const char *output)
{
	sample_sink set[2] = {{.mlp.half = MLP_HALF, .seq.half = HALF_WINDOW},
			      {.mlp.half = MLP_HALF, .seq.half = HALF_WINDOW}};
	mpxkit_model *m = NULL;
	mpxkit_diag diag = {0};
	mpxkit_train_report rep;
	uint64_t rng = t->seed ^ 0x6a09e667f3bcc908ull;
	int rc = 0;

	for (size_t i = 0; i < t->n_progs && rc == 0; i++) {
		rc = mpxkit_trace_read(t->progs[i].path, &t->progs[i].trace, &diag);
		if (rc < 0)
			rc = cli_lib_error(t->cmd, rc, &diag);
		if (rc == 0 && t->merge > 1)
			rc = merge_program(t, &t->progs[i]);
	}
	if (rc == 0 && t->kind == MODEL_PRIOR)
		return write_prior(t, output);
	if (rc == 0 && t->kind == MODEL_INTERVAL)
		return write_intervals(t, output);
	if (rc == 0)
		rc = split_programs(t);
	for (size_t i = 0; i < t->n_progs && rc == 0; i++)
		if (t->progs[i].split != SPLIT_TEST)
			rc = program_samples(t, &t->progs[i], &set[t->progs[i].split], &rng);
	if (rc != 0)
		goto out;
	/* Rows: rotations for the mlp, rotations of every series for the bigru. */
	size_t n_train = t->kind == MODEL_BIGRU ? set[0].seq.n_rows : set[0].mlp.n;
	size_t n_val = t->kind == MODEL_BIGRU ? set[1].seq.n_rows : set[1].mlp.n;
	if (n_train == 0 || n_val == 0) {
		rc = cli_error(t->cmd, "the corpus gave no training or no validation samples "
				       "(traces shorter than one rotation?)");
		goto out;
	}
	rc = (t->kind == MODEL_BIGRU ? fit_bigru : fit_mlp)(t, set, &m, &rep, &diag);
	if (t->bar)
		fputs("\r\033[K", stderr);
	if (rc == 0)
		rc = mpxkit_model_save(m, output, &diag);
	if (rc < 0) {
		rc = cli_lib_error(t->cmd, rc, &diag);
		goto out;
	}
	if (t->kind == MODEL_BIGRU)
		printf("%zu training and %zu validation series (%zu and %zu rotation%s)\n",
		       set[0].seq.n_seq, set[1].seq.n_seq, n_train, n_val, cli_s(n_val));
	else
		printf("%zu training and %zu validation sample%s\n", n_train, n_val, cli_s(n_val));
	rc = report(t, m, &rep);
out:
	mpxkit_model_free(m);
	for (int i = 0; i < 2; i++) {
		mpxkit_mlp_samples_free(&set[i].mlp);
		mpxkit_bigru_samples_free(&set[i].seq);
	}
	return rc;
}

/* The model's file can be written and is none of the traces (a directory's, one by one). */
static int check_output(const train *t, const char *output)
{
	const char **inputs = malloc((t->n_progs ? t->n_progs : 1) * sizeof *inputs);
	int rc;

	if (inputs == NULL)
		return cli_error(t->cmd, "out of memory");
	for (size_t i = 0; i < t->n_progs; i++)
		inputs[i] = t->progs[i].path;
	rc = cli_check_outputs(t->cmd, &output, 1, inputs, t->n_progs);
	free(inputs);
	return rc;
}

int cmd_train(int argc, char **argv)
{
	enum { OPT_EPOCHS = 256, OPT_SEED, OPT_LOSS, OPT_HIDDEN, OPT_DROPOUT, OPT_MODEL, OPT_MERGE };
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"epochs", required_argument, NULL, OPT_EPOCHS},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"loss", required_argument, NULL, OPT_LOSS},
	    {"hidden", required_argument, NULL, OPT_HIDDEN},
	    {"dropout", required_argument, NULL, OPT_DROPOUT},
	    {"model", required_argument, NULL, OPT_MODEL},
	    {"merge", required_argument, NULL, OPT_MERGE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	train t = {
	    .cmd = "train", .seed = 1, .epochs = 40, .dropout = -1.0, .loss = MPXKIT_LOSS_RA,
	    .merge = 1};
	char *end;
	const char *output = NULL;
	long v;
	int c, rc = 0;

	/* A pipe or a log sees each line of the report as it is printed, not at the exit. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_EPOCHS:
			if (cli_option_long(t.cmd, "--epochs", optarg, 1, 100000, &v) != CLI_OK)
				return CLI_USAGE;
			t.epochs = (unsigned)v;
			break;
		case OPT_SEED:
			if (cli_option_long(t.cmd, "--seed", optarg, 0, 0x7fffffffL, &v) != CLI_OK)
				return CLI_USAGE;
			t.seed = (uint64_t)v;
			break;
		case OPT_LOSS:
			if (strcmp(optarg, "ra") == 0)
				t.loss = MPXKIT_LOSS_RA;
			else if (strcmp(optarg, "mse") == 0)
				t.loss = MPXKIT_LOSS_MSE;
			else
				return cli_usage_error(t.cmd, "--loss takes ra or mse, not '%s'",
						       optarg);
			break;
		case OPT_HIDDEN:
			if (cli_option_long(t.cmd, "--hidden", optarg, 1, 1024, &v) != CLI_OK)
				return CLI_USAGE;
			t.hidden = (size_t)v;
			break;
		case OPT_DROPOUT:
			errno = 0;
			t.dropout = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(t.dropout >= 0.0 && t.dropout <= 0.9))
				return cli_usage_error(t.cmd, "--dropout takes 0 to 0.9, not '%s'",
						       optarg);
			break;
		case OPT_MODEL:
			if (strcmp(optarg, "mlp") == 0)
				t.kind = MODEL_MLP;
			else if (strcmp(optarg, "bigru") == 0)
				t.kind = MODEL_BIGRU;
			else if (strcmp(optarg, "prior") == 0)
				t.kind = MODEL_PRIOR;
			else if (strcmp(optarg, "interval") == 0)
				t.kind = MODEL_INTERVAL;
			else
				return cli_usage_error(
				    t.cmd, "--model takes mlp, bigru, prior or interval, not '%s'",
				    optarg);
			break;
		case OPT_MERGE:
			if (cli_option_long(t.cmd, "--merge", optarg, 1, 1L << 20, &v) != CLI_OK)
				return CLI_USAGE;
			t.merge = (size_t)v;
			break;
		case 'h':
			return usage();
		default:
			return cli_option_error(t.cmd, c, argv);
		}
	}
	if (!output)
		return cli_usage_error(t.cmd, "no model file named (-o MODEL)");
	if (t.kind == MODEL_BIGRU && t.hidden > MPXKIT_MODEL_MAX_GRU_HIDDEN)
		return cli_usage_error(t.cmd, "--hidden takes 1 to %d for a bigru, not %zu",
				       MPXKIT_MODEL_MAX_GRU_HIDDEN, t.hidden);
	if (t.hidden == 0)
		t.hidden = t.kind == MODEL_BIGRU ? GRU_HIDDEN : HIDDEN;
	if (t.dropout < 0.0)
		t.dropout = t.kind == MODEL_BIGRU ? GRU_DROPOUT : DROPOUT;
	if (optind == argc)
		return cli_usage_error(t.cmd, "no corpus given");
	rc = cli_for_each_trace_arg(t.cmd, argc - optind, argv + optind, add_program_cb, &t);
	/* Before the traces are read and the model trained: the model's file can be written. */
	if (rc == 0)
		rc = check_output(&t, output);
	t.bar = isatty(STDERR_FILENO);
	if (rc == 0)
		rc = run_training(&t, output);
	for (size_t i = 0; i < t.n_progs; i++) {
		free(t.progs[i].path);
		mpxkit_trace_free(t.progs[i].trace);
	}
	free(t.progs);
	if (rc == 0)
		rc = cli_close_stdout(t.cmd);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit train: fit the mlp estimator's model on simulated multiplexing of ground-truth traces. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpxkit/estimator.h"
#include "mpxkit/metric.h"
#include "mpxkit/model.h"
#include "mpxkit/mpx.h"
#include "mpxkit/trace.h"

#include "cli.h"
#include "commands.h"

#define HALF_WINDOW   4
#define HIDDEN	      32
#define EVAL_COUNTERS 4
#define ASSIGNMENTS   3 /* column order plus random shuffles, per counter budget */

static const size_t budgets[] = {2, 3, 4, 6};
static const char *const baselines[] = {"fixed", "linear", "nonlinear"};
#define N_SCORED (sizeof baselines / sizeof baselines[0] + 1)

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
} train;

static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int usage(FILE *out)
{
	fprintf(out,
		"usage: mpxkit train -o MODEL [--epochs N] [--seed S] CORPUS...\n"
		"Train the mlp estimator's model on ground-truth traces (files or directories of\n"
		"*.csv / *.csv.gz).  Programs are split 7:1:2 into training, validation and test\n"
		"sets by --seed; the model is written to MODEL (doc/model-format.md).\n"
		"  -o, --output FILE   the model file to write\n"
		"      --epochs N      at most N passes over the training set (default 40)\n"
		"      --seed S        split, weights, shuffling and dropout (default 1)\n"
		"  -h, --help          this text\n");
	return out == stdout ? CLI_OK : CLI_USAGE;
}

static int is_trace_name(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '.')
		return 0;
	return (n > 4 && strcmp(name + n - 4, ".csv") == 0) ||
	       (n > 7 && strcmp(name + n - 7, ".csv.gz") == 0);
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

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's traces in name order, so the split never depends on the disk. */
static int add_directory(train *t, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	if (!d)
		return cli_error(t->cmd, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!is_trace_name(de->d_name))
			continue;
		char **grown = realloc(names, (n + 1) * sizeof(*grown));
		if (!grown) {
			rc = cli_error(t->cmd, "out of memory");
			goto out;
		}
		names = grown;
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n]) {
			rc = cli_error(t->cmd, "out of memory");
			goto out;
		}
		sprintf(names[n++], "%s/%s", dir, de->d_name);
	}
	if (n == 0) {
		rc = cli_error(t->cmd, "%s: no *.csv or *.csv.gz trace in this directory", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = add_program(t, names[i]);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* 7:1:2 by program: a seeded shuffle of the programs, then the first 70 % train, 10 % validate. */
static int split_programs(train *t)
{
	size_t n = t->n_progs, n_train = (7 * n + 5) / 10, n_val = (n + 5) / 10;
	size_t *order;
	uint64_t rng = t->seed;

	if (n < 3)
		return cli_usage_error(t->cmd,
				       "%zu programs given, at least 3 are needed for a "
				       "training, a validation and a test set",
				       n);
	if (n_val == 0)
		n_val = 1;
	if (n_train + n_val >= n)
		n_train = n - n_val - 1;
	order = malloc(n * sizeof(*order));
	if (!order)
		return cli_error(t->cmd, "out of memory");
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(next_u64(&rng) % i), s = order[i - 1];
		order[i - 1] = order[j];
		order[j] = s;
	}
	for (size_t i = 0; i < n; i++)
		t->progs[order[i]].split = i < n_train		 ? SPLIT_TRAIN
					   : i < n_train + n_val ? SPLIT_VAL
								 : SPLIT_TEST;
	free(order);
	return 0;
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
static int program_samples(train *t, const program *p, mpxkit_mlp_samples *s, uint64_t *rng)
{
	mpxkit_diag diag = {0};
	int rc;

	for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
		for (int a = 0; a < ASSIGNMENTS; a++) {
			mpxkit_groups *groups = NULL;
			mpxkit_mpx_run *run = NULL;
			char *text = NULL;

			if (a > 0) {
				text = shuffled_groups(p->trace, budgets[b], rng);
				if (!text)
					return cli_error(t->cmd, "out of memory");
				rc = mpxkit_groups_parse("(shuffled groups)", text, strlen(text),
							 &groups, &diag);
				free(text);
				if (rc < 0)
					return cli_lib_error(t->cmd, rc, &diag);
			}
			mpxkit_mpx_config cfg = {budgets[b], NULL, groups, 0, p->path};
			rc = mpxkit_mpx_simulate(p->trace, &cfg, &run, &diag);
			if (rc ==
			    -MPXKIT_ERANGE) { /* shorter than one rotation: nothing to learn */
				mpxkit_groups_free(groups);
				continue;
			}
			if (rc == 0)
				rc =
				    mpxkit_mlp_samples_add(s, &run->layout, run->n_rotations,
							   run->obs, run->ref, run->ocoe, 1, &diag);
			mpxkit_mpx_run_free(run);
			mpxkit_groups_free(groups);
			if (rc < 0)
				return cli_lib_error(t->cmd, rc, &diag);
		}
	}
	return 0;
}

static void progress(void *arg, unsigned epoch, double train_loss, double val_loss)
{
	const train *t = arg;
	const int width = 30;
	int filled = (int)((double)width * epoch / t->epochs);

	if (!t->bar)
		return;
	fprintf(stderr, "\rmpxkit train: epoch %u/%u [%.*s%*s] loss %.4f validation %.4f", epoch,
		t->epochs, filled, "##############################", width - filled, "", train_loss,
		val_loss);
}

/* Mean RA per rotation over the programs of one split and their events, at C = 4. */
static int score_split(train *t, const mpxkit_model *m, enum split sp, double *mean, size_t *n_out)
{
	double sum[N_SCORED] = {0};
	size_t n = 0;
	mpxkit_diag diag = {0};
	int rc = 0;

	for (size_t i = 0; i < t->n_progs && rc == 0; i++) {
		const program *p = &t->progs[i];
		mpxkit_mpx_config cfg = {EVAL_COUNTERS, NULL, NULL, 0, p->path};
		mpxkit_mpx_run *run = NULL;
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
				rc = mpxkit_estimator_run(e, nr, run->obs, run->ref,
							  est + x * nr * ne);
			mpxkit_estimator_free(e);
		}
		if (rc == 0)
			rc = mpxkit_mlp_run(m, &run->layout, nr, run->obs, run->ref,
					    est + (N_SCORED - 1) * nr * ne, &diag);
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
	printf("mean RA per rotation at C=%d (program x event pairs):\n", EVAL_COUNTERS);
	printf("%-11s %6s", "split", "pairs");
	for (size_t x = 0; x + 1 < N_SCORED; x++)
		printf(" %9s", baselines[x]);
	printf(" %9s\n", "mlp");
	for (int sp = 0; sp < N_SPLITS; sp++) {
		double mean[N_SCORED];
		size_t n = 0;
		int rc = score_split(t, m, (enum split)sp, mean, &n);
		if (rc != 0)
			return rc;
		printf("%-11s %6zu", split_names[sp], n);
		for (size_t x = 0; x < N_SCORED; x++)
			printf(" %9.4f", mean[x]);
		printf("\n");
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

static int run_training(train *t, const char *output)
{
	mpxkit_mlp_samples set[2] = {{.half = HALF_WINDOW}, {.half = HALF_WINDOW}};
	mpxkit_model *m = NULL;
	mpxkit_diag diag = {0};
	mpxkit_train_report rep;
	uint64_t rng = t->seed ^ 0x6a09e667f3bcc908ull;
	int rc = 0;

	for (size_t i = 0; i < t->n_progs && rc == 0; i++) {
		rc = mpxkit_trace_read(t->progs[i].path, &t->progs[i].trace, &diag);
		if (rc < 0)
			rc = cli_lib_error(t->cmd, rc, &diag);
	}
	if (rc == 0)
		rc = split_programs(t);
	for (size_t i = 0; i < t->n_progs && rc == 0; i++)
		if (t->progs[i].split != SPLIT_TEST)
			rc = program_samples(t, &t->progs[i], &set[t->progs[i].split], &rng);
	if (rc != 0)
		goto out;
	if (set[0].n == 0 || set[1].n == 0) {
		rc = cli_error(t->cmd, "the corpus gave no training or no validation samples "
				       "(traces shorter than one rotation?)");
		goto out;
	}
	mpxkit_model_shape shape = {
	    .n_layers = 3,
	    .width = {mpxkit_mlp_feature_count(HALF_WINDOW), HIDDEN, HIDDEN, 1},
	    .activation = {MPXKIT_ACT_RELU, MPXKIT_ACT_RELU, MPXKIT_ACT_IDENTITY},
	    .feature_set = 1,
	    .feature_param = HALF_WINDOW,
	};
	mpxkit_train_set tr = {set[0].n, set[0].x, set[0].y}, va = {set[1].n, set[1].x, set[1].y};
	mpxkit_train_config cfg = {.epochs = t->epochs,
				   .patience = 6,
				   .batch = 32,
				   .learning_rate = 1e-3,
				   .dropout = 0.3,
				   .seed = t->seed,
				   .progress = progress,
				   .arg = t};
	rc = mpxkit_model_new(&m, &shape, &diag);
	if (rc == 0)
		rc = mpxkit_model_init(m, &tr, t->seed, &diag);
	if (rc == 0)
		rc = mpxkit_model_train(m, &cfg, &tr, &va, &rep, &diag);
	if (t->bar)
		fputs("\r\033[K", stderr);
	if (rc == 0)
		rc = mpxkit_model_save(m, output, &diag);
	if (rc < 0) {
		rc = cli_lib_error(t->cmd, rc, &diag);
		goto out;
	}
	printf("%zu training and %zu validation samples\n", set[0].n, set[1].n);
	rc = report(t, m, &rep);
out:
	mpxkit_model_free(m);
	mpxkit_mlp_samples_free(&set[0]);
	mpxkit_mlp_samples_free(&set[1]);
	return rc;
}

int cmd_train(int argc, char **argv)
{
	enum { OPT_EPOCHS = 256, OPT_SEED };
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"epochs", required_argument, NULL, OPT_EPOCHS},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	train t = {.cmd = "train", .seed = 1, .epochs = 40};
	const char *output = NULL;
	long v;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_EPOCHS:
			if (cli_parse_long(optarg, 1, 100000, &v) != 0)
				return cli_usage_error(
				    t.cmd, "--epochs takes 1 to 100000, not '%s'", optarg);
			t.epochs = (unsigned)v;
			break;
		case OPT_SEED:
			if (cli_parse_long(optarg, 0, 0x7fffffffL, &v) != 0)
				return cli_usage_error(
				    t.cmd, "--seed takes 0 to 2147483647, not '%s'", optarg);
			t.seed = (uint64_t)v;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (!output)
		return cli_usage_error(t.cmd, "no model file named (-o MODEL)");
	if (optind == argc)
		return cli_usage_error(t.cmd, "no corpus given");
	for (int i = optind; i < argc && rc == 0; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_directory(&t, argv[i]);
		else
			rc = add_program(&t, argv[i]);
	}
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

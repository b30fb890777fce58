/* SPDX-License-Identifier: BSD-3-Clause */
/* Which rank of which job this process is, from the launcher's environment, and dump names from it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpxkit/job.h"

/*
 * One launcher: the variable that says a process is one of its ranks, the
 * job size, and where its job id comes from.  Open MPI comes first because
 * an mpirun inside a Slurm allocation leaves Slurm's variables (of the
 * batch step or of its daemons) in every rank's environment; PMIx and PMI
 * come before Slurm for the same reason (srun --mpi=pmix sets both, and
 * then agrees).
 */
typedef struct launcher {
	const char *name;
	const char *rank_var;
	const char *size_vars[2];
	const char *id_vars[2];
	int in_step; /* counts only within a Slurm step: a batch script's own process is no rank */
} launcher;

static const launcher launchers[] = {
    {"openmpi",
     "OMPI_COMM_WORLD_RANK",
     {"OMPI_COMM_WORLD_SIZE", NULL},
     {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"},
     0},
    {"pmix", "PMIX_RANK", {"OMPI_COMM_WORLD_SIZE", NULL}, {"PMIX_NAMESPACE", NULL}, 0},
    /* MPICH's Hydra (and Intel MPI's) sets PMI_RANK and MPI_LOCALRANKID; Cray PALS and Slurm's
       PMI-2 PMI_JOBID. */
    {"pmi", "PMI_RANK", {"PMI_SIZE", NULL}, {"PMI_JOBID", "I_MPI_HYDRA_UUID"}, 0},
    {"slurm", "SLURM_PROCID", {"SLURM_NTASKS", "SLURM_NPROCS"}, {NULL, NULL}, 1},
};

static const char *env_get(const char *const *envp, const char *name)
{
	const char *v = NULL;

	if (envp == NULL) {
		v = getenv(name);
	} else {
		size_t n = strlen(name);
		for (const char *const *e = envp; *e && v == NULL; e++)
			if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
				v = *e + n + 1;
	}
	return v && *v ? v : NULL;
}

/* A whole decimal number in [0, LONG_MAX]; -1 otherwise. */
static long parse_count(const char *s)
{
	char *end;
	long v;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end ? -1 : v;
}

/* Bytes a file name keeps as they are; others become '_'. */
static void copy_safe(char *out, size_t size, const char *in)
{
	size_t i = 0;

	for (; in[i] && i + 1 < size; i++) {
		char c = in[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		out[i] = ok ? c : '_';
	}
	out[i] = '\0';
}

/* A Slurm step's id, JOBID.STEPID, or NULL outside a step (a batch script is no step). */
static const char *slurm_step(const char *const *envp, char *buf, size_t size)
{
	const char *job = env_get(envp, "SLURM_JOB_ID");
	const char *step = env_get(envp, "SLURM_STEP_ID");

	if (job == NULL)
		job = env_get(envp, "SLURM_JOBID");
	if (step == NULL)
		step = env_get(envp, "SLURM_STEPID");
	if (job == NULL || step == NULL)
		return NULL;
	snprintf(buf, size, "%s.%s", job, step);
	return buf;
}

static int fill_launcher(mpxkit_job *job, const launcher *l, const char *const *envp,
			 mpxkit_diag *diag)
{
	const char *rank = env_get(envp, l->rank_var), *size = NULL, *size_var = NULL, *id = NULL;
	char step[2 * MPXKIT_JOB_ID_MAX];

	job->rank = parse_count(rank);
	if (job->rank < 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s=%s: not a rank (a whole number)",
				   l->rank_var, rank);
	for (int i = 0; i < 2 && size == NULL && l->size_vars[i]; i++)
		size = env_get(envp, size_var = l->size_vars[i]);
	job->size = 0;
	if (size != NULL) {
		job->size = parse_count(size);
		if (job->size < 1)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s=%s: not a job size (a whole number above 0)",
					   size_var, size);
		if (job->rank >= job->size)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "%s=%s is not below %s=%s",
					   l->rank_var, rank, size_var, size);
	}
	for (int i = 0; i < 2 && id == NULL && l->id_vars[i]; i++)
		id = env_get(envp, l->id_vars[i]);
	if (id == NULL)
		id = slurm_step(envp, step, sizeof step);
	if (strcmp(l->name, "pmi") == 0 && env_get(envp, "MPI_LOCALRANKID"))
		snprintf(job->launcher, sizeof job->launcher, "hydra");
	else
		snprintf(job->launcher, sizeof job->launcher, "%s", l->name);
	copy_safe(job->id, sizeof job->id, id ? id : "");
	job->has_rank = 1;
	return 0;
}

int mpxkit_job_detect(mpxkit_job *job, const char *const *envp, mpxkit_diag *diag)
{
	mpxkit_job j = {.size = 1};
	char host[MPXKIT_JOB_HOST_MAX];
	int rc = 0;

	if (job == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "job: NULL argument");
	snprintf(j.launcher, sizeof j.launcher, "none");
	for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) {
		const launcher *l = &launchers[i];
		char step[2 * MPXKIT_JOB_ID_MAX];
		if (env_get(envp, l->rank_var) == NULL ||
		    (l->in_step && slurm_step(envp, step, sizeof step) == NULL))
			continue;
		rc = fill_launcher(&j, l, envp, diag);
		break;
	}
	if (rc < 0)
		return rc;
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	copy_safe(j.host, sizeof j.host, host);
	j.pid = (long)getpid();
	*job = j;
	return 0;
}

/*
 * Where ".RANK" goes in a template that has neither %r nor %p: before the
 * extension of the last component (a literal '.', not its first byte,
 * followed by no directive), else at the end.
 */
static size_t rank_insertion(const char *tmpl)
{
	const char *slash = strrchr(tmpl, '/');
	const char *base = slash ? slash + 1 : tmpl;
	const char *dot = strrchr(base, '.');

	if (dot == NULL || dot == base || strchr(dot, '%'))
		return strlen(tmpl);
	return (size_t)(dot - tmpl);
}

/* Whether tmpl has the directive %c (a "%%" is no directive). */
static int has_directive(const char *tmpl, char c)
{
	for (const char *p = tmpl; *p; p++)
		if (*p == '%' && p[1]) {
			if (p[1] == c)
				return 1;
			p++;
		}
	return 0;
}

typedef struct expansion {
	char *out;
	size_t size, len;
	int overflow;
} expansion;

static void emit(expansion *x, const char *s, size_t n)
{
	if (x->len + n >= x->size) {
		x->overflow = 1;
		return;
	}
	memcpy(x->out + x->len, s, n);
	x->len += n;
	x->out[x->len] = '\0';
}

/* One directive's text, or an error naming it. */
static int directive(const mpxkit_job *job, const char *tmpl, char c, expansion *x,
		     mpxkit_diag *diag)
{
	char num[32];

	switch (c) {
	case 'r':
		snprintf(num, sizeof num, "%ld", job->rank);
		emit(x, num, strlen(num));
		return 0;
	case 's':
		if (job->size < 1)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s: %%s: the launcher (%s) does not give the job size",
					   tmpl, job->launcher);
		snprintf(num, sizeof num, "%ld", job->size);
		emit(x, num, strlen(num));
		return 0;
	case 'p':
		snprintf(num, sizeof num, "%ld", job->pid);
		emit(x, num, strlen(num));
		return 0;
	case 'h':
		emit(x, job->host, strlen(job->host));
		return 0;
	case 'j':
		if (job->id[0] == '\0')
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s: %%j: no job id in the environment (launcher: %s)",
					   tmpl, job->launcher);
		emit(x, job->id, strlen(job->id));
		return 0;
	case '%':
		emit(x, "%", 1);
		return 0;
	default:
		if (c == '\0')
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "%s: a lone '%%' at the end (%%%% is a '%%')", tmpl);
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "%s: %%%c: unknown (use %%r %%s %%h %%p %%j or %%%%)", tmpl, c);
	}
}

int mpxkit_job_expand(const mpxkit_job *job, const char *tmpl, char *out, size_t out_size,
		      mpxkit_diag *diag)
{
	expansion x = {out, out_size, 0, 0};
	size_t insert = SIZE_MAX;

	if (job == NULL || tmpl == NULL || out == NULL || out_size == 0)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "job: NULL argument");
	out[0] = '\0';
	if (job->has_rank && !has_directive(tmpl, 'r') && !has_directive(tmpl, 'p'))
		insert = rank_insertion(tmpl);
	for (size_t i = 0;; i++) {
		if (i == insert) {
			char num[32];
			snprintf(num, sizeof num, ".%ld", job->rank);
			emit(&x, num, strlen(num));
		}
		if (tmpl[i] == '\0')
			break;
		if (tmpl[i] != '%') {
			emit(&x, &tmpl[i], 1);
			continue;
		}
		int rc = directive(job, tmpl, tmpl[i + 1], &x, diag);
		if (rc < 0)
			return rc;
		i++;
	}
	if (x.overflow)
		return mpxkit_fail(diag, MPXKIT_ERANGE,
				   "%s: the expanded name is longer than %zu bytes", tmpl,
				   out_size - 1);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI jobs without MPI: launchers' environments, dump names, and dumps that never replace each
 * other. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/job.h"
#include "mpxkit/outfile.h"

static int setup(void)
{
	return cutest_scratch_make("job");
}

static int teardown(void)
{
	return cutest_scratch_remove();
}

/* ---- Launchers ---------------------------------------------------------------------------- */

static mpxkit_job detect_ok(const char *const *envp)
{
	mpxkit_job j;
	mpxkit_diag d = {0};

	memset(&j, 0x55, sizeof j);
	CU_ASSERT_EQUAL(mpxkit_job_detect(&j, envp, &d), 0);
	return j;
}

static void test_open_mpi(void)
{
	/* As mpirun 4.1 sets them here (OMPI_MCA_ess_base_jobid and PMIX_NAMESPACE agree). */
	const char *const env[] = {"OMPI_COMM_WORLD_RANK=3",
				   "OMPI_COMM_WORLD_SIZE=4",
				   "OMPI_MCA_ess_base_jobid=1245185",
				   "PMIX_RANK=3",
				   "PMIX_NAMESPACE=1245185",
				   "SLURM_PROCID=0",
				   "SLURM_JOB_ID=77",
				   "SLURM_STEP_ID=0",
				   NULL};
	/* Open MPI 5 (PRRTE): no ess jobid, the namespace names the job. */
	const char *const env5[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2",
				    "PMIX_NAMESPACE=prterun-vm-1234@1", NULL};
	mpxkit_job j = detect_ok(env);

	CU_ASSERT_STRING_EQUAL(j.launcher, "openmpi");
	CU_ASSERT_EQUAL(j.has_rank, 1);
	CU_ASSERT_EQUAL(j.rank, 3);
	CU_ASSERT_EQUAL(j.size, 4);
	CU_ASSERT_STRING_EQUAL(j.id, "1245185");
	CU_ASSERT_EQUAL(j.pid, (long)getpid());
	CU_ASSERT(j.host[0] != '\0');
	j = detect_ok(env5);
	CU_ASSERT_STRING_EQUAL(j.launcher, "openmpi");
	CU_ASSERT_EQUAL(j.rank, 0);
	CU_ASSERT_STRING_EQUAL(j.id, "prterun-vm-1234_1"); /* '@' is no file-name byte */
}

static void test_pmix_pmi_hydra(void)
{
	const char *const pmix[] = {"PMIX_RANK=5", "PMIX_NAMESPACE=slurm.pmix.99.2", NULL};
	const char *const hydra[] = {
	    "PMI_RANK=1",     "PMI_SIZE=2",	 "PMI_FD=5",	    "MPI_LOCALRANKID=1",
	    "SLURM_PROCID=0", "SLURM_JOB_ID=12", "SLURM_STEP_ID=3", NULL};
	const char *const pals[] = {"PMI_RANK=7", "PMI_SIZE=8", "PMI_JOBID=4242.1", NULL};
	mpxkit_job j = detect_ok(pmix);

	CU_ASSERT_STRING_EQUAL(j.launcher, "pmix");
	CU_ASSERT_EQUAL(j.rank, 5);
	CU_ASSERT_EQUAL(j.size, 0); /* PMIx alone does not say */
	CU_ASSERT_STRING_EQUAL(j.id, "slurm.pmix.99.2");
	/* Hydra under Slurm: no id of its own, the step's. */
	j = detect_ok(hydra);
	CU_ASSERT_STRING_EQUAL(j.launcher, "hydra");
	CU_ASSERT_EQUAL(j.rank, 1);
	CU_ASSERT_EQUAL(j.size, 2);
	CU_ASSERT_STRING_EQUAL(j.id, "12.3");
	j = detect_ok(pals);
	CU_ASSERT_STRING_EQUAL(j.launcher, "pmi");
	CU_ASSERT_EQUAL(j.rank, 7);
	CU_ASSERT_STRING_EQUAL(j.id, "4242.1");
}

static void test_slurm(void)
{
	const char *const step[] = {"SLURM_PROCID=9", "SLURM_NTASKS=16", "SLURM_JOB_ID=555",
				    "SLURM_STEP_ID=1", NULL};
	const char *const old[] = {"SLURM_PROCID=2", "SLURM_NPROCS=3", "SLURM_JOBID=8",
				   "SLURM_STEPID=0", NULL};
	/* A batch script's own process: SLURM_PROCID=0 but no step, so no rank. */
	const char *const batch[] = {"SLURM_PROCID=0", "SLURM_NTASKS=64", "SLURM_JOB_ID=555", NULL};
	mpxkit_job j = detect_ok(step);

	CU_ASSERT_STRING_EQUAL(j.launcher, "slurm");
	CU_ASSERT_EQUAL(j.rank, 9);
	CU_ASSERT_EQUAL(j.size, 16);
	CU_ASSERT_STRING_EQUAL(j.id, "555.1");
	j = detect_ok(old);
	CU_ASSERT_EQUAL(j.rank, 2);
	CU_ASSERT_EQUAL(j.size, 3);
	CU_ASSERT_STRING_EQUAL(j.id, "8.0");
	j = detect_ok(batch);
	CU_ASSERT_STRING_EQUAL(j.launcher, "none");
	CU_ASSERT_EQUAL(j.has_rank, 0);
}

static void test_no_launcher(void)
{
	const char *const none[] = {"HOME=/root", "OMPI_COMM_WORLD_RANK=", NULL}; /* empty: unset */
	mpxkit_job j = detect_ok(none);

	CU_ASSERT_STRING_EQUAL(j.launcher, "none");
	CU_ASSERT_EQUAL(j.has_rank, 0);
	CU_ASSERT_EQUAL(j.rank, 0);
	CU_ASSERT_EQUAL(j.size, 1);
	CU_ASSERT_STRING_EQUAL(j.id, "");
}

static void expect_detect_error(const char *const *envp, const char *what)
{
	mpxkit_job j;
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_job_detect(&j, envp, &d), -MPXKIT_EINVAL);
	printf("\n    %s", d.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, what));
}

static void test_bad_values(void)
{
	const char *const letters[] = {"OMPI_COMM_WORLD_RANK=abc", "OMPI_COMM_WORLD_SIZE=4", NULL};
	const char *const negative[] = {"PMI_RANK=-1", "PMI_SIZE=4", NULL};
	const char *const beyond[] = {"PMI_RANK=4", "PMI_SIZE=4", NULL};
	const char *const zero[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=0", NULL};
	const char *const huge[] = {"PMIX_RANK=99999999999999999999999", NULL};

	expect_detect_error(letters, "OMPI_COMM_WORLD_RANK=abc");
	expect_detect_error(negative, "PMI_RANK=-1");
	expect_detect_error(beyond, "PMI_RANK=4 is not below PMI_SIZE=4");
	expect_detect_error(zero, "OMPI_COMM_WORLD_SIZE=0");
	expect_detect_error(huge, "PMIX_RANK=");
	printf("\n  ");
}

/* ---- Templates --------------------------------------------------------------------------------
 */

static mpxkit_job rank_job(long rank, int has_rank)
{
	mpxkit_job j;

	memset(&j, 0, sizeof j);
	snprintf(j.launcher, sizeof j.launcher, has_rank ? "openmpi" : "none");
	j.has_rank = has_rank;
	j.rank = rank;
	j.size = has_rank ? 16 : 1;
	snprintf(j.id, sizeof j.id, "%s", has_rank ? "4711" : "");
	snprintf(j.host, sizeof j.host, "node1.cluster");
	j.pid = 2345;
	return j;
}

static void expect_name(const mpxkit_job *j, const char *tmpl, const char *want)
{
	char out[256];
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_job_expand(j, tmpl, out, sizeof out, &d), 0);
	if (strcmp(out, want) != 0)
		printf("\n    %s -> %s, expected %s", tmpl, out, want);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_directives(void)
{
	mpxkit_job j = rank_job(3, 1);

	expect_name(&j, "job.%r.pcz", "job.3.pcz");
	expect_name(&j, "%j/%h-%r-of-%s.pcz", "4711/node1.cluster-3-of-16.pcz");
	expect_name(&j, "run-%p.pcz", "run-2345.pcz"); /* %p: no rank inserted either */
	expect_name(&j, "100%%-%r.pcz", "100%-3.pcz");
}

static void test_rank_inserted(void)
{
	mpxkit_job j = rank_job(12, 1), alone = rank_job(0, 0);

	expect_name(&j, "job.pcz", "job.12.pcz");
	expect_name(&j, "out/job", "out/job.12");
	expect_name(&j, "a.b/job", "a.b/job.12");   /* only the last component has an extension */
	expect_name(&j, "dir/.pcz", "dir/.pcz.12"); /* a leading dot starts no extension */
	expect_name(&j, "job.%h", "job.node1.cluster.12"); /* the host's dots are no extension */
	expect_name(&j, "%h.pcz", "node1.cluster.12.pcz");
	expect_name(&j, "job-%j.tar.pcz", "job-4711.tar.12.pcz");
	expect_name(&j, "a%%r.pcz", "a%r.12.pcz"); /* %%r is no %r */
	/* Outside a launcher the name is the template's. */
	expect_name(&alone, "job.pcz", "job.pcz");
	expect_name(&alone, "job.%r-%s.pcz", "job.0-1.pcz");
}

static void expect_expand_error(const mpxkit_job *j, const char *tmpl, size_t size, int code,
				const char *what)
{
	char out[64];
	mpxkit_diag d = {0};

	CU_ASSERT_EQUAL(mpxkit_job_expand(j, tmpl, out, size, &d), code);
	printf("\n    %s", d.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, what));
}

static void test_template_errors(void)
{
	mpxkit_job j = rank_job(3, 1), alone = rank_job(0, 0), pmix = rank_job(1, 1);

	pmix.size = 0;
	expect_expand_error(&j, "job.%x.pcz", 64, -MPXKIT_EINVAL, "%x: unknown");
	expect_expand_error(&j, "job%", 64, -MPXKIT_EINVAL, "lone '%'");
	expect_expand_error(&alone, "job.%j.pcz", 64, -MPXKIT_EINVAL, "%j: no job id");
	expect_expand_error(&pmix, "job.%s.pcz", 64, -MPXKIT_EINVAL, "does not give the job size");
	expect_expand_error(&j, "a-rather-long-name-%h-%h.pcz", 32, -MPXKIT_ERANGE,
			    "longer than 31");
	printf("\n  ");
}

/* ---- Dumps that keep each other --------------------------------------------------------- */

static int count_files(const char *dir, int *stray)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*stray = 0;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (strstr(e->d_name, ".tmp."))
			(*stray)++;
	}
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[4][256];
	static int k;
	char *b = buf[k++ % 4];
	FILE *f = fopen(path, "rb");
	size_t n = 0;

	b[0] = '\0';
	if (f) {
		n = fread(b, 1, 255, f);
		fclose(f);
	}
	b[n] = '\0';
	return b;
}

static void put(const char *path, const char *text, time_t age_s)
{
	FILE *f = fopen(path, "wb");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	if (age_s) {
		struct timespec t[2];
		clock_gettime(CLOCK_REALTIME, &t[0]);
		t[0].tv_sec -= age_s;
		t[1] = t[0];
		CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, t, 0), 0);
	}
}

static mpxkit_job_dump dump_at(const char *tmpl)
{
	const char *const env[] = {NULL};
	mpxkit_job_dump d;
	mpxkit_diag diag = {0};

	memset(&d, 0, sizeof d);
	CU_ASSERT_EQUAL(mpxkit_job_dump_init(&d, tmpl, env, &diag), 0);
	return d;
}

static void write_dump(const mpxkit_job_dump *d, const char *text, const char *want_name)
{
	char written[4096];
	mpxkit_diag diag = {0};

	CU_ASSERT_EQUAL(
	    mpxkit_job_dump_write(d, text, strlen(text), written, sizeof written, &diag), 0);
	CU_ASSERT_STRING_EQUAL(written, want_name);
	CU_ASSERT_STRING_EQUAL(slurp(want_name), text);
}

static void test_dump_init_checks(void)
{
	const char *const env[] = {NULL};
	mpxkit_job_dump d;
	mpxkit_diag diag = {0};
	struct timespec before, after;
	int stray;

	CU_ASSERT_EQUAL(mpxkit_job_dump_init(&d, "/nonexistent-dir/x.pcz", env, &diag),
			-MPXKIT_ESYS);
	printf("\n    %s", diag.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "cannot write in /nonexistent-dir"));
	CU_ASSERT_EQUAL(mpxkit_job_dump_init(&d, cutest_scratch(), env, &diag), -MPXKIT_EINVAL);
	printf("\n    %s\n  ", diag.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag.msg, "names a directory"));
	CU_ASSERT_EQUAL(mpxkit_job_dump_init(&d, "x/", env, &diag), -MPXKIT_EINVAL);
	/* The clock is the file system's, read from a file it creates: now, and nothing left. */
	clock_gettime(CLOCK_REALTIME, &before);
	d = dump_at(cutest_scratch_path("clock.pcz"));
	clock_gettime(CLOCK_REALTIME, &after);
	CU_ASSERT(d.since.tv_sec >= before.tv_sec - 1 && d.since.tv_sec <= after.tv_sec + 1);
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 0);
}

static void test_earlier_run_replaced(void)
{
	const char *path = cutest_scratch_path("rerun.pcz");
	mpxkit_job_dump d;
	int stray;

	put(path, "earlier run", 3600);
	d = dump_at(path);
	write_dump(&d, "this run", path);
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 1);
	unlink(path);
}

static void test_this_run_kept(void)
{
	char alt1[4096], alt2[4096];
	const char *path = cutest_scratch_path("same.pcz");
	mpxkit_job_dump d = dump_at(path);
	int stray;

	snprintf(alt1, sizeof alt1, "%s", cutest_scratch_path("same-1.pcz"));
	snprintf(alt2, sizeof alt2, "%s", cutest_scratch_path("same-2.pcz"));
	put(path, "another process", 0); /* written after the dump was set up */
	put(alt1, "a third one", 0);
	write_dump(&d, "mine", alt2);
	CU_ASSERT_STRING_EQUAL(slurp(path), "another process");
	CU_ASSERT_STRING_EQUAL(slurp(alt1), "a third one");
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 3);
	CU_ASSERT_EQUAL(stray, 0);
	unlink(path);
	unlink(alt1);
	unlink(alt2);
}

/* A minimal dump carrying a job's metadata, as a rank's file would. */
static void put_job_dump(const char *path, const char *launcher, const char *id, time_t age_s)
{
	const char *ev[] = {"e"};
	mpxkit_pcz_writer *w = NULL;
	uint64_t t[2] = {0, 1}, v = 1;
	mpxkit_pcz_unit u = {"t0", 1, t, &v, -1, -1};
	struct timespec ts[2];

	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_open(path, NULL, 1, ev, &w, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "job.launcher", launcher, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_set_meta(w, "job.id", id, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_pcz_writer_add_region(w, "r", 1, &u, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_pcz_writer_close(w, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void test_same_job_kept(void)
{
	const char *path = cutest_scratch_path("job.pcz");
	const char *alt = cutest_scratch_path("job-1.pcz");
	const char *const env[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1",
				   "OMPI_MCA_ess_base_jobid=4711", NULL};
	mpxkit_job_dump d;
	mpxkit_diag diag = {0};
	int stray;

	/* An older file of the same job (a rank that finished first under a colliding name): kept.
	 */
	CU_ASSERT_EQUAL_FATAL(
	    mpxkit_job_dump_init(&d, cutest_scratch_path("job.%r.pcz"), env, &diag), 0);
	snprintf(d.path, sizeof d.path, "%s", path);
	put_job_dump(path, "openmpi", "4711", 3600);
	write_dump(&d, "same job", alt);
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 2);
	unlink(alt);
	/* An older dump of another job: an earlier run, replaced. */
	put_job_dump(path, "openmpi", "4700", 3600);
	write_dump(&d, "next job", path);
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 1);
	unlink(path);
}

static void test_devices_written_through(void)
{
	mpxkit_job_dump d = dump_at("/dev/null");

	write_dump(&d, "", "/dev/null");
}

/*
 * A keep function that lets a file go the first time it is asked and keeps
 * it the second time: another process's dump arrived between the question
 * and the move.  The file must come back, and the output go elsewhere.
 */
static int changes_mind(const char *path, void *arg, mpxkit_diag *diag)
{
	int *asked = arg;
	(void)path;
	(void)diag;
	return (*asked)++ > 0;
}

static void test_moved_aside_and_put_back(void)
{
	const char *path = cutest_scratch_path("race.pcz");
	const char *alt = cutest_scratch_path("race-1.pcz");
	mpxkit_outfile *f = NULL;
	char *written = NULL;
	int asked = 0, stray;

	put(path, "theirs", 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_open(&f, path, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write(f, "mine", 4, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_commit_keep(f, changes_mind, &asked, &written, NULL), 0);
	CU_ASSERT_EQUAL(asked, 2);
	CU_ASSERT_STRING_EQUAL(slurp(path), "theirs");
	CU_ASSERT_STRING_EQUAL(written, alt);
	CU_ASSERT_STRING_EQUAL(slurp(alt), "mine");
	CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), 2);
	CU_ASSERT_EQUAL(stray, 0);
	free(written);
	unlink(path);
	unlink(alt);
}

/*
 * N processes set their dumps up, wait for each other, and write the same
 * name at once, an earlier run's file being there: N dumps, each whole,
 * the earlier file gone, nothing else left.  Repeated, to meet the races.
 */
#define N_WRITERS 8
#define ROUNDS	  25

static void test_writers_at_once(void)
{
	const char *path = cutest_scratch_path("once.pcz");
	int lost = 0, extra = 0;

	for (int round = 0; round < ROUNDS; round++) {
		int go[2], ready[2], stray, seen[N_WRITERS] = {0};
		pid_t pids[N_WRITERS];
		DIR *dir;
		struct dirent *e;
		char c = 'g';

		put(path, "earlier run", 3600);
		CU_ASSERT_FATAL(pipe(go) == 0 && pipe(ready) == 0);
		for (int i = 0; i < N_WRITERS; i++) {
			pids[i] = fork();
			if (pids[i] == 0) {
				mpxkit_job_dump d;
				char text[32];
				const char *const env[] = {NULL};
				int ok = mpxkit_job_dump_init(&d, path, env, NULL) == 0;
				close(go[1]);
				/* The parent closing its end of go is the signal: read returns 0.
				 */
				if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 0)
					_exit(3);
				snprintf(text, sizeof text, "writer %d", i);
				_exit(ok && mpxkit_job_dump_write(&d, text, strlen(text), NULL, 0,
								  NULL) == 0
					  ? 0
					  : 2);
			}
		}
		close(ready[1]);
		for (int i = 0; i < N_WRITERS; i++)
			CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
		close(ready[0]);
		close(go[0]);
		close(go[1]); /* every reader's read returns: all write at once */
		for (int i = 0; i < N_WRITERS; i++) {
			int status = -1;
			waitpid(pids[i], &status, 0);
			CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
		CU_ASSERT_EQUAL(count_files(cutest_scratch(), &stray), N_WRITERS);
		CU_ASSERT_EQUAL(stray, 0);
		dir = opendir(cutest_scratch());
		CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
		while ((e = readdir(dir)) != NULL) {
			char full[4096];
			int w;
			if (e->d_name[0] == '.')
				continue;
			snprintf(full, sizeof full, "%s/%s", cutest_scratch(), e->d_name);
			if (sscanf(slurp(full), "writer %d", &w) == 1 && w >= 0 && w < N_WRITERS)
				seen[w]++;
			else
				extra++;
			unlink(full);
		}
		closedir(dir);
		for (int i = 0; i < N_WRITERS; i++)
			lost += seen[i] != 1;
	}
	printf("\n    %d rounds of %d writers: %d dumps lost or doubled, %d other files\n  ",
	       ROUNDS, N_WRITERS, lost, extra);
	CU_ASSERT_EQUAL(lost, 0);
	CU_ASSERT_EQUAL(extra, 0);
}

static const cutest_case launcher_cases[] = {
    {"Open MPI 4 and 5", test_open_mpi},
    {"PMIx, PMI, Hydra", test_pmix_pmi_hydra},
    {"Slurm steps, not batch scripts", test_slurm},
    {"no launcher: rank 0 of 1", test_no_launcher},
    {"bad values name the variable", test_bad_values},
    {NULL, NULL},
};

static const cutest_case template_cases[] = {
    {"%r %s %h %p %j %%", test_directives},
    {"rank before the extension", test_rank_inserted},
    {"errors", test_template_errors},
    {NULL, NULL},
};

static const cutest_case dump_cases[] = {
    {"init checks the directory, reads its clock", test_dump_init_checks},
    {"an earlier run's file is replaced", test_earlier_run_replaced},
    {"this run's files are kept", test_this_run_kept},
    {"the same job's dumps are kept", test_same_job_kept},
    {"devices are written through", test_devices_written_through},
    {"a file that arrives meanwhile is put back", test_moved_aside_and_put_back},
    {"8 writers at once: 8 dumps", test_writers_at_once},
    {NULL, NULL},
};

int main(void)
{
	const cutest_suite suites[] = {
	    {"launchers", launcher_cases, NULL, NULL},
	    {"dump name templates", template_cases, NULL, NULL},
	    {"dumps never replace each other", dump_cases, setup, teardown},
	    {NULL, NULL, NULL, NULL},
	};
	return cutest_run("test_job", suites);
}

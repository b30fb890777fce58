/* SPDX-License-Identifier: BSD-3-Clause */
/* One dump per process: its name, its job metadata, and a final write that keeps other processes'
 * dumps. */
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job_impl.h"
#include "mpxkit/job.h"
#include "mpxkit/outfile.h"

/* The directory part of path: "." for a bare name, "/" for a name at the root. */
static void dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, size, ".");
	else
		snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/*
 * The file system's clock, read from a file created in dir and removed at
 * once: on NFS it is the server's clock, the one every other dump's time
 * comes from, so a client's own clock never enters the comparison.
 */
static int dir_clock(const char *dir, struct timespec *now, mpxkit_diag *diag)
{
	struct stat st;
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		char name[4200];
		snprintf(name, sizeof name, "%s/.mpxkit-clock-XXXXXX", dir);
		fd = mkostemp(name, O_CLOEXEC);
		if (fd >= 0)
			unlink(name);
	}
	if (fd < 0)
		return mpxkit_fail_sys(diag, "cannot write in %s", dir);
	if (fstat(fd, &st) != 0) {
		int rc = mpxkit_fail_sys(diag, "cannot write in %s", dir);
		close(fd);
		return rc;
	}
	close(fd);
	*now = st.st_mtim;
	return 0;
}

int mpxkit_job_dump_init(mpxkit_job_dump *d, const char *tmpl, const char *const *envp,
			 mpxkit_diag *diag)
{
	mpxkit_job_dump n;
	char dir[sizeof n.path];
	struct stat st;
	size_t len;
	int rc;

	if (d == NULL || tmpl == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "job dump: NULL argument");
	memset(&n, 0, sizeof n);
	rc = mpxkit_job_detect(&n.job, envp, diag);
	if (rc == 0)
		rc = mpxkit_job_expand(&n.job, tmpl, n.path, sizeof n.path, diag);
	if (rc < 0)
		return rc;
	len = strlen(n.path);
	if (len == 0 || n.path[len - 1] == '/' || (stat(n.path, &st) == 0 && S_ISDIR(st.st_mode)))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: names a directory, not a file",
				   n.path);
	dir_of(n.path, dir, sizeof dir);
	rc = dir_clock(dir, &n.since, diag);
	if (rc < 0)
		return rc;
	*d = n;
	return 0;
}

int mpxkit_job_set_meta(const mpxkit_job *job, mpxkit_pcz_writer *w, mpxkit_diag *diag)
{
	char num[32];
	int rc;

	rc = mpxkit_pcz_writer_set_meta(w, "job.launcher", job->launcher, diag);
	snprintf(num, sizeof num, "%ld", job->rank);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "job.rank", num, diag);
	snprintf(num, sizeof num, "%ld", job->size);
	if (rc >= 0 && job->size > 0)
		rc = mpxkit_pcz_writer_set_meta(w, "job.size", num, diag);
	if (rc >= 0 && job->id[0])
		rc = mpxkit_pcz_writer_set_meta(w, "job.id", job->id, diag);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "host", job->host, diag);
	snprintf(num, sizeof num, "%ld", job->pid);
	if (rc >= 0)
		rc = mpxkit_pcz_writer_set_meta(w, "pid", num, diag);
	return rc;
}

const char *job_meta_value(const mpxkit_pcz_reader *r, const char *key)
{
	const char *k, *v;

	for (size_t i = 0; mpxkit_pcz_reader_meta(r, i, &k, &v) == 0; i++)
		if (strcmp(k, key) == 0)
			return v;
	return NULL;
}

/* 1 when path is a dump whose job.launcher and job.id are this job's. */
static int same_job(const char *path, const mpxkit_job *job)
{
	mpxkit_pcz_reader *r = NULL;
	const char *launcher, *id;
	int same;

	if (mpxkit_pcz_reader_open(path, &r, NULL) < 0)
		return 0;
	launcher = job_meta_value(r, "job.launcher");
	id = job_meta_value(r, "job.id");
	same = launcher && id && strcmp(launcher, job->launcher) == 0 && strcmp(id, job->id) == 0;
	mpxkit_pcz_reader_free(r);
	return same;
}

/*
 * mpxkit_outfile_keep_fn of a dump: keep anything but a regular file, a
 * file that changed since the dump was set up (another process of this run
 * wrote it), and a dump of the same job; let an earlier run's file go.
 */
static int keep_this_run(const char *path, void *arg, mpxkit_diag *diag)
{
	const mpxkit_job_dump *d = arg;
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : mpxkit_fail_sys(diag, "cannot check %s", path);
	if (!S_ISREG(st.st_mode))
		return 1;
	if (st.st_mtim.tv_sec > d->since.tv_sec ||
	    (st.st_mtim.tv_sec == d->since.tv_sec && st.st_mtim.tv_nsec >= d->since.tv_nsec))
		return 1;
	return d->job.id[0] && same_job(path, &d->job);
}

int mpxkit_job_dump_write(const mpxkit_job_dump *d, const void *data, size_t len, char *written,
			  size_t written_size, mpxkit_diag *diag)
{
	mpxkit_outfile *f = NULL;
	char *name = NULL;
	int rc;

	if (d == NULL || (data == NULL && len > 0))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "job dump: NULL argument");
	rc = mpxkit_outfile_open(&f, d->path, diag);
	if (rc < 0)
		return rc;
	rc = mpxkit_outfile_write(f, data, len, diag);
	if (rc < 0) {
		mpxkit_outfile_abort(f);
		return rc;
	}
	rc = mpxkit_outfile_commit_keep(f, keep_this_run, (void *)d, &name, diag);
	if (rc == 0 && written && written_size)
		snprintf(written, written_size, "%s", name);
	free(name);
	return rc;
}

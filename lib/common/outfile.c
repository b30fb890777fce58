/* SPDX-License-Identifier: BSD-3-Clause */
/* Temporary-file-and-rename output, shared by every writer of the library and the tools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpxkit/outfile.h"

#define TMP_SUFFIX ".tmp.XXXXXX"

struct mpxkit_outfile {
	int fd;
	char *path;
	char *tmp;
};

static void outfile_free(mpxkit_outfile *f)
{
	free(f->path);
	free(f->tmp);
	free(f);
}

int mpxkit_outfile_open(mpxkit_outfile **out, const char *path, mpxkit_diag *diag)
{
	mpxkit_outfile *f;
	size_t n;
	mode_t mask;

	if (out == NULL || path == NULL || *path == '\0')
		return mpxkit_fail(diag, MPXKIT_EINVAL, "output file: missing path");
	n = strlen(path);
	f = calloc(1, sizeof *f);
	if (f == NULL || (f->path = strdup(path)) == NULL || (f->tmp = malloc(n + sizeof TMP_SUFFIX)) == NULL) {
		if (f)
			outfile_free(f);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	}
	memcpy(f->tmp, path, n);
	memcpy(f->tmp + n, TMP_SUFFIX, sizeof TMP_SUFFIX);
	f->fd = mkstemp(f->tmp);
	if (f->fd < 0) {
		int rc = mpxkit_fail_sys(diag, "cannot create %s", path);
		outfile_free(f);
		return rc;
	}
	/* mkstemp creates 0600; a data file gets what creat() would give it. */
	mask = umask(0);
	umask(mask);
	if (fchmod(f->fd, 0666 & ~mask) != 0) {
		int rc = mpxkit_fail_sys(diag, "cannot create %s", path);
		mpxkit_outfile_abort(f);
		return rc;
	}
	*out = f;
	return 0;
}

int mpxkit_outfile_write(mpxkit_outfile *f, const void *buf, size_t len, mpxkit_diag *diag)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(f->fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return mpxkit_fail_sys(diag, "cannot write %s", f->path);
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int mpxkit_outfile_commit(mpxkit_outfile *f, mpxkit_diag *diag)
{
	int rc = 0;

	if (close(f->fd) != 0) {
		f->fd = -1;
		rc = mpxkit_fail_sys(diag, "cannot write %s", f->path);
	} else if (rename(f->tmp, f->path) != 0) {
		f->fd = -1;
		rc = mpxkit_fail_sys(diag, "cannot rename %s to %s", f->tmp, f->path);
	} else {
		outfile_free(f);
		return 0;
	}
	unlink(f->tmp);
	outfile_free(f);
	return rc;
}

void mpxkit_outfile_abort(mpxkit_outfile *f)
{
	if (f == NULL)
		return;
	if (f->fd >= 0)
		close(f->fd);
	unlink(f->tmp);
	outfile_free(f);
}

int mpxkit_outfile_write_all(const char *path, const void *buf, size_t len, mpxkit_diag *diag)
{
	mpxkit_outfile *f;
	int rc = mpxkit_outfile_open(&f, path, diag);

	if (rc < 0)
		return rc;
	rc = mpxkit_outfile_write(f, buf, len, diag);
	if (rc < 0) {
		mpxkit_outfile_abort(f);
		return rc;
	}
	return mpxkit_outfile_commit(f, diag);
}

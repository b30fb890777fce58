/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files: atomic replacement of regular files, write-through for devices and FIFOs, for every writer. */
#define _GNU_SOURCE /* mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpxkit/outfile.h"

#define TMP_SUFFIX ".tmp.XXXXXX"
#define MAX_LINKS 40

struct mpxkit_outfile {
	int fd;
	int stream;  /* written through: no temporary file, no rename */
	int stdout_; /* fd 1, never closed */
	char *path;  /* the final path (a symlink's target), for renames and messages */
	char *shown; /* the path as the caller gave it, for messages */
	char *tmp;
};

static void outfile_free(mpxkit_outfile *f)
{
	free(f->path);
	free(f->shown);
	free(f->tmp);
	free(f);
}

/* dir/name of a relative link target, against the directory of the link itself. */
static char *join_link(const char *link, const char *target)
{
	const char *slash = strrchr(link, '/');
	size_t dlen = slash ? (size_t)(slash - link) + 1 : 0;
	size_t tlen = strlen(target);
	char *out;

	if (target[0] == '/' || dlen == 0)
		return strdup(target);
	out = malloc(dlen + tlen + 1);
	if (out) {
		memcpy(out, link, dlen);
		memcpy(out + dlen, target, tlen + 1);
	}
	return out;
}

/*
 * The path a write finally lands on: symlinks followed one by one, so a
 * dangling link still names the file it will create.  *st gets lstat's
 * answer for that path (st_mode 0 when it does not exist).
 */
static int resolve(const char *path, char **out, struct stat *st, mpxkit_diag *diag)
{
	char *cur = strdup(path);

	if (cur == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	for (int hops = 0;; hops++) {
		char target[PATH_MAX];
		ssize_t n;
		char *next;

		if (lstat(cur, st) != 0) {
			if (errno != ENOENT) {
				int rc = mpxkit_fail_sys(diag, "cannot create %s", path);
				free(cur);
				return rc;
			}
			memset(st, 0, sizeof *st);
			break;
		}
		if (!S_ISLNK(st->st_mode))
			break;
		if (hops == MAX_LINKS) {
			free(cur);
			errno = ELOOP;
			return mpxkit_fail_sys(diag, "cannot create %s", path);
		}
		n = readlink(cur, target, sizeof target - 1);
		if (n < 0) {
			int rc = mpxkit_fail_sys(diag, "cannot create %s", path);
			free(cur);
			return rc;
		}
		target[n] = '\0';
		/* /proc/self/fd/N of a pipe reads "pipe:[123]": no path, but open() reaches it. */
		if (strncmp(cur, "/proc/", 6) == 0 && target[0] != '/') {
			if (stat(cur, st) != 0) {
				int rc = mpxkit_fail_sys(diag, "cannot create %s", path);
				free(cur);
				return rc;
			}
			break;
		}
		next = join_link(cur, target);
		free(cur);
		if (next == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
		cur = next;
	}
	*out = cur;
	return 0;
}

static int refuse_kind(const char *path, const struct stat *st, mpxkit_diag *diag)
{
	if (S_ISDIR(st->st_mode)) {
		errno = EISDIR;
		return mpxkit_fail_sys(diag, "cannot write %s", path);
	}
	return mpxkit_fail(diag, MPXKIT_EINVAL,
			   "cannot write %s: not a regular file, character device or FIFO", path);
}

static int open_stream(mpxkit_outfile *f, mpxkit_diag *diag)
{
	f->stream = 1;
	do
		f->fd = open(f->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	while (f->fd < 0 && errno == EINTR);
	if (f->fd < 0)
		return mpxkit_fail_sys(diag, "cannot write %s", f->shown);
	return 0;
}

static int open_temp(mpxkit_outfile *f, mpxkit_diag *diag)
{
	size_t n = strlen(f->path);
	mode_t mask;

	f->tmp = malloc(n + sizeof TMP_SUFFIX);
	if (f->tmp == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", f->shown);
	memcpy(f->tmp, f->path, n);
	memcpy(f->tmp + n, TMP_SUFFIX, sizeof TMP_SUFFIX);
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		free(f->tmp);
		f->tmp = NULL;
		return mpxkit_fail_sys(diag, "cannot create %s", f->shown);
	}
	/* mkstemp creates 0600; a data file gets what creat() would give it. */
	mask = umask(0);
	umask(mask);
	if (fchmod(f->fd, 0666 & ~mask) != 0)
		return mpxkit_fail_sys(diag, "cannot create %s", f->shown);
	return 0;
}

int mpxkit_outfile_open(mpxkit_outfile **out, const char *path, mpxkit_diag *diag)
{
	mpxkit_outfile *f;
	struct stat st;
	int rc;

	if (out == NULL || path == NULL || *path == '\0')
		return mpxkit_fail(diag, MPXKIT_EINVAL, "output file: missing path");
	f = calloc(1, sizeof *f);
	if (f == NULL || (f->shown = strdup(path)) == NULL) {
		free(f);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	}
	f->fd = -1;
	if (strcmp(path, "-") == 0) {
		f->stream = f->stdout_ = 1;
		f->fd = STDOUT_FILENO;
		*out = f;
		return 0;
	}
	rc = resolve(path, &f->path, &st, diag);
	if (rc == 0) {
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			rc = open_stream(f, diag);
		else if (st.st_mode != 0 && !S_ISREG(st.st_mode))
			rc = refuse_kind(path, &st, diag);
		else
			rc = open_temp(f, diag);
	}
	if (rc < 0) {
		mpxkit_outfile_abort(f);
		return rc;
	}
	*out = f;
	return 0;
}

/* The file an input names, links followed: 0, or -1 when there is none to compare. */
static int input_identity(const char *input, struct stat *st)
{
	if (strcmp(input, "-") == 0)
		return fstat(STDIN_FILENO, st);
	return stat(input, st);
}

/*
 * Refuses path when the file it would replace is one of the inputs.  The
 * file compared is the one open would replace: resolve()'s final target, so
 * a link whose target is an input is refused as the input itself is.
 */
static int refuse_input(const char *path, const char *const *inputs, size_t n, mpxkit_diag *diag)
{
	struct stat out, in;
	char *final = NULL;
	int rc;

	if (n == 0 || strcmp(path, "-") == 0)
		return 0;
	rc = resolve(path, &final, &out, diag);
	if (rc < 0)
		return rc;
	/* lstat's answer for the last hop: a regular file or nothing; /proc's links already stat'ed. */
	rc = S_ISREG(out.st_mode) ? 0 : -1;
	free(final);
	if (rc != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (inputs[i] == NULL || input_identity(inputs[i], &in) != 0 || !S_ISREG(in.st_mode))
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return mpxkit_fail(diag, MPXKIT_EINVAL,
					   "cannot write %s: it is the same file as the input %s",
					   path, strcmp(inputs[i], "-") == 0 ? "(standard input)"
									     : inputs[i]);
	}
	return 0;
}

int mpxkit_outfile_check(const char *path, const char *const *inputs, size_t n_inputs,
			 mpxkit_diag *diag)
{
	mpxkit_outfile *f;
	int rc;

	if (path && (rc = refuse_input(path, inputs, n_inputs, diag)) < 0)
		return rc;

	/* Opening a FIFO for writing waits for a reader; checking one must not. */
	if (path && strcmp(path, "-") != 0) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
			return access(path, W_OK) == 0 ? 0
							: mpxkit_fail_sys(diag, "cannot write %s", path);
	}
	rc = mpxkit_outfile_open(&f, path, diag);
	if (rc == 0)
		mpxkit_outfile_abort(f);
	return rc;
}

int mpxkit_outfile_is_stream(const mpxkit_outfile *f)
{
	return f->stream;
}

int mpxkit_outfile_fd(const mpxkit_outfile *f)
{
	return f->fd;
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
			return mpxkit_fail_sys(diag, "cannot write %s", f->shown);
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Closes the descriptor unless it is the caller's standard output; 0 or -1 with errno. */
static int close_fd(mpxkit_outfile *f)
{
	int fd = f->fd;

	f->fd = -1;
	if (fd < 0 || f->stdout_)
		return 0;
	return close(fd);
}

/* The data reaches the disk before the name does, so a crash leaves the old file or the new one. */
static int finish_temp(mpxkit_outfile *f, mpxkit_diag *diag)
{
	int rc = 0;

	if (fsync(f->fd) != 0 && errno != EINVAL)
		rc = mpxkit_fail_sys(diag, "cannot write %s", f->shown);
	if (close_fd(f) != 0 && rc == 0)
		rc = mpxkit_fail_sys(diag, "cannot write %s", f->shown);
	return rc;
}

int mpxkit_outfile_commit(mpxkit_outfile *f, mpxkit_diag *diag)
{
	int rc = 0;

	if (f->stream) {
		if (close_fd(f) != 0 && errno != EINTR)
			rc = mpxkit_fail_sys(diag, "cannot write %s", f->shown);
		outfile_free(f);
		return rc;
	}
	rc = finish_temp(f, diag);
	if (rc == 0 && rename(f->tmp, f->path) != 0)
		rc = mpxkit_fail_sys(diag, "cannot rename %s to %s", f->tmp, f->path);
	if (rc == 0) {
		outfile_free(f);
		return 0;
	}
	unlink(f->tmp);
	outfile_free(f);
	return rc;
}

/* ---- Commit without replacing what another process wrote -------------------------------------- */

#define KEEP_ALTERNATIVES 9999
#define KEEP_RETRIES 64 /* moves aside per name; each one means another process changed the name */

/*
 * Gives the file `from` the name `to` only if no file has that name: 0, 1
 * when the name is taken, or an error.  `from` is gone afterwards either way
 * on success (renamed, or linked and unlinked).
 */
static int place(const char *from, const char *to, mpxkit_diag *diag)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST)
		return 1;
	/* NFS and some others do not take the flag; a hard link is as atomic there. */
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return mpxkit_fail_sys(diag, "cannot create %s", to);
	if (link(from, to) != 0)
		return errno == EEXIST ? 1 : mpxkit_fail_sys(diag, "cannot create %s", to);
	unlink(from);
	return 0;
}

/* PATH with "-n" before its extension: a.pcz -> a-1.pcz, dir/a -> dir/a-1, .a -> .a-1. */
static char *alternative(const char *path, unsigned n)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - path) : strlen(path);
	size_t len = strlen(path) + 16;
	char *out = malloc(len);

	if (out)
		snprintf(out, len, "%.*s-%u%s", (int)stem, path, n, path + stem);
	return out;
}

/*
 * A file keep() let go holds name: moved aside to `aside` and asked about
 * again, because another process may have put its own file there after the
 * first question.  0: the old file is gone and the name may be free; 1: a
 * file to keep was there and is back under name (or, when the name was
 * taken again meanwhile, under the first free alternative); or an error.
 */
static int take(const char *name, const char *aside, mpxkit_outfile_keep_fn keep, void *arg,
		mpxkit_diag *diag)
{
	int k, rc;

	if (rename(name, aside) != 0)
		return errno == ENOENT ? 0 : mpxkit_fail_sys(diag, "cannot move %s aside", name);
	k = keep(aside, arg, diag);
	if (k == 0) {
		unlink(aside);
		return 0;
	}
	rc = place(aside, name, diag);
	for (unsigned n = 1; rc == 1 && n <= KEEP_ALTERNATIVES; n++) {
		char *alt = alternative(name, n);
		rc = alt ? place(aside, alt, diag) : mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		free(alt);
	}
	if (rc != 0) /* the other file stays under the private name, never removed */
		return rc < 0 ? rc
			      : mpxkit_fail(diag, MPXKIT_EEXIST, "%s: no free name to put back %s",
					    name, aside);
	return k < 0 ? k : 1;
}

/* Claims name for the temporary file unless a file keep() keeps holds it: 0, 1 kept, or an error. */
static int claim_unless_kept(mpxkit_outfile *f, const char *name, const char *aside,
			     mpxkit_outfile_keep_fn keep, void *arg, mpxkit_diag *diag)
{
	for (int tries = 0; tries < KEEP_RETRIES; tries++) {
		int rc = place(f->tmp, name, diag);
		if (rc <= 0)
			return rc;
		rc = keep(name, arg, diag);
		if (rc != 0)
			return rc;
		rc = take(name, aside, keep, arg, diag);
		if (rc != 0)
			return rc;
	}
	return 1;
}

int mpxkit_outfile_commit_keep(mpxkit_outfile *f, mpxkit_outfile_keep_fn keep, void *arg,
			       char **written, mpxkit_diag *diag)
{
	char *aside = NULL, *name = NULL;
	int rc;

	if (f->stream) {
		char *shown = written ? strdup(f->shown) : NULL;
		rc = mpxkit_outfile_commit(f, diag);
		if (written && rc == 0 && shown == NULL)
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "out of memory");
		if (written && rc == 0)
			*written = shown;
		else
			free(shown);
		return rc;
	}
	rc = finish_temp(f, diag);
	if (rc == 0 && (aside = malloc(strlen(f->tmp) + 6)) == NULL)
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", f->shown);
	if (aside)
		sprintf(aside, "%s.prev", f->tmp);
	for (unsigned n = 0; rc == 0 && n <= KEEP_ALTERNATIVES; n++) {
		name = n == 0 ? strdup(f->path) : alternative(f->path, n);
		if (name == NULL) {
			rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", f->shown);
			break;
		}
		rc = claim_unless_kept(f, name, aside, keep, arg, diag);
		if (rc == 0)
			break;
		free(name);
		name = NULL;
		if (rc == 1)
			rc = n == KEEP_ALTERNATIVES
				 ? mpxkit_fail(diag, MPXKIT_EEXIST,
					       "cannot write %s: it and its %d alternative names are "
					       "taken",
					       f->shown, KEEP_ALTERNATIVES)
				 : 0;
	}
	if (rc == 0 && written)
		*written = name;
	else
		free(name);
	unlink(f->tmp); /* gone already on success */
	free(aside);
	outfile_free(f);
	return rc;
}

void mpxkit_outfile_abort(mpxkit_outfile *f)
{
	if (f == NULL)
		return;
	close_fd(f);
	if (f->tmp)
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

/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files that appear under their final name only once complete. */
#ifndef MPXKIT_OUTFILE_H
#define MPXKIT_OUTFILE_H

#include <stddef.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What an output path may be, and what happens to it:
 * - absent, or a regular file: written under PATH.tmp.XXXXXX next to it and
 *   renamed onto PATH by mpxkit_outfile_commit, so a crash, a full disk or a
 *   failed encoder never leaves partial output under the final name.  The
 *   file gets the mode a plain creat(path, 0666) would give it.
 * - a symbolic link: followed (up to 40 links); its final target is treated
 *   as above, so a link to a regular file has that file replaced atomically
 *   and the link itself stays a link.
 * - a character device, a FIFO, or a link to one (/dev/null, /dev/full,
 *   /proc/self/fd/1 on a pipe or terminal): written through, never renamed
 *   over or replaced; a failed write (ENOSPC on /dev/full) is an error.
 * - "-": standard output, written through (never closed).
 * - a directory, a socket or a block device: refused at open ("Is a
 *   directory", "not a regular file, device or FIFO").
 * A write-through output cannot be taken back: abort closes it.
 */
typedef struct mpxkit_outfile mpxkit_outfile;

int mpxkit_outfile_open(mpxkit_outfile **out, const char *path, mpxkit_diag *diag);

/* Appends len bytes; a short write is an error naming the final path. */
int mpxkit_outfile_write(mpxkit_outfile *f, const void *buf, size_t len, mpxkit_diag *diag);

/* Closes and renames onto the final path.  Frees f whether it succeeds or not. */
int mpxkit_outfile_commit(mpxkit_outfile *f, mpxkit_diag *diag);

/*
 * Says whether a file that already holds a name an output wants must be
 * kept: 1 keep it (the output takes another name), 0 it may be replaced, or
 * a negative mpxkit code.  path names the file where it is now: the name
 * itself, or a private name it was moved to so that it can be checked again.
 */
typedef int (*mpxkit_outfile_keep_fn)(const char *path, void *arg, mpxkit_diag *diag);

/*
 * Commits like mpxkit_outfile_commit, for outputs that other processes may
 * write at the same time under the same name (a dump per MPI rank,
 * doc/mpi.md).  A file already under the name is replaced only when keep()
 * returns 0 for it; otherwise the output takes the first name, among
 * STEM-1.EXT, STEM-2.EXT, ... STEM-9999.EXT (EXT from the last '.' of the
 * last path component, not a leading one; PATH-N without one), that is free
 * or holds a file keep() lets go.  A name is claimed only if free, with
 * renameat2(RENAME_NOREPLACE), or link(2) where that flag is not supported
 * (NFS): neither can replace a file another process has just written.  A
 * file keep() lets go is first moved aside to a private name and checked
 * again there, so a file that arrived in between is put back, never
 * replaced.  *written (NULL: not wanted) gets the name the output now has
 * (malloc'ed).  A written-through output commits as mpxkit_outfile_commit.
 * Frees f whether it succeeds or not.
 */
int mpxkit_outfile_commit_keep(mpxkit_outfile *f, mpxkit_outfile_keep_fn keep, void *arg,
			       char **written, mpxkit_diag *diag);

/* Closes and removes the temporary file and frees f; NULL is a no-op. */
void mpxkit_outfile_abort(mpxkit_outfile *f);

/*
 * Checks, before any long work starts, that path can be written as open
 * would write it: the directory of a regular output exists and takes a new
 * file (a temporary file is created and removed), a device or FIFO is
 * writable.  Nothing is left behind.  0 or the error open would give.
 *
 * inputs are the n_inputs files the output is made from (NULL entries are
 * skipped; "-" is standard input): an output that is the same file as one
 * of them (same st_dev and st_ino, links followed on both sides, so a link
 * to an input and a hard link of it are the input too) would replace it, so
 * it is refused with -MPXKIT_EINVAL and the line "cannot write OUT: it is
 * the same file as the input IN".  An output written through (a device, a
 * FIFO, "-") replaces nothing and is never compared: a terminal may be read
 * and written.  Inputs that do not exist are left to their reader.  Pass
 * every file the command reads (NULL, 0 only for a command that reads none).
 */
int mpxkit_outfile_check(const char *path, const char *const *inputs, size_t n_inputs,
			 mpxkit_diag *diag);

/* True when path is written through (device, FIFO, "-"), so callers that stream know no rename follows. */
int mpxkit_outfile_is_stream(const mpxkit_outfile *f);

/* The descriptor being written, for encoders that write through their own calls (the pcz writer). */
int mpxkit_outfile_fd(const mpxkit_outfile *f);

/* open + write + commit of one buffer. */
int mpxkit_outfile_write_all(const char *path, const void *buf, size_t len, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

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
 * An output file is written under PATH.tmp.XXXXXX next to PATH and renamed
 * onto PATH by mpxkit_outfile_commit, so a crash, a full disk or a failed
 * encoder never leaves partial output under the final name.  The file gets
 * the mode a plain creat(path, 0666) would give it under the current umask.
 */
typedef struct mpxkit_outfile mpxkit_outfile;

int mpxkit_outfile_open(mpxkit_outfile **out, const char *path, mpxkit_diag *diag);

/* Appends len bytes; a short write is an error naming the final path. */
int mpxkit_outfile_write(mpxkit_outfile *f, const void *buf, size_t len, mpxkit_diag *diag);

/* Closes and renames onto the final path.  Frees f whether it succeeds or not. */
int mpxkit_outfile_commit(mpxkit_outfile *f, mpxkit_diag *diag);

/* Closes and removes the temporary file and frees f; NULL is a no-op. */
void mpxkit_outfile_abort(mpxkit_outfile *f);

/* open + write + commit of one buffer. */
int mpxkit_outfile_write_all(const char *path, const void *buf, size_t len, mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

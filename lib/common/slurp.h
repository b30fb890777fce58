/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: reading a whole stream into memory for the parsers that work on buffers. */
#ifndef MPXKIT_SLURP_H
#define MPXKIT_SLURP_H

#include <stddef.h>
#include <stdio.h>

/*
 * Reads f to its end into one malloc'd buffer (*buf, *len; the caller frees
 * it, also on failure, when not NULL).  Returns 0, -MPXKIT_ENOMEM,
 * -MPXKIT_ERANGE once more than max bytes came (so /dev/zero ends), or
 * -MPXKIT_EIO on a read error with errno as fread left it.  The caller words
 * the diagnostic, so each format keeps its own.  The double underscore keeps
 * it out of the shared library's exports (-export-symbols-regex).
 */
int mpxkit__slurp(FILE *f, size_t max, char **buf, size_t *len);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to lib/record: callgrind's header grammar, shared by the totals reader and the
 * per-instruction reader. */
#ifndef MPXKIT_CALLGRIND_IMPL_H
#define MPXKIT_CALLGRIND_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/record.h"

/* The value of "key: value" when line starts with key and ':', else NULL. */
const char *mpxkit__cg_header_value(const char *line, const char *key);

/* Nonzero when s holds only blanks (space, TAB, CR, LF). */
int mpxkit__cg_is_blank(const char *s);

/*
 * One decimal count at s, ending at a blank or the end of the string; *end
 * gets the first character after it.  EFORMAT ("FILE:LINE: count 'x' is not
 * a number") or ERANGE (above 2^64-1).
 */
int mpxkit__cg_parse_count(const char *path, size_t lineno, const char *s, const char **end,
			   uint64_t *out, mpxkit_diag *diag);

/*
 * A header line (events:, totals:, part:, version:, creator:, desc:) into d:
 * 1 when line is one, 0 when it is not (the caller decides what it is), or
 * a negative code with "FILE:LINE: reason".
 */
int mpxkit__cg_header(const char *path, size_t lineno, const char *line, mpxkit_callgrind_dump *d,
		      mpxkit_diag *diag);

#endif

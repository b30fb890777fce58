/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounded input: every parser reads through one reader that refuses NUL bytes in text and stops at a size bound. */
#ifndef MPXKIT_READER_H
#define MPXKIT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpxkit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why one reader: /dev/zero, a binary file given to a text parser, or a
 * gigabyte model must end with one honest line at once, not after filling
 * memory.  Every parser of the library (traces, group files, callgrind
 * output, models, pack's CSV, .pcz, and every new format) reads through
 * this, with the bound of its format:
 *
 * - MPXKIT_READER_TEXT: a NUL byte is an error at the line it appears on
 *   ("NAME:LINE: NUL byte: not a text file"), as no text format has one;
 * - MPXKIT_READER_GZIP: gzip input is inflated transparently (zlib; plain
 *   input passes through unchanged), and the bound applies to inflated bytes;
 * - max_bytes: more bytes than this is MPXKIT_ERANGE ("NAME: larger than N
 *   bytes, the limit for WHAT"); 0 means no bound for streamed formats that
 *   never hold the whole input (their memory is bounded by max_line);
 * - max_line: a longer line is MPXKIT_ERANGE naming the line; 0 = 1 MiB.
 *
 * A path of "-" reads standard input (never closed).  A directory is
 * refused at open with "Is a directory".  Running out of memory is
 * MPXKIT_ENOMEM with "NAME: out of memory after N bytes".
 */
typedef struct mpxkit_reader mpxkit_reader;

enum mpxkit_reader_flags {
	MPXKIT_READER_TEXT = 1u << 0,
	MPXKIT_READER_GZIP = 1u << 1,
};

typedef struct mpxkit_reader_options {
	unsigned flags;      /* MPXKIT_READER_* */
	uint64_t max_bytes;  /* 0: unbounded (streamed) */
	size_t max_line;     /* 0: 1 MiB */
	const char *what;    /* the format's name in messages ("model file"); NULL: "input" */
} mpxkit_reader_options;

int mpxkit_reader_open(mpxkit_reader **r, const char *path, const mpxkit_reader_options *opt,
		       mpxkit_diag *diag);

/*
 * Reads from an open stream the caller keeps (never closed here); name is
 * used in messages.  With MPXKIT_READER_GZIP zlib reads the stream's file
 * descriptor, so the stream must have one (not fmemopen) and must not have
 * buffered input yet.
 */
int mpxkit_reader_from_stream(mpxkit_reader **r, FILE *f, const char *name,
			      const mpxkit_reader_options *opt, mpxkit_diag *diag);

/*
 * The next line without its LF (a CR before it is kept: formats decide),
 * NUL-terminated, valid until the next call; the caller may change its
 * bytes in place (split it at commas).  Returns 1 with a line, 0 at the end
 * of input, or a negative code.  A last line without LF is a line.
 */
int mpxkit_reader_line(mpxkit_reader *r, char **line, size_t *len, mpxkit_diag *diag);

/*
 * Lines in place, many at a time, for a parser that scans them without a
 * call and a search per line.  *text points at the next unread line and *len
 * bytes follow: one or more whole lines, each ending in an LF (one is added
 * after a last line that has none), none longer than max_line and, in text
 * mode, none holding a NUL byte.  The bytes are writable and stay valid until
 * the next call that reads.  Then mpxkit_reader_skip(r, bytes, lines) marks
 * the window's first bytes, holding that many whole lines, as read (before
 * any other call).  Returns 1 with lines, 0 at the end of input, or a negative
 * code; a NUL byte or an overlong line is reported when its line comes first,
 * with the message and line number mpxkit_reader_line gives.
 */
int mpxkit_reader_lines(mpxkit_reader *r, char **text, size_t *len, mpxkit_diag *diag);
void mpxkit_reader_skip(mpxkit_reader *r, size_t bytes, uint64_t lines);

/* Up to len bytes; *got < len only at the end of input.  0 or a negative code. */
int mpxkit_reader_read(mpxkit_reader *r, void *buf, size_t len, size_t *got, mpxkit_diag *diag);

/* The rest of the input in one malloc'd, NUL-terminated buffer (caller frees); 0 or a negative code. */
int mpxkit_reader_slurp(mpxkit_reader *r, char **buf, size_t *len, mpxkit_diag *diag);

/* Line number of the last line returned (1-based), bytes consumed, and the name. */
uint64_t mpxkit_reader_lineno(const mpxkit_reader *r);
uint64_t mpxkit_reader_offset(const mpxkit_reader *r);
const char *mpxkit_reader_name(const mpxkit_reader *r);

void mpxkit_reader_close(mpxkit_reader *r); /* NULL is a no-op */

/* open + slurp + close: a whole bounded file in memory. */
int mpxkit_read_file(const char *path, const mpxkit_reader_options *opt, char **buf, size_t *len,
		     mpxkit_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit's one error contract, shared by every public header. */
#ifndef MPXKIT_ERROR_H
#define MPXKIT_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The contract.
 *
 * A function that returns int returns 0 (or a non-negative count where its
 * header says so) on success and a negative mpxkit_error code on failure:
 * -MPXKIT_EFORMAT, -MPXKIT_ENOMEM, ...  Output parameters are written only on
 * success.  A function that can fail on user input also takes an optional
 * mpxkit_diag, which it fills with one human-readable line naming the input,
 * the position and the reason; pass NULL when the line is not wanted.
 *
 * The library never prints, never exits, and never changes errno's meaning:
 * where a system call failed, the code is MPXKIT_ESYS and diag->sys_errno holds
 * its errno.  Codes are stable once released; new ones are only appended.
 */
#define MPXKIT_ERROR_LIST(X)                                                   \
	X(OK, 0, "success")                                                    \
	X(EINVAL, 1, "invalid argument")                                       \
	X(ENOMEM, 2, "out of memory")                                          \
	X(EIO, 3, "input/output error")                                        \
	X(EFORMAT, 4, "malformed input")                                       \
	X(ETRUNC, 5, "truncated input")                                        \
	X(ECHECKSUM, 6, "checksum mismatch")                                   \
	X(EVERSION, 7, "unsupported format version")                           \
	X(ERANGE, 8, "value out of range")                                     \
	X(ENOENT, 9, "no such event, estimator or file")                       \
	X(ENOSUPP, 10, "not supported on this machine")                        \
	X(EPERM, 11, "permission denied")                                      \
	X(ESYS, 12, "system call failed")                                      \
	X(ESTATE, 13, "call out of order")                                     \
	X(EEXIST, 14, "already exists")

#define MPXKIT_ERROR_ENUM_(name, value, text) MPXKIT_##name = value,
enum mpxkit_error { MPXKIT_ERROR_LIST(MPXKIT_ERROR_ENUM_) MPXKIT_ERROR_COUNT_ };
#undef MPXKIT_ERROR_ENUM_

/* Text of a code, given with either sign.  Never returns NULL. */
const char *mpxkit_strerror(int code);

/* Name of a code ("EFORMAT"), given with either sign.  Never returns NULL. */
const char *mpxkit_errname(int code);

#define MPXKIT_DIAG_MAX 256

/* One line of detail for the failure a call reports. */
typedef struct mpxkit_diag {
	int code;      /* the same negative code the call returned */
	int sys_errno; /* errno of the failed system call, or 0 */
	char msg[MPXKIT_DIAG_MAX];
} mpxkit_diag;

/* Fill diag (if not NULL) and return -code: `return mpxkit_fail(d, MPXKIT_EFORMAT, ...)`. */
int mpxkit_fail(mpxkit_diag *diag, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like mpxkit_fail for a failed system call: records errno and appends its text. */
int mpxkit_fail_sys(mpxkit_diag *diag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Words longer than this many bytes are shortened in every error line (mpxkit_vformat_line). */
#define MPXKIT_ECHO_MAX 160

/*
 * The one bound on what error lines echo: formats fmt into out (cap bytes,
 * cut at cap - 1 on a character boundary), with each word (a run of bytes
 * without blanks) longer than MPXKIT_ECHO_MAX shortened to its first 100
 * bytes, "...[N bytes]..." and its last 40, so that a 100,000-byte event
 * name or path from the user is recognisable and the reason after it still
 * fits.  mpxkit_fail and the CLI's error lines format through it.  Returns out.
 */
char *mpxkit_vformat_line(char *out, size_t cap, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * The diag's line; where the diag was never filled (or is NULL), the
 * calling thread's last failure of the same code (mpxkit_diag_last); else
 * the code's text.  Never returns NULL.
 */
const char *mpxkit_diag_message(const mpxkit_diag *diag, int code);

/*
 * The calling thread's last failure that had no diag to go to: a call with
 * no diag parameter (a source's enable, disable and read; the engine's
 * start, read and stop) still leaves its one line, with the system call
 * and its errno text where there was one.  A failure the rotation thread
 * met at a slice boundary is left for the thread of the call that returns
 * it.  NULL where this thread has none.
 */
const mpxkit_diag *mpxkit_diag_last(void);

#ifdef __cplusplus
}
#endif
#endif

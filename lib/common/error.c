/* SPDX-License-Identifier: BSD-3-Clause */
/* Error codes, their strings, and the one-line diagnostics the tools print. */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpxkit/error.h"

#include "diag_last.h"

#define MPXKIT_ERROR_TEXT_(name, value, text) [value] = text,
static const char *const error_text[] = { MPXKIT_ERROR_LIST(MPXKIT_ERROR_TEXT_) };
#undef MPXKIT_ERROR_TEXT_

#define MPXKIT_ERROR_NAME_(name, value, text) [value] = #name,
static const char *const error_name[] = { MPXKIT_ERROR_LIST(MPXKIT_ERROR_NAME_) };
#undef MPXKIT_ERROR_NAME_

static int code_index(int code)
{
	if (code < 0)
		code = -code;
	if (code >= MPXKIT_ERROR_COUNT_ || error_text[code] == NULL)
		return -1;
	return code;
}

const char *mpxkit_strerror(int code)
{
	int i = code_index(code);
	return i < 0 ? "unknown mpxkit error" : error_text[i];
}

const char *mpxkit_errname(int code)
{
	int i = code_index(code);
	return i < 0 ? "EUNKNOWN" : error_name[i];
}

#define ECHO_HEAD 100
#define ECHO_TAIL 40

/* n bytes of s, less the bytes of a UTF-8 character that would be cut (tail: from its start). */
static size_t char_boundary(const char *s, size_t n, int tail)
{
	if (tail) {
		size_t skip = 0;
		while (skip < n && ((unsigned char)s[skip] & 0xC0) == 0x80)
			skip++;
		return skip;
	}
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* Appends n bytes of s to out at *at, within cap - 1. */
static void put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	if (*at + 1 >= cap)
		return;
	if (n > cap - 1 - *at)
		n = char_boundary(s, cap - 1 - *at, 0);
	memcpy(out + *at, s, n);
	*at += n;
}

char *mpxkit_vformat_line(char *out, size_t cap, const char *fmt, va_list ap)
{
	char *line = NULL;
	size_t at = 0;
	va_list copy;

	if (out == NULL || cap == 0)
		return out;
	va_copy(copy, ap);
	if (vasprintf(&line, fmt, copy) < 0) {
		va_end(copy);
		vsnprintf(out, cap, fmt, ap); /* no memory: plain truncation */
		return out;
	}
	va_end(copy);
	for (const char *p = line; *p;) {
		size_t blank = strspn(p, " \t\n"), word;
		put(out, cap, &at, p, blank);
		p += blank;
		word = strcspn(p, " \t\n");
		if (word > MPXKIT_ECHO_MAX) {
			char mid[48];
			size_t head = char_boundary(p, ECHO_HEAD, 0);
			size_t tail_from = word - ECHO_TAIL;
			tail_from += char_boundary(p + tail_from, ECHO_TAIL, 1);
			snprintf(mid, sizeof mid, "...[%zu bytes]...", word);
			put(out, cap, &at, p, head);
			put(out, cap, &at, mid, strlen(mid));
			put(out, cap, &at, p + tail_from, word - tail_from);
		} else {
			put(out, cap, &at, p, word);
		}
		p += word;
	}
	out[at] = '\0';
	free(line);
	return out;
}

__attribute__((format(printf, 4, 0)))
static void diag_set(mpxkit_diag *diag, int code, int sys_errno, const char *fmt, va_list ap)
{
	diag->code = -code;
	diag->sys_errno = sys_errno;
	mpxkit_vformat_line(diag->msg, sizeof diag->msg, fmt, ap);
}

/*
 * Where a failure without a diag goes: per thread, so a call that has no
 * diag parameter (an ioctl deep in a source) still has its line for the
 * caller that reports it, and no other thread's failure can overwrite it.
 */
static __thread mpxkit_diag last_failure;

int mpxkit_fail(mpxkit_diag *diag, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_set(diag ? diag : &last_failure, code, 0, fmt, ap);
	va_end(ap);
	return -code;
}

int mpxkit_fail_sys(mpxkit_diag *diag, const char *fmt, ...)
{
	int saved = errno;
	int code = saved == EACCES || saved == EPERM ? MPXKIT_EPERM : MPXKIT_ESYS;
	mpxkit_diag *d = diag ? diag : &last_failure;
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	diag_set(d, code, saved, fmt, ap);
	va_end(ap);
	len = strlen(d->msg);
	snprintf(d->msg + len, sizeof d->msg - len, ": %s", strerror(saved));
	errno = saved;
	return -code;
}

const mpxkit_diag *mpxkit_diag_last(void)
{
	return last_failure.code < 0 ? &last_failure : NULL;
}

void mpxkit__diag_clear_last(void)
{
	last_failure.code = 0;
	last_failure.msg[0] = '\0';
}

void mpxkit__diag_keep_last(const mpxkit_diag *diag)
{
	if (diag && diag != &last_failure && diag->code < 0)
		last_failure = *diag;
}

const char *mpxkit_diag_message(const mpxkit_diag *diag, int code)
{
	const mpxkit_diag *last = mpxkit_diag_last();
	int neg = code > 0 ? -code : code;

	if (diag && diag->msg[0] != '\0')
		return diag->msg;
	if (last && last->code == neg && last->msg[0] != '\0')
		return last->msg;
	return mpxkit_strerror(code);
}

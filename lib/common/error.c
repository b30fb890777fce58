/* SPDX-License-Identifier: BSD-3-Clause */
/* Error codes, their strings, and the one-line diagnostics the tools print. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpxkit/error.h"

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

__attribute__((format(printf, 4, 0)))
static void diag_set(mpxkit_diag *diag, int code, int sys_errno, const char *fmt, va_list ap)
{
	diag->code = -code;
	diag->sys_errno = sys_errno;
	vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
}

int mpxkit_fail(mpxkit_diag *diag, int code, const char *fmt, ...)
{
	if (diag) {
		va_list ap;
		va_start(ap, fmt);
		diag_set(diag, code, 0, fmt, ap);
		va_end(ap);
	}
	return -code;
}

int mpxkit_fail_sys(mpxkit_diag *diag, const char *fmt, ...)
{
	int saved = errno;
	int code = saved == EACCES || saved == EPERM ? MPXKIT_EPERM : MPXKIT_ESYS;

	if (diag) {
		va_list ap;
		size_t len;
		va_start(ap, fmt);
		diag_set(diag, code, saved, fmt, ap);
		va_end(ap);
		len = strlen(diag->msg);
		snprintf(diag->msg + len, sizeof diag->msg - len, ": %s", strerror(saved));
	}
	errno = saved;
	return -code;
}

const char *mpxkit_diag_message(const mpxkit_diag *diag, int code)
{
	if (diag && diag->msg[0] != '\0')
		return diag->msg;
	return mpxkit_strerror(code);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to lib/spacetime: the .prof format's constants and the rules writer and reader share. */
#ifndef MPXKIT_PROFILE_IMPL_H
#define MPXKIT_PROFILE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/container.h"
#include "mpxkit/spacetime.h"

/* Section tags (doc/spacetime.md, "Sections"). */
#define PROF_HEAD MPXKIT_TAG('H', 'E', 'A', 'D')
#define PROF_META MPXKIT_TAG('M', 'E', 'T', 'A')
#define PROF_OBJS MPXKIT_TAG('O', 'B', 'J', 'S')
#define PROF_FILS MPXKIT_TAG('F', 'I', 'L', 'S')
#define PROF_FUNS MPXKIT_TAG('F', 'U', 'N', 'S')
#define PROF_CODE MPXKIT_TAG('C', 'O', 'D', 'E')
#define PROF_THRD MPXKIT_TAG('T', 'H', 'R', 'D')
#define PROF_WIND MPXKIT_TAG('W', 'I', 'N', 'D')

#define PROF_MAX_EVENT_NAME  64
#define PROF_MAX_META_KEY    64
#define PROF_MAX_META_VALUE  4096
#define PROF_MAX_THREAD_NAME 64
#define PROF_MAX_TABLE	     (UINT32_C(1) << 28) /* entries of any one table */
#define PROF_MAX_ROWS	     (UINT32_C(1) << 24) /* rows, and jumps, of one section */

extern const mpxkit_container_format mpxkit__profile_format;

/* The rules on names, for the writer to refuse what the reader would. */
int mpxkit__profile_event_name_ok(const char *s, size_t len);
int mpxkit__profile_meta_key_ok(const char *s, size_t len);
int mpxkit__profile_meta_value_ok(const char *s, size_t len);

#endif

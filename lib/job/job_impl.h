/* SPDX-License-Identifier: BSD-3-Clause */
/* What the files of lib/job share and nothing outside it may use. */
#ifndef MPXKIT_JOB_IMPL_H
#define MPXKIT_JOB_IMPL_H

#include "mpxkit/pcz.h"

/* The value of the first pair named key in r's metadata, or NULL. */
const char *job_meta_value(const mpxkit_pcz_reader *r, const char *key);

#endif

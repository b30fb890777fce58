/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The calling thread's last failure without a diag (mpxkit_diag_last),
 * inside the library: a thread that keeps a failure for another thread's
 * later call (the engine's rotation thread) clears it before the work whose
 * failure it keeps, and the call that returns a kept failure leaves it for
 * its own thread.
 */
#ifndef MPXKIT_DIAG_LAST_H
#define MPXKIT_DIAG_LAST_H

#include "mpxkit/error.h"

void mpxkit__diag_clear_last(void);
/* Makes *diag the calling thread's last failure (nothing when diag->code is 0). */
void mpxkit__diag_keep_last(const mpxkit_diag *diag);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Umbrella header of libmpxkit: one header per concern under mpxkit/. */
#ifndef MPXKIT_H
#define MPXKIT_H

#include "mpxkit/error.h"

#endif

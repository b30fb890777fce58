/* SPDX-License-Identifier: BSD-3-Clause */
/* Umbrella header of libmpxkit: one header per concern under mpxkit/. */
#ifndef MPXKIT_H
#define MPXKIT_H

#include "mpxkit/error.h"
#include "mpxkit/outfile.h"
#include "mpxkit/workload.h"
#include "mpxkit/trace.h"
#include "mpxkit/estimator.h"
#include "mpxkit/mpx.h"
#include "mpxkit/schedule.h"
#include "mpxkit/metric.h"
#include "mpxkit/model.h"
#include "mpxkit/record.h"
#include "mpxkit/pcz.h"
#include "mpxkit/job.h"
#include "mpxkit/event.h"
#include "mpxkit/source.h"
#include "mpxkit/sched.h"
#include "mpxkit/attach.h"
#include "mpxkit/predict.h"
#include "mpxkit/simt.h"
#include "mpxkit/spacetime.h"

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Inside lib/sched: the front that counts the events taking no counter beside the engine. */
#ifndef MPXKIT_SCHED_IMPL_H
#define MPXKIT_SCHED_IMPL_H

#include "mpxkit/sched.h"

/*
 * A scheduler whose events include some that take no counter, under
 * MPXKIT_MULTIPLEX=hardware (lib/sched/front.c, "Counted all the time").
 * sched.c's public functions hand a scheduler with a front to these, which
 * have the same contracts.
 */
typedef struct sched_front sched_front;

/*
 * 1 when cfg and src call for a front (some events take no counter, the
 * setting is hardware, the source runs in real time), else 0.
 */
int mpxkit__front_wanted(mpxkit_source *src, const mpxkit_sched_config *cfg);
int mpxkit__front_new(sched_front **out, mpxkit_source *src, const mpxkit_sched_config *cfg,
		      mpxkit_diag *diag);
void mpxkit__front_free(sched_front *f);
const mpxkit_layout *mpxkit__front_layout(const sched_front *f);
size_t mpxkit__front_counters(const sched_front *f);
const char *mpxkit__front_estimator(const sched_front *f);
const char *mpxkit__front_schedule(const sched_front *f);
int mpxkit__front_on_rotation(sched_front *f, mpxkit_sched_series_fn fn, void *arg);
int mpxkit__front_whole_series(const sched_front *f, mpxkit_sched_whole *out);
int mpxkit__front_start(sched_front *f);
int mpxkit__front_stop(sched_front *f);
int mpxkit__front_reset(sched_front *f);
int mpxkit__front_read(sched_front *f, mpxkit_sched_read_mode mode, int use_mode, double *est,
		       double *fidelity, double *run_ns);
size_t mpxkit__front_wakeups(const sched_front *f);
size_t mpxkit__front_n_multiplexed(const sched_front *f);
double mpxkit__front_level(const sched_front *f);
int mpxkit__front_on_rotation_iv(sched_front *f, mpxkit_sched_series_iv_fn fn, void *arg);
int mpxkit__front_read_iv(sched_front *f, double *est, double *fidelity, double *run_ns,
			  mpxkit_interval *iv);

#endif

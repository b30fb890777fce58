/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit train --model interval (utils/train_interval.c). */
#ifndef MPXKIT_TRAIN_INTERVAL_H
#define MPXKIT_TRAIN_INTERVAL_H

#include <stddef.h>
#include <stdint.h>

#include "mpxkit/trace.h"

typedef struct train_interval_program {
	const mpxkit_trace *trace;
	const char *path;
	int split; /* 0 training, 1 validation, 2 test (left out) */
} train_interval_program;

/* A group file's text for tr's events shuffled by rng, c per line (malloc'd; NULL: no memory). */
typedef char *(*train_interval_shuffle)(const mpxkit_trace *tr, size_t c, uint64_t *rng);

/*
 * Simulates every training and validation program as `mpxkit train` does
 * (C = 2, 3, 4, 6; column order, 4 assignments shuffled by shuffle,
 * prior and adaptive), runs every estimator with the sampling model's intervals, and
 * writes estimators/interval_table.c's text to output: per estimator and
 * layout kind, the factor at each level that makes the training windows'
 * and totals' coverage the level.  Prints the factors at 0.9 with the
 * validation programs' coverage.  A CLI status.
 */
int train_interval_table(const char *cmd, const train_interval_program *progs, size_t n_progs,
			 uint64_t seed, train_interval_shuffle shuffle, const char *output);

#endif

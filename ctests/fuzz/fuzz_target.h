/* SPDX-License-Identifier: BSD-3-Clause */
/* What every fuzz target gives the libFuzzer engine and the shared regression driver. */
#ifndef MPXKIT_FUZZ_TARGET_H
#define MPXKIT_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Parses data as the target's input, writing its canonical text form to out when out is not
 * NULL; 0 or a negative mpxkit code.
 */
int fuzz_decode(const uint8_t *data, size_t size, FILE *out);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

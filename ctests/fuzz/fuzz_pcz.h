/* SPDX-License-Identifier: BSD-3-Clause */
/* The decoder entry shared by the libFuzzer target and its regression driver. */
#ifndef MPXKIT_FUZZ_PCZ_H
#define MPXKIT_FUZZ_PCZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decodes a whole .pcz from memory, writing CSV to csv when not NULL; 0 or a negative code. */
int pcz_fuzz_decode(const uint8_t *data, size_t size, FILE *csv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

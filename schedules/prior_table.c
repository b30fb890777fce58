/* SPDX-License-Identifier: BSD-3-Clause */
/* The prior schedule's table (doc/schedules.md), written by
 * `mpxkit train --model prior --seed 1` from 18 training programs. */
#include "schedule-impl.h"

const prior_row prior_table[] = {
    {"Ir", 0.056252, 1.133477},
    {"Dr", 0.058826, 0.805913},
    {"Dw", 0.180605, 2.323155},
    {"I1mr", 0.800593, 232.820060},
    {"D1mr", 0.206952, 9.502850},
    {"D1mw", 0.468166, 50.510172},
    {"ILmr", 1.056637, 284.859149},
    {"DLmr", 0.621264, 114.673077},
    {"DLmw", 0.639575, 138.730829},
    {"Bc", 0.043739, 1.070178},
    {"Bcm", 0.105420, 3.064385},
    {"Bi", 0.409677, 107.141258},
    {"Bim", 0.582760, 145.048519},
};
const size_t prior_table_len = sizeof prior_table / sizeof prior_table[0];

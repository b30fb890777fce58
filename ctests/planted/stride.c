/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Planted defect: a column walk of a row-major 4 MiB matrix (each access a new line, 4 KiB apart:
 * thrashes D1 and the 2 MiB LL).  Its twin walks the same matrix row by row: the same sums.
 */
#include <stdlib.h>

#include "planted.h"

#define ROWS 1024
#define COLS 512 /* 4 KiB rows */

__attribute__((noinline)) static double column_walk(const double *m, int passes)
{
	double s = 0;
	for (int p = 0; p < passes; p++)
		for (int c = 0; c < COLS; c++)
			for (int r = 0; r < ROWS; r++)
				s += m[(size_t)r * COLS + c];
	return s;
}

__attribute__((noinline)) static double row_walk(const double *m, int passes)
{
	double s = 0;
	for (int p = 0; p < passes; p++)
		for (int r = 0; r < ROWS; r++)
			for (int c = 0; c < COLS; c++)
				s += m[(size_t)r * COLS + c];
	return s;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 1;
	double *m = malloc(sizeof(double) * ROWS * COLS);

	if (m == NULL || passes < 1)
		return 2;
	for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
		m[i] = (double)(i % 7);
	planted_sink = (uint64_t)row_walk(m, passes);
	planted_sink += (uint64_t)column_walk(m, passes);
	free(m);
	return planted_done();
}

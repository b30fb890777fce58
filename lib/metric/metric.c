/* SPDX-License-Identifier: BSD-3-Clause */
/* RA, total accuracy, DTW in two rows of memory, Pearson r, and the paper's cleaning. */
#include <math.h>
#include <stdlib.h>

#include "mpxkit/metric.h"

/* 1 - err/truth clipped to [0, 1]; a truth of 0 is matched only by an error of 0. */
static double accuracy(double err, double truth)
{
	double acc;

	if (truth <= 0.0)
		return err == 0.0 ? 1.0 : 0.0;
	acc = 1.0 - err / truth;
	return acc < 0.0 ? 0.0 : acc;
}

double mpxkit_ra(const double *est, const double *ocoe, size_t n)
{
	double err = 0.0, truth = 0.0;

	for (size_t i = 0; i < n; i++) {
		err += fabs(est[i] - ocoe[i]);
		truth += ocoe[i];
	}
	return accuracy(err, truth);
}

double mpxkit_total_accuracy(const double *est, const double *ocoe, size_t n)
{
	double sum_est = 0.0, truth = 0.0;

	for (size_t i = 0; i < n; i++) {
		sum_est += est[i];
		truth += ocoe[i];
	}
	return accuracy(fabs(sum_est - truth), truth);
}

static double min3(double x, double y, double z)
{
	double m = x < y ? x : y;
	return m < z ? m : z;
}

/* Centre column of row i of the band, following the rectangle's diagonal. */
static size_t band_centre(size_t i, size_t rows, size_t cols)
{
	if (rows <= 1)
		return 0;
	return (size_t)(((double)i * (double)(cols - 1)) / (double)(rows - 1) + 0.5);
}

int mpxkit_dtw(const double *a, size_t n, const double *b, size_t m, const mpxkit_dtw_options *opts,
	       double *cost)
{
	mpxkit_dtw_options plain = {MPXKIT_DTW_NO_BAND, 0};
	const double *rows_v, *cols_v;
	double *prev = NULL, *cur = NULL, *col = NULL, *swap;
	size_t rows, cols;

	if (a == NULL || b == NULL || cost == NULL || n == 0 || m == 0)
		return -MPXKIT_EINVAL;
	if (opts == NULL)
		opts = &plain;
	/* The shorter series indexes the columns, so two rows of it are all the memory. */
	if (n >= m) {
		rows_v = a, rows = n, cols_v = b, cols = m;
	} else {
		rows_v = b, rows = m, cols_v = a, cols = n;
	}
	prev = malloc(cols * sizeof *prev);
	cur = malloc(cols * sizeof *cur);
	col = malloc(cols * sizeof *col);
	if (prev == NULL || cur == NULL || col == NULL) {
		free(prev), free(cur), free(col);
		return -MPXKIT_ENOMEM;
	}
	for (size_t j = 0; j < cols; j++)
		col[j] = opts->log10p ? log10(1.0 + cols_v[j]) : cols_v[j];
	/* Row i holds cells [lo, hi]; cells of the previous row outside [plo, phi] are infinite. */
	for (size_t i = 0, plo = 0, phi = 0; i < rows; i++) {
		double x = opts->log10p ? log10(1.0 + rows_v[i]) : rows_v[i];
		size_t lo = 0, hi = cols - 1;
		if (opts->band != MPXKIT_DTW_NO_BAND) {
			size_t c = band_centre(i, rows, cols);
			lo = c > opts->band ? c - opts->band : 0;
			hi = cols - 1 - c > opts->band ? c + opts->band : cols - 1;
		}
		for (size_t j = lo; j <= hi; j++) {
			double best;
			if (i == 0) {
				best = j == 0 ? 0.0 : j > lo ? cur[j - 1] : INFINITY;
			} else {
				double up = j >= plo && j <= phi ? prev[j] : INFINITY;
				double diag = j > plo && j - 1 <= phi ? prev[j - 1] : INFINITY;
				double left = j > lo ? cur[j - 1] : INFINITY;
				best = min3(up, diag, left);
			}
			cur[j] = fabs(x - col[j]) + best;
		}
		swap = prev, prev = cur, cur = swap;
		plo = lo, phi = hi;
	}
	*cost = prev[cols - 1];
	free(prev), free(cur), free(col);
	return 0;
}

double mpxkit_pearson(const double *x, const double *y, size_t n)
{
	double mx = 0.0, my = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0;

	if (n < 2)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	/* Two passes: deviations from the mean keep large counts from cancelling. */
	for (size_t i = 0; i < n; i++) {
		double dx = x[i] - mx, dy = y[i] - my;
		sxx += dx * dx;
		syy += dy * dy;
		sxy += dx * dy;
	}
	if (sxx == 0.0 || syy == 0.0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}

size_t mpxkit_clean_tail(size_t n_steps)
{
	size_t drop = n_steps / 50 + 5;
	return n_steps > drop ? n_steps - drop : 0;
}

size_t mpxkit_clean_runs(const double *totals, size_t n, unsigned char *keep)
{
	double max = 0.0;
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (totals[i] > max)
			max = totals[i];
	for (size_t i = 0; i < n; i++) {
		/* A run with a negative or zero total recorded nothing usable, whatever the others
		 * did. */
		keep[i] = totals[i] > 0.0 && totals[i] >= 0.2 * max;
		kept += keep[i];
	}
	return kept;
}

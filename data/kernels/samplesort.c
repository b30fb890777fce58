/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-style sample sort in one process: 2^20 keys in blocks over 8 ranks; each rank sorts its
 * block (quicksort with insertion sort below 16), picks regular samples, the root gathers and
 * sorts them and "broadcasts" 7 splitters, each rank cuts its block by binary search, an
 * all-to-all of counts then of keys by copy, and each rank merges its 8 incoming runs; twice,
 * on uniform keys, then on skewed keys that unbalance the buckets (heldout3 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS	8
#define PER	(1 << 17) /* keys per rank at the start */
#define SAMPLES 32	  /* regular samples per rank */

static uint64_t rng = 0x3c6ef372fe94f82bu;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (p == NULL)
		exit(1);
	return p;
}

static void quicksort(uint32_t *a, long n)
{
	while (n > 16) {
		uint32_t p = a[n / 2], t;
		long i = 0, j = n - 1;
		if (a[0] > p && a[n - 1] > p) /* median of three, roughly */
			p = a[0] < a[n - 1] ? a[0] : a[n - 1];
		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j)
				t = a[i], a[i] = a[j], a[j] = t, i++, j--;
		}
		if (j + 1 < n - i) { /* recurse into the smaller side */
			quicksort(a, j + 1);
			a += i, n -= i;
		} else {
			quicksort(a + i, n - i);
			n = j + 1;
		}
	}
	for (long i = 1; i < n; i++) {
		uint32_t v = a[i];
		long j = i;
		while (j > 0 && a[j - 1] > v)
			a[j] = a[j - 1], j--;
		a[j] = v;
	}
}

/* First index of a sorted block whose key is above s. */
static long upper(const uint32_t *a, long n, uint32_t s)
{
	long lo = 0, hi = n;
	while (lo < hi) {
		long mid = (lo + hi) / 2;
		if (a[mid] <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t round_once(int skewed)
{
	uint32_t *block[RANKS], *recv[RANKS], *out[RANKS], samples[RANKS * SAMPLES],
	    split[RANKS - 1];
	long count[RANKS][RANKS], cut[RANKS][RANKS + 1], total[RANKS];
	uint64_t check = 0;

	for (int r = 0; r < RANKS; r++) {
		block[r] = xmalloc(PER * sizeof *block[r]);
		for (long i = 0; i < PER; i++) {
			uint32_t k = (uint32_t)next();
			if (skewed) /* squares crowd the keys toward 0 */
				k = (uint32_t)(((uint64_t)k * k) >> 32);
			block[r][i] = k;
		}
		quicksort(block[r], PER);
		for (int s = 0; s < SAMPLES; s++)
			samples[r * SAMPLES + s] =
			    block[r][(long)s * PER / SAMPLES + PER / SAMPLES / 2];
	}
	quicksort(samples, RANKS * SAMPLES); /* root: gather, sort, pick splitters, broadcast */
	for (int s = 0; s < RANKS - 1; s++)
		split[s] = samples[(s + 1) * SAMPLES];
	for (int r = 0; r < RANKS; r++) {
		cut[r][0] = 0, cut[r][RANKS] = PER;
		for (int s = 0; s < RANKS - 1; s++)
			cut[r][s + 1] = upper(block[r], PER, split[s]);
		for (int d = 0; d < RANKS; d++) /* all-to-all of the counts */
			count[d][r] = cut[r][d + 1] - cut[r][d];
	}
	for (int d = 0; d < RANKS; d++) { /* all-to-all of the keys, by copy */
		long at = 0;
		total[d] = 0;
		for (int r = 0; r < RANKS; r++)
			total[d] += count[d][r];
		recv[d] = xmalloc((size_t)(total[d] + 1) * sizeof *recv[d]);
		out[d] = xmalloc((size_t)(total[d] + 1) * sizeof *out[d]);
		for (int r = 0; r < RANKS; r++) {
			memcpy(recv[d] + at, block[r] + cut[r][d],
			       (size_t)count[d][r] * sizeof *recv[d]);
			at += count[d][r];
		}
	}
	for (int d = 0; d < RANKS; d++) { /* merge the 8 runs: pick the least head each time */
		long head[RANKS], end[RANKS], at = 0;
		for (int r = 0; r < RANKS; r++) {
			head[r] = at, end[r] = at + count[d][r];
			at = end[r];
		}
		for (long i = 0; i < total[d]; i++) {
			int best = -1;
			for (int r = 0; r < RANKS; r++)
				if (head[r] < end[r] &&
				    (best < 0 || recv[d][head[r]] < recv[d][head[best]]))
					best = r;
			out[d][i] = recv[d][head[best]++];
		}
		for (long i = 1; i < total[d]; i++)
			if (out[d][i - 1] > out[d][i])
				exit(2);
		check = check * 31 + (uint64_t)total[d] + (total[d] ? out[d][total[d] / 2] : 0);
	}
	for (int r = 0; r < RANKS; r++)
		free(block[r]), free(recv[r]), free(out[r]);
	return check;
}

int main(void)
{
	uint64_t a = round_once(0), b = round_once(1);
	printf("%llu %llu\n", (unsigned long long)a, (unsigned long long)b);
	return 0;
}

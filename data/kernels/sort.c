/* SPDX-License-Identifier: BSD-3-Clause */
/* LSD radix sort, then top-down merge sort, of generated keys, each checked (corpus kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x6a09e667f3bcc909u;

static uint32_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (uint32_t)(z ^ (z >> 31));
}

static void radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
	for (int shift = 0; shift < 32; shift += 8) {
		size_t count[257] = {0};
		for (size_t i = 0; i < n; i++)
			count[((a[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			tmp[count[(a[i] >> shift) & 0xff]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

/* Data-dependent merge branches: about half mispredict on random keys. */
static void merge_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, h);
	merge_sort(a + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof *a);
}

static int sorted(const uint32_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (a[i - 1] > a[i])
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;
	size_t n = (size_t)400000 * scale;
	uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b),
		 *tmp = malloc(n * sizeof *tmp);

	if (scale < 1 || a == NULL || b == NULL || tmp == NULL) {
		fprintf(stderr, "usage: sort [SCALE>=1] (or out of memory)\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = next();
	radix_sort(a, tmp, n);
	merge_sort(b, tmp, n);
	if (!sorted(a, n) || !sorted(b, n) || memcmp(a, b, n * sizeof *a) != 0) {
		fprintf(stderr, "sort: results differ\n");
		return 1;
	}
	printf("min %u median %u max %u\n", a[0], a[n / 2], a[n - 1]);
	free(a);
	free(b);
	free(tmp);
	return 0;
}

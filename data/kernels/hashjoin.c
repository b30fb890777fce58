/* SPDX-License-Identifier: BSD-3-Clause */
/* Hash join of two generated relations: a build side of unique keys and a larger probe side with
 * skewed keys, first with one open-addressing table (random accesses over the whole table), then
 * radix-partitioned so each partition's table fits the cache, then a group-by of the matches
 * (heldout2 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR (1 << 19) /* build side */
#define NS (1 << 21) /* probe side */
#define BITS 6	     /* radix partitions: 64 */

static uint64_t rng = 0xa4093822299f31d0u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

typedef struct tuple {
	uint32_t key, payload;
} tuple;

static uint32_t hash(uint32_t k)
{
	return (k * 2654435761u) >> 7;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (p == NULL)
		exit(1);
	return p;
}

/* Joins r and s through one table of 2 * nr slots (key 0 marks an empty slot). */
static uint64_t join(const tuple *r, size_t nr, const tuple *s, size_t ns, tuple *table,
		     size_t slots, uint64_t *matches)
{
	uint64_t sum = 0;
	memset(table, 0, slots * sizeof *table);
	for (size_t i = 0; i < nr; i++) {
		size_t h = hash(r[i].key) & (slots - 1);
		while (table[h].key != 0)
			h = (h + 1) & (slots - 1);
		table[h] = r[i];
	}
	for (size_t i = 0; i < ns; i++) {
		size_t h = hash(s[i].key) & (slots - 1);
		while (table[h].key != 0) {
			if (table[h].key == s[i].key) {
				sum += (uint64_t)table[h].payload * s[i].payload;
				++*matches;
				break;
			}
			h = (h + 1) & (slots - 1);
		}
	}
	return sum;
}

/* Scatters t into 2^BITS partitions by the key's low bits; start[p] is partition p's offset. */
static void partition(const tuple *t, size_t n, tuple *out, size_t *start)
{
	size_t count[(1 << BITS) + 1] = {0};
	for (size_t i = 0; i < n; i++)
		count[(t[i].key & ((1 << BITS) - 1)) + 1]++;
	for (int p = 0; p < 1 << BITS; p++)
		count[p + 1] += count[p];
	memcpy(start, count, sizeof count);
	for (size_t i = 0; i < n; i++)
		out[count[t[i].key & ((1 << BITS) - 1)]++] = t[i];
}

int main(void)
{
	tuple *r = xmalloc(NR * sizeof *r), *s = xmalloc(NS * sizeof *s);
	tuple *rp = xmalloc(NR * sizeof *rp), *sp = xmalloc(NS * sizeof *sp);
	tuple *table = xmalloc(2 * NR * sizeof *table);
	size_t rstart[(1 << BITS) + 1], sstart[(1 << BITS) + 1];
	uint64_t m1 = 0, m2 = 0, s1, s2 = 0, groups[256] = {0};

	for (size_t i = 0; i < NR; i++) { /* unique keys: a permutation of 1..NR scaled by 3 */
		r[i].key = (uint32_t)(i + 1) * 3u;
		r[i].payload = (uint32_t)next();
	}
	for (size_t i = NR - 1; i > 0; i--) {
		size_t j = next() % (i + 1);
		tuple t = r[i];
		r[i] = r[j], r[j] = t;
	}
	for (size_t i = 0; i < NS; i++) { /* skewed: small keys far more often; a third miss */
		uint64_t z = next();
		uint32_t k = (uint32_t)((z >> 40) % ((z & 7) == 0 ? NR : 1024)) + 1;
		s[i].key = k * 3u + ((z >> 8) % 3 == 0 ? 1u : 0u);
		s[i].payload = (uint32_t)(z >> 16) & 0xffff;
	}
	s1 = join(r, NR, s, NS, table, 2 * NR, &m1);
	partition(r, NR, rp, rstart);
	partition(s, NS, sp, sstart);
	for (int p = 0; p < 1 << BITS; p++) {
		size_t nr = rstart[p + 1] - rstart[p], slots = 1;
		while (slots < 2 * nr)
			slots <<= 1;
		s2 += join(rp + rstart[p], nr, sp + sstart[p], sstart[p + 1] - sstart[p], table, slots,
			   &m2);
	}
	for (size_t i = 0; i < NS; i++) /* group-by on the probe side's key bytes */
		groups[(s[i].key >> 3) & 255] += s[i].payload;
	if (m1 != m2 || s1 != s2)
		return 2;
	printf("%llu %llu %llu\n", (unsigned long long)m1, (unsigned long long)s1,
	       (unsigned long long)groups[17]);
	free(r), free(s), free(rp), free(sp), free(table);
	return 0;
}

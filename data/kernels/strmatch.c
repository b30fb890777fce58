/* SPDX-License-Identifier: BSD-3-Clause */
/* String matching over generated text: 2 MiB of words built from syllables with Zipf-like
 * frequencies, searched for 12 patterns of 2 to 13 bytes and for each doubled (5 to 27 bytes)
 * with Knuth-Morris-Pratt, then with Boyer-Moore-Horspool, and the counts compared; short
 * patterns make Horspool's skips short and KMP's fallbacks frequent, long ones the other way
 * (heldout3 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT (2 << 20)

static uint64_t rng = 0xbb67ae8584caa73bu;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static long kmp(const char *t, long n, const char *p, int m, int *fail)
{
	long hits = 0;
	int k = 0;

	fail[0] = -1;
	for (int i = 1; i <= m; i++) { /* fail[i]: longest proper border of p[0..i) */
		int j = fail[i - 1];
		while (j >= 0 && p[j] != p[i - 1])
			j = fail[j];
		fail[i] = j + 1;
	}
	for (long i = 0; i < n; i++) {
		while (k >= 0 && p[k] != t[i])
			k = fail[k];
		k++;
		if (k == m) {
			hits++;
			k = fail[m];
		}
	}
	return hits;
}

static long horspool(const char *t, long n, const char *p, int m)
{
	int shift[256];
	long hits = 0;

	for (int c = 0; c < 256; c++)
		shift[c] = m;
	for (int i = 0; i < m - 1; i++)
		shift[(unsigned char)p[i]] = m - 1 - i;
	for (long at = 0; at + m <= n; at += shift[(unsigned char)t[at + m - 1]]) {
		int j = m - 1;
		while (j >= 0 && t[at + j] == p[j])
			j--;
		hits += j < 0;
	}
	return hits;
}

int main(void)
{
	static const char *syl[] = {"ka", "ri", "to",  "men", "sa", "lo", "ne", "vi",
				    "du", "ra", "tho", "es",  "an", "ki", "po", "lu"};
	static const char *pat[] = {"ka",      "ri ",	   "nesa",	"to ka",
				    "menri",   "lusa",	   "karito",	"a ka ri",
				    "thoesan", "mentoka ", "ravi duka", "kari tomen lo"};
	char *t = malloc(TEXT + 64), *p = malloc(64);
	int fail[64];
	long n = 0;
	unsigned long long check = 0;

	if (t == NULL || p == NULL)
		return 1;
	while (n < TEXT) { /* words of 1 to 4 syllables, low syllables far more often */
		int len = 1 + (int)(next() % 4);
		for (int s = 0; s < len; s++) {
			uint64_t z = next();
			int k = (int)((z & 15) * ((z >> 4) & 15) / 15);
			for (const char *c = syl[k]; *c; c++)
				t[n++] = *c;
		}
		t[n++] = (next() % 11 == 0) ? '\n' : ' ';
	}
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof pat / sizeof *pat; i++) {
			int m = (int)strlen(pat[i]);
			long a, b;
			memcpy(p, pat[i], (size_t)m + 1);
			if (round == 1) /* a longer pattern: the same one twice with a space */
				p[m] = ' ', memcpy(p + m + 1, pat[i], (size_t)m + 1), m = 2 * m + 1;
			a = kmp(t, n, p, m, fail);
			b = horspool(t, n, p, m);
			if (a != b)
				return 2;
			check = check * 1000003u + (unsigned long long)a;
		}
	printf("%ld bytes, %llu\n", n, check);
	free(t), free(p);
	return 0;
}

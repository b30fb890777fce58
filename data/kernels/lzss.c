/* SPDX-License-Identifier: BSD-3-Clause */
/* An LZ77-style compressor written for this project: generated text-like data, compressed with
 * hash chains over a 32 KiB window (literals and length/distance pairs), decompressed and checked,
 * then a run-length coder over a generated image with long runs, decoded and checked
 * (heldout2 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE (1 << 21)
#define WINDOW (1 << 15)
#define HBITS 14
#define CHAIN 24
#define MINMATCH 4
#define MAXMATCH 258

static uint64_t rng = 0x082efa98ec4e6c89u;

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

/* Text from a skewed vocabulary of syllable words, so matches are common but not trivial. */
static void gen_text(uint8_t *buf, size_t n)
{
	static const char *const syl[] = {"ta", "ne", "ko", "sel", "mi", "ru", "pa", "ost",
					  "li", "gar", "ve", "dun", "si", "ho", "xa", "em"};
	size_t i = 0;
	while (i < n) {
		uint64_t r = next();
		unsigned vocab = 16u << (r % 9);
		uint64_t id = (r >> 8) % vocab;
		do {
			const char *s = syl[id & 15];
			while (*s != '\0' && i < n)
				buf[i++] = (uint8_t)*s++;
			id >>= 4;
		} while (id != 0 && i < n);
		if (i < n)
			buf[i++] = (r >> 40) % 11 == 0 ? '\n' : ' ';
	}
}

static uint32_t hash4(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return (v * 2654435761u) >> (32 - HBITS);
}

/* Tokens: a flag byte per 8 tokens; a literal is 1 byte, a match 3 (length - 3, distance). */
static size_t compress(const uint8_t *in, size_t n, uint8_t *out, int32_t *head, int32_t *prev)
{
	size_t i = 0, o = 0, flag_at = 0;
	int bit = 8;

	for (size_t h = 0; h < (1u << HBITS); h++)
		head[h] = -1;
	while (i < n) {
		size_t best = 0, dist = 0;
		if (bit == 8) {
			flag_at = o++;
			out[flag_at] = 0;
			bit = 0;
		}
		if (i + MINMATCH <= n) {
			uint32_t h = hash4(in + i);
			int32_t cand = head[h];
			for (int c = 0; c < CHAIN && cand >= 0 && i - (size_t)cand <= WINDOW; c++) {
				size_t len = 0, max = n - i < MAXMATCH ? n - i : MAXMATCH;
				while (len < max && in[(size_t)cand + len] == in[i + len])
					len++;
				if (len > best) {
					best = len;
					dist = i - (size_t)cand;
				}
				cand = prev[(size_t)cand & (WINDOW - 1)];
			}
			prev[i & (WINDOW - 1)] = head[h];
			head[h] = (int32_t)i;
		}
		if (best >= MINMATCH) {
			out[flag_at] |= (uint8_t)(1u << bit);
			out[o++] = (uint8_t)(best - 3);
			out[o++] = (uint8_t)((dist - 1) & 255);
			out[o++] = (uint8_t)((dist - 1) >> 8);
			for (size_t k = 1; k < best; k++) /* insert the skipped positions too */
				if (i + k + MINMATCH <= n) {
					uint32_t h = hash4(in + i + k);
					prev[(i + k) & (WINDOW - 1)] = head[h];
					head[h] = (int32_t)(i + k);
				}
			i += best;
		} else {
			out[o++] = in[i++];
		}
		bit++;
	}
	return o;
}

static size_t decompress(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t i = 0, o = 0;
	while (i < n) {
		uint8_t flags = in[i++];
		for (int bit = 0; bit < 8 && i < n; bit++)
			if (flags & (1u << bit)) {
				size_t len = (size_t)in[i] + 3, dist = ((size_t)in[i + 1] | (size_t)in[i + 2] << 8) + 1;
				i += 3;
				for (size_t k = 0; k < len; k++, o++)
					out[o] = out[o - dist];
			} else {
				out[o++] = in[i++];
			}
	}
	return o;
}

/* Run-length coding as (count, byte) pairs, runs of at most 255. */
static size_t rle(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t run = 1;
		while (i + run < n && run < 255 && in[i + run] == in[i])
			run++;
		out[o++] = (uint8_t)run;
		out[o++] = in[i];
		i += run;
	}
	return o;
}

int main(void)
{
	uint8_t *text = xmalloc(SIZE), *packed = xmalloc(SIZE + SIZE / 8 + 16), *back = xmalloc(SIZE);
	uint8_t *image = xmalloc(SIZE), *runs = xmalloc(2 * SIZE);
	int32_t *head = xmalloc((1u << HBITS) * sizeof *head), *prev = xmalloc(WINDOW * sizeof *prev);
	size_t packed_n, runs_n, o = 0;
	uint64_t check = 0;

	gen_text(text, SIZE);
	packed_n = compress(text, SIZE, packed, head, prev);
	if (decompress(packed, packed_n, back) != SIZE || memcmp(text, back, SIZE) != 0)
		return 2;
	/* an image of horizontal spans: runs of a few to a few hundred equal bytes */
	while (o < SIZE) {
		uint64_t r = next();
		size_t len = 1 + (size_t)(r % ((r >> 20) % 4 == 0 ? 600 : 12));
		for (size_t k = 0; k < len && o < SIZE; k++)
			image[o++] = (uint8_t)(r >> 32);
	}
	for (int pass = 0; pass < 3; pass++) {
		runs_n = rle(image, SIZE, runs);
		o = 0;
		for (size_t i = 0; i < runs_n; i += 2)
			for (size_t k = 0; k < runs[i]; k++)
				back[o++] = runs[i + 1];
		if (o != SIZE || memcmp(image, back, SIZE) != 0)
			return 3;
		check += runs_n;
		for (size_t i = 0; i < SIZE; i += 4096) /* perturb for the next pass */
			image[i] ^= (uint8_t)(pass + 1);
	}
	printf("%zu %zu %llu\n", packed_n, runs_n, (unsigned long long)check);
	free(text), free(packed), free(back), free(image), free(runs), free(head), free(prev);
	return 0;
}

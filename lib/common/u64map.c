/* SPDX-License-Identifier: BSD-3-Clause */
/* An open-addressing map from 64-bit keys to 32-bit values (u64map.h). */
#include <stdlib.h>
#include <string.h>

#include "mpxkit/error.h"
#include "u64map.h"

uint64_t mpxkit__hash_u64(uint64_t v)
{
	/* splitmix64's finaliser: every input bit moves every output bit. */
	v ^= v >> 30;
	v *= UINT64_C(0xbf58476d1ce4e5b9);
	v ^= v >> 27;
	v *= UINT64_C(0x94d049bb133111eb);
	return v ^ (v >> 31);
}

uint64_t mpxkit__hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * UINT64_C(0x100000001b3);
	return mpxkit__hash_u64(h);
}

static size_t slot_of(const mpxkit__u64map *m, uint64_t key)
{
	return (size_t)mpxkit__hash_u64(key) & (m->cap - 1);
}

int mpxkit__u64map_find_next(const mpxkit__u64map *m, uint64_t key, uint32_t *value, size_t *cursor)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	i = cursor ? *cursor : slot_of(m, key);
	for (; m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*value = m->values[i];
			if (cursor)
				*cursor = (i + 1) & (m->cap - 1);
			return 1;
		}
	}
	return 0;
}

int mpxkit__u64map_find(const mpxkit__u64map *m, uint64_t key, uint32_t *value, size_t *cursor)
{
	if (cursor && m->cap)
		*cursor = slot_of(m, key);
	return mpxkit__u64map_find_next(m, key, value, cursor);
}

static void put(mpxkit__u64map *m, uint64_t key, uint32_t value)
{
	size_t i = slot_of(m, key);

	while (m->used[i])
		i = (i + 1) & (m->cap - 1);
	m->used[i] = 1;
	m->keys[i] = key;
	m->values[i] = value;
	m->n++;
}

static int grow(mpxkit__u64map *m)
{
	mpxkit__u64map bigger = {NULL, NULL, NULL, m->cap ? 2 * m->cap : 64, 0};

	bigger.keys = malloc(bigger.cap * sizeof *bigger.keys);
	bigger.values = malloc(bigger.cap * sizeof *bigger.values);
	bigger.used = calloc(bigger.cap, 1);
	if (bigger.keys == NULL || bigger.values == NULL || bigger.used == NULL) {
		mpxkit__u64map_free(&bigger);
		return -MPXKIT_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			put(&bigger, m->keys[i], m->values[i]);
	mpxkit__u64map_free(m);
	*m = bigger;
	return 0;
}

int mpxkit__u64map_add(mpxkit__u64map *m, uint64_t key, uint32_t value)
{
	if (2 * (m->n + 1) > m->cap && grow(m) < 0)
		return -MPXKIT_ENOMEM;
	put(m, key, value);
	return 0;
}

void mpxkit__u64map_clear(mpxkit__u64map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->n = 0;
}

void mpxkit__u64map_free(mpxkit__u64map *m)
{
	free(m->keys);
	free(m->values);
	free(m->used);
	m->keys = NULL;
	m->values = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

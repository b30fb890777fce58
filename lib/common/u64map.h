/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: an open-addressing map from 64-bit keys to 32-bit values, for interning.
 */
#ifndef MPXKIT_U64MAP_H
#define MPXKIT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Why one map: the callgrind dump parser, the profile writer and reader and
 * the code-space analyser all intern things (names by hash, addresses,
 * (function, object) pairs) and must stay linear in their input.  Keys are
 * any 64-bit value; callers that key strings pass mpxkit__hash_bytes and
 * compare the strings themselves on a hit (mpxkit__u64map_find_next walks
 * the other entries of the same key).  Linear probing, power-of-two
 * capacity, load at most 1/2; no removal (nothing here needs it) except
 * clearing the whole map.
 */
typedef struct mpxkit__u64map {
	uint64_t *keys;
	uint32_t *values;
	uint8_t *used;
	size_t cap, n;
} mpxkit__u64map;

/* FNV-1a, then a 64-bit finaliser so close keys spread. */
uint64_t mpxkit__hash_bytes(const void *p, size_t n);
uint64_t mpxkit__hash_u64(uint64_t v);

/*
 * The value stored under key: 1 with *value set, or 0.  *cursor (may be
 * NULL) lets mpxkit__u64map_find_next continue to the next entry with the
 * same key, for keys that are hashes.
 */
int mpxkit__u64map_find(const mpxkit__u64map *m, uint64_t key, uint32_t *value, size_t *cursor);
int mpxkit__u64map_find_next(const mpxkit__u64map *m, uint64_t key, uint32_t *value,
			     size_t *cursor);

/* Adds key -> value (duplicates allowed); 0 or -MPXKIT_ENOMEM. */
int mpxkit__u64map_add(mpxkit__u64map *m, uint64_t key, uint32_t value);

void mpxkit__u64map_clear(mpxkit__u64map *m); /* keeps the memory */
void mpxkit__u64map_free(mpxkit__u64map *m);

#endif

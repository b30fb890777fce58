/* SPDX-License-Identifier: BSD-3-Clause */
/* A B-tree of 64-bit keys (up to 31 keys a node, splits on the way down): ascending inserts,
 * then random inserts, then a lookup mix with hot keys and half misses, then range counts, so
 * the node accesses go from sequential to scattered to cached (heldout3 kernel). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define T    16 /* minimum degree: 2T - 1 = 31 keys a node */
#define MAXK (2 * T - 1)

typedef struct node {
	int n, leaf;
	uint64_t key[MAXK];
	uint32_t val[MAXK];
	struct node *child[2 * T];
} node;

static uint64_t rng = 0x510e527fade682d1u;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static node *new_node(int leaf)
{
	node *x = calloc(1, sizeof *x);
	if (x == NULL)
		exit(1);
	x->leaf = leaf;
	return x;
}

/* Position of the first key >= k in x (binary search). */
static int lower(const node *x, uint64_t k)
{
	int lo = 0, hi = x->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (x->key[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void split_child(node *x, int i)
{
	node *y = x->child[i], *z = new_node(y->leaf);

	z->n = T - 1;
	for (int j = 0; j < T - 1; j++)
		z->key[j] = y->key[j + T], z->val[j] = y->val[j + T];
	if (!y->leaf)
		for (int j = 0; j < T; j++)
			z->child[j] = y->child[j + T];
	y->n = T - 1;
	for (int j = x->n; j > i; j--)
		x->child[j + 1] = x->child[j];
	x->child[i + 1] = z;
	for (int j = x->n - 1; j >= i; j--)
		x->key[j + 1] = x->key[j], x->val[j + 1] = x->val[j];
	x->key[i] = y->key[T - 1], x->val[i] = y->val[T - 1];
	x->n++;
}

/* Inserts k, or updates its value when present; returns the (possibly new) root. */
static node *insert(node *root, uint64_t k, uint32_t v)
{
	node *x;

	if (root->n == MAXK) {
		node *s = new_node(0);
		s->child[0] = root;
		split_child(s, 0);
		root = s;
	}
	x = root;
	for (;;) {
		int i = lower(x, k);
		if (i < x->n && x->key[i] == k) {
			x->val[i] = v;
			return root;
		}
		if (x->leaf) {
			for (int j = x->n; j > i; j--)
				x->key[j] = x->key[j - 1], x->val[j] = x->val[j - 1];
			x->key[i] = k, x->val[i] = v, x->n++;
			return root;
		}
		if (x->child[i]->n == MAXK) {
			split_child(x, i);
			if (k == x->key[i]) {
				x->val[i] = v;
				return root;
			}
			if (k > x->key[i])
				i++;
		}
		x = x->child[i];
	}
}

static const uint32_t *find(const node *x, uint64_t k)
{
	while (x != NULL) {
		int i = lower(x, k);
		if (i < x->n && x->key[i] == k)
			return &x->val[i];
		x = x->leaf ? NULL : x->child[i];
	}
	return NULL;
}

/* Keys in [lo, hi), summing their values: visits only the subtrees that overlap. */
static long range(const node *x, uint64_t lo, uint64_t hi, uint64_t *sum)
{
	long c = 0;
	int i = lower(x, lo);

	for (; i <= x->n; i++) {
		if (!x->leaf)
			c += range(x->child[i], lo, hi, sum);
		if (i == x->n || x->key[i] >= hi)
			break;
		c++, *sum += x->val[i];
	}
	return c;
}

static void destroy(node *x)
{
	if (!x->leaf)
		for (int i = 0; i <= x->n; i++)
			destroy(x->child[i]);
	free(x);
}

int main(void)
{
	node *root = new_node(1);
	long hits = 0, counted = 0;
	uint64_t sum = 0;

	for (uint64_t i = 0; i < 250000; i++) /* ascending: the right edge splits */
		root = insert(root, i * 64, (uint32_t)i);
	for (int i = 0; i < 250000; i++) /* random keys over a wider range */
		root = insert(root, next() % (300000u * 128u), (uint32_t)i);
	for (int i = 0; i < 600000; i++) { /* a hot set first, then spread out */
		uint64_t z = next(), k;
		k = (i < 300000 && (z & 7) != 0) ? (z >> 8) % 4096 * 64
						 : (z >> 8) % (300000u * 128u);
		const uint32_t *v = find(root, k);
		if (v != NULL)
			hits++, sum += *v;
	}
	for (int i = 0; i < 2000; i++) {
		uint64_t lo = next() % (300000u * 128u);
		counted += range(root, lo, lo + 40000, &sum);
	}
	printf("%ld %ld %llu\n", hits, counted, (unsigned long long)sum);
	destroy(root);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Barnes-Hut-like 2D gravity: each step builds a quadtree of the bodies (serial, pointer
 * chasing and allocation from a pool), computes the cells' centres of mass, then walks the tree
 * for every body with an opening angle, the bodies over the threads; a clustered start, so the
 * tree is deep where the clusters are and the walks differ in length (heldout3 kernel). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NB     6000
#define STEPS  16
#define THETA2 0.36 /* opening angle 0.6, squared */

typedef struct cell {
	double cx, cy, half; /* square: centre and half width */
	double mx, my, mass; /* centre of mass */
	int child[4];	     /* cells; -1 none */
	int body;	     /* a leaf's body, -1 when internal or empty */
} cell;

static uint64_t rng = 0x6a09e667f3bcc908u;
static double px[NB], py[NB], vx[NB], vy[NB], ax[NB], ay[NB], m[NB];
static cell *pool;
static int used, cap;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static double uniform(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

static int new_cell(double cx, double cy, double half)
{
	cell *c;

	if (used == cap) {
		cap = cap ? 2 * cap : 4096;
		pool = realloc(pool, (size_t)cap * sizeof *pool);
		if (pool == NULL)
			exit(1);
	}
	c = &pool[used];
	c->cx = cx, c->cy = cy, c->half = half;
	c->mx = c->my = c->mass = 0;
	c->child[0] = c->child[1] = c->child[2] = c->child[3] = -1;
	c->body = -1;
	return used++;
}

static int quadrant(const cell *c, int b)
{
	return (px[b] >= c->cx) + 2 * (py[b] >= c->cy);
}

static void insert(int root, int b)
{
	int at = root, depth = 0;

	for (;;) {
		int q, kid;
		if (pool[at].body < 0 && pool[at].child[0] < 0 && pool[at].child[1] < 0 &&
		    pool[at].child[2] < 0 && pool[at].child[3] < 0 && pool[at].mass == 0) {
			pool[at].body = b;  /* empty leaf */
			pool[at].mass = -1; /* marks "holds a body" until the masses are summed */
			return;
		}
		if (pool[at].body >= 0 && depth < 40) { /* split a leaf: push its body down */
			int old = pool[at].body;
			double h = pool[at].half / 2;
			pool[at].body = -1;
			q = quadrant(&pool[at], old);
			kid = new_cell(pool[at].cx + (q & 1 ? h : -h),
				       pool[at].cy + (q & 2 ? h : -h), h);
			pool[at].child[q] = kid;
			pool[kid].body = old;
			pool[kid].mass = -1;
		} else if (pool[at].body >= 0) {
			return; /* coincident bodies: drop the newcomer from the tree */
		}
		q = quadrant(&pool[at], b);
		if (pool[at].child[q] < 0) {
			double h = pool[at].half / 2;
			kid = new_cell(pool[at].cx + (q & 1 ? h : -h),
				       pool[at].cy + (q & 2 ? h : -h), h);
			pool[at].child[q] = kid;
		}
		at = pool[at].child[q];
		depth++;
	}
}

static void summarize(int at)
{
	cell *c = &pool[at];

	if (c->body >= 0) {
		c->mass = m[c->body], c->mx = px[c->body], c->my = py[c->body];
		return;
	}
	c->mass = c->mx = c->my = 0;
	for (int q = 0; q < 4; q++) {
		int k = pool[at].child[q];
		if (k < 0)
			continue;
		summarize(k);
		c = &pool[at];
		c->mass += pool[k].mass;
		c->mx += pool[k].mass * pool[k].mx;
		c->my += pool[k].mass * pool[k].my;
	}
	if (c->mass > 0)
		c->mx /= c->mass, c->my /= c->mass;
}

/* The walk with an explicit stack; a cell far enough away counts as one mass. */
static void force(int b)
{
	int stack[256], top = 0;
	double fx = 0, fy = 0;

	stack[top++] = 0;
	while (top > 0) {
		const cell *c = &pool[stack[--top]];
		double dx = c->mx - px[b], dy = c->my - py[b], d2 = dx * dx + dy * dy + 1e-6;
		if (c->body == b || c->mass == 0)
			continue;
		if (c->body >= 0 || 4 * c->half * c->half < THETA2 * d2) {
			double inv = 1.0 / (d2 * sqrt(d2));
			fx += c->mass * dx * inv, fy += c->mass * dy * inv;
		} else {
			for (int q = 0; q < 4; q++)
				if (c->child[q] >= 0 && top < 256)
					stack[top++] = c->child[q];
		}
	}
	ax[b] = fx, ay[b] = fy;
}

int main(void)
{
	double energy = 0;
	int b;

	for (int i = 0; i < NB; i++) { /* 12 Gaussian-ish clusters of different widths */
		int k = i % 12;
		double r = 0.02 + 0.01 * k, cxk = 0.15 + 0.06 * k, cyk = 0.5 + 0.3 * ((k % 3) - 1);
		double u = uniform() + uniform() + uniform() - 1.5,
		       v = uniform() + uniform() + uniform() - 1.5;
		px[i] = cxk + r * u, py[i] = cyk + r * v;
		vx[i] = vy[i] = 0;
		m[i] = 1.0 / NB * (0.5 + uniform());
	}
	for (int s = 0; s < STEPS; s++) {
		used = 0;
		new_cell(0.5, 0.5, 1.0);
		for (int i = 0; i < NB; i++)
			insert(0, i);
		summarize(0);
#pragma omp parallel for schedule(static)
		for (b = 0; b < NB; b++)
			force(b);
		for (int i = 0; i < NB;
		     i++) { /* a small step; bodies stay inside the root square */
			vx[i] += 1e-6 * ax[i], vy[i] += 1e-6 * ay[i];
			px[i] += 1e-3 * vx[i], py[i] += 1e-3 * vy[i];
			if (px[i] < -0.49 || px[i] > 1.49)
				vx[i] = -vx[i], px[i] = px[i] < 0 ? -0.49 : 1.49;
			if (py[i] < -0.49 || py[i] > 1.49)
				vy[i] = -vy[i], py[i] = py[i] < 0 ? -0.49 : 1.49;
		}
	}
	for (int i = 0; i < NB; i++)
		energy += m[i] * (vx[i] * vx[i] + vy[i] * vy[i]);
	printf("%d cells, %.9e\n", used, energy);
	free(pool);
	return 0;
}

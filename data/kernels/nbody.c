/* SPDX-License-Identifier: BSD-3-Clause */
/* Direct-sum gravitational n-body with leapfrog steps and an energy check (corpus kernel). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct body {
	double x, y, z, vx, vy, vz, ax, ay, az, m;
} body;

static uint64_t rng = 0x5851f42d4c957f2du;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

static void accelerations(body *b, int n)
{
	const double soft = 1e-3;

	for (int i = 0; i < n; i++)
		b[i].ax = b[i].ay = b[i].az = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
			double r2 = dx * dx + dy * dy + dz * dz + soft;
			double inv = 1.0 / (r2 * sqrt(r2));
			b[i].ax += dx * inv * b[j].m, b[j].ax -= dx * inv * b[i].m;
			b[i].ay += dy * inv * b[j].m, b[j].ay -= dy * inv * b[i].m;
			b[i].az += dz * inv * b[j].m, b[j].az -= dz * inv * b[i].m;
		}
}

static double energy(const body *b, int n)
{
	double e = 0;

	for (int i = 0; i < n; i++) {
		e += 0.5 * b[i].m * (b[i].vx * b[i].vx + b[i].vy * b[i].vy + b[i].vz * b[i].vz);
		for (int j = i + 1; j < n; j++) {
			double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
			e -= b[i].m * b[j].m / sqrt(dx * dx + dy * dy + dz * dz + 1e-3);
		}
	}
	return e;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 4;
	const int n = 1200, steps = 4 * scale;
	const double dt = 1e-3;
	body *b = calloc(n, sizeof *b);
	double e0;

	if (scale < 1 || b == NULL) {
		fprintf(stderr, "usage: nbody [SCALE>=1] (or out of memory)\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		b[i].x = uniform(), b[i].y = uniform(), b[i].z = uniform();
		b[i].m = 1.0 / n;
	}
	e0 = energy(b, n);
	accelerations(b, n);
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++) {
			b[i].vx += 0.5 * dt * b[i].ax, b[i].vy += 0.5 * dt * b[i].ay;
			b[i].vz += 0.5 * dt * b[i].az;
			b[i].x += dt * b[i].vx, b[i].y += dt * b[i].vy, b[i].z += dt * b[i].vz;
		}
		accelerations(b, n);
		for (int i = 0; i < n; i++) {
			b[i].vx += 0.5 * dt * b[i].ax, b[i].vy += 0.5 * dt * b[i].ay;
			b[i].vz += 0.5 * dt * b[i].az;
		}
	}
	printf("energy %.9e -> %.9e\n", e0, energy(b, n));
	free(b);
	return 0;
}

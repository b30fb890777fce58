/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI-style halo exchange in one process: a 2D grid split over 4 x 4 ranks, each sweep packs
 * the edges into send buffers, "sends" them by copying to the neighbours' receive buffers,
 * unpacks, relaxes, and reduces a global residual as MPI_Allreduce would (held-out kernel). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 4	/* ranks per dimension */
#define L 120	/* local interior points per dimension */
#define W (L + 2)

typedef struct rank {
	double *u, *v;
	double send[4][L], recv[4][L]; /* north, south, west, east */
} rank;

static void pack(rank *r)
{
	for (int i = 0; i < L; i++) {
		r->send[0][i] = r->u[1 * W + i + 1];
		r->send[1][i] = r->u[L * W + i + 1];
		r->send[2][i] = r->u[(i + 1) * W + 1];
		r->send[3][i] = r->u[(i + 1) * W + L];
	}
}

static void exchange(rank *ranks)
{
	for (int p = 0; p < P; p++)
		for (int q = 0; q < P; q++) {
			rank *r = &ranks[p * P + q];
			if (p > 0)
				memcpy(r->recv[0], ranks[(p - 1) * P + q].send[1], sizeof r->recv[0]);
			if (p < P - 1)
				memcpy(r->recv[1], ranks[(p + 1) * P + q].send[0], sizeof r->recv[1]);
			if (q > 0)
				memcpy(r->recv[2], ranks[p * P + q - 1].send[3], sizeof r->recv[2]);
			if (q < P - 1)
				memcpy(r->recv[3], ranks[p * P + q + 1].send[2], sizeof r->recv[3]);
		}
}

static double relax(rank *r)
{
	double res = 0, *t;

	for (int i = 0; i < L; i++) {
		r->u[0 * W + i + 1] = r->recv[0][i];
		r->u[(L + 1) * W + i + 1] = r->recv[1][i];
		r->u[(i + 1) * W] = r->recv[2][i];
		r->u[(i + 1) * W + L + 1] = r->recv[3][i];
	}
	for (int i = 1; i <= L; i++)
		for (int j = 1; j <= L; j++) {
			int k = i * W + j;
			r->v[k] = 0.25 * (r->u[k - 1] + r->u[k + 1] + r->u[k - W] + r->u[k + W]);
			res += fabs(r->v[k] - r->u[k]);
		}
	t = r->u, r->u = r->v, r->v = t;
	return res;
}

int main(void)
{
	static rank ranks[P * P];
	double global = 0;

	for (int r = 0; r < P * P; r++) {
		ranks[r].u = calloc(W * W, sizeof(double));
		ranks[r].v = calloc(W * W, sizeof(double));
		if (ranks[r].u == NULL || ranks[r].v == NULL)
			return 1;
		memset(ranks[r].recv, 0, sizeof ranks[r].recv);
	}
	for (int i = 0; i < L; i++) /* a hot boundary on rank 0's north edge */
		ranks[0].recv[0][i] = 100.0;
	for (int sweep = 0; sweep < 120; sweep++) {
		for (int r = 0; r < P * P; r++)
			pack(&ranks[r]);
		exchange(ranks);
		for (int i = 0; i < L; i++)
			ranks[0].recv[0][i] = 100.0;
		global = 0;
		for (int r = 0; r < P * P; r++) /* the allreduce: every rank's residual summed */
			global += relax(&ranks[r]);
	}
	printf("%.6e\n", global);
	for (int r = 0; r < P * P; r++) {
		free(ranks[r].u);
		free(ranks[r].v);
	}
	return 0;
}

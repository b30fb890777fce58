/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The code-space analyser's speed and memory (doc/benchmarks.md), and the software events' costs
 * its weights come from:
 *   bench_spacetime gen FILE ROWS     a callgrind-shaped profile of about ROWS rows
 *   bench_spacetime analyze FILE      mpxkit_spacetime_analyze on it: rows/s, CPU time, peak RSS
 *   bench_spacetime costs             a minor page fault and a pipe round trip, in ns
 * One measurement per process, so the peak RSS is that of the analysis alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "mpxkit/spacetime.h"

#define FUNCTIONS      64
#define ADDRESSES      64 /* per function, 4 bytes apart */
#define ACTIVE	       20 /* functions run in one block */
#define THREADS	       4
#define ROWS_PER_BLOCK (ACTIVE * ADDRESSES)

static const char *const events[] = {"Ir",   "Dr",   "Dw", "I1mr", "D1mr", "D1mw", "ILmr",
				     "DLmr", "DLmw", "Bc", "Bcm",  "Bi",   "Bim"};
#define NE (sizeof events / sizeof events[0])

static double cpu_seconds(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 +
	       (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
}

static long peak_kib(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

static int fail(const char *what, const mpxkit_diag *d)
{
	fprintf(stderr, "bench_spacetime: %s: %s\n", what, d->msg);
	return 1;
}

/*
 * Windows of THREADS blocks; each block runs ACTIVE of the FUNCTIONS (a set that moves with
 * the window, so spaces come and go), every address of each, with a back edge per function and
 * an inner one in every other: the shape of callgrind's per-instruction dumps.
 */
static int gen(const char *path, uint64_t rows)
{
	mpxkit_profile_writer *w = NULL;
	mpxkit_diag d = {0};
	uint32_t object, file, fn[FUNCTIONS], code[FUNCTIONS][ADDRESSES], thread[THREADS];
	static uint32_t codes[ROWS_PER_BLOCK];
	static uint64_t counts[ROWS_PER_BLOCK * NE];
	mpxkit_profile_jump jumps[2 * ACTIVE];
	uint64_t windows = (rows + THREADS * ROWS_PER_BLOCK - 1) / (THREADS * ROWS_PER_BLOCK);
	uint64_t seed = 2026;
	double t0 = now(), c0 = cpu_seconds();

	if (mpxkit_profile_create(&w, path, "callgrind", "bb", events, NE, &d) < 0 ||
	    mpxkit_profile_add_meta(w, "command", "bench_spacetime gen", &d) < 0 ||
	    mpxkit_profile_add_object(w, "/bench/a.out", &object, &d) < 0 ||
	    mpxkit_profile_add_file(w, "bench.c", &file, &d) < 0)
		return fail(path, &d);
	for (int f = 0; f < FUNCTIONS; f++) {
		char name[32];
		snprintf(name, sizeof name, "kernel_%02d", f);
		if (mpxkit_profile_add_function(w, name, object, 0, 0, &fn[f], &d) < 0)
			return fail(path, &d);
		for (int a = 0; a < ADDRESSES; a++)
			if (mpxkit_profile_add_code(w, fn[f], file, (uint32_t)(100 * f + a / 4),
						    (uint64_t)(0x1000 * f + 4 * a), &code[f][a],
						    &d) < 0)
				return fail(path, &d);
	}
	for (int t = 0; t < THREADS; t++)
		if (mpxkit_profile_add_thread(w, (uint64_t)(1 + t), "", &thread[t], &d) < 0)
			return fail(path, &d);
	for (uint64_t win = 0; win < windows; win++)
		for (int t = 0; t < THREADS; t++) {
			size_t n = 0, nj = 0;
			for (int k = 0; k < ACTIVE; k++) {
				int f =
				    (int)((win / 8 + (uint64_t)k * 3 + (uint64_t)t) % FUNCTIONS);
				for (int a = 0; a < ADDRESSES; a++) {
					uint64_t r = next_random(&seed), *c = counts + n * NE;
					codes[n] = code[f][a];
					memset(c, 0, NE * sizeof *c);
					c[0] = 1 + (r & 1023);			   /* Ir */
					c[1] = (r >> 10) & 255;			   /* Dr */
					c[4] = (r >> 18) & (f % 4 == 0 ? 63 : 3);  /* D1mr */
					c[7] = (r >> 24) & (f % 8 == 0 ? 15 : 0);  /* DLmr */
					c[9] = (r >> 28) & 127;			   /* Bc */
					c[10] = (r >> 35) & (f % 5 == 0 ? 31 : 1); /* Bcm */
					n++;
				}
				jumps[nj++] = (mpxkit_profile_jump){code[f][60], code[f][8], 100};
				if (f % 2 == 0)
					jumps[nj++] =
					    (mpxkit_profile_jump){code[f][40], code[f][16], 50};
			}
			mpxkit_profile_block b = {win,	 win * 1000000, 1000000, thread[t], n,
						  codes, counts,	nj,	 jumps};
			if (mpxkit_profile_put_block(w, &b, &d) < 0) {
				mpxkit_profile_abort(w);
				return fail(path, &d);
			}
		}
	if (mpxkit_profile_commit(w, &d) < 0)
		return fail(path, &d);
	printf("gen: %" PRIu64 " rows in %" PRIu64 " windows x %d threads written in %.2f s (CPU "
	       "%.2f s, %.2f M rows/s)\n",
	       windows * THREADS * ROWS_PER_BLOCK, windows, THREADS, now() - t0, cpu_seconds() - c0,
	       (double)(windows * THREADS * ROWS_PER_BLOCK) / (cpu_seconds() - c0) / 1e6);
	return 0;
}

static int analyze(const char *path)
{
	mpxkit_spacetime *r = NULL;
	mpxkit_diag d = {0};
	long before = peak_kib();
	double t0 = now(), c0 = cpu_seconds(), wall, cpu;

	if (mpxkit_spacetime_analyze(path, NULL, &r, &d) < 0)
		return fail(path, &d);
	wall = now() - t0;
	cpu = cpu_seconds() - c0;
	printf("analyze: %" PRIu64 " rows (%" PRIu64 " blocks, %" PRIu64
	       " windows), %zu code spaces "
	       "(%zu selected), %zu findings\n",
	       r->rows, r->blocks, r->windows, r->n_all_spaces, r->n_spaces, r->n_findings);
	printf("analyze: wall %.2f s, CPU %.2f s: %.2f M rows/s of CPU (each row read twice)\n",
	       wall, cpu, (double)r->rows / cpu / 1e6);
	printf("analyze: peak RSS %ld KiB (%ld KiB before the analysis)\n", peak_kib(), before);
	mpxkit_spacetime_free(r);
	return 0;
}

/* A minor fault: first touch of fresh anonymous pages (allocation and zeroing included). */
static double fault_ns(void)
{
	size_t pages = 65536, page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *p =
	    mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t;

	if (p == MAP_FAILED)
		return -1;
	t0 = now();
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
	t = now() - t0;
	munmap(p, pages * page);
	return t / (double)pages * 1e9;
}

/* Two processes bouncing a byte through pipes: each round trip is two switches and two wakeups. */
static double switch_ns(void)
{
	int ab[2], ba[2], rounds = 20000;
	char c = 0;
	double t0, t;
	pid_t pid;

	if (pipe(ab) != 0 || pipe(ba) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	t0 = now();
	for (int i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return -1;
	t = now() - t0;
	waitpid(pid, NULL, 0);
	return t / (2.0 * rounds) * 1e9;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "analyze") == 0)
		return analyze(argv[2]);
	if (argc == 2 && strcmp(argv[1], "costs") == 0) {
		for (int i = 0; i < 3; i++)
			printf(
			    "costs: minor page fault %.0f ns, context switch (pipe round trip / 2) "
			    "%.0f ns\n",
			    fault_ns(), switch_ns());
		return 0;
	}
	fprintf(stderr, "usage: bench_spacetime gen FILE ROWS | analyze FILE | costs\n");
	return 1;
}

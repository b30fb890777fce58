/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit_job_merge at scale: synthetic rank dumps merged, time, peak memory and size against the
 * inputs. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "mpxkit/job.h"

/*
 * Usage: merge_bench DIR [RANKS [THREADS [EVENTS [REGIONS]]]]
 *   (defaults 1000 64 32 100: issue 15's scale)
 *
 * Writes RANKS dumps DIR/job.R.pcz as the component would (the job's
 * metadata and topology, one unit per thread per region, placement), each
 * with REGIONS regions of THREADS units of EVENTS counters, then merges the
 * first 10, 100, ... and all of them with mpxkit_job_merge, each merge in a
 * child process of its own so that its peak resident memory (wait4's
 * ru_maxrss) is the merge's alone.  The counters are those of a loop whose
 * iterations take about 10 ms: each event has its own rate, each thread a
 * speed within 5 % of the others', and every count 1 % of noise, so the
 * dumps compress as measured ones do rather than as constants.
 */

typedef struct params {
	const char *dir;
	long ranks, threads, events, regions;
} params;

static int write_rank(const params *p, long rank)
{
	size_t T = (size_t)p->threads, E = (size_t)p->events;
	char path[4096], num[32], **names = calloc(E, sizeof *names);
	uint64_t *times = malloc(2 * T * sizeof *times), *values = malloc(T * E * sizeof *values);
	double *rate = malloc(E * sizeof *rate), *speed = malloc(T * sizeof *speed);
	mpxkit_pcz_unit *units = calloc(T, sizeof *units);
	char(*unit_names)[32] = malloc(T * sizeof *unit_names);
	uint64_t seed = 0x9e3779b97f4a7c15u ^ (uint64_t)(rank + 1) * 0x100000001b3u;
	mpxkit_pcz_options opt;
	mpxkit_pcz_writer *w = NULL;
	mpxkit_diag diag = {0};
	int rc = -1;

	if (!names || !times || !values || !rate || !speed || !units || !unit_names)
		goto done;
	for (size_t e = 0; e < E; e++) {
		char ev[64];
		snprintf(ev, sizeof ev, "mpxkit:::event%zu", e);
		names[e] = strdup(ev);
		/* From about 1e9 per second (cycles) down to about 1e3 (page faults). */
		rate[e] = 1e9 / (double)(1u << (e % 20)) * (1 + 0.1 * (double)(e / 20));
	}
	for (size_t t = 0; t < T; t++) {
		speed[t] = 1 + 0.05 * ((double)(next_random(&seed) % 1000) / 1000.0 - 0.5);
		snprintf(unit_names[t], sizeof unit_names[t], "thread%ld",
			 100000 + rank * 100 + (long)t);
	}
	mpxkit_pcz_options_init(&opt);
	opt.placement = 1;
	snprintf(path, sizeof path, "%s/job.%ld.pcz", p->dir, rank);
	if (mpxkit_pcz_writer_open(path, &opt, E, (const char *const *)names, &w, &diag) < 0)
		goto done;
	mpxkit_pcz_writer_set_meta(w, "source", "merge_bench", &diag);
	mpxkit_pcz_writer_set_meta(w, "job.launcher", "slurm", &diag);
	mpxkit_pcz_writer_set_meta(w, "job.id", "4242.0", &diag);
	snprintf(num, sizeof num, "%ld", rank);
	mpxkit_pcz_writer_set_meta(w, "job.rank", num, &diag);
	snprintf(num, sizeof num, "%ld", p->ranks);
	mpxkit_pcz_writer_set_meta(w, "job.size", num, &diag);
	snprintf(num, sizeof num, "node%ld", rank / 2);
	mpxkit_pcz_writer_set_meta(w, "host", num, &diag);
	snprintf(num, sizeof num, "%ld", 20000 + rank);
	if (mpxkit_pcz_writer_set_meta(w, "pid", num, &diag) < 0)
		goto done;
	/* This machine's topology, as the component stores its host's in every dump. */
	if (mpxkit_pcz_writer_set_topology(w, NULL, 0, &diag) < 0)
		goto done;
	for (long k = 0; k < p->regions; k++) {
		char region[32];
		snprintf(region, sizeof region, "iteration%ld", k + 1);
		for (size_t t = 0; t < T; t++) {
			double d = 1e7 * speed[t] *
				   (1 + 0.01 * ((double)(next_random(&seed) % 1000) / 500.0 - 1));
			times[2 * t] = 1700000000000000000u + (uint64_t)k * 10500000u;
			times[2 * t + 1] = times[2 * t] + (uint64_t)d;
			for (size_t e = 0; e < E; e++) {
				double noise =
				    1 + 0.01 * ((double)(next_random(&seed) % 1000) / 500.0 - 1);
				values[t * E + e] = (uint64_t)(rate[e] * d * 1e-9 * noise);
			}
			units[t] = (mpxkit_pcz_unit){unit_names[t],  1,	     &times[2 * t],
						     &values[t * E], (int)t, (int)(t / 32)};
		}
		if (mpxkit_pcz_writer_add_region(w, region, T, units, &diag) < 0)
			goto done;
	}
	rc = mpxkit_pcz_writer_close(w, &diag);
	w = NULL;
done:
	if (rc < 0)
		fprintf(stderr, "merge_bench: rank %ld: %s\n", rank, diag.msg);
	mpxkit_pcz_writer_abort(w);
	for (size_t e = 0; names && e < E; e++)
		free(names[e]);
	free(names);
	free(times);
	free(values);
	free(rate);
	free(speed);
	free(units);
	free(unit_names);
	return rc;
}

/* Runs fn(p, arg) in a child; its status, wall and CPU time, and peak resident memory. */
static int in_child(int (*fn)(const params *, long), const params *p, long arg, double *seconds,
		    double *cpu, long *maxrss_kib)
{
	struct rusage ru;
	double t0 = now();
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(p, arg) == 0 ? 0 : 1);
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*seconds = now() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
	*maxrss_kib = ru.ru_maxrss;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int generate(const params *p, long unused)
{
	(void)unused;
	for (long r = 0; r < p->ranks; r++)
		if (write_rank(p, r) < 0)
			return -1;
	return 0;
}

static int merge_first(const params *p, long n)
{
	char out[4096], **inputs = calloc((size_t)n, sizeof *inputs);
	mpxkit_job_merge_result res;
	mpxkit_diag diag = {0};
	int rc;

	if (inputs == NULL)
		return -1;
	for (long r = 0; r < n; r++) {
		/* The inputs in reverse, so the merge has to sort them. */
		if (asprintf(&inputs[r], "%s/job.%ld.pcz", p->dir, n - 1 - r) < 0)
			return -1;
	}
	snprintf(out, sizeof out, "%s/merged.%ld.pcz", p->dir, n);
	rc = mpxkit_job_merge(out, (size_t)n, (const char *const *)inputs, NULL, &res, &diag);
	if (rc < 0)
		fprintf(stderr, "merge_bench: %s\n", diag.msg);
	for (long r = 0; r < n; r++)
		free(inputs[r]);
	free(inputs);
	return rc;
}

static int nothing(const params *p, long n)
{
	(void)p;
	(void)n;
	return 0;
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int main(int argc, char **argv)
{
	params p = {argc > 1 ? argv[1] : NULL, 1000, 64, 32, 100};
	long *fields[] = {&p.ranks, &p.threads, &p.events, &p.regions};
	long base_kib, kib;
	double s, cpu;

	if (p.dir == NULL) {
		fprintf(stderr, "usage: merge_bench DIR [RANKS [THREADS [EVENTS [REGIONS]]]]\n");
		return 1;
	}
	for (int i = 2; i < argc && i < 6; i++)
		*fields[i - 2] = strtol(argv[i], NULL, 10);
	if (mkdir(p.dir, 0777) != 0 && errno != EEXIST) {
		perror(p.dir);
		return 1;
	}
	in_child(nothing, &p, 0, &s, &cpu, &base_kib);
	printf("# %ld ranks x %ld threads x %ld events x %ld regions; a child that does nothing: "
	       "%ld KiB peak\n",
	       p.ranks, p.threads, p.events, p.regions, base_kib);
	if (in_child(generate, &p, 0, &s, &cpu, &kib) < 0)
		return 2;
	printf("# generated in %.1f s (%.1f s CPU, %ld KiB peak)\n", s, cpu, kib);
	printf("| ranks | units | 64-bit bytes | inputs (bytes) | merged (bytes) | merged/inputs | "
	       "wall (s) | CPU (s) | MB/s of 64-bit bytes per CPU s | peak RSS (MiB) |\n"
	       "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (long n = 10;; n = n * 10 > p.ranks ? p.ranks : n * 10) {
		long long in = 0, out;
		char path[4096];
		double raw =
		    (double)n * (double)p.threads * (double)p.regions * (double)(p.events + 2) * 8;
		if (n > p.ranks)
			n = p.ranks;
		for (long r = 0; r < n; r++) {
			snprintf(path, sizeof path, "%s/job.%ld.pcz", p.dir, r);
			in += file_size(path);
		}
		if (in_child(merge_first, &p, n, &s, &cpu, &kib) < 0)
			return 2;
		snprintf(path, sizeof path, "%s/merged.%ld.pcz", p.dir, n);
		out = file_size(path);
		printf("| %ld | %ld | %.0f | %lld | %lld | %.3f | %.2f | %.2f | %.0f | %.1f |\n", n,
		       n * p.threads, raw, in, out, (double)out / (double)in, s, cpu,
		       raw / cpu / 1e6, (double)kib / 1024);
		fflush(stdout);
		unlink(path);
		if (n == p.ranks)
			break;
	}
	return 0;
}

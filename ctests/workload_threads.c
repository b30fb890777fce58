/* SPDX-License-Identifier: BSD-3-Clause */
/* "workload_threads GATE MAIN T1 T2 MS": the known threaded workload of the stat -p/-t tests. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef struct job {
	long pages, ms;
	pthread_barrier_t *gate;
} job;

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* PAGES fresh pages touched once each (one minor fault each), then MS of this thread's CPU. */
static int work(long pages, long ms)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned long sink = 0;
	volatile char *p = NULL;
	double t0;

	(void)sink;
	if (pages > 0) {
		p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 99;
		madvise((void *)p, (size_t)(pages * page), MADV_NOHUGEPAGE);
	}
	for (long i = 0; i < pages; i++)
		p[i * page] = 1;
	t0 = cpu_ms();
	while (cpu_ms() - t0 < (double)ms)
		for (int j = 0; j < 10000; j++)
			sink += (unsigned long)j;
	return 0;
}

static void *thread_main(void *arg)
{
	job *j = arg;

	pthread_barrier_wait(j->gate);
	return (void *)(long)work(j->pages, j->ms);
}

/*
 * Two threads, named wl-t1 and wl-t2, exist before the gate opens (a byte,
 * or the end of file, on the FIFO GATE), so -p finds all three; then each
 * thread does its share, the main thread MAIN pages, wl-t1 T1, wl-t2 T2,
 * and MS of CPU each.  Built without sanitizers: its page faults are its own.
 */
int main(int argc, char **argv)
{
	pthread_barrier_t gate;
	pthread_t th[2];
	job jobs[2];
	char byte;
	int fd, rc;

	if (argc != 6) {
		fprintf(stderr, "usage: workload_threads GATE MAIN T1 T2 MS\n");
		return 2;
	}
	pthread_barrier_init(&gate, NULL, 3);
	for (int i = 0; i < 2; i++) {
		char name[16];
		jobs[i].pages = atol(argv[3 + i]);
		jobs[i].ms = atol(argv[5]);
		jobs[i].gate = &gate;
		if (pthread_create(&th[i], NULL, thread_main, &jobs[i]) != 0)
			return 99;
		snprintf(name, sizeof name, "wl-t%d", i + 1);
		pthread_setname_np(th[i], name);
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || read(fd, &byte, 1) < 0)
		return 99;
	close(fd);
	pthread_barrier_wait(&gate);
	rc = work(atol(argv[2]), atol(argv[5]));
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(th[i], &r);
		rc |= (int)(long)r;
	}
	return rc;
}

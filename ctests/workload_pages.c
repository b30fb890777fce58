/* SPDX-License-Identifier: BSD-3-Clause */
/* "workload_pages PAGES MS STATUS": the known workload of the record --perf tests. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

/*
 * Its CPU time as perf's task-clock counts it (a task-clock event of its
 * own), since the tests check a recorder's task-clock against MS.
 * CLOCK_PROCESS_CPUTIME_ID is another clock: it leaves out steal and
 * interrupt time, which task-clock counts, and charges the scheduler's own
 * switching, which task-clock does not; its 300 ms came to 299.98 ms of
 * task-clock under ASan beside stress-ng.  CLOCK_PROCESS_CPUTIME_ID only
 * where perf_event_open is refused.  One thread: the task is the process.
 */
static int clock_fd = -1;

/*
 * cutest.c's task-clock, opened here on its own: the workload links neither
 * libcutest nor libmpxkit, whose loading would add to the system calls it is
 * recorded making.
 */
static void open_clock(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_hv = 1;
	clock_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (clock_fd < 0) {
		a.exclude_kernel = 1; /* kernel.perf_event_paranoid >= 2 */
		clock_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
}

static double cpu_ms(void)
{
	struct timespec t;
	uint64_t ns;

	if (clock_fd >= 0 && read(clock_fd, &ns, sizeof ns) == (ssize_t)sizeof ns)
		return (double)ns / 1e6;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/*
 * MS/10 of CPU, then PAGES fresh pages touched once each, then CPU
 * to MS; exits STATUS.  The faults come early, so they fall in a step every
 * run has even when a loaded machine stretches one run's wall time (runs are
 * aligned by interval and the trace is cut to the shortest), and never in
 * the interval the recorder drops at the end.
 */
static int work(long pages, long ms, int status)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned long sink = 0;
	double t0 = cpu_ms();
	volatile char *p;

	(void)sink; /* clang counts stores alone as "set but not used" */
	while (cpu_ms() - t0 < (double)ms / 10)
		for (int j = 0; j < 10000; j++)
			sink += (unsigned long)j;
	p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return 99;
	madvise((void *)p, (size_t)(pages * page), MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		p[i * page] = 1;
	while (cpu_ms() - t0 < (double)ms)
		for (int j = 0; j < 10000; j++)
			sink += (unsigned long)j;
	return status;
}

/* Built without sanitizers (lib/record/local.am): its page faults are its own. */
int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: workload_pages PAGES MS STATUS\n");
		return 2;
	}
	open_clock();
	return work(atol(argv[1]), atol(argv[2]), atoi(argv[3]));
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* "workload_fork PAGES ROUNDS": a parent and a child doing the same known work, for record --perf. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * ROUNDS rounds, each touching PAGES / ROUNDS fresh pages, computing a
 * little and writing one byte to /dev/null: ROUNDS write(2)s and PAGES page
 * faults besides the start-up's, the same every run.
 */
static int work(long pages, long rounds)
{
	long page = sysconf(_SC_PAGESIZE), per = pages / rounds;
	volatile unsigned long sink = 0;
	int fd = open("/dev/null", O_WRONLY);
	volatile char *p;

	(void)sink; /* clang counts stores alone as "set but not used" */
	p = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (fd < 0 || p == MAP_FAILED)
		return 99;
	madvise((void *)p, (size_t)(pages * page), MADV_NOHUGEPAGE);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < per; i++)
			p[(r * per + i) * page] = 1;
		for (unsigned long j = 0; j < 300000; j++)
			sink += j;
		if (write(fd, "x", 1) != 1)
			return 98;
	}
	return 0;
}

/* Built without sanitizers (lib/record/local.am): its page faults are its own. */
int main(int argc, char **argv)
{
	long pages, rounds;
	int status = 0, rc;
	pid_t child;

	if (argc != 3 || (pages = atol(argv[1])) < 0 || (rounds = atol(argv[2])) < 1) {
		fprintf(stderr, "usage: workload_fork PAGES ROUNDS\n");
		return 2;
	}
	child = fork();
	if (child < 0)
		return 97;
	rc = work(pages, rounds);
	if (child == 0)
		_exit(rc);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 96;
	return rc ? rc : WEXITSTATUS(status);
}

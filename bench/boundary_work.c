/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The measured program of bench/bench_boundary: T threads each spin a fixed amount of work, and
 * the program prints what its own threads saw (CPU, context switches, interrupts from other
 * CPUs, system calls).  Built with PAPI (WITH_PAPI), -e makes each thread count its work on a
 * PAPI event set of mpxkit:::EVENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracepoint.h"

#ifdef WITH_PAPI
#include <papi.h>
#endif

#define MAX_THREADS 64
#define MAX_EVENTS  64

/*
 * What one thread saw of itself: its CPU time, its context switches, and
 * from the kernel's tracepoints (counted for this thread alone, from its
 * start), the calls from other CPUs that interrupted it, the wake-up
 * interrupts, and its own system calls.  -1 where a tracepoint is not
 * counted (not asked for, not root, no tracefs).
 */
typedef struct seen {
	uint64_t cpu_ns, csw;
	int64_t fcall, resched, sys;
} seen;

enum { TP_FCALL, TP_FCALL_MULTI, TP_RESCHED, TP_SYS, N_TP };
static const char *const tracepoints[N_TP] = {
    "irq_vectors/call_function_single_entry",
    "irq_vectors/call_function_entry",
    "irq_vectors/reschedule_entry",
    "raw_syscalls/sys_enter",
};

typedef struct worker {
	pthread_t thread;
	uint64_t iters;
	char **events;
	size_t n_events;
	int rc;
	seen s;
} worker;

static int64_t read_counter(int fd)
{
	uint64_t v;

	if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
		return -1;
	close(fd);
	return (int64_t)v;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The work: a dependent chain the compiler cannot shorten, the same on every run. */
static uint64_t spin(uint64_t iters)
{
	uint64_t x = 88172645463325252ull;

	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Only when asked (BOUNDARY_COUNT=1): the counters sit in the contexts the tool switches. */
static void seen_begin(int fd[N_TP])
{
	const char *count = getenv("BOUNDARY_COUNT");

	for (int k = 0; k < N_TP; k++)
		fd[k] = count && strcmp(count, "1") == 0
			    ? bench_tracepoint_open(tracepoints[k], 0, 0)
			    : -1;
}

static void seen_end(int fd[N_TP], seen *s)
{
	struct rusage ru;
	int64_t v[N_TP];

	for (int k = 0; k < N_TP; k++)
		v[k] = read_counter(fd[k]);
	s->cpu_ns = thread_cpu_ns();
	getrusage(RUSAGE_THREAD, &ru);
	s->csw = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
	s->fcall = v[TP_FCALL] < 0 || v[TP_FCALL_MULTI] < 0 ? -1 : v[TP_FCALL] + v[TP_FCALL_MULTI];
	s->resched = v[TP_RESCHED];
	s->sys = v[TP_SYS];
}

#ifdef WITH_PAPI
/* The thread's work on an event set of mpxkit:::EVENT for each event, started and stopped. */
static int counted_work(worker *w)
{
	long long values[MAX_EVENTS];
	int es = PAPI_NULL, rc;

	if (PAPI_register_thread() != PAPI_OK || PAPI_create_eventset(&es) != PAPI_OK)
		return -1;
	for (size_t e = 0; e < w->n_events; e++) {
		char name[PAPI_MAX_STR_LEN];
		snprintf(name, sizeof name, "mpxkit:::%s", w->events[e]);
		if ((rc = PAPI_add_named_event(es, name)) != PAPI_OK) {
			fprintf(stderr, "boundary_work: %s: %s\n", name, PAPI_strerror(rc));
			return -1;
		}
	}
	if (PAPI_start(es) != PAPI_OK)
		return -1;
	spin(w->iters);
	rc = PAPI_stop(es, values) == PAPI_OK ? 0 : -1;
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	PAPI_unregister_thread();
	return rc;
}
#endif

static void *worker_main(void *arg)
{
	worker *w = arg;
	int fd[N_TP];

	seen_begin(fd);
#ifdef WITH_PAPI
	if (w->n_events > 0)
		w->rc = counted_work(w);
	else
#endif
		spin(w->iters);
	seen_end(fd, &w->s);
	return NULL;
}

static unsigned long papi_thread_id(void)
{
	return (unsigned long)pthread_self();
}

static size_t split(char *list, char **out, size_t cap)
{
	size_t n = 0;

	for (char *tok = strtok(list, ","); tok && n < cap; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

static int usage(void)
{
	fprintf(stderr, "usage: boundary_work [-t THREADS] [-n MILLION_ITERATIONS] [-p CPU] "
			"[-e EV,...]\n");
	return 1;
}

int main(int argc, char **argv)
{
	size_t threads = 1, n_events = 0;
	uint64_t iters = 1000000000ull;
	char *events[MAX_EVENTS];
	worker w[MAX_THREADS];
	seen main_seen, sum = {0, 0, 0, 0, 0};
	int fd[N_TP], opt, rc = 0;

	seen_begin(fd);
	while ((opt = getopt(argc, argv, "t:n:p:e:")) != -1) {
		switch (opt) {
		case 'p': { /* on that CPU alone, threads too (they inherit it) */
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)strtol(optarg, NULL, 10), &set);
			if (sched_setaffinity(0, sizeof set, &set) != 0) {
				fprintf(stderr, "boundary_work: -p %s: %s\n", optarg,
					strerror(errno));
				return 1;
			}
			break;
		}
		case 't':
			threads = strtoul(optarg, NULL, 10);
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 10) * 1000000ull;
			break;
		case 'e':
			n_events = split(optarg, events, MAX_EVENTS);
			break;
		default:
			return usage();
		}
	}
	if (threads < 1 || threads > MAX_THREADS || iters == 0)
		return usage();
#ifdef WITH_PAPI
	if (n_events > 0 && (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
			     PAPI_thread_init(papi_thread_id) != PAPI_OK)) {
		fprintf(stderr, "boundary_work: PAPI does not start\n");
		return 2;
	}
#else
	(void)papi_thread_id;
	if (n_events > 0) {
		fprintf(stderr, "boundary_work: built without PAPI: no -e\n");
		return 1;
	}
#endif
	/* One thread: the work in main, a single-thread program as issue 31's. */
	for (size_t t = 0; t < threads; t++) {
		w[t] = (worker){.iters = iters, .events = events, .n_events = n_events};
		if (threads == 1)
			worker_main(&w[t]);
		else if (pthread_create(&w[t].thread, NULL, worker_main, &w[t]) != 0)
			return 2;
	}
	for (size_t t = 0; t < threads; t++) {
		rc |= threads > 1 ? pthread_join(w[t].thread, NULL) : 0;
		rc |= w[t].rc;
		if (threads == 1)
			break; /* the work was main's own: main's figures below hold it */
		sum.cpu_ns += w[t].s.cpu_ns;
		sum.csw += w[t].s.csw;
		sum.fcall = sum.fcall < 0 || w[t].s.fcall < 0 ? -1 : sum.fcall + w[t].s.fcall;
		sum.resched =
		    sum.resched < 0 || w[t].s.resched < 0 ? -1 : sum.resched + w[t].s.resched;
		sum.sys = sum.sys < 0 || w[t].s.sys < 0 ? -1 : sum.sys + w[t].s.sys;
	}
	seen_end(fd, &main_seen);
#ifdef WITH_PAPI
	if (n_events > 0)
		PAPI_shutdown();
#endif
	/* The application's threads: the workers and main; any other thread is the tool's. */
	printf("boundary_work app_cpu_ns=%" PRIu64 " app_csw=%" PRIu64 " app_fcall=%" PRId64
	       " app_resched=%" PRId64 " app_sys=%" PRId64 "\n",
	       sum.cpu_ns + main_seen.cpu_ns, sum.csw + main_seen.csw,
	       sum.fcall < 0 || main_seen.fcall < 0 ? -1 : sum.fcall + main_seen.fcall,
	       sum.resched < 0 || main_seen.resched < 0 ? -1 : sum.resched + main_seen.resched,
	       sum.sys < 0 || main_seen.sys < 0 ? -1 : sum.sys + main_seen.sys);
	return rc ? 2 : 0;
}

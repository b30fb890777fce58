/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared CUnit driver for every check program. */
#define _GNU_SOURCE /* nftw, syscall */
#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <CUnit/Basic.h>

#include "cutest.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

static int add_suite(const cutest_suite *s)
{
	CU_pSuite suite = CU_add_suite(s->name, s->setup, s->teardown);
	if (suite == NULL)
		return -1;
	for (const cutest_case *c = s->cases; c->name != NULL; c++)
		if (CU_add_test(suite, c->name, c->fn) == NULL)
			return -1;
	return 0;
}

int cutest_run(const char *program, const cutest_suite *suites)
{
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "%s: cannot initialise CUnit: %s\n", program, CU_get_error_msg());
		return 2;
	}
	for (const cutest_suite *s = suites; s->name != NULL; s++) {
		if (add_suite(s) != 0) {
			fprintf(stderr, "%s: cannot register suite %s: %s\n", program, s->name,
				CU_get_error_msg());
			CU_cleanup_registry();
			return 2;
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed() +
		   CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures == 0 ? 0 : 1;
}

static const char *env_or_dot(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : ".";
}

const char *cutest_srcdir(void)
{
	return env_or_dot("top_srcdir");
}

const char *cutest_shared(void)
{
	static char fallback[4096];
	const char *v = getenv("MPXKIT_SHARED");

	if (v && *v)
		return v;
	snprintf(fallback, sizeof fallback, "%s/../shared", cutest_srcdir());
	return fallback;
}

const char *cutest_builddir(void)
{
	return env_or_dot("top_builddir");
}

int cutest_under_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
	return RUNNING_ON_VALGRIND != 0;
#else
	return 0;
#endif
}

double cutest_urand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / 4503599627370496.0 - 1.0;
}

static uint64_t thread_cputime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The thread's own task-clock event (cutest.h says why), opened at the
 * thread's first call; a child after fork() has another tid and opens its
 * own.  A key's destructor closes it when the thread ends.
 */
typedef struct ref_clock {
	int fd;		/* -1: not open (yet, or perf_event_open refused) */
	pid_t tid;	/* the thread it counts */
	uint64_t base;	/* CLOCK_THREAD_CPUTIME_ID when it was opened */
} ref_clock;

static __thread ref_clock ref = {-1, 0, 0};
static pthread_key_t ref_key;
static pthread_once_t ref_once = PTHREAD_ONCE_INIT;
static int ref_key_made;

static void ref_close(void *arg)
{
	ref_clock *r = arg;

	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

static void ref_make_key(void)
{
	ref_key_made = pthread_key_create(&ref_key, ref_close) == 0;
}

/* One software event of the calling thread on any CPU, in user mode only or in both. */
static int sw_event_open(uint64_t config, int disabled, int user_only)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	attr.disabled = disabled ? 1 : 0;
	attr.exclude_kernel = user_only ? 1 : 0;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void ref_open(pid_t tid)
{
	if (ref.fd >= 0)
		close(ref.fd); /* the parent's, inherited through fork() */
	ref.tid = tid;
	ref.base = thread_cputime_ns();
	ref.fd = sw_event_open(PERF_COUNT_SW_TASK_CLOCK, 0, 0);
	if (ref.fd < 0) /* kernel.perf_event_paranoid >= 2 */
		ref.fd = sw_event_open(PERF_COUNT_SW_TASK_CLOCK, 0, 1);
	pthread_once(&ref_once, ref_make_key);
	if (ref_key_made)
		pthread_setspecific(ref_key, &ref);
}

uint64_t cutest_thread_cpu_ns(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	uint64_t v;

	if (ref.tid != tid)
		ref_open(tid);
	if (ref.fd >= 0 && syscall(SYS_read, ref.fd, &v, sizeof v) == (long)sizeof v)
		return ref.base + v;
	return thread_cputime_ns();
}

/*
 * The loop watches CLOCK_THREAD_CPUTIME_ID, and only the two ends read the
 * task-clock: under valgrind a read(2) is a point where its scheduler may
 * switch threads, and a read every few microseconds changed the
 * interleavings test_fastread relies on (24 of 40 instants equal, not 40).
 */
uint64_t cutest_burn_cpu(uint64_t ns)
{
	uint64_t r0 = cutest_thread_cpu_ns(), t0 = thread_cputime_ns();
	volatile uint64_t sink = 0;

	do {
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * 2654435761u;
	} while (thread_cputime_ns() - t0 < ns);
	(void)sink; /* clang counts stores alone as "set but not used" */
	return cutest_thread_cpu_ns() - r0;
}

/* 1: blocked in futex(2) on a word in [at, at + len); 0: not; -1: unknown. */
static int futex_blocked(pid_t tid, const void *at, size_t len)
{
	char path[64], line[256];
	unsigned long nr, addr;
	int on = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof line, f)) /* "running", or "NR arg1 ..." in hex */
		on = sscanf(line, "%lu %lx", &nr, &addr) == 2 && nr == SYS_futex &&
		     addr >= (uintptr_t)at && addr - (uintptr_t)at < len;
	fclose(f);
	return on;
}

/* The thread's on-CPU time in ns (schedstat's first field), or UINT64_MAX. */
static uint64_t oncpu_ns(pid_t tid)
{
	char path[64];
	unsigned long long ns;
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return UINT64_MAX;
	ok = fscanf(f, "%llu", &ns) == 1;
	fclose(f);
	return ok ? (uint64_t)ns : UINT64_MAX;
}

int cutest_wait_asleep(pid_t tid, const void *at, size_t len)
{
	uint64_t before = UINT64_MAX;

	for (int look = 0; look < 50000; look++) { /* 200 us apart: 10 s */
		int blocked = futex_blocked(tid, at, len);
		uint64_t now = oncpu_ns(tid);

		if (blocked < 0 || now == UINT64_MAX)
			return -1;
		if (blocked && now == before)
			return 0;
		before = blocked ? now : UINT64_MAX;
		usleep(200);
	}
	return -1;
}

static char scratch[256];

int cutest_scratch_make(const char *tag)
{
	snprintf(scratch, sizeof scratch, "/tmp/mpxkit-test-%s-XXXXXX", tag);
	if (mkdtemp(scratch) == NULL) {
		perror("mkdtemp");
		scratch[0] = '\0';
		return -1;
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

int cutest_scratch_remove(void)
{
	int rc;

	if (scratch[0] == '\0')
		return 0;
	/* Depth first, without following links: a test may leave subdirectories. */
	rc = nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	scratch[0] = '\0';
	return rc == 0 ? 0 : -1;
}

const char *cutest_scratch(void)
{
	return scratch;
}

const char *cutest_scratch_path(const char *name)
{
	static char path[4][512];
	static int slot;

	slot = (slot + 1) % 4;
	snprintf(path[slot], sizeof path[slot], "%s/%s", scratch, name);
	return path[slot];
}

int cutest_scratch_entries(void)
{
	DIR *d = opendir(cutest_scratch());
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

void *cutest_fresh_pages(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * page, MADV_NOHUGEPAGE);
	return p;
}

__attribute__((no_sanitize_address)) void cutest_touch_pages(void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * page] = 1;
}

int cutest_perf_open(const char *name)
{
	static const struct {
		const char *name;
		uint64_t config;
	} sw[] = {
	    {"TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
	    {"CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK},
	    {"PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
	    {"MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	    {"MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	    {"CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
	    {"CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
	};
	const char *p = strstr(name, "perf::");

	if (p)
		name = p + 6;
	for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
		if (strcmp(sw[i].name, name) == 0)
			return sw_event_open(sw[i].config, 1, 1);
	}
	return -1;
}

int cutest_kernel_allowed(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long caps = 0;
	char line[256];
	int level = 2;

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	if ((caps >> 21 & 1) || (caps >> 38 & 1))
		return 1;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f && fscanf(f, "%d", &level) != 1)
		level = 2;
	if (f)
		fclose(f);
	return level <= 1;
}

long long cutest_perf_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
		return -1;
	return (long long)v;
}

int cutest_rotation_thread_ran(size_t wakeups, double run_ns, uint64_t slice_ns)
{
	double want = 0.5 * run_ns / (double)slice_ns;

	if ((double)wakeups >= want)
		return 1;
	printf("\n  not checked: rotation thread starved (%zu wake-ups, %.0f wanted)", wakeups,
	       want);
	return 0;
}

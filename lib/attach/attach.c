/* SPDX-License-Identifier: BSD-3-Clause */
/* Targets besides a forked workload: online CPUs, a process's threads, and waiting for their end.
 */
#define _GNU_SOURCE /* ppoll */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mpxkit/attach.h"
#include "mpxkit/event.h"

#define MAX_CPU	    (1 << 20)
#define POLL_NS	    20000000ull /* the /proc look of tasks without a pidfd */
#define PIDFD_THR   O_EXCL	/* PIDFD_THREAD (Linux 6.9), which older headers lack */
#define CPULIST_MAX 65536

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* One "N" or "N-M" of a CPU list: 0 and *p past it, or -1. */
static int cpu_range(const char **p, long *lo, long *hi)
{
	char *end;

	errno = 0;
	if (**p < '0' || **p > '9')
		return -1;
	*lo = strtol(*p, &end, 10);
	*hi = *lo;
	if (*end == '-') {
		const char *q = end + 1;
		if (*q < '0' || *q > '9')
			return -1;
		*hi = strtol(q, &end, 10);
	}
	if (errno != 0 || *lo < 0 || *hi < *lo || *hi >= MAX_CPU)
		return -1;
	*p = end;
	return 0;
}

int mpxkit_attach_parse_cpus(const char *text, int **cpus, size_t *n, mpxkit_diag *diag)
{
	const char *p = text;
	int *list = NULL;
	size_t len = 0, cap = 0, kept = 0;

	if (text == NULL || cpus == NULL || n == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "CPU list: missing argument");
	for (;;) {
		long lo, hi;
		if (cpu_range(&p, &lo, &hi) < 0)
			goto bad;
		if (len + (size_t)(hi - lo + 1) > MAX_CPU)
			goto bad;
		if (len + (size_t)(hi - lo + 1) > cap) {
			size_t want = len + (size_t)(hi - lo + 1);
			int *grown;
			cap = cap * 2 > want ? cap * 2 : want;
			if ((grown = realloc(list, cap * sizeof *list)) == NULL) {
				free(list);
				return mpxkit_fail(diag, MPXKIT_ENOMEM, "CPU list: out of memory");
			}
			list = grown;
		}
		for (long c = lo; c <= hi; c++)
			list[len++] = (int)c;
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	if (*p != '\0')
		goto bad;
	qsort(list, len, sizeof *list, cmp_int);
	for (size_t i = 0; i < len; i++)
		if (kept == 0 || list[kept - 1] != list[i])
			list[kept++] = list[i];
	*cpus = list;
	*n = kept;
	return 0;
bad:
	free(list);
	return mpxkit_fail(diag, MPXKIT_EFORMAT, "CPU list '%.40s': not a list such as 0-3,8",
			   text);
}

int mpxkit_attach_cpus(int **cpus, size_t *n, mpxkit_diag *diag)
{
	static const char path[] = "/sys/devices/system/cpu/online";
	char *buf = malloc(CPULIST_MAX);
	FILE *f;
	size_t got;
	int rc;

	if (buf == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory", path);
	if ((f = fopen(path, "re")) == NULL) {
		rc = mpxkit_fail_sys(diag, "cannot open %s", path);
		free(buf);
		return rc;
	}
	got = fread(buf, 1, CPULIST_MAX - 1, f);
	fclose(f);
	buf[got] = '\0';
	rc = mpxkit_attach_parse_cpus(buf, cpus, n, diag);
	free(buf);
	return rc;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* A directory entry's name as a task id: > 0, or 0 when it is not one. */
static pid_t task_id(const char *name)
{
	char *end;
	long v;

	if (*name < '1' || *name > '9')
		return 0;
	errno = 0;
	v = strtol(name, &end, 10);
	return errno == 0 && *end == '\0' && v > 0 && v <= INT_MAX ? (pid_t)v : 0;
}

int mpxkit_attach_threads(pid_t pid, pid_t **tids, size_t *n, mpxkit_diag *diag)
{
	char path[64];
	struct dirent *d;
	pid_t *list = NULL;
	size_t len = 0, cap = 0;
	DIR *dir;

	if (tids == NULL || n == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "threads: missing argument");
	if (pid <= 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT, "process %ld: no such process", (long)pid);
	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	if ((dir = opendir(path)) == NULL) {
		if (errno == ENOENT || errno == ESRCH)
			return mpxkit_fail(diag, MPXKIT_ENOENT, "process %ld: no such process",
					   (long)pid);
		return mpxkit_fail_sys(diag, "process %ld: cannot read %s", (long)pid, path);
	}
	while ((d = readdir(dir)) != NULL) {
		pid_t tid = task_id(d->d_name);
		if (tid == 0)
			continue;
		if (len == cap) {
			pid_t *grown;
			cap = cap ? 2 * cap : 16;
			if ((grown = realloc(list, cap * sizeof *list)) == NULL) {
				free(list);
				closedir(dir);
				return mpxkit_fail(diag, MPXKIT_ENOMEM,
						   "process %ld: out of memory", (long)pid);
			}
			list = grown;
		}
		list[len++] = tid;
	}
	closedir(dir);
	if (len == 0) {
		free(list);
		return mpxkit_fail(diag, MPXKIT_ENOENT, "process %ld: no such process", (long)pid);
	}
	qsort(list, len, sizeof *list, cmp_pid);
	*tids = list;
	*n = len;
	return 0;
}

/*
 * The state letter of /proc/TID/stat (R, S, Z, ...), or 0 when the task is
 * gone.  /proc/TID answers for any thread, listed under /proc or not.
 */
static char task_state(pid_t tid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t got;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)tid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	got = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[got] = '\0';
	paren = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return paren && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

int mpxkit_attach_thread_exists(pid_t tid, mpxkit_diag *diag)
{
	if (tid > 0 && task_state(tid) != 0)
		return 0;
	return mpxkit_fail(diag, MPXKIT_ENOENT, "thread %ld: no such thread", (long)tid);
}

void mpxkit_attach_comm(pid_t tid, char *buf, size_t cap)
{
	char path[64];
	FILE *f;
	size_t got = 0;

	if (cap == 0)
		return;
	snprintf(path, sizeof path, "/proc/%ld/comm", (long)tid);
	if ((f = fopen(path, "re")) != NULL) {
		got = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* One target's source with every event: 0, 1 when its task had ended (ESRCH), or the error. */
static int open_one(mpxkit_source **out, const mpxkit_source_target *t, const char *const *events,
		    size_t n_events, mpxkit_diag *diag)
{
	mpxkit_source *src = NULL;
	mpxkit_diag d = {0};
	int rc = mpxkit_source_open_perf(&src, t, &d);

	for (size_t e = 0; rc >= 0 && e < n_events; e++)
		rc = mpxkit_source_add(src, events[e], &d);
	if (rc >= 0) {
		*out = src;
		return 0;
	}
	mpxkit_source_free(src);
	if (d.sys_errno == ESRCH)
		return 1;
	return mpxkit_attach_refused(t, rc, &d, diag);
}

int mpxkit_attach_refused(const mpxkit_source_target *t, int rc, const mpxkit_diag *why,
			  mpxkit_diag *diag)
{
	if (rc == -MPXKIT_EPERM && t->pid == -1)
		return mpxkit_fail(diag, MPXKIT_EPERM,
				   "counting every CPU needs CAP_PERFMON (or root) or "
				   "kernel.perf_event_paranoid <= 0: %s",
				   why->msg);
	if (rc == -MPXKIT_EPERM)
		return mpxkit_fail(diag, MPXKIT_EPERM,
				   "task %ld: attaching needs the right to trace it (its user, or "
				   "CAP_PERFMON): %s",
				   (long)t->pid, why->msg);
	if (diag && diag != why)
		*diag = *why;
	return rc;
}

/*
 * In a set of CPUs (cpu_set), an event of a PMU with a cpumask is counted on
 * the mask's CPUs alone and held by a stand-in that counts 0 elsewhere: with
 * none of the mask's CPUs in the set, the sum would be a 0 nothing counted.
 */
static int check_masks(const mpxkit_source_target *targets, size_t n, const char *const *events,
		       size_t n_events, mpxkit_diag *diag)
{
	for (size_t e = 0; e < n_events; e++) {
		mpxkit_event ev;
		size_t in = 0, in_set = 0;
		if (mpxkit_event_parse(events[e], &ev, NULL) < 0 || !ev.per_cpu)
			continue; /* a bad name: the source's add says why */
		for (size_t i = 0; i < n; i++) {
			in_set += targets[i].cpu_set != 0;
			in += targets[i].cpu_set && mpxkit_event_on_cpu(&ev, targets[i].cpu) != 0;
		}
		if (in_set > 0 && in == 0)
			return mpxkit_fail(diag, MPXKIT_ENOSUPP,
					   "%s: none of the CPUs counted is in %s's cpumask",
					   ev.name, ev.pmu);
	}
	return 0;
}

int mpxkit_attach_open(mpxkit_source **out, const mpxkit_source_target *targets, size_t n,
		       const char *const *events, size_t n_events, mpxkit_diag *diag)
{
	size_t opened = 0;
	int rc;

	if (out == NULL || (n > 0 && targets == NULL) || (n_events > 0 && events == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "attach: missing argument");
	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	if ((rc = check_masks(targets, n, events, n_events, diag)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		rc = open_one(&out[i], &targets[i], events, n_events, diag);
		if (rc < 0) {
			for (size_t j = 0; j < i; j++) {
				mpxkit_source_free(out[j]);
				out[j] = NULL;
			}
			return rc;
		}
		opened += rc == 0;
	}
	if (opened == 0)
		return mpxkit_fail(diag, MPXKIT_ENOENT,
				   "every task had ended before its counters were opened");
	return (int)opened;
}

/* ---- waiting for the end -------------------------------------------------------------- */

typedef struct watched {
	pid_t task;
	int fd; /* its pidfd, or -1: looked at in /proc */
	int ended;
} watched;

struct mpxkit_attach_watch {
	watched *tasks;
	size_t n;
	struct pollfd *fds; /* n, for each wait */
	size_t *which;	    /* n: fds[i]'s task */
};

static int pidfd_open_task(pid_t task, int threads)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, task, threads ? PIDFD_THR : 0);
	return fd < 0 ? -1 : (int)fd;
#else
	(void)task;
	(void)threads;
	return -1;
#endif
}

int mpxkit_attach_watch_new(mpxkit_attach_watch **out, const pid_t *tasks, size_t n, int threads,
			    mpxkit_diag *diag)
{
	mpxkit_attach_watch *w;

	if (out == NULL || (n > 0 && tasks == NULL))
		return mpxkit_fail(diag, MPXKIT_EINVAL, "watch: missing argument");
	w = calloc(1, sizeof *w);
	if (w == NULL || (n > 0 && ((w->tasks = calloc(n, sizeof *w->tasks)) == NULL ||
				    (w->fds = calloc(n, sizeof *w->fds)) == NULL ||
				    (w->which = calloc(n, sizeof *w->which)) == NULL))) {
		mpxkit_attach_watch_free(w);
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "watch: out of memory");
	}
	w->n = n;
	for (size_t i = 0; i < n; i++) {
		w->tasks[i].task = tasks[i];
		w->tasks[i].fd = pidfd_open_task(tasks[i], threads);
	}
	*out = w;
	return 0;
}

void mpxkit_attach_watch_free(mpxkit_attach_watch *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; w->tasks && i < w->n; i++)
		if (w->tasks[i].fd >= 0)
			close(w->tasks[i].fd);
	free(w->tasks);
	free(w->fds);
	free(w->which);
	free(w);
}

static uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The tasks without a pidfd, looked at in /proc; 1 when some remain to look at later. */
static int look_in_proc(mpxkit_attach_watch *w)
{
	int pending = 0;

	for (size_t i = 0; i < w->n; i++) {
		watched *t = &w->tasks[i];
		if (t->ended || t->fd >= 0)
			continue;
		char state = task_state(t->task);
		t->ended = state == 0 || state == 'Z' || state == 'X';
		pending |= !t->ended;
	}
	return pending;
}

static int all_ended(const mpxkit_attach_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!w->tasks[i].ended)
			return 0;
	return w->n > 0;
}

int mpxkit_attach_wait(mpxkit_attach_watch *w, uint64_t deadline_ns, const sigset_t *sigmask)
{
	if (w == NULL)
		return -MPXKIT_EINVAL;
	for (;;) {
		int polling = look_in_proc(w);
		uint64_t now = monotonic_ns(), wait_ns = UINT64_MAX;
		struct timespec ts, *timeout = NULL;
		nfds_t nfds = 0;
		int rc;

		if (all_ended(w))
			return 1;
		if (deadline_ns != 0 && now >= deadline_ns)
			return 0;
		if (deadline_ns != 0)
			wait_ns = deadline_ns - now;
		if (polling && wait_ns > POLL_NS)
			wait_ns = POLL_NS;
		if (wait_ns != UINT64_MAX) {
			ts.tv_sec = (time_t)(wait_ns / 1000000000u);
			ts.tv_nsec = (long)(wait_ns % 1000000000u);
			timeout = &ts;
		}
		for (size_t i = 0; i < w->n; i++) {
			if (w->tasks[i].ended || w->tasks[i].fd < 0)
				continue;
			w->fds[nfds].fd = w->tasks[i].fd;
			w->fds[nfds].events = POLLIN;
			w->fds[nfds].revents = 0;
			w->which[nfds++] = i;
		}
		rc = ppoll(nfds ? w->fds : NULL, nfds, timeout, sigmask);
		if (rc < 0 && errno == EINTR)
			return 2;
		if (rc < 0)
			return mpxkit_fail_sys(NULL, "ppoll");
		for (nfds_t i = 0; i < nfds; i++)
			if (w->fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
				w->tasks[w->which[i]].ended = 1;
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a slice boundary costs the measured program (doc/benchmarks.md, "Slice boundaries"):
 * the same program bare, under perf stat, under mpxkit stat (another process), under the engine
 * in a process of its own with any event list (duplicates allowed), and counted by PAPI event
 * sets inside it, at several slices and event counts, in paired rounds; prints markdown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "bench.h"
#include "tracepoint.h"
#include "mpxkit/sched.h"
#include "mpxkit/source.h"
#include "mpxkit/workload.h"

#define MAX_EVENTS 64
#define MAX_LIST   16
#define MAX_ROUNDS 64
#define LINE_MAX_  4096

/*
 * The events: the kernel's ten software events, the six of issue 31 first
 * (two clocks among them: their enables take the kick).  n events are the
 * first n of the list, repeated as often as needed: today nothing else is
 * nameable on a machine without a PMU, and the engine's source counts a
 * repeated event as another slot.  --names replaces the list (tracepoints,
 * hardware events) where the source can name them.
 */
static const char *const software[] = {
    "perf::TASK-CLOCK",	      "perf::CPU-CLOCK",	"perf::PAGE-FAULTS",
    "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",	"perf::MINOR-FAULTS",
    "perf::MAJOR-FAULTS",     "perf::ALIGNMENT-FAULTS", "perf::EMULATION-FAULTS",
    "perf::CGROUP-SWITCHES",
};

typedef enum tool { BARE, PERF, STAT, LIB, PAPI, N_TOOLS } tool;
static const char *const tool_names[N_TOOLS] = {"bare", "perf", "stat", "lib", "papi"};

typedef struct options {
	const char *work, *work_papi, *mpxkit, *perf;
	const char *names[MAX_EVENTS];
	size_t n_names;
	unsigned slices[MAX_LIST];
	size_t n_slices;
	unsigned sizes[MAX_LIST];
	size_t n_sizes;
	int tools[N_TOOLS];
	unsigned rounds, counters, threads;
	unsigned long long iters, papi_iters;
	int count;
	int pin; /* 0: none; 1: the tool on CPU 0, the program on CPU 1; 2: both on CPU 1 */
	/* The build before the change, run beside: its mpxkit, libmpxkit, PAPI program. */
	const char *before, *before_work_papi;
} options;

/* One run, as the driver and the program itself saw it. */
typedef struct result {
	int ok;
	double wall_ns, cpu_ns; /* the whole tree: tool and program */
	double app_cpu_ns, app_csw, app_fcall, app_resched, app_sys;
	double tree_sys, tree_xcall; /* -1: not counted */
	double rotations, groups;    /* -1: unknown (the tool does not say) */
} result;

/* ---- the counters on the run's tree (tracepoints, inherited) ------------------------------ */

static double read_tree_counter(int fd)
{
	uint64_t v;
	double r = -1;

	if (fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v)
		r = (double)v;
	if (fd >= 0)
		close(fd);
	return r;
}

/* ---- commands ------------------------------------------------------------------------------ */

/* perf's name of an event: the software events' without "perf::", in lower case. */
static void perf_name(const char *ev, char *out, size_t cap)
{
	const char *bare = strncasecmp(ev, "perf::", 6) == 0 ? ev + 6 : ev;
	size_t i;

	for (i = 0; bare[i] && i + 1 < cap; i++)
		out[i] = bare == ev
			     ? bare[i]
			     : (char)(bare[i] >= 'A' && bare[i] <= 'Z' ? bare[i] + 32 : bare[i]);
	out[i] = 0;
}

static void event_list(const options *o, unsigned n, const char **ev)
{
	for (unsigned e = 0; e < n; e++)
		ev[e] = o->names[e % o->n_names];
}

static void join(const char **ev, unsigned n, int perf, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = 0;
	for (unsigned e = 0; e < n; e++) {
		char name[256];
		if (perf)
			perf_name(ev[e], name, sizeof name);
		else
			snprintf(name, sizeof name, "%s", ev[e]);
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s", e ? "," : "",
					name);
	}
}

static int has_repeats(const char **ev, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < i; j++)
			if (strcasecmp(ev[i], ev[j]) == 0)
				return 1;
	return 0;
}

/*
 * The engine on the program as mpxkit stat runs it (utils/cmd_stat.c: its
 * pid, inherit, the engine's settings), in this process, with any list;
 * prints the rotations and its groups after the program's own line.
 */
static int run_lib(unsigned counters, unsigned slice_us, const char **ev, unsigned n, char **argv)
{
	mpxkit_source_target target = {.pid = 0, .cpu = -1, .inherit = 1, .domain = 0};
	mpxkit_sched_config cfg;
	mpxkit_source *src = NULL;
	mpxkit_sched *s = NULL;
	mpxkit_diag diag = {0};
	mpxkit_workload w;
	double est[MAX_EVENTS];
	int rc, status = 0, rotations = -1;

	mpxkit_sched_config_default(&cfg);
	cfg.counters = counters;
	cfg.slice_ns = (uint64_t)slice_us * 1000;
	if ((rc = mpxkit_workload_prepare(&w, argv, &diag)) < 0)
		goto fail;
	target.pid = w.pid;
	if ((rc = mpxkit_source_open_perf(&src, &target, &diag)) < 0)
		goto fail;
	for (unsigned e = 0; e < n; e++)
		if ((rc = mpxkit_source_add(src, ev[e], &diag)) < 0)
			goto fail;
	if ((rc = mpxkit_sched_new(&s, src, &cfg, &diag)) < 0)
		goto fail;
	src = NULL;
	if ((rc = mpxkit_sched_start(s)) < 0 || (rc = mpxkit_workload_start(&w, &diag)) < 0)
		goto fail;
	mpxkit_workload_wait(&w, &status);
	if ((rc = mpxkit_sched_stop(s)) < 0)
		goto fail;
	rotations = mpxkit_sched_read(s, est, NULL);
	printf("bench_boundary rotations=%d groups=%zu\n", rotations,
	       mpxkit_sched_layout(s)->n_groups);
	mpxkit_sched_free(s);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && rotations >= 0 ? 0 : 2;
fail:
	fprintf(stderr, "bench_boundary: %s\n", mpxkit_diag_message(&diag, rc));
	mpxkit_workload_cancel(&w);
	mpxkit_sched_free(s);
	mpxkit_source_free(src);
	return 2;
}

/*
 * The run's command line, in argv (strings in buf): the program (with
 * threaded, the PAPI build's THREADS threads, each counting n events when
 * the tool is papi), under the tool.
 */
static void command(const options *o, tool t, int before, int threaded, unsigned slice_us,
		    const char **ev, unsigned n, const char *report, char **argv,
		    char (*buf)[LINE_MAX_])
{
	size_t a = 0;

	switch (t) {
	case LIB: /* this program again, as the runner of run_lib, on the libmpxkit it is given */
		join(ev, n, 0, buf[0], LINE_MAX_);
		snprintf(buf[1], LINE_MAX_, "%u", o->counters);
		snprintf(buf[2], LINE_MAX_, "%u", slice_us);
		argv[a++] = "/proc/self/exe";
		argv[a++] = "--run-lib";
		argv[a++] = buf[2];
		argv[a++] = buf[1];
		argv[a++] = buf[0];
		argv[a++] = "--";
		break;
	case PERF:
		join(ev, n, 1, buf[0], LINE_MAX_);
		argv[a++] = (char *)o->perf;
		argv[a++] = "stat";
		argv[a++] = "-x,";
		argv[a++] = "-o";
		argv[a++] = "/dev/null";
		argv[a++] = "-e";
		argv[a++] = buf[0];
		argv[a++] = "--";
		break;
	case STAT:
		join(ev, n, 0, buf[0], LINE_MAX_);
		snprintf(buf[1], LINE_MAX_, "%u", o->counters);
		snprintf(buf[2], LINE_MAX_, "%u", slice_us);
		if (before)
			snprintf(buf[6], LINE_MAX_, "%s/utils/mpxkit", o->before);
		argv[a++] = before ? buf[6] : (char *)o->mpxkit;
		argv[a++] = "stat";
		argv[a++] = "-c";
		argv[a++] = buf[1];
		argv[a++] = "--slice-us";
		argv[a++] = buf[2];
		argv[a++] = "-e";
		argv[a++] = buf[0];
		argv[a++] = "-o";
		argv[a++] = (char *)report;
		argv[a++] = "--";
		break;
	default:
		break;
	}
	argv[a++] = (char *)(!threaded ? o->work : before ? o->before_work_papi : o->work_papi);
	snprintf(buf[3], LINE_MAX_, "%llu", threaded ? o->papi_iters : o->iters);
	argv[a++] = "-n";
	argv[a++] = buf[3];
	if (o->pin) {
		argv[a++] = "-p";
		argv[a++] = "1";
	}
	if (threaded) {
		snprintf(buf[4], LINE_MAX_, "%u", o->threads);
		argv[a++] = "-t";
		argv[a++] = buf[4];
	}
	if (t == PAPI) {
		join(ev, n, 0, buf[5], LINE_MAX_);
		argv[a++] = "-e";
		argv[a++] = buf[5];
	}
	argv[a] = NULL;
}

/* ---- one run ------------------------------------------------------------------------------ */

static double field(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtod(p + strlen(key), NULL) : -1;
}

/* " 123 rotations" in mpxkit stat's report, and its groups ("N groups"). */
static void stat_report(const char *path, result *r)
{
	char line[LINE_MAX_];
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f)) {
		const char *g = strstr(line, " group");
		unsigned long v;
		if (sscanf(line, " %lu rotation", &v) == 1 && strstr(line, "rotation"))
			r->rotations = (double)v;
		if (g) {
			const char *p = g;
			while (p > line && p[-1] >= '0' && p[-1] <= '9')
				p--;
			if (p < g)
				r->groups = strtod(p, NULL);
		}
	}
	fclose(f);
}

/*
 * Forks the run held on a pipe, opens the tree's counters on it when
 * counting, lets it go and waits: wall from the release to the reap, CPU
 * from wait4 (the tree: the tool and the program it waited for).
 */
static int run_once(const options *o, tool t, int before, int threaded, unsigned slice_us,
		    unsigned n, result *r)
{
	const char *ev[MAX_EVENTS];
	char *argv[32], buf[7][LINE_MAX_], out[LINE_MAX_], report[] = "/tmp/bench_boundary.XXXXXX";
	int go[2], res[2], fd_sys = -1, fd_x = -1, status = 0, rfd = -1;
	struct rusage ru;
	double t0, t1;
	ssize_t got = 0;
	pid_t pid;

	memset(r, 0, sizeof *r);
	r->tree_sys = r->tree_xcall = r->rotations = r->groups = -1;
	event_list(o, n, ev);
	if (t == STAT && (rfd = mkstemp(report)) < 0)
		return -1;
	if (rfd >= 0)
		close(rfd);
	command(o, t, before, threaded, slice_us, ev, n, report, argv, buf);
	if (pipe(go) < 0 || pipe(res) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		close(go[1]);
		close(res[0]);
		dup2(res[1], STDOUT_FILENO);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		if (o->count)
			setenv("BOUNDARY_COUNT", "1", 1);
		if (o->pin) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(o->pin == 1 ? 0 : 1, &set);
			sched_setaffinity(0, sizeof set, &set);
		}
		if (t == PAPI) {
			snprintf(buf[2], LINE_MAX_, "%u", slice_us);
			snprintf(buf[1], LINE_MAX_, "%u", o->counters);
			setenv("MPXKIT_SLICE_US", buf[2], 1);
			setenv("MPXKIT_COUNTERS", buf[1], 1);
		}
		if (t == LIB && before) {
			char path[LINE_MAX_];
			snprintf(path, sizeof path, "%s/lib/.libs", o->before);
			setenv("LD_LIBRARY_PATH", path, 1);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "bench_boundary: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	close(res[1]);
	if (o->count) {
		fd_sys = bench_tracepoint_open("raw_syscalls/sys_enter", pid, 1);
		fd_x = bench_tracepoint_open("csd/csd_queue_cpu", pid, 1);
	}
	t0 = now();
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	for (ssize_t k; (k = read(res[0], out + got, sizeof out - 1 - (size_t)got)) > 0;)
		got += k;
	out[got] = 0;
	close(res[0]);
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	t1 = now();
	r->tree_sys = read_tree_counter(fd_sys);
	r->tree_xcall = read_tree_counter(fd_x);
	r->wall_ns = (t1 - t0) * 1e9;
	if (getenv("BENCH_BOUNDARY_DEBUG"))
		fprintf(stderr, "%s%s slice %u n %u: wall %.3f s cpu %.3f s\n", tool_names[t],
			before ? " (before)" : "", slice_us, n, t1 - t0,
			((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) +
			    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6);
	r->cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
		    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	r->app_cpu_ns = field(out, "app_cpu_ns=");
	r->app_csw = field(out, "app_csw=");
	r->app_fcall = field(out, "app_fcall=");
	r->app_resched = field(out, "app_resched=");
	r->app_sys = field(out, "app_sys=");
	if (t == LIB) {
		r->rotations = field(out, "rotations=");
		r->groups = field(out, "groups=");
	}
	if (t == STAT) {
		stat_report(report, r);
		unlink(report);
	}
	r->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && r->app_cpu_ns > 0;
	if (!r->ok)
		fprintf(stderr, "bench_boundary: %s%s run failed (status %d): %s\n", tool_names[t],
			before ? " (before)" : "", status, out);
	return r->ok ? 0 : -1;
}

/* ---- rounds and the table ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return -1;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * A configuration's runs: the tool at one slice on n events, and in each
 * round the bare run and the tool's run at 10 s slices (no boundary in the
 * program's time: the tool's fixed cost, taken off its per-boundary figures).
 */
#define FIXED_SLICE_US 10000000u

typedef struct config {
	tool t;
	int before; /* the build before the change */
	unsigned slice_us, n;
	result runs[MAX_ROUNDS], bare[MAX_ROUNDS], fixed[MAX_ROUNDS];
	size_t n_runs;
} config;

static double boundaries(const config *c, const result *r)
{
	/* rotations x groups where the tool says; else the program's CPU over the slice. */
	if (r->rotations >= 0 && r->groups > 1)
		return r->rotations * r->groups;
	if (c->t == BARE || c->t == PERF || c->slice_us == 0 || c->slice_us == FIXED_SLICE_US)
		return 0;
	return r->app_cpu_ns / (c->slice_us * 1e3);
}

static int is_engine(const config *c)
{
	return c->t != BARE && c->t != PERF;
}

/* " x |" with the median of v to the given decimals, or " - |" for none. */
static void print_median(double *v, size_t n, int decimals)
{
	if (n == 0)
		printf(" - |");
	else
		printf(" %.*f |", decimals, median(v, n));
}

static void print_row(const config *c)
{
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS], tool_ms[MAX_ROUNDS], tool_cpu[MAX_ROUNDS];
	double sys[MAX_ROUNDS], xc[MAX_ROUNDS], fc[MAX_ROUNDS], csw[MAX_ROUNDS], bd[MAX_ROUNDS];
	size_t k = 0, kb = 0, ks = 0, kx = 0, kf = 0;
	int fixed_row = c->slice_us == FIXED_SLICE_US;

	for (size_t i = 0; i < c->n_runs; i++) {
		const result *r = &c->runs[i], *b = &c->bare[i], *f = &c->fixed[i];
		double nb = boundaries(c, r);
		if (!r->ok || !b->ok)
			continue;
		wall[k] = r->wall_ns / b->wall_ns;
		cpu[k] = r->cpu_ns / b->cpu_ns;
		tool_ms[k] = (r->cpu_ns - r->app_cpu_ns) / 1e6;
		k++;
		if (!is_engine(c) || fixed_row || !f->ok || nb <= 0)
			continue;
		bd[kb] = nb;
		tool_cpu[kb] =
		    ((r->cpu_ns - r->app_cpu_ns) - (f->cpu_ns - f->app_cpu_ns)) / nb / 1e3;
		csw[kb++] = (r->app_csw - b->app_csw) / nb;
		if (r->tree_sys >= 0 && r->app_sys >= 0 && f->tree_sys >= 0 && f->app_sys >= 0)
			sys[ks++] = ((r->tree_sys - r->app_sys) - (f->tree_sys - f->app_sys)) / nb;
		if (r->tree_xcall >= 0 && f->tree_xcall >= 0)
			xc[kx++] = (r->tree_xcall - f->tree_xcall) / nb;
		if (r->app_fcall >= 0 && b->app_fcall >= 0)
			fc[kf++] = (r->app_fcall - b->app_fcall) / nb;
	}
	if (k == 0) {
		printf("| %s | %u | %u | failed |\n", tool_names[c->t], c->slice_us, c->n);
		return;
	}
	printf("| %s%s | ", tool_names[c->t], c->before ? " (before)" : "");
	if (!is_engine(c))
		printf("-");
	else if (fixed_row)
		printf("10 s (fixed cost)");
	else
		printf("%u", c->slice_us);
	printf(" | %u | %.3f | %.3f |", c->n, median(wall, k), median(cpu, k));
	print_median(tool_ms, is_engine(c) ? k : 0, 1);
	print_median(bd, kb, 0);
	print_median(tool_cpu, kb, 1);
	print_median(sys, ks, 1);
	print_median(xc, kx, 2);
	print_median(fc, kf, 2);
	print_median(csw, kb, 2);
	printf("\n");
}

static int parse_list(const char *arg, unsigned *out, size_t cap, size_t *n)
{
	char *copy = strdup(arg), *save = NULL;

	*n = 0;
	if (copy == NULL)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);
		if (*end || v == 0 || v > 10000000 || *n == cap) {
			free(copy);
			return -1;
		}
		out[(*n)++] = (unsigned)v;
	}
	free(copy);
	return *n ? 0 : -1;
}

static int usage(FILE *f, int rc)
{
	fprintf(
	    f, "usage: bench_boundary [-r ROUNDS] [-s SLICE_US,...] [-n EVENTS,...] [-T TOOL,...]\n"
	       "         [-c COUNTERS] [-t THREADS] [-i MITER] [-I PAPI_MITER] [--names EV,...]\n"
	       "         [--count] [--pin none|cross|same] [--work PATH] [--work-papi PATH]\n"
	       "         [--mpxkit PATH] [--perf PATH] [--before BUILD_DIR [--before-work-papi "
	       "PATH]]\n"
	       "  tools: stat (mpxkit stat), lib (the engine in a process of its own), papi\n"
	       "  (an event set in each of the program's THREADS threads: the component takes no\n"
	       "  PAPI_INHERIT); bare and perf stat always run;\n"
	       "  --before: the same tools of another build tree (its utils/mpxkit, lib/.libs)\n");
	return rc;
}

static int parse(options *o, int argc, char **argv)
{
	static const struct option longs[] = {{"names", required_argument, NULL, 'N'},
					      {"count", no_argument, NULL, 'C'},
					      {"work", required_argument, NULL, 'W'},
					      {"work-papi", required_argument, NULL, 'P'},
					      {"mpxkit", required_argument, NULL, 'M'},
					      {"perf", required_argument, NULL, 'F'},
					      {"pin", required_argument, NULL, 'p'},
					      {"before", required_argument, NULL, 'B'},
					      {"before-work-papi", required_argument, NULL, 'Q'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	int opt;

	while ((opt = getopt_long(argc, argv, "r:s:n:T:c:t:i:I:h", longs, NULL)) != -1) {
		switch (opt) {
		case 'r':
			o->rounds = (unsigned)strtoul(optarg, NULL, 10);
			if (o->rounds < 1 || o->rounds > MAX_ROUNDS)
				return usage(stderr, 1);
			break;
		case 's':
			if (parse_list(optarg, o->slices, MAX_LIST, &o->n_slices) < 0)
				return usage(stderr, 1);
			break;
		case 'n':
			if (parse_list(optarg, o->sizes, MAX_LIST, &o->n_sizes) < 0)
				return usage(stderr, 1);
			for (size_t i = 0; i < o->n_sizes; i++)
				if (o->sizes[i] > MAX_EVENTS)
					return usage(stderr, 1);
			break;
		case 'T': {
			char *copy = strdup(optarg), *save = NULL;
			memset(o->tools, 0, sizeof o->tools);
			for (char *tok = strtok_r(copy, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int found = 0;
				for (int t = STAT; t < N_TOOLS; t++)
					if (strcmp(tok, tool_names[t]) == 0)
						o->tools[t] = found = 1;
				if (!found) {
					free(copy);
					return usage(stderr, 1);
				}
			}
			free(copy);
			break;
		}
		case 'c':
			o->counters = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			o->threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'i':
			o->iters = strtoull(optarg, NULL, 10);
			break;
		case 'I':
			o->papi_iters = strtoull(optarg, NULL, 10);
			break;
		case 'N': {
			char *copy = strdup(optarg), *save = NULL;
			o->n_names = 0;
			for (char *tok = strtok_r(copy, ",", &save); tok && o->n_names < MAX_EVENTS;
			     tok = strtok_r(NULL, ",", &save))
				o->names[o->n_names++] = tok; /* copy kept for the run */
			if (o->n_names == 0)
				return usage(stderr, 1);
			break;
		}
		case 'C':
			o->count = 1;
			break;
		case 'B':
			o->before = optarg;
			break;
		case 'Q':
			o->before_work_papi = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "none") == 0)
				o->pin = 0;
			else if (strcmp(optarg, "cross") == 0)
				o->pin = 1;
			else if (strcmp(optarg, "same") == 0)
				o->pin = 2;
			else
				return usage(stderr, 1);
			break;
		case 'W':
			o->work = optarg;
			break;
		case 'P':
			o->work_papi = optarg;
			break;
		case 'M':
			o->mpxkit = optarg;
			break;
		case 'F':
			o->perf = optarg;
			break;
		case 'h':
			return usage(stdout, -1);
		default:
			return usage(stderr, 1);
		}
	}
	if (o->counters < 1 || o->counters > 64 || o->threads < 1 || o->threads > 64 ||
	    o->iters == 0 || o->papi_iters == 0)
		return usage(stderr, 1);
	return 0;
}

int main(int argc, char **argv)
{
	options o = {.work = "bench/boundary_work",
		     .work_papi = "bench/boundary_work_papi",
		     .mpxkit = "utils/mpxkit",
		     .perf = "perf",
		     .slices = {1000, 2000, 4000, 10000},
		     .n_slices = 4,
		     .sizes = {6, 13, 40},
		     .n_sizes = 3,
		     .tools = {0, 0, 1, 1, 0},
		     .rounds = 5,
		     .counters = 4,
		     .threads = 8,
		     .iters = 1000,
		     .papi_iters = 250};
	int rc;

	/* The runner of a lib run: --run-lib SLICE_US COUNTERS EV,... -- PROGRAM ARGS. */
	if (argc > 6 && strcmp(argv[1], "--run-lib") == 0 && strcmp(argv[5], "--") == 0) {
		const char *ev[MAX_EVENTS];
		unsigned n = 0;
		for (char *save = NULL, *tok = strtok_r(argv[4], ",", &save); tok && n < MAX_EVENTS;
		     tok = strtok_r(NULL, ",", &save))
			ev[n++] = tok;
		return run_lib((unsigned)strtoul(argv[3], NULL, 10),
			       (unsigned)strtoul(argv[2], NULL, 10), ev, n, argv + 6);
	}
	for (size_t i = 0; i < sizeof software / sizeof software[0]; i++)
		o.names[o.n_names++] = software[i];
	if ((rc = parse(&o, argc, argv)) != 0)
		return rc < 0 ? 0 : rc;
	{
		double load[3] = {0, 0, 0};
		FILE *f = fopen("/proc/loadavg", "r");
		if (f) {
			if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
				load[0] = -1;
			fclose(f);
		}
		printf("Rounds %u, C = %u, %s, load average at the start %.2f %.2f %.2f; ratios "
		       "are medians of paired ratios to the same round's bare run.\n\n",
		       o.rounds, o.counters,
		       o.pin == 0   ? "unpinned"
		       : o.pin == 1 ? "the tool on CPU 0 and the program on CPU 1"
				    : "the tool and the program on CPU 1",
		       load[0], load[1], load[2]);
	}
	printf("| tool | slice us | events | wall x | CPU x | tool CPU ms | boundaries "
	       "| tool CPU us/boundary | tool syscalls/boundary | cross-CPU calls/boundary "
	       "| calls on program/boundary | program switches/boundary |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
	       "|\n");
	for (int papi = 0; papi <= 1; papi++) {
		if (papi && !o.tools[PAPI])
			continue;
		if (!papi && !o.tools[STAT] && !o.tools[LIB])
			continue;
		for (size_t z = 0; z < o.n_sizes; z++) {
			unsigned n = o.sizes[z];
			const char *ev[MAX_EVENTS];
			config *cfg = calloc(2 + 4 * (o.n_slices + 1), sizeof *cfg);
			size_t n_cfg = 0;
			if (cfg == NULL)
				return 2;
			event_list(&o, n, ev);
			/* perf stat against bare; then each mpxkit tool at each slice, before and
			 * after. */
			cfg[n_cfg++] = (config){.t = BARE, .n = 0};
			cfg[n_cfg++] = (config){.t = PERF, .n = n};
			for (int t = papi ? PAPI : STAT; t <= (papi ? PAPI : LIB); t++) {
				if (!o.tools[t])
					continue;
				if ((t == STAT || t == PAPI) && has_repeats(ev, n)) {
					printf("| %s | | %u | (%s refuses a repeated event%s) |\n",
					       tool_names[t], n, t == STAT ? "mpxkit stat" : "PAPI",
					       t == STAT ? ": see lib" : "");
					continue;
				}
				for (int before = o.before != NULL; before >= 0; before--) {
					if (before && t >= PAPI && o.before_work_papi == NULL)
						continue;
					cfg[n_cfg++] = (config){.t = (tool)t,
								.before = before,
								.slice_us = FIXED_SLICE_US,
								.n = n};
					for (size_t i = 0; i < o.n_slices; i++)
						cfg[n_cfg++] = (config){.t = (tool)t,
									.before = before,
									.slice_us = o.slices[i],
									.n = n};
				}
			}
			for (unsigned round = 0; round < o.rounds; round++) {
				result bare;
				/* The bare run first, then the others in an order turned each
				 * round. */
				run_once(&o, BARE, 0, papi, 0, 0, &bare);
				for (size_t k = 0; k < n_cfg; k++) {
					config *c = &cfg[(k + round) % n_cfg];
					result *r = &c->runs[c->n_runs];
					if (c == &cfg[0])
						*r = bare;
					else
						run_once(&o, c->t, c->before, papi, c->slice_us,
							 c->n, r);
					c->bare[c->n_runs++] = bare;
				}
				/* Each engine run's fixed cost: its tool's 10 s run of this round.
				 */
				for (size_t k = 0, f = 0; k < n_cfg; k++) {
					if (!is_engine(&cfg[k]))
						continue;
					if (cfg[k].slice_us == FIXED_SLICE_US)
						f = k;
					cfg[k].fixed[cfg[k].n_runs - 1] =
					    cfg[f].runs[cfg[k].n_runs - 1];
				}
			}
			for (size_t k = 0; k < n_cfg; k++) {
				if (k == 0)
					printf(
					    "| %s | - | 0 | 1 | 1 | - | - | - | - | - | - | - |\n",
					    papi ? "bare (8 threads)" : "bare");
				else
					print_row(&cfg[k]);
			}
			free(cfg);
		}
	}
	return 0;
}

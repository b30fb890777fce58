/* SPDX-License-Identifier: BSD-3-Clause */
/* The "perf" counter source: one perf_event_open(2) descriptor per slot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "source_impl.h"

/*
 * The kernel's generic events.  Names follow libpfm4's "perf" PMU table, which
 * is what PAPI's perf_event component shows (perf::TASK-CLOCK); the second
 * spelling is the kernel's enum name, which libpfm4 accepts too.  Alignment
 * and emulation faults are missing from libpfm4, so they take perf(1)'s names.
 */
typedef struct perf_event_def {
	const char *name;
	const char *kernel_name;
	uint32_t type;
	uint64_t config;
	const char *unit;
	const char *description;
} perf_event_def;

/* clang-format off */
#define SW(n, k, u, d) { "perf::" n, "PERF_COUNT_SW_" #k, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##k, u, d }
#define HW(n, k, d) { "perf::" n, "PERF_COUNT_HW_" #k, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##k, "", d }

static const perf_event_def perf_events[] = {
	SW("CPU-CLOCK", CPU_CLOCK, "ns", "Time the task was running, from the per-CPU clock"),
	SW("TASK-CLOCK", TASK_CLOCK, "ns", "Time the task was running, from the task's own clock"),
	SW("PAGE-FAULTS", PAGE_FAULTS, "", "Page faults, minor and major"),
	SW("CONTEXT-SWITCHES", CONTEXT_SWITCHES, "", "Context switches"),
	SW("CPU-MIGRATIONS", CPU_MIGRATIONS, "", "Moves of the task to another CPU"),
	SW("MINOR-FAULTS", PAGE_FAULTS_MIN, "", "Page faults served without I/O"),
	SW("MAJOR-FAULTS", PAGE_FAULTS_MAJ, "", "Page faults that needed I/O"),
	SW("ALIGNMENT-FAULTS", ALIGNMENT_FAULTS, "", "Unaligned accesses fixed up by the kernel"),
	SW("EMULATION-FAULTS", EMULATION_FAULTS, "", "Instructions the kernel emulated"),
	SW("CGROUP-SWITCHES", CGROUP_SWITCHES, "", "Context switches to a task in another cgroup"),
	HW("CYCLES", CPU_CYCLES, "CPU cycles"),
	HW("INSTRUCTIONS", INSTRUCTIONS, "Instructions retired"),
	HW("CACHE-REFERENCES", CACHE_REFERENCES, "Last-level cache accesses"),
	HW("CACHE-MISSES", CACHE_MISSES, "Last-level cache misses"),
	HW("BRANCHES", BRANCH_INSTRUCTIONS, "Branch instructions retired"),
	HW("BRANCH-MISSES", BRANCH_MISSES, "Mispredicted branches"),
	HW("BUS-CYCLES", BUS_CYCLES, "Bus cycles"),
	HW("STALLED-CYCLES-FRONTEND", STALLED_CYCLES_FRONTEND, "Cycles the front end stalled"),
	HW("STALLED-CYCLES-BACKEND", STALLED_CYCLES_BACKEND, "Cycles the back end stalled"),
	HW("REF-CYCLES", REF_CPU_CYCLES, "Reference cycles, unaffected by frequency scaling"),
};

/* clang-format on */

#undef SW
#undef HW

#define N_PERF_EVENTS (sizeof perf_events / sizeof perf_events[0])
#define PMU_PREFIX    "perf::"

typedef struct perf_slot {
	int fd;
	int def; /* index into perf_events */
} perf_slot;

typedef struct perf_source {
	struct mpxkit_source base; /* first: the generic layer casts */
	mpxkit_source_target target;
	perf_slot *slots;
	size_t cap;
	int probed;
	int clock_fd; /* the always-on dummy event of mpxkit_source_clock, or -1 */
	size_t n_avail;
	int avail[N_PERF_EVENTS]; /* indexes of the events that opened when probed */
} perf_source;

static perf_source *as_perf(mpxkit_source *s)
{
	return (perf_source *)s;
}

static const perf_source *as_perf_const(const mpxkit_source *s)
{
	return (const perf_source *)s;
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = -99;

	if (f == NULL)
		return level;
	if (fscanf(f, "%d", &level) != 1)
		level = -99;
	fclose(f);
	return level;
}

/* Says why perf_event_open failed with the errno it left, in one line. */
static int open_error(const perf_event_def *d, int kernel, mpxkit_diag *diag)
{
	int err = errno;

	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (d->type == PERF_TYPE_HARDWARE)
			return mpxkit_fail(
			    diag, MPXKIT_ENOSUPP,
			    "%s: no hardware PMU here can count it (perf_event_open: %s)", d->name,
			    strerror(err));
		return mpxkit_fail(diag, MPXKIT_ENOSUPP,
				   "%s: this kernel cannot count it (perf_event_open: %s)", d->name,
				   strerror(err));
	case ENOSYS:
		return mpxkit_fail(diag, MPXKIT_ENOSUPP,
				   "%s: perf_event_open is not available on this system", d->name);
	case EACCES:
	case EPERM: {
		int level = paranoid_level(); /* before errno is restored: it may clobber it */
		errno = err;
		return mpxkit_fail_sys(
		    diag, "%s%s: perf_event_open refused (kernel.perf_event_paranoid=%d)", d->name,
		    kernel ? " in kernel mode" : "", level);
	}
	default:
		errno = err;
		return mpxkit_fail_sys(diag, "%s: perf_event_open", d->name);
	}
}

static int open_event(const perf_source *ps, const perf_event_def *d, int *fd, mpxkit_diag *diag)
{
	struct perf_event_attr attr;
	long rc;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = d->type;
	attr.config = d->config;
	attr.disabled = 1;
	attr.inherit = ps->target.inherit != 0;
	attr.exclude_kernel = ps->target.kernel == 0;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

	rc = syscall(SYS_perf_event_open, &attr, ps->target.pid, ps->target.cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (rc < 0)
		return open_error(d, ps->target.kernel, diag);
	*fd = (int)rc;
	return 0;
}

/* The event a user's name means: "perf::TASK-CLOCK", "task-clock" or "PERF_COUNT_SW_TASK_CLOCK". */
static int find_event(const char *name, mpxkit_diag *diag)
{
	const char *bare = name;

	if (strncasecmp(bare, PMU_PREFIX, strlen(PMU_PREFIX)) == 0)
		bare += strlen(PMU_PREFIX);
	for (size_t i = 0; i < N_PERF_EVENTS; i++) {
		const perf_event_def *d = &perf_events[i];
		if (strcasecmp(bare, d->name + strlen(PMU_PREFIX)) == 0 ||
		    strcasecmp(bare, d->kernel_name) == 0)
			return (int)i;
	}
	if (strchr(bare, ':') != NULL)
		return mpxkit_fail(
		    diag, MPXKIT_ENOENT,
		    "%s: no such perf event (event modifiers such as :u are not supported)", name);
	return mpxkit_fail(diag, MPXKIT_ENOENT, "%s: no such perf event", name);
}

int mpxkit_source_perf_event(const char *name, uint32_t *type, uint64_t *config,
			     const char **canonical, int *hardware, mpxkit_diag *diag)
{
	int i;

	if (name == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf: missing event name");
	i = find_event(name, diag);
	if (i < 0)
		return i;
	if (type)
		*type = perf_events[i].type;
	if (config)
		*config = perf_events[i].config;
	if (canonical)
		*canonical = perf_events[i].name;
	if (hardware)
		*hardware = perf_events[i].type == PERF_TYPE_HARDWARE;
	return 0;
}

int mpxkit_source_perf_error(const char *name, int kernel, mpxkit_diag *diag)
{
	int err = errno, i = find_event(name, NULL);

	errno = err;
	if (i < 0)
		return mpxkit_fail_sys(diag, "%s: perf_event_open", name);
	return open_error(&perf_events[i], kernel, diag);
}

static void probe(perf_source *ps)
{
	ps->n_avail = 0;
	for (size_t i = 0; i < N_PERF_EVENTS; i++) {
		int fd;
		if (open_event(ps, &perf_events[i], &fd, NULL) == 0) {
			close(fd);
			ps->avail[ps->n_avail++] = (int)i;
		}
	}
	ps->probed = 1;
}

static int perf_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	perf_source *ps = as_perf(s);
	const perf_event_def *d;

	if (!ps->probed)
		probe(ps);
	if (i >= ps->n_avail)
		return -MPXKIT_ENOENT;
	d = &perf_events[ps->avail[i]];
	out->name = d->name;
	out->description = d->description;
	out->unit = d->unit;
	return 0;
}

static int open_clock(perf_source *ps);

static int perf_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	perf_source *ps = as_perf(s);
	int def = find_event(name, diag);
	int fd, rc;

	if (def < 0)
		return def;
	if (s->n_slots == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 8;
		perf_slot *slots = realloc(ps->slots, cap * sizeof *slots);
		if (slots == NULL)
			return mpxkit_fail(diag, MPXKIT_ENOMEM, "%s: out of memory adding a slot",
					   name);
		ps->slots = slots;
		ps->cap = cap;
	}
	rc = open_event(ps, &perf_events[def], &fd, diag);
	if (rc < 0)
		return rc;
	ps->slots[s->n_slots].fd = fd;
	ps->slots[s->n_slots].def = def;
	if (s->n_slots == 0)
		open_clock(ps); /* without it the scheduler falls back on the slots' own times */
	return (int)s->n_slots++;
}

static const char *perf_slot_name(const mpxkit_source *s, int slot)
{
	return perf_events[as_perf_const(s)->slots[slot].def].name;
}

/* One ioctl on one slot or on each; the first failure wins but every slot is tried. */
static int slots_ioctl(perf_source *ps, int slot, unsigned long request)
{
	size_t first = slot == MPXKIT_SOURCE_ALL ? 0 : (size_t)slot;
	size_t end = slot == MPXKIT_SOURCE_ALL ? ps->base.n_slots : first + 1;
	int rc = 0;

	for (size_t i = first; i < end; i++)
		if (ioctl(ps->slots[i].fd, request, 0) != 0 && rc == 0)
			rc = mpxkit_fail_sys(NULL, "ioctl");
	return rc;
}

static int perf_enable(mpxkit_source *s, int slot)
{
	return slots_ioctl(as_perf(s), slot, PERF_EVENT_IOC_ENABLE);
}

static int perf_disable(mpxkit_source *s, int slot)
{
	return slots_ioctl(as_perf(s), slot, PERF_EVENT_IOC_DISABLE);
}

static int perf_reset(mpxkit_source *s, int slot)
{
	return slots_ioctl(as_perf(s), slot, PERF_EVENT_IOC_RESET);
}

static int perf_read(mpxkit_source *s, mpxkit_source_count *counts)
{
	perf_source *ps = as_perf(s);

	for (size_t i = 0; i < s->n_slots; i++) {
		uint64_t buf[3]; /* value, time_enabled, time_running: our read_format */
		ssize_t n = read(ps->slots[i].fd, buf, sizeof buf);
		if (n < 0)
			return mpxkit_fail_sys(NULL, "read");
		if ((size_t)n != sizeof buf)
			return -MPXKIT_EIO;
		counts[i].value = buf[0];
		counts[i].time_enabled = buf[1];
		counts[i].time_running = buf[2];
	}
	return 0;
}

/*
 * The clock: a dummy event counts nothing, but its enabled time runs as the
 * slots' would, gaps included.  It is opened with the first slot, so that
 * pid 0 means the same thread for both, and it stays enabled.
 */
static int open_clock(perf_source *ps)
{
	static const perf_event_def dummy = {
	    "perf::DUMMY", "PERF_COUNT_SW_DUMMY", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "", ""};
	int fd;

	if (open_event(ps, &dummy, &fd, NULL) < 0)
		return -MPXKIT_ENOSUPP;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		close(fd);
		return -MPXKIT_ENOSUPP;
	}
	ps->clock_fd = fd;
	return 0;
}

static int perf_clock(mpxkit_source *s, uint64_t *ns)
{
	perf_source *ps = as_perf(s);
	uint64_t buf[3];

	if (ps->clock_fd < 0)
		return -MPXKIT_ENOSUPP;
	if (read(ps->clock_fd, buf, sizeof buf) != (ssize_t)sizeof buf)
		return mpxkit_fail_sys(NULL, "read");
	*ns = buf[1];
	return 0;
}

static void perf_free(mpxkit_source *s)
{
	perf_source *ps = as_perf(s);

	if (ps->clock_fd >= 0)
		close(ps->clock_fd);
	for (size_t i = 0; i < s->n_slots; i++)
		close(ps->slots[i].fd);
	free(ps->slots);
	free(ps);
}

static const mpxkit_source_ops perf_ops = {
    .kind = "perf",
    .list = perf_list,
    .add = perf_add,
    .slot_name = perf_slot_name,
    .enable = perf_enable,
    .disable = perf_disable,
    .reset = perf_reset,
    .read = perf_read,
    .free = perf_free,
    .clock = perf_clock,
};

int mpxkit_source_open_perf(mpxkit_source **out, const mpxkit_source_target *target,
			    mpxkit_diag *diag)
{
	perf_source *ps;

	if (out == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf source: no output pointer");
	ps = calloc(1, sizeof *ps);
	if (ps == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "perf source: out of memory");
	ps->base.ops = &perf_ops;
	ps->clock_fd = -1;
	ps->target = target ? *target : MPXKIT_SOURCE_SELF;
	if (ps->target.pid < -1 || ps->target.cpu < -1 ||
	    (ps->target.pid == -1 && ps->target.cpu == -1)) {
		mpxkit_source_target bad = ps->target;
		free(ps);
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf source: bad target (pid %ld, cpu %d)",
				   (long)bad.pid, bad.cpu);
	}
	*out = &ps->base;
	return 0;
}

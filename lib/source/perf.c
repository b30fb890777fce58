/* SPDX-License-Identifier: BSD-3-Clause */
/* The "perf" counter source: one perf_event_open(2) descriptor per slot, grouped under its clock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "perf_page.h"
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

/*
 * How the slots are opened (doc/component.md, "Reads"): the clock, an
 * always-on dummy event, is the leader of one perf group, and every slot is
 * a member of it, opened disabled.  The scheduler enables and disables
 * members one by one (a disabled member takes no counter), so the group
 * holds the counted set of every slice, whatever the schedule, and one
 * read(2) of the leader (PERF_FORMAT_GROUP) gives the clock and every
 * member's count at one instant.  A slot the kernel refuses as a member is
 * opened on its own and read on its own.  Members read one by one
 * (mpxkit_source_read) give their own enabled and running times, which the
 * scheduler's slice boundaries need.
 *
 * The kick.  Enabling a member while its task runs puts it on at once only
 * when the member belongs to the PMU of the group's leader: Linux 6.x
 * reschedules the enabled event's own PMU context (ctx_resched), and a
 * software group lives in its leader's.  TASK-CLOCK and CPU-CLOCK have PMUs
 * of their own, so in the dummy's group they would wait, enabled but not
 * running, for the task's next context switch (seen here: 8 % to 91 % of a
 * slice lost, ctests/test_fastread "a clock member runs once enabled").  So
 * such a member's enable is followed by the enable and disable of a spare
 * dummy member, the kicker, whose PMU is the leader's: that reschedules the
 * group with the new member in it.
 */
#define MEMBER_FORMAT (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define LEADER_FORMAT (MEMBER_FORMAT | PERF_FORMAT_GROUP | PERF_FORMAT_ID)
#define ANCHORS_MAX   64 /* slots anchored by one read: the scheduler's C at most */

typedef struct perf_slot {
	int fd;
	int def;     /* index into perf_events */
	size_t gpos; /* its entry in a group read (1, 2, ...); 0: opened on its own */
	uint64_t id; /* the kernel's id, which a group read gives with the count */
	/*
	 * rdpmc: the mmap page of a hardware event counted for the thread that
	 * opened it (NULL otherwise), how to read it, and the slot's anchor: the
	 * clock minus the slot's enabled time, which stays constant while the
	 * slot stays enabled (both grow with the target's context time).
	 */
	struct perf_event_mmap_page *page;
	const mpxkit__pmc *pmc;
	int anchored;
	int64_t anchor;
	uint64_t anchor_err; /* ns: half the span the anchor was taken in */
	int simulated;	     /* tests: a page that mmap did not give */
} perf_slot;

typedef struct perf_source {
	struct mpxkit_source base; /* first: the generic layer casts */
	mpxkit_source_target target;
	perf_slot *slots;
	size_t cap;
	int probed;
	int clock_fd;	  /* the always-on dummy event: the clock and the group's leader; or -1 */
	uint64_t *group;  /* a group read: nr, enabled, running, then (value, id) per entry */
	size_t n_members; /* the group's members besides the leader, the kicker included */
	int kick_fd;	  /* the kicker (see "The kick"), or -1 */
	int self; /* counts the opening thread alone (pid 0, no inherit): rdpmc may read it */
	pthread_t owner;  /* that thread, once a slot is added */
	int map_software; /* tests: map software events' pages too (they are never on a counter) */
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

static int open_event(const perf_source *ps, const perf_event_def *d, int group_fd,
		      uint64_t read_format, int *fd, mpxkit_diag *diag)
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
	attr.read_format = read_format;

	rc = syscall(SYS_perf_event_open, &attr, ps->target.pid, ps->target.cpu, group_fd,
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
		int fd = -1;
		if (open_event(ps, &perf_events[i], -1, MEMBER_FORMAT, &fd, NULL) == 0) {
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

/*
 * The clock: a dummy event counts nothing, but its enabled time runs as the
 * slots' would, gaps included.  It stays enabled, and it leads the slots'
 * group, so it is opened before the first slot: pid 0 then means the same
 * thread for both.
 */
static const perf_event_def dummy = {
    "perf::DUMMY", "PERF_COUNT_SW_DUMMY", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "", ""};

static int open_clock(perf_source *ps)
{
	int fd;

	if (ps->group == NULL) /* nr, enabled, running, the leader's entry */
		ps->group = malloc(5 * sizeof *ps->group);
	if (ps->group == NULL)
		return -MPXKIT_ENOMEM;
	if (open_event(ps, &dummy, -1, LEADER_FORMAT, &fd, NULL) < 0)
		return -MPXKIT_ENOSUPP;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		close(fd);
		return -MPXKIT_ENOSUPP;
	}
	ps->clock_fd = fd;
	return 0;
}

/* Events whose PMU is not the dummy's: TASK-CLOCK and CPU-CLOCK (see "The kick"). */
static int needs_kick(const perf_event_def *d)
{
	return d->type == PERF_TYPE_SOFTWARE &&
	       (d->config == PERF_COUNT_SW_TASK_CLOCK || d->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Makes the group read's buffer hold one more member; 0 or -1. */
static int grow_group(perf_source *ps)
{
	size_t entries = ps->n_members + 2; /* the leader, the members, one more */
	uint64_t *group = realloc(ps->group, (3 + 2 * entries) * sizeof *group);

	if (group == NULL)
		return -1;
	ps->group = group;
	return 0;
}

/* Opens e as a member of the clock's group: 0, or -1 when the kernel or memory refuses. */
static int join_group(perf_source *ps, const perf_event_def *d, int *fd, uint64_t *id)
{
	if (ps->clock_fd < 0 || open_event(ps, d, ps->clock_fd, MEMBER_FORMAT, fd, NULL) < 0)
		return -1;
	if (grow_group(ps) < 0 || ioctl(*fd, PERF_EVENT_IOC_ID, id) != 0) {
		close(*fd);
		return -1;
	}
	ps->n_members++;
	return 0;
}

/*
 * Opens the slot's event as a member of the clock's group, else on its own
 * (a PMU that refuses the group, or no clock); the error is the latter's.
 * A member that needs the kick brings the kicker with it, or goes on its own.
 */
static int open_slot(perf_source *ps, perf_slot *sl, mpxkit_diag *diag)
{
	const perf_event_def *d = &perf_events[sl->def];
	uint64_t kick_id;

	sl->gpos = 0;
	if (needs_kick(d) && ps->kick_fd < 0 && join_group(ps, &dummy, &ps->kick_fd, &kick_id) < 0)
		ps->kick_fd = -1;
	if ((!needs_kick(d) || ps->kick_fd >= 0) && join_group(ps, d, &sl->fd, &sl->id) == 0) {
		sl->gpos = ps->n_members;
		return 0;
	}
	return open_event(ps, d, -1, MEMBER_FORMAT, &sl->fd, diag);
}

/*
 * rdpmc needs the event's mmap page, a counter the reading thread's CPU
 * holds, and that thread to be the one counted: a hardware event of a
 * source that counts its opening thread alone (the kernel refuses to map an
 * inherited event).  Without a page the slot is read by read(2).
 */
static void map_page(perf_source *ps, perf_slot *sl)
{
	long size = sysconf(_SC_PAGESIZE);
	void *p;

	sl->page = NULL;
	sl->pmc = mpxkit__pmc_native();
	sl->anchored = 0;
	if (!ps->self || sl->pmc == NULL || size <= 0 ||
	    (perf_events[sl->def].type != PERF_TYPE_HARDWARE && !ps->map_software))
		return;
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, sl->fd, 0);
	if (p != MAP_FAILED)
		sl->page = p;
}

static int perf_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	perf_source *ps = as_perf(s);
	int def = find_event(name, diag);
	perf_slot *sl;
	int rc;

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
	if (s->n_slots == 0 && ps->clock_fd < 0) {
		/* Without it the scheduler falls back on the slots' own times, and reads them one
		 * by one. */
		open_clock(ps);
		ps->owner = pthread_self();
	}
	sl = &ps->slots[s->n_slots];
	memset(sl, 0, sizeof *sl);
	sl->def = def;
	rc = open_slot(ps, sl, diag);
	if (rc < 0)
		return rc;
	map_page(ps, sl);
	return (int)s->n_slots++;
}

static const char *perf_slot_name(const mpxkit_source *s, int slot)
{
	return perf_events[as_perf_const(s)->slots[slot].def].name;
}

/*
 * One ioctl on one slot or on each; the first failure wins but every slot is
 * tried.  A slot enabled or disabled loses its anchor: its enabled time
 * stops or starts while the clock runs on.
 */
static int slots_ioctl(perf_source *ps, int slot, unsigned long request)
{
	size_t first = slot == MPXKIT_SOURCE_ALL ? 0 : (size_t)slot;
	size_t end = slot == MPXKIT_SOURCE_ALL ? ps->base.n_slots : first + 1;
	int rc = 0;

	for (size_t i = first; i < end; i++) {
		perf_slot *sl = &ps->slots[i];
		if (request != PERF_EVENT_IOC_RESET)
			sl->anchored = 0;
		if (ioctl(sl->fd, request, 0) != 0 && rc == 0)
			rc = mpxkit_fail_sys(NULL, "ioctl");
		if (request == PERF_EVENT_IOC_ENABLE && sl->gpos != 0 &&
		    needs_kick(&perf_events[sl->def]) &&
		    (ioctl(ps->kick_fd, PERF_EVENT_IOC_ENABLE, 0) != 0 ||
		     ioctl(ps->kick_fd, PERF_EVENT_IOC_DISABLE, 0) != 0) &&
		    rc == 0)
			rc = mpxkit_fail_sys(NULL, "ioctl");
	}
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

/* One slot's own read(2): its count, enabled and running times. */
static int read_one(const perf_slot *sl, mpxkit_source_count *c)
{
	uint64_t buf[3]; /* value, time_enabled, time_running: MEMBER_FORMAT */
	ssize_t n = read(sl->fd, buf, sizeof buf);

	if (n < 0)
		return mpxkit_fail_sys(NULL, "read");
	if ((size_t)n != sizeof buf)
		return -MPXKIT_EIO;
	c->value = buf[0];
	c->time_enabled = buf[1];
	c->time_running = buf[2];
	return 0;
}

static int perf_read(mpxkit_source *s, mpxkit_source_count *counts)
{
	perf_source *ps = as_perf(s);

	for (size_t i = 0; i < s->n_slots; i++) {
		int rc = read_one(&ps->slots[i], &counts[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int perf_read_slots(mpxkit_source *s, const size_t *slots, size_t n,
			   mpxkit_source_count *counts)
{
	perf_source *ps = as_perf(s);

	for (size_t i = 0; i < n; i++) {
		int rc = read_one(&ps->slots[slots[i]], &counts[slots[i]]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One read(2) of the leader: the clock's times and every member's count, as at one instant. */
static int read_group(perf_source *ps)
{
	size_t len = (3 + 2 * (ps->n_members + 1)) * sizeof *ps->group;
	ssize_t n = read(ps->clock_fd, ps->group, len);

	if (n < 0)
		return mpxkit_fail_sys(NULL, "read");
	if ((size_t)n != len || ps->group[0] != ps->n_members + 1)
		return -MPXKIT_EIO;
	return 0;
}

static int perf_clock(mpxkit_source *s, uint64_t *ns)
{
	perf_source *ps = as_perf(s);
	int rc;

	if (ps->clock_fd < 0)
		return -MPXKIT_ENOSUPP;
	rc = read_group(ps);
	if (rc == 0)
		*ns = ps->group[1];
	return rc;
}

/* A member's count in the group read just made, checked against its id. */
static int group_value(const perf_source *ps, const perf_slot *sl, uint64_t *value)
{
	const uint64_t *entry = ps->group + 3 + 2 * sl->gpos;

	if (entry[1] != sl->id)
		return -MPXKIT_EIO;
	*value = entry[0];
	return 0;
}

/* rdpmc only from the thread the slots count, and only for slots on a counter now. */
static int can_rdpmc(const perf_source *ps, const size_t *slots, size_t n)
{
	if (!ps->self || n == 0)
		return 0;
	/* The pages first: a software event has none, and then pthread_self is not needed. */
	for (size_t i = 0; i < n; i++)
		if (ps->slots[slots[i]].page == NULL)
			return 0;
	return pthread_equal(pthread_self(), ps->owner);
}

/*
 * No system call: each slot by rdpmc, and the clock from an anchored slot's
 * enabled time.  0, or -1 when a slot is not on a counter or none is
 * anchored (the caller then reads the group).
 */
static int snapshot_rdpmc(perf_source *ps, const size_t *slots, size_t n, uint64_t *values,
			  uint64_t *clock_ns)
{
	int have_clock = clock_ns == NULL;

	for (size_t i = 0; i < n; i++) {
		const perf_slot *sl = &ps->slots[slots[i]];
		mpxkit__page_reading r;
		int want_time = !have_clock && sl->anchored; /* one slot's time: the clock's */
		if (mpxkit__perf_page_read(sl->page, sl->pmc, want_time, &r) !=
		    MPXKIT__PAGE_COUNTER)
			return -1;
		values[i] = r.value;
		if (!have_clock && sl->anchored && r.timed) {
			*clock_ns = (uint64_t)((int64_t)r.time_enabled + sl->anchor);
			have_clock = 1;
		}
	}
	return have_clock ? 0 : -1;
}

/* Each listed slot's page, when it is on a counter with carried times: its enabled time now. */
static void page_times(perf_source *ps, const size_t *slots, size_t n, uint64_t *enabled,
		       unsigned char *ok)
{
	for (size_t i = 0; i < n; i++) {
		const perf_slot *sl = &ps->slots[slots[i]];
		mpxkit__page_reading r;
		ok[i] = sl->page != NULL &&
			mpxkit__perf_page_read(sl->page, sl->pmc, 1, &r) == MPXKIT__PAGE_COUNTER &&
			r.timed;
		enabled[i] = ok[i] ? r.time_enabled : 0;
	}
}

/*
 * Anchors the slots read by rdpmc to the clock: their enabled times just
 * before and just after the group read that gave the clock bracket the
 * instant of that read, so the anchor is off by at most half the bracket
 * (the time of one read(2) of the thread itself).
 */
static int group_with_anchors(perf_source *ps, const size_t *slots, size_t n)
{
	uint64_t before[ANCHORS_MAX], after[ANCHORS_MAX];
	unsigned char ok_before[ANCHORS_MAX], ok_after[ANCHORS_MAX];
	int rc;

	if (n > ANCHORS_MAX)
		return read_group(ps);
	page_times(ps, slots, n, before, ok_before);
	rc = read_group(ps);
	if (rc < 0)
		return rc;
	page_times(ps, slots, n, after, ok_after);
	for (size_t i = 0; i < n; i++) {
		perf_slot *sl = &ps->slots[slots[i]];
		if (!ok_before[i] || !ok_after[i] || after[i] < before[i])
			continue;
		sl->anchor = (int64_t)(ps->group[1] - (before[i] + (after[i] - before[i]) / 2));
		sl->anchor_err = (after[i] - before[i] + 1) / 2;
		sl->anchored = 1;
	}
	return 0;
}

/*
 * The counted set at one instant at the least cost: no system call when
 * every slot is on a counter that rdpmc reads; else one read(2) of the group
 * (plus one per slot opened on its own); one read(2) of the slot when there
 * is one slot and no clock to read.
 */
static int perf_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			 uint64_t *clock_ns)
{
	perf_source *ps = as_perf(s);
	int rdpmc = can_rdpmc(ps, slots, n), calls = 1, rc;

	if (rdpmc && snapshot_rdpmc(ps, slots, n, values, clock_ns) == 0)
		return 0;
	if (clock_ns == NULL && n == 1) {
		mpxkit_source_count c = {0};
		rc = read_one(&ps->slots[slots[0]], &c);
		values[0] = c.value;
		return rc < 0 ? rc : 1;
	}
	if (ps->clock_fd < 0)
		return -MPXKIT_ENOSUPP;
	rc = rdpmc ? group_with_anchors(ps, slots, n) : read_group(ps);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const perf_slot *sl = &ps->slots[slots[i]];
		mpxkit_source_count c = {0};
		if (sl->gpos != 0) {
			rc = group_value(ps, sl, &values[i]);
			continue;
		}
		rc = read_one(sl, &c);
		values[i] = c.value;
		calls++;
	}
	if (rc < 0)
		return rc;
	if (clock_ns)
		*clock_ns = ps->group[1];
	return calls;
}

static void perf_free(mpxkit_source *s)
{
	perf_source *ps = as_perf(s);
	long size = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < s->n_slots; i++) {
		if (ps->slots[i].page != NULL && !ps->slots[i].simulated)
			munmap(ps->slots[i].page, (size_t)size);
		close(ps->slots[i].fd);
	}
	if (ps->kick_fd >= 0)
		close(ps->kick_fd);
	if (ps->clock_fd >= 0)
		close(ps->clock_fd);
	free(ps->group);
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
    .read_slots = perf_read_slots,
    .snapshot = perf_snapshot,
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
	ps->kick_fd = -1;
	ps->target = target ? *target : MPXKIT_SOURCE_SELF;
	if (ps->target.pid < -1 || ps->target.cpu < -1 ||
	    (ps->target.pid == -1 && ps->target.cpu == -1)) {
		mpxkit_source_target bad = ps->target;
		free(ps);
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf source: bad target (pid %ld, cpu %d)",
				   (long)bad.pid, bad.cpu);
	}
	ps->self = ps->target.pid == 0 && !ps->target.inherit;
	*out = &ps->base;
	return 0;
}

/* ---- tests only (lib/source/perf_page.h) ---------------------------------------------- */

int mpxkit__perf_map_software(mpxkit_source *s, int on)
{
	if (s == NULL || strcmp(s->ops->kind, "perf") != 0 || s->n_slots > 0)
		return -MPXKIT_EINVAL;
	as_perf(s)->map_software = on != 0;
	return 0;
}

int mpxkit__perf_simulate(mpxkit_source *s, int slot, struct perf_event_mmap_page *page,
			  const mpxkit__pmc *pmc)
{
	perf_slot *sl;

	if (s == NULL || strcmp(s->ops->kind, "perf") != 0 || slot < 0 ||
	    (size_t)slot >= s->n_slots)
		return -MPXKIT_EINVAL;
	sl = &as_perf(s)->slots[slot];
	if (sl->page != NULL && !sl->simulated)
		munmap(sl->page, (size_t)sysconf(_SC_PAGESIZE));
	sl->page = page;
	sl->pmc = pmc;
	sl->simulated = 1;
	sl->anchored = 0;
	as_perf(s)->self = 1;
	return 0;
}

int mpxkit__perf_anchor(const mpxkit_source *s, int slot, int64_t *anchor, uint64_t *err)
{
	const perf_slot *sl;

	if (s == NULL || strcmp(s->ops->kind, "perf") != 0 || slot < 0 ||
	    (size_t)slot >= s->n_slots)
		return -MPXKIT_EINVAL;
	sl = &as_perf_const(s)->slots[slot];
	if (!sl->anchored)
		return 0;
	*anchor = sl->anchor;
	*err = sl->anchor_err;
	return 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The "perf" counter source: one perf_event_open(2) descriptor per slot, grouped under its clock.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "mpxkit/event.h"

#include "perf_page.h"
#include "source_impl.h"

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
#define PERF_GENERIC_MAX 32 /* the kernel's generic events (lib/event/generic.c has 20) */

typedef struct perf_slot {
	int fd;
	mpxkit_event ev; /* its name parsed, the source's domain applied (lib/event) */
	size_t part; /* its part (see "Parts"), or MPXKIT_SOURCE_NO_PART: the clock's group */
	size_t gpos; /* its entry in its group's read (1, 2, ...); 0: opened on its own */
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
	/*
	 * Its PMU's cpumask leaves this CPU out, in a set of CPU sources
	 * (target.cpu_set): the mask's CPUs count it, and here a dummy event
	 * holds its place (descriptor, group entry, part) and is switched as
	 * it would be.  The dummy counts 0 over real enabled and running times,
	 * as a CPU that never sees the event would, so the set's sum scales by
	 * every CPU's time, as its clock does (0 ns there would double the
	 * estimate on two CPUs).
	 */
	int elsewhere;
	int simulated;	     /* tests: a page that mmap did not give */
	int forced_pmu;	     /* tests: taken as an event that takes a counter of this PMU; or -1 */
} perf_slot;

/*
 * Parts (mpxkit_source_partition): each part's slots are the members of a
 * perf group of their own, led by a dummy event that is enabled and disabled
 * for them all, the members enabled from the start: a disabled leader keeps
 * its whole group off, so one ioctl(2) switches a part on or off, at one
 * instant and at once whatever its events' PMUs (no kick: the leader's
 * enable reschedules the leader's own PMU context, where its group lives),
 * and one read(2) of the leader gives every member's count and the part's
 * times, which are each member's own (a member counts exactly while its
 * enabled leader is on).
 *
 * The clock of a part.  Its leader's enabled time grows with the target's
 * context time while the part is on, as the clock does always, so while the
 * part stays on the clock is its enabled time plus a constant, the anchor; a
 * snapshot of the part alone then gives the clock too, in the same read(2).
 * The anchor is taken at the switch that enables the part (switch_part,
 * anchor_part); without one (a part enabled otherwise), snapshots read the
 * clock's group too.
 */
typedef struct perf_part {
	int fd;		 /* the leader */
	size_t n;	 /* its members */
	uint64_t *group; /* its group read: nr, enabled, running, (value, id) per entry */
	int off_read;	 /* group holds a read taken while the part was off, since then off */
	int anchored;
	int64_t anchor; /* the clock minus the part's enabled time, while it stays on */
} perf_part;

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
	size_t kick_gpos; /* its entry in the clock's group */
	perf_part *parts; /* see "Parts"; NULL until mpxkit_source_partition */
	size_t n_parts;
	int self; /* counts the opening thread alone (pid 0, no inherit): rdpmc may read it */
	pthread_t owner; /* that thread, once a slot is added */
	pid_t owner_tid; /* and its id */
	int stat_fd;	 /* a target thread's /proc stat, for its CPU: -1 not opened yet, -2 none */
	unsigned stat_scans; /* calls since a look for a running thread (follow_running) */
	int map_software; /* tests: map software events' pages too (they are never on a counter) */
	int from_exec;	  /* the slots start counting at the target's exec (enable_on_exec) */
	mpxkit_event_catalog *generic; /* the generic events, for the list */
	size_t n_avail;
	const char *avail[PERF_GENERIC_MAX]; /* those that opened when probed */
} perf_source;

static perf_source *as_perf(mpxkit_source *s)
{
	return (perf_source *)s;
}

static const perf_source *as_perf_const(const mpxkit_source *s)
{
	return (const perf_source *)s;
}

static int open_event(const perf_source *ps, const mpxkit_event *ev, int group_fd,
		      uint64_t read_format, int *fd, mpxkit_diag *diag)
{
	struct perf_event_attr attr = ev->attr;
	long rc;

	if (ev->per_cpu && ps->target.pid != -1)
		return mpxkit_event_per_task_error(ev, diag);
	/* Outside its mask the kernel would count the mask's CPU again (RAPL, uncore). */
	if (ev->per_cpu && mpxkit_event_on_cpu(ev, ps->target.cpu) == 0)
		return mpxkit_event_cpumask_error(ev, ps->target.cpu, diag);
	attr.size = sizeof attr;
	attr.disabled = 1;
	attr.inherit = ps->target.inherit != 0;
	attr.enable_on_exec = ps->from_exec != 0;
	attr.read_format = read_format;

	rc = syscall(SYS_perf_event_open, &attr, ps->target.pid, ps->target.cpu, group_fd,
		     PERF_FLAG_FD_CLOEXEC);
	if (rc < 0 && errno == EINVAL && mpxkit_event_counts_every_mode(ev, &attr))
		rc = syscall(SYS_perf_event_open, &attr, ps->target.pid, ps->target.cpu, group_fd,
			     PERF_FLAG_FD_CLOEXEC);
	if (rc < 0)
		return mpxkit_event_open_error(ev, errno, diag);
	*fd = (int)rc;
	return 0;
}

/* A name as this source counts it: parsed, with the source's domain where the name has none. */
static int parse_event(const perf_source *ps, const char *name, mpxkit_event *ev,
		       mpxkit_diag *diag)
{
	int rc = mpxkit_event_parse(name, ev, diag);

	if (rc == 0)
		mpxkit_event_set_domain(ev, ps->target.domain);
	return rc;
}

/* The generic events that open here: what the source lists (one open each, at most 20). */
static void probe(perf_source *ps)
{
	unsigned mask = 1u << MPXKIT_EVENT_SOFTWARE | 1u << MPXKIT_EVENT_HARDWARE;
	mpxkit_event_info info;

	ps->n_avail = 0;
	ps->probed = 1;
	if (mpxkit_event_catalog_open(&ps->generic, mask, NULL) < 0)
		return;
	for (size_t i = 0; ps->n_avail < PERF_GENERIC_MAX &&
			   mpxkit_event_catalog_get(ps->generic, i, &info) == 0;
	     i++) {
		mpxkit_event ev;
		int fd = -1;
		if (parse_event(ps, info.name, &ev, NULL) == 0 &&
		    open_event(ps, &ev, -1, MEMBER_FORMAT, &fd, NULL) == 0) {
			close(fd);
			ps->avail[ps->n_avail++] = info.name;
		}
	}
}

static int perf_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	perf_source *ps = as_perf(s);
	mpxkit_event_info info;

	if (!ps->probed)
		probe(ps);
	if (i >= ps->n_avail)
		return -MPXKIT_ENOENT;
	for (size_t k = 0; mpxkit_event_catalog_get(ps->generic, k, &info) == 0; k++) {
		if (info.name != ps->avail[i])
			continue;
		out->name = info.name;
		out->description = info.description;
		out->unit = info.unit;
		return 0;
	}
	return -MPXKIT_ENOENT;
}

/*
 * The clock: a dummy event counts nothing, but its enabled time runs as the
 * slots' would, gaps included.  It stays enabled, and it leads the slots'
 * group, so it is opened before the first slot: pid 0 then means the same
 * thread for both.
 */
static void dummy_event(const perf_source *ps, mpxkit_event *ev)
{
	memset(ev, 0, sizeof *ev);
	snprintf(ev->name, sizeof ev->name, "perf::DUMMY");
	ev->kind = MPXKIT_EVENT_SOFTWARE;
	ev->attr.type = PERF_TYPE_SOFTWARE;
	ev->attr.config = PERF_COUNT_SW_DUMMY;
	ev->scale = 1;
	mpxkit_event_set_domain(ev, ps->target.domain);
}

static int open_clock(perf_source *ps)
{
	mpxkit_event dummy;
	int fd;

	if (ps->group == NULL) /* nr, enabled, running, the leader's entry */
		ps->group = malloc(5 * sizeof *ps->group);
	if (ps->group == NULL)
		return -MPXKIT_ENOMEM;
	dummy_event(ps, &dummy);
	if (open_event(ps, &dummy, -1, LEADER_FORMAT, &fd, NULL) < 0)
		return -MPXKIT_ENOSUPP;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		close(fd);
		return -MPXKIT_ENOSUPP;
	}
	ps->clock_fd = fd;
	return 0;
}

/* The core PMU's events, which rdpmc can read: generic hardware, cache, raw (the cpu PMU's). */
static int on_core_pmu(const mpxkit_event *ev)
{
	return ev->attr.type == PERF_TYPE_HARDWARE || ev->attr.type == PERF_TYPE_HW_CACHE ||
	       ev->attr.type == PERF_TYPE_RAW;
}

/*
 * Events whose PMU is not the dummy's (see "The kick"): TASK-CLOCK and
 * CPU-CLOCK, tracepoints, and the PMUs of sysfs besides the core PMU (msr).
 * The core PMU's members move the group into its context, where their own
 * enable reschedules it.  Seen here: a tracepoint in the dummy's group
 * counted 0 of 321 write(2) calls without the kick (ctests/test_component).
 */
static int needs_kick(const mpxkit_event *ev)
{
	if (ev->attr.type == PERF_TYPE_SOFTWARE)
		return ev->attr.config == PERF_COUNT_SW_TASK_CLOCK ||
		       ev->attr.config == PERF_COUNT_SW_CPU_CLOCK;
	return !on_core_pmu(ev);
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
static int join_group(perf_source *ps, const mpxkit_event *ev, int *fd, uint64_t *id)
{
	if (ps->clock_fd < 0 || open_event(ps, ev, ps->clock_fd, MEMBER_FORMAT, fd, NULL) < 0)
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
	mpxkit_event dummy;
	const mpxkit_event *ev = sl->elsewhere ? &dummy : &sl->ev;
	uint64_t kick_id;

	sl->gpos = 0;
	dummy_event(ps, &dummy);
	if (needs_kick(ev) && ps->kick_fd < 0) {
		if (join_group(ps, &dummy, &ps->kick_fd, &kick_id) < 0)
			ps->kick_fd = -1;
		else
			ps->kick_gpos = ps->n_members;
	}
	if ((!needs_kick(ev) || ps->kick_fd >= 0) && join_group(ps, ev, &sl->fd, &sl->id) == 0) {
		sl->gpos = ps->n_members;
		return 0;
	}
	return open_event(ps, ev, -1, MEMBER_FORMAT, &sl->fd, diag);
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
	if (!ps->self || sl->pmc == NULL || size <= 0 || sl->elsewhere ||
	    (!on_core_pmu(&sl->ev) && !ps->map_software))
		return;
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, sl->fd, 0);
	if (p != MAP_FAILED)
		sl->page = p;
}

/* Whether ev is counted by other CPUs of the set this source is one of (see perf_slot's elsewhere). */
static int counted_elsewhere(const perf_source *ps, const mpxkit_event *ev)
{
	return ps->target.cpu_set && ps->target.pid == -1 && ev->per_cpu &&
	       mpxkit_event_on_cpu(ev, ps->target.cpu) == 0;
}

static int perf_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	perf_source *ps = as_perf(s);
	mpxkit_event ev;
	perf_slot *sl;
	int rc = parse_event(ps, name, &ev, diag);

	if (rc < 0)
		return rc;
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
		ps->owner_tid = (pid_t)syscall(SYS_gettid);
	}
	sl = &ps->slots[s->n_slots];
	memset(sl, 0, sizeof *sl);
	sl->ev = ev;
	sl->part = MPXKIT_SOURCE_NO_PART;
	sl->forced_pmu = -1;
	sl->elsewhere = counted_elsewhere(ps, &ev);
	rc = open_slot(ps, sl, diag);
	if (rc < 0)
		return rc;
	map_page(ps, sl);
	return (int)s->n_slots++;
}

static const char *perf_slot_name(const mpxkit_source *s, int slot)
{
	return as_perf_const(s)->slots[slot].ev.name;
}

/*
 * One ioctl on part p's leader: the whole part switches, and its anchor and
 * its slots' go with it (see slots_ioctl).
 */
static int part_ioctl(perf_source *ps, size_t p, unsigned long request)
{
	perf_part *pt = &ps->parts[p];

	pt->anchored = 0;
	pt->off_read = 0;
	for (size_t i = 0; i < ps->base.n_slots; i++)
		if (ps->slots[i].part == p)
			ps->slots[i].anchored = 0;
	return ioctl(pt->fd, request, 0) != 0 ? mpxkit_fail_sys(NULL, "ioctl") : 0;
}

/*
 * One ioctl on one slot or on each; the first failure wins but every slot is
 * tried.  A slot enabled or disabled loses its anchor: its enabled time
 * stops or starts while the clock runs on.  A slot of a part is enabled and
 * disabled with its part, once however many of its slots are asked; reset
 * on its own.
 */
static int slots_ioctl(perf_source *ps, int slot, unsigned long request)
{
	size_t first = slot == MPXKIT_SOURCE_ALL ? 0 : (size_t)slot;
	size_t end = slot == MPXKIT_SOURCE_ALL ? ps->base.n_slots : first + 1;
	int toggles = request != PERF_EVENT_IOC_RESET, rc = 0;

	if (toggles && ps->parts && slot == MPXKIT_SOURCE_ALL)
		for (size_t p = 0; p < ps->n_parts; p++) {
			int r = part_ioctl(ps, p, request);
			rc = rc ? rc : r;
		}
	for (size_t i = first; i < end; i++) {
		perf_slot *sl = &ps->slots[i];
		if (toggles)
			sl->anchored = 0;
		if (toggles && sl->part != MPXKIT_SOURCE_NO_PART) {
			int r = slot == MPXKIT_SOURCE_ALL ? 0 : part_ioctl(ps, sl->part, request);
			rc = rc ? rc : r;
			continue;
		}
		if (ioctl(sl->fd, request, 0) != 0 && rc == 0)
			rc = mpxkit_fail_sys(NULL, "ioctl");
		if (request == PERF_EVENT_IOC_ENABLE && sl->gpos != 0 &&
		    !sl->elsewhere && needs_kick(&sl->ev) && /* its stand-in is the leader's PMU's */
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

/* One read(2) of a leader of `members` members into buf: its times and every count, at one instant.
 */
/*
 * Reads of an inherited group: while a child task's copy of the group is
 * being torn down at its exit, the kernel sees the parent's and the child's
 * groups differ for a moment and fails the read with ECHILD
 * (__perf_read_group_add).  Nothing is lost: the child's counts go to the
 * parent when it is gone, so the read is made again.  Programs that start
 * and reap many children (make, cmake, servers) met it within seconds.
 * The teardown is the exiting task's work, and on a loaded machine that
 * task may wait for a CPU for milliseconds: a retry that spins would hold
 * the CPU it needs, so after a few quick tries the reader sleeps between
 * tries, up to a deadline far past any preemption (a thousand spins, about
 * 1 ms, failed under ASan beside stress-ng --cpu 2).
 */
#define GROUP_READ_SPINS 16
#define GROUP_READ_NAP_NS 100000		 /* 0.1 ms */
#define GROUP_READ_DEADLINE_NS 2000000000ull /* 2 s */

static uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Whether a group read failed with errno may be made again now; it may sleep first. */
static int group_read_again(int tries, uint64_t *deadline)
{
	const struct timespec nap = {0, GROUP_READ_NAP_NS};

	if (errno == EINTR)
		return 1;
	if (errno != ECHILD)
		return 0;
	if (tries < GROUP_READ_SPINS)
		return 1;
	if (*deadline == 0)
		*deadline = monotonic_ns() + GROUP_READ_DEADLINE_NS;
	else if (monotonic_ns() > *deadline)
		return 0;
	nanosleep(&nap, NULL);
	return 1;
}

static int read_leader(int fd, uint64_t *buf, size_t members)
{
	size_t len = (3 + 2 * (members + 1)) * sizeof *buf;
	uint64_t deadline = 0;
	ssize_t n;
	int tries = 0;

	while ((n = read(fd, buf, len)) < 0 && group_read_again(tries++, &deadline))
		;
	if (n < 0)
		return mpxkit_fail_sys(NULL, "read");
	if ((size_t)n != len || buf[0] != members + 1)
		return -MPXKIT_EIO;
	return 0;
}

/* The clock's group: the clock's times and its members' counts. */
static int read_group(perf_source *ps)
{
	return read_leader(ps->clock_fd, ps->group, ps->n_members);
}

static int read_part(perf_part *pt)
{
	return read_leader(pt->fd, pt->group, pt->n);
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

/* A member's count in the read just made of its group (its part's or the clock's), checked by id.
 */
static int group_value(const perf_source *ps, const perf_slot *sl, uint64_t *value)
{
	const uint64_t *buf =
	    sl->part != MPXKIT_SOURCE_NO_PART ? ps->parts[sl->part].group : ps->group;
	const uint64_t *entry = buf + 3 + 2 * sl->gpos;

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
 * The read that gives the clock: the part's own read where the part is
 * anchored ("The clock of a part"), else the clock's group.
 */
static int read_clock_group(perf_source *ps, perf_part *pt, uint64_t *clock)
{
	int rc;

	if (pt && pt->anchored) {
		rc = read_part(pt);
		*clock = (uint64_t)((int64_t)pt->group[1] + pt->anchor);
		return rc;
	}
	rc = read_group(ps);
	*clock = ps->group[1];
	return rc;
}

/*
 * Anchors the slots read by rdpmc to the clock: their enabled times just
 * before and just after the group read that gave the clock (read_clock_group,
 * of part pt or NULL) bracket the instant of that read, so the anchor is off
 * by at most half the bracket (the time of one read(2) of the thread itself).
 */
static int group_with_anchors(perf_source *ps, perf_part *pt, const size_t *slots, size_t n,
			      uint64_t *clock)
{
	uint64_t before[ANCHORS_MAX], after[ANCHORS_MAX];
	unsigned char ok_before[ANCHORS_MAX], ok_after[ANCHORS_MAX];
	int rc;

	if (n > ANCHORS_MAX)
		return read_clock_group(ps, pt, clock);
	page_times(ps, slots, n, before, ok_before);
	rc = read_clock_group(ps, pt, clock);
	if (rc < 0)
		return rc;
	page_times(ps, slots, n, after, ok_after);
	for (size_t i = 0; i < n; i++) {
		perf_slot *sl = &ps->slots[slots[i]];
		if (!ok_before[i] || !ok_after[i] || after[i] < before[i])
			continue;
		sl->anchor = (int64_t)(*clock - (before[i] + (after[i] - before[i]) / 2));
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
/* The part all the listed slots belong to, or MPXKIT_SOURCE_NO_PART (none, or several). */
static size_t common_part(const perf_source *ps, const size_t *slots, size_t n)
{
	size_t p = n ? ps->slots[slots[0]].part : MPXKIT_SOURCE_NO_PART;

	for (size_t i = 1; i < n && p != MPXKIT_SOURCE_NO_PART; i++)
		if (ps->slots[slots[i]].part != p)
			p = MPXKIT_SOURCE_NO_PART;
	return p;
}

/*
 * The slots of one part: one read(2) of it, and the clock from its anchor
 * ("The clock of a part"), or from one more read(2), of the clock's group,
 * without one; with rdpmc, the slots anchored to that clock.
 */
static int snapshot_part(perf_source *ps, perf_part *pt, const size_t *slots, size_t n,
			 uint64_t *values, uint64_t *clock_ns, int rdpmc)
{
	int anchored = pt->anchored, calls = 1, rc;
	uint64_t clock = 0;

	if (clock_ns == NULL && !rdpmc)
		rc = read_part(pt);
	else
		rc = rdpmc ? group_with_anchors(ps, pt, slots, n, &clock)
			   : read_clock_group(ps, pt, &clock);
	if (rc == 0 && !anchored && (clock_ns != NULL || rdpmc)) {
		rc = read_part(pt); /* the read above was the clock's group */
		calls++;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = group_value(ps, &ps->slots[slots[i]], &values[i]);
	if (rc < 0)
		return rc;
	if (clock_ns)
		*clock_ns = clock;
	return calls;
}

static int perf_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			 uint64_t *clock_ns)
{
	perf_source *ps = as_perf(s);
	int rdpmc = can_rdpmc(ps, slots, n), calls = 1, rc;
	size_t part = common_part(ps, slots, n);
	uint64_t clock = 0;

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
	if (part != MPXKIT_SOURCE_NO_PART)
		return snapshot_part(ps, &ps->parts[part], slots, n, values, clock_ns, rdpmc);
	rc = rdpmc ? group_with_anchors(ps, NULL, slots, n, &clock) : read_group(ps);
	/* Slots of several parts (no caller of the engine's): each part's read, when it comes. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		const perf_slot *sl = &ps->slots[slots[i]];
		mpxkit_source_count c = {0};
		if (sl->part != MPXKIT_SOURCE_NO_PART) {
			size_t k = 0;
			while (k < i && ps->slots[slots[k]].part != sl->part)
				k++;
			if (k == i && (rc = read_part(&ps->parts[sl->part])) == 0)
				calls++;
		}
		if (rc == 0 && sl->gpos != 0) {
			rc = group_value(ps, sl, &values[i]);
			continue;
		}
		if (rc == 0)
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

/* ---- parts (see "Parts") --------------------------------------------------------------- */

static void close_new(perf_part *parts, size_t n_parts, int *fds, size_t n)
{
	for (size_t i = 0; fds && i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (size_t p = 0; parts && p < n_parts; p++) {
		if (parts[p].fd >= 0)
			close(parts[p].fd);
		free(parts[p].group);
	}
}

/* Opens slot i's event as a member of its part's leader, enabled: it counts when the leader does.
 */
static int open_member(perf_source *ps, size_t i, perf_part *pt, int *fd, uint64_t *id,
		       mpxkit_diag *diag)
{
	mpxkit_event dummy;
	int rc;

	dummy_event(ps, &dummy);
	rc = open_event(ps, ps->slots[i].elsewhere ? &dummy : &ps->slots[i].ev, pt->fd,
			MEMBER_FORMAT, fd, diag);
	if (rc < 0)
		return rc;
	if (ioctl(*fd, PERF_EVENT_IOC_ENABLE, 0) != 0 || ioctl(*fd, PERF_EVENT_IOC_ID, id) != 0)
		return mpxkit_fail_sys(diag, "%s: ioctl", ps->slots[i].ev.name);
	return 0;
}

/*
 * The clock's group after some of its members left (the slots now in
 * parts): the others, the kicker and the slots left out of every part, keep
 * their order in it and close up.
 */
static void renumber_clock_group(perf_source *ps, size_t *rank)
{
	size_t n = ps->base.n_slots, kick = ps->kick_fd >= 0 ? ps->kick_gpos : 0, members = 0;

	for (size_t i = 0; i < n; i++) {
		const perf_slot *sl = &ps->slots[i];
		rank[i] = 0;
		if (sl->part != MPXKIT_SOURCE_NO_PART || sl->gpos == 0)
			continue;
		rank[i] = 1 + (kick != 0 && kick < sl->gpos);
		for (size_t k = 0; k < n; k++)
			rank[i] += ps->slots[k].part == MPXKIT_SOURCE_NO_PART &&
				   ps->slots[k].gpos != 0 && ps->slots[k].gpos < sl->gpos;
		members++;
	}
	if (kick) {
		size_t before = 0;
		for (size_t k = 0; k < n; k++)
			before += ps->slots[k].part == MPXKIT_SOURCE_NO_PART &&
				  ps->slots[k].gpos != 0 && ps->slots[k].gpos < kick;
		ps->kick_gpos = before + 1;
		members++;
	}
	for (size_t i = 0; i < n; i++)
		if (rank[i])
			ps->slots[i].gpos = rank[i];
	ps->n_members = members;
}

static int perf_partition(mpxkit_source *s, const size_t *part, size_t n_parts, mpxkit_diag *diag)
{
	perf_source *ps = as_perf(s);
	size_t n = s->n_slots, *old_gpos = NULL; /* scratch for the renumbering */
	perf_part *parts = calloc(n_parts, sizeof *parts);
	int *fds = malloc(n * sizeof *fds);
	uint64_t *ids = malloc(n * sizeof *ids);
	size_t *gpos = calloc(n, sizeof *gpos);
	mpxkit_event dummy;
	int rc = 0;

	dummy_event(ps, &dummy);
	old_gpos = calloc(n, sizeof *old_gpos);
	if (parts == NULL || fds == NULL || ids == NULL || gpos == NULL || old_gpos == NULL) {
		rc = mpxkit_fail(diag, MPXKIT_ENOMEM, "perf: out of memory for parts");
		goto out;
	}
	for (size_t p = 0; p < n_parts; p++)
		parts[p].fd = -1;
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t i = 0; i < n; i++)
		if (part[i] != MPXKIT_SOURCE_NO_PART)
			gpos[i] = ++parts[part[i]].n;
	for (size_t p = 0; p < n_parts && rc == 0; p++) {
		parts[p].group = malloc((3 + 2 * (parts[p].n + 1)) * sizeof *parts[p].group);
		rc = parts[p].group
			 ? open_event(ps, &dummy, -1, LEADER_FORMAT, &parts[p].fd, diag)
			 : mpxkit_fail(diag, MPXKIT_ENOMEM, "perf: out of memory for parts");
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (part[i] != MPXKIT_SOURCE_NO_PART)
			rc = open_member(ps, i, &parts[part[i]], &fds[i], &ids[i], diag);
	if (rc < 0)
		goto out;
	/* Every new descriptor is open: the slots move, and leave the clock's group. */
	for (size_t i = 0; i < n; i++) {
		perf_slot *sl = &ps->slots[i];
		if (part[i] == MPXKIT_SOURCE_NO_PART)
			continue;
		close(sl->fd);
		sl->fd = fds[i];
		fds[i] = -1;
		sl->id = ids[i];
		sl->gpos = gpos[i];
		sl->part = part[i];
		sl->anchored = 0;
		if (sl->simulated) /* tests: the simulated page stands for the new descriptor's */
			continue;
		if (sl->page != NULL)
			munmap(sl->page, (size_t)sysconf(_SC_PAGESIZE));
		map_page(ps, sl);
	}
	renumber_clock_group(ps, old_gpos);
	ps->parts = parts;
	ps->n_parts = n_parts;
	parts = NULL;
out:
	close_new(parts, n_parts, fds, n);
	free(parts);
	free(fds);
	free(ids);
	free(gpos);
	free(old_gpos);
	return rc;
}

/*
 * The anchor of part pt just enabled, from the clock read after the enable
 * and its enabled time read after that: the part's enabled time at the
 * clock's read lies between e_before (read while it was off, so also its
 * time at the enable) and that, so the anchor is exact when the two agree
 * (no target time passed: beside the target, or a target that waits), else
 * off by at most half their difference (the target ran meanwhile, on
 * another CPU, or the caller itself).
 */
static int anchor_part(perf_part *pt, uint64_t e_before, uint64_t clock)
{
	int rc = read_part(pt);
	uint64_t e_after = pt->group[1];

	if (rc == 0 && e_after >= e_before) {
		pt->anchor = (int64_t)(clock - (e_before + (e_after - e_before) / 2));
		pt->anchored = 1;
	}
	return rc;
}

static int perf_switch_part(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
			    uint64_t *clock_ns)
{
	perf_source *ps = as_perf(s);
	perf_part *pf = from != MPXKIT_SOURCE_NO_PART ? &ps->parts[from] : NULL;
	perf_part *pt = to != MPXKIT_SOURCE_NO_PART && to != from ? &ps->parts[to] : NULL;
	uint64_t e_before = 0;
	int rc = 0;

	if (pf && from != to)
		rc = part_ioctl(ps, from, PERF_EVENT_IOC_DISABLE);
	if (pf && rc == 0 && (rc = read_part(pf)) == 0) {
		pf->off_read = from != to;
		for (size_t i = 0; i < s->n_slots && rc == 0; i++) {
			const perf_slot *sl = &ps->slots[i];
			if (sl->part != from)
				continue;
			rc = group_value(ps, sl, &counts[i].value);
			counts[i].time_enabled = pf->group[1];
			counts[i].time_running = pf->group[2];
		}
	}
	if (pt && rc == 0 && !pt->off_read && (rc = read_part(pt)) == 0)
		pt->off_read = 1;
	if (pt && rc == 0) {
		e_before = pt->group[1];
		rc = part_ioctl(ps, to, PERF_EVENT_IOC_ENABLE);
	}
	if (rc == 0 && (rc = read_group(ps)) == 0)
		*clock_ns = ps->group[1];
	if (pt && rc == 0)
		rc = anchor_part(pt, e_before, *clock_ns);
	return rc;
}

/* A thread's state and CPU from its /proc stat: fields 3 and 39, counted after the command's ')'.
 */
static int stat_read(int fd, char *state)
{
	char buf[1024];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	const char *p;
	int field = 2;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	*state = p[1] == ' ' ? p[2] : '?';
	for (; *p; p++)
		if (*p == ' ' && ++field == 39)
			return atoi(p + 1);
	return -1;
}

static int open_stat(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/stat", (long)pid, (long)tid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * A process counted with the threads it starts (inherit): the thread to
 * follow is the one followed while it runs (state R), else the first of its
 * threads that does, looked for at most every 16th call (so a process whose
 * threads all wait costs one pread(2) a call): its main thread may only wait
 * for its workers.
 */
static int follow_running(perf_source *ps, int cpu, char state)
{
	char path[64];
	struct dirent *e;
	DIR *dir;

	if (state == 'R' || ps->stat_scans++ % 16 != 0)
		return cpu;
	snprintf(path, sizeof path, "/proc/%ld/task", (long)ps->target.pid);
	if ((dir = opendir(path)) == NULL)
		return cpu;
	while ((e = readdir(dir)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);
		int fd = tid > 0 ? open_stat(ps->target.pid, (pid_t)tid) : -1;
		char st = 0;
		int c = fd >= 0 ? stat_read(fd, &st) : -1;
		if (c >= 0 && st == 'R') {
			close(ps->stat_fd);
			ps->stat_fd = fd;
			ps->stat_scans = 0;
			cpu = c;
			break;
		}
		if (fd >= 0)
			close(fd);
	}
	closedir(dir);
	return cpu;
}

static int perf_target_cpu(mpxkit_source *s)
{
	perf_source *ps = as_perf(s);
	pid_t pid = ps->target.pid, tid = pid;
	char state = 0;
	int cpu;

	if (ps->target.cpu >= 0)
		return ps->target.cpu;
	if (pid == 0) { /* the thread that added the first slot */
		pid = getpid();
		tid = ps->owner_tid;
	}
	if (ps->stat_fd == -1 && tid > 0 && (ps->stat_fd = open_stat(pid, tid)) < 0)
		ps->stat_fd = -2;
	if (ps->stat_fd < 0)
		return -1;
	cpu = stat_read(ps->stat_fd, &state);
	if (cpu < 0 && ps->target.inherit && ps->target.pid > 0) {
		/* The thread followed has ended: the process's first thread again. */
		close(ps->stat_fd);
		if ((ps->stat_fd = open_stat(pid, pid)) < 0) {
			ps->stat_fd = -2;
			return -1;
		}
		cpu = stat_read(ps->stat_fd, &state);
	}
	if (cpu >= 0 && ps->target.inherit && ps->target.pid > 0)
		cpu = follow_running(ps, cpu, state);
	return cpu;
}

static int perf_counter_pmu(const mpxkit_source *s, size_t slot)
{
	const perf_slot *sl = &as_perf_const(s)->slots[slot];

	return sl->forced_pmu >= 0 ? sl->forced_pmu : mpxkit_event_counter_pmu(&sl->ev);
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
	if (ps->stat_fd >= 0)
		close(ps->stat_fd);
	for (size_t p = 0; p < ps->n_parts; p++) {
		close(ps->parts[p].fd);
		free(ps->parts[p].group);
	}
	free(ps->parts);
	free(ps->group);
	free(ps->slots);
	mpxkit_event_catalog_free(ps->generic);
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
    .target_cpu = perf_target_cpu,
    .partition = perf_partition,
    .switch_part = perf_switch_part,
    .counter_pmu = perf_counter_pmu,
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
	ps->stat_fd = -1;
	ps->target = target ? *target : MPXKIT_SOURCE_SELF;
	if (ps->target.pid < -1 || ps->target.cpu < -1 ||
	    (ps->target.pid == -1 && ps->target.cpu == -1)) {
		mpxkit_source_target bad = ps->target;
		free(ps);
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf source: bad target (pid %ld, cpu %d)",
				   (long)bad.pid, bad.cpu);
	}
	ps->self = ps->target.pid == 0 && !ps->target.inherit;
	if (ps->target.domain & ~MPXKIT_DOM_ALL) {
		unsigned bad = ps->target.domain;
		free(ps);
		return mpxkit_fail(diag, MPXKIT_EINVAL, "perf source: bad domain 0x%x", bad);
	}
	*out = &ps->base;
	return 0;
}

int mpxkit_source_perf_count_from_exec(mpxkit_source *s)
{
	if (s == NULL || strcmp(s->ops->kind, "perf") != 0)
		return -MPXKIT_ENOSUPP;
	if (s->n_slots > 0)
		return -MPXKIT_ESTATE;
	as_perf(s)->from_exec = 1;
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

int mpxkit__perf_force_counter(mpxkit_source *s, int slot, int pmu)
{
	if (s == NULL || strcmp(s->ops->kind, "perf") != 0 || slot < 0 ||
	    (size_t)slot >= s->n_slots || pmu < 0)
		return -MPXKIT_EINVAL;
	as_perf(s)->slots[slot].forced_pmu = pmu;
	return 0;
}

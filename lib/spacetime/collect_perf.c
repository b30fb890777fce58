/* SPDX-License-Identifier: BSD-3-Clause */
/* Collection on perf_event: per-CPU sampling groups read at every sample, rows per window, thread
 * and address. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "mpxkit/source.h"
#include "mpxkit/workload.h"
#include "grow.h"
#include "spacetime_impl.h"

#define MAX_GROUP  (1 + MPXKIT_PROFILE_MAX_PERF_EVENTS)
#define RING_PAGES 128 /* data pages per CPU: 512 KiB, 16 k samples of a 4-event group */
#define UNKNOWN	   "[unknown]"
#define POLL_MS	   100 /* the longest wait between two drains of the rings */

/* The sampled group as opened: the leader first. */
typedef struct group_def {
	size_t n;
	mpxkit_event ev[MAX_GROUP]; /* parsed by lib/event: doc/events.md */
	const char *name[MAX_GROUP];
	int hardware;
} group_def;

typedef struct cpu_ring {
	int fd[MAX_GROUP];
	void *base;
	size_t len;
} cpu_ring;

/* An executable mapping of a process, from PERF_RECORD_MMAP2. */
typedef struct mapping {
	uint32_t pid;
	uint64_t start, end, pgoff;
	uint32_t object; /* in the profile, NONE until an address in it was sampled */
	char *path;
} mapping;

/* A record copied out of a ring, waiting until every ring has passed its time. */
typedef struct pending {
	uint64_t time;
	size_t off, size;
	uint64_t seq;
} pending;

typedef struct prun {
	const mpxkit_profile_options *o;
	mpxkit_profile_summary *sum;
	mpxkit_diag *diag;
	mpxkit_profile_writer *w;
	group_def g;
	size_t n_cpus;
	cpu_ring *cpus;
	size_t page;
	uint64_t t0, window_ns;
	/* records */
	unsigned char *arena;
	size_t arena_len, arena_cap;
	pending *pend;
	size_t n_pend, cap_pend;
	uint64_t seq;
	unsigned char *tmp;
	size_t tmp_cap;
	/* processes and threads */
	mapping *maps;
	size_t n_maps, cap_maps;
	mpxkit__u64map prev_index; /* (tid, cpu) -> previous values */
	uint64_t *prev;
	size_t n_prev, cap_prev;
	mpxkit__u64map comm_index; /* tid -> comm */
	char (*comms)[16];
	size_t n_comms, cap_comms;
	/* addresses */
	st_symbols *syms;
	mpxkit__u64map ip_index; /* (pid, ip) -> ip entry */
	uint64_t *ip_ip;
	uint32_t *ip_pid, *ip_code;
	size_t n_ip, cap_ip;
	/* the window being filled */
	int have_window;
	uint64_t window;
	mpxkit__u64map row_index; /* (thread, code) -> row */
	uint32_t *row_thread, *row_code;
	uint64_t *row_counts;
	size_t n_rows, cap_rows;
	uint32_t *order, *codes;
	uint64_t *counts;
	size_t cap_order;
	uint32_t unknown_file;
} prun;

#define NONE UINT32_MAX

static int oom(prun *r)
{
	return mpxkit_fail(r->diag, MPXKIT_ENOMEM, "profile: out of memory");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the group ------------------------------------------------------------------------------- */

static int add_event(group_def *g, const char *name, mpxkit_diag *diag)
{
	mpxkit_event *ev = &g->ev[g->n];
	int rc;

	if (g->n == MAX_GROUP)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: at most %d events",
				   MPXKIT_PROFILE_MAX_PERF_EVENTS);
	if ((rc = mpxkit_event_parse(name, ev, diag)) < 0)
		return rc;
	/* Samples of user code: user mode, unless the name says otherwise. */
	mpxkit_event_set_domain(ev, MPXKIT_DOM_USER);
	if (ev->per_cpu)
		return mpxkit_event_per_task_error(ev, diag);
	g->name[g->n] = ev->name;
	for (size_t i = 0; i < g->n; i++)
		if (g->ev[i].attr.type == ev->attr.type && g->ev[i].attr.config == ev->attr.config &&
		    g->ev[i].attr.config1 == ev->attr.config1)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: %s named twice",
					   g->name[g->n]);
	g->hardware |= ev->attr.type == PERF_TYPE_HARDWARE || ev->attr.type == PERF_TYPE_HW_CACHE ||
		       ev->attr.type == PERF_TYPE_RAW || ev->kind == MPXKIT_EVENT_LIBPFM;
	g->n++;
	return 0;
}

/* The leader (cycles with a PMU, else cpu-clock), then the members (doc/spacetime.md). */
static int choose_group(prun *r)
{
	static const char *const sw[] = {"perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"};
	static const char *const hw[] = {"perf::INSTRUCTIONS", "perf::BRANCHES",
					 "perf::BRANCH-MISSES", "perf::CACHE-REFERENCES",
					 "perf::CACHE-MISSES"};
	int pmu = mpxkit_profile_have_pmu(), rc;
	group_def *g = &r->g;

	memset(g, 0, sizeof *g);
	if ((rc = add_event(g, pmu ? "perf::CYCLES" : "perf::CPU-CLOCK", r->diag)) < 0)
		return rc;
	if (r->o->events != NULL) {
		for (size_t i = 0; i < r->o->n_events; i++)
			if ((rc = add_event(g, r->o->events[i], r->diag)) < 0)
				return rc;
		return 0;
	}
	if (pmu && (rc = add_event(g, "perf::CPU-CLOCK", r->diag)) < 0)
		return rc;
	for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++)
		if ((rc = add_event(g, sw[i], r->diag)) < 0)
			return rc;
	for (size_t i = 0; pmu && i < sizeof hw / sizeof hw[0]; i++)
		if ((rc = add_event(g, hw[i], r->diag)) < 0)
			return rc;
	return 0;
}

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void close_cpus(prun *r)
{
	for (size_t c = 0; c < r->n_cpus; c++) {
		if (r->cpus[c].base)
			munmap(r->cpus[c].base, r->cpus[c].len);
		for (size_t i = 0; i < r->g.n; i++)
			if (r->cpus[c].fd[i] >= 0)
				close(r->cpus[c].fd[i]);
	}
	free(r->cpus);
	r->cpus = NULL;
	r->n_cpus = 0;
}

/* One group per CPU on pid: the kernel maps no ring of an inherited event that follows a task on
 * any CPU. */
static int open_cpus(prun *r, pid_t pid)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (ncpu < 1)
		ncpu = 1;
	r->cpus = calloc((size_t)ncpu, sizeof *r->cpus);
	if (r->cpus == NULL)
		return oom(r);
	for (long c = 0; c < ncpu; c++) {
		cpu_ring *ring = &r->cpus[r->n_cpus];
		for (size_t i = 0; i < MAX_GROUP; i++)
			ring->fd[i] = -1;
		for (size_t i = 0; i < r->g.n; i++) {
			struct perf_event_attr a;
			long fd;

			a = r->g.ev[i].attr;
			a.size = sizeof a;
			a.inherit = 1;
			a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
			/* Every member on the leader's clock: the kernel refuses a group of two. */
			a.use_clockid = 1;
			a.clockid = CLOCK_MONOTONIC;
			if (i == 0) {
				a.disabled = 1;
				a.enable_on_exec = 1;
				a.freq = 1;
				a.sample_freq = r->o->frequency;
				a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
						PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
						PERF_SAMPLE_READ;
				a.sample_id_all = 1;
				a.mmap = 1;
				a.mmap2 = 1;
				a.comm = 1;
				a.comm_exec = 1;
				a.task = 1;
				/*
				 * Woken when half the ring is full, not at every sample as a reader
				 * that must see each one at once would be: the poll timeout drains
				 * the rings often enough, and 4000 wakeups a second cost more than
				 * the sampling itself.
				 */
				a.watermark = 1;
				a.wakeup_watermark = (uint32_t)(RING_PAGES * r->page / 2);
			}
			if (i > 0 && a.type == PERF_TYPE_SOFTWARE &&
			    a.config == PERF_COUNT_SW_CONTEXT_SWITCHES && r->g.ev[i].domain == 0) {
				/* Switches happen in the kernel: counted there where allowed. */
				a.exclude_kernel = 0;
				fd = perf_open(&a, pid, (int)c, ring->fd[0]);
				a.exclude_kernel = 1;
				if (fd >= 0) {
					ring->fd[i] = (int)fd;
					continue;
				}
			}
			fd = perf_open(&a, pid, (int)c, i == 0 ? -1 : ring->fd[0]);
			if (fd < 0) {
				if (i == 0 && (errno == ENODEV || errno == EINVAL) && c > 0 &&
				    r->n_cpus > 0)
					break; /* an offline CPU */
				int rc = mpxkit_event_open_error(&r->g.ev[i], errno, r->diag);
				if (errno == EINVAL && i == 0)
					rc = mpxkit_fail(r->diag, MPXKIT_ENOSUPP,
							 "%s: this kernel refuses sampling with a "
							 "group read in inherited events "
							 "(PERF_SAMPLE_READ with inherit); use "
							 "--source callgrind",
							 r->g.name[0]);
				for (size_t k = 0; k < i; k++)
					close(ring->fd[k]);
				return rc;
			}
			ring->fd[i] = (int)fd;
		}
		if (ring->fd[0] < 0)
			continue;
		ring->len = (1 + RING_PAGES) * r->page;
		ring->base =
		    mmap(NULL, ring->len, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd[0], 0);
		if (ring->base == MAP_FAILED) {
			ring->base = NULL;
			r->n_cpus++;
			return mpxkit_fail_sys(r->diag, "profile: cannot map the sample buffer");
		}
		r->n_cpus++;
	}
	return 0;
}

/* ---- reading the rings ----------------------------------------------------------------------- */

/* The time of a record: samples carry it, other records in their sample_id tail. */
static uint64_t record_time(const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)h;
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size >= sizeof *h + 8 + 8 + 8)
			memcpy(&t, p + sizeof *h + 8 + 8, 8); /* after IP and TID */
	} else if (h->size >= sizeof *h + 24) {
		memcpy(&t, p + h->size - 16, 8); /* tail: TID, TIME, CPU */
	}
	return t;
}

static int drain(prun *r, cpu_ring *ring)
{
	struct perf_event_mmap_page *pg = ring->base;
	unsigned char *data = (unsigned char *)ring->base + r->page;
	uint64_t size = (uint64_t)RING_PAGES * r->page;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), tail = pg->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % size);
		for (size_t i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof h || h.size > head - tail)
			break; /* a torn record: left for the next round */
		if (mpxkit__reserve((void **)&r->arena, &r->arena_cap, r->arena_len + h.size, 1) <
			0 ||
		    mpxkit__reserve((void **)&r->pend, &r->cap_pend, r->n_pend + 1,
				    sizeof *r->pend) < 0)
			return oom(r);
		for (size_t i = 0; i < h.size; i++)
			r->arena[r->arena_len + i] = data[(off + i) % size];
		r->pend[r->n_pend].off = r->arena_len;
		r->pend[r->n_pend].size = h.size;
		r->pend[r->n_pend].seq = r->seq++;
		r->pend[r->n_pend].time =
		    record_time((const struct perf_event_header *)(r->arena + r->arena_len));
		r->n_pend++;
		r->arena_len += h.size;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return 0;
}

/* ---- processes, threads, addresses ----------------------------------------------------------- */

static void drop_maps(prun *r, uint32_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n_maps; i++) {
		if (r->maps[i].pid == pid)
			free(r->maps[i].path);
		else
			r->maps[k++] = r->maps[i];
	}
	r->n_maps = k;
}

static int add_map(prun *r, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		   const char *path)
{
	if (mpxkit__reserve((void **)&r->maps, &r->cap_maps, r->n_maps + 1, sizeof *r->maps) < 0)
		return oom(r);
	r->maps[r->n_maps] = (mapping){pid, start, start + len, pgoff, NONE, strdup(path)};
	if (r->maps[r->n_maps].path == NULL)
		return oom(r);
	r->n_maps++;
	return 0;
}

/* A forked process starts with its parent's mappings. */
static int fork_maps(prun *r, uint32_t pid, uint32_t ppid)
{
	size_t n = r->n_maps;

	for (size_t i = 0; i < n; i++)
		if (r->maps[i].pid == ppid) {
			int rc =
			    add_map(r, pid, r->maps[i].start, r->maps[i].end - r->maps[i].start,
				    r->maps[i].pgoff, r->maps[i].path);
			if (rc < 0)
				return rc;
		}
	return 0;
}

static const char *comm_of(prun *r, uint32_t tid)
{
	uint32_t v;

	return mpxkit__u64map_find(&r->comm_index, tid, &v, NULL) ? r->comms[v] : "";
}

static int set_comm(prun *r, uint32_t tid, const char *comm)
{
	uint32_t v;

	if (!mpxkit__u64map_find(&r->comm_index, tid, &v, NULL)) {
		if (mpxkit__reserve((void **)&r->comms, &r->cap_comms, r->n_comms + 1,
				    sizeof *r->comms) < 0 ||
		    mpxkit__u64map_add(&r->comm_index, tid, (uint32_t)r->n_comms) < 0)
			return oom(r);
		v = (uint32_t)r->n_comms++;
	}
	snprintf(r->comms[v], sizeof r->comms[v], "%s", comm);
	return 0;
}

/* The code id of a sampled address of a process: its mapping, then libdw. */
static int code_of(prun *r, uint32_t pid, uint64_t ip, uint32_t *code)
{
	uint64_t key = mpxkit__hash_u64(ip) ^ mpxkit__hash_u64((uint64_t)pid << 1 | 1);
	mapping *m = NULL;
	st_symbol sym;
	uint32_t object, function, file, v;
	size_t cursor;
	int rc;

	for (int found = mpxkit__u64map_find(&r->ip_index, key, &v, &cursor); found;
	     found = mpxkit__u64map_find_next(&r->ip_index, key, &v, &cursor))
		if (r->ip_ip[v] == ip && r->ip_pid[v] == pid) {
			*code = r->ip_code[v];
			return 0;
		}
	/* The latest mapping holding it: a later mmap over the same range replaces earlier ones. */
	for (size_t i = r->n_maps; i-- > 0;)
		if (r->maps[i].pid == pid && ip >= r->maps[i].start && ip < r->maps[i].end) {
			m = &r->maps[i];
			break;
		}
	memset(&sym, 0, sizeof sym);
	sym.address = ip;
	if (m != NULL && m->path[0] == '/') {
		if (st_symbols_lookup(r->syms, m->path, ip - m->start + m->pgoff, &sym) < 0)
			return oom(r);
	} else if (m != NULL) {
		sym.address = ip - m->start; /* [vdso], anonymous code: offsets in the mapping */
	}
	if ((rc = mpxkit_profile_add_object(r->w, m ? m->path : UNKNOWN, &object, r->diag)) < 0)
		return rc;
	if (sym.function != NULL) {
		rc = mpxkit_profile_add_function(r->w, sym.function, object, sym.lo, sym.size,
						 &function, r->diag);
	} else {
		/*
		 * No symbol (a stripped library, the vDSO): the object is the finest unit
		 * known, one pseudo-function over all of it, named as perf names it.
		 */
		char name[256];
		const char *base = m ? strrchr(m->path, '/') : NULL;
		snprintf(name, sizeof name, "[%s]", base ? base + 1 : m ? m->path : "unknown");
		rc = mpxkit_profile_add_function(r->w, name, object, 0, UINT64_C(1) << 62,
						 &function, r->diag);
	}
	if (rc < 0)
		return rc;
	file = r->unknown_file;
	if (sym.file != NULL && (rc = mpxkit_profile_add_file(r->w, sym.file, &file, r->diag)) < 0)
		return rc;
	if ((rc = mpxkit_profile_add_code(r->w, function, file, sym.file ? sym.line : 0,
					  sym.address, code, r->diag)) < 0)
		return rc;
	size_t cap = r->cap_ip;
	if (mpxkit__reserve((void **)&r->ip_ip, &cap, r->n_ip + 1, sizeof *r->ip_ip) < 0)
		return oom(r);
	cap = r->cap_ip;
	if (mpxkit__reserve((void **)&r->ip_pid, &cap, r->n_ip + 1, sizeof *r->ip_pid) < 0)
		return oom(r);
	cap = r->cap_ip;
	if (mpxkit__reserve((void **)&r->ip_code, &cap, r->n_ip + 1, sizeof *r->ip_code) < 0)
		return oom(r);
	r->cap_ip = cap;
	r->ip_ip[r->n_ip] = ip;
	r->ip_pid[r->n_ip] = pid;
	r->ip_code[r->n_ip] = *code;
	if (mpxkit__u64map_add(&r->ip_index, key, (uint32_t)r->n_ip++) < 0)
		return oom(r);
	return 0;
}

/* ---- windows --------------------------------------------------------------------------------- */

static int cmp_row(const void *a, const void *b, void *arg)
{
	const prun *r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (r->row_thread[x] != r->row_thread[y])
		return r->row_thread[x] < r->row_thread[y] ? -1 : 1;
	return r->row_code[x] < r->row_code[y] ? -1 : r->row_code[x] > r->row_code[y];
}

/* The window's rows as one block per thread. */
static int flush_window(prun *r)
{
	size_t ne = r->g.n + 1, cap = r->cap_order;
	int rc = 0;

	if (!r->have_window || r->n_rows == 0)
		return 0;
	if (mpxkit__reserve((void **)&r->order, &cap, r->n_rows, sizeof *r->order) < 0)
		return oom(r);
	cap = r->cap_order;
	if (mpxkit__reserve((void **)&r->codes, &cap, r->n_rows, sizeof *r->codes) < 0)
		return oom(r);
	cap = r->cap_order;
	if (mpxkit__reserve((void **)&r->counts, &cap, r->n_rows, ne * sizeof *r->counts) < 0)
		return oom(r);
	r->cap_order = cap;
	for (size_t i = 0; i < r->n_rows; i++)
		r->order[i] = (uint32_t)i;
	qsort_r(r->order, r->n_rows, sizeof *r->order, cmp_row, r);
	for (size_t i = 0; i < r->n_rows && rc == 0;) {
		uint32_t thread = r->row_thread[r->order[i]];
		size_t j = i;
		for (; j < r->n_rows && r->row_thread[r->order[j]] == thread; j++) {
			r->codes[j - i] = r->row_code[r->order[j]];
			memcpy(r->counts + (j - i) * ne, r->row_counts + (size_t)r->order[j] * ne,
			       ne * sizeof *r->counts);
		}
		mpxkit_profile_block b = {r->window,	r->window * r->window_ns,
					  r->window_ns, thread,
					  j - i,	r->codes,
					  r->counts,	0,
					  NULL};
		rc = mpxkit_profile_put_block(r->w, &b, r->diag);
		r->sum->rows += j - i;
		i = j;
	}
	r->sum->windows++;
	r->n_rows = 0;
	mpxkit__u64map_clear(&r->row_index);
	return rc;
}

static int sample(prun *r, const unsigned char *p, size_t size)
{
	size_t ne = r->g.n + 1, need = 8 + 8 + 8 + 8 + 8 + 16 * r->g.n;
	uint64_t ip, time, nr, values[MAX_GROUP], key, *prev, *row;
	uint32_t pid, tid, cpu, code, thread, v;
	int rc;

	if (size < need)
		return 0; /* not the layout asked for: skip it rather than misread it */
	memcpy(&ip, p, 8);
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	memcpy(&time, p + 16, 8);
	memcpy(&cpu, p + 24, 4);
	memcpy(&nr, p + 32, 8);
	if (nr != r->g.n)
		return 0;
	for (size_t i = 0; i < r->g.n; i++)
		memcpy(&values[i], p + 40 + 16 * i, 8);
	r->sum->samples++;
	/* The deltas: an inherited event counts per thread and CPU, from 0. */
	key = (uint64_t)tid << 16 | (cpu & 0xffff);
	if (!mpxkit__u64map_find(&r->prev_index, key, &v, NULL)) {
		if (mpxkit__reserve((void **)&r->prev, &r->cap_prev, (r->n_prev + 1) * r->g.n,
				    sizeof *r->prev) < 0 ||
		    mpxkit__u64map_add(&r->prev_index, key, (uint32_t)r->n_prev) < 0)
			return oom(r);
		v = (uint32_t)r->n_prev++;
		memset(r->prev + (size_t)v * r->g.n, 0, r->g.n * sizeof *r->prev);
	}
	prev = r->prev + (size_t)v * r->g.n;
	/* The window of the sample: before the start counts as the first. */
	uint64_t window = time > r->t0 ? (time - r->t0) / r->window_ns : 0;
	if (r->have_window && window < r->window)
		window = r->window; /* a late record of a past window joins the current one */
	if (!r->have_window || window != r->window) {
		if ((rc = flush_window(r)) < 0)
			return rc;
		r->have_window = 1;
		r->window = window;
	}
	if ((rc = code_of(r, pid, ip, &code)) < 0 ||
	    (rc = mpxkit_profile_add_thread(r->w, tid, comm_of(r, tid), &thread, r->diag)) < 0)
		return rc;
	if (thread + 1 > r->sum->threads)
		r->sum->threads = thread + 1;
	key = (uint64_t)thread << 32 | code;
	if (!mpxkit__u64map_find(&r->row_index, key, &v, NULL)) {
		size_t cap = r->cap_rows;
		if (mpxkit__reserve((void **)&r->row_thread, &cap, r->n_rows + 1,
				    sizeof *r->row_thread) < 0)
			return oom(r);
		cap = r->cap_rows;
		if (mpxkit__reserve((void **)&r->row_code, &cap, r->n_rows + 1,
				    sizeof *r->row_code) < 0)
			return oom(r);
		cap = r->cap_rows;
		if (mpxkit__reserve((void **)&r->row_counts, &cap, r->n_rows + 1,
				    ne * sizeof *r->row_counts) < 0)
			return oom(r);
		r->cap_rows = cap;
		v = (uint32_t)r->n_rows++;
		r->row_thread[v] = thread;
		r->row_code[v] = code;
		memset(r->row_counts + (size_t)v * ne, 0, ne * sizeof *r->row_counts);
		if (mpxkit__u64map_add(&r->row_index, key, v) < 0)
			return oom(r);
	}
	row = r->row_counts + (size_t)v * ne;
	row[0]++;
	for (size_t i = 0; i < r->g.n; i++) {
		row[1 + i] += values[i] >= prev[i] ? values[i] - prev[i] : 0;
		prev[i] = values[i];
	}
	return 0;
}

static int record(prun *r, const unsigned char *p)
{
	const struct perf_event_header *h = (const struct perf_event_header *)p;
	const unsigned char *body = p + sizeof *h;
	size_t size = h->size - sizeof *h;
	uint32_t pid, tid;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return sample(r, body, size);
	case PERF_RECORD_MMAP2: {
		uint64_t addr, len, pgoff;
		/* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags: 64 bytes
		 */
		const char *name = (const char *)body + 64;
		if (size <= 64 + 24 || memchr(name, '\0', size - 64 - 24) == NULL)
			return 0;
		memcpy(&pid, body, 4);
		memcpy(&addr, body + 8, 8);
		memcpy(&len, body + 16, 8);
		memcpy(&pgoff, body + 24, 8);
		return add_map(r, pid, addr, len, pgoff, name);
	}
	case PERF_RECORD_COMM: {
		const char *comm = (const char *)body + 8;
		if (size < 8 + 1 + 24 || memchr(comm, '\0', size - 8) == NULL)
			return 0;
		memcpy(&pid, body, 4);
		memcpy(&tid, body + 4, 4);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			drop_maps(r, pid); /* exec: a new image; its mappings follow */
		return set_comm(r, tid, comm);
	}
	case PERF_RECORD_FORK: {
		uint32_t ppid;
		if (size < 24)
			return 0;
		memcpy(&pid, body, 4);
		memcpy(&ppid, body + 4, 4);
		return pid != ppid ? fork_maps(r, pid, ppid) : 0;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost;
		if (size >= 16) {
			memcpy(&lost, body + 8, 8);
			r->sum->lost += lost;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int cmp_pending(const void *a, const void *b)
{
	const pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Drains every ring, then handles in time order the records older than the
 * drain's start (every ring holds those already); younger ones wait.
 */
static int round_trip(prun *r, int last)
{
	uint64_t cut = now_ns();
	size_t k = 0, done = 0;
	int rc;

	for (size_t c = 0; c < r->n_cpus; c++)
		if ((rc = drain(r, &r->cpus[c])) < 0)
			return rc;
	if (r->n_pend > 1)
		qsort(r->pend, r->n_pend, sizeof *r->pend, cmp_pending);
	for (; done < r->n_pend && (last || r->pend[done].time < cut); done++)
		if ((rc = record(r, r->arena + r->pend[done].off)) < 0)
			return rc;
	/* Keep the rest, compacted. */
	size_t len = 0;
	for (size_t i = done; i < r->n_pend; i++) {
		memmove(r->arena + len, r->arena + r->pend[i].off, r->pend[i].size);
		r->pend[k] = r->pend[i];
		r->pend[k++].off = len;
		len += r->pend[i].size;
	}
	r->n_pend = k;
	r->arena_len = len;
	return 0;
}

/* ---- the run --------------------------------------------------------------------------------- */

static int profile_events(prun *r, mpxkit_profile_writer **w, const char *path)
{
	const char *names[MAX_GROUP + 1];

	names[0] = "samples";
	for (size_t i = 0; i < r->g.n; i++)
		names[1 + i] = r->g.name[i];
	return mpxkit_profile_create(w, path, "perf", "ns", names, r->g.n + 1, r->diag);
}

static int perf_meta(prun *r)
{
	char buf[64];
	struct utsname u;
	int rc;

	snprintf(buf, sizeof buf, "%" PRIu64, r->o->frequency);
	rc = mpxkit_profile_add_meta(r->w, "frequency_hz", buf, r->diag);
	snprintf(buf, sizeof buf, "%" PRIu64, r->window_ns);
	if (rc == 0)
		rc = mpxkit_profile_add_meta(r->w, "window_ns", buf, r->diag);
	if (rc == 0)
		rc = mpxkit_profile_add_meta(r->w, "leader", r->g.name[0], r->diag);
	if (rc == 0 && uname(&u) == 0)
		rc = mpxkit_profile_add_meta(r->w, "kernel", u.release, r->diag);
	return rc;
}

static void prun_free(prun *r)
{
	close_cpus(r);
	for (size_t i = 0; i < r->n_maps; i++)
		free(r->maps[i].path);
	free(r->maps);
	free(r->arena);
	free(r->pend);
	free(r->tmp);
	mpxkit__u64map_free(&r->prev_index);
	free(r->prev);
	mpxkit__u64map_free(&r->comm_index);
	free(r->comms);
	st_symbols_close(r->syms);
	mpxkit__u64map_free(&r->ip_index);
	free(r->ip_ip);
	free(r->ip_pid);
	free(r->ip_code);
	mpxkit__u64map_free(&r->row_index);
	free(r->row_thread);
	free(r->row_code);
	free(r->row_counts);
	free(r->order);
	free(r->codes);
	free(r->counts);
}

/* Samples until the program ends; its wait status in *wstatus. */
static int sample_loop(prun *r, mpxkit_workload *wl, int *wstatus)
{
	struct pollfd *fds = calloc(r->n_cpus ? r->n_cpus : 1, sizeof *fds);
	/* Records carry their time, so the rings need draining only before they fill. */
	int rc = 0, timeout = POLL_MS;

	if (fds == NULL)
		return oom(r);
	for (size_t c = 0; c < r->n_cpus; c++) {
		fds[c].fd = r->cpus[c].fd[0];
		fds[c].events = POLLIN;
	}
	for (;;) {
		pid_t done = waitpid(wl->pid, wstatus, WNOHANG);
		if (done == wl->pid) {
			mpxkit_workload_reaped(wl);
			break;
		}
		if (done < 0 && errno != EINTR) {
			rc = mpxkit_fail_sys(r->diag, "profile: waitpid");
			break;
		}
		if (poll(fds, r->n_cpus, timeout) < 0 && errno != EINTR) {
			rc = mpxkit_fail_sys(r->diag, "profile: poll");
			break;
		}
		if ((rc = round_trip(r, 0)) < 0)
			break;
	}
	free(fds);
	if (rc == 0)
		rc = round_trip(r, 1);
	return rc;
}

int st_perf_run(const mpxkit_profile_options *o, char *const argv[], const char *path,
		mpxkit_profile_summary *sum, mpxkit_diag *diag)
{
	mpxkit_workload wl = {-1, -1, -1, NULL};
	prun r;
	int rc, wstatus = 0, started = 0;

	memset(&r, 0, sizeof r);
	r.o = o;
	r.sum = sum;
	r.diag = diag;
	r.page = (size_t)sysconf(_SC_PAGESIZE);
	r.window_ns = o->window_ns;
	if (o->frequency == 0 || o->frequency > 100000 || o->window_ns < 100000)
		return mpxkit_fail(diag, MPXKIT_EINVAL,
				   "profile: frequency must be 1 to 100000 Hz and the window at "
				   "least 0.1 ms");
	if ((rc = choose_group(&r)) < 0)
		return rc;
	if (st_symbols_open(&r.syms) < 0)
		return oom(&r);
	if ((rc = profile_events(&r, &r.w, path)) < 0) {
		prun_free(&r);
		return rc;
	}
	if ((rc = mpxkit_profile_add_file(r.w, "???", &r.unknown_file, diag)) < 0 ||
	    (rc = perf_meta(&r)) < 0 || (rc = mpxkit_workload_prepare(&wl, argv, diag)) < 0)
		goto fail;
	if ((rc = open_cpus(&r, wl.pid)) < 0) {
		mpxkit_workload_cancel(&wl);
		goto fail;
	}
	/* ^C and ^\ go to the program (the workload's wait), the profiler still writes what it has. */
	r.t0 = now_ns();
	rc = mpxkit_workload_start(&wl, diag);
	started = 1;
	if (rc == 0)
		rc = sample_loop(&r, &wl, &wstatus);
	if (wl.pid > 0 && mpxkit_workload_wait(&wl, &wstatus) < 0 && rc == 0)
		rc = mpxkit_fail_sys(diag, "profile: waitpid");
	if (rc < 0)
		goto fail;
	sum->status.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
	sum->status.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	if ((sum->status.exit_code != 0 || sum->status.signal != 0) && !o->keep_failed) {
		mpxkit_profile_abort(r.w);
		prun_free(&r);
		return 0;
	}
	if ((rc = flush_window(&r)) < 0 ||
	    (rc = st_add_run_meta(r.w, argv, &sum->status, diag)) < 0)
		goto fail;
	{
		char buf[32];
		snprintf(buf, sizeof buf, "%" PRIu64, sum->samples);
		rc = mpxkit_profile_add_meta(r.w, "samples", buf, diag);
		snprintf(buf, sizeof buf, "%" PRIu64, sum->lost);
		if (rc == 0)
			rc = mpxkit_profile_add_meta(r.w, "lost_samples", buf, diag);
	}
	if (rc < 0)
		goto fail;
	if (sum->samples == 0) {
		rc = mpxkit_fail(diag, MPXKIT_ERANGE,
				 "profile: %s ended before its first sample (at %" PRIu64
				 " Hz); run it longer or raise --frequency",
				 argv[0], o->frequency);
		goto fail;
	}
	close_cpus(&r);
	rc = mpxkit_profile_commit(r.w, diag);
	sum->written = rc == 0;
	r.w = NULL;
	prun_free(&r);
	return rc;
fail:
	(void)started;
	mpxkit_profile_abort(r.w);
	prun_free(&r);
	return rc;
}

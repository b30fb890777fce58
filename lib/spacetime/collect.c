/* SPDX-License-Identifier: BSD-3-Clause */
/* mpxkit_profile_run: the source chosen, the program run under it, its profile written whole. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "spacetime_impl.h"

void mpxkit_profile_options_init(mpxkit_profile_options *o)
{
	memset(o, 0, sizeof *o);
	o->source = MPXKIT_PROFILE_AUTO;
	mpxkit_record_options_init(&o->callgrind);
	o->callgrind.instr = 1;
	o->frequency = MPXKIT_PROFILE_FREQUENCY;
	o->window_ns = MPXKIT_PROFILE_WINDOW_NS;
}

int mpxkit_profile_have_pmu(void)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/* What the callgrind run's dumps are turned into. */
typedef struct cg_run {
	const mpxkit_profile_options *o;
	char *const *argv;
	const char *path;
	mpxkit_profile_summary *sum;
} cg_run;

static int add_meta_u64(mpxkit_profile_writer *w, const char *key, uint64_t v, mpxkit_diag *diag)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRIu64, v);
	return mpxkit_profile_add_meta(w, key, buf, diag);
}

static int add_geometry(mpxkit_profile_writer *w, const char *key, const mpxkit_cache_geometry *g,
			mpxkit_diag *diag)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%" PRIu64 ",%u,%u", g->size, g->assoc, g->line);
	return mpxkit_profile_add_meta(w, key, buf, diag);
}

/* The metadata every profile has: the command and how it ended. */
int st_add_run_meta(mpxkit_profile_writer *w, char *const argv[], const mpxkit_record_status *st,
		    mpxkit_diag *diag)
{
	char *cmd = mpxkit_record_command_line(argv), buf[32];
	int rc;

	if (cmd == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "profile: out of memory");
	/* A command line longer than a metadata value keeps its start. */
	if (strlen(cmd) > 4096)
		cmd[4096] = '\0';
	rc = mpxkit_profile_add_meta(w, "command", cmd, diag);
	free(cmd);
	if (st->signal)
		snprintf(buf, sizeof buf, "signal %d", st->signal);
	else
		snprintf(buf, sizeof buf, "%d", st->exit_code);
	if (rc == 0)
		rc = mpxkit_profile_add_meta(w, "exit_status", buf, diag);
	return rc;
}

static int cg_consume(void *arg, const char *base, const mpxkit_record_status *st,
		      mpxkit_diag *diag)
{
	cg_run *run = arg;
	const mpxkit_record_options *ro = &run->o->callgrind;
	mpxkit_callgrind_instr *last = NULL;
	mpxkit_profile_writer *w = NULL;
	size_t len = strlen(base) + 8;
	char *final = malloc(len);
	int rc;

	if (final == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "profile: out of memory");
	/* The main thread's final dump names the events and the whole run's length. */
	snprintf(final, len, "%s-01", base);
	rc = mpxkit_callgrind_instr_read(final, &last, diag);
	free(final);
	if (rc < 0)
		return rc;
	if ((st->exit_code != 0 || st->signal != 0) && !run->o->keep_failed) {
		mpxkit_callgrind_instr_free(last);
		return 0;
	}
	rc = mpxkit_profile_create(&w, run->path, "callgrind", "bb",
				   (const char *const *)last->head.events, last->head.n_events,
				   diag);
	if (rc == 0)
		rc = st_add_run_meta(w, run->argv, st, diag);
	if (rc == 0 && last->head.creator) {
		const char *v = last->head.creator;
		if (strncmp(v, "callgrind-", 10) == 0)
			v += 10;
		rc = mpxkit_profile_add_meta(w, "valgrind", v, diag);
	}
	if (rc == 0)
		rc = add_meta_u64(w, "interval_bb", ro->interval_bb, diag);
	if (rc == 0)
		rc = add_geometry(w, "cache_I1", &ro->i1, diag);
	if (rc == 0)
		rc = add_geometry(w, "cache_D1", &ro->d1, diag);
	if (rc == 0)
		rc = add_geometry(w, "cache_LL", &ro->ll, diag);
	if (rc == 0)
		rc = add_meta_u64(w, "total_bb", last->head.bb_end, diag);
	mpxkit_callgrind_instr_free(last);
	if (rc == 0)
		rc = mpxkit_profile_add_callgrind(w, base, run->sum, diag);
	if (rc < 0) {
		mpxkit_profile_abort(w);
		return rc;
	}
	rc = mpxkit_profile_commit(w, diag);
	run->sum->written = rc == 0;
	return rc;
}

int mpxkit_profile_run(const mpxkit_profile_options *o, char *const argv[], const char *path,
		       mpxkit_profile_summary *summary, mpxkit_diag *diag)
{
	mpxkit_profile_summary local;
	mpxkit_profile_summary *sum = summary ? summary : &local;
	mpxkit_record_options ro;
	cg_run run;
	int rc;

	if (o == NULL || argv == NULL || argv[0] == NULL || path == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "profile: no program to run");
	memset(sum, 0, sizeof *sum);
	sum->source = o->source;
	if (o->source == MPXKIT_PROFILE_AUTO) {
		int pmu = mpxkit_profile_have_pmu();
		sum->source = pmu ? MPXKIT_PROFILE_PERF : MPXKIT_PROFILE_CALLGRIND;
		snprintf(sum->why, sizeof sum->why, "%s",
			 pmu ? "a hardware cycles counter opens here"
			     : "no hardware event can be opened here");
	} else {
		snprintf(sum->why, sizeof sum->why, "as asked");
	}
	if (sum->source == MPXKIT_PROFILE_PERF)
		return st_perf_run(o, argv, path, sum, diag);
	ro = o->callgrind;
	ro.instr = 1;
	run.o = o;
	run.argv = argv;
	run.path = path;
	run.sum = sum;
	rc = mpxkit_record_run_dumps(&ro, argv, cg_consume, &run, &sum->status, diag);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* A counter of one of the kernel's tracepoints, for the benchmarks that count what the kernel does.
 */
#ifndef MPXKIT_BENCH_TRACEPOINT_H
#define MPXKIT_BENCH_TRACEPOINT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/perf_event.h>

/* The id of tracepoint "category/name" in tracefs, or -1 (no tracefs, not allowed to read it). */
static inline long bench_tracepoint_id(const char *name)
{
	static const char *const roots[] = {"/sys/kernel/tracing/events",
					    "/sys/kernel/debug/tracing/events"};

	for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
		char path[256];
		long id = -1;
		FILE *f;
		snprintf(path, sizeof path, "%s/%s/id", roots[r], name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
		return id;
	}
	return -1;
}

/*
 * A counter of the tracepoint on pid (0: the calling thread), kernel
 * included, with its future children when inherit is set; -1 when refused
 * (not root, perf_event_paranoid).
 */
static inline int bench_tracepoint_open(const char *name, pid_t pid, int inherit)
{
	struct perf_event_attr attr;
	long id = bench_tracepoint_id(name);

	if (id < 0)
		return -1;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	attr.inherit = inherit != 0;
	return (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#endif

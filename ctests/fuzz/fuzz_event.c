/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes as event names, one per line, through the parser; never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/event.h"

/*
 * Hermetic and fast: no sysfs PMU and no tracefs (the fake directories do
 * not exist), so the output does not depend on the machine; libpfm4's
 * names are left out of the golden files for the same reason.
 */
static void hermetic(void)
{
	setenv("MPXKIT_TEST_SYSFS", "/nonexistent/mpxkit-fuzz", 1);
	setenv("MPXKIT_TEST_TRACEFS", "/nonexistent/mpxkit-fuzz", 1);
}

static int one(const char *name, FILE *out)
{
	mpxkit_diag diag = {0};
	mpxkit_event ev;
	int rc = mpxkit_event_parse(name, &ev, &diag);

	if (rc < 0) {
		/* One line, naming the input (or a prefix of it), never empty. */
		if (diag.msg[0] == '\0' || strchr(diag.msg, '\n'))
			__builtin_trap();
		if (out)
			fprintf(out, "%s\n", mpxkit_errname(rc));
		return rc;
	}
	if (ev.name[0] == '\0' || strlen(ev.name) >= sizeof ev.name ||
	    ev.kind >= MPXKIT_EVENT_N_KINDS)
		__builtin_trap();
	if (out)
		fprintf(
		    out,
		    "%s %s type=%u config=0x%llx config1=0x%llx config2=0x%llx u=%d k=%d h=%d\n",
		    ev.name, mpxkit_event_kind_name(ev.kind), ev.attr.type,
		    (unsigned long long)ev.attr.config, (unsigned long long)ev.attr.config1,
		    (unsigned long long)ev.attr.config2, !ev.attr.exclude_user,
		    !ev.attr.exclude_kernel, !ev.attr.exclude_hv);
	return 0;
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	char name[300];
	int first = 0;

	hermetic();
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		size_t keep = len < sizeof name - 1 ? len : sizeof name - 1;
		int rc;
		memcpy(name, data + at, keep);
		name[keep] = '\0'; /* a NUL inside ends the name there */
		rc = one(name, out);
		if (rc < 0 && first == 0)
			first = rc;
		at += len + 1;
	}
	return first;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

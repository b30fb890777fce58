/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the callgrind dump parser, never a crash. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/record.h"

/* Everything the parser keeps of a dump, one "key: value" per line. */
static void print_dump(const mpxkit_callgrind_dump *d, FILE *out)
{
	fprintf(out, "part: %u\ncreator: %s\nbb: %" PRIu64 " - %" PRIu64 "\n", d->part,
		d->creator ? d->creator : "(none)", d->bb_begin, d->bb_end);
	for (size_t e = 0; e < d->n_events; e++)
		fprintf(out, "%s: %" PRIu64 "\n", d->events[e], d->totals[e]);
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_callgrind_dump *d = NULL;
	mpxkit_diag diag;
	int rc = mpxkit_callgrind_parse("fuzz", (const char *)data, size, &d, &diag);

	if (rc < 0)
		return rc;
	if (d->n_events == 0 || d->totals == NULL || d->bb_begin > d->bb_end)
		__builtin_trap();
	if (out)
		print_dump(d, out);
	mpxkit_callgrind_dump_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

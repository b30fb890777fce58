/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the trace CSV parser, never a crash. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/trace.h"

/*
 * Writes the trace as doc/trace-format.md's "Writing" section says a writer must, kept apart
 * from the library's writer so the golden files check the parser, not the two against each other.
 */
static void print_trace(const mpxkit_trace *t, FILE *out)
{
	for (size_t i = 0; i < t->n_meta; i++)
		fprintf(out, "# %s=%s\n", t->meta_keys[i], t->meta_values[i]);
	fputs(t->index_name, out);
	for (size_t e = 0; e < t->n_events; e++)
		fprintf(out, ",%s", t->events[e]);
	fputc('\n', out);
	for (size_t s = 0; s < t->n_steps; s++) {
		fprintf(out, "%" PRIu64, t->index[s]);
		for (size_t e = 0; e < t->n_events; e++)
			fprintf(out, ",%" PRIu64, t->values[s * t->n_events + e]);
		fputc('\n', out);
	}
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_trace *t = NULL;
	mpxkit_diag diag;
	int rc = mpxkit_trace_parse("fuzz", (const char *)data, size, &t, &diag);

	if (rc < 0)
		return rc;
	/* The lookups agree with the columns (a few: each lookup is a linear search). */
	for (size_t e = 0; e < t->n_events && e < 64; e++)
		if (mpxkit_trace_event_index(t, t->events[e]) != (int)e)
			__builtin_trap();
	for (size_t i = 0; i < t->n_meta && i < 64; i++)
		if (mpxkit_trace_get_meta(t, t->meta_keys[i]) != t->meta_values[i])
			__builtin_trap();
	if (out)
		print_trace(t, out);
	mpxkit_trace_free(t);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

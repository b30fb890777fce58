/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the per-instruction callgrind reader, never a crash. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/record.h"

static void print_dump(const mpxkit_callgrind_instr *d, FILE *out)
{
	size_t ne = d->head.n_events;

	fprintf(out, "part %u thread %u bb %" PRIu64 "-%" PRIu64 "\nevents", d->head.part,
		d->thread, d->head.bb_begin, d->head.bb_end);
	for (size_t e = 0; e < ne; e++)
		fprintf(out, " %s", d->head.events[e]);
	fputs("\ntotals", out);
	for (size_t e = 0; e < ne; e++)
		fprintf(out, " %" PRIu64, d->head.totals[e]);
	fputc('\n', out);
	for (size_t i = 0; i < d->n_costs; i++) {
		const mpxkit_callgrind_cost *c = &d->costs[i];
		const mpxkit_callgrind_function *f = &d->functions[c->function];
		fprintf(out, "cost %s %s %s:%" PRIu32 " 0x%" PRIx64, d->objects[f->object], f->name,
			d->files[c->file], c->line, c->address);
		for (size_t e = 0; e < ne; e++)
			fprintf(out, " %" PRIu64, d->counts[i * ne + e]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < d->n_jumps; i++) {
		const mpxkit_callgrind_jump *j = &d->jumps[i];
		fprintf(out,
			"jump %s 0x%" PRIx64 " -> %s 0x%" PRIx64 " %" PRIu64 "/%" PRIu64 "%s\n",
			d->functions[j->function].name, j->from, d->functions[j->to_function].name,
			j->to, j->count, j->executed, j->conditional ? " conditional" : "");
	}
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_callgrind_instr *d = NULL;
	int rc = mpxkit_callgrind_instr_parse("fuzz", (const char *)data, size, &d, NULL);
	uint64_t sum;

	if (rc < 0)
		return rc;
	/* What the reader promises: the costs sum to the totals, every index in its table. */
	for (size_t e = 0; e < d->head.n_events; e++) {
		sum = 0;
		for (size_t i = 0; i < d->n_costs; i++)
			sum += d->counts[i * d->head.n_events + e];
		if (sum != d->head.totals[e])
			__builtin_trap();
	}
	for (size_t i = 0; i < d->n_costs; i++)
		if (d->costs[i].function >= d->n_functions || d->costs[i].file >= d->n_files ||
		    d->functions[d->costs[i].function].object >= d->n_objects)
			__builtin_trap();
	for (size_t i = 0; i < d->n_jumps; i++)
		if (d->jumps[i].function >= d->n_functions ||
		    d->jumps[i].to_function >= d->n_functions ||
		    d->jumps[i].count > d->jumps[i].executed)
			__builtin_trap();
	if (out)
		print_dump(d, out);
	mpxkit_callgrind_instr_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

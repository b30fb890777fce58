/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the profile reader, never a crash, never an id out of its
 * table. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/spacetime.h"

static void print_block(const mpxkit_profile *p, const mpxkit_profile_block *b, FILE *out)
{
	size_t ne = mpxkit_profile_n_events(p);

	fprintf(out,
		"block window %" PRIu64 " time %" PRIu64 "+%" PRIu64 " thread %" PRIu32
		" rows %zu jumps %zu\n",
		b->window, b->t_begin, b->t_len, b->thread, b->n_rows, b->n_jumps);
	for (size_t i = 0; i < b->n_rows; i++) {
		fprintf(out, "row code %" PRIu32, b->codes[i]);
		for (size_t e = 0; e < ne; e++)
			fprintf(out, " %" PRIu64, b->counts[i * ne + e]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < b->n_jumps; i++)
		fprintf(out, "jump %" PRIu32 " -> %" PRIu32 " %" PRIu64 "\n", b->jumps[i].from,
			b->jumps[i].to, b->jumps[i].count);
}

/* Everything the reader keeps, tables last (they grow while blocks are read). */
static void print_tables(const mpxkit_profile *p, FILE *out)
{
	const char *key, *value;

	for (size_t i = 0; mpxkit_profile_meta_at(p, i, &key, &value) == 0; i++)
		fprintf(out, "meta %s=%s\n", key, value);
	for (uint32_t i = 0; i < mpxkit_profile_n_functions(p); i++) {
		const mpxkit_profile_function *f = mpxkit_profile_function_at(p, i);
		fprintf(out,
			"function %" PRIu32 " %s object %s lo 0x%" PRIx64 " size %" PRIu64 "\n", i,
			f->name, mpxkit_profile_object_name(p, f->object), f->lo, f->size);
	}
	for (uint32_t i = 0; i < mpxkit_profile_n_codes(p); i++) {
		const mpxkit_profile_code *c = mpxkit_profile_code_at(p, i);
		fprintf(out,
			"code %" PRIu32 " function %" PRIu32 " %s:%" PRIu32 " address 0x%" PRIx64
			"\n",
			i, c->function, mpxkit_profile_file_name(p, c->file), c->line, c->address);
	}
	for (uint32_t i = 0; i < mpxkit_profile_n_threads(p); i++)
		fprintf(out, "thread %" PRIu32 " tid %" PRIu64 " name '%s'\n", i,
			mpxkit_profile_thread_at(p, i)->tid, mpxkit_profile_thread_at(p, i)->name);
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_profile *p = NULL;
	mpxkit_profile_block b;
	int rc = mpxkit_profile_open_buffer(&p, data, size, "fuzz", NULL);

	if (rc < 0)
		return rc;
	if (out) {
		fprintf(out, "source %s\ntime_unit %s\nevents", mpxkit_profile_source(p),
			mpxkit_profile_time_unit(p));
		for (size_t e = 0; e < mpxkit_profile_n_events(p); e++)
			fprintf(out, " %s", mpxkit_profile_event(p, e));
		fputc('\n', out);
	}
	while ((rc = mpxkit_profile_next(p, &b, NULL)) == 1) {
		/* Every id a block uses is defined, and codes strictly increase. */
		for (size_t i = 0; i < b.n_rows; i++)
			if (b.codes[i] >= mpxkit_profile_n_codes(p) ||
			    (i && b.codes[i] <= b.codes[i - 1]))
				__builtin_trap();
		for (size_t i = 0; i < b.n_jumps; i++)
			if (b.jumps[i].from >= mpxkit_profile_n_codes(p) ||
			    b.jumps[i].to >= mpxkit_profile_n_codes(p) || b.jumps[i].count == 0)
				__builtin_trap();
		if (b.thread >= mpxkit_profile_n_threads(p))
			__builtin_trap();
		if (out)
			print_block(p, &b, out);
	}
	if (rc == 0 && out)
		print_tables(p, out);
	mpxkit_profile_close(p);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

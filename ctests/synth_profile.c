/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes a made-up callgrind profile with many threads, for tests of what analyze draws. */
#include <stdio.h>
#include <stdlib.h>

#include "mpxkit/spacetime.h"

/*
 * usage: synth_profile OUT.prof THREADS WINDOWS [FUNCTIONS]
 * Thread t runs a loop (a back edge from 0x10 to its start) in windows t % WINDOWS and
 * (t + 1) % WINDOWS, one thread in three twice as long as the others, then waits in
 * pthread_barrier_wait; thread 0 also runs main.  The loop is in worker, or with FUNCTIONS in
 * worker0 to worker<FUNCTIONS - 1> (thread t's: t % FUNCTIONS), each a code space of its own.
 * Exit 0, 1 usage, or 2 with one line.
 */

static const char *const events[] = {"Ir",   "Dr",   "Dw", "I1mr", "D1mr", "D1mw", "ILmr",
				     "DLmr", "DLmw", "Bc", "Bcm",  "Bi",   "Bim"};
enum { IR, D1MR = 4, BC = 9, BCM = 10, NE = 13 };

typedef struct synth {
	mpxkit_profile_writer *w;
	uint32_t object, file;
	mpxkit_diag diag;
} synth;

static int code(synth *s, const char *function, uint64_t address, uint32_t *id)
{
	uint32_t fn;

	return mpxkit_profile_add_function(s->w, function, s->object, 0, 0, &fn, &s->diag) < 0 ||
		       mpxkit_profile_add_code(s->w, fn, s->file, (uint32_t)(address & 0xff),
					       address, id, &s->diag) < 0
		   ? -1
		   : 0;
}

/* One block: the loop's two rows and a wait row (and main's in thread 0). */
static int block(synth *s, uint64_t window, uint32_t thread, uint64_t tid, uint64_t ir,
		 const char *worker, uint64_t at)
{
	uint32_t codes[4];
	uint64_t counts[4 * NE] = {0};
	mpxkit_profile_jump jump;
	size_t n = tid == 0 ? 4 : 3;

	if (code(s, worker, at, &codes[0]) < 0 || code(s, worker, at + 0x10, &codes[1]) < 0 ||
	    code(s, "pthread_barrier_wait", 0x2000, &codes[2]) < 0 ||
	    (n == 4 && code(s, "main", 0x3000, &codes[3]) < 0))
		return -1;
	counts[0 * NE + IR] = ir;
	counts[0 * NE + D1MR] = ir / 50;
	counts[1 * NE + IR] = ir / 4;
	counts[1 * NE + BC] = ir / 4;
	counts[1 * NE + BCM] = ir / 400;
	counts[2 * NE + IR] = 3000 - ir / 2;
	counts[3 * NE + IR] = 500;
	jump.from = codes[1];
	jump.to = codes[0];
	jump.count = ir / 4;
	mpxkit_profile_block b = {window, window * 10000, 10000, thread, n,
				  codes,  counts,	  1,	 &jump};
	return mpxkit_profile_put_block(s->w, &b, &s->diag);
}

int main(int argc, char **argv)
{
	synth s = {NULL, 0, 0, {0}};
	uint32_t *thread;
	long threads, windows, functions = 0;

	if ((argc != 4 && argc != 5) || (threads = atol(argv[2])) < 1 || threads > 100000 ||
	    (windows = atol(argv[3])) < 1 || windows > 100000 ||
	    (argc == 5 && ((functions = atol(argv[4])) < 1 || functions > 1000))) {
		fputs("usage: synth_profile OUT.prof THREADS WINDOWS [FUNCTIONS]\n", stderr);
		return 1;
	}
	if ((thread = calloc((size_t)threads, sizeof *thread)) == NULL ||
	    mpxkit_profile_create(&s.w, argv[1], "callgrind", "bb", events, NE, &s.diag) < 0 ||
	    mpxkit_profile_add_meta(s.w, "command", "synth_profile", &s.diag) < 0 ||
	    mpxkit_profile_add_object(s.w, "/bin/synth", &s.object, &s.diag) < 0 ||
	    mpxkit_profile_add_file(s.w, "synth.c", &s.file, &s.diag) < 0)
		goto fail;
	for (long t = 0; t < threads; t++)
		if (mpxkit_profile_add_thread(s.w, (uint64_t)t + 1, "", &thread[t], &s.diag) < 0)
			goto fail;
	for (long w = 0; w < windows; w++)
		for (long t = 0; t < threads; t++) {
			uint64_t ir = t % 3 == 0 ? 4000 : 2000;
			char worker[32] = "worker";
			if (functions > 0)
				snprintf(worker, sizeof worker, "worker%ld", t % functions);
			if ((t % windows == w || (t + 1) % windows == w) &&
			    block(&s, (uint64_t)w, thread[t], (uint64_t)t, ir, worker,
				  0x1000 + 0x100 * (uint64_t)(functions > 0 ? t % functions : 0)) <
				0)
				goto fail;
		}
	free(thread);
	if (mpxkit_profile_commit(s.w, &s.diag) < 0) {
		fprintf(stderr, "synth_profile: %s\n", s.diag.msg);
		return 2;
	}
	return 0;
fail:
	fprintf(stderr, "synth_profile: %s\n", s.diag.msg[0] ? s.diag.msg : "out of memory");
	mpxkit_profile_abort(s.w);
	free(thread);
	return 2;
}

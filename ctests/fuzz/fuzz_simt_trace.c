/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes as an Accel-Sim kernel trace, through the reader and the model. */
#define _GNU_SOURCE /* memfd_create */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_target.h"
#include "mpxkit/simt.h"

/* A small GPU for the model's half: caches of a few lines, so evictions happen too. */
static const char gpu_text[] =
    "mpxkit-gpu 1\nname fuzz\nsms 3\nclock_mhz 1000\nwarp_size 32\nschedulers 2\n"
    "max_warps 64\nmax_blocks 4\nmax_threads_per_block 2048\nregisters 65536\n"
    "register_unit 256\nshared_per_sm 65536\nshared_per_block 65536\nshared_unit 256\n"
    "launch_cycles 10\n"
    "l1 sets=2 ways=2 line=128 sector=32 latency=10 write=through global=cached "
    "request_bytes=32 tags_per_cycle=1\n"
    "l2 sets=4 ways=2 line=128 sector=32 latency=100 write=back bytes_per_cycle=64\n"
    "icache sets=1 ways=2 line=128 prefetch=2\nshared_mem banks=32 width=4 latency=5\n"
    "dram latency=300 bytes_per_cycle=32\n"
    "unit int latency=4 initiation=1\nunit fp16 latency=4 initiation=1\n"
    "unit fp32 latency=4 initiation=2\nunit fp64 latency=8 initiation=4\n"
    "unit sfu latency=20 initiation=8\nunit conv latency=20 initiation=8\n"
    "unit tensor latency=8 initiation=2\nunit branch latency=4 initiation=1\n"
    "unit ldst latency=20 initiation=4\nunit const latency=4 initiation=1\n"
    "unit tex latency=200 initiation=4\nunit sreg latency=4 initiation=1\n"
    "unit sync latency=4 initiation=1\nops builtin\n";

/* The events as text, written here apart from the library so the golden files check the reader. */
static void print_inst(const mpxkit_simt_trace *t, const mpxkit_simt_inst *in, FILE *out)
{
	fprintf(out, "inst pc=%" PRIx64 " mask=%08x op=%s", in->pc, in->mask,
		mpxkit_simt_trace_opcode(t, in->opcode));
	for (unsigned i = 0; i < in->n_dst; i++)
		fprintf(out, "%sR%u", i ? "," : " dst=", in->dst[i]);
	for (unsigned i = 0; i < in->n_src; i++)
		fprintf(out, "%sR%u", i ? "," : " src=", in->src[i]);
	if (in->mem_width) {
		fprintf(out, " width=%u mode=%d", in->mem_width, in->addr_mode);
		for (uint32_t m = in->mask; m; m &= m - 1)
			fprintf(out, " %d:%" PRIx64, __builtin_ctz(m), in->addr[__builtin_ctz(m)]);
	}
	if (in->has_imm)
		fprintf(out, " imm=%d", in->imm);
	if (in->source_line)
		fprintf(out, " line=%u", in->source_line);
	fputc('\n', out);
}

/* The events of a trace read from data in memory (path NULL) or from the file path. */
static int events_of(const uint8_t *data, size_t size, const char *path, FILE *out,
		     mpxkit_diag *diag)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_step st;
	const mpxkit_simt_kernel *k;
	int ev,
	    rc = path ? mpxkit_simt_trace_open(path, &t, diag)
		      : mpxkit_simt_trace_open_buffer("fuzz", (const char *)data, size, &t, diag);

	if (rc < 0)
		return rc;
	k = mpxkit_simt_trace_kernel(t);
	if (k->threads_per_block == 0 || k->threads_per_block > 2048 || k->warps_per_block > 64)
		__builtin_trap();
	if (out)
		fprintf(out,
			"kernel %s id=%u grid=%u,%u,%u block=%u,%u,%u shmem=%u nregs=%u binary=%u "
			"tracer=%u lineinfo=%d stream=%" PRIu64 " shmem_base=%" PRIx64
			" local_base=%" PRIx64 "\n",
			k->name, k->id, k->grid[0], k->grid[1], k->grid[2], k->block[0],
			k->block[1], k->block[2], k->shmem, k->nregs, k->binary_version,
			k->tracer_version, k->lineinfo, k->stream, k->shmem_base, k->local_base);
	while ((ev = mpxkit_simt_trace_next(t, &st, diag)) > 0) {
		if (ev == MPXKIT_SIMT_INST) {
			if (st.inst->opcode >= mpxkit_simt_trace_n_opcodes(t))
				__builtin_trap();
			if (out)
				print_inst(t, st.inst, out);
		} else if (out) {
			if (ev == MPXKIT_SIMT_BLOCK)
				fprintf(out, "block %u,%u,%u\n", st.block[0], st.block[1],
					st.block[2]);
			else if (ev == MPXKIT_SIMT_WARP)
				fprintf(out, "warp %u insts %" PRIu64 "\n", st.warp, st.insts);
			else
				fputs("end\n", out);
		}
	}
	mpxkit_simt_trace_close(t);
	return ev;
}

static int events(const uint8_t *data, size_t size, FILE *out)
{
	return events_of(data, size, NULL, out, NULL);
}

/* A diag's message after "NAME:" (the two paths name the input differently). */
static const char *after_name(const mpxkit_diag *d, const char *name)
{
	size_t n = strlen(name);
	return strncmp(d->msg, name, n) == 0 ? d->msg + n : d->msg;
}

/*
 * The same bytes from a file, through the shared reader's windows and the
 * in-place instruction parser: the same events, the same outcome, the same
 * message (but for the name, and the wording of a NUL byte's), or a trap.
 */
static void same_from_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;
	mpxkit_diag dm = {0}, df = {0};
	char *a = NULL, *b = NULL;
	size_t an = 0, bn = 0;
	FILE *fa, *fb;
	int ra, rb;

	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		return; /* the file path inflates gzip, the memory path does not */
	if (fd < 0) {
		/*
		 * A file in memory (a disk file truncated and rewritten at every run
		 * waits for the disk), opened again by its /proc name; else an
		 * unlinked temporary file.  Nothing is left behind.
		 */
		char tmp[] = "/tmp/fuzz_simt_trace-XXXXXX";
		if ((fd = memfd_create("fuzz_simt_trace", 0)) < 0 &&
		    ((fd = mkstemp(tmp)) < 0 || unlink(tmp) != 0))
			__builtin_trap();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		__builtin_trap();
	fa = open_memstream(&a, &an);
	fb = open_memstream(&b, &bn);
	if (fa == NULL || fb == NULL)
		__builtin_trap();
	ra = events_of(data, size, NULL, fa, &dm);
	rb = events_of(NULL, 0, path, fb, &df);
	fclose(fa);
	fclose(fb);
	if (ra != rb || an != bn || memcmp(a, b, an) != 0)
		__builtin_trap();
	if (ra < 0 && strstr(dm.msg, "NUL byte") == NULL &&
	    strcmp(after_name(&dm, "fuzz"), after_name(&df, path)) != 0)
		__builtin_trap();
	free(a);
	free(b);
}

/* The model on the same bytes: any outcome but a crash, and parts that add up. */
static void model(const uint8_t *data, size_t size)
{
	static mpxkit_simt_gpu *gpu;
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_sim *sim = NULL;
	mpxkit_simt_result *r = NULL;
	double sum = 0;

	if (gpu == NULL &&
	    mpxkit_simt_gpu_parse("fuzz.gpu", gpu_text, sizeof gpu_text - 1, &gpu, NULL) < 0)
		__builtin_trap();
	if (mpxkit_simt_trace_open_buffer("fuzz", (const char *)data, size, &t, NULL) < 0)
		return;
	if (mpxkit_simt_sim_new(gpu, &sim, NULL) == 0 &&
	    mpxkit_simt_sim_kernel(sim, t, &r, NULL) == 0) {
		for (int p = 0; p < MPXKIT_SIMT_N_PARTS; p++) {
			if (!(r->parts[p] >= 0))
				__builtin_trap();
			sum += r->parts[p];
		}
		if (sum > r->cycles * (1 + 1e-9) + 1e-6 || sum < r->cycles * (1 - 1e-9) - 1e-6 ||
		    r->thread_insts > 32 * r->warp_insts)
			__builtin_trap();
	}
	mpxkit_simt_result_free(r);
	mpxkit_simt_sim_free(sim);
	mpxkit_simt_trace_close(t);
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	return events(data, size, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (events(data, size, NULL) == 0)
		model(data, size);
	same_from_file(data, size);
	return 0;
}

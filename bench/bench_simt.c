/* SPDX-License-Identifier: BSD-3-Clause */
/* SIMT model throughput in warp instructions per second on one core: parse only, and parse and
 * model, from plain and gzip trace files; prints markdown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "bench.h"
#include "mpxkit/simt.h"

#define REPEATS 3

/*
 * CPU seconds of this process: "one core" is what is asked, and on a shared
 * machine the wall clock also counts the time other processes ran.
 */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * A synthetic kernel with the mix of a memory-bound stencil: per warp, a
 * prologue of special-register reads and integer address arithmetic, then a
 * loop of coalesced loads (mode 1), a strided load every eighth iteration
 * (mode 2 deltas), shared-memory stores and loads, FFMA chains, a divergent
 * branch every fourth iteration, and a store.  Lines look like the tracer's.
 */
static void write_kernel(FILE *f, gzFile gz, unsigned blocks, unsigned warps, unsigned iters,
			 uint64_t *n_insts)
{
	char line[2048];
	uint64_t seed = 12345, n = 0;

#define EMIT(...)                                                                                  \
	do {                                                                                       \
		int len_ = snprintf(line, sizeof line, __VA_ARGS__);                               \
		if (f)                                                                             \
			fwrite(line, 1, (size_t)len_, f);                                          \
		else                                                                               \
			gzwrite(gz, line, (unsigned)len_);                                         \
	} while (0)

	EMIT("-kernel name = _Z7stencilPfS_i\n-kernel id = 1\n-grid dim = (%u,1,1)\n"
	     "-block dim = (%u,1,1)\n-shmem = 4096\n-nregs = 32\n-binary version = 70\n"
	     "-cuda stream id = 0\n-shmem base_addr = 0x00007f0000000000\n"
	     "-local mem base_addr = 0x00007e0000000000\n-nvbit version = 1.5.5\n"
	     "-accelsim tracer version = 4\n-enable lineinfo = 0\n\n"
	     "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "
	     "mem_width [adrrescompress?] [mem_addresses]\n\n",
	     blocks, warps * 32);
	for (unsigned b = 0; b < blocks; b++) {
		EMIT("#BEGIN_TB\n\nthread block = %u,0,0\n\n", b);
		for (unsigned w = 0; w < warps; w++) {
			uint64_t base = 0x7f0000000000ull + ((uint64_t)b * warps + w) * 128;
			unsigned per_iter = 12, insts = 6 + iters * per_iter + 1;
			EMIT("warp = %u\ninsts = %u\n", w, insts);
			EMIT("0008 ffffffff 1 R1 MOV 0 0 \n0010 ffffffff 1 R0 S2R 0 0 \n"
			     "0018 ffffffff 1 R2 S2R 0 0 \n0020 ffffffff 1 R3 IMAD 3 R0 R2 R1 0 \n"
			     "0028 ffffffff 1 R4 IADD3 2 R3 R1 0 \n0030 ffffffff 0 ISETP.GE.AND 2 "
			     "R4 R3 0 \n");
			for (unsigned i = 0; i < iters; i++) {
				uint64_t a = base + (uint64_t)i * 65536;
				unsigned mask = i % 4 == 3 ? 0x0000ffffu : 0xffffffffu;
				EMIT("0040 ffffffff 1 R6 LDG.E 1 R4 4 1 0x%" PRIx64 " 4 \n", a);
				if (i % 8 == 7) {
					EMIT("0048 ffffffff 1 R7 LDG.E 1 R4 4 2 0x%" PRIx64,
					     a + 4096);
					for (int l = 1; l < 32; l++) {
						seed = seed * 6364136223846793005ull +
						       1442695040888963407ull;
						EMIT(" %d", (int)(seed >> 52) * 4 - 2048);
					}
					EMIT(" \n");
				} else {
					EMIT("0048 ffffffff 1 R7 LDG.E 1 R4 4 1 0x%" PRIx64 " 4 \n",
					     a + 128);
				}
				EMIT("0050 ffffffff 0 STS 2 R5 R6 4 1 0x%x 4 \n", (w * 128) & 4095);
				EMIT("0058 ffffffff 1 R8 LDS.U.32 1 R5 4 1 0x%x 4 \n",
				     (w * 128 + 4) & 4095);
				EMIT("0060 ffffffff 1 R9 FFMA 3 R6 R7 R9 0 \n0068 ffffffff 1 R9 "
				     "FFMA 3 R8 R9 R9 0 \n");
				EMIT("0070 ffffffff 0 ISETP.GT.AND 2 R9 R1 0 \n0078 %08x 0 BRA 0 0 "
				     "\n",
				     mask ^ 0xffffffffu);
				EMIT("0080 %08x 1 R10 FMUL 2 R9 R9 0 \n0088 %08x 1 R9 FADD 2 R10 "
				     "R9 0 \n",
				     mask, mask);
				EMIT("0090 ffffffff 1 R4 IADD3 2 R4 R1 0 \n0098 ffffffff 0 BRA 0 0 "
				     "\n");
			}
			EMIT("00a0 ffffffff 0 STG.E 2 R4 R9 4 1 0x%" PRIx64 " 4 \n",
			     base + (uint64_t)0x100000000);
			n += insts;
		}
		EMIT("#END_TB\n\n");
	}
#undef EMIT
	*n_insts = n;
}

/* CPU seconds to read the whole trace, with (model) or without the model; wall seconds in *wall. */
static double run_once(const mpxkit_simt_gpu *gpu, const char *path, int model, uint64_t *insts,
		       double *wall)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_sim *sim = NULL;
	mpxkit_simt_result *r = NULL;
	mpxkit_simt_step st;
	mpxkit_diag d = {0};
	double t0 = cpu_now(), w0 = now();
	int ev;

	if (mpxkit_simt_trace_open(path, &t, &d) < 0)
		goto fail;
	if (model) {
		if (mpxkit_simt_sim_new(gpu, &sim, &d) < 0 ||
		    mpxkit_simt_sim_kernel(sim, t, &r, &d) < 0)
			goto fail;
		*insts = r->warp_insts;
	} else {
		*insts = 0;
		while ((ev = mpxkit_simt_trace_next(t, &st, &d)) > 0)
			*insts += ev == MPXKIT_SIMT_INST;
		if (ev < 0)
			goto fail;
	}
	t0 = cpu_now() - t0;
	*wall = now() - w0;
	mpxkit_simt_result_free(r);
	mpxkit_simt_sim_free(sim);
	mpxkit_simt_trace_close(t);
	return t0;
fail:
	fprintf(stderr, "bench_simt: %s\n", d.msg);
	exit(2);
}

static void measure(const mpxkit_simt_gpu *gpu, const char *what, const char *path, int model,
		    double bytes)
{
	double best = 1e30, best_wall = 1e30;
	uint64_t insts = 0;

	for (int r = 0; r < REPEATS; r++) {
		double wall, s = run_once(gpu, path, model, &insts, &wall);
		best = s < best ? s : best;
		best_wall = wall < best_wall ? wall : best_wall;
	}
	printf("| %s | %" PRIu64 " | %.3f | %.3f | %.2f | %.0f |\n", what, insts, best, best_wall,
	       insts / best / 1e6, bytes / best / 1e6);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	unsigned blocks = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	char plain[4096], packed[4096];
	mpxkit_simt_gpu *gpu = NULL;
	mpxkit_diag d = {0};
	uint64_t n;
	FILE *f;
	gzFile gz;
	long plain_bytes;

	if (mpxkit_simt_gpu_load("qv100", &gpu, &d) < 0) {
		fprintf(stderr,
			"bench_simt: %s (run with MPXKIT_DATADIR=data from the source tree)\n",
			d.msg);
		return 2;
	}
	snprintf(plain, sizeof plain, "%s/bench-simt-%d.traceg", dir, (int)getpid());
	snprintf(packed, sizeof packed, "%s/bench-simt-%d.traceg.gz", dir, (int)getpid());
	if ((f = fopen(plain, "w")) == NULL || (gz = gzopen(packed, "wb1")) == NULL) {
		fprintf(stderr, "bench_simt: cannot write under %s\n", dir);
		return 2;
	}
	write_kernel(f, NULL, blocks, 8, 100, &n);
	plain_bytes = ftell(f);
	fclose(f);
	write_kernel(NULL, gz, blocks, 8, 100, &n);
	gzclose(gz);
	printf("Synthetic kernel: %u blocks of 8 warps, %" PRIu64 " warp instructions, %.1f MB of "
	       "text; GPU qv100; best of %d runs.\n\n",
	       blocks, n, plain_bytes / 1e6, REPEATS);
	printf("| run | warp instructions | CPU s | wall s | M warp inst/s (CPU) | MB/s of text "
	       "(CPU) |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
	measure(gpu, "parse only, plain", plain, 0, (double)plain_bytes);
	measure(gpu, "parse + model, plain", plain, 1, (double)plain_bytes);
	measure(gpu, "parse + model, gzip -1", packed, 1, (double)plain_bytes);
	remove(plain);
	remove(packed);
	mpxkit_simt_gpu_free(gpu);
	return 0;
}

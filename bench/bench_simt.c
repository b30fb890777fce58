/* SPDX-License-Identifier: BSD-3-Clause */
/* SIMT model throughput in warp instructions per second on one core: the reading floors, parse
 * only, and parse and model, from plain and gzip trace files; prints markdown. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "bench.h"
#include "mpxkit/reader.h"
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

/*
 * A real kernel made long: the GTX 1080 trace of the 32x32 shared-memory
 * tiled matrix multiply in ../shared/data/simt (one block of 32 warps, 4,416
 * warp instructions, global data in 12 KB: A, B and C), its block written
 * `copies` times as blocks 0 .. copies - 1 of a grid of that many, every
 * global address of copy c (LDG, STG, ATOMG, RED) moved up by c * 12 KB: a
 * batched multiply whose block c multiplies the c-th pair into the c-th C,
 * so the copies share no lines.  Shared-memory addresses stay as they are
 * (each block has its own).  1 when written, 0 when the data is not there,
 * -1 when its form is not the one this copier knows (one block, addresses
 * in modes 0 to 2).
 */
#define MATMUL_SPAN 0x3000u

/* The line with every global address moved by off; 0, or -1 when it cannot be parsed. */
static int offset_line(FILE *out, char *line, uint64_t off)
{
	char *tok[MPXKIT_SIMT_WARP_SIZE + 40], *save = NULL;
	int n = 0, op, width_at, mode;

	for (char *t = strtok_r(line, " \n", &save); t && n < (int)(sizeof tok / sizeof *tok);
	     t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	if (n < 5)
		return -1;
	op = 3 + atoi(tok[2]);
	if (op + 1 >= n)
		return -1;
	width_at = op + 2 + atoi(tok[op + 1]);
	if (width_at >= n)
		return -1;
	mode = atoi(tok[width_at]) > 0 && width_at + 1 < n ? atoi(tok[width_at + 1]) : -1;
	for (int i = 0; i < n; i++) {
		int global = strncmp(tok[op], "LDG", 3) == 0 || strncmp(tok[op], "STG", 3) == 0 ||
			     strncmp(tok[op], "ATOMG", 5) == 0 || strncmp(tok[op], "RED", 3) == 0;
		int addr = global && mode >= 0 && i > width_at + 1 &&
			   (mode == 0 || i == width_at + 2); /* modes 1 and 2: the base only */
		if (addr)
			fprintf(out, "0x%" PRIx64 " ", (uint64_t)strtoull(tok[i], NULL, 16) + off);
		else
			fprintf(out, "%s ", tok[i]);
	}
	fputc('\n', out);
	return mode > 2 ? -1 : 0;
}

static int write_matmul(const char *path, unsigned copies, uint64_t *n_insts)
{
	const char *shared = getenv("MPXKIT_SHARED") ? getenv("MPXKIT_SHARED") : "../shared";
	char src[4096], *line = NULL, **body = NULL;
	size_t cap = 0, n_body = 0, body_cap = 0;
	int in_body = 0, blocks = 0, rc = 1;
	uint64_t insts = 0;
	FILE *in, *out;

	snprintf(src, sizeof src, "%s/data/simt/gtx1080/matrixmul-32-32/kernel-1.traceg", shared);
	if ((in = fopen(src, "r")) == NULL)
		return 0;
	if ((out = fopen(path, "w")) == NULL) {
		fclose(in);
		return -1;
	}
	while (getline(&line, &cap, in) > 0) {
		if (strncmp(line, "#BEGIN_TB", 9) == 0)
			in_body = 1, blocks++;
		if (!in_body) {
			if (strncmp(line, "-grid dim = ", 12) == 0)
				fprintf(out, "-grid dim = (%u,1,1)\n", copies);
			else
				fputs(line, out);
			continue;
		}
		if (strncmp(line, "insts = ", 8) == 0)
			insts += strtoull(line + 8, NULL, 10);
		if (n_body == body_cap) {
			body_cap = body_cap ? body_cap * 2 : 1024;
			body = realloc(body, body_cap * sizeof *body);
		}
		if (body == NULL || (body[n_body++] = strdup(line)) == NULL) {
			rc = -1;
			break;
		}
	}
	if (blocks != 1)
		rc = -1;
	for (unsigned c = 0; rc > 0 && c < copies; c++)
		for (size_t i = 0; rc > 0 && i < n_body; i++) {
			char copy[8192];
			if (strncmp(body[i], "thread block = ", 15) == 0)
				fprintf(out, "thread block = %u,0,0\n", c);
			else if (isxdigit((unsigned char)body[i][0]) && strlen(body[i]) < sizeof copy)
				rc = offset_line(out, strcpy(copy, body[i]), (uint64_t)c * MATMUL_SPAN) < 0
					 ? -1
					 : 1;
			else
				fputs(body[i], out);
		}
	for (size_t i = 0; i < n_body; i++)
		free(body[i]);
	free(body);
	free(line);
	fclose(in);
	if (fclose(out) != 0)
		rc = -1;
	*n_insts = insts * copies;
	return rc;
}

/* What a run does with the trace. */
enum stage {
	READ_BYTES, /* the reader's bytes, nothing else: the floor of any text input */
	READ_LINES, /* whole-line windows and one LF search per line: the floor of a line parser */
	PARSE,	    /* the trace reader's events */
	MODEL,	    /* the events through the model */
};

/* The first two stages through the same reader and options as the trace reader; bytes or lines in
 * *n. */
static int read_floor(const char *path, int lines, uint64_t *n, mpxkit_diag *d)
{
	mpxkit_reader_options opt = {MPXKIT_READER_TEXT | MPXKIT_READER_GZIP, 0, 1u << 20, "trace"};
	static char buf[1 << 16];
	mpxkit_reader *r;
	size_t len;
	char *text;
	int rc = mpxkit_reader_open(&r, path, &opt, d);

	*n = 0;
	while (rc == 0 && !lines && (rc = mpxkit_reader_read(r, buf, sizeof buf, &len, d)) == 0 &&
	       len > 0)
		*n += len;
	while (rc >= 0 && lines && (rc = mpxkit_reader_lines(r, &text, &len, d)) == 1) {
		uint64_t k = 0;
		for (char *p = text; (p = memchr(p, '\n', (size_t)(text + len - p))) != NULL; p++)
			k++;
		mpxkit_reader_skip(r, len, k);
		*n += k;
	}
	mpxkit_reader_close(r);
	return rc < 0 ? rc : 0;
}

/* CPU seconds to read the whole trace as stage says; wall seconds in *wall. */
static double run_once(const mpxkit_simt_gpu *gpu, const char *path, enum stage stage,
		       uint64_t *insts, double *wall)
{
	mpxkit_simt_trace *t = NULL;
	mpxkit_simt_sim *sim = NULL;
	mpxkit_simt_result *r = NULL;
	mpxkit_simt_step st;
	mpxkit_diag d = {0};
	double t0 = cpu_now(), w0 = now();
	int ev;

	if (stage == READ_BYTES || stage == READ_LINES) {
		if (read_floor(path, stage == READ_LINES, insts, &d) < 0)
			goto fail;
	} else if (mpxkit_simt_trace_open(path, &t, &d) < 0) {
		goto fail;
	} else if (stage == MODEL) {
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

/* Best of REPEATS; the rate per warp instruction of the trace (n), whatever the stage counts. */
static void measure(const mpxkit_simt_gpu *gpu, const char *what, const char *path,
		    enum stage stage, uint64_t n, double bytes)
{
	double best = 1e30, best_wall = 1e30;
	uint64_t got = 0;

	for (int r = 0; r < REPEATS; r++) {
		double wall, s = run_once(gpu, path, stage, &got, &wall);
		best = s < best ? s : best;
		best_wall = wall < best_wall ? wall : best_wall;
	}
	printf("| %s | %" PRIu64 " | %.3f | %.3f | %.2f | %.1f | %.0f |\n", what, got, best,
	       best_wall, n / best / 1e6, best / n * 1e9, bytes / best / 1e6);
}

/*
 * The same GPU with L1 and L2 of 2 and 16 sets: their state fits the host's
 * caches, so the model's time without host cache misses on it shows (the
 * counts and cycles differ; only the time is of interest).
 */
static mpxkit_simt_gpu *small_caches(const mpxkit_simt_gpu *gpu)
{
	mpxkit_simt_gpu *small = NULL;
	char *text = NULL, *out = NULL;
	size_t len = 0, outlen = 0;
	FILE *f = open_memstream(&text, &len), *o = open_memstream(&out, &outlen);

	if (f == NULL || o == NULL || mpxkit_simt_gpu_write(gpu, f) < 0 || fclose(f) != 0)
		return NULL;
	/* the canonical form, with the sets= field of the l1 and l2 lines replaced */
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sets = strstr(line, " sets=");
		if (sets && (strncmp(line, "l1 ", 3) == 0 || strncmp(line, "l2 ", 3) == 0))
			fprintf(o, "%.*s sets=%d%s\n", (int)(sets - line), line,
				line[1] == '1' ? 2 : 16, strchr(sets + 1, ' '));
		else
			fprintf(o, "%s\n", line);
	}
	if (fclose(o) != 0 || mpxkit_simt_gpu_parse("small caches", out, outlen, &small, NULL) < 0)
		small = NULL;
	free(text);
	free(out);
	return small;
}

/* The matrixmul rows, after the synthetic ones; skipped, with a line saying so, without the data. */
static void matmul_rows(const mpxkit_simt_gpu *qv100, const char *dir, const char *keep,
			unsigned copies)
{
	mpxkit_simt_gpu *gtx1080 = NULL;
	mpxkit_diag d = {0};
	char path[4096];
	uint64_t n = 0;
	struct stat st;
	int rc;

	if (keep)
		snprintf(path, sizeof path, "%s.matmul", keep);
	else
		snprintf(path, sizeof path, "%s/bench-simt-matmul-%d.traceg", dir, (int)getpid());
	rc = write_matmul(path, copies, &n);
	if (rc <= 0) {
		printf("\nmatrixmul rows skipped: %s\n",
		       rc == 0 ? "../shared/data/simt is not there (set MPXKIT_SHARED)"
			       : "its trace is not in the form expected");
		remove(path);
		return;
	}
	if (stat(path, &st) != 0 || mpxkit_simt_gpu_load("gtx1080", &gtx1080, &d) < 0) {
		printf("\nmatrixmul rows skipped: %s\n", d.msg[0] ? d.msg : path);
		remove(path);
		return;
	}
	printf("\nReal kernel: matrixmul-32-32 (GTX 1080 trace) as %u blocks, each its block with "
	       "its global addresses moved by 12 KB per copy, %" PRIu64 " warp instructions, %.1f MB "
	       "of text.\n\n",
	       copies, n, (double)st.st_size / 1e6);
	printf("| run | warp instructions | CPU s | wall s | M warp inst/s (CPU) | "
	       "ns per warp inst (CPU) | MB/s of text (CPU) |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	measure(qv100, "matrixmul: parse only, plain", path, PARSE, n, (double)st.st_size);
	measure(qv100, "matrixmul: parse + model (qv100), plain", path, MODEL, n, (double)st.st_size);
	measure(gtx1080, "matrixmul: parse + model (gtx1080), plain", path, MODEL, n, (double)st.st_size);
	mpxkit_simt_gpu_free(gtx1080);
	if (!keep)
		remove(path);
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	unsigned blocks = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	const char *keep = argc > 2 ? argv[2] : NULL; /* keep the plain trace there (profiling) */
	char plain[4096], packed[4096];
	mpxkit_simt_gpu *gpu = NULL, *small;
	mpxkit_diag d = {0};
	uint64_t n;
	FILE *f;
	gzFile gz;
	long plain_bytes;

	if (mpxkit_simt_gpu_load("qv100", &gpu, &d) < 0 || (small = small_caches(gpu)) == NULL) {
		fprintf(stderr,
			"bench_simt: %s (run with MPXKIT_DATADIR=data from the source tree)\n",
			d.msg);
		return 2;
	}
	if (keep)
		snprintf(plain, sizeof plain, "%s", keep);
	else
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
	printf("| run | bytes, lines or warp instructions | CPU s | wall s | M warp inst/s (CPU) | "
	       "ns per warp inst (CPU) | "
	       "MB/s of text (CPU) |\n");
	printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	measure(gpu, "read the bytes (floor), plain", plain, READ_BYTES, n, (double)plain_bytes);
	measure(gpu, "read whole lines (floor), plain", plain, READ_LINES, n, (double)plain_bytes);
	measure(gpu, "parse only, plain", plain, PARSE, n, (double)plain_bytes);
	measure(small, "parse + model, small caches, plain", plain, MODEL, n, (double)plain_bytes);
	measure(gpu, "parse + model, plain", plain, MODEL, n, (double)plain_bytes);
	measure(gpu, "parse + model, gzip -1", packed, MODEL, n, (double)plain_bytes);
	if (!keep)
		remove(plain);
	remove(packed);
	matmul_rows(gpu, dir, keep, blocks * 2);
	mpxkit_simt_gpu_free(small);
	mpxkit_simt_gpu_free(gpu);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* .pcz against gzip, zstd and xz on the same per-unit counters, in one process (doc/benchmarks.md). */
#include <inttypes.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "mpxkit/pcz.h"

/* One data row: a unit's counters in one region. */
struct row {
	char *region, *unit;
	uint64_t *v; /* start, end, then the counters */
};

struct data {
	char **events;
	size_t n_events, n_rows;
	struct row *rows;
	uint8_t *le64; /* every row's values as 64-bit little-endian integers */
	size_t le64_len;
	size_t *run, n_runs; /* first row of each region (a run of rows of one name), then n_rows */
};

static void die(const char *what)
{
	fprintf(stderr, "pcz_bench: %s\n", what);
	exit(2);
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (d == NULL)
		die("out of memory");
	return d;
}

/*
 * The CSV of mpxkit pack without placement columns, plain or gzip-compressed
 * (data/threads-dev keeps its files as .csv.gz); '#' lines are skipped.
 */
static void load(const char *path, struct data *d)
{
	gzFile f = gzopen(path, "rb");
	static char line[1 << 16];
	size_t rows_cap = 0, n;

	if (f == NULL)
		die("cannot open input");
	memset(d, 0, sizeof *d);
	while (gzgets(f, line, sizeof line) != NULL && (n = strlen(line)) > 0) {
		char *save, *tok;
		size_t i = 0;
		if (line[n - 1] != '\n' && !gzeof(f))
			die("line too long");
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (line[0] == '#')
			continue;
		if (d->events == NULL) {
			for (tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
				if (i < 4)
					continue;
				d->events = realloc(d->events, (i - 3) * sizeof *d->events);
				if (d->events == NULL)
					die("out of memory");
				d->events[i - 4] = xstrdup(tok);
				d->n_events = i - 3;
			}
			continue;
		}
		if (d->n_rows == rows_cap) {
			rows_cap = rows_cap ? 2 * rows_cap : 1024;
			d->rows = realloc(d->rows, rows_cap * sizeof *d->rows);
			if (d->rows == NULL)
				die("out of memory");
		}
		struct row *r = &d->rows[d->n_rows++];
		r->v = malloc((2 + d->n_events) * sizeof *r->v);
		if (r->v == NULL)
			die("out of memory");
		for (tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
			if (i == 0)
				r->region = xstrdup(tok);
			else if (i == 1)
				r->unit = xstrdup(tok);
			else if (i < 4 + d->n_events)
				r->v[i - 2] = strtoull(tok, NULL, 10);
		}
		if (i != 4 + d->n_events)
			die("ragged row");
	}
	gzclose(f);
	/* Regions are found here, like the packing of the other methods: outside the timing. */
	d->run = malloc((d->n_rows + 1) * sizeof *d->run);
	if (d->run == NULL)
		die("out of memory");
	for (size_t r = 0; r < d->n_rows; r++)
		if (r == 0 || strcmp(d->rows[r].region, d->rows[r - 1].region) != 0)
			d->run[d->n_runs++] = r;
	d->run[d->n_runs] = d->n_rows;
	d->le64_len = d->n_rows * (2 + d->n_events) * 8;
	d->le64 = malloc(d->le64_len);
	if (d->le64 == NULL)
		die("out of memory");
	for (size_t r = 0, o = 0; r < d->n_rows; r++)
		for (size_t j = 0; j < 2 + d->n_events; j++)
			for (int b = 0; b < 8; b++)
				d->le64[o++] = (uint8_t)(d->rows[r].v[j] >> (8 * b));
}

/* Whether name contains one of the comma-separated words of only. */
static int selected(const char *only, const char *name)
{
	for (const char *p = only; *p;) {
		size_t n = strcspn(p, ",");
		for (const char *q = name; *q; q++)
			if (strncmp(q, p, n) == 0)
				return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/*
 * CPU time of the process, not wall time: the machine is shared, and time
 * spent waiting for a CPU is not the code's (it still pays for caches that
 * other jobs evict, which the best of many batches makes rare).
 */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A method compresses in into out (returns its size) and decompresses it back. */
typedef struct method {
	const char *name;
	size_t (*compress)(const struct method *m, const struct data *d, uint8_t *out, size_t cap);
	void (*decompress)(const struct method *m, const struct data *d, const uint8_t *in,
			   size_t n, uint8_t *out);
	int level;
	mpxkit_pcz_codec codec;
	mpxkit_pcz_grouping grouping;
	int defaults; /* pcz: mpxkit_pcz_options_init as it is, what a producer gets */
} method;

static size_t gzip_c(const method *m, const struct data *d, uint8_t *out, size_t cap)
{
	z_stream z;
	size_t n;

	memset(&z, 0, sizeof z);
	/* windowBits 15 + 16: the gzip wrapper, as gzip -9 writes it. */
	if (deflateInit2(&z, m->level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		die("deflateInit2");
	z.next_in = d->le64;
	z.avail_in = (uInt)d->le64_len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		die("deflate");
	n = z.total_out;
	deflateEnd(&z);
	return n;
}

static void gzip_d(const method *m, const struct data *d, const uint8_t *in, size_t n,
		   uint8_t *out)
{
	z_stream z;
	(void)m;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		die("inflateInit2");
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)d->le64_len;
	if (inflate(&z, Z_FINISH) != Z_STREAM_END || z.total_out != d->le64_len)
		die("inflate");
	inflateEnd(&z);
}

static size_t zstd_c(const method *m, const struct data *d, uint8_t *out, size_t cap)
{
	size_t n = ZSTD_compress(out, cap, d->le64, d->le64_len, m->level);
	if (ZSTD_isError(n))
		die("ZSTD_compress");
	return n;
}

static void zstd_d(const method *m, const struct data *d, const uint8_t *in, size_t n,
		   uint8_t *out)
{
	(void)m;
	if (ZSTD_decompress(out, d->le64_len, in, n) != d->le64_len)
		die("ZSTD_decompress");
}

static size_t xz_c(const method *m, const struct data *d, uint8_t *out, size_t cap)
{
	size_t pos = 0;
	/* xz -9e: preset 9 | EXTREME, CRC64 check, the xz tool's defaults. */
	if (lzma_easy_buffer_encode((uint32_t)m->level | LZMA_PRESET_EXTREME, LZMA_CHECK_CRC64, NULL,
				    d->le64, d->le64_len, out, &pos, cap) != LZMA_OK)
		die("lzma_easy_buffer_encode");
	return pos;
}

static void xz_d(const method *m, const struct data *d, const uint8_t *in, size_t n, uint8_t *out)
{
	uint64_t limit = UINT64_MAX;
	size_t in_pos = 0, out_pos = 0;
	(void)m;
	if (lzma_stream_buffer_decode(&limit, 0, NULL, in, &in_pos, n, out, &out_pos,
				      d->le64_len) != LZMA_OK ||
	    out_pos != d->le64_len)
		die("lzma_stream_buffer_decode");
}

static const char *scratch_path(void)
{
	static char path[256];
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(path, sizeof path, "%s/pcz_bench.%ld.pcz", dir, (long)getpid());
	return path;
}

/*
 * The writer API as a producer would use it: open, one add_region per
 * region's run of rows, close.  to_file: the file writer (temp file, fsync,
 * rename in /dev/shm) and a read back; else the memory writer, whose bytes
 * are copied into out like the other methods' output.
 */
static size_t pcz_run(const method *m, const struct data *d, uint8_t *out, size_t cap,
		      int to_file)
{
	mpxkit_pcz_options opt;
	mpxkit_pcz_writer *w;
	mpxkit_pcz_unit *units = malloc(d->n_rows * sizeof *units);
	mpxkit_diag diag = { 0 };
	FILE *f;
	size_t n;

	if (units == NULL)
		die("out of memory");
	mpxkit_pcz_options_init(&opt);
	if (!m->defaults) {
		opt.codec = m->codec;
		opt.level = m->level;
		opt.grouping = m->grouping;
	}
	if ((to_file ? mpxkit_pcz_writer_open(scratch_path(), &opt, d->n_events,
					      (const char *const *)d->events, &w, &diag)
		     : mpxkit_pcz_writer_open_memory(&opt, d->n_events,
						     (const char *const *)d->events, &w, &diag)) < 0)
		die(diag.msg);
	for (size_t g = 0; g < d->n_runs; g++) {
		size_t k = 0;
		for (size_t r = d->run[g]; r < d->run[g + 1]; r++) {
			const struct row *x = &d->rows[r];
			units[k++] = (mpxkit_pcz_unit){ x->unit, 1, x->v, x->v + 2, -1, -1 };
		}
		if (mpxkit_pcz_writer_add_region(w, d->rows[d->run[g]].region, k, units, &diag) < 0)
			die(diag.msg);
	}
	free(units);
	if (!to_file) {
		void *bytes;
		if (mpxkit_pcz_writer_close_memory(w, &bytes, &n, &diag) < 0)
			die(diag.msg);
		if (n > cap)
			die("pcz output above the buffer");
		memcpy(out, bytes, n);
		free(bytes);
		return n;
	}
	if (mpxkit_pcz_writer_close(w, &diag) < 0)
		die(diag.msg);
	f = fopen(scratch_path(), "rb");
	if (f == NULL)
		die("cannot reopen the .pcz");
	n = fread(out, 1, cap, f);
	fclose(f);
	return n;
}

static size_t pcz_c(const method *m, const struct data *d, uint8_t *out, size_t cap)
{
	return pcz_run(m, d, out, cap, 0);
}

static size_t pcz_file_c(const method *m, const struct data *d, uint8_t *out, size_t cap)
{
	return pcz_run(m, d, out, cap, 1);
}

/* n values as little-endian 64-bit integers: a copy on a little-endian machine, as zstd writes them. */
static void put_le64(uint8_t *out, const uint64_t *v, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, v, n * sizeof *v);
#else
	for (size_t j = 0; j < n; j++)
		for (int b = 0; b < 8; b++)
			out[8 * j + b] = (uint8_t)(v[j] >> (8 * b));
#endif
}

/* Decodes every region into out as the same 64-bit rows, which main compares with the input. */
static void pcz_d(const method *m, const struct data *d, const uint8_t *in, size_t n, uint8_t *out)
{
	mpxkit_pcz_reader *r;
	const mpxkit_pcz_region *reg;
	mpxkit_diag diag = { 0 };
	size_t o = 0;
	int rc;

	(void)m;
	if (mpxkit_pcz_reader_open_mem(in, n, "bench", &r, &diag) < 0)
		die(diag.msg);
	while ((rc = mpxkit_pcz_reader_next(r, &reg, &diag)) == 1)
		for (size_t u = 0; u < reg->n_units; u++) {
			const mpxkit_pcz_unit *x = &reg->units[u];
			if (o + (2 + d->n_events) * 8 > d->le64_len)
				die("pcz decoded too many rows");
			put_le64(out + o, x->times, 2);
			put_le64(out + o + 16, x->values, d->n_events);
			o += (2 + d->n_events) * 8;
		}
	if (rc < 0)
		die(diag.msg);
	mpxkit_pcz_reader_free(r);
}

/*
 * Best of 25 batches, each at least 20 ms: on a machine shared with other
 * jobs, short batches make it likely that some run without being preempted,
 * and the best of them is the speed of the code rather than of the load.
 */
static double time_it(const method *m, const struct data *d, int decompress, uint8_t *buf,
		      size_t cap, const uint8_t *packed, size_t packed_len, uint8_t *out)
{
	double best = 1e30;

	for (int batch = 0; batch < 25; batch++) {
		double t0 = now(), t;
		long it = 0;
		do {
			if (decompress)
				m->decompress(m, d, packed, packed_len, out);
			else
				m->compress(m, d, buf, cap);
			it++;
			t = now() - t0;
		} while (t < 0.02);
		if (t / (double)it < best)
			best = t / (double)it;
	}
	return best;
}

int main(int argc, char **argv)
{
	const method methods[] = {
		{ "gzip -9", gzip_c, gzip_d, 9, 0, 0, 0 },
		{ "zstd -3", zstd_c, zstd_d, 3, 0, 0, 0 },
		{ "zstd -19", zstd_c, zstd_d, 19, 0, 0, 0 },
		{ "xz -9e", xz_c, xz_d, 9, 0, 0, 0 },
		/* The defaults: the model codec, format version 2. */
		{ "pcz default (v2 model)", pcz_c, pcz_d, 0, 0, 0, 1 },
		{ "pcz default (file)", pcz_file_c, pcz_d, 0, 0, 0, 1 },
		/* Version 1: the default before (zstd 1, the fast coder) and the ratio setting. */
		{ "pcz v1 zstd-1 none", pcz_c, pcz_d, 1, MPXKIT_PCZ_ZSTD, MPXKIT_PCZ_GROUP_NONE, 0 },
		{ "pcz v1 zstd-19 none", pcz_c, pcz_d, 19, MPXKIT_PCZ_ZSTD, MPXKIT_PCZ_GROUP_NONE, 0 },
		{ "pcz v1 zstd-3 auto", pcz_c, pcz_d, 3, MPXKIT_PCZ_ZSTD, MPXKIT_PCZ_GROUP_AUTO, 0 },
	};
	size_t n_methods = sizeof methods / sizeof methods[0];
	const char *only = getenv("PCZ_BENCH_ONLY");
	/* PCZ_BENCH_ONCE=1: one compression and one decompression per method, no timing (callgrind).
	 * PCZ_BENCH_REPEAT=N with it: N more compressions, so that callgrind's count over N + 1
	 * calls less that over 1 gives a warm call's, as the timed runs make them (pools and
	 * buffers taken, the library's symbols bound). */
	int once = getenv("PCZ_BENCH_ONCE") != NULL;
	long repeat = getenv("PCZ_BENCH_REPEAT") ? atol(getenv("PCZ_BENCH_REPEAT")) : 0;

	if (argc < 2) {
		fprintf(stderr, "usage: pcz_bench FILE.csv...\n");
		return 1;
	}
	printf("| data | rows | 64-bit bytes | method | size | ratio | compress MB/s | decompress MB/s |\n");
	printf("|---|---:|---:|---|---:|---:|---:|---:|\n");
	for (int a = 1; a < argc; a++) {
		struct data d;
		const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
		size_t cap;
		uint8_t *buf, *out;

		load(argv[a], &d);
		cap = 2 * d.le64_len + (1 << 16);
		buf = malloc(cap);
		out = malloc(d.le64_len + 1);
		if (buf == NULL || out == NULL)
			die("out of memory");
		for (size_t i = 0; i < n_methods; i++) {
			const method *m = &methods[i];
			size_t n;
			double tc, td;
			/* PCZ_BENCH_ONLY=NAME runs the methods whose name contains NAME (profiling). */
			if (only && !selected(only, m->name))
				continue;
			n = m->compress(m, &d, buf, cap);
			memset(out, 0, d.le64_len);
			m->decompress(m, &d, buf, n, out);
			/* Lossless, or the row is worthless. */
			if (memcmp(out, d.le64, d.le64_len) != 0)
				die("round trip changed the data");
			if (once) {
				for (long k = 0; k < repeat; k++)
					m->compress(m, &d, buf, cap);
				printf("| %s | %zu | %zu | %s | %zu | %.2f | | |\n", name, d.n_rows,
				       d.le64_len, m->name, n, (double)d.le64_len / (double)n);
				continue;
			}
			tc = time_it(m, &d, 0, buf, cap, NULL, 0, NULL);
			n = m->compress(m, &d, buf, cap);
			td = getenv("PCZ_BENCH_NO_DECOMPRESS") ? 1e30 : time_it(m, &d, 1, NULL, 0, buf, n, out);
			printf("| %s | %zu | %zu | %s | %zu | %.2f | %.1f | %.1f |\n", name, d.n_rows,
			       d.le64_len, m->name, n, (double)d.le64_len / (double)n,
			       (double)d.le64_len / tc / 1e6, (double)d.le64_len / td / 1e6);
			fflush(stdout);
		}
		free(buf);
		free(out);
	}
	unlink(scratch_path());
	return 0;
}

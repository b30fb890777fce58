/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fuzz target as a plain program (after zstd's tests/fuzz/regression_driver.c): runs it over
 * every file of the corpus directories given, and holds the golden files to their promise:
 * NAME.IN next to NAME.OUT decodes to exactly that text, bad-*.IN fails with an error.  It is
 * compiled once per target with FUZZ_IN (".pcz"), FUZZ_OUT (".csv") and FUZZ_GOLDEN (the
 * corpus under ctests/golden used when no directory is given) defined, and FUZZ_CHECKSUMS
 * when the format carries checksums that fuzzing builds skip.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"

#if !defined(FUZZ_IN) || !defined(FUZZ_OUT) || !defined(FUZZ_GOLDEN)
#error "compile with -DFUZZ_IN=... -DFUZZ_OUT=... -DFUZZ_GOLDEN=..."
#endif

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (f == NULL)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	*buf = malloc((size_t)n + 1);
	if (*buf == NULL || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		free(*buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*len = (size_t)n;
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* 0 when the file keeps its promise, 1 otherwise (with a line on stderr). */
static int check_file(const char *dir, const char *name)
{
	char path[4096], want_path[4096];
	uint8_t *data = NULL, *want = NULL;
	size_t len, want_len, got_len = 0;
	char *got = NULL;
	FILE *mem;
	int rc, fail = 0;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (read_file(path, &data, &len) != 0) {
		fprintf(stderr, "%s: cannot read\n", path);
		return 1;
	}
	LLVMFuzzerTestOneInput(data, len);
	if (!ends_with(name, FUZZ_IN)) {
		free(data);
		return 0;
	}
	mem = open_memstream(&got, &got_len);
	if (mem == NULL) {
		free(data);
		return 1;
	}
	rc = fuzz_decode(data, len, mem);
	fclose(mem);
	if (strncmp(name, "bad-", 4) == 0) {
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) && defined(FUZZ_CHECKSUMS)
		/* Checksums are off in fuzzing builds: some damaged files decode there. */
		rc = -1;
#endif
		if (rc >= 0) {
			fprintf(stderr, "%s: damaged file decoded without an error\n", path);
			fail = 1;
		}
	} else {
		snprintf(want_path, sizeof want_path, "%.*s%s",
			 (int)(strlen(path) - strlen(FUZZ_IN)), path, FUZZ_OUT);
		if (rc < 0) {
			fprintf(stderr, "%s: golden file fails to decode (%d)\n", path, rc);
			fail = 1;
		} else if (read_file(want_path, &want, &want_len) != 0) {
			fprintf(stderr, "%s: no %s to compare with\n", path, want_path);
			fail = 1;
		} else if (want_len != got_len || memcmp(want, got, got_len) != 0) {
			fprintf(stderr, "%s: decodes to other text than %s\n", path, want_path);
			fail = 1;
		}
	}
	free(got);
	free(want);
	free(data);
	return fail;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *n_files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int fail = 0;

	if (d == NULL) {
		fprintf(stderr, "%s: cannot open the corpus\n", dir);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		char **grown;
		if (e->d_name[0] == '.' || ends_with(e->d_name, FUZZ_OUT))
			continue;
		grown = realloc(names, (n + 1) * sizeof *names);
		if (grown == NULL)
			break;
		names = grown;
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		fail |= check_file(dir, names[i]);
		free(names[i]);
	}
	free(names);
	*n_files += (int)n;
	return fail;
}

int main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char dflt[4096];
	int fail = 0, n_files = 0;

	if (argc < 2) {
		snprintf(dflt, sizeof dflt, "%s/ctests/golden/" FUZZ_GOLDEN,
			 top && *top ? top : ".");
		fail = run_dir(dflt, &n_files);
	}
	for (int i = 1; i < argc; i++)
		fail |= run_dir(argv[i], &n_files);
	printf("%d corpus files, %s\n", n_files, fail ? "FAILED" : "all as expected");
	if (n_files == 0)
		return 1;
	return fail;
}

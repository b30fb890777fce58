/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files: whole under the final name, or nothing there at all. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/outfile.h"

static int setup(void)
{
	return cutest_scratch_make("outfile");
}

/* Entries in the test directory, so a stray temporary file is caught. */
static int count_entries(void)
{
	DIR *d = opendir(cutest_scratch());
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}


static void test_write_all_then_read_back(void)
{
	char buf[64] = { 0 };
	FILE *f;
	size_t n;
	const char *path = cutest_scratch_path("a.txt");

	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(path, "hello\n", 6, NULL), 0);
	f = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	CU_ASSERT_EQUAL(n, 6);
	CU_ASSERT_STRING_EQUAL(buf, "hello\n");
	CU_ASSERT_EQUAL(count_entries(), 1);
	unlink(path);
}

static void test_mode_follows_umask(void)
{
	struct stat st;
	mode_t old = umask(022);
	const char *path = cutest_scratch_path("mode.txt");

	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(path, "x", 1, NULL), 0);
	umask(old);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644);
	unlink(path);
}

static void test_nothing_before_commit(void)
{
	mpxkit_outfile *f = NULL;
	const char *path = cutest_scratch_path("b.txt");
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_open(&f, path, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write(f, "part", 4, NULL), 0);
	CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(count_entries(), 1); /* the temporary file only */
	CU_ASSERT_EQUAL(mpxkit_outfile_commit(f, NULL), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 4);
	CU_ASSERT_EQUAL(count_entries(), 1);
	unlink(path);
}

static void test_abort_leaves_nothing(void)
{
	mpxkit_outfile *f = NULL;
	const char *path = cutest_scratch_path("c.txt");

	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_open(&f, path, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write(f, "part", 4, NULL), 0);
	mpxkit_outfile_abort(f);
	mpxkit_outfile_abort(NULL);
	CU_ASSERT_EQUAL(count_entries(), 0);
}

static void test_abort_keeps_old_file(void)
{
	mpxkit_outfile *f = NULL;
	const char *path = cutest_scratch_path("d.txt");
	char buf[8] = { 0 };
	FILE *in;

	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_write_all(path, "old", 3, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_open(&f, path, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write(f, "new!", 4, NULL), 0);
	mpxkit_outfile_abort(f);
	in = fopen(path, "rb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_EQUAL(fread(buf, 1, sizeof buf - 1, in), 3);
	fclose(in);
	CU_ASSERT_STRING_EQUAL(buf, "old");
	unlink(path);
}

static void test_missing_directory_is_one_line(void)
{
	mpxkit_diag d = { 0 };
	mpxkit_outfile *f = NULL;
	const char *path = cutest_scratch_path("no/such/dir/e.txt");
	int rc = mpxkit_outfile_open(&f, path, &d);

	CU_ASSERT_EQUAL(rc, -MPXKIT_ESYS);
	CU_ASSERT_PTR_NULL(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "e.txt"));
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "No such file or directory"));
	CU_ASSERT_PTR_NULL(strchr(d.msg, '\n'));
	CU_ASSERT_EQUAL(mpxkit_outfile_open(&f, NULL, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_outfile_open(&f, "", &d), -MPXKIT_EINVAL);
}

static const cutest_case outfile_cases[] = {
	{ "write_all then read back", test_write_all_then_read_back },
	{ "mode follows umask", test_mode_follows_umask },
	{ "nothing under the final name before commit", test_nothing_before_commit },
	{ "abort leaves nothing", test_abort_leaves_nothing },
	{ "abort keeps the old file", test_abort_keeps_old_file },
	{ "missing directory is one line", test_missing_directory_is_one_line },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "outfile", outfile_cases, setup, cutest_scratch_remove },
					{ NULL, NULL, NULL, NULL } };
	return cutest_run("test_outfile", suites);
}

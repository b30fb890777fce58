/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files: whole under the final name, or nothing there at all. */
#include <fcntl.h>
#include <pthread.h>
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
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1);
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
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1); /* the temporary file only */
	CU_ASSERT_EQUAL(mpxkit_outfile_commit(f, NULL), 0);
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 4);
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1);
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
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 0);
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


/* Contents of a file, or "" when it cannot be read. */
static const char *slurp_text(const char *path)
{
	static char buf[256];
	FILE *in = fopen(path, "rb");
	size_t n = 0;

	buf[0] = '\0';
	if (in) {
		n = fread(buf, 1, sizeof buf - 1, in);
		fclose(in);
	}
	buf[n] = '\0';
	return buf;
}

struct fifo_reader {
	const char *path;
	char got[64];
};

static void *read_fifo(void *arg)
{
	struct fifo_reader *r = arg;
	FILE *in = fopen(r->path, "rb");
	size_t n = 0;

	if (in) {
		n = fread(r->got, 1, sizeof r->got - 1, in);
		fclose(in);
	}
	r->got[n] = '\0';
	return NULL;
}

static void test_fifo_written_through(void)
{
	struct fifo_reader r = { .path = cutest_scratch_path("fifo") };
	pthread_t t;
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(mkfifo(r.path, 0600), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_check(r.path, NULL, 0, NULL), 0); /* must not wait for a reader */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, read_fifo, &r), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(r.path, "through\n", 8, NULL), 0);
	pthread_join(t, NULL);
	CU_ASSERT_STRING_EQUAL(r.got, "through\n");
	CU_ASSERT_EQUAL_FATAL(lstat(r.path, &st), 0);
	CU_ASSERT_TRUE(S_ISFIFO(st.st_mode));
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1);
	unlink(r.path);
}

static void test_symlink_target_replaced(void)
{
	const char *target = cutest_scratch_path("target.txt");
	const char *link = cutest_scratch_path("link.txt");
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_write_all(target, "old", 3, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("target.txt", link), 0); /* relative to the link's directory */
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(link, "new", 3, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(link, &st), 0);
	CU_ASSERT_TRUE(S_ISLNK(st.st_mode));
	CU_ASSERT_STRING_EQUAL(slurp_text(target), "new");
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 2);
	unlink(link);
	unlink(target);
}

static void test_dangling_symlink_creates_target(void)
{
	const char *target = cutest_scratch_path("later.txt");
	const char *link = cutest_scratch_path("dangling");
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(symlink(target, link), 0); /* absolute */
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(link, "made", 4, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(link, &st), 0);
	CU_ASSERT_TRUE(S_ISLNK(st.st_mode));
	CU_ASSERT_STRING_EQUAL(slurp_text(target), "made");
	unlink(link);
	unlink(target);
}

static void test_symlink_to_fifo_written_through(void)
{
	struct fifo_reader r = { .path = cutest_scratch_path("fifo2") };
	const char *link = cutest_scratch_path("to-fifo");
	pthread_t t;
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(mkfifo(r.path, 0600), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(r.path, link), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, read_fifo, &r), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(link, "via link\n", 9, NULL), 0);
	pthread_join(t, NULL);
	CU_ASSERT_STRING_EQUAL(r.got, "via link\n");
	CU_ASSERT_EQUAL_FATAL(lstat(link, &st), 0);
	CU_ASSERT_TRUE(S_ISLNK(st.st_mode));
	CU_ASSERT_EQUAL_FATAL(lstat(r.path, &st), 0);
	CU_ASSERT_TRUE(S_ISFIFO(st.st_mode));
	unlink(link);
	unlink(r.path);
}

static void test_symlink_loop_refused(void)
{
	const char *a = cutest_scratch_path("loop-a");
	const char *b = cutest_scratch_path("loop-b");
	mpxkit_diag d = { 0 };

	CU_ASSERT_EQUAL_FATAL(symlink("loop-b", a), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("loop-a", b), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(a, "x", 1, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "symbolic links"));
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 2);
	unlink(a);
	unlink(b);
}

static void test_directory_refused(void)
{
	mpxkit_diag d = { 0 };
	mpxkit_outfile *f = NULL;
	char path[4096];

	snprintf(path, sizeof path, "%s/", cutest_scratch());
	CU_ASSERT_EQUAL(mpxkit_outfile_open(&f, path, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "Is a directory"));
	CU_ASSERT_EQUAL(mpxkit_outfile_check(cutest_scratch(), NULL, 0, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "Is a directory"));
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 0);
}

static void test_check_leaves_nothing(void)
{
	mpxkit_diag d = { 0 };
	const char *path = cutest_scratch_path("checked.txt");
	struct stat st;

	CU_ASSERT_EQUAL(mpxkit_outfile_check(path, NULL, 0, &d), 0);
	CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_check(cutest_scratch_path("no/dir/x"), NULL, 0, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "No such file or directory"));
}

static void test_stdout_dash(void)
{
	mpxkit_outfile *f = NULL;

	CU_ASSERT_EQUAL_FATAL(mpxkit_outfile_open(&f, "-", NULL), 0);
	CU_ASSERT_TRUE(mpxkit_outfile_is_stream(f));
	CU_ASSERT_EQUAL(mpxkit_outfile_fd(f), 1);
	CU_ASSERT_EQUAL(mpxkit_outfile_commit(f, NULL), 0);
	/* Standard output stays open for the caller. */
	CU_ASSERT_NOT_EQUAL(fcntl(1, F_GETFD), -1);
}


/* Writes text to path (a scratch file) as an input would be. */
static void make_input(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void test_output_that_is_an_input_refused(void)
{
	char in[4096], other[4096], link_[4096], hard[4096], fresh[4096];
	const char *inputs[3];
	mpxkit_diag d = { 0 };

	snprintf(in, sizeof in, "%s", cutest_scratch_path("in.csv"));
	snprintf(other, sizeof other, "%s", cutest_scratch_path("other.csv"));
	snprintf(link_, sizeof link_, "%s", cutest_scratch_path("link.csv"));
	snprintf(hard, sizeof hard, "%s", cutest_scratch_path("hard.csv"));
	snprintf(fresh, sizeof fresh, "%s", cutest_scratch_path("fresh.csv"));
	make_input(in, "a\n1\n");
	make_input(other, "b\n2\n");
	CU_ASSERT_EQUAL_FATAL(symlink("in.csv", link_), 0);
	CU_ASSERT_EQUAL_FATAL(link(in, hard), 0);
	inputs[0] = other;
	inputs[1] = NULL; /* an input not given is skipped */
	inputs[2] = in;

	/* The input itself, a link whose target it is, a hard link of it. */
	CU_ASSERT_EQUAL(mpxkit_outfile_check(in, inputs, 3, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(d.code, -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "is the same file as the input"));
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "in.csv"));
	CU_ASSERT_PTR_NULL(strchr(d.msg, '\n'));
	CU_ASSERT_EQUAL(mpxkit_outfile_check(link_, inputs, 3, &d), -MPXKIT_EINVAL);
	CU_ASSERT_EQUAL(mpxkit_outfile_check(hard, inputs, 3, &d), -MPXKIT_EINVAL);
	/* The input named through the link, the output by its own name. */
	inputs[2] = link_;
	CU_ASSERT_EQUAL(mpxkit_outfile_check(in, inputs, 3, &d), -MPXKIT_EINVAL);
	/* Not compared when no inputs are given, and a new file is no input. */
	CU_ASSERT_EQUAL(mpxkit_outfile_check(in, NULL, 0, &d), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_check(fresh, inputs, 3, &d), 0);
	/* An input that does not exist is left to its reader. */
	inputs[0] = cutest_scratch_path("missing.csv");
	CU_ASSERT_EQUAL(mpxkit_outfile_check(other, inputs, 1, &d), 0);
	/* Nothing was changed or left behind. */
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 4);
	unlink(in), unlink(other), unlink(link_), unlink(hard);
}

static void test_standard_input_compared(void)
{
	const char *in = cutest_scratch_path("stdin.csv");
	const char *inputs[] = { "-" };
	mpxkit_diag d = { 0 };
	int saved = dup(STDIN_FILENO), fd;

	make_input(in, "x\n");
	fd = open(in, O_RDONLY);
	CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
	CU_ASSERT_EQUAL_FATAL(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	CU_ASSERT_EQUAL(mpxkit_outfile_check(in, inputs, 1, &d), -MPXKIT_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "(standard input)"));
	dup2(saved, STDIN_FILENO);
	close(saved);
	unlink(in);
}

static void test_devices_never_compared(void)
{
	const char *inputs[] = { "/dev/null" };

	/* A device read and written at once (a terminal, /dev/null) replaces nothing. */
	CU_ASSERT_EQUAL(mpxkit_outfile_check("/dev/null", inputs, 1, NULL), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_check("-", inputs, 1, NULL), 0);
}

static const cutest_case outfile_cases[] = {
	{ "write_all then read back", test_write_all_then_read_back },
	{ "mode follows umask", test_mode_follows_umask },
	{ "nothing under the final name before commit", test_nothing_before_commit },
	{ "abort leaves nothing", test_abort_leaves_nothing },
	{ "abort keeps the old file", test_abort_keeps_old_file },
	{ "missing directory is one line", test_missing_directory_is_one_line },
	{ "a FIFO is written through", test_fifo_written_through },
	{ "a symlink's target is replaced, the link stays", test_symlink_target_replaced },
	{ "a dangling symlink creates its target", test_dangling_symlink_creates_target },
	{ "a symlink to a FIFO is written through", test_symlink_to_fifo_written_through },
	{ "a symlink loop is refused", test_symlink_loop_refused },
	{ "a directory is refused", test_directory_refused },
	{ "check leaves nothing behind", test_check_leaves_nothing },
	{ "- is standard output", test_stdout_dash },
	{ "an output that is an input is refused", test_output_that_is_an_input_refused },
	{ "standard input is compared", test_standard_input_compared },
	{ "devices are never compared", test_devices_never_compared },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "outfile", outfile_cases, setup, cutest_scratch_remove },
					{ NULL, NULL, NULL, NULL } };
	return cutest_run("test_outfile", suites);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files on character devices: written through, never replaced by a regular file. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cutest.h"
#include "mpxkit/outfile.h"

/*
 * Device nodes of our own in the scratch directory (twins of /dev/null,
 * major 1 minor 3, and /dev/full, 1 7), so the test never writes to the
 * system's.  mknod needs root; without it the program skips.
 */
static int setup(void)
{
	return cutest_scratch_make("outdev");
}



static void test_device_written_through(void)
{
	const char *dev = cutest_scratch_path("null");
	struct stat st;

	CU_ASSERT_EQUAL_FATAL(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(dev, "data\n", 5, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(dev, &st), 0);
	CU_ASSERT_TRUE(S_ISCHR(st.st_mode));
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1);
	unlink(dev);
}

static void test_full_device_is_an_error(void)
{
	const char *dev = cutest_scratch_path("full");
	mpxkit_diag d = { 0 };
	struct stat st;

	/* /dev/full's numbers: every write fails with ENOSPC. */
	CU_ASSERT_EQUAL_FATAL(mknod(dev, S_IFCHR | 0666, makedev(1, 7)), 0);
	CU_ASSERT_EQUAL(mpxkit_outfile_write_all(dev, "data\n", 5, &d), -MPXKIT_ESYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "No space left on device"));
	CU_ASSERT_EQUAL_FATAL(lstat(dev, &st), 0);
	CU_ASSERT_TRUE(S_ISCHR(st.st_mode));
	CU_ASSERT_EQUAL(cutest_scratch_entries(), 1);
	unlink(dev);
}

static const cutest_case device_cases[] = {
	{ "a device is written through", test_device_written_through },
	{ "a full device is an error, and stays a device", test_full_device_is_an_error },
	{ NULL, NULL },
};

int main(void)
{
	const cutest_suite suites[] = { { "devices", device_cases, setup, cutest_scratch_remove },
					{ NULL, NULL, NULL, NULL } };
	int made;

	/* Root is not always enough (a container without CAP_MKNOD): try once. */
	if (cutest_scratch_make("outdev-probe") != 0)
		return 99;
	made = mknod(cutest_scratch_path("probe"), S_IFCHR | 0666, makedev(1, 3)) == 0;
	cutest_scratch_remove();
	if (!made) {
		printf("test_outfile_devices: SKIP: cannot make a device node here (needs root)\n");
		return CUTEST_SKIP;
	}
	return cutest_run("test_outfile_devices", suites);
}

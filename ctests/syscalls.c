/* SPDX-License-Identifier: BSD-3-Clause */
/* A program with known system calls: syscalls N M opens /dev/null N times and writes M bytes to it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long opens = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	long writes = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	int fd = -1;

	for (long i = 0; i < opens; i++) {
		if (fd >= 0)
			close(fd);
		if ((fd = open("/dev/null", O_WRONLY)) < 0) {
			perror("syscalls: /dev/null");
			return 2;
		}
	}
	for (long i = 0; i < writes && fd >= 0; i++)
		if (write(fd, "x", 1) != 1)
			return 2;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The data directory: one lookup for every shipped file the library reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"

#ifndef MPXKIT_PKGDATADIR
#error "MPXKIT_PKGDATADIR: the installed data directory, from lib/common/local.am"
#endif

char *mpxkit__datadir_path(const char *rel)
{
	const char *dir = getenv("MPXKIT_DATADIR");
	size_t n;
	char *path;

	if (dir == NULL || dir[0] == '\0')
		dir = MPXKIT_PKGDATADIR;
	n = strlen(dir) + strlen(rel) + 2;
	path = malloc(n);
	if (path != NULL)
		snprintf(path, n, "%s/%s", dir, rel);
	return path;
}

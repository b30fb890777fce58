/* SPDX-License-Identifier: BSD-3-Clause */
/* The data directory: one lookup for every shipped file the library reads. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"

#ifndef MPXKIT_PKGDATADIR
#error "MPXKIT_PKGDATADIR: the installed data directory, from lib/common/local.am"
#endif
#if !defined(MPXKIT_BUILD_TREE) || !defined(MPXKIT_SOURCE_DATADIR)
#error "MPXKIT_BUILD_TREE, MPXKIT_SOURCE_DATADIR: the build tree and its data, from lib/common/local.am"
#endif

static const char *default_dir = MPXKIT_PKGDATADIR;
static pthread_once_t default_dir_once = PTHREAD_ONCE_INIT;

/*
 * The object this code was loaded from (libmpxkit.so, libpapi.so with the
 * component, or a program linked statically) lies in the build tree: the
 * library runs uninstalled, so its data is the source tree's, as libtool's
 * wrappers give uninstalled programs the build tree's libraries.  An
 * installed copy never lies there, so it never reads the build tree.
 */
static void find_default_dir(void)
{
	char tree[PATH_MAX], self[PATH_MAX];
	Dl_info info;
	size_t n;

	if (dladdr((void *)find_default_dir, &info) == 0 || info.dli_fname == NULL ||
	    realpath(info.dli_fname, self) == NULL || realpath(MPXKIT_BUILD_TREE, tree) == NULL)
		return;
	n = strlen(tree);
	if (strncmp(self, tree, n) == 0 && self[n] == '/')
		default_dir = MPXKIT_SOURCE_DATADIR;
}

const char *mpxkit__datadir(void)
{
	const char *dir = getenv("MPXKIT_DATADIR");

	if (dir != NULL && dir[0] != '\0')
		return dir;
	pthread_once(&default_dir_once, find_default_dir);
	return default_dir;
}

char *mpxkit__datadir_path(const char *rel)
{
	const char *dir = mpxkit__datadir();
	size_t n;
	char *path;

	n = strlen(dir) + strlen(rel) + 2;
	path = malloc(n);
	if (path != NULL)
		snprintf(path, n, "%s/%s", dir, rel);
	return path;
}

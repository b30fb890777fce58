/* SPDX-License-Identifier: BSD-3-Clause */
/* The learned estimators' model files: a named one, or the default under the data directory. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learned.h"

#ifndef MPXKIT_PKGDATADIR
#error "MPXKIT_PKGDATADIR: the installed data directory, from estimators/local.am"
#endif
#if !defined(MPXKIT_BUILD_TREE) || !defined(MPXKIT_SOURCE_DATADIR)
#error "MPXKIT_BUILD_TREE, MPXKIT_SOURCE_DATADIR: the build tree and its data, from estimators/local.am"
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

const char *learned_default_dir(void)
{
	pthread_once(&default_dir_once, find_default_dir);
	return default_dir;
}

/* The default model's path under the data directory; malloc'd. */
static char *default_path(const char *name)
{
	const char *dir = getenv("MPXKIT_DATADIR");
	char *path;

	if (dir == NULL || dir[0] == '\0')
		dir = learned_default_dir();
	path = malloc(strlen(dir) + strlen(name) + 2);
	if (path != NULL)
		sprintf(path, "%s/%s", dir, name);
	return path;
}

int learned_model_load(const char *who, const char *path, const char *default_name,
		       mpxkit_model **out, char **used, mpxkit_diag *diag)
{
	mpxkit_diag why = {0};
	int rc;

	*out = NULL;
	*used = path ? strdup(path) : default_path(default_name);
	if (*used == NULL)
		return mpxkit_fail(diag, MPXKIT_ENOMEM, "estimator %s: out of memory", who);
	rc = mpxkit_model_load_file(out, *used, &why);
	if (rc < 0) {
		/* The loader's line names the file and the reason; add who wanted the model. */
		rc = mpxkit_fail(diag, -rc, "estimator %s: %s%s", who, why.msg,
				 path ? ""
				      : " (the default model; set MPXKIT_DATADIR or name a "
					"model file)");
		if (diag)
			diag->sys_errno = why.sys_errno;
	}
	return rc;
}

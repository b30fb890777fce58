/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: where the shipped data (models, GPU descriptions) lies. */
#ifndef MPXKIT_DATADIR_H
#define MPXKIT_DATADIR_H

/*
 * The data directory: $MPXKIT_DATADIR when set and not empty (the tests point
 * it at the source tree's data/), else the source tree's data/ when this
 * library runs uninstalled from its build tree (libmpxkit.so, or libpapi.so
 * with the component, lies under the build directory: decided once per
 * process), else the installed data directory.
 */
const char *mpxkit__datadir(void);

/* mpxkit__datadir()/rel.  Malloc'd; NULL when out of memory. */
char *mpxkit__datadir_path(const char *rel);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: where the shipped data (models, GPU descriptions) lies. */
#ifndef MPXKIT_DATADIR_H
#define MPXKIT_DATADIR_H

/*
 * DIR/rel, with DIR $MPXKIT_DATADIR when set and not empty (the tests point it
 * at the source tree's data/), else the installed data directory.  Malloc'd;
 * NULL when out of memory.
 */
char *mpxkit__datadir_path(const char *rel);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* What the learned estimators (mlp, bigru) share: finding and loading their model file. */
#ifndef MPXKIT_LEARNED_H
#define MPXKIT_LEARNED_H

#include "mpxkit/model.h"

/*
 * Loads the model at path, or, when path is NULL, the default model
 * default_name (e.g. "models/default.mpxm") under $MPXKIT_DATADIR when it is
 * set (a build tree, or an installation moved elsewhere), else under the
 * installed data directory.  *used receives the path loaded, malloc'd (the
 * caller frees it), for the caller's own messages.  A failure's line starts
 * with "estimator WHO: " and, for the default model, says how to name another.
 */
int learned_model_load(const char *who, const char *path, const char *default_name,
		       mpxkit_model **out, char **used, mpxkit_diag *diag);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The learned estimators' model files: a named one, or the default under the data directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datadir.h"
#include "learned.h"

int learned_model_load(const char *who, const char *path, const char *default_name,
		       mpxkit_model **out, char **used, mpxkit_diag *diag)
{
	mpxkit_diag why = {0};
	int rc;

	*out = NULL;
	*used = path ? strdup(path) : mpxkit__datadir_path(default_name);
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

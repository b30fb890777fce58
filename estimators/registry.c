/* SPDX-License-Identifier: BSD-3-Clause */
/* The estimators by name: one constant table, plus the aliases the tools accept. */
#include <string.h>

#include "estimator-impl.h"

static const estimator_ops *const registry[] = {
    &estimator_fixed, &estimator_linear_dira, &estimator_linear_tam, &estimator_cam,
    &estimator_dcam,  &estimator_ref_rate,    &estimator_mlp,	     &estimator_bigru,
    &estimator_bigru_full,
};

/* Family names of the paper, each standing for one variant (doc/estimators.md says why). */
static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
    {"linear", "linear-dira"},
    {"nonlinear", "cam"},
};

size_t mpxkit_estimator_count(void)
{
	return sizeof registry / sizeof registry[0];
}

const mpxkit_estimator_info *mpxkit_estimator_info_at(size_t i)
{
	return i < mpxkit_estimator_count() ? &registry[i]->info : NULL;
}

int mpxkit_estimator_lookup(const char *name, const mpxkit_estimator_info **out)
{
	if (name == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(name, aliases[i].alias) == 0)
			name = aliases[i].name;
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		if (strcmp(name, registry[i]->info.name) == 0) {
			*out = &registry[i]->info;
			return 0;
		}
	}
	return -MPXKIT_ENOENT;
}

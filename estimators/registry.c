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

/*
 * The entries that may be registered: an estimator without an interval is
 * refused (estimator.h, "Intervals"), so it is neither listed nor found.
 */
static int registrable(const estimator_ops *ops)
{
	return ops->interval != NULL;
}

static const estimator_ops *entry(size_t i)
{
	for (size_t j = 0; j < sizeof registry / sizeof registry[0]; j++)
		if (registrable(registry[j]) && i-- == 0)
			return registry[j];
	return NULL;
}

size_t mpxkit_estimator_count(void)
{
	size_t n = 0;

	for (size_t j = 0; j < sizeof registry / sizeof registry[0]; j++)
		n += registrable(registry[j]);
	return n;
}

const mpxkit_estimator_info *mpxkit_estimator_info_at(size_t i)
{
	const estimator_ops *ops = entry(i);

	return ops ? &ops->info : NULL;
}

int mpxkit_estimator_lookup(const char *name, const mpxkit_estimator_info **out)
{
	if (name == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(name, aliases[i].alias) == 0)
			name = aliases[i].name;
	for (size_t i = 0; i < mpxkit_estimator_count(); i++) {
		if (strcmp(name, entry(i)->info.name) == 0) {
			*out = &entry(i)->info;
			return 0;
		}
	}
	return -MPXKIT_ENOENT;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The kind-independent half of a counter source: argument checks, then the kind's operation. */
#include <stddef.h>
#include <string.h>

#include "source_impl.h"

static int slot_ok(const mpxkit_source *s, int slot)
{
	return slot == MPXKIT_SOURCE_ALL || (slot >= 0 && (size_t)slot < s->n_slots);
}

void mpxkit_source_free(mpxkit_source *s)
{
	if (s)
		s->ops->free(s);
}

const char *mpxkit_source_kind(const mpxkit_source *s)
{
	return s ? s->ops->kind : "none";
}

int mpxkit_source_list(mpxkit_source *s, size_t i, mpxkit_source_event *out)
{
	if (s == NULL || out == NULL)
		return -MPXKIT_EINVAL;
	return s->ops->list(s, i, out);
}

int mpxkit_source_add(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	if (s == NULL || name == NULL)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "no source or no event name given");
	return s->ops->add(s, name, diag);
}

int mpxkit_source_add_once(mpxkit_source *s, const char *name, mpxkit_diag *diag)
{
	int slot = mpxkit_source_add(s, name, diag);

	for (int d = 0; slot > 0 && d < slot; d++)
		if (strcmp(s->ops->slot_name(s, d), s->ops->slot_name(s, slot)) == 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "%s: named twice", name);
	return slot;
}

size_t mpxkit_source_n_slots(const mpxkit_source *s)
{
	return s ? s->n_slots : 0;
}

const char *mpxkit_source_slot_name(const mpxkit_source *s, int slot)
{
	if (s == NULL || slot < 0 || (size_t)slot >= s->n_slots)
		return NULL;
	return s->ops->slot_name(s, slot);
}

int mpxkit_source_enable(mpxkit_source *s, int slot)
{
	if (s == NULL || !slot_ok(s, slot))
		return -MPXKIT_EINVAL;
	return s->ops->enable(s, slot);
}

int mpxkit_source_disable(mpxkit_source *s, int slot)
{
	if (s == NULL || !slot_ok(s, slot))
		return -MPXKIT_EINVAL;
	return s->ops->disable(s, slot);
}

int mpxkit_source_reset(mpxkit_source *s, int slot)
{
	if (s == NULL || !slot_ok(s, slot))
		return -MPXKIT_EINVAL;
	return s->ops->reset(s, slot);
}

int mpxkit_source_read(mpxkit_source *s, mpxkit_source_count *counts, size_t cap)
{
	int rc;

	if (s == NULL || (counts == NULL && s->n_slots > 0))
		return -MPXKIT_EINVAL;
	if (cap < s->n_slots)
		return -MPXKIT_ERANGE;
	if (s->n_slots == 0)
		return 0;
	rc = s->ops->read(s, counts);
	return rc < 0 ? rc : (int)s->n_slots;
}

int mpxkit_source_read_slots(mpxkit_source *s, const size_t *slots, size_t n,
			     mpxkit_source_count *counts)
{
	if (s == NULL || (n > 0 && (slots == NULL || counts == NULL)))
		return -MPXKIT_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (slots[i] >= s->n_slots)
			return -MPXKIT_EINVAL;
	if (n == 0)
		return 0;
	return s->ops->read_slots ? s->ops->read_slots(s, slots, n, counts)
				  : s->ops->read(s, counts);
}

int mpxkit_source_snapshot(mpxkit_source *s, const size_t *slots, size_t n, uint64_t *values,
			   uint64_t *clock_ns)
{
	if (s == NULL || (n > 0 && (slots == NULL || values == NULL)) || (n == 0 && !clock_ns))
		return -MPXKIT_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (slots[i] >= s->n_slots)
			return -MPXKIT_EINVAL;
	return s->ops->snapshot ? s->ops->snapshot(s, slots, n, values, clock_ns) : -MPXKIT_ENOSUPP;
}

int mpxkit_source_countable(const mpxkit_source *s, const size_t *slots, size_t n)
{
	if (s == NULL || (n > 0 && slots == NULL))
		return 0;
	return s->ops->countable ? s->ops->countable(s, slots, n) : 1;
}

int mpxkit_source_counter_pmu(const mpxkit_source *s, int slot)
{
	if (s == NULL || slot < 0 || (size_t)slot >= s->n_slots)
		return 0;
	return s->ops->counter_pmu ? s->ops->counter_pmu(s, (size_t)slot) : 0;
}

int mpxkit_source_takes_counter(const mpxkit_source *s, int slot)
{
	return mpxkit_source_counter_pmu(s, slot) >= 0;
}

int mpxkit_source_is_virtual(const mpxkit_source *s)
{
	return s != NULL && s->ops->step != NULL;
}

int mpxkit_source_step(mpxkit_source *s)
{
	if (s == NULL)
		return -MPXKIT_EINVAL;
	return s->ops->step ? s->ops->step(s) : -MPXKIT_ENOSUPP;
}

int mpxkit_source_rewind(mpxkit_source *s)
{
	if (s == NULL)
		return -MPXKIT_EINVAL;
	return s->ops->rewind ? s->ops->rewind(s) : -MPXKIT_ENOSUPP;
}

int mpxkit_source_clock(mpxkit_source *s, uint64_t *ns)
{
	if (s == NULL || ns == NULL)
		return -MPXKIT_EINVAL;
	return s->ops->clock ? s->ops->clock(s, ns) : -MPXKIT_ENOSUPP;
}

int mpxkit_source_target_cpu(mpxkit_source *s)
{
	if (s == NULL)
		return -1;
	return s->ops->target_cpu ? s->ops->target_cpu(s) : -1;
}

int mpxkit_source_partition(mpxkit_source *s, const size_t *part, size_t n_parts, mpxkit_diag *diag)
{
	int rc;

	if (s == NULL || part == NULL || n_parts == 0 || n_parts > s->n_slots || s->n_parts)
		return mpxkit_fail(diag, MPXKIT_EINVAL, "source: bad partition");
	for (size_t p = 0; p < n_parts; p++) {
		size_t members = 0;
		for (size_t i = 0; i < s->n_slots; i++) {
			if (part[i] != MPXKIT_SOURCE_NO_PART && part[i] >= n_parts)
				return mpxkit_fail(diag, MPXKIT_EINVAL,
						   "source: slot %zu in part %zu of %zu", i,
						   part[i], n_parts);
			members += part[i] == p;
		}
		if (members == 0)
			return mpxkit_fail(diag, MPXKIT_EINVAL, "source: part %zu has no slot", p);
	}
	if (s->ops->partition == NULL)
		return -MPXKIT_ENOSUPP;
	rc = s->ops->partition(s, part, n_parts, diag);
	if (rc == 0)
		s->n_parts = n_parts;
	return rc;
}

int mpxkit_source_switch_part(mpxkit_source *s, size_t from, size_t to, mpxkit_source_count *counts,
			      uint64_t *clock_ns)
{
	if (s == NULL || counts == NULL || clock_ns == NULL || s->n_parts == 0 ||
	    (from != MPXKIT_SOURCE_NO_PART && from >= s->n_parts) ||
	    (to != MPXKIT_SOURCE_NO_PART && to >= s->n_parts))
		return -MPXKIT_EINVAL;
	return s->ops->switch_part(s, from, to, counts, clock_ns);
}

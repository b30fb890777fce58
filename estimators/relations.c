/* SPDX-License-Identifier: BSD-3-Clause */
/* Relations the kernel keeps between events, applied to a run's estimated totals. */
#include <string.h>

#include "mpxkit/estimator.h"

#define MAX_PARTS 16

/*
 * One relation: whole = the sum of parts (EQUAL), or whole >= it (AT_LEAST).
 * A part ending in '*' stands for every event with that prefix.  Each was
 * checked on every training recording of data/real before it was listed
 * (data/real/README.md, "Relations"): the totals hold exactly.
 */
typedef struct relation {
	enum { REL_EQUAL, REL_AT_LEAST } kind;
	const char *whole;
	const char *parts[MAX_PARTS];
} relation;

static const relation relations[] = {
    {REL_EQUAL, "perf::PAGE-FAULTS", {"perf::MINOR-FAULTS", "perf::MAJOR-FAULTS"}},
    {REL_EQUAL, "perf::CONTEXT-SWITCHES", {"sched:sched_switch"}},
    {REL_AT_LEAST, "raw_syscalls:sys_enter", {"syscalls:sys_enter_*"}},
    {REL_AT_LEAST, "perf::PAGE-FAULTS", {"exceptions:page_fault_user"}},
};

static int is_part(const relation *r, const char *name)
{
	for (size_t i = 0; i < MAX_PARTS && r->parts[i]; i++) {
		size_t n = strlen(r->parts[i]);
		if (n > 0 && r->parts[i][n - 1] == '*' ? strncmp(name, r->parts[i], n - 1) == 0
						       : strcmp(name, r->parts[i]) == 0)
			return 1;
	}
	return 0;
}

static double column_sum(size_t n, size_t ne, const double *out, size_t e)
{
	double s = 0;
	for (size_t k = 0; k < n; k++)
		s += out[k * ne + e];
	return s;
}

static void column_scale(size_t n, size_t ne, double *out, size_t e, double scale)
{
	for (size_t k = 0; k < n; k++)
		out[k * ne + e] *= scale;
}

/*
 * The whole's total a and the parts' b are two estimates of one count (or,
 * AT_LEAST, b must not pass a): both become their mean, the windows of each
 * event scaled so that their shape is kept.  A side that sums to 0 has no
 * shape to scale and is left alone, and so is a relation whose events are
 * not all there (all the parts a prefix names count as there).
 */
static void apply_one(const relation *r, const char *const *names, size_t ne, size_t n, double *out)
{
	size_t whole = ne, parts = 0;
	double a, b = 0, x;

	for (size_t e = 0; e < ne; e++) {
		if (strcmp(names[e], r->whole) == 0)
			whole = e;
		else if (is_part(r, names[e]))
			parts++;
	}
	for (size_t i = 0; i < MAX_PARTS && r->parts[i]; i++) {
		size_t len = strlen(r->parts[i]), found = 0;
		for (size_t e = 0; e < ne && len && r->parts[i][len - 1] != '*'; e++)
			found += strcmp(names[e], r->parts[i]) == 0;
		if (len && r->parts[i][len - 1] != '*' && !found)
			return;
	}
	if (whole == ne || parts == 0)
		return;
	a = column_sum(n, ne, out, whole);
	for (size_t e = 0; e < ne; e++)
		if (e != whole && is_part(r, names[e]))
			b += column_sum(n, ne, out, e);
	if (a <= 0 || b <= 0 || (r->kind == REL_AT_LEAST && a >= b))
		return;
	x = (a + b) / 2;
	column_scale(n, ne, out, whole, x / a);
	for (size_t e = 0; e < ne; e++)
		if (e != whole && is_part(r, names[e]))
			column_scale(n, ne, out, e, x / b);
}

void mpxkit_relations_apply(const char *const *names, size_t n_events, size_t n_windows,
			    double *out)
{
	if (names == NULL || out == NULL)
		return;
	for (size_t i = 0; i < sizeof relations / sizeof relations[0]; i++)
		apply_one(&relations[i], names, n_events, n_windows, out);
}

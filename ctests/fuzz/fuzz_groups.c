/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the group-file parser, never a crash. */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/mpx.h"

/* One line per group: its events in file order, separated by one blank. */
static void print_groups(const mpxkit_groups *g, FILE *out)
{
	for (size_t k = 0; k < g->n_groups; k++) {
		const char *sep = "";
		for (size_t i = 0; i < g->n_names; i++)
			if (g->group[i] == k) {
				fprintf(out, "%s%s", sep, g->names[i]);
				sep = " ";
			}
		fputc('\n', out);
	}
}

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_groups *g = NULL;
	mpxkit_diag diag;
	int rc = mpxkit_groups_parse("fuzz", (const char *)data, size, &g, &diag);

	if (rc < 0)
		return rc;
	/* Groups are numbered densely in file order, each name on a line of the input. */
	for (size_t i = 0; i < g->n_names; i++)
		if (g->group[i] >= g->n_groups || (i > 0 && g->group[i] < g->group[i - 1]) ||
		    g->line[i] == 0 || g->names[i][0] == '\0')
			__builtin_trap();
	if (out)
		print_groups(g, out);
	mpxkit_groups_free(g);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

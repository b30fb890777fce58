/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes as a GPU description; what parses writes back to itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/simt.h"

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_simt_gpu *g = NULL, *again = NULL;
	char *first = NULL, *second = NULL;
	size_t n1 = 0, n2 = 0;
	FILE *f;
	int rc = mpxkit_simt_gpu_parse("fuzz", (const char *)data, size, &g, NULL);

	if (rc < 0)
		return rc;
	/* the canonical form parses, and writes the same text again */
	if ((f = open_memstream(&first, &n1)) == NULL)
		__builtin_trap();
	mpxkit_simt_gpu_write(g, f);
	fclose(f);
	if (mpxkit_simt_gpu_parse("canonical", first, n1, &again, NULL) < 0)
		__builtin_trap();
	if ((f = open_memstream(&second, &n2)) == NULL)
		__builtin_trap();
	mpxkit_simt_gpu_write(again, f);
	fclose(f);
	if (n1 != n2 || memcmp(first, second, n1) != 0)
		__builtin_trap();
	/* every op names a declared unit */
	for (size_t i = 0; i < g->n_ops; i++)
		if (g->ops[i].unit >= g->n_units ||
		    mpxkit_simt_gpu_op(g, g->ops[i].name) != &g->ops[i])
			__builtin_trap();
	if (out)
		fwrite(first, 1, n1, out);
	free(first);
	free(second);
	mpxkit_simt_gpu_free(again);
	mpxkit_simt_gpu_free(g);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes as Accel-Sim's gpgpusim.config and trace.config, through the
 * importer. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/simt.h"

/*
 * One input holds both files: gpgpusim.config, then a line "%%" and
 * trace.config (without the line, an empty trace.config).
 */
int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	const char *text = (const char *)data, *cut = NULL, *trace = "";
	size_t clen = size, tlen = 0;
	mpxkit_simt_gpu *g = NULL;
	int rc;

	for (size_t i = 0; i + 3 <= size; i++)
		if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, "%%\n", 3) == 0) {
			cut = text + i;
			break;
		}
	if (cut) {
		clen = (size_t)(cut - text);
		trace = cut + 3;
		tlen = size - clen - 3;
	}
	rc = mpxkit_simt_gpu_import_accelsim_text("gpgpusim.config", text, clen, "trace.config",
						  trace, tlen, &g, NULL);
	if (rc < 0)
		return rc;
	if (g->n_units == 0 || g->n_ops == 0 || g->warp_size != 32)
		__builtin_trap();
	if (out)
		mpxkit_simt_gpu_write(g, out);
	mpxkit_simt_gpu_free(g);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

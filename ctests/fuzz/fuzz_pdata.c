/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the predict dataset reader; what it accepts it writes back
 * and reads again to the same text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/predict.h"

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_pdata *d = NULL, *again = NULL;
	char *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;
	int rc = mpxkit_pdata_parse("fuzz", (const char *)data, size, &d, NULL);

	if (rc < 0)
		return rc;
	if (d->n_rows == 0 || mpxkit_pdata_format(d, &text, &len, NULL) < 0)
		__builtin_trap();
	/* The writer's text is a dataset that formats to itself. */
	if (mpxkit_pdata_parse("again", text, len, &again, NULL) < 0 ||
	    mpxkit_pdata_format(again, &text2, &len2, NULL) < 0 || len != len2 ||
	    memcmp(text, text2, len) != 0)
		__builtin_trap();
	if (out)
		fwrite(text, 1, len, out);
	free(text);
	free(text2);
	mpxkit_pdata_free(again);
	mpxkit_pdata_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

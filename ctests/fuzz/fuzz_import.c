/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the GemStone and Nikov importers.  The first line names
 * the importer; for nikov, lines "%%" cut the rest into files named part0_el1.data,
 * part1_el2.data, ... (the importer reads the event list from the name). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "mpxkit/predict.h"

#define MAX_PARTS 8

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	const char *p = (const char *)data, *end = p + size, *nl = memchr(p, '\n', size);
	const char *texts[MAX_PARTS], *from;
	char names[MAX_PARTS][32];
	const char *name_ptrs[MAX_PARTS];
	size_t lens[MAX_PARTS], n = 0;
	mpxkit_pdata *d = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (nl == NULL)
		return -MPXKIT_EFORMAT;
	if ((size_t)(nl - p) == 8 && memcmp(p, "gemstone", 8) == 0)
		from = "gemstone";
	else if ((size_t)(nl - p) == 5 && memcmp(p, "nikov", 5) == 0)
		from = "nikov";
	else
		return -MPXKIT_EFORMAT;
	p = nl + 1;
	texts[0] = p;
	/* Cut at every line that is exactly "%%"; the last part runs to the end. */
	for (const char *line = p; line < end && n + 1 < MAX_PARTS;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *next = eol ? eol + 1 : end;
		if ((eol ? eol : end) - line == 2 && line[0] == '%' && line[1] == '%') {
			lens[n] = (size_t)(line - texts[n]);
			texts[++n] = next;
		}
		line = next;
	}
	lens[n] = (size_t)(end - texts[n]);
	n++;
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof names[i], "part%zu_el%zu.data", i, i + 1);
		name_ptrs[i] = names[i];
	}
	rc = mpxkit_pdata_import_buffers(from, name_ptrs, texts, lens, n, "fuzz", &d, NULL);
	if (rc < 0)
		return rc;
	if (mpxkit_pdata_format(d, &text, &len, NULL) < 0)
		__builtin_trap();
	if (out)
		fwrite(text, 1, len, out);
	free(text);
	mpxkit_pdata_free(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

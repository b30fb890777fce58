/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the container reader, never a crash, never a wrong length. */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/container.h"

/* The format the golden files use: magic "\x8ATST", versions 1 and 2, small bounds. */
static const mpxkit_container_format fmt = {
	.name = "test",
	.magic = 0x5453548Au,
	.min_version = 1,
	.max_version = 2,
	.max_section = 1 << 16,
	.max_sections = 64,
};

int fuzz_decode(const uint8_t *data, size_t size, FILE *out)
{
	mpxkit_container_reader *r;
	uint32_t tag;
	const void *p;
	size_t len, total = 0;
	int rc = mpxkit_container_open_buffer(&r, data, size, "fuzz", &fmt, NULL);

	if (rc < 0)
		return rc;
	if (out)
		fprintf(out, "version %u\n", mpxkit_container_version(r));
	while ((rc = mpxkit_container_next(r, &tag, &p, &len, NULL)) == 1) {
		/* A payload lies inside the input, after what came before it. */
		if (len > size || (const uint8_t *)p < data || (const uint8_t *)p + len > data + size)
			__builtin_trap();
		total += len;
		if (out)
			fprintf(out, "%c%c%c%c %zu\n", (int)(tag & 0xff), (int)(tag >> 8 & 0xff),
				(int)(tag >> 16 & 0xff), (int)(tag >> 24), len);
	}
	if (total > size)
		__builtin_trap();
	mpxkit_container_close(r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

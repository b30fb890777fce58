/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: any bytes through the .pcz reader and the CSV writer, never a crash. */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_target.h"
#include "mpxkit/pcz.h"

int fuzz_decode(const uint8_t *data, size_t size, FILE *csv)
{
	mpxkit_pcz_reader *r;
	mpxkit_pcz_stats st;
	size_t len;
	int rc = mpxkit_pcz_reader_open_mem(data, size, "fuzz", &r, NULL);

	if (rc < 0)
		return rc;
	/* Touch everything the open accepted, as a caller would, `mpxkit info` included. */
	mpxkit_pcz_reader_count_bits(r);
	(void)mpxkit_pcz_reader_topology(r, &len);
	mpxkit_pcz_reader_stats(r, &st);
	if (csv) {
		rc = mpxkit_pcz_write_csv(r, csv, NULL);
	} else {
		const mpxkit_pcz_region *reg;
		uint64_t sum = 0;
		uint64_t bits;
		while ((rc = mpxkit_pcz_reader_next(r, &reg, NULL)) == 1)
			for (size_t u = 0; u < reg->n_units; u++)
				for (size_t i = 0; i < reg->units[u].n_steps; i++)
					sum += reg->units[u].values[i] + reg->units[u].times[2 * i];
		/* What `mpxkit info` reads of a version-2 file after the regions. */
		for (size_t c = 0; c <= 2 + mpxkit_pcz_reader_n_events(r); c++)
			if (mpxkit_pcz_reader_coded_bits(r, c, &bits) == 0)
				sum += bits;
		(void)sum;
	}
	mpxkit_pcz_reader_free(r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_decode(data, size, NULL);
	return 0;
}

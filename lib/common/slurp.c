/* SPDX-License-Identifier: BSD-3-Clause */
/* One read-to-end loop for the group-file, callgrind and model readers. */
#include <stdlib.h>

#include "mpxkit/error.h"
#include "slurp.h"

int mpxkit__slurp(FILE *f, size_t max, char **buf, size_t *len)
{
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	for (;;) {
		size_t got;
		if (cap - *len < 4096) {
			char *grown;
			cap = cap ? cap * 2 : 65536;
			grown = realloc(*buf, cap);
			if (grown == NULL)
				return -MPXKIT_ENOMEM;
			*buf = grown;
		}
		got = fread(*buf + *len, 1, cap - *len, f);
		*len += got;
		if (*len > max)
			return -MPXKIT_ERANGE;
		if (got == 0)
			break;
	}
	return ferror(f) ? -MPXKIT_EIO : 0;
}

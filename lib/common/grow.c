/* SPDX-License-Identifier: BSD-3-Clause */
/* Growing arrays (grow.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "mpxkit/error.h"

int mpxkit__reserve(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? *cap : 64;
	void *p;

	if (n <= *cap)
		return 0;
	while (want < n) {
		if (want > SIZE_MAX / 2)
			return -MPXKIT_ENOMEM;
		want *= 2;
	}
	if (size && want > SIZE_MAX / size)
		return -MPXKIT_ENOMEM;
	p = realloc(*arr, want * size);
	if (p == NULL)
		return -MPXKIT_ENOMEM;
	memset((char *)p + *cap * size, 0, (want - *cap) * size);
	*arr = p;
	*cap = want;
	return 0;
}

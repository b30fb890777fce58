/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to libmpxkit: the one way its arrays grow. */
#ifndef MPXKIT_GROW_H
#define MPXKIT_GROW_H

#include <stddef.h>

/*
 * Makes *arr (elements of `size` bytes, *cap of them allocated) hold at
 * least n, doubling from 64 so appends stay amortised constant time; the new
 * elements are zeroed.  0, or -MPXKIT_ENOMEM with *arr and *cap unchanged.
 * Arrays that grow together share one capacity: copy it, grow each, store it.
 */
int mpxkit__reserve(void **arr, size_t *cap, size_t n, size_t size);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Growable arrays. snap_vec_reserve(&ptr, &cap, need, sizeof(*ptr)) makes
 * room for `need` elements, doubling; returns 0 or -ENOMEM (overflow-checked).
 */
#ifndef SNAP_UTIL_VEC_H
#define SNAP_UTIL_VEC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "util/alloc.h"

/* Makes room for need elements of elem bytes in *(void **)pptr (capacity
 * *cap, doubling); returns 0, or -ENOMEM with *pptr and *cap unchanged. */
static inline int snap_vec_reserve(void *pptr, size_t *cap, size_t need, size_t elem)
{
	void **pp = (void **)pptr;
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0; /* first: the common case, once per event in the stack builder */
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	n = snap_reallocarray(*pp, ncap, elem);
	if (!n)
		return -ENOMEM;
	*pp = n;
	*cap = ncap;
	return 0;
}

#endif

// SPDX-License-Identifier: GPL-2.0
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long alloc_countdown = -1;

void snap_alloc_fail_after(long n)
{
	alloc_countdown = n;
}

static int alloc_should_fail(void)
{
	if (alloc_countdown < 0)
		return 0;
	if (alloc_countdown == 0)
		return 1;
	alloc_countdown--;
	return 0;
}

void *snap_malloc(size_t size)
{
	if (alloc_should_fail())
		return NULL;
	return malloc(size ? size : 1);
}

void *snap_calloc(size_t n, size_t size)
{
	if (alloc_should_fail())
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *snap_reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	if (alloc_should_fail())
		return NULL;
	return realloc(p, n && size ? n * size : 1);
}

void snap_free(void *p)
{
	free(p);
}

char *snap_strndup(const char *s, size_t len)
{
	char *d = snap_malloc(len + 1);

	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

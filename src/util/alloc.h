/* SPDX-License-Identifier: GPL-2.0 */
/*
 * All allocation goes through here so tests can inject failures (Lua style).
 * snap_alloc_fail_after(n): the allocation after n more successful ones fails;
 * n < 0 disables injection. The hook is a test-only global.
 */
#ifndef SNAP_UTIL_ALLOC_H
#define SNAP_UTIL_ALLOC_H

#include <stddef.h>

/* malloc and calloc (calloc: NULL if n * size overflows); NULL on failure,
 * also when snap_alloc_fail_after says this one fails. */
void *snap_malloc(size_t size);
void *snap_calloc(size_t n, size_t size);
/* Returns NULL (and leaves p untouched) on failure or if n * size overflows. */
void *snap_reallocarray(void *p, size_t n, size_t size);
/* free (NULL is a no-op). */
void snap_free(void *p);
/* Returns an owned copy of (s, len) with a NUL appended; release with snap_free. */
char *snap_strndup(const char *s, size_t len);

/* Tests: after n more successful allocations every one fails; n < 0 stops it. */
void snap_alloc_fail_after(long n);

#endif

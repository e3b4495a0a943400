/* SPDX-License-Identifier: GPL-2.0 */
/* Mapping a whole input file read-only, for the readers that work on (buf, len). */
#ifndef SNAP_UTIL_FMAP_H
#define SNAP_UTIL_FMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Opens path and maps all of it read-only (private); the descriptor is closed
 * before returning. A file whose size is below min or above max, or (with
 * reg_only) that is not a regular file, is not mapped: the call returns 1.
 * Otherwise returns 0 with *buf and *len set (release with snap_funmap), or
 * -errno when open, fstat or mmap fails. min must be at least 1.
 */
int snap_fmap(const char *path, uint64_t min, uint64_t max, int reg_only, const void **buf,
	      size_t *len);
void snap_funmap(const void *buf, size_t len);

#endif

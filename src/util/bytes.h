/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading fixed-size integers at any alignment from a byte buffer, in the
 * host's byte order (the files read this way are little-endian: x86 only).
 * The caller checks the bounds.
 */
#ifndef SNAP_UTIL_BYTES_H
#define SNAP_UTIL_BYTES_H

#include <stdint.h>
#include <string.h>

/* The 2 bytes at p as a host-order integer. */
static inline uint16_t snap_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* The 4 bytes at p as a host-order integer. */
static inline uint32_t snap_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The 8 bytes at p as a host-order integer. */
static inline uint64_t snap_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snap_perfdata_read_fn over bytes in memory, for the perf.data unit test
 * and fuzz target: snap_mem_read(ctx = struct snap_membuf *, off, buf, len)
 * copies what lies at off (short at the end, 0 past it) and returns its
 * length. The bytes are borrowed.
 */
#ifndef SNAP_TEST_MEM_READER_H
#define SNAP_TEST_MEM_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct snap_membuf {
	const uint8_t *p;
	size_t len;
};

static inline long snap_mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct snap_membuf *m = ctx;

	if (off >= m->len)
		return 0;
	if (len > m->len - off)
		len = m->len - (size_t)off;
	memcpy(buf, m->p + off, len);
	return (long)len;
}

#endif

// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the perf.data header/attribute probe on arbitrary bytes. */
#include <stdint.h>
#include <string.h>

#include "parse/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct membuf {
	const uint8_t *p;
	size_t len;
};

static long mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct membuf *m = ctx;

	if (off >= m->len)
		return 0;
	if (len > m->len - off)
		len = m->len - (size_t)off;
	memcpy(buf, m->p + off, len);
	return (long)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct membuf m = {data, size};
	struct snap_perfdata_info info;

	snap_perfdata_probe(mem_read, &m, &info);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the perf.data header/attribute probe on arbitrary bytes. */
#include <stdint.h>

#include "../unit/mem_reader.h"
#include "parse/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_membuf m = {data, size};
	struct snap_perfdata_info info;

	snap_perfdata_probe(snap_mem_read, &m, &info);
	return 0;
}

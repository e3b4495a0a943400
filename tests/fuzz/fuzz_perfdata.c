// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the perf.data header/attribute probe and the header check
 * against the file size, on arbitrary bytes. */
#include <stdint.h>

#include "../unit/mem_reader.h"
#include "parse/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_membuf m = {data, size};
	struct snap_perfdata_info info;

	char why[256];

	/* the header check against the file size decode does before running perf */
	if (snap_perfdata_probe(snap_mem_read, &m, &info) == 0 &&
	    snap_perfdata_check_size(&info, size, why, sizeof(why)) < 0 && !why[0])
		__builtin_trap(); /* every refusal says why */
	return 0;
}

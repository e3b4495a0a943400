// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the perf.data header/attribute probe, the header check
 * against the file size, the build-id table reader and the lost-record count
 * of the data section, on arbitrary bytes. */
#include <stdint.h>
#include <string.h>

#include "../unit/mem_reader.h"
#include "parse/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one_build_id(void *arg, const char *path, const uint8_t *id, size_t idlen)
{
	size_t *sum = arg;

	if (!idlen || idlen > 20)
		__builtin_trap();		      /* 1..20 bytes */
	*sum += strlen(path) + id[0] + id[idlen - 1]; /* every byte given is readable */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_membuf m = {data, size};
	struct snap_perfdata_info info;

	char why[256];

	/* the header check against the file size decode does before running perf */
	if (snap_perfdata_probe(snap_mem_read, &m, &info) == 0 &&
	    snap_perfdata_check_size(&info, size, why, sizeof(why)) < 0 && !why[0])
		__builtin_trap(); /* every refusal says why */
	if (snap_perfdata_probe(snap_mem_read, &m, &info) == 0) {
		struct snap_perfdata_lost l;

		/* every record counted lies inside the file: at most one per 8 bytes */
		(void)snap_perfdata_lost(snap_mem_read, &m, &info, &l);
		if (l.chunks + l.samples > size / 8)
			__builtin_trap();
	}
	/* the build-id table decode gives parse/cfi */
	size_t sum = 0;

	(void)snap_perfdata_build_ids(snap_mem_read, &m, one_build_id, &sum);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the JIT perf map parser (parse/perfmap.c) on arbitrary bytes. */
#include <stdint.h>

#include "parse/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t map_sum;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_strtab st;
	struct snap_perfmap m;
	uint64_t sum = 0;

	snap_strtab_init(&st);
	snap_perfmap_init(&m);
	if (snap_perfmap_add(&m, (const char *)data, size, &st) == 0 &&
	    snap_perfmap_finish(&m) == 0) {
		for (size_t i = 0; i < m.n; i++) {
			const struct snap_perfmap_entry *e = snap_perfmap_find(&m, m.e[i].start);

			if (i)
				sum += m.e[i].start > m.e[i - 1].start; /* sorted, unique */
			if (e)
				sum += e->name;
		}
	}
	map_sum = sum;
	snap_perfmap_fini(&m);
	snap_strtab_fini(&st);
	return 0;
}

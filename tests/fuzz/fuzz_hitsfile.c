// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the working directory's trigger hits file (parse/hitsfile.c). */
#include <stdint.h>
#include <string.h>

#include "parse/hitsfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t hits_sum;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_hitsfile hf;
	uint64_t sum = 0;

	if (snap_hitsfile_parse(&hf, (const char *)data, size) == 0) {
		for (size_t i = 0; i < hf.n; i++)
			sum += hf.h[i].time + strlen(hf.h[i].symbol); /* NUL-terminated */
		snap_hitsfile_fini(&hf);
	}
	hits_sum = sum;
	return 0;
}

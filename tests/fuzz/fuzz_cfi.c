// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: parse/cfi's FDE table (libelf sections, libdw's CIE/FDE walk,
 * the pointer encodings read here) on arbitrary bytes as an ELF image, then
 * lookups and unwind rows (libdw's CFI evaluation) over the first pages of
 * file offsets. */
#include <stdint.h>
#include <stdlib.h>

#include "parse/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_cfi_file *f;
	size_t nseg;
	uint64_t s;

	if (snap_cfi_file_open_mem(data, size, &f) < 0)
		return 0;
	(void)snap_cfi_file_segs(f, &nseg);
	for (uint64_t off = 0; off < 0x4000; off += 7) {
		if (snap_cfi_file_start(f, off, &s) == 1 && s > off)
			abort(); /* a function starts at or before the address */
		if (snap_cfi_file_frameless(f, off) > 1)
			abort();
	}
	snap_cfi_file_close(f);
	return 0;
}

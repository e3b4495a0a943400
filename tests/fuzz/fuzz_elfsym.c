// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the ELF64 symbol reader (record/elfsym.c) on arbitrary bytes. */
#include <stdint.h>
#include <string.h>

#include "record/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t elf_sum; /* keeps the reads of names and offsets */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0, off, sum = 0;
	int guard = 0;

	if (snap_elf_open(&e, data, size) < 0)
		return 0;
	while (snap_elf_sym_next(&e, &cur, &sym) == 1 && guard++ < 100000) {
		sum += strlen(sym.name); /* the name is NUL-terminated inside data */
		if (snap_elf_vaddr_to_offset(&e, sym.value, &off) == 0)
			sum += off;
	}
	if (snap_elf_find_func(&e, "main", &sym) == 1)
		sum += sym.value;
	(void)snap_elf_has_symbols(&e);
	{
		struct snap_elf_traps t;

		if (snap_elf_ocaml_traps(&e, &t) > 0) {
			for (size_t i = 1; i < t.npush; i++)
				sum += t.push[i] > t.push[i - 1]; /* sorted, unique */
			sum += t.nenter + t.npop;
		}
		snap_elf_traps_free(&t);
	}
	elf_sum = sum;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: the ELF64 symbol reader (record/elfsym.c) and the frame-pointer
 * and .dynamic scans of -callgraph-mode auto (record/cgpick.c) and its reading of a
 * script's "#!" line on arbitrary bytes. */
#include <stdint.h>
#include <string.h>

#include "record/cgpick.h"
#include "record/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t elf_sum; /* keeps the reads of names and offsets */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_elf e;
	struct snap_elfsym sym;
	uint64_t cur = 0, off, sum = 0;
	int guard = 0;

	struct snap_fpscan fs;
	const char *str;
	int tag;

	if (snap_fpscan_elf(data, size, &fs) == 0)
		sum += fs.funcs + fs.fp + (uint64_t)fs.eh_frame;
	{
		char interp[64];
		int on_path;

		if (snap_cgpick_shebang(data, size, interp, sizeof(interp), &on_path) == 1)
			sum += strlen(interp) + (uint64_t)on_path; /* NUL-terminated in interp */
	}
	while (snap_cgpick_dyn_next(data, size, &cur, &tag, &str) == 1 && guard++ < 100000)
		sum += strlen(str) + (uint64_t)tag;
	cur = 0;
	guard = 0;
	if (snap_elf_open(&e, data, size, 0) < 0) {
		elf_sum = sum;
		return 0;
	}
	while (snap_elfsym_next(&e, &cur, &sym) == 1 && guard++ < 100000) {
		sum += strlen(sym.name); /* the name is NUL-terminated inside data */
		if (snap_loadseg_vaddr2off(e.load, e.nload, sym.value, &off) == 0)
			sum += off;
	}
	if (snap_elfsym_find_func(&e, "main", &sym) == 1)
		sum += sym.value;
	/* demangled lookups: every mangled name that contains the identifier is
	 * demangled (libiberty on the file's bytes) */
	if (snap_elfsym_find_demangled(&e, "ns::main", 1, &sym) == 1)
		sum += sym.value;
	if (snap_elfsym_find_demangled(&e, "a::b(int)", 0, &sym) == 1)
		sum += sym.value;
	(void)snap_elf_has_symbols(&e);
	{
		struct snap_ocaml_eh t;

		if (snap_ocaml_traps_read(&e, &t) > 0) {
			for (size_t i = 1; i < t.npush; i++)
				sum += t.push[i] > t.push[i - 1]; /* sorted, unique */
			sum += t.nenter + t.npop;
		}
		snap_ocaml_traps_free(&t);
	}
	elf_sum = sum;
	return 0;
}

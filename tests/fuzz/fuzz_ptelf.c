// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: ptdec's ELF symbol reader (symbols, PLT slots, demangling,
 * PT_LOAD offsets) on arbitrary bytes, then lookups across the table; and the
 * same bytes as a kallsyms text (the kernel's symbols, docs/ptdec.md). */
#include <stdint.h>
#include <stdlib.h>

#include "ptdec/elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void lookups(struct snap_elfsyms *s)
{
	uint64_t a;

	for (size_t i = 0; i < s->nsyms; i++) {
		const struct snap_elfsyms_ent *e = snap_elfsyms_find(s, s->syms[i].start);

		if (e)
			(void)snap_elfsyms_name(s, e)[0];
		if (i && s->syms[i - 1].start >= s->syms[i].start)
			abort(); /* sorted, one symbol an address */
	}
	(void)snap_elfsyms_lookup(s, "__switch_to", &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_elfsyms s;
	uint64_t va;

	if (snap_elfsyms_load_kallsyms_mem(&s, (const char *)data, size) == 0) {
		lookups(&s);
		snap_elfsyms_fini(&s);
	}
	if (snap_elfsyms_load_mem(&s, data, size, NULL) < 0)
		return 0;
	lookups(&s);
	for (uint64_t off = 0; off < 0x3000; off += 0x101)
		if (!snap_elfsyms_off2vaddr(&s, off, &va))
			(void)snap_elfsyms_find(&s, va);
	snap_elfsyms_fini(&s);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Fuzz target: util/elf, the bounded ELF reader, on arbitrary bytes opened
 * strict and lax: every section's name and bytes, every symbol table entry and
 * its name, every note of the SHT_NOTE sections and PT_NOTE segments, and the
 * PT_LOAD conversions of util/loadseg. Whatever the reader hands out must lie
 * inside the input (checked here, and by ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"
#include "util/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *base;
static size_t blen;

/* Aborts unless [p, p + n) lies inside the input. */
static void inside(const void *p, uint64_t n)
{
	const uint8_t *q = p;

	if (q < base || (size_t)(q - base) > blen || n > blen - (size_t)(q - base))
		abort();
}

static void notes(const uint8_t *p, uint64_t size, uint64_t align)
{
	struct snap_elf_note n;
	uint8_t id[20];
	size_t idlen;
	uint64_t pos = 0, last = 0;

	while (snap_elf_note_next(p, size, align, &pos, &n)) {
		if (pos <= last && last)
			abort(); /* moves forward */
		last = pos;
		inside(n.name, n.namesz);
		inside(n.desc, n.descsz);
		(void)snap_elf_note_build_id(&n, id, &idlen);
	}
}

static void walk(const struct snap_elf *e)
{
	struct snap_elf_symtab t;
	uint64_t size, x;

	for (unsigned i = 0; i < e->shnum; i++) {
		const uint8_t *b = snap_elf_sec_bytes(e, i, &size);
		const char *name = snap_elf_sec_name(e, i);

		if (name[0])
			inside(name, strlen(name) + 1);
		if (b) {
			inside(b, size);
			if (snap_get32(snap_elf_shdr(e, i) + SNAP_SHDR(sh_type)) == SHT_NOTE)
				notes(b, size, 4);
		}
		if (snap_elf_symtab(e, (int)i, &t) == 0) {
			inside(t.syms, t.count * sizeof(Elf64_Sym));
			inside(t.str, t.strsize);
			for (uint64_t k = 0; k < t.count && k < 4096; k++) {
				struct snap_elf_rawsym r;
				const char *s;

				snap_elf_sym_at(&t, k, &r);
				if ((s = snap_elf_str(t.str, t.strsize, r.name)) != NULL)
					inside(s, strlen(s) + 1);
			}
		}
	}
	for (unsigned i = 0; i < e->phnum; i++) {
		const uint8_t *p = snap_elf_phdr(e, i);
		uint64_t off = snap_get64(p + SNAP_PHDR(p_offset));

		size = snap_get64(p + SNAP_PHDR(p_filesz));
		if (snap_get32(p + SNAP_PHDR(p_type)) == PT_NOTE &&
		    snap_elf_in_bounds(e, off, size, 1))
			notes(e->buf + off, size, 8);
	}
	for (size_t i = 0; i < e->nload; i++)
		if (snap_loadseg_vaddr2off(e->load, e->nload, e->load[i].vaddr, &x) == 0)
			(void)snap_loadseg_off2vaddr(e->load, e->nload, x, &x);
	(void)snap_elf_sec_by_name(e, ".text");
	(void)snap_elf_sec_by_type(e, SHT_SYMTAB);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_elf e;

	base = data;
	blen = size;
	if (snap_elf_open(&e, data, size, 0) == 0)
		walk(&e);
	if (snap_elf_open(&e, data, size, SNAP_ELF_LAX) == 0)
		walk(&e);
	return 0;
}

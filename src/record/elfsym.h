/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small ELF64 little-endian symbol reader for -trigger: .symtab and
 * .dynsym lookups and vaddr -> file offset through PT_LOAD. Pure: it works
 * on (buf, len) and checks every offset it reads against len, because the
 * bytes come from outside.
 */
#ifndef SNAP_RECORD_ELFSYM_H
#define SNAP_RECORD_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct snap_elf {
	const uint8_t *buf; /* borrowed */
	size_t len;
	uint16_t type; /* ET_EXEC = 2, ET_DYN = 3 */
	uint64_t phoff, shoff;
	uint16_t phnum, shnum;
	int symtab, dynsym; /* section indices, -1 = absent */
};

struct snap_elfsym {
	const char *name; /* borrowed from the buffer, NUL-terminated */
	uint64_t value, size;
	uint8_t type;	/* STT_* (STT_FUNC = 2) */
	uint8_t bind;	/* STB_* */
	uint16_t shndx; /* 0 = undefined */
};

/* Checks the ELF header and the program/section header tables. Returns 0, or
 * -SNAP_EFORMAT for anything that is not a well-formed ELF64 LE file. */
int snap_elf_open(struct snap_elf *e, const void *buf, size_t len);

/* Iterates the defined symbols of .symtab then .dynsym. *cursor starts at 0.
 * Returns 1 and fills *sym, 0 at the end; malformed entries are skipped. */
int snap_elf_sym_next(const struct snap_elf *e, uint64_t *cursor, struct snap_elfsym *sym);

/* Finds the first defined FUNC (or IFUNC) symbol called name with a non-zero
 * value. Returns 1 and fills *sym, 0 if absent. */
int snap_elf_find_func(const struct snap_elf *e, const char *name, struct snap_elfsym *sym);

/* Converts a link-time vaddr to a file offset through the PT_LOAD segment
 * that contains it. Returns 0, or -ENOENT when no segment does. */
int snap_elf_vaddr_to_offset(const struct snap_elf *e, uint64_t vaddr, uint64_t *off);

/* Returns 1 when the file has a symbol table (.symtab or .dynsym). */
int snap_elf_has_symbols(const struct snap_elf *e);

/* OCaml exception handler addresses from the .note.ocaml_eh notes (owner
 * "OCaml", type 1: a u64 recorded base, then three lists of u64 addresses,
 * each ended by 0: entertraps, pushtraps, poptraps), moved by .stapsdt.base's
 * address minus the recorded base (prelinking), each list sorted, duplicates
 * removed. Link-time addresses. */
struct snap_elf_traps {
	uint64_t *enter, *push, *pop; /* owned: snap_elf_traps_free */
	size_t nenter, npush, npop;
};

/* Returns 1 with *out filled when the file has such notes, 0 when it has
 * none (then *out is empty), -ENOMEM. Malformed notes are skipped. */
int snap_elf_ocaml_traps(const struct snap_elf *e, struct snap_elf_traps *out);
void snap_elf_traps_free(struct snap_elf_traps *t);

#endif

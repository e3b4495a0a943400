/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small ELF64 little-endian symbol reader for -trigger: .symtab and
 * .dynsym lookups and vaddr -> file offset through PT_LOAD. Pure: it works
 * on (buf, len) and checks every offset it reads against len, because the
 * bytes come from outside.
 */
#ifndef SNAP_RECORD_ELFSYM_H
#define SNAP_RECORD_ELFSYM_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* Byte offsets of the ELF64 fields this reader uses, named after <elf.h>
 * (the buffer is read byte by byte: it may be unaligned and is checked). */
#define SNAP_EHDR(field) offsetof(Elf64_Ehdr, field)
#define SNAP_PHDR(field) offsetof(Elf64_Phdr, field)
#define SNAP_SHDR(field) offsetof(Elf64_Shdr, field)
#define SNAP_SYM(field)	 offsetof(Elf64_Sym, field)
#define SNAP_DYN(field)	 offsetof(Elf64_Dyn, field)
#define SNAP_NHDR(field) offsetof(Elf64_Nhdr, field)

/* Little-endian reads at p (any alignment; the caller checks the bounds):
 * 2 bytes. */
static inline uint16_t snap_elf_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* 4 little-endian bytes at p. */
static inline uint32_t snap_elf_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 8 little-endian bytes at p. */
static inline uint64_t snap_elf_rd64(const uint8_t *p)
{
	return (uint64_t)snap_elf_rd32(p) | (uint64_t)snap_elf_rd32(p + 4) << 32;
}

struct snap_elf {
	const uint8_t *buf; /* borrowed */
	size_t len;
	uint16_t type; /* ET_EXEC, ET_DYN */
	uint64_t phoff, shoff;
	uint16_t phnum, shnum;
	int symtab, dynsym; /* section indices, -1 = absent */
};

struct snap_elfsym {
	const char *name; /* borrowed from the buffer, NUL-terminated */
	uint64_t value, size;
	uint8_t type;	/* STT_* */
	uint8_t bind;	/* STB_* */
	uint16_t shndx; /* 0 = undefined */
};

/* 1 for a function symbol: STT_FUNC or STT_GNU_IFUNC. */
static inline int snap_elfsym_is_func(const struct snap_elfsym *sym)
{
	return sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC;
}

/* The section header i (inside the buffer: checked by snap_elf_open), or NULL. */
const uint8_t *snap_elf_shdr(const struct snap_elf *e, unsigned i);

/* The name of section i through the section name table, or "" (NUL-terminated
 * inside the buffer). */
const char *snap_elf_sec_name(const struct snap_elf *e, unsigned i);

/* Checks the ELF header and the program/section header tables. Returns 0, or
 * -SNAP_EFORMAT for anything that is not a well-formed ELF64 LE file. */
int snap_elf_open(struct snap_elf *e, const void *buf, size_t len);

/* Iterates the defined symbols of .symtab then .dynsym. *cursor starts at 0.
 * Returns 1 and fills *sym, 0 at the end; malformed entries are skipped. */
int snap_elf_sym_next(const struct snap_elf *e, uint64_t *cursor, struct snap_elfsym *sym);

/* Finds the first defined FUNC (or IFUNC) symbol called name with a non-zero
 * value. Returns 1 and fills *sym, 0 if absent. */
int snap_elf_find_func(const struct snap_elf *e, const char *name, struct snap_elfsym *sym);

/*
 * The name perf shows for a mangled symbol (C++ "_Z...", Rust "_ZN...17h<hash>E"
 * or "_R..."): libiberty's demangler as perf's demangle_sym calls it, without
 * parameters ("app::detail::count_words", a Rust path without its hash), or
 * with them (params = 1: "app::detail::count_words(char const*)", as gdb
 * shows it). A "@VERSION" suffix is kept. Returns a malloc'ed string (free()),
 * or NULL when name is not mangled.
 */
char *snap_elf_demangle(const char *name, int params);

/*
 * Finds a defined FUNC (or IFUNC) symbol with a non-zero value by its
 * demangled name, as perf probe and gdb take one: perf's name or the one with
 * parameters (see snap_elf_demangle); with suffix = 1, a trailing part of
 * either after "::" ("count_words", "detail::count_words"). Returns 1 and
 * fills *sym, 0 if none matches, -EEXIST when functions at different
 * addresses do (overloads: the name with parameters tells them apart).
 */
int snap_elf_find_func_demangled(const struct snap_elf *e, const char *name, int suffix,
				 struct snap_elfsym *sym);

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
 * none (then *out is empty), -ENOMEM. Malformed notes are skipped.
 * snap_elf_traps_free frees the arrays of *t. */
int snap_elf_ocaml_traps(const struct snap_elf *e, struct snap_elf_traps *out);
void snap_elf_traps_free(struct snap_elf_traps *t);

#endif

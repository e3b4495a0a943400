/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one bounded reader of ELF64 little-endian files (docs/design.md, file
 * map): the ELF header, the program headers (PT_LOAD segments for
 * util/loadseg.h, the one file offset <-> address converter), the section
 * headers, a section by name or type, symbol tables, string tables and notes.
 * It works on bytes in memory (buf, len) that come from outside, and checks:
 *   - the header: magic, ELFCLASS64, ELFDATA2LSB, at least 64 bytes;
 *   - each header table: its entry size is the ELF64 one and count * size
 *     bytes from its offset lie inside len, without overflow (a table that
 *     does not is an error, or with SNAP_ELF_LAX counts as absent);
 *   - each section or table whose bytes are handed out: offset and size
 *     inside len; each string: its offset inside its table and a NUL before
 *     the table's end; each note: header, name and description inside the
 *     note area.
 * Nothing behind an unchecked offset is read. snap_elf_read_loads reads the
 * program headers of a file with pread instead (for /proc/kcore, which
 * cannot be mapped), checking the same.
 *
 * Why not libelf (parse/cfi.c and record/cgpick.c use it where libdw needs an
 * Elf *): the callers hold a read-only mapping and want a few tables of it
 * without copies or descriptors, while elf_memory takes a mutable image; the
 * answers on damaged files (a header table out of bounds ignored with
 * SNAP_ELF_LAX, a name without its NUL skipped entry by entry) are those of
 * the two readers this one replaced, pinned by their tests and fuzz corpora;
 * and each check is one comparison against len, in one file that
 * tests/fuzz/fuzz_elf.c covers.
 */
#ifndef SNAP_UTIL_ELF_H
#define SNAP_UTIL_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "util/loadseg.h"

/* Byte offsets of the ELF64 fields, named after <elf.h> (the buffer is read
 * with util/bytes.h's snap_get*: it may be unaligned). */
#define SNAP_EHDR(field) offsetof(Elf64_Ehdr, field)
#define SNAP_PHDR(field) offsetof(Elf64_Phdr, field)
#define SNAP_SHDR(field) offsetof(Elf64_Shdr, field)
#define SNAP_SYM(field)	 offsetof(Elf64_Sym, field)
#define SNAP_RELA(field) offsetof(Elf64_Rela, field)
#define SNAP_DYN(field)	 offsetof(Elf64_Dyn, field)
#define SNAP_NHDR(field) offsetof(Elf64_Nhdr, field)

/* PT_LOAD segments kept by snap_elf_open, and by snap_elf_read_loads. */
#define SNAP_ELF_OPEN_LOADS 64
#define SNAP_ELF_MAX_LOADS  1024

/* snap_elf_open flag: a header table out of bounds counts as absent. */
#define SNAP_ELF_LAX 1

/* An opened image. Every field is checked: phnum and shnum entries lie
 * inside buf. */
struct snap_elf {
	const uint8_t *buf; /* borrowed */
	size_t len;
	uint16_t type; /* ET_EXEC, ET_DYN */
	uint64_t phoff, shoff;
	uint16_t phnum, shnum, shstrndx;
	int symtab, dynsym; /* first SHT_SYMTAB and SHT_DYNSYM section, -1 = absent */
	struct snap_loadseg load[SNAP_ELF_OPEN_LOADS]; /* the first PT_LOAD headers */
	size_t nload;
};

/* One symbol table with its string table, both inside the buffer. */
struct snap_elf_symtab {
	const uint8_t *syms; /* count entries of sizeof(Elf64_Sym) */
	uint64_t count;
	const char *str; /* strsize bytes */
	uint64_t strsize;
};

/* One symbol table entry, decoded. */
struct snap_elf_rawsym {
	uint32_t name;		 /* offset in the string table */
	uint8_t type, bind, vis; /* STT_*, STB_*, STV_* */
	uint16_t shndx;
	uint64_t value, size;
};

/* One note. name and desc point inside the note area. */
struct snap_elf_note {
	uint32_t type, namesz, descsz;
	const uint8_t *name, *desc;
};

/*
 * Checks the ELF header and the program and section header tables of
 * (buf, len). flags: 0 or SNAP_ELF_LAX. Returns 0, or -SNAP_EFORMAT for
 * anything that is not an ELF64 LE file (or, without SNAP_ELF_LAX, has a
 * header table out of bounds).
 */
int snap_elf_open(struct snap_elf *e, const void *buf, size_t len, unsigned flags);

/* 1 when [off, off + n * size) lies inside the buffer, without overflow. */
int snap_elf_in_bounds(const struct snap_elf *e, uint64_t off, uint64_t n, uint64_t size);

/* Program header i (inside the buffer), or NULL. */
const uint8_t *snap_elf_phdr(const struct snap_elf *e, unsigned i);

/* Section header i (inside the buffer), or NULL. */
const uint8_t *snap_elf_shdr(const struct snap_elf *e, unsigned i);

/* The bytes of section i (sh_offset, sh_size inside the buffer; *size set),
 * or NULL. SHT_NOBITS sections are not special-cased: check sh_type. */
const uint8_t *snap_elf_sec_bytes(const struct snap_elf *e, unsigned i, uint64_t *size);

/* The name of section i through the section name table, or "" (NUL-terminated
 * inside the buffer). */
const char *snap_elf_sec_name(const struct snap_elf *e, unsigned i);

/* The first section from index 1 called name, or -1. */
int snap_elf_sec_by_name(const struct snap_elf *e, const char *name);

/* The first section from index 1 of type (SHT_*), or -1. */
int snap_elf_sec_by_type(const struct snap_elf *e, uint32_t type);

/* The NUL-terminated string at off of the table (tab, size), or NULL when off
 * is outside it or no NUL ends the string inside it. */
const char *snap_elf_str(const char *tab, uint64_t size, uint64_t off);

/* The symbol table section idx and its sh_link string table: 0 with *t
 * filled (size / 24 entries), or -1 when either lies outside the buffer. */
int snap_elf_symtab(const struct snap_elf *e, int idx, struct snap_elf_symtab *t);

/* Entry i (< t->count) of t. */
void snap_elf_sym_at(const struct snap_elf_symtab *t, uint64_t i, struct snap_elf_rawsym *s);

/* 1 when the file has a symbol table (.symtab or .dynsym). */
static inline int snap_elf_has_symbols(const struct snap_elf *e)
{
	return e->symtab >= 0 || e->dynsym >= 0;
}

/*
 * The note at *pos of the note area (p, size), whose name and description
 * are padded to align (4 or 8). Returns 1 with *n filled and *pos moved past
 * it, 0 at the end or at a note that does not fit (which ends the area).
 */
int snap_elf_note_next(const uint8_t *p, uint64_t size, uint64_t align, uint64_t *pos,
		       struct snap_elf_note *n);

/* 1 when n is owner's (a NUL-terminated name, "GNU") note of type. */
int snap_elf_note_is(const struct snap_elf_note *n, const char *owner, uint32_t type);

/* 1 with id (20 bytes) and *len filled when n is a GNU build id of 1..20
 * bytes, else 0. */
int snap_elf_note_build_id(const struct snap_elf_note *n, uint8_t id[20], size_t *len);

/*
 * The PT_LOAD segments (at most SNAP_ELF_MAX_LOADS), type (ET_*) and GNU
 * build id (the first of the PT_NOTE segments' first 512 bytes) of the ELF64
 * LE file path, read with pread (it works on /proc/kcore, which cannot be
 * mapped). *segs is allocated (owned by the caller: snap_free). Returns 0,
 * -SNAP_EFORMAT, -errno or -ENOMEM.
 */
int snap_elf_read_loads(const char *path, struct snap_loadseg **segs, size_t *nsegs, int *etype,
			uint8_t build_id[20], size_t *build_id_len);

#endif

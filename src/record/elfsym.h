/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols of an ELF file for -trigger, the trigger picker and the call graph
 * pick: the defined entries of .symtab and .dynsym, lookups by name (also
 * demangled, as perf and gdb show them), and the OCaml exception notes. Pure:
 * it works on a file opened by util/elf.h, the bounded reader (every offset
 * checked: the bytes come from outside); util/loadseg.h converts a symbol's
 * address to a file offset (struct snap_elf's load[]).
 */
#ifndef SNAP_RECORD_ELFSYM_H
#define SNAP_RECORD_ELFSYM_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "model/codeinfo.h"
#include "util/elf.h"

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

/* Iterates the defined symbols of .symtab then .dynsym. *cursor starts at 0.
 * Returns 1 and fills *sym, 0 at the end; malformed entries are skipped. */
int snap_elfsym_next(const struct snap_elf *e, uint64_t *cursor, struct snap_elfsym *sym);

/* Finds the first defined FUNC (or IFUNC) symbol called name with a non-zero
 * value. Returns 1 and fills *sym, 0 if absent. */
int snap_elfsym_find_func(const struct snap_elf *e, const char *name, struct snap_elfsym *sym);

/*
 * The name perf shows for a mangled symbol (C++ "_Z...", Rust "_ZN...17h<hash>E"
 * or "_R..."): libiberty's demangler as perf's demangle_sym calls it, without
 * parameters ("app::detail::count_words", a Rust path without its hash), or
 * with them (params = 1: "app::detail::count_words(char const*)", as gdb
 * shows it). A "@VERSION" suffix is kept. Returns a malloc'ed string (free()),
 * or NULL when name is not mangled.
 */
char *snap_elfsym_demangle(const char *name, int params);

/*
 * Finds a defined FUNC (or IFUNC) symbol with a non-zero value by its
 * demangled name, as perf probe and gdb take one: perf's name or the one with
 * parameters (see snap_elfsym_demangle); with suffix = 1, a trailing part of
 * either after "::" ("count_words", "detail::count_words"). Returns 1 and
 * fills *sym, 0 if none matches, -EEXIST when functions at different
 * addresses do (overloads: the name with parameters tells them apart).
 */
int snap_elfsym_find_demangled(const struct snap_elf *e, const char *name, int suffix,
			       struct snap_elfsym *sym);

/* OCaml exception handler addresses from the .note.ocaml_eh notes (owner
 * "OCaml", type 1: a u64 recorded base, then three lists of u64 addresses,
 * each ended by 0: entertraps, pushtraps, poptraps), moved by .stapsdt.base's
 * address minus the recorded base (prelinking), each list sorted, duplicates
 * removed. Link-time addresses, in a struct snap_ocaml_eh (model/codeinfo.h)
 * whose arrays the caller then owns.
 * read returns 1 with *out filled when the file has such notes, 0 when it has
 * none (then *out is empty), -ENOMEM. Malformed notes are skipped.
 * snap_ocaml_traps_free frees the arrays of *t (read's). */
int snap_ocaml_traps_read(const struct snap_elf *e, struct snap_ocaml_eh *out);
void snap_ocaml_traps_free(struct snap_ocaml_eh *t);

#endif

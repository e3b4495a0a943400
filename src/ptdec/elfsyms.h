/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols of one executable or library as perf shows them (docs/ptdec.md):
 * the .symtab of its debug file (found by build id under a debug directory)
 * or of the file itself, else its .dynsym; functions, objects and text labels;
 * duplicates resolved and zero sizes extended as perf does; PLT entries named
 * "NAME@plt" from .rela.plt. Addresses are the ELF's virtual addresses;
 * snap_elfsyms_off2vaddr converts a file offset (from an mmap) to one. The
 * files are read by util/elf.h (the bounded reader). Pure apart from reading
 * the files named.
 */
#ifndef SNAP_PTDEC_ELFSYMS_H
#define SNAP_PTDEC_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "util/loadseg.h"

struct snap_elfsyms_ent {
	uint64_t start, end;
	uint32_t name; /* offset in the table's names */
	uint8_t bind;
	uint8_t kmod; /* kallsyms: a module's symbol */
};

struct snap_elfsyms {
	int ok;			      /* an ELF file was read */
	struct snap_loadseg load[16]; /* the first PT_LOAD segments */
	int nload;
	struct snap_elfsyms_ent *syms; /* sorted by start, no overlaps at equal starts */
	size_t nsyms;
	char *names;
	size_t nameslen, namescap;
	uint8_t build_id[20];
	size_t build_id_len;
};

/*
 * Reads path (an ELF file). debug_dir (NULL = none) is searched for
 * .build-id/XX/YYYY.debug with the file's build id, whose .symtab is preferred.
 * Returns 0 (also for files that have no symbols), -SNAP_EFORMAT for a file
 * that is not ELF64 little-endian, -errno if it cannot be read, -ENOMEM.
 */
int snap_elfsyms_load(struct snap_elfsyms *s, const char *path, const char *debug_dir);

/* Parses an ELF image in memory (the fuzz target's entry); same results. */
int snap_elfsyms_load_mem(struct snap_elfsyms *s, const uint8_t *buf, size_t len,
			  const char *debug_dir);

/* Frees what load, load_mem or load_kallsyms gave s (owned by s) and zeroes
 * it; s may be loaded again. Safe on a zeroed or already finished s. */
void snap_elfsyms_fini(struct snap_elfsyms *s);

/* The NUL-terminated name of symbol e of s (borrowed from s until fini). */
static inline const char *snap_elfsyms_name(const struct snap_elfsyms *s,
					    const struct snap_elfsyms_ent *e)
{
	return s->names + e->name;
}

/*
 * Reads a kallsyms file (/proc/kallsyms, perf's kcore_dir/kallsyms) as perf's
 * kallsyms loader does: T, W, D and B symbols (either case), module symbols
 * ("\t[mod]" after the name) named without the module, equal starts resolved
 * as for ELF symbols, each ending at the next one (a kernel symbol followed by
 * a module one, and the last, at the next page). Returns 0, -errno or -ENOMEM.
 */
int snap_elfsyms_load_kallsyms(struct snap_elfsyms *s, const char *path);

/* The same on a kallsyms text in memory (the fuzz target's entry). */
int snap_elfsyms_load_kallsyms_mem(struct snap_elfsyms *s, const char *buf, size_t len);

/* The address of the first symbol called name in a kallsyms file (any type).
 * Returns 0 or -ENOENT (also when the file cannot be read). */
int snap_kallsyms_lookup(const char *path, const char *name, uint64_t *addr);

/* The address of the first symbol called name, or -ENOENT. */
int snap_elfsyms_lookup(const struct snap_elfsyms *s, const char *name, uint64_t *addr);

/* The value of the first .symtab symbol called name in the ELF file path
 * (any type: "_text" of a vmlinux). Returns 0 or -ENOENT. */
int snap_elfsyms_symbol_value(const char *path, const char *name, uint64_t *val);

/* The symbol containing vaddr, or NULL. */
const struct snap_elfsyms_ent *snap_elfsyms_find(const struct snap_elfsyms *s, uint64_t vaddr);

/* File offset to virtual address through the PT_LOAD segments (util/loadseg.h).
 * Returns 0 or -ENOENT. */
int snap_elfsyms_off2vaddr(const struct snap_elfsyms *s, uint64_t off, uint64_t *vaddr);

#endif

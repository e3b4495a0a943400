/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols of one executable or library as perf shows them (docs/ptdec.md):
 * the .symtab of its debug file (found by build id under a debug directory)
 * or of the file itself, else its .dynsym; functions, objects and text labels;
 * duplicates resolved and zero sizes extended as perf does; PLT entries named
 * "NAME@plt" from .rela.plt. Addresses are the ELF's virtual addresses;
 * snap_elfsyms_off2vaddr converts a file offset (from an mmap) to one.
 * Pure apart from reading the files named.
 */
#ifndef SNAP_PTDEC_ELFSYMS_H
#define SNAP_PTDEC_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

struct snap_elfsym_ent {
	uint64_t start, end;
	uint32_t name; /* offset in the table's names */
	uint8_t bind;
};

struct snap_elfsyms {
	int ok; /* an ELF file was read */
	struct {
		uint64_t off, vaddr, filesz;
	} load[16]; /* executable and other PT_LOAD segments */
	int nload;
	struct snap_elfsym_ent *syms; /* sorted by start, no overlaps at equal starts */
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

void snap_elfsyms_fini(struct snap_elfsyms *s);

static inline const char *snap_elfsyms_name(const struct snap_elfsyms *s,
					    const struct snap_elfsym_ent *e)
{
	return s->names + e->name;
}

/* The symbol containing vaddr, or NULL. */
const struct snap_elfsym_ent *snap_elfsyms_find(const struct snap_elfsyms *s, uint64_t vaddr);

/* File offset to virtual address through the PT_LOAD segments. Returns 0 or -ENOENT. */
int snap_elfsyms_off2vaddr(const struct snap_elfsyms *s, uint64_t off, uint64_t *vaddr);

#endif

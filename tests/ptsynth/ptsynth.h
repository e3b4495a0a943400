/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptsynth: test tooling that makes Intel PT perf.data files without PT hardware
 * (docs/pt-testing.md). Shared by sstep, insnmap, mkptdata and their unit test.
 *
 * Files exchanged between the tools (all in one directory per program):
 *   NAME.steps  binary, one struct ptsynth_step per executed instruction, in
 *               execution order (threads interleaved as they ran)
 *   NAME.maps   text, one executable file mapping a line: "START END PGOFF PATH"
 *               (hex, hex, hex, absolute path), as /proc/PID/maps had them
 *   NAME.insn   text, one executed instruction a line: "ADDR LEN KIND" (hex,
 *               decimal, a ptsynth_kind name), sorted by address
 * Functions return >= 0 on success or a negative errno-style code.
 */
#ifndef PTSYNTH_H
#define PTSYNTH_H

#include <stddef.h>
#include <stdint.h>

/* What an instruction does to control flow, as PT encodes it. */
enum ptsynth_kind {
	PTSYNTH_OTHER = 0, /* falls through */
	PTSYNTH_JCC,	   /* conditional: one TNT bit */
	PTSYNTH_JMP,	   /* direct jump: no packet */
	PTSYNTH_JMPI,	   /* indirect jump: TIP */
	PTSYNTH_CALL,	   /* direct call: no packet */
	PTSYNTH_CALLI,	   /* indirect call: TIP */
	PTSYNTH_RET,	   /* near return: TNT (compressed) or TIP */
	PTSYNTH_SYSCALL,   /* syscall/sysenter: leaves user space */
	PTSYNTH_FAR,	   /* int, iret, sysret, hlt, ud2...: far or unusual transfer */
	PTSYNTH_NKINDS
};

/* One executed instruction (sstep output). */
struct ptsynth_step {
	uint64_t ip;
	uint32_t tid;
	uint32_t flags; /* reserved, 0 */
};

struct ptsynth_insn {
	uint64_t addr;
	uint32_t len;
	uint32_t kind; /* enum ptsynth_kind */
};

/* A sorted instruction map. */
struct ptsynth_imap {
	struct ptsynth_insn *v;
	size_t n, cap;
};

struct ptsynth_mapping {
	uint64_t start, end, pgoff;
	char *path; /* owned */
};

struct ptsynth_maps {
	struct ptsynth_mapping *v;
	size_t n, cap;
};

/* Returns the kind's name ("JCC"...) or "?" for an unknown value. */
const char *ptsynth_kind_name(unsigned kind);
/* Returns the kind for a name, or -EINVAL. */
int ptsynth_kind_parse(const char *name);

/*
 * Parses one line of `objdump -d -w` output. Returns 1 and fills *addr, *len
 * and *kind for an instruction line, 0 for any other line (labels, headers,
 * blank lines, "(bad)"), never an error. The mnemonic is classified after
 * stripping "<symbol>" and "# comment" text, so a direct call printed as
 * "call 1030 <*ABS*+0x9f610@plt>" is a CALL, not an indirect one. If target
 * is not NULL it gets the target of a direct JCC, JMP or CALL, else 0.
 */
int ptsynth_objdump_line(const char *line, uint64_t *addr, uint32_t *len, unsigned *kind,
			 uint64_t *target);

/* Appends to the map. Returns 0 or -ENOMEM. */
int ptsynth_imap_add(struct ptsynth_imap *m, uint64_t addr, uint32_t len, unsigned kind);
/* Sorts by address and drops duplicate addresses (any one of them is kept). */
void ptsynth_imap_sort(struct ptsynth_imap *m);
/* Returns the instruction at addr (borrowed) or NULL. The map must be sorted. */
const struct ptsynth_insn *ptsynth_imap_find(const struct ptsynth_imap *m, uint64_t addr);
void ptsynth_imap_fini(struct ptsynth_imap *m);
/* Reads/writes the NAME.insn text format. Returns 0, -errno, or -EINVAL on a bad line. */
int ptsynth_imap_load(struct ptsynth_imap *m, const char *path);
int ptsynth_imap_save(const struct ptsynth_imap *m, const char *path);

/*
 * Parses one /proc/PID/maps line; returns 1 and adds it to *maps if it is an
 * executable mapping of a file (path starting with '/') not already present,
 * 0 if it is not, -ENOMEM.
 */
int ptsynth_maps_add_proc_line(struct ptsynth_maps *maps, const char *line);
/* Returns the mapping that contains addr (borrowed) or NULL. */
const struct ptsynth_mapping *ptsynth_maps_find(const struct ptsynth_maps *maps, uint64_t addr);
void ptsynth_maps_fini(struct ptsynth_maps *maps);
/* Reads/writes the NAME.maps text format. Returns 0, -errno, -EINVAL or -ENOMEM. */
int ptsynth_maps_load(struct ptsynth_maps *maps, const char *path);
int ptsynth_maps_save(const struct ptsynth_maps *maps, const char *path);

/*
 * Disassembles the file of every mapping with objdump and adds, at run-time
 * addresses, the instructions whose address is in want[0..nwant) (sorted,
 * unique). Returns 0, -ENOENT if objdump could not run, -errno or -ENOMEM.
 */
int ptsynth_imap_from_maps(struct ptsynth_imap *m, const struct ptsynth_maps *maps,
			   const uint64_t *want, size_t nwant);

/* Reads a NAME.steps file. *steps is returned owned (free()). Returns 0 or -errno/-EINVAL. */
int ptsynth_steps_load(const char *path, struct ptsynth_step **steps, size_t *n);

#endif

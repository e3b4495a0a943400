/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -callgraph-mode auto: looks at the program's code and picks how perf
 * should unwind its stacks (docs/recording.md, "Call graphs"). fp when the
 * executable and its own libraries keep frame pointers: judged by the
 * .eh_frame unwind rows of the functions that have a stack frame (the CFA is
 * %rbp-based somewhere in the function), else by function prologues
 * `push %rbp; mov %rsp,%rbp`; a Go program always keeps them. Else lbr where
 * the CPU has it; else dwarf when they carry .eh_frame unwind tables.
 * The C runtime (libc, libm, ld.so, libstdc++, libgcc_s...) is not judged:
 * Debian builds it without frame pointers, and its frames are mostly leaves.
 *
 * snap_fpscan_elf, snap_cgpick_dyn_next and snap_cgpick_decide are pure (bytes
 * in, facts out; every offset checked: the bytes come from outside);
 * snap_cgpick reads the files.
 */
#ifndef SNAP_RECORD_CGPICK_H
#define SNAP_RECORD_CGPICK_H

#include <stddef.h>
#include <stdint.h>

#include "record/perfargs.h"

/* What one ELF file says about its unwinding. */
struct snap_fpscan {
	uint32_t funcs;	    /* functions judged: with by_cfi, those of >= 16 bytes whose
			   unwind rows show a stack frame (leaves and tail-callers
			   without one say nothing); else every function >= 16 bytes */
	uint32_t fp;	    /* ... that keep a frame pointer: with by_cfi, the CFA is
			   %rbp-based in some row; else the function starts with
			   push %rbp; mov %rsp,%rbp (after endbr64) */
	uint32_t frameless; /* by_cfi: functions without a stack frame (not judged) */
	int eh_frame;	    /* a non-empty .eh_frame section */
	int by_cfi;	    /* judged by .eh_frame rows (libdw), not by prologues */
	int go;		    /* a Go program (.go.buildinfo or .note.go.buildid) */
};

/* Scans an ELF64 x86-64 image (bytes from outside: every offset checked;
 * the unwind rows are read by libdw). Returns 0, or -SNAP_EFORMAT. */
int snap_fpscan_elf(const void *buf, size_t len, struct snap_fpscan *out);

/* Iterates the DT_NEEDED (tag 1), DT_RPATH (15) and DT_RUNPATH (29) entries
 * of the .dynamic section. *cursor starts at 0. Returns 1 with *tag and *str
 * (borrowed, NUL-terminated) set, 0 at the end or on malformed input. */
int snap_cgpick_dyn_next(const void *buf, size_t len, uint64_t *cursor, int *tag, const char **str);

/* One examined file. */
struct snap_cgfile {
	const char *name; /* shown in the reason (a base name) */
	int ok;		  /* read and scanned */
	int runtime;	  /* a C runtime library: not judged */
	struct snap_fpscan scan;
};

/* Returns 1 for the C runtime's libraries (by file name). */
int snap_cgpick_is_runtime(const char *base);

/* Picks the mode for files[0] (the executable) and the rest (its
 * libraries); why gets the reason ("python3 has no frame pointers ...").
 * Never AUTO. */
enum snap_cg snap_cgpick_decide(const struct snap_cgfile *files, size_t n, int lbr, char *why,
				size_t len);

/* The interpreter of a script: buf (len bytes, from outside) starting "#!"
 * names it, e.g. "#!/bin/sh -e" gives "/bin/sh"; "#!/usr/bin/env NAME" gives
 * NAME (a bare name, found on PATH by the caller: *on_path = 1). Writes it to
 * out (size bytes, NUL-terminated); returns 1, or 0 when buf is no script or the
 * line says nothing usable (env with options, a name too long). */
int snap_cgpick_shebang(const void *buf, size_t len, char *out, size_t size, int *on_path);

/* Reads the executable exe and the libraries it needs (DT_NEEDED found
 * through its RUNPATH, LD_LIBRARY_PATH and the system directories), or with
 * pid > 0 the executable files mapped by that process, and decides. A script
 * (snap_cgpick_shebang) is judged by its interpreter (itself a script: by
 * its own, up to 4 levels as the kernel): what runs is the interpreter's code
 * (why then starts "NAME is a script run by INTERP: "). Returns the mode; why
 * as above, escaped for a terminal (util/esc.h: the names are the program's). */
enum snap_cg snap_cgpick(const char *exe, int pid, int lbr, char *why, size_t len);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What decoding takes from the traced executable (run/attach: the program;
 * decode: -executable): its OCaml exception handler notes.
 * MAGIC_TRACE_NO_OCAML_EXCEPTION_DEBUG_INFO (or SNAPTRACE_NO_OCAML_EXCEPTION_DEBUG_INFO)
 * set and not "0" ignores the notes (the name heuristic is used instead).
 */
#ifndef SNAP_RECORD_EXEINFO_H
#define SNAP_RECORD_EXEINFO_H

#include <stddef.h>

#include "model/codeinfo.h"
#include "record/elfsym.h"

struct snap_exeinfo {
	const void *buf; /* the mapped file */
	size_t len;
	struct snap_elf elf;
	struct snap_ocaml_eh eh; /* owned (snap_ocaml_traps_read's arrays) */
	int have_eh;		 /* eh is filled (the file has OCaml exception notes) */
};

/* Maps path and reads what decoding needs. Returns 0 (a file that is not an
 * ELF executable is fine: nothing found), or -errno when it cannot be read
 * (x is then empty; fini is harmless). */
int snap_exeinfo_load(struct snap_exeinfo *x, const char *path);
void snap_exeinfo_fini(struct snap_exeinfo *x);

#endif

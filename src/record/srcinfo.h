/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source positions for slices (file, line, col args): the DWARF line table
 * (elfutils libdw) of each DSO the trace names, at the start address of the
 * slice's function (its symbol's value in that DSO, so position-independent
 * executables and shared libraries work as well). The symbol is found by the
 * name perf shows (demangled C++ and Rust names, record/elfsym.h); the line
 * by address through each compilation unit's ranges (record/dwline.h: no
 * .debug_aranges needed, which clang and Go do not write). Each DSO is opened once and
 * each function looked up once (the stack builder caches per symbol). DSOs without
 * debug info (most system libraries) give no position.
 */
#ifndef SNAP_RECORD_SRCINFO_H
#define SNAP_RECORD_SRCINFO_H

#include <stddef.h>

#include "model/codeinfo.h"
#include "util/strtab.h"
#include "util/u64map.h"

struct snap_srcfile;

struct snap_srcinfo {
	struct snap_srcloc iface; /* give &iface to the stack builder */
	struct snap_strtab *st;	  /* borrowed */
	struct snap_u64map dsos;  /* dso strtab id -> index + 1 in files, 0 = no debug info */
	struct snap_srcfile **files;
	size_t nfiles, cap;
	unsigned long found, missing;
};

/* init: no file read yet, names interned into st (borrowed, must outlive si);
 * fini closes every file read and leaves si zeroed. */
void snap_srcinfo_init(struct snap_srcinfo *si, struct snap_strtab *st);
void snap_srcinfo_fini(struct snap_srcinfo *si);

#endif

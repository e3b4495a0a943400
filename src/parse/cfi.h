/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function around an address of stripped code, from the call frame
 * information of its file (docs/sampling.md, "Unknown code"): stripped
 * executables and libraries keep .eh_frame, one FDE per function with its
 * exact address range (.debug_frame is used when a file has no .eh_frame).
 * libelf finds the sections, libdw's dwarf_next_cfi walks the CIEs and FDEs,
 * and the FDE's pointer encoding (absolute or pc-relative) is decoded here.
 *
 * Addresses in and out are perf's "mapped" call-chain addresses, i.e. file
 * offsets (util/loadseg.h); they are converted to the ELF's virtual addresses
 * for the lookup and back.
 *
 * Files are named by perf.data (outside input): each is opened read-only and
 * non-blocking, must be a regular file, is read once into a sorted table of
 * function ranges (FDE initial location and length; the program headers) and
 * closed; tables are cached by DSO string id, for at most SNAP_CFI_MAX_FILES
 * files. Lookups are binary searches. When perf.data recorded a build id for
 * the path (snap_cfi_want), the file must have it; else its copy in perf's
 * build-id cache is read, else nothing. A file that is missing,
 * not ELF, damaged or without CFI is remembered as such and finds nothing.
 *
 *   struct snap_cfi c;
 *   snap_cfi_init(&c);
 *   if (snap_cfi_func_start(&c, dso_id, "/usr/bin/gzip", 0x5123, &start) == 1) ...
 *   snap_cfi_fini(&c);
 */
#ifndef SNAP_PARSE_CFI_H
#define SNAP_PARSE_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "util/loadseg.h"
#include "util/u64map.h"

#define SNAP_CFI_MAX_FILES 512	      /* DSOs looked at; later ones find nothing */
#define SNAP_CFI_MAX_SEGS  64	      /* PT_LOAD headers kept per file */
#define SNAP_CFI_MAX_FDES  (1u << 22) /* functions kept per file */
#define SNAP_CFI_MAX_ROWS  (1u << 18) /* frameless answers cached */

/* perf's name of the vDSO: no file, but its copy in the build-id cache
 * (~/.debug/.build-id/XX/YYYY/vdso) is read when perf recorded its build id */
#define SNAP_CFI_VDSO "[vdso]"

struct snap_cfi_file; /* one ELF file's CFI */

struct snap_cfi_want; /* expected build ids */

struct snap_cfi_stats {
	uint64_t files;		 /* files looked at (read or not) */
	uint64_t no_cfi;	 /* of which missing, not a regular file, not ELF, or without CFI */
	uint64_t over;		 /* lookups in DSOs beyond SNAP_CFI_MAX_FILES */
	uint64_t lookups;	 /* addresses looked up */
	uint64_t found;		 /* of which inside a function */
	uint64_t other_build;	 /* files at their path of another build than recorded */
	uint64_t from_cache;	 /* build-id cache copies read instead */
	uint64_t leaf_lookups;	 /* frames of frame-pointer chains looked up (mark_frames) */
	uint64_t leaf_frameless; /* of which frameless at their address */
};

struct snap_cfi {
	struct snap_u64map byid; /* DSO string id -> index + 1 in files, 0 = nothing to read */
	struct snap_cfi_file **files;
	size_t nfiles, cap;
	struct snap_cfi_want *want; /* path -> build id perf recorded */
	size_t nwant, wantcap;
	struct snap_u64map wantidx; /* hash of the path -> index + 1 in want */
	char *cache_dir;	    /* perf's build-id cache (~/.debug), NULL = none */
	int fp_chains;		    /* call chains are frame-pointer walks (snap_cfi_mark_frames) */
	struct snap_u64map rows;    /* DSO << 44 | address -> snap_cfi_frameless's answer */
	struct snap_cfi_stats st;
};

/* An empty cache (no file opened yet). */
void snap_cfi_init(struct snap_cfi *c);
/* Closes every file; c is left zeroed. */
void snap_cfi_fini(struct snap_cfi *c);

/*
 * The build id perf recorded for path (perf.data's build-id table, parse/perfdata.h):
 * the file at path is used only if its build id is this one, else the copy in
 * the build-id cache (snap_cfi_set_cache_dir) with this id, else none. Paths
 * not named here are used as they are. The first call for a path counts.
 * Returns 0 or -ENOMEM.
 */
int snap_cfi_want(struct snap_cfi *c, const char *path, const uint8_t *id, size_t idlen);
/* perf's build-id cache directory (DIR/.build-id/XX/REST/elf); NULL = none.
 * Returns 0 or -ENOMEM. */
int snap_cfi_set_cache_dir(struct snap_cfi *c, const char *dir);

/*
 * The start of the function holding the mapped address off of the DSO path
 * (whose string id is dso, the cache key), in the same terms. Only absolute
 * paths are looked at. Returns 1 and sets *start, 0 if not known, -ENOMEM.
 */
int snap_cfi_func_start(struct snap_cfi *c, uint32_t dso, const char *path, uint64_t off,
			uint64_t *start);

/*
 * Frameless frames (docs/sampling.md, "Call counts where a frame-pointer chain
 * loses a frame"): whether the code at the mapped address off of the DSO path
 * has no frame of its own there, by its unwind row (libdw evaluates the
 * .eh_frame row, else the .debug_frame one; x86-64 only): the CFA is %rsp + 8
 * (nothing pushed yet, or all popped), or, in .eh_frame (whose rows say where
 * %rbp is saved; Go's .debug_frame does not), %rsp-based with %rbp not saved.
 * perf's walk of %rbp then skips the function's caller: for the leaf (a libc
 * wrapper before its system call, a Go leaf without locals, a function before
 * its push %rbp), and for a frame the walk reached by a return address into
 * code without frame pointers (a libc function calling back into framed code)
 * or by a call injected at an interrupted pc (Go's asyncPreempt). Answers are
 * cached (SNAP_CFI_MAX_ROWS). Returns 1 (frameless), 0 (a frame is set up, or
 * not known: no file, no row, another machine), -ENOMEM.
 */
int snap_cfi_frameless(struct snap_cfi *c, uint32_t dso, const char *path, uint64_t off);
/* Whether chains are frame-pointer walks (perf.data's events sample call chains
 * and no user stacks, PERF_SAMPLE_STACK_USER: not dwarf); 0 at init. */
void snap_cfi_set_fp_chains(struct snap_cfi *c, int on);
/* For frame-pointer chains only (c may be NULL: nothing): sets frameless on
 * every user frame of frames[0..n) (outermost first; DSO names in names) but
 * the outermost that is frameless at its address (snap_cfi_frameless): at its
 * pc for the innermost user frame, at the byte before (the call) for the
 * return addresses outside it. Other frames are left alone (the parsers clear
 * the bit). 0 or -ENOMEM. */
int snap_cfi_mark_frames(struct snap_cfi *c, const struct snap_strtab *names,
			 struct snap_loc *frames, uint32_t n);
/* snap_cfi_mark_frames on the frames of a SAMPLE or SWITCH event just parsed
 * (the parser's own array, which ev borrows); other events: nothing. */
int snap_cfi_mark_event(struct snap_cfi *c, const struct snap_strtab *names,
			const struct snap_event *ev);

/* One file, for tests and the fuzz target. open: 0, -errno, -SNAP_ENOTREG (not
 * a regular file), -SNAP_EFORMAT (not an ELF executable or library, or no CFI),
 * -ENOMEM. open_mem reads an ELF image in memory (not kept). close frees f
 * (NULL is a no-op). */
int snap_cfi_file_open(const char *path, struct snap_cfi_file **out);
int snap_cfi_file_open_mem(const void *buf, size_t len, struct snap_cfi_file **out);
void snap_cfi_file_close(struct snap_cfi_file *f);
/* The function start around the mapped address off: 1 (found) or 0. */
int snap_cfi_file_start(const struct snap_cfi_file *f, uint64_t off, uint64_t *start);
/* The unwind row at the mapped address off: 1 frameless (as snap_cfi_frameless),
 * 0 a frame set up (CFA %rbp-based, or %rbp saved), -1 not known (no row
 * there, not x86-64, outside the segments, a .debug_frame row with the CFA
 * %rsp-based beyond + 8). */
int snap_cfi_file_frameless(struct snap_cfi_file *f, uint64_t off);
/* The file's GNU build id (len 0 if none): the bytes, borrowed. */
const uint8_t *snap_cfi_file_build_id(const struct snap_cfi_file *f, size_t *len);
/* The number of functions (FDEs) read. */
size_t snap_cfi_file_nfdes(const struct snap_cfi_file *f);
/* The file's PT_LOAD segments (borrowed). */
const struct snap_loadseg *snap_cfi_file_segs(const struct snap_cfi_file *f, size_t *n);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What decoding learns about the traced code besides perf's events, from the
 * files themselves (record/srcinfo, record/exeinfo read them; stack/cstack
 * uses them): source positions of functions and OCaml exception handlers.
 */
#ifndef SNAP_MODEL_CODEINFO_H
#define SNAP_MODEL_CODEINFO_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"

/* Where a function's source is: slices of functions with debug info carry
 * file/line/col args. lookup fills *file (a strtab id), *line and *col for the
 * function of loc (its symbol in its DSO) and returns 1, 0 if unknown, or <0. */
struct snap_srcloc {
	int (*lookup)(void *ctx, const struct snap_loc *loc, uint32_t *file, int32_t *line,
		      int32_t *col);
	void *ctx;
};

/* OCaml exception handlers from the executable's exception notes (link-time
 * addresses, each list sorted ascending). See the OCaml section of stack/cstack.c. */
struct snap_ocaml_eh {
	const uint64_t *enter, *push, *pop; /* entertraps, pushtraps, poptraps */
	size_t nenter, npush, npop;
};

#endif

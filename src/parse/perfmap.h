/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT symbol maps (perf-PID.map, written by JIT compilers for perf): one
 * function a line, "START SIZE NAME" with START and SIZE in hex (an optional
 * 0x) and NAME the rest of the line. A later line with the same START
 * replaces the earlier one. Pure: bytes in; malformed lines are counted and
 * skipped, never fatal.
 */
#ifndef SNAP_PARSE_PERFMAP_H
#define SNAP_PARSE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/strtab.h"

struct snap_perfmap_entry {
	uint64_t start, size;
	uint32_t name; /* strtab id */
};

struct snap_perfmap {
	struct snap_perfmap_entry *e; /* sorted by start, unique starts (after finish) */
	size_t n, cap;
	uint64_t bad_lines;
};

/* init: an empty map; fini frees the entries and leaves m zeroed. */
void snap_perfmap_init(struct snap_perfmap *m);
void snap_perfmap_fini(struct snap_perfmap *m);
/* Adds the lines of buf (the whole file). Returns 0 or -ENOMEM. */
int snap_perfmap_add(struct snap_perfmap *m, const char *buf, size_t len, struct snap_strtab *st);
/* Sorts; later duplicates of a start win. Call once after the last add.
 * Returns 0 or -ENOMEM. */
int snap_perfmap_finish(struct snap_perfmap *m);
/* The entry with start <= addr < start + size, or NULL. */
const struct snap_perfmap_entry *snap_perfmap_find(const struct snap_perfmap *m, uint64_t addr);

#endif

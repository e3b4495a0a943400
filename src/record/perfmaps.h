/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decode -perf-map-file FILE[,FILE...]: JIT symbol maps named perf-PID.map.
 * Where perf found no symbol for an address of process PID ("[unknown ...]"),
 * the map entry containing the address names it (offset from its start).
 */
#ifndef SNAP_RECORD_PERFMAPS_H
#define SNAP_RECORD_PERFMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "parse/perfmap.h"
#include "util/strtab.h"
#include "util/u64map.h"

struct snap_perfmaps {
	struct snap_perfmap *maps;
	int32_t *pids;
	size_t n;
	struct snap_strtab *st;
	struct snap_u64map unknown; /* sym id -> 1 if "[unknown...", 2 if not */
	struct snap_loc *frames;    /* renamed copy of a sample's frames */
	size_t fcap;
	uint64_t renamed;
};

/* Loads the comma-separated files (each named perf-PID.map). Prints a one-line
 * error and returns <0 for a bad name or an unreadable file; 0 otherwise.
 * snap_perfmaps_fini frees the maps (also after a failed load). */
int snap_perfmaps_load(struct snap_perfmaps *pm, const char *files, struct snap_strtab *st);
void snap_perfmaps_fini(struct snap_perfmaps *pm);
/* Renames the unknown locations of ev (its frames are copied first).
 * Returns 0 or -ENOMEM. */
int snap_perfmaps_apply(struct snap_perfmaps *pm, struct snap_event *ev);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FXT tree view, for `dump -tree`: feed it the records of write/fxtread
 * in file order, then print. Per thread (in order of first event), its
 * slices sorted by start time (file order breaks ties, as Perfetto sorts),
 * one line each, indented two spaces per nesting depth:
 *   thread pid=42 tid=43 "prog [pid=42] [tid=43]"
 *     1000 +1000 main
 *       1200 +300 foo
 * Times are ticks as written; "+?" marks a slice never ended. An end with no
 * open slice is counted on the thread's last line. Memory: every duration
 * event of the trace (the view is for reading, not for huge traces).
 */
#ifndef SNAP_WRITE_FXTTREE_H
#define SNAP_WRITE_FXTTREE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/strtab.h"
#include "util/u64map.h"
#include "write/fxtread.h"

struct snap_fxttree_ev {
	uint64_t ts;
	uint64_t key;	/* record index * 2, + 1 for a complete event's end */
	uint32_t track; /* index in tracks */
	uint32_t name;	/* strtab id */
	int begin;	/* 1 begin, 0 end */
};

struct snap_fxttree_track {
	uint64_t pid, tid;
	uint32_t name; /* thread name (strtab id), 0 if none */
};

struct snap_fxttree {
	struct snap_strtab names;
	struct snap_u64map map; /* pid << 32 | tid (cut to 32 bits each) -> track index + 1 */
	struct snap_fxttree_track *tracks;
	size_t ntracks, tcap;
	struct snap_fxttree_ev *ev;
	size_t nev, evcap;
};

/* init: an empty view; fini frees it and leaves t zeroed. */
void snap_fxttree_init(struct snap_fxttree *t);
void snap_fxttree_fini(struct snap_fxttree *t);
/* Takes one record (borrowed during the call): begin, end and complete
 * events, and thread names. Returns 0 or -ENOMEM. */
int snap_fxttree_feed(struct snap_fxttree *t, const struct snap_fxtread_rec *rec);
/* Prints the view to out. Returns 0 or -ENOMEM. */
int snap_fxttree_print(struct snap_fxttree *t, FILE *out);

#endif

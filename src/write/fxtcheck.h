/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SNAP_WRITE_FXTCHECK_H
#define SNAP_WRITE_FXTCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "model/timeline.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "write/fxtread.h"

/*
 * The validator, for `dump -check`: feed it every record of a trace in
 * order, then finish. Records are checked as they come (flags, refs, times,
 * counter args, thread names); duration events (begin, end, complete) are
 * kept and checked at finish the way Perfetto builds slices: per thread,
 * stably sorted by timestamp (file order breaks ties), then matched on a
 * stack.
 */
struct snap_fxtcheck_ev {
	uint64_t ts, end; /* end: complete events only */
	const char *name; /* interned in snap_fxtcheck.names */
	uint64_t index;	  /* record index (the stable tie-break) */
	uint32_t name_len;
	uint32_t track_sub; /* track index << 4 | event type */
};

struct snap_fxtcheck {
	struct snap_u64map map; /* (pid << 32 | tid), cut to 32 bits each -> track index */
	uint64_t (*tracks)[2];	/* track index -> pid, tid */
	size_t ntracks, cap;
	struct snap_fxtcheck_ev *ev; /* the duration events */
	size_t nev, evcap;
	uint64_t tps; /* ticks per second in force */
	uint64_t records, events, begins, ends, completes, counters, kobjs;
	uint64_t bad_index; /* record index of the first problem */
	char why[256];
	/* a warning, not a problem: slices nested deeper than Perfetto keeps */
	uint64_t deep;		  /* how many */
	uint64_t deep_index;	  /* record index of the first one */
	char warning[192];	  /* describes the first one */
	struct snap_strtab names; /* event names (the trace need not stay in memory) */
	/* Beyond run_max kept events, they are sorted and spilled as a run to an
	 * unnamed temporary file ($TMPDIR), merged at finish: memory is bounded
	 * by run_max, the names and the nesting depth, not by the trace. */
	int spill_fd; /* -1 none yet, -2 unavailable (all kept in memory) */
	size_t run_max;
	uint64_t spilled;
	struct {
		uint64_t first, n;
	} * runs;
	size_t nruns, runcap;
};

/* Events kept in memory by the checker before a run is spilled (512 Ki
 * events, 20 MB). Tests may lower run_max after init. */
#define SNAP_FXTCHECK_RUN ((size_t)1 << 19)

#define SNAP_FXTCHECK_MAX_DEPTH SNAP_MAX_NESTING /* model/timeline.h */

/* init: nothing checked yet (1e9 ticks/s until an initialization record);
 * fini frees everything, spill file included. */
void snap_fxtcheck_init(struct snap_fxtcheck *c);
void snap_fxtcheck_fini(struct snap_fxtcheck *c);
/* Checks one record (as returned by snap_fxtread_next, borrowed only during
 * the call: names are copied; duration events are kept, spilled to a
 * temporary file beyond run_max). Returns 0, -SNAP_EPARSE with the problem in
 * c->why and its record in c->bad_index (a reader flag: undefined ref,
 * index 0, unknown provider, zero ticks/s, bad magic; a complete event
 * ending before it starts; a time overflowing int64 ns; a counter with
 * non-numeric args; a thread name without a "process" koid arg), -ENOMEM, or
 * -errno when the temporary file cannot be written (a full $TMPDIR: said in
 * c->why, once; without a temporary file at all the events stay in memory). */
int snap_fxtcheck_feed(struct snap_fxtcheck *c, const struct snap_fxtread_rec *rec);
/* Checks the slices: per thread, in timestamp order, every end closes an
 * open begin (never below depth 0), an end's name (when not empty) is the
 * innermost begin's, no slice outlasts the slice it is nested in,
 * complete events do not partially overlap, and every begin is ended.
 * Slices at depth SNAP_FXTCHECK_MAX_DEPTH or more are only counted (c->deep,
 * c->warning): Perfetto drops them, but the trace is valid. Returns 0,
 * -SNAP_EPARSE (c->why, c->bad_index), -ENOMEM or -errno (the temporary
 * file, c->why). */
int snap_fxtcheck_finish(struct snap_fxtcheck *c);

#endif

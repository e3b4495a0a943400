/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The `perf script` text parser (docs/behaviour.md §3): bytes in, struct snap_event
 * out. Pure: no I/O (unless given a CFI cache, below), no printing. Feed bytes in any chunking, then drain
 * snap_perfscript_next() until it returns 0; call snap_perfscript_finish()
 * when the input has ended and drain again.
 *
 * Understood records (perf 5.x-6.x, fields as selected with -F):
 *  - PT branches (`--itrace=b`):  [comm] [pid/]tid [cpu] time: [period event:]
 *    [flags] SRCIP SRCSYM => DSTIP DSTSYM                       -> SNAP_EV_BRANCH
 *  - ` instruction trace error type ...`                         -> SNAP_EV_ERROR
 *  - `cbr: N freq: MHZ MHz ...`                                  -> SNAP_EV_POWER
 *  - stack samples: header + TAB-indented frames + blank line    -> SNAP_EV_SAMPLE
 *    for the primary sampled event, SNAP_EV_EXTRA for any other event (the
 *    rule is in parse/primary.h; in a PT trace every sampled event is extra);
 *    `sched:sched_switch` samples are SNAP_EV_SWITCH (out, with the chain)
 *    and never the primary event.
 *  - `PERF_RECORD_SWITCH[_CPU_WIDE] OUT|IN` (--show-switch-events)    -> SNAP_EV_SWITCH
 *  - `PERF_RECORD_FORK(P:T):(PP:PT)`, `PERF_RECORD_EXIT(P:T):(PP:PT)`,
 *    `PERF_RECORD_COMM exec: COMM:P/T` (--show-task-events)          -> SNAP_EV_TASK
 *    (the thread P/T is born or exits; docs/sampling.md)
 *  - psb, other PT synth events (pwre, exstop, ptwrite, mwait, ...), perf's
 *    `#` header comments and other PERF_RECORD_* side-band lines are skipped
 *    silently.
 * Anything else is counted in the stats (never fatal). Lines longer than
 * SNAP_PERFSCRIPT_MAX_LINE bytes are skipped and counted, so memory stays
 * bounded as long as the caller drains next() between feeds.
 *
 * Symbols (docs/behaviour.md §3.3): `name+0xOFF (dso)`, `name (dso)`, `name+0xOFF`, `name`;
 * `[unknown] (dso)` becomes "[unknown @ 0xADDR (dso)]" (ADDR = the printed ip
 * in unsigned lowercase hex), ip 0 with `[unknown]` gives sym 0. A DSO text of
 * "[unknown]" gives dso 0. pid is -1 when perf printed only a tid (or none).
 * With a parse/cfi cache (snap_perfscript_set_cfi), a call-chain frame of
 * stripped code is named after its function's start instead:
 * "[unknown @ 0xSTART (dso)]", off = ADDR - START; that reads the DSO files.
 */
#ifndef SNAP_PARSE_PERFSCRIPT_H
#define SNAP_PARSE_PERFSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "parse/cfi.h"
#include "parse/primary.h"
#include "util/strtab.h"

#define SNAP_PERFSCRIPT_MAX_LINE   (1u << 20) /* longer lines are skipped and counted */
#define SNAP_PERFSCRIPT_MAX_FRAMES 65536u     /* frames kept per sample (leaf side) */

struct snap_perfscript_stats {
	uint64_t lines;		     /* lines consumed */
	uint64_t bytes;		     /* bytes fed */
	uint64_t events;	     /* events returned */
	uint64_t unknown_lines;	     /* lines/records not understood (skipped) */
	uint64_t first_unknown_line; /* 1-based line number of the first one, 0 if none */
	char first_unknown[160];     /* its text, truncated, controls and bad UTF-8 as '?' */
	uint64_t dropped_frames;     /* call-chain frames beyond SNAP_PERFSCRIPT_MAX_FRAMES */
	uint64_t bad_lines; /* of unknown_lines: a NUL byte or a time that does not parse */
};

struct snap_perfscript_symcache; /* private: ip + text -> sym/dso/off */

/* Caller-owned storage; all members are private. */
struct snap_perfscript {
	struct snap_strtab *names; /* borrowed */
	/* pending input: [pos, len) not yet consumed; no '\n' in [pos, scan) */
	char *buf;
	size_t len, cap, pos, scan;
	uint8_t finished; /* finish() was called */
	uint8_t skipping; /* dropping the rest of an overlong line */
	uint8_t rec_open; /* a SAMPLE/EXTRA record waits for its frames */
	uint8_t pt_seen;  /* branch lines seen: unidentified synth lines are PT noise */
	uint8_t has_hdr_loc;
	uint8_t frames_dropped;
	struct snap_primary prim; /* which sampled event builds stacks */
	struct snap_event rec;	  /* the open record */
	struct snap_loc hdr_loc;  /* `ip sym (dso)` printed on the open record's header */
	struct snap_loc *frames;  /* leaf first while open; reversed when returned */
	size_t nframes, fcap;
	char *scratch; /* for building "[unknown @ ...]" names */
	size_t scratch_cap;
	char comm_text[64]; /* last comm seen and its id: comm lines repeat */
	size_t comm_len;
	uint32_t comm_id;
	struct snap_perfscript_symcache *cache;
	struct snap_cfi *cfi; /* borrowed; NULL: unknown code named per address */
	struct snap_perfscript_stats stats;
};

/* Initialises ps; borrows names (must outlive ps). Returns 0 or -ENOMEM
 * (then ps needs no fini, but fini is harmless). */
int snap_perfscript_init(struct snap_perfscript *ps, struct snap_strtab *names);
/* Releases everything; leaves ps zeroed (double fini is harmless). */
void snap_perfscript_fini(struct snap_perfscript *ps);
/* Appends bytes (borrowed for the call only) in any chunking. Returns 0 or -ENOMEM. */
int snap_perfscript_feed(struct snap_perfscript *ps, const char *buf, size_t len);
/* No more input will come: a last line without '\n' and an open record complete. */
void snap_perfscript_finish(struct snap_perfscript *ps);
/* Returns 1 and fills *ev (every field set; unused ones 0), 0 if more input is
 * needed (or all done after finish), -ENOMEM. ev->frames is borrowed from ps
 * until the next call. Strings in *ev are ids in the names table. */
int snap_perfscript_next(struct snap_perfscript *ps, struct snap_event *ev);
/* Returns the 1-based number of the last line consumed (the one an error or
 * the last returned event came from; 0 before any), for messages. */
uint64_t snap_perfscript_line(const struct snap_perfscript *ps);
/* Tells the parser what the trace is when the caller knows it (the perf.data
 * header): SNAP_TRACE_PT or SNAP_TRACE_SAMPLES (parse/primary.h). */
void snap_perfscript_set_mode(struct snap_perfscript *ps, enum snap_trace_mode mode);
/* Names unknown call-chain code after its function's start, from the CFI of the
 * DSO files (parse/cfi.h; borrowed, must outlive ps; NULL = per address). */
void snap_perfscript_set_cfi(struct snap_perfscript *ps, struct snap_cfi *cfi);
/* Returns the counters (borrowed from ps). */
const struct snap_perfscript_stats *snap_perfscript_stats(const struct snap_perfscript *ps);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FXT (Fuchsia Trace Format) writer behind the timeline interface
 * (model/timeline.h), as Perfetto reads it.
 *
 * Output: magic, provider info "snaptrace" (id 0), provider section,
 * initialization (1e9 ticks/s: ticks are ns), then string, thread,
 * kernel-object (process/thread names) and event records. Names are ids of
 * a borrowed snap_strtab; they are interned into FXT's 15-bit string table
 * and tracks into its 8-bit thread table. When a table is full an index is
 * re-used (CLOCK, an approximation of least recently used) and redefined by
 * a new string/thread record before its next use, so any number of
 * distinct names and threads works. Strings longer than
 * SNAP_FXT_MAX_STRING bytes are truncated (at a UTF-8 boundary), never
 * fatal. Category refs are 0 (the empty string). No large records.
 *
 * How the ops map to records (pid/tid are written as 32-bit koids):
 *  - thread(): a process kernel object (type 1, koid pid) when the process
 *    is new or renamed, and a thread kernel object (type 2, koid tid) with
 *    the koid arg "process" = pid; a name id of 0 skips that record. The
 *    track's thread record is written lazily, before its first event.
 *  - begin/end/complete/counter: duration begin (2) / end (3) / complete
 *    (4) / counter (1) events; the end carries the given name (0: none).
 *    A complete event ending before it starts is written with end = start.
 *    Counters get ids 1, 2, ... per distinct name, and only INT args.
 *  - args: INT as int32 when it fits, else int64; PTR as pointer; STR as a
 *    string ref. At most SNAP_FXT_MAX_ARGS per event (extra ones and args
 *    of unknown type are dropped and counted in stats.dropped_args).
 *
 * Errors are sticky: each op returns the first error seen (its own or the
 * sink's), so a caller may check only finish().
 */
#ifndef SNAP_WRITE_FXT_H
#define SNAP_WRITE_FXT_H

#include <stddef.h>
#include <stdint.h>

#include "model/timeline.h"
#include "util/strtab.h"
#include "util/u64map.h"
#include "write/sink.h"

#define SNAP_FXT_MAX_STRING 31999 /* longest string written; longer ones are cut */
#define SNAP_FXT_STR_SLOTS  32767 /* string indexes 1..32767 */
#define SNAP_FXT_THR_SLOTS  255	  /* thread indexes 1..255 */
#define SNAP_FXT_MAX_ARGS   15	  /* args beyond this are dropped (counted) */

/* Counters of what the writer did, for tests and -stats. */
struct snap_fxt_stats {
	uint64_t events;	 /* event records */
	uint64_t string_records; /* string records (definitions and redefinitions) */
	uint64_t string_reuses;	 /* string indexes re-used for another string */
	uint64_t thread_records;
	uint64_t thread_reuses;
	uint64_t truncated;	/* strings cut to SNAP_FXT_MAX_STRING */
	uint64_t dropped_args;	/* args beyond SNAP_FXT_MAX_ARGS or of a bad type */
	uint64_t clamped_times; /* timestamps beyond SNAP_FXT_MAX_TS, written as it */
	uint64_t bad_utf8;	/* strings with bytes that are not UTF-8 (written as U+FFFD) */
};

/* The latest time an FXT event can have (ticks are ns; readers take int64). */
#define SNAP_FXT_MAX_TS ((uint64_t)INT64_MAX)

/* One FXT string index. */
struct snap_fxt_slot {
	uint32_t owner; /* strtab id defined at this index */
	uint32_t stamp; /* the last record that used it */
	uint8_t ref;	/* CLOCK reference bit */
};

struct snap_fxt {
	struct snap_timeline base;    /* ops: &snap_fxt_ops */
	struct snap_sink *sink;	      /* borrowed */
	const struct snap_strtab *st; /* borrowed */
	int err;		      /* sticky */
	/* strings: strtab id -> FXT index (0 = none), and back */
	uint16_t *str_idx;
	size_t str_idx_cap;
	struct snap_fxt_slot *str_slot; /* [FXT index], grown as indexes are handed out */
	size_t str_cap;
	uint32_t str_slots, str_hand, str_used;
	/* threads: (pid << 32 | tid) -> FXT index; the index table says which key owns it */
	struct snap_u64map thr_map;
	uint64_t thr_owner[SNAP_FXT_THR_SLOTS + 1];
	uint8_t thr_ref[SNAP_FXT_THR_SLOTS + 1];
	uint32_t thr_slots, thr_hand, thr_used;
	uint64_t thr_last_key; /* one-entry cache of the last track */
	uint32_t thr_last_idx;
	/* counter name -> counter id (1, 2, ...); process pid -> name id written */
	struct snap_u64map counters;
	struct snap_u64map procs;
	uint32_t stamp; /* sequence number of the record being built */
	struct snap_fxt_stats stats;
};

extern const struct snap_timeline_ops snap_fxt_ops;

/* Initializes fx over sink and st (both borrowed; they must outlive fx; st
 * may grow while fx writes) and writes the header records. Returns 0 or
 * -ENOMEM / the sink's sticky error. fx->base is then the timeline. On
 * error fx must still be released with snap_fxt_fini. */
int snap_fxt_init(struct snap_fxt *fx, struct snap_sink *sink, const struct snap_strtab *st);

/* Test hook: uses only nstr string indexes (>= 64) and nthr thread indexes
 * (>= 1), to exercise index re-use with small traces. Call right after
 * init. Returns 0 or -EINVAL. */
int snap_fxt_set_limits(struct snap_fxt *fx, uint32_t nstr, uint32_t nthr);

/* Releases fx's memory (not the sink). Leaves fx zeroed; safe twice. */
void snap_fxt_fini(struct snap_fxt *fx);

/* Returns the struct snap_fxt of a timeline made by snap_fxt_init. */
static inline struct snap_fxt *snap_fxt_of(struct snap_timeline *tl)
{
	return (struct snap_fxt *)((char *)tl - offsetof(struct snap_fxt, base));
}

#endif

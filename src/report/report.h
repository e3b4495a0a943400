/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency figures of a timeline (`snaptrace report`, docs/report.md).
 *
 * Duration events (begin, end, complete) are fed in any order, as a trace
 * file or the stack builder gives them; names are ids of a borrowed strtab. The
 * events of each thread are kept compactly (16 bytes each) and, at finish,
 * sorted stably by time (only if they came out of order) and matched on a
 * stack the way Perfetto builds slices. Every slice is a call: recursion
 * counts each call, but a function's total is the time it was on the stack at
 * least once (a nested call of the same function adds nothing), as perf's
 * children/self do; self time is the time not covered by child slices. An
 * inlined frame (SNAP_REPORT_F_INLINED: perf's "(inlined)" call-chain frames)
 * is its own row, named "NAME [inlined]", whose self time stays with the
 * nearest real function below it, as perf report keeps it.
 *
 * Slices cut by the recording are excluded from the figures and counted
 * (docs/report.md): begins with the inferred_start_time flag (their start is
 * unknown), ends with the inferred_end_time flag (snaptrace closed the slice
 * itself at the end of the data), begins never ended, slices ending at a
 * [decode error: ...] on their thread, and slices crossing the -window edges.
 * A trace with no inferred_end_time flag at all (written before snaptrace
 * flagged its ends, or by magic-trace) keeps the older rule instead of the
 * two flags' end half: begins at the first timestamp of their thread and
 * slices ending at its last timestamp are cut too. Zero-length complete
 * events (instants, decode errors, extra-event samples) are not calls.
 *
 * Per function the durations are kept exactly up to opts.exact_limit
 * (default SNAP_REPORT_EXACT_LIMIT); past it the function's durations go
 * to a log-bucket sketch (64 buckets per power of two, value = bucket
 * middle: <= 0.8 % relative error) and fn->sketch says so. Count, total,
 * self and max stay exact. Percentiles are by nearest rank.
 */
#ifndef SNAP_REPORT_REPORT_H
#define SNAP_REPORT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "util/strtab.h"
#include "util/u64map.h"

#define SNAP_REPORT_EXACT_LIMIT (4u << 20) /* exact durations kept per function */
#define SNAP_REPORT_SKETCH_N	(128 + 57 * 64)
#define SNAP_REPORT_SLOWEST	10 /* slowest calls kept for -function */
#define SNAP_REPORT_HIST	65 /* power-of-two histogram buckets for -function */

/* The names report reads from a trace are in model/names.h. */
#define SNAP_REPORT_INLINED_SUFFIX " [inlined]"
#define SNAP_REPORT_NAME_W	   28 /* the table's function column */

enum snap_report_kind {
	SNAP_REPORT_BEGIN = 1,
	SNAP_REPORT_END,
	SNAP_REPORT_COMPLETE,
};
#define SNAP_REPORT_KIND_MASK  0x0fu
#define SNAP_REPORT_F_INFERRED 0x10u /* begin: start time inferred (unknown) */
#define SNAP_REPORT_F_INLINED  0x40u /* begin or complete: an inlined frame */
#define SNAP_REPORT_F_CUT_END  0x20u /* end: closed by snaptrace at the end of the data */
#define SNAP_REPORT_F_SAMPLED  0x80u /* end: carries sampled_ns (snap_report_event's end) */

enum snap_report_sort {
	SNAP_REPORT_SORT_SELF = 0,
	SNAP_REPORT_SORT_TOTAL,
	SNAP_REPORT_SORT_CALLS,
	SNAP_REPORT_SORT_MAX,
	SNAP_REPORT_SORT_P99,
};

struct snap_report_opts {
	int has_window;
	uint64_t win_start, win_end; /* ns from the trace start, inclusive range */
	int has_thread;
	int64_t tid;	      /* only this thread */
	uint32_t function;    /* strtab id of -function's name, 0 = none */
	int folded;	      /* keep per-stack self times for snap_report_folded */
	uint64_t exact_limit; /* 0 = SNAP_REPORT_EXACT_LIMIT */
};

struct snap_report_ev {
	uint64_t ts;
	uint32_t name; /* a complete event's is its index in the thread's cx[] */
	uint32_t kind; /* enum snap_report_kind | SNAP_REPORT_F_* */
};

/* What a complete event has more (kept aside: begins and ends are most events). */
struct snap_report_cx {
	uint64_t end;
	uint32_t name;
};

struct snap_report_thread {
	int32_t pid, tid;
	uint32_t name;		   /* strtab id, 0 = unnamed */
	struct snap_report_ev *ev; /* 16 bytes per duration event until finish */
	size_t nev, cap;
	struct snap_report_cx *cx;
	size_t ncx, capcx;
	int unsorted;
	uint64_t busy_ns, slices, open; /* figures, after finish */
};

struct snap_report_fn {
	uint64_t calls, total, self, max, open;
	uint64_t sum;  /* of the calls' durations (total counts nested calls once) */
	uint64_t *dur; /* exact durations while not sketched */
	size_t ndur, capdur;
	uint64_t *sketch;	      /* SNAP_REPORT_SKETCH_N bucket counts once sketched */
	uint64_t p50, p90, p99, mean; /* after finish */
	uint32_t top;		      /* walk: index + 1 of its innermost frame on the stack */
	uint32_t label;		      /* after finish: strtab id of its table label */
	uint8_t seen;		      /* named by a slice of a reported thread */
	uint8_t inlined;	      /* the name is "NAME [inlined]" */
};

struct snap_report_call {
	uint64_t dur, start; /* start: ns from the trace start */
	int32_t pid, tid;
};

struct snap_report {
	struct snap_strtab *st; /* borrowed */
	struct snap_report_opts o;
	int err;		 /* sticky */
	int function_missing;	 /* after finish: -function names no function of the trace */
	int thread_missing;	 /* after finish: -thread names no thread of the trace */
	struct snap_u64map inl;	 /* name id -> id of "NAME [inlined]" */
	struct snap_u64map tids; /* -thread: every other tid seen (for close matches) */
	int32_t *other_tid;
	size_t nother, capother;
	struct snap_u64map tmap; /* (pid << 32 | tid) -> index + 1 */
	struct snap_report_thread *th;
	size_t nth, capth;
	uint64_t last_key;
	size_t last_idx;	   /* index + 1 of last_key, 0 = none */
	struct snap_report_fn *fn; /* indexed by name id */
	size_t capfn;
	uint8_t *kind_of; /* per name id: 0 unknown, 1 a decode error, 2 off-CPU, 3 other */
	size_t capkind;
	uint64_t t0, t1; /* trace time range (all threads), valid when have_time */
	int have_time;
	uint64_t sample_period; /* ns, 0 = not a sampled trace */
	int sampled;
	int end_marks; /* an end flagged SNAP_REPORT_F_CUT_END was seen: the flags decide cuts */
	int has_sampled_ns; /* an end carried sampled_ns: in a sampled trace, self is its sum */
	/* figures, after finish */
	uint64_t win0, win1; /* absolute window */
	uint64_t span_ns, slices, open, unmatched_ends, overlaps;
	size_t nsketched;		 /* functions whose durations went to the sketch */
	uint64_t hist[SNAP_REPORT_HIST]; /* -function: [2^(i-1), 2^i) ns; hist[0] = 0 ns */
	struct snap_report_call slow[SNAP_REPORT_SLOWEST];
	size_t nslow;
	/* folded stacks: node = (parent node, name) */
	struct snap_u64map nodes;
	uint32_t *node_parent, *node_name;
	uint64_t *node_self;
	size_t nnodes, capnodes;
	int finished;
};

/* A function's label in the text table, before shortening: perf's
 * "[unknown @ 0xADDR (PATH)]" becomes "0xADDR (BASE)", so that the address
 * that tells unknown code apart fits the column; other names are s itself. */
const char *snap_report_label(const char *s, char *out, size_t cap);

/* Initializes r over st (borrowed, must outlive r). Returns 0 or -ENOMEM.
 * snap_report_fini frees everything r holds (also after a failed init). */
int snap_report_init(struct snap_report *r, struct snap_strtab *st,
		     const struct snap_report_opts *o);
void snap_report_fini(struct snap_report *r);

/* Names a thread (name: strtab id; 0 leaves it). Returns 0 or -ENOMEM. */
int snap_report_thread_name(struct snap_report *r, int32_t pid, int32_t tid, uint32_t name);
/* One duration event: kind SNAP_REPORT_BEGIN/END/COMPLETE (| flags); end
 * only for complete events, and for an end flagged SNAP_REPORT_F_SAMPLED its
 * sampled_ns (0 drops the flag). Returns 0 or -ENOMEM (also kept as r->err). */
int snap_report_event(struct snap_report *r, int32_t pid, int32_t tid, uint32_t kind, uint64_t ts,
		      uint64_t end, uint32_t name);
/* Marks the trace as sampled with a sample period of period_ns (the
 * smallest positive one given wins). */
void snap_report_sampled(struct snap_report *r, uint64_t period_ns);

/* Builds the slices and the figures. Returns 0, -ENOMEM or the sticky error.
 * Every function gets its table label (fn->label): snap_report_label,
 * shortened to SNAP_REPORT_NAME_W columns, and unique: where two names
 * shorten alike, the cut moves to keep the part that tells them apart, else
 * the label ends in "~N" (docs/report.md). -function (opts.function) may be
 * the trace's name or a label; one that is neither sets function_missing,
 * and a -thread with no event sets thread_missing. */
int snap_report_finish(struct snap_report *r);

/* After finish: up to max (at most 8) names of functions close to want (the
 * same but for case, a substring either way, or a few edits away), closest
 * first, into out (strtab ids). Returns the count. */
int snap_report_close_functions(const struct snap_report *r, const char *want, uint32_t *out,
				size_t max);
/* After finish: up to max (at most 8) tids close to want (as decimal text),
 * closest first; none close: the first tids seen. Returns the count. */
size_t snap_report_close_threads(const struct snap_report *r, int64_t want, int32_t *out,
				 size_t max);

/* After finish: the functions with at least one counted call, sorted by
 * key (descending; ties by name). *out is owned by the caller (snap_free).
 * Returns the count or -ENOMEM. */
int64_t snap_report_order(const struct snap_report *r, enum snap_report_sort key, uint32_t **out);
/* Parses "self", "total", ... Returns 0 or -1. */
int snap_report_sort_parse(const char *s, enum snap_report_sort *key);

/* Nearest-rank percentile (1..100) of a sorted or unsorted array (it is
 * partially reordered). n > 0. */
uint64_t snap_report_rank(uint64_t *v, size_t n, unsigned pct);
/* The sketch bucket of a duration, and (bucket_value) the value a bucket
 * stands for. */
size_t snap_report_bucket(uint64_t v);
uint64_t snap_report_bucket_value(size_t b);

#endif

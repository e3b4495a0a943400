/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One thread's shadow call stack: Intel PT branch events -> begin/end slices
 * (docs/behaviour.md §4.1-§4.11). Times given to this module are trace
 * times: ns of perf time minus the trace base (stack/builder.h "Times");
 * snap_cstack_time() applies the per-thread rules (+1 ns after a decode
 * error, docs/behaviour.md §4.2; never going backwards) and must be used for
 * every event.
 *
 * Slices are written to ctx->tl on the track (pid, tid) given at init; the
 * caller announces the track. Calls that share one perf timestamp are spread
 * evenly up to the next distinct timestamp (docs/behaviour.md §4.3). Begins whose start time is
 * only known later (inferred caller frames at the stack's create_time, the
 * [unknown] spans of returns past the bottom) are deferred and written when
 * the thread segment ends (docs/behaviour.md §4.4), so the output is not globally sorted by
 * time (as in magic-trace); viewers sort it stably by timestamp.
 *
 * Deliberately different (docs/behaviour.md §8.3): instead of magic-trace's
 * front/back start_events queue, which breaks nesting at equal timestamps
 * across nested or re-created stacks, every op
 * gets a logical sequence number; each stack records the sequence number of
 * its creation (its "cut"). Ops at a time <= the latest cut time are deferred
 * too, and at the end the deferred ops are sorted by (time, sequence), where
 * inferred frames take their stack's cut sequence (later-discovered, i.e.
 * outer, frames first). So after a stable sort by timestamp every track's
 * begins and ends nest, whatever the order in which frames were discovered.
 * A stack re-created for a user address (create_time = last decode error
 * time) takes that time's sequence, so its inferred frames enclose what the
 * track showed since then. Other deliberate differences from magic-trace:
 *  - pending ops are flushed before a new stack is started, so spreading
 *    never carries an op of the old stack past the switch;
 *  - a nested (syscall/interrupt) stack starts when pushed, whatever the
 *    target address;
 *  - end_of_thread closes at max(t, the latest op time) and times never go
 *    backwards (counted);
 *  - the kind/state combinations magic-trace treats as fatal "BUG" are
 *    counted in stats.unexpected and handled as the nearest sane case.
 *
 * Stack depth is capped (ctx->max_depth frames per thread, counting the
 * suspended stacks of syscalls/interrupts): deeper calls are counted and
 * dropped, and the returns that match them are swallowed. Returns with an
 * empty stack ([unknown] spans, which all start at the segment's start and so
 * nest) count against the same cap: beyond it they are dropped and counted
 * in stats.inferred_capped.
 * Nothing here allocates per event in the steady state; fixed names are
 * interned once in the ctx.
 */
#ifndef SNAP_STACK_CSTACK_H
#define SNAP_STACK_CSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "model/codeinfo.h"
#include "model/event.h"
#include "model/timeline.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define SNAP_CSTACK_DEFAULT_MAX_DEPTH ((uint32_t)SNAP_MAX_NESTING)
/* Nested syscall/interrupt stacks per thread beyond which the current stack is
 * reused (counted as depth_capped). */
#define SNAP_CSTACK_MAX_NEST	      64u
/* Memory bounds for pathological input: ops waiting for the next distinct
 * timestamp (once this many wait, the batch is written with zero shares), and
 * deferred ops (once this many are deferred, the thread segment is ended,
 * like a decode error without its slice; counted in stats.trimmed). */
#define SNAP_CSTACK_MAX_PENDING	      65536u
#define SNAP_CSTACK_MAX_DEFER	      (1u << 20)
/* OCaml push/poptraps are looked for between two branches at most this far
 * apart (bytes of straight-line code). */
#define SNAP_CSTACK_EH_MAX_RANGE      (1u << 20)

/* Entries of a thread's cache of its described functions (struct snap_cstack). */
#define SNAP_CSTACK_DCACHE 64u

struct snap_srcpos {
	uint32_t file;
	int32_t line, col;
};

/* Interned fixed names (strtab ids), filled by snap_cstack_ctx_init. */
struct snap_cstack_names {
	uint32_t untraced, syscall, returned, unknown; /* "[untraced]" ... "[unknown]" */
	uint32_t address, symbol, inferred, true_;     /* arg keys, "true" */
	uint32_t inferred_end;			       /* "inferred_end_time" */
	uint32_t sampled_ns;			       /* end arg: samples' periods (ns) */
	uint32_t line, col, file;		       /* source position arg keys */
	/* Go's goroutine switch (see go_switch in cstack.c) */
	uint32_t gogo[3];    /* "gogo", "runtime.gogo", "runtime.gogo.abi0" */
	uint32_t go_mark[3]; /* "runtime.mcall", "runtime.morestack.abi0", "runtime.morestack" */

	uint32_t inlined; /* arg key of an inlined frame's begin */
};

/* Anomaly counters (never errors). */
struct snap_cstack_stats {
	uint64_t decode_errors;
	uint64_t unmatched_returns; /* returns with an empty stack ([unknown] spans) */
	uint64_t depth_capped;	    /* frames dropped by the depth cap */
	uint64_t inferred_capped;   /* [unknown] spans / inferred callers beyond the depth cap */
	uint64_t time_backwards;    /* event times clamped to the thread's last time */
	uint64_t unexpected;	    /* kind/state combinations magic-trace calls "BUG" */
	uint64_t trap_mismatch;	    /* OCaml poptraps at a try-block depth other than 1 */
	uint64_t trimmed;	    /* segments ended early to bound memory */
};

/* State shared by every thread of one decode. */
struct snap_cstack_ctx {
	struct snap_timeline *tl; /* borrowed */
	struct snap_strtab *st;	  /* borrowed */
	enum snap_scope scope;
	uint32_t max_depth;
	uint32_t max_defer; /* SNAP_CSTACK_MAX_DEFER (tests may lower it) */
	struct snap_cstack_names n;
	/* OCaml exceptions: the executable's handler addresses (borrowed), or
	 * NULL to recognise raises by the runtime's function names instead */
	const struct snap_ocaml_eh *eh;
	uint32_t caml_unwind[2];       /* "caml_next_frame_descriptor", "caml_stash_backtrace" */
	uint32_t caml_raise_exn;       /* "caml_raise_exn" */
	uint32_t caml_raise_exception; /* "caml_raise_exception" */
	uint32_t caml_lo, caml_hi;     /* the least and greatest of those four ids */
	int debug_names;	       /* inferred frames: "NAME [inferred start time]" */
	/* 1: a function's constant args once per thread (docs/behaviour.md §6.3):
	 * its first begin carries address, [line, col,] symbol, [file]; later ones
	 * only the args that differ (address when not the first one's, symbol
	 * when the slice is named otherwise: debug_names). 0 (the init default):
	 * every begin carries them all, as magic-trace writes. */
	int args_once;
	/* source positions (borrowed; NULL = none): looked up once per symbol
	 * by snap_cstack_note_loc, found by symbol when a frame is written */
	const struct snap_srcloc *srcloc;
	struct snap_u64map srcmap; /* sym -> index + 1 in srcpos, or 0 (no position) */
	struct snap_srcpos *srcpos;
	size_t nsrcpos, capsrcpos;
	uint64_t *noted;	       /* bit sym: sym is in srcmap (the test per branch) */
	size_t nnoted, capnoted;       /* words of noted, all initialised; capacity */
	struct snap_u64map debugnames; /* sym -> "NAME [inferred start time]" id */
	struct snap_u64map errnames;   /* message id -> "[decode error: MSG]" id */
	struct snap_cstack_stats stats;
};

struct snap_frame {
	uint64_t ip;
	uint32_t sym;	   /* never 0: unknown symbols are n.unknown */
	uint32_t anchored; /* began at its segment's create_time (counts in unk once closed) */
	uint8_t dup;	   /* OCaml try-block copy of the frame below: never written */
	uint8_t inf;	   /* its start was inferred (for MAGIC_TRACE_DEBUG's end names) */
	uint64_t sampled;  /* ns of the samples whose leaf it was: its end's sampled_ns */
};

/* One call stack; create_time starts inferred frames and [unknown] spans. */
struct snap_cstack_stk {
	struct snap_frame *f;
	size_t n, cap;
	uint64_t create_time;
	uint32_t overflow; /* calls dropped by the depth cap still "open" on top */
	uint32_t unk;	   /* closed spans that began at create_time ([unknown] spans,
			    * inferred callers): they enclose all that came before, so
			    * they count against the depth cap with the open frames */
	uint64_t cut_seq;  /* sequence number of the stack's creation */
};

/* A pending or deferred operation (docs/behaviour.md §4.3, §4.4). The fields
 * are ordered by size (56 bytes, no holes): every call and return is copied
 * into the pending queue once. */
struct snap_cstack_op {
	uint64_t ip;
	uint64_t t;	  /* deferred: time of the op; RETUNK: the reset (start) time */
	uint64_t t2;	  /* RETUNK: end time */
	uint64_t sampled; /* RET: the frame's sampled_ns (0: no arg) */
	uint64_t k1;	  /* deferred order at equal time: sequence number ... */
	uint32_t k2;	  /* ... then this (inferred frames: newest first) */
	uint32_t sym;
	uint8_t type; /* enum in cstack.c */
	uint8_t inferred;
	uint8_t inlined;   /* CALL: a frame perf found inlined (arg inlined = 1) */
	uint8_t cut_start; /* CALL: written now, but marked inferred_start_time (start_cut) */
};

struct snap_cstack {
	struct snap_cstack_ctx *ctx;
	int32_t pid, tid;
	struct snap_cstack_stk *stk;	/* stk[nstk - 1] is current, the rest inactive */
	struct snap_cstack_stk *top;	/* &stk[nstk - 1] (kept with nstk and stk) */
	size_t nstk, capstk, nstk_init; /* stk[0..nstk_init) are initialised */
	size_t total;			/* frames on all stacks (for the depth cap) */
	struct snap_cstack_op *pend;
	size_t npend, cappend;
	uint32_t npend_calls;
	uint8_t inlined_push; /* snap_cstack_push_inlined is pushing */
	uint64_t pending_time;
	struct snap_cstack_op *defer; /* deferred ops (start_events), unsorted */
	size_t ndefer, capdefer;
	uint64_t seq;	    /* logical op counter */
	uint32_t ninferred; /* inferred-frame counter (for k2) */
	uint64_t cut_time;  /* create_time of the newest stack */
	uint64_t ldet_seq;  /* cut sequence of last_decode_error_time */
	uint64_t last_decode_error_time, last_event_time;
	uint64_t last_time;  /* the latest time snap_cstack_time returned */
	int draining;	     /* end_of_thread: write everything directly */
	int start_cut;	     /* push_now marks its begins inferred_start_time (a sampled
			      * thread's first frames: running before the data began) */
	int ends_known;	     /* end_of_thread closes at a known end (thread exit): no
			      * inferred_end_time on those ends */
	uint64_t eh_last_ip; /* OCaml: the last branch target (0 = none yet) */
	uint32_t eh_unwind;  /* OCaml without handler notes: frames being unwound */
	/* ctx->args_once: sym -> the address its described (first) begin carried */
	struct snap_u64map described;
	/* the last entries of described found or put, by sym % SNAP_CSTACK_DCACHE
	 * (key: sym + 1, 0 = none): the test of every plain begin (cstack.c, write_op) */
	struct {
		uint64_t key, ip;
	} dcache[SNAP_CSTACK_DCACHE];
};

/* Initialises ctx: borrows tl and st (both must outlive ctx), interns the
 * fixed names into st. max_depth 0 = SNAP_CSTACK_DEFAULT_MAX_DEPTH.
 * Returns 0 or -ENOMEM (ctx is then safe to fini). */
int snap_cstack_ctx_init(struct snap_cstack_ctx *ctx, struct snap_timeline *tl,
			 struct snap_strtab *st, enum snap_scope scope, uint32_t max_depth);
void snap_cstack_ctx_fini(struct snap_cstack_ctx *ctx);

/* snap_cstack_note_loc of a symbol not looked up yet. */
int snap_cstack_lookup_loc(struct snap_cstack_ctx *ctx, const struct snap_loc *loc);

/* The test of snap_cstack_note_loc: returns 1 if loc's function needs no
 * look-up (no ctx->srcloc, no symbol, or looked up before), 0 if
 * snap_cstack_lookup_loc must follow. */
static inline int snap_cstack_loc_noted(struct snap_cstack_ctx *ctx, const struct snap_loc *loc)
{
	uint32_t sym = loc->sym;

	/* the bit first: set for every symbol looked up (so almost always) */
	if (sym / 64 < ctx->nnoted && (ctx->noted[sym / 64] >> sym % 64 & 1))
		return 1;
	return !ctx->srcloc || !sym;
}

/* Looks up the source position of loc's function once per symbol (with
 * ctx->srcloc set). Returns 0 or a negative error. Inline: the builder notes
 * every branch's target, whose symbol was almost always looked up before. */
static inline int snap_cstack_note_loc(struct snap_cstack_ctx *ctx, const struct snap_loc *loc)
{
	return snap_cstack_loc_noted(ctx, loc) ? 0 : snap_cstack_lookup_loc(ctx, loc);
}

/* Initialises one thread's state on track (pid, tid), created at trace time t
 * (0 if the creating event had no time). Borrows ctx. Returns 0 or -ENOMEM. */
int snap_cstack_init(struct snap_cstack *cs, struct snap_cstack_ctx *ctx, int32_t pid, int32_t tid,
		     uint64_t t);
/* Frees everything without writing anything; cs is zeroed. */
void snap_cstack_fini(struct snap_cstack *cs);

/* Returns the time to use for an event of this thread: trace_t if has_time,
 * else the thread's last event time; +1 ns if equal to a non-zero last decode
 * error time (docs/behaviour.md §4.2); never less than the time of earlier ops (counted in
 * stats.time_backwards). Updates the last event time. (Inline: once per event.) */
static inline uint64_t snap_cstack_time(struct snap_cstack *cs, int has_time, uint64_t trace_t)
{
	uint64_t t;

	if (has_time) {
		if (trace_t < cs->last_event_time) {
			cs->ctx->stats.time_backwards++;
			trace_t = cs->last_event_time;
		}
		cs->last_event_time = trace_t;
	}
	t = cs->last_event_time;
	/* docs/behaviour.md §4.2: nothing may share the timestamp of a decode error (or of the
	 * thread's creation), where inferred frames start. */
	if (t == cs->last_decode_error_time && t != 0)
		t++;
	if (t < cs->pending_time)
		t = cs->pending_time;
	cs->last_time = t;
	return t;
}

/* Applies one SNAP_EV_BRANCH event at time t (from snap_cstack_time) per the
 * dispatch table of docs/behaviour.md §4.6. Returns 0 or a negative error (-ENOMEM, timeline). */
int snap_cstack_branch(struct snap_cstack *cs, const struct snap_event *ev, uint64_t t);

/* A decode error at t (docs/behaviour.md §4.8): zero-length "[decode error: MSG]" slice, every
 * open frame closed, a fresh stack. msg is a strtab id (0 = no message).
 * Returns 0 or a negative error. */
int snap_cstack_error(struct snap_cstack *cs, uint32_t msg, uint64_t t);

/* end_of_thread(t) (docs/behaviour.md §4.11): writes deferred begins, closes every open frame at
 * t (or at the thread's latest op time if later), starts a fresh stack at t.
 * Those ends carry inferred_end_time: "true" (snaptrace cut the slice, not a
 * return; docs/report.md), unless cs->ends_known is set (the thread exited
 * there). Returns 0 or a negative error. */
int snap_cstack_end_thread(struct snap_cstack *cs, uint64_t t);

/* end_of_thread(last event time), then moves the thread's times to t
 * (snapshot boundary, docs/behaviour.md §4.11). Returns 0 or a negative error. */
int snap_cstack_restart(struct snap_cstack *cs, uint64_t t);

/* If ctx->max_defer (SNAP_CSTACK_MAX_DEFER) ops or more are deferred (ndefer >=
 * max_defer), ends
 * the thread segment at t (counted in stats.trimmed) so memory stays bounded.
 * snap_cstack_branch does it itself. Returns 0 or a negative error. */
int snap_cstack_trim(struct snap_cstack *cs, uint64_t t);

/* Primitive used by sampdiff: writes all pending ops up to t. Returns 0 or a
 * negative error. */
int snap_cstack_flush_to(struct snap_cstack *cs, uint64_t t);
/* -filter (filter.h), when the region opens: drops the deferred begins
 * (nothing of them was written yet); snap_cstack_reopen follows. */
void snap_cstack_discard_deferred(struct snap_cstack *cs);
/* -filter, when the region opens at t: begins every open frame again at t
 * (all stacks, outermost first, marked inferred; deferred, so that callers
 * inferred later still nest around them) and restarts the stacks at t.
 * Functions are described again (ctx->args_once): what was written outside
 * the region was dropped.
 * Returns 0 or a negative error. */
int snap_cstack_reopen(struct snap_cstack *cs, uint64_t t);
/* Primitive used by sampdiff: opens a frame for sym at ip at exactly t (no
 * spreading). *dropped (may be NULL) is set to 1 if the depth cap dropped the
 * frame (counted in stats.depth_capped; nothing written), else to 0.
 * Returns 0 or a negative error. */
int snap_cstack_push_now(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t,
			 int *dropped);
/* push_now of a frame perf found inlined: its begin carries the arg inlined = 1
 * (docs/report.md). *dropped and the return value as for push_now. */
int snap_cstack_push_inlined(struct snap_cstack *cs, uint64_t ip, uint32_t sym, uint64_t t,
			     int *dropped);
/* Credits ns of sampled CPU time (a clock sample's period) to the top frame:
 * its end carries the total as arg sampled_ns (docs/sampling.md "Self time
 * of a sampled trace"). No-op on an empty stack. */
void snap_cstack_credit(struct snap_cstack *cs, uint64_t ns);
/* Primitive used by sampdiff: closes the top frame at t (no-op if the stack is
 * empty). Returns 0 or a negative error. */
int snap_cstack_pop_now(struct snap_cstack *cs, uint64_t t);

/* Returns how many frames the current stack has open. */
static inline size_t snap_cstack_depth(const struct snap_cstack *cs)
{
	return cs->stk[cs->nstk - 1].n;
}

/* Returns 1 if the current stack's top (innermost) frame is sym (strtab id)
 * at ip, 0 if not or the stack is empty. */
static inline int snap_cstack_top_is(const struct snap_cstack *cs, uint32_t sym, uint64_t ip)
{
	const struct snap_cstack_stk *s = &cs->stk[cs->nstk - 1];

	return s->n && s->f[s->n - 1].sym == sym && s->f[s->n - 1].ip == ip;
}

/* The current stack, outermost first (borrowed until the next call). */
static inline const struct snap_frame *snap_cstack_frames(const struct snap_cstack *cs, size_t *n)
{
	const struct snap_cstack_stk *s = &cs->stk[cs->nstk - 1];

	*n = s->n;
	return s->f;
}

#endif

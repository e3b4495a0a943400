/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stack builder: what the pipeline feeds events to. It owns the thread table
 * (one cstack per (pid, tid), in order of first appearance), the trace base
 * time, track naming, trace-scope enforcement, TSX buffering, and routes each
 * event: BRANCH/ERROR -> cstack, SAMPLE -> sampdiff, SWITCH -> [off-CPU]
 * slices (docs/sampling.md), POWER -> a "CPU" counter,
 * EXTRA -> a zero-length slice on a per-(thread, event) track. Trigger hits
 * are written on a "Snapshot symbol hits" track by finish.
 *
 * Files: builder.c (the thread table, base time, scope enforcement, TSX
 * buffering, -filter's regions, routing), tracks.c (track names), scope.h
 * (the scope rules), chains.c (junk cuts), offcpu.c (samples, switches,
 * off-CPU slices), marks.c (hit tracks, sampling marker); bthread.h is what
 * they share. The user-facing sentences about these counters are worded in
 * cli/decodemsg.c.
 *
 * Times: every timeline time is a trace time: perf time minus the base time. The base is
 * opts.base_time if opts.has_base_time, else min(perf time of the first event
 * that has a time, every hit time). Earlier events get trace time 0 (counted as
 * time_backwards).
 *
 * Tracks: before the first op on (pid, tid) the builder calls
 * tl->ops->thread(pid, tid, "CMD [pid=P]", "TCMD [pid=P] [tid=T]"). CMD is
 * the opts.names entry of the pid, else the comm of the first event of the
 * pid that had one (so all threads of a process agree), else left out
 * ("[pid=P]"). TCMD is the thread's comm; the opts.names entry (else CMD)
 * while that comm is its process's first comm or unknown. When an event
 * carries another comm (pthread_setname_np, exec), the track is announced
 * again with the new name (counted in stats.renames). Ids 0 and -1 print as
 * "?". Extra-event tracks use tid 0x40000000 | n and the name "EVENT (tid T)";
 * the hit track of pid P uses tid 0x40000000 | n and the name
 * "Snapshot symbol hits".
 *
 * Trace scope (opts.scope, docs/behaviour.md §4.7). An event VIOLATES the scope if
 *  - SNAP_SCOPE_USER: any address it carries (branch src/dst, sample frame,
 *    extra/power location) is a kernel address (snap_loc_is_kernel), or it is
 *    a branch that only exists when the kernel is traced: syscall, sysret,
 *    hw int or iret without "tr strt"/"tr end", or "tr end  iret/sysret";
 *  - SNAP_SCOPE_KERNEL: it is a branch without "tr strt"/"tr end" whose src or
 *    dst is a non-zero user address, or a sample/extra/power event with a
 *    non-zero user address;
 *  - SNAP_SCOPE_BOTH: never.
 * Decode errors and context switches never violate (the out-of-scope frames
 * of a switch chain are dropped quietly). A violating event is counted, the first one is
 * described in stats.first_violation, and it is dropped (never applied), so a
 * user-scope trace never shows a kernel frame. Samples are the exception:
 * the out-of-scope frames are removed and the rest of the chain is applied.
 * With opts.strict_scope, feed() returns -SNAP_ESCOPE for each violation
 * (and applies nothing of that event).
 *
 * Sample and switch chains are first cut at junk (docs/sampling.md): from the
 * leaf outwards, after the first user frame, the first frame with neither
 * symbol nor DSO, or with a kernel address, ends the chain (counted in
 * chains_cut / frames_cut; never a violation).
 */
#ifndef SNAP_STACK_BUILDER_H
#define SNAP_STACK_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "model/hit.h"
#include "model/names.h"
#include "model/timeline.h"
#include "model/tlcomb.h"
#include "stack/cstack.h"
#include "stack/filter.h"
#include "stack/sampdiff.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define SNAP_BUILDER_SYNTH_TID	  0x40000000
/* The slices of the sampling model (docs/sampling.md "Off-CPU time"). */
#define SNAP_BUILDER_PREEMPTED	  SNAP_NAME_OFFCPU_STEM ": preempted]"
#define SNAP_BUILDER_OFF_INFERRED SNAP_NAME_OFFCPU_STEM ": inferred]"
#define SNAP_BUILDER_UNSAMPLED	  "[on-CPU: unsampled]"
/* Without switch records, a gap of more than this many sample periods
 * between two clock samples of a thread is inferred as off-CPU time. */
#define SNAP_BUILDER_GAP_PERIODS  4
#define SNAP_BUILDER_MAX_TX	  65536 /* buffered (x) events before we stop waiting */

/* births: a thread born at the data's start (opts.names' born) */
#define SNAP_BLD_BORN_AT_START UINT64_MAX

struct snap_builder_opts {
	enum snap_scope scope;
	int strict_scope;
	uint32_t max_depth; /* 0 = SNAP_CSTACK_DEFAULT_MAX_DEPTH */
	int has_base_time;  /* use base_time instead of the first event / hits */
	uint64_t base_time;
	const struct snap_hit *hits; /* copied by init (the symbols: borrowed during init only) */
	size_t nhits;
	const struct snap_procname
		*names; /* copied (interned) by init: borrowed during init only */
	size_t nnames;
	int no_tx; /* MAGIC_TRACE_SKIP_TX_HANDLING: apply (x) events at once */
	/* OCaml exception handlers of the traced executable (borrowed: must
	 * outlive the builder), NULL = recognise raises by name (cstack.c) */
	const struct snap_ocaml_eh *ocaml_eh;
	/* -filter: pass 1 done (snap_filter_pair called); borrowed, must outlive
	 * the builder. Outside START..STOP nothing is written (filter.h). */
	struct snap_filter *filter;
	/* MAGIC_TRACE_DEBUG: frames with an inferred start are named
	 * "NAME [inferred start time]" */
	int debug_names;
	/* -per-call-args: every begin carries its function's address, symbol
	 * and source position (magic-trace's encoding); 0 = once per function
	 * and thread (cstack.h args_once, docs/behaviour.md §6.3) */
	int per_call_args;
	/* file/line/col args for slices (borrowed; NULL = none) */
	const struct snap_srcloc *srcloc;
	/* who found the decode errors (SNAP_EV_ERROR), for messages: NULL = "perf" */
	const char *error_source;
};

struct snap_builder_stats {
	uint64_t events;  /* fed */
	uint64_t threads; /* distinct (pid, tid) */
	uint64_t violations;
	uint64_t decode_errors;
	uint64_t unmatched_returns;
	uint64_t depth_capped;
	uint64_t inferred_capped; /* returns without a call beyond the depth cap */
	uint64_t time_backwards;
	uint64_t unexpected;	/* branch kind/state combinations that make no sense */
	uint64_t trap_mismatch; /* OCaml try-block depth mismatches (PT lost data) */
	uint64_t trimmed;	/* thread segments ended early to bound memory */
	uint64_t tx_dropped;	/* (x) events discarded by an abort or decode error */
	uint64_t samples;
	uint64_t sample_frames_dropped; /* out-of-scope frames removed from chains */
	uint64_t zero_frames;		/* chain entries with address 0 */
	uint64_t switches_out;		/* context switches: left the CPU */
	uint64_t switches_in;		/* ... came back */
	uint64_t preempted;		/* switch-outs while runnable (the record's preempt flag) */
	uint64_t switch_chains;		/* sched_switch samples: where the thread blocked */
	uint64_t switches_ignored;	/* of threads not sampled (yet), or in a PT trace */
	uint64_t offcpu_slices;		/* [off-CPU] slices opened */
	uint64_t preempted_slices;	/* [off-CPU: preempted] slices opened */
	uint64_t unsampled;		/* [on-CPU: unsampled] slices: bursts no sample saw */
	uint64_t unsampled_ns;		/* ... their time */
	uint64_t gaps_inferred;		/* [off-CPU: inferred] slices (no switch records) */
	uint64_t gap_ns;		/* ... their time */
	uint64_t births;		/* threads born in the recording (fork/exec records) */
	uint64_t exits;			/* threads that exited in it (exit records) */
	uint64_t filtered_out;		/* events outside -filter's regions (not written) */
	uint64_t renames;		/* thread tracks named again after a comm change */
	uint64_t chains_cut;		/* call chains cut at junk (see chains.c) */
	uint64_t frames_cut;		/* frames removed by those cuts */
	uint64_t user_frames;		/* user-space frames of samples, after cuts */
	uint64_t unknown_frames;	/* ... of which perf named no symbol */
	uint64_t chains_rootless;	/* sample chains whose outermost user frame is a named
					   function no thread starts in (chains.c): unwound short */
	int dwarf; /* set by the caller: the chains were unwound from dwarf stack copies
		      (the stack-quality line then advises no dwarf); the builder leaves it */
	char first_violation[256]; /* "" if none; see snap_builder_desc */
};

struct snap_bthread;

struct snap_builder {
	struct snap_timeline *tl; /* the caller's, or &gate.base with a filter */
	struct snap_strtab *st;
	struct snap_cstack_ctx ctx; /* also holds the scope */
	struct snap_filter *filter;
	struct snap_gate_tl gate; /* -filter's gate (model/tlcomb.h) */
	int strict, no_tx;
	struct snap_u64map tmap; /* (pid, tid) -> index in th */
	struct snap_bthread **th;
	size_t nth, capth;
	uint64_t last_key;
	struct snap_bthread *last;
	/* last while nothing of the builder's or of last's state stops its branches
	 * from taking snap_builder_feed's lean path, else NULL (builder.c,
	 * lean_thread): set after every event that takes the general path */
	struct snap_bthread *lean;
	int have_base, have_hit_min, stack_started, finished;
	uint64_t base, hit_min;
	struct snap_hit *hits; /* symbol NULL: see hit_names */
	uint32_t *hit_names;   /* "hit SYMBOL" */
	size_t nhits;
	struct snap_u64map pidnames; /* pid -> command name id (opts) */
	struct snap_u64map pidcomm;  /* pid -> its first comm (tracks.c, pid_cmd) */
	uint32_t next_synth;
	struct snap_event *tx;
	size_t ntx, captx;
	/* the event being fed, its call chain cut (snap_builder_feed): here rather than on
	 * the stack, so that the feed of an event without a chain ends in a jump to apply */
	struct snap_event cut;
	uint32_t n_cpu, n_freq, n_addr, n_count, n_tid, n_ip, n_hits, n_offcpu;
	uint32_t n_ts, n_ts_passed, n_arg;
	uint32_t n_sampling, n_period; /* the sampling marker (docs/report.md) */
	uint32_t n_preempted, n_off_inferred, n_unsampled, n_cpu_clock, n_task_clock;
	int saw_branch;		   /* a PT trace: switches are not ours to draw */
	int saw_switch;		   /* switch records or sched_switch samples seen */
	uint64_t stack_t0;	   /* perf time of the snapshot's first stack event */
	struct snap_u64map births; /* (pid, tid) -> perf birth time + 1, not seen yet, or
				      SNAP_BLD_BORN_AT_START */
	int first_snapshot;	   /* SNAP_BLD_BORN_AT_START holds (opts.names' born) */
	struct snap_u64map pre_in; /* (pid, tid) -> trace time of its switch-in + 1, not seen yet */
	struct snap_sampdiff_stats sd;
	struct snap_builder_stats stats;
	const char *error_source; /* opts.error_source, never NULL */
};

/* Initialises bld. Borrows tl and st (they must outlive bld); interns the
 * fixed names into st; copies what it needs of opts (opts may be NULL for
 * defaults). Returns 0, -ENOMEM (bld is then safe to fini). */
int snap_builder_init(struct snap_builder *bld, struct snap_timeline *tl, struct snap_strtab *st,
		      const struct snap_builder_opts *opts);
/* Releases everything (writes nothing); bld is zeroed. */
void snap_builder_fini(struct snap_builder *bld);

/* Applies one event (borrowed for the call, including ev->frames).
 * Returns 0, -SNAP_ESCOPE (strict scope violation: nothing applied), -ENOMEM,
 * -EINVAL after snap_builder_finish, or a timeline error. After an error
 * other than -SNAP_ESCOPE the builder should only be finished or freed. */
int snap_builder_feed(struct snap_builder *bld, const struct snap_event *ev);
/* What snap_builder_feed_n adds up of the events it is given (the caller's
 * totals, carried from call to call): the samples and branches, and the least
 * and the greatest time of those with a time (first_time 0: none yet; an event at
 * time 0 makes it 0 again). */
struct snap_feed_count {
	uint64_t samples, branches;
	uint64_t first_time, last_time;
};

/* Counts ev[0..n) in c as snap_builder_feed_n does (for events fed elsewhere:
 * cli/pipeline.c's consumer thread). */
void snap_feed_count_add(struct snap_feed_count *c, const struct snap_event *ev, size_t n);

/* snap_builder_feed of ev[0..n), in order, up to the first error: *at gets the
 * index of the event it failed on (n when all went in). The same effects as n
 * calls of snap_builder_feed, with the common branch's tests in one loop; c (or
 * NULL) counts the events as they go in (all n when none failed). */
int snap_builder_feed_n(struct snap_builder *bld, const struct snap_event *ev, size_t n, size_t *at,
			struct snap_feed_count *c);

/* Marks a snapshot boundary (next perf.data file): at the next branch or
 * sample event every thread is ended and restarted at that event's time
 * (docs/behaviour.md §4.11). The first such event of the trace does it too. */
void snap_builder_new_snapshot(struct snap_builder *bld);

/* Ends the trace: replays buffered (x) events, closes every thread in order
 * of first appearance, writes the trigger hits. Does not call
 * tl->ops->finish (the caller does). Returns 0 or the first error. */
int snap_builder_finish(struct snap_builder *bld);

/* Fills *out with the counters (cstack, sampdiff and builder ones). */
void snap_builder_stats(const struct snap_builder *bld, struct snap_builder_stats *out);

/* Stack-quality verdict for sampled traces (cli/decodemsg.c words it): with
 * at least SNAP_BUILDER_QUALITY_MIN samples, SNAP_BUILDER_Q_CUT when
 * SNAP_BUILDER_QUALITY_PCT % or more of the chains were cut at junk (fix:
 * dwarf call graphs or frame pointers; s->dwarf says which), and
 * SNAP_BUILDER_Q_NOSYM when as many of the user frames have no symbol (fix:
 * debug symbols). Returns those flags (0: nothing to say); *cut_pct and
 * *nosym_pct receive the two percentages (rounded down) in any case. */
#define SNAP_BUILDER_QUALITY_MIN 20
#define SNAP_BUILDER_QUALITY_PCT 30
#define SNAP_BUILDER_Q_CUT	 1u
#define SNAP_BUILDER_Q_NOSYM	 2u
/* (dwarf only: as many chains end short of where threads start, stats.chains_rootless) */
#define SNAP_BUILDER_Q_SHORT	 4u
unsigned snap_builder_quality(const struct snap_builder_stats *s, uint64_t *cut_pct,
			      uint64_t *nosym_pct);
/* The share (%, rounded down) of the sampled chains that end short of a
 * thread's start (stats.chains_rootless against the samples). */
uint64_t snap_builder_short_pct(const struct snap_builder_stats *s);

/* snap_event_desc (model/event.h) of ev with bld's names; for a sample, the
 * frame shown is the first one outside the trace scope, if any. */
char *snap_builder_desc(const struct snap_builder *bld, const struct snap_event *ev, char *buf,
			size_t size);

#endif

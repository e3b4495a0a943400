/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside stack/: the builder's thread (struct snap_bthread) and the
 * functions stack/builder.c shares with the files that do one job each for
 * it: tracks.c (track names), chains.c (junk cuts of call chains), offcpu.c
 * (samples, context switches and the off-CPU slices of sampled threads),
 * marks.c (the trigger-hit track and the sampling marker). Not included
 * outside stack/. Every function returns 0 or a negative error unless said.
 */
#ifndef SNAP_STACK_BTHREAD_H
#define SNAP_STACK_BTHREAD_H

#include <stddef.h>
#include <stdint.h>

#include "stack/builder.h"

struct snap_bthread_extra {
	uint32_t event;
	int32_t tid;
};

struct snap_bthread {
	struct snap_cstack cs;
	struct snap_sampdiff_thread sd;
	int32_t pid, tid;
	uint32_t proc_name;
	uint32_t comm;	/* the comm its track name was made from (0 = none yet) */
	uint32_t tname; /* its track name */
	/* OFFCPU_*: its off-CPU state: on the CPU, or off it with or without the slice */
	uint8_t offcpu;
	uint32_t offcpu_sym; /* the off-CPU slice's name while offcpu == OFFCPU_SLICE */
	/* docs/sampling.md "Off-CPU time": switched in at t_in, no sample since */
	uint8_t pend_in;
	/* the open frames are a blocking chain: its innermost frame is where it
	 * blocked, which no later sample showed running */
	uint8_t blk_leaf;
	/* a sched_switch chain was applied at out_t: the off-CPU slice waits for
	 * the switch record right after it (preempted or not) */
	uint8_t out_pend;
	uint8_t last_was_sample; /* the thread's last event was a sample */
	uint8_t exited;		 /* an exit record ended it (until a sample shows it again) */
	uint64_t t_in, out_t;
	/* the thread's latest time before the event being applied: times of the
	 * model that lie in the past (a switch-in, half a period after a sample)
	 * never go before it, so the track's ops stay in time order. Only the
	 * off-CPU model reads it, after apply or apply_task set it for the event
	 * (or, at the end, for a thread whose last event left an off-CPU slice
	 * waiting); snap_builder_feed's common branch, which cannot lead there,
	 * does not set it */
	uint64_t floor;
	uint64_t last_period; /* the last sample's period in ns (clock events), else 0 */
	struct snap_bthread_extra *extra;
	size_t nextra, capextra;
	/* stack samples seen, for the sampling marker (snap_marks_sampling) */
	uint64_t nsamples, first_sample, last_sample, period_sum;
	uint32_t sample_event;
};

enum { OFFCPU_NO = 0, OFFCPU_SLICE, OFFCPU_CAPPED };

/* The thread table's key of (pid, tid). */
static inline uint64_t snap_bld_tkey(int32_t pid, int32_t tid)
{
	return ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
}

/* Trace time of a perf time: perf_time minus the base time; an earlier
 * time gives 0 (counted in stats.time_backwards). */
static inline uint64_t snap_bld_trace_time(struct snap_builder *bld, uint64_t perf_time)
{
	if (perf_time < bld->base) {
		bld->stats.time_backwards++;
		return 0;
	}
	return perf_time - bld->base;
}

/* Is ev's event one whose period is ns of CPU time (cpu-clock, task-clock)? */
static inline int snap_bld_clock_event(const struct snap_builder *bld, uint32_t event)
{
	return event && (event == bld->n_cpu_clock || event == bld->n_task_clock);
}

/* Which frames of a chain the trace keeps (its scope). */
static inline enum snap_scope snap_bld_keep(const struct snap_builder *bld)
{
	return bld->ctx.scope <= SNAP_SCOPE_BOTH ? bld->ctx.scope : SNAP_SCOPE_USER;
}

/* ---- tracks.c ---- */

/* "CMD [pid=P]" for pid into *id (comm: of the event that needs it, may be
 * 0); *cmd receives CMD (0 if none). See builder.h "Tracks". */
int snap_tracks_proc_name(struct snap_builder *bld, int32_t pid, int32_t tid, uint32_t comm,
			  uint32_t *id, uint64_t *cmd);
/* "NAME [pid=P] [tid=T]" into *id for a thread whose comm is comm (0 =
 * unknown) of a process whose command is cmd (from snap_tracks_proc_name). */
int snap_tracks_thread_name(struct snap_builder *bld, int32_t pid, int32_t tid, uint32_t comm,
			    uint64_t cmd, uint32_t *id);
/* The thread's comm changed: its track is named again if its name changes
 * (counted in stats.renames). */
int snap_tracks_rename(struct snap_builder *bld, struct snap_bthread *th, uint32_t comm);
/* Announces a new synthetic track of pid (tid SNAP_BUILDER_SYNTH_TID | n, into
 * *tid) named name, in process proc (strtab ids). */
int snap_tracks_synth(struct snap_builder *bld, int32_t pid, uint32_t proc, uint32_t name,
		      int32_t *tid);
/* The track of th's extra event `event` (strtab id, 0 = unnamed) into *tid,
 * "EVENT (tid T)", announced at its first use. */
int snap_tracks_extra(struct snap_builder *bld, struct snap_bthread *th, uint32_t event,
		      int32_t *tid);

/* ---- chains.c ---- */

/* Returns the index of the first frame of fr[0..n) (outermost first) kept
 * after the junk cut (chains.c); count: a sample chain, whose cuts are
 * counted in stats.chains_cut / frames_cut. */
uint32_t snap_chain_cut(struct snap_builder *bld, const struct snap_loc *fr, uint32_t n, int count);
/* Counts the user frames of a sample and those without a symbol
 * (stats.user_frames, stats.unknown_frames). */
void snap_chain_count(struct snap_builder *bld, const struct snap_loc *fr, uint32_t n);

/* ---- offcpu.c ---- */

/* The thread is back on the CPU (or a sample shows it running): its
 * off-CPU slice ends at t if it is still open. */
int snap_offcpu_on_cpu(struct snap_bthread *th, uint64_t t);
/* Opens the off-CPU slice at t (no earlier than th->floor) on top of the
 * open frames: "[off-CPU: preempted]" if preempt, else "[off-CPU]" (chain:
 * the open frames are the chain it blocked in). */
int snap_offcpu_open(struct snap_builder *bld, struct snap_bthread *th, int preempt, int chain,
		     uint64_t t);
/* A burst from th->t_in to t that no sample saw ends at a switch-out (ev,
 * or the exit record): "[on-CPU: unsampled]" (offcpu.c). */
int snap_offcpu_unsampled(struct snap_builder *bld, struct snap_bthread *th,
			  const struct snap_event *ev, int keep_all, uint64_t t);
/* Applies a context switch (SNAP_EV_SWITCH) of th at t. */
int snap_offcpu_switch(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t);
/* Applies a stack sample (SNAP_EV_SAMPLE) of th at t. */
int snap_offcpu_sample(struct snap_builder *bld, struct snap_bthread *th,
		       const struct snap_event *ev, uint64_t t);
/* Returns where a sampled thread's last frames end: half a period after its
 * last sample, no later than limit (0: none), no earlier than its last event. */
uint64_t snap_offcpu_last_end(const struct snap_bthread *th, uint64_t limit);

/* ---- marks.c ---- */

/* Copies opts' trigger hits and interns their "hit SYMBOL" names. */
int snap_marks_init_hits(struct snap_builder *bld, const struct snap_builder_opts *o);
/* Writes the trigger hits on their "Snapshot symbol hits" tracks. */
int snap_marks_hits(struct snap_builder *bld);
/* Writes the sampling marker of each sampled thread (marks.c). */
int snap_marks_sampling(struct snap_builder *bld);

#endif

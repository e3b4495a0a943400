/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The range filter (-filter "(START STOP)"): only what happens between a call
 * to START and the next call to STOP is written; outside, stacks are still
 * tracked but nothing is output. Two passes over the same events:
 *
 *  1. snap_filter_scan() on every event collects hits: a call branch whose
 *     target symbol is START or STOP, or a stack sample that shows a new call
 *     of START or STOP: the function is anywhere in its stack and was not in
 *     the stack of the thread's previous sample (a sampler's best guess of a
 *     call: a function on the stack in many samples in a row is one call).
 *     The chain a thread blocked in (a sched:sched_switch sample, a SWITCH
 *     event with frames) counts as a sample: a function that only waits is
 *     on no other stack.
 *     When both START and STOP are new in one sample, the innermost decides.
 *     snap_filter_pair() then keeps only START -> STOP pairs, read left to
 *     right: a hit followed by a START is dropped (of several STARTs in a row
 *     the last one counts; a STOP before any START vanishes), two STOPs in a
 *     row are both dropped, and a trailing unpaired hit is dropped.
 *  2. The builder (builder.h, opts.filter) asks snap_filter_step() for every
 *     event it applies: the region toggles at each kept hit (same time and,
 *     for calls, the same target symbol; for samples, the same thread); an event is written when the region
 *     is open after it, so the START call is written and the STOP call is not.
 *
 * Pure: no I/O. Names and symbols are strtab ids of one strtab.
 */
#ifndef SNAP_STACK_FILTER_H
#define SNAP_STACK_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "util/u64map.h"

struct snap_filter_hit {
	uint64_t time; /* perf time */
	uint32_t sym;  /* the call's target symbol; 0 for a sample */
	int32_t tid;   /* a sample's thread */
	uint8_t stop;  /* 0 = START, 1 = STOP */
};

struct snap_filter {
	uint32_t start, stop; /* symbol names (strtab ids) */
	struct snap_filter_hit *hits;
	size_t nhits, cap;
	size_t next; /* pass 2: the next kept hit */
	int open;    /* pass 2: inside a START..STOP region */
	int paired;  /* snap_filter_pair was called */
	/* pass 1: (pid, tid) -> 1 + (START on its last sample's stack) + 2 (STOP) */
	struct snap_u64map onstack;
};

/* Parses the -filter argument "(START STOP)": two atoms (bare, or "quoted"
 * with \" and \\ escapes) in parentheses; a "symbol:" prefix is dropped.
 * Returns 0 with *start and *stop allocated (snap_free them), -EINVAL for
 * anything else, -ENOMEM. */
int snap_filter_parse_arg(const char *arg, char **start, char **stop);

/* init: a gate for the region from calls to start to calls to stop (strtab
 * ids); fini frees what pass 1 recorded and leaves f zeroed. */
void snap_filter_init(struct snap_filter *f, uint32_t start, uint32_t stop);
void snap_filter_fini(struct snap_filter *f);
/* Pass 1: looks at one event. Returns 0 or -ENOMEM. */
int snap_filter_scan(struct snap_filter *f, const struct snap_event *ev);
/* Ends pass 1: keeps the START -> STOP pairs. Returns how many pairs. */
size_t snap_filter_pair(struct snap_filter *f);
/* Pass 2: returns 1 if ev is to be written, 0 if not. Events must come in
 * the order of pass 1. */
int snap_filter_step(struct snap_filter *f, const struct snap_event *ev);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-thread coverage of a sampled recording (docs/recording.md, "What the
 * trace covers"): for each (pid, tid), its first sample, and how
 * long it ran on a CPU (from switch records, which perf keeps for the whole
 * run in the side-band ring) before its first sample. A thread that ran for
 * many sample periods before its first sample lost those samples: the ring
 * overwrote them (or perf lost them). Pure: events in, figures out.
 */
#ifndef SNAP_STACK_THCOVER_H
#define SNAP_STACK_THCOVER_H

#include <stddef.h>
#include <stdint.h>

#include "model/event.h"
#include "util/strtab.h"
#include "util/u64map.h"

#define SNAP_THCOVER_NAME 32

struct snap_thcover_thread {
	int32_t pid, tid;
	char name[SNAP_THCOVER_NAME]; /* its last comm, "" if none */
	uint64_t samples;
	uint64_t first_sample; /* perf time (ns); 0 = no sample */
	uint64_t oncpu_before; /* ns on a CPU before its first sample */
	uint64_t in_since;     /* switched in at (while on), else 0 */
	int switches;	       /* it has switch records */
};

struct snap_thcover {
	struct snap_thcover_thread *th; /* in order of first appearance */
	size_t n, cap;
	struct snap_u64map map; /* (pid, tid) -> index */
	uint64_t t0, t_last;	/* the first and last event time seen */
};

/* snap_thcover_init makes c empty; snap_thcover_fini frees what it holds
 * (c may be zeroed or initialised; it is empty again after). */
void snap_thcover_init(struct snap_thcover *c);
void snap_thcover_fini(struct snap_thcover *c);
/* Notes one event (SAMPLE and SWITCH count; st names ev->comm, may be NULL).
 * Events come in time order (perf script's order). Returns 0 or -ENOMEM. */
int snap_thcover_feed(struct snap_thcover *c, const struct snap_event *ev,
		      const struct snap_strtab *st);

/* ns t ran on a CPU before its first sample (without any sample: until its
 * last record, or the end of the data while still on a CPU). */
uint64_t snap_thcover_lost_ns(const struct snap_thcover *c, const struct snap_thcover_thread *t);

/* A thread whose start the recording lost: it ran at least min_ns on a CPU
 * before its first sample (or without any sample). Returns how many such
 * threads there are, and fills up to max indexes into idx, the longest
 * losses first. */
size_t snap_thcover_lost(const struct snap_thcover *c, uint64_t min_ns, size_t *idx, size_t max);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which sampled events are the primary stream (stack samples that build the
 * call stacks) and which are extra events (a zero-length slice each on their
 * own track, never touching a stack). One rule, shared by the text parser
 * (parse/perfscript) and the dlfilter record reader (parse/dlrec):
 *
 *  1. In an Intel PT trace every sampled event is an extra event. A trace is
 *     PT when the caller says so (the perf.data has an AUX area) or once a PT
 *     record (a branch, a cbr or other PT synth event) has been seen; from
 *     then on no sample is primary, even of an event that was primary before.
 *  2. Otherwise the primary stream is the first sampled event that
 *       - is not one of the extra events `-events` records (branch-misses,
 *         cache-misses: these are always extra, as in magic-trace), and
 *       - carries a call chain, unless the caller said the trace is a sampling
 *         recording (then the chain does not matter).
 *     Every other sampled event is an extra event.
 *
 * Why the call chain: PT recordings sample their extra events without call
 * chains, and perf emits samples taken before the PT window (the snapshot)
 * ahead of the first branch, possibly millions of them, so the decision
 * cannot wait for the first branch. A stack sample always has a chain.
 */
#ifndef SNAP_PARSE_PRIMARY_H
#define SNAP_PARSE_PRIMARY_H

#include <stdint.h>

#include "model/event.h"
#include "util/strtab.h"

enum snap_trace_mode {
	SNAP_TRACE_UNKNOWN = 0, /* perf script text of unknown origin */
	SNAP_TRACE_PT,		/* Intel PT (AUX area) */
	SNAP_TRACE_SAMPLES,	/* a sampling recording */
};

struct snap_primary {
	uint32_t event; /* strtab id of the primary event, 0 = not chosen yet */
	uint8_t mode;	/* enum snap_trace_mode */
};

/* A PT record was seen (or the caller knows the trace is PT). */
static inline void snap_primary_set_mode(struct snap_primary *p, enum snap_trace_mode mode)
{
	p->mode = (uint8_t)mode;
}

/* Returns 1 for the names that are always extra events. */
int snap_primary_is_extra_name(const char *name);

/* Classifies one sampled event (event: strtab id in st, non-zero; has_chain:
 * perf recorded a call chain for it). Returns SNAP_EV_SAMPLE or SNAP_EV_EXTRA. */
enum snap_ev_kind snap_primary_classify(struct snap_primary *p, const struct snap_strtab *st,
					uint32_t event, int has_chain);

#endif

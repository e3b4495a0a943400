/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timeline combinators: timelines (model/timeline.h) that wrap others.
 *  - the tee sends every op to two timelines (decode -report: FXT and the
 *    report's consumer, report/rtl.h);
 *  - the gate forwards to one timeline only while it is open; track names
 *    (thread) and finish always pass (-filter's regions, stack/filter.h:
 *    the builder opens and closes it).
 * Both borrow the timelines they wrap; neither allocates.
 */
#ifndef SNAP_MODEL_TLCOMB_H
#define SNAP_MODEL_TLCOMB_H

#include "model/timeline.h"

struct snap_tee_tl {
	struct snap_timeline base;
	struct snap_timeline *a, *b; /* borrowed */
};

/* Every op goes to a then b; the first error is returned. */
void snap_tee_tl_init(struct snap_tee_tl *t, struct snap_timeline *a, struct snap_timeline *b);

/* A timeline that forwards to out only while open (track names always). */
struct snap_gate_tl {
	struct snap_timeline base;
	struct snap_timeline *out; /* borrowed */
	int open;		   /* the caller sets it: 1 = ops pass, 0 = dropped (return 0) */
};

/* Makes g a gate in front of out, open or not (open: 1 or 0). */
void snap_gate_tl_init(struct snap_gate_tl *g, struct snap_timeline *out, int open);

#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack samples -> slices (behaviour.md §6.2). Each sample (frames outermost
 * first) is compared with the thread's current stack from the outermost
 * frame; frames are the same when both the address AND the symbol match
 * (call-chain addresses of user code are DSO-relative, so one number can name
 * two different functions). What changed is closed, innermost first, and the
 * new frames are opened, outermost first.
 *
 * Design choice: everything happens at the sample time. magic-trace pushes
 * the new frames through the pending-call spreading of §4.3, which draws
 * them as a "staircase" across the gap to the next sample (the k-th of n new
 * frames starting (k-1)/n of the way); the staircase invents timing we do
 * not have, so we open all new frames at the sample time (REC of §7.10).
 */
#ifndef SNAP_STACK_SAMPDIFF_H
#define SNAP_STACK_SAMPDIFF_H

#include <stdint.h>

#include "model/event.h"
#include "stack/cstack.h"

/* Which frames of a chain to keep. */
enum snap_sampdiff_keep {
	SNAP_SAMPDIFF_ALL = 0,
	SNAP_SAMPDIFF_USER,   /* drop kernel addresses */
	SNAP_SAMPDIFF_KERNEL, /* drop non-kernel addresses */
};

struct snap_sampdiff_stats {
	uint64_t samples;
	uint64_t dropped_frames; /* out of the kept scope */
	uint64_t zero_frames;	 /* address 0: skipped */
	uint64_t empty;		 /* samples with no usable frame (close everything) */
};

/* Returns 1 if frame f is kept under `keep` (never for address 0). */
static inline int snap_sampdiff_keeps(enum snap_sampdiff_keep keep, const struct snap_loc *f)
{
	if (!f->ip)
		return 0;
	if (keep == SNAP_SAMPDIFF_USER)
		return !snap_loc_is_kernel(f);
	if (keep == SNAP_SAMPDIFF_KERNEL)
		return snap_loc_is_kernel(f);
	return 1;
}

/* Applies one sample at time t (from snap_cstack_time) to cs: frames[0..n)
 * outermost first, borrowed for the call; frames not kept (keep, address 0)
 * are skipped; frames beyond the depth cap are dropped (ctx stats). A sample
 * with no usable frame closes every open frame. st may be NULL.
 * Returns 0 or a negative error (-ENOMEM, timeline errors). */
int snap_sampdiff_apply(struct snap_cstack *cs, const struct snap_loc *frames, uint32_t n,
			enum snap_sampdiff_keep keep, uint64_t t, struct snap_sampdiff_stats *st);

#endif
